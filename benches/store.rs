//! Store benchmarks: `entries()` and `size_on_disk()` (what a metrics scrape reads) on stores of
//! 10^3 and 10^6 values, which must cost the same, the rate of puts written through to disk, and
//! what sealing and checking a value for the shared tier costs, with the fleet's secret (HMAC) and
//! without (CRC-32). Run: `cargo bench --bench store`.

use std::time::Instant;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use nimber::cache::{check_value, seal_value, Payload, SharedSecret, Store};
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

/// One value as replicas write it to Redis and check it when read back: a component key of a
/// 9×9 board's size (about 40 bytes), a value and a cost of typical sizes.
fn shared_values(c: &mut Criterion) {
    let key = [3u8; 40];
    let secret = SharedSecret::from_bytes(b"0123456789abcdef0123456789abcdef", "the bench").unwrap();
    for (name, secret) in
        [("with a secret (format 3, HMAC-SHA-256)", Some(&secret)), ("without (format 2, CRC-32)", None)]
    {
        let sealed = seal_value(secret, &key, &Payload::Nimber(5), 70_000);
        assert_eq!(check_value(secret, &key, &sealed), Ok((Payload::Nimber(5), 70_000)));
        c.bench_function(&format!("shared/seal a value {name}"), |b| {
            b.iter(|| seal_value(black_box(secret), black_box(&key), &Payload::Nimber(5), 70_000))
        });
        c.bench_function(&format!("shared/check a value {name}"), |b| {
            b.iter(|| check_value(black_box(secret), black_box(&key), black_box(&sealed)))
        });
    }
}

criterion_group!(benches, counts, puts, shared_values);
criterion_main!(benches);
