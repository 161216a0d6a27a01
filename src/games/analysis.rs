//! "What is every move worth?": a position's moves with the values they lead to, winning moves
//! first, paged, with exact move counts; and the best move. Written once for every game, over the
//! games' move sets ([`MoveSet`]), which are counted and indexed without enumeration.
//!
//! What a page may cost: a position with at most [`ENUMERATION_LIMIT`] moves is evaluated whole. A
//! larger one lists its winning moves (the set of moves to the winning target), then the others (the
//! tail) in move order. A page of the tail is found by arithmetic on the two sets, whatever its
//! offset (see [`others_from`]), and only the moves on the page are evaluated. A page starting at or
//! past the last move is empty at once.

use super::{Game, Interrupted, MoveSet, Outcome, SearchContext, Value};

/// How many moves a page lists when the caller does not say.
pub const DEFAULT_LIMIT: usize = 100;
/// The most moves one page may list.
pub const MAX_LIMIT: usize = 1000;
/// Positions with at most this many moves are analyzed by evaluating and sorting every move;
/// larger ones list winning moves first, then the others in move order.
pub const ENUMERATION_LIMIT: u128 = 10_000;

/// One move and the value of the position it leads to.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveValue<M, V> {
    /// The move.
    pub mv: M,
    /// The value after the move.
    pub value: V,
}

impl<M, V: Value> MoveValue<M, V> {
    /// Whether the move wins for the player making it (the opponent is left a lost position).
    pub fn is_winning(&self) -> bool {
        self.value.outcome() == Outcome::PreviousPlayerWins
    }
}

/// A page of a position's analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis<M, V> {
    /// The position's value.
    pub value: V,
    /// How many legal moves there are.
    pub total_moves: u128,
    /// How many of them win.
    pub winning_moves: u128,
    /// This page: winning moves first, then by value.
    pub moves: Vec<MoveValue<M, V>>,
    /// Where the next page starts, if there is one.
    pub next_offset: Option<u128>,
}

/// The order of the listing: winning moves first, then by the nimber they lead to, and positions
/// without a nimber that the opponent wins (won at once) last.
fn listing_rank<V: Value>(value: V) -> (u8, u64) {
    match (value.outcome(), value.nimber()) {
        (Outcome::PreviousPlayerWins, _) => (0, 0),
        (Outcome::NextPlayerWins, Some(nimber)) => (1, nimber),
        (Outcome::NextPlayerWins, None) => (2, 0),
    }
}

/// The value of `position` and its best move: a winning one (the first in move order) when the
/// player to move wins, otherwise the first legal move; `None` when there is no move at all.
pub fn best_move<G: Game>(
    position: &G,
    context: &mut SearchContext,
) -> Result<(G::Value, Option<G::Move>), Interrupted> {
    let value = position.value(context)?;
    let mv = match value.winning_target() {
        None => position.moves().get(0),
        Some(target) => position.first_move_to(target, context)?,
    };
    Ok((value, mv))
}

/// The number of moves of `set` (ascending) below `mv`.
fn count_below<M: Ord + 'static>(set: &MoveSet<M>, mv: &M) -> u128 {
    let (mut low, mut high) = (0, set.len());
    while low < high {
        let middle = low + (high - low) / 2;
        match set.get(middle) {
            Some(here) if here < *mv => low = middle + 1,
            _ => high = middle,
        }
    }
    low
}

/// The moves of `all` that are not in `winning` (a subset of it; both ascending, as move sets are),
/// from the `skip`-th of them on, in order; O(log² of the sizes) set lookups to start, whatever
/// `skip`, and O(log) per move listed.
///
/// With `before(q)` the number of such moves among the first `q` of `all` (`q` less the winning
/// moves below `all[q]`), non-decreasing in `q`, the `skip`-th is `all[q − 1]` for the least `q`
/// with `before(q) > skip`. From there the walk skips each stretch of winning moves at once: where
/// `all[q] = winning[j]`, the stretch goes on while `all[q + i] = winning[j + i]`, which holds for a
/// prefix of the `i` (both ascending, the one a subset of the other), found by bisection.
pub fn others_from<'s, M: Ord + Clone + 'static>(
    all: &'s MoveSet<M>,
    winning: &'s MoveSet<M>,
    skip: u128,
) -> impl Iterator<Item = M> + 's {
    let total = all.len();
    let before = |q: u128| match all.get(q) {
        Some(mv) => q - count_below(winning, &mv),
        None => total - winning.len(),
    };
    let mut start = None;
    if skip < total - winning.len() {
        let (mut low, mut high) = (1, total);
        while low < high {
            let middle = low + (high - low) / 2;
            if before(middle) > skip {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        start = Some(low - 1);
    }
    let mut at = start.map(|q| (q, all.get(q).map_or(winning.len(), |mv| count_below(winning, &mv))));
    std::iter::from_fn(move || loop {
        let (q, j) = at?;
        let mv = all.get(q)?;
        if winning.get(j).as_ref() != Some(&mv) {
            at = Some((q + 1, j));
            return Some(mv);
        }
        // all[q + i] = winning[j + i] for i < stretch: the longest such prefix.
        let (mut low, mut high) = (1, (total - q).min(winning.len() - j));
        while low < high {
            let middle = low + (high - low).div_ceil(2);
            if all.get(q + middle - 1) == winning.get(j + middle - 1) {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        at = Some((q + low, j + low));
    })
}

/// Analyzes `position`: its value, its move counts, and the page of at most `limit` moves that
/// starts at `offset` in the listing order (empty when `offset` is at or past the last move).
pub fn analyze<G: Game>(
    position: &G,
    offset: u128,
    limit: usize,
    context: &mut SearchContext,
) -> Result<Analysis<G::Move, G::Value>, Interrupted> {
    let value = position.value(context)?;
    let all = position.moves();
    let total_moves = all.len();
    let evaluate = |mv: G::Move, context: &mut SearchContext| -> Result<MoveValue<G::Move, G::Value>, Interrupted> {
        context.budget.check()?;
        let value = position.play_unchecked(&mv).value(context)?;
        Ok(MoveValue { mv, value })
    };
    if total_moves <= ENUMERATION_LIMIT {
        let every = all.iter().map(|mv| evaluate(mv, context)).collect::<Result<Vec<_>, _>>()?;
        return Ok(page(value, every, offset, limit));
    }
    let (winning_moves, moves) = {
        let winning = match value.winning_target() {
            Some(target) => position.moves_to(target, context)?,
            None => MoveSet::empty(),
        };
        let mut page = Vec::with_capacity(limit.min(MAX_LIMIT));
        for mv in winning.iter_from(offset).take(limit) {
            page.push(evaluate(mv, context)?);
        }
        if page.len() < limit && offset < total_moves {
            let skip = offset.saturating_sub(winning.len());
            for mv in others_from(&all, &winning, skip).take(limit - page.len()) {
                page.push(evaluate(mv, context)?);
            }
        }
        (winning.len(), page)
    };
    Ok(Analysis::new(value, total_moves, winning_moves, moves, offset))
}

/// The page of at most `limit` moves starting at `offset` of `every` move of a position worth
/// `value`, each with the value it leads to, listed winning moves first, then by value.
pub fn page<M, V: Value>(value: V, mut every: Vec<MoveValue<M, V>>, offset: u128, limit: usize) -> Analysis<M, V> {
    every.sort_by_key(|move_value| listing_rank(move_value.value));
    let winning = every.iter().filter(|move_value| move_value.is_winning()).count() as u128;
    let total = every.len() as u128;
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(every.len());
    Analysis::new(value, total, winning, every.into_iter().skip(start).take(limit).collect(), offset)
}

impl<M, V> Analysis<M, V> {
    /// The page `moves`, which starts at `offset` of `total_moves`.
    fn new(value: V, total_moves: u128, winning_moves: u128, moves: Vec<MoveValue<M, V>>, offset: u128) -> Self {
        let end = offset.saturating_add(moves.len() as u128);
        let next_offset = (end < total_moves && !moves.is_empty()).then_some(end);
        Analysis { value, total_moves, winning_moves, moves, next_offset }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::cutting::{Paper, Piece};
    use crate::games::stone_boxes::{Boxes, StoneBox};

    #[test]
    fn small_positions_list_every_move_sorted_and_paged() {
        let paper = Paper::new(vec![Piece { width: 7, height: 5 }, Piece { width: 4, height: 4 }]).unwrap();
        let mut context = SearchContext::in_memory();
        let all = analyze(&paper, 0, MAX_LIMIT, &mut context).unwrap();
        assert_eq!(all.total_moves, paper.moves().iter().count() as u128);
        assert_eq!(all.moves.len() as u128, all.total_moves);
        assert_eq!(all.next_offset, None);
        let ranks: Vec<_> = all.moves.iter().map(|m| listing_rank(m.value)).collect();
        assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "sorted: {ranks:?}");
        assert_eq!(all.winning_moves, all.moves.iter().filter(|m| m.is_winning()).count() as u128);
        for move_value in &all.moves {
            assert_eq!(paper.play_unchecked(&move_value.mv).value(&mut context).unwrap(), move_value.value);
        }
        // Pages of 3 put together are the whole listing.
        let mut paged = Vec::new();
        let mut offset = Some(0);
        while let Some(start) = offset {
            let page = analyze(&paper, start, 3, &mut context).unwrap();
            paged.extend(page.moves);
            offset = page.next_offset;
        }
        assert_eq!(paged, all.moves);
    }

    #[test]
    fn huge_positions_list_winning_moves_first_without_enumeration() {
        let boxes = Boxes::new(vec![
            StoneBox { capacity: u64::MAX, stones: 1 << 40 },
            StoneBox { capacity: 1 << 50, stones: 1 << 20 },
        ])
        .unwrap();
        let mut context = SearchContext::in_memory();
        let analysis = analyze(&boxes, 0, 10, &mut context).unwrap();
        assert!(analysis.total_moves > ENUMERATION_LIMIT);
        assert_eq!(analysis.moves.len(), 10);
        let winners = analysis.winning_moves.min(10) as usize;
        assert!(analysis.moves[..winners].iter().all(MoveValue::is_winning));
        assert!(analysis.moves[winners..].iter().all(|m| !m.is_winning()));
        for move_value in &analysis.moves {
            assert_eq!(boxes.play_unchecked(&move_value.mv).value(&mut context).unwrap(), move_value.value);
        }
        // The second page continues where the first ended, with no move twice.
        let next = analyze(&boxes, analysis.next_offset.unwrap(), 10, &mut context).unwrap();
        assert!(next.moves.iter().all(|m| !analysis.moves.contains(m)));
        // Any page of the tail, however deep, is found at once: the last moves of all.
        let last = analyze(&boxes, analysis.total_moves - 3, 10, &mut context).unwrap();
        assert_eq!(last.moves.len(), 3);
        assert_eq!(last.next_offset, None);
        let every = boxes.moves();
        let ends: Vec<_> = last.moves.iter().map(|m| m.mv).collect();
        assert_eq!(ends, every.iter_from(every.len() - 3).collect::<Vec<_>>());
    }

    #[test]
    fn tail_pages_at_any_offset_match_the_enumeration() {
        // 11 998 cuts (past the enumeration limit), with winning cuts spread through them.
        let paper = Paper::new(vec![Piece { width: 6000, height: 6000 }]).unwrap();
        let mut context = SearchContext::in_memory();
        let first = analyze(&paper, 0, 1, &mut context).unwrap();
        assert!(first.total_moves > ENUMERATION_LIMIT);
        let moves = paper.moves();
        let values: Vec<_> =
            moves.iter().map(|mv| (mv, paper.play_unchecked(&mv).value(&mut context).unwrap())).collect();
        let winning: Vec<_> = values.iter().filter(|(_, v)| v.outcome() == Outcome::PreviousPlayerWins).collect();
        let others: Vec<_> = values.iter().filter(|(_, v)| v.outcome() != Outcome::PreviousPlayerWins).collect();
        assert_eq!(first.winning_moves, winning.len() as u128);
        assert!(winning.len() > 10, "the test needs winning moves among the others");
        let listing: Vec<_> = winning.into_iter().chain(others).copied().collect();
        for offset in [0, 1, first.winning_moves - 1, first.winning_moves, 1234, 7777, first.total_moves - 5] {
            let page = analyze(&paper, offset, 40, &mut context).unwrap();
            let expected: Vec<_> = listing.iter().skip(offset as usize).take(40).collect();
            let got: Vec<_> = page.moves.iter().map(|m| (m.mv, m.value)).collect();
            assert_eq!(got.len(), expected.len(), "from {offset}");
            assert!(got.iter().zip(expected).all(|(a, b)| a == b), "from {offset}");
        }
        let past = analyze(&paper, u128::MAX, 10, &mut context).unwrap();
        assert_eq!((past.moves.len(), past.next_offset), (0, None));
        assert_eq!(
            (past.value, past.total_moves, past.winning_moves),
            (first.value, first.total_moves, first.winning_moves)
        );
    }

    #[test]
    fn deep_tail_pages_of_huge_positions_are_arithmetic() {
        let piece = Paper::new(vec![Piece { width: u64::MAX, height: u64::MAX }]).unwrap();
        // No budget: a walk through the tail would not end within the test's lifetime.
        let mut context = SearchContext::in_memory();
        let first = analyze(&piece, 0, 1, &mut context).unwrap();
        let others = first.total_moves - first.winning_moves;
        for offset in [first.winning_moves + 100_001, first.winning_moves + others / 3, first.total_moves - 2] {
            let page = analyze(&piece, offset, 5, &mut context).unwrap();
            assert!(!page.moves.is_empty());
            assert!(page.moves.iter().all(|m| !m.is_winning() && piece.is_legal(&m.mv)), "{offset}: {page:?}");
            assert!(page.moves.windows(2).all(|w| w[0].mv < w[1].mv));
        }
    }
}
