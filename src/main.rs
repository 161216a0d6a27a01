//! The `nimber` command line: `serve` runs the gRPC service, `judge` speaks the original problems'
//! formats over standard input and output, `explore` and `jobs` run and manage analysis jobs.

mod cli;

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use nimber::cache::Store;
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
    /// Runs an analysis job (on a server with --server, otherwise in this process) and prints its table.
    Explore(cli::ExploreArgs),
    /// Lists, shows, watches, cancels or deletes a server's analysis jobs.
    Jobs(cli::JobsArgs),
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
    /// Directory of the job store (long-running Explore jobs; created when missing).
    #[arg(long, env = "NIMBER_JOBS_DIR", default_value = "nimber-jobs")]
    jobs_dir: PathBuf,
    /// How many Explore jobs run at once (on their own threads, at a lower CPU priority).
    #[arg(long, env = "NIMBER_MAX_JOBS", default_value_t = 1)]
    max_jobs: usize,
    /// How long a finished operation is kept unless deleted (e.g. 7d, 12h, 30m).
    #[arg(long, env = "NIMBER_JOB_RETENTION", default_value = "7d", value_parser = humantime::parse_duration)]
    job_retention: Duration,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let result = match Cli::parse().command {
        Command::Serve(args) => serve(args),
        Command::Judge { problem, data_dir } => run_judge(problem, data_dir),
        Command::Explore(args) => cli::explore(args),
        Command::Jobs(args) => cli::jobs(args),
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
    let defaults = ServerConfig::default();
    let config = ServerConfig {
        data_dir: args.data_dir,
        max_solve_time: Duration::from_millis(args.max_solve_ms),
        table_limit: args.table_entries,
        max_message_bytes: args.max_message_bytes,
        shutdown_grace: Duration::from_millis(args.shutdown_grace_ms),
        max_expensive_solves: args.max_expensive_solves.unwrap_or(defaults.max_expensive_solves).max(1),
        metrics_listen: args.metrics_listen,
        jobs: nimber::jobs::runner::JobsConfig {
            dir: args.jobs_dir,
            max_jobs: args.max_jobs.max(1),
            retention: args.job_retention,
            table_limit: args.table_entries,
        },
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
