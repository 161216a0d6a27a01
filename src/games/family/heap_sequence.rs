//! The values G(0) … G(up_to) of a heap game as a [`Chain`]: each heap's value needs every smaller
//! heap's, so the values are computed in order, a step of a few thousand heaps at a time, and
//! saved as rows of [`VALUES_PER_ROW`] values; the chain ends early once a period is proven.

use std::sync::Arc;
use std::time::Instant;

use super::{Chain, ChainAnswer, ChainProgress, ChainState, OverMemory, ValuesRow};
use crate::games::heap::{self, rules::Rules, sequence::Period, sequence::Sequence};
use crate::games::{Budget, Interrupted, Memo};
use crate::limits::TABLE_ENTRY_BYTES;

/// The largest `up_to`: 2^32 heaps. The job keeps every value in memory and in the job store, a
/// few bytes a heap (several GiB of each at the limit); the mex of a heap of n costs about n/2
/// lookups for a code that splits, so larger runs are out of reach anyway.
pub const MAX_UP_TO: u64 = 1 << 32;

/// The bytes a value takes (2 while the values fit 16 bits; past that a job stops when its values
/// outgrow its share, [`ChainState::outgrew`]).
pub const BYTES_PER_HEAP: u64 = 2;

/// How many heaps one row of the table holds: one step's worth (4096 heaps), so that
/// saving the rows costs little next to computing them (with rows of 64 values, sled's inserts
/// took as long as the values of 0.106); at most 5 bytes a value, 20 KiB a row, and pages are
/// bounded in bytes.
pub const VALUES_PER_ROW: u64 = HEAPS_PER_STEP;

/// How many heaps one item is (the progress counts these).
pub const HEAPS_PER_ITEM: u64 = 65_536;

/// How many heaps one step computes between two looks at the progress and the save.
const HEAPS_PER_STEP: u64 = 4096;

/// The values of a heap game up to a heap, as a job computes them.
#[derive(Clone, Debug)]
pub struct HeapSequence {
    /// The rules.
    pub rules: Rules,
    /// The largest heap (1 to [`MAX_UP_TO`]).
    pub up_to: u64,
}

impl Chain for HeapSequence {
    /// A job keeps every value in memory, [`BYTES_PER_HEAP`] a heap.
    fn check_memory(&self, bytes: u64) -> Result<(), OverMemory> {
        let heaps = bytes / BYTES_PER_HEAP;
        if self.up_to.saturating_add(1) > heaps {
            return Err(OverMemory {
                field: "heap_sequence.up_to",
                problem: format!(
                    "is {}; a job keeps every value in memory, {BYTES_PER_HEAP} bytes a heap, within its share of \
                     --memory-limit ({bytes} bytes: --table-entries × {TABLE_ENTRY_BYTES}), so it goes up to {} here",
                    self.up_to,
                    heaps.saturating_sub(1)
                ),
            });
        }
        Ok(())
    }

    fn start(&self, saved: &[ValuesRow]) -> Box<dyn ChainState> {
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
        let rules = &self.rules;
        let sequence = Sequence::from_values(rules.clone(), &values).unwrap_or_else(|| Sequence::new(rules.clone()));
        let computed_at_start = sequence.computed();
        Box::new(SequenceRun {
            sequence: Arc::new(sequence),
            up_to: self.up_to,
            started: Instant::now(),
            computed_at_start,
        })
    }

    /// A run of the values the memo (or this process) holds.
    fn row_from_memo(&self, index: u64, memo: &dyn Memo) -> Option<ValuesRow> {
        let sequence = heap::known_values(&self.rules, memo)?;
        let heap = index.checked_mul(VALUES_PER_ROW)?;
        let end = heap.checked_add(VALUES_PER_ROW)?.min(self.up_to.saturating_add(1)).min(sequence.computed());
        (heap < end).then(|| ValuesRow { heap, values: sequence.computed_values(heap as usize..end as usize) })
    }
}

/// A heap sequence's state: its values so far.
struct SequenceRun {
    /// Shared once remembered ([`ChainState::remember`]); a step copies it only if it is.
    sequence: Arc<Sequence>,
    up_to: u64,
    /// When this run started, and how many heaps were computed then (for the values per second).
    started: Instant,
    computed_at_start: u64,
}

impl ChainState for SequenceRun {
    /// Runs of [`HEAPS_PER_ITEM`] heaps up to `up_to`.
    fn items_total(&self) -> u64 {
        (self.up_to + 1).div_ceil(HEAPS_PER_ITEM)
    }

    fn items_done(&self) -> u64 {
        if self.is_done() {
            return self.items_total().min(self.sequence.computed().div_ceil(HEAPS_PER_ITEM));
        }
        self.sequence.computed() / HEAPS_PER_ITEM
    }

    /// Every heap up to `up_to` is computed, or a period is proven.
    fn is_done(&self) -> bool {
        self.sequence.period().is_some() || self.sequence.computed() > self.up_to
    }

    /// Computes up to the next multiple of [`HEAPS_PER_STEP`].
    fn step(&mut self, budget: &Budget) -> Result<(), Interrupted> {
        let computed = self.sequence.computed();
        let next = (computed / HEAPS_PER_STEP + 1) * HEAPS_PER_STEP;
        Arc::make_mut(&mut self.sequence).extend_to(next.min(self.up_to + 1), budget)
    }

    /// Values past 16 bits take twice the bytes [`Chain::check_memory`] counted on, and rare heaps
    /// take some.
    fn outgrew(&self, bytes: u64) -> Option<String> {
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

    fn rows(&self) -> u64 {
        self.sequence.computed().div_ceil(VALUES_PER_ROW)
    }

    fn complete_rows(&self) -> u64 {
        self.sequence.computed() / VALUES_PER_ROW
    }

    fn row(&self, index: u64) -> ValuesRow {
        let heap = index * VALUES_PER_ROW;
        let end = (heap + VALUES_PER_ROW).min(self.sequence.computed());
        ValuesRow { heap, values: self.sequence.computed_values(heap as usize..end as usize) }
    }

    /// See [`heap::remember`].
    fn remember(&self, memo: &dyn Memo) {
        heap::remember(&self.sequence, memo);
    }

    fn progress(&self) -> ChainProgress {
        let computed = self.sequence.computed();
        let seconds = self.started.elapsed().as_secs_f64();
        let values_per_second =
            if seconds > 0.0 { computed.saturating_sub(self.computed_at_start) as f64 / seconds } else { 0.0 };
        ChainProgress::HeapSequence(SequenceProgress {
            heaps_computed: computed,
            values_per_second,
            largest_value: self.sequence.largest_value(),
            rare_heaps: self.sequence.rare_heaps(),
            candidate_period: self.sequence.candidate_period(),
        })
    }

    fn answer(&self) -> ChainAnswer {
        let sequence = &self.sequence;
        ChainAnswer::HeapSequence(SequenceSummary {
            period: sequence.period(),
            up_to: self.up_to,
            heaps_computed: sequence.computed(),
            largest_value: sequence.largest_value(),
            frequencies: sequence.frequencies(),
            common_values: common_values(sequence),
            rare_heaps: sequence.rare_heaps(),
        })
    }
}

/// What a heap sequence's values show so far.
#[derive(Clone, Debug, PartialEq)]
pub struct SequenceProgress {
    /// How many values are computed (G(0) … G(heaps_computed − 1)).
    pub heaps_computed: u64,
    /// Values computed per second in this run.
    pub values_per_second: f64,
    /// The largest value so far.
    pub largest_value: u64,
    /// How many heaps have a rare value.
    pub rare_heaps: u64,
    /// A period the values so far repeat with, not yet proven.
    pub candidate_period: Option<Period>,
}

/// What a finished heap sequence found.
#[derive(Clone, Debug, PartialEq)]
pub struct SequenceSummary {
    /// The proven period, if one was found.
    pub period: Option<Period>,
    /// The largest heap asked for.
    pub up_to: u64,
    /// How many values were computed.
    pub heaps_computed: u64,
    /// The largest value.
    pub largest_value: u64,
    /// How many heaps have each value (index = value).
    pub frequencies: Vec<u64>,
    /// The common values, by class of splits (those with none are left out).
    pub common_values: Vec<CommonValues>,
    /// How many heaps have a rare value.
    pub rare_heaps: u64,
}

/// The common values of one class of splits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommonValues {
    /// The class: the parity of the heap a move takes.
    pub take_parity: u32,
    /// The common values on even heaps.
    pub on_even_heaps: Vec<u64>,
    /// The common values on odd heaps.
    pub on_odd_heaps: Vec<u64>,
}

/// The sequence's common values, by class of splits (those with none are left out).
fn common_values(sequence: &Sequence) -> Vec<CommonValues> {
    let classes = sequence.common_values().into_iter().zip(0u32..);
    let on = |common: &[(u64, u8)], parity: u8| common.iter().filter(|c| c.1 == parity).map(|c| c.0).collect();
    classes
        .filter(|(common, _)| !common.is_empty())
        .map(|(common, take_parity)| CommonValues {
            take_parity,
            on_even_heaps: on(&common, 0),
            on_odd_heaps: on(&common, 1),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A heap sequence's values must fit a job's share of the memory: refused at once past 2 bytes
    /// a heap, and stopped once values past 16 bits (4 bytes a heap) outgrow it.
    #[test]
    fn heap_sequences_are_bounded_by_a_jobs_share_of_the_memory() {
        let job = |up_to| HeapSequence { rules: Rules::code("0.77").unwrap(), up_to };
        assert!(job(999).check_memory(2000).is_ok(), "1000 heaps in 2000 bytes");
        let refused = job(1000).check_memory(2000).unwrap_err();
        assert_eq!(refused.field, "heap_sequence.up_to");
        assert!(
            refused.problem.contains("--memory-limit (2000 bytes") && refused.problem.contains("up to 999"),
            "{refused:?}"
        );

        let wide = ValuesRow { heap: 0, values: vec![0, 70_000, 1, 2] };
        let state = job(100_000).start(&[wide]);
        let held = (1..1 << 20).find(|&bytes| state.outgrew(bytes).is_none()).expect("fits a megabyte");
        assert!(held >= 16, "4 values of 4 bytes, and the rare heaps: {held}");
        let outgrown = state.outgrew(held - 1).expect("outgrown by a byte");
        let share = format!("--memory-limit ({} bytes", held - 1);
        assert!(outgrown.contains(&format!("take {held} bytes")) && outgrown.contains(&share), "{outgrown}");
    }
}
