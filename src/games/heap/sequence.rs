//! The values G(0), G(1), … of one rule set's heaps, computed by the mex of the options with the
//! sparse-space method, and the period that answers every larger heap once it is proven.
//!
//! # The periodicity theorem (Winning Ways, ch. 4; Guy and Smith, 1956)
//! Let `t` be the most tokens a move may take. If G(n + p) = G(n) for every n with
//! n0 ≤ n < 2·n0 + p + t + 1, then G(n + p) = G(n) for every n ≥ n0.
//!
//! *Proof*, by induction on n past the checked range. Take n ≥ 2·n0 + p + t + 1 and a move from a
//! heap of n + p that takes k ≤ t tokens. Leaving nothing is impossible (n + p > t). Leaving one
//! heap of n + p − k: since n − k ≥ n0, G(n + p − k) = G(n − k) by induction, the option of the same
//! move from n. Leaving two heaps a ≤ b with a + b = n + p − k: then b ≥ (n + p − k)/2 ≥ n0 + p, so
//! (a, b − p) is a move from n with G(b − p) = G(b) by induction. Conversely a move from n leaving
//! a ≤ b has b ≥ (n − k)/2 ≥ n0, and (a, b + p) is a move from n + p. So n and n + p have options of
//! the same values, and the same mex. ∎
//!
//! Where no move splits a heap the same argument needs only n0 ≤ n < n0 + t + 1 (every option is
//! one heap of n − k ≥ n0). The argument pairs splits by shifting the larger heap, which a
//! constraint on the split (`!`, `=`) or a split into three heaps does not survive: for such rules
//! nimber proves nothing and answers only the heaps it has computed. A digit that repeats forever
//! has no `t`: the same holds, except for Nim, whose G(n) = n (the options of n are every smaller
//! heap, so their values are 0 … n − 1 by induction).
//!
//! # Arithmetic periodicity: detected, not proven
//! Some hexadecimal games grow instead of repeating: G(n + p) = G(n) + s from some n0, such as 0.3F
//! (p = 6, s = 3 from heap 0). [`Sequence::candidate_period`] reports such a candidate, saltus and
//! all, but nimber proves none: the shift argument above fails, since XOR does not commute with
//! adding the saltus ((1 + 3) ⊕ 1 = 5, but (1 ⊕ 1) + 3 = 3), so a split of n + p need not have the
//! value of a split of n plus s. Howse and Nowakowski ("Periodicity and arithmetic-periodicity in
//! hexadecimal games", Theoretical Computer Science 313, 2004) published a finite test for this
//! case; its statement could not be read here (only the paper's first page is reachable), and
//! nimber does not use a test it cannot cite exactly. CGSuite's take-and-break games likewise accept
//! only saltus 0. So an arithmetic-periodic game is answered on the heaps computed (up to
//! `--max-heap-compute`, or a heapSequence job's `up_to`), never beyond.
//!
//! # The sparse-space method (Winning Ways, ch. 4; Gangolli and Plambeck, 1989; Beling's RC2)
//! Most of a heap's options split it in two, and listing them all costs O(n) a heap. In many games
//! the values fall into *common* ones, which most heaps have, and *rare* ones, such that no split
//! into two common heaps has a common value: then a split reaches the value a heap usually has only
//! through a rare heap, and those are few. nimber works on keys, a heap's value and its size's
//! parity (`G(a) << 1 | a & 1`): the key of a split of `rest` is the XOR of its heaps' keys, the
//! option's value and `rest`'s parity. The splits taking an even and an odd number of tokens form
//! two classes, each with its own common keys, chosen greedily, most frequent first, keeping the
//! class sound: no XOR of two common keys and the class's parity is common. For heap n:
//! 1. every option but the splits into two common heaps is listed: the moves leaving zero, one or
//!    three heaps, and each rare heap paired with the rest (a short list);
//! 2. the mex of those, the *candidate*, is G(n) unless a split into two common heaps reaches it,
//!    which a class can do only if the candidate's key (with the class's parity) is an XOR of two
//!    of its common keys; for such a class the splits are scanned (the classes in turns) until one
//!    reaches the candidate, which gives the next candidate, or none is left.
//!
//! So the answer is the mex of every option, whatever the common keys (poor ones only make the
//! scans longer): the method is exact. A heap whose value is common needs no scan at all. The
//! common keys are chosen afresh when the heaps double and when a class's rare heaps double; where
//! values pass 16 bits, the options are all listed (the plain mex).

use super::rules::{Digit, Rules, Split};
use crate::games::{Budget, Interrupted};

/// How far the values are known beyond the computed ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    /// The first heap of the periodic part, n0.
    pub preperiod: u64,
    /// The period p.
    pub period: u64,
    /// What a period adds to the value (0: plain periodicity; 1 for Nim).
    pub saltus: u64,
    /// The heap below which the theorem's condition was checked (2·n0 + p + t + 1, or the like);
    /// for a candidate period, the heap below which it holds.
    pub checked_to: u64,
}

/// Nim's period: G(n) = n (see the module).
const NIM_PERIOD: Period = Period { preperiod: 0, period: 1, saltus: 1, checked_to: 1 };

/// The values of one rule set's heaps: computed for heaps `0..computed`, and every heap once a
/// period is proven. Values take 2 bytes a heap while they fit (4 after).
#[derive(Clone, Debug)]
pub struct Sequence {
    rules: Rules,
    values: Values,
    period: Option<Period>,
    mex: Mex,
    /// How many heaps were computed at the last look for a period.
    looked_at: usize,
}

/// The computed values: 2 bytes each while every value fits in 16 bits.
#[derive(Clone, Debug)]
enum Values {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl Values {
    fn len(&self) -> usize {
        match self {
            Values::Narrow(cells) => cells.len(),
            Values::Wide(cells) => cells.len(),
        }
    }

    fn get(&self, n: usize) -> Option<u32> {
        match self {
            Values::Narrow(cells) => cells.get(n).map(|&value| u32::from(value)),
            Values::Wide(cells) => cells.get(n).copied(),
        }
    }

    fn bytes_per_value(&self) -> u64 {
        match self {
            Values::Narrow(_) => 2,
            Values::Wide(_) => 4,
        }
    }

    /// Every value, in heap order.
    fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        match self {
            Values::Narrow(cells) => Box::new(cells.iter().map(|&value| u32::from(value))),
            Values::Wide(cells) => Box::new(cells.iter().copied()),
        }
    }
}

/// A stored value: `u16` or `u32`.
trait Cell: Copy + PartialEq {
    fn value(self) -> u32;
    fn of(value: u32) -> Option<Self>;
}

impl Cell for u16 {
    #[inline(always)]
    fn value(self) -> u32 {
        u32::from(self)
    }
    fn of(value: u32) -> Option<Self> {
        u16::try_from(value).ok()
    }
}

impl Cell for u32 {
    #[inline(always)]
    fn value(self) -> u32 {
        self
    }
    fn of(value: u32) -> Option<Self> {
        Some(value)
    }
}

/// The moves of the rules, by how many heaps they leave: the numbers of tokens taken.
#[derive(Clone, Debug, Default)]
struct Moves {
    /// Moves that may take a heap whole.
    whole: Vec<usize>,
    /// Moves that may leave one heap.
    one: Vec<usize>,
    /// Moves that may leave two heaps, and how they must compare.
    two: Vec<(usize, Split)>,
    /// Moves that may leave three heaps.
    three: Vec<usize>,
    /// A digit repeated for every number of tokens from this one on.
    tail: Option<(usize, Digit)>,
}

impl Moves {
    fn of(rules: &Rules) -> Self {
        let mut moves = Moves::default();
        for &(take, digit) in rules.listed_digits() {
            let take = take as usize;
            if digit.may_leave(0) {
                moves.whole.push(take);
            }
            if digit.may_leave(1) {
                moves.one.push(take);
            }
            if digit.may_leave(2) {
                moves.two.push((take, digit.split()));
            }
            if digit.may_leave(3) {
                moves.three.push(take);
            }
        }
        moves.tail = rules.tail_digit().map(|(from, digit)| (from as usize, digit));
        moves
    }
}

/// How many splits of one class are scanned before the other class's turn.
const SCAN_RUN: usize = 256;

/// How many options the heaps computed between two looks at the budget may look at: about ten to a
/// hundred microseconds of work.
const CHECK_EVERY_OPTIONS: u64 = 1 << 16;

/// A split into three heaps checks the budget every row `a` of its splits `a ≤ b ≤ c` once the heap
/// is this large (a row is then up to half the heap's options).
const LONG_ROW: usize = 4096;

/// The splitting moves that take an even, or an odd, number of tokens, and the rare/common split
/// of the sparse-space method for them (see the module).
#[derive(Clone, Debug, Default)]
struct Class {
    /// 0 for the moves taking an even number of tokens, 1 for odd.
    parity: usize,
    /// The numbers of tokens the class's moves take, and how the two heaps must compare.
    takes: Vec<(usize, Split)>,
    /// The common keys (a heap's key: its value, then its size's parity), as a bitset.
    common: Vec<u64>,
    /// Every XOR of two common keys, as a bitset: the keys of the options a split into two
    /// common heaps can have.
    sums: Vec<u64>,
    /// The heaps (from 1) whose key is rare, ascending.
    rare: Vec<u32>,
    /// How many heaps were rare when the split was last chosen.
    rare_at_choice: usize,
}

/// The key of a heap of `n` with value `value`: `value << 1 | n & 1`. A split of `rest` into
/// heaps a + b has the XOR of their keys as its key: its value, then the parity of `rest`.
#[inline(always)]
fn key(value: u32, n: usize) -> u32 {
    value << 1 | (n & 1) as u32
}

/// Counts one more of `slot` in `counts`.
#[inline(always)]
fn count(counts: &mut Vec<u64>, slot: usize) {
    match counts.get_mut(slot) {
        Some(count) => *count += 1,
        None => {
            counts.resize(slot + 1, 0);
            counts[slot] = 1;
        }
    }
}

fn mark(bits: &mut [u64], value: u32) {
    bits[(value >> 6) as usize] |= 1 << (value & 63);
}

fn contains(bits: &[u64], value: u32) -> bool {
    bits.get((value >> 6) as usize).is_some_and(|word| word >> (value & 63) & 1 == 1)
}

/// The least value whose bit is clear in `bits` (`bits` always has one).
fn first_clear(bits: &[u64]) -> u32 {
    let (word, bits) = bits.iter().enumerate().find(|(_, word)| **word != u64::MAX).expect("a clear bit");
    word as u32 * 64 + bits.trailing_ones()
}

/// The values of a heap's options as they are found: a bitset in memory, or one word in a
/// register when every value is below 64.
trait Marks {
    /// Marks `value` as an option's value.
    fn mark(&mut self, value: u32);
    /// Marks every value whose bit is set in `bits`.
    fn mark_all(&mut self, bits: &[u64]);
    /// The least value not marked: the mex.
    fn first_clear(&self) -> u32;
}

impl Marks for u64 {
    #[inline(always)]
    fn mark(&mut self, value: u32) {
        debug_assert!(value < 64);
        *self |= 1 << (value & 63);
    }

    fn mark_all(&mut self, bits: &[u64]) {
        *self |= bits[0];
    }

    #[inline(always)]
    fn first_clear(&self) -> u32 {
        self.trailing_ones()
    }
}

impl Marks for &mut [u64] {
    #[inline(always)]
    fn mark(&mut self, value: u32) {
        mark(self, value);
    }

    fn mark_all(&mut self, bits: &[u64]) {
        for (word, other) in self.iter_mut().zip(bits) {
            *word |= other;
        }
    }

    #[inline(always)]
    fn first_clear(&self) -> u32 {
        first_clear(self)
    }
}

impl Class {
    /// Chooses the common keys afresh, most frequent first, each one that keeps the split sound
    /// (no XOR of two common keys and the class's parity is common), and lists the rare heaps.
    fn choose<C: Cell>(&mut self, key_frequencies: &[u64], words: usize, values: &[C]) {
        self.common = vec![0; words];
        self.sums = vec![0; words];
        let mut keys: Vec<u32> =
            (0..key_frequencies.len() as u32).filter(|&k| key_frequencies[k as usize] > 0).collect();
        keys.sort_by_key(|&k| (std::cmp::Reverse(key_frequencies[k as usize]), k));
        let mut common: Vec<u32> = Vec::new();
        let parity = self.parity as u32;
        for key in keys {
            if key == parity || contains(&self.sums, key ^ parity) {
                continue;
            }
            common.push(key);
            mark(&mut self.common, key);
            for &other in &common {
                mark(&mut self.sums, key ^ other);
            }
        }
        let rare = values.iter().enumerate().skip(1).filter(|&(n, cell)| !contains(&self.common, key(cell.value(), n)));
        self.rare = rare.map(|(n, _)| n as u32).collect();
        self.rare_at_choice = self.rare.len();
    }

    /// Whether a split of this class into two common heaps could have the value `value` at heap `n`.
    #[inline(always)]
    fn may_reach(&self, value: u32, n: usize) -> bool {
        contains(&self.sums, key(value, n ^ self.parity))
    }
}

/// The state of the mex computation that the next heap needs besides the values: the sparse-space
/// classes, the frequencies, the values a repeated digit reaches, and a scratch bitset.
#[derive(Clone, Debug, Default)]
struct Mex {
    moves: Moves,
    /// Whether to use the sparse-space method (always, but in the tests that compare it with the
    /// plain mex, and once values pass 16 bits).
    sparse: bool,
    /// The splits into two heaps of any sizes or unequal ones, by the parity of the tokens taken.
    classes: [Class; 2],
    /// How many computed heaps have each value.
    frequencies: Vec<u64>,
    /// How many computed heaps have each key.
    key_frequencies: Vec<u64>,
    /// Bits past the largest value: every value is below `1 << bits`.
    bits: u32,
    /// The values of heaps `1..=tail_reach` (for a repeated digit that leaves one heap).
    tail_values: Vec<u64>,
    tail_reach: usize,
    /// Scratch: the values of the options found.
    seen: Vec<u64>,
}

impl Mex {
    fn new(rules: &Rules) -> Self {
        let moves = Moves::of(rules);
        let mut classes = [Class::default(), Class { parity: 1, ..Class::default() }];
        for &(take, split) in &moves.two {
            if split != Split::Equal {
                classes[take % 2].takes.push((take, split));
            }
        }
        let mut mex = Mex { moves, classes, sparse: true, ..Mex::default() };
        mex.resize();
        mex
    }

    /// Words of the value bitsets: every option's value is below `1 << bits`, and the mex at most
    /// that.
    fn words(&self) -> usize {
        ((2usize << self.bits) / 64).max(1)
    }

    fn resize(&mut self) {
        let words = self.words();
        self.seen.resize(words, 0);
        self.tail_values.resize(words, 0);
    }

    /// Whether the sparse-space classes are in use.
    fn sparse_in_use(&self) -> bool {
        self.sparse && self.bits <= 16
    }

    /// Takes `value` as the value of heap `n` (the next one).
    fn record(&mut self, n: usize, value: u32) {
        count(&mut self.frequencies, value as usize);
        count(&mut self.key_frequencies, key(value, n) as usize);
        if value >> self.bits != 0 {
            self.bits = 32 - value.leading_zeros();
            self.resize();
        }
        if n > 0 {
            for class in &mut self.classes {
                if !class.takes.is_empty() && !contains(&class.common, key(value, n)) {
                    class.rare.push(n as u32);
                }
            }
        }
    }

    /// Chooses the classes' common keys afresh where it is time: when the heaps double, and when
    /// a class's rare heaps have doubled since its last choice.
    fn choose<C: Cell>(&mut self, values: &[C]) {
        if !self.sparse_in_use() {
            return;
        }
        let n = values.len();
        // Keys are below 2 << bits, and XORs of keys too: the key bitsets need twice the values'.
        let words = 2 * self.words();
        for class in &mut self.classes {
            let due = (n >= 64 && n.is_power_of_two()) || class.rare.len() > 2 * class.rare_at_choice + 256;
            if !class.takes.is_empty() && (due || class.sums.len() < words) {
                class.choose(&self.key_frequencies, words, values);
            }
        }
    }

    /// The value of heap `values.len()`, the mex of its options, and how many options were looked
    /// at (the work it took); stops with `Err` when `budget` ends within a long heap.
    fn next<C: Cell>(&mut self, values: &[C], budget: &Budget) -> Result<(u32, u64), Interrupted> {
        let n = values.len();
        if let Some((start, digit)) = self.moves.tail {
            if digit.may_leave(1) {
                while self.tail_reach + start < n {
                    self.tail_reach += 1;
                    mark(&mut self.tail_values, values[self.tail_reach].value());
                }
            }
        }
        let words = self.words();
        // Values below 32 (all of them in most games): the options' values fit in one word,
        // held in a register rather than marked in memory one store after another.
        if words == 1 {
            let mut seen = 0u64;
            return self.mex_of_options(values, &mut seen, budget);
        }
        let mut seen = std::mem::take(&mut self.seen);
        seen[..words].fill(0);
        let found = self.mex_of_options(values, &mut &mut seen[..words], budget);
        self.seen = seen;
        found
    }

    /// The mex of heap `values.len()`'s options, marked in `seen` (empty), and how many options
    /// were looked at. A split into three heaps looks at ~n²/12 options: the budget is checked
    /// every row of them once a row is long.
    #[inline(always)]
    fn mex_of_options<C: Cell, S: Marks>(
        &self,
        values: &[C],
        seen: &mut S,
        budget: &Budget,
    ) -> Result<(u32, u64), Interrupted> {
        let n = values.len();
        let at = |heap: usize| values[heap].value();
        let mut looked = (self.moves.whole.len() + self.moves.one.len()) as u64 + 1;
        for &take in &self.moves.whole {
            if n == take {
                seen.mark(0);
            }
        }
        for &take in &self.moves.one {
            if n > take {
                seen.mark(at(n - take));
            }
        }
        if let Some((start, digit)) = self.moves.tail {
            if n >= start && digit.may_leave(0) {
                seen.mark(0);
            }
            if n > start && digit.may_leave(1) {
                seen.mark_all(&self.tail_values);
            }
        }
        for &take in &self.moves.three {
            let Some(rest) = n.checked_sub(take) else { continue };
            for a in 1..=rest / 3 {
                if rest >= LONG_ROW {
                    budget.check()?;
                }
                for b in a..=(rest - a) / 2 {
                    seen.mark(at(a) ^ at(b) ^ at(rest - a - b));
                }
                looked += ((rest - a) / 2 + 1 - a) as u64;
            }
        }
        for &(take, split) in &self.moves.two {
            if split == Split::Equal && n >= take + 2 && (n - take).is_multiple_of(2) {
                seen.mark(0);
            }
        }
        if !self.sparse_in_use() {
            for class in &self.classes {
                for &(take, split) in &class.takes {
                    let Some(rest) = n.checked_sub(take).filter(|&rest| rest >= 2) else { continue };
                    let half = if split == Split::Unequal { (rest - 1) / 2 } else { rest / 2 };
                    for (a, b) in values[1..=half].iter().zip(values[rest - half..rest].iter().rev()) {
                        seen.mark(a.value() ^ b.value());
                    }
                    looked += half as u64;
                }
            }
            return Ok((seen.first_clear(), looked));
        }
        // 1. Every split with a rare heap.
        for class in &self.classes {
            for &(take, split) in &class.takes {
                let Some(rest) = n.checked_sub(take).filter(|&rest| rest >= 2) else { continue };
                looked += mark_rare_splits(values, rest, &class.rare, split, seen);
            }
        }
        // 2. The candidate is the mex unless a split into two common heaps reaches it: scan such a
        // class's splits until one does (then the next candidate) or none is left.
        let mut candidate = seen.first_clear();
        let mut scan = [(0usize, 1usize); 2];
        let mut scanned = [false; 2];
        loop {
            let pending = |c: usize| !scanned[c] && self.classes[c].may_reach(candidate, n);
            let pending = [pending(0), pending(1)];
            if !pending[0] && !pending[1] {
                return Ok((candidate, looked));
            }
            // Round robin in short runs: a hit in either class moves the candidate on.
            let mut hit = false;
            for c in (0..2).filter(|&c| pending[c]) {
                let (t, a) = &mut scan[c];
                let class = &self.classes[c];
                let mut budget = SCAN_RUN;
                while let Some(&(take, split)) = class.takes.get(*t) {
                    let rest = n.saturating_sub(take);
                    let half = match split {
                        _ if rest < 2 => 0,
                        Split::Unequal => (rest - 1) / 2,
                        _ => rest / 2,
                    };
                    let end = half.min(*a + budget - 1);
                    if *a <= end {
                        let mut pairs = values[*a..=end].iter().zip(values[rest - end..=rest - *a].iter().rev());
                        let found = pairs.position(|(x, y)| {
                            let value = x.value() ^ y.value();
                            seen.mark(value);
                            value == candidate
                        });
                        hit = found.is_some();
                        let scanned = found.map_or(end + 1 - *a, |at| at + 1);
                        looked += scanned as u64;
                        *a += scanned;
                        budget -= scanned;
                    }
                    if hit || budget == 0 {
                        break;
                    }
                    (*t, *a) = (*t + 1, 1);
                }
                if class.takes.get(*t).is_none() {
                    scanned[c] = true;
                }
                if hit {
                    break;
                }
            }
            if hit {
                candidate = seen.first_clear();
            }
        }
    }

    /// Computes the values of heaps `values.len()..stop`, checking `budget` whenever the heaps since
    /// the last check looked at [`CHECK_EVERY_OPTIONS`] options (a few tens of microseconds, however
    /// costly the rules' heaps). `Ok(false)` when a value does not fit in `C` (its heap not computed).
    fn extend<C: Cell>(&mut self, values: &mut Vec<C>, stop: usize, budget: &Budget) -> Result<bool, Interrupted> {
        values.reserve(stop.saturating_sub(values.len()));
        let mut looked = CHECK_EVERY_OPTIONS;
        while values.len() < stop {
            let n = values.len();
            if looked >= CHECK_EVERY_OPTIONS {
                budget.check()?;
                looked = 0;
            }
            if n.is_multiple_of(128) {
                self.choose(values);
            }
            let (value, options) = self.next(values, budget)?;
            looked += options;
            let Some(cell) = C::of(value) else { return Ok(false) };
            values.push(cell);
            self.record(n, value);
        }
        Ok(true)
    }
}

/// Marks the value of every split of a heap of `rest` into a rare heap of `rare` (ascending) and the
/// rest, but the equal split when `split` is unequal (`values` holds G(0) to at least G(rest − 1));
/// returns how many rare heaps were looked at. Kept out of line: inlined into the mex (itself
/// inlined into [`Sequence::extend_to`]), its loop reloaded the values' address from the stack at
/// every split, and 0.376 to 2^21 took 10.8 s instead of 7.5 s.
#[inline(never)]
fn mark_rare_splits<C: Cell>(values: &[C], rest: usize, rare: &[u32], split: Split, seen: &mut impl Marks) -> u64 {
    let below = rare.partition_point(|&a| (a as usize) < rest);
    for &a in &rare[..below] {
        let a = a as usize;
        if split == Split::Unequal && 2 * a == rest {
            continue;
        }
        seen.mark(values[a].value() ^ values[rest - a].value());
    }
    below as u64
}

/// The least shift `p` (from 1, below `shifts`) that `accept(p, repeats)` takes, and its `repeats`:
/// how far the end of a sequence of `len` items repeats itself `p` items earlier, read backwards:
/// the largest `k` with item `len − 1 − i` equal to item `len − 1 − i − p` for every `i < k`
/// (`same(i, j)` compares items `len − 1 − i` and `len − 1 − j`). The Z-algorithm (Gusfield,
/// *Algorithms on Strings, Trees and Sequences*, 1997, §1.4) on the items reversed, stopped at the
/// first shift taken: O(len) in all and 4 bytes a shift, where looking at each shift alone costs
/// O(len²) (a period search of the subtraction game {65536} took 12 s that way).
fn first_repeating_shift(
    len: usize,
    shifts: usize,
    same: impl Fn(usize, usize) -> bool,
    accept: impl Fn(usize, usize) -> bool,
) -> Option<(usize, usize)> {
    let mut repeats = vec![0u32; shifts.min(len)];
    // [left, right): the rightmost window found so far that repeats the start.
    let (mut left, mut right) = (0usize, 0usize);
    for p in 1..repeats.len() {
        let mut k = if p < right { (repeats[p - left] as usize).min(right - p) } else { 0 };
        while p + k < len && same(k, p + k) {
            k += 1;
        }
        repeats[p] = k as u32;
        if p + k > right {
            (left, right) = (p, p + k);
        }
        if accept(p, k) {
            return Some((p, k));
        }
    }
    None
}

/// The smallest period the theorem proves on `values` (see the module), for rules that take at most
/// `most_taken` tokens and split (`splits`) or not. For each period p the computed values repeat
/// from heap `len − p − repeats` on ([`first_repeating_shift`]), which is its preperiod n0; the
/// theorem proves it once the values reach `checked_to + p`. O(len).
fn proven_period<C: Cell>(values: &[C], most_taken: u64, splits: bool) -> Option<Period> {
    let len = values.len() as u64;
    let period_of = |period: u64, repeats: u64| {
        let preperiod = len - period - repeats;
        let checked_to = match splits {
            true => 2 * preperiod + period + most_taken + 1,
            false => preperiod + most_taken + 1,
        };
        (checked_to + period <= len).then_some(Period { preperiod, period, saltus: 0, checked_to })
    };
    let last = values.len().wrapping_sub(1);
    let same = |i: usize, j: usize| values[last - i] == values[last - j];
    let accept = |p: usize, repeats: usize| period_of(p as u64, repeats as u64).is_some();
    let (period, repeats) = first_repeating_shift(values.len(), values.len() / 2 + 1, same, accept)?;
    period_of(period as u64, repeats as u64)
}

/// The heap after `n` at which to look for a period: every 64 heaps up to 1024, then four times
/// per doubling.
fn next_check(n: usize) -> usize {
    let step = if n < 1024 { 64 } else { 1 << (n.ilog2() - 2) };
    (n / step + 1) * step
}

impl Sequence {
    /// The values of `rules`, none computed yet (Nim is known at once).
    pub fn new(rules: Rules) -> Self {
        let period = rules.is_nim().then_some(NIM_PERIOD);
        let mut mex = Mex::new(&rules);
        mex.record(0, 0);
        Sequence { mex, rules, values: Values::Narrow(vec![0]), period, looked_at: 1 }
    }

    /// The values of `rules` computed by the plain mex alone, to check the sparse-space method.
    #[cfg(test)]
    pub fn plain(rules: Rules) -> Self {
        let mut sequence = Sequence::new(rules);
        sequence.mex.sparse = false;
        sequence
    }

    /// The rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// How many heaps' values are computed (heaps `0..computed`).
    pub fn computed(&self) -> u64 {
        self.values.len() as u64
    }

    /// The bytes the sequence holds: its values and its lists of rare heaps.
    pub fn bytes(&self) -> u64 {
        let rare: usize = self.mex.classes.iter().map(|class| class.rare.len()).sum();
        self.computed() * self.values.bytes_per_value() + rare as u64 * 4
    }

    /// The proven period, if any.
    pub fn period(&self) -> Option<Period> {
        self.period
    }

    /// The value of a heap of `n`, if it is known (computed, or past a proven period).
    pub fn value(&self, n: u64) -> Option<u64> {
        if let Some(value) = usize::try_from(n).ok().and_then(|n| self.values.get(n)) {
            return Some(u64::from(value));
        }
        let period = self.period?;
        let laps = (n - period.preperiod) / period.period;
        let base = self.values.get((period.preperiod + (n - period.preperiod) % period.period) as usize)?;
        Some(u64::from(base) + laps * period.saltus)
    }

    /// The values of heaps `heaps`, all computed (within `0..computed()`).
    pub fn computed_values(&self, heaps: std::ops::Range<usize>) -> Vec<u64> {
        match &self.values {
            Values::Narrow(cells) => cells[heaps].iter().map(|&cell| u64::from(cell)).collect(),
            Values::Wide(cells) => cells[heaps].iter().map(|&cell| u64::from(cell)).collect(),
        }
    }

    /// The largest value computed.
    pub fn largest_value(&self) -> u64 {
        self.mex.frequencies.len() as u64 - 1
    }

    /// How many computed heaps have each value: `frequencies()[v]` heaps have value `v` (the
    /// checksum published runs give).
    pub fn frequencies(&self) -> Vec<u64> {
        self.mex.frequencies.clone()
    }

    /// The common values of the sparse-space method, for the splits taking an even and an odd
    /// number of tokens: each a value and the parity of the heaps it is common on (empty for a
    /// class with no such split, or when the plain mex is in use).
    pub fn common_values(&self) -> [Vec<(u64, u8)>; 2] {
        self.mex.classes.clone().map(|class| {
            let keys = (0..class.common.len() as u32 * 64).filter(|&key| contains(&class.common, key));
            keys.map(|key| (u64::from(key >> 1), (key & 1) as u8)).collect()
        })
    }

    /// How many computed heaps (from 1) have a rare value, in the split that has more of them
    /// (0 where no move splits).
    pub fn rare_heaps(&self) -> u64 {
        self.mex.classes.iter().map(|class| class.rare.len() as u64).max().unwrap_or(0)
    }

    /// The period the computed values show, proven or not: the proven one, else the smallest `p`
    /// (at most a quarter of the heaps computed) with which the second half of the values repeats,
    /// each lap adding the same saltus; `preperiod` is the heap from which it holds, `checked_to`
    /// the heap below which it does. G(n + p) − G(n) is the same s for every n ≥ n0 exactly when the
    /// differences G(n + 1) − G(n) repeat with period p from n0 on, so the preperiods of every p
    /// come from one pass over the differences (the Z-algorithm, as for a proven period): O(computed).
    pub fn candidate_period(&self) -> Option<Period> {
        if self.period.is_some() {
            return self.period;
        }
        let len = self.values.len();
        let at = |n: usize| i64::from(self.values.get(n).expect("computed"));
        // Step `i` from the end: G(len − 1 − i) − G(len − 2 − i).
        let step = |i: usize| at(len - 1 - i) - at(len - 2 - i);
        let candidate = |period: usize, repeats: usize| {
            let saltus = at(len - 1) - at(len - 1 - period);
            let preperiod = len - 1 - period - repeats;
            (saltus >= 0 && preperiod <= len / 2).then_some(Period {
                preperiod: preperiod as u64,
                period: period as u64,
                saltus: saltus as u64,
                checked_to: (len - period) as u64,
            })
        };
        let same = |i: usize, j: usize| step(i) == step(j);
        let (period, repeats) =
            first_repeating_shift(len.saturating_sub(1), len / 4 + 1, same, |p, k| candidate(p, k).is_some())?;
        candidate(period, repeats)
    }

    /// Computes the values of heaps up to `len` (exclusive; at most 2^32), then looks for a period
    /// that the theorem proves, now and then on the way: stops at the first. Stops with `Err`
    /// when `budget` ends, keeping every value it computed.
    pub fn extend_to(&mut self, len: u64, budget: &Budget) -> Result<(), Interrupted> {
        let len = len.min(1 << 32) as usize;
        while self.period.is_none() && self.values.len() < len {
            let stop = next_check(self.values.len()).min(len);
            let fitted = match &mut self.values {
                Values::Narrow(cells) => self.mex.extend(cells, stop, budget)?,
                Values::Wide(cells) => self.mex.extend(cells, stop, budget)?,
            };
            if !fitted {
                let Values::Narrow(cells) = &self.values else { unreachable!("u32 holds every value") };
                self.values = Values::Wide(cells.iter().map(|&cell| u32::from(cell)).collect());
            }
            // At the checkpoints, and at the end once the values grew by a quarter since the last
            // look (a look costs O(computed)).
            let computed = self.values.len();
            if computed == stop
                && (computed == next_check(self.looked_at) || computed >= self.looked_at + self.looked_at / 4)
            {
                self.looked_at = computed;
                self.find_period();
            }
        }
        Ok(())
    }

    /// Looks for the smallest period the theorem proves on the computed values, if the rules admit
    /// the theorem (see the module).
    fn find_period(&mut self) {
        if self.period.is_some() || !self.rules.admits_periodicity_proof() {
            return;
        }
        let Some(most_taken) = self.rules.most_taken() else { return };
        let splits = self.rules.splits();
        self.period = match &self.values {
            Values::Narrow(cells) => proven_period(cells, most_taken, splits),
            Values::Wide(cells) => proven_period(cells, most_taken, splits),
        };
    }

    /// The sequence as bytes, for a memo: [`Sequence::decode`] reads them back.
    pub fn encode(&self) -> Vec<u8> {
        self.encode_within(usize::MAX)
    }

    /// The sequence as at most `max_bytes` bytes (at least 44): its first values, as many as fit,
    /// with the period when they reach a lap past its preperiod ([`Sequence::decode`] needs that).
    pub fn encode_within(&self, max_bytes: usize) -> Vec<u8> {
        const HEADER: usize = 2 + 5 * 8;
        let width = self.values.bytes_per_value() as usize;
        let kept = self.values.len().min(max_bytes.saturating_sub(HEADER) / width);
        let period = self.period.filter(|period| period.preperiod + period.period <= kept as u64);
        let wide = matches!(self.values, Values::Wide(_));
        let mut bytes = Vec::with_capacity(HEADER + kept * width);
        bytes.extend([2, u8::from(period.is_some()) | u8::from(wide) << 1]);
        let period = period.unwrap_or(Period { preperiod: 0, period: 0, saltus: 0, checked_to: 0 });
        for number in [period.preperiod, period.period, period.saltus, period.checked_to, kept as u64] {
            bytes.extend_from_slice(&number.to_le_bytes());
        }
        match &self.values {
            Values::Narrow(cells) => cells[..kept].iter().for_each(|cell| bytes.extend_from_slice(&cell.to_le_bytes())),
            Values::Wide(cells) => cells[..kept].iter().for_each(|cell| bytes.extend_from_slice(&cell.to_le_bytes())),
        }
        bytes
    }

    /// The sequence of `rules` that [`Sequence::encode`] wrote, or `None` if `bytes` are not one.
    pub fn decode(rules: Rules, bytes: &[u8]) -> Option<Self> {
        let (&[version, flags], rest) = bytes.split_first_chunk::<2>()?;
        if version != 2 || flags > 3 || rest.len() < 40 {
            return None;
        }
        let number = |i: usize| u64::from_le_bytes(rest[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let (preperiod, period, saltus, checked_to, computed) = (number(0), number(1), number(2), number(3), number(4));
        let cells = &rest[40..];
        let values = match flags & 2 != 0 {
            false => Values::Narrow(cells.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()),
            true => Values::Wide(cells.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()),
        };
        let width = if flags & 2 != 0 { 4 } else { 2 };
        if cells.len() as u64 != computed.checked_mul(width)? || computed == 0 || values.get(0) != Some(0) {
            return None;
        }
        let period = (flags & 1 != 0).then_some(Period { preperiod, period, saltus, checked_to });
        if period.is_some_and(|p| p.period == 0 || p.preperiod.checked_add(p.period).is_none_or(|end| end > computed)) {
            return None;
        }
        if rules.is_nim() != period.is_some_and(|p| p.saltus != 0) {
            return None;
        }
        Some(Sequence::of_values(rules, values, period))
    }

    /// The sequence of `rules` whose values are `values` (G(0), G(1), …, as a job's table holds
    /// them), with the period they prove; `None` if they are not values of a sequence (empty, G(0)
    /// not 0, or past 32 bits).
    pub fn from_values(rules: Rules, values: &[u64]) -> Option<Self> {
        if values.first() != Some(&0) {
            return None;
        }
        let values = match values.iter().all(|&value| value <= u64::from(u16::MAX)) {
            true => Values::Narrow(values.iter().map(|&value| value as u16).collect()),
            false => Values::Wide(values.iter().map(|&value| u32::try_from(value).ok()).collect::<Option<_>>()?),
        };
        let period = rules.is_nim().then_some(NIM_PERIOD);
        let mut sequence = Sequence::of_values(rules, values, period);
        sequence.find_period();
        Some(sequence)
    }

    /// The sequence of `rules` with these values and period: the state of the mex rebuilt from them.
    fn of_values(rules: Rules, values: Values, period: Option<Period>) -> Self {
        let mut mex = Mex::new(&rules);
        for (n, value) in values.iter().enumerate() {
            mex.record(n, value);
        }
        match &values {
            Values::Narrow(cells) => mex.choose(cells),
            Values::Wide(cells) => mex.choose(cells),
        }
        let looked_at = values.len();
        Sequence { rules, values, period, mex, looked_at }
    }
}
