//! `rocklake`: the RockLake server binary.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use rocklake::config::{ConfigError, FileConfig, LogFormat, Overrides, Settings};
use rocklake::server::{self, random_password, AuthConfig, AuthMethod, ServerConfig};
use rocklake::service::{CatalogService, CoreKind, ServiceConfig, SystemClock};
use tokio::net::TcpListener;

/// Counts each thread's heap so the native core can hold a statement to its memory limit
/// (`rocklake_core::mem`); the component counts its own.
#[global_allocator]
static ALLOC: rocklake_core::mem::CountingAlloc<std::alloc::System> =
    rocklake_core::mem::CountingAlloc(std::alloc::System);

#[derive(Parser, Debug)]
#[command(
    name = "rocklake",
    version,
    about = "DuckLake catalog server: speaks the PostgreSQL protocol, stores the catalog in SlateDB",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Without a subcommand, `rocklake` runs `serve` with these options.
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve a catalog to DuckDB (the default).
    #[command(
        after_help = "Examples:\n  rocklake serve\n  rocklake serve --listen 0.0.0.0:6543 --password \"$SECRET\" --catalog s3://bucket/lake\n  rocklake serve --config /etc/rocklake.toml --metrics-listen 127.0.0.1:9187"
    )]
    Serve(ServeArgs),
    /// Configuration tools.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Check every stored key and DuckLake's catalog invariants (verify_catalog). Reads a
    /// consistent copy without taking over as writer, so it is safe next to a running server.
    /// Exit status: 0 clean, 1 violations found, 2 invalid arguments, 3 catalog unreadable.
    #[command(
        after_help = "Examples:\n  rocklake verify --catalog ./rocklake-data/catalog\n  AWS_ENDPOINT=http://127.0.0.1:9000 rocklake verify --catalog s3://bucket/lake --json"
    )]
    Verify {
        #[command(flatten)]
        target: CatalogArgs,
    },
    /// Advance the retain-from floor: snapshots below it are no longer guaranteed readable
    /// (never deletes bytes). Refused while a lease, a checkpoint or an open transaction
    /// still needs an older snapshot.
    #[command(
        after_help = "Examples:\n  rocklake gc plan --retain-from 120 --catalog ./rocklake-data/catalog\n  rocklake gc apply --retain-from 120 --json"
    )]
    Gc {
        #[command(subcommand)]
        action: GcAction,
    },
    /// Physically delete row versions no snapshot at or above the cut can read, in bounded
    /// batches (resumable). Requires a floor: gc apply first.
    #[command(
        after_help = "Examples:\n  rocklake excise plan --before 120\n  rocklake excise apply --before 120 --batch 5000"
    )]
    Excise {
        #[command(subcommand)]
        action: ExciseAction,
    },
    /// Checkpoints pin the latest snapshot until dropped; restore returns the lake to one.
    #[command(
        after_help = "Examples:\n  rocklake checkpoint create --name before-migration\n  rocklake checkpoint list --json\n  rocklake checkpoint restore 3\n  rocklake checkpoint drop 3"
    )]
    Checkpoint {
        #[command(subcommand)]
        action: CheckpointAction,
    },
    /// Logical restore to a checkpoint (same as `checkpoint restore`).
    #[command(after_help = "Example:\n  rocklake restore 3 --catalog s3://bucket/lake")]
    Restore {
        /// Checkpoint id (see `rocklake checkpoint list`).
        id: u64,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Snapshot leases: keep a snapshot readable for a while (default 1 hour, renewable).
    #[command(
        after_help = "Examples:\n  rocklake lease create --snapshot 42 --ttl-secs 600\n  rocklake lease list"
    )]
    Lease {
        #[command(subcommand)]
        action: LeaseAction,
    },
    /// Re-run a trace recorded with `serve --record DIR` on the core alone (no store, network
    /// or clock) and check that every result is byte-identical; report the first divergence.
    /// Exit status: 0 identical, 1 diverged, 2 invalid arguments, 3 unreadable trace.
    #[command(
        after_help = "Examples:\n  rocklake replay ./traces/rocklake-1790000000-4242.rltrace\n  rocklake replay TRACE --core native --json"
    )]
    Replay {
        /// The trace file.
        trace: PathBuf,
        /// Build of the core to replay on (`wasm` or `native`).
        #[arg(long, env = "ROCKLAKE_CORE", value_enum)]
        core: Option<CoreArg>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Fix what can be fixed safely (counters behind the ids they hand out, expired leases, a
    /// stale excision cursor), then verify. Dry run unless --apply. Anything verify still
    /// finds needs a human and is listed; the exit status is then 1.
    #[command(
        after_help = "Examples:\n  rocklake repair --catalog ./rocklake-data/catalog\n  rocklake repair --apply --json"
    )]
    Repair {
        /// Apply the fixes (default: only list them).
        #[arg(long)]
        apply: bool,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Measure your object store with the real commit path, on a fresh catalog.
    ///
    /// Creates a FRESH catalog (refused when the location holds anything, so it never touches
    /// a production catalog), runs concurrent sessions of DuckLake-shaped commits through the
    /// same service the server runs, and times bare PUTs to the same store as the reference.
    /// Deletes what it wrote afterwards unless --keep.
    /// Exit status: 0 measured, 1 refused (the location is not empty), 2 invalid arguments,
    /// 3 store unavailable or the run failed.
    #[command(
        after_help = "Examples:\n  rocklake bench commit\n  rocklake bench commit --sessions 16 --commits-per-session 100 --json\n  AWS_REGION=eu-west-1 rocklake bench commit --catalog s3://bucket/rocklake-bench"
    )]
    Bench {
        #[command(subcommand)]
        action: BenchAction,
    },
    /// Return the space excision freed to the object store, now: merge every table of the
    /// store into one sorted run and delete every file SlateDB no longer needs. Opens the
    /// catalog as its writer, so stop the server first (a running one reclaims the space by
    /// itself, later: compaction, then SlateDB's garbage collector after 5 minutes).
    /// Exit status: 0 done, 2 invalid arguments, 3 catalog unavailable.
    #[command(
        after_help = "Examples:\n  rocklake reclaim --catalog ./rocklake-data/catalog\n  rocklake reclaim --json"
    )]
    Reclaim {
        #[command(flatten)]
        target: CatalogArgs,
    },
    /// Lifecycle state: latest commit and snapshot, floor, excision progress, leases.
    #[command(after_help = "Example:\n  rocklake status --json")]
    Status {
        #[command(flatten)]
        admin: AdminArgs,
    },
}

/// Which catalog a command works on, and how it prints.
#[derive(Args, Debug, Clone)]
struct CatalogArgs {
    /// The catalog: a directory or a file://, s3://, gs://, az:// URL.
    #[arg(
        long,
        env = "ROCKLAKE_CATALOG",
        default_value = "./rocklake-data/catalog"
    )]
    catalog: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Options shared by the lifecycle commands. They open the catalog as its writer, which
/// fences a server running on it; while a server runs, call the same SQL functions through
/// it instead (`psql … -c "SELECT * FROM rocklake_gc_apply(120)"`, see docs/lifecycle.md).
/// Exit status: 0 done, 1 refused by the catalog, 2 invalid arguments, 3 catalog unavailable.
#[derive(Args, Debug, Clone)]
struct AdminArgs {
    #[command(flatten)]
    target: CatalogArgs,
    /// Build of the catalog core (`native` or `wasm`).
    #[arg(long, env = "ROCKLAKE_CORE", value_enum)]
    core: Option<CoreArg>,
}

#[derive(Subcommand, Debug)]
enum GcAction {
    /// Show what the floor would release and what excision could then delete.
    Plan {
        #[arg(long)]
        retain_from: u64,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Move the floor.
    Apply {
        #[arg(long)]
        retain_from: u64,
        #[command(flatten)]
        admin: AdminArgs,
    },
}

#[derive(Subcommand, Debug)]
enum ExciseAction {
    /// Count what an excision at this cut deletes.
    Plan {
        #[arg(long)]
        before: u64,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Delete it, in batches of at most `--batch` versions each.
    Apply {
        #[arg(long)]
        before: u64,
        #[arg(long, default_value_t = 10_000)]
        batch: usize,
        #[command(flatten)]
        admin: AdminArgs,
    },
}

#[derive(Subcommand, Debug)]
enum CheckpointAction {
    /// Pin the latest snapshot.
    Create {
        #[arg(long, default_value = "")]
        name: String,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// List checkpoints.
    List {
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Remove a checkpoint (its snapshot is no longer pinned).
    Drop {
        id: u64,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Logical restore to the checkpoint's snapshot.
    Restore {
        id: u64,
        #[command(flatten)]
        admin: AdminArgs,
    },
}

#[derive(Subcommand, Debug)]
enum LeaseAction {
    /// Lease a snapshot.
    Create {
        #[arg(long)]
        snapshot: u64,
        #[arg(long, default_value_t = 3600)]
        ttl_secs: i64,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Extend a live lease.
    Renew {
        id: u64,
        #[arg(long, default_value_t = 3600)]
        ttl_secs: i64,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// Release a lease.
    Release {
        id: u64,
        #[command(flatten)]
        admin: AdminArgs,
    },
    /// List leases.
    List {
        #[command(flatten)]
        admin: AdminArgs,
    },
}

#[derive(Subcommand, Debug)]
enum BenchAction {
    /// Commit throughput and latency under concurrency, next to one bare PUT.
    ///
    /// Every commit is one REPEATABLE READ transaction with the rows a DuckLake INSERT commit
    /// writes (snapshot, snapshot changes, a data file, two columns' file statistics).
    #[command(
        after_help = "Examples:\n  rocklake bench commit\n  rocklake bench commit --catalog /mnt/fast-disk/rocklake-bench --sessions 1\n  rocklake bench commit --catalog s3://bucket/rocklake-bench --sessions 64 --json"
    )]
    Commit(BenchCommitArgs),
    /// Load rows into a fresh catalog, time scans of them and a reopen of the store.
    ///
    /// Loads N rows of `ducklake_file_column_stats` (5000 per commit), then times
    /// `SELECT count(*)` (a scan of the table's key prefix) and `SELECT *` (every row decoded
    /// and returned), median of 3, and a reopen of the catalog's store (what a restart reads).
    #[command(
        after_help = "Examples:\n  rocklake bench scan\n  rocklake bench scan --rows 1000000 --json\n  rocklake bench scan --catalog s3://bucket/rocklake-bench --rows 200000"
    )]
    Scan(BenchScanArgs),
}

/// Options of `rocklake bench scan`.
#[derive(Args, Debug, Clone)]
struct BenchScanArgs {
    /// Where to create the benchmark catalog: an empty (or missing) directory or a file://,
    /// s3://, gs://, az:// URL. Default: a temporary directory under $TMPDIR. Deliberately
    /// not read from ROCKLAKE_CATALOG, which names the production catalog.
    #[arg(long)]
    catalog: Option<String>,
    /// Rows to load and scan.
    #[arg(long, default_value_t = 100_000,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=100_000_000))]
    rows: usize,
    /// Leave the benchmark catalog in place.
    #[arg(long)]
    keep: bool,
    /// Build of the catalog core (`native` or `wasm`).
    #[arg(long, env = "ROCKLAKE_CORE", value_enum)]
    core: Option<CoreArg>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Options of `rocklake bench commit`.
#[derive(Args, Debug, Clone)]
struct BenchCommitArgs {
    /// Where to create the benchmark catalog: an empty (or missing) directory or a file://,
    /// s3://, gs://, az:// URL. Default: a temporary directory under $TMPDIR. Deliberately
    /// not read from ROCKLAKE_CATALOG, which names the production catalog.
    #[arg(long)]
    catalog: Option<String>,
    /// Concurrent sessions (each one connection's worth of commits, one after the other).
    #[arg(long, default_value_t = 4,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1024))]
    sessions: usize,
    /// Commits each session makes.
    #[arg(long, default_value_t = 50,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    commits_per_session: usize,
    /// Bare PUTs timed as the reference (half before the commits, half after).
    #[arg(long, default_value_t = 20,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..=10_000))]
    puts: usize,
    /// Leave the benchmark catalog in place (to inspect it, e.g. with `rocklake verify`).
    #[arg(long)]
    keep: bool,
    /// Build of the catalog core (`native` or `wasm`).
    #[arg(long, env = "ROCKLAKE_CORE", value_enum)]
    core: Option<CoreArg>,
    /// Commit through the commit journal, as the server does by default (`true`), or through
    /// one SlateDB WAL upload per commit group (`false`).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    commit_journal: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand, Debug)]
enum ConfigCommand {
    /// Load the configuration (file < environment < flags), validate it and print the result.
    /// Exit status 0 when valid, 2 when not.
    #[command(
        after_help = "Examples:\n  rocklake config check --config rocklake.toml\n  ROCKLAKE_LISTEN=0.0.0.0:6543 rocklake config check --json"
    )]
    Check {
        #[command(flatten)]
        serve: ServeArgs,
        /// Print JSON instead of TOML.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum AuthArg {
    /// SCRAM-SHA-256 (PostgreSQL's default).
    Scram,
    /// MD5 challenge-response.
    Md5,
    /// Cleartext password (use only over trusted networks).
    Password,
    /// No authentication; only allowed on a loopback address.
    Trust,
}

impl AuthArg {
    fn name(self) -> &'static str {
        match self {
            AuthArg::Scram => "scram",
            AuthArg::Md5 => "md5",
            AuthArg::Password => "password",
            AuthArg::Trust => "trust",
        }
    }
}

fn auth_method(name: &str) -> AuthMethod {
    match name {
        "md5" => AuthMethod::Md5,
        "password" => AuthMethod::Password,
        "trust" => AuthMethod::Trust,
        _ => AuthMethod::Scram,
    }
}

/// Which build of the catalog core to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CoreArg {
    /// The core linked into this binary.
    Native,
    /// The core WebAssembly component, run with wasmtime.
    Wasm,
}

impl CoreArg {
    fn name(self) -> &'static str {
        match self {
            CoreArg::Native => "native",
            CoreArg::Wasm => "wasm",
        }
    }
}

/// Every option can also come from the configuration file (`--config`, key = the option's
/// name with `_` for `-`); a flag beats its environment variable, which beats the file.
#[derive(Args, Debug, Clone)]
struct ServeArgs {
    /// TOML configuration file (see docs/configuration.md).
    #[arg(long, env = "ROCKLAKE_CONFIG")]
    config: Option<PathBuf>,
    /// Build of the catalog core: `wasm` (the component) or `native`. Default: `wasm` when the
    /// component file exists, else `native` with a warning.
    #[arg(long, env = "ROCKLAKE_CORE", value_enum)]
    core: Option<CoreArg>,
    /// The core component (.wasm). Default: `wasm32-unknown-unknown/release/rocklake_core.wasm` in
    /// the cargo target directory of this executable, or `rocklake_core.wasm` beside it.
    #[arg(long, env = "ROCKLAKE_COMPONENT")]
    component: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:6543].
    #[arg(long, env = "ROCKLAKE_LISTEN")]
    listen: Option<String>,
    /// Where the catalog lives: a local directory or a file://, s3://, gs://, az:// URL
    /// [default: ./rocklake-data/catalog].
    #[arg(long, env = "ROCKLAKE_CATALOG")]
    catalog: Option<String>,
    /// The role clients log in as [default: rocklake].
    #[arg(long, env = "ROCKLAKE_USER")]
    user: Option<String>,
    /// The role's password; a random one is generated when absent.
    #[arg(long, env = "ROCKLAKE_PASSWORD", hide_env_values = true)]
    password: Option<String>,
    /// Authentication method [default: scram].
    #[arg(long, env = "ROCKLAKE_AUTH", value_enum)]
    auth: Option<AuthArg>,
    /// DATA_PATH suggested to DuckDB for the lake's data files [default: ./rocklake-data/files/].
    #[arg(long, env = "ROCKLAKE_DATA_PATH")]
    data_path: Option<String>,
    /// Largest statement (or COPY data message) accepted, in bytes; larger ones fail with 54000
    /// [default: 67108864].
    #[arg(long, env = "ROCKLAKE_MAX_STATEMENT_BYTES")]
    max_statement_bytes: Option<usize>,
    /// Maximum number of concurrent client connections [default: 100].
    #[arg(long, env = "ROCKLAKE_MAX_CONNECTIONS")]
    max_connections: Option<usize>,
    /// Log format [default: human].
    #[arg(long, env = "ROCKLAKE_LOG_FORMAT", value_enum)]
    log_format: Option<LogFormat>,
    /// Serve /metrics, /healthz and /readyz over HTTP on this address [default: off].
    #[arg(long, env = "ROCKLAKE_METRICS_LISTEN")]
    metrics_listen: Option<String>,
    /// Log (and count) query strings slower than this many milliseconds [default: 1000].
    #[arg(long, env = "ROCKLAKE_SLOW_STATEMENT_MS")]
    slow_statement_ms: Option<u64>,
    /// Serve a read replica of the catalog: never takes over as writer, follows the writer's
    /// commits, refuses writes with 25006 (DuckDB attaches it with READ_ONLY).
    #[arg(long, env = "ROCKLAKE_READ_ONLY", num_args = 0..=1, default_missing_value = "true")]
    read_only: Option<bool>,
    /// How often a read replica checks for the writer's commits, in milliseconds [default: 100].
    #[arg(long, env = "ROCKLAKE_REPLICA_POLL_MS")]
    replica_poll_ms: Option<u64>,
    /// Record every call across the core boundary (arguments, storage reads with their
    /// answers, results) to a trace file in this directory, for `rocklake replay`.
    #[arg(long, env = "ROCKLAKE_RECORD")]
    record: Option<PathBuf>,
    /// TLS certificate chain (PEM); with --tls-key, clients may use sslmode=require.
    #[arg(long, env = "ROCKLAKE_TLS_CERT")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, env = "ROCKLAKE_TLS_KEY")]
    tls_key: Option<PathBuf>,
    /// Refuse connections that do not use TLS (FATAL 28000, as PostgreSQL's hostssl-only).
    #[arg(long, env = "ROCKLAKE_TLS_REQUIRED", num_args = 0..=1, default_missing_value = "true")]
    tls_required: Option<bool>,
    /// Interrupt requests running longer than this many milliseconds with 57014, like
    /// PostgreSQL's statement_timeout [default: 0 = off].
    #[arg(long, env = "ROCKLAKE_STATEMENT_TIMEOUT_MS")]
    statement_timeout_ms: Option<u64>,
    /// End sessions idle inside a transaction block longer than this many milliseconds with
    /// FATAL 25P03 [default: 0 = off].
    #[arg(long, env = "ROCKLAKE_IDLE_IN_TRANSACTION_TIMEOUT_MS")]
    idle_in_transaction_timeout_ms: Option<u64>,
    /// A commit whose durable write takes longer than this many milliseconds fails with 58030
    /// ("outcome unknown"; it is then either fully there or fully absent) [default: 30000].
    #[arg(long, env = "ROCKLAKE_COMMIT_TIMEOUT_MS")]
    commit_timeout_ms: Option<u64>,
    /// Make commits durable through RockLake's commit journal (`true`: an append to
    /// `rocklake-journal` on a local directory, one object per commit group on an object
    /// store), or by one SlateDB WAL upload per commit group (`false`) [default: true].
    #[arg(long, env = "ROCKLAKE_COMMIT_JOURNAL")]
    commit_journal: Option<bool>,
    /// Object stores: commit groups uploading to the commit journal at most at once
    /// [default: 32].
    #[arg(long, env = "ROCKLAKE_JOURNAL_UPLOADS")]
    journal_uploads: Option<usize>,
    /// A statement that needs more than this many MiB of memory (rows of a huge join, a
    /// large sort) fails with 53200 "out of memory" and the server goes on; 0 = no limit
    /// (the WebAssembly core still stops a statement before its heap reaches 3 GiB)
    /// [default: 4096].
    #[arg(long, env = "ROCKLAKE_STATEMENT_MEMORY_LIMIT_MB")]
    statement_memory_limit_mb: Option<u64>,
}

impl ServeArgs {
    /// Flags and environment over the file over the defaults, validated.
    fn settings(&self) -> Result<Settings, ConfigError> {
        let file = match &self.config {
            Some(path) => FileConfig::load(path)?,
            None => FileConfig::default(),
        };
        let o = Overrides {
            listen: self.listen.clone(),
            catalog: self.catalog.clone(),
            user: self.user.clone(),
            password: self.password.clone(),
            auth: self.auth.map(|a| a.name().to_string()),
            data_path: self.data_path.clone(),
            max_statement_bytes: self.max_statement_bytes,
            max_connections: self.max_connections,
            core: self.core.map(|c| match c {
                CoreArg::Native => "native".to_string(),
                CoreArg::Wasm => "wasm".to_string(),
            }),
            component: self.component.clone(),
            log_format: self.log_format.map(|f| {
                match f {
                    LogFormat::Human => "human",
                    LogFormat::Json => "json",
                }
                .to_string()
            }),
            metrics_listen: self.metrics_listen.clone(),
            slow_statement_ms: self.slow_statement_ms,
            read_only: self.read_only,
            replica_poll_ms: self.replica_poll_ms,
            tls_cert: self.tls_cert.clone(),
            tls_key: self.tls_key.clone(),
            tls_required: self.tls_required,
            record: self.record.clone(),
            statement_timeout_ms: self.statement_timeout_ms,
            idle_in_transaction_timeout_ms: self.idle_in_transaction_timeout_ms,
            commit_timeout_ms: self.commit_timeout_ms,
            commit_journal: self.commit_journal,
            journal_uploads: self.journal_uploads,
            statement_memory_limit_mb: self.statement_memory_limit_mb,
            users: None,
        };
        Settings::resolve(o, file)
    }
}

/// Exit status for an invalid configuration (as for usage errors).
const EXIT_CONFIG: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let args = match cli.command {
        Some(Command::Serve(args)) => args,
        Some(Command::Config(ConfigCommand::Check { serve, json })) => {
            return config_check(&serve, json)
        }
        Some(Command::Verify { target }) => return verify(&target.catalog, target.json),
        Some(Command::Reclaim { target }) => return reclaim(&target.catalog, target.json),
        Some(Command::Gc { action }) => {
            return match action {
                GcAction::Plan { retain_from, admin } => admin_sql(
                    &admin,
                    &format!("SELECT * FROM rocklake_gc_plan({retain_from})"),
                ),
                GcAction::Apply { retain_from, admin } => admin_sql(
                    &admin,
                    &format!("SELECT * FROM rocklake_gc_apply({retain_from})"),
                ),
            }
        }
        Some(Command::Excise { action }) => {
            return match action {
                ExciseAction::Plan { before, admin } => admin_sql(
                    &admin,
                    &format!("SELECT * FROM rocklake_excise_plan({before})"),
                ),
                ExciseAction::Apply {
                    before,
                    batch,
                    admin,
                } => excise_apply(&admin, before, batch),
            }
        }
        Some(Command::Checkpoint { action }) => {
            return match action {
                CheckpointAction::Create { name, admin } => admin_sql(
                    &admin,
                    &format!(
                        "SELECT * FROM rocklake_checkpoint_create({})",
                        sql_literal(&name)
                    ),
                ),
                CheckpointAction::List { admin } => {
                    admin_sql(&admin, "SELECT * FROM rocklake_checkpoints()")
                }
                CheckpointAction::Drop { id, admin } => admin_sql(
                    &admin,
                    &format!("SELECT * FROM rocklake_checkpoint_drop({id})"),
                ),
                CheckpointAction::Restore { id, admin } => admin_sql(
                    &admin,
                    &format!("SELECT * FROM rocklake_checkpoint_restore({id})"),
                ),
            }
        }
        Some(Command::Restore { id, admin }) => {
            return admin_sql(
                &admin,
                &format!("SELECT * FROM rocklake_checkpoint_restore({id})"),
            )
        }
        Some(Command::Lease { action }) => {
            return match action {
                LeaseAction::Create {
                    snapshot,
                    ttl_secs,
                    admin,
                } => admin_sql(
                    &admin,
                    &format!("SELECT * FROM rocklake_lease({snapshot}, {ttl_secs})"),
                ),
                LeaseAction::Renew {
                    id,
                    ttl_secs,
                    admin,
                } => admin_sql(
                    &admin,
                    &format!("SELECT * FROM rocklake_lease_renew({id}, {ttl_secs})"),
                ),
                LeaseAction::Release { id, admin } => admin_sql(
                    &admin,
                    &format!("SELECT * FROM rocklake_lease_release({id})"),
                ),
                LeaseAction::List { admin } => admin_sql(&admin, "SELECT * FROM rocklake_leases()"),
            }
        }
        Some(Command::Bench { action }) => {
            return match action {
                BenchAction::Commit(args) => bench_commit(&args),
                BenchAction::Scan(args) => bench_scan(&args),
            }
        }
        Some(Command::Replay { trace, core, json }) => return replay(&trace, core, json),
        Some(Command::Repair { apply, admin }) => return repair(&admin, apply),
        Some(Command::Status { admin }) => {
            return admin_sql(&admin, "SELECT * FROM rocklake_status()")
        }
        None => cli.serve,
    };
    let settings = match args.settings() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rocklake: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    init_logs(settings.log_format);
    let run = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(rocklake::service::ENGINE_THREAD_STACK)
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|rt| {
            let served = rt.block_on(serve(settings));
            // A blocking task that never ends (a stuck file operation) must not keep a
            // stopped server alive: dropping the runtime would wait for it without bound.
            rt.shutdown_timeout(RUNTIME_STOP_BOUND);
            served
        });
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("rocklake: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// How long a stopping server waits for the catalog store to close (see `serve`).
const STORE_CLOSE_BOUND: std::time::Duration = std::time::Duration::from_secs(15);
/// How long a stopped server waits for blocking tasks before it exits anyway.
const RUNTIME_STOP_BOUND: std::time::Duration = std::time::Duration::from_secs(5);

/// Logs go to stderr: stdout carries only the ATTACH line that scripts parse.
fn init_logs(format: LogFormat) {
    init_logs_at(format, "info");
}

/// Logs at `default` unless RUST_LOG says otherwise.
fn init_logs_at(format: LogFormat, default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Human => builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
    }
}

/// verify_catalog over a consistent read-only copy of the catalog (never claims the writer).
/// The core's verify is one call without a progress hook, so this shows a spinner with the
/// phase and the elapsed time (on stderr, only when it is a terminal), never a percentage.
fn verify_report(url: &url::Url) -> anyhow::Result<rocklake_core::verify::Report> {
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.set_style(
        indicatif::ProgressStyle::with_template("{spinner} verify: {msg} ({elapsed})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    spinner.enable_steady_tick(std::time::Duration::from_millis(100));
    let run = async {
        spinner.set_message("reading a consistent copy of the catalog");
        let kv = rocklake::store::read_snapshot(url.as_str()).await?;
        spinner.set_message(format!("loading {} keys into the core", kv.len()));
        let mut engine = rocklake_core::Engine::open(&kv)
            .map_err(|e| anyhow::anyhow!("cannot load catalog: {e}"))?;
        spinner.set_message(format!(
            "checking {} keys and DuckLake's invariants",
            kv.len()
        ));
        rocklake_core::verify::verify(&mut engine, &kv)
            .map_err(|e| anyhow::anyhow!("verify failed: {e}"))
    };
    let report = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(rocklake::service::ENGINE_THREAD_STACK)
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|rt| rt.block_on(run));
    spinner.finish_and_clear();
    report
}

fn reclaim(catalog: &str, json: bool) -> ExitCode {
    init_logs(LogFormat::Human);
    let url = match catalog_url(catalog) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("rocklake: {e:#}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let run = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(rocklake::service::ENGINE_THREAD_STACK)
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|rt| {
            rt.block_on(rocklake::store::reclaim(url.as_str()))
                .map_err(anyhow::Error::from)
        });
    match run {
        Ok(r) if json => {
            println!("{:#}", serde_json::json!(r));
            ExitCode::SUCCESS
        }
        Ok(r) => {
            println!(
                "merged {} L0 tables and {} sorted runs; {} bytes in {} objects -> {} bytes in {} objects",
                r.merged_l0, r.merged_runs, r.bytes_before, r.objects_before, r.bytes_after, r.objects_after
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rocklake: {e:#}");
            ExitCode::from(3)
        }
    }
}

fn verify(catalog: &str, json: bool) -> ExitCode {
    init_logs(LogFormat::Human);
    let url = match catalog_url(catalog) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("rocklake: {e:#}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let report = match verify_report(&url) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rocklake: {e:#}");
            return ExitCode::from(3);
        }
    };
    if json {
        let violations: Vec<serde_json::Value> = report
            .violations
            .iter()
            .map(
                |v| serde_json::json!({"check": v.check, "subject": v.subject, "detail": v.detail}),
            )
            .collect();
        let out = serde_json::json!({
            "catalog": url.as_str(),
            "keys_checked": report.keys_checked,
            "rows_checked": report.rows_checked,
            "ducklake_schemas": report.ducklake_schemas,
            "violations": violations,
        });
        println!("{out:#}");
    } else {
        println!("{}", report.summary());
        for v in &report.violations {
            println!("VIOLATION {}: {}: {}", v.check, v.subject, v.detail);
        }
        println!("{} violation(s)", report.violations.len());
    }
    if report.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Runs `work` against the catalog opened for administration and prints its table.
fn admin_run<F>(admin: &AdminArgs, work: F) -> ExitCode
where
    F: for<'a> FnOnce(
        &'a rocklake::admin::Admin,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<
                    Output = Result<rocklake::admin::Table, rocklake::admin::AdminError>,
                > + 'a,
        >,
    >,
{
    use rocklake::admin::{Admin, AdminError};
    init_logs(LogFormat::Human);
    let url = match catalog_url(&admin.target.catalog) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("rocklake: {e:#}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let core = match core_kind(admin.core.map(|c| c.name()), None) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rocklake: {e:#}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let run = async {
        let a = Admin::open(url.as_str(), core).await?;
        let result = work(&a).await;
        let closed = a.close().await;
        let table = result?;
        closed?;
        Ok::<_, AdminError>(table)
    };
    let result = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(rocklake::service::ENGINE_THREAD_STACK)
        .build()
    {
        Ok(rt) => rt.block_on(run),
        Err(e) => Err(AdminError::Unavailable(e.into())),
    };
    match result {
        Ok(table) => {
            if admin.target.json {
                println!("{:#}", table.to_json());
            } else {
                println!("{}", table.render());
            }
            ExitCode::SUCCESS
        }
        Err(e @ AdminError::Refused(_)) => {
            eprintln!("rocklake: {e}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("rocklake: {e}");
            ExitCode::from(3)
        }
    }
}

fn admin_sql(admin: &AdminArgs, sql: &str) -> ExitCode {
    // Opening a large catalog (every key is loaded) and the full scans of `gc plan` or
    // `repair` take seconds: a spinner with the elapsed time on stderr (terminals only).
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    spinner.enable_steady_tick(std::time::Duration::from_millis(100));
    spinner.set_message("opening the catalog");
    let shown = spinner.clone();
    let sql = sql.to_string();
    let code = admin_run(admin, move |a| {
        Box::pin(async move {
            shown.set_message(sql.clone());
            a.query(&sql).await
        })
    });
    spinner.finish_and_clear();
    code
}

fn excise_apply(admin: &AdminArgs, before: u64, batch: usize) -> ExitCode {
    // Drawn on stderr only when it is a terminal; scripts read stdout.
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} excising: {pos} versions deleted in {msg} batch(es) ({elapsed})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let shown = bar.clone();
    let code = admin_run(admin, move |a| {
        Box::pin(async move {
            a.excise_all(before, batch, move |done, batches| {
                shown.set_position(done);
                shown.set_message(batches.to_string());
            })
            .await
        })
    });
    bar.finish_and_clear();
    code
}

fn repair(admin: &AdminArgs, apply: bool) -> ExitCode {
    let code = admin_sql(admin, &format!("SELECT * FROM rocklake_repair({apply})"));
    if code != ExitCode::SUCCESS || !apply {
        return code;
    }
    // What is left needs a decision a tool cannot make: report it and fail.
    let Ok(url) = catalog_url(&admin.target.catalog) else {
        return ExitCode::from(EXIT_CONFIG);
    };
    let report = match verify_report(&url) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rocklake: {e:#}");
            return ExitCode::from(3);
        }
    };
    for v in &report.violations {
        eprintln!(
            "cannot repair safely: {} {}: {}",
            v.check, v.subject, v.detail
        );
    }
    if report.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "{} violation(s) left; restore from a checkpoint or a backup",
            report.violations.len()
        );
        ExitCode::from(1)
    }
}

fn replay(trace: &Path, core: Option<CoreArg>, json: bool) -> ExitCode {
    init_logs(LogFormat::Human);
    let kind = match core_kind(core.map(|c| c.name()), None) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("rocklake: {e:#}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let shown_core = match &kind {
        CoreKind::Native => "native".to_string(),
        CoreKind::Wasm(p) => format!("wasm ({})", p.display()),
    };
    // On stderr, and only when it is a terminal: --json output stays clean. Reading the trace
    // and building the core (compiling the component) come before the count is known.
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} replay: {msg} ({elapsed})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar.set_message(format!("reading {}", trace.display()));
    bar.enable_steady_tick(std::time::Duration::from_millis(100));
    let counting = indicatif::ProgressStyle::with_template(
        "{bar:30} {pos}/{len} calls replayed ({per_sec}, {elapsed}, ETA {eta})",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    let mut progress = |done: usize, total: usize| {
        if done == 0 {
            bar.set_message("opening the core");
            bar.set_length(total as u64);
        } else if done == 1 {
            bar.set_style(counting.clone());
        }
        bar.set_position(done as u64);
    };
    let replayed = rocklake::trace::replay_with_progress(
        trace,
        rocklake::trace::core_factory(kind),
        &mut progress,
    );
    bar.finish_and_clear();
    let report = match replayed {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rocklake: {e:#}");
            return ExitCode::from(3);
        }
    };
    if json {
        let d = report
            .divergence
            .as_ref()
            .map(|d| serde_json::json!({"event": d.event, "call": d.call, "detail": d.detail}));
        let out = serde_json::json!({
            "trace": trace.display().to_string(),
            "core": shown_core,
            "events": report.events,
            "queries": report.queries,
            "truncated": report.truncated,
            "identical": report.divergence.is_none(),
            "divergence": d,
        });
        println!("{out:#}");
    } else {
        println!(
            "replayed {} events ({} queries) on the {shown_core} core{}",
            report.events,
            report.queries,
            if report.truncated {
                "; the trace ends in an incomplete event"
            } else {
                ""
            }
        );
        match &report.divergence {
            None => println!("identical: every result matches the recording"),
            Some(d) => println!("DIVERGED at event {}: {}\n  {}", d.event, d.call, d.detail),
        }
    }
    if report.divergence.is_none() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn bench_commit(args: &BenchCommitArgs) -> ExitCode {
    use rocklake::bench::{commit_bench, BenchError, CommitBenchOptions};
    // The store's open/close chatter would bury the report; warnings and errors still show.
    init_logs_at(LogFormat::Human, "warn");
    let (catalog, core) = match bench_target(args.catalog.as_deref(), args.core) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let opts = CommitBenchOptions {
        catalog,
        sessions: args.sessions,
        commits_per_session: args.commits_per_session,
        puts: args.puts,
        core,
        keep: args.keep,
        commit_journal: args.commit_journal,
    };
    // On stderr, and only when it is a terminal: --json output stays clean.
    let total = (args.sessions * args.commits_per_session) as u64;
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} commits ({per_sec}, {elapsed})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let shown = bar.clone();
    let progress = move |done, _total| shown.set_position(done);
    let result = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(rocklake::service::ENGINE_THREAD_STACK)
        .build()
        .map_err(|e| BenchError::Failed(e.into()))
        .and_then(|rt| rt.block_on(commit_bench(&opts, progress)));
    bar.finish_and_clear();
    let report = match result {
        Ok(r) => r,
        Err(e) => return bench_failed(&e),
    };
    if args.json {
        return print_json(&report);
    }
    let r = &report;
    let whereabouts = bench_whereabouts(r.temporary, r.kept);
    println!(
        "rocklake bench commit on {} ({whereabouts}), {} core",
        r.catalog, r.core
    );
    println!(
        "  {} session{} x {} commits = {} commits in {:.2} s: {:.0} commits/s",
        r.sessions,
        if r.sessions == 1 { "" } else { "s" },
        r.commits_per_session,
        r.commits,
        r.elapsed_s,
        r.commits_per_s
    );
    println!(
        "  commit latency    p50 {:>8.2} ms   p99 {:>8.2} ms   max {:>8.2} ms",
        r.p50_ms, r.p99_ms, r.max_ms
    );
    println!(
        "  bare {} KiB PUT    p50 {:>8.2} ms   p99 {:>8.2} ms   ({} PUTs, same store)",
        r.put_bytes / 1024,
        r.put_p50_ms,
        r.put_p99_ms,
        r.puts
    );
    println!(
        "  commit p50 / PUT p50: {:.2}x; {:.2} object-store PUTs and {:.0} batch bytes per commit",
        r.p50_over_put, r.store_puts_per_commit, r.batch_bytes_per_commit
    );
    if r.commit_journal {
        println!(
            "  commits were durable through the commit journal (--commit-journal false: one SlateDB WAL upload per group)"
        );
    }
    ExitCode::SUCCESS
}

fn bench_scan(args: &BenchScanArgs) -> ExitCode {
    use rocklake::bench::{scan_bench, BenchError, ScanBenchOptions, ScanPhase};
    init_logs_at(LogFormat::Human, "warn");
    let (catalog, core) = match bench_target(args.catalog.as_deref(), args.core) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let opts = ScanBenchOptions {
        catalog,
        rows: args.rows,
        core,
        keep: args.keep,
    };
    // On stderr, and only when it is a terminal: --json output stays clean.
    let bar = indicatif::ProgressBar::new(args.rows as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} ({elapsed})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let shown = bar.clone();
    let result = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(rocklake::service::ENGINE_THREAD_STACK)
        .build()
        .map_err(|e| BenchError::Failed(e.into()))
        .and_then(|rt| {
            rt.block_on(scan_bench(&opts, move |phase| match phase {
                ScanPhase::Load { done, .. } => {
                    shown.set_message("rows loaded");
                    shown.set_position(done);
                }
                ScanPhase::Scan => shown.set_message("rows loaded; scanning"),
                ScanPhase::Reopen => shown.set_message("rows loaded; reopening the store"),
            }))
        });
    bar.finish_and_clear();
    let report = match result {
        Ok(r) => r,
        Err(e) => return bench_failed(&e),
    };
    if args.json {
        return print_json(&report);
    }
    let r = &report;
    println!(
        "rocklake bench scan on {} ({}), {} core",
        r.catalog,
        bench_whereabouts(r.temporary, r.kept),
        r.core
    );
    println!(
        "  load {} rows        {:>9.2} s    {:>12.0} rows/s",
        r.rows, r.load_s, r.load_rows_per_s
    );
    println!(
        "  SELECT count(*)     {:>9.2} ms   {:>12.0} rows/s (key-prefix scan)",
        r.count_ms, r.count_rows_per_s
    );
    println!(
        "  SELECT *            {:>9.2} ms   {:>12.0} rows/s (rows decoded and returned)",
        r.select_ms, r.select_rows_per_s
    );
    println!(
        "  reopen the store    {:>9.2} ms   (SlateDB open + every key loaded: a restart)",
        r.reopen_ms
    );
    ExitCode::SUCCESS
}

/// The benchmark location as a URL (None: a temporary directory) and the core, or the exit
/// status for invalid arguments.
fn bench_target(
    catalog: Option<&str>,
    core: Option<CoreArg>,
) -> Result<(Option<String>, CoreKind), ExitCode> {
    let catalog = match catalog.map(catalog_url).transpose() {
        Ok(u) => u.map(|u| u.to_string()),
        Err(e) => {
            eprintln!("rocklake: {e:#}");
            return Err(ExitCode::from(EXIT_CONFIG));
        }
    };
    match core_kind(core.map(|c| c.name()), None) {
        Ok(c) => Ok((catalog, c)),
        Err(e) => {
            eprintln!("rocklake: {e:#}");
            Err(ExitCode::from(EXIT_CONFIG))
        }
    }
}

/// Exit 1 when the location was refused (nothing written), 3 when the run failed.
fn bench_failed(e: &rocklake::bench::BenchError) -> ExitCode {
    eprintln!("rocklake: {e}");
    match e {
        rocklake::bench::BenchError::Refused(_) => ExitCode::from(1),
        _ => ExitCode::from(3),
    }
}

fn bench_whereabouts(temporary: bool, kept: bool) -> &'static str {
    match (temporary, kept) {
        (true, false) => "temporary, removed",
        (true, true) => "temporary, kept",
        (false, false) => "benchmark objects deleted afterwards",
        (false, true) => "kept",
    }
}

fn print_json(report: &impl serde::Serialize) -> ExitCode {
    match serde_json::to_string_pretty(report) {
        Ok(t) => {
            println!("{t}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rocklake: {e}");
            ExitCode::from(3)
        }
    }
}

fn config_check(args: &ServeArgs, json: bool) -> ExitCode {
    let settings = match args.settings() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rocklake: {e}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let mut shown = match serde_json::to_value(&settings) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("rocklake: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(map) = shown.as_object_mut() {
        let password = if settings.password.is_some() {
            "(set)"
        } else {
            "(random at start)"
        };
        map.insert("password".into(), password.into());
        // TOML has no null: leave unset optional keys out.
        map.retain(|_, v| !v.is_null());
    }
    let text = if json {
        serde_json::to_string_pretty(&shown).map_err(|e| e.to_string())
    } else {
        toml::to_string(&shown).map_err(|e| e.to_string())
    };
    match text {
        Ok(t) => {
            println!("{}", t.trim_end());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rocklake: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The core to run. An explicit `--core wasm` requires the component; without `--core` the
/// component is used when it exists, so a checkout without a wasm build still serves (natively).
fn core_kind(core: Option<&str>, component: Option<PathBuf>) -> anyhow::Result<CoreKind> {
    let core = core.map(|c| {
        if c == "wasm" {
            CoreArg::Wasm
        } else {
            CoreArg::Native
        }
    });
    let path = component.or_else(rocklake::component::default_component_path);
    match (core, path) {
        (Some(CoreArg::Native), _) => Ok(CoreKind::Native),
        (Some(CoreArg::Wasm), Some(path)) => Ok(CoreKind::Wasm(path)),
        (Some(CoreArg::Wasm), None) => anyhow::bail!(
            "--core wasm: no component found; set --component or ROCKLAKE_COMPONENT (build it with `{}`)",
            rocklake::component::BUILD_COMMAND
        ),
        (None, Some(path)) if path.is_file() => Ok(CoreKind::Wasm(path)),
        (None, path) => {
            let at = path.map(|p| p.display().to_string()).unwrap_or_else(|| "(unknown)".into());
            tracing::warn!(
                "core component not found at {at}: running the native core (build the component with `{}`)",
                rocklake::component::BUILD_COMMAND
            );
            Ok(CoreKind::Native)
        }
    }
}

/// Where the catalog is stored, normalised to a URL (plain paths become absolute file:// URLs).
fn catalog_url(raw: &str) -> anyhow::Result<url::Url> {
    if raw.contains("://") {
        let url = url::Url::parse(raw).with_context(|| format!("invalid catalog URL {raw:?}"))?;
        match url.scheme() {
            "file" | "s3" | "gs" | "az" | "azure" => Ok(url),
            other => anyhow::bail!("unsupported catalog URL scheme {other:?} (use a path, file://, s3://, gs:// or az://)"),
        }
    } else {
        let path =
            std::path::absolute(raw).with_context(|| format!("invalid catalog path {raw:?}"))?;
        url::Url::from_directory_path(&path)
            .map_err(|()| anyhow::anyhow!("cannot turn {} into a file URL", path.display()))
    }
}

/// The DATA_PATH to suggest: URLs as given, local paths absolute with a trailing slash.
fn data_path(raw: &str) -> anyhow::Result<String> {
    if raw.contains("://") {
        return Ok(raw.to_owned());
    }
    let path: PathBuf = std::path::absolute(Path::new(raw))
        .with_context(|| format!("invalid data path {raw:?}"))?;
    let mut s = path.to_string_lossy().into_owned();
    if !s.ends_with(std::path::MAIN_SEPARATOR) {
        s.push(std::path::MAIN_SEPARATOR);
    }
    Ok(s)
}

/// A libpq connection-string value, quoted when needed (`'…'` with `\` escapes).
fn conninfo_value(v: &str) -> String {
    if !v.is_empty()
        && !v
            .chars()
            .any(|c| c.is_whitespace() || c == '\'' || c == '\\')
    {
        return v.to_owned();
    }
    let mut out = String::from("'");
    for c in v.chars() {
        if c == '\'' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

fn sql_literal(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

/// The host clients should connect to: the bound address, or loopback when bound to all.
fn advertised_host(addr: SocketAddr) -> IpAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    tracing::info!("shutdown requested");
}

async fn serve(args: Settings) -> anyhow::Result<()> {
    let method = auth_method(&args.auth);
    let catalog = catalog_url(&args.catalog)?;
    let data_path = data_path(&args.data_path)?;
    let password = match args.password.clone() {
        Some(p) => p,
        None => {
            tracing::info!("no --password given: generated a random one (see the ATTACH line)");
            random_password(24)?
        }
    };
    let listener = TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let local = listener.local_addr()?;
    if method == AuthMethod::Trust && !local.ip().is_loopback() {
        anyhow::bail!("refusing --auth trust on non-loopback address {local}: anyone who can reach it could use the catalog");
    }

    // ---- SERVICE CONSTRUCTION: the single call site. ----
    let core = core_kind(args.core.as_deref(), args.component.clone())?;
    tracing::info!(%catalog, %data_path, ?core, "opening catalog");
    let service: Arc<CatalogService> = CatalogService::open_with_core(
        &ServiceConfig {
            catalog: catalog.to_string(),
            slow_statement: Some(std::time::Duration::from_millis(args.slow_statement_ms)),
            replica_poll: args
                .read_only
                .then(|| std::time::Duration::from_millis(args.replica_poll_ms)),
            faults: None,
            create_if_missing: true,
            record: args.record.clone(),
            commit_timeout: std::time::Duration::from_millis(args.commit_timeout_ms),
            commit_journal: args.commit_journal,
            journal_uploads: args.journal_uploads,
            statement_memory_limit: args.statement_memory_limit_mb << 20,
        },
        core,
        Box::new(SystemClock),
    )
    .await
    .with_context(|| format!("cannot open catalog {catalog}"))?;
    if args.read_only {
        tracing::info!("catalog open as a read replica");
    } else {
        tracing::info!(
            epoch = service.epoch(),
            "catalog open; this instance is the writer"
        );
    }
    // ---- end of service construction ----
    rocklake::heap::spawn_reclaimer(&service.metrics())
        .context("cannot start the heap reclaimer")?;

    let mut auth = AuthConfig::new(method, args.user.clone(), password.clone())?;
    for role in &args.users {
        auth = auth.with_role(role.name.clone(), role.password.clone(), role.read_only)?;
    }
    let mut config = ServerConfig::new(auth);
    config.max_message_bytes = args.max_statement_bytes;
    config.max_connections = args.max_connections;
    let millis = |ms: u64| (ms > 0).then(|| std::time::Duration::from_millis(ms));
    config.statement_timeout = millis(args.statement_timeout_ms);
    config.idle_in_transaction_timeout = millis(args.idle_in_transaction_timeout_ms);
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        config.tls = Some(server::tls::TlsSettings::load(
            cert,
            key,
            args.tls_required,
        )?);
    } else if !local.ip().is_loopback() {
        tracing::warn!(listen = %local, "listening beyond loopback without TLS: passwords and catalog data cross the network in the clear (set --tls-cert/--tls-key)");
    }

    let host = advertised_host(local);
    let conninfo = format!(
        "ducklake:postgres:host={} port={} dbname=lake user={} password={}",
        host,
        local.port(),
        conninfo_value(&args.user),
        conninfo_value(&password),
    );
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        writeln!(
            stdout,
            "ATTACH {} AS lake (DATA_PATH {}{});",
            sql_literal(&conninfo),
            sql_literal(&data_path),
            if args.read_only { ", READ_ONLY" } else { "" }
        )?;
        stdout.flush()?;
    }
    tracing::info!(listen = %local, auth = ?method, user = %args.user, roles = args.users.len() + 1, "RockLake listening");

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let metrics_task = match &args.metrics_listen {
        Some(addr) => {
            let l = TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen for metrics on {addr}"))?;
            tracing::info!(listen = %l.local_addr()?, "metrics endpoint: /metrics /healthz /readyz");
            let mut rx = stop_rx.clone();
            Some(tokio::spawn(rocklake::http::serve_http(
                l,
                service.metrics(),
                async move {
                    let _ = rx.wait_for(|stop| *stop).await;
                },
            )))
        }
        None => None,
    };
    server::serve_backend(listener, service.clone(), config, shutdown_signal()).await?;
    let _ = stop_tx.send(true);
    if let Some(t) = metrics_task {
        let _ = t.await;
    }
    drop(stop_rx);
    // All sessions are closed by now: flush and close the store. Every acknowledged commit is
    // durable already (commit journal or WAL), so a close that hangs is cut off rather than
    // left to keep the process from exiting; the next open replays what it did not flush.
    match tokio::time::timeout(STORE_CLOSE_BOUND, service.shutdown()).await {
        Ok(closed) => closed?,
        Err(_) => anyhow::bail!(
            "closing the catalog store did not finish within {} s (it was {}); exiting without it: every acknowledged commit is durable and the next open replays the rest",
            STORE_CLOSE_BOUND.as_secs(),
            service
                .close_phase()
                .map_or("closing a read replica", |p| p.describe()),
        ),
    }
    drop(service);
    tracing::info!("stopped");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conninfo_quoting() {
        assert_eq!(conninfo_value("abc"), "abc");
        assert_eq!(conninfo_value("a b"), "'a b'");
        assert_eq!(conninfo_value("it's\\"), "'it\\'s\\\\'");
        assert_eq!(conninfo_value(""), "''");
        assert_eq!(sql_literal("a'b"), "'a''b'");
    }

    #[test]
    fn catalog_urls() {
        assert_eq!(
            catalog_url("s3://bucket/cat")
                .map(|u| u.scheme().to_owned())
                .ok()
                .as_deref(),
            Some("s3")
        );
        assert!(catalog_url("ftp://x/y").is_err());
        let local = catalog_url("./x").map(|u| u.scheme().to_owned()).ok();
        assert_eq!(local.as_deref(), Some("file"));
    }
}
