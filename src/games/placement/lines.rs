//! Connected sets in which no point has three neighbours or more (up, down, left, right): paths
//! and cycles, which every piece joining its points that way values by a rule of its own.

use super::bits::{PointSet, Word};

/// What a connected set with no branch is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// A path (a single point, two neighbours, or a set with two ends, points of one neighbour).
    Path,
    /// A cycle of at least 4 points, each with two neighbours.
    Cycle,
}

/// The points of a set that have a neighbour to their right, left, below and above.
pub fn sides<S: PointSet>(set: S) -> [S::Word; 4] {
    let x = set.word();
    let right = x & x >> 1 & !S::LAST_COLUMN;
    let left = x & x << 1 & !S::FIRST_COLUMN;
    [right, left, x & x >> S::STRIDE, x & x << S::STRIDE]
}

/// The points of a set with exactly one neighbour (its tufts), and those with three or more.
pub fn tufts_and_branches<S: PointSet>([right, left, below, above]: [S::Word; 4]) -> (S::Word, S::Word) {
    let branches = (right & left & (below | above)) | (below & above & (right | left));
    let odd = xor(xor(right, left), xor(below, above));
    (odd & !branches, branches)
}

/// The XOR of two words.
fn xor<W: Word>(a: W, b: W) -> W {
    (a & !b) | (b & !a)
}

/// Whether a connected set of `size` points none of which has three neighbours or more is a path
/// or a cycle; `None` when some point has three. A connected set whose points have at most two
/// neighbours each is a path when it has an end (a tuft) or at most two points, else a cycle.
pub fn line_of<S: PointSet>(set: S, size: u32) -> Option<Line> {
    let (tufts, branches) = tufts_and_branches::<S>(sides(set));
    if !branches.is_zero() {
        return None;
    }
    Some(if !tufts.is_zero() || size <= 2 { Line::Path } else { Line::Cycle })
}
