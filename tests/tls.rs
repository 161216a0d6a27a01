//! TLS and mutual TLS through the real server, with certificates generated here (rcgen): TLS
//! clients succeed, plaintext and unauthorised clients are refused cleanly, grpcurl speaks mutual
//! TLS, certificates rotate (SIGHUP or a file change) for new connections only, the metrics
//! endpoint serves HTTPS, bad files stop the server with one line, `nimber health`'s exit codes, and
//! refused clients are counted and logged by reason.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::TestServer;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};
use tonic_health::pb::{health_check_response::ServingStatus, health_client::HealthClient, HealthCheckRequest};

/// A certificate authority made for one test.
struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl Ca {
    fn new(name: &str) -> Self {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let pem = params.self_signed(&key).unwrap().pem();
        Self { issuer: Issuer::new(params, key), pem }
    }

    /// A certificate for `localhost` and 127.0.0.1 (server or client), and its key, in PEM.
    fn issue(&self) -> (String, String) {
        self.issue_with(|_| {})
    }

    /// A certificate as [`Ca::issue`] makes, changed by `change` before it is signed.
    fn issue_with(&self, change: impl FnOnce(&mut CertificateParams)) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
        change(&mut params);
        (params.signed_by(&key, &self.issuer).unwrap().pem(), key.serialize_pem())
    }
}

/// Certificate files in a temporary directory.
struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new() -> Self {
        Self { dir: tempfile::tempdir().unwrap() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `name` whole at once (a rename), as certificate managers do.
    fn write(&self, name: &str, contents: &str) -> String {
        let staged = self.path(&format!(".{name}.new"));
        std::fs::write(&staged, contents).unwrap();
        std::fs::rename(&staged, self.path(name)).unwrap();
        self.path(name).display().to_string()
    }
}

/// A channel over TLS trusting `ca_pem`, with a client certificate when given.
async fn tls_channel(
    server: &TestServer,
    ca_pem: &str,
    identity: Option<&(String, String)>,
) -> Result<Channel, tonic::transport::Error> {
    let mut tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca_pem)).domain_name("localhost");
    if let Some((cert, key)) = identity {
        tls = tls.identity(Identity::from_pem(cert, key));
    }
    Endpoint::from_shared(format!("https://{}", server.address()))?
        .tls_config(tls)?
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(10))
        .connect()
        .await
}

/// The server's health through `channel`.
async fn health(channel: Channel) -> Result<ServingStatus, tonic::Status> {
    let response = HealthClient::new(channel).check(HealthCheckRequest { service: String::new() }).await?;
    Ok(response.into_inner().status())
}

/// Connects over TLS and asks for health; any failure (handshake or call) is an error.
async fn tls_health(
    server: &TestServer,
    ca_pem: &str,
    identity: Option<&(String, String)>,
) -> Result<ServingStatus, String> {
    let channel = tls_channel(server, ca_pem, identity).await.map_err(|error| format!("{error:?}"))?;
    health(channel).await.map_err(|status| format!("{status:?}"))
}

/// A server with TLS from `files` (server.pem, server.key) and extra flags.
fn start_tls(files: &Files, flags: &[&str]) -> TestServer {
    let cert = files.path("server.pem").display().to_string();
    let key = files.path("server.key").display().to_string();
    let mut all = vec!["--tls-cert", cert.as_str(), "--tls-key", key.as_str()];
    all.extend_from_slice(flags);
    TestServer::builder().flags(&all).start()
}

fn write_server_identity(files: &Files, ca: &Ca) {
    let (cert, key) = ca.issue();
    files.write("server.pem", &cert);
    files.write("server.key", &key);
}

// Two threads: the client's connection tasks answer the server's graceful shutdown while the
// test thread waits for the server to stop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_clients_succeed_and_plaintext_clients_get_a_clean_error() {
    let (ca, files) = (Ca::new("nimber test CA"), Files::new());
    write_server_identity(&files, &ca);
    let server = start_tls(&files, &["--metrics-listen", "127.0.0.1:0"]);
    assert_eq!(tls_health(&server, &ca.pem, None).await, Ok(ServingStatus::Serving));
    let mut solver =
        nimber::proto::solver_client::SolverClient::new(tls_channel(&server, &ca.pem, None).await.unwrap());
    let position = nimber::proto::Position {
        game: Some(nimber::proto::position::Game::Cutting(nimber::proto::Cutting {
            pieces: vec![nimber::proto::Piece { width: 2, height: 3 }],
        })),
    };
    solver.solve(common::solve_request(position)).await.expect("a solve over TLS");

    let plaintext = Endpoint::from_shared(server.url.clone()).unwrap().timeout(Duration::from_secs(10));
    let started = Instant::now();
    let refused = match plaintext.connect().await {
        Ok(channel) => health(channel).await.map_err(|status| format!("{status:?}")),
        Err(error) => Err(format!("{error:?}")),
    };
    assert!(refused.is_err(), "a plaintext client got {refused:?}");
    assert!(started.elapsed() < Duration::from_secs(9), "the plaintext client waited for its timeout");
    // The metrics endpoint stays plaintext on its own address and counts the refused handshake.
    let url = server.metrics_url.clone().unwrap();
    let counted = || {
        let scraped = common::scrape(&url);
        let prefix = "nimber_tls_handshake_failures_total{listener=\"grpc\",reason=\"protocol\"} ";
        let count = scraped.lines().find_map(|line| line.strip_prefix(prefix)?.parse::<f64>().ok());
        count.is_some_and(|count| count >= 1.0)
    };
    common::wait_until(Duration::from_secs(10), "the refused handshake to be counted", async || counted()).await;
}

// Two threads: the client's connection tasks answer the server's graceful shutdown while the
// test thread waits for the server to stop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_refuses_clients_without_a_certificate_or_from_another_ca() {
    let (ca, other_ca, files) = (Ca::new("nimber test CA"), Ca::new("another CA"), Files::new());
    write_server_identity(&files, &ca);
    let client_ca = files.write("clients.pem", &ca.pem);
    let server = start_tls(&files, &["--tls-client-ca", &client_ca]);
    let client = ca.issue();
    assert_eq!(tls_health(&server, &ca.pem, Some(&client)).await, Ok(ServingStatus::Serving));
    let without = tls_health(&server, &ca.pem, None).await;
    assert!(without.is_err(), "a client without a certificate got {without:?}");
    let stranger = other_ca.issue();
    let foreign = tls_health(&server, &ca.pem, Some(&stranger)).await;
    assert!(foreign.is_err(), "a client with another CA's certificate got {foreign:?}");
}

/// The files a client of a mutual-TLS server uses: the CA to trust, its certificate and key.
struct MutualTlsClient {
    ca: String,
    cert: String,
    key: String,
}

/// A server requiring client certificates of a fresh CA (which also signed the server's), and a
/// client identity it accepts, all written into `files`.
fn start_mutual_tls(files: &Files) -> (TestServer, MutualTlsClient) {
    let ca = Ca::new("nimber test CA");
    write_server_identity(files, &ca);
    let client_ca = files.write("clients.pem", &ca.pem);
    let (cert, key) = ca.issue();
    let (cert, key) = (files.write("client.pem", &cert), files.write("client.key", &key));
    let server = start_tls(files, &["--tls-client-ca", &client_ca]);
    (server, MutualTlsClient { ca: client_ca, cert, key })
}

#[test]
fn grpcurl_speaks_mutual_tls() {
    let files = Files::new();
    let (server, MutualTlsClient { ca: client_ca, cert, key }) = start_mutual_tls(&files);
    let script = format!(
        "source scripts/lib.sh && use_tools && grpcurl -cacert {client_ca} -cert {cert} -key {key} \
         -servername localhost {} grpc.health.v1.Health/Check",
        server.address()
    );
    let output =
        Command::new("bash").args(["-c", &script]).current_dir(env!("CARGO_MANIFEST_DIR")).output().expect("bash runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "grpcurl failed: {}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("SERVING"), "{stdout}");
}

/// Rotates the server's certificate to one from a new CA (file change, then SIGHUP when asked)
/// and checks that new connections get it while a connection opened before keeps working.
async fn rotation(flags: &[&str], send_hangup: bool) {
    let (old_ca, new_ca, files) = (Ca::new("old CA"), Ca::new("new CA"), Files::new());
    write_server_identity(&files, &old_ca);
    let server = start_tls(&files, flags);
    let before = tls_channel(&server, &old_ca.pem, None).await.unwrap();
    assert_eq!(health(before.clone()).await.unwrap(), ServingStatus::Serving);
    assert!(tls_health(&server, &new_ca.pem, None).await.is_err(), "the new CA is not in use yet");

    write_server_identity(&files, &new_ca);
    if send_hangup {
        assert!(Command::new("kill").args(["-HUP", &server.pid().to_string()]).status().unwrap().success());
    }
    common::wait_until(Duration::from_secs(20), "new connections to get the new certificate", async || {
        tls_health(&server, &new_ca.pem, None).await.is_ok()
    })
    .await;
    assert!(tls_health(&server, &old_ca.pem, None).await.is_err(), "new connections still get the old certificate");
    assert_eq!(health(before).await.unwrap(), ServingStatus::Serving, "the connection opened before rotation");
}

// Two threads: the client's connection tasks answer the server's graceful shutdown while the
// test thread waits for the server to stop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_reload_on_sighup_for_new_connections_only() {
    rotation(&["--tls-poll-ms", "0"], true).await;
}

// Two threads: the client's connection tasks answer the server's graceful shutdown while the
// test thread waits for the server to stop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_reload_when_the_files_change() {
    rotation(&["--tls-poll-ms", "100"], false).await;
}

/// `GET /metrics` over HTTPS, trusting `ca_pem`.
async fn scrape_https(url: &str, ca_pem: &str) -> String {
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::{pem::PemObject, CertificateDer, ServerName};
    let address = url.strip_prefix("https://").unwrap().strip_suffix("/metrics").unwrap();
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(certificate.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let socket = tokio::net::TcpStream::connect(address).await.unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let mut stream = connector.connect(ServerName::try_from("localhost").unwrap(), socket).await.unwrap();
    stream.write_all(b"GET /metrics HTTP/1.1\r\nHost: nimber\r\nConnection: close\r\n\r\n").await.unwrap();
    let mut response = Vec::new();
    // The server may close without a TLS close_notify; what was read is the whole response.
    let _ = stream.read_to_end(&mut response).await;
    String::from_utf8_lossy(&response).into_owned()
}

// Two threads: the client's connection tasks answer the server's graceful shutdown while the
// test thread waits for the server to stop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_endpoint_serves_https_with_the_same_certificates() {
    let (ca, files) = (Ca::new("nimber test CA"), Files::new());
    write_server_identity(&files, &ca);
    let server = start_tls(&files, &["--metrics-listen", "127.0.0.1:0", "--metrics-tls"]);
    let url = server.metrics_url.clone().unwrap();
    assert!(url.starts_with("https://"), "{url}");
    let response = scrape_https(&url, &ca.pem).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("nimber_connections_open"), "{response}");
}

/// Runs `nimber serve` with `flags` and returns its exit success and stderr.
fn serve_fails(flags: &[&str]) -> (bool, String) {
    let data = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_nimber"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data.path().join("data"))
        .arg("--jobs-dir")
        .arg(data.path().join("jobs"))
        .args(flags)
        .env("RUST_LOG", "error")
        .output()
        .unwrap();
    (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn bad_tls_files_stop_the_server_with_one_line_naming_the_file() {
    let (ca, other_ca, files) = (Ca::new("nimber test CA"), Ca::new("another CA"), Files::new());
    let (cert, key) = ca.issue();
    let (cert, key) = (files.write("server.pem", &cert), files.write("server.key", &key));
    let other_key = files.write("other.key", &other_ca.issue().1);
    let not_pem = files.write("ca.txt", "this is not a certificate\n");
    let missing = files.path("missing.pem").display().to_string();
    let cases: [(&[&str], &str); 4] = [
        (&["--tls-cert", &missing, "--tls-key", &key], &missing),
        (&["--tls-cert", &cert, "--tls-key", &not_pem], &not_pem),
        (&["--tls-cert", &cert, "--tls-key", &other_key], &other_key),
        (&["--tls-cert", &cert, "--tls-key", &key, "--tls-client-ca", &not_pem], &not_pem),
    ];
    for (flags, named) in cases {
        let (success, stderr) = serve_fails(flags);
        assert!(!success, "the server started with {flags:?}");
        let lines: Vec<&str> = stderr.lines().filter(|line| !line.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "not one line for {flags:?}: {stderr}");
        assert!(lines[0].contains(named), "{flags:?}: {:?} does not name {named}", lines[0]);
    }
}

/// Runs `nimber health` with `args` and returns its exit code.
fn health_command(args: &[&str]) -> Option<i32> {
    let output = Command::new(env!("CARGO_BIN_EXE_nimber")).arg("health").args(args).output().unwrap();
    output.status.code()
}

#[test]
fn the_health_command_exits_0_only_when_serving() {
    let files = Files::new();
    let (server, MutualTlsClient { ca: client_ca, cert, key }) = start_mutual_tls(&files);
    let addr = server.address();
    let tls = ["--tls-ca", &client_ca, "--tls-cert", &cert, "--tls-key", &key, "--tls-server-name", "localhost"];
    let with = |extra: &[&str]| -> Vec<String> {
        ["--addr", addr, "--timeout-ms", "5000"].iter().chain(extra).map(|arg| arg.to_string()).collect()
    };
    let run = |args: Vec<String>| health_command(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(run(with(&tls)), Some(0));
    assert_eq!(run(with(&[&tls[..], &["--service", "nimber.v1.Solver"]].concat())), Some(0));
    assert_eq!(run(with(&[&tls[..], &["--service", "no.such.Service"]].concat())), Some(1));
    assert_eq!(run(with(&tls[..2])), Some(1), "no client certificate under mutual TLS");
    assert_eq!(run(with(&[])), Some(1), "plaintext against TLS");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    assert_eq!(health_command(&["--addr", &closed, "--timeout-ms", "2000"]), Some(1), "nothing listening");
}

/// An X.509 v1 client certificate, its key and its CA (made once with openssl: rcgen only makes v3;
/// see `tests/fixtures/x509-v1/README.md`).
const V1_CA: &str = include_str!("fixtures/x509-v1/ca.pem");
const V1_CERT: &str = include_str!("fixtures/x509-v1/client.pem");
const V1_KEY: &str = include_str!("fixtures/x509-v1/client.key");

/// Presents a client certificate as it is, whatever it is (rustls's own client config refuses to
/// load a certificate it cannot parse, such as a v1 one).
#[derive(Debug)]
struct PresentAsIs(Option<Arc<tokio_rustls::rustls::sign::CertifiedKey>>);

impl tokio_rustls::rustls::client::ResolvesClientCert for PresentAsIs {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[tokio_rustls::rustls::SignatureScheme],
    ) -> Option<Arc<tokio_rustls::rustls::sign::CertifiedKey>> {
        self.0.clone()
    }

    fn has_certs(&self) -> bool {
        self.0.is_some()
    }
}

/// A TLS handshake with the server, trusting `ca_pem`, presenting `identity` (certificate and key
/// PEM) if given, then the HTTP/2 preface: `Ok` when the server answers with its first bytes, the
/// error when it refuses the client.
async fn handshake_as(server: &TestServer, ca_pem: &str, identity: Option<&(String, String)>) -> Result<(), String> {
    use tokio_rustls::rustls;
    use tokio_rustls::rustls::pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer, ServerName};
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(certificate.unwrap()).unwrap();
    }
    let certified = identity.map(|(cert, key)| {
        let chain = CertificateDer::pem_slice_iter(cert.as_bytes()).collect::<Result<Vec<_>, _>>().unwrap();
        let key = provider.key_provider.load_private_key(PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap());
        Arc::new(rustls::sign::CertifiedKey::new(chain, key.unwrap()))
    });
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_client_cert_resolver(Arc::new(PresentAsIs(certified)));
    config.alpn_protocols = vec![b"h2".to_vec()];
    let socket = tokio::net::TcpStream::connect(server.address()).await.unwrap();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let name = ServerName::try_from("localhost").unwrap();
    let mut stream = connector.connect(name, socket).await.map_err(|error| error.to_string())?;
    // Under TLS 1.3 the server checks the client's certificate after the client's handshake ends.
    stream.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await.map_err(|error| error.to_string())?;
    let mut first = [0u8; 1];
    match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut first)).await {
        Ok(Ok(1)) => Ok(()),
        Ok(Ok(_)) => Err("closed".to_string()),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err("no answer in 10 s".to_string()),
    }
}

/// The lines of a log file.
fn log_lines(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log).unwrap_or_default().lines().map(str::to_string).collect()
}

// Two threads: the client's connection tasks answer the server's graceful shutdown while the
// test thread waits for the server to stop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_client_certificates_are_counted_and_logged_by_reason() {
    let (ca, other_ca, files) = (Ca::new("nimber test CA"), Ca::new("another CA"), Files::new());
    write_server_identity(&files, &ca);
    // The v1 certificate's CA is trusted too: it is refused for its version alone.
    let client_ca = files.write("clients.pem", &format!("{}{V1_CA}", ca.pem));
    let (cert, key) = (files.path("server.pem").display().to_string(), files.path("server.key").display().to_string());
    let log = files.path("server.log");
    let flags =
        ["--tls-cert", &cert, "--tls-key", &key, "--tls-client-ca", &client_ca, "--metrics-listen", "127.0.0.1:0"];
    let server = TestServer::builder().flags(&flags).log("warn", &log).start();
    let url = server.metrics_url.clone().unwrap();
    assert_eq!(handshake_as(&server, &ca.pem, Some(&ca.issue())).await, Ok(()), "a good client certificate");

    let expired = ca.issue_with(|params| {
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        params.not_after = rcgen::date_time_ymd(2001, 1, 1);
    });
    let v1 = (V1_CERT.to_string(), V1_KEY.to_string());
    let refused = [
        ("expired", Some(expired)),
        ("unknown_ca", Some(other_ca.issue())),
        ("no_certificate", None),
        ("bad_certificate_version", Some(v1)),
    ];
    for (reason, identity) in refused {
        let outcome = handshake_as(&server, &ca.pem, identity.as_ref()).await;
        assert!(outcome.is_err(), "a client certificate that is {reason} was accepted");
        let counted = format!("nimber_tls_handshake_failures_total{{listener=\"grpc\",reason=\"{reason}\"}}");
        common::wait_until(Duration::from_secs(10), &counted, async || common::scrape(&url).contains(&counted)).await;
        assert_eq!(common::sample(&common::scrape(&url), &counted), 1.0, "{counted}");
        let named = format!("reason=\"{reason}\"");
        let warned =
            |line: &String| line.contains("WARN") && line.contains("refused a TLS client") && line.contains(&named);
        common::wait_until(Duration::from_secs(10), "the WARN line", async || log_lines(&log).iter().any(warned)).await;
        assert_eq!(log_lines(&log).iter().filter(|line| warned(line)).count(), 1, "{:?}", log_lines(&log));
    }

    // A flood of refused clients (plaintext ones) is counted whole but logged within the limit.
    const PLAINTEXT_CLIENTS: usize = 200;
    for _ in 0..PLAINTEXT_CLIENTS {
        let mut socket = tokio::net::TcpStream::connect(server.address()).await.unwrap();
        socket.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").await.unwrap();
        let _ = socket.read(&mut [0u8; 64]).await;
    }
    let counted = "nimber_tls_handshake_failures_total{listener=\"grpc\",reason=\"protocol\"}";
    common::wait_until(Duration::from_secs(10), "every plaintext client counted", async || {
        common::scrape(&url).contains(counted) && common::sample(&common::scrape(&url), counted) == 200.0
    })
    .await;
    let lines = log_lines(&log);
    let protocol_lines =
        lines.iter().filter(|line| line.contains("refused a TLS client") && line.contains("reason=\"protocol\""));
    let protocol_lines = protocol_lines.count();
    assert!(
        (1..PLAINTEXT_CLIENTS / 2).contains(&protocol_lines),
        "{protocol_lines} lines for {PLAINTEXT_CLIENTS} refusals"
    );
}
