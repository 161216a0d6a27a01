//! Prometheus metrics (through `prometheus-client`): every call by RPC and final status code with
//! its latency, SolveStream items, solve statistics, connections, and the store's counts (read from
//! its cheap accessors at scrape time); served on `GET /metrics` (`--metrics-listen`) by a hyper
//! HTTP/1.1 server behind the same bounded accept loop as the gRPC port.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;

use crate::cache::{Rejection, Store};
use crate::games::Stats;
use crate::jobs::runner::Runner;
use crate::tls::{Protocol, ServerTls};
use crate::transport::{self, AcceptConfig, AtCap};

/// Upper bounds of the latency histogram buckets, in seconds.
const LATENCY_BUCKETS: [f64; 14] =
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 10.0, 60.0];

/// Most connections open at once. At the cap, the one that has waited longest without sending a
/// whole request head is closed to make room (slow clients cannot hold the slots idle); when all
/// are being answered, new ones wait in the kernel's backlog.
const MAX_METRICS_CONNECTIONS: usize = 16;

/// A scrape connection that sends no complete request head within this is closed.
const METRICS_HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// No scrape connection stays open longer than this.
const METRICS_CONNECTION_LIFETIME: Duration = Duration::from_secs(30);

/// Labels of a finished call.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    rpc: &'static str,
    code: &'static str,
}

/// The label of one RPC.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RpcLabel {
    rpc: &'static str,
}

/// The label of a status code.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CodeLabel {
    code: &'static str,
}

/// The label of the listener a connection came in on: `grpc` or `metrics`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ListenerLabel {
    listener: &'static str,
}

/// The label of an outcome: `ok` or `error`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabel {
    result: &'static str,
}

/// The label of why a connection was closed by the server.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

/// The label of why the server closed a connection for the client's conduct: an HTTP/2 error
/// code in lower case, or `displaced`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ClosedLabel {
    reason: String,
}

/// The labels of a refused TLS handshake: the listener and why ([`crate::tls::refusal_reason`]).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TlsFailureLabels {
    listener: &'static str,
    reason: &'static str,
}

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

/// The service's metrics; cheap to update from every call and every thread.
pub struct Metrics {
    registry: Registry,
    requests: Family<CallLabels, Counter>,
    latency: Family<RpcLabel, Histogram, fn() -> Histogram>,
    calls_in_flight: Family<RpcLabel, Gauge>,
    stream_items: Family<CodeLabel, Counter>,
    positions_computed: Counter,
    cache_hits: Counter,
    cache_misses: Counter,
    solves_waiting: Gauge,
    solves_running: Gauge,
    connections_open: Family<ListenerLabel, Gauge>,
    connections_timed_out: Family<ReasonLabel, Counter>,
    connections_closed: Family<ClosedLabel, Counter>,
    accept_errors: Counter,
    tls_handshake_failures: Family<TlsFailureLabels, Counter>,
    tls_reloads: Family<ResultLabel, Counter>,
}

impl Default for Metrics {
    /// Metrics without store or job gauges.
    fn default() -> Self {
        Self::new(None, None)
    }
}

impl Metrics {
    /// The metrics, with the store's gauges when a store is given and the jobs' when a runner is.
    pub fn new(store: Option<Arc<Store>>, jobs: Option<Arc<Runner>>) -> Self {
        let mut metrics = Self {
            registry: Registry::default(),
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram as fn() -> Histogram),
            calls_in_flight: Family::default(),
            stream_items: Family::default(),
            positions_computed: Counter::default(),
            cache_hits: Counter::default(),
            cache_misses: Counter::default(),
            solves_waiting: Gauge::default(),
            solves_running: Gauge::default(),
            connections_open: Family::default(),
            connections_timed_out: Family::default(),
            connections_closed: Family::default(),
            accept_errors: Counter::default(),
            tls_handshake_failures: Family::default(),
            tls_reloads: Family::default(),
        };
        let registry = &mut metrics.registry;
        registry.register(
            "nimber_requests",
            "Finished calls of every service by RPC and final gRPC status code (CANCELLED: the client went away)",
            metrics.requests.clone(),
        );
        registry.register(
            "nimber_request_duration_seconds",
            "Call latency by RPC, until the last byte of the answer",
            metrics.latency.clone(),
        );
        registry.register(
            "nimber_calls_in_flight",
            "Calls of every service being answered now, by RPC",
            metrics.calls_in_flight.clone(),
        );
        registry.register(
            "nimber_stream_items",
            "SolveStream items answered, by status code",
            metrics.stream_items.clone(),
        );
        registry.register(
            "nimber_positions_computed",
            "Positions (board components) computed by search",
            metrics.positions_computed.clone(),
        );
        registry.register(
            "nimber_cache_hits",
            "Values served from the in-memory table or the store",
            metrics.cache_hits.clone(),
        );
        registry.register(
            "nimber_cache_misses",
            "Values that had to be computed (equals positions computed)",
            metrics.cache_misses.clone(),
        );
        registry.register(
            "nimber_expensive_solves_waiting",
            "Expensive solves waiting for a slot",
            metrics.solves_waiting.clone(),
        );
        registry.register(
            "nimber_expensive_solves_running",
            "Expensive solves running (each holds a slot until its search has stopped)",
            metrics.solves_running.clone(),
        );
        registry.register(
            "nimber_connections_open",
            "Connections open, by listener (grpc or metrics)",
            metrics.connections_open.clone(),
        );
        registry.register(
            "nimber_connections_timed_out",
            "Connections closed by the server: no HTTP/2 preface in time (handshake) or no call for too long (idle)",
            metrics.connections_timed_out.clone(),
        );
        registry.register(
            "nimber_connections_closed",
            "Connections the server closed for the client's conduct, by reason: the HTTP/2 error code of the GOAWAY it sent \
             (enhance_your_calm: a flood limit, e.g. too many tiny DATA frames or resets; protocol_error, flow_control_error, \
             frame_size_error, compression_error, ...), or displaced (a metrics connection that had not sent a whole request \
             when its slot was needed)",
            metrics.connections_closed.clone(),
        );
        registry.register(
            "nimber_accept_errors",
            "Failed accepts (e.g. out of file descriptors), each followed by a pause",
            metrics.accept_errors.clone(),
        );
        registry.register(
            "nimber_tls_handshake_failures",
            "TLS handshakes that failed, by listener and reason: no_certificate, expired, not_yet_valid, unknown_ca, \
             bad_certificate_version (client certificates must be X.509 v3), bad_certificate, protocol (not TLS, or no \
             common version, cipher or ALPN protocol), closed (the client closed or reset the connection), other",
            metrics.tls_handshake_failures.clone(),
        );
        registry.register(
            "nimber_tls_reloads",
            "Readings of the TLS files after SIGHUP or a change, by result (error: the previous certificates stay)",
            metrics.tls_reloads.clone(),
        );
        if let Some(store) = store {
            registry.register_collector(Box::new(StoreCollector(store)));
        }
        if let Some(jobs) = jobs {
            registry.register_collector(Box::new(JobsCollector(jobs)));
        }
        metrics
    }

    /// Counts a call of `rpc` that starts being answered (ended by [`Metrics::record_call`]).
    pub fn call_started(&self, rpc: &'static str) {
        self.calls_in_flight.get_or_create(&RpcLabel { rpc }).inc();
    }

    /// Records one finished call of `rpc` with final status `code` that took `elapsed`.
    pub fn record_call(&self, rpc: &'static str, code: tonic::Code, elapsed: Duration) {
        self.calls_in_flight.get_or_create(&RpcLabel { rpc }).dec();
        self.requests.get_or_create(&CallLabels { rpc, code: code_name(code) }).inc();
        self.latency.get_or_create(&RpcLabel { rpc }).observe(elapsed.as_secs_f64());
    }

    /// Records one answered SolveStream item with status `code`.
    pub fn record_stream_item(&self, code: tonic::Code) {
        self.stream_items.get_or_create(&CodeLabel { code: code_name(code) }).inc();
    }

    /// Adds a solve's statistics.
    pub fn record_solve(&self, stats: Stats) {
        self.positions_computed.inc_by(stats.positions_computed);
        self.cache_misses.inc_by(stats.positions_computed);
        self.cache_hits.inc_by(stats.cache_hits);
    }

    /// The gauge of expensive solves waiting for a slot.
    pub fn solves_waiting(&self) -> Gauge {
        self.solves_waiting.clone()
    }

    /// The gauge of expensive solves running.
    pub fn solves_running(&self) -> Gauge {
        self.solves_running.clone()
    }

    /// Counts a connection accepted on `listener` (`grpc` or `metrics`).
    pub fn connection_opened(&self, listener: &'static str) {
        self.connections_open.get_or_create(&ListenerLabel { listener }).inc();
    }

    /// Counts a connection on `listener` closed.
    pub fn connection_closed(&self, listener: &'static str) {
        self.connections_open.get_or_create(&ListenerLabel { listener }).dec();
    }

    /// Counts a connection closed for `reason` (`handshake` or `idle`).
    pub fn connection_timed_out(&self, reason: &'static str) {
        self.connections_timed_out.get_or_create(&ReasonLabel { reason }).inc();
    }

    /// Counts a connection the server closed for `reason` (see `nimber_connections_closed_total`).
    pub fn connection_closed_for(&self, reason: &str) {
        self.connections_closed.get_or_create(&ClosedLabel { reason: reason.to_string() }).inc();
    }

    /// Counts a failed TLS handshake on `listener`, refused for `reason`.
    pub fn tls_handshake_failed(&self, listener: &'static str, reason: &'static str) {
        self.tls_handshake_failures.get_or_create(&TlsFailureLabels { listener, reason }).inc();
    }

    /// Counts a reading of the TLS files that succeeded (`true`) or failed.
    pub fn tls_reloaded(&self, ok: bool) {
        self.tls_reloads.get_or_create(&ResultLabel { result: if ok { "ok" } else { "error" } }).inc();
    }

    /// Counts a failed accept.
    pub fn accept_error(&self) {
        self.accept_errors.inc();
    }

    /// The metrics in the Prometheus text exposition format (version 0.0.4).
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail; a collector error would only truncate the text.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry);
        out
    }
}

/// Encodes constant gauges, each `(name, help, value)`.
fn encode_gauges<const N: usize>(
    encoder: &mut DescriptorEncoder,
    gauges: [(&str, &str, u64); N],
) -> Result<(), std::fmt::Error> {
    for (name, help, value) in gauges {
        let gauge = ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX));
        gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
    }
    Ok(())
}

/// The store's counts, read at each scrape from its accessors (atomics: no store I/O).
struct StoreCollector(Arc<Store>);

impl std::fmt::Debug for StoreCollector {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("StoreCollector")
    }
}

impl Collector for StoreCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let store = &self.0;
        let gauges = [
            ("nimber_cache_entries", "Values in the persistent store", store.entries()),
            ("nimber_cache_size_bytes", "Size of the persistent store on disk", store.size_on_disk()),
            (
                "nimber_store_writable",
                "1 while computed values are written to disk, 0 while read-only",
                store.writable() as u64,
            ),
        ];
        encode_gauges(&mut encoder, gauges)?;
        let evictions = ConstCounter::new(store.evictions());
        evictions.encode(encoder.encode_descriptor(
            "nimber_store_evictions",
            "Entries dropped to keep the store under --max-store-bytes",
            None,
            evictions.metric_type(),
        )?)?;
        if let Some(tier) = store.shared_tier() {
            let counts = tier.counts();
            let counters = [
                ("nimber_shared_cache_hits", "Values found in the shared cache (Redis)", counts.hits),
                ("nimber_shared_cache_misses", "Shared-cache lookups without a valid value", counts.misses),
                (
                    "nimber_shared_cache_errors",
                    "Shared-cache calls that failed (unreachable, slow, full) and values rejected there",
                    counts.errors,
                ),
                (
                    "nimber_shared_cache_dropped",
                    "Computed values not sent to the shared cache because its queue was full",
                    counts.dropped,
                ),
                (
                    "nimber_shared_cache_lease_waits",
                    "Waits for a value another replica was computing under its lease",
                    counts.lease_waits,
                ),
            ];
            for (name, help, value) in counters {
                let counter = ConstCounter::new(value);
                counter.encode(encoder.encode_descriptor(name, help, None, counter.metric_type())?)?;
            }
            let mut rejected = encoder.encode_descriptor(
                "nimber_shared_cache_rejected",
                "Values read from the shared cache and not served, by reason; each is recomputed and overwritten",
                None,
                prometheus_client::metrics::MetricType::Counter,
            )?;
            for (reason, count) in Rejection::ALL.into_iter().zip(counts.rejected) {
                let label = RejectionLabel { reason: reason.label() };
                ConstCounter::new(count).encode(rejected.encode_family(&label)?)?;
            }
        }
        Ok(())
    }
}

/// The label of why a value read from the shared cache was rejected.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RejectionLabel {
    reason: &'static str,
}

/// The label of a job's final state.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabel {
    state: &'static str,
}

/// The jobs' counts, read at each scrape from the runner (two locks, no I/O).
struct JobsCollector(Arc<Runner>);

impl std::fmt::Debug for JobsCollector {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("JobsCollector")
    }
}

impl Collector for JobsCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let counts = self.0.counts();
        let gauges = [
            ("nimber_jobs_queued", "Explore jobs waiting for a worker (at most --max-queued-jobs)", counts.queued),
            ("nimber_jobs_running", "Explore jobs running (at most --max-jobs)", counts.running),
            (
                "nimber_jobs_store_writable",
                "1 while the job store can write, 0 while it waits for space (job calls answer UNAVAILABLE)",
                counts.store.writable as u64,
            ),
            (
                "nimber_jobs_store_bytes",
                "Bytes of keys and values the local job store holds (at most about --max-jobs-store-bytes)",
                counts.store.bytes,
            ),
        ];
        encode_gauges(&mut encoder, gauges)?;
        let moved_aside = encoder.encode_descriptor(
            "nimber_jobs_store_moved_aside",
            "Unreadable job stores moved aside to <jobs-dir>.corrupt-<time> since the start (readable records recovered)",
            None,
            prometheus_client::metrics::MetricType::Counter,
        )?;
        ConstCounter::new(counts.store.moved_aside).encode(moved_aside)?;
        let mut ended = encoder.encode_descriptor(
            "nimber_jobs_ended",
            "Explore job runs that ended since the start, by final state",
            None,
            prometheus_client::metrics::MetricType::Counter,
        )?;
        for (state, count) in
            [("succeeded", counts.succeeded), ("failed", counts.failed), ("cancelled", counts.cancelled)]
        {
            ConstCounter::new(count).encode(ended.encode_family(&StateLabel { state })?)?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Metrics").finish_non_exhaustive()
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

/// Serves `GET /metrics` (and `HEAD`) on `listener` (HTTPS with `tls`) until the task is dropped:
/// at most `MAX_METRICS_CONNECTIONS` connections, each closed after `METRICS_CONNECTION_LIFETIME`,
/// when its request head takes longer than `METRICS_HEADER_TIMEOUT`, or when its slot is needed
/// before its request head is whole. Rendering runs on the blocking pool, never on the runtime's
/// threads.
pub async fn serve_metrics(listener: TcpListener, metrics: Arc<Metrics>, tls: Option<Arc<ServerTls>>) {
    use futures_util::StreamExt;
    let config = AcceptConfig {
        listener: "metrics",
        max_connections: MAX_METRICS_CONNECTIONS,
        handshake_bytes: 0,
        // Bounds the TLS handshake; the request head has its own timeout.
        handshake_timeout: Some(METRICS_HEADER_TIMEOUT),
        idle_timeout: None,
        tcp_keepalive: None,
        tls,
        protocol: Protocol::Http1,
        at_cap: AtCap::DisplaceOldestWaiting,
    };
    let mut connections = std::pin::pin!(transport::incoming(listener, config, metrics.clone()));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(METRICS_HEADER_TIMEOUT).keep_alive(false);
    while let Some(Ok(connection)) = connections.next().await {
        let metrics = metrics.clone();
        let activity = tonic::transport::server::Connected::connect_info(&connection).activity;
        let serving = http.serve_connection(
            hyper_util::rt::TokioIo::new(connection),
            hyper::service::service_fn(move |request| {
                // The head is whole: from now on the connection keeps its slot.
                let answering = activity.call_started();
                let answer = answer_scrape(request, metrics.clone());
                async move {
                    let answer = answer.await;
                    drop(answering);
                    answer
                }
            }),
        );
        tokio::spawn(async move {
            if let Ok(Err(error)) = tokio::time::timeout(METRICS_CONNECTION_LIFETIME, serving).await {
                tracing::debug!(%error, "metrics connection failed");
            }
        });
    }
}

/// Answers one HTTP request: the metrics for `GET /metrics`, the same headers without the body for
/// `HEAD /metrics` (RFC 9110, section 9.3.2), 404 otherwise.
async fn answer_scrape(
    request: hyper::Request<hyper::body::Incoming>,
    metrics: Arc<Metrics>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let method = request.method().clone();
    let response = if matches!(method, hyper::Method::GET | hyper::Method::HEAD) && request.uri().path() == "/metrics" {
        match tokio::task::spawn_blocking(move || metrics.render()).await {
            Ok(body) => {
                let length = body.len();
                let body = if method == hyper::Method::HEAD { Bytes::new() } else { Bytes::from(body) };
                hyper::Response::builder()
                    .header(hyper::header::CONTENT_TYPE, prometheus_client::encoding::prometheus_text::CONTENT_TYPE)
                    .header(hyper::header::CONTENT_LENGTH, length)
                    .body(Full::new(body))
            }
            Err(error) => {
                tracing::error!(%error, "rendering the metrics failed");
                hyper::Response::builder().status(500).body(Full::new(Bytes::from_static(b"rendering failed\n")))
            }
        }
    } else {
        hyper::Response::builder()
            .status(404)
            .body(Full::new(Bytes::from_static(b"only GET /metrics is served here\n")))
    };
    Ok(response.expect("a response from constant parts"))
}

/// Binds the metrics endpoint.
pub async fn bind(address: SocketAddr) -> anyhow::Result<TcpListener> {
    TcpListener::bind(address).await.map_err(|error| anyhow::anyhow!("cannot listen for metrics on {address}: {error}"))
}
