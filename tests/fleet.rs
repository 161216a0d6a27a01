//! A fleet: replicas (the real binary) sharing one real `redis-server`, started by each test on a
//! free port in a temporary directory and stopped by its pid. `.ci/run` installs redis-server;
//! without it these tests fail, saying so.

mod common;

use nimber::games::GameTag;
use nimber::games::Value;
use nimber::testing::{random_position, SMALL_SIDES};

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{full_board, sample, scrape, solve_request, with_timeout, TestServer};
use nimber::google::longrunning::{self as lro, operation::Result as OperationResult, Operation};
use nimber::proto::{self, ExploreState};
use prost::Message;

/// How long a test waits for a state (a job done, a lease taken, a line logged) before it calls the
/// state never reached. A safety net, not a speed bound: on a 2-core machine running a build beside
/// the tests, a divided job that takes 12 s alone once took over 120 s.
const PATIENCE: Duration = Duration::from_secs(600);

/// A `redis-server` of this test: no persistence, loopback only; killed when dropped.
struct Redis {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    password: Option<&'static str>,
    /// Whether it keeps every write on disk (an append-only file synced at each write), as the
    /// Redis of a fleet's job records should: a restart then loses nothing.
    durable: bool,
}

impl Redis {
    fn start() -> Self {
        Self::start_with(false)
    }

    /// A Redis that keeps every write across a restart (see [`Redis::durable`]).
    fn start_durable() -> Self {
        Self::start_with(true)
    }

    fn start_with(durable: bool) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut redis = Redis { child: None, port, dir: tempfile::tempdir().unwrap(), password: None, durable };
        redis.restart();
        redis
    }

    /// Starts the server (again) on the same port and waits until it answers.
    fn restart(&mut self) {
        let persistence: &[&str] =
            if self.durable { &["--appendonly", "yes", "--appendfsync", "always"] } else { &["--appendonly", "no"] };
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", ""])
            .args(persistence)
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot start redis-server ({error}): install it (apt-get install -y redis-server; scripts/test.sh does)"
                )
            });
        self.child = Some(child);
        let give_up_by = Instant::now() + Duration::from_secs(10);
        while self.connection().is_none() {
            assert!(Instant::now() < give_up_by, "redis-server does not answer on port {}", self.port);
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGKILL, and waits until it is gone.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The URL replicas use (with the password, once one is required).
    fn url(&self) -> String {
        match self.password {
            Some(password) => format!("redis://:{password}@127.0.0.1:{}", self.port),
            None => format!("redis://127.0.0.1:{}", self.port),
        }
    }

    fn require_password(&mut self, password: &'static str) {
        let mut connection = self.connection().unwrap();
        let () = redis::cmd("CONFIG").arg("SET").arg("requirepass").arg(password).query(&mut connection).unwrap();
        self.password = Some(password);
    }

    fn connection(&self) -> Option<redis::Connection> {
        let client = redis::Client::open(self.url()).ok()?;
        let mut connection = client.get_connection_with_timeout(Duration::from_secs(1)).ok()?;
        redis::cmd("PING").query::<String>(&mut connection).ok()?;
        Some(connection)
    }

    fn keys(&self, pattern: &[u8]) -> Vec<Vec<u8>> {
        redis::cmd("KEYS").arg(pattern).query(&mut self.connection().expect("redis answers")).unwrap()
    }

    /// The store keys of the values in Redis (without the prefix, leases left out).
    fn value_keys(&self) -> Vec<Vec<u8>> {
        let prefix = nimber::cache::value_key(b"");
        self.keys(&[&prefix[..], b"*"].concat())
            .into_iter()
            .filter(|key| key.get(prefix.len()) != Some(&0))
            .map(|key| key[prefix.len()..].to_vec())
            .collect()
    }

    fn leases(&self) -> usize {
        self.keys(&[&nimber::cache::lease_key(b"")[..], b"*"].concat()).len()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A replica sharing `redis`, with a metrics endpoint, and `extra` flags.
fn replica(redis: &Redis, extra: &[&str]) -> TestServer {
    let url = redis.url();
    let mut flags = vec!["--shared-cache", &url, "--metrics-listen", "127.0.0.1:0"];
    flags.extend_from_slice(extra);
    TestServer::builder().flags(&flags).start()
}

/// [`replica`] with its store in `data_dir`.
fn replica_in(redis: &Redis, data_dir: &Path, extra: &[&str]) -> TestServer {
    let url = redis.url();
    let mut flags = vec!["--shared-cache", &url, "--metrics-listen", "127.0.0.1:0"];
    flags.extend_from_slice(extra);
    TestServer::builder().data_dir(data_dir).flags(&flags).start()
}

/// A fleet secret in a file of its own (with a final newline, as `echo` writes it).
struct SecretFile {
    _dir: tempfile::TempDir,
    path: String,
}

impl SecretFile {
    fn new(secret: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        std::fs::write(&path, format!("{secret}\n")).unwrap();
        SecretFile { path: path.to_str().unwrap().to_string(), _dir: dir }
    }

    /// The flags of a replica with this secret.
    fn flags(&self) -> [&str; 2] {
        ["--shared-cache-secret-file", &self.path]
    }
}

/// How many values `server` read from Redis and refused for `reason`.
fn rejected(server: &TestServer, reason: &str) -> f64 {
    metric(server, &format!("nimber_shared_cache_rejected_total{{reason=\"{reason}\"}}"))
}

fn metric(server: &TestServer, name: &str) -> f64 {
    sample(&scrape(server.metrics_url.as_ref().unwrap()), name)
}

/// Polls `condition` every 5 ms until it holds, failing with `what` after `timeout`.
fn wait_until(what: &str, timeout: Duration, mut condition: impl FnMut() -> bool) {
    let give_up_by = Instant::now() + timeout;
    while !condition() {
        assert!(Instant::now() < give_up_by, "waited {timeout:?} for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn board(rows: usize, columns: usize) -> proto::Position {
    use proto::{position::Game, Tetris};
    proto::Position { game: Some(Game::Tetris(Tetris { rows: vec!["0".repeat(columns); rows] })) }
}

/// A `rows`×`columns` 2×2-placement board with one cell blocked (`cell`, in row-major order).
fn board_with_blocked_cell(rows: usize, columns: usize, cell: usize) -> proto::Position {
    use proto::{position::Game, Tetris};
    let mut cells = vec![b'0'; rows * columns];
    cells[cell] = b'1';
    let rows = cells.chunks(columns).map(|row| String::from_utf8_lossy(row).into_owned()).collect();
    proto::Position { game: Some(Game::Tetris(Tetris { rows })) }
}

async fn solve(server: &TestServer, position: proto::Position) -> proto::SolveResponse {
    let request = with_timeout(solve_request(position), PATIENCE);
    server.client().await.solve(request).await.expect("the solve succeeds").into_inner()
}

fn positions_computed(answer: &proto::SolveResponse) -> u64 {
    answer.stats.as_ref().map_or(0, |stats| stats.positions_computed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_solved_on_one_replica_is_free_on_the_other() {
    let redis = Redis::start();
    let (a, b) = (replica(&redis, &[]), replica(&redis, &[]));
    let on_a = solve(&a, full_board(8)).await;
    assert!(positions_computed(&on_a) > 0, "{on_a:?}");
    let on_b = solve(&b, full_board(8)).await;
    assert_eq!(positions_computed(&on_b), 0, "{on_b:?}");
    assert_eq!((on_b.grundy, on_b.outcome), (on_a.grundy, on_a.outcome));
    assert!(metric(&b, "nimber_shared_cache_hits_total") >= 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_board_on_two_replicas_at_once_is_computed_once() {
    let alone = TestServer::builder().start();
    let one_solve = positions_computed(&solve(&alone, full_board(9)).await);
    drop(alone);

    let redis = Redis::start();
    let (a, b) = (replica(&redis, &[]), replica(&redis, &[]));
    let on_a = {
        let a_url = a.url.clone();
        tokio::spawn(async move {
            let mut client = proto::solver_client::SolverClient::connect(a_url).await.unwrap();
            client.solve(solve_request(full_board(9))).await.unwrap().into_inner()
        })
    };
    wait_until("A's lease", PATIENCE, || redis.leases() > 0 || on_a.is_finished());
    let on_b = solve(&b, full_board(9)).await;
    let on_a = on_a.await.unwrap();
    assert_eq!(on_a.grundy, on_b.grundy);
    assert_eq!(positions_computed(&on_a) + positions_computed(&on_b), one_solve, "A {on_a:?}, B {on_b:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_lease_holder_is_taken_over_after_its_lease_expires() {
    let redis = Redis::start();
    let lease = ["--shared-cache-lease-ms", "1000"];
    let (mut a, b) = (replica(&redis, &lease), replica(&redis, &lease));
    let a_url = a.url.clone();
    let on_a = tokio::spawn(async move {
        let mut client = proto::solver_client::SolverClient::connect(a_url).await.unwrap();
        client.solve(solve_request(board(9, 10))).await
    });
    // A holds the lease and has shared some of the components it computed.
    wait_until("A's lease and shared values", PATIENCE, || redis.leases() > 0 && redis.value_keys().len() >= 20);
    a.kill();
    assert!(on_a.await.unwrap().is_err(), "A finished before it was killed");
    let on_b = solve(&b, board(9, 10)).await;
    assert_eq!(on_b.grundy, Some(0), "{on_b:?}");
    assert!(metric(&b, "nimber_shared_cache_lease_waits_total") >= 1.0, "B did not wait for A's lease");
    assert!(metric(&b, "nimber_shared_cache_hits_total") >= 1.0, "B started over instead of reusing A's components");
    assert_eq!(redis.leases(), 0, "B released its lease");
}

/// Random cheap positions of every game, and small boards, asked of `servers` in turn until
/// `stop`; counts answers and errors.
fn load(servers: Vec<String>, stop: Arc<AtomicBool>, answered: Arc<AtomicU64>) -> tokio::task::JoinHandle<Vec<String>> {
    tokio::spawn(async move {
        let mut random = nimber::random::SplitMix::new(12);
        let mut clients = Vec::new();
        for url in servers {
            clients.push(proto::solver_client::SolverClient::connect(url).await.unwrap());
        }
        let mut errors = Vec::new();
        let mut turn = 0usize;
        while !stop.load(Ordering::Relaxed) {
            let kind = GameTag::ALL[turn % GameTag::ALL.len()];
            let position = if turn.is_multiple_of(7) {
                board(3 + turn / 7 % 5, 4 + turn / 35 % 4)
            } else {
                random_position(&mut random, kind, SMALL_SIDES)
            };
            let count = clients.len();
            let client = &mut clients[turn % count];
            if let Err(status) = client.solve(with_timeout(solve_request(position), Duration::from_secs(30))).await {
                errors.push(format!("{status:?}"));
            }
            answered.fetch_add(1, Ordering::Relaxed);
            turn += 1;
        }
        errors
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_under_load_costs_no_client_error_and_sharing_resumes_when_it_returns() {
    use tonic_health::pb::{health_check_response::ServingStatus, health_client::HealthClient, HealthCheckRequest};
    let mut redis = Redis::start();
    let (a, b) = (replica(&redis, &[]), replica(&redis, &[]));
    let (stop, answered) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
    let running = load(vec![a.url.clone(), b.url.clone()], stop.clone(), answered.clone());
    wait_until("load", PATIENCE, || answered.load(Ordering::Relaxed) >= 50);

    redis.kill();
    // Both replicas noticed, and went on answering.
    wait_until("errors counted", PATIENCE, || {
        metric(&a, "nimber_shared_cache_errors_total") > 0.0 && metric(&b, "nimber_shared_cache_errors_total") > 0.0
    });
    let before = answered.load(Ordering::Relaxed);
    wait_until("load without Redis", PATIENCE, || answered.load(Ordering::Relaxed) >= before + 100);
    for server in [&a, &b] {
        let mut health = HealthClient::new(server.channel().await);
        let status = health.check(HealthCheckRequest { service: String::new() }).await.unwrap().into_inner().status;
        assert_eq!(status, ServingStatus::Serving as i32);
    }

    redis.restart();
    // Sharing resumes by itself: a board solved on A after the restart is free on B. The replicas
    // skip Redis for a while after a failure, and these boards solve in milliseconds, so there are
    // hundreds of distinct ones (full, then with one cell blocked): the deadline ends the wait.
    let full = (5..=7).flat_map(|rows| (rows + 1..=rows + 4).map(move |columns| board(rows, columns)));
    let one_blocked = (6..=7).flat_map(|rows| {
        (rows + 1..=rows + 3)
            .flat_map(move |columns| (0..rows * columns).map(move |cell| board_with_blocked_cell(rows, columns, cell)))
    });
    let mut boards = full.chain(one_blocked);
    let give_up_by = Instant::now() + PATIENCE;
    loop {
        assert!(Instant::now() < give_up_by, "sharing did not resume after Redis came back");
        let position = boards.next().expect("sharing did not resume within the distinct boards");
        let computed_on_a = positions_computed(&solve(&a, position.clone()).await);
        if computed_on_a > 0 && positions_computed(&solve(&b, position).await) == 0 {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let errors = running.await.unwrap();
    assert!(errors.is_empty(), "{} client errors, e.g. {:?}", errors.len(), errors.first());
}

/// A full 8×8 board solved by a replica with `flags`, stopped since: its answer, and the store keys
/// of the values it left in Redis.
async fn values_of_a_solved_board(redis: &Redis, flags: &[&str]) -> (proto::SolveResponse, Vec<Vec<u8>>) {
    let a = replica(redis, flags);
    let on_a = solve(&a, full_board(8)).await;
    drop(a);
    let keys = redis.value_keys();
    assert!(!keys.is_empty());
    (on_a, keys)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_value_in_redis_is_recomputed_and_overwritten_never_served() {
    let redis = Redis::start();
    let (on_a, keys) = values_of_a_solved_board(&redis, &[]).await;
    let mut connection = redis.connection().unwrap();
    for (i, key) in keys.iter().enumerate() {
        let redis_key = nimber::cache::value_key(key);
        let mut value: Vec<u8> = redis::cmd("GET").arg(&redis_key).query(&mut connection).unwrap();
        // Flipped bits (the checksum fails), an unknown format version, a value cut short.
        match i % 3 {
            0 => value[1] ^= 0x20,
            1 => value[0] = 0x7f,
            _ => value.truncate(2),
        }
        let () = redis::cmd("SET").arg(&redis_key).arg(value).query(&mut connection).unwrap();
    }

    let b = replica(&redis, &[]);
    let on_b = solve(&b, full_board(8)).await;
    assert_eq!((on_b.grundy, on_b.outcome), (on_a.grundy, on_a.outcome));
    assert_eq!(positions_computed(&on_b), positions_computed(&on_a), "B served a damaged value");
    assert!(metric(&b, "nimber_shared_cache_errors_total") >= 1.0);
    assert_eq!(metric(&b, "nimber_shared_cache_hits_total"), 0.0);
    // What B computed overwrote the damaged values.
    wait_until("the damaged values overwritten", PATIENCE, || {
        keys.iter().all(|key| {
            let bytes: Vec<u8> = redis::cmd("GET").arg(nimber::cache::value_key(key)).query(&mut connection).unwrap();
            nimber::cache::decode_value(key, &bytes).is_some()
        })
    });
}

/// The store key of the one component of a full `size`×`size` board: the key a replica leases.
fn top_level_key(size: usize) -> Vec<u8> {
    let board = nimber::games::tetris::Board::new(&vec!["0".repeat(size); size]).unwrap();
    let asked = std::cell::RefCell::new(Vec::new());
    let _ = nimber::games::ServedGame::value_without_search(&board, &|_, key| {
        asked.borrow_mut().push(key.to_vec());
        None
    });
    let asked = asked.into_inner();
    assert_eq!(asked.len(), 1, "a full board is one component");
    nimber::cache::store_key(nimber::games::GameTag::Tetris, &asked[0])
}

/// A value in format 2, as anyone who can write to Redis can make one: the version byte, the value
/// and the cost as LEB128 varints, then a CRC-32 of the store key and those bytes.
fn forged_format_2(key: &[u8], value: u64, cost: u64) -> Vec<u8> {
    let mut bytes = vec![2];
    for mut number in [value, cost] {
        while number >= 0x80 {
            bytes.push(number as u8 | 0x80);
            number >>= 7;
        }
        bytes.push(number as u8);
    }
    let mut checksum = crc32fast::Hasher::new();
    checksum.update(key);
    checksum.update(&bytes);
    bytes.extend_from_slice(&checksum.finalize().to_le_bytes());
    bytes
}

fn get(connection: &mut redis::Connection, key: &[u8]) -> Vec<u8> {
    redis::cmd("GET").arg(nimber::cache::value_key(key)).query(connection).unwrap()
}

fn set(connection: &mut redis::Connection, key: &[u8], value: &[u8]) {
    let () = redis::cmd("SET").arg(nimber::cache::value_key(key)).arg(value).query(connection).unwrap();
}

/// Format 1 (the version byte, then the value in 8 bytes, no checksum) is an old sled format: in
/// Redis such a value could be anything anyone wrote, so it is never served, nor copied into the
/// replica's own store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_in_the_unchecked_format_1_in_redis_is_never_served_nor_copied_into_sled() {
    let redis = Redis::start();
    let (on_a, keys) = values_of_a_solved_board(&redis, &[]).await;
    let mut connection = redis.connection().unwrap();
    for key in &keys {
        let true_value =
            nimber::cache::decode_value(key, &get(&mut connection, key)).expect("A's value").value.nimber().unwrap();
        let mut old = vec![nimber::cache::VALUE_FORMAT_V1];
        old.extend_from_slice(&(true_value + 1).to_le_bytes());
        set(&mut connection, key, &old);
    }

    let data = tempfile::tempdir().unwrap();
    let b = replica_in(&redis, data.path(), &[]);
    let on_b = solve(&b, full_board(8)).await;
    assert_eq!((on_b.grundy, on_b.outcome), (on_a.grundy, on_a.outcome), "B served a format-1 value");
    assert_eq!(positions_computed(&on_b), positions_computed(&on_a), "B served a format-1 value");
    assert_eq!(metric(&b, "nimber_shared_cache_hits_total"), 0.0);
    assert!(rejected(&b, "format") >= 1.0);
    drop(b);
    // B's store holds what B computed: alone, without Redis, B answers from it, rightly.
    let b_alone = TestServer::builder().data_dir(data.path()).start();
    let again = solve(&b_alone, full_board(8)).await;
    assert_eq!((again.grundy, positions_computed(&again)), (on_a.grundy, 0), "{again:?}");
}

/// A CRC-32 detects damage, not forgery: a format-2 value with a valid checksum, which anyone who
/// can write to Redis can make, is not served by a fleet with a secret, and is overwritten with an
/// authentic value that the fleet then serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_value_with_a_valid_checksum_is_not_served_by_a_fleet_with_a_secret_and_is_overwritten() {
    let redis = Redis::start();
    let secret = SecretFile::new("the fleet's secret, 32 bytes long");
    let (on_a, keys) = values_of_a_solved_board(&redis, &secret.flags()).await;
    let wrong = on_a.grundy.unwrap() + 1;
    let forgeries: Vec<Vec<u8>> = keys.iter().map(|key| forged_format_2(key, wrong, 1)).collect();
    let mut connection = redis.connection().unwrap();
    for (key, forged) in keys.iter().zip(&forgeries) {
        assert_eq!(nimber::cache::decode_value(key, forged).and_then(|stored| stored.value.nimber()), Some(wrong));
        set(&mut connection, key, forged);
    }

    let b = replica(&redis, &secret.flags());
    let on_b = solve(&b, full_board(8)).await;
    assert_eq!((on_b.grundy, on_b.outcome), (on_a.grundy, on_a.outcome), "B served a forged value");
    assert_eq!(positions_computed(&on_b), positions_computed(&on_a), "B served a forged value");
    assert_eq!(metric(&b, "nimber_shared_cache_hits_total"), 0.0);
    assert!(rejected(&b, "format") >= 1.0);
    wait_until("the forgeries overwritten", PATIENCE, || {
        keys.iter().zip(&forgeries).all(|(key, forged)| get(&mut connection, key) != *forged)
    });
    // What B wrote is authentic: another replica of the fleet is served it.
    let c = replica(&redis, &secret.flags());
    let on_c = solve(&c, full_board(8)).await;
    assert_eq!((on_c.grundy, positions_computed(&on_c)), (on_a.grundy, 0), "{on_c:?}");
}

/// Replicas with different secrets are two fleets that happen to share a Redis: neither is served
/// the other's values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_with_different_secrets_do_not_serve_each_others_values() {
    let redis = Redis::start();
    let (one, other) =
        (SecretFile::new("one fleet's secret, long enough"), SecretFile::new("another fleet's secret, as long"));
    let a = replica(&redis, &one.flags());
    let on_a = solve(&a, full_board(8)).await;
    assert!(positions_computed(&on_a) > 0, "{on_a:?}");
    let b = replica(&redis, &other.flags());
    let on_b = solve(&b, full_board(8)).await;
    assert_eq!((on_b.grundy, on_b.outcome), (on_a.grundy, on_a.outcome));
    assert_eq!(positions_computed(&on_b), positions_computed(&on_a), "B was served A's values");
    assert_eq!(metric(&b, "nimber_shared_cache_hits_total"), 0.0);
    assert!(rejected(&b, "unauthenticated") >= 1.0);
}

/// A value far longer than any value (64 MB) is not read past a few bytes: the solve is prompt and
/// right, and what the replica computed overwrites it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_64_mb_value_in_redis_is_rejected_unread_and_overwritten() {
    let alone = TestServer::builder().start();
    let truth = solve(&alone, full_board(7)).await;
    drop(alone);
    let redis = Redis::start();
    let key = top_level_key(7);
    let mut connection = redis.connection().unwrap();
    set(&mut connection, &key, &vec![nimber::cache::VALUE_FORMAT_V2; 64 << 20]);

    let b = replica(&redis, &[]);
    let started = Instant::now();
    let on_b = solve(&b, full_board(7)).await;
    let took = started.elapsed();
    assert_eq!((on_b.grundy, on_b.outcome), (truth.grundy, truth.outcome));
    assert!(took < Duration::from_secs(5), "the solve took {took:?}");
    wait_until("the 64 MB value overwritten", PATIENCE, || {
        let length: usize = redis::cmd("STRLEN").arg(nimber::cache::value_key(&key)).query(&mut connection).unwrap();
        length < 64
            && nimber::cache::decode_value(&key, &get(&mut connection, &key)).and_then(|s| s.value.nimber())
                == truth.grundy
    });
    assert!(rejected(&b, "oversize") >= 1.0);
}

/// Runs `nimber serve` with `flags` and environment `env` and expects it to refuse to start with
/// exactly one line on stderr; returns that line.
fn refused_start(flags: &[&str], env: &[(&str, &str)]) -> String {
    let data = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_nimber"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(flags)
        .arg("--data-dir")
        .arg(data.path().join("data"))
        .arg("--jobs-dir")
        .arg(data.path().join("jobs"))
        .envs(env.iter().copied())
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "{flags:?} {env:?}: started");
    assert_eq!(stderr.trim().lines().count(), 1, "{flags:?} {env:?}: {stderr}");
    stderr.trim().to_string()
}

#[test]
fn a_missing_empty_unreadable_or_short_secret_stops_the_server_with_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (missing, empty, directory, short) = (path("missing"), path("empty"), path("directory"), path("short"));
    std::fs::write(&empty, "\n").unwrap();
    std::fs::create_dir(&directory).unwrap();
    std::fs::write(&short, "hunter2\n").unwrap();
    let cache = ["--shared-cache", "redis://127.0.0.1:1"];
    for (file, says) in
        [(&missing, "cannot read"), (&empty, "empty"), (&directory, "cannot read"), (&short, "16 bytes")]
    {
        let line = refused_start(&[&cache[..], &["--shared-cache-secret-file", file]].concat(), &[]);
        assert!(line.contains(file.as_str()) && line.contains(says), "{line}");
        assert!(!line.contains("hunter2"), "{line}");
        let line = refused_start(&cache, &[("NIMBER_SHARED_CACHE_SECRET_FILE", file)]);
        assert!(line.contains(file.as_str()) && line.contains(says), "{line}");
    }
    let line = refused_start(&cache, &[("NIMBER_SHARED_CACHE_SECRET", "hunter2")]);
    assert!(line.contains("NIMBER_SHARED_CACHE_SECRET") && line.contains("16 bytes"), "{line}");
    assert!(!line.contains("hunter2"), "{line}");
    let both = [
        ("NIMBER_SHARED_CACHE_SECRET", "a secret long enough for a fleet"),
        ("NIMBER_SHARED_CACHE_SECRET_FILE", &short),
    ];
    let line = refused_start(&cache, &both);
    assert!(line.contains("NIMBER_SHARED_CACHE_SECRET") && line.contains("--shared-cache-secret-file"), "{line}");
    assert!(!line.contains("long enough"), "{line}");
}

/// A replica started with the environment variables `env`, logging at DEBUG into `log`; killed
/// when dropped.
struct ReplicaWithEnv {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl ReplicaWithEnv {
    fn start(redis: &Redis, env: &[(&str, &str)], log: &Path) -> Self {
        use std::io::BufRead;
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_nimber"))
            .args(["serve", "--listen", "127.0.0.1:0", "--shared-cache", &redis.url(), "--data-dir"])
            .arg(dir.path().join("data"))
            .arg("--jobs-dir")
            .arg(dir.path().join("jobs"))
            .envs(env.iter().copied())
            .env("RUST_LOG", "debug")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let address = line.trim().strip_prefix("nimber listening on ").unwrap_or_else(|| panic!("{line:?}"));
        ReplicaWithEnv { url: format!("http://{address}"), child, _dir: dir }
    }
}

impl Drop for ReplicaWithEnv {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_secret_one_warning_says_so_and_a_secret_in_the_environment_is_used_and_never_logged() {
    let redis = Redis::start();
    let logs = tempfile::tempdir().unwrap();
    let trusting = "values from Redis are trusted as they are";
    let plain_log = logs.path().join("plain.log");
    let plain = TestServer::builder().flags(&["--shared-cache", &redis.url()]).log("info", &plain_log).start();
    solve(&plain, full_board(6)).await;
    drop(plain);
    let text = std::fs::read_to_string(&plain_log).unwrap();
    assert_eq!(text.matches(trusting).count(), 1, "{text}");

    let secret = "a secret from the environment, never logged";
    let secret_log = logs.path().join("secret.log");
    let replica = ReplicaWithEnv::start(&redis, &[("NIMBER_SHARED_CACHE_SECRET", secret)], &secret_log);
    let mut client = proto::solver_client::SolverClient::connect(replica.url.clone()).await.unwrap();
    client.solve(solve_request(full_board(7))).await.unwrap();
    // Its value is in Redis in the authenticated format, not in the checksummed one.
    let mut connection = redis.connection().unwrap();
    wait_until("the value in Redis", PATIENCE, || !get(&mut connection, &top_level_key(7)).is_empty());
    assert_eq!(get(&mut connection, &top_level_key(7))[0], nimber::cache::VALUE_FORMAT_V3);
    drop(replica);
    let text = std::fs::read_to_string(&secret_log).unwrap();
    assert!(!text.contains(trusting), "{text}");
    assert!(!text.contains(secret) && !text.contains("never logged"), "the secret is in the log");
}

#[test]
fn a_bad_shared_cache_url_stops_the_server_with_one_line_that_hides_the_password() {
    for url in ["http://127.0.0.1:6379", "redis://user:hunter2@127.0.0.1:notaport", "127.0.0.1:6379"] {
        let line = refused_start(&["--shared-cache", url], &[]);
        assert!(line.contains("--shared-cache"), "{url}: {line}");
        assert!(!line.contains("hunter2"), "{url}: {line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_in_the_url_is_used_and_never_logged() {
    let mut redis = Redis::start();
    redis.require_password("hunter2");
    let wrong = format!("redis://:wrong-hunter3@127.0.0.1:{}", redis.port);
    let log_dir = tempfile::tempdir().unwrap();
    let (right_log, wrong_log) = (log_dir.path().join("right.log"), log_dir.path().join("wrong.log"));
    let a = TestServer::builder().flags(&["--shared-cache", &redis.url()]).log("info", &right_log).start();
    let b = TestServer::builder()
        .flags(&["--shared-cache", &wrong, "--metrics-listen", "127.0.0.1:0"])
        .log("info", &wrong_log)
        .start();
    solve(&a, full_board(6)).await;
    assert!(!redis.value_keys().is_empty(), "A did not share with the right password");
    solve(&b, full_board(7)).await;
    assert!(metric(&b, "nimber_shared_cache_errors_total") >= 1.0);
    drop((a, b));
    for log in [right_log, wrong_log] {
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("127.0.0.1"), "{text}");
        assert!(!text.contains("hunter"), "{text}");
    }
}

type Operations = lro::operations_client::OperationsClient<tonic::transport::Channel>;

async fn operations(server: &TestServer) -> Operations {
    lro::operations_client::OperationsClient::new(server.channel().await)
}

fn full_boards(rows: (u32, u32), columns: (u32, u32)) -> proto::ExploreRequest {
    let (min_rows, max_rows, min_columns, max_columns) = (rows.0, rows.1, columns.0, columns.1);
    let family = proto::FullBoards { min_rows, max_rows, min_columns, max_columns, game: 0 };
    proto::ExploreRequest { job: Some(proto::explore_request::Job::FullBoards(family)), ..Default::default() }
}

fn job_progress(operation: &Operation) -> proto::ExploreProgress {
    proto::ExploreProgress::decode(operation.metadata.as_ref().expect("metadata").value.as_slice()).unwrap()
}

/// Polls GetOperation of `name` on `client` (every 50 ms, at most `timeout`) until `condition` holds.
async fn wait_for_job(
    client: &mut Operations,
    name: &str,
    timeout: Duration,
    condition: impl Fn(&proto::ExploreProgress) -> bool,
) -> Operation {
    let give_up_by = Instant::now() + timeout;
    loop {
        let request = lro::GetOperationRequest { name: name.into() };
        let operation = client.get_operation(request).await.expect("the operation exists").into_inner();
        if condition(&job_progress(&operation)) {
            return operation;
        }
        assert!(Instant::now() < give_up_by, "waited {timeout:?}; last: {:?}", job_progress(&operation));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operation_started_on_one_replica_is_read_waited_for_and_cancelled_on_the_other() {
    let redis = Redis::start();
    let (a, b) = (replica(&redis, &[]), replica(&redis, &[]));
    let request = proto::ExploreRequest { request_id: "fleet-retry".into(), ..full_boards((1, 3), (1, 3)) };
    let started = a.client().await.explore(request.clone()).await.unwrap().into_inner();
    let mut on_b = operations(&b).await;
    let done = on_b
        .wait_operation(lro::WaitOperationRequest { name: started.name.clone(), timeout: None })
        .await
        .expect("B knows A's operation")
        .into_inner();
    assert!(done.done, "{done:?}");
    match &done.result {
        Some(OperationResult::Response(any)) => {
            assert_eq!(proto::ExploreResult::decode(any.value.as_slice()).unwrap().total_rows, 9)
        }
        other => panic!("expected a response, got {other:?}"),
    }
    let listed = on_b.list_operations(lro::ListOperationsRequest::default()).await.unwrap().into_inner();
    assert_eq!(listed.operations.iter().map(|operation| &operation.name).collect::<Vec<_>>(), [&started.name]);
    let again = b.client().await.explore(request).await.unwrap().into_inner();
    assert_eq!(again.name, started.name, "the same request id on another replica is the same operation");

    // Names are unique across the fleet; a job running on B is cancelled through A.
    let long = proto::ExploreRequest { request_id: String::new(), ..full_boards((10, 10), (10, 10)) };
    let running = b.client().await.explore(long).await.unwrap().into_inner();
    assert_ne!(running.name, started.name);
    let mut on_a = operations(&a).await;
    wait_for_job(&mut on_a, &running.name, PATIENCE, |progress| progress.state() == ExploreState::Running).await;
    on_a.cancel_operation(lro::CancelOperationRequest { name: running.name.clone() }).await.unwrap();
    let request = lro::WaitOperationRequest { name: running.name.clone(), timeout: None };
    let cancelled = on_b.wait_operation(request).await.unwrap().into_inner();
    assert_eq!(job_progress(&cancelled).state(), ExploreState::Cancelled);
    wait_until("B to stop running the cancelled job", PATIENCE, || metric(&b, "nimber_jobs_running") == 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_of_a_killed_replica_is_resumed_by_another_after_its_lease_expires() {
    let redis = Redis::start();
    let lease = ["--shared-cache-lease-ms", "1000"];
    // B helps with A's job (it takes the 10×10 item on one worker) and adopts it on another.
    let (mut a, b) =
        (replica(&redis, &lease), replica(&redis, &["--shared-cache-lease-ms", "1000", "--max-jobs", "2"]));
    // Nine quick boards (10×1 … 10×9), then the 10×10 that takes minutes.
    let name = a.client().await.explore(full_boards((10, 10), (1, 10))).await.unwrap().into_inner().name;
    let mut on_b = operations(&b).await;
    wait_for_job(&mut on_b, &name, PATIENCE, |progress| progress.items_done == 9).await;
    a.kill();
    let resumed = wait_for_job(&mut on_b, &name, PATIENCE, |progress| {
        progress.times_resumed == 1 && progress.state() == ExploreState::Running
    })
    .await;
    assert_eq!(job_progress(&resumed).items_done, 9, "the nine finished boards are not recomputed");
    wait_until("B to run the job", PATIENCE, || metric(&b, "nimber_jobs_running") == 1.0);
    on_b.cancel_operation(lro::CancelOperationRequest { name: name.clone() }).await.unwrap();
    let done = on_b.wait_operation(lro::WaitOperationRequest { name, timeout: None }).await.unwrap().into_inner();
    assert_eq!(job_progress(&done).state(), ExploreState::Cancelled);
}

/// A cancel that lands in a job's last instant (from another replica) is not overwritten by the
/// job's own success: the first end wins, atomically in Redis.
#[test]
fn a_cancelled_job_record_in_redis_is_never_overwritten_by_a_later_end() {
    let redis = Redis::start();
    let mut config = nimber::cache::SharedCacheConfig::parse(&redis.url()).unwrap();
    config.timeout = Duration::from_secs(5);
    nimber::testing::check_first_end_wins(&nimber::jobs::shared::RedisJobs::new(config));
}

/// Rows read from Redis (64 to a round trip) come in order, within their count and bytes.
#[test]
fn rows_are_read_in_order_within_their_count_and_bytes_from_redis() {
    let redis = Redis::start();
    let mut config = nimber::cache::SharedCacheConfig::parse(&redis.url()).unwrap();
    config.timeout = Duration::from_secs(5);
    nimber::testing::check_rows_are_bounded(&nimber::jobs::shared::RedisJobs::new(config));
}

/// The Redis key of the job store's `suffix` (`names`, `record/NAME`, …; see src/jobs/shared.rs).
fn jobs_key(suffix: &str) -> Vec<u8> {
    [nimber::cache::shared::KEY_PREFIX, b"\0jobs/", suffix.as_bytes()].concat()
}

fn job_result(operation: &Operation) -> proto::ExploreResult {
    match &operation.result {
        Some(OperationResult::Response(any)) => proto::ExploreResult::decode(any.value.as_slice()).unwrap(),
        other => panic!("expected a response, got {other:?}"),
    }
}

/// Waits (at most `timeout`) until operation `name` is done; returns it.
async fn wait_done(client: &mut Operations, name: &str, timeout: Duration) -> Operation {
    let timeout = Some(prost_types::Duration { seconds: timeout.as_secs() as i64, nanos: 0 });
    let request = lro::WaitOperationRequest { name: name.into(), timeout };
    let operation = client.wait_operation(request).await.expect("the operation exists").into_inner();
    assert!(operation.done, "not done in time: {:?}", job_progress(&operation));
    operation
}

/// The (rows, columns) of every row of a full-boards table.
fn sizes(result: &proto::ExploreResult) -> Vec<(u32, u32)> {
    result.rows.iter().map(|row| (row.rows, row.columns)).collect()
}

fn expected_sizes(rows: u32, columns: u32) -> Vec<(u32, u32)> {
    (1..=rows).flat_map(|r| (1..=columns).map(move |c| (r, c))).collect()
}

fn solve_job(position: proto::Position) -> proto::ExploreRequest {
    let solve = proto::SolveRequest { position: Some(position), id: String::new(), ..Default::default() };
    proto::ExploreRequest { job: Some(proto::explore_request::Job::Solve(solve)), ..Default::default() }
}

/// Earlier versions numbered operations from a counter in Redis: deleted (or evicted), it started
/// again at 1, and the next job took the first one's name, record and table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_after_the_name_counter_is_lost_gets_a_new_name_and_the_old_job_stays_intact() {
    let redis = Redis::start();
    let a = replica(&redis, &[]);
    let (mut solver, mut client) = (a.client().await, operations(&a).await);
    let first = solver.explore(full_boards((1, 4), (1, 4))).await.unwrap().into_inner().name;
    let first_done = wait_done(&mut client, &first, PATIENCE).await;
    assert_eq!(sizes(&job_result(&first_done)), expected_sizes(4, 4));

    let _: i64 = redis::cmd("DEL").arg(jobs_key("next")).query(&mut redis.connection().unwrap()).unwrap();
    let second = solver.explore(full_boards((1, 4), (1, 5))).await.unwrap().into_inner().name;
    assert_ne!(second, first, "a name was given twice");
    let second_done = wait_done(&mut client, &second, PATIENCE).await;
    assert_eq!(sizes(&job_result(&second_done)), expected_sizes(4, 5), "the second job has its own table");

    let first_again = client.get_operation(lro::GetOperationRequest { name: first.clone() }).await.unwrap();
    assert_eq!(first_again.into_inner(), first_done, "the first job's record is intact");
    let request = proto::ListExploreRowsRequest { name: first.clone(), ..Default::default() };
    let page = solver.list_explore_rows(request).await.unwrap().into_inner();
    assert_eq!(page.rows.iter().map(|row| (row.rows, row.columns)).collect::<Vec<_>>(), expected_sizes(4, 4));
    let listed = client.list_operations(lro::ListOperationsRequest::default()).await.unwrap().into_inner();
    let names: Vec<&String> = listed.operations.iter().map(|operation| &operation.name).collect();
    assert_eq!(names, [&first, &second], "both listed, in creation order");
}

/// A FLUSHALL while a family job runs: the next job gets a fresh name and its own answer, and the
/// running job, its record gone, stops and writes nothing (earlier, the next job took its name
/// and the running job's end and items landed in the new job's record).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flushall_while_a_job_runs_stops_that_job_and_the_next_job_has_its_own_name_and_answer() {
    let redis = Redis::start();
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("replica.log");
    let url = redis.url();
    let flags = ["--shared-cache", &url, "--metrics-listen", "127.0.0.1:0", "--max-jobs", "2"];
    let a = TestServer::builder().flags(&flags).log("info", &log).start();
    let (mut solver, mut client) = (a.client().await, operations(&a).await);
    // Nine quick boards (10×1 … 10×9), then the 10×10 that takes minutes.
    let family = solver.explore(full_boards((10, 10), (1, 10))).await.unwrap().into_inner().name;
    wait_for_job(&mut client, &family, PATIENCE, |progress| progress.items_done >= 9).await;

    let () = redis::cmd("FLUSHALL").query(&mut redis.connection().unwrap()).unwrap();
    let solve = solver.explore(solve_job(board(2, 4))).await.unwrap().into_inner().name;
    assert_ne!(solve, family, "a name was given twice");
    let done = wait_done(&mut client, &solve, PATIENCE).await;
    let result = job_result(&done);
    let expected = common::engine_value(&board(2, 4));
    match &result.answer {
        Some(proto::explore_result::Answer::Solve(answer)) => assert_eq!(answer.grundy, expected.nimber()),
        other => panic!("expected the 2×4 board's answer, got {other:?} with {} rows", result.rows.len()),
    }
    assert!(result.rows.is_empty() && result.total_rows == 0, "no rows of the family job: {result:?}");

    wait_until("the family job to stop", PATIENCE, || metric(&a, "nimber_jobs_running") == 0.0);
    // The replica that ran it says what became of it (not NOT_FOUND, as it once did).
    let status = client.get_operation(lro::GetOperationRequest { name: family.clone() }).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::DataLoss, "{status:?}");
    assert!(status.message().contains("lost the record") && status.message().contains("appendonly"), "{status:?}");
    for suffix in [format!("record/{family}"), format!("items/{family}")] {
        assert!(redis.keys(&jobs_key(&suffix)).is_empty(), "the stopped job wrote {suffix}");
    }
    let again = client.get_operation(lro::GetOperationRequest { name: solve.clone() }).await.unwrap().into_inner();
    assert_eq!(again, done, "the new job's record is its own");
    // The run logs its end after it leaves the running count: wait for the line.
    let vanished_line = || {
        let text = std::fs::read_to_string(&log).unwrap();
        text.lines().find(|line| line.contains("vanished") && line.contains(&family)).map(str::to_string)
    };
    wait_until("the line about the vanished job", PATIENCE, || vanished_line().is_some());
    let line = vanished_line().unwrap();
    assert!(line.contains("ERROR"), "not an ERROR line: {line}");
}

/// Keys of the wrong type where the job store keeps its sets: Explore fails with UNAVAILABLE and
/// creates nothing (earlier the creation script wrote the request id and the record, then failed,
/// leaving a job that never ran, which a retry of the request id returned).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_of_the_wrong_type_create_nothing_and_a_retry_then_creates_a_real_job() {
    let redis = Redis::start();
    let a = replica(&redis, &[]);
    let (mut solver, mut client) = (a.client().await, operations(&a).await);
    let mut connection = redis.connection().unwrap();
    for (turn, set) in ["names", "unfinished"].into_iter().enumerate() {
        let () = redis::cmd("SET").arg(jobs_key(set)).arg("not a set").query(&mut connection).unwrap();
        let request_id = format!("typed-{turn}");
        let request = proto::ExploreRequest { request_id: request_id.clone(), ..full_boards((1, 3), (1, 3)) };
        let patterns = ["record/*".to_string(), format!("request/{request_id}"), "items/*".to_string()];
        let count = |pattern: &String| redis.keys(&jobs_key(pattern)).len();
        let before: Vec<usize> = patterns.iter().map(count).collect();
        let status = solver.explore(request.clone()).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unavailable, "{set}: {status:?}");
        assert_eq!(patterns.iter().map(count).collect::<Vec<_>>(), before, "{set}: half created {patterns:?}");

        let _: i64 = redis::cmd("DEL").arg(jobs_key(set)).query(&mut connection).unwrap();
        let name = solver.explore(request).await.unwrap().into_inner().name;
        let done = wait_done(&mut client, &name, PATIENCE).await;
        assert_eq!(sizes(&job_result(&done)), expected_sizes(3, 3), "{set}: the retry is a real job");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_id_reused_with_another_request_is_already_exists_on_every_replica() {
    let redis = Redis::start();
    let (a, b) = (replica(&redis, &[]), replica(&redis, &[]));
    let first = proto::ExploreRequest { request_id: "fleet-key".into(), ..solve_job(board(2, 4)) };
    let name = a.client().await.explore(first.clone()).await.unwrap().into_inner().name;
    let other = proto::ExploreRequest { request_id: "fleet-key".into(), ..solve_job(board(3, 6)) };
    for server in [&a, &b] {
        let status = server.client().await.explore(other.clone()).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::AlreadyExists, "{status:?}");
        assert!(status.message().contains("belongs to another request"), "{}", status.message());
        assert!(status.message().contains(&name), "{}", status.message());
        let again = server.client().await.explore(first.clone()).await.unwrap().into_inner();
        assert_eq!(again.name, name, "the same request again is the same operation");
    }
    let listed = operations(&b).await.list_operations(lro::ListOperationsRequest::default()).await.unwrap();
    assert_eq!(listed.into_inner().operations.len(), 1, "the other request created nothing");
}

/// With `--jobs-redis` the job records live in their own Redis, apart from the cache's; a Redis of
/// job records that may evict is warned about once, at the first connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_records_live_in_the_jobs_redis_and_an_evicting_one_is_warned_about() {
    let (cache, jobs) = (Redis::start(), Redis::start());
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("allkeys-lru")
        .query(&mut cache.connection().unwrap())
        .unwrap();
    let log_dir = tempfile::tempdir().unwrap();
    let (apart_log, together_log) = (log_dir.path().join("apart.log"), log_dir.path().join("together.log"));
    let (cache_url, jobs_url) = (cache.url(), jobs.url());
    let apart = TestServer::builder()
        .flags(&["--shared-cache", &cache_url, "--jobs-redis", &jobs_url])
        .log("info", &apart_log)
        .start();
    let together = TestServer::builder().flags(&["--shared-cache", &cache_url]).log("info", &together_log).start();
    for server in [&apart, &together] {
        let name = server.client().await.explore(full_boards((1, 2), (1, 2))).await.unwrap().into_inner().name;
        let done = wait_done(&mut operations(server).await, &name, PATIENCE).await;
        assert_eq!(sizes(&job_result(&done)), expected_sizes(2, 2));
    }
    assert_eq!(jobs.keys(&jobs_key("record/*")).len(), 1, "the records of --jobs-redis");
    assert_eq!(cache.keys(&jobs_key("record/*")).len(), 1, "the records of the replica without --jobs-redis");
    drop((apart, together));
    let warnings = |log: &std::path::Path| {
        std::fs::read_to_string(log).unwrap().lines().filter(|line| line.contains("may evict keys")).count()
    };
    assert_eq!(warnings(&apart_log), 0, "the jobs Redis does not evict (noeviction)");
    assert_eq!(warnings(&together_log), 1, "the cache's Redis evicts (allkeys-lru): one warning");
}

/// Explore the boards of `rows`×`columns` with at most one cell blocked: 21 boards for 7×10, about
/// a quarter of a second each, enough for every replica of a small fleet to take some.
fn sub_boards(rows: usize, columns: usize) -> proto::ExploreRequest {
    let board = proto::Tetris { rows: vec!["0".repeat(columns); rows] };
    let family = proto::SubBoards { board: Some(board), max_blocked: 1, game: 0 };
    proto::ExploreRequest { job: Some(proto::explore_request::Job::SubBoards(family)), ..Default::default() }
}

/// The parts of jobs `server` computed: of its own jobs and of other replicas'.
fn parts_computed(server: &TestServer) -> (f64, f64) {
    let scraped = scrape(server.metrics_url.as_ref().unwrap());
    (
        sample(&scraped, "nimber_job_parts_total{job=\"own\"}"),
        sample(&scraped, "nimber_job_parts_total{job=\"other_replica\"}"),
    )
}

/// Every row of a sub-boards table against the engine's own value of its board, computed here on
/// one thread: the answer of a single replica.
fn assert_rows_are_the_single_replica_answer(result: &proto::ExploreResult, expected_rows: u64) {
    assert_eq!(result.total_rows, expected_rows);
    assert_eq!(result.rows.len() as u64, expected_rows);
    for row in &result.rows {
        let position =
            proto::Position { game: Some(proto::position::Game::Tetris(proto::Tetris { rows: row.board.clone() })) };
        assert_eq!(row.grundy, common::engine_value(&position).nimber(), "{:?}", row.board);
    }
}

/// A family job on three replicas: the owner and both others compute items (leased one by one in
/// Redis), each item once, and the table is the single-replica one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_family_job_is_divided_among_three_replicas_and_gives_the_single_replica_answer() {
    let redis = Redis::start();
    let replicas = [replica(&redis, &[]), replica(&redis, &[]), replica(&redis, &[])];
    let name = replicas[0].client().await.explore(sub_boards(7, 10)).await.unwrap().into_inner().name;
    let done = wait_done(&mut operations(&replicas[1]).await, &name, PATIENCE).await;
    assert_eq!(job_progress(&done).state(), ExploreState::Succeeded, "{done:?}");
    let parts: Vec<(f64, f64)> = replicas.iter().map(parts_computed).collect();
    assert!(parts[0].0 >= 1.0 && parts[0].1 == 0.0, "the owner computes items of its own job: {parts:?}");
    for helper in &parts[1..] {
        assert!(helper.1 >= 1.0 && helper.0 == 0.0, "every other replica computes items of it: {parts:?}");
    }
    let computed: f64 = parts.iter().map(|(own, other)| own + other).sum();
    assert_eq!(computed, 21.0, "each of the 21 items is computed once: {parts:?}");
    assert_rows_are_the_single_replica_answer(&job_result(&done), 21);
    assert!(redis.keys(&[&jobs_key("part/")[..], b"*"].concat()).is_empty(), "every part's lease is given back");
}

/// A replica killed (SIGKILL) while it computes an item of another replica's job loses only that
/// item: its lease expires, the owner takes it over, and the table is the single-replica one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_helper_killed_mid_item_loses_only_its_item_and_the_job_finishes_with_the_single_replica_answer() {
    let redis = Redis::start();
    let (a, mut b) = (replica(&redis, &[]), replica(&redis, &[]));
    let name = a.client().await.explore(sub_boards(7, 10)).await.unwrap().into_inner().name;
    wait_until("B to compute an item of A's job", PATIENCE, || metric(&b, "nimber_job_parts_computing") == 1.0);
    b.kill();
    let done = wait_done(&mut operations(&a).await, &name, PATIENCE).await;
    assert_eq!(job_progress(&done).state(), ExploreState::Succeeded, "{done:?}");
    assert_eq!(job_progress(&done).times_resumed, 0, "the owner ran the job from start to end");
    assert_rows_are_the_single_replica_answer(&job_result(&done), 21);
}

/// A sum's Solve job split across two replicas: its boards are leased one by one, both replicas
/// compute some, and the owner then finds them in the shared cache; the value is the one a single
/// replica finds. A single board's split, which made its search 19 to 380 times dearer, is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sum_split_across_two_replicas_has_the_single_replica_value_and_one_board_is_refused() {
    let redis = Redis::start();
    let (a, b) = (replica(&redis, &[]), replica(&redis, &[]));
    // One board: one search, which dividing makes dearer: refused, naming the field.
    let alone = proto::ExploreRequest { split_across_replicas: true, ..solve_job(board(8, 9)) };
    let refused = a.client().await.explore(alone).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().starts_with("split_across_replicas is for a sum"), "{}", refused.message());
    // A sum of four boards, each solved by whichever replica takes it.
    let components = vec![board(8, 11), board(9, 10), board(8, 12), board(9, 11)];
    let position = proto::Position { game: Some(proto::position::Game::Sum(proto::Sum { components })) };
    let request = proto::ExploreRequest { split_across_replicas: true, ..solve_job(position.clone()) };
    let name = a.client().await.explore(request).await.unwrap().into_inner().name;
    let done = wait_done(&mut operations(&b).await, &name, PATIENCE).await;
    let (on_a, on_b) = (parts_computed(&a), parts_computed(&b));
    assert!(on_a.0 >= 1.0 && on_b.1 >= 1.0, "both replicas compute parts: A {on_a:?}, B {on_b:?}");
    let Some(proto::explore_result::Answer::Solve(answer)) = job_result(&done).answer else {
        panic!("a solve answer: {done:?}")
    };
    assert_eq!(answer.grundy, common::engine_value(&position).nimber());
}

/// Redis down in the middle of a divided family job pauses the sharing, and each replica goes on
/// with what it has: the owner computes the items left, alone and without leases, keeping the rows
/// it cannot record, and the helper finishes the item it holds. Once Redis is back (the job
/// store's Redis keeps its writes on disk), both record what they kept and the owner ends the job
/// with the single-replica table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_down_in_the_middle_of_a_divided_job_pauses_the_sharing_and_the_owner_goes_on_alone() {
    let mut redis = Redis::start_durable();
    let lease = ["--shared-cache-lease-ms", "1000"];
    let (a, _helper) = (replica(&redis, &lease), replica(&redis, &lease));
    let name = a.client().await.explore(sub_boards(7, 10)).await.unwrap().into_inner().name;
    let mut on_a = operations(&a).await;
    wait_for_job(&mut on_a, &name, PATIENCE, |progress| progress.items_done >= 3).await;
    redis.kill();
    let (own_before, _) = parts_computed(&a);
    wait_until("the owner to compute two more items without Redis", PATIENCE, || {
        parts_computed(&a).0 >= own_before + 2.0
    });
    redis.restart();
    let done = wait_done(&mut on_a, &name, PATIENCE).await;
    assert_eq!(job_progress(&done).state(), ExploreState::Succeeded, "{done:?}");
    assert_rows_are_the_single_replica_answer(&job_result(&done), 21);
}

/// Every row of job `name`'s table through ListExploreRows on `server`, `size` rows a page, without
/// what says whether the memo had a row (a row computed again is); the page tokens must never
/// repeat (paging that loops is a failure, not a timeout).
async fn page_through(server: &TestServer, name: &str, size: i32) -> Vec<proto::ExploreRow> {
    let mut client = server.client().await;
    let (mut rows, mut token, mut tokens) = (Vec::new(), String::new(), std::collections::HashSet::new());
    loop {
        let request = proto::ListExploreRowsRequest { name: name.into(), page_size: size, page_token: token };
        let page = client.list_explore_rows(request).await.expect("a page").into_inner();
        rows.extend(page.rows.into_iter().map(|row| proto::ExploreRow { cached: false, ..row }));
        if page.next_page_token.is_empty() {
            return rows;
        }
        assert!(tokens.insert(page.next_page_token.clone()), "paging loops at row {}", rows.len());
        token = page.next_page_token;
    }
}

/// A row as the replicas' format without a secret writes it: prost, unsealed.
fn plain_row(grundy: u64, board: &[String]) -> Vec<u8> {
    proto::ExploreRow { grundy: Some(grundy), board: board.to_vec(), ..Default::default() }.encode_to_vec()
}

/// With the fleet's secret, job rows and records in Redis are sealed: a row edited after the job
/// succeeded (to another value, in the unsealed format), one cut short, one deleted with HDEL, and
/// then the whole table deleted, are never served: each is computed again from the cache, written
/// back sealed, and counted, and paging goes through the table once (it looped on a deleted row). A
/// record edited in Redis counts as missing, never as the job's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_rows_in_redis_are_sealed_and_a_damaged_or_missing_row_is_computed_again() {
    let redis = Redis::start();
    let secret = SecretFile::new("the fleet's secret, 32 bytes long");
    let a = replica(&redis, &secret.flags());
    let name = a.client().await.explore(sub_boards(5, 6)).await.unwrap().into_inner().name;
    let done = wait_done(&mut operations(&a).await, &name, PATIENCE).await;
    assert_eq!(job_progress(&done).state(), ExploreState::Succeeded, "{done:?}");
    let table = page_through(&a, &name, 100).await;
    assert_eq!(table.len(), 10);
    let items = jobs_key(&format!("items/{name}"));
    let mut connection = redis.connection().unwrap();
    let hset = |connection: &mut redis::Connection, index: u64, bytes: &[u8]| {
        let () = redis::cmd("HSET").arg(&items).arg(index).arg(bytes).query(connection).unwrap();
    };
    let stored: Vec<u8> = redis::cmd("HGET").arg(&items).arg(5).query(&mut connection).unwrap();
    assert_eq!(stored[0], nimber::jobs::shared::SEALED, "rows are sealed");
    let wrong = table[3].grundy.unwrap() + 7;
    hset(&mut connection, 3, &plain_row(wrong, &table[3].board));
    hset(&mut connection, 5, &stored[..stored.len() - 3]);
    let () = redis::cmd("HDEL").arg(&items).arg(7).query(&mut connection).unwrap();
    assert_eq!(page_through(&a, &name, 2).await, table, "the rows served are the job's");
    assert!(metric(&a, "nimber_jobs_rejected_total{what=\"row\"}") >= 2.0);
    assert_eq!(metric(&a, "nimber_jobs_rows_recomputed_total"), 3.0);
    let mended: Vec<u8> = redis::cmd("HGET").arg(&items).arg(3).query(&mut connection).unwrap();
    assert_eq!(mended[0], nimber::jobs::shared::SEALED, "the row computed again is written back sealed");

    let () = redis::cmd("DEL").arg(&items).query(&mut connection).unwrap();
    assert_eq!(page_through(&a, &name, 4).await, table, "a table deleted whole is computed again");

    // A record edited in Redis (here, one unsealed) is not the job's record.
    let record = jobs_key(&format!("record/{name}"));
    let unsealed = nimber::jobs::JobRecord { name: name.clone(), ..Default::default() }.encode_to_vec();
    set_raw(&mut connection, &record, &unsealed);
    let status = operations(&a).await.get_operation(lro::GetOperationRequest { name }).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound, "{status:?}");
    assert!(metric(&a, "nimber_jobs_rejected_total{what=\"record\"}") >= 1.0);
}

fn set_raw(connection: &mut redis::Connection, key: &[u8], value: &[u8]) {
    let () = redis::cmd("SET").arg(key).arg(value).query(connection).unwrap();
}

/// A row written into Redis before its item was computed, while the job runs (unsealed, as by a
/// replica without the secret, or anyone who can write to Redis), never reaches the job's table:
/// the owner reads every row back before the job succeeds and computes again the ones that fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_forged_while_the_job_runs_never_reaches_its_table() {
    let redis = Redis::start();
    let secret = SecretFile::new("the fleet's secret, 32 bytes long");
    let a = replica(&redis, &secret.flags());
    let name = a.client().await.explore(sub_boards(7, 10)).await.unwrap().into_inner().name;
    let mut client = operations(&a).await;
    wait_for_job(&mut client, &name, PATIENCE, |progress| progress.items_done >= 1).await;
    // The last item, not computed yet: its board is the original with its last free cell blocked.
    let mut board = vec!["0".repeat(10); 7];
    board[6] = format!("{}1", "0".repeat(9));
    let items = jobs_key(&format!("items/{name}"));
    let () = redis::cmd("HSET")
        .arg(&items)
        .arg(20)
        .arg(plain_row(99, &board))
        .query(&mut redis.connection().unwrap())
        .unwrap();
    let done = wait_done(&mut client, &name, PATIENCE).await;
    assert_eq!(job_progress(&done).state(), ExploreState::Succeeded, "{done:?}");
    assert_rows_are_the_single_replica_answer(&job_result(&done), 21);
    assert!(metric(&a, "nimber_jobs_rejected_total{what=\"row\"}") >= 1.0);
}

/// A replica without the secret does not join a fleet whose records are sealed: it refuses to start,
/// with one line saying why (a mixed fleet had a helper without the secret compute 5 226 wrong rows
/// from forged values and hand them to the owner).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_without_the_secret_does_not_join_a_sealed_fleet() {
    let redis = Redis::start();
    let secret = SecretFile::new("the fleet's secret, 32 bytes long");
    let _sealed = replica(&redis, &secret.flags());
    let line = refused_start(&["--shared-cache", &redis.url()], &[]);
    assert!(line.contains("seals its values and job records") && line.contains("--shared-cache-secret-file"), "{line}");
}

/// One owner per job: the owner stopped (SIGSTOP) past its lease loses the job to another replica,
/// which takes it with a newer fencing token; resumed, the stopped one finds it lost (its renewal and
/// its writes are refused), stops, and writes nothing: the job ends once, with the single-replica
/// table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_stopped_past_its_lease_loses_the_job_and_writes_nothing_more() {
    let redis = Redis::start();
    let logs = tempfile::tempdir().unwrap();
    let (log_a, url) = (logs.path().join("a.log"), redis.url());
    let flags = ["--shared-cache", &url, "--metrics-listen", "127.0.0.1:0", "--shared-cache-lease-ms", "1000"];
    let a = TestServer::builder().flags(&flags).log("warn", &log_a).start();
    let b = replica(&redis, &["--shared-cache-lease-ms", "1000"]);
    let name = a.client().await.explore(sub_boards(7, 10)).await.unwrap().into_inner().name;
    wait_for_job(&mut operations(&a).await, &name, PATIENCE, |progress| progress.items_done >= 2).await;
    let signal = |signal: &str| Command::new("kill").args([signal, &a.pid().to_string()]).status().unwrap();
    signal("-STOP");
    // B takes the job once A's lease (3 s, the shortest) expires.
    wait_until("B to run A's job", PATIENCE, || metric(&b, "nimber_jobs_running") == 1.0);
    signal("-CONT");
    let done = wait_done(&mut operations(&b).await, &name, PATIENCE).await;
    assert_eq!(job_progress(&done).state(), ExploreState::Succeeded, "{done:?}");
    assert_rows_are_the_single_replica_answer(&job_result(&done), 21);
    let lost = || std::fs::read_to_string(&log_a).unwrap().contains("another replica of the fleet");
    wait_until("A to find the job taken", PATIENCE, lost);
    let ended = |server: &TestServer| metric(server, "nimber_jobs_ended_total{state=\"succeeded\"}");
    assert_eq!((ended(&a), ended(&b)), (0.0, 1.0), "the job ends once, by its one owner");
}

/// A pause of the job store's Redis (CLIENT PAUSE, 300 ms) in the middle of a divided family job
/// costs about the parts in flight: the owner waits out a short outage rather than computing every
/// part alone (it once made three replicas compute 9 842 parts for 6 146 items). The duplicates are
/// counted, and bounded here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_pause_of_redis_costs_about_the_parts_in_flight() {
    let redis = Redis::start();
    let replicas = [replica(&redis, &[]), replica(&redis, &[]), replica(&redis, &[])];
    // 80 boards, the last (8×10) taking a second or two: the pause comes in the middle. (Helpers
    // take parts from the end, with cold tables: on a busy machine, 8×11 and 8×12 in their hands
    // kept the owner waiting for over ten minutes.)
    let request = full_boards((1, 8), (1, 10));
    let name = replicas[0].client().await.explore(request).await.unwrap().into_inner().name;
    let mut client = operations(&replicas[0]).await;
    wait_for_job(&mut client, &name, PATIENCE, |progress| progress.items_done >= 10).await;
    let () = redis::cmd("CLIENT").arg("PAUSE").arg(300).query(&mut redis.connection().unwrap()).unwrap();
    assert_eq!(metric(&replicas[0], "nimber_jobs_running"), 1.0, "the pause came after the job");
    let done = wait_done(&mut client, &name, PATIENCE).await;
    assert_eq!(job_progress(&done).state(), ExploreState::Succeeded, "{done:?}");
    assert_eq!(sizes(&job_result(&done)), expected_sizes(8, 10));
    let duplicated: f64 = replicas.iter().map(|replica| metric(replica, "nimber_job_parts_duplicated_total")).sum();
    assert!(duplicated <= 3.0, "{duplicated} parts computed twice for a 300 ms pause");
}

/// A job whose record the jobs Redis loses (FLUSHALL) while a client waits for it: WaitOperation
/// says the record was lost (DATA_LOSS), not NOT_FOUND, on the replica that runs it and on another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_job_record_is_data_loss_for_its_waiters() {
    let redis = Redis::start();
    let (a, b) = (replica(&redis, &[]), replica(&redis, &[]));
    let name = a.client().await.explore(solve_job(board(10, 10))).await.unwrap().into_inner().name;
    wait_for_job(&mut operations(&a).await, &name, PATIENCE, |progress| progress.state() == ExploreState::Running)
        .await;
    let waiters: Vec<_> = [&a, &b]
        .iter()
        .map(|server| {
            let (channel, name) = (server.url.clone(), name.clone());
            tokio::spawn(async move {
                let channel = tonic::transport::Channel::from_shared(channel).unwrap().connect().await.unwrap();
                let mut client = lro::operations_client::OperationsClient::new(channel);
                client.wait_operation(lro::WaitOperationRequest { name, timeout: None }).await
            })
        })
        .collect();
    // (The gauge appears with the first call.)
    let waiting = |server: &TestServer| {
        let scraped = scrape(server.metrics_url.as_ref().unwrap());
        let gauge = "nimber_calls_in_flight{rpc=\"google.longrunning.Operations/WaitOperation\"}";
        scraped.contains(gauge) && sample(&scraped, gauge) >= 1.0
    };
    wait_until("both calls to wait", PATIENCE, || waiting(&a) && waiting(&b));
    let () = redis::cmd("FLUSHALL").query(&mut redis.connection().unwrap()).unwrap();
    for waiter in waiters {
        let status = waiter.await.unwrap().unwrap_err();
        assert_eq!(status.code(), tonic::Code::DataLoss, "{status:?}");
    }
}
