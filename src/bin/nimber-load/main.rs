//! `nimber-load`: drives a running nimber server with a fixed number of calls in flight and reports
//! calls/s, errors by status code and exact latency quantiles.
//!
//! Unary RPCs (`solve`, `best-move`, `analyze`, `health`): `--concurrency` worker tasks, each one
//! call in flight at a time (a closed loop), spread round-robin over `--connections` HTTP/2
//! connections. `stream`: one SolveStream carrying the workload pipelined, at most `--concurrency`
//! items unanswered, each with its sequence number as `id` (checked on the answer).
//!
//! Every run stops by itself: after `--duration` (or `--requests` measured calls), and in any case
//! after `--max-time`; each call carries a `--timeout` deadline that the client enforces too.
//! The client is meant to be lean (it usually shares the machine with the server): by default one
//! thread (a current-thread runtime), requests built from pre-built positions.

mod report;
mod workload;

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use nimber::proto::{self, solver_client::SolverClient};
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::health_client::HealthClient;

use report::{code_name, Report, Setup, Tally};
use workload::{Positions, Workload};

/// Drives a running nimber server and reports calls/s, errors and latency quantiles.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// The server, e.g. http://127.0.0.1:50051.
    #[arg(long, env = "NIMBER_LOAD_TARGET", default_value = "http://127.0.0.1:50051")]
    target: String,
    /// Which RPC to call (`stream`: the workload over one SolveStream).
    #[arg(long, value_enum, default_value = "solve")]
    rpc: Rpc,
    /// Which positions to send (ignored by `health`).
    #[arg(long, value_enum, default_value = "closed-form")]
    workload: Workload,
    /// Calls in flight (unary: worker tasks; stream: unanswered items at most).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    concurrency: u64,
    /// How long to measure, e.g. 10s, 500ms, 1m (ignored with --requests).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    duration: Duration,
    /// Measure exactly this many calls instead of a duration.
    #[arg(long, conflicts_with = "duration")]
    requests: Option<u64>,
    /// Load applied before measuring starts (not counted), e.g. 1s.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    warmup: Duration,
    /// HTTP/2 connections the unary workers are spread over (stream: always one).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=1024))]
    connections: u64,
    /// Client runtime threads: 1 is a current-thread runtime (leanest next to a local server).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    threads: u64,
    /// Deadline of each unary call, sent as grpc-timeout and enforced by the client too (a call the
    /// client gives up on counts as CANCELLED, one the server gives up on as DEADLINE_EXCEEDED).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    timeout: Duration,
    /// Hard cap on the whole run, warm-up included: no call starts after it (calls in flight then
    /// end within --timeout).
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    max_time: Duration,
    /// Exit with status 1 when more calls than this fail.
    #[arg(long, default_value_t = 0)]
    max_errors: u64,
    /// Seed of the generated positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the report as one JSON object instead of the text table.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Rpc {
    /// nimber.v1.Solver/Solve.
    Solve,
    /// nimber.v1.Solver/BestMove.
    BestMove,
    /// nimber.v1.Solver/Analyze (first page of 10 moves).
    Analyze,
    /// grpc.health.v1.Health/Check: the empty-handler baseline.
    Health,
    /// nimber.v1.Solver/SolveStream: the workload pipelined over one stream.
    Stream,
}

impl Rpc {
    fn name(self) -> &'static str {
        match self {
            Rpc::Solve => "solve",
            Rpc::BestMove => "best-move",
            Rpc::Analyze => "analyze",
            Rpc::Health => "health",
            Rpc::Stream => "stream",
        }
    }
}

/// `10s`, `250ms`, `1.5s`, `2m`, `100us`, or a plain number of seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| format!("not a duration: {text:?} (e.g. 10s, 500ms, 1m)"))?;
    let seconds = match unit.trim() {
        "" | "s" => number,
        "ms" => number / 1e3,
        "us" => number / 1e6,
        "m" => number * 60.0,
        "h" => number * 3600.0,
        other => return Err(format!("unknown duration unit {other:?} (use h, m, s, ms or us)")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|error| format!("bad duration {text:?}: {error}"))
}

/// The clients of one connection.
#[derive(Clone)]
struct Clients {
    solver: SolverClient<Channel>,
    health: HealthClient<Channel>,
}

/// What every worker shares.
struct Shared {
    rpc: Rpc,
    positions: Positions,
    timeout: Duration,
    /// The next request's sequence number, over the whole run (positions depend on it).
    sequence: AtomicU64,
}

/// One phase of a unary run (the warm-up, then the measured part).
struct Phase {
    /// No call starts at or after this instant.
    end: Instant,
    /// At most this many calls start (measured phase with --requests).
    limit: Option<u64>,
    started: AtomicU64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = if args.threads <= 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(args.threads as usize).enable_all().build()
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("nimber-load: cannot start the runtime: {error}");
            return ExitCode::from(2);
        }
    };
    let report = match runtime.block_on(run(&args)) {
        Ok(report) => report,
        Err(error) => {
            eprintln!("nimber-load: {error:#}");
            return ExitCode::from(2);
        }
    };
    if args.json {
        println!("{}", report.json());
    } else {
        print!("{}", report.table());
    }
    if report.error_count() > args.max_errors {
        eprintln!("nimber-load: {} calls failed (at most {} allowed)", report.error_count(), args.max_errors);
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

async fn run(args: &Args) -> anyhow::Result<Report> {
    let began = Instant::now();
    let hard_end = began + args.max_time;
    let connections = if args.rpc == Rpc::Stream { 1 } else { args.connections as usize };
    let endpoint =
        Endpoint::from_shared(args.target.clone())?.tcp_nodelay(true).connect_timeout(Duration::from_secs(5));
    let mut clients = Vec::with_capacity(connections);
    for _ in 0..connections {
        // Each connect() opens its own HTTP/2 connection.
        let channel =
            endpoint.connect().await.map_err(|error| anyhow::anyhow!("cannot connect to {}: {error}", args.target))?;
        clients.push(Clients { solver: SolverClient::new(channel.clone()), health: HealthClient::new(channel) });
    }
    let shared = Arc::new(Shared {
        rpc: args.rpc,
        positions: Positions::new(args.workload, args.seed),
        timeout: args.timeout,
        sequence: AtomicU64::new(0),
    });
    let setup = Setup {
        rpc: args.rpc.name(),
        workload: if args.rpc == Rpc::Health { "none" } else { args.workload.name() },
        target: args.target.clone(),
        concurrency: args.concurrency as usize,
        connections,
        threads: args.threads as usize,
    };
    let (tally, elapsed) = if args.rpc == Rpc::Stream {
        run_stream(args, &shared, clients[0].solver.clone(), hard_end).await
    } else {
        if !args.warmup.is_zero() {
            let warmup =
                Phase { end: (Instant::now() + args.warmup).min(hard_end), limit: None, started: AtomicU64::new(0) };
            run_unary_phase(args, &shared, &clients, warmup).await;
        }
        let start = Instant::now();
        let end = if args.requests.is_some() { hard_end } else { (start + args.duration).min(hard_end) };
        let phase = Phase { end, limit: args.requests, started: AtomicU64::new(0) };
        let tally = run_unary_phase(args, &shared, &clients, phase).await;
        (tally, start.elapsed())
    };
    Ok(Report::new(setup, tally, elapsed))
}

/// Runs `--concurrency` closed-loop workers until the phase ends; their tallies merged.
async fn run_unary_phase(args: &Args, shared: &Arc<Shared>, clients: &[Clients], phase: Phase) -> Tally {
    let phase = Arc::new(phase);
    let workers: Vec<_> = (0..args.concurrency as usize)
        .map(|worker| {
            let (shared, phase) = (shared.clone(), phase.clone());
            let clients = clients[worker % clients.len()].clone();
            tokio::spawn(unary_worker(shared, phase, clients))
        })
        .collect();
    let mut tally = Tally::default();
    for worker in workers {
        match worker.await {
            Ok(worker_tally) => tally.merge(worker_tally),
            Err(error) => {
                eprintln!("nimber-load: a worker failed: {error}");
                tally.error("CLIENT_PANIC");
            }
        }
    }
    tally
}

/// One closed-loop worker: a call, then the next, until the phase ends.
async fn unary_worker(shared: Arc<Shared>, phase: Arc<Phase>, mut clients: Clients) -> Tally {
    let mut tally = Tally::default();
    loop {
        if Instant::now() >= phase.end {
            break;
        }
        if let Some(limit) = phase.limit {
            if phase.started.fetch_add(1, Ordering::Relaxed) >= limit {
                break;
            }
        }
        let sequence = shared.sequence.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let result = call(&shared, &mut clients, sequence).await;
        let latency = started.elapsed();
        match result {
            Ok(()) => tally.latencies.push(latency.as_nanos() as u64),
            Err(code) => tally.error(code),
        }
    }
    tally
}

/// An outcome a Solve-like answer may carry (anything else is a bad response).
fn valid_outcome(outcome: i32) -> bool {
    outcome == proto::Outcome::NextPlayerWins as i32 || outcome == proto::Outcome::PreviousPlayerWins as i32
}

/// One unary call; `Err` holds the status code name (or `BAD_RESPONSE` for a malformed answer).
async fn call(shared: &Shared, clients: &mut Clients, sequence: u64) -> Result<(), &'static str> {
    fn request<T>(message: T, timeout: Duration) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        request.set_timeout(timeout);
        request
    }
    let failed = |status: tonic::Status| code_name(status.code());
    let valid = match shared.rpc {
        Rpc::Health => {
            let message = tonic_health::pb::HealthCheckRequest { service: String::new() };
            let answer = clients.health.check(request(message, shared.timeout)).await.map_err(failed)?;
            answer.get_ref().status == tonic_health::pb::health_check_response::ServingStatus::Serving as i32
        }
        Rpc::Solve => {
            let message = proto::SolveRequest { position: Some(shared.positions.get(sequence)), ..Default::default() };
            let answer = clients.solver.solve(request(message, shared.timeout)).await.map_err(failed)?;
            valid_outcome(answer.get_ref().outcome)
        }
        Rpc::BestMove => {
            let message =
                proto::BestMoveRequest { position: Some(shared.positions.get(sequence)), ..Default::default() };
            let answer = clients.solver.best_move(request(message, shared.timeout)).await.map_err(failed)?;
            valid_outcome(answer.get_ref().outcome)
        }
        Rpc::Analyze => {
            let message = proto::AnalyzeRequest {
                position: Some(shared.positions.get(sequence)),
                limit: 10,
                ..Default::default()
            };
            let answer = clients.solver.analyze(request(message, shared.timeout)).await.map_err(failed)?;
            valid_outcome(answer.get_ref().outcome)
        }
        Rpc::Stream => unreachable!("streams run in run_stream"),
    };
    if valid {
        Ok(())
    } else {
        Err("BAD_RESPONSE")
    }
}

/// The workload over one SolveStream: a sender task keeps at most `--concurrency` items unanswered,
/// this task reads the answers (in request order) and matches each to its send time and id.
/// Items sent during the warm-up are not measured.
async fn run_stream(
    args: &Args,
    shared: &Arc<Shared>,
    mut client: SolverClient<Channel>,
    hard_end: Instant,
) -> (Tally, Duration) {
    let window = Arc::new(tokio::sync::Semaphore::new(args.concurrency as usize));
    let (items, requests) = tokio::sync::mpsc::channel::<proto::SolveRequest>(args.concurrency as usize);
    let (sent, mut sent_times) = tokio::sync::mpsc::unbounded_channel::<(u64, Instant)>();
    let measure_from = (Instant::now() + args.warmup).min(hard_end);
    let end = if args.requests.is_some() { hard_end } else { (measure_from + args.duration).min(hard_end) };
    let limit = args.requests;
    let sender = {
        let (window, shared) = (window.clone(), shared.clone());
        tokio::spawn(async move {
            let mut measured = 0u64;
            loop {
                match window.acquire().await {
                    Ok(permit) => permit.forget(),
                    Err(_) => break,
                }
                let now = Instant::now();
                if now >= end || limit.is_some_and(|limit| measured >= limit) {
                    break;
                }
                if now >= measure_from {
                    measured += 1;
                }
                let sequence = shared.sequence.fetch_add(1, Ordering::Relaxed);
                let item = proto::SolveRequest {
                    position: Some(shared.positions.get(sequence)),
                    id: sequence.to_string(),
                    ..Default::default()
                };
                if sent.send((sequence, now)).is_err() || items.send(item).await.is_err() {
                    break;
                }
            }
            // Dropping `items` ends the request stream; the server then finishes the stream.
        })
    };
    let mut tally = Tally::default();
    let mut request = tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(requests));
    // The whole stream's deadline: the run's end plus one call's timeout to drain.
    request.set_timeout(end.saturating_duration_since(Instant::now()) + args.timeout);
    let mut last_answer = measure_from;
    let mut failure = None;
    match client.solve_stream(request).await {
        Ok(answers) => {
            let mut answers = answers.into_inner();
            loop {
                match answers.message().await {
                    Ok(Some(answer)) => {
                        let now = Instant::now();
                        let Some((sequence, sent_at)) = sent_times.recv().await else {
                            tally.error("BAD_RESPONSE"); // more answers than items
                            break;
                        };
                        window.add_permits(1);
                        if sent_at < measure_from {
                            continue;
                        }
                        last_answer = now;
                        if let Some(error) = &answer.error {
                            tally.error(&error.code_name);
                        } else if answer.id.parse::<u64>() != Ok(sequence) || !valid_outcome(answer.outcome) {
                            tally.error("BAD_RESPONSE");
                        } else {
                            tally.latencies.push((now - sent_at).as_nanos() as u64);
                        }
                    }
                    Ok(None) => break,
                    Err(status) => {
                        failure = Some(code_name(status.code()));
                        break;
                    }
                }
            }
        }
        Err(status) => failure = Some(code_name(status.code())),
    }
    // Stop the sender (it may wait for a permit that never comes), then count every measured item
    // left unanswered as failed with the stream's status (or as unanswered when the stream ended).
    window.close();
    sender.abort();
    let _ = sender.await;
    while let Ok((_, sent_at)) = sent_times.try_recv() {
        if sent_at >= measure_from {
            tally.error(failure.unwrap_or("UNANSWERED"));
        }
    }
    if let Some(code) = failure {
        if tally.errors.is_empty() {
            tally.error(code);
        }
    }
    (tally, last_answer.saturating_duration_since(measure_from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("10x").is_err());
        assert!(parse_duration("s").is_err());
    }
}
