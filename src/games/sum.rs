//! Disjunctive sums: a move is a move in exactly one component; the value is the XOR of the
//! components' nimbers (Sprague–Grundy), with the cutting game's finished / won-at-once states
//! absorbing the rest (see [`Value::plus`]).

use super::{count_moves_by_search, moves_by_search, Game, Interrupted, Move, Position, Solver, Value};

/// The most components a sum may have, after flattening.
pub const MAX_COMPONENTS: usize = 10_000;
/// The deepest nesting of sums accepted in a request.
pub const MAX_DEPTH: usize = 32;

/// Why a sum is not acceptable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SumError {
    /// More components than [`MAX_COMPONENTS`] after flattening.
    TooManyComponents(usize),
    /// Sums nested deeper than [`MAX_DEPTH`].
    TooDeep,
}

impl std::fmt::Display for SumError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SumError::TooManyComponents(count) => {
                write!(f, "sum.components has {count} components after flattening; the limit is {MAX_COMPONENTS}")
            }
            SumError::TooDeep => write!(f, "sum.components nests sums deeper than the limit of {MAX_DEPTH}"),
        }
    }
}

impl std::error::Error for SumError {}

/// A disjunctive sum of positions, none of which is itself a sum.
#[derive(Clone, Debug)]
pub struct Sum {
    components: Vec<Position>,
}

/// A move in one component of a sum.
#[derive(Clone, Debug, PartialEq)]
pub struct SumMove {
    /// Which component (0-based index into [`Sum::components`]).
    pub component: usize,
    /// The move in that component.
    pub mv: Box<Move>,
}

impl Sum {
    /// The sum of `components`, nested sums flattened in order.
    pub fn new(components: Vec<Position>) -> Result<Self, SumError> {
        let mut flat = Vec::with_capacity(components.len());
        for component in components {
            match component {
                Position::Sum(inner) => flat.extend(inner.components),
                other => flat.push(other),
            }
        }
        if flat.len() > MAX_COMPONENTS {
            return Err(SumError::TooManyComponents(flat.len()));
        }
        Ok(Self { components: flat })
    }

    /// The components, flattened.
    pub fn components(&self) -> &[Position] {
        &self.components
    }

    fn component_values(&self, solver: &mut Solver) -> Result<Vec<Value>, Interrupted> {
        self.components.iter().map(|component| component.value(solver)).collect()
    }

    /// For each component, the value it must move to so that the whole sum reaches `target`
    /// (`None` where no move in it can), given the components' `values`; `None` overall when one
    /// component value does not determine it (a sum already won at once staying won at once), which
    /// callers answer by search.
    fn component_targets(values: &[Value], target: Value) -> Option<Vec<Option<Value>>> {
        // others[i]: the sum of every component but i, from prefix and suffix sums.
        let mut suffix = vec![Value::Nimber(0); values.len() + 1];
        for i in (0..values.len()).rev() {
            suffix[i] = values[i].plus(suffix[i + 1]);
        }
        let mut prefix = Value::Nimber(0);
        let mut targets = Vec::with_capacity(values.len());
        for (i, &value) in values.iter().enumerate() {
            let others = prefix.plus(suffix[i + 1]);
            prefix = prefix.plus(value);
            targets.push(match (others, target) {
                (Value::Finished, _) => None,
                (Value::Nimber(o), Value::Nimber(t)) => Some(Value::Nimber(o ^ t)),
                (Value::WinsAtOnce, Value::Nimber(_)) => None,
                (_, Value::Finished) => Some(Value::Finished),
                (Value::Nimber(_), Value::WinsAtOnce) => Some(Value::WinsAtOnce),
                (Value::WinsAtOnce, Value::WinsAtOnce) => return None,
            });
        }
        Some(targets)
    }
}

impl Game for Sum {
    type Move = SumMove;

    fn value(&self, solver: &mut Solver) -> Result<Value, Interrupted> {
        let values = self.component_values(solver)?;
        Ok(values.into_iter().fold(Value::Nimber(0), Value::plus))
    }

    /// The components' moves in component order; none once a component's game is over.
    fn moves(&self) -> Box<dyn Iterator<Item = SumMove> + '_> {
        if self.components.iter().any(Position::is_finished) {
            return Box::new(std::iter::empty());
        }
        Box::new(
            self.components.iter().enumerate().flat_map(|(component, position)| {
                position.moves().map(move |mv| SumMove { component, mv: Box::new(mv) })
            }),
        )
    }

    fn play(&self, mv: &SumMove) -> Self {
        let mut components = self.components.clone();
        components[mv.component] = components[mv.component].play(&mv.mv);
        Self { components }
    }

    fn move_count(&self) -> u128 {
        if self.components.iter().any(Position::is_finished) {
            return 0;
        }
        self.components.iter().map(Position::move_count).fold(0, u128::saturating_add)
    }

    fn count_moves_to(&self, target: Value, solver: &mut Solver) -> Result<u128, Interrupted> {
        let values = self.component_values(solver)?;
        let Some(targets) = Self::component_targets(&values, target) else {
            return count_moves_by_search(self, target, solver);
        };
        let mut count = 0u128;
        for (position, wanted) in self.components.iter().zip(targets) {
            if let Some(wanted) = wanted {
                count = count.saturating_add(position.count_moves_to(wanted, solver)?);
            }
        }
        Ok(count)
    }

    /// A move to `target` changes one component: for a nimber target, the component whose nimber
    /// `v` must become `v ⊕ total ⊕ target`; for a finished target, a component won at once.
    fn moves_to(
        &self,
        target: Value,
        skip: u128,
        limit: usize,
        solver: &mut Solver,
    ) -> Result<Vec<SumMove>, Interrupted> {
        let values = self.component_values(solver)?;
        let Some(targets) = Self::component_targets(&values, target) else {
            return moves_by_search(self, target, skip, limit, solver);
        };
        let mut found = Vec::new();
        let mut skip = skip;
        for (component, (position, wanted)) in self.components.iter().zip(targets).enumerate() {
            let Some(wanted) = wanted else { continue };
            if found.len() >= limit {
                break;
            }
            if skip > 0 {
                let here = position.count_moves_to(wanted, solver)?;
                if here <= skip {
                    skip -= here;
                    continue;
                }
            }
            let moves = position.moves_to(wanted, skip, limit - found.len(), solver)?;
            skip = 0;
            found.extend(moves.into_iter().map(|mv| SumMove { component, mv: Box::new(mv) }));
        }
        Ok(found)
    }
}
