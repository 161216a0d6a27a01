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

/// A way of damaging a copy of a store, given its directory.
pub type Damage = Box<dyn Fn(&Path)>;

/// The damage variants of the store in `base`, named: bytes of the db file flipped at several
/// offsets, the db truncated or zeroed, the conf flipped or replaced by garbage, snapshots flipped.
pub fn damages(base: &Path) -> Vec<(String, Damage)> {
    let db_size = std::fs::metadata(base.join("db")).unwrap().len();
    let snapshots: Vec<String> = std::fs::read_dir(base)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("snap."))
        .collect();
    let mut cases: Vec<(String, Damage)> = Vec::new();
    for offset in [0, 17, 4096, db_size / 3, db_size / 2, db_size.saturating_sub(5000), db_size - 200, db_size - 1] {
        cases.push((format!("db byte {offset} flipped"), Box::new(move |dir: &Path| flip(&dir.join("db"), offset))));
    }
    for length in [0, 100, db_size / 2, db_size.saturating_sub(1000)] {
        let truncate = move |dir: &Path| {
            std::fs::OpenOptions::new().write(true).open(dir.join("db")).unwrap().set_len(length).unwrap()
        };
        cases.push((format!("db truncated to {length} bytes"), Box::new(truncate)));
    }
    cases.push((
        "db zeroed".into(),
        Box::new(move |dir: &Path| std::fs::write(dir.join("db"), vec![0; db_size as usize]).unwrap()),
    ));
    for offset in [0, 10, 40] {
        cases
            .push((format!("conf byte {offset} flipped"), Box::new(move |dir: &Path| flip(&dir.join("conf"), offset))));
    }
    cases.push((
        "conf garbage".into(),
        Box::new(|dir: &Path| std::fs::write(dir.join("conf"), b"\xff\x00garbage").unwrap()),
    ));
    for snapshot in snapshots {
        for offset in [0, 20, 1 << 20] {
            let name = snapshot.clone();
            cases.push((
                format!("{snapshot} byte {offset} flipped"),
                Box::new(move |dir: &Path| flip(&dir.join(&name), offset)),
            ));
        }
    }
    cases
}
