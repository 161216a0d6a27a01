//! The placement engine: games in which players take turns putting a piece on free cells of a
//! rectangular board, and the player who cannot loses. The 2×2 game ([`crate::games::tetris`])
//! and Cram ([`crate::games::cram`]) are two [`Piece`]s on it.
//!
//! What the engine does for every piece:
//! * [`Board`]: the validated board (at most [`MAX_CELLS`] cells, [`MAX_SIDE`] a side), its
//!   errors, its moves, and the [`Game`] impl.
//! * A position is a set of **points** (`bits`): what a piece's moves are made of, one bit each.
//!   A position splits into connected components (joined as the piece says); its value is the
//!   XOR of theirs. Components are bitboards written once over the word size: one `u64` when they
//!   fit in 8×8 points (`window`), one `u128` when at most 8 across and 16 long (`band`), 256 bits
//!   up to 16×16, 1024 bits when longer.
//! * A component is keyed by its canonical form: translated to the origin, least of its 8 images
//!   under the symmetries of the square. Equal components, wherever and however turned, share one
//!   entry of the per-solve table (`table`, bounded by `context.table_limit`, keeping the costliest
//!   entries when full) and of the persistent memo (`context.memo`, under the game's tag); options
//!   a symmetry of the component maps onto each other are tried once.
//! * The search (`engine`) is the Lemoine–Viennot one: it asks "has this component value `t`?"
//!   rather than computing every option's value. A component a half turn maps onto itself, with
//!   no move meeting its own image, is 0 without a search (the proof is on the engine).
//! * The persistent memo holds the value of every top-level component solved and of every
//!   component of at least its piece's `MEMO_MIN_POINTS` whose search took at least 64 option evaluations; its key is
//!   the canonical form as height, width and the row-major bits (see `bits::PointSet::memo_key`).
//!   So a board solved once is never searched again, even after a restart, and an interrupted
//!   solve resumes from what it had finished.
//!
//! What a piece adds ([`Piece`]): which cells are its points, which points its components join,
//! its moves on a set of points, and its own rules for values without a search (straight lines,
//! tables built into the binary, the parts of an option found without a flood fill).

mod band;
mod bits;
mod engine;
mod family;
mod lean;
mod lines;
mod small;
mod strategy;
mod table;
#[cfg(test)]
mod tests;
mod window;

use std::fmt::Debug;
use std::hash::Hash;
use std::marker::PhantomData;

pub use self::bits::{BoardPoints, PointSet, Symmetry, Wide, Word};
pub use self::engine::{searched_components, value_without_search, Learnt};
use self::engine::{Engine, Memoize};
pub use self::family::{BoardFamily, FamilyBoard, MAX_SUB_BOARDS};
pub use self::lines::{line_of, sides, tufts_and_branches, Line};
pub use self::small::{load_small_sets, SmallSets, DOMINO_SETS, SQUARE_SETS};
pub use self::window::{transpose, Window};
use super::Lookup;
use super::{display_setup_error, FieldPath, Game, GameTag, Interrupted, MoveSet, Nimber, SearchContext, SetupError};

/// The most cells a board may have (16×16, 8×32, 4×64, ...).
pub const MAX_CELLS: usize = 256;
/// The most rows (and the most columns) a board may have.
pub const MAX_SIDE: usize = 64;

/// What one placement game adds to the engine: its points, its moves and its own tricks.
pub trait Piece: Clone + Copy + Debug + PartialEq + Eq + Hash + Send + Sync + 'static {
    /// A move: where a piece goes, in 1-based cells of the board. Moves order row-major.
    type Move: Clone + Copy + Debug + PartialEq + Eq + Hash + Ord + Send + Sync;
    /// How many rows (and columns) the points of a board have fewer than its cells: 1 when a
    /// point is a 2×2 square's top-left cell, 0 when it is a cell.
    const EXTENT: usize;
    /// The most points one move removes.
    const MOST_REMOVED: u32;
    /// Components with at least this many points are looked up in the persistent memo (smaller
    /// ones take less time to solve than to look up); top-level components always are.
    const MEMO_MIN_POINTS: u32;
    /// The game's memo tag (its [`Registered::TAG`](super::Registered::TAG)).
    const TAG: GameTag;
    /// Whether components whose box has at most 64 cells are searched on the kernel
    /// ([`crate::games::kernel`]) as lean sets.
    const ON_KERNEL: bool = false;

    /// `learnt` as the engine's state for this game, if it is (its board's
    /// [`Registered::take_learnt`](super::Registered::take_learnt)).
    fn take_learnt(learnt: &mut super::Learnt) -> Option<Learnt>;
    /// The engine's state for this game as what was learnt (its board's
    /// [`Registered::learnt`](super::Registered::learnt)).
    fn learnt(state: Learnt) -> super::Learnt;

    /// Row `r` of the points of a board whose rows of free cells are `free` (bit `c` of row `r`
    /// is the cell in 0-based column `c`; `width` columns): bit `c` is point `(r, c)`.
    fn point_row(free: &[u64], r: usize, width: usize) -> u64;
    /// The set together with the points a component joins to its points.
    fn with_neighbours<S: PointSet>(set: S) -> S;
    /// Calls `f(played, rest)` for every move of the set: the move's code and the set after it.
    fn for_each_option<S: PointSet>(set: S, f: impl FnMut(u32, S));
    /// The point of a move's code: where it is, for the order options are tried in.
    fn anchor(played: u32) -> u32;
    /// The set after the move of code `played`. A symmetry of the set maps the set after a move
    /// to the set after the move's image.
    fn after<S: PointSet>(set: S, played: u32) -> S;
    /// An option the search may use in place of `option`, of the same value (the option itself by
    /// default). Applied once the options a symmetry maps onto each other are one, so it need not
    /// commute with the symmetries.
    fn simplified<S: PointSet>(option: S) -> S {
        option
    }
    /// Whether a move at a point meets the move at its image under a half turn, when the two are
    /// `rows` rows and `columns` columns apart (each 0 or 1).
    fn meets_own_image(rows: usize, columns: usize) -> bool;
    /// The largest value a connected set of `size` points can have (below `u8::MAX` for every
    /// board of at most [`MAX_CELLS`] cells).
    fn most_value(size: u32) -> u32;
    /// The value of a connected set of `size` points at the origin, `height`×`width` (at most
    /// 8×8), when a rule gives it without a search.
    fn direct_value<S: PointSet>(origin: S, size: u32, height: usize, width: usize) -> Option<u8>;
    /// The value of a connected set of `size` points, `height`×`width` (larger than a window),
    /// when a rule for thin shapes (straight lines, paths) gives it without a search.
    fn thin_value<S: PointSet>(set: S, size: u32, height: usize, width: usize) -> Option<u8>;
    /// Whether a move lies along the rows of the points (else across them), for a piece that
    /// has a direction: the kernel tries moves along a component's long side later.
    fn lies_along_rows(_played: u32) -> Option<bool> {
        None
    }
    /// The bytes the kernel's table starts with for a component of `points` (it grows as it
    /// fills, and a page of it costs its zeroing once touched): by default 2^(points/2 + 5),
    /// which follows the components a search of Cram meets (its 4×11 board keeps 5.1 million
    /// entries), from 8 KiB for 16 points to 128 MiB for 44.
    fn kernel_table_bytes(points: u32) -> usize {
        1usize << (points / 2 + 5).min(40)
    }
    /// The value of a set, connected or not, when a table gives it; the empty set's is 0.
    fn tabled_value<S: PointSet>(set: S) -> Option<u8> {
        set.is_empty().then_some(0)
    }
    /// Whether `rest`, the set after the move `played` of a connected set (not yet
    /// [simplified](Piece::simplified)), is connected by a test around the move alone; `false`
    /// when that test cannot tell.
    fn connected_around<S: PointSet>(_rest: S, _played: u32) -> bool {
        false
    }
    /// The connected components of `rest`, the set after the move `played` of a connected set.
    fn parts_after<S: PointSet>(rest: S, _played: u32) -> impl Iterator<Item = S> {
        components::<Self, S>(rest)
    }

    /// Every move inside a `height`×`width` rectangle of cells, row-major.
    fn moves_within(height: usize, width: usize) -> impl Iterator<Item = Self::Move>;
    /// The 1-based cells a move covers: each must be free.
    fn cells(mv: &Self::Move) -> impl Iterator<Item = (usize, usize)>;
    /// The 1-based cells a move blocks, those off the board or blocked already ignored: the
    /// cells it covers, by default.
    fn taken(mv: &Self::Move) -> impl Iterator<Item = (usize, usize)> {
        Self::cells(mv)
    }
    /// The code of a legal move among the points of a board, [`turned`](Board::points) or not.
    fn code(mv: &Self::Move, turned: bool) -> u32;
}

/// The connected components of a set of points, as `P` joins them, in the order of their first
/// points.
pub fn components<P: Piece, S: PointSet>(set: S) -> impl Iterator<Item = S> {
    set.split(P::with_neighbours, |_| false)
}

/// The bit index of the point at 0-based `(row, column)` among the points of a board, stored
/// [turned](Board::points) or not.
pub fn point_index(row: usize, column: usize, turned: bool) -> u32 {
    let (major, minor) = if turned { (column, row) } else { (row, column) };
    (major * BoardPoints::STRIDE as usize + minor) as u32
}

/// Why a board was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardError {
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

impl SetupError for BoardError {
    fn field(&self) -> FieldPath {
        let rows = FieldPath::field("rows");
        match *self {
            BoardError::Empty | BoardError::TooManyRows { .. } | BoardError::TooManyCells { .. } => rows,
            BoardError::TooManyColumns { .. } => rows.at(0),
            BoardError::RaggedRow { row, .. } | BoardError::BadCell { row, .. } => rows.at(row),
        }
    }

    fn problem(&self, name: &dyn Fn(&FieldPath) -> String) -> String {
        match self {
            BoardError::Empty => "is empty; a board needs at least one cell".into(),
            BoardError::TooManyRows { rows } => {
                format!("has {rows} rows; the limit is {MAX_SIDE} (and {MAX_CELLS} cells)")
            }
            BoardError::TooManyColumns { columns } => {
                format!("has {columns} columns; the limit is {MAX_SIDE} (and {MAX_CELLS} cells)")
            }
            BoardError::TooManyCells { rows, columns } => format!(
                "is {rows}×{columns} = {} cells; the limit is {MAX_CELLS} cells (e.g. 16×16, 8×32, 4×64)",
                rows * columns
            ),
            BoardError::RaggedRow { length, expected, .. } => {
                format!("has {length} columns but {} has {expected}", name(&FieldPath::field("rows").at(0)))
            }
            BoardError::BadCell { column, found, .. } => {
                format!("column {column} is {found:?}; expected '0' or '.' (free), '1' or '#' (blocked)")
            }
        }
    }
}

display_setup_error!(BoardError);

/// A board of a placement game: a rectangle of free and blocked cells, at most [`MAX_CELLS`]
/// cells and [`MAX_SIDE`] cells each way.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Board<P> {
    height: usize,
    width: usize,
    /// `free[r]` bit `c`: the cell in 0-based row `r`, column `c` is free.
    free: [u64; MAX_SIDE],
    piece: PhantomData<P>,
}

impl<P: Piece> Board<P> {
    /// A board from its rows: `0` or `.` is a free cell, `1` or `#` a blocked one.
    pub fn new(rows: &[String]) -> Result<Self, BoardError> {
        let expected = rows.first().map_or(0, |row| row.chars().count());
        if expected == 0 {
            return Err(BoardError::Empty);
        }
        if rows.len() > MAX_SIDE {
            return Err(BoardError::TooManyRows { rows: rows.len() });
        }
        if expected > MAX_SIDE {
            return Err(BoardError::TooManyColumns { columns: expected });
        }
        if rows.len() * expected > MAX_CELLS {
            return Err(BoardError::TooManyCells { rows: rows.len(), columns: expected });
        }
        let mut free = [0u64; MAX_SIDE];
        for (r, row) in rows.iter().enumerate() {
            let length = row.chars().count();
            if length != expected {
                return Err(BoardError::RaggedRow { row: r, length, expected });
            }
            for (c, ch) in row.chars().enumerate() {
                match ch {
                    '0' | '.' => free[r] |= 1 << c,
                    '1' | '#' => {}
                    found => return Err(BoardError::BadCell { row: r, column: c + 1, found }),
                }
            }
        }
        Ok(Board { height: rows.len(), width: expected, free, piece: PhantomData })
    }

    /// The full board of `height` rows and `width` columns (each from 1 to [`MAX_SIDE`], at most
    /// [`MAX_CELLS`] cells).
    pub fn full(height: usize, width: usize) -> Result<Self, BoardError> {
        Board::new(&vec!["0".repeat(width); height])
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

    /// Whether [`Board::points`] holds the points turned: a board with more rows of points than a
    /// [`BoardPoints`] holds has at most 16 columns of them (it has at most [`MAX_CELLS`] cells),
    /// which fit its rows.
    fn turned(&self) -> bool {
        self.height > BoardPoints::ROWS as usize + P::EXTENT
    }

    /// The points: bit `64·r + c` for the point `(r, c)`, 0-based, or `(c, r)` on a
    /// turned board (one with more rows of points than [`BoardPoints`] holds).
    pub fn points(&self) -> BoardPoints {
        let rows = (0..self.height.saturating_sub(P::EXTENT)).map(|r| P::point_row(&self.free, r, self.width));
        if !self.turned() {
            return BoardPoints::from_rows(rows);
        }
        let mut columns = [0u64; MAX_SIDE];
        for (r, row) in rows.enumerate() {
            for (c, column) in columns.iter_mut().enumerate().take(self.width) {
                *column |= (row >> c & 1) << r;
            }
        }
        BoardPoints::from_rows(columns.into_iter().take(self.width))
    }
}

impl<P: Piece> Board<P> {
    /// Components with their values, and the total.
    fn component_values(&self, engine: &mut Engine<P>) -> Result<(Vec<(BoardPoints, u8)>, u64), Interrupted> {
        let mut parts = Vec::new();
        let mut total = 0;
        for part in components::<P, _>(self.points()) {
            let value = engine.component(part, Memoize::Always)?;
            total ^= u64::from(value);
            parts.push((part, value));
        }
        Ok((parts, total))
    }

    /// The first move (row-major) leading to value `target`, given the components and their values.
    fn move_to(
        &self,
        target: u64,
        parts: &[(BoardPoints, u8)],
        total: u64,
        engine: &mut Engine<P>,
    ) -> Result<Option<P::Move>, Interrupted> {
        let turned = self.turned();
        for mv in self.moves().iter() {
            let played = P::code(&mv, turned);
            let Some(&(part, value)) = parts.iter().find(|(part, _)| part.contains(P::anchor(played))) else {
                continue;
            };
            if total ^ u64::from(value) ^ engine.value_of_set(P::after(part, played))? == target {
                return Ok(Some(mv));
            }
        }
        Ok(None)
    }

    /// The boards this board's moves lead to, as a long solve's root options (`examples/root-options`
    /// tells which of them a store settles): one for each different set of searched components
    /// (equal up to symmetry), only those with a component of at least [`Piece::MEMO_MIN_POINTS`]
    /// (the search of this board reads those from the memo), the largest first, at most `most`.
    pub fn option_boards(&self, most: usize) -> Vec<Self> {
        let mut seen = std::collections::HashSet::new();
        let mut options: Vec<(u32, Self)> = self
            .moves()
            .iter()
            .filter_map(|mv| {
                let next = self.play_unchecked(&mv);
                let searched = searched_components::<P>(next.points());
                let largest = searched.iter().map(|(points, _)| *points).max()?;
                (largest >= P::MEMO_MIN_POINTS && seen.insert(searched)).then_some((largest, next))
            })
            .collect();
        // Largest first; the order of the moves among equals, so the list is always the same.
        options.sort_by_key(|(largest, _)| std::cmp::Reverse(*largest));
        options.into_iter().take(most).map(|(_, board)| board).collect()
    }

    /// The value of the board when every searched component is in the memo `lookup` probes
    /// (see [`ServedGame::value_without_search`](super::ServedGame::value_without_search)).
    pub fn value_from(&self, lookup: &Lookup) -> Option<(Nimber, u64)> {
        value_without_search::<P>(self.points(), &|key| lookup(P::TAG, key))
    }
}

impl<P: Piece> Game for Board<P> {
    type Move = P::Move;
    type Value = Nimber;

    fn value(&self, context: &mut SearchContext) -> Result<Nimber, Interrupted> {
        Engine::<P>::new(context).value_of_board(self.points())
    }

    fn moves(&self) -> MoveSet<P::Move> {
        MoveSet::listed(P::moves_within(self.height, self.width).filter(|mv| self.is_legal(mv)).collect())
    }

    /// Whether the piece's cells are on the board and free.
    fn is_legal(&self, mv: &P::Move) -> bool {
        P::cells(mv).all(|(r, c)| self.is_free(r, c))
    }

    /// The board with the cells the move takes blocked.
    fn play_unchecked(&self, mv: &P::Move) -> Self {
        debug_assert!(self.is_legal(mv), "{mv:?} is not legal in {self:?}");
        let mut next = self.clone();
        for (r, c) in P::taken(mv) {
            if self.is_free(r, c) {
                next.free[r - 1] &= !(1 << (c - 1));
            }
        }
        next
    }

    /// Stops at the first move found, evaluating only the component it is in.
    fn first_move_to(&self, target: Nimber, context: &mut SearchContext) -> Result<Option<P::Move>, Interrupted> {
        let mut engine = Engine::new(context);
        let (parts, total) = self.component_values(&mut engine)?;
        self.move_to(target, &parts, total, &mut engine)
    }

    /// Computes the components' values once, for the value and the winning move both.
    fn best_move(&self, context: &mut SearchContext) -> Result<(Nimber, Option<P::Move>), Interrupted> {
        let mut engine = Engine::new(context);
        let (parts, total) = self.component_values(&mut engine)?;
        let mv = if total == 0 { self.moves().get(0) } else { self.move_to(0, &parts, total, &mut engine)? };
        Ok((total, mv))
    }
}
