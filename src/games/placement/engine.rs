//! The Grundy values of sets of points, searched: the engine of every placement game, which
//! learns each game's moves and tricks from its [`Piece`].

use super::band::Band;
use super::bits::{BoardPoints, Grid, LongBand, PointSet, Symmetry};
use super::lean::{Lean, LeanRules, LeanWord};
use super::strategy::{rank, zero_by_half_turn};
use super::table::{SharedTable, Table, Worth};
use super::window::Window;
use super::{components, Piece};
use crate::games::kernel::{self, Helpers, Kernel};
use crate::games::{Interrupted, SearchContext};
use crate::limits::TABLE_ENTRY_BYTES;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A component of at least [`Piece::MEMO_MIN_POINTS`] is written to the persistent memo once solved
/// if settling it took at least this many option evaluations (top-level components always are):
/// what was expensive is never solved again, without flooding the store with cheap entries.
pub const MEMO_MIN_WORK: u64 = 64;

/// What a component's knowledge must have cost (as [`Knowledge`] keeps it: the bit length of its
/// option evaluations) to be shared between the threads searching one position: cheaper
/// knowledge is found again faster than through a lock.
const SHARED_MIN_WORTH: u8 = 7;

/// The bytes of a search's own tables: `context.table_limit` entries' worth. A helper's thread
/// has as many bytes, half for its own tables and half for the tables the threads share (see
/// [`Engine::value_on_every_thread`]): every search thread has one table's worth, which is what
/// the memory limit is shared by (see [`crate::limits::share_memory`]).
fn table_share(context: &SearchContext) -> usize {
    context.table_limit.saturating_mul(TABLE_ENTRY_BYTES as usize)
}

/// The fewest points of a component searched by more than one thread: a smaller one takes less
/// time than starting a thread.
const HELPED_MIN_POINTS: u32 = 32;

/// Search nodes between two budget checks.
const CHECK_INTERVAL: u64 = 4096;

/// What a solve has learnt about one component (by canonical form), in one word: the top byte
/// is the value plus one (0 while unknown), the next byte how much searching it cost (a
/// logarithm of the option evaluations, what the table keeps entries by), and bit `j` of the
/// low [`Knowledge::EXCLUDABLE`] says some option is known to have value `j` (so the value is
/// not `j`).
#[derive(Clone, Copy, Debug, Default)]
struct Knowledge(u64);

impl Knowledge {
    /// Option values below this one can be recorded.
    const EXCLUDABLE: u8 = 48;
    /// The first bit of the cost byte.
    const COST_SHIFT: u32 = 48;
    /// The first bit of the value byte.
    const VALUE_SHIFT: u32 = 56;

    /// The value is known (below `u8::MAX`, see [`Engine`], so plus one it fits its byte).
    fn known(value: u8) -> Knowledge {
        Knowledge(u64::from(value + 1) << Knowledge::VALUE_SHIFT)
    }

    /// The value, if known.
    fn exact(self) -> Option<u8> {
        ((self.0 >> Knowledge::VALUE_SHIFT) as u8).checked_sub(1)
    }

    /// Whether some option is known to have this value.
    fn has_option_of(self, value: u8) -> bool {
        value < Knowledge::EXCLUDABLE && self.0 >> value & 1 == 1
    }

    /// Record that some option has this value.
    fn note_option_of(&mut self, value: u64) {
        if value < u64::from(Knowledge::EXCLUDABLE) {
            self.0 |= 1 << value;
        }
    }

    /// What this and `other` know together.
    fn with(self, other: Knowledge) -> Knowledge {
        let value = self.exact().or(other.exact()).map_or(0, |value| Knowledge::known(value).0);
        let cost = u64::from(self.worth().max(other.worth())) << Knowledge::COST_SHIFT;
        let options = (self.0 | other.0) & ((1 << Knowledge::EXCLUDABLE) - 1);
        Knowledge(value | cost | options)
    }

    /// The same knowledge, found by a search of `work` option evaluations (kept as its bit
    /// length, at most 64, unless an earlier search cost more).
    fn with_cost(self, work: u64) -> Knowledge {
        let cost = u64::from(self.worth().max(64 - work.leading_zeros() as u8));
        Knowledge(self.0 & !(0xFF << Knowledge::COST_SHIFT) | cost << Knowledge::COST_SHIFT)
    }
}

impl Worth for Knowledge {
    fn worth(&self) -> u8 {
        (self.0 >> Knowledge::COST_SHIFT) as u8
    }
}

/// How a component's value is found.
#[derive(Clone, PartialEq, Eq)]
enum Kind {
    /// By a rule of the game's ([`Piece::direct_value`], [`Piece::thin_value`]).
    Direct(u8),
    /// By search, under its canonical form in an 8×8 window.
    Window(Window),
    /// By search, under its canonical form in a band (at most 8 across, 9 to 16 long).
    Band(Band),
    /// By search, under its canonical form in a 16×16 grid.
    Grid(Grid),
    /// By search, under its canonical form in a long band (longer than 16; boxed, so that a
    /// kind stays small to move).
    Long(Box<LongBand>),
}

/// Evaluates `$body` with `$set` bound to the set of a searched [`Kind`], or `$direct` with
/// `$value` bound to the value of a direct one.
macro_rules! each_kind {
    ($kind:expr, $value:ident => $direct:expr, $set:ident => $body:expr) => {
        match $kind {
            Kind::Direct($value) => $direct,
            Kind::Window($set) => $body,
            Kind::Band($set) => $body,
            Kind::Grid($set) => $body,
            Kind::Long(boxed) => {
                let $set = &**boxed;
                $body
            }
        }
    };
}

impl Kind {
    /// The persistent memo key of a component searched for, `None` for one valued by rule.
    fn memo_key(&self) -> Option<Vec<u8>> {
        each_kind!(self, _value => None, set => Some(set.memo_key()))
    }
}

/// How the value of a set at the origin of a window is found.
fn window_kind<P: Piece>(origin: Window, size: u32, height: usize, width: usize) -> Kind {
    match P::direct_value(origin, size, height, width) {
        Some(value) => Kind::Direct(value),
        None => Kind::Window(origin.canonical(height, width)),
    }
}

/// How the value of a connected, non-empty set of any kind is found: in the smallest kind of set
/// it fits, turned (if it must be) to lie along the rows.
fn kind_of<P: Piece, S: PointSet>(set: S) -> Kind {
    let (origin, height, width) = set.at_origin();
    let size = set.len();
    if height <= 8 && width <= 8 {
        return window_kind::<P>(origin.convert(height, width, Symmetry::IDENTITY), size, height, width);
    }
    if let Some(value) = P::thin_value(set, size, height, width) {
        return Kind::Direct(value);
    }
    let (across, along, turn) =
        if height <= width { (height, width, Symmetry::IDENTITY) } else { (width, height, Symmetry::TRANSPOSE) };
    if across <= 8 && along <= 16 {
        Kind::Band(origin.convert::<Band>(height, width, turn).canonical(across, along))
    } else if along <= 16 {
        Kind::Grid(origin.convert::<Grid>(height, width, Symmetry::IDENTITY).canonical(height, width))
    } else {
        Kind::Long(Box::new(origin.convert::<LongBand>(height, width, turn).canonical(across, along)))
    }
}

/// A set of points the search works on: a component in canonical form, or an option of one.
trait Shape: PointSet {
    /// The engine's table for sets of this shape.
    fn table(tables: &mut Tables) -> &mut Table<Self, Knowledge>;

    /// The shared tables for sets of this shape: what is known, and who is searching.
    #[allow(clippy::type_complexity)]
    fn shared(tables: &SharedTables) -> &(SharedTable<Self, Knowledge>, SharedTable<Self, Searchers>);

    /// The engine's spare option lists for sets of this shape.
    fn spare(spare: &mut Spare) -> &mut Vec<Vec<(u32, Self)>>;

    /// How the value of a connected, non-empty set is found.
    fn kind<P: Piece>(self) -> Kind {
        kind_of::<P, Self>(self)
    }
}

impl Shape for Window {
    fn table(tables: &mut Tables) -> &mut Table<Window, Knowledge> {
        &mut tables.window
    }

    fn shared(tables: &SharedTables) -> &(SharedTable<Window, Knowledge>, SharedTable<Window, Searchers>) {
        &tables.window
    }

    fn spare(spare: &mut Spare) -> &mut Vec<Vec<(u32, Window)>> {
        &mut spare.windows
    }

    fn kind<P: Piece>(self) -> Kind {
        // A window's parts are windows: no conversion.
        let (origin, height, width) = self.at_origin();
        window_kind::<P>(origin, self.len(), height, width)
    }
}

impl Shape for Band {
    fn table(tables: &mut Tables) -> &mut Table<Band, Knowledge> {
        &mut tables.band
    }

    fn shared(tables: &SharedTables) -> &(SharedTable<Band, Knowledge>, SharedTable<Band, Searchers>) {
        &tables.band
    }

    fn spare(spare: &mut Spare) -> &mut Vec<Vec<(u32, Band)>> {
        &mut spare.bands
    }
}

impl Shape for Grid {
    fn table(tables: &mut Tables) -> &mut Table<Grid, Knowledge> {
        &mut tables.grid
    }

    fn shared(tables: &SharedTables) -> &(SharedTable<Grid, Knowledge>, SharedTable<Grid, Searchers>) {
        &tables.grid
    }

    fn spare(spare: &mut Spare) -> &mut Vec<Vec<(u32, Grid)>> {
        &mut spare.grids
    }
}

impl Shape for LongBand {
    fn table(tables: &mut Tables) -> &mut Table<LongBand, Knowledge> {
        &mut tables.long
    }

    fn shared(tables: &SharedTables) -> &(SharedTable<LongBand, Knowledge>, SharedTable<LongBand, Searchers>) {
        &tables.long
    }

    fn spare(spare: &mut Spare) -> &mut Vec<Vec<(u32, LongBand)>> {
        &mut spare.long_bands
    }
}

/// The options of a set in canonical form (for each move, the set after it; of options a
/// symmetry of the set maps onto each other, one), in the order to try them (see [`rank`]), each
/// with the move played.
///
/// A stable counting sort (ranks are below [`RANKS`]) from `unsorted` (left empty) into `ranked`;
/// `unsorted` holds each option with its rank in the high half of the word, the move played
/// in the low half.
fn ordered_options<P: Piece, S: PointSet>(set: S, unsorted: &mut Vec<(u32, S)>, ranked: &mut Vec<(u32, S)>) {
    let (_, height, width) = set.at_origin();
    let size = set.len();
    let symmetries = set.symmetries(height, width);
    let mut start = [0usize; RANKS + 1];
    let mut ranks_used = 0;
    P::for_each_option(set, |played, option| {
        if !symmetries.keep(option, height, width) {
            return;
        }
        let p = P::anchor(played);
        let (row, column) = ((p / S::STRIDE) as usize, (p % S::STRIDE) as usize);
        let removed = P::MOST_REMOVED.saturating_sub(size - option.len());
        let rank = rank(row, column, height, width, removed).min(RANKS as u32 - 1);
        start[rank as usize + 1] += 1;
        ranks_used = ranks_used.max(rank as usize + 1);
        unsorted.push((rank << 16 | played, P::simplified(option)));
    });
    for r in 1..=ranks_used {
        start[r] += start[r - 1];
    }
    ranked.resize(unsorted.len(), (0, S::default()));
    for &(ranked_move, option) in unsorted.iter() {
        let rank = (ranked_move >> 16) as usize;
        ranked[start[rank]] = (ranked_move & 0xFFFF, option);
        start[rank] += 1;
    }
    unsorted.clear();
}

/// Ranks are below this: a point is off the centre by at most `(15 + 63)`, plus twice the
/// points a move removes short of the most (at most 9).
const RANKS: usize = 128;

/// What one solve has learnt, per canonical component.
#[derive(Default)]
struct Tables {
    window: Table<Window, Knowledge>,
    band: Table<Band, Knowledge>,
    grid: Table<Grid, Knowledge>,
    long: Table<LongBand, Knowledge>,
}

/// How many threads are searching a component now.
#[derive(Clone, Copy, Debug, Default)]
struct Searchers(u8);

impl Worth for Searchers {
    /// A mark of a search under way is worth keeping; one that ended, not.
    fn worth(&self) -> u8 {
        self.0
    }
}

/// What the threads searching one position tell one another about large components (at least
/// [`Piece::MEMO_MIN_POINTS`]): what they learnt that was costly enough to be worth a lock (see
/// [`SHARED_MIN_WORTH`]), and which ones they are searching now, so that the others leave those
/// for later (ABDADA: Weill, "The ABDADA distributed minimax search algorithm", 1996).
struct SharedTables {
    /// Set if a helper panicked: its marks may never be cleared, so nobody waits for them.
    abandoned: AtomicBool,
    window: (SharedTable<Window, Knowledge>, SharedTable<Window, Searchers>),
    band: (SharedTable<Band, Knowledge>, SharedTable<Band, Searchers>),
    grid: (SharedTable<Grid, Knowledge>, SharedTable<Grid, Searchers>),
    long: (SharedTable<LongBand, Knowledge>, SharedTable<LongBand, Searchers>),
}

impl SharedTables {
    /// Tables that may allocate `bytes` in all (a sixteenth for the marks of searches under way).
    fn new(bytes: usize) -> Self {
        let (known, busy) = (bytes / 4 - bytes / 64, bytes / 64);
        SharedTables {
            abandoned: AtomicBool::new(false),
            window: (SharedTable::new(known), SharedTable::new(busy)),
            band: (SharedTable::new(known), SharedTable::new(busy)),
            grid: (SharedTable::new(known), SharedTable::new(busy)),
            long: (SharedTable::new(known), SharedTable::new(busy)),
        }
    }
}

/// The word of a lean set, and which of the engine's kernel tables its sets are kept in.
trait KernelWord: LeanWord {
    /// The table of this word's sets: one of the two.
    fn table<'l>(
        narrow: &'l mut Option<kernel::Table>,
        wide: &'l mut Option<kernel::Table<u128>>,
    ) -> &'l mut Option<kernel::Table<Self>>;
}

impl KernelWord for u64 {
    fn table<'l>(
        narrow: &'l mut Option<kernel::Table>,
        _: &'l mut Option<kernel::Table<u128>>,
    ) -> &'l mut Option<kernel::Table> {
        narrow
    }
}

impl KernelWord for u128 {
    fn table<'l>(
        _: &'l mut Option<kernel::Table>,
        wide: &'l mut Option<kernel::Table<u128>>,
    ) -> &'l mut Option<kernel::Table<u128>> {
        wide
    }
}

/// What an engine learnt, kept in its [`SearchContext`] for the next solve through it (as the
/// game's variant of [`crate::games::Learnt`]).
#[derive(Default)]
pub struct Learnt {
    tables: Tables,
    /// The kernel's table, for the components searched on it as one word (see
    /// [`Engine::on_kernel`]).
    kernel: Option<kernel::Table>,
    /// The kernel's table for the components searched on it as two words.
    wide_kernel: Option<kernel::Table<u128>>,
    /// Bytes the tables may still allocate.
    table_room: usize,
}

/// Lists kept from one search to the next, so that searching a component allocates nothing.
#[derive(Default)]
struct Spare {
    windows: Vec<Vec<(u32, Window)>>,
    bands: Vec<Vec<(u32, Band)>>,
    grids: Vec<Vec<(u32, Grid)>>,
    long_bands: Vec<Vec<(u32, LongBand)>>,
    reduced: Vec<Vec<Option<Reduced>>>,
}

/// An option reduced to one question: it has value `t` iff `asked` (a component and its number
/// of points) has value `t ^ others`, or, with nothing to ask, iff `t == others`.
#[derive(Clone)]
struct Reduced {
    others: u64,
    asked: Option<(Kind, u32)>,
}

/// What asking "has this component the value `t`?" found out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// Its value, known now: the answer is whether it is `t`.
    Value(u8),
    /// Its value is not `t` (and is not known).
    Not,
}

/// Whether a component's value goes to the persistent memo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memoize {
    /// Always: a component of the board itself (a top-level one).
    Always,
    /// When it is large and its search was costly (see [`Piece::MEMO_MIN_POINTS`], [`MEMO_MIN_WORK`]).
    WhenCostly,
}

/// A value read from the persistent memo for a component of `size` points, if it can be one: a
/// component's value is at most [`Piece::most_value`] (see [`Engine`]), so anything larger is
/// damage and is not trusted.
fn trusted<P: Piece>(value: u64, size: u32) -> Option<u8> {
    (value <= u64::from(P::most_value(size))).then_some(value as u8)
}

/// The value of a set of points if it needs no search: every component is valued by rule or
/// its value is found by `lookup` (a probe of the memo under the component's key, as
/// `Engine::value_of_board` stores them); `None` as soon as one component would need a search.
/// Also returns how many values `lookup` supplied.
pub fn value_without_search<P: Piece>(set: BoardPoints, lookup: &dyn Fn(&[u8]) -> Option<u64>) -> Option<(u64, u64)> {
    let (mut value, mut found) = (0, 0);
    for part in components::<P, _>(set) {
        value ^= match kind_of::<P, _>(part) {
            Kind::Direct(value) => u64::from(value),
            kind => {
                found += 1;
                u64::from(trusted::<P>(lookup(&kind.memo_key()?)?, part.len())?)
            }
        };
    }
    Some((value, found))
}

/// The components of a set of points that need a search, as `(points, memo key)`, sorted by key:
/// two sets whose searched components are the same up to symmetry give the same list.
pub fn searched_components<P: Piece>(set: BoardPoints) -> Vec<(u32, Vec<u8>)> {
    let mut searched: Vec<(u32, Vec<u8>)> =
        components::<P, _>(set).filter_map(|part| Some((part.len(), kind_of::<P, _>(part).memo_key()?))).collect();
    searched.sort_unstable_by(|a, b| a.1.cmp(&b.1));
    searched
}

/// One solve: the context (budget, statistics, memo) and what it has learnt about components.
///
/// The search is the Lemoine–Viennot one: rather than the value of every option, it asks "has
/// this component the value `t`?", i.e. "is it plus a nim heap of `t` a P-position?". A component
/// has value `t` iff no option has value `t` and every smaller value is an option's. Asked that,
/// the search first looks for an option of value `t` (one witness says no at once), then settles
/// the smaller values in order. An option (a sum of components) is reduced to one question:
/// values found by rule or already known are added up, equal components cancel in pairs, the
/// values of the others but the largest are computed, and the largest is asked for `t` adjusted
/// by their XOR, so a component is often dismissed without ever being solved. Options are tried
/// cheapest first (those removing the most points), one per class under the component's
/// symmetries. What is learnt (exact values, values some option is known to have) is kept per
/// canonical component, in tables that together hold at most `context.table_limit` entries'
/// worth of bytes ([`TABLE_ENTRY_BYTES`] each) and keep the costliest entries when full.
///
/// **Values fit a byte.** A component of `n` points has a value of at most
/// [`Piece::most_value`]`(n)`, below `u8::MAX` for every board (each game proves its bound), so
/// every value and every value plus one fits a `u8`, and the search for the least value no option
/// has ends there at the latest: if every smaller value is an option's, the value is the bound.
///
/// **The half turn.** A component that a half turn maps onto itself, in which no move meets its
/// own image, has value 0, with no search: the second player answers every move with its image
/// (see [`zero_by_half_turn`]).
pub struct Engine<'s, 'a, P: Piece> {
    context: &'s mut SearchContext<'a>,
    learnt: Learnt,
    spare: Spare,
    /// Whether the persistent memo remembers anything (if not, no key is built for it).
    memo_remembers: bool,
    nodes: u64,
    /// What the threads searching this position share, while helpers search it too.
    shared: Option<Arc<SharedTables>>,
    piece: std::marker::PhantomData<P>,
}

impl<'s, 'a, P: Piece> Engine<'s, 'a, P> {
    /// An engine that knows what earlier solves through `context` learnt (nothing, the first time).
    pub fn new(context: &'s mut SearchContext<'a>) -> Self {
        let learnt = P::take_learnt(&mut context.learnt).unwrap_or_else(|| Learnt {
            tables: Tables::default(),
            kernel: None,
            wide_kernel: None,
            table_room: table_share(context),
        });
        let memo_remembers = context.memo.remembers();
        Engine {
            context,
            learnt,
            spare: Spare::default(),
            memo_remembers,
            nodes: 0,
            shared: None,
            piece: std::marker::PhantomData,
        }
    }

    /// The value of a set of points (the XOR of its components' values); the components
    /// are top-level: their values go to the persistent memo.
    ///
    /// Concurrent solves share top-level components through the memo's single flight: one solve
    /// computes a component, the others wait for its value.
    pub fn value_of_board(&mut self, set: BoardPoints) -> Result<u64, Interrupted> {
        let memo = self.context.memo;
        let budget = self.context.budget.clone();
        let mut value = 0;
        for part in components::<P, _>(set) {
            let kind = kind_of::<P, _>(part);
            let Some(key) = kind.memo_key() else {
                value ^= u64::from(self.value(&kind, Memoize::Always)?);
                continue;
            };
            self.context.stats.search.store_reads += 1;
            let mut compute = || {
                let work_before = self.nodes;
                self.value_on_every_thread(&kind, Memoize::Always)
                    .map(|value| (u64::from(value), self.nodes - work_before))
            };
            let (part_value, found) = memo.get_or_compute(P::TAG, &key, &budget, &mut compute)?;
            value ^= match (found, trusted::<P>(part_value, part.len())) {
                (true, Some(stored)) => {
                    self.context.stats.cache_hits += 1;
                    u64::from(stored)
                }
                (true, None) => u64::from(self.value(&kind, Memoize::Always)?),
                (false, _) => part_value,
            };
        }
        Ok(value)
    }

    /// The value of a component of a board, searched by this thread and, if it has at least
    /// [`HELPED_MIN_POINTS`] and cores are idle, by helpers: each helper searches the same
    /// component with its own tables (Lazy SMP), and the threads share what they learn of large
    /// components and leave the ones another thread is searching for later (see
    /// [`SharedTables`]). Only this thread's answer is taken, and every piece of knowledge is
    /// exact whoever learnt it, so the value is the same for any number of threads. Helpers stop
    /// at their next budget check once this thread is done, however it ended; what they settled
    /// is in the memo.
    fn value_on_every_thread(&mut self, kind: &Kind, memoize: Memoize) -> Result<u8, Interrupted> {
        if let Some(value) = self.on_kernel(kind, memoize) {
            return value;
        }
        let small = each_kind!(kind, _value => true, set => set.len() < HELPED_MIN_POINTS);
        if small || self.context.threads.most() == 1 {
            return self.value(kind, memoize);
        }
        let permit = self.context.threads.take();
        if permit.helpers == 0 {
            return self.value(kind, memoize);
        }
        let shared = Arc::new(SharedTables::new(table_share(self.context) / 2 * permit.helpers));
        let over = Arc::new(AtomicBool::new(false));
        let budget = self.context.budget.until(over.clone());
        let (memo, table_limit) = (self.context.memo, self.context.table_limit / 2);
        let helper_cpu = self.context.helper_cpu.clone();
        std::thread::scope(|scope| {
            let helpers: Vec<_> = (0..permit.helpers)
                .map(|_| {
                    let (shared, budget, helper_cpu) = (shared.clone(), budget.clone(), helper_cpu.clone());
                    scope.spawn(move || {
                        helper_cpu.start();
                        let mut context = SearchContext::new(budget, memo);
                        context.table_limit = table_limit;
                        let search = std::panic::AssertUnwindSafe(|| {
                            let mut helper = Engine::<P>::new(&mut context);
                            helper.shared = Some(shared.clone());
                            // Its answer is this thread's too (or it was stopped): only what it
                            // learnt counts.
                            let _ = helper.value(kind, memoize);
                        });
                        if std::panic::catch_unwind(search).is_err() {
                            shared.abandoned.store(true, Ordering::Relaxed);
                        }
                        helper_cpu.end();
                        context.stats
                    })
                })
                .collect();
            self.shared = Some(shared);
            let value = self.value(kind, memoize);
            self.shared = None;
            over.store(true, Ordering::Relaxed);
            for helper in helpers {
                // A helper catches its own panic (and taught nothing wrong: its knowledge is exact
                // or absent), so joining it does not fail.
                let stats = helper.join().unwrap_or_default();
                self.context.stats.positions_computed += stats.positions_computed;
                self.context.stats.cache_hits += stats.cache_hits;
                self.context.stats.search += stats.search;
            }
            value
        })
    }

    /// The value of a component searched on the kernel ([`crate::games::kernel`]), if its game
    /// is and it fits a [`Lean`] set: its box has at most 64 cells (so its shorter side at most
    /// 8), or at most 128 with its shorter side at most 8 (a `Lean<W, u128>`), turned to have the
    /// shorter side across. A component of at least [`HELPED_MIN_POINTS`] takes the idle search
    /// threads as helpers, which divide its root's questions on its table.
    fn on_kernel(&mut self, kind: &Kind, memoize: Memoize) -> Option<Result<u8, Interrupted>> {
        if !P::ON_KERNEL {
            return None;
        }
        let (origin, height, width) = each_kind!(kind, _value => return None, set => {
            let (origin, height, width) = set.at_origin();
            (origin.convert::<BoardPoints>(height, width, Symmetry::IDENTITY), height, width)
        });
        let (rows, across, turn) =
            if width <= height { (height, width, Symmetry::IDENTITY) } else { (width, height, Symmetry::TRANSPOSE) };
        if height * width > 128 || across > 8 {
            return None;
        }
        macro_rules! lean {
            ($word:ty: $($w:literal)*) => {
                match across {
                    $($w => self.on_lean::<$w, $word>(origin.convert(height, width, turn), rows, kind, memoize),)*
                    _ => unreachable!("at most 8 across"),
                }
            };
        }
        Some(if height * width <= 64 { lean!(u64: 1 2 3 4 5 6 7 8) } else { lean!(u128: 1 2 3 4 5 6 7 8) })
    }

    /// The value of a component at the origin of a `rows`×`W` lean set, searched on the kernel;
    /// `kind` is the same component (its memo key).
    fn on_lean<const W: u32, T: KernelWord>(
        &mut self,
        set: Lean<W, T>,
        rows: usize,
        kind: &Kind,
        memoize: Memoize,
    ) -> Result<u8, Interrupted> {
        let size = set.len();
        let memo = self.context.memo;
        let persistent = self.memo_remembers && (memoize == Memoize::Always || size >= P::MEMO_MIN_POINTS);
        let key = if persistent { kind.memo_key() } else { None };
        self.context.stats.search.store_reads += u64::from(key.is_some());
        if let Some(value) = key.as_ref().and_then(|key| memo.get(P::TAG, key)).and_then(|v| trusted::<P>(v, size)) {
            self.context.stats.cache_hits += 1;
            return Ok(value);
        }
        // The table may grow to half of what the tables of the solve may still take (taken from
        // their room at once); the other half is for the components too large for the kernel.
        let room = &mut self.learnt.table_room;
        let table = match T::table(&mut self.learnt.kernel, &mut self.learnt.wide_kernel) {
            Some(table) => table,
            slot => {
                let most = *room / 2;
                *room -= most;
                slot.insert(kernel::Table::with_bytes(P::kernel_table_bytes(size), most))
            }
        };
        let remembers = self.memo_remembers;
        let write_costly = |set: Lean<W, T>, value: u8, work: u64| {
            if remembers && set.len() >= P::MEMO_MIN_POINTS && work >= MEMO_MIN_WORK {
                if let Some(key) = kind_of::<P, _>(set).memo_key() {
                    memo.put(P::TAG, &key, u64::from(value), work);
                }
            }
        };
        // A costly component takes the idle cores as helpers: they divide its root's questions.
        let permit =
            (size >= HELPED_MIN_POINTS && self.context.threads.most() > 1).then(|| self.context.threads.take());
        // The whole search runs on the pool's threads (this one waits): they count as helpers.
        let pool = permit.as_ref().filter(|permit| permit.helpers > 0).and_then(|permit| {
            let (starts, ends) = (self.context.helper_cpu.clone(), self.context.helper_cpu.clone());
            rayon::ThreadPoolBuilder::new()
                .num_threads(1 + permit.helpers)
                .thread_name(|i| format!("nimber-search-{i}"))
                .start_handler(move |_| starts.start())
                .exit_handler(move |_| ends.end())
                .build()
                .ok()
        });
        let mut kernel =
            Kernel::new(LeanRules::<P, W, T>::default(), table, &self.context.budget).on_settled(&write_costly);
        if let Some(pool) = &pool {
            kernel = kernel.with_helpers(Helpers::of(pool));
        }
        let value = kernel.value(set.canonical(rows, W as usize));
        let counts = kernel.counts;
        let table =
            T::table(&mut self.learnt.kernel, &mut self.learnt.wide_kernel).as_ref().map_or(0, kernel::Table::len);
        tracing::debug!(
            target: "nimber::kernel",
            points = size,
            expanded = counts.expanded,
            option_evaluations = counts.option_evaluations,
            cutoffs = counts.cutoffs,
            settled = counts.settled,
            table_lookups = counts.table_lookups,
            table_hits = counts.table_hits,
            table,
            "a component searched on the kernel"
        );
        self.nodes += counts.option_evaluations;
        self.context.stats.positions_computed += counts.settled;
        self.context.stats.cache_hits += counts.table_hits;
        self.context.stats.search += counts;
        let value = value?;
        if let (Memoize::Always, Some(key)) = (memoize, key) {
            memo.put(P::TAG, &key, u64::from(value), counts.option_evaluations);
        }
        Ok(value)
    }

    /// The value of a set of points, XOR of its components' values.
    pub fn value_of_set(&mut self, set: BoardPoints) -> Result<u64, Interrupted> {
        let mut value = 0;
        for part in components::<P, _>(set) {
            value ^= u64::from(self.component(part, Memoize::WhenCostly)?);
        }
        Ok(value)
    }

    /// The value of one connected, non-empty set of points of a board (searched on every thread
    /// the solve may use).
    pub fn component(&mut self, part: BoardPoints, memoize: Memoize) -> Result<u8, Interrupted> {
        self.value_on_every_thread(&kind_of::<P, _>(part), memoize)
    }

    /// The value of a component.
    fn value(&mut self, kind: &Kind, memoize: Memoize) -> Result<u8, Interrupted> {
        each_kind!(kind, value => Ok(*value), set => self.value_of(*set, memoize))
    }

    /// Whether a component of `size` points has value `target`; its value when that is known
    /// (or found) on the way.
    fn ask(&mut self, kind: &Kind, size: u32, target: u64) -> Result<Answer, Interrupted> {
        if target > u64::from(P::most_value(size)) {
            // Above the bound of its values (see [`Engine`]).
            return Ok(Answer::Not);
        }
        let target = target as u8;
        each_kind!(kind, value => Ok(Answer::Value(*value)), set => self.is_value(*set, target))
    }

    /// What this solve or the persistent memo (when `persistent`) knows of a component.
    fn recall<S: Shape>(&mut self, key: S, persistent: bool) -> Knowledge {
        let own = S::table(&mut self.learnt.tables).get(&key);
        let known = match (self.shared_for(key.len()), own) {
            (_, Some(known)) if known.exact().is_some() => return known,
            (Some(shared), _) => {
                let theirs = S::shared(shared).0.get(&key);
                match (own, theirs) {
                    (Some(own), Some(theirs)) => Some(own.with(theirs)),
                    (own, theirs) => own.or(theirs),
                }
            }
            _ => own,
        };
        if let Some(known) = known {
            return known;
        }
        let stored = if persistent && self.memo_remembers {
            self.context.stats.search.store_reads += 1;
            self.context.memo.get(P::TAG, &key.memo_key())
        } else {
            None
        };
        match stored.and_then(|value| trusted::<P>(value, key.len())) {
            Some(value) => {
                let known = Knowledge::known(value);
                self.remember(key, known);
                known
            }
            None => Knowledge::default(),
        }
    }

    /// The value of a component in canonical form.
    fn value_of<S: Shape>(&mut self, key: S, memoize: Memoize) -> Result<u8, Interrupted> {
        let size = key.len();
        let persistent = memoize == Memoize::Always || size >= P::MEMO_MIN_POINTS;
        let mut known = self.recall(key, persistent);
        if let Some(value) = known.exact() {
            self.context.stats.cache_hits += 1;
            if memoize == Memoize::Always && self.memo_remembers {
                // Known from this solve: what it cost is not known here (the memo keeps the larger).
                self.context.memo.put(P::TAG, &key.memo_key(), u64::from(value), 0);
            }
            return Ok(value);
        }
        let work_before = self.nodes;
        if zero_by_half_turn::<P, S>(key) {
            self.settled(key, 0, work_before, memoize);
            return Ok(0);
        }
        let value = self.searching(key, |engine| {
            let (options, mut reduced) = engine.options_of(key);
            // If no value below the bound is absent from the options, the value is the bound (see
            // [`Engine`]).
            let most = P::most_value(size) as u8;
            let value = engine.least_absent(&mut known, &options, &mut reduced, most)?.unwrap_or(most);
            engine.recycle(options, reduced);
            Ok(value)
        })?;
        self.settled(key, value, work_before, memoize);
        Ok(value)
    }

    /// `search(self)`, with `key` marked as searched by this thread meanwhile when other threads
    /// search the same position (see [`SharedTables`]).
    fn searching<S: Shape, T>(
        &mut self,
        key: S,
        search: impl FnOnce(&mut Self) -> Result<T, Interrupted>,
    ) -> Result<T, Interrupted> {
        let marks = |engine: &Self, change: fn(u8) -> u8| {
            if let Some(shared) = engine.shared_for(key.len()) {
                S::shared(shared).1.merge(key, |searchers| Searchers(change(searchers.unwrap_or_default().0)));
            }
        };
        marks(self, |searchers| searchers.saturating_add(1));
        let result = search(self);
        marks(self, |searchers| searchers.saturating_sub(1));
        result
    }

    /// Whether another thread is searching a component now (see [`SharedTables`]).
    fn searched_elsewhere(&self, kind: &Kind, size: u32) -> bool {
        match self.shared_for(size) {
            Some(shared) if !shared.abandoned.load(Ordering::Relaxed) => {
                each_kind!(kind, _value => false, set => searched_now(shared, set))
            }
            _ => false,
        }
    }

    /// The tables shared with the other threads searching this position, if there are any and a
    /// component of `size` points is large enough to share (see [`SharedTables`]).
    fn shared_for(&self, size: u32) -> Option<&SharedTables> {
        self.shared.as_deref().filter(|_| size >= P::MEMO_MIN_POINTS)
    }

    /// Whether a component in canonical form whose values may reach `target` has value `target`;
    /// its value when that is known (or found) on the way.
    fn is_value<S: Shape>(&mut self, key: S, target: u8) -> Result<Answer, Interrupted> {
        let persistent = key.len() >= P::MEMO_MIN_POINTS;
        let mut known = self.recall(key, persistent);
        if let Some(value) = known.exact() {
            self.context.stats.cache_hits += 1;
            return Ok(Answer::Value(value));
        }
        if known.has_option_of(target) {
            // Some option has value `target`, so the value is not `target`: nothing to search.
            return Ok(Answer::Not);
        }
        let work_before = self.nodes;
        if zero_by_half_turn::<P, S>(key) {
            self.settled(key, 0, work_before, Memoize::WhenCostly);
            return Ok(Answer::Value(0));
        }
        let value = self.searching(key, |engine| {
            let (options, mut reduced) = engine.options_of(key);
            // An option of value `target` says no at once; if none has it, the value is the least
            // value below it that no option has, or `target` itself.
            let value = if engine.some_option_has_value(&mut known, &options, &mut reduced, target)? {
                None
            } else {
                Some(engine.least_absent(&mut known, &options, &mut reduced, target)?.unwrap_or(target))
            };
            engine.recycle(options, reduced);
            Ok(value)
        })?;
        match value {
            Some(value) => {
                self.settled(key, value, work_before, Memoize::WhenCostly);
                Ok(Answer::Value(value))
            }
            None => {
                self.remember(key, known.with_cost(self.nodes - work_before));
                Ok(Answer::Not)
            }
        }
    }

    /// The ranked options of a component in canonical form (see [`ordered_options`]), with room
    /// for each reduced, in lists from [`Spare`].
    #[allow(clippy::type_complexity)]
    fn options_of<S: Shape>(&mut self, key: S) -> (Vec<(u32, S)>, Vec<Option<Reduced>>) {
        let spare = S::spare(&mut self.spare);
        let mut options = spare.pop().unwrap_or_default();
        let mut unsorted = spare.pop().unwrap_or_default();
        ordered_options::<P, S>(key, &mut unsorted, &mut options);
        S::spare(&mut self.spare).push(unsorted);
        let mut reduced = self.spare.reduced.pop().unwrap_or_default();
        reduced.resize(options.len(), None);
        (options, reduced)
    }

    /// Give lists from [`Engine::options_of`] back to [`Spare`].
    fn recycle<S: Shape>(&mut self, mut options: Vec<(u32, S)>, mut reduced: Vec<Option<Reduced>>) {
        options.clear();
        S::spare(&mut self.spare).push(options);
        reduced.clear();
        self.spare.reduced.push(reduced);
    }

    /// The least value below `end` that no option has, if there is one; `known` learns the
    /// option values met on the way.
    fn least_absent<S: Shape>(
        &mut self,
        known: &mut Knowledge,
        options: &[(u32, S)],
        reduced: &mut [Option<Reduced>],
        end: u8,
    ) -> Result<Option<u8>, Interrupted> {
        for j in 0..end {
            if known.has_option_of(j) {
                continue;
            }
            // Every smaller value is an option's: the value is j unless an option has value j.
            if !self.some_option_has_value(known, options, reduced, j)? {
                return Ok(Some(j));
            }
        }
        Ok(None)
    }

    /// Record the value of a component found by a search that started at `work_before`, here
    /// and, if it is worth it, in the persistent memo.
    fn settled<S: Shape>(&mut self, key: S, value: u8, work_before: u64, memoize: Memoize) {
        self.context.stats.positions_computed += 1;
        let work = self.nodes - work_before;
        self.remember(key, Knowledge::known(value).with_cost(work));
        let costly = key.len() >= P::MEMO_MIN_POINTS && work >= MEMO_MIN_WORK;
        if (memoize == Memoize::Always || costly) && self.memo_remembers {
            self.context.memo.put(P::TAG, &key.memo_key(), u64::from(value), work);
        }
    }

    /// Whether some option (of the ranked `options` of a connected set) has value `target`;
    /// `known` learns every option value met on the way (`target` too, if an option has it), and
    /// `reduced` caches the options reduced so far (by index), for the next question about the
    /// same options.
    fn some_option_has_value<S: Shape>(
        &mut self,
        known: &mut Knowledge,
        options: &[(u32, S)],
        reduced: &mut [Option<Reduced>],
        target: u8,
    ) -> Result<bool, Interrupted> {
        // First the options whose value is known without a search (an enhanced transposition
        // cutoff): one of them with value `target` answers at once.
        for (&(played, rest), slot) in options.iter().zip(reduced.iter_mut()) {
            let value = match slot {
                Some(Reduced { others, asked: None }) => Some(*others),
                Some(Reduced { others, asked: Some((kind, _)) }) => {
                    self.known_value(kind).map(|value| u64::from(value) ^ *others)
                }
                None => {
                    let value = self.known_option_value(played, rest);
                    if let Some(others) = value {
                        *slot = Some(Reduced { others, asked: None });
                    }
                    value
                }
            };
            if let Some(value) = value {
                known.note_option_of(value);
                if value == u64::from(target) {
                    return Ok(true);
                }
            }
        }
        // Options another thread is searching now are left for last (see [`SharedTables`]), but
        // for the first one searched, the eldest brother, which every thread searches: most
        // often it settles the question, and the others' work would be lost.
        let mut later = Vec::new();
        let mut eldest = true;
        for (i, (&(played, rest), slot)) in options.iter().zip(reduced.iter_mut()).enumerate() {
            self.nodes += 1;
            if self.nodes.is_multiple_of(CHECK_INTERVAL) {
                self.context.budget.check()?;
            }
            let option = match slot {
                Some(option) => option,
                None => slot.insert(self.reduce(played, rest)?),
            };
            if !eldest && matches!(&option.asked, Some((kind, size)) if self.searched_elsewhere(kind, *size)) {
                later.push(i);
                continue;
            }
            eldest = false;
            if self.has_value(known, option, target)? {
                return Ok(true);
            }
        }
        for i in later {
            let option = reduced[i].as_ref().expect("reduced above");
            if let Some((kind, size)) = &option.asked {
                self.wait_for_others(kind, *size)?;
            }
            if self.has_value(known, option, target)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Wait while another thread searches a component, so as to use what it learns rather
    /// than do its work twice. This cannot deadlock: a thread waits only for a component smaller
    /// than every one it is searching, so the components waited for along a chain of waiting
    /// threads shrink and the chain cannot close.
    fn wait_for_others(&mut self, kind: &Kind, size: u32) -> Result<(), Interrupted> {
        while self.searched_elsewhere(kind, size) {
            self.context.budget.check()?;
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        Ok(())
    }

    /// Whether a reduced option has value `target`; `known` learns its value if that is found.
    fn has_value(&mut self, known: &mut Knowledge, option: &Reduced, target: u8) -> Result<bool, Interrupted> {
        let value = match &option.asked {
            None => Some(option.others),
            Some((kind, size)) => match self.ask(kind, *size, u64::from(target) ^ option.others)? {
                Answer::Value(value) => Some(u64::from(value) ^ option.others),
                Answer::Not => None,
            },
        };
        if let Some(value) = value {
            known.note_option_of(value);
        }
        Ok(value == Some(u64::from(target)))
    }

    /// The value of an option if it needs no search: every part is valued by rule or already
    /// known to this solve.
    fn known_option_value<S: Shape>(&mut self, played: u32, rest: S) -> Option<u64> {
        if let Some(value) = P::tabled_value(rest) {
            return Some(u64::from(value));
        }
        let mut value = 0;
        for part in P::parts_after(rest, played) {
            value ^= u64::from(self.known_value(&part.kind::<P>())?);
        }
        Some(value)
    }

    /// Reduce an option (a set of points from a connected set) to one question: values found
    /// by rule are added up, equal components cancel in pairs, components already solved are
    /// added up, the values of the others but the largest are computed, and the largest is left
    /// to be asked.
    fn reduce<S: Shape>(&mut self, played: u32, rest: S) -> Result<Reduced, Interrupted> {
        if let Some(value) = P::tabled_value(rest) {
            return Ok(Reduced { others: u64::from(value), asked: None });
        }
        // Components past the eighth (a game's options seldom have so many) are valued at once.
        let mut searched: [Option<(Kind, u32)>; 8] = Default::default();
        let mut count = 0;
        let mut others = 0u64;
        for part in P::parts_after(rest, played) {
            match part.kind::<P>() {
                Kind::Direct(value) => others ^= u64::from(value),
                kind => {
                    let size = part.len();
                    let twin =
                        searched[..count].iter().position(|s| matches!(s, Some((k, n)) if *n == size && *k == kind));
                    match twin {
                        Some(i) => searched[i] = None,
                        None if count < searched.len() => {
                            searched[count] = Some((kind, size));
                            count += 1;
                        }
                        None => others ^= u64::from(self.value(&kind, Memoize::WhenCostly)?),
                    }
                }
            }
        }
        for slot in searched.iter_mut().take(count) {
            if let Some(value) = slot.as_ref().and_then(|(kind, _)| self.known_value(kind)) {
                self.context.stats.cache_hits += 1;
                others ^= u64::from(value);
                *slot = None;
            }
        }
        let largest =
            (0..count).filter(|&i| searched[i].is_some()).max_by_key(|&i| searched[i].as_ref().map_or(0, |s| s.1));
        for (i, slot) in searched.iter_mut().enumerate().take(count) {
            if Some(i) != largest {
                if let Some((kind, _)) = slot.take() {
                    others ^= u64::from(self.value(&kind, Memoize::WhenCostly)?);
                }
            }
        }
        Ok(Reduced { others, asked: largest.and_then(|i| searched[i].take()) })
    }

    /// The value of a component if this solve already knows it.
    fn known_value(&mut self, kind: &Kind) -> Option<u8> {
        each_kind!(kind, value => Some(*value), set => self.known_exact(*set))
    }

    /// The value of a component in canonical form if this solve already knows it.
    fn known_exact<S: Shape>(&mut self, key: S) -> Option<u8> {
        S::table(&mut self.learnt.tables).get(&key).and_then(Knowledge::exact)
    }

    /// Record what was learnt (the tables keep the costliest entries when full), and tell the
    /// other threads searching this position what is worth it (see [`SHARED_MIN_WORTH`]).
    fn remember<S: Shape>(&mut self, key: S, known: Knowledge) {
        S::table(&mut self.learnt.tables).insert(key, known, &mut self.learnt.table_room);
        if let Some(shared) = self.shared_for(key.len()).filter(|_| known.worth() >= SHARED_MIN_WORTH) {
            S::shared(shared).0.merge(key, |theirs| theirs.map_or(known, |theirs| known.with(theirs)));
        }
    }
}

impl<P: Piece> Drop for Engine<'_, '_, P> {
    /// Leaves what was learnt in the context, for its next solve.
    fn drop(&mut self) {
        self.context.learnt = P::learnt(std::mem::take(&mut self.learnt));
    }
}

/// Whether some thread is searching a component in canonical form now.
fn searched_now<S: Shape>(shared: &SharedTables, key: &S) -> bool {
    S::shared(shared).1.get(key).is_some_and(|searchers| searchers.0 > 0)
}
