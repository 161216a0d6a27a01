//! The runner's work: the worker threads (claim, run, save the end), executing a job (a single
//! solve or a family, item by item), and the checkpointer (progress, leases, retention, adopting
//! jobs nobody runs, reopening a store that waited for space).

use super::live::{lower_priority, CountingMemo};
use super::parts::{Items, PartList, Positions, Role};
use super::*;
use crate::games::family::{Row, ValuesRow};
use crate::games::Position;
use crate::thread_cpu::ThreadClock;

/// What a worker does next.
pub(super) enum Work {
    /// Runs a job of its replica's queue.
    Run(String),
    /// Helps another replica with its job (see [`super::parts`]).
    Help(String),
}

/// How often a job's end asks a shared store again while it does not answer.
const STORE_RETRY: Duration = Duration::from_millis(200);

/// How many rows of a chain one write to the job store holds.
const ROWS_SAVED_AT_ONCE: usize = 16;

impl RunnerState {
    pub(super) fn changed(&self) {
        self.changes.send_modify(|generation| *generation += 1);
    }

    /// The operation of `existing`, the job of `request`'s request id, if it is the same request
    /// (AIP-155); ALREADY_EXISTS if another request took the id first (as idempotency keys work).
    pub(super) fn same_request(
        &self,
        existing: JobRecord,
        request: &proto::ExploreRequest,
    ) -> Result<Operation, JobsError> {
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
    pub(super) fn overlay(&self, mut record: JobRecord) -> JobRecord {
        if let Some(live) = lock(&self.live).get(&record.name).cloned() {
            if !record.is_done() {
                record.progress = Some(live.snapshot(record.progress.unwrap_or_default()));
            }
        }
        record
    }

    /// The next work: a queued job first, else a job of another replica to help with, waiting
    /// for one; `None` once stopping.
    pub(super) fn next_work(&self) -> Option<Work> {
        let mut queue = lock(&self.queue);
        loop {
            if self.stopping.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(name) = queue.pop_front() {
                return Some(Work::Run(name));
            }
            if let Some(name) = lock(&self.helping).offered.pop_front() {
                return Some(Work::Help(name));
            }
            queue = self.wake.wait(queue).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// A worker thread: runs queued jobs one after another, and helps other replicas with theirs
    /// when none waits, until stopping.
    pub(super) fn work(&self) {
        lower_priority();
        let cpu_clock = ThreadClock::of_this_thread();
        while let Some(work) = self.next_work() {
            match work {
                Work::Run(name) => {
                    if let Err(error) = self.run(&name, cpu_clock) {
                        tracing::error!(
                            name,
                            %error,
                            "the job store failed; the job resumes once the store can write again (at the latest at the next start; in a fleet, once the store answers)"
                        );
                    }
                }
                Work::Help(name) => {
                    if let Err(error) = self.help(&name) {
                        if self.checkpoint_warnings.allow() {
                            tracing::warn!(name, %error, "helping another replica with its job failed (one line a minute)");
                        }
                    }
                }
            }
        }
    }

    /// Runs job `name` to its end (or until stopping) and saves its record.
    /// With a shared store, only under the job's lease: a job another replica runs is skipped.
    pub(super) fn run(&self, name: &str, cpu_clock: Option<ThreadClock>) -> StoreResult<()> {
        if !self.store.claim(name)? {
            return Ok(());
        }
        let result = self.run_claimed(name, cpu_clock);
        self.store.release(name);
        result
    }

    pub(super) fn run_claimed(&self, name: &str, cpu_clock: Option<ThreadClock>) -> StoreResult<()> {
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

        if live.superseded.load(Ordering::Relaxed) {
            lock(&self.live).remove(name);
            tracing::warn!(name, "another replica of the fleet runs this job now (it took the lease this one lost); this run stopped and wrote nothing more");
            self.changed();
            return Ok(());
        }
        // What the run found is kept through an outage of a shared store (see [`Self::answered`]).
        let record = self.answered(|| self.store.get(name));
        let _transition = lock(&self.transitions);
        lock(&self.live).remove(name);
        let Some(mut record) = record? else {
            self.record_vanished(name);
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
            Ok(Err(Stopped::Interrupted(
                past @ (Interrupted::PastComputeLimit { .. }
                | Interrupted::PastMisereDepth { .. }
                | Interrupted::PastMisereListing { .. }),
            ))) => record.finish(ExploreState::Failed, Some(status(tonic::Code::FailedPrecondition, past.to_string()))),
            Ok(Err(Stopped::Invalid(message))) => {
                record.finish(ExploreState::Failed, Some(status(tonic::Code::InvalidArgument, message)))
            }
            Ok(Err(Stopped::DataLoss(message))) => {
                record.finish(ExploreState::Failed, Some(status(tonic::Code::DataLoss, message)))
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
        match self.answered(|| self.store.put(&record))? {
            Put::Saved => {}
            Put::Ended => {
                // It ended first another way (cancelled on another replica of the fleet): that end stays.
                tracing::info!(name, "job run ended after the job had been cancelled");
                self.changed();
                return Ok(());
            }
            Put::Gone => {
                self.record_vanished(name);
                self.changed();
                return Ok(());
            }
            Put::Fenced => {
                tracing::warn!(
                    name,
                    "another replica of the fleet took this job meanwhile; this run's end is not written"
                );
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

    /// The store's answer to `call`. A shared store that does not answer is asked again every
    /// [`STORE_RETRY`] until it does or the runner stops, so that a run that went on through an
    /// outage keeps its end; a local store's error is returned at once.
    fn answered<T>(&self, mut call: impl FnMut() -> StoreResult<T>) -> StoreResult<T> {
        loop {
            match call() {
                Err(error) if self.store.is_shared() && !self.stopping.load(Ordering::Relaxed) => {
                    if self.checkpoint_warnings.allow() {
                        tracing::warn!(%error, "the job store does not answer: a job's end waits for it (one line a minute)");
                    }
                    std::thread::sleep(STORE_RETRY);
                }
                answer => return answer,
            }
        }
    }

    /// A context for a job's searches: its budget and memo, the runner's table limit and threads.
    pub(super) fn search_context<'m>(&self, budget: Budget, memo: &'m dyn Memo) -> SearchContext<'m> {
        let mut context = SearchContext::new(budget, memo);
        context.table_limit = self.config.table_limit;
        context.threads = self.config.search_threads.clone();
        context
    }

    /// Computes the result of a job, recording finished family items as it goes.
    pub(super) fn execute(
        &self,
        name: &str,
        request: &proto::ExploreRequest,
        live: &Live,
    ) -> Result<proto::ExploreResult, Stopped> {
        let job = wire::job::job_from_request(request).map_err(|error| Stopped::Invalid(error.message))?;
        // A limit lowered since the job was accepted.
        job.check_memory(self.config.job_bytes())
            .map_err(|over| Stopped::Invalid(InvalidArgument::from(over).message))?;
        let elapsed_before = live.elapsed_before;
        // A deadline past what the clock can hold is no deadline.
        let deadline = request
            .max_duration
            .and_then(|limit| Duration::try_from(limit).ok())
            .and_then(|limit| Instant::now().checked_add(limit.saturating_sub(elapsed_before)));
        let memo = CountingMemo { inner: &*self.memo, live };
        let mut context = self.search_context(Budget::new(deadline, live.cancel.clone()), &memo);
        context.helper_cpu = live.helper_cpu.clone();
        let (base_positions, base_search) = (live.positions_computed.load(Ordering::Relaxed), *lock(&live.search));
        let add_stats = |stats: Stats| {
            live.positions_computed.store(base_positions + stats.positions_computed, Ordering::Relaxed);
            let mut search = base_search;
            search += stats.search;
            *lock(&live.search) = search;
        };
        let started = Instant::now();
        let answer = match job {
            Job::Solve(position) => {
                live.items_total.store(1, Ordering::Relaxed);
                self.solve_parts(name, (&position, request.split_across_replicas), &mut context, &add_stats)?;
                let value = position.value(&mut context)?;
                Answer::Solve(wire::solve_response(&position, value, context.stats, started.elapsed()))
            }
            Job::BestMove(position) => {
                live.items_total.store(1, Ordering::Relaxed);
                self.solve_parts(name, (&position, request.split_across_replicas), &mut context, &add_stats)?;
                let (value, best) = position.best_move(&mut context)?;
                Answer::BestMove(wire::best_move_response(&position, value, best, context.stats, started.elapsed()))
            }
            Job::Misere { position, best_move } => {
                live.items_total.store(1, Ordering::Relaxed);
                let answer = position.misere(&mut context)?;
                let (stats, elapsed) = (context.stats, started.elapsed());
                match best_move {
                    true => Answer::BestMove(wire::misere_best_move_response(&position, &answer, stats, elapsed)),
                    false => Answer::Solve(wire::misere_solve_response(&answer, stats, elapsed)),
                }
            }
            Job::Family(family) => {
                let (rows, total_rows) = self.run_family(name, &*family, &mut context, live, &add_stats)?;
                return Ok(proto::ExploreResult { answer: None, rows, total_rows, ..Default::default() });
            }
            Job::Chain(chain) => {
                let (answer, rows, total_rows) = self.run_chain(name, &*chain, &context.budget, live)?;
                return Ok(proto::ExploreResult { answer: Some(answer), rows, total_rows, ..Default::default() });
            }
        };
        add_stats(context.stats);
        live.items_done.store(1, Ordering::Relaxed);
        Ok(proto::ExploreResult { answer: Some(answer), ..Default::default() })
    }

    /// Computes every item of a family not yet recorded (in a fleet, with the replicas that take
    /// some: see [`super::parts`]), recording each (the records stay: they are the table
    /// ListExploreRows pages through); returns the first [`INLINE_ROWS`] rows and the table's
    /// length.
    pub(super) fn run_family(
        &self,
        name: &str,
        family: &dyn Family,
        context: &mut SearchContext,
        live: &Live,
        add_stats: &dyn Fn(Stats),
    ) -> Result<(Vec<proto::ExploreRow>, u64), Stopped> {
        let budget = context.budget.clone();
        let mut parts = Items::new(self, (name, family), context, Some((live, add_stats)));
        let total = parts.count();
        live.items_total.store(total, Ordering::Relaxed);
        let recorded = self.store.finished_items(name)?.len() as u64;
        live.items_done.store(recorded, Ordering::Relaxed);
        live.items_done_before_run.store(recorded, Ordering::Relaxed);
        self.work_on_parts(name, Role::Owner, &budget, &mut parts)?;
        self.recompute_holes(name, total, &mut parts)?;
        Ok((self.store.rows(name, 0, INLINE_ROWS, INLINE_ROWS_BYTES)?.rows, total))
    }

    /// Reads every row of family job `name`'s table (of `total` rows) back, and computes again each
    /// one missing or failing its check (deleted, edited, cut short, or written without the fleet's
    /// secret in Redis; counted): a table is whole and authentic when its job succeeds. Rows that
    /// keep vanishing, pass after pass, end the job with DATA_LOSS.
    fn recompute_holes(&self, name: &str, total: u64, parts: &mut Items) -> Result<(), Stopped> {
        const PASSES: usize = 3;
        for _ in 0..PASSES {
            let holes = self.holes(name, total)?;
            if holes.is_empty() {
                return Ok(());
            }
            tracing::warn!(
                name,
                rows = holes.len(),
                "rows of a job's table were missing or failed their check; computing them again"
            );
            for hole in holes {
                parts.compute(hole)?;
                self.rows_recomputed.fetch_add(1, Ordering::Relaxed);
            }
            parts.save()?;
        }
        Err(Stopped::DataLoss(format!(
            "rows of the table kept vanishing from the job store or failing their check, {PASSES} times: is something \
             else writing to the jobs Redis?"
        )))
    }

    /// The rows of job `name`'s table (of `total` rows) that are missing or fail their check.
    fn holes(&self, name: &str, total: u64) -> StoreResult<Vec<u64>> {
        const AT_ONCE: u64 = 4096;
        let (mut holes, mut next) = (Vec::new(), 0);
        while next < total {
            let read = self.store.rows(name, next, AT_ONCE.min(total - next) as usize, usize::MAX)?;
            next += read.rows.len() as u64;
            if read.hole {
                holes.push(next);
                next += 1;
            }
        }
        Ok(holes)
    }

    /// When the request asks for a split and the fleet shares values (`--shared-cache`), computes
    /// the positions `position`'s moves lead to with the replicas that take some (see
    /// [`super::parts`]), so that its own search finds them in the memo; nothing otherwise.
    fn solve_parts(
        &self,
        name: &str,
        position: (&Position, bool),
        context: &mut SearchContext,
        add_stats: &dyn Fn(Stats),
    ) -> Result<(), Stopped> {
        if !self.store.is_shared() || !self.config.share_work {
            return Ok(());
        }
        let budget = context.budget.clone();
        let mut parts = Positions::new(self, position, context);
        let outcome = self.work_on_parts(name, Role::Owner, &budget, &mut parts);
        add_stats(context.stats);
        outcome.map(drop)
    }

    /// Computes a chain from the state its job saved (or its start), step by step, saving the state
    /// and the rows it completes at least every [`CHECKPOINT_EVERY`] (less often once a save takes
    /// longer than a tenth of that: saving costs at most a tenth of the time), and when the budget
    /// ends (a cancel, the shutdown, `max_duration`): a `kill -9` loses what was computed since the
    /// last save. Ends when the state is done, early or not (then the items total is the items
    /// done). Returns the answer, the first [`INLINE_ROWS`] rows and the table's length.
    pub(super) fn run_chain(
        &self,
        name: &str,
        chain: &dyn Chain,
        budget: &Budget,
        live: &Live,
    ) -> Result<(Answer, Vec<proto::ExploreRow>, u64), Stopped> {
        let recorded = self.store.finished_items(name)?;
        // Rows saved before: the leading run of them (rows are saved in order); the state goes on
        // from their values.
        let saved = (0..).take_while(|index| recorded.contains(index)).count();
        let saved: Vec<ValuesRow> =
            self.store.rows(name, 0, saved, usize::MAX)?.rows.iter().map(wire::job::values_row_from_proto).collect();
        let mut state = chain.start(&saved);
        let saved_rows = state.complete_rows();
        let show = |state: &dyn ChainState| {
            live.items_total.store(state.items_total(), Ordering::Relaxed);
            live.items_done.store(state.items_done(), Ordering::Relaxed);
            *lock(&live.family) = Some(wire::job::chain_progress_to_proto(state.progress()));
        };
        show(&*state);
        live.items_done_before_run.store(state.items_done(), Ordering::Relaxed);
        let outcome = self.run_chain_steps(name, &mut *state, budget, show, saved_rows);
        // Whatever ended the run, the values it computed serve solves.
        state.remember(&*self.memo);
        outcome?;
        let total = state.rows();
        // The last row: a proven period may have shortened the table since it was saved whole.
        if total > 0 && !self.store.put_item(name, total - 1, &values_row(&*state, total - 1))? {
            return Err(Stopped::Superseded);
        }
        live.items_total.store(state.items_done(), Ordering::Relaxed);
        let inline = self.store.rows(name, 0, INLINE_ROWS.min(total as usize), INLINE_ROWS_BYTES)?.rows;
        Ok((wire::job::chain_answer_to_proto(state.answer()), inline, total))
    }

    /// Steps `state` until it is done, showing its progress and saving its rows from `saved_rows`
    /// on as [`Self::run_chain`] says.
    fn run_chain_steps(
        &self,
        name: &str,
        state: &mut dyn ChainState,
        budget: &Budget,
        show: impl Fn(&dyn ChainState),
        mut saved_rows: u64,
    ) -> Result<(), Stopped> {
        let mut last_save = (Instant::now(), Duration::ZERO);
        let mut last_show = Instant::now();
        while !state.is_done() {
            let stepped = state.step(budget);
            if let Some(outgrown) = state.outgrew(self.config.job_bytes()) {
                self.save_chain_rows(name, state, saved_rows)?;
                return Err(Stopped::Invalid(outgrown));
            }
            // The progress (its candidate period looks over every value) four times a second.
            if last_show.elapsed() >= SHOW_EVERY || stepped.is_err() || state.is_done() {
                show(state);
                last_show = Instant::now();
            }
            let (at, took) = last_save;
            if stepped.is_err() || state.is_done() || at.elapsed() >= CHECKPOINT_EVERY.max(took * 10) {
                let started = Instant::now();
                saved_rows = self.save_chain_rows(name, state, saved_rows)?;
                last_save = (Instant::now(), started.elapsed());
            }
            stepped?;
        }
        Ok(())
    }

    /// Saves the rows of `state` from row `from` on (they are the chain's checkpoint: a resumed run
    /// goes on from their values): the complete ones and the last (which later
    /// saves write again while it fills). Returns how many rows are complete and saved.
    fn save_chain_rows(&self, name: &str, state: &dyn ChainState, from: u64) -> Result<u64, Stopped> {
        let first = from.min(state.complete_rows());
        // A few rows at a time: their memory is reused rather than a whole second's rows built at once.
        for start in (first..state.rows()).step_by(ROWS_SAVED_AT_ONCE) {
            let end = (start + ROWS_SAVED_AT_ONCE as u64).min(state.rows());
            let rows: Vec<proto::ExploreRow> = (start..end).map(|index| values_row(state, index)).collect();
            if !self.store.put_items(name, start, &rows)? {
                return Err(Stopped::Superseded);
            }
        }
        Ok(state.complete_rows())
    }

    /// The checkpointer thread: once a second saves running jobs' progress, renews their leases
    /// and flushes the memo; once a minute (or once per retention, if shorter) deletes finished
    /// operations past their retention; with a shared store, every [`CHECKPOINT_EVERY`] queues
    /// unfinished jobs nobody holds the lease of.
    pub(super) fn checkpoints(&self) {
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
            for name in self.store.renew() {
                if let Some(live) = lock(&self.live).get(&name) {
                    live.supersede();
                }
            }
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
                if self.config.share_work {
                    if let Err(error) = self.offer_help() {
                        if self.checkpoint_warnings.allow() {
                            tracing::warn!(%error, "looking for jobs to help with failed (one line a minute)");
                        }
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

    pub(super) fn save_progress(&self) -> StoreResult<()> {
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
                // Another replica took the job: this run stops and writes nothing more.
                Put::Fenced => live.supersede(),
            }
        }
        Ok(())
    }

    /// Deletes finished operations that ended longer than the retention ago.
    pub(super) fn sweep(&self) -> StoreResult<()> {
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

impl RunnerState {
    /// Queues every unfinished job of the local store that is neither queued nor running (at the
    /// start, and when the store opens again after a full disk), counting a resume for each that
    /// was running.
    pub(super) fn queue_unfinished(&self) -> StoreResult<()> {
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
    pub(super) fn adopt_unclaimed(&self) -> StoreResult<()> {
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

impl RunnerState {
    /// Says that job `name`'s record vanished while it ran (deleted behind the runner's back, or
    /// lost by the store: a `FLUSHALL`, an eviction, a restart without persistence in Redis): its
    /// run stopped and wrote nothing more. The replica remembers it for [`LOST_GRACE`], so that
    /// GetOperation and WaitOperation say what became of the job rather than NOT_FOUND.
    pub(super) fn record_vanished(&self, name: &str) {
        tracing::error!(
            name,
            "the job's record vanished from the job store (flushed, evicted, or Redis restarted empty?); its run \
             stopped and wrote nothing more"
        );
        let mut lost = lock(&self.lost);
        lost.retain(|_, when: &mut SystemTime| when.elapsed().is_ok_and(|age| age < LOST_GRACE));
        if lost.len() < LOST_MOST {
            lost.insert(name.to_string(), SystemTime::now());
        }
    }

    /// DATA_LOSS for job `name` if this replica saw its record vanish within [`LOST_GRACE`].
    pub(super) fn lost(&self, name: &str) -> Option<JobsError> {
        let when = *lock(&self.lost).get(name)?;
        let age = when.elapsed().ok().filter(|age| *age < LOST_GRACE)?;
        let when: prost_types::Timestamp = when.into();
        Some(JobsError::DataLoss(format!(
            "the job store lost the record of operation {name} while the job ran, {}s ago (at {}): the jobs Redis \
             restarted empty, was flushed or evicted keys (it must keep its data: appendonly yes, maxmemory-policy \
             noeviction); the job's run stopped, and what it computed of the positions is in the cache: submit the \
             request again to run it anew",
            age.as_secs(),
            when.seconds,
        )))
    }
}

/// Row `index` of a chain's table as the job store keeps it.
fn values_row(state: &dyn ChainState, index: u64) -> proto::ExploreRow {
    wire::job::row_to_proto(Row::Values(state.row(index)))
}
