//! Collectors that read the store's and the runner's counts at each scrape (atomics and two locks:
//! no I/O), and the process's resident memory (one read of `/proc/self/statm`).

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::cache::{Rejection, Store};
use crate::games::GameTag;
use crate::jobs::runner::Runner;

/// Encodes constant gauges, each `(name, help, value)`.
fn encode_gauges<const N: usize>(
    encoder: &mut DescriptorEncoder,
    gauges: [(&str, &str, u64); N],
) -> Result<(), std::fmt::Error> {
    for (name, help, value) in gauges {
        let gauge = ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX));
        gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
    }
    Ok(())
}

/// Encodes one counter without labels.
fn encode_counter(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: impl prometheus_client::encoding::EncodeCounterValue,
) -> Result<(), std::fmt::Error> {
    let counter = ConstCounter::new(value);
    counter.encode(encoder.encode_descriptor(name, help, None, prometheus_client::metrics::MetricType::Counter)?)
}

/// The process's resident memory, read at each scrape: `process_resident_memory_bytes`, the name
/// Prometheus's process collectors use, to watch against `--memory-limit`.
#[derive(Debug)]
pub(super) struct ProcessCollector;

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        match crate::limits::resident_bytes() {
            Some(bytes) => {
                encode_gauges(&mut encoder, [("process_resident_memory_bytes", "Resident memory size in bytes", bytes)])
            }
            None => Ok(()),
        }
    }
}

/// How busy the search threads are (`--search-threads`), read at each scrape.
#[derive(Debug)]
pub(super) struct SearchThreadsCollector(pub(super) Arc<crate::games::SearchThreads>);

impl Collector for SearchThreadsCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let pool = &self.0;
        encode_gauges(
            &mut encoder,
            [
                (
                    "nimber_search_threads",
                    "Threads the searches may use between them (--search-threads)",
                    pool.most() as u64,
                ),
                (
                    "nimber_search_threads_busy",
                    "Threads searching now: one per running solve or job, plus the helpers idle cores gave them",
                    pool.busy() as u64,
                ),
            ],
        )
    }
}

/// The store's counts, read at each scrape from its accessors (atomics: no store I/O).
pub(super) struct StoreCollector(pub(super) Arc<Store>);

impl std::fmt::Debug for StoreCollector {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("StoreCollector")
    }
}

impl Collector for StoreCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let store = &self.0;
        let gauges = [
            ("nimber_cache_entries", "Values in the persistent store", store.entries()),
            ("nimber_cache_size_bytes", "Size of the persistent store on disk", store.size_on_disk()),
            (
                "nimber_store_writable",
                "1 while computed values are written to disk, 0 while read-only",
                store.writable() as u64,
            ),
            (
                "nimber_store_write_buffer_bytes",
                "Bytes of values waiting for the store's writer thread (bounded by a share of --memory-limit)",
                store.write_buffer_bytes(),
            ),
        ];
        encode_gauges(&mut encoder, gauges)?;
        let mut held = encoder.encode_descriptor(
            "nimber_game_values_cache_bytes",
            "Bytes a game's own in-process cache of values holds (heaps: at most --heap-values-cache-bytes)",
            None,
            prometheus_client::metrics::MetricType::Gauge,
        )?;
        for &game in GameTag::ALL {
            let bytes = i64::try_from(game.values_cache_bytes()).unwrap_or(i64::MAX);
            ConstGauge::new(bytes).encode(held.encode_family(&GameLabel { game: game.name() })?)?;
        }
        let counters = [
            ("nimber_store_evictions", "Entries dropped to keep the store under --max-store-bytes", store.evictions()),
            (
                "nimber_store_compactions",
                "Rewrites of the store into a new file holding only its live values, to keep it under --max-store-bytes",
                store.compactions(),
            ),
            (
                "nimber_store_write_stalls",
                "Times a solve found the store's write buffer full and waited for its writer thread",
                store.write_stalls(),
            ),
            (
                "nimber_store_unwritten_values",
                "Values not written to disk because the store's write buffer stayed full (the writer could not keep up)",
                store.unwritten(),
            ),
        ];
        for (name, help, value) in counters {
            encode_counter(&mut encoder, name, help, value)?;
        }
        if let Some(tier) = store.shared_tier() {
            let counts = tier.counts();
            let counters = [
                ("nimber_shared_cache_hits", "Values found in the shared cache (Redis)", counts.hits),
                ("nimber_shared_cache_misses", "Shared-cache lookups without a valid value", counts.misses),
                (
                    "nimber_shared_cache_errors",
                    "Shared-cache calls that failed (unreachable, slow, full) and values rejected there",
                    counts.errors,
                ),
                (
                    "nimber_shared_cache_dropped",
                    "Computed values not sent to the shared cache because its queue was full",
                    counts.dropped,
                ),
                (
                    "nimber_shared_cache_lease_waits",
                    "Waits for a value another replica was computing under its lease",
                    counts.lease_waits,
                ),
            ];
            for (name, help, value) in counters {
                let counter = ConstCounter::new(value);
                counter.encode(encoder.encode_descriptor(name, help, None, counter.metric_type())?)?;
            }
            let mut rejected = encoder.encode_descriptor(
                "nimber_shared_cache_rejected",
                "Values read from the shared cache and not served, by reason; each is recomputed and overwritten",
                None,
                prometheus_client::metrics::MetricType::Counter,
            )?;
            for (reason, count) in Rejection::ALL.into_iter().zip(counts.rejected) {
                let label = RejectionLabel { reason: reason.label() };
                ConstCounter::new(count).encode(rejected.encode_family(&label)?)?;
            }
        }
        Ok(())
    }
}

/// The label of a game (its field in `Position`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GameLabel {
    game: &'static str,
}

/// The label of why a value read from the shared cache was rejected.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RejectionLabel {
    reason: &'static str,
}

/// The label of a job's final state.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabel {
    state: &'static str,
}

/// Whose job a part belonged to.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabel {
    job: &'static str,
}

/// What a job store rejected: a record or a row.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WhatLabel {
    what: &'static str,
}

/// The jobs' counts, read at each scrape from the runner (two locks, no I/O).
pub(super) struct JobsCollector(pub(super) Arc<Runner>);

impl std::fmt::Debug for JobsCollector {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("JobsCollector")
    }
}

impl Collector for JobsCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let counts = self.0.counts();
        let gauges = [
            ("nimber_jobs_queued", "Explore jobs waiting for a worker (at most --max-queued-jobs)", counts.queued),
            ("nimber_jobs_running", "Explore jobs running (at most --max-jobs)", counts.running),
            (
                "nimber_jobs_store_writable",
                "1 while the job store can write, 0 while it waits for space (job calls answer UNAVAILABLE)",
                counts.store.writable as u64,
            ),
            (
                "nimber_jobs_store_bytes",
                "Bytes of keys and values the local job store holds (at most about --max-jobs-store-bytes)",
                counts.store.bytes,
            ),
        ];
        encode_gauges(&mut encoder, gauges)?;
        encode_counter(
            &mut encoder,
            "nimber_jobs_store_moved_aside",
            "Unreadable job stores moved aside to <jobs-dir>.corrupt-<time> since the start (readable records recovered)",
            counts.store.moved_aside,
        )?;
        let mut ended = encoder.encode_descriptor(
            "nimber_jobs_ended",
            "Explore job runs that ended since the start, by final state",
            None,
            prometheus_client::metrics::MetricType::Counter,
        )?;
        for (state, count) in
            [("succeeded", counts.succeeded), ("failed", counts.failed), ("cancelled", counts.cancelled)]
        {
            ConstCounter::new(count).encode(ended.encode_family(&StateLabel { state })?)?;
        }
        let mut parts = encoder.encode_descriptor(
            "nimber_job_parts",
            "Parts of Explore jobs (family items, positions a board's moves lead to) this replica computed, for its \
             own jobs or for other replicas' (with --shared-cache)",
            None,
            prometheus_client::metrics::MetricType::Counter,
        )?;
        for (job, count) in [("own", counts.parts_of_own_jobs), ("other_replica", counts.parts_of_other_jobs)] {
            ConstCounter::new(count).encode(parts.encode_family(&JobLabel { job })?)?;
        }
        encode_gauges(
            &mut encoder,
            [("nimber_job_parts_computing", "Parts of Explore jobs this replica computes now", counts.parts_computing)],
        )?;
        encode_counter(
            &mut encoder,
            "nimber_job_part_lease_seconds",
            "Seconds spent taking and giving back the leases of job parts in the shared job store",
            counts.part_lease_seconds,
        )?;
        let mut rejected = encoder.encode_descriptor(
            "nimber_jobs_rejected",
            "Job records and table rows read from Redis that failed their check (edited, damaged, or written without \
             the fleet's secret), never served",
            None,
            prometheus_client::metrics::MetricType::Counter,
        )?;
        for (what, count) in [("record", counts.store.rejected_records), ("row", counts.store.rejected_rows)] {
            ConstCounter::new(count).encode(rejected.encode_family(&WhatLabel { what })?)?;
        }
        encode_counter(
            &mut encoder,
            "nimber_job_parts_duplicated",
            "Items of Explore jobs this replica saved over a row of the same item: computed twice (by two replicas, \
             or again after a job-store outage)",
            counts.store.duplicate_items,
        )?;
        encode_counter(
            &mut encoder,
            "nimber_jobs_rows_recomputed",
            "Rows of job tables computed again because the job store lost them or they failed their check",
            counts.rows_recomputed,
        )?;
        Ok(())
    }
}
