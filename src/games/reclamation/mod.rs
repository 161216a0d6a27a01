//! More Reclamation (Codeforces 335C): reclaiming cells of an r×2 river.
//!
//! The river has rows `1..=r` and columns 1 and 2. Reclaiming cell `(i, c)` forbids the three cells
//! of the other column next to it, `(i − 1, 3 − c)`, `(i, 3 − c)` and `(i + 1, 3 − c)` (otherwise the
//! river would be cut). A move reclaims any cell that is neither reclaimed nor forbidden; the player
//! who cannot move loses.
//!
//! # Decomposition
//!
//! A row holding a reclaimed cell is finished (its other cell is forbidden). The rows between two
//! consecutive reclaimed rows (or between one and the river's end) form a *run* of untouched rows,
//! and a move inside a run only changes what is legal inside that run, so the river is the
//! disjunctive sum of its runs. A run is described by its length `len` and by `top`/`bottom`: 0 when
//! that end is the river's end, otherwise the column `c` of the reclaimed cell in the adjacent row,
//! which forbids column `3 − c` of the run's end row, so only column `c` may be used there.
//!
//! # Closed form
//!
//! With `s(len, top, bottom)` the Grundy value of a run, `s(0, ·, ·) = 0` and, for `len ≥ 1`:
//! `s(len, 0, 0) = len mod 2`, `s(len, 0, c) = s(len, c, 0) = len`, `s(len, c, c) = len mod 2` and
//! `s(len, c, 3 − c) = 1 − len mod 2`.
//!
//! *Proof*, by induction on `len`. Reclaiming column `col` of the run's row `p` (0-based,
//! `q = len − 1 − p` rows below it) leaves the runs `(p, top, col)` and `(q, col, bottom)`; it is
//! legal unless `p = 0` and `top ∉ {0, col}`, or `q = 0` and `bottom ∉ {0, col}`. By induction:
//! - `(0, 0)`: the options are `p ⊕ q` with `p + q = len − 1`, all of the parity of `len − 1`, and
//!   `p = q` gives 0 when `len` is odd; the mex is `len mod 2`.
//! - `(c, c)`: with `col = c` the option is `(p mod 2) ⊕ (q mod 2)`, with `col = 3 − c` (`p, q ≥ 1`)
//!   it is `(1 − p mod 2) ⊕ (1 − q mod 2)`; both equal `(len − 1) mod 2`, so the mex is `len mod 2`.
//! - `(c, 3 − c)`: likewise every option equals `len mod 2`, and there is none when `len = 1`; the
//!   mex is `1 − len mod 2`.
//! - `(0, c)`: the options are `p ⊕ (q mod 2)` (column `c`) and, for `q ≥ 1`, `p ⊕ (1 − q mod 2)`
//!   (column `3 − c`), which together are exactly `0..len`; the mex is `len`.
//!
//! The tests check this against the contest's own recursion for `len ≤ 1000` and the value of every
//! legal position of every river with at most 10 rows against a brute force over whole positions.

use super::ServedGame;
use super::{display_setup_error, FieldPath, Game, Interrupted, MoveSet, Nimber, SearchContext, SetupError};

/// The most reclaimed cells a river may be given.
pub const MAX_RECLAIMED: usize = 100_000;

/// A cell of the river: 1-based row, column 1 or 2. Cells order by row, then column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cell {
    /// The row, from 1 to the river's number of rows.
    pub row: u64,
    /// The column, 1 or 2.
    pub column: u64,
}

/// Why a river could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReclamationError {
    /// The river has no rows.
    NoRows,
    /// More reclaimed cells than [`MAX_RECLAIMED`].
    TooManyCells {
        /// How many cells were given.
        count: usize,
    },
    /// A cell's row is 0 or past the river's last row.
    RowOutOfRange {
        /// The cell's index in the request list.
        index: usize,
        /// The offending row.
        row: u64,
        /// The river's number of rows.
        rows: u64,
    },
    /// A cell's column is not 1 or 2.
    ColumnOutOfRange {
        /// The cell's index in the request list.
        index: usize,
        /// The offending column.
        column: u64,
    },
    /// The same cell is listed twice.
    DuplicateCell {
        /// The index of its first occurrence.
        first: usize,
        /// The index of the repetition.
        second: usize,
        /// The repeated cell.
        cell: Cell,
    },
    /// Two cells that forbid each other (other columns, rows at most 1 apart) are both reclaimed.
    ForbiddenPair {
        /// The index of the cell listed first.
        first: usize,
        /// That cell.
        first_cell: Cell,
        /// The index of the cell listed second.
        second: usize,
        /// That cell.
        second_cell: Cell,
    },
}

impl SetupError for ReclamationError {
    fn field(&self) -> FieldPath {
        let reclaimed = FieldPath::field("reclaimed");
        match *self {
            ReclamationError::NoRows => FieldPath::field("rows"),
            ReclamationError::TooManyCells { .. } => reclaimed,
            ReclamationError::RowOutOfRange { index, .. } => reclaimed.at(index).then("row"),
            ReclamationError::ColumnOutOfRange { index, .. } => reclaimed.at(index).then("column"),
            ReclamationError::DuplicateCell { second, .. } => reclaimed.at(second),
            ReclamationError::ForbiddenPair { first, .. } => reclaimed.at(first),
        }
    }

    fn problem(&self, name: &dyn Fn(&FieldPath) -> String) -> String {
        let cell = |index: usize| name(&FieldPath::field("reclaimed").at(index));
        match self {
            ReclamationError::NoRows => "must be at least 1".into(),
            ReclamationError::TooManyCells { count } => format!("has {count} cells; the limit is {MAX_RECLAIMED}"),
            ReclamationError::RowOutOfRange { row, rows, .. } => format!("({row}) must be between 1 and {rows}"),
            ReclamationError::ColumnOutOfRange { column, .. } => format!("({column}) must be 1 or 2"),
            ReclamationError::DuplicateCell { first, cell: repeated, .. } => {
                format!("(row {}, column {}) repeats {}", repeated.row, repeated.column, cell(*first))
            }
            ReclamationError::ForbiddenPair { first_cell, second, second_cell, .. } => format!(
                "(row {}, column {}) and {} (row {}, column {}) forbid each other",
                first_cell.row,
                first_cell.column,
                cell(*second),
                second_cell.row,
                second_cell.column
            ),
        }
    }
}

display_setup_error!(ReclamationError);

/// A position: an r×2 river and its reclaimed cells, which never forbid each other.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct River {
    rows: u64,
    reclaimed: Vec<Cell>,
}

/// A maximal block of consecutive rows without a reclaimed cell (possibly empty).
#[derive(Clone, Copy, Debug)]
struct Run {
    /// The row just above the run; 0 when the run starts at the river's top.
    above: u64,
    /// How many rows the run has.
    len: u64,
    /// The only column usable in the run's top row (the column reclaimed just above), 0 if both are.
    top: u64,
    /// The only column usable in the run's bottom row (the column reclaimed just below), 0 if both are.
    bottom: u64,
}

impl Run {
    /// The run's Grundy value, by the closed form proved in the module documentation.
    fn value(&self) -> u64 {
        match (self.len, self.top, self.bottom) {
            (0, _, _) => 0,
            (len, 0, 0) => len % 2,
            (len, 0, _) | (len, _, 0) => len,
            (len, top, bottom) if top == bottom => len % 2,
            (len, _, _) => 1 - len % 2,
        }
    }

    /// The cell in the run's row `offset` (0-based from its top).
    fn cell(&self, offset: u64, column: u64) -> Cell {
        Cell { row: self.above + 1 + offset, column }
    }

    /// Whether column `column` of the run's row `offset` may be reclaimed: the run's end rows may only
    /// use the column reclaimed next to them.
    fn usable(&self, offset: u64, column: u64) -> bool {
        (offset != 0 || self.top == 0 || column == self.top)
            && (offset + 1 != self.len || self.bottom == 0 || column == self.bottom)
    }

    /// How many columns of the run's row `offset` may be reclaimed.
    fn usable_columns(&self, offset: u64) -> u64 {
        u64::from(self.usable(offset, 1)) + u64::from(self.usable(offset, 2))
    }

    /// The value the run's rows take after reclaiming column `column` of row `offset`, if that cell
    /// may be reclaimed: the runs `(p, top, column)` and `(q, column, bottom)` of the module docs.
    fn option_value(&self, offset: u64, column: u64) -> Option<u64> {
        let below = self.len.checked_sub(offset)?.checked_sub(1)?;
        let upper = Run { above: self.above, len: offset, top: self.top, bottom: column };
        let lower = Run { above: self.above + offset + 1, len: below, top: column, bottom: self.bottom };
        self.usable(offset, column).then(|| upper.value() ^ lower.value())
    }

    /// The number of free cells of the run.
    fn free_count(&self) -> u128 {
        match self.len {
            0 => 0,
            1 => u128::from(self.usable_columns(0)),
            len => u128::from(self.usable_columns(0) + self.usable_columns(len - 1)) + 2 * u128::from(len - 2),
        }
    }

    /// The free cell number `index` (0-based) of the run, in row order then column
    /// (`index < free_count()`).
    fn nth_free_cell(&self, index: u128) -> Cell {
        let in_row = |offset: u64, index: u128| {
            let column = if index == 0 && self.usable(offset, 1) { 1 } else { 2 };
            self.cell(offset, column)
        };
        let first = u128::from(self.usable_columns(0));
        if index < first {
            return in_row(0, index);
        }
        let middle = 2 * u128::from(self.len.saturating_sub(2));
        let index = index - first;
        if index < middle {
            // Fits: index / 2 < len − 2.
            return self.cell(1 + (index / 2) as u64, 1 + (index % 2) as u64);
        }
        in_row(self.len - 1, index - middle)
    }

    /// The free cells of this run whose reclaiming leaves the run's rows with value `want`.
    ///
    /// By the option sets in the module documentation (with `p` rows above the cell, `q` below,
    /// `p + q = len − 1`):
    /// - both ends free: every cell of row `p` gives `p ⊕ q`. With `p + q = len − 1` and `p ⊕ q = w`,
    ///   `p ∧ q = (len − 1 − w) / 2 = a` must be a whole number sharing no bit with `w`; then the rows
    ///   are `p = a ∨ x` for the `2^popcount(w)` subsets `x` of `w`'s bits.
    /// - top free, bottom `c`: the options are `p ⊕ r` with `r ∈ {0, 1}`, so `p ∈ {w, w ⊕ 1}`; and the
    ///   mirror image with `q ∈ {w, w ⊕ 1}`. These at most four cells are checked one by one.
    /// - both ends closed: every free cell gives the same value, `(len − 1) mod 2` when the ends use
    ///   the same column and `len mod 2` when they cross.
    fn cells_to(&self, want: u64) -> RunCells {
        if self.len == 0 {
            return RunCells::Listed(Vec::new());
        }
        let last = self.len - 1;
        let listed = |offsets: [Option<u64>; 2]| {
            let mut offsets: Vec<u64> = offsets.into_iter().flatten().collect();
            offsets.sort_unstable();
            offsets.dedup();
            let cells = offsets.into_iter().flat_map(|offset| {
                [1u64, 2]
                    .into_iter()
                    .filter(move |&column| self.option_value(offset, column) == Some(want))
                    .map(move |column| self.cell(offset, column))
            });
            RunCells::Listed(cells.collect())
        };
        match (self.top, self.bottom) {
            (0, 0) => match last.checked_sub(want) {
                Some(gap) if gap % 2 == 0 && (gap / 2) & want == 0 => {
                    RunCells::Balanced { run: *self, carry: gap / 2, bits: want }
                }
                _ => RunCells::Listed(Vec::new()),
            },
            (0, _) => listed([want, want ^ 1].map(|p| (p <= last).then_some(p))),
            (_, 0) => listed([want, want ^ 1].map(|q| last.checked_sub(q))),
            (top, bottom) => {
                let value = if top == bottom { last % 2 } else { self.len % 2 };
                if want == value {
                    RunCells::AllFree(*self)
                } else {
                    RunCells::Listed(Vec::new())
                }
            }
        }
    }
}

/// The free cells of one run that give it a wanted value, in row order then column.
#[derive(Clone, Debug)]
enum RunCells {
    /// These few cells.
    Listed(Vec<Cell>),
    /// Every free cell of the run.
    AllFree(Run),
    /// Both cells of each row `carry ∨ x` of the run, for every subset `x` of the bits of `bits`.
    Balanced {
        /// The run.
        run: Run,
        /// The bits every such row offset has.
        carry: u64,
        /// The bits such a row offset may have or not.
        bits: u64,
    },
}

impl RunCells {
    /// How many cells.
    fn count(&self) -> u128 {
        match self {
            RunCells::Listed(cells) => cells.len() as u128,
            RunCells::AllFree(run) => run.free_count(),
            RunCells::Balanced { bits, .. } => 2u128 << bits.count_ones(),
        }
    }

    /// The cell number `index` (0-based, below [`RunCells::count`]).
    fn nth(&self, index: u128) -> Cell {
        match self {
            RunCells::Listed(cells) => cells[index as usize],
            RunCells::AllFree(run) => run.nth_free_cell(index),
            RunCells::Balanced { run, carry, bits } => {
                // The subsets of `bits` in increasing order: deposit the bits of `index / 2` into the
                // positions of the bits of `bits`, lowest first.
                let mut subset = (index / 2) as u64;
                let mut offset = *carry;
                let mut rest = *bits;
                while rest != 0 {
                    let lowest = rest & rest.wrapping_neg();
                    if subset & 1 == 1 {
                        offset |= lowest;
                    }
                    subset >>= 1;
                    rest ^= lowest;
                }
                run.cell(offset, 1 + (index % 2) as u64)
            }
        }
    }
}

impl River {
    /// A river of `rows` rows with the cells `reclaimed` (any order) already reclaimed.
    ///
    /// Fails when there are no rows, more than [`MAX_RECLAIMED`] cells, a cell off the river, a
    /// repeated cell, or two cells that forbid each other. Takes O(n log n) time in the number of cells.
    pub fn new(rows: u64, reclaimed: Vec<Cell>) -> Result<River, ReclamationError> {
        if rows == 0 {
            return Err(ReclamationError::NoRows);
        }
        if reclaimed.len() > MAX_RECLAIMED {
            return Err(ReclamationError::TooManyCells { count: reclaimed.len() });
        }
        for (index, cell) in reclaimed.iter().enumerate() {
            if cell.row == 0 || cell.row > rows {
                return Err(ReclamationError::RowOutOfRange { index, row: cell.row, rows });
            }
            if cell.column != 1 && cell.column != 2 {
                return Err(ReclamationError::ColumnOutOfRange { index, column: cell.column });
            }
        }
        let mut order: Vec<usize> = (0..reclaimed.len()).collect();
        order.sort_by_key(|&index| (reclaimed[index], index));
        // Any forbidding pair implies one among neighbours in row order: between its two cells the
        // column changes somewhere, at two consecutive cells whose rows are at most 1 apart.
        for pair in order.windows(2) {
            let (a, b) = (reclaimed[pair[0]], reclaimed[pair[1]]);
            let (first, second) = (pair[0].min(pair[1]), pair[0].max(pair[1]));
            if a == b {
                return Err(ReclamationError::DuplicateCell { first, second, cell: a });
            }
            if a.column != b.column && b.row - a.row <= 1 {
                return Err(ReclamationError::ForbiddenPair {
                    first,
                    first_cell: reclaimed[first],
                    second,
                    second_cell: reclaimed[second],
                });
            }
        }
        let reclaimed = order.into_iter().map(|index| reclaimed[index]).collect();
        Ok(River { rows, reclaimed })
    }

    /// The number of rows.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The reclaimed cells, sorted by row (at most one per row).
    pub fn reclaimed(&self) -> &[Cell] {
        &self.reclaimed
    }

    /// The runs of untouched rows, top to bottom: one above each reclaimed cell and one at the end.
    fn runs(&self) -> impl Iterator<Item = Run> + '_ {
        let mut above = (0u64, 0u64);
        self.reclaimed.iter().map(Some).chain([None]).map(move |cell| {
            let (len, bottom) = match cell {
                Some(cell) => (cell.row - above.0 - 1, cell.column),
                None => (self.rows - above.0, 0),
            };
            let run = Run { above: above.0, len, top: above.1, bottom };
            if let Some(cell) = cell {
                above = (cell.row, cell.column);
            }
            run
        })
    }

    /// The Grundy value of the whole river: the XOR of its runs' values.
    fn nimber(&self) -> u64 {
        self.runs().fold(0, |total, run| total ^ run.value())
    }

    /// For each run in order, its cells whose reclaiming gives the whole river the value `target`.
    fn cells_to(&self, target: Nimber) -> impl Iterator<Item = RunCells> + '_ {
        let change = target ^ self.nimber();
        self.runs().map(move |run| run.cells_to(run.value() ^ change))
    }

    /// Whether `cell` is on the river, not reclaimed and not forbidden.
    fn is_free(&self, cell: Cell) -> bool {
        if cell.row == 0 || cell.row > self.rows || (cell.column != 1 && cell.column != 2) {
            return false;
        }
        let start = self.reclaimed.partition_point(|other| other.row < cell.row.saturating_sub(1));
        self.reclaimed[start..]
            .iter()
            .take_while(|other| other.row <= cell.row.saturating_add(1))
            .all(|other| other.row != cell.row && other.column == cell.column)
    }
}

impl Game for River {
    type Move = Cell;
    type Value = Nimber;

    /// The XOR of the runs' closed-form values; O(n) in the number of reclaimed cells.
    fn value(&self, _solver: &mut SearchContext) -> Result<Nimber, Interrupted> {
        Ok(self.nimber())
    }

    /// Every free cell, in row order then column: the free cells of each run in turn, counted and
    /// indexed in O(1) per run.
    fn moves(&self) -> MoveSet<Cell> {
        let mut moves = MoveSet::empty();
        for run in self.runs() {
            moves.push(run.free_count(), move |index| run.nth_free_cell(index));
        }
        moves
    }

    /// Whether `mv` is on the river, not reclaimed and not forbidden.
    fn is_legal(&self, mv: &Cell) -> bool {
        self.is_free(*mv)
    }

    /// The river with `mv` reclaimed as well.
    fn play_unchecked(&self, mv: &Cell) -> River {
        debug_assert!(self.is_legal(mv), "{mv:?} is not legal in {self:?}");
        let mut next = self.clone();
        let at = self.reclaimed.partition_point(|cell| cell.row < mv.row);
        next.reclaimed.insert(at, *mv);
        next
    }

    /// Built directly, in O(n) time whatever the number of rows: for each run, the value it must
    /// take for the whole river to reach `target`, and its cells that give it (see `Run::cells_to`).
    fn moves_to(&self, target: Nimber, _solver: &mut SearchContext) -> Result<MoveSet<Cell>, Interrupted> {
        let mut moves = MoveSet::empty();
        for cells in self.cells_to(target) {
            moves.push(cells.count(), move |index| cells.nth(index));
        }
        Ok(moves)
    }
}

impl ServedGame for River {
    const NAME: &'static str = "reclamation";
    const SEARCHES: bool = false;
    type Error = ReclamationError;
    type Learnt = ();

    fn items(&self) -> usize {
        self.reclaimed().len()
    }
}

mod wire;

#[cfg(test)]
mod tests;
