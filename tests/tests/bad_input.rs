//! Bad input, answered as PostgreSQL answers it: the same statements against a real PostgreSQL 15
//! and RockLake must give the same SQLSTATE (or the same rows), and every session stays usable.

use rocklake_tests::{duckdb_python, result_json, same_outcomes_as_postgres, Differential, Server};

const RUNNER: &str = r#"
import sys, json, psycopg
dsn = sys.argv[1]
stmts = json.loads(sys.argv[2])
out = []
with psycopg.connect(dsn, autocommit=True, cursor_factory=psycopg.ClientCursor) as c:
    for s in stmts:
        try:
            cur = c.execute(s)
            if cur.description:
                cols = [[d.name, d.type_code] for d in cur.description]
                out.append(["ok", cols, cur.fetchall()])
            else:
                out.append(["ok", cur.statusmessage])
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
    // Other dialects' clauses are syntax errors, never ignored (an ignored LIMIT would delete
    // or change every matching row).
    "DELETE FROM ducklake_snapshot WHERE snapshot_id >= 0 ORDER BY snapshot_id LIMIT 1",
    "DELETE FROM ducklake_snapshot WHERE snapshot_id >= 0 LIMIT 1",
    "UPDATE ducklake_snapshot SET snapshot_time = NOW() WHERE snapshot_id >= 0 LIMIT 1",
    "INSERT IGNORE INTO ducklake_snapshot VALUES (7, NOW(), 0, 1, 0)",
    "INSERT INTO ducklake_snapshot SET snapshot_id = 7",
    "SELECT count(*) FROM ducklake_snapshot",
];

fn run(dsn: &str, stmts: &[&str]) -> serde_json::Value {
    let json = serde_json::to_string(stmts).expect("json");
    let (ok, out) = duckdb_python("155", RUNNER, &[dsn, &json]).expect("runner");
    assert!(ok, "runner failed");
    result_json(&out)
}

/// Query shapes DuckLake sends (joins with USING, NATURAL, the conflict-resolution UNION) and
/// their error cases: same columns, types, rows and SQLSTATEs as PostgreSQL.
const QUERY_SETUP: &[&str] = &[
    "CREATE TABLE ts (table_id BIGINT, record_count BIGINT, next_row_id BIGINT, file_size_bytes BIGINT)",
    "CREATE TABLE tcs (table_id BIGINT, column_id BIGINT, contains_null BOOLEAN, min_value VARCHAR)",
    "CREATE TABLE snap (snapshot_id BIGINT PRIMARY KEY, schema_version BIGINT, next_catalog_id BIGINT, next_file_id BIGINT)",
    "CREATE TABLE changes (snapshot_id BIGINT, changes_made VARCHAR)",
    "INSERT INTO ts VALUES (1, 10, 10, 100), (2, 5, 5, 50), (3, NULL, 0, NULL)",
    "INSERT INTO tcs VALUES (1, 1, false, '1'), (1, 2, true, 'a'), (3, 1, NULL, NULL)",
    "INSERT INTO snap VALUES (0, 0, 1, 0), (1, 1, 3, 2), (2, 1, 3, 4)",
    "INSERT INTO changes VALUES (1, 'created_table:\"t\",'), (2, 'inserted_into_table:1')",
    "CREATE TABLE g2 (x int, y int, z text, PRIMARY KEY (x, y))",
    "INSERT INTO g2 VALUES (1, 1, 'p'), (1, 2, 'q'), (2, 1, 'r')",
    "CREATE TABLE arr (id int, tags text[])",
    "INSERT INTO arr VALUES (1, '{a,b}'), (2, '{c}')",
    "CREATE TABLE lz (v VARCHAR)",
    "INSERT INTO lz VALUES ('1'), ('x'), ('3')",
];

const QUERY_CORPUS: &[&str] = &[
    // Window calls in ORDER BY, computed over the select's rows and not returned.
    "SELECT x, y FROM g2 ORDER BY row_number() OVER (ORDER BY x DESC, y)",
    "SELECT x, y FROM g2 ORDER BY sum(y) OVER (PARTITION BY x) DESC, x, y",
    "SELECT x, y, row_number() OVER () > 0 FROM g2 ORDER BY rank() OVER (ORDER BY z DESC)",
    "SELECT x FROM g2 GROUP BY x ORDER BY sum(sum(y)) OVER () - sum(y), x",
    "SELECT x, y FROM g2 ORDER BY row_number() OVER w DESC WINDOW w AS (ORDER BY y, x)",
    "SELECT y FROM g2 WHERE x > 0 ORDER BY lag(y) OVER (ORDER BY x, y) NULLS FIRST, y LIMIT 2",
    "SELECT * FROM (SELECT x, y FROM g2 ORDER BY -row_number() OVER (ORDER BY x, y)) s",
    "SELECT x, y FROM g2 ORDER BY count(*) OVER (), x, y FETCH FIRST 1 ROWS WITH TIES",
    "SELECT DISTINCT x FROM g2 ORDER BY row_number() OVER ()",
    "SELECT DISTINCT x, dense_rank() OVER (ORDER BY x) FROM g2 ORDER BY dense_rank() OVER (ORDER BY x) DESC",
    "SELECT x, y, rank() OVER (ORDER BY y) FROM g2 ORDER BY rank() OVER (ORDER BY y), x DESC",
    "SELECT x FROM g2 UNION ALL SELECT 1 ORDER BY row_number() OVER ()",
    "SELECT x FROM g2 UNION ALL SELECT 1 ORDER BY x + 1",
    "SELECT x FROM g2 UNION SELECT 1 ORDER BY nosuch",
    "SELECT x FROM g2 UNION SELECT 1 ORDER BY g2.x",
    "SELECT x FROM g2 UNION SELECT 5 ORDER BY (x) DESC",
    "(SELECT 1 UNION SELECT 2) ORDER BY 1 + 1",
    "SELECT x FROM g2 GROUP BY x ORDER BY row_number() OVER (ORDER BY y)",
    "TABLE g2 ORDER BY row_number() OVER (ORDER BY y DESC, x)",
    "SELECT x FROM g2 ORDER BY row_number() OVER (ORDER BY nosuch)",
    "SELECT stddev(record_count), var_pop(file_size_bytes), variance(next_row_id) FROM ts",
    "SELECT table_id, stddev_samp(column_id), var_samp(column_id) FROM tcs GROUP BY table_id ORDER BY table_id",
    // Grouping by a whole primary key groups by every column of its table (PostgreSQL's
    // functional dependency); by part of it, or through a derived table, it does not.
    "SELECT schema_version, count(*) FROM snap GROUP BY snapshot_id ORDER BY snapshot_id",
    "SELECT snapshot_id FROM snap GROUP BY snapshot_id ORDER BY next_file_id DESC",
    "SELECT z FROM g2 GROUP BY x, y ORDER BY z",
    "SELECT z FROM g2 GROUP BY x",
    "SELECT s.schema_version FROM (SELECT * FROM snap) s GROUP BY s.snapshot_id",
    "SELECT snap.next_file_id, g2.z FROM snap JOIN g2 ON snap.snapshot_id = g2.x \
     GROUP BY snap.snapshot_id, g2.x, g2.y ORDER BY 1, 2",
    "SELECT schema_version, count(*) FROM snap GROUP BY snapshot_id, schema_version HAVING next_file_id > 0 ORDER BY 1",
    // regclass input folds unquoted names to lower case; to_regtype / to_regnamespace; size
    // functions read an untyped literal as a relation.
    "SELECT 'TS'::regclass::text, 'public.TS'::regclass::text, to_regclass('TS')::text, ' ts '::regclass::text, '\"ts\"'::regclass::text",
    "SELECT 'Nope'::regclass", "SELECT '\"TS\"'::regclass", "SELECT 'a..b'::regclass", "SELECT to_regclass('a.b.c.d')",
    "SELECT to_regtype('int4')::text, to_regtype('hstore'), to_regtype('integer')::text, to_regtype('character varying')::text",
    "SELECT to_regnamespace('public')::text, to_regnamespace('nope'), to_regnamespace('PUBLIC')::text, 'public'::regnamespace::text",
    "SELECT pg_total_relation_size('ts') > 0, pg_relation_size('ts') > 0, pg_table_size('public.ts') > 0, pg_size_pretty(pg_total_relation_size('ts')) IS NOT NULL",
    "SELECT pg_total_relation_size('nope')",
    "SELECT typname, typarray, oid::regtype::text FROM pg_type t WHERE t.oid = to_regtype('int4') OR t.oid = to_regtype('hstore')",
    "SELECT 1 WHERE 1 IN (SELECT 1, 2)", "SELECT 1 WHERE 1 = ANY(SELECT 1, 2)", "SELECT 1 WHERE 1 NOT IN (SELECT 1, 2)",
    "SELECT 1 WHERE 1 IN (SELECT FROM ts)", "SELECT 1::serial",
    // information_schema's constraint views: primary keys, NOT NULL columns as CHECKs.
    "SELECT constraint_catalog, constraint_schema, regexp_replace(constraint_name, '^[0-9]+_[0-9]+_', 'N_O_') AS n, table_catalog, table_schema, table_name, constraint_type, is_deferrable, initially_deferred, enforced, nulls_distinct FROM information_schema.table_constraints WHERE table_name IN ('snap', 'g2', 'ts') ORDER BY table_name, n",
    "SELECT * FROM information_schema.key_column_usage WHERE table_name IN ('snap', 'g2', 'ts') ORDER BY table_name, ordinal_position",
    "SELECT * FROM information_schema.constraint_column_usage WHERE table_name IN ('snap', 'g2') ORDER BY table_name, column_name",
    "SELECT check_clause FROM information_schema.check_constraints WHERE constraint_name LIKE '%\\_' || 'snap'::regclass::oid::text || '\\_%' OR constraint_name LIKE '%\\_' || 'g2'::regclass::oid::text || '\\_%' ORDER BY 1",
    "SELECT count(*) FROM information_schema.referential_constraints",
    "SELECT kcu.column_name FROM information_schema.table_constraints tc JOIN information_schema.key_column_usage kcu ON tc.constraint_name = kcu.constraint_name AND tc.table_schema = kcu.table_schema WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_name = 'g2' ORDER BY kcu.ordinal_position",
    // Privilege functions: every privilege of the superuser, PostgreSQL's errors otherwise.
    "SELECT has_table_privilege('snap', 'select'), has_table_privilege('public.snap', 'INSERT, update'), has_table_privilege('postgres', 'snap', 'select with grant option'), has_table_privilege('pg_class', 'select'), has_table_privilege('snap'::regclass, 'delete'), has_table_privilege('SNAP', 'select')",
    "SELECT has_table_privilege('nope', 'select')", "SELECT has_table_privilege('snap', 'bogus')",
    "SELECT has_table_privilege('nobody', 'snap', 'select')", "SELECT has_table_privilege(NULL, 'select'), has_table_privilege('snap', NULL)",
    "SELECT has_schema_privilege('public', 'usage'), has_schema_privilege('public', 'CREATE'), has_schema_privilege('pg_catalog', 'usage')",
    "SELECT has_schema_privilege('nope', 'usage')", "SELECT has_schema_privilege('public', 'select')",
    "SELECT has_database_privilege('lake', 'connect'), has_database_privilege('lake', 'temp, create'), has_database_privilege('template1', 'connect')", "SELECT has_database_privilege('nope', 'connect')",
    // A qualified column's subscript.
    "SELECT e.tags[1], e.tags[2] FROM arr e ORDER BY e.id", "SELECT id FROM arr e WHERE e.tags[1] = 'c'",
    "SELECT arr.tags[1] FROM arr ORDER BY 1", "SELECT e.nope[1] FROM arr e", "SELECT e.id[1] FROM arr e",
    // Row comparisons: pairwise, the ordering operators left to right (keyset pagination).
    "SELECT (1,2) = (1,2), (1,2) <> (1,3), (1,2) < (1,3), (1,2) < (2,0), (2,0) > (1,9), (1,2) <= (1,2), (1,2) >= (1,3), (1,NULL) < (2,0), (1,NULL) < (1,0), (NULL,1) < (1,2), (1,NULL) = (1,2), (1,NULL) <> (2,2)",
    "SELECT (1,2,3) < (1,2,4), (1,2,3) <= (1,2,3), (1,2,3) > (1,2,3), (1, 'a') = (1, 'a'), (1, 'a') < (1, 'b')",
    "SELECT (1,2) = (1,2,3)", "SELECT (1, 2) = (1, 'x')",
    "SELECT x, y FROM g2 WHERE (x, y) > (1, 1) ORDER BY 1, 2", "SELECT x, y FROM g2 WHERE (x, y) IN ((1, 1), (2, 1)) ORDER BY 1, 2",
    "SELECT x, y FROM g2 WHERE (x, y) NOT IN ((1, 1), (2, 1)) ORDER BY 1, 2",
    // The same aggregate twice is one (DISTINCT may order by it); volatile ones stay apart.
    "SELECT DISTINCT table_id, count(*) FROM tcs GROUP BY table_id ORDER BY count(*), table_id",
    "SELECT DISTINCT sum(column_id) FROM tcs ORDER BY sum(column_id)",
    "SELECT sum(random()) = sum(random()) FROM generate_series(1, 10)", "SELECT split_part(NULL, ',', 0)",
    // GROUP BY alias: equal items of one alias are one; a name of an outer column is the alias.
    "SELECT table_id AS x, table_id AS x FROM tcs GROUP BY x ORDER BY 1",
    "SELECT (SELECT count(*) FROM (SELECT s.v + 1 AS table_id FROM (VALUES (1), (2)) s(v) GROUP BY table_id) z) FROM tcs",
    // LIMIT stops the projection: rows past it are never evaluated (nor their errors raised).
    "SELECT v::int FROM lz LIMIT 1", "SELECT v::int FROM lz LIMIT 0", "SELECT v::int FROM lz LIMIT 1 OFFSET 1",
    "SELECT v::int FROM lz LIMIT 2 OFFSET 2", "SELECT (SELECT v::int FROM lz LIMIT 1), (SELECT count(*) FROM lz)",
    "SELECT * FROM (SELECT v::int FROM lz LIMIT 1) s", "SELECT v::int FROM lz ORDER BY v LIMIT 1",
    "(SELECT v::int FROM lz LIMIT 1) UNION ALL SELECT 5", "WITH q AS (SELECT v::int AS i FROM lz LIMIT 1) SELECT * FROM q",
    "SELECT v, (SELECT count(*) FROM lz l2 WHERE l2.v <= lz.v) FROM lz LIMIT 2",
    // GROUP BY an output column's alias when no input column has the name.
    "SELECT upper(min_value) AS um, count(*) FROM tcs GROUP BY um ORDER BY um",
    "SELECT upper(min_value) AS min_value, count(*) FROM tcs GROUP BY min_value ORDER BY 1",
    "SELECT table_id / 2 AS h, count(*) FROM tcs GROUP BY h ORDER BY h",
    "SELECT table_id AS x, column_id AS x FROM tcs GROUP BY x", "SELECT table_id / 2 AS h FROM tcs GROUP BY h + 1",
    "SELECT count(*) AS c FROM tcs GROUP BY c",
    // An aggregate only ORDER BY computes: the groups compute it; without GROUP BY the
    // select becomes one group (and its columns ungrouped).
    "SELECT table_id FROM tcs GROUP BY table_id ORDER BY count(*) DESC, table_id",
    "SELECT table_id, count(*) FROM tcs GROUP BY table_id ORDER BY max(column_id), table_id",
    "SELECT table_id FROM ts GROUP BY table_id ORDER BY sum(record_count) + 1 DESC NULLS LAST",
    "SELECT table_id FROM tcs GROUP BY table_id HAVING count(*) > 0 ORDER BY min(min_value), 1",
    "SELECT table_id FROM tcs GROUP BY table_id ORDER BY count(*) FILTER (WHERE column_id > 1), 1",
    "SELECT table_id FROM tcs GROUP BY table_id ORDER BY string_agg(min_value, ',' ORDER BY min_value), 1",
    "SELECT table_id FROM tcs GROUP BY table_id ORDER BY (SELECT count(*) FROM ts WHERE ts.table_id = tcs.table_id), 1",
    "SELECT 1 AS one FROM ts ORDER BY count(*)",
    "SELECT sum(record_count) FROM ts ORDER BY max(table_id)",
    "SELECT table_id FROM ts ORDER BY count(*)",
    "SELECT 1 FROM ts ORDER BY table_id, count(*)",
    "SELECT DISTINCT table_id FROM tcs GROUP BY table_id ORDER BY count(*)",
    "SELECT table_id FROM tcs GROUP BY table_id ORDER BY sum(column_id), column_id",
    "SELECT * FROM (SELECT table_id FROM tcs GROUP BY table_id ORDER BY count(*) DESC LIMIT 1) s",
    "SELECT * FROM ts JOIN tcs USING (table_id) ORDER BY table_id, column_id",
    "SELECT * FROM ts LEFT JOIN tcs USING (table_id) ORDER BY table_id, column_id",
    "SELECT table_id, ts.table_id, tcs.table_id, column_id FROM ts LEFT JOIN tcs USING (table_id) ORDER BY 1, 4",
    "SELECT tcs.* FROM ts JOIN tcs USING (table_id) ORDER BY column_id",
    "SELECT * FROM ts NATURAL JOIN tcs ORDER BY column_id",
    "SELECT count(*) FROM ts a JOIN ts b USING (table_id, record_count)",
    "SELECT * FROM ts JOIN tcs USING (nope)",
    "SELECT * FROM ts JOIN tcs USING (record_count)",
    "SELECT table_id FROM ts JOIN tcs ON ts.table_id = tcs.table_id",
    "SELECT snapshot_id, schema_version, next_catalog_id, next_file_id, \
     COALESCE((SELECT STRING_AGG(changes_made, '') FROM changes c WHERE c.snapshot_id > 0), '') AS changes, \
     NULL AS table_id, NULL AS column_id, NULL AS record_count, NULL AS next_row_id, NULL AS file_size_bytes, \
     NULL AS contains_null, NULL AS min_value \
     FROM snap WHERE snapshot_id = (SELECT MAX(snapshot_id) FROM snap) \
     UNION ALL \
     SELECT NULL, NULL, NULL, NULL, NULL, table_id, column_id, record_count, next_row_id, file_size_bytes, \
     contains_null, min_value \
     FROM ts LEFT JOIN tcs USING (table_id) \
     WHERE record_count IS NOT NULL AND file_size_bytes IS NOT NULL \
     ORDER BY table_id NULLS FIRST, column_id",
];

#[test]
fn queries_match_postgres() {
    compare_with_postgres(QUERY_SETUP, QUERY_CORPUS);
}

/// Deep statements: chains the parser reads in a loop. Long OR/AND chains work (PostgreSQL
/// flattens them; RockLake balances them); other chains work to RockLake's depth limit, and
/// far past PostgreSQL's limit both refuse them (54001). The session and the server survive.
const DEEP_RUNNER: &str = r#"
import json, sys, psycopg
dsn = sys.argv[1]
def chain(n, op, term):
    return op.join(term(i) for i in range(n))
stmts = [
    "SELECT " + chain(900, " + ", lambda i: "1"),
    "SELECT count(*) FROM generate_series(1, 3) g(x) WHERE " + chain(20000, " OR ", lambda i: f"x = {i}"),
    "SELECT 1 WHERE " + chain(5000, " AND ", lambda i: f"{i} >= 0"),
    "SELECT " + chain(60000, " + ", lambda i: "1"),
    "SELECT 1" + "::int" * 60000,
    chain(400, " UNION ALL ", lambda i: f"SELECT {i}"),
    chain(60000, " UNION ALL ", lambda i: "SELECT 1"),
    "SELECT 42",
]
out = []
with psycopg.connect(dsn, autocommit=True) as c:
    for s in stmts:
        try:
            out.append(["ok", c.execute(s).fetchall()])
        except psycopg.Error as e:
            out.append(["err", e.sqlstate, e.diag.message_primary])
print("RESULT " + json.dumps(out))
"#;

#[test]
fn deep_statements_match_postgres_and_the_server_survives() {
    let got = rocklake_tests::same_outcomes_as_postgres(DEEP_RUNNER);
    // The comparison reached both outcomes: rows and 54001.
    assert_eq!(got.first(), Some(&serde_json::json!(["ok", [[900]]])));
    assert!(got
        .iter()
        .any(|o| o.get(1) == Some(&serde_json::json!("54001"))));
    assert_eq!(got.last(), Some(&serde_json::json!(["ok", [[42]]])));
}

#[test]
fn bad_input_gets_postgres_errors_and_sessions_survive() {
    // PostgreSQL's target-list limit (1,664 entries, 54011), at and past it.
    let wide: Vec<String> = [1664, 1665]
        .iter()
        .map(|n| format!("SELECT {}", vec!["1"; *n].join(", ")))
        .collect();
    let corpus: Vec<&str> = CORPUS
        .iter()
        .copied()
        .chain(wide.iter().map(String::as_str))
        .collect();
    compare_with_postgres(SETUP, &corpus);
}

/// Runs `setup` then `corpus` on a fresh PostgreSQL and a fresh RockLake; every statement must
/// give the same outcome and leave the session usable.
fn compare_with_postgres(setup: &[&str], corpus: &[&str]) {
    let Differential {
        postgres: pg,
        rocklake: rl,
        dir: _dir,
    } = Differential::start().expect("PostgreSQL and RockLake");
    let sa = run(&pg.dsn(), setup);
    let sb = run(&rl.dsn(), setup);
    assert_eq!(sa, sb, "setup differs");
    let a = run(&pg.dsn(), corpus);
    let b = run(&rl.dsn(), corpus);
    let mut mismatches = Vec::new();
    for (i, stmt) in corpus.iter().enumerate() {
        let (x, y) = (&a[i], &b[i]);
        assert_eq!(
            y.as_array().and_then(|a| a.last()),
            Some(&serde_json::Value::Bool(true)),
            "session unusable after {stmt:?}"
        );
        if x != y {
            mismatches.push(format!("{stmt}\n    postgres: {x}\n    rocklake: {y}"));
        }
    }
    println!(
        "{} of {} statements answered identically",
        corpus.len() - mismatches.len(),
        corpus.len()
    );
    assert!(
        mismatches.is_empty(),
        "differences:\n{}",
        mismatches.join("\n")
    );
    rl.stop().expect("stop");
}

const MEMORY_RUNNER: &str = r#"
import sys, json, psycopg
dsn = sys.argv[1]
huge = "SELECT count(*) FROM generate_series(1, 30000) a, generate_series(1, 10000) b"
out = {}
with psycopg.connect(dsn, autocommit=True) as other, psycopg.connect(dsn, autocommit=True) as c:
    other.execute("CREATE TABLE kept (id BIGINT PRIMARY KEY)")
    other.execute("INSERT INTO kept VALUES (1), (2)")
    try:
        out["huge"] = ["ok", c.execute(huge).fetchall()]
    except psycopg.Error as e:
        out["huge"] = ["err", e.sqlstate, e.diag.message_primary, e.diag.message_detail]
    out["same_session"] = c.execute("SELECT 1").fetchall()
    out["other_session"] = other.execute("SELECT count(*) FROM kept").fetchall()
with psycopg.connect(dsn, autocommit=True) as fresh:
    out["new_session"] = fresh.execute("SELECT id FROM kept ORDER BY id").fetchall()
print("RESULT", json.dumps(out))
"#;

/// Runs the 300-million-row cross join against a server started with `extra` and checks that
/// it fails with 53200 and that every session, and what was committed, survives it.
fn huge_join_fails_and_the_server_goes_on(extra: &[&str], detail: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let rl = Server::start(&dir.path().join("catalog"), "postgres", extra).expect("rocklake");
    let (ok, out) = duckdb_python("155", MEMORY_RUNNER, &[&rl.dsn()]).expect("runner");
    assert!(ok, "runner failed");
    let got = result_json(&out);
    assert_eq!(
        got["huge"],
        serde_json::json!(["err", "53200", "out of memory", detail]),
        "{extra:?}"
    );
    assert_eq!(got["same_session"], serde_json::json!([[1]]));
    assert_eq!(got["other_session"], serde_json::json!([[2]]));
    assert_eq!(got["new_session"], serde_json::json!([[1], [2]]));
    rl.stop().expect("stop");
}

/// PostgreSQL streams this join; RockLake materialises joined rows, so a statement that would
/// outgrow the server's memory fails with "out of memory" instead (the server's
/// statement_memory_limit), and nothing else is touched.
#[test]
fn a_statement_over_the_memory_limit_fails_and_the_server_goes_on() {
    huge_join_fails_and_the_server_goes_on(
        &["--statement-memory-limit-mb", "256"],
        "The statement needed more than its statement_memory_limit of 256 MB.",
    );
    // The component's heap is a 4 GiB linear memory: with no limit configured, its own
    // ceiling stops the statement before the allocator fails (before, the core trapped and
    // every session was lost). Natively no limit means no limit: not run there.
    if std::env::var("ROCKLAKE_CORE").as_deref() == Ok("wasm") {
        huge_join_fails_and_the_server_goes_on(
            &["--statement-memory-limit-mb", "0"],
            "The statement filled the catalog core's heap.",
        );
    }
}

/// Scalar functions psql users and tools call: same values, types and errors as PostgreSQL.
const FUNCTION_CORPUS: &[&str] = &[
    // AM/PM in times and timestamps.
    "select '1999-01-08 12:00 PM'::timestamp, '1999-01-08 12:00 AM'::timestamp, '1999-01-08 1:30 pm'::timestamp, '1999-01-08 01:30:15.5 AM'::timestamp, '1999-01-08 12:00PM'::timestamp, 'Jan 8 1999 11:59 PM'::timestamp",
    "select '12:00 PM'::time, '1:05 am'::time, '00:30 AM'::time",
    "select '1999-01-08 13:00 PM'::timestamp",
    "select '13:00 pm'::time",
    // generate_subscripts in the select list and in FROM.
    "select generate_subscripts(array['a','b','c'], 1), pg_typeof(generate_subscripts(array[1], 1))",
    "select * from generate_subscripts(array[10,20], 1, true) g",
    "select s, (array['x','y'])[s] from generate_subscripts(array['x','y'], 1) s",
    "select count(*) from generate_subscripts(array[1,2], 2)",
    "select count(*) from generate_subscripts('{}'::int[], 1)",
    "select generate_subscripts(1, 1)",
    // A type's name called as a function is a cast to it.
    "select text(42), text('x'), pg_typeof(text(42)), int8('5'), int4(2.7), int4(true), float8(1), float4(1.5)",
    "select uuid('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), bool('t'), name('abc'), bytea('\\x01'), oid(5), inet('1.2.3.4'), date('2024-01-05'), bpchar('ab'), timestamptz('2024-01-05 10:00+00')",
    "select date(42)",
    "select int4('x')",
    "select int2(40000)",
    "select text(1, 2)",
    // inet's functions.
    "select host('192.168.1.5/24'::inet), text('192.168.1.5/24'::inet), abbrev('192.168.1.5/24'::inet), masklen('192.168.1.5/24'::inet), family('192.168.1.5/24'::inet)",
    "select netmask('192.168.1.5/24'::inet), hostmask('192.168.1.5/24'::inet), broadcast('192.168.1.5/24'::inet)",
    "select host('::1'::inet), masklen('::1'), family('2001:db8::1/64'), netmask('2001:db8::1/64'::inet), hostmask('2001:db8::1/64'::inet), broadcast('2001:db8::1/64'::inet)",
    "select netmask('10.0.0.1/0'::inet), broadcast('10.0.0.1/0'::inet), netmask('10.0.0.1'::inet), hostmask('10.0.0.1/32'::inet)",
    "select set_masklen('10.1.2.3/8'::inet, 16), set_masklen('10.1.2.3'::inet, -1), set_masklen('::1'::inet, 64)",
    "select set_masklen('10.1.2.3'::inet, 33)",
    "select host(NULL::inet), masklen(NULL), pg_typeof(masklen('1.2.3.4')), pg_typeof(host('1.2.3.4'))",
    "select host(42)",
    // Dates with month names (and a weekday name, ignored), in every field order PostgreSQL
    // reads with DateStyle MDY.
    "select 'January 8, 1999'::date, 'Jan 8 1999'::date, '8 January 1999'::date, '1999-Jan-08'::date, 'Jan-08-1999'::date, '08-Jan-1999'::date, 'Sat Jan 08 1999'::date, 'January 8, 99'::date, 'Sept 3 2020'::date, '08/Jan/1999'::date, '1999 Jan 8'::date, 'Jan 8 20'::date",
    "select 'Jan 8 1999 04:05:06'::timestamp, '8 Jan 1999 04:05:06.5'::timestamp, 'january 8 1999'::timestamp",
    "select 'Jan 8'::date",
    "select 'Feb 30 2024'::date",
    "select 'Janu 8 1999'::date",
    "select 'Jan Feb 1999'::date",
    // ISO 8601 interval input: designators (fractions, signs, weeks) and the alternative form.
    "select 'P1Y2M3DT4H5M6S'::interval, 'P0001-02-03T04:05:06'::interval, 'PT1.5S'::interval, 'P1.5W'::interval, 'P1.5Y'::interval, 'P0.5M'::interval, 'PT-1H30M'::interval, 'P1Y-2M'::interval",
    "select 'P1'::interval, 'P-1-2'::interval, 'P1--2-3'::interval, 'PT'::interval, 'P1DT'::interval, 'PT04:05'::interval, 'P0-0-1T-1:00:00'::interval",
    "select 'P'::interval",
    "select 'PT1D'::interval",
    "select 'P1-2-3-4'::interval",
    // inet input, output, casts; variance of numeric NaN and infinities.
    "select var_samp(x), stddev_samp(x), var_pop(x) from (values ('NaN'::numeric)) t(x)",
    "select var_samp(x), stddev(x) from (values ('Infinity'::numeric)) t(x)",
    "select var_samp(x) from (values ('Infinity'::numeric), (1)) t(x)",
    "select '001.002.003.004'::inet, '::1.2.3.4'::inet, '10/8'::inet, '1.2.3.4'::inet::name, '1.2.3.4'::inet::varchar, concat('x', '1.2.3.4'::inet), 'y' || '::1'::inet",
    "select ' 1.2.3.4'::inet",
    "select format('%s|%L', '10.0.0.1/8'::inet, '::1'::inet), concat_ws(',', '1.2.3.4'::inet, 'x')",
    "select '1.2.3.4'::inet < '10.0.0.1', '::1'::inet > '255.255.255.255'::inet, '1.2.3.4'::inet = '1.2.3.4/32'",
    // div, gcd, lcm, factorial, scale, min_scale, trim_scale.
    "select div(10, 3), div(-7.5, 2), div(9.9, 0.3), pg_typeof(div(10, 3))",
    "select div(1, 0)",
    "select gcd(12, 18), gcd(-12, 18), gcd(0, 0), lcm(4, 6), lcm(0, 5), gcd(12::bigint, 18), lcm(4::int2, 6::int2), pg_typeof(gcd(1::int2, 2::int2))",
    "select gcd(1.5, 2.25), lcm(1.5, 2.25), gcd(0.0, 0.0)",
    "select lcm(2147483647, 2147483646)",
    "select gcd(-2147483648, 0)",
    "select factorial(5), factorial(0), factorial(20), factorial(25), pg_typeof(factorial(3))",
    "select factorial(-1)",
    "select min_scale(1.500), min_scale(0.00), min_scale(123), trim_scale(1.500), trim_scale(100.000), trim_scale(0.00), trim_scale(-1.10)",
    "select scale(1.230), scale(5), min_scale('NaN'::numeric), trim_scale('NaN'::numeric)",
    "select gcd(12, 18), gcd(-12, 18), gcd(0, 0), lcm(4, 6), lcm(0, 5), gcd(12::bigint, 18), pg_typeof(gcd(1, 2::bigint))",
    "select gcd((-9223372036854775807 - 1)::bigint, 0::bigint)",
    "select lcm(9223372036854775807, 9223372036854775806)",
    "select div(10, 3.5), div('NaN', 1), div(1, 'Infinity'::numeric), factorial(30)",
    "select gcd(1.5, 2)",
    "select scale(1.23::float8)",
    // ln, exp, log, power over numeric: PostgreSQL's result scales, correctly rounded digits.
    "select 2 ^ 0.5, 2.0 ^ 3, 2 ^ 3, 1.5 ^ 2",
    // A prefix sign binds tighter than ^, * and /; ^ is left-associative.
    "select -2 ^ 2, - 2 ^ 3, -(2 ^ 2), 2 ^ -1, -2.0 ^ 2, - 3 * 2 ^ 2, 2 ^ -1 ^ 2, -2 ^ 2 * 3, 2 ^ 3 ^ 2, -2 ^ -1 ^ 2",
    "select -2 ^ 0.5",
    "select -'2' ^ 2",
    "select ln(2.0), exp(1.0), power(2.0, 10), log(100.0), log(2.0, 8.0), log10(1000.0)",
    "select ln(2), exp(1.0), power(2, 0.5), pow(2, 3), log(100), log10(1000)",
    "select ln(0.0)",
    "select ln(-1.0)",
    "select power(0.0, -1)",
    "select power(-8.0, 1.0/3)",
    "select exp(1000.0)",
    "select power(10, 20), power(2.5, 2), power(1.0001, 10000)",
    "select ln(1.0), ln(1.05), ln(0.95), ln(1.0000001), ln(10), ln(123456789.123), ln(0.000012345), ln(1e-100), ln(1e100)",
    "select exp(0.0), exp(-1.0), exp(2.302585), exp(-100.5), exp(10), exp(0.001), exp(50.123456)",
    "select power(2.0, -2), power(1.5, 3), power(-2.0, 3), power(-2.0, -3), power(0.0, 0), power(3.0, 0.0), power(10.0, -20), power(1.1, 100), power(2.0, 0.5), power(100.0, 1.5), power(0.5, 0.5), power(7.0, -0.25)",
    "select log(10, 100), log(2, 1024.0), log(3.0, 81.0), log(1.5, 2.25), log(10.0, 0.001), log10(2.0), log(0.5, 8)",
    "select log(1.0, 10.0)",
    "select log(0, 10.0)",
    "select exp(10000.0)",
    "select exp(-10000.0) = 0, power(10.0, 200000)",
    "select power(1.000001, 1000000), power(0.999, 1234), power(12.34, 5.67), power(2, 100::numeric)",
    "select round(power(1.05, 10), 2), ln(x), exp(x) from (values (0.5), (3.0)) t(x)",
    "select power(-1.0, 0.5)",
    "select power(0.0, -0.5)",
    "select ln('NaN'::numeric), exp('NaN'::numeric), power('NaN'::numeric, 0)",
    "select power(-1.000001, 1000001), power(0.9999, -1000000), power(1.00000001, 100000000)",
    "select md5(exp(5999.0)::text), md5(ln(1e-1000)::text), md5(power(1.5, 20000)::text), exp(0.5 + 0.000000000000000000000000000000000000000000000000001), ln(1.000000000000000000000000000000000000000000000000001)",
    "select power(9.99, 9999.5)",
    "select md5(exp(-5999.0)::text), md5(power(0.5, 3000.5)::text), ln(9.999999999999999999), log(7, 49.0000000001), exp(-0.000000000000000001)",
    "select power(2.0, 1000), md5(power(2.0, 100000)::text)",
    // Double precision functions take a numeric through PostgreSQL's implicit cast.
    "select degrees(1.5), radians(90.0), sin(0.5), cos(0.5), tan(0.5), asin(0.5), acos(0.5), atan(0.5), atan2(1.0, 2.0), atan2(1, 2.0)",
    // Array functions by name (anycompatiblearray): NULL found as IS NOT DISTINCT FROM.
    "select array_append(array[1,2], 3), array_prepend(0, array[1,2]), array_cat(array[1], array[2,3])",
    "select array_append('{a,b}', 'c'), array_append(null, 1), array_prepend(1, null), array_cat(null, array[1])",
    "select array_append(null, null)",
    "select array_remove(array[1,2,1,3], 1), array_remove(array['a',null,'b'], null), array_remove(null::int[], 1)",
    "select array_replace(array[1,2,1], 1, 9), array_replace(array[null, 'x'], null, 'y')",
    "select array_position(array['a','b','c','b'], 'b'), array_position(array['a','b','c','b'], 'b', 3), array_position(array[1,2], 5), array_position(array[null,1], null)",
    "select array_positions(array[1,2,1], 1), array_positions(array[1,2], 9), array_positions(null::int[], 1)",
    "select array_ndims(array[1,2]), array_dims(array[1,2,3]), array_ndims('{}'::int[]), array_dims('{}'::int[])",
    "select array_position(array[1], 1, null)",
    "select array_append(array[1,2], 'x')",
    "select array_append(1, 2)",
    "select array_cat(array[1], array['a'])",
    "select array_append(array[1,2], 3, 4)",
    "select pg_typeof(array_append(array[1::bigint], 2)), pg_typeof(array_positions(array['a'], 'a'))",
    "select id, array_append(tags, 'z'), array_position(tags, 'b') from (values (1, array['a','b']), (2, null)) t(id, tags) order by id",
    // variance and standard deviation: exact over numbers, Youngs-Cramer over floats.
    "select variance(x), var_pop(x), stddev(x), stddev_pop(x), var_samp(x), stddev_samp(x) from (values (1),(2),(3),(4)) t(x)",
    "select variance(x), var_pop(x), stddev(x), stddev_pop(x) from (values (1.5),(2.25),(3.125)) t(x)",
    "select variance(x), var_pop(x), stddev(x), stddev_pop(x) from (values (1.5::float8),(2.25),(3.125)) t(x)",
    "select variance(x), stddev(x), var_pop(x) from (values (1::real),(2.5),(7)) t(x)",
    "select variance(x), stddev(x), var_pop(x), stddev_pop(x) from (values (5)) t(x)",
    "select variance(x), stddev(x) from (values (5)) t(x) where false",
    "select variance(x), stddev(x) from (values (5.0),(5.0)) t(x)",
    "select variance(x::bigint), stddev(x::smallint) from generate_series(1, 100) x",
    "select stddev(x * 1.1) from generate_series(1, 1000) x",
    "select variance(x) from (values ('NaN'::numeric),(1)) t(x)",
    "select variance(x)::text, stddev_pop(x)::text from (values ('Infinity'::float8),(1)) t(x)",
    "select variance(x) from (values (1e308::float8),(-1e308)) t(x)",
    "select variance('1')",
    "select variance(true)",
    "select variance(x) from (values ('1 day'::interval)) t(x)",
    "select g, stddev(v), variance(v) from (values (1, 10.0), (1, 20.0), (2, 3.0), (2, 4.5), (2, 9.0)) t(g, v) group by g order by g",
    "select stddev(x) over (order by x) from (values (1.0),(2.0),(4.0)) t(x)",
    "select pg_typeof(variance(1::int)), pg_typeof(stddev(1::real)), pg_typeof(var_pop(1::numeric))",
    "select variance(distinct x) from (values (1),(1),(3)) t(x)",
    "select variance(x) filter (where x > 1) from (values (1),(2),(4)) t(x)",
    "select pg_typeof(variance('1')), pg_typeof(var_pop('1')), var_pop('1.5'), pg_typeof(stddev('2')), stddev_samp(x) from (values ('1'), ('2.5')) t(x)",
    "SELECT repeat('ab', 3), repeat('ab', 0), repeat('ab', -1), repeat(NULL, 2), repeat('é', 2)",
    "SELECT length(repeat('ab', 1000000))",
    "SELECT repeat('ab', 600000000)",
    "SELECT left('hello', 2), left('hello', -2), left('hello', 0), left('hello', 10), left('hello', -10), left('héllo', 2)",
    "SELECT right('hello', 2), right('hello', -2), right('hello', 0), right('hello', -10), left(NULL, 2), right('a', NULL)",
    "SELECT strpos('hello', 'l'), strpos('hello', ''), strpos('hello', 'z'), strpos('', ''), strpos('héllo', 'l'), strpos(NULL, 'a')",
    "SELECT position('l' IN 'hello'), position('z' IN 'hello')",
    "SELECT btrim('  x  '), btrim('xxaxx', 'x'), btrim('abc', ''), btrim(NULL), btrim('a', NULL)",
    "SELECT ltrim('  x '), ltrim('xyaxy', 'xy'), rtrim(' x  '), rtrim('axyx', 'xy')",
    "SELECT trim('  x  '), trim(BOTH 'x' FROM 'xxaxx'), trim(LEADING 'x' FROM 'xxa'), trim(TRAILING 'x' FROM 'axx')",
    "SELECT substr('hello', 2, 2), substr('hello', 2), substr('hello', 0, 3), substr('hello', -5, 7), substr('hello', 9), substr('héllo', 2, 1)",
    "SELECT substring('hello' FROM 2 FOR 3), substring('hello' FROM 3), substring('hello' FOR 2), substring('hello', 2, 2)",
    "SELECT substr('hello', 2, -1)",
    "SELECT round(2.5), round(-2.5), round(0.5, 0), round(-0.4), round(2.567, 2), round(2.5, 3), round(1.25, 1), round(-1.25, 1)",
    "SELECT round(2567, -2), round(12345.678, -1), round(999, -3), round(999, -4), round(-5000, -4), round(99999999999999999999999999.5, -30)",
    "SELECT round(2.5::float8), round(3.5::float8), round(-2.5::float8), round(2), round(2::int8), round('2.5'), round(NULL::numeric)",
    "SELECT round(2.5::float8, 1)",
    "SELECT ceil(2.1), ceil(-2.1), ceil(-0.5), ceiling(2.1::float8), ceiling(2), floor(2.5), floor(-2.5), floor(-0.0001), floor(7)",
    "SELECT ceil(1.5e3), floor(99.99), ceil(99.01), floor(-99.01), ceiling('NaN'::numeric), round('NaN'::numeric, 2)",
    // Of equal inputs, min and max keep the later one, as PostgreSQL's *_larger/*_smaller do.
    "SELECT max(x), min(x) FROM (VALUES (1.0), (1.00), (0.5), (0.50)) v(x)",
    "SELECT max(x), min(x) FROM (VALUES ('1 day'::interval), ('24 hours'::interval)) v(x)",
    "SELECT max(x)::text, min(x)::text FROM (VALUES (0.0::float8), (-0.0::float8)) v(x)",
    // setseed makes random() PostgreSQL's sequence (xoroshiro128** from splitmix64), so the
    // values compare exactly; the generator is the session's and not transactional.
    "SELECT setseed(0.5)",
    "SELECT random(), random(), random()",
    "SELECT setseed(-0.25), random()",
    "SELECT random() FROM generate_series(1, 3)",
    "BEGIN",
    "SELECT setseed(0.125)",
    "ROLLBACK",
    "SELECT random()",
    "SELECT setseed(1), setseed(-1), setseed('0'), setseed(0.75::real), setseed(1::numeric)",
    "SELECT random() < 1, pg_typeof(random()), pg_typeof(setseed(0.1)), setseed(0.1)::text = ''",
    "SELECT setseed(2)",
    "SELECT setseed('nan')",
    "SELECT setseed('-infinity')",
    "SELECT setseed(-1e10)",
    "SELECT setseed()",
    "SELECT setseed(true)",
    "SELECT setseed('x')",
    "SELECT random(1)",
    "SELECT format_type(2278, NULL), 'void'::regtype::oid, 2278::regtype",
    "SELECT typname, typlen, typtype, typcategory, typinput::text, typoutput::text FROM pg_type WHERE oid = 2278",
    // gen_random_uuid draws from the host's entropy: compared by shape (version 4, variant 10).
    "SELECT pg_typeof(gen_random_uuid()), length(gen_random_uuid()::text), \
     substr(gen_random_uuid()::text, 15, 1), substr(gen_random_uuid()::text, 20, 1) IN ('8', '9', 'a', 'b')",
    "SELECT count(DISTINCT gen_random_uuid()), count(DISTINCT random()) FROM generate_series(1, 1000)",
    "SELECT gen_random_uuid(1)",
    "SELECT uuid_generate_v4()",
    "CREATE TABLE r (id uuid DEFAULT gen_random_uuid() PRIMARY KEY, x float8 DEFAULT random())",
    "INSERT INTO r (x) SELECT random() FROM generate_series(1, 50)",
    "INSERT INTO r DEFAULT VALUES",
    "SELECT count(*), count(DISTINCT id), min(x) >= 0 AND max(x) < 1 FROM r",
    "DROP TABLE r",
    // A WITH query calling a volatile function runs once: its readers see the same rows.
    "WITH c AS (SELECT random() r) SELECT count(*) FROM c a JOIN c b ON a.r = b.r",
    "WITH c AS (SELECT gen_random_uuid() u FROM generate_series(1, 3)) SELECT count(*) FROM c a JOIN c b ON a.u = b.u",
    "WITH c AS (SELECT random() r) SELECT (SELECT r FROM c) = (SELECT r FROM c)",
    "WITH c AS (SELECT random() r FROM generate_series(1, 5)) SELECT count(DISTINCT r), (SELECT count(*) FROM c x, c y WHERE x.r = y.r) FROM c",
    "WITH c AS MATERIALIZED (SELECT 1 AS x) SELECT * FROM c, c d",
    // format(), concat_ws(), quote_literal(), quote_nullable(): each argument as its type
    // prints it (a boolean as t/f, also in concat).
    "SELECT format('Hello %s, %I, %L', 'World', 'My Table', E'O\\'Reilly')",
    "SELECT format('%s %s', 1, NULL), format('%L', NULL), format('%I', 'abc'), format('%I', 'Abc')",
    "SELECT format('%3$s %1$s %s', 'a', 'b', 'c'), format('[%10s][%-10s][%*s][%-*s]', 'x', 'y', 5, 'z', 4, 'w')",
    "SELECT format('%s', 1.50::numeric), format('%s', true), format('%s', ARRAY[1,2]), format('%s', '2020-01-01'::date), format('%L', 42)",
    "SELECT format('100%%'), format(NULL), format('%s|%s', 'é'::char(3), 'x'::varchar)",
    "SELECT format('%s')", "SELECT format('%x', 1)", "SELECT format('abc %', 1)", "SELECT format('%0$s', 1)",
    "SELECT format('%I', NULL)", "SELECT format()",
    "SELECT concat_ws(',', 'a', NULL, 'b', 1), concat_ws(NULL, 'a'), concat_ws('-', 'x'), concat(true, false, NULL::bool)",
    "SELECT quote_literal('it''s'), quote_literal(E'a\\\\b'), quote_literal(42), quote_literal(NULL), quote_nullable(NULL), quote_nullable('x')",
    // Floats out of range are errors, not infinities or zeros (input and arithmetic).
    "SELECT '1e400'::float8", "SELECT '1e-400'::float8", "SELECT '3.5e38'::float4", "SELECT 1e308 * 10::float8",
    "SELECT 1e308::float8 + 1e308::float8", "SELECT -1e308::float8 * 10", "SELECT 1e-300::float8 * 1e-300::float8",
    "SELECT 2.5::float8 * 4, '0.0'::float8, '-0'::float8, '1e-5'::float4, '0e10'::float8",
    "SELECT (1::float8 / 'infinity'::float8)::text, ('infinity'::float8 * 2)::text",
    // DISTINCT sorts by selected values only; ANY compares with an operator that exists.
    "SELECT DISTINCT a FROM (VALUES (1, 2)) v(a, b) ORDER BY b",
    "SELECT DISTINCT a, a + 1 AS c FROM (VALUES (1, 2)) v(a, b) ORDER BY a + 1, c",
    "SELECT 'x'::text = ANY(ARRAY[1,2])", "SELECT 1 = ANY(ARRAY['1'])", "SELECT 2 <> ALL(ARRAY['x'::text])",
    // The catalogs' oid[] columns are oid[] (psql's \d compares oids with pg_policy.polroles).
    "SELECT count(*) FROM pg_policy WHERE 10 = ANY(polroles)",
    "SELECT 'pg_class'::regclass = ANY(ARRAY['pg_class'::regclass]), 'r'::\"char\" = ANY(ARRAY['r'::\"char\"])",
    "SELECT count(*) > 0 FROM pg_class WHERE oid::regclass = ANY(ARRAY(SELECT 'pg_class'::regclass))",
    "SELECT count(*) FROM pg_constraint WHERE 1 = ANY(conpfeqop) OR 'x' = ANY(conexclop)",
    // An untyped array takes the left side's element type.
    "SELECT 1 = ANY('{1,2}'), 3 <> ALL('{3,4}'), '2024-01-01'::date = ANY('{2024-01-01}'), 1 = ANY(NULL)",
    "SELECT '+inf'::float8::text, '+Infinity'::float8::text, '-inf'::float4::text",
    // Text parameters cast their arguments (a boolean is `true`, char(n) loses its padding);
    // widths are int4s and results are bounded.
    "SELECT quote_literal(true), quote_nullable(false), quote_literal('a'::char(3)), concat_ws('a'::char(3), 'x', 'y'), format('%s|'::char(4), 'x'::char(3))",
    "SELECT concat_ws(',')", "SELECT format('%99999999999s', 'x')", "SELECT format('%*s', 5000000000, 'x')",
    "SELECT format('%*s', 'abc', 'x')", "SELECT 'x' ~ 1", "SELECT 1 !~* 'x'", "SELECT 'abc' ~ 'b', 'abc'::varchar ~* 'B'",
    "SELECT 1 = ANY(ARRAY[1.5, 2]), 'a' = ANY(ARRAY['a'::varchar]), 1::int8 = ANY(ARRAY[1,2])",
    // Type modifiers: PostgreSQL's ranges, float(p) as real or double precision, none where a
    // type takes none; negative numeric scales.
    "SELECT 'a'::varchar(0)", "SELECT 'a'::char(0)", "SELECT 1::numeric(0)", "SELECT 1::numeric(1001)",
    "SELECT 1::numeric(5, 1001)", "SELECT 'a'::varchar(10485761)", "SELECT 1::numeric(3,5)",
    "SELECT 0.001::numeric(3,5)::text, 1234.5::numeric(3,-1)::text, 0::numeric(2,4)::text",
    "SELECT pg_typeof(1.5::float(24))::text, pg_typeof(1.5::float(25))::text, 1.5::float(1)",
    "SELECT 1::float(0)", "SELECT 1::float(54)", "SELECT 1::double", "SELECT 1::integer(5)",
    "SELECT 1::int4(3)", "SELECT 'abc'::text(3)", "SELECT 1::oid(3)", "CREATE TABLE tq (a integer(5))",
    "CREATE TABLE tq (a int8(5))",
    "CREATE TABLE tq2 (a float(10), b float(40), c numeric(5,-2))",
    "SELECT format_type(atttypid, atttypmod), attname FROM pg_attribute WHERE attrelid = 'tq2'::regclass AND attnum > 0 ORDER BY attnum",
    "SELECT column_name, numeric_precision, numeric_scale FROM information_schema.columns WHERE table_name = 'tq2' ORDER BY 1",
    "INSERT INTO tq2 VALUES (1.5, 2.5, 12345)", "INSERT INTO tq2 VALUES (1.5, 2.5, 12345678)", "SELECT a, b, c::text FROM tq2",
    "DROP TABLE tq2",
    // LIKE … ESCAPE: the pattern escapes with the given character (none when empty).
    "SELECT 'a_b' LIKE 'a#_b' ESCAPE '#', 'a#xb' LIKE 'a#_b' ESCAPE '#', 'A_B' ILIKE 'a!_b' ESCAPE '!'",
    "SELECT 'a' LIKE 'a%' ESCAPE 'ab'", "SELECT 'ab' LIKE 'a\\'", "SELECT 'b' LIKE 'a\\'", "SELECT 'a' LIKE 'a' ESCAPE 1",
    "SELECT 'a\\b' LIKE 'a\\b' ESCAPE '', 'a\\b' LIKE 'a\\\\b' ESCAPE '', 'a#b' LIKE 'a##b' ESCAPE '#', 'a' LIKE 'a' ESCAPE NULL",
    "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg!_%' ESCAPE '!' ORDER BY 1",
    "SELECT x, x LIKE 'a#%' ESCAPE e, x NOT ILIKE 'A#%' ESCAPE e FROM (VALUES ('a%', '#'), ('ab', '#'), (NULL, '#'), ('a%', 'xy')) v(x, e) ORDER BY 1",
    // A real converts to text with its own digits and to numeric with 6 significant digits,
    // a double to numeric with 15; an integer becomes a real rounded to single precision.
    "SELECT 0.1::real::text, 3.1415927::real::numeric, 0.1::real::varchar, (0.1::real)::text = '0.1', 'x' || 0.1::real, concat(0.1::real, 'y'), format('%s', 0.1::real)",
    "SELECT (1/3::float8)::numeric, 0.1::float8::numeric, 1e20::float8::numeric, 123456789.123456789::float8::numeric, 1.5::float8::numeric, (-0.0)::float8::numeric, 2.5e-10::float8::numeric",
    "SELECT 1e-5::real::numeric, 1e10::real::numeric, 'NaN'::real::numeric, 16777217::real::text, 1.5e30::real::text, 'Infinity'::float8::numeric, '-Infinity'::real::numeric",
    "SELECT x::numeric, x::text FROM (VALUES (1.1::real), (33.333::real), (1e-40::real)) v(x)",
    // Dates as digits only, year first with slashes or dots, and month/day/year (DateStyle MDY).
    "SELECT '20240601'::date, '2024/06/01'::date, '2024.06.01'::date, '240601'::date, '991231'::date, '01/02/2024'::date, '1-2-2024'::date, '01.02.2024'::date",
    "SELECT '20240601 10:00'::timestamp, '2024/06/01 10:00:01.5'::timestamp, '01/02/2024 10:00'::timestamp, '20240601'::timestamptz::text",
    // String functions tools use: initcap, reverse, translate, ascii, lpad/rpad, to_hex.
    "SELECT initcap('hello wORLD foo-bar o''neil 3rd x1y'), reverse('abcé'), translate('12345', '143', 'ax'), ascii('A'), ascii(''), ascii('é')",
    "SELECT lpad('hi', 5), lpad('hi', 5, 'xy'), lpad('hello', 3), lpad('hi', 5, ''), lpad('hi', -1), rpad('hi', 5, 'xy'), rpad('hello', 2), rpad('hi', 4)",
    "SELECT to_hex(255), to_hex(-1), to_hex(-1::bigint), to_hex(2147483648)", "SELECT to_hex('10')",
    "SELECT cardinality(ARRAY[1,2,3]), cardinality(ARRAY[]::int[]), cardinality(NULL::int[])",
    "SELECT pg_client_encoding(), pg_typeof(pg_backend_pid())::text",
    "SELECT getdatabaseencoding(), pg_encoding_to_char(8), pg_encoding_to_char(42), pg_char_to_encoding('Windows-1252'), pg_char_to_encoding('unicode'), pg_char_to_encoding('nope'), pg_typeof(pg_encoding_to_char(0))::text, pg_collation_is_visible(950), pg_collation_is_visible(1)", "SELECT initcap(1)", "SELECT lpad('a', 2::bigint)",
    "SELECT to_hex(1.5)", "SELECT cardinality(1)", "SELECT lpad('a', 3, NULL), lpad(NULL, 3), translate('abc', 'a', NULL)",
    "SELECT lpad('x'::char(3), 5, '*'), reverse('ab '::char(4))",
    "SELECT initcap('ßa ǆb'), lpad('abc', 1000000000, ''), rpad('abc', 2, '')",
    // split_part counts from the end for a negative position; array_to_string's NULL text.
    "SELECT split_part('a.b.c', '.', -1), split_part('a.b.c', '.', -3), split_part('a.b.c', '.', -4), split_part('a.b.c', '.', 4), split_part('', '.', 1), split_part('abc', '', 1), split_part('abc', '', -1), split_part('abc', '', 2)",
    "SELECT split_part('a.b', '.', 0)",
    "SELECT array_to_string(ARRAY[1, NULL, 3], ',', '*'), array_to_string(ARRAY[1, NULL, 3], ','), array_to_string(ARRAY[1, NULL, 3], ',', NULL), array_to_string(ARRAY['a', NULL], '-', '')",
    // Aggregates over PostgreSQL's signatures: sum/avg of intervals, sum(real) is real, no
    // sum of dates or text, string_agg of text or bytea, bool_and of booleans.
    "SELECT sum(x), avg(x), pg_typeof(sum(x))::text, pg_typeof(avg(x))::text FROM (VALUES (interval '1 day'), (interval '2 hours'), (interval '1 month')) v(x)",
    "SELECT avg(x), sum(x) FILTER (WHERE x > interval '1 hour') FROM (VALUES (interval '1 month'), (interval '0'), (interval '1 day 1 second')) v(x)",
    "SELECT sum(x) FROM (VALUES (date '2020-01-01')) v(x)", "SELECT avg(x) FROM (VALUES (now())) v(x)",
    "SELECT sum(x) FROM (VALUES ('a'::text)) v(x)", "SELECT sum(x) FROM (VALUES (true)) v(x)",
    "SELECT sum(x)::text, pg_typeof(sum(x))::text, avg(x) FROM (VALUES (0.1::real), (0.2::real), (0.7::real), (1e-8::real)) v(x)",
    "SELECT string_agg(x, ',') FROM (VALUES (1), (2)) v(x)", "SELECT bool_and(x) FROM (VALUES (1), (2)) v(x)",
    "SELECT string_agg(x, ','), string_agg(x, y) FROM (VALUES ('\\x01'::bytea, '\\xff'::bytea), ('\\x02'::bytea, '\\x00'::bytea)) v(x, y)",
    "SELECT string_agg(x, y), string_agg(DISTINCT x, ',' ORDER BY x) FROM (VALUES ('a', '-'), ('b', '+'), ('c', NULL), ('a', '')) v(x, y)",
    // Boolean operators take booleans (or untyped literals read as them).
    "SELECT NOT 1", "SELECT 1 AND true", "SELECT true OR 'x'", "SELECT 'true' AND NOT 'f', NULL AND true, NOT NULL",
    // num_nulls / num_nonnulls, width_bucket (both directions, its errors),
    // array_to_json (pretty), pg_my_temp_schema.
    "SELECT num_nulls(1, NULL, 'a'), num_nonnulls(1, NULL, 'a'), num_nulls(NULL::int)",
    "SELECT num_nulls()",
    "SELECT width_bucket(5, 0, 10, 5), width_bucket(5.35::float8, 0.024::float8, 10.06::float8, 5), width_bucket(-1, 0, 10, 5), width_bucket(10, 0, 10, 5), width_bucket(11, 0, 10, 5)",
    "SELECT width_bucket(5, 10, 0, 5), width_bucket(10, 10, 0, 5), width_bucket(0, 10, 0, 5), width_bucket(11, 10, 0, 5)",
    "SELECT width_bucket(5, 0, 10, 0)",
    "SELECT width_bucket(5, 0, 0, 3)",
    "SELECT width_bucket('NaN'::float8, 0, 10, 3)",
    "SELECT width_bucket(1, '-Infinity'::float8, 10, 3)",
    "SELECT width_bucket(9.999999999::float8, 0, 10, 3), width_bucket(NULL, 0, 10, 3)",
    "SELECT array_to_json(ARRAY[1,2,3]), array_to_json(ARRAY['a','b\"'], true), array_to_json(ARRAY[1,2], false), array_to_json(ARRAY[1], NULL)",
    "SELECT array_to_json(1)",
    "SELECT pg_my_temp_schema()",
    // FETCH FIRST … WITH TIES (with OFFSET, DESC, grouped), and LIMIT / OFFSET row counts.
    "SELECT x, y FROM (VALUES (1, 1), (2, 1), (3, 2), (4, 2), (5, 3)) v(x, y) ORDER BY y FETCH FIRST 1 ROW WITH TIES",
    "SELECT x, y FROM (VALUES (1, 1), (2, 1), (3, 2), (4, 2), (5, 3)) v(x, y) ORDER BY y FETCH FIRST 3 ROWS WITH TIES",
    "SELECT x, y FROM (VALUES (1, 1), (2, 1), (3, 2), (4, 2), (5, 3)) v(x, y) ORDER BY y OFFSET 1 ROWS FETCH FIRST 2 ROWS WITH TIES",
    "SELECT x, y FROM (VALUES (1, 1), (2, 1), (3, 2), (4, 2), (5, 3)) v(x, y) ORDER BY y DESC, x FETCH FIRST 1 ROW WITH TIES",
    "SELECT x FROM (VALUES (1, 1), (2, 1)) v(x, y) ORDER BY y FETCH FIRST 0 ROWS WITH TIES",
    "SELECT x FROM (VALUES (1, 1), (2, 1)) v(x, y) ORDER BY y FETCH FIRST 9 ROWS WITH TIES",
    "SELECT x FROM (VALUES (1, 1), (2, 1)) v(x, y) FETCH FIRST 1 ROW WITH TIES",
    "SELECT x FROM (VALUES (1, 1), (2, 1)) v(x, y) ORDER BY y FETCH FIRST NULL ROWS WITH TIES",
    "SELECT x FROM (VALUES (1, 1), (2, 1)) v(x, y) ORDER BY y FETCH FIRST 10 PERCENT ROWS ONLY",
    "SELECT 1 LIMIT -1", "SELECT 1 OFFSET -1", "SELECT 1 LIMIT NULL OFFSET NULL",
    "SELECT 1 LIMIT -1 OFFSET -1", "SELECT 1 LIMIT 2.5",
    // regexp_split_to_table / _to_array (PostgreSQL's rules for empty matches) and
    // regexp_matches (groups, the global flag), in FROM and select lists.
    "SELECT regexp_split_to_table('a,b,,c', ',')",
    "SELECT regexp_split_to_table('abc', '')",
    "SELECT regexp_split_to_table('hello world', '\\s*')",
    "SELECT regexp_split_to_array('the quick  brown', '\\s+'), regexp_split_to_array('', ','), regexp_split_to_array('abc', 'x')",
    "SELECT regexp_split_to_array('aXbxc', 'x', 'i')",
    "SELECT regexp_split_to_table('a,b', ',', 'g')",
    "SELECT regexp_matches('abcabc', 'b', 'g')",
    "SELECT regexp_matches('abcabc', '(a)(b)?', 'g')",
    "SELECT regexp_matches('abc', 'x')",
    "SELECT regexp_matches('foobarbequebaz', '(bar)(beque)')",
    "SELECT * FROM regexp_matches('a1b22c333', '\\d+', 'g') AS m",
    "SELECT m[1] FROM regexp_matches('k=v;x=y', '(\\w)=(\\w)', 'g') AS m",
    "SELECT regexp_matches('abc', '', 'g')",
    "SELECT regexp_split_to_table(NULL, ','), regexp_matches('a', NULL)",
    "SELECT count(*) FROM regexp_split_to_table('a b c', ' ') AS w",
    "SELECT w FROM regexp_split_to_table('x y', ' ') w ORDER BY w DESC",
    "SELECT regexp_matches('ab', 'a', 'z')",
];

#[test]
fn scalar_functions_match_postgres() {
    compare_with_postgres(&[], FUNCTION_CORPUS);
}

/// ALTER TABLE as DuckLake's migrations use it (ADD COLUMN with defaults, DROP COLUMN),
/// temporary tables `ON COMMIT DROP`, and ctids in the text forms PostgreSQL's `tidin` takes
/// (DuckDB's UPDATE sends them quoted): the same rows, defaults and errors as PostgreSQL.
const ALTER_SETUP: &[&str] = &[
    "CREATE TABLE m (id BIGINT PRIMARY KEY, v VARCHAR)",
    "INSERT INTO m VALUES (1, 'a'), (2, NULL)",
    "CREATE TABLE n (i INTEGER, s VARCHAR DEFAULT 'x', t TEXT DEFAULT 'it''s', b BOOLEAN DEFAULT TRUE, z VARCHAR DEFAULT NULL)",
];

const ALTER_CORPUS: &[&str] = &[
    "ALTER TABLE m ADD COLUMN d VARCHAR DEFAULT 'literal'",
    "ALTER TABLE m ADD COLUMN IF NOT EXISTS d VARCHAR DEFAULT 'other'",
    "ALTER TABLE m ADD COLUMN f BOOLEAN DEFAULT false",
    "ALTER TABLE m ADD COLUMN n BIGINT DEFAULT NULL",
    "ALTER TABLE m ADD COLUMN e BIGINT DEFAULT 40 + 2",
    "SELECT * FROM m ORDER BY id",
    "INSERT INTO m (id) VALUES (3)",
    "SELECT * FROM m ORDER BY id",
    "ALTER TABLE m DROP COLUMN v",
    "ALTER TABLE m DROP COLUMN IF EXISTS nope",
    "ALTER TABLE m DROP COLUMN nope",
    "SELECT * FROM m ORDER BY id",
    "UPDATE m SET d = 'changed' WHERE id = 2",
    "SELECT * FROM m ORDER BY id",
    "SELECT table_name, column_name, column_default, is_nullable FROM information_schema.columns \
     WHERE table_name IN ('m', 'n') ORDER BY table_name, ordinal_position",
    "INSERT INTO n (i) VALUES (1)",
    "SELECT * FROM n",
    "BEGIN",
    "ALTER TABLE m ADD COLUMN r INT DEFAULT 7",
    "SELECT id, r FROM m ORDER BY id",
    "ROLLBACK",
    "SELECT * FROM m ORDER BY id",
    "BEGIN",
    "CREATE LOCAL TEMPORARY TABLE tmp1 (a INT, p VARCHAR) ON COMMIT DROP",
    "INSERT INTO tmp1 VALUES (1, '''(0,1)'''), (2, '(0,2)')",
    "SELECT a, p::tid FROM tmp1 ORDER BY a",
    "COMMIT",
    "SELECT * FROM tmp1",
    "SELECT '''(12,3)'''::tid, '(,1)'::tid, '( 5,+6)'::tid, '(-1,0)'::tid, 'x(7,8)y'::tid",
    "SELECT '(1 ,2)'::tid",
    "SELECT '(1,65536)'::tid",
    "SELECT '(4294967296,1)'::tid",
];

#[test]
fn alter_table_temporary_tables_and_tids_match_postgres() {
    compare_with_postgres(ALTER_SETUP, ALTER_CORPUS);
}

/// COPY's text format with the DELIMITER and NULL options (DuckDB's UPDATE copies its rows
/// in with `NULL ''`), PostgreSQL's escapes both ways, and the options' errors.
const COPY_RUNNER: &str = r#"
import sys, json, psycopg
out = []
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    c.execute("CREATE TABLE cp (i BIGINT, s VARCHAR, b BOOLEAN)")
    cases = [
        ("COPY cp FROM STDIN (FORMAT TEXT, NULL '')", "1\t\tt\n2\tx\\ty\t\n"),
        ("COPY cp FROM STDIN WITH (DELIMITER ',', NULL 'nil')", "3,a\\,b,nil\nnil,\\101\\x42\\\\,f\n"),
        ("COPY cp (s, i) FROM STDIN", "\\N\t4\nq\\bz\\v\t5\n"),
        ("COPY cp FROM STDIN (FORMAT BINARY, NULL '')", ""),
        ("COPY cp FROM STDIN (DELIMITER 'a')", ""),
        ("COPY cp FROM STDIN (DELIMITER '.')", ""),
        ("COPY cp FROM STDIN (NULL 'a,b', DELIMITER ',')", ""),
        ("COPY cp FROM STDIN (FORMAT xml)", ""),
        ("COPY cp FROM STDIN (NULL 'x', NULL 'y')", ""),
    ]
    for sql, data in cases:
        try:
            with c.cursor().copy(sql) as cp:
                if data:
                    cp.write(data)
            out.append([sql, "ok"])
        except psycopg.Error as e:
            out.append([sql, "err", e.sqlstate])
        out[-1].append(c.execute("SELECT 1").fetchall() == [(1,)])
    out.append(c.execute("SELECT * FROM cp ORDER BY i NULLS FIRST, s").fetchall())
    # A sequence or a view named where COPY or TRUNCATE wants a table: PostgreSQL's 42809
    # with its message and hint for each direction.
    c.execute("CREATE SEQUENCE cp_seq")
    c.execute("CREATE VIEW cp_view AS SELECT i FROM cp")
    for sql in [
        "COPY cp_seq FROM STDIN",
        "COPY cp_view FROM STDIN",
        "COPY cp_seq TO STDOUT",
        "COPY cp_view TO STDOUT",
        "COPY cp_view (i) TO STDOUT",
        "TRUNCATE cp_seq",
        "TRUNCATE cp, cp_view",
        "INSERT INTO cp_seq VALUES (1)",
    ]:
        try:
            if sql.startswith("COPY"):
                with c.cursor().copy(sql) as cp:
                    pass
            else:
                c.execute(sql)
            out.append([sql, "ok"])
        except psycopg.Error as e:
            out.append([sql, "err", e.sqlstate, e.diag.message_primary, e.diag.message_hint])
    out.append(c.execute("SELECT count(*) FROM cp").fetchall())
    for sql in [
        "COPY (SELECT * FROM cp ORDER BY i NULLS FIRST, s) TO STDOUT (FORMAT TEXT, DELIMITER '|', NULL '')",
        "COPY (SELECT i, s, b FROM cp ORDER BY i NULLS FIRST, s) TO STDOUT",
        "COPY (SELECT s, i FROM cp ORDER BY i NULLS FIRST, s) TO STDOUT WITH (DELIMITER ',', NULL 'nil')",
    ]:
        buf = b""
        with c.cursor().copy(sql) as cp:
            for chunk in cp:
                buf += bytes(chunk)
        out.append([sql, buf.decode()])
print("RESULT", json.dumps(out))
"#;

#[test]
fn copy_text_options_match_postgres() {
    same_outcomes_as_postgres(COPY_RUNNER);
}
