//! The protobuf messages of the 2×2 placement game: a position and a move to and from their messages (the
//! one file of the game that names `crate::proto`).

use super::{Board, BoardError, Placement};
use crate::games::{Sizes, Wire};
use crate::proto;
use crate::random::SplitMix;

impl Wire for Board {
    type Message = proto::Tetris;
    type MoveMessage = proto::TetrisMove;

    fn from_message(message: proto::Tetris) -> Result<Self, BoardError> {
        Board::new(&message.rows)
    }

    fn to_message(&self) -> proto::Tetris {
        proto::Tetris { rows: self.rows() }
    }

    fn move_message(placement: &Placement) -> proto::TetrisMove {
        proto::TetrisMove { row: placement.row as u64, column: placement.column as u64 }
    }

    /// 1 to 6 cells a side, a fifth of them blocked, so that brute force and search stay fast.
    fn random_message(random: &mut SplitMix, _sizes: Sizes) -> proto::Tetris {
        let (height, width) = (random.range(1, 6) as usize, random.range(1, 6) as usize);
        proto::Tetris { rows: crate::random::random_board(random, height, width, 20) }
    }
}
