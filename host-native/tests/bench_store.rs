//! Store benchmarks — numbers, not assertions. Run with `cargo xtask bench store`, i.e.
//! `cargo test --release -p rocklake --test bench_store -- --ignored --nocapture --test-threads 1`.
//!
//! (a) Commit latency of a 6-row auto-commit INSERT through the real commit path
//!     (`Engine::query` → `Store::commit` → `Engine::commit_finished`, as `service.rs` drives it),
//!     interleaved with two bare-disk references measured in the same run on the same directory:
//!     a 4 KiB append + fdatasync, and a new 4 KiB file + fsync + rename + directory fsync (what
//!     object_store's `LocalFileSystem::with_fsync(true)` does for every WAL object).
//! (b) Scan throughput over 1,000,000 rows of a `ducklake_file_column_stats`-shaped table loaded
//!     through the engine (COPY FROM STDIN, 10,000 rows per commit, so keys and values are
//!     real): a raw key-prefix scan of the store's mirror (the floor), `SELECT count(*)`, and
//!     `COPY … TO STDOUT (FORMAT binary)` (how DuckDB's postgres scanner reads), with RSS.
//!
//! Environment: `ROCKLAKE_BENCH_DIR` (parent of the temp directories; default the system temp
//! dir), `ROCKLAKE_BENCH_COMMITS` (default 300), `ROCKLAKE_BENCH_ROWS` (default 1000000).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rocklake::store::{Store, StoreOptions};
use rocklake_core::api::{CommitFailure, KvRead, Output, Reply, SessionId};
use rocklake_core::Engine;

const BLOCK: usize = 4096;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn bench_parent() -> PathBuf {
    std::env::var_os("ROCKLAKE_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
}

/// PostgreSQL-epoch microseconds, from the server's own clock.
fn now_pg() -> i64 {
    use rocklake::service::Clock;
    rocklake::service::SystemClock.now_pg_micros()
}

/// Time spent in the core and in the store for one request.
#[derive(Default, Clone, Copy)]
struct Split {
    core: Duration,
    store: Duration,
    batch_bytes: usize,
}

/// Drives one request to completion exactly as the service does: every commit batch is made
/// durable by the store, then reported back to the engine.
async fn drive(
    engine: &mut Engine,
    store: &Store,
    sid: SessionId,
    mut reply: Reply,
    split: &mut Split,
) -> Result<Reply> {
    let mut outputs = std::mem::take(&mut reply.outputs);
    while let Some(batch) = reply.commit.take() {
        split.batch_bytes += batch.size_bytes();
        let t = Instant::now();
        let outcome = store.commit(&batch).await.map_err(|e| CommitFailure {
            fenced: false,
            transient: false,
            message: e.to_string(),
        });
        split.store += t.elapsed();
        let t = Instant::now();
        reply = engine.commit_finished(&store.reader(), sid, outcome);
        split.core += t.elapsed();
        outputs.append(&mut reply.outputs);
    }
    reply.outputs = outputs;
    if let Some(e) = &reply.error {
        bail!("{e}");
    }
    Ok(reply)
}

async fn query(
    engine: &mut Engine,
    store: &Store,
    sid: SessionId,
    sql: &str,
    split: &mut Split,
) -> Result<Reply> {
    let t = Instant::now();
    let reply = engine.query(&store.reader(), sid, sql, now_pg());
    split.core += t.elapsed();
    drive(engine, store, sid, reply, split)
        .await
        .with_context(|| format!("{sql:.80}"))
}

async fn copy_in(
    engine: &mut Engine,
    store: &Store,
    sid: SessionId,
    sql: &str,
    data: &[u8],
    split: &mut Split,
) -> Result<Reply> {
    let t = Instant::now();
    let reply = engine.query(&store.reader(), sid, sql, now_pg());
    if let Some(e) = reply.error {
        bail!("{sql}: {e}");
    }
    if !matches!(reply.outputs.last(), Some(Output::CopyIn { .. })) {
        bail!("{sql}: expected CopyIn, got {:?}", reply.outputs);
    }
    engine
        .copy_in_data(sid, data)
        .map_err(|e| anyhow::anyhow!("copy data: {e}"))?;
    let reply = engine.copy_in_done(&store.reader(), sid, now_pg());
    split.core += t.elapsed();
    drive(engine, store, sid, reply, split).await
}

/// Nearest-rank percentile of an ascending slice, in milliseconds.
fn pct_ms(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1000.0
}

struct Stats {
    p50: f64,
    p99: f64,
    mean: f64,
}

fn stats(mut v: Vec<Duration>) -> Stats {
    v.sort();
    let mean = if v.is_empty() {
        f64::NAN
    } else {
        v.iter().map(Duration::as_secs_f64).sum::<f64>() * 1000.0 / v.len() as f64
    };
    Stats {
        p50: pct_ms(&v, 0.50),
        p99: pct_ms(&v, 0.99),
        mean,
    }
}

/// `VmRSS` and `VmHWM` of this process in MiB.
fn rss_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
            .unwrap_or(f64::NAN)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// glibc's heap in MiB: (bytes in use, bytes free but kept by the allocator).
fn heap_mib() -> (f64, f64) {
    #[allow(unsafe_code)]
    // SAFETY: mallinfo2 only reads the allocator's counters.
    let info = unsafe { libc::mallinfo2() };
    let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
    (mib(info.uordblks + info.hblkhd), mib(info.fordblks))
}

/// RSS in MiB after glibc returns the free pages it keeps (`malloc_trim`).
fn rss_after_trim_mib() -> f64 {
    #[allow(unsafe_code)]
    // SAFETY: malloc_trim releases free memory; it touches no live allocation.
    unsafe {
        libc::malloc_trim(0)
    };
    rss_mib().0
}

/// Reference 1: a 4 KiB append to an open file, then fdatasync.
fn bare_append(f: &mut File, block: &[u8]) -> Result<Duration> {
    let t = Instant::now();
    f.write_all(block)?;
    f.sync_data()?;
    Ok(t.elapsed())
}

/// Reference 2: a new 4 KiB file, fsync, rename into place, fsync of the directory.
fn bare_new_file(dir: &Path, dirf: &File, i: usize, block: &[u8]) -> Result<Duration> {
    let tmp = dir.join(format!("obj-{i}.tmp"));
    let dst = dir.join(format!("obj-{i}"));
    let t = Instant::now();
    let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    f.write_all(block)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, &dst)?;
    dirf.sync_all()?;
    Ok(t.elapsed())
}

fn six_row_insert(i: usize) -> String {
    let base = i * 6;
    let rows: Vec<String> = (0..6)
        .map(|j| {
            let id = base + j;
            format!(
                "({id}, {i}, {t}, 'data/ducklake-{id:08}.parquet', 'parquet', {rc}, {fs}, 0)",
                t = 1 + j % 3,
                rc = 1000 + id,
                fs = 40_000 + id * 7
            )
        })
        .collect();
    format!(
        "INSERT INTO ducklake_data_file (data_file_id, begin_snapshot, table_id, path, \
         file_format, record_count, file_size_bytes, row_id_start) VALUES {}",
        rows.join(", ")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run through `cargo xtask bench store`"]
async fn bench_commit_latency() -> Result<()> {
    let commits = env_usize("ROCKLAKE_BENCH_COMMITS", 300);
    let parent = bench_parent();
    let dir = tempfile::tempdir_in(&parent).context("tempdir")?;
    let catalog = dir.path().join("catalog");
    let refdir = dir.path().join("reference");
    std::fs::create_dir_all(&refdir)?;
    let dirf = File::open(&refdir)?;
    let mut wal = OpenOptions::new()
        .create(true)
        .append(true)
        .open(refdir.join("wal"))?;
    let block = vec![0x5au8; BLOCK];

    let store = Store::open(
        catalog.to_str().context("utf-8 path")?,
        StoreOptions::default(),
    )
    .await?;
    let mut engine =
        Engine::open(&store.reader()).map_err(|e| anyhow::anyhow!("engine open: {e}"))?;
    let sid = engine.open_session("bench", "lake");
    let mut split = Split::default();
    query(
        &mut engine,
        &store,
        sid,
        "CREATE TABLE ducklake_data_file (data_file_id BIGINT PRIMARY KEY, \
         begin_snapshot BIGINT, end_snapshot BIGINT, table_id BIGINT, path VARCHAR, \
         file_format VARCHAR, record_count BIGINT, file_size_bytes BIGINT, row_id_start BIGINT)",
        &mut split,
    )
    .await?;

    // Warm-up (page cache, allocator, SlateDB's first WAL objects), not measured.
    for i in 0..10 {
        bare_append(&mut wal, &block)?;
        bare_new_file(&refdir, &dirf, 1_000_000 + i, &block)?;
        query(
            &mut engine,
            &store,
            sid,
            &six_row_insert(1_000_000 + i),
            &mut split,
        )
        .await?;
    }

    let (mut append, mut newfile, mut commit, mut core, mut stor) =
        (vec![], vec![], vec![], vec![], vec![]);
    let mut batch_bytes = vec![];
    for i in 0..commits {
        append.push(bare_append(&mut wal, &block)?);
        newfile.push(bare_new_file(&refdir, &dirf, i, &block)?);
        let sql = six_row_insert(i);
        let mut s = Split::default();
        let t = Instant::now();
        let reply = query(&mut engine, &store, sid, &sql, &mut s).await?;
        commit.push(t.elapsed());
        if !matches!(reply.outputs.last(), Some(Output::Command { tag }) if tag == "INSERT 0 6") {
            bail!("unexpected reply {:?}", reply.outputs);
        }
        core.push(s.core);
        stor.push(s.store);
        batch_bytes.push(s.batch_bytes);
    }
    store.close().await?;
    batch_bytes.sort_unstable();

    let (a, n, c, co, st) = (
        stats(append),
        stats(newfile),
        stats(commit),
        stats(core),
        stats(stor),
    );
    println!();
    println!("== bench store (a): commit latency, {commits} auto-commit 6-row INSERTs, interleaved with the references");
    println!(
        "   directory: {} (same filesystem for all three)",
        dir.path().display()
    );
    println!(
        "   commit batch size: median {} bytes",
        batch_bytes.get(batch_bytes.len() / 2).copied().unwrap_or(0)
    );
    println!(
        "   {:<50} {:>9} {:>9} {:>9}",
        "", "p50 ms", "p99 ms", "mean ms"
    );
    let row = |name: &str, s: &Stats| {
        println!(
            "   {:<50} {:>9.3} {:>9.3} {:>9.3}",
            name, s.p50, s.p99, s.mean
        )
    };
    row("RockLake commit (query+store+finished)", &c);
    row("  of which core (engine)", &co);
    row("  of which store (SlateDB write+flush)", &st);
    row("ref: 4 KiB append + fdatasync", &a);
    row("ref: new 4 KiB file + fsync + rename + dir fsync", &n);
    println!(
        "   ratio commit/append+fdatasync:  p50 {:.2}x  p99 {:.2}x   (goal <= 2x)",
        c.p50 / a.p50,
        c.p99 / a.p99
    );
    println!(
        "   ratio commit/new-file+fsyncs:   p50 {:.2}x  p99 {:.2}x",
        c.p50 / n.p50,
        c.p99 / n.p99
    );
    Ok(())
}

const STATS_DDL: &str = "CREATE TABLE ducklake_file_column_stats (data_file_id BIGINT, \
    table_id BIGINT, column_id BIGINT, column_size_bytes BIGINT, value_count BIGINT, \
    null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN, \
    extra_stats VARCHAR)";

/// COPY text rows `from..to` of a plausible column-stats table: 10 columns per data file.
fn stats_rows(from: usize, to: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity((to - from) * 64);
    for r in from..to {
        let file = r / 10;
        let col = r % 10;
        let table = 1 + file % 50;
        let nan = if col == 3 { "f" } else { "\\N" };
        // writeln! into a Vec cannot fail.
        let _ = writeln!(
            out,
            "{file}\t{table}\t{col}\t{size}\t{vc}\t{nc}\t{min}\t{max}\t{nan}\t\\N",
            size = 1000 + (r * 37) % 90_000,
            vc = 10_000 + r % 1000,
            nc = r % 7,
            min = r % 100_000,
            max = 100_000 + r % 100_000,
        );
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run through `cargo xtask bench store`"]
async fn bench_scan_throughput() -> Result<()> {
    let rows = env_usize("ROCKLAKE_BENCH_ROWS", 1_000_000);
    let per_commit = 10_000;
    let parent = bench_parent();
    let dir = tempfile::tempdir_in(&parent).context("tempdir")?;
    let catalog = dir.path().join("catalog");

    let (rss0, _) = rss_mib();
    let store = Store::open(
        catalog.to_str().context("utf-8 path")?,
        StoreOptions::default(),
    )
    .await?;
    let mut engine =
        Engine::open(&store.reader()).map_err(|e| anyhow::anyhow!("engine open: {e}"))?;
    let sid = engine.open_session("bench", "lake");
    let mut split = Split::default();
    query(&mut engine, &store, sid, STATS_DDL, &mut split).await?;

    let mut load = Split::default();
    let t = Instant::now();
    let mut from = 0;
    while from < rows {
        let to = (from + per_commit).min(rows);
        let data = stats_rows(from, to);
        copy_in(
            &mut engine,
            &store,
            sid,
            "COPY ducklake_file_column_stats FROM STDIN",
            &data,
            &mut load,
        )
        .await?;
        from = to;
    }
    let load_s = t.elapsed().as_secs_f64();
    let (rss_loaded, _) = rss_mib();
    let (heap_used, heap_free) = heap_mib();
    let rss_trimmed = rss_after_trim_mib();
    let reader = store.reader();

    // The floor: every row key under the row tag (0x10), straight from the mirror, in pages
    // of 10,000 keys as the engine asks for them.
    let raw = || -> Result<(usize, usize, Duration)> {
        let t = Instant::now();
        let (mut n, mut bytes) = (0usize, 0usize);
        let mut start = vec![0x10u8];
        let end = vec![0x11u8];
        loop {
            let page = reader
                .scan(&start, &end, 10_000)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let Some((last, _)) = page.last() else { break };
            n += page.len();
            bytes += page.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
            start = last.to_vec();
            start.push(0);
        }
        Ok((n, bytes, t.elapsed()))
    };

    let mut raw_runs = vec![];
    let mut count_runs = vec![];
    let mut copy_runs = vec![];
    let (mut raw_n, mut raw_bytes, mut copy_bytes, mut count) = (0, 0, 0, String::new());
    for _ in 0..3 {
        let (n, b, d) = raw()?;
        (raw_n, raw_bytes) = (n, b);
        raw_runs.push(d);

        let t = Instant::now();
        let reply = query(
            &mut engine,
            &store,
            sid,
            "SELECT count(*) FROM ducklake_file_column_stats",
            &mut split,
        )
        .await?;
        count_runs.push(t.elapsed());
        if let Some(Output::Rows { rows, .. }) = reply.outputs.last() {
            count = rows
                .to_vecs()
                .first()
                .and_then(|r| r.first())
                .and_then(|v| v.as_ref())
                .map(|v| String::from_utf8_lossy(v).to_string())
                .unwrap_or_default();
        }

        let t = Instant::now();
        let reply = query(
            &mut engine,
            &store,
            sid,
            "COPY (SELECT * FROM ducklake_file_column_stats) TO STDOUT (FORMAT binary)",
            &mut split,
        )
        .await?;
        copy_runs.push(t.elapsed());
        if let Some(Output::CopyOut { chunks, .. }) = reply.outputs.last() {
            copy_bytes = chunks.byte_len();
        }
    }
    let (rss_scanned, hwm) = rss_mib();
    let keys_total = reader.len();
    store.close().await?;
    if count != rows.to_string() || raw_n != rows {
        bail!("loaded {rows} rows but count(*) says {count:?} and the key scan found {raw_n}");
    }

    let med = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2].as_secs_f64()
    };
    let (raw_s, count_s, copy_s) = (med(raw_runs), med(count_runs), med(copy_runs));
    let mb = |b: usize| b as f64 / (1024.0 * 1024.0);
    println!();
    println!("== bench store (b): scan of {rows} ducklake_file_column_stats rows (median of 3)");
    println!("   directory: {}", dir.path().display());
    println!(
        "   load: {:.1} s ({:.0} rows/s) in {} COPY commits of {per_commit} rows; core {:.1} s, store {:.1} s; {:.1} MiB in batches",
        load_s,
        rows as f64 / load_s,
        rows.div_ceil(per_commit),
        load.core.as_secs_f64(),
        load.store.as_secs_f64(),
        mb(load.batch_bytes)
    );
    println!(
        "   {:<46} {:>9} {:>12} {:>9} {:>10}",
        "", "time ms", "rows/s", "MiB", "MiB/s"
    );
    let line = |name: &str, s: f64, bytes: usize| {
        println!(
            "   {:<46} {:>9.1} {:>12.0} {:>9.1} {:>10.1}",
            name,
            s * 1000.0,
            rows as f64 / s,
            mb(bytes),
            mb(bytes) / s
        )
    };
    line(
        "raw key-prefix scan (mirror, 10k pages) [floor]",
        raw_s,
        raw_bytes,
    );
    line("SELECT count(*) via engine", count_s, raw_bytes);
    line(
        "COPY (SELECT *) TO STDOUT binary via engine",
        copy_s,
        copy_bytes,
    );
    println!(
        "   ratio to floor: count(*) {:.2}x, COPY binary {:.2}x",
        count_s / raw_s,
        copy_s / raw_s
    );
    println!(
        "   RSS MiB: before open {:.1}, after load {:.1}, after scans {:.1}, peak {:.1}; {} keys in the mirror ({:.1} MiB of keys+values)",
        rss0,
        rss_loaded,
        rss_scanned,
        hwm,
        keys_total,
        mb(raw_bytes)
    );
    println!(
        "   heap after load (glibc): {heap_used:.1} MiB in use, {heap_free:.1} MiB free but kept; RSS after malloc_trim {rss_trimmed:.1} MiB"
    );
    Ok(())
}
