//! The Grundy values of sets of placements: Node Kayles on induced subgraphs of the king graph.

use std::sync::OnceLock;

use super::bits::transpose as transpose_rows;
use super::bits::{memo_key, Canonical, Placements};
use super::strip::Strip;
use super::table::Table;
use super::window::{transpose, Window};
use crate::games::{GameTag, Interrupted, SearchContext};

/// Components with at least this many placements are looked up in the persistent memo (smaller
/// ones take less time to solve than to look up); top-level components always are.
pub const MEMO_MIN_PLACEMENTS: u32 = 12;

/// A component of at least [`MEMO_MIN_PLACEMENTS`] is written to the persistent memo once solved
/// if settling it took at least this many option evaluations (top-level components always are):
/// what was expensive is never solved again, without flooding the store with cheap entries.
pub const MEMO_MIN_WORK: u64 = 64;

/// Search nodes between two budget checks.
const CHECK_INTERVAL: u64 = 4096;

/// Node Kayles on a path of `n` vertices, which is the octal game 0.137, for `n ≤ 64`
/// (a straight line of placements: at most 63 on a 2×64 board).
pub const PATH: [u8; 65] = path_values();

const fn path_values() -> [u8; 65] {
    let mut values = [0u8; 65];
    let mut n: usize = 1;
    while n < 65 {
        // Playing vertex i deletes i-1, i, i+1 and leaves paths of i-1 and n-i-2 vertices.
        let mut seen: u64 = 0;
        let mut i: usize = 0;
        while i < n {
            let left = i.saturating_sub(1);
            let right = (n - i).saturating_sub(2);
            seen |= 1 << (values[left] ^ values[right]);
            i += 1;
        }
        values[n] = (!seen).trailing_zeros() as u8;
        n += 1;
    }
    values
}

/// Rows of the window whose every subset has a precomputed value.
const TABLE_ROWS: usize = 4;
/// Columns of the window whose every subset has a precomputed value.
const TABLE_COLUMNS: usize = 5;

/// The values of every set of placements inside a 4×5 window (`TABLE_ROWS`×`TABLE_COLUMNS`),
/// indexed by the bits `5·r + c`; computed once per process (2^20 sets, a few milliseconds).
fn table_values() -> &'static [u8] {
    static TABLE: OnceLock<Vec<u8>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let cells = TABLE_ROWS * TABLE_COLUMNS;
        let overlapping: Vec<usize> = (0..cells)
            .map(|p| {
                let (r, c) = (p / TABLE_COLUMNS, p % TABLE_COLUMNS);
                (0..cells)
                    .filter(|&q| (q / TABLE_COLUMNS).abs_diff(r) <= 1 && (q % TABLE_COLUMNS).abs_diff(c) <= 1)
                    .fold(0, |mask, q| mask | 1 << q)
            })
            .collect();
        let mut values = vec![0u8; 1 << cells];
        for set in 1..values.len() {
            // Every option is a proper subset, hence a smaller index, already computed.
            let mut seen: u64 = 0;
            let mut rest = set;
            while rest != 0 {
                let p = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                seen |= 1 << values[set & !overlapping[p]];
            }
            values[set] = (!seen).trailing_zeros() as u8;
        }
        values
    })
}

/// The index in [`table_values`] of a set at the origin of `height` ≤ 4 rows.
fn table_index(origin: Window, height: usize) -> usize {
    (0..height).fold(0, |i, r| i | usize::from(origin.row(r)) << (TABLE_COLUMNS * r))
}

/// What a solve has learnt about one component (by canonical form), in one word: the top byte
/// is the value plus one (0 while unknown), bit `j < 56` says some option is known to have value
/// `j` (so the value is not `j`).
#[derive(Clone, Copy, Debug, Default)]
struct Knowledge(u64);

impl Knowledge {
    /// Option values below this one can be recorded.
    const EXCLUDABLE: u8 = 56;

    /// The value is known.
    fn known(value: u8) -> Knowledge {
        Knowledge(u64::from(value + 1) << 56)
    }

    /// The value, if known.
    fn exact(self) -> Option<u8> {
        ((self.0 >> 56) as u8).checked_sub(1)
    }

    /// Whether some option is known to have this value.
    fn has_option_of(self, value: u8) -> bool {
        value < Knowledge::EXCLUDABLE && self.0 >> value & 1 == 1
    }

    /// Record that some option has this value.
    fn note_option_of(&mut self, value: u8) {
        if value < Knowledge::EXCLUDABLE {
            self.0 |= 1 << value;
        }
    }
}

/// How a component's value is found.
#[derive(Clone, PartialEq, Eq)]
enum Kind {
    /// By a rule: single placement, straight line, or the table of sets inside 4×5 or 5×4.
    Direct(u8),
    /// By search, under its canonical form in an 8×8 window.
    Window(Window),
    /// By search, under its canonical form in 8 rows (longer than 8 one way, at most 8 the other).
    Strip(Strip),
    /// By search, under its canonical form on the whole grid.
    Grid(Canonical),
}

impl Kind {
    /// The persistent memo key of a component searched for, `None` for one valued by rule.
    fn memo_key(&self) -> Option<Vec<u8>> {
        match self {
            Kind::Direct(_) => None,
            Kind::Window(window) => Some(window.memo_key()),
            Kind::Strip(strip) => Some(strip.memo_key()),
            Kind::Grid(canonical) => Some(canonical.placements().memo_key()),
        }
    }
}

/// The value of a straight line or of a set inside 4×5 or 5×4, if it is one (`origin` at the origin).
fn direct(origin: Window, size: u32, height: usize, width: usize) -> Option<u8> {
    if size <= 1 {
        Some(size as u8)
    } else if height == 1 || width == 1 {
        Some(PATH[size as usize])
    } else if height <= TABLE_ROWS && width <= TABLE_COLUMNS {
        Some(table_values()[table_index(origin, height)])
    } else if width <= TABLE_ROWS && height <= TABLE_COLUMNS {
        Some(table_values()[table_index(Window(transpose(origin.0)), width)])
    } else {
        None
    }
}

/// How the value of a set at the origin of a window is found.
fn window_kind(origin: Window, size: u32, height: usize, width: usize) -> Kind {
    match direct(origin, size, height, width) {
        Some(value) => Kind::Direct(value),
        None => Kind::Window(origin.canonical(height, width)),
    }
}

/// How the value of a set at the origin of a strip, wider than 8, is found.
fn strip_kind(origin: Strip, size: u32, height: usize, width: usize) -> Kind {
    if height == 1 {
        Kind::Direct(PATH[size as usize])
    } else {
        Kind::Strip(origin.canonical(height, width))
    }
}

/// A set of placements the search works on: a component in canonical form, or an option of one.
trait Shape: Copy + Eq + Default + std::hash::Hash {
    /// How many placements.
    fn size(self) -> u32;
    /// The options (for each placement, the set without it and its neighbours; of options a
    /// symmetry of the set maps onto each other, one), in the order to try them (see [`rank`]).
    fn ordered_options(self) -> impl std::ops::Deref<Target = [(u32, Self)]>;
    /// The connected components.
    fn parts(self) -> impl Iterator<Item = Self>;
    /// How the value of a connected, non-empty set is found.
    fn kind(self) -> Kind;
    /// The persistent memo key of a set in canonical form.
    fn memo_key(self) -> Vec<u8>;
    /// The engine's table for sets of this shape.
    fn table(tables: &mut Tables) -> &mut Table<Self, Knowledge>;
}

impl Shape for Window {
    fn size(self) -> u32 {
        self.len()
    }
    fn ordered_options(self) -> impl std::ops::Deref<Target = [(u32, Window)]> {
        // A stable counting sort: ranks in a window are below 48 (off centre by at most 28).
        let (_, height, width) = self.at_origin();
        let mut ranked = [(0, Window(0)); 64];
        let mut start = [0usize; 49];
        let mut len = 0;
        for (p, option) in self.distinct_options() {
            let rank = rank(p / 8, p % 8, height, width, self.len() - option.len()).min(47);
            ranked[len] = (rank, option);
            start[rank as usize + 1] += 1;
            len += 1;
        }
        for r in 1..start.len() {
            start[r] += start[r - 1];
        }
        let mut list = WindowOptions { items: [(0, Window(0)); 64], len };
        for &(rank, option) in &ranked[..len] {
            list.items[start[rank as usize]] = (rank, option);
            start[rank as usize] += 1;
        }
        list
    }
    fn parts(self) -> impl Iterator<Item = Window> {
        self.components()
    }
    fn kind(self) -> Kind {
        let (origin, height, width) = self.at_origin();
        window_kind(origin, self.len(), height, width)
    }
    fn memo_key(self) -> Vec<u8> {
        let (_, height, width) = self.at_origin();
        memo_key(|r| self.row(r), height, width)
    }
    fn table(tables: &mut Tables) -> &mut Table<Window, Knowledge> {
        &mut tables.window
    }
}

impl Shape for Strip {
    fn size(self) -> u32 {
        self.len()
    }
    fn ordered_options(self) -> impl std::ops::Deref<Target = [(u32, Strip)]> {
        let (_, height, width) = self.at_origin();
        let mut ranked: Vec<(u32, Strip)> = self
            .distinct_options()
            .map(|(p, option)| (rank(p / 16, p % 16, height, width, self.len() - option.len()), option))
            .collect();
        ranked.sort_by_key(|&(rank, _)| rank);
        ranked
    }
    fn parts(self) -> impl Iterator<Item = Strip> {
        self.components()
    }
    fn kind(self) -> Kind {
        let (origin, height, width) = self.at_origin();
        if width <= 8 {
            let window = Window((0..height).fold(0, |x, r| x | u64::from(origin.row(r)) << (8 * r)));
            return window_kind(window, self.len(), height, width);
        }
        strip_kind(origin, self.len(), height, width)
    }
    fn memo_key(self) -> Vec<u8> {
        let (_, height, width) = self.at_origin();
        memo_key(|r| self.row(r), height, width)
    }
    fn table(tables: &mut Tables) -> &mut Table<Strip, Knowledge> {
        &mut tables.strip
    }
}

impl Shape for Placements {
    fn size(self) -> u32 {
        self.len()
    }
    fn ordered_options(self) -> impl std::ops::Deref<Target = [(u32, Placements)]> {
        let (_, height, width) = self.at_origin();
        let mut ranked: Vec<(u32, Placements)> = self
            .distinct_options()
            .map(|(p, option)| (rank(p / 16, p % 16, height, width, self.len() - option.len()), option))
            .collect();
        ranked.sort_by_key(|&(rank, _)| rank);
        ranked
    }
    fn parts(self) -> impl Iterator<Item = Placements> {
        self.components()
    }
    fn kind(self) -> Kind {
        let (origin, height, width) = self.at_origin();
        if height <= 8 && width <= 8 {
            let window = Window((0..height).fold(0, |x, r| x | u64::from(origin.row(r)) << (8 * r)));
            return window_kind(window, self.len(), height, width);
        }
        if height <= 8 {
            return strip_kind(Strip::from_rows(&origin.rows()[..height]), self.len(), height, width);
        }
        if width <= 8 {
            let turned = transpose_rows(origin.rows());
            return strip_kind(Strip::from_rows(&turned[..width]), self.len(), width, height);
        }
        Kind::Grid(Canonical::of_origin(origin, height, width))
    }
    fn memo_key(self) -> Vec<u8> {
        let (_, height, width) = self.at_origin();
        memo_key(|r| self.row(r), height, width)
    }
    fn table(tables: &mut Tables) -> &mut Table<Placements, Knowledge> {
        &mut tables.grid
    }
}

/// The options of a set in a window (at most 64), with their ranks.
struct WindowOptions {
    items: [(u32, Window); 64],
    len: usize,
}

impl std::ops::Deref for WindowOptions {
    type Target = [(u32, Window)];
    fn deref(&self) -> &[(u32, Window)] {
        &self.items[..self.len]
    }
}

/// The rank of the option playing the placement at `(row, column)` of a set at the origin of
/// `height`×`width`, which removes `removed` placements: options are tried by increasing rank
/// (row-major among equals). Options removing many placements are the cheapest to settle and
/// most often already known; central ones split the set into small, often equal, parts. The
/// weights were tuned on full boards 9×9 to 9×10 (fewest components solved).
fn rank(row: usize, column: usize, height: usize, width: usize, removed: u32) -> u32 {
    let off_centre = (2 * row).abs_diff(height - 1) + (2 * column).abs_diff(width - 1);
    off_centre as u32 + 2 * (9 - removed)
}

/// What one solve has learnt, per canonical component.
#[derive(Default)]
struct Tables {
    window: Table<Window, Knowledge>,
    strip: Table<Strip, Knowledge>,
    grid: Table<Placements, Knowledge>,
}

/// An option reduced to one question: it has value `t` iff `asked` (a component and its number
/// of placements) has value `t ^ others`, or, with nothing to ask, iff `t == others`.
#[derive(Clone)]
struct Reduced {
    others: u64,
    asked: Option<(Kind, u32)>,
}

/// The value of a set of placements if it needs no search: every component is valued by rule or
/// its value is found by `lookup` (a probe of the memo under the component's key, as
/// [`Engine::value_of_board`] stores them); `None` as soon as one component would need a search.
/// Also returns how many values `lookup` supplied.
pub fn value_without_search(set: Placements, lookup: &dyn Fn(&[u8]) -> Option<u64>) -> Option<(u64, u64)> {
    let (mut value, mut found) = (0, 0);
    for part in set.components() {
        value ^= match part.kind() {
            Kind::Direct(value) => u64::from(value),
            // A value no component can have (they are at most 64) is not trusted.
            kind => {
                found += 1;
                lookup(&kind.memo_key()?).filter(|&value| value <= 64)?
            }
        };
    }
    Some((value, found))
}

/// One solve: the solver (budget, statistics, memo) and what it has learnt about components.
///
/// The search is the Lemoine–Viennot one: rather than the value of every option, it asks "has
/// this component the value `t`?", i.e. "is it plus a nim heap of `t` a P-position?". A component
/// has value `t` iff no option has value `t` and every smaller value is an option's. Asked that,
/// the search first looks for an option of value `t` (one witness says no at once), then settles
/// the smaller values in order. An option (a sum of components) is reduced to one question:
/// values found by rule or already known are added up, equal components cancel in pairs, the
/// values of the others but the largest are computed, and the largest is asked for `t` adjusted
/// by their XOR, so a component is often dismissed without ever being solved. Options are tried
/// cheapest first (those removing the most placements), one per class under the component's
/// symmetries. What is learnt (exact values, values some option is known to have) is kept per
/// canonical component.
pub struct Engine<'s, 'a> {
    solver: &'s mut SearchContext<'a>,
    tables: Tables,
    nodes: u64,
}

impl<'s, 'a> Engine<'s, 'a> {
    /// An engine that knows nothing yet.
    pub fn new(solver: &'s mut SearchContext<'a>) -> Self {
        Engine { solver, tables: Tables::default(), nodes: 0 }
    }

    /// The value of a set of placements (the XOR of its components' values); the components
    /// are top-level: their values go to the persistent memo.
    ///
    /// Concurrent solves share top-level components through the memo's single flight: one solve
    /// computes a component, the others wait for its value.
    pub fn value_of_board(&mut self, set: Placements) -> Result<u64, Interrupted> {
        let memo = self.solver.memo;
        let budget = self.solver.budget.clone();
        let mut value = 0;
        for part in set.components() {
            let kind = part.kind();
            let Some(key) = kind.memo_key() else {
                value ^= u64::from(self.value(&kind, true)?);
                continue;
            };
            let mut compute = || {
                let work_before = self.nodes;
                self.value(&kind, true).map(|value| (u64::from(value), self.nodes - work_before))
            };
            let (part_value, found) = memo.get_or_compute(GameTag::Tetris, &key, &budget, &mut compute)?;
            value ^= if found && part_value <= 64 {
                self.solver.stats.cache_hits += 1;
                part_value
            } else if found {
                // A value no component can have (they are at most 64) is not trusted.
                u64::from(self.value(&kind, true)?)
            } else {
                part_value
            };
        }
        Ok(value)
    }

    /// The value of a set of placements, XOR of its components' values.
    pub fn value_of_set(&mut self, set: Placements) -> Result<u64, Interrupted> {
        let mut value = 0;
        for part in set.components() {
            value ^= u64::from(self.component(part, false)?);
        }
        Ok(value)
    }

    /// The value of one connected, non-empty set of placements; a top-level one is always
    /// written to the persistent memo.
    pub fn component(&mut self, part: Placements, top_level: bool) -> Result<u8, Interrupted> {
        self.value(&part.kind(), top_level)
    }

    /// The value of a component.
    fn value(&mut self, kind: &Kind, top_level: bool) -> Result<u8, Interrupted> {
        // Every value up to `u8::MAX` is allowed, and a value is at most the number of placements.
        let value = match kind {
            Kind::Direct(value) => Some(*value),
            Kind::Window(window) => self.settle(*window, u8::MAX, top_level, false)?,
            Kind::Strip(strip) => self.settle(*strip, u8::MAX, top_level, false)?,
            Kind::Grid(canonical) => self.settle(canonical.placements(), u8::MAX, top_level, false)?,
        };
        Ok(value.unwrap_or(0))
    }

    /// Whether a component of `size` placements has value `target`.
    fn has_value(&mut self, kind: &Kind, size: u32, target: u64) -> Result<bool, Interrupted> {
        if target > u64::from(size) {
            // A component of n placements has n options, so its value is at most n.
            return Ok(false);
        }
        let target = target as u8;
        let value = match kind {
            Kind::Direct(value) => Some(*value),
            Kind::Window(window) => self.settle(*window, target, false, true)?,
            Kind::Strip(strip) => self.settle(*strip, target, false, true)?,
            Kind::Grid(canonical) => self.settle(canonical.placements(), target, false, true)?,
        };
        Ok(value == Some(target))
    }

    /// The value of a component in canonical form, if this establishes it: `Some(v)` means the
    /// value is `v ≤ limit`; `None` means it exceeds `limit` or, with `witness_first`, that some
    /// option has value `limit` (so the value is not `limit`; it may be smaller).
    fn settle<S: Shape>(
        &mut self,
        key: S,
        limit: u8,
        top_level: bool,
        witness_first: bool,
    ) -> Result<Option<u8>, Interrupted> {
        let size = key.size();
        let persistent = top_level || size >= MEMO_MIN_PLACEMENTS;
        let mut known = match S::table(&mut self.tables).get(&key) {
            Some(known) => known,
            None => {
                // A value no component can have (they are at most 64) is not trusted.
                let stored = if persistent {
                    self.solver.memo.get(GameTag::Tetris, &key.memo_key()).filter(|&v| v <= 64)
                } else {
                    None
                };
                match stored {
                    Some(value) => {
                        let known = Knowledge::known(value as u8);
                        self.remember(key, known);
                        known
                    }
                    None => Knowledge::default(),
                }
            }
        };
        if let Some(value) = known.exact() {
            self.solver.stats.cache_hits += 1;
            if top_level {
                // Known from this solve: what it cost is not known here (the memo keeps the larger).
                self.solver.memo.put(GameTag::Tetris, &key.memo_key(), u64::from(value), 0);
            }
            return Ok((value <= limit).then_some(value));
        }
        let work_before = self.nodes;
        let last = limit.min(size.min(64) as u8);
        let options = key.ordered_options();
        let mut reduced = vec![None; options.len()];
        // A value no option has, once found.
        let mut absent = None;
        if witness_first && last == limit && !known.has_option_of(limit) {
            // Asked "is the value `limit`?": an option of that value says no at once.
            if self.some_option_has_value(&options, &mut reduced, limit)? {
                known.note_option_of(limit);
                self.remember(key, known);
                return Ok(None);
            }
            absent = Some(limit);
        }
        for j in 0..=last {
            if known.has_option_of(j) {
                continue;
            }
            // Every smaller value is an option's: the value is j unless an option has value j.
            if absent == Some(j) || !self.some_option_has_value(&options, &mut reduced, j)? {
                known = Knowledge::known(j);
                break;
            }
            known.note_option_of(j);
        }
        self.remember(key, known);
        if let Some(value) = known.exact() {
            self.solver.stats.positions_computed += 1;
            let work = self.nodes - work_before;
            if top_level || (persistent && work >= MEMO_MIN_WORK) {
                self.solver.memo.put(GameTag::Tetris, &key.memo_key(), u64::from(value), work);
            }
        }
        Ok(known.exact())
    }

    /// Whether some option (of the ranked `options` of a connected set) has value `target`;
    /// `reduced` caches the options reduced so far (by index), for the next question about the
    /// same options.
    fn some_option_has_value<S: Shape>(
        &mut self,
        options: &[(u32, S)],
        reduced: &mut [Option<Reduced>],
        target: u8,
    ) -> Result<bool, Interrupted> {
        for (&(_, rest), slot) in options.iter().zip(reduced.iter_mut()) {
            self.nodes += 1;
            if self.nodes.is_multiple_of(CHECK_INTERVAL) {
                self.solver.budget.check()?;
            }
            let option = match slot {
                Some(option) => option,
                None => slot.insert(self.reduce(rest)?),
            };
            let sum = u64::from(target) ^ option.others;
            let found = match &option.asked {
                None => sum == 0,
                Some((kind, size)) => self.has_value(kind, *size, sum)?,
            };
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Reduce an option (a set of placements from a connected set) to one question: values found
    /// by rule are added up, equal components cancel in pairs, components already solved are
    /// added up, the values of the others but the largest are computed, and the largest is left
    /// to be asked.
    fn reduce<S: Shape>(&mut self, rest: S) -> Result<Reduced, Interrupted> {
        // An option of a connected set has at most 8 components: each holds a placement of the
        // ring of 16 around the removed 3×3 block, and those of different components are apart.
        let mut searched: [Option<(Kind, u32)>; 8] = Default::default();
        let mut count = 0;
        let mut others = 0u64;
        for part in rest.parts() {
            match part.kind() {
                Kind::Direct(value) => others ^= u64::from(value),
                kind => {
                    let size = part.size();
                    let twin =
                        searched[..count].iter().position(|s| matches!(s, Some((k, n)) if *n == size && *k == kind));
                    match twin {
                        Some(i) => searched[i] = None,
                        None if count < searched.len() => {
                            searched[count] = Some((kind, size));
                            count += 1;
                        }
                        None => others ^= u64::from(self.value(&kind, false)?),
                    }
                }
            }
        }
        for slot in searched.iter_mut().take(count) {
            if let Some(value) = slot.as_ref().and_then(|(kind, _)| self.known_value(kind)) {
                self.solver.stats.cache_hits += 1;
                others ^= u64::from(value);
                *slot = None;
            }
        }
        let largest =
            (0..count).filter(|&i| searched[i].is_some()).max_by_key(|&i| searched[i].as_ref().map_or(0, |s| s.1));
        for (i, slot) in searched.iter_mut().enumerate().take(count) {
            if Some(i) != largest {
                if let Some((kind, _)) = slot.take() {
                    others ^= u64::from(self.value(&kind, false)?);
                }
            }
        }
        Ok(Reduced { others, asked: largest.and_then(|i| searched[i].take()) })
    }

    /// The value of a component if this solve already knows it.
    fn known_value(&self, kind: &Kind) -> Option<u8> {
        match kind {
            Kind::Direct(value) => Some(*value),
            Kind::Window(window) => self.tables.window.get(window).and_then(Knowledge::exact),
            Kind::Strip(strip) => self.tables.strip.get(strip).and_then(Knowledge::exact),
            Kind::Grid(canonical) => self.tables.grid.get(&canonical.placements()).and_then(Knowledge::exact),
        }
    }

    /// Record what was learnt; when the tables hold `solver.table_limit` entries, they are
    /// emptied first (memory stays bounded; values already in the persistent memo stay there).
    fn remember<S: Shape>(&mut self, key: S, known: Knowledge) {
        let tables = &mut self.tables;
        if tables.window.len() + tables.strip.len() + tables.grid.len() >= self.solver.table_limit {
            tables.window.clear();
            tables.strip.clear();
            tables.grid.clear();
        }
        S::table(&mut self.tables).insert(key, known);
    }
}
