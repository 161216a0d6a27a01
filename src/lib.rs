//! nimber: a gRPC service that solves impartial combinatorial games by Sprague–Grundy theory.
//!
//! Data flows one way: [`grpc::service`] decodes a request and [`wire`] converts it into a [`games::Position`]
//! (valid by construction), the engine in [`games`] computes values and moves (expensive ones
//! memoized in the [`cache`]), and the answer is converted back to protobuf.

pub mod cache;
pub mod disk;
pub mod games;
pub mod grpc;
pub mod invalid_argument;
pub mod jobs;
pub mod limits;
pub mod logging;
pub mod metrics;
pub mod page;
pub mod quote;
pub mod random;
pub(crate) mod sync;
/// Test support shared by tests, benchmarks and the load generator (not part of the service).
#[doc(hidden)]
pub mod testing;
pub mod thread_cpu;
pub mod wire;

/// The generated protobuf messages and tonic service of `nimber.v1`.
pub mod proto {
    #![allow(missing_docs, clippy::all)]
    tonic::include_proto!("nimber.v1");

    /// The encoded file descriptor set, served by gRPC reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("nimber_descriptor");
}

/// The generated messages and services of the standard Google packages `nimber.v1` uses.
pub mod google {
    /// `google.longrunning`: the Operations service and the Operation message (AIP-151).
    pub mod longrunning {
        #![allow(missing_docs, clippy::all)]
        tonic::include_proto!("google.longrunning");
    }
    /// `google.rpc`: the Status message.
    pub mod rpc {
        #![allow(missing_docs, clippy::all)]
        tonic::include_proto!("google.rpc");
    }
}
