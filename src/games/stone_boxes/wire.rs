//! The protobuf messages of the stone boxes: a position and a move to and from their messages (the
//! one file of the game that names `crate::proto`).

use super::{AddStones, Boxes, StoneBox, StoneBoxesError};
use crate::games::{Sizes, Wire};
use crate::proto;
use crate::random::SplitMix;

impl Wire for Boxes {
    type Message = proto::StoneBoxes;
    type MoveMessage = proto::StoneBoxesMove;

    fn from_message(message: proto::StoneBoxes) -> Result<Self, StoneBoxesError> {
        Boxes::new(message.boxes.into_iter().map(|b| StoneBox { capacity: b.capacity, stones: b.stones }).collect())
    }

    fn to_message(&self) -> proto::StoneBoxes {
        proto::StoneBoxes {
            boxes: self.boxes.iter().map(|b| proto::StoneBox { capacity: b.capacity, stones: b.stones }).collect(),
        }
    }

    fn move_message(add: &AddStones) -> proto::StoneBoxesMove {
        proto::StoneBoxesMove { r#box: add.box_index as u64 + 1, stones: add.stones }
    }

    /// One to three boxes, each holding up to its capacity.
    fn random_message(random: &mut SplitMix, sizes: Sizes) -> proto::StoneBoxes {
        proto::StoneBoxes {
            boxes: (0..random.range(1, 3))
                .map(|_| {
                    let capacity = sizes.draw(random);
                    proto::StoneBox { capacity, stones: random.range(0, capacity) }
                })
                .collect(),
        }
    }
}
