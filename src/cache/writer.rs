//! The store's own thread: it writes buffered values in batches (keeping the entry count and the
//! eviction index in the same atomic batch), answers syncs, reopens sled after a full disk, and
//! keeps the store within its size bound.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::format::{
    bucket_of_stored, cost_bucket, decode_value, encode_value, index_key, indexed_key, is_value_key, CAP_KEY,
    ENTRIES_KEY, INDEX_PREFIX,
};
use super::{OnCorrupt, OpenError, Payload, StoreState, WRITE_BATCH};
use crate::disk::{self, guarded, Failure, Kind};
use crate::sync::lock;

/// The longest a buffered value waits before the writer thread writes it.
const FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// How often an unavailable store (a full disk) is tried again.
const RETRY_INTERVAL: Duration = Duration::from_secs(2);

/// An open database and what its bookkeeping says.
pub(super) struct Opened {
    pub(super) db: sled::Db,
    pub(super) entries: u64,
    pub(super) cap: Option<u64>,
}

impl Opened {
    pub(super) fn new(db: sled::Db, entries: u64, cap: Option<u64>) -> Self {
        Self { db, entries, cap }
    }
}

/// How the cache store is named in messages about opening it.
const CACHE_STORE: disk::Described =
    disk::Described { store: "cache store", on_corrupt_flag: "--on-corrupt-store", loss: "it is only a cache" };

/// Opens the store in `path` and reads its bookkeeping (counting and indexing an old store once).
/// An unreadable store is moved aside and replaced by an empty one, or refused, per `on_corrupt`
/// ([`disk::open_or_move_aside`]); `Ok(None)` means the disk is full.
pub(super) fn open_or_recover(
    path: &Path,
    on_corrupt: OnCorrupt,
    page_cache_bytes: u64,
) -> Result<Option<Opened>, OpenError> {
    // The leftover of a compaction cut short: a partial copy, or the old store once swapped out.
    let _ = std::fs::remove_dir_all(compaction_path(path));
    let open = |path: &Path| open_and_prepare(path, page_cache_bytes);
    Ok(match disk::open_or_move_aside(path, on_corrupt, CACHE_STORE, open, |_| {})? {
        disk::Opening::Opened(opened, _) => Some(opened),
        disk::Opening::DiskFull => None,
    })
}

fn open_and_prepare(path: &Path, page_cache_bytes: u64) -> Result<Opened, Failure> {
    let db = disk::open_sled(path, page_cache_bytes)?;
    let (entries, cap) = guarded(|| {
        let entries = match db.get(ENTRIES_KEY)?.and_then(|bytes| read_u64(&bytes)) {
            Some(entries) => entries,
            None => count_and_index(&db)?,
        };
        Ok((entries, db.get(CAP_KEY)?.and_then(|bytes| read_u64(&bytes))))
    })?;
    Ok(Opened::new(db, entries, cap))
}

/// A store without an entry count (written before counts were kept): counts its values and indexes
/// them for eviction, once.
fn count_and_index(db: &sled::Db) -> sled::Result<u64> {
    let mut entries = 0u64;
    let mut batch = sled::Batch::default();
    let mut batched = 0;
    for item in db.iter() {
        let (key, value) = item?;
        if !is_value_key(&key) {
            continue;
        }
        entries += 1;
        batch.insert(index_key(bucket_of_stored(&key, &value), &key), &[][..]);
        batched += 1;
        if batched == WRITE_BATCH {
            db.apply_batch(std::mem::take(&mut batch))?;
            batched = 0;
        }
    }
    batch.insert(ENTRIES_KEY, &entries.to_le_bytes()[..]);
    db.apply_batch(batch)?;
    if entries > 0 {
        tracing::info!(entries, "counted and indexed the values of a store written by an older version");
    }
    Ok(entries)
}

fn read_u64(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// What the writer thread knows about the size bound.
struct Bound {
    /// The most values kept, once the bound was reached.
    cap: Option<u64>,
}

/// The writer thread's loop, until the store is dropped.
pub(super) fn run(shared: &StoreState, cap: Option<u64>) {
    let mut bound = Bound { cap };
    let mut last_write = Instant::now();
    let mut next_retry = Instant::now() + RETRY_INTERVAL;
    loop {
        let (values, sync_ticket, closing) = {
            let mut queue = lock(&shared.queue);
            loop {
                let due = !queue.pending.is_empty()
                    && (queue.pending.len() >= WRITE_BATCH
                        || queue.flush_requested
                        || last_write.elapsed() >= FLUSH_INTERVAL);
                let retry = shared.path.is_some() && shared.db().is_none() && Instant::now() >= next_retry;
                if queue.closing || queue.sync_requested > queue.sync_done || due || retry {
                    break;
                }
                queue = shared.queue_changed.wait_timeout(queue, FLUSH_INTERVAL).unwrap_or_else(|p| p.into_inner()).0;
            }
            queue.flush_requested = false;
            // At most one batch at a time, so that the size bound is checked every WRITE_BATCH
            // values however far behind the writer is; a sync is answered once nothing is pending.
            let values = Arc::new(queue.pending.take(WRITE_BATCH));
            queue.writing = Arc::clone(&values);
            shared.buffer_drained.notify_all();
            let sync_ticket = if queue.pending.is_empty() { queue.sync_requested } else { queue.sync_done };
            (values, sync_ticket, queue.closing)
        };
        if shared.db().is_none() && Instant::now() >= next_retry {
            next_retry = Instant::now() + RETRY_INTERVAL;
            reopen(shared, &mut bound);
        }
        let mut error = None;
        if !values.is_empty() {
            last_write = Instant::now();
            error = write(shared, &values).err();
        }
        let syncing = sync_ticket > lock(&shared.queue).sync_done;
        if error.is_none() {
            if let Some(db) = shared.db() {
                if syncing {
                    error = guarded(|| db.flush()).err().map(|failure| failure.to_string());
                }
                if let Ok(size) = guarded(|| db.size_on_disk()) {
                    shared.size_bytes.store(size, Ordering::Relaxed);
                }
                drop(db);
                keep_within_bound(shared, &mut bound);
            }
        }
        let mut queue = lock(&shared.queue);
        queue.writing = Arc::default();
        if sync_ticket > queue.sync_done {
            queue.sync_done = sync_ticket;
            queue.sync_error = error;
            shared.synced.notify_all();
        }
        if closing && queue.pending.is_empty() {
            return;
        }
    }
}

/// Writes `values` in one atomic batch with the updated entry count and eviction index.
fn write(shared: &StoreState, values: &HashMap<Vec<u8>, (Payload, u64)>) -> Result<(), String> {
    let Some(db) = shared.db() else {
        return Err("the store is unavailable (the disk is full)".to_string());
    };
    let entries = shared.entries.load(Ordering::Relaxed);
    let written = guarded(|| {
        let mut batch = sled::Batch::default();
        let mut added = 0;
        for (key, (value, cost)) in values {
            let mut cost = *cost;
            match db.get(key)? {
                Some(old) => {
                    if let Some(stored) = decode_value(key, &old).filter(|stored| stored.value == *value) {
                        cost = cost.max(stored.cost.unwrap_or(0));
                    }
                    let old_bucket = bucket_of_stored(key, &old);
                    if old_bucket != cost_bucket(cost) {
                        batch.remove(index_key(old_bucket, key));
                    }
                }
                None => added += 1,
            }
            batch.insert(index_key(cost_bucket(cost), key), &[][..]);
            batch.insert(key.as_slice(), encode_value(key, value, cost));
        }
        batch.insert(ENTRIES_KEY, &(entries + added).to_le_bytes()[..]);
        db.apply_batch(batch)?;
        Ok(entries + added)
    });
    match written {
        Ok(entries) => {
            shared.entries.store(entries, Ordering::Relaxed);
            Ok(())
        }
        Err(failure) => {
            report_write_failure(shared, &failure);
            Err(failure.to_string())
        }
    }
}

/// A failed write: on a full disk the store becomes unavailable (one ERROR line) and is reopened
/// once space returns; anything else is a WARN line, at most one a minute.
fn report_write_failure(shared: &StoreState, failure: &Failure) {
    if failure.kind() == Kind::NoSpace && shared.path.is_some() {
        tracing::error!(
            "the disk is full: the cache store is read-only (answers stay exact, new values are not remembered); \
             writing resumes as soon as space returns"
        );
        shared.uninstall();
    } else if shared.write_warnings.allow() {
        tracing::warn!(%failure, "cache write failed; answers stay exact but are not remembered (at most one such line a minute)");
    }
}

/// Closes sled and opens it again (after a full disk).
fn reopen(shared: &StoreState, bound: &mut Bound) {
    let was_writable = shared.writable.load(Ordering::Relaxed);
    shared.uninstall();
    open_again(shared, bound, was_writable);
}

/// Opens the store closed by [`StoreState::uninstall`] again; says so when it was not writable before.
fn open_again(shared: &StoreState, bound: &mut Bound, was_writable: bool) {
    let Some(path) = &shared.path else { return };
    match open_or_recover(path, shared.on_corrupt, shared.page_cache_bytes) {
        Ok(Some(opened)) => {
            bound.cap = opened.cap.or(bound.cap);
            shared.install(opened);
            if !was_writable {
                tracing::info!(data_dir = %path.display(), "the cache store is writable again");
            }
        }
        Ok(None) => {}
        Err(error) => {
            if shared.write_warnings.allow() {
                tracing::error!(%error, "cannot reopen the cache store; serving without it, retrying");
            }
        }
    }
}

/// The size at which the bound is acted on: three quarters of it, so that what is written between
/// two looks (one batch of values, a few megabytes at most) stays within it.
fn act_at(max_bytes: u64) -> u64 {
    max_bytes - max_bytes / 4
}

/// Keeps the store within `shared.max_bytes`, looked at after every batch written, so that the
/// bound holds however fast values come and whatever else the machine does. sled 0.34 never
/// shrinks its file and reuses the space of removed values only in part (measured, with evictions
/// and reopens alone: 11 500 values in a file of 28 MB that went on growing, under a bound of
/// 16 MiB on a busy machine; compacted, 12 500 values take 7.3 MB), so once the
/// file passes [`act_at`] the bound the cheapest values past the cap are evicted and the store is
/// compacted: rewritten whole into a new file that holds only what is live ([`compact`]). The first
/// time, or when what is live fills more than half the bound, the cap becomes the number of values
/// that fill three eighths of it (as the compacted file measures them), the cheapest evicted and the
/// store compacted again. From then on the number of values stays at the cap, each new value
/// evicting the cheapest, and a compaction copies at most half the bound each time that writes
/// filled a quarter of it.
fn keep_within_bound(shared: &StoreState, bound: &mut Bound) {
    let max = shared.max_bytes;
    if shared.size_bytes.load(Ordering::Relaxed) <= act_at(max) || shared.path.is_none() {
        evict_to_cap(shared, bound);
        return;
    }
    evict_to_cap(shared, bound);
    if !compact(shared, bound) {
        return;
    }
    let (live, entries) = (shared.size_bytes.load(Ordering::Relaxed), shared.entries.load(Ordering::Relaxed));
    if live > max / 2 && entries > 0 {
        let fitting = u128::from(entries) * u128::from(max / 8 * 3) / u128::from(live);
        bound.cap = Some((fitting as u64).min(entries - entries / 4));
        evict_to_cap(shared, bound);
        compact(shared, bound);
    }
}

/// The page cache of the store a compaction writes: it is only written, in key order, so a small
/// one serves, and the two stores open at once take little more memory than one.
const COMPACTION_CACHE_BYTES: u64 = 1 << 20;

/// How many keys a compaction writes in one sled batch: sled's memory grows with its batches
/// (measured, 8 000 small keys written into a new store: 35 MB more resident memory in one batch,
/// 14 MB in batches of 1 000, 5.6 MB in batches of 100).
const COMPACTION_BATCH: usize = 64;

/// Where a compaction writes the new store of `path`: `<path>.compacting`. Whatever is there when
/// the store opens is the leftover of a compaction cut short, and removed.
pub(super) fn compaction_path(path: &Path) -> std::path::PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".compacting");
    path.with_file_name(name)
}

/// Rewrites the store into [`compaction_path`], every key and value as it is (the values, the count,
/// the cap and the eviction index), then swaps the two directories in one atomic rename
/// (`renameat2(RENAME_EXCHANGE)`), removes the old one and opens the new one. A kill at any point
/// leaves the store whole at `path` and at most a leftover to remove. Readers miss while the store
/// is swapped (it is a cache); values put meanwhile wait in the write buffer. Returns whether the
/// store was compacted; a failure (a full disk, a filesystem without the atomic swap) leaves the
/// store as it was, with one line in the log.
fn compact(shared: &StoreState, bound: &mut Bound) -> bool {
    let (Some(path), Some(db)) = (&shared.path, shared.db()) else { return false };
    let fresh = compaction_path(path);
    let _ = std::fs::remove_dir_all(&fresh);
    let copied = guarded(|| {
        let target =
            sled::Config::new().path(&fresh).cache_capacity(COMPACTION_CACHE_BYTES).flush_every_ms(None).open()?;
        let mut batch = sled::Batch::default();
        let mut batched = 0;
        for item in db.iter() {
            let (key, value) = item?;
            batch.insert(key, value);
            batched += 1;
            if batched == COMPACTION_BATCH {
                target.apply_batch(std::mem::take(&mut batch))?;
                batched = 0;
            }
        }
        target.apply_batch(batch)?;
        target.flush()?;
        Ok(())
    });
    drop(db);
    if let Err(failure) = copied {
        let _ = std::fs::remove_dir_all(&fresh);
        if shared.write_warnings.allow() {
            tracing::warn!(%failure, "compacting the cache store failed; it stays as it is (at most one such line a minute)");
        }
        return false;
    }
    let was_writable = shared.writable.load(Ordering::Relaxed);
    shared.uninstall();
    let swapped = disk::wait_unlocked(path).and_then(|()| disk::exchange(path, &fresh));
    if let Err(error) = &swapped {
        if shared.write_warnings.allow() {
            tracing::warn!(%error, "swapping in the compacted cache store failed; it stays as it is (at most one such line a minute)");
        }
    }
    let _ = std::fs::remove_dir_all(&fresh);
    open_again(shared, bound, was_writable);
    // The old store's pages are free now but scattered among live ones, which glibc's malloc
    // keeps resident; measured, this gives back 5 to 17 MB after each compaction of a 2 MB store.
    // SAFETY: malloc_trim only returns free memory to the system; it may be called at any time.
    unsafe { libc::malloc_trim(0) };
    let compacted = swapped.is_ok() && shared.db().is_some();
    if compacted {
        shared.compactions.fetch_add(1, Ordering::Relaxed);
    }
    compacted
}

/// Evicts the cheapest values until at most `bound.cap` remain, in one batch with the new count
/// and the cap.
fn evict_to_cap(shared: &StoreState, bound: &Bound) {
    let (Some(cap), Some(db)) = (bound.cap, shared.db()) else { return };
    let entries = shared.entries.load(Ordering::Relaxed);
    if entries <= cap {
        return;
    }
    let evicted = guarded(|| {
        let mut batch = sled::Batch::default();
        let mut evicted = 0;
        for index in db.scan_prefix(INDEX_PREFIX).keys() {
            if entries - evicted <= cap {
                break;
            }
            let index = index?;
            if let Some(key) = indexed_key(&index) {
                if db.get(key)?.is_some() {
                    batch.remove(key);
                    evicted += 1;
                }
            }
            batch.remove(index);
        }
        batch.insert(ENTRIES_KEY, &(entries - evicted).to_le_bytes()[..]);
        batch.insert(CAP_KEY, &cap.to_le_bytes()[..]);
        db.apply_batch(batch)?;
        Ok(evicted)
    });
    match evicted {
        Ok(evicted) => {
            shared.entries.store(entries - evicted, Ordering::Relaxed);
            shared.evictions.fetch_add(evicted, Ordering::Relaxed);
        }
        Err(failure) => report_write_failure(shared, &failure),
    }
}
