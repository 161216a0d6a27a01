//! What a placement search knows about a set before it searches it: which moves to try first,
//! and which sets are zero by the half-turn strategy. The placement engine and the lean sets on
//! the search kernel both use them.

use super::bits::{PointSet, Symmetry};
use super::Piece;

/// The rank of the option playing the move at point `(row, column)` of a set at the origin of
/// `height`×`width`, which removes `short` points fewer than a move of the game removes at most
/// ([`Piece::MOST_REMOVED`]): options are tried by increasing rank (row-major among equals).
/// Options removing many points are the cheapest to settle and most often already known; central
/// ones split the set into small, often equal, parts. The weights were tuned on full boards of
/// the 2×2 game, 9×9 to 9×10 (fewest components solved).
pub(super) fn rank(row: usize, column: usize, height: usize, width: usize, short: u32) -> u32 {
    let off_centre = (2 * row).abs_diff(height - 1) + (2 * column).abs_diff(width - 1);
    off_centre as u32 + 2 * short
}

/// Whether a component in canonical form has value 0 by the half-turn strategy: a half turn (a
/// rotation by 180°) maps it onto itself, and no move meets its own image
/// ([`Piece::meets_own_image`]).
///
/// **Proof.** Let σ be the half turn of the component's box. It maps moves to moves and the
/// position after a move `m` to the image of the position after `σ(m)`, since the rules look
/// only at which cells are free, and σ keeps them so. Suppose the position is its own image and
/// no move meets its own image. After the first player's move `m`, the move `σ(m)` is still
/// there: it was there before (the image of a move that was), and `m` did not take any of it.
/// After `σ(m)` the position is again its own image, and it has fewer points, so the property
/// holds again. The second player therefore always has a move and never loses: the position is a
/// P-position, of value 0. Only points whose image is at most one row and one column away can
/// meet their image, and those lie in the central 2×2 block of the box.
pub(super) fn zero_by_half_turn<P: Piece, S: PointSet>(key: S) -> bool {
    let (_, height, width) = key.at_origin();
    let half_turn = Symmetry { transposes: false, reverses_rows: true, reverses_columns: true };
    if key.image(height, width, half_turn) != key {
        return false;
    }
    let middle = |side: usize| (side - 1) / 2..=side / 2;
    !middle(height).any(|row| {
        middle(width).any(|column| {
            key.contains((row * S::STRIDE as usize + column) as u32)
                && P::meets_own_image((height - 1).abs_diff(2 * row), (width - 1).abs_diff(2 * column))
        })
    })
}
