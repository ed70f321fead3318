//! Split brain on one catalog (a directory, an S3 bucket on a real S3-compatible server, a
//! container in Azurite): a second RockLake server opening the catalog fences the first; the first's commits fail with 57P04 and nothing it tried to write becomes visible.

use rocklake_tests::azurite::AzuriteServer;
use rocklake_tests::{
    free_port, http_get, metric_value, split_brain, sql_line as sql, verify_catalog, S3Server,
    Server,
};

#[test]
fn newer_server_fences_older_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    split_brain(&|| Server::start(&catalog, "rocklake", &[]));
}

/// A fenced server says so on `/readyz` (503) and in `rocklake_fenced`.
#[test]
fn fenced_server_is_not_ready() {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    let mport = free_port().expect("port");
    let maddr = format!("127.0.0.1:{mport}");
    let a = Server::start(&catalog, "rocklake", &["--metrics-listen", &maddr]).expect("start A");
    assert!(sql(&a, "CREATE TABLE t (id BIGINT)").starts_with("OK"));
    assert_eq!(http_get(mport, "/readyz").expect("readyz").0, 200);
    let b = Server::start(&catalog, "rocklake", &[]).expect("start B");
    assert!(sql(&a, "INSERT INTO t VALUES (1)").starts_with("ERR 57P04"));
    let (status, body) = http_get(mport, "/readyz").expect("readyz");
    assert_eq!(status, 503, "{body}");
    let (_, text) = http_get(mport, "/metrics").expect("metrics");
    assert_eq!(metric_value(&text, "rocklake_fenced"), Some(1.0), "{text}");
    assert!(metric_value(&text, "rocklake_commit_failures_total").unwrap_or(0.0) >= 1.0);
    drop(a);
    b.stop().expect("stop B");
}

/// The same on a real S3-compatible server: fencing rests on its conditional PUTs.
#[test]
fn newer_server_fences_older_one_on_s3() {
    let s3 = S3Server::start().expect("S3 server");
    let dir = tempfile::tempdir().expect("tempdir");
    split_brain(&|| Server::start_url(&s3.url("fenced"), dir.path(), &s3.env(), &[]));
}

/// The same on Azure Blob (Azurite): fencing rests on Azure's conditional Put Blob
/// (`If-None-Match: *`, `If-Match`).
#[test]
fn newer_server_fences_older_one_on_azurite() {
    let az = AzuriteServer::start().expect("Azurite");
    let dir = tempfile::tempdir().expect("tempdir");
    split_brain(&|| Server::start_url(&az.url("fenced"), dir.path(), &az.env(), &[]));
}

/// `rocklake verify` reads a consistent copy without becoming the writer: the running server
/// keeps committing. (Each kind of damage is covered in core-wasm/tests/verify.rs.)
#[test]
fn verify_runs_beside_a_live_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    let a = Server::start(&catalog, "rocklake", &[]).expect("start");
    assert!(sql(&a, "CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT)").starts_with("OK"));
    assert!(sql(&a, "INSERT INTO t VALUES (1, 'a'), (2, 'b')").starts_with("OK"));
    let (code, report) = verify_catalog(&catalog.display().to_string(), &[]).expect("verify");
    assert_eq!(code, 0, "{report:#}");
    assert!(
        report["rows_checked"].as_u64().unwrap_or(0) >= 2,
        "{report:#}"
    );
    assert!(
        sql(&a, "INSERT INTO t VALUES (3, 'c')").starts_with("OK"),
        "the server is still the writer after verify"
    );
    assert_eq!(sql(&a, "SELECT count(*) FROM t"), "OK [(3,)]");
    a.stop().expect("stop");
}
