//! Everything gRPC, around the games: the server's wiring ([`server`]), the Solver service
//! ([`service`]), the call layer every call passes through ([`calls`]: logging, metrics, status
//! messages), the codec that checks a request's limits on the wire ([`codec`]),
//! errors to statuses ([`status`]), the connections under it ([`transport`], [`tls`]), and the metrics' HTTP endpoint
//! ([`metrics_endpoint`]).

pub mod calls;
pub mod codec;
pub mod metrics_endpoint;
pub mod server;
pub mod service;
pub mod status;
pub mod tls;
pub mod transport;
