//! `rocklake bench`: what an operator measures on their own object store, through the same
//! catalog service the server runs (core, group commit, SlateDB store), next to a reference
//! measured in the same run on the same store: one bare PUT of a small object.
//!
//! The measuring pieces ([`run_sessions`], [`bare_put_latencies`], [`percentile_ms`]) are
//! shared with `cargo xtask bench commit` (`host-native/tests/bench_commit.rs`).
//!
//! A benchmark writes, so it only ever runs on a location that holds nothing: a catalog, or
//! any other object under the location, makes it refuse before anything is written. What it
//! wrote is deleted afterwards unless the operator asks to keep it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutOptions};
use rocklake_core::api::{Output, TxnStatus};

use crate::metrics::{Metrics, OpErrorLabel, OpLabel};
use crate::service::{CatalogService, CoreKind, ServiceConfig, SystemClock};
use crate::store::{catalog_exists_at, resolve_object_store};

/// Size of the reference object: about one small commit's WAL object.
pub const BARE_PUT_BYTES: usize = 4096;

/// Where the reference PUTs go, under the location's root (deleted with the rest).
const BARE_PUT_PREFIX: &str = "rocklake-bench-put";

/// Nearest-rank percentile (`p` in 0..=1) of an ascending slice, in milliseconds; 0 when empty.
pub fn percentile_ms(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1000.0
}

/// Latencies of `count` sequential bare PUTs of a [`BARE_PUT_BYTES`] object, named
/// `<root>/rocklake-bench-put/<first + i>`: one object-store round trip (on a local directory,
/// the file write, its fsync, the rename and the directory fsync), the floor under a commit.
pub async fn bare_put_latencies(
    store: &dyn ObjectStore,
    root: &ObjectPath,
    first: usize,
    count: usize,
) -> anyhow::Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(count);
    for i in first..first + count {
        let path = root.clone().join(BARE_PUT_PREFIX).join(i.to_string());
        let payload = bytes::Bytes::from(vec![0x5au8; BARE_PUT_BYTES]);
        let t = Instant::now();
        store
            .put_opts(&path, payload.into(), PutOptions::default())
            .await
            .map_err(|e| anyhow::anyhow!("bare PUT of {path}: {e}"))?;
        times.push(t.elapsed());
    }
    Ok(times)
}

/// PUTs per second the store sustains with `concurrency` bare 4 KiB PUTs in flight at all
/// times, `per_task` each: the store's own ceiling, which bounds commits per second once every
/// commit group is one PUT.
pub async fn bare_put_throughput(
    store: &dyn ObjectStore,
    root: &ObjectPath,
    concurrency: usize,
    per_task: usize,
) -> anyhow::Result<f64> {
    let t = Instant::now();
    let tasks = (0..concurrency).map(|task| async move {
        for i in 0..per_task {
            let path = root
                .clone()
                .join(BARE_PUT_PREFIX)
                .join(format!("c{task}-{i}"));
            let payload = bytes::Bytes::from(vec![0x5au8; BARE_PUT_BYTES]);
            store
                .put_opts(&path, payload.into(), PutOptions::default())
                .await
                .map_err(|e| anyhow::anyhow!("bare PUT of {path}: {e}"))?;
        }
        anyhow::Ok(())
    });
    futures::future::try_join_all(tasks).await?;
    Ok((concurrency * per_task) as f64 / t.elapsed().as_secs_f64())
}

/// What [`run_sessions`] measured.
#[derive(Debug, Clone)]
pub struct SessionsRun {
    /// Latency of every query string (each one committed transaction), ascending.
    pub latencies: Vec<Duration>,
    /// Wall time from the first session's start to the last one's end.
    pub elapsed: Duration,
}

impl SessionsRun {
    pub fn commits(&self) -> usize {
        self.latencies.len()
    }
    pub fn commits_per_s(&self) -> f64 {
        self.commits() as f64 / self.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
    }
    pub fn p50_ms(&self) -> f64 {
        percentile_ms(&self.latencies, 0.50)
    }
    pub fn p99_ms(&self) -> f64 {
        percentile_ms(&self.latencies, 0.99)
    }
    pub fn max_ms(&self) -> f64 {
        percentile_ms(&self.latencies, 1.0)
    }
}

/// Runs `sessions` concurrent sessions on `service`, each sending `per_session` query strings
/// `sql(session, i)` one after the other, and times each one. Every string must be one
/// transaction that commits (an auto-commit statement or `BEGIN; …; COMMIT`); an error, or a
/// transaction left open, fails the run. `progress` is called after every commit.
pub async fn run_sessions<F, P>(
    service: &Arc<CatalogService>,
    sessions: usize,
    per_session: usize,
    sql: F,
    progress: P,
) -> anyhow::Result<SessionsRun>
where
    F: Fn(usize, usize) -> String + Send + Sync + 'static,
    P: Fn() + Send + Sync + 'static,
{
    let sql = Arc::new(sql);
    let progress = Arc::new(progress);
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(sessions);
    for s in 0..sessions {
        let service = service.clone();
        let sql = sql.clone();
        let progress = progress.clone();
        tasks.push(tokio::spawn(async move {
            let sid = service.open_session("rocklake-bench", "lake");
            let mut lat = Vec::with_capacity(per_session);
            let mut failed = None;
            for i in 0..per_session {
                let text = sql(s, i);
                let t = Instant::now();
                let reply = service.query(sid, &text).await;
                let took = t.elapsed();
                if let Some(e) = reply.error {
                    failed = Some(anyhow::anyhow!(
                        "session {s}, commit {i}: {} {}",
                        e.code,
                        e.message
                    ));
                    break;
                }
                if reply.status != TxnStatus::Idle {
                    failed = Some(anyhow::anyhow!(
                        "session {s}, commit {i}: the transaction did not end ({:?})",
                        reply.status
                    ));
                    break;
                }
                lat.push(took);
                progress();
            }
            // Closing rolls back whatever a failed run left open.
            service.close_session(sid).await;
            match failed {
                Some(e) => Err(e),
                None => Ok(lat),
            }
        }));
    }
    let mut latencies = Vec::with_capacity(sessions * per_session);
    let mut first_error = None;
    // Wait for every session even after a failure, so none is still running when the caller
    // shuts the service down.
    for t in tasks {
        match t.await {
            Ok(Ok(lat)) => latencies.extend(lat),
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(e) => {
                first_error.get_or_insert(anyhow::anyhow!("benchmark session panicked: {e}"));
            }
        }
    }
    let elapsed = started.elapsed();
    if let Some(e) = first_error {
        return Err(e);
    }
    latencies.sort();
    Ok(SessionsRun { latencies, elapsed })
}

/// The table every benchmark commit adds a data file to (DuckLake table id 1, created by
/// snapshot 1 in [`setup_ducklake`]).
const BENCH_TABLE_ID: u64 = 1;

/// Rows per benchmark data file (only recorded in the catalog; no file is written).
const ROWS_PER_FILE: u64 = 1000;

/// One DuckLake-shaped commit: the rows DuckDB's ducklake extension writes for an INSERT that
/// adds one data file — the `ducklake_snapshot` row, its `ducklake_snapshot_changes` row, the
/// `ducklake_data_file` row and two columns' `ducklake_file_column_stats` — in one REPEATABLE
/// READ transaction, sent as one query string. Snapshot `snapshot_id` (>= 2) adds data file
/// `snapshot_id - 2`. Ids are handed out per session in advance: real concurrent DuckLake
/// writers race for the next snapshot id and retry on 23505, which would measure DuckLake's
/// conflict handling instead of the store.
pub fn ducklake_commit_sql(snapshot_id: u64) -> String {
    let snap = snapshot_id;
    let file = snap.saturating_sub(2);
    let row_start = file * ROWS_PER_FILE;
    let (lo, hi) = (row_start, row_start + ROWS_PER_FILE - 1);
    let t = BENCH_TABLE_ID;
    format!(
        "{begin};\
         INSERT INTO \"public\".ducklake_snapshot VALUES ({snap}, NOW(), 1, 2, {next_file});\
         INSERT INTO \"public\".ducklake_snapshot_changes VALUES ({snap}, 'inserted_into_table:{t}', NULL, NULL, NULL);\
         INSERT INTO \"public\".ducklake_data_file VALUES ({file}, {t}, {snap}, NULL, NULL, 'ducklake-bench-{file:012}.parquet', true, 'parquet', {ROWS_PER_FILE}, 41234, 512, {row_start}, NULL, NULL, NULL, NULL);\
         INSERT INTO \"public\".ducklake_file_column_stats VALUES ({file}, {t}, 1, 8012, {ROWS_PER_FILE}, 0, '{lo}', '{hi}', NULL, NULL), ({file}, {t}, 2, 30411, {ROWS_PER_FILE}, 7, 'aardvark', 'zebra', NULL, NULL);\
         COMMIT",
        begin = rocklake_core::writer::BEGIN_SQL,
        next_file = file + 1,
    )
}

/// A random UUID (v4) for the catalog's rows.
fn uuid_v4() -> anyhow::Result<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| anyhow::anyhow!("no OS randomness: {e}"))?;
    b[6] = 0x40 | (b[6] & 0x0f);
    b[8] = 0x80 | (b[8] & 0x3f);
    Ok(rocklake_core::types::fmt_uuid(&b))
}

/// Initialises an empty catalog the way DuckDB's first ATTACH does (snapshot 0, schema `main`),
/// then creates the benchmark's table `main.bench (id BIGINT, name VARCHAR)` as snapshot 1, so
/// the benchmark's commits extend a valid DuckLake catalog.
pub async fn setup_ducklake(service: &CatalogService, data_path: &str) -> anyhow::Result<()> {
    let created_by = format!("rocklake bench {}", env!("CARGO_PKG_VERSION"));
    let mut init = vec![rocklake_core::writer::BEGIN_SQL.to_string()];
    init.extend(rocklake_core::writer::init_statements(
        data_path,
        &created_by,
        &uuid_v4()?,
    ));
    init.push("COMMIT".into());
    let t = BENCH_TABLE_ID;
    let table = [
        rocklake_core::writer::BEGIN_SQL.to_string(),
        "INSERT INTO \"public\".ducklake_snapshot VALUES (1, NOW(), 1, 2, 0)".into(),
        format!(
            "INSERT INTO \"public\".ducklake_table VALUES ({t}, '{}', 1, NULL, 0, 'bench', 'bench/', true)",
            uuid_v4()?
        ),
        format!(
            "INSERT INTO \"public\".ducklake_column VALUES \
             (1, 1, NULL, {t}, 1, 'id', 'int64', NULL, 'NULL', true, NULL, 'literal', 'duckdb'), \
             (2, 1, NULL, {t}, 2, 'name', 'varchar', NULL, 'NULL', true, NULL, 'literal', 'duckdb')"
        ),
        format!("INSERT INTO \"public\".ducklake_schema_versions VALUES (1, 1, {t})"),
        "INSERT INTO \"public\".ducklake_snapshot_changes VALUES (1, 'created_table:\"main\".\"bench\"', NULL, NULL, NULL)".into(),
        "COMMIT".into(),
    ];
    let sid = service.open_session("rocklake-bench", "lake");
    let mut result = Ok(());
    for script in [init.join(";"), table.join(";")] {
        let reply = service.query(sid, &script).await;
        let committed = reply
            .outputs
            .iter()
            .any(|o| matches!(o, Output::Command { tag } if tag == "COMMIT"));
        if let Some(e) = reply.error {
            result = Err(anyhow::anyhow!(
                "initialising the benchmark catalog: {} {}",
                e.code,
                e.message
            ));
            break;
        }
        if !committed {
            result = Err(anyhow::anyhow!(
                "initialising the benchmark catalog: the transaction did not commit"
            ));
            break;
        }
    }
    service.close_session(sid).await;
    result
}

/// How to run `rocklake bench commit`.
#[derive(Debug, Clone)]
pub struct CommitBenchOptions {
    /// Where to create the benchmark catalog (a path or URL); `None`: a temporary directory.
    pub catalog: Option<String>,
    pub sessions: usize,
    pub commits_per_session: usize,
    /// Reference PUTs: half before the commits, half after.
    pub puts: usize,
    pub core: CoreKind,
    /// Leave the benchmark catalog in place (default: delete what the run wrote).
    pub keep: bool,
    /// Commit through the commit journal (the server's default) or through one SlateDB WAL
    /// upload per commit group.
    pub commit_journal: bool,
}

/// What `rocklake bench commit` measured (`--json` prints it as is).
#[derive(Debug, Clone, serde::Serialize)]
pub struct CommitBenchReport {
    pub catalog: String,
    /// The catalog was a temporary directory.
    pub temporary: bool,
    /// The catalog was left in place.
    pub kept: bool,
    pub core: String,
    pub sessions: usize,
    pub commits_per_session: usize,
    pub commits: usize,
    pub elapsed_s: f64,
    pub commits_per_s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub puts: usize,
    pub put_bytes: usize,
    pub put_p50_ms: f64,
    pub put_p99_ms: f64,
    /// Commit p50 over bare-PUT p50: what the commit path adds to one object-store write.
    pub p50_over_put: f64,
    /// Successful object-store PUTs (WAL, L0 flushes, manifests) per commit during the run:
    /// below 1 when concurrent commits share WAL uploads (group commit).
    pub store_puts_per_commit: f64,
    /// Mean size of a commit's batch (keys and rows), in bytes.
    pub batch_bytes_per_commit: f64,
    /// Commits went through the commit journal: on a local directory object-store PUTs are
    /// then SlateDB's background WAL and L0 writes; on an object store one journal object per
    /// group plus those.
    pub commit_journal: bool,
}

/// Why a benchmark did not run; the CLI maps each to an exit status.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The location is not empty (a catalog or other objects): nothing was written. Exit 1.
    #[error("{0}")]
    Refused(String),
    /// The store failed or the benchmark could not complete. Exit 3.
    #[error("{0:#}")]
    Failed(anyhow::Error),
}

/// Refuses any location that already holds something, so a benchmark can never write into a
/// production catalog or next to other data (and deleting what it wrote afterwards deletes
/// nothing else).
async fn ensure_empty(url: &str) -> Result<(), BenchError> {
    let exists = catalog_exists_at(url)
        .await
        .map_err(|e| BenchError::Failed(e.into()))?;
    if exists {
        return Err(BenchError::Refused(format!(
            "refusing to benchmark on {url}: it already holds a catalog. `rocklake bench` creates \
             a fresh catalog and writes to it; point --catalog at an empty location, or leave it \
             out to use a temporary directory"
        )));
    }
    let (store, root) =
        resolve_object_store(url, None).map_err(|e| BenchError::Failed(e.into()))?;
    let first = list_under(store.as_ref(), &root).next().await;
    match first {
        None => Ok(()),
        Some(Ok(meta)) => Err(BenchError::Refused(format!(
            "refusing to benchmark on {url}: it is not empty (holds {}). Point --catalog at an \
             empty location, or leave it out to use a temporary directory",
            meta.location
        ))),
        Some(Err(e)) => Err(BenchError::Failed(anyhow::anyhow!(
            "cannot list {url}: {e}"
        ))),
    }
}

fn list_under(
    store: &dyn ObjectStore,
    root: &ObjectPath,
) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>> {
    // An empty root is the whole store (a local directory): list without a prefix.
    let prefix = (!root.as_ref().is_empty()).then_some(root);
    store.list(prefix)
}

/// Deletes every object under the location (which [`ensure_empty`] found empty: all of it is
/// the benchmark's), then the empty directories a local location keeps.
async fn remove_written(url: &str) -> anyhow::Result<()> {
    let (store, root) = resolve_object_store(url, None)?;
    let locations = list_under(store.as_ref(), &root)
        .map_ok(|m| m.location)
        .boxed();
    let deleted: Vec<_> = store.delete_stream(locations).collect().await;
    if let Some(Err(e)) = deleted.into_iter().find(Result::is_err) {
        anyhow::bail!("deleting the benchmark's objects under {url}: {e}");
    }
    if let Some(dir) = local_dir(url) {
        remove_empty_dirs(&dir, false);
    }
    Ok(())
}

fn local_dir(url: &str) -> Option<std::path::PathBuf> {
    if !url.contains("://") {
        return Some(url.into());
    }
    let parsed = url::Url::parse(url).ok()?;
    (parsed.scheme() == "file")
        .then(|| parsed.to_file_path().ok())
        .flatten()
}

/// Removes the empty directories under `dir` (and `dir` itself when `itself`), bottom-up.
/// Non-empty ones stay: only what the benchmark emptied goes.
fn remove_empty_dirs(dir: &std::path::Path, itself: bool) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove_empty_dirs(&entry.path(), true);
            }
        }
    }
    if itself {
        // Fails (and is meant to) when something is left inside.
        let _ = std::fs::remove_dir(dir);
    }
}

/// The location a benchmark runs on: the operator's (found empty) or a temporary directory.
struct Fresh {
    url: String,
    temp: Option<tempfile::TempDir>,
}

impl Fresh {
    /// `catalog` when it holds nothing ([`ensure_empty`]), else a new temporary directory.
    async fn claim(catalog: Option<&str>) -> Result<Fresh, BenchError> {
        let fresh = match catalog {
            Some(url) => Fresh {
                url: url.to_string(),
                temp: None,
            },
            None => {
                let dir = tempfile::Builder::new()
                    .prefix("rocklake-bench-")
                    .tempdir()
                    .map_err(|e| BenchError::Failed(anyhow::anyhow!("temporary directory: {e}")))?;
                Fresh {
                    url: dir.path().join("catalog").display().to_string(),
                    temp: Some(dir),
                }
            }
        };
        ensure_empty(&fresh.url).await?;
        Ok(fresh)
    }

    /// Deletes what the benchmark wrote unless `keep`, even after a failed run (everything
    /// under the location is the benchmark's). Returns the location and the cleanup's outcome.
    async fn release(self, keep: bool) -> (String, anyhow::Result<()>) {
        let cleaned = match (&self.temp, keep) {
            (None, false) => remove_written(&self.url).await,
            // A temporary directory goes with its TempDir below.
            _ => Ok(()),
        };
        if let (Some(dir), true) = (self.temp, keep) {
            let _ = dir.keep();
        }
        (self.url, cleaned)
    }
}

/// Successful PUTs counted by the store's metrics: SlateDB meets some refusals as part of
/// its protocol (conditional PUTs, a PUT retried without attributes on a local directory),
/// and those wrote nothing.
fn successful_puts(m: &Metrics) -> u64 {
    let requests = m
        .store_requests
        .get_or_create(&OpLabel { op: "put".into() })
        .get();
    let failed: u64 = [
        "not_found",
        "already_exists",
        "precondition",
        "not_modified",
        "not_implemented",
        "other",
    ]
    .iter()
    .map(|kind| {
        m.store_errors
            .get_or_create(&OpErrorLabel {
                op: "put".into(),
                kind: (*kind).into(),
            })
            .get()
    })
    .sum();
    requests.saturating_sub(failed)
}

/// `rocklake bench commit`: creates a fresh catalog at `opts.catalog` (refused unless the
/// location is empty), initialises it as DuckDB would, runs `opts.sessions` concurrent
/// sessions of DuckLake-shaped commits ([`ducklake_commit_sql`]) through the catalog service
/// and, around them, bare PUTs to the same store. `progress(done, total)` after every commit.
pub async fn commit_bench<P>(
    opts: &CommitBenchOptions,
    progress: P,
) -> Result<CommitBenchReport, BenchError>
where
    P: Fn(u64, u64) + Send + Sync + 'static,
{
    let fresh = Fresh::claim(opts.catalog.as_deref()).await?;
    let measured = measure(&fresh.url, opts, progress).await;
    let (url, cleaned) = fresh.release(opts.keep).await;
    let mut report = measured.map_err(BenchError::Failed)?;
    cleaned.map_err(BenchError::Failed)?;
    report.catalog = url;
    report.temporary = opts.catalog.is_none();
    report.kept = opts.keep;
    Ok(report)
}

async fn measure<P>(
    url: &str,
    opts: &CommitBenchOptions,
    progress: P,
) -> anyhow::Result<CommitBenchReport>
where
    P: Fn(u64, u64) + Send + Sync + 'static,
{
    let (store, root) = resolve_object_store(url, None)?;
    let mut config = ServiceConfig::new(url);
    config.commit_journal = opts.commit_journal;
    let service =
        CatalogService::open_with_core(&config, opts.core.clone(), Box::new(SystemClock)).await?;
    let run = async {
        setup_ducklake(&service, &format!("{}.files/", url.trim_end_matches('/'))).await?;
        let before = opts.puts / 2;
        let mut puts = bare_put_latencies(store.as_ref(), &root, 0, before).await?;
        let m = service.metrics();
        let (commits0, bytes0, puts0) =
            (m.commits.get(), m.commit_bytes.get(), successful_puts(&m));
        let per = opts.commits_per_session;
        let total = (opts.sessions * per) as u64;
        let done = Arc::new(AtomicU64::new(0));
        let run = run_sessions(
            &service,
            opts.sessions,
            per,
            // Snapshots 0 and 1 are the setup's; session s owns the next `per` ids after s's.
            move |s, i| ducklake_commit_sql(2 + (s * per + i) as u64),
            move || progress(done.fetch_add(1, Ordering::Relaxed) + 1, total),
        )
        .await?;
        let commits = m.commits.get().saturating_sub(commits0).max(1);
        let batch_bytes = m.commit_bytes.get().saturating_sub(bytes0);
        let store_puts = successful_puts(&m).saturating_sub(puts0);
        puts.extend(bare_put_latencies(store.as_ref(), &root, before, opts.puts - before).await?);
        puts.sort();
        let put_p50 = percentile_ms(&puts, 0.50);
        Ok::<_, anyhow::Error>(CommitBenchReport {
            catalog: String::new(),
            temporary: false,
            kept: false,
            core: core_name(&opts.core),
            sessions: opts.sessions,
            commits_per_session: per,
            commits: run.commits(),
            elapsed_s: run.elapsed.as_secs_f64(),
            commits_per_s: run.commits_per_s(),
            p50_ms: run.p50_ms(),
            p99_ms: run.p99_ms(),
            max_ms: run.max_ms(),
            puts: puts.len(),
            put_bytes: BARE_PUT_BYTES,
            put_p50_ms: put_p50,
            put_p99_ms: percentile_ms(&puts, 0.99),
            p50_over_put: if put_p50 > 0.0 {
                run.p50_ms() / put_p50
            } else {
                0.0
            },
            store_puts_per_commit: store_puts as f64 / commits as f64,
            batch_bytes_per_commit: batch_bytes as f64 / commits as f64,
            commit_journal: opts.commit_journal,
        })
    }
    .await;
    // Close the store in every case: SlateDB's background tasks run until then.
    let closed = service.shutdown().await;
    let report = run?;
    closed?;
    Ok(report)
}

/// How to run `rocklake bench scan`.
#[derive(Debug, Clone)]
pub struct ScanBenchOptions {
    /// Where to create the benchmark catalog (a path or URL); `None`: a temporary directory.
    pub catalog: Option<String>,
    /// Rows of `ducklake_file_column_stats` to load and scan.
    pub rows: usize,
    pub core: CoreKind,
    pub keep: bool,
}

/// What `rocklake bench scan` measured (`--json` prints it as is).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScanBenchReport {
    pub catalog: String,
    pub temporary: bool,
    pub kept: bool,
    pub core: String,
    pub rows: usize,
    /// Loading the rows: multi-row INSERTs of [`SCAN_ROWS_PER_COMMIT`] rows, one commit each.
    pub load_s: f64,
    pub load_rows_per_s: f64,
    /// `SELECT count(*)`: a scan of the table's key prefix in the core (median of 3).
    pub count_ms: f64,
    pub count_rows_per_s: f64,
    /// `SELECT *`: the same scan with every row decoded and returned (median of 3).
    pub select_ms: f64,
    pub select_rows_per_s: f64,
    /// Opening the catalog's store again (SlateDB open, writer epoch claim, every key read
    /// into memory): the storage part of a server restart with this many rows.
    pub reopen_ms: f64,
}

/// Rows per commit while `rocklake bench scan` loads its table.
pub const SCAN_ROWS_PER_COMMIT: usize = 5000;

/// Phases of `rocklake bench scan`, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanPhase {
    /// Rows loaded so far, of the total.
    Load {
        done: u64,
        total: u64,
    },
    Scan,
    Reopen,
}

/// `ducklake_file_column_stats` rows `first..first + count` (ten columns, as DuckLake writes
/// them: one row per data file and column).
fn column_stats_insert(first: usize, count: usize) -> String {
    let mut sql = String::from("INSERT INTO \"public\".ducklake_file_column_stats VALUES ");
    for r in first..first + count {
        let (file, column) = (r / 8, r % 8 + 1);
        if r > first {
            sql.push(',');
        }
        sql.push_str(&format!(
            "({file}, 1, {column}, {size}, 1000, {nulls}, '{lo}', '{hi}', NULL, NULL)",
            size = 4000 + r % 997,
            nulls = r % 7,
            lo = r * 3,
            hi = r * 3 + 999,
        ));
    }
    sql
}

/// Runs `sql`, timing it, and returns its rows.
async fn timed_rows(
    service: &CatalogService,
    sid: rocklake_core::api::SessionId,
    sql: &str,
) -> anyhow::Result<(Duration, Vec<Vec<Option<Vec<u8>>>>)> {
    let t = Instant::now();
    let reply = service.query(sid, sql).await;
    let took = t.elapsed();
    if let Some(e) = reply.error {
        anyhow::bail!("{sql}: {} {}", e.code, e.message);
    }
    match reply.outputs.into_iter().last() {
        Some(Output::Rows { rows, .. }) => Ok((took, rows.to_vecs())),
        other => anyhow::bail!("{sql}: expected rows, got {other:?}"),
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn per_s(n: usize, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64().max(f64::MIN_POSITIVE)
}

/// `rocklake bench scan`: creates a fresh catalog (refused unless the location is empty),
/// loads `opts.rows` rows of `ducklake_file_column_stats` through the catalog service, times
/// scans of them, then times opening the store again.
pub async fn scan_bench<P>(
    opts: &ScanBenchOptions,
    progress: P,
) -> Result<ScanBenchReport, BenchError>
where
    P: Fn(ScanPhase),
{
    let fresh = Fresh::claim(opts.catalog.as_deref()).await?;
    let measured = measure_scan(&fresh.url, opts, progress).await;
    let (url, cleaned) = fresh.release(opts.keep).await;
    let mut report = measured.map_err(BenchError::Failed)?;
    cleaned.map_err(BenchError::Failed)?;
    report.catalog = url;
    report.temporary = opts.catalog.is_none();
    report.kept = opts.keep;
    Ok(report)
}

async fn measure_scan<P>(
    url: &str,
    opts: &ScanBenchOptions,
    progress: P,
) -> anyhow::Result<ScanBenchReport>
where
    P: Fn(ScanPhase),
{
    let config = ServiceConfig::new(url);
    let service =
        CatalogService::open_with_core(&config, opts.core.clone(), Box::new(SystemClock)).await?;
    let sid = service.open_session("rocklake-bench", "lake");
    let run = async {
        setup_ducklake(&service, &format!("{}.files/", url.trim_end_matches('/'))).await?;
        let total = opts.rows as u64;
        progress(ScanPhase::Load { done: 0, total });
        let started = Instant::now();
        let mut done = 0;
        while done < opts.rows {
            let n = SCAN_ROWS_PER_COMMIT.min(opts.rows - done);
            let reply = service.query(sid, &column_stats_insert(done, n)).await;
            if let Some(e) = reply.error {
                anyhow::bail!("loading rows: {} {}", e.code, e.message);
            }
            done += n;
            progress(ScanPhase::Load {
                done: done as u64,
                total,
            });
        }
        let load = started.elapsed();
        progress(ScanPhase::Scan);
        let (mut counts, mut selects) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let (t, rows) = timed_rows(
                &service,
                sid,
                "SELECT count(*) FROM \"public\".ducklake_file_column_stats",
            )
            .await?;
            let counted = rows
                .first()
                .and_then(|r| r.first())
                .and_then(|c| c.as_deref())
                .map(|b| String::from_utf8_lossy(b).into_owned());
            if counted.as_deref() != Some(opts.rows.to_string().as_str()) {
                anyhow::bail!("count(*) answered {counted:?}, expected {}", opts.rows);
            }
            counts.push(t);
            let (t, rows) = timed_rows(
                &service,
                sid,
                "SELECT * FROM \"public\".ducklake_file_column_stats",
            )
            .await?;
            if rows.len() != opts.rows {
                anyhow::bail!(
                    "SELECT * returned {} rows, expected {}",
                    rows.len(),
                    opts.rows
                );
            }
            selects.push(t);
        }
        Ok::<_, anyhow::Error>((load, median(counts), median(selects)))
    }
    .await;
    service.close_session(sid).await;
    let closed = service.shutdown().await;
    drop(service);
    let (load, count, select) = run?;
    closed?;

    progress(ScanPhase::Reopen);
    let t = Instant::now();
    let store = crate::store::Store::open(
        url,
        crate::store::StoreOptions::default().create_if_missing(false),
    )
    .await?;
    let reopen = t.elapsed();
    store.close().await?;

    Ok(ScanBenchReport {
        catalog: String::new(),
        temporary: false,
        kept: false,
        core: core_name(&opts.core),
        rows: opts.rows,
        load_s: load.as_secs_f64(),
        load_rows_per_s: per_s(opts.rows, load),
        count_ms: count.as_secs_f64() * 1000.0,
        count_rows_per_s: per_s(opts.rows, count),
        select_ms: select.as_secs_f64() * 1000.0,
        select_rows_per_s: per_s(opts.rows, select),
        reopen_ms: reopen.as_secs_f64() * 1000.0,
    })
}

fn core_name(core: &CoreKind) -> String {
    match core {
        CoreKind::Native => "native".into(),
        CoreKind::Wasm(p) => format!("wasm ({})", p.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile_ms(&v, 0.50), 50.0);
        assert_eq!(percentile_ms(&v, 0.99), 99.0);
        assert_eq!(percentile_ms(&v, 1.0), 100.0);
        assert_eq!(percentile_ms(&v[..1], 0.99), 1.0);
        assert_eq!(percentile_ms(&[], 0.5), 0.0);
    }

    #[test]
    fn column_stats_rows() {
        let sql = column_stats_insert(8, 3);
        assert_eq!(
            sql.matches("), (").count() + sql.matches("),(").count(),
            2,
            "{sql}"
        );
        assert!(sql.contains("VALUES (1, 1, 1, "), "{sql}");
    }

    #[test]
    fn commit_ids_do_not_collide() {
        let a = ducklake_commit_sql(2);
        assert!(a.contains("ducklake_snapshot VALUES (2,"), "{a}");
        assert!(a.contains("ducklake_data_file VALUES (0, 1, 2,"), "{a}");
        assert!(a.ends_with("COMMIT"), "{a}");
        let b = ducklake_commit_sql(3);
        assert!(b.contains("ducklake_data_file VALUES (1, 1, 3,"), "{b}");
    }
}
