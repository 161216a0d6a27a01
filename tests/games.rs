//! More Reclamation, the diagonal walk, the 2×2 placement game, heap games and Node Kayles through
//! the real server: answers equal the engine's, best moves win, bad input is rejected, and the
//! persistent cache survives a restart.

mod common;

use common::{engine_value, solve_request, TestServer};
use nimber::games::Game;
use nimber::games::GameTag;
use nimber::games::Value;
use nimber::proto::{self, position::Game as P, Outcome};
use nimber::random::SplitMix;
use nimber::testing::{random_position, SMALL_SIDES};
use tonic::Code;

fn tetris(rows: &[&str]) -> proto::Position {
    proto::Position { game: Some(P::Tetris(proto::Tetris { rows: rows.iter().map(|r| r.to_string()).collect() })) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_form_games_answer_like_the_engine_and_their_best_moves_win() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let mut random = SplitMix::new(4);
    for kind in [GameTag::Reclamation, GameTag::DiagonalWalk] {
        for _ in 0..150 {
            let position = random_position(&mut random, kind, SMALL_SIDES);
            let answer = client.solve(solve_request(position.clone())).await.unwrap().into_inner();
            let expected = engine_value(&position);
            assert_eq!(answer.grundy, expected.nimber(), "{position:?}");

            let best = client
                .best_move(proto::BestMoveRequest { position: Some(position.clone()), ..Default::default() })
                .await
                .unwrap()
                .into_inner();
            let domain = nimber::wire::position_from_proto(Some(position.clone())).unwrap();
            assert_eq!(best.r#move.is_some(), !domain.moves().is_empty(), "terminal iff no move: {position:?}");
            if let Some(after) = best.after {
                let after_answer = client.solve(solve_request(after)).await.unwrap().into_inner();
                if answer.outcome() == Outcome::NextPlayerWins {
                    assert_eq!(after_answer.outcome(), Outcome::PreviousPlayerWins, "{position:?}");
                }
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_reclamation_and_walk_positions_are_exact() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let strip = proto::Position {
        game: Some(P::Reclamation(proto::Reclamation {
            rows: 1_000_000_000_000_000_000,
            reclaimed: vec![proto::Cell { row: 5, column: 2 }, proto::Cell { row: 999_999_999_999, column: 1 }],
        })),
    };
    let walk = proto::Position {
        game: Some(P::DiagonalWalk(proto::DiagonalWalk {
            rows: u64::MAX,
            columns: u64::MAX - 1,
            step: u64::MAX,
            row: 0,
            column: 0,
        })),
    };
    for position in [strip, walk] {
        let answer = client.solve(solve_request(position.clone())).await.unwrap().into_inner();
        assert_eq!(answer.grundy, engine_value(&position).nimber());
        let best = client
            .best_move(proto::BestMoveRequest { position: Some(position), ..Default::default() })
            .await
            .unwrap()
            .into_inner();
        if answer.outcome() == Outcome::NextPlayerWins {
            let after = client.solve(solve_request(best.after.unwrap())).await.unwrap().into_inner();
            assert_eq!(after.outcome(), Outcome::PreviousPlayerWins);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_reclamation_walk_and_board_name_the_field() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let reclamation = |rows, cells: &[(u64, u64)]| proto::Position {
        game: Some(P::Reclamation(proto::Reclamation {
            rows,
            reclaimed: cells.iter().map(|&(row, column)| proto::Cell { row, column }).collect(),
        })),
    };
    let walk = |rows, columns, step, row, column| proto::Position {
        game: Some(P::DiagonalWalk(proto::DiagonalWalk { rows, columns, step, row, column })),
    };
    let cases = [
        (reclamation(0, &[]), "reclamation.rows"),
        (reclamation(5, &[(6, 1)]), "reclamation.reclaimed[0]"),
        (reclamation(5, &[(2, 3)]), "reclamation.reclaimed[0].column"),
        (reclamation(5, &[(2, 1), (3, 2)]), "forbid"),
        (reclamation(5, &[(2, 1), (2, 1)]), "reclamation.reclaimed[1]"),
        (walk(0, 5, 1, 1, 1), "diagonal_walk.rows"),
        (walk(5, 5, 0, 1, 1), "diagonal_walk.step"),
        (walk(5, 5, 1, 6, 1), "diagonal_walk.row"),
        (tetris(&["000", "00"]), "tetris.rows[1]"),
        (tetris(&["00x"]), "tetris.rows[0]"),
        (tetris(&[]), "tetris.rows"),
        (tetris(&["0000000000000000"; 17]), "256"),
        (tetris(&["00"; 65]), "64"),
    ];
    for (position, field) in cases {
        let status = client.solve(solve_request(position)).await.expect_err("rejected");
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(field), "{field} not in {:?}", status.message());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tetris_boards_answer_like_the_engine_and_best_moves_win() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let samples = [
        (&["0000", "0000", "0000", "0000"][..], Outcome::NextPlayerWins),
        (&["0000", "0010", "0100", "0000"][..], Outcome::PreviousPlayerWins),
    ];
    for (rows, outcome) in samples {
        let answer = client.solve(solve_request(tetris(rows))).await.unwrap().into_inner();
        assert_eq!(answer.outcome(), outcome, "{rows:?}");
    }
    let mut random = SplitMix::new(3);
    for _ in 0..40 {
        let position = random_position(&mut random, GameTag::Tetris, SMALL_SIDES);
        let answer = client.solve(solve_request(position.clone())).await.unwrap().into_inner();
        assert_eq!(answer.grundy, engine_value(&position).nimber(), "{position:?}");
        let best = client
            .best_move(proto::BestMoveRequest { position: Some(position.clone()), ..Default::default() })
            .await
            .unwrap()
            .into_inner();
        if answer.outcome() == Outcome::NextPlayerWins {
            let after = client.solve(solve_request(best.after.expect("a winning move"))).await.unwrap().into_inner();
            assert_eq!(after.outcome(), Outcome::PreviousPlayerWins, "{position:?}");
        }
    }
}

/// Solves `cold` on a server with a fresh store (which must compute), restarts it on the same
/// store, and solves `warm` (which must equal it, with nothing computed and values read from the
/// store); returns the restarted server.
async fn warm_after_restart(cold: proto::Position, warm: proto::Position, data_dir: &std::path::Path) -> TestServer {
    let first = {
        let mut server = TestServer::builder().data_dir(data_dir).start();
        let mut client = server.client().await;
        let answer = client.solve(solve_request(cold)).await.unwrap().into_inner();
        assert!(answer.stats.as_ref().unwrap().positions_computed > 0, "a cold solve computes");
        drop(client);
        assert!(server.stop(), "clean shutdown");
        answer
    };
    let server = TestServer::builder().data_dir(data_dir).start();
    let mut client = server.client().await;
    let again = client.solve(solve_request(warm)).await.unwrap().into_inner();
    assert_eq!((again.outcome, again.grundy), (first.outcome, first.grundy));
    let stats = again.stats.unwrap();
    assert_eq!(stats.positions_computed, 0, "{stats:?}");
    assert!(stats.cache_hits > 0, "{stats:?}");
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_solved_board_is_served_from_the_store_after_a_restart() {
    let data_dir = tempfile::tempdir().unwrap();
    let board = tetris(&["0000000"; 7]);
    warm_after_restart(board.clone(), board, data_dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_too_short_is_deadline_exceeded_and_the_server_keeps_serving() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let mut request = tonic::Request::new(solve_request(tetris(&["000000000000"; 12])));
    request.set_timeout(std::time::Duration::from_millis(200));
    let status = client.solve(request).await.expect_err("a 12×12 board takes longer than 200 ms");
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    let small = client.solve(solve_request(tetris(&["0000"; 4]))).await.unwrap().into_inner();
    assert_eq!(small.outcome(), Outcome::NextPlayerWins);
}

fn heaps(code: &str, heaps: Vec<u64>) -> proto::Position {
    let rules = Some(proto::heaps::Rules::Code(code.into()));
    proto::Position { game: Some(P::Heaps(proto::Heaps { rules, heaps })) }
}

fn computed(up_to: u64) -> Option<proto::heap_values::Known> {
    Some(proto::heap_values::Known::Computed(proto::ComputedValues { up_to }))
}

/// At the bound: a heap at `--max-heap-compute` is computed, one past it is FAILED_PRECONDITION
/// saying how far the values are known and how to extend them, counted, and the server goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heaps_past_the_compute_limit_are_failed_precondition_and_counted() {
    let server =
        TestServer::builder().flags(&["--max-heap-compute", "2000", "--metrics-listen", "127.0.0.1:0"]).start();
    let mut client = server.client().await;
    let at = client.solve(solve_request(heaps("4!.0", vec![2000]))).await.unwrap().into_inner();
    assert_eq!(at.heap_values.len(), 1, "{at:?}");
    assert_eq!((at.heap_values[0].rules.as_str(), at.heap_values[0].known), ("4!.0", computed(2001)));
    let status = client.solve(solve_request(heaps("4!.0", vec![3, 2001]))).await.unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    for says in ["2000", "below 2001", "an Explore heapSequence job"] {
        assert!(status.message().contains(says), "{says:?} in {status:?}");
    }
    let status = client
        .best_move(proto::BestMoveRequest { position: Some(heaps("4!.0", vec![5000])), ..Default::default() })
        .await;
    assert_eq!(status.unwrap_err().code(), Code::FailedPrecondition);
    let metrics = common::scrape(server.metrics_url.as_ref().unwrap());
    assert_eq!(common::sample(&metrics, "nimber_past_compute_limit_total"), 2.0);
    // Proven rules answer any heap, and the server goes on serving.
    let kayles = client.solve(solve_request(heaps("0.77", vec![u64::MAX]))).await.unwrap().into_inner();
    assert!(kayles.grundy.is_some());
    let again = client.solve(solve_request(heaps("4!.0", vec![1999]))).await.unwrap().into_inner();
    assert_eq!(again.stats.unwrap().positions_computed, 0);
}

/// At the bound of the in-process values: with `--heap-values-cache-bytes` below one rule set's
/// values, the process keeps none (the metric says 0 bytes) and a second call reads the values back
/// from the store rather than computing them again; with room, the metric counts them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heap_values_past_the_cache_bound_are_read_back_from_the_store() {
    let data = tempfile::tempdir().unwrap();
    let flags = ["--heap-values-cache-bytes", "1000", "--metrics-listen", "127.0.0.1:0"];
    let server = TestServer::builder().data_dir(data.path()).flags(&flags).start();
    let mut client = server.client().await;
    let first = client.solve(solve_request(heaps("4!.0", vec![3000]))).await.unwrap().into_inner();
    assert!(first.stats.unwrap().positions_computed > 0);
    let held = |server: &TestServer| {
        let metrics = common::scrape(server.metrics_url.as_ref().unwrap());
        common::sample(&metrics, "nimber_game_values_cache_bytes{game=\"heaps\"}")
    };
    assert_eq!(held(&server), 0.0, "3001 values of 2 bytes do not fit in 1000 bytes");
    let again = client.solve(solve_request(heaps("4!.0", vec![3000]))).await.unwrap().into_inner();
    assert_eq!(again.grundy, first.grundy);
    let stats = again.stats.unwrap();
    assert_eq!((stats.positions_computed, stats.cache_hits), (0, 1), "read back from the store: {stats:?}");
    drop(client);
    drop(server);

    let server = TestServer::builder().flags(&["--metrics-listen", "127.0.0.1:0"]).start();
    let mut client = server.client().await;
    client.solve(solve_request(heaps("4!.0", vec![3000]))).await.unwrap();
    assert!(held(&server) >= 6002.0, "the default bound holds them: {}", held(&server));
}

/// Every answer says how the heap values are known: proven (with the period, the preperiod, the
/// saltus and the bound checked), or computed (with how far), once for each rule set of a sum.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heap_answers_say_how_their_values_are_known() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let proven = Some(proto::heap_values::Known::Proven(proto::HeapPeriod {
        preperiod: 71,
        period: 12,
        saltus: 0,
        checked_to: 2 * 71 + 12 + 2 + 1,
    }));
    let kayles = client.solve(solve_request(heaps("0.77", vec![1_000_000_000_000_000_000]))).await.unwrap();
    let kayles = kayles.into_inner().heap_values;
    assert_eq!(kayles, vec![proto::HeapValues { rules: "0.77".into(), known: proven }]);
    let sum = proto::Position {
        game: Some(P::Sum(proto::Sum {
            components: vec![
                heaps("0.77", vec![10, 1 << 40]),
                heaps("4!.0", vec![1000]),
                heaps("0.77", vec![3]),
                tetris(&["000", "000"]),
            ],
        })),
    };
    let best = client
        .best_move(proto::BestMoveRequest { position: Some(sum.clone()), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let grundy = &best.heap_values;
    assert_eq!(grundy.len(), 2, "{grundy:?}");
    assert_eq!(grundy[0].known, proven);
    assert_eq!(grundy[1].rules, "4!.0");
    let Some(proto::heap_values::Known::Computed(values)) = &grundy[1].known else { panic!("{grundy:?}") };
    assert!(values.up_to >= 1001, "{values:?}");
    let analysis = proto::AnalyzeRequest { position: Some(sum), limit: 3, ..Default::default() };
    assert_eq!(client.analyze(analysis).await.unwrap().into_inner().heap_values.len(), 2);
    let cutting = client.solve(solve_request(common::cheap_position())).await.unwrap().into_inner();
    assert!(cutting.heap_values.is_empty());
}

/// The values of rules with no proven period survive a restart: the second answer reads them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heap_values_are_served_from_the_store_after_a_restart() {
    let data_dir = tempfile::tempdir().unwrap();
    let position = heaps("4!.0", vec![200_000]);
    let first = {
        let mut server = TestServer::builder().data_dir(data_dir.path()).start();
        let mut client = server.client().await;
        let answer = client.solve(solve_request(position.clone())).await.unwrap().into_inner();
        assert!(answer.stats.as_ref().unwrap().positions_computed >= 200_000, "a cold solve computes");
        drop(client);
        assert!(server.stop(), "clean shutdown");
        answer
    };
    let server = TestServer::builder().data_dir(data_dir.path()).start();
    let mut client = server.client().await;
    let again = client.solve(solve_request(position)).await.unwrap().into_inner();
    assert_eq!(again.grundy, first.grundy);
    let stats = again.stats.unwrap();
    assert_eq!((stats.positions_computed, stats.cache_hits), (0, 1), "{stats:?}");
    assert_eq!(again.heap_values, first.heap_values);
}

fn cram(rows: &[&str]) -> proto::Position {
    proto::Position { game: Some(P::Cram(proto::Cram { rows: rows.iter().map(|row| row.to_string()).collect() })) }
}

/// Cram through the real server: published values of full boards (Glop's records, as in the
/// tests of `games::cram`), random boards like the engine, winning dominoes lead to 0, Analyze, a
/// sum with the 2×2 game, and bad boards named by field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cram_answers_like_the_engine_and_its_winning_dominoes_lead_to_zero() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    // Whether the kernel searches it: 3×6 is in the table of every set inside 4×6 cells, 6×6 and
    // 10×10 are 0 by the half turn.
    for (rows, columns, value, searched) in
        [(3, 6, 4, false), (4, 7, 3, true), (5, 6, 2, true), (6, 6, 0, false), (10, 10, 0, false)]
    {
        let board: Vec<String> = vec!["0".repeat(columns); rows];
        let board: Vec<&str> = board.iter().map(String::as_str).collect();
        let answer = client.solve(solve_request(cram(&board))).await.unwrap().into_inner();
        assert_eq!(answer.grundy, Some(value), "{rows}x{columns}");
        // A search on the kernel reports its counts, and the read of the board's component from
        // the store before it.
        let search = answer.stats.and_then(|stats| stats.search).expect("search counts");
        assert_eq!(search.expanded > 0, searched, "{rows}x{columns}: {search:?}");
        assert!(!searched || search.table_lookups > search.expanded && search.store_reads >= 1, "{search:?}");
    }
    let mut random = SplitMix::new(9);
    for _ in 0..40 {
        let position = random_position(&mut random, GameTag::Cram, 6);
        let answer = client.solve(solve_request(position.clone())).await.unwrap().into_inner();
        assert_eq!(answer.grundy, engine_value(&position).nimber(), "{position:?}");
        let best = client
            .best_move(proto::BestMoveRequest { position: Some(position.clone()), ..Default::default() })
            .await
            .unwrap()
            .into_inner();
        if answer.outcome() == Outcome::NextPlayerWins {
            let Some(proto::r#move::Game::Cram(domino)) = best.r#move.and_then(|mv| mv.game) else {
                panic!("a domino: {position:?}")
            };
            assert_ne!(domino.orientation, 0, "{domino:?}");
            let after = client.solve(solve_request(best.after.expect("a winning move"))).await.unwrap().into_inner();
            assert_eq!(after.grundy, Some(0), "{position:?} with {domino:?}");
        }
    }
    let board = cram(&["0000", "0010", "0000"]);
    let analysis = proto::AnalyzeRequest { position: Some(board.clone()), ..Default::default() };
    let analysis = client.analyze(analysis).await.unwrap().into_inner();
    assert_eq!(analysis.total_moves, 13);
    for analysed in &analysis.moves {
        assert_eq!(analysed.winning, analysed.grundy == Some(0), "{analysed:?}");
    }
    let tetris = proto::Position { game: Some(P::Tetris(proto::Tetris { rows: vec!["000".into(); 3] })) };
    let sum = proto::Position { game: Some(P::Sum(proto::Sum { components: vec![board, tetris] })) };
    let answer = client.solve(solve_request(sum.clone())).await.unwrap().into_inner();
    assert_eq!(answer.grundy, engine_value(&sum).nimber());
    let cases = [
        (cram(&["000", "00"]), "cram.rows[1] has 2 columns but cram.rows[0] has 3"),
        (cram(&["0x0"]), "cram.rows[0] column 2 is 'x'"),
        (cram(&[]), "cram.rows is empty"),
    ];
    for (position, says) in cases {
        let status = client.solve(solve_request(position)).await.expect_err("rejected");
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(says), "{says:?} not in {:?}", status.message());
    }
}

fn node_kayles(vertices: u32, edges: &[(u32, u32)]) -> proto::Position {
    let edges = edges.iter().map(|&(from, to)| proto::Edge { from, to }).collect();
    proto::Position { game: Some(P::NodeKayles(proto::NodeKayles { vertices, edges })) }
}

/// The path 1–2–…–n.
fn node_kayles_path(n: u32) -> proto::Position {
    node_kayles(n, &(1..n).map(|v| (v, v + 1)).collect::<Vec<_>>())
}

/// Node Kayles through the real server: a path is worth 0.137's heap of its length, random graphs
/// answer like the engine, best moves and Analyze's winning moves lead to value 0, and a sum with a
/// heap game is solved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_kayles_answers_like_0_137_and_the_engine_and_best_moves_win() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    for n in [0, 1, 5, 17, 40, 70, 128] {
        let on_path = client.solve(solve_request(node_kayles_path(n))).await.unwrap().into_inner();
        let on_heap = client.solve(solve_request(heaps("0.137", vec![u64::from(n)]))).await.unwrap().into_inner();
        assert_eq!(on_path.grundy, on_heap.grundy, "P_{n}");
    }
    let mut random = SplitMix::new(7);
    for _ in 0..60 {
        let position = random_position(&mut random, GameTag::NodeKayles, 16);
        let answer = client.solve(solve_request(position.clone())).await.unwrap().into_inner();
        assert_eq!(answer.grundy, engine_value(&position).nimber(), "{position:?}");
        let best = client
            .best_move(proto::BestMoveRequest { position: Some(position.clone()), ..Default::default() })
            .await
            .unwrap()
            .into_inner();
        if answer.outcome() == Outcome::NextPlayerWins {
            let Some(proto::r#move::Game::NodeKayles(choice)) = best.r#move.and_then(|mv| mv.game) else {
                panic!("a vertex: {position:?}")
            };
            let after = client.solve(solve_request(best.after.expect("a winning move"))).await.unwrap().into_inner();
            assert_eq!(after.grundy, Some(0), "{position:?} choosing {choice:?}");
        }
    }
    // A 5-cycle with a pendant vertex: choosing the pendant leaves P_4, of value 0; its analysis ...
    let graph = node_kayles(6, &[(1, 2), (2, 3), (3, 4), (4, 5), (5, 1), (1, 6)]);
    let answer = client.solve(solve_request(graph.clone())).await.unwrap().into_inner();
    assert_ne!(answer.grundy, Some(0));
    let analysis = proto::AnalyzeRequest { position: Some(graph.clone()), ..Default::default() };
    let analysis = client.analyze(analysis).await.unwrap().into_inner();
    assert_eq!((analysis.total_moves, analysis.grundy), (6, answer.grundy));
    assert!(analysis.winning_moves > 0);
    for analysed in &analysis.moves {
        assert_eq!(analysed.winning, analysed.grundy == Some(0), "{analysed:?}");
    }
    // ... and in a sum with heaps of 0.137, a sum of two equal values, so the player to move loses.
    let sum = proto::Position {
        game: Some(P::Sum(proto::Sum { components: vec![node_kayles_path(30), heaps("0.137", vec![30])] })),
    };
    let answer = client.solve(solve_request(sum.clone())).await.unwrap().into_inner();
    assert_eq!((answer.grundy, answer.outcome()), (Some(0), Outcome::PreviousPlayerWins));
    let sum =
        proto::Position { game: Some(P::Sum(proto::Sum { components: vec![graph, heaps("0.77", vec![1000, 3])] })) };
    let answer = client.solve(solve_request(sum.clone())).await.unwrap().into_inner();
    assert_eq!(answer.grundy, engine_value(&sum).nimber());
    let best = client
        .best_move(proto::BestMoveRequest { position: Some(sum), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    if answer.outcome() == Outcome::NextPlayerWins {
        let after = client.solve(solve_request(best.after.unwrap())).await.unwrap().into_inner();
        assert_eq!(after.grundy, Some(0));
    }
}

fn node_kayles_board(rows: &[String]) -> proto::Position {
    proto::Position { game: Some(P::NodeKaylesBoard(proto::NodeKaylesBoard { rows: rows.to_vec() })) }
}

/// Node Kayles on a board through the real server: the published values of 3×n grids (OEIS
/// A316632), random boards valued like their graphs through the graph form, winning cells lead to
/// 0, and bad boards named by field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_kayles_boards_have_their_graphs_values_and_winning_cells_lead_to_zero() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    for (columns, value) in [(4, 0), (12, 5), (16, 3)] {
        let answer = client.solve(solve_request(node_kayles_board(&vec!["0".repeat(columns); 3]))).await;
        assert_eq!(answer.unwrap().into_inner().grundy, Some(value), "3x{columns}");
    }
    let mut random = SplitMix::new(11);
    for _ in 0..30 {
        let (height, width) = (1 + random.below(5) as usize, 1 + random.below(6) as usize);
        let rows = nimber::random::random_board(&mut random, height, width, 25);
        let position = node_kayles_board(&rows);
        let answer = client.solve(solve_request(position.clone())).await.unwrap().into_inner();
        // The same board as a graph: free cells row-major are the vertices, sides the edges.
        let number = |r: usize, c: usize| {
            let before: usize = rows[..r].iter().map(|row| row.matches('0').count()).sum();
            (before + rows[r][..c].matches('0').count() + 1) as u32
        };
        let free = |r: usize, c: usize| rows.get(r).and_then(|row| row.as_bytes().get(c)) == Some(&b'0');
        let mut edges = Vec::new();
        for r in 0..height {
            for c in (0..width).filter(|&c| free(r, c)) {
                for (r2, c2) in [(r, c + 1), (r + 1, c)].into_iter().filter(|&(r2, c2)| free(r2, c2)) {
                    edges.push((number(r, c), number(r2, c2)));
                }
            }
        }
        let vertices = rows.iter().map(|row| row.matches('0').count() as u32).sum();
        let graph = client.solve(solve_request(node_kayles(vertices, &edges))).await.unwrap().into_inner();
        assert_eq!(answer.grundy, graph.grundy, "{rows:?}");
        let best = client
            .best_move(proto::BestMoveRequest { position: Some(position.clone()), ..Default::default() })
            .await
            .unwrap()
            .into_inner();
        if answer.outcome() == Outcome::NextPlayerWins {
            let Some(proto::r#move::Game::NodeKaylesBoard(cell)) = best.r#move.and_then(|mv| mv.game) else {
                panic!("a cell: {position:?}")
            };
            let after = client.solve(solve_request(best.after.expect("a winning move"))).await.unwrap().into_inner();
            assert_eq!(after.grundy, Some(0), "{rows:?} choosing {cell:?}");
        }
    }
    let long = vec!["0".repeat(65)];
    let cases = [
        (node_kayles_board(&["000".into(), "00".into()]), "node_kayles_board.rows[1] has 2 columns"),
        (node_kayles_board(&long), "node_kayles_board.rows[0] has 65 columns; the limit is 64"),
    ];
    for (position, says) in cases {
        let status = client.solve(solve_request(position)).await.expect_err("rejected");
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(says), "{says:?} not in {:?}", status.message());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_node_kayles_graphs_name_the_field() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let cases = [
        (node_kayles(3, &[(1, 2), (2, 2)]), "node_kayles.edges[1] is a self-loop at vertex 2"),
        (node_kayles(4, &[(1, 2), (3, 4), (2, 1)]), "node_kayles.edges[2] repeats node_kayles.edges[0]"),
        (node_kayles(4, &[(1, 5)]), "node_kayles.edges[0].to is 5; a vertex is from 1 to vertices = 4"),
        (node_kayles(4, &[(0, 1)]), "node_kayles.edges[0].from is 0"),
        (node_kayles(129, &[]), "node_kayles.vertices is 129; the limit is 128"),
    ];
    for (position, says) in cases {
        let status = client.solve(solve_request(position)).await.expect_err("rejected");
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(says), "{says:?} not in {:?}", status.message());
    }
}

/// A random graph: each pair of `vertices` joined with probability `percent`.
fn random_node_kayles(random: &mut SplitMix, vertices: u32, percent: u64) -> proto::Position {
    let edges: Vec<(u32, u32)> = (1..=vertices)
        .flat_map(|u| (u + 1..=vertices).map(move |w| (u, w)))
        .filter(|_| random.percent(percent))
        .collect();
    node_kayles(vertices, &edges)
}

/// A solved graph's components are in the store under their canonical keys: after a restart the
/// same graph, its vertices renumbered, is answered with nothing computed; a deadline too short
/// for a large graph is DEADLINE_EXCEEDED and the server goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_kayles_components_are_served_from_the_store_after_a_restart() {
    let data_dir = tempfile::tempdir().unwrap();
    let mut random = SplitMix::new(12);
    let graph = random_node_kayles(&mut random, 28, 12);
    let Some(P::NodeKayles(message)) = &graph.game else { unreachable!("a graph") };
    let renumber = |v: u32| (v * 11) % 29;
    let edges: Vec<(u32, u32)> = message.edges.iter().map(|edge| (renumber(edge.from), renumber(edge.to))).collect();
    let twin = node_kayles(28, &edges);
    let server = warm_after_restart(graph, twin, data_dir.path()).await;
    let mut client = server.client().await;
    let mut request = tonic::Request::new(solve_request(random_node_kayles(&mut random, 48, 5)));
    request.set_timeout(std::time::Duration::from_millis(200));
    let status = client.solve(request).await.expect_err("a 48-vertex sparse graph takes longer than 200 ms");
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    let small = client.solve(solve_request(node_kayles_path(5))).await.unwrap().into_inner();
    assert_eq!(small.grundy, Some(3));
}
