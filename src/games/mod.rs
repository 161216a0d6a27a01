//! The games, each in its own module behind the [`Game`] trait of `core`, and [`Position`]: any
//! position of any game, or a disjunctive sum of them.

mod core;
pub use self::core::*;

pub mod analysis;
pub mod cutting;
pub mod diagonal_walk;
#[cfg(test)]
pub(crate) mod move_set_tests;
pub mod reclamation;
pub mod stone_boxes;
pub mod sum;
pub mod tetris;

use self::sum::{ComponentValue, SumValue};

/// The most items one request may hold, counted over the whole request however its sums nest: every
/// piece, box, reclaimed cell, board row and sum. Together with [`sum::MAX_COMPONENTS`] (game
/// positions, counted over the whole request: the components after flattening) and [`sum::MAX_DEPTH`]
/// it bounds what building a request's position may cost; the server checks all three while
/// decoding, before anything is built.
pub const MAX_ITEMS: usize = 100_000;

/// The message of a request over [`MAX_ITEMS`], with the path of the first item past the limit.
pub fn too_many_items(path: impl std::fmt::Display) -> String {
    format!(
        "{path} is past the limit of {MAX_ITEMS} items (pieces, boxes, reclaimed cells, board rows and sums, \
         counted over the whole request)"
    )
}

/// A position of any game, or a sum of positions.
#[derive(Clone, Debug)]
pub enum Position {
    /// The cutting game.
    Cutting(cutting::Paper),
    /// The stone boxes game.
    StoneBoxes(stone_boxes::Boxes),
    /// More Reclamation.
    Reclamation(reclamation::River),
    /// The 2×2 placement game (boxed: a board is half a kilobyte).
    Tetris(Box<tetris::Board>),
    /// The diagonal walk.
    DiagonalWalk(diagonal_walk::Walk),
    /// A disjunctive sum of positions.
    Sum(sum::Sum),
}

/// A move of any game.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Move {
    /// A cut in the cutting game.
    Cutting(cutting::Cut),
    /// Stones added to a box.
    StoneBoxes(stone_boxes::AddStones),
    /// A reclaimed cell.
    Reclamation(reclamation::Cell),
    /// A placed 2×2 square.
    Tetris(tetris::Placement),
    /// A step of the diagonal walk.
    DiagonalWalk(diagonal_walk::Direction),
    /// A move in one component of a sum.
    Sum(sum::SumMove),
}

/// Calls `$body` with `$game` bound to the inner position of any [`Position`], and `$wrap` the
/// [`Move`] variant of that game.
macro_rules! each_game {
    ($position:expr, $game:ident, $wrap:ident => $body:expr) => {
        match $position {
            Position::Cutting($game) => {
                let $wrap = Move::Cutting;
                $body
            }
            Position::StoneBoxes($game) => {
                let $wrap = Move::StoneBoxes;
                $body
            }
            Position::Reclamation($game) => {
                let $wrap = Move::Reclamation;
                $body
            }
            Position::Tetris($game) => {
                let $wrap = Move::Tetris;
                $body
            }
            Position::DiagonalWalk($game) => {
                let $wrap = Move::DiagonalWalk;
                $body
            }
            Position::Sum($game) => {
                let $wrap = Move::Sum;
                $body
            }
        }
    };
}

/// Positions with more items than this (pieces, boxes, cells, components) are not [`Position::is_cheap`].
const CHEAP_ITEMS: usize = 1024;

impl Position {
    /// Whether solving is cheap enough to run anywhere: closed forms only (no 2×2-placement board,
    /// which needs search) over at most a thousand or so items.
    pub fn is_cheap(&self) -> bool {
        !self.has_board() && self.closed_form_items() <= CHEAP_ITEMS
    }

    /// Whether a 2×2-placement board is part of the position (its value may need a search).
    pub fn has_board(&self) -> bool {
        match self {
            Position::Tetris(_) => true,
            Position::Sum(sum) => sum.components().iter().any(Position::has_board),
            _ => false,
        }
    }

    /// How many items (pieces, boxes, cells, walks) the closed-form games of the position hold.
    fn closed_form_items(&self) -> usize {
        match self {
            Position::Cutting(paper) => paper.pieces().len(),
            Position::StoneBoxes(boxes) => boxes.boxes().len(),
            Position::Reclamation(river) => river.reclaimed().len(),
            Position::DiagonalWalk(_) => 1,
            Position::Tetris(_) => 0,
            Position::Sum(sum) => sum.components().iter().map(Position::closed_form_items).sum(),
        }
    }

    /// The value of the position when it needs no search and little work: its closed forms hold at
    /// most a thousand or so items, and every searched component of its boards is found by
    /// `lookup` (a probe of a memo). Also returns how many values `lookup` supplied. `None` when
    /// a search or more work would be needed.
    pub fn value_without_search(&self, lookup: &dyn Fn(GameTag, &[u8]) -> Option<u64>) -> Option<(SumValue, u64)> {
        fn value(position: &Position, lookup: &dyn Fn(GameTag, &[u8]) -> Option<u64>) -> Option<(SumValue, u64)> {
            match position {
                Position::Tetris(board) => board
                    .value_without_search(&|key| lookup(GameTag::Tetris, key))
                    .map(|(nimber, found)| (SumValue::Nimber(nimber), found)),
                Position::Sum(sum) => {
                    sum.components().iter().try_fold((SumValue::Nimber(0), 0), |(total, found), part| {
                        let (part_value, part_found) = value(part, lookup)?;
                        Some((total.plus(part_value), found + part_found))
                    })
                }
                closed_form => Some((closed_form.value(&mut SearchContext::in_memory()).ok()?, 0)),
            }
        }
        if self.closed_form_items() > CHEAP_ITEMS {
            return None;
        }
        value(self, lookup)
    }

    /// Whether the game is already over whatever else is in play: a cutting game holding a 1×1 piece
    /// (or a sum containing one). Such a position has no moves, and it ends any sum it is part of.
    pub fn is_finished(&self) -> bool {
        match self {
            Position::Cutting(paper) => paper.is_finished(),
            Position::Sum(sum) => sum.components().iter().any(Position::is_finished),
            _ => false,
        }
    }
}

impl Game for Position {
    type Move = Move;
    type Value = SumValue;

    fn value(&self, context: &mut SearchContext) -> Result<SumValue, Interrupted> {
        each_game!(self, game, _wrap => Ok(game.value(context)?.widen()))
    }

    fn moves(&self) -> MoveSet<Move> {
        each_game!(self, game, wrap => game.moves().map(wrap))
    }

    fn is_legal(&self, mv: &Move) -> bool {
        match (self, mv) {
            (Position::Cutting(game), Move::Cutting(mv)) => game.is_legal(mv),
            (Position::StoneBoxes(game), Move::StoneBoxes(mv)) => game.is_legal(mv),
            (Position::Reclamation(game), Move::Reclamation(mv)) => game.is_legal(mv),
            (Position::Tetris(game), Move::Tetris(mv)) => game.is_legal(mv),
            (Position::DiagonalWalk(game), Move::DiagonalWalk(mv)) => game.is_legal(mv),
            (Position::Sum(game), Move::Sum(mv)) => game.is_legal(mv),
            _ => false,
        }
    }

    fn play_unchecked(&self, mv: &Move) -> Self {
        debug_assert!(self.is_legal(mv), "{mv:?} is not legal in {self:?}");
        match (self, mv) {
            (Position::Cutting(game), Move::Cutting(mv)) => Position::Cutting(game.play_unchecked(mv)),
            (Position::StoneBoxes(game), Move::StoneBoxes(mv)) => Position::StoneBoxes(game.play_unchecked(mv)),
            (Position::Reclamation(game), Move::Reclamation(mv)) => Position::Reclamation(game.play_unchecked(mv)),
            (Position::Tetris(game), Move::Tetris(mv)) => Position::Tetris(Box::new(game.play_unchecked(mv))),
            (Position::DiagonalWalk(game), Move::DiagonalWalk(mv)) => Position::DiagonalWalk(game.play_unchecked(mv)),
            (Position::Sum(game), Move::Sum(mv)) => Position::Sum(game.play_unchecked(mv)),
            // A move of another game is illegal here: nothing changes.
            _ => self.clone(),
        }
    }

    fn moves_to(&self, target: SumValue, context: &mut SearchContext) -> Result<MoveSet<Move>, Interrupted> {
        each_game!(self, game, wrap => match ComponentValue::narrow(target) {
            Some(target) => Ok(game.moves_to(target, context)?.map(wrap)),
            None => Ok(MoveSet::empty()),
        })
    }

    fn first_move_to(&self, target: SumValue, context: &mut SearchContext) -> Result<Option<Move>, Interrupted> {
        each_game!(self, game, wrap => match ComponentValue::narrow(target) {
            Some(target) => Ok(game.first_move_to(target, context)?.map(wrap)),
            None => Ok(None),
        })
    }

    fn best_move(&self, context: &mut SearchContext) -> Result<(SumValue, Option<Move>), Interrupted> {
        each_game!(self, game, wrap => {
            let (value, mv) = game.best_move(context)?;
            Ok((value.widen(), mv.map(wrap)))
        })
    }
}
