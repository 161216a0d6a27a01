//! Benchmark of the 2×2 placement game engine, cold (fresh solver, no persistent memo, one thread).
//!
//! Full boards 8×8, 9×9 and 10×10; 100 of the hardest boards within the contest limit (7×7 with 9
//! random blocked border cells: 40 free cells) against a plain memoized Grundy search over whole-board
//! bitmasks. `NIMBER_BENCH_LARGE=1` also tries ever larger full boards, 10 minutes each at most.
//! Solves run after a first one that builds the process-wide table of small sets (reported).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use nimber::games::tetris::Board;
use nimber::games::{Budget, Game, Interrupted, NoMemo, Solver, Value};

/// SplitMix64: a tiny deterministic generator.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn full(height: usize, width: usize) -> Vec<String> {
    vec!["0".repeat(width); height]
}

/// `count` boards of `side`×`side` cells with `blocked` distinct blocked cells each, all on the
/// border (a border cell lies under at most two placements, so these keep the most placements:
/// the hardest boards with `side² − blocked` free cells).
fn hard_boards(count: usize, side: usize, blocked: usize, seed: u64) -> Vec<Vec<String>> {
    let mut rng = SplitMix(seed);
    let border: Vec<usize> =
        (0..side * side).filter(|i| [i / side, i % side].iter().any(|&x| x == 0 || x == side - 1)).collect();
    (0..count)
        .map(|_| {
            let mut cells = vec![b'0'; side * side];
            let mut placed = 0;
            while placed < blocked {
                let i = border[(rng.next() % border.len() as u64) as usize];
                if cells[i] == b'0' {
                    cells[i] = b'1';
                    placed += 1;
                }
            }
            cells.chunks(side).map(|row| String::from_utf8_lossy(row).into_owned()).collect()
        })
        .collect()
}

/// The plain baseline: Grundy values of whole boards as bitmasks of free cells (`N·M ≤ 64`),
/// memoized in a `HashMap`, no splitting, no symmetry.
struct Plain {
    squares: Vec<u64>,
    memo: HashMap<u64, u64>,
}

impl Plain {
    fn new(rows: &[String]) -> (Plain, u64) {
        let (height, width) = (rows.len(), rows[0].len());
        let mut free = 0u64;
        for (r, row) in rows.iter().enumerate() {
            for (c, ch) in row.bytes().enumerate() {
                if ch == b'0' {
                    free |= 1 << (r * width + c);
                }
            }
        }
        let mut squares = Vec::new();
        for r in 0..height.saturating_sub(1) {
            for c in 0..width.saturating_sub(1) {
                let at = r * width + c;
                squares.push(1 << at | 1 << (at + 1) | 1 << (at + width) | 1 << (at + width + 1));
            }
        }
        (Plain { squares, memo: HashMap::new() }, free)
    }

    fn grundy(&mut self, free: u64) -> u64 {
        if let Some(&g) = self.memo.get(&free) {
            return g;
        }
        let mut seen = 0u128;
        for i in 0..self.squares.len() {
            let square = self.squares[i];
            if free & square == square {
                seen |= 1 << self.grundy(free & !square);
            }
        }
        let g = u64::from((!seen).trailing_zeros());
        self.memo.insert(free, g);
        g
    }
}

/// Solve a board cold; its value and the time taken.
fn solve(rows: &[String], budget: Budget) -> (Result<Value, Interrupted>, Duration, u64) {
    let board = Board::new(rows).expect("benchmark boards are valid");
    let mut solver = Solver::new(budget, &NoMemo);
    let start = Instant::now();
    let value = board.value(&mut solver);
    (value, start.elapsed(), solver.stats.positions_computed)
}

/// A budget of 10 minutes from now.
fn ten_minutes() -> Budget {
    Budget::new(Some(Instant::now() + Duration::from_secs(600)), Default::default())
}

fn show(value: Result<Value, Interrupted>) -> String {
    match value {
        Ok(Value::Nimber(g)) => format!("*{g}"),
        Ok(other) => format!("{other:?}"),
        Err(e) => format!("{e:?}"),
    }
}

fn main() {
    // The first solve builds the process-wide table of the 2^20 sets inside a 4×5 window.
    let (_, init, _) = solve(&full(5, 6), Budget::unlimited());
    println!("one-time table initialisation: {:.1} ms", init.as_secs_f64() * 1e3);
    println!("{:<34} {:>12} {:>10} {:>14}", "case", "time", "value", "computed");
    for side in [8, 9, 10] {
        let (value, time, computed) = solve(&full(side, side), ten_minutes());
        println!(
            "{:<34} {:>10.3} s {:>10} {:>14}",
            format!("full {side}x{side}"),
            time.as_secs_f64(),
            show(value),
            computed
        );
    }

    let boards = hard_boards(100, 7, 9, 1760);
    let mut engine_time = Duration::ZERO;
    let mut worst = Duration::ZERO;
    let mut engine_values = Vec::new();
    for rows in &boards {
        let (value, time, _) = solve(rows, Budget::unlimited());
        engine_time += time;
        worst = worst.max(time);
        engine_values.push(value.ok().and_then(Value::nimber));
    }
    let mut plain_time = Duration::ZERO;
    for (rows, engine_value) in boards.iter().zip(&engine_values) {
        let start = Instant::now();
        let (mut plain, free) = Plain::new(rows);
        let value = plain.grundy(free);
        plain_time += start.elapsed();
        assert_eq!(Some(value), *engine_value, "engine and plain search disagree on {rows:?}");
    }
    println!(
        "{:<34} {:>10.3} ms (worst {:.3} ms per board)",
        "100 7x7 boards, 40 free: engine",
        engine_time.as_secs_f64() * 1e3,
        worst.as_secs_f64() * 1e3
    );
    println!("{:<34} {:>10.3} ms", "100 7x7 boards, 40 free: plain", plain_time.as_secs_f64() * 1e3);
    println!("{:<34} {:>10.1}x", "speed-up", plain_time.as_secs_f64() / engine_time.as_secs_f64());

    if std::env::var_os("NIMBER_BENCH_LARGE").is_some() {
        // Ever larger full boards (10×11, 11×11, 11×12, ...) until one takes more than 10 minutes.
        let sizes = (10..16).flat_map(|side| [(side, side + 1), (side + 1, side + 1)]);
        for (height, width) in sizes {
            let (value, time, computed) = solve(&full(height, width), ten_minutes());
            println!(
                "{:<34} {:>10.3} s {:>10} {:>14}",
                format!("full {height}x{width}"),
                time.as_secs_f64(),
                show(value),
                computed
            );
            if value.is_err() {
                break;
            }
        }
    }
}
