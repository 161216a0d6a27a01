//! The protobuf messages of More Reclamation: a position and a move to and from their messages (the
//! one file of the game that names `crate::proto`).

use super::{Cell, ReclamationError, River};
use crate::games::{Sizes, Wire};
use crate::proto;
use crate::random::SplitMix;

impl Wire for River {
    type Message = proto::Reclamation;
    type MoveMessage = proto::Cell;

    fn from_message(message: proto::Reclamation) -> Result<Self, ReclamationError> {
        let cells = message.reclaimed.iter().map(|cell| Cell { row: cell.row, column: cell.column });
        River::new(message.rows, cells.collect())
    }

    fn to_message(&self) -> proto::Reclamation {
        proto::Reclamation { rows: self.rows(), reclaimed: self.reclaimed().iter().map(River::move_message).collect() }
    }

    fn move_message(cell: &Cell) -> proto::Cell {
        proto::Cell { row: cell.row, column: cell.column }
    }

    /// Up to three reclaimed cells, dropping those that conflict with one drawn before.
    fn random_message(random: &mut SplitMix, sizes: Sizes) -> proto::Reclamation {
        let rows = sizes.draw(random);
        let mut reclaimed: Vec<proto::Cell> = Vec::new();
        for _ in 0..random.range(0, 3) {
            let cell = proto::Cell { row: random.range(1, rows), column: random.range(1, 2) };
            let conflicts = reclaimed.iter().any(|other| {
                other.row == cell.row || (other.column != cell.column && other.row.abs_diff(cell.row) <= 1)
            });
            if !conflicts {
                reclaimed.push(cell);
            }
        }
        proto::Reclamation { rows, reclaimed }
    }
}
