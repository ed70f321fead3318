//! `cargo xtask bench commit`: group commit under concurrency. N sessions (1, 4, 16, 64) each
//! run auto-commit INSERTs through the catalog service; printed: commits/s and per-commit
//! p50/p99, next to one bare PUT of the same store measured in the same run. Two stores: the
//! local directory, S3 servers on loopback with 50 ms injected before every PUT (a remote
//! object store's latency; `cargo xtask bench commit` starts moto, then s3s-fs, and sets
//! `AWS_*`, `ROCKLAKE_BENCH_S3_URL`, `ROCKLAKE_BENCH_S3_SERVER` and `ROCKLAKE_BENCH_STORES`),
//! and the in-memory object store with the same 50 ms (no server ceiling). Each also prints
//! the store's own PUT/s with 64 PUTs in flight. Never asserts timing.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use rocklake::bench::{bare_put_latencies, bare_put_throughput, percentile_ms, run_sessions};
use rocklake::service::{CatalogService, ServiceConfig};
use rocklake::store::{resolve_object_store, Faults};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn run_backend(name: &str, url: &str, faults: Faults, journal_uploads: usize) -> Result<()> {
    let per_session = env_usize("ROCKLAKE_BENCH_COMMITS_PER_SESSION", 20);
    // The same injected latency as the catalog's store.
    let (store, root) = resolve_object_store(url, Some(faults.clone()))?;
    let mut puts = bare_put_latencies(store.as_ref(), &root, 0, 20).await?;
    puts.sort();
    let put = percentile_ms(&puts, 0.50);
    let ceiling = bare_put_throughput(store.as_ref(), &root, 64, 10).await?;
    let mut config = ServiceConfig::new(url);
    config.faults = Some(faults.clone());
    config.journal_uploads = journal_uploads;
    let service = CatalogService::open(&config).await?;
    let sid = service.open_session("bench", "lake");
    let r = service
        .query(sid, "CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)")
        .await;
    if let Some(e) = r.error {
        bail!("create: {e}");
    }
    println!();
    println!(
        "== bench commit: {name}, journal_uploads = {journal_uploads} (one bare 4 KiB PUT: \
         p50 {put:.2} ms; 64 at a time: {ceiling:.0} PUT/s)"
    );
    println!(
        "   {:>8} {:>9} {:>11} {:>9} {:>9} {:>12}",
        "sessions", "commits", "commits/s", "p50 ms", "p99 ms", "p50 / PUT"
    );
    let mut next_id = 0usize;
    for sessions in [1usize, 4, 16, 64] {
        let base = next_id;
        let run = run_sessions(
            &service,
            sessions,
            per_session,
            move |s, i| format!("INSERT INTO t VALUES ({}, {i})", base + s * per_session + i),
            || {},
        )
        .await?;
        next_id += sessions * per_session;
        println!(
            "   {:>8} {:>9} {:>11.0} {:>9.2} {:>9.2} {:>11.2}x",
            sessions,
            run.commits(),
            run.commits_per_s(),
            run.p50_ms(),
            run.p99_ms(),
            run.p50_ms() / put
        );
    }
    service.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run through `cargo xtask bench commit`"]
async fn bench_group_commit() -> Result<()> {
    // `cargo xtask bench commit` runs this twice: with moto's S3 server (all stores), then
    // with s3s-fs's (ROCKLAKE_BENCH_STORES=s3), setting AWS_* for each server.
    let stores =
        std::env::var("ROCKLAKE_BENCH_STORES").unwrap_or_else(|_| "local,s3,memory".into());
    let wants = |store: &str| stores.split(',').any(|s| s.trim() == store);
    let uploads = rocklake::store::DEFAULT_JOURNAL_UPLOADS;
    let faults = Faults {
        put_latency: Duration::from_millis(50),
        ..Faults::default()
    };
    let dir = tempfile::tempdir()?;
    if wants("local") {
        let local = dir.path().join("catalog").display().to_string();
        run_backend("local directory", &local, Faults::default(), uploads).await?;
    }
    if wants("s3") {
        let s3 = std::env::var("ROCKLAKE_BENCH_S3_URL")
            .context("ROCKLAKE_BENCH_S3_URL is not set: run through `cargo xtask bench commit`")?;
        let server = std::env::var("ROCKLAKE_BENCH_S3_SERVER").unwrap_or_else(|_| "moto".into());
        let name = format!("S3 ({server} on loopback) + 50 ms per PUT");
        run_backend(&name, &s3, faults.clone(), uploads).await?;
        // A server with a low ceiling of its own (moto) does better with fewer uploads at
        // once, which make larger groups.
        let s3_again = format!("{}-uploads-8", s3.trim_end_matches('/'));
        run_backend(&name, &s3_again, faults.clone(), 8).await?;
    }
    if wants("memory") {
        // The same latency without a server's own ceiling: what RockLake's commit path
        // reaches against a store that scales, as S3 does.
        run_backend(
            "in-memory object store + 50 ms per PUT",
            "memory://bench-commit/catalog",
            faults,
            uploads,
        )
        .await?;
    }
    println!(
        "   goals: 1 session p50 <= 1.1x one PUT; >= 1000 commits/s at 64 sessions with 50 ms PUTs"
    );
    Ok(())
}
