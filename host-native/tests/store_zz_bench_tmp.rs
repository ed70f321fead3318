//! THROWAWAY latency measurement (not to be committed).
use std::io::Write;
use std::time::{Duration, Instant};

use rocklake::store::{Store, StoreOptions};
use rocklake_core::api::{CommitBatch, CommitSeq};

fn stats(name: &str, mut v: Vec<Duration>) {
    v.sort();
    let p = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{name:40} n={} median={:>8.3?} p90={:>8.3?} p99={:>8.3?} max={:>8.3?}",
        v.len(), p(0.5), p(0.9), p(0.99), p(1.0)
    );
}

const N: usize = 400;

fn bare(dir: &std::path::Path) {
    let buf = vec![7u8; 4096];
    // (a) append 4 KiB to an open file + fsync
    let mut f = std::fs::File::create(dir.join("bare.log")).unwrap();
    let mut v = Vec::new();
    for _ in 0..N {
        let t = Instant::now();
        f.write_all(&buf).unwrap();
        f.sync_all().unwrap();
        v.push(t.elapsed());
    }
    stats("bare append 4KiB + fsync", v);
    let mut v = Vec::new();
    for _ in 0..N {
        let t = Instant::now();
        f.write_all(&buf).unwrap();
        f.sync_data().unwrap();
        v.push(t.elapsed());
    }
    stats("bare append 4KiB + fdatasync", v);
    // (b) new file + write + fsync + rename + fsync dir (an object-store style put)
    let mut v = Vec::new();
    for i in 0..N {
        let t = Instant::now();
        let tmp = dir.join(format!("o{i}#1"));
        let mut f = std::fs::File::create(&tmp).unwrap();
        f.write_all(&buf).unwrap();
        f.sync_all().unwrap();
        std::fs::rename(&tmp, dir.join(format!("o{i}"))).unwrap();
        std::fs::File::open(dir).unwrap().sync_all().unwrap();
        v.push(t.elapsed());
    }
    stats("bare new file 4KiB+fsync+rename+dirfsync", v);
}

async fn commits(name: &str, dir: &std::path::Path, opts: StoreOptions) {
    let store = Store::open(dir.to_str().unwrap(), opts).await.unwrap();
    let mut v = Vec::new();
    for n in 0..N as u64 {
        let puts = (0..6)
            .map(|i| (format!("t/{n:08}/{i}").into_bytes(), vec![b'v'; 160]))
            .collect();
        let b = CommitBatch { seq: CommitSeq(n + 1), puts, deletes: vec![] };
        let t = Instant::now();
        store.commit(&b).await.unwrap();
        v.push(t.elapsed());
    }
    stats(name, v);
    let t = Instant::now();
    store.close().await.unwrap();
    let close = t.elapsed();
    let t = Instant::now();
    let s = Store::open(dir.to_str().unwrap(), StoreOptions::default()).await.unwrap();
    println!("{name:40} close {close:?}, reopen {:?} ({} keys)", t.elapsed(), s.reader().len());
    s.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn zz_bench() {
    let base = std::path::PathBuf::from(std::env::var("BENCH_DIR").unwrap_or("/work/tmp-store-bench".into()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    for round in 0..2 {
        println!("--- round {round}");
        let d = base.join(format!("bare{round}"));
        std::fs::create_dir_all(&d).unwrap();
        bare(&d);
        commits("store default_settings", &base.join(format!("s{round}")), StoreOptions::default()).await;
        let mut s = Store::default_settings();
        s.compactor_options = None;
        s.garbage_collector_options = None;
        commits("store no compactor/gc", &base.join(format!("nc{round}")), StoreOptions::default().slatedb_settings(s)).await;
        let s = slatedb::Settings::default();
        commits("store slatedb Settings::default()", &base.join(format!("sd{round}")), StoreOptions::default().slatedb_settings(s)).await;
        let mut s = Store::default_settings();
        s.flush_interval = None;
        commits("store flush_interval=None", &base.join(format!("fi{round}")), StoreOptions::default().slatedb_settings(s)).await;
        let mut s = Store::default_settings();
        s.l0_sst_size_bytes = 64 * 1024 * 1024;
        s.max_wal_flushes_before_l0_flush = 4096;
        commits("store big l0 (no L0 flush in run)", &base.join(format!("bl{round}")), StoreOptions::default().slatedb_settings(s)).await;
    }
    let _ = std::fs::remove_dir_all(&base);
}
