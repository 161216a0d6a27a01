//! [`InvalidArgument`]: what is wrong with a request, naming the field and the limit. The bottom of
//! the crate's errors: the codec, the conversion of positions, page tokens and the jobs build it,
//! and the service answers it as `INVALID_ARGUMENT`.

use crate::games::family::OverMemory;
use crate::games::{describe, FieldPath, SetupError};

/// A request that is not acceptable: the field at fault (its protobuf path, e.g.
/// `cutting.pieces[1].width`) and a readable message that names it and the limit. The service
/// answers it as `INVALID_ARGUMENT` with a `google.rpc.BadRequest` field violation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidArgument {
    /// The path of the field at fault.
    pub field: String,
    /// The whole message, starting with the field's path in most cases.
    pub message: String,
}

impl InvalidArgument {
    /// The field `field` is at fault: the message is its path followed by `problem`.
    pub fn field(field: impl std::fmt::Display, problem: impl std::fmt::Display) -> Self {
        let field = field.to_string();
        InvalidArgument { message: format!("{field} {problem}"), field }
    }

    /// The request as a whole is at fault (e.g. it does not decode): no field is named.
    pub fn request(message: impl std::fmt::Display) -> Self {
        InvalidArgument { field: String::new(), message: message.to_string() }
    }

    /// The error of a game's constructor, its fields named as protobuf paths under `game`.
    pub fn setup(game: &str, error: &dyn SetupError) -> Self {
        let name = |path: &FieldPath| format!("{game}.{path}");
        InvalidArgument { field: name(&error.field()), message: describe(error, &name) }
    }

    /// The same error for the component of a sum: `prefix` (e.g. `sum.components[3].`) before the
    /// field path and the message.
    pub fn within(self, prefix: &str) -> Self {
        InvalidArgument { field: format!("{prefix}{}", self.field), message: format!("{prefix}{}", self.message) }
    }
}

impl std::fmt::Display for InvalidArgument {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for InvalidArgument {}

impl From<OverMemory> for InvalidArgument {
    fn from(OverMemory { field, problem }: OverMemory) -> Self {
        InvalidArgument::field(field, problem)
    }
}
