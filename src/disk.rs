//! Opening sled safely, for the cache store and the job store alike: panics inside sled become
//! errors, an unreadable store is moved aside (or refused), a full disk leaves the store
//! unavailable rather than the server down.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::{Duration, Instant};

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
    /// sled read it, but what it read cannot be the store: what is wrong.
    Damaged(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Sled(error) => write!(f, "{error}"),
            Failure::Panicked(message) => write!(f, "sled panicked: {message}"),
            Failure::Damaged(what) => write!(f, "{what}"),
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
            Failure::Panicked(_) | Failure::Damaged(_) => Kind::Corrupt,
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

impl Failure {
    /// Whether another sled instance holds the store's lock: sled 0.34 reports it as `Other` with
    /// this text (or `WouldBlock` from the OS).
    fn is_lock_held(&self) -> bool {
        matches!(self, Failure::Sled(sled::Error::Io(io))
            if io.kind() == std::io::ErrorKind::WouldBlock || io.to_string().contains("could not acquire lock"))
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
/// first and last key), so that a store damaged where opening does not look fails here rather than
/// on the first request.
pub(crate) fn open_sled(path: &Path, page_cache_bytes: u64) -> Result<sled::Db, Failure> {
    guarded(|| {
        let db = sled::Config::new().path(path).cache_capacity(page_cache_bytes).open()?;
        db.first()?;
        db.last()?;
        Ok(db)
    })
}

/// Which store is opened, for the messages: the cache store (`--data-dir`) or the job store
/// (`--jobs-dir`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Described {
    /// What it is called in messages, e.g. "cache store".
    pub(crate) store: &'static str,
    /// The flag that chooses what happens to an unreadable one, e.g. "--on-corrupt-store".
    pub(crate) on_corrupt_flag: &'static str,
    /// What losing it costs, said when refusing to start on it.
    pub(crate) loss: &'static str,
}

/// Why a store could not be opened.
#[derive(Debug)]
pub struct OpenError {
    store: &'static str,
    path: String,
    reason: String,
}

impl OpenError {
    fn new(described: Described, path: &Path, failure: &Failure) -> Self {
        let reason = if failure.is_lock_held() {
            "it is locked by another running process (one server per directory)".to_string()
        } else {
            failure.to_string()
        };
        Self::saying(described, path, reason)
    }

    fn saying(described: Described, path: &Path, reason: String) -> Self {
        Self { store: described.store, path: path.display().to_string(), reason }
    }
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot open the {} at {}: {}", self.store, self.path, self.reason)
    }
}

impl std::error::Error for OpenError {}

/// What opening gave.
pub(crate) enum Opening<T> {
    /// The store, and where an unreadable one was moved (when it was).
    Opened(T, Option<PathBuf>),
    /// The disk (or quota) is full: run without the store, and try again later.
    DiskFull,
}

/// Opens the store in `path` with `open` (which opens sled and reads enough to know the store is
/// readable). An unreadable store is moved aside to [`aside_path`] (after `salvage` has read what
/// it can from it), with one ERROR line naming both, and an empty one is opened in its place; or
/// refused, per `on_corrupt`. A full disk is [`Opening::DiskFull`]. Anything else (a lock held by
/// another process, permissions, a file in the way) is an error. A lock held by this process's own
/// sled threads of a store just closed is waited for, up to [`LOCK_PATIENCE`].
pub(crate) fn open_or_move_aside<T>(
    path: &Path,
    on_corrupt: OnCorrupt,
    described: Described,
    mut open: impl FnMut(&Path) -> Result<T, Failure>,
    salvage: impl FnOnce(&Path),
) -> Result<Opening<T>, OpenError> {
    let deadline = Instant::now() + LOCK_PATIENCE;
    let failure = loop {
        let failure = match open(path) {
            Ok(opened) => return Ok(Opening::Opened(opened, None)),
            Err(failure) => failure,
        };
        match failure.kind() {
            Kind::Environment if Instant::now() < deadline && failure.is_lock_held() => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => break failure,
        }
    };
    let Described { store, on_corrupt_flag, loss } = described;
    match failure.kind() {
        Kind::Environment => Err(OpenError::new(described, path, &failure)),
        Kind::NoSpace => Ok(Opening::DiskFull),
        Kind::Corrupt if on_corrupt == OnCorrupt::Fail => Err(OpenError::saying(
            described,
            path,
            format!(
                "the {store} is unreadable ({failure}); {loss}: move it away, or start with \
                 {on_corrupt_flag}=rebuild to have it moved aside"
            ),
        )),
        Kind::Corrupt => {
            salvage(path);
            let aside = aside_path(path);
            std::fs::rename(path, &aside).map_err(|error| {
                OpenError::saying(
                    described,
                    path,
                    format!(
                        "the {store} is unreadable ({failure}) and cannot be moved to {}: {error}",
                        aside.display()
                    ),
                )
            })?;
            tracing::error!(
                dir = %path.display(),
                moved_to = %aside.display(),
                "the {store} is unreadable ({failure}); moved it aside and started with an empty one"
            );
            match open(path) {
                Ok(opened) => Ok(Opening::Opened(opened, Some(aside))),
                Err(failure) if failure.kind() == Kind::NoSpace => Ok(Opening::DiskFull),
                Err(failure) => Err(OpenError::new(described, path, &failure)),
            }
        }
    }
}

/// How long opening waits for sled's lock on a store: sled's own threads of a store just closed
/// (by this process) may hold it for a moment longer.
const LOCK_PATIENCE: Duration = Duration::from_secs(2);

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

/// Waits (up to [`LOCK_PATIENCE`]) until no sled instance holds the lock of the store in `path`:
/// handles of a store just closed, still held by this process's readers or sled's threads, go
/// within moments. An error says the lock stayed held (or the store's file cannot be opened).
pub(crate) fn wait_unlocked(path: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let file = std::fs::OpenOptions::new().read(true).write(true).open(path.join("db"))?;
    let deadline = Instant::now() + LOCK_PATIENCE;
    loop {
        // SAFETY: flock on a file descriptor this function owns; it has no other precondition.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            // Closing the file releases the lock.
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(std::io::Error::new(std::io::ErrorKind::WouldBlock, "the store stayed locked"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Swaps the directories `a` and `b` in one atomic step (Linux's `renameat2` with
/// `RENAME_EXCHANGE`): at every moment each path holds one of the two, whole.
pub(crate) fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::ffi::OsStrExt;
        let c_path = |path: &Path| std::ffi::CString::new(path.as_os_str().as_bytes());
        let (a, b) = (c_path(a)?, c_path(b)?);
        // SAFETY: both are valid NUL-terminated paths; AT_FDCWD resolves relative ones as `rename` does.
        let result =
            unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
        if result == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = (a, b);
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "no atomic exchange of directories here"))
    }
}

/// The size of a filesystem and the bytes free on it for unprivileged writers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Filesystem {
    /// Its size in bytes.
    pub(crate) size: u64,
    /// The bytes an unprivileged process may still write.
    pub(crate) available: u64,
}

/// The filesystem that holds `path` (or would, once created: its nearest existing ancestor).
pub(crate) fn filesystem(path: &Path) -> Option<Filesystem> {
    let existing = path.ancestors().find(|dir| dir.exists()).unwrap_or(Path::new("."));
    let c_path = std::ffi::CString::new(existing.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: all zeros is a valid `statvfs` (integers only).
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c_path` is a valid NUL-terminated string and `stats` a writable statvfs.
    (unsafe { libc::statvfs(c_path.as_ptr(), &mut stats) } == 0).then(|| Filesystem {
        size: (stats.f_blocks as u64).saturating_mul(stats.f_frsize as u64),
        available: (stats.f_bavail as u64).saturating_mul(stats.f_frsize as u64),
    })
}
