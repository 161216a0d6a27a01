//! Small synchronization helpers used across the crate: locks that survive a panicking holder,
//! and a limit of one log line a minute for a recurring problem.

use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// Locks a mutex, recovering the data if a panicking thread poisoned it (the maps and counters
/// kept under this crate's mutexes stay consistent: every critical section leaves them whole).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Reads an `RwLock`, recovering the data if a panicking writer poisoned it (as [`lock`]).
pub(crate) fn read<T>(rwlock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    rwlock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Writes an `RwLock`, recovering the data if a panicking writer poisoned it (as [`lock`]).
pub(crate) fn write<T>(rwlock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    rwlock.write().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// At most one log line per interval for a recurring problem.
pub(crate) struct RateLimit(Mutex<Option<Instant>>);

impl RateLimit {
    const INTERVAL: Duration = Duration::from_secs(60);

    /// A limit that allows a line at once.
    pub(crate) fn new() -> Self {
        Self(Mutex::new(None))
    }

    /// Whether a line may be logged now (and if so, starts a new interval).
    pub(crate) fn allow(&self) -> bool {
        let mut last = lock(&self.0);
        if last.is_some_and(|at| at.elapsed() < Self::INTERVAL) {
            return false;
        }
        *last = Some(Instant::now());
        true
    }
}
