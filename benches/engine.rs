//! Engine benchmarks for the closed-form games: `value` (what Solve computes) and `best_move`
//! (what BestMove computes), on single pieces and on large sums, with sizes far past the contest
//! limits. Run: `cargo bench --bench engine`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use nimber::games::cutting::{Paper, Piece};
use nimber::games::stone_boxes::{Boxes, StoneBox};
use nimber::games::{Game, Solver};

/// A small deterministic generator (xorshift), so every run measures the same positions.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn cutting(c: &mut Criterion) {
    let mut random = Xorshift(0x9E37_79B9_7F4A_7C15);
    let single = Paper::new(vec![Piece { width: 200, height: 200 }]).unwrap();
    let huge = Paper::new(vec![Piece { width: u64::MAX - 7, height: 10u64.pow(18) + 3 }]).unwrap();
    let many = Paper::new((0..10_000).map(|_| Piece { width: 2 + random.next() % 1_000_000, height: 2 + random.next() % 1_000_000 }).collect()).unwrap();
    c.bench_function("cutting/value 200x200", |b| b.iter(|| black_box(&single).value(&mut Solver::in_memory())));
    c.bench_function("cutting/value 1e18-sized piece", |b| b.iter(|| black_box(&huge).value(&mut Solver::in_memory())));
    c.bench_function("cutting/value 10000 pieces", |b| b.iter(|| black_box(&many).value(&mut Solver::in_memory())));
    c.bench_function("cutting/best_move 1e18-sized piece", |b| b.iter(|| black_box(&huge).best_move(&mut Solver::in_memory())));
    c.bench_function("cutting/best_move 10000 pieces", |b| b.iter(|| black_box(&many).best_move(&mut Solver::in_memory())));
}

fn stone_boxes(c: &mut Criterion) {
    let mut random = Xorshift(0x2545_F491_4F6C_DD1D);
    let huge = Boxes::new(vec![StoneBox { capacity: u64::MAX, stones: 123_456_789 }]).unwrap();
    let many = Boxes::new((0..10_000).map(|_| {
        let capacity = random.next();
        StoneBox { capacity, stones: random.next() % (capacity / 1_000_000_000 + 1) }
    }).collect()).unwrap();
    c.bench_function("stone_boxes/value u64::MAX box", |b| b.iter(|| black_box(&huge).value(&mut Solver::in_memory())));
    c.bench_function("stone_boxes/value 10000 boxes", |b| b.iter(|| black_box(&many).value(&mut Solver::in_memory())));
    c.bench_function("stone_boxes/best_move u64::MAX box", |b| b.iter(|| black_box(&huge).best_move(&mut Solver::in_memory())));
    c.bench_function("stone_boxes/best_move 10000 boxes", |b| b.iter(|| black_box(&many).best_move(&mut Solver::in_memory())));
}

criterion_group!(benches, cutting, stone_boxes);
criterion_main!(benches);
