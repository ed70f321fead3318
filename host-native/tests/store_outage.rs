//! Object-store faults while serving (issue 6, point 4), through the catalog service with the
//! fault-injecting store: an outage makes commits fail fast with 58030 (never hang) while
//! reads keep working, and the same service commits again once the store is back, without a
//! restart; a commit whose acknowledgement was lost is resolved by reopening the store in
//! process; one whose outcome stays unknown during an outage and that did land is picked up by
//! reloading the engine; a torn WAL object is never accepted. After each: every acknowledged
//! row present, verify clean.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rocklake::service::{CatalogService, ServiceConfig};
use rocklake::store::{Faults, Outage, OutageSwitch, Store, StoreError, StoreOptions, WalFault};
use rocklake::store::{WalFaultKind, FAULTS_ENV};
use rocklake_core::api::{Output, Reply};

/// Longest a commit may take to fail while the store is down: SlateDB's retries of the WAL
/// upload (~1.5 s), the service's attempts to reopen the store to learn the outcome (3 s) and
/// slack for a loaded machine.
const FAIL_WITHIN: Duration = Duration::from_secs(15);

fn rows_of(reply: &Reply) -> Vec<Vec<String>> {
    match reply.outputs.iter().rev().find_map(|o| match o {
        Output::Rows { rows, .. } => Some(rows.to_vecs()),
        _ => None,
    }) {
        Some(rows) => rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|c| String::from_utf8_lossy(c.as_deref().unwrap_or(b"NULL")).into())
                    .collect()
            })
            .collect(),
        None => panic!("no rows: {:?}", reply.error),
    }
}

async fn ids(service: &CatalogService) -> Vec<i64> {
    let sid = service.open_session("t", "lake");
    let r = service.query(sid, "SELECT id FROM t ORDER BY id").await;
    service.close_session(sid).await;
    assert!(r.error.is_none(), "select: {:?}", r.error);
    rows_of(&r)
        .iter()
        .map(|r| r[0].parse().expect("id"))
        .collect()
}

/// What one autocommit INSERT of `id` returned.
#[derive(Debug, PartialEq)]
enum Outcome {
    Committed,
    /// 58030 with the retry hint: nothing was written.
    NotCommitted,
    /// 58030 without it: the outcome is unknown.
    Unknown,
}

async fn insert(service: &CatalogService, id: i64) -> (Outcome, Duration, String) {
    let sid = service.open_session("t", "lake");
    let started = Instant::now();
    let r = service
        .query(sid, &format!("INSERT INTO t VALUES ({id}, 'row {id}')"))
        .await;
    let took = started.elapsed();
    service.close_session(sid).await;
    match r.error {
        None => (Outcome::Committed, took, String::new()),
        Some(e) => {
            assert_eq!(e.code, "58030", "insert {id}: {e:?}");
            let retry = e.hint.as_deref().is_some_and(|h| h.contains("retry"));
            let kind = if retry {
                Outcome::NotCommitted
            } else {
                Outcome::Unknown
            };
            (kind, took, e.message)
        }
    }
}

async fn open(url: &str, faults: Faults) -> Arc<CatalogService> {
    let mut config = ServiceConfig::new(url);
    config.faults = Some(faults);
    // These faults hit the WAL upload, which the local commit journal takes off the commit path.
    config.commit_journal = false;
    CatalogService::open(&config).await.expect("open")
}

async fn create_table(service: &CatalogService) {
    let sid = service.open_session("t", "lake");
    let r = service
        .query(sid, "CREATE TABLE t (id BIGINT PRIMARY KEY, v VARCHAR)")
        .await;
    assert!(r.error.is_none(), "{:?}", r.error);
    service.close_session(sid).await;
}

/// Retries an INSERT until it commits (the first attempts after an outage may still meet the
/// broken store or the engine's reload); returns how many attempts failed.
async fn insert_until_committed(service: &CatalogService, id: i64, within: Duration) -> usize {
    let deadline = Instant::now() + within;
    let mut failed = 0;
    loop {
        let (outcome, _, message) = insert(service, id).await;
        match outcome {
            Outcome::Committed => return failed,
            Outcome::NotCommitted if Instant::now() < deadline => {
                failed += 1;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            other => panic!("insert {id} after the outage: {other:?} {message}"),
        }
    }
}

/// The catalog after the service is gone: verify (keys, commit sequence, counters) clean, and
/// the rows of table t as a reopened writer sees them.
async fn verify_and_reopen(url: &str) -> Vec<i64> {
    let kv = rocklake::store::read_snapshot(url).await.expect("snapshot");
    let mut engine = rocklake_core::Engine::open(&kv).expect("engine");
    let report = rocklake_core::verify::verify(&mut engine, &kv).expect("verify");
    assert!(
        report.violations.is_empty(),
        "verify: {:?}",
        report.violations
    );
    // Explicit (no) faults: never read ROCKLAKE_FAULTS, which one test here sets.
    let service = open(url, Faults::default()).await;
    let ids = ids(&service).await;
    service.shutdown().await.expect("shutdown");
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn outage_fails_commits_fast_then_the_same_service_commits_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = dir.path().join("catalog").display().to_string();
    let switch = OutageSwitch::new();
    let service = open(
        &url,
        Faults {
            outage: Some(Outage::Switch(switch.clone())),
            ..Faults::default()
        },
    )
    .await;
    create_table(&service).await;
    let mut acked = Vec::new();
    for id in 0..5 {
        assert_eq!(insert(&service, id).await.0, Outcome::Committed);
        acked.push(id);
    }

    switch.set(true);
    let mut unknown = Vec::new();
    let mut failed = Vec::new();
    let outage_started = Instant::now();
    for id in 100..104 {
        let (outcome, took, message) = insert(&service, id).await;
        println!("during the outage: insert {id}: {outcome:?} after {took:?}: {message}");
        assert!(took < FAIL_WITHIN, "insert {id} took {took:?}");
        match outcome {
            Outcome::Committed => panic!("insert {id} committed while the store is down"),
            Outcome::NotCommitted => failed.push(id),
            Outcome::Unknown => unknown.push(id),
        }
    }
    // Concurrent sessions get errors too, none hangs.
    let burst: Vec<_> = (200..206)
        .map(|id| {
            let s = service.clone();
            tokio::spawn(async move { (id, insert(&s, id).await) })
        })
        .collect();
    for t in burst {
        let (id, (outcome, took, _)) = t.await.expect("task");
        assert!(took < FAIL_WITHIN, "insert {id} took {took:?}");
        assert_ne!(outcome, Outcome::Committed, "insert {id} during the outage");
        if outcome == Outcome::Unknown {
            unknown.push(id);
        } else {
            failed.push(id);
        }
    }
    // Reads are served from memory.
    assert_eq!(ids(&service).await, acked, "reads during the outage");
    assert!(
        !failed.is_empty(),
        "no commit failed with a retryable error during the outage"
    );
    println!(
        "outage of {:?}: {} commits failed (retryable), {} with unknown outcome",
        outage_started.elapsed(),
        failed.len(),
        unknown.len()
    );

    switch.set(false);
    let back = Instant::now();
    let retries = insert_until_committed(&service, 7, Duration::from_secs(20)).await;
    acked.push(7);
    println!(
        "store back: committed again after {:?} ({retries} retryable failures first)",
        back.elapsed()
    );
    for id in 8..12 {
        assert_eq!(insert(&service, id).await.0, Outcome::Committed, "{id}");
        acked.push(id);
    }
    let seen = ids(&service).await;
    for id in &acked {
        assert!(seen.contains(id), "acknowledged {id} missing: {seen:?}");
    }
    for id in &failed {
        assert!(
            !seen.contains(id),
            "{id} failed as not committed but is visible"
        );
    }
    service.shutdown().await.expect("shutdown");
    drop(service);

    let after = verify_and_reopen(&url).await;
    assert_eq!(
        after, seen,
        "the reopened catalog differs from what was served"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lost_acknowledgement_is_resolved_in_process_as_committed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = dir.path().join("catalog").display().to_string();
    // WAL uploads: #1 the open's epoch claim, #2 CREATE TABLE, #3.. one per INSERT.
    let service = open(
        &url,
        Faults {
            wal_fault: Some(WalFault {
                kind: WalFaultKind::LostAck,
                nth: 5,
            }),
            ..Faults::default()
        },
    )
    .await;
    create_table(&service).await;
    for id in 0..6 {
        let (outcome, took, message) = insert(&service, id).await;
        assert_eq!(outcome, Outcome::Committed, "insert {id}: {message}");
        println!("insert {id}: {took:?}");
    }
    assert_eq!(ids(&service).await, (0..6).collect::<Vec<_>>());
    assert!(service.epoch() > 1, "the store was not reopened");
    service.shutdown().await.expect("shutdown");
    drop(service);
    assert_eq!(verify_and_reopen(&url).await, (0..6).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn unknown_outcome_that_landed_is_reloaded_after_the_outage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = dir.path().join("catalog").display().to_string();
    let switch = OutageSwitch::new();
    // Commit 2 (WAL upload #5) is written but its acknowledgement is lost, and the store goes
    // down at that moment: the service cannot learn the outcome and reports it unknown.
    let service = open(
        &url,
        Faults {
            wal_fault: Some(WalFault {
                kind: WalFaultKind::LostAck,
                nth: 5,
            }),
            outage: Some(Outage::Switch(switch.clone())),
            outage_on_wal_fault: true,
            ..Faults::default()
        },
    )
    .await;
    create_table(&service).await;
    for id in 0..2 {
        assert_eq!(insert(&service, id).await.0, Outcome::Committed);
    }
    // The lost commit creates a table and inserts a row: the engine must learn both.
    let sid = service.open_session("t", "lake");
    let started = Instant::now();
    let r = service
        .query(
            sid,
            "BEGIN; CREATE TABLE u (id BIGINT PRIMARY KEY); INSERT INTO t VALUES (2, 'row 2'); COMMIT",
        )
        .await;
    let e = r.error.expect("the commit's outcome cannot be known");
    println!(
        "commit 2: {} after {:?}: {}",
        e.code,
        started.elapsed(),
        e.message
    );
    assert_eq!(e.code, "58030");
    assert!(e.message.contains("outcome unknown"), "{}", e.message);
    service.close_session(sid).await;
    assert!(switch.is_on(), "the outage did not start");
    let (outcome, _, _) = insert(&service, 3).await;
    assert_eq!(outcome, Outcome::NotCommitted, "insert 3 during the outage");
    // Commit 2 is durable but this engine does not know it yet: it is not visible.
    assert_eq!(ids(&service).await, [0, 1]);

    switch.set(false);
    let retries = insert_until_committed(&service, 4, Duration::from_secs(20)).await;
    println!("insert 4 committed after {retries} retryable failures");
    assert_eq!(insert(&service, 5).await.0, Outcome::Committed);
    // Reloaded: the landed commit is visible, its primary key and its table's name taken.
    assert_eq!(ids(&service).await, [0, 1, 2, 4, 5]);
    let sid = service.open_session("t", "lake");
    let r = service
        .query(sid, "INSERT INTO t VALUES (2, 'again')")
        .await;
    assert_eq!(r.error.map(|e| e.code).as_deref(), Some("23505"));
    let r = service.query(sid, "INSERT INTO u VALUES (1)").await;
    assert!(
        r.error.is_none(),
        "table u unknown after the reload: {:?}",
        r.error
    );
    let r = service.query(sid, "CREATE TABLE u (x BIGINT)").await;
    assert_eq!(r.error.map(|e| e.code).as_deref(), Some("42P07"));
    service.close_session(sid).await;
    service.shutdown().await.expect("shutdown");
    drop(service);
    assert_eq!(verify_and_reopen(&url).await, [0, 1, 2, 4, 5]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn torn_wal_object_is_never_accepted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = dir.path().join("catalog").display().to_string();
    // Insert 2 (WAL upload #5) leaves a truncated WAL object, as a store without atomic PUTs
    // would. SlateDB retries the PUT, finds the slot taken and stops.
    let service = open(
        &url,
        Faults {
            seed: 3,
            wal_fault: Some(WalFault {
                kind: WalFaultKind::Torn,
                nth: 5,
            }),
            ..Faults::default()
        },
    )
    .await;
    create_table(&service).await;
    for id in 0..2 {
        assert_eq!(insert(&service, id).await.0, Outcome::Committed);
    }
    let (outcome, _, message) = insert(&service, 2).await;
    println!("insert 2 (torn): {outcome:?}: {message}");
    assert_eq!(outcome, Outcome::Unknown, "{message}");
    assert!(message.contains("corrupt"), "{message}");
    // Reads go on from memory; commits keep failing (the catalog cannot be reopened).
    assert_eq!(ids(&service).await, [0, 1]);
    assert_ne!(insert(&service, 3).await.0, Outcome::Committed);
    service.shutdown().await.ok();
    drop(service);

    // A fresh open refuses the catalog instead of accepting the truncated object.
    let mut opts = StoreOptions::default()
        .create_if_missing(false)
        .commit_journal(false);
    opts.faults = Some(Faults::default());
    match Store::open(&url, opts).await {
        Err(StoreError::Corrupt { message }) => println!("open refuses: {message}"),
        other => panic!("open accepted a torn WAL object: {other:?}"),
    }
    // The manual repair (docs/operations.md): replace the truncated object by an empty one, the
    // marker SlateDB skips. Only the never-acknowledged batch is lost.
    let wal = dir.path().join("catalog").join("wal");
    let torn = std::fs::read_dir(&wal)
        .expect("wal dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| std::fs::metadata(p).map_or(0, |m| m.len()) > 0)
        .max()
        .expect("a non-empty WAL object");
    std::fs::write(&torn, b"").expect("empty the torn object");
    assert_eq!(verify_and_reopen(&url).await, [0, 1]);
}

#[tokio::test(flavor = "current_thread")]
async fn malformed_fault_spec_refuses_to_open() {
    // The only test in this binary that touches the environment.
    std::env::set_var(FAULTS_ENV, "put_error=lots");
    let dir = tempfile::tempdir().expect("tempdir");
    let url = dir.path().join("catalog").display().to_string();
    let r = Store::open(&url, StoreOptions::default()).await;
    std::env::remove_var(FAULTS_ENV);
    match r {
        Err(StoreError::Invalid { message }) => assert!(message.contains(FAULTS_ENV)),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_stops_answering_cannot_hold_a_commit_past_the_timeout() {
    use rocklake_core::api::{CommitBatch, CommitSeq, KvRead};
    let dir = tempfile::tempdir().expect("tempdir");
    let url = dir.path().join("catalog").display().to_string();
    // WAL upload #2 (the first commit) hangs for a minute, far beyond SlateDB's patience and
    // ours: the commit must end at the commit timeout, as unknown.
    let mut opts = StoreOptions::default()
        .commit_timeout(Duration::from_secs(1))
        .commit_journal(false);
    opts.faults = Some(Faults {
        wal_fault: Some(WalFault {
            kind: WalFaultKind::Timeout,
            nth: 2,
        }),
        timeout_after: Duration::from_secs(60),
        ..Faults::default()
    });
    let store = Store::open(&url, opts).await.expect("open");
    let batch = |n: u64| CommitBatch {
        seq: CommitSeq(n),
        puts: vec![(format!("k/{n}").into_bytes(), b"v".to_vec())],
        deletes: vec![],
    };
    let started = Instant::now();
    let r = store.commit(&batch(1)).await;
    let took = started.elapsed();
    assert!(
        matches!(r, Err(StoreError::Indeterminate { .. })),
        "commit against a hanging store: {r:?}"
    );
    assert!(took < Duration::from_secs(5), "the commit took {took:?}");
    assert!(store.needs_recovery());
    store
        .recover()
        .await
        .expect("recover while the old upload still hangs");
    // The hanging upload never wrote anything: the batch is absent, and the store commits again.
    assert_eq!(store.reader().get(b"k/1").expect("get"), None);
    store
        .commit(&batch(2))
        .await
        .expect("commit after recovery");
    assert!(store.reader().get(b"k/2").expect("get").is_some());
    store.close().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn transient_errors_are_absorbed_by_the_retries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = dir.path().join("catalog").display().to_string();
    // One GET, PUT or LIST in ten fails (a few of them slowly); SlateDB retries each up to
    // three times, so a request fails for good about once in 10^4.
    let faults =
        Faults::parse("seed=11,error=0.1,timeout=0.02,timeout_ms=200").expect("fault spec");
    let service = open(&url, faults).await;
    create_table(&service).await;
    let started = Instant::now();
    let mut retried = 0;
    for id in 0..30 {
        retried += insert_until_committed(&service, id, Duration::from_secs(30)).await;
    }
    println!(
        "30 commits with 10 % transient errors in {:?}, {retried} retried by the client",
        started.elapsed()
    );
    assert_eq!(ids(&service).await, (0..30).collect::<Vec<_>>());
    let metrics = service.metrics().render();
    let injected: f64 = metrics
        .lines()
        .filter(|l| l.starts_with("rocklake_object_store_errors_total") && l.contains("other"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(injected > 0.0, "no error was injected:\n{metrics}");
    service.shutdown().await.expect("shutdown");
    drop(service);
    assert_eq!(verify_and_reopen(&url).await, (0..30).collect::<Vec<_>>());
}
