//! `--memory-limit` bounds the whole server process under mixed load: large solves at once, a
//! 16×16 Explore job, two SolveStreams and paging through job tables, all together. The issue's
//! measurement was 339–376 MB of RSS under a limit of 256 MiB (1.46×); this test measured 420 MiB
//! (1.64×) while the store's default size bound was a quarter of the limit (sled keeps up to four
//! times the store's size in memory under heavy writes), 236–276 MiB with a sixteenth, and 214–244
//! MiB with a thirty-second and sled's page cache a sixteenth. Later the same load reached 254–283
//! MiB (CI failed once at 283): glibc's arenas, eight per core, each kept what it freed. With one
//! arena per core (`limits::limit_malloc_arenas`) it peaks at 178–218 MiB. It runs with four search
//! threads, so that helpers search beside the solves and the job within the same limit. The bound
//! is 1.1×.

mod common;

use std::time::Duration;

use common::jobs::{operations, progress, result, sub_boards, wait_done};
use common::{full_board, peak_rss, with_timeout, TestServer};
use nimber::google::longrunning as lro;
use nimber::proto::{self, ExploreState};
use nimber::random::SplitMix;
use nimber::testing::{board_position, random_board};

/// The limit of the test, and how far over it the peak may go.
const LIMIT: u64 = 256 << 20;
const TOLERANCE: f64 = 1.1;

/// Pages through the whole table of job `name`, 10 000 rows at a time; returns the rows read.
async fn page_through(server: &TestServer, name: &str) -> usize {
    let mut client = server.client().await;
    let (mut read, mut page_token) = (0, String::new());
    loop {
        let request = proto::ListExploreRowsRequest { name: name.into(), page_size: 10_000, page_token };
        let page = client.list_explore_rows(request).await.expect("a page of the table").into_inner();
        read += page.rows.len();
        if page.next_page_token.is_empty() {
            return read;
        }
        page_token = page.next_page_token;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_limit_bounds_the_whole_process_under_mixed_load() {
    let limit = LIMIT.to_string();
    let server =
        TestServer::builder().flags(&["--memory-limit", &limit, "--max-jobs", "2", "--search-threads", "4"]).start();
    let pid = server.pid();

    // Two finished tables to page through (2579 and 6276 rows).
    let mut client = operations(&server).await;
    let mut tables = Vec::new();
    for board in [["0000000"; 7], ["0000001"; 7]] {
        let name = server.client().await.explore(sub_boards(&board, 3)).await.unwrap().into_inner().name;
        let done = wait_done(&mut client, &name).await;
        assert_eq!(progress(&done).state(), ExploreState::Succeeded);
        tables.push((name, result(&done).total_rows as usize));
    }
    let before_load = peak_rss(pid);

    // The mixed load, for 20 s: a 16×16 Explore job, large solves (deadline exceeded, their tables
    // full), two SolveStreams of random boards, and paging through both tables again and again.
    let explore = server.client().await.explore(sub_boards(&["0".repeat(16).as_str(); 16], 1)).await;
    let explore = explore.unwrap().into_inner().name;
    let load = Duration::from_secs(20);
    let mut tasks = tokio::task::JoinSet::new();
    for size in [11, 12, 13] {
        let mut solver = server.client().await;
        tasks.spawn(async move {
            // Load only: answered, DEADLINE_EXCEEDED, or waiting for a slot past the deadline.
            let _ = solver.solve(with_timeout(common::solve_request(full_board(size)), load)).await;
        });
    }
    for seed in [1, 2] {
        let mut solver = server.client().await;
        tasks.spawn(async move {
            let mut random = SplitMix::new(seed);
            let requests: Vec<proto::SolveRequest> = (0..400)
                .map(|i| common::solve_request(board_position(random_board(&mut random, 8 + i % 3, 8, 20))))
                .collect();
            let call = solver.solve_stream(with_timeout(tokio_stream::iter(requests), load)).await;
            if let Ok(answers) = call {
                let mut answers = answers.into_inner();
                while let Ok(Some(_)) = answers.message().await {}
            }
        });
    }
    let started = std::time::Instant::now();
    let mut pages = 0;
    while started.elapsed() < load {
        for (table, total_rows) in &tables {
            assert_eq!(page_through(&server, table).await, *total_rows);
            pages += 1;
        }
    }
    while let Some(task) = tasks.join_next().await {
        task.expect("a load task");
    }
    let cancel = lro::CancelOperationRequest { name: explore.clone() };
    client.cancel_operation(cancel).await.expect("the 16×16 job is cancelled");

    let peak = peak_rss(pid);
    eprintln!(
        "note: peak RSS {} MiB under a limit of {} MiB ({:.2}×; {} MiB before the load; {pages} tables paged through)",
        peak >> 20,
        LIMIT >> 20,
        peak as f64 / LIMIT as f64,
        before_load >> 20
    );
    assert!(
        peak as f64 <= TOLERANCE * LIMIT as f64,
        "peak RSS {} MiB over {TOLERANCE}× the limit of {} MiB",
        peak >> 20,
        LIMIT >> 20
    );
}
