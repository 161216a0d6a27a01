//! Damaging sled stores on purpose: copies, flipped bytes, and finding what the server moved aside.

use std::path::{Path, PathBuf};

/// The sibling directories `<dir>.corrupt-*` of `dir`.
pub fn moved_aside(dir: &Path) -> Vec<PathBuf> {
    let prefix = format!("{}.corrupt-", dir.file_name().unwrap().to_string_lossy());
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir.parent().unwrap())
        .unwrap()
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with(&prefix))
        .collect();
    found.sort();
    found
}

/// Copies directory `from` to `to`, subdirectories too.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// Flips one byte of `file` at `offset` (clamped to the file).
pub fn flip(file: &Path, offset: u64) {
    let mut bytes = std::fs::read(file).unwrap();
    let at = (offset as usize).min(bytes.len() - 1);
    bytes[at] ^= 0x5a;
    std::fs::write(file, bytes).unwrap();
}
