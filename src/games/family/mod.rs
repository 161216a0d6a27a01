//! What a job tabulates: many positions, one row of the job's table each. Two kinds, each a small
//! trait, so that the jobs runner names no game:
//! - a [`Family`] of independent positions (the boards of a placement game,
//!   [`BoardFamily`]), whose items any replica may compute, in any
//!   order;
//! - a [`Chain`], computed in order, each item from the state the earlier ones left (the values
//!   of a heap game, [`HeapSequence`]), whose rows are its checkpoint.
//!
//! This module binds each game's family to its trait (the games do not import it, so that the
//! traits may name the games' types without a circle).

mod heap_sequence;

pub use self::heap_sequence::{CommonValues, HeapSequence, SequenceProgress, SequenceSummary};
pub use self::heap_sequence::{BYTES_PER_HEAP, HEAPS_PER_ITEM, MAX_UP_TO, VALUES_PER_ROW};

use std::fmt::Debug;
use std::sync::Arc;

use crate::games::placement::{Board, BoardFamily, FamilyBoard, Piece};
use crate::games::sum::SumValue;
use crate::games::{Budget, Interrupted, Memo, Position};

/// What a job computes, validated.
#[derive(Clone, Debug)]
pub enum Job {
    /// The value of one position.
    Solve(Box<Position>),
    /// The best move of one position.
    BestMove(Box<Position>),
    /// Who wins one position in misère play, and a winning move (`best_move`: the answer is a
    /// BestMove's).
    Misere {
        /// The position.
        position: Box<Position>,
        /// Whether the job answers as BestMove does (else as Solve).
        best_move: bool,
    },
    /// The value of every position of a family.
    Family(Arc<dyn Family>),
    /// A family computed in order, each item from the state the earlier ones left.
    Chain(Arc<dyn Chain>),
}

impl Job {
    /// Whether the job's state fits in `bytes`, a job's share of `--memory-limit` (a chain keeps
    /// its state in memory; the other jobs' tables are bounded by their entries).
    pub fn check_memory(&self, bytes: u64) -> Result<(), OverMemory> {
        match self {
            Job::Chain(chain) => chain.check_memory(bytes),
            Job::Solve(_) | Job::BestMove(_) | Job::Misere { .. } | Job::Family(_) => Ok(()),
        }
    }

    /// Row `index` of the job's table as the memo already knows it, without a search: a family
    /// item whose components the memo holds, or a chain's row (for a row the table lost, or that
    /// failed its check). `None` for a job without a table, or when the memo does not know it.
    pub fn row_from_memo(&self, index: u64, memo: &dyn Memo) -> Option<Row> {
        match self {
            Job::Solve(_) | Job::BestMove(_) | Job::Misere { .. } => None,
            Job::Family(family) => {
                let item = family.items().into_iter().nth(usize::try_from(index).ok()?)?;
                let (value, _) = item.position().value_without_search(&|game, key| memo.get(game, key))?;
                Some(Row::Item(item.row(value, true)))
            }
            Job::Chain(chain) => chain.row_from_memo(index, memo).map(Row::Values),
        }
    }
}

/// Why a job's state would not fit in its share of `--memory-limit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverMemory {
    /// The request's field at fault (`heap_sequence.up_to`).
    pub field: &'static str,
    /// What is wrong with it, after its name, with the limit.
    pub problem: String,
}

/// A row of a job's table.
#[derive(Clone, Debug, PartialEq)]
pub enum Row {
    /// A family's.
    Item(ItemRow),
    /// A chain's.
    Values(ValuesRow),
}

/// A family of positions, each independent of the others.
pub trait Family: Debug + Send + Sync {
    /// The items, in the table's order: always the same for the same family, so that a resumed
    /// job finds its finished items by index.
    fn items(&self) -> Vec<Box<dyn Item>>;
}

/// One item of a [`Family`].
pub trait Item: Send + Sync {
    /// Its position.
    fn position(&self) -> Position;
    /// Its row of the table, with its value and whether the memo had it.
    fn row(&self, value: SumValue, cached: bool) -> ItemRow;
}

/// A row of a [`Family`]'s table: a board, its value, and how many boards it stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct ItemRow {
    /// The board's rows and columns.
    pub size: (u32, u32),
    /// The board (`0` free, `1` blocked), when the family shows its boards.
    pub board: Vec<String>,
    /// Cells blocked beyond the family's original board.
    pub blocked: u32,
    /// How many boards of the family this one stands for.
    pub count: u64,
    /// The value.
    pub value: SumValue,
    /// Whether the memo had it.
    pub cached: bool,
}

impl<P: Piece> Family for BoardFamily<P>
where
    Board<P>: Into<Position>,
{
    fn items(&self) -> Vec<Box<dyn Item>> {
        self.boards().into_iter().map(|board| Box::new(board) as Box<dyn Item>).collect()
    }
}

impl<P: Piece> Item for FamilyBoard<P>
where
    Board<P>: Into<Position>,
{
    fn position(&self) -> Position {
        self.board.clone().into()
    }

    fn row(&self, value: SumValue, cached: bool) -> ItemRow {
        ItemRow {
            size: (self.board.height() as u32, self.board.width() as u32),
            board: if self.shown { self.board.rows() } else { Vec::new() },
            blocked: self.blocked,
            count: self.count,
            value,
            cached,
        }
    }
}

/// A family computed in order, whose items carry a state from one to the next. The runner saves
/// the rows as it goes, and a resumed job rebuilds the state from their values
/// ([`Chain::start`]), recomputing nothing it saved; the state may end the job before its last
/// item ([`ChainState::is_done`]).
pub trait Chain: Debug + Send + Sync {
    /// Whether the chain's state fits in `bytes`, a job's share of `--memory-limit`.
    fn check_memory(&self, bytes: u64) -> Result<(), OverMemory>;
    /// The state to go on from: the one the rows a run saved (`saved`, from the first) hold, as
    /// far as they follow on from each other; the start with none.
    fn start(&self, saved: &[ValuesRow]) -> Box<dyn ChainState>;
    /// Row `index` as the memo knows it without computing (for a row the table lost, or that
    /// failed its check); `None` when it does not.
    fn row_from_memo(&self, index: u64, memo: &dyn Memo) -> Option<ValuesRow>;
}

/// A row of a [`Chain`]'s table: the values of a run of heaps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValuesRow {
    /// The first heap.
    pub heap: u64,
    /// G(heap), G(heap + 1), ….
    pub values: Vec<u64>,
}

/// The state a [`Chain`] carries from item to item.
pub trait ChainState: Send {
    /// How many items the chain has.
    fn items_total(&self) -> u64;
    /// How many items are done (every one once the state [is done](ChainState::is_done)).
    fn items_done(&self) -> u64;
    /// Whether nothing is left to compute.
    fn is_done(&self) -> bool;
    /// Computes the next few thousand values; keeps what it computed when `budget` ends.
    fn step(&mut self, budget: &Budget) -> Result<(), Interrupted>;
    /// Why the state outgrew `bytes` (a job's share of `--memory-limit`), if it did.
    fn outgrew(&self, bytes: u64) -> Option<String>;
    /// How many rows the table of what is computed has.
    fn rows(&self) -> u64;
    /// How many rows are complete (they never change).
    fn complete_rows(&self) -> u64;
    /// Row `index` of the table (below [`ChainState::rows`]).
    fn row(&self, index: u64) -> ValuesRow;
    /// Keeps what was computed where solves find it.
    fn remember(&self, memo: &dyn Memo);
    /// What the state shows so far, for the job's progress.
    fn progress(&self) -> ChainProgress;
    /// The job's answer (once [`ChainState::is_done`]).
    fn answer(&self) -> ChainAnswer;
}

/// The progress of a [`Chain`], by kind.
#[derive(Clone, Debug, PartialEq)]
pub enum ChainProgress {
    /// A heap game's values.
    HeapSequence(SequenceProgress),
}

/// The answer of a [`Chain`], by kind.
#[derive(Clone, Debug, PartialEq)]
pub enum ChainAnswer {
    /// A heap game's values.
    HeapSequence(SequenceSummary),
}
