//! A heap's moves as groups that are counted and indexed without being listed (a heap of n has about
//! n²/12 splits into three heaps), and the moves of a group that reach a value, indexed by counts
//! kept every few thousand moves ([`Reaching`]), so that a set of winning moves takes a few bytes
//! per thousand moves of the heap, whatever the heap.

use std::sync::Arc;

use super::rules::{Rules, Split};
use super::sequence::Sequence;
use super::HeapMove;
use crate::games::{Budget, Interrupted, MoveSet, Nimber};

/// What one group of a heap's moves does.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// One move: taking `take`, leaving nothing or one heap of the rest.
    Single { take: u64, leaves_one: bool },
    /// Taking `take`, splitting `rest` into `a` and `rest − a`, for `count` values of `a` from `first`.
    Pairs { take: u64, rest: u64, first: u64, count: u64 },
    /// Taking `take`, splitting `rest` into `a ≤ b ≤ c`, in lexicographic order.
    Triples { take: u64, rest: u64 },
    /// A digit repeated from `start`: taking any of `start..size` tokens, leaving one heap.
    Repeated { start: u64 },
}

/// One group of the moves of heap number `heap` (of `size` tokens), in move order.
#[derive(Clone, Copy, Debug)]
pub(super) struct Group {
    heap: usize,
    size: u64,
    kind: Kind,
}

/// ⌊0/2⌋ + ⌊1/2⌋ + … + ⌊x/2⌋ = ⌊x/2⌋ · ⌊(x + 1)/2⌋ (by induction: each even x adds x/2 to the
/// first factor's product, each odd x adds (x − 1)/2 to the second's).
fn halves_up_to(x: u64) -> u128 {
    u128::from(x / 2) * u128::from(x.div_ceil(2))
}

/// How many splits `a ≤ b ≤ c` of `rest` have a first heap below `a` (1 ≤ a ≤ rest/3 + 1): row a′
/// holds ⌊(rest − a′)/2⌋ − a′ + 1 splits, and Σ_{a′<a} ⌊(rest − a′)/2⌋ = F(rest − 1) − F(rest − a)
/// with F = [`halves_up_to`].
fn triples_before(rest: u64, a: u64) -> u128 {
    let a = u128::from(a);
    halves_up_to(rest - 1) - halves_up_to(rest - a as u64) - (a - 1) * a / 2 + (a - 1)
}

/// How many splits `a ≤ b ≤ c` of `rest` there are.
fn triples(rest: u64) -> u128 {
    if rest < 3 {
        return 0;
    }
    triples_before(rest, rest / 3 + 1)
}

/// Split number `index` (below [`triples`]) of `rest`, in lexicographic order, as `(a, b)`: the row
/// `a` by bisection on [`triples_before`], then `b` within it.
fn triple_at(rest: u64, index: u128) -> (u64, u64) {
    let (mut low, mut high) = (1, rest / 3);
    while low < high {
        let middle = low + (high - low).div_ceil(2);
        if triples_before(rest, middle) <= index {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    (low, low + (index - triples_before(rest, low)) as u64)
}

impl Group {
    /// How many moves the group holds.
    pub(super) fn len(&self) -> u128 {
        match self.kind {
            Kind::Single { .. } => 1,
            Kind::Pairs { count, .. } => u128::from(count),
            Kind::Triples { rest, .. } => triples(rest),
            Kind::Repeated { start } => u128::from(self.size - start),
        }
    }

    /// Move number `index` (below [`Group::len`]).
    pub(super) fn get(&self, index: u128) -> HeapMove {
        let heap = self.heap;
        match self.kind {
            Kind::Single { take, leaves_one: false } => HeapMove::new(heap, take, &[]),
            Kind::Single { take, leaves_one: true } => HeapMove::new(heap, take, &[self.size - take]),
            Kind::Pairs { take, rest, first, .. } => {
                let a = first + index as u64;
                HeapMove::new(heap, take, &[a, rest - a])
            }
            Kind::Triples { take, rest } => {
                let (a, b) = triple_at(rest, index);
                HeapMove::new(heap, take, &[a, b, rest - a - b])
            }
            Kind::Repeated { start } => {
                let take = start + index as u64;
                HeapMove::new(heap, take, &[self.size - take])
            }
        }
    }

    /// The moves from number `start` on, in order (a split into three heaps is found once, then
    /// walked).
    pub(super) fn iter_from(&self, start: u128) -> Box<dyn Iterator<Item = HeapMove> + '_> {
        match self.kind {
            Kind::Triples { take, rest } if start < self.len() => {
                let (a, b) = triple_at(rest, start);
                let next = move |&(a, b): &(u64, u64)| match b < (rest - a) / 2 {
                    true => Some((a, b + 1)),
                    false => (a < rest / 3).then_some((a + 1, a + 1)),
                };
                let heap = self.heap;
                Box::new(
                    std::iter::successors(Some((a, b)), next)
                        .map(move |(a, b)| HeapMove::new(heap, take, &[a, b, rest - a - b])),
                )
            }
            _ => Box::new((start..self.len()).map(|index| self.get(index))),
        }
    }
}

/// The splits of `size − take` into `a` and the rest, for `count` values of `a` from `first`: moves
/// of heap number `heap` of `size` tokens, which the rules must allow.
pub(super) fn pairs(heap: usize, size: u64, take: u64, first: u64, count: u64) -> Group {
    Group { heap, size, kind: Kind::Pairs { take, rest: size - take, first, count } }
}

/// The groups of the moves from heap number `heap` of `size` tokens under `rules`, in move order
/// (ascending [`HeapMove`]s).
pub(super) fn groups(rules: &Rules, heap: usize, size: u64) -> Vec<Group> {
    let mut groups = Vec::new();
    let mut push = |kind: Kind| groups.push(Group { heap, size, kind });
    let listed_limit = rules.tail_digit().map_or(u64::MAX, |(from, _)| from - 1);
    for (take, digit) in rules.digits_up_to(size.min(listed_limit)) {
        let rest = size - take;
        if digit.may_leave(0) && rest == 0 {
            push(Kind::Single { take, leaves_one: false });
        }
        if digit.may_leave(1) && rest > 0 {
            push(Kind::Single { take, leaves_one: true });
        }
        if digit.may_leave(2) && rest >= 2 {
            let (first, count) = match digit.split() {
                Split::Any => (1, rest / 2),
                Split::Unequal => (1, (rest - 1) / 2),
                Split::Equal => (rest / 2, u64::from(rest.is_multiple_of(2))),
            };
            if count > 0 {
                push(Kind::Pairs { take, rest, first, count });
            }
        }
        if digit.may_leave(3) && rest >= 3 {
            push(Kind::Triples { take, rest });
        }
    }
    // A repeated digit takes any number from its start: one group, not one per number.
    if let Some((start, digit)) = rules.tail_digit() {
        if size >= start {
            if digit.may_leave(1) && size > start {
                push(Kind::Repeated { start });
            }
            if digit.may_leave(0) {
                push(Kind::Single { take: size, leaves_one: false });
            }
        }
    }
    groups
}

/// Every group of moves into one move set.
pub(super) fn move_set(groups: Vec<Group>) -> MoveSet<HeapMove> {
    let mut moves = MoveSet::empty();
    for group in groups {
        moves.push(group.len(), move |index| group.get(index));
    }
    moves
}

/// Groups of at most this many moves are filtered into a list; larger ones are [`Reaching`].
const LISTED_MOST: u128 = 4096;

/// How many moves of a group apart [`Reaching`] keeps a count: 8 bytes per this many moves, and
/// at most this many moves looked at to find one.
const SAMPLE: u128 = 8192;

/// The moves of a group whose heaps left are worth `wanted` together, counted and indexed without
/// listing them: one scan of the group keeps, every [`SAMPLE`] moves, how many reached `wanted`
/// before; the `j`-th is then found by scanning from the last count at most `j`.
pub(super) struct Reaching {
    group: Group,
    sequence: Arc<Sequence>,
    wanted: Nimber,
    /// `before[k]`: how many of the group's first `k × SAMPLE` moves reach `wanted`.
    before: Vec<u64>,
    count: u64,
}

/// Whether the heaps `mv` leaves are worth `wanted` together (their values known in `sequence`).
fn reaches(sequence: &Sequence, mv: &HeapMove, wanted: Nimber) -> bool {
    let value = |heap: u64| sequence.value(heap).expect("the sequence answers every heap left");
    mv.left().iter().fold(0, |total, &heap| total ^ value(heap)) == wanted
}

impl Reaching {
    /// Scans `group`, checking `budget` every [`SAMPLE`] moves.
    pub(super) fn scan(
        group: Group,
        sequence: Arc<Sequence>,
        wanted: Nimber,
        budget: &Budget,
    ) -> Result<Self, Interrupted> {
        let mut before = Vec::with_capacity((group.len() / SAMPLE) as usize + 1);
        let mut count = 0;
        for (index, mv) in group.iter_from(0).enumerate() {
            if (index as u128).is_multiple_of(SAMPLE) {
                budget.check()?;
                before.push(count);
            }
            count += u64::from(reaches(&sequence, &mv, wanted));
        }
        Ok(Reaching { group, sequence, wanted, before, count })
    }

    /// How many moves of the group reach `wanted`.
    pub(super) fn count(&self) -> u64 {
        self.count
    }

    /// How many of the group's first `moves` moves reach `wanted`.
    pub(super) fn count_before(&self, moves: u128) -> u64 {
        let sample = (moves / SAMPLE) as usize;
        let Some(&before) = self.before.get(sample) else { return self.count };
        let from = sample as u128 * SAMPLE;
        let rest = self.group.iter_from(from).take((moves - from) as usize);
        before + rest.filter(|mv| reaches(&self.sequence, mv, self.wanted)).count() as u64
    }

    /// The `j`-th move that reaches `wanted` (below [`Reaching::count`]).
    pub(super) fn get(&self, j: u64) -> HeapMove {
        let sample = self.before.partition_point(|&before| before <= j) - 1;
        let skip = (j - self.before[sample]) as usize;
        let mut reaching =
            self.group.iter_from(sample as u128 * SAMPLE).filter(|mv| reaches(&self.sequence, mv, self.wanted));
        reaching.nth(skip).expect("the counts say it is there")
    }
}

/// The moves of `group` whose heaps left are worth `wanted` together, in order: listed for a small
/// group, indexed by a [`Reaching`] scan for a large one; checks `budget`.
pub(super) fn reaching(
    group: Group,
    sequence: &Arc<Sequence>,
    wanted: Nimber,
    budget: &Budget,
) -> Result<MoveSet<HeapMove>, Interrupted> {
    if group.len() <= LISTED_MOST {
        budget.check()?;
        let found = group.iter_from(0).filter(|mv| reaches(sequence, mv, wanted)).collect();
        return Ok(MoveSet::listed(found));
    }
    let scan = Arc::new(Reaching::scan(group, sequence.clone(), wanted, budget)?);
    let mut moves = MoveSet::empty();
    moves.push(u128::from(scan.count), move |j| scan.get(j as u64));
    Ok(moves)
}

/// The first move of `group` whose heaps left are worth `wanted` together, if any; checks `budget`
/// every [`SAMPLE`] moves.
pub(super) fn first_reaching(
    group: Group,
    sequence: &Sequence,
    wanted: Nimber,
    budget: &Budget,
) -> Result<Option<HeapMove>, Interrupted> {
    for (index, mv) in group.iter_from(0).enumerate() {
        if (index as u128).is_multiple_of(SAMPLE) {
            budget.check()?;
        }
        if reaches(sequence, &mv, wanted) {
            return Ok(Some(mv));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The splits of `rest` into three heaps, listed as the rules say.
    fn listed_triples(rest: u64) -> Vec<(u64, u64)> {
        (1..=rest / 3).flat_map(|a| (a..=(rest - a) / 2).map(move |b| (a, b))).collect()
    }

    #[test]
    fn splits_into_three_heaps_are_counted_and_indexed_as_listed() {
        for rest in 0..200 {
            let listed = listed_triples(rest);
            assert_eq!(triples(rest), listed.len() as u128, "{rest}");
            for (index, &split) in listed.iter().enumerate() {
                assert_eq!(triple_at(rest, index as u128), split, "{rest} #{index}");
            }
            let group = Group { heap: 0, size: rest, kind: Kind::Triples { take: 0, rest } };
            for start in [0, 1, listed.len() / 2, listed.len()] {
                let walked: Vec<(u64, u64)> =
                    group.iter_from(start as u128).map(|mv| (mv.leave[0], mv.leave[1])).collect();
                assert_eq!(walked, listed[start.min(listed.len())..], "{rest} from {start}");
            }
        }
        // A heap past what could ever be listed: counted and indexed at once.
        let rest = u64::MAX;
        let total = triples(rest);
        assert!(total > 1u128 << 120, "{total}");
        let (a, b) = triple_at(rest, total - 1);
        assert_eq!((a, b, rest - a - b), (rest / 3, rest / 3, rest / 3));
        assert_eq!(triple_at(rest, 0), (1, 1));
    }
}
