//! The protobuf messages of the diagonal walk: a position and a move to and from their messages (the
//! one file of the game that names `crate::proto`).

use super::{DiagonalWalkError, Direction, Walk};
use crate::games::{Sizes, Wire};
use crate::proto;
use crate::random::SplitMix;

impl Wire for Walk {
    type Message = proto::DiagonalWalk;
    type MoveMessage = proto::DiagonalWalkMove;

    /// A start of 0 (unset) is the top-left cell, 1.
    fn from_message(walk: proto::DiagonalWalk) -> Result<Self, DiagonalWalkError> {
        Walk::new(walk.rows, walk.columns, walk.step, walk.row.max(1), walk.column.max(1))
    }

    fn to_message(&self) -> proto::DiagonalWalk {
        proto::DiagonalWalk {
            rows: self.rows(),
            columns: self.columns(),
            step: self.step(),
            row: self.row(),
            column: self.column(),
        }
    }

    fn move_message(direction: &Direction) -> proto::DiagonalWalkMove {
        proto::DiagonalWalkMove {
            direction: match direction {
                Direction::Down => proto::Direction::Down,
                Direction::Right => proto::Direction::Right,
                Direction::Diagonal => proto::Direction::Diagonal,
            } as i32,
        }
    }

    /// A step of 1 to 3 half the time, of any size otherwise.
    fn random_message(random: &mut SplitMix, sizes: Sizes) -> proto::DiagonalWalk {
        let (rows, columns) = (sizes.draw(random), sizes.draw(random));
        let step = if random.percent(50) { random.range(1, 3) } else { sizes.draw(random) };
        proto::DiagonalWalk { rows, columns, step, row: random.range(1, rows), column: random.range(1, columns) }
    }
}
