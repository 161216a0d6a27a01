//! Opening sled safely: panics inside sled become errors, an unreadable store is moved aside (or
//! refused), a full disk leaves the store unavailable rather than the server down.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Once;

/// What to do when the store on disk cannot be read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OnCorrupt {
    /// Move it aside to `<dir>.corrupt-<unix seconds>` and start with an empty store.
    #[default]
    Rebuild,
    /// Refuse to start, with one line saying why.
    Fail,
}

/// Why a sled operation failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// sled returned an error.
    Sled(sled::Error),
    /// sled panicked; the message.
    Panicked(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Sled(error) => write!(f, "{error}"),
            Failure::Panicked(message) => write!(f, "sled panicked: {message}"),
        }
    }
}

/// How a failure to open is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The data is unreadable (damaged files, a panic inside sled): move it aside or refuse.
    Corrupt,
    /// The disk (or quota) is full: run without the store until space returns.
    NoSpace,
    /// Anything about the environment (a lock held, permissions, a file in the way): refuse.
    Environment,
}

impl Failure {
    /// How this failure is handled.
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Failure::Panicked(_) => Kind::Corrupt,
            Failure::Sled(sled::Error::Io(io)) => {
                if is_no_space(io) {
                    Kind::NoSpace
                } else if matches!(io.kind(), std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof) {
                    Kind::Corrupt
                } else {
                    Kind::Environment
                }
            }
            Failure::Sled(sled::Error::CollectionNotFound(_)) => Kind::Environment,
            Failure::Sled(_) => Kind::Corrupt,
        }
    }
}

/// Whether an I/O error says the disk or the quota is full.
pub(crate) fn is_no_space(io: &std::io::Error) -> bool {
    io.kind() == std::io::ErrorKind::StorageFull || matches!(io.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
}

thread_local! {
    /// Set while this thread runs a guarded sled call: its panics are caught and reported as one
    /// log line by the caller, not printed by the panic hook.
    static QUIET_PANICS: Cell<bool> = const { Cell::new(false) };
}

/// Runs a sled operation, turning a panic inside sled into [`Failure::Panicked`] (not printed).
pub(crate) fn guarded<T>(operation: impl FnOnce() -> sled::Result<T>) -> Result<T, Failure> {
    static QUIET_HOOK: Once = Once::new();
    QUIET_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET_PANICS.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let was_quiet = QUIET_PANICS.with(|quiet| quiet.replace(true));
    let result = catch_unwind(AssertUnwindSafe(operation));
    QUIET_PANICS.with(|quiet| quiet.set(was_quiet));
    match result {
        Ok(result) => result.map_err(Failure::Sled),
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|text| text.to_string()))
                .unwrap_or_else(|| "no message".to_string());
            Err(Failure::Panicked(message))
        }
    }
}

/// Opens sled in `path` with a page cache of at most `page_cache_bytes`, and reads a few pages (the
/// bookkeeping keys, the first and last key), so that a store damaged where opening does not look
/// fails here rather than on the first request.
pub(crate) fn open_sled(path: &Path, page_cache_bytes: u64) -> Result<sled::Db, Failure> {
    guarded(|| {
        let db = sled::Config::new().path(path).cache_capacity(page_cache_bytes).open()?;
        db.get(super::format::ENTRIES_KEY)?;
        db.first()?;
        db.last()?;
        Ok(db)
    })
}

/// Where an unreadable store at `path` is moved: `<path>.corrupt-<unix seconds>` (with a counter
/// appended if that exists already).
pub(crate) fn aside_path(path: &Path) -> PathBuf {
    let seconds = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_secs());
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".corrupt-{seconds}"));
    let mut aside = path.with_file_name(&name);
    let mut counter = 1;
    while aside.exists() {
        let mut numbered = name.clone();
        numbered.push(format!("-{counter}"));
        aside = path.with_file_name(numbered);
        counter += 1;
    }
    aside
}
