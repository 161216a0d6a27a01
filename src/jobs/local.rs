//! The job store of one replica: a sled database of its own (`--jobs-dir`).
//!
//! Job records are not a cache, yet a damaged or full job store never stops the service:
//! - **Damage.** At open every record, request id and table row is read. An unreadable store is
//!   moved aside to `<dir>.corrupt-<unix seconds>` (kept for recovery; one ERROR line names both;
//!   `nimber_jobs_store_moved_aside_total` counts it) after the readable records and rows have been
//!   read out of it, and these are written into the empty store that takes its place. With
//!   `--on-corrupt-jobs=fail` the server refuses to start instead.
//! - **Full disk.** A write that finds the disk full (or sled unable to write) closes sled: the
//!   store is *unavailable*, every job call answers UNAVAILABLE with the reason, running jobs stop
//!   where they are (their finished rows are kept), and [`JobStore::reopen`], called about once a
//!   second, opens it again once space returns; the runner then queues the unfinished jobs again.
//!   A server that starts on a full disk starts the same way. `nimber_jobs_store_writable` says
//!   which state it is in.
//! - **Size.** What the store holds (the bytes of its keys and values) is counted at open and kept
//!   up to date; past `--max-jobs-store-bytes` the tables of the oldest finished jobs are deleted
//!   (their records stay, saying so), and while it stays past the bound new jobs are refused
//!   (RESOURCE_EXHAUSTED). A running job's table is never deleted.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use prost::Message;

use super::{
    decode_record, decode_row, request_id, JobRecord, JobRecords, Put, Rows, StoreCondition, StoreError, StoreResult,
};
use crate::disk::{self, guarded, Failure, OnCorrupt, OpenError, Opening};
use crate::proto;
use crate::sync::{lock, read, write, RateLimit};

/// How the job store is named in messages about opening it.
const JOB_STORE: disk::Described = disk::Described {
    store: "job store",
    on_corrupt_flag: "--on-corrupt-jobs",
    loss: "it holds the job records, and its readable records are recovered when it is moved aside",
};

/// How the local job store is configured.
#[derive(Clone, Copy, Debug)]
pub struct JobStoreOptions {
    /// sled's page cache, from the memory limit's share ([`crate::limits::MemoryBudget`]).
    pub page_cache_bytes: u64,
    /// What to do with a store that cannot be read (`--on-corrupt-jobs`).
    pub on_corrupt: OnCorrupt,
    /// The most bytes of keys and values it holds (`--max-jobs-store-bytes`).
    pub max_bytes: u64,
}

impl Default for JobStoreOptions {
    fn default() -> Self {
        Self { page_cache_bytes: 4 << 20, on_corrupt: OnCorrupt::Rebuild, max_bytes: u64::MAX }
    }
}

/// An open database and its trees.
#[derive(Clone)]
struct Opened {
    db: sled::Db,
    records: sled::Tree,
    request_ids: sled::Tree,
}

/// The job store of one replica.
pub struct JobStore {
    /// Its directory (none for a temporary store, which is never reopened).
    path: Option<PathBuf>,
    options: JobStoreOptions,
    /// The open database; none while unavailable.
    opened: RwLock<Option<Opened>>,
    /// Why it is unavailable (meaningful while `opened` is none).
    unavailable: Mutex<String>,
    /// The bytes of keys and values held.
    bytes: AtomicU64,
    /// How many times an unreadable store was moved aside since the start.
    moved_aside: AtomicU64,
    /// Set when a store past its bound could not be brought back within it (no finished table left).
    full: AtomicBool,
    /// Failures to reopen are logged at most once a minute.
    reopen_warnings: RateLimit,
}

/// What could be read out of an unreadable store before it was moved aside: every tree's entries
/// up to the first that could not be read.
#[derive(Default)]
struct Salvaged {
    trees: Vec<(sled::IVec, Vec<(sled::IVec, sled::IVec)>)>,
}

impl Salvaged {
    /// Reads what sled lets it read from the store in `path` (nothing if it does not open).
    fn read(path: &Path) -> Self {
        let mut salvaged = Salvaged::default();
        let _ = guarded(|| {
            let db = sled::Config::new().path(path).open()?;
            for name in db.tree_names() {
                let tree = db.open_tree(&name)?;
                let entries: Vec<_> = tree.iter().map_while(Result::ok).collect();
                salvaged.trees.push((name, entries));
            }
            Ok(())
        });
        salvaged
    }

    /// Writes what was read into `opened`; returns how many records and rows it wrote.
    fn write_into(self, opened: &Opened) -> Result<(usize, usize), Failure> {
        guarded(|| {
            let (mut records, mut rows) = (0, 0);
            for (name, entries) in self.trees {
                let tree = match &*name {
                    b"records" => {
                        records += entries.len();
                        opened.records.clone()
                    }
                    b"request_ids" => opened.request_ids.clone(),
                    other if other.starts_with(ITEMS_PREFIX.as_bytes()) => {
                        rows += entries.len();
                        opened.db.open_tree(other)?
                    }
                    _ => continue,
                };
                let mut batch = sled::Batch::default();
                for (key, value) in entries {
                    batch.insert(key, value);
                }
                tree.apply_batch(batch)?;
            }
            opened.db.flush()?;
            Ok((records, rows))
        })
    }
}

/// The prefix of the tree of a job's finished items (its table rows): `items/` and its name.
const ITEMS_PREFIX: &str = "items/";

fn items_tree_name(name: &str) -> String {
    format!("{ITEMS_PREFIX}{name}")
}

/// Deletes the table of job `name`; returns the bytes of keys and values it held.
fn drop_table(opened: &Opened, name: &str) -> sled::Result<usize> {
    let table = opened.db.open_tree(items_tree_name(name))?;
    let held = table.iter().map_while(Result::ok).map(|(key, value)| key.len() + value.len()).sum();
    opened.db.drop_tree(items_tree_name(name))?;
    Ok(held)
}

/// The least free space the store is opened with: two of sled's 512 KiB segments.
const MIN_FREE_BYTES: u64 = 1 << 20;

/// The key of the default tree that every job store holds from its creation on: a store whose
/// `db` file exists but that lacks it was damaged where sled's recovery stops reading (sled then
/// opens it as if empty).
const MARKER_KEY: &[u8] = b"\0nimber/job-store";

/// Opens sled in `path` and reads everything in it (which also counts its bytes), so that damage
/// anywhere is found now rather than by a call.
fn open_and_read(path: &Path, page_cache_bytes: u64) -> Result<(Opened, u64), Failure> {
    let existed = std::fs::metadata(path.join("db")).is_ok_and(|db| db.len() > 0);
    let db = disk::open_sled(path, page_cache_bytes)?;
    let opened = guarded(|| {
        let records = db.open_tree("records")?;
        let request_ids = db.open_tree("request_ids")?;
        Ok(Opened { db, records, request_ids })
    })?;
    let marked = guarded(|| opened.db.contains_key(MARKER_KEY))?;
    // Stores of earlier versions have no marker, but they have records (or nothing to lose).
    if existed && !marked && guarded(|| Ok(opened.records.is_empty()))? {
        return Err(Failure::Damaged("its files hold no job store (sled read none of it)".into()));
    }
    if !marked {
        guarded(|| {
            opened.db.insert(MARKER_KEY, &[])?;
            opened.db.flush()
        })?;
    }
    let mut held = read_everything(&opened)?;
    rerun_damaged_tables(&opened, &mut held)?;
    Ok((opened, held.bytes))
}

/// What the job store holds, read entry by entry (so that damage anywhere is found at open).
struct Held {
    /// The bytes of the keys and values of its records, request ids and tables.
    bytes: u64,
    /// The rows of each table, by tree name.
    rows: std::collections::HashMap<sled::IVec, u64>,
}

/// Reads every record, request id and table row of the job store once.
fn read_everything(opened: &Opened) -> Result<Held, Failure> {
    guarded(|| {
        let mut held = Held { bytes: 0, rows: Default::default() };
        for name in opened.db.tree_names() {
            let is_table = name.starts_with(ITEMS_PREFIX.as_bytes());
            if !(is_table || name == opened.records.name() || name == opened.request_ids.name()) {
                continue;
            }
            let mut entries = 0;
            for entry in opened.db.open_tree(&name)?.iter() {
                let (key, value) = entry?;
                held.bytes += (key.len() + value.len()) as u64;
                entries += 1;
            }
            if is_table {
                held.rows.insert(name, entries);
            }
        }
        Ok(held)
    })
}

/// Sends back to the queue every succeeded job whose table lost rows (sled's recovery can drop a
/// damaged stretch of its log): its record is the same request with no result, so the runner runs
/// it again, recomputing only the rows that are gone (the same rows: the engine is exact). Keeps
/// `held.bytes` up to date with the records it rewrites.
fn rerun_damaged_tables(opened: &Opened, held: &mut Held) -> Result<(), Failure> {
    guarded(|| {
        for entry in opened.records.iter() {
            let (key, bytes) = entry?;
            let name = String::from_utf8_lossy(&key).into_owned();
            let Some(mut record) = decode_record(&name, &bytes) else { continue };
            let total = record.result.as_ref().map_or(0, |result| result.total_rows);
            if record.state() != proto::ExploreState::Succeeded || record.table_deleted || total == 0 {
                continue;
            }
            let rows = held.rows.get(items_tree_name(&name).as_bytes()).copied().unwrap_or(0);
            if rows != total {
                tracing::warn!(
                    name,
                    rows,
                    total,
                    "a finished job's table lost rows in the job store; it runs again to recompute them"
                );
                record.result = None;
                let progress = record.progress_mut();
                progress.set_state(proto::ExploreState::Queued);
                progress.end_time = None;
                let rewritten = record.encode_to_vec();
                held.bytes = held.bytes - bytes.len() as u64 + rewritten.len() as u64;
                opened.records.insert(key, rewritten)?;
            }
        }
        Ok(())
    })
}

impl JobStore {
    /// Writes rows `first..` of job `name`'s table, counting their bytes.
    fn insert_rows(&self, name: &str, first: u64, rows: &[proto::ExploreRow]) -> StoreResult<()> {
        self.with(|opened| {
            let table = opened.db.open_tree(items_tree_name(name))?;
            for (index, row) in (first..).zip(rows) {
                let value = row.encode_to_vec();
                let old = table.insert(index.to_be_bytes(), value.as_slice())?;
                self.count_in(8 + value.len());
                self.count_out(old.map_or(0, |old| 8 + old.len()));
            }
            Ok(())
        })
    }

    /// Opens (or creates) the job store in directory `path`: an unreadable one is moved aside (its
    /// readable records recovered) or refused, per `options.on_corrupt`; on a full disk the store
    /// starts unavailable (one ERROR line) and [`JobStore::reopen`] opens it once space returns.
    /// Other failures (a lock held by another process, permissions) are an error.
    pub fn open(path: &Path, options: JobStoreOptions) -> Result<Self, OpenError> {
        let store = Self::unopened(Some(path.to_path_buf()), options);
        if !store.try_open()? {
            store.lose("the disk is full");
        }
        Ok(store)
    }

    /// A job store in memory only (for tests).
    pub fn temporary() -> Self {
        let store = Self::unopened(None, JobStoreOptions::default());
        let db = sled::Config::new().temporary(true).open().expect("a temporary sled database opens");
        let opened = Opened {
            records: db.open_tree("records").expect("a tree of a temporary database"),
            request_ids: db.open_tree("request_ids").expect("a tree of a temporary database"),
            db,
        };
        *write(&store.opened) = Some(opened);
        store
    }

    fn unopened(path: Option<PathBuf>, options: JobStoreOptions) -> Self {
        Self {
            path,
            options,
            opened: RwLock::new(None),
            unavailable: Mutex::new(String::new()),
            bytes: AtomicU64::new(0),
            moved_aside: AtomicU64::new(0),
            full: AtomicBool::new(false),
            reopen_warnings: RateLimit::new(),
        }
    }

    /// Opens the store in its directory, moving an unreadable one aside; false on a full disk. A
    /// disk with less than [`MIN_FREE_BYTES`] free counts as full without trying: sled 0.34 writes
    /// as it opens, and a write cut short there leaves a store it cannot read afterwards.
    fn try_open(&self) -> Result<bool, OpenError> {
        let Some(path) = &self.path else { return Ok(true) };
        if disk::filesystem(path).is_some_and(|filesystem| filesystem.available < MIN_FREE_BYTES) {
            return Ok(false);
        }
        let mut salvaged = None;
        let open = |path: &Path| open_and_read(path, self.options.page_cache_bytes);
        let opening = disk::open_or_move_aside(path, self.options.on_corrupt, JOB_STORE, open, |path| {
            salvaged = Some(Salvaged::read(path))
        })?;
        let Opening::Opened((opened, bytes), aside) = opening else { return Ok(false) };
        self.bytes.store(bytes, Ordering::Relaxed);
        if let (Some(aside), Some(salvaged)) = (aside, salvaged) {
            self.moved_aside.fetch_add(1, Ordering::Relaxed);
            match salvaged.write_into(&opened) {
                Ok((records, rows)) => tracing::info!(
                    dir = %path.display(),
                    moved_to = %aside.display(),
                    records,
                    rows,
                    "recovered the readable job records and table rows of the unreadable job store"
                ),
                Err(failure) => tracing::warn!(%failure, "could not write the recovered job records"),
            }
            self.bytes.store(read_everything(&opened).map_or(bytes, |held| held.bytes), Ordering::Relaxed);
        }
        *write(&self.opened) = Some(opened);
        lock(&self.unavailable).clear();
        Ok(true)
    }

    /// The open database, or why there is none.
    fn opened(&self) -> StoreResult<Opened> {
        match &*read(&self.opened) {
            Some(opened) => Ok(opened.clone()),
            None => Err(StoreError::Unavailable(lock(&self.unavailable).clone())),
        }
    }

    /// Runs `operation` on the open database. A write that fails for want of space (or because
    /// sled cannot write any more) makes the store unavailable until [`JobStore::reopen`].
    fn with<T>(&self, operation: impl FnOnce(&Opened) -> sled::Result<T>) -> StoreResult<T> {
        let opened = self.opened()?;
        guarded(|| operation(&opened)).map_err(|failure| {
            // A full disk is one of these; after any, sled 0.34 refuses every later write.
            if matches!(failure, Failure::Sled(sled::Error::Io(_))) {
                self.lose(&format!("it cannot write ({failure})"));
            }
            StoreError::Sled(failure.to_string())
        })
    }

    /// Closes sled, so that every call answers UNAVAILABLE saying `why` until it is reopened.
    fn lose(&self, why: &str) {
        let dir = self.path.as_deref().map(|path| path.display().to_string()).unwrap_or_default();
        let reason = format!(
            "the job store at {dir} is unavailable: {why}; job calls resume by themselves once it can write again"
        );
        write(&self.opened).take();
        let before = std::mem::replace(&mut *lock(&self.unavailable), reason.clone());
        if before != reason {
            tracing::error!("{reason}");
        }
    }

    /// Opens an unavailable store again if it can; true when it just became available.
    pub fn reopen(&self) -> bool {
        if self.path.is_none() || self.writable() {
            return false;
        }
        match self.try_open() {
            Ok(true) => {
                tracing::info!(dir = %self.path.as_deref().unwrap_or(Path::new("")).display(), "the job store is writable again");
                true
            }
            Ok(false) => false,
            Err(error) => {
                if self.reopen_warnings.allow() {
                    tracing::error!(%error, "cannot reopen the job store; retrying (one line a minute)");
                }
                false
            }
        }
    }

    /// Whether the store is open (`nimber_jobs_store_writable`).
    pub fn writable(&self) -> bool {
        read(&self.opened).is_some()
    }

    /// The bytes of keys and values it holds (`nimber_jobs_store_bytes`).
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// How many times an unreadable store was moved aside since the start.
    pub fn moved_aside(&self) -> u64 {
        self.moved_aside.load(Ordering::Relaxed)
    }

    fn count_in(&self, bytes: usize) {
        self.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    fn count_out(&self, bytes: usize) {
        let _ = self
            .bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| Some(held.saturating_sub(bytes as u64)));
    }

    /// Brings the store back within its bound by deleting the tables of the oldest finished jobs
    /// (records list in creation order); their records stay, saying that the table is gone.
    fn keep_within_bound(&self) -> StoreResult<()> {
        let max = self.options.max_bytes;
        if self.bytes() <= max {
            self.full.store(false, Ordering::Relaxed);
            return Ok(());
        }
        let finished: Vec<JobRecord> = self
            .records_after("")
            .filter_map(Result::ok)
            .filter(|record| record.is_done() && !record.table_deleted)
            .collect();
        for mut record in finished {
            if self.bytes() <= max {
                break;
            }
            let freed = self.with(|opened| drop_table(opened, &record.name))?;
            self.count_out(freed);
            record.table_deleted = true;
            self.overwrite(&record)?;
            tracing::info!(
                name = record.name,
                freed,
                "deleted a finished job's table to keep the job store within --max-jobs-store-bytes"
            );
        }
        self.full.store(self.bytes() > max, Ordering::Relaxed);
        Ok(())
    }

    /// Saves `record` over the stored one whatever its state (only for the store's own notes).
    fn overwrite(&self, record: &JobRecord) -> StoreResult<()> {
        let bytes = record.encode_to_vec();
        let old = self.with(|opened| opened.records.insert(record.name.as_bytes(), bytes.as_slice()))?;
        self.count_in(bytes.len());
        self.count_out(old.map_or(0, |old| old.len()));
        Ok(())
    }
}

impl JobRecords for JobStore {
    fn get(&self, name: &str) -> StoreResult<Option<JobRecord>> {
        Ok(self.with(|opened| opened.records.get(name))?.and_then(|bytes| decode_record(name, &bytes)))
    }

    /// A compare-and-swap against the record read: the runner serializes its own transitions, and
    /// this keeps the first end even for a caller that does not. A job's end brings the store
    /// back within its bound.
    fn put(&self, record: &JobRecord) -> StoreResult<Put> {
        let (key, bytes) = (record.name.as_bytes(), record.encode_to_vec());
        let put = self.with(|opened| loop {
            let Some(stored) = opened.records.get(key)? else { return Ok((Put::Gone, 0)) };
            if decode_record(&record.name, &stored).is_some_and(|stored| stored.is_done()) {
                return Ok((Put::Ended, 0));
            }
            if opened.records.compare_and_swap(key, Some(&stored), Some(bytes.as_slice()))?.is_ok() {
                return Ok((Put::Saved, stored.len()));
            }
        })?;
        if put.0 == Put::Saved {
            self.count_in(bytes.len());
            self.count_out(put.1);
            if record.is_done() {
                self.keep_within_bound()?;
            }
        }
        Ok(put.0)
    }

    fn name_for_request_id(&self, request_id: &str) -> StoreResult<Option<String>> {
        Ok(self
            .with(|opened| opened.request_ids.get(request_id))?
            .map(|name| String::from_utf8_lossy(&name).into_owned()))
    }

    /// One sled transaction over the records and the request ids. Refused while the store is past
    /// its bound and no finished table is left to delete.
    fn create(&self, record: &JobRecord) -> StoreResult<Option<JobRecord>> {
        use sled::transaction::{abort, TransactionError};
        use sled::Transactional;
        if self.full.load(Ordering::Relaxed) {
            self.keep_within_bound()?;
            if self.full.load(Ordering::Relaxed) {
                return Err(StoreError::Full(format!(
                    "the job store holds {} bytes, past its bound (--max-jobs-store-bytes) of {}, and only running jobs' \
                     tables are left; delete operations or wait for running jobs to end",
                    self.bytes(),
                    self.options.max_bytes
                )));
            }
        }
        let (name, bytes, request_id) = (record.name.as_bytes(), record.encode_to_vec(), request_id(record));
        let created = self.with(|opened| {
            let created = (&opened.records, &opened.request_ids).transaction(|(records, request_ids)| {
                if !request_id.is_empty() {
                    if let Some(existing) = request_ids.get(request_id)? {
                        let existing_name = String::from_utf8_lossy(&existing).into_owned();
                        if let Some(stored) =
                            records.get(&existing)?.and_then(|bytes| decode_record(&existing_name, &bytes))
                        {
                            return Ok(Some(stored));
                        }
                    }
                }
                if records.get(name)?.is_some() {
                    return abort(());
                }
                records.insert(name, bytes.as_slice())?;
                if !request_id.is_empty() {
                    request_ids.insert(request_id, name)?;
                }
                Ok(None)
            });
            let created = match created {
                Ok(existing) => Ok(existing),
                Err(TransactionError::Abort(())) => Err(()),
                Err(TransactionError::Storage(error)) => return Err(error),
            };
            opened.db.flush()?;
            Ok(created)
        })?;
        let existing = created.map_err(|()| StoreError::NameTaken(record.name.clone()))?;
        if existing.is_none() {
            self.count_in(name.len() + bytes.len() + 2 * request_id.len());
        }
        Ok(existing)
    }

    fn delete(&self, record: &JobRecord) -> StoreResult<()> {
        let request_id = request_id(record);
        let freed = self.with(|opened| {
            let mut freed = 0;
            if !request_id.is_empty() {
                freed += opened.request_ids.remove(request_id)?.map_or(0, |name| name.len() + request_id.len());
            }
            freed += drop_table(opened, &record.name)?;
            freed += opened.records.remove(record.name.as_bytes())?.map_or(0, |old| old.len() + record.name.len());
            Ok(freed)
        })?;
        self.count_out(freed);
        Ok(())
    }

    fn records_after<'a>(&'a self, after: &str) -> Box<dyn Iterator<Item = StoreResult<JobRecord>> + 'a> {
        let opened = match self.opened() {
            Ok(opened) => opened,
            Err(error) => return Box::new(std::iter::once(Err(error))),
        };
        let start = std::ops::Bound::Excluded(after.as_bytes().to_vec());
        let range = if after.is_empty() {
            opened.records.range::<Vec<u8>, _>(..)
        } else {
            opened.records.range((start, std::ops::Bound::Unbounded))
        };
        Box::new(range.filter_map(|entry| match entry {
            Ok((name, bytes)) => decode_record(&String::from_utf8_lossy(&name), &bytes).map(Ok),
            Err(error) => Some(Err(StoreError::Sled(error.to_string()))),
        }))
    }

    fn finished_items(&self, name: &str) -> StoreResult<std::collections::HashSet<u64>> {
        self.with(|opened| {
            let mut indexes = std::collections::HashSet::new();
            for key in opened.db.open_tree(items_tree_name(name))?.iter().keys() {
                indexes.extend(key?.as_ref().try_into().ok().map(u64::from_be_bytes));
            }
            Ok(indexes)
        })
    }

    fn put_item(&self, name: &str, index: u64, row: &proto::ExploreRow) -> StoreResult<bool> {
        self.put_items(name, index, std::slice::from_ref(row))
    }

    fn put_items(&self, name: &str, first: u64, rows: &[proto::ExploreRow]) -> StoreResult<bool> {
        let unfinished = self.get(name)?.is_some_and(|record| !record.is_done());
        if unfinished {
            self.insert_rows(name, first, rows)?;
        }
        Ok(unfinished)
    }

    fn repair_item(&self, name: &str, index: u64, row: &proto::ExploreRow) -> StoreResult<bool> {
        let exists = self.get(name)?.is_some();
        if exists {
            self.insert_rows(name, index, std::slice::from_ref(row))?;
        }
        Ok(exists)
    }

    fn rows(&self, name: &str, start: u64, limit: usize, max_bytes: usize) -> StoreResult<Rows> {
        self.with(|opened| {
            let (mut rows, mut taken) = (Vec::new(), 0);
            let table = opened.db.open_tree(items_tree_name(name))?;
            for (entry, expected) in table.range(start.to_be_bytes()..).take(limit).zip(start..) {
                let (index, bytes) = entry?;
                let row = (index.as_ref() == expected.to_be_bytes()).then(|| decode_row(name, &bytes)).flatten();
                let Some(row) = row else { return Ok(Rows { rows, hole: true }) };
                taken += bytes.len();
                if taken > max_bytes && !rows.is_empty() {
                    return Ok(Rows { rows, hole: false });
                }
                rows.push(row);
            }
            // Fewer rows than asked for: the next one is missing.
            let hole = rows.len() < limit;
            Ok(Rows { rows, hole })
        })
    }

    fn flush(&self) -> StoreResult<()> {
        self.with(|opened| opened.db.flush())?;
        Ok(())
    }

    fn condition(&self) -> StoreCondition {
        StoreCondition {
            writable: self.writable(),
            bytes: self.bytes(),
            moved_aside: self.moved_aside(),
            ..StoreCondition::default()
        }
    }

    fn reopen(&self) -> bool {
        JobStore::reopen(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_that_ended_is_never_overwritten_by_a_later_end_in_the_local_store() {
        crate::testing::check_first_end_wins(&JobStore::temporary());
    }

    #[test]
    fn rows_are_read_in_order_within_their_count_and_bytes_from_the_local_store() {
        crate::testing::check_rows_are_bounded(&JobStore::temporary());
    }

    /// The bytes held are counted as records and rows come and go, and agree with a count from
    /// scratch at open.
    #[test]
    fn the_bytes_held_are_kept_as_a_recount_finds_them() {
        let temp = tempfile::tempdir().unwrap();
        let options = JobStoreOptions::default();
        let store = JobStore::open(temp.path(), options).unwrap();
        let mut record = JobRecord { name: super::super::new_name(), ..Default::default() };
        record.progress_mut().set_state(proto::ExploreState::Running);
        store.create(&record).unwrap();
        for index in 0..50 {
            assert!(store
                .put_item(&record.name, index, &proto::ExploreRow { grundy: Some(index), ..Default::default() })
                .unwrap());
        }
        record.progress_mut().items_done = 50;
        assert_eq!(store.put(&record).unwrap(), Put::Saved);
        let counted = store.bytes();
        drop(store);
        let store = JobStore::open(temp.path(), options).unwrap();
        assert_eq!(store.bytes(), counted);
        store.delete(&record).unwrap();
        assert_eq!(store.bytes(), 0);
    }
}
