//! Benchmark of the 2×2 placement game engine, cold (fresh context, no persistent memo, one thread).
//! Every time is CPU time of this thread (the machine may be shared), not wall time.
//!
//! Full boards 8×8, 9×9 and 10×10; the 100 hardest of 2000 random contest boards (every shape with
//! N·M < 50, 40 free cells), through `nimber judge tetris`, against a plain memoized Grundy search over
//! whole-board bitmasks. `NIMBER_BENCH_LARGE=1` also solves 10×10 and ever larger full boards, 10 minutes each at most.
//! Pool figures are medians of 7 rounds, each from scratch. Nothing is computed ahead: the values of small sets are built into the binary (`build.rs`).

#[path = "common/cpu.rs"]
mod cpu;
/// The judge is the binary's (`nimber judge`); included here to time it in process.
#[path = "../src/cli/judge.rs"]
#[allow(dead_code)]
mod judge;

use cpu::cpu_time;
use judge::{judge, Problem};
use std::time::{Duration, Instant};

use nimber::games::tetris::Board;
use nimber::games::{Budget, Game, Interrupted, Nimber, NoMemo, SearchContext};
use nimber::random::SplitMix;
use nimber::testing::BoardBruteForce as Plain;

fn full(height: usize, width: usize) -> Vec<String> {
    vec!["0".repeat(width); height]
}

/// The board shapes of the contest (N·M < 50) that can hold 40 free cells or more.
const CONTEST_SHAPES: [(usize, usize); 10] =
    [(7, 7), (6, 8), (8, 6), (5, 9), (9, 5), (4, 12), (12, 4), (3, 16), (16, 3), (2, 24)];

/// `count` random boards of every contest shape with exactly 40 free cells (the contest's maximum),
/// blocked cells anywhere; with `walls`, half of them with a wall of blocked cells across the board.
fn contest_boards(count: usize, seed: u64, walls: bool) -> Vec<Vec<String>> {
    let mut rng = SplitMix::new(seed);
    let mut boards = Vec::new();
    for (height, width) in CONTEST_SHAPES {
        for _ in 0..count {
            let mut cells = vec![b'0'; height * width];
            let to_block = height * width - 40;
            let mut blocked = 0;
            // Half of the boards first get a wall (a full row or column) splitting them in two.
            if walls && rng.next_u64().is_multiple_of(2) {
                if height <= to_block && width > 2 {
                    let column = 1 + (rng.next_u64() % (width as u64 - 2)) as usize;
                    (0..height).for_each(|row| cells[row * width + column] = b'1');
                    blocked = height;
                } else if width <= to_block && height > 2 {
                    let row = 1 + (rng.next_u64() % (height as u64 - 2)) as usize;
                    cells[row * width..(row + 1) * width].fill(b'1');
                    blocked = width;
                }
            }
            while blocked < to_block {
                let i = (rng.next_u64() % cells.len() as u64) as usize;
                if cells[i] == b'0' {
                    cells[i] = b'1';
                    blocked += 1;
                }
            }
            boards.push(cells.chunks(width).map(|row| String::from_utf8_lossy(row).into_owned()).collect());
        }
    }
    boards
}

/// Rounds of each pool measurement (medians are reported).
const ROUNDS: usize = 7;

/// The boards in HDU 1760's input format.
fn judge_input(boards: &[Vec<String>]) -> String {
    boards.iter().map(|rows| format!("{} {}\n{}\n", rows.len(), rows[0].len(), rows.join("\n"))).collect()
}

/// Solve a board cold; its value and the time taken.
fn solve(rows: &[String], budget: Budget) -> (Result<Nimber, Interrupted>, Duration, u64) {
    let board = Board::new(rows).expect("benchmark boards are valid");
    let mut context = SearchContext::new(budget, &NoMemo);
    let start = cpu_time();
    let value = board.value(&mut context);
    (value, cpu_time() - start, context.stats.positions_computed)
}

/// A budget of 10 minutes from now.
fn ten_minutes() -> Budget {
    Budget::new(Some(Instant::now() + Duration::from_secs(600)), Default::default())
}

fn show(value: Result<Nimber, Interrupted>) -> String {
    match value {
        Ok(g) => format!("*{g}"),
        Err(e) => format!("{e:?}"),
    }
}

fn main() {
    let start = cpu_time();
    nimber::games::placement::load_small_sets();
    println!("reading the built-in values of small sets: {:.3} ms", (cpu_time() - start).as_secs_f64() * 1e3);
    println!("{:<34} {:>12} {:>10} {:>14}", "case", "time", "value", "computed");
    for side in [8, 9] {
        let (value, time, computed) = solve(&full(side, side), ten_minutes());
        println!(
            "{:<34} {:>10.3} s {:>10} {:>14}",
            format!("full {side}x{side}"),
            time.as_secs_f64(),
            show(value),
            computed
        );
    }

    for walls in [false, true] {
        compare_on_hardest_contest_boards(walls);
    }

    if std::env::var_os("NIMBER_BENCH_LARGE").is_some() {
        // Ever larger full boards (10×10, 10×11, 11×11, ...) until one takes more than 10 minutes.
        let sizes = std::iter::once((10, 10)).chain((10..16).flat_map(|side| [(side, side + 1), (side + 1, side + 1)]));
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

/// The hardest contest boards for the plain search: of 200 random boards of each contest shape
/// with 40 free cells (with or without walls), the 100 whose whole-board search visits the most
/// states; solved through `judge tetris` and by the plain search, with the times compared.
fn compare_on_hardest_contest_boards(walls: bool) {
    let mut candidates: Vec<(usize, Vec<String>)> = contest_boards(200, 1760, walls)
        .into_iter()
        .map(|rows| {
            let (mut plain, free) = Plain::for_rows(&rows);
            plain.grundy(free);
            (plain.states(), rows)
        })
        .collect();
    candidates.sort_by_key(|(states, _)| std::cmp::Reverse(*states));
    let (states, boards): (Vec<usize>, Vec<Vec<String>>) = candidates.into_iter().take(100).unzip();
    let pool = if walls { "boards, half walled" } else { "random boards" };
    println!(
        "100 hardest of 2000 {pool}: {} to {} states of the plain search",
        states.last().unwrap_or(&0),
        states.first().unwrap_or(&0)
    );
    let input = judge_input(&boards);

    // ROUNDS rounds, each from scratch, alternating the engine and the plain search so that both
    // meet the same machine (the pool takes milliseconds, at the mercy of the machine's other work);
    // the times and the speed-ups reported are medians over the rounds.
    let mut engine_output = String::new();
    let mut plain_output = String::new();
    let mut worst = Duration::ZERO;
    let mut rounds: Vec<[Duration; 3]> = Vec::new();
    for _ in 0..ROUNDS {
        let start = cpu_time();
        engine_output =
            judge(Problem::Tetris, &input, &mut SearchContext::new(Budget::unlimited(), &NoMemo)).expect("valid input");
        let engine = cpu_time() - start;
        // Each board alone, in a context of its own (the judge keeps one context, and what it
        // learnt, across an input's boards).
        let alone: Vec<Duration> = boards.iter().map(|rows| solve(rows, Budget::unlimited()).1).collect();
        worst = alone.iter().max().copied().unwrap_or_default();
        let start = cpu_time();
        plain_output.clear();
        for rows in &boards {
            let (mut plain, free) = Plain::for_rows(rows);
            plain_output.push_str(if plain.grundy(free) != 0 { "Yes\n" } else { "No\n" });
        }
        rounds.push([engine, alone.iter().sum(), cpu_time() - start]);
    }
    let median = |value: &dyn Fn(&[Duration; 3]) -> f64| {
        let mut values: Vec<f64> = rounds.iter().map(value).collect();
        values.sort_by(f64::total_cmp);
        values[ROUNDS / 2]
    };
    let [engine_time, alone_time, plain_time] =
        [0, 1, 2].map(|i| Duration::from_secs_f64(median(&|round: &[Duration; 3]| round[i].as_secs_f64())));
    let speed_up = median(&|[engine, _, plain]: &[Duration; 3]| plain.as_secs_f64() / engine.as_secs_f64());
    let speed_up_alone = median(&|[_, alone, plain]: &[Duration; 3]| plain.as_secs_f64() / alone.as_secs_f64());
    assert_eq!(engine_output, plain_output, "the engine and the plain search disagree");
    println!(
        "{:<34} {:>10.3} ms (worst board {:.3} ms)",
        "  judge tetris, engine",
        engine_time.as_secs_f64() * 1e3,
        worst.as_secs_f64() * 1e3
    );
    println!("{:<34} {:>10.3} ms", "  engine, each board alone", alone_time.as_secs_f64() * 1e3);
    println!("{:<34} {:>10.3} ms", "  plain memoized search", plain_time.as_secs_f64() * 1e3);
    println!("{:<34} {:>10.1}x", "  speed-up", speed_up);
    println!("{:<34} {:>10.1}x", "  speed-up, each board alone", speed_up_alone);
}
