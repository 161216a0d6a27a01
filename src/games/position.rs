//! [`Position`] and [`Move`]: any position or move of any registered game, or of a sum of them;
//! [`GameTag`], which game; [`Learnt`], what a game's searches keep between solves. All of it is
//! generated from the registry's list (`with_games!` in [`registry`](super::registry)), and every dispatch
//! matches that list exhaustively.

use std::sync::Arc;

use super::registry::with_games;
use super::sum::{self, ComponentValue, SumValue};
use super::{Game, Interrupted, MoveSet, SearchContext};
use super::{Lookup, ServedGame};

/// Positions whose closed forms hold more items than this (pieces, boxes, cells) are not
/// [`Position::is_cheap`].
const CHEAP_ITEMS: usize = 1024;

/// What solving a position costs: its closed forms' items, whether a component may need a search,
/// and whether a closed form is not cheap ([`ServedGame::is_cheap`]).
#[derive(Clone, Copy, Default)]
struct Work {
    items: usize,
    searches: bool,
    costly: bool,
}

impl Work {
    /// The work of two components together.
    fn plus(self, other: Work) -> Work {
        Work {
            items: self.items.saturating_add(other.items),
            searches: self.searches || other.searches,
            costly: self.costly || other.costly,
        }
    }
}

macro_rules! define_positions {
    ($($game:ident($position:ty) = $tag:literal,)*) => {
        /// A position of any game, or a sum of positions. A game's position is shared (`Arc`): a
        /// sum's moves copy its other components for free. Equal positions are the same position
        /// as given (not up to symmetry).
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum Position {
            $(
                #[doc = concat!("A position of the game `", stringify!($game), "`.")]
                $game(Arc<$position>),
            )*
            /// A disjunctive sum of positions.
            Sum(sum::Sum),
        }

        /// A move of any game.
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
        pub enum Move {
            $(
                #[doc = concat!("A move of the game `", stringify!($game), "`.")]
                $game(<$position as Game>::Move),
            )*
            /// A move in one component of a sum.
            Sum(sum::SumMove),
        }

        /// Which game: the first byte of its keys in the memo (stable: stored keys begin with it),
        /// and the kind of its random test positions.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum GameTag {
            $(
                #[doc = concat!("The game `", stringify!($game), "`.")]
                $game = $tag,
            )*
        }

        impl GameTag {
            /// Every game, in the registry's order.
            pub const ALL: &'static [GameTag] = &[$(GameTag::$game),*];

            /// The game's field in `Position`'s oneof (`stone_boxes`).
            pub fn name(self) -> &'static str {
                match self {
                    $(GameTag::$game => <$position as ServedGame>::NAME,)*
                }
            }

            /// Whether the game's positions may need a search (see [`ServedGame::SEARCHES`]).
            pub fn searches(self) -> bool {
                match self {
                    $(GameTag::$game => <$position as ServedGame>::SEARCHES,)*
                }
            }

            /// The bytes the game's in-process cache of values holds (see
            /// [`ServedGame::values_cache_bytes`]).
            pub fn values_cache_bytes(self) -> u64 {
                match self {
                    $(GameTag::$game => <$position as ServedGame>::values_cache_bytes(),)*
                }
            }
        }

        /// What the solves through one [`SearchContext`] have learnt, kept for the next one: the
        /// state of one game's search (a solve of another game starts afresh).
        #[derive(Default)]
        pub enum Learnt {
            /// Nothing yet.
            #[default]
            Nothing,
            $(
                #[doc = concat!("What searches of the game `", stringify!($game), "` learnt.")]
                $game(<$position as ServedGame>::Learnt),
            )*
        }

        /// A registered game, as the registry sees it: its tag and its variants.
        pub trait Registered: ServedGame {
            /// The game's memo tag.
            const TAG: GameTag;
            /// `learnt` as this game's state, if it is (else `None`, and `learnt` is untouched).
            fn take_learnt(learnt: &mut Learnt) -> Option<Self::Learnt>;
            /// This game's state as what was learnt.
            fn learnt(state: Self::Learnt) -> Learnt;
        }

        $(
            impl Registered for $position {
                const TAG: GameTag = GameTag::$game;

                fn take_learnt(learnt: &mut Learnt) -> Option<Self::Learnt> {
                    if let Learnt::$game(_) = learnt {
                        let Learnt::$game(state) = std::mem::take(learnt) else { unreachable!("matched above") };
                        return Some(state);
                    }
                    None
                }

                fn learnt(state: Self::Learnt) -> Learnt {
                    Learnt::$game(state)
                }
            }

            impl From<$position> for Position {
                fn from(position: $position) -> Self {
                    Position::$game(Arc::new(position))
                }
            }
        )*

        impl Position {
            /// What solving the position costs, summed over its components.
            fn work(&self) -> Work {
                match self {
                    $(Position::$game(game) => match <$position as ServedGame>::SEARCHES {
                        true => Work { items: 0, searches: true, costly: false },
                        false => Work { items: game.items(), searches: false, costly: !game.is_cheap() },
                    },)*
                    Position::Sum(sum) => sum.components().iter().map(Position::work).fold(Work::default(), Work::plus),
                }
            }

            /// Whether the position's value may need a search (else it is closed forms only). A
            /// search keeps what it finished in the memo: a retry after a deadline continues.
            pub fn needs_search(&self) -> bool {
                self.work().searches
            }

            /// Whether solving is cheap enough to run anywhere: closed forms only, over at most a
            /// thousand or so items.
            pub fn is_cheap(&self) -> bool {
                let work = self.work();
                !work.searches && !work.costly && work.items <= CHEAP_ITEMS
            }

            /// The value of the position when it needs no search and little work: its closed forms
            /// hold at most a thousand or so items, and every searched component is found by
            /// `lookup` (a probe of a memo). Also how many values `lookup` supplied. `None` when a
            /// search or more work would be needed.
            pub fn value_without_search(&self, lookup: &Lookup) -> Option<(SumValue, u64)> {
                fn value(position: &Position, lookup: &Lookup) -> Option<(SumValue, u64)> {
                    match position {
                        $(Position::$game(game) => {
                            game.value_without_search(lookup).map(|(value, found)| (value.widen(), found))
                        })*
                        Position::Sum(sum) => {
                            sum.components().iter().try_fold((SumValue::Nimber(0), 0), |(total, found), part| {
                                let (part_value, part_found) = value(part, lookup)?;
                                Some((total.plus(part_value), found + part_found))
                            })
                        }
                    }
                }
                if self.work().items > CHEAP_ITEMS {
                    return None;
                }
                value(self, lookup)
            }

            /// The parts a fleet's replicas may solve each on its own, so that this position's
            /// solve then finds their values in the shared memo: the components of a sum that need
            /// a search (every component's, through nested sums), at most `most`. A position of
            /// one game has none: dividing one search among replicas costs more than it saves
            /// (docs/BENCHMARKS.md), while the components of a sum are independent questions.
            pub fn fleet_parts(&self, most: usize) -> Vec<Position> {
                fn parts(position: &Position, found: &mut Vec<Position>) {
                    match position {
                        Position::Sum(sum) => sum.components().iter().for_each(|part| parts(part, found)),
                        searched if searched.needs_search() => found.push(searched.clone()),
                        _ => {}
                    }
                }
                let mut found = Vec::new();
                if let Position::Sum(_) = self {
                    parts(self, &mut found);
                }
                found.truncate(most);
                found
            }

            /// How the values of the position's components are known (see
            /// [`ServedGame::evidence`]): every component's, each once, in the order of the
            /// components. Reads only what the process holds in memory.
            pub fn evidence(&self) -> Vec<super::heap::HeapValues> {
                fn collect(position: &Position, into: &mut Vec<super::heap::HeapValues>) {
                    let found = match position {
                        $(Position::$game(game) => game.evidence(),)*
                        Position::Sum(sum) => {
                            sum.components().iter().for_each(|part| collect(part, into));
                            return;
                        }
                    };
                    for known in found {
                        if !into.contains(&known) {
                            into.push(known);
                        }
                    }
                }
                let mut evidence = Vec::new();
                collect(self, &mut evidence);
                evidence
            }

            /// Whether the game is already over whatever else is in play (see
            /// [`ServedGame::is_finished`]). Such a position has no moves, and it ends any sum it
            /// is part of.
            pub fn is_finished(&self) -> bool {
                match self {
                    $(Position::$game(game) => game.is_finished(),)*
                    Position::Sum(sum) => sum.components().iter().any(Position::is_finished),
                }
            }

            /// The independent parts of a position of one game whose sum it is (see
            /// [`ServedGame::parts`]); `None` for one part, or a sum.
            pub fn parts(&self) -> Option<Vec<Position>> {
                match self {
                    $(Position::$game(game) => Some(game.parts()?.into_iter().map(|part| Position::$game(Arc::new(part))).collect()),)*
                    Position::Sum(_) => None,
                }
            }

            /// The move of this position (of one game) that is `mv` made in its part `index`.
            pub fn move_in_part(&self, index: usize, mv: Move) -> Move {
                match (self, mv) {
                    $((Position::$game(_), Move::$game(mv)) => Move::$game(<$position>::move_in_part(index, mv)),)*
                    (_, mv) => mv,
                }
            }
        }

        impl Game for Position {
            type Move = Move;
            type Value = SumValue;

            fn value(&self, context: &mut SearchContext) -> Result<SumValue, Interrupted> {
                match self {
                    $(Position::$game(game) => Ok(game.value(context)?.widen()),)*
                    Position::Sum(sum) => sum.value(context),
                }
            }

            fn moves(&self) -> MoveSet<Move> {
                match self {
                    $(Position::$game(game) => game.moves().map(Move::$game),)*
                    Position::Sum(sum) => sum.moves().map(Move::Sum),
                }
            }

            /// A move of another game is never legal.
            fn is_legal(&self, mv: &Move) -> bool {
                match self {
                    $(Position::$game(game) => matches!(mv, Move::$game(mv) if game.is_legal(mv)),)*
                    Position::Sum(sum) => matches!(mv, Move::Sum(mv) if sum.is_legal(mv)),
                }
            }

            fn play_unchecked(&self, mv: &Move) -> Self {
                debug_assert!(self.is_legal(mv), "{mv:?} is not legal in {self:?}");
                // A move of another game is illegal here: nothing changes.
                match self {
                    $(Position::$game(game) => if let Move::$game(mv) = mv {
                        Position::from(game.play_unchecked(mv))
                    } else {
                        self.clone()
                    },)*
                    Position::Sum(sum) => if let Move::Sum(mv) = mv {
                        Position::Sum(sum.play_unchecked(mv))
                    } else {
                        self.clone()
                    },
                }
            }

            fn moves_to(&self, target: SumValue, context: &mut SearchContext) -> Result<MoveSet<Move>, Interrupted> {
                match self {
                    $(Position::$game(game) => match ComponentValue::narrow(target) {
                        Some(target) => Ok(game.moves_to(target, context)?.map(Move::$game)),
                        None => Ok(MoveSet::empty()),
                    },)*
                    Position::Sum(sum) => Ok(sum.moves_to(target, context)?.map(Move::Sum)),
                }
            }

            fn first_move_to(
                &self,
                target: SumValue,
                context: &mut SearchContext,
            ) -> Result<Option<Move>, Interrupted> {
                match self {
                    $(Position::$game(game) => match ComponentValue::narrow(target) {
                        Some(target) => Ok(game.first_move_to(target, context)?.map(Move::$game)),
                        None => Ok(None),
                    },)*
                    Position::Sum(sum) => Ok(sum.first_move_to(target, context)?.map(Move::Sum)),
                }
            }

            fn best_move(&self, context: &mut SearchContext) -> Result<(SumValue, Option<Move>), Interrupted> {
                match self {
                    $(Position::$game(game) => {
                        let (value, mv) = game.best_move(context)?;
                        Ok((value.widen(), mv.map(Move::$game)))
                    })*
                    Position::Sum(sum) => sum.best_move(context).map(|(value, mv)| (value, mv.map(Move::Sum))),
                }
            }
        }
    };
}

with_games!(define_positions);
