//! The component search every searching game shares (the kernel): "has this component the value
//! `t`?", asked the Lemoine–Viennot way, with a table of what the solve knows, a budget and
//! counts. A game gives it [`Rules`]: its options, how an option splits into parts, canonical
//! keys, values known by rule and the order to try options in.
//!
//! **The search.** A component has value `t` iff no option has value `t` and every smaller value
//! is an option's. Asked whether it has value `t`, the kernel first looks for an option of value
//! `t` (one witness says no at once), then settles the smaller values in order. An option, a sum
//! of parts, is reduced to one question: values known by rule or from the table are added up,
//! equal parts cancel in pairs, the values of the others but the largest are computed, and the
//! largest is asked for `t` adjusted by their XOR, so a part is often dismissed without ever
//! being solved.
//!
//! **Lazy cutoff.** The options are made in rank order (cheap: a game makes an option with a
//! few word operations), and each is split and looked up as it comes: the first one whose value
//! the table already gives as `t` ends the question, and the rest are never split. Only a
//! question that passes this cutoff searches options.
//!
//! **Values fit a byte.** A component's value is at most [`Rules::most_value`] (below 255 for
//! every game, each proves its bound), so a value and a value plus one fit a `u8`, and the search
//! for the least value no option has ends there at the latest.
//!
//! **Threads** ([`Kernel::with_helpers`]). A question at the root that the cutoff does not settle
//! is a set of independent questions, one per option ("has this option the value `t`?"): the
//! threads of a rayon pool take them in rank order, each with a search of its own, all on the one
//! table (shared without locks: see [`Table`]), and all stop once one option has the value. What
//! any thread learns is exact, so the value is the same on any number of threads.
//!
//! **No store inside.** The kernel never reads the persistent memo: its caller reads it for the
//! component it asks about, and is told of costly components settled on the way (see
//! [`Kernel::on_settled`]) to write them behind the search.

mod table;

pub use self::table::{Key, Shared, Table};
use crate::games::{Budget, Interrupted, SearchCounts};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What a solve knows of one component, in one word: bit `j` of the low 40
/// says some option has value `j` (so the value is not `j`); then the cost of what was learnt (the
/// bit length of the option evaluations it took), then the value plus one (0 while unknown).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Knowledge(u64);

impl Knowledge {
    /// Option values below this one can be recorded.
    const EXCLUDABLE: u32 = 40;
    /// The first bit of the cost (7 bits).
    const COST_SHIFT: u32 = 40;
    /// The first bit of the value plus one (8 bits).
    const VALUE_SHIFT: u32 = 48;

    /// The value is known.
    pub fn known(value: u8) -> Knowledge {
        Knowledge((u64::from(value) + 1) << Knowledge::VALUE_SHIFT)
    }

    /// The value, if known.
    pub fn exact(self) -> Option<u8> {
        ((self.0 >> Knowledge::VALUE_SHIFT) as u8).checked_sub(1)
    }

    /// Whether some option is known to have this value.
    pub fn has_option_of(self, value: u8) -> bool {
        u32::from(value) < Knowledge::EXCLUDABLE && self.0 >> value & 1 == 1
    }

    /// Record that some option has this value.
    fn note_option_of(&mut self, value: u64) {
        if value < u64::from(Knowledge::EXCLUDABLE) {
            self.0 |= 1 << value;
        }
    }

    /// What learning it cost: the bit length of the option evaluations.
    pub fn cost(self) -> u8 {
        (self.0 >> Knowledge::COST_SHIFT) as u8 & 0x7F
    }

    /// The same knowledge, found by a search of `work` option evaluations (unless an earlier
    /// search cost more).
    pub fn with_cost(self, work: u64) -> Knowledge {
        let cost = u64::from(self.cost().max(64 - work.leading_zeros() as u8));
        Knowledge(self.0 & !(0x7F << Knowledge::COST_SHIFT) | cost << Knowledge::COST_SHIFT)
    }
}

/// A part of an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part<S> {
    /// Valued by a rule of the game's.
    Valued(u8),
    /// To be searched: a component in canonical form.
    Searched(S),
}

/// What the kernel needs from a game. Components are of type `Set`, in canonical form when
/// searched; an option (a move played in a component, not yet split) is an `Option`.
pub trait Rules: Clone + Send + Sync {
    /// A component (in canonical form, when the kernel holds it).
    type Set: Copy + Eq + Default + Send + Sync;
    /// An option of a component, before it is split into parts.
    type Option: Copy + Send + Sync;

    /// A component's key in the table: one word, or two for wider components.
    type Key: Key;

    /// The family of this game's keys in a shared table (not 0).
    fn family(&self) -> u8;
    /// A component's key: different components of one family have different keys.
    fn key(&self, set: Self::Set) -> Self::Key;
    /// How many points a component has (the larger part of an option is the one asked).
    fn points(&self, set: Self::Set) -> u32;
    /// A bound on the values of a component (below 255).
    fn most_value(&self, set: Self::Set) -> u8;
    /// Whether a component has value 0 by a symmetry strategy, with no search.
    fn zero_by_symmetry(&self, set: Self::Set) -> bool;
    /// The options of a component, each with its rank: the kernel tries them by increasing rank.
    fn options(&self, set: Self::Set, out: &mut Vec<(u32, Self::Option)>);
    /// The parts of an option (canonical when searched), given to `part` one by one.
    fn parts(&self, option: Self::Option, part: impl FnMut(Part<Self::Set>));
}

/// What asking "has this component the value `t`?" found out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// Its value, known now: the answer is whether it is `t`.
    Value(u8),
    /// Its value is not `t` (and is not known).
    Not,
}

/// The most searched parts an option keeps for its question; further ones are valued at once.
const MOST_PARTS: usize = 6;

/// An option as far as it is known: its parts' known values added up, and the parts whose value is
/// not known (their keys and sizes), the largest last once reduced.
#[derive(Clone, Copy)]
struct Child<S, O> {
    option: O,
    state: State,
    others: u64,
    parts: [S; MOST_PARTS],
    count: u8,
}

/// How far an option has been taken.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not split yet.
    Whole,
    /// Split: `parts` are those not known, `others` the XOR of the rest.
    Split,
    /// Reduced: every part but the last of `parts` valued into `others`.
    Reduced,
}

/// Questions about components of at most this many points fewer than the root's are divided
/// among the threads: 0, the root's alone. Dividing below it too (2, 4, 6 or 8 points fewer,
/// with or without the eldest option first) searched Cram 5×9 with more nodes on 2 threads than
/// the root alone (28.4 to 116 million against 28.0 million; one thread: 21.2 million): a thread
/// that takes a sibling of the option that turns out to have the value asked searches for nothing.
const DIVIDED_POINTS: u32 = 0;

/// How many times its size a table is grown to before threads share it.
const SHARED_GROWTH: usize = 4;

/// Search nodes between two budget checks.
const CHECK_INTERVAL: u64 = 4096;

/// The table a search learns in: its own (which grows), or one it shares with other threads.
enum Learning<'t, K: Key> {
    Own(&'t mut Table<K>),
    Shared(Shared<'t, K>),
}

impl<K: Key> Learning<'_, K> {
    fn get(&self, key: K, family: u8) -> Option<Knowledge> {
        self.shared().get(key, family)
    }

    fn prefetch(&self, key: K, family: u8) {
        self.shared().prefetch(key, family)
    }

    fn insert(&mut self, key: K, family: u8, known: Knowledge) {
        match self {
            Learning::Own(table) => table.insert(key, family, known),
            Learning::Shared(table) => table.record(key, family, known),
        }
    }

    fn shared(&self) -> Shared<'_, K> {
        match self {
            Learning::Own(table) => table.share(),
            Learning::Shared(table) => *table,
        }
    }
}

/// Threads that help a search: a question at its root that the cutoff does not settle is divided
/// among them, one option at a time, all on the one table.
pub struct Helpers<'p> {
    pool: &'p rayon::ThreadPool,
}

impl<'p> Helpers<'p> {
    /// The threads of `pool` (this thread among them, through `install`).
    pub fn of(pool: &'p rayon::ThreadPool) -> Self {
        Helpers { pool }
    }
}

/// One solve's search over a game's rules, its table and its budget.
pub struct Kernel<'t, R: Rules> {
    rules: R,
    table: Learning<'t, R::Key>,
    budget: &'t Budget,
    /// The threads that divide the questions near the root with this one, if any.
    helpers: Option<Helpers<'t>>,
    /// Questions about components of at least this many points are divided among the threads.
    divided_from: u32,
    /// What the search did.
    pub counts: SearchCounts,
    /// Told of each component settled by search with the work it took (option evaluations).
    on_settled: Option<&'t (dyn Fn(R::Set, u8, u64) + Sync)>,
    /// Option lists kept from one node to the next.
    spare: Vec<Vec<Child<R::Set, R::Option>>>,
    ranked: Vec<(u32, R::Option)>,
    order: Vec<u64>,
}

impl<'t, R: Rules> Kernel<'t, R> {
    /// A search of `rules` with what `table` knows, stopped when `budget` says.
    pub fn new(rules: R, table: &'t mut Table<R::Key>, budget: &'t Budget) -> Self {
        Kernel::on(rules, Learning::Own(table), budget)
    }

    fn on(rules: R, table: Learning<'t, R::Key>, budget: &'t Budget) -> Self {
        Kernel {
            rules,
            table,
            budget,
            helpers: None,
            divided_from: u32::MAX,
            counts: SearchCounts::default(),
            on_settled: None,
            spare: Vec::new(),
            ranked: Vec::new(),
            order: Vec::new(),
        }
    }

    /// Be told of every component a search settles (its canonical form, value and work), for
    /// example to write the costly ones to the persistent memo.
    pub fn on_settled(mut self, tell: &'t (dyn Fn(R::Set, u8, u64) + Sync)) -> Self {
        self.on_settled = Some(tell);
        self
    }

    /// Divide the questions at the root among `helpers` (the value is the same).
    pub fn with_helpers(mut self, helpers: Helpers<'t>) -> Self {
        self.helpers = Some(helpers);
        self
    }

    /// What the table knows of a component.
    fn recall(&mut self, set: R::Set) -> Knowledge {
        self.counts.table_lookups += 1;
        match self.table.get(self.rules.key(set), self.rules.family()) {
            Some(known) => {
                if known.exact().is_some() {
                    self.counts.table_hits += 1;
                }
                known
            }
            None => Knowledge::default(),
        }
    }

    /// The value of a component in canonical form.
    pub fn value(&mut self, set: R::Set) -> Result<u8, Interrupted> {
        match self.helpers.take() {
            Some(helpers) => {
                if let Learning::Own(table) = &mut self.table {
                    // Threads sharing it cannot grow it: it grows now, towards what one search
                    // alone would grow it to.
                    table.reserve(SHARED_GROWTH);
                }
                self.divided_from = self.rules.points(set).saturating_sub(DIVIDED_POINTS);
                let value = helpers.pool.install(|| self.value_here(set));
                (self.divided_from, self.helpers) = (u32::MAX, Some(helpers));
                value
            }
            None => self.value_here(set),
        }
    }

    /// The value of a component in canonical form, searched by this thread (and those it
    /// divides questions with).
    fn value_here(&mut self, set: R::Set) -> Result<u8, Interrupted> {
        let mut known = self.recall(set);
        if let Some(value) = known.exact() {
            return Ok(value);
        }
        let work_before = self.counts.option_evaluations;
        if self.rules.zero_by_symmetry(set) {
            self.settle(set, 0, work_before);
            return Ok(0);
        }
        let most = self.rules.most_value(set);
        let mut children = self.children(set);
        let divided = self.rules.points(set) >= self.divided_from;
        let value = self.least_absent(&mut known, &mut children, most, divided);
        self.spare.push(children);
        let value = value?.unwrap_or(most);
        self.settle(set, value, work_before);
        Ok(value)
    }

    /// Whether a component in canonical form has value `target`; its value when that is known
    /// (or found) on the way.
    fn is_value(&mut self, set: R::Set, target: u8) -> Result<Answer, Interrupted> {
        let mut known = self.recall(set);
        if let Some(value) = known.exact() {
            return Ok(Answer::Value(value));
        }
        if known.has_option_of(target) {
            return Ok(Answer::Not);
        }
        let work_before = self.counts.option_evaluations;
        if self.rules.zero_by_symmetry(set) {
            self.settle(set, 0, work_before);
            return Ok(Answer::Value(0));
        }
        let mut children = self.children(set);
        let divided = self.rules.points(set) >= self.divided_from;
        let value = match self.some_option_has_value(&mut known, &mut children, target, divided) {
            Ok(true) => Ok(None),
            Ok(false) => {
                self.least_absent(&mut known, &mut children, target, divided).map(|v| Some(v.unwrap_or(target)))
            }
            Err(stop) => Err(stop),
        };
        self.spare.push(children);
        match value? {
            Some(value) => {
                self.settle(set, value, work_before);
                Ok(Answer::Value(value))
            }
            None => {
                let known = known.with_cost(self.counts.option_evaluations - work_before);
                self.table.insert(self.rules.key(set), self.rules.family(), known);
                Ok(Answer::Not)
            }
        }
    }

    /// The options of a component, ranked, each whole (not yet split).
    fn children(&mut self, set: R::Set) -> Vec<Child<R::Set, R::Option>> {
        self.counts.expanded += 1;
        let mut ranked = std::mem::take(&mut self.ranked);
        self.rules.options(set, &mut ranked);
        // By rank, then as made: each rank above the index, sorted as one word.
        let mut order = std::mem::take(&mut self.order);
        order.extend(ranked.iter().enumerate().map(|(i, &(rank, _))| u64::from(rank) << 32 | i as u64));
        order.sort_unstable();
        let mut children = self.spare.pop().unwrap_or_default();
        children.clear();
        children.extend(order.drain(..).map(|i| ranked[i as u32 as usize].1).map(|option| Child {
            option,
            state: State::Whole,
            others: 0,
            parts: [R::Set::default(); MOST_PARTS],
            count: 0,
        }));
        ranked.clear();
        self.ranked = ranked;
        self.order = order;
        children
    }

    /// Record a value found by a search that started at `work_before`.
    fn settle(&mut self, set: R::Set, value: u8, work_before: u64) {
        self.counts.settled += 1;
        let work = self.counts.option_evaluations - work_before;
        self.table.insert(self.rules.key(set), self.rules.family(), Knowledge::known(value).with_cost(work));
        if let Some(tell) = self.on_settled {
            tell(set, value, work);
        }
    }

    /// The least value below `end` that no option has, if there is one; `known` learns the
    /// option values met on the way.
    fn least_absent(
        &mut self,
        known: &mut Knowledge,
        children: &mut [Child<R::Set, R::Option>],
        end: u8,
        divided: bool,
    ) -> Result<Option<u8>, Interrupted> {
        for j in 0..end {
            if known.has_option_of(j) {
                continue;
            }
            if !self.some_option_has_value(known, children, j, divided)? {
                return Ok(Some(j));
            }
        }
        Ok(None)
    }

    /// Whether some option has value `target`, the options past the cutoff divided among the
    /// threads of the pool this runs in: each option is a task of a rayon scope, taken in rank
    /// order by whichever thread is free, and asked with a search of its own on the shared
    /// table; all stop at their next budget check once one option has the value. Questions of
    /// large enough components below are divided again (nested tasks, stolen by idle threads).
    fn divided_option_has_value(
        &self,
        known: &mut Knowledge,
        children: &[Child<R::Set, R::Option>],
        target: u8,
        counts: &mut SearchCounts,
    ) -> Result<bool, Interrupted> {
        let found = Arc::new(AtomicBool::new(false));
        let budget = self.budget.until(found.clone());
        let seen = AtomicU64::new(known.0);
        let learnt = Mutex::new((SearchCounts::default(), None));
        let table = self.table.shared();
        let ask = |child: &Child<R::Set, R::Option>| {
            if found.load(Ordering::Relaxed) {
                return;
            }
            let mut kernel = Kernel::on(self.rules.clone(), Learning::Shared(table), &budget);
            (kernel.on_settled, kernel.divided_from) = (self.on_settled, self.divided_from);
            let (mut child, mut noted) = (*child, Knowledge::default());
            kernel.counts.option_evaluations += 1;
            let answer = kernel.has_value(&mut noted, &mut child, target);
            if answer == Ok(true) {
                found.store(true, Ordering::Relaxed);
            }
            seen.fetch_or(noted.0, Ordering::Relaxed);
            let mut learnt = learnt.lock().unwrap_or_else(|poison| poison.into_inner());
            learnt.0 += kernel.counts;
            if let Err(stop) = answer {
                learnt.1 = Some(stop);
            }
        };
        // In rank order: a thread that is free takes the next option, so that once one has the
        // value, the others were asked about the options just after it (which a search alone
        // would have asked about first).
        rayon::scope_fifo(|scope| {
            for child in children {
                scope.spawn_fifo(|_| ask(child));
            }
        });
        let (learnt_counts, stopped) = learnt.into_inner().unwrap_or_else(|poison| poison.into_inner());
        *counts += learnt_counts;
        *known = Knowledge(seen.into_inner());
        if found.load(Ordering::Relaxed) {
            return Ok(true);
        }
        // An option found by a sibling stops the others as cancelled: only a stop without one is
        // the budget's.
        match stopped {
            Some(stop) => {
                self.budget.check()?;
                Err(stop)
            }
            None => Ok(false),
        }
    }

    /// Split an option: equal parts cancel, parts valued by rule go into `others`, and the table
    /// starts loading the buckets of the others (looked up by [`Kernel::known_value`]).
    fn split(&mut self, child: &mut Child<R::Set, R::Option>) -> Result<(), Interrupted> {
        let (mut others, mut count, mut parts) = (0u64, 0usize, [R::Set::default(); MOST_PARTS]);
        let mut overflow: Vec<R::Set> = Vec::new();
        self.rules.parts(child.option, |part| match part {
            Part::Valued(value) => others ^= u64::from(value),
            Part::Searched(set) => match parts[..count].iter().position(|&p| p == set) {
                Some(i) => {
                    count -= 1;
                    parts[i] = parts[count];
                }
                None if count < MOST_PARTS => {
                    parts[count] = set;
                    count += 1;
                }
                None => overflow.push(set),
            },
        });
        for set in overflow {
            others ^= u64::from(self.value(set)?);
        }
        for &part in &parts[..count] {
            self.table.prefetch(self.rules.key(part), self.rules.family());
        }
        *child = Child { option: child.option, state: State::Split, others, parts, count: count as u8 };
        Ok(())
    }

    /// The value of a split option if the table gives it: every part is known. Parts found
    /// known are added into `others` for good.
    fn known_value(&mut self, child: &mut Child<R::Set, R::Option>) -> Option<u64> {
        let mut i = 0;
        while i < child.count as usize {
            match self.recall(child.parts[i]).exact() {
                Some(value) => {
                    child.others ^= u64::from(value);
                    child.count -= 1;
                    child.parts[i] = child.parts[child.count as usize];
                }
                None => i += 1,
            }
        }
        (child.count == 0).then_some(child.others)
    }

    /// Whether some option has value `target`; `known` learns every option value met.
    fn some_option_has_value(
        &mut self,
        known: &mut Knowledge,
        children: &mut [Child<R::Set, R::Option>],
        target: u8,
        divided: bool,
    ) -> Result<bool, Interrupted> {
        if self.cutoff(known, children, target)? {
            return Ok(true);
        }
        if divided {
            let mut counts = SearchCounts::default();
            let answer = self.divided_option_has_value(known, children, target, &mut counts);
            self.counts += counts;
            return answer;
        }
        for child in children.iter_mut() {
            self.counts.option_evaluations += 1;
            if self.counts.option_evaluations.is_multiple_of(CHECK_INTERVAL) {
                self.budget.check()?;
            }
            if self.has_value(known, child, target)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The cutoff: whether an option is known to have value `target` already. The options are
    /// taken in rank order, each split and looked up as it comes, so that the first known to have
    /// the value answers; `known` learns every option value met.
    fn cutoff(
        &mut self,
        known: &mut Knowledge,
        children: &mut [Child<R::Set, R::Option>],
        target: u8,
    ) -> Result<bool, Interrupted> {
        for i in 0..children.len() {
            // The next option is split (its buckets start loading) before this one is looked up.
            for next in [i, i + 1] {
                if children.get(next).is_some_and(|child| child.state == State::Whole) {
                    self.split(&mut children[next])?;
                }
            }
            if let Some(value) = self.known_value(&mut children[i]) {
                known.note_option_of(value);
                if value == u64::from(target) {
                    self.counts.cutoffs += 1;
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Whether an option has value `target`: every part but the largest valued, the largest
    /// asked; `known` learns the option's value if that is found.
    fn has_value(
        &mut self,
        known: &mut Knowledge,
        child: &mut Child<R::Set, R::Option>,
        target: u8,
    ) -> Result<bool, Interrupted> {
        if child.state != State::Reduced {
            let count = child.count as usize;
            if count > 1 {
                let largest = (0..count).max_by_key(|&i| self.rules.points(child.parts[i])).unwrap_or(0);
                child.parts.swap(largest, count - 1);
                for i in 0..count - 1 {
                    child.others ^= u64::from(self.value(child.parts[i])?);
                }
                child.parts[0] = child.parts[count - 1];
                child.count = 1;
            }
            child.state = State::Reduced;
        }
        let value = match child.count {
            0 => Some(child.others),
            _ => {
                let part = child.parts[0];
                let asked = u64::from(target) ^ child.others;
                if asked > u64::from(self.rules.most_value(part)) {
                    None
                } else {
                    match self.is_value(part, asked as u8)? {
                        Answer::Value(value) => Some(u64::from(value) ^ child.others),
                        Answer::Not => None,
                    }
                }
            }
        };
        if let Some(value) = value {
            known.note_option_of(value);
        }
        Ok(value == Some(u64::from(target)))
    }
}
