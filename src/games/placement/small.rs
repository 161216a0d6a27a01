//! Tables of the values of every set of points inside a 4×6 box, one per piece that has one,
//! computed by `build.rs` and built into the binary (8 MB each), so nothing is computed at run
//! time: every set a search meets that fits 4×6 or 6×4 is valued with one read.

use super::bits::{PointSet, Symmetry, Word};
use super::window::{transpose, Window};

/// Rows of the box whose every set a table values.
const TABLE_ROWS: usize = 4;
/// Columns of the box whose every set a table values.
const TABLE_COLUMNS: usize = 6;

/// The values of the 2^24 sets of points inside the 4×6 box under one piece's moves: set `i`
/// (point `(r, c)` is bit `6·r + c`) in the low half of byte `i / 2` when `i` is even, the high
/// half when odd.
pub struct SmallSets(&'static [u8; 1 << 23]);

/// The 2×2 game's table (a move removes a placement and those at most one row and one column
/// from it).
pub static SQUARE_SETS: SmallSets = SmallSets(include_bytes!(concat!(env!("OUT_DIR"), "/square_small_sets.bin")));

/// Cram's table (a move removes two neighbouring cells).
pub static DOMINO_SETS: SmallSets = SmallSets(include_bytes!(concat!(env!("OUT_DIR"), "/domino_small_sets.bin")));

/// Reads the built-in tables into memory (every page of them), so that the first solves of the
/// process do not pay for it; it takes a few milliseconds.
pub fn load_small_sets() {
    for table in [&SQUARE_SETS, &DOMINO_SETS] {
        let pages = table.0.iter().step_by(4096).fold(0u8, |sum, &byte| sum ^ byte);
        std::hint::black_box(pages);
    }
}

impl SmallSets {
    /// The value of set `index` of the 4×6 box.
    pub fn value(&self, index: usize) -> u8 {
        self.0[index / 2] >> (4 * (index % 2)) & 0xF
    }

    /// The value of a set at the origin, `height`×`width`, if it lies inside 4×6 or 6×4
    /// (connected or not), read from its rows (turned to lie along them first if it must be).
    pub fn of_origin<S: PointSet>(&self, origin: S, height: usize, width: usize) -> Option<u8> {
        fn index<S: PointSet>(set: S, height: usize) -> usize {
            (0..height).fold(0, |i, r| i | (set.row(r) as usize) << (TABLE_COLUMNS * r))
        }
        if height <= TABLE_ROWS && width <= TABLE_COLUMNS {
            Some(self.value(index(origin, height)))
        } else if width <= TABLE_ROWS && height <= TABLE_COLUMNS {
            let window = if S::STRIDE == Window::STRIDE {
                Window(origin.word().low_u64())
            } else {
                origin.convert::<Window>(height, width, Symmetry::IDENTITY)
            };
            Some(self.value(index(Window(transpose(window.0)), width)))
        } else {
            None
        }
    }

    /// The value of a set of points, connected or not, if it lies inside 4×6 or 6×4; the empty
    /// set's is 0.
    pub fn of_set<S: PointSet>(&self, set: S) -> Option<u8> {
        if set.is_empty() {
            return Some(0);
        }
        let (origin, height, width) = set.at_origin();
        if height.max(width) > TABLE_COLUMNS || height.min(width) > TABLE_ROWS {
            return None;
        }
        self.of_origin(origin, height, width)
    }
}
