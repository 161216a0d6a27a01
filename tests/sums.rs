//! Sums of any games, Analyze and SolveStream through the real server.

mod common;

use common::{solve_request, TestServer};
use nimber::games::GameTag;
use nimber::games::{Game, SearchContext, Value};
use nimber::proto::{self, position::Game as P, solver_client::SolverClient, Outcome};
use nimber::random::SplitMix;
use nimber::testing::{random_position, SMALL_SIDES};
use tonic::transport::Channel;
use tonic::Code;

fn sum(components: Vec<proto::Position>) -> proto::Position {
    proto::Position { game: Some(P::Sum(proto::Sum { components })) }
}

fn random_component(random: &mut SplitMix) -> proto::Position {
    let kind = random.pick(GameTag::ALL);
    random_position(random, kind, SMALL_SIDES)
}

async fn solve(client: &mut SolverClient<Channel>, position: proto::Position) -> proto::SolveResponse {
    client.solve(solve_request(position)).await.unwrap().into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sums_are_the_xor_of_their_components_and_best_moves_win() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let mut random = SplitMix::new(5);
    for _ in 0..60 {
        let components: Vec<_> = (0..random.range(1, 4)).map(|_| random_component(&mut random)).collect();
        let mut expected = Some(0u64);
        for component in &components {
            let answer = solve(&mut client, component.clone()).await;
            expected = expected.zip(answer.grundy).map(|(a, b)| a ^ b);
        }
        let position = sum(components);
        let answer = solve(&mut client, position.clone()).await;
        if let Some(expected) = expected {
            assert_eq!(answer.grundy, Some(expected), "{position:?}");
        }
        let best = client
            .best_move(proto::BestMoveRequest { position: Some(position.clone()), ..Default::default() })
            .await
            .unwrap()
            .into_inner();
        if answer.outcome() == Outcome::NextPlayerWins {
            let Some(proto::Move { game: Some(proto::r#move::Game::Sum(sum_move)) }) = &best.r#move else {
                panic!("a sum's move names its component: {best:?}");
            };
            assert!(sum_move.component >= 1);
            let after = solve(&mut client, best.after.clone().unwrap()).await;
            assert_eq!(after.outcome(), Outcome::PreviousPlayerWins, "{position:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cutting_specials_decide_a_sum() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let cutting = |pieces: &[(u64, u64)]| proto::Position {
        game: Some(P::Cutting(proto::Cutting {
            pieces: pieces.iter().map(|&(width, height)| proto::Piece { width, height }).collect(),
        })),
    };
    let walk = proto::Position {
        game: Some(P::DiagonalWalk(proto::DiagonalWalk { rows: 9, columns: 4, step: 2, row: 1, column: 1 })),
    };
    let won = solve(&mut client, sum(vec![walk.clone(), cutting(&[(1, 7)])])).await;
    assert_eq!((won.outcome(), won.grundy), (Outcome::NextPlayerWins, None));
    let over = solve(&mut client, sum(vec![walk.clone(), cutting(&[(1, 1)]), cutting(&[(1, 7)])])).await;
    assert_eq!((over.outcome(), over.grundy), (Outcome::PreviousPlayerWins, None));
    let best = client
        .best_move(proto::BestMoveRequest {
            position: Some(sum(vec![walk.clone(), cutting(&[(1, 1)])])),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(best.r#move.is_none(), "a finished game has no move even beside other games");
    let nested = solve(&mut client, sum(vec![sum(vec![walk.clone()]), sum(vec![sum(vec![walk])])])).await;
    assert_eq!(nested.grundy, Some(0), "G + G = 0, nested sums flattened");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sum_limits_are_invalid_argument() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let walk = proto::Position {
        game: Some(P::DiagonalWalk(proto::DiagonalWalk { rows: 2, columns: 2, step: 1, row: 1, column: 1 })),
    };
    let mut deep = walk.clone();
    for _ in 0..40 {
        deep = sum(vec![deep]);
    }
    let wide = sum(vec![walk.clone(); 10_001]);
    for (position, expected) in [(deep, "32"), (wide, "10000")] {
        let status = client.solve(solve_request(position)).await.expect_err("rejected");
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(status.message().contains(expected), "{:?}", status.message());
    }
}

/// Every page of an analysis, put together.
async fn analyze_all(
    client: &mut SolverClient<Channel>,
    position: &proto::Position,
    limit: u32,
) -> (proto::AnalyzeResponse, Vec<proto::MoveAnalysis>) {
    let mut token = String::new();
    let mut moves = Vec::new();
    loop {
        let request = proto::AnalyzeRequest {
            position: Some(position.clone()),
            limit,
            page_token: token,
            skip: 0,
            ..Default::default()
        };
        let page = client.analyze(request).await.unwrap().into_inner();
        moves.extend(page.moves.iter().cloned());
        if page.next_page_token.is_empty() {
            return (page, moves);
        }
        token = page.next_page_token.clone();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_lists_exactly_the_legal_moves_with_their_values() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let mut random = SplitMix::new(6);
    let mut checked = 0;
    while checked < 40 {
        let component = random_component(&mut random);
        let position = if random.percent(30) { sum(vec![component, random_component(&mut random)]) } else { component };
        let domain = nimber::wire::position_from_proto(Some(position.clone())).unwrap();
        if domain.moves().len() > 300 {
            continue; // compared move by move below: keep it small
        }
        checked += 1;
        let (summary, listed) = analyze_all(&mut client, &position, 7).await;
        let legal: Vec<_> = domain.moves().iter().map(|mv| nimber::wire::move_to_proto(&mv)).collect();
        assert_eq!(summary.total_moves as usize, legal.len());
        assert_eq!(listed.len(), legal.len(), "{position:?}");
        for move_analysis in &listed {
            assert!(legal.contains(move_analysis.r#move.as_ref().unwrap()), "{move_analysis:?} is legal");
        }
        let winning = listed.iter().filter(|m| m.winning).count();
        assert_eq!(summary.winning_moves as usize, winning);
        assert!(listed[..winning].iter().all(|m| m.winning), "winning moves first");
        // Each move's value agrees with Solve on the position after it.
        for mv in domain.moves().iter() {
            let after = nimber::wire::position_to_proto(&domain.play_unchecked(&mv));
            let answer = solve(&mut client, after).await;
            let listed_entry =
                listed.iter().find(|m| m.r#move.as_ref() == Some(&nimber::wire::move_to_proto(&mv))).unwrap();
            assert_eq!((answer.outcome, answer.grundy), (listed_entry.outcome, listed_entry.grundy));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_counts_huge_move_sets_without_enumerating() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let strip = proto::Position {
        game: Some(P::Reclamation(proto::Reclamation {
            rows: u64::MAX,
            reclaimed: vec![proto::Cell { row: 3, column: 1 }],
        })),
    };
    let request = proto::AnalyzeRequest {
        position: Some(strip.clone()),
        limit: 5,
        page_token: String::new(),
        skip: 0,
        ..Default::default()
    };
    let page = client.analyze(request).await.unwrap().into_inner();
    let domain = nimber::wire::position_from_proto(Some(strip.clone())).unwrap();
    assert_eq!(page.total_moves_exact, domain.moves().len().to_string());
    assert!(domain.moves().len() > u128::from(u64::MAX), "more moves than a u64 holds");
    assert_eq!(page.total_moves, u64::MAX, "saturated");
    assert_eq!(page.moves.len(), 5);
    assert!(!page.next_page_token.is_empty());
    // A limit past the maximum gets the maximum (AIP-158), as a page_size does everywhere.
    let too_many = proto::AnalyzeRequest {
        position: Some(strip.clone()),
        limit: 5000,
        page_token: String::new(),
        skip: 0,
        ..Default::default()
    };
    assert_eq!(client.analyze(too_many).await.unwrap().into_inner().moves.len(), 1000);
    // A token continues only the analysis of the position it was given for.
    let next = proto::AnalyzeRequest {
        position: Some(strip.clone()),
        limit: 5,
        page_token: page.next_page_token.clone(),
        skip: 0,
        ..Default::default()
    };
    let second = client.analyze(next).await.unwrap().into_inner();
    assert_eq!(second.moves.len(), 5);
    assert_ne!(second.moves[0], page.moves[0], "the second page starts after the first");
    let other =
        proto::Position { game: Some(P::Reclamation(proto::Reclamation { rows: u64::MAX, reclaimed: vec![] })) };
    for (position, token) in [(strip.clone(), "nonsense".to_string()), (other, page.next_page_token.clone())] {
        let forged = proto::AnalyzeRequest {
            position: Some(position),
            limit: 5,
            page_token: token,
            skip: 0,
            ..Default::default()
        };
        let status = client.analyze(forged).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(status.message().contains("page_token"), "{status:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn solve_stream_answers_in_order_with_ids_and_per_item_errors() {
    let server = TestServer::builder().start();
    let mut client = server.client().await;
    let mut random = SplitMix::new(7);
    let mut requests = Vec::new();
    for index in 0..300 {
        let position = if index % 37 == 5 {
            proto::Position {
                game: Some(P::StoneBoxes(proto::StoneBoxes {
                    boxes: vec![proto::StoneBox { capacity: 1, stones: 2 }],
                })),
            }
        } else {
            random_component(&mut random)
        };
        requests.push(proto::SolveRequest {
            position: Some(position),
            id: format!("item-{index}"),
            ..Default::default()
        });
    }
    let mut responses = client.solve_stream(tokio_stream::iter(requests.clone())).await.unwrap().into_inner();
    let mut answered = 0;
    while let Some(response) = responses.message().await.unwrap() {
        let request = &requests[answered];
        assert_eq!(response.id, request.id, "answers keep request order");
        let domain = nimber::wire::position_from_proto(request.position.clone());
        match domain {
            Ok(domain) => {
                assert!(response.error.is_none(), "{response:?}");
                assert_eq!(response.grundy, domain.value(&mut SearchContext::in_memory()).unwrap().nimber());
            }
            Err(_) => {
                let error = response.error.expect("a per-item error");
                assert_eq!((error.code, error.code_name.as_str()), (Code::InvalidArgument as u32, "INVALID_ARGUMENT"));
                assert!(error.message.contains("stone_boxes.boxes[0].stones"), "{error:?}");
            }
        }
        answered += 1;
    }
    assert_eq!(answered, requests.len());
}
