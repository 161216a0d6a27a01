//! The tower layer around every gRPC service (Solver, health, reflection): it counts each call once
//! by RPC and final status (a call whose client went away counts as CANCELLED), logs failed calls
//! (rate-limited, by severity), marks the call open on its connection (for the idle timeout),
//! rejects a malformed `grpc-timeout` header, corrects the codes tonic gives to client mistakes it
//! detects itself (see `client_mistake`), and bounds every status message and its details (see
//! [`crate::quote::quoted`], which every message repeating a client's input uses).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};

use http::HeaderMap;
use http_body::Frame;
use tonic::{Code, Status};

use crate::grpc::transport::{ConnectionInfo, OpenCall};
use crate::logging;
use crate::metrics::Metrics;
use crate::quote::quoted;

/// The `rpc` label of each method served, by request path; any other path is `unknown` (paths
/// come from clients, and labels must stay few).
const RPC_LABELS: [(&str, &str); 16] = [
    ("/nimber.v1.Solver/Solve", "Solve"),
    ("/nimber.v1.Solver/BestMove", "BestMove"),
    ("/nimber.v1.Solver/Analyze", "Analyze"),
    ("/nimber.v1.Solver/SolveStream", "SolveStream"),
    ("/nimber.v1.Solver/Explore", "Explore"),
    ("/nimber.v1.Solver/WatchExplore", "WatchExplore"),
    ("/nimber.v1.Solver/ListExploreRows", "ListExploreRows"),
    ("/google.longrunning.Operations/GetOperation", "google.longrunning.Operations/GetOperation"),
    ("/google.longrunning.Operations/ListOperations", "google.longrunning.Operations/ListOperations"),
    ("/google.longrunning.Operations/CancelOperation", "google.longrunning.Operations/CancelOperation"),
    ("/google.longrunning.Operations/DeleteOperation", "google.longrunning.Operations/DeleteOperation"),
    ("/google.longrunning.Operations/WaitOperation", "google.longrunning.Operations/WaitOperation"),
    ("/grpc.health.v1.Health/Check", "grpc.health.v1.Health/Check"),
    ("/grpc.health.v1.Health/Watch", "grpc.health.v1.Health/Watch"),
    (
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        "grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    ),
    (
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    ),
];

/// The `rpc` label of a request path.
fn rpc_label(path: &str) -> &'static str {
    RPC_LABELS.iter().find(|(known, _)| *known == path).map_or("unknown", |(_, label)| label)
}

/// Parses a `grpc-timeout` header value as the gRPC spec (PROTOCOL-HTTP2) defines it: 1 to 8
/// ASCII digits, then a unit: `H`, `M`, `S`, `m` (milliseconds), `u` or `n`.
pub fn parse_grpc_timeout(value: &[u8]) -> Option<Duration> {
    let (&unit, digits) = value.split_last()?;
    if digits.is_empty() || digits.len() > 8 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let amount: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some(match unit {
        b'H' => Duration::from_secs(amount * 3600),
        b'M' => Duration::from_secs(amount * 60),
        b'S' => Duration::from_secs(amount),
        b'm' => Duration::from_millis(amount),
        b'u' => Duration::from_micros(amount),
        b'n' => Duration::from_nanos(amount),
        _ => return None,
    })
}

/// The most bytes of a status message (`grpc-message`) sent; a longer one, from a service that
/// repeats a client's input whole (tonic's own messages, reflection's), is cut to this. Clients
/// refuse a too large header block (8 KiB in grpc-core, 16 KiB in grpc-go and tonic) and then see
/// RESOURCE_EXHAUSTED or INTERNAL instead of the answer.
pub const MAX_STATUS_MESSAGE_BYTES: usize = 1024;

/// The most bytes of a status's details (`grpc-status-details-bin`) sent: details are built from
/// quoted input ([`quoted`]) and stay far below it, so longer ones (a bug) are dropped rather than
/// sent to clients that would refuse the whole answer.
pub const MAX_STATUS_DETAILS_BYTES: usize = 4096;

/// A status message cut to [`MAX_STATUS_MESSAGE_BYTES`], when it is longer.
fn bounded_message(message: &str) -> Option<String> {
    match crate::quote::prefix(message, MAX_STATUS_MESSAGE_BYTES) {
        (_, false) => None,
        (start, true) => Some(format!("{start}… (cut from {} bytes)", message.len())),
    }
}

/// A malformed `grpc-timeout` is refused for every service. grpc-go answers INTERNAL; here
/// INTERNAL means a bug of ours, so the answer is INVALID_ARGUMENT, naming the header.
fn check_grpc_timeout(headers: &HeaderMap) -> Result<(), Status> {
    match headers.get("grpc-timeout") {
        Some(value) if parse_grpc_timeout(value.as_bytes()).is_none() => Err(Status::invalid_argument(format!(
            "the grpc-timeout header {} is malformed: it must be 1 to 8 ASCII digits and a unit (H, M, S, m, u, n)",
            quoted(&String::from_utf8_lossy(value.as_bytes()))
        ))),
        _ => Ok(()),
    }
}

/// The right code for a status tonic produced itself for a client's mistake: a request over
/// `--max-message-bytes` is RESOURCE_EXHAUSTED (as the gRPC spec says; tonic answers OUT_OF_RANGE),
/// and a frame with an invalid compression flag or a body that does not decode is INVALID_ARGUMENT
/// (tonic answers INTERNAL). The bodies of the services generated here are decoded by
/// [`crate::grpc::codec`], which says so itself; tonic-health's decode with prost's codec, whose error
/// this recognizes.
fn client_mistake(status: &Status) -> Option<Code> {
    let message = status.message();
    match status.code() {
        Code::OutOfRange if message.contains("decoded message length too large") => Some(Code::ResourceExhausted),
        Code::Internal
            if message.starts_with("protocol error: received message with invalid compression flag")
                || message.starts_with(PROST_DECODE_ERROR) =>
        {
            Some(Code::InvalidArgument)
        }
        _ => None,
    }
}

/// How the message of `tonic_prost::ProstCodec`'s status for a body that does not decode starts
/// (prost's `DecodeError` as text). Only requests are decoded on a server.
const PROST_DECODE_ERROR: &str = "failed to decode Protobuf message: ";

/// The status in `headers` (response headers of a trailers-only answer, or trailers), with a
/// client mistake's code corrected and an over-long message cut, in place.
fn final_status(headers: &mut HeaderMap) -> Option<Status> {
    if headers.get("grpc-status-details-bin").is_some_and(|details| details.len() > MAX_STATUS_DETAILS_BYTES) {
        headers.remove("grpc-status-details-bin");
    }
    let status = Status::from_header_map(headers)?;
    let code = client_mistake(&status);
    let message = bounded_message(status.message());
    if code.is_none() && message.is_none() {
        return Some(status);
    }
    let corrected = Status::new(code.unwrap_or(status.code()), message.as_deref().unwrap_or(status.message()));
    // Fails only for a message that cannot be a header, which the original already was.
    let _ = corrected.add_header(headers);
    Some(corrected)
}

/// Wraps every service in [`CallService`].
#[derive(Clone)]
pub struct CallLayer {
    metrics: Arc<Metrics>,
}

impl CallLayer {
    /// A layer counting calls in `metrics`.
    pub fn new(metrics: Arc<Metrics>) -> Self {
        Self { metrics }
    }
}

impl<S> tower::Layer<S> for CallLayer {
    type Service = CallService<S>;

    fn layer(&self, inner: S) -> CallService<S> {
        CallService { inner, metrics: self.metrics.clone() }
    }
}

/// See the module documentation.
#[derive(Clone)]
pub struct CallService<S> {
    inner: S,
    metrics: Arc<Metrics>,
}

/// One call being answered: recorded (metrics and log) exactly once, when dropped.
struct CallRecord {
    rpc: &'static str,
    started: Instant,
    status: Option<Status>,
    metrics: Arc<Metrics>,
    _open: Option<OpenCall>,
}

impl Drop for CallRecord {
    fn drop(&mut self) {
        let (code, message) = match &self.status {
            Some(status) => (status.code(), status.message()),
            None => (Code::Cancelled, "the client went away before the answer was complete"),
        };
        self.metrics.record_call(self.rpc, code, self.started.elapsed());
        if code != Code::Ok {
            logging::failed(self.rpc, "request failed", code, message);
        }
    }
}

impl<S, B> tower::Service<http::Request<B>> for CallService<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<tonic::body::Body>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = http::Response<CallBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let rpc = rpc_label(request.uri().path());
        self.metrics.call_started(rpc);
        let mut record = CallRecord {
            rpc,
            started: Instant::now(),
            status: None,
            metrics: self.metrics.clone(),
            _open: request.extensions().get::<ConnectionInfo>().map(|info| info.activity.call_started()),
        };
        if let Err(status) = check_grpc_timeout(request.headers()) {
            let response = status.clone().into_http::<tonic::body::Body>();
            record.status = Some(status);
            return Box::pin(std::future::ready(Ok(response.map(|body| CallBody::new(body, record)))));
        }
        let answer = self.inner.call(request);
        Box::pin(async move {
            let mut response = match answer.await {
                Ok(response) => response,
                Err(error) => {
                    record.status.replace(Status::unknown("the service failed before answering"));
                    return Err(error);
                }
            };
            record.status = final_status(response.headers_mut());
            Ok(response.map(|body| CallBody::new(body, record)))
        })
    }
}

/// A response body that finds the call's final status in its trailers and records the call when
/// it ends or is dropped.
pub struct CallBody {
    inner: tonic::body::Body,
    record: Option<CallRecord>,
}

impl CallBody {
    fn new(inner: tonic::body::Body, record: CallRecord) -> Self {
        Self { inner, record: Some(record) }
    }
}

impl http_body::Body for CallBody {
    type Data = <tonic::body::Body as http_body::Body>::Data;
    type Error = <tonic::body::Body as http_body::Body>::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        let mut frame = ready!(Pin::new(&mut this.inner).poll_frame(cx));
        match frame.as_mut() {
            Some(Ok(frame)) => {
                if let Some(trailers) = frame.trailers_mut() {
                    if let Some(mut record) = this.record.take() {
                        record.status = final_status(trailers).or(record.status.take());
                    }
                }
            }
            Some(Err(error)) => {
                if let Some(mut record) = this.record.take() {
                    record.status = Some(Status::unknown(format!("the answer failed: {error}")));
                }
            }
            // A trailers-only answer ends here with the status of its headers.
            None => {
                if let Some(mut record) = this.record.take() {
                    record.status = record.status.take().or_else(|| Some(Status::unknown("the answer had no status")));
                }
            }
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn grpc_timeouts_parse_as_the_spec_says() {
        assert_eq!(parse_grpc_timeout(b"200m"), Some(Duration::from_millis(200)));
        assert_eq!(parse_grpc_timeout(b"3S"), Some(Duration::from_secs(3)));
        assert_eq!(parse_grpc_timeout(b"1H"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_grpc_timeout(b"99999999n"), Some(Duration::from_nanos(99_999_999)));
        assert_eq!(parse_grpc_timeout(b"123456789S"), None);
        assert_eq!(parse_grpc_timeout(b"+5m"), None);
        assert_eq!(parse_grpc_timeout(b" 5m"), None);
        assert_eq!(parse_grpc_timeout(b"m"), None);
        assert_eq!(parse_grpc_timeout(b""), None);
        assert_eq!(parse_grpc_timeout(b"5x"), None);
    }

    #[test]
    fn oversized_requests_are_resource_exhausted() {
        let mut headers = HeaderMap::new();
        Status::out_of_range("Error, decoded message length too large: found 9 bytes, the limit is: 4 bytes")
            .add_header(&mut headers)
            .unwrap();
        assert_eq!(final_status(&mut headers).unwrap().code(), Code::ResourceExhausted);
        assert_eq!(Status::from_header_map(&headers).unwrap().code(), Code::ResourceExhausted);
        let mut other = HeaderMap::new();
        Status::out_of_range("page past the end").add_header(&mut other).unwrap();
        assert_eq!(final_status(&mut other).unwrap().code(), Code::OutOfRange);
    }

    #[test]
    fn long_messages_are_cut_and_prost_decode_errors_are_the_clients() {
        let mut headers = HeaderMap::new();
        Status::not_found(format!("no symbol {}", "x".repeat(100_000))).add_header(&mut headers).unwrap();
        let status = final_status(&mut headers).unwrap();
        assert_eq!(status.code(), Code::NotFound);
        assert!(status.message().len() < MAX_STATUS_MESSAGE_BYTES + 32, "{}", status.message().len());
        assert!(status.message().ends_with("… (cut from 100010 bytes)"), "{}", status.message());
        assert_eq!(Status::from_header_map(&headers).unwrap().message(), status.message());
        let mut headers = HeaderMap::new();
        let undecodable = prost_types::Duration::decode(&[0x0f][..]).unwrap_err();
        Status::internal(undecodable.to_string()).add_header(&mut headers).unwrap();
        assert_eq!(final_status(&mut headers).unwrap().code(), Code::InvalidArgument);
        let mut ours = HeaderMap::new();
        Status::internal("the job call failed").add_header(&mut ours).unwrap();
        assert_eq!(final_status(&mut ours).unwrap().code(), Code::Internal);
    }

    #[test]
    fn every_method_served_has_its_own_label() {
        let files = prost_types::FileDescriptorSet::decode(crate::proto::FILE_DESCRIPTOR_SET).unwrap();
        let mut paths = Vec::new();
        for file in &files.file {
            for service in &file.service {
                for method in &service.method {
                    paths.push(format!("/{}.{}/{}", file.package(), service.name(), method.name()));
                }
            }
        }
        assert!(paths.len() >= 12, "{paths:?}");
        for path in paths {
            assert_ne!(rpc_label(&path), "unknown", "{path} has no label");
        }
    }

    #[test]
    fn unknown_paths_share_one_label() {
        assert_eq!(rpc_label("/nimber.v1.Solver/Solve"), "Solve");
        assert_eq!(rpc_label("/grpc.health.v1.Health/Check"), "grpc.health.v1.Health/Check");
        assert_eq!(rpc_label("/x.Y/Z"), "unknown");
    }
}
