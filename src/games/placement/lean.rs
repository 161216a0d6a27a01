//! The lean core: components of at most 64 points (or 128, in two words) searched on the kernel
//! ([`crate::games::kernel`]) as one integer each, `W` points to a row (the shorter side of the
//! component the search starts from, at most 8), so that an option is a few word operations and a
//! canonical form a translation and four flips.

use super::bits::{PointSet, Symmetry, Word};
use super::strategy::{rank, zero_by_half_turn};
use super::window::transpose;
use super::Piece;
use crate::games::kernel::{Key, Part, Rules};
use std::marker::PhantomData;

/// A set of points in one integer `T` (`u64`, or `u128` for the wider components), `W` to a row
/// (bit `W·r + c` is the point `(r, c)`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lean<const W: u32, T = u64>(pub T);

/// An integer a lean set is held in.
pub trait LeanWord: Word + Key {
    /// Bit 0 of every row of `W` bits, for `W` from 0 to 8.
    const FIRST_COLUMNS: [Self; 9];
    /// Bit `W − 1` of every row of `W` bits, for `W` from 0 to 8.
    const LAST_COLUMNS: [Self; 9];
    /// The bits in reverse order.
    fn reversed(self) -> Self;
    /// The integer of these 64 low bits.
    fn from_u64(low: u64) -> Self;
}

/// Bit 0 of every row of `stride` bits in `bits` bits (a `u128`, cut to fewer bits by the caller).
const fn first_column(stride: u32, bits: u32) -> u128 {
    let mut word = 0u128;
    let mut bit = 0;
    while stride > 0 && bit + stride <= bits {
        word |= 1 << bit;
        bit += stride;
    }
    word
}

/// The first (or, `last`, the last) columns of every stride up to 8 in `bits` bits.
const fn columns_of(bits: u32, last: bool) -> [u128; 9] {
    let mut columns = [0u128; 9];
    let mut stride = 1;
    while stride <= 8 {
        let first = first_column(stride, bits);
        columns[stride as usize] = if last { first << (stride - 1) } else { first };
        stride += 1;
    }
    columns
}

/// The same columns in a `u64`.
const fn narrowed(wide: [u128; 9]) -> [u64; 9] {
    let (mut columns, mut i) = ([0u64; 9], 0);
    while i < 9 {
        columns[i] = wide[i] as u64;
        i += 1;
    }
    columns
}

impl LeanWord for u64 {
    const FIRST_COLUMNS: [u64; 9] = narrowed(columns_of(64, false));
    const LAST_COLUMNS: [u64; 9] = narrowed(columns_of(64, true));
    fn reversed(self) -> Self {
        self.reverse_bits()
    }
    fn from_u64(low: u64) -> Self {
        low
    }
}

impl LeanWord for u128 {
    const FIRST_COLUMNS: [u128; 9] = columns_of(128, false);
    const LAST_COLUMNS: [u128; 9] = columns_of(128, true);
    fn reversed(self) -> Self {
        self.reverse_bits()
    }
    fn from_u64(low: u64) -> Self {
        u128::from(low)
    }
}

impl<const W: u32, T: LeanWord> PointSet for Lean<W, T> {
    type Word = T;
    const STRIDE: u32 = W;
    const FIRST_COLUMN: T = T::FIRST_COLUMNS[W as usize];
    const LAST_COLUMN: T = T::LAST_COLUMNS[W as usize];

    fn from_word(word: T) -> Self {
        Lean(word)
    }

    fn word(self) -> T {
        self.0
    }

    /// By folding the word onto itself a whole number of rows at a time: 64, 32, …, 1 of them,
    /// as many as fit in the word (the default folds it in halves, which needs a stride that
    /// divides them).
    fn columns(self) -> u64 {
        let mut x = self.0;
        for rows in [64, 32, 16, 8, 4, 2, 1] {
            if rows * W < T::BITS {
                x = x | x >> (rows * W);
            }
        }
        x.low_u64() & Self::row_mask()
    }

    /// The rows reversed in one loop of shifts, the columns by a half turn of that.
    fn flipped(self, height: usize, width: usize, symmetry: Symmetry) -> Self {
        let (x, row_mask, w) = (self.0, T::from_u64(Self::row_mask()), W);
        let upside_down = || {
            (0..height as u32)
                .fold(T::default(), |word, r| word | (x >> (w * r) & row_mask) << (w * (height as u32 - 1 - r)))
        };
        Lean(match (symmetry.reverses_rows, symmetry.reverses_columns) {
            (false, false) => x,
            (true, false) => upside_down(),
            (false, true) => half_turn::<W, T>(upside_down(), height, width),
            (true, true) => half_turn::<W, T>(x, height, width),
        })
    }

    /// The half turn by reversing the word, the transpose by an 8×8 bit-matrix transpose (a set
    /// that can be transposed has at most `W` rows, so at most 64 points' bits).
    fn image(self, height: usize, width: usize, symmetry: Symmetry) -> Self {
        let (set, height, width) = if symmetry.transposes {
            (Lean(T::from_u64(transposed::<W>(self.0.low_u64(), height, width))), width, height)
        } else {
            (self, height, width)
        };
        set.flipped(height, width, symmetry)
    }

    /// The least of the set, its half turn and its two flips, and of the same four of its
    /// transpose when that fits (the height is at most `W`).
    fn canonical(self, height: usize, width: usize) -> Self {
        let least = least_flip::<W, T>(self.0, height, width);
        if height > W as usize {
            return Lean(least);
        }
        let turned = T::from_u64(transposed::<W>(self.0.low_u64(), height, width));
        Lean(least.min(least_flip::<W, T>(turned, width, height)))
    }
}

/// The least of a set at the origin of `height`×`width`, its half turn and its two flips.
fn least_flip<const W: u32, T: LeanWord>(x: T, height: usize, width: usize) -> T {
    let upside_down = Lean::<W, T>(x).flipped(height, width, Symmetry { reverses_rows: true, ..Symmetry::IDENTITY }).0;
    x.min(half_turn::<W, T>(x, height, width)).min(upside_down).min(half_turn::<W, T>(upside_down, height, width))
}

/// The half turn of a set at the origin of `height`×`width`: reversing the word of `B` bits sends
/// bit `p` to `B − 1 − p`, and shifting down by `B − L`, `L = (height − 1)·W + width`, to
/// `L − 1 − p`, which for `p = W·r + c` is `W·(height − 1 − r) + (width − 1 − c)`.
fn half_turn<const W: u32, T: LeanWord>(x: T, height: usize, width: usize) -> T {
    let length = (height as u32 - 1) * W + width as u32;
    x.reversed() >> (T::BITS - length)
}

/// The transpose of a set at the origin of `height`×`width` (`width` at most `W`, so that it
/// fits): its rows spread to 8 bits each, the 8×8 bit matrix transposed, and its rows, `width`
/// of them now, gathered back to `W` bits each.
fn transposed<const W: u32>(x: u64, height: usize, width: usize) -> u64 {
    if W == 8 {
        return transpose(x);
    }
    let row_mask = u64::MAX >> (64 - W);
    let spread = (0..height).fold(0, |word, r| word | (x >> (W as usize * r) & row_mask) << (8 * r));
    let turned = transpose(spread);
    (0..width).fold(0, |word, r| word | (turned >> (8 * r) & 0xFF) << (W as usize * r))
}

/// A piece's rules on lean sets of `W` points to a row in `T`, for the kernel.
pub struct LeanRules<P, const W: u32, T = u64>(PhantomData<(P, T)>);

impl<P, const W: u32, T> Clone for LeanRules<P, W, T> {
    fn clone(&self) -> Self {
        LeanRules(PhantomData)
    }
}

impl<P, const W: u32, T> Default for LeanRules<P, W, T> {
    fn default() -> Self {
        LeanRules(PhantomData)
    }
}

impl<P: Piece, const W: u32, T: LeanWord> Rules for LeanRules<P, W, T> {
    type Set = Lean<W, T>;
    type Option = (u32, Lean<W, T>);
    type Key = T;

    fn family(&self) -> u8 {
        W as u8
    }

    fn key(&self, set: Lean<W, T>) -> T {
        set.0
    }

    fn points(&self, set: Lean<W, T>) -> u32 {
        set.len()
    }

    fn most_value(&self, set: Lean<W, T>) -> u8 {
        P::most_value(set.len()) as u8
    }

    fn zero_by_symmetry(&self, set: Lean<W, T>) -> bool {
        zero_by_half_turn::<P, Lean<W, T>>(set)
    }

    fn options(&self, set: Lean<W, T>, out: &mut Vec<(u32, (u32, Lean<W, T>))>) {
        let (_, height, width) = set.at_origin();
        let size = set.len();
        let symmetries = set.symmetries(height, width);
        P::for_each_option(set, |played, option| {
            if !symmetries.keep(option, height, width) {
                return;
            }
            let p = P::anchor(played);
            let (row, column) = ((p / W) as usize, (p % W) as usize);
            let removed = P::MOST_REMOVED.saturating_sub(size - option.len());
            let along = P::lies_along_rows(played);
            let rank = rank(row, column, height, width, removed) + along_long_side(along, height, width);
            out.push((rank, (played, option)));
        });
    }

    /// An option is simplified here rather than when it is made, since most are never split.
    fn parts(&self, (played, option): (u32, Lean<W, T>), mut part: impl FnMut(Part<Lean<W, T>>)) {
        let rest = P::simplified(option);
        // A table's box holds at most 24 points (4×6).
        if rest.len() <= 24 {
            if let Some(value) = P::tabled_value(rest) {
                return part(Part::Valued(value));
            }
        }
        // Removing tufts keeps a connected set connected.
        let one_part = P::connected_around(option, played);
        let pieces = (!one_part).then(|| P::parts_after(rest, played));
        for piece in pieces.into_iter().flatten().chain(one_part.then_some(rest)) {
            let (origin, height, width) = piece.at_origin();
            let size = piece.len();
            let by_rule = if height <= 8 {
                P::direct_value(origin, size, height, width)
            } else {
                P::thin_value(origin, size, height, width)
            };
            part(match by_rule {
                Some(value) => Part::Valued(value),
                None => Part::Searched(origin.canonical(height, width)),
            });
        }
    }
}

/// The rank a move along a component's long side loses per point the long side exceeds the short.
const ALONG_WEIGHT: u32 = 2;

/// A component is a thin strip, whose moves along its long side come later, when its long side is
/// at least this many times its short side.
const THIN: usize = 2;

/// What a move that lies along the rows of its component (else across them) adds to its rank:
/// moves along a component's long side come later, since those across it split a thin strip
/// into small parts; the thinner the strip, the later.
fn along_long_side(along_rows: Option<bool>, height: usize, width: usize) -> u32 {
    let Some(along_rows) = along_rows else { return 0 };
    let (long, short) = (height.max(width), height.min(width));
    let along_long = if height > width { !along_rows } else { width > height && along_rows };
    if along_long && long >= THIN * short {
        (long - short) as u32 * ALONG_WEIGHT
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::cram::Domino;
    use crate::games::kernel::{Helpers, Kernel, Table};
    use crate::games::node_kayles_board::Vertex;
    use crate::games::Budget;
    use std::collections::HashMap;

    /// The value of a set straight from the rules: the mex of its options' values, each option
    /// the XOR of nothing but its own options' mex (no splitting, no tables, no rules of thumb).
    fn by_rules<P: Piece, const W: u32, T: LeanWord>(set: Lean<W, T>, seen: &mut HashMap<Lean<W, T>, u8>) -> u8 {
        if let Some(&value) = seen.get(&set) {
            return value;
        }
        let mut values = 0u128;
        P::for_each_option(set, |_, option| values |= 1 << by_rules::<P, W, T>(option, seen));
        let value = (!values).trailing_zeros() as u8;
        seen.insert(set, value);
        value
    }

    /// A generator of random words (xorshift), two of them for a `u128`.
    fn random_words<T: LeanWord>(seed: u64) -> impl FnMut() -> T {
        let mut state = seed;
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let high = if T::BITS > 64 { T::from_u64(state.rotate_left(17)) << 64 } else { T::default() };
            T::from_u64(state) | high
        }
    }

    /// Random sets of `rows` rows, about 5/8 of the points in.
    fn random_sets<const W: u32, T: LeanWord>(rows: u32, count: usize, seed: u64) -> Vec<Lean<W, T>> {
        let mut next = random_words::<T>(seed);
        let all = (0..rows * W).fold(T::default(), |all, bit| all | T::from_u64(1) << bit);
        (0..count).map(|_| Lean((next() | next() & next()) & all)).collect()
    }

    /// Random sets of two words, `rows` rows: two dense blocks of three rows each, apart, one of
    /// them past the first 64 bits, so that the rules alone reach each component.
    fn wide_sets<const W: u32>(rows: u32, count: usize, seed: u64) -> Vec<Lean<W, u128>> {
        let mut next = random_words::<u128>(seed);
        let block = (1u128 << (3 * W)) - 1;
        (0..count)
            .map(|_| {
                let high = 64 / W + (next() as u32) % (rows - 3 - 64 / W);
                // Below the other block, a row apart.
                let low = (next() as u32) % (64 / W - 4);
                let dense = |word: u128| word & block;
                Lean(dense(next() | next() & next()) << (high * W) | dense(next() | next() & next()) << (low * W))
            })
            .collect()
    }

    /// The XOR of the kernel's values of the components of each of `sets` against the rules alone
    /// on the whole set (or, `by_parts`, on each component), with one small table for all of them
    /// (so entries are replaced and families share it).
    fn kernel_agrees_on<P: Piece, const W: u32, T: LeanWord>(sets: Vec<Lean<W, T>>, by_parts: bool) {
        let budget = Budget::unlimited();
        let mut table = Table::<T>::with_bytes(1 << 16, 1 << 16);
        let mut seen = HashMap::new();
        for set in sets {
            let (mut got, mut expected) = (0, 0);
            for part in super::super::components::<P, _>(set) {
                let (origin, height, width) = part.at_origin();
                let mut kernel = Kernel::new(LeanRules::<P, W, T>::default(), &mut table, &budget);
                got ^= kernel.value(origin.canonical(height, width)).unwrap();
                if by_parts {
                    expected ^= by_rules::<P, W, T>(part, &mut seen);
                }
            }
            if !by_parts {
                expected = by_rules::<P, W, T>(set, &mut seen);
            }
            assert_eq!(got, expected, "{set:?} ({W} to a row)");
        }
    }

    fn kernel_agrees<P: Piece, const W: u32>(rows: u32, seed: u64) {
        kernel_agrees_on::<P, W, u64>(random_sets(rows, 200, seed), false);
    }

    /// A set's images are those of its points one by one, its columns those of its rows, and
    /// its canonical form its images' (under every symmetry of its box that fits).
    #[test]
    fn images_have_one_canonical_form() {
        fn check<const W: u32, T: LeanWord>(rows: u32, seed: u64) {
            for set in random_sets::<W, T>(rows, 300, seed) {
                if set.0 == T::default() {
                    continue;
                }
                let (origin, height, width) = set.at_origin();
                let canonical = origin.canonical(height, width);
                let rows = (0..height).fold(0, |columns, r| columns | origin.row(r));
                assert_eq!(origin.columns(), rows, "{set:?}");
                for symmetry in Symmetry::ALL.into_iter().filter(|&s| Lean::<W, T>::fits(height, width, s)) {
                    let image = origin.image(height, width, symmetry);
                    let (h, w) = if symmetry.transposes { (width, height) } else { (height, width) };
                    // The word tricks against the image point by point.
                    let expected = origin.iter().fold(T::default(), |word, p| {
                        let (r, c) = ((p / W) as usize, (p % W) as usize);
                        let (r, c) = if symmetry.transposes { (c, r) } else { (r, c) };
                        let r = if symmetry.reverses_rows { h - 1 - r } else { r };
                        let c = if symmetry.reverses_columns { w - 1 - c } else { c };
                        word | T::from_u64(1) << (r as u32 * W + c as u32)
                    });
                    assert_eq!(image, Lean(expected), "{set:?} under {symmetry:?}");
                    assert_eq!(image.canonical(h, w), canonical, "{set:?} under {symmetry:?}");
                }
            }
        }
        check::<3, u64>(7, 1);
        check::<5, u64>(4, 2);
        check::<5, u64>(9, 3);
        check::<8, u64>(8, 4);
        check::<3, u128>(40, 5);
        check::<5, u128>(25, 6);
        check::<8, u128>(16, 7);
    }

    /// Cram on random lean sets of every width the kernel takes, against the rules alone, with
    /// one small table for all of them (so entries are replaced and families share it).
    #[test]
    fn cram_on_the_kernel_agrees_with_the_rules() {
        kernel_agrees::<Domino, 2>(12, 1);
        kernel_agrees::<Domino, 3>(8, 2);
        kernel_agrees::<Domino, 4>(6, 3);
        kernel_agrees::<Domino, 5>(5, 4);
        kernel_agrees::<Domino, 6>(4, 5);
        kernel_agrees::<Domino, 7>(4, 6);
        kernel_agrees::<Domino, 8>(3, 7);
    }

    /// Both games on sets of two words, likewise, component by component.
    #[test]
    fn wide_lean_sets_agree_with_the_rules() {
        kernel_agrees_on::<Domino, 3, u128>(wide_sets(40, 200, 13), true);
        kernel_agrees_on::<Domino, 8, u128>(wide_sets(16, 200, 14), true);
        kernel_agrees_on::<Vertex, 3, u128>(wide_sets(42, 200, 15), true);
        kernel_agrees_on::<Vertex, 6, u128>(wide_sets(21, 200, 16), true);
    }

    /// Cram and Node Kayles with the root's questions divided among three threads on one shared
    /// table (smaller than the searches need, so that entries are replaced while threads read
    /// them): the same values as the rules alone.
    #[test]
    fn divided_searches_agree_with_the_rules() {
        fn check<P: Piece, const W: u32>(rows: u32, seed: u64) {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
            let budget = Budget::unlimited();
            let mut seen = HashMap::new();
            for set in random_sets::<W, u64>(rows, 60, seed) {
                let mut table = Table::<u64>::with_bytes(1 << 14, 1 << 14);
                for part in super::super::components::<P, _>(set) {
                    let (origin, height, width) = part.at_origin();
                    let kernel = Kernel::new(LeanRules::<P, W, u64>::default(), &mut table, &budget);
                    let got = kernel.with_helpers(Helpers::of(&pool)).value(origin.canonical(height, width)).unwrap();
                    assert_eq!(got, by_rules::<P, W, u64>(part, &mut seen), "{part:?} ({W} to a row)");
                }
            }
        }
        check::<Domino, 4>(6, 21);
        check::<Domino, 5>(5, 22);
        check::<Vertex, 5>(5, 23);
    }

    /// Node Kayles on a board, likewise.
    #[test]
    fn node_kayles_on_the_kernel_agrees_with_the_rules() {
        kernel_agrees::<Vertex, 2>(12, 8);
        kernel_agrees::<Vertex, 3>(8, 9);
        kernel_agrees::<Vertex, 4>(6, 10);
        kernel_agrees::<Vertex, 5>(5, 11);
        kernel_agrees::<Vertex, 8>(3, 12);
    }
}
