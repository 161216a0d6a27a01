//! Components up to 8×8 placements (a 9×9 board) as one `u64`, bit `8·r + c`: the most searched
//! sets, so their symmetries use single-word tricks instead of the row-by-row defaults.

use super::bits::{PointSet, Symmetry};

/// A set of placements in an 8×8 window, bit `8·r + c` for the placement at 0-based `(r, c)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Window(pub u64);

/// Reverse the columns of every row.
fn mirror(x: u64) -> u64 {
    x.reverse_bits().swap_bytes()
}

/// The transpose (placement `(r, c)` goes to `(c, r)`), by three delta swaps.
pub fn transpose(mut x: u64) -> u64 {
    let t = 0x0f0f_0f0f_0000_0000 & (x ^ x << 28);
    x ^= t ^ t >> 28;
    let t = 0x3333_0000_3333_0000 & (x ^ x << 14);
    x ^= t ^ t >> 14;
    let t = 0x5500_5500_5500_5500 & (x ^ x << 7);
    x ^= t ^ t >> 7;
    x
}

impl PointSet for Window {
    type Word = u64;
    const STRIDE: u32 = 8;
    const FIRST_COLUMN: u64 = 0x0101_0101_0101_0101;
    const LAST_COLUMN: u64 = 0x8080_8080_8080_8080;

    fn from_word(word: u64) -> Self {
        Window(word)
    }

    fn word(self) -> u64 {
        self.0
    }

    fn image(self, height: usize, width: usize, symmetry: Symmetry) -> Window {
        let (mut x, mut height, mut width) = (self.0, height, width);
        if symmetry.transposes {
            x = transpose(x);
            std::mem::swap(&mut height, &mut width);
        }
        if symmetry.reverses_rows {
            x = x.swap_bytes() >> (8 * (8 - height));
        }
        if symmetry.reverses_columns {
            x = mirror(x) >> (8 - width);
        }
        Window(x)
    }

    fn canonical(self, height: usize, width: usize) -> Window {
        let (down_h, down_w) = (8 * (8 - height), 8 * (8 - width));
        let x = self.0;
        let mirrored = mirror(x) >> (8 - width);
        let t = transpose(x);
        let mirrored_t = mirror(t) >> (8 - height);
        let images = [
            x,
            x.swap_bytes() >> down_h,
            mirrored,
            mirrored.swap_bytes() >> down_h,
            t,
            t.swap_bytes() >> down_w,
            mirrored_t,
            mirrored_t.swap_bytes() >> down_w,
        ];
        Window(images.into_iter().min().unwrap_or(x))
    }
}
