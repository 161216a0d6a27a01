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
use super::ServedGame;
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

impl ServedGame for Paper {
    const NAME: &'static str = "cutting";
    const SEARCHES: bool = false;
    type Error = CuttingError;
    type Learnt = ();

    fn items(&self) -> usize {
        self.pieces.len()
    }

    fn is_finished(&self) -> bool {
        Paper::is_finished(self)
    }
}

mod wire;

#[cfg(test)]
mod tests;
