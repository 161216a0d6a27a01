//! Heap games through the real server at their bounds: searches that stop at their deadline with
//! DEADLINE_EXCEEDED and give their slot back, move sets that never grow the server, the values of
//! heapSequence jobs serving Solve, and every answer saying how its heap values are known.

mod common;

use std::time::Duration;

use common::jobs::{heap_sequence, operations, progress, wait_done};
use common::{peak_rss, solve_request, with_timeout, TestServer};
use nimber::proto::{self, position::Game as P, ExploreState};
use tonic::Code;

fn heaps(rules: proto::heaps::Rules, heaps: Vec<u64>) -> proto::Position {
    proto::Position { game: Some(P::Heaps(proto::Heaps { rules: Some(rules), heaps })) }
}

fn code(code: &str, sizes: Vec<u64>) -> proto::Position {
    heaps(proto::heaps::Rules::Code(code.into()), sizes)
}

fn analyze(position: proto::Position, timeout: Duration) -> tonic::Request<proto::AnalyzeRequest> {
    with_timeout(proto::AnalyzeRequest { position: Some(position), limit: 1, ..Default::default() }, timeout)
}

/// The attack: two Analyze calls of 10 000 huge heaps of 0.16 (a period of 149 459, so
/// about a millisecond of residues a heap) with a 1 s deadline each, then a Cram solve. Every loop
/// over heaps and residues checks the budget: the Analyze calls end with DEADLINE_EXCEEDED (not
/// tonic's CANCELLED after their deadline, as when they ran 8 s on), and the Cram solve gets a slot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyses_of_ten_thousand_huge_heaps_stop_at_their_deadline_and_give_their_slots_back() {
    let server = TestServer::builder().flags(&["--max-expensive-solves", "2"]).start();
    let mut client = server.client().await;
    // The period of 0.16, proven once (values to 2^20).
    let warm = client.solve(solve_request(code("0.16", vec![u64::MAX]))).await.unwrap().into_inner();
    assert!(matches!(warm.heap_values[0].known, Some(proto::heap_values::Known::Proven(_))), "{warm:?}");
    let mut random = nimber::random::SplitMix::new(34);
    let huge: Vec<u64> = (0..10_000).map(|_| random.range(1 << 63, u64::MAX)).collect();
    let calls: Vec<_> = (0..2)
        .map(|_| {
            let (url, position) = (server.url.clone(), code("0.16", huge.clone()));
            tokio::spawn(async move {
                let mut client = proto::solver_client::SolverClient::connect(url).await.unwrap();
                client.analyze(analyze(position, Duration::from_secs(1))).await
            })
        })
        .collect();
    for call in calls {
        let status = call.await.unwrap().expect_err("10 000 heaps take seconds");
        assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    }
    let cram = proto::Position {
        game: Some(P::Cram(proto::Cram { rows: vec!["00000".into(), "00000".into(), "00000".into(), "00100".into()] })),
    };
    let solved = client.solve(with_timeout(solve_request(cram), Duration::from_secs(3))).await;
    assert!(solved.is_ok(), "the Cram solve got a slot: {solved:?}");
}

/// A code whose heaps cost more the larger they are (8.0 splits into three heaps: a heap of n
/// looks at n²/12 splits) checks its budget by the work done, not every 128 heaps: a 3 s deadline
/// ends with DEADLINE_EXCEEDED, where a batch of heaps past it once overran the margin and tonic
/// answered CANCELLED "Timeout expired".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_costly_code_stops_at_its_deadline_with_deadline_exceeded() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let request = with_timeout(solve_request(code("8.0", vec![9500])), Duration::from_secs(3));
    let status = client.solve(request).await.expect_err("9 500 heaps of 8.0 take about a minute");
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    common::assert_idle(server.pid());
}

/// The period search is linear in the values: the subtraction game {65 536}, whose period of
/// 131 072 took 11.8 s to find by looking at each shift, answers heap 2^64 − 1 well within 5 s.
/// G(n) = ⌊n / 65 536⌋ mod 2, so that heap (2^48 − 1 laps of 65 536, and 65 535) is worth 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_period_is_found_within_a_deadline() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let subtraction = proto::heaps::Rules::Subtraction(proto::Subtraction { take: vec![65_536], all_but: false });
    let request = with_timeout(solve_request(heaps(subtraction, vec![u64::MAX])), Duration::from_secs(5));
    let answer = client.solve(request).await.unwrap().into_inner();
    assert_eq!(answer.grundy, Some(1));
    let Some(proto::heap_values::Known::Proven(period)) = &answer.heap_values[0].known else { panic!("{answer:?}") };
    assert_eq!((period.preperiod, period.period), (0, 131_072));
}

/// `--memory-limit` bounds the moves of a heap that splits into three: 8.0 at heap 5 000 has 2.1
/// million such splits, which Analyze once listed (48 bytes each, and again for the winning ones:
/// 228 → 717 MiB of RSS for a heap of 8 000). Now a set of moves is counted and indexed, a few bytes
/// per thousand moves: two analyses at once grow the server by less than 64 MiB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_splits_of_a_heap_into_three_never_grow_the_server() {
    let server = TestServer::builder().flags(&["--memory-limit", "256MiB"]).start();
    let mut client = server.client().await;
    let position = code("8.0", vec![5000]);
    let values = client.solve(with_timeout(solve_request(position.clone()), Duration::from_secs(300))).await;
    assert!(values.is_ok(), "the values to 5 000: {values:?}");
    let before = peak_rss(server.pid());
    let calls: Vec<_> = (0..2)
        .map(|_| {
            let (url, position) = (server.url.clone(), position.clone());
            tokio::spawn(async move {
                let mut client = proto::solver_client::SolverClient::connect(url).await.unwrap();
                client.analyze(analyze(position, Duration::from_secs(300))).await
            })
        })
        .collect();
    for call in calls {
        let page = call.await.unwrap().expect("the analysis").into_inner();
        let total: u128 = page.total_moves_exact.parse().unwrap();
        // The partitions of 5 000 into three positive parts: the integer nearest 5 000² / 12.
        assert_eq!(total, (5000 * 5000 + 6) / 12);
        assert_eq!(page.moves.len(), 1);
    }
    let grown = peak_rss(server.pid()).saturating_sub(before);
    assert!(grown < 64 << 20, "two analyses grew the server by {} MiB", grown >> 20);
}

/// A heapSequence job's values serve Solve: past `--max-heap-compute` for rules with no proven
/// period (Grundy's game), and without computing them again for costly ones (8.0), also after a
/// restart (they are in the store).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_values_of_a_heap_sequence_job_serve_solve() {
    let data = tempfile::tempdir().unwrap();
    let flags = ["--max-heap-compute", "2000"];
    let server = TestServer::builder().data_dir(data.path()).flags(&flags).start();
    let mut client = server.client().await;
    let status = client.solve(solve_request(code("4!.0", vec![5000]))).await.unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "past the limit before the job: {status:?}");
    let mut jobs = operations(&server).await;
    for (rules, up_to) in [("4!.0", 6000), ("8.0", 600)] {
        let name = client.explore(heap_sequence(rules, up_to)).await.unwrap().into_inner().name;
        assert_eq!(progress(&wait_done(&mut jobs, &name).await).state(), ExploreState::Succeeded);
    }
    let check = async |client: &mut proto::solver_client::SolverClient<_>| {
        let grundy = client.solve(solve_request(code("4!.0", vec![5000]))).await.unwrap().into_inner();
        let expected = common::engine_value(&code("4!.0", vec![5000]));
        assert_eq!(grundy.grundy, nimber::games::Value::nimber(expected));
        let stats = grundy.stats.unwrap();
        assert_eq!(stats.positions_computed, 0, "{stats:?}");
        let Some(proto::heap_values::Known::Computed(known)) = &grundy.heap_values[0].known else { panic!() };
        assert!(known.up_to > 5000, "{known:?}");
        let costly = client.solve(solve_request(code("8.0", vec![600]))).await.unwrap().into_inner();
        assert_eq!(costly.stats.unwrap().positions_computed, 0, "8.0 to 600 is the job's");
    };
    check(&mut client).await;
    drop((client, jobs));
    drop(server);
    let server = TestServer::builder().data_dir(data.path()).flags(&flags).start();
    check(&mut server.client().await).await;
}

/// Every rule set's answers carry its heap values, Nim's and the all-but subtraction games' too,
/// in Solve, BestMove, Analyze and a `solve` job's answer (one function builds them all); and
/// `0.3[3]` is Nim, answering heap 2^64 − 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_heap_answer_says_how_its_values_are_known() {
    use proto::heaps::Rules;
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let all_but = Rules::Subtraction(proto::Subtraction { take: vec![2, 5], all_but: true });
    let nim_proven = Some(proto::heap_values::Known::Proven(proto::HeapPeriod {
        preperiod: 0,
        period: 1,
        saltus: 1,
        checked_to: 1,
    }));
    for (position, rules) in [
        (heaps(Rules::Nim(true), vec![u64::MAX, 7]), "nim"),
        (code("0.[3]", vec![u64::MAX, 7]), "0.[3]"),
        (code("0.3[3]", vec![u64::MAX, 7]), "0.3[3]"),
        (heaps(all_but, vec![100, 7]), "all-but {2, 5}"),
    ] {
        let solved = client.solve(solve_request(position.clone())).await.unwrap().into_inner();
        assert_eq!(solved.heap_values.len(), 1, "{rules}: {solved:?}");
        assert_eq!(solved.heap_values[0].rules, rules);
        if rules != "all-but {2, 5}" {
            assert_eq!(solved.grundy, Some(u64::MAX ^ 7), "{rules}");
            assert_eq!(solved.heap_values[0].known, nim_proven, "{rules}");
        }
        let best = proto::BestMoveRequest { position: Some(position.clone()), ..Default::default() };
        let best = client.best_move(best).await.unwrap().into_inner();
        assert_eq!(best.heap_values, solved.heap_values, "{rules}");
        let analysis = client.analyze(analyze(position.clone(), Duration::from_secs(10))).await.unwrap();
        assert_eq!(analysis.into_inner().heap_values, solved.heap_values, "{rules}");
        let job = proto::ExploreRequest {
            job: Some(proto::explore_request::Job::Solve(solve_request(position))),
            ..Default::default()
        };
        let name = client.explore(job).await.unwrap().into_inner().name;
        let done = wait_done(&mut operations(&server).await, &name).await;
        let Some(proto::explore_result::Answer::Solve(answer)) = common::jobs::result(&done).answer else {
            panic!("{done:?}")
        };
        assert_eq!(answer.heap_values, solved.heap_values, "{rules}: the solve job's answer");
    }
}
