//! Protobuf ↔ domain: requests become validated [`Position`]s (or an [`InvalidArgument`] naming
//! the field and the limit), answers become protobuf messages, for the gRPC service and the jobs
//! alike. No game rules live here: each game's validating constructor (behind its `wire.rs`)
//! decides what is legal. Random valid positions, for tests and the load generator, are drawn here
//! too ([`random_position`]), through each game's [`Wire::random_message`]. Explore requests become
//! domain jobs in [`job`].

pub mod job;

use crate::games::analysis::{self, Analysis};
use crate::games::misere;
use crate::games::registry::with_games;
use crate::games::sum::Sum;
use crate::games::sum::SumValue;
use crate::games::{Game, GameTag, Move, Outcome, Position, SearchCounts, ServedGame, Sizes, Stats, Value, Wire};
use crate::invalid_argument::InvalidArgument;
use crate::proto;
use crate::random::SplitMix;
use proto::position::Game as ProtoGame;

/// The domain position of a request's `position` field (required). The request-wide item limit
/// ([`MAX_ITEMS`](crate::games::MAX_ITEMS)) is the codec's to check, on the wire form, before
/// prost decodes anything ([`codec`](crate::grpc::codec)): every request reaches here through it. The domain checks
/// the rest (each game's constructor, and [`Sum::new`] the components and the nesting).
pub fn position_from_proto(position: Option<proto::Position>) -> Result<Position, InvalidArgument> {
    let position = position.ok_or_else(|| InvalidArgument::field("position", "is required"))?;
    game_from_proto(position, 0)
}

macro_rules! define_conversion {
    ($($game:ident($position:ty) = $tag:literal,)*) => {
        /// The domain position of `position`, a sum's component at nesting `depth` (0 at the top).
        fn game_from_proto(position: proto::Position, depth: usize) -> Result<Position, InvalidArgument> {
            let game = position.game.ok_or_else(|| {
                let games = [$(<$position as ServedGame>::NAME),*].join(", ");
                InvalidArgument::field("position", format!("must set one game: {games} or sum"))
            })?;
            Ok(match game {
                $(ProtoGame::$game(message) => Position::from(
                    <$position as Wire>::from_message(message)
                        .map_err(|error| InvalidArgument::setup(<$position as ServedGame>::NAME, &error))?,
                ),)*
                ProtoGame::Sum(components) => {
                    let components = components
                        .components
                        .into_iter()
                        .enumerate()
                        .map(|(index, component)| {
                            game_from_proto(component, depth + 1)
                                .map_err(|error| error.within(&format!("sum.components[{index}].")))
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    Position::Sum(Sum::new(components, depth).map_err(|error| InvalidArgument::setup("sum", &error))?)
                }
            })
        }

        /// The protobuf form of a position.
        pub fn position_to_proto(position: &Position) -> proto::Position {
            let game = match position {
                $(Position::$game(game) => ProtoGame::$game(game.to_message()),)*
                Position::Sum(sum) => {
                    ProtoGame::Sum(proto::Sum { components: sum.components().iter().map(position_to_proto).collect() })
                }
            };
            proto::Position { game: Some(game) }
        }

        /// The protobuf form of a move.
        pub fn move_to_proto(mv: &Move) -> proto::Move {
            use proto::r#move::Game as ProtoMove;
            let game = match mv {
                $(Move::$game(mv) => ProtoMove::$game(<$position as Wire>::move_message(mv)),)*
                Move::Sum(sum_move) => ProtoMove::Sum(Box::new(proto::SumMove {
                    component: sum_move.component as u64 + 1,
                    r#move: Some(Box::new(move_to_proto(&sum_move.mv))),
                })),
            };
            proto::Move { game: Some(game) }
        }
    };
}

with_games!(define_conversion);

/// An outcome as the API gives it.
impl From<Outcome> for proto::Outcome {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::NextPlayerWins => proto::Outcome::NextPlayerWins,
            Outcome::PreviousPlayerWins => proto::Outcome::PreviousPlayerWins,
        }
    }
}

/// The protobuf outcome of a value.
pub fn outcome_to_proto(value: impl Value) -> proto::Outcome {
    value.outcome().into()
}

/// The protobuf statistics of a solve that took `elapsed`.
pub fn stats_to_proto(stats: Stats, elapsed: std::time::Duration) -> proto::Stats {
    proto::Stats {
        positions_computed: stats.positions_computed,
        cache_hits: stats.cache_hits,
        elapsed_micros: u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
        search: Some(stats.search.into()),
    }
}

/// The search counts to and from their message, which has the same fields.
macro_rules! search_counts_both_ways {
    ($($field:ident),*) => {
        impl From<SearchCounts> for proto::SearchCounts {
            fn from(counts: SearchCounts) -> Self {
                proto::SearchCounts { $($field: counts.$field),* }
            }
        }

        impl From<proto::SearchCounts> for SearchCounts {
            fn from(counts: proto::SearchCounts) -> Self {
                SearchCounts { $($field: counts.$field),* }
            }
        }
    };
}

search_counts_both_ways!(expanded, option_evaluations, cutoffs, settled, table_lookups, table_hits, store_reads);

/// How the values `position`'s answer rests on are known ([`Position::evidence`]), as answers give it.
fn heap_values_to_proto(position: &Position) -> Vec<proto::HeapValues> {
    position.evidence().into_iter().map(Into::into).collect()
}

/// The answer of Solve (and of a `solve` job) for `position`: `value`'s outcome and nimber, how the
/// values it rests on are known ([`Position::evidence`]), and the statistics.
pub fn solve_response(
    position: &Position,
    value: SumValue,
    stats: Stats,
    elapsed: std::time::Duration,
) -> proto::SolveResponse {
    proto::SolveResponse {
        outcome: outcome_to_proto(value) as i32,
        grundy: value.nimber(),
        stats: Some(stats_to_proto(stats, elapsed)),
        id: String::new(),
        error: None,
        heap_values: heap_values_to_proto(position),
        misere: None,
    }
}

/// The answer of BestMove (and of a `best_move` job) for `position`: `value`, its best move `best`
/// if any with the position after it, how the values it rests on are known, and the statistics.
pub fn best_move_response(
    position: &Position,
    value: SumValue,
    best: Option<Move>,
    stats: Stats,
    elapsed: std::time::Duration,
) -> proto::BestMoveResponse {
    proto::BestMoveResponse {
        outcome: outcome_to_proto(value) as i32,
        grundy: value.nimber(),
        r#move: best.as_ref().map(move_to_proto),
        after: best.map(|mv| position_to_proto(&position.play_unchecked(&mv))),
        stats: Some(stats_to_proto(stats, elapsed)),
        heap_values: heap_values_to_proto(position),
        misere: None,
    }
}

/// Whether a request's `play` (the field `field`) asks for misère play, for `position` (which must
/// have a misère form: the cutting game has none). An unknown value is INVALID_ARGUMENT naming
/// the field.
pub fn misere_from_proto(field: &str, play: i32, position: &Position) -> Result<bool, InvalidArgument> {
    match proto::Play::try_from(play) {
        Ok(proto::Play::Normal) => Ok(false),
        Ok(proto::Play::Misere) if position.has_misere_form() => Ok(true),
        Ok(proto::Play::Misere) => Err(InvalidArgument::field(
            field,
            "is PLAY_MISERE, which the cutting game does not have: its winner is who cuts out a 1×1 piece, not who \
             moves last",
        )),
        Err(_) => {
            Err(InvalidArgument::field(field, format!("is {play}; it must be PLAY_NORMAL (0) or PLAY_MISERE (1)")))
        }
    }
}

/// What a misère answer rests on, as answers give it.
fn misere_basis_to_proto(basis: &misere::Basis) -> proto::MisereBasis {
    use proto::misere_basis::Basis;
    proto::MisereBasis {
        basis: Some(match basis {
            misere::Basis::NimRule => Basis::Rule("misère Nim (Bouton 1902)".into()),
            misere::Basis::Genus { components, positions } => Basis::Genus(proto::MisereGenus {
                components: components.iter().map(ToString::to_string).collect(),
                positions: *positions,
            }),
            &misere::Basis::Search { positions } => Basis::Search(proto::MisereSearch { positions }),
        }),
    }
}

/// The answer of Solve in misère play: the outcome and what it rests on (no Grundy value).
pub fn misere_solve_response(
    answer: &misere::Answer,
    stats: Stats,
    elapsed: std::time::Duration,
) -> proto::SolveResponse {
    proto::SolveResponse {
        outcome: proto::Outcome::from(answer.outcome()) as i32,
        stats: Some(stats_to_proto(stats, elapsed)),
        misere: Some(misere_basis_to_proto(&answer.basis)),
        ..Default::default()
    }
}

/// The answer of BestMove in misère play for `position`: the outcome, a winning move when there is
/// one (else the first legal move, as in normal play), the position after it, and what the answer
/// rests on.
pub fn misere_best_move_response(
    position: &Position,
    answer: &misere::Answer,
    stats: Stats,
    elapsed: std::time::Duration,
) -> proto::BestMoveResponse {
    let best = answer.winning_move.clone().or_else(|| position.moves().get(0));
    proto::BestMoveResponse {
        outcome: proto::Outcome::from(answer.outcome()) as i32,
        grundy: None,
        r#move: best.as_ref().map(move_to_proto),
        after: best.map(|mv| position_to_proto(&position.play_unchecked(&mv))),
        stats: Some(stats_to_proto(stats, elapsed)),
        heap_values: Vec::new(),
        misere: Some(misere_basis_to_proto(&answer.basis)),
    }
}

/// The page of an Analyze request of the position encoded as `query`: where it starts (from
/// `page_token`) and how many moves it lists (`limit`, by [`crate::page::page_size`]).
pub fn page_from_proto(limit: u32, page_token: &str, query: &[u8]) -> Result<(u128, usize), InvalidArgument> {
    let limit = crate::page::page_size(limit as usize, analysis::DEFAULT_LIMIT, analysis::MAX_LIMIT);
    let offset = crate::page::start_number::<16>(page_token, query)?.map_or(0, u128::from_be_bytes);
    Ok((offset, limit))
}

/// The protobuf form of an analysis of `position`, encoded as `query`, with how the values it rests
/// on are known.
pub fn analysis_to_proto<V: Value>(
    position: &Position,
    analysis: &Analysis<Move, V>,
    query: &[u8],
    stats: proto::Stats,
) -> proto::AnalyzeResponse {
    let saturate = |count: u128| u64::try_from(count).unwrap_or(u64::MAX);
    proto::AnalyzeResponse {
        outcome: outcome_to_proto(analysis.value) as i32,
        grundy: analysis.value.nimber(),
        moves: analysis
            .moves
            .iter()
            .map(|move_value| proto::MoveAnalysis {
                r#move: Some(move_to_proto(&move_value.mv)),
                outcome: outcome_to_proto(move_value.value) as i32,
                grundy: move_value.value.nimber(),
                winning: move_value.is_winning(),
            })
            .collect(),
        total_moves: saturate(analysis.total_moves),
        winning_moves: saturate(analysis.winning_moves),
        total_moves_exact: analysis.total_moves.to_string(),
        winning_moves_exact: analysis.winning_moves.to_string(),
        next_page_token: analysis
            .next_offset
            .map(|offset| crate::page::token(query, &offset.to_be_bytes()))
            .unwrap_or_default(),
        stats: Some(stats),
        heap_values: heap_values_to_proto(position),
        misere: None,
    }
}

/// The protobuf form of a misère analysis of `position`, encoded as `query`, and what it rests on.
pub fn misere_analysis_to_proto(
    position: &Position,
    analysis: &Analysis<Move, Outcome>,
    basis: &misere::Basis,
    query: &[u8],
    stats: proto::Stats,
) -> proto::AnalyzeResponse {
    proto::AnalyzeResponse {
        misere: Some(misere_basis_to_proto(basis)),
        heap_values: Vec::new(),
        ..analysis_to_proto(position, analysis, query, stats)
    }
}

macro_rules! define_random_position {
    ($($game:ident($position:ty) = $tag:literal,)*) => {
        /// A random valid position of the game `game` ([`Wire::random_message`]). Sizes are up
        /// to `small` (at least 1), or in one position of five huge (up to 2^64 − 1), where the game
        /// allows it; boards are small, so that brute force and search stay fast.
        pub fn random_position(random: &mut SplitMix, game: GameTag, small: u64) -> proto::Position {
            let sizes = Sizes { huge: random.percent(20), small };
            let game = match game {
                $(GameTag::$game => ProtoGame::$game(<$position as Wire>::random_message(random, sizes)),)*
            };
            proto::Position { game: Some(game) }
        }
    };
}

with_games!(define_random_position);

/// The 2×2 placement position of the board `rows`.
pub fn board_position(rows: Vec<String>) -> proto::Position {
    proto::Position { game: Some(ProtoGame::Tetris(proto::Tetris { rows })) }
}
