//! Values found without a search: single placements, straight lines (the octal game 0.137) and
//! every set, connected or not, inside 4×6 or 6×4 placements (a table built into the binary).

use super::bits::PlacementSet;
use super::window::{transpose, Window};
use crate::games::node_kayles::PATH;

/// Rows of the box whose every set has its value in [`SMALL_SETS`].
const TABLE_ROWS: usize = 4;
/// Columns of the box whose every set has its value in [`SMALL_SETS`].
const TABLE_COLUMNS: usize = 6;

/// The values of the 2^24 sets of placements inside the 4×6 box, computed by `build.rs`: set `i`
/// (placement `(r, c)` is bit `6·r + c`) in the low half of byte `i / 2` when `i` is even, the high
/// half when odd. Built into the binary (8 MB), so nothing is computed at run time.
static SMALL_SETS: &[u8; 1 << 23] = include_bytes!(concat!(env!("OUT_DIR"), "/small_sets.bin"));

/// Reads the built-in table of small sets into memory (every page of it), so that the first
/// solves of the process do not pay for it; it takes about a millisecond.
pub fn load_small_sets() {
    let pages = SMALL_SETS.iter().step_by(4096).fold(0u8, |sum, &byte| sum ^ byte);
    std::hint::black_box(pages);
}

/// The value of set `index` of the 4×6 box.
fn small_set_value(index: usize) -> u8 {
    SMALL_SETS[index / 2] >> (4 * (index % 2)) & 0xF
}

/// The value of a set at the origin of a window if it lies inside 4×6 or 6×4 (connected or not).
fn table_value(origin: Window, height: usize, width: usize) -> Option<u8> {
    let index =
        |window: Window, height: usize| (0..height).fold(0, |i, r| i | (window.row(r) as usize) << (TABLE_COLUMNS * r));
    if height <= TABLE_ROWS && width <= TABLE_COLUMNS {
        Some(small_set_value(index(origin, height)))
    } else if width <= TABLE_ROWS && height <= TABLE_COLUMNS {
        Some(small_set_value(index(Window(transpose(origin.0)), width)))
    } else {
        None
    }
}

/// The value of a set of placements, connected or not, if it lies inside 4×6 or 6×4; the empty
/// set's is 0.
pub fn tabled_value<S: PlacementSet>(set: S) -> Option<u8> {
    if set.is_empty() {
        return Some(0);
    }
    let (origin, height, width) = set.at_origin();
    if height.max(width) > TABLE_COLUMNS || height.min(width) > TABLE_ROWS {
        return None;
    }
    table_value(origin.convert::<Window>(height, width, super::bits::Symmetry::IDENTITY), height, width)
}

/// The value of a connected set of `size` placements at the origin of a window, `height`×`width`,
/// if it is a single placement, a straight line or inside 4×6 or 6×4.
pub fn direct_value(origin: Window, size: u32, height: usize, width: usize) -> Option<u8> {
    if size <= 1 {
        Some(size as u8)
    } else if height == 1 || width == 1 {
        Some(PATH[size as usize])
    } else {
        table_value(origin, height, width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every set of the 4×6 box has the least value none of its options has (an option removes
    /// a placement and those at most one row and one column from it): the table is the game's.
    #[test]
    fn every_small_set_has_the_least_value_its_options_lack() {
        let overlapping: Vec<usize> = (0..TABLE_ROWS * TABLE_COLUMNS)
            .map(|p| {
                let (row, column) = (p / TABLE_COLUMNS, p % TABLE_COLUMNS);
                let block = Window::overlapping((8 * row + column) as u32);
                let row = |r: usize| block.row(r) as usize & ((1 << TABLE_COLUMNS) - 1);
                (0..TABLE_ROWS).fold(0, |mask, r| mask | row(r) << (TABLE_COLUMNS * r))
            })
            .collect();
        for set in 0..1usize << (TABLE_ROWS * TABLE_COLUMNS) {
            let options = (0..overlapping.len()).filter(|p| set >> p & 1 == 1);
            let seen = options.fold(0u64, |seen, p| seen | 1 << small_set_value(set & !overlapping[p]));
            assert_eq!(u64::from(small_set_value(set)), u64::from((!seen).trailing_zeros()), "set {set:#x}");
        }
    }

    #[test]
    fn path_values_are_those_of_the_octal_game_0_137() {
        assert_eq!(PATH[..18], [0, 1, 1, 2, 0, 3, 1, 1, 0, 3, 3, 2, 2, 4, 0, 5, 2, 2]);
    }
}
