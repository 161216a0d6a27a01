//! Values found without a search: single placements, straight lines (the octal game 0.137) and
//! every set, connected or not, inside 4×6 or 6×4 placements (the engine's built-in table).

use crate::games::node_kayles::PATH;
use crate::games::placement::{PointSet, SQUARE_SETS};

/// The value of a connected set of `size` placements at the origin, `height`×`width`,
/// if it is a single placement, a straight line or inside 4×6 or 6×4.
pub fn direct_value<S: PointSet>(origin: S, size: u32, height: usize, width: usize) -> Option<u8> {
    if size <= 1 {
        Some(size as u8)
    } else if height == 1 || width == 1 {
        Some(PATH[size as usize])
    } else {
        SQUARE_SETS.of_origin(origin, height, width)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::placement::Window;

    /// Every set of the 4×6 box has the least value none of its options has (an option removes
    /// a placement and those at most one row and one column from it): the table is the game's.
    #[test]
    fn every_small_set_has_the_least_value_its_options_lack() {
        let (rows, columns) = (4, 6);
        let overlapping: Vec<usize> = (0..rows * columns)
            .map(|p| {
                let (row, column) = (p / columns, p % columns);
                let block = Window::overlapping((8 * row + column) as u32);
                let row = |r: usize| block.row(r) as usize & ((1 << columns) - 1);
                (0..rows).fold(0, |mask, r| mask | row(r) << (columns * r))
            })
            .collect();
        for set in 0..1usize << (rows * columns) {
            let options = (0..overlapping.len()).filter(|p| set >> p & 1 == 1);
            let seen = options.fold(0u64, |seen, p| seen | 1 << SQUARE_SETS.value(set & !overlapping[p]));
            assert_eq!(u64::from(SQUARE_SETS.value(set)), u64::from((!seen).trailing_zeros()), "set {set:#x}");
        }
    }

    #[test]
    fn path_values_are_those_of_the_octal_game_0_137() {
        assert_eq!(PATH[..18], [0, 1, 1, 2, 0, 3, 1, 1, 0, 3, 3, 2, 2, 4, 0, 5, 2, 2]);
    }
}
