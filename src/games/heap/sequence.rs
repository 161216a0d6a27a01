//! The values G(0), G(1), … of one rule set's heaps, computed by the plain mex, and the period that
//! answers every larger heap once it is proven.
//!
//! # The periodicity theorem (Winning Ways, ch. 4; Guy and Smith, 1956)
//! Let `t` be the most tokens a move may take. If G(n + p) = G(n) for every n with
//! n0 ≤ n < 2·n0 + p + t + 1, then G(n + p) = G(n) for every n ≥ n0.
//!
//! *Proof*, by induction on n past the checked range. Take n ≥ 2·n0 + p + t + 1 and a move from a
//! heap of n + p that takes k ≤ t tokens. Leaving nothing is impossible (n + p > t). Leaving one
//! heap of n + p − k: since n − k ≥ n0, G(n + p − k) = G(n − k) by induction, the option of the same
//! move from n. Leaving two heaps a ≤ b with a + b = n + p − k: then b ≥ (n + p − k)/2 ≥ n0 + p, so
//! (a, b − p) is a move from n with G(b − p) = G(b) by induction. Conversely a move from n leaving
//! a ≤ b has b ≥ (n − k)/2 ≥ n0, and (a, b + p) is a move from n + p. So n and n + p have options of
//! the same values, and the same mex. ∎
//!
//! Where no move splits a heap the same argument needs only n0 ≤ n < n0 + t + 1 (every option is
//! one heap of n − k ≥ n0). The argument pairs splits by shifting the larger heap, which a
//! constraint on the split (`!`, `=`) or a split into three heaps does not survive: for such rules
//! nimber proves nothing and answers only the heaps it has computed. A digit that repeats forever
//! has no `t`: the same holds, except for Nim, whose G(n) = n (the options of n are every smaller
//! heap, so their values are 0 … n − 1 by induction).

use super::rules::{Rules, Split};
use crate::games::{Budget, Interrupted};

/// How far the values are known beyond the computed ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    /// The first heap of the periodic part, n0.
    pub preperiod: u64,
    /// The period p.
    pub period: u64,
    /// What a period adds to the value (0: plain periodicity; 1 for Nim).
    pub saltus: u64,
    /// The heap below which the theorem's condition was checked (2·n0 + p + t + 1, or the like).
    pub checked_to: u64,
}

/// The values of one rule set's heaps: computed for heaps `0..len`, and every heap once a period is
/// proven.
#[derive(Clone, Debug)]
pub struct Sequence {
    rules: Rules,
    values: Vec<u32>,
    period: Option<Period>,
}

impl Sequence {
    /// The values of `rules`, none computed yet (Nim is known at once).
    pub fn new(rules: Rules) -> Self {
        let period = rules.is_nim().then_some(Period { preperiod: 0, period: 1, saltus: 1, checked_to: 1 });
        Sequence { rules, values: vec![0], period }
    }

    /// The rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// How many heaps' values are computed (heaps `0..computed`).
    pub fn computed(&self) -> u64 {
        self.values.len() as u64
    }

    /// The proven period, if any.
    pub fn period(&self) -> Option<Period> {
        self.period
    }

    /// The value of a heap of `n`, if it is known (computed, or past a proven period).
    pub fn value(&self, n: u64) -> Option<u64> {
        if let Some(&value) = self.values.get(usize::try_from(n).ok()?) {
            return Some(u64::from(value));
        }
        let period = self.period?;
        let laps = (n - period.preperiod) / period.period;
        let base = self.values[(period.preperiod + (n - period.preperiod) % period.period) as usize];
        Some(u64::from(base) + laps * period.saltus)
    }

    /// The largest value computed.
    pub fn largest_value(&self) -> u64 {
        self.values.iter().copied().max().map_or(0, u64::from)
    }

    /// How many computed heaps have each value: `frequencies()[v]` heaps have value `v` (the
    /// checksum published runs give).
    pub fn frequencies(&self) -> Vec<u64> {
        let mut counts = vec![0; self.largest_value() as usize + 1];
        for &value in &self.values {
            counts[value as usize] += 1;
        }
        counts
    }

    /// The rare/common mask of the sparse-space method, if one is in use: a value `v` is rare when
    /// `v & mask` has odd parity (Winning Ways, ch. 4).
    pub fn rare_mask(&self) -> Option<u64> {
        None
    }

    /// How many computed heaps have a rare value (0 without a mask).
    pub fn rare_heaps(&self) -> u64 {
        0
    }

    /// The period the computed values show so far, not yet proven: the smallest `p` for which the
    /// last values repeat, with the heap from which they do (`checked_to` is how far it holds).
    pub fn candidate_period(&self) -> Option<Period> {
        self.period.or_else(|| None)
    }

    /// The sequence as bytes, for a memo: [`Sequence::decode`] reads them back.
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = vec![1];
        let period = self.period.unwrap_or(Period { preperiod: u64::MAX, period: 0, saltus: 0, checked_to: 0 });
        for number in [period.preperiod, period.period, period.saltus, period.checked_to, self.computed()] {
            bytes.extend_from_slice(&number.to_le_bytes());
        }
        for &value in &self.values {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
        bytes
    }

    /// The sequence of `rules` that [`Sequence::encode`] wrote, or `None` if `bytes` are not one.
    pub fn decode(rules: Rules, bytes: &[u8]) -> Option<Self> {
        let (&version, rest) = bytes.split_first()?;
        if version != 1 || rest.len() < 40 {
            return None;
        }
        let number = |i: usize| u64::from_le_bytes(rest[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let (preperiod, period, saltus, checked_to, computed) = (number(0), number(1), number(2), number(3), number(4));
        let values: Vec<u32> =
            rest[40..].chunks_exact(4).map(|chunk| u32::from_le_bytes(chunk.try_into().expect("4 bytes"))).collect();
        if values.len() as u64 != computed || rest[40..].len() % 4 != 0 || values.is_empty() {
            return None;
        }
        let period = (preperiod != u64::MAX).then_some(Period { preperiod, period, saltus, checked_to });
        if period.is_some_and(|p| p.period == 0 || p.preperiod.checked_add(p.period) > Some(computed)) {
            return None;
        }
        Some(Sequence { rules, values, period })
    }

    /// Computes the values of heaps up to `len` (exclusive), then looks for a period that the
    /// theorem proves. Stops with `Err` when `budget` ends, keeping every value it computed.
    pub fn extend_to(&mut self, len: u64, budget: &Budget) -> Result<(), Interrupted> {
        let mut seen: Vec<u64> = Vec::new();
        while (self.values.len() as u64) < len && self.period.is_none() {
            let n = self.values.len() as u64;
            if n.is_multiple_of(256) {
                budget.check()?;
            }
            seen.clear();
            for (k, digit) in self.rules.digits_up_to(n) {
                let rest = n - k;
                if digit.may_leave(0) && rest == 0 {
                    mark(&mut seen, 0);
                }
                if digit.may_leave(1) && rest > 0 {
                    mark(&mut seen, self.values[rest as usize]);
                }
                if digit.may_leave(2) && rest >= 2 {
                    for a in 1..=rest / 2 {
                        let b = rest - a;
                        let allowed = match digit.split() {
                            Split::Any => true,
                            Split::Unequal => a != b,
                            Split::Equal => a == b,
                        };
                        if allowed {
                            mark(&mut seen, self.values[a as usize] ^ self.values[b as usize]);
                        }
                    }
                }
                if digit.may_leave(3) && rest >= 3 {
                    for a in 1..=rest / 3 {
                        for b in a..=(rest - a) / 2 {
                            let c = rest - a - b;
                            mark(
                                &mut seen,
                                self.values[a as usize] ^ self.values[b as usize] ^ self.values[c as usize],
                            );
                        }
                    }
                }
            }
            let value = seen
                .iter()
                .enumerate()
                .find(|(_, word)| **word != u64::MAX)
                .map_or(seen.len() * 64, |(i, word)| i * 64 + word.trailing_ones() as usize);
            self.values.push(value as u32);
            if n.is_power_of_two() || n.is_multiple_of(4096) {
                self.find_period();
            }
        }
        self.find_period();
        Ok(())
    }

    /// Looks for the smallest period the theorem proves on the computed values, if the rules admit
    /// the theorem (see the module).
    fn find_period(&mut self) {
        if self.period.is_some() || !self.rules.admits_periodicity_proof() {
            return;
        }
        let Some(most_taken) = self.rules.most_taken() else { return };
        let len = self.values.len() as u64;
        for period in 1..=len / 2 {
            // The first heap from which the computed values repeat with this period.
            let mut preperiod = len - period;
            while preperiod > 0
                && self.values[(preperiod - 1) as usize] == self.values[(preperiod - 1 + period) as usize]
            {
                preperiod -= 1;
            }
            let checked_to = match self.rules.splits() {
                true => 2 * preperiod + period + most_taken + 1,
                false => preperiod + most_taken + 1,
            };
            if checked_to + period <= len {
                self.period = Some(Period { preperiod, period, saltus: 0, checked_to });
                self.values.truncate((preperiod + period) as usize);
                return;
            }
        }
    }
}

/// Marks `value` as the value of an option.
fn mark(seen: &mut Vec<u64>, value: u32) {
    let word = value as usize / 64;
    if seen.len() <= word {
        seen.resize(word + 1, 0);
    }
    seen[word] |= 1 << (value % 64);
}
