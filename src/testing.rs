//! Support shared by the unit tests, the integration tests, the benchmarks and the load generator,
//! written once: random positions and boards drawn with [`SplitMix`](crate::random::SplitMix), a
//! brute force of the 2×2 placement game from its literal rules, the accepted contest rule of
//! HDU 5708, filling a store, and the first-end-wins rule of job stores. The harness that starts
//! the real server is `tests/common`.

use std::collections::HashMap;

use crate::cache::Store;
use crate::games::{GameTag, Memo};
use crate::jobs::{new_name, status, JobRecord, JobRecords, Put, StoreError};
use crate::proto;
use crate::random::SplitMix;
use prost::Message;

/// The largest sides the tests draw for positions that are not huge: brute forces stay fast.
pub const SMALL_SIDES: u64 = 9;

pub use crate::random::random_board;
pub use crate::wire::{board_position, random_position};

/// Puts `count` distinct random values into `store` (24-byte keys, like small canonical components
/// of boards; values below 64, costs below 2^20) and waits until they are on disk, every 50 000
/// values too, so that the write buffer never overflows.
pub fn fill_store(store: &Store, random: &mut SplitMix, count: u64) {
    for i in 0..count {
        if i % 50_000 == 0 {
            store.sync().expect("the values are written");
        }
        let key: Vec<u8> = (0..3).flat_map(|_| random.next_u64().to_le_bytes()).collect();
        store.put(GameTag::Tetris, &key, random.below(64), random.below(1 << 20));
    }
    store.sync().expect("the values are written");
}

/// Checks that a job store's rows come in order, at most `limit` of them and within `max_bytes`
/// (the first row always, however large): ListExploreRows' pages and the rows inlined in a result
/// stay bounded whatever a family's rows weigh.
pub fn check_rows_are_bounded(store: &dyn JobRecords) {
    let mut record = JobRecord { name: new_name(), ..Default::default() };
    record.progress_mut().set_state(proto::ExploreState::Running);
    store.create(&record).expect("created");
    let row = |heap: u64| proto::ExploreRow { heap, values: vec![7; 100], ..Default::default() };
    let rows: Vec<proto::ExploreRow> = (0..10).map(|index| row(index * 100)).collect();
    assert!(store.put_items(&record.name, 0, &rows).expect("saved"));
    let size = rows[2].encoded_len(); // rows 2 to 9 have the same size (their heaps take two bytes)
    let heaps = |rows: Vec<proto::ExploreRow>| rows.iter().map(|row| row.heap).collect::<Vec<_>>();
    assert_eq!(heaps(store.rows(&record.name, 2, 5, usize::MAX).expect("read").rows), [200, 300, 400, 500, 600]);
    assert_eq!(
        heaps(store.rows(&record.name, 2, 5, 3 * size).expect("read").rows),
        [200, 300, 400],
        "three rows' bytes"
    );
    assert_eq!(heaps(store.rows(&record.name, 2, 5, 3 * size - 1).expect("read").rows), [200, 300]);
    assert_eq!(heaps(store.rows(&record.name, 9, 5, 1).expect("read").rows), [900], "the first row however large");
    assert_eq!(heaps(store.rows(&record.name, 0, 100, usize::MAX).expect("read").rows).len(), 10, "no more than saved");
    store.delete(&record).expect("deleted");
}

/// Checks the first-end-wins rule of a job store ([`JobRecords::put`]): a job that runs is
/// cancelled (as by CancelOperation on another replica), then its run ends in success a moment
/// later and saves its progress: the record stays cancelled, and takes no items; once deleted, it
/// is never written again. Panics, naming the step, otherwise.
pub fn check_first_end_wins(store: &dyn JobRecords) {
    let mut running =
        JobRecord { name: new_name(), request: Some(proto::ExploreRequest::default()), ..Default::default() };
    running.progress_mut().set_state(proto::ExploreState::Queued);
    assert_eq!(store.create(&running).expect("created"), None);
    running.progress_mut().set_state(proto::ExploreState::Running);
    assert_eq!(store.put(&running).expect("saved"), Put::Saved, "a running job's record is saved");

    let mut cancelled = running.clone();
    cancelled.finish(proto::ExploreState::Cancelled, Some(status(tonic::Code::Cancelled, "cancelled")));
    assert_eq!(store.put(&cancelled).expect("saved"), Put::Saved, "the first end is saved");
    let mut succeeded = running.clone();
    succeeded.result = Some(proto::ExploreResult::default());
    succeeded.finish(proto::ExploreState::Succeeded, None);
    assert_eq!(store.put(&succeeded).expect("answered"), Put::Ended, "a second end is not saved");
    running.progress_mut().items_done = 1;
    assert_eq!(store.put(&running).expect("answered"), Put::Ended, "progress is not saved over an end");
    assert!(!store.put_item(&running.name, 0, &proto::ExploreRow::default()).expect("answered"), "nor an item");
    assert!(matches!(store.create(&running), Err(StoreError::NameTaken(_))), "a name is never given twice");

    let stored = store.get(&running.name).expect("read").expect("the record exists");
    assert_eq!(stored.state(), proto::ExploreState::Cancelled, "{stored:?}");
    assert_eq!(stored, cancelled);

    // A job whose record is gone (deleted, or lost by the store) writes nothing more.
    store.delete(&cancelled).expect("deleted");
    assert_eq!(store.put(&running).expect("answered"), Put::Gone, "a gone record is not made anew");
    assert_eq!(store.put(&succeeded).expect("answered"), Put::Gone, "nor ended");
    assert_eq!(store.get(&running.name).expect("read"), None);
}

/// The rows of a `height`×`width` board whose free cells are the bits of `free` (bit
/// `row·width + column`), as [`BoardBruteForce`] numbers them.
pub fn rows_of(height: usize, width: usize, free: u64) -> Vec<String> {
    (0..height)
        .map(|r| (0..width).map(|c| if free >> (r * width + c) & 1 == 1 { '0' } else { '1' }).collect())
        .collect()
}

/// The bitmask of the free cells (`0`) of `rows`, bit `row·width + column`: the inverse of
/// [`rows_of`]. Panics past 64 cells.
pub fn free_of(rows: &[String]) -> u64 {
    let width = rows.first().map_or(0, String::len);
    rows.iter()
        .enumerate()
        .flat_map(|(r, row)| row.bytes().enumerate().map(move |(c, cell)| (r * width + c, cell)))
        .filter(|&(_, cell)| cell == b'0')
        .fold(0, |free, (bit, _)| free | 1 << bit)
}

/// A 16×16 board whose free cells are one path of 136 cells, winding: the even rows free, each
/// odd row free in one end cell, alternately the last and the first.
pub fn winding_path() -> Vec<String> {
    (0..16)
        .map(|r| match r % 4 {
            0 | 2 => "0".repeat(16),
            1 => "1".repeat(15) + "0",
            _ => "0".to_string() + &"1".repeat(15),
        })
        .collect()
}

/// The board shapes on which the placement games are checked against [`BoardBruteForce`] on every
/// board: every shape up to 4×4, and long thin ones up to 18 cells, both ways round.
pub fn small_board_shapes() -> Vec<(usize, usize)> {
    let mut shapes: Vec<(usize, usize)> = (1..=4).flat_map(|h| (1..=4).map(move |w| (h, w))).collect();
    for (height, width) in [(2, 7), (3, 5), (2, 9), (3, 6), (1, 18)] {
        shapes.push((height, width));
        shapes.push((width, height));
    }
    shapes
}

/// A board game from its literal rules, on boards of at most 64 cells: a board is the bitmask of
/// its free cells (bit `row·width + column`), a move needs the cells of one piece free and blocks
/// them: a 2×2 square ([`BoardBruteForce::new`]) or a domino ([`BoardBruteForce::cram`]); or, in
/// Node Kayles ([`BoardBruteForce::node_kayles`]), needs one cell free and blocks it and its
/// neighbours. Grundy values are memoized per whole board in a `HashMap`: no splitting into
/// components, no symmetry. It is the reference of the engines' tests and the plain baseline of the
/// 2×2 game's benchmark.
pub struct BoardBruteForce {
    /// The cells each move needs free.
    pieces: Vec<u64>,
    /// The cells each move blocks (those of its piece, but in Node Kayles).
    taken: Vec<u64>,
    memo: HashMap<u64, u64>,
}

impl BoardBruteForce {
    /// The 2×2 game on a `height`×`width` board. Panics unless `height·width ≤ 64`.
    pub fn new(height: usize, width: usize) -> BoardBruteForce {
        BoardBruteForce::with_pieces(height, width, &[&[(0, 0), (0, 1), (1, 0), (1, 1)]])
    }

    /// Cram on a `height`×`width` board: a domino either way round. Panics unless
    /// `height·width ≤ 64`.
    pub fn cram(height: usize, width: usize) -> BoardBruteForce {
        BoardBruteForce::with_pieces(height, width, &[&[(0, 0), (0, 1)], &[(0, 0), (1, 0)]])
    }

    /// The game whose moves are the `shapes` (cells as `(row, column)` offsets from the first),
    /// wherever they fit on a `height`×`width` board.
    fn with_pieces(height: usize, width: usize, shapes: &[&[(usize, usize)]]) -> BoardBruteForce {
        assert!(height * width <= 64, "a {height}×{width} board has more than 64 cells");
        let mut pieces = Vec::new();
        for row in 0..height {
            for column in 0..width {
                for shape in shapes {
                    if shape.iter().all(|&(r, c)| row + r < height && column + c < width) {
                        pieces
                            .push(shape.iter().fold(0, |piece, &(r, c)| piece | 1 << ((row + r) * width + column + c)));
                    }
                }
            }
        }
        BoardBruteForce { taken: pieces.clone(), pieces, memo: HashMap::new() }
    }

    /// Node Kayles on a `height`×`width` board: a move chooses a free cell and blocks it and the
    /// cells beside it. Panics unless `height·width ≤ 64`.
    pub fn node_kayles(height: usize, width: usize) -> BoardBruteForce {
        assert!(height * width <= 64, "a {height}×{width} board has more than 64 cells");
        let cell = |r: usize, c: usize| 1u64 << (r * width + c);
        let (mut pieces, mut taken) = (Vec::new(), Vec::new());
        for r in 0..height {
            for c in 0..width {
                let beside = [(r > 0).then(|| cell(r - 1, c)), (r + 1 < height).then(|| cell(r + 1, c))]
                    .into_iter()
                    .chain([(c > 0).then(|| cell(r, c - 1)), (c + 1 < width).then(|| cell(r, c + 1))]);
                pieces.push(cell(r, c));
                taken.push(beside.flatten().fold(cell(r, c), |all, other| all | other));
            }
        }
        BoardBruteForce { pieces, taken, memo: HashMap::new() }
    }

    /// The 2×2 game on the board `rows` (`0` a free cell, anything else blocked), and the bitmask
    /// of its free cells. Panics unless the board is a non-empty rectangle of at most 64 cells.
    pub fn for_rows(rows: &[String]) -> (BoardBruteForce, u64) {
        let width = rows.first().map_or(0, String::len);
        assert!(width > 0 && rows.iter().all(|row| row.len() == width), "not a rectangle: {rows:?}");
        (BoardBruteForce::new(rows.len(), width), free_of(rows))
    }

    /// The pieces a move may place, as bitmasks of their cells, row-major.
    pub fn pieces(&self) -> &[u64] {
        &self.pieces
    }

    /// The Grundy value of the board whose free cells are the bits of `free`.
    pub fn grundy(&mut self, free: u64) -> u64 {
        if let Some(&value) = self.memo.get(&free) {
            return value;
        }
        // A value is at most the longest game, at most 64 moves on 64 cells: a u128 holds every
        // option.
        let mut options = 0u128;
        for index in 0..self.pieces.len() {
            let piece = self.pieces[index];
            if free & piece == piece {
                options |= 1 << self.grundy(free & !self.taken[index]);
            }
        }
        let value = u64::from((!options).trailing_zeros());
        self.memo.insert(free, value);
        value
    }

    /// How many boards have been valued so far (the states the search visited).
    pub fn states(&self) -> usize {
        self.memo.len()
    }
}

/// The accepted contest solution of HDU 5708 "Alice and Bob": on an `n`×`m` board from `(1, 1)`,
/// with jumps of `k`, whether the first player (Alice) wins. With `K = k + 1` and `n ≤ m`: she wins
/// if `n mod K = 0`; otherwise, with `len = n div K`, iff `n + m` is even when `K > 2` and `len`
/// is odd, and iff `n + m` is odd when not.
pub fn hdu5708_first_player_wins(n: u64, m: u64, k: u64) -> bool {
    let (n, m, k) = (u128::from(n.min(m)), u128::from(n.max(m)), u128::from(k) + 1);
    if n % k == 0 {
        return true;
    }
    if k > 2 && (n / k) % 2 == 1 {
        (n + m) % 2 == 0
    } else {
        (n + m) % 2 == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_positions_are_valid() {
        let mut random = SplitMix::new(9);
        for small in [1, 9, 1000] {
            for &kind in GameTag::ALL {
                for _ in 0..200 {
                    let position = random_position(&mut random, kind, small);
                    assert!(crate::wire::position_from_proto(Some(position.clone())).is_ok(), "{position:?}");
                }
            }
        }
    }

    #[test]
    fn the_brute_force_knows_small_boards() {
        let rows = |rows: &[&str]| rows.iter().map(|row| row.to_string()).collect::<Vec<_>>();
        let (mut empty, free) = BoardBruteForce::for_rows(&rows(&["000", "000"]));
        assert_eq!((empty.pieces().len(), empty.grundy(free)), (2, 1));
        let (mut sample, free) = BoardBruteForce::for_rows(&rows(&["0000", "0010", "0100", "0000"]));
        assert_eq!(sample.grundy(free), 0, "HDU 1760's second sample: the first player loses");
        assert!(sample.states() > 1);
    }
}
