//! The rules of a heap game, parsed and put in canonical form. Every rule set nimber knows is a
//! take-and-break code: a subtraction set `{1, 3, 4}` is the code `0.3033`, its "all but" form a
//! code whose last digit repeats forever, and Nim is `0.[3]`.
//!
//! # Code syntax (Winning Ways; CGSuite's `TakeAndBreak`)
//! `d0.d1d2…dt`, where digit `d_k` says what a move taking `k` tokens from a heap may leave: it is
//! the sum of 1 (nothing: the heap was exactly `k`), 2 (one heap), 4 (two heaps) and 8 (three
//! heaps). `d0`, before the point, takes nothing, so it may only split (4 or 8). A digit may be
//! followed by `!` (the heaps it leaves must be pairwise unequal, as in Grundy's game `4!.0`) or
//! `=` (all equal). The last digit may be written `[d]`: it then repeats for every larger `k`
//! (`0.[3]` is Nim). Digits are `0`–`9` and `A`–`F` (hexadecimal, so at most three heaps are left).
//!
//! Left out, and refused with a message that says so: CGSuite's additive digits (more than one
//! digit before the point), digits `G`–`V` (four or more heaps), the `?` constraint, `{…}` heap
//! lists, `&n;` digits, a repeating group of more than one digit, a repeated digit that splits
//! (4 or 8), and `!`/`=` on a digit that may leave three heaps.

use super::HeapsError;

/// The most digits after the point of a code.
pub const MAX_CODE_DIGITS: usize = 32;
/// The most numbers in a subtraction set.
pub const MAX_SUBTRACTION_SET: usize = 64;
/// The largest number in a subtraction set.
pub const MAX_TAKE: u64 = 65_536;

/// How the heaps a move leaves must compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Split {
    /// Any sizes.
    Any,
    /// Pairwise unequal (`!`).
    Unequal,
    /// All equal (`=`).
    Equal,
}

/// One digit of a code: how many heaps a move taking its number of tokens may leave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digit {
    /// Bit `h` set: the move may leave `h` heaps (`h` in 0..=3).
    heaps: u8,
    /// How two or three heaps left must compare.
    split: Split,
}

impl Digit {
    /// Nim's digit: take any tokens, leaving nothing or one heap.
    const TAKE: Digit = Digit { heaps: 0b11, split: Split::Any };

    /// Whether a move may leave `heaps` heaps.
    pub fn may_leave(self, heaps: usize) -> bool {
        heaps < 4 && self.heaps >> heaps & 1 == 1
    }

    /// How the heaps left must compare.
    pub fn split(self) -> Split {
        self.split
    }
}

/// The digits of `code[start..end]` (ASCII), and the digit repeated at its end (`[d]`), if any.
fn parse_digits(code: &str, start: usize, end: usize) -> Result<(Vec<Digit>, Option<Digit>), HeapsError> {
    let bad = |at: usize, why: &'static str| HeapsError::BadCode { code: code.to_string(), at, why };
    let bytes = &code.as_bytes()[..end];
    let mut digits = Vec::new();
    let mut at = start;
    while at < end {
        let repeats = bytes[at] == b'[';
        if repeats {
            at += 1;
        }
        let heaps = match bytes.get(at).map(|&byte| (byte as char).to_digit(16)) {
            Some(Some(value)) => value as u8,
            Some(None) if bytes[at].is_ascii_alphanumeric() => {
                return Err(bad(at, "is past F: a digit may leave at most three heaps (hexadecimal)"))
            }
            _ => return Err(bad(at, "is not a digit 0–9 or A–F")),
        };
        at += 1;
        let split = match bytes.get(at) {
            Some(b'!') => Split::Unequal,
            Some(b'=') => Split::Equal,
            Some(b'?') => return Err(bad(at, "uses the `?` constraint, which is not supported")),
            _ => Split::Any,
        };
        if split != Split::Any {
            if heaps & 0b1000 != 0 {
                return Err(bad(at, "constrains a digit that may leave three heaps, which is not supported"));
            }
            at += 1;
        }
        let digit = Digit { heaps, split: if heaps & 0b0100 != 0 { split } else { Split::Any } };
        if repeats {
            if bytes.get(at) != Some(&b']') || at + 1 != end {
                return Err(bad(at, "must close the repeated digit with `]` at the end (one digit may repeat)"));
            }
            if heaps & 0b1100 != 0 {
                return Err(bad(
                    at - 1,
                    "is repeated and splits, which is not supported: a repeated digit may leave at most one heap",
                ));
            }
            return Ok((digits, Some(digit)));
        }
        digits.push(digit);
    }
    Ok((digits, None))
}

/// The rules of a heap game in canonical form: equivalent codes are equal (and share one memo key).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    /// The nonzero digits, by number of tokens taken, ascending.
    digits: Vec<(u64, Digit)>,
    /// A digit that repeats for every number of tokens from this one on.
    tail: Option<(u64, Digit)>,
}

impl Rules {
    /// Nim: take any number of tokens from one heap.
    pub fn nim() -> Self {
        Rules { digits: Vec::new(), tail: Some((1, Digit::TAKE)) }
    }

    /// The subtraction game of `take` (or, with `all_but`, of every number not in it).
    pub fn subtraction(take: &[u64], all_but: bool) -> Result<Self, HeapsError> {
        if take.len() > MAX_SUBTRACTION_SET {
            return Err(HeapsError::SubtractionSetTooLarge(take.len()));
        }
        if let Some(index) = take.iter().position(|&k| k == 0 || k > MAX_TAKE) {
            return Err(HeapsError::BadTake { index, take: take[index] });
        }
        let mut set = take.to_vec();
        set.sort_unstable();
        set.dedup();
        let last = set.last().copied().unwrap_or(0);
        let digits = match all_but {
            false => set.iter().map(|&k| (k, Digit::TAKE)).collect(),
            true => (1..=last).filter(|k| set.binary_search(k).is_err()).map(|k| (k, Digit::TAKE)).collect(),
        };
        Ok(Rules::canonical(digits, all_but.then_some((last + 1, Digit::TAKE))))
    }

    /// The rules of these digits, in canonical form: listed digits equal to the repeated one and
    /// just before it are part of it (`0.3[3]` is `0.[3]`, Nim).
    fn canonical(mut digits: Vec<(u64, Digit)>, mut tail: Option<(u64, Digit)>) -> Self {
        while let (Some(&(take, digit)), Some((from, repeated))) = (digits.last(), tail) {
            if take + 1 != from || digit != repeated {
                break;
            }
            digits.pop();
            tail = Some((take, repeated));
        }
        Rules { digits, tail }
    }

    /// The rules of a take-and-break code (see the module's syntax).
    pub fn code(code: &str) -> Result<Self, HeapsError> {
        let bad = |at: usize, why: &'static str| HeapsError::BadCode { code: code.to_string(), at, why };
        if let Some(at) = code.chars().position(|c| !c.is_ascii()) {
            return Err(bad(at, "is not a digit 0–9 or A–F"));
        }
        let point = code.find('.').ok_or(bad(0, "has no point"))?;
        let (before, repeated) = parse_digits(code, 0, point)?;
        let d0 = match (before.as_slice(), repeated) {
            (&[d0], None) => d0,
            (_, Some(_)) => return Err(bad(0, "repeats a digit before the point")),
            _ => return Err(bad(0, "needs exactly one digit before the point (additive digits are not supported)")),
        };
        if d0.may_leave(0) || d0.may_leave(1) {
            return Err(bad(0, "is d0, which takes no tokens: it may only leave two or three heaps (4, 8)"));
        }
        let (after, repeated) = parse_digits(code, point + 1, code.len())?;
        if after.len() > MAX_CODE_DIGITS {
            return Err(bad(point + 1 + MAX_CODE_DIGITS, "is past the limit of 32 digits after the point"));
        }
        let listed = std::iter::once(d0).chain(after.iter().copied());
        let digits = listed.zip(0u64..).filter(|(digit, _)| digit.heaps != 0).map(|(digit, k)| (k, digit)).collect();
        let tail = repeated.filter(|digit| digit.heaps != 0).map(|digit| (after.len() as u64 + 1, digit));
        Ok(Rules::canonical(digits, tail))
    }

    /// The digits that apply to a heap of `n`: every `(k, d_k)` with `k ≤ n`, ascending.
    pub fn digits_up_to(&self, n: u64) -> impl Iterator<Item = (u64, Digit)> + '_ {
        let listed = self.digits.iter().copied().take_while(move |&(k, _)| k <= n);
        let repeated = self.tail.into_iter().flat_map(move |(from, digit)| (from..=n).map(move |k| (k, digit)));
        listed.chain(repeated)
    }

    /// The digits listed (not repeated), by number of tokens taken, ascending.
    pub fn listed_digits(&self) -> &[(u64, Digit)] {
        &self.digits
    }

    /// The digit of a move taking `take` tokens, if such a move exists.
    pub fn digit(&self, take: u64) -> Option<Digit> {
        if let Ok(at) = self.digits.binary_search_by_key(&take, |&(k, _)| k) {
            return Some(self.digits[at].1);
        }
        self.tail.filter(|&(from, _)| take >= from).map(|(_, digit)| digit)
    }

    /// The digit repeated forever, and the first number of tokens it takes.
    pub fn tail_digit(&self) -> Option<(u64, Digit)> {
        self.tail
    }

    /// The most tokens one move may take, `None` when a digit repeats forever.
    pub fn most_taken(&self) -> Option<u64> {
        match self.tail {
            Some(_) => None,
            None => Some(self.digits.last().map_or(0, |&(k, _)| k)),
        }
    }

    /// Whether a move may leave two or more heaps.
    pub fn splits(&self) -> bool {
        self.all_digits().any(|digit| digit.may_leave(2) || digit.may_leave(3))
    }

    /// Whether a move may leave three heaps.
    pub fn splits_in_three(&self) -> bool {
        self.all_digits().any(|digit| digit.may_leave(3))
    }

    /// Whether some split must leave unequal or equal heaps.
    pub fn constrains_splits(&self) -> bool {
        self.all_digits().any(|digit| digit.split != Split::Any && digit.may_leave(2))
    }

    /// Whether the periodicity theorem can prove a period for these rules (see
    /// [`super::sequence`]): a bounded take, no split into three heaps, no constrained split.
    /// Nim's period is proven apart.
    pub fn admits_periodicity_proof(&self) -> bool {
        self.most_taken().is_some() && !self.splits_in_three() && !self.constrains_splits()
    }

    /// Whether these are Nim's rules.
    pub fn is_nim(&self) -> bool {
        *self == Rules::nim()
    }

    /// The rules' canonical bytes, the same for equivalent codes: the key of their values in a
    /// memo. Each digit is its number of tokens (8 bytes, big-endian), the heaps it may leave and
    /// its split; a repeated digit follows a 0xFF byte.
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(10 * (self.digits.len() + 1) + 1);
        let push = |bytes: &mut Vec<u8>, (take, digit): (u64, Digit)| {
            bytes.extend_from_slice(&take.to_be_bytes());
            bytes.extend_from_slice(&[digit.heaps, digit.split as u8]);
        };
        for &digit in &self.digits {
            push(&mut bytes, digit);
        }
        if let Some(tail) = self.tail {
            bytes.push(0xFF);
            push(&mut bytes, tail);
        }
        bytes
    }

    fn all_digits(&self) -> impl Iterator<Item = Digit> + '_ {
        self.digits.iter().map(|&(_, digit)| digit).chain(self.tail.map(|(_, digit)| digit))
    }
}
