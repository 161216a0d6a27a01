//! Misère play through the real server: misère Nim by Bouton's rule at heaps of any size, sums of
//! tame components by their genera, other games and sums by search (each winning move checked by asking again about the position it
//! leads to), SolveStream items, Analyze and Explore jobs in misère play, and what is refused: the
//! cutting game, an unknown `play`, a misère job split across replicas, play too long to search,
//! an analysis of too many moves, a deadline.

mod common;

use std::time::Duration;

use common::{sample, scrape, solve_request, wait_until, with_timeout, TestServer};
use nimber::proto::{self, position::Game as P, Outcome, Play};
use tonic::Code;
use tonic_types::StatusExt;

fn nim(heaps: Vec<u64>) -> proto::Position {
    proto::Position { game: Some(P::Heaps(proto::Heaps { rules: Some(proto::heaps::Rules::Nim(true)), heaps })) }
}

fn cram(rows: &[&str]) -> proto::Position {
    proto::Position { game: Some(P::Cram(proto::Cram { rows: rows.iter().map(|row| row.to_string()).collect() })) }
}

fn misere(position: proto::Position) -> proto::SolveRequest {
    proto::SolveRequest { play: Play::Misere as i32, ..solve_request(position) }
}

fn best_misere(position: proto::Position) -> proto::BestMoveRequest {
    proto::BestMoveRequest { position: Some(position), play: Play::Misere as i32 }
}

fn rule(basis: Option<proto::MisereBasis>) -> Option<String> {
    match basis?.basis? {
        proto::misere_basis::Basis::Rule(rule) => Some(rule),
        _ => None,
    }
}

fn kayles(heaps: Vec<u64>) -> proto::Position {
    proto::Position {
        game: Some(P::Heaps(proto::Heaps { rules: Some(proto::heaps::Rules::Code("0.77".into())), heaps })),
    }
}

/// The heap of four of 0.312, which is not tame (genus 2^1420).
fn wild_heap() -> proto::Position {
    proto::Position {
        game: Some(P::Heaps(proto::Heaps { rules: Some(proto::heaps::Rules::Code("0.312".into())), heaps: vec![4] })),
    }
}

fn sum(components: Vec<proto::Position>) -> proto::Position {
    proto::Position { game: Some(P::Sum(proto::Sum { components })) }
}

/// A sum of tame components (a Cram strip, a Kayles row, Nim heaps; stone boxes, box by box) is
/// answered by genus theory:
/// each component's genus symbol in Winning Ways' notation, and a winning move whose position the
/// other player loses (asked again, and answered by genus again). A sum with a component that is
/// not tame (the heap of four of 0.312, genus 2^1420) is searched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sums_of_tame_components_are_answered_by_their_genera() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let tame = sum(vec![cram(&["00000"]), kayles(vec![3]), nim(vec![2]), nim(vec![3])]);
    let answer = client.solve(misere(tame.clone())).await.unwrap().into_inner();
    let Some(proto::misere_basis::Basis::Genus(genus)) = answer.misere.clone().and_then(|basis| basis.basis) else {
        panic!("expected genus theory")
    };
    assert_eq!(genus.components, ["0^120", "3^31", "2^20", "3^31"]);
    // Firm, and the XOR of 0, 3, 2 and 3 is 2: the player to move wins.
    assert_eq!(answer.outcome(), Outcome::NextPlayerWins);
    let best = client.best_move(best_misere(tame)).await.unwrap().into_inner();
    let reply = client.solve(misere(best.after.unwrap())).await.unwrap().into_inner();
    assert_eq!(reply.outcome(), Outcome::PreviousPlayerWins);
    assert!(matches!(reply.misere.and_then(|basis| basis.basis), Some(proto::misere_basis::Basis::Genus(_))));

    // Several boxes are a sum of boxes: each box's genus, and a winning move in the right box.
    let boxes = |boxes: &[(u64, u64)]| proto::Position {
        game: Some(P::StoneBoxes(proto::StoneBoxes {
            boxes: boxes.iter().map(|&(capacity, stones)| proto::StoneBox { capacity, stones }).collect(),
        })),
    };
    let three = boxes(&[(30, 1), (50, 2), (20, 3)]);
    let best = client.best_move(best_misere(three)).await.unwrap().into_inner();
    let Some(proto::misere_basis::Basis::Genus(genus)) = best.misere.clone().and_then(|basis| basis.basis) else {
        panic!("expected genus theory")
    };
    assert_eq!(genus.components, ["0^02", "4^46", "0^02"]);
    assert_eq!(best.outcome(), Outcome::NextPlayerWins, "firm, and the XOR is 4");
    let reply = client.solve(misere(best.after.unwrap())).await.unwrap().into_inner();
    assert_eq!(reply.outcome(), Outcome::PreviousPlayerWins);

    let wild = client.solve(misere(sum(vec![wild_heap(), nim(vec![1])]))).await.unwrap().into_inner();
    assert!(matches!(wild.misere.and_then(|basis| basis.basis), Some(proto::misere_basis::Basis::Search(_))));
}

/// Bouton's misère rule on heaps up to 2^64 − 1: the outcome, a winning move whose position the
/// other player loses, no Grundy value, and the rule named; a normal-play answer of the same
/// position differs where the theory says it does (all heaps of one token).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misere_nim_is_answered_by_boutons_rule_at_any_size() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    // (heaps, whether the player to move wins in misère play)
    let cases = [
        (vec![], true),
        (vec![1], false),
        (vec![1, 1], true),
        (vec![1, 1, 1], false),
        (vec![u64::MAX], true),
        (vec![u64::MAX, u64::MAX], false),
        (vec![u64::MAX, u64::MAX - 1, 1], false),
        (vec![u64::MAX, 1, 1], true),
        (vec![5, 3, 6, 1 << 40], true),
    ];
    for (heaps, wins) in cases {
        let answer = client.solve(misere(nim(heaps.clone()))).await.unwrap().into_inner();
        let expected = if wins { Outcome::NextPlayerWins } else { Outcome::PreviousPlayerWins };
        assert_eq!((answer.outcome(), answer.grundy), (expected, None), "{heaps:?}");
        assert_eq!(rule(answer.misere).as_deref(), Some("misère Nim (Bouton 1902)"));
        let best = client.best_move(best_misere(nim(heaps.clone()))).await.unwrap().into_inner();
        assert_eq!(best.outcome(), expected);
        if wins && !heaps.is_empty() {
            let after = best.after.expect("a winning move's position");
            let reply = client.solve(misere(after)).await.unwrap().into_inner();
            assert_eq!(reply.outcome(), Outcome::PreviousPlayerWins, "{heaps:?}: {:?}", best.r#move);
        }
        if heaps.is_empty() {
            assert!(best.r#move.is_none(), "no move: the player to move has won");
        }
    }
    let normal = client.solve(solve_request(nim(vec![1, 1, 1]))).await.unwrap().into_inner();
    assert_eq!((normal.outcome(), normal.misere), (Outcome::NextPlayerWins, None));
}

/// A Cram board and a sum of a board, Nim heaps and a heap that is not tame are searched: the answer says so, and each
/// winning move leaves a position the other player loses (asked again); SolveStream answers
/// misère items beside normal ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_games_and_sums_are_searched_in_misere_play() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let sum = proto::Position {
        game: Some(P::Sum(proto::Sum {
            components: vec![cram(&["0000", "0010", "0000"]), nim(vec![2, 3]), wild_heap()],
        })),
    };
    for position in [cram(&["000", "000", "000"]), cram(&["0000", "0000"]), sum.clone()] {
        let answer = client.solve(misere(position.clone())).await.unwrap().into_inner();
        let searched = match answer.misere.and_then(|basis| basis.basis) {
            Some(proto::misere_basis::Basis::Search(search)) => search.positions,
            other => panic!("expected a search, got {other:?}"),
        };
        assert!(searched > 0);
        let best = client.best_move(best_misere(position.clone())).await.unwrap().into_inner();
        assert_eq!(best.outcome, answer.outcome);
        if best.outcome() == Outcome::NextPlayerWins {
            let reply = client.solve(misere(best.after.unwrap())).await.unwrap().into_inner();
            assert_eq!(reply.outcome(), Outcome::PreviousPlayerWins, "{position:?}");
        }
    }
    let items = vec![misere(nim(vec![1])), solve_request(nim(vec![1])), misere(sum)];
    let mut stream = client.solve_stream(tokio_stream::iter(items)).await.unwrap().into_inner();
    let mut outcomes = Vec::new();
    while let Some(item) = stream.message().await.unwrap() {
        outcomes.push((item.outcome(), item.misere.is_some()));
    }
    assert_eq!(outcomes[..2], [(Outcome::PreviousPlayerWins, true), (Outcome::NextPlayerWins, false)]);
    assert_eq!(outcomes.len(), 3);
}

fn analyze_misere(position: proto::Position, limit: u32, page_token: String) -> proto::AnalyzeRequest {
    proto::AnalyzeRequest {
        position: Some(position),
        play: Play::Misere as i32,
        limit,
        page_token,
        ..Default::default()
    }
}

/// A misère Analyze lists every move with who wins after it, winning moves first, no Grundy value,
/// and what it rests on (a search, genus theory, Bouton's rule), with the outcome Solve gives and the
/// first winning move BestMove gives; pages put together are the whole listing. (Each move's outcome
/// is checked against a brute force in the unit tests.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misere_analysis_judges_every_move() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let tame = sum(vec![cram(&["00000"]), kayles(vec![3]), nim(vec![2]), nim(vec![3])]);
    for (position, basis) in [(cram(&["0000", "0000"]), "search"), (tame, "genus"), (nim(vec![1, 4, 6]), "rule")] {
        let whole = client.analyze(analyze_misere(position.clone(), 1000, String::new())).await.unwrap().into_inner();
        let solved = client.solve(misere(position.clone())).await.unwrap().into_inner();
        assert_eq!((whole.outcome, whole.grundy), (solved.outcome, None));
        let rests_on = match whole.misere.clone().and_then(|basis| basis.basis) {
            Some(proto::misere_basis::Basis::Search(_)) => "search",
            Some(proto::misere_basis::Basis::Genus(_)) => "genus",
            Some(proto::misere_basis::Basis::Rule(_)) => "rule",
            None => "none",
        };
        assert_eq!(rests_on, basis);
        assert_eq!(whole.moves.len() as u64, whole.total_moves);
        let winning = whole.moves.iter().take_while(|analysis| analysis.winning).count() as u64;
        assert_eq!(winning, whole.winning_moves, "winning moves first");
        assert_eq!(winning > 0, whole.outcome() == Outcome::NextPlayerWins);
        let best = client.best_move(best_misere(position.clone())).await.unwrap().into_inner();
        for analysis in &whole.moves {
            assert_eq!(analysis.grundy, None);
            assert_eq!(analysis.winning, analysis.outcome() == Outcome::PreviousPlayerWins);
        }
        if let Some(first) = whole.moves.first().filter(|analysis| analysis.winning) {
            assert_eq!(best.r#move, first.r#move, "the best move is the first winning move in move order");
        }
        let mut paged = Vec::new();
        let mut token = String::new();
        loop {
            let page = client.analyze(analyze_misere(position.clone(), 3, token)).await.unwrap().into_inner();
            paged.extend(page.moves);
            token = page.next_page_token;
            if token.is_empty() {
                break;
            }
        }
        assert_eq!(paged, whole.moves);
    }
}

/// Explore `solve` and `best_move` jobs answer misère play as Solve and BestMove do, with what
/// the answer rests on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explore_jobs_answer_misere_play() {
    use nimber::google::longrunning as lro;
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let mut operations = common::jobs::operations(&server).await;
    let board = cram(&["0000", "0000", "0000"]);
    let tame = sum(vec![cram(&["00000"]), kayles(vec![3]), nim(vec![2]), nim(vec![3])]);
    let jobs = [
        proto::explore_request::Job::Solve(misere(board.clone())),
        proto::explore_request::Job::BestMove(best_misere(tame.clone())),
    ];
    let mut answers = Vec::new();
    for job in jobs {
        let request = proto::ExploreRequest { job: Some(job), ..Default::default() };
        let name = client.explore(request).await.unwrap().into_inner().name;
        let done = operations.wait_operation(lro::WaitOperationRequest { name, timeout: None }).await.unwrap();
        answers.push(common::jobs::result(&done.into_inner()).answer.expect("an answer"));
    }
    let solved = client.solve(misere(board)).await.unwrap().into_inner();
    let Some(proto::explore_result::Answer::Solve(job_solved)) = answers[0].clone().into() else {
        panic!("{answers:?}")
    };
    assert_eq!((job_solved.outcome, job_solved.misere.is_some()), (solved.outcome, true));
    let best = client.best_move(best_misere(tame)).await.unwrap().into_inner();
    let Some(proto::explore_result::Answer::BestMove(job_best)) = answers[1].clone().into() else {
        panic!("{answers:?}")
    };
    assert_eq!((job_best.outcome, &job_best.r#move, &job_best.misere), (best.outcome, &best.r#move, &best.misere));
}

/// At the misère table's bound (a quarter of `--table-entries`) a search keeps going without
/// keeping what it finds, so it may find positions again: the metric counts them, the deadline
/// stops the search with DEADLINE_EXCEEDED, and the server goes on answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_misere_table_bound_searches_go_on_and_the_metric_counts_what_they_forget() {
    let server = TestServer::builder().flags(&["--table-entries", "65536", "--metrics-listen", "127.0.0.1:0"]).start();
    let mut client = server.client().await;
    let walk = |side: u64| proto::Position {
        game: Some(P::DiagonalWalk(proto::DiagonalWalk { rows: side, columns: side, step: 2, ..Default::default() })),
    };
    // 200 × 200 cells: more positions than the 16 384 the table keeps.
    let status = client.solve(with_timeout(misere(walk(200)), Duration::from_secs(1))).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    // The search's thread records its statistics as it stops, just after the answer left.
    let url = server.metrics_url.clone().unwrap();
    wait_until(Duration::from_secs(30), "the forgotten positions counted", async || {
        sample(&scrape(&url), "nimber_misere_positions_forgotten_total") > 0.0
    })
    .await;
    // 100 × 100 fits: answered.
    let answer = client.solve(misere(walk(100))).await.unwrap().into_inner();
    assert!(matches!(answer.misere.and_then(|basis| basis.basis), Some(proto::misere_basis::Basis::Search(_))));
}

/// What misère play refuses, each naming the field: the cutting game, an unknown `play`, Explore
/// jobs; play longer than the search goes, and an analysis of more than 10 000 moves, are
/// FAILED_PRECONDITION; a search past its
/// deadline is DEADLINE_EXCEEDED; and the server goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_misere_play_refuses_names_the_field() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let paper = proto::Position {
        game: Some(P::Cutting(proto::Cutting { pieces: vec![proto::Piece { width: 2, height: 3 }] })),
    };
    let unknown = proto::SolveRequest { play: 7, ..solve_request(nim(vec![3])) };
    for request in [misere(paper), unknown] {
        let status = client.solve(request).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        let violations = status.get_details_bad_request().expect("BadRequest details").field_violations;
        assert_eq!(violations[0].field, "play", "{status:?}");
    }
    let analyze =
        proto::AnalyzeRequest { position: Some(nim(vec![20_000])), play: Play::Misere as i32, ..Default::default() };
    let status = client.analyze(analyze).await.unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    assert!(status.message().contains("more than 10000"), "{status:?}");
    let job = proto::ExploreRequest {
        job: Some(proto::explore_request::Job::Solve(misere(nim(vec![3, 4])))),
        split_across_replicas: true,
        ..Default::default()
    };
    let status = client.explore(job).await.unwrap_err();
    let violations = status.get_details_bad_request().expect("BadRequest details").field_violations;
    assert_eq!(violations[0].field, "split_across_replicas", "{status:?}");
    let job = proto::ExploreRequest {
        job: Some(proto::explore_request::Job::BestMove(proto::BestMoveRequest {
            play: 9,
            ..best_misere(nim(vec![3]))
        })),
        ..Default::default()
    };
    let status = client.explore(job).await.unwrap_err();
    let violations = status.get_details_bad_request().expect("BadRequest details").field_violations;
    assert_eq!(violations[0].field, "best_move.play", "{status:?}");

    let kayles = proto::Position {
        game: Some(P::Heaps(proto::Heaps {
            rules: Some(proto::heaps::Rules::Code("0.77".into())),
            heaps: vec![1 << 40],
        })),
    };
    let status = client.solve(misere(kayles)).await.unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    assert!(status.message().contains("4096 moves"), "{status:?}");
    let large = cram(&["000000000"; 9]);
    let status = client.solve(with_timeout(misere(large), Duration::from_millis(300))).await.unwrap_err();
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    let answer = client.solve(misere(nim(vec![2, 2]))).await.unwrap().into_inner();
    assert_eq!(answer.outcome(), Outcome::PreviousPlayerWins);
}
