//! Store benchmarks: `entries()` and `size_on_disk()` (what a metrics scrape reads) on stores of
//! 10^3 and 10^6 values, which must cost the same, and the rate of puts written through to disk.
//! Run: `cargo bench --bench store`.

use std::time::Instant;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use nimber::cache::Store;
use nimber::games::{GameTag, Memo};
use nimber::random::SplitMix;
use nimber::testing::fill_store;

fn counts(c: &mut Criterion) {
    let mut random = SplitMix::new(0x5707_e000);
    for count in [1_000u64, 1_000_000] {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), 5 << 20).unwrap();
        fill_store(&store, &mut random, count);
        assert_eq!(store.entries(), count);
        c.bench_function(&format!("store/entries at {count} values"), |b| b.iter(|| black_box(&store).entries()));
        c.bench_function(&format!("store/size_on_disk at {count} values"), |b| {
            b.iter(|| black_box(&store).size_on_disk())
        });
    }
}

fn puts(c: &mut Criterion) {
    let mut random = SplitMix::new(0x9075);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), 5 << 20).unwrap();
    let started = Instant::now();
    fill_store(&store, &mut random, 200_000);
    let seconds = started.elapsed().as_secs_f64();
    eprintln!("store/puts: 200000 values written through to disk in {seconds:.2} s ({:.0}/s)", 200_000.0 / seconds);
    c.bench_function("store/put of one value (buffered)", |b| {
        b.iter(|| {
            let key = random.next_u64().to_le_bytes();
            store.put(GameTag::Tetris, &key, 1, 100);
        })
    });
}

criterion_group!(benches, counts, puts);
criterion_main!(benches);
