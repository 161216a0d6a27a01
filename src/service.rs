//! The tonic service `nimber.v1.Solver`: converts protobuf to domain positions, runs the engine on
//! the blocking pool within the caller's deadline, and maps every error to a gRPC status in one place
//! ([`ServiceError`] → [`Status`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tonic::{Request, Response, Status};

use crate::cache::Store;
use crate::convert::{self, InvalidArgument};
use crate::games::{Budget, Game, Interrupted, Solver, Stats, Value};
use crate::proto;

/// How the engine runs: where it memoizes and how long and how big a solve may get.
#[derive(Clone)]
pub struct EngineConfig {
    /// The persistent memo.
    pub store: Arc<Store>,
    /// The server-side maximum time of one solve, whatever the caller's deadline.
    pub max_solve_time: Duration,
    /// The most entries a game's in-memory table may hold during one solve.
    pub table_limit: usize,
}

/// Everything that can go wrong with a call, mapped to a status by [`to_status`].
#[derive(Debug)]
pub enum ServiceError {
    /// The request is not acceptable.
    InvalidArgument(InvalidArgument),
    /// The solve stopped before it had an answer.
    Interrupted(Interrupted),
    /// The solve could not run (a bug: the worker panicked or vanished).
    Internal(String),
}

impl From<InvalidArgument> for ServiceError {
    fn from(error: InvalidArgument) -> Self {
        ServiceError::InvalidArgument(error)
    }
}

impl From<Interrupted> for ServiceError {
    fn from(error: Interrupted) -> Self {
        ServiceError::Interrupted(error)
    }
}

/// The gRPC status of an error: the one place where errors become status codes.
pub fn to_status(error: ServiceError) -> Status {
    match error {
        ServiceError::InvalidArgument(error) => Status::invalid_argument(error.0),
        ServiceError::Interrupted(Interrupted::DeadlineExceeded) => Status::deadline_exceeded(
            "the solve did not finish within the deadline; what it computed is cached, so a retry continues from there",
        ),
        ServiceError::Interrupted(Interrupted::Cancelled) => Status::cancelled("the call was cancelled"),
        ServiceError::Internal(message) => Status::internal(message),
    }
}

/// The `nimber.v1.Solver` service.
#[derive(Clone)]
pub struct SolverService {
    engine: EngineConfig,
}

/// Sets the cancellation flag when dropped: a call whose future is dropped (the client went away)
/// stops its solve on the blocking pool.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The deadline of a call: the caller's `grpc-timeout` (less a small margin, so that the answer
/// `DEADLINE_EXCEEDED` reaches the caller before its own timer fires) capped by the server maximum.
fn deadline_of(metadata: &tonic::metadata::MetadataMap, max_solve_time: Duration) -> Instant {
    let now = Instant::now();
    let requested = metadata
        .get("grpc-timeout")
        .and_then(|value| value.to_str().ok())
        .and_then(parse_grpc_timeout)
        .map(|timeout| timeout.saturating_sub((timeout / 10).min(Duration::from_millis(50))));
    now + requested.map_or(max_solve_time, |timeout| timeout.min(max_solve_time))
}

/// Parses a `grpc-timeout` header value: up to 8 digits and a unit (H, M, S, m, u, n).
fn parse_grpc_timeout(value: &str) -> Option<Duration> {
    let (digits, unit) = value.split_at(value.len().checked_sub(1)?);
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    let amount: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(amount * 3600),
        "M" => Duration::from_secs(amount * 60),
        "S" => Duration::from_secs(amount),
        "m" => Duration::from_millis(amount),
        "u" => Duration::from_micros(amount),
        "n" => Duration::from_nanos(amount),
        _ => return None,
    })
}

impl SolverService {
    /// A service over the given engine configuration.
    pub fn new(engine: EngineConfig) -> Self {
        Self { engine }
    }

    /// Runs `work` on the blocking pool with a solver bound to `deadline`, flushes the memo, and
    /// returns the result with the solve's statistics and duration.
    async fn run<T: Send + 'static>(
        &self,
        deadline: Instant,
        work: impl FnOnce(&mut Solver) -> Result<T, Interrupted> + Send + 'static,
    ) -> Result<(T, Stats, Duration), ServiceError> {
        let cancelled = Arc::new(AtomicBool::new(false));
        let _cancel_on_drop = CancelOnDrop(cancelled.clone());
        let engine = self.engine.clone();
        let joined = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            let mut solver = Solver::new(Budget::new(Some(deadline), cancelled), &*engine.store);
            solver.table_limit = engine.table_limit;
            let result = work(&mut solver);
            crate::games::Memo::flush(&*engine.store);
            result.map(|answer| (answer, solver.stats, started.elapsed()))
        })
        .await;
        match joined {
            Ok(result) => result.map_err(ServiceError::from),
            Err(error) => Err(ServiceError::Internal(format!("the solve failed: {error}"))),
        }
    }

    async fn solve_position(&self, request: Request<proto::SolveRequest>) -> Result<proto::SolveResponse, ServiceError> {
        let deadline = deadline_of(request.metadata(), self.engine.max_solve_time);
        let position = convert::position_from_proto(request.into_inner().position)?;
        let (value, stats, elapsed) = self.run(deadline, move |solver| position.value(solver)).await?;
        Ok(proto::SolveResponse {
            outcome: convert::outcome_to_proto(value) as i32,
            grundy: value.nimber(),
            stats: Some(convert::stats_to_proto(stats, elapsed)),
        })
    }

    async fn best_move_of(&self, request: Request<proto::BestMoveRequest>) -> Result<proto::BestMoveResponse, ServiceError> {
        let deadline = deadline_of(request.metadata(), self.engine.max_solve_time);
        let position = convert::position_from_proto(request.into_inner().position)?;
        let ((value, best), stats, elapsed) = self
            .run(deadline, move |solver| {
                let (value, mv) = position.best_move(solver)?;
                let best = mv.map(|mv| {
                    let after = position.play(&mv);
                    (mv, after)
                });
                Ok::<(Value, Option<_>), Interrupted>((value, best))
            })
            .await?;
        let (mv, after) = match best {
            Some((mv, after)) => (Some(convert::move_to_proto(&mv)), Some(convert::position_to_proto(&after))),
            None => (None, None),
        };
        Ok(proto::BestMoveResponse {
            outcome: convert::outcome_to_proto(value) as i32,
            grundy: value.nimber(),
            r#move: mv,
            after,
            stats: Some(convert::stats_to_proto(stats, elapsed)),
        })
    }
}

/// Logs a failed call (its code, never the position) and converts the error to its status.
fn respond<T>(rpc: &'static str, result: Result<T, ServiceError>) -> Result<Response<T>, Status> {
    result.map(Response::new).map_err(|error| {
        let status = to_status(error);
        tracing::info!(rpc, code = ?status.code(), message = status.message(), "request failed");
        status
    })
}

#[tonic::async_trait]
impl proto::solver_server::Solver for SolverService {
    async fn solve(&self, request: Request<proto::SolveRequest>) -> Result<Response<proto::SolveResponse>, Status> {
        respond("Solve", self.solve_position(request).await)
    }

    async fn best_move(
        &self,
        request: Request<proto::BestMoveRequest>,
    ) -> Result<Response<proto::BestMoveResponse>, Status> {
        respond("BestMove", self.best_move_of(request).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_timeouts_parse() {
        assert_eq!(parse_grpc_timeout("200m"), Some(Duration::from_millis(200)));
        assert_eq!(parse_grpc_timeout("3S"), Some(Duration::from_secs(3)));
        assert_eq!(parse_grpc_timeout("1H"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_grpc_timeout("123456789S"), None);
        assert_eq!(parse_grpc_timeout("m"), None);
        assert_eq!(parse_grpc_timeout(""), None);
        assert_eq!(parse_grpc_timeout("5x"), None);
    }
}
