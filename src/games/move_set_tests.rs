//! The one property every game's move sets must have, checked against the search that is the
//! default of [`Game::moves_to`]: run for every game (and sums of them) on many small positions.

use super::cutting::{Paper, Piece};
use super::diagonal_walk::Walk;
use super::reclamation::{Cell, River};
use super::stone_boxes::{Boxes, StoneBox};
use super::sum::{Sum, SumValue};
use super::tetris::Board;
use super::{analysis, moves_to_by_search, Game, MoveSet, Position, SearchContext, Value};

/// The moves of `set` from number `skip` on, at most `limit` of them.
pub(crate) fn page<M: 'static>(set: &MoveSet<M>, skip: u128, limit: usize) -> Vec<M> {
    set.iter_from(skip).take(limit).collect()
}

/// Checks `position`'s move sets against search:
/// - [`Game::moves`] is in move order (strictly ascending), every move legal, and indexing agrees
///   with iterating;
/// - for each of `targets` and every value a move reaches, [`Game::moves_to`] has the length of the
///   search's set, and its every `get(i)` is legal, reaches the target and is the search's `i`-th
///   move (so comes in move order); pages from any offset agree; [`Game::first_move_to`] is its
///   first move;
/// - [`Game::best_move`] agrees with [`analysis::best_move`] on the value and wins when it can.
pub(crate) fn assert_move_sets_match_search<G: Game + std::fmt::Debug>(position: &G, targets: &[G::Value]) {
    let mut context = SearchContext::in_memory();
    let all = position.moves();
    let moves: Vec<G::Move> = all.iter().collect();
    assert_eq!(all.len(), moves.len() as u128, "{position:?}");
    assert!(moves.windows(2).all(|pair| pair[0] < pair[1]), "{position:?}: moves out of order {moves:?}");
    for (index, mv) in moves.iter().enumerate() {
        assert!(position.is_legal(mv), "{position:?}: {mv:?}");
        assert_eq!(all.get(index as u128).as_ref(), Some(mv), "{position:?}");
    }
    assert_eq!(all.get(all.len()), None);
    let mut wanted: Vec<G::Value> = targets.to_vec();
    for mv in &moves {
        let reached = position.play_unchecked(mv).value(&mut context).expect("no budget");
        if !wanted.contains(&reached) {
            wanted.push(reached);
        }
    }
    for target in wanted {
        let expected = moves_to_by_search(position, target, &mut context).expect("no budget");
        let set = position.moves_to(target, &mut context).expect("no budget");
        assert_eq!(set.len(), expected.len(), "{position:?} to {target:?}");
        for index in 0..set.len() {
            let mv = set.get(index).expect("an index below the length");
            assert!(position.is_legal(&mv), "{position:?} to {target:?}: {mv:?}");
            let reached = position.play_unchecked(&mv).value(&mut context).expect("no budget");
            assert_eq!(reached, target, "{position:?}: {mv:?}");
            assert_eq!(Some(mv), expected.get(index), "{position:?} to {target:?}: move {index}");
        }
        for skip in [0, 1, set.len() / 2, set.len().saturating_sub(1), set.len(), u128::MAX] {
            assert_eq!(page(&set, skip, 3), page(&expected, skip, 3), "{position:?} to {target:?}");
        }
        let first = position.first_move_to(target, &mut context).expect("no budget");
        assert_eq!(first, set.get(0), "{position:?} to {target:?}");
    }
    let (value, best) = position.best_move(&mut context).expect("no budget");
    let (reference, _) = analysis::best_move(position, &mut context).expect("no budget");
    assert_eq!(value, reference, "{position:?}");
    match (best, value.winning_target()) {
        (Some(mv), Some(target)) => {
            assert_eq!(position.play_unchecked(&mv).value(&mut context), Ok(target), "{position:?}: {mv:?}")
        }
        (Some(mv), None) => assert!(position.is_legal(&mv), "{position:?}: {mv:?}"),
        (None, _) => assert!(moves.is_empty(), "{position:?}: no best move"),
    }
}

/// Nimbers every small position is asked about, reached or not.
const NIMBERS: [u64; 6] = [0, 1, 2, 3, 7, 64];

/// The nimber targets, and the special values for games that have them.
fn sum_targets() -> Vec<SumValue> {
    let nimbers = NIMBERS.map(SumValue::Nimber);
    [SumValue::Finished, SumValue::WinsAtOnce].into_iter().chain(nimbers).collect()
}

fn cutting_positions() -> Vec<Paper> {
    let sides: Vec<(u64, u64)> = (1..=5).flat_map(|w| (1..=5).map(move |h| (w, h))).collect();
    let piece = |&(width, height): &(u64, u64)| Piece { width, height };
    let mut positions = vec![Paper::new(Vec::new()).expect("valid")];
    for (i, first) in sides.iter().enumerate() {
        positions.push(Paper::new(vec![piece(first)]).expect("valid"));
        for second in &sides[i..] {
            positions.push(Paper::new(vec![piece(first), piece(second)]).expect("valid"));
        }
    }
    positions.push(Paper::new(vec![piece(&(7, 9)), piece(&(2, 6)), piece(&(4, 4))]).expect("valid"));
    positions
}

fn stone_boxes_positions() -> Vec<Boxes> {
    let mut positions = Vec::new();
    for (s1, s2) in [(0u64, 9u64), (5, 5), (9, 3), (12, 7)] {
        for c1 in 0..=s1 {
            for c2 in 0..=s2 {
                let boxes = vec![StoneBox { capacity: s1, stones: c1 }, StoneBox { capacity: s2, stones: c2 }];
                positions.push(Boxes::new(boxes).expect("valid"));
            }
        }
    }
    positions
}

/// Every legal position of every strip of at most 6 rows.
fn reclamation_positions() -> Vec<River> {
    let mut positions = Vec::new();
    for rows in 1..=6u64 {
        for mask in 0..1u32 << (2 * rows) {
            let cells = (0..2 * rows)
                .filter(|bit| mask >> bit & 1 == 1)
                .map(|bit| Cell { row: bit / 2 + 1, column: bit % 2 + 1 })
                .collect();
            positions.extend(River::new(rows, cells));
        }
    }
    positions
}

fn diagonal_walk_positions() -> Vec<Walk> {
    let mut positions = Vec::new();
    for step in 1..=3 {
        for (rows, columns) in [(1, 1), (1, 4), (3, 3), (4, 6)] {
            for row in 1..=rows {
                for column in 1..=columns {
                    positions.push(Walk::new(rows, columns, step, row, column).expect("valid"));
                }
            }
        }
    }
    positions
}

/// Every 3×4 board with a pattern of blocked cells from a sample, and some line boards.
fn tetris_positions() -> Vec<Board> {
    let board = |rows: &[String]| Board::new(rows).expect("valid");
    let mut positions = Vec::new();
    for mask in (0..1u32 << 12).step_by(37) {
        let rows: Vec<String> =
            (0..3).map(|r| (0..4).map(|c| if mask >> (4 * r + c) & 1 == 1 { '1' } else { '0' }).collect()).collect();
        positions.push(board(&rows));
    }
    positions.push(board(&["0".repeat(20), "0".repeat(20)]));
    positions.push(board(&["00000100000000000010".into(), "00000000000100000000".into()]));
    positions.push(board(&vec!["00".to_string(); 30]));
    positions
}

#[test]
fn every_game_matches_search_on_small_positions() {
    for position in cutting_positions() {
        assert_move_sets_match_search(&position, &sum_targets());
    }
    for position in stone_boxes_positions() {
        assert_move_sets_match_search(&position, &NIMBERS);
    }
    for position in reclamation_positions() {
        assert_move_sets_match_search(&position, &NIMBERS);
    }
    for position in diagonal_walk_positions() {
        assert_move_sets_match_search(&position, &NIMBERS);
    }
    for position in tetris_positions() {
        assert_move_sets_match_search(&position, &NIMBERS);
    }
    // Sums mixing the games, the cutting game's finished and won-at-once positions among them.
    let pool = [
        Position::from(Paper::new(vec![Piece { width: 4, height: 3 }]).expect("valid")),
        Position::from(Paper::new(vec![Piece { width: 3, height: 1 }]).expect("valid")),
        Position::from(Paper::new(vec![Piece { width: 1, height: 1 }]).expect("valid")),
        Position::from(Boxes::new(vec![StoneBox { capacity: 9, stones: 2 }]).expect("valid")),
        Position::from(River::new(5, vec![Cell { row: 2, column: 1 }]).expect("valid")),
        Position::from(Walk::new(4, 5, 2, 1, 1).expect("valid")),
        Position::from(Board::new(&["0000".into(), "0000".into(), "0100".into()]).expect("valid")),
    ];
    for first in &pool {
        assert_move_sets_match_search(first, &sum_targets());
        for second in &pool {
            let sum = Position::Sum(Sum::new(vec![first.clone(), second.clone()], 0).expect("valid"));
            assert_move_sets_match_search(&sum, &sum_targets());
        }
    }
}
