//! Readers running while a writer commits never see half of a batch.
//!
//! Every batch n rewrites the same 8 keys `c/0..c/7` with value n and adds `log/n`. A reader
//! that ever sees two different values among `c/*`, or fewer `log/*` keys than the value of
//! `c/*` implies, has observed a torn batch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rocklake::store::{Store, StoreOptions};
use rocklake_core::api::{CommitBatch, CommitSeq, KvRead};

const KEYS: usize = 8;
const BATCHES: u64 = 150;

fn parse(v: &[u8]) -> u64 {
    std::str::from_utf8(v)
        .expect("utf8")
        .parse()
        .expect("number")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_reader_never_sees_half_a_batch() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(
        Store::open(dir.path().to_str().expect("utf8"), StoreOptions::default())
            .await
            .expect("open"),
    );
    // Obtained before any commit, used throughout.
    let reader = store.reader();
    let stop = Arc::new(AtomicBool::new(false));

    let threads: Vec<_> = (0..3)
        .map(|t| {
            let r = reader.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let (mut reads, mut last) = (0u64, 0u64);
                while !stop.load(Ordering::Relaxed) {
                    let c = r.scan(b"c/", b"c0", usize::MAX).expect("scan");
                    reads += 1;
                    if c.is_empty() {
                        assert_eq!(last, 0, "thread {t}: batch vanished");
                        continue;
                    }
                    assert_eq!(c.len(), KEYS, "thread {t}: partial key set {c:?}");
                    let n = parse(c.get(0).expect("first entry").1);
                    assert!(
                        c.iter().all(|(_, v)| parse(v) == n),
                        "thread {t}: torn batch {c:?}"
                    );
                    assert!(n >= last, "thread {t}: went back from {last} to {n}");
                    last = n;
                    // One call, one state: the log written with batch n is there too.
                    let log = r.scan(b"log/", b"log0", usize::MAX).expect("scan");
                    assert!(
                        log.len() as u64 > n,
                        "thread {t}: log {} behind batch {n}",
                        log.len()
                    );
                    assert!(r
                        .get(format!("log/{n:06}").as_bytes())
                        .expect("get")
                        .is_some());
                }
                (reads, last)
            })
        })
        .collect();

    for n in 0..BATCHES {
        let mut puts: Vec<_> = (0..KEYS)
            .map(|i| (format!("c/{i}").into_bytes(), n.to_string().into_bytes()))
            .collect();
        puts.push((format!("log/{n:06}").into_bytes(), b"x".to_vec()));
        store
            .commit(&CommitBatch {
                seq: CommitSeq(n + 1),
                puts,
                deletes: Vec::new(),
            })
            .await
            .expect("commit");
    }
    stop.store(true, Ordering::Relaxed);
    for (t, h) in threads.into_iter().enumerate() {
        let (reads, last) = h.join().expect("reader thread panicked");
        println!("reader {t}: {reads} consistent reads, last batch seen {last}");
        assert!(reads > 0);
    }
    assert_eq!(
        reader
            .scan(b"log/", b"log0", usize::MAX)
            .expect("scan")
            .len() as u64,
        BATCHES
    );
    store.close().await.expect("close");
}
