//! The shared tier: memoized values in Redis (or Valkey), shared by every replica of a fleet
//! (`--shared-cache`). It sits behind the in-process table and sled, in front of computing.
//!
//! # Key schema in Redis
//! - `nimber:v2:` ++ store key (the game-tag byte and the canonical state, see [`crate::cache`]):
//!   the value. With the fleet's secret ([`SharedSecret`]) it is in format 3 (format byte,
//!   varints, an HMAC-SHA-256 of the Redis key and the value); without one, in the store's format 2
//!   (format byte, varints, CRC-32 of key and value); a game's bytes ([`crate::games::Memo::put_bytes`])
//!   likewise in format 5 or 4. Version 1 of this schema (`nimber:v1:`) held
//!   format 2 only, unauthenticated; this version neither reads nor writes it.
//! - `nimber:v2:\0lease/` ++ store key: the lease of a replica computing that value, a random
//!   token with an expiry (`SET NX PX`), renewed while the work runs and deleted when it ends.
//!
//! # What is served
//! Every value read from Redis (a lookup, the read that comes with asking for a lease, the polls
//! of a lease wait) is read at most [`MAX_VALUE_BYTES`] + 1 bytes far ([`MAX_SEALED_BYTES`] + 1 for
//! bytes) and goes through one check, [`check_value`]: with a secret only format 3 or 5 with a
//! valid tag passes, without one only format 2 or 4
//! with a valid checksum (format 1, which has none, never). A value that fails is a miss, counted
//! by [`Rejection`], recomputed and overwritten.
//!
//! # Faults
//! Redis is an optimization, never a dependency. Every call is bounded (`--shared-cache-timeout-ms`
//! for connecting, sending and receiving); a call that fails is counted, logged at most once a
//! minute, and answered as a miss; after a failure to reach Redis the tier is skipped for
//! [`PAUSE_AFTER_FAILURE`], so a dead or slow Redis costs a request at most one bound, then
//! nothing, and sharing resumes by itself when Redis answers again. Computed values are sent off
//! the request path by the tier's own thread, in pipelined batches, from a bounded queue; values
//! that do not fit are dropped (they stay in the replica's own tiers) and counted.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use ring::hmac;

use super::format::{
    authenticated_body, decode_body, decode_value, encode_authenticated, encode_value, holds_bytes, Payload,
    VALUE_FORMAT_V2, VALUE_FORMAT_V3, VALUE_FORMAT_V4, VALUE_FORMAT_V5,
};
use crate::games::{Budget, Interrupted};
use crate::sync::{lock, RateLimit};

/// The prefix of the keys of the fleet's job records in Redis (see [`crate::jobs::shared`]).
pub const KEY_PREFIX: &[u8] = b"nimber:v1:";

/// The prefix of the values' keys and their leases' in Redis: version 2 of their schema (values
/// in format 3 or 2; version 1 held unauthenticated format 2).
pub const VALUE_PREFIX: &[u8] = b"nimber:v2:";

/// What follows [`VALUE_PREFIX`] in a lease key, before the store key.
const LEASE_INFIX: &[u8] = b"\0lease/";

/// The most bytes of a value that are read from Redis (the longest value, in format 3, takes 53):
/// a read asks for one byte more, and a value that long is rejected unread beyond it.
pub const MAX_VALUE_BYTES: usize = 64;

/// The most bytes of a bytes value (format 5 or 4) that are read from Redis: the longest the store
/// keeps ([`super::MAX_BYTES_VALUE`]) with its version byte, cost varint and tag.
pub const MAX_SEALED_BYTES: usize = super::MAX_BYTES_VALUE + 1 + 10 + 32;

/// How long the tier is skipped after a call could not reach Redis.
pub const PAUSE_AFTER_FAILURE: Duration = Duration::from_secs(1);

/// Most values sent to Redis in one pipeline.
const WRITE_BATCH: usize = 1024;

/// The longest a computed value waits before the tier's thread sends it.
const FLUSH_INTERVAL: Duration = Duration::from_millis(50);

/// Most idle connections kept for reuse.
const MAX_IDLE_CONNECTIONS: usize = 16;

/// The first and the longest pause between two looks at a value another replica computes.
const FIRST_POLL: Duration = Duration::from_millis(2);
const LONGEST_POLL: Duration = Duration::from_millis(50);

/// The seconds of round trips that lookups on the search path may spend before Redis is skipped
/// (the bucket's size: about 1000 round trips of ~25 µs)...
const PROBE_BURST_SECONDS: f64 = 0.025;

/// ...the share of the time passing that they may spend on round trips when they keep missing
/// (a twentieth)...
const PROBE_SHARE: f64 = 0.05;

/// ...and how many times its own round trip each hit earns back: a hit saves at least the search
/// of a component (64 nodes and up), often a whole subtree of them.
const PROBE_EARNINGS_PER_HIT: f64 = 16.0;

/// Renews a lease if this replica still holds it (the token matches).
const RENEW_SCRIPT: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

/// Deletes a lease if this replica still holds it.
const RELEASE_SCRIPT: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/// Where the shared tier is and how it behaves (`--shared-cache*` flags). Its `Debug` never shows
/// a password.
#[derive(Clone)]
pub struct SharedCacheConfig {
    client: redis::Client,
    target: String,
    /// The bound of every call: connecting, sending, receiving.
    pub timeout: Duration,
    /// How long a lease lives unless renewed (it is renewed every third of it while the work runs).
    pub lease: Duration,
    /// Most computed values waiting to be sent; beyond it new ones are dropped (and counted).
    pub queue_limit: usize,
    /// The fleet's secret, which authenticates the values; without it, values from Redis are
    /// only checked against damage.
    pub secret: Option<SharedSecret>,
}

impl std::fmt::Debug for SharedCacheConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SharedCacheConfig")
            .field("target", &self.target)
            .field("timeout", &self.timeout)
            .field("lease", &self.lease)
            .field("queue_limit", &self.queue_limit)
            .field("authenticated", &self.secret.is_some())
            .finish()
    }
}

impl SharedCacheConfig {
    /// The default bound of a call.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(50);
    /// The default lifetime of a lease.
    pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);
    /// The default bound of the queue of values to send.
    pub const DEFAULT_QUEUE_LIMIT: usize = 65_536;

    /// Parses `redis://[user:password@]HOST:PORT[/DB]` or `rediss://…` (TLS), with the default
    /// bounds. The error never repeats the URL (it may hold a password).
    pub fn parse(url: &str) -> Result<Self, String> {
        Self::parse_flag("--shared-cache", url)
    }

    /// [`SharedCacheConfig::parse`] of the value of `flag`, which the error names.
    pub fn parse_flag(flag: &str, url: &str) -> Result<Self, String> {
        const FORM: &str = "redis://[USER:PASSWORD@]HOST:PORT[/DB] or rediss://… for TLS";
        let scheme = url.split("://").next().unwrap_or_default();
        if !url.contains("://") || !matches!(scheme, "redis" | "rediss") {
            return Err(format!("{flag} must be a URL of the form {FORM}"));
        }
        let client = redis::Client::open(url)
            .map_err(|error| format!("{flag} is not a valid Redis URL ({FORM}): {}", describe(&error)))?;
        let info = client.get_connection_info();
        let target = format!("{scheme}://{}/{}", info.addr(), info.redis_settings().db());
        Ok(Self {
            client,
            target,
            timeout: Self::DEFAULT_TIMEOUT,
            lease: Self::DEFAULT_LEASE,
            queue_limit: Self::DEFAULT_QUEUE_LIMIT,
            secret: None,
        })
    }

    /// The URL without user name or password, for logs.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The key that says a fleet with a secret keeps its values and job records in this Redis:
    /// every replica with a secret sets it at start and about once a second.
    pub fn sealed_fleet_key() -> Vec<u8> {
        [KEY_PREFIX, b"\0fleet/sealed"].concat()
    }

    /// Whether this replica may join the fleet in this Redis: one with a secret marks the fleet
    /// as sealed ([`SharedCacheConfig::sealed_fleet_key`]); one without a secret may not join a
    /// sealed fleet, whose values and job records it could neither check nor write so that the
    /// others accept them. One line saying why, for the error at start. A Redis that does not
    /// answer is not a refusal (every value and row is checked as it is read anyway).
    pub fn check_fleet_secret(&self) -> Result<(), String> {
        let Ok(mut connection) = self.connect() else { return Ok(()) };
        let key = Self::sealed_fleet_key();
        if self.secret.is_some() {
            let _: redis::RedisResult<()> = redis::cmd("SET").arg(&key).arg(1).query(&mut connection);
            return Ok(());
        }
        match redis::cmd("EXISTS").arg(&key).query::<bool>(&mut connection) {
            Ok(true) => Err(format!(
                "the fleet at {} seals its values and job records with a secret, and this replica has none: give it \
                 the fleet's --shared-cache-secret-file (or {})",
                self.target,
                SharedSecret::ENV
            )),
            _ => Ok(()),
        }
    }

    /// A new connection whose connecting, sending and receiving are each bounded by the timeout.
    pub fn connect(&self) -> redis::RedisResult<redis::Connection> {
        let connection = self.client.get_connection_with_timeout(self.timeout)?;
        connection.set_read_timeout(Some(self.timeout))?;
        connection.set_write_timeout(Some(self.timeout))?;
        Ok(connection)
    }
}

/// The fleet's secret: the key of the HMAC-SHA-256 that authenticates every value in Redis, so
/// that only replicas holding it can write values the fleet serves. Never logged: its `Debug`
/// shows nothing of it.
#[derive(Clone)]
pub struct SharedSecret(hmac::Key);

impl std::fmt::Debug for SharedSecret {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("SharedSecret(..)")
    }
}

impl SharedSecret {
    /// The environment variable that may hold the secret itself, instead of
    /// `--shared-cache-secret-file` (a flag's value would show in `ps`).
    pub const ENV: &'static str = "NIMBER_SHARED_CACHE_SECRET";
    /// The shortest secret accepted, in bytes (128 bits); 32 random ones are best.
    pub const MIN_BYTES: usize = 16;
    /// The longest secret accepted, in bytes: a bound on reading the file.
    pub const MAX_BYTES: usize = 4096;

    /// The secret in `file` (`--shared-cache-secret-file`) or in `env` (the value of [`Self::ENV`]),
    /// `None` when neither is given. Trailing whitespace (a final newline) is not part of it. An
    /// error, one line naming the file or the variable but never the secret, for a file that
    /// cannot be read, a secret that is empty, shorter than [`Self::MIN_BYTES`] or longer than
    /// [`Self::MAX_BYTES`], or both given.
    pub fn configured(file: Option<&Path>, env: Option<OsString>) -> Result<Option<Self>, String> {
        match (file, env) {
            (None, None) => Ok(None),
            (Some(_), Some(_)) => Err(format!(
                "give the shared cache's secret in --shared-cache-secret-file or in {}, not both",
                Self::ENV
            )),
            (Some(file), None) => {
                let source = format!("--shared-cache-secret-file {}", file.display());
                let mut bytes = Vec::new();
                std::fs::File::open(file)
                    .and_then(|opened| opened.take(Self::MAX_BYTES as u64 + 1).read_to_end(&mut bytes))
                    .map_err(|error| format!("{source}: cannot read it: {error}"))?;
                Self::from_bytes(&bytes, &source).map(Some)
            }
            (None, Some(value)) => Self::from_bytes(value.as_encoded_bytes(), Self::ENV).map(Some),
        }
    }

    /// The secret `bytes` (without trailing whitespace) from `source`, checked as
    /// [`Self::configured`] says.
    pub fn from_bytes(bytes: &[u8], source: &str) -> Result<Self, String> {
        let secret = bytes.trim_ascii_end();
        let length = secret.len();
        if secret.is_empty() {
            return Err(format!("{source}: the shared cache's secret is empty"));
        }
        if length < Self::MIN_BYTES {
            return Err(format!(
                "{source}: the shared cache's secret is {length} bytes, it must be at least {} bytes \
                 (e.g. `openssl rand -hex 32`)",
                Self::MIN_BYTES
            ));
        }
        if length > Self::MAX_BYTES {
            return Err(format!(
                "{source}: the shared cache's secret is longer than {} bytes: is it the right file?",
                Self::MAX_BYTES
            ));
        }
        Ok(Self(hmac::Key::new(hmac::HMAC_SHA256, secret)))
    }

    /// `body` sealed for the Redis key `bound` (what it is and where: a job's record, an item of a
    /// job's table): the body, then the secret's tag of the key and the body, as a value's
    /// ([`seal_value`]). [`SharedSecret::open`] gives the body back.
    pub fn seal(&self, bound: &[u8], mut body: Vec<u8>) -> Vec<u8> {
        super::format::append_tag(&mut body, bound, &self.0);
        body
    }

    /// The body of `sealed` if its tag is this secret's for the Redis key `bound` (compared in
    /// constant time); `None` for anything else: damaged, edited, moved, or sealed by another secret.
    pub fn open<'a>(&self, bound: &[u8], sealed: &'a [u8]) -> Option<&'a [u8]> {
        super::format::authenticated_body(bound, sealed, &self.0)
    }

    /// A key for another use of the secret (`purpose` names it), so that no two uses share a key:
    /// the secret's HMAC of `purpose`.
    pub fn derive(&self, purpose: &str) -> [u8; 32] {
        let mut key = [0; 32];
        key.copy_from_slice(hmac::sign(&self.0, purpose.as_bytes()).as_ref());
        key
    }
}

/// Why a value read from Redis is not served (`nimber_shared_cache_rejected_total{reason}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// Longer than [`MAX_VALUE_BYTES`] (not read beyond it).
    Oversize,
    /// A version this replica does not read from Redis: with a secret anything but format 3 (so
    /// format 2, a forgery with a valid checksum or a value of a replica without the secret),
    /// without one anything but format 2 (format 1 never: it has no checksum).
    Format,
    /// Format 2 with a checksum that does not match, or a malformed value.
    Damaged,
    /// Format 3 with a tag that is not the secret's: another fleet's secret, a forgery or damage.
    Unauthenticated,
}

impl Rejection {
    /// Every reason, in the order of [`SharedCounts::rejected`].
    pub const ALL: [Rejection; 4] =
        [Rejection::Oversize, Rejection::Format, Rejection::Damaged, Rejection::Unauthenticated];

    /// The reason's label in metrics and logs.
    pub fn label(self) -> &'static str {
        match self {
            Rejection::Oversize => "oversize",
            Rejection::Format => "format",
            Rejection::Damaged => "damaged",
            Rejection::Unauthenticated => "unauthenticated",
        }
    }
}

/// The value of store key `key` as stored in Redis: in format 3 (5 for bytes) for the secret, or
/// format 2 (4) without one.
pub fn seal_value(secret: Option<&SharedSecret>, key: &[u8], value: &Payload, cost: u64) -> Vec<u8> {
    match secret {
        Some(secret) => encode_authenticated(&value_key(key), value, cost, &secret.0),
        None => encode_value(key, value, cost),
    }
}

/// The one check of every value of store key `key` read from Redis (`bytes`, non-empty): its
/// value and cost, or why it is not served. A Grundy value is at most [`MAX_VALUE_BYTES`] long,
/// bytes at most [`MAX_SEALED_BYTES`].
pub fn check_value(secret: Option<&SharedSecret>, key: &[u8], bytes: &[u8]) -> Result<(Payload, u64), Rejection> {
    let longest = match bytes.first() {
        Some(&version) if holds_bytes(version) => MAX_SEALED_BYTES,
        _ => MAX_VALUE_BYTES,
    };
    if bytes.len() > longest {
        return Err(Rejection::Oversize);
    }
    let stored = match (secret, bytes.first()) {
        (Some(secret), Some(&(VALUE_FORMAT_V3 | VALUE_FORMAT_V5))) => {
            let body = authenticated_body(&value_key(key), bytes, &secret.0).ok_or(Rejection::Unauthenticated)?;
            decode_body(body).ok_or(Rejection::Damaged)?
        }
        (None, Some(&(VALUE_FORMAT_V2 | VALUE_FORMAT_V4))) => decode_value(key, bytes).ok_or(Rejection::Damaged)?,
        _ => return Err(Rejection::Format),
    };
    Ok((stored.value, stored.cost.unwrap_or(0)))
}

/// The one read of a value from Redis: at most `longest` + 1 bytes of it (empty when absent;
/// [`MAX_VALUE_BYTES`] for a Grundy value, [`MAX_SEALED_BYTES`] for bytes), so that a huge value
/// costs no more than the longest one expected. What it returns goes through [`check_value`].
fn read_value(redis_key: &[u8], longest: usize) -> redis::Cmd {
    let mut command = redis::cmd("GETRANGE");
    command.arg(redis_key).arg(0).arg(longest);
    command
}

/// The kind of a Redis error and, for errors of the server, its message (never the URL).
pub(crate) fn describe(error: &redis::RedisError) -> String {
    match error.detail() {
        Some(detail) if !detail.contains('@') => format!("{:?}: {detail}", error.kind()),
        _ => format!("{:?}", error.kind()),
    }
}

/// What the shared tier counted since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SharedCounts {
    /// Values found in Redis.
    pub hits: u64,
    /// Lookups Redis answered without a (valid) value.
    pub misses: u64,
    /// Calls that failed (unreachable, slow, full) and values rejected.
    pub errors: u64,
    /// Values read and not served, by reason, in the order of [`Rejection::ALL`].
    pub rejected: [u64; Rejection::ALL.len()],
    /// Computed values not sent because the queue was full.
    pub dropped: u64,
    /// Waits for a value another replica held the lease of.
    pub lease_waits: u64,
}

/// The shared tier: a bounded pool of connections, the queue of values to send and the thread
/// that sends them and renews leases.
pub struct SharedCache {
    inner: Arc<Inner>,
    sender: Option<std::thread::JoinHandle<()>>,
}

struct Inner {
    config: SharedCacheConfig,
    idle: Mutex<Vec<redis::Connection>>,
    paused_until: Mutex<Option<Instant>>,
    outbox: Mutex<Outbox>,
    outbox_changed: Condvar,
    /// Leases held now: lease key -> token.
    leases: Mutex<HashMap<Vec<u8>, String>>,
    hits: AtomicU64,
    misses: AtomicU64,
    errors: AtomicU64,
    rejected: [AtomicU64; Rejection::ALL.len()],
    dropped: AtomicU64,
    lease_waits: AtomicU64,
    warnings: RateLimit,
    tokens: Mutex<crate::random::SplitMix>,
    probes: Mutex<ProbeBudget>,
}

/// A bucket of time for lookups on the search path ([`SharedCache::probe`]): a round trip to Redis
/// costs ten times a sled read, and a search asks about thousands of components a second, most of
/// them new, so the search asks Redis only while that pays. The bucket holds seconds, not lookups:
/// each lookup costs the time its round trip took, so that when round trips slow down (a machine
/// whose cores are busy: Redis waits for a core too, and one round trip took milliseconds) the
/// search asks less rather than spending its time waiting. A burst of [`PROBE_BURST_SECONDS`],
/// refilled at [`PROBE_SHARE`] of the time passing, and [`PROBE_EARNINGS_PER_HIT`] times its round
/// trip back for every hit.
struct ProbeBudget {
    seconds: f64,
    refilled: Instant,
}

impl ProbeBudget {
    /// Whether a lookup may ask Redis now.
    fn may_ask(&mut self) -> bool {
        let now = Instant::now();
        let earned = now.duration_since(self.refilled).as_secs_f64() * PROBE_SHARE;
        self.seconds = (self.seconds + earned).min(PROBE_BURST_SECONDS);
        self.refilled = now;
        self.seconds > 0.0
    }

    /// Charges a lookup's round trip, `took`, and pays back a hit's earnings.
    fn spent(&mut self, took: Duration, hit: bool) {
        let took = took.as_secs_f64();
        let earned = if hit { took * PROBE_EARNINGS_PER_HIT } else { 0.0 };
        self.seconds = (self.seconds - took + earned).min(PROBE_BURST_SECONDS);
    }
}

#[derive(Default)]
struct Outbox {
    /// Store key, value, cost: sealed by the tier's thread (off the request path) when sent.
    pending: Vec<(Vec<u8>, Payload, u64)>,
    closing: bool,
}

/// The answer to asking for a lease.
pub enum LeaseAttempt<'a> {
    /// This replica holds the lease: compute, then [`Lease::finish`].
    Held(Lease<'a>),
    /// Another replica computed the value meanwhile.
    Found(u64, u64),
    /// Another replica holds the lease: wait for the value.
    Taken,
    /// Redis cannot be used now: compute without a lease.
    Unavailable,
}

/// A lease this replica holds; renewed by the tier's thread until finished or dropped (released).
pub struct Lease<'a> {
    inner: &'a Inner,
    key: Vec<u8>,
    lease_key: Vec<u8>,
    token: String,
    /// Whether [`Lease::finish`] released it already.
    released: bool,
}

impl SharedCache {
    /// Starts the tier's thread. Does not contact Redis (the first call does; an unreachable Redis
    /// is only a warning). Without a secret, says once (WARN) that values are trusted as they are.
    pub fn start(config: SharedCacheConfig) -> Self {
        if config.secret.is_none() {
            tracing::warn!(
                shared_cache = %config.target,
                "no --shared-cache-secret-file: values from Redis are trusted as they are (checked against damage, \
                 never format 1, but not authenticated: whoever can write to this Redis can change the answers)"
            );
        }
        let seed =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |t| t.as_nanos() as u64)
                ^ (u64::from(std::process::id()) << 32);
        let inner = Arc::new(Inner {
            config,
            idle: Mutex::new(Vec::new()),
            paused_until: Mutex::new(None),
            outbox: Mutex::new(Outbox::default()),
            outbox_changed: Condvar::new(),
            leases: Mutex::new(HashMap::new()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            rejected: Default::default(),
            dropped: AtomicU64::new(0),
            lease_waits: AtomicU64::new(0),
            warnings: RateLimit::new(),
            tokens: Mutex::new(crate::random::SplitMix::new(seed)),
            probes: Mutex::new(ProbeBudget { seconds: PROBE_BURST_SECONDS, refilled: Instant::now() }),
        });
        let sender = {
            let inner = inner.clone();
            std::thread::Builder::new()
                .name("nimber-shared-cache".into())
                .spawn(move || inner.send_until_closed())
                .expect("the shared cache's thread starts")
        };
        Self { inner, sender: Some(sender) }
    }

    /// Whether Redis answers a PING now (within the bound).
    pub fn ping(&self) -> bool {
        self.inner.call("PING", |con| redis::cmd("PING").query::<String>(con)).is_some()
    }

    /// The URL without credentials, for logs.
    pub fn target(&self) -> &str {
        self.inner.config.target()
    }

    /// What the tier counted so far.
    pub fn counts(&self) -> SharedCounts {
        let inner = &self.inner;
        SharedCounts {
            hits: inner.hits.load(Ordering::Relaxed),
            misses: inner.misses.load(Ordering::Relaxed),
            errors: inner.errors.load(Ordering::Relaxed),
            rejected: std::array::from_fn(|reason| inner.rejected[reason].load(Ordering::Relaxed)),
            dropped: inner.dropped.load(Ordering::Relaxed),
            lease_waits: inner.lease_waits.load(Ordering::Relaxed),
        }
    }

    /// The value and cost of store key `key` in Redis; a miss when absent, rejected by
    /// [`check_value`] or unreachable.
    pub fn get(&self, key: &[u8]) -> Option<(u64, u64)> {
        let bytes =
            self.inner.call("GETRANGE", |con| read_value(&value_key(key), MAX_VALUE_BYTES).query::<Vec<u8>>(con))?;
        nimber(self.inner.accept(key, &bytes)?)
    }

    /// The bytes and cost of store key `key` in Redis ([`crate::games::Memo::get_bytes`]); a miss
    /// when absent, rejected by [`check_value`], a Grundy value, or unreachable.
    pub fn get_bytes(&self, key: &[u8]) -> Option<(Vec<u8>, u64)> {
        let bytes =
            self.inner.call("GETRANGE", |con| read_value(&value_key(key), MAX_SEALED_BYTES).query::<Vec<u8>>(con))?;
        let (value, cost) = self.inner.accept(key, &bytes)?;
        Some((value.into_bytes()?, cost))
    }

    /// [`SharedCache::get`] for a lookup on the search path, within the probe budget (see
    /// `ProbeBudget`): a miss without asking Redis when the budget is spent.
    pub fn probe(&self, key: &[u8]) -> Option<(u64, u64)> {
        if !lock(&self.inner.probes).may_ask() {
            return None;
        }
        let asked = Instant::now();
        let found = self.get(key);
        lock(&self.inner.probes).spent(asked.elapsed(), found.is_some());
        found
    }

    /// Queues a computed value for the tier's thread; never waits. A full queue drops it (counted).
    pub fn send(&self, key: &[u8], value: Payload, cost: u64) {
        let mut outbox = lock(&self.inner.outbox);
        if outbox.pending.len() >= self.inner.config.queue_limit {
            drop(outbox);
            self.inner.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        outbox.pending.push((key.to_vec(), value, cost));
        if outbox.pending.len() >= WRITE_BATCH {
            self.inner.outbox_changed.notify_all();
        }
    }

    /// Asks for the lease of computing store key `key`; also reads the value, in the same round trip.
    pub fn lease(&self, key: &[u8]) -> LeaseAttempt<'_> {
        let inner = &*self.inner;
        let token = format!("{:016x}", lock(&inner.tokens).next_u64());
        let lease_key = lease_key(key);
        let lease_ms = inner.config.lease.as_millis().max(1) as u64;
        let answer = inner.call("SET NX", |con| {
            redis::pipe()
                .cmd("SET")
                .arg(&lease_key)
                .arg(&token)
                .arg("NX")
                .arg("PX")
                .arg(lease_ms)
                .add_command(read_value(&value_key(key), MAX_VALUE_BYTES))
                .query::<(Option<String>, Vec<u8>)>(con)
        });
        let Some((taken, value)) = answer else { return LeaseAttempt::Unavailable };
        let lease = taken.map(|_| {
            lock(&inner.leases).insert(lease_key.clone(), token.clone());
            Lease { inner, key: key.to_vec(), lease_key, token, released: false }
        });
        if let Some((value, cost)) = inner.accept(key, &value).and_then(nimber) {
            return LeaseAttempt::Found(value, cost);
        }
        match lease {
            Some(lease) => LeaseAttempt::Held(lease),
            None => LeaseAttempt::Taken,
        }
    }

    /// Waits, within `budget`, for the value of store key `key` that another replica computes
    /// under its lease: `Ok(Some(..))` once it is there, `Ok(None)` when the lease is gone without
    /// a value (the holder gave up or died: ask for the lease again) or Redis cannot be used.
    pub fn wait_for_value(&self, key: &[u8], budget: &Budget) -> Result<Option<(u64, u64)>, Interrupted> {
        let inner = &*self.inner;
        inner.lease_waits.fetch_add(1, Ordering::Relaxed);
        let (value_key, lease_key) = (value_key(key), lease_key(key));
        let mut pause = FIRST_POLL;
        loop {
            budget.check()?;
            let answer = inner.call("GETRANGE", |con| {
                redis::pipe()
                    .add_command(read_value(&value_key, MAX_VALUE_BYTES))
                    .cmd("EXISTS")
                    .arg(&lease_key)
                    .query::<(Vec<u8>, bool)>(con)
            });
            let Some((value, leased)) = answer else { return Ok(None) };
            if let Some(found) = inner.accept(key, &value).and_then(nimber) {
                return Ok(Some(found));
            }
            if !leased {
                return Ok(None);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(LONGEST_POLL);
        }
    }
}

impl Drop for SharedCache {
    /// Sends what is queued (each call bounded), then stops the tier's thread.
    fn drop(&mut self) {
        lock(&self.inner.outbox).closing = true;
        self.inner.outbox_changed.notify_all();
        if let Some(sender) = self.sender.take() {
            let _ = sender.join();
        }
    }
}

impl Lease<'_> {
    /// Ends the work: writes the value and releases the lease in one round trip, so that replicas
    /// waiting for it find the value before they could take the lease.
    pub fn finish(mut self, value: u64, cost: u64) {
        let inner = self.inner;
        lock(&inner.leases).remove(&self.lease_key);
        let encoded = seal_value(inner.config.secret.as_ref(), &self.key, &Payload::Nimber(value), cost);
        inner.call("SET", |con| {
            let mut pipe = redis::pipe();
            pipe.cmd("SET").arg(value_key(&self.key)).arg(&encoded).ignore();
            pipe.cmd("EVAL").arg(RELEASE_SCRIPT).arg(1).arg(&self.lease_key).arg(&self.token).ignore();
            pipe.query::<()>(con)
        });
        self.released = true;
    }
}

impl Drop for Lease<'_> {
    /// The work stopped without a value (a deadline, a cancellation): releases the lease so that
    /// another replica may take it at once.
    fn drop(&mut self) {
        if self.released {
            return;
        }
        lock(&self.inner.leases).remove(&self.lease_key);
        self.inner.call("DEL", |con| {
            redis::cmd("EVAL").arg(RELEASE_SCRIPT).arg(1).arg(&self.lease_key).arg(&self.token).query::<i64>(con)
        });
    }
}

impl Inner {
    /// Runs one bounded call on a pooled connection. A failure is counted and logged (at most one
    /// line a minute) and is `None`; one that could not reach Redis pauses the tier.
    fn call<T>(
        &self,
        what: &str,
        operation: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Option<T> {
        if lock(&self.paused_until).is_some_and(|until| Instant::now() < until) {
            return None;
        }
        let pooled = lock(&self.idle).pop();
        let connection = match pooled {
            Some(connection) => Ok(connection),
            None => self.config.connect(),
        };
        let result =
            connection.and_then(|mut connection| operation(&mut connection).map(|answer| (answer, connection)));
        match result {
            Ok((answer, connection)) => {
                let mut idle = lock(&self.idle);
                if idle.len() < MAX_IDLE_CONNECTIONS {
                    idle.push(connection);
                }
                Some(answer)
            }
            Err(error) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                let unreachable = error.is_io_error() || error.is_timeout() || error.is_connection_dropped();
                if unreachable {
                    *lock(&self.paused_until) = Some(Instant::now() + PAUSE_AFTER_FAILURE);
                }
                if self.warnings.allow() {
                    tracing::warn!(
                        shared_cache = %self.config.target,
                        call = what,
                        error = %describe(&error),
                        "the shared cache failed; serving from this replica's own tiers (at most one such line a minute)"
                    );
                }
                None
            }
        }
    }

    /// What [`read_value`] read of store key `key`, through [`check_value`]: a hit, or a miss
    /// (empty: absent; rejected: counted by reason and as an error, and logged; the value
    /// computed instead overwrites it).
    fn accept(&self, key: &[u8], bytes: &[u8]) -> Option<(Payload, u64)> {
        if bytes.is_empty() {
            self.misses.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        match check_value(self.config.secret.as_ref(), key, bytes) {
            Ok(found) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some(found)
            }
            Err(rejection) => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                self.errors.fetch_add(1, Ordering::Relaxed);
                self.rejected[rejection as usize].fetch_add(1, Ordering::Relaxed);
                if self.warnings.allow() {
                    tracing::warn!(
                        shared_cache = %self.config.target,
                        reason = rejection.label(),
                        "a value in the shared cache is rejected; recomputing and overwriting it \
                         (at most one such line a minute)"
                    );
                }
                None
            }
        }
    }

    /// The tier's thread: sends queued values in pipelined batches (at least every
    /// [`FLUSH_INTERVAL`]) and renews held leases every third of their lifetime, until closed.
    fn send_until_closed(&self) {
        let renew_every = self.config.lease / 3;
        let mut last_renewal = Instant::now();
        loop {
            let (batch, closing) = {
                let mut outbox = lock(&self.outbox);
                if outbox.pending.len() < WRITE_BATCH && !outbox.closing {
                    let wait = FLUSH_INTERVAL.min(renew_every.saturating_sub(last_renewal.elapsed()));
                    outbox = self.outbox_changed.wait_timeout(outbox, wait).unwrap_or_else(|p| p.into_inner()).0;
                }
                let take = outbox.pending.len().min(WRITE_BATCH);
                (outbox.pending.drain(..take).collect::<Vec<_>>(), outbox.closing)
            };
            if !batch.is_empty() {
                let secret = self.config.secret.as_ref();
                let sealed: Vec<_> = batch
                    .iter()
                    .map(|(key, value, cost)| (value_key(key), seal_value(secret, key, value, *cost)))
                    .collect();
                self.call("SET", |con| {
                    let mut pipe = redis::pipe();
                    for (key, value) in &sealed {
                        pipe.cmd("SET").arg(key).arg(value).ignore();
                    }
                    pipe.query::<()>(con)
                });
            }
            if last_renewal.elapsed() >= renew_every {
                last_renewal = Instant::now();
                self.renew_leases();
            }
            if closing && lock(&self.outbox).pending.is_empty() {
                return;
            }
        }
    }

    fn renew_leases(&self) {
        let leases: Vec<(Vec<u8>, String)> = lock(&self.leases).iter().map(|(k, t)| (k.clone(), t.clone())).collect();
        if leases.is_empty() {
            return;
        }
        let lease_ms = self.config.lease.as_millis().max(1) as u64;
        self.call("PEXPIRE", |con| {
            let mut pipe = redis::pipe();
            for (lease_key, token) in &leases {
                pipe.cmd("EVAL").arg(RENEW_SCRIPT).arg(1).arg(lease_key).arg(token).arg(lease_ms).ignore();
            }
            pipe.query::<()>(con)
        });
    }
}

/// The Grundy value and cost of what [`check_value`] accepted, if it is a Grundy value.
fn nimber((value, cost): (Payload, u64)) -> Option<(u64, u64)> {
    Some((value.nimber()?, cost))
}

/// The Redis key of a value: [`VALUE_PREFIX`] ++ store key.
pub fn value_key(key: &[u8]) -> Vec<u8> {
    [VALUE_PREFIX, key].concat()
}

/// The Redis key of the lease of computing a value.
pub fn lease_key(key: &[u8]) -> Vec<u8> {
    [VALUE_PREFIX, LEASE_INFIX, key].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probe budget is time: lookups whose round trips take 5 ms (a busy machine) get 200 times
    /// fewer than lookups of 25 µs, and lookups that hit keep it.
    #[test]
    fn slow_round_trips_get_fewer_lookups_and_hits_keep_the_budget() {
        let lookups = |took: Duration, hit: bool| {
            let mut budget = ProbeBudget { seconds: PROBE_BURST_SECONDS, refilled: Instant::now() };
            let mut asked = 0;
            while asked < 100_000 && budget.may_ask() {
                budget.spent(took, hit);
                asked += 1;
            }
            asked
        };
        let (fast, slow) = (lookups(Duration::from_micros(25), false), lookups(Duration::from_millis(5), false));
        assert!((900..1200).contains(&fast), "{fast} lookups of 25 µs");
        assert!((5..=6).contains(&slow), "{slow} lookups of 5 ms");
        assert_eq!(lookups(Duration::from_millis(5), true), 100_000);
    }

    #[test]
    fn urls_parse_and_never_show_their_credentials() {
        let config = SharedCacheConfig::parse("redis://reader:hunter2@cache.example:6380/3").unwrap();
        assert_eq!(config.target(), "redis://cache.example:6380/3");
        assert!(!format!("{config:?}").contains("hunter2"));
        let tls = SharedCacheConfig::parse("rediss://:hunter2@cache.example:6380").unwrap();
        assert_eq!(tls.target(), "rediss://cache.example:6380/0");
        for bad in ["cache.example:6379", "http://cache.example", "redis://:hunter2@cache.example:port", "redis://"] {
            let error = SharedCacheConfig::parse(bad).err().unwrap_or_else(|| panic!("{bad} parsed"));
            assert!(error.starts_with("--shared-cache"), "{error}");
            assert!(!error.contains("hunter2"), "{error}");
        }
    }

    #[test]
    fn keys_are_namespaced_and_leases_apart_from_values() {
        let key = crate::cache::store_key(crate::games::GameTag::Tetris, b"component");
        assert_eq!(value_key(&key), b"nimber:v2:\x03component");
        assert_eq!(lease_key(&key), b"nimber:v2:\0lease/\x03component");
    }

    fn secret(text: &str) -> SharedSecret {
        SharedSecret::from_bytes(text.as_bytes(), "a test").unwrap()
    }

    #[test]
    fn only_values_in_the_fleets_format_with_a_valid_tag_or_checksum_are_served() {
        use crate::cache::VALUE_FORMAT_V1;
        use Rejection::*;
        let key = crate::cache::store_key(crate::games::GameTag::Tetris, b"component");
        let fleet = secret("the fleet's secret, 32 bytes long");
        let sealed = seal_value(Some(&fleet), &key, &Payload::Nimber(7), 4096);
        assert_eq!(sealed[0], VALUE_FORMAT_V3);
        assert_eq!(check_value(Some(&fleet), &key, &sealed), Ok((Payload::Nimber(7), 4096)));
        for at in 0..sealed.len() {
            for bit in 0..8 {
                let mut flipped = sealed.clone();
                flipped[at] ^= 1 << bit;
                let expected = if at == 0 { Format } else { Unauthenticated };
                assert_eq!(check_value(Some(&fleet), &key, &flipped), Err(expected), "bit {bit} of byte {at}");
            }
        }
        let other_key = crate::cache::store_key(crate::games::GameTag::Tetris, b"componenu");
        assert_eq!(check_value(Some(&fleet), &other_key, &sealed), Err(Unauthenticated));
        let other_fleet = secret("another fleet's secret, as long");
        assert_eq!(check_value(Some(&other_fleet), &key, &sealed), Err(Unauthenticated));
        assert_eq!(check_value(Some(&fleet), &key, &sealed[..sealed.len() - 1]), Err(Unauthenticated));
        assert_eq!(check_value(Some(&fleet), &key, &sealed[..1]), Err(Unauthenticated));
        // Without the secret a tag cannot be checked; with it, a checksum (which anyone can
        // compute) is not enough.
        assert_eq!(check_value(None, &key, &sealed), Err(Format));
        let checksummed = seal_value(None, &key, &Payload::Nimber(7), 4096);
        assert_eq!(checksummed, encode_value(&key, &Payload::Nimber(7), 4096));
        assert_eq!(check_value(None, &key, &checksummed), Ok((Payload::Nimber(7), 4096)));
        assert_eq!(check_value(Some(&fleet), &key, &checksummed), Err(Format));
        let mut damaged = checksummed.clone();
        damaged[1] ^= 1;
        assert_eq!(check_value(None, &key, &damaged), Err(Damaged));
        // Format 1 has no checksum: never, with or without a secret.
        let mut old = vec![VALUE_FORMAT_V1];
        old.extend_from_slice(&7u64.to_le_bytes());
        for secret in [None, Some(&fleet)] {
            assert_eq!(check_value(secret, &key, &old), Err(Format));
        }
        // Too long is rejected before anything else, and the longest value is not.
        let mut long = sealed.clone();
        long.resize(MAX_VALUE_BYTES + 1, 0);
        assert_eq!(check_value(Some(&fleet), &key, &long), Err(Oversize));
        let longest = seal_value(Some(&fleet), &key, &Payload::Nimber(u64::MAX), u64::MAX);
        assert_eq!(check_value(Some(&fleet), &key, &longest), Ok((Payload::Nimber(u64::MAX), u64::MAX)));
        // Bytes take the same checks, within their own bound.
        let bytes = Payload::Bytes(vec![9; 1000]);
        for secret in [None, Some(&fleet)] {
            let sealed = seal_value(secret, &key, &bytes, 77);
            assert_eq!(sealed[0], if secret.is_some() { VALUE_FORMAT_V5 } else { VALUE_FORMAT_V4 });
            assert_eq!(check_value(secret, &key, &sealed), Ok((bytes.clone(), 77)));
            let mut flipped = sealed.clone();
            flipped[500] ^= 1;
            assert!(check_value(secret, &key, &flipped).is_err());
            let mut long = sealed;
            long.resize(MAX_SEALED_BYTES + 1, 0);
            assert_eq!(check_value(secret, &key, &long), Err(Oversize));
        }
    }

    #[test]
    fn a_secret_comes_from_a_file_or_the_environment_within_bounds_and_never_shows() {
        let key = crate::cache::store_key(crate::games::GameTag::Tetris, b"component");
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, contents: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, contents).unwrap();
            path
        };
        let good = file("good", b"the fleet's secret, 32 bytes long\n");
        let from_file = SharedSecret::configured(Some(&good), None).unwrap().unwrap();
        let expected = seal_value(Some(&secret("the fleet's secret, 32 bytes long")), &key, &Payload::Nimber(1), 2);
        assert_eq!(
            seal_value(Some(&from_file), &key, &Payload::Nimber(1), 2),
            expected,
            "the final newline is not part of it"
        );
        let from_env = SharedSecret::configured(None, Some("the fleet's secret, 32 bytes long".into())).unwrap();
        assert_eq!(seal_value(from_env.as_ref(), &key, &Payload::Nimber(1), 2), expected);
        assert!(SharedSecret::configured(None, None).unwrap().is_none());

        let missing = dir.path().join("missing");
        let cases = [
            (missing.clone(), "cannot read it"),
            (dir.path().to_path_buf(), "cannot read it"),
            (file("empty", b"\n"), "is empty"),
            (file("short", b"hunter2\n"), "at least 16 bytes"),
            (file("long", &[b'x'; SharedSecret::MAX_BYTES + 1]), "longer than 4096 bytes"),
        ];
        for (path, says) in cases {
            let error = SharedSecret::configured(Some(&path), None).unwrap_err();
            assert!(error.starts_with(&format!("--shared-cache-secret-file {}: ", path.display())), "{error}");
            assert!(error.contains(says) && !error.contains("hunter2") && !error.contains('\n'), "{error}");
        }
        let error = SharedSecret::configured(None, Some("hunter2".into())).unwrap_err();
        assert!(error.starts_with(SharedSecret::ENV) && !error.contains("hunter2"), "{error}");
        let error = SharedSecret::configured(Some(&good), Some("hunter2, the long one".into())).unwrap_err();
        assert!(error.contains(SharedSecret::ENV) && !error.contains("hunter2"), "{error}");

        let mut config = SharedCacheConfig::parse("redis://cache.example:6379").unwrap();
        config.secret = Some(from_file);
        let shown = format!("{config:?} {:?}", config.secret);
        assert!(!shown.contains("secret, 32") && shown.contains("authenticated: true"), "{shown}");
    }

    /// An unreachable Redis costs one bounded call, then the tier is skipped: misses at once.
    #[test]
    fn an_unreachable_redis_is_a_miss_and_then_skipped() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let cache = SharedCache::start(SharedCacheConfig::parse(&format!("redis://127.0.0.1:{port}")).unwrap());
        assert_eq!(cache.get(b"\x03key"), None);
        assert_eq!(cache.counts().errors, 1);
        assert_eq!(cache.get(b"\x03key"), None);
        assert!(matches!(cache.lease(b"\x03key"), LeaseAttempt::Unavailable));
        assert_eq!(cache.counts().errors, 1, "the tier was not skipped after the failure");
    }
}
