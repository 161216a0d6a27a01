//! Sets of placements at most 8 rows high (and at most 15 wide), as one `u128` with stride 16
//! (bit `16·r + c`): the form components longer than 8 but at most 8 across are searched in.
//!
//! Column 15 is never a placement, so shifting by one column cannot carry a placement into the
//! next row unnoticed (results are always intersected with a set of placements).

/// A set of placements in 8 rows of 16, bit `16·r + c` for the placement at 0-based `(r, c)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Strip(pub u128);

/// The low byte of every row.
const LOW_BYTES: u128 = 0x00FF_00FF_00FF_00FF_00FF_00FF_00FF_00FF;

/// The placements overlapping each placement of the strip (itself included).
const OVERLAPPING: [u128; 128] = overlapping_table();

const fn overlapping_table() -> [u128; 128] {
    let mut table = [0u128; 128];
    let mut p = 0;
    while p < 128 {
        table[p] = dilate(1 << p);
        p += 1;
    }
    table
}

/// The set with every king-move neighbour of its placements added (possibly in column 15).
const fn dilate(x: u128) -> u128 {
    let across = x | x << 1 | x >> 1;
    across | across << 16 | across >> 16
}

/// The OR of the 8 rows.
fn columns(x: u128) -> u16 {
    let x = x | x >> 64;
    let x = x | x >> 32;
    (x | x >> 16) as u16
}

/// Reverse the order of the 8 rows.
fn reverse_rows(x: u128) -> u128 {
    let x = x.swap_bytes();
    (x >> 8 & LOW_BYTES) | (x & LOW_BYTES) << 8
}

impl Strip {
    /// The strip holding `rows[0..height]` (each below `1 << 15`, `height ≤ 8`).
    pub fn from_rows(rows: &[u16]) -> Strip {
        Strip(rows.iter().take(8).enumerate().fold(0, |x, (r, &row)| x | u128::from(row) << (16 * r)))
    }

    /// How many placements the set holds.
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// Row `r` (bit `c` = column `c`).
    pub fn row(self, r: usize) -> u16 {
        (self.0 >> (16 * r)) as u16
    }

    /// The options: for each placement in row-major order, its bit index and the set without it
    /// and its neighbours.
    pub fn options(self) -> impl Iterator<Item = (usize, Strip)> {
        let mut rest = self.0;
        std::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let p = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            Some((p, Strip(self.0 & !OVERLAPPING[p])))
        })
    }

    /// The connected components (king adjacency), in the order of their first placements.
    pub fn components(self) -> impl Iterator<Item = Strip> {
        let mut rest = self.0;
        std::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let mut part = rest & rest.wrapping_neg();
            loop {
                let grown = dilate(part) & rest;
                if grown == part {
                    break;
                }
                part = grown;
            }
            rest &= !part;
            Some(Strip(part))
        })
    }

    /// The set translated so that its first row and column are 0, with its height and width
    /// (the set must not be empty).
    pub fn at_origin(self) -> (Strip, usize, usize) {
        let top = self.0.trailing_zeros() / 16;
        let left = columns(self.0).trailing_zeros();
        let x = self.0 >> (16 * top + left);
        let height = (143 - x.leading_zeros() as usize) / 16;
        let width = 16 - columns(x).leading_zeros() as usize;
        (Strip(x), height, width)
    }

    /// The image of a set lying in the `height`×`width` box at the origin under a symmetry of
    /// that box that keeps rows as rows: `symmetry` bit 0 reverses the rows, bit 1 the columns.
    pub fn image(self, height: usize, width: usize, symmetry: u8) -> Strip {
        let mut x = self.0;
        if symmetry & 1 != 0 {
            x = reverse_rows(x) >> (16 * (8 - height));
        }
        if symmetry & 2 != 0 {
            x = reverse_rows(x.reverse_bits()) >> (16 - width);
        }
        Strip(x)
    }

    /// The canonical form of a set at the origin, wider than high and wider than 8: the least
    /// (as a `u128`) of its 4 images that keep rows as rows (the other 4 are higher than 8).
    pub fn canonical(self, height: usize, width: usize) -> Strip {
        let x = self.0;
        let turned = x.reverse_bits() >> (16 * (8 - height) + (16 - width));
        let images = [x, reverse_rows(x) >> (16 * (8 - height)), turned, reverse_rows(turned) >> (16 * (8 - height))];
        Strip(images.into_iter().min().unwrap_or(x))
    }

    /// The options of a set in canonical form, one per class of options its symmetries map onto
    /// each other (the least as a `u128`), in row-major order of the
    /// placement played (its bit index comes with each).
    pub fn distinct_options(self) -> impl Iterator<Item = (usize, Strip)> {
        let (_, height, width) = self.at_origin();
        let mut symmetries = [0u8; 3];
        let mut count = 0;
        for symmetry in 1..4 {
            if self.image(height, width, symmetry) == self {
                symmetries[count] = symmetry;
                count += 1;
            }
        }
        self.options().filter(move |(_, option)| {
            symmetries[..count].iter().all(|&s| option.image(height, width, s).0 >= option.0)
        })
    }
}
