//! The games, each in its own folder behind the [`Game`] trait of `core` and the [`ServedGame`]
//! and [`Wire`] traits, listed by the [`registry`]; and [`Position`]: any position of
//! any game, or a disjunctive sum of them.

mod core;
pub use self::core::*;
mod position;
pub use self::position::*;
pub mod registry;
mod served;
pub use self::misere::Answer as MisereAnswer;
pub use self::served::{Lookup, ServedGame, Sizes, Wire};

pub mod analysis;
pub mod cram;
pub mod cutting;
pub mod diagonal_walk;
pub mod family;
pub mod heap;
pub mod kernel;
#[cfg(test)]
pub(crate) mod memory_memo;
pub mod misere;
#[cfg(test)]
pub(crate) mod move_set_tests;
pub mod node_kayles;
pub mod node_kayles_board;
pub mod placement;
pub mod reclamation;
pub mod stone_boxes;
pub mod sum;
pub mod tetris;

/// The most items one request may hold, counted over the whole request however its sums nest: every
/// piece, box, reclaimed cell, board row, heap and sum. Together with [`sum::MAX_COMPONENTS`] (game
/// positions, counted over the whole request: the components after flattening) and [`sum::MAX_DEPTH`]
/// it bounds what building a request's position may cost; the server checks all three while
/// decoding, before anything is built.
pub const MAX_ITEMS: usize = 100_000;

/// The message of a request over [`MAX_ITEMS`], with the path of the first item past the limit.
pub fn too_many_items(path: impl std::fmt::Display) -> String {
    format!(
        "{path} is past the limit of {MAX_ITEMS} items (pieces, boxes, reclaimed cells, board rows, heaps and sums, \
         counted over the whole request)"
    )
}
