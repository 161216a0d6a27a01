//! The shared tier: memoized values in Redis (or Valkey), shared by every replica of a fleet
//! (`--shared-cache`). It sits behind the in-process table and sled, in front of computing.
//!
//! # Key schema in Redis
//! - `nimber:v1:` ++ store key (the game-tag byte and the canonical state, see [`crate::cache`]):
//!   the value, in the store's value format (format byte, varints, CRC-32 of key and value), so a
//!   damaged value is a miss, recomputed and overwritten, never served;
//! - `nimber:v1:\0lease/` ++ store key: the lease of a replica computing that value, a random
//!   token with an expiry (`SET NX PX`), renewed while the work runs and deleted when it ends.
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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::format::{decode_value, encode_value};
use super::{lock, RateLimit};
use crate::games::{Budget, Interrupted};

/// The prefix of every key this version writes to Redis.
pub const KEY_PREFIX: &[u8] = b"nimber:v1:";

/// What follows [`KEY_PREFIX`] in a lease key, before the store key.
const LEASE_INFIX: &[u8] = b"\0lease/";

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

/// Lookups of values on the search path that may miss before Redis is skipped (the bucket's size)...
const PROBE_BURST: f64 = 1024.0;

/// ...how many such lookups a second it allows when they keep missing (at ~25 µs a round trip,
/// about 5% of a core)...
const PROBES_PER_SECOND: f64 = 2048.0;

/// ...and how many more each hit earns: a hit saves at least the search of a component (64 nodes
/// and up), often a whole subtree of them.
const PROBES_PER_HIT: f64 = 16.0;

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
}

impl std::fmt::Debug for SharedCacheConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SharedCacheConfig")
            .field("target", &self.target)
            .field("timeout", &self.timeout)
            .field("lease", &self.lease)
            .field("queue_limit", &self.queue_limit)
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
        })
    }

    /// The URL without user name or password, for logs.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// A new connection whose connecting, sending and receiving are each bounded by the timeout.
    pub fn connect(&self) -> redis::RedisResult<redis::Connection> {
        let connection = self.client.get_connection_with_timeout(self.timeout)?;
        connection.set_read_timeout(Some(self.timeout))?;
        connection.set_write_timeout(Some(self.timeout))?;
        Ok(connection)
    }
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
    /// Calls that failed (unreachable, slow, full, a damaged value).
    pub errors: u64,
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
    dropped: AtomicU64,
    lease_waits: AtomicU64,
    warnings: RateLimit,
    tokens: Mutex<crate::random::SplitMix>,
    probes: Mutex<ProbeBudget>,
}

/// A token bucket for lookups on the search path ([`SharedCache::probe`]): a round trip to Redis
/// costs ten times a sled read, and a search asks about thousands of components a second, most of
/// them new, so the search asks Redis only while that pays: a burst of [`PROBE_BURST`], refilled at
/// [`PROBES_PER_SECOND`], and [`PROBES_PER_HIT`] more for every hit.
struct ProbeBudget {
    tokens: f64,
    refilled: Instant,
}

impl ProbeBudget {
    fn take(&mut self) -> bool {
        let now = Instant::now();
        let earned = now.duration_since(self.refilled).as_secs_f64() * PROBES_PER_SECOND;
        self.tokens = (self.tokens + earned).min(PROBE_BURST);
        self.refilled = now;
        if self.tokens < 1.0 {
            return false;
        }
        self.tokens -= 1.0;
        true
    }
}

#[derive(Default)]
struct Outbox {
    /// Redis key -> encoded value.
    pending: Vec<(Vec<u8>, Vec<u8>)>,
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
    /// is only a warning).
    pub fn start(config: SharedCacheConfig) -> Self {
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
            dropped: AtomicU64::new(0),
            lease_waits: AtomicU64::new(0),
            warnings: RateLimit::new(),
            tokens: Mutex::new(crate::random::SplitMix::new(seed)),
            probes: Mutex::new(ProbeBudget { tokens: PROBE_BURST, refilled: Instant::now() }),
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
            dropped: inner.dropped.load(Ordering::Relaxed),
            lease_waits: inner.lease_waits.load(Ordering::Relaxed),
        }
    }

    /// The value and cost of store key `key` in Redis; a miss when absent, damaged or unreachable.
    pub fn get(&self, key: &[u8]) -> Option<(u64, u64)> {
        let bytes =
            self.inner.call("GET", |con| redis::cmd("GET").arg(value_key(key)).query::<Option<Vec<u8>>>(con))?;
        self.inner.decode(key, bytes)
    }

    /// [`SharedCache::get`] for a lookup on the search path, within the probe budget (see
    /// `ProbeBudget`): a miss without asking Redis when the budget is spent.
    pub fn probe(&self, key: &[u8]) -> Option<(u64, u64)> {
        if !lock(&self.inner.probes).take() {
            return None;
        }
        let found = self.get(key);
        if found.is_some() {
            let mut probes = lock(&self.inner.probes);
            probes.tokens = (probes.tokens + PROBES_PER_HIT).min(PROBE_BURST);
        }
        found
    }

    /// Queues a computed value for the tier's thread; never waits. A full queue drops it (counted).
    pub fn send(&self, key: &[u8], value: u64, cost: u64) {
        let mut outbox = lock(&self.inner.outbox);
        if outbox.pending.len() >= self.inner.config.queue_limit {
            drop(outbox);
            self.inner.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        outbox.pending.push((value_key(key), encode_value(key, value, cost)));
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
                .cmd("GET")
                .arg(value_key(key))
                .query::<(Option<String>, Option<Vec<u8>>)>(con)
        });
        let Some((taken, value)) = answer else { return LeaseAttempt::Unavailable };
        let lease = taken.map(|_| {
            lock(&inner.leases).insert(lease_key.clone(), token.clone());
            Lease { inner, key: key.to_vec(), lease_key, token, released: false }
        });
        if let Some((value, cost)) = inner.decode(key, value) {
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
            let answer = inner.call("GET", |con| {
                redis::pipe()
                    .cmd("GET")
                    .arg(&value_key)
                    .cmd("EXISTS")
                    .arg(&lease_key)
                    .query::<(Option<Vec<u8>>, bool)>(con)
            });
            let Some((value, leased)) = answer else { return Ok(None) };
            if let Some(found) = inner.decode(key, value) {
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
        let encoded = encode_value(&self.key, value, cost);
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

    /// Decodes a value read from Redis: a hit, or a miss (absent, or damaged: counted as an error
    /// and logged; the value computed instead overwrites it).
    fn decode(&self, key: &[u8], bytes: Option<Vec<u8>>) -> Option<(u64, u64)> {
        let Some(bytes) = bytes else {
            self.misses.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        match decode_value(key, &bytes) {
            Some(stored) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Some((stored.value, stored.cost.unwrap_or(0)))
            }
            None => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                self.errors.fetch_add(1, Ordering::Relaxed);
                if self.warnings.allow() {
                    tracing::warn!(
                        shared_cache = %self.config.target,
                        "a value in the shared cache does not decode; recomputing and overwriting it \
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
                self.call("SET", |con| {
                    let mut pipe = redis::pipe();
                    for (key, value) in &batch {
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

/// The Redis key of a value: [`KEY_PREFIX`] ++ store key.
pub fn value_key(key: &[u8]) -> Vec<u8> {
    [KEY_PREFIX, key].concat()
}

/// The Redis key of the lease of computing a value.
pub fn lease_key(key: &[u8]) -> Vec<u8> {
    [KEY_PREFIX, LEASE_INFIX, key].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(value_key(&key), b"nimber:v1:\x03component");
        assert_eq!(lease_key(&key), b"nimber:v1:\0lease/\x03component");
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
