//! One job's work divided among the replicas of a fleet (`--shared-cache`): its **parts**, leased
//! one at a time through the job store ([`JobRecords::claim_part`]), so that every replica with a
//! free worker takes some.
//!
//! - A family's parts are its items: whoever computes one records its row in the job store.
//! - A sum's parts, when its request asks for a split (`split_across_replicas`), are its components
//!   that need a search ([`Position::fleet_parts`]): whoever computes one leaves its value in the
//!   shared memo, where the owner's solve then finds it. A part is done once its value is found
//!   there without a search. The components are independent questions, so dividing them costs no
//!   more CPU than one replica's solve; one search is never divided (it cost 19 to 380 times one
//!   replica's CPU: the split is refused for a position with fewer than two parts).
//!
//! The job's **owner** (the replica holding the job's lease) works through the parts like any
//! other replica, then waits for the parts others hold, taking over any whose lease expires (its
//! replica died), and ends the job: it alone writes the result. A **helper** takes the parts
//! nobody holds, from the last, one pass, then goes back to its own queue. A part computed twice (a lease that
//! expired under a slow replica) gives the same answer twice: the values are exact.
//!
//! **When the shared store does not answer** (Redis down), the sharing pauses and each replica
//! goes on with what it has. The owner computes every part not known to be done, alone and
//! without leases, and keeps the rows it cannot record; a helper finishes the part it holds and
//! takes no other. Each records what it kept once the store answers again, and only then does the
//! owner end the job.

use super::*;
use crate::games::family::Item;
use crate::games::Position;

/// The most parts a single position is divided into.
pub(super) const MOST_POSITION_PARTS: usize = 256;
/// How often the owner looks again at the parts other replicas hold.
const OWNER_POLL: Duration = Duration::from_millis(200);

/// Who works on a job's parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// The replica running the job: works until every part is done.
    Owner,
    /// Another replica: takes the parts nobody holds, once.
    Helper,
}

/// What this replica does for the fleet: the jobs of others it was offered or helps now.
#[derive(Default)]
pub(super) struct Helping {
    /// Jobs of other replicas to help with, when a worker is free.
    pub(super) offered: VecDeque<String>,
    /// The jobs a worker helps with now, and the flag that stops it.
    pub(super) now: HashMap<String, Arc<AtomicBool>>,
    /// Jobs found with no part left to take: not offered again while they run.
    pub(super) exhausted: std::collections::HashSet<String>,
}

/// How many parts this replica computed and what their leases cost, for the metrics.
#[derive(Default)]
pub(super) struct PartCounts {
    pub(super) of_own_jobs: AtomicU64,
    pub(super) of_other_jobs: AtomicU64,
    pub(super) computing: AtomicU64,
    pub(super) lease_nanos: AtomicU64,
}

/// What a part loop needs to know of its parts.
pub(super) trait PartList {
    /// The parts not done, as far as a look at the store shows (once per pass).
    fn pending(&mut self) -> Result<Vec<u64>, Stopped>;
    /// Whether `part` is still not done (checked once its lease is taken).
    fn still_pending(&mut self, part: u64) -> Result<bool, Stopped>;
    /// Computes `part` and leaves it where the others find it (or keeps it, while the store
    /// does not answer, until [`PartList::save`]).
    fn compute(&mut self, part: u64) -> Result<(), Stopped>;
    /// The parts not done as far as this replica knows without asking the store.
    fn pending_here(&self) -> Vec<u64>;
    /// Records the parts computed while the store did not answer.
    fn save(&mut self) -> Result<(), Stopped>;
}

impl RunnerState {
    /// Works on the parts of job `name` in `role` (see the module doc): each under its lease, the
    /// leases given back however the part ended. Returns how many parts this replica computed.
    pub(super) fn work_on_parts(
        &self,
        name: &str,
        role: Role,
        budget: &Budget,
        parts: &mut dyn PartList,
    ) -> Result<u64, Stopped> {
        let shared = self.store.is_shared();
        let mut computed = 0;
        let mut outage = Outage::default();
        loop {
            let mut pending = match parts.save().and_then(|()| parts.pending()) {
                Ok(pending) => {
                    outage.over(name);
                    pending
                }
                Err(Stopped::Store(error)) if shared => {
                    outage.begins(name, &error);
                    if role == Role::Helper {
                        // Not a job with nothing left to take: it is offered again once the
                        // store answers.
                        self.saved(parts, budget)?;
                        return Err(Stopped::Store(error));
                    }
                    parts.pending_here()
                }
                Err(other) => return Err(other),
            };
            if pending.is_empty() {
                if !outage.now {
                    return Ok(computed);
                }
                // Done here: what it kept waits for the store.
                wait(OWNER_POLL, budget)?;
                continue;
            }
            if role == Role::Helper {
                // From the end: the owner goes from the start, so the two meet once, and each
                // works on neighbouring parts, which share the most with what its tables hold.
                pending.reverse();
            }
            let mut held_elsewhere = false;
            'parts: for part in pending {
                budget.check()?;
                if role == Role::Helper && !lock(&self.queue).is_empty() {
                    // A job of this replica's own is waiting.
                    return self.saved(parts, budget).map(|()| computed);
                }
                let leased = loop {
                    if !outage.ask_store() {
                        break false;
                    }
                    let asked = Instant::now();
                    let claimed = self.store.claim_part(name, part);
                    self.parts.lease_nanos.fetch_add(asked.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    match claimed {
                        Ok(true) => {
                            outage.over(name);
                            break true;
                        }
                        Ok(false) => {
                            held_elsewhere = true;
                            continue 'parts;
                        }
                        Err(error) if shared && role == Role::Owner => {
                            outage.begins(name, &error);
                            if !outage.is_long() {
                                // Perhaps a blip: the store is asked again before going on alone.
                                wait(OUTAGE_RETRY, budget)?;
                                continue;
                            }
                            break false;
                        }
                        Err(error) if shared => {
                            outage.begins(name, &error);
                            self.saved(parts, budget)?;
                            return Err(error.into());
                        }
                        Err(error) => return Err(error.into()),
                    }
                };
                let mut compute = || -> Result<bool, Stopped> {
                    // Another replica may have finished it between the look and the lease (not
                    // known while the store does not answer: then it is computed again).
                    if shared && leased {
                        match parts.still_pending(part) {
                            Ok(false) => return Ok(false),
                            Ok(true) | Err(Stopped::Store(_)) => {}
                            Err(other) => return Err(other),
                        }
                    }
                    self.parts.computing.fetch_add(1, Ordering::Relaxed);
                    let started = Instant::now();
                    let outcome = parts.compute(part);
                    self.parts.computing.fetch_sub(1, Ordering::Relaxed);
                    outcome?;
                    let seconds = started.elapsed().as_secs_f64();
                    tracing::debug!(name, part, ?role, seconds, "computed a part of a job");
                    Ok(true)
                };
                let outcome = compute();
                if leased {
                    let releasing = Instant::now();
                    self.store.release_part(name, part);
                    self.parts.lease_nanos.fetch_add(releasing.elapsed().as_nanos() as u64, Ordering::Relaxed);
                }
                if outcome? {
                    computed += 1;
                    let counter = if role == Role::Owner { &self.parts.of_own_jobs } else { &self.parts.of_other_jobs };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            }
            if role == Role::Helper {
                return self.saved(parts, budget).map(|()| computed);
            }
            if held_elsewhere {
                wait(OWNER_POLL, budget)?;
            }
        }
    }

    /// Records the parts computed while the store did not answer, waiting for it to answer (a
    /// store that is not shared is not waited for).
    fn saved(&self, parts: &mut dyn PartList, budget: &Budget) -> Result<(), Stopped> {
        loop {
            match parts.save() {
                Err(Stopped::Store(_)) if self.store.is_shared() => wait(OWNER_POLL, budget)?,
                saved => return saved,
            }
        }
    }

    /// Offers the jobs other replicas run to this replica's free workers, and stops helping with
    /// jobs that ended (called about once a second, with a shared store and `--shared-cache`).
    pub(super) fn offer_help(&self) -> StoreResult<()> {
        let helped: Vec<(String, Arc<AtomicBool>)> =
            lock(&self.helping).now.iter().map(|(name, stop)| (name.clone(), stop.clone())).collect();
        for (name, stop) in helped {
            if self.store.get(&name)?.is_none_or(|record| record.is_done()) {
                stop.store(true, Ordering::Relaxed);
            }
        }
        let busy = lock(&self.live).len() + lock(&self.queue).len();
        let free = {
            let helping = lock(&self.helping);
            self.config.max_jobs.max(1).saturating_sub(busy + helping.now.len() + helping.offered.len())
        };
        if free == 0 {
            return Ok(());
        }
        let running = self.store.running()?;
        let queue = lock(&self.queue);
        let live = lock(&self.live);
        let mut helping = lock(&self.helping);
        // Jobs no longer running are forgotten.
        helping.exhausted.retain(|name| running.contains(name));
        let mut offered = 0;
        for name in running {
            if offered == free {
                break;
            }
            let known = live.contains_key(&name)
                || queue.contains(&name)
                || helping.now.contains_key(&name)
                || helping.offered.contains(&name)
                || helping.exhausted.contains(&name);
            if !known {
                helping.offered.push_back(name);
                offered += 1;
            }
        }
        if offered > 0 {
            self.wake.notify_all();
        }
        Ok(())
    }

    /// Helps with job `name` of another replica: takes the parts nobody holds, once (a worker's
    /// turn). A job found with nothing to take is not offered again while it runs.
    pub(super) fn help(&self, name: &str) -> StoreResult<()> {
        let stop = Arc::new(AtomicBool::new(self.stopping.load(Ordering::Relaxed)));
        lock(&self.helping).now.insert(name.to_string(), stop.clone());
        let outcome = self.help_with(name, &stop);
        // Not a turn cut short by a job of this replica's own (read before `helping` is locked:
        // the workers lock the queue first).
        let own_job_waits = !lock(&self.queue).is_empty();
        let mut helping = lock(&self.helping);
        helping.now.remove(name);
        match outcome {
            // Nothing to take.
            Ok(0) if !own_job_waits => {
                helping.exhausted.insert(name.to_string());
                Ok(())
            }
            Ok(_) | Err(Stopped::Interrupted(_) | Stopped::Superseded | Stopped::Invalid(_) | Stopped::DataLoss(_)) => {
                Ok(())
            }
            Err(Stopped::Store(error)) => Err(error),
        }
    }

    fn help_with(&self, name: &str, stop: &Arc<AtomicBool>) -> Result<u64, Stopped> {
        let Some(record) = self.store.get(name)? else { return Ok(0) };
        if record.is_done() {
            return Ok(0);
        }
        let request = record.request.unwrap_or_default();
        let Ok(job) = wire::job::job_from_request(&request) else { return Ok(0) };
        let mut context = self.search_context(Budget::new(None, stop.clone()), &*self.memo);
        let budget = context.budget.clone();
        match job {
            Job::Family(family) => {
                let mut items = Items::new(self, (name, &*family), &mut context, None);
                self.work_on_parts(name, Role::Helper, &budget, &mut items)
            }
            Job::Solve(position) | Job::BestMove(position) => {
                let split = (&*position, request.split_across_replicas);
                let mut positions = Positions::new(self, split, &mut context);
                self.work_on_parts(name, Role::Helper, &budget, &mut positions)
            }
            Job::Chain(_) | Job::Misere { .. } => Ok(0),
        }
    }
}

/// How often a part loop asks a store that did not answer again, part by part.
const OUTAGE_RETRY: Duration = Duration::from_millis(100);

/// How long the store may not answer before the owner computes parts alone, without leases: a
/// shorter outage (a blip, a pause of Redis) is waited out, so it costs the parts in flight rather
/// than parts computed twice.
const ALONE_AFTER: Duration = Duration::from_secs(2);

/// Whether the shared store answers a part loop now, logged once per outage.
#[derive(Default)]
struct Outage {
    now: bool,
    /// When the outage began, and when the store last failed.
    began: Option<Instant>,
    failed: Option<Instant>,
}

impl Outage {
    /// Whether to ask the store: it answered last time, the outage is short, or [`OUTAGE_RETRY`]
    /// passed since the store last failed.
    fn ask_store(&self) -> bool {
        !self.now || !self.is_long() || self.failed.is_none_or(|failed| failed.elapsed() >= OUTAGE_RETRY)
    }

    /// Whether the store has not answered for [`ALONE_AFTER`] or longer.
    fn is_long(&self) -> bool {
        self.now && self.began.is_some_and(|began| began.elapsed() >= ALONE_AFTER)
    }

    fn begins(&mut self, name: &str, error: &StoreError) {
        self.failed = Some(Instant::now());
        if !self.now {
            self.began = self.failed;
        }
        if !std::mem::replace(&mut self.now, true) {
            tracing::warn!(
                name,
                %error,
                "the job store does not answer: the division of this job pauses, and this replica goes on with what it has"
            );
        }
    }

    fn over(&mut self, name: &str) {
        if std::mem::replace(&mut self.now, false) {
            tracing::info!(name, "the job store answers again: the parts computed meanwhile are recorded");
        }
    }
}

/// Sleeps `time`, a few milliseconds at a time, stopping early when `budget` ends.
fn wait(time: Duration, budget: &Budget) -> Result<(), Interrupted> {
    let until = Instant::now() + time;
    while Instant::now() < until {
        budget.check()?;
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

/// The items of a family as parts: an item is done once its row is recorded.
pub(super) struct Items<'r, 'c> {
    runner: &'r RunnerState,
    name: &'r str,
    items: Vec<Box<dyn Item>>,
    context: &'r mut SearchContext<'c>,
    /// The owner's live counters, and how it shows the search's statistics (none for a helper).
    owner: Option<(&'r Live, &'r dyn Fn(Stats))>,
    /// The items recorded at the last look at the store.
    recorded: std::collections::HashSet<u64>,
    /// The rows computed while the store did not answer, to record once it does.
    unsaved: Vec<(u64, proto::ExploreRow)>,
}

impl<'r, 'c> Items<'r, 'c> {
    /// The items of `family`, the parts of job `name`, computed in `context`; `owner` is given
    /// when the owner computes them.
    pub(super) fn new(
        runner: &'r RunnerState,
        (name, family): (&'r str, &dyn Family),
        context: &'r mut SearchContext<'c>,
        owner: Option<(&'r Live, &'r dyn Fn(Stats))>,
    ) -> Self {
        let items = family.items();
        Items { runner, name, items, context, owner, recorded: Default::default(), unsaved: Vec::new() }
    }

    /// How many items the family has.
    pub(super) fn count(&self) -> u64 {
        self.items.len() as u64
    }
}

impl PartList for Items<'_, '_> {
    fn pending(&mut self) -> Result<Vec<u64>, Stopped> {
        self.recorded = self.runner.store.finished_items(self.name)?;
        if let Some((live, _)) = self.owner {
            live.items_done.store(self.recorded.len() as u64, Ordering::Relaxed);
        }
        Ok(self.pending_here())
    }

    fn still_pending(&mut self, part: u64) -> Result<bool, Stopped> {
        Ok(!self.runner.store.has_item(self.name, part)?)
    }

    fn compute(&mut self, part: u64) -> Result<(), Stopped> {
        let item = &self.items[part as usize];
        let position = item.position();
        let memo = self.context.memo;
        let (value, cached) = match position.value_without_search(&|game, key| memo.get(game, key)) {
            Some((value, found)) => (value, found > 0),
            None => (position.value(self.context)?, false),
        };
        let row = wire::job::row_to_proto(Row::Item(item.row(value, cached)));
        match self.runner.store.put_item(self.name, part, &row) {
            Ok(true) => {}
            Ok(false) => return Err(Stopped::Superseded),
            Err(_) if self.runner.store.is_shared() => self.unsaved.push((part, row)),
            Err(error) => return Err(error.into()),
        }
        if let Some((live, add_stats)) = self.owner {
            live.items_done.fetch_add(1, Ordering::Relaxed);
            add_stats(self.context.stats);
        }
        Ok(())
    }

    fn pending_here(&self) -> Vec<u64> {
        let kept = |index: &u64| self.unsaved.iter().any(|(part, _)| part == index);
        (0..self.count()).filter(|index| !self.recorded.contains(index) && !kept(index)).collect()
    }

    fn save(&mut self) -> Result<(), Stopped> {
        while let Some((part, row)) = self.unsaved.last() {
            if !self.runner.store.put_item(self.name, *part, row)? {
                return Err(Stopped::Superseded);
            }
            self.recorded.insert(*part);
            self.unsaved.pop();
        }
        Ok(())
    }
}

/// The components of a sum that need a search, as parts: a part is done once its value is found in
/// the memo without a search.
pub(super) struct Positions<'r, 'c> {
    parts: Vec<Position>,
    /// The parts computed here: done, even if the memo did not keep them.
    computed: std::collections::HashSet<u64>,
    context: &'r mut SearchContext<'c>,
}

impl<'r, 'c> Positions<'r, 'c> {
    /// The parts of `position` (the components of a sum that need a search), if its request asks
    /// for a split (`split_across_replicas`) and the replicas share values (`--shared-cache`);
    /// none otherwise.
    pub(super) fn new(
        runner: &RunnerState,
        (position, split): (&Position, bool),
        context: &'r mut SearchContext<'c>,
    ) -> Self {
        let parts =
            if split && runner.config.share_work { position.fleet_parts(MOST_POSITION_PARTS) } else { Vec::new() };
        Positions { parts, computed: Default::default(), context }
    }

    fn is_done(&self, part: u64) -> bool {
        if self.computed.contains(&part) {
            return true;
        }
        let memo = self.context.memo;
        self.parts[part as usize].value_without_search(&|game, key| memo.get(game, key)).is_some()
    }
}

impl PartList for Positions<'_, '_> {
    /// (A helper stops once the job has ended: the checkpointer sets its stop, see
    /// [`RunnerState::offer_help`].)
    fn pending(&mut self) -> Result<Vec<u64>, Stopped> {
        Ok(self.pending_here())
    }

    fn still_pending(&mut self, part: u64) -> Result<bool, Stopped> {
        Ok(!self.is_done(part))
    }

    fn compute(&mut self, part: u64) -> Result<(), Stopped> {
        self.parts[part as usize].value(self.context)?;
        self.computed.insert(part);
        Ok(())
    }

    /// (The memo is this replica's: it answers without the store.)
    fn pending_here(&self) -> Vec<u64> {
        (0..self.parts.len() as u64).filter(|&part| !self.is_done(part)).collect()
    }

    /// (Nothing is kept: the values are in the memo.)
    fn save(&mut self) -> Result<(), Stopped> {
        Ok(())
    }
}
