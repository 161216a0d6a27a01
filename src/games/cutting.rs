//! The cutting game (POJ 2311): players take turns cutting one rectangular piece of paper into two
//! rectangles along a grid line; whoever cuts out a 1×1 piece wins.
//!
//! # The rules taken literally, for any collection of pieces
//! - A position holding a 1×1 piece is over: the player to move has lost ([`SumValue::Finished`]), and
//!   there are no moves.
//! - Otherwise a position holding a 1-wide piece of length at least 2 is won at once
//!   ([`SumValue::WinsAtOnce`]): cut a 1×1 off it.
//! - Otherwise every piece is at least 2×2. No single cut of such a piece makes a 1×1, and a cut that
//!   leaves a 1-wide part hands the opponent an immediate win, so it is never a good move: the
//!   position plays exactly like the normal-play game in which only cuts leaving both parts at least
//!   2 wide are allowed, in any disjunctive sum. Its value is [`SumValue::Nimber`] of the XOR of
//!   [`piece_value`] over the pieces.
//!
//! # Closed form
//! See [`piece_value`]: the value of a W×H piece is built from Dawson's Kayles, which is periodic,
//! so every size up to `u64::MAX` is answered in constant time.

use super::sum::SumValue;
use super::{display_setup_error, FieldPath, Game, Interrupted, MoveSet, SearchContext, SetupError};

/// The most pieces a position may hold.
pub const MAX_PIECES: usize = 100_000;

/// Dawson's Kayles values are exceptional (not yet periodic) for heap sizes below this.
const DAWSON_PRE_PERIOD: u64 = 53;
/// The period of Dawson's Kayles from [`DAWSON_PRE_PERIOD`] on.
const DAWSON_PERIOD: u64 = 34;
/// Entries in [`DAWSON_KAYLES`]: the pre-period and one period.
const DAWSON_TABLE_LEN: usize = (DAWSON_PRE_PERIOD + DAWSON_PERIOD) as usize;
/// Dawson's Kayles values for heap sizes `0..DAWSON_TABLE_LEN`, computed by the compiler from the
/// recursion (see [`dawson_kayles_table`]).
const DAWSON_KAYLES: [u8; DAWSON_TABLE_LEN] = dawson_kayles_table();

/// The smallest side length `n` whose value [`side_value`] is periodic: `D(n + 34) = D(n)` for
/// every `n` from here on (a side of length `n` plays as the Dawson's Kayles heap of size `n − 2`).
const SIDE_PERIODIC_FROM: u64 = DAWSON_PRE_PERIOD + 2;

/// Dawson's Kayles (octal game 0.07) for heap sizes `0..DAWSON_TABLE_LEN`:
/// `DK(n) = mex{DK(a) ⊕ DK(b) : a + b = n − 2}` (remove two adjacent pins, from an end or the middle).
const fn dawson_kayles_table() -> [u8; DAWSON_TABLE_LEN] {
    let mut table = [0u8; DAWSON_TABLE_LEN];
    let mut n = 2;
    while n < DAWSON_TABLE_LEN {
        // Bit v is set when some option has value v (values stay far below 64; a larger one would
        // make this constant evaluation fail to compile rather than go wrong).
        let mut options: u64 = 0;
        let mut a = 0;
        while a <= n - 2 {
            options |= 1 << (table[a] ^ table[n - 2 - a]);
            a += 1;
        }
        let mut mex = 0;
        while options & (1 << mex) != 0 {
            mex += 1;
        }
        table[n] = mex;
        n += 1;
    }
    table
}

/// Dawson's Kayles value of a heap of `n` pins, for every `n`.
///
/// The values are purely periodic with period 34 from `n = 53` on. By the periodicity theorem for
/// octal games (Guy–Smith; *Winning Ways*, ch. 4): for a game removing at most 2 tokens, if
/// `DK(n + p) = DK(n)` holds for all `n0 ≤ n < 2·n0 + p + 2`, it holds for all `n ≥ n0`. With
/// `n0 = 53`, `p = 34` that is a finite check (`n < 142`); the test
/// `dawson_kayles_is_periodic_and_matches_recursion` verifies the recursion up to 3000.
fn dawson_kayles(n: u64) -> u64 {
    let index =
        if n < DAWSON_TABLE_LEN as u64 { n } else { DAWSON_PRE_PERIOD + (n - DAWSON_PRE_PERIOD) % DAWSON_PERIOD };
    u64::from(DAWSON_KAYLES[index as usize])
}

/// `D(n)`: the value of a side of length `n` that may only be split into two parts of length at
/// least 2: `D(n) = mex{D(a) ⊕ D(b) : a + b = n, a, b ≥ 2}`. With `a = a' + 2`, `b = b' + 2` this is
/// the Dawson's Kayles recursion shifted by two, so `D(n) = DK(n − 2)`; sides shorter than 2 have no
/// split at all and value 0.
fn side_value(n: u64) -> u64 {
    if n < 2 {
        0
    } else {
        dawson_kayles(n - 2)
    }
}

/// The Grundy value of a `width`×`height` piece in the game where a cut must leave both parts at
/// least 2 wide (the game every position of pieces ≥ 2×2 plays as; see the module docs). A piece with
/// a side below 2 has no such cut and gets 0 (the literal game treats such pieces specially, as
/// [`SumValue::Finished`] or [`SumValue::WinsAtOnce`]).
///
/// With `x = D(width)`, `y = D(height)` (the side value: Dawson's Kayles shifted by two):
/// `g = x` if `y = 0`; `g = y` if `x = 0`; `g = 1` if both are nonzero. Values are at most 9.
///
/// # Proof
/// By induction on `W + H` (the formula is the claim for every smaller piece). Let `S(n)` be the set
/// `{D(a) ⊕ D(b) : a + b = n, a, b ≥ 2}`, so `D(n) = mex S(n)`; in particular `0 ∈ S(n)` (some
/// split has `D(a) = D(b)`) exactly when `D(n) ≠ 0`. The options of W×H are the vertical cuts
/// `g(a, H) ⊕ g(b, H)` with `a + b = W` and the horizontal cuts `g(W, a) ⊕ g(W, b)` with `a + b = H`.
/// - `x = y = 0`. By induction `g(a, H) = D(a)` (as `D(H) = 0`), so the vertical options are `S(W)`,
///   and likewise the horizontal ones are `S(H)`. Neither contains 0, so `g = 0`.
/// - `y = 0 ≠ x`. The vertical options are `S(W)` again: they contain `0, …, x − 1` but not `x`.
///   Horizontally, `g(W, a)` is `x` when `D(a) = 0` and `1` otherwise (as `D(W) ≠ 0`). Both parts
///   with `D = 0` would put 0 in `S(H)`, impossible as `D(H) = 0`; so a horizontal option is
///   `x ⊕ 1` or `1 ⊕ 1 = 0`, never `x`. Hence `g = x`.
/// - `x = 0 ≠ y`: the same with the sides exchanged, `g = y`.
/// - `x ≠ 0 ≠ y`. Vertically `g(a, H)` is `y` when `D(a) = 0` and `1` otherwise, so a vertical option
///   is `0` (both parts alike) or `y ⊕ 1 ≠ 1`. Since `D(W) ≠ 0` there is a split with `D(a) = D(b)`,
///   which gives `0`. Horizontally likewise options are `0` or `x ⊕ 1 ≠ 1`. So `0` is an option and
///   `1` is not: `g = 1`.
///
/// Checked against the exhaustive table up to 256×256 in the test
/// `piece_value_matches_exhaustive_table`.
pub fn piece_value(width: u64, height: u64) -> u64 {
    if width < 2 || height < 2 {
        return 0;
    }
    match (side_value(width), side_value(height)) {
        (x, 0) => x,
        (0, y) => y,
        _ => 1,
    }
}

/// A set of cut positions along one side, ascending: `first + period·m + o` for every `m ≥ 0` and
/// every set bit `o` of `offsets` (all below `period`), up to `last`. Counted and indexed in
/// constant time however many positions it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CutPositions {
    /// Where the first period starts.
    first: u64,
    /// The length of a period (at least 1, above every offset).
    period: u64,
    /// The positions taken in each period, as bits (offsets from the period's start).
    offsets: u64,
    /// The largest position allowed.
    last: u64,
}

impl CutPositions {
    /// No position at all.
    const NONE: CutPositions = CutPositions { first: 1, period: 1, offsets: 0, last: 0 };

    /// Every position from `first` to `last` (none if `first > last`).
    fn range(first: u64, last: u64) -> Self {
        CutPositions { first, period: 1, offsets: 1, last }
    }

    /// The two end positions of a side of length `side`: 1 and `side − 1` (one position if they
    /// coincide, none if `side < 2`).
    fn ends(side: u64) -> Self {
        match side {
            0 | 1 => CutPositions::NONE,
            _ => CutPositions { first: 1, period: (side - 2).max(1), offsets: 1, last: side - 1 },
        }
    }

    /// The positions `at` from `first` to `last` with `keep(at)`; at most 64 candidates
    /// (`last − first < 64`) are tried one by one.
    fn listed(first: u64, last: u64, keep: impl Fn(u64) -> bool) -> Self {
        if first > last {
            return CutPositions::NONE;
        }
        let offsets = (0..=(last - first).min(63)).filter(|&offset| keep(first + offset));
        CutPositions { first, period: 64, offsets: offsets.fold(0, |bits, offset| bits | 1 << offset), last }
    }

    /// How many positions.
    fn count(&self) -> u128 {
        let (first, last, period) = (u128::from(self.first), u128::from(self.last), u128::from(self.period));
        (0..64u32)
            .filter(|&offset| self.offsets >> offset & 1 == 1)
            .map(|offset| first + u128::from(offset))
            .filter(|&start| start <= last)
            .map(|start| (last - start) / period + 1)
            .sum()
    }

    /// Position number `index` (0-based, below [`CutPositions::count`]): period `index / k`, offset
    /// number `index mod k` of the `k` in a period. The positions up to `last` are a prefix of this
    /// order, as offsets stay below the period.
    fn nth(&self, index: u128) -> u64 {
        let per_period = u128::from(self.offsets.count_ones());
        let mut offsets = self.offsets;
        for _ in 0..index % per_period {
            offsets &= offsets - 1;
        }
        let at = u128::from(self.first)
            + u128::from(self.period) * (index / per_period)
            + u128::from(offsets.trailing_zeros());
        // At most `last`, for an index below the count.
        at as u64
    }
}

/// The cuts of a side of length `side` (the other side being `other`) at `2 ≤ at ≤ side − 2` whose
/// parts' values XOR to `need`: three sets, ascending and in this order.
///
/// The parts are `at × other` and `(side − at) × other`, and [`piece_value`] of a part depends on its
/// sides only through their side values `D`; with `other` fixed, the option is a function of
/// `D(at)` and `D(side − at)`. Both are periodic with period 34 once `at ≥ 55` and
/// `side − at ≥ 55` ([`SIDE_PERIODIC_FROM`]), so on the middle range `55 ≤ at ≤ side − 55` the
/// option depends only on `at mod 34`: each of the 34 residues is tried once (at its first position)
/// and kept or dropped as a whole. The at most 53 positions below the middle and the at most 53
/// above it are tried one by one. (`piece_value` is symmetric, so horizontal cuts of W×H are the
/// cuts of the side H with `other = W`.) Time: about 140 evaluations of [`piece_value`].
fn interior_cuts(side: u64, other: u64, need: u64) -> [CutPositions; 3] {
    if side < 4 {
        return [CutPositions::NONE; 3];
    }
    let option = |at: u64| piece_value(at, other) ^ piece_value(side - at, other);
    let keep = |at: u64| option(at) == need;
    let low = CutPositions::listed(2, (side - 2).min(SIDE_PERIODIC_FROM - 1), keep);
    let middle = match side.checked_sub(SIDE_PERIODIC_FROM) {
        Some(last) if last >= SIDE_PERIODIC_FROM => {
            let residues = (0..DAWSON_PERIOD)
                .filter(|&offset| SIDE_PERIODIC_FROM + offset <= last && keep(SIDE_PERIODIC_FROM + offset));
            let offsets = residues.fold(0, |bits, offset| bits | 1 << offset);
            CutPositions { first: SIDE_PERIODIC_FROM, period: DAWSON_PERIOD, offsets, last }
        }
        _ => CutPositions::NONE,
    };
    let high_first = side.saturating_sub(SIDE_PERIODIC_FROM - 1).max(SIDE_PERIODIC_FROM);
    let high = CutPositions::listed(high_first, side - 2, keep);
    [low, middle, high]
}

/// The cuts of `piece` that lead to `target` from a position of value `value` (not finished):
/// vertical sets, then horizontal ones, each ascending. By the module docs:
/// - from [`SumValue::WinsAtOnce`], to [`SumValue::Finished`]: the two end cuts of a 1-wide piece along
///   its length (cutting off a 1×1); to [`SumValue::WinsAtOnce`]: every other cut (no other cut makes a
///   1×1, and the 1-wide piece or its parts stay);
/// - from a nimber (every piece at least 2×2), to [`SumValue::WinsAtOnce`]: the end cuts of each side,
///   which leave a 1-wide part; to `Nimber(t)`: the cuts leaving both parts at least 2 wide whose
///   parts' values XOR to `v ⊕ total ⊕ t` ([`interior_cuts`]);
/// - nothing else.
fn piece_cuts_to(piece: &Piece, value: SumValue, target: SumValue) -> [[CutPositions; 3]; 2] {
    let none = [CutPositions::NONE; 3];
    let only = |positions| [positions, CutPositions::NONE, CutPositions::NONE];
    let (width, height) = (piece.width, piece.height);
    // Along a 1-wide piece's length: vertical cuts when it lies flat (height 1).
    let along_length = |positions| if height == 1 { [only(positions), none] } else { [none, only(positions)] };
    let length = width.max(height);
    match (value, target) {
        (SumValue::WinsAtOnce, SumValue::Finished) if piece.is_one_wide() => along_length(CutPositions::ends(length)),
        (SumValue::WinsAtOnce, SumValue::WinsAtOnce) if piece.is_one_wide() => {
            along_length(CutPositions::range(2, length - 2))
        }
        (SumValue::WinsAtOnce, SumValue::WinsAtOnce) => {
            [only(CutPositions::range(1, width - 1)), only(CutPositions::range(1, height - 1))]
        }
        (SumValue::Nimber(_), SumValue::WinsAtOnce) => {
            [only(CutPositions::ends(width)), only(CutPositions::ends(height))]
        }
        (SumValue::Nimber(total), SumValue::Nimber(t)) => {
            let need = piece_value(width, height) ^ total ^ t;
            [interior_cuts(width, height, need), interior_cuts(height, width, need)]
        }
        _ => [none, none],
    }
}

/// A rectangular piece of paper, in grid cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Width in cells (at least 1).
    pub width: u64,
    /// Height in cells (at least 1).
    pub height: u64,
}

impl Piece {
    /// A 1×1 piece: cutting one out ends the game.
    fn is_single_cell(&self) -> bool {
        self.width == 1 && self.height == 1
    }

    /// A 1-wide piece with a 1×1 to cut off (length at least 2).
    fn is_one_wide(&self) -> bool {
        self.width.min(self.height) == 1 && self.width.max(self.height) >= 2
    }
}

/// Which way a cut goes (vertical cuts come first in move order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CutDirection {
    /// A vertical line: splits the width into `at` and `width − at`.
    Vertical,
    /// A horizontal line: splits the height into `at` and `height − at`.
    Horizontal,
}

/// A move: cut one piece into two rectangles. Moves order by piece, direction, then `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cut {
    /// Which piece (0-based index into [`Paper::pieces`]).
    pub piece: usize,
    /// Which way the cut goes.
    pub direction: CutDirection,
    /// The size of the first part along the cut direction: `1 ≤ at < width` (vertical) or
    /// `1 ≤ at < height` (horizontal).
    pub at: u64,
}

/// Why a list of pieces is not a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CuttingError {
    /// A piece has zero width.
    ZeroWidth {
        /// The piece's 0-based index.
        piece: usize,
    },
    /// A piece has zero height.
    ZeroHeight {
        /// The piece's 0-based index.
        piece: usize,
    },
    /// More than [`MAX_PIECES`] pieces.
    TooManyPieces {
        /// How many pieces were given.
        count: usize,
    },
}

impl SetupError for CuttingError {
    fn field(&self) -> FieldPath {
        let pieces = FieldPath::field("pieces");
        match *self {
            CuttingError::ZeroWidth { piece } => pieces.at(piece).then("width"),
            CuttingError::ZeroHeight { piece } => pieces.at(piece).then("height"),
            CuttingError::TooManyPieces { .. } => pieces,
        }
    }

    fn problem(&self, _name: &dyn Fn(&FieldPath) -> String) -> String {
        match self {
            CuttingError::ZeroWidth { .. } | CuttingError::ZeroHeight { .. } => "is 0; it must be at least 1".into(),
            CuttingError::TooManyPieces { count } => format!("has {count} pieces; the limit is {MAX_PIECES}"),
        }
    }
}

display_setup_error!(CuttingError);

/// A position of the cutting game: the pieces of paper on the table, in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Paper {
    pieces: Vec<Piece>,
}

impl Paper {
    /// The position with these pieces; every side must be at least 1, and there may be at most
    /// [`MAX_PIECES`] pieces (none is fine: a position without moves, value 0).
    pub fn new(pieces: Vec<Piece>) -> Result<Self, CuttingError> {
        if pieces.len() > MAX_PIECES {
            return Err(CuttingError::TooManyPieces { count: pieces.len() });
        }
        for (index, piece) in pieces.iter().enumerate() {
            if piece.width == 0 {
                return Err(CuttingError::ZeroWidth { piece: index });
            }
            if piece.height == 0 {
                return Err(CuttingError::ZeroHeight { piece: index });
            }
        }
        Ok(Self { pieces })
    }

    /// The pieces, in order.
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// A 1×1 piece has been cut out: the game is over.
    pub fn is_finished(&self) -> bool {
        self.pieces.iter().any(Piece::is_single_cell)
    }

    /// The value, computed from the closed form (no search).
    fn value_now(&self) -> SumValue {
        if self.is_finished() {
            SumValue::Finished
        } else if self.pieces.iter().any(Piece::is_one_wide) {
            SumValue::WinsAtOnce
        } else {
            SumValue::Nimber(self.pieces.iter().fold(0, |total, piece| total ^ piece_value(piece.width, piece.height)))
        }
    }

    /// For each piece in order, its sets of cuts leading to `target`, vertical then horizontal.
    fn cuts_to(&self, target: SumValue) -> impl Iterator<Item = (usize, CutDirection, CutPositions)> + '_ {
        let value = self.value_now();
        let pieces = if value == SumValue::Finished { &[][..] } else { &self.pieces[..] };
        pieces.iter().enumerate().flat_map(move |(index, piece)| {
            let [vertical, horizontal] = piece_cuts_to(piece, value, target);
            let vertical = vertical.into_iter().map(move |cuts| (index, CutDirection::Vertical, cuts));
            vertical.chain(horizontal.into_iter().map(move |cuts| (index, CutDirection::Horizontal, cuts)))
        })
    }
}

impl Game for Paper {
    type Move = Cut;
    type Value = SumValue;

    fn value(&self, _solver: &mut SearchContext) -> Result<SumValue, Interrupted> {
        Ok(self.value_now())
    }

    /// Every literal cut, none once the game is over: pieces in order; for each, the vertical cuts
    /// then the horizontal ones, `at` ascending (a symmetric cut appears at both `at` and
    /// `size − at`). `Σ (width − 1) + (height − 1)` of them.
    fn moves(&self) -> MoveSet<Cut> {
        let mut moves = MoveSet::empty();
        if !self.is_finished() {
            for (piece, p) in self.pieces.iter().enumerate() {
                for (direction, size) in [(CutDirection::Vertical, p.width), (CutDirection::Horizontal, p.height)] {
                    // at = index + 1 < size fits in u64.
                    moves.push(u128::from(size - 1), move |index| Cut { piece, direction, at: index as u64 + 1 });
                }
            }
        }
        moves
    }

    /// Whether `cut` cuts an existing piece strictly inside, and the game is not over.
    fn is_legal(&self, cut: &Cut) -> bool {
        if self.is_finished() {
            return false;
        }
        self.pieces.get(cut.piece).is_some_and(|piece| {
            let size = match cut.direction {
                CutDirection::Vertical => piece.width,
                CutDirection::Horizontal => piece.height,
            };
            1 <= cut.at && cut.at < size
        })
    }

    /// Replaces the cut piece by its two parts: the first (of size `at`) at the same index, the second
    /// right after it.
    fn play_unchecked(&self, cut: &Cut) -> Self {
        debug_assert!(self.is_legal(cut), "{cut:?} is not legal in {self:?}");
        let Some(&piece) = self.pieces.get(cut.piece) else {
            return self.clone();
        };
        let (first, second) = match cut.direction {
            CutDirection::Vertical => (
                Piece { width: cut.at, height: piece.height },
                Piece { width: piece.width.saturating_sub(cut.at), height: piece.height },
            ),
            CutDirection::Horizontal => (
                Piece { width: piece.width, height: cut.at },
                Piece { width: piece.width, height: piece.height.saturating_sub(cut.at) },
            ),
        };
        let mut pieces = Vec::with_capacity(self.pieces.len() + 1);
        pieces.extend_from_slice(&self.pieces[..cut.piece]);
        pieces.push(first);
        pieces.push(second);
        pieces.extend_from_slice(&self.pieces[cut.piece + 1..]);
        Self { pieces }
    }

    /// Built directly, in time linear in the number of pieces whatever their sizes (see
    /// `piece_cuts_to`; each piece costs at most about 280 evaluations of [`piece_value`]).
    fn moves_to(&self, target: SumValue, _solver: &mut SearchContext) -> Result<MoveSet<Cut>, Interrupted> {
        let mut moves = MoveSet::empty();
        for (piece, direction, cuts) in self.cuts_to(target) {
            moves.push(cuts.count(), move |index| Cut { piece, direction, at: cuts.nth(index) });
        }
        Ok(moves)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::move_set_tests::{assert_move_sets_match_search, page};
    use crate::games::{mex, Outcome, Value};
    use crate::random::SplitMix;
    use std::collections::HashMap;

    fn paper(sizes: &[(u64, u64)]) -> Paper {
        let pieces = sizes.iter().map(|&(width, height)| Piece { width, height }).collect();
        Paper::new(pieces).expect("valid pieces")
    }

    fn value_of(position: &Paper) -> SumValue {
        position.value(&mut SearchContext::in_memory()).expect("no budget")
    }

    /// Dawson's Kayles straight from its recursion.
    fn dawson_kayles_by_recursion(limit: usize) -> Vec<u64> {
        let mut values = vec![0u64; limit];
        for n in 2..limit {
            values[n] = mex((0..=n - 2).map(|a| values[a] ^ values[n - 2 - a]));
        }
        values
    }

    #[test]
    fn dawson_kayles_is_periodic_and_matches_recursion() {
        let values = dawson_kayles_by_recursion(3000);
        assert_eq!(&values[..7], &[0, 0, 1, 1, 2, 0, 3]);
        assert_eq!(values.iter().max(), Some(&9), "piece values are at most 9");
        for (n, &value) in values.iter().enumerate() {
            assert_eq!(dawson_kayles(n as u64), value, "heap {n}");
        }
        // 52 is the last exception: the period does not start earlier.
        assert_ne!(values[52], values[52 + 34]);
        // Far out, the lookup stays in range and periodic.
        for n in [u64::MAX, u64::MAX - 1, u64::MAX - 33, 1 << 63] {
            assert_eq!(dawson_kayles(n), dawson_kayles(n - 34));
        }
    }

    /// The normal-play table of pieces where both parts of a cut must be at least 2 wide.
    fn exhaustive_table(size: usize) -> Vec<Vec<u64>> {
        let mut table = vec![vec![0u64; size + 1]; size + 1];
        let mut seen = Vec::new();
        for w in 2..=size {
            for h in 2..=size {
                seen.clear();
                seen.extend((2..=w - 2).map(|a| table[a][h] ^ table[w - a][h]));
                seen.extend((2..=h - 2).map(|b| table[w][b] ^ table[w][h - b]));
                table[w][h] = mex(seen.iter().copied());
            }
        }
        table
    }

    #[test]
    fn piece_value_matches_exhaustive_table() {
        let table = exhaustive_table(256);
        for (w, row) in table.iter().enumerate().skip(2) {
            for (h, &value) in row.iter().enumerate().skip(2) {
                assert_eq!(piece_value(w as u64, h as u64), value, "{w}×{h}");
            }
        }
    }

    /// Every position of the three sets, in order, through [`CutPositions::nth`].
    fn positions(cuts: &[CutPositions; 3]) -> Vec<u64> {
        cuts.iter().flat_map(|cuts| (0..cuts.count()).map(move |index| cuts.nth(index))).collect()
    }

    #[test]
    fn interior_cuts_are_exactly_the_cuts_to_each_value() {
        let sizes = (2..=230u64).chain([300, 301, 1000, 1001, 1033, 5000, 5017]);
        for width in sizes.clone() {
            for height in sizes.clone().filter(|&h| h <= 40 || width <= 40 || h == width) {
                // Every cut leaving both parts at least 2 wide, and its value, by trying each one.
                let vertical: Vec<(u64, u64)> = (2..=width.saturating_sub(2))
                    .map(|a| (a, piece_value(a, height) ^ piece_value(width - a, height)))
                    .collect();
                let horizontal: Vec<(u64, u64)> = (2..=height.saturating_sub(2))
                    .map(|b| (b, piece_value(width, b) ^ piece_value(width, height - b)))
                    .collect();
                let to = |cuts: &[(u64, u64)], need| -> Vec<u64> {
                    cuts.iter().filter(|&&(_, value)| value == need).map(|&(at, _)| at).collect()
                };
                for need in 0..16 {
                    assert_eq!(
                        positions(&interior_cuts(width, height, need)),
                        to(&vertical, need),
                        "{width}×{height} to {need}"
                    );
                    assert_eq!(
                        positions(&interior_cuts(height, width, need)),
                        to(&horizontal, need),
                        "{width}×{height} to {need}"
                    );
                }
            }
        }
    }

    /// A position of the literal game: its pieces as (width, height), in order.
    type Pieces = Vec<(u64, u64)>;

    /// Every literal move: (piece index, vertical?, at), in the documented order.
    fn literal_moves(pieces: &Pieces) -> Vec<(usize, bool, u64)> {
        if pieces.contains(&(1, 1)) {
            return Vec::new();
        }
        let mut moves = Vec::new();
        for (index, &(w, h)) in pieces.iter().enumerate() {
            moves.extend((1..w).map(|at| (index, true, at)));
            moves.extend((1..h).map(|at| (index, false, at)));
        }
        moves
    }

    /// The two parts a literal move cuts its piece into.
    fn literal_parts(pieces: &Pieces, (index, vertical, at): (usize, bool, u64)) -> [(u64, u64); 2] {
        let (w, h) = pieces[index];
        if vertical {
            [(at, h), (w - at, h)]
        } else {
            [(w, at), (w, h - at)]
        }
    }

    fn literal_play(pieces: &Pieces, mv: (usize, bool, u64)) -> Pieces {
        let [first, second] = literal_parts(pieces, mv);
        let mut next = pieces.clone();
        next[mv.0] = first;
        next.insert(mv.0 + 1, second);
        next
    }

    /// A position for the outcome recursion: its pieces as (width, height), sorted (the literal game
    /// does not care about order, and equal multisets share a memo entry).
    type Multiset = Vec<(u8, u8)>;

    fn multiset(pieces: &[(u64, u64)]) -> Multiset {
        let mut small: Multiset = pieces.iter().map(|&(w, h)| (w as u8, h as u8)).collect();
        small.sort_unstable();
        small
    }

    /// Whether the player to move wins under the literal rules: the game is over once a 1×1 piece
    /// exists (the player who cut it won); otherwise a move wins if it cuts out a 1×1 or leaves a
    /// position lost for the opponent. Moves giving the same multiset (equal pieces, cuts at `at` and
    /// `size − at`) are tried once.
    fn literal_wins(position: &Multiset, memo: &mut HashMap<Multiset, bool>) -> bool {
        if position.contains(&(1, 1)) {
            return false;
        }
        let cuts = |index: usize| {
            let (w, h) = position[index];
            let vertical = (1..=w / 2).map(move |at| [(at, h), (w - at, h)]);
            let horizontal = (1..=h / 2).map(move |at| [(w, at), (w, h - at)]);
            vertical.chain(horizontal)
        };
        let distinct = (0..position.len()).filter(|&index| index == 0 || position[index - 1] != position[index]);
        if distinct.clone().flat_map(cuts).any(|parts| parts.contains(&(1, 1))) {
            return true;
        }
        if let Some(&wins) = memo.get(position) {
            return wins;
        }
        let wins = distinct.flat_map(|index| cuts(index).map(move |parts| (index, parts))).any(|(index, parts)| {
            let mut child = position.clone();
            child.remove(index);
            child.extend(parts);
            child.sort_unstable();
            !literal_wins(&child, memo)
        });
        memo.insert(position.clone(), wins);
        wins
    }

    /// Every position of at most `count` pieces with sides at most `max_side`, as sorted lists.
    fn small_positions(count: usize, max_side: u64) -> Vec<Pieces> {
        let sides: Vec<(u64, u64)> = (1..=max_side).flat_map(|w| (1..=max_side).map(move |h| (w, h))).collect();
        let mut positions = vec![Vec::new()];
        let mut frontier = vec![(Vec::new(), 0usize)];
        for _ in 0..count {
            let mut next = Vec::new();
            for (position, from) in &frontier {
                for (i, &side) in sides.iter().enumerate().skip(*from) {
                    let mut longer: Pieces = position.clone();
                    longer.push(side);
                    positions.push(longer.clone());
                    next.push((longer, i));
                }
            }
            frontier = next;
        }
        positions
    }

    fn as_cut((piece, vertical, at): (usize, bool, u64)) -> Cut {
        let direction = if vertical { CutDirection::Vertical } else { CutDirection::Horizontal };
        Cut { piece, direction, at }
    }

    #[test]
    fn literal_brute_force_agrees_on_outcomes_moves_and_best_moves() {
        let mut memo = HashMap::new();
        let positions = small_positions(3, 6);
        assert_eq!(positions.len(), 1 + 36 + 666 + 8436);
        for pieces in &positions {
            let position = paper(pieces);
            let value = value_of(&position);
            let wins = literal_wins(&multiset(pieces), &mut memo);
            let expected = if wins { Outcome::NextPlayerWins } else { Outcome::PreviousPlayerWins };
            assert_eq!(value.outcome(), expected, "{pieces:?}");

            let moves: Vec<Cut> = position.moves().iter().collect();
            let literal: Vec<Cut> = literal_moves(pieces).into_iter().map(as_cut).collect();
            assert_eq!(moves, literal, "{pieces:?}");
            for mv in &literal_moves(pieces) {
                let played = position.play_unchecked(&as_cut(*mv));
                assert_eq!(played.pieces(), paper(&literal_play(pieces, *mv)).pieces());
            }

            let (best_value, best) = position.best_move(&mut SearchContext::in_memory()).expect("no budget");
            assert_eq!(best_value, value);
            match best {
                Some(cut) => {
                    assert!(position.is_legal(&cut), "{pieces:?}: {cut:?}");
                    let next: Pieces =
                        position.play_unchecked(&cut).pieces().iter().map(|p| (p.width, p.height)).collect();
                    if wins {
                        assert!(!literal_wins(&multiset(&next), &mut memo), "{pieces:?}: {cut:?} does not win");
                    }
                }
                None => assert!(moves.is_empty(), "{pieces:?}: no best move"),
            }
        }
    }

    #[test]
    fn move_to_reaches_every_lower_nimber_and_the_special_values() {
        let positions = small_positions(3, 6);
        for pieces in &positions {
            let position = paper(pieces);
            let value = value_of(&position);
            let mut solver = SearchContext::in_memory();
            let mut targets = vec![SumValue::Finished, SumValue::WinsAtOnce];
            targets.extend((0..16).map(SumValue::Nimber));
            let reachable: Vec<SumValue> =
                position.moves().iter().map(|mv| value_of(&position.play_unchecked(&mv))).collect();
            for target in targets {
                let direct = position.first_move_to(target, &mut solver).expect("no budget");
                let exists = reachable.contains(&target);
                assert_eq!(direct.is_some(), exists, "{pieces:?} to {target:?}");
                if let Some(cut) = direct {
                    assert!(position.is_legal(&cut));
                    assert_eq!(value_of(&position.play_unchecked(&cut)), target, "{pieces:?}: {cut:?}");
                }
            }
            if let SumValue::Nimber(g) = value {
                for t in 0..g {
                    assert!(position.first_move_to(SumValue::Nimber(t), &mut solver).expect("no budget").is_some());
                }
            }
        }
    }

    /// A side of a piece: near 2^64, near 10^18, small, or anything.
    fn side(random: &mut SplitMix) -> u64 {
        match random.next_u64() % 4 {
            0 => u64::MAX - random.next_u64() % 200,
            1 => 1_000_000_000_000_000_000 + random.next_u64() % 1000,
            2 => 2 + random.next_u64() % 200,
            _ => 2 + random.next_u64() % (u64::MAX - 2),
        }
    }

    #[test]
    fn move_to_works_on_huge_pieces() {
        let mut random = SplitMix::new(2311);
        let mut solver = SearchContext::in_memory();
        let mut nonzero = 0;
        for round in 0..3000 {
            let count = 1 + round % 4;
            let sizes: Vec<(u64, u64)> = (0..count).map(|_| (side(&mut random), side(&mut random))).collect();
            let position = paper(&sizes);
            let SumValue::Nimber(g) = value_of(&position) else { panic!("{sizes:?} has no side below 2") };
            nonzero += usize::from(g != 0);
            for t in 0..g {
                let cut = position
                    .first_move_to(SumValue::Nimber(t), &mut solver)
                    .expect("no budget")
                    .unwrap_or_else(|| panic!("{sizes:?}: no move to {t}"));
                assert!(position.is_legal(&cut), "{sizes:?}: {cut:?}");
                assert_eq!(value_of(&position.play_unchecked(&cut)), SumValue::Nimber(t), "{sizes:?}: {cut:?}");
            }
            let cut = position.first_move_to(SumValue::WinsAtOnce, &mut solver).expect("no budget");
            let cut = cut.unwrap_or_else(|| panic!("{sizes:?}: no move giving the win away"));
            assert_eq!(value_of(&position.play_unchecked(&cut)), SumValue::WinsAtOnce);
        }
        assert!(nonzero > 1000, "the random positions should mostly be wins ({nonzero})");
        // Won at once with a huge one-wide piece: the 1×1 comes off the end.
        let position = paper(&[(u64::MAX, u64::MAX), (u64::MAX, 1)]);
        assert_eq!(value_of(&position), SumValue::WinsAtOnce);
        let cut = position.first_move_to(SumValue::Finished, &mut solver).expect("no budget");
        assert_eq!(cut, Some(Cut { piece: 1, direction: CutDirection::Vertical, at: 1 }));
        assert_eq!(position.moves().get(3), Some(Cut { piece: 0, direction: CutDirection::Vertical, at: 4 }));
    }

    /// Every target an analysis is asked about: the special values and every nimber up to 2 past
    /// `most`.
    fn targets_up_to(most: u64) -> Vec<SumValue> {
        [SumValue::Finished, SumValue::WinsAtOnce].into_iter().chain((0..=most + 2).map(SumValue::Nimber)).collect()
    }

    #[test]
    fn move_sets_match_search_on_long_pieces() {
        // Sides past 110 have a periodic middle range; 1-wide pieces make positions won at once.
        let sides = [1u64, 2, 3, 4, 5, 8, 13, 34, 55, 56, 89, 109, 110, 111, 144, 200, 233, 250];
        for &w in &sides {
            for &h in &sides {
                for pieces in [vec![(w, h)], vec![(w, h), (h + 7, 3)], vec![(5, 6), (w, h), (w, 2)]] {
                    assert_move_sets_match_search(&paper(&pieces), &targets_up_to(15));
                }
            }
        }
    }

    /// The place of a cut in move order.
    fn order_key(cut: &Cut) -> (usize, bool, u64) {
        (cut.piece, cut.direction == CutDirection::Horizontal, cut.at)
    }

    #[test]
    fn analysis_is_consistent_on_huge_pieces() {
        let mut random = SplitMix::new(1729);
        let mut solver = SearchContext::in_memory();
        let mut won_at_once = 0;
        for round in 0..2000 {
            let count = 1 + round % 4;
            let mut sizes: Vec<(u64, u64)> = (0..count).map(|_| (side(&mut random), side(&mut random))).collect();
            if round % 3 == 0 {
                // A 1-wide piece: the position is won at once.
                let at = random.next_u64() as usize % (sizes.len() + 1);
                sizes.insert(at, if round % 2 == 0 { (1, side(&mut random)) } else { (side(&mut random), 1) });
                won_at_once += 1;
            }
            let position = paper(&sizes);
            let total = position.moves().len();
            let expected: u128 = sizes.iter().map(|&(w, h)| u128::from(w - 1) + u128::from(h - 1)).sum();
            assert_eq!(total, expected, "{sizes:?}");
            // Every cut leads to one of these values (piece values are at most 9), so the counts add up.
            let mut counted = 0;
            for target in targets_up_to(13) {
                let count = position.moves_to(target, &mut solver).map(|set| set.len()).expect("no budget");
                counted += count;
                let mut ks = vec![0, 1, count / 2, count.saturating_sub(2), count.saturating_sub(1)];
                ks.extend((0..3).map(|_| u128::from(random.next_u64()) * u128::from(random.next_u64()) % count.max(1)));
                for k in ks.into_iter().filter(|&k| k < count) {
                    let window = position.moves_to(target, &mut solver).map(|set| page(&set, k, 2)).expect("no budget");
                    assert_eq!(window.len() as u128, (count - k).min(2), "{sizes:?} to {target:?} from {k}");
                    for cut in &window {
                        assert!(position.is_legal(cut), "{sizes:?}: {cut:?}");
                        assert_eq!(value_of(&position.play_unchecked(cut)), target, "{sizes:?}: {cut:?}");
                    }
                    if let [first, second] = window[..] {
                        assert_eq!(
                            position.moves_to(target, &mut solver).map(|set| page(&set, k + 1, 1)),
                            Ok(vec![second])
                        );
                        assert!(order_key(&first) < order_key(&second), "{sizes:?}: {first:?} {second:?}");
                        // Nothing to the target in between, when the gap is small.
                        if (first.piece, first.direction) == (second.piece, second.direction)
                            && second.at - first.at <= 300
                        {
                            for at in first.at + 1..second.at {
                                let between = Cut { at, ..first };
                                assert_ne!(
                                    value_of(&position.play_unchecked(&between)),
                                    target,
                                    "{sizes:?}: {between:?}"
                                );
                            }
                        }
                    }
                }
                assert_eq!(position.moves_to(target, &mut solver).map(|set| page(&set, count, 3)), Ok(Vec::new()));
            }
            assert_eq!(counted, total, "{sizes:?}");
        }
        assert!(won_at_once > 500);
        // Giving the win away from a huge 1-wide piece: every cut but the two end ones.
        let strip = paper(&[(u64::MAX, 1)]);
        let count = strip.moves_to(SumValue::WinsAtOnce, &mut solver).map(|set| set.len());
        assert_eq!(count, Ok(u128::from(u64::MAX) - 3));
        let tail = strip.moves_to(SumValue::WinsAtOnce, &mut solver).map(|set| page(&set, u128::from(u64::MAX) - 4, 3));
        assert_eq!(tail, Ok(vec![Cut { piece: 0, direction: CutDirection::Vertical, at: u64::MAX - 2 }]));
        let ends = strip.moves_to(SumValue::Finished, &mut solver).map(|set| page(&set, 0, 3)).expect("no budget");
        assert_eq!(ends.iter().map(|cut| cut.at).collect::<Vec<_>>(), vec![1, u64::MAX - 1]);
    }

    #[test]
    fn poj_samples() {
        let outcome = |w, h| value_of(&paper(&[(w, h)])).outcome();
        assert_eq!(outcome(2, 2), Outcome::PreviousPlayerWins);
        assert_eq!(outcome(3, 2), Outcome::PreviousPlayerWins);
        assert_eq!(outcome(4, 2), Outcome::NextPlayerWins);
    }

    #[test]
    fn special_positions_and_errors() {
        let empty = paper(&[]);
        assert_eq!(value_of(&empty), SumValue::Nimber(0));
        assert_eq!(empty.moves().len(), 0);
        let over = paper(&[(5, 5), (1, 1), (1, 7)]);
        assert_eq!(value_of(&over), SumValue::Finished);
        assert_eq!(over.moves().len(), 0);
        assert!(!over.is_legal(&Cut { piece: 0, direction: CutDirection::Vertical, at: 1 }));
        let strip = paper(&[(3, 1)]);
        assert_eq!(value_of(&strip), SumValue::WinsAtOnce);
        let cut = strip.first_move_to(SumValue::Finished, &mut SearchContext::in_memory()).expect("no budget");
        assert_eq!(value_of(&strip.play_unchecked(&cut.expect("a 1×1 to cut off"))), SumValue::Finished);

        let err = Paper::new(vec![Piece { width: 2, height: 2 }, Piece { width: 0, height: 3 }]).unwrap_err();
        assert_eq!(err.to_string(), "pieces[1].width is 0; it must be at least 1");
        let err = Paper::new(vec![Piece { width: 2, height: 0 }]).unwrap_err();
        assert_eq!(err.to_string(), "pieces[0].height is 0; it must be at least 1");
        let err = Paper::new(vec![Piece { width: 2, height: 2 }; MAX_PIECES + 1]).unwrap_err();
        assert_eq!(err.to_string(), "pieces has 100001 pieces; the limit is 100000");
        assert!(Paper::new(vec![Piece { width: 2, height: 2 }; MAX_PIECES]).is_ok());
    }
}
