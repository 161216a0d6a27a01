//! `nimber health`: asks a server's `grpc.health.v1.Health/Check` (over TLS or mutual TLS when
//! given the files) and succeeds only when it answers SERVING, within a bounded time. It is what
//! container health checks and operators run; it needs no grpcurl.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

/// Where and how `nimber health` asks.
#[derive(clap::Args)]
pub struct HealthArgs {
    /// The server (host:port).
    #[arg(long, env = "NIMBER_HEALTH_ADDR", default_value = "127.0.0.1:50051")]
    addr: String,
    /// The service to ask about (e.g. nimber.v1.Solver; empty: the whole server).
    #[arg(long, env = "NIMBER_HEALTH_SERVICE", default_value = "")]
    service: String,
    /// Connect with TLS, trusting the CA certificates in this PEM file.
    #[arg(long, env = "NIMBER_HEALTH_TLS_CA")]
    tls_ca: Option<PathBuf>,
    /// The client certificate (PEM) for mutual TLS (needs --tls-key and --tls-ca).
    #[arg(long, env = "NIMBER_HEALTH_TLS_CERT", requires_all = ["tls_key", "tls_ca"])]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, env = "NIMBER_HEALTH_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// The name the server's certificate must carry (default: the host of --addr).
    #[arg(long, env = "NIMBER_HEALTH_TLS_SERVER_NAME", requires = "tls_ca")]
    tls_server_name: Option<String>,
    /// Give up (and fail) after this many milliseconds.
    #[arg(long, env = "NIMBER_HEALTH_TIMEOUT_MS", default_value_t = 5_000)]
    timeout_ms: u64,
}

/// `nimber health`: prints the status; an error (exit status 1) unless it is SERVING.
pub fn health(args: HealthArgs) -> anyhow::Result<()> {
    let timeout = Duration::from_millis(args.timeout_ms.max(1));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let status = runtime
        .block_on(async { tokio::time::timeout(timeout, check(&args, timeout)).await })
        .map_err(|_| anyhow::anyhow!("{} did not answer within {} ms", args.addr, timeout.as_millis()))??;
    println!("{}", status.as_str_name());
    anyhow::ensure!(
        status == ServingStatus::Serving,
        "{} reports {} for service {:?}",
        args.addr,
        status.as_str_name(),
        args.service
    );
    Ok(())
}

fn read(path: &Path, what: &str) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read the {what} {}", path.display()))
}

async fn check(args: &HealthArgs, timeout: Duration) -> anyhow::Result<ServingStatus> {
    let scheme = if args.tls_ca.is_some() { "https" } else { "http" };
    let mut endpoint = Endpoint::from_shared(format!("{scheme}://{}", args.addr))
        .with_context(|| format!("--addr {:?} is not host:port", args.addr))?
        .connect_timeout(timeout)
        .timeout(timeout);
    if let Some(ca) = &args.tls_ca {
        let mut tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(read(ca, "CA (--tls-ca)")?));
        if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
            tls = tls
                .identity(Identity::from_pem(read(cert, "certificate (--tls-cert)")?, read(key, "key (--tls-key)")?));
        }
        if let Some(name) = &args.tls_server_name {
            tls = tls.domain_name(name);
        }
        endpoint = endpoint.tls_config(tls)?;
    }
    let channel = endpoint.connect().await.with_context(|| format!("cannot connect to {}", args.addr))?;
    let response = HealthClient::new(channel)
        .check(HealthCheckRequest { service: args.service.clone() })
        .await
        .map_err(|status| anyhow::anyhow!("{} answered {:?}: {}", args.addr, status.code(), status.message()))?;
    Ok(response.into_inner().status())
}
