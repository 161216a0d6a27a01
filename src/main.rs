//! The `nimber` command line: `serve` runs the gRPC service, `judge` speaks the original problems'
//! formats over standard input and output.

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use nimber::cache::{OnCorrupt, Store};
use nimber::games::{Budget, Memo, NoMemo, Solver, DEFAULT_TABLE_LIMIT};
use nimber::judge::{judge, Problem};
use nimber::server::{shutdown_signal, Server, ServerConfig};

/// Solves impartial combinatorial games by Sprague–Grundy theory.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs the gRPC service (nimber.v1.Solver, reflection, health).
    Serve(ServeArgs),
    /// Reads an original problem's input on stdin and prints its exact expected output.
    Judge {
        /// Which problem's format.
        #[arg(value_enum)]
        problem: Problem,
        /// Memoize in the sled store in this directory (default: compute in memory only).
        #[arg(long)]
        data_dir: Option<PathBuf>,
    },
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
    /// Most entries of each in-memory table (the store's, and a game's within one solve).
    #[arg(long, env = "NIMBER_TABLE_ENTRIES", default_value_t = DEFAULT_TABLE_LIMIT)]
    table_entries: usize,
    /// Largest request message accepted, in bytes.
    #[arg(long, env = "NIMBER_MAX_MESSAGE_BYTES", default_value_t = 16 * 1024 * 1024)]
    max_message_bytes: usize,
    /// After SIGINT/SIGTERM, how long in-flight calls may take to finish, in milliseconds.
    #[arg(long, env = "NIMBER_SHUTDOWN_GRACE_MS", default_value_t = 10_000)]
    shutdown_grace_ms: u64,
    /// How many expensive (search) solves run at once; more wait up to their deadline, then get
    /// RESOURCE_EXHAUSTED (default: one per core).
    #[arg(long, env = "NIMBER_MAX_EXPENSIVE_SOLVES")]
    max_expensive_solves: Option<usize>,
    /// Serve Prometheus metrics on `GET /metrics` at this address (default: off).
    #[arg(long, env = "NIMBER_METRICS_LISTEN")]
    metrics_listen: Option<SocketAddr>,
    /// Size bound of the store on disk, in bytes: once reached, it keeps the values most expensive
    /// to recompute (default: 2 GiB, or a quarter of the data directory's filesystem if smaller).
    #[arg(long, env = "NIMBER_MAX_STORE_BYTES")]
    max_store_bytes: Option<u64>,
    /// What to do when the store on disk is unreadable: `rebuild` moves it aside to
    /// `<data-dir>.corrupt-<unix seconds>` and starts empty; `fail` exits with one line.
    #[arg(long, env = "NIMBER_ON_CORRUPT_STORE", value_enum, default_value_t = OnCorrupt::Rebuild)]
    on_corrupt_store: OnCorrupt,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(quiet_sled(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        ))
        .with_writer(std::io::stderr)
        .init();
    let result = match Cli::parse().command {
        Command::Serve(args) => serve(args),
        Command::Judge { problem, data_dir } => run_judge(problem, data_dir),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("nimber: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Silences sled's own log lines unless `RUST_LOG` names sled: the store reports every sled
/// failure itself, once (a damaged store would otherwise log sled's view of it too).
fn quiet_sled(filter: tracing_subscriber::EnvFilter) -> tracing_subscriber::EnvFilter {
    let names_sled = std::env::var("RUST_LOG").is_ok_and(|directives| directives.contains("sled"));
    match "sled=off".parse() {
        Ok(directive) if !names_sled => filter.add_directive(directive),
        _ => filter,
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let defaults = ServerConfig::default();
    let config = ServerConfig {
        data_dir: args.data_dir,
        max_solve_time: Duration::from_millis(args.max_solve_ms),
        table_limit: args.table_entries,
        max_message_bytes: args.max_message_bytes,
        shutdown_grace: Duration::from_millis(args.shutdown_grace_ms),
        max_expensive_solves: args.max_expensive_solves.unwrap_or(defaults.max_expensive_solves).max(1),
        metrics_listen: args.metrics_listen,
        max_store_bytes: args.max_store_bytes,
        on_corrupt_store: args.on_corrupt_store,
    };
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let server = Server::bind(args.listen, config).await?;
        // Lines on stdout that scripts and tests wait for (the port is known when 0 was asked);
        // nobody may be reading any more, so a failed write is not an error.
        let mut banner = format!("nimber listening on {}\n", server.local_addr()?);
        if let Some(address) = server.metrics_addr() {
            banner.push_str(&format!("nimber metrics on http://{address}/metrics\n"));
        }
        let _ = std::io::Write::write_all(&mut std::io::stdout(), banner.as_bytes());
        let _ = std::io::Write::flush(&mut std::io::stdout());
        server.run(shutdown_signal()).await
    })
}

fn run_judge(problem: Problem, data_dir: Option<PathBuf>) -> anyhow::Result<()> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let store = data_dir.map(|dir| Store::open(&dir, DEFAULT_TABLE_LIMIT)).transpose()?;
    let memo: &dyn Memo = match &store {
        Some(store) => store,
        None => &NoMemo,
    };
    let output = judge(problem, &input, &mut Solver::new(Budget::unlimited(), memo))?;
    print!("{output}");
    Ok(())
}
