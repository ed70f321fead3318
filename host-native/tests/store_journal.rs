//! The local commit journal (decision 0009): a commit acknowledged through the journal is
//! there after any next open, with or without the journal, even when SlateDB never made it
//! durable; readers (`read_snapshot`, what `rocklake verify` uses) see it too; a writer of
//! either kind fences a journal writer.

use rocklake::store::{
    read_snapshot, Faults, Outage, OutageSwitch, Store, StoreError, StoreOptions,
};

mod store_common;
use rocklake_core::api::{CommitBatch, CommitSeq};
use store_common::{batch, contents};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn journaled_commits_survive_a_store_that_never_made_them_durable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("catalog").display().to_string();
    let switch = OutageSwitch::new();
    let mut opts = StoreOptions::default();
    opts.faults = Some(Faults {
        outage: Some(Outage::Switch(switch.clone())),
        ..Faults::default()
    });
    let a = Store::open(&path, opts).await.expect("open A");
    for seq in 1..=3 {
        a.commit(&batch(seq)).await.expect("commit");
    }
    // The object store goes away: SlateDB can make nothing durable any more, but the journal
    // is a local file, so commits are still acknowledged (until SlateDB's own failure shows).
    switch.set(true);
    let mut acked = vec![1, 2, 3];
    for seq in 4..=6 {
        match a.commit(&batch(seq)).await {
            Ok(()) => acked.push(seq),
            Err(e) => println!("commit {seq} during the outage: {e}"),
        }
    }
    assert!(
        acked.contains(&4),
        "the first commit after the outage began went to the journal"
    );
    let top = *acked.last().expect("acked");

    // A reader sees every acknowledged commit: SlateDB's copy plus the journal.
    let kv = read_snapshot(&path).await.expect("read snapshot");
    assert_eq!(contents(&kv), (acked.clone(), Some(top)), "read_snapshot");

    // The writer dies with SlateDB unable to take anything (its close cannot flush).
    let _ = a.close().await;
    drop(a);

    // A writer without the journal still replays it, then claims it (and leaves it empty).
    let b = Store::open(&path, StoreOptions::default().commit_journal(false))
        .await
        .expect("open B");
    assert_eq!(
        contents(&b.reader()),
        (acked.clone(), Some(top)),
        "B replayed the journal"
    );
    b.commit(&batch(100))
        .await
        .expect("B commits through SlateDB's WAL");
    b.close().await.expect("close B");

    // The journal B left is empty: the next writer replays nothing stale over B's commit.
    let c = Store::open(&path, StoreOptions::default())
        .await
        .expect("open C");
    let mut expected = acked;
    expected.push(100);
    assert_eq!(contents(&c.reader()), (expected, Some(100)), "C after B");
    c.close().await.expect("close C");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_without_the_journal_fences_a_journal_writer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("catalog").display().to_string();
    let a = Store::open(&path, StoreOptions::default())
        .await
        .expect("open A");
    a.commit(&batch(1)).await.expect("A commits");
    let b = Store::open(&path, StoreOptions::default().commit_journal(false))
        .await
        .expect("open B");
    assert_eq!(contents(&b.reader()).0, [1], "B sees A's journaled commit");
    let e = a.commit(&batch(2)).await;
    assert!(matches!(e, Err(StoreError::Fenced { .. })), "{e:?}");
    b.commit(&batch(3)).await.expect("B commits");
    a.close().await.expect("close A");
    b.close().await.expect("close B");
    let kv = read_snapshot(&path).await.expect("read");
    assert_eq!(contents(&kv), (vec![1, 3], Some(3)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_journal_is_cut_back_and_commits_keep_landing() {
    // Enough commits to pass the cut threshold (1 MiB) several times.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("catalog").display().to_string();
    let store = Store::open(&path, StoreOptions::default())
        .await
        .expect("open");
    let big = |seq: u64| CommitBatch {
        seq: CommitSeq(seq),
        puts: vec![
            (format!("t/{seq:04}").into_bytes(), vec![7u8; 64 * 1024]),
            (b"t/counter".to_vec(), seq.to_be_bytes().to_vec()),
        ],
        deletes: Vec::new(),
    };
    for seq in 1..=60 {
        store.commit(&big(seq)).await.expect("commit");
    }
    let journal = dir.path().join("catalog").join("rocklake-journal");
    let len = std::fs::metadata(&journal).expect("journal").len();
    assert!(
        len < 1024 * 1024 + 128 * 1024,
        "the journal was cut back: {len} bytes"
    );
    store.close().await.expect("close");
    assert_eq!(
        std::fs::metadata(&journal).expect("journal").len(),
        32,
        "a clean close leaves only the header"
    );
    let again = Store::open(&path, StoreOptions::default())
        .await
        .expect("reopen");
    assert_eq!(
        contents(&again.reader()),
        ((1..=60).collect::<Vec<_>>(), Some(60))
    );
    again.close().await.expect("close");
}
