//! Real DuckDB (1.5.5 / DuckLake 1.0 and 1.4.4 / DuckLake 0.3) against a real RockLake process:
//! the shared 102-step workload and the concurrent-writers workload, every step's outcome
//! compared with what PostgreSQL 15 gave (tests/e2e/run_workload.py).

use std::process::Command;

use rocklake_tests::azurite::AzuriteServer;
use rocklake_tests::{
    http_get, metric_value, repo_root, run_echo, shared_dir, venv_python, verify_catalog, S3Server,
    Server,
};

fn workload(venv: &str, expect: &str, conflict: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server =
        Server::start(&dir.path().join("catalog"), "rocklake", &[]).expect("start rocklake");
    workload_on(&server, dir.path(), venv, expect, conflict);
    server.stop().expect("stop");
}

/// The 1.5.5 workload with the catalog in a bucket of a real S3-compatible server.
#[test]
fn duckdb_155_workload_with_catalog_on_s3() {
    let s3 = S3Server::start().expect("S3 server");
    workload_on_object_store(&s3.url("lake"), &s3.env());
}

/// The same with the catalog in an Azure Blob container (Azurite, installed by setup.sh).
#[test]
fn duckdb_155_workload_with_catalog_on_azurite() {
    let az = AzuriteServer::start().expect("Azurite");
    workload_on_object_store(&az.url("lake"), &az.env());
}

/// The 1.5.5 workload (default inlining) against a server whose catalog is at `url`, then
/// verify, then a reopen that must find the same catalog (everything is in the store).
fn workload_on_object_store(url: &str, env: &[(String, String)]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_url(url, &dir.path().join("data"), env, &[])
        .unwrap_or_else(|e| panic!("start rocklake on {url}: {e:#}"));
    workload_on(&server, dir.path(), "155", "steps-pg155default.json", false);
    let (code, report) = verify_catalog(url, env).expect("verify");
    assert_eq!(code, 0, "violations: {report:#}");
    assert!(
        report["rows_checked"].as_u64().unwrap_or(0) > 100,
        "{report:#}"
    );
    let before = catalog_counts(&server);
    server.stop().expect("stop");
    let again = Server::start_url(url, &dir.path().join("data"), env, &[]).expect("reopen");
    assert_eq!(
        catalog_counts(&again),
        before,
        "catalog changed across reopen"
    );
    again.stop().expect("stop");
}

/// Row counts of a few DuckLake catalog tables, read over the wire.
fn catalog_counts(server: &Server) -> String {
    let (ok, out) = rocklake_tests::duckdb_python(
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

fn workload_on(server: &Server, dir: &std::path::Path, venv: &str, expect: &str, conflict: bool) {
    let py = venv_python(venv).expect("venv");
    let mut cmd = Command::new("python3");
    cmd.arg(repo_root().join("tests/e2e/run_workload.py"))
        .arg("--venv-python")
        .arg(&py)
        .arg("--dsn")
        .arg(server.dsn())
        .arg("--outdir")
        .arg(dir.join("wl"))
        .arg("--expect")
        .arg(if expect == "none" {
            "none".into()
        } else {
            repo_root()
                .join("tests/e2e/expected")
                .join(expect)
                .display()
                .to_string()
        })
        .env("ROCKLAKE_SHARED_TOOLS", shared_dir().join("tools"));
    if conflict {
        cmd.arg("--workload").arg("conflict");
    }
    let (ok, out) = run_echo(&mut cmd).expect("run workload");
    assert!(
        ok,
        "workload {expect} differs from PostgreSQL's outcomes:\n{out}"
    );
    assert!(out.contains(" passed, 0 failed"), "no pass line in output");
}

/// Also scrapes `/metrics` after the workload: the counters saw DuckDB's statements and commits.
#[test]
fn duckdb_155_workload_matches_postgres() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, mport) = Server::start_with_metrics(&dir.path().join("catalog"), "rocklake")
        .expect("start rocklake");
    workload_on(&server, dir.path(), "155", "steps-pg155.json", false);
    let (status, text) = http_get(mport, "/metrics").expect("scrape");
    assert_eq!(status, 200, "{text}");
    for sample in [
        "rocklake_commits_total",
        "rocklake_statements_total{class=\"insert\"}",
        "rocklake_statements_total{class=\"select\"}",
        "rocklake_statements_total{class=\"copy\"}",
        "rocklake_sessions_opened_total",
        "rocklake_last_commit_seq",
        "rocklake_writer_epoch",
        "rocklake_object_store_requests_total{op=\"put\"}",
        "rocklake_heap_bytes",
        "rocklake_mirror_bytes",
    ] {
        let v = metric_value(&text, sample).unwrap_or(0.0);
        assert!(v > 0.0, "{sample} = {v} after the workload:\n{text}");
    }
    // The component's linear memory is its own gauge; the native core's heap is the process's.
    let core_memory = metric_value(&text, "rocklake_core_memory_bytes").unwrap_or(-1.0);
    if std::env::var("ROCKLAKE_CORE").as_deref() == Ok("wasm") {
        assert!(
            core_memory >= 1_048_576.0,
            "core memory {core_memory}:\n{text}"
        );
    } else {
        assert_eq!(core_memory, 0.0, "{text}");
    }
    assert_eq!(metric_value(&text, "rocklake_fenced"), Some(0.0));
    assert_eq!(http_get(mport, "/healthz").expect("healthz").0, 200);
    assert_eq!(http_get(mport, "/readyz").expect("readyz").0, 200);
    assert_eq!(http_get(mport, "/nope").expect("404").0, 404);
    // verify_catalog on what DuckDB wrote, while the server runs.
    let catalog = dir.path().join("catalog");
    let (code, report) = verify_catalog(&catalog.display().to_string(), &[]).expect("verify");
    assert_eq!(code, 0, "violations: {report:#}");
    assert!(
        report["rows_checked"].as_u64().unwrap_or(0) > 100,
        "{report:#}"
    );
    assert!(
        report["ducklake_schemas"]
            .as_array()
            .is_some_and(|a| a.iter().any(|s| s == "public")),
        "{report:#}"
    );
    server.stop().expect("stop");
}

#[test]
fn duckdb_155_default_inlining_matches_postgres() {
    workload("155", "steps-pg155default.json", false);
}

#[test]
fn duckdb_144_workload_matches_postgres() {
    workload("144", "steps-pg144.json", false);
}

#[test]
fn duckdb_155_concurrent_writers_land_exactly_once() {
    workload("155", "steps-pg155conflict.json", true);
}

/// DuckDB 1.4.4 (DuckLake 0.3) retries conflicts with its own queries (JOIN ... USING): three
/// writers at once must still land every row exactly once.
#[test]
fn duckdb_144_concurrent_writers_land_exactly_once() {
    workload("144", "steps-pg144conflict.json", true);
}

const SESSION: &str = r#"
import sys, dlconn
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute(sys.argv[1])
phase = sys.argv[2]
if phase == "write":
    con.execute("CREATE TABLE lake.kept (id BIGINT, name VARCHAR)")
    con.execute("INSERT INTO lake.kept VALUES (1, 'one'), (2, 'two')")
    con.execute("INSERT INTO lake.kept VALUES (3, 'three')")
    con.execute("DELETE FROM lake.kept WHERE id = 2")
rows = con.execute("SELECT id, name FROM lake.kept ORDER BY id").fetchall()
snaps = con.execute("SELECT count(*) FROM ducklake_snapshots('lake')").fetchone()[0]
print("ROWS", rows)
print("SNAPSHOTS", snaps)
"#;

/// Everything committed survives a restart of RockLake between two DuckDB sessions, and a
/// hard kill (SIGKILL) too.
#[test]
fn restart_between_duckdb_sessions_keeps_everything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    let server = Server::start(&catalog, "rocklake", &[]).expect("start");
    let (ok, first) = rocklake_tests::duckdb_python("155", SESSION, &[&server.attach, "write"])
        .expect("session 1");
    assert!(ok, "first session failed");
    server.stop().expect("graceful stop");

    let server = Server::start(&catalog, "rocklake", &[]).expect("restart");
    let (ok, second) = rocklake_tests::duckdb_python("155", SESSION, &[&server.attach, "read"])
        .expect("session 2");
    assert!(ok, "second session failed");
    assert!(
        second.contains("ROWS [(1, 'one'), (3, 'three')]"),
        "rows after restart: {second}"
    );
    assert_eq!(
        first.lines().find(|l| l.starts_with("SNAPSHOTS")),
        second.lines().find(|l| l.starts_with("SNAPSHOTS")),
        "snapshot history changed across restart"
    );
    server.kill().expect("SIGKILL");

    let server = Server::start(&catalog, "rocklake", &[]).expect("restart after kill");
    let (ok, third) = rocklake_tests::duckdb_python("155", SESSION, &[&server.attach, "read"])
        .expect("session 3");
    assert!(ok, "third session failed");
    assert_eq!(
        second.lines().collect::<Vec<_>>(),
        third.lines().collect::<Vec<_>>(),
        "state changed across SIGKILL"
    );
    server.stop().expect("stop");
}

/// DuckDB 1.4 (DuckLake 0.3) makes a lake: tables, inlined and Parquet data, deletes, a view,
/// an added column with a default.
const LAKE_V03: &str = r#"
import sys, dlconn
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute(f"ATTACH 'ducklake:postgres:{sys.argv[1]}' AS lake (DATA_PATH '{sys.argv[2]}')")
con.execute("CREATE TABLE lake.a (i INTEGER, s VARCHAR DEFAULT 'dflt')")
con.execute("INSERT INTO lake.a SELECT range, 'v' || range FROM range(100)")
con.execute("INSERT INTO lake.a (i) VALUES (1000)")
con.execute("CREATE TABLE lake.b AS SELECT range AS k FROM range(5000)")
con.execute("DELETE FROM lake.b WHERE k % 7 = 0")
con.execute("ALTER TABLE lake.a ADD COLUMN extra BIGINT DEFAULT 42")
con.execute("CREATE VIEW lake.v AS SELECT count(*) AS n FROM lake.b")
print("VERSION", con.execute("SELECT value FROM __ducklake_metadata_lake.ducklake_metadata WHERE key = 'version'").fetchall())
"#;

/// DuckDB 1.5 (DuckLake 1.0) opens it with AUTOMATIC_MIGRATION, reads it and writes to it.
const LAKE_V10: &str = r#"
import sys, json, dlconn
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute(f"ATTACH 'ducklake:postgres:{sys.argv[1]}' AS lake (DATA_PATH '{sys.argv[2]}', AUTOMATIC_MIGRATION TRUE)")
q = lambda sql: [list(r) for r in con.execute(sql).fetchall()]
out = {"version": q("SELECT value FROM __ducklake_metadata_lake.ducklake_metadata WHERE key = 'version'")}
out["a"] = q("SELECT count(*), sum(i), count(extra), min(s), max(s) FROM lake.a")
out["v"] = q("SELECT * FROM lake.v")
con.execute("INSERT INTO lake.a VALUES (2000, 'new', 7)")
con.execute("CREATE TABLE lake.c (x INTEGER DEFAULT 5, y VARCHAR)")
con.execute("INSERT INTO lake.c (y) VALUES ('q')")
con.execute("DELETE FROM lake.b WHERE k < 10")
out["after"] = q("SELECT (SELECT count(*) FROM lake.a), (SELECT count(*) FROM lake.b), (SELECT list(x) FROM lake.c)")
print("RESULT", json.dumps(out))
"#;

/// The migrated catalog itself, as PostgreSQL's information_schema and rows describe it (no
/// UUIDs, times or paths, which differ between runs).
const CATALOG_DUMP: &str = r#"
import sys, json, psycopg
out = {}
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    for (t,) in c.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1").fetchall():
        cols = c.execute("SELECT column_name, data_type, column_default FROM information_schema.columns WHERE table_schema = 'public' AND table_name = %s ORDER BY ordinal_position", (t,)).fetchall()
        out[t] = {"columns": cols, "rows": c.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]}
    out["column_rows"] = c.execute("SELECT column_id, table_id, column_name, column_type, default_value, default_value_type, default_value_dialect, nulls_allowed, begin_snapshot, end_snapshot FROM ducklake_column ORDER BY column_id, begin_snapshot").fetchall()
    out["file_rows"] = c.execute("SELECT data_file_id, table_id, begin_snapshot, end_snapshot, record_count, row_id_start, mapping_id, partial_max FROM ducklake_data_file ORDER BY 1").fetchall()
    out["schema_versions"] = c.execute("SELECT begin_snapshot, schema_version, table_id FROM ducklake_schema_versions ORDER BY 1, 3").fetchall()
    out["metadata"] = c.execute("SELECT key, value FROM ducklake_metadata WHERE key NOT IN ('data_path', 'created_by') ORDER BY 1").fetchall()
print("RESULT", json.dumps(out, default=str))
"#;

/// A PostgreSQL 15 and a RockLake, each with a directory for its lake's data files: the same
/// DuckDB script runs against both and their outcomes are compared.
struct Pair {
    pg: rocklake_tests::Postgres,
    rl: Server,
    dir: tempfile::TempDir,
}

impl Pair {
    fn start() -> Pair {
        let pg = rocklake_tests::Postgres::start().expect("postgres");
        let dir = tempfile::tempdir().expect("tempdir");
        let rl = Server::start(&dir.path().join("catalog"), "rocklake", &[]).expect("rocklake");
        Pair { pg, rl, dir }
    }

    /// (name, DSN, data directory) of PostgreSQL, then of RockLake.
    fn servers(&self) -> [(&'static str, String, String); 2] {
        let data = |name: &str| {
            let d = self.dir.path().join(format!("{name}-files/"));
            d.to_str().expect("utf-8 path").to_string()
        };
        [
            ("postgres", self.pg.dsn(), data("postgres")),
            ("rocklake", self.rl.dsn(), data("rocklake")),
        ]
    }

    fn stop(self) {
        self.rl.stop().expect("stop");
    }
}

/// A lake DuckDB 1.4 made, migrated by DuckDB 1.5 (`AUTOMATIC_MIGRATION`): DuckLake's
/// migration adds and drops columns, updates rows through DuckDB (ctids read, COPY into a
/// temporary table with `NULL ''`, `UPDATE … FROM` it by `ctid = '(b,o)'`-text), and must
/// end as it ends on PostgreSQL: the same answers, the same catalog tables, columns and rows.
#[test]
fn duckdb_144_lake_migrates_under_155_as_on_postgres() {
    let pair = Pair::start();
    let mut results = Vec::new();
    for (name, dsn, data) in pair.servers() {
        let data = data.as_str();
        let (ok, made) =
            rocklake_tests::duckdb_python("144", LAKE_V03, &[&dsn, data]).expect("duckdb 1.4");
        assert!(ok, "{name}: DuckDB 1.4 could not make the lake");
        assert!(made.contains("VERSION [('0.3',)]"), "{name}: {made}");
        let (ok, opened) =
            rocklake_tests::duckdb_python("155", LAKE_V10, &[&dsn, data]).expect("duckdb 1.5");
        assert!(ok, "{name}: DuckDB 1.5 could not migrate and use the lake");
        let (ok, dump) =
            rocklake_tests::duckdb_python("155", CATALOG_DUMP, &[&dsn]).expect("catalog dump");
        assert!(ok, "{name}: catalog dump failed");
        results.push((
            rocklake_tests::result_json(&opened),
            rocklake_tests::result_json(&dump),
        ));
    }
    let (pg_answers, pg_catalog) = &results[0];
    let (rl_answers, rl_catalog) = &results[1];
    assert_eq!(pg_answers["version"], serde_json::json!([["1.0"]]));
    assert_eq!(rl_answers, pg_answers, "DuckDB's answers differ");
    assert_eq!(rl_catalog, pg_catalog, "the migrated catalogs differ");
    pair.stop();
}

/// DuckDB with `pg_staleness_query_enabled` (DuckDB 1.5.5's check, before every catalog
/// access, of `pg_class.xmin` for the schema's relations): DuckLake on the catalog works with
/// it, and a table of the catalog database DuckDB has cached is reloaded after another client
/// adds a column — and stays stale without the check.
const STALENESS: &str = r#"
import sys, json, dlconn, psycopg
dsn, data = sys.argv[1], sys.argv[2]
def ext(sql):
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(sql)
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute("SET pg_staleness_query_enabled = true")
q = lambda c, sql: [list(r) for r in c.execute(sql).fetchall()]
con.execute(f"ATTACH 'ducklake:postgres:{dsn}' AS lake (DATA_PATH '{data}')")
con.execute("CREATE TABLE lake.t (i INTEGER)")
con.execute("INSERT INTO lake.t VALUES (1), (2)")
con.execute("ALTER TABLE lake.t ADD COLUMN j VARCHAR DEFAULT 'd'")
out = {"lake": q(con, "SELECT * FROM lake.t ORDER BY i")}
ext("CREATE TABLE ext (a INTEGER)")
ext("INSERT INTO ext VALUES (1)")
con.execute(f"ATTACH '{dsn}' AS pg (TYPE postgres)")
stale = dlconn.connect(exts=("postgres",))
stale.execute(f"ATTACH '{dsn}' AS pg (TYPE postgres)")
out["before"] = [q(c, "SELECT * FROM pg.public.ext") for c in (con, stale)]
ext("ALTER TABLE ext ADD COLUMN b VARCHAR DEFAULT 'x'")
out["added"] = [q(c, "SELECT * FROM pg.public.ext") for c in (con, stale)]
ext("ALTER TABLE ext DROP COLUMN b")
try:
    out["dropped"] = q(con, "SELECT * FROM pg.public.ext")
except Exception as e:
    out["dropped"] = type(e).__name__
print("RESULT", json.dumps(out))
"#;

#[test]
fn duckdb_staleness_check_reloads_as_on_postgres() {
    let pair = Pair::start();
    let mut results = Vec::new();
    for (name, dsn, data) in pair.servers() {
        let (ok, out) =
            rocklake_tests::duckdb_python("155", STALENESS, &[&dsn, &data]).expect("duckdb");
        assert!(ok, "{name}: DuckDB failed with the staleness check on");
        results.push(rocklake_tests::result_json(&out));
    }
    let (mut pg_out, mut rl_out) = (results[0].clone(), results[1].clone());
    assert_eq!(pg_out["lake"], serde_json::json!([[1, "d"], [2, "d"]]));
    // With the check DuckDB sees the new column; without it, its cached table.
    assert_eq!(
        pg_out["added"],
        serde_json::json!([[[1, "x"]], [[1]]]),
        "PostgreSQL's outcome changed"
    );
    // A dropped column leaves PostgreSQL's pg_class row (and xmin) as it was, so DuckDB reads
    // the stale table there and fails; RockLake writes the definition anew and DuckDB reloads.
    assert_eq!(rl_out["dropped"], serde_json::json!([[1]]));
    for out in [&mut pg_out, &mut rl_out] {
        out.as_object_mut().map(|o| o.remove("dropped"));
    }
    assert_eq!(rl_out, pg_out, "DuckDB's answers differ");
    pair.stop();
}

/// The catalog database attached by DuckDB's `postgres` extension itself (`TYPE postgres`), as
/// a user inspects or edits it, under one setting that changes how the extension reads:
/// introspection (with comments set through it), scans with filters pushed down,
/// `postgres_query`, and a table DuckDB creates, updates and deletes from. Rows of `public` only (the system catalogs listed differ by
/// decision record 0021) and no times.
const PLAIN_ATTACH: &str = r#"
import sys, json, dlconn
dsn, data, setting = sys.argv[1], sys.argv[2], sys.argv[3]
if setting == "make":
    con = dlconn.connect(exts=("ducklake", "postgres"))
    con.execute(f"ATTACH 'ducklake:postgres:{dsn}' AS lake (DATA_PATH '{data}')")
    con.execute("CREATE TABLE lake.t (i INTEGER, s VARCHAR)")
    con.execute("INSERT INTO lake.t VALUES (1, 'a'), (2, 'b')")
    # Comments set through DuckDB's postgres extension (its COMMENT ON only alters DuckDB's own
    # catalog entries; postgres_execute runs it on the server).
    con.execute(f"ATTACH '{dsn}' AS pg (TYPE postgres)")
    con.execute("CALL postgres_execute('pg', 'COMMENT ON TABLE ducklake_snapshot IS ''one row per snapshot''')")
    con.execute("CALL postgres_execute('pg', 'COMMENT ON COLUMN ducklake_snapshot.snapshot_id IS ''the key''')")
    # A view over the catalog, as an operator would make one.
    con.execute("CALL postgres_execute('pg', 'CREATE VIEW lake_tables AS SELECT table_id, table_name FROM ducklake_table')")
    sys.exit(0)
con = dlconn.connect(exts=("postgres",))
if setting:
    con.execute(f"SET {setting}")
con.execute(f"ATTACH '{dsn}' AS pg (TYPE postgres)")
out = {}
def q(k, sql):
    try:
        out[k] = [list(map(repr, r)) for r in con.execute(sql).fetchall()]
    except Exception as e:
        out[k] = "error " + type(e).__name__ + ": " + str(e)[:300]
q("tables", "SELECT table_name FROM duckdb_tables() WHERE database_name = 'pg' AND schema_name = 'public' ORDER BY ALL")
q("columns", "SELECT table_name, column_name, data_type, is_nullable FROM duckdb_columns() WHERE database_name = 'pg' AND schema_name = 'public' ORDER BY ALL")
q("comments", "SELECT table_name, comment FROM duckdb_tables() WHERE database_name = 'pg' AND comment IS NOT NULL ORDER BY ALL")
q("column comments", "SELECT table_name, column_name, comment FROM duckdb_columns() WHERE database_name = 'pg' AND comment IS NOT NULL ORDER BY ALL")
q("snapshots", "SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM pg.public.ducklake_snapshot ORDER BY ALL")
q("columns of t", "SELECT column_id, column_name, column_type, nulls_allowed FROM pg.public.ducklake_column ORDER BY ALL")
q("filtered", "SELECT count(*), min(column_name) FROM pg.public.ducklake_column WHERE column_id > 0 AND column_name LIKE 'i%'")
q("view", "SELECT * FROM pg.public.lake_tables ORDER BY ALL")
q("postgres_query", "SELECT * FROM postgres_query('pg', 'SELECT count(*) AS n, max(table_name) FROM ducklake_table')")
q("create", "CREATE TABLE pg.public.made_by_duckdb AS SELECT range AS r, 'x' || range AS s, range / 3 AS d FROM range(50)")
q("update", "UPDATE pg.public.made_by_duckdb SET s = 'y' WHERE r % 7 = 2")
q("delete", "DELETE FROM pg.public.made_by_duckdb WHERE r > 40 OR d = 4")
q("insert", "INSERT INTO pg.public.made_by_duckdb VALUES (100, NULL, -1)")
q("read", "SELECT * FROM pg.public.made_by_duckdb ORDER BY r")
q("drop", "DROP TABLE pg.public.made_by_duckdb")
print("RESULT", json.dumps(out))
"#;

#[test]
fn duckdb_postgres_attach_under_its_settings_as_on_postgres() {
    let pair = Pair::start();
    let servers = pair.servers();
    for (name, dsn, data) in &servers {
        let (ok, _) = rocklake_tests::duckdb_python("155", PLAIN_ATTACH, &[dsn, data, "make"])
            .expect("duckdb");
        assert!(ok, "{name}: could not make the lake");
    }
    for setting in [
        "",
        "pg_use_information_schema_introspection = true",
        "pg_use_binary_copy = false",
        "pg_use_text_protocol = true",
        "pg_use_ctid_scan = false",
        "pg_pages_per_task = 1",
        "pg_experimental_filter_pushdown = false",
        "pg_staleness_query_enabled = true",
        "pg_array_as_varchar = true",
    ] {
        let outs: Vec<serde_json::Value> = servers
            .iter()
            .map(|(name, dsn, _)| {
                let (ok, out) =
                    rocklake_tests::duckdb_python("155", PLAIN_ATTACH, &[dsn, "-", setting])
                        .expect("duckdb");
                assert!(ok, "{name} [{setting}]: DuckDB failed");
                rocklake_tests::result_json(&out)
            })
            .collect();
        let read = outs[0]["read"].as_array().map(Vec::len);
        assert_eq!(read, Some(41), "[{setting}] PostgreSQL's outcome changed");
        let view = outs[0]["view"].as_array().map(Vec::len);
        assert_eq!(view, Some(1), "[{setting}] PostgreSQL's view read changed");
        // (Read from pg_description; information_schema introspection reads no comments.)
        if setting.is_empty() {
            assert_eq!(
                outs[0]["column comments"].as_array().map(Vec::len),
                Some(1),
                "PostgreSQL's outcome changed"
            );
        }
        assert_eq!(outs[1], outs[0], "[{setting}] DuckDB's answers differ");
    }
    pair.stop();
}

/// The indexes DuckLake's operators add to a PostgreSQL catalog (duckdb/ducklake#1147 for
/// `ducklake_file_column_stats`, and those PostHog's tools make, one of them partial), made
/// while DuckDB works on the lake: DuckDB attaches, writes and reads as before, its catalog
/// load lists them, and the answers are PostgreSQL's. On RockLake the lake's entries and rows
/// then agree (`rocklake_verify()`).
const INDEXED_LAKE: &str = r#"
import sys, json, dlconn, psycopg
dsn, data = sys.argv[1], sys.argv[2]
def ext(sql):
    with psycopg.connect(dsn, autocommit=True) as c:
        cur = c.execute(sql)
        return cur.fetchall() if cur.description else None
q = lambda c, sql: [list(r) for r in c.execute(sql).fetchall()]
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute(f"ATTACH 'ducklake:postgres:{dsn}' AS lake (DATA_PATH '{data}')")
con.execute("CREATE TABLE lake.t (i INTEGER, s VARCHAR)")
for k in range(4):
    con.execute(f"INSERT INTO lake.t VALUES ({k}, 'v{k}')")
for sql in [
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS idx_fcs_table_col ON public.ducklake_file_column_stats (table_id, column_id)",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS idx_ducklake_data_file_compaction ON public.ducklake_data_file (table_id, end_snapshot, file_size_bytes)",
    "CREATE INDEX IF NOT EXISTS ducklake_name_mapping_mapping_idx ON public.ducklake_name_mapping (mapping_id)",
    "CREATE INDEX IF NOT EXISTS idx_fcs_table_col ON public.ducklake_file_column_stats (table_id, column_id)",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS idx_ducklake_delete_file_compaction ON public.ducklake_delete_file (table_id, end_snapshot, file_size_bytes) WHERE end_snapshot IS NULL",
]:
    ext(sql)
out = {}
out["indexes"] = ext("SELECT tablename, indexname, indexdef FROM pg_indexes WHERE indexname LIKE '%idx%' OR indexname LIKE 'idx%' ORDER BY 1, 2")
# The same DuckDB writes on; another attaches after the indexes exist.
for k in range(4, 8):
    con.execute(f"INSERT INTO lake.t VALUES ({k}, 'v{k}')")
other = dlconn.connect(exts=("ducklake", "postgres"))
other.execute(f"ATTACH 'ducklake:postgres:{dsn}' AS lake (DATA_PATH '{data}')")
other.execute("DELETE FROM lake.t WHERE i % 3 = 0")
other.execute("UPDATE lake.t SET s = s || '!' WHERE i % 3 = 1")
other.execute("CREATE TABLE lake.u AS SELECT range AS r FROM range(10)")
out["t"] = q(con, "SELECT * FROM lake.t ORDER BY i")
out["t where"] = q(other, "SELECT count(*), min(i), max(s) FROM lake.t WHERE i > 2 AND s LIKE 'v%'")
out["u"] = q(con, "SELECT count(*), sum(r) FROM lake.u")
out["snapshots"] = q(con, "SELECT snapshot_id, changes FROM lake.snapshots() ORDER BY snapshot_id")
ext("DROP INDEX idx_ducklake_data_file_compaction")
con.execute("INSERT INTO lake.t VALUES (100, 'after the drop')")
out["files"] = ext("SELECT table_id, count(*), count(end_snapshot) FROM ducklake_data_file WHERE table_id IN (SELECT table_id FROM ducklake_table WHERE table_name = 't') GROUP BY 1")
out["stats"] = ext("SELECT count(*) FROM ducklake_file_column_stats WHERE table_id = (SELECT max(table_id) FROM ducklake_table WHERE table_name = 't') AND column_id = 1")
out["after drop"] = q(other, "SELECT count(*) FROM lake.t")
print("RESULT", json.dumps(out, default=str))
"#;

#[test]
fn duckdb_lake_with_operators_indexes_works_as_on_postgres() {
    let pair = Pair::start();
    let mut results = Vec::new();
    for (name, dsn, data) in pair.servers() {
        let (ok, out) =
            rocklake_tests::duckdb_python("155", INDEXED_LAKE, &[&dsn, &data]).expect("duckdb");
        assert!(ok, "{name}: DuckDB failed on a lake with indexes");
        results.push(rocklake_tests::result_json(&out));
    }
    assert_eq!(results[1], results[0], "DuckDB's answers differ");
    let indexes = results[0]["indexes"].as_array().map_or(0, Vec::len);
    assert_eq!(indexes, 4, "{}", results[0]["indexes"]);
    assert_eq!(results[0]["after drop"], serde_json::json!([[6]]));
    let verify = rocklake_tests::sql_line(&pair.rl, "SELECT * FROM rocklake_verify()");
    assert!(
        verify.starts_with("OK [('summary', ") && verify.ends_with(", 'ok')]"),
        "rocklake_verify() reports problems: {verify}"
    );
    pair.stop();
}
