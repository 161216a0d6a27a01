//! Tests of the 2×2 placement game against a brute force written from the literal rules.

use std::collections::HashMap;
use std::time::Instant;

use super::*;
use crate::games::memory_memo::MemoryMemo;
use crate::games::placement::{components, BoardPoints, PointSet, Wide, Word};
use crate::games::{
    Budget, FieldPath, Game, GameTag, Interrupted, Memo, NoMemo, Outcome, SearchContext, SetupError, Value,
};
use crate::random::SplitMix;
use crate::testing::{random_board, rows_of, small_board_shapes, BoardBruteForce as BruteForce};

fn board(rows: &[&str]) -> Board {
    let rows: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    Board::new(&rows).expect("test boards are valid")
}

fn full(height: usize, width: usize) -> Board {
    Board::new(&vec!["0".repeat(width); height]).expect("test boards are valid")
}

fn value(board: &Board) -> u64 {
    let mut context = SearchContext::in_memory();
    board.value(&mut context).expect("no deadline").nimber().expect("normal play")
}

/// A number in `0..n`.
fn index_below(rng: &mut SplitMix, n: usize) -> usize {
    rng.below(n as u64) as usize
}

/// A random `height`×`width` board with at most `max_free` free cells, as a bitmask.
fn random_free(rng: &mut SplitMix, height: usize, width: usize, max_free: u32) -> u64 {
    let cells = height * width;
    let mut free = if cells == 64 { u64::MAX } else { (1u64 << cells) - 1 };
    while free.count_ones() > max_free {
        free &= !(1 << index_below(rng, cells));
    }
    free
}

#[test]
fn agrees_with_brute_force_on_every_board_of_many_small_shapes() {
    for (height, width) in small_board_shapes() {
        let mut brute = BruteForce::new(height, width);
        for free in 0..1u64 << (height * width) {
            let rows = rows_of(height, width, free);
            let board = Board::new(&rows).expect("generated boards are valid");
            assert_eq!(value(&board), brute.grundy(free), "board {rows:?}");
        }
    }
}

#[test]
fn agrees_with_brute_force_on_random_boards() {
    let mut rng = SplitMix::new(1760);
    for round in 0..400 {
        let (height, width) = if round % 2 == 0 {
            (2 + index_below(&mut rng, 5), 2 + index_below(&mut rng, 5))
        } else {
            (2 + index_below(&mut rng, 7), 2 + index_below(&mut rng, 7))
        };
        let max_free = if round % 10 == 0 { 28 } else { 20 };
        let free = random_free(&mut rng, height, width, max_free);
        let rows = rows_of(height, width, free);
        let mut brute = BruteForce::new(height, width);
        let board = Board::new(&rows).expect("generated boards are valid");
        assert_eq!(value(&board), brute.grundy(free), "board {rows:?}");
    }
}

/// Node Kayles on the placements of a board (any board: at most 225 placements), by full mex
/// over options and splitting into components, memoized per set, without symmetry: an
/// independent check of the engine on boards too large for [`BruteForce`]. Placement `(r, c)`
/// is bit `r·columns + c`.
struct PlainKayles {
    overlapping: Vec<Wide<4>>,
    memo: HashMap<Wide<4>, u64, foldhash::fast::FixedState>,
}

impl PlainKayles {
    fn new(board: &Board) -> (PlainKayles, Wide<4>) {
        let (rows, columns) = (board.height().saturating_sub(1), board.width().saturating_sub(1));
        let bit = |r: usize, c: usize| Wide::<4>::default().with_bits_at(1, (r * columns + c) as u32);
        let mut set = Wide::default();
        let mut overlapping = vec![Wide::default(); rows * columns];
        for r in 0..rows {
            for c in 0..columns {
                let square = [(r, c), (r, c + 1), (r + 1, c), (r + 1, c + 1)];
                if square.iter().all(|&(i, j)| board.is_free(i + 1, j + 1)) {
                    set = set | bit(r, c);
                }
                for i in r.saturating_sub(1)..=(r + 1).min(rows - 1) {
                    for j in c.saturating_sub(1)..=(c + 1).min(columns - 1) {
                        overlapping[r * columns + c] = overlapping[r * columns + c] | bit(i, j);
                    }
                }
            }
        }
        (PlainKayles { overlapping, memo: HashMap::default() }, set)
    }

    fn component_of(&self, set: Wide<4>) -> Wide<4> {
        let mut part = set.lowest();
        loop {
            let mut grown = part;
            let mut rest = part;
            while !rest.is_zero() {
                grown = grown | (self.overlapping[rest.trailing_zeros() as usize] & set);
                rest = rest.without_lowest();
            }
            if grown == part {
                return part;
            }
            part = grown;
        }
    }

    fn value(&mut self, mut set: Wide<4>) -> u64 {
        let mut total = 0;
        while !set.is_zero() {
            let part = self.component_of(set);
            set = set & !part;
            total ^= self.connected(part);
        }
        total
    }

    fn connected(&mut self, part: Wide<4>) -> u64 {
        if let Some(&g) = self.memo.get(&part) {
            return g;
        }
        let mut options = Vec::new();
        let mut rest = part;
        while !rest.is_zero() {
            let p = rest.trailing_zeros() as usize;
            rest = rest.without_lowest();
            options.push(self.value(part & !self.overlapping[p]));
        }
        let g = crate::games::mex(options);
        self.memo.insert(part, g);
        g
    }
}

#[test]
fn agrees_with_plain_component_search_on_larger_boards() {
    let mut rng = SplitMix::new(2024);
    let mut wide_components = 0;
    for round in 0..45 {
        // 9×9 boards (windows only), 10×10 to 12×12 boards (components wider than a window).
        let side = if round < 30 { 9 } else { 10 + index_below(&mut rng, 3) };
        let cells = side * side;
        let blocked =
            if round < 30 { 8 + index_below(&mut rng, 20) } else { cells / 5 + index_below(&mut rng, cells / 8) };
        let mut free = vec![true; cells];
        for _ in 0..blocked {
            free[index_below(&mut rng, cells)] = false;
        }
        let rows: Vec<String> =
            free.chunks(side).map(|row| row.iter().map(|&f| if f { '0' } else { '1' }).collect()).collect();
        let board = Board::new(&rows).expect("generated boards are valid");
        let (mut plain, set) = PlainKayles::new(&board);
        assert_eq!(value(&board), plain.value(set), "board {rows:?}");
        let wide = |part: BoardPoints| {
            let (_, height, width) = part.at_origin();
            height > 8 || width > 8
        };
        wide_components += components::<Square, _>(board.points()).filter(|&part| wide(part)).count();
    }
    // The larger boards do exercise the search on the whole grid.
    assert!(wide_components >= 5, "{wide_components}");
}

#[test]
fn long_boards_by_cell_count_agree_with_plain_component_search() {
    // Every shape the cell limit allows past 16 across, both ways round, sparse enough for the
    // plain search; and the long components they hold are searched in long bands.
    let mut rng = SplitMix::new(256);
    let mut long_components = 0;
    for (height, width, blocked_percent) in
        [(3, 30, 5), (3, 64, 8), (4, 60, 22), (8, 32, 33), (5, 51, 30), (14, 18, 33), (2, 64, 10), (1, 64, 0)]
    {
        for round in 0..6 {
            let board = Board::new(&random_board(&mut rng, height, width, blocked_percent))
                .expect("generated boards are valid");
            let turned: Vec<String> = (0..width)
                .map(|c| (0..height).map(|r| if board.is_free(r + 1, c + 1) { '0' } else { '1' }).collect())
                .collect();
            let (mut plain, set) = PlainKayles::new(&board);
            let expected = plain.value(set);
            assert_eq!(value(&board), expected, "{:?}", board.rows());
            assert_eq!(value(&Board::new(&turned).expect("turned boards are valid")), expected, "{turned:?}");
            long_components += board
                .points()
                .split(BoardPoints::with_king_neighbours, |_| false)
                .filter(|&part| {
                    let (_, h, w) = part.at_origin();
                    h.max(w) > 16 && h.min(w) > 1
                })
                .count();
            if round == 0 {
                let (total, best) = board.best_move(&mut SearchContext::in_memory()).expect("no deadline");
                assert_eq!(total, expected);
                if let Some(mv) = best.filter(|_| expected != 0) {
                    assert_eq!(value(&board.play_unchecked(&mv)), 0, "{:?} {mv:?}", board.rows());
                }
            }
        }
    }
    assert!(long_components >= 6, "{long_components}");
}

#[test]
fn agrees_with_brute_force_on_contest_size_boards() {
    // 7×7 boards with 9 blocked border cells: 40 free cells, the most placements the limit allows.
    let mut rng = SplitMix::new(1760);
    let border: Vec<usize> = (0..49).filter(|i| [i / 7, i % 7].iter().any(|&x| x == 0 || x == 6)).collect();
    for _ in 0..40 {
        let mut free = (1u64 << 49) - 1;
        while free.count_ones() > 40 {
            free &= !(1 << border[index_below(&mut rng, border.len())]);
        }
        let rows = rows_of(7, 7, free);
        let board = Board::new(&rows).expect("generated boards are valid");
        assert_eq!(value(&board), BruteForce::new(7, 7).grundy(free), "board {rows:?}");
    }
}

/// The octal game 0.137 from its own definition: from a heap, remove 1 token only if it is the
/// whole heap; remove 2 leaving one heap or none; remove 3 leaving zero, one or two heaps.
fn octal_0137(up_to: usize) -> Vec<u64> {
    let mut values = vec![0u64; up_to + 1];
    for n in 1..=up_to {
        let mut options = Vec::new();
        if n == 1 {
            options.push(0);
        }
        if n >= 2 {
            options.push(values[n - 2]);
        }
        if n >= 3 {
            for left in 0..=n - 3 {
                options.push(values[left] ^ values[n - 3 - left]);
            }
        }
        values[n] = crate::games::mex(options);
    }
    values
}

#[test]
fn full_two_row_boards_are_octal_0137_and_three_rows_match() {
    let octal = octal_0137(60);
    // The known period of 0.137 (34, last exception at 51) confirms the independent table.
    assert!((52..=60).all(|n| octal[n] == octal[n - 34]));
    for n in 1..=60 {
        let two = value(&full(2, n));
        assert_eq!(two, octal[n - 1], "2x{n}");
        assert_eq!(value(&full(n, 2)), two, "{n}x2");
        // A placement of a 3-row board removes both rows of placements in three columns.
        assert_eq!(value(&full(3, n)), two, "3x{n}");
        assert_eq!(value(&full(n, 3)), two, "{n}x3");
    }
}

#[test]
fn hdu_1760_samples() {
    let first = full(4, 4);
    assert_eq!(first.value(&mut SearchContext::in_memory()).map(Value::outcome), Ok(Outcome::NextPlayerWins));
    let second = board(&["0000", "0010", "0100", "0000"]);
    assert_eq!(second.value(&mut SearchContext::in_memory()).map(Value::outcome), Ok(Outcome::PreviousPlayerWins));
}

#[test]
fn best_move_and_move_to_reach_their_targets() {
    let mut rng = SplitMix::new(42);
    let mut boards: Vec<Board> = (4..=8).map(|n| full(n, n)).collect();
    for _ in 0..60 {
        let (height, width) = (2 + index_below(&mut rng, 6), 2 + index_below(&mut rng, 6));
        let free = random_free(&mut rng, height, width, 30);
        boards.push(Board::new(&rows_of(height, width, free)).expect("generated boards are valid"));
    }
    for board in boards {
        let mut context = SearchContext::in_memory();
        let (v, mv) = board.best_move(&mut context).expect("no deadline");
        let g = v.nimber().expect("normal play");
        assert_eq!(g, board.value(&mut context).expect("no deadline"));
        match mv {
            None => assert_eq!(board.moves().len(), 0),
            Some(mv) => {
                assert!(board.moves().iter().any(|m| m == mv));
                let after = value(&board.play_unchecked(&mv));
                if g != 0 {
                    assert_eq!(after, 0, "winning move {mv:?} on {:?}", board.rows());
                }
            }
        }
        for target in 0..g {
            let mv = board.first_move_to(target, &mut context).expect("no deadline");
            let mv = mv.expect("every smaller value is an option");
            assert_eq!(value(&board.play_unchecked(&mv)), target);
        }
    }
}

#[test]
fn value_is_invariant_under_the_symmetries_of_the_board() {
    let mut rng = SplitMix::new(7);
    for _ in 0..40 {
        let (height, width) = (2 + index_below(&mut rng, 7), 2 + index_below(&mut rng, 7));
        let free = random_free(&mut rng, height, width, 40);
        let rows = rows_of(height, width, free);
        let cell = |r: usize, c: usize| rows[r].as_bytes()[c] as char;
        let turned: Vec<String> = (0..width).map(|c| (0..height).rev().map(|r| cell(r, c)).collect()).collect();
        let mirrored: Vec<String> = rows.iter().map(|r| r.chars().rev().collect()).collect();
        let g = value(&Board::new(&rows).expect("valid"));
        assert_eq!(value(&Board::new(&turned).expect("valid")), g);
        assert_eq!(value(&Board::new(&mirrored).expect("valid")), g);
    }
}

#[test]
fn moves_are_row_major_and_play_blocks_the_square() {
    let b = board(&["000", "000", "001"]);
    let moves: Vec<Placement> = b.moves().iter().collect();
    let expected = [(1, 1), (1, 2), (2, 1)].map(|(row, column)| Placement { row, column });
    assert_eq!(moves, expected);
    let after = b.play_unchecked(&Placement { row: 1, column: 2 });
    assert_eq!(after.rows(), ["011", "011", "001"]);
    assert_eq!((after.height(), after.width()), (3, 3));
    assert!(after.is_free(1, 1) && !after.is_free(1, 2) && !after.is_free(4, 1));
    assert_eq!(board(&["..#", "#.."]).rows(), ["001", "100"]);
    // A board too high for its placements to lie as they are: still row-major.
    let tall: Vec<Placement> = full(30, 3).moves().iter().collect();
    let expected: Vec<Placement> =
        (1..=29).flat_map(|row| (1..=2).map(move |column| Placement { row, column })).collect();
    assert_eq!(tall, expected);
    // Squares off the board are not legal.
    assert!(!b.is_legal(&Placement { row: usize::MAX, column: 3 }));
    assert!(!b.is_legal(&Placement { row: 2, column: 2 }));
}

#[test]
fn board_errors_name_the_field() {
    let rows = |rows: &[&str]| -> Vec<String> { rows.iter().map(|r| r.to_string()).collect() };
    let board_of = |height: usize, width: usize| Board::new(&vec!["0".repeat(width); height]);
    assert_eq!(Board::new(&[]), Err(BoardError::Empty));
    assert_eq!(Board::new(&rows(&[""])), Err(BoardError::Empty));
    // Any rectangle of at most 256 cells, each side at most 64.
    for (height, width) in [(16, 16), (3, 30), (4, 60), (8, 32), (4, 64), (64, 4), (1, 64), (64, 1), (2, 64), (15, 17)]
    {
        assert!(board_of(height, width).is_ok(), "{height}x{width}");
    }
    assert_eq!(board_of(65, 1), Err(BoardError::TooManyRows { rows: 65 }));
    assert_eq!(board_of(1, 65), Err(BoardError::TooManyColumns { columns: 65 }));
    assert_eq!(board_of(17, 16), Err(BoardError::TooManyCells { rows: 17, columns: 16 }));
    assert_eq!(board_of(5, 52), Err(BoardError::TooManyCells { rows: 5, columns: 52 }));
    let ragged = Board::new(&rows(&["000", "000", "00"])).unwrap_err();
    assert_eq!(ragged, BoardError::RaggedRow { row: 2, length: 2, expected: 3 });
    assert_eq!(ragged.to_string(), "rows[2] has 2 columns but rows[0] has 3");
    let bad = Board::new(&rows(&["000", "0x0"])).unwrap_err();
    assert_eq!(bad, BoardError::BadCell { row: 1, column: 2, found: 'x' });
    assert!(bad.to_string().starts_with("rows[1] column 2 is 'x'"));
    assert!(BoardError::TooManyRows { rows: 65 }.to_string().contains("limit is 64"));
    let cells = BoardError::TooManyCells { rows: 17, columns: 16 };
    assert_eq!(cells.field(), FieldPath::field("rows"));
    let cells = cells.to_string();
    assert!(cells.contains("272 cells") && cells.contains("limit is 256"), "{cells}");
}

#[test]
fn persistent_memo_makes_a_second_solve_free_and_deadlines_interrupt() {
    let memo = MemoryMemo::default();
    let board = full(7, 7);
    let mut first = SearchContext::new(Budget::unlimited(), &memo);
    let v = board.value(&mut first).expect("no deadline");
    assert!(first.stats.positions_computed > 0);
    assert!(memo.values() > 0);
    assert_eq!(v, value(&board));

    let mut second = SearchContext::new(Budget::unlimited(), &memo);
    assert_eq!(board.value(&mut second), Ok(v));
    assert_eq!(second.stats.positions_computed, 0);
    assert!(second.stats.cache_hits > 0);

    let expired = Budget::new(Some(Instant::now()), Default::default());
    let mut late = SearchContext::new(expired, &NoMemo);
    assert_eq!(full(10, 10).value(&mut late), Err(Interrupted::DeadlineExceeded));
}

#[test]
fn a_tiny_table_limit_changes_nothing_but_the_work() {
    for (height, width) in [(7, 8), (6, 9), (5, 11)] {
        let board = full(height, width);
        let mut roomy = SearchContext::in_memory();
        let expected = board.value(&mut roomy);
        let mut tight = SearchContext::in_memory();
        tight.table_limit = 200;
        assert_eq!(board.value(&mut tight), expected);
        assert!(tight.stats.positions_computed >= roomy.stats.positions_computed);
    }
}

#[test]
fn an_interrupted_solve_resumes_from_the_memo() {
    let board = full(9, 9);
    let mut cold = SearchContext::in_memory();
    let expected = board.value(&mut cold).expect("no deadline");
    let memo = MemoryMemo::default();
    let soon = Budget::new(Some(Instant::now() + std::time::Duration::from_millis(20)), Default::default());
    let mut first = SearchContext::new(soon, &memo);
    match board.value(&mut first) {
        Err(interrupted) => {
            assert_eq!(interrupted, Interrupted::DeadlineExceeded);
            let mut retry = SearchContext::new(Budget::unlimited(), &memo);
            assert_eq!(board.value(&mut retry), Ok(expected));
            assert!(retry.stats.positions_computed < cold.stats.positions_computed);
            assert!(retry.stats.cache_hits > 0);
        }
        // A machine fast enough to finish in time.
        Ok(value) => assert_eq!(value, expected),
    }
}

#[test]
fn thin_long_boards_match_the_brute_force_both_ways_round() {
    let mut rng = SplitMix::new(2449);
    for _ in 0..300 {
        let length = 17 + index_below(&mut rng, 16);
        let cells = 2 * length;
        let free = (0..cells).filter(|_| rng.below(100) < 85).fold(0u64, |free, cell| free | 1 << cell);
        let wide = Board::new(&rows_of(2, length, free)).expect("a thin board");
        let expected = BruteForce::new(2, length).grundy(free);
        assert_eq!(value(&wide), expected, "{:?}", wide.rows());
        // The same board turned: a column of cell pairs.
        let turned: Vec<String> = (0..length)
            .map(|c| (0..2).map(|r| if free >> (r * length + c) & 1 == 1 { '0' } else { '1' }).collect())
            .collect();
        let tall = Board::new(&turned).expect("a thin board");
        assert_eq!(value(&tall), expected, "{turned:?}");
        for board in [&wide, &tall] {
            let legal: Vec<Placement> = board.moves().iter().collect();
            assert_eq!(legal.len(), BruteForce::new(2, length).pieces().iter().filter(|&&sq| free & sq == sq).count());
            let (total, best) = board.best_move(&mut SearchContext::in_memory()).unwrap();
            assert_eq!(total, expected);
            match best {
                Some(mv) if expected != 0 => {
                    assert_eq!(value(&board.play_unchecked(&mv)), 0, "{:?} {mv:?}", board.rows())
                }
                Some(mv) => assert!(legal.contains(&mv)),
                None => assert!(legal.is_empty()),
            }
        }
    }
    // One row or one column: no square fits.
    assert_eq!(value(&Board::new(&["0".repeat(49)]).unwrap()), 0);
    assert_eq!(value(&Board::new(&vec!["0".to_string(); 49]).unwrap()), 0);
}

#[test]
fn boards_whose_components_are_memoized_are_valued_without_search() {
    let mut rng = SplitMix::new(6);
    for round in 0..60 {
        let (height, width) = (4 + index_below(&mut rng, 5), 4 + index_below(&mut rng, 5));
        let free = random_free(&mut rng, height, width, if round % 3 == 0 { 64 } else { 30 });
        let board = Board::new(&rows_of(height, width, free)).expect("generated boards are valid");
        let memo = MemoryMemo::default();
        let lookup = |game: GameTag, key: &[u8]| memo.get(game, key);
        let before = board.value_without_search(&lookup);
        let mut context = SearchContext::new(Budget::unlimited(), &memo);
        let expected = board.value(&mut context).expect("no deadline");
        // Before the solve only boards without searched components are known; after it every one is,
        // with the solve's value, and with one lookup per memoized top-level component.
        if context.stats.positions_computed > 0 {
            assert_eq!(before, None, "{:?}", board.rows());
        } else if let Some((value, _)) = before {
            assert_eq!(value, expected);
        }
        let (value, found) = board.value_without_search(&lookup).expect("every component is memoized");
        assert_eq!(value, expected, "{:?}", board.rows());
        assert!(found <= memo.values() as u64);
    }
}

#[test]
fn memoized_values_up_to_the_number_of_placements_are_trusted() {
    // A full 10×10 board is one component of 81 placements: any value up to 81 can be its value
    // (values above 64 used to be refused), and nothing above.
    let board = full(10, 10);
    for stored in [0, 64, 65, 81] {
        let lookup = |_: GameTag, _: &[u8]| Some(stored);
        assert_eq!(board.value_without_search(&lookup), Some((stored, 1)), "{stored}");
    }
    let lying = |_: GameTag, _: &[u8]| Some(82);
    assert_eq!(board.value_without_search(&lying), None);
    // The same bound on a small component: 25 placements.
    let lying = |_: GameTag, _: &[u8]| Some(26);
    assert_eq!(full(6, 6).value_without_search(&lying), None);
}
