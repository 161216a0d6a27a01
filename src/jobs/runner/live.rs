//! A running job's live counters (read by GetOperation and the checkpointer while it runs), the
//! memo it solves through, and its thread's priority.

use super::*;
use crate::thread_cpu::{HelperCpu, ThreadClock};

/// The live counters of a running job.
pub(super) struct Live {
    pub(super) cancel: Arc<AtomicBool>,
    pub(super) cancelled_by_user: AtomicBool,
    /// Set when another replica of the fleet took the job (this one lost its lease): the run
    /// stops and writes nothing more.
    pub(super) superseded: AtomicBool,
    pub(super) components_searched: AtomicU64,
    pub(super) cache_hits: AtomicU64,
    pub(super) positions_computed: AtomicU64,
    /// What the job's searches did, over all its runs.
    pub(super) search: Mutex<SearchCounts>,
    pub(super) items_done: AtomicU64,
    pub(super) items_total: AtomicU64,
    pub(super) items_done_before_run: AtomicU64,
    /// What the job's family found so far, as the family says it (a chain's, say).
    pub(super) family: Mutex<Option<proto::explore_progress::Family>>,
    pub(super) started: Instant,
    pub(super) elapsed_before: Duration,
    pub(super) cpu_before: Duration,
    pub(super) cpu_clock: Option<ThreadClock>,
    pub(super) cpu_at_start: Duration,
    /// The CPU time of the threads helping this run's searches.
    pub(super) helper_cpu: Arc<HelperCpu>,
}

impl Live {
    /// Stops the run: another replica of the fleet runs the job now.
    pub(super) fn supersede(&self) {
        self.superseded.store(true, Ordering::Relaxed);
        self.cancel.store(true, Ordering::Relaxed);
    }

    pub(super) fn start(record: &JobRecord, cpu_clock: Option<ThreadClock>) -> Self {
        let progress = record.progress.unwrap_or_default();
        let duration = |value: Option<prost_types::Duration>| value.and_then(|d| d.try_into().ok()).unwrap_or_default();
        Self {
            cancel: Arc::new(AtomicBool::new(false)),
            cancelled_by_user: AtomicBool::new(false),
            superseded: AtomicBool::new(false),
            components_searched: AtomicU64::new(progress.components_searched),
            cache_hits: AtomicU64::new(progress.cache_hits),
            positions_computed: AtomicU64::new(progress.positions_computed),
            search: Mutex::new(progress.search.map(SearchCounts::from).unwrap_or_default()),
            items_done: AtomicU64::new(progress.items_done),
            items_total: AtomicU64::new(progress.items_total),
            items_done_before_run: AtomicU64::new(progress.items_done),
            family: Mutex::new(progress.family),
            started: Instant::now(),
            elapsed_before: duration(progress.elapsed),
            cpu_before: duration(progress.cpu_time),
            cpu_clock,
            cpu_at_start: cpu_clock.map_or(Duration::ZERO, ThreadClock::cpu_time),
            helper_cpu: Arc::default(),
        }
    }

    /// `progress` with this run's live counters.
    pub(super) fn snapshot(&self, mut progress: proto::ExploreProgress) -> proto::ExploreProgress {
        let run_time = self.started.elapsed();
        progress.components_searched = self.components_searched.load(Ordering::Relaxed);
        progress.cache_hits = self.cache_hits.load(Ordering::Relaxed);
        progress.positions_computed = self.positions_computed.load(Ordering::Relaxed);
        progress.search = Some((*lock(&self.search)).into());
        let (done, total) = (self.items_done.load(Ordering::Relaxed), self.items_total.load(Ordering::Relaxed));
        progress.items_done = done;
        progress.items_total = total;
        progress.family.clone_from(&lock(&self.family));
        progress.elapsed = (self.elapsed_before + run_time).try_into().ok();
        let own = self.cpu_clock.map_or(Duration::ZERO, |clock| clock.cpu_time().saturating_sub(self.cpu_at_start));
        let cpu = own + self.helper_cpu.total();
        progress.cpu_time = (self.cpu_before + cpu).try_into().ok();
        let done_this_run = done.saturating_sub(self.items_done_before_run.load(Ordering::Relaxed));
        progress.eta = (done_this_run > 0 && total > 1)
            .then(|| run_time.mul_f64(total.saturating_sub(done) as f64 / done_this_run as f64))
            .and_then(|eta| eta.try_into().ok());
        progress
    }
}

/// The memo a job solves through: the shared store, counting this job's hits and searches live.
pub(super) struct CountingMemo<'a> {
    pub(super) inner: &'a dyn Memo,
    pub(super) live: &'a Live,
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

    fn get_bytes(&self, game: GameTag, key: &[u8]) -> Option<Vec<u8>> {
        self.inner.get_bytes(game, key)
    }

    fn put_bytes(&self, game: GameTag, key: &[u8], bytes: Vec<u8>, cost: u64) {
        self.inner.put_bytes(game, key, bytes, cost);
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

/// Job threads yield to interactive calls: they run at nice 10 (Linux sets it per thread).
pub(super) fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread, no memory passed.
    unsafe {
        let thread = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, thread, 10);
    }
}
