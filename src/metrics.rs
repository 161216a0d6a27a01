//! Prometheus metrics: requests by RPC and status code, latency histograms, solve statistics,
//! cache size; served as text on `GET /metrics` by a minimal HTTP/1.1 endpoint (`--metrics-listen`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::cache::{lock, Store};
use crate::games::Stats;

/// Upper bounds of the latency histogram buckets, in seconds.
const LATENCY_BUCKETS: [f64; 14] =
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 10.0, 60.0];

/// One RPC's latency histogram.
#[derive(Default)]
struct Histogram {
    buckets: [u64; LATENCY_BUCKETS.len()],
    count: u64,
    sum_seconds: f64,
}

/// The service's metrics; cheap to update from every call.
#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(&'static str, &'static str), u64>>,
    latency: Mutex<BTreeMap<&'static str, Histogram>>,
    positions_computed: AtomicU64,
    cache_hits: AtomicU64,
    solves_waiting: AtomicU64,
}

impl Metrics {
    /// Records one finished call of `rpc` with status `code` that took `elapsed`.
    pub fn record_request(&self, rpc: &'static str, code: tonic::Code, elapsed: Duration) {
        *lock(&self.requests).entry((rpc, code_name(code))).or_default() += 1;
        let seconds = elapsed.as_secs_f64();
        let mut latency = lock(&self.latency);
        let histogram = latency.entry(rpc).or_default();
        for (bucket, bound) in histogram.buckets.iter_mut().zip(LATENCY_BUCKETS) {
            if seconds <= bound {
                *bucket += 1;
            }
        }
        histogram.count += 1;
        histogram.sum_seconds += seconds;
    }

    /// Adds a solve's statistics.
    pub fn record_solve(&self, stats: Stats) {
        self.positions_computed.fetch_add(stats.positions_computed, Ordering::Relaxed);
        self.cache_hits.fetch_add(stats.cache_hits, Ordering::Relaxed);
    }

    /// Counts an expensive solve waiting for a slot (`+1`) or no longer waiting (`-1`).
    pub fn waiting(&self, delta: i64) {
        if delta >= 0 {
            self.solves_waiting.fetch_add(delta as u64, Ordering::Relaxed);
        } else {
            self.solves_waiting.fetch_sub(delta.unsigned_abs(), Ordering::Relaxed);
        }
    }

    /// The metrics in the Prometheus text exposition format.
    pub fn render(&self, store: &Store) -> String {
        let mut out = String::new();
        out.push_str("# HELP nimber_requests_total Finished calls by RPC and gRPC status code.\n# TYPE nimber_requests_total counter\n");
        for ((rpc, code), count) in lock(&self.requests).iter() {
            let _ = writeln!(out, "nimber_requests_total{{rpc=\"{rpc}\",code=\"{code}\"}} {count}");
        }
        out.push_str("# HELP nimber_request_duration_seconds Call latency by RPC.\n# TYPE nimber_request_duration_seconds histogram\n");
        for (rpc, histogram) in lock(&self.latency).iter() {
            for (count, bound) in histogram.buckets.iter().zip(LATENCY_BUCKETS) {
                let _ = writeln!(out, "nimber_request_duration_seconds_bucket{{rpc=\"{rpc}\",le=\"{bound}\"}} {count}");
            }
            let _ = writeln!(
                out,
                "nimber_request_duration_seconds_bucket{{rpc=\"{rpc}\",le=\"+Inf\"}} {}",
                histogram.count
            );
            let _ = writeln!(out, "nimber_request_duration_seconds_sum{{rpc=\"{rpc}\"}} {}", histogram.sum_seconds);
            let _ = writeln!(out, "nimber_request_duration_seconds_count{{rpc=\"{rpc}\"}} {}", histogram.count);
        }
        let positions = self.positions_computed.load(Ordering::Relaxed);
        let hits = self.cache_hits.load(Ordering::Relaxed);
        let gauges = [
            (
                "nimber_positions_computed_total",
                "counter",
                "Positions (board components) computed by search.",
                positions,
            ),
            ("nimber_cache_hits_total", "counter", "Values served from the in-memory table or the store.", hits),
            (
                "nimber_cache_misses_total",
                "counter",
                "Values that had to be computed (equals positions computed).",
                positions,
            ),
            ("nimber_cache_entries", "gauge", "Values in the persistent store.", store.entries()),
            ("nimber_cache_size_bytes", "gauge", "Size of the persistent store on disk.", store.size_on_disk()),
            (
                "nimber_expensive_solves_waiting",
                "gauge",
                "Expensive solves waiting for a slot.",
                self.solves_waiting.load(Ordering::Relaxed),
            ),
        ];
        for (name, kind, help, value) in gauges {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
        }
        out
    }
}

/// The canonical name of a status code, e.g. `INVALID_ARGUMENT`.
pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

/// Serves `GET /metrics` on `listener` until the task is dropped.
pub async fn serve_metrics(listener: TcpListener, metrics: Arc<Metrics>, store: Arc<Store>) {
    loop {
        let Ok((mut socket, _)) = listener.accept().await else { continue };
        let metrics = metrics.clone();
        let store = store.clone();
        tokio::spawn(async move {
            let mut request = [0u8; 1024];
            let Ok(Ok(read)) = tokio::time::timeout(Duration::from_secs(5), socket.read(&mut request)).await else {
                return;
            };
            let head = String::from_utf8_lossy(&request[..read]);
            let (status, body) = if head.starts_with("GET /metrics ") || head.starts_with("GET /metrics?") {
                ("200 OK", metrics.render(&store))
            } else {
                ("404 Not Found", "only GET /metrics is served here\n".to_string())
            };
            let response = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
        });
    }
}

/// Binds the metrics endpoint.
pub async fn bind(address: SocketAddr) -> anyhow::Result<TcpListener> {
    TcpListener::bind(address).await.map_err(|error| anyhow::anyhow!("cannot listen for metrics on {address}: {error}"))
}
