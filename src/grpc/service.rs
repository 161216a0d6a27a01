//! The tonic service `nimber.v1.Solver`: converts protobuf to domain positions, runs the engine
//! within the caller's deadline (cheap closed forms inline, searches on the blocking pool behind a
//! limited number of slots), and maps every error to a gRPC status in one place
//! ([`ServiceError`] → [`Status`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt};
use tonic::{Request, Response, Status};

use crate::cache::Store;
use crate::games::analysis;
use crate::games::sum::SumValue;
use crate::games::{Budget, Game, Interrupted, Memo, MisereAnswer, Position, SearchContext, Stats};
use crate::invalid_argument::InvalidArgument;
use crate::logging::code_name;
use crate::metrics::Metrics;
use crate::proto;
use crate::wire;

/// What the service shares between its calls: the memo, the limits of a solve, the slots for
/// expensive solves, the metrics and the job runner.
#[derive(Clone)]
pub struct ServiceState {
    /// The persistent memo.
    pub store: Arc<Store>,
    /// The server-side maximum time of one solve, whatever the caller's deadline.
    pub max_solve_time: Duration,
    /// The most entries a game's in-memory table may hold during one solve.
    pub table_limit: usize,
    /// Slots for expensive (search) solves; past them calls wait up to their deadline.
    pub expensive_slots: Arc<tokio::sync::Semaphore>,
    /// Where calls and solves are counted.
    pub metrics: Arc<Metrics>,
    /// The runner of long-running jobs (Explore).
    pub jobs: Arc<crate::jobs::runner::Runner>,
}

/// Everything that can go wrong with a call, mapped to a status in [`super::status`].
#[derive(Debug)]
pub enum ServiceError {
    /// The request is not acceptable.
    InvalidArgument(InvalidArgument),
    /// The solve stopped before it had an answer.
    Interrupted(Interrupted),
    /// The deadline passed during a search, whose finished components are in the store, so a retry
    /// continues from there.
    SearchDeadlineExceeded,
    /// Every slot for expensive solves stayed busy until the deadline.
    Overloaded,
    /// The solve could not run (a bug: the worker panicked or vanished).
    Internal(String),
}

impl From<InvalidArgument> for ServiceError {
    fn from(error: InvalidArgument) -> Self {
        ServiceError::InvalidArgument(error)
    }
}

impl ServiceError {
    /// The status code of this error.
    pub fn code(&self) -> tonic::Code {
        match self {
            ServiceError::InvalidArgument(_) => tonic::Code::InvalidArgument,
            ServiceError::Interrupted(Interrupted::DeadlineExceeded) | ServiceError::SearchDeadlineExceeded => {
                tonic::Code::DeadlineExceeded
            }
            ServiceError::Interrupted(Interrupted::Cancelled) => tonic::Code::Cancelled,
            ServiceError::Interrupted(
                Interrupted::PastComputeLimit { .. }
                | Interrupted::PastMisereDepth { .. }
                | Interrupted::PastMisereListing { .. },
            ) => tonic::Code::FailedPrecondition,
            ServiceError::Overloaded => tonic::Code::ResourceExhausted,
            ServiceError::Internal(_) => tonic::Code::Internal,
        }
    }
}

/// The `nimber.v1.Solver` service.
#[derive(Clone)]
pub struct SolverService {
    state: ServiceState,
}

/// Sets the cancellation flag when dropped: a call whose future is dropped (the client went away)
/// stops its solve on the blocking pool.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// How an interrupted solve of `position` is answered: a passed deadline says that a retry continues
/// where the solve stopped only where that is true, for searches (which keep what they finished).
fn interruption_error(position: &Position) -> impl Fn(Interrupted) -> ServiceError {
    let searched = position.needs_search();
    move |interrupted| match interrupted {
        Interrupted::DeadlineExceeded if searched => ServiceError::SearchDeadlineExceeded,
        other => ServiceError::Interrupted(other),
    }
}

/// Adds one to a gauge while it lives (a call waiting for a slot, a solve running).
struct Counted(prometheus_client::metrics::gauge::Gauge);

impl Counted {
    fn new(gauge: prometheus_client::metrics::gauge::Gauge) -> Self {
        gauge.inc();
        Self(gauge)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// The caller's deadline, from its `grpc-timeout` less a margin (a quarter, at most 100 ms), so that our answer
/// `DEADLINE_EXCEEDED` reaches the caller before its own timer fires.
fn caller_deadline(metadata: &tonic::metadata::MetadataMap) -> Option<Instant> {
    let timeout = crate::grpc::calls::parse_grpc_timeout(metadata.get("grpc-timeout")?.as_bytes())?;
    Instant::now().checked_add(timeout.saturating_sub((timeout / 4).min(Duration::from_millis(100))))
}

/// The deadline of one solve: the caller's, capped by the server's maximum solve time.
fn solve_deadline(caller: Option<Instant>, max_solve_time: Duration) -> Instant {
    let now = Instant::now();
    let cap = now.checked_add(max_solve_time).unwrap_or(now + Duration::from_secs(86_400 * 365));
    caller.map_or(cap, |deadline| deadline.min(cap))
}

impl SolverService {
    /// A service over the given shared state.
    pub fn new(state: ServiceState) -> Self {
        Self { state }
    }

    /// Runs `work` with a context bound to `deadline`: on the async runtime when `cheap` (closed forms,
    /// which never touch the memo), otherwise on the blocking pool once an expensive-solve slot is
    /// free, holding the slot until the job ends (even after the call was cancelled or its deadline
    /// passed) and flushing the memo. Returns the result with the solve's statistics and duration.
    async fn run<T: Send + 'static>(
        &self,
        position: Position,
        cheap: bool,
        deadline: Instant,
        work: impl FnOnce(&Position, &mut SearchContext) -> Result<T, Interrupted> + Send + 'static,
    ) -> Result<(T, Stats, Duration), ServiceError> {
        let cancelled = Arc::new(AtomicBool::new(false));
        let _cancel_on_drop = CancelOnDrop(cancelled.clone());
        let interrupted = interruption_error(&position);
        let state = self.state.clone();
        let metrics = self.state.metrics.clone();
        let job = move |flush: bool| {
            let started = Instant::now();
            let mut context = SearchContext::new(Budget::new(Some(deadline), cancelled), &*state.store);
            context.table_limit = state.table_limit;
            context.threads = state.jobs.search_threads();
            let result = work(&position, &mut context);
            if let Err(Interrupted::PastComputeLimit { .. }) = result {
                metrics.record_past_compute_limit();
            }
            if flush {
                crate::games::Memo::flush(&*state.store);
            }
            metrics.record_solve(context.stats);
            result.map(|answer| (answer, context.stats, started.elapsed()))
        };
        if cheap {
            return job(false).map_err(interrupted);
        }
        let permit = self.expensive_slot(deadline).await?;
        let running = Counted::new(self.state.metrics.solves_running());
        let joined = tokio::task::spawn_blocking(move || {
            let _slot = (permit, running);
            job(true)
        })
        .await;
        match joined {
            Ok(result) => result.map_err(interrupted),
            Err(error) => Err(ServiceError::Internal(format!("the solve failed: {error}"))),
        }
    }

    /// A slot for an expensive solve, waiting for one until `deadline`; counted as waiting meanwhile,
    /// also when the call is dropped while it waits.
    async fn expensive_slot(&self, deadline: Instant) -> Result<tokio::sync::OwnedSemaphorePermit, ServiceError> {
        let _waiting = Counted::new(self.state.metrics.solves_waiting());
        let acquired =
            tokio::time::timeout_at(deadline.into(), self.state.expensive_slots.clone().acquire_owned()).await;
        match acquired {
            Ok(Ok(permit)) => Ok(permit),
            Ok(Err(_closed)) => Err(ServiceError::Internal("the server is shutting down".into())),
            Err(_elapsed) => Err(ServiceError::Overloaded),
        }
    }

    /// The answer of a Solve request (or of one SolveStream item), within `deadline`.
    async fn answer_solve(
        &self,
        request: proto::SolveRequest,
        deadline: Instant,
    ) -> Result<proto::SolveResponse, ServiceError> {
        let position = wire::position_from_proto(request.position)?;
        if wire::misere_from_proto("play", request.play, &position)? {
            let (answer, stats, elapsed) = self.misere(position, deadline).await?;
            return Ok(proto::SolveResponse { id: request.id, ..wire::misere_solve_response(&answer, stats, elapsed) });
        }
        let cheap = position.is_cheap();
        let warm = match position.needs_search() {
            true => self.value_without_search(&position).await,
            false => None,
        };
        let (value, stats, elapsed) = match warm {
            Some(warm) => warm,
            None => self.run(position.clone(), cheap, deadline, |position, context| position.value(context)).await?,
        };
        Ok(proto::SolveResponse { id: request.id, ..wire::solve_response(&position, value, stats, elapsed) })
    }

    /// Who wins `position` in misère play: by a rule at once (on the async runtime), else by a
    /// search within `deadline` in an expensive-solve slot.
    async fn misere(
        &self,
        position: Position,
        deadline: Instant,
    ) -> Result<(MisereAnswer, Stats, Duration), ServiceError> {
        let cheap = position.has_misere_rule();
        self.run(position, cheap, deadline, Position::misere).await
    }

    /// The value of a position that needs no search (the memo holds all its searched
    /// components), answered without an expensive-solve slot: from memory on this thread, else from
    /// the store on the blocking pool (a few reads, one per component). `None`: a search is needed.
    async fn value_without_search(&self, position: &Position) -> Option<(SumValue, Stats, Duration)> {
        let started = Instant::now();
        let store = self.state.store.clone();
        let (value, hits) = match position.value_without_search(&|game, key| store.peek(game, key)) {
            Some(found) => found,
            None => {
                let position = position.clone();
                let read = move || position.value_without_search(&|game, key| store.get(game, key));
                tokio::task::spawn_blocking(read).await.ok()??
            }
        };
        let stats = Stats { cache_hits: hits, ..Stats::default() };
        self.state.metrics.record_solve(stats);
        Some((value, stats, started.elapsed()))
    }

    /// The answer of a BestMove request, within `deadline`.
    async fn answer_best_move(
        &self,
        request: proto::BestMoveRequest,
        deadline: Instant,
    ) -> Result<proto::BestMoveResponse, ServiceError> {
        let position = wire::position_from_proto(request.position)?;
        if wire::misere_from_proto("play", request.play, &position)? {
            let (answer, stats, elapsed) = self.misere(position.clone(), deadline).await?;
            return Ok(wire::misere_best_move_response(&position, &answer, stats, elapsed));
        }
        let cheap = position.is_cheap();
        let ((value, best), stats, elapsed) =
            self.run(position.clone(), cheap, deadline, |position, context| position.best_move(context)).await?;
        Ok(wire::best_move_response(&position, value, best, stats, elapsed))
    }

    /// The answer of an Analyze request, within `deadline`.
    async fn answer_analyze(
        &self,
        request: proto::AnalyzeRequest,
        deadline: Instant,
    ) -> Result<proto::AnalyzeResponse, ServiceError> {
        // A page token continues the analysis of this very position.
        let mut query = request.position.as_ref().map(prost::Message::encode_to_vec).unwrap_or_default();
        let position = wire::position_from_proto(request.position)?;
        let misere = wire::misere_from_proto("play", request.play, &position)?;
        if misere {
            // ... and in this very play.
            query.extend_from_slice(b"misere");
        }
        let (offset, limit) = wire::page_from_proto(request.limit, &request.page_token, &query)?;
        let offset = offset.saturating_add(u128::from(request.skip));
        if misere {
            let cheap = position.has_misere_rule() && position.moves().len() <= CHEAP_ANALYSIS_MOVES;
            let ((analysis, basis), stats, elapsed) = self
                .run(position.clone(), cheap, deadline, move |position, context| {
                    position.misere_analysis(offset, limit, context)
                })
                .await?;
            let stats = wire::stats_to_proto(stats, elapsed);
            return Ok(wire::misere_analysis_to_proto(&position, &analysis, &basis, &query, stats));
        }
        // Analysis evaluates up to thousands of moves: inline only when there are few.
        let cheap = position.is_cheap() && position.moves().len() <= CHEAP_ANALYSIS_MOVES;
        let (analysis, stats, elapsed) = self
            .run(position.clone(), cheap, deadline, move |position, context| {
                analysis::analyze(position, offset, limit, context)
            })
            .await?;
        let stats = wire::stats_to_proto(stats, elapsed);
        Ok(wire::analysis_to_proto(&position, &analysis, &query, stats))
    }

    /// One item of a stream: its answer, or its error in the response.
    async fn solve_item(&self, request: proto::SolveRequest, deadline: Instant) -> proto::SolveResponse {
        let id = request.id.clone();
        let result = self.answer_solve(request, deadline).await;
        let code = result.as_ref().map_or_else(|error| error.code(), |_| tonic::Code::Ok);
        self.state.metrics.record_stream_item(code);
        match result {
            Ok(response) => response,
            Err(error) => {
                let status = Status::from(error);
                crate::logging::failed("SolveStream", "item failed", status.code(), status.message());
                proto::SolveResponse {
                    id,
                    error: Some(proto::ItemError {
                        code: status.code() as u32,
                        code_name: code_name(status.code()).to_string(),
                        message: status.message().to_string(),
                    }),
                    ..Default::default()
                }
            }
        }
    }
}

/// Analyses of cheap positions with at most this many moves run on the async runtime.
const CHEAP_ANALYSIS_MOVES: u128 = 64;

/// How many items of one stream are solved at once.
const STREAM_PARALLELISM: usize = 64;

impl SolverService {
    /// The deadline of a call's solve: the caller's, capped by the server's maximum solve time.
    fn deadline<T>(&self, request: &Request<T>) -> Instant {
        solve_deadline(caller_deadline(request.metadata()), self.state.max_solve_time)
    }

    /// Converts an error to its status (the call is counted and logged by [`crate::grpc::calls`]).
    fn respond<T>(&self, result: Result<T, ServiceError>) -> Result<Response<T>, Status> {
        result.map(Response::new).map_err(Status::from)
    }
}

/// The stream of SolveStream responses.
pub type SolveResponses = std::pin::Pin<Box<dyn Stream<Item = Result<proto::SolveResponse, Status>> + Send>>;

#[tonic::async_trait]
impl proto::solver_server::Solver for SolverService {
    async fn solve(&self, request: Request<proto::SolveRequest>) -> Result<Response<proto::SolveResponse>, Status> {
        let deadline = self.deadline(&request);
        self.respond(self.answer_solve(request.into_inner(), deadline).await)
    }

    async fn best_move(
        &self,
        request: Request<proto::BestMoveRequest>,
    ) -> Result<Response<proto::BestMoveResponse>, Status> {
        let deadline = self.deadline(&request);
        self.respond(self.answer_best_move(request.into_inner(), deadline).await)
    }

    async fn analyze(
        &self,
        request: Request<proto::AnalyzeRequest>,
    ) -> Result<Response<proto::AnalyzeResponse>, Status> {
        let deadline = self.deadline(&request);
        self.respond(self.answer_analyze(request.into_inner(), deadline).await)
    }

    type SolveStreamStream = SolveResponses;

    /// Items are solved up to `STREAM_PARALLELISM` at once and answered in request order; each
    /// item gets the server's maximum solve time, within the stream's own deadline. An item that
    /// cannot be decoded (see [`crate::grpc::codec`]) ends the stream with its status.
    async fn solve_stream(
        &self,
        request: Request<tonic::Streaming<proto::SolveRequest>>,
    ) -> Result<Response<SolveResponses>, Status> {
        let stream_deadline = caller_deadline(request.metadata());
        let service = self.clone();
        let responses = request
            .into_inner()
            // tonic's stream cannot resume after a decoding error: stop asking it for items.
            .scan(false, |failed, item| {
                let next = (!*failed).then_some(item);
                *failed = next.as_ref().is_some_and(Result::is_err);
                std::future::ready(next)
            })
            .map(move |item| {
                let service = service.clone();
                async move {
                    let request = item?;
                    let deadline = solve_deadline(stream_deadline, service.state.max_solve_time);
                    Ok(service.solve_item(request, deadline).await)
                }
            })
            .buffered(STREAM_PARALLELISM);
        Ok(Response::new(Box::pin(responses)))
    }

    async fn explore(
        &self,
        request: Request<proto::ExploreRequest>,
    ) -> Result<Response<crate::google::longrunning::Operation>, Status> {
        crate::jobs::operations::explore(&self.state.jobs, request.into_inner()).await.map(Response::new)
    }

    type WatchExploreStream = crate::jobs::operations::OperationStream;

    async fn watch_explore(
        &self,
        request: Request<proto::WatchExploreRequest>,
    ) -> Result<Response<Self::WatchExploreStream>, Status> {
        crate::jobs::operations::watch(&self.state.jobs, request.into_inner().name).await.map(Response::new)
    }

    async fn list_explore_rows(
        &self,
        request: Request<proto::ListExploreRowsRequest>,
    ) -> Result<Response<proto::ListExploreRowsResponse>, Status> {
        crate::jobs::operations::rows(&self.state.jobs, request.into_inner()).await.map(Response::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_codes_have_their_canonical_names() {
        use crate::logging::code_name;
        assert_eq!(code_name(tonic::Code::InvalidArgument), "INVALID_ARGUMENT");
        assert_eq!(code_name(tonic::Code::DeadlineExceeded), "DEADLINE_EXCEEDED");
        assert_eq!(code_name(tonic::Code::Ok), "OK");
    }

    /// A solve's job that goes on after its call was cancelled (between two budget checks, say) keeps
    /// its slot: a queued solve starts only when the job ends.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_expensive_solve_holds_its_slot_until_its_job_ends() {
        let slots = Arc::new(tokio::sync::Semaphore::new(1));
        let metrics = Arc::new(Metrics::default());
        let store = Arc::new(Store::temporary(1 << 20));
        let jobs_dir = tempfile::tempdir().unwrap();
        let jobs = crate::jobs::runner::JobsConfig { dir: jobs_dir.path().to_path_buf(), ..Default::default() };
        let service = SolverService::new(ServiceState {
            store: store.clone(),
            max_solve_time: Duration::from_secs(60),
            table_limit: 1024,
            expensive_slots: slots.clone(),
            metrics: metrics.clone(),
            jobs: crate::jobs::runner::Runner::start(jobs, store.clone()).unwrap(),
        });
        let position = || Position::Sum(crate::games::sum::Sum::new(Vec::new(), 0).unwrap());
        let deadline = Instant::now() + Duration::from_secs(60);
        let (first_started, first_running) = tokio::sync::oneshot::channel();
        let (release_first, first_released) = std::sync::mpsc::channel::<()>();
        let first = tokio::spawn({
            let service = service.clone();
            async move {
                service
                    .run(position(), false, deadline, move |_, _| {
                        first_started.send(()).unwrap();
                        first_released.recv().unwrap();
                        Ok(())
                    })
                    .await
            }
        });
        first_running.await.unwrap();
        first.abort();
        assert!(first.await.unwrap_err().is_cancelled());
        assert_eq!(slots.available_permits(), 0, "the cancelled call's job still runs and keeps the slot");

        let (second_started, mut second_running) = tokio::sync::oneshot::channel();
        let second = tokio::spawn({
            let service = service.clone();
            async move {
                service
                    .run(position(), false, deadline, move |_, _| {
                        second_started.send(()).unwrap();
                        Ok(())
                    })
                    .await
            }
        });
        let waiting = || metrics.render().contains("nimber_expensive_solves_waiting 1");
        let queued_by = Instant::now() + Duration::from_secs(10);
        while !waiting() {
            assert!(Instant::now() < queued_by, "the second solve never queued");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert!(second_running.try_recv().is_err(), "the second solve started while the first job ran");
        release_first.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(10), second).await.unwrap().unwrap().unwrap();
        assert_eq!(slots.available_permits(), 1);
    }
}
