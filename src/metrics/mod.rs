//! Prometheus metrics (through `prometheus-client`): every call by RPC and final status code with
//! its latency, SolveStream items, solve statistics, connections, the process's memory, and the
//! counts their owners push (the store's and the runner's collectors, registered by the server;
//! this module imports neither). Served on `GET /metrics` by [`crate::grpc::metrics_endpoint`].

mod collectors;

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::games::Stats;
use crate::logging::code_name;
pub(crate) use collectors::{encode_counter, encode_gauges};
use collectors::{GameValuesCollector, ProcessCollector};
use prometheus_client::collector::Collector;

/// Upper bounds of the latency histogram buckets, in seconds.
const LATENCY_BUCKETS: [f64; 14] =
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 10.0, 60.0];

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

/// The labels of a refused TLS handshake: the listener and why ([`crate::grpc::tls::refusal_reason`]).
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
    past_compute_limit: Counter,
    misere_forgotten: Counter,
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
    /// The metrics of calls and of the process, without an owner's.
    fn default() -> Self {
        Self::new(Vec::new())
    }
}

impl Metrics {
    /// The metrics of calls and of the process, with the counts `owners` push: each owner of counts
    /// (the store's [`crate::cache::StoreMetrics`], the runner's
    /// [`crate::jobs::runner::RunnerMetrics`]) gives its own collector, read at each scrape.
    pub fn new(owners: Vec<Box<dyn Collector>>) -> Self {
        let mut metrics = Self {
            registry: Registry::default(),
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram as fn() -> Histogram),
            calls_in_flight: Family::default(),
            stream_items: Family::default(),
            positions_computed: Counter::default(),
            cache_hits: Counter::default(),
            cache_misses: Counter::default(),
            past_compute_limit: Counter::default(),
            misere_forgotten: Counter::default(),
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
            "nimber_past_compute_limit",
            "Calls refused (FAILED_PRECONDITION) because their answer needs values past the compute limit \
             (--max-heap-compute) that no proven period reaches",
            metrics.past_compute_limit.clone(),
        );
        registry.register(
            "nimber_misere_positions_forgotten",
            "Positions a misère search or genus walk found past its table's bound (a quarter of \
             --table-entries) and did not keep: a search finds them again where they recur, genus theory \
             gives way to the search",
            metrics.misere_forgotten.clone(),
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
        registry.register_collector(Box::new(ProcessCollector));
        registry.register_collector(Box::new(GameValuesCollector));
        for owner in owners {
            registry.register_collector(owner);
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
        self.misere_forgotten.inc_by(stats.misere_forgotten);
    }

    /// Counts a solve refused because it needs values past the compute limit.
    pub fn record_past_compute_limit(&self) {
        self.past_compute_limit.inc();
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

impl std::fmt::Debug for Metrics {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Metrics").finish_non_exhaustive()
    }
}
