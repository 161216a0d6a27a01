//! The kernel's table: what one solve knows of its components, in slots of a key and a word of
//! what is known, lossless: a slot holds its whole key, so a lookup never answers for another
//! component. It starts at the size its caller expects to need and doubles when a bucket
//! overflows in a table at least half full, while its bound allows (a search that outgrows its
//! table would search again what it replaced). Its memory is on huge pages where the system gives
//! them.
//!
//! Slots come in buckets of four (one 64-byte cache line for one-word keys): a key lives in the
//! bucket its hash names, so a lookup reads one line. An insert that finds neither its key nor a
//! free slot there replaces the entry whose search cost least (depth-preferred replacement, as in
//! chess transposition tables), so what was expensive to learn stays and a full table has no cliff.

use super::Knowledge;
use crate::limits::advise_huge_pages;

/// Slots per bucket.
const BUCKET: usize = 4;

/// Fewest buckets a table has.
const MIN_BUCKETS: usize = 1 << 8;

/// A component's key: one word (`u64`) or two (`u128`, for the wider components). A bucket is
/// plain words, the keys' then what is known of each (0: a free slot), so that a table is
/// allocated zeroed by the system and its pages are touched only when written.
pub trait Key: Copy + Eq + std::fmt::Debug {
    /// A bucket of four keys and their knowledge.
    type Bucket: Copy + Default + AsRef<[u64]> + AsMut<[u64]>;
    /// Words a key takes.
    const WORDS: usize;
    /// The key from its words.
    fn from_words(words: &[u64]) -> Self;
    /// The key's words, into `words`.
    fn to_words(self, words: &mut [u64]);
    /// One word that mixes every bit of the key, for its bucket.
    fn folded(self) -> u64;
}

impl Key for u64 {
    type Bucket = [u64; 2 * BUCKET];
    const WORDS: usize = 1;
    fn from_words(words: &[u64]) -> Self {
        words[0]
    }
    fn to_words(self, words: &mut [u64]) {
        words[0] = self;
    }
    fn folded(self) -> u64 {
        self
    }
}

impl Key for u128 {
    type Bucket = [u64; 3 * BUCKET];
    const WORDS: usize = 2;
    fn from_words(words: &[u64]) -> Self {
        u128::from(words[0]) | u128::from(words[1]) << 64
    }
    fn to_words(self, words: &mut [u64]) {
        words[0] = self as u64;
        words[1] = (self >> 64) as u64;
    }
    fn folded(self) -> u64 {
        (self as u64) ^ (self >> 64) as u64
    }
}

/// A map from a component's key (with the `u8` family of keys it belongs to, so that families
/// share one table) to what a solve knows of it.
pub struct Table<K: Key = u64> {
    buckets: Vec<K::Bucket>,
    len: usize,
    /// The most buckets it may grow to.
    most_buckets: usize,
}

/// The top byte of a stored word: the family of its key (so a stored word is never 0).
const FAMILY_SHIFT: u32 = 56;

/// The key in slot `i` of a bucket.
fn key_at<K: Key>(bucket: &K::Bucket, i: usize) -> K {
    K::from_words(&bucket.as_ref()[K::WORDS * i..K::WORDS * (i + 1)])
}

/// What is known in slot `i` of a bucket (0: the slot is free).
fn known_at<K: Key>(bucket: &K::Bucket, i: usize) -> u64 {
    bucket.as_ref()[K::WORDS * BUCKET + i]
}

/// Fill slot `i` of a bucket.
fn set_slot<K: Key>(bucket: &mut K::Bucket, i: usize, key: K, stored: u64) {
    let words = bucket.as_mut();
    key.to_words(&mut words[K::WORDS * i..K::WORDS * (i + 1)]);
    words[K::WORDS * BUCKET + i] = stored;
}

impl<K: Key> Table<K> {
    /// A table of about `bytes` that may grow to `most_bytes` (a power of two of buckets each
    /// time, at least 256). Its memory is zero pages until written (the system zeroes the
    /// allocation lazily).
    pub fn with_bytes(bytes: usize, most_bytes: usize) -> Self {
        let buckets_in = |bytes: usize| {
            let wanted = (bytes / std::mem::size_of::<K::Bucket>()).max(MIN_BUCKETS);
            if wanted.is_power_of_two() {
                wanted
            } else {
                wanted.next_power_of_two() / 2
            }
        };
        let most_buckets = buckets_in(most_bytes);
        let buckets = vec![K::Bucket::default(); buckets_in(bytes).min(most_buckets)];
        advise_huge_pages(&buckets);
        Table { buckets, len: 0, most_buckets }
    }

    /// The most bytes it may grow to.
    pub fn most_bytes(&self) -> usize {
        self.most_buckets * std::mem::size_of::<K::Bucket>()
    }

    /// Twice the buckets, every entry moved to its bucket there.
    fn grow(&mut self) {
        let doubled = vec![K::Bucket::default(); 2 * self.buckets.len()];
        advise_huge_pages(&doubled);
        let old = std::mem::replace(&mut self.buckets, doubled);
        self.len = 0;
        for bucket in old {
            for i in 0..BUCKET {
                let stored = known_at::<K>(&bucket, i);
                if stored != 0 {
                    let family = (stored >> FAMILY_SHIFT) as u8;
                    self.insert(key_at(&bucket, i), family, Knowledge(stored & !(0xFF << FAMILY_SHIFT)));
                }
            }
        }
    }

    /// Bytes the table takes.
    pub fn bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<K::Bucket>()
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bucket of a key.
    fn bucket(&self, key: K, family: u8) -> usize {
        // A multiplicative hash (Fibonacci hashing): the high bits of the product mix every bit
        // of the key.
        let mixed = (key.folded() ^ u64::from(family) << 58).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> 32) as usize & (self.buckets.len() - 1)
    }

    /// Start loading the bucket of `key` of `family` into the cache, for a [`Table::get`] soon.
    #[inline]
    pub fn prefetch(&self, key: K, family: u8) {
        #[cfg(target_arch = "x86_64")]
        {
            let bucket: *const K::Bucket = &self.buckets[self.bucket(key, family)];
            // SAFETY: a prefetch only hints the cache; the address is that of a live bucket.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(bucket.cast()) };
        }
    }

    /// What is known of `key` of `family`.
    #[inline]
    pub fn get(&self, key: K, family: u8) -> Option<Knowledge> {
        let bucket = &self.buckets[self.bucket(key, family)];
        (0..BUCKET).find_map(|i| {
            let known = known_at::<K>(bucket, i);
            (key_at::<K>(bucket, i) == key && (known >> FAMILY_SHIFT) as u8 == family)
                .then_some(Knowledge(known & !(0xFF << FAMILY_SHIFT)))
        })
    }

    /// Record what is known of `key` of `family` (`family` is not 0), in place of what was, else
    /// in a free slot, else in place of the cheapest entry of its bucket if that cost less.
    pub fn insert(&mut self, key: K, family: u8, known: Knowledge) {
        debug_assert!(family != 0 && known.0 >> FAMILY_SHIFT == 0);
        let index = self.bucket(key, family);
        let bucket = &mut self.buckets[index];
        let stored = known.0 | u64::from(family) << FAMILY_SHIFT;
        let mut cheapest = 0;
        for i in 0..BUCKET {
            let old = known_at::<K>(bucket, i);
            if old == 0 {
                set_slot(bucket, i, key, stored);
                self.len += 1;
                return;
            }
            if key_at::<K>(bucket, i) == key && (old >> FAMILY_SHIFT) as u8 == family {
                set_slot(bucket, i, key, stored);
                return;
            }
            if Knowledge(old).cost() < Knowledge(known_at::<K>(bucket, cheapest)).cost() {
                cheapest = i;
            }
        }
        if 2 * self.len >= BUCKET * self.buckets.len() && self.buckets.len() < self.most_buckets {
            // A full bucket in a table at least half full: room for everything, then try again.
            // (Growing at three quarters full halves Cram 4×11's memory, 442 MB to 197 MB, and
            // takes a fifth off its time, but a 5×7 board of value 7 then searches 50 % more.)
            self.grow();
            return self.insert(key, family, known);
        }
        let bucket = &mut self.buckets[index];
        if Knowledge(known_at::<K>(bucket, cheapest)).cost() <= known.cost() {
            set_slot(bucket, cheapest, key, stored);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Random keys and knowledge against a plain map: every answer the table gives is the map's
    /// (lossless), and while nothing is replaced it answers for every key.
    #[test]
    fn the_table_answers_only_what_was_stored_under_that_key() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for bytes in [1 << 14, 1 << 20] {
            let mut table = Table::with_bytes(bytes / 4, bytes);
            let mut map = HashMap::new();
            for _ in 0..20_000 {
                // Few distinct keys and families, so that keys meet again and collide.
                let (key, family) = (next() % 5_000, (next() % 3 + 1) as u8);
                let known = Knowledge::known((next() % 30) as u8).with_cost(next() % 1000);
                table.insert(key, family, known);
                map.insert((key, family), known);
            }
            let mut found = 0;
            for (&(key, family), &known) in &map {
                if let Some(got) = table.get(key, family) {
                    assert_eq!(got, known, "key {key} family {family}");
                    found += 1;
                }
            }
            assert!(table.get(5_000, 1).is_none());
            if bytes == 1 << 20 {
                // Room for 65 536 slots, for at most 15 000 keys: few buckets overflow.
                assert!(found * 10 >= map.len() * 9, "{found} of {}", map.len());
            }
            assert_eq!(table.len(), table.len().min(map.len()));
        }
    }
}
