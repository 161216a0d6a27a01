//! An open-addressing hash table from non-empty sets of placements to what a solve knows about
//! them, bounded in bytes, that keeps its valuable entries when full.
//!
//! Key and value share a slot, so a lookup in a table far larger than the caches costs one memory
//! access, not two. A key lives within [`PROBES`] slots of its home slot (linear probing, never a
//! hole: entries are only ever replaced, never removed). The table doubles at three quarters full,
//! or when a key finds its probe range crowded in a table at least half full, while the byte
//! budget it shares with the other tables of the solve allows; otherwise an insert that finds
//! neither its key nor a free slot among the [`PROBES`] replaces the least valuable
//! entry there (the one whose search cost least: depth-preferred replacement, as in chess
//! transposition tables), so what was expensive to learn stays and throughput has no cliff.

use std::hash::{BuildHasher, Hash};

/// Slots of the first allocation.
const FIRST_CAPACITY: usize = 256;

/// Slots an entry may lie past its home slot.
pub const PROBES: usize = 8;

/// A value that says how much it is worth keeping.
pub trait Worth {
    /// Larger is more valuable.
    fn worth(&self) -> u8;
}

/// Where a key goes among the slots of its probe range.
enum Probe {
    /// Its own slot.
    Own(usize),
    /// A free slot (the key is absent).
    Free(usize),
    /// The key is absent and every slot is taken: the least valuable one.
    Crowded(usize),
}

/// A map from keys that are never `K::default()` (the empty set marks a free slot).
pub struct Table<K, V> {
    slots: Vec<(K, V)>,
    len: usize,
}

impl<K: Copy + Eq + Default + Hash, V: Copy + Default + Worth> Default for Table<K, V> {
    fn default() -> Self {
        Table { slots: Vec::new(), len: 0 }
    }
}

impl<K: Copy + Eq + Default + Hash, V: Copy + Default + Worth> Table<K, V> {
    /// Bytes of one slot.
    pub const SLOT_BYTES: usize = std::mem::size_of::<(K, V)>();

    /// The slot where the search for `key` starts.
    fn home(&self, key: &K) -> usize {
        foldhash::fast::FixedState::with_seed(0).hash_one(key) as usize & (self.slots.len() - 1)
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &K) -> Option<V> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        for _ in 0..PROBES {
            let (k, v) = &self.slots[i];
            if k == key {
                return Some(*v);
            }
            if *k == K::default() {
                return None;
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// Set the value of `key` (not `K::default()`), growing first if the table is three quarters
    /// full and `room` (bytes the tables may still allocate, shared) allows; otherwise possibly
    /// in place of a less valuable entry.
    pub fn insert(&mut self, key: K, value: V, room: &mut usize) {
        if 4 * (self.len + 1) > 3 * self.slots.len() {
            self.grow(room);
        }
        if self.slots.is_empty() {
            return;
        }
        match self.probe(&key) {
            Probe::Own(i) => self.slots[i].1 = value,
            Probe::Free(i) => {
                self.slots[i] = (key, value);
                self.len += 1;
            }
            // A crowded neighbourhood in a table at least half full: more room if there is any,
            // else the least valuable goes.
            Probe::Crowded(_) if 2 * self.len >= self.slots.len() && self.grow(room) => self.place(key, value),
            Probe::Crowded(least) => self.slots[least] = (key, value),
        }
    }

    /// Where `key` goes in its probe range (the table has slots).
    fn probe(&self, key: &K) -> Probe {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        let mut least = i;
        for _ in 0..PROBES {
            let slot = &self.slots[i];
            if slot.0 == *key {
                return Probe::Own(i);
            }
            if slot.0 == K::default() {
                return Probe::Free(i);
            }
            if slot.1.worth() < self.slots[least].1.worth() {
                least = i;
            }
            i = (i + 1) & mask;
        }
        Probe::Crowded(least)
    }

    /// Put `key` in its probe range: in its own slot, a free one, or the least valuable one.
    fn place(&mut self, key: K, value: V) {
        match self.probe(&key) {
            Probe::Own(i) | Probe::Crowded(i) => self.slots[i] = (key, value),
            Probe::Free(i) => {
                self.slots[i] = (key, value);
                self.len += 1;
            }
        }
    }

    /// Double the number of slots if `room` allows; whether it did.
    fn grow(&mut self, room: &mut usize) -> bool {
        let capacity = (2 * self.slots.len()).max(FIRST_CAPACITY);
        let bytes = capacity * Self::SLOT_BYTES;
        if bytes > *room {
            return false;
        }
        *room -= bytes;
        let old = std::mem::replace(&mut self.slots, slots_on_huge_pages(capacity));
        *room += old.len() * Self::SLOT_BYTES;
        self.len = 0;
        for (key, value) in old {
            if key != K::default() {
                self.place(key, value);
            }
        }
        true
    }

    /// How many keys are present.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }
}

/// The smallest table whose slots are asked to lie on huge pages: a lookup in a table of many
/// small pages misses the TLB, and the page walk costs a second trip to memory.
const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// `capacity` free slots, on transparent huge pages where the kernel gives them (Linux with
/// `transparent_hugepage` set to `madvise` or `always`): the pages are advised before the slots
/// are written, which is when they are first faulted in.
fn slots_on_huge_pages<T: Copy + Default>(capacity: usize) -> Vec<T> {
    let mut slots = Vec::with_capacity(capacity);
    let bytes = capacity * std::mem::size_of::<T>();
    #[cfg(target_os = "linux")]
    if bytes >= HUGE_PAGE_MIN_BYTES {
        const HUGE_PAGE: usize = 2 << 20;
        let start = slots.as_ptr() as usize;
        let first = start.next_multiple_of(HUGE_PAGE);
        let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
        if end > first {
            // SAFETY: the range lies inside the allocation just made, and the advice changes only
            // how the kernel backs its pages, never their contents.
            unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
        }
    }
    slots.resize(capacity, T::default());
    slots
}

/// Shards of a [`SharedTable`]: enough that threads seldom wait for one another.
const SHARDS: usize = 64;

/// A [`Table`] that the threads searching one position share: split into shards, each behind its
/// own lock and with its own share of the bytes.
pub struct SharedTable<K, V> {
    shards: Box<[std::sync::Mutex<Shard<K, V>>]>,
}

/// One shard of a [`SharedTable`]: its table and the bytes it may still allocate.
type Shard<K, V> = (Table<K, V>, usize);

impl<K: Copy + Eq + Default + Hash, V: Copy + Default + Worth> SharedTable<K, V> {
    /// An empty table that may allocate `bytes` in all.
    pub fn new(bytes: usize) -> Self {
        let shards = (0..SHARDS).map(|_| std::sync::Mutex::new((Table::default(), bytes / SHARDS))).collect();
        SharedTable { shards }
    }

    /// The shard of `key` (by other bits of its hash than those that choose its slot).
    fn shard(&self, key: &K) -> std::sync::MutexGuard<'_, Shard<K, V>> {
        let hash = foldhash::fast::FixedState::with_seed(1).hash_one(key) as usize;
        // A thread that panicked while holding a shard left a table that is still well formed.
        self.shards[hash % SHARDS].lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &K) -> Option<V> {
        self.shard(key).0.get(key)
    }

    /// Set the value of `key` to `merge` of what was there (if anything) and return it.
    pub fn merge(&self, key: K, merge: impl FnOnce(Option<V>) -> V) -> V {
        let mut shard = self.shard(&key);
        let (table, room) = &mut *shard;
        let value = merge(table.get(&key));
        table.insert(key, value, room);
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Default, Debug, PartialEq)]
    struct Cost(u8);

    impl Worth for Cost {
        fn worth(&self) -> u8 {
            self.0
        }
    }

    #[test]
    fn a_full_table_keeps_its_valuable_entries_within_its_bytes() {
        let slot = Table::<u64, Cost>::SLOT_BYTES;
        let mut room = FIRST_CAPACITY * slot;
        let mut table = Table::<u64, Cost>::default();
        // Valuable entries first, then many cheap ones: the table cannot grow past its room.
        for key in 1..=20u64 {
            table.insert(key, Cost(200), &mut room);
        }
        for key in 1000..20_000u64 {
            table.insert(key, Cost(1), &mut room);
        }
        assert_eq!(table.slots.len(), FIRST_CAPACITY);
        assert!(table.len() <= FIRST_CAPACITY);
        assert!((1..=20u64).all(|key| table.get(&key) == Some(Cost(200))));
        // The latest cheap entry is there too.
        assert_eq!(table.get(&19_999), Some(Cost(1)));
    }

    #[test]
    fn a_table_grows_while_its_room_allows() {
        let mut room = usize::MAX / 2;
        let mut table = Table::<u64, Cost>::default();
        for key in 1..=10_000u64 {
            table.insert(key, Cost(0), &mut room);
        }
        // Below half full a crowded probe range replaces rather than grows: a few keys go.
        assert!(table.len() >= 9_900, "{}", table.len());
        assert!(table.len() <= 3 * table.slots.len() / 4);
        assert!((1..=10_000u64).filter(|key| table.get(key) == Some(Cost(0))).count() == table.len());
        assert_eq!(room, usize::MAX / 2 - table.slots.len() * Table::<u64, Cost>::SLOT_BYTES);
    }
}
