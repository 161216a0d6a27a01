//! The protobuf messages of the cutting game: a position and a move to and from their messages (the
//! one file of the game that names `crate::proto`).

use super::{Cut, CutDirection, CuttingError, Paper, Piece};
use crate::games::{Sizes, Wire};
use crate::proto;
use crate::random::SplitMix;

impl Wire for Paper {
    type Message = proto::Cutting;
    type MoveMessage = proto::CuttingMove;

    fn from_message(message: proto::Cutting) -> Result<Self, CuttingError> {
        Paper::new(message.pieces.into_iter().map(|p| Piece { width: p.width, height: p.height }).collect())
    }

    fn to_message(&self) -> proto::Cutting {
        proto::Cutting {
            pieces: self.pieces.iter().map(|p| proto::Piece { width: p.width, height: p.height }).collect(),
        }
    }

    fn move_message(cut: &Cut) -> proto::CuttingMove {
        proto::CuttingMove {
            piece: cut.piece as u64 + 1,
            direction: match cut.direction {
                CutDirection::Vertical => proto::CutDirection::Vertical,
                CutDirection::Horizontal => proto::CutDirection::Horizontal,
            } as i32,
            at: cut.at,
        }
    }

    /// One to three pieces, each side at least 2.
    fn random_message(random: &mut SplitMix, sizes: Sizes) -> proto::Cutting {
        proto::Cutting {
            pieces: (0..random.range(1, 3))
                .map(|_| proto::Piece { width: sizes.draw(random).max(2), height: sizes.draw(random).max(2) })
                .collect(),
        }
    }
}
