//! Stone boxes (HDU 1729): each box of capacity `s` holds `c` stones; a move adds between 1 and `c²`
//! stones to one box without passing its capacity (so an empty box can never be filled). The player
//! who cannot move loses.
//!
//! The boxes are independent, so a position's value is the XOR of [`box_value`] over its boxes.

use super::ServedGame;
use super::{display_setup_error, FieldPath, Game, Interrupted, MoveSet, Nimber, SearchContext, SetupError};

/// The most boxes a position may hold.
pub const MAX_BOXES: usize = 100_000;

/// The largest `t` with `t + t² < capacity` (`capacity ≥ 1`): from more than `t` stones a box can be
/// filled in one move, from at most `t` it cannot (`t + t² < capacity`).
fn threshold(capacity: u64) -> u64 {
    // With r = ⌊√capacity⌋: (r + 1)(r + 2) > (r + 1)² > capacity, and (r − 1)r = r² − r < capacity
    // for r ≥ 1, so the answer is r or r − 1.
    // (A capacity of 0 has no such t; it gets 0, and callers never ask.)
    let root = capacity.isqrt();
    if u128::from(root) * u128::from(root + 1) < u128::from(capacity) {
        root
    } else {
        root.saturating_sub(1)
    }
}

/// The most stones a box holding `stones` may reach in one move, ignoring its capacity: `c + c²`
/// (exact in `u128` for every `u64` count).
fn reach(stones: u64) -> u128 {
    let stones = u128::from(stones);
    stones + stones * stones
}

/// The Grundy value of a box of `capacity` holding `stones` (`stones ≤ capacity`; a larger count
/// counts as a full box).
///
/// Rule: an empty or full box has value 0. Otherwise let `t` be the largest number with `t + t² < s`. If
/// `c > t` the value is `s − c`; if `c ≤ t` it is the value of a box of capacity `t` holding `c`.
///
/// # Proof
/// Fix `s` and argue by induction on `s − c`.
/// - `c > t`: then `c + c² ≥ s`, so the options are every count in `(c, s]`, all above `t`, with
///   values `s − c'` by induction: exactly `0, …, s − c − 1`, so the value is `s − c`.
/// - `0 < c ≤ t` with `c + c² ≤ t`: the options are the counts in `(c, c + c²]`, all at most `t`,
///   the same as in a box of capacity `t`, and by induction each has the same value in both boxes.
/// - `0 < c ≤ t < c + c²`: in the box of capacity `t`, `c` can fill the box, so its value there is
///   `t − c`, its options `(c, t]` having values `0, …, t − c − 1` (by induction the same in the box of
///   capacity `s`). In the box of capacity `s` it has the extra options `(t, c + c²]` (below `s`, as
///   `c + c² ≤ t + t² < s`), whose values are `s − c' ≥ s − c − c² > t − c`, since `c² ≤ t² < s − t`.
///   They neither fill the gap at `t − c` nor lower the mex, so the value is `t − c` in both boxes.
///
/// Each step replaces `s` by about `√s`, so the loop runs about `log log s` times (at most 6 for
/// `u64`). Checked against the Grundy recursion for every box up to capacity 2000 in the test
/// `box_value_matches_grundy_recursion`.
pub fn box_value(capacity: u64, stones: u64) -> u64 {
    let mut capacity = capacity;
    loop {
        if stones == 0 || stones >= capacity {
            return 0;
        }
        let t = threshold(capacity);
        if stones > t {
            return capacity - stones;
        }
        capacity = t;
    }
}

/// Every count of stones the box of `capacity` holding `stones` can move to in one move whose value
/// is `wanted`, ascending (at most one per step of [`box_value`]'s loop, so at most 7 for `u64`).
///
/// Let `s = T₀ > T₁ > … > T_m = 0` be the chain of thresholds, `T_{i+1} = t(T_i)`. Unrolling
/// [`box_value`]'s loop for a count `c'` of the box of capacity `s`: with `T_{i+1} < c' ≤ T_i` the loop
/// reaches capacity `T_i` and returns `T_i − c'` (0 when `c' = T_i`). So on each segment
/// `(T_{i+1}, T_i]` the value falls by 1 per stone, and `wanted` occurs there exactly at
/// `c' = T_i − wanted`, provided `wanted < T_i − T_{i+1}`. The options are the counts in
/// `(c, min(c + c², s)]`; segments at or below `c` hold none.
fn options_with_value(capacity: u64, stones: u64, wanted: u64) -> Vec<u64> {
    let top = reach(stones).min(u128::from(capacity));
    let mut found = Vec::new();
    let mut segment_top = capacity;
    while segment_top > stones {
        let below = threshold(segment_top);
        if wanted < segment_top - below {
            let count = segment_top - wanted;
            if count > stones && u128::from(count) <= top {
                found.push(count);
            }
        }
        segment_top = below;
    }
    found.reverse();
    found
}

/// How many moves the box of `capacity` holding `stones` has: `min(c², s − c)`.
fn option_count(capacity: u64, stones: u64) -> u128 {
    reach(stones).min(u128::from(capacity)) - u128::from(stones)
}

/// One box: its capacity and the stones in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StoneBox {
    /// How many stones the box holds when full.
    pub capacity: u64,
    /// How many stones are in it (at most `capacity`).
    pub stones: u64,
}

/// A move: add stones to one box. Moves order by box, then by the stones added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AddStones {
    /// Which box (0-based index into [`Boxes::boxes`]).
    pub box_index: usize,
    /// How many stones to add: from 1 to the square of the box's current count, without passing its
    /// capacity.
    pub stones: u64,
}

/// Why a list of boxes is not a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoneBoxesError {
    /// A box holds more stones than it can.
    StonesExceedCapacity {
        /// The box's 0-based index.
        box_index: usize,
        /// The stones given.
        stones: u64,
        /// The box's capacity.
        capacity: u64,
    },
    /// More than [`MAX_BOXES`] boxes.
    TooManyBoxes {
        /// How many boxes were given.
        count: usize,
    },
}

impl SetupError for StoneBoxesError {
    fn field(&self) -> FieldPath {
        let boxes = FieldPath::field("boxes");
        match *self {
            StoneBoxesError::StonesExceedCapacity { box_index, .. } => boxes.at(box_index).then("stones"),
            StoneBoxesError::TooManyBoxes { .. } => boxes,
        }
    }

    fn problem(&self, _name: &dyn Fn(&FieldPath) -> String) -> String {
        match self {
            StoneBoxesError::StonesExceedCapacity { stones, capacity, .. } => {
                format!("({stones}) exceeds capacity ({capacity})")
            }
            StoneBoxesError::TooManyBoxes { count } => format!("has {count} boxes; the limit is {MAX_BOXES}"),
        }
    }
}

display_setup_error!(StoneBoxesError);

/// A position of the stone boxes game: the boxes, in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Boxes {
    boxes: Vec<StoneBox>,
}

impl Boxes {
    /// The position with these boxes; no box may hold more than its capacity, and there may be at
    /// most [`MAX_BOXES`] boxes (none is fine: a position without moves, value 0).
    pub fn new(boxes: Vec<StoneBox>) -> Result<Self, StoneBoxesError> {
        if boxes.len() > MAX_BOXES {
            return Err(StoneBoxesError::TooManyBoxes { count: boxes.len() });
        }
        if let Some((box_index, full)) = boxes.iter().enumerate().find(|(_, b)| b.stones > b.capacity) {
            return Err(StoneBoxesError::StonesExceedCapacity {
                box_index,
                stones: full.stones,
                capacity: full.capacity,
            });
        }
        Ok(Self { boxes })
    }

    /// The boxes, in order.
    pub fn boxes(&self) -> &[StoneBox] {
        &self.boxes
    }

    /// The XOR of the boxes' values.
    fn nimber(&self) -> u64 {
        self.boxes.iter().fold(0, |total, b| total ^ box_value(b.capacity, b.stones))
    }

    /// For each box in order: its index, the box, and the counts it can move to (ascending) that
    /// give the whole position the value `target`.
    fn options_to(&self, target: Nimber) -> impl Iterator<Item = (usize, &StoneBox, Vec<u64>)> + '_ {
        let change = target ^ self.nimber();
        self.boxes.iter().enumerate().map(move |(box_index, b)| {
            let wanted = box_value(b.capacity, b.stones) ^ change;
            (box_index, b, options_with_value(b.capacity, b.stones, wanted))
        })
    }
}

impl Game for Boxes {
    type Move = AddStones;
    type Value = Nimber;

    fn value(&self, _solver: &mut SearchContext) -> Result<Nimber, Interrupted> {
        Ok(self.nimber())
    }

    /// Boxes in order; for each, every amount from 1 up to `min(c², s − c)`, ascending:
    /// `Σ min(c², s − c)` moves.
    fn moves(&self) -> MoveSet<AddStones> {
        let mut moves = MoveSet::empty();
        for (box_index, b) in self.boxes.iter().enumerate() {
            // stones = index + 1 ≤ min(c², s − c) ≤ s − c fits in u64.
            moves.push(option_count(b.capacity, b.stones), move |index| AddStones {
                box_index,
                stones: index as u64 + 1,
            });
        }
        moves
    }

    /// Whether the box exists and the amount is between 1 and `min(c², s − c)`.
    fn is_legal(&self, mv: &AddStones) -> bool {
        self.boxes.get(mv.box_index).is_some_and(|b| {
            mv.stones >= 1
                && u128::from(mv.stones) <= reach(b.stones) - u128::from(b.stones)
                && mv.stones <= b.capacity - b.stones
        })
    }

    /// Adds the stones.
    fn play_unchecked(&self, mv: &AddStones) -> Self {
        debug_assert!(self.is_legal(mv), "{mv:?} is not legal in {self:?}");
        let mut boxes = self.boxes.clone();
        if let Some(b) = boxes.get_mut(mv.box_index) {
            b.stones = b.stones.saturating_add(mv.stones).min(b.capacity);
        }
        Self { boxes }
    }

    /// Built directly, in time linear in the number of boxes whatever their sizes: a box of value
    /// `v` contributes its options of value `v ⊕ total ⊕ t` (`options_with_value`).
    fn moves_to(&self, target: Nimber, _solver: &mut SearchContext) -> Result<MoveSet<AddStones>, Interrupted> {
        let mut moves = MoveSet::empty();
        for (box_index, b, counts) in self.options_to(target) {
            let stones = b.stones;
            moves.push(counts.len() as u128, move |index| AddStones {
                box_index,
                stones: counts[index as usize] - stones,
            });
        }
        Ok(moves)
    }
}

impl ServedGame for Boxes {
    const NAME: &'static str = "stone_boxes";
    const SEARCHES: bool = false;
    type Error = StoneBoxesError;
    type Learnt = ();

    fn items(&self) -> usize {
        self.boxes.len()
    }

    fn parts(&self) -> Option<Vec<Self>> {
        (self.boxes.len() > 1).then(|| self.boxes.iter().map(|&one| Boxes { boxes: vec![one] }).collect())
    }

    fn move_in_part(index: usize, mv: AddStones) -> AddStones {
        AddStones { box_index: index, ..mv }
    }
}

mod wire;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::move_set_tests::{assert_move_sets_match_search, page};
    use crate::random::SplitMix;

    fn value_of(position: &Boxes) -> Nimber {
        position.value(&mut SearchContext::in_memory()).expect("no budget")
    }

    fn boxes(list: &[(u64, u64)]) -> Boxes {
        Boxes::new(list.iter().map(|&(capacity, stones)| StoneBox { capacity, stones }).collect()).expect("valid boxes")
    }

    /// The Grundy values of every count in a box of `capacity`, straight from the rules: the value of
    /// `c` is the mex of the values of `c + 1, …, min(c + c², s)`. The mex of that range is the least
    /// value whose nearest occurrence above `c` lies beyond the range.
    fn grundy_by_recursion(capacity: usize) -> Vec<u64> {
        let mut values = vec![0u64; capacity + 1];
        // nearest[v]: the smallest count above the current one with value v (or "none").
        let mut nearest = vec![usize::MAX; capacity + 2];
        for c in (0..=capacity).rev() {
            let top = (c + c * c).min(capacity);
            let value = (0..).find(|&v| nearest[v] > top).expect("some value is missing");
            values[c] = value as u64;
            nearest[value] = c;
        }
        values
    }

    #[test]
    fn box_value_matches_grundy_recursion() {
        for capacity in 0..=2000 {
            let values = grundy_by_recursion(capacity);
            for (stones, &value) in values.iter().enumerate() {
                assert_eq!(box_value(capacity as u64, stones as u64), value, "({capacity}, {stones})");
            }
        }
    }

    #[test]
    fn threshold_is_exact_everywhere() {
        let mut capacities: Vec<u64> = (1..=10_000).collect();
        for r in [1u64 << 16, 1 << 31, (1 << 32) - 1, 4_294_967_295] {
            for delta in 0..3 {
                capacities.push(r * (r + 1) + delta);
                capacities.push(r * (r + 1) - delta);
            }
        }
        capacities.extend([u64::MAX, u64::MAX - 1, 1 << 63]);
        for s in capacities {
            let t = u128::from(threshold(s));
            assert!(t + t * t < u128::from(s), "{s}");
            assert!((t + 1) + (t + 1) * (t + 1) >= u128::from(s), "{s}");
        }
    }

    /// The Grundy value of every pair of counts in boxes of capacities `s1` and `s2`, by recursion
    /// over the literal moves of the pair (no Sprague–Grundy addition).
    fn pair_grundy(s1: usize, s2: usize) -> Vec<Vec<u64>> {
        let mut values = vec![vec![0u64; s2 + 1]; s1 + 1];
        for c1 in (0..=s1).rev() {
            for c2 in (0..=s2).rev() {
                let first = (c1 + 1..=(c1 + c1 * c1).min(s1)).map(|n| values[n][c2]);
                let second = (c2 + 1..=(c2 + c2 * c2).min(s2)).map(|n| values[c1][n]);
                values[c1][c2] = crate::games::mex(first.chain(second).collect::<Vec<_>>());
            }
        }
        values
    }

    #[test]
    fn pairs_of_small_boxes_agree_with_brute_force() {
        let mut context = SearchContext::in_memory();
        for s1 in 0..=30 {
            for s2 in 0..=30 {
                let table = pair_grundy(s1, s2);
                for c1 in 0..=s1 {
                    for c2 in 0..=s2 {
                        let position = boxes(&[(s1 as u64, c1 as u64), (s2 as u64, c2 as u64)]);
                        let g = table[c1][c2];
                        assert_eq!(value_of(&position), g, "{position:?}");
                        let literal = |mv: &AddStones| {
                            let next = position.play_unchecked(mv);
                            table[next.boxes()[0].stones as usize][next.boxes()[1].stones as usize]
                        };
                        let (_, best) = position.best_move(&mut context).expect("no budget");
                        match best {
                            Some(mv) => {
                                assert!(position.is_legal(&mv), "{position:?}: {mv:?}");
                                assert!(g == 0 || literal(&mv) == 0, "{position:?}: {mv:?} does not win");
                            }
                            None => assert_eq!(position.moves().len(), 0, "{position:?}"),
                        }
                        let mut reachable = [false; 32];
                        for mv in position.moves().iter() {
                            reachable[literal(&mv) as usize] = true;
                        }
                        for (t, &exists) in (0..).zip(&reachable) {
                            let direct = position.first_move_to(t, &mut context).expect("no budget");
                            assert_eq!(direct.is_some(), exists, "{position:?} to {t}");
                            if let Some(mv) = direct {
                                assert!(position.is_legal(&mv), "{position:?}: {mv:?}");
                                assert_eq!(literal(&mv), t, "{position:?}: {mv:?}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn moves_are_every_legal_addition_in_order() {
        let position = boxes(&[(10, 2), (5, 0), (7, 5), (3, 3)]);
        let moves: Vec<(usize, u64)> = position.moves().iter().map(|mv| (mv.box_index, mv.stones)).collect();
        assert_eq!(moves, vec![(0, 1), (0, 2), (0, 3), (0, 4), (2, 1), (2, 2)]);
        for mv in position.moves().iter() {
            assert!(position.is_legal(&mv));
        }
        assert!(!position.is_legal(&AddStones { box_index: 0, stones: 5 }));
        assert!(!position.is_legal(&AddStones { box_index: 1, stones: 1 }));
        assert!(!position.is_legal(&AddStones { box_index: 2, stones: 3 }));
        assert!(!position.is_legal(&AddStones { box_index: 4, stones: 1 }));
        assert!(!position.is_legal(&AddStones { box_index: 0, stones: 0 }));
    }

    /// A huge box, with stones anywhere: empty, full, tiny, near the thresholds, or at random.
    fn huge_box(random: &mut SplitMix) -> (u64, u64) {
        let capacity = u64::MAX - random.below(1 << 20);
        let t1 = threshold(capacity);
        let t2 = threshold(t1);
        let stones = match random.next_u64() % 9 {
            0 => 0,
            1 => capacity,
            2 => 1 + random.below(5),
            3 => t1 - random.below(3),
            4 => t1 + 1 + random.below(3),
            5 => t2 - random.below(3),
            6 => t2 + 1 + random.below(3),
            7 => random.below(t1),
            _ => random.below(capacity),
        };
        (capacity, stones.min(capacity))
    }

    #[test]
    fn move_to_works_on_huge_boxes() {
        let mut random = SplitMix::new(1729);
        let mut context = SearchContext::in_memory();
        for round in 0..20_000 {
            let count = 1 + round % 3;
            let list: Vec<(u64, u64)> = (0..count).map(|_| huge_box(&mut random)).collect();
            let position = boxes(&list);
            let g = value_of(&position);
            let mut targets = vec![0, 1, g / 2, g.saturating_sub(1), random.below(g), random.below(1 << 10)];
            targets.retain(|&t| t < g);
            for t in targets {
                let mv = position
                    .first_move_to(t, &mut context)
                    .expect("no budget")
                    .unwrap_or_else(|| panic!("{list:?}: no move to {t}"));
                assert!(position.is_legal(&mv), "{list:?}: {mv:?}");
                assert_eq!(value_of(&position.play_unchecked(&mv)), t, "{list:?}: {mv:?}");
            }
        }
        // A full box and an empty box have no moves at all.
        let stuck = boxes(&[(u64::MAX, u64::MAX), (u64::MAX, 0)]);
        assert_eq!(value_of(&stuck), 0);
        assert_eq!(stuck.moves().get(0), None);
        // The largest box that can be filled at once: value s − c, reached from below.
        let s = u64::MAX;
        let t = threshold(s);
        assert_eq!(box_value(s, t + 1), s - t - 1);
        let position = boxes(&[(s, t + 1)]);
        let mv = position.first_move_to(0, &mut context).expect("no budget");
        assert_eq!(mv, Some(AddStones { box_index: 0, stones: s - t - 1 }));
    }

    #[test]
    fn move_sets_match_search_on_small_positions() {
        for s1 in 0..=12 {
            for s2 in 0..=12 {
                for c1 in 0..=s1 {
                    for c2 in 0..=s2 {
                        assert_move_sets_match_search(&boxes(&[(s1, c1), (s2, c2)]), &[0, 1, 2]);
                    }
                }
            }
        }
        for capacity in 0..=70 {
            for stones in 0..=capacity {
                assert_move_sets_match_search(&boxes(&[(capacity, stones)]), &[0, 1, 2]);
            }
        }
        for capacity in 0..=30 {
            for stones in 0..=capacity {
                assert_move_sets_match_search(
                    &boxes(&[(capacity, stones), (7, 2), (capacity, stones / 2)]),
                    &[0, 1, 2],
                );
            }
        }
    }

    #[test]
    fn analysis_is_consistent_on_huge_boxes() {
        let mut random = SplitMix::new(2026);
        let mut context = SearchContext::in_memory();
        let mut several = 0;
        for round in 0..20_000 {
            let count = 1 + round % 3;
            let list: Vec<(u64, u64)> = (0..count).map(|_| huge_box(&mut random)).collect();
            let position = boxes(&list);
            let total = position.moves().len();
            let expected: u128 =
                list.iter().map(|&(s, c)| (u128::from(c) * u128::from(c)).min(u128::from(s - c))).sum();
            assert_eq!(total, expected, "{list:?}");
            // Targets: the values of a few random legal moves (so each is reached), and some others.
            let g = value_of(&position);
            let mut targets = vec![0, 1, g, g ^ 1, g.wrapping_add(1), random.next_u64(), u64::MAX];
            for (box_index, b) in position.boxes().iter().enumerate() {
                let most = option_count(b.capacity, b.stones);
                if most > 0 {
                    let stones = 1 + random.below(most.min(u128::from(u64::MAX)) as u64);
                    for stones in [1, stones, most as u64] {
                        let mv = AddStones { box_index, stones };
                        assert!(position.is_legal(&mv));
                        let reached = value_of(&position.play_unchecked(&mv));
                        let listed = position.moves_to(reached, &mut context).map(|set| page(&set, 0, usize::MAX));
                        assert!(listed.expect("no budget").contains(&mv), "{list:?}: {mv:?} to {reached}");
                        targets.push(reached);
                    }
                }
            }
            targets.sort_unstable();
            targets.dedup();
            let mut counted = 0;
            for t in targets {
                let target = t;
                let count = position.moves_to(target, &mut context).map(|set| set.len()).expect("no budget");
                counted += count;
                let all =
                    position.moves_to(target, &mut context).map(|set| page(&set, 0, usize::MAX)).expect("no budget");
                assert_eq!(all.len() as u128, count, "{list:?} to {t}");
                several += usize::from(count >= 2);
                for (k, mv) in all.iter().enumerate() {
                    assert!(position.is_legal(mv), "{list:?}: {mv:?}");
                    assert_eq!(value_of(&position.play_unchecked(mv)), target, "{list:?}: {mv:?}");
                    let window =
                        position.moves_to(target, &mut context).map(|set| page(&set, k as u128, 2)).expect("no budget");
                    assert_eq!(window, all[k..all.len().min(k + 2)], "{list:?} to {t} from {k}");
                }
                // Consecutive in move order, with nothing to the target in between when the gap is small.
                for pair in all.windows(2) {
                    let key = |mv: &AddStones| (mv.box_index, mv.stones);
                    assert!(key(&pair[0]) < key(&pair[1]), "{list:?} to {t}: {pair:?}");
                    if pair[0].box_index == pair[1].box_index && pair[1].stones - pair[0].stones < 1000 {
                        for stones in pair[0].stones + 1..pair[1].stones {
                            let between = position.play_unchecked(&AddStones { box_index: pair[0].box_index, stones });
                            assert_ne!(value_of(&between), target, "{list:?} to {t}: {pair:?}");
                        }
                    }
                }
                assert_eq!(position.moves_to(target, &mut context).map(|set| page(&set, count, 3)), Ok(Vec::new()));
                assert_eq!(position.moves_to(target, &mut context).map(|set| page(&set, u128::MAX, 3)), Ok(Vec::new()));
            }
            assert!(counted <= total, "{list:?}");
        }
        assert!(several > 100, "some targets should be reached by several moves ({several})");
    }

    #[test]
    fn empty_position_and_errors() {
        let empty = boxes(&[]);
        assert_eq!(value_of(&empty), 0);
        assert_eq!(empty.moves().len(), 0);
        let err =
            Boxes::new(vec![StoneBox { capacity: 5, stones: 1 }, StoneBox { capacity: 10, stones: 12 }]).unwrap_err();
        assert_eq!(err.to_string(), "boxes[1].stones (12) exceeds capacity (10)");
        let err = Boxes::new(vec![StoneBox { capacity: 1, stones: 0 }; MAX_BOXES + 1]).unwrap_err();
        assert_eq!(err.to_string(), "boxes has 100001 boxes; the limit is 100000");
        assert!(Boxes::new(vec![StoneBox { capacity: 1, stones: 0 }; MAX_BOXES]).is_ok());
    }
}
