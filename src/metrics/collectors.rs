//! The collectors every process has: its resident memory (one read of `/proc/self/statm`) and
//! the games' own caches of values, read at each scrape; and the helpers the owners of other
//! counts (the store, the runner) encode theirs with.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::games::GameTag;

/// Encodes constant gauges, each `(name, help, value)`.
pub(crate) fn encode_gauges<const N: usize>(
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
pub(crate) fn encode_counter(
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

/// The bytes each game's own in-process cache of values holds, read at each scrape.
#[derive(Debug)]
pub(super) struct GameValuesCollector;

impl Collector for GameValuesCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
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
        Ok(())
    }
}

/// The label of a game (its field in `Position`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GameLabel {
    game: &'static str,
}
