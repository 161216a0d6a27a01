//! TLS and mutual TLS for the gRPC port and the metrics endpoint (rustls, ring): the certificate,
//! key and optional client CA are read from PEM files, and read again on SIGHUP or when a file
//! changes. A reload swaps the configuration used by new connections only; open connections keep
//! theirs, and a reload that fails keeps the previous certificates. A refused client is counted by
//! reason and named in a WARN line (rate-limited); client certificates must be X.509 v3, as
//! webpki accepts no other version.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{CertificateError, RootCertStore, ServerConfig};
use tokio_rustls::TlsAcceptor;

use crate::metrics::Metrics;
use crate::sync::{lock, read, write};

/// The PEM files of the server's TLS identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// When set, clients must present a certificate signed by one of these CAs (mutual TLS).
    pub client_ca: Option<PathBuf>,
}

/// The application protocol a listener speaks, announced by ALPN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// gRPC: `h2`.
    Http2,
    /// The metrics endpoint: `http/1.1`.
    Http1,
}

/// The server configurations built from one reading of the files.
#[derive(Debug)]
struct Configs {
    http2: Arc<ServerConfig>,
    http1: Arc<ServerConfig>,
}

/// When each file was last modified, and its size: a change means a reload.
type Stamps = Vec<Option<(SystemTime, u64)>>;

/// The current TLS configuration, swappable at run time.
#[derive(Debug)]
pub struct ServerTls {
    files: TlsFiles,
    configs: RwLock<Arc<Configs>>,
    stamps: Mutex<Stamps>,
}

impl ServerTls {
    /// Reads the files; the error names the file that is missing, unreadable or wrong.
    pub fn load(files: TlsFiles) -> anyhow::Result<Self> {
        let stamps = stamps(&files);
        let configs = read_configs(&files)?;
        Ok(Self { files, configs: RwLock::new(Arc::new(configs)), stamps: Mutex::new(stamps) })
    }

    /// Whether clients must present a certificate.
    pub fn requires_client_certificates(&self) -> bool {
        self.files.client_ca.is_some()
    }

    /// An acceptor with the current certificates, for one new connection.
    pub fn acceptor(&self, protocol: Protocol) -> TlsAcceptor {
        let configs = read(&self.configs).clone();
        TlsAcceptor::from(match protocol {
            Protocol::Http2 => configs.http2.clone(),
            Protocol::Http1 => configs.http1.clone(),
        })
    }

    /// Reads the files again (blocking file I/O); on an error the previous certificates stay.
    pub fn reload(&self) -> anyhow::Result<()> {
        *lock(&self.stamps) = stamps(&self.files);
        let configs = read_configs(&self.files)?;
        *write(&self.configs) = Arc::new(configs);
        Ok(())
    }

    /// Whether a file changed (modification time or size) since the last reading (blocking).
    fn files_changed(&self) -> bool {
        *lock(&self.stamps) != stamps(&self.files)
    }
}

fn stamps(files: &TlsFiles) -> Stamps {
    [Some(&files.cert), Some(&files.key), files.client_ca.as_ref()]
        .into_iter()
        .flatten()
        .map(|path| std::fs::metadata(path).ok().and_then(|meta| Some((meta.modified().ok()?, meta.len()))))
        .collect()
}

fn read_file(path: &Path, what: &str) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read the {what} {}", path.display()))
}

fn read_certificates(path: &Path, what: &str) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let pem = read_file(path, what)?;
    let certificates = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("the {what} {} is not valid PEM", path.display()))?;
    anyhow::ensure!(!certificates.is_empty(), "the {what} {} holds no PEM certificate", path.display());
    Ok(certificates)
}

fn read_configs(files: &TlsFiles) -> anyhow::Result<Configs> {
    let chain = read_certificates(&files.cert, "TLS certificate (--tls-cert)")?;
    let key_pem = read_file(&files.key, "TLS key (--tls-key)")?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .with_context(|| format!("the TLS key (--tls-key) {} holds no PEM private key", files.key.display()))?;
    let provider = Arc::new(ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone()).with_safe_default_protocol_versions()?;
    let builder = match &files.client_ca {
        Some(path) => {
            let what = "client CA (--tls-client-ca)";
            let mut roots = RootCertStore::empty();
            for certificate in read_certificates(path, what)? {
                roots
                    .add(certificate)
                    .with_context(|| format!("the {what} {} is not a CA certificate", path.display()))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .with_context(|| format!("the {what} {} cannot verify clients", path.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut http2 = builder.with_single_cert(chain, key).with_context(|| {
        format!("the TLS certificate {} and key {} do not form a valid pair", files.cert.display(), files.key.display())
    })?;
    let mut http1 = http2.clone();
    http2.alpn_protocols = vec![b"h2".to_vec()];
    http1.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Configs { http2: Arc::new(http2), http1: Arc::new(http1) })
}

/// Why a TLS handshake failed, as the `reason` label of `nimber_tls_handshake_failures_total`:
/// `no_certificate`, `expired`, `not_yet_valid`, `unknown_ca` (signed by no CA of
/// `--tls-client-ca`), `bad_certificate_version` (an X.509 v1 or v2 certificate, e.g. made by
/// `openssl x509 -req` without `-extfile`), `bad_certificate` (any other fault of the certificate),
/// `protocol` (not TLS, no common version, cipher or ALPN protocol, or an alert from the client),
/// `closed` (the client closed or reset the connection) or `other`.
pub fn refusal_reason(error: &io::Error) -> &'static str {
    use tokio_rustls::rustls::Error;
    let Some(refusal) = error.get_ref().and_then(|inner| inner.downcast_ref::<Error>()) else {
        return match error.kind() {
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => "closed",
            _ => "other",
        };
    };
    match refusal {
        Error::NoCertificatesPresented => "no_certificate",
        Error::InvalidCertificate(CertificateError::Expired | CertificateError::ExpiredContext { .. }) => "expired",
        Error::InvalidCertificate(CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. }) => {
            "not_yet_valid"
        }
        Error::InvalidCertificate(CertificateError::UnknownIssuer) => "unknown_ca",
        Error::InvalidCertificate(CertificateError::Other(other))
            if other.0.downcast_ref::<webpki::Error>() == Some(&webpki::Error::UnsupportedCertVersion) =>
        {
            "bad_certificate_version"
        }
        Error::InvalidCertificate(_) => "bad_certificate",
        Error::InappropriateMessage { .. }
        | Error::InappropriateHandshakeMessage { .. }
        | Error::InvalidMessage(_)
        | Error::PeerIncompatible(_)
        | Error::PeerMisbehaved(_)
        | Error::AlertReceived(_)
        | Error::NoApplicationProtocol => "protocol",
        _ => "other",
    }
}

/// Counts a failed handshake of a client at `remote` on `listener` by its reason, and says why:
/// at WARN when the client was refused (rate-limited with the per-request lines), at DEBUG when
/// it only went away.
pub fn handshake_failed(error: &io::Error, remote: SocketAddr, listener: &'static str, metrics: &Metrics) {
    let reason = refusal_reason(error);
    metrics.tls_handshake_failed(listener, reason);
    if reason == "closed" {
        tracing::debug!(%remote, listener, %error, "the client closed the connection during the TLS handshake");
    } else if crate::logging::request_line_allowed() {
        tracing::warn!(%remote, listener, reason, %error, "refused a TLS client");
    }
}

/// SIGHUP, caught from now on (instead of ending the process) for [`watch`]; `None` when it
/// cannot be caught (then certificates reload only when files change).
#[cfg(unix)]
pub fn catch_hangup() -> Option<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        .map_err(|error| tracing::warn!(%error, "cannot catch SIGHUP; certificates reload only when files change"))
        .ok()
}

/// The hang-up signal [`watch`] reloads on.
#[cfg(unix)]
pub type Hangup = Option<tokio::signal::unix::Signal>;
/// The hang-up signal [`watch`] reloads on (none outside Unix).
#[cfg(not(unix))]
pub type Hangup = Option<()>;

/// Reloads `tls` on SIGHUP (`hangup`, from [`catch_hangup`]), and when a file changes (checked
/// every `poll`; `None`: only on SIGHUP), until dropped. File reads run on the blocking pool.
pub async fn watch(tls: Arc<ServerTls>, mut hangup: Hangup, poll: Option<Duration>, metrics: Arc<Metrics>) {
    let mut ticks = poll.map(|every| {
        let mut interval = tokio::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        interval
    });
    loop {
        #[cfg(unix)]
        let hangup_received = async {
            match hangup.as_mut() {
                Some(signal) => signal.recv().await,
                None => std::future::pending().await,
            }
        };
        #[cfg(not(unix))]
        let hangup_received = {
            let _ = &mut hangup;
            std::future::pending::<Option<()>>()
        };
        let tick = async {
            match ticks.as_mut() {
                Some(interval) => interval.tick().await,
                None => std::future::pending().await,
            }
        };
        let forced = tokio::select! {
            _ = hangup_received => true,
            _ = tick => false,
        };
        let watched = tls.clone();
        let outcome = tokio::task::spawn_blocking(move || {
            (forced || watched.files_changed()).then(|| watched.reload().map_err(|error| format!("{error:#}")))
        })
        .await;
        match outcome {
            Ok(Some(Ok(()))) => {
                metrics.tls_reloaded(true);
                tracing::info!(trigger = if forced { "SIGHUP" } else { "file change" }, "TLS certificates reloaded");
            }
            Ok(Some(Err(error))) => {
                metrics.tls_reloaded(false);
                tracing::warn!(%error, "cannot reload the TLS certificates; keeping the previous ones");
            }
            Ok(None) => {}
            Err(error) => tracing::error!(%error, "the TLS reload task failed"),
        }
    }
}
