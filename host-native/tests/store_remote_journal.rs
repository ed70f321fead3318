//! The object-store commit journal (decision 0010), on the process-wide in-memory object
//! store (`memory://name/...`) with injected PUT latency: commit groups upload at the same
//! time and are acknowledged in order; what was acknowledged is there after a takeover by a
//! new writer (which replays the journal) and for readers; a newer writer fences an older
//! one's journal; groups in flight when the store fails are all reported failed, and a reopen
//! shows none of them.

use std::time::Duration;

use rocklake::store::{
    read_snapshot, Faults, Outage, OutageSwitch, Store, StoreError, StoreOptions,
};

mod store_common;
use store_common::{batch, contents};

fn slow(put_latency_ms: u64, outage: Option<OutageSwitch>) -> StoreOptions {
    let mut opts = StoreOptions::default();
    opts.faults = Some(Faults {
        put_latency: Duration::from_millis(put_latency_ms),
        outage: outage.map(Outage::Switch),
        ..Faults::default()
    });
    opts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlapping_groups_are_acknowledged_in_order_and_replayed_by_the_next_writer() {
    let url = "memory://overlap/catalog";
    let mut opts = slow(400, None);
    opts.journal_uploads = 8;
    let a = Store::open(url, opts).await.expect("open A");
    let mut started = Vec::new();
    let begun = std::time::Instant::now();
    for seq in 1..=8 {
        started.push(
            a.start_group(vec![batch(seq)].into(), a.upload_slot().await)
                .await
                .expect("start"),
        );
    }
    // Eight groups (the uploads allowed in flight) started while the first one's upload
    // (400 ms) is still under way: the uploads overlap instead of queueing behind each other.
    assert_eq!(
        contents(&a.reader()),
        (vec![], None),
        "nothing is visible before its upload is durable"
    );
    // Twelve more wait for an upload to finish before they start.
    for seq in 9..=20 {
        started.push(
            a.start_group(vec![batch(seq)].into(), a.upload_slot().await)
                .await
                .expect("start"),
        );
    }
    for (i, group) in started.into_iter().enumerate() {
        group.durable().await.expect("durable");
        if i == 7 {
            // Eight uploads one after another would take 8 x 400 ms; overlapping, about one.
            // This tells the two apart; it is no speed target.
            let eighth = begun.elapsed();
            assert!(
                eighth < Duration::from_millis(1600),
                "the first eight uploads overlap: the eighth group was durable after {eighth:?}"
            );
        }
        let (seqs, counter) = contents(&a.reader());
        // Acknowledged in order: when group i is durable, every earlier one is visible.
        assert!(
            seqs.len() > i && seqs[..=i] == (1..=i as u64 + 1).collect::<Vec<_>>(),
            "{seqs:?}"
        );
        assert!(counter >= Some(i as u64 + 1));
    }
    let all: Vec<u64> = (1..=20).collect();
    assert_eq!(contents(&a.reader()), (all.clone(), Some(20)));
    // Readers (what `rocklake verify` uses) see SlateDB's copy plus the journal.
    let kv = read_snapshot(url).await.expect("snapshot");
    assert_eq!(contents(&kv), (all.clone(), Some(20)), "read_snapshot");

    // A new writer takes over without A closing (A may not have given SlateDB anything
    // durable yet): it replays the journal.
    let b = Store::open(url, StoreOptions::default())
        .await
        .expect("open B");
    assert_eq!(
        contents(&b.reader()),
        (all.clone(), Some(20)),
        "after takeover"
    );
    let fenced = a.commit(&batch(21)).await;
    assert!(
        matches!(fenced, Err(StoreError::Fenced { .. })),
        "the older writer is fenced: {fenced:?}"
    );
    b.commit(&batch(22)).await.expect("B commits");
    b.close().await.expect("close B");
    let _ = a.close().await;

    let c = Store::open(url, StoreOptions::default())
        .await
        .expect("open C");
    let mut expected = all;
    expected.push(22);
    assert_eq!(
        contents(&c.reader()),
        (expected, Some(22)),
        "the fenced commit is absent"
    );
    c.close().await.expect("close C");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_writer_that_has_not_noticed_is_refused_by_the_fence_in_its_slot() {
    let url = "memory://fence/catalog";
    let a = Store::open(url, StoreOptions::default())
        .await
        .expect("open A");
    for seq in 1..=3 {
        a.commit(&batch(seq)).await.expect("commit");
    }
    let b = Store::open(url, StoreOptions::default())
        .await
        .expect("open B");
    // A's next journal slot holds B's fence, whatever SlateDB has told A so far.
    let mut refused = 0;
    for seq in 4..=6 {
        match a.commit(&batch(seq)).await {
            Err(StoreError::Fenced { .. }) => refused += 1,
            other => panic!("commit {seq} of the fenced writer: {other:?}"),
        }
    }
    assert_eq!(refused, 3);
    assert_eq!(contents(&b.reader()), (vec![1, 2, 3], Some(3)));
    b.commit(&batch(7)).await.expect("B commits");
    assert_eq!(
        contents(&read_snapshot(url).await.expect("snapshot")),
        (vec![1, 2, 3, 7], Some(7))
    );
    b.close().await.expect("close B");
    let _ = a.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_writer_that_a_newer_writer_fenced_answers_fenced_not_reopen() {
    let url = "memory://fence-broken/catalog";
    let switch = OutageSwitch::new();
    let a = Store::open(url, slow(0, Some(switch.clone())))
        .await
        .expect("open A");
    a.commit(&batch(1)).await.expect("commit 1");
    // A breaks (its journal upload fails) and B opens the catalog before A is reopened, as
    // when SlateDB refuses A's late write because B's epoch is newer.
    switch.set(true);
    let failed = a.commit(&batch(2)).await;
    assert!(
        matches!(failed, Err(StoreError::Indeterminate { .. })),
        "{failed:?}"
    );
    assert!(a.needs_recovery());
    switch.set(false);
    let b = Store::open(url, StoreOptions::default())
        .await
        .expect("open B");
    // The caller must hear "another writer" (stop), not "reopen and retry".
    for seq in 3..=4 {
        match a.commit(&batch(seq)).await {
            Err(StoreError::Fenced { .. }) => {}
            other => panic!("commit {seq} of the broken, fenced writer: {other:?}"),
        }
    }
    assert!(!a.needs_recovery(), "a fenced store is not reopened");
    assert!(
        matches!(a.recover().await, Err(StoreError::Fenced { .. })),
        "reopening a fenced store"
    );
    assert_eq!(contents(&b.reader()), (vec![1], Some(1)));
    b.close().await.expect("close B");
    let _ = a.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_in_flight_when_the_store_fails_all_fail_and_none_lands() {
    let url = "memory://outage/catalog";
    let switch = OutageSwitch::new();
    let a = Store::open(url, slow(300, Some(switch.clone())))
        .await
        .expect("open");
    a.commit(&batch(1)).await.expect("commit 1");
    a.commit(&batch(2)).await.expect("commit 2");
    let mut started = Vec::new();
    for seq in 3..=5 {
        started.push(
            a.start_group(vec![batch(seq)].into(), a.upload_slot().await)
                .await
                .expect("start"),
        );
    }
    // The store goes away while the three uploads wait out their latency.
    switch.set(true);
    for group in started {
        let outcome = group.durable().await;
        assert!(
            matches!(outcome, Err(StoreError::Indeterminate { .. })),
            "{outcome:?}"
        );
    }
    assert!(a.needs_recovery());
    switch.set(false);
    a.recover().await.expect("reopen");
    assert_eq!(
        contents(&a.reader()),
        (vec![1, 2], Some(2)),
        "nothing of the failed groups landed"
    );
    a.commit(&batch(6)).await.expect("commit after the reopen");
    a.close().await.expect("close");
    let b = Store::open(url, StoreOptions::default())
        .await
        .expect("reopen");
    assert_eq!(contents(&b.reader()), (vec![1, 2, 6], Some(6)));
    b.close().await.expect("close");
}

/// Readers take SlateDB's copy and the journal groups after its marks. A reader follows the
/// writer while it reads, so marks read after the scan can be newer than the scanned keys
/// (seen once in CI, in the test above: groups 9–16 in neither); a read whose marks moved is
/// now read again. That interleaving needs SlateDB's reader to poll mid-read and was not
/// reproduced here (this test passed on the old code too, 150–220 snapshots a run); it checks
/// the invariant: every snapshot taken while a writer commits is a whole prefix of its commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_read_while_a_writer_commits_are_whole_prefixes() {
    let url = "memory://snapshots-while-writing/catalog";
    let a = std::sync::Arc::new(Store::open(url, slow(5, None)).await.expect("open A"));
    a.commit(&batch(1)).await.expect("first commit");
    let writer = {
        let a = a.clone();
        tokio::spawn(async move {
            for seq in 2..=60 {
                a.commit(&batch(seq)).await.expect("commit");
            }
        })
    };
    let mut taken = 0;
    while !writer.is_finished() {
        let kv = read_snapshot(url).await.expect("snapshot");
        let (seqs, counter) = contents(&kv);
        let n = seqs.len() as u64;
        assert!(n >= 1, "the first commit is there");
        assert_eq!(seqs, (1..=n).collect::<Vec<_>>(), "a whole prefix");
        assert_eq!(counter, Some(n), "the counter of that prefix");
        taken += 1;
    }
    writer.await.expect("writer");
    assert!(taken >= 3, "{taken} snapshots while writing");
    let (seqs, _) = contents(&read_snapshot(url).await.expect("snapshot"));
    assert_eq!(seqs, (1..=60).collect::<Vec<_>>());
}
