//! The HTTP endpoint of the metrics: `GET /metrics` (and `HEAD`) on `--metrics-listen`, served
//! by hyper (HTTP/1.1) behind the same bounded accept loop as the gRPC port.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use tokio::net::TcpListener;

use super::tls::{Protocol, ServerTls};
use super::transport::{self, AcceptConfig, AtCap};
use crate::metrics::Metrics;

/// Most connections open at once. At the cap, the one that has waited longest without sending a
/// whole request head is closed to make room (slow clients cannot hold the slots idle); when all
/// are being answered, new ones wait in the kernel's backlog.
const MAX_METRICS_CONNECTIONS: usize = 16;

/// A scrape connection that sends no complete request head within this is closed.
const METRICS_HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// No scrape connection stays open longer than this.
const METRICS_CONNECTION_LIFETIME: Duration = Duration::from_secs(30);

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
