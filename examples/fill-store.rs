//! Fills a store for the benchmarks (scripts/bench-transport.sh): `fill-store DIR N` puts N distinct
//! random values (24-byte keys, like small canonical components) into the store at DIR and waits
//! until they are on disk, so that a server started on DIR holds N entries.

use nimber::cache::Store;
use nimber::games::{GameTag, Memo};
use nimber::random::SplitMix;

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let [_, dir, count] = arguments.as_slice() else {
        eprintln!("usage: fill-store DIR N");
        std::process::exit(2);
    };
    let count: u64 = count.parse().expect("N is a number");
    let store = Store::open(std::path::Path::new(dir), 1 << 16).expect("the store opens");
    let mut random = SplitMix::new(count);
    for i in 0..count {
        // Wait for the disk every 50 000 values, so that the write buffer never overflows.
        if i % 50_000 == 0 {
            store.sync().expect("the values are written");
        }
        let key: Vec<u8> = (0..3).flat_map(|_| random.next_u64().to_le_bytes()).collect();
        store.put(GameTag::Tetris, &key, random.below(64), random.below(1 << 20));
    }
    store.sync().expect("the values are written");
    println!("{}", store.entries());
}
