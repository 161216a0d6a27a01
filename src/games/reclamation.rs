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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::move_set_tests::{assert_move_sets_match_search, page};
    use crate::random::SplitMix;

    fn cell(row: u64, column: u64) -> Cell {
        Cell { row, column }
    }

    fn nimber(strip: &River) -> u64 {
        strip.value(&mut SearchContext::in_memory()).expect("no budget")
    }

    /// The contest solution's recursion for `sg[len][x][y]`, transcribed literally.
    fn contest_table(max_len: usize) -> Vec<[[u64; 3]; 3]> {
        let mut sg = vec![[[0u64; 3]; 3]; max_len + 1];
        for len in 1..=max_len {
            for x in 0..3 {
                for y in 0..3 {
                    let mut seen = Vec::new();
                    for len1 in 0..len {
                        let len2 = len - 1 - len1;
                        if len1 == 0 && len2 == 0 {
                            // len = 1: the seed's base case, one cell usable by both ends' rules.
                            for c in 1..3 {
                                if (x == 0 || x == c) && (y == 0 || y == c) {
                                    seen.push(0);
                                }
                            }
                        } else if len1 == 0 {
                            if x == 0 {
                                seen.push(sg[len2][1][y]);
                                seen.push(sg[len2][2][y]);
                            } else {
                                seen.push(sg[len2][x][y]);
                            }
                        } else if len2 == 0 {
                            if y == 0 {
                                seen.push(sg[len1][x][1]);
                                seen.push(sg[len1][x][2]);
                            } else {
                                seen.push(sg[len1][x][y]);
                            }
                        } else {
                            seen.push(sg[len1][x][1] ^ sg[len2][1][y]);
                            seen.push(sg[len1][x][2] ^ sg[len2][2][y]);
                        }
                    }
                    sg[len][x][y] = crate::games::mex(seen);
                }
            }
        }
        sg
    }

    #[test]
    fn run_closed_form_matches_contest_recursion() {
        let sg = contest_table(1000);
        for (len, table) in sg.iter().enumerate() {
            for top in 0..3u64 {
                for bottom in 0..3u64 {
                    let run = Run { above: 0, len: len as u64, top, bottom };
                    assert_eq!(run.value(), table[top as usize][bottom as usize], "run {run:?}");
                }
            }
        }
    }

    /// The free cells of `run`, in order.
    fn free_cells(run: Run) -> Vec<Cell> {
        (0..run.free_count()).map(|index| run.nth_free_cell(index)).collect()
    }

    /// Bit of cell `(row, column)` in a whole-position mask.
    fn bit(row: u64, column: u64) -> u32 {
        1 << (2 * (row - 1) + column - 1)
    }

    /// Whether `(row, column)` may be reclaimed in `mask` by the literal rule.
    fn literal_free(rows: u64, mask: u32, row: u64, column: u64) -> bool {
        let other = 3 - column;
        let forbidden = (row.saturating_sub(1).max(1)..=(row + 1).min(rows)).any(|r| mask & bit(r, other) != 0);
        mask & bit(row, column) == 0 && !forbidden
    }

    fn literal_moves(rows: u64, mask: u32) -> Vec<Cell> {
        (1..=rows)
            .flat_map(|row| [1u64, 2].into_iter().map(move |column| cell(row, column)))
            .filter(|c| literal_free(rows, mask, c.row, c.column))
            .collect()
    }

    /// Memoized Grundy values of whole positions of an r×2 strip, straight from the rules.
    struct BruteForce {
        rows: u64,
        memo: Vec<u8>,
    }

    impl BruteForce {
        fn new(rows: u64) -> Self {
            BruteForce { rows, memo: vec![u8::MAX; 1 << (2 * rows)] }
        }

        fn grundy(&mut self, mask: u32) -> u64 {
            if self.memo[mask as usize] == u8::MAX {
                let options: Vec<u64> = literal_moves(self.rows, mask)
                    .into_iter()
                    .map(|c| self.grundy(mask | bit(c.row, c.column)))
                    .collect();
                self.memo[mask as usize] = crate::games::mex(options) as u8;
            }
            u64::from(self.memo[mask as usize])
        }
    }

    fn mask_cells(rows: u64, mask: u32) -> Vec<Cell> {
        (1..=rows)
            .flat_map(|row| [1u64, 2].into_iter().map(move |column| cell(row, column)))
            .filter(|c| mask & bit(c.row, c.column) != 0)
            .collect()
    }

    /// Every conflict-free set of reclaimed cells of an r×2 strip, as masks.
    fn legal_masks(rows: u64) -> Vec<u32> {
        let mut masks = vec![(0u32, 0u64)];
        for row in 1..=rows {
            masks = masks
                .into_iter()
                .flat_map(|(mask, previous)| {
                    [0u64, 1, 2]
                        .into_iter()
                        .filter(move |&c| c == 0 || previous == 0 || previous == c)
                        .map(move |c| (if c == 0 { mask } else { mask | bit(row, c) }, c))
                })
                .collect();
        }
        masks.into_iter().map(|(mask, _)| mask).collect()
    }

    #[test]
    fn every_small_position_matches_brute_force() {
        for rows in 1..=10u64 {
            let mut brute = BruteForce::new(rows);
            let masks = legal_masks(rows);
            for &mask in &masks {
                let mut cells = mask_cells(rows, mask);
                cells.reverse();
                let strip = River::new(rows, cells).expect("a legal position");
                let value = nimber(&strip);
                assert_eq!(value, brute.grundy(mask), "rows {rows}, cells {:?}", strip.reclaimed());
                assert!(strip.reclaimed().windows(2).all(|w| w[0].row < w[1].row));

                let moves: Vec<Cell> = strip.moves().iter().collect();
                assert_eq!(moves, literal_moves(rows, mask), "rows {rows}, cells {:?}", strip.reclaimed());
                let mut reachable = Vec::new();
                for mv in &moves {
                    let next = strip.play_unchecked(mv);
                    let next_mask = mask | bit(mv.row, mv.column);
                    assert_eq!(next.reclaimed(), &mask_cells(rows, next_mask)[..]);
                    reachable.push(brute.grundy(next_mask));
                }
                for target in 0..=rows + 2 {
                    let found = strip.first_move_to(target, &mut SearchContext::in_memory()).expect("no budget");
                    match found {
                        Some(mv) => {
                            assert!(moves.contains(&mv), "illegal move {mv:?}");
                            assert_eq!(nimber(&strip.play_unchecked(&mv)), target);
                        }
                        None => assert!(!reachable.contains(&target), "missed target {target} in {mask:b}"),
                    }
                }
            }
        }
    }

    #[test]
    fn move_sets_match_search_on_long_runs() {
        // Longer runs, where more rows share a value: every kind of run up to 40 rows.
        for rows in 1..=40u64 {
            for top in 0..=2u64 {
                for bottom in 0..=2u64 {
                    let mut cells = Vec::new();
                    let mut rows_with_ends = rows;
                    if top != 0 {
                        cells.push(cell(1, top));
                        rows_with_ends += 1;
                    }
                    if bottom != 0 {
                        rows_with_ends += 1;
                        cells.push(cell(rows_with_ends, bottom));
                    }
                    let strip = River::new(rows_with_ends, cells).expect("a legal position");
                    assert_move_sets_match_search(&strip, &[0, 1, 2, 3]);
                }
            }
        }
    }

    /// A row of a strip of `rows` rows: near an end or anywhere.
    fn row(random: &mut SplitMix, rows: u64) -> u64 {
        match random.next_u64() % 3 {
            0 => random.range(1, rows.min(5)),
            1 => rows - random.next_u64() % rows.min(5),
            _ => random.range(1, rows),
        }
    }

    /// Checks that no free cell strictly between `first` and `second` (or before `second` if `first` is
    /// `None`) gives `target`, when they are at most 300 rows apart.
    fn assert_none_between(strip: &River, target: u64, first: Option<Cell>, second: Cell) {
        let from = first.map_or(1, |first| first.row);
        if second.row - from <= 300 {
            for row in from..=second.row {
                for column in [1u64, 2] {
                    let between = cell(row, column);
                    if first.is_none_or(|first| first < between) && between < second && strip.is_free(between) {
                        assert_ne!(nimber(&strip.play_unchecked(&between)), target, "{between:?} is skipped");
                    }
                }
            }
        }
    }

    #[test]
    fn analysis_is_consistent_on_huge_strips() {
        let mut random = SplitMix::new(335);
        let mut solver = SearchContext::in_memory();
        let mut huge_counts = 0;
        for round in 0..3000 {
            let rows = if round % 2 == 0 { 1_000_000_000_000_000_000 } else { u64::MAX - random.next_u64() % 3 };
            let cells: Vec<Cell> =
                (0..round % 5).map(|_| cell(row(&mut random, rows), 1 + random.next_u64() % 2)).collect();
            let Ok(strip) = River::new(rows, cells) else {
                continue;
            };
            let total = strip.moves().len();
            let value = nimber(&strip);
            let mut targets = vec![0, 1, value, value ^ 1, random.next_u64(), (1 << 40) - 1];
            for _ in 0..4 {
                let sample = cell(row(&mut random, rows), 1 + random.next_u64() % 2);
                if strip.is_free(sample) {
                    targets.push(nimber(&strip.play_unchecked(&sample)));
                }
            }
            targets.sort_unstable();
            targets.dedup();
            let mut counted = 0;
            for t in targets {
                let target = t;
                let count = strip.moves_to(target, &mut solver).map(|set| set.len()).expect("no budget");
                counted += count;
                huge_counts += usize::from(count > 1 << 20);
                let mut ks = vec![0, 1, count / 2, count.saturating_sub(2), count.saturating_sub(1)];
                ks.extend((0..3).map(|_| u128::from(random.next_u64()) * u128::from(random.next_u64()) % count.max(1)));
                for k in ks.into_iter().filter(|&k| k < count) {
                    let window = strip.moves_to(target, &mut solver).map(|set| page(&set, k, 2)).expect("no budget");
                    assert_eq!(window.len() as u128, (count - k).min(2), "{strip:?} to {t} from {k}");
                    for mv in &window {
                        assert!(strip.is_free(*mv), "{strip:?}: {mv:?}");
                        assert_eq!(nimber(&strip.play_unchecked(mv)), t, "{strip:?}: {mv:?}");
                    }
                    if let [first, second] = window[..] {
                        assert_eq!(
                            strip.moves_to(target, &mut solver).map(|set| page(&set, k + 1, 1)),
                            Ok(vec![second])
                        );
                        assert!(first < second, "{strip:?} to {t}: {first:?} {second:?}");
                        assert_none_between(&strip, t, Some(first), second);
                    }
                }
                if let Some(&first) =
                    strip.moves_to(target, &mut solver).map(|set| page(&set, 0, 1)).expect("no budget").first()
                {
                    assert_none_between(&strip, t, None, first);
                }
                assert_eq!(strip.moves_to(target, &mut solver).map(|set| page(&set, count, 3)), Ok(Vec::new()));
            }
            assert!(counted <= total, "{strip:?}");
        }
        assert!(huge_counts > 100, "some targets should have huge move sets ({huge_counts})");
        // Every cell of a run between crossed ends gives the same value: all u64::MAX·2 − 6 of them.
        let crossed = River::new(u64::MAX, vec![cell(u64::MAX, 1), cell(1, 2)]).expect("valid");
        let all = 2 * u128::from(u64::MAX - 2) - 2;
        assert_eq!(crossed.moves().len(), all);
        assert_eq!(crossed.moves_to(1, &mut solver).map(|set| set.len()), Ok(all));
        let tail = crossed.moves_to(1, &mut solver).map(|set| page(&set, all - 2, 5)).expect("no budget");
        assert_eq!(tail, vec![cell(u64::MAX - 2, 2), cell(u64::MAX - 1, 1)]);
    }

    #[test]
    fn constructor_accepts_exactly_the_conflict_free_sets() {
        for rows in 1..=8u64 {
            let legal: std::collections::HashSet<u32> = legal_masks(rows).into_iter().collect();
            for mask in 0..1u32 << (2 * rows) {
                let cells = mask_cells(rows, mask);
                let literal_ok =
                    cells.iter().all(|c| literal_free(rows, mask & !bit(c.row, c.column), c.row, c.column));
                assert_eq!(literal_ok, legal.contains(&mask));
                assert_eq!(River::new(rows, cells).is_ok(), literal_ok, "rows {rows}, mask {mask:b}");
            }
        }
    }

    #[test]
    fn samples_from_the_seed() {
        let win = |rows, cells| nimber(&River::new(rows, cells).expect("valid sample")) != 0;
        assert!(win(3, vec![cell(1, 1)]));
        assert!(win(12, vec![cell(4, 1), cell(8, 1)]));
        assert!(!win(1, vec![cell(1, 2)]));
    }

    #[test]
    fn invalid_strips_name_the_offending_cells() {
        let message = |rows, cells| River::new(rows, cells).expect_err("invalid").to_string();
        assert_eq!(message(0, vec![]), "rows must be at least 1");
        assert_eq!(message(5, vec![cell(1, 1), cell(0, 1)]), "reclaimed[1].row (0) must be between 1 and 5");
        assert_eq!(message(5, vec![cell(6, 2)]), "reclaimed[0].row (6) must be between 1 and 5");
        assert_eq!(message(5, vec![cell(2, 1), cell(4, 3)]), "reclaimed[1].column (3) must be 1 or 2");
        assert_eq!(message(5, vec![cell(2, 0)]), "reclaimed[0].column (0) must be 1 or 2");
        assert_eq!(
            message(9, vec![cell(4, 1), cell(1, 2), cell(4, 1)]),
            "reclaimed[2] (row 4, column 1) repeats reclaimed[0]"
        );
        for (a, b) in [(cell(3, 1), cell(3, 2)), (cell(3, 1), cell(4, 2)), (cell(4, 1), cell(3, 2))] {
            assert_eq!(
                message(9, vec![cell(8, 2), a, b]),
                format!(
                    "reclaimed[1] (row {}, column {}) and reclaimed[2] (row {}, column {}) \
                     forbid each other",
                    a.row, a.column, b.row, b.column
                )
            );
        }
        let err = River::new(u64::MAX, vec![cell(u64::MAX, 1), cell(u64::MAX - 1, 2)]).expect_err("conflict");
        assert!(matches!(err, ReclamationError::ForbiddenPair { first: 0, second: 1, .. }));
        let too_many: Vec<Cell> = (1..=MAX_RECLAIMED as u64 + 1).map(|row| cell(row, 1)).collect();
        assert_eq!(message(u64::MAX, too_many), "reclaimed has 100001 cells; the limit is 100000");
        assert!(River::new(9, vec![cell(3, 1), cell(5, 2), cell(2, 1), cell(6, 2)]).is_ok());
    }

    /// Checks that `move_to` reaches `target` from `strip` with a free cell.
    fn assert_reaches(strip: &River, target: u64) {
        let mv = strip.first_move_to(target, &mut SearchContext::in_memory()).expect("no budget");
        let mv = mv.unwrap_or_else(|| panic!("no move to {target} from {:?}", strip.reclaimed()));
        assert!(strip.is_free(mv), "{mv:?} is not free");
        let next = strip.play_unchecked(&mv);
        assert_eq!(next.reclaimed().len(), strip.reclaimed().len() + 1);
        assert_eq!(nimber(&next), target);
    }

    #[test]
    fn huge_strips_have_exact_values_and_moves() {
        let empty = River::new(u64::MAX, vec![]).expect("valid");
        assert_eq!(nimber(&empty), 1);
        let first: Vec<Cell> = empty.moves().iter().take(3).collect();
        assert_eq!(first, vec![cell(1, 1), cell(1, 2), cell(2, 1)]);
        let (_, best) = empty.best_move(&mut SearchContext::in_memory()).expect("no budget");
        assert_eq!(best, Some(cell(u64::MAX / 2 + 1, 1)));
        assert_reaches(&empty, 0);

        // One free end: the run's value is its length, and every smaller value is reachable.
        let last = River::new(u64::MAX, vec![cell(u64::MAX, 2)]).expect("valid");
        assert_eq!(nimber(&last), u64::MAX - 1);
        for target in [0, 1, 2, 12_345, 1 << 40, u64::MAX / 2, u64::MAX - 3, u64::MAX - 2] {
            assert_reaches(&last, target);
        }
        let top = River::new(u64::MAX, vec![cell(1, 1)]).expect("valid");
        assert_eq!(nimber(&top), u64::MAX - 1);
        assert_eq!(top.moves().iter().take(2).collect::<Vec<_>>(), vec![cell(2, 1), cell(3, 1)]);
        for target in [0, 7, u64::MAX - 2] {
            assert_reaches(&top, target);
        }

        // Runs near the end of u64 rows enumerate their cells without overflow.
        let near_end = Run { above: u64::MAX - 3, len: 2, top: 1, bottom: 2 };
        assert_eq!(free_cells(near_end), vec![cell(u64::MAX - 2, 1), cell(u64::MAX - 1, 2)]);
        let tail = Run { above: u64::MAX - 1, len: 1, top: 2, bottom: 0 };
        assert_eq!(free_cells(tail), vec![cell(u64::MAX, 2)]);
        let same = River::new(u64::MAX, vec![cell(u64::MAX, 2), cell(1, 2)]).expect("valid");
        assert_eq!(nimber(&same), 1);
        assert_reaches(&same, 0);
        assert!(!same.is_free(cell(u64::MAX - 1, 1)) && same.is_free(cell(u64::MAX - 1, 2)));
        assert!(!same.is_legal(&cell(u64::MAX - 1, 1)), "a forbidden cell");
        let crossed = River::new(u64::MAX, vec![cell(u64::MAX, 1), cell(1, 2)]).expect("valid");
        assert_eq!(nimber(&crossed), 0, "u64::MAX - 2 untouched rows between crossed ends");
        assert_reaches(&crossed, 1);
        assert_eq!(crossed.first_move_to(2, &mut SearchContext::in_memory()), Ok(None));
    }

    #[test]
    fn many_cells_on_a_huge_strip() {
        // 100 000 cells spread over the whole u64 range, alternating columns at every second gap.
        let gap = u64::MAX / MAX_RECLAIMED as u64;
        let cells: Vec<Cell> =
            (0..MAX_RECLAIMED as u64).rev().map(|i| cell(1 + i * gap + i % 3, 1 + i / 2 % 2)).collect();
        let strip = River::new(u64::MAX, cells).expect("valid");
        let value = nimber(&strip);
        assert!(strip.reclaimed().windows(2).all(|w| w[0].row < w[1].row));
        for target in [0, 1, value / 3, value.saturating_sub(1)] {
            if target < value {
                assert_reaches(&strip, target);
            }
        }
    }
}
