//! Wiring: the listener (through [`crate::grpc::transport`]'s bounded accept loop), HTTP/2 limits, the
//! `nimber.v1.Solver` service, gRPC reflection (v1 and v1alpha), health, the call layer
//! ([`crate::grpc::calls`]), and graceful shutdown (health NOT_SERVING, stop accepting, finish in-flight
//! calls, flush the store).

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use super::metrics_endpoint;
use crate::cache::{OnCorrupt, SharedCache, SharedCacheConfig, Store, StoreMetrics, StoreOptions};
use crate::grpc::calls::CallLayer;
use crate::grpc::service::{ServiceState, SolverService};
use crate::grpc::tls::{Protocol, ServerTls, TlsFiles};
use crate::grpc::transport::{self, AcceptConfig, AtCap};
use crate::jobs::runner::RunnerMetrics;
use crate::metrics::Metrics;
use crate::proto;

/// Everything the server is configured with.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Where the sled store lives.
    pub data_dir: PathBuf,
    /// The server-side maximum time of one solve.
    pub max_solve_time: Duration,
    /// The most entries of a game's in-memory tables within one solve.
    pub table_limit: usize,
    /// The most bytes of the store's in-memory tier.
    pub store_hot_bytes: u64,
    /// The most bytes of sled's page cache.
    pub page_cache_bytes: u64,
    /// The most bytes of values waiting for the store's writer thread.
    pub store_write_buffer_bytes: u64,
    /// The largest request message accepted, in bytes.
    pub max_message_bytes: usize,
    /// How long in-flight calls may take to finish after a shutdown signal before the server
    /// closes their connections anyway.
    pub shutdown_grace: Duration,
    /// How many expensive (search) solves run at once; more wait up to their deadline.
    pub max_expensive_solves: usize,
    /// Where to serve Prometheus metrics (`GET /metrics`), if anywhere.
    pub metrics_listen: Option<SocketAddr>,
    /// Most client connections open at once; at the cap no more are accepted until one closes.
    pub max_connections: usize,
    /// A connection that sends no complete HTTP/2 preface within this is closed.
    pub handshake_timeout: Duration,
    /// A connection with no call open for this long is closed; `None`: never.
    pub idle_timeout: Option<Duration>,
    /// Most streams (calls) open at once on one connection, advertised in HTTP/2 SETTINGS.
    pub max_concurrent_streams: u32,
    /// The HTTP/2 flow-control window of each stream, in bytes (the connection's is
    /// [`connection_window_bytes`] of it).
    pub stream_window_bytes: u32,
    /// HTTP/2 PING interval on a connection, and the idle time before TCP keepalive probes.
    pub keepalive_interval: Duration,
    /// A connection whose HTTP/2 PING is not answered within this is closed.
    pub keepalive_timeout: Duration,
    /// Long-running jobs: their store, worker limit and retention.
    pub jobs: crate::jobs::runner::JobsConfig,
    /// The store's size bound in bytes (`None`: 2 GiB or a quarter of its filesystem, if smaller).
    pub max_store_bytes: Option<u64>,
    /// What to do when the store on disk is unreadable.
    pub on_corrupt_store: OnCorrupt,
    /// Serve TLS (mutual TLS with a client CA) with these files; `None`: plaintext.
    pub tls: Option<TlsFiles>,
    /// Serve the metrics endpoint with the same certificates (HTTPS).
    pub metrics_tls: bool,
    /// How often the TLS files are checked for changes; `None`: reloaded only on SIGHUP.
    pub tls_poll: Option<Duration>,
    /// The fleet's shared cache tier (Redis), if any.
    pub shared_cache: Option<SharedCacheConfig>,
}

/// The default of `--max-message-bytes`: 4 MiB, gRPC's default.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// The default of `--stream-window-bytes`: 64 KiB, about HTTP/2's own initial window (and
/// grpc-go's).
pub const DEFAULT_STREAM_WINDOW_BYTES: u32 = 64 * 1024;

/// The most of `--stream-window-bytes`: the connection window,
/// [`STREAM_WINDOWS_PER_CONNECTION_WINDOW`] times it, stays within HTTP/2's largest (2^31 − 1).
pub const MAX_STREAM_WINDOW_BYTES: u32 = 16 * 1024 * 1024;

/// How many stream windows the connection window holds: see [`connection_window_bytes`].
pub const STREAM_WINDOWS_PER_CONNECTION_WINDOW: u32 = 128;

/// The HTTP/2 connection window for streams of `stream_window` bytes each, so that a client that
/// reads its answers late is not taken for a flood.
///
/// h2 (since 0.4.16) bounds the memory of the DATA frames it holds unread: each frame under 256
/// bytes is charged 256 minus its length, against a budget of half the connection window
/// (`record_data_frame` in h2's `proto/streams/counts.rs`); the charge is returned when the
/// application reads the frame, and a connection over budget is closed with GOAWAY
/// ENHANCE_YOUR_CALM `too_many_data_frames`. A SolveStream whose client reads nothing stops being
/// read by the server once its answers cannot be sent (flow control), and the client's next items
/// wait in h2, one small DATA frame each (grpcio, grpc-go and grpc-java send a message per frame).
/// With hyper's default windows, 1 MiB each, one stream could hold 1 MiB of 28-byte items, charged
/// 8 MB against a 512 KiB budget: the connection was closed and every answer lost. hyper does not
/// expose h2's `data_frame_budget`, but the budget follows the connection window, while one
/// stream can only hold its own window: a gRPC message is at least 5 bytes, so a stream window
/// of them is charged at most (256 − 5) / 5 ≈ 50 times its size, under half of 128 times. A
/// stream that is not read therefore never exhausts the budget by itself, and the protection
/// stays whole: a connection holding more small frames unread than that, on many streams, is
/// still closed, and a connection holds at most this window of data plus half of it in overhead.
pub fn connection_window_bytes(stream_window: u32) -> u32 {
    stream_window.saturating_mul(STREAM_WINDOWS_PER_CONNECTION_WINDOW).min(i32::MAX as u32)
}

/// The default of `--max-connections`: 1024, or half the open-file limit when that is lower (each
/// connection is a descriptor; the rest is left to the store and the metrics endpoint).
pub fn default_max_connections() -> usize {
    let half_of_limit = crate::limits::open_files_limit_from_system().map_or(u64::MAX, |limit| limit / 2);
    half_of_limit.clamp(16, 1024) as usize
}

/// Opens the store and binds `listen`; the server is then ready to [`Server::run`].
pub struct Server {
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    store: Arc<Store>,
    jobs: Arc<crate::jobs::runner::Runner>,
    tls: Option<Arc<ServerTls>>,
    hangup: crate::grpc::tls::Hangup,
    config: ServerConfig,
}

impl Server {
    /// Opens the store in `config.data_dir` and binds `listen` (port 0 picks a free port).
    pub async fn bind(listen: SocketAddr, config: ServerConfig) -> anyhow::Result<Self> {
        let tls = config.tls.clone().map(ServerTls::load).transpose()?.map(Arc::new);
        anyhow::ensure!(!config.metrics_tls || tls.is_some(), "--metrics-tls needs --tls-cert and --tls-key");
        if tls.is_none() && !listen.ip().is_loopback() {
            tracing::warn!(%listen, "serving plaintext on a non-loopback address: anyone on the network can read and send calls (see --tls-cert)");
        }
        let options = StoreOptions {
            hot_bytes: config.store_hot_bytes,
            page_cache_bytes: config.page_cache_bytes,
            max_bytes: config.max_store_bytes,
            on_corrupt: config.on_corrupt_store,
            write_buffer_bytes: config.store_write_buffer_bytes,
        };
        let data_dir = config.data_dir.clone();
        // Opening reads the disk (and may count an old store once): not on the async runtime.
        let shared_cache = config.shared_cache.clone();
        let store = tokio::task::spawn_blocking(move || {
            let store = Store::open_with(&data_dir, &options)?;
            anyhow::Ok(match shared_cache {
                Some(shared_cache) => store.with_shared_tier(start_shared_tier(shared_cache)),
                None => store,
            })
        });
        let store = Arc::new(store.await??);
        let (jobs_config, memo) = (config.jobs.clone(), store.clone());
        // Opening the job store reads all of it: not on the async runtime either.
        let jobs = tokio::task::spawn_blocking(move || crate::jobs::runner::Runner::start(jobs_config, memo)).await??;
        let listener =
            TcpListener::bind(listen).await.map_err(|error| anyhow::anyhow!("cannot listen on {listen}: {error}"))?;
        let metrics_listener = match config.metrics_listen {
            Some(address) => Some(metrics_endpoint::bind(address).await?),
            None => None,
        };
        // Caught before the server reports it listens, so that an early SIGHUP cannot end it.
        #[cfg(unix)]
        let hangup = tls.as_ref().and_then(|_| crate::grpc::tls::catch_hangup());
        #[cfg(not(unix))]
        let hangup = None;
        Ok(Self { listener, metrics_listener, store, jobs, tls, hangup, config })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The address of the metrics endpoint, if it is served.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_listener.as_ref().and_then(|listener| listener.local_addr().ok())
    }

    /// Whether the metrics endpoint serves HTTPS.
    pub fn serves_metrics_tls(&self) -> bool {
        self.config.metrics_tls && self.tls.is_some()
    }

    /// Serves until `shutdown` completes, then finishes in-flight calls and flushes the store.
    pub async fn run(mut self, shutdown: impl Future<Output = ()> + Send) -> anyhow::Result<()> {
        let metrics = Arc::new(Metrics::new(vec![
            Box::new(StoreMetrics(self.store.clone())),
            Box::new(RunnerMetrics(self.jobs.clone())),
        ]));
        let state = ServiceState {
            store: self.store.clone(),
            max_solve_time: self.config.max_solve_time,
            table_limit: self.config.table_limit,
            expensive_slots: Arc::new(tokio::sync::Semaphore::new(self.config.max_expensive_solves)),
            metrics: metrics.clone(),
            jobs: self.jobs.clone(),
        };
        let suppressed_lines_task = tokio::spawn(crate::logging::report_suppressed_every(Duration::from_secs(1)));
        let metrics_tls = self.tls.clone().filter(|_| self.config.metrics_tls);
        let metrics_task = self
            .metrics_listener
            .map(|listener| tokio::spawn(metrics_endpoint::serve_metrics(listener, metrics.clone(), metrics_tls)));
        let hangup = self.hangup.take();
        let tls_task = self
            .tls
            .clone()
            .map(|tls| tokio::spawn(crate::grpc::tls::watch(tls, hangup, self.config.tls_poll, metrics.clone())));
        let solver = proto::solver_server::SolverServer::new(SolverService::new(state))
            .max_decoding_message_size(self.config.max_message_bytes);
        let operations = crate::google::longrunning::operations_server::OperationsServer::new(
            crate::jobs::operations::OperationsService::new(self.jobs.clone()),
        );
        let reflection_v1 = tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .build_v1()?;
        let reflection_v1alpha = tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
            .build_v1alpha()?;
        let (health_reporter, health) = tonic_health::server::health_reporter();
        health_reporter.set_serving::<proto::solver_server::SolverServer<SolverService>>().await;
        health_reporter.set_service_status("", tonic_health::ServingStatus::Serving).await;
        tokio::spawn(report_job_store_health(self.jobs.clone(), health_reporter.clone()));

        tracing::info!(address = %self.listener.local_addr()?, tls = self.tls.is_some(), data_dir = %self.config.data_dir.display(), "serving");
        let stopping = Arc::new(tokio::sync::Notify::new());
        let signalled = stopping.clone();
        let config = &self.config;
        let accept = AcceptConfig {
            listener: "grpc",
            max_connections: config.max_connections,
            handshake_bytes: transport::HTTP2_PREFACE_BYTES,
            handshake_timeout: Some(config.handshake_timeout),
            idle_timeout: config.idle_timeout,
            tcp_keepalive: Some(config.keepalive_interval),
            tls: self.tls.clone(),
            protocol: Protocol::Http2,
            at_cap: AtCap::Wait,
        };
        let stream_window = config.stream_window_bytes.clamp(1, MAX_STREAM_WINDOW_BYTES);
        let serve = tonic::transport::Server::builder()
            .max_concurrent_streams(config.max_concurrent_streams)
            .initial_stream_window_size(stream_window)
            .initial_connection_window_size(connection_window_bytes(stream_window))
            .http2_keepalive_interval(Some(config.keepalive_interval))
            .http2_keepalive_timeout(Some(config.keepalive_timeout))
            .layer(CallLayer::new(metrics.clone()))
            .add_service(solver)
            .add_service(operations)
            .add_service(reflection_v1)
            .add_service(reflection_v1alpha)
            .add_service(health)
            .serve_with_incoming_shutdown(transport::incoming(self.listener, accept, metrics), async move {
                shutdown.await;
                // Before the drain: load balancers watching health stop sending calls now.
                health_reporter.set_not_serving::<proto::solver_server::SolverServer<SolverService>>().await;
                health_reporter.set_service_status("", tonic_health::ServingStatus::NotServing).await;
                tracing::info!("shutting down: health NOT_SERVING, finishing in-flight calls");
                signalled.notify_one();
            });
        let grace = self.config.shutdown_grace;
        tokio::select! {
            served = serve => served?,
            _ = async { stopping.notified().await; tokio::time::sleep(grace).await } => {
                tracing::warn!(?grace, "calls still open after the grace period; closing them");
            }
        }
        let jobs = self.jobs.clone();
        let _ = tokio::task::spawn_blocking(move || jobs.shutdown()).await;
        for task in metrics_task.into_iter().chain(tls_task) {
            task.abort();
        }
        suppressed_lines_task.abort();
        // The store is a cache: values it could not write (a full disk) are only not remembered.
        match self.store.sync() {
            Ok(()) => tracing::info!("stopped; store flushed"),
            Err(error) => {
                tracing::warn!(%error, data_dir = %self.config.data_dir.display(), "stopped; some values were not written")
            }
        }
        Ok(())
    }
}

/// Starts the shared tier and says whether Redis answers now; an unreachable Redis is only a
/// warning (the tier is an optimization: it is used as soon as Redis answers). Blocks up to one
/// call's bound: not on the async runtime.
fn start_shared_tier(config: SharedCacheConfig) -> SharedCache {
    let tier = SharedCache::start(config);
    if tier.ping() {
        tracing::info!(shared_cache = %tier.target(), "sharing the cache with the fleet");
    } else {
        tracing::warn!(shared_cache = %tier.target(), "the shared cache does not answer yet; serving from this replica's own tiers until it does");
    }
    tier
}

/// Completes on SIGINT or SIGTERM. The signals are caught from the call on (it must run inside
/// the runtime), so that a signal sent as soon as the server reports it listens stops it gracefully.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let interrupt = signal(SignalKind::interrupt());
        let terminate = signal(SignalKind::terminate());
        async move {
            match (interrupt, terminate) {
                (Ok(mut interrupt), Ok(mut terminate)) => {
                    tokio::select! {
                        _ = interrupt.recv() => {}
                        _ = terminate.recv() => {}
                    }
                }
                _ => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// The health of `google.longrunning.Operations`: SERVING while the job store can write,
/// NOT_SERVING while it waits for space (Solve keeps serving; `""` stays SERVING). Follows the
/// runner's changes (at least once a second) until the runner's sender is gone.
async fn report_job_store_health(
    jobs: Arc<crate::jobs::runner::Runner>,
    reporter: tonic_health::server::HealthReporter,
) {
    const OPERATIONS: &str = "google.longrunning.Operations";
    let mut changes = jobs.changes();
    let mut reported = None;
    loop {
        let writable = jobs.counts().store.writable;
        if reported != Some(writable) {
            let status =
                if writable { tonic_health::ServingStatus::Serving } else { tonic_health::ServingStatus::NotServing };
            reporter.set_service_status(OPERATIONS, status).await;
            reported = Some(writable);
        }
        if changes.changed().await.is_err() {
            return;
        }
    }
}
