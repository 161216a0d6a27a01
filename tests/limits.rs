//! Request limits and expensive-solve slots through the real server: oversized requests are rejected
//! while decoding, before anything is built; undecodable bodies are INVALID_ARGUMENT; Analyze pages
//! that would walk a huge position answer at once; the waiting-solves gauge and the slots stay exact.
//! The process-wide memory limit of the in-process commands (`explore`, `judge`).

mod common;

use nimber::games::Value;
use std::time::{Duration, Instant};

use common::{
    call_raw, engine_value, full_board, occupy_the_only_slot, peak_rss, run_measuring_peak_rss, sample, scrape,
    solve_request, wait_until, with_timeout, TestServer,
};
use nimber::games::{sum, MAX_ITEMS};
use nimber::proto::{self, position::Game as P};
use prost::encoding::encode_varint;
use tonic::Code;

fn cutting(pieces: usize) -> proto::Position {
    proto::Position {
        game: Some(P::Cutting(proto::Cutting { pieces: vec![proto::Piece { width: 2, height: 3 }; pieces] })),
    }
}

fn sum_of(components: Vec<proto::Position>) -> proto::Position {
    proto::Position { game: Some(P::Sum(proto::Sum { components })) }
}

/// `payload` as field 1 or 6 (`tag` is the whole key byte) of a message, length-delimited.
fn field(tag: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    encode_varint(payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}

/// The encoded SolveRequest of a sum of `sums` sums of `boards` one-cell boards each, built as
/// bytes (building it as messages would cost the test what it costs the server to decode).
fn nested_sum_body(sums: usize, boards: usize) -> Vec<u8> {
    use prost::Message;
    let board = proto::Position { game: Some(P::Tetris(proto::Tetris { rows: vec!["0".into()] })) }.encode_to_vec();
    let component = field(0x0a, &board);
    let inner_sum = field(0x32, &component.repeat(boards));
    let outer_sum = field(0x32, &field(0x0a, &inner_sum).repeat(sums));
    field(0x0a, &outer_sum)
}

/// The request: 16.8 MB, a sum of 240 sums of 10 000 one-cell boards. It cost 5.3 s and
/// 1.54 GB of RSS before it was rejected; the decoder now rejects it having built nothing, so the
/// server's peak RSS grows by about the body it buffered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_nested_sum_is_rejected_while_decoding_without_building_it() {
    let server = TestServer::builder().flags(&["--max-message-bytes", "33554432"]).start();
    let body = nested_sum_body(240, 10_000);
    assert!(body.len() > 16_000_000, "{} bytes", body.len());
    let before = peak_rss(server.pid());
    let started = Instant::now();
    let status =
        call_raw(server.channel().await, "/nimber.v1.Solver/Solve", tonic::Request::new(body)).await.unwrap_err();
    let took = started.elapsed();
    let grown = peak_rss(server.pid()).saturating_sub(before);
    eprintln!("rejected in {took:?}; peak RSS grew by {} MB", grown >> 20);
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    // Items: the outer sum, then per inner sum itself and its 10 000 rows; the 10th inner sum overflows.
    let before_tenth_rows = 1 + 9 * 10_001 + 1;
    let limit = format!(
        "sum.components[9].sum.components[{}].tetris.rows[0] is past the limit of {MAX_ITEMS} items",
        MAX_ITEMS - before_tenth_rows
    );
    assert!(status.message().starts_with(&limit), "{:?}", status.message());
    assert!(grown < 200 << 20, "the server's peak RSS grew by {} MB", grown >> 20);
    assert!(took < Duration::from_secs(10), "rejected after {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undecodable_bodies_are_invalid_argument_naming_the_message() {
    let server = TestServer::builder().start();
    for (method, name) in [
        ("/nimber.v1.Solver/Solve", "nimber.v1.SolveRequest"),
        ("/nimber.v1.Solver/BestMove", "nimber.v1.BestMoveRequest"),
        ("/nimber.v1.Solver/Analyze", "nimber.v1.AnalyzeRequest"),
    ] {
        // A position whose length runs past the end; a string that is not UTF-8 (prost's own check).
        for body in [vec![0x0a, 0x05, 0x32], vec![0x0a, 0x05, 0x22, 0x03, 0x0a, 0x01, 0xff]] {
            let status = call_raw(server.channel().await, method, tonic::Request::new(body)).await.unwrap_err();
            assert_eq!(status.code(), Code::InvalidArgument, "{method}: {status:?}");
            assert!(status.message().starts_with(&format!("the body is not a valid {name}")), "{status:?}");
        }
    }
}

/// A sum nested as deep as allowed, holding as many components and items as allowed, is answered
/// (exactly); one item more is rejected naming the item and the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_at_every_limit_is_answered_and_one_item_more_is_rejected() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let at_limits = |extra_piece: usize| {
        let sums = sum::MAX_DEPTH; // the top sum and MAX_DEPTH - 1 nested in it, each counting as an item
        let games = sum::MAX_COMPONENTS - 1;
        let pieces_each = 9;
        let innermost = MAX_ITEMS - sums - games * pieces_each + extra_piece;
        let deepest = (1..sums).fold(cutting(innermost), |inner, _| sum_of(vec![inner]));
        let mut components: Vec<_> = (0..games).map(|_| cutting(pieces_each)).collect();
        components.push(deepest);
        sum_of(components)
    };
    let position = at_limits(0);
    let answer = client.solve(solve_request(position.clone())).await.unwrap().into_inner();
    assert_eq!(answer.grundy, engine_value(&position).nimber());

    let status = client.solve(solve_request(at_limits(1))).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let deepest = format!("{}cutting.pieces[", "sum.components[0].".repeat(sum::MAX_DEPTH - 1));
    assert!(
        status.message().starts_with(&format!("sum.components[{}].{deepest}", sum::MAX_COMPONENTS - 1)),
        "{status:?}"
    );
    assert!(status.message().contains(&format!("the limit of {MAX_ITEMS} items")), "{status:?}");
}

/// The decoder checks each item of a stream: one over the limits ends the stream with its status,
/// after the answers to the items before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_item_over_the_limits_ends_the_stream_after_the_answers_before_it() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let item =
        |id: &str, pieces| proto::SolveRequest { position: Some(cutting(pieces)), id: id.into(), ..Default::default() };
    let requests = vec![item("a", 1), item("b", 2), item("huge", MAX_ITEMS + 1), item("c", 1)];
    let mut responses = client.solve_stream(tokio_stream::iter(requests)).await.unwrap().into_inner();
    let mut answered = Vec::new();
    let status = loop {
        match responses.message().await {
            Ok(Some(response)) => answered.push(response.id),
            Ok(None) => panic!("the stream ended without an error after {answered:?}"),
            Err(status) => break status,
        }
    };
    assert_eq!(answered, ["a", "b"]);
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains(&format!("cutting.pieces[{MAX_ITEMS}]")), "{status:?}");
}

/// With one slot, held by a long solve: the call queued behind it goes away, and the gauge of
/// waiting solves comes back to 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_call_that_goes_away_is_no_longer_counted_as_waiting() {
    let server =
        TestServer::builder().flags(&["--max-expensive-solves", "1", "--metrics-listen", "127.0.0.1:0"]).start();
    let url = server.metrics_url.clone().expect("the metrics address");
    let waiting = || sample(&scrape(&url), "nimber_expensive_solves_waiting");
    let busy = occupy_the_only_slot(&server).await;
    let mut client = server.client().await;
    let queued = tokio::spawn(async move { client.solve(solve_request(full_board(13))).await });
    wait_until(Duration::from_secs(20), "the second call to queue", async || waiting() == 1.0).await;
    queued.abort();
    wait_until(Duration::from_secs(10), "the call that went away to be no longer counted", async || waiting() == 0.0)
        .await;
    busy.abort();
}

/// The two 78-byte requests: a page 10^15 moves into a 10^18-row strip, and a page past the
/// end of a u64×u64 piece (then a page token at offset u128::MAX; tokens are now authenticated, so
/// the test skips there: u64::MAX moves past the first page of the strip, past its last move).
/// They burned the whole deadline holding the only slot; now the deep page is found by arithmetic
/// and the other is empty, both at once, and a solve sent with them gets the slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_pages_past_the_end_or_deep_in_the_tail_answer_at_once() {
    let server = TestServer::builder().flags(&["--max-expensive-solves", "1"]).start();
    let strip = proto::Position {
        game: Some(P::Reclamation(proto::Reclamation { rows: 1_000_000_000_000_000_000, reclaimed: vec![] })),
    };
    let analyze = |position: proto::Position, skip: u64| {
        let server_url = server.url.clone();
        tokio::spawn(async move {
            let mut client = proto::solver_client::SolverClient::connect(server_url).await.unwrap();
            let request = proto::AnalyzeRequest {
                position: Some(position),
                limit: 10,
                page_token: String::new(),
                skip,
                ..Default::default()
            };
            client.analyze(with_timeout(request, Duration::from_secs(30))).await
        })
    };
    let deep = analyze(strip.clone(), 1_000_000_000_000_000);
    let past = analyze(strip, u64::MAX);
    let mut client = server.client().await;
    let solved = client.solve(with_timeout(solve_request(full_board(8)), Duration::from_secs(20))).await;
    assert!(solved.is_ok(), "{solved:?}");

    let deep = deep.await.unwrap().unwrap().into_inner();
    assert_eq!(deep.moves.len(), 10, "{deep:?}");
    assert!(deep.moves.iter().all(|analysis| !analysis.winning), "{deep:?}");
    let page = past.await.unwrap().unwrap().into_inner();
    assert!(page.moves.is_empty() && page.next_page_token.is_empty(), "{page:?}");
    assert!(page.total_moves_exact.parse::<u128>().unwrap() < u128::from(u64::MAX), "{page:?}");
}

/// The in-process `nimber explore` shares `--memory-limit` between its job's tables, the store's
/// in-memory tier and sled's page cache: a full 9×10 board, which peaks at 96 MB with the default
/// tables (11 Mi entries), stays under a limit of 64 MiB, and its value is the engine's.
#[test]
fn an_in_process_explore_job_stays_within_its_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let board = vec!["0".repeat(10); 9];
    let limit: u64 = 64 << 20;
    let stderr_log = dir.path().join("stderr.log");
    let (status, stdout, peak) = run_measuring_peak_rss(
        std::process::Command::new(env!("CARGO_BIN_EXE_nimber"))
            .args(["explore", "solve", "--board", &board.join(","), "--memory-limit", &limit.to_string()])
            .arg("--data-dir")
            .arg(dir.path().join("memo"))
            .arg("--jobs-dir")
            .arg(dir.path().join("jobs"))
            .stderr(std::fs::File::create(&stderr_log).unwrap()),
    );
    let log = std::fs::read_to_string(&stderr_log).unwrap();
    assert!(status.success(), "{status}: {log}");
    let position = proto::Position { game: Some(P::Tetris(proto::Tetris { rows: board })) };
    let grundy = engine_value(&position).nimber().expect("a board has a nimber");
    assert!(stdout.starts_with(&format!("grundy {grundy} ")), "{stdout}");
    eprintln!("peak RSS {peak} bytes under a limit of {limit}");
    assert!(peak < limit, "peak RSS {peak} bytes over the limit of {limit}: {log}");
}

/// A memory limit too small for the tables is refused by the in-process commands as by `serve`.
#[test]
fn a_memory_limit_too_small_for_the_tables_is_refused_by_explore_and_judge() {
    let dir = tempfile::tempdir().unwrap();
    let jobs_dir = dir.path().join("jobs");
    let commands: [&[&str]; 2] =
        [&["explore", "solve", "--board", "00,00", "--jobs-dir", jobs_dir.to_str().unwrap()], &["judge", "tetris"]];
    for command in commands {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_nimber"))
            .args(command)
            .args(["--memory-limit", "1MiB"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{command:?}");
        assert!(stderr.contains("more than half of --memory-limit"), "{command:?}: {stderr}");
    }
}
