//! Moving a DuckLake catalog from PostgreSQL to RockLake with PostgreSQL's own tools:
//! `pg_dump` of a lake DuckDB made on PostgreSQL 15, restored into RockLake with `psql`
//! (`ALTER TABLE … OWNER TO`, `COPY … FROM stdin`, then `ALTER TABLE ONLY … ADD CONSTRAINT …
//! PRIMARY KEY`, which moves the rows already there under their key). DuckDB then reads the
//! same lake from RockLake, writes to it as it writes to PostgreSQL's, and everything stays
//! after a restart.

use std::process::Command;

use rocklake_tests::{Postgres, Server};

/// DuckDB 1.5 makes a lake: inlined and Parquet data, deletes, an update, an added column, a
/// second schema, a view.
const MAKE: &str = r#"
import sys, dlconn
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute(f"ATTACH 'ducklake:postgres:{sys.argv[1]}' AS lake (DATA_PATH '{sys.argv[2]}')")
con.execute("CREATE TABLE lake.a (i INTEGER, s VARCHAR)")
con.execute("INSERT INTO lake.a VALUES (1, 'one'), (2, 'two'), (3, 'three')")
con.execute("INSERT INTO lake.a SELECT range, 'r' || range FROM range(10, 2010)")
con.execute("DELETE FROM lake.a WHERE i % 5 = 0")
con.execute("UPDATE lake.a SET s = 'updated' WHERE i = 2")
con.execute("ALTER TABLE lake.a ADD COLUMN extra BIGINT DEFAULT 42")
con.execute("CREATE SCHEMA lake.other")
con.execute("CREATE TABLE lake.other.b AS SELECT range AS k, range * 2 AS v FROM range(3000)")
con.execute("CREATE VIEW lake.other.v AS SELECT count(*) AS n, sum(v) AS total FROM lake.other.b")
print("MADE")
"#;

/// DuckDB's answers over the lake (`read`), or after writing to it (`write`).
const ANSWERS: &str = r#"
import sys, json, dlconn
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute(f"ATTACH 'ducklake:postgres:{sys.argv[1]}' AS lake (DATA_PATH '{sys.argv[2]}')")
q = lambda sql: [list(r) for r in con.execute(sql).fetchall()]
if sys.argv[3] == "write":
    con.execute("INSERT INTO lake.a VALUES (5000, 'later', 1)")
    con.execute("DELETE FROM lake.other.b WHERE k < 100")
    con.execute("CREATE TABLE lake.c (x INTEGER)")
    con.execute("INSERT INTO lake.c VALUES (7)")
out = {
    "a": q("SELECT count(*), sum(i), min(s), max(s), sum(extra) FROM lake.a"),
    "a2": q("SELECT * FROM lake.a WHERE i < 4 ORDER BY i"),
    "v": q("SELECT * FROM lake.other.v"),
    "tables": q("SELECT table_name, schema_id, table_id FROM ducklake_table_info('lake') ORDER BY ALL"),
    "snapshots": q("SELECT snapshot_id, schema_version FROM ducklake_snapshots('lake') ORDER BY 1"),
    "old": q("SELECT count(*) FROM lake.a AT (VERSION => 3)"),
}
print("RESULT", json.dumps(out, default=str))
"#;

/// Every catalog table's definition and rows, through psycopg.
const CATALOG: &str = r#"
import sys, json, psycopg
out = {}
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    tables = [t for (t,) in c.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")]
    for t in tables:
        cols = c.execute("SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = 'public' AND table_name = %s ORDER BY ordinal_position", (t,)).fetchall()
        out[t] = {"columns": cols, "rows": c.execute(f'SELECT * FROM "{t}" ORDER BY {", ".join(str(i + 1) for i in range(len(cols)))}').fetchall()}
    out["keys"] = c.execute("SELECT conrelid::regclass::text, conname, contype, conkey FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND contype = 'p' ORDER BY 1").fetchall()
print("RESULT", json.dumps(out, default=str))
"#;

fn duckdb(script: &str, args: &[&str]) -> serde_json::Value {
    let (ok, out) = rocklake_tests::duckdb_python("155", script, args).expect("python");
    assert!(ok, "script failed with {args:?}");
    rocklake_tests::result_json(&out)
}

/// Runs a PostgreSQL client program; its stdout. Fails on a non-zero exit or an ERROR.
fn client(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("ERROR"),
        "{program} {args:?}: {stderr}"
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn pg_dump_of_a_postgres_lake_restores_into_rocklake() {
    let pg = Postgres::start().expect("postgres");
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    let files = dir.path().join("files/");
    let files = files.to_str().expect("utf-8 path");
    let made = rocklake_tests::duckdb_python("155", MAKE, &[&pg.dsn(), files]).expect("python");
    assert!(
        made.0 && made.1.contains("MADE"),
        "DuckDB could not make the lake"
    );

    let dump = dir.path().join("lake.sql");
    let dump_path = dump.to_str().expect("utf-8 path");
    client("pg_dump", &["-d", &pg.dsn(), "-f", dump_path]);
    let text = std::fs::read_to_string(&dump).expect("read the dump");
    assert!(
        text.contains("ADD CONSTRAINT ducklake_snapshot_pkey PRIMARY KEY (snapshot_id)")
            && text.contains("OWNER TO postgres")
            && text.contains("COPY public.ducklake_data_file"),
        "not the dump this test is about:\n{text}"
    );

    // RockLake's role is PostgreSQL's (`postgres`), so the dump's OWNER TO names it.
    let rl = Server::start(&catalog, "postgres", &[]).expect("rocklake");
    let restored = client(
        "psql",
        &[
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            &rl.dsn(),
            "-f",
            dump_path,
        ],
    );
    assert!(!restored.contains("ERROR"), "{restored}");

    // The catalog itself: the same definitions, primary keys and rows.
    let want = duckdb(CATALOG, &[&pg.dsn()]);
    let got = duckdb(CATALOG, &[&rl.dsn()]);
    let tables = want.as_object().expect("object").len();
    assert!(tables > 20, "{tables} catalog tables");
    assert_eq!(got, want, "the restored catalog differs");
    assert_eq!(
        got["keys"].as_array().map(Vec::len),
        Some(5),
        "DuckLake's five primary keys: {}",
        got["keys"]
    );

    // DuckDB reads the lake from RockLake as from PostgreSQL, writes to both alike.
    let read = duckdb(ANSWERS, &[&rl.dsn(), files, "read"]);
    assert_eq!(read, duckdb(ANSWERS, &[&pg.dsn(), files, "read"]));
    assert_eq!(read["a2"][1][1], "updated", "{read}");
    let written = duckdb(ANSWERS, &[&rl.dsn(), files, "write"]);
    assert_eq!(written, duckdb(ANSWERS, &[&pg.dsn(), files, "write"]));
    assert_ne!(
        written["snapshots"], read["snapshots"],
        "the writes made snapshots"
    );

    // The rows moved under their keys survive a restart, and verify finds nothing wrong.
    rl.stop().expect("stop");
    let rl = Server::start(&catalog, "postgres", &[]).expect("restart");
    assert_eq!(duckdb(ANSWERS, &[&rl.dsn(), files, "read"]), written);
    rl.stop().expect("stop");
    let (code, report) =
        rocklake_tests::verify_catalog(catalog.to_str().expect("utf-8 path"), &[]).expect("verify");
    assert_eq!(code, 0, "verify: {report}");
}
