//! Diagonal walk (HDU 5708 "Alice and Bob"): a token on an n×m board moves down, right or k steps
//! diagonally.
//!
//! The token stands on `(x, y)` (row, column, 1-based) of a board with `n` rows and `m` columns. A
//! move takes it to `(x + 1, y)`, `(x, y + 1)` or `(x + k, y + k)`, staying on the board; the player
//! who cannot move loses. The contest starts the token at `(1, 1)`.
//!
//! # Closed form
//!
//! Only the distances to the far edges matter: `a = n − x` and `b = m − y`. Let `lo = min(a, b)`,
//! `d = |a − b|`, `q = lo div (k + 1)` and `r = lo mod (k + 1)`. The Grundy value is
//! - `2 + (d mod 2)` if `r = k`;
//! - otherwise `d mod 2` if `k = 1`;
//! - otherwise `(q mod 2) ⊕ (d mod 2)`.
//!
//! *Proof*, by induction on `a + b`, taking `a ≤ b` by symmetry; write `P = d mod 2`, `Q = q mod 2`.
//! The options are `(a − 1, b)` (lo − 1, d + 1), `(a, b − 1)` (lo, d − 1, or like the first when
//! `d = 0`) and `(a − k, b − k)` (lo − k, d) when `a ≥ k`.
//! - `0 < r < k` (so `k ≥ 2`), claim `Q ⊕ P`: the first two options are `Q ⊕ P ⊕ 1`; the diagonal
//!   one (lo − k has remainder `r + 1` and quotient `q − 1`) is `Q ⊕ P ⊕ 1` or in `{2, 3}`.
//!   The options hold `Q ⊕ P ⊕ 1` and never `Q ⊕ P`, so the mex is `Q ⊕ P`.
//! - `r = 0`, claim `Q ⊕ P` (`P` when `k = 1`): if `a = 0` the only option, `(0, b − 1)` when
//!   `b ≥ 1`, has value `1 − P`. Otherwise `a ≥ k + 1`; `(a − 1, b)` has remainder `k`, value `3 − P`;
//!   `(a, b − 1)` (when `d ≥ 1`) has value `Q ⊕ P ⊕ 1` (`1 − P` for `k = 1`); the diagonal option has
//!   remainder 1 and quotient `q − 1`: value `Q ⊕ P ⊕ 1` when `k ≥ 2`, `2 + P` when `k = 1`. So for
//!   `k ≥ 2` the options are `{Q ⊕ P ⊕ 1, 3 − P}`, for `k = 1` they are `{2, 3}` plus `1 − P` when
//!   `d ≥ 1` (and `d = 0` means `P = 0`); either way the mex is the claim.
//! - `r = k`, claim `2 + P`: `(a − 1, b)` has value `Q ⊕ P ⊕ 1` (`1 − P` for `k = 1`), the diagonal
//!   option (remainder 0, same quotient) has value `Q ⊕ P` (`P` for `k = 1`), so 0 and 1 are options;
//!   `(a, b − 1)`, when `d ≥ 1`, has value `3 − P`. The mex is `2 + P` (`d = 0` means `P = 0`).
//!
//! The base case `a = b = 0` has value 0 = the claim. The tests also check the formula against the
//! literal Grundy recursion for every `a, b ≤ 300` and every `k ≤ 40`, and for steps past the board.

use super::ServedGame;
use super::{display_setup_error, FieldPath, Game, Interrupted, MoveSet, Nimber, SearchContext, SetupError};

/// Why a walk could not be set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiagonalWalkError {
    /// The board has no rows.
    NoRows,
    /// The board has no columns.
    NoColumns,
    /// The diagonal step is 0.
    NoStep,
    /// The token's row is 0 or past the last row.
    RowOutOfRange {
        /// The offending row.
        row: u64,
        /// The board's number of rows.
        rows: u64,
    },
    /// The token's column is 0 or past the last column.
    ColumnOutOfRange {
        /// The offending column.
        column: u64,
        /// The board's number of columns.
        columns: u64,
    },
}

impl SetupError for DiagonalWalkError {
    fn field(&self) -> FieldPath {
        FieldPath::field(match self {
            DiagonalWalkError::NoRows => "rows",
            DiagonalWalkError::NoColumns => "columns",
            DiagonalWalkError::NoStep => "step",
            DiagonalWalkError::RowOutOfRange { .. } => "row",
            DiagonalWalkError::ColumnOutOfRange { .. } => "column",
        })
    }

    fn problem(&self, _name: &dyn Fn(&FieldPath) -> String) -> String {
        match self {
            DiagonalWalkError::NoRows | DiagonalWalkError::NoColumns | DiagonalWalkError::NoStep => {
                "must be at least 1".into()
            }
            DiagonalWalkError::RowOutOfRange { row, rows } => format!("({row}) must be between 1 and {rows}"),
            DiagonalWalkError::ColumnOutOfRange { column, columns } => {
                format!("({column}) must be between 1 and {columns}")
            }
        }
    }
}

display_setup_error!(DiagonalWalkError);

/// A move of the token, in move order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// One row down: `(x + 1, y)`.
    Down,
    /// One column right: `(x, y + 1)`.
    Right,
    /// The diagonal step: `(x + k, y + k)`.
    Diagonal,
}

/// A position: the board, the diagonal step and where the token stands.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Walk {
    rows: u64,
    columns: u64,
    step: u64,
    row: u64,
    column: u64,
}

impl Walk {
    /// The token at `(row, column)` (1-based) of a `rows`×`columns` board with diagonal step `step`.
    ///
    /// Fails when the board or the step is 0, or the token is off the board.
    pub fn new(rows: u64, columns: u64, step: u64, row: u64, column: u64) -> Result<Walk, DiagonalWalkError> {
        if rows == 0 {
            return Err(DiagonalWalkError::NoRows);
        }
        if columns == 0 {
            return Err(DiagonalWalkError::NoColumns);
        }
        if step == 0 {
            return Err(DiagonalWalkError::NoStep);
        }
        if row == 0 || row > rows {
            return Err(DiagonalWalkError::RowOutOfRange { row, rows });
        }
        if column == 0 || column > columns {
            return Err(DiagonalWalkError::ColumnOutOfRange { column, columns });
        }
        Ok(Walk { rows, columns, step, row, column })
    }

    /// The board's number of rows (`n`).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The board's number of columns (`m`).
    pub fn columns(&self) -> u64 {
        self.columns
    }

    /// The diagonal step (`k`).
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The token's row (`x`, 1-based).
    pub fn row(&self) -> u64 {
        self.row
    }

    /// The token's column (`y`, 1-based).
    pub fn column(&self) -> u64 {
        self.column
    }

    /// Whether `direction` keeps the token on the board.
    fn allows(&self, direction: Direction) -> bool {
        let (below, right) = (self.rows - self.row, self.columns - self.column);
        match direction {
            Direction::Down => below >= 1,
            Direction::Right => right >= 1,
            Direction::Diagonal => below >= self.step && right >= self.step,
        }
    }

    /// The Grundy value by the closed form of the module documentation.
    fn nimber(&self) -> u64 {
        let (below, right) = (self.rows - self.row, self.columns - self.column);
        let (lo, d) = (below.min(right), below.abs_diff(right));
        // k + 1 overflows u64 when k = u64::MAX, so divide in u128.
        let period = u128::from(self.step) + 1;
        let (q, r) = (u128::from(lo) / period, u128::from(lo) % period);
        if r == u128::from(self.step) {
            2 + d % 2
        } else if self.step == 1 {
            d % 2
        } else {
            (q % 2) as u64 ^ (d % 2)
        }
    }
}

impl Game for Walk {
    type Move = Direction;
    type Value = Nimber;

    /// The closed form; O(1).
    fn value(&self, _solver: &mut SearchContext) -> Result<Nimber, Interrupted> {
        Ok(self.nimber())
    }

    /// The legal directions among Down, Right, Diagonal, in that order.
    fn moves(&self) -> MoveSet<Direction> {
        let directions = [Direction::Down, Direction::Right, Direction::Diagonal];
        MoveSet::listed(directions.into_iter().filter(|&d| self.allows(d)).collect())
    }

    /// Whether the move keeps the token on the board.
    fn is_legal(&self, mv: &Direction) -> bool {
        self.allows(*mv)
    }

    /// The token moved.
    fn play_unchecked(&self, mv: &Direction) -> Walk {
        debug_assert!(self.is_legal(mv), "{mv:?} is not legal in {self:?}");
        let mut next = self.clone();
        match mv {
            Direction::Down => next.row = next.row.saturating_add(1),
            Direction::Right => next.column = next.column.saturating_add(1),
            Direction::Diagonal => {
                next.row = next.row.saturating_add(self.step);
                next.column = next.column.saturating_add(self.step);
            }
        }
        next
    }
}

impl ServedGame for Walk {
    const NAME: &'static str = "diagonal_walk";
    const SEARCHES: bool = false;
    type Error = DiagonalWalkError;
    type Learnt = ();
}

mod wire;

#[cfg(test)]
mod tests {
    use super::*;

    fn nimber(walk: &Walk) -> u64 {
        walk.value(&mut SearchContext::in_memory()).expect("no budget")
    }

    /// Grundy values `g[a][b]` of the literal rules, `a`, `b` the distances to the far edges.
    fn literal_table(size: usize, step: u64) -> Vec<Vec<u64>> {
        let mut g = vec![vec![0u64; size + 1]; size + 1];
        for a in 0..=size {
            for b in 0..=size {
                let mut options = Vec::new();
                if a >= 1 {
                    options.push(g[a - 1][b]);
                }
                if b >= 1 {
                    options.push(g[a][b - 1]);
                }
                if a as u64 >= step && b as u64 >= step {
                    let k = step as usize;
                    options.push(g[a - k][b - k]);
                }
                g[a][b] = crate::games::mex(options);
            }
        }
        g
    }

    /// The literal move list: every direction whose target square is on the board.
    fn literal_moves(walk: &Walk) -> Vec<Direction> {
        let on_board = |x: u128, y: u128| x <= u128::from(walk.rows()) && y <= u128::from(walk.columns());
        let (x, y, k) = (u128::from(walk.row()), u128::from(walk.column()), u128::from(walk.step()));
        [(Direction::Down, x + 1, y), (Direction::Right, x, y + 1), (Direction::Diagonal, x + k, y + k)]
            .into_iter()
            .filter(|&(_, x, y)| on_board(x, y))
            .map(|(direction, _, _)| direction)
            .collect()
    }

    #[test]
    fn closed_form_matches_literal_recursion() {
        const SIZE: usize = 300;
        for step in (1..=40).chain([299, 300, 301, 1 << 40, u64::MAX]) {
            let g = literal_table(SIZE, step);
            for a in 0..=SIZE as u64 {
                for b in 0..=SIZE as u64 {
                    // Place the token away from the corner too: only the distances may matter.
                    let walk = Walk::new(a + 1 + b % 7, b + 1 + a % 5, step, 1 + b % 7, 1 + a % 5).expect("valid");
                    assert_eq!(nimber(&walk), g[a as usize][b as usize], "step {step}, a {a}, b {b}");
                }
            }
        }
    }

    #[test]
    fn moves_and_play_follow_the_rules_on_small_boards() {
        for step in 1..=6 {
            for rows in 1..=8 {
                for columns in 1..=8 {
                    for row in 1..=rows {
                        for column in 1..=columns {
                            let walk = Walk::new(rows, columns, step, row, column).expect("valid");
                            let moves: Vec<Direction> = walk.moves().iter().collect();
                            assert_eq!(moves, literal_moves(&walk));
                            for mv in &moves {
                                let next = walk.play_unchecked(mv);
                                let (dx, dy) = match mv {
                                    Direction::Down => (1, 0),
                                    Direction::Right => (0, 1),
                                    Direction::Diagonal => (step, step),
                                };
                                assert_eq!((next.row(), next.column()), (row + dx, column + dy));
                                assert_eq!((next.rows(), next.columns(), next.step()), (rows, columns, step));
                            }
                            for mv in [Direction::Down, Direction::Right, Direction::Diagonal] {
                                assert_eq!(walk.is_legal(&mv), moves.contains(&mv));
                            }
                            assert_best_move(&walk);
                        }
                    }
                }
            }
        }
    }

    /// The value is the mex of the options' values, and `best_move` wins when the value is nonzero.
    fn assert_best_move(walk: &Walk) {
        let options: Vec<u64> = walk.moves().iter().map(|mv| nimber(&walk.play_unchecked(&mv))).collect();
        let value = nimber(walk);
        assert_eq!(value, crate::games::mex(options), "{walk:?}");
        assert!(value <= 3);
        let (reported, best) = walk.best_move(&mut SearchContext::in_memory()).expect("no budget");
        assert_eq!(reported, value);
        match best {
            Some(mv) => {
                assert!(walk.moves().iter().any(|m| m == mv));
                if value != 0 {
                    assert_eq!(nimber(&walk.play_unchecked(&mv)), 0, "{walk:?} {mv:?}");
                }
            }
            None => assert_eq!(walk.moves().len(), 0),
        }
        for target in 0..value {
            let mv = walk.first_move_to(target, &mut SearchContext::in_memory()).expect("no budget");
            assert_eq!(mv.map(|mv| nimber(&walk.play_unchecked(&mv))), Some(target), "{walk:?} to {target}");
        }
    }

    #[test]
    fn huge_boards_are_consistent() {
        const MAX: u64 = u64::MAX;
        const E18: u64 = 1_000_000_000_000_000_000;
        let steps = [1, 2, 3, 1000, E18 - 1, E18, MAX / 2, MAX - 2, MAX - 1, MAX];
        let sides = [1, 2, E18 - 1, E18, E18 + 1, 2 * E18, MAX / 2, MAX - 2, MAX - 1, MAX];
        for step in steps {
            for rows in sides {
                for columns in sides {
                    for (row, column) in [(1, 1), (1, 2), (2, 1), (rows, columns), (rows / 3 + 1, columns / 7 + 1)] {
                        if let Ok(walk) = Walk::new(rows, columns, step, row, column) {
                            assert_best_move(&walk);
                            assert_eq!(walk.moves().iter().collect::<Vec<_>>(), literal_moves(&walk));
                        }
                    }
                }
            }
        }
        // The whole u64 board: the diagonal step fits exactly when k = u64::MAX − 1.
        let corner = Walk::new(MAX, MAX, MAX - 1, 1, 1).expect("valid");
        assert_eq!(nimber(&corner), 2);
        let next = corner.play_unchecked(&Direction::Diagonal);
        assert_eq!((next.row(), next.column()), (MAX, MAX));
        assert_eq!(next.moves().len(), 0);
        let far = Walk::new(MAX, MAX, MAX, 1, 1).expect("valid");
        assert_eq!(far.moves().iter().collect::<Vec<_>>(), vec![Direction::Down, Direction::Right]);
        assert_eq!(nimber(&far), 0, "an even square without diagonal moves");
    }

    #[test]
    fn outcomes_match_the_contest_rule() {
        let big = [1_000_000_000_000_000_000, u64::MAX / 3, u64::MAX - 1, u64::MAX];
        for k in (1..=12).chain(big) {
            let sides = (1..=150).chain(big.iter().flat_map(|&s| [s - 2, s - 1, s]));
            for n in sides.clone() {
                for m in sides.clone() {
                    let walk = Walk::new(n, m, k, 1, 1).expect("valid");
                    assert_eq!(
                        nimber(&walk) != 0,
                        crate::testing::hdu5708_first_player_wins(n, m, k),
                        "n {n}, m {m}, k {k}"
                    );
                }
            }
        }
    }

    #[test]
    fn invalid_walks_name_the_field() {
        let message = |n, m, k, x, y| Walk::new(n, m, k, x, y).expect_err("invalid").to_string();
        assert_eq!(message(0, 5, 1, 1, 1), "rows must be at least 1");
        assert_eq!(message(5, 0, 1, 1, 1), "columns must be at least 1");
        assert_eq!(message(5, 5, 0, 1, 1), "step must be at least 1");
        assert_eq!(message(5, 5, 1, 0, 1), "row (0) must be between 1 and 5");
        assert_eq!(message(5, 5, 1, 6, 1), "row (6) must be between 1 and 5");
        assert_eq!(message(5, 7, 1, 2, 0), "column (0) must be between 1 and 7");
        assert_eq!(message(5, 7, 1, 2, 8), "column (8) must be between 1 and 7");
        let walk = Walk::new(5, 7, 3, 2, 4).expect("valid");
        assert_eq!((walk.rows(), walk.columns(), walk.step(), walk.row(), walk.column()), (5, 7, 3, 2, 4));
    }
}
