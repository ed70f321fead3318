//! The catalog on Azure Blob Storage, served by Azurite (Microsoft's emulator, installed from npm
//! by `scripts/setup.sh`): the DuckDB 1.5.5 workload with the catalog in a container, `rocklake
//! verify` on it, a reopen; and the split-brain test, where fencing rests on Azure's conditional
//! Put Blob (`If-None-Match: *`, `If-Match`). The S3 twins are in duckdb_end_to_end.rs and
//! fencing.rs. A missing Azurite fails these tests; they never skip.

use std::process::Command;

use rocklake_tests::azurite::AzuriteServer;
use rocklake_tests::{
    duckdb_python, repo_root, run_echo, shared_dir, venv_python, verify_catalog, Server,
};

/// The 1.5.5 workload (default inlining, as on S3) against a server whose catalog is in Azurite;
/// every step's outcome is compared with PostgreSQL's (tests/e2e/run_workload.py).
#[test]
fn duckdb_155_workload_with_catalog_on_azurite() {
    let az = AzuriteServer::start().expect("Azurite");
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_url(&az.url("lake"), &dir.path().join("data"), &az.env(), &[])
        .expect("start rocklake on Azurite");
    let mut cmd = Command::new("python3");
    cmd.arg(repo_root().join("tests/e2e/run_workload.py"))
        .arg("--venv-python")
        .arg(venv_python("155").expect("venv"))
        .arg("--dsn")
        .arg(server.dsn())
        .arg("--outdir")
        .arg(dir.path().join("wl"))
        .arg("--expect")
        .arg(repo_root().join("tests/e2e/expected/steps-pg155default.json"))
        .env("ROCKLAKE_SHARED_TOOLS", shared_dir().join("tools"));
    let (ok, out) = run_echo(&mut cmd).expect("run workload");
    assert!(
        ok,
        "workload on Azurite differs from PostgreSQL's outcomes:\n{out}"
    );
    assert!(out.contains(" passed, 0 failed"), "no pass line in output");

    let (code, report) = verify_catalog(&az.url("lake"), &az.env()).expect("verify on Azurite");
    assert_eq!(code, 0, "violations: {report:#}");
    assert!(
        report["rows_checked"].as_u64().unwrap_or(0) > 100,
        "{report:#}"
    );
    let before = catalog_counts(&server);
    server.stop().expect("stop");
    // Everything is in the container: a new server on the same URL has the same catalog.
    let again = Server::start_url(&az.url("lake"), &dir.path().join("data"), &az.env(), &[])
        .expect("reopen on Azurite");
    assert_eq!(
        catalog_counts(&again),
        before,
        "catalog changed across reopen"
    );
    again.stop().expect("stop");
}

/// Row counts of a few DuckLake catalog tables, read over the wire.
fn catalog_counts(server: &Server) -> String {
    let (ok, out) = duckdb_python(
        "155",
        "import sys, psycopg\n\
         c = psycopg.connect(sys.argv[1])\n\
         print('COUNTS', [c.execute(f'SELECT count(*) FROM {t}').fetchone()[0] for t in \
         ('ducklake_snapshot', 'ducklake_table', 'ducklake_column', 'ducklake_data_file')])",
        &[&server.dsn()],
    )
    .expect("client");
    let line = out
        .lines()
        .find(|l| l.starts_with("COUNTS "))
        .unwrap_or_default()
        .to_string();
    assert!(
        ok && line.starts_with("COUNTS [") && !line.contains("[0"),
        "catalog counts: {out}"
    );
    line
}

const CLIENT: &str = r#"
import sys, psycopg
dsn, sql = sys.argv[1], sys.argv[2]
try:
    with psycopg.connect(dsn, autocommit=True) as c:
        cur = c.execute(sql)
        print("OK", cur.fetchall() if cur.description else cur.statusmessage)
except psycopg.Error as e:
    print("ERR", e.sqlstate, str(e).splitlines()[0])
"#;

fn sql(server: &Server, q: &str) -> String {
    let (_, out) = duckdb_python("155", CLIENT, &[&server.dsn(), q]).expect("client");
    out.lines().last().unwrap_or("").to_string()
}

/// Split brain on one catalog in Azurite: a second server opening it fences the first, whose
/// commits then fail with 57P04 and never become visible.
#[test]
fn newer_server_fences_older_one_on_azurite() {
    let az = AzuriteServer::start().expect("Azurite");
    let dir = tempfile::tempdir().expect("tempdir");
    let start = || Server::start_url(&az.url("fenced"), dir.path(), &az.env(), &[]);

    let a = start().expect("start A");
    assert!(sql(&a, "CREATE TABLE t (id BIGINT PRIMARY KEY)").starts_with("OK"));
    assert!(sql(&a, "INSERT INTO t VALUES (1)").starts_with("OK"));

    let b = start().expect("start B on the same catalog");
    let fenced = sql(&a, "INSERT INTO t VALUES (2)");
    assert!(
        fenced.starts_with("ERR 57P04"),
        "old writer must be fenced: {fenced}"
    );
    assert!(fenced.contains("Writer has been fenced"), "{fenced}");
    assert!(sql(&a, "INSERT INTO t VALUES (3)").starts_with("ERR 57P04"));

    assert_eq!(
        sql(&b, "SELECT id FROM t ORDER BY id"),
        "OK [(1,)]",
        "the fenced writes are absent"
    );
    assert!(
        sql(&b, "INSERT INTO t VALUES (4)").starts_with("OK"),
        "the new writer commits"
    );
    drop(a);
    b.stop().expect("stop B");

    let c = start().expect("reopen");
    assert_eq!(
        sql(&c, "SELECT id FROM t ORDER BY id"),
        "OK [(1,), (4,)]",
        "after reopen only 1 and 4 exist"
    );
    c.stop().expect("stop");
}
