//! The job store of a fleet (`--jobs-redis`, by default the `--shared-cache` Redis): job records in
//! Redis, so that every replica answers for every job, and leases, so that each job runs on one
//! replica at a time and a job whose replica died is resumed by another.
//!
//! # Key schema in Redis (next to the values of [`crate::cache::shared`])
//! Operation names are UUIDv7s ([`super::new_name`]): nothing in Redis counts them, so no lost key
//! can make a name come round again.
//! - `nimber:v1:\0jobs/names`: a sorted set of every operation name (all scored 0, so they sort
//!   by name, which is creation order);
//! - `nimber:v1:\0jobs/unfinished`: the set of the names of jobs not ended yet. Once created, a
//!   record is written only while it exists and its name is in the set, and a record that ended
//!   only by the script that takes the name out: the first end (say a cancel from another
//!   replica) is never overwritten by a later one (the job's own success a moment later) nor by
//!   progress, and a job whose keys were lost (a `FLUSHALL`, an eviction) writes nothing more;
//! - `nimber:v1:\0jobs/record/` ++ name: the prost-encoded [`JobRecord`];
//! - `nimber:v1:\0jobs/request/` ++ request id: the name of its operation (taken in the script
//!   that creates the record, so a repeated request maps to one operation across the fleet);
//! - `nimber:v1:\0jobs/items/` ++ name: a hash, item index (decimal) -> prost-encoded row, written
//!   only while the job's record exists and it is unfinished;
//! - `nimber:v1:\0jobs/lease/` ++ name: the lease of the replica running the job, a random token
//!   with an expiry (`SET NX PX`), renewed about once a second while it runs, deleted at its end;
//! - `nimber:v1:\0jobs/fence/` ++ name: the job's fencing token, a count raised every time a
//!   replica takes the job's lease. The replica running the job writes its record only while the
//!   count is the one it got with the lease: a replica that lost its lease unknowingly (paused,
//!   stopped, cut off longer than the lease) writes nothing more once another took the job, and
//!   learns so at its next write or renewal ([`Put::Fenced`]);
//! - `nimber:v1:\0jobs/part/` ++ name ++ `/` ++ part: the lease of the replica computing one part
//!   of a job (an item of a family, or a position a board's moves lead to), the same way: with
//!   `--shared-cache`, every free replica takes parts of the running jobs
//!   ([`crate::jobs::runner`]).
//!
//! With the fleet's secret (`--shared-cache-secret-file`), every record and row is sealed: a format
//! byte ([`SEALED`]), the prost bytes, and the secret's HMAC-SHA-256 tag of them and of their Redis
//! key (for a row, the items key, `/` and its index), as the values of the cache are: a record or
//! row edited, truncated, moved to another job or item, or written by anyone without the secret
//! fails the check, is never served, and is counted (`nimber_jobs_rejected_total`). A record that
//! fails counts as missing; a row that fails is a hole in the table, recomputed by the job
//! ([`crate::jobs::runner`]). A replica without the secret does not start on a fleet whose records
//! are sealed ([`SharedCacheConfig::check_fleet_secret`]).
//!
//! A script that writes more than one key checks every key's type (and everything else that can
//! fail) before its first write, since Redis does not undo a script that fails half-way: a creation
//! happens whole or not at all. Every call is bounded by `--shared-cache-timeout-ms`; a failed call
//! is a job-store error (UNAVAILABLE to the client), never a crash.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use prost::Message;

use super::{
    decode_record, decode_row, request_id, JobRecord, JobRecords, Put, Rows, StoreCondition, StoreError, StoreResult,
};
use crate::cache::{SharedCacheConfig, SharedSecret};
use crate::proto;
use crate::sync::{lock, RateLimit};

/// The shortest lease of a job: leases are renewed by the checkpointer, about once a second.
pub const SHORTEST_JOB_LEASE: Duration = Duration::from_secs(3);

/// How many records one round trip reads when listing.
const LIST_BATCH: usize = 100;
/// How many rows one HMGET of a table reads.
const ROWS_AT_ONCE: u64 = 64;

/// Renews a lease if this replica still holds it (the token matches), or takes it again if
/// nobody holds it: it expired while Redis was down, and this replica went on with its work.
/// Returns 0 when another replica holds it.
const RENEW_SCRIPT: &str = "local holder = redis.call('get', KEYS[1]) \
     if holder == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end \
     if not holder then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end \
     return 0";

/// The format byte of a sealed record or row (see the module).
pub const SEALED: u8 = 0xB1;

/// Creates the record of ARGV[1] (KEYS[1], bytes ARGV[2]), in the names (KEYS[2]) and the
/// unfinished jobs (KEYS[3]) and, given KEYS[4], under its request id. Returns nothing when
/// created; the name and the stored record (bytes) when the request id names an operation whose
/// record (key ARGV[3] ++ name) exists; 0 when the name is taken. Every key's type is checked first, and the
/// `#!lua` line makes Redis refuse the whole script when it is out of memory, before it runs: it
/// either writes every key or none.
const CREATE_SCRIPT: &str = "#!lua
local expected = {'string', 'zset', 'set', 'string'}
local labels = {'the record', 'jobs/names', 'jobs/unfinished', 'the request id'}
for i, key in ipairs(KEYS) do
  local found = redis.call('type', key)['ok']
  if found ~= 'none' and found ~= expected[i] then
    return redis.error_reply('ERR ' .. labels[i] .. ' holds a ' .. found .. ', not a ' .. expected[i] .. ' (WRONGTYPE); nothing was created')
  end
end
if KEYS[4] then
  local existing = redis.call('get', KEYS[4])
  if existing then
    local record_key = ARGV[3] .. existing
    local found = redis.call('type', record_key)['ok']
    if found ~= 'none' and found ~= 'string' then
      return redis.error_reply('ERR the record of the request id holds a ' .. found .. ' (WRONGTYPE); nothing was created')
    end
    local stored = redis.call('get', record_key)
    if stored then return {existing, stored} end
  end
end
if redis.call('exists', KEYS[1]) == 1 then return 0 end
redis.call('set', KEYS[1], ARGV[2])
redis.call('zadd', KEYS[2], 0, ARGV[1])
redis.call('sadd', KEYS[3], ARGV[1])
if KEYS[4] then redis.call('set', KEYS[4], ARGV[1]) end
return false";

/// Saves a record of a job not ended (KEYS[1]) only while it exists and is unfinished (in set
/// KEYS[2]), and, given a fencing token ARGV[3], while the job's count (KEYS[3]) is that token:
/// returns 1 when saved, 0 when it ended, -1 when it is gone, -2 when another replica took it.
const PUT_UNFINISHED_SCRIPT: &str = "if redis.call('exists', KEYS[1]) == 0 then return -1 end \
     if redis.call('sismember', KEYS[2], ARGV[1]) == 0 then return 0 end \
     if ARGV[3] ~= '' and redis.call('get', KEYS[3]) ~= ARGV[3] then return -2 end \
     redis.call('set', KEYS[1], ARGV[2]) return 1";

/// Saves a record that ended (KEYS[1]) only if it exists and this is the first end: it takes the
/// job out of the unfinished set (KEYS[2]), so any later end (or progress) finds it gone and
/// writes nothing; given a fencing token ARGV[3], only while the job's count (KEYS[3]) is that
/// token. Returns 1 when saved, 0 when it had ended, -1 when it is gone, -2 when another replica
/// took it.
const PUT_ENDED_SCRIPT: &str = "if redis.call('exists', KEYS[1]) == 0 then return -1 end \
     if ARGV[3] ~= '' and redis.call('get', KEYS[3]) ~= ARGV[3] then return -2 end \
     if redis.call('srem', KEYS[2], ARGV[1]) == 1 then redis.call('set', KEYS[1], ARGV[2]) return 1 end return 0";

/// Takes a job's lease (KEYS[1], token ARGV[1], for ARGV[2] ms) if nobody holds it, and raises the
/// job's fencing count (KEYS[2]): returns the new count, or 0 when another replica holds the lease.
const CLAIM_SCRIPT: &str = "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) \
     then return redis.call('incr', KEYS[2]) end return 0";

/// Saves an item (field ARGV[2], row ARGV[3]) of job ARGV[1] in its hash (KEYS[1]) only while
/// the job's record (KEYS[2]) exists and it is unfinished (in set KEYS[3]): returns 1 when saved,
/// 2 when saved over a row of the same item (it was computed twice), 0 when not saved.
const PUT_ITEM_SCRIPT: &str =
    "if redis.call('exists', KEYS[2]) == 1 and redis.call('sismember', KEYS[3], ARGV[1]) == 1 \
     then return 2 - redis.call('hset', KEYS[1], ARGV[2], ARGV[3]) end return 0";

/// Saves an item (field ARGV[1], row ARGV[2]) in the hash KEYS[1] while the job's record (KEYS[2])
/// exists, whatever its state: a row computed anew where the stored one failed. Returns 1 when saved.
const REPAIR_ITEM_SCRIPT: &str = "if redis.call('exists', KEYS[2]) == 1 \
     then redis.call('hset', KEYS[1], ARGV[1], ARGV[2]) return 1 end return 0";

/// Deletes a lease if this replica still holds it.
const RELEASE_SCRIPT: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/// Job records in Redis, shared by the fleet.
pub struct RedisJobs {
    config: SharedCacheConfig,
    /// Records and rows read that failed their check (or were not sealed where they must be).
    rejected_records: std::sync::atomic::AtomicU64,
    rejected_rows: std::sync::atomic::AtomicU64,
    /// Items saved over a row of the same item: computed twice (by two replicas, or again after a
    /// store outage).
    duplicate_items: std::sync::atomic::AtomicU64,
    lease: Duration,
    connection: Mutex<Option<redis::Connection>>,
    /// Leases held now (of jobs and of parts): key -> token.
    leases: Mutex<HashMap<Vec<u8>, String>>,
    /// The fencing token of each job whose lease this replica took (see the module).
    fences: Mutex<HashMap<String, i64>>,
    tokens: Mutex<crate::random::SplitMix>,
    /// Failed renewals and releases are logged at most once a minute.
    warnings: RateLimit,
    /// Whether Redis's eviction policy was looked at (once, at the first connection).
    policy_checked: std::sync::atomic::AtomicBool,
}

fn key(kind: &str, name: &str) -> Vec<u8> {
    [crate::cache::shared::KEY_PREFIX, b"\0jobs/", kind.as_bytes(), b"/", name.as_bytes()].concat()
}

/// The key of the lease of part `part` of job `name`.
fn part_key(name: &str, part: u64) -> Vec<u8> {
    key("part", &format!("{name}/{part}"))
}

/// What a row of job `name`'s table is sealed for: its Redis key and its index.
fn row_bound(name: &str, index: u64) -> Vec<u8> {
    [key("items", name), b"/".to_vec(), index.to_string().into_bytes()].concat()
}

fn names_key() -> Vec<u8> {
    [crate::cache::shared::KEY_PREFIX, b"\0jobs/names"].concat()
}

fn unfinished_key() -> Vec<u8> {
    [crate::cache::shared::KEY_PREFIX, b"\0jobs/unfinished"].concat()
}

impl RedisJobs {
    /// Job records in the Redis of `config`, leases of `config.lease` (at least
    /// [`SHORTEST_JOB_LEASE`]). Does not contact Redis.
    pub fn new(config: SharedCacheConfig) -> Self {
        let seed =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |t| t.as_nanos() as u64)
                ^ (u64::from(std::process::id()) << 32);
        Self {
            lease: config.lease.max(SHORTEST_JOB_LEASE),
            config,
            rejected_records: Default::default(),
            rejected_rows: Default::default(),
            duplicate_items: Default::default(),
            connection: Mutex::new(None),
            leases: Mutex::new(HashMap::new()),
            fences: Mutex::new(HashMap::new()),
            tokens: Mutex::new(crate::random::SplitMix::new(seed ^ 0x6a6f6273)),
            warnings: RateLimit::new(),
            policy_checked: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Warns, once, when this Redis may evict keys: an evicted record or set loses jobs, and an
    /// evicted lease lets a second replica run a job that runs. A Redis that refuses `CONFIG` (a
    /// managed one may) is only mentioned at INFO.
    fn check_eviction_policy(&self, connection: &mut redis::Connection) {
        if self.policy_checked.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let target = self.config.target();
        let reply: redis::RedisResult<HashMap<String, String>> =
            redis::cmd("CONFIG").arg("GET").arg("maxmemory-policy").query(connection);
        match reply {
            Ok(config) => match config.get("maxmemory-policy") {
                Some(policy) if policy != "noeviction" => tracing::warn!(
                    jobs_redis = target,
                    policy,
                    "the Redis of the job records may evict keys (maxmemory-policy {policy}), losing jobs: give the \
                     jobs a Redis of their own (--jobs-redis) with maxmemory-policy noeviction and appendonly yes"
                ),
                _ => {}
            },
            Err(error) => tracing::info!(
                jobs_redis = target,
                error = crate::cache::shared::describe(&error),
                "cannot read the eviction policy of the Redis of the job records (CONFIG GET refused); it must be noeviction"
            ),
        }
    }

    /// Runs one bounded call; a connection that failed is dropped and made anew next time.
    fn call<T>(&self, operation: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>) -> StoreResult<T> {
        self.call_again_if_stale(false, operation)
    }

    /// Runs one bounded read: as [`Self::call`], and when the connection it used was made before (Redis
    /// may have restarted since) and failed as a connection, once more on a new one. Only reads are
    /// tried again: a write whose answer was lost may have been done.
    fn read<T>(&self, operation: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>) -> StoreResult<T> {
        self.call_again_if_stale(true, operation)
    }

    fn call_again_if_stale<T>(
        &self,
        again: bool,
        mut operation: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> StoreResult<T> {
        let mut slot = lock(&self.connection);
        let stale = slot.is_some();
        let mut result = operation(self.connected(&mut slot)?);
        if let Err(error) = &result {
            *slot = None;
            if again && stale && (error.is_connection_dropped() || error.is_io_error()) {
                result = operation(self.connected(&mut slot)?);
                if result.is_err() {
                    *slot = None;
                }
            }
        }
        Ok(result?)
    }

    /// The connection in `slot`, made (and Redis's eviction policy looked at) if there is none.
    fn connected<'c>(&self, slot: &'c mut Option<redis::Connection>) -> StoreResult<&'c mut redis::Connection> {
        if slot.is_none() {
            let connection = slot.insert(self.config.connect()?);
            self.check_eviction_policy(connection);
        }
        Ok(slot.as_mut().expect("made above"))
    }

    fn secret(&self) -> Option<&SharedSecret> {
        self.config.secret.as_ref()
    }

    /// `bytes` (prost) as stored under the Redis key `bound`: sealed with the fleet's secret.
    fn seal(&self, bound: &[u8], bytes: Vec<u8>) -> Vec<u8> {
        match self.secret() {
            Some(secret) => secret.seal(bound, [&[SEALED], bytes.as_slice()].concat()),
            None => bytes,
        }
    }

    /// The prost bytes stored under the Redis key `bound`, if they pass the check: sealed by the
    /// fleet's secret where one is set; where none is, anything not sealed (sealed bytes cannot be
    /// checked without it). A failure is logged (at most a line a minute) and counted in `rejected`.
    fn open<'a>(
        &self,
        bound: &[u8],
        stored: &'a [u8],
        what: &str,
        rejected: &std::sync::atomic::AtomicU64,
    ) -> Option<&'a [u8]> {
        let opened = match self.secret() {
            Some(secret) => secret.open(bound, stored).and_then(|body| body.strip_prefix(&[SEALED])),
            None => (stored.first() != Some(&SEALED)).then_some(stored),
        };
        if opened.is_none() {
            rejected.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if self.warnings.allow() {
                tracing::warn!(
                    key = %String::from_utf8_lossy(bound),
                    "a {what} in Redis fails its check (edited, damaged, or written without the fleet's secret); it is \
                     not served (one line a minute)"
                );
            }
        }
        opened
    }

    /// The record stored under `name`'s key, if it passes the check and decodes.
    fn open_record(&self, name: &str, stored: &[u8]) -> Option<JobRecord> {
        let opened = self.open(&key("record", name), stored, "job record", &self.rejected_records)?;
        decode_record(name, opened).filter(|record| record.name == name)
    }

    fn lease_ms(&self) -> u64 {
        self.lease.as_millis() as u64
    }

    /// Takes the lease under `key` (`SET NX PX`, a fresh token): false if another replica holds it.
    fn new_token(&self) -> String {
        format!("{:016x}", lock(&self.tokens).next_u64())
    }

    fn take_lease(&self, key: Vec<u8>) -> StoreResult<bool> {
        let token = self.new_token();
        let set: Option<String> = self
            .call(|con| redis::cmd("SET").arg(&key).arg(&token).arg("NX").arg("PX").arg(self.lease_ms()).query(con))?;
        if set.is_some() {
            lock(&self.leases).insert(key, token);
        }
        Ok(set.is_some())
    }

    /// Deletes the lease under `key` (of job `name` or one of its parts) if this replica holds it.
    fn give_back(&self, key: Vec<u8>, name: &str) {
        let Some(token) = lock(&self.leases).remove(&key) else { return };
        if let Err(error) =
            self.call(|con| redis::cmd("EVAL").arg(RELEASE_SCRIPT).arg(1).arg(&key).arg(&token).query::<i64>(con))
        {
            if self.warnings.allow() {
                tracing::warn!(name, %error, "releasing a lease failed; it expires by itself (one line a minute)");
            }
        }
    }

    /// Every unfinished job, and whether a replica holds its lease.
    fn unfinished_leased(&self) -> StoreResult<Vec<(String, bool)>> {
        let unfinished: Vec<String> = self.read(|con| redis::cmd("SMEMBERS").arg(unfinished_key()).query(con))?;
        if unfinished.is_empty() {
            return Ok(Vec::new());
        }
        let leased: Vec<bool> = self.read(|con| {
            let mut pipe = redis::pipe();
            for name in &unfinished {
                pipe.cmd("EXISTS").arg(key("lease", name));
            }
            pipe.query(con)
        })?;
        Ok(unfinished.into_iter().zip(leased).collect())
    }
}

impl JobRecords for RedisJobs {
    fn get(&self, name: &str) -> StoreResult<Option<JobRecord>> {
        let bytes: Option<Vec<u8>> = self.read(|con| redis::cmd("GET").arg(key("record", name)).query(con))?;
        Ok(bytes.and_then(|bytes| self.open_record(name, &bytes)))
    }

    /// One script, atomic in Redis: a record that ended is saved only by the call that takes the
    /// job out of the unfinished set (the first end wins); one not ended only while the job is in it.
    fn put(&self, record: &JobRecord) -> StoreResult<Put> {
        let script = if record.is_done() { PUT_ENDED_SCRIPT } else { PUT_UNFINISHED_SCRIPT };
        // The runner of the job writes under its fencing token; any other replica (a cancel) without.
        let fence = lock(&self.fences).get(&record.name).map_or(String::new(), i64::to_string);
        let saved: i64 = self.call(|con| {
            redis::cmd("EVAL")
                .arg(script)
                .arg(3)
                .arg(key("record", &record.name))
                .arg(unfinished_key())
                .arg(key("fence", &record.name))
                .arg(&record.name)
                .arg(self.seal(&key("record", &record.name), record.encode_to_vec()))
                .arg(&fence)
                .query(con)
        })?;
        Ok(match saved {
            1 => Put::Saved,
            0 => Put::Ended,
            -2 => Put::Fenced,
            _ => Put::Gone,
        })
    }

    fn name_for_request_id(&self, request_id: &str) -> StoreResult<Option<String>> {
        self.read(|con| redis::cmd("GET").arg(key("request", request_id)).query(con))
    }

    /// One script, atomic in Redis, that checks every key before its first write.
    fn create(&self, record: &JobRecord) -> StoreResult<Option<JobRecord>> {
        let (name, bytes) = (&record.name, self.seal(&key("record", &record.name), record.encode_to_vec()));
        let request_id = request_id(record);
        let reply: redis::Value = self.call(|con| {
            let mut script = redis::cmd("EVAL");
            script.arg(CREATE_SCRIPT).arg(if request_id.is_empty() { 3 } else { 4 });
            script.arg(key("record", name)).arg(names_key()).arg(unfinished_key());
            if !request_id.is_empty() {
                script.arg(key("request", request_id));
            }
            script.arg(name).arg(&bytes).arg(key("record", "")).query(con)
        })?;
        match reply {
            redis::Value::Nil => Ok(None),
            redis::Value::Int(0) => Err(StoreError::NameTaken(name.clone())),
            redis::Value::Array(found) => match found.as_slice() {
                [redis::Value::BulkString(existing), redis::Value::BulkString(stored)] => {
                    let existing = String::from_utf8_lossy(existing);
                    match self.open_record(&existing, stored) {
                        Some(existing) => Ok(Some(existing)),
                        None => Err(StoreError::Redis(format!(
                            "the operation of request id {} has a record that fails its check or does not decode",
                            crate::quote::quoted(request_id)
                        ))),
                    }
                }
                other => Err(StoreError::Redis(format!("the creation script answered {other:?}"))),
            },
            other => Err(StoreError::Redis(format!("the creation script answered {other:?}"))),
        }
    }

    fn delete(&self, record: &JobRecord) -> StoreResult<()> {
        let name = &record.name;
        let request_id = request_id(record);
        self.call(|con| {
            let mut pipe = redis::pipe();
            pipe.atomic();
            if !request_id.is_empty() {
                pipe.cmd("DEL").arg(key("request", request_id)).ignore();
            }
            pipe.cmd("DEL")
                .arg(key("items", name))
                .ignore()
                .cmd("DEL")
                .arg(key("record", name))
                .ignore()
                .cmd("ZREM")
                .arg(names_key())
                .arg(name)
                .ignore()
                .cmd("SREM")
                .arg(unfinished_key())
                .arg(name)
                .ignore()
                .query::<()>(con)
        })
    }

    /// Reads the names once, then the records a hundred at a time as the caller goes on.
    fn records_after<'a>(&'a self, after: &str) -> Box<dyn Iterator<Item = StoreResult<JobRecord>> + 'a> {
        let from = if after.is_empty() { "-".to_string() } else { format!("({after}") };
        let names: Vec<String> =
            match self.read(|con| redis::cmd("ZRANGEBYLEX").arg(names_key()).arg(&from).arg("+").query(con)) {
                Ok(names) => names,
                Err(error) => return Box::new(std::iter::once(Err(error))),
            };
        let batches = names.chunks(LIST_BATCH).map(<[String]>::to_vec).collect::<Vec<_>>();
        Box::new(batches.into_iter().flat_map(move |batch| {
            let keys: Vec<Vec<u8>> = batch.iter().map(|name| key("record", name)).collect();
            let found: StoreResult<Vec<Option<Vec<u8>>>> = self.read(|con| redis::cmd("MGET").arg(&keys).query(con));
            let records: Vec<StoreResult<JobRecord>> = match found {
                Ok(found) => batch
                    .iter()
                    .zip(found)
                    .filter_map(|(name, bytes)| bytes.and_then(|bytes| self.open_record(name, &bytes)).map(Ok))
                    .collect(),
                Err(error) => vec![Err(error)],
            };
            records
        }))
    }

    fn finished_items(&self, name: &str) -> StoreResult<HashSet<u64>> {
        let fields: Vec<String> = self.read(|con| redis::cmd("HKEYS").arg(key("items", name)).query(con))?;
        Ok(fields.iter().filter_map(|field| field.parse().ok()).collect())
    }

    fn put_item(&self, name: &str, index: u64, row: &proto::ExploreRow) -> StoreResult<bool> {
        let saved: i64 = self.call(|con| {
            redis::cmd("EVAL")
                .arg(PUT_ITEM_SCRIPT)
                .arg(3)
                .arg(key("items", name))
                .arg(key("record", name))
                .arg(unfinished_key())
                .arg(name)
                .arg(index)
                .arg(self.seal(&row_bound(name, index), row.encode_to_vec()))
                .query(con)
        })?;
        if saved == 2 {
            self.duplicate_items.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(saved > 0)
    }

    fn repair_item(&self, name: &str, index: u64, row: &proto::ExploreRow) -> StoreResult<bool> {
        let saved: i64 = self.call(|con| {
            redis::cmd("EVAL")
                .arg(REPAIR_ITEM_SCRIPT)
                .arg(2)
                .arg(key("items", name))
                .arg(key("record", name))
                .arg(index)
                .arg(self.seal(&row_bound(name, index), row.encode_to_vec()))
                .query(con)
        })?;
        Ok(saved == 1)
    }

    /// Read 64 at a time until `limit` or `max_bytes` is reached, or a row is missing or fails its
    /// check (a hole).
    fn rows(&self, name: &str, start: u64, limit: usize, max_bytes: usize) -> StoreResult<Rows> {
        let (mut rows, mut taken) = (Vec::new(), 0);
        let end = start.saturating_add(limit as u64);
        let mut next = start;
        while next < end {
            let fields: Vec<u64> = (next..end.min(next.saturating_add(ROWS_AT_ONCE))).collect();
            next += fields.len() as u64;
            let found: Vec<Option<Vec<u8>>> =
                self.read(|con| redis::cmd("HMGET").arg(key("items", name)).arg(&fields).query(con))?;
            for (index, bytes) in fields.into_iter().zip(found) {
                let row = bytes.as_deref().and_then(|bytes| {
                    let opened = self.open(&row_bound(name, index), bytes, "job table row", &self.rejected_rows)?;
                    decode_row(name, opened)
                });
                let Some(row) = row else { return Ok(Rows { rows, hole: true }) };
                taken += bytes.map_or(0, |bytes| bytes.len());
                if taken > max_bytes && !rows.is_empty() {
                    return Ok(Rows { rows, hole: false });
                }
                rows.push(row);
            }
        }
        Ok(Rows { rows, hole: false })
    }

    /// Every write is in Redis when its call returns.
    fn flush(&self) -> StoreResult<()> {
        Ok(())
    }

    fn is_shared(&self) -> bool {
        true
    }

    fn condition(&self) -> StoreCondition {
        use std::sync::atomic::Ordering::Relaxed;
        StoreCondition {
            writable: true,
            rejected_records: self.rejected_records.load(Relaxed),
            rejected_rows: self.rejected_rows.load(Relaxed),
            duplicate_items: self.duplicate_items.load(Relaxed),
            ..StoreCondition::default()
        }
    }

    /// Takes the lease and, with it, the job's next fencing token.
    fn claim(&self, name: &str) -> StoreResult<bool> {
        let (lease, token) = (key("lease", name), self.new_token());
        let fence: i64 = self.call(|con| {
            redis::cmd("EVAL")
                .arg(CLAIM_SCRIPT)
                .arg(2)
                .arg(&lease)
                .arg(key("fence", name))
                .arg(&token)
                .arg(self.lease_ms())
                .query(con)
        })?;
        if fence > 0 {
            lock(&self.leases).insert(lease, token);
            lock(&self.fences).insert(name.to_string(), fence);
        }
        Ok(fence > 0)
    }

    fn release(&self, name: &str) {
        lock(&self.fences).remove(name);
        self.give_back(key("lease", name), name);
    }

    fn claim_part(&self, name: &str, part: u64) -> StoreResult<bool> {
        self.take_lease(part_key(name, part))
    }

    fn release_part(&self, name: &str, part: u64) {
        self.give_back(part_key(name, part), name);
    }

    fn has_item(&self, name: &str, index: u64) -> StoreResult<bool> {
        self.read(|con| redis::cmd("HEXISTS").arg(key("items", name)).arg(index).query(con))
    }

    /// Renews every lease held, in one pipeline; a job lease another replica holds now is dropped
    /// (with its fencing token) and the job named in the answer.
    fn renew(&self) -> Vec<String> {
        // Held through the call: a lease given back meanwhile must not be taken again.
        let mut leases = lock(&self.leases);
        let sealed = self.secret().is_some();
        if leases.is_empty() && !sealed {
            return Vec::new();
        }
        let held: Vec<(Vec<u8>, String)> = leases.iter().map(|(key, token)| (key.clone(), token.clone())).collect();
        let renewed = self.call(|con| {
            let mut pipe = redis::pipe();
            // The fleet stays marked as sealed, also after Redis lost its keys.
            if sealed {
                pipe.cmd("SET").arg(SharedCacheConfig::sealed_fleet_key()).arg(1).ignore();
            }
            for (key, token) in &held {
                pipe.cmd("EVAL").arg(RENEW_SCRIPT).arg(1).arg(key).arg(token).arg(self.lease_ms());
            }
            pipe.query::<Vec<i64>>(con)
        });
        let renewed = match renewed {
            Ok(renewed) => renewed,
            Err(error) => {
                if self.warnings.allow() {
                    tracing::warn!(%error, "renewing the leases of running jobs failed (one line a minute)");
                }
                return Vec::new();
            }
        };
        let job_lease = key("lease", "");
        let mut lost = Vec::new();
        for ((key, _), renewed) in held.into_iter().zip(renewed) {
            if renewed != 0 {
                continue;
            }
            leases.remove(&key);
            if let Some(name) = key.strip_prefix(job_lease.as_slice()) {
                let name = String::from_utf8_lossy(name).into_owned();
                lock(&self.fences).remove(&name);
                lost.push(name);
            }
        }
        lost
    }

    fn unclaimed(&self) -> StoreResult<Vec<String>> {
        Ok(self.unfinished_leased()?.into_iter().filter(|(_, leased)| !leased).map(|(name, _)| name).collect())
    }

    fn running(&self) -> StoreResult<Vec<String>> {
        Ok(self.unfinished_leased()?.into_iter().filter(|(_, leased)| *leased).map(|(name, _)| name).collect())
    }
}
