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
//!   Components are bitboards: one `u64` when they fit in 8×8 placements (`window`), one `u128`
//!   when they fit in 8 rows (`strip`), else 256 bits with stride 16 (`bits`).
//! * A component is keyed by its canonical form: translated to the origin, least of its 8 images
//!   under the symmetries of the square. Equal components, wherever and however turned, share one
//!   entry of the per-solve table (`table`, bounded by `solver.table_limit`) and of the persistent
//!   memo (`solver.memo`, tag [`GameTag::Tetris`](crate::games::GameTag::Tetris)); options a
//!   symmetry of the component maps onto each other are tried once.
//! * Single placements and straight lines are Node Kayles on a path (octal game 0.137); every set
//!   inside 4×5 (or 5×4) placements comes from a table of all 2^20 of them, built once per
//!   process; the rest are searched (`engine`) the Lemoine–Viennot way, by asking "has this
//!   component value `t`?" rather than computing every option's value.
//! * The persistent memo holds the value of every top-level component solved and of every
//!   component of at least 12 placements whose search took at least 64 option evaluations; its
//!   key is the canonical form as height, width and the row-major bits (see `bits::memo_key`).
//!   So a board solved once is never searched again, even after a restart, and an interrupted
//!   solve resumes from what it had finished.

mod bits;
mod engine;
mod strip;
mod table;
mod window;

use self::bits::{Placements, GRID};
use self::engine::Engine;
use super::{display_setup_error, FieldPath, Game, Interrupted, MoveSet, Nimber, SearchContext, SetupError};

/// The most rows (and columns) a board may have, unless it is thin.
pub const MAX_SIDE: usize = 16;
/// The most cells a thin board (one or two cells across) may have along its length: enough for
/// every board of the contest (N·M < 50, e.g. 2×24 or 1×49).
pub const MAX_THIN_LENGTH: usize = 64;

/// Why a board was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TetrisError {
    /// The board has no rows, or its rows are empty.
    Empty,
    /// More rows than [`MAX_SIDE`] ([`MAX_THIN_LENGTH`] for a thin board).
    TooManyRows {
        /// How many rows were given.
        rows: usize,
    },
    /// More columns than [`MAX_SIDE`] ([`MAX_THIN_LENGTH`] for a thin board).
    TooManyColumns {
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
            TetrisError::Empty | TetrisError::TooManyRows { .. } => rows,
            TetrisError::TooManyColumns { .. } => rows.at(0),
            TetrisError::RaggedRow { row, .. } | TetrisError::BadCell { row, .. } => rows.at(row),
        }
    }

    fn problem(&self, name: &dyn Fn(&FieldPath) -> String) -> String {
        match self {
            TetrisError::Empty => "is empty; a board needs at least one cell".into(),
            TetrisError::TooManyRows { rows } => {
                format!("has {rows} rows; the limit is {MAX_SIDE} ({MAX_THIN_LENGTH} for a board 1 or 2 cells wide)")
            }
            TetrisError::TooManyColumns { columns } => format!(
                "has {columns} columns; the limit is {MAX_SIDE} ({MAX_THIN_LENGTH} for a board 1 or 2 rows high)"
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

/// A board: a rectangle of free and blocked cells, at most 16×16, or a thin board (one or two
/// cells across) at most [`MAX_THIN_LENGTH`] long.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Board {
    height: usize,
    width: usize,
    /// `free[r]` bit `c`: the cell in 0-based row `r`, column `c` is free.
    free: [u64; MAX_THIN_LENGTH],
}

/// The placements of a board longer than 16 (so one or two cells across): they lie on one line.
#[derive(Clone, Copy, Debug)]
struct Line {
    /// Bit `i`: the `i`-th placement along the line is available.
    placements: u64,
    /// Whether the line runs down the rows (a board two cells wide) rather than along row 1.
    down: bool,
}

impl Line {
    /// The placement of bit `i`.
    fn placement(self, i: usize) -> Placement {
        if self.down {
            Placement { row: i + 1, column: 1 }
        } else {
            Placement { row: 1, column: i + 1 }
        }
    }

    /// The value: placements in a line form paths (Node Kayles on a path, octal 0.137), one per
    /// run of available placements; the XOR of their values.
    fn value(self) -> u64 {
        let mut rest = self.placements;
        let mut value = 0;
        while rest != 0 {
            rest >>= rest.trailing_zeros();
            let run = rest.trailing_ones();
            value ^= u64::from(engine::PATH[run as usize]);
            rest = rest.checked_shr(run).unwrap_or(0);
        }
        value
    }
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
        let thin = rows.len().min(expected) <= 2;
        let limit = if thin { MAX_THIN_LENGTH } else { MAX_SIDE };
        if rows.len() > limit {
            return Err(TetrisError::TooManyRows { rows: rows.len() });
        }
        if expected > limit {
            return Err(TetrisError::TooManyColumns { columns: expected });
        }
        let mut free = [0u64; MAX_THIN_LENGTH];
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

    /// The placements available on a board of at most 16×16 (see [`Board::line`] for the others).
    fn placements(&self) -> Placements {
        let mut rows = [0u16; 16];
        let last_column = (1u64 << (self.width - 1)) - 1;
        for (r, row) in rows.iter_mut().enumerate().take(self.height.saturating_sub(1).min(GRID)) {
            let both = self.free[r] & self.free[r + 1];
            *row = (both & both >> 1 & last_column) as u16;
        }
        Placements::from_rows(&rows)
    }

    /// The line of placements of a board longer than 16 cells (it is thin), `None` for the others.
    fn line(&self) -> Option<Line> {
        if self.height.max(self.width) <= MAX_SIDE {
            return None;
        }
        let mut placements = 0u64;
        let down = self.height > self.width;
        if down && self.width == 2 {
            let both = |r: usize| self.free[r] & 0b11 == 0b11;
            placements = (0..self.height - 1).filter(|&r| both(r) && both(r + 1)).fold(0, |line, r| line | 1 << r);
        } else if !down && self.height == 2 {
            let both = self.free[0] & self.free[1];
            placements = both & both >> 1 & ((1u64 << (self.width - 1)) - 1);
        }
        Some(Line { placements, down })
    }

    /// A placement of a line board leading to value `target`.
    fn line_move_to(&self, line: Line, target: u64) -> Option<Placement> {
        let mut rest = line.placements;
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let placement = line.placement(i);
            let after = self.play_unchecked(&placement).line().map_or(0, Line::value);
            if after == target {
                return Some(placement);
            }
        }
        None
    }

    /// The board's value if it needs no search: a line board, or one whose every searched
    /// component `lookup` finds under its memo key (see `engine::value_without_search`); also
    /// how many values `lookup` supplied.
    pub fn value_without_search(&self, lookup: &dyn Fn(&[u8]) -> Option<u64>) -> Option<(u64, u64)> {
        match self.line() {
            Some(line) => Some((line.value(), 0)),
            None => engine::value_without_search(self.placements(), lookup),
        }
    }

    /// Components with their values, and the total.
    fn component_values(&self, engine: &mut Engine) -> Result<(Vec<(Placements, u8)>, u64), Interrupted> {
        let mut parts = Vec::new();
        let mut total = 0;
        for part in self.placements().components() {
            let value = engine.component(part, true)?;
            total ^= u64::from(value);
            parts.push((part, value));
        }
        Ok((parts, total))
    }

    /// A placement leading to value `target`, given the components and their values.
    fn placement_to(
        &self,
        target: u64,
        parts: &[(Placements, u8)],
        total: u64,
        engine: &mut Engine,
    ) -> Result<Option<Placement>, Interrupted> {
        for p in self.placements().iter() {
            let Some(&(part, value)) = parts.iter().find(|(part, _)| part.contains(p)) else {
                continue;
            };
            let rest = part.without(Placements::overlapping(p));
            if total ^ u64::from(value) ^ engine.value_of_set(rest)? == target {
                return Ok(Some(Placement { row: p / 16 + 1, column: p % 16 + 1 }));
            }
        }
        Ok(None)
    }
}

impl Game for Board {
    type Move = Placement;
    type Value = Nimber;

    fn value(&self, solver: &mut SearchContext) -> Result<Nimber, Interrupted> {
        if let Some(line) = self.line() {
            return Ok(line.value());
        }
        let mut engine = Engine::new(solver);
        engine.value_of_board(self.placements())
    }

    fn moves(&self) -> MoveSet<Placement> {
        let placements = match self.line() {
            Some(line) => (0..64).filter(|i| line.placements >> i & 1 == 1).map(|i| line.placement(i)).collect(),
            None => self.placements().iter().map(|p| Placement { row: p / 16 + 1, column: p % 16 + 1 }).collect(),
        };
        MoveSet::listed(placements)
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
    fn first_move_to(&self, target: Nimber, solver: &mut SearchContext) -> Result<Option<Placement>, Interrupted> {
        if let Some(line) = self.line() {
            return Ok(self.line_move_to(line, target));
        }
        let mut engine = Engine::new(solver);
        let (parts, total) = self.component_values(&mut engine)?;
        self.placement_to(target, &parts, total, &mut engine)
    }

    /// Computes the components' values once, for the value and the winning placement both.
    fn best_move(&self, solver: &mut SearchContext) -> Result<(Nimber, Option<Placement>), Interrupted> {
        if let Some(line) = self.line() {
            let total = line.value();
            let mv = if total == 0 { self.moves().get(0) } else { self.line_move_to(line, 0) };
            return Ok((total, mv));
        }
        let mut engine = Engine::new(solver);
        let (parts, total) = self.component_values(&mut engine)?;
        let mv = if total == 0 { self.moves().get(0) } else { self.placement_to(0, &parts, total, &mut engine)? };
        Ok((total, mv))
    }
}

#[cfg(test)]
mod tests;
