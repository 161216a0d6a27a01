//! What the machine (or the container) allows this process: the memory limit (cgroup v2
//! `memory.max`, cgroup v1 `memory.limit_in_bytes`, else physical RAM), the open-file limit, the
//! instructions this build needs from the CPU ([`missing_cpu_features`]), and the split of a
//! memory limit between the in-memory tables of concurrent solves and jobs, the store's
//! in-memory tier and sled's page cache ([`share_memory`]). The parsers take file contents, so they
//! are tested on samples; only the `*_from_system` functions read files.

use std::path::{Path, PathBuf};

/// Bytes per in-memory table entry: a table of `n` entries may take `n × 80` bytes (the 2×2
/// placement engine's tables are bounded so in bytes, and the store's in-memory tier gets as many
/// bytes).
pub const TABLE_ENTRY_BYTES: u64 = 80;

/// The share of the memory limit that the in-memory tables (the store's and every running solve's
/// and job's) may use together: one half (see [`share_memory`] for the rest).
pub const TABLE_SHARE_DIVISOR: u64 = 2;

/// The share of the memory limit given to sled's page cache: a sixteenth, at most
/// [`MAX_PAGE_CACHE_BYTES`] (the store's in-memory tier in front of it keeps the values read
/// most).
pub const PAGE_CACHE_SHARE_DIVISOR: u64 = 16;

/// The largest page cache sled is given: 1 GiB, sled's own default.
pub const MAX_PAGE_CACHE_BYTES: u64 = 1 << 30;

/// What a process holds before any work, set aside before the memory limit is shared: 16 MiB.
/// Measured: an in-process `nimber explore` of a 2×2 board peaks at 13.7 MiB resident (the
/// binary's code, the runtime's threads and stacks, sled's fixed structures for the store and the
/// job store). Without it a small limit was overrun by that much: a 9×10 board's job under a
/// 64 MiB limit peaked at 61 to 75 MiB with both cores busy.
pub const PROCESS_BASELINE_BYTES: u64 = 16 << 20;

/// The share of the memory limit given to the store's write buffer (values waiting for its writer
/// thread): a thirty-second, between [`MIN_WRITE_BUFFER_BYTES`] and [`MAX_WRITE_BUFFER_BYTES`].
/// When the writer falls behind (a machine whose cores are busy), the buffer stays at its bound and
/// callers wait for the writer rather than the buffer outgrowing the limit.
pub const WRITE_BUFFER_SHARE_DIVISOR: u64 = 32;

/// The smallest write buffer: 256 KiB, about 1500 small values.
pub const MIN_WRITE_BUFFER_BYTES: u64 = 256 << 10;

/// The largest write buffer: 32 MiB, about 170 000 small values.
pub const MAX_WRITE_BUFFER_BYTES: u64 = 32 << 20;

/// The share of the memory limit that bounds the store's size on disk by default: a thirty-second.
/// sled 0.34 keeps about as much in memory as the store takes on disk, whatever its page cache
/// (measured: 263 MB resident right after opening a store of a million values, 359 MB on disk, with
/// a 32 MiB page cache), and up to four times as much while it is written heavily and kept at its
/// bound (measured under the mixed load of `tests/memory.rs` at a 256 MiB limit: a 32 MiB bound
/// peaked at 302 MiB of RSS, a 16 MiB bound at 236–276 MiB over six runs, a 4 MB bound at
/// 231 MiB; with an 8 MiB bound and a page cache of a sixteenth, 214–244 MiB). So an eighth of the
/// limit goes to what sled keeps beyond its page cache, and a quarter of that bounds the store.
pub const STORE_SIZE_SHARE_DIVISOR: u64 = 32;

/// The share of the memory limit that bounds the job store by default (`--max-jobs-store-bytes`):
/// a thirty-second, at most [`MAX_JOB_STORE_BYTES`]; sled keeps about as much in memory as it
/// holds (see [`STORE_SIZE_SHARE_DIVISOR`]), and the job store is read whole at every start.
pub const JOB_STORE_SHARE_DIVISOR: u64 = 32;

/// The largest default bound of the job store: 1 GiB.
pub const MAX_JOB_STORE_BYTES: u64 = 1 << 30;

/// The share of the memory limit given to the job store's page cache: a sixty-fourth, between 1
/// and 16 MiB (its records are few and small; its tables are read a page at a time).
pub const JOB_PAGE_CACHE_SHARE_DIVISOR: u64 = 64;

/// The smallest table a solve may be given; below it searches thrash.
pub const MIN_TABLE_ENTRIES: usize = 1 << 16;

/// The memory limit used when neither a cgroup limit nor `/proc/meminfo` can be read.
pub const FALLBACK_MEMORY_LIMIT: u64 = 2 << 30;

/// Parses a byte size: plain digits, or digits followed by a unit, `KiB`/`MiB`/`GiB`/`TiB`
/// (or `K`/`M`/`G`/`T`, also binary) or `KB`/`MB`/`GB`/`TB` (decimal), e.g. `512MiB`.
pub fn parse_byte_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let amount: u64 = digits.parse().map_err(|_| format!("{text:?} is not a byte size such as 2147483648 or 2GiB"))?;
    let multiplier: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "T" | "TiB" => 1 << 40,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        other => return Err(format!("unknown unit {other:?} in {text:?} (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)")),
    };
    amount.checked_mul(multiplier).ok_or_else(|| format!("{text:?} is too large"))
}

/// The limit in a cgroup v2 `memory.max` file: `None` for `max` (no limit).
pub fn parse_cgroup_v2_memory_max(content: &str) -> Option<u64> {
    content.trim().parse().ok()
}

/// The limit in a cgroup v1 `memory.limit_in_bytes` file: `None` when it means "no limit" (the
/// kernel writes a huge page-aligned number near `i64::MAX`).
pub fn parse_cgroup_v1_memory_limit(content: &str) -> Option<u64> {
    content.trim().parse().ok().filter(|&limit: &u64| limit < 1 << 60)
}

/// `MemTotal` of a `/proc/meminfo` file, in bytes.
pub fn parse_meminfo_total(content: &str) -> Option<u64> {
    let line = content.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kilobytes.checked_mul(1024)
}

/// The cgroup v2 path of this process from a `/proc/self/cgroup` file (the `0::PATH` line).
pub fn parse_cgroup_v2_path(content: &str) -> Option<&str> {
    content.lines().find_map(|line| line.strip_prefix("0::"))
}

/// The soft limit on open files from a `/proc/self/limits` file (`None` when unlimited).
pub fn parse_open_files_soft_limit(content: &str) -> Option<u64> {
    let line = content.lines().find(|line| line.starts_with("Max open files"))?;
    line["Max open files".len()..].split_whitespace().next()?.parse().ok()
}

/// The instructions this build assumes (`.cargo/config.toml`: popcnt, lzcnt, bmi1, bmi2) that the
/// CPU lacks, read from `cpuid` itself (`is_x86_feature_detected!` answers "yes" for every feature
/// enabled at build time).
#[cfg(target_arch = "x86_64")]
pub fn missing_cpu_features() -> Vec<&'static str> {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    let has_leaf_7 = __cpuid(0).eax >= 7;
    let has_extended = __cpuid(0x8000_0000).eax >= 0x8000_0001;
    let features = [
        ("popcnt", __cpuid(1).ecx >> 23 & 1 == 1),
        ("lzcnt", has_extended && __cpuid(0x8000_0001).ecx >> 5 & 1 == 1),
        ("bmi1", has_leaf_7 && __cpuid_count(7, 0).ebx >> 3 & 1 == 1),
        ("bmi2", has_leaf_7 && __cpuid_count(7, 0).ebx >> 8 & 1 == 1),
    ];
    features.iter().filter(|(_, present)| !present).map(|(name, _)| *name).collect()
}

/// Other architectures get no CPU-specific instructions.
#[cfg(not(target_arch = "x86_64"))]
pub fn missing_cpu_features() -> Vec<&'static str> {
    Vec::new()
}

/// The process's memory limit: its cgroup's (v2, then v1) when one is set, otherwise the share
/// `1/divisor_of_ram` of physical RAM, otherwise [`FALLBACK_MEMORY_LIMIT`].
pub fn memory_limit_from_system(divisor_of_ram: u64) -> u64 {
    cgroup_memory_limit(Path::new("/"))
        .or_else(|| {
            let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
            parse_meminfo_total(&meminfo).map(|total| total / divisor_of_ram.max(1))
        })
        .unwrap_or(FALLBACK_MEMORY_LIMIT)
}

/// The cgroup memory limit seen under `root` (the file system root, or a test directory).
fn cgroup_memory_limit(root: &Path) -> Option<u64> {
    let cgroup_root = root.join("sys/fs/cgroup");
    let own_path = std::fs::read_to_string(root.join("proc/self/cgroup"))
        .ok()
        .and_then(|content| parse_cgroup_v2_path(&content).map(|path| path.trim().trim_start_matches('/').to_string()));
    let mut v2_candidates: Vec<PathBuf> = Vec::new();
    if let Some(path) = own_path.filter(|path| !path.is_empty()) {
        v2_candidates.push(cgroup_root.join(path).join("memory.max"));
    }
    v2_candidates.push(cgroup_root.join("memory.max"));
    for candidate in v2_candidates {
        if let Ok(content) = std::fs::read_to_string(&candidate) {
            return parse_cgroup_v2_memory_max(&content);
        }
    }
    let v1 = std::fs::read_to_string(cgroup_root.join("memory/memory.limit_in_bytes")).ok()?;
    parse_cgroup_v1_memory_limit(&v1)
}

/// Limits glibc's malloc to one arena per core, unless `MALLOC_ARENA_MAX` is set (glibc's own
/// setting, which then wins). glibc gives threads up to eight arenas per core, and what one arena
/// frees serves only the threads that allocate from it, so the server's many threads (the
/// runtime's workers, the blocking solves, sled's) kept memory resident that the budget of
/// [`share_memory`] cannot see: under the mixed load of `tests/memory.rs` at a 256 MiB limit the
/// peak was 254–283 MiB with glibc's default and 178–218 MiB with one arena per core (2 cores).
pub fn limit_malloc_arenas(cores: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        let arenas = libc::c_int::try_from(cores.max(1)).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only changes a malloc parameter; it is called before other threads start.
        unsafe { libc::mallopt(libc::M_ARENA_MAX, arenas) };
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = cores;
}

/// The cores this process may use (the cgroup's CPU quota counts), at least 1.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |cores| cores.get())
}

/// The resident memory of this process in bytes (`/proc/self/statm`), if it can be read.
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page_size = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
    Some(pages * page_size)
}

/// The soft limit on open files of this process, if it can be read.
pub fn open_files_limit_from_system() -> Option<u64> {
    parse_open_files_soft_limit(&std::fs::read_to_string("/proc/self/limits").ok()?)
}

/// How the memory limit is shared: how many expensive solves run at once, how many entries each
/// in-memory table (each solve's and job's) may hold, and the bytes of the store's in-memory tier
/// and of sled's page cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryBudget {
    /// Expensive solves at once.
    pub expensive_solves: usize,
    /// Entries of each solve's and each job's table.
    pub table_entries: usize,
    /// Bytes of the store's in-memory tier (its keys plus a per-entry overhead).
    pub store_hot_bytes: u64,
    /// Bytes of sled's page cache (`sled::Config::cache_capacity`).
    pub page_cache_bytes: u64,
    /// Bytes of the store's write buffer.
    pub store_write_buffer_bytes: u64,
    /// The most the store's default size bound on disk may be (`--max-store-bytes`' default).
    pub store_max_bytes: u64,
    /// Bytes of the job store's page cache.
    pub jobs_page_cache_bytes: u64,
    /// The job store's default bound (`--max-jobs-store-bytes`' default).
    pub jobs_store_max_bytes: u64,
}

/// Shares `memory_limit`, the whole process's, between everything that grows with the work. First
/// [`PROCESS_BASELINE_BYTES`] are set aside for what the process holds whatever its work; the
/// shares below are of the rest:
/// - **one half** ([`TABLE_SHARE_DIVISOR`]) to the in-memory tables at [`TABLE_ENTRY_BYTES`] an
///   entry: the tables of `expensive_solves` solves and of the `jobs` Explore jobs that run at once,
///   each of `table_entries` entries, and the store's in-memory tier, which gets one table's worth
///   of bytes (`table_entries × TABLE_ENTRY_BYTES`, counted as its keys' bytes plus a per-entry
///   overhead);
/// - **one sixteenth** ([`PAGE_CACHE_SHARE_DIVISOR`]) to sled's page cache, at most
///   [`MAX_PAGE_CACHE_BYTES`];
/// - **one eighth** to what sled keeps in memory beyond its page cache, which grows with the
///   store's size on disk, up to four times that size under heavy writes: so a thirty-second
///   ([`STORE_SIZE_SHARE_DIVISOR`]) bounds the store's default size (`--max-store-bytes`,
///   otherwise also at most 2 GiB and a quarter of its filesystem);
/// - **about a tenth** to the job store: a page cache of a sixty-fourth
///   ([`JOB_PAGE_CACHE_SHARE_DIVISOR`], 1 to 16 MiB), and what it holds, at most a thirty-second
///   ([`JOB_STORE_SHARE_DIVISOR`]) by default, with what sled keeps of it;
/// - **one thirty-second** ([`WRITE_BUFFER_SHARE_DIVISOR`]) to the store's write buffer, 256 KiB
///   to 32 MiB;
/// - **the rest** (about a sixth) to what has no bound of its own here: call and stream buffers,
///   the allocator's slack, the runtime and the binary.
///
/// Unset values are derived: solves default to `cores` (as many as the budget allows with
/// [`MIN_TABLE_ENTRIES`] each), entries to the budget's share capped at `max_table_entries`. A
/// process without interactive solves (an in-process `explore`) passes `Some(0)` solves. Explicit
/// values that do not fit are an error (never silently clamped).
pub fn share_memory(
    memory_limit: u64,
    cores: usize,
    jobs: usize,
    expensive_solves: Option<usize>,
    table_entries: Option<usize>,
    max_table_entries: usize,
) -> Result<MemoryBudget, String> {
    let shared = memory_limit.saturating_sub(PROCESS_BASELINE_BYTES);
    let budget_entries = (shared / TABLE_SHARE_DIVISOR / TABLE_ENTRY_BYTES) as usize;
    let tables_for = |solves: usize| solves.saturating_add(1).saturating_add(jobs);
    let expensive_solves = match expensive_solves {
        Some(solves) => solves,
        None => {
            let by_entries = table_entries.unwrap_or(MIN_TABLE_ENTRIES).max(1);
            (budget_entries / by_entries).saturating_sub(1).clamp(1, cores.max(1))
        }
    };
    let table_entries = match table_entries {
        Some(entries) => entries,
        None => (budget_entries / tables_for(expensive_solves)).min(max_table_entries),
    };
    let needed =
        (tables_for(expensive_solves) as u64).saturating_mul(table_entries as u64).saturating_mul(TABLE_ENTRY_BYTES);
    if table_entries < MIN_TABLE_ENTRIES || needed > shared / TABLE_SHARE_DIVISOR {
        return Err(format!(
            "{expensive_solves} expensive solves (--max-expensive-solves), {jobs} jobs (--max-jobs) and the store, each with a table of \
             {table_entries} entries (--table-entries; at least {MIN_TABLE_ENTRIES}) need about {needed} bytes, \
             more than half of --memory-limit {memory_limit} less the {PROCESS_BASELINE_BYTES} bytes a process holds before any work: \
             raise --memory-limit or lower the others"
        ));
    }
    Ok(MemoryBudget {
        expensive_solves,
        table_entries,
        store_hot_bytes: (table_entries as u64).saturating_mul(TABLE_ENTRY_BYTES),
        page_cache_bytes: (shared / PAGE_CACHE_SHARE_DIVISOR).min(MAX_PAGE_CACHE_BYTES),
        store_write_buffer_bytes: (shared / WRITE_BUFFER_SHARE_DIVISOR)
            .clamp(MIN_WRITE_BUFFER_BYTES, MAX_WRITE_BUFFER_BYTES),
        store_max_bytes: shared / STORE_SIZE_SHARE_DIVISOR,
        jobs_page_cache_bytes: (shared / JOB_PAGE_CACHE_SHARE_DIVISOR).clamp(1 << 20, 16 << 20),
        jobs_store_max_bytes: (shared / JOB_STORE_SHARE_DIVISOR).min(MAX_JOB_STORE_BYTES),
    })
}

/// Bytes in a huge page (x86-64 and aarch64 with 4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// Asks the system to back the whole huge pages inside `items` with huge pages (transparent huge
/// pages, in `madvise` mode on most systems): a lookup at random in a table of tens of megabytes
/// (the search kernel's) then seldom misses the TLB as well as the cache. Only advice: nothing
/// changes where it is not taken.
pub fn advise_huge_pages<T>(items: &[T]) {
    let start = items.as_ptr() as usize;
    let end = start + std::mem::size_of_val(items);
    let first = start.next_multiple_of(HUGE_PAGE);
    if first + HUGE_PAGE <= end {
        let length = (end - first) / HUGE_PAGE * HUGE_PAGE;
        // SAFETY: the range lies inside the live allocation, and MADV_HUGEPAGE changes how it is
        // backed, never what it holds.
        unsafe { libc::madvise(first as *mut libc::c_void, length, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn missing_cpu_features_agree_with_the_kernels_cpu_flags() {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").expect("/proc/cpuinfo");
        let flags: Vec<&str> = cpuinfo
            .lines()
            .find_map(|line| line.strip_prefix("flags"))
            .expect("a flags line")
            .trim_start_matches([' ', '\t', ':'])
            .split_whitespace()
            .collect();
        // The kernel calls lzcnt "abm".
        let expected: Vec<&str> = [("popcnt", "popcnt"), ("lzcnt", "abm"), ("bmi1", "bmi1"), ("bmi2", "bmi2")]
            .iter()
            .filter(|(_, flag)| !flags.contains(flag))
            .map(|(name, _)| *name)
            .collect();
        assert_eq!(missing_cpu_features(), expected);
    }

    #[test]
    fn byte_sizes_parse_with_binary_and_decimal_units() {
        assert_eq!(parse_byte_size("1024"), Ok(1024));
        assert_eq!(parse_byte_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_byte_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_byte_size("2G"), Ok(2 << 30));
        assert_eq!(parse_byte_size("3GB"), Ok(3_000_000_000));
        assert!(parse_byte_size("2XB").is_err());
        assert!(parse_byte_size("GiB").is_err());
        assert!(parse_byte_size("99999999999999TiB").is_err());
    }

    #[test]
    fn cgroup_v2_memory_max_is_a_number_or_max() {
        assert_eq!(parse_cgroup_v2_memory_max("1073741824\n"), Some(1 << 30));
        assert_eq!(parse_cgroup_v2_memory_max("max\n"), None);
    }

    #[test]
    fn cgroup_v1_unlimited_is_none() {
        assert_eq!(parse_cgroup_v1_memory_limit("536870912\n"), Some(512 << 20));
        assert_eq!(parse_cgroup_v1_memory_limit("9223372036854771712\n"), None);
    }

    #[test]
    fn meminfo_total_is_read_in_bytes() {
        let sample = "MemTotal:        8040524 kB\nMemFree:          412356 kB\nMemAvailable:    5093436 kB\n";
        assert_eq!(parse_meminfo_total(sample), Some(8_040_524 * 1024));
        assert_eq!(parse_meminfo_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn the_cgroup_v2_path_is_the_0_line() {
        let sample = "12:pids:/docker/abc\n0::/system.slice/nimber.service\n";
        assert_eq!(parse_cgroup_v2_path(sample), Some("/system.slice/nimber.service"));
        assert_eq!(parse_cgroup_v2_path("12:pids:/x\n"), None);
    }

    #[test]
    fn open_files_soft_limit_is_the_first_number() {
        let sample = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max processes             127443               127443               processes \n\
                      Max open files            1024                 524288               files     \n";
        assert_eq!(parse_open_files_soft_limit(sample), Some(1024));
        let unlimited = "Max open files            unlimited            unlimited            files     \n";
        assert_eq!(parse_open_files_soft_limit(unlimited), None);
    }

    #[test]
    fn a_cgroup_limit_under_a_test_root_is_found() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("proc/self")).unwrap();
        std::fs::create_dir_all(root.path().join("sys/fs/cgroup/app")).unwrap();
        std::fs::write(root.path().join("proc/self/cgroup"), "0::/app\n").unwrap();
        std::fs::write(root.path().join("sys/fs/cgroup/app/memory.max"), "268435456\n").unwrap();
        assert_eq!(cgroup_memory_limit(root.path()), Some(256 << 20));
        std::fs::write(root.path().join("sys/fs/cgroup/app/memory.max"), "max\n").unwrap();
        assert_eq!(cgroup_memory_limit(root.path()), None);
    }

    #[test]
    fn defaults_share_the_memory_limit() {
        // 2 GiB less the baseline: half of 2032 MiB in tables, 13.3 M entries at 80 bytes, over 4
        // solves + the store.
        let budget = share_memory(2 << 30, 4, 0, None, None, 16 << 20).unwrap();
        assert_eq!(budget.expensive_solves, 4);
        assert_eq!(budget.table_entries, ((1016u64 << 20) / 80 / 5) as usize);
        // A small container gets fewer slots than cores rather than tables too small to be useful.
        let small = share_memory(48 << 20, 64, 0, None, None, 16 << 20).unwrap();
        assert!(small.expensive_solves < 64 && small.expensive_solves >= 1, "{small:?}");
        assert!(small.table_entries >= MIN_TABLE_ENTRIES);
        // Plenty of memory: the table is capped at the engine's maximum.
        assert_eq!(share_memory(1 << 40, 2, 0, None, None, 16 << 20).unwrap().table_entries, 16 << 20);
    }

    #[test]
    fn the_store_and_sleds_page_cache_get_their_shares() {
        let limit = 2 << 30;
        let budget = share_memory(limit, 4, 1, None, None, 16 << 20).unwrap();
        let shared = limit - PROCESS_BASELINE_BYTES;
        // The store's in-memory tier is one table's worth of bytes next to 4 solves and 1 job.
        assert_eq!(budget.store_hot_bytes, budget.table_entries as u64 * TABLE_ENTRY_BYTES);
        let tables = (budget.expensive_solves as u64 + 1) * budget.table_entries as u64 * TABLE_ENTRY_BYTES;
        assert!(tables + budget.store_hot_bytes <= shared / 2, "{budget:?}");
        assert_eq!(budget.page_cache_bytes, shared / 16);
        assert_eq!(budget.store_max_bytes, shared / 32);
        assert_eq!(budget.store_write_buffer_bytes, MAX_WRITE_BUFFER_BYTES);
        assert_eq!(share_memory(80 << 20, 2, 1, Some(0), None, 11 << 20).unwrap().store_write_buffer_bytes, 2 << 20);
        assert_eq!((budget.jobs_page_cache_bytes, budget.jobs_store_max_bytes), (16 << 20, shared / 32));
        let small = share_memory(272 << 20, 2, 1, None, None, 16 << 20).unwrap();
        assert_eq!((small.jobs_page_cache_bytes, small.jobs_store_max_bytes), (4 << 20, 8 << 20));
        // sled never gets more than its own default.
        assert_eq!(share_memory(1 << 40, 2, 1, None, None, 16 << 20).unwrap().page_cache_bytes, MAX_PAGE_CACHE_BYTES);
    }

    #[test]
    fn a_process_without_interactive_solves_shares_between_its_job_and_the_store() {
        // 64 MiB less the 16 MiB baseline: 24 MiB of tables, for the job and the store.
        let budget = share_memory(64 << 20, 2, 1, Some(0), None, 11 << 20).unwrap();
        assert_eq!(budget.expensive_solves, 0);
        assert_eq!(budget.table_entries, ((24u64 << 20) / 80 / 2) as usize);
        assert_eq!(budget.store_hot_bytes, budget.table_entries as u64 * 80);
        assert_eq!(budget.page_cache_bytes, 3 << 20);
        assert!(share_memory(1 << 20, 2, 1, Some(0), None, 11 << 20).unwrap_err().contains("--memory-limit"));
    }

    #[test]
    fn explicit_values_that_exceed_the_limit_are_rejected() {
        let error = share_memory(1 << 30, 4, 0, Some(64), Some(16 << 20), 16 << 20).unwrap_err();
        assert!(error.contains("--memory-limit"), "{error}");
        assert!(share_memory(1 << 30, 4, 0, Some(1), Some(1 << 20), 16 << 20).is_ok());
        // Each job has a table too.
        let with_jobs = share_memory(1 << 30, 4, 2, Some(1), None, 16 << 20).unwrap();
        let without = share_memory(1 << 30, 4, 0, Some(1), None, 16 << 20).unwrap();
        assert!(with_jobs.table_entries <= without.table_entries / 2 + 1, "{with_jobs:?} {without:?}");
    }
}
