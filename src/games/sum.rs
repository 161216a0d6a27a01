//! Disjunctive sums: a move is a move in exactly one component; the value is the XOR of the
//! components' nimbers (Sprague–Grundy), with the cutting game's finished / won-at-once states
//! absorbing the rest (see [`SumValue::plus`]).

use super::{
    display_setup_error, moves_to_by_search, FieldPath, Game, Interrupted, Move, MoveSet, Nimber, Outcome, Position,
    SearchContext, SetupError, Value,
};

/// The value of a position in which the cutting game may appear: a nimber, or one of the two
/// states the cutting game's literal rule ("whoever cuts out a 1×1 piece wins") adds. Those are not
/// normal-play values: they absorb everything in a sum. Only the cutting game, sums and [`Position`]
/// use this type; every other game's value is a plain [`Nimber`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SumValue {
    /// A normal-play position with this Grundy value (nimber).
    Nimber(Nimber),
    /// The game is over: a 1×1 piece has been cut out, the player to move has lost.
    Finished,
    /// The player to move wins at once by cutting out a 1×1 piece.
    WinsAtOnce,
}

impl SumValue {
    /// The value of the disjunctive sum of two positions: a finished game ends the sum, an
    /// immediate win wins the sum, otherwise nimbers add by XOR.
    pub fn plus(self, other: SumValue) -> SumValue {
        match (self, other) {
            (SumValue::Finished, _) | (_, SumValue::Finished) => SumValue::Finished,
            (SumValue::WinsAtOnce, _) | (_, SumValue::WinsAtOnce) => SumValue::WinsAtOnce,
            (SumValue::Nimber(a), SumValue::Nimber(b)) => SumValue::Nimber(a ^ b),
        }
    }
}

impl Value for SumValue {
    fn outcome(self) -> Outcome {
        match self {
            SumValue::Nimber(0) | SumValue::Finished => Outcome::PreviousPlayerWins,
            SumValue::Nimber(_) | SumValue::WinsAtOnce => Outcome::NextPlayerWins,
        }
    }

    /// A nimber 0, or the finished game for a position won at once.
    fn winning_target(self) -> Option<Self> {
        match self {
            SumValue::Nimber(0) | SumValue::Finished => None,
            SumValue::Nimber(_) => Some(SumValue::Nimber(0)),
            SumValue::WinsAtOnce => Some(SumValue::Finished),
        }
    }

    fn nimber(self) -> Option<Nimber> {
        match self {
            SumValue::Nimber(g) => Some(g),
            SumValue::Finished | SumValue::WinsAtOnce => None,
        }
    }
}

/// The value of a game that may be a component of a sum: it widens to a [`SumValue`], and a sum's
/// target narrows to it where the game can reach it.
pub trait ComponentValue: Value {
    /// This value as a sum's value.
    fn widen(self) -> SumValue;
    /// The value of this game that `value` is, if any.
    fn narrow(value: SumValue) -> Option<Self>;
}

impl ComponentValue for Nimber {
    fn widen(self) -> SumValue {
        SumValue::Nimber(self)
    }

    fn narrow(value: SumValue) -> Option<Self> {
        value.nimber()
    }
}

impl ComponentValue for SumValue {
    fn widen(self) -> SumValue {
        self
    }

    fn narrow(value: SumValue) -> Option<Self> {
        Some(value)
    }
}

/// The most components a sum may have, after flattening.
pub const MAX_COMPONENTS: usize = 10_000;
/// The deepest nesting of sums accepted in a request.
pub const MAX_DEPTH: usize = 32;

/// Why a sum is not acceptable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SumError {
    /// More components than [`MAX_COMPONENTS`] after flattening.
    TooManyComponents(usize),
    /// A sum nested in [`MAX_DEPTH`] sums or more.
    TooDeep,
}

impl SetupError for SumError {
    fn field(&self) -> FieldPath {
        FieldPath::field("components")
    }

    fn problem(&self, _name: &dyn Fn(&FieldPath) -> String) -> String {
        match self {
            SumError::TooManyComponents(count) => {
                format!("has {count} components after flattening; the limit is {MAX_COMPONENTS}")
            }
            SumError::TooDeep => format!("nests sums deeper than the limit of {MAX_DEPTH}"),
        }
    }
}

display_setup_error!(SumError);

/// A disjunctive sum of positions, none of which is itself a sum.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Sum {
    components: Vec<Position>,
}

/// A move in one component of a sum.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SumMove {
    /// Which component (0-based index into [`Sum::components`]).
    pub component: usize,
    /// The move in that component.
    pub mv: Box<Move>,
}

impl Sum {
    /// The sum of `components`, nested sums flattened in order; `depth` is how many sums enclose
    /// this one where it was given (0 for a sum at the top).
    pub fn new(components: Vec<Position>, depth: usize) -> Result<Self, SumError> {
        if depth >= MAX_DEPTH {
            return Err(SumError::TooDeep);
        }
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

    fn component_values(&self, context: &mut SearchContext) -> Result<Vec<SumValue>, Interrupted> {
        self.components.iter().map(|component| component.value(context)).collect()
    }

    /// For each component, the value it must move to so that the whole sum reaches `target`
    /// (`None` where no move in it can), given the components' `values`; `None` overall when one
    /// component value does not determine it (a sum already won at once staying won at once), which
    /// callers answer by search.
    fn component_targets(values: &[SumValue], target: SumValue) -> Option<Vec<Option<SumValue>>> {
        // others[i]: the sum of every component but i, from prefix and suffix sums.
        let mut suffix = vec![SumValue::Nimber(0); values.len() + 1];
        for i in (0..values.len()).rev() {
            suffix[i] = values[i].plus(suffix[i + 1]);
        }
        let mut prefix = SumValue::Nimber(0);
        let mut targets = Vec::with_capacity(values.len());
        for (i, &value) in values.iter().enumerate() {
            let others = prefix.plus(suffix[i + 1]);
            prefix = prefix.plus(value);
            targets.push(match (others, target) {
                (SumValue::Finished, _) => None,
                (SumValue::Nimber(o), SumValue::Nimber(t)) => Some(SumValue::Nimber(o ^ t)),
                (SumValue::WinsAtOnce, SumValue::Nimber(_)) => None,
                (_, SumValue::Finished) => Some(SumValue::Finished),
                (SumValue::Nimber(_), SumValue::WinsAtOnce) => Some(SumValue::WinsAtOnce),
                (SumValue::WinsAtOnce, SumValue::WinsAtOnce) => return None,
            });
        }
        Some(targets)
    }
}

impl Game for Sum {
    type Move = SumMove;
    type Value = SumValue;

    fn value(&self, context: &mut SearchContext) -> Result<SumValue, Interrupted> {
        let values = self.component_values(context)?;
        Ok(values.into_iter().fold(SumValue::Nimber(0), SumValue::plus))
    }

    /// The components' moves in component order; none once a component's game is over.
    fn moves(&self) -> MoveSet<SumMove> {
        let mut moves = MoveSet::empty();
        if !self.components.iter().any(Position::is_finished) {
            for (component, position) in self.components.iter().enumerate() {
                moves.append(position.moves().map(move |mv| SumMove { component, mv: Box::new(mv) }));
            }
        }
        moves
    }

    fn is_legal(&self, mv: &SumMove) -> bool {
        !self.components.iter().any(Position::is_finished)
            && self.components.get(mv.component).is_some_and(|position| position.is_legal(&mv.mv))
    }

    fn play_unchecked(&self, mv: &SumMove) -> Self {
        debug_assert!(self.is_legal(mv), "{mv:?} is not legal in {self:?}");
        let mut components = self.components.clone();
        components[mv.component] = components[mv.component].play_unchecked(&mv.mv);
        Self { components }
    }

    /// A move to `target` changes one component: for a nimber target, the component whose nimber
    /// `v` must become `v ⊕ total ⊕ target`; for a finished target, a component won at once. So the
    /// set is the concatenation of the components' sets for those values.
    fn moves_to(&self, target: SumValue, context: &mut SearchContext) -> Result<MoveSet<SumMove>, Interrupted> {
        let values = self.component_values(context)?;
        let Some(targets) = Self::component_targets(&values, target) else {
            return moves_to_by_search(self, target, context);
        };
        let mut moves = MoveSet::empty();
        for (component, (position, wanted)) in self.components.iter().zip(targets).enumerate() {
            if let Some(wanted) = wanted {
                moves
                    .append(position.moves_to(wanted, context)?.map(move |mv| SumMove { component, mv: Box::new(mv) }));
            }
        }
        Ok(moves)
    }

    fn first_move_to(&self, target: SumValue, context: &mut SearchContext) -> Result<Option<SumMove>, Interrupted> {
        let values = self.component_values(context)?;
        let Some(targets) = Self::component_targets(&values, target) else {
            return Ok(moves_to_by_search(self, target, context)?.get(0));
        };
        for (component, (position, wanted)) in self.components.iter().zip(targets).enumerate() {
            if let Some(mv) = wanted.map(|wanted| position.first_move_to(wanted, context)).transpose()?.flatten() {
                return Ok(Some(SumMove { component, mv: Box::new(mv) }));
            }
        }
        Ok(None)
    }
}
