//! Heap games: take-and-break codes (octal and hexadecimal games, Grundy's game), subtraction games
//! and Nim, on heaps of any size up to 2^64 − 1.
//!
//! A position is the rules ([`rules`]) and a list of heaps; a move takes tokens from one heap and
//! leaves zero, one, two or three heaps in its place, as the rules allow. A position's value is the
//! XOR of its heaps' values, G(n) for a heap of n ([`sequence`]): computed by the mex of the
//! options up to the compute limit ([`max_heap_compute`], `--max-heap-compute`), and for every
//! larger heap once the periodicity theorem proves a period. Rules that admit no proof (splits into
//! three heaps or under a constraint, a digit repeated forever other than Nim's) refuse larger heaps
//! at once, without computing.
//!
//! The values of each rule set are kept in a bounded in-memory cache, and in the memo under the
//! game's tag and the rules' canonical bytes (equivalent codes share them): so a query on a proven
//! game is a table lookup, the values survive restarts and are shared in a fleet, and a
//! computation that a deadline stopped continues where it stopped on the next query.

mod moves;
pub mod rules;
pub mod sequence;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

use self::rules::{Rules, Split};
use self::sequence::{Period, Sequence};
use super::{
    display_setup_error, Budget, FieldPath, Game, GameTag, Interrupted, Memo, MoveSet, Nimber, SearchContext,
    SetupError, MAX_MEMO_BYTES,
};
use super::{Lookup, ServedGame};

/// The most heaps of a position.
pub const MAX_HEAPS: usize = 10_000;
/// The default of the largest heap whose value is computed (rather than read off a proven
/// period): 2^20 heaps, 2 MiB of values (2 bytes a heap), so that the in-process cache of 64 MiB
/// holds at least 32 rule sets computed that far.
pub const DEFAULT_MAX_HEAP_COMPUTE: u64 = 1 << 20;
/// The most `--max-heap-compute` may be: 2^22 heaps, whose values (2 bytes a heap, 4 once a value
/// passes 65 535) fit in the longest bytes a memo keeps ([`MAX_MEMO_BYTES`]), with the encoding's
/// header past them cut off ([`Sequence::encode_within`]).
pub const MOST_MAX_HEAP_COMPUTE: u64 = 1 << 22;

/// The largest heap whose value is computed, set once at startup ([`set_max_heap_compute`]).
static MAX_HEAP_COMPUTE: AtomicU64 = AtomicU64::new(DEFAULT_MAX_HEAP_COMPUTE);

/// Sets the largest heap whose value is computed (`--max-heap-compute`), at most
/// [`MOST_MAX_HEAP_COMPUTE`]; for the whole process.
pub fn set_max_heap_compute(largest: u64) {
    MAX_HEAP_COMPUTE.store(largest.min(MOST_MAX_HEAP_COMPUTE), Ordering::Relaxed);
}

/// The largest heap whose value is computed (rather than read off a proven period).
pub fn max_heap_compute() -> u64 {
    MAX_HEAP_COMPUTE.load(Ordering::Relaxed)
}
/// The default of `--heap-values-cache-bytes`: the most bytes of values the process keeps in
/// memory, over every rule set (32 rule sets computed to the default `--max-heap-compute`).
pub const DEFAULT_VALUES_CACHE_BYTES: u64 = 64 << 20;

/// Sets the most bytes of values the process keeps in memory (`--heap-values-cache-bytes`); the
/// rule sets used least recently go first. For the whole process.
pub fn set_values_cache_bytes(bytes: u64) {
    SEQUENCES.set_capacity(bytes);
}

/// Why a heap position is not valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeapsError {
    /// No rules were given.
    NoRules,
    /// The code is malformed or uses a form left out.
    BadCode {
        /// The code.
        code: String,
        /// The 0-based index of the character at fault.
        at: usize,
        /// What is wrong with it.
        why: &'static str,
    },
    /// More than [`rules::MAX_SUBTRACTION_SET`] numbers in a subtraction set.
    SubtractionSetTooLarge(usize),
    /// A number of a subtraction set is 0 or past [`rules::MAX_TAKE`].
    BadTake {
        /// Its 0-based index.
        index: usize,
        /// The number.
        take: u64,
    },
    /// More than [`MAX_HEAPS`] heaps.
    TooManyHeaps(usize),
}

impl SetupError for HeapsError {
    fn field(&self) -> FieldPath {
        match *self {
            HeapsError::NoRules => FieldPath::field("rules"),
            HeapsError::BadCode { .. } => FieldPath::field("code"),
            HeapsError::SubtractionSetTooLarge(_) => FieldPath::field("subtraction").then("take"),
            HeapsError::BadTake { index, .. } => FieldPath::field("subtraction").then("take").at(index),
            HeapsError::TooManyHeaps(_) => FieldPath::field("heaps"),
        }
    }

    fn problem(&self, _name: &dyn Fn(&FieldPath) -> String) -> String {
        match self {
            HeapsError::NoRules => "is required: set code, subtraction or nim".into(),
            HeapsError::BadCode { code, at, why } => {
                let shown =
                    code.get(*at..).and_then(|rest| rest.chars().next()).map_or("end".into(), |c| format!("{c:?}"));
                format!("{}: character {at} ({shown}) {why}", crate::quote::quoted(code))
            }
            HeapsError::SubtractionSetTooLarge(count) => {
                format!("has {count} numbers; the limit is {}", rules::MAX_SUBTRACTION_SET)
            }
            HeapsError::BadTake { take, .. } => format!("is {take}; each must be from 1 to {}", rules::MAX_TAKE),
            HeapsError::TooManyHeaps(count) => format!("has {count} heaps; the limit is {MAX_HEAPS}"),
        }
    }
}

display_setup_error!(HeapsError);

/// The rules as they were given, so that a position is sent back as it came.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Given {
    Code(String),
    Subtraction { take: Vec<u64>, all_but: bool },
    Nim,
}

/// The rules as given: the code, `subtraction {1, 3, 4}` (`all-but {…}`), or `nim`.
impl std::fmt::Display for Given {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = |take: &[u64]| take.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        match self {
            Given::Code(code) => f.write_str(code),
            Given::Subtraction { take, all_but: false } => write!(f, "subtraction {{{}}}", set(take)),
            Given::Subtraction { take, all_but: true } => write!(f, "all-but {{{}}}", set(take)),
            Given::Nim => f.write_str("nim"),
        }
    }
}

/// A position of a heap game: its rules and its heaps.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Heaps {
    given: Given,
    rules: Arc<Rules>,
    heaps: Vec<u64>,
}

/// A move: `take` tokens from heap `heap`, leaving `left` heaps of the sizes `leave[..left]`
/// (ascending). Moves are ordered by heap, then tokens taken, then heaps left, then their sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HeapMove {
    /// Which heap (0-based index into [`Heaps::heaps`]).
    pub heap: usize,
    /// How many tokens are taken.
    pub take: u64,
    /// How many heaps are left (0 to 3).
    pub left: u8,
    /// Their sizes, ascending, then zeros.
    pub leave: [u64; 3],
}

impl HeapMove {
    /// Taking `take` from heap `heap`, leaving the heaps `left` (at most three, ascending).
    pub(crate) fn new(heap: usize, take: u64, left: &[u64]) -> Self {
        let mut leave = [0; 3];
        leave[..left.len()].copy_from_slice(left);
        HeapMove { heap, take, left: left.len() as u8, leave }
    }

    /// The heaps left.
    pub fn left(&self) -> &[u64] {
        &self.leave[..self.left as usize]
    }
}

/// The values of every rule set met so far, weighed by their bytes.
static SEQUENCES: LazyLock<quick_cache::sync::Cache<Rules, Arc<Sequence>, SequenceWeight>> =
    LazyLock::new(|| quick_cache::sync::Cache::with_weighter(256, DEFAULT_VALUES_CACHE_BYTES, SequenceWeight));

#[derive(Clone, Copy)]
struct SequenceWeight;

impl quick_cache::Weighter<Rules, Arc<Sequence>> for SequenceWeight {
    fn weight(&self, _rules: &Rules, sequence: &Arc<Sequence>) -> u64 {
        sequence.bytes() + 256
    }
}

/// Keeps `sequence` (computed elsewhere than a solve: a heapSequence job) where solves look for the
/// values of its rules: the process's cache and the memo, unless they hold as much already; so that
/// a solve answers every heap the job computed, and past its proven period.
pub fn remember(sequence: &Arc<Sequence>, memo: &dyn Memo) {
    let rules = sequence.rules();
    let known = |held: &Sequence| (held.period().is_some(), held.computed());
    if in_process(rules).is_some_and(|held| known(&held) >= known(sequence)) {
        return;
    }
    SEQUENCES.insert(rules.clone(), sequence.clone());
    let bytes = sequence.encode_within(MAX_MEMO_BYTES);
    memo.put_bytes(GameTag::Heaps, &rules.canonical_bytes(), bytes, sequence.computed());
}

/// The values of `rules` known without computing: this process's, else the memo's (which may
/// read the disk and the network: never call it on the async runtime).
pub fn known_values(rules: &Rules, memo: &dyn Memo) -> Option<Arc<Sequence>> {
    let stored = || memo.get_bytes(GameTag::Heaps, &rules.canonical_bytes());
    in_process(rules).or_else(|| Sequence::decode(rules.clone(), &stored()?).map(Arc::new))
}

/// The values of `rules` this process holds: from the cache, or at once for Nim (G(n) = n, proven).
fn in_process(rules: &Rules) -> Option<Arc<Sequence>> {
    SEQUENCES.get(rules).or_else(|| {
        let nim = rules.is_nim().then(|| Arc::new(Sequence::new(rules.clone())))?;
        SEQUENCES.insert(rules.clone(), nim.clone());
        Some(nim)
    })
}

impl Heaps {
    /// The position of these heaps under `rules`.
    fn new(given: Given, rules: Rules, heaps: Vec<u64>) -> Result<Self, HeapsError> {
        if heaps.len() > MAX_HEAPS {
            return Err(HeapsError::TooManyHeaps(heaps.len()));
        }
        Ok(Heaps { given, rules: Arc::new(rules), heaps })
    }

    /// The heaps.
    pub fn heaps(&self) -> &[u64] {
        &self.heaps
    }

    /// The heaps `heaps` under the take-and-break code `code` (`0.77`), as a `Heaps` message with
    /// that code gives it.
    pub fn with_code(code: &str, heaps: Vec<u64>) -> Result<Self, HeapsError> {
        Heaps::new(Given::Code(code.into()), Rules::code(code)?, heaps)
    }

    /// Nim on the heaps `heaps`.
    pub fn nim(heaps: Vec<u64>) -> Result<Self, HeapsError> {
        Heaps::new(Given::Nim, Rules::nim(), heaps)
    }

    /// Whether the rules are Nim's (however they were given).
    pub fn is_nim(&self) -> bool {
        self.rules.is_nim()
    }

    /// The values of the rules, known at least up to `largest`: from the in-process cache, else
    /// from the memo (bytes that do not decode are ignored, and overwritten), else computed further
    /// up to the compute limit ([`max_heap_compute`]). Whenever the values grew (also when the
    /// budget stopped their computation) they go back to the memo, so that a retry, a restart or
    /// another replica continues from them. Past the limit without a proven period:
    /// [`Interrupted::PastComputeLimit`], at once where the rules admit no proof. Reads the memo:
    /// never call it on the async runtime (see [`ServedGame::is_cheap`]).
    fn sequence(&self, largest: u64, context: &mut SearchContext) -> Result<Arc<Sequence>, Interrupted> {
        let cached = in_process(&self.rules).unwrap_or_else(|| Arc::new(Sequence::new((*self.rules).clone())));
        // Known in this process (Nim at once): nothing to read or store.
        if cached.value(largest).is_some() {
            return Ok(cached);
        }
        let key = self.rules.canonical_bytes();
        let stored = context
            .memo
            .get_bytes(GameTag::Heaps, &key)
            .and_then(|bytes| Sequence::decode((*self.rules).clone(), &bytes));
        // How far the memo knows the values: whether proven, and how many computed.
        let state = |sequence: &Sequence| (sequence.period().is_some(), sequence.computed());
        let stored_state = stored.as_ref().map(state);
        if stored.is_some() {
            context.stats.cache_hits += 1;
        }
        let mut longer = match stored {
            Some(stored) if state(&stored) > state(&cached) => stored,
            _ => (*cached).clone(),
        };
        let limit = max_heap_compute();
        let mut computed = Ok(());
        if longer.value(largest).is_none() && (largest <= limit || self.rules.admits_periodicity_proof()) {
            let target = (largest.min(limit) + 1).max(longer.computed() * 2).min(limit + 1);
            let before = longer.computed();
            computed = longer.extend_to(target, &context.budget);
            context.stats.positions_computed += longer.computed().saturating_sub(before);
        }
        if stored_state != Some(state(&longer)) && longer.computed() > 1 {
            context.memo.put_bytes(GameTag::Heaps, &key, longer.encode_within(MAX_MEMO_BYTES), longer.computed());
        }
        let longer = Arc::new(longer);
        SEQUENCES.insert((*self.rules).clone(), longer.clone());
        computed?;
        match longer.value(largest) {
            Some(_) => Ok(longer),
            None => Err(Interrupted::PastComputeLimit { known: longer.computed(), limit }),
        }
    }

    /// The values of the rules if they are known for every heap, without computing.
    fn known_sequence(&self) -> Option<Arc<Sequence>> {
        let sequence = in_process(&self.rules)?;
        sequence.value(self.largest()).map(|_| sequence)
    }

    /// The values of the rules for every heap of the position (computed as needed).
    fn sequence_for_heaps(&self, context: &mut SearchContext) -> Result<Arc<Sequence>, Interrupted> {
        self.sequence(self.largest(), context)
    }

    /// The largest heap (0 with none).
    fn largest(&self) -> u64 {
        self.heaps.iter().copied().max().unwrap_or(0)
    }

    /// The value of a sequence's heap (known by construction of the sequence).
    fn value_of(sequence: &Sequence, heap: u64) -> Nimber {
        sequence.value(heap).expect("the sequence answers every heap of the position")
    }

    /// The position's value: the XOR of its heaps' values in `sequence`.
    fn total(&self, sequence: &Sequence) -> Nimber {
        self.heaps.iter().fold(0, |total, &heap| total ^ Self::value_of(sequence, heap))
    }

    /// The moves to a position of value `target` from heap number `index` of `size` tokens, the
    /// other heaps' values adding up to `total` with its own: those whose heaps left are worth
    /// `wanted` together. A large heap under a proven period by residues
    /// ([`Heaps::large_heap_moves_to`]), any other by scanning its groups of moves; a set takes a
    /// few bytes per thousand moves of the heap, never a list of them.
    fn heap_moves_to(
        &self,
        index: usize,
        size: u64,
        wanted: Nimber,
        sequence: &Arc<Sequence>,
        budget: &Budget,
    ) -> Result<MoveSet<HeapMove>, Interrupted> {
        let groups = moves::groups(&self.rules, index, size);
        let count: u128 = groups.iter().map(|group| group.len()).sum();
        if count > 4096 && sequence.period().is_some() {
            return self.large_heap_moves_to(index, size, wanted, sequence, budget);
        }
        let mut found = MoveSet::empty();
        for group in groups {
            found.append(moves::reaching(group, sequence, wanted, budget)?);
        }
        Ok(found)
    }
}

impl Game for Heaps {
    type Move = HeapMove;
    type Value = Nimber;

    fn value(&self, context: &mut SearchContext) -> Result<Nimber, Interrupted> {
        Ok(self.total(&*self.sequence_for_heaps(context)?))
    }

    fn moves(&self) -> MoveSet<HeapMove> {
        let groups = self.heaps.iter().enumerate().flat_map(|(index, &size)| moves::groups(&self.rules, index, size));
        moves::move_set(groups.collect())
    }

    fn is_legal(&self, mv: &HeapMove) -> bool {
        let Some(&size) = self.heaps.get(mv.heap) else { return false };
        let left = mv.left();
        let Some(rest) = size.checked_sub(mv.take) else { return false };
        let sizes_fit = left.iter().all(|&heap| heap >= 1)
            && left.windows(2).all(|pair| pair[0] <= pair[1])
            && left.iter().try_fold(0u64, |sum, &heap| sum.checked_add(heap)) == Some(rest)
            && mv.leave[left.len()..].iter().all(|&zero| zero == 0);
        let allowed = self.rules.digit(mv.take).is_some_and(|digit| {
            digit.may_leave(left.len())
                && match (left, digit.split()) {
                    ([a, b], Split::Unequal) => a != b,
                    ([a, b], Split::Equal) => a == b,
                    _ => true,
                }
        });
        mv.left <= 3 && sizes_fit && allowed
    }

    fn play_unchecked(&self, mv: &HeapMove) -> Self {
        debug_assert!(self.is_legal(mv), "{mv:?} is not legal in {self:?}");
        let mut heaps = self.heaps[..mv.heap].to_vec();
        heaps.extend_from_slice(mv.left());
        heaps.extend_from_slice(&self.heaps[mv.heap + 1..]);
        Heaps { given: self.given.clone(), rules: self.rules.clone(), heaps }
    }

    /// By the values of the options, never by evaluating positions: a heap's options to the value
    /// its heap must take (by residues under a proven period, else by scanning), checking the budget
    /// as it goes.
    fn moves_to(&self, target: Nimber, context: &mut SearchContext) -> Result<MoveSet<HeapMove>, Interrupted> {
        let sequence = self.sequence_for_heaps(context)?;
        let total = self.total(&sequence);
        let mut moves = MoveSet::empty();
        for (index, &size) in self.heaps.iter().enumerate() {
            context.budget.check()?;
            let wanted = total ^ Self::value_of(&sequence, size) ^ target;
            moves.append(self.heap_moves_to(index, size, wanted, &sequence, &context.budget)?);
        }
        Ok(moves)
    }

    /// The first of [`Game::moves_to`], found heap by heap, each heap's moves looked at only until
    /// the first that reaches the value.
    fn first_move_to(&self, target: Nimber, context: &mut SearchContext) -> Result<Option<HeapMove>, Interrupted> {
        let sequence = self.sequence_for_heaps(context)?;
        let total = self.total(&sequence);
        for (index, &size) in self.heaps.iter().enumerate() {
            context.budget.check()?;
            let wanted = total ^ Self::value_of(&sequence, size) ^ target;
            let groups = moves::groups(&self.rules, index, size);
            if groups.iter().map(|group| group.len()).sum::<u128>() > 4096 && sequence.period().is_some() {
                let found = self.large_heap_moves_to(index, size, wanted, &sequence, &context.budget)?;
                if let Some(first) = found.get(0) {
                    return Ok(Some(first));
                }
                continue;
            }
            for group in groups {
                if let Some(first) = moves::first_reaching(group, &sequence, wanted, &context.budget)? {
                    return Ok(Some(first));
                }
            }
        }
        Ok(None)
    }
}

impl Heaps {
    /// The moves from a large heap of `size` (index `index`) to value `wanted`, under a proven period
    /// (so no split is constrained and none leaves three heaps). The heaps a move leaves whole are
    /// checked one by one; for splits `a + b = rest` with `a` past the preperiod n0, G(a) and G(b)
    /// depend only on `a`'s residue modulo the period p (b ≥ rest/2 ≥ n0 too), so the matching
    /// `a` are the residues that match, repeated every p: one group, indexed arithmetically over the
    /// residues of the first lap ([`moves::Reaching`]). Cost: O(digits × (n0 + p)), whatever the
    /// heap, checking `budget` every few thousand splits; memory: a few bytes per thousand splits.
    fn large_heap_moves_to(
        &self,
        index: usize,
        size: u64,
        wanted: Nimber,
        sequence: &Arc<Sequence>,
        budget: &Budget,
    ) -> Result<MoveSet<HeapMove>, Interrupted> {
        let period = sequence.period().expect("called under a proven period");
        let (n0, p) = (period.preperiod.max(1), period.period);
        let value = |heap: u64| Self::value_of(sequence, heap);
        let one = move |take: u64, left: &[u64]| HeapMove::new(index, take, left);
        let listed_limit = self.rules.tail_digit().map_or(u64::MAX, |(from, _)| from - 1);
        let mut moves = MoveSet::empty();
        for (take, digit) in self.rules.digits_up_to(size.min(listed_limit)) {
            budget.check()?;
            let rest = size - take;
            if digit.may_leave(0) && rest == 0 && wanted == 0 {
                moves.push_listed(vec![one(take, &[])]);
            }
            if digit.may_leave(1) && rest > 0 && value(rest) == wanted {
                moves.push_listed(vec![one(take, &[rest])]);
            }
            if !(digit.may_leave(2) && rest >= 2) {
                continue;
            }
            let half = rest / 2;
            let pairs = |first: u64, count: u64| moves::pairs(index, size, take, first, count);
            if half < n0 + p {
                moves.append(moves::reaching(pairs(1, half), sequence, wanted, budget)?);
                continue;
            }
            moves.append(moves::reaching(pairs(1, n0 - 1), sequence, wanted, budget)?);
            let lap = Arc::new(moves::Reaching::scan(pairs(n0, p), sequence.clone(), wanted, budget)?);
            let per_lap = u128::from(lap.count());
            if per_lap == 0 {
                continue;
            }
            let span = half - n0 + 1;
            let (laps, remainder) = (span / p, span % p);
            let count = u128::from(laps) * per_lap + u128::from(lap.count_before(u128::from(remainder)));
            moves.push(count, move |i| {
                let shift = (i / per_lap) as u64 * p;
                let first = lap.get((i % per_lap) as u64);
                one(take, &[first.leave[0] + shift, first.leave[1] - shift])
            });
        }
        if let Some((start, digit)) = self.rules.tail_digit() {
            // Nim's repeated digit: one heap left of each smaller size.
            if size >= start && digit.may_leave(1) && (1..size).contains(&wanted) {
                // Under a proven period only Nim repeats a digit: G(m) = m, so the one heap left is `wanted`.
                let take = size - wanted;
                if take >= start {
                    moves.push_listed(vec![one(take, &[wanted])]);
                }
            }
            if size >= start && digit.may_leave(0) && wanted == 0 {
                moves.push_listed(vec![one(size, &[])]);
            }
        }
        Ok(moves)
    }
}

/// How a rule set's values are known to this process (a heap game's [`ServedGame::evidence`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeapValues {
    /// The rules as they were given (their code, subtraction set, or Nim).
    pub rules: String,
    /// How far the values are known.
    pub known: ValuesKnown,
}

/// How far a rule set's values are known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValuesKnown {
    /// For every heap: the period is proven.
    Proven(Period),
    /// Computed for the heaps below `up_to`, no period proven yet.
    Computed {
        /// The first heap whose value is not computed.
        up_to: u64,
    },
}

impl ServedGame for Heaps {
    const NAME: &'static str = "heaps";
    const SEARCHES: bool = false;
    type Error = HeapsError;
    type Learnt = ();

    fn items(&self) -> usize {
        self.heaps.len()
    }

    fn parts(&self) -> Option<Vec<Self>> {
        let one = |&heap: &u64| Heaps { given: self.given.clone(), rules: self.rules.clone(), heaps: vec![heap] };
        (self.heaps.len() > 1).then(|| self.heaps.iter().map(one).collect())
    }

    fn move_in_part(index: usize, mv: HeapMove) -> HeapMove {
        HeapMove { heap: index, ..mv }
    }

    /// Cheap once the rules' values are known for every heap (a lookup each); computing them is not.
    fn values_cache_bytes() -> u64 {
        SEQUENCES.weight()
    }

    fn is_cheap(&self) -> bool {
        self.known_sequence().is_some()
    }

    /// Only from the values already known: computing them is work.
    fn value_without_search(&self, _lookup: &Lookup) -> Option<(Nimber, u64)> {
        Some((self.total(&*self.known_sequence()?), 0))
    }

    /// The rules' values as this process knows them: proven (the period and the heap below which
    /// the theorem's condition was checked), or computed below a heap; nothing before any is.
    fn evidence(&self) -> Vec<HeapValues> {
        let Some(sequence) = in_process(&self.rules) else { return Vec::new() };
        let known = match sequence.period() {
            Some(period) => ValuesKnown::Proven(period),
            None => ValuesKnown::Computed { up_to: sequence.computed() },
        };
        vec![HeapValues { rules: self.given.to_string(), known }]
    }
}

mod wire;
pub use self::wire::rules_from_proto;

#[cfg(test)]
mod tests;
