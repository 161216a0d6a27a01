//! gRPC glue: the `google.longrunning.Operations` service, and Explore and WatchExplore of
//! `nimber.v1.Solver` (which the Solver service delegates here). Every job-store call runs on the
//! blocking pool.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::Stream;
use tonic::{Request, Response, Status};

use super::runner::{JobsError, Runner};
use crate::google::longrunning::{self as lro, operations_server::Operations, Operation};
use crate::proto;
use crate::quote::quoted;
use crate::wire;

/// Runs a blocking runner call on the blocking pool.
async fn blocking<T: Send + 'static>(
    runner: &Arc<Runner>,
    call: impl FnOnce(&Runner) -> Result<T, JobsError> + Send + 'static,
) -> Result<T, Status> {
    let runner = runner.clone();
    match tokio::task::spawn_blocking(move || call(&runner)).await {
        Ok(result) => result.map_err(Status::from),
        Err(error) => Err(Status::internal(format!("the job call failed: {error}"))),
    }
}

/// Explore: validates the request, creates the job (or finds the one of its `request_id`) and
/// returns its operation at once.
pub async fn explore(runner: &Arc<Runner>, request: proto::ExploreRequest) -> Result<Operation, Status> {
    blocking(runner, move |runner| runner.submit(request)).await
}

/// ListExploreRows: a page of a succeeded family job's table.
pub async fn rows(
    runner: &Arc<Runner>,
    request: proto::ListExploreRowsRequest,
) -> Result<proto::ListExploreRowsResponse, Status> {
    let page_size = usize::try_from(request.page_size)
        .map_err(|_| Status::invalid_argument(format!("page_size ({}) must not be negative", request.page_size)))?;
    let (rows, next_page_token, total_size) =
        blocking(runner, move |runner| runner.rows(&request.name, page_size, &request.page_token)).await?;
    Ok(proto::ListExploreRowsResponse { rows, next_page_token, total_size })
}

/// The stream of WatchExplore.
pub type OperationStream = Pin<Box<dyn Stream<Item = Result<Operation, Status>> + Send>>;

/// How long WaitOperation waits before it asks a job store that did not answer again.
const STORE_PATIENCE: Duration = Duration::from_millis(200);

/// How often WatchExplore pushes the operation while the job runs.
const WATCH_EVERY: Duration = Duration::from_secs(1);

/// WatchExplore: the operation now, then at least once a second and at every state change while
/// it is not done, then once when it ends. NOT_FOUND for an unknown name.
pub async fn watch(runner: &Arc<Runner>, name: String) -> Result<OperationStream, Status> {
    // Subscribed before the first read: a change between the two (a job ending at once) is seen,
    // not waited out for a second.
    let changes = runner.changes();
    let lookup = name.clone();
    let first = blocking(runner, move |runner| runner.operation(&lookup)).await?;
    let state = (runner.clone(), name, changes, Some(first));
    let stream = futures_util::stream::unfold(state, |(runner, name, mut changes, next)| async move {
        let operation = match next {
            Some(operation) => operation,
            None => {
                let _ = tokio::time::timeout(WATCH_EVERY, changes.changed()).await;
                let lookup = name.clone();
                match blocking(&runner, move |runner| runner.operation(&lookup)).await {
                    Ok(operation) => operation,
                    Err(status) => return Some((Err(status), (runner, name, changes, None))),
                }
            }
        };
        Some((Ok(operation), (runner, name, changes, None)))
    });
    // End after the first operation that is done (or the first error).
    let mut ended = false;
    let stream = futures_util::StreamExt::take_while(stream, move |item| {
        let keep = !ended;
        ended = item.as_ref().map_or(true, |operation| operation.done);
        std::future::ready(keep)
    });
    Ok(Box::pin(stream))
}

/// The `google.longrunning.Operations` service over the job runner.
#[derive(Clone)]
pub struct OperationsService {
    runner: Arc<Runner>,
}

impl OperationsService {
    /// The service over `runner`.
    pub fn new(runner: Arc<Runner>) -> Self {
        Self { runner }
    }
}

/// The `done` a ListOperations filter asks for: `""` (all), `done=true` or `done=false` (spaces
/// allowed around `=`).
fn parse_filter(filter: &str) -> Result<Option<bool>, Status> {
    let compact: String = filter.chars().filter(|c| !c.is_whitespace()).collect();
    match compact.as_str() {
        "" => Ok(None),
        "done=true" => Ok(Some(true)),
        "done=false" => Ok(Some(false)),
        _ => Err(Status::invalid_argument(format!(
            "filter {} is not supported; use \"done=true\", \"done=false\" or an empty filter",
            quoted(filter)
        ))),
    }
}

#[tonic::async_trait]
impl Operations for OperationsService {
    async fn list_operations(
        &self,
        request: Request<lro::ListOperationsRequest>,
    ) -> Result<Response<lro::ListOperationsResponse>, Status> {
        let request = request.into_inner();
        if !request.name.is_empty() && request.name != "operations" {
            return Err(Status::not_found(format!(
                "no operations under {}; use \"operations\" or leave name empty",
                quoted(&request.name)
            )));
        }
        let done = parse_filter(&request.filter)?;
        let page_size = usize::try_from(request.page_size)
            .map_err(|_| Status::invalid_argument(format!("page_size ({}) must not be negative", request.page_size)))?;
        let token = request.page_token;
        let (operations, next_page_token) =
            blocking(&self.runner, move |runner| runner.list(done, page_size, &token)).await?;
        Ok(Response::new(lro::ListOperationsResponse { operations, next_page_token }))
    }

    async fn get_operation(&self, request: Request<lro::GetOperationRequest>) -> Result<Response<Operation>, Status> {
        let name = request.into_inner().name;
        blocking(&self.runner, move |runner| runner.operation(&name)).await.map(Response::new)
    }

    async fn delete_operation(&self, request: Request<lro::DeleteOperationRequest>) -> Result<Response<()>, Status> {
        let name = request.into_inner().name;
        blocking(&self.runner, move |runner| runner.delete(&name)).await.map(Response::new)
    }

    async fn cancel_operation(&self, request: Request<lro::CancelOperationRequest>) -> Result<Response<()>, Status> {
        let name = request.into_inner().name;
        blocking(&self.runner, move |runner| runner.cancel(&name)).await.map(Response::new)
    }

    /// Waits until the operation is done, its `timeout` passes or the caller's deadline does.
    async fn wait_operation(&self, request: Request<lro::WaitOperationRequest>) -> Result<Response<Operation>, Status> {
        let request = request.into_inner();
        let timeout = match &request.timeout {
            Some(timeout) => Some(wire::job::duration_from_proto("timeout", timeout).map_err(Status::from)?),
            None => None,
        };
        let mut changes = self.runner.changes();
        let name = request.name;
        let wait = async {
            let mut seen = false;
            loop {
                let lookup = name.clone();
                let operation = match blocking(&self.runner, move |runner| runner.operation(&lookup)).await {
                    Ok(operation) => operation,
                    // It existed, unfinished, while this call waited.
                    Err(status) if seen && status.code() == tonic::Code::NotFound => {
                        return Err(Status::data_loss(format!(
                            "the record of operation {} vanished while this call waited for it: the jobs Redis \
                             restarted empty, was flushed or evicted keys (it must keep its data), or the operation \
                             was deleted",
                            quoted(&name)
                        )))
                    }
                    // A store that does not answer for a moment (a pause, a restart of Redis) is
                    // waited out, as the job itself waits it out.
                    Err(status) if status.code() == tonic::Code::Unavailable => {
                        let _ = tokio::time::timeout(STORE_PATIENCE, changes.changed()).await;
                        continue;
                    }
                    Err(status) => return Err(status),
                };
                if operation.done {
                    return Ok(operation);
                }
                seen = true;
                let _ = changes.changed().await;
            }
        };
        match timeout {
            None => wait.await,
            Some(timeout) => match tokio::time::timeout(timeout, wait).await {
                Ok(result) => result,
                Err(_elapsed) => blocking(&self.runner, move |runner| runner.operation(&name)).await,
            },
        }
        .map(Response::new)
    }
}
