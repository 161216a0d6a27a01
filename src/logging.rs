//! Logging: text (no colour codes unless stderr is a terminal) or JSON lines on stderr, and the
//! per-request lines (failed calls and stream items) at a level by who is at fault and under a rate
//! limit, so that a flood of bad requests cannot flood the log.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use tonic::Code;

use crate::sync::lock;

/// The format of log lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Installs the global subscriber: `RUST_LOG` filters (default `info`), lines go to stderr.
pub fn init(format: LogFormat) {
    let filter = quiet_sled(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => builder.json().init(),
    }
}

/// Silences sled's own log lines unless `RUST_LOG` names sled: the store reports every sled
/// failure itself, once (a damaged store would otherwise log sled's view of it too).
fn quiet_sled(filter: tracing_subscriber::EnvFilter) -> tracing_subscriber::EnvFilter {
    let names_sled = std::env::var("RUST_LOG").is_ok_and(|directives| directives.contains("sled"));
    match "sled=off".parse() {
        Ok(directive) if !names_sled => filter.add_directive(directive),
        _ => filter,
    }
}

/// The default of `--log-lines-per-second`.
pub const DEFAULT_REQUEST_LINES_PER_SECOND: u32 = 20;

/// Per-request log lines allowed per second (0: no limit), with a burst of one second's worth.
static REQUEST_LINES_PER_SECOND: AtomicU32 = AtomicU32::new(DEFAULT_REQUEST_LINES_PER_SECOND);

/// The token bucket of per-request lines.
static REQUEST_LINE_BUCKET: Mutex<Option<TokenBucket>> = Mutex::new(None);

/// Sets how many per-request lines may be written per second (0: no limit).
pub fn set_request_lines_per_second(lines: u32) {
    REQUEST_LINES_PER_SECOND.store(lines, Ordering::Relaxed);
}

/// A token bucket that counts what it refuses.
struct TokenBucket {
    tokens: f64,
    refilled: Instant,
    suppressed: u64,
}

impl TokenBucket {
    /// Takes a token if there is one at `now` (`rate` per second, at most `rate` stored); returns
    /// whether it did, and how many lines were refused before this one since the last success.
    fn take(&mut self, now: Instant, rate: f64) -> (bool, u64) {
        self.tokens = (self.tokens + now.saturating_duration_since(self.refilled).as_secs_f64() * rate).min(rate);
        self.refilled = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            (true, std::mem::take(&mut self.suppressed))
        } else {
            self.suppressed += 1;
            (false, 0)
        }
    }
}

/// Says how many per-request lines were suppressed, if any, every `period` (so that a flood that
/// stops is still reported); runs until dropped.
pub async fn report_suppressed_every(period: std::time::Duration) {
    let mut ticks = tokio::time::interval(period);
    loop {
        ticks.tick().await;
        let suppressed = lock(&REQUEST_LINE_BUCKET).as_mut().map_or(0, |bucket| std::mem::take(&mut bucket.suppressed));
        report_suppressed(suppressed);
    }
}

fn report_suppressed(suppressed: u64) {
    if suppressed > 0 {
        tracing::warn!(suppressed, "{suppressed} similar lines suppressed (--log-lines-per-second)");
    }
}

/// Whether one more per-request line may be written now; when lines were suppressed before it,
/// says how many in a line of its own first. Lines about one connection (a refused TLS client, a
/// connection closed for its conduct) share the limit.
pub(crate) fn request_line_allowed() -> bool {
    let rate = REQUEST_LINES_PER_SECOND.load(Ordering::Relaxed);
    if rate == 0 {
        return true;
    }
    let now = Instant::now();
    let (allowed, suppressed) = lock(&REQUEST_LINE_BUCKET)
        .get_or_insert_with(|| TokenBucket { tokens: f64::from(rate), refilled: now, suppressed: 0 })
        .take(now, f64::from(rate));
    report_suppressed(suppressed);
    allowed
}

/// How bad a status code is for this server.
#[derive(Debug, PartialEq, Eq)]
enum Severity {
    /// The client's mistake or choice (bad input, its deadline, it went away): DEBUG.
    Client,
    /// The server is saturated or going away: WARN.
    Load,
    /// A fault of ours: ERROR.
    Fault,
}

fn severity(code: Code) -> Severity {
    match code {
        Code::ResourceExhausted | Code::Unavailable => Severity::Load,
        Code::Internal | Code::Unknown | Code::DataLoss => Severity::Fault,
        _ => Severity::Client,
    }
}

/// Logs a failed call or stream item of `rpc` (its code and message, never the position), at
/// DEBUG for clients' mistakes, WARN for overload and ERROR for faults, rate-limited.
pub fn failed(rpc: &str, what: &str, code: Code, message: &str) {
    let code_name = code_name(code);
    match severity(code) {
        Severity::Client => {
            if tracing::enabled!(tracing::Level::DEBUG) && request_line_allowed() {
                tracing::debug!(rpc, code = code_name, message, "{what}");
            }
        }
        Severity::Load => {
            if tracing::enabled!(tracing::Level::WARN) && request_line_allowed() {
                tracing::warn!(rpc, code = code_name, message, "{what}");
            }
        }
        Severity::Fault => {
            if request_line_allowed() {
                tracing::error!(rpc, code = code_name, message, "{what}");
            }
        }
    }
}

/// The canonical name of a status code, e.g. `INVALID_ARGUMENT`.
pub fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code::*;
    match code {
        Ok => "OK",
        Cancelled => "CANCELLED",
        Unknown => "UNKNOWN",
        InvalidArgument => "INVALID_ARGUMENT",
        DeadlineExceeded => "DEADLINE_EXCEEDED",
        NotFound => "NOT_FOUND",
        AlreadyExists => "ALREADY_EXISTS",
        PermissionDenied => "PERMISSION_DENIED",
        ResourceExhausted => "RESOURCE_EXHAUSTED",
        FailedPrecondition => "FAILED_PRECONDITION",
        Aborted => "ABORTED",
        OutOfRange => "OUT_OF_RANGE",
        Unimplemented => "UNIMPLEMENTED",
        Internal => "INTERNAL",
        Unavailable => "UNAVAILABLE",
        DataLoss => "DATA_LOSS",
        Unauthenticated => "UNAUTHENTICATED",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_bucket_allows_its_rate_and_counts_the_rest() {
        let start = Instant::now();
        let mut bucket = TokenBucket { tokens: 2.0, refilled: start, suppressed: 0 };
        assert_eq!(bucket.take(start, 2.0), (true, 0));
        assert_eq!(bucket.take(start, 2.0), (true, 0));
        assert_eq!(bucket.take(start, 2.0), (false, 0));
        assert_eq!(bucket.take(start, 2.0), (false, 0));
        // Half a second later one token is back, and the two refused lines are reported.
        assert_eq!(bucket.take(start + Duration::from_millis(500), 2.0), (true, 2));
        // Tokens never pile up past one second's worth.
        assert_eq!(bucket.take(start + Duration::from_secs(100), 2.0), (true, 0));
        assert_eq!(bucket.take(start + Duration::from_secs(100), 2.0), (true, 0));
        assert_eq!(bucket.take(start + Duration::from_secs(100), 2.0), (false, 0));
    }

    #[test]
    fn faults_are_errors_and_mistakes_are_not() {
        assert_eq!(severity(Code::Internal), Severity::Fault);
        assert_eq!(severity(Code::InvalidArgument), Severity::Client);
        assert_eq!(severity(Code::DeadlineExceeded), Severity::Client);
        assert_eq!(severity(Code::Cancelled), Severity::Client);
        assert_eq!(severity(Code::ResourceExhausted), Severity::Load);
    }
}
