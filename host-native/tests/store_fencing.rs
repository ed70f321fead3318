//! Two writers on one catalog: the second open fences the first; the first's commit fails
//! with `Fenced` and nothing of it is ever visible; the second keeps committing.

use std::time::Duration;

use rocklake::store::{Store, StoreError, StoreOptions};
use rocklake_core::api::{CommitBatch, CommitSeq, KvRead};

fn batch(seq: u64, prefix: &str, n: usize) -> CommitBatch {
    CommitBatch {
        seq: CommitSeq(seq),
        puts: (0..n)
            .map(|i| {
                (
                    format!("{prefix}/{i}").into_bytes(),
                    format!("{prefix}:{i}").into_bytes(),
                )
            })
            .collect(),
        deletes: Vec::new(),
    }
}

fn count(r: &impl KvRead, prefix: &str) -> usize {
    let start = format!("{prefix}/").into_bytes();
    let end = format!("{prefix}0").into_bytes();
    r.scan(&start, &end, usize::MAX).expect("scan").len()
}

/// `journal`: local commit journal on (the default; A's commits are refused by the journal's
/// owner check) or off (refused by SlateDB's WAL fence).
async fn fenced_writer_case(wait_for_manifest_poll: bool, journal: bool) {
    let opts = || StoreOptions::default().commit_journal(journal);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().to_str().expect("utf8").to_string();

    let a = Store::open(&path, opts()).await.expect("open A");
    a.commit(&batch(1, "a-before", 4))
        .await
        .expect("A commits before the fence");

    let b = Store::open(&path, opts()).await.expect("open B");
    assert_eq!(b.epoch(), a.epoch() + 1);
    assert_eq!(
        count(&b.reader(), "a-before"),
        4,
        "B sees A's durable commit"
    );

    if wait_for_manifest_poll {
        // Let A's SlateDB notice the newer manifest on its own (poll interval is 1 s).
        tokio::time::sleep(Duration::from_millis(2500)).await;
    }
    // Either way A must be refused: by the manifest check, or by the WAL slot B's fence holds.
    let e = a.commit(&batch(2, "a-after", 4)).await;
    assert!(
        matches!(e, Err(StoreError::Fenced { .. })),
        "A's commit after the fence: {e:?}"
    );
    assert_eq!(
        count(&a.reader(), "a-after"),
        0,
        "A's mirror must not show the fenced batch"
    );
    // Fencing is sticky.
    let e = a.commit(&batch(3, "a-after2", 1)).await;
    assert!(matches!(e, Err(StoreError::Fenced { .. })), "{e:?}");

    for s in 0..5 {
        b.commit(&batch(10 + s, &format!("b{s}"), 3))
            .await
            .expect("B keeps committing");
    }
    a.close().await.expect("close fenced A");
    b.close().await.expect("close B");

    let c = Store::open(&path, opts()).await.expect("reopen");
    let r = c.reader();
    assert_eq!(count(&r, "a-before"), 4);
    assert_eq!(
        count(&r, "a-after"),
        0,
        "fenced batch must not appear after reopen"
    );
    assert_eq!(count(&r, "a-after2"), 0);
    for s in 0..5 {
        assert_eq!(count(&r, &format!("b{s}")), 3);
    }
    assert_eq!(c.epoch(), b.epoch() + 1);
    c.close().await.expect("close C");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_fencing_immediate_commit() {
    fenced_writer_case(false, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_fencing_immediate_commit_without_journal() {
    fenced_writer_case(false, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_fencing_after_manifest_poll() {
    fenced_writer_case(true, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_fencing_after_manifest_poll_without_journal() {
    fenced_writer_case(true, false).await;
}
