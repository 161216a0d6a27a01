//! What a run measured: exact latencies (every sample kept, sorted at the end), errors by status
//! code, and the text table (or JSON) printed at the end.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// One worker's (or stream's) measurements; merged at the end.
#[derive(Default)]
pub struct Tally {
    /// Latency of every successful measured call, in nanoseconds.
    pub latencies: Vec<u64>,
    /// Failed measured calls by status code name (e.g. `UNAVAILABLE`, or `BAD_RESPONSE`).
    pub errors: BTreeMap<String, u64>,
}

impl Tally {
    /// Adds one failed call.
    pub fn error(&mut self, code: &str) {
        *self.errors.entry(code.to_string()).or_default() += 1;
    }

    /// Adds `other` into this tally.
    pub fn merge(&mut self, other: Tally) {
        if self.latencies.is_empty() {
            self.latencies = other.latencies;
        } else {
            self.latencies.extend_from_slice(&other.latencies);
        }
        for (code, count) in other.errors {
            *self.errors.entry(code).or_default() += count;
        }
    }
}

pub use nimber::logging::code_name;

/// The settings a report names.
pub struct Setup {
    pub rpc: &'static str,
    pub workload: &'static str,
    pub target: String,
    pub concurrency: usize,
    pub connections: usize,
    pub threads: usize,
}

/// The summary of a finished run.
pub struct Report {
    pub setup: Setup,
    /// The measured window: from the end of the warm-up to the last measured answer.
    pub elapsed: Duration,
    pub ok: u64,
    pub errors: BTreeMap<String, u64>,
    /// Latency quantiles in microseconds: p50, p90, p99, p99.9, max, mean.
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
}

/// The nearest-rank quantile `q` of sorted `samples`, in microseconds.
fn quantile(samples: &[u64], q: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let rank = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len());
    samples[rank - 1] as f64 / 1000.0
}

impl Report {
    /// Summarizes `tally` over `elapsed`.
    pub fn new(setup: Setup, mut tally: Tally, elapsed: Duration) -> Self {
        tally.latencies.sort_unstable();
        let samples = &tally.latencies;
        let mean = if samples.is_empty() {
            0.0
        } else {
            samples.iter().map(|&n| n as f64).sum::<f64>() / samples.len() as f64 / 1000.0
        };
        Self {
            setup,
            elapsed,
            ok: samples.len() as u64,
            p50: quantile(samples, 0.50),
            p90: quantile(samples, 0.90),
            p99: quantile(samples, 0.99),
            p999: quantile(samples, 0.999),
            max: quantile(samples, 1.0),
            mean,
            errors: tally.errors,
        }
    }

    /// Failed calls in all.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Calls (successful or not) per second of the measured window.
    pub fn rate(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 {
            (self.ok + self.error_count()) as f64 / seconds
        } else {
            0.0
        }
    }

    /// The stable text table: one `key value` pair a line (easy to read, easy to `awk`), then one
    /// `error CODE COUNT` line per status code seen.
    pub fn table(&self) -> String {
        let s = &self.setup;
        let mut out = String::new();
        let mut row = |key: &str, value: String| {
            let _ = writeln!(out, "{key:<14}{value}");
        };
        row("rpc", s.rpc.to_string());
        row("workload", s.workload.to_string());
        row("target", s.target.clone());
        row("concurrency", s.concurrency.to_string());
        row("connections", s.connections.to_string());
        row("threads", s.threads.to_string());
        row("elapsed_s", format!("{:.3}", self.elapsed.as_secs_f64()));
        row("requests", (self.ok + self.error_count()).to_string());
        row("ok", self.ok.to_string());
        row("errors", self.error_count().to_string());
        row("rps", format!("{:.1}", self.rate()));
        row("p50_us", format!("{:.1}", self.p50));
        row("p90_us", format!("{:.1}", self.p90));
        row("p99_us", format!("{:.1}", self.p99));
        row("p999_us", format!("{:.1}", self.p999));
        row("max_us", format!("{:.1}", self.max));
        row("mean_us", format!("{:.1}", self.mean));
        for (code, count) in &self.errors {
            let _ = writeln!(out, "error         {code} {count}");
        }
        out
    }

    /// The same figures as one JSON object.
    pub fn json(&self) -> String {
        let s = &self.setup;
        let errors: Vec<String> = self.errors.iter().map(|(code, count)| format!("\"{code}\":{count}")).collect();
        format!(
            concat!(
                "{{\"rpc\":\"{}\",\"workload\":\"{}\",\"target\":\"{}\",\"concurrency\":{},\"connections\":{},",
                "\"threads\":{},\"elapsed_s\":{:.3},\"requests\":{},\"ok\":{},\"errors\":{},\"rps\":{:.1},",
                "\"p50_us\":{:.1},\"p90_us\":{:.1},\"p99_us\":{:.1},\"p999_us\":{:.1},\"max_us\":{:.1},",
                "\"mean_us\":{:.1},\"errors_by_code\":{{{}}}}}"
            ),
            s.rpc,
            s.workload,
            s.target.replace('\\', "\\\\").replace('"', "\\\""),
            s.concurrency,
            s.connections,
            s.threads,
            self.elapsed.as_secs_f64(),
            self.ok + self.error_count(),
            self.ok,
            self.error_count(),
            self.rate(),
            self.p50,
            self.p90,
            self.p99,
            self.p999,
            self.max,
            self.mean,
            errors.join(",")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let samples: Vec<u64> = (1..=1000).map(|n| n * 1000).collect();
        assert_eq!(quantile(&samples, 0.5), 500.0);
        assert_eq!(quantile(&samples, 0.99), 990.0);
        assert_eq!(quantile(&samples, 0.999), 999.0);
        assert_eq!(quantile(&samples, 1.0), 1000.0);
        assert_eq!(quantile(&[7000], 0.5), 7.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
    }

    #[test]
    fn the_table_is_stable() {
        let mut tally = Tally { latencies: vec![1000, 2000, 3000], ..Default::default() };
        tally.error("UNAVAILABLE");
        let setup = Setup {
            rpc: "solve",
            workload: "mixed",
            target: "http://127.0.0.1:1".into(),
            concurrency: 2,
            connections: 1,
            threads: 1,
        };
        let report = Report::new(setup, tally, Duration::from_secs(2));
        let table = report.table();
        assert!(table.contains("requests      4\n"), "{table}");
        assert!(table.contains("rps           2.0\n"), "{table}");
        assert!(table.contains("p50_us        2.0\n"), "{table}");
        assert!(table.ends_with("error         UNAVAILABLE 1\n"), "{table}");
        assert!(report.json().contains("\"errors_by_code\":{\"UNAVAILABLE\":1}"));
    }
}
