//! The accept loop and the connection wrapper under the gRPC server and the metrics endpoint:
//! a cap on open connections (at the cap the loop stops accepting until one closes), a back-off on
//! accept errors (EMFILE and the like) instead of a busy loop, `TCP_NODELAY` and TCP keepalive on
//! every socket, and connections closed when they send no complete HTTP/2 preface in time or stay
//! idle (no call open) too long. With TLS ([`crate::tls`]) the handshakes run concurrently with
//! the accept loop; the handshake timeout covers the TLS handshake and the HTTP/2 preface after it.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::task::AtomicWaker;
use futures_util::{Stream, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;
use tokio_rustls::server::TlsStream;

use crate::metrics::Metrics;
use crate::tls::{Protocol, ServerTls};

/// The client connection preface of HTTP/2 is 24 bytes (RFC 9113, section 3.4).
pub const HTTP2_PREFACE_BYTES: u64 = 24;

/// The first pause after an accept error; it doubles on each further error up to
/// [`MAX_ACCEPT_BACKOFF`] and resets on the next accepted connection.
const FIRST_ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// The longest pause after repeated accept errors.
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// How connections are accepted and when they are closed.
#[derive(Clone, Debug)]
pub struct AcceptConfig {
    /// The listener's name in metrics (`grpc`, `metrics`).
    pub listener: &'static str,
    /// Most connections open at once.
    pub max_connections: usize,
    /// Close a connection that has not sent this many bytes (the HTTP/2 preface) within
    /// `handshake_timeout`.
    pub handshake_bytes: u64,
    /// See `handshake_bytes`; `None`: never.
    pub handshake_timeout: Option<Duration>,
    /// Close a connection that has had no call open for this long; `None`: never.
    pub idle_timeout: Option<Duration>,
    /// TCP keepalive: the idle time before the first probe; `None`: off.
    pub tcp_keepalive: Option<Duration>,
    /// Serve TLS with these certificates; `None`: plaintext.
    pub tls: Option<Arc<ServerTls>>,
    /// The protocol announced by ALPN under TLS.
    pub protocol: Protocol,
}

/// Accepts connections from `listener` within `config`'s limits, forever (until dropped).
pub fn incoming(
    listener: TcpListener,
    config: AcceptConfig,
    metrics: Arc<Metrics>,
) -> impl Stream<Item = io::Result<Connection>> + Send + 'static {
    let concurrent_handshakes = config.max_connections.max(1);
    let slots = Arc::new(Semaphore::new(concurrent_handshakes));
    let state = (listener, slots, config.clone(), metrics);
    let accepted = futures_util::stream::unfold(state, |(listener, slots, config, metrics)| async move {
        let accepted = accept(&listener, &slots, &config, &metrics).await;
        Some((accepted, (listener, slots, config, metrics)))
    });
    accepted
        .map(move |accepted| secure(accepted, config.clone()))
        .buffer_unordered(concurrent_handshakes)
        .filter_map(std::future::ready)
        .map(Ok)
}

/// A TCP connection accepted, holding its slot, before any TLS handshake.
struct Accepted {
    stream: TcpStream,
    remote: SocketAddr,
    slot: Slot,
    handshake_deadline: Option<Instant>,
}

/// Waits for a free connection slot, then for a connection; backs off on errors.
async fn accept(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
    config: &AcceptConfig,
    metrics: &Arc<Metrics>,
) -> Accepted {
    let permit = slots.clone().acquire_owned().await.expect("the connection semaphore is never closed");
    let mut backoff = FIRST_ACCEPT_BACKOFF;
    loop {
        match listener.accept().await {
            Ok((stream, remote)) => {
                configure_socket(&stream, config.tcp_keepalive);
                metrics.connection_opened(config.listener);
                return Accepted {
                    stream,
                    remote,
                    slot: Slot { _permit: permit, listener: config.listener, metrics: metrics.clone() },
                    handshake_deadline: config.handshake_timeout.map(|timeout| Instant::now() + timeout),
                };
            }
            // The peer gave up before we accepted: nothing is wrong with the listener.
            Err(error) if matches!(error.kind(), io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset) => {
            }
            Err(error) => {
                metrics.accept_error();
                tracing::warn!(%error, pause = ?backoff, "cannot accept a connection; pausing");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_ACCEPT_BACKOFF);
            }
        }
    }
}

/// Runs the TLS handshake if the listener serves TLS (within the handshake deadline); `None` when
/// it fails, which closes the connection.
async fn secure(accepted: Accepted, config: AcceptConfig) -> Option<Connection> {
    let Accepted { stream, remote, slot, handshake_deadline } = accepted;
    let stream = match &config.tls {
        None => Bytes::Plain(stream),
        Some(tls) => {
            let handshake = tls.acceptor(config.protocol).accept(stream);
            let outcome = match handshake_deadline {
                Some(deadline) => tokio::time::timeout_at(deadline.into(), handshake).await,
                None => Ok(handshake.await),
            };
            match outcome {
                Ok(Ok(stream)) => Bytes::Tls(Box::new(stream)),
                Ok(Err(error)) => {
                    slot.metrics.tls_handshake_failed(config.listener);
                    tracing::debug!(%remote, %error, "TLS handshake failed");
                    return None;
                }
                Err(_) => {
                    slot.metrics.connection_timed_out("handshake");
                    tracing::debug!(%remote, "closing a connection: TLS handshake timeout");
                    return None;
                }
            }
        }
    };
    Some(Connection::new(stream, remote, slot, handshake_deadline, &config))
}

/// `TCP_NODELAY` (small gRPC frames must not wait for the peer's delayed ACK) and TCP keepalive
/// (dead peers are found even when HTTP/2 pings are not answered by the kernel).
fn configure_socket(stream: &TcpStream, keepalive: Option<Duration>) {
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, "cannot set TCP_NODELAY");
    }
    if let Some(idle) = keepalive {
        let params = socket2::TcpKeepalive::new().with_time(idle).with_interval(idle);
        if let Err(error) = socket2::SockRef::from(stream).set_tcp_keepalive(&params) {
            tracing::debug!(%error, "cannot set TCP keepalive");
        }
    }
}

/// What the calls on one connection tell the connection: how many are open and since when none is.
#[derive(Debug)]
pub struct ConnectionActivity {
    open_calls: AtomicUsize,
    idle_since_millis: AtomicU64,
    epoch: Instant,
    waker: AtomicWaker,
}

impl ConnectionActivity {
    fn new() -> Self {
        Self {
            open_calls: AtomicUsize::new(0),
            idle_since_millis: AtomicU64::new(0),
            epoch: Instant::now(),
            waker: AtomicWaker::new(),
        }
    }

    /// Marks a call open until the returned guard is dropped.
    pub fn call_started(self: &Arc<Self>) -> OpenCall {
        self.open_calls.fetch_add(1, Ordering::AcqRel);
        OpenCall(self.clone())
    }

    /// When the connection became idle, if no call is open.
    fn idle_since(&self) -> Option<Instant> {
        (self.open_calls.load(Ordering::Acquire) == 0)
            .then(|| self.epoch + Duration::from_millis(self.idle_since_millis.load(Ordering::Acquire)))
    }
}

/// A call open on a connection; dropping it ends the call.
#[derive(Debug)]
pub struct OpenCall(Arc<ConnectionActivity>);

impl Drop for OpenCall {
    fn drop(&mut self) {
        let activity = &self.0;
        activity.idle_since_millis.store(activity.epoch.elapsed().as_millis() as u64, Ordering::Release);
        if activity.open_calls.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The connection may be waiting for bytes with no idle timer set: let it set one.
            activity.waker.wake();
        }
    }
}

/// What a request learns about its connection (a request extension, set by tonic).
#[derive(Clone, Debug)]
pub struct ConnectionInfo {
    /// The peer's address.
    pub remote: SocketAddr,
    /// The connection's open calls.
    pub activity: Arc<ConnectionActivity>,
}

/// One of the open connections a listener allows; counted in the metrics until dropped.
struct Slot {
    _permit: OwnedSemaphorePermit,
    listener: &'static str,
    metrics: Arc<Metrics>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.metrics.connection_closed(self.listener);
    }
}

/// The bytes of a connection: plaintext, or TLS over TCP.
enum Bytes {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// An accepted connection: holds its slot until closed, and closes itself when the handshake or
/// the idle timeout passes (its reads fail with `TimedOut`, which ends the HTTP connection).
pub struct Connection {
    stream: Bytes,
    info: ConnectionInfo,
    /// Bytes read after TLS (if any): the HTTP/2 preface is counted in plaintext.
    bytes_read: u64,
    handshake_bytes: u64,
    handshake_deadline: Option<Pin<Box<Sleep>>>,
    idle_timeout: Option<Duration>,
    idle_timer: Option<Pin<Box<Sleep>>>,
    slot: Slot,
}

impl Connection {
    fn new(
        stream: Bytes,
        remote: SocketAddr,
        slot: Slot,
        handshake_deadline: Option<Instant>,
        config: &AcceptConfig,
    ) -> Self {
        Self {
            stream,
            info: ConnectionInfo { remote, activity: Arc::new(ConnectionActivity::new()) },
            bytes_read: 0,
            handshake_bytes: config.handshake_bytes,
            handshake_deadline: handshake_deadline.map(|deadline| Box::pin(tokio::time::sleep_until(deadline.into()))),
            idle_timeout: config.idle_timeout,
            idle_timer: None,
            slot,
        }
    }

    /// With no bytes to read: whether a timeout has passed (registering the timers' wakers if not).
    fn timed_out(&mut self, cx: &mut Context<'_>) -> Option<&'static str> {
        if self.bytes_read < self.handshake_bytes {
            if let Some(deadline) = self.handshake_deadline.as_mut() {
                if deadline.as_mut().poll(cx).is_ready() {
                    return Some("handshake");
                }
            }
        }
        let idle_timeout = self.idle_timeout?;
        self.info.activity.waker.register(cx.waker());
        let idle_since = self.info.activity.idle_since()?;
        let deadline = idle_since + idle_timeout;
        let timer = self.idle_timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline.into())));
        if timer.deadline() != deadline.into() {
            timer.as_mut().reset(deadline.into());
        }
        timer.as_mut().poll(cx).is_ready().then_some("idle")
    }
}

impl AsyncRead for Connection {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(result) => {
                this.bytes_read += (buf.filled().len() - before) as u64;
                Poll::Ready(result)
            }
            Poll::Pending => match this.timed_out(cx) {
                Some(reason) => {
                    this.slot.metrics.connection_timed_out(reason);
                    tracing::debug!(remote = %this.info.remote, reason, "closing a connection: timeout");
                    Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, format!("{reason} timeout"))))
                }
                None => Poll::Pending,
            },
        }
    }
}

impl AsyncWrite for Connection {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

impl AsyncRead for Bytes {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Bytes::Plain(stream) => Pin::new(stream).poll_read(cx, buf),
            Bytes::Tls(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Bytes {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Bytes::Plain(stream) => Pin::new(stream).poll_write(cx, buf),
            Bytes::Tls(stream) => Pin::new(stream.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Bytes::Plain(stream) => Pin::new(stream).poll_write_vectored(cx, bufs),
            Bytes::Tls(stream) => Pin::new(stream.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Bytes::Plain(stream) => stream.is_write_vectored(),
            Bytes::Tls(stream) => stream.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Bytes::Plain(stream) => Pin::new(stream).poll_flush(cx),
            Bytes::Tls(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Bytes::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
            Bytes::Tls(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
        }
    }
}

impl tonic::transport::server::Connected for Connection {
    type ConnectInfo = ConnectionInfo;

    fn connect_info(&self) -> ConnectionInfo {
        self.info.clone()
    }
}
