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

use super::family::{self, Family, Job};
use super::local::{JobStore, JobStoreOptions};
use super::shared::RedisJobs;
use super::{status, JobRecord, JobRecords, Put, StoreCondition, StoreError, StoreResult};
use crate::cache::{lock, RateLimit, SharedCacheConfig};
use crate::convert::{self, InvalidArgument};
use crate::games::{Budget, Game, GameTag, Interrupted, Memo, Position, SearchContext, Stats, Value};
use crate::google::longrunning::Operation;
use crate::proto::{self, explore_result::Answer, ExploreState};

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
    /// The fleet's Redis of the job records (`--jobs-redis`, by default the `--shared-cache` one):
    /// job records live there instead of in `dir`, any replica answers for any job, and a job
    /// whose replica died is resumed by another.
    pub shared: Option<SharedCacheConfig>,
}

/// The defaults documented in the README: `./nimber-jobs`, one job at a time, at most 1000
/// waiting, kept 7 days.
impl Default for JobsConfig {
    fn default() -> Self {
        Self {
            dir: PathBuf::from("nimber-jobs"),
            store: JobStoreOptions::default(),
            max_jobs: 1,
            retention: Duration::from_secs(7 * 24 * 3600),
            table_limit: crate::games::DEFAULT_TABLE_LIMIT,
            max_queued: 1000,
            shared: None,
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
    /// The job store failed.
    Store(StoreError),
}

impl From<StoreError> for JobsError {
    fn from(error: StoreError) -> Self {
        JobsError::Store(error)
    }
}

/// Runs jobs; dropping it without [`Runner::shutdown`] leaves its threads running.
pub struct Runner {
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

struct Shared {
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
}

/// The live counters of a running job.
struct Live {
    cancel: Arc<AtomicBool>,
    cancelled_by_user: AtomicBool,
    components_searched: AtomicU64,
    cache_hits: AtomicU64,
    positions_computed: AtomicU64,
    items_done: AtomicU64,
    items_total: AtomicU64,
    items_done_before_run: AtomicU64,
    started: Instant,
    elapsed_before: Duration,
    cpu_before: Duration,
    cpu_clock: Option<libc::clockid_t>,
    cpu_at_start: Duration,
}

impl Live {
    fn start(record: &JobRecord, cpu_clock: Option<libc::clockid_t>) -> Self {
        let progress = record.progress.unwrap_or_default();
        let duration = |value: Option<prost_types::Duration>| value.and_then(|d| d.try_into().ok()).unwrap_or_default();
        Self {
            cancel: Arc::new(AtomicBool::new(false)),
            cancelled_by_user: AtomicBool::new(false),
            components_searched: AtomicU64::new(progress.components_searched),
            cache_hits: AtomicU64::new(progress.cache_hits),
            positions_computed: AtomicU64::new(progress.positions_computed),
            items_done: AtomicU64::new(progress.items_done),
            items_total: AtomicU64::new(progress.items_total),
            items_done_before_run: AtomicU64::new(progress.items_done),
            started: Instant::now(),
            elapsed_before: duration(progress.elapsed),
            cpu_before: duration(progress.cpu_time),
            cpu_clock,
            cpu_at_start: cpu_clock.map_or(Duration::ZERO, cpu_time),
        }
    }

    /// `progress` with this run's live counters.
    fn snapshot(&self, mut progress: proto::ExploreProgress) -> proto::ExploreProgress {
        let run_time = self.started.elapsed();
        progress.components_searched = self.components_searched.load(Ordering::Relaxed);
        progress.cache_hits = self.cache_hits.load(Ordering::Relaxed);
        progress.positions_computed = self.positions_computed.load(Ordering::Relaxed);
        let (done, total) = (self.items_done.load(Ordering::Relaxed), self.items_total.load(Ordering::Relaxed));
        progress.items_done = done;
        progress.items_total = total;
        progress.elapsed = (self.elapsed_before + run_time).try_into().ok();
        let cpu = self.cpu_clock.map_or(Duration::ZERO, |clock| cpu_time(clock).saturating_sub(self.cpu_at_start));
        progress.cpu_time = (self.cpu_before + cpu).try_into().ok();
        let done_this_run = done.saturating_sub(self.items_done_before_run.load(Ordering::Relaxed));
        progress.eta = (done_this_run > 0 && total > 1)
            .then(|| run_time.mul_f64(total.saturating_sub(done) as f64 / done_this_run as f64))
            .and_then(|eta| eta.try_into().ok());
        progress
    }
}

/// The memo a job solves through: the shared store, counting this job's hits and searches live.
struct CountingMemo<'a> {
    inner: &'a dyn Memo,
    live: &'a Live,
}

impl Memo for CountingMemo<'_> {
    fn get(&self, game: GameTag, key: &[u8]) -> Option<u64> {
        let value = self.inner.get(game, key);
        if value.is_some() {
            self.live.cache_hits.fetch_add(1, Ordering::Relaxed);
        }
        value
    }

    fn put(&self, game: GameTag, key: &[u8], value: u64, cost: u64) {
        self.live.components_searched.fetch_add(1, Ordering::Relaxed);
        self.inner.put(game, key, value, cost);
    }

    fn flush(&self) {
        self.inner.flush();
    }

    fn peek(&self, game: GameTag, key: &[u8]) -> Option<u64> {
        self.inner.peek(game, key)
    }

    fn remembers(&self) -> bool {
        self.inner.remembers()
    }

    fn get_or_compute(
        &self,
        game: GameTag,
        key: &[u8],
        budget: &Budget,
        compute: &mut dyn FnMut() -> Result<(u64, u64), Interrupted>,
    ) -> Result<(u64, bool), Interrupted> {
        let (value, found) = self.inner.get_or_compute(game, key, budget, compute)?;
        let counter = if found { &self.live.cache_hits } else { &self.live.components_searched };
        counter.fetch_add(1, Ordering::Relaxed);
        Ok((value, found))
    }
}

/// How a job's run ended short of a result.
enum Stopped {
    Interrupted(Interrupted),
    /// The stored request is no longer acceptable (a limit was lowered since it was accepted).
    Invalid(String),
    Store(StoreError),
    /// The job's record ended or is gone meanwhile: its run writes nothing more.
    Superseded,
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

/// How often running jobs are checkpointed (progress saved, memo flushed).
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);
/// How often finished operations past their retention are deleted (more often when the retention
/// itself is shorter).
const SWEEP_EVERY: Duration = Duration::from_secs(60);
/// The default and the largest page of ListOperations.
const DEFAULT_PAGE: usize = 50;
const MAX_PAGE: usize = 1000;
/// How many rows of a family's table the operation's result holds; ListExploreRows serves the rest.
pub const INLINE_ROWS: usize = 1000;
/// The default and the largest page of ListExploreRows (10 000 rows of 16×16 boards fit well in
/// the 4 MiB a gRPC client accepts by default).
const DEFAULT_ROWS_PAGE: usize = 1000;
const MAX_ROWS_PAGE: usize = 10_000;

impl Runner {
    /// Opens the job store (in `config.dir`, or the fleet's Redis), queues every unfinished job of
    /// its own store (counting a resume for each that was running; with a shared store the
    /// checkpointer finds them), and starts the workers and the checkpointer.
    pub fn start(config: JobsConfig, memo: Arc<dyn Memo>) -> anyhow::Result<Arc<Runner>> {
        let store: Box<dyn JobRecords> = match &config.shared {
            Some(shared) => Box::new(RedisJobs::new(shared.clone())),
            None => Box::new(JobStore::open(&config.dir, config.store)?),
        };
        let shared = Arc::new(Shared {
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
        family::job_from_request(&request).map_err(JobsError::InvalidArgument)?;
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
    pub fn operation(&self, name: &str) -> Result<Operation, JobsError> {
        let record = self.shared.store.get(name)?.ok_or_else(|| not_found(name))?;
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
            Put::Ended => {}
            Put::Gone => return Err(not_found(name)),
        }
        shared.store.flush()?;
        // A cancelled job no longer waits: it frees its place in the queue (and the metric) at once.
        lock(&shared.queue).retain(|queued| queued != name);
        shared.changed();
        Ok(())
    }

    /// Deletes a finished operation; a running one must be cancelled first. Blocking.
    pub fn delete(&self, name: &str) -> Result<(), JobsError> {
        let shared = &self.shared;
        let _transition = lock(&shared.transitions);
        let record = shared.store.get(name)?.ok_or_else(|| not_found(name))?;
        if !record.is_done() {
            return Err(JobsError::FailedPrecondition(format!(
                "operation {name} is not done; cancel it (CancelOperation) before deleting it"
            )));
        }
        shared.store.delete(&record)?;
        shared.store.flush()?;
        shared.changed();
        Ok(())
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
        let start = match page_token {
            "" => 0,
            token => row_of_token(token).filter(|&start| start <= total).ok_or_else(|| {
                JobsError::InvalidArgument(InvalidArgument::field(
                    "page_token",
                    format!("{} is not a next_page_token this server gave", crate::calls::quoted(token)),
                ))
            })?,
        };
        let page_size = if page_size == 0 { DEFAULT_ROWS_PAGE } else { page_size.min(MAX_ROWS_PAGE) };
        let rows = self.shared.store.rows(name, start, page_size)?;
        let end = start + rows.len() as u64;
        let next = if end < total { end.to_string() } else { String::new() };
        Ok((rows, next, total))
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
        if !page_token.is_empty() && !super::is_name(page_token) {
            return Err(JobsError::InvalidArgument(InvalidArgument::field(
                "page_token",
                format!("{} is not a next_page_token this server gave", crate::calls::quoted(page_token)),
            )));
        }
        let page_size = if page_size == 0 { DEFAULT_PAGE } else { page_size.min(MAX_PAGE) };
        let mut matching =
            self.shared.store.records_after(page_token).filter(|record| {
                record.as_ref().map_or(true, |record| done.is_none_or(|done| record.is_done() == done))
            });
        let page: Vec<JobRecord> = matching.by_ref().take(page_size).collect::<StoreResult<_>>()?;
        let next = if matching.next().is_some() { page.last().map(|record| record.name.clone()) } else { None };
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

/// The row a ListExploreRows page token starts at: only the decimal this server writes (no sign,
/// no leading zero, no space).
fn row_of_token(token: &str) -> Option<u64> {
    token.parse::<u64>().ok().filter(|row| row.to_string() == token)
}

fn not_found(name: &str) -> JobsError {
    JobsError::NotFound(format!("no operation named {}", crate::calls::quoted(name)))
}

impl Shared {
    fn changed(&self) {
        self.changes.send_modify(|generation| *generation += 1);
    }

    /// The operation of `existing`, the job of `request`'s request id, if it is the same request
    /// (AIP-155); ALREADY_EXISTS if another request took the id first (as idempotency keys work).
    fn same_request(&self, existing: JobRecord, request: &proto::ExploreRequest) -> Result<Operation, JobsError> {
        let without_id =
            |request: &proto::ExploreRequest| proto::ExploreRequest { request_id: String::new(), ..request.clone() };
        if existing.request.as_ref().map(without_id) != Some(without_id(request)) {
            return Err(JobsError::AlreadyExists(format!(
                "request_id {:?} belongs to another request (operation {}); a different request needs a new request_id",
                request.request_id, existing.name
            )));
        }
        Ok(self.overlay(existing).operation())
    }

    /// `record` with the live counters of its run, if it is running.
    fn overlay(&self, mut record: JobRecord) -> JobRecord {
        if let Some(live) = lock(&self.live).get(&record.name).cloned() {
            if !record.is_done() {
                record.progress = Some(live.snapshot(record.progress.unwrap_or_default()));
            }
        }
        record
    }

    /// The next queued job, waiting for one; `None` once stopping.
    fn next_job(&self) -> Option<String> {
        let mut queue = lock(&self.queue);
        loop {
            if self.stopping.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(name) = queue.pop_front() {
                return Some(name);
            }
            queue = self.wake.wait(queue).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// A worker thread: runs queued jobs one after another until stopping.
    fn work(&self) {
        lower_priority();
        let cpu_clock = thread_cpu_clock();
        while let Some(name) = self.next_job() {
            if let Err(error) = self.run(&name, cpu_clock) {
                tracing::error!(
                    name,
                    %error,
                    "the job store failed; the job resumes once the store can write again (at the latest at the next start; in a fleet, once the store answers)"
                );
            }
        }
    }

    /// Runs job `name` to its end (or until stopping) and saves its record.
    /// With a shared store, only under the job's lease: a job another replica runs is skipped.
    fn run(&self, name: &str, cpu_clock: Option<libc::clockid_t>) -> StoreResult<()> {
        if !self.store.claim(name)? {
            return Ok(());
        }
        let result = self.run_claimed(name, cpu_clock);
        self.store.release(name);
        result
    }

    fn run_claimed(&self, name: &str, cpu_clock: Option<libc::clockid_t>) -> StoreResult<()> {
        let (record, live) = {
            let _transition = lock(&self.transitions);
            let Some(mut record) = self.store.get(name)? else { return Ok(()) };
            if record.is_done() {
                return Ok(());
            }
            if record.state() == ExploreState::Running {
                // Its replica died during the run (a local store marks these at the start).
                record.progress_mut().times_resumed += 1;
                tracing::info!(name, "resuming a job whose replica stopped");
            }
            record.progress_mut().set_state(ExploreState::Running);
            if self.store.put(&record)? != Put::Saved {
                return Ok(()); // It ended meanwhile (cancelled on another replica of the fleet), or is gone.
            }
            let live = Arc::new(Live::start(&record, cpu_clock));
            lock(&self.live).insert(name.to_string(), live.clone());
            (record, live)
        };
        self.changed();
        tracing::info!(name, "job running");
        let request = record.request.clone().unwrap_or_default();
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| self.execute(name, &request, &live)));
        self.memo.flush();

        let _transition = lock(&self.transitions);
        lock(&self.live).remove(name);
        let Some(mut record) = self.store.get(name)? else {
            record_vanished(name);
            self.changed();
            return Ok(());
        };
        if record.is_done() {
            // Cancelled on another replica of the fleet meanwhile.
            self.changed();
            return Ok(());
        }
        record.progress = Some(live.snapshot(record.progress.unwrap_or_default()));
        match outcome {
            Ok(Ok(result)) => {
                record.result = Some(result);
                record.finish(ExploreState::Succeeded, None);
            }
            Ok(Err(Stopped::Interrupted(Interrupted::Cancelled)))
                if !live.cancelled_by_user.load(Ordering::Relaxed) =>
            {
                tracing::info!(name, "job stopped by the shutdown; it resumes at the next start");
            }
            Ok(Err(Stopped::Interrupted(Interrupted::Cancelled))) => {
                record.finish(
                    ExploreState::Cancelled,
                    Some(status(tonic::Code::Cancelled, "cancelled by CancelOperation")),
                );
            }
            Ok(Err(Stopped::Interrupted(Interrupted::DeadlineExceeded))) => record.finish(
                ExploreState::Failed,
                Some(status(tonic::Code::DeadlineExceeded, "the job ran for its max_duration without finishing")),
            ),
            Ok(Err(Stopped::Invalid(message))) => {
                record.finish(ExploreState::Failed, Some(status(tonic::Code::InvalidArgument, message)))
            }
            Ok(Err(Stopped::Store(error))) => return Err(error),
            Ok(Err(Stopped::Superseded)) => {
                // Its record ended or went between the item it could not save and the read above.
                self.changed();
                return Ok(());
            }
            Err(_panic) => record.finish(
                ExploreState::Failed,
                Some(status(tonic::Code::Internal, "the job failed (an internal error; see the server log)")),
            ),
        }
        match self.store.put(&record)? {
            Put::Saved => {}
            Put::Ended => {
                // It ended first another way (cancelled on another replica of the fleet): that end stays.
                tracing::info!(name, "job run ended after the job had been cancelled");
                self.changed();
                return Ok(());
            }
            Put::Gone => {
                record_vanished(name);
                self.changed();
                return Ok(());
            }
        }
        self.store.flush()?;
        self.ended.count(record.state());
        self.changed();
        tracing::info!(name, state = ?record.state(), "job run ended");
        Ok(())
    }

    /// Computes the result of a job, recording finished family items as it goes.
    fn execute(
        &self,
        name: &str,
        request: &proto::ExploreRequest,
        live: &Live,
    ) -> Result<proto::ExploreResult, Stopped> {
        let job = family::job_from_request(request).map_err(|error| Stopped::Invalid(error.message))?;
        let elapsed_before = live.elapsed_before;
        // A deadline past what the clock can hold is no deadline.
        let deadline = request
            .max_duration
            .and_then(|limit| Duration::try_from(limit).ok())
            .and_then(|limit| Instant::now().checked_add(limit.saturating_sub(elapsed_before)));
        let memo = CountingMemo { inner: &*self.memo, live };
        let mut solver = SearchContext::new(Budget::new(deadline, live.cancel.clone()), &memo);
        solver.table_limit = self.config.table_limit;
        let base_positions = live.positions_computed.load(Ordering::Relaxed);
        let add_stats =
            |stats: Stats| live.positions_computed.store(base_positions + stats.positions_computed, Ordering::Relaxed);
        let started = Instant::now();
        let answer = match job {
            Job::Solve(position) => {
                live.items_total.store(1, Ordering::Relaxed);
                let value = position.value(&mut solver)?;
                Answer::Solve(proto::SolveResponse {
                    outcome: convert::outcome_to_proto(value) as i32,
                    grundy: value.nimber(),
                    stats: Some(convert::stats_to_proto(solver.stats, started.elapsed())),
                    ..Default::default()
                })
            }
            Job::BestMove(position) => {
                live.items_total.store(1, Ordering::Relaxed);
                let (value, mv) = position.best_move(&mut solver)?;
                Answer::BestMove(proto::BestMoveResponse {
                    outcome: convert::outcome_to_proto(value) as i32,
                    grundy: value.nimber(),
                    r#move: mv.as_ref().map(convert::move_to_proto),
                    after: mv.map(|mv| convert::position_to_proto(&position.play_unchecked(&mv))),
                    stats: Some(convert::stats_to_proto(solver.stats, started.elapsed())),
                })
            }
            Job::Family(family) => {
                let (rows, total_rows) = self.run_family(name, &family, &mut solver, live, &add_stats)?;
                let next_page_token =
                    if total_rows > rows.len() as u64 { rows.len().to_string() } else { String::new() };
                return Ok(proto::ExploreResult { answer: None, rows, total_rows, next_page_token });
            }
        };
        add_stats(solver.stats);
        live.items_done.store(1, Ordering::Relaxed);
        Ok(proto::ExploreResult { answer: Some(answer), ..Default::default() })
    }

    /// Computes every item of a family not yet recorded, recording each (the records stay: they are
    /// the table ListExploreRows pages through); returns the first [`INLINE_ROWS`] rows and the
    /// table's length.
    fn run_family(
        &self,
        name: &str,
        family: &Family,
        solver: &mut SearchContext,
        live: &Live,
        add_stats: &dyn Fn(Stats),
    ) -> Result<(Vec<proto::ExploreRow>, u64), Stopped> {
        let items = family.items();
        let recorded = self.store.finished_items(name)?;
        live.items_total.store(items.len() as u64, Ordering::Relaxed);
        live.items_done.store(recorded.len() as u64, Ordering::Relaxed);
        live.items_done_before_run.store(recorded.len() as u64, Ordering::Relaxed);
        for (index, item) in items.iter().enumerate() {
            if recorded.contains(&(index as u64)) {
                continue;
            }
            solver.budget.check()?;
            let board = item.board();
            let position = Position::Tetris(Box::new(board.clone()));
            let memo = solver.memo;
            let (value, cached) = match position.value_without_search(&|game, key| memo.get(game, key)) {
                Some((value, found)) => (value, found > 0),
                None => (position.value(solver)?, false),
            };
            let row = proto::ExploreRow {
                rows: board.height() as u32,
                columns: board.width() as u32,
                board: if item.show_board { item.rows.clone() } else { Vec::new() },
                blocked: item.blocked,
                count: item.count,
                outcome: convert::outcome_to_proto(value) as i32,
                grundy: value.nimber(),
                cached,
            };
            if !self.store.put_item(name, index as u64, &row)? {
                return Err(Stopped::Superseded);
            }
            live.items_done.fetch_add(1, Ordering::Relaxed);
            add_stats(solver.stats);
        }
        Ok((self.store.rows(name, 0, INLINE_ROWS)?, items.len() as u64))
    }

    /// The checkpointer thread: once a second saves running jobs' progress, renews their leases
    /// and flushes the memo; once a minute (or once per retention, if shorter) deletes finished
    /// operations past their retention; with a shared store, every [`CHECKPOINT_EVERY`] queues
    /// unfinished jobs nobody holds the lease of.
    fn checkpoints(&self) {
        let sweep_every = SWEEP_EVERY.min(self.config.retention);
        let mut last_sweep: Option<Instant> = None;
        loop {
            {
                let queue = lock(&self.queue);
                if self.stopping.load(Ordering::Relaxed) {
                    return;
                }
                let _ = self.wake.wait_timeout(queue, CHECKPOINT_EVERY);
            }
            if self.stopping.load(Ordering::Relaxed) {
                return;
            }
            self.memo.flush();
            if self.store.reopen() {
                if let Err(error) = self.queue_unfinished() {
                    tracing::warn!(%error, "queueing the unfinished jobs again failed");
                }
            }
            self.store.renew();
            if let Err(error) = self.save_progress() {
                if self.checkpoint_warnings.allow() {
                    tracing::warn!(%error, "saving job progress failed (one line a minute)");
                }
            }
            if self.store.is_shared() {
                if let Err(error) = self.adopt_unclaimed() {
                    if self.checkpoint_warnings.allow() {
                        tracing::warn!(%error, "looking for jobs of stopped replicas failed (one line a minute)");
                    }
                }
            }
            if last_sweep.is_none_or(|at| at.elapsed() >= sweep_every) {
                last_sweep = Some(Instant::now());
                if let Err(error) = self.sweep() {
                    tracing::warn!(%error, "deleting expired operations failed");
                }
            }
            self.changed();
        }
    }

    fn save_progress(&self) -> StoreResult<()> {
        let running: Vec<(String, Arc<Live>)> =
            lock(&self.live).iter().map(|(name, live)| (name.clone(), live.clone())).collect();
        for (name, live) in running {
            let _transition = lock(&self.transitions);
            let saved = match self.store.get(&name)? {
                Some(mut record) => {
                    record.progress = Some(live.snapshot(record.progress.unwrap_or_default()));
                    self.store.put(&record)?
                }
                None => Put::Gone,
            };
            match saved {
                Put::Saved => {}
                // It ended: cancelled on another replica of the fleet.
                Put::Ended => {
                    live.cancelled_by_user.store(true, Ordering::Relaxed);
                    live.cancel.store(true, Ordering::Relaxed);
                }
                // Its record is gone (a flushed or evicting Redis): the run stops, and the worker,
                // finding no record, writes nothing and says so.
                Put::Gone => live.cancel.store(true, Ordering::Relaxed),
            }
        }
        Ok(())
    }

    /// Deletes finished operations that ended longer than the retention ago.
    fn sweep(&self) -> StoreResult<()> {
        let Some(cutoff) = SystemTime::now().checked_sub(self.config.retention) else { return Ok(()) };
        let cutoff: prost_types::Timestamp = cutoff.into();
        for record in self.store.records_after("").collect::<StoreResult<Vec<_>>>()? {
            let ended = record.progress.as_ref().and_then(|progress| progress.end_time);
            if record.is_done() && ended.is_some_and(|end| (end.seconds, end.nanos) < (cutoff.seconds, cutoff.nanos)) {
                let _transition = lock(&self.transitions);
                self.store.delete(&record)?;
                tracing::info!(name = record.name, "deleted an operation past its retention");
            }
        }
        Ok(())
    }
}

impl Shared {
    /// Queues every unfinished job of the local store that is neither queued nor running (at the
    /// start, and when the store opens again after a full disk), counting a resume for each that
    /// was running.
    fn queue_unfinished(&self) -> StoreResult<()> {
        let records = self.store.records_after("").collect::<StoreResult<Vec<_>>>()?;
        for mut record in records {
            let _transition = lock(&self.transitions);
            if record.is_done()
                || lock(&self.queue).contains(&record.name)
                || lock(&self.live).contains_key(&record.name)
            {
                continue;
            }
            if record.state() == ExploreState::Running {
                record.progress_mut().times_resumed += 1;
            }
            record.progress_mut().set_state(ExploreState::Queued);
            if self.store.put(&record)? == Put::Saved {
                tracing::info!(name = record.name, "resuming an unfinished job");
                lock(&self.queue).push_back(record.name);
                self.wake.notify_all();
            }
        }
        self.store.flush()
    }

    /// Queues the unfinished jobs of the shared store that nobody holds the lease of (not yet
    /// started, or their replica died), unless queued or running here already.
    fn adopt_unclaimed(&self) -> StoreResult<()> {
        let unclaimed = self.store.unclaimed()?;
        let mut queue = lock(&self.queue);
        let live = lock(&self.live);
        for name in unclaimed {
            if !queue.contains(&name) && !live.contains_key(&name) {
                tracing::info!(name, "queueing a job nobody runs");
                queue.push_back(name);
                self.wake.notify_all();
            }
        }
        Ok(())
    }
}

/// Says that job `name`'s record vanished while it ran (deleted behind the runner's back, or lost
/// by the store: a `FLUSHALL` or an eviction in Redis): its run stopped and wrote nothing more.
fn record_vanished(name: &str) {
    tracing::error!(
        name,
        "the job's record vanished from the job store (flushed or evicted?); its run stopped and wrote nothing more"
    );
}

/// Job threads yield to interactive calls: they run at nice 10 (Linux sets it per thread).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread, no memory passed.
    unsafe {
        let thread = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, thread, 10);
    }
}

/// The CPU-time clock of the calling thread, readable from any thread while it lives.
fn thread_cpu_clock() -> Option<libc::clockid_t> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `clock` is a valid out-pointer; pthread_self is the calling thread.
    let result = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) };
    (result == 0).then_some(clock)
}

/// The CPU time on `clock` so far (zero if it cannot be read).
fn cpu_time(clock: libc::clockid_t) -> Duration {
    let mut time = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `time` is a valid out-pointer.
    if unsafe { libc::clock_gettime(clock, &mut time) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(time.tv_sec as u64, time.tv_nsec as u32)
}
