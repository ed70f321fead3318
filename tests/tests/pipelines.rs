//! The extended protocol's implicit transaction, as PostgreSQL 15 keeps it: the Executes
//! between two Syncs run in one transaction that commits at the Sync, so a pipeline (psycopg's
//! `pipeline()`, `executemany`, a JDBC batch, asyncpg's `executemany`) commits all of its
//! statements or, after an error, none; `now()` is one value across it; a COMMIT inside it
//! commits what came before; a BEGIN inside it opens a block that outlives the Sync. Every
//! outcome is compared with PostgreSQL's.

use rocklake_tests::{
    duckdb_python_quiet, http_get, metric_value, same_outcomes_as_postgres, Server,
};

const RUNNER: &str = r#"
import json, sys, psycopg
dsn = sys.argv[1]
out = []
def rows(c):
    return c.execute("SELECT a FROM pq ORDER BY a").fetchall()
with psycopg.connect(dsn, autocommit=True) as c:
    c.execute("DROP TABLE IF EXISTS pq")
    c.execute("CREATE TABLE pq (a int PRIMARY KEY)")
    try:
        with c.pipeline():
            c.execute("INSERT INTO pq VALUES (%s)", (1,))
            c.execute("INSERT INTO pq VALUES (%s)", (2,))
            c.execute("SELECT 1/0")
            c.execute("INSERT INTO pq VALUES (%s)", (3,))
    except psycopg.Error as e:
        out.append(["pipeline error", e.sqlstate])
    out.append(["after a failed pipeline", rows(c)])
    with c.pipeline():
        c.execute("INSERT INTO pq VALUES (%s)", (4,))
        c.execute("INSERT INTO pq VALUES (%s)", (5,))
    out.append(["after a pipeline", rows(c)])
    try:
        c.cursor().executemany("INSERT INTO pq VALUES (%s)", [(6,), (7,), (4,)])
    except psycopg.Error as e:
        out.append(["executemany error", e.sqlstate])
    out.append(["after executemany", rows(c)])
    c.cursor().executemany("INSERT INTO pq VALUES (%s)", [(6,), (7,)])
    out.append(["after a good executemany", rows(c)])
    with c.pipeline():
        a = c.execute("SELECT now()")
        b = c.execute("SELECT clock_timestamp() > now()")
        d = c.execute("SELECT now()")
    out.append(["one now()", a.fetchone()[0] == d.fetchone()[0]])
    try:
        with c.pipeline():
            c.execute("INSERT INTO pq VALUES (8)")
            c.execute("COMMIT")
            c.execute("INSERT INTO pq VALUES (9)")
            c.execute("SELECT 1/0")
    except psycopg.Error as e:
        out.append(["error after COMMIT", e.sqlstate])
    out.append(["after COMMIT in a pipeline", rows(c), c.info.transaction_status.name])
    with c.pipeline():
        c.execute("INSERT INTO pq VALUES (10)")
        c.execute("BEGIN")
        c.execute("INSERT INTO pq VALUES (11)")
    out.append(["BEGIN in a pipeline", c.info.transaction_status.name])
    c.execute("ROLLBACK")
    out.append(["after ROLLBACK", rows(c)])
    # One Execute per Sync (libpq's PQexecParams): each commits at its Sync.
    c.execute("INSERT INTO pq VALUES (%s)", (12,), prepare=True)
    try:
        c.execute("INSERT INTO pq VALUES (%s)", (12,), prepare=True)
    except psycopg.Error as e:
        out.append(["duplicate", e.sqlstate])
    out.append(["one Execute per Sync", rows(c), c.info.transaction_status.name])
    # SET in a pipeline lasts once the pipeline commits.
    with c.pipeline():
        c.execute("SET application_name = 'piped'")
        c.execute("INSERT INTO pq VALUES (13)")
    out.append(["SET in a pipeline", c.execute("SHOW application_name").fetchone()[0]])
    # Errors the server raises itself (a Parse that fails: syntax, a missing table) roll the
    # pipeline back too.
    for bad in ["SELEC 1", "SELECT * FROM no_such_table", "INSERT INTO pq VALUES ('x')"]:
        try:
            with c.pipeline():
                c.execute("INSERT INTO pq VALUES (%s)", (20,))
                c.execute("SET application_name = 'leaked'")
                c.execute(bad)
        except psycopg.Error as e:
            out.append(["server error in a pipeline", bad, e.sqlstate])
        out.append(["after it", rows(c), c.execute("SHOW application_name").fetchone()[0]])
with psycopg.connect(dsn) as c:
    # Inside a block: a failed pipeline leaves the block failed (25P02 until ROLLBACK).
    try:
        with c.pipeline():
            c.execute("INSERT INTO pq VALUES (21)")
            c.execute("SELEC 1")
    except psycopg.Error as e:
        out.append(["error in a block", e.sqlstate, c.info.transaction_status.name])
    try:
        c.execute("SELECT 1")
    except psycopg.Error as e:
        out.append(["next statement", e.sqlstate])
    c.rollback()
with psycopg.connect(dsn, autocommit=True) as c:
    out.append(["another session sees", rows(c)])
print("RESULT " + json.dumps(out))
"#;

#[test]
fn pipelines_commit_at_sync_as_in_postgres() {
    let got = same_outcomes_as_postgres(RUNNER);
    // The failed pipeline left nothing behind (the comparison alone would also pass if both
    // servers kept the rows).
    assert_eq!(
        got.get(1),
        Some(&serde_json::json!(["after a failed pipeline", []])),
        "{got:?}"
    );
}

/// A pipeline's commit at its Sync is counted by the statement metrics as a COMMIT (and the
/// pipeline's statements as theirs).
#[test]
fn a_pipelines_commit_is_counted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, mport) =
        Server::start_with_metrics(&dir.path().join("catalog"), "rocklake").expect("server");
    let script = r#"
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    c.execute("CREATE TABLE pm (a int)")
    with c.pipeline():
        for i in range(3):
            c.execute("INSERT INTO pm VALUES (%s)", (i,))
        # Fetching inside the pipeline flushes: the Sync comes later, on its own, and the
        # commit is the Sync's.
        seen = c.execute("SELECT count(*) FROM pm").fetchone()[0]
    print("RESULT", seen, c.execute("SELECT count(*) FROM pm").fetchone()[0])
"#;
    let (ok, out) = duckdb_python_quiet("155", script, &[&server.dsn()]).expect("python");
    assert!(ok && out.contains("RESULT 3 3"), "{out}");
    let (_, text) = http_get(mport, "/metrics").expect("scrape");
    for (sample, at_least) in [
        ("rocklake_statements_total{class=\"commit\"}", 1.0),
        ("rocklake_statements_total{class=\"insert\"}", 3.0),
    ] {
        let v = metric_value(&text, sample).unwrap_or(0.0);
        assert!(v >= at_least, "{sample} = {v}:\n{text}");
    }
    server.stop().expect("stop");
}
