//! A component of at most 64 vertices searched on the kernel ([`crate::games::kernel`]): its
//! subsets are `u64`s of its vertices, and a subset is its own key in the solve's table. Two
//! isomorphic subsets are two entries (only a canonical labelling would make them one, and it
//! costs far more than searching a small one again), so a table serves one component only.

use super::parts::{components, value_of_part};
use crate::games::kernel::{Part, Rules};

/// The most vertices of a component searched on the kernel.
pub const MOST_VERTICES: usize = 64;

/// Node Kayles on the subsets of one graph of at most [`MOST_VERTICES`] vertices.
#[derive(Clone)]
pub struct SubsetRules<'g> {
    /// `rows[v]` bit `w`: the vertices `v` and `w` are joined.
    pub rows: &'g [u128],
}

impl Rules for SubsetRules<'_> {
    type Set = u64;
    /// The set after the move.
    type Option = u64;
    type Key = u64;

    fn family(&self) -> u8 {
        1
    }

    fn key(&self, set: u64) -> u64 {
        set
    }

    fn points(&self, set: u64) -> u32 {
        set.count_ones()
    }

    /// A set of `k` vertices has `k` options, so its value is at most `k` (at most 64).
    fn most_value(&self, set: u64) -> u8 {
        set.count_ones() as u8
    }

    fn zero_by_symmetry(&self, _set: u64) -> bool {
        false
    }

    /// Choosing `v` leaves the set without `v` and its neighbours. Options that remove the most
    /// vertices come first: the smallest, most often known already.
    fn options(&self, set: u64, out: &mut Vec<(u32, u64)>) {
        let mut rest = set;
        while rest != 0 {
            let v = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let option = set & !(self.rows[v] as u64 | 1 << v);
            out.push((MOST_VERTICES as u32 - (set ^ option).count_ones(), option));
        }
    }

    fn parts(&self, option: u64, mut part: impl FnMut(Part<u64>)) {
        for component in components(self.rows, u128::from(option)) {
            part(match value_of_part(self.rows, component) {
                Some(value) => Part::Valued(value),
                None => Part::Searched(component as u64),
            });
        }
    }
}
