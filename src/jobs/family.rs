//! What a job computes: a request validated into a [`Job`]; the items of a family of boards of a
//! placement game in a fixed order (so that a resumed job finds its finished items by index); and a
//! [`Chain`], a family computed in order whose state carries from item to item (the values of a
//! heap game).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crate::games::heap::{self, rules::Rules, sequence::Sequence};
use crate::games::sum::SumValue;
use crate::games::tetris::Board;
use crate::games::{cram, tetris};
use crate::games::{Budget, Interrupted};
use crate::games::{Position, Value};
use crate::invalid_argument::InvalidArgument;
use crate::limits::TABLE_ENTRY_BYTES;
use crate::proto::{self, explore_request::Job as ProtoJob, explore_result::Answer};
use crate::wire;

/// The most boards of a `sub_boards` family (every choice of blocked cells, before deduplication).
pub const MAX_SUB_BOARDS: u64 = 1_000_000;

/// The most characters of a `request_id`.
pub const MAX_REQUEST_ID: usize = 128;

/// A validated job.
#[derive(Clone, Debug)]
pub enum Job {
    /// The value of one position.
    Solve(Box<Position>),
    /// The best move of one position.
    BestMove(Box<Position>),
    /// The value of every board of a family.
    Family(Family),
    /// A family computed in order, each item from the state the earlier ones left.
    Chain(Chain),
}

impl Job {
    /// Whether the job's state fits in `bytes`, a job's share of `--memory-limit` (its table's:
    /// `--table-entries` × [`TABLE_ENTRY_BYTES`]): a heap sequence keeps every value in memory,
    /// [`BYTES_PER_HEAP`] a heap; the other jobs' tables are bounded by their entries.
    pub fn check_memory(&self, bytes: u64) -> Result<(), InvalidArgument> {
        let Job::Chain(Chain::HeapSequence { up_to, .. }) = self else { return Ok(()) };
        let heaps = bytes / BYTES_PER_HEAP;
        if up_to.saturating_add(1) > heaps {
            return Err(InvalidArgument::field(
                "heap_sequence.up_to",
                format!(
                    "is {up_to}; a job keeps every value in memory, {BYTES_PER_HEAP} bytes a heap, within its share of \
                     --memory-limit ({bytes} bytes: --table-entries × {TABLE_ENTRY_BYTES}), so it goes up to {} here",
                    heaps.saturating_sub(1)
                ),
            ));
        }
        Ok(())
    }

    /// Row `index` of the job's table as the memo already knows it, without a search: a family
    /// item's board whose components the memo holds, or a run of a heap sequence's values (for a
    /// row the table lost, or that failed its check). `None` for a job without a table, or when the
    /// memo does not know it.
    pub fn row_from_memo(&self, index: u64, memo: &dyn crate::games::Memo) -> Option<proto::ExploreRow> {
        match self {
            Job::Solve(_) | Job::BestMove(_) => None,
            Job::Family(family) => {
                let item = family.items().into_iter().nth(usize::try_from(index).ok()?)?;
                let (value, _) = item.position().value_without_search(&|game, key| memo.get(game, key))?;
                Some(item.row(value, true))
            }
            Job::Chain(Chain::HeapSequence { rules, up_to }) => {
                let sequence = heap::known_values(rules, memo)?;
                let heap = index.checked_mul(VALUES_PER_ROW)?;
                let end = heap.checked_add(VALUES_PER_ROW)?.min(up_to.saturating_add(1)).min(sequence.computed());
                (heap < end).then(|| proto::ExploreRow {
                    heap,
                    values: sequence.computed_values(heap as usize..end as usize),
                    ..Default::default()
                })
            }
        }
    }
}

/// The bytes a heap sequence's value takes (2 while the values fit 16 bits; past that a job stops
/// when its values outgrow its share, [`ChainState::outgrew`]).
pub const BYTES_PER_HEAP: u64 = 2;

/// A family of boards of a placement game.
#[derive(Clone, Debug)]
pub enum Family {
    /// Every full board with rows and columns in these ranges.
    FullBoards {
        /// The fewest and most rows.
        rows: (usize, usize),
        /// The fewest and most columns.
        columns: (usize, usize),
        /// The game.
        game: BoardGame,
    },
    /// Every board obtained from `board` by blocking up to `max_blocked` of its free cells.
    SubBoards {
        /// The original board's cells (boxed: a board is half a kilobyte).
        board: Box<Board>,
        /// The most cells to block.
        max_blocked: usize,
        /// The game.
        game: BoardGame,
    },
}

/// The placement game of a family (`BOARD_GAME_UNSPECIFIED` is the 2×2 game).
pub type BoardGame = proto::BoardGame;

/// The position of the board `rows` in the placement game `game`.
fn board_position(game: BoardGame, rows: &[String]) -> Result<Position, crate::games::placement::BoardError> {
    Ok(match game {
        BoardGame::Unspecified | BoardGame::Tetris => Position::from(tetris::Board::new(rows)?),
        BoardGame::Cram => Position::from(cram::Board::new(rows)?),
    })
}

/// One board of a family, as it appears in the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// The board's rows, `0` free and `1` blocked.
    pub rows: Vec<String>,
    /// Cells blocked beyond the original board.
    pub blocked: u32,
    /// How many boards of the family this item stands for (its symmetric images).
    pub count: u64,
    /// Whether the table shows the board itself (`sub_boards`) or only its size (`full_boards`).
    pub show_board: bool,
    /// The game.
    pub game: BoardGame,
}

impl Item {
    /// The position of this item (valid by construction).
    pub fn position(&self) -> Position {
        board_position(self.game, &self.rows).expect("family boards are valid by construction")
    }

    /// The item's row of the table, with its value and whether the memo had it.
    pub fn row(&self, value: SumValue, cached: bool) -> proto::ExploreRow {
        proto::ExploreRow {
            rows: self.rows.len() as u32,
            columns: self.rows.first().map_or(0, String::len) as u32,
            board: if self.show_board { self.rows.clone() } else { Vec::new() },
            blocked: self.blocked,
            count: self.count,
            outcome: wire::outcome_to_proto(value) as i32,
            grundy: value.nimber(),
            cached,
            ..Default::default()
        }
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

/// The most seconds of a `google.protobuf.Duration` (about 10 000 years), the range its definition gives.
pub const MAX_DURATION_SECONDS: i64 = 315_576_000_000;

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
    Ok(match job {
        ProtoJob::Solve(solve) => Job::Solve(divided(
            wire::position_from_proto(solve.position).map_err(|error| in_position("solve", error))?,
        )?),
        ProtoJob::BestMove(best) => Job::BestMove(divided(
            wire::position_from_proto(best.position).map_err(|error| in_position("best_move", error))?,
        )?),
        ProtoJob::FullBoards(full) => {
            let rows = side_range("full_boards", "rows", full.min_rows, full.max_rows)?;
            let columns = side_range("full_boards", "columns", full.min_columns, full.max_columns)?;
            Job::Family(Family::FullBoards { rows, columns, game: board_game("full_boards", full.game)? })
        }
        ProtoJob::SubBoards(sub) => {
            let rows = sub.board.map(|board| board.rows).unwrap_or_default();
            let board = Board::new(&rows).map_err(|error| InvalidArgument::setup("sub_boards.board", &error))?;
            let free = free_cells(&board).len();
            let max_blocked = (sub.max_blocked as usize).min(free);
            let family = family_size(free, max_blocked);
            if family.is_none_or(|family| family > MAX_SUB_BOARDS) {
                return Err(InvalidArgument::field(
                    "sub_boards",
                    format!(
                        "has {} boards (blocking up to {} of {free} free cells); the limit is {MAX_SUB_BOARDS}",
                        family.map_or("more than 2^64".to_string(), |family| family.to_string()),
                        sub.max_blocked
                    ),
                ));
            }
            let game = board_game("sub_boards", sub.game)?;
            Job::Family(Family::SubBoards { board: Box::new(board), max_blocked, game })
        }
        ProtoJob::HeapSequence(sequence) => heap_sequence(sequence)?,
    })
}

/// The game of a family's request, `{family}.game`.
fn board_game(family: &str, game: i32) -> Result<BoardGame, InvalidArgument> {
    BoardGame::try_from(game).map_err(|_| {
        InvalidArgument::field(
            format!("{family}.game"),
            format!("is {game}; expected BOARD_GAME_TETRIS (1), BOARD_GAME_CRAM (2) or unset (the 2×2 game)"),
        )
    })
}

/// The largest `up_to` of a `heap_sequence` job: 2^32 heaps. The job keeps every value in memory
/// and in the job store, a few bytes a heap (several GiB of each at the limit); the mex of a heap
/// of n costs about n/2 lookups for a code that splits, so larger runs are out of reach anyway.
pub const MAX_UP_TO: u64 = 1 << 32;

/// How many heaps one row of a heap sequence's table holds: one step's worth (`HEAPS_PER_STEP`),
/// so that saving the rows costs little next to computing them (with rows of 64 values, sled's
/// inserts took as long as the values of 0.106); at most 5 bytes a value, 20 KiB a row, and pages
/// are bounded in bytes.
pub const VALUES_PER_ROW: u64 = HEAPS_PER_STEP;

/// How many heaps one item of a heap sequence is (its progress counts these).
pub const HEAPS_PER_ITEM: u64 = 65_536;

/// How many heaps one step computes between two looks at the progress and the save ([`ChainState::step`]).
const HEAPS_PER_STEP: u64 = 4096;

/// A validated `heap_sequence` request: the rules by the same constructors as a heap position's, so
/// a bad code is the same INVALID_ARGUMENT, under `heap_sequence.`.
fn heap_sequence(request: proto::HeapSequence) -> Result<Job, InvalidArgument> {
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
    Ok(Job::Chain(Chain::HeapSequence { rules, up_to }))
}

/// The most rows (and columns) of the boards of a `full_boards` family: every board up to
/// 16×16 is within the board's cell limit ([`MAX_CELLS`](crate::games::tetris::MAX_CELLS)).
pub const MAX_SIDE: usize = 16;

/// The range `min..=max` of one side (a minimum of 0 means 1), each at most [`MAX_SIDE`].
fn side_range(family: &str, side: &str, min: u32, max: u32) -> Result<(usize, usize), InvalidArgument> {
    let (min, max) = (min.max(1) as usize, max as usize);
    if max == 0 {
        return Err(InvalidArgument::field(format!("{family}.max_{side}"), format!("is required (1 to {MAX_SIDE})")));
    }
    if max > MAX_SIDE {
        return Err(InvalidArgument::field(
            format!("{family}.max_{side}"),
            format!("is {max}; the limit is {MAX_SIDE}"),
        ));
    }
    if min > max {
        let problem = format!("({min}) exceeds {family}.max_{side} ({max})");
        return Err(InvalidArgument::field(format!("{family}.min_{side}"), problem));
    }
    Ok((min, max))
}

/// How many ways there are to block up to `max_blocked` of `free` cells: the sum of the binomials
/// C(free, k) for k ≤ max_blocked, exact while it fits 64 bits (`None` past that).
fn family_size(free: usize, max_blocked: usize) -> Option<u64> {
    let (mut total, mut ways) = (0u128, 1u128);
    for k in 0..=max_blocked.min(free) {
        total = total.checked_add(ways)?;
        // C(free, k + 1) = C(free, k) · (free − k) / (k + 1), exact at every step.
        ways = ways.checked_mul((free - k) as u128)? / (k as u128 + 1);
    }
    u64::try_from(total).ok()
}

/// The free cells of `board`, 0-based `(row, column)`, row by row.
fn free_cells(board: &Board) -> Vec<(usize, usize)> {
    (0..board.height())
        .flat_map(|r| (0..board.width()).map(move |c| (r, c)))
        .filter(|&(r, c)| board.is_free(r + 1, c + 1))
        .collect()
}

impl Family {
    /// The family's boards, in the table's order: always the same for the same family.
    pub fn items(&self) -> Vec<Item> {
        match self {
            Family::FullBoards { rows, columns, game } => (rows.0..=rows.1)
                .flat_map(|height| (columns.0..=columns.1).map(move |width| (height, width)))
                .map(|(height, width)| Item {
                    rows: vec!["0".repeat(width); height],
                    blocked: 0,
                    count: 1,
                    show_board: false,
                    game: *game,
                })
                .collect(),
            Family::SubBoards { board, max_blocked, game } => sub_boards(board, *max_blocked, *game),
        }
    }
}

/// A family computed in order, where each item needs the state every earlier item left: the values
/// of a heap game, where a heap's value depends on every smaller heap's. The runner saves the rows
/// in the job store as it goes, and a resumed job rebuilds its state from their values
/// ([`Chain::start`]), recomputing nothing it saved; the state may end the job before its last item
/// ([`ChainState::is_done`]).
#[derive(Clone, Debug)]
pub enum Chain {
    /// The values G(0) … G(up_to) of a heap game, ending early once a period is proven.
    HeapSequence {
        /// The rules.
        rules: Rules,
        /// The largest heap.
        up_to: u64,
    },
}

impl Chain {
    /// The state to go on from: the one the rows a run saved (`saved`, from the first) hold, as far
    /// as they follow on from each other; the start with none.
    pub fn start(&self, saved: &[proto::ExploreRow]) -> ChainState {
        let Chain::HeapSequence { rules, up_to } = self;
        let mut values = Vec::new();
        for row in saved {
            if row.heap != values.len() as u64 || row.values.len() as u64 > VALUES_PER_ROW {
                break;
            }
            values.extend_from_slice(&row.values);
            // A short row is the last one saved, written while it filled.
            if (row.values.len() as u64) < VALUES_PER_ROW {
                break;
            }
        }
        let sequence = Sequence::from_values(rules.clone(), &values).unwrap_or_else(|| Sequence::new(rules.clone()));
        let computed_at_start = sequence.computed();
        ChainState { sequence: Arc::new(sequence), up_to: *up_to, started: Instant::now(), computed_at_start }
    }
}

/// The state a [`Chain`] carries from item to item: the values of a heap sequence so far.
pub struct ChainState {
    /// Shared once remembered ([`ChainState::remember`]); a step copies it only if it is.
    sequence: Arc<Sequence>,
    up_to: u64,
    /// When this run started, and how many heaps were computed then (for the values per second).
    started: Instant,
    computed_at_start: u64,
}

impl ChainState {
    /// How many items the chain has: runs of [`HEAPS_PER_ITEM`] heaps up to `up_to`.
    pub fn items_total(&self) -> u64 {
        (self.up_to + 1).div_ceil(HEAPS_PER_ITEM)
    }

    /// How many items are done: every one once the state is done, else the whole runs computed.
    pub fn items_done(&self) -> u64 {
        if self.is_done() {
            return self.items_total().min(self.sequence.computed().div_ceil(HEAPS_PER_ITEM));
        }
        self.sequence.computed() / HEAPS_PER_ITEM
    }

    /// Whether nothing is left to compute: every heap up to `up_to` is, or a period is proven.
    pub fn is_done(&self) -> bool {
        self.sequence.period().is_some() || self.sequence.computed() > self.up_to
    }

    /// Computes the next few thousand heaps (up to the next multiple of 4096);
    /// keeps what it computed when `budget` ends.
    pub fn step(&mut self, budget: &Budget) -> Result<(), Interrupted> {
        let computed = self.sequence.computed();
        let next = (computed / HEAPS_PER_STEP + 1) * HEAPS_PER_STEP;
        Arc::make_mut(&mut self.sequence).extend_to(next.min(self.up_to + 1), budget)
    }

    /// Why the state outgrew `bytes` (a job's share of `--memory-limit`), if it did: values past
    /// 16 bits take twice the bytes [`Job::check_memory`] counted on, and rare heaps take some.
    pub fn outgrew(&self, bytes: u64) -> Option<String> {
        let held = self.sequence.bytes();
        (held > bytes).then(|| {
            format!(
                "heap_sequence.up_to is {}; at heap {} the values and the rare heaps take {held} bytes, past a \
                 job's share of --memory-limit ({bytes} bytes: --table-entries × {TABLE_ENTRY_BYTES})",
                self.up_to,
                self.sequence.computed()
            )
        })
    }

    /// How many rows the table of the values computed has ([`VALUES_PER_ROW`] to a row).
    pub fn rows(&self) -> u64 {
        self.sequence.computed().div_ceil(VALUES_PER_ROW)
    }

    /// How many rows are complete: they hold [`VALUES_PER_ROW`] values, and never change.
    pub fn complete_rows(&self) -> u64 {
        self.sequence.computed() / VALUES_PER_ROW
    }

    /// Row `index` of the table (below [`ChainState::rows`]).
    pub fn row(&self, index: u64) -> proto::ExploreRow {
        let heap = index * VALUES_PER_ROW;
        let end = (heap + VALUES_PER_ROW).min(self.sequence.computed());
        let values = self.sequence.computed_values(heap as usize..end as usize);
        proto::ExploreRow { heap, values, ..Default::default() }
    }

    /// Keeps the values computed so far where solves find them (see [`heap::remember`]).
    pub fn remember(&self, memo: &dyn crate::games::Memo) {
        heap::remember(&self.sequence, memo);
    }

    /// What the values so far show, for the job's progress.
    pub fn progress(&self) -> proto::explore_progress::Family {
        let computed = self.sequence.computed();
        let seconds = self.started.elapsed().as_secs_f64();
        let values_per_second =
            if seconds > 0.0 { computed.saturating_sub(self.computed_at_start) as f64 / seconds } else { 0.0 };
        proto::explore_progress::Family::HeapSequence(proto::HeapSequenceProgress {
            heaps_computed: computed,
            values_per_second,
            largest_value: self.sequence.largest_value(),
            rare_heaps: self.sequence.rare_heaps(),
            candidate_period: self.sequence.candidate_period().map(proto::HeapPeriod::from),
        })
    }

    /// The job's answer (once [`ChainState::is_done`]).
    pub fn answer(&self) -> Answer {
        let sequence = &self.sequence;
        Answer::HeapSequence(proto::HeapSequenceResult {
            period: sequence.period().map(proto::HeapPeriod::from),
            up_to: self.up_to,
            heaps_computed: sequence.computed(),
            largest_value: sequence.largest_value(),
            frequencies: sequence.frequencies(),
            common_values: common_values(sequence),
            rare_heaps: sequence.rare_heaps(),
        })
    }
}

/// The sequence's common values, by class of splits (those with none are left out).
fn common_values(sequence: &Sequence) -> Vec<proto::CommonValues> {
    let classes = sequence.common_values().into_iter().zip(0u32..);
    let on = |common: &[(u64, u8)], parity: u8| common.iter().filter(|c| c.1 == parity).map(|c| c.0).collect();
    classes
        .filter(|(common, _)| !common.is_empty())
        .map(|(common, take_parity)| proto::CommonValues {
            take_parity,
            on_even_heaps: on(&common, 0),
            on_odd_heaps: on(&common, 1),
        })
        .collect()
}

/// A board as bit rows: bit `c` of `cells[r]` is set when the cell is free.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Bits {
    height: usize,
    width: usize,
    cells: [u64; 64],
}

impl Bits {
    fn of(board: &Board) -> Self {
        let mut cells = [0; 64];
        for (r, row) in cells.iter_mut().enumerate().take(board.height()) {
            *row = (0..board.width()).filter(|&c| board.is_free(r + 1, c + 1)).fold(0, |bits, c| bits | 1 << c);
        }
        Self { height: board.height(), width: board.width(), cells }
    }

    fn mirrored_columns(mut self) -> Self {
        for row in &mut self.cells[..self.height] {
            *row = row.reverse_bits() >> (64 - self.width);
        }
        self
    }

    fn mirrored_rows(mut self) -> Self {
        self.cells[..self.height].reverse();
        self
    }

    fn transposed(&self) -> Self {
        let mut cells = [0; 64];
        for (c, column) in cells.iter_mut().enumerate().take(self.width) {
            *column = (0..self.height).filter(|&r| self.cells[r] >> c & 1 == 1).fold(0, |bits, r| bits | 1 << r);
        }
        Self { height: self.width, width: self.height, cells }
    }

    /// The least of the board's images under the symmetries of its rectangle (8 for a square, 4
    /// otherwise), packed row-major into 256 bits: equal exactly for symmetric boards.
    fn canonical(&self) -> [u64; 4] {
        let mut best = self.packed();
        let mut consider = |image: Bits| best = best.min(image.packed());
        let bases = if self.height == self.width { vec![*self, self.transposed()] } else { vec![*self] };
        for base in bases {
            consider(base);
            consider(base.mirrored_columns());
            consider(base.mirrored_rows());
            consider(base.mirrored_columns().mirrored_rows());
        }
        best
    }

    fn packed(&self) -> [u64; 4] {
        let mut packed = [0u64; 4];
        let mut at = 0;
        for row in &self.cells[..self.height] {
            for c in 0..self.width {
                packed[at / 64] |= (row >> c & 1) << (at % 64);
                at += 1;
            }
        }
        packed
    }

    fn rows(&self) -> Vec<String> {
        self.cells[..self.height]
            .iter()
            .map(|row| (0..self.width).map(|c| if row >> c & 1 == 1 { '0' } else { '1' }).collect())
            .collect()
    }
}

/// Every board obtained by blocking up to `max_blocked` free cells of `board`: by number of cells
/// blocked, then by the blocked cells in row-major lexicographic order; a board symmetric to an
/// earlier one adds to the earlier one's count instead.
fn sub_boards(board: &Board, max_blocked: usize, game: BoardGame) -> Vec<Item> {
    let free = free_cells(board);
    let original = Bits::of(board);
    let mut index_of: HashMap<[u64; 4], usize> = HashMap::new();
    let mut items: Vec<Item> = Vec::new();
    for blocked in 0..=max_blocked.min(free.len()) {
        let mut chosen: Vec<usize> = (0..blocked).collect();
        loop {
            let mut bits = original;
            for &cell in &chosen {
                let (r, c) = free[cell];
                bits.cells[r] &= !(1 << c);
            }
            match index_of.entry(bits.canonical()) {
                std::collections::hash_map::Entry::Occupied(entry) => items[*entry.get()].count += 1,
                std::collections::hash_map::Entry::Vacant(entry) => {
                    entry.insert(items.len());
                    items.push(Item { rows: bits.rows(), blocked: blocked as u32, count: 1, show_board: true, game });
                }
            }
            if !next_combination(&mut chosen, free.len()) {
                break;
            }
        }
    }
    items
}

/// Advances `chosen` (increasing indices below `n`) to the next combination in lexicographic order;
/// false after the last one.
fn next_combination(chosen: &mut [usize], n: usize) -> bool {
    let k = chosen.len();
    let Some(i) = (0..k).rev().find(|&i| chosen[i] < n - k + i) else {
        return false;
    };
    chosen[i] += 1;
    for j in i + 1..k {
        chosen[j] = chosen[j - 1] + 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(rows: &[&str]) -> Board {
        Board::new(&rows.iter().map(|row| row.to_string()).collect::<Vec<_>>()).unwrap()
    }

    /// A heap sequence's values must fit a job's share of the memory: refused at once past 2 bytes
    /// a heap, and stopped once values past 16 bits (4 bytes a heap) outgrow it.
    #[test]
    fn heap_sequences_are_bounded_by_a_jobs_share_of_the_memory() {
        let job = |up_to| Job::Chain(Chain::HeapSequence { rules: Rules::code("0.77").unwrap(), up_to });
        assert!(job(999).check_memory(2000).is_ok(), "1000 heaps in 2000 bytes");
        let refused = job(1000).check_memory(2000).unwrap_err();
        assert_eq!(refused.field, "heap_sequence.up_to");
        assert!(
            refused.message.contains("--memory-limit (2000 bytes") && refused.message.contains("up to 999"),
            "{refused:?}"
        );

        let chain = Chain::HeapSequence { rules: Rules::code("0.77").unwrap(), up_to: 100_000 };
        let wide = proto::ExploreRow { heap: 0, values: vec![0, 70_000, 1, 2], ..Default::default() };
        let state = chain.start(&[wide]);
        let held = state.sequence.bytes();
        assert!(held >= 16, "4 values of 4 bytes, and the rare heaps: {held}");
        assert_eq!(state.outgrew(held), None);
        let outgrown = state.outgrew(held - 1).expect("outgrown by a byte");
        let share = format!("--memory-limit ({} bytes", held - 1);
        assert!(outgrown.contains(&format!("take {held} bytes")) && outgrown.contains(&share), "{outgrown}");
    }

    #[test]
    fn family_sizes_count_every_choice_of_blocked_cells() {
        assert_eq!(family_size(4, 0), Some(1));
        assert_eq!(family_size(4, 2), Some(1 + 4 + 6));
        assert_eq!(family_size(4, 4), Some(16));
        // The 16×16 board with up to 3 blocked: 1 + 256 + 32 640 + 2 763 520 boards.
        assert_eq!(family_size(256, 3), Some(2_796_417));
        assert_eq!(family_size(64, 63), Some(u64::MAX), "2^64 − 1 boards");
        assert_eq!(family_size(64, 64), None, "2^64 boards");
        assert_eq!(family_size(65, 65), None, "2^65 boards");
        assert_eq!(family_size(256, 128), None);
    }

    #[test]
    fn sub_boards_of_a_square_are_deduplicated_by_its_eight_symmetries() {
        let items = sub_boards(&board(&["000", "000", "000"]), 1, BoardGame::Tetris);
        // The full board, then one blocked cell: a corner (4), an edge middle (4), the centre (1).
        let counts: Vec<(u32, u64)> = items.iter().map(|item| (item.blocked, item.count)).collect();
        assert_eq!(counts, vec![(0, 1), (1, 4), (1, 4), (1, 1)]);
        assert_eq!(Some(items.iter().map(|item| item.count).sum::<u64>()), family_size(9, 1));
    }

    #[test]
    fn sub_boards_of_a_rectangle_use_its_four_symmetries() {
        let items = sub_boards(&board(&["000", "000"]), 1, BoardGame::Cram);
        // One blocked cell of a 2×3 board: a corner (4) or a middle of a long side (2).
        let counts: Vec<u64> = items.iter().map(|item| item.count).collect();
        assert_eq!(counts, vec![1, 4, 2]);
    }

    #[test]
    fn every_sub_board_count_adds_up_to_the_family() {
        let original = board(&["0010", "0000", "0100"]);
        let items = sub_boards(&original, 3, BoardGame::Unspecified);
        assert_eq!(Some(items.iter().map(|item| item.count).sum::<u64>()), family_size(10, 3));
        assert!(items.iter().all(|item| item.rows.len() == 3));
    }

    #[test]
    fn requests_over_a_limit_name_the_field_and_the_limit() {
        let full = |max_rows| proto::ExploreRequest {
            job: Some(ProtoJob::FullBoards(proto::FullBoards { max_rows, max_columns: 3, ..Default::default() })),
            ..Default::default()
        };
        let error = job_from_request(&full(17)).unwrap_err().message;
        assert!(error.contains("full_boards.max_rows") && error.contains("16"), "{error}");
        assert!(job_from_request(&full(16)).is_ok());
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
