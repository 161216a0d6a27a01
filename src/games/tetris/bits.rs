//! Sets of placements as 256-bit boards, and their canonical form under the 8 symmetries of the square.
//!
//! A placement is the 0-based top-left cell `(r, c)` of a 2×2 square; on a board of at most 16×16
//! cells `r, c < 15`. The set is stored row by row with stride 16: bit `16·r + c` of the 256-bit
//! number (four little-endian `u64` words). Column 15 is never a placement, so a shift by one
//! column cannot carry a placement into the next row unnoticed (results are always intersected
//! with a set of placements).

use std::hash::{Hash, Hasher};

/// Rows (and columns) of the placement grid a [`Placements`] can hold.
pub const GRID: usize = 15;

/// A set of placements (top-left cells of 2×2 squares), stride 16.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Placements(pub [u64; 4]);

impl Hash for Placements {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for word in self.0 {
            state.write_u64(word);
        }
    }
}

impl Placements {
    /// The set holding the placement with bit index `index` (`16·row + column`).
    pub fn single_index(index: usize) -> Placements {
        let mut words = [0; 4];
        words[index / 64] = 1 << (index % 64);
        Placements(words)
    }

    /// The set whose row `r` is `rows[r]` (bit `c` = column `c`).
    pub fn from_rows(rows: &[u16; 16]) -> Placements {
        let mut words = [0u64; 4];
        for (r, &row) in rows.iter().enumerate() {
            words[r / 4] |= u64::from(row) << (16 * (r % 4));
        }
        Placements(words)
    }

    /// Row `r` of the set (bit `c` = column `c`).
    pub fn row(self, r: usize) -> u16 {
        (self.0[r / 4] >> (16 * (r % 4))) as u16
    }

    /// All 16 rows.
    pub fn rows(self) -> [u16; 16] {
        let mut rows = [0u16; 16];
        for (r, row) in rows.iter_mut().enumerate() {
            *row = self.row(r);
        }
        rows
    }

    /// How many placements the set holds.
    pub fn len(self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// The bit index of the first placement in row-major order, if any.
    pub fn first(self) -> Option<usize> {
        self.0.iter().position(|&w| w != 0).map(|i| i * 64 + self.0[i].trailing_zeros() as usize)
    }

    /// Whether placement `index` is in the set.
    pub fn contains(self, index: usize) -> bool {
        self.0[index / 64] >> (index % 64) & 1 == 1
    }

    /// The intersection.
    pub fn and(self, other: Placements) -> Placements {
        let (a, b) = (self.0, other.0);
        Placements([a[0] & b[0], a[1] & b[1], a[2] & b[2], a[3] & b[3]])
    }

    /// The union.
    pub fn or(self, other: Placements) -> Placements {
        let (a, b) = (self.0, other.0);
        Placements([a[0] | b[0], a[1] | b[1], a[2] | b[2], a[3] | b[3]])
    }

    /// The placements of `self` not in `other`.
    pub fn without(self, other: Placements) -> Placements {
        let (a, b) = (self.0, other.0);
        Placements([a[0] & !b[0], a[1] & !b[1], a[2] & !b[2], a[3] & !b[3]])
    }

    /// Shift towards higher bit indices by `k` (`0 < k < 64`).
    fn up(self, k: u32) -> Placements {
        let a = self.0;
        Placements([
            a[0] << k,
            a[1] << k | a[0] >> (64 - k),
            a[2] << k | a[1] >> (64 - k),
            a[3] << k | a[2] >> (64 - k),
        ])
    }

    /// Shift towards lower bit indices by `k` (`0 < k < 64`).
    fn down(self, k: u32) -> Placements {
        let a = self.0;
        Placements([
            a[0] >> k | a[1] << (64 - k),
            a[1] >> k | a[2] << (64 - k),
            a[2] >> k | a[3] << (64 - k),
            a[3] >> k,
        ])
    }

    /// Shift towards lower bit indices by any `k < 256`.
    fn down_by(self, k: usize) -> Placements {
        let (words, bits) = (k / 64, (k % 64) as u32);
        let mut moved = [0u64; 4];
        moved[..4 - words].copy_from_slice(&self.0[words..]);
        let moved = Placements(moved);
        if bits == 0 {
            moved
        } else {
            moved.down(bits)
        }
    }

    /// The set together with every king-move neighbour of its placements (the placements a 2×2
    /// square overlaps), possibly including bits in column 15 or past the grid.
    pub fn dilate(self) -> Placements {
        let across = self.or(self.up(1)).or(self.down(1));
        across.or(across.up(16)).or(across.down(16))
    }

    /// The placements overlapping placement `index` (itself included), within `GRID`.
    pub fn overlapping(index: usize) -> Placements {
        Placements::single_index(index).dilate()
    }

    /// The connected component (king adjacency) of `self` containing placement `index`.
    pub fn component_of(self, index: usize) -> Placements {
        let mut part = Placements::single_index(index);
        loop {
            let grown = part.dilate().and(self);
            if grown == part {
                return part;
            }
            part = grown;
        }
    }

    /// Iterate over the bit indices of the placements, in row-major order.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        let mut words = self.0;
        let mut i = 0;
        std::iter::from_fn(move || {
            while i < 4 {
                if words[i] != 0 {
                    let bit = words[i].trailing_zeros() as usize;
                    words[i] &= words[i] - 1;
                    return Some(i * 64 + bit);
                }
                i += 1;
            }
            None
        })
    }

    /// The connected components (king adjacency), in the order of their first placements.
    pub fn components(self) -> impl Iterator<Item = Placements> {
        let mut rest = self;
        std::iter::from_fn(move || {
            let first = rest.first()?;
            let part = rest.component_of(first);
            rest = rest.without(part);
            Some(part)
        })
    }

    /// The set translated so that its first row and first column are 0, with its height and width.
    pub fn at_origin(self) -> (Placements, usize, usize) {
        let rows = self.rows();
        let top = rows.iter().position(|&r| r != 0).unwrap_or(0);
        let bottom = rows.iter().rposition(|&r| r != 0).unwrap_or(0);
        let columns = rows.iter().fold(0u16, |a, &r| a | r);
        let left = columns.trailing_zeros() as usize;
        let width = 16usize.saturating_sub(columns.leading_zeros() as usize + left);
        let height = if columns == 0 { 0 } else { bottom - top + 1 };
        (self.down_by(16 * top + left), height, width)
    }
}

/// A component in canonical form: translated to the origin and, of its 8 images under the
/// symmetries of the square, the one whose rows (as `u16`, row 0 first) are lexicographically least.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Canonical {
    /// The canonical rows, row 0 first (bit `c` = column `c`).
    pub rows: [u16; 16],
    /// The number of rows of the bounding box.
    pub height: usize,
    /// The number of columns of the bounding box.
    pub width: usize,
}

impl Canonical {
    /// The canonical form of a non-empty set of placements.
    #[cfg(test)]
    pub fn of(set: Placements) -> Canonical {
        let (origin, height, width) = set.at_origin();
        Canonical::of_origin(origin, height, width)
    }

    /// The canonical form of a non-empty set already at the origin, of the given size.
    pub fn of_origin(origin: Placements, height: usize, width: usize) -> Canonical {
        let rows = origin.rows();
        let transposed = transpose(rows);
        let mut best = Canonical { rows, height, width };
        for symmetry in 1..8 {
            let (candidate, h, w) = image_of_rows(rows, transposed, height, width, symmetry);
            if candidate < best.rows {
                best = Canonical { rows: candidate, height: h, width: w };
            }
        }
        best
    }

    /// The canonical set of placements.
    pub fn placements(&self) -> Placements {
        Placements::from_rows(&self.rows)
    }
}

/// The image of the rows of a set lying in the `height`×`width` box at the origin (given with
/// their transpose) under one of the 8 symmetries of that box: `symmetry` bit 2 transposes
/// first, then bit 0 reverses the rows and bit 1 the columns. Returns the rows and the new size.
fn image_of_rows(
    rows: [u16; 16],
    transposed: [u16; 16],
    height: usize,
    width: usize,
    symmetry: u8,
) -> ([u16; 16], usize, usize) {
    let (image, h, w) = if symmetry & 4 != 0 { (transposed, width, height) } else { (rows, height, width) };
    let mut out = [0u16; 16];
    for (r, row) in out.iter_mut().take(h).enumerate() {
        let source = image[if symmetry & 1 != 0 { h - 1 - r } else { r }];
        *row = if symmetry & 2 != 0 { source.reverse_bits() >> (16 - w) } else { source };
    }
    (out, h, w)
}

impl Placements {
    /// The options of a set in canonical form, one per class of options its symmetries map
    /// onto each other (the least by rows), in row-major order of the
    /// placement played (its bit index comes with each).
    pub fn distinct_options(self) -> impl Iterator<Item = (usize, Placements)> {
        let (_, height, width) = self.at_origin();
        let rows = self.rows();
        let transposed = transpose(rows);
        let mut symmetries = [0u8; 7];
        let mut count = 0;
        for symmetry in 1..8 {
            if image_of_rows(rows, transposed, height, width, symmetry).0 == rows {
                symmetries[count] = symmetry;
                count += 1;
            }
        }
        self.iter().map(move |p| (p, self.without(Placements::overlapping(p)))).filter(move |(_, option)| {
            if count == 0 {
                return true;
            }
            let rows = option.rows();
            let transposed = transpose(rows);
            symmetries[..count].iter().all(|&s| image_of_rows(rows, transposed, height, width, s).0 >= rows)
        })
    }
}

/// The persistent memo key of a component in canonical form with the given rows (bit `c` =
/// column `c`): height, width, then the `height·width` bits of the rows packed row-major, least
/// significant bit first, padded with zeros to whole bytes.
pub fn memo_key(row: impl Fn(usize) -> u16, height: usize, width: usize) -> Vec<u8> {
    let mut key = Vec::with_capacity(2 + (height * width).div_ceil(8));
    key.push(height as u8);
    key.push(width as u8);
    let (mut pending, mut bits) = (0u64, 0);
    for r in 0..height {
        pending |= u64::from(row(r)) << bits;
        bits += width;
        while bits >= 8 {
            key.push(pending as u8);
            pending >>= 8;
            bits -= 8;
        }
    }
    if bits > 0 {
        key.push(pending as u8);
    }
    key
}

/// The transpose of a 16×16 bit matrix (`rows[r]` bit `c` becomes `result[c]` bit `r`), by
/// swapping blocks of 8, 4, 2 and 1.
pub fn transpose(mut rows: [u16; 16]) -> [u16; 16] {
    let mut j = 8;
    let mut mask: u16 = 0x00FF;
    while j != 0 {
        let mut k = 0;
        while k < 16 {
            let t = ((rows[k] >> j) ^ rows[k + j]) & mask;
            rows[k + j] ^= t;
            rows[k] ^= t << j;
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        mask ^= mask << j;
    }
    rows
}

/// A fast non-cryptographic hasher for the in-memory tables (FxHash with a final mix).
#[derive(Clone, Copy, Debug, Default)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_u128(&mut self, word: u128) {
        self.write_u64(word as u64);
        self.write_u64((word >> 64) as u64);
    }

    fn finish(&self) -> u64 {
        let h = (self.0 ^ (self.0 >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^ (h >> 32)
    }
}
