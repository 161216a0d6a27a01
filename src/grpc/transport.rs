//! The accept loop and the connection wrapper under the gRPC server and the metrics endpoint:
//! a cap on open connections (at the cap the loop stops accepting until one closes), a back-off on
//! accept errors (EMFILE and the like) instead of a busy loop, `TCP_NODELAY` and TCP keepalive on
//! every socket, and connections closed when they send no complete HTTP/2 preface in time or stay
//! idle (no call open) too long. With TLS ([`crate::grpc::tls`]) the handshakes run concurrently with
//! the accept loop; the handshake timeout covers the TLS handshake and the HTTP/2 preface after it.
//! At the cap a listener either waits for a connection to close, or closes the one that has waited
//! longest without starting a call ([`AtCap`]). On HTTP/2 connections the frames the server writes
//! are followed for a GOAWAY with an error code: the connection is then being closed for the
//! client's conduct (a flood limit, a protocol error), which is logged at WARN and counted.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::task::AtomicWaker;
use futures_util::{Stream, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;
use tokio_rustls::server::TlsStream;

use crate::grpc::tls::{Protocol, ServerTls};
use crate::metrics::Metrics;
use crate::sync::lock;

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
    /// The protocol announced by ALPN under TLS; on HTTP/2 GOAWAY errors are logged and counted.
    pub protocol: Protocol,
    /// What the listener does when all `max_connections` slots are taken.
    pub at_cap: AtCap,
}

/// What a listener does when all its connection slots are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtCap {
    /// Stops accepting until a connection closes (new ones wait in the kernel's backlog).
    Wait,
    /// Closes the connection that has waited longest without starting a call (still in its TLS
    /// handshake or sending its request head), then accepts: a client that holds slots open
    /// without completing a request cannot lock others out. When every connection has started a
    /// call, waits as [`AtCap::Wait`] does.
    DisplaceOldestWaiting,
}

/// Accepts connections from `listener` within `config`'s limits, forever (until dropped).
pub fn incoming(
    listener: TcpListener,
    config: AcceptConfig,
    metrics: Arc<Metrics>,
) -> impl Stream<Item = io::Result<Connection>> + Send + 'static {
    let concurrent_handshakes = config.max_connections.max(1);
    let slots = Slots { free: Arc::new(Semaphore::new(concurrent_handshakes)), waiting: Mutex::default() };
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

/// The connection slots of a listener.
struct Slots {
    free: Arc<Semaphore>,
    /// Under [`AtCap::DisplaceOldestWaiting`]: the open connections in the order they were
    /// accepted (some may have started a call or closed since).
    waiting: Mutex<VecDeque<Weak<ConnectionActivity>>>,
}

impl Slots {
    /// A free slot, waiting for one as `at_cap` says.
    async fn take(&self, at_cap: AtCap, metrics: &Metrics) -> OwnedSemaphorePermit {
        if at_cap == AtCap::DisplaceOldestWaiting {
            match self.free.clone().try_acquire_owned() {
                Ok(permit) => return permit,
                Err(_) => self.displace_oldest_waiting(metrics),
            }
        }
        self.free.clone().acquire_owned().await.expect("the connection semaphore is never closed")
    }

    /// Closes the connection accepted first of those that have not started a call, if any (its
    /// slot is free once it has closed).
    fn displace_oldest_waiting(&self, metrics: &Metrics) {
        let mut waiting = lock(&self.waiting);
        while let Some(entry) = waiting.pop_front() {
            if let Some(activity) = entry.upgrade().filter(|activity| !activity.ever_called.load(Ordering::Acquire)) {
                activity.displaced.store(true, Ordering::Release);
                activity.waker.wake();
                metrics.connection_closed_for("displaced");
                return;
            }
        }
    }

    /// Remembers a connection just accepted, as the newest that may be displaced; forgets those
    /// that closed or started a call (so at most one entry per open connection is kept).
    fn register(&self, activity: &Arc<ConnectionActivity>) {
        let mut waiting = lock(&self.waiting);
        waiting.retain(|entry| entry.upgrade().is_some_and(|activity| !activity.ever_called.load(Ordering::Acquire)));
        waiting.push_back(Arc::downgrade(activity));
    }
}

/// A TCP connection accepted, holding its slot, before any TLS handshake.
struct Accepted {
    stream: TcpStream,
    remote: SocketAddr,
    slot: Slot,
    activity: Arc<ConnectionActivity>,
    handshake_deadline: Option<Instant>,
}

/// Waits for a free connection slot, then for a connection; backs off on errors.
async fn accept(listener: &TcpListener, slots: &Slots, config: &AcceptConfig, metrics: &Arc<Metrics>) -> Accepted {
    let permit = slots.take(config.at_cap, metrics).await;
    let mut backoff = FIRST_ACCEPT_BACKOFF;
    loop {
        match listener.accept().await {
            Ok((stream, remote)) => {
                configure_socket(&stream, config.tcp_keepalive);
                metrics.connection_opened(config.listener);
                let activity = Arc::new(ConnectionActivity::new());
                if config.at_cap == AtCap::DisplaceOldestWaiting {
                    slots.register(&activity);
                }
                return Accepted {
                    stream,
                    remote,
                    slot: Slot { _permit: permit, listener: config.listener, metrics: metrics.clone() },
                    activity,
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
/// it fails or the connection is displaced, which closes the connection.
async fn secure(accepted: Accepted, config: AcceptConfig) -> Option<Connection> {
    let Accepted { stream, remote, slot, activity, handshake_deadline } = accepted;
    let stream = match &config.tls {
        None => PlainOrTls::Plain(stream),
        Some(tls) => {
            let handshake = tls.acceptor(config.protocol).accept(stream);
            let deadline = async {
                match handshake_deadline {
                    Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                outcome = handshake => match outcome {
                    Ok(stream) => PlainOrTls::Tls(Box::new(stream)),
                    Err(error) => {
                        crate::grpc::tls::handshake_failed(&error, remote, config.listener, &slot.metrics);
                        return None;
                    }
                },
                () = deadline => {
                    slot.metrics.connection_timed_out("handshake");
                    tracing::debug!(%remote, "closing a connection: TLS handshake timeout");
                    return None;
                }
                () = activity.displacement() => {
                    tracing::debug!(%remote, "closing a connection in its TLS handshake: its slot is needed");
                    return None;
                }
            }
        }
    };
    Some(Connection::new(stream, remote, slot, activity, handshake_deadline, &config))
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

/// What the calls on one connection tell the connection: how many are open and since when none
/// is, whether one ever started, and whether the listener wants the connection's slot back.
#[derive(Debug)]
pub struct ConnectionActivity {
    open_calls: AtomicUsize,
    idle_since_millis: AtomicU64,
    epoch: Instant,
    ever_called: AtomicBool,
    displaced: AtomicBool,
    waker: AtomicWaker,
}

impl ConnectionActivity {
    fn new() -> Self {
        Self {
            open_calls: AtomicUsize::new(0),
            idle_since_millis: AtomicU64::new(0),
            epoch: Instant::now(),
            ever_called: AtomicBool::new(false),
            displaced: AtomicBool::new(false),
            waker: AtomicWaker::new(),
        }
    }

    /// Marks a call open until the returned guard is dropped. From the first call on, the
    /// connection is never displaced ([`AtCap::DisplaceOldestWaiting`]).
    pub fn call_started(self: &Arc<Self>) -> OpenCall {
        self.ever_called.store(true, Ordering::Release);
        self.open_calls.fetch_add(1, Ordering::AcqRel);
        OpenCall(self.clone())
    }

    /// Completes once the listener has displaced the connection.
    async fn displacement(&self) {
        std::future::poll_fn(|cx| {
            self.waker.register(cx.waker());
            if self.displaced.load(Ordering::Acquire) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await
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
enum PlainOrTls {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

/// An accepted connection: holds its slot until closed, and closes itself when the handshake or
/// the idle timeout passes, or when it is displaced (its reads fail with `TimedOut`, which ends
/// the HTTP connection).
pub struct Connection {
    stream: PlainOrTls,
    info: ConnectionInfo,
    /// Bytes read after TLS (if any): the HTTP/2 preface is counted in plaintext.
    bytes_read: u64,
    handshake_bytes: u64,
    handshake_deadline: Option<Pin<Box<Sleep>>>,
    idle_timeout: Option<Duration>,
    idle_timer: Option<Pin<Box<Sleep>>>,
    /// On HTTP/2 connections: the frames written, followed for a GOAWAY with an error code.
    goaway: Option<GoawayWatch>,
    slot: Slot,
}

impl Connection {
    fn new(
        stream: PlainOrTls,
        remote: SocketAddr,
        slot: Slot,
        activity: Arc<ConnectionActivity>,
        handshake_deadline: Option<Instant>,
        config: &AcceptConfig,
    ) -> Self {
        Self {
            stream,
            info: ConnectionInfo { remote, activity },
            bytes_read: 0,
            handshake_bytes: config.handshake_bytes,
            handshake_deadline: handshake_deadline.map(|deadline| Box::pin(tokio::time::sleep_until(deadline.into()))),
            idle_timeout: config.idle_timeout,
            idle_timer: None,
            goaway: (config.protocol == Protocol::Http2).then(GoawayWatch::default),
            slot,
        }
    }

    /// With no bytes to read: whether the connection is to close, and why: displaced, or a timeout
    /// passed (registering the timers' wakers if not).
    fn timed_out(&mut self, cx: &mut Context<'_>) -> Option<&'static str> {
        self.info.activity.waker.register(cx.waker());
        if self.info.activity.displaced.load(Ordering::Acquire) {
            return Some("displaced");
        }
        if self.bytes_read < self.handshake_bytes {
            if let Some(deadline) = self.handshake_deadline.as_mut() {
                if deadline.as_mut().poll(cx).is_ready() {
                    return Some("handshake");
                }
            }
        }
        let idle_timeout = self.idle_timeout?;
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
                    // A displaced connection is counted when it is chosen.
                    if reason != "displaced" {
                        this.slot.metrics.connection_timed_out(reason);
                    }
                    tracing::debug!(remote = %this.info.remote, reason, "closing a connection");
                    let message = format!("connection closed by the server: {reason}");
                    Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, message)))
                }
                None => Poll::Pending,
            },
        }
    }
}

impl Connection {
    /// Follows `written`, the next bytes of HTTP/2 frames written; reports a GOAWAY with an error
    /// code once.
    fn follow_written(&mut self, written: &[u8]) {
        let Some(goaway) = self.goaway.as_mut().and_then(|watch| watch.follow(written)) else { return };
        let reason = h2::Reason::from(goaway.code);
        let name = format!("{reason:?}").to_ascii_lowercase();
        self.slot.metrics.connection_closed_for(&name);
        if crate::logging::request_line_allowed() {
            let debug_data = String::from_utf8_lossy(&goaway.debug_data);
            tracing::warn!(
                remote = %self.info.remote,
                reason = name,
                description = reason.description(),
                debug_data = %debug_data,
                "closing a connection for the client's conduct (HTTP/2 GOAWAY)"
            );
        }
    }
}

impl AsyncWrite for Connection {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write(cx, buf);
        if let Poll::Ready(Ok(length)) = written {
            self.follow_written(&buf[..length]);
        }
        written
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(length)) = written {
            let mut left = length;
            for slice in bufs {
                let taken = slice.len().min(left);
                self.follow_written(&slice[..taken]);
                left -= taken;
                if left == 0 {
                    break;
                }
            }
        }
        written
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

impl AsyncRead for PlainOrTls {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            PlainOrTls::Plain(stream) => Pin::new(stream).poll_read(cx, buf),
            PlainOrTls::Tls(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for PlainOrTls {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            PlainOrTls::Plain(stream) => Pin::new(stream).poll_write(cx, buf),
            PlainOrTls::Tls(stream) => Pin::new(stream.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            PlainOrTls::Plain(stream) => Pin::new(stream).poll_write_vectored(cx, bufs),
            PlainOrTls::Tls(stream) => Pin::new(stream.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            PlainOrTls::Plain(stream) => stream.is_write_vectored(),
            PlainOrTls::Tls(stream) => stream.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            PlainOrTls::Plain(stream) => Pin::new(stream).poll_flush(cx),
            PlainOrTls::Tls(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            PlainOrTls::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
            PlainOrTls::Tls(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
        }
    }
}

impl tonic::transport::server::Connected for Connection {
    type ConnectInfo = ConnectionInfo;

    fn connect_info(&self) -> ConnectionInfo {
        self.info.clone()
    }
}

/// The HTTP/2 frame type of GOAWAY (RFC 9113, section 6.8).
const GOAWAY_FRAME_TYPE: u8 = 0x7;

/// The length of an HTTP/2 frame header (RFC 9113, section 4.1).
const FRAME_HEADER_BYTES: usize = 9;

/// The most bytes of a GOAWAY's debug data kept for the log line.
const GOAWAY_DEBUG_BYTES: usize = 64;

/// A GOAWAY with an error code, as the server wrote it.
#[derive(Debug, PartialEq, Eq)]
struct Goaway {
    /// The HTTP/2 error code.
    code: u32,
    /// The start of its debug data (h2 names the limit there, e.g. `too_many_data_frames`).
    debug_data: Vec<u8>,
}

/// Follows the HTTP/2 frames a server writes (its side of the connection, which starts with a
/// frame: the preface is the client's) for the first GOAWAY with an error code. hyper and tonic
/// end such a connection with an error that tonic logs at DEBUG and hands to nobody; the frame
/// on the wire is where the server's reason can be seen.
#[derive(Debug, Default)]
struct GoawayWatch {
    /// The header of the frame being written, as far as it is.
    header: [u8; FRAME_HEADER_BYTES],
    header_length: usize,
    /// Payload bytes of the frame being written that are still to come.
    payload_left: usize,
    /// When the frame being written is a GOAWAY: its payload so far (up to the debug bytes kept).
    goaway: Option<Vec<u8>>,
    /// Whether a GOAWAY with an error code was reported (nothing more is followed).
    reported: bool,
}

impl GoawayWatch {
    /// Follows `written`, the next bytes written; returns the GOAWAY with an error code once its
    /// frame has been written whole.
    fn follow(&mut self, mut written: &[u8]) -> Option<Goaway> {
        while !written.is_empty() && !self.reported {
            if self.header_length < FRAME_HEADER_BYTES {
                let taken = (FRAME_HEADER_BYTES - self.header_length).min(written.len());
                self.header[self.header_length..self.header_length + taken].copy_from_slice(&written[..taken]);
                self.header_length += taken;
                written = &written[taken..];
                if self.header_length == FRAME_HEADER_BYTES {
                    let [a, b, c, frame_type, ..] = self.header;
                    self.payload_left = u32::from_be_bytes([0, a, b, c]) as usize;
                    self.goaway = (frame_type == GOAWAY_FRAME_TYPE).then(Vec::new);
                }
            } else {
                let taken = self.payload_left.min(written.len());
                if let Some(payload) = self.goaway.as_mut() {
                    let kept = taken.min((8 + GOAWAY_DEBUG_BYTES).saturating_sub(payload.len()));
                    payload.extend_from_slice(&written[..kept]);
                }
                self.payload_left -= taken;
                written = &written[taken..];
            }
            if self.header_length == FRAME_HEADER_BYTES && self.payload_left == 0 {
                self.header_length = 0;
                // The payload: the last stream id (4 bytes), the error code (4), debug data.
                if let Some(payload) = self.goaway.take().filter(|payload| payload.len() >= 8) {
                    let code = u32::from_be_bytes([payload[4], payload[5], payload[6], payload[7]]);
                    if code != 0 {
                        self.reported = true;
                        return Some(Goaway { code, debug_data: payload[8..].to_vec() });
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{Goaway, GoawayWatch};

    /// An HTTP/2 frame: its header and payload.
    fn frame(frame_type: u8, payload: &[u8]) -> Vec<u8> {
        let length = (payload.len() as u32).to_be_bytes();
        let mut bytes = vec![length[1], length[2], length[3], frame_type, 0, 0, 0, 0, 0];
        bytes.extend_from_slice(payload);
        bytes
    }

    fn goaway(code: u32, debug_data: &[u8]) -> Vec<u8> {
        let mut payload = 1u32.to_be_bytes().to_vec();
        payload.extend_from_slice(&code.to_be_bytes());
        payload.extend_from_slice(debug_data);
        frame(0x7, &payload)
    }

    #[test]
    fn a_goaway_with_an_error_is_found_however_the_writes_split_the_frames() {
        let mut written = frame(0x4, &[0; 12]); // SETTINGS
        written.extend(frame(0x0, &[7; 300])); // DATA
        written.extend(goaway(0, b"")); // a graceful GOAWAY is no error
        written.extend(frame(0x6, &[0; 8])); // PING
        written.extend(goaway(0xb, b"too_many_data_frames"));
        written.extend(frame(0x0, &[7; 10]));
        for chunk in [1, 2, 7, 9, 10, 64, written.len()] {
            let mut watch = GoawayWatch::default();
            let found: Vec<Goaway> = written.chunks(chunk).filter_map(|bytes| watch.follow(bytes)).collect();
            assert_eq!(
                found,
                [Goaway { code: 0xb, debug_data: b"too_many_data_frames".to_vec() }],
                "writes of {chunk}"
            );
        }
    }

    #[test]
    fn a_long_debug_data_is_cut_and_frames_without_errors_report_nothing() {
        let mut watch = GoawayWatch::default();
        assert_eq!(watch.follow(&[frame(0x4, &[]), goaway(0, b"bye")].concat()), None);
        let found = watch.follow(&goaway(0x1, &[b'x'; 1000])).unwrap();
        assert_eq!((found.code, found.debug_data.len()), (0x1, super::GOAWAY_DEBUG_BYTES));
        assert_eq!(watch.follow(&goaway(0x2, b"")), None, "reported once");
    }
}
