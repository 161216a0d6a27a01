//! Engine benchmarks for the four closed-form games: `value` (what Solve computes) and `best_move`
//! (what BestMove computes), on single pieces and on large sums, with sizes far past the contest
//! limits. Run: `cargo bench --bench engine`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use nimber::games::cutting::{Paper, Piece};
use nimber::games::diagonal_walk::Walk;
use nimber::games::reclamation::{Cell, River};
use nimber::games::stone_boxes::{Boxes, StoneBox};
use nimber::games::{Game, SearchContext};
use nimber::random::SplitMix;

fn cutting(c: &mut Criterion) {
    let mut random = SplitMix::new(0x9E37_79B9_7F4A_7C15);
    let single = Paper::new(vec![Piece { width: 200, height: 200 }]).unwrap();
    let huge = Paper::new(vec![Piece { width: u64::MAX - 7, height: 10u64.pow(18) + 3 }]).unwrap();
    let many = Paper::new(
        (0..10_000)
            .map(|_| Piece { width: 2 + random.next_u64() % 1_000_000, height: 2 + random.next_u64() % 1_000_000 })
            .collect(),
    )
    .unwrap();
    c.bench_function("cutting/value 200x200", |b| b.iter(|| black_box(&single).value(&mut SearchContext::in_memory())));
    c.bench_function("cutting/value 1e18-sized piece", |b| {
        b.iter(|| black_box(&huge).value(&mut SearchContext::in_memory()))
    });
    c.bench_function("cutting/value 10000 pieces", |b| {
        b.iter(|| black_box(&many).value(&mut SearchContext::in_memory()))
    });
    c.bench_function("cutting/best_move 1e18-sized piece", |b| {
        b.iter(|| black_box(&huge).best_move(&mut SearchContext::in_memory()))
    });
    c.bench_function("cutting/best_move 10000 pieces", |b| {
        b.iter(|| black_box(&many).best_move(&mut SearchContext::in_memory()))
    });
}

fn stone_boxes(c: &mut Criterion) {
    let mut random = SplitMix::new(0x2545_F491_4F6C_DD1D);
    let huge = Boxes::new(vec![StoneBox { capacity: u64::MAX, stones: 123_456_789 }]).unwrap();
    let many = Boxes::new(
        (0..10_000)
            .map(|_| {
                let capacity = random.next_u64();
                StoneBox { capacity, stones: random.next_u64() % (capacity / 1_000_000_000 + 1) }
            })
            .collect(),
    )
    .unwrap();
    c.bench_function("stone_boxes/value u64::MAX box", |b| {
        b.iter(|| black_box(&huge).value(&mut SearchContext::in_memory()))
    });
    c.bench_function("stone_boxes/value 10000 boxes", |b| {
        b.iter(|| black_box(&many).value(&mut SearchContext::in_memory()))
    });
    c.bench_function("stone_boxes/best_move u64::MAX box", |b| {
        b.iter(|| black_box(&huge).best_move(&mut SearchContext::in_memory()))
    });
    c.bench_function("stone_boxes/best_move 10000 boxes", |b| {
        b.iter(|| black_box(&many).best_move(&mut SearchContext::in_memory()))
    });
}

/// A random legal strip of `rows` rows with `cells` reclaimed cells, spread over the whole strip.
fn random_strip(random: &mut SplitMix, rows: u64, cells: u64) -> River {
    let band = rows / cells;
    let reclaimed = (0..cells)
        .map(|i| Cell { row: i * band + 1 + random.next_u64() % (band - 2), column: 1 + random.next_u64() % 2 })
        .collect::<Vec<_>>();
    // Cells in bands of rows never touch: every band leaves its last row free.
    River::new(rows, reclaimed).expect("a legal strip")
}

fn reclamation(c: &mut Criterion) {
    let mut random = SplitMix::new(0x1234_5678_9ABC_DEF1);
    let strips: Vec<River> = (0..8).map(|_| random_strip(&mut random, 1_000_000_000_000_000_000, 100_000)).collect();
    let mut next = 0;
    c.bench_function("reclamation/value 1e18 rows, 1e5 cells", |b| {
        b.iter(|| {
            next = (next + 1) % strips.len();
            black_box(&strips[next]).value(&mut SearchContext::in_memory())
        })
    });
    c.bench_function("reclamation/validate+value 1e18 rows, 1e5 unsorted cells", |b| {
        b.iter_batched(
            || {
                next = (next + 1) % strips.len();
                let mut cells = strips[next].reclaimed().to_vec();
                cells.reverse();
                cells
            },
            |cells| River::new(1_000_000_000_000_000_000, cells).unwrap().value(&mut SearchContext::in_memory()),
            criterion::BatchSize::LargeInput,
        )
    });
    c.bench_function("reclamation/best_move 1e18 rows, 1e5 cells", |b| {
        b.iter(|| {
            next = (next + 1) % strips.len();
            black_box(&strips[next]).best_move(&mut SearchContext::in_memory())
        })
    });
}

fn diagonal_walk(c: &mut Criterion) {
    let walk = Walk::new(1_000_000_000_000_000_000, 999_999_999_999_999_999, 123_456_789, 1, 1).unwrap();
    c.bench_function("diagonal_walk/value 1e18 board", |b| {
        b.iter(|| black_box(&walk).value(&mut SearchContext::in_memory()))
    });
    c.bench_function("diagonal_walk/best_move 1e18 board", |b| {
        b.iter(|| black_box(&walk).best_move(&mut SearchContext::in_memory()))
    });
}

criterion_group!(benches, cutting, stone_boxes, reclamation, diagonal_walk);
criterion_main!(benches);
