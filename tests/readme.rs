//! The table of `serve` flags in `docs/operations.md` ("Flags and limits"; the README links to it)
//! against the binary's own `nimber serve --help`: the same flags, each with its environment
//! variable, and the default clap applies written in the table.

use std::collections::BTreeMap;

/// A flag as documented: its environment variable and its default (as clap prints it).
#[derive(Debug, Default, PartialEq)]
struct Flag {
    env: Option<String>,
    default: Option<String>,
}

/// The flags of `nimber serve --help` (without `--help`).
fn flags_of_help() -> BTreeMap<String, Flag> {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_nimber")).args(["serve", "--help"]).output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    let mut flags = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in help.lines() {
        let trimmed = line.trim();
        if line.starts_with("      --") || line.starts_with("  -") {
            let flag = trimmed.split_whitespace().find(|word| word.starts_with("--")).unwrap().trim_end_matches(',');
            current = (flag != "--help").then(|| flag.to_string());
            if let Some(flag) = &current {
                flags.insert(flag.clone(), Flag::default());
            }
        } else if let Some(flag) = current.as_ref().and_then(|flag| flags.get_mut(flag)) {
            if let Some(env) =
                trimmed.strip_prefix("[env: ").and_then(|rest| rest.trim_end_matches(']').split('=').next())
            {
                flag.env = Some(env.to_string());
            } else if let Some(default) = trimmed.strip_prefix("[default: ").and_then(|rest| rest.strip_suffix(']')) {
                flag.default = Some(default.to_string());
            }
        }
    }
    flags
}

/// The rows of the flag table in `docs/operations.md`: flag, environment variable, and the default
/// column.
fn rows_of_operations_doc() -> BTreeMap<String, (Option<String>, String)> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/operations.md")).unwrap();
    let mut rows = BTreeMap::new();
    for line in doc.lines().filter(|line| line.starts_with("| `--")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let name = cells[0].trim_start_matches("| ");
        let flag = name.split('`').nth(1).unwrap().to_string();
        let env = name.split('(').nth(1).map(|env| env.trim_matches(|c| c == '`' || c == ')').to_string());
        rows.insert(flag, (env, cells.get(1).unwrap_or(&"").to_string()));
    }
    rows
}

#[test]
fn the_operations_doc_documents_every_serve_flag_with_its_environment_variable_and_default() {
    let (help, doc) = (flags_of_help(), rows_of_operations_doc());
    let undocumented: Vec<&String> = help.keys().filter(|flag| !doc.contains_key(*flag)).collect();
    let unknown: Vec<&String> = doc.keys().filter(|flag| !help.contains_key(*flag)).collect();
    assert!(undocumented.is_empty(), "flags missing from the table in docs/operations.md: {undocumented:?}");
    assert!(unknown.is_empty(), "the table in docs/operations.md lists flags `serve` does not take: {unknown:?}");
    for (name, flag) in &help {
        let (env, default) = &doc[name];
        assert_eq!(env, &flag.env, "{name}: the environment variable");
        if let Some(value) = &flag.default {
            assert!(
                default.contains(&format!("`{value}`")),
                "{name}: the default {default:?} in docs/operations.md lacks `{value}`"
            );
        }
    }
    assert!(help.len() > 30, "only {} flags read from --help", help.len());
}
