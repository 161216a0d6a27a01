//! Starts the real `nimber` binary on an ephemeral port with a temporary data directory, and
//! connects real gRPC clients to it.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use nimber::proto::solver_client::SolverClient;
use tonic::transport::Channel;

pub mod damage;
pub mod jobs;

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

/// How a [`TestServer`] is started: `TestServer::builder()`, then what differs from the defaults (a
/// fresh temporary data directory and job store, no extra flags, the log filtered by
/// `NIMBER_TEST_LOG` (default `warn`) on the test's stderr), then [`Launch::start`].
///
/// A test server searches on one thread unless its flags give `--search-threads`: the counts many
/// tests compare (positions computed, cache hits) are exact only on one thread, since helpers
/// learn in an order the scheduler decides (the answers themselves are the same on any number).
pub struct Launch<'a> {
    data_dir: Option<&'a Path>,
    flags: &'a [&'a str],
    log_filter: Option<&'a str>,
    stderr: Option<Stdio>,
}

impl<'a> Launch<'a> {
    /// Keeps the store in `data_dir` (kept after the server stops).
    pub fn data_dir(mut self, data_dir: &'a Path) -> Self {
        self.data_dir = Some(data_dir);
        self
    }

    /// Extra `serve` flags (a fresh temporary job store is added unless `--jobs-dir` is among them).
    pub fn flags(mut self, flags: &'a [&'a str]) -> Self {
        self.flags = flags;
        self
    }

    /// Sends the log (filtered by `NIMBER_TEST_LOG`, default `warn`) to `stderr`.
    pub fn stderr(mut self, stderr: impl Into<Stdio>) -> Self {
        self.stderr = Some(stderr.into());
        self
    }

    /// Logs with filter `rust_log` into the file `log` (created; stderr is then not a terminal).
    pub fn log(mut self, rust_log: &'a str, log: &Path) -> Self {
        self.log_filter = Some(rust_log);
        self.stderr = Some(std::fs::File::create(log).expect("the log file").into());
        self
    }

    /// Starts the server; panics if it exits instead of listening.
    pub fn start(self) -> TestServer {
        self.try_start().unwrap_or_else(|exited| panic!("{exited}"))
    }

    /// Starts the server; `Err` with how it ended when it exits instead of listening.
    pub fn try_start(self) -> Result<TestServer, Exited> {
        let temp = self.data_dir.is_none().then(|| tempfile::tempdir().expect("a temporary directory"));
        let data_dir = self.data_dir.unwrap_or_else(|| temp.as_ref().unwrap().path());
        let env_filter = std::env::var("NIMBER_TEST_LOG").unwrap_or_else(|_| "warn".into());
        let log_filter = self.log_filter.unwrap_or(&env_filter);
        let mut server =
            TestServer::spawn(data_dir, self.flags, log_filter, self.stderr.unwrap_or_else(Stdio::inherit))?;
        server._temp = temp;
        Ok(server)
    }
}

impl TestServer {
    /// How to start a server: see [`Launch`].
    pub fn builder<'a>() -> Launch<'a> {
        Launch { data_dir: None, flags: &[], log_filter: None, stderr: None }
    }

    fn spawn(data_dir: &Path, flags: &[&str], rust_log: &str, stderr: Stdio) -> Result<Self, Exited> {
        let jobs_temp = (!flags.contains(&"--jobs-dir")).then(|| tempfile::tempdir().expect("a temporary directory"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_nimber"));
        command.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"]).arg(data_dir).args(flags);
        if let Some(jobs) = &jobs_temp {
            command.arg("--jobs-dir").arg(jobs.path());
        }
        let mut child = command
            .env("NIMBER_SEARCH_THREADS", "1")
            .env("RUST_LOG", rust_log)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("the nimber binary starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut next_line = || {
            let mut line = String::new();
            let _ = stdout.read_line(&mut line);
            line
        };
        let first_line = next_line();
        let Some(address) = first_line.trim().strip_prefix("nimber listening on ").map(str::to_string) else {
            let status = wait_for_exit(child, EXIT_PATIENCE)
                .unwrap_or_else(|| panic!("the server printed {first_line:?}, neither listened nor exited"));
            let mut printed = first_line;
            let _ = stdout.read_to_string(&mut printed);
            return Err(Exited { status, stdout: printed });
        };
        let metrics_url = flags.contains(&"--metrics-listen").then(|| {
            let line = next_line();
            line.trim()
                .strip_prefix("nimber metrics on ")
                .unwrap_or_else(|| panic!("unexpected line {line:?}"))
                .to_string()
        });
        Ok(Self {
            child: Some(child),
            url: format!("http://{address}"),
            data_dir: data_dir.to_path_buf(),
            metrics_url,
            _temp: None,
            _jobs_temp: jobs_temp,
        })
    }

    /// `host:port` the server listens on.
    pub fn address(&self) -> &str {
        self.url.strip_prefix("http://").expect("an http:// URL")
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

    /// Stops the server gracefully (SIGTERM) and returns whether it exited with status 0 within
    /// [`EXIT_PATIENCE`] (it is killed after that).
    pub fn stop(&mut self) -> bool {
        let Some(child) = self.child.take() else { return true };
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        wait_for_exit(child, EXIT_PATIENCE).is_some_and(|status| status.success())
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

/// Starting a server on `data_dir` with extra `serve` flags must fail at once: a non-zero exit,
/// nothing on stdout, exactly one line on stderr, `nimber: cannot open the cache store at DIR:
/// REASON` with REASON containing `reason`, and no panic. Returns that line.
pub fn assert_refuses_to_start(data_dir: &Path, flags: &[&str], reason: &str) -> String {
    let expected = format!("nimber: cannot open the cache store at {}", data_dir.display());
    assert_refuses_to_start_saying(data_dir, flags, &expected, reason)
}

/// As [`assert_refuses_to_start`], the one line starting with `expected` instead.
pub fn assert_refuses_to_start_saying(data_dir: &Path, flags: &[&str], expected: &str, reason: &str) -> String {
    let logs = tempfile::tempdir().expect("a temporary directory");
    let log = logs.path().join("stderr");
    let Err(exited) = TestServer::builder().data_dir(data_dir).flags(flags).log("warn", &log).try_start() else {
        panic!("the server started on {}", data_dir.display());
    };
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!exited.status.success(), "{exited} on {}; stderr:\n{stderr}", data_dir.display());
    assert!(exited.stdout.is_empty(), "{exited} on {}", data_dir.display());
    assert!(!stderr.contains("panicked at"), "a panic on {}:\n{stderr}", data_dir.display());
    let lines: Vec<&str> = stderr.lines().filter(|line| !line.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one error line on {}, got:\n{stderr}", data_dir.display());
    assert!(lines[0].starts_with(expected), "{:?} should start with {expected:?}", lines[0]);
    assert!(lines[0].contains(reason), "{:?} should say {reason:?}", lines[0]);
    lines[0].to_string()
}

/// How a server that was to start ended instead.
#[derive(Debug)]
pub struct Exited {
    /// Its exit status.
    pub status: ExitStatus,
    /// Everything it printed on stdout.
    pub stdout: String,
}

impl std::fmt::Display for Exited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the server exited with {} instead of listening; stdout: {:?}", self.status, self.stdout)
    }
}

/// How long a server may take to exit once it should: a graceful stop (SIGTERM, with the default
/// 10 s grace for calls in flight) or a refusal to start.
pub const EXIT_PATIENCE: Duration = Duration::from_secs(60);

/// Waits at most `limit` for `child` to exit and returns its status; kills it (SIGKILL) and
/// returns `None` if it does not. The wait blocks a thread of its own on the child, so the exit is
/// noticed the moment it happens.
pub fn wait_for_exit(mut child: Child, limit: Duration) -> Option<ExitStatus> {
    let pid = child.id();
    let (exited, exit) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _ = exited.send(child.wait());
    });
    let status = exit.recv_timeout(limit).ok().and_then(Result::ok);
    if status.is_none() {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    let _ = waiter.join();
    status
}

/// Runs `command` to its end, its stdout captured (set its stderr beforehand: a file, or null),
/// and returns its exit status, its stdout and its peak resident set size in bytes: the kernel's
/// `ru_maxrss` of that child alone, from `wait4`.
pub fn run_measuring_peak_rss(command: &mut Command) -> (ExitStatus, String, u64) {
    use std::os::unix::process::ExitStatusExt;
    #[allow(clippy::zombie_processes, reason = "reaped by the wait4 below, which also gives its peak RSS")]
    let mut child = command.stdout(Stdio::piped()).spawn().expect("the command starts");
    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).expect("its stdout is read to the end");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: all zeros is a valid `rusage` (integers and timevals).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are writable and live for the call; `pid` is our child,
        // not yet waited for (the `Child` is never waited for after this).
        let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if waited == pid {
            break;
        }
        assert_eq!(std::io::Error::last_os_error().kind(), std::io::ErrorKind::Interrupted, "wait4 failed");
    }
    (ExitStatus::from_raw(status), stdout, usage.ru_maxrss as u64 * 1024)
}

/// The peak resident set size of process `pid` so far, in bytes (`VmHWM`).
pub fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the server's /proc entry");
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).expect("a VmHWM line");
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// Polls `condition` every 20 ms until it holds; panics naming `what` if it still does not after
/// `limit`. For a state the test cannot be told of directly (a metric, a file, a connection).
pub async fn wait_until(limit: Duration, what: &str, mut condition: impl AsyncFnMut() -> bool) {
    let started = std::time::Instant::now();
    while !condition().await {
        assert!(started.elapsed() < limit, "waited {limit:?} for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A Solve request for `position` with no id.
pub fn solve_request(position: nimber::proto::Position) -> nimber::proto::SolveRequest {
    nimber::proto::SolveRequest { position: Some(position), ..Default::default() }
}

/// The engine's own value of a position, computed in this process with no cache.
pub fn engine_value(position: &nimber::proto::Position) -> nimber::games::sum::SumValue {
    use nimber::games::Game;
    let domain = nimber::wire::position_from_proto(Some(position.clone())).expect("a valid position");
    domain.value(&mut nimber::games::SearchContext::in_memory()).expect("no budget")
}

/// A position answered by a closed form, at once.
pub fn cheap_position() -> nimber::proto::Position {
    use nimber::proto::{position::Game, Cutting, Piece, Position};
    Position { game: Some(Game::Cutting(Cutting { pieces: vec![Piece { width: 1 << 40, height: 12345 }] })) }
}

/// Calls the unary method `path` (e.g. `/nimber.v1.Solver/Solve`) over `channel` with `request`'s
/// body sent as it is, valid protobuf or not; the answer's body as it is.
pub async fn call_raw(
    channel: Channel,
    path: &'static str,
    request: tonic::Request<Vec<u8>>,
) -> Result<Vec<u8>, tonic::Status> {
    let mut raw = tonic::client::Grpc::new(channel);
    raw.ready().await.expect("the channel is ready");
    let path = tonic::codegen::http::uri::PathAndQuery::from_static(path);
    raw.unary(request, path, RawCodec).await.map(tonic::Response::into_inner)
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

/// The states of the threads of process `pid` (`R` running or runnable, `S` sleeping, ...), from
/// `/proc/PID/task/*/stat`.
fn thread_states(pid: u32) -> Vec<char> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("stat")).ok())
        .filter_map(|stat| stat[stat.rfind(')')? + 2..].chars().next())
        .collect()
}

/// Asserts the server goes idle and stays so. First waits (at most 10 s) for the state: no thread
/// of the server runnable, so work that was stopped (a cancelled search, a passed deadline) has
/// ended. Then asserts it burns (almost) no CPU over a 400 ms window: the window is the claim
/// itself, since a server that spins (a busy accept loop, a search nobody waits for) shows it only
/// as CPU used over time, which one look at its threads can miss.
pub fn assert_idle(pid: u32) {
    let started = std::time::Instant::now();
    while thread_states(pid).contains(&'R') {
        assert!(started.elapsed() < Duration::from_secs(10), "a thread of the server stays runnable for 10 s");
        std::thread::sleep(Duration::from_millis(10));
    }
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

impl Mount {
    /// Fills what is left of the tmpfs with the file `filler`, and returns its path (removing it
    /// gives the space back).
    pub fn fill(&self) -> PathBuf {
        let filler = self.0.join("filler");
        let mut file = std::fs::File::create(&filler).expect("the filler file");
        while file.write_all(&[0; 4096]).is_ok() {}
        let _ = file.sync_all();
        filler
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
