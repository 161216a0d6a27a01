//! Starts the real `nimber` binary on an ephemeral port with a temporary data directory, and
//! connects real gRPC clients to it.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nimber::proto::solver_client::SolverClient;
use tonic::transport::Channel;

/// A running server process; stopped (SIGTERM, then waited for) when dropped.
pub struct TestServer {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The data directory the server keeps its store in.
    pub data_dir: PathBuf,
    /// `http://127.0.0.1:PORT/metrics`, when started with `--metrics-listen`.
    pub metrics_url: Option<String>,
    _temp: Option<tempfile::TempDir>,
    _jobs_temp: Option<tempfile::TempDir>,
}

impl TestServer {
    /// A server on a fresh temporary data directory.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// A server on `data_dir` with extra `serve` flags (and a fresh temporary job store unless
    /// `--jobs-dir` is among them).
    pub fn start_in(data_dir: &Path, flags: &[&str]) -> Self {
        Self::start_in_logging(data_dir, flags, Stdio::inherit())
    }

    /// A server on `data_dir` with extra `serve` flags, its stderr (the log, filtered by
    /// `NIMBER_TEST_LOG`, default `warn`) sent to `stderr`.
    pub fn start_in_logging(data_dir: &Path, flags: &[&str], stderr: impl Into<Stdio>) -> Self {
        let log_filter = std::env::var("NIMBER_TEST_LOG").unwrap_or_else(|_| "warn".into());
        Self::spawn(data_dir, flags, &log_filter, stderr.into())
    }

    /// A server on a fresh temporary data directory with extra `serve` flags, logging with filter
    /// `rust_log` into the file `log` (stderr is then not a terminal).
    pub fn start_logging(flags: &[&str], rust_log: &str, log: &Path) -> Self {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let stderr = std::fs::File::create(log).expect("the log file");
        let mut server = Self::spawn(temp.path(), flags, rust_log, stderr.into());
        server._temp = Some(temp);
        server
    }

    fn spawn(data_dir: &Path, flags: &[&str], rust_log: &str, stderr: Stdio) -> Self {
        let jobs_temp = (!flags.contains(&"--jobs-dir")).then(|| tempfile::tempdir().expect("a temporary directory"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_nimber"));
        command.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"]).arg(data_dir).args(flags);
        if let Some(jobs) = &jobs_temp {
            command.arg("--jobs-dir").arg(jobs.path());
        }
        let mut child = command
            .env("RUST_LOG", rust_log)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("the nimber binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut next_line = || lines.next().and_then(Result::ok).unwrap_or_default();
        let first_line = next_line();
        let address = first_line
            .trim()
            .strip_prefix("nimber listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {first_line:?}"))
            .to_string();
        let metrics_url = flags.contains(&"--metrics-listen").then(|| {
            let line = next_line();
            line.trim()
                .strip_prefix("nimber metrics on ")
                .unwrap_or_else(|| panic!("unexpected line {line:?}"))
                .to_string()
        });
        Self {
            child: Some(child),
            url: format!("http://{address}"),
            data_dir: data_dir.to_path_buf(),
            metrics_url,
            _temp: None,
            _jobs_temp: jobs_temp,
        }
    }

    /// A server on a fresh temporary data directory with extra `serve` flags.
    pub fn start_with(flags: &[&str]) -> Self {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let mut server = Self::start_in(temp.path(), flags);
        server._temp = Some(temp);
        server
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// A connected Solver client.
    pub async fn client(&self) -> SolverClient<Channel> {
        SolverClient::connect(self.url.clone()).await.expect("the client connects")
    }

    /// A connected channel, for the health and reflection clients.
    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.url.clone()).unwrap().connect().await.expect("the channel connects")
    }

    /// Sends SIGTERM without waiting for the server to stop.
    pub fn signal_terminate(&self) {
        let _ = Command::new("kill").args(["-TERM", &self.pid().to_string()]).status();
    }

    /// Stops the server gracefully (SIGTERM) and returns whether it exited with status 0.
    pub fn stop(&mut self) -> bool {
        let Some(mut child) = self.child.take() else { return true };
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        child.wait().map(|status| status.success()).unwrap_or(false)
    }
}

impl TestServer {
    /// Kills the server at once (SIGKILL, as `kill -9`) and waits for it to be gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The five games, for generating random positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Game {
    /// Cutting game.
    Cutting,
    /// Stone boxes.
    StoneBoxes,
    /// More Reclamation.
    Reclamation,
    /// 2×2 placement.
    Tetris,
    /// Diagonal walk.
    DiagonalWalk,
}

impl Game {
    /// Every game.
    pub const ALL: [Game; 5] = [Game::Cutting, Game::StoneBoxes, Game::Reclamation, Game::Tetris, Game::DiagonalWalk];
}

/// A random valid position of `game`: small sizes mostly (so brute force and search stay fast),
/// sometimes huge ones for the closed-form games.
pub fn random_position(random: &mut impl rand::Rng, game: Game) -> nimber::proto::Position {
    use nimber::proto::{self, position::Game as P};
    let huge = random.gen_bool(0.2);
    let size = |random: &mut dyn rand::RngCore| -> u64 {
        if huge {
            rand::Rng::gen_range(random, 1..=u64::MAX)
        } else {
            rand::Rng::gen_range(random, 1..=9)
        }
    };
    let game = match game {
        Game::Cutting => P::Cutting(proto::Cutting {
            pieces: (0..random.gen_range(1..=3))
                .map(|_| proto::Piece { width: size(random).max(2), height: size(random).max(2) })
                .collect(),
        }),
        Game::StoneBoxes => P::StoneBoxes(proto::StoneBoxes {
            boxes: (0..random.gen_range(1..=3))
                .map(|_| {
                    let capacity = size(random).saturating_mul(if huge { 1 } else { 3 });
                    proto::StoneBox { capacity, stones: random.gen_range(0..=capacity) }
                })
                .collect(),
        }),
        Game::Reclamation => {
            let rows = if huge { random.gen_range(1..=u64::MAX) } else { random.gen_range(1..=12) };
            let mut reclaimed: Vec<proto::Cell> = Vec::new();
            for _ in 0..random.gen_range(0..=3) {
                let cell = proto::Cell { row: random.gen_range(1..=rows), column: random.gen_range(1..=2) };
                let conflicts = reclaimed.iter().any(|other| {
                    other.row == cell.row || (other.column != cell.column && other.row.abs_diff(cell.row) <= 1)
                });
                if !conflicts {
                    reclaimed.push(cell);
                }
            }
            P::Reclamation(proto::Reclamation { rows, reclaimed })
        }
        Game::Tetris => {
            let (height, width) = (random.gen_range(1..=6), random.gen_range(1..=6));
            P::Tetris(proto::Tetris {
                rows: (0..height)
                    .map(|_| (0..width).map(|_| if random.gen_bool(0.2) { '1' } else { '0' }).collect())
                    .collect(),
            })
        }
        Game::DiagonalWalk => {
            let (rows, columns) = (size(random), size(random));
            P::DiagonalWalk(proto::DiagonalWalk {
                rows,
                columns,
                step: if random.gen_bool(0.5) { random.gen_range(1..=3) } else { size(random) },
                row: random.gen_range(1..=rows),
                column: random.gen_range(1..=columns),
            })
        }
    };
    proto::Position { game: Some(game) }
}

/// A Solve request for `position` with no id.
pub fn solve_request(position: nimber::proto::Position) -> nimber::proto::SolveRequest {
    nimber::proto::SolveRequest { position: Some(position), id: String::new() }
}

/// The engine's own value of a position, computed in this process with no cache.
pub fn engine_value(position: &nimber::proto::Position) -> nimber::games::sum::SumValue {
    use nimber::games::Game;
    let domain = nimber::convert::position_from_proto(Some(position.clone())).expect("a valid position");
    domain.value(&mut nimber::games::SearchContext::in_memory()).expect("no budget")
}

/// A codec that sends a body as it is and returns the response's raw bytes, so that bodies that do
/// not decode can reach the server too.
#[derive(Clone, Copy, Default)]
pub struct RawCodec;

/// Writes a body as it is.
pub struct RawEncoder;
/// Reads a body as it is.
pub struct RawDecoder;

impl tonic::codec::Encoder for RawEncoder {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut tonic::codec::EncodeBuf<'_>) -> Result<(), tonic::Status> {
        use bytes_free::put;
        put(dst, &item);
        Ok(())
    }
}

impl tonic::codec::Decoder for RawDecoder {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn decode(&mut self, src: &mut tonic::codec::DecodeBuf<'_>) -> Result<Option<Vec<u8>>, tonic::Status> {
        use bytes_free::take_all;
        Ok(Some(take_all(src)))
    }
}

/// `bytes::Buf`/`BufMut` through prost's re-export, so no new crate is needed.
mod bytes_free {
    use prost::bytes::{Buf, BufMut};

    pub fn put(dst: &mut impl BufMut, bytes: &[u8]) {
        dst.put_slice(bytes);
    }

    pub fn take_all(src: &mut impl Buf) -> Vec<u8> {
        let mut out = vec![0; src.remaining()];
        src.copy_to_slice(&mut out);
        out
    }
}

impl tonic::codec::Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawEncoder;
    type Decoder = RawDecoder;
    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }
    fn decoder(&mut self) -> RawDecoder {
        RawDecoder
    }
}

/// CPU time (user + system) process `pid` has used so far, in clock ticks, from `/proc/PID/stat`.
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the process's /proc entry");
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Asserts the server burns (almost) no CPU over the next 400 ms.
pub fn assert_idle(pid: u32) {
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_millis(400));
    let used = cpu_ticks(pid) - before;
    assert!(used <= 5, "the server used {used} ticks of CPU in 400 ms while it should idle");
}

/// The body of `GET /metrics`.
pub fn scrape(url: &str) -> String {
    let address = url.strip_prefix("http://").unwrap().strip_suffix("/metrics").unwrap();
    let mut socket = std::net::TcpStream::connect(address).unwrap();
    socket.write_all(b"GET /metrics HTTP/1.1\r\nHost: nimber\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    socket.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response
}

/// The value of the sample `name` (with its labels) in a scrape.
pub fn sample(scraped: &str, name: &str) -> f64 {
    scraped
        .lines()
        .find_map(|line| line.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("{name} missing from\n{scraped}"))
        .parse()
        .unwrap()
}

/// A full `size`×`size` board of the 2×2 placement game (14×14 takes minutes to solve).
pub fn full_board(size: usize) -> nimber::proto::Position {
    use nimber::proto::{position::Game, Position, Tetris};
    Position { game: Some(Game::Tetris(Tetris { rows: vec!["0".repeat(size); size] })) }
}

/// A request with a deadline (sent as `grpc-timeout`).
pub fn with_timeout<T>(message: T, timeout: std::time::Duration) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.set_timeout(timeout);
    request
}

/// Occupies the only expensive-solve slot of a server started with `--max-expensive-solves 1` with
/// a search that takes minutes, and returns once a cold board is refused for want of a slot (so the
/// slot is known to be busy). The probes are distinct boards, none of them ever in the cache.
pub async fn occupy_the_only_slot(server: &TestServer) -> tokio::task::JoinHandle<()> {
    use std::time::{Duration, Instant};
    let mut busy_client = server.client().await;
    let busy = tokio::spawn(async move {
        let _ = busy_client.solve(with_timeout(solve_request(full_board(14)), Duration::from_secs(60))).await;
    });
    let mut client = server.client().await;
    let give_up_by = Instant::now() + Duration::from_secs(20);
    // Boards of 10×10 and more take far longer than a probe's deadline: never solved, never cached.
    for size in (10..14).cycle() {
        assert!(Instant::now() < give_up_by, "the busy solve never took the slot");
        let probe = client.solve(with_timeout(solve_request(full_board(size)), Duration::from_millis(300))).await;
        if probe.is_err_and(|status| status.code() == tonic::Code::ResourceExhausted) {
            break;
        }
    }
    busy
}

/// A tmpfs mounted for a test; unmounted (lazily if need be) when dropped, so no mount outlives it.
pub struct Mount(pub PathBuf);

impl Mount {
    /// Mounts a tmpfs of `size` (as `mount -o size=` takes it, e.g. `4m`) at `dir/tiny` (created).
    /// Panics where mounting is not permitted: the tests that need it run as root here.
    pub fn tmpfs(dir: &Path, size: &str) -> Mount {
        let mount_point = dir.join("tiny");
        std::fs::create_dir(&mount_point).expect("the mount point");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mount_point)
            .status()
            .is_ok_and(|status| status.success());
        assert!(mounted, "cannot mount a tmpfs: run this test as root");
        Mount(mount_point)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let unmounted = Command::new("umount").arg(&self.0).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
        if !unmounted {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}
