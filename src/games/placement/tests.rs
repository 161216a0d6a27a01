//! Tests of the engine's sets of points, for every piece: canonical forms, options and parts.

use super::band::Band;
use super::bits::{Grid, LongBand, PointSet, Symmetry};
use super::window::Window;
use super::{components, Piece};
use crate::games::cram::Domino;
use crate::games::tetris::Square;
use crate::random::SplitMix;

/// A number in `0..n`.
fn index_below(rng: &mut SplitMix, n: usize) -> usize {
    rng.below(n as u64) as usize
}

/// For random sets of each kind lying in a `height`×`width` box at the origin (of the shapes
/// the engine puts in that kind): every image has the same canonical form, word tricks agree with
/// the row-by-row images, and distinct options are one per class under the set's symmetries.
fn check_canonical_forms<P: Piece, S: PointSet>(seed: u64, shapes: impl Fn(&mut SplitMix) -> (usize, usize)) {
    let mut rng = SplitMix::new(seed);
    for round in 0..200 {
        let (height, width) = shapes(&mut rng);
        let density = if round % 2 == 0 { 2 } else { 1 };
        let rows: Vec<u64> = (0..height)
            .map(|_| (0..density).fold(u64::MAX, |row, _| row & rng.next_u64()) & (u64::MAX >> (64 - width)))
            .collect();
        let set = S::from_rows(rows.iter().copied());
        if set.is_empty() {
            continue;
        }
        let (origin, h, w) = set.at_origin();
        assert_eq!(origin.len(), set.len());
        let canonical = origin.canonical(h, w);
        for symmetry in Symmetry::ALL.into_iter().filter(|&s| S::fits(h, w, s)) {
            let (image_rows, ih, iw) = origin.image_rows(h, w, symmetry);
            let image = S::from_rows(image_rows.into_iter().take(ih));
            assert_eq!(origin.image(h, w, symmetry), image, "{symmetry:?}");
            assert_eq!(image.at_origin(), (image, ih, iw));
            assert_eq!(image.canonical(ih, iw), canonical, "{symmetry:?} of {rows:?}");
        }
        // Every option is some symmetry's image of exactly one distinct option.
        let (_, ch, cw) = canonical.at_origin();
        // Two moves may leave the same option: count sets, not moves.
        let mut options: Vec<S> = Vec::new();
        P::for_each_option(canonical, |played, option| {
            assert_eq!(option, P::after(canonical, played));
            options.push(option);
        });
        let symmetries = canonical.symmetries(ch, cw);
        let mut distinct: Vec<S> = options.iter().copied().filter(|&o| symmetries.keep(o, ch, cw)).collect();
        distinct.sort();
        distinct.dedup();
        let own: Vec<Symmetry> = Symmetry::ALL
            .into_iter()
            .filter(|&s| S::fits(ch, cw, s) && canonical.image(ch, cw, s) == canonical)
            .collect();
        for option in options {
            let classes = distinct.iter().filter(|&&d| own.iter().any(|&s| d.image(ch, cw, s) == option)).count();
            assert_eq!(classes, 1, "{option:?}");
        }
        check_options_and_their_parts::<P, S>(set);
    }
}

/// The parts of every option of every component of `set`, as the piece finds them, are its
/// connected components.
fn check_options_and_their_parts<P: Piece, S: PointSet>(set: S) {
    for part in components::<P, S>(set) {
        P::for_each_option(part, |played, option| {
            let mut found: Vec<S> = P::parts_after(option, played).collect();
            let mut expected: Vec<S> = components::<P, S>(option).collect();
            found.sort();
            expected.sort();
            assert_eq!(found, expected, "{option:?} after {played}");
        });
    }
}

/// Checks every kind of set for the piece `P`.
fn check_every_kind<P: Piece>() {
    check_canonical_forms::<P, Window>(5, |rng| (1 + index_below(rng, 8), 1 + index_below(rng, 8)));
    check_canonical_forms::<P, Band>(11, |rng| (1 + index_below(rng, 8), 9 + index_below(rng, 8)));
    check_canonical_forms::<P, Grid>(99, |rng| (9 + index_below(rng, 8), 9 + index_below(rng, 8)));
    check_canonical_forms::<P, LongBand>(3, |rng| (1 + index_below(rng, 15), 17 + index_below(rng, 47)));
}

#[test]
fn canonical_forms_are_shared_by_all_images_in_every_kind_of_set() {
    check_every_kind::<Square>();
    check_every_kind::<Domino>();
}
