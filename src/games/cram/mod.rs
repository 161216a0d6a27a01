//! Cram: players take turns putting a 1×2 domino, either way round, on two free cells of a
//! rectangular board; the player who cannot place one loses. The game is a [`Piece`] of the
//! placement engine ([`crate::games::placement`]), which searches it.
//!
//! * A point is a free cell that has a free neighbour (up, down, left or right): a cell without
//!   one can never be covered, so it plays no part and is dropped, after every move too. A
//!   component joins cells that are neighbours; a move removes two neighbouring points, then the
//!   points left without a neighbour.
//! * A straight line of `n` cells is Dawson's Kayles, the octal game 0.07 ([`LINE`]); every set
//!   inside 4×6 (or 6×4) cells comes from a table of all 2^24 of them, built into the binary by
//!   `build.rs`.
//! * **Even by even.** A full board with an even number of rows and of columns has value 0, by
//!   the half turn: a cell `(r, c)` and its image `(h−1−r, w−1−c)` are an odd number of rows and an
//!   odd number of columns apart, so never the same cell nor neighbours, and no domino meets its
//!   own image; the engine's half-turn rule (proved there) then gives 0, and the same holds for
//!   every board a half turn keeps with that property, blocked cells and all.
//! * Its memo tag is [`GameTag::Cram`].

use super::placement::{
    self, line_of, point_index, sides, tufts_and_branches, Line, Piece, PointSet, Word, DOMINO_SETS,
};
use super::{GameTag, Learnt, Nimber, Registered};
use super::{Lookup, ServedGame};

pub use super::placement::{BoardError, MAX_CELLS, MAX_SIDE};

/// A Cram board.
pub type Board = placement::Board<Domino>;

/// Which way a domino lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Orientation {
    /// On a cell and the cell to its right.
    Horizontal,
    /// On a cell and the cell below it.
    Vertical,
}

/// A move: a domino on its top-left cell (1-based row and column) and the cell to its right or
/// below. Moves order by row, then column, horizontal first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DominoMove {
    /// The 1-based row of its top-left cell.
    pub row: usize,
    /// The 1-based column of its top-left cell.
    pub column: usize,
    /// Which way it lies.
    pub orientation: Orientation,
}

/// The values of Dawson's Kayles (octal 0.07) for lines of 0 to 256 cells (a line winds through a
/// board of [`MAX_CELLS`] cells): a domino on a line of
/// `n` cells leaves lines of `a` and `b` cells with `a + b = n − 2`, so
/// `G(n) = mex { G(a) ⊕ G(b) }`; computed at compile time.
pub const LINE: [u8; MAX_CELLS + 1] = {
    let mut values = [0u8; MAX_CELLS + 1];
    let mut n = 2;
    while n <= MAX_CELLS {
        let mut seen = 0u64;
        let mut a = 0;
        while a <= n - 2 {
            seen |= 1 << (values[a] ^ values[n - 2 - a]);
            a += 1;
        }
        values[n] = (!seen).trailing_zeros() as u8;
        n += 1;
    }
    values
};

/// The bit of a move's code that says the domino's second point is below its first (else it is
/// to its right); the low bits are the first point's index.
const DOWN: u32 = 1 << 12;

/// The domino, as a piece of the placement engine: a point is a cell with a free neighbour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Domino;

impl Piece for Domino {
    type Move = DominoMove;
    const EXTENT: usize = 0;
    /// The domino's two cells and the at most 6 cells next to them left without a neighbour.
    const MOST_REMOVED: u32 = 8;
    /// Cram's components are cheaper per point than the 2×2 game's (a table answers every set
    /// inside 4×6 cells), so a memo lookup pays off later.
    const MEMO_MIN_POINTS: u32 = 24;
    const TAG: GameTag = GameTag::Cram;
    const ON_KERNEL: bool = true;

    fn take_learnt(learnt: &mut Learnt) -> Option<placement::Learnt> {
        Board::take_learnt(learnt)
    }

    fn learnt(state: placement::Learnt) -> Learnt {
        Board::learnt(state)
    }

    /// The free cells with a free neighbour.
    fn point_row(free: &[u64], r: usize, _width: usize) -> u64 {
        let above = r.checked_sub(1).map_or(0, |above| free[above]);
        let below = free.get(r + 1).copied().unwrap_or(0);
        free[r] & (free[r] << 1 | free[r] >> 1 | above | below)
    }

    fn with_neighbours<S: PointSet>(set: S) -> S {
        set.with_orthogonal_neighbours()
    }

    fn for_each_option<S: PointSet>(set: S, mut f: impl FnMut(u32, S)) {
        let x = set.word();
        let right = S::from_word(x & x >> 1 & !S::LAST_COLUMN);
        let down = S::from_word(x & x >> S::STRIDE);
        for p in right.iter() {
            f(p, Self::after(set, p));
        }
        for p in down.iter() {
            f(p | DOWN, Self::after(set, p | DOWN));
        }
    }

    fn lies_along_rows(played: u32) -> Option<bool> {
        Some(played & DOWN == 0)
    }

    fn anchor(played: u32) -> u32 {
        played & (DOWN - 1)
    }

    /// Without the domino's cells and the cells it leaves without a neighbour.
    fn after<S: PointSet>(set: S, played: u32) -> S {
        let rest = set.without(Self::cells_of(played));
        S::from_word(rest.word() & rest.orthogonal_neighbours().word())
    }

    /// When the cells next to the domino that are left are connected inside the 3×4 box around
    /// it, everything left is.
    ///
    /// **Proof.** Let `D` be the domino, `S` the set it was played in and `R` what is left: `S`
    /// without `D` and without the cells `I` left with no neighbour, whose neighbours in `S` all
    /// lie in `D`. Two cells of `R` are joined by a path in `S`; one through a cell of `I` enters
    /// and leaves it from `D`, and as `D`'s two cells are neighbours it can go round it, so the path
    /// lies in `R ∪ D`. Its stretches in `R` are joined to one another where it passes through `D`,
    /// and each stretch ends, on that side, at a cell of `R` next to `D`. Those are connected in `R`
    /// (inside the box), so the two cells are too.
    fn connected_around<S: PointSet>(rest: S, played: u32) -> bool {
        let domino: S = Self::cells_of(played);
        let touching = rest.word() & domino.orthogonal_neighbours().word();
        if touching.is_zero() {
            return rest.is_empty();
        }
        let around = rest.word() & domino.with_king_neighbours().word();
        let joined = rest.grown_from(S::from_word(touching.lowest()), |part| {
            S::from_word(part.with_orthogonal_neighbours().word() & around)
        });
        touching & !joined.word() == S::Word::default()
    }

    /// With one tuft to a star (see `without_extra_tufts`).
    fn simplified<S: PointSet>(option: S) -> S {
        without_extra_tufts(option)
    }

    /// Two cells meet when they are the same cell or neighbours.
    fn meets_own_image(rows: usize, columns: usize) -> bool {
        rows + columns <= 1
    }

    /// Every move covers two of the `n` points, so a game lasts at most `n / 2` moves, and a
    /// value is at most the longest game (by induction: the mex of values each at most `L − 1`
    /// is at most `L`); `n ≤ 256` gives at most 128.
    fn most_value(size: u32) -> u32 {
        size / 2
    }

    fn direct_value<S: PointSet>(origin: S, size: u32, height: usize, width: usize) -> Option<u8> {
        path_or_cycle_value(origin, size).or_else(|| DOMINO_SETS.of_origin(origin, height, width))
    }

    fn tabled_value<S: PointSet>(set: S) -> Option<u8> {
        DOMINO_SETS.of_set(set)
    }

    fn thin_value<S: PointSet>(set: S, size: u32, _height: usize, _width: usize) -> Option<u8> {
        path_or_cycle_value(set, size)
    }

    fn moves_within(height: usize, width: usize) -> impl Iterator<Item = DominoMove> {
        (1..=height).flat_map(move |row| {
            (1..=width).flat_map(move |column| {
                let horizontal = (column < width).then_some(Orientation::Horizontal);
                let vertical = (row < height).then_some(Orientation::Vertical);
                [horizontal, vertical].into_iter().flatten().map(move |orientation| DominoMove {
                    row,
                    column,
                    orientation,
                })
            })
        })
    }

    fn cells(mv: &DominoMove) -> impl Iterator<Item = (usize, usize)> {
        let second = match mv.orientation {
            Orientation::Horizontal => (mv.row, mv.column.saturating_add(1)),
            Orientation::Vertical => (mv.row.saturating_add(1), mv.column),
        };
        [(mv.row, mv.column), second].into_iter()
    }

    /// On a turned board a horizontal domino lies down the points.
    fn code(mv: &DominoMove, turned: bool) -> u32 {
        let down = (mv.orientation == Orientation::Vertical) != turned;
        point_index(mv.row - 1, mv.column - 1, turned) | if down { DOWN } else { 0 }
    }
}

impl Domino {
    /// The two cells of the domino of code `played`.
    fn cells_of<S: PointSet>(played: u32) -> S {
        let first = Self::anchor(played);
        let second = first + if played & DOWN != 0 { S::STRIDE } else { 1 };
        S::from_word(S::single(first).word() | S::single(second).word())
    }
}

/// The value of a connected set of `size` cells none of which has three neighbours or more: a
/// path (it has an end, a cell with one neighbour), Dawson's Kayles on `size` cells; or a cycle,
/// whose every move leaves a path of `size − 2` cells, so its value is 1 exactly when that
/// path's is 0.
fn path_or_cycle_value<S: PointSet>(set: S, size: u32) -> Option<u8> {
    let line = line_of(set, size)?;
    let size = size as usize;
    match line {
        Line::Path => Some(LINE[size]),
        Line::Cycle => Some(u8::from(LINE[size - 2] == 0)),
    }
}

/// The set with one tuft (a cell whose one neighbour is its star) to every star: two tufts of
/// the same star are alike, the moves that cover either with the star leave the same cells
/// (the other tuft left without a neighbour), and neither can be covered otherwise; so the set
/// without one of them has the same options, hence the same value.
fn without_extra_tufts<S: PointSet>(set: S) -> S {
    let [right, left, below, above] = sides(set);
    let (tufts, _) = tufts_and_branches::<S>([right, left, below, above]);
    if tufts.is_zero() {
        return set;
    }
    let stride = S::STRIDE;
    let mut stars = S::Word::default();
    let mut extra = S::Word::default();
    // The stars of the tufts whose neighbour is to their right, then left, below and above.
    let mut step = |side: S::Word, star_of: &dyn Fn(S::Word) -> S::Word, tuft_of: &dyn Fn(S::Word) -> S::Word| {
        let new = star_of(tufts & side);
        extra = extra | tuft_of(new & stars);
        stars = stars | new;
    };
    step(right, &|w| w << 1, &|w| w >> 1);
    step(left, &|w| w >> 1, &|w| w << 1);
    step(below, &|w| w << stride, &|w| w >> stride);
    step(above, &|w| w >> stride, &|w| w << stride);
    set.without(S::from_word(extra))
}

impl ServedGame for Board {
    const NAME: &'static str = "cram";
    const SEARCHES: bool = true;
    type Error = BoardError;
    type Learnt = placement::Learnt;

    fn value_without_search(&self, lookup: &Lookup) -> Option<(Nimber, u64)> {
        self.value_from(lookup)
    }
}

mod wire;

#[cfg(test)]
mod tests;
