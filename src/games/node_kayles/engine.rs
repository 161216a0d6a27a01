//! The search: the value of a set of vertices of a graph, by components, each valued by rule or by
//! the mex of its options under its canonical key.

use std::collections::HashMap;

use super::canonical::{key, labelling_within, Labelling, MOST_TREE_NODES};
use super::parts::{components, value_by_rule};
use super::subsets::{SubsetRules, MOST_VERTICES};
use super::{first_vertices, Graph};
use crate::games::kernel::{self, Kernel};
use crate::games::{GameTag, Interrupted, Nimber, Registered, SearchContext};
use crate::limits::TABLE_ENTRY_BYTES;

/// Components of at least this many vertices are looked up in the persistent memo, and written
/// to it when their search was costly (smaller ones take less time to solve than to look up);
/// top-level components always are.
pub const MEMO_MIN_VERTICES: usize = 16;

/// A component of at least [`MEMO_MIN_VERTICES`] is written to the persistent memo once solved
/// if its search took at least this many option evaluations.
pub const MEMO_MIN_WORK: u64 = 64;

/// Search nodes (option evaluations and canonical-labelling tree nodes) between two budget checks.
const CHECK_INTERVAL: u64 = 4096;

/// The most canonical-labelling tree nodes [`value_without_search`] spends on a component: it runs
/// on the async runtime, so a component whose labelling needs more is left to a search.
const LOOKUP_TREE_NODES: u32 = 64;

/// The bytes the kernel's table starts with for a component (it grows as it fills).
const KERNEL_TABLE_START_BYTES: usize = 64 << 10;

/// The bytes a table entry costs besides its key.
const ENTRY_OVERHEAD: usize = 48;

/// What the solves through one context learnt: the values of components by canonical key (and of
/// the searched components of options by their key as labelled there: exact too, as a key stores
/// its labelled graph, and it spares labelling a component met again canonically), in a
/// table bounded in bytes (`context.table_limit` entries of [`TABLE_ENTRY_BYTES`], each entry
/// counted as its key plus [`ENTRY_OVERHEAD`]); when it is full it is emptied and starts again, so
/// the recent, most related, components are kept.
#[derive(Default)]
pub struct Learnt {
    values: HashMap<Vec<u8>, u8>,
    /// Bytes the table may still take.
    room: usize,
    /// The kernel's table of the last component searched on it, with that component's key: a
    /// search of the same component (a retry after a deadline) goes on from what it knew.
    kernel: Option<(Vec<u8>, kernel::Table)>,
}

/// How a connected, non-empty set of vertices is valued.
enum Kind {
    /// By a rule: a complete graph, a path or a cycle.
    Direct(u8),
    /// By search, under its canonical key, as the labelled graph the key stores.
    Searched {
        /// The key ([`key`]).
        key: Vec<u8>,
        /// The graph in its canonical labelling.
        rows: Vec<u128>,
    },
}

/// Whether a component's value goes to the persistent memo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Memoize {
    /// Always: a component of the position itself.
    Always,
    /// When it is large and its search was costly (see [`MEMO_MIN_VERTICES`], [`MEMO_MIN_WORK`]).
    WhenCostly,
}

/// The subgraph of `rows` induced by `part`, its vertices numbered `0..` in their order.
fn induced(rows: &[u128], part: u128) -> Vec<u128> {
    let mut number = [0u8; 128];
    let mut vertices = Vec::with_capacity(part.count_ones() as usize);
    let mut rest = part;
    while rest != 0 {
        let v = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        number[v] = vertices.len() as u8;
        vertices.push(v);
    }
    vertices
        .iter()
        .map(|&v| {
            let (mut row, mut rest) = (0u128, rows[v] & part);
            while rest != 0 {
                row |= 1 << number[rest.trailing_zeros() as usize];
                rest &= rest - 1;
            }
            row
        })
        .collect()
}

/// How the connected graph `rows` is valued (by [`value_by_rule`], else by search), labelled
/// within `most_nodes` tree nodes, and the labelling (none for a rule).
fn kind_of(rows: Vec<u128>, most_nodes: u32) -> (Kind, Option<Labelling>) {
    let k = rows.len();
    let degrees = rows.iter().map(|row| row.count_ones() as usize);
    let (edges, largest) = degrees.fold((0, 0), |(sum, most), degree| (sum + degree, most.max(degree)));
    if let Some(value) = value_by_rule(k, edges / 2, largest) {
        return (Kind::Direct(value), None);
    }
    let mut labelling = labelling_within(&rows, most_nodes);
    let rows = std::mem::take(&mut labelling.rows);
    (Kind::Searched { key: key(&rows), rows }, Some(labelling))
}

/// A value read from the persistent memo for a component of `size` vertices, if it can be one: a
/// component's value is at most its number of vertices (it has that many options), so anything
/// larger is damage and is not trusted.
fn trusted(value: u64, size: usize) -> Option<u8> {
    (value <= size as u64).then_some(value as u8)
}

/// The value of the set `set` of the graph `rows` if it needs no search: every component is valued
/// by rule or found by `lookup` (a probe of the memo under its key, as [`Engine::value_of_graph`]
/// stores them); `None` as soon as one would need a search, or more than [`LOOKUP_TREE_NODES`] to
/// be labelled canonically. Also how many values `lookup` supplied.
pub fn value_without_search(rows: &[u128], set: u128, lookup: &dyn Fn(&[u8]) -> Option<u64>) -> Option<(Nimber, u64)> {
    let (mut value, mut found) = (0, 0);
    for part in components(rows, set) {
        value ^= match kind_of(induced(rows, part), LOOKUP_TREE_NODES) {
            (Kind::Direct(value), _) => u64::from(value),
            (_, Some(labelling)) if !labelling.canonical => return None,
            (Kind::Searched { key, rows }, _) => {
                found += 1;
                u64::from(trusted(lookup(&key)?, rows.len())?)
            }
        };
    }
    Some((value, found))
}

/// One solve: the context (budget, statistics, memo) and what solves through it learnt.
///
/// A component's value is the mex of its options' values, an option being the component without
/// the closed neighbourhood of one vertex, valued as the XOR of its own components. A component of
/// k vertices has k options, so its value is at most k ≤ 128: values fit a byte.
pub struct Engine<'s, 'a> {
    context: &'s mut SearchContext<'a>,
    learnt: Learnt,
    /// Whether the persistent memo remembers anything (if not, it is not asked).
    memo_remembers: bool,
    nodes: u64,
}

impl<'s, 'a> Engine<'s, 'a> {
    /// An engine that knows what earlier solves through `context` learnt.
    pub fn new(context: &'s mut SearchContext<'a>) -> Self {
        let learnt = Graph::take_learnt(&mut context.learnt).unwrap_or_else(|| Learnt {
            values: HashMap::new(),
            room: context.table_limit.saturating_mul(TABLE_ENTRY_BYTES as usize),
            kernel: None,
        });
        let memo_remembers = context.memo.remembers();
        Engine { context, learnt, memo_remembers, nodes: 0 }
    }

    /// The value of the set `set` of the graph `rows`, whose components are the position's own:
    /// their values go to the persistent memo, and concurrent solves share them through its single
    /// flight (one computes a component, the others wait for its value).
    pub fn value_of_graph(&mut self, rows: &[u128], set: u128) -> Result<Nimber, Interrupted> {
        Ok(self.component_values(rows, set)?.1)
    }

    /// The components of the set `set` of the graph `rows` (as bits) with their values, and the
    /// total; valued as in [`Engine::value_of_graph`].
    pub fn component_values(&mut self, rows: &[u128], set: u128) -> Result<(Vec<(u128, u8)>, Nimber), Interrupted> {
        let memo = self.context.memo;
        let budget = self.context.budget.clone();
        let mut parts = Vec::new();
        let mut total = 0;
        for part in components(rows, set) {
            let kind = self.kind(induced(rows, part))?;
            let value = match &kind {
                Kind::Direct(value) => *value,
                Kind::Searched { key, rows } => {
                    self.context.stats.search.store_reads += 1;
                    let mut compute = || {
                        let before = self.nodes;
                        self.value(&kind, Memoize::Always).map(|value| (u64::from(value), self.nodes - before))
                    };
                    match memo.get_or_compute(GameTag::NodeKayles, key, &budget, &mut compute)? {
                        (stored, true) => match trusted(stored, rows.len()) {
                            Some(value) => {
                                self.context.stats.cache_hits += 1;
                                value
                            }
                            None => self.value(&kind, Memoize::Always)?,
                        },
                        (computed, false) => computed as u8,
                    }
                }
            };
            total ^= u64::from(value);
            parts.push((part, value));
        }
        Ok((parts, total))
    }

    /// The value of the set `set` of the graph `rows`: the XOR of its components' values.
    pub fn value_of_set(&mut self, rows: &[u128], set: u128) -> Result<Nimber, Interrupted> {
        let mut value = 0;
        for part in components(rows, set) {
            let part = induced(rows, part);
            // The component as labelled here: found again without labelling it canonically.
            let labelled = key(&part);
            if let Some(&known) = self.learnt.values.get(&labelled) {
                self.context.stats.cache_hits += 1;
                value ^= u64::from(known);
                continue;
            }
            let kind = self.kind(part)?;
            let known = self.value(&kind, Memoize::WhenCostly)?;
            if matches!(kind, Kind::Searched { .. }) {
                self.remember(&labelled, known);
            }
            value ^= u64::from(known);
        }
        Ok(value)
    }

    /// How a connected graph is valued ([`kind_of`]), counting the labelling's work.
    fn kind(&mut self, rows: Vec<u128>) -> Result<Kind, Interrupted> {
        let (kind, labelling) = kind_of(rows, MOST_TREE_NODES);
        self.count(labelling.map_or(0, |labelling| u64::from(labelling.nodes)))?;
        Ok(kind)
    }

    /// Counts `nodes` of work, checking the budget every [`CHECK_INTERVAL`].
    fn count(&mut self, nodes: u64) -> Result<(), Interrupted> {
        let before = self.nodes;
        self.nodes += nodes;
        if before / CHECK_INTERVAL != self.nodes / CHECK_INTERVAL {
            self.context.budget.check()?;
        }
        Ok(())
    }

    /// The value of a component.
    fn value(&mut self, kind: &Kind, memoize: Memoize) -> Result<u8, Interrupted> {
        let (key, rows) = match kind {
            Kind::Direct(value) => return Ok(*value),
            Kind::Searched { key, rows } => (key, rows),
        };
        let persistent = memoize == Memoize::Always || rows.len() >= MEMO_MIN_VERTICES;
        if let Some(value) = self.recall(key, rows.len(), persistent) {
            self.context.stats.cache_hits += 1;
            if memoize == Memoize::Always && self.memo_remembers {
                // Known from this solve: what it cost is not known here (the memo keeps the larger).
                self.context.memo.put(GameTag::NodeKayles, key, u64::from(value), 0);
            }
            return Ok(value);
        }
        let before = self.nodes;
        let value = if rows.len() <= MOST_VERTICES {
            self.on_kernel(key, rows)?
        } else {
            let all = first_vertices(rows.len());
            let mut seen = [false; 130];
            for (v, &row) in rows.iter().enumerate() {
                self.count(1)?;
                let option = self.value_of_set(rows, all & !(row | 1 << v))?;
                seen[option as usize] = true;
            }
            seen.iter().position(|&s| !s).expect("at most k option values") as u8
        };
        self.settled(key, rows.len(), value, self.nodes - before, memoize);
        Ok(value)
    }

    /// The value of a component of at most [`MOST_VERTICES`] vertices (`rows`, labelled
    /// canonically, under `key`), searched on the kernel with a table of its own (kept for a
    /// search of the same component, and of at most half this solve's table room). The costly
    /// components it settles on the way go to the persistent memo under their canonical keys; it
    /// reads none.
    fn on_kernel(&mut self, key: &[u8], rows: &[u128]) -> Result<u8, Interrupted> {
        let (memo, remembers, all) = (self.context.memo, self.memo_remembers, first_vertices(rows.len()) as u64);
        let write_costly = |set: u64, value: u8, work: u64| {
            let costly = set.count_ones() as usize >= MEMO_MIN_VERTICES && work >= MEMO_MIN_WORK;
            if remembers && costly && set != all {
                if let (Kind::Searched { key, .. }, _) = kind_of(induced(rows, u128::from(set)), MOST_TREE_NODES) {
                    memo.put(GameTag::NodeKayles, &key, u64::from(value), work);
                }
            }
        };
        let mut table = match self.learnt.kernel.take() {
            Some((searched, table)) if searched == key => table,
            _ => kernel::Table::with_bytes(KERNEL_TABLE_START_BYTES, self.learnt.room / 2),
        };
        let mut kernel = Kernel::new(SubsetRules { rows }, &mut table, &self.context.budget).on_settled(&write_costly);
        let value = kernel.value(all);
        let counts = kernel.counts;
        self.learnt.kernel = Some((key.to_vec(), table));
        self.nodes += counts.option_evaluations;
        // The component itself is counted once it is settled (see [`Engine::settled`]).
        self.context.stats.positions_computed += counts.settled.saturating_sub(1);
        self.context.stats.cache_hits += counts.table_hits;
        self.context.stats.search += counts;
        value
    }

    /// What this solve, or the persistent memo when `persistent`, knows of the component of `size`
    /// vertices under `key`.
    fn recall(&mut self, key: &[u8], size: usize, persistent: bool) -> Option<u8> {
        if let Some(&value) = self.learnt.values.get(key) {
            return Some(value);
        }
        if !(persistent && self.memo_remembers) {
            return None;
        }
        self.context.stats.search.store_reads += 1;
        let value = trusted(self.context.memo.get(GameTag::NodeKayles, key)?, size)?;
        self.remember(key, value);
        Some(value)
    }

    /// Records the value of a component found by a search of `work` nodes, here and, if it is
    /// worth it, in the persistent memo.
    fn settled(&mut self, key: &[u8], size: usize, value: u8, work: u64, memoize: Memoize) {
        self.context.stats.positions_computed += 1;
        self.remember(key, value);
        let costly = size >= MEMO_MIN_VERTICES && work >= MEMO_MIN_WORK;
        if (memoize == Memoize::Always || costly) && self.memo_remembers {
            self.context.memo.put(GameTag::NodeKayles, key, u64::from(value), work);
        }
    }

    /// Keeps a value in the table (emptied first when it is full).
    fn remember(&mut self, key: &[u8], value: u8) {
        let cost = key.len() + ENTRY_OVERHEAD;
        if cost > self.learnt.room {
            let freed: usize = self.learnt.values.keys().map(|key| key.len() + ENTRY_OVERHEAD).sum();
            self.learnt.values.clear();
            self.learnt.room += freed;
            if cost > self.learnt.room {
                return;
            }
        }
        self.learnt.room -= cost;
        self.learnt.values.insert(key.to_vec(), value);
    }
}

impl Drop for Engine<'_, '_> {
    /// Leaves what was learnt in the context, for its next solve.
    fn drop(&mut self) {
        self.context.learnt = Graph::learnt(std::mem::take(&mut self.learnt));
    }
}
