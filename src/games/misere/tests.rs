//! Misère answers against a brute force written from the rules alone (not from the games' move
//! generators): Nim, Kayles (0.77), Node Kayles on graphs and Cram on small boards, alone and in
//! random sums of up to four components of mixed games.

use std::collections::HashMap;

use super::*;
use crate::games::cram;
use crate::games::diagonal_walk::Walk;
use crate::games::node_kayles::Graph;
use crate::games::reclamation::{Cell, River};
use crate::games::stone_boxes::{Boxes, StoneBox};
use crate::games::sum::Sum;
use crate::random::SplitMix;

/// A small position written from its game's rules, for the brute force.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Rules {
    /// Nim: take any number of tokens from one heap.
    Nim(Vec<u64>),
    /// Kayles (0.77): knock down one pin or two adjacent pins of a row, which may split it in two.
    Kayles(Vec<u64>),
    /// Node Kayles: choose a vertex left, which goes with its neighbours (`neighbours[v]`, bits).
    NodeKayles { neighbours: Vec<u32>, left: u32 },
    /// Cram: cover two free cells side by side (cell `r * columns + c`, bit set when free).
    Cram { rows: usize, columns: usize, free: u32 },
    /// The 2×2 placement game: cover four free cells in a 2×2 square (cells as in Cram).
    Squares { rows: usize, columns: usize, free: u32 },
    /// Stone boxes: add 1 to c² stones to a box holding c, never past its capacity
    /// (`(capacity, stones)` for each box).
    Boxes(Vec<(u64, u64)>),
    /// The diagonal walk on an n×m board: from (x, y) to (x+1, y), (x, y+1) or (x+k, y+k), inside.
    Walk { n: u64, m: u64, k: u64, x: u64, y: u64 },
    /// More Reclamation on an r×2 strip: reclaim a free cell (bit `2 * row + column`, rows and
    /// columns from 0), which may not share a row with a reclaimed cell nor touch one in the other
    /// column diagonally or side by side.
    Reclamation { rows: u64, reclaimed: u64 },
}

impl Rules {
    /// Every position one move leads to.
    fn options(&self) -> Vec<Rules> {
        let heap_options = |heaps: &[u64], leaves: &dyn Fn(u64) -> Vec<Vec<u64>>| {
            let mut all = Vec::new();
            for (i, &n) in heaps.iter().enumerate() {
                for left in leaves(n) {
                    let mut next: Vec<u64> =
                        heaps.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, &m)| m).collect();
                    next.extend(left.into_iter().filter(|&m| m > 0));
                    next.sort_unstable();
                    all.push(next);
                }
            }
            all
        };
        match self {
            Rules::Nim(heaps) => {
                heap_options(heaps, &|n| (0..n).map(|m| vec![m]).collect()).into_iter().map(Rules::Nim).collect()
            }
            Rules::Kayles(heaps) => heap_options(heaps, &|n| {
                let mut rows = Vec::new();
                for down in 1..=2.min(n) {
                    for a in 0..=n - down {
                        rows.push(vec![a, n - down - a]);
                    }
                }
                rows
            })
            .into_iter()
            .map(Rules::Kayles)
            .collect(),
            Rules::NodeKayles { neighbours, left } => (0..neighbours.len())
                .filter(|&v| left >> v & 1 == 1)
                .map(|v| Rules::NodeKayles { neighbours: neighbours.clone(), left: left & !(neighbours[v] | 1 << v) })
                .collect(),
            &Rules::Cram { rows, columns, free } => {
                let mut all = Vec::new();
                for r in 0..rows {
                    for c in 0..columns {
                        let cell = 1u32 << (r * columns + c);
                        for other in [(c + 1 < columns).then_some(cell << 1), (r + 1 < rows).then_some(cell << columns)]
                        {
                            if let Some(other) = other.filter(|&other| free & cell != 0 && free & other != 0) {
                                all.push(Rules::Cram { rows, columns, free: free & !cell & !other });
                            }
                        }
                    }
                }
                all
            }
            &Rules::Squares { rows, columns, free } => {
                let mut all = Vec::new();
                for r in 0..rows.saturating_sub(1) {
                    for c in 0..columns.saturating_sub(1) {
                        let cell = |r: usize, c: usize| 1u32 << (r * columns + c);
                        let square = cell(r, c) | cell(r, c + 1) | cell(r + 1, c) | cell(r + 1, c + 1);
                        if free & square == square {
                            all.push(Rules::Squares { rows, columns, free: free & !square });
                        }
                    }
                }
                all
            }
            Rules::Boxes(boxes) => {
                let mut all = Vec::new();
                for (i, &(capacity, stones)) in boxes.iter().enumerate() {
                    for add in 1..=(stones * stones).min(capacity - stones) {
                        let mut next = boxes.clone();
                        next[i].1 += add;
                        all.push(Rules::Boxes(next));
                    }
                }
                all
            }
            &Rules::Walk { n, m, k, x, y } => [(x + 1, y), (x, y + 1), (x + k, y + k)]
                .into_iter()
                .filter(|&(x, y)| x <= n && y <= m)
                .map(|(x, y)| Rules::Walk { n, m, k, x, y })
                .collect(),
            &Rules::Reclamation { rows, reclaimed } => {
                let allowed = |row: u64, column: u64| {
                    (0..rows).all(|other| {
                        let same_row = reclaimed >> (2 * other) & 0b11 != 0 && other == row;
                        let across = reclaimed >> (2 * other + 1 - column) & 1 == 1 && other.abs_diff(row) <= 1;
                        !same_row && !across
                    })
                };
                (0..rows)
                    .flat_map(|row| (0..2).map(move |column| (row, column)))
                    .filter(|&(row, column)| allowed(row, column))
                    .map(|(row, column)| Rules::Reclamation { rows, reclaimed: reclaimed | 1 << (2 * row + column) })
                    .collect()
            }
        }
    }

    /// The same position as nimber's engine takes it.
    fn position(&self) -> Position {
        match self {
            Rules::Nim(heaps) => Heaps::nim(heaps.clone()).expect("valid").into(),
            Rules::Kayles(heaps) => Heaps::with_code("0.77", heaps.clone()).expect("valid").into(),
            Rules::NodeKayles { neighbours, left } => {
                let kept: Vec<usize> = (0..neighbours.len()).filter(|&v| left >> v & 1 == 1).collect();
                let number = |v: usize| kept.iter().position(|&k| k == v).map(|i| i as u32 + 1);
                let mut edges = Vec::new();
                for (i, &u) in kept.iter().enumerate() {
                    for &w in &kept[i + 1..] {
                        if neighbours[u] >> w & 1 == 1 {
                            edges.push((number(u).unwrap(), number(w).unwrap()));
                        }
                    }
                }
                Graph::new(kept.len() as u32, &edges).expect("valid").into()
            }
            &Rules::Cram { rows, columns, free } => {
                cram::Board::new(&board_rows(rows, columns, free)).expect("valid").into()
            }
            &Rules::Squares { rows, columns, free } => {
                crate::games::tetris::Board::new(&board_rows(rows, columns, free)).expect("valid").into()
            }
            Rules::Boxes(boxes) => {
                let boxes = boxes.iter().map(|&(capacity, stones)| StoneBox { capacity, stones }).collect();
                Boxes::new(boxes).expect("valid").into()
            }
            &Rules::Walk { n, m, k, x, y } => Walk::new(n, m, k, x, y).expect("valid").into(),
            &Rules::Reclamation { rows, reclaimed } => {
                let cells = (0..2 * rows)
                    .filter(|&bit| reclaimed >> bit & 1 == 1)
                    .map(|bit| Cell { row: bit / 2 + 1, column: bit % 2 + 1 })
                    .collect();
                River::new(rows, cells).expect("valid").into()
            }
        }
    }
}

/// A board's rows as the games take them: `0` free, `1` not.
fn board_rows(rows: usize, columns: usize, free: u32) -> Vec<String> {
    let row = |r: usize| (0..columns).map(|c| if free >> (r * columns + c) & 1 == 1 { '0' } else { '1' }).collect();
    (0..rows).map(row).collect()
}

/// Misère outcomes of sums of [`Rules`] positions, from the rules alone: the player to move wins
/// when they cannot move, or when some move leaves the other player a loss.
#[derive(Default)]
struct BruteForce {
    outcomes: HashMap<Vec<Rules>, bool>,
    /// What each checked answer rested on.
    checked: Vec<Basis>,
}

impl BruteForce {
    fn next_player_wins(&mut self, sum: &[Rules]) -> bool {
        let mut key = sum.to_vec();
        key.sort_by_key(|part| format!("{part:?}"));
        if let Some(&wins) = self.outcomes.get(&key) {
            return wins;
        }
        let mut wins = true;
        for (i, part) in sum.iter().enumerate() {
            for option in part.options() {
                wins = false;
                let mut next = sum.to_vec();
                next[i] = option;
                if !self.next_player_wins(&next) {
                    self.outcomes.insert(key, true);
                    return true;
                }
            }
        }
        self.outcomes.insert(key, wins);
        wins
    }

    /// The misère Grundy value of `sum`, from the rules alone: the mex of its options' values, and 1
    /// when it has no move.
    fn misere_grundy(&mut self, sum: &[Rules], known: &mut HashMap<Vec<Rules>, u64>) -> u64 {
        if let Some(&value) = known.get(sum) {
            return value;
        }
        let mut values = Vec::new();
        for (i, part) in sum.iter().enumerate() {
            for option in part.options() {
                let mut next = sum.to_vec();
                next[i] = option;
                values.push(self.misere_grundy(&next, known));
            }
        }
        let value = match values.is_empty() {
            true => 1,
            false => (0..).find(|v| !values.contains(v)).expect("a mex"),
        };
        known.insert(sum.to_vec(), value);
        value
    }

    /// How many checked answers rested on genus theory.
    fn answered_by_genus(&self) -> usize {
        self.checked.iter().filter(|basis| matches!(basis, Basis::Genus { .. })).count()
    }

    /// The engine's misère answer for `sum` against the brute force: its outcome, a winning move
    /// exactly when the player to move wins by moving, and that move leaving a position the
    /// engine finds lost for the other player.
    fn check(&mut self, sum: &[Rules]) {
        let position = engine_position(sum);
        let expected = self.next_player_wins(sum);
        let answer = position.misere(&mut SearchContext::in_memory()).expect("small");
        assert_eq!(answer.next_player_wins, expected, "{sum:?}");
        self.checked.push(answer.basis.clone());
        let has_moves = !position.moves().is_empty();
        assert_eq!(answer.winning_move.is_some(), expected && has_moves, "{sum:?}: {answer:?}");
        if let Some(mv) = &answer.winning_move {
            let after = position.play_unchecked(mv);
            let again = after.misere(&mut SearchContext::in_memory()).expect("small");
            assert!(!again.next_player_wins, "{sum:?}: {mv:?} leaves a win for the other player");
        }
    }
}

/// The sum of `parts` as nimber's engine takes it (one part is not a sum).
fn engine_position(parts: &[Rules]) -> Position {
    match parts {
        [one] => one.position(),
        parts => Position::Sum(Sum::new(parts.iter().map(Rules::position).collect(), 0).expect("a sum")),
    }
}

/// A random small position: heaps of fewer than `side` tokens, a graph of up to `side` vertices,
/// or a board of up to three rows of `side` − 3 columns.
fn random_part(random: &mut SplitMix, side: u64) -> Rules {
    let heaps =
        |random: &mut SplitMix| (0..1 + random.below(3)).map(|_| 1 + random.below(side - 1)).collect::<Vec<_>>();
    match random.below(4) {
        0 => Rules::Nim(heaps(random)),
        1 => Rules::Kayles(heaps(random)),
        2 => {
            let vertices = 1 + random.below(side) as usize;
            let mut neighbours = vec![0u32; vertices];
            for u in 0..vertices {
                for w in u + 1..vertices {
                    if random.below(3) == 0 {
                        neighbours[u] |= 1 << w;
                        neighbours[w] |= 1 << u;
                    }
                }
            }
            Rules::NodeKayles { neighbours, left: (1 << vertices) - 1 }
        }
        _ => {
            let (rows, columns) = (1 + random.below(3) as usize, 1 + random.below(side - 3) as usize);
            let free = (0..rows * columns).filter(|_| random.below(5) != 0).fold(0u32, |free, cell| free | 1 << cell);
            Rules::Cram { rows, columns, free }
        }
    }
}

/// A random small position of a seed game: a 2×2 placement board of up to 4×5 cells, up to
/// three stone boxes of capacity below `3 * side`, a diagonal walk on a board of up to `side` ×
/// `side`, or a More Reclamation strip of up to `side` rows, some cells reclaimed.
fn random_seed_part(random: &mut SplitMix, side: u64) -> Rules {
    match random.below(4) {
        0 => {
            let (rows, columns) = (2 + random.below(3) as usize, 2 + random.below(4) as usize);
            let free = (0..rows * columns).filter(|_| random.below(6) != 0).fold(0u32, |free, cell| free | 1 << cell);
            Rules::Squares { rows, columns, free }
        }
        1 => Rules::Boxes(
            (0..1 + random.below(3))
                .map(|_| {
                    let capacity = 1 + random.below(3 * side);
                    (capacity, random.below(capacity + 1))
                })
                .collect(),
        ),
        2 => Rules::Walk { n: 1 + random.below(side), m: 1 + random.below(side), k: 1 + random.below(3), x: 1, y: 1 },
        _ => {
            let mut strip = Rules::Reclamation { rows: 1 + random.below(side), reclaimed: 0 };
            for _ in 0..random.below(3) {
                let options = strip.options();
                if !options.is_empty() {
                    strip = options[random.below(options.len() as u64) as usize].clone();
                }
            }
            strip
        }
    }
}

/// The seed games (2×2 placement, stone boxes, the diagonal walk, More Reclamation), alone and in
/// sums of two, in misère play against the brute force from their rules.
#[test]
fn seed_games_agree_with_the_rules_in_misere_play() {
    let mut brute = BruteForce::default();
    let mut random = SplitMix::new(1998);
    for _ in 0..200 {
        let parts: Vec<Rules> = (0..1 + random.below(2)).map(|_| random_seed_part(&mut random, 6)).collect();
        brute.check(&parts);
    }
    let by_genus = brute.answered_by_genus();
    assert!(by_genus > 20, "{by_genus} of 200 went by genus (sums, and boxes split into boxes)");
}

/// Bouton's rule against the brute force on every Nim position of up to three heaps of at most
/// six tokens, as one component and as a sum of one-heap components, and what it rests on.
#[test]
fn misere_nim_follows_boutons_rule() {
    let mut brute = BruteForce::default();
    for a in 0..=6 {
        for b in a..=6 {
            for c in b..=6 {
                let heaps: Vec<u64> = [a, b, c].into_iter().filter(|&n| n > 0).collect();
                brute.check(&[Rules::Nim(heaps.clone())]);
                let apart: Vec<Rules> = heaps.iter().map(|&n| Rules::Nim(vec![n])).collect();
                if apart.len() > 1 {
                    brute.check(&apart);
                }
                let answer = Rules::Nim(heaps).position().misere(&mut SearchContext::in_memory()).unwrap();
                assert_eq!(answer.basis, Basis::NimRule);
            }
        }
    }
    // Heaps of any size: three heaps whose XOR is 0 lose; one heap of two or more wins by
    // leaving an odd number of ones.
    let huge =
        |heaps: Vec<u64>| Position::from(Heaps::nim(heaps).unwrap()).misere(&mut SearchContext::in_memory()).unwrap();
    assert!(!huge(vec![u64::MAX, u64::MAX - 1, 1]).next_player_wins);
    let one_large = huge(vec![u64::MAX, 1, 1]);
    assert!(one_large.next_player_wins);
    let Some(Move::Heaps(mv)) = one_large.winning_move else { panic!("a heap move") };
    assert_eq!((mv.heap, mv.left()), (0, &[1][..]), "leave three ones");
}

/// Kayles, Node Kayles and Cram, each alone, searched against the brute force.
#[test]
fn searched_games_agree_with_the_rules_in_misere_play() {
    let mut brute = BruteForce::default();
    for n in 0..=9 {
        brute.check(&[Rules::Kayles((n > 0).then_some(n).into_iter().collect())]);
    }
    let mut random = SplitMix::new(139);
    for _ in 0..300 {
        let part = random_part(&mut random, 7);
        brute.check(&[part]);
    }
    let answer = Rules::Kayles(vec![4]).position().misere(&mut SearchContext::in_memory()).unwrap();
    assert!(matches!(answer.basis, Basis::Search { positions } if positions > 0), "{answer:?}");
}

/// Random sums of two to four components of mixed games, against the brute force.
#[test]
fn mixed_sums_agree_with_the_rules_in_misere_play() {
    let mut brute = BruteForce::default();
    let mut random = SplitMix::new(1902);
    for _ in 0..150 {
        let parts: Vec<Rules> = (0..2 + random.below(3)).map(|_| random_part(&mut random, 5)).collect();
        brute.check(&parts);
    }
}

/// A position whose play may be longer than the search goes is refused at once, not searched
/// for ever; the cutting game has no misère form.
#[test]
fn long_play_is_past_the_misere_depth_and_the_cutting_game_has_no_misere_form() {
    let long: Position = Heaps::with_code("0.77", vec![1 << 40]).unwrap().into();
    let refused = long.misere(&mut SearchContext::in_memory()).unwrap_err();
    assert_eq!(refused, Interrupted::PastMisereDepth { limit: MOST_MOVES_DEEP });
    assert!(long.has_misere_form());
    let paper: Position =
        crate::games::cutting::Paper::new(vec![crate::games::cutting::Piece { width: 2, height: 3 }]).unwrap().into();
    assert!(!paper.has_misere_form());
    assert!(!Position::Sum(Sum::new(vec![long, paper], 0).unwrap()).has_misere_form());
}

/// Genus symbols as Winning Ways prints them for Nim heaps (ch. 13: `*0` is `0^120`, `*1` is
/// `1^031`, and a heap of `n ≥ 2` is `n^n(n⊕2)`: `2^20`, `4^46`), and as Plambeck lists them for
/// the heaps 1 to 6 of the octal game 0.312 (plambeck.org, misère octal games, 0.312: 1^031, 2^20,
/// 0^02, 2^1420, 0^02, 1^13).
#[test]
fn genus_symbols_match_the_published_ones() {
    let symbol = |position: Position| {
        genus::genus(&position, &mut SearchContext::in_memory()).unwrap().expect("small").to_string()
    };
    let nim: Vec<String> = (0..6).map(|n| symbol(Heaps::nim(vec![n]).unwrap().into())).collect();
    assert_eq!(nim, ["0^120", "1^031", "2^20", "3^31", "4^46", "5^57"]);
    let octal: Vec<String> = (1..=6).map(|n| symbol(Heaps::with_code("0.312", vec![n]).unwrap().into())).collect();
    assert_eq!(octal, ["1^031", "2^20", "0^02", "2^1420", "0^02", "1^13"]);
}

/// Every `γn` of a genus is the misère Grundy value of the position plus `n` Nim heaps of two, by
/// the brute force from the rules, on 200 random small positions and `n` up to 4; and the normal
/// part is the position's Grundy value.
#[test]
fn genus_values_agree_with_the_rules() {
    let mut brute = BruteForce::default();
    let mut known = HashMap::new();
    let mut random = SplitMix::new(1976);
    for _ in 0..200 {
        let part = random_part(&mut random, 6);
        let position = part.position();
        let genus = genus::genus(&position, &mut SearchContext::in_memory()).unwrap().expect("small");
        let value = position.value(&mut SearchContext::in_memory()).unwrap();
        assert_eq!(crate::games::sum::SumValue::Nimber(genus.normal), value, "{part:?}");
        for n in 0..=4 {
            let mut sum = vec![part.clone()];
            sum.extend((0..n).map(|_| Rules::Nim(vec![2])));
            assert_eq!(genus.gamma(n), brute.misere_grundy(&sum, &mut known), "{part:?} + {n} heaps of two");
        }
    }
}

/// Sums of tame components are answered by their genera, and agree with the brute force: sums of
/// two to five small Nim, Kayles, 0.312 and Cram components, of which the tame ones go by genus.
#[test]
fn tame_sums_are_answered_by_genus_and_agree_with_the_rules() {
    let mut brute = BruteForce::default();
    let mut random = SplitMix::new(2005);
    for _ in 0..200 {
        let parts: Vec<Rules> = (0..2 + random.below(4))
            .map(|_| match random.below(3) {
                0 => Rules::Kayles(vec![1 + random.below(4)]),
                1 => Rules::Nim(vec![1 + random.below(4)]),
                _ => Rules::Cram { rows: 1, columns: 1 + random.below(5) as usize, free: 0b11111 },
            })
            .collect();
        brute.check(&parts);
    }
    let by_genus = brute.answered_by_genus();
    assert!(by_genus > 100, "{by_genus} of 200 sums went by genus");
}

/// At the table's bound (a quarter of the solve's table entries) answers stay exact: the search
/// finds what it cannot keep again, and genus theory, which needs every genus it found, gives
/// way to the search.
#[test]
fn past_the_table_bound_answers_stay_exact() {
    let mut brute = BruteForce::default();
    let mut random = SplitMix::new(2008);
    let (mut searched, mut forgotten) = (0, 0);
    for _ in 0..40 {
        let parts: Vec<Rules> = (0..2).map(|_| random_part(&mut random, 4)).collect();
        let position = engine_position(&parts);
        let mut context = SearchContext::in_memory();
        context.table_limit = 16;
        let answer = position.misere(&mut context).expect("small");
        assert_eq!(answer.next_player_wins, brute.next_player_wins(&parts), "{parts:?}");
        forgotten += context.stats.misere_forgotten;
        match answer.basis {
            Basis::Search { positions } => {
                assert!(positions <= 4, "{positions} kept past the bound");
                searched += 1;
            }
            Basis::Genus { positions, .. } => assert!(positions <= 4, "{positions} genera kept past the bound"),
            Basis::NimRule => {}
        }
    }
    assert!(searched > 20, "{searched} of 40 searched");
    assert!(forgotten > 0, "what a full table did not keep is counted (the metric's source)");
}

/// A misère analysis lists every move once, winning moves first, judges each as a misère answer
/// for the position it leads to does (those answers are checked against the brute force above),
/// and agrees with the brute force on who wins: on single positions and on sums, searched, by
/// genus and by Bouton's rule.
#[test]
fn a_misere_analysis_judges_every_move_as_its_answers_do() {
    let mut brute = BruteForce::default();
    let mut random = SplitMix::new(2009);
    for _ in 0..120 {
        let part = |random: &mut SplitMix| match random.below(2) {
            0 => random_part(random, 5),
            _ => random_seed_part(random, 5),
        };
        let parts: Vec<Rules> = (0..1 + random.below(3)).map(|_| part(&mut random)).collect();
        let position = engine_position(&parts);
        let (analysis, _) = position.misere_analysis(0, analysis::MAX_LIMIT, &mut SearchContext::in_memory()).unwrap();
        assert_eq!(analysis.moves.len() as u128, position.moves().len(), "{parts:?}");
        let judged: Vec<bool> = analysis.moves.iter().map(MoveValue::is_winning).collect();
        assert!(judged.windows(2).all(|pair| pair[0] >= pair[1]), "winning moves first: {parts:?}");
        for listed in &analysis.moves {
            let after = position.play_unchecked(&listed.mv).misere(&mut SearchContext::in_memory()).unwrap();
            assert_eq!(listed.is_winning(), !after.next_player_wins, "{parts:?}: {:?}", listed.mv);
        }
        assert_eq!(analysis.value == Outcome::NextPlayerWins, brute.next_player_wins(&parts), "{parts:?}");
    }
}
