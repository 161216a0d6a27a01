//! Long-running analysis jobs as google.longrunning operations (AIP-151).
//!
//! A job is a validated [`Job`](crate::games::family::Job); its record (request, progress, result or error) lives in
//! its own sled database (`--jobs-dir`), separate from the memo store, which may be moved aside
//! and rebuilt; with `--jobs-redis` (or `--shared-cache`) it lives in Redis instead, shared by the
//! fleet ([`shared::RedisJobs`]). Names are UUIDv7s ([`new_name`]), never given twice. Every finished item of a family is recorded there too, so a resumed job recomputes
//! nothing it had finished; finished board components come back through the memo. The
//! [`runner::Runner`] runs jobs on its own threads; [`operations`] serves them over gRPC.

pub mod local;
pub mod operations;
pub mod runner;
pub mod shared;

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
    /// Whether the table of this finished job was deleted to keep the local job store within
    /// `--max-jobs-store-bytes` (its result stays).
    #[prost(bool, tag = "6")]
    pub table_deleted: bool,
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

    /// The operation clients see. A table longer than the rows its result holds gets the token
    /// of its next page here, signed by this process (see [`crate::page`]): a stored token would
    /// outlive the key that signed it.
    pub fn operation(&self) -> crate::google::longrunning::Operation {
        use crate::google::longrunning::operation::Result as OperationResult;
        let done = self.is_done();
        let result = match (&self.error, &self.result) {
            _ if !done => None,
            (Some(error), _) => Some(OperationResult::Error(error.clone())),
            (None, Some(result)) => {
                let mut result = result.clone();
                let inline = result.rows.len() as u64;
                if result.total_rows > inline {
                    result.next_page_token = runner::rows_token(&self.name, inline);
                }
                Some(OperationResult::Response(prost_types::Any {
                    type_url: RESULT_TYPE_URL.into(),
                    value: result.encode_to_vec(),
                }))
            }
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
    Sled(String),
    /// The local job store is closed until it can write again (a full disk): why.
    Unavailable(String),
    /// The local job store is past `--max-jobs-store-bytes`: why nothing new is created.
    Full(String),
    /// Redis failed or did not answer in time (the kind of error, never the URL).
    Redis(String),
    /// A new record's name is taken already (never, with [`new_name`]'s names): nothing was created.
    NameTaken(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Sled(error) => write!(formatter, "{error}"),
            StoreError::Unavailable(why) | StoreError::Full(why) => write!(formatter, "{why}"),
            StoreError::Redis(error) => write!(formatter, "the shared job store (Redis) failed: {error}"),
            StoreError::NameTaken(name) => write!(formatter, "operation name {name} is taken; nothing was created"),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<sled::Error> for StoreError {
    fn from(error: sled::Error) -> Self {
        StoreError::Sled(error.to_string())
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
    /// Nothing was saved: another replica of the fleet took the job's lease since this one did
    /// (its fencing token is newer). This replica's run must stop: the other runs the job now.
    Fenced,
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

    /// Saves the items `first..` of job `name` as [`JobRecords::put_item`] does, the job's record
    /// looked at once for all of them where the store can.
    fn put_items(&self, name: &str, first: u64, rows: &[proto::ExploreRow]) -> StoreResult<bool> {
        for (index, row) in (first..).zip(rows) {
            if !self.put_item(name, index, row)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Saves row `index` of job `name` again, computed anew where the stored one was missing or
    /// failed its check, whatever the job's state, while it has a record; returns whether it was
    /// saved.
    fn repair_item(&self, name: &str, index: u64, row: &proto::ExploreRow) -> StoreResult<bool>;

    /// At most `limit` recorded rows of job `name`, from row `start` on, in order, and no more of
    /// them than fit in `max_bytes` encoded (the first row always); they stop before a row that is
    /// missing, does not decode or fails its check (logged), which [`Rows::hole`] says.
    fn rows(&self, name: &str, start: u64, limit: usize, max_bytes: usize) -> StoreResult<Rows>;

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

    /// Renews every lease this replica holds (called about once a second); returns the jobs whose
    /// lease another replica holds now (this replica's runs of them must stop).
    fn renew(&self) -> Vec<String> {
        Vec::new()
    }

    /// The unfinished jobs whose lease nobody holds (their replica died or stopped).
    fn unclaimed(&self) -> StoreResult<Vec<String>> {
        Ok(Vec::new())
    }

    /// The unfinished jobs whose lease a replica holds: the ones others may help with.
    fn running(&self) -> StoreResult<Vec<String>> {
        Ok(Vec::new())
    }

    /// Takes the lease of part `part` of job `name` (a family's item, or a position a board's
    /// moves lead to), so that one replica of a fleet computes it: false if another holds it.
    /// Renewed with the job leases ([`JobRecords::renew`]). Alone, every part is this replica's.
    fn claim_part(&self, _name: &str, _part: u64) -> StoreResult<bool> {
        Ok(true)
    }

    /// Gives the lease of a part back (it is done, or given up).
    fn release_part(&self, _name: &str, _part: u64) {}

    /// Whether item `index` of job `name` is recorded.
    fn has_item(&self, name: &str, index: u64) -> StoreResult<bool> {
        Ok(self.finished_items(name)?.contains(&index))
    }

    /// How the store is doing, for the metrics (cheap: no I/O).
    fn condition(&self) -> StoreCondition {
        StoreCondition { writable: true, ..StoreCondition::default() }
    }

    /// Opens the store again if it was closed for want of space and can write now (called about
    /// once a second); true when it just did: the unfinished jobs are to be queued again.
    fn reopen(&self) -> bool {
        false
    }
}

/// Rows read from a job's table ([`JobRecords::rows`]): consecutive from the first asked for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rows {
    /// The rows, in order.
    pub rows: Vec<proto::ExploreRow>,
    /// Whether the read stopped at a hole: the row after these is missing, does not decode or
    /// failed its check (it is to be computed again).
    pub hole: bool,
}

/// How a job store is doing (`nimber_jobs_store_*`, `nimber_jobs_rejected_total`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreCondition {
    /// Whether it can be read and written (false while the local store waits for space).
    pub writable: bool,
    /// The bytes of keys and values the local store holds (0 for Redis).
    pub bytes: u64,
    /// How many times an unreadable local store was moved aside since the start.
    pub moved_aside: u64,
    /// Records read that failed their check, since the start (Redis with a secret).
    pub rejected_records: u64,
    /// Table rows read that failed their check, since the start (Redis with a secret).
    pub rejected_rows: u64,
    /// Items this replica saved over a row of the same item, since the start: computed twice
    /// (Redis).
    pub duplicate_items: u64,
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
}
