//! The persistent memo: expensive values (canonical 2×2-placement components above all) kept in an
//! embedded sled store, with a bounded in-memory table in front and a writer thread behind, and in
//! a fleet a shared tier on Redis behind sled ([`SharedCache`], `--shared-cache`).
//!
//! # Tiers
//! A lookup tries the in-memory table (and the write buffer), sled, then Redis, then computes; a
//! value found in Redis is written to sled too. A computed value goes to sled and, off the request
//! path, to Redis (see [`shared`] for the key schema there, the leases that make one replica
//! compute a top-level value while the others wait for it, and how a dead Redis is survived).
//!
//! # Key schema
//! A value's key is one game-tag byte ([`GameTag`] as `u8`, never 0) followed by the game's
//! canonical encoding of the state, e.g. `[3] ++ canonical component bytes` for the 2×2 placement
//! game. The encoding is the game's business; equal states must encode equally. Keys starting with
//! byte 0 are the store's bookkeeping, written in the same atomic sled batch as the values they
//! describe (so they survive kill -9 consistently):
//! - `\0nimber/entries`: the number of values, 8 bytes little-endian;
//! - `\0nimber/cap`: the most values kept, once the size bound was reached;
//! - `\0nimber/index/ ++ bucket ++ key`: the eviction index, one empty entry per value, `bucket`
//!   being the bit length of the value's recompute cost, so iterating the prefix visits the
//!   cheapest values first.
//!
//! # Value format
//! Every value starts with a format-version byte. Version 2 ([`VALUE_FORMAT_V2`], written now) is
//! that byte, the Grundy value and the recompute cost (search nodes) as LEB128 varints, then a
//! CRC-32 of the key and those bytes. Version 1 ([`VALUE_FORMAT_V1`], read only) is the byte then
//! the Grundy value as 8 little-endian bytes; its cost is unknown and taken as 4096 nodes, the
//! middle of what memoized values cost. A value that fails to decode (damaged, checksum mismatch,
//! unknown version) is a miss: it is recomputed and overwritten, never served. Version 3
//! ([`VALUE_FORMAT_V3`]) is the shared tier's, in Redis, in a fleet with a secret: the byte, the
//! varints, then an HMAC-SHA-256 tag; sled never holds it, and Redis never serves format 1 (see
//! [`shared`]). Versions 4 and 5 ([`VALUE_FORMAT_V4`], [`VALUE_FORMAT_V5`]) are the same two
//! forms of a game's bytes instead of a Grundy value ([`Memo::put_bytes`]: a heap game's values
//! under its canonical rules): the byte, the cost varint, the bytes, then the CRC-32 (sled) or the
//! tag (Redis). Bytes are at most [`MAX_BYTES_VALUE`] long, are not kept in the in-memory tier (the
//! game keeps its own), and count in the size bound like any value: sled's size on disk holds them,
//! and they are evicted by their cost like the rest.
//!
//! # Memory
//! The in-memory tier is bounded in bytes ([`StoreOptions::hot_bytes`]): each value costs its key's
//! length plus [`HOT_ENTRY_OVERHEAD`]; past the bound, quick_cache evicts the coldest values (CLOCK-Pro),
//! which stay in sled. sled's page cache is bounded by
//! [`StoreOptions::page_cache_bytes`]. Both come from the process's memory limit
//! ([`crate::limits::share_memory`]).
//!
//! # Writes, damage and bounds
//! Values are buffered and written by the store's own thread (in batches of up to 4096, at least
//! every 100 ms). The buffer is bounded in bytes ([`StoreOptions::write_buffer_bytes`], a share of
//! the memory limit): a caller that finds it full waits for the writer to take a batch, up to
//! [`WRITE_STALL`], and only past that (a writer that cannot keep up) is its value not remembered on
//! disk. Otherwise no caller waits for a write except [`Store::sync`]. The counts behind
//! [`Store::entries`], [`Store::size_on_disk`] and [`Store::evictions`] are atomics kept up to date
//! by that thread. A store that cannot be read at open is moved aside (or refused, see
//! [`OnCorrupt`]); on a full disk the server runs without it and the writer thread reopens it once
//! space returns. When the store reaches its size bound, it keeps the values that cost the most to
//! recompute and evicts the cheapest (see [`StoreOptions::max_bytes`]).

mod format;
mod metrics;
pub mod shared;
mod writer;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::sync::{lock, RateLimit};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

pub use crate::disk::{OnCorrupt, OpenError};
pub use format::{
    decode_value, encode_value, store_key, Payload, Stored, VALUE_FORMAT_V1, VALUE_FORMAT_V2, VALUE_FORMAT_V3,
    VALUE_FORMAT_V4, VALUE_FORMAT_V5,
};
pub use metrics::StoreMetrics;
pub use shared::{
    check_value, lease_key, seal_value, value_key, LeaseAttempt, Rejection, SharedCache, SharedCacheConfig,
    SharedCounts, SharedSecret,
};

use crate::disk;
use crate::games::{Budget, GameTag, Interrupted, Memo, DEFAULT_TABLE_LIMIT};
use crate::limits::{MemoryBudget, MAX_PAGE_CACHE_BYTES, MAX_WRITE_BUFFER_BYTES, TABLE_ENTRY_BYTES};

/// The longest bytes value the store keeps ([`Memo::put_bytes`]), and the most bytes of one read
/// from the shared tier: the memo's own bound, [`crate::games::MAX_MEMO_BYTES`].
pub const MAX_BYTES_VALUE: usize = crate::games::MAX_MEMO_BYTES;

/// How many buffered values make the writer thread write a batch at once.
const WRITE_BATCH: usize = 4096;

/// What a buffered value costs besides its key's and its bytes' lengths: the hash map's entry (the
/// key's `Vec`, the value, its cost, the map's control byte and spare capacity) and the key's
/// allocation.
pub const WRITE_BUFFER_ENTRY_OVERHEAD: u64 = 160;

/// The longest a caller waits for room in a full write buffer before its value goes unwritten.
pub const WRITE_STALL: Duration = Duration::from_secs(1);

/// What a value of the in-memory tier costs besides its key's bytes: quick_cache's entry (a 24-byte
/// `Vec`, an 8-byte value, its hash and state, and the hash it keeps of an evicted key for a while)
/// and the key's allocation header and rounding.
pub const HOT_ENTRY_OVERHEAD: u64 = 80;

/// The default size bound: 2 GiB, or a quarter of the data directory's filesystem if smaller.
const DEFAULT_MAX_BYTES: u64 = 2 << 30;

/// How the store is opened.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// The most bytes of the in-memory tier in front of the store: each value costs its key's
    /// length plus [`HOT_ENTRY_OVERHEAD`].
    pub hot_bytes: u64,
    /// The most bytes of sled's page cache.
    pub page_cache_bytes: u64,
    /// The size bound on disk, in bytes: when the store reaches it, it stops growing, keeping the
    /// values most expensive to recompute. `None`: 2 GiB, or a quarter of the filesystem's total
    /// size if that is smaller (so a store on a small volume leaves room for everything else).
    pub max_bytes: Option<u64>,
    /// What to do when the store on disk is unreadable.
    pub on_corrupt: OnCorrupt,
    /// The most bytes of values waiting for the writer thread: each costs its key's length, its
    /// bytes' and [`WRITE_BUFFER_ENTRY_OVERHEAD`].
    pub write_buffer_bytes: u64,
}

/// The defaults: an in-memory tier of [`DEFAULT_TABLE_LIMIT`] × [`TABLE_ENTRY_BYTES`] bytes, sled's
/// default page cache (1 GiB), the default size bound, a damaged store rebuilt, and a write buffer
/// of [`MAX_WRITE_BUFFER_BYTES`].
impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            hot_bytes: DEFAULT_TABLE_LIMIT as u64 * TABLE_ENTRY_BYTES,
            page_cache_bytes: MAX_PAGE_CACHE_BYTES,
            max_bytes: None,
            on_corrupt: OnCorrupt::Rebuild,
            write_buffer_bytes: MAX_WRITE_BUFFER_BYTES,
        }
    }
}

impl StoreOptions {
    /// The default options with the in-memory tier, page cache, write buffer and size bound of
    /// `budget` for a store in `path` (see [`default_max_bytes`]).
    pub fn within(budget: &MemoryBudget, path: &Path) -> Self {
        Self {
            hot_bytes: budget.store_hot_bytes,
            page_cache_bytes: budget.page_cache_bytes,
            write_buffer_bytes: budget.store_write_buffer_bytes,
            max_bytes: Some(default_max_bytes(path, budget.store_max_bytes)),
            ..Self::default()
        }
    }
}

/// The persistent memo over sled, with the fleet's shared tier (Redis) behind it when configured.
pub struct Store {
    shared: Arc<StoreState>,
    writer: Option<std::thread::JoinHandle<()>>,
    tier: Option<SharedCache>,
}

/// What the store's users and its writer thread share.
struct StoreState {
    /// The sled database; `None` while unavailable (a full disk).
    db: RwLock<Option<sled::Db>>,
    /// Where the store lives (`None` for a temporary store) and what to do if it is unreadable.
    path: Option<PathBuf>,
    on_corrupt: OnCorrupt,
    max_bytes: u64,
    page_cache_bytes: u64,
    hot: HotTier,
    queue: Mutex<Queue>,
    /// Signals the writer thread: values to write, a sync asked for, closing.
    queue_changed: Condvar,
    /// Signals [`Store::sync`] callers: a sync finished.
    synced: Condvar,
    /// Signals callers waiting for room in the write buffer: the writer took a batch.
    buffer_drained: Condvar,
    write_buffer_bytes: u64,
    /// Callers that found the write buffer full, and values not written because it stayed full.
    write_stalls: AtomicU64,
    unwritten: AtomicU64,
    in_flight: Mutex<HashMap<Vec<u8>, Arc<Flight>>>,
    entries: AtomicU64,
    size_bytes: AtomicU64,
    evictions: AtomicU64,
    compactions: AtomicU64,
    writable: AtomicBool,
    read_warnings: RateLimit,
    write_warnings: RateLimit,
}

/// The in-memory tier: values recently read or written, within a bound in bytes, evicted by
/// quick_cache's CLOCK-Pro policy (cold values go first; the tier never empties at once).
struct HotTier {
    /// `None` when the bound is 0: nothing is kept.
    values: Option<quick_cache::sync::Cache<Vec<u8>, u64, HotWeight>>,
}

/// What a value costs in the in-memory tier: its key's length plus [`HOT_ENTRY_OVERHEAD`].
#[derive(Clone, Copy)]
struct HotWeight;

impl quick_cache::Weighter<Vec<u8>, u64> for HotWeight {
    fn weight(&self, key: &Vec<u8>, _value: &u64) -> u64 {
        key.len() as u64 + HOT_ENTRY_OVERHEAD
    }
}

impl HotTier {
    fn new(limit_bytes: u64) -> Self {
        // Sized for keys of about 24 bytes, the length of a small board's canonical component.
        let estimated = usize::try_from(limit_bytes / (HOT_ENTRY_OVERHEAD + 24)).unwrap_or(usize::MAX).max(1);
        let values =
            (limit_bytes > 0).then(|| quick_cache::sync::Cache::with_weighter(estimated, limit_bytes, HotWeight));
        Self { values }
    }

    fn get(&self, key: &[u8]) -> Option<u64> {
        self.values.as_ref()?.get(key)
    }

    /// Keeps `value` (a value that alone exceeds the bound is not kept).
    fn insert(&self, key: &[u8], value: u64) {
        if let Some(values) = &self.values {
            values.insert(key.to_vec(), value);
        }
    }
}

/// Values waiting for the writer thread, and the requests made to it.
#[derive(Default)]
struct Queue {
    pending: WriteBuffer,
    /// The batch the writer thread took and is writing: still read from here until sled has it,
    /// so that a value is never in neither place.
    writing: Arc<HashMap<Vec<u8>, (Payload, u64)>>,
    flush_requested: bool,
    /// The number of the latest [`Store::sync`] asked for, and of the latest finished.
    sync_requested: u64,
    sync_done: u64,
    /// Why the latest finished sync could not write everything, if it could not.
    sync_error: Option<String>,
    closing: bool,
}

impl Queue {
    /// The value of `key` not yet in sled: waiting, or being written.
    fn buffered(&self, key: &[u8]) -> Option<&Payload> {
        self.pending.get(key).or_else(|| self.writing.get(key).map(|(value, _)| value))
    }
}

/// Values waiting for the writer thread, key -> (value, recompute cost), and the bytes they hold.
#[derive(Default)]
struct WriteBuffer {
    values: HashMap<Vec<u8>, (Payload, u64)>,
    bytes: u64,
}

impl WriteBuffer {
    /// What `key` and `value` cost in the buffer.
    fn weight(key: &[u8], value: &Payload) -> u64 {
        let bytes = match value {
            Payload::Nimber(_) => 0,
            Payload::Bytes(bytes) => bytes.len(),
        };
        (key.len() + bytes) as u64 + WRITE_BUFFER_ENTRY_OVERHEAD
    }

    fn len(&self) -> usize {
        self.values.len()
    }

    fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    fn get(&self, key: &[u8]) -> Option<&Payload> {
        self.values.get(key).map(|(value, _)| value)
    }

    /// Whether `key` and `value` fit within `bound` bytes (a key already buffered always fits: its
    /// value is replaced in place).
    fn has_room(&self, key: &[u8], value: &Payload, bound: u64) -> bool {
        self.values.contains_key(key) || self.bytes + Self::weight(key, value) <= bound
    }

    /// Buffers `value` for `key`; an equal value keeps the higher of the two costs.
    fn insert(&mut self, key: Vec<u8>, value: Payload, cost: u64) {
        let weight = Self::weight(&key, &value);
        let cost = match self.values.get(&key) {
            Some((old, old_cost)) => {
                self.bytes -= Self::weight(&key, old);
                if *old == value {
                    cost.max(*old_cost)
                } else {
                    cost
                }
            }
            None => cost,
        };
        self.bytes += weight;
        self.values.insert(key, (value, cost));
    }

    /// Takes up to `most` values out of the buffer.
    fn take(&mut self, most: usize) -> HashMap<Vec<u8>, (Payload, u64)> {
        let taken: HashMap<_, _> = if self.values.len() <= most {
            std::mem::take(&mut self.values)
        } else {
            let keys: Vec<Vec<u8>> = self.values.keys().take(most).cloned().collect();
            keys.into_iter().filter_map(|key| self.values.remove_entry(&key)).collect()
        };
        self.bytes -= taken.iter().map(|(key, (value, _))| Self::weight(key, value)).sum::<u64>();
        taken
    }
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
        lock(&self.store.shared.in_flight).remove(self.key);
        *lock(&self.flight.finished) = true;
        self.flight.done.notify_all();
    }
}

impl Store {
    /// Opens (or creates) the store in directory `path` with default options and an in-memory
    /// tier of at most `hot_bytes` bytes in front of it.
    pub fn open(path: &Path, hot_bytes: u64) -> Result<Self, OpenError> {
        Self::open_with(path, &StoreOptions { hot_bytes, ..StoreOptions::default() })
    }

    /// Opens (or creates) the store in directory `path`. An unreadable store is moved aside to
    /// `<path>.corrupt-<unix seconds>` (one ERROR line says so) or refused, as `options.on_corrupt`
    /// says; on a full disk the store starts unavailable (one ERROR line) and is reopened by the
    /// writer thread once space returns. Other failures (a lock held by another process,
    /// permissions, a file in the way) are an error. May take a while: call it off async threads.
    pub fn open_with(path: &Path, options: &StoreOptions) -> Result<Self, OpenError> {
        let max_bytes = options.max_bytes.unwrap_or_else(|| default_max_bytes(path, u64::MAX));
        let opened = writer::open_or_recover(path, options.on_corrupt, options.page_cache_bytes)?;
        if opened.is_none() {
            tracing::error!(
                data_dir = %path.display(),
                "the disk is full: serving without the cache store (answers stay exact, nothing is remembered); \
                 it is opened as soon as space returns"
            );
        }
        Ok(Self::start(opened, Some(path.to_path_buf()), options, max_bytes))
    }

    /// A store that lives in memory only and vanishes when dropped (for the judge CLI and tests),
    /// with an in-memory tier of at most `hot_bytes` bytes.
    pub fn temporary(hot_bytes: u64) -> Self {
        Self::temporary_with(&StoreOptions { hot_bytes, ..StoreOptions::default() })
    }

    /// A store that lives in memory only (sled's files in `/dev/shm` on Linux) and vanishes when
    /// dropped, with `options`' in-memory tier and page cache; its size is not bounded
    /// (`options.max_bytes` is ignored: the bound acts by reopening sled, which a temporary store
    /// cannot).
    pub fn temporary_with(options: &StoreOptions) -> Self {
        let db = sled::Config::new()
            .temporary(true)
            .cache_capacity(options.page_cache_bytes)
            .open()
            .expect("a temporary sled store opens");
        Self::start(Some(writer::Opened::new(db, 0, None)), None, options, u64::MAX)
    }

    fn start(opened: Option<writer::Opened>, path: Option<PathBuf>, options: &StoreOptions, max_bytes: u64) -> Self {
        let shared = Arc::new(StoreState {
            db: RwLock::new(None),
            path,
            on_corrupt: options.on_corrupt,
            max_bytes,
            page_cache_bytes: options.page_cache_bytes,
            hot: HotTier::new(options.hot_bytes),
            queue: Mutex::new(Queue::default()),
            queue_changed: Condvar::new(),
            synced: Condvar::new(),
            buffer_drained: Condvar::new(),
            write_buffer_bytes: options.write_buffer_bytes,
            write_stalls: AtomicU64::new(0),
            unwritten: AtomicU64::new(0),
            in_flight: Mutex::new(HashMap::new()),
            entries: AtomicU64::new(0),
            size_bytes: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            compactions: AtomicU64::new(0),
            writable: AtomicBool::new(false),
            read_warnings: RateLimit::new(),
            write_warnings: RateLimit::new(),
        });
        let cap = opened.as_ref().and_then(|opened| opened.cap);
        if let Some(opened) = opened {
            shared.install(opened);
        }
        let writer = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("nimber-store-writer".into())
                .spawn(move || writer::run(&shared, cap))
                .expect("the store's writer thread starts")
        };
        Self { shared, writer: Some(writer), tier: None }
    }

    /// This store with the shared tier behind it: looked up after sled, before computing; computed
    /// values are sent to it, and top-level values are computed under its leases.
    pub fn with_shared_tier(mut self, tier: SharedCache) -> Self {
        self.tier = Some(tier);
        self
    }

    /// The shared tier, when configured.
    pub fn shared_tier(&self) -> Option<&SharedCache> {
        self.tier.as_ref()
    }

    /// Bytes the store occupies on disk (as of the latest write; never blocks).
    pub fn size_on_disk(&self) -> u64 {
        self.shared.size_bytes.load(Ordering::Relaxed)
    }

    /// Number of values on disk (as of the latest write; never blocks).
    pub fn entries(&self) -> u64 {
        self.shared.entries.load(Ordering::Relaxed)
    }

    /// How many values were evicted to keep the store within its size bound since it was opened.
    pub fn evictions(&self) -> u64 {
        self.shared.evictions.load(Ordering::Relaxed)
    }

    /// How many times the store was compacted (rewritten into a new file holding only its live values)
    /// to keep it within its size bound since it was opened.
    pub fn compactions(&self) -> u64 {
        self.shared.compactions.load(Ordering::Relaxed)
    }

    /// Bytes of values waiting for the writer thread (at most
    /// [`StoreOptions::write_buffer_bytes`]; the batch being written is no longer counted).
    pub fn write_buffer_bytes(&self) -> u64 {
        lock(&self.shared.queue).pending.bytes
    }

    /// How many times a caller found the write buffer full and waited for the writer.
    pub fn write_stalls(&self) -> u64 {
        self.shared.write_stalls.load(Ordering::Relaxed)
    }

    /// How many values were not written to disk because the write buffer stayed full for
    /// [`WRITE_STALL`] (or the store was closing).
    pub fn unwritten(&self) -> u64 {
        self.shared.unwritten.load(Ordering::Relaxed)
    }

    /// Whether values computed now are written to disk (false while the disk is full).
    pub fn writable(&self) -> bool {
        self.shared.writable.load(Ordering::Relaxed)
    }

    /// The size bound on disk, in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.shared.max_bytes
    }

    /// Waits until every value put before this call is written and sled has it on disk; an error
    /// says why some could not be (a full disk, a damaged store): they are then not remembered.
    pub fn sync(&self) -> Result<(), String> {
        let mut queue = lock(&self.shared.queue);
        queue.sync_requested += 1;
        let ticket = queue.sync_requested;
        self.shared.queue_changed.notify_all();
        while queue.sync_done < ticket && self.writer.as_ref().is_some_and(|writer| !writer.is_finished()) {
            queue =
                self.shared.synced.wait_timeout(queue, Duration::from_millis(100)).unwrap_or_else(|p| p.into_inner()).0;
        }
        match &queue.sync_error {
            Some(error) if queue.sync_done >= ticket => Err(error.clone()),
            _ if queue.sync_done >= ticket => Ok(()),
            _ => Err("the store's writer thread stopped".to_string()),
        }
    }
}

impl StoreState {
    /// The database, if available (a cheap handle clone; never blocks on I/O).
    fn db(&self) -> Option<sled::Db> {
        self.db.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Makes `opened` the database the store reads and writes.
    fn install(&self, opened: writer::Opened) {
        self.entries.store(opened.entries, Ordering::Relaxed);
        if let Ok(size) = disk::guarded(|| opened.db.size_on_disk()) {
            self.size_bytes.store(size, Ordering::Relaxed);
        }
        *self.db.write().unwrap_or_else(|p| p.into_inner()) = Some(opened.db);
        self.writable.store(true, Ordering::Relaxed);
    }

    /// Drops the database (a full disk, or before a reopen).
    fn uninstall(&self) {
        self.writable.store(false, Ordering::Relaxed);
        *self.db.write().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn remember(&self, key: &[u8], value: u64) {
        self.hot.insert(key, value);
    }

    /// The Grundy value of `key` in memory: the in-memory table or the write buffer.
    fn in_memory(&self, key: &[u8]) -> Option<u64> {
        if let Some(value) = self.hot.get(key) {
            return Some(value);
        }
        lock(&self.queue).buffered(key).and_then(Payload::nimber)
    }

    /// The bytes of `key` in the write buffer (bytes are not kept in the in-memory table: the
    /// games that store bytes keep their own).
    fn pending_bytes(&self, key: &[u8]) -> Option<Vec<u8>> {
        lock(&self.queue).buffered(key).and_then(|value| value.clone().into_bytes())
    }
}

impl Store {
    /// The value of `key` in sled, if it is there and decodes (a Grundy value is also kept in the
    /// in-memory table).
    fn get_local(&self, key: &[u8]) -> Option<Payload> {
        let db = self.shared.db()?;
        let stored = match disk::guarded(|| db.get(key)) {
            Ok(stored) => stored?,
            Err(failure) => {
                if self.shared.read_warnings.allow() {
                    tracing::warn!(%failure, "cache read failed; recomputing (at most one such line a minute)");
                }
                return None;
            }
        };
        let value = decode_value(key, &stored)?.value;
        if let Payload::Nimber(nimber) = value {
            self.shared.remember(key, nimber);
        }
        Some(value)
    }

    /// Remembers a Grundy value in memory and queues `value` for sled (not for the shared tier).
    fn put_local(&self, key: Vec<u8>, value: Payload, cost: u64) {
        if let Payload::Nimber(nimber) = value {
            self.shared.remember(&key, nimber);
        }
        let mut queue = lock(&self.shared.queue);
        let bound = self.shared.write_buffer_bytes;
        if !queue.pending.has_room(&key, &value, bound) {
            queue.flush_requested = true;
            self.shared.queue_changed.notify_all();
            self.shared.write_stalls.fetch_add(1, Ordering::Relaxed);
            let waited = self.shared.buffer_drained.wait_timeout_while(queue, WRITE_STALL, |queue| {
                !queue.pending.has_room(&key, &value, bound) && !queue.closing
            });
            queue = waited.unwrap_or_else(|p| p.into_inner()).0;
            if !queue.pending.has_room(&key, &value, bound) {
                drop(queue);
                self.shared.unwritten.fetch_add(1, Ordering::Relaxed);
                if self.shared.write_warnings.allow() {
                    tracing::warn!(
                        "cache writes are behind; some values are not remembered (at most one such line a minute)"
                    );
                }
                return;
            }
        }
        queue.pending.insert(key, value, cost);
        if queue.pending.len() >= WRITE_BATCH {
            self.shared.queue_changed.notify_all();
        }
    }

    /// Computes a missing top-level value under the shared tier's lease: when another replica
    /// holds it, waits (within `budget`) for its value instead; when Redis cannot be used, computes
    /// without a lease. Returns the value and whether it was found rather than computed.
    fn compute_leased(
        &self,
        tier: &SharedCache,
        key: &[u8],
        budget: &Budget,
        compute: &mut dyn FnMut() -> Result<(u64, u64), Interrupted>,
    ) -> Result<(u64, bool), Interrupted> {
        loop {
            match tier.lease(key) {
                LeaseAttempt::Found(value, cost) => {
                    self.put_local(key.to_vec(), Payload::Nimber(value), cost);
                    return Ok((value, true));
                }
                LeaseAttempt::Taken => {
                    if let Some((value, cost)) = tier.wait_for_value(key, budget)? {
                        self.put_local(key.to_vec(), Payload::Nimber(value), cost);
                        return Ok((value, true));
                    }
                    // The holder gave up or died (its lease expired): ask for the lease again.
                    if tier.ping() {
                        continue;
                    }
                    let (value, cost) = compute()?;
                    self.put_local(key.to_vec(), Payload::Nimber(value), cost);
                    return Ok((value, false));
                }
                LeaseAttempt::Held(lease) => {
                    let (value, cost) = compute()?;
                    self.put_local(key.to_vec(), Payload::Nimber(value), cost);
                    lease.finish(value, cost);
                    return Ok((value, false));
                }
                LeaseAttempt::Unavailable => {
                    let (value, cost) = compute()?;
                    self.put_local(key.to_vec(), Payload::Nimber(value), cost);
                    tier.send(key, Payload::Nimber(value), cost);
                    return Ok((value, false));
                }
            }
        }
    }
}

impl Memo for Store {
    /// The value of `key` from the first tier that has it: the in-memory table (and the write
    /// buffer), sled, then the shared tier within its probe budget (a value found there is also
    /// written to sled). Top-level values are always looked up in the shared tier, by
    /// [`Memo::get_or_compute`] when it asks for the lease.
    fn get(&self, game: GameTag, state: &[u8]) -> Option<u64> {
        let key = store_key(game, state);
        if let Some(value) = self.shared.in_memory(&key) {
            return Some(value);
        }
        if let Some(value) = self.get_local(&key) {
            return value.nimber();
        }
        let (value, cost) = self.tier.as_ref()?.probe(&key)?;
        self.put_local(key, Payload::Nimber(value), cost);
        Some(value)
    }

    /// The bytes of `key` from the first tier that has them: the write buffer, sled, then the shared
    /// tier (bytes found there are also written to sled). A value of another kind is a miss.
    fn get_bytes(&self, game: GameTag, state: &[u8]) -> Option<Vec<u8>> {
        let key = store_key(game, state);
        if let Some(bytes) = self.shared.pending_bytes(&key) {
            return Some(bytes);
        }
        if let Some(value) = self.get_local(&key) {
            return value.into_bytes();
        }
        let (bytes, cost) = self.tier.as_ref()?.get_bytes(&key)?;
        self.put_local(key, Payload::Bytes(bytes.clone()), cost);
        Some(bytes)
    }

    /// Queues `bytes` for sled and the shared tier, as [`Memo::put`] does a value; bytes longer than
    /// [`MAX_BYTES_VALUE`] are not remembered.
    fn put_bytes(&self, game: GameTag, state: &[u8], bytes: Vec<u8>, cost: u64) {
        if bytes.len() > MAX_BYTES_VALUE {
            if self.shared.write_warnings.allow() {
                tracing::warn!(
                    bytes = bytes.len(),
                    "a value is longer than the store keeps; it is not remembered (at most one such line a minute)"
                );
            }
            return;
        }
        let key = store_key(game, state);
        if let Some(tier) = &self.tier {
            tier.send(&key, Payload::Bytes(bytes.clone()), cost);
        }
        self.put_local(key, Payload::Bytes(bytes), cost);
    }

    fn peek(&self, game: GameTag, state: &[u8]) -> Option<u64> {
        self.shared.in_memory(&store_key(game, state))
    }

    /// Remembers `value`; a value the in-memory table already holds (read from or written to the
    /// store before) is not written again. Never waits for I/O: the writer thread writes it to
    /// sled, the shared tier's thread sends it to Redis.
    fn put(&self, game: GameTag, state: &[u8], value: u64, cost: u64) {
        let key = store_key(game, state);
        if self.shared.hot.get(&key) == Some(value) {
            return;
        }
        if let Some(tier) = &self.tier {
            tier.send(&key, Payload::Nimber(value), cost);
        }
        self.put_local(key, Payload::Nimber(value), cost);
    }

    /// Asks the writer thread to write what is buffered now; does not wait.
    fn flush(&self) {
        let mut queue = lock(&self.shared.queue);
        if !queue.pending.is_empty() {
            queue.flush_requested = true;
            self.shared.queue_changed.notify_all();
        }
    }

    /// Single-flight: the first asker of a missing key computes it; later askers wait for it, then
    /// read it — or, if the first gave up, compute it. Waiters wake at once when the first lands (a
    /// condvar); the 5 ms timeout only lets them see their own budget end, since a cancellation is a
    /// flag with no waker. quick_cache's own single flight (`get_value_or_guard`) is not used: it
    /// guards only its in-memory tier, while a flight here covers the sled read, the computation
    /// and the fleet's lease, and a waiter must give up when its own budget ends.
    /// With a shared tier, the first asker computes under the fleet's lease of the key, or waits
    /// for the replica that holds it (see `Store::compute_leased`).
    fn get_or_compute(
        &self,
        game: GameTag,
        state: &[u8],
        budget: &Budget,
        compute: &mut dyn FnMut() -> Result<(u64, u64), Interrupted>,
    ) -> Result<(u64, bool), Interrupted> {
        let key = store_key(game, state);
        loop {
            if let Some(value) = self.get(game, state) {
                return Ok((value, true));
            }
            let (flight, leading) = {
                let mut in_flight = lock(&self.shared.in_flight);
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
                if let Some(tier) = &self.tier {
                    return self.compute_leased(tier, &key, budget, compute);
                }
                let (value, cost) = compute()?;
                self.put(game, state, value, cost);
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
    /// Writes what is buffered, waits for the writer thread to finish, and closes sled.
    fn drop(&mut self) {
        lock(&self.shared.queue).closing = true;
        self.shared.queue_changed.notify_all();
        if let Some(writer) = self.writer.take() {
            if writer.join().is_err() {
                tracing::error!("the cache store's writer thread panicked; buffered values were not written");
            }
        }
    }
}

/// The default size bound for a store in `path`: 2 GiB, a quarter of the total size of the
/// filesystem holding it (or its nearest existing ancestor), or `memory_share` (the store's share of
/// the memory limit: sled keeps about as much in memory as the store takes on disk), whichever is
/// smallest, and at least 1 MiB.
pub fn default_max_bytes(path: &Path, memory_share: u64) -> u64 {
    let quarter_of_filesystem = disk::filesystem(path).map_or(u64::MAX, |filesystem| filesystem.size / 4);
    DEFAULT_MAX_BYTES.min(quarter_of_filesystem).min(memory_share).max(1 << 20)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn raw_db(store: &Store) -> sled::Db {
        store.shared.db().expect("the store is available")
    }

    #[test]
    fn values_persist_across_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path(), 1 << 20).unwrap();
            store.put(GameTag::Tetris, b"component", 7, 100);
            store.flush();
        }
        let store = Store::open(dir.path(), 1 << 20).unwrap();
        assert_eq!(store.get(GameTag::Tetris, b"component"), Some(7));
        assert_eq!(store.get(GameTag::Tetris, b"other"), None);
    }

    #[test]
    fn corrupted_and_unknown_versions_are_misses_and_get_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path(), 1 << 20).unwrap();
            let db = raw_db(&store);
            db.insert(store_key(GameTag::Tetris, b"garbage"), &[1u8, 2, 3][..]).unwrap();
            let key = store_key(GameTag::Tetris, b"future");
            let mut future = encode_value(&key, &Payload::Nimber(5), 1);
            future[0] = 99;
            db.insert(key, future).unwrap();
            let key = store_key(GameTag::Tetris, b"flipped");
            let mut flipped = encode_value(&key, &Payload::Nimber(5), 1);
            flipped[1] ^= 1;
            db.insert(key, flipped).unwrap();
            store.sync().unwrap();
        }
        let store = Store::open(dir.path(), 1 << 20).unwrap();
        for state in [&b"garbage"[..], b"future", b"flipped"] {
            assert_eq!(store.get(GameTag::Tetris, state), None, "{state:?}");
        }
        store.put(GameTag::Tetris, b"garbage", 4, 10);
        store.sync().unwrap();
        let key = store_key(GameTag::Tetris, b"garbage");
        let raw = raw_db(&store).get(&key).unwrap().unwrap();
        assert_eq!(decode_value(&key, &raw), Some(Stored { value: Payload::Nimber(4), cost: Some(10) }));
    }

    /// A value is readable from the moment it is put: while it waits, while the writer thread
    /// writes its batch, and after. (Bytes are not kept in the in-memory tier, so between the
    /// writer taking a batch and sled holding it they were once in neither place.)
    #[test]
    fn bytes_are_readable_while_their_batch_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), 1 << 20).unwrap();
        for i in 0..(20 * WRITE_BATCH as u64) {
            let state = i.to_le_bytes();
            store.put_bytes(GameTag::Heaps, &state, vec![1, 2, 3], 1);
            assert_eq!(store.get_bytes(GameTag::Heaps, &state), Some(vec![1, 2, 3]), "value {i}");
            let earlier = (i / 2).to_le_bytes();
            assert_eq!(store.get_bytes(GameTag::Heaps, &earlier), Some(vec![1, 2, 3]), "value {}", i / 2);
        }
    }

    /// The in-memory tier is bounded in bytes, keys' lengths included: long keys fit fewer values.
    #[test]
    fn in_memory_tier_stays_within_its_bytes() {
        let bound = 10 * (HOT_ENTRY_OVERHEAD + 9);
        let store = Store::temporary(bound);
        let state = |i: u64, length: usize| [i.to_le_bytes().as_slice(), &vec![7; length]].concat();
        for (length, most_values) in [(0, 10), (200, 3)] {
            for i in 0..100u64 {
                store.put(GameTag::Tetris, &state(i, length), i, 1);
                let hot = store.shared.hot.values.as_ref().expect("a tier is kept");
                let counted: u64 = hot.iter().map(|(key, _)| key.len() as u64 + HOT_ENTRY_OVERHEAD).sum();
                assert!(hot.weight() == counted && counted <= bound, "{} bytes, {counted} counted", hot.weight());
                // Once the round's keys have replaced the last round's, long keys fit fewer values.
                if i >= 10 {
                    assert!(hot.len() <= most_values, "{} values, {} bytes", hot.len(), hot.weight());
                }
            }
            for i in 0..100u64 {
                assert_eq!(store.get(GameTag::Tetris, &state(i, length)), Some(i));
            }
        }
        let nothing = Store::temporary(0);
        nothing.put(GameTag::Tetris, b"key", 1, 1);
        assert!(nothing.shared.hot.values.is_none());
    }

    /// Past its bound the tier evicts a value or so at a time: it never empties at once, which
    /// gave throughput cliffs.
    #[test]
    fn in_memory_tier_evicts_gradually() {
        let bound = 1000 * (HOT_ENTRY_OVERHEAD + 8);
        let store = Store::temporary(bound);
        let hot = store.shared.hot.values.as_ref().expect("a tier is kept");
        for i in 0..5000u64 {
            store.put(GameTag::Tetris, &i.to_le_bytes(), i, 1);
            if i >= 1000 {
                assert!(hot.len() >= 500, "{} values after {i} puts", hot.len());
            }
        }
    }

    /// The default size bound is at most the store's share of the memory limit.
    #[test]
    fn the_default_size_bound_follows_the_memory_share() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(default_max_bytes(dir.path(), 5 << 20), 5 << 20);
        assert!(default_max_bytes(dir.path(), u64::MAX) <= DEFAULT_MAX_BYTES);
        assert_eq!(default_max_bytes(dir.path(), 0), 1 << 20);
        // 80 MiB, of which 64 MiB are shared beyond the process's baseline.
        let budget = crate::limits::share_memory(80 << 20, 1, 1, Some(0), None, DEFAULT_TABLE_LIMIT).unwrap();
        let options = StoreOptions::within(&budget, dir.path());
        assert_eq!(options.max_bytes, Some(2 << 20));
        assert_eq!((options.hot_bytes, options.page_cache_bytes), (budget.store_hot_bytes, 4 << 20));
    }

    /// Counts are kept by the writer thread, persisted with every batch, and right after a reopen;
    /// a put never writes on the caller's thread, and `peek` sees buffered values.
    #[test]
    fn counts_are_kept_incrementally_and_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path(), 1 << 20).unwrap();
            assert_eq!(store.entries(), 0);
            for i in 0..300u64 {
                store.put(GameTag::Tetris, &i.to_le_bytes(), i % 5, i);
            }
            assert_eq!(store.peek(GameTag::Tetris, &7u64.to_le_bytes()), Some(2));
            assert_eq!(store.peek(GameTag::Tetris, b"absent"), None);
            store.sync().unwrap();
            assert_eq!(store.entries(), 300);
            assert!(store.size_on_disk() > 0);
            // Overwrites do not count twice.
            for i in 0..100u64 {
                store.put(GameTag::Tetris, &i.to_le_bytes(), 9, 1);
            }
            store.sync().unwrap();
            assert_eq!(store.entries(), 300);
            assert!(store.writable());
        }
        let store = Store::open(dir.path(), 1 << 20).unwrap();
        assert_eq!(store.entries(), 300);
        assert_eq!(store.get(GameTag::Tetris, &5u64.to_le_bytes()), Some(9));
        assert_eq!(store.evictions(), 0);
    }

    /// A store written before counts were kept (format-1 values, no bookkeeping) is counted and
    /// indexed once at open.
    #[test]
    fn an_old_store_is_counted_once_at_open() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = sled::open(dir.path()).unwrap();
            for i in 0..50u64 {
                let mut value = vec![VALUE_FORMAT_V1];
                value.extend_from_slice(&i.to_le_bytes());
                db.insert(store_key(GameTag::Tetris, &i.to_le_bytes()), value).unwrap();
            }
            db.flush().unwrap();
        }
        let store = Store::open(dir.path(), 1 << 20).unwrap();
        assert_eq!(store.entries(), 50);
        assert_eq!(store.get(GameTag::Tetris, &7u64.to_le_bytes()), Some(7));
        let index = raw_db(&store).scan_prefix(format::INDEX_PREFIX).count();
        assert_eq!(index, 50);
    }

    /// Waits (at most 10 s) until `waiters` askers wait for the computation of `state` in flight.
    fn wait_for_waiters(store: &Store, state: &[u8], waiters: usize) {
        let key = store_key(GameTag::Tetris, state);
        // The flight is held by the in-flight map, by its leader, and by each waiter.
        let waiting = || lock(&store.shared.in_flight).get(&key).map_or(0, |flight| Arc::strong_count(flight) - 2);
        let started = Instant::now();
        while waiting() < waiters {
            assert!(started.elapsed() < Duration::from_secs(10), "{waiters} askers never waited");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn concurrent_askers_of_one_key_compute_it_once() {
        let store = Store::temporary(1 << 20);
        let computed = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    // The first asker computes, and finishes only once the three others wait for it.
                    let mut compute = || {
                        computed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        wait_for_waiters(&store, b"shared", 3);
                        Ok((42, 1))
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
        let store = Store::temporary(1 << 20);
        let (started, computing) = std::sync::mpsc::channel();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                // Gives up only once the second asker waits for it.
                let mut give_up = || {
                    started.send(()).unwrap();
                    wait_for_waiters(&store, b"key", 1);
                    Err(Interrupted::DeadlineExceeded)
                };
                assert!(store.get_or_compute(GameTag::Tetris, b"key", &Budget::unlimited(), &mut give_up).is_err());
            });
            computing.recv().unwrap();
            let (value, found) =
                store.get_or_compute(GameTag::Tetris, b"key", &Budget::unlimited(), &mut || Ok((7, 1))).unwrap();
            assert_eq!((value, found), (7, false));
        });
    }

    #[test]
    fn locked_store_gives_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let _first = Store::open(dir.path(), 1 << 20).unwrap();
        let error = Store::open(dir.path(), 1 << 20).err().expect("a second open fails").to_string();
        assert!(error.contains("cannot open the cache store"), "{error}");
        assert!(error.contains("locked by another running process"), "{error}");
    }

    /// A compaction cut short (a kill while it copied, or after it swapped the directories) leaves
    /// a directory beside the store: it is removed when the store opens, and the store is whole.
    #[test]
    fn a_compaction_cut_short_leaves_the_store_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        {
            let store = Store::open(&path, 1 << 20).unwrap();
            store.put(GameTag::Tetris, b"kept", 3, 10);
            store.sync().unwrap();
        }
        let leftover = writer::compaction_path(&path);
        std::fs::create_dir_all(leftover.join("blobs")).unwrap();
        std::fs::write(leftover.join("db"), b"half a copy").unwrap();
        let store = Store::open(&path, 1 << 20).unwrap();
        assert!(!leftover.exists(), "the leftover is removed");
        assert_eq!(store.get(GameTag::Tetris, b"kept"), Some(3));
    }

    /// At its bound the write buffer makes callers wait for the writer: it never holds more than
    /// the bound, and every value still reaches the disk.
    #[test]
    fn a_full_write_buffer_makes_callers_wait_for_the_writer_and_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let bound = 8 << 10;
        let options = StoreOptions { hot_bytes: 0, write_buffer_bytes: bound, ..StoreOptions::default() };
        let store = Store::open_with(dir.path(), &options).unwrap();
        let key = |i: u64| [i.to_be_bytes(), [3; 8]].concat();
        let mut largest = 0;
        for i in 0..20_000u64 {
            store.put(GameTag::Tetris, &key(i), i % 5, 1 + i % 9);
            largest = largest.max(store.write_buffer_bytes());
        }
        store.sync().unwrap();
        assert!(largest <= bound, "the write buffer held {largest} bytes over a bound of {bound}");
        assert!(store.write_stalls() > 0, "20 000 values never filled a buffer of {bound} bytes");
        assert_eq!(store.unwritten(), 0);
        assert_eq!(store.entries(), 20_000);
        for i in (0..20_000).step_by(97) {
            assert_eq!(store.get(GameTag::Tetris, &key(i)), Some(i % 5), "value {i}");
        }
    }

    /// With a small bound, writing far more than fits: the size on disk levels off near the bound,
    /// values are evicted cheapest first, and the most expensive survive.
    #[test]
    fn the_size_bound_keeps_the_most_expensive_values() {
        let dir = tempfile::tempdir().unwrap();
        let bound = 16 << 20;
        let options = StoreOptions { hot_bytes: 0, max_bytes: Some(bound), ..StoreOptions::default() };
        let store = Store::open_with(dir.path(), &options).unwrap();
        let key = |i: u64| [i.to_be_bytes(), (i * 31).to_le_bytes(), [7; 8]].concat();
        // Every 100th value is expensive; the rest cost next to nothing.
        let cost = |i: u64| if i.is_multiple_of(100) { 1 << 30 } else { i % 50 };
        let mut sizes = Vec::new();
        for round in 0..20u64 {
            for i in round * 20_000..(round + 1) * 20_000 {
                store.put(GameTag::Tetris, &key(i), i % 7, cost(i));
            }
            store.sync().unwrap();
            sizes.push(store.size_on_disk());
        }
        eprintln!("sizes on disk after each 20k values, bound {bound}: {sizes:?}");
        eprintln!("entries {}, evictions {}", store.entries(), store.evictions());
        assert!(store.evictions() > 0 && store.compactions() > 0);
        // The bound is acted on from three quarters of it, after every batch, by compacting the
        // file: it passes three quarters by at most what one batch writes, whatever the machine's load.
        let largest = *sizes.iter().max().unwrap();
        assert!(largest < 2 * bound, "the store grew to {largest} over a bound of {bound}: {sizes:?}");
        assert!(largest <= bound, "the store grew to {largest} over a bound of {bound}: {sizes:?}");
        let late = *sizes[sizes.len() / 2..].iter().max().unwrap();
        assert!(late <= largest, "still growing: {sizes:?}");
        for i in (0..400_000).step_by(100) {
            assert_eq!(store.get(GameTag::Tetris, &key(i)), Some(i % 7), "expensive value {i} was evicted");
        }
    }
}
