//! The `nimber` command line: `serve` runs the gRPC service, `judge` speaks the original problems'
//! formats over standard input and output, `explore` and `jobs` run and manage analysis jobs,
//! `health` asks a server whether it is serving.

mod cli;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use nimber::jobs::runner;

use cli::judge::Problem;

use nimber::cache::{default_max_bytes, OnCorrupt, SharedCacheConfig, SharedSecret};
use nimber::games::DEFAULT_TABLE_LIMIT;
use nimber::grpc::server::{shutdown_signal, Server, ServerConfig, DEFAULT_MAX_MESSAGE_BYTES};
use nimber::grpc::tls::TlsFiles;
use nimber::limits;
use nimber::logging::{self, LogFormat};

/// Solves impartial combinatorial games by Sprague–Grundy theory.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// Log line format on stderr (`RUST_LOG` filters; colours only when stderr is a terminal).
    #[arg(long, global = true, env = "NIMBER_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs the gRPC service (nimber.v1.Solver, reflection, health).
    Serve(Box<ServeArgs>),
    /// Reads an original problem's input on stdin and prints its exact expected output.
    Judge {
        /// Which problem's format.
        #[arg(value_enum)]
        problem: Problem,
        /// Memoize in the sled store in this directory (default: compute in memory only).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        #[command(flatten)]
        memory_limit: cli::MemoryLimit,
        #[command(flatten)]
        search_threads: cli::SearchThreadsArg,
    },
    /// Runs an analysis job (on a server with --server, otherwise in this process) and prints its table.
    Explore(cli::ExploreArgs),
    /// Lists, shows, watches, cancels or deletes a server's analysis jobs.
    Jobs(cli::JobsArgs),
    /// Exits 0 when a server reports SERVING (grpc.health.v1), 1 otherwise.
    Health(cli::health::HealthArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "NIMBER_LISTEN", default_value = "127.0.0.1:50051")]
    listen: SocketAddr,
    /// Directory of the sled store (created when missing).
    #[arg(long, env = "NIMBER_DATA_DIR", default_value = "nimber-data")]
    data_dir: PathBuf,
    /// Server-side maximum time of one solve, in milliseconds, whatever the caller's deadline.
    #[arg(long, env = "NIMBER_MAX_SOLVE_MS", default_value_t = 60_000)]
    max_solve_ms: u64,
    #[command(flatten)]
    memory_limit: cli::MemoryLimit,
    #[command(flatten)]
    search_threads: cli::SearchThreadsArg,
    #[command(flatten)]
    max_heap_compute: cli::HeapComputeLimit,
    /// Most entries of each in-memory table (a game's within one solve or job; the store's in-memory
    /// tier gets as many entries' worth of bytes, 80 each) (default: half the memory limit shared
    /// by the store, the expensive solves and the jobs, at most 11534336).
    #[arg(long, env = "NIMBER_TABLE_ENTRIES")]
    table_entries: Option<usize>,
    /// Largest request message accepted, in bytes; larger ones get RESOURCE_EXHAUSTED.
    #[arg(long, env = "NIMBER_MAX_MESSAGE_BYTES", default_value_t = DEFAULT_MAX_MESSAGE_BYTES)]
    max_message_bytes: usize,
    /// After SIGINT/SIGTERM, how long in-flight calls may take to finish, in milliseconds.
    #[arg(long, env = "NIMBER_SHUTDOWN_GRACE_MS", default_value_t = 10_000)]
    shutdown_grace_ms: u64,
    /// How many expensive (search) solves run at once; more wait up to their deadline, then get
    /// RESOURCE_EXHAUSTED (default: one per available core (the cgroup CPU quota counts), fewer if
    /// the memory limit cannot give each a useful table).
    #[arg(long, env = "NIMBER_MAX_EXPENSIVE_SOLVES")]
    max_expensive_solves: Option<usize>,
    /// Serve Prometheus metrics on `GET /metrics` at this address (default: off).
    #[arg(long, env = "NIMBER_METRICS_LISTEN")]
    metrics_listen: Option<SocketAddr>,
    /// Most client connections open at once; at the cap new ones wait in the kernel's backlog
    /// (default: 1024, or half the open-file limit when lower).
    #[arg(long, env = "NIMBER_MAX_CONNECTIONS")]
    max_connections: Option<usize>,
    /// Close a connection that sends no complete HTTP/2 preface within this many milliseconds.
    #[arg(long, env = "NIMBER_HANDSHAKE_TIMEOUT_MS", default_value_t = 10_000)]
    handshake_timeout_ms: u64,
    /// Close a connection with no call open for this many milliseconds (0: never).
    #[arg(long, env = "NIMBER_IDLE_TIMEOUT_MS", default_value_t = 300_000)]
    idle_timeout_ms: u64,
    /// Most calls open at once on one connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS).
    #[arg(long, env = "NIMBER_MAX_CONCURRENT_STREAMS", default_value_t = 256)]
    max_concurrent_streams: u32,
    /// HTTP/2 flow-control window of each stream, in bytes: how much a client may send on a call
    /// before the server reads it; the connection's window is 128 times it (a stream sends at
    /// most this per round trip: raise it for large requests over long distances).
    #[arg(
        long,
        env = "NIMBER_STREAM_WINDOW_BYTES",
        default_value_t = nimber::grpc::server::DEFAULT_STREAM_WINDOW_BYTES,
        value_parser = clap::value_parser!(u32).range(1024..=i64::from(nimber::grpc::server::MAX_STREAM_WINDOW_BYTES))
    )]
    stream_window_bytes: u32,
    /// Interval of HTTP/2 PINGs on every connection, and idle time before TCP keepalive probes.
    #[arg(long, env = "NIMBER_KEEPALIVE_INTERVAL_MS", default_value_t = 60_000)]
    keepalive_interval_ms: u64,
    /// Close a connection whose HTTP/2 PING is not answered within this many milliseconds.
    #[arg(long, env = "NIMBER_KEEPALIVE_TIMEOUT_MS", default_value_t = 20_000)]
    keepalive_timeout_ms: u64,
    /// Most per-request log lines (failed calls and stream items) per second; the rest are counted
    /// in a "N similar lines suppressed" line (0: no limit).
    #[arg(long, env = "NIMBER_LOG_LINES_PER_SECOND", default_value_t = logging::DEFAULT_REQUEST_LINES_PER_SECOND)]
    log_lines_per_second: u32,
    /// Directory of the job store (long-running Explore jobs; created when missing). Unused with
    /// --jobs-redis (or --shared-cache): job records then live in Redis, shared by the fleet.
    #[arg(long, env = "NIMBER_JOBS_DIR", default_value = runner::DEFAULT_JOBS_DIR)]
    jobs_dir: PathBuf,
    /// How many Explore jobs run at once (on their own threads, at a lower CPU priority).
    #[arg(long, env = "NIMBER_MAX_JOBS", default_value_t = runner::DEFAULT_MAX_JOBS)]
    max_jobs: usize,
    /// The most Explore jobs waiting to run; Explore beyond it is RESOURCE_EXHAUSTED.
    #[arg(long, env = "NIMBER_MAX_QUEUED_JOBS", default_value_t = runner::DEFAULT_MAX_QUEUED_JOBS)]
    max_queued_jobs: usize,
    /// How long a finished operation is kept unless deleted (e.g. 7d, 12h, 30m).
    #[arg(long, env = "NIMBER_JOB_RETENTION", default_value = runner::DEFAULT_JOB_RETENTION, value_parser = humantime::parse_duration)]
    job_retention: Duration,
    /// The most bytes of records and tables the job store holds: past it, the tables of the oldest
    /// finished jobs are deleted (their results stay), and while only running jobs' tables are left
    /// Explore is RESOURCE_EXHAUSTED (default: a thirty-second of the memory limit, at most 1 GiB:
    /// sled keeps about as much in memory).
    #[arg(long, env = "NIMBER_MAX_JOBS_STORE_BYTES")]
    max_jobs_store_bytes: Option<u64>,
    /// What to do when the job store is unreadable: `rebuild` recovers its readable records into an
    /// empty one and moves it aside to `<jobs-dir>.corrupt-<unix seconds>`; `fail` exits with one
    /// line.
    #[arg(long, env = "NIMBER_ON_CORRUPT_JOBS", value_enum, default_value_t = OnCorrupt::Rebuild)]
    on_corrupt_jobs: OnCorrupt,
    /// Size bound of the store on disk, in bytes: once reached, it keeps the values most expensive
    /// to recompute (default: 2 GiB, a quarter of the data directory's filesystem, or a thirty-second of
    /// the memory limit, whichever is smallest: sled keeps up to four times as much in memory).
    #[arg(long, env = "NIMBER_MAX_STORE_BYTES")]
    max_store_bytes: Option<u64>,
    /// What to do when the store on disk is unreadable: `rebuild` moves it aside to
    /// `<data-dir>.corrupt-<unix seconds>` and starts empty; `fail` exits with one line.
    #[arg(long, env = "NIMBER_ON_CORRUPT_STORE", value_enum, default_value_t = OnCorrupt::Rebuild)]
    on_corrupt_store: OnCorrupt,
    /// Serve TLS with this PEM certificate chain, leaf first (needs --tls-key; default: plaintext).
    #[arg(long, env = "NIMBER_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, env = "NIMBER_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Require client certificates signed by a CA in this PEM file: mutual TLS (needs --tls-cert).
    #[arg(long, env = "NIMBER_TLS_CLIENT_CA", requires = "tls_cert")]
    tls_client_ca: Option<PathBuf>,
    /// Serve the metrics endpoint over HTTPS with the same certificates (needs --tls-cert).
    #[arg(long, env = "NIMBER_METRICS_TLS", requires = "tls_cert")]
    metrics_tls: bool,
    /// Check the TLS files for changes this often, in milliseconds, and reload them (0: only on
    /// SIGHUP; a reload affects new connections only).
    #[arg(long, env = "NIMBER_TLS_POLL_MS", default_value_t = 5_000)]
    tls_poll_ms: u64,
    /// Share the cache with the other replicas of a fleet through Redis (or Valkey):
    /// `redis://[USER:PASSWORD@]HOST:PORT[/DB]`, or `rediss://…` for TLS (default: no shared tier).
    /// Never logged with its credentials.
    #[arg(long, env = "NIMBER_SHARED_CACHE", hide_env_values = true)]
    shared_cache: Option<String>,
    /// The bound of every call to the shared cache (connect, send, receive), in milliseconds.
    #[arg(long, env = "NIMBER_SHARED_CACHE_TIMEOUT_MS", default_value_t = 50)]
    shared_cache_timeout_ms: u64,
    /// How long a replica's lease on an expensive value lives unless renewed, in milliseconds:
    /// after a replica dies, others wait this long before computing what it was computing. The
    /// lease of a running Explore job lives as long, but at least 3 s.
    #[arg(long, env = "NIMBER_SHARED_CACHE_LEASE_MS", default_value_t = 10_000)]
    shared_cache_lease_ms: u64,
    /// Most computed values waiting to be sent to the shared cache; more are dropped (counted).
    #[arg(long, env = "NIMBER_SHARED_CACHE_QUEUE", default_value_t = 65_536)]
    shared_cache_queue: usize,
    /// Keep the fleet's Explore job records in this Redis (same URL forms as --shared-cache), one
    /// that never evicts (maxmemory-policy noeviction) and persists (appendonly yes), apart from
    /// the cache's, which evicts (default: the --shared-cache Redis; neither: --jobs-dir).
    /// Calls are bounded by --shared-cache-timeout-ms. Never logged with its credentials.
    #[arg(long, env = "NIMBER_JOBS_REDIS", hide_env_values = true)]
    jobs_redis: Option<String>,
    /// A file holding the fleet's secret (at least 16 bytes; a final newline is ignored), which
    /// authenticates the values in the shared cache (HMAC-SHA-256): every replica of a fleet needs
    /// the same. Or the secret itself in NIMBER_SHARED_CACHE_SECRET. Without either, values from
    /// Redis are trusted as they are.
    #[arg(long, env = "NIMBER_SHARED_CACHE_SECRET_FILE")]
    shared_cache_secret_file: Option<PathBuf>,
}

fn main() -> ExitCode {
    let missing = limits::missing_cpu_features();
    if !missing.is_empty() {
        eprintln!(
            "nimber: this CPU lacks {} (see .cargo/config.toml); build with RUSTFLAGS=\"\" for it",
            missing.join(", ")
        );
        return ExitCode::FAILURE;
    }
    limits::limit_malloc_arenas(limits::available_cores());
    let cli = Cli::parse();
    logging::init(cli.log_format);
    let result = match cli.command {
        Command::Serve(args) => serve(*args),
        Command::Judge { problem, data_dir, memory_limit, search_threads } => {
            cli::run_judge(problem, data_dir, memory_limit.bytes(), search_threads.pool())
        }
        Command::Explore(args) => cli::explore(args),
        Command::Jobs(args) => cli::jobs(args),
        Command::Health(args) => cli::health::health(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("nimber: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    logging::set_request_lines_per_second(args.log_lines_per_second);
    args.max_heap_compute.apply();
    // So that the first 2×2-placement requests do not pay for reading the table in.
    nimber::games::placement::load_small_sets();
    let memory_limit = args.memory_limit.bytes();
    let cores = limits::available_cores();
    let search_threads = args.search_threads.pool();
    let budget = limits::share_memory(
        memory_limit,
        cores,
        args.max_jobs.max(1) + search_threads.helpers_most(),
        args.max_expensive_solves.map(|solves| solves.max(1)),
        args.table_entries,
        search_threads.table_entries_each(DEFAULT_TABLE_LIMIT),
    )
    .map_err(anyhow::Error::msg)?;
    let max_store_bytes =
        args.max_store_bytes.unwrap_or_else(|| default_max_bytes(&args.data_dir, budget.store_max_bytes));
    tracing::info!(
        memory_limit,
        expensive_solves = budget.expensive_solves,
        table_entries = budget.table_entries,
        store_hot_bytes = budget.store_hot_bytes,
        page_cache_bytes = budget.page_cache_bytes,
        store_write_buffer_bytes = budget.store_write_buffer_bytes,
        max_store_bytes,
        "memory shared by the in-memory tables, the store's in-memory tier, sled's page cache and the store's size"
    );
    tracing::info!(search_threads = search_threads.most(), "threads the solves and jobs search on between them");
    let redis = |flag: &str, url: &str| {
        let mut config = SharedCacheConfig::parse_flag(flag, url).map_err(anyhow::Error::msg)?;
        config.timeout = Duration::from_millis(args.shared_cache_timeout_ms.max(1));
        config.lease = Duration::from_millis(args.shared_cache_lease_ms.max(3));
        config.queue_limit = args.shared_cache_queue;
        anyhow::Ok(config)
    };
    let shared_cache = match args.shared_cache.as_deref() {
        Some(url) => {
            let mut config = redis("--shared-cache", url)?;
            config.secret =
                SharedSecret::configured(args.shared_cache_secret_file.as_deref(), std::env::var_os(SharedSecret::ENV))
                    .map_err(anyhow::Error::msg)?;
            Some(config)
        }
        None => None,
    };
    // Page tokens of every replica of a fleet with a secret are the fleet's.
    if let Some(secret) = shared_cache.as_ref().and_then(|config| config.secret.as_ref()) {
        nimber::page::use_key(&secret.derive("nimber page tokens"));
    }
    let jobs_redis = match args.jobs_redis.as_deref() {
        Some(url) => {
            let mut config = redis("--jobs-redis", url)?;
            config.secret = shared_cache.as_ref().and_then(|shared| shared.secret.clone());
            Some(config)
        }
        None => shared_cache.clone(),
    };
    for config in shared_cache.iter().chain(&jobs_redis) {
        config.check_fleet_secret().map_err(anyhow::Error::msg)?;
    }
    let config = ServerConfig {
        data_dir: args.data_dir,
        max_solve_time: Duration::from_millis(args.max_solve_ms),
        table_limit: budget.table_entries,
        store_hot_bytes: budget.store_hot_bytes,
        page_cache_bytes: budget.page_cache_bytes,
        store_write_buffer_bytes: budget.store_write_buffer_bytes,
        max_message_bytes: args.max_message_bytes,
        shutdown_grace: Duration::from_millis(args.shutdown_grace_ms),
        max_expensive_solves: budget.expensive_solves,
        metrics_listen: args.metrics_listen,
        max_connections: args.max_connections.unwrap_or_else(nimber::grpc::server::default_max_connections).max(1),
        handshake_timeout: Duration::from_millis(args.handshake_timeout_ms),
        idle_timeout: (args.idle_timeout_ms > 0).then(|| Duration::from_millis(args.idle_timeout_ms)),
        max_concurrent_streams: args.max_concurrent_streams.max(1),
        stream_window_bytes: args.stream_window_bytes,
        keepalive_interval: Duration::from_millis(args.keepalive_interval_ms.max(1)),
        keepalive_timeout: Duration::from_millis(args.keepalive_timeout_ms.max(1)),
        jobs: nimber::jobs::runner::JobsConfig {
            dir: args.jobs_dir,
            store: nimber::jobs::local::JobStoreOptions {
                page_cache_bytes: budget.jobs_page_cache_bytes,
                on_corrupt: args.on_corrupt_jobs,
                max_bytes: args.max_jobs_store_bytes.unwrap_or(budget.jobs_store_max_bytes),
            },
            max_jobs: args.max_jobs.max(1),
            retention: args.job_retention,
            table_limit: budget.table_entries,
            max_queued: args.max_queued_jobs,
            search_threads,
            share_work: jobs_redis.is_some() && shared_cache.is_some(),
            shared: jobs_redis,
        },
        max_store_bytes: Some(max_store_bytes),
        on_corrupt_store: args.on_corrupt_store,
        tls: match (args.tls_cert, args.tls_key) {
            (Some(cert), Some(key)) => Some(TlsFiles { cert, key, client_ca: args.tls_client_ca }),
            _ => None,
        },
        metrics_tls: args.metrics_tls,
        tls_poll: (args.tls_poll_ms > 0).then(|| Duration::from_millis(args.tls_poll_ms)),
        shared_cache,
    };
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let server = Server::bind(args.listen, config).await?;
        let shutdown = shutdown_signal();
        // Lines on stdout that scripts and tests wait for (the port is known when 0 was asked);
        // nobody may be reading any more, so a failed write is not an error.
        let mut banner = format!("nimber listening on {}\n", server.local_addr()?);
        if let Some(address) = server.metrics_addr() {
            let scheme = if server.serves_metrics_tls() { "https" } else { "http" };
            banner.push_str(&format!("nimber metrics on {scheme}://{address}/metrics\n"));
        }
        let _ = std::io::Write::write_all(&mut std::io::stdout(), banner.as_bytes());
        let _ = std::io::Write::flush(&mut std::io::stdout());
        server.run(shutdown).await
    })
}
