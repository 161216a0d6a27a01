//! Tests of Cram against a brute force written from the literal rules, and against the published
//! values of full boards.

use super::*;
use crate::games::{Game, SearchContext};
use crate::random::SplitMix;
use crate::testing::{free_of, random_board, rows_of, small_board_shapes, winding_path, BoardBruteForce as BruteForce};

fn value(board: &Board) -> u64 {
    board.value(&mut SearchContext::in_memory()).expect("no deadline")
}

fn full(height: usize, width: usize) -> Board {
    Board::full(height, width).expect("test boards are valid")
}

#[test]
fn agrees_with_brute_force_on_every_board_of_many_small_shapes() {
    for (height, width) in small_board_shapes() {
        let mut brute = BruteForce::cram(height, width);
        for free in 0..1u64 << (height * width) {
            let board = Board::new(&rows_of(height, width, free)).expect("generated boards are valid");
            assert_eq!(value(&board), brute.grundy(free), "board {:?}", board.rows());
        }
    }
}

#[test]
fn agrees_with_brute_force_on_random_boards_with_blocked_cells() {
    // Up to 8×8, with up to 24 free cells (the brute force's reach).
    let mut rng = SplitMix::new(2025);
    for round in 0..300 {
        let (height, width) = (2 + rng.below(7) as usize, 2 + rng.below(7) as usize);
        let mut rows = random_board(&mut rng, height, width, 30);
        let cells = height * width;
        let mut free = free_of(&rows);
        let most = if round % 10 == 0 { 26 } else { 22 };
        while free.count_ones() > most {
            free &= !(1 << rng.below(cells as u64));
        }
        rows = rows_of(height, width, free);
        let board = Board::new(&rows).expect("generated boards are valid");
        assert_eq!(value(&board), BruteForce::cram(height, width).grundy(free), "board {rows:?}");
    }
}

#[test]
fn boards_a_half_turn_keeps_are_zero_when_no_domino_meets_its_image() {
    // Random boards a half turn maps onto themselves: the engine's half-turn rule against the
    // brute force, which knows nothing of it. With an even side both ways no domino meets its
    // image; with an odd side the central dominoes may, and the value need not be 0.
    let mut rng = SplitMix::new(180);
    let mut zeros = 0;
    for round in 0..200 {
        let (height, width) = (2 + rng.below(6) as usize, 2 + rng.below(6) as usize);
        let cells = height * width;
        let mut free = 0u64;
        while free.count_ones() < if round % 2 == 0 { 16 } else { 22 }.min(cells as u32) {
            let cell = rng.below(cells as u64) as usize;
            free |= 1 << cell | 1 << (cells - 1 - cell);
        }
        let rows = rows_of(height, width, free);
        let expected = BruteForce::cram(height, width).grundy(free);
        assert_eq!(value(&Board::new(&rows).expect("valid")), expected, "board {rows:?}");
        if height % 2 == 0 && width % 2 == 0 {
            assert_eq!(expected, 0, "{rows:?}");
            zeros += 1;
        }
    }
    assert!(zeros >= 30, "{zeros}");
    // Full even-by-even boards, including one the brute force checks (4×6, 24 cells).
    assert_eq!(BruteForce::cram(4, 6).grundy((1 << 24) - 1), 0);
    for (height, width) in [(4, 6), (6, 6), (8, 8), (10, 12), (16, 16), (2, 64), (4, 64)] {
        assert_eq!(value(&full(height, width)), 0, "{height}x{width}");
    }
}

/// The published values of full boards, `(rows, columns, value)`, both ways round:
/// * 2×n is 0 for even n and 1 for odd n: M. Schneider, *Das Spiel Juvavum*, Master's thesis,
///   University of Salzburg, 2009, Satz 9.14 (with a proof).
/// * 3×3 to 3×13: J. Lemoine and S. Viennot, the Cram records of Glop
///   (<https://sprouts.tuxfamily.org/wiki/doku.php?id=records#cram>, 2013), as tabled in the MCGS
///   project's results (`docs/MCGS-results.html`, ualberta-mueller-group/MCGS, which recomputed
///   them); 3×6 = 4 and 4×4 to 4×7 also in T. Plick's nimcalc (`cram.ml`).
/// * 4×4 to 4×10, 5×5 to 5×7: Glop's records, as tabled in P. Beling's impartial-games README
///   (beling/impartial-games, 2025) and MCGS's results.
const PUBLISHED: [(usize, usize, u64); 24] = [
    (2, 2, 0),
    (2, 3, 1),
    (2, 10, 0),
    (2, 11, 1),
    (3, 3, 0),
    (3, 4, 1),
    (3, 5, 1),
    (3, 6, 4),
    (3, 7, 1),
    (3, 8, 3),
    (3, 9, 1),
    (3, 10, 2),
    (3, 11, 0),
    (3, 12, 1),
    (3, 13, 2),
    (4, 4, 0),
    (4, 5, 2),
    (4, 6, 0),
    (4, 7, 3),
    (4, 8, 0),
    (4, 9, 1),
    (5, 5, 0),
    (5, 6, 2),
    (5, 7, 1),
];

#[test]
fn full_boards_have_their_published_values() {
    for (height, width, expected) in PUBLISHED {
        assert_eq!(value(&full(height, width)), expected, "{height}x{width}");
        assert_eq!(value(&full(width, height)), expected, "{width}x{height}");
    }
}

#[test]
fn lines_are_dawsons_kayles() {
    // 1×n Cram is Dawson's Kayles, 0.07: Schneider (2009), Tabelle 3, for 2 to 25 cells.
    let published = [1, 1, 2, 0, 3, 1, 1, 0, 3, 3, 2, 2, 4, 0, 5, 2, 2, 3, 3, 0, 1, 1, 3, 0];
    assert_eq!(LINE[2..26], published);
    // Dawson's Kayles on n cells is Dawson's chess (0.137, Node Kayles on a path) on n − 1: the
    // independent table of Node Kayles' paths checks the rest.
    assert!((1..=MAX_CELLS).all(|n| LINE[n] == crate::games::node_kayles::PATH[n - 1]));
    let winding = Board::new(&winding_path()).expect("valid");
    assert_eq!(value(&winding), u64::from(LINE[136]), "a line of 136 cells");
    for (n, &line) in LINE.iter().enumerate().take(MAX_SIDE + 1).skip(1) {
        assert_eq!(value(&full(1, n)), u64::from(line), "1x{n}");
        assert_eq!(value(&full(n, 1)), u64::from(line), "{n}x1");
    }
}

#[test]
fn best_move_reaches_zero_and_moves_are_row_major() {
    let board = Board::new(&["000".into(), "010".into()]).expect("valid");
    let moves: Vec<DominoMove> = board.moves().iter().collect();
    let domino = |row, column, orientation| DominoMove { row, column, orientation };
    use Orientation::{Horizontal, Vertical};
    assert_eq!(
        moves,
        [domino(1, 1, Horizontal), domino(1, 1, Vertical), domino(1, 2, Horizontal), domino(1, 3, Vertical)]
    );
    assert_eq!(board.play_unchecked(&domino(1, 1, Vertical)).rows(), ["100", "110"]);
    assert!(!board.is_legal(&domino(1, 2, Vertical)));
    assert!(!board.is_legal(&domino(2, 3, Vertical)));
    assert!(!board.is_legal(&domino(usize::MAX, 1, Horizontal)));
    // The README's example: 3×4 (value 1) is won first by the vertical domino at (1, 1).
    let (total, best) = full(3, 4).best_move(&mut SearchContext::in_memory()).expect("no deadline");
    assert_eq!((total, best), (1, Some(domino(1, 1, Vertical))));
    // Random boards, some turned (more than 16 rows): a winning move leads to 0.
    let mut rng = SplitMix::new(77);
    for round in 0..60 {
        let (height, width) = if round % 3 == 0 {
            (17 + rng.below(20) as usize, 2 + rng.below(2) as usize)
        } else {
            (2 + rng.below(6) as usize, 2 + rng.below(6) as usize)
        };
        let board = Board::new(&random_board(&mut rng, height, width, 35)).expect("valid");
        let (total, best) = board.best_move(&mut SearchContext::in_memory()).expect("no deadline");
        assert_eq!(total, value(&board));
        let legal: Vec<DominoMove> = board.moves().iter().collect();
        match best {
            Some(mv) if total != 0 => assert_eq!(value(&board.play_unchecked(&mv)), 0, "{:?} {mv:?}", board.rows()),
            Some(mv) => assert!(legal.contains(&mv)),
            None => assert!(legal.is_empty()),
        }
        for target in 0..total {
            let mv = board.first_move_to(target, &mut SearchContext::in_memory()).expect("no deadline");
            let mv = mv.expect("a move to every smaller value");
            assert_eq!(value(&board.play_unchecked(&mv)), target);
        }
    }
}

#[test]
fn turned_boards_have_the_values_of_their_images() {
    let mut rng = SplitMix::new(31);
    let mut checked = 0;
    for round in 0..40 {
        // Long three-row components are hard (3×21 is unsolved): those boards are shorter and sparser.
        let (height, width, blocked) = if round % 4 == 0 {
            (17 + rng.below(4) as usize, 3, 40)
        } else {
            (17 + rng.below(30) as usize, 1 + rng.below(2) as usize, 25)
        };
        let rows = random_board(&mut rng, height, width, blocked);
        let turned: Vec<String> =
            (0..width).map(|c| rows.iter().map(|row| row.as_bytes()[c] as char).collect()).collect();
        let tall = Board::new(&rows).expect("valid");
        let wide = Board::new(&turned).expect("valid");
        assert_eq!(value(&tall), value(&wide), "{rows:?}");
        // The brute force's reach: 64 cells, about 26 free.
        if height * width <= 64 && free_of(&rows).count_ones() <= 26 {
            assert_eq!(value(&tall), BruteForce::cram(height, width).grundy(free_of(&rows)), "{rows:?}");
            checked += 1;
        }
    }
    assert!(checked >= 5, "{checked}");
}
