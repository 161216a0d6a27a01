//! Long-running analysis jobs as google.longrunning operations (AIP-151).
//!
//! A job is a validated [`family::Job`]; its record (request, progress, result or error) lives in
//! its own sled database (`--jobs-dir`), separate from the memo store, which may be moved aside
//! and rebuilt; with `--jobs-redis` (or `--shared-cache`) it lives in Redis instead, shared by the
//! fleet ([`shared::RedisJobs`]). Names are UUIDv7s ([`new_name`]), never given twice. Every finished item of a family is recorded there too, so a resumed job recomputes
//! nothing it had finished; finished board components come back through the memo. The
//! [`runner::Runner`] runs jobs on its own threads; [`operations`] serves them over gRPC.

pub mod family;
pub mod operations;
pub mod runner;
pub mod shared;

use std::path::Path;
use std::time::SystemTime;

use prost::Message;

use crate::google::rpc::Status;
use crate::proto::{self, ExploreState};

/// The prefix of every operation name.
pub const NAME_PREFIX: &str = "operations/";

/// The type URL of the metadata `Any`.
pub const PROGRESS_TYPE_URL: &str = "type.googleapis.com/nimber.v1.ExploreProgress";
/// The type URL of the response `Any`.
pub const RESULT_TYPE_URL: &str = "type.googleapis.com/nimber.v1.ExploreResult";

/// Everything remembered about a job, stored prost-encoded under its name.
#[derive(Clone, PartialEq, Message)]
pub struct JobRecord {
    /// The operation name, `operations/` and a UUIDv7 ([`new_name`]).
    #[prost(string, tag = "1")]
    pub name: String,
    /// The request as accepted.
    #[prost(message, optional, tag = "2")]
    pub request: Option<proto::ExploreRequest>,
    /// The progress as last saved (the runner overlays live counters while the job runs).
    #[prost(message, optional, tag = "3")]
    pub progress: Option<proto::ExploreProgress>,
    /// The result, once the job succeeded.
    #[prost(message, optional, tag = "4")]
    pub result: Option<proto::ExploreResult>,
    /// Why the job failed or that it was cancelled.
    #[prost(message, optional, tag = "5")]
    pub error: Option<Status>,
}

impl JobRecord {
    /// The job's state.
    pub fn state(&self) -> ExploreState {
        self.progress.as_ref().map_or(ExploreState::Unspecified, |progress| progress.state())
    }

    /// Whether the job has ended (succeeded, failed or cancelled).
    pub fn is_done(&self) -> bool {
        is_final(self.state())
    }

    /// The progress, created empty when missing.
    pub fn progress_mut(&mut self) -> &mut proto::ExploreProgress {
        self.progress.get_or_insert_with(Default::default)
    }

    /// Ends the job in `state` with `error` (none for success), stamping its end time.
    pub fn finish(&mut self, state: ExploreState, error: Option<Status>) {
        let progress = self.progress_mut();
        progress.set_state(state);
        progress.end_time = Some(SystemTime::now().into());
        progress.eta = None;
        self.error = error;
    }

    /// The operation clients see.
    pub fn operation(&self) -> crate::google::longrunning::Operation {
        use crate::google::longrunning::operation::Result as OperationResult;
        let done = self.is_done();
        let result = match (&self.error, &self.result) {
            _ if !done => None,
            (Some(error), _) => Some(OperationResult::Error(error.clone())),
            (None, Some(result)) => Some(OperationResult::Response(prost_types::Any {
                type_url: RESULT_TYPE_URL.into(),
                value: result.encode_to_vec(),
            })),
            (None, None) => None,
        };
        crate::google::longrunning::Operation {
            name: self.name.clone(),
            metadata: Some(prost_types::Any {
                type_url: PROGRESS_TYPE_URL.into(),
                value: self.progress.unwrap_or_default().encode_to_vec(),
            }),
            done,
            result,
        }
    }
}

/// A fresh operation name: `operations/` and a UUIDv7 in its hyphenated form, 48 bits of the Unix
/// time in milliseconds then 74 random bits. Nothing is counted, so no store can lose the count: a
/// name is never given twice, across replicas and after Redis loses keys; and names made later
/// sort after (in this process always, across replicas as far as their clocks agree), so names
/// list in creation order. The stores refuse to create a record whose name is taken anyway.
pub fn new_name() -> String {
    format!("{NAME_PREFIX}{}", uuid::Uuid::now_v7().hyphenated())
}

/// Whether `name` has the form of an operation name: a UUIDv7 as [`new_name`] writes it, or the 16
/// hex digits of the names of earlier versions (still in job stores kept across an upgrade; they
/// sort before the new ones).
pub fn is_name(name: &str) -> bool {
    name.strip_prefix(NAME_PREFIX).is_some_and(|id| {
        let legacy = id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit());
        let uuid = uuid::Uuid::try_parse(id).is_ok_and(|uuid| {
            uuid.get_version() == Some(uuid::Version::SortRand) && uuid.hyphenated().to_string() == id
        });
        legacy || uuid
    })
}

/// Whether `state` is one a job ends in.
pub fn is_final(state: ExploreState) -> bool {
    matches!(state, ExploreState::Succeeded | ExploreState::Failed | ExploreState::Cancelled)
}

/// A `google.rpc.Status` with no details.
pub fn status(code: tonic::Code, message: impl Into<String>) -> Status {
    Status { code: code as i32, message: message.into(), details: Vec::new() }
}

/// Why the job store failed: sled (the default) or Redis (with `--jobs-redis` or `--shared-cache`).
#[derive(Debug)]
pub enum StoreError {
    /// The local sled job store failed.
    Sled(sled::Error),
    /// Redis failed or did not answer in time (the kind of error, never the URL).
    Redis(String),
    /// A new record's name is taken already (never, with [`new_name`]'s names): nothing was created.
    NameTaken(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Sled(error) => write!(formatter, "{error}"),
            StoreError::Redis(error) => write!(formatter, "the shared job store (Redis) failed: {error}"),
            StoreError::NameTaken(name) => write!(formatter, "operation name {name} is taken; nothing was created"),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<sled::Error> for StoreError {
    fn from(error: sled::Error) -> Self {
        StoreError::Sled(error)
    }
}

impl From<redis::RedisError> for StoreError {
    fn from(error: redis::RedisError) -> Self {
        StoreError::Redis(crate::cache::shared::describe(&error))
    }
}

/// A failed call of the job store.
pub type StoreResult<T> = Result<T, StoreError>;

/// What [`JobRecords::put`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Put {
    /// The record was saved.
    Saved,
    /// Nothing was saved: the stored record has ended (the first end wins).
    Ended,
    /// Nothing was saved: the job has no record any more (deleted, or lost by the store, as by a
    /// flushed or evicting Redis). Its run must stop: nothing of it is written again.
    Gone,
}

/// The durable job list: records by name, request ids, finished family items, and (when shared
/// by a fleet) who runs which job. Every call is blocking I/O: call from a blocking thread.
pub trait JobRecords: Send + Sync {
    /// The record of `name`, if there is one (a record that does not decode counts as missing, and
    /// is logged).
    fn get(&self, name: &str) -> StoreResult<Option<JobRecord>>;

    /// Saves `record` over the stored one, unless that has ended (succeeded, failed or cancelled)
    /// or is gone: in one atomic step, so the first end wins and is never overwritten, say a
    /// cancel from another replica by the job's own success a moment later, and a job writes only
    /// its own record, never one made anew. Returns what it did.
    fn put(&self, record: &JobRecord) -> StoreResult<Put>;

    /// The name of the operation created for `request_id`, if any.
    fn name_for_request_id(&self, request_id: &str) -> StoreResult<Option<String>>;

    /// Saves a new `record`, reachable by its request id when it has one, whole or not at all; if
    /// that request id names an operation whose record exists, saves nothing and returns that
    /// record (a request id whose record is gone names nothing: it is taken anew). A name whose
    /// record exists is [`StoreError::NameTaken`].
    fn create(&self, record: &JobRecord) -> StoreResult<Option<JobRecord>>;

    /// Deletes a record, its request id and its items.
    fn delete(&self, record: &JobRecord) -> StoreResult<()>;

    /// Records after `after` (all when empty), in name order.
    fn records_after<'a>(&'a self, after: &str) -> Box<dyn Iterator<Item = StoreResult<JobRecord>> + 'a>;

    /// The indexes of the finished items of job `name`.
    fn finished_items(&self, name: &str) -> StoreResult<std::collections::HashSet<u64>>;

    /// Saves one finished item of job `name` while the job has a record and has not ended; returns
    /// whether it was saved (if not, the job's run must stop).
    fn put_item(&self, name: &str, index: u64, row: &proto::ExploreRow) -> StoreResult<bool>;

    /// At most `limit` recorded rows of job `name`, from row `start` on, in order. A row that does
    /// not decode is skipped (and logged).
    fn rows(&self, name: &str, start: u64, limit: usize) -> StoreResult<Vec<proto::ExploreRow>>;

    /// Writes everything to durable storage.
    fn flush(&self) -> StoreResult<()>;

    /// Whether other replicas use these records too: then a job runs only under a lease
    /// ([`JobRecords::claim`]), and unfinished jobs nobody holds are looked for periodically.
    fn is_shared(&self) -> bool {
        false
    }

    /// Takes the lease of running job `name`: false if another replica holds it.
    fn claim(&self, _name: &str) -> StoreResult<bool> {
        Ok(true)
    }

    /// Gives the lease of job `name` back (its run ended or stopped).
    fn release(&self, _name: &str) {}

    /// Renews every lease this replica holds (called about once a second).
    fn renew(&self) {}

    /// The unfinished jobs whose lease nobody holds (their replica died or stopped).
    fn unclaimed(&self) -> StoreResult<Vec<String>> {
        Ok(Vec::new())
    }
}

/// The page cache of the job store's sled: its records are few and small (see
/// [`crate::limits::share_memory`] for the memory it comes out of).
const JOB_STORE_PAGE_CACHE_BYTES: u64 = 16 << 20;

/// The job store of one replica: a sled database of its own (`--jobs-dir`).
pub struct JobStore {
    db: sled::Db,
    records: sled::Tree,
    request_ids: sled::Tree,
}

impl JobStore {
    /// Opens (or creates) the job store in directory `path`.
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let db = sled::Config::new().path(path).cache_capacity(JOB_STORE_PAGE_CACHE_BYTES).open().map_err(|error| {
            anyhow::anyhow!("cannot open the job store at {}: {error} (is another nimber using it?)", path.display())
        })?;
        Self::over(db)
    }

    /// A job store in memory only (for tests).
    pub fn temporary() -> anyhow::Result<Self> {
        Self::over(sled::Config::new().temporary(true).open()?)
    }

    fn over(db: sled::Db) -> anyhow::Result<Self> {
        let records = db.open_tree("records")?;
        let request_ids = db.open_tree("request_ids")?;
        Ok(Self { db, records, request_ids })
    }

    fn items(&self, name: &str) -> StoreResult<sled::Tree> {
        Ok(self.db.open_tree(items_tree_name(name))?)
    }
}

impl JobRecords for JobStore {
    fn get(&self, name: &str) -> StoreResult<Option<JobRecord>> {
        Ok(self.records.get(name)?.and_then(|bytes| decode_record(name, &bytes)))
    }

    /// A compare-and-swap against the record read: the runner serializes its own transitions, and
    /// this keeps the first end even for a caller that does not.
    fn put(&self, record: &JobRecord) -> StoreResult<Put> {
        let (key, bytes) = (record.name.as_bytes(), record.encode_to_vec());
        loop {
            let Some(stored) = self.records.get(key)? else { return Ok(Put::Gone) };
            if decode_record(&record.name, &stored).is_some_and(|stored| stored.is_done()) {
                return Ok(Put::Ended);
            }
            if self.records.compare_and_swap(key, Some(stored), Some(bytes.as_slice()))?.is_ok() {
                return Ok(Put::Saved);
            }
        }
    }

    fn name_for_request_id(&self, request_id: &str) -> StoreResult<Option<String>> {
        Ok(self.request_ids.get(request_id)?.map(|name| String::from_utf8_lossy(&name).into_owned()))
    }

    /// One sled transaction over the records and the request ids.
    fn create(&self, record: &JobRecord) -> StoreResult<Option<JobRecord>> {
        use sled::transaction::{abort, TransactionError};
        use sled::Transactional;
        let (name, bytes, request_id) = (record.name.as_bytes(), record.encode_to_vec(), request_id(record));
        let created = (&self.records, &self.request_ids).transaction(|(records, request_ids)| {
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
        let existing = match created {
            Ok(existing) => existing,
            Err(TransactionError::Abort(())) => return Err(StoreError::NameTaken(record.name.clone())),
            Err(TransactionError::Storage(error)) => return Err(error.into()),
        };
        self.db.flush()?;
        Ok(existing)
    }

    fn delete(&self, record: &JobRecord) -> StoreResult<()> {
        let request_id = request_id(record);
        if !request_id.is_empty() {
            self.request_ids.remove(request_id)?;
        }
        self.db.drop_tree(items_tree_name(&record.name))?;
        self.records.remove(record.name.as_bytes())?;
        Ok(())
    }

    fn records_after<'a>(&'a self, after: &str) -> Box<dyn Iterator<Item = StoreResult<JobRecord>> + 'a> {
        let start = std::ops::Bound::Excluded(after.as_bytes().to_vec());
        let range = if after.is_empty() {
            self.records.range::<Vec<u8>, _>(..)
        } else {
            self.records.range((start, std::ops::Bound::Unbounded))
        };
        Box::new(range.filter_map(|entry| match entry {
            Ok((name, bytes)) => decode_record(&String::from_utf8_lossy(&name), &bytes).map(Ok),
            Err(error) => Some(Err(error.into())),
        }))
    }

    fn finished_items(&self, name: &str) -> StoreResult<std::collections::HashSet<u64>> {
        let mut indexes = std::collections::HashSet::new();
        for key in self.items(name)?.iter().keys() {
            indexes.extend(key?.as_ref().try_into().ok().map(u64::from_be_bytes));
        }
        Ok(indexes)
    }

    fn put_item(&self, name: &str, index: u64, row: &proto::ExploreRow) -> StoreResult<bool> {
        let unfinished = self.get(name)?.is_some_and(|record| !record.is_done());
        if unfinished {
            self.items(name)?.insert(index.to_be_bytes(), row.encode_to_vec())?;
        }
        Ok(unfinished)
    }

    fn rows(&self, name: &str, start: u64, limit: usize) -> StoreResult<Vec<proto::ExploreRow>> {
        let items = self.items(name)?;
        let mut rows = Vec::new();
        for entry in items.range(start.to_be_bytes()..).take(limit) {
            let (_, bytes) = entry?;
            rows.extend(decode_row(name, &bytes));
        }
        Ok(rows)
    }

    fn flush(&self) -> StoreResult<()> {
        self.db.flush()?;
        Ok(())
    }
}

/// The request id of `record` (empty when it has none).
pub(crate) fn request_id(record: &JobRecord) -> &str {
    record.request.as_ref().map_or("", |request| request.request_id.as_str())
}

pub(crate) fn decode_row(name: &str, bytes: &[u8]) -> Option<proto::ExploreRow> {
    match proto::ExploreRow::decode(bytes) {
        Ok(row) => Some(row),
        Err(error) => {
            tracing::warn!(name, %error, "a job's table row does not decode; skipping it");
            None
        }
    }
}

fn items_tree_name(name: &str) -> String {
    format!("items/{name}")
}

pub(crate) fn decode_record(name: &str, bytes: &[u8]) -> Option<JobRecord> {
    match JobRecord::decode(bytes) {
        Ok(record) => Some(record),
        Err(error) => {
            tracing::warn!(name, %error, "a job record does not decode; ignoring it");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_names_are_recognised() {
        let (first, second) = (new_name(), new_name());
        assert!(is_name(&first) && is_name(&second), "{first} {second}");
        assert!(first < second, "names sort in creation order: {first} {second}");
        assert!(is_name("operations/00000000000000ff"), "the names of earlier versions");
        assert!(!is_name(&first.to_uppercase().replace("OPERATIONS", "operations")), "one spelling per name");
        assert!(!is_name("operations/ff"));
        assert!(!is_name("operations/6ba7b810-9dad-11d1-80b4-00c04fd430c8"), "a UUID of another version");
        assert!(!is_name(&first.replace("operations/", "jobs/")));
    }

    #[test]
    fn a_job_that_ended_is_never_overwritten_by_a_later_end_in_the_local_store() {
        crate::testing::check_first_end_wins(&JobStore::temporary().unwrap());
    }
}
