//! Tests of More Reclamation, against a brute force written straight from the rules.

use super::*;
use crate::games::move_set_tests::{assert_move_sets_match_search, page};
use crate::random::SplitMix;

fn cell(row: u64, column: u64) -> Cell {
    Cell { row, column }
}

fn nimber(strip: &River) -> u64 {
    strip.value(&mut SearchContext::in_memory()).expect("no budget")
}

/// The contest solution's recursion for `sg[len][x][y]`, transcribed literally.
fn contest_table(max_len: usize) -> Vec<[[u64; 3]; 3]> {
    let mut sg = vec![[[0u64; 3]; 3]; max_len + 1];
    for len in 1..=max_len {
        for x in 0..3 {
            for y in 0..3 {
                let mut seen = Vec::new();
                for len1 in 0..len {
                    let len2 = len - 1 - len1;
                    if len1 == 0 && len2 == 0 {
                        // len = 1: the seed's base case, one cell usable by both ends' rules.
                        for c in 1..3 {
                            if (x == 0 || x == c) && (y == 0 || y == c) {
                                seen.push(0);
                            }
                        }
                    } else if len1 == 0 {
                        if x == 0 {
                            seen.push(sg[len2][1][y]);
                            seen.push(sg[len2][2][y]);
                        } else {
                            seen.push(sg[len2][x][y]);
                        }
                    } else if len2 == 0 {
                        if y == 0 {
                            seen.push(sg[len1][x][1]);
                            seen.push(sg[len1][x][2]);
                        } else {
                            seen.push(sg[len1][x][y]);
                        }
                    } else {
                        seen.push(sg[len1][x][1] ^ sg[len2][1][y]);
                        seen.push(sg[len1][x][2] ^ sg[len2][2][y]);
                    }
                }
                sg[len][x][y] = crate::games::mex(seen);
            }
        }
    }
    sg
}

#[test]
fn run_closed_form_matches_contest_recursion() {
    let sg = contest_table(1000);
    for (len, table) in sg.iter().enumerate() {
        for top in 0..3u64 {
            for bottom in 0..3u64 {
                let run = Run { above: 0, len: len as u64, top, bottom };
                assert_eq!(run.value(), table[top as usize][bottom as usize], "run {run:?}");
            }
        }
    }
}

/// The free cells of `run`, in order.
fn free_cells(run: Run) -> Vec<Cell> {
    (0..run.free_count()).map(|index| run.nth_free_cell(index)).collect()
}

/// Bit of cell `(row, column)` in a whole-position mask.
fn bit(row: u64, column: u64) -> u32 {
    1 << (2 * (row - 1) + column - 1)
}

/// Whether `(row, column)` may be reclaimed in `mask` by the literal rule.
fn literal_free(rows: u64, mask: u32, row: u64, column: u64) -> bool {
    let other = 3 - column;
    let forbidden = (row.saturating_sub(1).max(1)..=(row + 1).min(rows)).any(|r| mask & bit(r, other) != 0);
    mask & bit(row, column) == 0 && !forbidden
}

fn literal_moves(rows: u64, mask: u32) -> Vec<Cell> {
    (1..=rows)
        .flat_map(|row| [1u64, 2].into_iter().map(move |column| cell(row, column)))
        .filter(|c| literal_free(rows, mask, c.row, c.column))
        .collect()
}

/// Memoized Grundy values of whole positions of an r×2 strip, straight from the rules.
struct BruteForce {
    rows: u64,
    memo: Vec<u8>,
}

impl BruteForce {
    fn new(rows: u64) -> Self {
        BruteForce { rows, memo: vec![u8::MAX; 1 << (2 * rows)] }
    }

    fn grundy(&mut self, mask: u32) -> u64 {
        if self.memo[mask as usize] == u8::MAX {
            let options: Vec<u64> =
                literal_moves(self.rows, mask).into_iter().map(|c| self.grundy(mask | bit(c.row, c.column))).collect();
            self.memo[mask as usize] = crate::games::mex(options) as u8;
        }
        u64::from(self.memo[mask as usize])
    }
}

fn mask_cells(rows: u64, mask: u32) -> Vec<Cell> {
    (1..=rows)
        .flat_map(|row| [1u64, 2].into_iter().map(move |column| cell(row, column)))
        .filter(|c| mask & bit(c.row, c.column) != 0)
        .collect()
}

/// Every conflict-free set of reclaimed cells of an r×2 strip, as masks.
fn legal_masks(rows: u64) -> Vec<u32> {
    let mut masks = vec![(0u32, 0u64)];
    for row in 1..=rows {
        masks = masks
            .into_iter()
            .flat_map(|(mask, previous)| {
                [0u64, 1, 2]
                    .into_iter()
                    .filter(move |&c| c == 0 || previous == 0 || previous == c)
                    .map(move |c| (if c == 0 { mask } else { mask | bit(row, c) }, c))
            })
            .collect();
    }
    masks.into_iter().map(|(mask, _)| mask).collect()
}

#[test]
fn every_small_position_matches_brute_force() {
    for rows in 1..=10u64 {
        let mut brute = BruteForce::new(rows);
        let masks = legal_masks(rows);
        for &mask in &masks {
            let mut cells = mask_cells(rows, mask);
            cells.reverse();
            let strip = River::new(rows, cells).expect("a legal position");
            let value = nimber(&strip);
            assert_eq!(value, brute.grundy(mask), "rows {rows}, cells {:?}", strip.reclaimed());
            assert!(strip.reclaimed().windows(2).all(|w| w[0].row < w[1].row));

            let moves: Vec<Cell> = strip.moves().iter().collect();
            assert_eq!(moves, literal_moves(rows, mask), "rows {rows}, cells {:?}", strip.reclaimed());
            let mut reachable = Vec::new();
            for mv in &moves {
                let next = strip.play_unchecked(mv);
                let next_mask = mask | bit(mv.row, mv.column);
                assert_eq!(next.reclaimed(), &mask_cells(rows, next_mask)[..]);
                reachable.push(brute.grundy(next_mask));
            }
            for target in 0..=rows + 2 {
                let found = strip.first_move_to(target, &mut SearchContext::in_memory()).expect("no budget");
                match found {
                    Some(mv) => {
                        assert!(moves.contains(&mv), "illegal move {mv:?}");
                        assert_eq!(nimber(&strip.play_unchecked(&mv)), target);
                    }
                    None => assert!(!reachable.contains(&target), "missed target {target} in {mask:b}"),
                }
            }
        }
    }
}

#[test]
fn move_sets_match_search_on_long_runs() {
    // Longer runs, where more rows share a value: every kind of run up to 40 rows.
    for rows in 1..=40u64 {
        for top in 0..=2u64 {
            for bottom in 0..=2u64 {
                let mut cells = Vec::new();
                let mut rows_with_ends = rows;
                if top != 0 {
                    cells.push(cell(1, top));
                    rows_with_ends += 1;
                }
                if bottom != 0 {
                    rows_with_ends += 1;
                    cells.push(cell(rows_with_ends, bottom));
                }
                let strip = River::new(rows_with_ends, cells).expect("a legal position");
                assert_move_sets_match_search(&strip, &[0, 1, 2, 3]);
            }
        }
    }
}

/// A row of a strip of `rows` rows: near an end or anywhere.
fn row(random: &mut SplitMix, rows: u64) -> u64 {
    match random.next_u64() % 3 {
        0 => random.range(1, rows.min(5)),
        1 => rows - random.next_u64() % rows.min(5),
        _ => random.range(1, rows),
    }
}

/// Checks that no free cell strictly between `first` and `second` (or before `second` if `first` is
/// `None`) gives `target`, when they are at most 300 rows apart.
fn assert_none_between(strip: &River, target: u64, first: Option<Cell>, second: Cell) {
    let from = first.map_or(1, |first| first.row);
    if second.row - from <= 300 {
        for row in from..=second.row {
            for column in [1u64, 2] {
                let between = cell(row, column);
                if first.is_none_or(|first| first < between) && between < second && strip.is_free(between) {
                    assert_ne!(nimber(&strip.play_unchecked(&between)), target, "{between:?} is skipped");
                }
            }
        }
    }
}

#[test]
fn analysis_is_consistent_on_huge_strips() {
    let mut random = SplitMix::new(335);
    let mut context = SearchContext::in_memory();
    let mut huge_counts = 0;
    for round in 0..3000 {
        let rows = if round % 2 == 0 { 1_000_000_000_000_000_000 } else { u64::MAX - random.next_u64() % 3 };
        let cells: Vec<Cell> =
            (0..round % 5).map(|_| cell(row(&mut random, rows), 1 + random.next_u64() % 2)).collect();
        let Ok(strip) = River::new(rows, cells) else {
            continue;
        };
        let total = strip.moves().len();
        let value = nimber(&strip);
        let mut targets = vec![0, 1, value, value ^ 1, random.next_u64(), (1 << 40) - 1];
        for _ in 0..4 {
            let sample = cell(row(&mut random, rows), 1 + random.next_u64() % 2);
            if strip.is_free(sample) {
                targets.push(nimber(&strip.play_unchecked(&sample)));
            }
        }
        targets.sort_unstable();
        targets.dedup();
        let mut counted = 0;
        for t in targets {
            let target = t;
            let count = strip.moves_to(target, &mut context).map(|set| set.len()).expect("no budget");
            counted += count;
            huge_counts += usize::from(count > 1 << 20);
            let mut ks = vec![0, 1, count / 2, count.saturating_sub(2), count.saturating_sub(1)];
            ks.extend((0..3).map(|_| u128::from(random.next_u64()) * u128::from(random.next_u64()) % count.max(1)));
            for k in ks.into_iter().filter(|&k| k < count) {
                let window = strip.moves_to(target, &mut context).map(|set| page(&set, k, 2)).expect("no budget");
                assert_eq!(window.len() as u128, (count - k).min(2), "{strip:?} to {t} from {k}");
                for mv in &window {
                    assert!(strip.is_free(*mv), "{strip:?}: {mv:?}");
                    assert_eq!(nimber(&strip.play_unchecked(mv)), t, "{strip:?}: {mv:?}");
                }
                if let [first, second] = window[..] {
                    assert_eq!(strip.moves_to(target, &mut context).map(|set| page(&set, k + 1, 1)), Ok(vec![second]));
                    assert!(first < second, "{strip:?} to {t}: {first:?} {second:?}");
                    assert_none_between(&strip, t, Some(first), second);
                }
            }
            if let Some(&first) =
                strip.moves_to(target, &mut context).map(|set| page(&set, 0, 1)).expect("no budget").first()
            {
                assert_none_between(&strip, t, None, first);
            }
            assert_eq!(strip.moves_to(target, &mut context).map(|set| page(&set, count, 3)), Ok(Vec::new()));
        }
        assert!(counted <= total, "{strip:?}");
    }
    assert!(huge_counts > 100, "some targets should have huge move sets ({huge_counts})");
    // Every cell of a run between crossed ends gives the same value: all u64::MAX·2 − 6 of them.
    let crossed = River::new(u64::MAX, vec![cell(u64::MAX, 1), cell(1, 2)]).expect("valid");
    let all = 2 * u128::from(u64::MAX - 2) - 2;
    assert_eq!(crossed.moves().len(), all);
    assert_eq!(crossed.moves_to(1, &mut context).map(|set| set.len()), Ok(all));
    let tail = crossed.moves_to(1, &mut context).map(|set| page(&set, all - 2, 5)).expect("no budget");
    assert_eq!(tail, vec![cell(u64::MAX - 2, 2), cell(u64::MAX - 1, 1)]);
}

#[test]
fn constructor_accepts_exactly_the_conflict_free_sets() {
    for rows in 1..=8u64 {
        let legal: std::collections::HashSet<u32> = legal_masks(rows).into_iter().collect();
        for mask in 0..1u32 << (2 * rows) {
            let cells = mask_cells(rows, mask);
            let literal_ok = cells.iter().all(|c| literal_free(rows, mask & !bit(c.row, c.column), c.row, c.column));
            assert_eq!(literal_ok, legal.contains(&mask));
            assert_eq!(River::new(rows, cells).is_ok(), literal_ok, "rows {rows}, mask {mask:b}");
        }
    }
}

#[test]
fn samples_from_the_seed() {
    let win = |rows, cells| nimber(&River::new(rows, cells).expect("valid sample")) != 0;
    assert!(win(3, vec![cell(1, 1)]));
    assert!(win(12, vec![cell(4, 1), cell(8, 1)]));
    assert!(!win(1, vec![cell(1, 2)]));
}

#[test]
fn invalid_strips_name_the_offending_cells() {
    let message = |rows, cells| River::new(rows, cells).expect_err("invalid").to_string();
    assert_eq!(message(0, vec![]), "rows must be at least 1");
    assert_eq!(message(5, vec![cell(1, 1), cell(0, 1)]), "reclaimed[1].row (0) must be between 1 and 5");
    assert_eq!(message(5, vec![cell(6, 2)]), "reclaimed[0].row (6) must be between 1 and 5");
    assert_eq!(message(5, vec![cell(2, 1), cell(4, 3)]), "reclaimed[1].column (3) must be 1 or 2");
    assert_eq!(message(5, vec![cell(2, 0)]), "reclaimed[0].column (0) must be 1 or 2");
    assert_eq!(
        message(9, vec![cell(4, 1), cell(1, 2), cell(4, 1)]),
        "reclaimed[2] (row 4, column 1) repeats reclaimed[0]"
    );
    for (a, b) in [(cell(3, 1), cell(3, 2)), (cell(3, 1), cell(4, 2)), (cell(4, 1), cell(3, 2))] {
        assert_eq!(
            message(9, vec![cell(8, 2), a, b]),
            format!(
                "reclaimed[1] (row {}, column {}) and reclaimed[2] (row {}, column {}) \
                 forbid each other",
                a.row, a.column, b.row, b.column
            )
        );
    }
    let err = River::new(u64::MAX, vec![cell(u64::MAX, 1), cell(u64::MAX - 1, 2)]).expect_err("conflict");
    assert!(matches!(err, ReclamationError::ForbiddenPair { first: 0, second: 1, .. }));
    let too_many: Vec<Cell> = (1..=MAX_RECLAIMED as u64 + 1).map(|row| cell(row, 1)).collect();
    assert_eq!(message(u64::MAX, too_many), "reclaimed has 100001 cells; the limit is 100000");
    assert!(River::new(9, vec![cell(3, 1), cell(5, 2), cell(2, 1), cell(6, 2)]).is_ok());
}

/// Checks that `move_to` reaches `target` from `strip` with a free cell.
fn assert_reaches(strip: &River, target: u64) {
    let mv = strip.first_move_to(target, &mut SearchContext::in_memory()).expect("no budget");
    let mv = mv.unwrap_or_else(|| panic!("no move to {target} from {:?}", strip.reclaimed()));
    assert!(strip.is_free(mv), "{mv:?} is not free");
    let next = strip.play_unchecked(&mv);
    assert_eq!(next.reclaimed().len(), strip.reclaimed().len() + 1);
    assert_eq!(nimber(&next), target);
}

#[test]
fn huge_strips_have_exact_values_and_moves() {
    let empty = River::new(u64::MAX, vec![]).expect("valid");
    assert_eq!(nimber(&empty), 1);
    let first: Vec<Cell> = empty.moves().iter().take(3).collect();
    assert_eq!(first, vec![cell(1, 1), cell(1, 2), cell(2, 1)]);
    let (_, best) = empty.best_move(&mut SearchContext::in_memory()).expect("no budget");
    assert_eq!(best, Some(cell(u64::MAX / 2 + 1, 1)));
    assert_reaches(&empty, 0);

    // One free end: the run's value is its length, and every smaller value is reachable.
    let last = River::new(u64::MAX, vec![cell(u64::MAX, 2)]).expect("valid");
    assert_eq!(nimber(&last), u64::MAX - 1);
    for target in [0, 1, 2, 12_345, 1 << 40, u64::MAX / 2, u64::MAX - 3, u64::MAX - 2] {
        assert_reaches(&last, target);
    }
    let top = River::new(u64::MAX, vec![cell(1, 1)]).expect("valid");
    assert_eq!(nimber(&top), u64::MAX - 1);
    assert_eq!(top.moves().iter().take(2).collect::<Vec<_>>(), vec![cell(2, 1), cell(3, 1)]);
    for target in [0, 7, u64::MAX - 2] {
        assert_reaches(&top, target);
    }

    // Runs near the end of u64 rows enumerate their cells without overflow.
    let near_end = Run { above: u64::MAX - 3, len: 2, top: 1, bottom: 2 };
    assert_eq!(free_cells(near_end), vec![cell(u64::MAX - 2, 1), cell(u64::MAX - 1, 2)]);
    let tail = Run { above: u64::MAX - 1, len: 1, top: 2, bottom: 0 };
    assert_eq!(free_cells(tail), vec![cell(u64::MAX, 2)]);
    let same = River::new(u64::MAX, vec![cell(u64::MAX, 2), cell(1, 2)]).expect("valid");
    assert_eq!(nimber(&same), 1);
    assert_reaches(&same, 0);
    assert!(!same.is_free(cell(u64::MAX - 1, 1)) && same.is_free(cell(u64::MAX - 1, 2)));
    assert!(!same.is_legal(&cell(u64::MAX - 1, 1)), "a forbidden cell");
    let crossed = River::new(u64::MAX, vec![cell(u64::MAX, 1), cell(1, 2)]).expect("valid");
    assert_eq!(nimber(&crossed), 0, "u64::MAX - 2 untouched rows between crossed ends");
    assert_reaches(&crossed, 1);
    assert_eq!(crossed.first_move_to(2, &mut SearchContext::in_memory()), Ok(None));
}

#[test]
fn many_cells_on_a_huge_strip() {
    // 100 000 cells spread over the whole u64 range, alternating columns at every second gap.
    let gap = u64::MAX / MAX_RECLAIMED as u64;
    let cells: Vec<Cell> = (0..MAX_RECLAIMED as u64).rev().map(|i| cell(1 + i * gap + i % 3, 1 + i / 2 % 2)).collect();
    let strip = River::new(u64::MAX, cells).expect("valid");
    let value = nimber(&strip);
    assert!(strip.reclaimed().windows(2).all(|w| w[0].row < w[1].row));
    for target in [0, 1, value / 3, value.saturating_sub(1)] {
        if target < value {
            assert_reaches(&strip, target);
        }
    }
}
