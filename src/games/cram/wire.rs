//! The protobuf messages of Cram: a position and a move to and from their messages (the
//! one file of the game that names `crate::proto`).

use super::{Board, BoardError, DominoMove, Orientation};
use crate::games::{Sizes, Wire};
use crate::proto;
use crate::random::SplitMix;

impl Wire for Board {
    type Message = proto::Cram;
    type MoveMessage = proto::CramMove;

    fn from_message(message: proto::Cram) -> Result<Self, BoardError> {
        Board::new(&message.rows)
    }

    fn to_message(&self) -> proto::Cram {
        proto::Cram { rows: self.rows() }
    }

    fn move_message(domino: &DominoMove) -> proto::CramMove {
        let orientation = match domino.orientation {
            Orientation::Horizontal => proto::DominoOrientation::Horizontal,
            Orientation::Vertical => proto::DominoOrientation::Vertical,
        };
        proto::CramMove { row: domino.row as u64, column: domino.column as u64, orientation: orientation as i32 }
    }

    /// 1 to 6 cells a side, a fifth of them blocked, so that brute force and search stay fast.
    fn random_message(random: &mut SplitMix, _sizes: Sizes) -> proto::Cram {
        let (height, width) = (random.range(1, 6) as usize, random.range(1, 6) as usize);
        proto::Cram { rows: crate::random::random_board(random, height, width, 20) }
    }
}
