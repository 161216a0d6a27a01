//! Components at most 8 placements across and 9 to 16 long, turned to lie along the rows, as one
//! `u128` with stride 16 (bit `16·r + c`), with single-word symmetries. Their transposed images
//! are 9 or more rows high: a band is canonical under the 4 symmetries that keep rows as rows
//! (its transposes never [fit](PointSet::fits)).

use super::bits::{PointSet, Symmetry};

/// A set of placements in 8 rows of 16, bit `16·r + c` for the placement at 0-based `(r, c)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Band(pub u128);

/// The low byte of every row.
const LOW_BYTES: u128 = 0x00FF_00FF_00FF_00FF_00FF_00FF_00FF_00FF;

/// Reverse the order of the 8 rows.
fn reverse_rows(x: u128) -> u128 {
    let x = x.swap_bytes();
    (x >> 8 & LOW_BYTES) | (x & LOW_BYTES) << 8
}

impl PointSet for Band {
    type Word = u128;
    const STRIDE: u32 = 16;
    const FIRST_COLUMN: u128 = 0x0001_0001_0001_0001_0001_0001_0001_0001;
    const LAST_COLUMN: u128 = 0x8000_8000_8000_8000_8000_8000_8000_8000;

    fn from_word(word: u128) -> Self {
        Band(word)
    }

    fn word(self) -> u128 {
        self.0
    }

    fn fits(height: usize, width: usize, symmetry: Symmetry) -> bool {
        !symmetry.transposes && height <= 8 && width <= 16
    }

    fn image(self, height: usize, width: usize, symmetry: Symmetry) -> Band {
        let mut x = self.0;
        if symmetry.reverses_rows {
            x = reverse_rows(x) >> (16 * (8 - height));
        }
        if symmetry.reverses_columns {
            x = reverse_rows(x.reverse_bits()) >> (16 - width);
        }
        Band(x)
    }

    fn canonical(self, height: usize, width: usize) -> Band {
        let x = self.0;
        let turned = x.reverse_bits() >> (16 * (8 - height) + (16 - width));
        let images = [x, reverse_rows(x) >> (16 * (8 - height)), turned, reverse_rows(turned) >> (16 * (8 - height))];
        Band(images.into_iter().min().unwrap_or(x))
    }
}
