//! Starts the real `nimber` binary on an ephemeral port with a temporary data directory, and
//! connects real gRPC clients to it.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

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
}

impl TestServer {
    /// A server on a fresh temporary data directory.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// A server on `data_dir` with extra `serve` flags.
    pub fn start_in(data_dir: &Path, flags: &[&str]) -> Self {
        Self::start_logging(data_dir, flags, Stdio::inherit())
    }

    /// A server on `data_dir` with extra `serve` flags, its stderr (the log) sent to `stderr`.
    pub fn start_logging(data_dir: &Path, flags: &[&str], stderr: impl Into<Stdio>) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_nimber"))
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .args(flags)
            .env("RUST_LOG", std::env::var("NIMBER_TEST_LOG").unwrap_or_else(|_| "warn".into()))
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

    /// Stops the server gracefully (SIGTERM) and returns whether it exited with status 0.
    pub fn stop(&mut self) -> bool {
        let Some(mut child) = self.child.take() else { return true };
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        child.wait().map(|status| status.success()).unwrap_or(false)
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
pub fn engine_value(position: &nimber::proto::Position) -> nimber::games::Value {
    use nimber::games::Game;
    let domain = nimber::convert::position_from_proto(Some(position.clone())).expect("a valid position");
    domain.value(&mut nimber::games::Solver::in_memory()).expect("no budget")
}
