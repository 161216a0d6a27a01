//! The positions a load run sends (drawn with the crate's deterministic `SplitMix`): the four
//! workloads. Positions that repeat are built once, up front, and cloned per request; cold boards
//! are built per request from the request's sequence number, so they practically never repeat within a run.

use nimber::games::GameTag;
use nimber::proto;
use nimber::random::random_board;
use nimber::random::SplitMix;
use nimber::wire::{board_position, random_position};

/// Which positions a run sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// Random positions of the closed-form games (every game but the 2×2 placement game: cutting,
    /// stone boxes, reclamation, diagonal walk, heap games), one in five with huge (up to 2^64−1)
    /// sizes; a pool of pre-built positions, cycled.
    ClosedForm,
    /// A fixed set of 2×2-placement boards (6×6 and 7×7, a few blocked cells), repeated so that every
    /// request after the first few is answered from the cache.
    CachedBoards,
    /// Distinct random 6×6 boards (a quarter of the cells blocked), a new one per request.
    ColdBoards,
    /// 80% closed-form, 15% cached boards, 5% cold boards.
    Mixed,
    /// One heap position under a proven period, the same every time: Kayles (`0.77`) with heaps
    /// 10^18, 3 and 7.
    Kayles,
}

impl Workload {
    /// The name as given on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Workload::ClosedForm => "closed-form",
            Workload::CachedBoards => "cached-boards",
            Workload::ColdBoards => "cold-boards",
            Workload::Mixed => "mixed",
            Workload::Kayles => "kayles",
        }
    }
}

/// How many closed-form positions are pre-built and cycled through.
const CLOSED_FORM_POOL: usize = 4096;

/// The largest sides (rows, capacities, jumps) of the closed-form positions that are not huge.
const CLOSED_FORM_SIDES: u64 = 1000;

/// The cached boards: 6×6 and 7×7, empty or with a few blocked cells.
const CACHED_BOARDS: &[&[&str]] = &[
    &["000000", "000000", "000000", "000000", "000000", "000000"],
    &["000000", "010000", "000000", "000100", "000000", "000000"],
    &["000001", "000000", "001000", "000000", "000010", "100000"],
    &["000000", "000000", "001100", "000000", "000000", "000000"],
    &["0000000", "0000000", "0000000", "0000000", "0000000", "0000000", "0000000"],
    &["0000000", "0100000", "0000000", "0001000", "0000000", "0000010", "0000000"],
    &["1000000", "0000000", "0000100", "0000000", "0010000", "0000000", "0000001"],
    &["0000000", "0000000", "0000000", "0001000", "0000000", "0000000", "0000000"],
];

/// Positions for one run: pre-built pools plus the per-request cold-board generator.
pub struct Positions {
    workload: Workload,
    closed_form: Vec<proto::Position>,
    cached: Vec<proto::Position>,
    seed: u64,
}

impl Positions {
    /// The positions of `workload`, reproducible from `seed`.
    pub fn new(workload: Workload, seed: u64) -> Self {
        let mut random = SplitMix::new(seed);
        let closed_form = (0..CLOSED_FORM_POOL).map(|_| closed_form_position(&mut random)).collect();
        let cached =
            CACHED_BOARDS.iter().map(|rows| board_position(rows.iter().map(|row| row.to_string()).collect())).collect();
        Self { workload, closed_form, cached, seed }
    }

    /// The position of request number `sequence` (0-based over the whole run, warm-up included).
    pub fn get(&self, sequence: u64) -> proto::Position {
        // A per-request generator: which kind of position (mixed) and the cold board depend only on
        // the sequence number, so workers need no shared state but the counter.
        let mut random = SplitMix::new(self.seed ^ sequence.wrapping_mul(0xA24B_AED4_963E_E407));
        let kind = match self.workload {
            Workload::Mixed => match random.next_u64() % 100 {
                0..=79 => Workload::ClosedForm,
                80..=94 => Workload::CachedBoards,
                _ => Workload::ColdBoards,
            },
            other => other,
        };
        match kind {
            Workload::ClosedForm => self.closed_form[(sequence % self.closed_form.len() as u64) as usize].clone(),
            Workload::CachedBoards => self.cached[(random.next_u64() % self.cached.len() as u64) as usize].clone(),
            Workload::Kayles => kayles(),
            _ => cold_board(&mut random),
        }
    }
}

/// Kayles with heaps 10^18, 3 and 7 (a loss for the player to move).
fn kayles() -> proto::Position {
    let heaps = proto::Heaps {
        rules: Some(proto::heaps::Rules::Code("0.77".into())),
        heaps: vec![1_000_000_000_000_000_000, 3, 7],
    };
    proto::Position { game: Some(proto::position::Game::Heaps(heaps)) }
}

/// A 6×6 board with each cell blocked with probability 1/4, drawn from the request's own generator:
/// about 29 bits of entropy, so boards of one run are distinct but for a handful in a million (as
/// requests; their canonical components may still repeat, as they would in real traffic).
fn cold_board(random: &mut SplitMix) -> proto::Position {
    board_position(random_board(random, 6, 6, 25))
}

/// A random position of one of the closed-form games, one in five with huge sizes.
fn closed_form_position(random: &mut SplitMix) -> proto::Position {
    let closed_forms: Vec<GameTag> = GameTag::ALL.iter().copied().filter(|game| !game.searches()).collect();
    let kind = random.pick(&closed_forms);
    random_position(random, kind, CLOSED_FORM_SIDES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nimber::proto::position::Game as P;

    #[test]
    fn cold_boards_are_distinct() {
        let positions = Positions::new(Workload::ColdBoards, 7);
        let boards: std::collections::HashSet<Vec<String>> = (0..10_000)
            .map(|sequence| match positions.get(sequence).game {
                Some(P::Tetris(tetris)) => tetris.rows,
                other => panic!("not a board: {other:?}"),
            })
            .collect();
        assert!(boards.len() > 9_990, "only {} distinct boards", boards.len());
    }

    #[test]
    fn mixed_is_mostly_closed_form() {
        let positions = Positions::new(Workload::Mixed, 1);
        let boards = (0..10_000).filter(|&s| matches!(positions.get(s).game, Some(P::Tetris(_)))).count();
        assert!((1_500..2_500).contains(&boards), "{boards} boards in 10000");
    }
}
