//! The persistent memo: expensive values (canonical 2×2-placement components above all) kept in an
//! embedded sled store, with a bounded in-memory table in front and batched writes behind.
//!
//! # Key schema
//! A key is one game-tag byte ([`GameTag`] as `u8`) followed by the game's canonical encoding of
//! the state, e.g. `[3] ++ canonical component bytes` for the 2×2 placement game. The encoding is the
//! game's business; equal states must encode equally.
//!
//! # Value format
//! Every value starts with a format-version byte. Version 1 ([`VALUE_FORMAT_V1`]) is that byte
//! followed by the Grundy value as 8 little-endian bytes. A value that fails to decode or carries an
//! unknown version is a miss: it is recomputed and overwritten, never served.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::games::{Budget, GameTag, Interrupted, Memo};

/// The version byte of the current value format.
pub const VALUE_FORMAT_V1: u8 = 1;

/// How many buffered writes trigger a batch write to sled.
const WRITE_BATCH: usize = 4096;

/// Why the store could not be opened.
#[derive(Debug)]
pub struct OpenError {
    path: String,
    source: sled::Error,
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let reason = match &self.source {
            // sled 0.34 reports a held lock as `Other` with this text (or `WouldBlock` from the OS).
            sled::Error::Io(io)
                if io.kind() == std::io::ErrorKind::WouldBlock || io.to_string().contains("could not acquire lock") =>
            {
                "it is locked by another running process (one server per data directory)".to_string()
            }
            other => other.to_string(),
        };
        write!(f, "cannot open the cache store at {}: {reason}", self.path)
    }
}

impl std::error::Error for OpenError {}

/// The persistent memo over sled.
pub struct Store {
    db: sled::Db,
    hot: Mutex<HashMap<Vec<u8>, u64>>,
    hot_limit: usize,
    pending: Mutex<HashMap<Vec<u8>, u64>>,
    in_flight: Mutex<HashMap<Vec<u8>, Arc<Flight>>>,
    last_write_warning: Mutex<Option<std::time::Instant>>,
}

/// A value being computed by one solve that others wait for.
#[derive(Default)]
struct Flight {
    finished: Mutex<bool>,
    done: Condvar,
}

/// Ends a flight when dropped, whether its computation succeeded, failed or panicked, so that
/// waiters never wait for nothing.
struct Landing<'a> {
    store: &'a Store,
    key: &'a [u8],
    flight: Arc<Flight>,
}

impl Drop for Landing<'_> {
    fn drop(&mut self) {
        lock(&self.store.in_flight).remove(self.key);
        *lock(&self.flight.finished) = true;
        self.flight.done.notify_all();
    }
}

impl Store {
    /// Opens (or creates) the store in directory `path`, with an in-memory table of at most
    /// `hot_limit` entries in front of it.
    pub fn open(path: &Path, hot_limit: usize) -> Result<Self, OpenError> {
        let db = sled::Config::new()
            .path(path)
            .open()
            .map_err(|source| OpenError { path: path.display().to_string(), source })?;
        Ok(Self::over(db, hot_limit))
    }

    /// A store that lives in memory only and vanishes when dropped (for the judge CLI and tests).
    pub fn temporary(hot_limit: usize) -> Self {
        let db = sled::Config::new().temporary(true).open().expect("a temporary sled store opens");
        Self::over(db, hot_limit)
    }

    fn over(db: sled::Db, hot_limit: usize) -> Self {
        Self {
            db,
            hot: Mutex::new(HashMap::new()),
            hot_limit,
            pending: Mutex::new(HashMap::new()),
            in_flight: Mutex::new(HashMap::new()),
            last_write_warning: Mutex::new(None),
        }
    }

    /// Bytes the store occupies on disk.
    pub fn size_on_disk(&self) -> u64 {
        self.db.size_on_disk().unwrap_or(0)
    }

    /// Number of values stored (including buffered ones not yet written).
    pub fn entries(&self) -> u64 {
        (self.db.len() + lock(&self.pending).len()) as u64
    }

    /// Whether values computed now are written to disk (false while the disk is full or the
    /// store could not be opened).
    pub fn writable(&self) -> bool {
        true
    }

    /// Entries dropped to keep the store under its size bound.
    pub fn evictions(&self) -> u64 {
        0 // merged from h-store
    }

    /// Writes buffered values and waits until sled has them on disk.
    pub fn sync(&self) -> Result<(), sled::Error> {
        self.write_pending()?;
        self.db.flush().map(|_| ())
    }

    fn write_pending(&self) -> Result<(), sled::Error> {
        let pending = std::mem::take(&mut *lock(&self.pending));
        if pending.is_empty() {
            return Ok(());
        }
        let mut batch = sled::Batch::default();
        for (key, value) in pending {
            batch.insert(key, encode_value(value).to_vec());
        }
        self.db.apply_batch(batch)
    }

    /// Logs a failed write (a full disk, say), at most once a minute: answers stay exact, they are
    /// only not remembered.
    fn warn_write_failed(&self, error: &sled::Error) {
        let mut last = lock(&self.last_write_warning);
        if last.is_none_or(|at| at.elapsed() >= Duration::from_secs(60)) {
            *last = Some(std::time::Instant::now());
            tracing::warn!(%error, "cache write failed; answers stay exact but are not remembered");
        }
    }

    fn remember(&self, key: &[u8], value: u64) {
        let mut hot = lock(&self.hot);
        if hot.len() >= self.hot_limit {
            hot.clear();
        }
        if self.hot_limit > 0 {
            hot.insert(key.to_vec(), value);
        }
    }
}

impl Memo for Store {
    fn get(&self, game: GameTag, state: &[u8]) -> Option<u64> {
        let key = store_key(game, state);
        if let Some(&value) = lock(&self.hot).get(&key) {
            return Some(value);
        }
        if let Some(&value) = lock(&self.pending).get(&key) {
            return Some(value);
        }
        let stored = self.db.get(&key).ok().flatten()?;
        let value = decode_value(&stored)?;
        self.remember(&key, value);
        Some(value)
    }

    /// Remembers `value`; a value the in-memory table already holds (read from or written to the
    /// store before) is not written again.
    fn put(&self, game: GameTag, state: &[u8], value: u64) {
        let key = store_key(game, state);
        if lock(&self.hot).get(&key) == Some(&value) {
            return;
        }
        self.remember(&key, value);
        let full = {
            let mut pending = lock(&self.pending);
            pending.insert(key, value);
            pending.len() >= WRITE_BATCH
        };
        if full {
            if let Err(error) = self.write_pending() {
                self.warn_write_failed(&error);
            }
        }
    }

    fn flush(&self) {
        if let Err(error) = self.write_pending() {
            self.warn_write_failed(&error);
        }
    }

    /// Single-flight: the first asker of a missing key computes it; later askers wait for it (checking
    /// their budget every few milliseconds), then read it — or, if the first gave up, compute it.
    fn get_or_compute(
        &self,
        game: GameTag,
        state: &[u8],
        budget: &Budget,
        compute: &mut dyn FnMut() -> Result<u64, Interrupted>,
    ) -> Result<(u64, bool), Interrupted> {
        let key = store_key(game, state);
        loop {
            if let Some(value) = self.get(game, state) {
                return Ok((value, true));
            }
            let (flight, leading) = {
                let mut in_flight = lock(&self.in_flight);
                match in_flight.get(&key) {
                    Some(flight) => (flight.clone(), false),
                    None => {
                        let flight = Arc::new(Flight::default());
                        in_flight.insert(key.clone(), flight.clone());
                        (flight, true)
                    }
                }
            };
            if leading {
                let _landing = Landing { store: self, key: &key, flight };
                let value = compute()?;
                self.put(game, state, value);
                return Ok((value, false));
            }
            let mut finished = lock(&flight.finished);
            while !*finished {
                budget.check()?;
                finished = flight
                    .done
                    .wait_timeout(finished, Duration::from_millis(5))
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .0;
            }
        }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Err(error) = self.sync() {
            tracing::warn!(%error, "cache flush at close failed");
        }
    }
}

/// A store key: the game tag byte, then the canonical state bytes.
pub fn store_key(game: GameTag, state: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(1 + state.len());
    key.push(game as u8);
    key.extend_from_slice(state);
    key
}

/// Encodes a value in the current format: version byte, then the value little-endian.
pub fn encode_value(value: u64) -> [u8; 9] {
    let mut bytes = [0; 9];
    bytes[0] = VALUE_FORMAT_V1;
    bytes[1..].copy_from_slice(&value.to_le_bytes());
    bytes
}

/// Decodes a stored value; `None` (a miss) for an unknown version or a malformed value.
pub fn decode_value(bytes: &[u8]) -> Option<u64> {
    match bytes.split_first() {
        Some((&VALUE_FORMAT_V1, rest)) => Some(u64::from_le_bytes(rest.try_into().ok()?)),
        _ => None,
    }
}

/// Locks a mutex, recovering the data if a panicking thread poisoned it (the maps and counters
/// kept under this crate's mutexes stay consistent: every critical section leaves them whole).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_persist_across_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path(), 100).unwrap();
            store.put(GameTag::Tetris, b"component", 7);
            store.flush();
        }
        let store = Store::open(dir.path(), 100).unwrap();
        assert_eq!(store.get(GameTag::Tetris, b"component"), Some(7));
        assert_eq!(store.get(GameTag::Tetris, b"other"), None);
    }

    #[test]
    fn corrupted_and_unknown_versions_are_misses_and_get_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path(), 100).unwrap();
            store.db.insert(store_key(GameTag::Tetris, b"garbage"), &[1u8, 2, 3][..]).unwrap();
            let mut future = encode_value(5);
            future[0] = 99;
            store.db.insert(store_key(GameTag::Tetris, b"future"), &future[..]).unwrap();
            store.sync().unwrap();
        }
        let store = Store::open(dir.path(), 100).unwrap();
        assert_eq!(store.get(GameTag::Tetris, b"garbage"), None);
        assert_eq!(store.get(GameTag::Tetris, b"future"), None);
        store.put(GameTag::Tetris, b"garbage", 4);
        store.sync().unwrap();
        let raw = store.db.get(store_key(GameTag::Tetris, b"garbage")).unwrap().unwrap();
        assert_eq!(decode_value(&raw), Some(4));
    }

    #[test]
    fn in_memory_table_stays_bounded() {
        let store = Store::temporary(10);
        for i in 0..100u64 {
            store.put(GameTag::Tetris, &i.to_le_bytes(), i);
        }
        assert!(lock(&store.hot).len() <= 10);
        for i in 0..100u64 {
            assert_eq!(store.get(GameTag::Tetris, &i.to_le_bytes()), Some(i));
        }
    }

    #[test]
    fn concurrent_askers_of_one_key_compute_it_once() {
        let store = Store::temporary(100);
        let computed = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    let mut compute = || {
                        computed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(100));
                        Ok(42)
                    };
                    let (value, _) =
                        store.get_or_compute(GameTag::Tetris, b"shared", &Budget::unlimited(), &mut compute).unwrap();
                    assert_eq!(value, 42);
                });
            }
        });
        assert_eq!(computed.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_waiter_computes_when_the_first_asker_gives_up() {
        let store = Store::temporary(100);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut give_up = || {
                    std::thread::sleep(Duration::from_millis(50));
                    Err(Interrupted::DeadlineExceeded)
                };
                assert!(store.get_or_compute(GameTag::Tetris, b"key", &Budget::unlimited(), &mut give_up).is_err());
            });
            std::thread::sleep(Duration::from_millis(10));
            let (value, found) =
                store.get_or_compute(GameTag::Tetris, b"key", &Budget::unlimited(), &mut || Ok(7)).unwrap();
            assert_eq!((value, found), (7, false));
        });
    }

    #[test]
    fn locked_store_gives_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let _first = Store::open(dir.path(), 10).unwrap();
        let error = Store::open(dir.path(), 10).err().expect("a second open fails").to_string();
        assert!(error.contains("cannot open the cache store"), "{error}");
        assert!(error.contains("locked by another running process"), "{error}");
    }
}
