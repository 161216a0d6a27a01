//! `nimber explore` (run an analysis job on a server, or in this process) and `nimber jobs`
//! (manage a server's jobs): progress on the terminal (a bar) or as plain lines, the table as
//! text, CSV or JSON; and `nimber health` ([`health`]).

pub mod health;
pub mod judge;

use judge::Problem;

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::sync::Arc;

use futures_util::{Stream, StreamExt};
use prost::Message;

use nimber::cache::{Store, StoreOptions};
use nimber::games::{heap, Budget, Memo, NoMemo, SearchContext, SearchThreads, DEFAULT_TABLE_LIMIT};
use nimber::google::longrunning::{self as lro, operation::Result as OperationResult, Operation};
use nimber::jobs::runner::{JobsConfig, Runner};
use nimber::limits;
use nimber::proto::{self, explore_request::Job};

/// How to print a table.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns.
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON array of rows.
    Json,
}

/// What `nimber explore` computes.
#[derive(clap::Subcommand)]
pub enum ExploreJob {
    /// The value of every full board of a placement game in a range of sizes.
    FullBoards {
        /// The game.
        #[arg(long, value_enum, default_value = "tetris")]
        game: BoardGameArg,
        /// The fewest rows.
        #[arg(long, default_value_t = 1)]
        min_rows: u32,
        /// The most rows (at most 16).
        #[arg(long)]
        max_rows: u32,
        /// The fewest columns.
        #[arg(long, default_value_t = 1)]
        min_columns: u32,
        /// The most columns (at most 16).
        #[arg(long)]
        max_columns: u32,
    },
    /// The value of every board obtained by blocking up to `--max-blocked` free cells of a board,
    /// deduplicated by symmetry.
    SubBoards {
        /// The game.
        #[arg(long, value_enum, default_value = "tetris")]
        game: BoardGameArg,
        /// The board's rows, comma-separated, '0' free and '1' blocked (e.g. 0000,0010,0000).
        #[arg(long, value_delimiter = ',')]
        board: Vec<String>,
        /// The most free cells to block.
        #[arg(long)]
        max_blocked: u32,
    },
    /// The values G(0) … G(up-to) of a heap game, ending early once a period is proven; prints the
    /// period (or that none was proven), the largest value, how many heaps have each value and the
    /// rare/common mask (the values page through ListExploreRows).
    HeapSequence {
        /// The rules: a take-and-break code such as 0.16, 0.77 or 4!.0 (Grundy's game), or `nim`.
        #[arg(long, required_unless_present = "subtraction", conflicts_with = "subtraction")]
        rules: Option<String>,
        /// A subtraction game instead: the numbers of tokens a move may take, comma-separated
        /// (`--subtraction 2,3,7`).
        #[arg(long, value_delimiter = ',')]
        subtraction: Vec<u64>,
        /// With `--subtraction`: a move may take any number of tokens but those.
        #[arg(long, requires = "subtraction")]
        all_but: bool,
        /// The largest heap (at most 2^32).
        #[arg(long)]
        up_to: u64,
    },
    /// The value of one board of a placement game.
    Solve {
        /// The game.
        #[arg(long, value_enum, default_value = "tetris")]
        game: BoardGameArg,
        /// The board's rows, comma-separated, '0' free and '1' blocked.
        #[arg(long, value_delimiter = ',')]
        board: Vec<String>,
    },
}

/// A placement game, for `nimber explore`'s families of boards.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum BoardGameArg {
    /// The 2×2 placement game.
    Tetris,
    /// Cram: dominoes either way round.
    Cram,
    /// Node Kayles on a board: a chosen cell takes its neighbours.
    NodeKayles,
}

impl BoardGameArg {
    /// The game in a request.
    fn to_proto(self) -> proto::BoardGame {
        match self {
            BoardGameArg::Tetris => proto::BoardGame::Tetris,
            BoardGameArg::Cram => proto::BoardGame::Cram,
            BoardGameArg::NodeKayles => proto::BoardGame::NodeKayles,
        }
    }

    /// The position of the board `rows`.
    fn position(self, rows: Vec<String>) -> proto::Position {
        use proto::position::Game;
        let game = match self {
            BoardGameArg::Tetris => Game::Tetris(proto::Tetris { rows }),
            BoardGameArg::Cram => Game::Cram(proto::Cram { rows }),
            BoardGameArg::NodeKayles => Game::NodeKaylesBoard(proto::NodeKaylesBoard { rows }),
        };
        proto::Position { game: Some(game) }
    }
}

/// The process's memory limit (`--memory-limit`), shared by `serve`, `judge` and `explore`.
#[derive(clap::Args)]
pub struct MemoryLimit {
    /// The memory this process may use, in bytes or with a unit such as 512MiB or 2GiB: past the
    /// 16 MiB any process holds, half for the in-memory tables (of solves, of jobs, and the store's
    /// in-memory tier, at 80 bytes an entry), a sixteenth for sled's page cache (default: the
    /// cgroup's memory limit, else half of physical RAM).
    #[arg(long, global = true, env = "NIMBER_MEMORY_LIMIT", value_parser = limits::parse_byte_size)]
    memory_limit: Option<u64>,
}

impl MemoryLimit {
    /// The limit given, else the cgroup's, else half of physical RAM.
    pub fn bytes(&self) -> u64 {
        self.memory_limit.unwrap_or_else(|| limits::memory_limit_from_system(2))
    }
}

/// The threads the searches of this process may use (`--search-threads`), shared by `serve`,
/// `judge` and `explore`.
#[derive(clap::Args)]
pub struct SearchThreadsArg {
    /// Threads the searches of this process use between them: one position's search takes the
    /// idle ones as helpers, concurrent solves and jobs share them; one search's tables hold the
    /// same entries together however many threads search it (default: 1: helpers pay for Cram and
    /// Node Kayles boards, whose root questions they divide, but not yet for the 2×2 game: see
    /// docs/BENCHMARKS.md).
    #[arg(long, global = true, env = "NIMBER_SEARCH_THREADS", value_parser = clap::value_parser!(u16).range(1..=1024))]
    search_threads: Option<u16>,
}

impl SearchThreadsArg {
    /// The pool of search threads: the number given, else one.
    pub fn pool(&self) -> std::sync::Arc<nimber::games::SearchThreads> {
        nimber::games::SearchThreads::new(self.search_threads.map_or(1, usize::from))
    }
}

/// The largest heap whose value a heap game computes (`--max-heap-compute`) and the bytes of
/// values kept in memory (`--heap-values-cache-bytes`), shared by `serve` and `explore`.
#[derive(clap::Args)]
pub struct HeapComputeLimit {
    /// The largest heap whose value a heap game computes, when no proven period reaches it (2 bytes
    /// of memory a heap per rule set; at most 4194304); past it a call is FAILED_PRECONDITION.
    #[arg(
        long,
        global = true,
        env = "NIMBER_MAX_HEAP_COMPUTE",
        default_value_t = heap::DEFAULT_MAX_HEAP_COMPUTE,
        value_parser = clap::value_parser!(u64).range(1..=heap::MOST_MAX_HEAP_COMPUTE)
    )]
    max_heap_compute: u64,
    /// The most bytes of heap games' values kept in memory, over every rule set (2 bytes a heap);
    /// the rule sets used least recently go first, and are read back from the store when asked again.
    #[arg(
        long,
        global = true,
        env = "NIMBER_HEAP_VALUES_CACHE_BYTES",
        default_value_t = heap::DEFAULT_VALUES_CACHE_BYTES,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    heap_values_cache_bytes: u64,
}

impl HeapComputeLimit {
    /// Sets the limits for the process ([`heap::set_max_heap_compute`],
    /// [`heap::set_values_cache_bytes`]).
    pub fn apply(&self) {
        heap::set_max_heap_compute(self.max_heap_compute);
        heap::set_values_cache_bytes(self.heap_values_cache_bytes);
    }
}

/// Where and how `nimber explore` runs.
#[derive(clap::Args)]
pub struct ExploreArgs {
    /// What to compute.
    #[command(subcommand)]
    job: ExploreJob,
    /// Run on this server (host:port) through its API; without it the job runs in this process.
    #[arg(long, global = true)]
    server: Option<String>,
    /// In-process: memoize in the sled store in this directory (default: in memory only).
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    /// In-process: the job store, so that a stopped run continues where it stopped.
    #[arg(long, global = true, default_value = "nimber-jobs")]
    jobs_dir: PathBuf,
    #[command(flatten)]
    memory_limit: MemoryLimit,
    #[command(flatten)]
    max_heap_compute: HeapComputeLimit,
    #[command(flatten)]
    search_threads: SearchThreadsArg,
    /// How to print the result.
    #[arg(long, global = true, value_enum, default_value = "table")]
    format: Format,
}

/// `nimber jobs`: manage a server's jobs.
#[derive(clap::Args)]
pub struct JobsArgs {
    /// What to do.
    #[command(subcommand)]
    command: JobsCommand,
    /// The server (host:port).
    #[arg(long, global = true, default_value = "127.0.0.1:50051")]
    server: String,
    /// How to print a result table.
    #[arg(long, global = true, value_enum, default_value = "table")]
    format: Format,
}

/// A `nimber jobs` command.
#[derive(clap::Subcommand)]
pub enum JobsCommand {
    /// Lists the operations, oldest first.
    List {
        /// Only finished (true) or unfinished (false) ones.
        #[arg(long)]
        done: Option<bool>,
    },
    /// Prints an operation's progress, and its result when done.
    Get {
        /// The operation name (operations/...).
        name: String,
    },
    /// Shows an operation's live progress until it ends, then its result.
    Watch {
        /// The operation name.
        name: String,
    },
    /// Cancels an operation.
    Cancel {
        /// The operation name.
        name: String,
    },
    /// Deletes a finished operation.
    Delete {
        /// The operation name.
        name: String,
    },
}

fn endpoint(server: &str) -> String {
    if server.contains("://") {
        server.to_string()
    } else {
        format!("http://{server}")
    }
}

impl ExploreJob {
    fn request(self) -> proto::ExploreRequest {
        let job = match self {
            ExploreJob::FullBoards { game, min_rows, max_rows, min_columns, max_columns } => {
                let game = game.to_proto() as i32;
                Job::FullBoards(proto::FullBoards { min_rows, max_rows, min_columns, max_columns, game })
            }
            ExploreJob::SubBoards { game, board, max_blocked } => Job::SubBoards(proto::SubBoards {
                board: Some(proto::Tetris { rows: board }),
                max_blocked,
                game: game.to_proto() as i32,
            }),
            ExploreJob::HeapSequence { rules, subtraction, all_but, up_to } => {
                use proto::heap_sequence::Rules;
                let rules = match rules {
                    Some(nim) if nim == "nim" => Rules::Nim(true),
                    Some(code) => Rules::Code(code),
                    None => Rules::Subtraction(proto::Subtraction { take: subtraction, all_but }),
                };
                Job::HeapSequence(proto::HeapSequence { rules: Some(rules), up_to })
            }
            ExploreJob::Solve { game, board } => Job::Solve(proto::SolveRequest {
                position: Some(game.position(board)),
                id: String::new(),
                ..Default::default()
            }),
        };
        let mut request = proto::ExploreRequest { job: Some(job), ..Default::default() };
        // The same command gets the same job: a rerun continues (or prints) the earlier one.
        let digest = request
            .encode_to_vec()
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3));
        request.request_id = format!("cli-{digest:016x}");
        request
    }
}

/// `nimber explore`.
pub fn explore(args: ExploreArgs) -> anyhow::Result<()> {
    args.max_heap_compute.apply();
    let runtime = tokio::runtime::Runtime::new()?;
    let request = args.job.request();
    let format = args.format;
    runtime.block_on(async move {
        match args.server {
            Some(server) => {
                let mut client = proto::solver_client::SolverClient::connect(endpoint(&server)).await?;
                let name = client.explore(request).await?.into_inner().name;
                eprintln!("operation {name} on {server} (Ctrl-C leaves it running there)");
                let stream = client.watch_explore(proto::WatchExploreRequest { name }).await?.into_inner();
                let last = show_progress(stream.map(|item| item.map_err(anyhow::Error::from))).await?;
                finish(last, format, &mut Rows::Server(client)).await
            }
            None => {
                let threads = args.search_threads.pool();
                explore_here(request, args.data_dir, args.jobs_dir, args.memory_limit.bytes(), threads, format).await
            }
        }
    })
}

/// Runs a job in this process on the job store `jobs_dir` (and the memo in `data_dir`, if any),
/// within `memory_limit` bytes shared by the job's tables and the store (no interactive solves).
async fn explore_here(
    request: proto::ExploreRequest,
    data_dir: Option<PathBuf>,
    jobs_dir: PathBuf,
    memory_limit: u64,
    search_threads: Arc<nimber::games::SearchThreads>,
    format: Format,
) -> anyhow::Result<()> {
    let budget = limits::share_memory(
        memory_limit,
        1,
        1 + search_threads.helpers_most(),
        Some(0),
        None,
        search_threads.table_entries_each(DEFAULT_TABLE_LIMIT),
    )
    .map_err(anyhow::Error::msg)?;
    let store: Arc<dyn Memo> = match &data_dir {
        Some(dir) => Arc::new(Store::open_with(dir, &StoreOptions::within(&budget, dir))?),
        None => Arc::new(Store::temporary_with(&StoreOptions::within(&budget, &std::env::temp_dir()))),
    };
    // Listening for Ctrl-C from before the job starts: a Ctrl-C after the first progress line is
    // never the default "kill the process".
    let mut interrupted = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    let job_store = nimber::jobs::local::JobStoreOptions {
        page_cache_bytes: budget.jobs_page_cache_bytes,
        max_bytes: budget.jobs_store_max_bytes,
        ..Default::default()
    };
    let config = JobsConfig {
        dir: jobs_dir,
        store: job_store,
        table_limit: budget.table_entries,
        search_threads,
        ..Default::default()
    };
    let runner = tokio::task::spawn_blocking(move || Runner::start(config, store)).await??;
    let operation = nimber::jobs::operations::explore(&runner, request).await?;
    let stream = nimber::jobs::operations::watch(&runner, operation.name).await?;
    let outcome = tokio::select! {
        last = show_progress(stream.map(|item| item.map_err(anyhow::Error::from))) => Some(last),
        _ = interrupted.recv() => None,
    };
    let finished = match outcome {
        Some(last) => finish(last?, format, &mut Rows::Local(runner.clone())).await,
        None => {
            eprintln!("stopped; run the same command again to continue where it stopped");
            Ok(())
        }
    };
    tokio::task::spawn_blocking(move || runner.shutdown()).await?;
    finished
}

/// Shows the progress of a stream of operations (a bar on a terminal, otherwise a line per
/// update) and returns the last operation.
async fn show_progress(mut stream: impl Stream<Item = anyhow::Result<Operation>> + Unpin) -> anyhow::Result<Operation> {
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} items, {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let mut last = None;
    while let Some(operation) = stream.next().await {
        let operation = operation?;
        let progress = progress_of(&operation);
        let summary = summary(&progress);
        match &bar {
            Some(bar) => {
                bar.set_length(progress.items_total);
                bar.set_position(progress.items_done);
                bar.set_message(summary);
            }
            None => eprintln!("{}: {}/{} items, {summary}", operation.name, progress.items_done, progress.items_total),
        }
        last = Some(operation);
    }
    if let Some(bar) = bar {
        bar.finish();
    }
    last.ok_or_else(|| anyhow::anyhow!("the server sent no operation"))
}

fn progress_of(operation: &Operation) -> proto::ExploreProgress {
    operation
        .metadata
        .as_ref()
        .and_then(|metadata| proto::ExploreProgress::decode(metadata.value.as_slice()).ok())
        .unwrap_or_default()
}

fn seconds(duration: Option<prost_types::Duration>) -> f64 {
    duration.map_or(0.0, |d| d.seconds as f64 + f64::from(d.nanos) / 1e9)
}

fn summary(progress: &proto::ExploreProgress) -> String {
    let mut text = format!(
        "{}, {} components searched, {} cache hits, {:.1} s wall, {:.1} s CPU",
        progress.state().as_str_name().trim_start_matches("EXPLORE_STATE_").to_lowercase(),
        progress.components_searched,
        progress.cache_hits,
        seconds(progress.elapsed),
        seconds(progress.cpu_time),
    );
    if let Some(proto::explore_progress::Family::HeapSequence(sequence)) = &progress.family {
        text.push_str(&format!(
            ", {} heaps, {:.0} values/s, largest value {}, {} rare heaps",
            sequence.heaps_computed, sequence.values_per_second, sequence.largest_value, sequence.rare_heaps
        ));
        if let Some(candidate) = sequence.candidate_period {
            text.push_str(&format!(", candidate period {} from heap {}", candidate.period, candidate.preperiod));
        }
    }
    if let Some(search) = progress.search.as_ref().filter(|search| search.expanded > 0) {
        text.push_str(&format!(
            ", search: {} expanded, {} option evaluations, {} cutoffs, {} table lookups ({} hits), {} store reads",
            search.expanded,
            search.option_evaluations,
            search.cutoffs,
            search.table_lookups,
            search.table_hits,
            search.store_reads
        ));
    }
    if progress.times_resumed > 0 {
        text.push_str(&format!(", resumed {} times", progress.times_resumed));
    }
    if progress.eta.is_some() {
        text.push_str(&format!(", about {:.0} s left", seconds(progress.eta)));
    }
    text
}

/// Where the rows of a long table come from: a server's ListExploreRows, or this process's runner.
enum Rows {
    Server(proto::solver_client::SolverClient<tonic::transport::Channel>),
    Local(Arc<Runner>),
}

impl Rows {
    /// The page of operation `name`'s table at `page_token`.
    async fn page(&mut self, name: &str, page_token: String) -> anyhow::Result<proto::ListExploreRowsResponse> {
        let request = proto::ListExploreRowsRequest { name: name.to_string(), page_size: 0, page_token };
        Ok(match self {
            Rows::Server(client) => client.list_explore_rows(request).await?.into_inner(),
            Rows::Local(runner) => nimber::jobs::operations::rows(runner, request).await?,
        })
    }
}

/// Prints the result of a finished operation (fetching the rest of a long table from `rows`), or
/// fails with its error.
async fn finish(operation: Operation, format: Format, rows: &mut Rows) -> anyhow::Result<()> {
    match &operation.result {
        Some(OperationResult::Response(any)) => {
            let mut result = proto::ExploreResult::decode(any.value.as_slice())?;
            if let Some(proto::explore_result::Answer::HeapSequence(sequence)) = &result.answer {
                // The values stay on the server (ListExploreRows): they may be billions.
                print_sequence(sequence, format);
                return Ok(());
            }
            let mut page_token = std::mem::take(&mut result.next_page_token);
            while !page_token.is_empty() {
                let page = rows.page(&operation.name, page_token).await?;
                result.rows.extend(page.rows);
                page_token = page.next_page_token;
            }
            print_result(&result, format);
            Ok(())
        }
        Some(OperationResult::Error(status)) => Err(anyhow::anyhow!(
            "{} ended with {:?}: {}",
            operation.name,
            tonic::Code::from_i32(status.code),
            status.message
        )),
        None => {
            eprintln!("{} is not done: {}", operation.name, summary(&progress_of(&operation)));
            Ok(())
        }
    }
}

fn print_result(result: &proto::ExploreResult, format: Format) {
    use proto::explore_result::Answer;
    let outcome = |outcome: i32| match proto::Outcome::try_from(outcome) {
        Ok(proto::Outcome::NextPlayerWins) => "next",
        Ok(proto::Outcome::PreviousPlayerWins) => "previous",
        _ => "?",
    };
    let grundy = |grundy: Option<u64>| grundy.map_or_else(String::new, |g| g.to_string());
    match &result.answer {
        Some(Answer::Solve(solve)) => {
            println!("grundy {} (winner: {} player)", grundy(solve.grundy), outcome(solve.outcome))
        }
        Some(Answer::BestMove(best)) => {
            println!("grundy {} (winner: {} player)", grundy(best.grundy), outcome(best.outcome))
        }
        Some(Answer::HeapSequence(sequence)) => print_sequence(sequence, format),
        None => {}
    }
    if result.rows.is_empty() {
        return;
    }
    let header = ["rows", "columns", "board", "blocked", "count", "grundy", "winner", "cached"];
    let cells: Vec<[String; 8]> = result
        .rows
        .iter()
        .map(|row| {
            [
                row.rows.to_string(),
                row.columns.to_string(),
                row.board.join("/"),
                row.blocked.to_string(),
                row.count.to_string(),
                grundy(row.grundy),
                outcome(row.outcome).to_string(),
                row.cached.to_string(),
            ]
        })
        .collect();
    match format {
        Format::Csv => {
            println!("{}", header.join(","));
            for row in &cells {
                println!("{}", row.join(","));
            }
        }
        Format::Json => {
            let rows: Vec<String> = cells
                .iter()
                .map(|row| {
                    let fields: Vec<String> = header
                        .iter()
                        .zip(row)
                        .map(|(name, value)| match *name {
                            "board" | "winner" => format!("\"{name}\": \"{value}\""),
                            _ if value.is_empty() => format!("\"{name}\": null"),
                            _ => format!("\"{name}\": {value}"),
                        })
                        .collect();
                    format!("  {{{}}}", fields.join(", "))
                })
                .collect();
            println!("[\n{}\n]", rows.join(",\n"));
        }
        Format::Table => {
            let widths: Vec<usize> = (0..header.len())
                .map(|i| cells.iter().map(|row| row[i].len()).chain([header[i].len()]).max().unwrap_or(0))
                .collect();
            let line = |values: Vec<&str>| {
                let padded: Vec<String> =
                    values.iter().zip(&widths).map(|(value, width)| format!("{value:>width$}")).collect();
                println!("{}", padded.join("  ").trim_end());
            };
            line(header.to_vec());
            for row in &cells {
                line(row.iter().map(String::as_str).collect());
            }
        }
    }
}

/// Prints the result of a heap sequence: as lines of text (`table`), as `value,frequency` lines
/// after the summary's `#` lines (`csv`), or as one JSON object.
fn print_sequence(result: &proto::HeapSequenceResult, format: Format) {
    let period = result.period.map_or_else(
        || format!("none up to {}", result.up_to),
        |p| format!("{} (preperiod {}, saltus {}, proven from heap {})", p.period, p.preperiod, p.saltus, p.checked_to),
    );
    // Common values as CGSuite-like `value.parity` (ogsolve's notation), per class of splits.
    let common: Vec<String> = result
        .common_values
        .iter()
        .map(|class| {
            let mut values: Vec<String> = class.on_even_heaps.iter().map(|v| format!("{v}.0")).collect();
            values.extend(class.on_odd_heaps.iter().map(|v| format!("{v}.1")));
            format!("splits taking {} tokens: {}", ["even", "odd"][class.take_parity as usize % 2], values.join(" "))
        })
        .collect();
    match format {
        Format::Json => {
            let period = result.period.map_or_else(
                || "null".to_string(),
                |p| {
                    format!(
                        "{{\"preperiod\": {}, \"period\": {}, \"saltus\": {}, \"checked_to\": {}}}",
                        p.preperiod, p.period, p.saltus, p.checked_to
                    )
                },
            );
            let frequencies: Vec<String> = result.frequencies.iter().map(u64::to_string).collect();
            println!(
                "{{\"up_to\": {}, \"heaps_computed\": {}, \"period\": {period}, \"largest_value\": {}, \
                 \"frequencies\": [{}], \"common_values\": [{}], \"rare_heaps\": {}}}",
                result.up_to,
                result.heaps_computed,
                result.largest_value,
                frequencies.join(", "),
                common.iter().map(|class| format!("{class:?}")).collect::<Vec<_>>().join(", "),
                result.rare_heaps,
            );
        }
        Format::Csv | Format::Table => {
            let prefix = if matches!(format, Format::Csv) { "# " } else { "" };
            println!("{prefix}period: {period}");
            println!(
                "{prefix}heaps computed: {} (G(0) to G({}))",
                result.heaps_computed,
                result.heaps_computed.saturating_sub(1)
            );
            println!("{prefix}largest value: {}", result.largest_value);
            println!("{prefix}rare heaps: {}", result.rare_heaps);
            for class in &common {
                println!("{prefix}common values of the {class}");
            }
            // Rogalski's published format: `value frequency` a line.
            let separator = if matches!(format, Format::Csv) { "," } else { " " };
            println!("value{separator}frequency");
            for (value, count) in result.frequencies.iter().enumerate() {
                println!("{value}{separator}{count}");
            }
        }
    }
}

/// `nimber jobs`.
pub fn jobs(args: JobsArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let channel = tonic::transport::Channel::from_shared(endpoint(&args.server))?.connect().await?;
        let mut operations = lro::operations_client::OperationsClient::new(channel.clone());
        let mut rows = Rows::Server(proto::solver_client::SolverClient::new(channel.clone()));
        match args.command {
            JobsCommand::List { done } => {
                let filter = done.map_or_else(String::new, |done| format!("done={done}"));
                let mut page_token = String::new();
                loop {
                    let page = operations
                        .list_operations(lro::ListOperationsRequest {
                            filter: filter.clone(),
                            page_token,
                            ..Default::default()
                        })
                        .await?
                        .into_inner();
                    for operation in &page.operations {
                        let progress = progress_of(operation);
                        println!(
                            "{}  {}/{} items  {}",
                            operation.name,
                            progress.items_done,
                            progress.items_total,
                            summary(&progress)
                        );
                    }
                    if page.next_page_token.is_empty() {
                        return Ok(());
                    }
                    page_token = page.next_page_token;
                }
            }
            JobsCommand::Get { name } => {
                let operation = operations.get_operation(lro::GetOperationRequest { name }).await?.into_inner();
                eprintln!("{}: {}", operation.name, summary(&progress_of(&operation)));
                finish(operation, args.format, &mut rows).await
            }
            JobsCommand::Watch { name } => {
                let mut client = proto::solver_client::SolverClient::new(channel);
                let stream = client.watch_explore(proto::WatchExploreRequest { name }).await?.into_inner();
                let last = show_progress(stream.map(|item| item.map_err(anyhow::Error::from))).await?;
                finish(last, args.format, &mut rows).await
            }
            JobsCommand::Cancel { name } => {
                operations.cancel_operation(lro::CancelOperationRequest { name: name.clone() }).await?;
                eprintln!("{name}: cancellation requested");
                Ok(())
            }
            JobsCommand::Delete { name } => {
                operations.delete_operation(lro::DeleteOperationRequest { name: name.clone() }).await?;
                eprintln!("{name}: deleted");
                Ok(())
            }
        }
    })
}

/// Judges `problem`'s input on stdin in one solve, within `memory_limit` bytes shared by the solve's
/// tables and the store in `data_dir` (if any).
pub fn run_judge(
    problem: Problem,
    data_dir: Option<PathBuf>,
    memory_limit: u64,
    threads: Arc<SearchThreads>,
) -> anyhow::Result<()> {
    let most_entries = threads.table_entries_each(DEFAULT_TABLE_LIMIT);
    let budget = limits::share_memory(memory_limit, 1, threads.helpers_most(), Some(1), None, most_entries)
        .map_err(anyhow::Error::msg)?;
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let store = data_dir.map(|dir| Store::open_with(&dir, &StoreOptions::within(&budget, &dir))).transpose()?;
    let memo: &dyn Memo = match &store {
        Some(store) => store,
        None => &NoMemo,
    };
    let mut context = SearchContext::new(Budget::unlimited(), memo);
    context.table_limit = budget.table_entries;
    context.threads = threads;
    let output = judge::judge(problem, &input, &mut context)?;
    print!("{output}");
    Ok(())
}
