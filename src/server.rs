//! Wiring: the listener, the `nimber.v1.Solver` service, gRPC reflection (v1 and v1alpha), health,
//! and graceful shutdown (stop accepting, finish in-flight calls, flush the store).

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;

use crate::cache::{OnCorrupt, Store, StoreOptions};
use crate::metrics::{self, Metrics};
use crate::proto;
use crate::service::{EngineConfig, SolverService};

/// Everything the server is configured with.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Where the sled store lives.
    pub data_dir: PathBuf,
    /// The server-side maximum time of one solve.
    pub max_solve_time: Duration,
    /// The most entries of the in-memory tables (the store's, and a game's within one solve).
    pub table_limit: usize,
    /// The largest request message accepted, in bytes.
    pub max_message_bytes: usize,
    /// How long in-flight calls may take to finish after a shutdown signal before the server
    /// closes their connections anyway.
    pub shutdown_grace: Duration,
    /// How many expensive (search) solves run at once; more wait up to their deadline.
    pub max_expensive_solves: usize,
    /// Where to serve Prometheus metrics (`GET /metrics`), if anywhere.
    pub metrics_listen: Option<SocketAddr>,
    /// The store's size bound in bytes (`None`: 2 GiB or a quarter of its filesystem, if smaller).
    pub max_store_bytes: Option<u64>,
    /// What to do when the store on disk is unreadable.
    pub on_corrupt_store: OnCorrupt,
}

/// The defaults documented in the README: `./nimber-data`, 60 s, 16 Mi entries, 16 MiB, 10 s,
/// one expensive solve per core, no metrics endpoint.
impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from("nimber-data"),
            max_solve_time: Duration::from_secs(60),
            table_limit: crate::games::DEFAULT_TABLE_LIMIT,
            max_message_bytes: 16 * 1024 * 1024,
            shutdown_grace: Duration::from_secs(10),
            max_expensive_solves: std::thread::available_parallelism().map_or(2, |cores| cores.get()),
            metrics_listen: None,
            max_store_bytes: None,
            on_corrupt_store: OnCorrupt::Rebuild,
        }
    }
}

/// Opens the store and binds `listen`; the server is then ready to [`Server::run`].
pub struct Server {
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    store: Arc<Store>,
    config: ServerConfig,
}

impl Server {
    /// Opens the store in `config.data_dir` and binds `listen` (port 0 picks a free port).
    pub async fn bind(listen: SocketAddr, config: ServerConfig) -> anyhow::Result<Self> {
        let options = StoreOptions {
            hot_limit: config.table_limit,
            max_bytes: config.max_store_bytes,
            on_corrupt: config.on_corrupt_store,
        };
        let data_dir = config.data_dir.clone();
        // Opening reads the disk (and may count an old store once): not on the async runtime.
        let store = Arc::new(tokio::task::spawn_blocking(move || Store::open_with(&data_dir, &options)).await??);
        let listener =
            TcpListener::bind(listen).await.map_err(|error| anyhow::anyhow!("cannot listen on {listen}: {error}"))?;
        let metrics_listener = match config.metrics_listen {
            Some(address) => Some(metrics::bind(address).await?),
            None => None,
        };
        Ok(Self { listener, metrics_listener, store, config })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The address of the metrics endpoint, if it is served.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_listener.as_ref().and_then(|listener| listener.local_addr().ok())
    }

    /// Serves until `shutdown` completes, then finishes in-flight calls and flushes the store.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) -> anyhow::Result<()> {
        let metrics = Arc::new(Metrics::default());
        let engine = EngineConfig {
            store: self.store.clone(),
            max_solve_time: self.config.max_solve_time,
            table_limit: self.config.table_limit,
            expensive_slots: Arc::new(tokio::sync::Semaphore::new(self.config.max_expensive_solves)),
            metrics: metrics.clone(),
        };
        let metrics_task = self
            .metrics_listener
            .map(|listener| tokio::spawn(metrics::serve_metrics(listener, metrics, self.store.clone())));
        let solver = proto::solver_server::SolverServer::new(SolverService::new(engine))
            .max_decoding_message_size(self.config.max_message_bytes);
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

        tracing::info!(address = %self.listener.local_addr()?, data_dir = %self.config.data_dir.display(), "serving");
        let stopping = Arc::new(tokio::sync::Notify::new());
        let signalled = stopping.clone();
        let serve = tonic::transport::Server::builder()
            .add_service(solver)
            .add_service(reflection_v1)
            .add_service(reflection_v1alpha)
            .add_service(health)
            .serve_with_incoming_shutdown(TcpListenerStream::new(self.listener), async move {
                shutdown.await;
                tracing::info!("shutting down: finishing in-flight calls");
                signalled.notify_one();
            });
        let grace = self.config.shutdown_grace;
        tokio::select! {
            served = serve => served?,
            _ = async { stopping.notified().await; tokio::time::sleep(grace).await } => {
                tracing::warn!(?grace, "calls still open after the grace period; closing them");
            }
        }
        if let Some(task) = metrics_task {
            task.abort();
        }
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

/// Completes on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(_) => {
                let _ = interrupt.await;
                return;
            }
        };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
