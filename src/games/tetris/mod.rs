//! The 2×2 placement game (HDU 1760 "A New Tetris Game").
//!
//! Players take turns putting a 2×2 square on four free cells of a rectangular board; the player
//! who cannot place a square loses. There is no closed form, so this is an exact search engine:
//!
//! * The game is Node Kayles on the overlap graph of the possible placements. A placement is the
//!   top-left cell of its square; two placements overlap iff their top-left cells are within one
//!   king move, so the graph is an induced subgraph of the king graph on the `(N−1)×(M−1)` grid of
//!   top-left cells. Playing a placement deletes it and its (at most 8) king neighbours. Cells no
//!   placement covers play no part.
//! * A position splits into connected components (king adjacency); its value is the XOR of theirs.
//!   Components are bitboards, written once over the word size (`bits`): one `u64` when they
//!   fit in 8×8 placements (`window`), one `u128` when they are at most 8 across and 16 long
//!   (`band`), 256 bits up to 16×16, 1024 bits when longer (a board with a side over 17).
//! * A component is keyed by its canonical form: translated to the origin, least of its 8 images
//!   under the symmetries of the square. Equal components, wherever and however turned, share one
//!   entry of the per-solve table (`table`, bounded by `context.table_limit`, keeping the costliest
//!   entries when full) and of the persistent
//!   memo (`context.memo`, tag [`GameTag::Tetris`]); options a
//!   symmetry of the component maps onto each other are tried once.
//! * Single placements and straight lines are Node Kayles on a path (octal game 0.137); every set
//!   inside 4×6 (or 6×4) placements comes from a table of all 2^24 of them, built into the
//!   binary by `build.rs` (see `direct`); the rest are searched (`engine`) the Lemoine–Viennot
//!   way, by asking "has this component value `t`?" rather than computing every option's value.
//! * The persistent memo holds the value of every top-level component solved and of every
//!   component of at least 12 placements whose search took at least 64 option evaluations; its
//!   key is the canonical form as height, width and the row-major bits (see
//!   `bits::PlacementSet::memo_key`).
//!   So a board solved once is never searched again, even after a restart, and an interrupted
//!   solve resumes from what it had finished.

mod band;
mod bits;
mod direct;
mod engine;
mod table;
mod window;

use self::bits::{BoardPlacements, PlacementSet};
pub use self::direct::load_small_sets;
use self::engine::{Engine, Memoize};
use super::registry::{Lookup, ServedGame, Sizes};
use super::GameTag;
use super::{display_setup_error, FieldPath, Game, Interrupted, MoveSet, Nimber, SearchContext, SetupError};
use crate::proto;
use crate::random::SplitMix;

/// The most cells a board may have (16×16, 8×32, 4×64, ...).
pub const MAX_CELLS: usize = 256;
/// The most rows (and the most columns) a board may have.
pub const MAX_SIDE: usize = 64;

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

/// Why a board was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TetrisError {
    /// The board has no rows, or its rows are empty.
    Empty,
    /// More rows than [`MAX_SIDE`].
    TooManyRows {
        /// How many rows were given.
        rows: usize,
    },
    /// More columns than [`MAX_SIDE`].
    TooManyColumns {
        /// How many columns the first row has.
        columns: usize,
    },
    /// More cells than [`MAX_CELLS`].
    TooManyCells {
        /// How many rows were given.
        rows: usize,
        /// How many columns the first row has.
        columns: usize,
    },
    /// A row whose length differs from the first row's.
    RaggedRow {
        /// The 0-based index of the row.
        row: usize,
        /// Its length.
        length: usize,
        /// The length of the first row.
        expected: usize,
    },
    /// A character other than `0`, `.` (free), `1` or `#` (blocked).
    BadCell {
        /// The 0-based index of the row.
        row: usize,
        /// The 1-based column.
        column: usize,
        /// The character found.
        found: char,
    },
}

impl SetupError for TetrisError {
    fn field(&self) -> FieldPath {
        let rows = FieldPath::field("rows");
        match *self {
            TetrisError::Empty | TetrisError::TooManyRows { .. } | TetrisError::TooManyCells { .. } => rows,
            TetrisError::TooManyColumns { .. } => rows.at(0),
            TetrisError::RaggedRow { row, .. } | TetrisError::BadCell { row, .. } => rows.at(row),
        }
    }

    fn problem(&self, name: &dyn Fn(&FieldPath) -> String) -> String {
        match self {
            TetrisError::Empty => "is empty; a board needs at least one cell".into(),
            TetrisError::TooManyRows { rows } => {
                format!("has {rows} rows; the limit is {MAX_SIDE} (and {MAX_CELLS} cells)")
            }
            TetrisError::TooManyColumns { columns } => {
                format!("has {columns} columns; the limit is {MAX_SIDE} (and {MAX_CELLS} cells)")
            }
            TetrisError::TooManyCells { rows, columns } => format!(
                "is {rows}×{columns} = {} cells; the limit is {MAX_CELLS} cells (e.g. 16×16, 8×32, 4×64)",
                rows * columns
            ),
            TetrisError::RaggedRow { length, expected, .. } => {
                format!("has {length} columns but {} has {expected}", name(&FieldPath::field("rows").at(0)))
            }
            TetrisError::BadCell { column, found, .. } => {
                format!("column {column} is {found:?}; expected '0' or '.' (free), '1' or '#' (blocked)")
            }
        }
    }
}

display_setup_error!(TetrisError);

/// A board: a rectangle of free and blocked cells, at most [`MAX_CELLS`] cells and
/// [`MAX_SIDE`] cells each way.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    height: usize,
    width: usize,
    /// `free[r]` bit `c`: the cell in 0-based row `r`, column `c` is free.
    free: [u64; MAX_SIDE],
}

/// A move: the 1-based row and column of the top-left cell of a 2×2 square on four free cells.
/// Moves order by row, then column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Placement {
    /// The 1-based row of the top-left cell.
    pub row: usize,
    /// The 1-based column of the top-left cell.
    pub column: usize,
}

impl Board {
    /// A board from its rows: `0` or `.` is a free cell, `1` or `#` a blocked one.
    pub fn new(rows: &[String]) -> Result<Board, TetrisError> {
        let expected = rows.first().map_or(0, |row| row.chars().count());
        if expected == 0 {
            return Err(TetrisError::Empty);
        }
        if rows.len() > MAX_SIDE {
            return Err(TetrisError::TooManyRows { rows: rows.len() });
        }
        if expected > MAX_SIDE {
            return Err(TetrisError::TooManyColumns { columns: expected });
        }
        if rows.len() * expected > MAX_CELLS {
            return Err(TetrisError::TooManyCells { rows: rows.len(), columns: expected });
        }
        let mut free = [0u64; MAX_SIDE];
        for (r, row) in rows.iter().enumerate() {
            let length = row.chars().count();
            if length != expected {
                return Err(TetrisError::RaggedRow { row: r, length, expected });
            }
            for (c, ch) in row.chars().enumerate() {
                match ch {
                    '0' | '.' => free[r] |= 1 << c,
                    '1' | '#' => {}
                    found => return Err(TetrisError::BadCell { row: r, column: c + 1, found }),
                }
            }
        }
        Ok(Board { height: rows.len(), width: expected, free })
    }

    /// The number of rows.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The number of columns.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Whether the cell at 1-based `(row, column)` is free (cells off the board are not).
    pub fn is_free(&self, row: usize, column: usize) -> bool {
        (1..=self.height).contains(&row)
            && (1..=self.width).contains(&column)
            && self.free[row - 1] >> (column - 1) & 1 == 1
    }

    /// The rows, `0` for a free cell and `1` for a blocked one.
    pub fn rows(&self) -> Vec<String> {
        (0..self.height)
            .map(|r| (0..self.width).map(|c| if self.free[r] >> c & 1 == 1 { '0' } else { '1' }).collect())
            .collect()
    }

    /// Whether [`Board::placements`] holds the placements turned: a board with more rows of
    /// placements than a [`BoardPlacements`] holds has at most 15 columns of them (it has at
    /// most [`MAX_CELLS`] cells), which fit its rows.
    fn turned(&self) -> bool {
        self.height > BoardPlacements::ROWS as usize + 1
    }

    /// The placements available: bit `64·r + c` for the square with top-left cell `(r, c)`,
    /// 0-based, or `(c, r)` on a [turned](Board::turned) board.
    fn placements(&self) -> BoardPlacements {
        let last_column = u64::MAX >> (64 - self.width) >> 1;
        let rows = (0..self.height.saturating_sub(1)).map(|r| {
            let both = self.free[r] & self.free[r + 1];
            both & both >> 1 & last_column
        });
        if !self.turned() {
            return BoardPlacements::from_rows(rows);
        }
        let mut columns = [0u64; MAX_SIDE];
        for (r, row) in rows.enumerate() {
            for (c, column) in columns.iter_mut().enumerate().take(self.width) {
                *column |= (row >> c & 1) << r;
            }
        }
        BoardPlacements::from_rows(columns.into_iter().take(self.width))
    }

    /// The placements available as bit indices of [`Board::placements`], in row-major order of
    /// the board.
    fn placement_indices(&self) -> Vec<u32> {
        let set = self.placements();
        if !self.turned() {
            return set.iter().collect();
        }
        let stride = BoardPlacements::STRIDE as usize;
        let columns = self.width.saturating_sub(1);
        (0..self.height - 1)
            .flat_map(|r| (0..columns).map(move |c| (c * stride + r) as u32))
            .filter(|&p| set.contains(p))
            .collect()
    }

    /// The placement of bit index `p` of [`Board::placements`].
    fn placement(&self, p: u32) -> Placement {
        let stride = BoardPlacements::STRIDE;
        let (major, minor) = ((p / stride) as usize + 1, (p % stride) as usize + 1);
        if self.turned() {
            Placement { row: minor, column: major }
        } else {
            Placement { row: major, column: minor }
        }
    }

    /// Components with their values, and the total.
    fn component_values(&self, engine: &mut Engine) -> Result<(Vec<(BoardPlacements, u8)>, u64), Interrupted> {
        let mut parts = Vec::new();
        let mut total = 0;
        for part in self.placements().components() {
            let value = engine.component(part, Memoize::Always)?;
            total ^= u64::from(value);
            parts.push((part, value));
        }
        Ok((parts, total))
    }

    /// A placement leading to value `target`, given the components and their values.
    fn placement_to(
        &self,
        target: u64,
        parts: &[(BoardPlacements, u8)],
        total: u64,
        engine: &mut Engine,
    ) -> Result<Option<Placement>, Interrupted> {
        for p in self.placement_indices() {
            let Some(&(part, value)) = parts.iter().find(|(part, _)| part.contains(p)) else {
                continue;
            };
            let rest = part.without(BoardPlacements::overlapping(p));
            if total ^ u64::from(value) ^ engine.value_of_set(rest)? == target {
                return Ok(Some(self.placement(p)));
            }
        }
        Ok(None)
    }
}

impl Game for Board {
    type Move = Placement;
    type Value = Nimber;

    fn value(&self, context: &mut SearchContext) -> Result<Nimber, Interrupted> {
        let mut engine = Engine::new(context);
        engine.value_of_board(self.placements())
    }

    fn moves(&self) -> MoveSet<Placement> {
        MoveSet::listed(self.placement_indices().into_iter().map(|p| self.placement(p)).collect())
    }

    /// Whether the square's four cells are on the board and free.
    fn is_legal(&self, mv: &Placement) -> bool {
        let (row, column) = (mv.row, mv.column);
        [(row, column), (row, column + 1), (row + 1, column), (row + 1, column + 1)]
            .into_iter()
            .all(|(r, c)| self.is_free(r, c))
    }

    /// The board with the square's cells blocked.
    fn play_unchecked(&self, mv: &Placement) -> Board {
        debug_assert!(self.is_legal(mv), "{mv:?} is not legal in {self:?}");
        let mut next = self.clone();
        for r in mv.row..=mv.row.saturating_add(1) {
            for c in mv.column..=mv.column.saturating_add(1) {
                if self.is_free(r, c) {
                    next.free[r - 1] &= !(1 << (c - 1));
                }
            }
        }
        next
    }

    /// Stops at the first placement found, evaluating only the component it is in.
    fn first_move_to(&self, target: Nimber, context: &mut SearchContext) -> Result<Option<Placement>, Interrupted> {
        let mut engine = Engine::new(context);
        let (parts, total) = self.component_values(&mut engine)?;
        self.placement_to(target, &parts, total, &mut engine)
    }

    /// Computes the components' values once, for the value and the winning placement both.
    fn best_move(&self, context: &mut SearchContext) -> Result<(Nimber, Option<Placement>), Interrupted> {
        let mut engine = Engine::new(context);
        let (parts, total) = self.component_values(&mut engine)?;
        let mv = if total == 0 { self.moves().get(0) } else { self.placement_to(0, &parts, total, &mut engine)? };
        Ok((total, mv))
    }
}

impl ServedGame for Board {
    const NAME: &'static str = "tetris";
    const SEARCHES: bool = true;
    type Message = proto::Tetris;
    type MoveMessage = proto::TetrisMove;
    type Error = TetrisError;
    type Learnt = engine::Learnt;

    fn from_message(message: proto::Tetris) -> Result<Self, TetrisError> {
        Board::new(&message.rows)
    }

    fn to_message(&self) -> proto::Tetris {
        proto::Tetris { rows: self.rows() }
    }

    fn move_message(placement: &Placement) -> proto::TetrisMove {
        proto::TetrisMove { row: placement.row as u64, column: placement.column as u64 }
    }

    fn value_without_search(&self, lookup: &Lookup) -> Option<(Nimber, u64)> {
        engine::value_without_search(self.placements(), &|key| lookup(GameTag::Tetris, key))
    }

    /// 1 to 6 cells a side, a fifth of them blocked, so that brute force and search stay fast.
    fn random_message(random: &mut SplitMix, _sizes: Sizes) -> proto::Tetris {
        let (height, width) = (random.range(1, 6) as usize, random.range(1, 6) as usize);
        proto::Tetris { rows: crate::testing::random_board(random, height, width, 20) }
    }
}

#[cfg(test)]
mod tests;
