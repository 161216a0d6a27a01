//! An open-addressing hash table (linear probing, at most half full) from non-empty sets of
//! placements to what a solve knows about them: key and value share a slot, so a lookup in a
//! table far larger than the caches costs one memory access, not two.

use std::hash::{Hash, Hasher};

use super::bits::FastHasher;

/// Slots of the first allocation.
const FIRST_CAPACITY: usize = 256;

/// A map from keys that are never `K::default()` (the empty set marks a free slot).
pub struct Table<K, V> {
    slots: Vec<(K, V)>,
    len: usize,
}

impl<K: Copy + Eq + Default + Hash, V: Copy + Default> Default for Table<K, V> {
    fn default() -> Self {
        Table { slots: Vec::new(), len: 0 }
    }
}

impl<K: Copy + Eq + Default + Hash, V: Copy + Default> Table<K, V> {
    /// The slot where the search for `key` starts.
    fn home(&self, key: &K) -> usize {
        let mut hasher = FastHasher::default();
        key.hash(&mut hasher);
        hasher.finish() as usize & (self.slots.len() - 1)
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &K) -> Option<V> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let (k, v) = &self.slots[i];
            if k == key {
                return Some(*v);
            }
            if *k == K::default() {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Set the value of `key` (not `K::default()`).
    pub fn insert(&mut self, key: K, value: V) {
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(&key);
        loop {
            let slot = &mut self.slots[i];
            if slot.0 == key {
                slot.1 = value;
                return;
            }
            if slot.0 == K::default() {
                *slot = (key, value);
                self.len += 1;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Double the number of slots.
    fn grow(&mut self) {
        let capacity = (2 * self.slots.len()).max(FIRST_CAPACITY);
        let old = std::mem::replace(&mut self.slots, vec![(K::default(), V::default()); capacity]);
        self.len = 0;
        for (key, value) in old {
            if key != K::default() {
                self.insert(key, value);
            }
        }
    }

    /// How many keys are present.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Remove every key and free the slots.
    pub fn clear(&mut self) {
        self.slots = Vec::new();
        self.len = 0;
    }
}
