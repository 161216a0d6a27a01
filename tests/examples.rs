//! Every sample input under `examples/` goes through the real `nimber judge` and must print exactly
//! its `.out` file. The problem is the file name up to an optional `-N` suffix
//! (`reclamation-2.in` is a `judge reclamation` input).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The `examples/*.in` files, sorted.
fn sample_inputs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/ exists")
        .map(|entry| entry.expect("a readable entry").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "in"))
        .collect();
    inputs.sort();
    inputs
}

/// The judge problem an input file is for.
fn problem_of(input: &Path) -> String {
    let stem = input.file_stem().and_then(|stem| stem.to_str()).expect("a UTF-8 file name");
    match stem.rsplit_once('-') {
        Some((problem, number)) if number.chars().all(|c| c.is_ascii_digit()) => problem.to_string(),
        _ => stem.to_string(),
    }
}

#[test]
fn every_sample_prints_its_expected_output() {
    let inputs = sample_inputs();
    let problems: std::collections::BTreeSet<String> = inputs.iter().map(|input| problem_of(input)).collect();
    assert_eq!(
        problems.into_iter().collect::<Vec<_>>(),
        ["cutting", "diagonal-walk", "reclamation", "stone-boxes", "tetris"],
        "one or more samples for each of the five problems"
    );
    for input in inputs {
        let expected = std::fs::read_to_string(input.with_extension("out"))
            .unwrap_or_else(|error| panic!("{}: no expected output: {error}", input.display()));
        let mut child = Command::new(env!("CARGO_BIN_EXE_nimber"))
            .args(["judge", &problem_of(&input)])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the nimber binary starts");
        child.stdin.take().unwrap().write_all(&std::fs::read(&input).unwrap()).unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}: {}", input.display(), String::from_utf8_lossy(&output.stderr));
        assert_eq!(String::from_utf8_lossy(&output.stdout), expected, "{}", input.display());
    }
}
