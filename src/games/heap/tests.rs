//! The heap games against a brute force written from the rules, and against published values.

use std::collections::HashMap;

use super::*;
use crate::games::memory_memo::MemoryMemo;
use crate::games::move_set_tests::assert_move_sets_match_search;
use crate::games::{Budget, Memo};
use crate::random::SplitMix;

/// A code's digits by hand, from its string: `d0.d1d2…` with hexadecimal digits and `!` for
/// unequal splits, nothing more: the brute force's own reading of the rules.
fn digits_of(code: &str) -> Vec<(u32, bool)> {
    let mut digits = Vec::new();
    let mut chars = code.chars().filter(|&c| c != '.').peekable();
    while let Some(c) = chars.next() {
        let unequal = chars.peek() == Some(&'!');
        if unequal {
            chars.next();
        }
        digits.push((c.to_digit(16).expect("a digit"), unequal));
    }
    digits
}

/// Every way to write `total` as `parts` positive heaps, ascending.
fn partitions(total: u64, parts: usize, least: u64) -> Vec<Vec<u64>> {
    if parts == 1 {
        return if total >= least { vec![vec![total]] } else { Vec::new() };
    }
    let mut all = Vec::new();
    for first in least..=total / parts as u64 {
        for mut rest in partitions(total - first, parts - 1, first) {
            rest.insert(0, first);
            all.push(rest);
        }
    }
    all
}

/// G(n) of `code` by the mex of every option, straight from the rules.
fn brute_force(code: &str, n: u64, memo: &mut HashMap<u64, u64>) -> u64 {
    if let Some(&value) = memo.get(&n) {
        return value;
    }
    let mut options = Vec::new();
    for (take, &(digit, unequal)) in digits_of(code).iter().enumerate() {
        let Some(rest) = n.checked_sub(take as u64) else { continue };
        for heaps in 0..4 {
            if digit >> heaps & 1 == 0 {
                continue;
            }
            if heaps == 0 {
                if rest == 0 && take > 0 {
                    options.push(0);
                }
                continue;
            }
            if take == 0 && heaps < 2 {
                continue;
            }
            for split in partitions(rest, heaps, 1) {
                if unequal && split.windows(2).any(|pair| pair[0] == pair[1]) {
                    continue;
                }
                options.push(split.iter().fold(0, |total, &heap| total ^ brute_force(code, heap, memo)));
            }
        }
    }
    let value = crate::games::mex(options);
    memo.insert(n, value);
    value
}

fn heaps(code: &str, heaps: Vec<u64>) -> Heaps {
    Heaps::with_code(code, heaps).expect("valid")
}

fn sequence(code: &str, len: u64) -> Sequence {
    let mut sequence = Sequence::new(Rules::code(code).expect("valid"));
    sequence.extend_to(len, &crate::games::Budget::unlimited()).expect("no deadline");
    sequence
}

fn check_against_brute_force(code: &str, up_to: u64) {
    let sequence = sequence(code, up_to + 1);
    let mut memo = HashMap::new();
    for n in 0..=up_to {
        assert_eq!(sequence.value(n), Some(brute_force(code, n, &mut memo)), "{code} at {n}");
    }
}

#[test]
fn every_octal_code_of_up_to_three_digits_matches_the_brute_force_to_300() {
    for code in 0..8 * 8 * 8 {
        let code = format!("0.{}{}{}", code / 64, code / 8 % 8, code % 8);
        check_against_brute_force(&code, 300);
    }
}

#[test]
fn random_codes_of_up_to_six_digits_match_the_brute_force() {
    let mut random = SplitMix::new(21);
    for _ in 0..40 {
        let length = random.range(1, 6) as usize;
        let d0 = ["0", "4", "8", "C"][random.index(4)];
        let digits: String = (0..length).map(|_| char::from_digit(random.below(16) as u32, 16).unwrap()).collect();
        let code = format!("{d0}.{}", digits.to_uppercase());
        // Three-heap splits cost a cube: fewer heaps for them.
        let three = code.chars().any(|c| c.to_digit(16).is_some_and(|d| d >= 8));
        check_against_brute_force(&code, if three { 90 } else { 1000 });
    }
    for code in ["4!.0", "0.4!4!", "4!.37"] {
        check_against_brute_force(code, 200);
    }
}

/// The sparse-space method against the plain mex on long sequences: games where it pays (0.16,
/// 0.106, 0.376, 0.1337 in sparse space from a few hundred heaps on), Grundy's game (unequal
/// splits), and games with no useful mask.
#[test]
fn the_sparse_space_method_agrees_with_the_plain_mex() {
    for (code, heaps) in [
        ("0.16", 30_000),
        ("0.106", 30_000),
        ("0.376", 20_000),
        ("0.1337", 20_000),
        ("4!.0", 20_000),
        ("0.26", 10_000),
        ("0.3F", 3_000),
    ] {
        let rules = Rules::code(code).unwrap();
        let (mut sparse, mut plain) = (Sequence::new(rules.clone()), Sequence::plain(rules));
        sparse.extend_to(heaps, &Budget::unlimited()).unwrap();
        plain.extend_to(heaps, &Budget::unlimited()).unwrap();
        assert_eq!(sparse.computed(), plain.computed(), "{code}");
        for n in 0..plain.computed() {
            assert_eq!(sparse.value(n), plain.value(n), "{code} at {n}");
        }
        // Few rare heaps where the method pays: under 1 % for 0.16 and 0.106, 10 % for Grundy's game.
        if let Some(percent) = [("0.16", 1), ("0.106", 1), ("4!.0", 10)].iter().find(|(c, _)| *c == code).map(|p| p.1) {
            assert!(sparse.common_values().iter().any(|common| !common.is_empty()), "{code} has common values");
            assert!(
                sparse.rare_heaps() * 100 < sparse.computed() * percent,
                "{code}: {} rare heaps",
                sparse.rare_heaps()
            );
        }
    }
}

/// 0.3F is arithmetic periodic, G(n + 6) = G(n) + 3 from heap 0 (Howse and Nowakowski, "Periodicity
/// and arithmetic-periodicity in hexadecimal games", Theoretical Computer Science 313, 2004): the
/// candidate period shows it; Kayles' candidate is its proven period.
#[test]
fn candidate_periods_show_arithmetic_periodicity() {
    let hexadecimal = sequence("0.3F", 600);
    let candidate = hexadecimal.candidate_period().expect("a candidate");
    assert_eq!((candidate.preperiod, candidate.period, candidate.saltus), (0, 6, 3));
    assert_eq!(hexadecimal.period(), None, "three-heap splits prove nothing");
    let kayles = sequence("0.77", 1 << 12);
    assert_eq!(kayles.candidate_period(), kayles.period());
}

/// Values past 16 bits: the subtraction game of every number but 1 has G(n) = ⌊n/2⌋ (the options of
/// n are every heap up to n − 2, of values 0 … ⌊n/2⌋ − 1 by induction), so its values pass 65 535 at
/// heap 131 070 and are then kept in 4 bytes; they survive encoding.
#[test]
fn values_past_sixteen_bits_are_widened() {
    let rules = Rules::subtraction(&[1], true).unwrap();
    let mut sequence = Sequence::new(rules.clone());
    sequence.extend_to(140_000, &Budget::unlimited()).unwrap();
    assert!((0..140_000).all(|n| sequence.value(n) == Some(n / 2)));
    assert_eq!(sequence.bytes(), 140_000 * 4);
    let decoded = Sequence::decode(rules, &sequence.encode()).expect("decodes");
    assert_eq!(decoded.value(139_999), Some(69_999));
}

/// Values survive encoding, and a damaged encoding is refused.
#[test]
fn sequences_round_trip_through_their_bytes() {
    for (code, heaps) in [("0.16", 5000), ("0.77", 5000), ("0.3F", 500)] {
        let sequence = sequence(code, heaps);
        let rules = Rules::code(code).unwrap();
        let decoded = Sequence::decode(rules.clone(), &sequence.encode()).expect("decodes");
        assert_eq!((decoded.computed(), decoded.period()), (sequence.computed(), sequence.period()));
        assert_eq!(decoded.frequencies(), sequence.frequencies());
        let mut longer = decoded.clone();
        longer.extend_to(heaps + 2000, &Budget::unlimited()).unwrap();
        let direct = self::sequence(code, heaps + 2000);
        assert!(
            (0..longer.computed()).all(|n| longer.value(n) == direct.value(n)),
            "{code} continues as computed afresh"
        );
        let bytes = sequence.encode();
        assert!(Sequence::decode(rules.clone(), &bytes[..bytes.len() - 1]).is_none());
        assert!(Sequence::decode(rules, &bytes[1..]).is_none());
    }
}

/// Periods from Winning Ways (2nd ed., vol. 1, ch. 4, table 6 and the text on Kayles and
/// Dawson's Kayles) and Flammenkamp's octal tables: Kayles 0.77 has period 12 from heap 71
/// (its last exception at 70); Dawson's Kayles 0.07 period 34, its last exception at 52, so
/// preperiod 53; 0.137 (Dawson's chess) the same sequence shifted by one, period 34 from 52.
#[test]
fn published_periods_are_found_and_proven() {
    for (code, preperiod, period) in [("0.77", 71, 12), ("0.07", 53, 34), ("0.137", 52, 34)] {
        let found = sequence(code, 1 << 12).period().expect("proven");
        assert_eq!((found.preperiod, found.period, found.saltus), (preperiod, period, 0), "{code}");
    }
    // The subtraction game {2, 3, 7} has period 5 (Winning Ways, ch. 4, table 2: ".. 0 0 1 1 2").
    let rules = Rules::subtraction(&[2, 3, 7], false).unwrap();
    let mut subtraction = Sequence::new(rules);
    subtraction.extend_to(1000, &crate::games::Budget::unlimited()).unwrap();
    assert_eq!(subtraction.period().map(|found| found.period), Some(5));
}

/// Grundy's game `4!.0`: its first values, OEIS A002188 (also CGSuite's own test of `4!.0`).
#[test]
fn grundys_game_opens_as_published() {
    let published = [0, 0, 0, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 3, 2, 1, 3, 2, 4, 3, 0];
    let sequence = sequence("4!.0", published.len() as u64);
    let values: Vec<u64> = (0..published.len() as u64).map(|n| sequence.value(n).unwrap()).collect();
    assert_eq!(values, published);
    assert_eq!(sequence.period(), None, "no period is proven for a constrained split");
}

#[test]
fn equivalent_codes_share_one_canonical_form() {
    assert_eq!(Rules::code("0.77").unwrap(), Rules::code("0.7700").unwrap());
    assert_eq!(Rules::code("0.[3]").unwrap(), Rules::nim());
    assert_eq!(Rules::subtraction(&[], true).unwrap(), Rules::nim());
    assert_eq!(Rules::subtraction(&[3, 1, 4, 1], false).unwrap(), Rules::code("0.3033").unwrap());
}

#[test]
fn bad_codes_name_the_character_and_why() {
    for (code, part) in [
        ("077", "has no point"),
        ("0.7G", "character 3 ('G') is past F"),
        ("0.7?", "`?` constraint"),
        ("40.7", "exactly one digit before the point"),
        ("3.7", "d0, which takes no tokens"),
        ("0.[7]", "a repeated digit may leave at most one heap"),
        ("0.[3]3", "close the repeated digit"),
        ("0.8!", "three heaps"),
        ("0.é", "character 2 ('é') is not a digit"),
    ] {
        let error = Rules::code(code).expect_err(code);
        assert!(error.to_string().contains(part), "{code}: {error}");
        assert!(error.to_string().starts_with("code "), "{error}");
    }
    let long = format!("0.{}", "7".repeat(33));
    assert!(Rules::code(&long).unwrap_err().to_string().contains("32 digits"));
    assert!(Rules::code(&format!("0.{}", "7".repeat(32))).is_ok());
}

#[test]
fn heaps_of_any_size_are_answered_under_a_proven_period() {
    let mut context = SearchContext::in_memory();
    let kayles = sequence("0.77", 1 << 12);
    let huge = 1_000_000_000_000_000_000;
    assert_eq!(kayles.value(huge), kayles.value(71 + (huge - 71) % 12));
    // [10^18, 3, 7] is a loss for the player to move; with a heap of 1 more it is a win.
    assert_eq!(heaps("0.77", vec![huge, 3, 7]).value(&mut context), Ok(0));
    let position = heaps("0.77", vec![huge, 3, 7, 1]);
    let expected = kayles.value(huge).unwrap() ^ kayles.value(3).unwrap() ^ kayles.value(7).unwrap() ^ 1;
    assert_eq!((position.value(&mut context), expected), (Ok(1), 1));
    // The winning moves of the huge heap are found without enumerating its splits.
    let winning = position.moves_to(0, &mut context).unwrap();
    assert!(winning.iter().any(|mv| mv.heap == 0), "the huge heap has winning splits");
    for mv in winning.iter().step_by(997).take(50) {
        assert_eq!(position.play_unchecked(&mv).value(&mut context), Ok(0), "{mv:?}");
    }
    let (value, best) = position.best_move(&mut context).unwrap();
    assert_eq!(value, expected);
    let after = position.play_unchecked(&best.expect("a winning move"));
    assert_eq!(after.value(&mut context), Ok(0));
    // Nim: G(n) = n.
    let nim = Heaps::nim(vec![u64::MAX, 5]).unwrap();
    assert_eq!(nim.value(&mut context), Ok(u64::MAX ^ 5));
    let best = nim.best_move(&mut context).unwrap().1.expect("a winning move");
    assert_eq!(nim.play_unchecked(&best).value(&mut context), Ok(0));
}

#[test]
fn the_residue_path_lists_the_same_moves_as_filtering() {
    let mut context = SearchContext::in_memory();
    for code in ["0.77", "0.07", "0.137", "4.007", "0.106"] {
        for size in [5000u64, 5001, 7919] {
            let position = heaps(code, vec![size]);
            let total = position.value(&mut context).unwrap();
            for target in [0, 1, 2, 3, total ^ 1] {
                let fast: Vec<HeapMove> = position.moves_to(target, &mut context).unwrap().iter().collect();
                let mut slow = Vec::new();
                for mv in position.moves().iter() {
                    if position.play_unchecked(&mv).value(&mut context).unwrap() == target {
                        slow.push(mv);
                    }
                }
                assert_eq!(fast, slow, "{code} heap {size} target {target}");
            }
        }
    }
}

#[test]
fn move_sets_match_the_search_on_small_positions() {
    for code in ["0.77", "0.07", "4!.0", "0.3F", "4.007", "0.[3]"] {
        for sizes in [vec![0], vec![1, 2], vec![7], vec![5, 9, 2]] {
            assert_move_sets_match_search(&heaps(code, sizes), &[0, 1, 2, 3, 4, 5]);
        }
    }
}

#[test]
fn moves_are_legal_and_leave_what_they_say() {
    let position = heaps("4!.37", vec![9, 4]);
    for mv in position.moves().iter() {
        assert!(position.is_legal(&mv), "{mv:?}");
        let after = position.play_unchecked(&mv);
        assert_eq!(after.heaps().iter().sum::<u64>() + mv.take, 13);
    }
    assert!(position.is_legal(&HeapMove { heap: 0, take: 0, left: 2, leave: [3, 6, 0] }));
    assert!(!position.is_legal(&HeapMove { heap: 0, take: 0, left: 2, leave: [4, 4, 0] }));
    assert!(!position.is_legal(&HeapMove { heap: 2, take: 1, left: 1, leave: [3, 0, 0] }));
    assert!(position.is_legal(&HeapMove { heap: 0, take: 2, left: 1, leave: [7, 0, 0] }));
    assert!(!position.is_legal(&HeapMove { heap: 0, take: 2, left: 1, leave: [6, 0, 0] }), "the sizes must add up");
}

#[test]
fn heaps_past_the_compute_limit_are_refused_where_no_period_can_be_proven() {
    let past = heaps("4!.0", vec![3, max_heap_compute() + 1]);
    // Refused at once, without computing: the rules admit no proof.
    let mut context = SearchContext::in_memory();
    let refused = past.value(&mut context).unwrap_err();
    assert!(matches!(refused, Interrupted::PastComputeLimit { limit, .. } if limit == max_heap_compute()));
    assert!(refused.to_string().contains("an Explore heapSequence job"), "{refused}");
    assert_eq!(context.stats.positions_computed, 0);
    assert!(Heaps::with_code("0.77", vec![u64::MAX]).is_ok());
    let too_many = Heaps::with_code("0.77", vec![1; MAX_HEAPS + 1]).unwrap_err();
    assert_eq!(too_many, HeapsError::TooManyHeaps(MAX_HEAPS + 1));
}

/// The values go to the memo whenever they grow, and a solve with a fresh in-process cache (as
/// after a restart) continues from them; bytes that do not decode are ignored and overwritten.
#[test]
fn values_are_kept_in_the_memo_and_read_back() {
    let store = MemoryMemo::default();
    // Rules no other test uses, so that no other test touches their cached values.
    let rules = Rules::code("4!.1").unwrap();
    let key = rules.canonical_bytes();
    let mut context = SearchContext::new(Budget::unlimited(), &store);
    let value = heaps("4!.1", vec![3000]).value(&mut context).unwrap();
    assert_eq!(context.stats.cache_hits, 0);
    assert!(context.stats.positions_computed >= 3000);
    let stored = Sequence::decode(rules.clone(), &store.get_bytes(GameTag::Heaps, &key).expect("stored")).unwrap();
    assert!(stored.computed() > 3000);
    assert_eq!(stored.value(3000), Some(value));
    SEQUENCES.remove(&rules);
    let mut context = SearchContext::new(Budget::unlimited(), &store);
    assert_eq!(heaps("4!.1", vec![3000]).value(&mut context), Ok(value));
    assert_eq!((context.stats.cache_hits, context.stats.positions_computed), (1, 0));

    let rules = Rules::subtraction(&[2, 5, 7], false).unwrap();
    store.put_bytes(GameTag::Heaps, &rules.canonical_bytes(), b"garbage".to_vec(), 1);
    let mut context = SearchContext::new(Budget::unlimited(), &store);
    let given = Given::Subtraction { take: vec![2, 5, 7], all_but: false };
    let position = Heaps::new(given, rules.clone(), vec![1 << 40]).unwrap();
    assert!(position.value(&mut context).is_ok());
    assert_eq!(context.stats.cache_hits, 0, "garbage is no hit");
    let bytes = store.get_bytes(GameTag::Heaps, &rules.canonical_bytes()).unwrap();
    assert!(Sequence::decode(rules, &bytes).expect("overwritten").period().is_some());
}

/// Groups of moves too large to list (a split into two heaps of 60 000 tokens, three of 500, the
/// residues of 0.16's period of 149 459 over several laps) give the same moves to each value as
/// filtering every move by the values it leaves, in the same order; the first of them is
/// `first_move_to`'s.
#[test]
fn large_groups_give_the_moves_that_filtering_finds() {
    let mut context = SearchContext::in_memory();
    let kayles_16 = sequence("0.16", 1 << 20).period().expect("0.16 is periodic (Flammenkamp: period 149 459)");
    assert_eq!(kayles_16.period, 149_459);
    let long = kayles_16.preperiod + 3 * kayles_16.period + 12_345;
    for (code, size) in [("4!.0", 60_000), ("8.0", 500), ("0.16", long)] {
        let position = heaps(code, vec![size, 5]);
        let sequence = position.sequence_for_heaps(&mut context).unwrap();
        let value = |heap: u64| sequence.value(heap).unwrap();
        let total = position.total(&sequence);
        let mut found = 0;
        for target in [0, 1, 2, total ^ 1] {
            let fast: Vec<HeapMove> = position.moves_to(target, &mut context).unwrap().iter().collect();
            let slow: Vec<HeapMove> = position
                .moves()
                .iter()
                .filter(|mv| {
                    let others = position.heaps.iter().enumerate().filter(|&(i, _)| i != mv.heap);
                    let rest = others.fold(0, |sum, (_, &heap)| sum ^ value(heap));
                    mv.left().iter().fold(rest, |sum, &heap| sum ^ value(heap)) == target
                })
                .collect();
            assert_eq!(fast, slow, "{code} heap {size} target {target}");
            assert_eq!(position.first_move_to(target, &mut context).unwrap(), slow.first().copied());
            found += fast.len();
        }
        assert!(found > 50, "{code} {size}: {found} moves");
    }
}

/// A heap's moves are counted and indexed, never listed: the splits of a heap past anything that
/// could be listed (about 2.8 × 10^37 splits into three heaps) are counted exactly and indexed at once.
#[test]
fn the_moves_of_any_heap_are_counted_without_listing_them() {
    let position = heaps("8.0", vec![u64::MAX]);
    let moves = position.moves();
    let count = moves.len();
    // The number of partitions of n into three positive parts is the integer nearest n²/12.
    let n = u128::from(u64::MAX);
    let nearest = (n * n + 6) / 12;
    assert_eq!(count, nearest);
    let last = moves.get(count - 1).unwrap();
    assert_eq!(last.left(), [u64::MAX / 3; 3]);
    assert!(position.is_legal(&moves.get(count / 2).unwrap()));
}

/// The period search is linear: the subtraction game {65 536} (G(n) = ⌊n / 65 536⌋ mod 2, period
/// 131 072) has its period proven from the values, as a naive look at each shift finds it.
#[test]
fn long_periods_are_found_as_a_look_at_each_shift_finds_them() {
    let rules = Rules::subtraction(&[65_536], false).unwrap();
    let mut sequence = Sequence::new(rules);
    sequence.extend_to(1 << 20, &Budget::unlimited()).unwrap();
    let period = sequence.period().expect("proven");
    assert_eq!((period.preperiod, period.period, period.saltus), (0, 131_072, 0));
    for n in [0u64, 65_535, 65_536, 1 << 40, u64::MAX] {
        assert_eq!(sequence.value(n), Some(n / 65_536 % 2), "{n}");
    }
    // The candidate period of an arithmetic-periodic game matches a look at each shift.
    for (code, len) in [("0.3F", 900), ("4.007", 700), ("0.106", 3000)] {
        let computed = self::sequence(code, len);
        let values: Vec<i64> = (0..computed.computed()).map(|n| computed.value(n).unwrap() as i64).collect();
        let len = values.len();
        let naive = (1..=len / 4).find_map(|period| {
            let saltus = values[len - 1] - values[len - 1 - period];
            let mut preperiod = len - period;
            while preperiod > 0 && values[preperiod - 1 + period] - values[preperiod - 1] == saltus {
                preperiod -= 1;
            }
            (saltus >= 0 && preperiod <= len / 2).then_some((preperiod as u64, period as u64, saltus as u64))
        });
        let candidate = computed.candidate_period().map(|p| (p.preperiod, p.period, p.saltus));
        assert_eq!(candidate, naive, "{code}");
    }
}

/// Codes that are one rule set are one: a listed digit equal to the repeated one just after it is
/// part of it, so `0.3[3]` is Nim and answers any heap.
#[test]
fn a_repeated_digit_takes_in_the_equal_digits_before_it() {
    assert_eq!(Rules::code("0.3[3]").unwrap(), Rules::nim());
    assert_eq!(Rules::code("0.33[3]").unwrap(), Rules::nim());
    assert_ne!(Rules::code("0.30[3]").unwrap(), Rules::nim());
    assert_eq!(Rules::code("0.23[3]").unwrap(), Rules::code("0.2[3]").unwrap());
    let mut context = SearchContext::in_memory();
    assert_eq!(heaps("0.3[3]", vec![u64::MAX, 5]).value(&mut context), Ok(u64::MAX ^ 5));
}
