//! The 2×2 placement game (HDU 1760 "A New Tetris Game").
//!
//! Players take turns putting a 2×2 square on four free cells of a rectangular board; the player
//! who cannot place a square loses. There is no closed form: the game is a [`Piece`] of the
//! placement engine ([`crate::games::placement`]), which searches it.
//!
//! * The game is Node Kayles on the overlap graph of the possible placements. A placement is the
//!   top-left cell of its square (the engine's point); two placements overlap iff their top-left
//!   cells are within one king move, so the graph is an induced subgraph of the king graph on the
//!   `(N−1)×(M−1)` grid of top-left cells, and components join points a king move apart. Playing a
//!   placement deletes it and its (at most 8) king neighbours. Cells no placement covers play no
//!   part.
//! * Single placements and straight lines are Node Kayles on a path (octal game 0.137); every set
//!   inside 4×6 (or 6×4) placements comes from a table of all 2^24 of them, built into the
//!   binary by `build.rs` (see `direct` and the engine's `small`).
//! * The components of an option are found without a flood fill when the ring of 16 placements
//!   around the removed 3×3 block is connected (see `ring`).
//! * Its memo tag is [`GameTag::Tetris`].

mod direct;
mod ring;

use super::placement::{self, point_index, Piece, PointSet, SQUARE_SETS};
use super::{GameTag, Learnt, Nimber, Registered};
use super::{Lookup, ServedGame};
use crate::games::node_kayles::PATH;

pub use super::placement::{BoardError, MAX_CELLS, MAX_SIDE};

/// A board of the 2×2 game.
pub type Board = placement::Board<Square>;

/// The most placements a board of at most [`MAX_CELLS`] cells has: an `h×w` board has
/// `(h−1)(w−1)` of them, which under `h·w ≤ 256` is largest for 16×16. Below `u8::MAX`, so every
/// Grundy value (at most the number of placements) fits a byte; checked at compile time.
pub const MAX_PLACEMENTS: u32 = 225;

const _: () = {
    let mut height = 1;
    while height <= MAX_SIDE {
        let width = if MAX_CELLS / height < MAX_SIDE { MAX_CELLS / height } else { MAX_SIDE };
        assert!((height - 1) * (width - 1) <= MAX_PLACEMENTS as usize);
        height += 1;
    }
    assert!(MAX_PLACEMENTS < u8::MAX as u32);
};

/// A move: the 1-based row and column of the top-left cell of a 2×2 square on four free cells.
/// Moves order by row, then column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Placement {
    /// The 1-based row of the top-left cell.
    pub row: usize,
    /// The 1-based column of the top-left cell.
    pub column: usize,
}

/// The 2×2 square, as a piece of the placement engine: a point is a placement (the square's
/// top-left cell), and a move removes it and the placements it overlaps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Square;

impl Piece for Square {
    type Move = Placement;
    const EXTENT: usize = 1;
    /// A placement and its 8 king neighbours.
    const MOST_REMOVED: u32 = 9;
    const MEMO_MIN_POINTS: u32 = 12;
    const TAG: GameTag = GameTag::Tetris;

    fn take_learnt(learnt: &mut Learnt) -> Option<placement::Learnt> {
        Board::take_learnt(learnt)
    }

    fn learnt(state: placement::Learnt) -> Learnt {
        Board::learnt(state)
    }

    /// The placements whose four cells are free.
    fn point_row(free: &[u64], r: usize, width: usize) -> u64 {
        let last_column = u64::MAX >> (64 - width) >> 1;
        let both = free[r] & free[r + 1];
        both & both >> 1 & last_column
    }

    fn with_neighbours<S: PointSet>(set: S) -> S {
        set.with_king_neighbours()
    }

    fn for_each_option<S: PointSet>(set: S, mut f: impl FnMut(u32, S)) {
        for p in set.iter() {
            f(p, Self::after(set, p));
        }
    }

    fn anchor(played: u32) -> u32 {
        played
    }

    fn after<S: PointSet>(set: S, played: u32) -> S {
        set.without(S::overlapping(played))
    }

    /// Placements meet when they are within a king move.
    fn meets_own_image(_rows: usize, _columns: usize) -> bool {
        true
    }

    /// A component of `n` placements has `n` options, which take at most `n` distinct values, so
    /// its value (the least value no option has) is at most `n` ≤ [`MAX_PLACEMENTS`] < 255.
    fn most_value(size: u32) -> u32 {
        size
    }

    fn direct_value<S: PointSet>(origin: S, size: u32, height: usize, width: usize) -> Option<u8> {
        direct::direct_value(origin, size, height, width)
    }

    /// A straight line is Node Kayles on a path: the octal game 0.137.
    fn thin_value<S: PointSet>(_set: S, size: u32, height: usize, width: usize) -> Option<u8> {
        (height == 1 || width == 1).then(|| PATH[size as usize])
    }

    fn tabled_value<S: PointSet>(set: S) -> Option<u8> {
        SQUARE_SETS.of_set(set)
    }

    fn parts_after<S: PointSet>(rest: S, played: u32) -> impl Iterator<Item = S> {
        ring::parts_after(rest, played)
    }

    fn moves_within(height: usize, width: usize) -> impl Iterator<Item = Placement> {
        (1..height).flat_map(move |row| (1..width).map(move |column| Placement { row, column }))
    }

    fn cells(mv: &Placement) -> impl Iterator<Item = (usize, usize)> {
        let (row, column, below, right) = (mv.row, mv.column, mv.row.saturating_add(1), mv.column.saturating_add(1));
        [(row, column), (row, right), (below, column), (below, right)].into_iter()
    }

    fn code(mv: &Placement, turned: bool) -> u32 {
        point_index(mv.row - 1, mv.column - 1, turned)
    }
}

impl ServedGame for Board {
    const NAME: &'static str = "tetris";
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
