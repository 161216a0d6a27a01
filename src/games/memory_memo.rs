//! [`MemoryMemo`]: a memo kept in memory, for the games' tests: it remembers values and bytes as a
//! store does, with no disk and no bound.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{GameTag, Memo};
use crate::sync::lock;

/// What the memo holds under a game and a key.
type Held<T> = Mutex<HashMap<(GameTag, Vec<u8>), T>>;

/// A memo kept in memory: every value and every bytes put, under their game and key.
#[derive(Default)]
pub(crate) struct MemoryMemo {
    values: Held<u64>,
    bytes: Held<Vec<u8>>,
}

impl MemoryMemo {
    /// How many values it holds.
    pub(crate) fn values(&self) -> usize {
        lock(&self.values).len()
    }
}

impl Memo for MemoryMemo {
    fn get(&self, game: GameTag, key: &[u8]) -> Option<u64> {
        lock(&self.values).get(&(game, key.to_vec())).copied()
    }

    fn put(&self, game: GameTag, key: &[u8], value: u64, _cost: u64) {
        lock(&self.values).insert((game, key.to_vec()), value);
    }

    fn flush(&self) {}

    fn get_bytes(&self, game: GameTag, key: &[u8]) -> Option<Vec<u8>> {
        lock(&self.bytes).get(&(game, key.to_vec())).cloned()
    }

    fn put_bytes(&self, game: GameTag, key: &[u8], bytes: Vec<u8>, _cost: u64) {
        lock(&self.bytes).insert((game, key.to_vec()), bytes);
    }
}
