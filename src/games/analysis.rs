//! "What is every move worth?": a position's moves with the values they lead to, winning moves
//! first, paged, with exact move counts computed without enumeration where the game allows it.
//!
//! What a page may cost: a position with at most [`ENUMERATION_LIMIT`] moves is evaluated whole. A
//! larger one lists its winning moves by construction (each game skips to a page of them directly),
//! then the others (the tail) in move order, which is walked by evaluating each move in turn; so a
//! page may start at most [`MAX_TAIL_SKIP`] moves into the tail ([`AnalysisError::TailTooDeep`]
//! otherwise, checked before the walk). A page starting at or past the last move is empty at once.

use super::{Game, Interrupted, Solver, Value};

/// How many moves a page lists when the caller does not say.
pub const DEFAULT_LIMIT: usize = 100;
/// The most moves one page may list.
pub const MAX_LIMIT: usize = 1000;
/// Positions with at most this many moves are analyzed by evaluating and sorting every move;
/// larger ones list winning moves first, then the others in move order.
pub const ENUMERATION_LIMIT: u128 = 10_000;
/// The furthest into the non-winning moves of a position with more than [`ENUMERATION_LIMIT`] moves
/// a page may start: they are listed by evaluating each move in turn, skipped ones included.
pub const MAX_TAIL_SKIP: u128 = 100_000;

/// Why an analysis has no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnalysisError {
    /// The solve stopped before it had an answer.
    Interrupted(Interrupted),
    /// The page starts this many moves into the non-winning moves, past [`MAX_TAIL_SKIP`].
    TailTooDeep(u128),
}

impl From<Interrupted> for AnalysisError {
    fn from(error: Interrupted) -> Self {
        AnalysisError::Interrupted(error)
    }
}

impl std::fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnalysisError::Interrupted(Interrupted::DeadlineExceeded) => f.write_str("the deadline passed"),
            AnalysisError::Interrupted(Interrupted::Cancelled) => f.write_str("the call was cancelled"),
            AnalysisError::TailTooDeep(skip) => write!(
                f,
                "page_token starts {skip} moves into the non-winning moves, which are listed by evaluating each \
                 in turn; the limit is {MAX_TAIL_SKIP}"
            ),
        }
    }
}

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
/// starts at `offset` in the listing order (empty when `offset` is at or past the last move).
pub fn analyze<G: Game>(
    position: &G,
    offset: u128,
    limit: usize,
    solver: &mut Solver,
) -> Result<Analysis<G::Move>, AnalysisError> {
    let value = position.value(solver)?;
    let total_moves = position.move_count();
    if offset >= total_moves && total_moves > ENUMERATION_LIMIT {
        let winning_moves = match value.winning_target() {
            Some(target) => position.count_moves_to(target, solver)?,
            None => 0,
        };
        return Ok(Analysis { value, total_moves, winning_moves, moves: Vec::new(), next_offset: None });
    }
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
        // The rest: the non-winning moves in move order, skipping those on earlier pages.
        let mut skip = offset.saturating_sub(winning);
        if skip > MAX_TAIL_SKIP {
            return Err(AnalysisError::TailTooDeep(skip));
        }
        let mut page = Vec::with_capacity(limit);
        if let (Some(target), true) = (target, offset < winning) {
            for mv in position.moves_to(target, offset, limit, solver)? {
                page.push(evaluate(mv, solver)?);
            }
        }
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

    #[test]
    fn pages_past_the_end_are_empty_and_deep_tail_pages_are_refused_before_the_walk() {
        let piece = Paper::new(vec![Piece { width: u64::MAX, height: u64::MAX }]).unwrap();
        // No budget: a walk through the tail would not end within the test's lifetime.
        let mut solver = Solver::in_memory();
        let first = analyze(&piece, 0, 1, &mut solver).unwrap();
        let past = analyze(&piece, u128::MAX, 10, &mut solver).unwrap();
        assert_eq!((past.moves.len(), past.next_offset), (0, None));
        assert_eq!(
            (past.value, past.total_moves, past.winning_moves),
            (first.value, piece.move_count(), first.winning_moves)
        );
        let deepest = analyze(&piece, first.winning_moves + MAX_TAIL_SKIP, 1, &mut solver).unwrap();
        assert_eq!(deepest.moves.len(), 1);
        assert!(!deepest.moves[0].is_winning());
        let too_deep = analyze(&piece, first.winning_moves + MAX_TAIL_SKIP + 1, 1, &mut solver);
        assert_eq!(too_deep.unwrap_err(), AnalysisError::TailTooDeep(MAX_TAIL_SKIP + 1));
    }
}
