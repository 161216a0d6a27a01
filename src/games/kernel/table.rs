//! The kernel's table: what one solve knows of its components, in slots of a key and a word of
//! what is known, lossless: a slot holds its whole key, so a lookup never answers for another
//! component. It starts at the size its caller expects to need and doubles when a bucket
//! overflows in a table at least half full, while its bound allows and its owner searches alone
//! (a search that outgrows its table would search again what it replaced). Its memory is on huge
//! pages where the system gives them.
//!
//! Slots come in buckets of three behind a version word (one 64-byte cache line for one-word
//! keys): a key lives in the bucket its hash names, so a lookup reads one line. An insert that
//! finds neither its key nor a free slot there replaces the entry whose search cost least
//! (depth-preferred replacement, as in chess transposition tables), so what was expensive to
//! learn stays and a full table has no cliff.
//!
//! **Shared by threads without locks.** Each bucket is a sequence lock: a writer makes its
//! version odd (a compare-and-swap; a writer that finds it odd drops its entry, which only loses
//! knowledge), writes, and makes it even again; a reader reads the version, the slots and the
//! version again, and takes what it read only when the version was even and unchanged, else
//! answers that it knows nothing. So a reader never pairs one entry's key with another's
//! knowledge: the table stays lossless with any number of threads.

use super::Knowledge;
use crate::limits::advise_huge_pages;
use std::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering};

/// Slots per bucket.
const BUCKET: usize = 3;

/// Fewest buckets a table has.
const MIN_BUCKETS: usize = 1 << 8;

/// A component's key: one word (`u64`) or two (`u128`, for the wider components).
pub trait Key: Copy + Eq + std::fmt::Debug + Send + Sync {
    /// Words a key takes.
    const WORDS: usize;
    /// Words a bucket takes: its version, its keys, what is known of each (0: a free slot), and
    /// padding to a whole number of cache lines where that costs little.
    const BUCKET_WORDS: usize;
    /// The key from its words.
    fn from_words(words: [u64; 2]) -> Self;
    /// The key's words (the second 0 for one-word keys).
    fn to_words(self) -> [u64; 2];
    /// One word that mixes every bit of the key, for its bucket.
    fn folded(self) -> u64;
}

impl Key for u64 {
    const WORDS: usize = 1;
    const BUCKET_WORDS: usize = 8;
    fn from_words(words: [u64; 2]) -> Self {
        words[0]
    }
    fn to_words(self) -> [u64; 2] {
        [self, 0]
    }
    fn folded(self) -> u64 {
        self
    }
}

impl Key for u128 {
    const WORDS: usize = 2;
    const BUCKET_WORDS: usize = 10;
    fn from_words(words: [u64; 2]) -> Self {
        u128::from(words[0]) | u128::from(words[1]) << 64
    }
    fn to_words(self) -> [u64; 2] {
        [self as u64, (self >> 64) as u64]
    }
    fn folded(self) -> u64 {
        (self as u64) ^ (self >> 64) as u64
    }
}

/// A map from a component's key (with the `u8` family of keys it belongs to, so that families
/// share one table) to what a solve knows of it.
pub struct Table<K: Key = u64> {
    /// The buckets, [`Key::BUCKET_WORDS`] words each: the version, then the keys' words, then
    /// what is known of each slot.
    words: Box<[AtomicU64]>,
    /// Entries held.
    len: AtomicUsize,
    /// The most buckets it may grow to.
    most_buckets: usize,
    key: std::marker::PhantomData<K>,
}

/// The top byte of a stored word: the family of its key (so a stored word is never 0).
const FAMILY_SHIFT: u32 = 56;

/// `count` zeroed words (at least one), allocated so that the system zeroes their pages lazily.
fn zeroed_words(count: usize) -> Box<[AtomicU64]> {
    let layout = std::alloc::Layout::array::<AtomicU64>(count.max(1)).expect("a table fits the address space");
    // SAFETY: the layout is not empty; an `AtomicU64` of all zero bits is a valid 0, and a box of
    // a slice owns memory of the global allocator of exactly the layout of its elements.
    let words = unsafe {
        let start = std::alloc::alloc_zeroed(layout).cast::<AtomicU64>();
        if start.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(start, count.max(1)))
    };
    advise_huge_pages(&words);
    words
}

impl<K: Key> Table<K> {
    /// A table of about `bytes` that may grow to `most_bytes` (a power of two of buckets each
    /// time, at least 256). Its memory is zero pages until written (the system zeroes the
    /// allocation lazily).
    pub fn with_bytes(bytes: usize, most_bytes: usize) -> Self {
        let buckets_in = |bytes: usize| {
            let wanted = (bytes / (8 * K::BUCKET_WORDS)).max(MIN_BUCKETS);
            if wanted.is_power_of_two() {
                wanted
            } else {
                wanted.next_power_of_two() / 2
            }
        };
        let most_buckets = buckets_in(most_bytes);
        let buckets = buckets_in(bytes).min(most_buckets);
        Table {
            words: zeroed_words(buckets * K::BUCKET_WORDS),
            len: AtomicUsize::new(0),
            most_buckets,
            key: std::marker::PhantomData,
        }
    }

    /// Buckets it has.
    fn buckets(&self) -> usize {
        self.words.len() / K::BUCKET_WORDS
    }

    /// The most bytes it may grow to.
    pub fn most_bytes(&self) -> usize {
        self.most_buckets * 8 * K::BUCKET_WORDS
    }

    /// Twice the buckets, every entry moved to its bucket there.
    fn grow(&mut self) {
        let doubled = zeroed_words(2 * self.words.len());
        let old = std::mem::replace(&mut self.words, doubled);
        *self.len.get_mut() = 0;
        for bucket in old.chunks(K::BUCKET_WORDS) {
            for slot in 0..BUCKET {
                let stored = bucket[known_word::<K>(slot)].load(Ordering::Relaxed);
                if stored != 0 {
                    let key = key_in::<K>(bucket, slot);
                    let family = (stored >> FAMILY_SHIFT) as u8;
                    self.insert(key, family, Knowledge(stored & !(0xFF << FAMILY_SHIFT)));
                }
            }
        }
    }

    /// Grow to `times` its size, as far as its bound allows.
    pub fn reserve(&mut self, times: usize) {
        let wanted = (self.buckets() * times).min(self.most_buckets);
        while self.buckets() < wanted {
            self.grow();
        }
    }

    /// Bytes the table takes.
    pub fn bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The words of the bucket of a key.
    fn bucket(&self, key: K, family: u8) -> &[AtomicU64] {
        // A multiplicative hash (Fibonacci hashing): the high bits of the product mix every bit
        // of the key.
        let mixed = (key.folded() ^ u64::from(family) << 58).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let index = (mixed >> 32) as usize & (self.buckets() - 1);
        &self.words[index * K::BUCKET_WORDS..(index + 1) * K::BUCKET_WORDS]
    }

    /// Start loading the bucket of `key` of `family` into the cache, for a [`Table::get`] soon.
    #[inline]
    pub fn prefetch(&self, key: K, family: u8) {
        #[cfg(target_arch = "x86_64")]
        {
            let bucket = self.bucket(key, family).as_ptr();
            // SAFETY: a prefetch only hints the cache; the address is that of a live bucket.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(bucket.cast()) };
        }
    }

    /// What is known of `key` of `family` (nothing while another thread writes its bucket).
    #[inline]
    pub fn get(&self, key: K, family: u8) -> Option<Knowledge> {
        let bucket = self.bucket(key, family);
        let version = bucket[0].load(Ordering::Acquire);
        if version & 1 == 1 {
            return None;
        }
        let found = (0..BUCKET).find_map(|slot| {
            let known = bucket[known_word::<K>(slot)].load(Ordering::Relaxed);
            (key_in::<K>(bucket, slot) == key && (known >> FAMILY_SHIFT) as u8 == family)
                .then_some(Knowledge(known & !(0xFF << FAMILY_SHIFT)))
        });
        fence(Ordering::Acquire);
        found.filter(|_| bucket[0].load(Ordering::Relaxed) == version)
    }

    /// Record what is known of `key` of `family` (`family` is not 0), in place of what was, else
    /// in a free slot, else in place of the cheapest entry of its bucket if that cost less; and
    /// make room first if its bucket is full in a table at least half full (see [`Table::share`]
    /// for threads that share it).
    pub fn insert(&mut self, key: K, family: u8, known: Knowledge) {
        if self.share().insert(key, family, known) == Inserted::BucketFull
            && 2 * self.len() >= BUCKET * self.buckets()
            && self.buckets() < self.most_buckets
        {
            // A full bucket in a table at least half full: room for everything, then again.
            // (Growing at three quarters full halves Cram 4×11's memory, 442 MB to 197 MB, and
            // takes a fifth off its time, but a 5×7 board of value 7 then searches 50 % more.)
            self.grow();
            self.insert(key, family, known);
        }
    }

    /// The table as threads share it: it no longer grows.
    pub fn share(&self) -> Shared<'_, K> {
        Shared(self)
    }
}

/// A table shared by threads: lookups and inserts through a shared reference.
#[derive(Clone, Copy)]
pub struct Shared<'t, K: Key>(&'t Table<K>);

/// How an insert went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Inserted {
    /// The entry is in the table.
    Stored,
    /// Its bucket was full: it replaced a cheaper entry, or was dropped as the cheapest.
    BucketFull,
    /// Another thread was writing the bucket: the entry was dropped.
    Busy,
}

impl<K: Key> Shared<'_, K> {
    /// What is known of `key` of `family`.
    pub fn get(self, key: K, family: u8) -> Option<Knowledge> {
        self.0.get(key, family)
    }

    /// Start loading the bucket of a key.
    pub fn prefetch(self, key: K, family: u8) {
        self.0.prefetch(key, family)
    }

    /// Record what is known of `key` of `family`, as [`Table::insert`] does but without growing.
    fn insert(self, key: K, family: u8, known: Knowledge) -> Inserted {
        debug_assert!(family != 0 && known.0 >> FAMILY_SHIFT == 0);
        let bucket = self.0.bucket(key, family);
        let version = bucket[0].load(Ordering::Relaxed);
        if version & 1 == 1
            || bucket[0].compare_exchange(version, version + 1, Ordering::Acquire, Ordering::Relaxed).is_err()
        {
            return Inserted::Busy;
        }
        fence(Ordering::Release);
        let stored = known.0 | u64::from(family) << FAMILY_SHIFT;
        let mut cheapest = 0;
        let mut inserted = Inserted::BucketFull;
        for slot in 0..BUCKET {
            let old = bucket[known_word::<K>(slot)].load(Ordering::Relaxed);
            if old == 0 {
                set_slot(bucket, slot, key, stored);
                self.0.len.fetch_add(1, Ordering::Relaxed);
                inserted = Inserted::Stored;
                break;
            }
            if key_in::<K>(bucket, slot) == key && (old >> FAMILY_SHIFT) as u8 == family {
                set_slot(bucket, slot, key, stored);
                inserted = Inserted::Stored;
                break;
            }
            if Knowledge(old).cost() < Knowledge(bucket[known_word::<K>(cheapest)].load(Ordering::Relaxed)).cost() {
                cheapest = slot;
            }
        }
        if inserted == Inserted::BucketFull
            && Knowledge(bucket[known_word::<K>(cheapest)].load(Ordering::Relaxed)).cost() <= known.cost()
        {
            set_slot(bucket, cheapest, key, stored);
        }
        bucket[0].store(version + 2, Ordering::Release);
        inserted
    }

    /// Record what is known of `key` of `family` (dropped when another thread writes its
    /// bucket, which only loses knowledge).
    pub fn record(self, key: K, family: u8, known: Knowledge) {
        self.insert(key, family, known);
    }
}

/// The word of a bucket that says what is known of slot `slot`.
fn known_word<K: Key>(slot: usize) -> usize {
    1 + K::WORDS * BUCKET + slot
}

/// The key in slot `slot` of a bucket.
fn key_in<K: Key>(bucket: &[AtomicU64], slot: usize) -> K {
    let first = 1 + K::WORDS * slot;
    let low = bucket[first].load(Ordering::Relaxed);
    let high = if K::WORDS > 1 { bucket[first + 1].load(Ordering::Relaxed) } else { 0 };
    K::from_words([low, high])
}

/// Fill slot `slot` of a bucket (its writer holds the bucket's version odd).
fn set_slot<K: Key>(bucket: &[AtomicU64], slot: usize, key: K, stored: u64) {
    let first = 1 + K::WORDS * slot;
    let words = key.to_words();
    bucket[first].store(words[0], Ordering::Relaxed);
    if K::WORDS > 1 {
        bucket[first + 1].store(words[1], Ordering::Relaxed);
    }
    bucket[known_word::<K>(slot)].store(stored, Ordering::Relaxed);
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
