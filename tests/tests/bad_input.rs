//! Bad input, answered as PostgreSQL answers it: the same statements against a real PostgreSQL 15
//! and RockLake must give the same SQLSTATE (or the same rows), and every session stays usable.

use rocklake_tests::{duckdb_python, Postgres, Server};

const RUNNER: &str = r#"
import sys, json, psycopg
dsn = sys.argv[1]
stmts = json.loads(sys.argv[2])
out = []
with psycopg.connect(dsn, autocommit=True, cursor_factory=psycopg.ClientCursor) as c:
    for s in stmts:
        try:
            cur = c.execute(s)
            out.append(["ok", cur.fetchall() if cur.description else cur.statusmessage])
        except psycopg.Error as e:
            out.append(["err", e.sqlstate])
        # the session must keep working after every statement
        alive = c.execute("SELECT 1").fetchall() == [(1,)]
        out[-1].append(alive)
print("RESULT", json.dumps(out, default=str))
"#;

const SETUP: &[&str] = &[
    "CREATE TABLE ducklake_snapshot (snapshot_id BIGINT PRIMARY KEY, schema_version BIGINT NOT NULL, note VARCHAR(4))",
    "INSERT INTO ducklake_snapshot VALUES (1, 1, 'a')",
];

const CORPUS: &[&str] = &[
    "SELEC 1",
    "SELECT * FROM no_such_table",
    "SELECT no_such_column FROM ducklake_snapshot",
    "INSERT INTO ducklake_snapshot VALUES (1, 1, 'b')",
    "INSERT INTO ducklake_snapshot VALUES (2, NULL, 'b')",
    "INSERT INTO ducklake_snapshot VALUES ('x', 1, 'b')",
    "INSERT INTO ducklake_snapshot VALUES (99999999999999999999, 1, 'b')",
    "INSERT INTO ducklake_snapshot VALUES (3, 1, 'toolong')",
    "SELECT snapshot_id FROM ducklake_snapshot WHERE snapshot_id = 'abc'",
    "SELECT 1/0",
    "SELECT (SELECT snapshot_id FROM ducklake_snapshot UNION ALL SELECT 2)",
    "SELECT snapshot_id, count(*) FROM ducklake_snapshot",
    "CREATE TABLE ducklake_snapshot (x BIGINT)",
    "CREATE TABLE IF NOT EXISTS ducklake_snapshot (x BIGINT)",
    "DROP TABLE no_such_table",
    "DROP TABLE IF EXISTS no_such_table",
    "CREATE SCHEMA public",
    "CREATE SCHEMA IF NOT EXISTS public",
    "COMMIT",
    "ROLLBACK",
    "SELECT snapshot_id FROM ducklake_snapshot WHERE snapshot_id = '1'",
    "SELECT no_such_function(1)",
    "SELECT 1 + 'a'",
    "SELECT CAST('nope' AS UUID)",
    "SELECT '\\xZZ'::bytea",
    "SELECT snapshot_id FROM ducklake_snapshot ORDER BY 5",
    "UPDATE ducklake_snapshot SET no_col = 1",
    "DELETE FROM no_such_table",
    "SELECT ctid, snapshot_id FROM ducklake_snapshot",
];

fn run(dsn: &str, stmts: &[&str]) -> serde_json::Value {
    let json = serde_json::to_string(stmts).expect("json");
    let (ok, out) = duckdb_python("155", RUNNER, &[dsn, &json]).expect("runner");
    assert!(ok, "runner failed");
    let line = out
        .lines()
        .find(|l| l.starts_with("RESULT "))
        .expect("RESULT line");
    serde_json::from_str(&line[7..]).expect("parse result")
}

#[test]
fn bad_input_gets_postgres_errors_and_sessions_survive() {
    let pg = Postgres::start().expect("postgres");
    let dir = tempfile::tempdir().expect("tempdir");
    let rl = Server::start(&dir.path().join("catalog"), "postgres", &[]).expect("rocklake");
    run(&pg.dsn(), SETUP);
    run(&rl.dsn(), SETUP);
    let a = run(&pg.dsn(), CORPUS);
    let b = run(&rl.dsn(), CORPUS);
    let mut mismatches = Vec::new();
    for (i, stmt) in CORPUS.iter().enumerate() {
        let (x, y) = (&a[i], &b[i]);
        assert_eq!(
            y[2],
            serde_json::Value::Bool(true),
            "session unusable after {stmt:?}"
        );
        if x != y {
            mismatches.push(format!("{stmt}\n    postgres: {x}\n    rocklake: {y}"));
        }
    }
    println!(
        "{} of {} statements answered identically",
        CORPUS.len() - mismatches.len(),
        CORPUS.len()
    );
    assert!(
        mismatches.is_empty(),
        "differences:\n{}",
        mismatches.join("\n")
    );
    rl.stop().expect("stop");
}
