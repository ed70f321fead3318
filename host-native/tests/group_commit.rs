//! Group commit through the catalog service: many sessions committing at once share WAL
//! uploads, yet every commit is acknowledged only when durable, in sequence order, and all of
//! them survive a reopen.

use std::sync::Arc;

use rocklake::service::{CatalogService, ServiceConfig};
use rocklake_core::api::{Output, TxnStatus};

const SESSIONS: usize = 32;
const COMMITS_PER_SESSION: usize = 10;

async fn count(service: &CatalogService) -> String {
    let sid = service.open_session("t", "lake");
    let reply = service.query(sid, "SELECT count(*), max(v) FROM t").await;
    service.close_session(sid).await;
    match reply.outputs.last() {
        Some(Output::Rows { rows, .. }) => rows.to_vecs()[0]
            .iter()
            .map(|c| String::from_utf8_lossy(c.as_deref().unwrap_or(b"NULL")).to_string())
            .collect::<Vec<_>>()
            .join(","),
        other => panic!("count: {other:?} {:?}", reply.error),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_commits_share_uploads_and_all_survive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = dir.path().join("catalog").display().to_string();
    let service = CatalogService::open(&ServiceConfig::new(url.clone()))
        .await
        .expect("open");
    let sid = service.open_session("t", "lake");
    let r = service
        .query(sid, "CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)")
        .await;
    assert!(r.error.is_none(), "{:?}", r.error);
    let metrics = service.metrics();
    let puts_before = successful_puts(&metrics.render());
    let commits_before = metric(&metrics.render(), "rocklake_commits_total");

    let mut tasks = Vec::new();
    for s in 0..SESSIONS {
        let service: Arc<CatalogService> = service.clone();
        tasks.push(tokio::spawn(async move {
            let sid = service.open_session("t", "lake");
            let mut acked = Vec::new();
            for i in 0..COMMITS_PER_SESSION {
                let id = s * 1000 + i;
                let r = service
                    .query(sid, &format!("INSERT INTO t VALUES ({id}, {id})"))
                    .await;
                assert!(r.error.is_none(), "insert {id}: {:?}", r.error);
                assert_eq!(r.status, TxnStatus::Idle);
                acked.push(id);
            }
            service.close_session(sid).await;
            acked
        }));
    }
    let mut acked = 0;
    for t in tasks {
        acked += t.await.expect("task").len();
    }
    let total = SESSIONS * COMMITS_PER_SESSION;
    assert_eq!(acked, total);
    let max = (SESSIONS - 1) * 1000 + COMMITS_PER_SESSION - 1;
    assert_eq!(count(&service).await, format!("{total},{max}"));

    let text = metrics.render();
    let commits = metric(&text, "rocklake_commits_total") - commits_before;
    let puts = successful_puts(&text) - puts_before;
    println!("{commits} commits from {SESSIONS} sessions took {puts} successful object-store PUTs");
    assert_eq!(commits as usize, total);
    assert!(
        puts < commits * 0.9,
        "concurrent commits should share WAL uploads: {puts} PUTs for {commits} commits"
    );
    service.shutdown().await.expect("shutdown");
    drop(service);

    let again = CatalogService::open(&ServiceConfig::new(url))
        .await
        .expect("reopen");
    assert_eq!(
        count(&again).await,
        format!("{total},{max}"),
        "after reopen"
    );
    again.shutdown().await.expect("shutdown");
}

/// PUT requests minus the refused ones (SlateDB retries a PUT without attributes on the local
/// filesystem, which does not support them).
fn successful_puts(text: &str) -> f64 {
    let failed: f64 = text
        .lines()
        .filter(|l| l.starts_with("rocklake_object_store_errors_total{op=\"put\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    metric(text, "rocklake_object_store_requests_total{op=\"put\"}") - failed
}

fn metric(text: &str, sample: &str) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            l.strip_prefix(sample)?
                .strip_prefix(' ')?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0.0)
}

fn canceled() -> rocklake_core::api::PgError {
    rocklake_core::api::PgError::new("57014", "canceling statement due to user request")
}

async fn ids(service: &CatalogService) -> Vec<String> {
    let sid = service.open_session("t", "lake");
    let reply = service.query(sid, "SELECT id FROM t ORDER BY id").await;
    service.close_session(sid).await;
    match reply.outputs.last() {
        Some(Output::Rows { rows, .. }) => rows
            .to_vecs()
            .iter()
            .map(|r| String::from_utf8_lossy(r[0].as_deref().unwrap_or_default()).to_string())
            .collect(),
        other => panic!("ids: {other:?}"),
    }
}

/// A cancel (or statement timeout) aborts a commit still waiting in the group-commit queue
/// (57014, nothing written), and is ignored once the commit is being written (the client hears
/// success, never "canceled" for a durable transaction). A store that takes 300 ms per PUT
/// makes both windows wide.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancel_aborts_queued_commits_and_never_a_durable_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = dir.path().join("catalog").display().to_string();
    let mut config = ServiceConfig::new(url.clone());
    config.faults = Some(rocklake::store::Faults {
        put_latency: std::time::Duration::from_millis(300),
        ..rocklake::store::Faults::default()
    });
    // The slow PUTs must be on the commit path: the WAL upload, not the local journal.
    config.commit_journal = false;
    let service = CatalogService::open(&config).await.expect("open");
    let s0 = service.open_session("t", "lake");
    let r = service
        .query(s0, "CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)")
        .await;
    assert!(r.error.is_none(), "{:?}", r.error);

    let (a, b) = (
        service.open_session("t", "lake"),
        service.open_session("t", "lake"),
    );
    let sa = service.clone();
    let ta = tokio::spawn(async move { sa.query(a, "INSERT INTO t VALUES (1, 1)").await });
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    let sb = service.clone();
    let tb = tokio::spawn(async move { sb.query(b, "INSERT INTO t VALUES (2, 2)").await });
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    // A is being written (it leads the group), B waits in the queue behind it.
    service.interrupt(a, canceled());
    service.interrupt(b, canceled());
    let ra = ta.await.expect("task a");
    let rb = tb.await.expect("task b");
    assert!(
        ra.error.is_none(),
        "A was already being written: {:?}",
        ra.error
    );
    let eb = rb.error.expect("B was still queued: aborted");
    assert_eq!(eb.code, "57014");
    assert_eq!(rb.status, TxnStatus::Idle);
    assert_eq!(ids(&service).await, ["1"]);
    assert!(service
        .metrics()
        .render()
        .contains("rocklake_commits_aborted_total 1"));

    // Both sessions keep working; a stale interrupt does not hit the next statement.
    let r = service.query(b, "INSERT INTO t VALUES (3, 3)").await;
    assert!(r.error.is_none(), "{:?}", r.error);
    let r = service.query(a, "INSERT INTO t VALUES (4, 4)").await;
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(ids(&service).await, ["1", "3", "4"]);
    service.shutdown().await.expect("shutdown");
    drop(service);

    let again = CatalogService::open(&ServiceConfig::new(url))
        .await
        .expect("reopen");
    assert_eq!(ids(&again).await, ["1", "3", "4"], "after reopen");
    again.shutdown().await.expect("shutdown");
}
