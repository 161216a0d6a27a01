//! The one place where errors become gRPC statuses: `From<Error> for tonic::Status` for the
//! domain's invalid input ([`InvalidArgument`], with a `google.rpc.BadRequest` naming the field),
//! the Solver service's errors ([`ServiceError`]) and the job calls' ([`JobsError`]).

use tonic::Status;
use tonic_types::{ErrorDetails, StatusExt};

use super::service::ServiceError;
use crate::games::Interrupted;
use crate::invalid_argument::InvalidArgument;
use crate::jobs::runner::JobsError;
use crate::jobs::StoreError;

/// `INVALID_ARGUMENT` with the message and a `google.rpc.BadRequest` naming the field (none when
/// no field is at fault).
impl From<InvalidArgument> for Status {
    fn from(error: InvalidArgument) -> Self {
        if error.field.is_empty() {
            return Status::invalid_argument(error.message);
        }
        let details = ErrorDetails::with_bad_request_violation(error.field, error.message.clone());
        Status::with_error_details(tonic::Code::InvalidArgument, error.message, details)
    }
}

/// The status of a Solver call's error, with a message saying what to do about it.
impl From<ServiceError> for Status {
    fn from(error: ServiceError) -> Self {
        let code = error.code();
        let message = match error {
            ServiceError::InvalidArgument(error) => return error.into(),
            ServiceError::Interrupted(Interrupted::DeadlineExceeded) => {
                "the solve did not finish within the deadline (the caller's or --max-solve-ms)".into()
            }
            ServiceError::SearchDeadlineExceeded => {
                "the solve did not finish within the deadline; what it computed is cached, so a retry continues from there"
                    .into()
            }
            ServiceError::Interrupted(Interrupted::Cancelled) => "the call was cancelled".into(),
            ServiceError::Interrupted(past @ (Interrupted::PastComputeLimit { .. } | Interrupted::PastMisereDepth { .. } | Interrupted::PastMisereListing { .. })) => {
                past.to_string()
            }
            ServiceError::Overloaded => {
                "every slot for expensive solves stayed busy until the deadline (see --max-expensive-solves); retry later"
                    .into()
            }
            ServiceError::Internal(message) => message,
        };
        Status::new(code, message)
    }
}

/// The status of a job call's error: a job store that waits for space is UNAVAILABLE, one past
/// its size bound RESOURCE_EXHAUSTED.
impl From<JobsError> for Status {
    fn from(error: JobsError) -> Self {
        match error {
            JobsError::InvalidArgument(error) => error.into(),
            JobsError::NotFound(message) => Status::not_found(message),
            JobsError::FailedPrecondition(message) => Status::failed_precondition(message),
            JobsError::ResourceExhausted(message) => Status::resource_exhausted(message),
            JobsError::AlreadyExists(message) => Status::already_exists(message),
            JobsError::DataLoss(message) => Status::data_loss(message),
            JobsError::Store(error @ StoreError::Full(_)) => Status::resource_exhausted(error.to_string()),
            JobsError::Store(error @ StoreError::Unavailable(_)) => Status::unavailable(error.to_string()),
            JobsError::Store(error) => Status::unavailable(format!("the job store failed: {error}")),
        }
    }
}
