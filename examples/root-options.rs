//! How far a long solve of a board got (docs/BENCHMARKS.md, "Results"): `root-options DATA_DIR GAME
//! ROWS` (GAME `tetris` or `cram`, ROWS the board's rows, comma-separated, `0` free) reads the store
//! at DATA_DIR (the `--data-dir` of the stopped server or `nimber explore`) and says, for each class
//! of the board's moves (the positions a fleet would split it into), whether the store already
//! settles its value without a search, and which value. Run it while nothing else has the store
//! open.

use nimber::cache::Store;
use nimber::games::Position;
use nimber::proto::{self, position::Game};

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let [_, dir, game, rows] = arguments.as_slice() else {
        eprintln!("usage: root-options DATA_DIR tetris|cram ROWS (e.g. 000,000)");
        std::process::exit(2);
    };
    let rows: Vec<String> = rows.split(',').map(str::to_string).collect();
    let game = match game.as_str() {
        "tetris" => Game::Tetris(proto::Tetris { rows }),
        "cram" => Game::Cram(proto::Cram { rows }),
        other => panic!("unknown game {other}: tetris or cram"),
    };
    let position: Position =
        nimber::wire::position_from_proto(Some(proto::Position { game: Some(game) })).expect("a valid board");
    let store = Store::open(std::path::Path::new(dir), 64 << 20).expect("the store opens");
    let options = position.fleet_parts(usize::MAX);
    let mut settled = 0;
    for (index, option) in options.iter().enumerate() {
        let value = option.value_without_search(&|game, key| nimber::games::Memo::get(&store, game, key));
        settled += usize::from(value.is_some());
        let shown = value.map_or("not settled".to_string(), |(value, _)| format!("{value:?}"));
        println!("option {index}: {shown}");
    }
    println!("{settled} of {} classes of root options settled", options.len());
}
