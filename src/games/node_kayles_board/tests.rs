//! Node Kayles on a board against a brute force written from the rules, against the published
//! values of grids (OEIS A316632 and its comments), and against the graph form of the same game.

use super::*;
use crate::games::node_kayles::Graph;
use crate::games::{Game, SearchContext};
use crate::random::SplitMix;
use crate::testing::{free_of, random_board, rows_of, small_board_shapes, winding_path, BoardBruteForce as BruteForce};

fn value(board: &Board) -> u64 {
    board.value(&mut SearchContext::in_memory()).expect("no deadline")
}

fn full(height: usize, width: usize) -> Board {
    Board::full(height, width).expect("test boards are valid")
}

/// The board's graph, the graph form of the game: its free cells in row-major order are the
/// vertices, joined when they share a side.
fn graph_of(rows: &[String]) -> Graph {
    let width = rows[0].len();
    let free = free_of(rows);
    let number = |bit: usize| (free & ((1u64 << bit) - 1)).count_ones() + 1;
    let mut edges = Vec::new();
    for bit in (0..rows.len() * width).filter(|&bit| free >> bit & 1 == 1) {
        if bit % width + 1 < width && free >> (bit + 1) & 1 == 1 {
            edges.push((number(bit), number(bit + 1)));
        }
        if bit + width < 64 && free >> (bit + width) & 1 == 1 {
            edges.push((number(bit), number(bit + width)));
        }
    }
    Graph::new(free.count_ones(), &edges).expect("a simple graph")
}

#[test]
fn agrees_with_brute_force_on_every_board_of_many_small_shapes() {
    for (height, width) in small_board_shapes() {
        let mut brute = BruteForce::node_kayles(height, width);
        for free in 0..1u64 << (height * width) {
            let board = Board::new(&rows_of(height, width, free)).expect("generated boards are valid");
            assert_eq!(value(&board), brute.grundy(free), "board {:?}", board.rows());
        }
    }
}

#[test]
fn agrees_with_brute_force_on_random_boards_with_blocked_cells() {
    // Up to 8×8, with up to 26 free cells (the brute force's reach); a third of them a half turn
    // keeps, where the engine's half-turn rule may answer.
    let mut rng = SplitMix::new(4242);
    for round in 0..240 {
        let (height, width) = (2 + rng.below(7) as usize, 2 + rng.below(7) as usize);
        let cells = height * width;
        let mut free = free_of(&random_board(&mut rng, height, width, 30));
        let most = if round % 10 == 0 { 26 } else { 22 };
        while free.count_ones() > most {
            free &= !(1 << rng.below(cells as u64));
        }
        if round % 3 == 0 {
            let turned = (0..cells).filter(|&bit| free >> bit & 1 == 1).fold(0, |t, bit| t | 1 << (cells - 1 - bit));
            free &= turned;
        }
        let rows = rows_of(height, width, free);
        let board = Board::new(&rows).expect("generated boards are valid");
        assert_eq!(value(&board), BruteForce::node_kayles(height, width).grundy(free), "board {rows:?}");
    }
}

#[test]
fn grids_have_their_published_values() {
    // OEIS A316632: Node Kayles on the 3×n grid, n = 1 to 16 (Brown, Daugherty, Fiorini et al.,
    // "Nimber sequences of Node-Kayles games", J. Integer Sequences 23 (2020), article 20.3.5).
    let three_by_n = [2, 1, 1, 0, 3, 3, 2, 2, 2, 3, 3, 5, 2, 4, 1, 3];
    for (n, expected) in (1..).zip(three_by_n) {
        assert_eq!(value(&full(3, n)), expected, "3x{n}");
        assert_eq!(value(&full(n, 3)), expected, "{n}x3");
    }
    // A316632's comments: the 1×n grid is Dawson's chess (A002187, 0.137), the 2×n ladder is
    // worth n mod 2 (A000035), the 4×n grid 0 (A000004).
    for (n, &path) in PATH.iter().enumerate().take(MAX_SIDE + 1).skip(1) {
        assert_eq!(value(&full(1, n)), u64::from(path), "1x{n}");
    }
    let winding = Board::new(&winding_path()).expect("valid");
    assert_eq!(value(&winding), u64::from(PATH[136]), "a path of 136 cells");
    for n in 1..=24 {
        assert_eq!(value(&full(2, n)), n as u64 % 2, "2x{n}");
    }
    for n in 1..=12 {
        assert_eq!(value(&full(4, n)), 0, "4x{n}");
    }
}

/// The terms of a b-file of the `rows`×n grids' values shipped in docs/results (n from 1, in
/// order, at least `terms`): the board form again up to n = `by_board`, and the graph form (Node
/// Kayles' own engine on the grid graph) up to n = `by_graph`.
fn check_b_file(file: &str, rows: usize, terms: usize, by_board: usize, by_graph: usize) {
    let mut checked = 0;
    for line in file.lines().filter(|line| !line.starts_with('#')) {
        let (n, term) = line.split_once(' ').expect("a b-file line: n a(n)");
        let (n, term): (usize, u64) = (n.parse().expect("n"), term.parse().expect("a(n)"));
        assert_eq!(n, checked + 1, "a b-file's terms follow each other");
        if n <= by_board {
            assert_eq!(value(&full(rows, n)), term, "{rows}x{n}");
        }
        if n <= by_graph {
            let graph = graph_of(&vec!["0".repeat(n); rows]);
            assert_eq!(
                graph.value(&mut SearchContext::in_memory()).expect("no deadline"),
                term,
                "{rows}x{n} as a graph"
            );
        }
        checked = n;
    }
    assert!(checked >= terms, "{checked}");
}

#[test]
fn the_shipped_terms_of_a316632_are_the_engines() {
    // docs/results/b316632.txt, the 3×n grids (OEIS A316632 to n = 16, computed here from 17).
    check_b_file(include_str!("../../../docs/results/b316632.txt"), 3, 27, 20, 12);
}

#[test]
fn the_shipped_terms_of_the_5xn_grids_are_the_engines() {
    // docs/results/node-kayles-5xn.txt, the 5×n grids, computed here (no published sequence found).
    check_b_file(include_str!("../../../docs/results/node-kayles-5xn.txt"), 5, 16, 12, 8);
}

#[test]
fn the_shipped_terms_of_the_6xn_grids_are_the_engines() {
    // docs/results/node-kayles-6xn.txt, the 6×n grids, computed here (no published sequence found).
    check_b_file(include_str!("../../../docs/results/node-kayles-6xn.txt"), 6, 12, 9, 7);
}

#[test]
fn the_graph_form_gives_the_same_values() {
    // Random boards of up to 40 cells, their graphs solved by Node Kayles' own engine.
    let mut rng = SplitMix::new(97);
    for _ in 0..40 {
        let height = 1 + rng.below(5) as usize;
        let width = (1 + rng.below(8) as usize).min(40 / height);
        let rows = random_board(&mut rng, height, width, 25);
        let board = Board::new(&rows).expect("valid");
        let graph = graph_of(&rows);
        let by_graph = graph.value(&mut SearchContext::in_memory()).expect("no deadline");
        assert_eq!(value(&board), by_graph, "{rows:?}");
    }
}

#[test]
fn a_move_takes_the_cell_and_its_neighbours_and_best_moves_win() {
    let board = Board::new(&["000".into(), "010".into()]).expect("valid");
    let moves: Vec<ChosenCell> = board.moves().iter().collect();
    let cell = |row, column| ChosenCell { row, column };
    assert_eq!(moves, [cell(1, 1), cell(1, 2), cell(1, 3), cell(2, 1), cell(2, 3)]);
    assert_eq!(board.play_unchecked(&cell(1, 1)).rows(), ["110", "110"]);
    assert_eq!(board.play_unchecked(&cell(2, 3)).rows(), ["001", "011"]);
    assert!(!board.is_legal(&cell(2, 2)));
    assert!(!board.is_legal(&cell(3, 1)));
    assert!(!board.is_legal(&cell(usize::MAX, 1)));
    let mut rng = SplitMix::new(5);
    for round in 0..50 {
        let (height, width) = if round % 3 == 0 {
            (17 + rng.below(10) as usize, 2)
        } else {
            (2 + rng.below(5) as usize, 2 + rng.below(5) as usize)
        };
        let board = Board::new(&random_board(&mut rng, height, width, 30)).expect("valid");
        let (total, best) = board.best_move(&mut SearchContext::in_memory()).expect("no deadline");
        assert_eq!(total, value(&board));
        let legal: Vec<ChosenCell> = board.moves().iter().collect();
        match best {
            Some(mv) if total != 0 => assert_eq!(value(&board.play_unchecked(&mv)), 0, "{:?} {mv:?}", board.rows()),
            Some(mv) => assert!(legal.contains(&mv)),
            None => assert!(legal.is_empty()),
        }
        for target in 0..total {
            let mv = board.first_move_to(target, &mut SearchContext::in_memory()).expect("no deadline");
            assert_eq!(value(&board.play_unchecked(&mv.expect("a move to every smaller value"))), target);
        }
    }
}
