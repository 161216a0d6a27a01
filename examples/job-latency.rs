//! Interactive latency next to a running Explore job, for the job benchmarks (scripts/bench-jobs.sh):
//!
//!     job-latency ADDRESS N
//!
//! Against a server with no job running: N cheap Solve calls one after another (a stone boxes
//! position, closed form) and then one expensive solve (a full 8×8 board on a fresh store). Then it
//! starts a full 10×10 board as an Explore job, waits until it runs, and does the same again (an
//! 8×9 board, also cold). Last it cancels the job and measures how long CancelOperation takes to
//! end the operation. Prints the latency percentiles of each phase.

use std::time::{Duration, Instant};

use nimber::google::longrunning::{self as lro, operations_client::OperationsClient};
use nimber::proto::{self, position::Game, solver_client::SolverClient};
use prost::Message;
use tonic::transport::Channel;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arguments: Vec<String> = std::env::args().collect();
    let [_, address, count] = arguments.as_slice() else {
        eprintln!("usage: job-latency ADDRESS N");
        std::process::exit(2);
    };
    let count: usize = count.parse()?;
    let channel = Channel::from_shared(format!("http://{address}"))?.connect().await?;
    let mut solver = SolverClient::new(channel.clone());
    let mut operations = OperationsClient::new(channel);

    phase("without a job", &mut solver, count, board(8, 8)).await?;

    let job = proto::ExploreRequest {
        job: Some(proto::explore_request::Job::Solve(proto::SolveRequest {
            position: Some(board(10, 10)),
            ..Default::default()
        })),
        ..Default::default()
    };
    let name = solver.explore(job).await?.into_inner().name;
    loop {
        let operation = operations.get_operation(lro::GetOperationRequest { name: name.clone() }).await?.into_inner();
        let metadata = operation.metadata.unwrap_or_default();
        if proto::ExploreProgress::decode(metadata.value.as_slice())?.state() == proto::ExploreState::Running {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    phase("while a 10x10 job runs", &mut solver, count, board(8, 9)).await?;

    let cancelled = Instant::now();
    operations.cancel_operation(lro::CancelOperationRequest { name: name.clone() }).await?;
    let done = operations.wait_operation(lro::WaitOperationRequest { name, timeout: None }).await?.into_inner();
    println!(
        "cancel: CancelOperation to a done operation in {:.1} ms (done: {})",
        millis(cancelled.elapsed()),
        done.done
    );
    Ok(())
}

/// `count` cheap solves one after another, then one solve of `expensive`; prints their latencies.
async fn phase(
    label: &str,
    solver: &mut SolverClient<Channel>,
    count: usize,
    expensive: proto::Position,
) -> Result<(), Box<dyn std::error::Error>> {
    let cheap = proto::Position {
        game: Some(Game::StoneBoxes(proto::StoneBoxes {
            boxes: vec![proto::StoneBox { capacity: 1 << 50, stones: 12_345 }],
        })),
    };
    let mut latencies = Vec::with_capacity(count);
    for _ in 0..count {
        let started = Instant::now();
        solver.solve(proto::SolveRequest { position: Some(cheap.clone()), ..Default::default() }).await?;
        latencies.push(started.elapsed());
    }
    latencies.sort();
    let at = |quantile: f64| millis(latencies[((latencies.len() - 1) as f64 * quantile) as usize]);
    println!("{label}: {count} cheap solves, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms", at(0.5), at(0.99), at(1.0));
    let started = Instant::now();
    let answer =
        solver.solve(proto::SolveRequest { position: Some(expensive), ..Default::default() }).await?.into_inner();
    let computed = answer.stats.map_or(0, |stats| stats.positions_computed);
    println!("{label}: one cold board search in {:.0} ms ({computed} positions computed)", millis(started.elapsed()));
    Ok(())
}

fn board(rows: usize, columns: usize) -> proto::Position {
    proto::Position { game: Some(Game::Tetris(proto::Tetris { rows: vec!["0".repeat(columns); rows] })) }
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
