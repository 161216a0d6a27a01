//! The protobuf messages of Node Kayles on a board: a position and a move to and from their
//! messages (the one file of the game that names `crate::proto`).

use super::{Board, BoardError, ChosenCell};
use crate::games::{Sizes, Wire};
use crate::proto;
use crate::random::SplitMix;

impl Wire for Board {
    type Message = proto::NodeKaylesBoard;
    type MoveMessage = proto::Cell;

    fn from_message(message: proto::NodeKaylesBoard) -> Result<Self, BoardError> {
        Board::new(&message.rows)
    }

    fn to_message(&self) -> proto::NodeKaylesBoard {
        proto::NodeKaylesBoard { rows: self.rows() }
    }

    fn move_message(cell: &ChosenCell) -> proto::Cell {
        proto::Cell { row: cell.row as u64, column: cell.column as u64 }
    }

    /// 1 to 6 cells a side, a fifth of them blocked, so that brute force and search stay fast.
    fn random_message(random: &mut SplitMix, _sizes: Sizes) -> proto::NodeKaylesBoard {
        let (height, width) = (random.range(1, 6) as usize, random.range(1, 6) as usize);
        proto::NodeKaylesBoard { rows: crate::random::random_board(random, height, width, 20) }
    }
}
