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
use std::io::{BufRead, BufReader, Write as _};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{random_position, Game as Kind, Mount, RawCodec, TestServer};
use nimber::games::sum::SumValue;
use nimber::games::{analysis, Budget, Game, NoMemo, Outcome, Position, SearchContext, Value};
use nimber::proto::{self, position::Game as P};
use prost::Message;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tonic::Code;

// ---- helpers ------------------------------------------------------------------------------------

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut out, byte| {
        let _ = write!(out, "{byte:02x}");
        out
    })
}

fn tetris(rows: &[String]) -> proto::Position {
    proto::Position { game: Some(P::Tetris(proto::Tetris { rows: rows.to_vec() })) }
}

/// A random board of `height × width` cells, each blocked with probability `blocked`.
fn random_board(random: &mut StdRng, height: usize, width: usize, blocked: f64) -> Vec<String> {
    (0..height).map(|_| (0..width).map(|_| if random.gen_bool(blocked) { '1' } else { '0' }).collect()).collect()
}

/// The engine's own value of a protobuf position, in this process, without any store.
fn engine_value(position: &proto::Position) -> SumValue {
    nimber::convert::position_from_proto(Some(position.clone()))
        .unwrap()
        .value(&mut SearchContext::in_memory())
        .unwrap()
}

/// A budget that ends `millis` from now.
fn budget(millis: u64) -> Budget {
    Budget::new(Some(Instant::now() + Duration::from_millis(millis)), Arc::new(AtomicBool::new(false)))
}

/// A server process started by hand, with its stderr kept in a file for inspection.
struct Spawned {
    child: Child,
    address: Option<String>,
    stderr: PathBuf,
    _logs: tempfile::TempDir,
}

impl Spawned {
    /// Starts `nimber serve` on `data_dir`; `address` is `None` when it exited without listening.
    fn start(data_dir: &Path) -> Self {
        let logs = tempfile::tempdir().unwrap();
        let stderr = logs.path().join("stderr");
        let mut child = Command::new(env!("CARGO_BIN_EXE_nimber"))
            .args(["serve", "--listen", "127.0.0.1:0", "--shutdown-grace-ms", "5000", "--data-dir"])
            .arg(data_dir)
            .arg("--jobs-dir")
            .arg(logs.path().join("jobs"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .expect("the nimber binary starts");
        let mut first_line = String::new();
        let _ = BufReader::new(child.stdout.take().unwrap()).read_line(&mut first_line);
        let address = first_line.trim().strip_prefix("nimber listening on ").map(str::to_string);
        Self { child, address, stderr, _logs: logs }
    }

    /// Waits at most `limit` for the process to exit; kills it and panics if it does not.
    fn wait(&mut self, limit: Duration) -> ExitStatus {
        let until = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > until {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("the server did not exit within {limit:?}; stderr:\n{}", self.stderr_text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn terminate(&mut self) -> ExitStatus {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        self.wait(Duration::from_secs(20))
    }

    fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Starting the server on `data_dir` must fail at once: a non-zero exit, exactly one line on stderr
/// (`nimber: cannot open the cache store at DIR: REASON`, REASON containing `reason`), no panic.
fn assert_refuses_to_start(data_dir: &Path, reason: &str) {
    let mut server = Spawned::start(data_dir);
    assert!(server.address.is_none(), "the server started on {}", data_dir.display());
    let status = server.wait(Duration::from_secs(20));
    let stderr = server.stderr_text();
    assert!(!status.success(), "exit status {status} on {}; stderr:\n{stderr}", data_dir.display());
    assert!(!stderr.contains("panicked"), "a panic on {}:\n{stderr}", data_dir.display());
    let lines: Vec<&str> = stderr.lines().filter(|line| !line.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one error line on {}, got:\n{stderr}", data_dir.display());
    let expected = format!("nimber: cannot open the cache store at {}", data_dir.display());
    assert!(lines[0].starts_with(&expected), "{:?} should start with {expected:?}", lines[0]);
    assert!(lines[0].contains(reason), "{:?} should say {reason:?}", lines[0]);
}

// ---- the store ----------------------------------------------------------------------------------

/// Solves every board, returning (outcome, grundy, positions_computed) per board.
async fn solve_boards(server: &TestServer, boards: &[Vec<String>]) -> Vec<(i32, Option<u64>, u64)> {
    let mut client = server.client().await;
    let mut answers = Vec::new();
    for board in boards {
        let request = proto::SolveRequest { position: Some(tetris(board)), id: String::new() };
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
    let mut random = StdRng::seed_from_u64(0x5eed_0001);
    let boards: Vec<Vec<String>> = (0..12).map(|i| random_board(&mut random, 8 + i % 2, 8, 0.12)).collect();

    let mut server = TestServer::start_in(dir.path(), &[]);
    let first = solve_boards(&server, &boards).await;
    assert!(server.stop(), "graceful stop");
    assert!(first.iter().any(|answer| answer.2 > 0), "the boards need search, so the store gets values: {first:?}");
    for (board, answer) in boards.iter().zip(&first) {
        let expected = engine_value(&tetris(board));
        assert_eq!(
            (answer.0, answer.1),
            (nimber::convert::outcome_to_proto(expected) as i32, expected.nimber()),
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
                _ => value.extend((0..random.gen_range(2..64)).map(|_| random.gen_range(2..=255u8))),
            }
            db.insert(key, value).unwrap();
        }
        // Stray keys: other game tags and non-canonical encodings, with values of every kind.
        for _ in 0..200 {
            let mut key = vec![[0u8, 3, 4, 255][random.gen_range(0..4)]];
            key.extend((0..random.gen_range(0..40)).map(|_| random.gen::<u8>()));
            let value: Vec<u8> = (0..random.gen_range(0..20)).map(|_| random.gen()).collect();
            db.insert(key, value).unwrap();
        }
        db.flush().unwrap();
        eprintln!("note: overwrote all {} stored values with garbage and added 200 stray keys", keys.len());
        keys.len()
    };

    let mut server = TestServer::start_in(dir.path(), &[]);
    let second = solve_boards(&server, &boards).await;
    assert!(server.stop(), "graceful stop");
    for ((board, before), after) in boards.iter().zip(&first).zip(&second) {
        assert_eq!((before.0, before.1), (after.0, after.1), "a garbage store changed the answer for {board:?}");
        if before.2 > 0 {
            assert!(after.2 > 0, "{board:?} was not recomputed over {overwritten} garbage values: {after:?}");
        }
    }

    let server = TestServer::start_in(dir.path(), &[]);
    let third = solve_boards(&server, &boards).await;
    for ((board, before), again) in boards.iter().zip(&first).zip(&third) {
        assert_eq!((before.0, before.1), (again.0, again.1), "{board:?}");
        assert_eq!(again.2, 0, "{board:?}: the recomputed values were not written back over the garbage");
    }
}

// ---- unusable data directories ------------------------------------------------------------------

#[test]
fn a_store_locked_by_a_running_server_is_a_clear_error() {
    let first = TestServer::start();
    // cache.rs words this "locked by another running process" for an io::ErrorKind::WouldBlock, but
    // sled 0.34.7 reports a held lock as ErrorKind::Other, "could not acquire lock on ...": either
    // wording is one clear line.
    assert_refuses_to_start(&first.data_dir, "lock");
    // The first server is undisturbed.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let board = vec!["00000".to_string(); 5];
        let answers = solve_boards(&first, std::slice::from_ref(&board)).await;
        assert_eq!(answers[0].1, engine_value(&tetris(&board)).nimber());
    });
}

#[test]
fn a_file_in_the_way_is_a_clear_error() {
    let temp = tempfile::tempdir().unwrap();
    let file = temp.path().join("file");
    std::fs::write(&file, b"not a directory").unwrap();
    assert_refuses_to_start(&file.join("data"), "Not a directory");
    assert_refuses_to_start(&file, "");
}

/// A 64 KiB tmpfs, filled up once the server runs: every answer stays exact, the server stays
/// healthy and stops without a panic; restarted on the full disk it either answers exactly or
/// refuses to start with one clear line. Needs root to mount the tmpfs (as CI runs here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_never_breaks_answers() {
    let temp = tempfile::tempdir().unwrap();
    let mount = Mount::tmpfs(temp.path(), "64k");
    let mount_point = mount.0.clone();
    let data_dir = mount_point.join("data");

    let mut server = Spawned::start(&data_dir);
    let address =
        server.address.clone().unwrap_or_else(|| panic!("the server did not start:\n{}", server.stderr_text()));
    // Fill what is left of the disk.
    {
        let mut filler = std::fs::File::create(mount_point.join("filler")).unwrap();
        let block = [0u8; 4096];
        while filler.write_all(&block).is_ok() {}
        let _ = filler.sync_all();
    }
    let mut random = StdRng::seed_from_u64(0x5eed_0002);
    let boards: Vec<Vec<String>> = (0..150).map(|i| random_board(&mut random, 6 + i % 3, 6 + i % 4, 0.15)).collect();
    let mut client = proto::solver_client::SolverClient::connect(format!("http://{address}")).await.unwrap();
    for board in &boards {
        let request = proto::SolveRequest { position: Some(tetris(board)), id: String::new() };
        let answer = client.solve(request).await.unwrap_or_else(|status| panic!("{board:?} on a full disk: {status}"));
        assert_eq!(answer.into_inner().grundy, engine_value(&tetris(board)).nimber(), "{board:?} on a full disk");
    }
    let channel = tonic::transport::Channel::from_shared(format!("http://{address}")).unwrap().connect().await.unwrap();
    assert_serving(channel).await;
    let status = server.terminate();
    let stderr = server.stderr_text();
    assert!(!stderr.contains("panicked"), "a panic on a full disk:\n{stderr}");
    eprintln!(
        "note: on a full disk, a graceful stop exits with {status}; last stderr line: {:?}",
        stderr.lines().last()
    );

    // Restarted on the full disk.
    let mut again = Spawned::start(&data_dir);
    match again.address.clone() {
        Some(address) => {
            let mut client = proto::solver_client::SolverClient::connect(format!("http://{address}")).await.unwrap();
            for board in boards.iter().take(30) {
                let request = proto::SolveRequest { position: Some(tetris(board)), id: String::new() };
                let answer = client.solve(request).await.unwrap().into_inner();
                assert_eq!(
                    answer.grundy,
                    engine_value(&tetris(board)).nimber(),
                    "{board:?} after a restart on a full disk"
                );
            }
            again.terminate();
            assert!(!again.stderr_text().contains("panicked"), "{}", again.stderr_text());
        }
        None => {
            drop(again);
            assert_refuses_to_start(&data_dir, "No space left on device");
        }
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
fn seed_position(random: &mut StdRng, depth: usize) -> proto::Position {
    match random.gen_range(0..10) {
        0..=4 => {
            let kind = Kind::ALL[random.gen_range(0..Kind::ALL.len())];
            random_position(random, kind)
        }
        5 => {
            let height = random.gen_range(1..=17);
            let width = random.gen_range(1..=17);
            let alphabet = ['0', '1', '.', '#', 'x', ' '];
            let rows = (0..height)
                .map(|_| {
                    let width = if random.gen_bool(0.1) { random.gen_range(0..=17) } else { width };
                    (0..width)
                        .map(|_| {
                            let letters = if random.gen_bool(0.9) { 4 } else { 6 };
                            alphabet[random.gen_range(0..letters)]
                        })
                        .collect()
                })
                .collect();
            proto::Position { game: Some(P::Tetris(proto::Tetris { rows })) }
        }
        6 if depth < 4 => proto::Position {
            game: Some(P::Sum(proto::Sum {
                components: (0..random.gen_range(0..5)).map(|_| seed_position(random, depth + 1)).collect(),
            })),
        },
        7 => proto::Position { game: None },
        8 => {
            let interesting = [0, 1, 2, 3, u64::MAX, u64::MAX - 1, 1 << 32, 1 << 63];
            let pick = |random: &mut StdRng| interesting[random.gen_range(0..interesting.len())];
            let game = match random.gen_range(0..4) {
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
        _ => random_position(random, Kind::Tetris),
    }
}

/// The encoding of a seed request of one of the three kinds.
fn seed_body(random: &mut StdRng) -> Vec<u8> {
    let position = if random.gen_bool(0.05) { None } else { Some(seed_position(random, 0)) };
    match RPCS[random.gen_range(0..3)] {
        Rpc::Solve => proto::SolveRequest { position, id: "fuzz".into() }.encode_to_vec(),
        Rpc::BestMove => proto::BestMoveRequest { position }.encode_to_vec(),
        Rpc::Analyze => {
            let limit = [0, 1, 10, 1000, 1001, u32::MAX][random.gen_range(0..6)];
            let page_token = match random.gen_range(0..5) {
                0 => format!("offset:{}", random.gen_range(0..20)),
                1 => format!("offset:{}", u128::MAX),
                2 => "garbage".into(),
                _ => String::new(),
            };
            proto::AnalyzeRequest { position, limit, page_token }.encode_to_vec()
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
fn mutate(random: &mut StdRng, mut body: Vec<u8>, other: &[u8]) -> Vec<u8> {
    for _ in 0..[1, 1, 1, 2, 2, 3, 4][random.gen_range(0..7)] {
        let len = body.len();
        let at = if len == 0 { 0 } else { random.gen_range(0..len) };
        match random.gen_range(0..9) {
            0 if len > 0 => body[at] ^= 1 << random.gen_range(0..8),
            1 if len > 0 => body[at] = [0x00, 0x01, 0x7f, 0x80, 0xff, random.gen()][random.gen_range(0..6)],
            2 => {
                let bytes: Vec<u8> = (0..random.gen_range(1..8)).map(|_| random.gen()).collect();
                body.splice(at..at, bytes);
            }
            3 if len > 0 => {
                let end = (at + random.gen_range(1..16)).min(len);
                body.drain(at..end);
            }
            4 if len > 0 => {
                let end = (at + random.gen_range(1..32)).min(len);
                let copy = body[at..end].to_vec();
                let to = random.gen_range(0..=len);
                body.splice(to..to, copy);
            }
            5 => body.truncate(at),
            6 if !other.is_empty() => {
                let from = random.gen_range(0..other.len());
                let end = (from + random.gen_range(1..64)).min(other.len());
                body.splice(at..at, other[from..end].iter().copied());
            }
            7 => {
                let mut varint = Vec::new();
                let values = [0, 1, 16, 17, 127, 128, 1 << 31, 1 << 32, u32::MAX as u64, 1 << 63, u64::MAX];
                push_varint(&mut varint, values[random.gen_range(0..values.len())]);
                body.splice(at..at, varint);
            }
            _ => {
                // A field key (any number, any wire type) and a length or value.
                let mut field = Vec::new();
                push_varint(&mut field, (random.gen_range(1..20u64) << 3) | random.gen_range(0..8u64));
                push_varint(&mut field, random.gen_range(0..300));
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
fn mutate_field(random: &mut StdRng, fields: &mut Vec<Field>, mut target: usize) -> usize {
    for index in 0..fields.len() {
        if target == 0 {
            match random.gen_range(0..6) {
                0 => {
                    fields.remove(index);
                }
                1 => {
                    let copy = fields[index].clone();
                    for _ in 0..random.gen_range(1..4) {
                        fields.insert(index, copy.clone());
                    }
                }
                2 => {
                    let other = random.gen_range(0..fields.len());
                    fields.swap(index, other);
                }
                _ => match &mut fields[index] {
                    Field::Varint(number, value) | Field::Fixed64(number, value) => {
                        let values =
                            [0, 1, 2, 3, 15, 16, 17, 255, 256, 1 << 31, 1 << 32, 1 << 63, u64::MAX - 1, u64::MAX];
                        if random.gen_bool(0.1) {
                            *number = random.gen_range(1..8);
                        } else if random.gen_bool(0.5) {
                            *value = values[random.gen_range(0..values.len())];
                        } else {
                            *value = value.wrapping_add(random.gen_range(0..3)).wrapping_sub(1);
                        }
                    }
                    Field::Fixed32(_, value) => *value = random.gen(),
                    Field::Bytes(_, bytes) => match random.gen_range(0..4) {
                        0 => bytes.push([b'0', b'1', b'.', b'#'][random.gen_range(0..4)]),
                        1 => {
                            bytes.pop();
                        }
                        2 if !bytes.is_empty() => {
                            let at = random.gen_range(0..bytes.len());
                            bytes[at] = [b'0', b'1', b'x', 0xff][random.gen_range(0..4)];
                        }
                        _ => {
                            let copy = bytes.clone();
                            bytes.extend(copy);
                        }
                    },
                    Field::Message(_, inner) => {
                        if !inner.is_empty() && random.gen_bool(0.5) {
                            let copy = inner[random.gen_range(0..inner.len())].clone();
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
fn mutate_structure(random: &mut StdRng, body: &[u8]) -> Vec<u8> {
    let Some(mut fields) = parse_fields(body) else { return body.to_vec() };
    for _ in 0..random.gen_range(1..=3) {
        let count = count_fields(&fields);
        if count == 0 {
            break;
        }
        let target = random.gen_range(0..count);
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
    let mut random = StdRng::seed_from_u64(seed);
    let pool: Vec<Vec<u8>> = (0..256).map(|_| seed_body(&mut random)).collect();
    (0..count)
        .map(|i| match i % 15 {
            0..=2 => (0..random.gen_range(0..96)).map(|_| random.gen()).collect(),
            3..=7 => seed_body(&mut random),
            8..=11 => {
                let body = seed_body(&mut random);
                mutate_structure(&mut random, &body)
            }
            _ => {
                let body = seed_body(&mut random);
                let other = &pool[random.gen_range(0..pool.len())];
                mutate(&mut random, body, other)
            }
        })
        .collect()
}

/// Each solve step of a fuzz case gets this budget.
const STEP_MILLIS: u64 = 50;
/// A case that takes longer than this did not honour its budget.
const CASE_LIMIT: Duration = Duration::from_secs(2);

/// What went wrong with one decoded request, if anything (a violated invariant; panics are caught
/// by the caller). Interrupted solves are fine and end the checks.
fn check_request(rpc: Rpc, position: Option<proto::Position>, limit: u32, page_token: &str) -> Result<(), String> {
    let Ok(domain) = nimber::convert::position_from_proto(position) else { return Ok(()) };
    // What the server answers with must be acceptable input again.
    let echoed = nimber::convert::position_to_proto(&domain);
    let reparsed = nimber::convert::position_from_proto(Some(echoed.clone()))
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
            let _ = nimber::convert::outcome_to_proto(value);
        }
        Rpc::BestMove => {
            let mut solver = SearchContext::new(budget(STEP_MILLIS), &NoMemo);
            let Ok((best_value, mv)) = domain.best_move(&mut solver) else { return Ok(()) };
            if best_value != value {
                return Err(format!("best_move says {best_value:?}, value says {value:?}"));
            }
            if let Some(mv) = mv {
                let _ = nimber::convert::move_to_proto(&mv);
                let after = domain.play_unchecked(&mv);
                let after_proto = nimber::convert::position_to_proto(&after);
                nimber::convert::position_from_proto(Some(after_proto.clone()))
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
            let pages = [nimber::convert::page_from_proto(limit, page_token).ok(), Some((0, 10))];
            for (offset, limit) in pages.into_iter().flatten() {
                let mut solver = SearchContext::new(budget(STEP_MILLIS), &NoMemo);
                let Ok(analysis) = analysis::analyze(&domain, offset, limit, &mut solver) else { continue };
                let _ = nimber::convert::analysis_to_proto(&analysis, proto::Stats::default());
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
            positions.into_iter().flatten().any(|position| nimber::convert::position_from_proto(position).is_ok()),
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
    let server = TestServer::start();
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
                    let domain = nimber::convert::position_from_proto(request.position).unwrap();
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
        let mut raw = tonic::client::Grpc::new(channel.clone());
        raw.ready().await.expect("the channel is ready");
        let mut request = tonic::Request::new(body.clone());
        request.set_timeout(deadline);
        let answer = raw.unary(request, tonic::codegen::http::uri::PathAndQuery::from_static(path), RawCodec).await;
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
    let body = proto::BestMoveRequest { position: Some(tetris(&["0000".into(), "0000".into()])) }.encode_to_vec();
    check_body(&body).unwrap();
    let position: Position = nimber::convert::position_from_proto(Some(tetris(&["000".into(), "000".into()]))).unwrap();
    assert_eq!(position.value(&mut SearchContext::in_memory()).unwrap(), SumValue::Nimber(1));
}
