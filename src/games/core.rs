//! What every game shares: the [`Game`] trait, [`Value`] and [`Outcome`], nimber arithmetic,
//! the [`Solver`] context (deadline, statistics, persistent memo) and the error a solve can end with.
//!
//! This file depends on nothing outside the standard library, so a game module can be compiled and
//! tested with it alone.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Who wins a position with perfect play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The player to move wins (an N-position).
    NextPlayerWins,
    /// The player to move loses (a P-position).
    PreviousPlayerWins,
}

/// The value of a position.
///
/// Every game here is normal play (the player who cannot move loses) and has a Grundy value, except
/// the cutting game, whose literal rule ("whoever cuts out a 1×1 piece wins") adds two states that are
/// not normal-play values: a game already over, and a game won at once. They absorb everything in a sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// A normal-play position with this Grundy value (nimber).
    Nimber(u64),
    /// The game is over: a 1×1 piece has been cut out, the player to move has lost.
    Finished,
    /// The player to move wins at once by cutting out a 1×1 piece.
    WinsAtOnce,
}

impl Value {
    /// The value a winning move leads to from a position of this value, if the player to move wins:
    /// a nimber 0, or the finished game for a position won at once.
    pub fn winning_target(self) -> Option<Value> {
        match self {
            Value::Nimber(0) | Value::Finished => None,
            Value::Nimber(_) => Some(Value::Nimber(0)),
            Value::WinsAtOnce => Some(Value::Finished),
        }
    }

    /// Who wins.
    pub fn outcome(self) -> Outcome {
        match self {
            Value::Nimber(0) | Value::Finished => Outcome::PreviousPlayerWins,
            Value::Nimber(_) | Value::WinsAtOnce => Outcome::NextPlayerWins,
        }
    }

    /// The Grundy value, where the position is a normal-play one.
    pub fn nimber(self) -> Option<u64> {
        match self {
            Value::Nimber(g) => Some(g),
            Value::Finished | Value::WinsAtOnce => None,
        }
    }

    /// The value of the disjunctive sum of two positions: a finished game ends the sum, an
    /// immediate win wins the sum, otherwise nimbers add by XOR.
    pub fn plus(self, other: Value) -> Value {
        match (self, other) {
            (Value::Finished, _) | (_, Value::Finished) => Value::Finished,
            (Value::WinsAtOnce, _) | (_, Value::WinsAtOnce) => Value::WinsAtOnce,
            (Value::Nimber(a), Value::Nimber(b)) => Value::Nimber(a ^ b),
        }
    }
}

/// The minimum excludant: the least nimber not in `values`.
pub fn mex(values: impl IntoIterator<Item = u64>) -> u64 {
    let mut seen: Vec<u64> = values.into_iter().collect();
    seen.sort_unstable();
    seen.dedup();
    seen.iter().enumerate().find(|&(i, &v)| v != i as u64).map_or(seen.len() as u64, |(i, _)| i as u64)
}

/// Why a solve stopped before it had an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupted {
    /// The caller's deadline (or the server's maximum solve time) passed.
    DeadlineExceeded,
    /// The caller went away.
    Cancelled,
}

/// When a solve must stop: an optional deadline and a cancellation flag.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    deadline: Option<Instant>,
    cancelled: Arc<AtomicBool>,
}

impl Budget {
    /// A budget with no deadline that is never cancelled.
    pub fn unlimited() -> Self {
        Self::default()
    }

    /// A budget that ends at `deadline` (if any) or when `cancelled` is set.
    pub fn new(deadline: Option<Instant>, cancelled: Arc<AtomicBool>) -> Self {
        Self { deadline, cancelled }
    }

    /// `Err` once the deadline has passed or the work was cancelled.
    pub fn check(&self) -> Result<(), Interrupted> {
        if self.cancelled.load(Ordering::Relaxed) {
            return Err(Interrupted::Cancelled);
        }
        match self.deadline {
            Some(deadline) if Instant::now() >= deadline => Err(Interrupted::DeadlineExceeded),
            _ => Ok(()),
        }
    }
}

/// Counters a solve reports back to the caller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Positions (or components) whose value was computed by search in this solve.
    pub positions_computed: u64,
    /// Values found in a memo (in-memory table or persistent store) instead of computed.
    pub cache_hits: u64,
}

/// Games whose values are memoized persistently; the tag is the first byte of every memo key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum GameTag {
    /// The 2×2 placement game: keys are canonical component encodings.
    Tetris = 3,
}

/// A persistent memo of expensive values, keyed by game and canonical encoding.
///
/// Implemented over sled by the cache module; games only see this trait.
pub trait Memo: Send + Sync {
    /// The stored value of `key`, if any (may read the disk).
    fn get(&self, game: GameTag, key: &[u8]) -> Option<u64>;
    /// Remember `value` for `key`; `cost` is the work its computation took (search nodes), so a
    /// bounded memo keeps the values most expensive to recompute. Never waits for I/O (the memo
    /// may buffer writes; see [`Memo::flush`]).
    fn put(&self, game: GameTag, key: &[u8], value: u64, cost: u64);
    /// Ask for buffered values to be written to durable storage soon; does not wait for it.
    fn flush(&self);
    /// The value of `key` if the memo holds it in memory (no I/O, cheap): for answering warm
    /// positions without queueing for a solve.
    fn peek(&self, _game: GameTag, _key: &[u8]) -> Option<u64> {
        None
    }

    /// The value of `key`, from the memo or else computed by `compute` (which returns the value and
    /// its cost, see [`Memo::put`]) and remembered; also whether it was found rather than computed
    /// by this call. Stores shared by concurrent solves override this so that concurrent askers of
    /// one missing key compute it once (single-flight), the others waiting within their `budget`.
    fn get_or_compute(
        &self,
        game: GameTag,
        key: &[u8],
        _budget: &Budget,
        compute: &mut dyn FnMut() -> Result<(u64, u64), Interrupted>,
    ) -> Result<(u64, bool), Interrupted> {
        if let Some(value) = self.get(game, key) {
            return Ok((value, true));
        }
        let (value, cost) = compute()?;
        self.put(game, key, value, cost);
        Ok((value, false))
    }
}

/// A memo that remembers nothing (for the judge CLI and tests).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoMemo;

impl Memo for NoMemo {
    fn get(&self, _game: GameTag, _key: &[u8]) -> Option<u64> {
        None
    }
    fn put(&self, _game: GameTag, _key: &[u8], _value: u64, _cost: u64) {}
    fn flush(&self) {}
}

/// Everything a solve may use besides the position: its budget, its counters, the memo.
pub struct Solver<'a> {
    /// When to stop.
    pub budget: Budget,
    /// What the solve did.
    pub stats: Stats,
    /// Where expensive values are remembered across solves.
    pub memo: &'a dyn Memo,
    /// The most entries a game's own in-memory table may hold during one solve (bounds memory).
    pub table_limit: usize,
}

/// The default for [`Solver::table_limit`]: about 16 million entries (a full 10×10 board peaks at
/// 1.3 GB with it; 4 million entries cap that at 0.66 GB for 2.3 times the time).
pub const DEFAULT_TABLE_LIMIT: usize = 1 << 24;

impl<'a> Solver<'a> {
    /// A solver with the given budget and memo and zeroed counters.
    pub fn new(budget: Budget, memo: &'a dyn Memo) -> Self {
        Self { budget, stats: Stats::default(), memo, table_limit: DEFAULT_TABLE_LIMIT }
    }
}

impl Solver<'static> {
    /// A solver with no deadline and no persistent memo.
    pub fn in_memory() -> Self {
        Solver::new(Budget::unlimited(), &NoMemo)
    }
}

/// One impartial game: its positions are `Self`, valid by construction.
pub trait Game: Clone + Sized {
    /// A move in this game.
    type Move: Clone + std::fmt::Debug + PartialEq;

    /// The value of this position.
    fn value(&self, solver: &mut Solver) -> Result<Value, Interrupted>;

    /// Every legal move, in a fixed order (possibly a huge number: consume lazily).
    fn moves(&self) -> Box<dyn Iterator<Item = Self::Move> + '_>;

    /// The position after a legal `mv` (a move from [`Game::moves`]).
    fn play(&self, mv: &Self::Move) -> Self;

    /// A legal move to a position of value `target`, if there is one: the first of
    /// [`Game::moves_to`].
    ///
    /// Callers ask for `Value::Nimber(t)` with `t` below the position's nimber (such a move always
    /// exists), or for `Value::Finished` from a position that `WinsAtOnce`.
    fn move_to(&self, target: Value, solver: &mut Solver) -> Result<Option<Self::Move>, Interrupted> {
        Ok(self.moves_to(target, 0, 1, solver)?.pop())
    }

    /// How many legal moves there are. The default counts [`Game::moves`]; games whose move sets
    /// can be huge override it with a formula.
    fn move_count(&self) -> u128 {
        self.moves().count() as u128
    }

    /// How many legal moves lead to a position of value `target`. The default evaluates every move;
    /// games whose move sets can be huge override it with a formula.
    fn count_moves_to(&self, target: Value, solver: &mut Solver) -> Result<u128, Interrupted> {
        count_moves_by_search(self, target, solver)
    }

    /// The legal moves to a position of value `target`, in the order of [`Game::moves`], skipping
    /// the first `skip` of them and returning at most `limit`. The default evaluates moves in turn;
    /// games whose move sets can be huge override it with a direct construction.
    fn moves_to(
        &self,
        target: Value,
        skip: u128,
        limit: usize,
        solver: &mut Solver,
    ) -> Result<Vec<Self::Move>, Interrupted> {
        moves_by_search(self, target, skip, limit, solver)
    }

    /// The best move: a winning one when the player to move wins, otherwise any legal move;
    /// `None` when there is no move at all. Returns the value of the position too.
    fn best_move(&self, solver: &mut Solver) -> Result<(Value, Option<Self::Move>), Interrupted> {
        let value = self.value(solver)?;
        let mv = match value.winning_target() {
            None => self.moves().next(),
            Some(target) => self.move_to(target, solver)?,
        };
        Ok((value, mv))
    }
}

/// How many moves of `game` lead to value `target`, by evaluating every move.
pub fn count_moves_by_search<G: Game>(game: &G, target: Value, solver: &mut Solver) -> Result<u128, Interrupted> {
    let mut count = 0;
    for mv in game.moves() {
        solver.budget.check()?;
        if game.play(&mv).value(solver)? == target {
            count += 1;
        }
    }
    Ok(count)
}

/// The moves of `game` to value `target` in move order, skipping `skip`, at most `limit`, by
/// evaluating moves in turn.
pub fn moves_by_search<G: Game>(
    game: &G,
    target: Value,
    skip: u128,
    limit: usize,
    solver: &mut Solver,
) -> Result<Vec<G::Move>, Interrupted> {
    let mut found = Vec::new();
    let mut skipped = 0;
    for mv in game.moves() {
        if found.len() >= limit {
            break;
        }
        solver.budget.check()?;
        if game.play(&mv).value(solver)? == target {
            if skipped < skip {
                skipped += 1;
            } else {
                found.push(mv);
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mex_finds_least_missing() {
        assert_eq!(mex([]), 0);
        assert_eq!(mex([1, 2]), 0);
        assert_eq!(mex([0, 2, 1, 1, 4]), 3);
    }

    #[test]
    fn sums_absorb_special_values() {
        assert_eq!(Value::Nimber(3).plus(Value::Nimber(5)), Value::Nimber(6));
        assert_eq!(Value::WinsAtOnce.plus(Value::Nimber(0)), Value::WinsAtOnce);
        assert_eq!(Value::WinsAtOnce.plus(Value::Finished), Value::Finished);
        assert_eq!(Value::Finished.outcome(), Outcome::PreviousPlayerWins);
    }
}
