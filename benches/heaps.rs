//! Benchmark of the heap games' values engine alone (`Sequence::extend_to`, one thread, no job
//! store): the cases of the side-by-side run with ogsolve and octal (`scripts/bench-heaps.sh`),
//! whose nimber figure is the resumable job around this engine. Times are CPU time of this thread,
//! the median and the least of 5 rounds (`NIMBER_BENCH_ROUNDS`); `NIMBER_BENCH_HEAPS="0.106:4194304 ..."` picks
//! the cases.

#[path = "common/cpu.rs"]
mod cpu;

use cpu::cpu_time;
use nimber::games::heap::rules::Rules;
use nimber::games::heap::sequence::Sequence;
use nimber::games::Budget;

fn main() {
    let cases = std::env::var("NIMBER_BENCH_HEAPS").unwrap_or_else(|_| "0.16:1048576 0.106:4194304".into());
    let rounds: usize = std::env::var("NIMBER_BENCH_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
    println!("{:<18} {:>12} {:>12} {:>8} {:>14}", "case", "CPU s (med)", "CPU s (min)", "rounds", "heaps computed");
    for case in cases.split_whitespace() {
        let (code, heaps) = case.split_once(':').expect("CODE:HEAPS");
        let heaps: u64 = heaps.parse().expect("a number of heaps");
        let mut times = Vec::new();
        let mut computed = 0;
        for _ in 0..rounds {
            let mut sequence = Sequence::new(Rules::code(code).expect("a valid code"));
            let start = cpu_time();
            sequence.extend_to(heaps, &Budget::unlimited()).expect("no deadline");
            times.push((cpu_time() - start).as_secs_f64());
            computed = sequence.computed();
        }
        times.sort_by(f64::total_cmp);
        let (median, least) = (times[times.len() / 2], times[0]);
        println!("{case:<18} {median:>12.3} {least:>12.3} {rounds:>8} {computed:>14}");
    }
}
