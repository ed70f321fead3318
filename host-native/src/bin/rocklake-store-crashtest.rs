//! Test helper for `tests/store_crash.rs`: opens the store at DIR and commits numbered batches
//! forever, printing `ACK n` after each commit returns. The test SIGKILLs it at random moments.
//!
//! Usage: rocklake-store-crashtest DIR KEYS_PER_BATCH
//! Batch n writes keys `b/{n:010}/{i:03}` for i in 0..KEYS_PER_BATCH with values
//! `{n}:{i}:` followed by filler whose length depends on (n, i).

use std::io::Write;

use anyhow::Context;
use rocklake::store::{Store, StoreOptions};
use rocklake_core::api::{CommitBatch, CommitSeq, KvRead};

/// Key of entry `i` of batch `n` (shared with the test by convention).
fn key(n: u64, i: usize) -> Vec<u8> {
    format!("b/{n:010}/{i:03}").into_bytes()
}

fn value(n: u64, i: usize) -> Vec<u8> {
    let mut v = format!("{n}:{i}:").into_bytes();
    let filler = (n as usize * 7 + i * 13) % 700;
    v.extend(std::iter::repeat_n(b'x', filler));
    v
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .context("usage: rocklake-store-crashtest DIR KEYS_PER_BATCH")?;
    let keys: usize = args
        .next()
        .context("missing KEYS_PER_BATCH")?
        .parse()
        .context("KEYS_PER_BATCH must be a number")?;
    let store = Store::open(&dir, StoreOptions::default()).await?;
    // Continue after the highest batch already present.
    let existing = store.reader().scan(b"b/", b"b0", usize::MAX)?;
    let mut n = match existing.last() {
        Some((k, _)) => {
            let s = std::str::from_utf8(&k[2..12]).context("batch key not utf-8")?;
            s.parse::<u64>().context("batch key number")? + 1
        }
        None => 0,
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "READY {} {n}", store.epoch())?;
    out.flush()?;
    loop {
        let batch = CommitBatch {
            seq: CommitSeq(n + 1),
            puts: (0..keys).map(|i| (key(n, i), value(n, i))).collect(),
            deletes: Vec::new(),
        };
        store.commit(&batch).await?;
        writeln!(out, "ACK {n}")?;
        out.flush()?;
        n += 1;
    }
}
