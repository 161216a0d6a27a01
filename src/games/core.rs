//! What every game shares: the [`Game`] trait, [`Value`] and [`Outcome`], nimber arithmetic,
//! the [`SearchContext`] context (deadline, statistics, persistent memo) and the error a solve can end with.
//!
//! This file depends on nothing outside the standard library but the registry's [`GameTag`] and
//! [`Learnt`].

use super::{GameTag, Learnt};
use crate::thread_cpu::HelperCpu;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Who wins a position with perfect play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The player to move wins (an N-position).
    NextPlayerWins,
    /// The player to move loses (a P-position).
    PreviousPlayerWins,
}

/// A Grundy value: what a position of a normal-play game is worth.
pub type Nimber = u64;

/// What a position is worth: a [`Nimber`] in every normal-play game; the cutting game and sums,
/// where its literal rule adds two more states, use [`SumValue`](super::sum::SumValue).
pub trait Value: Copy + Eq + std::fmt::Debug + Send + 'static {
    /// Who wins.
    fn outcome(self) -> Outcome;
    /// The value a winning move leads to, if the player to move wins.
    fn winning_target(self) -> Option<Self>;
    /// The Grundy value, where the position is a normal-play one.
    fn nimber(self) -> Option<Nimber>;
}

/// A position known only by who wins it (as in misère play, where no Grundy value adds up).
impl Value for Outcome {
    fn outcome(self) -> Outcome {
        self
    }

    fn winning_target(self) -> Option<Self> {
        (self == Outcome::NextPlayerWins).then_some(Outcome::PreviousPlayerWins)
    }

    fn nimber(self) -> Option<Nimber> {
        None
    }
}

impl Value for Nimber {
    fn outcome(self) -> Outcome {
        if self == 0 {
            Outcome::PreviousPlayerWins
        } else {
            Outcome::NextPlayerWins
        }
    }

    fn winning_target(self) -> Option<Self> {
        (self != 0).then_some(0)
    }

    fn nimber(self) -> Option<Nimber> {
        Some(self)
    }
}

/// The minimum excludant: the least nimber not in `values`.
pub fn mex(values: impl IntoIterator<Item = u64>) -> u64 {
    let mut seen: Vec<u64> = values.into_iter().collect();
    seen.sort_unstable();
    seen.dedup();
    seen.iter().enumerate().find(|&(i, &v)| v != i as u64).map_or(seen.len() as u64, |(i, _)| i as u64)
}

/// One step of the path to a field: a named field or an index into a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A field, by its name in the game's own terms.
    Field(&'static str),
    /// An element of a list, 0-based.
    Index(usize),
}

/// The path to a field of a game's setup, in the game's own terms: e.g. `pieces[1].width`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Step>);

impl FieldPath {
    /// The field `name` of the setup.
    pub fn field(name: &'static str) -> Self {
        FieldPath(vec![Step::Field(name)])
    }

    /// Element `index` of this list.
    pub fn at(mut self, index: usize) -> Self {
        self.0.push(Step::Index(index));
        self
    }

    /// The field `name` of this field.
    pub fn then(mut self, name: &'static str) -> Self {
        self.0.push(Step::Field(name));
        self
    }
}

impl std::fmt::Display for FieldPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (number, step) in self.0.iter().enumerate() {
            match step {
                Step::Field(name) if number == 0 => f.write_str(name)?,
                Step::Field(name) => write!(f, ".{name}")?,
                Step::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// Why a game's validating constructor refused a setup: the field at fault and what is wrong with
/// it, so that each caller can name fields its own way (the service as protobuf field paths, the
/// judge in the problem's words).
pub trait SetupError: std::error::Error {
    /// The field at fault.
    fn field(&self) -> FieldPath;
    /// What is wrong with the field, as the rest of a sentence that starts with its name; `name`
    /// renders the other fields it refers to.
    fn problem(&self, name: &dyn Fn(&FieldPath) -> String) -> String;
}

/// The sentence of `error` with fields named by `name`: the field at fault, then its problem.
pub fn describe(error: &dyn SetupError, name: &dyn Fn(&FieldPath) -> String) -> String {
    format!("{} {}", name(&error.field()), error.problem(name))
}

/// Implements `Display` for a [`SetupError`]: the sentence with the fields' own paths.
macro_rules! display_setup_error {
    ($error:ty) => {
        impl std::fmt::Display for $error {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&$crate::games::describe(self, &|path| path.to_string()))
            }
        }

        impl std::error::Error for $error {}
    };
}
pub(crate) use display_setup_error;

/// Why a solve stopped before it had an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupted {
    /// The caller's deadline (or the server's maximum solve time) passed.
    DeadlineExceeded,
    /// The caller went away.
    Cancelled,
    /// The answer needs values past what this server computes (`limit`), and no proof reaches
    /// them; values are known below `known`.
    PastComputeLimit {
        /// The values are known below this.
        known: u64,
        /// The compute limit.
        limit: u64,
    },
    /// Misère play is searched move by move, and the position's play may be longer than `limit`
    /// moves, more than the search goes ([`crate::games::misere::MOST_MOVES_DEEP`]).
    PastMisereDepth {
        /// The most moves deep the search goes.
        limit: usize,
    },
    /// A misère analysis judges every move, and the position has more than `limit` of them
    /// ([`crate::games::analysis::ENUMERATION_LIMIT`]).
    PastMisereListing {
        /// The most moves a misère analysis lists.
        limit: u128,
    },
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Interrupted::DeadlineExceeded => f.write_str("the deadline passed"),
            Interrupted::Cancelled => f.write_str("cancelled"),
            Interrupted::PastComputeLimit { known, limit } => write!(
                f,
                "the answer needs values past the compute limit ({limit}, --max-heap-compute) and no period is \
                 proven for them; they are known for every heap below {known}; to extend them, run an Explore \
                 heapSequence job (or raise --max-heap-compute)"
            ),
            Interrupted::PastMisereDepth { limit } => write!(
                f,
                "misère play is searched move by move (no rule answers this position in misère play), and its \
                 play may be longer than {limit} moves, more than the search goes"
            ),
            Interrupted::PastMisereListing { limit } => write!(
                f,
                "a misère analysis judges every move, and this position has more than {limit}; Solve and BestMove \
                 answer it in misère play"
            ),
        }
    }
}

/// When a solve must stop: an optional deadline and a cancellation flag (and, for a thread
/// helping another search one position, the flag that says the search is over).
#[derive(Clone, Debug, Default)]
pub struct Budget {
    deadline: Option<Instant>,
    cancelled: Arc<AtomicBool>,
    /// Flags that also end it, set when the work is no longer needed.
    over: Vec<Arc<AtomicBool>>,
}

impl Budget {
    /// A budget with no deadline that is never cancelled.
    pub fn unlimited() -> Self {
        Self::default()
    }

    /// A budget that ends at `deadline` (if any) or when `cancelled` is set.
    pub fn new(deadline: Option<Instant>, cancelled: Arc<AtomicBool>) -> Self {
        Self { deadline, cancelled, over: Vec::new() }
    }

    /// The same budget, also ended (as cancelled) when `over` is set.
    pub fn until(&self, over: Arc<AtomicBool>) -> Self {
        let mut budget = self.clone();
        budget.over.push(over);
        budget
    }

    /// `Err` once the deadline has passed or the work was cancelled.
    pub fn check(&self) -> Result<(), Interrupted> {
        if self.cancelled.load(Ordering::Relaxed) || self.over.iter().any(|over| over.load(Ordering::Relaxed)) {
            return Err(Interrupted::Cancelled);
        }
        match self.deadline {
            Some(deadline) if Instant::now() >= deadline => Err(Interrupted::DeadlineExceeded),
            _ => Ok(()),
        }
    }
}

/// Counters a solve reports back to the caller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Positions (or components) whose value was computed by search in this solve.
    pub positions_computed: u64,
    /// Values found in a memo (in-memory table or persistent store) instead of computed.
    pub cache_hits: u64,
    /// What the search kernel did, and the persistent memo's reads by the searches.
    pub search: SearchCounts,
    /// Positions a misère walk found past its table's bound and did not keep (see
    /// [`crate::games::misere`]).
    pub misere_forgotten: u64,
}

/// What a search did, to be compared with another solver's counts on the same work: the search
/// kernel's counts ([`crate::games::kernel`]), and the searches' reads of the persistent memo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchCounts {
    /// Components whose options were made (igsolve's "expanded").
    pub expanded: u64,
    /// Options searched (split, reduced and asked about) past the cutoff.
    pub option_evaluations: u64,
    /// Questions the cutoff settled: an option already known to have the value asked.
    pub cutoffs: u64,
    /// Components whose value a search settled.
    pub settled: u64,
    /// Lookups in the search's table.
    pub table_lookups: u64,
    /// Lookups that found the value.
    pub table_hits: u64,
    /// Reads of the persistent memo by the searches.
    pub store_reads: u64,
}

impl std::ops::AddAssign for SearchCounts {
    fn add_assign(&mut self, other: SearchCounts) {
        self.expanded += other.expanded;
        self.option_evaluations += other.option_evaluations;
        self.cutoffs += other.cutoffs;
        self.settled += other.settled;
        self.table_lookups += other.table_lookups;
        self.table_hits += other.table_hits;
        self.store_reads += other.store_reads;
    }
}

/// The longest bytes a memo keeps ([`Memo::put_bytes`]): 16 MiB, a heap game's values up to 2^22
/// heaps at 4 bytes each.
pub const MAX_MEMO_BYTES: usize = 16 << 20;

/// A persistent memo of expensive values, keyed by game and canonical encoding.
///
/// Implemented over sled (and Redis, for a fleet) by the cache module; games only see this trait.
/// Each method is here because a caller needs it:
/// - [`get`](Memo::get) and [`put`](Memo::put): a search's reads and writes, `put` with the cost
///   that the store's bounded eviction keeps the most expensive values by;
/// - [`flush`](Memo::flush): the jobs' checkpointer makes a long job's finished components durable
///   once a second, so that kill -9 loses at most that second;
/// - [`peek`](Memo::peek): the service answers a warm position on the async runtime, which must not
///   wait for disk;
/// - [`remembers`](Memo::remembers): a search through [`NoMemo`] (the judge, the tests) skips
///   building keys that would be thrown away;
/// - [`get_or_compute`](Memo::get_or_compute): concurrent solves (and a fleet's replicas) asking
///   for one missing component compute it once.
/// - [`get_bytes`](Memo::get_bytes) and [`put_bytes`](Memo::put_bytes): what a game keeps that is
///   not a value, under its own tag and key (a heap game's values G(0..n) and proven period, under
///   its canonical rules), so that it survives restarts and is shared in a fleet.
pub trait Memo: Send + Sync {
    /// The stored value of `key`, if any (may read the disk).
    fn get(&self, game: GameTag, key: &[u8]) -> Option<u64>;
    /// Remember `value` for `key`; `cost` is the work its computation took (search nodes), so a
    /// bounded memo keeps the values most expensive to recompute. Never waits for I/O (the memo
    /// may buffer writes; see [`Memo::flush`]).
    fn put(&self, game: GameTag, key: &[u8], value: u64, cost: u64);
    /// Ask for buffered values to be written to durable storage soon; does not wait for it.
    fn flush(&self);
    /// The value of `key` if the memo holds it in memory (no I/O, cheap): for answering warm
    /// positions without queueing for a solve.
    fn peek(&self, _game: GameTag, _key: &[u8]) -> Option<u64> {
        None
    }

    /// The bytes stored under `key` by [`Memo::put_bytes`], if any (may read the disk and the
    /// network: never call it on the async runtime). A memo that keeps only values has none.
    fn get_bytes(&self, _game: GameTag, _key: &[u8]) -> Option<Vec<u8>> {
        None
    }

    /// Remember `bytes` for `key` (replacing what was there); `cost` as in [`Memo::put`]. Never
    /// waits for I/O. A memo that keeps only values forgets them, and bytes longer than
    /// [`MAX_MEMO_BYTES`] are not kept.
    fn put_bytes(&self, _game: GameTag, _key: &[u8], _bytes: Vec<u8>, _cost: u64) {}

    /// Whether the memo remembers anything at all: a solve through one that does not skips
    /// building keys for it.
    fn remembers(&self) -> bool {
        true
    }

    /// The value of `key`, from the memo or else computed by `compute` (which returns the value and
    /// its cost, see [`Memo::put`]) and remembered; also whether it was found rather than computed
    /// by this call. Stores shared by concurrent solves override this so that concurrent askers of
    /// one missing key compute it once (single-flight), the others waiting within their `budget`.
    fn get_or_compute(
        &self,
        game: GameTag,
        key: &[u8],
        _budget: &Budget,
        compute: &mut dyn FnMut() -> Result<(u64, u64), Interrupted>,
    ) -> Result<(u64, bool), Interrupted> {
        if let Some(value) = self.get(game, key) {
            return Ok((value, true));
        }
        let (value, cost) = compute()?;
        self.put(game, key, value, cost);
        Ok((value, false))
    }
}

/// A memo that remembers nothing (for the judge CLI and tests).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoMemo;

impl Memo for NoMemo {
    fn get(&self, _game: GameTag, _key: &[u8]) -> Option<u64> {
        None
    }
    fn put(&self, _game: GameTag, _key: &[u8], _value: u64, _cost: u64) {}
    fn flush(&self) {}
    fn remembers(&self) -> bool {
        false
    }
}

/// Everything a solve may use besides the position: its budget, its counters, the memo.
pub struct SearchContext<'a> {
    /// When to stop.
    pub budget: Budget,
    /// What the solve did.
    pub stats: Stats,
    /// Where expensive values are remembered across solves.
    pub memo: &'a dyn Memo,
    /// The most entries a game's own in-memory tables may hold (bounds memory); they are kept
    /// from one solve through this context to the next (see [`SearchContext::learnt`]).
    pub table_limit: usize,
    /// What the solves through this context have learnt, kept for the next one: a game's own
    /// tables (one game at a time; a solve of another game starts afresh).
    pub learnt: Learnt,
    /// The threads one position's search may use, from the process's pool.
    pub threads: Arc<SearchThreads>,
    /// The CPU time of the threads that help these searches (a job adds it to its own thread's).
    pub helper_cpu: Arc<HelperCpu>,
}

/// The cores the searches of a process share (`--search-threads`): a search of one position uses
/// its own thread and takes helpers while cores are idle, so concurrent solves and jobs never run
/// more search threads than this between them (beyond one each).
#[derive(Debug)]
pub struct SearchThreads {
    most: usize,
    busy: AtomicUsize,
}

impl SearchThreads {
    /// A pool of `most` threads (at least 1).
    pub fn new(most: usize) -> Arc<Self> {
        Arc::new(SearchThreads { most: most.max(1), busy: AtomicUsize::new(0) })
    }

    /// The threads one search may use at most.
    pub fn most(&self) -> usize {
        self.most
    }

    /// The entries each thread's table may hold for one search's tables to hold `entries` together
    /// (each thread has tables of its own: see [`crate::limits::share_memory`]), so that helpers
    /// never raise what one search may take.
    pub fn table_entries_each(&self, entries: usize) -> usize {
        entries / self.most
    }

    /// The most helpers searching at once, over all searches: each has a table's worth of memory
    /// (see [`crate::limits::share_memory`], whose `jobs` they are counted with).
    pub fn helpers_most(&self) -> usize {
        self.most - 1
    }

    /// The search thread of a solve, with as many helpers (at most `most - 1`) as there are idle
    /// cores; they are given back when the permit is dropped.
    pub fn take(self: &Arc<Self>) -> ThreadPermit {
        let mut busy = self.busy.load(Ordering::Relaxed);
        loop {
            let helpers = self.most.saturating_sub(busy + 1);
            match self.busy.compare_exchange_weak(busy, busy + 1 + helpers, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return ThreadPermit { pool: self.clone(), helpers },
                Err(now) => busy = now,
            }
        }
    }

    /// Threads searching now (searches and their helpers).
    pub fn busy(&self) -> usize {
        self.busy.load(Ordering::Relaxed)
    }
}

/// A search's threads, taken from [`SearchThreads`]: its own and `helpers` more.
#[derive(Debug)]
pub struct ThreadPermit {
    pool: Arc<SearchThreads>,
    /// Threads that may help this search.
    pub helpers: usize,
}

impl Drop for ThreadPermit {
    fn drop(&mut self) {
        self.pool.busy.fetch_sub(1 + self.helpers, Ordering::AcqRel);
    }
}

/// The default for [`SearchContext::table_limit`]: 11 Mi entries, so a solve's tables may take
/// 11 Mi × [`TABLE_ENTRY_BYTES`](crate::limits::TABLE_ENTRY_BYTES) = 0.9 GB (a full 10×10 board
/// peaks at 0.76 GB of resident memory with it).
pub const DEFAULT_TABLE_LIMIT: usize = 11 << 20;

impl<'a> SearchContext<'a> {
    /// A context with the given budget and memo and zeroed counters.
    pub fn new(budget: Budget, memo: &'a dyn Memo) -> Self {
        Self {
            budget,
            stats: Stats::default(),
            memo,
            table_limit: DEFAULT_TABLE_LIMIT,
            learnt: Learnt::Nothing,
            threads: SearchThreads::new(1),
            helper_cpu: Arc::default(),
        }
    }
}

impl SearchContext<'static> {
    /// A context with no deadline and no persistent memo.
    pub fn in_memory() -> Self {
        SearchContext::new(Budget::unlimited(), &NoMemo)
    }
}

/// One group of a [`MoveSet`]: how many moves, and the move at an index, without enumerating.
struct MoveGroup<M> {
    len: u128,
    get: Box<dyn Fn(u128) -> M>,
}

/// Moves in a fixed order, counted and indexed without enumerating them: a concatenation of
/// groups, each a count and a function from an index below it to a move.
///
/// Every move set of a game lists its moves in move order: ascending by the move type's `Ord`.
pub struct MoveSet<M> {
    groups: Vec<MoveGroup<M>>,
    /// `ends[g]`: how many moves the groups up to and including `g` hold.
    ends: Vec<u128>,
}

impl<M: 'static> Default for MoveSet<M> {
    fn default() -> Self {
        Self { groups: Vec::new(), ends: Vec::new() }
    }
}

impl<M: 'static> MoveSet<M> {
    /// No move at all.
    pub fn empty() -> Self {
        Self::default()
    }

    /// These moves, in this order.
    pub fn listed(moves: Vec<M>) -> Self
    where
        M: Clone,
    {
        let mut set = Self::empty();
        set.push_listed(moves);
        set
    }

    /// Appends a group of `len` moves, the `i`-th being `get(i)` (nothing when `len` is 0).
    pub fn push(&mut self, len: u128, get: impl Fn(u128) -> M + 'static) {
        if len == 0 {
            return;
        }
        let end = self.len().saturating_add(len);
        self.groups.push(MoveGroup { len, get: Box::new(get) });
        self.ends.push(end);
    }

    /// Appends these moves as one group.
    pub fn push_listed(&mut self, moves: Vec<M>)
    where
        M: Clone,
    {
        // An index below the length fits in usize.
        self.push(moves.len() as u128, move |index| moves[index as usize].clone());
    }

    /// Appends the moves of `other`.
    pub fn append(&mut self, other: MoveSet<M>) {
        for group in other.groups {
            let end = self.len().saturating_add(group.len);
            self.groups.push(group);
            self.ends.push(end);
        }
    }

    /// The same moves, each passed through `wrap` (e.g. into the move type of a sum).
    pub fn map<N: 'static>(self, wrap: impl Fn(M) -> N + Clone + 'static) -> MoveSet<N> {
        let groups = self
            .groups
            .into_iter()
            .map(|group| {
                let (get, wrap) = (group.get, wrap.clone());
                MoveGroup { len: group.len, get: Box::new(move |index| wrap(get(index))) as Box<dyn Fn(u128) -> N> }
            })
            .collect();
        MoveSet { groups, ends: self.ends }
    }

    /// How many moves.
    pub fn len(&self) -> u128 {
        self.ends.last().copied().unwrap_or(0)
    }

    /// Whether there is no move.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The group holding move `index` and the index within it; `None` past the end.
    fn locate(&self, index: u128) -> Option<(usize, u128)> {
        let group = self.ends.partition_point(|&end| end <= index);
        let start = if group == 0 { 0 } else { self.ends[group - 1] };
        (group < self.groups.len()).then(|| (group, index - start))
    }

    /// Move number `index` (0-based); `None` past the end. O(log groups).
    pub fn get(&self, index: u128) -> Option<M> {
        self.locate(index).map(|(group, within)| (self.groups[group].get)(within))
    }

    /// The moves from number `start` on, in order.
    pub fn iter_from(&self, start: u128) -> impl Iterator<Item = M> + '_ {
        let (first, offset) = self.locate(start).unwrap_or((self.groups.len(), 0));
        self.groups[first..].iter().enumerate().flat_map(move |(k, group)| {
            let from = if k == 0 { offset } else { 0 };
            (from..group.len).map(move |index| (group.get)(index))
        })
    }

    /// Every move, in order.
    pub fn iter(&self) -> impl Iterator<Item = M> + '_ {
        self.iter_from(0)
    }
}

impl<M: std::fmt::Debug + 'static> std::fmt::Debug for MoveSet<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const SHOWN: usize = 8;
        let mut list = f.debug_list();
        list.entries(self.iter().take(SHOWN));
        if self.len() > SHOWN as u128 {
            list.entry(&format_args!("… {} moves", self.len()));
        }
        list.finish()
    }
}

/// One impartial game: its positions are `Self`, valid by construction.
pub trait Game: Clone + Sized {
    /// A move in this game; its `Ord` is the game's move order.
    type Move: Clone + std::fmt::Debug + Ord + 'static;
    /// What a position is worth: a [`Nimber`], except where the cutting game's literal rule applies.
    type Value: Value;

    /// The value of this position.
    fn value(&self, context: &mut SearchContext) -> Result<Self::Value, Interrupted>;

    /// Every legal move, in move order (possibly a huge number: index, do not enumerate).
    fn moves(&self) -> MoveSet<Self::Move>;

    /// Whether `mv` is a legal move here (one of [`Game::moves`]).
    fn is_legal(&self, mv: &Self::Move) -> bool;

    /// The position after `mv`, which must be legal ([`Game::is_legal`]): check a move from outside
    /// first. An illegal move is a bug: it fails a debug assertion, and the result is unspecified.
    fn play_unchecked(&self, mv: &Self::Move) -> Self;

    /// The legal moves to a position of value `target`, in move order. The default evaluates every
    /// move ([`moves_to_by_search`]); games with a formula build the set directly, and are tested
    /// against the default.
    fn moves_to(&self, target: Self::Value, context: &mut SearchContext) -> Result<MoveSet<Self::Move>, Interrupted> {
        moves_to_by_search(self, target, context)
    }

    /// The first of [`Game::moves_to`]. Searching games override it to stop at the first move found.
    fn first_move_to(
        &self,
        target: Self::Value,
        context: &mut SearchContext,
    ) -> Result<Option<Self::Move>, Interrupted> {
        Ok(self.moves_to(target, context)?.get(0))
    }

    /// The value of the position and its best move (see [`super::analysis::best_move`]); searching
    /// games override it to reuse what computing the value found.
    fn best_move(&self, context: &mut SearchContext) -> Result<(Self::Value, Option<Self::Move>), Interrupted> {
        super::analysis::best_move(self, context)
    }
}

/// The moves of `game` to value `target`, in move order, by evaluating every move: the default of
/// [`Game::moves_to`] and the reference every formula is tested against.
pub fn moves_to_by_search<G: Game>(
    game: &G,
    target: G::Value,
    context: &mut SearchContext,
) -> Result<MoveSet<G::Move>, Interrupted> {
    let mut found = Vec::new();
    for mv in game.moves().iter() {
        context.budget.check()?;
        if game.play_unchecked(&mv).value(context)? == target {
            found.push(mv);
        }
    }
    Ok(MoveSet::listed(found))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mex_finds_least_missing() {
        assert_eq!(mex([]), 0);
        assert_eq!(mex([1, 2]), 0);
        assert_eq!(mex([0, 2, 1, 1, 4]), 3);
    }

    #[test]
    fn move_sets_concatenate_index_and_map() {
        let mut set = MoveSet::listed(vec![1u32, 2]);
        set.push(0, |_| unreachable!("an empty group is dropped"));
        set.push(u128::MAX - 10, |index| 10 + (index % 1000) as u32);
        set.append(MoveSet::listed(vec![7]));
        assert_eq!(set.len(), u128::MAX - 7);
        assert_eq!(set.get(1), Some(2));
        assert_eq!(set.get(2), Some(10));
        assert_eq!(set.get(5), Some(13));
        assert_eq!(set.get(u128::MAX - 8), Some(7));
        assert_eq!(set.get(u128::MAX - 7), None);
        assert_eq!(set.iter().take(4).collect::<Vec<_>>(), vec![1, 2, 10, 11]);
        assert_eq!(set.iter_from(u128::MAX - 9).collect::<Vec<_>>(), vec![454, 7]);
        assert_eq!(set.iter_from(u128::MAX).count(), 0);
        let doubled = set.map(|mv| u64::from(mv) * 2);
        assert_eq!(doubled.get(1), Some(4));
        assert!(MoveSet::<u8>::empty().is_empty());
    }

    #[test]
    fn nimbers_win_unless_zero() {
        assert_eq!(0.outcome(), Outcome::PreviousPlayerWins);
        assert_eq!(3.winning_target(), Some(0));
        assert_eq!(0.winning_target(), None);
    }
}
