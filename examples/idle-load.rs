//! Idle load against a running server, for the transport benchmarks (scripts/bench-transport.sh):
//!
//!     idle-load streams ADDRESS N       opens up to N SolveStream calls on one HTTP/2 connection and
//!                                       sends nothing on them; prints how many the server let open
//!     idle-load connections ADDRESS N   opens N HTTP/2 connections (preface and SETTINGS sent, no
//!                                       call); prints how many completed the handshake
//!
//! Either then holds everything open until stdin closes, so that the caller can measure the server.

use std::time::Duration;

use hyper::body::Bytes;
use tokio::net::TcpStream;

/// How long to wait for the server to allow one more stream or connection before stopping.
const PATIENCE: Duration = Duration::from_secs(2);

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let [_, mode, address, count] = arguments.as_slice() else {
        eprintln!("usage: idle-load streams|connections ADDRESS N");
        std::process::exit(2);
    };
    let count: usize = count.parse().expect("N is a number");
    let mut held = Vec::new();
    let opened = match mode.as_str() {
        "streams" => open_streams(address, count, &mut held).await,
        "connections" => open_connections(address, count, &mut held).await,
        _ => {
            eprintln!("unknown mode {mode}");
            std::process::exit(2);
        }
    };
    println!("{opened}");
    let _ = tokio::task::spawn_blocking(|| std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new())).await;
}

/// Opens up to `count` idle SolveStream calls on one connection.
async fn open_streams(address: &str, count: usize, held: &mut Vec<Box<dyn std::any::Any>>) -> usize {
    let socket = TcpStream::connect(address).await.expect("the server answers");
    let (mut send, connection) = h2::client::handshake(socket).await.expect("the HTTP/2 handshake");
    tokio::spawn(connection);
    for opened in 0..count {
        send = match tokio::time::timeout(PATIENCE, send.ready()).await {
            Ok(Ok(send)) => send,
            _ => return opened,
        };
        let request = http::Request::builder()
            .method("POST")
            .uri(format!("http://{address}/nimber.v1.Solver/SolveStream"))
            .header("content-type", "application/grpc")
            .header("te", "trailers")
            .body(())
            .expect("a request");
        match send.send_request(request, false) {
            Ok((response, body)) => held.push(Box::new((response, body))),
            Err(_) => return opened,
        }
        // Let the connection task write the HEADERS frame.
        tokio::task::yield_now().await;
    }
    held.push(Box::new(send));
    count
}

/// Opens up to `count` idle HTTP/2 connections.
async fn open_connections(address: &str, count: usize, held: &mut Vec<Box<dyn std::any::Any>>) -> usize {
    let mut opened = 0;
    for _ in 0..count {
        let Ok(Ok(socket)) = tokio::time::timeout(PATIENCE, TcpStream::connect(address)).await else { break };
        // The handshake completes on the client side without the server's answer; the server
        // only reads it once it accepts the connection.
        let Ok((send, connection)) = h2::client::handshake(socket).await else { break };
        let send: h2::client::SendRequest<Bytes> = send;
        tokio::spawn(connection);
        held.push(Box::new(send));
        opened += 1;
    }
    opened
}
