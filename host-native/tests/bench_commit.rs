//! `cargo xtask bench commit`: group commit under concurrency. N sessions (1, 4, 16, 64) each
//! run auto-commit INSERTs through the catalog service; printed: commits/s and per-commit
//! p50/p99, next to one bare PUT of the same store measured in the same run. Two stores: the
//! local directory, and moto's S3 server on loopback with 50 ms injected before every PUT
//! (a remote object store's latency; `cargo xtask bench commit` starts moto and sets `AWS_*` and
//! `ROCKLAKE_BENCH_S3_URL`). Never asserts timing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rocklake::service::{CatalogService, ServiceConfig};
use rocklake::store::{resolve_object_store, Faults};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn pct_ms(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[i.clamp(1, sorted.len()) - 1].as_secs_f64() * 1000.0
}

/// p50 of `n` bare 4 KiB PUTs to the store at `url` (with the same injected latency).
async fn bare_put_p50(url: &str, faults: &Faults, n: usize) -> Result<f64> {
    let (store, root) = resolve_object_store(url, Some(faults.clone()))?;
    let mut times = Vec::new();
    for i in 0..n {
        let path = root.clone().join(format!("bare-put-{i}"));
        let t = Instant::now();
        store
            .put_opts(
                &path,
                bytes::Bytes::from(vec![0x5au8; 4096]).into(),
                object_store::PutOptions::default(),
            )
            .await
            .context("bare put")?;
        times.push(t.elapsed());
    }
    times.sort();
    Ok(pct_ms(&times, 50.0))
}

async fn run_backend(name: &str, url: &str, faults: Faults) -> Result<()> {
    let per_session = env_usize("ROCKLAKE_BENCH_COMMITS_PER_SESSION", 20);
    let put = bare_put_p50(url, &faults, 20).await?;
    let mut config = ServiceConfig::new(url);
    config.faults = Some(faults.clone());
    let service = CatalogService::open(&config).await?;
    let sid = service.open_session("bench", "lake");
    let r = service
        .query(sid, "CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)")
        .await;
    if let Some(e) = r.error {
        bail!("create: {e}");
    }
    println!();
    println!("== bench commit: {name} (one bare 4 KiB PUT: p50 {put:.2} ms)");
    println!(
        "   {:>8} {:>9} {:>11} {:>9} {:>9} {:>12}",
        "sessions", "commits", "commits/s", "p50 ms", "p99 ms", "p50 / PUT"
    );
    let mut next_id = 0usize;
    for sessions in [1usize, 4, 16, 64] {
        let started = Instant::now();
        let mut tasks = Vec::new();
        for s in 0..sessions {
            let service: Arc<CatalogService> = service.clone();
            let base = next_id + s * per_session;
            tasks.push(tokio::spawn(async move {
                let sid = service.open_session("bench", "lake");
                let mut lat = Vec::with_capacity(per_session);
                for i in 0..per_session {
                    let t = Instant::now();
                    let r = service
                        .query(sid, &format!("INSERT INTO t VALUES ({}, {i})", base + i))
                        .await;
                    if let Some(e) = r.error {
                        return Err(anyhow::anyhow!("insert: {e}"));
                    }
                    lat.push(t.elapsed());
                }
                service.close_session(sid).await;
                Ok(lat)
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await??);
        }
        let elapsed = started.elapsed();
        next_id += sessions * per_session;
        all.sort();
        let p50 = pct_ms(&all, 50.0);
        println!(
            "   {:>8} {:>9} {:>11.0} {:>9.2} {:>9.2} {:>11.2}x",
            sessions,
            all.len(),
            all.len() as f64 / elapsed.as_secs_f64(),
            p50,
            pct_ms(&all, 99.0),
            p50 / put
        );
    }
    service.shutdown().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run through `cargo xtask bench commit`"]
async fn bench_group_commit() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let local = dir.path().join("catalog").display().to_string();
    run_backend("local directory", &local, Faults::default()).await?;

    // `cargo xtask bench commit` starts moto's S3 server and sets AWS_* for it.
    let s3 = std::env::var("ROCKLAKE_BENCH_S3_URL")
        .context("ROCKLAKE_BENCH_S3_URL is not set: run through `cargo xtask bench commit`")?;
    let faults = Faults {
        put_latency: Duration::from_millis(50),
    };
    run_backend("S3 (moto on loopback) + 50 ms per PUT", &s3, faults).await?;
    println!(
        "   goals: 1 session p50 <= 1.1x one PUT; >= 1000 commits/s at 64 sessions with 50 ms PUTs"
    );
    Ok(())
}
