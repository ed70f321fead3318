//! Crash safety: a child process commits numbered multi-key batches and prints `ACK n` after
//! each commit returns; we SIGKILL it at seeded random moments (while it opens the store, right
//! after an ACK, shortly after start, mid-stream), reopen, and check that every ACKed batch is fully present, no
//! batch is partially present, and the batch numbers present form a prefix 0..=max.
//!
//! `ROCKLAKE_CRASH_ROUNDS` (default 12) and `ROCKLAKE_CRASH_SEED` tune it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rocklake::store::{Store, StoreOptions};
use rocklake_core::api::KvRead;

const KEYS_PER_BATCH: usize = 6;

mod seeded;
use seeded::Rng;

fn expected_value(n: u64, i: usize) -> Vec<u8> {
    let mut v = format!("{n}:{i}:").into_bytes();
    v.extend(std::iter::repeat_n(b'x', (n as usize * 7 + i * 13) % 700));
    v
}

enum Line {
    Ready,
    Ack(u64),
    Eof,
}

#[derive(Debug)]
enum Kill {
    /// Before READY: open claims the writer epoch with a durable write of its own.
    DuringOpen(Duration),
    AfterAck(u64),
    AfterStart(Duration),
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_crash_sigkill_keeps_acked_batches_atomic() {
    let rounds: usize = std::env::var("ROCKLAKE_CRASH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12);
    let seed: u64 = std::env::var("ROCKLAKE_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_1234_ABCD);
    let mut rng = Rng(seed | 1);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().to_str().expect("utf8").to_string();
    let exe = env!("CARGO_BIN_EXE_rocklake-store-crashtest");

    let mut max_acked: Option<u64> = None;
    let (mut total_acks, mut unacked_present) = (0u64, 0u64);
    for round in 0..rounds {
        let kill = match round % 4 {
            0 => Kill::AfterAck(rng.below(40)),
            1 => Kill::AfterStart(Duration::from_micros(rng.below(20_000))),
            2 => Kill::DuringOpen(Duration::from_micros(rng.below(60_000))),
            // Long enough for memtable flushes to L0 (1 MiB) and compactions to run.
            _ => Kill::AfterStart(Duration::from_millis(20 + rng.below(1500))),
        };
        let mut child = Command::new(exe)
            .arg(&path)
            .arg(KEYS_PER_BATCH.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn crash-test child");
        let stdout = child.stdout.take().expect("child stdout");
        let (tx, rx) = mpsc::channel();
        let pump = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let msg = if line.starts_with("READY") {
                    Line::Ready
                } else if let Some(n) = line.strip_prefix("ACK ") {
                    Line::Ack(n.parse().expect("ACK number"))
                } else {
                    panic!("unexpected child output {line:?}");
                };
                if tx.send(msg).is_err() {
                    break;
                }
            }
            let _ = tx.send(Line::Eof);
        });

        let deadline = Instant::now() + Duration::from_secs(60);
        let wait = |rx: &mpsc::Receiver<Line>| {
            rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("child stalled")
        };
        let mut acked: Vec<u64> = Vec::new();
        if let Kill::DuringOpen(d) = kill {
            std::thread::sleep(d);
        } else {
            match wait(&rx) {
                Line::Ready => {}
                Line::Eof => panic!("round {round}: child exited before READY"),
                Line::Ack(_) => panic!("round {round}: ACK before READY"),
            }
        }
        match kill {
            Kill::AfterAck(k) => loop {
                match wait(&rx) {
                    Line::Ack(n) => {
                        acked.push(n);
                        if acked.len() as u64 > k {
                            break;
                        }
                    }
                    Line::Eof => panic!("round {round}: child died on its own"),
                    Line::Ready => panic!("second READY"),
                }
            },
            Kill::AfterStart(d) => std::thread::sleep(d),
            Kill::DuringOpen(_) => {}
        }
        child.kill().expect("SIGKILL child");
        child.wait().expect("reap child");
        // Everything the child printed before dying was a returned commit.
        loop {
            match wait(&rx) {
                Line::Ack(n) => acked.push(n),
                Line::Eof => break,
                // Only a DuringOpen kill can land after READY was printed.
                Line::Ready => assert!(matches!(kill, Kill::DuringOpen(_)), "second READY"),
            }
        }
        pump.join().expect("pump thread");
        total_acks += acked.len() as u64;
        if let Some(&m) = acked.iter().max() {
            max_acked = Some(max_acked.map_or(m, |x| x.max(m)));
        }

        // Reopen and check.
        let t_open = Instant::now();
        let store = Store::open(&path, StoreOptions::default())
            .await
            .expect("reopen after crash");
        let open_time = t_open.elapsed();
        let rows = store.reader().scan(b"b/", b"b0", usize::MAX).expect("scan");
        let mut batches: BTreeMap<u64, Vec<(usize, Vec<u8>)>> = BTreeMap::new();
        for (k, v) in rows.to_pairs() {
            let k = String::from_utf8(k).expect("utf8 key");
            let n: u64 = k[2..12].parse().expect("batch number");
            let i: usize = k[13..].parse().expect("entry number");
            batches.entry(n).or_default().push((i, v));
        }
        for (n, entries) in &batches {
            assert_eq!(
                entries.len(),
                KEYS_PER_BATCH,
                "round {round}: batch {n} partially present"
            );
            for (i, v) in entries {
                assert_eq!(
                    v,
                    &expected_value(*n, *i),
                    "round {round}: batch {n} entry {i} wrong"
                );
            }
        }
        let present = batches.len() as u64;
        if let Some((&last, _)) = batches.iter().next_back() {
            assert_eq!(last + 1, present, "round {round}: batch numbers have holes");
        }
        if let Some(m) = max_acked {
            assert!(
                present > m,
                "round {round}: ACKed batch {m} lost ({present} present)"
            );
        }
        let acked_so_far = max_acked.map_or(0, |m| m + 1);
        unacked_present += present - acked_so_far.min(present);
        println!(
            "round {round:2}: kill {kill:?}: {} ACKs this round, {present} batches present, \
             max ACKed {max_acked:?}, epoch {}, reopen {:?}",
            acked.len(),
            store.epoch(),
            open_time
        );
        let t_close = Instant::now();
        store.close().await.expect("close after check");
        println!("          close {:?}", t_close.elapsed());
        // Next round continues from what is present; a present-but-unACKed batch counts.
        if present > 0 {
            max_acked = Some(present - 1);
        }
    }
    let files = |sub: &str| std::fs::read_dir(dir.path().join(sub)).map_or(0, |d| d.count());
    println!(
        "crash test: files left: {} wal, {} compacted (L0/SR SSTs), {} manifest",
        files("wal"),
        files("compacted"),
        files("manifest")
    );
    println!(
        "crash test: {rounds} rounds, {total_acks} ACKed commits, \
         {unacked_present} committed-but-unACKed batches found, seed {seed:#x}"
    );
}
