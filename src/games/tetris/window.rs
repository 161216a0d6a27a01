//! Sets of placements inside an 8×8 window, as one `u64` (bit `8·r + c`): the form every
//! component fitting in 8×8 placements (a 9×9 board) is searched in, with single-word operations.

const NOT_FIRST_COLUMN: u64 = !0x0101_0101_0101_0101;
const NOT_LAST_COLUMN: u64 = !0x8080_8080_8080_8080;

/// A set of placements in an 8×8 window, bit `8·r + c` for the placement at 0-based `(r, c)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Window(pub u64);

/// The placements overlapping each placement of the window (itself included).
const OVERLAPPING: [u64; 64] = overlapping_table();

const fn overlapping_table() -> [u64; 64] {
    let mut table = [0u64; 64];
    let mut p = 0;
    while p < 64 {
        table[p] = dilate(1 << p);
        p += 1;
    }
    table
}

/// The set with every king-move neighbour of its placements added.
const fn dilate(x: u64) -> u64 {
    let across = x | (x << 1 & NOT_FIRST_COLUMN) | (x >> 1 & NOT_LAST_COLUMN);
    across | across << 8 | across >> 8
}

/// The OR of the 8 rows.
fn columns(x: u64) -> u8 {
    let x = x | x >> 32;
    let x = x | x >> 16;
    (x | x >> 8) as u8
}

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

impl Window {
    /// How many placements the set holds.
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// The options: for each placement in row-major order, its bit index and the set without it
    /// and its neighbours.
    pub fn options(self) -> impl Iterator<Item = (usize, Window)> {
        let mut rest = self.0;
        std::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let p = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            Some((p, Window(self.0 & !OVERLAPPING[p])))
        })
    }

    /// The connected components (king adjacency), in the order of their first placements.
    pub fn components(self) -> impl Iterator<Item = Window> {
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
            Some(Window(part))
        })
    }

    /// The set translated so that its first row and column are 0, with its height and width
    /// (the set must not be empty).
    pub fn at_origin(self) -> (Window, usize, usize) {
        let top = self.0.trailing_zeros() / 8;
        let left = columns(self.0).trailing_zeros();
        let x = self.0 >> (8 * top + left);
        let height = (71 - x.leading_zeros() as usize) / 8;
        let width = 8 - columns(x).leading_zeros() as usize;
        (Window(x), height, width)
    }

    /// Row `r` (bit `c` = column `c`).
    pub fn row(self, r: usize) -> u16 {
        u16::from((self.0 >> (8 * r)) as u8)
    }

    /// The image of a set lying in the `height`×`width` box at the origin under one of the 8
    /// symmetries of that box: `symmetry` bit 2 transposes first, then bit 0 reverses the rows
    /// and bit 1 the columns.
    pub fn image(self, height: usize, width: usize, symmetry: u8) -> Window {
        let (mut x, mut height, mut width) = (self.0, height, width);
        if symmetry & 4 != 0 {
            x = transpose(x);
            std::mem::swap(&mut height, &mut width);
        }
        if symmetry & 1 != 0 {
            x = x.swap_bytes() >> (8 * (8 - height));
        }
        if symmetry & 2 != 0 {
            x = mirror(x) >> (8 - width);
        }
        Window(x)
    }

    /// The options of a set in canonical form, one per class of options its symmetries map onto
    /// each other (the least as a `u64`), in row-major order of the
    /// placement played (its bit index comes with each).
    pub fn distinct_options(self) -> impl Iterator<Item = (usize, Window)> {
        let (_, height, width) = self.at_origin();
        let mut symmetries = [0u8; 7];
        let mut count = 0;
        for symmetry in 1..8 {
            if self.image(height, width, symmetry) == self {
                symmetries[count] = symmetry;
                count += 1;
            }
        }
        self.options().filter(move |(_, option)| {
            symmetries[..count].iter().all(|&s| option.image(height, width, s).0 >= option.0)
        })
    }

    /// The canonical form of a set at the origin of the given size: the least (as a `u64`) of
    /// its 8 images under the symmetries of the square, each translated to the origin.
    pub fn canonical(self, height: usize, width: usize) -> Window {
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
