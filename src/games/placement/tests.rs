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
/// connected components; one the piece finds connected around its move is.
fn check_options_and_their_parts<P: Piece, S: PointSet>(set: S) {
    for part in components::<P, S>(set) {
        P::for_each_option(part, |played, option| {
            let mut found: Vec<S> = P::parts_after(option, played).collect();
            let mut expected: Vec<S> = components::<P, S>(option).collect();
            if P::connected_around(option, played) {
                assert!(expected.len() <= 1, "{option:?} after {played} is not connected");
            }
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

/// A solve of each board on `threads` threads: the value and the best move.
fn answers_on<P: Piece>(boards: &[super::Board<P>], threads: usize) -> Vec<(u64, Option<P::Move>)>
where
    P::Move: std::fmt::Debug,
{
    use crate::games::{Game, SearchContext, SearchThreads};
    boards
        .iter()
        .map(|board| {
            let mut context = SearchContext::in_memory();
            context.threads = SearchThreads::new(threads);
            let (value, best) = board.best_move(&mut context).expect("no deadline");
            let mut again = SearchContext::in_memory();
            again.threads = SearchThreads::new(threads);
            assert_eq!(board.value(&mut again), Ok(value), "{board:?}");
            (value, best)
        })
        .collect()
}

/// Random boards of both placement games, large enough to be searched by helpers.
fn boards<P: Piece>(seed: u64, shapes: &[(usize, usize)], blocked_percent: u64) -> Vec<super::Board<P>> {
    let mut rng = SplitMix::new(seed);
    shapes
        .iter()
        .map(|&(height, width)| {
            let rows = crate::testing::random_board(&mut rng, height, width, blocked_percent);
            super::Board::new(&rows).expect("generated boards are valid")
        })
        .collect()
}

#[test]
fn values_and_best_moves_are_the_same_on_1_2_and_4_threads() {
    let squares = boards::<Square>(23, &[(8, 9), (7, 8), (8, 8), (9, 8)], 6);
    let one = answers_on(&squares, 1);
    assert_eq!(answers_on(&squares, 2), one);
    assert_eq!(answers_on(&squares, 4), one);
    let dominoes = boards::<Domino>(29, &[(5, 6), (6, 6), (6, 5), (5, 7)], 12);
    let one = answers_on(&dominoes, 1);
    assert_eq!(answers_on(&dominoes, 2), one);
    assert_eq!(answers_on(&dominoes, 4), one);
}

#[test]
fn a_cancel_stops_every_thread_of_a_search() {
    use crate::games::{Budget, Game, Interrupted, NoMemo, SearchContext, SearchThreads};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let pool = SearchThreads::new(4);
    let cancelled = Arc::new(AtomicBool::new(false));
    // The full 11×11 board: no machine finishes it during this test.
    let board = super::Board::<Square>::new(&vec!["0".repeat(11); 11]).expect("valid");
    let search = std::thread::spawn({
        let (pool, cancelled) = (pool.clone(), cancelled.clone());
        move || {
            let mut context = SearchContext::new(Budget::new(None, cancelled), &NoMemo);
            context.threads = pool;
            board.value(&mut context)
        }
    });
    // Wait until the search and its three helpers run.
    while pool.busy() < 4 {
        assert!(!search.is_finished(), "the search ended before it was cancelled");
        std::thread::yield_now();
    }
    cancelled.store(true, Ordering::Relaxed);
    let started = std::time::Instant::now();
    // The search returns only once its helpers have stopped (they are joined).
    assert_eq!(search.join().expect("no panic"), Err(Interrupted::Cancelled));
    eprintln!("every thread stopped {:?} after the cancel", started.elapsed());
    assert_eq!(pool.busy(), 0, "every thread went back to the pool");
}

#[test]
fn concurrent_searches_share_the_pool_and_never_exceed_it() {
    use crate::games::SearchThreads;
    let pool = SearchThreads::new(3);
    let first = pool.take();
    assert_eq!(first.helpers, 2);
    // Every core is busy: a second search runs on its own thread only.
    let second = pool.take();
    assert_eq!(second.helpers, 0);
    assert_eq!(pool.busy(), 4);
    drop(first);
    assert_eq!(pool.busy(), 1);
    let third = pool.take();
    assert_eq!(third.helpers, 1);
    drop((second, third));
    assert_eq!(pool.busy(), 0);
}

/// The boards a fleet splits a board into ([`super::Board::option_boards`]): one per class of moves
/// whose searched components are equal up to symmetry, every such class with a component of at
/// least `MEMO_MIN_POINTS`, each a board a legal move leads to, the largest first, at most `most`.
fn check_option_boards<P: Piece>(boards: &[super::Board<P>]) {
    use crate::games::Game;
    let searched = |board: &super::Board<P>| super::searched_components::<P>(board.points());
    let largest = |board: &super::Board<P>| searched(board).iter().map(|(points, _)| *points).max().unwrap_or(0);
    let mut seen = 0;
    for board in boards {
        let options: Vec<super::Board<P>> = board.moves().iter().map(|mv| board.play_unchecked(&mv)).collect();
        let parts = board.option_boards(usize::MAX);
        let classes: std::collections::HashSet<_> =
            options.iter().filter(|option| largest(option) >= P::MEMO_MIN_POINTS).map(searched).collect();
        assert_eq!(parts.len(), classes.len(), "one part per class: {board:?}");
        for part in &parts {
            assert!(options.contains(part), "a part is an option: {part:?} of {board:?}");
            assert!(classes.contains(&searched(part)), "{part:?}");
        }
        assert!(parts.windows(2).all(|pair| largest(&pair[0]) >= largest(&pair[1])), "largest first: {board:?}");
        let most = parts.len() / 2;
        assert_eq!(board.option_boards(most), parts[..most], "the first `most`: {board:?}");
        seen += parts.len();
    }
    assert!(seen >= boards.len(), "the boards have large options: {seen} parts");
}

#[test]
fn option_boards_are_one_per_class_of_large_options_largest_first() {
    check_option_boards(&boards::<Square>(31, &[(6, 6), (7, 5), (6, 8), (4, 9)], 8));
    check_option_boards(&boards::<Domino>(37, &[(5, 6), (6, 6), (4, 8), (7, 4)], 10));
}
