//! The store's metrics, pushed into the metrics registry by whoever opens the store
//! ([`StoreMetrics`]): its counts read at each scrape from its atomics and its write buffer's
//! lock, with no store I/O.

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;

use super::{Rejection, Store};
use crate::metrics::{encode_counter, encode_gauges};

/// The store's counts, read at each scrape from its accessors (atomics and one lock: no store I/O).
pub struct StoreMetrics(pub Arc<Store>);

impl std::fmt::Debug for StoreMetrics {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("StoreMetrics")
    }
}

impl Collector for StoreMetrics {
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
                encode_counter(&mut encoder, name, help, value)?;
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

/// The label of why a value read from the shared cache was rejected.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RejectionLabel {
    reason: &'static str,
}
