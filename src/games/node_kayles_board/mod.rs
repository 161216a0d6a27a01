//! Node Kayles on a board: the free cells of a rectangular board are the vertices, and two cells
//! that share a side are joined. A move chooses a free cell and blocks it and its free neighbours
//! (up, down, left, right); the player who cannot move loses. This is the form in which Node
//! Kayles on grids is published (OEIS A316632, the 3×n grids; Brown et al., J. Integer Sequences
//! 23 (2020), article 20.3.5), and the same game as [`crate::games::node_kayles`] on the board's
//! graph. The game is a [`Piece`] of the placement engine ([`crate::games::placement`]), which
//! searches components of at most 64 cells' box on the kernel ([`crate::games::kernel`]).
//!
//! * A point is a free cell (a free cell with no free neighbour is a vertex alone, worth 1). A
//!   component joins cells that share a side.
//! * A path of `k` cells is Node Kayles on P_k, the octal game 0.137 ([`PATH`]); a cycle of `k`
//!   cells is worth 1 exactly when P_{k−3} is worth 0, as every move leaves P_{k−3}.
//! * **Even by even.** A board a half turn keeps, in which no free cell is its own image's
//!   neighbour, is 0 by the engine's half-turn rule (proved there): on a full board with an even
//!   number of rows and of columns a cell and its image are an odd number of rows and of columns
//!   apart.
//! * Its memo tag is [`GameTag::NodeKaylesBoard`].

use super::node_kayles::PATH;
use super::placement::{self, line_of, point_index, Line, Piece, PointSet};
use super::{GameTag, Learnt, Nimber, Registered};
use super::{Lookup, ServedGame};

pub use super::placement::{BoardError, MAX_CELLS, MAX_SIDE};

/// A board of Node Kayles.
pub type Board = placement::Board<Vertex>;

/// A move: the free cell chosen, 1-based. Moves order by row, then column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChosenCell {
    /// The 1-based row.
    pub row: usize,
    /// The 1-based column.
    pub column: usize,
}

/// Choosing a vertex, as a piece of the placement engine: a point is a free cell, and a move at a
/// point takes it and its neighbours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Vertex;

impl Piece for Vertex {
    type Move = ChosenCell;
    const EXTENT: usize = 0;
    /// The cell chosen and its four neighbours.
    const MOST_REMOVED: u32 = 5;
    /// As Cram's: smaller components take less time to solve than to look up.
    const MEMO_MIN_POINTS: u32 = 24;
    const TAG: GameTag = GameTag::NodeKaylesBoard;
    const ON_KERNEL: bool = true;

    fn take_learnt(learnt: &mut Learnt) -> Option<placement::Learnt> {
        Board::take_learnt(learnt)
    }

    fn learnt(state: placement::Learnt) -> Learnt {
        Board::learnt(state)
    }

    /// Every free cell.
    fn point_row(free: &[u64], r: usize, _width: usize) -> u64 {
        free[r]
    }

    fn with_neighbours<S: PointSet>(set: S) -> S {
        set.with_orthogonal_neighbours()
    }

    fn for_each_option<S: PointSet>(set: S, mut f: impl FnMut(u32, S)) {
        for p in set.iter() {
            f(p, Self::after(set, p));
        }
    }

    fn anchor(played: u32) -> u32 {
        played
    }

    /// Without the cell and its neighbours.
    fn after<S: PointSet>(set: S, played: u32) -> S {
        set.without(S::single(played).with_orthogonal_neighbours())
    }

    /// A cell meets its image when it is its image or its image's neighbour: then the image is
    /// gone once the cell is chosen.
    fn meets_own_image(rows: usize, columns: usize) -> bool {
        rows + columns <= 1
    }

    /// The cells chosen in a game are never neighbours (choosing one takes its neighbours), so a
    /// game lasts at most α moves, α the most cells of the set no two of which are neighbours,
    /// and a value is at most the longest game (by induction: the mex of values each at most
    /// `L − 1` is at most `L`). In a connected set of `n ≥ 2` cells every cell of such a set `I`
    /// has a neighbour outside `I`, and each cell outside has at most 4 neighbours in `I`, so
    /// `α ≤ 4(n − α)`, `α ≤ 4n/5`: at most 204 for `n ≤ 256`.
    fn most_value(size: u32) -> u32 {
        if size <= 1 {
            size
        } else {
            4 * size / 5
        }
    }

    /// 2^(points/4 + 10): from 16 KiB for 16 points to 64 MiB for 64. A search meets far fewer
    /// components than Cram's of as many points (the 3×16 grid settles 1 445), and a table
    /// started at Cram's size spent nine tenths of that search zeroing its pages.
    fn kernel_table_bytes(points: u32) -> usize {
        1usize << (points / 4 + 10)
    }

    fn direct_value<S: PointSet>(origin: S, size: u32, _height: usize, _width: usize) -> Option<u8> {
        path_or_cycle_value(origin, size)
    }

    fn thin_value<S: PointSet>(set: S, size: u32, _height: usize, _width: usize) -> Option<u8> {
        path_or_cycle_value(set, size)
    }

    fn moves_within(height: usize, width: usize) -> impl Iterator<Item = ChosenCell> {
        (1..=height).flat_map(move |row| (1..=width).map(move |column| ChosenCell { row, column }))
    }

    fn cells(mv: &ChosenCell) -> impl Iterator<Item = (usize, usize)> {
        [(mv.row, mv.column)].into_iter()
    }

    /// The cell and its four neighbours.
    fn taken(mv: &ChosenCell) -> impl Iterator<Item = (usize, usize)> {
        let (row, column) = (mv.row, mv.column);
        let (above, below) = (row.saturating_sub(1), row.saturating_add(1));
        let (left, right) = (column.saturating_sub(1), column.saturating_add(1));
        [(row, column), (above, column), (below, column), (row, left), (row, right)].into_iter()
    }

    fn code(mv: &ChosenCell, turned: bool) -> u32 {
        point_index(mv.row - 1, mv.column - 1, turned)
    }
}

/// The value of a connected set of `size` cells none of which has three neighbours or more: a
/// path of `k` cells is worth 0.137's value of `k`; on a cycle of `k` cells every move leaves a
/// path of `k − 3`, so it is worth 1 exactly when that path is worth 0.
fn path_or_cycle_value<S: PointSet>(set: S, size: u32) -> Option<u8> {
    let line = line_of(set, size)?;
    let size = size as usize;
    Some(match line {
        Line::Path => PATH[size],
        Line::Cycle => u8::from(PATH[size - 3] == 0),
    })
}

impl ServedGame for Board {
    const NAME: &'static str = "node_kayles_board";
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
