//! "What is every move worth?": a position's moves with the values they lead to, winning moves
//! first, paged, with exact move counts computed without enumeration where the game allows it.

use super::{Game, Interrupted, Solver, Value};

/// How many moves a page lists when the caller does not say.
pub const DEFAULT_LIMIT: usize = 100;
/// The most moves one page may list.
pub const MAX_LIMIT: usize = 1000;
/// Positions with at most this many moves are analyzed by evaluating and sorting every move;
/// larger ones list winning moves first, then the others in move order.
pub const ENUMERATION_LIMIT: u128 = 10_000;

/// One move and the value of the position it leads to.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveValue<M> {
    /// The move.
    pub mv: M,
    /// The value after the move.
    pub value: Value,
}

impl<M> MoveValue<M> {
    /// Whether the move wins for the player making it (the opponent is left a lost position).
    pub fn is_winning(&self) -> bool {
        self.value.winning_target().is_none()
    }
}

/// A page of a position's analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis<M> {
    /// The position's value.
    pub value: Value,
    /// How many legal moves there are.
    pub total_moves: u128,
    /// How many of them win.
    pub winning_moves: u128,
    /// This page: winning moves first, then by value.
    pub moves: Vec<MoveValue<M>>,
    /// Where the next page starts, if there is one.
    pub next_offset: Option<u128>,
}

/// The order of the listing: winning moves first, then by the nimber they lead to, and positions
/// won at once by the opponent last.
fn listing_rank(value: Value) -> (u8, u64) {
    match value {
        Value::Nimber(0) | Value::Finished => (0, 0),
        Value::Nimber(n) => (1, n),
        Value::WinsAtOnce => (2, 0),
    }
}

/// Analyzes `position`: its value, its move counts, and the page of at most `limit` moves that
/// starts at `offset` in the listing order.
pub fn analyze<G: Game>(
    position: &G,
    offset: u128,
    limit: usize,
    solver: &mut Solver,
) -> Result<Analysis<G::Move>, Interrupted> {
    let value = position.value(solver)?;
    let total_moves = position.move_count();
    let evaluate = |mv: G::Move, solver: &mut Solver| -> Result<MoveValue<G::Move>, Interrupted> {
        solver.budget.check()?;
        let value = position.play(&mv).value(solver)?;
        Ok(MoveValue { mv, value })
    };
    let (winning_moves, moves) = if total_moves <= ENUMERATION_LIMIT {
        let mut all = position.moves().map(|mv| evaluate(mv, solver)).collect::<Result<Vec<_>, _>>()?;
        all.sort_by_key(|move_value| listing_rank(move_value.value));
        let winning = all.iter().filter(|move_value| move_value.is_winning()).count() as u128;
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(all.len());
        (winning, all.into_iter().skip(start).take(limit).collect())
    } else {
        let target = value.winning_target();
        let winning = match target {
            Some(target) => position.count_moves_to(target, solver)?,
            None => 0,
        };
        let mut page = Vec::with_capacity(limit);
        if let (Some(target), true) = (target, offset < winning) {
            for mv in position.moves_to(target, offset, limit, solver)? {
                page.push(evaluate(mv, solver)?);
            }
        }
        // The rest: the non-winning moves in move order, skipping those on earlier pages.
        let mut skip = offset.saturating_sub(winning);
        if page.len() < limit {
            for mv in position.moves() {
                let move_value = evaluate(mv, solver)?;
                if move_value.is_winning() {
                    continue;
                }
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                page.push(move_value);
                if page.len() >= limit {
                    break;
                }
            }
        }
        (winning, page)
    };
    let end = offset.saturating_add(moves.len() as u128);
    let next_offset = (end < total_moves && !moves.is_empty()).then_some(end);
    Ok(Analysis { value, total_moves, winning_moves, moves, next_offset })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::cutting::{Paper, Piece};
    use crate::games::stone_boxes::{Boxes, StoneBox};

    #[test]
    fn small_positions_list_every_move_sorted_and_paged() {
        let paper = Paper::new(vec![Piece { width: 7, height: 5 }, Piece { width: 4, height: 4 }]).unwrap();
        let mut solver = Solver::in_memory();
        let all = analyze(&paper, 0, MAX_LIMIT, &mut solver).unwrap();
        assert_eq!(all.total_moves, paper.moves().count() as u128);
        assert_eq!(all.moves.len() as u128, all.total_moves);
        assert_eq!(all.next_offset, None);
        let ranks: Vec<_> = all.moves.iter().map(|m| listing_rank(m.value)).collect();
        assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "sorted: {ranks:?}");
        assert_eq!(all.winning_moves, all.moves.iter().filter(|m| m.is_winning()).count() as u128);
        for move_value in &all.moves {
            assert_eq!(paper.play(&move_value.mv).value(&mut solver).unwrap(), move_value.value);
        }
        // Pages of 3 put together are the whole listing.
        let mut paged = Vec::new();
        let mut offset = Some(0);
        while let Some(start) = offset {
            let page = analyze(&paper, start, 3, &mut solver).unwrap();
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
        let mut solver = Solver::in_memory();
        let analysis = analyze(&boxes, 0, 10, &mut solver).unwrap();
        assert!(analysis.total_moves > ENUMERATION_LIMIT);
        assert_eq!(analysis.moves.len(), 10);
        let winners = analysis.winning_moves.min(10) as usize;
        assert!(analysis.moves[..winners].iter().all(MoveValue::is_winning));
        assert!(analysis.moves[winners..].iter().all(|m| !m.is_winning()));
        for move_value in &analysis.moves {
            assert_eq!(boxes.play(&move_value.mv).value(&mut solver).unwrap(), move_value.value);
        }
        // The second page continues where the first ended, with no move twice.
        let next = analyze(&boxes, analysis.next_offset.unwrap(), 10, &mut solver).unwrap();
        assert!(next.moves.iter().all(|m| !analysis.moves.contains(m)));
    }
}
