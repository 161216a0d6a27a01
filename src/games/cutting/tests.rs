//! Tests of the cutting game, against a brute force written straight from the rules.

use super::*;
use crate::games::move_set_tests::{assert_move_sets_match_search, page};
use crate::games::{mex, Outcome, Value};
use crate::random::SplitMix;
use std::collections::HashMap;

fn paper(sizes: &[(u64, u64)]) -> Paper {
    let pieces = sizes.iter().map(|&(width, height)| Piece { width, height }).collect();
    Paper::new(pieces).expect("valid pieces")
}

fn value_of(position: &Paper) -> SumValue {
    position.value(&mut SearchContext::in_memory()).expect("no budget")
}

/// Dawson's Kayles straight from its recursion.
fn dawson_kayles_by_recursion(limit: usize) -> Vec<u64> {
    let mut values = vec![0u64; limit];
    for n in 2..limit {
        values[n] = mex((0..=n - 2).map(|a| values[a] ^ values[n - 2 - a]));
    }
    values
}

#[test]
fn dawson_kayles_is_periodic_and_matches_recursion() {
    let values = dawson_kayles_by_recursion(3000);
    assert_eq!(&values[..7], &[0, 0, 1, 1, 2, 0, 3]);
    assert_eq!(values.iter().max(), Some(&9), "piece values are at most 9");
    for (n, &value) in values.iter().enumerate() {
        assert_eq!(dawson_kayles(n as u64), value, "heap {n}");
    }
    // 52 is the last exception: the period does not start earlier.
    assert_ne!(values[52], values[52 + 34]);
    // Far out, the lookup stays in range and periodic.
    for n in [u64::MAX, u64::MAX - 1, u64::MAX - 33, 1 << 63] {
        assert_eq!(dawson_kayles(n), dawson_kayles(n - 34));
    }
}

/// The normal-play table of pieces where both parts of a cut must be at least 2 wide.
fn exhaustive_table(size: usize) -> Vec<Vec<u64>> {
    let mut table = vec![vec![0u64; size + 1]; size + 1];
    let mut seen = Vec::new();
    for w in 2..=size {
        for h in 2..=size {
            seen.clear();
            seen.extend((2..=w - 2).map(|a| table[a][h] ^ table[w - a][h]));
            seen.extend((2..=h - 2).map(|b| table[w][b] ^ table[w][h - b]));
            table[w][h] = mex(seen.iter().copied());
        }
    }
    table
}

#[test]
fn piece_value_matches_exhaustive_table() {
    let table = exhaustive_table(256);
    for (w, row) in table.iter().enumerate().skip(2) {
        for (h, &value) in row.iter().enumerate().skip(2) {
            assert_eq!(piece_value(w as u64, h as u64), value, "{w}×{h}");
        }
    }
}

/// Every position of the three sets, in order, through [`CutPositions::nth`].
fn positions(cuts: &[CutPositions; 3]) -> Vec<u64> {
    cuts.iter().flat_map(|cuts| (0..cuts.count()).map(move |index| cuts.nth(index))).collect()
}

#[test]
fn interior_cuts_are_exactly_the_cuts_to_each_value() {
    let sizes = (2..=230u64).chain([300, 301, 1000, 1001, 1033, 5000, 5017]);
    for width in sizes.clone() {
        for height in sizes.clone().filter(|&h| h <= 40 || width <= 40 || h == width) {
            // Every cut leaving both parts at least 2 wide, and its value, by trying each one.
            let vertical: Vec<(u64, u64)> = (2..=width.saturating_sub(2))
                .map(|a| (a, piece_value(a, height) ^ piece_value(width - a, height)))
                .collect();
            let horizontal: Vec<(u64, u64)> = (2..=height.saturating_sub(2))
                .map(|b| (b, piece_value(width, b) ^ piece_value(width, height - b)))
                .collect();
            let to = |cuts: &[(u64, u64)], need| -> Vec<u64> {
                cuts.iter().filter(|&&(_, value)| value == need).map(|&(at, _)| at).collect()
            };
            for need in 0..16 {
                assert_eq!(
                    positions(&interior_cuts(width, height, need)),
                    to(&vertical, need),
                    "{width}×{height} to {need}"
                );
                assert_eq!(
                    positions(&interior_cuts(height, width, need)),
                    to(&horizontal, need),
                    "{width}×{height} to {need}"
                );
            }
        }
    }
}

/// A position of the literal game: its pieces as (width, height), in order.
type Pieces = Vec<(u64, u64)>;

/// Every literal move: (piece index, vertical?, at), in the documented order.
fn literal_moves(pieces: &Pieces) -> Vec<(usize, bool, u64)> {
    if pieces.contains(&(1, 1)) {
        return Vec::new();
    }
    let mut moves = Vec::new();
    for (index, &(w, h)) in pieces.iter().enumerate() {
        moves.extend((1..w).map(|at| (index, true, at)));
        moves.extend((1..h).map(|at| (index, false, at)));
    }
    moves
}

/// The two parts a literal move cuts its piece into.
fn literal_parts(pieces: &Pieces, (index, vertical, at): (usize, bool, u64)) -> [(u64, u64); 2] {
    let (w, h) = pieces[index];
    if vertical {
        [(at, h), (w - at, h)]
    } else {
        [(w, at), (w, h - at)]
    }
}

fn literal_play(pieces: &Pieces, mv: (usize, bool, u64)) -> Pieces {
    let [first, second] = literal_parts(pieces, mv);
    let mut next = pieces.clone();
    next[mv.0] = first;
    next.insert(mv.0 + 1, second);
    next
}

/// A position for the outcome recursion: its pieces as (width, height), sorted (the literal game
/// does not care about order, and equal multisets share a memo entry).
type Multiset = Vec<(u8, u8)>;

fn multiset(pieces: &[(u64, u64)]) -> Multiset {
    let mut small: Multiset = pieces.iter().map(|&(w, h)| (w as u8, h as u8)).collect();
    small.sort_unstable();
    small
}

/// Whether the player to move wins under the literal rules: the game is over once a 1×1 piece
/// exists (the player who cut it won); otherwise a move wins if it cuts out a 1×1 or leaves a
/// position lost for the opponent. Moves giving the same multiset (equal pieces, cuts at `at` and
/// `size − at`) are tried once.
fn literal_wins(position: &Multiset, memo: &mut HashMap<Multiset, bool>) -> bool {
    if position.contains(&(1, 1)) {
        return false;
    }
    let cuts = |index: usize| {
        let (w, h) = position[index];
        let vertical = (1..=w / 2).map(move |at| [(at, h), (w - at, h)]);
        let horizontal = (1..=h / 2).map(move |at| [(w, at), (w, h - at)]);
        vertical.chain(horizontal)
    };
    let distinct = (0..position.len()).filter(|&index| index == 0 || position[index - 1] != position[index]);
    if distinct.clone().flat_map(cuts).any(|parts| parts.contains(&(1, 1))) {
        return true;
    }
    if let Some(&wins) = memo.get(position) {
        return wins;
    }
    let wins = distinct.flat_map(|index| cuts(index).map(move |parts| (index, parts))).any(|(index, parts)| {
        let mut child = position.clone();
        child.remove(index);
        child.extend(parts);
        child.sort_unstable();
        !literal_wins(&child, memo)
    });
    memo.insert(position.clone(), wins);
    wins
}

/// Every position of at most `count` pieces with sides at most `max_side`, as sorted lists.
fn small_positions(count: usize, max_side: u64) -> Vec<Pieces> {
    let sides: Vec<(u64, u64)> = (1..=max_side).flat_map(|w| (1..=max_side).map(move |h| (w, h))).collect();
    let mut positions = vec![Vec::new()];
    let mut frontier = vec![(Vec::new(), 0usize)];
    for _ in 0..count {
        let mut next = Vec::new();
        for (position, from) in &frontier {
            for (i, &side) in sides.iter().enumerate().skip(*from) {
                let mut longer: Pieces = position.clone();
                longer.push(side);
                positions.push(longer.clone());
                next.push((longer, i));
            }
        }
        frontier = next;
    }
    positions
}

fn as_cut((piece, vertical, at): (usize, bool, u64)) -> Cut {
    let direction = if vertical { CutDirection::Vertical } else { CutDirection::Horizontal };
    Cut { piece, direction, at }
}

#[test]
fn literal_brute_force_agrees_on_outcomes_moves_and_best_moves() {
    let mut memo = HashMap::new();
    let positions = small_positions(3, 6);
    assert_eq!(positions.len(), 1 + 36 + 666 + 8436);
    for pieces in &positions {
        let position = paper(pieces);
        let value = value_of(&position);
        let wins = literal_wins(&multiset(pieces), &mut memo);
        let expected = if wins { Outcome::NextPlayerWins } else { Outcome::PreviousPlayerWins };
        assert_eq!(value.outcome(), expected, "{pieces:?}");

        let moves: Vec<Cut> = position.moves().iter().collect();
        let literal: Vec<Cut> = literal_moves(pieces).into_iter().map(as_cut).collect();
        assert_eq!(moves, literal, "{pieces:?}");
        for mv in &literal_moves(pieces) {
            let played = position.play_unchecked(&as_cut(*mv));
            assert_eq!(played.pieces(), paper(&literal_play(pieces, *mv)).pieces());
        }

        let (best_value, best) = position.best_move(&mut SearchContext::in_memory()).expect("no budget");
        assert_eq!(best_value, value);
        match best {
            Some(cut) => {
                assert!(position.is_legal(&cut), "{pieces:?}: {cut:?}");
                let next: Pieces = position.play_unchecked(&cut).pieces().iter().map(|p| (p.width, p.height)).collect();
                if wins {
                    assert!(!literal_wins(&multiset(&next), &mut memo), "{pieces:?}: {cut:?} does not win");
                }
            }
            None => assert!(moves.is_empty(), "{pieces:?}: no best move"),
        }
    }
}

#[test]
fn move_to_reaches_every_lower_nimber_and_the_special_values() {
    let positions = small_positions(3, 6);
    for pieces in &positions {
        let position = paper(pieces);
        let value = value_of(&position);
        let mut context = SearchContext::in_memory();
        let mut targets = vec![SumValue::Finished, SumValue::WinsAtOnce];
        targets.extend((0..16).map(SumValue::Nimber));
        let reachable: Vec<SumValue> =
            position.moves().iter().map(|mv| value_of(&position.play_unchecked(&mv))).collect();
        for target in targets {
            let direct = position.first_move_to(target, &mut context).expect("no budget");
            let exists = reachable.contains(&target);
            assert_eq!(direct.is_some(), exists, "{pieces:?} to {target:?}");
            if let Some(cut) = direct {
                assert!(position.is_legal(&cut));
                assert_eq!(value_of(&position.play_unchecked(&cut)), target, "{pieces:?}: {cut:?}");
            }
        }
        if let SumValue::Nimber(g) = value {
            for t in 0..g {
                assert!(position.first_move_to(SumValue::Nimber(t), &mut context).expect("no budget").is_some());
            }
        }
    }
}

/// A side of a piece: near 2^64, near 10^18, small, or anything.
fn side(random: &mut SplitMix) -> u64 {
    match random.next_u64() % 4 {
        0 => u64::MAX - random.next_u64() % 200,
        1 => 1_000_000_000_000_000_000 + random.next_u64() % 1000,
        2 => 2 + random.next_u64() % 200,
        _ => 2 + random.next_u64() % (u64::MAX - 2),
    }
}

#[test]
fn move_to_works_on_huge_pieces() {
    let mut random = SplitMix::new(2311);
    let mut context = SearchContext::in_memory();
    let mut nonzero = 0;
    for round in 0..3000 {
        let count = 1 + round % 4;
        let sizes: Vec<(u64, u64)> = (0..count).map(|_| (side(&mut random), side(&mut random))).collect();
        let position = paper(&sizes);
        let SumValue::Nimber(g) = value_of(&position) else { panic!("{sizes:?} has no side below 2") };
        nonzero += usize::from(g != 0);
        for t in 0..g {
            let cut = position
                .first_move_to(SumValue::Nimber(t), &mut context)
                .expect("no budget")
                .unwrap_or_else(|| panic!("{sizes:?}: no move to {t}"));
            assert!(position.is_legal(&cut), "{sizes:?}: {cut:?}");
            assert_eq!(value_of(&position.play_unchecked(&cut)), SumValue::Nimber(t), "{sizes:?}: {cut:?}");
        }
        let cut = position.first_move_to(SumValue::WinsAtOnce, &mut context).expect("no budget");
        let cut = cut.unwrap_or_else(|| panic!("{sizes:?}: no move giving the win away"));
        assert_eq!(value_of(&position.play_unchecked(&cut)), SumValue::WinsAtOnce);
    }
    assert!(nonzero > 1000, "the random positions should mostly be wins ({nonzero})");
    // Won at once with a huge one-wide piece: the 1×1 comes off the end.
    let position = paper(&[(u64::MAX, u64::MAX), (u64::MAX, 1)]);
    assert_eq!(value_of(&position), SumValue::WinsAtOnce);
    let cut = position.first_move_to(SumValue::Finished, &mut context).expect("no budget");
    assert_eq!(cut, Some(Cut { piece: 1, direction: CutDirection::Vertical, at: 1 }));
    assert_eq!(position.moves().get(3), Some(Cut { piece: 0, direction: CutDirection::Vertical, at: 4 }));
}

/// Every target an analysis is asked about: the special values and every nimber up to 2 past
/// `most`.
fn targets_up_to(most: u64) -> Vec<SumValue> {
    [SumValue::Finished, SumValue::WinsAtOnce].into_iter().chain((0..=most + 2).map(SumValue::Nimber)).collect()
}

#[test]
fn move_sets_match_search_on_long_pieces() {
    // Sides past 110 have a periodic middle range; 1-wide pieces make positions won at once.
    let sides = [1u64, 2, 3, 4, 5, 8, 13, 34, 55, 56, 89, 109, 110, 111, 144, 200, 233, 250];
    for &w in &sides {
        for &h in &sides {
            for pieces in [vec![(w, h)], vec![(w, h), (h + 7, 3)], vec![(5, 6), (w, h), (w, 2)]] {
                assert_move_sets_match_search(&paper(&pieces), &targets_up_to(15));
            }
        }
    }
}

/// The place of a cut in move order.
fn order_key(cut: &Cut) -> (usize, bool, u64) {
    (cut.piece, cut.direction == CutDirection::Horizontal, cut.at)
}

#[test]
fn analysis_is_consistent_on_huge_pieces() {
    let mut random = SplitMix::new(1729);
    let mut context = SearchContext::in_memory();
    let mut won_at_once = 0;
    for round in 0..2000 {
        let count = 1 + round % 4;
        let mut sizes: Vec<(u64, u64)> = (0..count).map(|_| (side(&mut random), side(&mut random))).collect();
        if round % 3 == 0 {
            // A 1-wide piece: the position is won at once.
            let at = random.next_u64() as usize % (sizes.len() + 1);
            sizes.insert(at, if round % 2 == 0 { (1, side(&mut random)) } else { (side(&mut random), 1) });
            won_at_once += 1;
        }
        let position = paper(&sizes);
        let total = position.moves().len();
        let expected: u128 = sizes.iter().map(|&(w, h)| u128::from(w - 1) + u128::from(h - 1)).sum();
        assert_eq!(total, expected, "{sizes:?}");
        // Every cut leads to one of these values (piece values are at most 9), so the counts add up.
        let mut counted = 0;
        for target in targets_up_to(13) {
            let count = position.moves_to(target, &mut context).map(|set| set.len()).expect("no budget");
            counted += count;
            let mut ks = vec![0, 1, count / 2, count.saturating_sub(2), count.saturating_sub(1)];
            ks.extend((0..3).map(|_| u128::from(random.next_u64()) * u128::from(random.next_u64()) % count.max(1)));
            for k in ks.into_iter().filter(|&k| k < count) {
                let window = position.moves_to(target, &mut context).map(|set| page(&set, k, 2)).expect("no budget");
                assert_eq!(window.len() as u128, (count - k).min(2), "{sizes:?} to {target:?} from {k}");
                for cut in &window {
                    assert!(position.is_legal(cut), "{sizes:?}: {cut:?}");
                    assert_eq!(value_of(&position.play_unchecked(cut)), target, "{sizes:?}: {cut:?}");
                }
                if let [first, second] = window[..] {
                    assert_eq!(
                        position.moves_to(target, &mut context).map(|set| page(&set, k + 1, 1)),
                        Ok(vec![second])
                    );
                    assert!(order_key(&first) < order_key(&second), "{sizes:?}: {first:?} {second:?}");
                    // Nothing to the target in between, when the gap is small.
                    if (first.piece, first.direction) == (second.piece, second.direction) && second.at - first.at <= 300
                    {
                        for at in first.at + 1..second.at {
                            let between = Cut { at, ..first };
                            assert_ne!(value_of(&position.play_unchecked(&between)), target, "{sizes:?}: {between:?}");
                        }
                    }
                }
            }
            assert_eq!(position.moves_to(target, &mut context).map(|set| page(&set, count, 3)), Ok(Vec::new()));
        }
        assert_eq!(counted, total, "{sizes:?}");
    }
    assert!(won_at_once > 500);
    // Giving the win away from a huge 1-wide piece: every cut but the two end ones.
    let strip = paper(&[(u64::MAX, 1)]);
    let count = strip.moves_to(SumValue::WinsAtOnce, &mut context).map(|set| set.len());
    assert_eq!(count, Ok(u128::from(u64::MAX) - 3));
    let tail = strip.moves_to(SumValue::WinsAtOnce, &mut context).map(|set| page(&set, u128::from(u64::MAX) - 4, 3));
    assert_eq!(tail, Ok(vec![Cut { piece: 0, direction: CutDirection::Vertical, at: u64::MAX - 2 }]));
    let ends = strip.moves_to(SumValue::Finished, &mut context).map(|set| page(&set, 0, 3)).expect("no budget");
    assert_eq!(ends.iter().map(|cut| cut.at).collect::<Vec<_>>(), vec![1, u64::MAX - 1]);
}

#[test]
fn poj_samples() {
    let outcome = |w, h| value_of(&paper(&[(w, h)])).outcome();
    assert_eq!(outcome(2, 2), Outcome::PreviousPlayerWins);
    assert_eq!(outcome(3, 2), Outcome::PreviousPlayerWins);
    assert_eq!(outcome(4, 2), Outcome::NextPlayerWins);
}

#[test]
fn special_positions_and_errors() {
    let empty = paper(&[]);
    assert_eq!(value_of(&empty), SumValue::Nimber(0));
    assert_eq!(empty.moves().len(), 0);
    let over = paper(&[(5, 5), (1, 1), (1, 7)]);
    assert_eq!(value_of(&over), SumValue::Finished);
    assert_eq!(over.moves().len(), 0);
    assert!(!over.is_legal(&Cut { piece: 0, direction: CutDirection::Vertical, at: 1 }));
    let strip = paper(&[(3, 1)]);
    assert_eq!(value_of(&strip), SumValue::WinsAtOnce);
    let cut = strip.first_move_to(SumValue::Finished, &mut SearchContext::in_memory()).expect("no budget");
    assert_eq!(value_of(&strip.play_unchecked(&cut.expect("a 1×1 to cut off"))), SumValue::Finished);

    let err = Paper::new(vec![Piece { width: 2, height: 2 }, Piece { width: 0, height: 3 }]).unwrap_err();
    assert_eq!(err.to_string(), "pieces[1].width is 0; it must be at least 1");
    let err = Paper::new(vec![Piece { width: 2, height: 0 }]).unwrap_err();
    assert_eq!(err.to_string(), "pieces[0].height is 0; it must be at least 1");
    let err = Paper::new(vec![Piece { width: 2, height: 2 }; MAX_PIECES + 1]).unwrap_err();
    assert_eq!(err.to_string(), "pieces has 100001 pieces; the limit is 100000");
    assert!(Paper::new(vec![Piece { width: 2, height: 2 }; MAX_PIECES]).is_ok());
}
