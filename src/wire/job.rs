//! Explore requests ↔ domain jobs: an [`proto::ExploreRequest`] validated into a [`Job`] (or an
//! [`InvalidArgument`] naming the field and the limit), and the rows, progress and answers of
//! jobs as protobuf messages.

use std::sync::Arc;

use crate::games::family::{Chain, ChainAnswer, ChainProgress, CommonValues, Family, HeapSequence, ItemRow};
use crate::games::family::{Job, Row, SequenceProgress, SequenceSummary, ValuesRow, MAX_UP_TO};
use crate::games::placement::{Board, BoardFamily, Piece};
use crate::games::{cram, heap, node_kayles_board, tetris, Position, Value};
use crate::invalid_argument::InvalidArgument;
use crate::proto::{self, explore_request::Job as ProtoJob, explore_result::Answer};

/// The most characters of a `request_id`.
pub const MAX_REQUEST_ID: usize = 128;

/// The most rows (and columns) of the boards of a `full_boards` family: every board up to
/// 16×16 is within the board's cell limit ([`MAX_CELLS`](crate::games::placement::MAX_CELLS)).
pub const MAX_FAMILY_SIDE: usize = 16;

/// The most seconds of a `google.protobuf.Duration` (about 10 000 years), the range its definition gives.
pub const MAX_DURATION_SECONDS: i64 = 315_576_000_000;

/// Validates an Explore request into its job, naming the field and the limit when it is not acceptable.
pub fn job_from_request(request: &proto::ExploreRequest) -> Result<Job, InvalidArgument> {
    if request.request_id.chars().count() > MAX_REQUEST_ID {
        return Err(InvalidArgument::field("request_id", format!("has more than {MAX_REQUEST_ID} characters")));
    }
    if let Some(duration) = &request.max_duration {
        if duration_from_proto("max_duration", duration)?.is_zero() {
            return Err(InvalidArgument::field("max_duration", "must be positive when set"));
        }
    }
    let job = request.job.clone().ok_or_else(|| {
        InvalidArgument::field(
            "job",
            "is required: set one of solve, best_move, full_boards, sub_boards, heap_sequence",
        )
    })?;
    let divided = |position: Position| -> Result<Box<Position>, InvalidArgument> {
        if request.split_across_replicas && position.fleet_parts(2).len() < 2 {
            return Err(InvalidArgument::field(
                "split_across_replicas",
                "is for a sum of at least two components that need a search, which replicas solve each on its own; \
                 this position has fewer, and dividing one search among replicas costs more CPU than it saves (19 to \
                 380 times one replica's, measured in docs/BENCHMARKS.md): ask without it",
            ));
        }
        Ok(Box::new(position))
    };
    let misere = |position: Position, best_move: bool| -> Result<Job, InvalidArgument> {
        match request.split_across_replicas {
            true => Err(InvalidArgument::field(
                "split_across_replicas",
                "is for normal play, where a sum's value adds up from its components'; a misère answer rests on \
                 the whole sum: ask without it",
            )),
            false => Ok(Job::Misere { position: Box::new(position), best_move }),
        }
    };
    Ok(match job {
        ProtoJob::Solve(solve) => {
            let position = super::position_from_proto(solve.position).map_err(|error| in_position("solve", error))?;
            match super::misere_from_proto("solve.play", solve.play, &position)? {
                true => misere(position, false)?,
                false => Job::Solve(divided(position)?),
            }
        }
        ProtoJob::BestMove(best) => {
            let position =
                super::position_from_proto(best.position).map_err(|error| in_position("best_move", error))?;
            match super::misere_from_proto("best_move.play", best.play, &position)? {
                true => misere(position, true)?,
                false => Job::BestMove(divided(position)?),
            }
        }
        ProtoJob::FullBoards(full) => {
            let rows = side_range("full_boards", "rows", full.min_rows, full.max_rows)?;
            let columns = side_range("full_boards", "columns", full.min_columns, full.max_columns)?;
            Job::Family(board_family("full_boards", full.game, &Boards::Full { rows, columns })?)
        }
        ProtoJob::SubBoards(sub) => {
            let rows = sub.board.map(|board| board.rows).unwrap_or_default();
            let sub_boards = Boards::Sub { rows, max_blocked: sub.max_blocked as usize };
            Job::Family(board_family("sub_boards", sub.game, &sub_boards)?)
        }
        ProtoJob::HeapSequence(sequence) => Job::Chain(heap_sequence(sequence)?),
    })
}

/// A family of boards as a request gives it, before its game is known.
enum Boards {
    /// `full_boards`: the ranges of rows and columns.
    Full { rows: (usize, usize), columns: (usize, usize) },
    /// `sub_boards`: the board's rows and the most cells to block.
    Sub { rows: Vec<String>, max_blocked: usize },
}

impl Boards {
    /// The family for boards of `P`.
    fn of<P: Piece>(&self) -> Result<BoardFamily<P>, InvalidArgument> {
        match self {
            Boards::Full { rows, columns } => Ok(BoardFamily::FullBoards { rows: *rows, columns: *columns }),
            Boards::Sub { rows, max_blocked } => {
                let board = Board::new(rows).map_err(|error| InvalidArgument::setup("sub_boards.board", &error))?;
                BoardFamily::sub_boards(board, *max_blocked)
                    .map_err(|problem| InvalidArgument::field("sub_boards", problem))
            }
        }
    }
}

/// The family `boards` of the request's field `family` (e.g. `full_boards`), in the placement game
/// `game` (`BOARD_GAME_UNSPECIFIED` is the 2×2 game).
fn board_family(family: &str, game: i32, boards: &Boards) -> Result<Arc<dyn Family>, InvalidArgument> {
    match proto::BoardGame::try_from(game) {
        Ok(proto::BoardGame::Unspecified | proto::BoardGame::Tetris) => Ok(Arc::new(boards.of::<tetris::Square>()?)),
        Ok(proto::BoardGame::Cram) => Ok(Arc::new(boards.of::<cram::Domino>()?)),
        Ok(proto::BoardGame::NodeKayles) => Ok(Arc::new(boards.of::<node_kayles_board::Vertex>()?)),
        Err(_) => Err(InvalidArgument::field(
            format!("{family}.game"),
            format!(
                "is {game}; expected BOARD_GAME_TETRIS (1), BOARD_GAME_CRAM (2), BOARD_GAME_NODE_KAYLES (3) or unset (the 2×2 game)"
            ),
        )),
    }
}

/// The error of the request's position in the job field `job` (e.g. `solve`): its field under
/// `{job}.position`, its message after `{job}.position: `.
fn in_position(job: &str, error: InvalidArgument) -> InvalidArgument {
    InvalidArgument {
        field: format!("{job}.position.{}", error.field),
        message: format!("{job}.position: {}", error.message),
    }
}

/// The duration of the request's `field`, if it is a valid `google.protobuf.Duration` that is not
/// negative: `nanos` within ±999 999 999 and of the sign of `seconds`, `seconds` at most
/// [`MAX_DURATION_SECONDS`].
pub fn duration_from_proto(
    field: &str,
    duration: &prost_types::Duration,
) -> Result<std::time::Duration, InvalidArgument> {
    let prost_types::Duration { seconds, nanos } = *duration;
    if !(-999_999_999..=999_999_999).contains(&nanos) {
        let problem = format!("is {nanos}; the limit is ±999999999 (whole seconds go in {field}.seconds)");
        return Err(InvalidArgument::field(format!("{field}.nanos"), problem));
    }
    if (seconds > 0 && nanos < 0) || (seconds < 0 && nanos > 0) {
        let problem = format!("has seconds {seconds} and nanos {nanos}: they must not have opposite signs");
        return Err(InvalidArgument::field(field, problem));
    }
    if seconds < 0 || nanos < 0 {
        return Err(InvalidArgument::field(field, "must not be negative"));
    }
    if seconds > MAX_DURATION_SECONDS {
        return Err(InvalidArgument::field(
            format!("{field}.seconds"),
            format!("is {seconds}; the limit is {MAX_DURATION_SECONDS} (about 10 000 years)"),
        ));
    }
    Ok(std::time::Duration::new(seconds as u64, nanos as u32))
}

/// A validated `heap_sequence` request: the rules by the same constructors as a heap position's, so
/// a bad code is the same INVALID_ARGUMENT, under `heap_sequence.`.
fn heap_sequence(request: proto::HeapSequence) -> Result<Arc<dyn Chain>, InvalidArgument> {
    use proto::{heap_sequence::Rules as Given, heaps::Rules};
    let rules = request.rules.map(|rules| match rules {
        Given::Code(code) => Rules::Code(code),
        Given::Subtraction(set) => Rules::Subtraction(set),
        Given::Nim(nim) => Rules::Nim(nim),
    });
    let rules = heap::rules_from_proto(rules).map_err(|error| InvalidArgument::setup("heap_sequence", &error))?;
    let up_to = request.up_to;
    if up_to == 0 || up_to > MAX_UP_TO {
        return Err(InvalidArgument::field(
            "heap_sequence.up_to",
            format!("is {up_to}; it must be from 1 to {MAX_UP_TO} (2^32)"),
        ));
    }
    Ok(Arc::new(HeapSequence { rules, up_to }))
}

/// The range `min..=max` of one side (a minimum of 0 means 1), each at most [`MAX_FAMILY_SIDE`].
fn side_range(family: &str, side: &str, min: u32, max: u32) -> Result<(usize, usize), InvalidArgument> {
    let (min, max) = (min.max(1) as usize, max as usize);
    if max == 0 {
        let problem = format!("is required (1 to {MAX_FAMILY_SIDE})");
        return Err(InvalidArgument::field(format!("{family}.max_{side}"), problem));
    }
    if max > MAX_FAMILY_SIDE {
        return Err(InvalidArgument::field(
            format!("{family}.max_{side}"),
            format!("is {max}; the limit is {MAX_FAMILY_SIDE}"),
        ));
    }
    if min > max {
        let problem = format!("({min}) exceeds {family}.max_{side} ({max})");
        return Err(InvalidArgument::field(format!("{family}.min_{side}"), problem));
    }
    Ok((min, max))
}

/// The row of a job's table as the job store keeps it.
pub fn row_to_proto(row: Row) -> proto::ExploreRow {
    match row {
        Row::Item(ItemRow { size: (rows, columns), board, blocked, count, value, cached }) => proto::ExploreRow {
            rows,
            columns,
            board,
            blocked,
            count,
            outcome: super::outcome_to_proto(value) as i32,
            grundy: value.nimber(),
            cached,
            ..Default::default()
        },
        Row::Values(ValuesRow { heap, values }) => proto::ExploreRow { heap, values, ..Default::default() },
    }
}

/// The values of a chain's row.
pub fn values_row_from_proto(row: &proto::ExploreRow) -> ValuesRow {
    ValuesRow { heap: row.heap, values: row.values.clone() }
}

/// A chain's progress as the job's.
pub fn chain_progress_to_proto(progress: ChainProgress) -> proto::explore_progress::Family {
    let ChainProgress::HeapSequence(progress) = progress;
    let SequenceProgress { heaps_computed, values_per_second, largest_value, rare_heaps, candidate_period } = progress;
    proto::explore_progress::Family::HeapSequence(proto::HeapSequenceProgress {
        heaps_computed,
        values_per_second,
        largest_value,
        rare_heaps,
        candidate_period: candidate_period.map(proto::HeapPeriod::from),
    })
}

/// A chain's answer as the job's.
pub fn chain_answer_to_proto(answer: ChainAnswer) -> Answer {
    let ChainAnswer::HeapSequence(summary) = answer;
    let SequenceSummary { period, up_to, heaps_computed, largest_value, frequencies, common_values, rare_heaps } =
        summary;
    let common = |CommonValues { take_parity, on_even_heaps, on_odd_heaps }| proto::CommonValues {
        take_parity,
        on_even_heaps,
        on_odd_heaps,
    };
    Answer::HeapSequence(proto::HeapSequenceResult {
        period: period.map(proto::HeapPeriod::from),
        up_to,
        heaps_computed,
        largest_value,
        frequencies,
        common_values: common_values.into_iter().map(common).collect(),
        rare_heaps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_over_a_limit_name_the_field_and_the_limit() {
        let full = |max_rows| proto::ExploreRequest {
            job: Some(ProtoJob::FullBoards(proto::FullBoards { max_rows, max_columns: 3, ..Default::default() })),
            ..Default::default()
        };
        let error = job_from_request(&full(17)).unwrap_err().message;
        assert!(error.contains("full_boards.max_rows") && error.contains("16"), "{error}");
        assert!(job_from_request(&full(16)).is_ok());
        // Every size up to the limit is a board: the family has an item for each, in order.
        for game in [proto::BoardGame::Tetris, proto::BoardGame::Cram] {
            let largest = proto::FullBoards { max_rows: 16, max_columns: 16, game: game as i32, ..Default::default() };
            let request = proto::ExploreRequest { job: Some(ProtoJob::FullBoards(largest)), ..Default::default() };
            let Ok(Job::Family(family)) = job_from_request(&request) else { panic!("16×16 is within the limits") };
            let sizes: Vec<(u32, u32)> = family
                .items()
                .iter()
                .map(|item| item.row(crate::games::sum::SumValue::Nimber(0), false).size)
                .collect();
            let expected: Vec<(u32, u32)> =
                (1..=16).flat_map(|rows| (1..=16).map(move |columns| (rows, columns))).collect();
            assert_eq!(sizes, expected, "{game:?}");
        }
        let sub = proto::ExploreRequest {
            job: Some(ProtoJob::SubBoards(proto::SubBoards {
                board: Some(proto::Tetris { rows: vec!["0".repeat(16); 16] }),
                max_blocked: 3,
                game: proto::BoardGame::Cram as i32,
            })),
            ..Default::default()
        };
        let error = job_from_request(&sub).unwrap_err().message;
        assert!(error.contains("sub_boards") && error.contains("1000000"), "{error}");
        assert!(error.starts_with("sub_boards has 2796417 boards"), "{error}");
    }
}
