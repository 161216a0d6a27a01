//! The game registry: the one list of the games nimber serves (`with_games!`), and the trait
//! each of them implements ([`ServedGame`]).
//!
//! Adding a game is its module (the position type, its [`Game`] and [`ServedGame`] impls, its
//! tests), its protobuf message in `Position`'s `game` oneof (and its move's in `Move`'s), and
//! one line in `with_games!`. From that line come:
//! - [`Position`] and [`Move`], and their dispatch
//!   (`games/position.rs`);
//! - [`GameTag`]: the game's memo tag, and the kind of its random test positions;
//! - [`Learnt`]: what its searches keep between solves, typed;
//! - the protobuf conversion both ways ([`crate::grpc::convert`]);
//! - the random positions of the tests and the load generator ([`crate::testing`]).
//!
//! The codec's item counting needs no line at all: it reads the field table of `Position` and of
//! every game message from the protobuf descriptor ([`crate::grpc::codec`]).
//!
//! Every dispatch matches the registry's variants exhaustively, with no catch-all arm: a game
//! listed here without a proto message, or a proto message with no line here, does not compile,
//! and neither does a line whose type lacks a [`ServedGame`] impl.

use super::sum::ComponentValue;
use super::{Game, GameTag, SetupError};
#[cfg(doc)]
use super::{Learnt, Move, Position};
use crate::random::SplitMix;

/// Calls the macro `$then` with the list of games, one line each:
/// `Variant(position type) = memo tag,`, in the order of `Position`'s oneof. `Variant` is the game's name in `Position` and `Move`
/// (Rust and protobuf alike: prost names the oneof's variants after their fields); the memo tag is
/// the first byte of the game's store keys, so it must never change once values are stored, and
/// never be 0 (see [`crate::cache::format`]).
macro_rules! with_games {
    ($then:ident) => {
        $then! {
            Cutting($crate::games::cutting::Paper) = 1,
            StoneBoxes($crate::games::stone_boxes::Boxes) = 2,
            Reclamation($crate::games::reclamation::River) = 4,
            Tetris($crate::games::tetris::Board) = 3,
            DiagonalWalk($crate::games::diagonal_walk::Walk) = 5,
            Heaps($crate::games::heap::Heaps) = 6,
            NodeKayles($crate::games::node_kayles::Graph) = 7,
            Cram($crate::games::cram::Board) = 8,
        }
    };
}
pub(crate) use with_games;

/// A game as nimber serves it: built from and turned back into its protobuf message, a component
/// of any sum, with the cost model the service schedules by. Everything the service and the jobs
/// runner need to know of a game is here, so that neither names one.
pub trait ServedGame: Game<Value: ComponentValue, Move: Send + Sync> + std::fmt::Debug + Send + Sync + 'static {
    /// The game's field in `Position`'s `game` oneof (`stone_boxes`): the start of the field
    /// paths in its errors.
    const NAME: &'static str;
    /// Whether a position may need a search (else its value is a closed form). A search keeps
    /// every component it finishes in the memo, so a solve stopped by its deadline, or a job
    /// stopped by a restart, loses only the unfinished part: a retry continues.
    const SEARCHES: bool;

    /// The position's protobuf message.
    type Message: prost::Message + Default + Clone + PartialEq;
    /// A move's protobuf message.
    type MoveMessage: prost::Message + Default + Clone + PartialEq;
    /// Why a message is not a valid position.
    type Error: SetupError;
    /// What the game's search keeps between the solves through one [`SearchContext`]
    /// (`()` for closed forms): [`Learnt`] holds it, typed.
    ///
    /// [`SearchContext`]: super::SearchContext
    type Learnt: Send + 'static;

    /// The position of `message`, validated.
    fn from_message(message: Self::Message) -> Result<Self, Self::Error>;
    /// The message of this position (which [`ServedGame::from_message`] accepts).
    fn to_message(&self) -> Self::Message;
    /// The message of a move.
    fn move_message(mv: &Self::Move) -> Self::MoveMessage;

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
    fn evidence(&self) -> Vec<crate::proto::HeapValues> {
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

    /// A random valid position of sizes drawn from `sizes`, for the tests and the load generator
    /// ([`crate::testing::random_position`]).
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
