//! Sets of points as bitboards, written once for every word size ([`PointSet`]).
//!
//! A point is what a placement game's moves are made of: the top-left cell of a 2×2 square's
//! placement in the 2×2 game, a free cell in Cram. A set stores the point at 0-based `(r, c)` as
//! bit `STRIDE·r + c` of its word: row by row, `STRIDE` bits a row. Shifts by one column are
//! masked with the first and last column, so no point wraps into the next row. The sets:
//!
//! | set | word | rows × columns | holds |
//! |---|---|---|---|
//! | [`Window`](super::window::Window) | `u64` | 8 × 8 | components up to 8×8 points (the most searched) |
//! | [`Band`](super::band::Band) | `u128` | 8 × 16 | components at most 8 across and 9 to 16 long |
//! | [`Grid`] | 256 bits | 16 × 16 | components 9 to 16 both ways |
//! | [`LongBand`] | 1024 bits | 16 × 64 | components longer than 16 (boards with a side over 16) |
//! | [`BoardPoints`] | 1024 bits | 16 × 64 | the points of a whole board (turned if higher) |
//!
//! Every component of a board of at most [`MAX_CELLS`](super::MAX_CELLS) cells fits one of the
//! first four once turned so that it is no higher than wide: a component of `h×w` points lies in
//! at least `h×w` cells, so `h ≤ w` gives `h ≤ 16` and `w ≤ 64`.

use std::fmt::Debug;
use std::hash::{Hash, Hasher};
use std::ops::{BitAnd, BitOr, Not, Shl, Shr};

/// A machine word, or an array of them, holding one bit per point.
pub trait Word:
    Copy
    + Eq
    + Ord
    + Hash
    + Default
    + Debug
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + Not<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
{
    /// How many bits it holds.
    const BITS: u32;
    /// The low 64 bits.
    fn low_u64(self) -> u64;
    /// How many bits are set.
    fn count_ones(self) -> u32;
    /// The index of the lowest set bit (`BITS` when none is).
    fn trailing_zeros(self) -> u32;
    /// How many bits above the highest set bit (`BITS` when none is).
    fn leading_zeros(self) -> u32;
    /// The word without its lowest set bit.
    fn without_lowest(self) -> Self;
    /// Only the lowest set bit.
    fn lowest(self) -> Self;
    /// The 64 bits from bit `offset` on (those past the top are 0).
    fn bits_at(self, offset: u32) -> u64;
    /// The word with `bits` ORed in from bit `offset` on (bits past the top are lost).
    fn with_bits_at(self, bits: u64, offset: u32) -> Self;
    /// Whether no bit is set.
    fn is_zero(self) -> bool {
        self == Self::default()
    }
}

/// One [`Word`] implementation for the primitive unsigned integers.
macro_rules! primitive_word {
    ($($t:ty),*) => {$(
        impl Word for $t {
            const BITS: u32 = <$t>::BITS;
            fn low_u64(self) -> u64 {
                self as u64
            }
            fn count_ones(self) -> u32 {
                <$t>::count_ones(self)
            }
            fn trailing_zeros(self) -> u32 {
                <$t>::trailing_zeros(self)
            }
            fn leading_zeros(self) -> u32 {
                <$t>::leading_zeros(self)
            }
            fn without_lowest(self) -> Self {
                self & self.wrapping_sub(1)
            }
            fn lowest(self) -> Self {
                self & self.wrapping_neg()
            }
            fn bits_at(self, offset: u32) -> u64 {
                (self >> offset) as u64
            }
            fn with_bits_at(self, bits: u64, offset: u32) -> Self {
                self | (bits as $t) << offset
            }
        }
    )*};
}

primitive_word!(u64, u128);

/// `N` little-endian 64-bit words as one `64·N`-bit number (ordered as that number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wide<const N: usize>(pub [u64; N]);

impl<const N: usize> Wide<N> {
    /// Every word equal to `word` (a constant pattern).
    pub const fn splat(word: u64) -> Self {
        Wide([word; N])
    }
}

impl<const N: usize> Default for Wide<N> {
    fn default() -> Self {
        Wide([0; N])
    }
}

impl<const N: usize> Hash for Wide<N> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for word in self.0 {
            state.write_u64(word);
        }
    }
}

impl<const N: usize> Ord for Wide<N> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.iter().rev().cmp(other.0.iter().rev())
    }
}

impl<const N: usize> PartialOrd for Wide<N> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<const N: usize> BitAnd for Wide<N> {
    type Output = Self;
    fn bitand(self, other: Self) -> Self {
        Wide(std::array::from_fn(|i| self.0[i] & other.0[i]))
    }
}

impl<const N: usize> BitOr for Wide<N> {
    type Output = Self;
    fn bitor(self, other: Self) -> Self {
        Wide(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }
}

impl<const N: usize> Not for Wide<N> {
    type Output = Self;
    fn not(self) -> Self {
        Wide(self.0.map(|word| !word))
    }
}

impl<const N: usize> Shl<u32> for Wide<N> {
    type Output = Self;
    /// Towards higher bits; bits shifted past the top are lost (any `k`).
    #[inline(always)]
    fn shl(self, k: u32) -> Self {
        let (words, bits) = ((k / 64) as usize, k % 64);
        Wide(std::array::from_fn(|i| {
            if i < words {
                return 0;
            }
            let word = self.0[i - words] << bits;
            if bits > 0 && i > words {
                word | self.0[i - words - 1] >> (64 - bits)
            } else {
                word
            }
        }))
    }
}

impl<const N: usize> Shr<u32> for Wide<N> {
    type Output = Self;
    /// Towards lower bits (any `k`).
    #[inline(always)]
    fn shr(self, k: u32) -> Self {
        let (words, bits) = ((k / 64) as usize, k % 64);
        Wide(std::array::from_fn(|i| {
            if i + words >= N {
                return 0;
            }
            let word = self.0[i + words] >> bits;
            if bits > 0 && i + words + 1 < N {
                word | self.0[i + words + 1] << (64 - bits)
            } else {
                word
            }
        }))
    }
}

impl<const N: usize> Word for Wide<N> {
    const BITS: u32 = 64 * N as u32;
    fn low_u64(self) -> u64 {
        self.0[0]
    }
    fn count_ones(self) -> u32 {
        self.0.iter().map(|word| word.count_ones()).sum()
    }
    fn trailing_zeros(self) -> u32 {
        match self.0.iter().position(|&word| word != 0) {
            Some(i) => 64 * i as u32 + self.0[i].trailing_zeros(),
            None => Self::BITS,
        }
    }
    fn leading_zeros(self) -> u32 {
        match self.0.iter().rposition(|&word| word != 0) {
            Some(i) => 64 * (N - 1 - i) as u32 + self.0[i].leading_zeros(),
            None => Self::BITS,
        }
    }
    fn without_lowest(self) -> Self {
        let mut words = self.0;
        if let Some(word) = words.iter_mut().find(|word| **word != 0) {
            *word &= *word - 1;
        }
        Wide(words)
    }
    fn lowest(self) -> Self {
        let mut words = [0; N];
        if let Some(i) = self.0.iter().position(|&word| word != 0) {
            words[i] = self.0[i] & self.0[i].wrapping_neg();
        }
        Wide(words)
    }
    #[inline]
    fn bits_at(self, offset: u32) -> u64 {
        let (i, bit) = ((offset / 64) as usize, offset % 64);
        let low = self.0.get(i).map_or(0, |word| word >> bit);
        let high = if bit == 0 { 0 } else { self.0.get(i + 1).map_or(0, |word| word << (64 - bit)) };
        low | high
    }
    #[inline]
    fn with_bits_at(mut self, bits: u64, offset: u32) -> Self {
        let (i, bit) = ((offset / 64) as usize, offset % 64);
        if let Some(word) = self.0.get_mut(i) {
            *word |= bits << bit;
        }
        if bit != 0 {
            if let Some(word) = self.0.get_mut(i + 1) {
                *word |= bits >> (64 - bit);
            }
        }
        self
    }
}

/// One of the 8 symmetries of a rectangle of points at the origin: transpose first (if it
/// does), then reverse the order of the rows, then of the columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symmetry {
    /// Rows become columns.
    pub transposes: bool,
    /// The last row becomes the first.
    pub reverses_rows: bool,
    /// The last column becomes the first.
    pub reverses_columns: bool,
}

/// The symmetries of a set other than the identity (see [`PointSet::symmetries`]).
#[derive(Clone, Copy, Debug)]
pub struct Symmetries {
    list: [Symmetry; 7],
    count: usize,
}

impl Symmetries {
    /// Whether an option of the set is the one kept of its class: no symmetry of the set maps it
    /// onto a smaller set.
    #[inline]
    pub fn keep<S: PointSet>(&self, option: S, height: usize, width: usize) -> bool {
        self.list[..self.count].iter().all(|&symmetry| option.image(height, width, symmetry) >= option)
    }
}

impl Symmetry {
    /// Leaves every set as it is.
    pub const IDENTITY: Symmetry = Symmetry { transposes: false, reverses_rows: false, reverses_columns: false };
    /// Rows become columns.
    pub const TRANSPOSE: Symmetry = Symmetry { transposes: true, ..Symmetry::IDENTITY };

    /// All 8, the identity first.
    pub const ALL: [Symmetry; 8] = {
        let mut all = [Symmetry::IDENTITY; 8];
        let mut i = 0;
        while i < 8 {
            all[i] = Symmetry { transposes: i & 4 != 0, reverses_rows: i & 1 != 0, reverses_columns: i & 2 != 0 };
            i += 1;
        }
        all
    };

    /// The symmetries of a `height`×`width` rectangle: all 8 for a square, the 4 that keep rows
    /// as rows otherwise.
    pub fn of_rectangle(height: usize, width: usize) -> impl Iterator<Item = Symmetry> {
        Symmetry::ALL.into_iter().filter(move |symmetry| height == width || !symmetry.transposes)
    }
}

/// The most rows any set has (a board's 64 rows of cells).
const MOST_ROWS: usize = 64;

/// A set of points in some word: everything about it written once, over [`Word`]. An
/// implementation names its word, its row stride and the bits of its first column; it may
/// replace [`PointSet::image`] and [`PointSet::canonical`] with faster word tricks.
pub trait PointSet: Copy + Eq + Ord + Hash + Default + Debug {
    /// The bits.
    type Word: Word;
    /// Bits per row (at most 64): bit `STRIDE·r + c` is the point at `(r, c)`.
    const STRIDE: u32;
    /// Rows it holds.
    const ROWS: u32 = <Self::Word as Word>::BITS / Self::STRIDE;
    /// Bit 0 of every row.
    const FIRST_COLUMN: Self::Word;
    /// Bit `STRIDE - 1` of every row.
    const LAST_COLUMN: Self::Word;

    /// The set of these bits.
    fn from_word(word: Self::Word) -> Self;
    /// Its bits.
    fn word(self) -> Self::Word;

    /// How many points the set holds.
    fn len(self) -> u32 {
        self.word().count_ones()
    }

    /// Whether the set is empty.
    fn is_empty(self) -> bool {
        self.word().is_zero()
    }

    /// Whether point `index` is in the set.
    fn contains(self, index: u32) -> bool {
        self.word().bits_at(index) & 1 == 1
    }

    /// The points of `self` not in `other`.
    fn without(self, other: Self) -> Self {
        Self::from_word(self.word() & !other.word())
    }

    /// The bits of one row (`STRIDE` of them).
    fn row_mask() -> u64 {
        u64::MAX >> (64 - Self::STRIDE)
    }

    /// Row `r` (bit `c` = column `c`).
    fn row(self, r: usize) -> u64 {
        self.word().bits_at(Self::STRIDE * r as u32) & Self::row_mask()
    }

    /// The set whose row `r` is the `r`-th item (each below `1 << STRIDE`, at most `ROWS` items).
    fn from_rows(rows: impl IntoIterator<Item = u64>) -> Self {
        let word = rows
            .into_iter()
            .take(Self::ROWS as usize)
            .enumerate()
            .fold(Self::Word::default(), |word, (r, row)| word.with_bits_at(row, Self::STRIDE * r as u32));
        Self::from_word(word)
    }

    /// The set together with every king-move neighbour of its points (the placements a 2×2
    /// square overlaps), within the word.
    #[inline]
    fn with_king_neighbours(self) -> Self {
        let x = self.word();
        let across = x | (x << 1 & !Self::FIRST_COLUMN) | (x >> 1 & !Self::LAST_COLUMN);
        Self::from_word(across | across << Self::STRIDE | across >> Self::STRIDE)
    }

    /// The points one step up, down, left or right of a point of the set, within the word (the
    /// set's own points only where they are such a neighbour).
    #[inline]
    fn orthogonal_neighbours(self) -> Self {
        let x = self.word();
        let across = (x << 1 & !Self::FIRST_COLUMN) | (x >> 1 & !Self::LAST_COLUMN);
        Self::from_word(across | x << Self::STRIDE | x >> Self::STRIDE)
    }

    /// The set together with the points one step up, down, left or right of its points.
    #[inline]
    fn with_orthogonal_neighbours(self) -> Self {
        Self::from_word(self.word() | self.orthogonal_neighbours().word())
    }

    /// The placements overlapping placement `index` (itself included): the 3×3 block around it,
    /// within the rows and columns of the set (its word holds exactly `ROWS` rows).
    #[inline]
    fn overlapping(index: u32) -> Self {
        Self::single(index).with_king_neighbours()
    }

    /// The set of the one point `index`.
    #[inline]
    fn single(index: u32) -> Self {
        Self::from_word(Self::Word::default().with_bits_at(1, index))
    }

    /// The bit indices of the points, in row-major order.
    fn iter(self) -> impl Iterator<Item = u32> {
        let mut rest = self.word();
        std::iter::from_fn(move || {
            if rest.is_zero() {
                return None;
            }
            let p = rest.trailing_zeros();
            rest = rest.without_lowest();
            Some(p)
        })
    }

    /// The connected component of `self` containing the points of `seed`, where a point is
    /// joined to the points `with_neighbours` adds to it.
    fn grown_from(self, seed: Self, with_neighbours: impl Fn(Self) -> Self) -> Self {
        let mut part = seed.word();
        loop {
            let grown = with_neighbours(Self::from_word(part)).word() & self.word();
            if grown == part {
                return Self::from_word(part);
            }
            part = grown;
        }
    }

    /// The connected components, where a point is joined to the points `with_neighbours` adds
    /// to it, each grown from the first point left, except that what is left is taken whole
    /// once `is_one_part` says it is connected; in the order of their first points.
    fn split(
        self,
        with_neighbours: impl Fn(Self) -> Self + Copy,
        is_one_part: impl Fn(Self) -> bool,
    ) -> impl Iterator<Item = Self> {
        let mut rest = self;
        std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            let part = if is_one_part(rest) {
                rest
            } else {
                rest.grown_from(Self::from_word(rest.word().lowest()), with_neighbours)
            };
            rest = rest.without(part);
            Some(part)
        })
    }

    /// The OR of all rows.
    fn columns(self) -> u64 {
        let mut x = self.word();
        let mut span = <Self::Word as Word>::BITS / 2;
        while span >= Self::STRIDE {
            x = x | x >> span;
            span /= 2;
        }
        x.low_u64() & Self::row_mask()
    }

    /// The set translated so that its first row and column are 0, with its height and width
    /// (the set must not be empty).
    fn at_origin(self) -> (Self, usize, usize) {
        let top = self.word().trailing_zeros() / Self::STRIDE;
        let columns = self.columns();
        let left = columns.trailing_zeros();
        let origin = self.word() >> (Self::STRIDE * top + left);
        let highest_bit = <Self::Word as Word>::BITS - 1 - origin.leading_zeros();
        let height = (highest_bit / Self::STRIDE + 1) as usize;
        let width = (64 - columns.leading_zeros() - left) as usize;
        (Self::from_word(origin), height, width)
    }

    /// The rows of the image of a set lying in the `height`×`width` box at the origin under
    /// `symmetry`, with the image's height and width.
    fn image_rows(self, height: usize, width: usize, symmetry: Symmetry) -> ([u64; MOST_ROWS], usize, usize) {
        let mut rows = [0u64; MOST_ROWS];
        let (height, width) = if symmetry.transposes {
            for p in self.iter() {
                rows[(p % Self::STRIDE) as usize] |= 1 << (p / Self::STRIDE);
            }
            (width, height)
        } else {
            for (r, row) in rows.iter_mut().enumerate().take(height) {
                *row = self.row(r);
            }
            (height, width)
        };
        if symmetry.reverses_rows {
            rows[..height].reverse();
        }
        if symmetry.reverses_columns {
            for row in &mut rows[..height] {
                *row = row.reverse_bits() >> (64 - width);
            }
        }
        (rows, height, width)
    }

    /// Whether the image of a `height`×`width` set under `symmetry` fits this kind of set.
    fn fits(height: usize, width: usize, symmetry: Symmetry) -> bool {
        let (height, width) = if symmetry.transposes { (width, height) } else { (height, width) };
        height <= Self::ROWS as usize && width <= Self::STRIDE as usize
    }

    /// The image of a set lying in the `height`×`width` box at the origin under `symmetry` (one
    /// that [fits](PointSet::fits)).
    fn image(self, height: usize, width: usize, symmetry: Symmetry) -> Self {
        if symmetry.transposes {
            let (rows, height, _) = self.image_rows(height, width, symmetry);
            return Self::from_rows(rows.into_iter().take(height));
        }
        self.flipped(height, width, symmetry)
    }

    /// The image of a set lying in the `height`×`width` box at the origin under the reversals of
    /// `symmetry` (not its transposition).
    fn flipped(self, height: usize, width: usize, symmetry: Symmetry) -> Self {
        Self::from_rows((0..height).map(|r| {
            let row = self.row(if symmetry.reverses_rows { height - 1 - r } else { r });
            if symmetry.reverses_columns {
                row.reverse_bits() >> (64 - width)
            } else {
                row
            }
        }))
    }

    /// The canonical form of a set at the origin of the given size: the least of its images
    /// under the symmetries of its box that fit.
    fn canonical(self, height: usize, width: usize) -> Self {
        Symmetry::ALL
            .into_iter()
            .filter(|&symmetry| Self::fits(height, width, symmetry))
            .map(|symmetry| self.image(height, width, symmetry))
            .min()
            .unwrap_or(self)
    }

    /// The least of the images of a set in the `height`×`width` box at the origin under the
    /// symmetries of the box ([`Symmetry::of_rectangle`]; a square box's must fit the set).
    fn least_image_in_rectangle(self, height: usize, width: usize) -> Self {
        Symmetry::of_rectangle(height, width).map(|symmetry| self.image(height, width, symmetry)).min().unwrap_or(self)
    }

    /// The symmetries of a `height`×`width` set at the origin other than the identity: those
    /// that map it onto itself.
    fn symmetries(self, height: usize, width: usize) -> Symmetries {
        let mut symmetries = Symmetries { list: [Symmetry::IDENTITY; 7], count: 0 };
        for symmetry in Symmetry::ALL.into_iter().skip(1) {
            if Self::fits(height, width, symmetry) && self.image(height, width, symmetry) == self {
                symmetries.list[symmetries.count] = symmetry;
                symmetries.count += 1;
            }
        }
        symmetries
    }

    /// The same points, at the origin of the given size, in another kind of set (turned by
    /// `symmetry`, which must fit it).
    fn convert<T: PointSet>(self, height: usize, width: usize, symmetry: Symmetry) -> T {
        if symmetry == Symmetry::IDENTITY {
            return T::from_rows((0..height).map(|r| self.row(r)));
        }
        if Self::fits(height, width, symmetry) {
            let image = self.image(height, width, symmetry);
            let (height, width) = if symmetry.transposes { (width, height) } else { (height, width) };
            return image.convert(height, width, Symmetry::IDENTITY);
        }
        let (rows, height, _) = self.image_rows(height, width, symmetry);
        T::from_rows(rows.into_iter().take(height))
    }

    /// The persistent memo key of a set in canonical form: height, width, then the
    /// `height·width` bits of the rows packed row-major, least significant bit first, padded
    /// with zeros to whole bytes.
    fn memo_key(self) -> Vec<u8> {
        let (origin, height, width) = self.at_origin();
        let mut key = Vec::with_capacity(2 + (height * width).div_ceil(8));
        key.push(height as u8);
        key.push(width as u8);
        let (mut pending, mut bits) = (0u128, 0);
        for r in 0..height {
            pending |= u128::from(origin.row(r)) << bits;
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
}

/// Components 9 to 16 points both ways: 16 rows of 16 in 256 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Grid(pub Wide<4>);

impl Grid {
    /// The 16 rows.
    fn lanes(self) -> [u16; 16] {
        std::array::from_fn(|r| (self.0 .0[r / 4] >> (16 * (r % 4))) as u16)
    }

    /// The grid of these 16 rows.
    fn from_lanes(rows: [u16; 16]) -> Grid {
        Grid(Wide(std::array::from_fn(|w| (0..4).fold(0, |word, i| word | u64::from(rows[4 * w + i]) << (16 * i)))))
    }

    /// The image under `symmetry` of rows lying in the `height`×`width` box at the origin, given
    /// with their transpose.
    fn image_of_lanes(rows: [u16; 16], transposed: [u16; 16], height: usize, width: usize, symmetry: Symmetry) -> Grid {
        let (mut rows, height, width) =
            if symmetry.transposes { (transposed, width, height) } else { (rows, height, width) };
        if symmetry.reverses_rows {
            rows[..height].reverse();
        }
        if symmetry.reverses_columns {
            for row in &mut rows[..height] {
                *row = row.reverse_bits() >> (16 - width);
            }
        }
        Grid::from_lanes(rows)
    }
}

impl PointSet for Grid {
    type Word = Wide<4>;
    const STRIDE: u32 = 16;
    const FIRST_COLUMN: Wide<4> = Wide::splat(0x0001_0001_0001_0001);
    const LAST_COLUMN: Wide<4> = Wide::splat(0x8000_8000_8000_8000);
    fn from_word(word: Wide<4>) -> Self {
        Grid(word)
    }
    fn word(self) -> Wide<4> {
        self.0
    }
    fn row(self, r: usize) -> u64 {
        self.0 .0[r / 4] >> (16 * (r % 4)) & 0xFFFF
    }
    fn from_rows(rows: impl IntoIterator<Item = u64>) -> Self {
        let mut words = [0u64; 4];
        for (r, row) in rows.into_iter().take(16).enumerate() {
            words[r / 4] |= row << (16 * (r % 4));
        }
        Grid(Wide(words))
    }
    fn with_king_neighbours(self) -> Grid {
        // Within a word a shift by one column never needs the next word (the column masks
        // clear what crosses a row); a shift by one row carries 16 bits between words.
        let x = self.0 .0;
        let across: [u64; 4] = std::array::from_fn(|i| {
            x[i] | (x[i] << 1 & !Self::FIRST_COLUMN.0[0]) | (x[i] >> 1 & !Self::LAST_COLUMN.0[0])
        });
        Grid(Wide(std::array::from_fn(|i| {
            let up = across[i] << 16 | if i > 0 { across[i - 1] >> 48 } else { 0 };
            let down = across[i] >> 16 | if i < 3 { across[i + 1] << 48 } else { 0 };
            across[i] | up | down
        })))
    }
    fn image(self, height: usize, width: usize, symmetry: Symmetry) -> Grid {
        let rows = self.lanes();
        let transposed = if symmetry.transposes { transpose_16(rows) } else { rows };
        Grid::image_of_lanes(rows, transposed, height, width, symmetry)
    }
    fn canonical(self, height: usize, width: usize) -> Grid {
        let rows = self.lanes();
        let transposed = transpose_16(rows);
        Symmetry::ALL
            .into_iter()
            .map(|symmetry| Grid::image_of_lanes(rows, transposed, height, width, symmetry))
            .min()
            .unwrap_or(self)
    }
}

/// The transpose of a 16×16 bit matrix (`rows[r]` bit `c` becomes bit `r` of row `c`), by
/// swapping blocks of 8, 4, 2 and 1.
fn transpose_16(mut rows: [u16; 16]) -> [u16; 16] {
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

/// Components longer than 16 points, turned to lie along the rows: 16 rows of 64 in 1024 bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LongBand(pub Wide<16>);

impl PointSet for LongBand {
    type Word = Wide<16>;
    const STRIDE: u32 = 64;
    const FIRST_COLUMN: Wide<16> = Wide::splat(1);
    const LAST_COLUMN: Wide<16> = Wide::splat(1 << 63);
    fn from_word(word: Wide<16>) -> Self {
        LongBand(word)
    }
    fn word(self) -> Wide<16> {
        self.0
    }
}

/// The points of a whole board: 16 rows of 64 in 1024 bits (a board with more rows of points
/// has at most 16 columns of them, and is stored turned).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BoardPoints(pub Wide<16>);

impl PointSet for BoardPoints {
    type Word = Wide<16>;
    const STRIDE: u32 = 64;
    const FIRST_COLUMN: Wide<16> = Wide::splat(1);
    const LAST_COLUMN: Wide<16> = Wide::splat(1 << 63);
    fn from_word(word: Wide<16>) -> Self {
        BoardPoints(word)
    }
    fn word(self) -> Wide<16> {
        self.0
    }
}
