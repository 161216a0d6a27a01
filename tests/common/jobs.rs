//! Explore jobs through the real server: requests of the families, and waiting on operations.

use std::time::{Duration, Instant};

use super::TestServer;
use nimber::google::longrunning::{self as lro, operation::Result as OperationResult, Operation};
use nimber::proto::{self, explore_request::Job, ExploreState};
use prost::Message;

/// A client of the Operations service.
pub type Operations = lro::operations_client::OperationsClient<tonic::transport::Channel>;

/// An Operations client of `server`.
pub async fn operations(server: &TestServer) -> Operations {
    lro::operations_client::OperationsClient::new(server.channel().await)
}

/// Explore every full board of the 2×2 placement game in the ranges of rows and columns.
pub fn full_boards(rows: (u32, u32), columns: (u32, u32)) -> proto::ExploreRequest {
    proto::ExploreRequest {
        job: Some(Job::FullBoards(proto::FullBoards {
            min_rows: rows.0,
            max_rows: rows.1,
            min_columns: columns.0,
            max_columns: columns.1,
            game: proto::BoardGame::Unspecified as i32,
        })),
        ..Default::default()
    }
}

/// An empty `rows`×`columns` board of the 2×2 placement game.
pub fn board(rows: usize, columns: usize) -> proto::Position {
    proto::Position {
        game: Some(proto::position::Game::Tetris(proto::Tetris { rows: vec!["0".repeat(columns); rows] })),
    }
}

/// The progress in an operation's metadata.
pub fn progress(operation: &Operation) -> proto::ExploreProgress {
    let metadata = operation.metadata.as_ref().expect("every operation has metadata");
    assert_eq!(metadata.type_url, "type.googleapis.com/nimber.v1.ExploreProgress");
    proto::ExploreProgress::decode(metadata.value.as_slice()).expect("the metadata decodes")
}

/// The result of a succeeded operation.
pub fn result(operation: &Operation) -> proto::ExploreResult {
    match &operation.result {
        Some(OperationResult::Response(any)) => {
            assert_eq!(any.type_url, "type.googleapis.com/nimber.v1.ExploreResult");
            proto::ExploreResult::decode(any.value.as_slice()).expect("the response decodes")
        }
        other => panic!("expected a response, got {other:?}"),
    }
}

/// GetOperation of `name`, which must exist.
pub async fn get(client: &mut Operations, name: &str) -> Operation {
    client
        .get_operation(lro::GetOperationRequest { name: name.into() })
        .await
        .expect("the operation exists")
        .into_inner()
}

/// Waits (at most 30 s) until job `name` runs; returns its operation then.
pub async fn wait_running(client: &mut Operations, name: &str) -> Operation {
    wait_for(client, name, Duration::from_secs(30), |operation| progress(operation).state() == ExploreState::Running)
        .await
}

/// Polls GetOperation (every 50 ms, at most `timeout`) until `condition` holds; returns that state.
pub async fn wait_for(
    client: &mut Operations,
    name: &str,
    timeout: Duration,
    condition: impl Fn(&Operation) -> bool,
) -> Operation {
    let started = Instant::now();
    loop {
        let operation = get(client, name).await;
        if condition(&operation) {
            return operation;
        }
        assert!(started.elapsed() < timeout, "no such state within {timeout:?}; last: {:?}", progress(&operation));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Explore every sub-board of `board` with at most `max_blocked` more cells blocked.
pub fn sub_boards(board: &[&str], max_blocked: u32) -> proto::ExploreRequest {
    proto::ExploreRequest {
        job: Some(Job::SubBoards(proto::SubBoards {
            board: Some(proto::Tetris { rows: board.iter().map(|row| row.to_string()).collect() }),
            max_blocked,
            game: proto::BoardGame::Unspecified as i32,
        })),
        ..Default::default()
    }
}

/// WaitOperation of `name` until it is done.
pub async fn wait_done(client: &mut Operations, name: &str) -> Operation {
    let request = lro::WaitOperationRequest { name: name.into(), timeout: None };
    client.wait_operation(request).await.expect("the operation exists").into_inner()
}

/// Explore the values G(0) … G(up_to) of the heap game of `code`.
pub fn heap_sequence(code: &str, up_to: u64) -> proto::ExploreRequest {
    proto::ExploreRequest {
        job: Some(Job::HeapSequence(proto::HeapSequence {
            rules: Some(proto::heap_sequence::Rules::Code(code.into())),
            up_to,
        })),
        ..Default::default()
    }
}

/// The heap sequence answer of a succeeded operation.
pub fn sequence_result(operation: &Operation) -> proto::HeapSequenceResult {
    match result(operation).answer {
        Some(proto::explore_result::Answer::HeapSequence(sequence)) => sequence,
        other => panic!("expected a heap sequence, got {other:?}"),
    }
}

/// The heap sequence progress of an operation (the default before the job reported any).
pub fn sequence_progress(operation: &Operation) -> proto::HeapSequenceProgress {
    match progress(operation).family {
        Some(proto::explore_progress::Family::HeapSequence(sequence)) => sequence,
        None => Default::default(),
    }
}

/// Every value of heap sequence job `name`'s table, paged through ListExploreRows `page_size` rows
/// at a time, checking that each row starts where the one before ended.
pub async fn sequence_values(
    solver: &mut nimber::proto::solver_client::SolverClient<tonic::transport::Channel>,
    name: &str,
    page_size: i32,
) -> Vec<u64> {
    let mut values = Vec::new();
    let mut page_token = String::new();
    loop {
        let request = proto::ListExploreRowsRequest { name: name.into(), page_size, page_token };
        let page = solver.list_explore_rows(request).await.unwrap().into_inner();
        for row in page.rows {
            assert_eq!(row.heap, values.len() as u64, "rows follow each other");
            values.extend(row.values);
        }
        if page.next_page_token.is_empty() {
            return values;
        }
        page_token = page.next_page_token;
    }
}
