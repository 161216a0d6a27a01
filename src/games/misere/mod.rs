//! Misère play: the player who cannot move wins, so whoever makes the last move loses. A sum's
//! outcome is not the XOR of its components' Grundy values as in normal play, so an answer rests
//! on a rule proven for the position's kind ([`Basis::NimRule`]), on the genera of a sum's
//! components when all of them are tame ([`Basis::Genus`], module [`genus`]; a position of several
//! heaps or boxes counts as the sum of its heaps or boxes), else on a search of
//! the whole sum under the misère rule ([`Basis::Search`]), bounded by the solve's budget like
//! every search.
//!
//! **Misère Nim** (C. L. Bouton, *Nim, a game with a complete mathematical theory*, Annals of
//! Mathematics 3 (1901–02), 35–39). The player to move loses exactly in the positions `P`:
//! (a) every heap has at most one token and an odd number of heaps has one, or (b) some heap has
//! two or more tokens and the heaps' XOR is 0.
//! *Proof.* From (a) every move leaves heaps of at most one token, an even number of them ones:
//! not in `P`. In (b) a heap of two or more has its highest bit cancelled by another heap, so two
//! heaps have two or more; a move changes one heap, so it leaves a heap of two or more and a
//! nonzero XOR: not in `P`. From outside `P` there is a move into it (or no move at all, which
//! wins): with every heap at most one and an even, nonzero number of ones, take a one (a); with
//! exactly one heap of two or more, leave it at 0 or 1 so that the ones are odd (a); with two or
//! more such heaps and a nonzero XOR, Nim's move to XOR 0 leaves one of them whole (b).

pub use self::genus::Genus;
use super::analysis::{self, Analysis, MoveValue};
use super::heap::{HeapMove, Heaps};
use super::sum::{Sum, SumMove};
use super::{Game, Interrupted, Move, Outcome, Position, SearchContext};

/// The most moves deep a misère search goes: a position whose play may be longer than this (a
/// large heap, a long walk) is not searched ([`Interrupted::PastMisereDepth`]).
pub const MOST_MOVES_DEEP: usize = 1 << 12;

pub mod genus;
mod walk;

/// What a misère answer rests on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Basis {
    /// Bouton's rule for misère Nim (proved in the module's documentation), on heaps of any size.
    NimRule,
    /// Genus theory on a sum whose components are all tame (module [`genus`]).
    Genus {
        /// Each component's genus, in the sum's order.
        components: Vec<Genus>,
        /// Positions whose genus was found.
        positions: u64,
    },
    /// A search of the whole sum, which found the outcome of `positions` positions.
    Search {
        /// Positions whose outcome the search found (its table's entries).
        positions: u64,
    },
}

/// Who wins a position in misère play, a winning move, and what the answer rests on.
#[derive(Clone, Debug)]
pub struct Answer {
    /// Whether the player to move wins.
    pub next_player_wins: bool,
    /// A winning move, when the player to move wins by moving (none when they win because they
    /// cannot move, or lose).
    pub winning_move: Option<Move>,
    /// What the answer rests on.
    pub basis: Basis,
}

impl Answer {
    /// Who wins.
    pub fn outcome(&self) -> Outcome {
        outcome(self.next_player_wins)
    }
}

/// Who wins a position whose player to move wins or not.
fn outcome(next_player_wins: bool) -> Outcome {
    match next_player_wins {
        true => Outcome::NextPlayerWins,
        false => Outcome::PreviousPlayerWins,
    }
}

impl Position {
    /// Who wins the position in misère play, and a winning move: by Bouton's rule when every
    /// component is Nim, by genus theory when it is a sum of tame components, else by a search of
    /// the whole sum. The cutting game is not played to a last move (who cuts out a 1×1 piece
    /// wins), so it has no misère form: [`Position::has_misere_form`] says so first.
    pub fn misere(&self, context: &mut SearchContext) -> Result<Answer, Interrupted> {
        if let Some(heaps) = nim_heaps(self) {
            let (next_player_wins, winning) = nim_rule(&heaps);
            let winning_move = winning.map(|(at, left)| nim_move(self, &heaps, at, left));
            return Ok(Answer { next_player_wins, winning_move, basis: Basis::NimRule });
        }
        let (judged, basis) = self.judged_moves(true, context)?;
        // Judging stops only at a winning move, so nothing judged means no move at all.
        let no_moves = judged.is_empty();
        let winning_move = judged.into_iter().find_map(|(mv, wins)| wins.then_some(mv));
        let next_player_wins = winning_move.is_some() || no_moves;
        Ok(Answer { next_player_wins, winning_move, basis })
    }

    /// The page of at most `limit` moves from `offset` of the position's misère analysis: who wins
    /// it, and its moves with who wins after each, winning moves first, and what the answers rest
    /// on. It judges every move, so at most [`analysis::ENUMERATION_LIMIT`] of them
    /// ([`Interrupted::PastMisereListing`] past it).
    pub fn misere_analysis(
        &self,
        offset: u128,
        limit: usize,
        context: &mut SearchContext,
    ) -> Result<(Analysis<Move, Outcome>, Basis), Interrupted> {
        let most = analysis::ENUMERATION_LIMIT;
        if self.moves().len() > most {
            return Err(Interrupted::PastMisereListing { limit: most });
        }
        let (judged, basis) = match nim_heaps(self) {
            Some(_) => {
                let judged = judge(self, false, |mv| Ok(!self.play_unchecked(mv).misere(context)?.next_player_wins))?;
                (judged, Basis::NimRule)
            }
            None => self.judged_moves(false, context)?,
        };
        let wins = judged.iter().any(|&(_, wins)| wins) || judged.is_empty();
        let every = judged.into_iter().map(|(mv, wins)| MoveValue { mv, value: outcome(!wins) }).collect();
        Ok((analysis::page(outcome(wins), every, offset, limit), basis))
    }

    /// The moves of a position that is not all Nim, each with whether it wins for the player
    /// making it (all of them, or up to the first that wins), by genus theory when it is a sum of
    /// tame parts (a sum's components, each split into the parts it is the sum of, see
    /// [`Position::parts`]), else by a search of the whole sum.
    fn judged_moves(
        &self,
        first_only: bool,
        context: &mut SearchContext,
    ) -> Result<(Vec<(Move, bool)>, Basis), Interrupted> {
        if let Some(split) = Split::of(self) {
            if let Some(tame) = genus::TameSum::of(&split.sum, context)? {
                let whole = Position::Sum(split.sum.clone());
                let judged = judge(&whole, first_only, |mv| {
                    let Move::Sum(SumMove { component, mv }) = mv else { unreachable!("a sum's moves are sum moves") };
                    let option = split.sum.components()[*component].play_unchecked(mv);
                    Ok(tame.loses(Some((*component, &option))))
                })?;
                let judged = judged.into_iter().map(|(mv, wins)| (split.move_of(self, mv), wins)).collect();
                return Ok((judged, tame.basis()));
            }
        }
        let mut walk = walk::Walk::new(context);
        let judged = judge(self, first_only, |mv| {
            let Some(wins) = walk.value(&Outcomes, &self.play_unchecked(mv))? else {
                unreachable!("the outcome fold never stops the walk")
            };
            Ok(!wins)
        })?;
        let positions = walk.table.len() as u64;
        walk.context.stats.positions_computed += positions;
        Ok((judged, Basis::Search { positions }))
    }

    /// Whether a rule answers the position in misère play at once (no search).
    pub fn has_misere_rule(&self) -> bool {
        nim_heaps(self).is_some()
    }

    /// Whether every component is played to a last move, so that misère play means something for
    /// it (the cutting game's winner is whoever cuts out a 1×1 piece).
    pub fn has_misere_form(&self) -> bool {
        match self {
            Position::Cutting(_) => false,
            Position::Sum(sum) => sum.components().iter().all(Position::has_misere_form),
            _ => true,
        }
    }
}

/// Every heap of `position` with its place (component, heap), if every component is Nim.
fn nim_heaps(position: &Position) -> Option<Vec<(usize, usize, u64)>> {
    fn one(component: usize, heaps: &Heaps, all: &mut Vec<(usize, usize, u64)>) -> Option<()> {
        heaps.is_nim().then(|| all.extend(heaps.heaps().iter().enumerate().map(|(i, &n)| (component, i, n))))
    }
    let mut all = Vec::new();
    match position {
        Position::Heaps(heaps) => one(0, heaps, &mut all)?,
        Position::Sum(sum) => {
            for (component, part) in sum.components().iter().enumerate() {
                let Position::Heaps(heaps) = part else { return None };
                one(component, heaps, &mut all)?;
            }
        }
        _ => return None,
    }
    Some(all)
}

/// Bouton's misère rule on `heaps`: whether the player to move wins, and a winning move as
/// (index into `heaps`, tokens left in that heap) when one is needed.
fn nim_rule(heaps: &[(usize, usize, u64)]) -> (bool, Option<(usize, u64)>) {
    let large: Vec<usize> = (0..heaps.len()).filter(|&i| heaps[i].2 >= 2).collect();
    let ones = heaps.iter().filter(|heap| heap.2 == 1).count();
    match large.as_slice() {
        [] if ones % 2 == 1 => (false, None),
        [] => (true, heaps.iter().position(|heap| heap.2 == 1).map(|at| (at, 0))),
        &[only] => (true, Some((only, u64::from(ones % 2 == 0)))),
        _ => {
            let xor = heaps.iter().fold(0, |xor, heap| xor ^ heap.2);
            let at = (xor != 0).then(|| (0..heaps.len()).find(|&i| heaps[i].2 ^ xor < heaps[i].2)).flatten();
            (xor != 0, at.map(|at| (at, heaps[at].2 ^ xor)))
        }
    }
}

/// The move of `position` that leaves `left` tokens in heap `heaps[at]`.
fn nim_move(position: &Position, heaps: &[(usize, usize, u64)], at: usize, left: u64) -> Move {
    let (component, heap, size) = heaps[at];
    let leave: &[u64] = if left == 0 { &[] } else { &[left] };
    let mv = Move::Heaps(HeapMove::new(heap, size - left, leave));
    match position {
        Position::Sum(_) => Move::Sum(SumMove { component, mv: Box::new(mv) }),
        _ => mv,
    }
}

/// Who wins, for the misère search: the player to move wins when they cannot move, or when some
/// move leaves a position the next player loses (which settles it).
struct Outcomes;

impl walk::Fold for Outcomes {
    type Value = bool;
    const STOPS_WHEN_FULL: bool = false;

    fn settles(&self, option_wins: &bool) -> bool {
        !option_wins
    }

    fn fold(&self, options: &[bool]) -> Option<bool> {
        Some(options.iter().any(|&wins| !wins) || options.is_empty())
    }
}

/// The moves of `position` in move order, each with whether it wins for the player making it
/// (`leaves_loss`): all of them, or up to the first that wins.
fn judge(
    position: &Position,
    first_only: bool,
    mut leaves_loss: impl FnMut(&Move) -> Result<bool, Interrupted>,
) -> Result<Vec<(Move, bool)>, Interrupted> {
    let mut judged = Vec::new();
    for mv in position.moves().iter() {
        let wins = leaves_loss(&mv)?;
        judged.push((mv, wins));
        if wins && first_only {
            break;
        }
    }
    Ok(judged)
}

/// A position as the sum of its parts: a sum's components, each split into the parts it is the
/// sum of ([`Position::parts`]: the heaps of a heap game, the boxes), so that genus theory sees
/// every heap as a component.
struct Split {
    /// The parts, in order: their moves are the position's, in its order.
    sum: Sum,
    /// For each part, its component in the position and its index among that component's parts
    /// (`None`: the component is one part).
    origin: Vec<(usize, Option<usize>)>,
}

impl Split {
    /// `position`'s parts, when it has at least two.
    fn of(position: &Position) -> Option<Split> {
        let components = match position {
            Position::Sum(sum) => sum.components(),
            one => std::slice::from_ref(one),
        };
        let (mut parts, mut origin) = (Vec::new(), Vec::new());
        for (at, component) in components.iter().enumerate() {
            match component.parts() {
                Some(split) => {
                    origin.extend((0..split.len()).map(|index| (at, Some(index))));
                    parts.extend(split);
                }
                None => {
                    origin.push((at, None));
                    parts.push(component.clone());
                }
            }
        }
        let sum = Sum::new(parts, 0).ok().filter(|sum| sum.components().len() >= 2)?;
        Some(Split { sum, origin })
    }

    /// The move of `position` that is `mv`, a move of the parts' sum.
    fn move_of(&self, position: &Position, mv: Move) -> Move {
        let Move::Sum(SumMove { component: part, mv }) = mv else { unreachable!("a sum's moves are sum moves") };
        let (component, index) = self.origin[part];
        let whole = match position {
            Position::Sum(sum) => &sum.components()[component],
            one => one,
        };
        let inner = match index {
            Some(index) => whole.move_in_part(index, *mv),
            None => *mv,
        };
        match position {
            Position::Sum(_) => Move::Sum(SumMove { component, mv: Box::new(inner) }),
            _ => inner,
        }
    }
}

#[cfg(test)]
mod tests;
