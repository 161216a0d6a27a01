//! Robustness through the real server binary: a store holding garbage or values of an unknown
//! format version, data directories that cannot be used (locked by another server, a file in the
//! way, a full disk), and fuzzed request bodies, both in process (decode, convert, solve, best
//! move, analyze: never a panic, and the answers hang together) and through the real server (every
//! call answers OK or a proper status, and the server stays healthy).
//!
//! Everything is deterministic (fixed seeds, fixed case counts) and the whole file runs in well
//! under a minute with `cargo test --release --test robustness`.

mod common;

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{assert_refuses_to_start, call_raw, engine_value, Mount, TestServer};
use nimber::games::sum::SumValue;
use nimber::games::GameTag;
use nimber::games::{analysis, mex, Budget, Game, NoMemo, Outcome, Position, SearchContext, Value};
use nimber::proto::{self, position::Game as P};
use nimber::random::SplitMix;
use nimber::testing::{board_position, random_board, random_position, SMALL_SIDES};
use prost::Message;
use tonic::Code;

// ---- helpers ------------------------------------------------------------------------------------

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut out, byte| {
        let _ = write!(out, "{byte:02x}");
        out
    })
}

/// A budget that ends `millis` from now.
fn budget(millis: u64) -> Budget {
    Budget::new(Some(Instant::now() + Duration::from_millis(millis)), Arc::new(AtomicBool::new(false)))
}

// ---- the store ----------------------------------------------------------------------------------

/// Solves every board, returning (outcome, grundy, positions_computed) per board.
async fn solve_boards(server: &TestServer, boards: &[Vec<String>]) -> Vec<(i32, Option<u64>, u64)> {
    let mut client = server.client().await;
    let mut answers = Vec::new();
    for board in boards {
        let request = proto::SolveRequest {
            position: Some(board_position(board.to_vec())),
            id: String::new(),
            ..Default::default()
        };
        let answer = client.solve(request).await.unwrap_or_else(|status| panic!("{board:?}: {status}")).into_inner();
        answers.push((answer.outcome, answer.grundy, answer.stats.unwrap_or_default().positions_computed));
    }
    answers
}

/// Every stored value replaced by garbage or by a value of an unknown format version (plus stray
/// keys): the server starts, answers exactly as before by recomputing (and overwriting), and after
/// one more restart serves everything from the store again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_and_unknown_version_values_are_recomputed_and_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let mut random = SplitMix::new(0x5eed_0001);
    let boards: Vec<Vec<String>> = (0..12).map(|i| random_board(&mut random, 8 + i % 2, 8, 12)).collect();

    let mut server = TestServer::builder().data_dir(dir.path()).start();
    let first = solve_boards(&server, &boards).await;
    assert!(server.stop(), "graceful stop");
    assert!(first.iter().any(|answer| answer.2 > 0), "the boards need search, so the store gets values: {first:?}");
    for (board, answer) in boards.iter().zip(&first) {
        let expected = engine_value(&board_position(board.to_vec()));
        assert_eq!(
            (answer.0, answer.1),
            (nimber::wire::outcome_to_proto(expected) as i32, expected.nimber()),
            "{board:?}"
        );
    }

    let overwritten = {
        let db = sled::open(dir.path()).expect("the store opens with sled");
        let keys: Vec<sled::IVec> = db.iter().keys().map(Result::unwrap).collect();
        assert!(!keys.is_empty(), "the store holds values");
        for (i, key) in keys.iter().enumerate() {
            let mut value = Vec::new();
            match i % 7 {
                0 => {}                                                     // empty
                1 => value.extend([99, 7, 0, 0, 0, 0, 0, 0, 0]),            // unknown version 99
                2 => value.extend([0, 7, 0, 0, 0, 0, 0, 0, 0]),             // version 0
                3 => value.extend([1, 7, 0, 0]),                            // version 1, truncated
                4 => value.extend([1, 7, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]), // version 1, too long
                5 => value.push(1),                                         // the version byte alone
                _ => value.extend((0..random.range(2, 63)).map(|_| random.range(2, 255) as u8)),
            }
            db.insert(key, value).unwrap();
        }
        // Stray keys: other game tags and non-canonical encodings, with values of every kind.
        for _ in 0..200 {
            let mut key = vec![random.pick(&[0u8, 3, 4, 255])];
            key.extend((0..random.below(40)).map(|_| random.next_u64() as u8));
            let value: Vec<u8> = (0..random.below(20)).map(|_| random.next_u64() as u8).collect();
            db.insert(key, value).unwrap();
        }
        db.flush().unwrap();
        eprintln!("note: overwrote all {} stored values with garbage and added 200 stray keys", keys.len());
        keys.len()
    };

    let mut server = TestServer::builder().data_dir(dir.path()).start();
    let second = solve_boards(&server, &boards).await;
    assert!(server.stop(), "graceful stop");
    for ((board, before), after) in boards.iter().zip(&first).zip(&second) {
        assert_eq!((before.0, before.1), (after.0, after.1), "a garbage store changed the answer for {board:?}");
        if before.2 > 0 {
            assert!(after.2 > 0, "{board:?} was not recomputed over {overwritten} garbage values: {after:?}");
        }
    }

    let server = TestServer::builder().data_dir(dir.path()).start();
    let third = solve_boards(&server, &boards).await;
    for ((board, before), again) in boards.iter().zip(&first).zip(&third) {
        assert_eq!((before.0, before.1), (again.0, again.1), "{board:?}");
        assert_eq!(again.2, 0, "{board:?}: the recomputed values were not written back over the garbage");
    }
}

// ---- unusable data directories ------------------------------------------------------------------

#[test]
fn a_store_locked_by_a_running_server_is_a_clear_error() {
    let first = TestServer::builder().start();
    // cache.rs words this "locked by another running process" for an io::ErrorGameTag::WouldBlock, but
    // sled 0.34.7 reports a held lock as ErrorGameTag::Other, "could not acquire lock on ...": either
    // wording is one clear line.
    assert_refuses_to_start(&first.data_dir, &[], "lock");
    // The first server is undisturbed.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(assert_answers_exact(&first, &[vec!["00000".to_string(); 5]], "beside a refused server"));
}

#[test]
fn a_file_in_the_way_is_a_clear_error() {
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("file");
    std::fs::write(&file, b"not a directory").unwrap();
    assert_refuses_to_start(&file.join("data"), &[], "Not a directory");
    assert_refuses_to_start(&file, &[], "");
}

/// Tests that mount a tmpfs, so need root: ignored by a plain `cargo test`, run by
/// `scripts/test.sh` (as CI does) with `-- --ignored needs_root::`.
mod needs_root {
    use super::*;

    /// A 64 KiB tmpfs, filled up once the server runs: every answer stays exact, the server stays
    /// healthy and stops without a panic; restarted on the full disk it starts without the store
    /// and answers exactly.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs root"]
    async fn a_full_disk_never_breaks_answers() {
        let temp = tempfile::tempdir().unwrap();
        let mount = Mount::tmpfs(temp.path(), "64k");
        let data_dir = mount.0.join("data");
        let log = temp.path().join("stderr");
        let read_log = || std::fs::read_to_string(&log).unwrap_or_default();

        let mut server = TestServer::builder()
            .data_dir(&data_dir)
            .flags(&[])
            .log("warn", &log)
            .try_start()
            .unwrap_or_else(|exited| panic!("{exited}; stderr:\n{}", read_log()));
        mount.fill();
        let mut random = SplitMix::new(0x5eed_0002);
        let boards: Vec<Vec<String>> = (0..150).map(|i| random_board(&mut random, 6 + i % 3, 6 + i % 4, 15)).collect();
        assert_answers_exact(&server, &boards, "on a full disk").await;
        assert_serving(server.channel().await).await;
        let stopped = server.stop();
        assert!(!read_log().contains("panicked at"), "a panic on a full disk:\n{}", read_log());
        eprintln!("note: on a full disk, a graceful stop exits with status 0: {stopped}");

        let again = TestServer::builder()
            .data_dir(&data_dir)
            .flags(&[])
            .log("warn", &log)
            .try_start()
            .unwrap_or_else(|exited| panic!("restarted on a full disk: {exited}; stderr:\n{}", read_log()));
        assert_answers_exact(&again, &boards[..30], "after a restart on a full disk").await;
        drop(again);
        assert!(!read_log().contains("panicked at"), "{}", read_log());
    }
}

/// Solves every board through `server` and asserts each answer is the engine's.
async fn assert_answers_exact(server: &TestServer, boards: &[Vec<String>], case: &str) {
    let answers = solve_boards(server, boards).await;
    for (board, answer) in boards.iter().zip(answers) {
        assert_eq!(answer.1, engine_value(&board_position(board.clone())).nimber(), "{board:?} {case}");
    }
}

async fn assert_serving(channel: tonic::transport::Channel) {
    use tonic_health::pb::{health_check_response::ServingStatus, health_client::HealthClient, HealthCheckRequest};
    let answer = HealthClient::new(channel).check(HealthCheckRequest { service: String::new() }).await.unwrap();
    assert_eq!(answer.into_inner().status(), ServingStatus::Serving);
}

// ---- fuzzing ------------------------------------------------------------------------------------

/// Which request message a body is decoded as.
#[derive(Clone, Copy, Debug)]
enum Rpc {
    Solve,
    BestMove,
    Analyze,
}

const RPCS: [Rpc; 3] = [Rpc::Solve, Rpc::BestMove, Rpc::Analyze];

/// A valid-looking (mostly) position: any game, odd boards, sums (nested, empty), missing games.
fn seed_position(random: &mut SplitMix, depth: usize) -> proto::Position {
    match random.below(10) {
        0..=4 => {
            let kind = random.pick(GameTag::ALL);
            random_position(random, kind, SMALL_SIDES)
        }
        5 => {
            let height = random.range(1, 17);
            let width = random.range(1, 17);
            let alphabet = ['0', '1', '.', '#', 'x', ' '];
            let rows = (0..height)
                .map(|_| {
                    let width = if random.percent(10) { random.range(0, 17) } else { width };
                    (0..width)
                        .map(|_| {
                            let letters = if random.percent(90) { 4 } else { 6 };
                            random.pick(&alphabet[..letters])
                        })
                        .collect()
                })
                .collect();
            proto::Position { game: Some(P::Tetris(proto::Tetris { rows })) }
        }
        6 if depth < 4 => proto::Position {
            game: Some(P::Sum(proto::Sum {
                components: (0..random.below(5)).map(|_| seed_position(random, depth + 1)).collect(),
            })),
        },
        7 => proto::Position { game: None },
        8 => {
            let interesting = [0, 1, 2, 3, u64::MAX, u64::MAX - 1, 1 << 32, 1 << 63];
            let pick = |random: &mut SplitMix| random.pick(&interesting);
            let game = match random.below(4) {
                0 => P::Cutting(proto::Cutting {
                    pieces: vec![proto::Piece { width: pick(random), height: pick(random) }],
                }),
                1 => P::StoneBoxes(proto::StoneBoxes {
                    boxes: vec![proto::StoneBox { capacity: pick(random), stones: pick(random) }],
                }),
                2 => P::Reclamation(proto::Reclamation {
                    rows: pick(random),
                    reclaimed: vec![proto::Cell { row: pick(random), column: pick(random) }],
                }),
                _ => P::DiagonalWalk(proto::DiagonalWalk {
                    rows: pick(random),
                    columns: pick(random),
                    step: pick(random),
                    row: pick(random),
                    column: pick(random),
                }),
            };
            proto::Position { game: Some(game) }
        }
        _ => random_position(random, GameTag::Tetris, SMALL_SIDES),
    }
}

/// The encoding of a seed request of one of the three kinds.
fn seed_body(random: &mut SplitMix) -> Vec<u8> {
    let position = if random.percent(5) { None } else { Some(seed_position(random, 0)) };
    match random.pick(&RPCS) {
        Rpc::Solve => proto::SolveRequest { position, id: "fuzz".into(), ..Default::default() }.encode_to_vec(),
        Rpc::BestMove => proto::BestMoveRequest { position, ..Default::default() }.encode_to_vec(),
        Rpc::Analyze => {
            let limit = random.pick(&[0, 1, 10, 1000, 1001, u32::MAX]);
            let query = position.as_ref().map(Message::encode_to_vec).unwrap_or_default();
            let page_token = match random.below(5) {
                0 => nimber::page::token(&query, &u128::from(random.below(20)).to_be_bytes()),
                1 => nimber::page::token(&query, &u128::MAX.to_be_bytes()),
                2 => "garbage".into(),
                _ => String::new(),
            };
            proto::AnalyzeRequest { position, limit, page_token, skip: 0, ..Default::default() }.encode_to_vec()
        }
    }
}

fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// One to four random mutations of `body` (bit flips, byte changes, insertions, deletions,
/// duplications, truncation, splices with `other`, interesting varints).
fn mutate(random: &mut SplitMix, mut body: Vec<u8>, other: &[u8]) -> Vec<u8> {
    for _ in 0..random.pick(&[1, 1, 1, 2, 2, 3, 4]) {
        let len = body.len();
        let at = random.index(len);
        match random.below(9) {
            0 if len > 0 => body[at] ^= 1 << random.below(8),
            1 if len > 0 => {
                let any = random.next_u64() as u8;
                body[at] = random.pick(&[0x00, 0x01, 0x7f, 0x80, 0xff, any]);
            }
            2 => {
                let bytes: Vec<u8> = (0..random.range(1, 7)).map(|_| random.next_u64() as u8).collect();
                body.splice(at..at, bytes);
            }
            3 if len > 0 => {
                let end = (at + random.range(1, 15) as usize).min(len);
                body.drain(at..end);
            }
            4 if len > 0 => {
                let end = (at + random.range(1, 31) as usize).min(len);
                let copy = body[at..end].to_vec();
                let to = random.index(len + 1);
                body.splice(to..to, copy);
            }
            5 => body.truncate(at),
            6 if !other.is_empty() => {
                let from = random.index(other.len());
                let end = (from + random.range(1, 63) as usize).min(other.len());
                body.splice(at..at, other[from..end].iter().copied());
            }
            7 => {
                let mut varint = Vec::new();
                let values = [0, 1, 16, 17, 127, 128, 1 << 31, 1 << 32, u32::MAX as u64, 1 << 63, u64::MAX];
                push_varint(&mut varint, random.pick(&values));
                body.splice(at..at, varint);
            }
            _ => {
                // A field key (any number, any wire type) and a length or value.
                let mut field = Vec::new();
                push_varint(&mut field, (random.range(1, 19) << 3) | random.below(8));
                push_varint(&mut field, random.below(300));
                body.splice(at..at, field);
            }
        }
    }
    body
}

/// A protobuf message as a tree of fields, for mutations that keep the encoding well-formed.
#[derive(Clone, Debug)]
enum Field {
    Varint(u64, u64),
    Fixed64(u64, u64),
    Fixed32(u64, u32),
    Bytes(u64, Vec<u8>),
    Message(u64, Vec<Field>),
}

fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

/// Parses a message; length-delimited fields that are printable text stay bytes (strings), others
/// that parse as messages become messages.
fn parse_fields(bytes: &[u8]) -> Option<Vec<Field>> {
    let mut fields = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let key = read_varint(bytes, &mut at)?;
        let number = key >> 3;
        fields.push(match key & 7 {
            0 => Field::Varint(number, read_varint(bytes, &mut at)?),
            1 => {
                let value = u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?);
                at += 8;
                Field::Fixed64(number, value)
            }
            2 => {
                let len = usize::try_from(read_varint(bytes, &mut at)?).ok()?;
                let body = bytes.get(at..at.checked_add(len)?)?;
                at += len;
                let text = body.iter().all(|b| (0x20..0x7f).contains(b));
                match (text, parse_fields(body)) {
                    (false, Some(inner)) => Field::Message(number, inner),
                    _ => Field::Bytes(number, body.to_vec()),
                }
            }
            5 => {
                let value = u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?);
                at += 4;
                Field::Fixed32(number, value)
            }
            _ => return None,
        });
    }
    Some(fields)
}

fn encode_fields(fields: &[Field], out: &mut Vec<u8>) {
    for field in fields {
        match field {
            Field::Varint(number, value) => {
                push_varint(out, number << 3);
                push_varint(out, *value);
            }
            Field::Fixed64(number, value) => {
                push_varint(out, (number << 3) | 1);
                out.extend(value.to_le_bytes());
            }
            Field::Fixed32(number, value) => {
                push_varint(out, (number << 3) | 5);
                out.extend(value.to_le_bytes());
            }
            Field::Bytes(number, bytes) => {
                push_varint(out, (number << 3) | 2);
                push_varint(out, bytes.len() as u64);
                out.extend(bytes);
            }
            Field::Message(number, inner) => {
                let mut body = Vec::new();
                encode_fields(inner, &mut body);
                push_varint(out, (number << 3) | 2);
                push_varint(out, body.len() as u64);
                out.extend(body);
            }
        }
    }
}

/// How many fields the tree holds, nested ones included.
fn count_fields(fields: &[Field]) -> usize {
    fields.iter().map(|field| 1 + if let Field::Message(_, inner) = field { count_fields(inner) } else { 0 }).sum()
}

/// Applies one structural mutation to the `target`-th field (in depth-first order); returns the
/// number of fields still to skip when the target lies beyond `fields`.
fn mutate_field(random: &mut SplitMix, fields: &mut Vec<Field>, mut target: usize) -> usize {
    for index in 0..fields.len() {
        if target == 0 {
            match random.below(6) {
                0 => {
                    fields.remove(index);
                }
                1 => {
                    let copy = fields[index].clone();
                    for _ in 0..random.range(1, 3) {
                        fields.insert(index, copy.clone());
                    }
                }
                2 => {
                    let other = random.index(fields.len());
                    fields.swap(index, other);
                }
                _ => match &mut fields[index] {
                    Field::Varint(number, value) | Field::Fixed64(number, value) => {
                        let values =
                            [0, 1, 2, 3, 15, 16, 17, 255, 256, 1 << 31, 1 << 32, 1 << 63, u64::MAX - 1, u64::MAX];
                        if random.percent(10) {
                            *number = random.range(1, 7);
                        } else if random.percent(50) {
                            *value = random.pick(&values);
                        } else {
                            *value = value.wrapping_add(random.below(3)).wrapping_sub(1);
                        }
                    }
                    Field::Fixed32(_, value) => *value = random.next_u64() as u32,
                    Field::Bytes(_, bytes) => match random.below(4) {
                        0 => bytes.push(random.pick(b"01.#")),
                        1 => {
                            bytes.pop();
                        }
                        2 if !bytes.is_empty() => {
                            let at = random.index(bytes.len());
                            bytes[at] = random.pick(&[b'0', b'1', b'x', 0xff]);
                        }
                        _ => {
                            let copy = bytes.clone();
                            bytes.extend(copy);
                        }
                    },
                    Field::Message(_, inner) => {
                        if !inner.is_empty() && random.percent(50) {
                            let copy = inner[random.index(inner.len())].clone();
                            inner.push(copy);
                        } else {
                            inner.clear();
                        }
                    }
                },
            }
            return 0;
        }
        target -= 1;
        if let Field::Message(_, inner) = &mut fields[index] {
            let inner_count = count_fields(inner);
            if target < inner_count {
                mutate_field(random, inner, target);
                return 0;
            }
            target -= inner_count;
        }
    }
    target
}

/// One to three structural mutations of a well-formed `body`, re-encoded with correct lengths.
fn mutate_structure(random: &mut SplitMix, body: &[u8]) -> Vec<u8> {
    let Some(mut fields) = parse_fields(body) else { return body.to_vec() };
    for _ in 0..random.range(1, 3) {
        let count = count_fields(&fields);
        if count == 0 {
            break;
        }
        let target = random.index(count);
        mutate_field(random, &mut fields, target);
    }
    let mut out = Vec::new();
    encode_fields(&fields, &mut out);
    out
}

/// `count` fuzz bodies: a fifth raw random bytes, a third fresh seed requests (valid encodings of
/// mostly valid, sometimes odd, positions), the rest seed requests mutated: their message structure
/// (re-encoded well-formed) or their bytes.
fn fuzz_bodies(seed: u64, count: usize) -> Vec<Vec<u8>> {
    let mut random = SplitMix::new(seed);
    let pool: Vec<Vec<u8>> = (0..256).map(|_| seed_body(&mut random)).collect();
    (0..count)
        .map(|i| match i % 15 {
            0..=2 => (0..random.below(96)).map(|_| random.next_u64() as u8).collect(),
            3..=7 => seed_body(&mut random),
            8..=11 => {
                let body = seed_body(&mut random);
                mutate_structure(&mut random, &body)
            }
            _ => {
                let body = seed_body(&mut random);
                let other = &pool[random.index(pool.len())];
                mutate(&mut random, body, other)
            }
        })
        .collect()
}

/// Each solve step of a fuzz case gets this budget.
const STEP_MILLIS: u64 = 50;
/// A case that takes longer than this did not honour its budget.
const CASE_LIMIT: Duration = Duration::from_secs(2);

/// A Solve value is checked against its moves when it has at most this many.
const MOVES_CHECKED: usize = 16;
/// Per request kind (`Rpc as usize`), how many answers were checked in full: Solve values against
/// their moves, best moves, Analyze pages (so the checks are known to run, not skipped).
static CHECKED: [AtomicUsize; 3] = [AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0)];

/// What went wrong with one decoded request, if anything (a violated invariant; panics are caught
/// by the caller). Interrupted solves are fine and end the checks.
fn check_request(rpc: Rpc, position: Option<proto::Position>, limit: u32, page_token: &str) -> Result<(), String> {
    let query = position.as_ref().map(Message::encode_to_vec).unwrap_or_default();
    let Ok(domain) = nimber::wire::position_from_proto(position) else { return Ok(()) };
    // What the server answers with must be acceptable input again.
    let echoed = nimber::wire::position_to_proto(&domain);
    let reparsed = nimber::wire::position_from_proto(Some(echoed.clone()))
        .map_err(|error| format!("position_to_proto output {echoed:?} is rejected: {error}"))?;
    let mut solver = SearchContext::new(budget(STEP_MILLIS), &NoMemo);
    let Ok(value) = domain.value(&mut solver) else { return Ok(()) };
    if let Ok(again) = reparsed.value(&mut SearchContext::new(budget(STEP_MILLIS), &NoMemo)) {
        if again != value {
            return Err(format!("value {value:?}, but {again:?} after a protobuf round trip"));
        }
    }
    match rpc {
        Rpc::Solve => {
            // The value Solve answers is the mex of the values its moves reach: checked when there
            // are at most MOVES_CHECKED moves, all valued within one step's budget, as nimbers
            // (the cutting game's literal-rule states are not).
            let Some(nimber) = value.nimber() else { return Ok(()) };
            let moves: Vec<_> = domain.moves().iter().take(MOVES_CHECKED + 1).collect();
            if moves.len() > MOVES_CHECKED {
                return Ok(());
            }
            let mut solver = SearchContext::new(budget(STEP_MILLIS), &NoMemo);
            let mut reached = Vec::new();
            for mv in &moves {
                match domain.play_unchecked(mv).value(&mut solver) {
                    Ok(SumValue::Nimber(after)) => reached.push(after),
                    _ => return Ok(()),
                }
            }
            if mex(reached.iter().copied()) != nimber {
                return Err(format!("value *{nimber}, but its {} moves reach {reached:?}", moves.len()));
            }
        }
        Rpc::BestMove => {
            let mut solver = SearchContext::new(budget(STEP_MILLIS), &NoMemo);
            let Ok((best_value, mv)) = domain.best_move(&mut solver) else { return Ok(()) };
            if best_value != value {
                return Err(format!("best_move says {best_value:?}, value says {value:?}"));
            }
            if let Some(mv) = mv {
                let _ = nimber::wire::move_to_proto(&mv);
                let after = domain.play_unchecked(&mv);
                let after_proto = nimber::wire::position_to_proto(&after);
                nimber::wire::position_from_proto(Some(after_proto.clone()))
                    .map_err(|error| format!("the position after {mv:?}, {after_proto:?}, is rejected: {error}"))?;
                if let Some(target) = value.winning_target() {
                    if let Ok(reached) = after.value(&mut SearchContext::new(budget(STEP_MILLIS), &NoMemo)) {
                        if reached != target {
                            return Err(format!("best move {mv:?} from {value:?} reaches {reached:?}, not {target:?}"));
                        }
                    }
                }
            } else if value.outcome() == Outcome::NextPlayerWins || !domain.moves().is_empty() {
                return Err(format!("no best move from {value:?} though moves exist"));
            }
        }
        Rpc::Analyze => {
            let pages = [nimber::wire::page_from_proto(limit, page_token, &query).ok(), Some((0, 10))];
            for (offset, limit) in pages.into_iter().flatten() {
                let mut solver = SearchContext::new(budget(STEP_MILLIS), &NoMemo);
                let Ok(analysis) = analysis::analyze(&domain, offset, limit, &mut solver) else { return Ok(()) };
                let _ = nimber::wire::analysis_to_proto(&domain, &analysis, &query, proto::Stats::default());
                if analysis.value != value {
                    return Err(format!("analyze says {:?}, value says {value:?}", analysis.value));
                }
                if analysis.moves.len() > limit || analysis.winning_moves > analysis.total_moves {
                    return Err(format!(
                        "page of {} moves (limit {limit}), {} winning of {} moves",
                        analysis.moves.len(),
                        analysis.winning_moves,
                        analysis.total_moves
                    ));
                }
                if (analysis.winning_moves > 0) != (value.outcome() == Outcome::NextPlayerWins) {
                    return Err(format!("{} winning moves from a position of value {value:?}", analysis.winning_moves));
                }
            }
        }
    }
    CHECKED[rpc as usize].fetch_add(1, Ordering::Relaxed);
    Ok(())
}

/// Decodes `body` as each request type and checks what decodes; `Err` describes a panic, a broken
/// invariant or an ignored budget.
fn check_body(body: &[u8]) -> Result<(), String> {
    for rpc in RPCS {
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| match rpc {
            Rpc::Solve => match proto::SolveRequest::decode(body) {
                Ok(request) => check_request(rpc, request.position, 0, ""),
                Err(_) => Ok(()),
            },
            Rpc::BestMove => match proto::BestMoveRequest::decode(body) {
                Ok(request) => check_request(rpc, request.position, 0, ""),
                Err(_) => Ok(()),
            },
            Rpc::Analyze => match proto::AnalyzeRequest::decode(body) {
                Ok(request) => check_request(rpc, request.position, request.limit, &request.page_token),
                Err(_) => Ok(()),
            },
        }));
        let problem = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(wrong)) => Some(format!("wrong: {wrong}")),
            Err(panic) => Some(format!(
                "PANIC: {}",
                panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or(panic.downcast_ref::<&str>().copied())
                    .unwrap_or("?")
            )),
        };
        let problem = problem.or_else(|| {
            let took = started.elapsed();
            (took > CASE_LIMIT).then(|| format!("took {took:?} with a budget of {STEP_MILLIS} ms per step"))
        });
        if let Some(problem) = problem {
            return Err(format!("{rpc:?} body {}: {problem}", hex(body)));
        }
    }
    Ok(())
}

/// Layer (a): thousands of arbitrary and mutated bodies, decoded, converted, solved, best-moved and
/// analyzed in this process under a small budget: never a panic, never an inconsistent answer.
#[test]
fn fuzzed_requests_never_panic_in_process() {
    const CASES: usize = 60_000;
    let bodies = fuzz_bodies(0xf022_0001, CASES);
    let started = Instant::now();
    // Per kind of body (raw, seed, structure-mutated, byte-mutated): how many decode as some request, and how many of
    // those hold a valid position (so reach the engine).
    let mut decoded = [0usize; 4];
    let mut valid = [0usize; 4];
    let mut failures = Vec::new();
    for (i, body) in bodies.iter().enumerate() {
        let kind = match i % 15 {
            0..=2 => 0,
            3..=7 => 1,
            8..=11 => 2,
            _ => 3,
        };
        let positions = [
            proto::SolveRequest::decode(body.as_slice()).map(|r| r.position),
            proto::BestMoveRequest::decode(body.as_slice()).map(|r| r.position),
            proto::AnalyzeRequest::decode(body.as_slice()).map(|r| r.position),
        ];
        decoded[kind] += usize::from(positions.iter().any(Result::is_ok));
        valid[kind] += usize::from(
            positions.into_iter().flatten().any(|position| nimber::wire::position_from_proto(position).is_ok()),
        );
        if let Err(failure) = check_body(body) {
            failures.push(failure);
        }
    }
    eprintln!(
        "fuzz (in process): {CASES} bodies in {:?}, {} failures; decoded / valid position: raw {}/{}, seeds {}/{}, structure-mutated {}/{}, byte-mutated {}/{}",
        started.elapsed(),
        failures.len(),
        decoded[0],
        valid[0],
        decoded[1],
        valid[1],
        decoded[2],
        valid[2],
        decoded[3],
        valid[3]
    );
    let total_valid: usize = valid.iter().sum();
    assert!(total_valid > CASES / 4, "the generator should often produce valid requests ({valid:?} of {CASES})");
    let checked = CHECKED.each_ref().map(|count| count.load(Ordering::Relaxed));
    eprintln!("fuzz (in process): checked in full (Solve, BestMove, Analyze): {checked:?}");
    assert!(checked.iter().all(|&count| count > CASES / 20), "too few answers checked in full: {checked:?}");
    assert!(
        failures.is_empty(),
        "{} of {CASES} fuzz cases failed; the first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

/// Layer (b): a few hundred fuzz bodies through the real server, both as decoded messages through
/// the generated client and as raw bytes, each call with a 200 ms deadline: every call answers OK
/// or INVALID_ARGUMENT / DEADLINE_EXCEEDED / CANCELLED (a body that does not decode included: never
/// INTERNAL); Solve answers match the engine; the server stays healthy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzzed_requests_through_the_server_get_proper_statuses() {
    const CASES: usize = 1000;
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let channel = server.channel().await;
    let bodies = fuzz_bodies(0xf022_0002, CASES);
    let deadline = Duration::from_millis(200);
    let acceptable = [Code::Ok, Code::InvalidArgument, Code::DeadlineExceeded, Code::Cancelled];
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut codes = std::collections::BTreeMap::<String, usize>::new();
    for (i, body) in bodies.iter().enumerate() {
        let rpc = RPCS[i % 3];
        // Decoded, through the generated client.
        let typed: Option<Result<Option<(SumValue, u64)>, tonic::Status>> = match rpc {
            Rpc::Solve => match proto::SolveRequest::decode(body.as_slice()) {
                Ok(message) => {
                    let mut request = tonic::Request::new(message);
                    request.set_timeout(deadline);
                    Some(client.solve(request).await.map(|answer| {
                        let answer = answer.into_inner();
                        let value = match (answer.outcome(), answer.grundy) {
                            (_, Some(grundy)) => SumValue::Nimber(grundy),
                            (proto::Outcome::NextPlayerWins, None) => SumValue::WinsAtOnce,
                            (_, None) => SumValue::Finished,
                        };
                        Some((value, 0))
                    }))
                }
                Err(_) => None,
            },
            Rpc::BestMove => match proto::BestMoveRequest::decode(body.as_slice()) {
                Ok(message) => {
                    let mut request = tonic::Request::new(message);
                    request.set_timeout(deadline);
                    Some(client.best_move(request).await.map(|_| None))
                }
                Err(_) => None,
            },
            Rpc::Analyze => match proto::AnalyzeRequest::decode(body.as_slice()) {
                Ok(message) => {
                    let mut request = tonic::Request::new(message);
                    request.set_timeout(deadline);
                    Some(client.analyze(request).await.map(|_| None))
                }
                Err(_) => None,
            },
        };
        match typed {
            Some(Ok(answer)) => {
                *codes.entry(format!("{rpc:?} Ok")).or_default() += 1;
                if let Some((served, _)) = answer {
                    // The server's answer against the engine in this process (when it finishes quickly).
                    let request = proto::SolveRequest::decode(body.as_slice()).unwrap();
                    let domain = nimber::wire::position_from_proto(request.position).unwrap();
                    if let Ok(expected) = domain.value(&mut SearchContext::new(budget(500), &NoMemo)) {
                        if served != expected {
                            failures
                                .push(format!("Solve body {}: server says {served:?}, engine {expected:?}", hex(body)));
                        }
                    }
                }
            }
            Some(Err(status)) => {
                *codes.entry(format!("{rpc:?} {:?}", status.code())).or_default() += 1;
                if !acceptable.contains(&status.code()) {
                    failures.push(format!(
                        "{rpc:?} body {}: status {:?}: {}",
                        hex(body),
                        status.code(),
                        status.message()
                    ));
                }
            }
            None => {}
        }
        // Raw, through the byte codec: whatever the body is.
        let path = match rpc {
            Rpc::Solve => "/nimber.v1.Solver/Solve",
            Rpc::BestMove => "/nimber.v1.Solver/BestMove",
            Rpc::Analyze => "/nimber.v1.Solver/Analyze",
        };
        let answer = call_raw(channel.clone(), path, common::with_timeout(body.clone(), deadline)).await;
        let code = answer.as_ref().map_or_else(|status| status.code(), |_| Code::Ok);
        *codes.entry(format!("raw {code:?}")).or_default() += 1;
        if !acceptable.contains(&code) {
            let message = answer.err().map(|status| status.message().to_string()).unwrap_or_default();
            failures.push(format!("raw {rpc:?} body {}: status {code:?}: {message}", hex(body)));
        }
    }
    eprintln!("fuzz (server): {CASES} bodies in {:?}; answers: {codes:?}", started.elapsed());
    assert_serving(channel).await;
    assert!(
        failures.is_empty(),
        "{} fuzz calls failed; the first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

/// The decoded-position helper of the fuzz suite itself works on a plain request (guards against a
/// generator that silently produces nothing checkable).
#[test]
fn the_fuzz_checks_accept_a_valid_request() {
    let body = proto::BestMoveRequest {
        position: Some(board_position(vec!["0000".into(), "0000".into()])),
        ..Default::default()
    }
    .encode_to_vec();
    check_body(&body).unwrap();
    let position: Position =
        nimber::wire::position_from_proto(Some(board_position(vec!["000".into(), "000".into()]))).unwrap();
    assert_eq!(position.value(&mut SearchContext::in_memory()).unwrap(), SumValue::Nimber(1));
}

// ---- bodies that do not decode, and long input repeated in messages ------------------------------

/// Every method of the services whose bodies the server decodes as protobuf messages: those in
/// nimber's descriptor set (nimber.v1.Solver, google.longrunning.Operations) and health's.
/// Reflection is not among them: tonic-reflection ends its stream with OK when a request does not
/// decode, without answering.
fn every_decoding_method() -> Vec<&'static str> {
    let mut paths = Vec::new();
    for set in [proto::FILE_DESCRIPTOR_SET, tonic_health::pb::FILE_DESCRIPTOR_SET] {
        let files = prost_types::FileDescriptorSet::decode(set).expect("a descriptor set");
        for file in &files.file {
            for service in &file.service {
                for method in &service.method {
                    let path = format!("/{}.{}/{}", file.package(), service.name(), method.name());
                    paths.push(&*path.leak());
                }
            }
        }
    }
    paths
}

/// A body that does not decode as any message, to every method of every service, through the
/// real server: each is INVALID_ARGUMENT (the client's mistake, as the README says), logged at
/// DEBUG, and nothing is logged at ERROR. (Operations and health used to answer INTERNAL, logged
/// at ERROR: their codec was prost's.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_that_do_not_decode_are_invalid_argument_for_every_service() {
    let directory = tempfile::tempdir().unwrap();
    let log = directory.path().join("server.log");
    let server = TestServer::builder().flags(&["--log-lines-per-second", "0"]).log("info,nimber=debug", &log).start();
    let channel = server.channel().await;
    let methods = every_decoding_method();
    for service in ["/nimber.v1.Solver/", "/google.longrunning.Operations/", "/grpc.health.v1.Health/"] {
        assert!(methods.iter().any(|path| path.starts_with(service)), "no method of {service} in {methods:?}");
    }
    // A field that runs past the end, a truncated varint, a wire type of 7.
    let bodies: [&[u8]; 3] = [&[0x0a, 0x05, 0x32], &[0x08, 0xff], &[0x0f]];
    let mut failures = Vec::new();
    for &path in &methods {
        for body in bodies {
            let answer = call_raw(channel.clone(), path, common::with_timeout(body.to_vec(), Duration::from_secs(10)));
            match answer.await {
                Err(status) if status.code() == Code::InvalidArgument => {}
                Err(status) => failures.push(format!("{path} {}: {:?} {}", hex(body), status.code(), status.message())),
                Ok(answer) => failures.push(format!("{path} {}: OK {}", hex(body), hex(&answer))),
            }
        }
    }
    assert!(failures.is_empty(), "bodies that do not decode answered otherwise:\n{}", failures.join("\n"));
    let calls = methods.len() * bodies.len();
    let logged = || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        text.lines().filter(|line| line.contains("DEBUG") && line.contains("INVALID_ARGUMENT")).count()
    };
    common::wait_until(Duration::from_secs(10), "every failed call logged", async || logged() >= calls).await;
    let text = std::fs::read_to_string(&log).unwrap();
    let errors: Vec<&str> = text.lines().filter(|line| line.contains("ERROR")).collect();
    assert!(errors.is_empty(), "ERROR lines for bodies that do not decode:\n{}", errors.join("\n"));
    assert_serving(channel).await;
}

/// A 100 kB operation name, filter or page token is repeated in the answer's message only as its
/// start, an ellipsis and its length, so that the client sees the answer (NOT_FOUND,
/// INVALID_ARGUMENT) and not RESOURCE_EXHAUSTED for a header block over its limit; so is a message
/// of a service that repeats a client's input whole (reflection's for an unknown symbol), cut by
/// the call layer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_input_is_repeated_short_in_every_message() {
    use nimber::google::longrunning as lro;
    const LONG: usize = 100_000;
    let server = TestServer::builder().start();
    let channel = server.channel().await;
    let mut operations = lro::operations_client::OperationsClient::new(channel.clone());
    let mut solver = server.client().await;
    let name = format!("operations/{}", "a".repeat(LONG));
    let long = "x".repeat(LONG);
    let mut answers = vec![
        (
            "GetOperation name",
            Code::NotFound,
            operations.get_operation(lro::GetOperationRequest { name: name.clone() }).await.map(drop),
        ),
        (
            "CancelOperation name",
            Code::NotFound,
            operations.cancel_operation(lro::CancelOperationRequest { name: name.clone() }).await.map(drop),
        ),
        (
            "DeleteOperation name",
            Code::NotFound,
            operations.delete_operation(lro::DeleteOperationRequest { name: name.clone() }).await.map(drop),
        ),
        (
            "WaitOperation name",
            Code::NotFound,
            operations.wait_operation(lro::WaitOperationRequest { name: name.clone(), timeout: None }).await.map(drop),
        ),
        (
            "ListOperations name",
            Code::NotFound,
            operations
                .list_operations(lro::ListOperationsRequest { name: long.clone(), ..Default::default() })
                .await
                .map(drop),
        ),
        (
            "ListOperations filter",
            Code::InvalidArgument,
            operations
                .list_operations(lro::ListOperationsRequest { filter: long.clone(), ..Default::default() })
                .await
                .map(drop),
        ),
        (
            "ListOperations page_token",
            Code::InvalidArgument,
            operations
                .list_operations(lro::ListOperationsRequest { page_token: long.clone(), ..Default::default() })
                .await
                .map(drop),
        ),
        (
            "ListExploreRows name",
            Code::NotFound,
            solver
                .list_explore_rows(proto::ListExploreRowsRequest { name: name.clone(), ..Default::default() })
                .await
                .map(drop),
        ),
        (
            "WatchExplore name",
            Code::NotFound,
            solver.watch_explore(proto::WatchExploreRequest { name: name.clone() }).await.map(drop),
        ),
    ];
    let mut reflection =
        tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient::new(channel.clone());
    let request = tonic_reflection::pb::v1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            tonic_reflection::pb::v1::server_reflection_request::MessageRequest::FileContainingSymbol(long.clone()),
        ),
    };
    let reflected = match reflection.server_reflection_info(tokio_stream::iter([request])).await {
        Ok(responses) => responses.into_inner().message().await.map(drop),
        Err(status) => Err(status),
    };
    answers.push(("reflection symbol", Code::NotFound, reflected));
    let mut failures = Vec::new();
    for (what, expected, answer) in answers {
        let Err(status) = answer else {
            failures.push(format!("{what}: OK"));
            continue;
        };
        let message = status.message();
        // Our messages quote the input's start; reflection's is cut whole by the call layer.
        let bound =
            if what.starts_with("reflection") { nimber::grpc::calls::MAX_STATUS_MESSAGE_BYTES + 64 } else { 256 };
        if status.code() != expected || message.len() > bound || !message.contains('…') {
            failures.push(format!("{what}: {:?} ({} bytes) {:.300}", status.code(), message.len(), message));
        }
    }
    assert!(failures.is_empty(), "answers to long input:\n{}", failures.join("\n"));
}

/// A long invalid code reaches a C-core client (Python's grpcio, installed by the test command) as
/// INVALID_ARGUMENT: the code is quoted short in the message and in the BadRequest detail. Repeated
/// whole, an 8 000-digit code made a detail of 16 kB, and grpcio failed with RESOURCE_EXHAUSTED
/// (its limit on metadata is 8 to 16 KiB) instead of the answer.
#[test]
fn a_long_invalid_code_reaches_a_c_core_client_as_invalid_argument() {
    let server = TestServer::builder().start();
    let code = format!("0.{}", "7".repeat(8000));
    let rules = Some(proto::heaps::Rules::Code(code));
    let position = proto::Position { game: Some(P::Heaps(proto::Heaps { rules, heaps: vec![1] })) };
    let request =
        proto::SolveRequest { position: Some(position), id: String::new(), ..Default::default() }.encode_to_vec();
    let script = format!(
        "source scripts/lib.sh && use_tools && python tests/fixtures/grpcio_call.py {} /nimber.v1.Solver/Solve {}",
        server.address(),
        hex(&request)
    );
    let output = std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "grpcio failed: {}", String::from_utf8_lossy(&output.stderr));
    let mut lines = stdout.lines();
    let first: Vec<&str> = lines.next().unwrap_or_default().split(' ').collect();
    assert_eq!(first[0], "INVALID_ARGUMENT", "{stdout}");
    let (message_bytes, details_bytes): (usize, usize) = (first[1].parse().unwrap(), first[2].parse().unwrap());
    assert!(message_bytes < 512 && details_bytes > 0 && details_bytes < 1024, "{stdout}");
    let message = lines.next().unwrap_or_default();
    assert!(message.starts_with("heaps.code \"0.777"), "{message}");
    assert!(message.contains("… (8002 bytes): character 34 ('7') is past the limit of 32 digits"), "{message}");
}
