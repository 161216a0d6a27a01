//! The game registry: the one list of the games nimber serves (`with_games!`). Each of them
//! implements [`ServedGame`], and [`Wire`] for its messages.
//!
//! Adding a game is its folder (the position type, its [`Game`] and [`ServedGame`] impls, its
//! tests, and its `wire.rs` with the [`Wire`] impl: the one file of the game that names
//! protobuf), its protobuf message in `Position`'s `game` oneof (and its move's in `Move`'s), and
//! one line in `with_games!`. From that line come:
//! - [`Position`] and [`Move`], and their dispatch
//!   (`games/position.rs`);
//! - [`GameTag`]: the game's memo tag, and the kind of its random test positions;
//! - [`Learnt`]: what its searches keep between solves, typed;
//! - the protobuf conversion both ways ([`crate::wire`]);
//! - the random positions of the tests and the load generator ([`crate::testing`]).
//!
//! The codec's item counting needs no line at all: it reads the field table of `Position` and of
//! every game message from the protobuf descriptor ([`crate::grpc::codec`]).
//!
//! Every dispatch matches the registry's variants exhaustively, with no catch-all arm: a game
//! listed here without a proto message, or a proto message with no line here, does not compile,
//! and neither does a line whose type lacks a [`ServedGame`] or [`Wire`] impl.

#[cfg(doc)]
use super::{Game, GameTag, Learnt, Move, Position, ServedGame, Wire};

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
            NodeKaylesBoard($crate::games::node_kayles_board::Board) = 9,
        }
    };
}
pub(crate) use with_games;
