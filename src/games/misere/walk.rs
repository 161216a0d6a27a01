//! The depth-first walk both misère methods share: the value of a position from its options'
//! values (who wins, for the search; the genus, for genus theory), each position found once and
//! kept in a table of at most a quarter of the solve's table entries (a position is its own key,
//! a few table entries' bytes). It keeps a stack of its own, so a long game never overflows the
//! thread's, checks the solve's budget as it goes, and refuses play deeper than
//! [`MOST_MOVES_DEEP`].

use std::collections::HashMap;

use super::MOST_MOVES_DEEP;
use crate::games::{Game, Interrupted, Move, MoveSet, Position, SearchContext};

/// How often (in positions) the walk checks its budget.
const CHECK_INTERVAL: u64 = 1 << 10;

/// How a position's value follows from its options'.
pub(super) trait Fold {
    /// What the walk finds for each position.
    type Value: Clone;
    /// Whether a full table stops the walk (else values past it are found but not kept).
    const STOPS_WHEN_FULL: bool;
    /// Whether this option's value settles its position's at once, so its other options need no
    /// walk.
    fn settles(&self, option: &Self::Value) -> bool;
    /// The value of a position from its options' (all of them, or up to the one that settled
    /// it); `None` stops the walk.
    fn fold(&self, options: &[Self::Value]) -> Option<Self::Value>;
}

/// A walk and the values it found.
pub(super) struct Walk<'c, 'm, V> {
    /// The solve's budget, statistics and table bound.
    pub context: &'c mut SearchContext<'m>,
    /// The value of every position found, while the table had room.
    pub table: HashMap<Position, V>,
    visited: u64,
}

/// A position on the walk's stack, the next of its moves, and its options' values so far.
struct Frame<V> {
    position: Position,
    moves: MoveSet<Move>,
    next: u128,
    options: Vec<V>,
}

impl<'c, 'm, V: Clone> Walk<'c, 'm, V> {
    /// An empty walk within `context`.
    pub fn new(context: &'c mut SearchContext<'m>) -> Self {
        Walk { context, table: HashMap::new(), visited: 0 }
    }

    /// The value of `root` by `fold`; `None` when the fold stopped the walk.
    pub fn value<F: Fold<Value = V>>(&mut self, fold: &F, root: &Position) -> Result<Option<V>, Interrupted> {
        if let Some(value) = self.table.get(root) {
            self.context.stats.cache_hits += 1;
            return Ok(Some(value.clone()));
        }
        let limit = self.context.table_limit / 4;
        let mut stack = vec![Frame { moves: root.moves(), position: root.clone(), next: 0, options: Vec::new() }];
        loop {
            let Some(top) = stack.last_mut() else { unreachable!("the root returns before it is popped") };
            let settled = top.options.last().is_some_and(|option| fold.settles(option));
            let Some(mv) = top.moves.get(top.next).filter(|_| !settled) else {
                let done = stack.pop().expect("the top frame");
                let Some(value) = fold.fold(&done.options) else { return Ok(None) };
                if self.table.len() < limit {
                    self.table.insert(done.position, value.clone());
                } else {
                    self.context.stats.misere_forgotten += 1;
                    if F::STOPS_WHEN_FULL {
                        return Ok(None);
                    }
                }
                match stack.last_mut() {
                    Some(parent) => parent.options.push(value),
                    None => return Ok(Some(value)),
                }
                continue;
            };
            top.next += 1;
            let option = top.position.play_unchecked(&mv);
            self.visited += 1;
            if self.visited.is_multiple_of(CHECK_INTERVAL) {
                self.context.budget.check()?;
            }
            if let Some(value) = self.table.get(&option) {
                self.context.stats.cache_hits += 1;
                top.options.push(value.clone());
                continue;
            }
            if stack.len() >= MOST_MOVES_DEEP {
                return Err(Interrupted::PastMisereDepth { limit: MOST_MOVES_DEEP });
            }
            stack.push(Frame { moves: option.moves(), position: option, next: 0, options: Vec::new() });
        }
    }
}
