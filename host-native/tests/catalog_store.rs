//! The typed writer API (spec: "Writer Protocol State Machine", "CommitResult Contract") over a
//! real SlateDB catalog: what it writes is what DuckDB reads, nothing of an uncommitted writer
//! survives, snapshot ids and counters only move forward (also across reopen), and old
//! snapshots keep showing what was dropped later.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use rocklake::catalog_store::{
    CatalogError, CatalogOptions, CatalogStore, ColumnInfo, MockClock, SnapshotId,
};
use rocklake_core::writer::{ColumnDef, WriterError};

fn catalog_dir(tmp: &tempfile::TempDir) -> String {
    tmp.path().join("catalog").to_string_lossy().into_owned()
}

fn data_dir(tmp: &tempfile::TempDir) -> String {
    format!("{}/", tmp.path().join("data").to_string_lossy())
}

async fn open(tmp: &tempfile::TempDir, clock: Arc<MockClock>) -> CatalogStore {
    CatalogStore::open_with(
        &catalog_dir(tmp),
        CatalogOptions {
            data_path: Some(data_dir(tmp)),
            clock: Box::new(clock),
            ..CatalogOptions::default()
        },
    )
    .await
    .expect("open catalog")
}

fn clock() -> Arc<MockClock> {
    Arc::new(MockClock::at_unix_secs(1_750_000_000))
}

fn events_columns() -> Vec<ColumnDef> {
    vec![
        ColumnDef::new("id", "BIGINT").not_null(),
        ColumnDef::new("who", "VARCHAR"),
        ColumnDef::new("ts", "TIMESTAMPTZ"),
    ]
}

fn names(cols: &[ColumnInfo]) -> Vec<(&str, &str)> {
    cols.iter()
        .map(|c| (c.name.as_str(), c.ty.as_str()))
        .collect()
}

/// The Python of the DuckDB 1.5.5 venv made by scripts/setup.sh.
fn venv_python() -> PathBuf {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let cache = std::env::var_os("ROCKLAKE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(&home).join(".cache/rocklake"));
    let py = cache.join("venv-155/bin/python");
    assert!(
        py.exists(),
        "{} is missing: this test runs a real DuckDB 1.5.5; create the venv with `bash scripts/setup.sh`",
        py.display()
    );
    py
}

fn shared_tools() -> PathBuf {
    let shared = std::env::var_os("ROCKLAKE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("CARGO_MANIFEST_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
                .join("../../shared")
        });
    let tools = shared.join("tools");
    assert!(
        tools.join("dlconn.py").exists(),
        "{} is missing (set ROCKLAKE_SHARED to the shared directory)",
        tools.join("dlconn.py").display()
    );
    tools
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `rocklake serve` over the catalog; returns it and its ATTACH line.
fn start_server(catalog: &str, data_path: &str) -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rocklake"))
        .args(["serve", "--core", "native", "--listen", "127.0.0.1:0"])
        .args(["--catalog", catalog, "--data-path", data_path])
        .args(["--user", "tester", "--password", "test-secret-pw"])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn rocklake");
    let stdout = child.stdout.take().expect("stdout");
    let server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read the ATTACH line");
    assert!(
        line.starts_with("ATTACH "),
        "unexpected first line {line:?}"
    );
    (server, line.trim().to_string())
}

const DUCKDB_SCRIPT: &str = r#"
import json, sys
import dlconn
con = dlconn.connect()
con.execute(sys.argv[1])
out = {}
# DuckDB 1.5.5 quirk (reproduced with a plain ducklake:file catalog, no RockLake): the first
# SHOW ALL TABLES after ATTACH sometimes lists only the tables or only the views of a DuckLake
# catalog. Loading the catalog first makes it complete.
con.execute("SELECT count(*) FROM duckdb_tables()").fetchall()
out["tables"] = [list(map(str, r)) for r in con.execute(
    "SELECT schema, name, column_names, column_types FROM (SHOW ALL TABLES) WHERE database = 'lake' AND name <> 'v' ORDER BY schema, name").fetchall()]
out["describe"] = [[r[0], r[1], r[2]] for r in con.execute("DESCRIBE lake.s1.events").fetchall()]
out["snapshots"] = [[r[0], str(r[1])] for r in con.execute(
    "SELECT snapshot_id, changes FROM ducklake_snapshots('lake') ORDER BY snapshot_id").fetchall()]
con.execute("INSERT INTO lake.s1.events VALUES (1, 'duck', TIMESTAMPTZ '2024-01-02 03:04:05+00')")
out["rows"] = [[r[0], r[1]] for r in con.execute("SELECT id, who FROM lake.s1.events").fetchall()]
out["view"] = [list(r) for r in con.execute("SELECT * FROM lake.s1.v").fetchall()]
out["tmp"] = [[r[0], r[1]] for r in con.execute("DESCRIBE lake.s1.tmp").fetchall()]
out["gone_at_4"] = con.execute("SELECT count(*) FROM lake.s1.gone AT (VERSION => 4)").fetchall()[0][0]
out["views"] = [r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE database_name = 'lake'").fetchall()]
con.execute("DETACH lake")
print("RESULT " + json.dumps(out))
"#;

/// (1) What the writer commits is exactly what a real DuckDB sees through a rocklake server.
#[tokio::test]
async fn duckdb_reads_what_the_writer_wrote() {
    let py = venv_python();
    let tools = shared_tools();
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(tmp.path().join("data")).expect("data dir");
    let cs = open(&tmp, clock()).await;
    let mut w = cs.begin_write().expect("begin");
    w.create_schema("s1").expect("schema");
    w.create_table("s1", "events", &events_columns())
        .expect("table");
    let commit = w
        .create_snapshot(Some("writer-test"), Some("created by the typed writer"))
        .await
        .expect("commit");
    cs.commit_writer(commit);
    assert_eq!(*commit, SnapshotId(1));
    // More shapes DuckDB must read back: a view, a dropped column, a dropped table.
    let mut w = cs.begin_write().expect("begin");
    w.create_table(
        "s1",
        "tmp",
        &[
            ColumnDef::new("a", "INTEGER"),
            ColumnDef::new("b", "DECIMAL(10,2)"),
        ],
    )
    .expect("tmp");
    w.create_view(
        "s1",
        "v",
        "SELECT id, who FROM {DUCKLAKE_CATALOG}.s1.events",
    )
    .expect("view");
    cs.commit_writer(w.create_snapshot(None, None).await.expect("commit 2"));
    let mut w = cs.begin_write().expect("begin");
    w.drop_column("s1", "tmp", "b").expect("drop column");
    cs.commit_writer(w.create_snapshot(None, None).await.expect("commit 3"));
    let mut w = cs.begin_write().expect("begin");
    w.create_table("s1", "gone", &[ColumnDef::new("x", "INTEGER")])
        .expect("gone");
    cs.commit_writer(w.create_snapshot(None, None).await.expect("commit 4"));
    let mut w = cs.begin_write().expect("begin");
    w.drop_table("s1", "gone").expect("drop table");
    cs.commit_writer(w.create_snapshot(None, None).await.expect("commit 5"));
    assert_eq!(cs.latest().snapshot_id, 5);
    cs.close().await.expect("close");
    drop(cs);

    let (server, attach) = start_server(&catalog_dir(&tmp), &data_dir(&tmp));
    let out = Command::new(&py)
        .arg("-c")
        .arg(DUCKDB_SCRIPT)
        .arg(&attach)
        .env("PYTHONPATH", &tools)
        .output()
        .expect("run DuckDB");
    drop(server);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "DuckDB failed:\n{stdout}\n{stderr}");
    let json = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("no RESULT line:\n{stdout}\n{stderr}"));
    let v: serde_json::Value = serde_json::from_str(json).expect("json");
    assert_eq!(
        v["tables"],
        serde_json::json!([
            [
                "s1",
                "events",
                "['id', 'who', 'ts']",
                "['BIGINT', 'VARCHAR', 'TIMESTAMP WITH TIME ZONE']"
            ],
            ["s1", "tmp", "['a']", "['INTEGER']"]
        ]),
        "SHOW ALL TABLES; DuckDB answered {json}"
    );
    assert_eq!(
        v["describe"],
        serde_json::json!([
            ["id", "BIGINT", "NO"],
            ["who", "VARCHAR", "YES"],
            ["ts", "TIMESTAMP WITH TIME ZONE", "YES"]
        ]),
        "DESCRIBE"
    );
    assert_eq!(v["snapshots"][0][0], 0);
    assert_eq!(v["snapshots"][1][0], 1);
    assert!(
        v["snapshots"][1][1]
            .as_str()
            .is_some_and(|c| c.contains("s1") && c.contains("events")),
        "changes of snapshot 1: {}",
        v["snapshots"][1][1]
    );
    assert_eq!(v["rows"], serde_json::json!([[1, "duck"]]));
    assert_eq!(v["view"], serde_json::json!([[1, "duck"]]));
    assert_eq!(v["views"], serde_json::json!(["v"]));
    assert_eq!(v["tmp"], serde_json::json!([["a", "INTEGER"]]));
    assert_eq!(v["gone_at_4"], 0);
    let changes: Vec<&str> = v["snapshots"]
        .as_array()
        .map(|a| a.iter().filter_map(|s| s[1].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        changes,
        vec![
            "{'schemas_created': ['main']}",
            "{'schemas_created': ['s1'], 'tables_created': ['s1.events']}",
            "{'tables_created': ['s1.tmp'], 'views_created': ['s1.v']}",
            "{'tables_altered': ['3']}",
            "{'tables_created': ['s1.gone']}",
            "{'tables_dropped': ['5']}",
        ],
        "ducklake_snapshots() must parse every changes_made the writer wrote"
    );
}

/// (2) A dropped writer, and a writer whose commit is rejected, leave no trace.
#[tokio::test]
async fn dropped_or_rejected_writer_leaves_no_trace() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cs = open(&tmp, clock()).await;
    let base = cs.latest();
    {
        let mut w = cs.begin_write().expect("begin");
        w.create_schema("ghost").expect("schema");
        w.create_table("ghost", "t", &events_columns())
            .expect("table");
        // dropped here without create_snapshot
    }
    let w = cs.begin_write().expect("begin again");
    assert_eq!(w.base(), base, "counters moved although nothing committed");
    drop(w);
    let mut r = cs.read_latest().expect("reader");
    assert!(r
        .schemas()
        .expect("schemas")
        .iter()
        .all(|s| s.name != "ghost"));
    assert!(r.tables().expect("tables").is_empty());
    drop(r);

    // Two writers from the same snapshot: the second one's commit conflicts and is rolled back.
    let mut w1 = cs.begin_write().expect("w1");
    let mut w2 = cs.begin_write().expect("w2");
    w1.create_schema("first").expect("first");
    w2.create_schema("second").expect("second");
    let c1 = w1.create_snapshot(None, None).await.expect("w1 commits");
    cs.commit_writer(c1);
    let e = w2
        .create_snapshot(None, None)
        .await
        .expect_err("w2 must not commit on top of w1");
    assert!(
        matches!(&e, CatalogError::Writer(WriterError::Sql(pg)) if pg.code == "23505" || pg.code == "40001"),
        "unexpected error {e:?}"
    );
    assert!(cs.read_at(SnapshotId(c1.snapshot_id.0 + 1)).is_err());
    cs.close().await.expect("close");
    drop(cs);

    let cs = open(&tmp, clock()).await;
    assert_eq!(cs.latest(), c1.counters());
    let mut r = cs.read_latest().expect("reader");
    let schemas: Vec<String> = r
        .schemas()
        .expect("schemas")
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(schemas, vec!["main", "first"]);
    drop(r);
    cs.close().await.expect("close");
}

/// (3) Snapshot ids are gapless and strictly increasing, also across reopen; (4) the counters
/// never hand out an id twice.
#[tokio::test]
async fn snapshots_and_counters_only_move_forward_across_reopen() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut snapshots = vec![0u64];
    let mut catalog_ids: Vec<u64> = vec![0]; // schema "main"
    let mut last = None;
    for round in 0..3 {
        let mock = clock();
        mock.advance_micros(round * 1_000_000);
        let cs = open(&tmp, mock.clone()).await;
        if let Some(prev) = last {
            assert_eq!(cs.latest(), prev, "reopen lost the latest counters");
        }
        for i in 0..3 {
            mock.advance_micros(1000);
            let mut w = cs.begin_write().expect("begin");
            let base = w.base();
            assert_eq!(w.snapshot_id(), SnapshotId(base.snapshot_id + 1));
            let schema = format!("s{round}_{i}");
            catalog_ids.push(w.create_schema(&schema).expect("schema"));
            catalog_ids.push(
                w.create_table(&schema, "t", &events_columns())
                    .expect("table"),
            );
            if i > 0 {
                let prev = format!("s{round}_{}", i - 1);
                w.drop_column(&prev, "t", "who").expect("drop column");
            }
            let c = w.create_snapshot(None, None).await.expect("commit");
            cs.commit_writer(c);
            assert_eq!(c.snapshot_id.0, base.snapshot_id + 1);
            assert_eq!(c.next_snapshot_id(), c.snapshot_id.0 + 1);
            assert_eq!(c.schema_version(), base.schema_version + 1);
            assert_eq!(c.next_catalog_id(), base.next_catalog_id + 2);
            assert_eq!(c.next_file_id(), base.next_file_id);
            snapshots.push(c.snapshot_id.0);
            last = Some(c.counters());
        }
        cs.close().await.expect("close");
    }
    let cs = open(&tmp, clock()).await;
    let expected: Vec<u64> = (0..=9).collect();
    assert_eq!(
        snapshots, expected,
        "snapshot ids must be gapless and increasing"
    );
    for s in &snapshots {
        cs.read_at(SnapshotId(*s))
            .unwrap_or_else(|e| panic!("snapshot {s} missing: {e}"));
    }
    assert!(cs.read_at(SnapshotId(10)).is_err());
    let mut sorted = catalog_ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        catalog_ids.len(),
        "a catalog id was reused: {catalog_ids:?}"
    );
    assert_eq!(sorted, catalog_ids, "catalog ids must increase");
    assert_eq!(
        cs.latest().next_catalog_id,
        catalog_ids.last().copied().unwrap_or(0) + 1
    );
    cs.close().await.expect("close");
}

/// (5) A reader at an old snapshot still sees the table (and column) dropped later.
#[tokio::test]
async fn old_snapshots_keep_dropped_objects() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cs = open(&tmp, clock()).await;
    let mut w = cs.begin_write().expect("begin");
    w.create_schema("s1").expect("schema");
    w.create_table("s1", "events", &events_columns())
        .expect("events");
    w.create_table("s1", "keep", &[ColumnDef::new("k", "INTEGER")])
        .expect("keep");
    w.create_view("s1", "v", "SELECT 1").expect("view");
    let created = w.create_snapshot(None, None).await.expect("create");
    cs.commit_writer(created);

    let mut w = cs.begin_write().expect("begin");
    let t = w
        .find_table_schema_id("s1", "events")
        .expect("find")
        .expect("events is live");
    let c = w
        .find_column_table_id("s1", "events", "who")
        .expect("find")
        .expect("who is live");
    assert_eq!((c.table_id, c.column_id), (t.table_id, 2));
    w.drop_column("s1", "events", "who").expect("drop column");
    let altered = w.create_snapshot(None, None).await.expect("alter");
    cs.commit_writer(altered);

    let mut w = cs.begin_write().expect("begin");
    w.drop_table("s1", "events").expect("drop table");
    assert!(w
        .find_table_schema_id("s1", "events")
        .expect("find")
        .is_none());
    assert!(matches!(
        w.drop_table("s1", "events"),
        Err(CatalogError::Writer(WriterError::NoSuchTable { .. }))
    ));
    let dropped = w.create_snapshot(None, None).await.expect("drop");
    cs.commit_writer(dropped);

    let mut old = cs.read_at(created).expect("reader at creation");
    assert_eq!(old.snapshot_id(), created.snapshot_id);
    let cols = old
        .columns("s1", "events")
        .expect("columns")
        .expect("events at creation");
    assert_eq!(
        names(&cols),
        vec![("id", "int64"), ("who", "varchar"), ("ts", "timestamptz")]
    );
    assert!(!cols[0].nullable && cols[1].nullable);
    assert_eq!(old.views().expect("views").len(), 1);
    drop(old);

    let mut mid = cs.read_at(altered).expect("reader after alter");
    let cols = mid
        .columns("s1", "events")
        .expect("columns")
        .expect("events after alter");
    assert_eq!(names(&cols), vec![("id", "int64"), ("ts", "timestamptz")]);
    drop(mid);

    let mut now = cs.read_latest().expect("latest");
    assert_eq!(now.snapshot_id(), dropped.snapshot_id);
    let tables: Vec<String> = now
        .tables()
        .expect("tables")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(tables, vec!["keep"]);
    assert!(now.columns("s1", "events").expect("columns").is_none());
    drop(now);

    // still true after reopen
    cs.close().await.expect("close");
    drop(cs);
    let cs = open(&tmp, clock()).await;
    let mut old = cs.read_at(created).expect("reader");
    assert!(old.table("s1", "events").expect("table").is_some());
    drop(old);
    assert!(cs
        .read_latest()
        .expect("latest")
        .table("s1", "events")
        .expect("t")
        .is_none());
    cs.close().await.expect("close");
}
