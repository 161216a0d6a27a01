//! The transport through the real server: TCP_NODELAY, the connection cap, handshake and idle
//! timeouts, the HTTP/2 stream cap, the message size limit's code, `grpc-timeout` validation, the
//! metrics endpoint, counting every call, health during a drain, bounded logs, the memory limit.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{assert_idle, cheap_position, full_board, sample, scrape, solve_request, wait_until, TestServer};
use hyper::body::Bytes;
use nimber::proto::{self, position::Game as P};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tonic::Code;
use tonic_health::pb::{health_check_response::ServingStatus, health_client::HealthClient, HealthCheckRequest};

/// An HTTP/2 connection (the h2 crate, no gRPC library) and the task driving it, which ends when
/// the connection closes.
async fn raw_connection(server: &TestServer) -> (h2::client::SendRequest<Bytes>, tokio::task::JoinHandle<()>) {
    let socket = TcpStream::connect(server.address()).await.unwrap();
    let (send, connection) = h2::client::handshake(socket).await.expect("the HTTP/2 handshake");
    (send, tokio::spawn(async move { connection.await.ok().unwrap_or_default() }))
}

/// Starts a gRPC call of `path` with one message and extra headers; returns the response and its
/// body.
async fn raw_call(
    send: &h2::client::SendRequest<Bytes>,
    path: &str,
    headers: &[(&str, &str)],
    message: &[u8],
) -> (http::response::Parts, h2::RecvStream) {
    let mut request = http::Request::builder()
        .method("POST")
        .uri(format!("http://nimber{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut send = send.clone().ready().await.unwrap();
    let (response, mut body) = send.send_request(request.body(()).unwrap(), false).unwrap();
    let mut framed = vec![0u8];
    framed.extend_from_slice(&(message.len() as u32).to_be_bytes());
    framed.extend_from_slice(message);
    // The server may answer from the headers alone (a malformed grpc-timeout) and close the stream
    // before the message is sent: then sending fails, and the answer is what counts.
    let _ = body.send_data(Bytes::from(framed), true);
    response.await.unwrap_or_else(|error| panic!("no response to {path}: {error:?}")).into_parts()
}

/// A unary gRPC call over `send`: its final status (from the trailers, or from the headers of a
/// trailers-only answer).
async fn raw_unary(
    send: &h2::client::SendRequest<Bytes>,
    path: &str,
    headers: &[(&str, &str)],
    message: &[u8],
) -> tonic::Status {
    let (parts, mut body) = raw_call(send, path, headers, message).await;
    if let Some(status) = tonic::Status::from_header_map(&parts.headers) {
        return status;
    }
    while let Some(chunk) = body.data().await {
        let chunk = chunk.unwrap();
        let _ = body.flow_control().release_capacity(chunk.len());
    }
    let trailers = body.trailers().await.unwrap().expect("trailers");
    tonic::Status::from_header_map(&trailers).expect("a grpc-status")
}

/// A 5×6 board, different for each `n` below 4096, solved by a short search.
fn small_board(n: u64) -> proto::Position {
    let mut rows = vec!["000000".to_string(); 5];
    rows[1] = format!("{:06b}", n % 64);
    rows[3] = format!("{:06b}", n / 64 % 64);
    proto::Position { game: Some(P::Tetris(proto::Tetris { rows })) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_answers_written_apart_are_not_held_back_by_nagle() {
    const CALLS: u64 = 200;
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    client.solve(solve_request(cheap_position())).await.unwrap(); // the connection is up
    let mut stalled = 0;
    for n in 0..CALLS {
        // The cheap answer is written at once, the board's a little later: with Nagle's algorithm
        // the second write waits for the ACK of the first, which the client delays (40 ms on Linux).
        let items = [solve_request(cheap_position()), solve_request(small_board(n))];
        let started = Instant::now();
        let mut responses = client.solve_stream(tokio_stream::iter(items)).await.unwrap().into_inner();
        while let Some(response) = responses.message().await.unwrap() {
            assert!(response.grundy.is_some());
        }
        if started.elapsed() >= Duration::from_millis(35) {
            stalled += 1;
        }
    }
    // Measured without TCP_NODELAY: about a fifth of the calls stall; with it: none.
    assert!(stalled <= CALLS / 20, "{stalled} of {CALLS} calls took a delayed-ACK stall (35 ms or more)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_cap_a_new_connection_waits_for_a_free_slot_while_the_server_idles() {
    let flags = ["--max-connections", "2", "--handshake-timeout-ms", "60000", "--metrics-listen", "127.0.0.1:0"];
    let server = TestServer::builder().flags(&flags).start();
    let metrics_url = server.metrics_url.clone().unwrap();
    let first = TcpStream::connect(server.address()).await.unwrap();
    let _second = TcpStream::connect(server.address()).await.unwrap();
    let open = "nimber_connections_open{listener=\"grpc\"} 2\n";
    wait_until(Duration::from_secs(10), "two open connections", async || scrape(&metrics_url).contains(open)).await;

    let url = server.url.clone();
    let mut health = tokio::spawn(async move {
        let channel = tonic::transport::Channel::from_shared(url).unwrap().connect().await.unwrap();
        HealthClient::new(channel).check(HealthCheckRequest { service: String::new() }).await
    });
    assert!(
        tokio::time::timeout(Duration::from_millis(500), &mut health).await.is_err(),
        "a third connection was served at a cap of two"
    );
    assert_idle(server.pid());
    drop(first);
    let answer = tokio::time::timeout(Duration::from_secs(10), health).await.expect("served once a slot is free");
    assert_eq!(answer.unwrap().unwrap().into_inner().status(), ServingStatus::Serving);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_file_descriptors_the_accept_loop_pauses_instead_of_spinning() {
    let server = TestServer::builder().flags(&["--max-connections", "1000", "--metrics-listen", "127.0.0.1:0"]).start();
    let metrics_url = server.metrics_url.clone().unwrap();
    let open_files = std::fs::read_dir(format!("/proc/{}/fd", server.pid())).unwrap().count();
    let limit = format!("--nofile={0}:{0}", open_files + 8);
    let limited = Command::new("prlimit").args(["--pid", &server.pid().to_string(), &limit]).status();
    assert!(limited.is_ok_and(|status| status.success()), "prlimit lowers the server's open-file limit");
    let mut sockets = Vec::new();
    for _ in 0..32 {
        sockets.push(TcpStream::connect(server.address()).await.unwrap());
    }
    // Some connections wait in the backlog: every accept fails with EMFILE until sockets close.
    assert_idle(server.pid());
    drop(sockets);
    let errors = "nimber_accept_errors_total";
    wait_until(Duration::from_secs(10), "accept errors counted", async || sample(&scrape(&metrics_url), errors) > 0.0)
        .await;
    let mut health = HealthClient::new(server.channel().await);
    let answer = health.check(HealthCheckRequest { service: String::new() }).await.unwrap();
    assert_eq!(answer.into_inner().status(), ServingStatus::Serving);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_sends_half_a_preface_is_closed_at_the_handshake_timeout() {
    let server = TestServer::builder().flags(&["--handshake-timeout-ms", "300"]).start();
    let mut socket = TcpStream::connect(server.address()).await.unwrap();
    socket.write_all(&b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"[..12]).await.unwrap();
    let mut buffer = [0u8; 256];
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        // The server may send its SETTINGS first; the connection ends with EOF or a reset.
        while let Ok(read) = socket.read(&mut buffer).await {
            if read == 0 {
                break;
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "a half preface kept the connection open for 5 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_is_closed_when_idle_but_not_while_a_call_is_open() {
    let server = TestServer::builder().flags(&["--idle-timeout-ms", "300", "--handshake-timeout-ms", "60000"]).start();
    let (_send, connection) = raw_connection(&server).await;
    tokio::time::timeout(Duration::from_secs(5), connection).await.expect("an idle connection is closed").unwrap();

    // A Health/Watch stream is a call open for as long as the client keeps it.
    let (send, connection) = raw_connection(&server).await;
    let (parts, mut watch) = raw_call(&send, "/grpc.health.v1.Health/Watch", &[], &[]).await;
    assert_eq!(parts.status, 200);
    assert!(watch.data().await.expect("the first status").is_ok());
    // The clock: a connection opened after the call's last traffic, left idle. Once the server has
    // closed it, the connection with the open call has been quiet for longer than the idle timeout.
    let (_idle_send, idle) = raw_connection(&server).await;
    tokio::time::timeout(Duration::from_secs(5), idle).await.expect("the idle connection is closed").unwrap();
    let check = HealthCheckRequest { service: String::new() }.encode_to_vec();
    let status = raw_unary(&send, "/grpc.health.v1.Health/Check", &[], &check).await;
    assert_eq!(status.code(), Code::Ok, "a connection with an open call was closed as idle: {status:?}");
    assert!(!connection.is_finished(), "a connection with an open call was closed as idle");
    drop(watch);
    tokio::time::timeout(Duration::from_secs(5), connection).await.expect("closed once its last call ended").unwrap();
    drop(send);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_cap_is_advertised_in_the_http2_settings() {
    let server = TestServer::builder().flags(&["--max-concurrent-streams", "7"]).start();
    let socket = TcpStream::connect(server.address()).await.unwrap();
    let (send, connection) = h2::client::handshake(socket).await.unwrap();
    let mut connection = std::pin::pin!(connection);
    let request = HealthCheckRequest { service: String::new() }.encode_to_vec();
    let call = raw_unary(&send, "/grpc.health.v1.Health/Check", &[], &request);
    tokio::select! {
        status = call => assert_eq!(status.code(), Code::Ok),
        _ = &mut connection => panic!("the connection ended"),
    }
    // The server's SETTINGS arrive before any answer.
    assert_eq!(connection.max_concurrent_send_streams(), 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_the_size_limit_is_resource_exhausted() {
    let server = TestServer::builder().flags(&["--max-message-bytes", "1024"]).start();
    let mut client = server.client().await;
    let pieces = vec![proto::Piece { width: 1 << 40, height: 1 << 40 }; 200];
    let big = proto::Position { game: Some(P::Cutting(proto::Cutting { pieces })) };
    let status = client.solve(solve_request(big.clone())).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");

    // In a stream the status comes in the trailers, after the items before it.
    let items = [solve_request(cheap_position()), solve_request(big)];
    let mut responses = client.solve_stream(tokio_stream::iter(items)).await.unwrap().into_inner();
    assert!(responses.message().await.unwrap().unwrap().grundy.is_some());
    let status = responses.message().await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_grpc_timeout_is_invalid_argument_for_every_service() {
    let server = TestServer::builder().start();
    let (send, _connection) = raw_connection(&server).await;
    let solve = solve_request(cheap_position()).encode_to_vec();
    let check = HealthCheckRequest { service: String::new() }.encode_to_vec();
    for (path, message) in [("/nimber.v1.Solver/Solve", &solve), ("/grpc.health.v1.Health/Check", &check)] {
        for malformed in ["+5m", "5", "123456789S", "5x", "1.5S"] {
            let status = raw_unary(&send, path, &[("grpc-timeout", malformed)], message).await;
            assert_eq!(status.code(), Code::InvalidArgument, "{path} {malformed}: {status:?}");
            assert!(status.message().contains("grpc-timeout"), "{status:?}");
        }
        assert_eq!(raw_unary(&send, path, &[("grpc-timeout", "10S")], message).await.code(), Code::Ok);
    }
}

/// How many bytes sent on `socket` the server (a process on this machine) has not read yet: the
/// receive queue of its end of the connection, from `/proc/net/tcp`; `None` while it has no end.
fn unread_by_server(socket: &TcpStream) -> Option<u64> {
    let hex = |address: std::net::SocketAddr| match address {
        std::net::SocketAddr::V4(v4) => format!("{:08X}:{:04X}", u32::from_le_bytes(v4.ip().octets()), v4.port()),
        std::net::SocketAddr::V6(_) => panic!("the tests listen on IPv4 loopback"),
    };
    let (server_end, client_end) = (hex(socket.peer_addr().unwrap()), hex(socket.local_addr().unwrap()));
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (_, rx_queue) = fields[4].split_once(':')?;
        (fields[1] == server_end && fields[2] == client_end).then(|| u64::from_str_radix(rx_queue, 16).ok())?
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_answer_a_request_split_across_two_writes() {
    let server = TestServer::builder().flags(&["--metrics-listen", "127.0.0.1:0"]).start();
    let url = server.metrics_url.clone().unwrap();
    let address = url.strip_prefix("http://").unwrap().strip_suffix("/metrics").unwrap();
    let mut socket = TcpStream::connect(address).await.unwrap();
    socket.set_nodelay(true).unwrap();
    socket.write_all(b"GET /met").await.unwrap();
    socket.flush().await.unwrap();
    // The server reads the first half alone (a single read() once took it for the whole request).
    wait_until(Duration::from_secs(10), "the server to read the first half", async || {
        unread_by_server(&socket) == Some(0)
    })
    .await;
    socket.write_all(b"rics HTTP/1.1\r\nHost: nimber\r\n\r\n").await.unwrap();
    let mut response = String::new();
    socket.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("nimber_requests_total") || response.contains("nimber_cache_entries"), "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_is_counted_once_with_its_final_code() {
    let server =
        TestServer::builder().flags(&["--metrics-listen", "127.0.0.1:0", "--max-message-bytes", "1024"]).start();
    let url = server.metrics_url.clone().unwrap();
    let mut health = HealthClient::new(server.channel().await);
    health.check(HealthCheckRequest { service: String::new() }).await.unwrap();
    let (send, _connection) = raw_connection(&server).await;
    let solve = solve_request(cheap_position()).encode_to_vec();
    raw_unary(&send, "/nimber.v1.Solver/Solve", &[("grpc-timeout", "5x")], &solve).await;
    raw_unary(&send, "/no.Such/Method", &[], &solve).await;
    raw_unary(&send, "/nimber.v1.Solver/Solve", &[], &[0xff; 2000]).await;
    // A stream is one call; its items are counted apart.
    let mut client = server.client().await;
    let items = [
        solve_request(cheap_position()),
        proto::SolveRequest { position: None, id: String::new(), ..Default::default() },
    ];
    let mut responses = client.solve_stream(tokio_stream::iter(items)).await.unwrap().into_inner();
    while responses.message().await.unwrap().is_some() {}
    // A call whose client goes away.
    let call = client.solve(solve_request(full_board(14)));
    assert!(tokio::time::timeout(Duration::from_millis(300), call).await.is_err(), "still solving when dropped");

    let counted = |labels: &str| sample(&scrape(&url), &format!("nimber_requests_total{{{labels}}}"));
    let cancelled = "rpc=\"Solve\",code=\"CANCELLED\"";
    wait_until(Duration::from_secs(10), "the cancelled call counted", async || scrape(&url).contains(cancelled)).await;
    assert_eq!(counted(cancelled), 1.0);
    assert_eq!(counted("rpc=\"grpc.health.v1.Health/Check\",code=\"OK\""), 1.0);
    assert_eq!(counted("rpc=\"Solve\",code=\"INVALID_ARGUMENT\""), 1.0);
    assert_eq!(counted("rpc=\"unknown\",code=\"UNIMPLEMENTED\""), 1.0);
    assert_eq!(counted("rpc=\"Solve\",code=\"RESOURCE_EXHAUSTED\""), 1.0);
    assert_eq!(sample(&scrape(&url), "nimber_request_duration_seconds_count{rpc=\"Solve\"}"), 3.0);
    assert_eq!(counted("rpc=\"SolveStream\",code=\"OK\""), 1.0);
    assert_eq!(sample(&scrape(&url), "nimber_stream_items_total{code=\"OK\"}"), 1.0);
    assert_eq!(sample(&scrape(&url), "nimber_stream_items_total{code=\"INVALID_ARGUMENT\"}"), 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_turns_not_serving_as_soon_as_the_drain_starts() {
    let server =
        TestServer::builder().flags(&["--shutdown-grace-ms", "30000", "--metrics-listen", "127.0.0.1:0"]).start();
    let metrics_url = server.metrics_url.clone().unwrap();
    let mut health = HealthClient::new(server.channel().await);
    let mut watches = Vec::new();
    for service in ["", "nimber.v1.Solver"] {
        let mut watch = health.watch(HealthCheckRequest { service: service.into() }).await.unwrap().into_inner();
        assert_eq!(watch.message().await.unwrap().unwrap().status(), ServingStatus::Serving);
        watches.push(watch);
    }
    // A call in flight keeps the drain going; the watches are existing streams, which a drain
    // lets finish, so they see the change (new connections are refused once the drain starts).
    let mut client = server.client().await;
    let long_call = tokio::spawn(async move { client.solve(solve_request(full_board(14))).await });
    // The gauge appears with the first Solve: absent means not in flight yet.
    let solving = |metrics: &str| metrics.lines().any(|line| line == "nimber_calls_in_flight{rpc=\"Solve\"} 1");
    wait_until(Duration::from_secs(10), "the long call in flight", async || solving(&scrape(&metrics_url))).await;
    server.signal_terminate();
    for watch in &mut watches {
        let status = tokio::time::timeout(Duration::from_secs(10), watch.message()).await.expect("a status change");
        assert_eq!(status.unwrap().unwrap().status(), ServingStatus::NotServing);
    }
    assert!(!long_call.is_finished(), "the drain did not wait for the call in flight");
    long_call.abort();
}

/// The lines of a log file.
fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log).unwrap_or_default().lines().map(str::to_string).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_of_bad_items_writes_a_bounded_log_without_colour_codes() {
    const ITEMS: usize = 5000;
    let directory = tempfile::tempdir().unwrap();
    let log = directory.path().join("server.log");
    let server = TestServer::builder().flags(&["--log-lines-per-second", "20"]).log("debug", &log).start();
    let mut client = server.client().await;
    let items = (0..ITEMS).map(|_| proto::SolveRequest { position: None, ..Default::default() });
    let mut responses = client.solve_stream(tokio_stream::iter(items)).await.unwrap().into_inner();
    let mut answered = 0;
    while let Some(response) = responses.message().await.unwrap() {
        assert_eq!(response.error.unwrap().code, Code::InvalidArgument as u32);
        answered += 1;
    }
    assert_eq!(answered, ITEMS);
    wait_until(Duration::from_secs(10), "the suppressed lines reported", async || {
        log_lines(&log).iter().any(|line| line.contains("similar lines suppressed"))
    })
    .await;
    let lines = log_lines(&log);
    let item_lines = lines.iter().filter(|line| line.contains("item failed")).count();
    assert!((1..200).contains(&item_lines), "{item_lines} item lines for {ITEMS} bad items");
    assert!(lines.iter().all(|line| !line.contains('\u{1b}')), "colour codes in a log file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_are_one_object_per_line() {
    let directory = tempfile::tempdir().unwrap();
    let log = directory.path().join("server.log");
    let mut server = TestServer::builder().flags(&["--log-format", "json"]).log("info", &log).start();
    assert!(server.stop());
    let lines = log_lines(&log);
    assert!(lines.iter().any(|line| line.contains("\"serving\"")), "{lines:?}");
    assert!(lines.iter().all(|line| line.starts_with('{') && line.ends_with('}')), "{lines:?}");
}

#[test]
fn tables_and_slots_beyond_the_memory_limit_are_refused_at_start() {
    let data_dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_nimber"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir.path())
        .args(["--memory-limit", "256MiB", "--max-expensive-solves", "8", "--table-entries", "16777216"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("more than half of --memory-limit"), "{stderr}");
}

/// `message` framed as one gRPC message (the 5-byte prefix, uncompressed).
fn grpc_frame(message: &impl Message) -> Bytes {
    let body = message.encode_to_vec();
    let mut framed = Vec::with_capacity(5 + body.len());
    framed.push(0);
    framed.extend_from_slice(&(body.len() as u32).to_be_bytes());
    framed.extend_from_slice(&body);
    Bytes::from(framed)
}

/// Starts a SolveStream over `send`: the response future and the request body.
async fn open_solve_stream(
    send: &h2::client::SendRequest<Bytes>,
) -> (h2::client::ResponseFuture, h2::SendStream<Bytes>) {
    let request = http::Request::builder()
        .method("POST")
        .uri("http://nimber/nimber.v1.Solver/SolveStream")
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .unwrap();
    send.clone().ready().await.unwrap().send_request(request, false).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_client_that_sends_everything_before_reading_gets_every_answer() {
    const ITEMS: usize = 100_000;
    let server = TestServer::builder().flags(&["--metrics-listen", "127.0.0.1:0"]).start();
    let metrics_url = server.metrics_url.clone().unwrap();
    let socket = TcpStream::connect(server.address()).await.unwrap();
    // One small DATA frame per item, as grpcio, grpc-go and grpc-java send them.
    let (send, connection) = h2::client::handshake(socket).await.unwrap();
    let connection = tokio::spawn(connection);
    let (response, mut body) = open_solve_stream(&send).await;
    for n in 0..ITEMS {
        let item = proto::SolveRequest { position: Some(cheap_position()), id: n.to_string(), ..Default::default() };
        if let Err(error) = body.send_data(grpc_frame(&item), false) {
            panic!("item {n} not sent ({error:?}): the connection ended with {:?}", connection.await.unwrap());
        }
    }
    body.send_data(Bytes::new(), true).unwrap();
    let mut answers = response.await.expect("the response headers").into_body();
    // The client reads nothing until the server has answered as much as the client's window takes
    // (the server is then held back), and for a second more, as the reported client did.
    wait_until(Duration::from_secs(30), "the client's window full of answers", async || {
        answers.flow_control().available_capacity() <= 0 || connection.is_finished()
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut unread = Vec::new();
    let mut answered = 0;
    while let Some(chunk) = answers.data().await {
        let chunk = chunk.unwrap_or_else(|error| panic!("the stream failed after {answered} answers: {error:?}"));
        let _ = answers.flow_control().release_capacity(chunk.len());
        unread.extend_from_slice(&chunk);
        while unread.len() >= 5 {
            let length = u32::from_be_bytes(unread[1..5].try_into().unwrap()) as usize;
            if unread.len() < 5 + length {
                break;
            }
            let answer = proto::SolveResponse::decode(&unread[5..5 + length]).unwrap();
            assert_eq!(answer.id, answered.to_string(), "answers in request order");
            assert!(answer.error.is_none(), "{answer:?}");
            unread.drain(..5 + length);
            answered += 1;
        }
    }
    let trailers = answers.trailers().await.unwrap().expect("trailers");
    assert_eq!(tonic::Status::from_header_map(&trailers).unwrap().code(), Code::Ok);
    assert_eq!(answered, ITEMS);
    assert!(!scrape(&metrics_url).contains("nimber_connections_closed_total{"), "a connection closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_closed_for_a_flood_of_empty_data_frames_is_logged_and_counted() {
    let directory = tempfile::tempdir().unwrap();
    let log = directory.path().join("server.log");
    let server = TestServer::builder().flags(&["--metrics-listen", "127.0.0.1:0"]).log("warn", &log).start();
    let metrics_url = server.metrics_url.clone().unwrap();
    let socket = TcpStream::connect(server.address()).await.unwrap();
    let (send, connection) = h2::client::handshake(socket).await.unwrap();
    let connection = tokio::spawn(connection);
    let (_response, mut body) = open_solve_stream(&send).await;
    // h2 allows 100 empty DATA frames (without END_STREAM) in a connection's life: they carry
    // nothing and cost the server a frame each.
    for _ in 0..200 {
        if body.send_data(Bytes::new(), false).is_err() {
            break;
        }
    }
    let ended = tokio::time::timeout(Duration::from_secs(10), connection).await.expect("the connection is closed");
    let error = ended.unwrap().expect_err("closed with an error");
    assert_eq!(error.reason(), Some(h2::Reason::ENHANCE_YOUR_CALM), "{error:?}");
    let counted = "nimber_connections_closed_total{reason=\"enhance_your_calm\"}";
    wait_until(Duration::from_secs(10), "the closed connection counted", async || {
        scrape(&metrics_url).contains(counted)
    })
    .await;
    assert_eq!(sample(&scrape(&metrics_url), counted), 1.0);
    let lines = log_lines(&log);
    let warned = lines.iter().filter(|line| line.contains("WARN") && line.contains("too_many_data_frames")).count();
    assert_eq!(warned, 1, "one WARN line naming the limit: {lines:?}");
    // The server goes on serving.
    let mut health = HealthClient::new(server.channel().await);
    let answer = health.check(HealthCheckRequest { service: String::new() }).await.unwrap();
    assert_eq!(answer.into_inner().status(), ServingStatus::Serving);
}

/// `host:port` of a metrics URL.
fn metrics_address(url: &str) -> String {
    url.strip_prefix("http://").unwrap().strip_suffix("/metrics").unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn head_metrics_answers_the_headers_of_get_without_a_body() {
    let server = TestServer::builder().flags(&["--metrics-listen", "127.0.0.1:0"]).start();
    let mut socket = TcpStream::connect(metrics_address(server.metrics_url.as_ref().unwrap())).await.unwrap();
    socket.write_all(b"HEAD /metrics HTTP/1.1\r\nHost: nimber\r\nConnection: close\r\n\r\n").await.unwrap();
    let mut response = String::new();
    socket.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("a complete head");
    assert!(head.starts_with("HTTP/1.1 200"), "{response}");
    let head = head.to_ascii_lowercase();
    assert!(head.contains("content-type: text/plain; version=0.0.4"), "{head}");
    let length = head.lines().find_map(|line| line.strip_prefix("content-length: ")).expect("a content-length");
    assert!(length.parse::<usize>().unwrap() > 0, "{head}");
    assert!(body.is_empty(), "a body after HEAD: {body:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_metrics_clients_cannot_lock_out_the_scraper() {
    const SLOW_CLIENTS: usize = 200;
    let server = TestServer::builder().flags(&["--metrics-listen", "127.0.0.1:0"]).start();
    let url = server.metrics_url.clone().unwrap();
    let address = metrics_address(&url);
    let mut slow = Vec::new();
    for _ in 0..SLOW_CLIENTS {
        let mut socket = TcpStream::connect(&address).await.unwrap();
        socket.write_all(b"GET /metrics HTTP/1.1\r\n").await.unwrap();
        slow.push(socket);
    }
    // They go on sending their heads, a header line every 100 ms, and never finish.
    let trickle = tokio::spawn(async move {
        loop {
            for socket in &mut slow {
                let _ = socket.write_all(b"X-Slow: 1\r\n").await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    // Without displacement the scraper waits for the slow heads to time out (5 s each batch).
    for _ in 0..5 {
        let started = Instant::now();
        let url = url.clone();
        let scraped = tokio::task::spawn_blocking(move || scrape(&url)).await.unwrap();
        assert!(started.elapsed() < Duration::from_secs(2), "a scrape took {:?}", started.elapsed());
        assert!(scraped.contains("nimber_connections_open"), "{scraped}");
    }
    let displaced = sample(&scrape(&url), "nimber_connections_closed_total{reason=\"displaced\"}");
    assert!(displaced >= 1.0, "{displaced} connections displaced");
    trickle.abort();
}
