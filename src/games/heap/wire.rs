//! The protobuf messages of the heap games: a position and a move to and from their messages (the
//! one file of the game that names `crate::proto`).

use super::rules::Rules;
use super::sequence::Period;
use super::{Given, HeapMove, HeapValues, Heaps, HeapsError, ValuesKnown};
use crate::games::{Sizes, Wire};
use crate::proto;
use crate::random::SplitMix;

/// The rules of a `Heaps` message's `rules` oneof, validated (also a heap sequence job's).
pub fn rules_from_proto(rules: Option<proto::heaps::Rules>) -> Result<Rules, HeapsError> {
    given_rules(rules).map(|(_, rules)| rules)
}

/// The rules of the oneof, validated, and as they were given.
fn given_rules(rules: Option<proto::heaps::Rules>) -> Result<(Given, Rules), HeapsError> {
    use proto::heaps::Rules as ProtoRules;
    Ok(match rules {
        None | Some(ProtoRules::Nim(false)) => return Err(HeapsError::NoRules),
        Some(ProtoRules::Code(code)) => {
            let rules = Rules::code(&code)?;
            (Given::Code(code), rules)
        }
        Some(ProtoRules::Subtraction(set)) => {
            let rules = Rules::subtraction(&set.take, set.all_but)?;
            (Given::Subtraction { take: set.take, all_but: set.all_but }, rules)
        }
        Some(ProtoRules::Nim(true)) => (Given::Nim, Rules::nim()),
    })
}

/// A period as the API gives it (in answers' `heap_values` and heap sequence jobs).
impl From<Period> for proto::HeapPeriod {
    fn from(period: Period) -> Self {
        proto::HeapPeriod {
            preperiod: period.preperiod,
            period: period.period,
            saltus: period.saltus,
            checked_to: period.checked_to,
        }
    }
}

/// How a rule set's values are known, as answers give it (`heap_values`).
impl From<HeapValues> for proto::HeapValues {
    fn from(values: HeapValues) -> Self {
        use proto::heap_values::Known;
        let known = match values.known {
            ValuesKnown::Proven(period) => Known::Proven(period.into()),
            ValuesKnown::Computed { up_to } => Known::Computed(proto::ComputedValues { up_to }),
        };
        proto::HeapValues { rules: values.rules, known: Some(known) }
    }
}

impl Wire for Heaps {
    type Message = proto::Heaps;
    type MoveMessage = proto::HeapsMove;

    fn from_message(message: proto::Heaps) -> Result<Self, HeapsError> {
        let (given, rules) = given_rules(message.rules)?;
        Heaps::new(given, rules, message.heaps)
    }

    fn to_message(&self) -> proto::Heaps {
        use proto::heaps::Rules as ProtoRules;
        let rules = match &self.given {
            Given::Code(code) => ProtoRules::Code(code.clone()),
            Given::Subtraction { take, all_but } => {
                ProtoRules::Subtraction(proto::Subtraction { take: take.clone(), all_but: *all_but })
            }
            Given::Nim => ProtoRules::Nim(true),
        };
        proto::Heaps { rules: Some(rules), heaps: self.heaps.clone() }
    }

    fn move_message(mv: &HeapMove) -> proto::HeapsMove {
        proto::HeapsMove { heap: mv.heap as u64 + 1, take: mv.take, leave: mv.left().to_vec() }
    }

    /// Proven rules (Kayles, Dawson's Kayles, 0.137, a subtraction game, Nim) with heaps of any
    /// size one time in five; any rules, Grundy's game and a hexadecimal code among them, with small
    /// heaps otherwise.
    fn random_message(random: &mut SplitMix, sizes: Sizes) -> proto::Heaps {
        use proto::heaps::Rules as ProtoRules;
        const PROVEN: [&str; 3] = ["0.77", "0.07", "0.137"];
        const ANY: [&str; 4] = ["4!.0", "0.3F", "4.007", "0.106"];
        let rules = match random.below(6) {
            0 => ProtoRules::Nim(true),
            1 => ProtoRules::Subtraction(proto::Subtraction { take: vec![1, 3, 4], all_but: false }),
            2 if !sizes.huge => ProtoRules::Code(ANY[random.index(ANY.len())].into()),
            _ => ProtoRules::Code(PROVEN[random.index(PROVEN.len())].into()),
        };
        let small = Sizes { huge: sizes.huge, small: sizes.small.min(60) };
        let heaps = (0..random.range(1, 3)).map(|_| small.draw(random)).collect();
        proto::Heaps { rules: Some(rules), heaps }
    }
}
