//! GetOperation latency across a fleet, for the fleet benchmarks (scripts/bench-fleet.sh):
//!
//!     fleet-operations ADDRESS_A ADDRESS_B N
//!
//! Starts a small Explore job on replica A (full boards 1×1 … 3×3) and waits on A until it is done.
//! Then reads that operation with GetOperation N times on A (where it was started) and N times on
//! B (which never ran it), alternating, one call at a time, and prints the latency percentiles of each.

use std::time::{Duration, Instant};

use nimber::google::longrunning::{self as lro, operations_client::OperationsClient};
use nimber::proto::{self, solver_client::SolverClient};
use tonic::transport::Channel;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arguments: Vec<String> = std::env::args().collect();
    let [_, address_a, address_b, count] = arguments.as_slice() else {
        eprintln!("usage: fleet-operations ADDRESS_A ADDRESS_B N");
        std::process::exit(2);
    };
    let count: usize = count.parse()?;
    let channel_a = Channel::from_shared(format!("http://{address_a}"))?.connect().await?;
    let channel_b = Channel::from_shared(format!("http://{address_b}"))?.connect().await?;
    let family = proto::FullBoards { min_rows: 1, max_rows: 3, min_columns: 1, max_columns: 3, game: 0 };
    let job =
        proto::ExploreRequest { job: Some(proto::explore_request::Job::FullBoards(family)), ..Default::default() };
    let name = SolverClient::new(channel_a.clone()).explore(job).await?.into_inner().name;
    let mut on_a = OperationsClient::new(channel_a);
    let mut on_b = OperationsClient::new(channel_b);
    let done = on_a.wait_operation(lro::WaitOperationRequest { name: name.clone(), timeout: None }).await?;
    assert!(done.into_inner().done, "the job ended");

    let (mut latencies_a, mut latencies_b) = (Vec::with_capacity(count), Vec::with_capacity(count));
    for _ in 0..count {
        for (client, latencies) in [(&mut on_a, &mut latencies_a), (&mut on_b, &mut latencies_b)] {
            let started = Instant::now();
            let operation = client.get_operation(lro::GetOperationRequest { name: name.clone() }).await?;
            latencies.push(started.elapsed());
            assert!(operation.into_inner().done, "both replicas see the job done");
        }
    }
    for (label, latencies) in [("on A (started there)", &mut latencies_a), ("on B (never ran it)", &mut latencies_b)] {
        latencies.sort();
        let at = |quantile: f64| millis(latencies[((latencies.len() - 1) as f64 * quantile) as usize]);
        println!("GetOperation {label}: {count} calls, p50 {:.3} ms, p99 {:.3} ms", at(0.5), at(0.99));
    }
    Ok(())
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
