//! What a game is to the service: [`ServedGame`] (a component of any sum, with its cost model)
//! and [`Wire`] (its protobuf messages), which every game of the registry's list implements.

use super::heap::HeapValues;
use super::sum::ComponentValue;
use super::{Game, GameTag, SetupError};
#[cfg(doc)]
use super::{Learnt, Position};
use crate::random::SplitMix;

/// A game as nimber serves it: a component of any sum, with the cost model the service schedules
/// by, and (through [`Wire`]) its protobuf messages. Everything the service and the jobs
/// runner need to know of a game is here, so that neither names one.
pub trait ServedGame:
    Game<Value: ComponentValue, Move: Send + Sync> + std::fmt::Debug + Eq + std::hash::Hash + Send + Sync + 'static
{
    /// The game's field in `Position`'s `game` oneof (`stone_boxes`): the start of the field
    /// paths in its errors.
    const NAME: &'static str;
    /// Whether a position may need a search (else its value is a closed form). A search keeps
    /// every component it finishes in the memo, so a solve stopped by its deadline, or a job
    /// stopped by a restart, loses only the unfinished part: a retry continues.
    const SEARCHES: bool;

    /// Why a position is not valid.
    type Error: SetupError;
    /// What the game's search keeps between the solves through one [`SearchContext`]
    /// (`()` for closed forms): [`Learnt`] holds it, typed.
    ///
    /// [`SearchContext`]: super::SearchContext
    type Learnt: Send + 'static;

    /// How many items (pieces, boxes, cells) a closed form's work grows with; with the other
    /// components' items, decides whether a solve is cheap enough to run without a slot.
    fn items(&self) -> usize {
        1
    }

    /// Whether solving the position is cheap enough to run anywhere (with few enough items, see
    /// [`ServedGame::items`]); a heap game whose values are not computed yet is not.
    fn is_cheap(&self) -> bool {
        true
    }

    /// The value of the position when it needs no search: a closed form, or a searching game whose
    /// every searched component `lookup` (a probe of a memo) finds. Also how many values
    /// `lookup` supplied. `None` when a search would be needed; a searching game overrides it.
    fn value_without_search(&self, _lookup: &Lookup) -> Option<(Self::Value, u64)> {
        if Self::SEARCHES {
            return None;
        }
        Some((self.value(&mut super::SearchContext::in_memory()).ok()?, 0))
    }

    /// How the values the answer rests on are known, where the game says more than the value
    /// (a heap game: its rules' proven period, or how far their values are computed). Reads only
    /// what the process holds in memory (it runs on the async runtime). None by default.
    fn evidence(&self) -> Vec<HeapValues> {
        Vec::new()
    }

    /// The bytes the game's in-process cache of values holds (`0` for a game without one), for the
    /// metrics; the cache is bounded by a flag of the game's own.
    fn values_cache_bytes() -> u64 {
        0
    }

    /// Whether the game is already over whatever else is in play, ending any sum it is part of
    /// (the cutting game once a 1×1 piece is cut out).
    fn is_finished(&self) -> bool {
        false
    }

    /// The independent parts whose disjunctive sum the position is (each heap of a heap game,
    /// each box of the stone boxes), in order, when it has more than one; `None` by default (one
    /// part). A part's moves are the whole's moves in it, in the whole's order.
    fn parts(&self) -> Option<Vec<Self>> {
        None
    }

    /// The move of the whole position that is `mv` made in its part `index` (see
    /// [`ServedGame::parts`]).
    fn move_in_part(index: usize, mv: Self::Move) -> Self::Move {
        let _ = index;
        mv
    }
}

/// How a game's positions and moves travel: its protobuf messages, converted in the game's
/// `wire.rs` (the only files of a game that name `crate::proto`).
pub trait Wire: ServedGame {
    /// The position's protobuf message.
    type Message: prost::Message + Default + Clone + PartialEq;
    /// A move's protobuf message.
    type MoveMessage: prost::Message + Default + Clone + PartialEq;

    /// The position of `message`, validated.
    fn from_message(message: Self::Message) -> Result<Self, Self::Error>;
    /// The message of this position (which [`Wire::from_message`] accepts).
    fn to_message(&self) -> Self::Message;
    /// The message of a move.
    fn move_message(mv: &Self::Move) -> Self::MoveMessage;
    /// A random valid position of sizes drawn from `sizes`, for the tests and the load generator
    /// ([`crate::wire::random_position`]).
    fn random_message(random: &mut SplitMix, sizes: Sizes) -> Self::Message;
}

/// A probe of a memo: the value stored under a game's tag and key, if any.
pub type Lookup<'a> = dyn Fn(GameTag, &[u8]) -> Option<u64> + 'a;

/// The sizes a random test position is drawn with: up to `small` (at least 1), or, if `huge`,
/// anything up to 2^64 − 1.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Whether sizes are huge.
    pub huge: bool,
    /// The largest size that is not huge.
    pub small: u64,
}

impl Sizes {
    /// One size.
    pub fn draw(self, random: &mut SplitMix) -> u64 {
        if self.huge {
            random.range(1, u64::MAX)
        } else {
            random.range(1, self.small.max(1))
        }
    }
}
