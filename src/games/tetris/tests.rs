//! Tests of the 2×2 placement game against a brute force written from the literal rules.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use super::bits::{transpose, Canonical, Placements};
use super::strip::Strip;
use super::window::{self, Window};
use super::*;
use crate::games::{Budget, GameTag, Memo, NoMemo, Outcome, Value};
use crate::random::SplitMix;
use crate::testing::BoardBruteForce as BruteForce;

/// The rows of a `height`×`width` board whose free cells are the bits of `free`.
fn rows_of(height: usize, width: usize, free: u64) -> Vec<String> {
    (0..height)
        .map(|r| (0..width).map(|c| if free >> (r * width + c) & 1 == 1 { '0' } else { '1' }).collect())
        .collect()
}

fn board(rows: &[&str]) -> Board {
    let rows: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    Board::new(&rows).expect("test boards are valid")
}

fn full(height: usize, width: usize) -> Board {
    Board::new(&vec!["0".repeat(width); height]).expect("test boards are valid")
}

fn value(board: &Board) -> u64 {
    let mut solver = SearchContext::in_memory();
    board.value(&mut solver).expect("no deadline").nimber().expect("normal play")
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
fn agrees_with_brute_force_on_every_board_up_to_4x4_and_2x7() {
    let mut sizes: Vec<(usize, usize)> = (1..=4).flat_map(|h| (1..=4).map(move |w| (h, w))).collect();
    sizes.push((2, 7));
    sizes.push((7, 2));
    for (height, width) in sizes {
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

/// Node Kayles on the placements of a board (at most 11×11 of them), by full mex over options
/// and splitting into components, memoized per set, without symmetry: an independent check of
/// the engine on boards too large for [`BruteForce`].
struct PlainKayles {
    overlapping: Vec<u128>,
    memo: HashMap<u128, u64>,
}

impl PlainKayles {
    fn new(board: &Board) -> (PlainKayles, u128) {
        let (rows, columns) = (board.height() - 1, board.width() - 1);
        assert!(rows <= 11 && columns <= 11);
        let mut set = 0u128;
        let mut overlapping = vec![0u128; 121];
        for r in 0..rows {
            for c in 0..columns {
                let square = [(r, c), (r, c + 1), (r + 1, c), (r + 1, c + 1)];
                if square.iter().all(|&(i, j)| board.is_free(i + 1, j + 1)) {
                    set |= 1 << (r * 11 + c);
                }
                for i in r.saturating_sub(1)..=(r + 1).min(rows - 1) {
                    for j in c.saturating_sub(1)..=(c + 1).min(columns - 1) {
                        overlapping[r * 11 + c] |= 1 << (i * 11 + j);
                    }
                }
            }
        }
        (PlainKayles { overlapping, memo: HashMap::new() }, set)
    }

    fn component_of(&self, set: u128) -> u128 {
        let mut part = set & set.wrapping_neg();
        loop {
            let mut grown = part;
            let mut rest = part;
            while rest != 0 {
                grown |= self.overlapping[rest.trailing_zeros() as usize] & set;
                rest &= rest - 1;
            }
            if grown == part {
                return part;
            }
            part = grown;
        }
    }

    fn value(&mut self, mut set: u128) -> u64 {
        let mut total = 0;
        while set != 0 {
            let part = self.component_of(set);
            set &= !part;
            total ^= self.connected(part);
        }
        total
    }

    fn connected(&mut self, part: u128) -> u64 {
        if let Some(&g) = self.memo.get(&part) {
            return g;
        }
        let mut options = Vec::new();
        let mut rest = part;
        while rest != 0 {
            let p = rest.trailing_zeros() as usize;
            rest &= rest - 1;
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
        let wide = |part: Placements| {
            let (_, height, width) = part.at_origin();
            height > 8 || width > 8
        };
        wide_components += board.placements().components().filter(|&part| wide(part)).count();
    }
    // The larger boards do exercise the search on the whole grid.
    assert!(wide_components >= 5, "{wide_components}");
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
        if n <= MAX_SIDE {
            assert_eq!(value(&full(3, n)), two, "3x{n}");
            assert_eq!(value(&full(n, 3)), two, "{n}x3");
        }
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
        let mut solver = SearchContext::in_memory();
        let (v, mv) = board.best_move(&mut solver).expect("no deadline");
        let g = v.nimber().expect("normal play");
        assert_eq!(g, board.value(&mut solver).expect("no deadline"));
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
            let mv = board.first_move_to(target, &mut solver).expect("no deadline");
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
fn canonical_form_is_shared_by_all_images() {
    let mut rng = SplitMix::new(99);
    for _ in 0..200 {
        let mut rows = [0u16; 16];
        for row in rows.iter_mut().take(GRID) {
            *row = (rng.next_u64() as u16) & 0x7FFF;
        }
        assert_eq!(transpose(transpose(rows)), rows);
        let set = Placements::from_rows(&rows);
        let t = transpose(rows);
        for (r, row) in rows.iter().enumerate() {
            for (c, column) in t.iter().enumerate() {
                assert_eq!(row >> c & 1, column >> r & 1);
            }
        }
        let mirrored: [u16; 16] = std::array::from_fn(|r| rows[r].reverse_bits() >> 1);
        let flipped: [u16; 16] = std::array::from_fn(|r| if r < GRID { rows[GRID - 1 - r] } else { 0 });
        let canonical = Canonical::of(set);
        for image in [t, mirrored, flipped] {
            assert_eq!(Canonical::of(Placements::from_rows(&image)), canonical);
        }
    }
}

#[test]
fn window_canonical_form_is_shared_by_all_images() {
    let mut rng = SplitMix::new(5);
    for round in 0..2000 {
        // Sparse and dense sets, shifted anywhere in the window.
        let mut x = rng.next_u64() & rng.next_u64() | if round % 2 == 0 { rng.next_u64() } else { 0 };
        x >>= index_below(&mut rng, 20);
        if x == 0 {
            continue;
        }
        let t = window::transpose(x);
        for r in 0..8 {
            for c in 0..8 {
                assert_eq!(x >> (8 * r + c) & 1, t >> (8 * c + r) & 1);
            }
        }
        let mirrored = x.reverse_bits().swap_bytes();
        let canonical = |x: u64| {
            let (origin, height, width) = Window(x).at_origin();
            origin.canonical(height, width)
        };
        let expected = canonical(x);
        for image in [t, mirrored, x.swap_bytes(), t.swap_bytes()] {
            assert_eq!(canonical(image), expected);
        }
        // The same set on the whole grid has the same value either way.
        let rows: [u16; 16] = std::array::from_fn(|r| if r < 8 { u16::from((x >> (8 * r)) as u8) } else { 0 });
        assert_eq!(Placements::from_rows(&rows).len(), Window(x).len());
    }
}

#[test]
fn strip_canonical_form_is_shared_by_all_images() {
    let mut rng = SplitMix::new(11);
    for _ in 0..2000 {
        let (height, width) = (1 + index_below(&mut rng, 8), 9 + index_below(&mut rng, 7));
        let mut rows = [0u16; 8];
        for row in rows.iter_mut().take(height) {
            *row = (rng.next_u64() & rng.next_u64()) as u16 & ((1 << width) - 1);
        }
        let strip = Strip::from_rows(&rows);
        if strip.len() == 0 {
            continue;
        }
        let (origin, h, w) = strip.at_origin();
        let expected = origin.canonical(h, w);
        let flipped: Vec<u16> = rows[..height].iter().rev().copied().collect();
        let mirrored: Vec<u16> = rows[..height].iter().map(|r| r.reverse_bits() >> (16 - width)).collect();
        for image in [flipped, mirrored] {
            let (origin, h2, w2) = Strip::from_rows(&image).at_origin();
            assert_eq!((h2, w2), (h, w));
            assert_eq!(origin.canonical(h2, w2), expected);
        }
        for symmetry in 0..4 {
            let image = origin.image(h, w, symmetry);
            assert_eq!(image.len(), origin.len());
            assert_eq!(image.at_origin(), (image, h, w));
        }
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
    // Squares off the board are not legal.
    assert!(!b.is_legal(&Placement { row: usize::MAX, column: 3 }));
    assert!(!b.is_legal(&Placement { row: 2, column: 2 }));
}

#[test]
fn board_errors_name_the_field() {
    let rows = |rows: &[&str]| -> Vec<String> { rows.iter().map(|r| r.to_string()).collect() };
    assert_eq!(Board::new(&[]), Err(TetrisError::Empty));
    assert_eq!(Board::new(&rows(&[""])), Err(TetrisError::Empty));
    assert_eq!(Board::new(&rows(&["000"; 17])), Err(TetrisError::TooManyRows { rows: 17 }));
    let wide = "0".repeat(17);
    assert_eq!(Board::new(&rows(&[&wide, &wide, &wide])), Err(TetrisError::TooManyColumns { columns: 17 }));
    // Thin boards may be longer: every contest board (N·M < 50) fits.
    assert!(Board::new(&rows(&["00"; 64])).is_ok());
    assert!(Board::new(&rows(&[&"0".repeat(64)])).is_ok());
    assert_eq!(Board::new(&rows(&["00"; 65])), Err(TetrisError::TooManyRows { rows: 65 }));
    let long = "0".repeat(65);
    assert_eq!(Board::new(&rows(&[&long, &long])), Err(TetrisError::TooManyColumns { columns: 65 }));
    let ragged = Board::new(&rows(&["000", "000", "00"])).unwrap_err();
    assert_eq!(ragged, TetrisError::RaggedRow { row: 2, length: 2, expected: 3 });
    assert_eq!(ragged.to_string(), "rows[2] has 2 columns but rows[0] has 3");
    let bad = Board::new(&rows(&["000", "0x0"])).unwrap_err();
    assert_eq!(bad, TetrisError::BadCell { row: 1, column: 2, found: 'x' });
    assert!(bad.to_string().starts_with("rows[1] column 2 is 'x'"));
    assert!(TetrisError::TooManyRows { rows: 17 }.to_string().contains("limit is 16"));
    assert!(Board::new(&rows(&["0"; 16])).is_ok());
}

/// A persistent memo kept in memory.
#[derive(Default)]
struct FakeMemo(Mutex<HashMap<Vec<u8>, u64>>);

impl Memo for FakeMemo {
    fn get(&self, game: GameTag, key: &[u8]) -> Option<u64> {
        assert_eq!(game, GameTag::Tetris);
        self.0.lock().expect("not poisoned").get(key).copied()
    }
    fn put(&self, game: GameTag, key: &[u8], value: u64, _cost: u64) {
        assert_eq!(game, GameTag::Tetris);
        self.0.lock().expect("not poisoned").insert(key.to_vec(), value);
    }
    fn flush(&self) {}
}

#[test]
fn persistent_memo_makes_a_second_solve_free_and_deadlines_interrupt() {
    let memo = FakeMemo::default();
    let board = full(7, 7);
    let mut first = SearchContext::new(Budget::unlimited(), &memo);
    let v = board.value(&mut first).expect("no deadline");
    assert!(first.stats.positions_computed > 0);
    assert!(!memo.0.lock().expect("not poisoned").is_empty());
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
    let memo = FakeMemo::default();
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
            assert_eq!(legal.len(), BruteForce::new(2, length).squares().iter().filter(|&&sq| free & sq == sq).count());
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
        let memo = FakeMemo::default();
        let lookup = |key: &[u8]| memo.get(GameTag::Tetris, key);
        let before = board.value_without_search(&lookup);
        let mut solver = SearchContext::new(Budget::unlimited(), &memo);
        let expected = board.value(&mut solver).expect("no deadline");
        // Before the solve only boards without searched components are known; after it every one is,
        // with the solve's value, and with one lookup per memoized top-level component.
        if solver.stats.positions_computed > 0 {
            assert_eq!(before, None, "{:?}", board.rows());
        } else if let Some((value, _)) = before {
            assert_eq!(value, expected);
        }
        let (value, found) = board.value_without_search(&lookup).expect("every component is memoized");
        assert_eq!(value, expected, "{:?}", board.rows());
        assert!(found <= memo.0.lock().expect("not poisoned").len() as u64);
    }
    // A value above any component's bound is not trusted.
    let board = full(6, 6);
    let lying = |_: &[u8]| Some(65);
    assert_eq!(board.value_without_search(&lying), None);
}
