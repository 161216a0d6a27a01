//! The job runner: its own worker threads (`--max-jobs`, at a lower CPU priority than interactive
//! calls), live progress, cancellation, periodic checkpoints, retention, and resuming every
//! unfinished job when it starts.
//!
//! Checkpoints: every finished family item is written to the job store at once; once a second the
//! progress of every running job is saved and the memo is flushed (so the board components a long
//! solve finished survive a `kill -9`); sled writes both to disk within half a second.

use std::collections::{HashMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use super::local::{JobStore, JobStoreOptions};
use super::shared::RedisJobs;
use super::{status, JobRecord, JobRecords, Put, StoreCondition, StoreError, StoreResult};
use crate::cache::SharedCacheConfig;
use crate::games::family::{Chain, ChainState, Family, Job, Row};
use crate::games::{Budget, Game, GameTag, Interrupted, Memo, SearchContext, SearchCounts, Stats};
use crate::google::longrunning::Operation;
use crate::invalid_argument::InvalidArgument;
use crate::proto::{self, explore_result::Answer, ExploreState};
use crate::sync::{lock, RateLimit};
use crate::wire;

mod live;
mod metrics;
pub use metrics::RunnerMetrics;
pub mod parts;
mod work;

use live::Live;
use parts::{Helping, PartCounts};

/// How a job's run ended short of a result.
enum Stopped {
    Interrupted(Interrupted),
    /// The stored request is no longer acceptable (a limit was lowered since it was accepted).
    Invalid(String),
    Store(StoreError),
    /// The job's record ended or is gone meanwhile: its run writes nothing more.
    Superseded,
    /// What the job computed keeps vanishing from the store: why.
    DataLoss(String),
}

impl From<Interrupted> for Stopped {
    fn from(error: Interrupted) -> Self {
        Stopped::Interrupted(error)
    }
}

impl From<StoreError> for Stopped {
    fn from(error: StoreError) -> Self {
        Stopped::Store(error)
    }
}

/// How the runner is configured.
#[derive(Clone, Debug)]
pub struct JobsConfig {
    /// The directory of the job store.
    pub dir: PathBuf,
    /// Its page cache, what to do when it is unreadable, and its size bound.
    pub store: JobStoreOptions,
    /// How many jobs run at once.
    pub max_jobs: usize,
    /// How long a finished operation is kept (unless deleted before).
    pub retention: Duration,
    /// The most entries a game's in-memory table may hold during one solve.
    pub table_limit: usize,
    /// The most jobs waiting to run; Explore beyond it is RESOURCE_EXHAUSTED.
    pub max_queued: usize,
    /// The search threads the jobs share with the server's solves (`--search-threads`).
    pub search_threads: Arc<crate::games::SearchThreads>,
    /// The fleet's Redis of the job records (`--jobs-redis`, by default the `--shared-cache` one):
    /// job records live there instead of in `dir`, any replica answers for any job, and a job
    /// whose replica died is resumed by another.
    pub shared: Option<SharedCacheConfig>,
    /// Whether the replicas also share values (`--shared-cache`): then, with a shared job store,
    /// every free replica takes parts of the jobs others run (see [`parts`]).
    pub share_work: bool,
}

impl JobsConfig {
    /// A job's share of `--memory-limit`: its table's bytes (what a heap sequence's values must
    /// fit in).
    pub fn job_bytes(&self) -> u64 {
        (self.table_limit as u64).saturating_mul(crate::limits::TABLE_ENTRY_BYTES)
    }
}

/// The default of `--jobs-dir` (in the working directory).
pub const DEFAULT_JOBS_DIR: &str = "nimber-jobs";
/// The default of `--max-jobs`.
pub const DEFAULT_MAX_JOBS: usize = 1;
/// The default of `--max-queued-jobs`.
pub const DEFAULT_MAX_QUEUED_JOBS: usize = 1000;
/// The default of `--job-retention`, as the flag takes it.
pub const DEFAULT_JOB_RETENTION: &str = "7d";

/// The defaults of the flags (the constants above, which `serve`'s flags use too).
impl Default for JobsConfig {
    fn default() -> Self {
        Self {
            dir: PathBuf::from(DEFAULT_JOBS_DIR),
            store: JobStoreOptions::default(),
            max_jobs: DEFAULT_MAX_JOBS,
            retention: humantime::parse_duration(DEFAULT_JOB_RETENTION).expect("the default retention parses"),
            table_limit: crate::games::DEFAULT_TABLE_LIMIT,
            max_queued: DEFAULT_MAX_QUEUED_JOBS,
            search_threads: crate::games::SearchThreads::new(1),
            shared: None,
            share_work: false,
        }
    }
}

/// Why a job call failed.
#[derive(Debug)]
pub enum JobsError {
    /// The request is not acceptable (names the field and the limit).
    InvalidArgument(InvalidArgument),
    /// No operation has this name.
    NotFound(String),
    /// The operation is not in a state that allows the call.
    FailedPrecondition(String),
    /// Too many jobs are waiting to run (`--max-queued-jobs`).
    ResourceExhausted(String),
    /// The request id names the operation of another request.
    AlreadyExists(String),
    /// What the call needs was lost by the store and cannot be computed again here.
    DataLoss(String),
    /// The job store failed.
    Store(StoreError),
}

impl From<InvalidArgument> for JobsError {
    fn from(error: InvalidArgument) -> Self {
        JobsError::InvalidArgument(error)
    }
}

impl From<StoreError> for JobsError {
    fn from(error: StoreError) -> Self {
        JobsError::Store(error)
    }
}

/// Runs jobs; dropping it without [`Runner::shutdown`] leaves its threads running.
pub struct Runner {
    shared: Arc<RunnerState>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

/// What the runner's handle, its workers and its checkpointer share.
struct RunnerState {
    store: Box<dyn JobRecords>,
    memo: Arc<dyn Memo>,
    config: JobsConfig,
    queue: Mutex<VecDeque<String>>,
    wake: Condvar,
    live: Mutex<HashMap<String, Arc<Live>>>,
    /// Held while a record changes state, so that cancel, delete and the workers agree.
    transitions: Mutex<()>,
    stopping: AtomicBool,
    changes: tokio::sync::watch::Sender<u64>,
    /// How many jobs ended here, by final state.
    ended: EndedCounts,
    /// Failures of the checkpointer's store calls are logged at most once a minute.
    checkpoint_warnings: RateLimit,
    /// The jobs of other replicas this one helps with (see [`parts`]).
    helping: Mutex<Helping>,
    /// The parts of jobs this replica computed.
    parts: PartCounts,
    /// Rows of tables computed again because the store lost them or they failed their check.
    rows_recomputed: AtomicU64,
    /// Jobs whose record vanished while they ran here, and when (see `RunnerState::record_vanished`).
    lost: Mutex<HashMap<String, SystemTime>>,
}

/// How many jobs this runner ended, by final state: every end it saved counts once, a cancel
/// of a queued job as well as the end of a run.
#[derive(Default)]
struct EndedCounts {
    succeeded: AtomicU64,
    failed: AtomicU64,
    cancelled: AtomicU64,
}

impl EndedCounts {
    /// Counts one job that ended in `state` (a state that is not an end counts nowhere).
    fn count(&self, state: ExploreState) {
        let counter = match state {
            ExploreState::Succeeded => &self.succeeded,
            ExploreState::Failed => &self.failed,
            ExploreState::Cancelled => &self.cancelled,
            _ => return,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// What the runner is doing, for the metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JobCounts {
    /// Jobs waiting for a worker.
    pub queued: u64,
    /// Jobs running now.
    pub running: u64,
    /// Jobs that succeeded since the start.
    pub succeeded: u64,
    /// Jobs that failed since the start.
    pub failed: u64,
    /// Jobs cancelled since the start.
    pub cancelled: u64,
    /// How the job store is doing.
    pub store: StoreCondition,
    /// Parts of this replica's own jobs it computed (see [`parts`]).
    pub parts_of_own_jobs: u64,
    /// Parts of other replicas' jobs it computed.
    pub parts_of_other_jobs: u64,
    /// Parts it computes now.
    pub parts_computing: u64,
    /// Seconds spent taking and giving back the leases of parts.
    pub part_lease_seconds: f64,
    /// Rows of tables computed again because the store lost them or they failed their check.
    pub rows_recomputed: u64,
}

/// How often running jobs are checkpointed (progress saved, memo flushed).
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);
/// How often a chain job's live progress is brought up to date.
const SHOW_EVERY: Duration = Duration::from_millis(250);
/// How long DeleteOperation waits for a job cancelled here to stop, and how often it looks.
const CANCEL_PATIENCE: Duration = Duration::from_secs(10);
const CANCEL_POLL: Duration = Duration::from_millis(5);
/// How long a replica says what became of a job whose record vanished while it ran here, and the
/// most such jobs it remembers.
const LOST_GRACE: Duration = Duration::from_secs(3600);
const LOST_MOST: usize = 10_000;
/// How often finished operations past their retention are deleted (more often when the retention
/// itself is shorter).
const SWEEP_EVERY: Duration = Duration::from_secs(60);
/// The default and the largest page of ListOperations.
const DEFAULT_PAGE: usize = 50;
const MAX_PAGE: usize = 1000;
/// How many rows of a family's table the operation's result holds, and in how many bytes at most
/// (a record is read on every GetOperation); ListExploreRows serves the rest.
pub const INLINE_ROWS: usize = 1000;
const INLINE_ROWS_BYTES: usize = 256 << 10;
/// The default and the largest page of ListExploreRows, and the most bytes of rows a page holds:
/// well within the 4 MiB a gRPC client accepts by default (10 000 rows of 16×16 boards are about
/// 3 MB; a heap sequence's rows are larger, so its pages hold fewer).
const DEFAULT_ROWS_PAGE: usize = 1000;
const MAX_ROWS_PAGE: usize = 10_000;
const MAX_ROWS_PAGE_BYTES: usize = 3 << 20;

impl Runner {
    /// Opens the job store (in `config.dir`, or the fleet's Redis), queues every unfinished job of
    /// its own store (counting a resume for each that was running; with a shared store the
    /// checkpointer finds them), and starts the workers and the checkpointer.
    pub fn start(config: JobsConfig, memo: Arc<dyn Memo>) -> anyhow::Result<Arc<Runner>> {
        let store: Box<dyn JobRecords> = match &config.shared {
            Some(shared) => Box::new(RedisJobs::new(shared.clone())),
            None => Box::new(JobStore::open(&config.dir, config.store)?),
        };
        let shared = Arc::new(RunnerState {
            store,
            memo,
            config: config.clone(),
            queue: Mutex::new(VecDeque::new()),
            wake: Condvar::new(),
            live: Mutex::new(HashMap::new()),
            transitions: Mutex::new(()),
            stopping: AtomicBool::new(false),
            changes: tokio::sync::watch::Sender::new(0),
            ended: Default::default(),
            checkpoint_warnings: RateLimit::new(),
            helping: Default::default(),
            parts: Default::default(),
            rows_recomputed: AtomicU64::new(0),
            lost: Mutex::new(HashMap::new()),
        });
        if !shared.store.is_shared() && shared.store.condition().writable {
            shared.queue_unfinished()?;
        }
        let mut threads = Vec::new();
        for index in 0..config.max_jobs.max(1) {
            let shared = shared.clone();
            threads.push(std::thread::Builder::new().name(format!("nimber-job-{index}")).spawn(move || shared.work())?);
        }
        let checkpointer = shared.clone();
        threads.push(
            std::thread::Builder::new()
                .name("nimber-jobs-checkpoint".into())
                .spawn(move || checkpointer.checkpoints())?,
        );
        Ok(Arc::new(Runner { shared, threads: Mutex::new(threads) }))
    }

    /// Validates and creates a job (or finds the one of the same `request_id`) and queues it.
    /// Blocking: call from a blocking thread.
    pub fn submit(&self, request: proto::ExploreRequest) -> Result<Operation, JobsError> {
        let job = wire::job::job_from_request(&request).map_err(JobsError::InvalidArgument)?;
        job.check_memory(self.shared.config.job_bytes()).map_err(|over| JobsError::InvalidArgument(over.into()))?;
        let shared = &self.shared;
        let _transition = lock(&shared.transitions);
        if !request.request_id.is_empty() {
            if let Some(name) = shared.store.name_for_request_id(&request.request_id)? {
                // A request id whose record is gone names nothing: the request is created anew.
                if let Some(existing) = shared.store.get(&name)? {
                    return shared.same_request(existing, &request);
                }
            }
        }
        let queued = lock(&shared.queue).len();
        if queued >= shared.config.max_queued {
            return Err(JobsError::ResourceExhausted(format!(
                "{queued} jobs are waiting to run, the limit (--max-queued-jobs) is {}; retry when some have started",
                shared.config.max_queued
            )));
        }
        let mut record = JobRecord { name: super::new_name(), request: Some(request.clone()), ..Default::default() };
        let progress = record.progress_mut();
        progress.set_state(ExploreState::Queued);
        progress.create_time = Some(SystemTime::now().into());
        if let Some(existing) = shared.store.create(&record)? {
            // Created meanwhile by another replica of the fleet.
            return shared.same_request(existing, &request);
        }
        lock(&shared.queue).push_back(record.name.clone());
        shared.wake.notify_all();
        shared.changed();
        tracing::info!(name = record.name, "job created");
        Ok(record.operation())
    }

    /// The operation `name`, with live progress while it runs. Blocking.
    /// A job whose record vanished while it ran here is DATA_LOSS, saying so, for a while.
    pub fn operation(&self, name: &str) -> Result<Operation, JobsError> {
        let record =
            self.shared.store.get(name)?.ok_or_else(|| self.shared.lost(name).unwrap_or_else(|| not_found(name)))?;
        Ok(self.shared.overlay(record).operation())
    }

    /// Cancels `name`: a queued job ends at once, a running one within a budget check (about a
    /// millisecond); a finished one is left as it is. Blocking.
    pub fn cancel(&self, name: &str) -> Result<(), JobsError> {
        let shared = &self.shared;
        let _transition = lock(&shared.transitions);
        let mut record = shared.store.get(name)?.ok_or_else(|| not_found(name))?;
        if record.is_done() {
            return Ok(());
        }
        if let Some(live) = lock(&shared.live).get(name) {
            live.cancelled_by_user.store(true, Ordering::Relaxed);
            live.cancel.store(true, Ordering::Relaxed);
            return Ok(());
        }
        record.finish(ExploreState::Cancelled, Some(status(tonic::Code::Cancelled, "cancelled by CancelOperation")));
        // Not saved if the job ended meanwhile (on another replica of the fleet): it stays as it ended.
        match shared.store.put(&record)? {
            Put::Saved => shared.ended.count(ExploreState::Cancelled),
            // (Fenced: never, as this replica does not run the job; its runner's end stays.)
            Put::Ended | Put::Fenced => {}
            Put::Gone => return Err(not_found(name)),
        }
        shared.store.flush()?;
        // A cancelled job no longer waits: it frees its place in the queue (and the metric) at once.
        lock(&shared.queue).retain(|queued| queued != name);
        shared.changed();
        Ok(())
    }

    /// Deletes a finished operation; a running one must be cancelled first. A job cancelled here
    /// that is still stopping (its run ends at its next budget check, within milliseconds) is
    /// waited for, up to 10 s, then deleted (AIP-151 lets the call wait for the
    /// operation to end). Blocking.
    pub fn delete(&self, name: &str) -> Result<(), JobsError> {
        let shared = &self.shared;
        let patience = Instant::now() + CANCEL_PATIENCE;
        loop {
            let _transition = lock(&shared.transitions);
            let record = shared.store.get(name)?.ok_or_else(|| not_found(name))?;
            if record.is_done() {
                shared.store.delete(&record)?;
                shared.store.flush()?;
                shared.changed();
                return Ok(());
            }
            let stopping =
                lock(&shared.live).get(name).is_some_and(|live| live.cancelled_by_user.load(Ordering::Relaxed));
            if !stopping || Instant::now() >= patience {
                return Err(JobsError::FailedPrecondition(format!(
                    "operation {name} is not done; cancel it (CancelOperation) before deleting it"
                )));
            }
            drop(_transition);
            std::thread::sleep(CANCEL_POLL);
        }
    }

    /// A page of the table of family job `name`, which must have succeeded: at most `page_size`
    /// rows (0: the default of 1000; at most 10 000) from `page_token` (empty: the first row).
    /// Also the token of the next page (empty on the last) and the table's length. Blocking.
    pub fn rows(
        &self,
        name: &str,
        page_size: usize,
        page_token: &str,
    ) -> Result<(Vec<proto::ExploreRow>, String, u64), JobsError> {
        let record = self.shared.store.get(name)?.ok_or_else(|| not_found(name))?;
        if record.state() != ExploreState::Succeeded {
            return Err(JobsError::FailedPrecondition(format!(
                "operation {name} has not succeeded; its table is ready once it has"
            )));
        }
        if record.table_deleted {
            return Err(JobsError::FailedPrecondition(format!(
                "the table of operation {name} was deleted to keep the job store within --max-jobs-store-bytes \
                 (oldest finished tables first); its result stays in the operation"
            )));
        }
        let total = record.result.as_ref().map_or(0, |result| result.total_rows);
        let start = crate::page::start_number::<8>(page_token, name.as_bytes())
            .map_err(JobsError::InvalidArgument)?
            .map_or(0, u64::from_be_bytes);
        if start > total {
            return Err(JobsError::InvalidArgument(InvalidArgument::field(
                "page_token",
                "starts past the table's end",
            )));
        }
        let page_size = crate::page::page_size(page_size, DEFAULT_ROWS_PAGE, MAX_ROWS_PAGE);
        // Never past the table's end (a chain's state may have shortened it after rows were saved).
        let page_size = page_size.min(usize::try_from(total - start).unwrap_or(usize::MAX));
        let mut rows = Vec::new();
        loop {
            let asked = page_size - rows.len();
            let read = self.shared.store.rows(name, start + rows.len() as u64, asked, MAX_ROWS_PAGE_BYTES)?;
            rows.extend(read.rows);
            if !read.hole || rows.len() == page_size {
                break;
            }
            let index = start + rows.len() as u64;
            rows.push(self.repaired_row(&record, index)?);
        }
        let end = start + rows.len() as u64;
        let next = if end < total { rows_token(name, end) } else { String::new() };
        Ok((rows, next, total))
    }

    /// Row `index` of the table of finished job `record`, which the table lost or which failed its
    /// check: computed anew from what the memo holds (its values were memoized when the job ran),
    /// saved, and counted; DATA_LOSS when the memo no longer knows it (the job must run again).
    fn repaired_row(&self, record: &JobRecord, index: u64) -> Result<proto::ExploreRow, JobsError> {
        let name = &record.name;
        let lost = || {
            JobsError::DataLoss(format!(
                "row {index} of the table of operation {name} is missing or failed its check, and the store no longer \
                 holds its value: run the job again"
            ))
        };
        let request = record.request.clone().unwrap_or_default();
        let job = wire::job::job_from_request(&request).map_err(|_| lost())?;
        let row = wire::job::row_to_proto(job.row_from_memo(index, &*self.shared.memo).ok_or_else(lost)?);
        self.shared.store.repair_item(name, index, &row)?;
        self.shared.rows_recomputed.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(
            name,
            index,
            "a row of a finished job's table was missing or failed its check; computed it anew"
        );
        Ok(row)
    }

    /// The search threads the jobs use, which the server's solves share.
    pub fn search_threads(&self) -> Arc<crate::games::SearchThreads> {
        self.shared.config.search_threads.clone()
    }

    /// How many jobs wait, run and have ended, for the metrics. Cheap: two locks, no I/O.
    pub fn counts(&self) -> JobCounts {
        let shared = &self.shared;
        let ended = &shared.ended;
        JobCounts {
            queued: lock(&shared.queue).len() as u64,
            running: lock(&shared.live).len() as u64,
            succeeded: ended.succeeded.load(Ordering::Relaxed),
            failed: ended.failed.load(Ordering::Relaxed),
            cancelled: ended.cancelled.load(Ordering::Relaxed),
            store: shared.store.condition(),
            parts_of_own_jobs: shared.parts.of_own_jobs.load(Ordering::Relaxed),
            parts_of_other_jobs: shared.parts.of_other_jobs.load(Ordering::Relaxed),
            parts_computing: shared.parts.computing.load(Ordering::Relaxed),
            part_lease_seconds: shared.parts.lease_nanos.load(Ordering::Relaxed) as f64 / 1e9,
            rows_recomputed: shared.rows_recomputed.load(Ordering::Relaxed),
        }
    }

    /// A page of operations in creation order: those after `page_token`, done or not as `done`
    /// asks (all when `None`), at most `page_size` (0: the default of 50; at most 1000). Also the
    /// token of the next page, empty on the last. Blocking.
    pub fn list(
        &self,
        done: Option<bool>,
        page_size: usize,
        page_token: &str,
    ) -> Result<(Vec<Operation>, String), JobsError> {
        // The query is the filter: a token continues only a listing of the same `done`.
        let query = [done.map_or(0, |done| 1 + u8::from(done))];
        let after = crate::page::start(page_token, &query)?.unwrap_or_default();
        let after = String::from_utf8(after)
            .ok()
            .filter(|name| name.is_empty() || super::is_name(name))
            .ok_or_else(|| InvalidArgument::field("page_token", "does not name an operation"))?;
        let page_size = crate::page::page_size(page_size, DEFAULT_PAGE, MAX_PAGE);
        let mut matching =
            self.shared.store.records_after(&after).filter(|record| {
                record.as_ref().map_or(true, |record| done.is_none_or(|done| record.is_done() == done))
            });
        let page: Vec<JobRecord> = matching.by_ref().take(page_size).collect::<StoreResult<_>>()?;
        let next = if matching.next().is_some() {
            page.last().map(|record| crate::page::token(&query, record.name.as_bytes()))
        } else {
            None
        };
        let operations = page.into_iter().map(|record| self.shared.overlay(record).operation()).collect();
        Ok((operations, next.unwrap_or_default()))
    }

    /// A receiver that changes whenever any job changes state, and at every checkpoint.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared.changes.subscribe()
    }

    /// Stops the workers, leaving running jobs unfinished (they resume at the next start), and
    /// saves their progress. Blocking: waits for the workers.
    pub fn shutdown(&self) {
        let shared = &self.shared;
        shared.stopping.store(true, Ordering::Relaxed);
        for live in lock(&shared.live).values() {
            live.cancel.store(true, Ordering::Relaxed);
        }
        for stop in lock(&shared.helping).now.values() {
            stop.store(true, Ordering::Relaxed);
        }
        {
            let _queue = lock(&shared.queue);
            shared.wake.notify_all();
        }
        for thread in std::mem::take(&mut *lock(&self.threads)) {
            let _ = thread.join();
        }
        shared.memo.flush();
        if let Err(error) = shared.store.flush() {
            tracing::warn!(%error, "job store flush at shutdown failed");
        }
    }
}

/// The token of the page of job `name`'s table that starts at row `start`.
pub(crate) fn rows_token(name: &str, start: u64) -> String {
    crate::page::token(name.as_bytes(), &start.to_be_bytes())
}

fn not_found(name: &str) -> JobsError {
    JobsError::NotFound(format!("no operation named {}", crate::quote::quoted(name)))
}
