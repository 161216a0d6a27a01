//! The protobuf messages of Node Kayles: a position and a move to and from their messages (the
//! one file of the game that names `crate::proto`).

use super::{Choice, Graph, GraphError};
use crate::games::{Sizes, Wire};
use crate::proto;
use crate::random::SplitMix;

impl Wire for Graph {
    type Message = proto::NodeKayles;
    type MoveMessage = proto::NodeKaylesMove;

    fn from_message(message: proto::NodeKayles) -> Result<Graph, GraphError> {
        let edges: Vec<(u32, u32)> = message.edges.iter().map(|edge| (edge.from, edge.to)).collect();
        Graph::new(message.vertices, &edges)
    }

    fn to_message(&self) -> proto::NodeKayles {
        proto::NodeKayles {
            vertices: self.vertices() as u32,
            edges: self.edges().map(|(from, to)| proto::Edge { from, to }).collect(),
        }
    }

    fn move_message(mv: &Choice) -> proto::NodeKaylesMove {
        proto::NodeKaylesMove { vertex: mv.vertex }
    }

    /// Up to `sizes.small` (at most 24) vertices, each pair joined with one probability drawn per
    /// graph (sparse to dense), each edge in a random orientation.
    fn random_message(random: &mut SplitMix, sizes: Sizes) -> proto::NodeKayles {
        let vertices = random.range(0, sizes.small.clamp(1, 24)) as u32;
        let percent = random.pick(&[8, 15, 25, 40, 60, 85]);
        let mut edges = Vec::new();
        for from in 1..=vertices {
            for to in from + 1..=vertices {
                if random.percent(percent) {
                    let (from, to) = if random.percent(50) { (from, to) } else { (to, from) };
                    edges.push(proto::Edge { from, to });
                }
            }
        }
        proto::NodeKayles { vertices, edges }
    }
}
