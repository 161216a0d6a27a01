//! The crate's layers, read from its source: every `.rs` file under `src/` is lexed (comments and
//! literals dropped), its paths through `crate::`, `super::` and `self::` (in `use` trees and in
//! code) are resolved to the modules they name, and five rules are checked:
//!
//! 1. the games do not know the service: nothing under `src/games/` except a game's `wire.rs` (its
//!    protobuf conversion) and `src/games/registry.rs` refers to `crate::proto`, `crate::google`,
//!    `crate::grpc`, `crate::jobs` or `crate::cache`;
//! 2. the jobs do not know the gRPC service: nothing under `src/jobs/` refers to `crate::grpc`;
//! 3. metrics are pushed by their owners: nothing under `src/metrics/` refers to `crate::cache` or
//!    `crate::jobs` (the store and the runner give their own collectors);
//! 4. no two modules import each other, directly or around a circle: neither the top-level modules
//!    of a crate (`grpc`, `jobs`, `cache`, `metrics`, …) nor the sibling modules of one folder
//!    (`jobs/runner/parts.rs` and `jobs/runner/work.rs`). A file that refers to a module in another
//!    subtree is counted as its top-most module that differs (`jobs/runner/work.rs` naming
//!    `crate::jobs::local` makes `runner` depend on `local`); a child naming its own parent's
//!    items (`super::Thing`) is not a sibling edge.
//!
//! 5. the service and the jobs name no game: nothing under `src/grpc/` or `src/jobs/` refers to a
//!    game's folder under `src/games/` (`crate::games::heap`, `crate::games::placement`, …); they
//!    see games through `Position`, `ServedGame` and the job traits of `crate::games::family`.
//!
//! Rules 1 to 3 and 5 hold for test code too; rule 4 is about what the compiler builds into the service,
//! so code under `#[cfg(test)]` (unit tests, which may use `crate::testing`) is left out of it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A token of Rust source, as far as paths need: identifiers, `::` and single punctuation.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// Lexes `source` into tokens, dropping whitespace, comments, string, char and byte literals,
/// lifetimes and numbers.
fn lex(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_string(&chars, i + 1);
        } else if c == '\'' {
            if at(i + 1) == '\\' {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1; // a lifetime or a label: its name lexes as an identifier, harmlessly
            }
        } else if c.is_alphabetic() || c == '_' {
            if let Some(end) = raw_or_byte_literal(&chars, i) {
                i = end;
                continue;
            }
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token::Ident(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
        } else if c == ':' && at(i + 1) == ':' {
            tokens.push(Token::PathSep);
            i += 2;
        } else {
            tokens.push(Token::Punct(c));
            i += 1;
        }
    }
    tokens
}

/// The index after the closing quote of a string whose body starts at `i`.
fn skip_string(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// If a byte or raw literal (`b"…"`, `b'…'`, `r#"…"#`, `br"…"`) starts at `i`, the index after it.
fn raw_or_byte_literal(chars: &[char], i: usize) -> Option<usize> {
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut j = i;
    if at(j) == 'b' {
        j += 1;
        if at(j) == '"' {
            return Some(skip_string(chars, j + 1));
        }
        if at(j) == '\'' {
            j += 1;
            if at(j) == '\\' {
                j += 1;
            }
            j += 1;
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            return Some(j + 1);
        }
    }
    if at(j) != 'r' {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while at(j) == '#' {
        hashes += 1;
        j += 1;
    }
    if at(j) != '"' {
        return None;
    }
    j += 1;
    let closing: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
    let rest: String = chars[j..].iter().collect();
    let end = rest.find(&closing).map_or(chars.len(), |found| j + rest[..found].chars().count() + closing.len());
    Some(end)
}

/// A path written in a file, resolved to the absolute path it names within its crate.
#[derive(Clone, Debug)]
struct Reference {
    /// The module the path is written in (the file's module and any inline module around it).
    from: Vec<String>,
    /// The absolute path named (without `crate`).
    target: Vec<String>,
    /// Whether the path sits in code compiled only for tests (`#[cfg(test)]`).
    test_only: bool,
}

/// What one file holds: the modules it declares and the paths it names.
#[derive(Default)]
struct FileFacts {
    /// Child modules declared with `mod name;` (file modules), with whether they are test-only.
    file_modules: Vec<(String, bool)>,
    /// Inline modules (`mod name { … }`), as absolute paths, with whether they are test-only.
    inline_modules: Vec<(Vec<String>, bool)>,
    references: Vec<Reference>,
}

/// Whether tokens at `i` spell the attribute `#[cfg(test)]`.
fn is_cfg_test(tokens: &[Token], i: usize) -> bool {
    let expected = [
        Token::Punct('#'),
        Token::Punct('['),
        Token::Ident("cfg".into()),
        Token::Punct('('),
        Token::Ident("test".into()),
        Token::Punct(')'),
        Token::Punct(']'),
    ];
    tokens.len() >= i + expected.len() && tokens[i..i + expected.len()] == expected
}

/// The index of the token after the item starting at `i`: after its first `;` outside brackets, or
/// after the `}` closing its first top-level brace.
fn item_end(tokens: &[Token], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < tokens.len() {
        match tokens[i] {
            Token::Punct('(' | '[' | '{') => {
                depth += 1;
            }
            Token::Punct(')' | ']') => depth = depth.saturating_sub(1),
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            Token::Punct(';') if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Parses a path or `use` tree at `i` into the paths it names, each as written; returns them and
/// the index after the tree.
fn parse_tree(tokens: &[Token], mut i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(i) {
            Some(Token::Ident(name)) if name == "self" && !path.is_empty() => i += 1,
            Some(Token::Ident(name)) => {
                path.push(name.clone());
                i += 1;
            }
            Some(Token::Punct('*')) => {
                i += 1;
                break;
            }
            Some(Token::Punct('{')) => {
                i += 1;
                while let Some(token) = tokens.get(i) {
                    match token {
                        Token::Punct('}') => {
                            i += 1;
                            break;
                        }
                        Token::Punct(',') => i += 1,
                        _ => i = parse_tree(tokens, i, &path, out),
                    }
                }
                return i;
            }
            _ => break,
        }
        if tokens.get(i) == Some(&Token::PathSep) {
            i += 1;
        } else {
            break;
        }
    }
    if matches!(tokens.get(i), Some(Token::Ident(name)) if name == "as") {
        i += 2;
    }
    out.push(path);
    i
}

/// Reads a file whose module is `module`: its module declarations and the paths it names.
fn facts_of(source: &str, module: &[String]) -> FileFacts {
    let tokens = lex(source);
    let mut facts = FileFacts::default();
    // The braces open around the current token: for each, the inline module it opens, if any.
    let mut braces: Vec<Option<String>> = Vec::new();
    // The end (a token index) of the `#[cfg(test)]` items read so far.
    let mut test_until = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        if is_cfg_test(&tokens, i) {
            test_until = test_until.max(item_end(&tokens, i + 7));
        }
        let test_only = i < test_until;
        let current: Vec<String> = module.iter().cloned().chain(braces.iter().flatten().cloned()).collect();
        match &tokens[i] {
            Token::Ident(keyword) if keyword == "mod" => {
                if let Some(Token::Ident(name)) = tokens.get(i + 1) {
                    match tokens.get(i + 2) {
                        Some(Token::Punct(';')) => facts.file_modules.push((name.clone(), test_only)),
                        Some(Token::Punct('{')) => {
                            let mut path = current.clone();
                            path.push(name.clone());
                            facts.inline_modules.push((path, test_only));
                            braces.push(Some(name.clone()));
                            i += 3;
                            continue;
                        }
                        _ => {}
                    }
                }
            }
            Token::Punct('{') => braces.push(None),
            Token::Punct('}') => {
                braces.pop();
            }
            Token::Ident(first)
                if matches!(first.as_str(), "crate" | "super" | "self")
                    && tokens.get(i + 1) == Some(&Token::PathSep)
                    && tokens.get(i.wrapping_sub(1)) != Some(&Token::PathSep) =>
            {
                let mut written = Vec::new();
                let end = parse_tree(&tokens, i, &[], &mut written);
                for path in written {
                    if let Some(target) = resolve(&path, &current) {
                        facts.references.push(Reference { from: current.clone(), target, test_only });
                    }
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    facts
}

/// The absolute path (within this crate) a path written in module `current` names, if it names
/// one in this crate.
fn resolve(path: &[String], current: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String> = current.to_vec();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &path[1..];
        }
        Some("self") => rest = &path[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// A crate's module tree and the paths its files name.
struct CrateFacts {
    /// Every module (file or inline) of the crate, with whether it is compiled only for tests.
    modules: BTreeMap<Vec<String>, bool>,
    /// Each file read (relative to the package), with its module and what it names.
    files: Vec<(String, Vec<String>, FileFacts)>,
}

/// Reads the crate rooted at `root` (a `lib.rs` or `main.rs`), following its `mod name;` declarations.
fn read_crate(root: &Path) -> CrateFacts {
    let mut facts = CrateFacts { modules: BTreeMap::new(), files: Vec::new() };
    facts.modules.insert(Vec::new(), false);
    let root_dir = root.parent().unwrap().to_path_buf();
    let mut pending: Vec<(PathBuf, PathBuf, Vec<String>, bool)> =
        vec![(root.to_path_buf(), root_dir, Vec::new(), false)];
    while let Some((file, children_dir, module, test_only)) = pending.pop() {
        let source = std::fs::read_to_string(&file).unwrap_or_else(|error| panic!("{}: {error}", file.display()));
        let file_facts = facts_of(&source, &module);
        for (name, child_test) in &file_facts.file_modules {
            let flat = children_dir.join(format!("{name}.rs"));
            let nested = children_dir.join(name).join("mod.rs");
            let (child_file, grandchildren) = if flat.exists() {
                (flat, children_dir.join(name))
            } else {
                assert!(nested.exists(), "module {name} of {} has no file", file.display());
                (nested, children_dir.join(name))
            };
            let mut path = module.clone();
            path.push(name.clone());
            facts.modules.insert(path.clone(), test_only || *child_test);
            pending.push((child_file, grandchildren, path, test_only || *child_test));
        }
        for (path, inline_test) in &file_facts.inline_modules {
            facts.modules.insert(path.clone(), test_only || *inline_test);
        }
        let relative = file.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().to_string_lossy().into_owned();
        facts.files.push((relative, module, file_facts));
    }
    facts
}

/// The longest prefix of `path` that is a module of the crate.
fn module_of<'a>(path: &'a [String], modules: &BTreeMap<Vec<String>, bool>) -> &'a [String] {
    (0..=path.len()).rev().map(|n| &path[..n]).find(|prefix| modules.contains_key(*prefix)).unwrap_or(&[])
}

/// An edge between sibling modules, with the files and paths that make it.
type Edges = BTreeMap<(String, String), Vec<String>>;

/// For each parent module, the edges between its children that non-test code makes.
fn sibling_graphs(facts: &CrateFacts) -> BTreeMap<Vec<String>, Edges> {
    let mut graphs: BTreeMap<Vec<String>, Edges> = BTreeMap::new();
    for (file, _, file_facts) in &facts.files {
        for reference in &file_facts.references {
            if reference.test_only || facts.modules.get(&reference.from) == Some(&true) {
                continue;
            }
            let target = module_of(&reference.target, &facts.modules);
            let common = reference.from.iter().zip(target).take_while(|(a, b)| a == b).count();
            if reference.from.len() > common && target.len() > common {
                let edge = (reference.from[common].clone(), target[common].clone());
                let evidence = format!("{file} names crate::{}", reference.target.join("::"));
                let list = graphs.entry(target[..common].to_vec()).or_default().entry(edge).or_default();
                if !list.contains(&evidence) {
                    list.push(evidence);
                }
            }
        }
    }
    graphs
}

/// The strongly connected components of more than one node (Tarjan's algorithm), each sorted.
fn cycles(edges: &Edges) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.keys().flat_map(|(a, b)| [a, b]).collect();
    let nodes: Vec<&String> = nodes.into_iter().collect();
    let index_of = |name: &String| nodes.iter().position(|node| *node == name).unwrap();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (a, b) in edges.keys() {
        next[index_of(a)].push(index_of(b));
    }
    struct Tarjan<'a> {
        next: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        counter: usize,
        components: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.counter);
            self.low[v] = self.counter;
            self.counter += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.next[v] {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(index) if self.on_stack[w] => self.low[v] = self.low[v].min(index),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                self.components.push(component);
            }
        }
    }
    let n = nodes.len();
    let mut tarjan = Tarjan {
        next: &next,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        counter: 0,
        components: Vec::new(),
    };
    for v in 0..n {
        if tarjan.index[v].is_none() {
            tarjan.visit(v);
        }
    }
    let mut found: Vec<Vec<String>> = tarjan
        .components
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let mut names: Vec<String> = component.into_iter().map(|v| nodes[v].clone()).collect();
            names.sort();
            names
        })
        .collect();
    found.sort();
    found
}

/// One shortest circle through the first member of `component`, found breadth first.
fn one_cycle(component: &[String], edges: &Edges) -> Vec<String> {
    let start = &component[0];
    let mut came_from: BTreeMap<&String, &String> = BTreeMap::new();
    let mut frontier = vec![start];
    while !frontier.is_empty() {
        let mut following = Vec::new();
        for node in frontier {
            for (_, b) in edges.keys().filter(|(a, b)| a == node && component.contains(b)) {
                if b == start {
                    let mut circle = vec![start.clone(), node.clone()];
                    let mut at = node;
                    while at != start {
                        at = came_from[at];
                        circle.push(at.clone());
                    }
                    circle.reverse();
                    return circle;
                }
                if !came_from.contains_key(b) {
                    came_from.insert(b, node);
                    following.push(b);
                }
            }
        }
        frontier = following;
    }
    unreachable!("a strongly connected component has a circle through each member")
}

/// The crates of this package: the library and the binaries (their roots).
fn crates() -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = vec![src.join("lib.rs"), src.join("main.rs")];
    for entry in std::fs::read_dir(src.join("bin")).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.push(path.join("main.rs"));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
    found
}

/// Every `.rs` file under `dir`, relative to the package.
fn rust_files(dir: &Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.insert(path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().to_string_lossy().into_owned());
        }
    }
}

/// Where the games may name the service: a game's protobuf conversion and the registry of games.
fn may_name_the_service(file: &str) -> bool {
    file.starts_with("src/games/") && (file.ends_with("/wire.rs") || file == "src/games/registry.rs")
}

/// The games: the folders under `src/games/` but `family` (the job traits every game implements).
fn game_folders() -> BTreeSet<String> {
    let games = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/games");
    std::fs::read_dir(games)
        .unwrap()
        .flatten()
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name != "family")
        .collect()
}

/// The top-level modules the games must not name.
const SERVICE_MODULES: [&str; 5] = ["proto", "google", "grpc", "jobs", "cache"];

#[test]
fn layers_hold() {
    let crates: Vec<(String, CrateFacts)> = crates()
        .into_iter()
        .map(|root| {
            let name = root.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap().to_string_lossy().into_owned();
            (name, read_crate(&root))
        })
        .collect();

    let mut all_files = BTreeSet::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut all_files);
    let read: BTreeSet<String> =
        crates.iter().flat_map(|(_, facts)| facts.files.iter().map(|(file, _, _)| file.clone())).collect();
    let unread: Vec<&String> = all_files.difference(&read).collect();
    assert!(unread.is_empty(), "files under src/ that no crate declares as a module: {unread:?}");

    let games = game_folders();
    assert!(games.contains("heap") && games.contains("placement"), "the games' folders: {games:?}");
    let mut report = String::new();
    let (_, library) = &crates[0];
    for (file, _, facts) in &library.files {
        for reference in &facts.references {
            let top = reference.target.first().map(String::as_str).unwrap_or("");
            let named = format!("crate::{}", reference.target.join("::"));
            let broken =
                if file.starts_with("src/games/") && !may_name_the_service(file) && SERVICE_MODULES.contains(&top) {
                    "rule 1 (games know no service)"
                } else if file.starts_with("src/jobs/") && top == "grpc" {
                    "rule 2 (jobs know no gRPC)"
                } else if file.starts_with("src/metrics/") && ["cache", "jobs"].contains(&top) {
                    "rule 3 (owners push their metrics)"
                } else if (file.starts_with("src/grpc/") || file.starts_with("src/jobs/"))
                    && top == "games"
                    && reference.target.get(1).is_some_and(|module| games.contains(module))
                {
                    "rule 5 (the service and the jobs name no game)"
                } else {
                    continue;
                };
            writeln!(report, "{broken}: {file} names {named}").unwrap();
        }
    }
    for (crate_root, facts) in &crates {
        for (parent, edges) in sibling_graphs(facts) {
            let place = if parent.is_empty() { format!("{crate_root} (top level)") } else { parent.join("::") };
            for component in cycles(&edges) {
                let circle = one_cycle(&component, &edges);
                writeln!(report, "rule 4 (no circles): in {place}: {}", circle.join(" → ")).unwrap();
                writeln!(report, "  the circle's members: {}; the edges between them:", component.join(", ")).unwrap();
                for ((a, b), evidence) in
                    edges.iter().filter(|((a, b), _)| component.contains(a) && component.contains(b))
                {
                    writeln!(report, "    {a} → {b}:").unwrap();
                    for line in evidence {
                        writeln!(report, "      {line}").unwrap();
                    }
                }
            }
        }
    }
    assert!(report.is_empty(), "the crate's layers are broken:\n{report}");
}

#[test]
fn the_reader_sees_paths_as_the_compiler_does() {
    let source = r##"
        use crate::games::{self, heap::{Heap as H, rules}, *};
        use super::super::family;
        // use crate::grpc; (a comment)
        /* use crate::jobs; */
        const TEXT: &str = "crate::cache";
        const RAW: &str = r#"crate::cache"#;
        fn f<'a>(x: &'a str) -> char { let _ = crate::page::token(x); 'c' }
        #[cfg(test)]
        mod tests {
            use super::*;
            use crate::testing::random_board;
        }
        mod inline { fn g() { super::f(""); } }
    "##;
    let module = vec!["jobs".to_string(), "runner".to_string(), "work".to_string()];
    let facts = facts_of(source, &module);
    let named: Vec<(String, bool)> =
        facts.references.iter().map(|reference| (reference.target.join("::"), reference.test_only)).collect();
    let expected = [
        ("games", false),
        ("games::heap::Heap", false),
        ("games::heap::rules", false),
        ("games", false),
        ("jobs::family", false),
        ("page::token", false),
        ("jobs::runner::work", true),
        ("testing::random_board", true),
        ("jobs::runner::work::f", false),
    ];
    let expected: Vec<(String, bool)> = expected.iter().map(|(path, test)| (path.to_string(), *test)).collect();
    assert_eq!(named, expected);
    let inline: Vec<(String, bool)> =
        facts.inline_modules.iter().map(|(path, test)| (path.join("::"), *test)).collect();
    assert_eq!(
        inline,
        [("jobs::runner::work::tests".to_string(), true), ("jobs::runner::work::inline".to_string(), false)]
    );
}
