//! Fills a store for the benchmarks (scripts/bench-transport.sh): `fill-store DIR N` puts N distinct
//! random values (24-byte keys, like small canonical components) into the store at DIR and waits
//! until they are on disk, so that a server started on DIR holds N entries.

use nimber::cache::Store;
use nimber::random::SplitMix;
use nimber::testing::fill_store;

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let [_, dir, count] = arguments.as_slice() else {
        eprintln!("usage: fill-store DIR N");
        std::process::exit(2);
    };
    let count: u64 = count.parse().expect("N is a number");
    let store = Store::open(std::path::Path::new(dir), 5 << 20).expect("the store opens");
    fill_store(&store, &mut SplitMix::new(count), count);
    println!("{}", store.entries());
}
