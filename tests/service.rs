//! The service through the real server and real gRPC clients: Solve and BestMove on every game,
//! bad input, health, reflection, graceful shutdown.

mod common;

use common::{engine_value, solve_request, TestServer};
use nimber::games::Game;
use nimber::games::Value;
use nimber::proto::{self, position::Game as P, Outcome};
use tonic::Code;
use tonic_types::StatusExt;

fn position(game: P) -> proto::Position {
    proto::Position { game: Some(game) }
}

fn cutting(pieces: &[(u64, u64)]) -> proto::Position {
    position(P::Cutting(proto::Cutting {
        pieces: pieces.iter().map(|&(width, height)| proto::Piece { width, height }).collect(),
    }))
}

fn stone_boxes(boxes: &[(u64, u64)]) -> proto::Position {
    position(P::StoneBoxes(proto::StoneBoxes {
        boxes: boxes.iter().map(|&(capacity, stones)| proto::StoneBox { capacity, stones }).collect(),
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn solve_answers_the_cutting_samples_and_matches_the_engine() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    for (size, outcome) in [
        ((2, 2), Outcome::PreviousPlayerWins),
        ((3, 2), Outcome::PreviousPlayerWins),
        ((4, 2), Outcome::NextPlayerWins),
    ] {
        let answer = client.solve(solve_request(cutting(&[size]))).await.unwrap().into_inner();
        assert_eq!(answer.outcome(), outcome, "{size:?}");
    }
    for pieces in
        [vec![(7, 5), (9, 9), (1u64 << 40, 3)], vec![(u64::MAX, u64::MAX)], vec![(5, 1)], vec![(1, 1), (6, 6)]]
    {
        let request = cutting(&pieces);
        let answer = client.solve(solve_request(request.clone())).await.unwrap().into_inner();
        let expected = engine_value(&request);
        assert_eq!(answer.grundy, expected.nimber(), "{pieces:?}");
        assert_eq!(answer.outcome(), nimber::wire::outcome_to_proto(expected), "{pieces:?}");
        assert!(answer.stats.is_some());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn special_cutting_positions_have_no_grundy_value() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let won = client.solve(solve_request(cutting(&[(6, 6), (1, 5)]))).await.unwrap().into_inner();
    assert_eq!((won.outcome(), won.grundy), (Outcome::NextPlayerWins, None));
    let over = client.solve(solve_request(cutting(&[(1, 1), (1, 5)]))).await.unwrap().into_inner();
    assert_eq!((over.outcome(), over.grundy), (Outcome::PreviousPlayerWins, None));
    let best = client
        .best_move(proto::BestMoveRequest { position: Some(cutting(&[(1, 1)])), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert!(best.r#move.is_none() && best.after.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn solve_stone_boxes_matches_the_engine() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    for boxes in
        [vec![(2, 0), (3, 3), (6, 2)], vec![(6, 3), (6, 3)], vec![(u64::MAX, 12345), (10u64.pow(18), 999_999_999)]]
    {
        let request = stone_boxes(&boxes);
        let answer = client.solve(solve_request(request.clone())).await.unwrap().into_inner();
        assert_eq!(answer.grundy, engine_value(&request).nimber(), "{boxes:?}");
    }
}

/// Checks a BestMove answer: a winning move leads to a previous-player win, a losing position
/// still gets a legal move while one exists.
async fn check_best_move(
    client: &mut proto::solver_client::SolverClient<tonic::transport::Channel>,
    position: proto::Position,
) {
    let best = client
        .best_move(proto::BestMoveRequest { position: Some(position.clone()), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let domain = nimber::wire::position_from_proto(Some(position.clone())).unwrap();
    let has_moves = !domain.moves().is_empty();
    assert_eq!(best.r#move.is_some(), has_moves, "{position:?}");
    let outcome = best.outcome();
    let Some(after) = best.after else { return };
    let after_answer = client.solve(solve_request(after)).await.unwrap().into_inner();
    if outcome == Outcome::NextPlayerWins {
        assert_eq!(after_answer.outcome(), Outcome::PreviousPlayerWins, "{position:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn best_moves_win_when_a_win_exists() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    for pieces in [
        vec![(4, 2)],
        vec![(2, 2)],
        vec![(7, 5), (9, 9)],
        vec![(1u64 << 50, 3)],
        vec![(6, 6), (1, 5)],
        vec![(1000, 1001), (17, 40)],
    ] {
        check_best_move(&mut client, cutting(&pieces)).await;
    }
    for boxes in [vec![(6, 2)], vec![(6, 3), (6, 3)], vec![(u64::MAX, 3), (1000, 10)], vec![(5, 0)]] {
        check_best_move(&mut client, stone_boxes(&boxes)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_invalid_argument_naming_the_field_and_the_server_keeps_serving() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    // Each case: the request, a part of the message, and the field the BadRequest details name.
    let cases: Vec<(proto::SolveRequest, &str, &str)> = vec![
        (proto::SolveRequest { position: None, id: String::new(), ..Default::default() }, "position", "position"),
        (solve_request(proto::Position { game: None }), "position", "position"),
        (solve_request(cutting(&[(3, 0)])), "cutting.pieces[0].height", "cutting.pieces[0].height"),
        (solve_request(cutting(&vec![(2, 2); 100_001])), "100000", "cutting.pieces[100000]"),
        (solve_request(stone_boxes(&[(5, 2), (10, 12)])), "stone_boxes.boxes[1].stones", "stone_boxes.boxes[1].stones"),
        (solve_request(stone_boxes(&vec![(2, 1); 100_001])), "100000", "stone_boxes.boxes[100000]"),
    ];
    for (request, part, field) in cases {
        let status = client.solve(request).await.expect_err("bad input is rejected");
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(part), "{part} not in {:?}", status.message());
        let violations = status.get_details_bad_request().expect("BadRequest details").field_violations;
        assert_eq!(violations.len(), 1, "{status:?}");
        assert_eq!((violations[0].field.as_str(), violations[0].description.as_str()), (field, status.message()));
    }
    let answer = client.solve(solve_request(cutting(&[(4, 2)]))).await.unwrap().into_inner();
    assert_eq!(answer.outcome(), Outcome::NextPlayerWins);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_reports_serving() {
    use tonic_health::pb::{health_check_response::ServingStatus, health_client::HealthClient, HealthCheckRequest};
    let server = TestServer::builder().start();
    let mut health = HealthClient::new(server.channel().await);
    for service in ["", "nimber.v1.Solver"] {
        let answer = health.check(HealthCheckRequest { service: service.into() }).await.unwrap().into_inner();
        assert_eq!(answer.status(), ServingStatus::Serving, "{service:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_lists_the_services_in_v1_and_v1alpha() {
    use tonic_reflection::pb::{v1, v1alpha};
    let server = TestServer::builder().start();
    let channel = server.channel().await;

    let mut client = v1::server_reflection_client::ServerReflectionClient::new(channel.clone());
    let request = v1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(v1::server_reflection_request::MessageRequest::ListServices(String::new())),
    };
    let mut responses = client.server_reflection_info(tokio_stream::iter([request])).await.unwrap().into_inner();
    let response = responses.message().await.unwrap().expect("one response");
    let Some(v1::server_reflection_response::MessageResponse::ListServicesResponse(list)) = response.message_response
    else {
        panic!("unexpected reflection answer {response:?}");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    for expected in ["nimber.v1.Solver", "grpc.health.v1.Health"] {
        assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
    }

    let mut alpha = v1alpha::server_reflection_client::ServerReflectionClient::new(channel);
    let request = v1alpha::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(v1alpha::server_reflection_request::MessageRequest::FileContainingSymbol(
            "nimber.v1.Solver".into(),
        )),
    };
    let mut responses = alpha.server_reflection_info(tokio_stream::iter([request])).await.unwrap().into_inner();
    let response = responses.message().await.unwrap().expect("one response");
    assert!(
        matches!(response.message_response, Some(v1alpha::server_reflection_response::MessageResponse::FileDescriptorResponse(ref files)) if !files.file_descriptor_proto.is_empty()),
        "{response:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_shuts_down_cleanly() {
    let mut server = TestServer::builder().start();
    let mut client = server.client().await;
    client.solve(solve_request(cutting(&[(4, 2)]))).await.unwrap();
    assert!(server.stop(), "the server exits with status 0 on SIGTERM");
}
