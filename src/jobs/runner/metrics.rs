//! The runner's metrics, pushed into the metrics registry by whoever starts the runner
//! ([`RunnerMetrics`]): the jobs' counts and the search threads' load, read at each scrape (two
//! locks, no I/O).

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;

use super::Runner;
use crate::metrics::{encode_counter, encode_gauges};

/// The jobs' counts and how busy the search threads are (`--search-threads`).
pub struct RunnerMetrics(pub Arc<Runner>);

impl std::fmt::Debug for RunnerMetrics {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("RunnerMetrics")
    }
}

impl Collector for RunnerMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let pool = self.0.search_threads();
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
        )?;
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
