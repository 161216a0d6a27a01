//! A small deterministic random generator (SplitMix64) for tests, benchmarks and the load
//! generator: the same seed gives the same positions on every machine, with no dependency.

/// SplitMix64 (Steele, Lea and Flood, 2014): 64 random bits per step, any seed.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (0 when `bound` is 0; a tiny modulo bias, irrelevant here).
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            0
        } else {
            self.next_u64() % bound
        }
    }

    /// A number in `low..=high`.
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        match high - low {
            u64::MAX => self.next_u64(),
            span => low + self.next_u64() % (span + 1),
        }
    }

    /// An index in `0..len` (0 when `len` is 0).
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// One of `items`, each as likely. Panics when `items` is empty.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.index(items.len())]
    }

    /// True with probability `percent`/100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}

/// The rows of a random `height`×`width` board of the 2×2 placement game, each cell blocked
/// (`1`) with probability `blocked_percent`/100, free (`0`) otherwise.
pub fn random_board(random: &mut SplitMix, height: usize, width: usize, blocked_percent: u64) -> Vec<String> {
    (0..height).map(|_| (0..width).map(|_| if random.percent(blocked_percent) { '1' } else { '0' }).collect()).collect()
}
