//! Genus theory (J. H. Conway, *On Numbers and Games*, ch. 12; Berlekamp, Conway and Guy,
//! *Winning Ways*, ch. 13): a component's **genus** `g^γ0γ1γ2…` is its normal-play Grundy value
//! `g` and the misère Grundy values `γn` of the component plus `n` Nim heaps of two. A misère
//! Grundy value is the mex of the options' values, except that a position without moves has 1
//! (its player to move wins); the player to move loses exactly when it is 0.
//!
//! **The genus from the options'.** The options of `G + n·*2` are `G' + n·*2` for each option
//! `G'` of `G`, `G + (n−1)·*2 + *1` and `G + (n−1)·*2`. Adding `*1` to any position `H` flips the
//! last bit of its misère value: `γ(H + *1) = γ(H) ⊕ 1`. *Proof* by induction: with no move in
//! `H`, `H + *1` has the one option `H`, worth 1, so it is worth 0 = 1 ⊕ 1. Otherwise let `a` be
//! `γ(H)`, the mex of the set `S` of its options' values; the options of `H + *1` are worth
//! `S ⊕ 1` (by induction) and `a`. `a ⊕ 1` is not among them (`a ∉ S`), and every `b < a ⊕ 1`
//! other than `a` has `b ⊕ 1 < a`, so `b ⊕ 1 ∈ S`. Hence `γ0 = mex'{γ0(G')}` (1 without moves) and
//! `γn = mex({γn(G')} ∪ {γ(n−1), γ(n−1) ⊕ 1})` for `n ≥ 1`.
//!
//! **Finite form.** Past the longest of the options' sequences, each option's `γn` depends only on
//! the parity of `n`, so `γn` is a function of that parity and `γ(n−1)`: once `γn = γ(n−2)` there,
//! the sequence repeats its last two values for ever. That point always comes: a cycle of four or
//! more would take two values at even `n` and two at odd `n`. With `m` the mex of the options'
//! values at one parity, `γn` is `m` unless `γ(n−1)` lies in `m`'s pair `{2k, 2k+1}`, and then it
//! lies outside that pair; following the cycle's four steps, both parities' pairs coincide and a
//! value would have to lie inside and outside it at once. A genus is kept in its shortest such
//! form, as Winning Ways writes it (`*0` is `0^120`: 1, 2, 0, 2, 0, …; `*2` is `2^20`).
//!
//! **Tame sums.** Call a position *tame* when it and every position it leads to are Nim-like:
//! `γ0 = g` (*firm*), or `g ≤ 1` and `γ0 = g ⊕ 1` (*fickle*). (Winning Ways' tame games also admit
//! reversible moves; this is the part of that class a computer recognises from values alone.)
//! Then the player to move loses a sum of tame components exactly when every component is fickle
//! and the XOR of their `g` is 1, or some component is firm and the XOR is 0 (as in misère Nim,
//! whose positions are tame: heaps of at most one token are fickle).
//! *Proof*, by induction on the sum; write `x` for the XOR.
//! (i) No move leaves such a losing sum from another: a move changes one component's `g`, so
//! `x`. From firm `x = 0` the sum turns all fickle only if the moved component `C` was the one
//! firm one, with `g(C) = x` of the others `≤ 1`; reaching `x = 1` would need an option worth
//! `g(C) ⊕ 1`, fickle, so with `γ0 = g(C) = γ0(C)`, which the mex excludes. From all fickle `x = 1`,
//! a fickle option keeps `g ≤ 1`, so `x = 0`; a firm one of `g ≥ 2` leaves `x ≥ 2`; a firm one of
//! `g ≤ 1` with `x = 0` would be worth `g(C) ⊕ 1 = γ0(C)`, excluded again.
//! (ii) Every other sum has a move to one (or no move, which wins). With a firm component and
//! `x ≠ 0`, Nim's move to `x = 0` in some component wins if a firm component remains. If not,
//! the moved `C` was the only firm one and the others are fickle with XOR `r ≤ 1`: if `g(C) ≥ 2`,
//! `C` has an option with `γ0 = r < γ0(C)` and so `g ≤ 1`, which leaves firm `x = 0` or fickle
//! `x = 1`; if `g(C) ≤ 1` and `r = 0`, an option with `γ0 = 0` does the same; if `r = 1`, a fickle
//! component of `g = 1` moves to `g = 0`, leaving `C` firm and `x = 0`. All fickle with `x = 0`:
//! a component of `g = 1` has `γ0 = 0`, so an option of `g = 0` is fickle and leaves `x = 1`; if
//! every component has `g = 0` and one has a move, an option with `γ0 = 0` leaves firm `x = 0` or
//! fickle `x = 1`.

use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use super::walk::{Fold, Walk};
use super::Basis;
use crate::games::sum::Sum;
use crate::games::{Interrupted, Position, SearchContext};

/// A genus `g^γ0γ1…`: the normal-play Grundy value and the misère values, the last two of which
/// repeat for ever.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Genus {
    /// The Grundy value in normal play.
    pub normal: u64,
    /// `γ0, γ1, …`: the misère Grundy values of the position plus 0, 1, 2, … Nim heaps of two,
    /// at least two of them, the last two repeating.
    pub misere: Vec<u64>,
}

impl Genus {
    /// The genus of a position whose options have the genera `options`.
    fn of_options(options: &[&Genus]) -> Genus {
        let mex = |taken: &mut Vec<u64>| {
            taken.sort_unstable();
            taken.dedup();
            taken.iter().enumerate().find(|&(i, &v)| i as u64 != v).map_or(taken.len(), |(i, _)| i) as u64
        };
        let normal = mex(&mut options.iter().map(|option| option.normal).collect());
        let first = match options.is_empty() {
            true => 1,
            false => mex(&mut options.iter().map(|option| option.gamma(0)).collect()),
        };
        let periodic_from = options.iter().map(|option| option.misere.len()).max().unwrap_or(0);
        let mut misere = vec![first];
        for n in 1.. {
            let before = misere[n - 1];
            let mut taken: Vec<u64> = options.iter().map(|option| option.gamma(n)).collect();
            taken.extend([before, before ^ 1]);
            misere.push(mex(&mut taken));
            if n > periodic_from && n >= 2 && misere[n] == misere[n - 2] {
                break;
            }
        }
        while misere.len() > 2 && misere[misere.len() - 1] == misere[misere.len() - 3] {
            misere.pop();
        }
        Genus { normal, misere }
    }

    /// `γn`: the misère Grundy value of the position plus `n` Nim heaps of two.
    pub fn gamma(&self, n: usize) -> u64 {
        let len = self.misere.len();
        match n < len {
            true => self.misere[n],
            false => self.misere[len - 2 + (n - (len - 2)) % 2],
        }
    }

    /// Whether the position is firm (`γ0 = g`) or fickle (`g ≤ 1`, `γ0 = g ⊕ 1`); `None` when it is
    /// neither, so not Nim-like.
    fn firm(&self) -> Option<bool> {
        match self.gamma(0) {
            first if first == self.normal => Some(true),
            first if self.normal <= 1 && first == self.normal ^ 1 => Some(false),
            _ => None,
        }
    }
}

impl fmt::Display for Genus {
    /// Winning Ways' notation: `0^120`; values past 9 are written in braces, `12^{12,2,0}`.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let digits: Vec<String> = self.misere.iter().map(u64::to_string).collect();
        match self.misere.iter().all(|&v| v < 10) {
            true => write!(f, "{}^{}", self.normal, digits.concat()),
            false => write!(f, "{}^{{{}}}", self.normal, digits.join(",")),
        }
    }
}

/// Whether the player to move loses a sum of tame components of these genera (the rule proved in
/// the module's documentation).
fn tame_sum_loses<'a>(parts: impl Iterator<Item = &'a Genus>) -> bool {
    let (mut xor, mut any_firm) = (0, false);
    for genus in parts {
        xor ^= genus.normal;
        any_firm |= genus.firm() == Some(true);
    }
    match any_firm {
        true => xor == 0,
        false => xor == 1,
    }
}

/// Genera, for the walk: a position's follows from its options'. With `tame_only`, the walk stops
/// at the first position that is not tame (then no position before it in the walk is tame
/// either), and at a full table (a sum's winning move needs every option's genus).
struct Genera {
    tame_only: bool,
}

impl Fold for Genera {
    type Value = Rc<Genus>;
    const STOPS_WHEN_FULL: bool = true;

    fn settles(&self, _: &Rc<Genus>) -> bool {
        false
    }

    fn fold(&self, options: &[Rc<Genus>]) -> Option<Rc<Genus>> {
        let genus = Genus::of_options(&options.iter().map(|option| &**option).collect::<Vec<_>>());
        (!self.tame_only || genus.firm().is_some()).then(|| Rc::new(genus))
    }
}

/// A sum whose components are all tame, with the genus of every position they lead to.
pub(super) struct TameSum {
    /// Each component's genus, in the sum's order.
    parts: Vec<Rc<Genus>>,
    /// The genus of every position the components lead to.
    table: HashMap<Position, Rc<Genus>>,
}

impl TameSum {
    /// The genera of `sum`'s components and their followers, if every component is tame and they
    /// fit the table (else `None`: the caller searches).
    pub fn of(sum: &Sum, context: &mut SearchContext) -> Result<Option<TameSum>, Interrupted> {
        let mut walk = Walk::new(context);
        let mut parts = Vec::with_capacity(sum.components().len());
        for component in sum.components() {
            match walk.value(&Genera { tame_only: true }, component)? {
                Some(genus) => parts.push(genus),
                None => return Ok(None),
            }
        }
        walk.context.stats.positions_computed += walk.table.len() as u64;
        Ok(Some(TameSum { parts, table: walk.table }))
    }

    /// Whether the player to move loses the sum with component `moved` replaced by `option` (one
    /// of its followers), or the sum itself (`None`).
    pub fn loses(&self, moved: Option<(usize, &Position)>) -> bool {
        let parts = self.parts.iter().enumerate().map(|(i, genus)| match moved {
            Some((component, option)) if component == i => &*self.table[option],
            _ => &**genus,
        });
        tame_sum_loses(parts)
    }

    /// What the answer rests on: the components' genera.
    pub fn basis(&self) -> Basis {
        let components = self.parts.iter().map(|genus| (**genus).clone()).collect();
        Basis::Genus { components, positions: self.table.len() as u64 }
    }
}

/// The genus of `position`, tame or not; `None` when its followers do not fit the table.
#[cfg(test)]
pub(super) fn genus(
    position: &crate::games::Position,
    context: &mut SearchContext,
) -> Result<Option<Genus>, Interrupted> {
    Ok(Walk::new(context).value(&Genera { tame_only: false }, position)?.map(|genus| (*genus).clone()))
}
