//! Clauses RockLake does not implement are refused, never ignored: an ignored `LIKE` or
//! `INHERITS` makes a table with other columns, an ignored `LIMIT` on DELETE deletes every
//! matching row. Each refusal leaves the catalog as it was.

mod common;

use common::{fresh, rows_of, run, run_ok};

#[test]
fn unsupported_clauses_are_refused_and_change_nothing() {
    let (mut kv, mut e, s) = fresh();
    run_ok(&mut e, &mut kv, s, "CREATE TABLE r (a INT, b TEXT)");
    run_ok(
        &mut e,
        &mut kv,
        s,
        "INSERT INTO r VALUES (1, 'x'), (2, 'y')",
    );
    for (sql, code) in [
        ("CREATE TABLE c1 (LIKE r)", "0A000"),
        ("CREATE TABLE c2 (a INT) INHERITS (r)", "0A000"),
        ("CREATE TABLE c3 (a INT) PARTITION BY RANGE (a)", "0A000"),
        ("CREATE TABLE c4 (a INT) WITH (fillfactor = 70)", "0A000"),
        ("CREATE TABLE c5 (a INT) TABLESPACE other", "0A000"),
        (
            "CREATE TABLE c6 (a INT, PRIMARY KEY (a) DEFERRABLE)",
            "0A000",
        ),
        ("ALTER TABLE r ADD PRIMARY KEY (a) INCLUDE (b)", "0A000"),
        (
            "ALTER TABLE r ADD PRIMARY KEY (a) INITIALLY DEFERRED",
            "0A000",
        ),
        ("CREATE TABLE c6 (a INT) ON COMMIT DELETE ROWS", "42P16"),
        // ALTER SEQUENCE's SET forms (schema, persistence) are not done here.
        ("ALTER SEQUENCE r_seq SET SCHEMA public", "0A000"),
        ("ALTER SEQUENCE r_seq SET UNLOGGED", "0A000"),
        ("DELETE FROM r WHERE a > 0 ORDER BY a LIMIT 1", "42601"),
        // A NUL, which no PostgreSQL text holds (the parser's marked names rely on it).
        (
            "COMMENT ON TABLE r.\"\u{0}constraint\u{0}r_pkey\" IS 'x'",
            "22021",
        ),
        ("SELECT 1\u{0}", "22021"),
        // A sample would be fewer rows than the table, not all of them.
        ("SELECT * FROM r TABLESAMPLE BERNOULLI (50)", "0A000"),
        // PostgreSQL's exact numeric form is not here; the double precision one is.
        ("SELECT width_bucket(0.3, 0.1, 0.5, 2)", "0A000"),
        (
            "SELECT * FROM r TABLESAMPLE SYSTEM (10) REPEATABLE (1)",
            "0A000",
        ),
        ("DELETE FROM r WHERE a > 0 LIMIT 1", "42601"),
        ("UPDATE r SET b = 'z' WHERE a > 0 LIMIT 1", "42601"),
        ("INSERT INTO r SET a = 3", "42601"),
        (
            "INSERT INTO r VALUES (3, 'z') ON CONFLICT (a) WHERE a > 0 DO NOTHING",
            "0A000",
        ),
    ] {
        let r = run(&mut e, &mut kv, s, sql);
        let err = r.error.unwrap_or_else(|| panic!("{sql}: accepted"));
        assert_eq!(err.code, code, "{sql}: {}", err.message);
    }
    let r = run_ok(
        &mut e,
        &mut kv,
        s,
        "SELECT count(*) FROM pg_class WHERE relname LIKE 'c_'",
    );
    assert_eq!(rows_of(&r), vec![vec![Some("0".to_string())]]);
    let r = run_ok(&mut e, &mut kv, s, "SELECT a, b FROM r ORDER BY a");
    assert_eq!(
        rows_of(&r),
        vec![
            vec![Some("1".to_string()), Some("x".to_string())],
            vec![Some("2".to_string()), Some("y".to_string())],
        ]
    );
    // What PostgreSQL accepts and RockLake can honour still works.
    run_ok(
        &mut e,
        &mut kv,
        s,
        "CREATE UNLOGGED TABLE u (a INT) TABLESPACE pg_default",
    );
    run_ok(&mut e, &mut kv, s, "INSERT INTO u DEFAULT VALUES");
}

/// EXPLAIN's options: those that only change what RockLake's plan lines do not show are taken;
/// ANALYZE (it would run the statement) and other output formats are refused, not ignored.
#[test]
fn explain_options_are_taken_or_refused() {
    let (mut kv, mut e, s) = fresh();
    run_ok(&mut e, &mut kv, s, "CREATE TABLE r (a INT PRIMARY KEY)");
    for sql in [
        "EXPLAIN SELECT * FROM r WHERE a = 1",
        "EXPLAIN (COSTS OFF) SELECT * FROM r",
        "EXPLAIN (VERBOSE, FORMAT TEXT, ANALYZE false) SELECT * FROM r",
    ] {
        let r = run_ok(&mut e, &mut kv, s, sql);
        match r.outputs.last() {
            Some(rocklake_core::api::Output::Rows { tag, .. }) => {
                assert_eq!(tag, "EXPLAIN", "{sql}")
            }
            other => panic!("{sql}: {other:?}"),
        }
        assert!(!rows_of(&r).is_empty(), "{sql}: no plan");
    }
    for (sql, code) in [
        ("EXPLAIN (ANALYZE) SELECT * FROM r", "0A000"),
        ("EXPLAIN (ANALYZE true, COSTS off) SELECT * FROM r", "0A000"),
        ("EXPLAIN (FORMAT JSON) SELECT * FROM r", "0A000"),
        ("EXPLAIN (BOGUS) SELECT * FROM r", "42601"),
    ] {
        let r = run(&mut e, &mut kv, s, sql);
        let err = r.error.unwrap_or_else(|| panic!("{sql}: accepted"));
        assert_eq!(err.code, code, "{sql}: {}", err.message);
    }
}
