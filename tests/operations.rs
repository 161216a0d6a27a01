//! Operating under load through the real server: metrics, cancellation that frees the CPU,
//! the expensive-solve limit, cheap calls never stuck behind expensive ones, single-flight.

mod common;

use std::time::{Duration, Instant};

use common::{
    assert_idle, cheap_position, full_board, occupy_the_only_slot, sample, scrape, solve_request, wait_until,
    with_timeout, TestServer,
};
use nimber::proto::{self, position::Game as P, Outcome};
use tonic::Code;

/// Waits (at most 10 s) until the gauge `name` scraped from `url` reads `value`.
async fn wait_for_gauge(url: &str, name: &str, value: f64) {
    let what = format!("{name} to read {value}");
    wait_until(Duration::from_secs(10), &what, async || sample(&scrape(url), name) == value).await;
}

const SOLVES_RUNNING: &str = "nimber_expensive_solves_running";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passed_deadline_stops_the_work_and_frees_the_cpu() {
    let server = TestServer::builder().flags(&["--metrics-listen", "127.0.0.1:0"]).start();
    let mut client = server.client().await;
    let started = Instant::now();
    let status =
        client.solve(with_timeout(solve_request(full_board(14)), Duration::from_millis(200))).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    // A 14×14 board takes minutes: an answer within seconds means the solve stopped at the deadline.
    assert!(started.elapsed() < Duration::from_secs(2), "answered in {:?}", started.elapsed());
    wait_for_gauge(server.metrics_url.as_deref().unwrap(), SOLVES_RUNNING, 0.0).await;
    assert_idle(server.pid());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_stops_the_work_and_frees_the_cpu() {
    let server = TestServer::builder().flags(&["--metrics-listen", "127.0.0.1:0"]).start();
    let url = server.metrics_url.clone().unwrap();
    let mut client = server.client().await;
    let call = tokio::spawn(async move { client.solve(solve_request(full_board(14))).await });
    wait_for_gauge(&url, SOLVES_RUNNING, 1.0).await;
    call.abort();
    wait_for_gauge(&url, SOLVES_RUNNING, 0.0).await;
    assert_idle(server.pid());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expensive_solves_past_the_limit_wait_then_get_resource_exhausted_while_cheap_ones_pass() {
    let server =
        TestServer::builder().flags(&["--max-expensive-solves", "1", "--metrics-listen", "127.0.0.1:0"]).start();
    let mut busy_client = server.client().await;
    let busy = tokio::spawn(async move {
        busy_client.solve(with_timeout(solve_request(full_board(14)), Duration::from_millis(1500))).await
    });
    wait_for_gauge(server.metrics_url.as_deref().unwrap(), SOLVES_RUNNING, 1.0).await;
    let mut client = server.client().await;
    let status =
        client.solve(with_timeout(solve_request(full_board(13)), Duration::from_millis(400))).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");

    let cheap = client.solve(solve_request(cheap_position())).await.unwrap().into_inner();
    assert!(cheap.grundy.is_some());
    assert!(!busy.is_finished(), "the cheap call was answered while the expensive one still held the only slot");
    assert_eq!(busy.await.unwrap().unwrap_err().code(), Code::DeadlineExceeded);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_identical_solves_compute_once() {
    let server = TestServer::builder().flags(&["--max-expensive-solves", "4"]).start();
    let board = full_board(8);
    let mut calls = Vec::new();
    for _ in 0..4 {
        let mut client = server.client().await;
        let board = board.clone();
        calls.push(tokio::spawn(async move { client.solve(solve_request(board)).await.unwrap().into_inner() }));
    }
    let mut answers = Vec::new();
    for call in calls {
        answers.push(call.await.unwrap());
    }
    let computing: Vec<u64> = answers.iter().map(|a| a.stats.as_ref().unwrap().positions_computed).collect();
    assert!(answers.windows(2).all(|w| w[0].grundy == w[1].grundy));
    assert_eq!(
        computing.iter().filter(|&&computed| computed > 0).count(),
        1,
        "one call computes, the others wait: {computing:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_requests_codes_latency_and_the_cache() {
    let server = TestServer::builder().flags(&["--metrics-listen", "127.0.0.1:0"]).start();
    let url = server.metrics_url.clone().expect("the metrics address");
    let mut client = server.client().await;
    for _ in 0..3 {
        assert_eq!(
            client.solve(solve_request(cheap_position())).await.unwrap().into_inner().outcome(),
            Outcome::NextPlayerWins
        );
    }
    client.solve(solve_request(full_board(7))).await.unwrap();
    client.solve(proto::SolveRequest { position: None, id: String::new(), ..Default::default() }).await.unwrap_err();
    let scraped = scrape(&url);
    assert_eq!(sample(&scraped, "nimber_requests_total{rpc=\"Solve\",code=\"OK\"}"), 4.0);
    assert_eq!(sample(&scraped, "nimber_requests_total{rpc=\"Solve\",code=\"INVALID_ARGUMENT\"}"), 1.0);
    assert_eq!(sample(&scraped, "nimber_request_duration_seconds_count{rpc=\"Solve\"}"), 5.0);
    assert_eq!(sample(&scraped, "nimber_request_duration_seconds_bucket{rpc=\"Solve\",le=\"+Inf\"}"), 5.0);
    assert!(sample(&scraped, "nimber_positions_computed_total") > 0.0);
    // The process's resident memory, as the server read it: more than a MiB, at most its peak since.
    let resident = sample(&scraped, "process_resident_memory_bytes");
    assert!(resident > (1 << 20) as f64 && resident <= common::peak_rss(server.pid()) as f64, "{resident}");
    // The store's writer thread writes within 100 ms; entries and size count what is on disk.
    wait_until(Duration::from_secs(10), "cache entries and size after a search", async || {
        let scraped = scrape(&url);
        sample(&scraped, "nimber_cache_entries") > 0.0 && sample(&scraped, "nimber_cache_size_bytes") > 0.0
    })
    .await;

    let before = sample(&scraped, "nimber_cache_hits_total");
    client.solve(solve_request(full_board(7))).await.unwrap();
    assert!(sample(&scrape(&url), "nimber_cache_hits_total") > before, "the second solve of a board hits the cache");
}

/// A 6×6 board with a few blocked cells: solved by search (its components go to the store).
fn warm_board() -> proto::Position {
    let rows = ["000000", "001000", "000000", "000010", "000000", "100000"];
    proto::Position { game: Some(P::Tetris(proto::Tetris { rows: rows.iter().map(|row| row.to_string()).collect() })) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_boards_are_answered_while_every_slot_is_busy() {
    let data = tempfile::tempdir().unwrap();
    let flags = ["--max-expensive-solves", "1"];
    let first = {
        let server = TestServer::builder().data_dir(data.path()).flags(&flags).start();
        let mut client = server.client().await;
        let first = client.solve(solve_request(warm_board())).await.unwrap().into_inner();
        assert!(first.stats.unwrap().positions_computed > 0, "the board needs a search");
        // Warm in memory: answered on the spot, the slot busy with a search of minutes.
        let busy = occupy_the_only_slot(&server).await;
        let warm = client.solve(with_timeout(solve_request(warm_board()), Duration::from_secs(2))).await;
        let warm = warm.expect("a warm board needs no slot").into_inner();
        assert_eq!((warm.grundy, warm.outcome), (first.grundy, first.outcome));
        assert_eq!(warm.stats.unwrap().positions_computed, 0);
        busy.abort();
        first
    };
    // Warm in the store only (a restarted server): read on the blocking pool, still without a slot.
    let server = TestServer::builder().data_dir(data.path()).flags(&flags).start();
    let busy = occupy_the_only_slot(&server).await;
    let mut client = server.client().await;
    let warm = client.solve(with_timeout(solve_request(warm_board()), Duration::from_secs(2))).await;
    let warm = warm.expect("a board in the store needs no slot").into_inner();
    assert_eq!((warm.grundy, warm.outcome), (first.grundy, first.outcome));
    assert_eq!(warm.stats.unwrap().positions_computed, 0);
    assert!(warm.stats.unwrap().cache_hits > 0);
    busy.abort();
}

/// One position's search on every thread (`--search-threads`): servers on 1 and 4 threads give the
/// same values and best moves on random boards of both placement games; while a large solve runs
/// on the 4-thread server, its helpers show in the metrics, and a cancel gives them all back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_and_best_moves_are_the_same_on_one_thread_and_four() {
    use nimber::random::SplitMix;
    use nimber::testing::{board_position, random_board};
    let one = TestServer::builder().flags(&["--search-threads", "1"]).start();
    let four = TestServer::builder().flags(&["--search-threads", "4", "--metrics-listen", "127.0.0.1:0"]).start();
    let (mut on_one, mut on_four) = (one.client().await, four.client().await);
    let mut random = SplitMix::new(41);
    for i in 0..6 {
        let mut position = board_position(random_board(&mut random, 7, 7 + i % 2, 10));
        if i % 2 == 1 {
            let Some(P::Tetris(board)) = position.game else { unreachable!("a 2×2 board") };
            position = proto::Position { game: Some(P::Cram(proto::Cram { rows: board.rows[..5].to_vec() })) };
        }
        let request = || proto::BestMoveRequest { position: Some(position.clone()), ..Default::default() };
        let expected = on_one.best_move(request()).await.unwrap().into_inner();
        let answer = on_four.best_move(request()).await.unwrap().into_inner();
        assert_eq!((answer.grundy, answer.r#move), (expected.grundy, expected.r#move), "{position:?}");
    }
    let url = four.metrics_url.clone().expect("the metrics address");
    assert_eq!(sample(&scrape(&url), "nimber_search_threads"), 4.0);
    let busy = tokio::spawn({
        let mut client = four.client().await;
        async move { client.solve(with_timeout(solve_request(full_board(14)), Duration::from_secs(600))).await }
    });
    wait_for_gauge(&url, "nimber_search_threads_busy", 4.0).await;
    busy.abort();
    wait_for_gauge(&url, "nimber_search_threads_busy", 0.0).await;
}
