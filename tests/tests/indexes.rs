//! CREATE INDEX, DROP INDEX and ALTER INDEX against PostgreSQL 15: the indexes' catalog rows
//! (`pg_indexes`, `pg_index`, `pg_class`, `pg_attribute`, `pg_depend`, `pg_get_indexdef`,
//! `regclass`), the names PostgreSQL chooses, notices and errors (SQLSTATE, message, detail,
//! hint), what transactions, renames, column drops and type changes do to them, and the rows
//! queries read through them — the same on both. Then what RockLake refuses (0A000), with the
//! session serving on.

use rocklake_tests::{same_outcomes_as_postgres, sql_line, Server, PSYCOPG_HARNESS};

const SCRIPT: &str = r#"

INDEXES = "SELECT schemaname, tablename, indexname, indexdef FROM pg_indexes WHERE schemaname IN ('public', 'sc') ORDER BY 2, 3"
PG_INDEX = ("SELECT c.relname, c.relkind, c.relam, c.relnatts, i.indnatts, i.indnkeyatts, i.indisunique, "
            "i.indisprimary, i.indkey::text, i.indoption::text, i.indclass::text, i.indcollation::text, "
            "i.indisvalid, i.indisready, i.indislive, i.indrelid::regclass, i.indexprs IS NULL, i.indpred IS NULL "
            "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname IN ('public', 'sc') ORDER BY 1")
HASINDEX = "SELECT relname, relhasindex FROM pg_class WHERE relname IN ('t', 'u', 'v', 'sq') ORDER BY 1"
DEPEND = ("SELECT objid::regclass, refobjid::regclass, refobjsubid, deptype FROM pg_depend "
          "WHERE classid = 'pg_class'::regclass AND deptype = 'a' AND objid IN (SELECT indexrelid FROM pg_index) "
          "AND refobjid::regclass::text NOT LIKE 'pg_toast.%' "
          "ORDER BY objid::regclass::text, 3")
for sql in [
    "CREATE TABLE t (a int PRIMARY KEY, b text, c bigint, d timestamp, e numeric(8, 2), f boolean, g date)",
    "INSERT INTO t SELECT i, 'b' || (i % 10), i % 7, timestamp '2024-01-01' + i * interval '1 hour', "
    "i / 4.0, i % 3 = 0, date '2024-01-01' + i FROM generate_series(1, 300) i",
    "CREATE INDEX ON t (b)",
    "CREATE INDEX ON t (b)",
    "CREATE INDEX t_cd ON t (c DESC, d NULLS FIRST, a DESC NULLS LAST)",
    "CREATE INDEX IF NOT EXISTS t_cd ON t (c)",
    "CREATE INDEX IF NOT EXISTS t ON t (c)",
    "CREATE INDEX t_cd ON t (c)",
    "CREATE INDEX t_pkey ON t (c)",
    "CREATE INDEX t ON t (c)",
    "CREATE INDEX t_x ON t (nope)",
    "CREATE INDEX t_x ON nope (a)",
    "CREATE INDEX t_x ON nope.t (a)",
    "CREATE INDEX t_x ON t (ctid)",
    "CREATE INDEX t_x ON t USING foo (c)",
    "CREATE INDEX public.t_x ON t (c)",
    "CREATE INDEX t_x ON pg_class (relname)",
    "CREATE VIEW v AS SELECT a, b FROM t",
    "CREATE INDEX t_x ON v (a)",
    "CREATE SEQUENCE sq",
    "CREATE INDEX t_x ON sq (last_value)",
    "CREATE TABLE j (x json, y int)",
    "CREATE INDEX ON j (x)",
    "CREATE INDEX ON t (a, a)",
    "CREATE INDEX ON t (e, f, g)",
    "CREATE INDEX USING_btree ON t USING btree (c)",
    "CREATE SCHEMA sc",
    "CREATE TABLE sc.u (k bigint, v text)",
    "CREATE INDEX ON sc.u (k)",
    "CREATE INDEX t_b_idx ON sc.u (v)",
    INDEXES, PG_INDEX, HASINDEX, DEPEND,
    "SELECT attname, attnum, atttypid::regtype, attnotnull FROM pg_attribute WHERE attrelid = 't_cd'::regclass ORDER BY attnum",
    "SELECT attname, attnum FROM pg_attribute WHERE attrelid = 't_a_a1_idx'::regclass ORDER BY attnum",
    "SELECT pg_get_indexdef('t_cd'::regclass), pg_get_indexdef('t_cd'::regclass, 1, true), "
    "pg_get_indexdef('t_cd'::regclass, 2, false), pg_get_indexdef('t_cd'::regclass, 4, true), "
    "pg_get_indexdef('t_pkey'::regclass, 0, true), pg_get_indexdef('sc.u_k_idx'::regclass, 0, true), "
    "pg_get_indexdef('t_cd'::regclass, 0, false)",
    "SELECT 't_b_idx'::regclass, to_regclass('t_b_idx1'), to_regclass('sc.t_b_idx'), 'sc.u_k_idx'::regclass::text, "
    "'t_cd'::regclass::oid = (SELECT oid FROM pg_class WHERE relname = 't_cd')",
    "SELECT pg_get_constraintdef('t_cd'::regclass), obj_description('t_cd'::regclass, 'pg_class')",
    # Rows read through the indexes: equalities, IN lists and ranges of each type.
    "SELECT count(*), min(a), max(a) FROM t WHERE b = 'b3'",
    "SELECT a FROM t WHERE c = 3 AND d > '2024-01-05' ORDER BY a",
    "SELECT a FROM t WHERE c IN (1, 5) AND d <= '2024-01-02 12:00' ORDER BY a",
    "SELECT a FROM t WHERE e = 12.5 AND f AND g = '2024-02-20' ORDER BY a",
    "SELECT a FROM t WHERE e = 12.50 ORDER BY a",
    "SELECT a FROM t WHERE e IN (1, 2.25, 75) ORDER BY a",
    "SELECT count(*) FROM t WHERE c = 3.5",
    "SELECT count(*) FROM t WHERE c = NULL",
    "SELECT k FROM sc.u WHERE k = 1",
    # Comments, renames and drops.
    "COMMENT ON INDEX t_cd IS 'cd index'",
    "COMMENT ON INDEX sc.u_k_idx IS 'k index'",
    "SELECT obj_description('t_cd'::regclass, 'pg_class'), obj_description('sc.u_k_idx'::regclass)",
    "ALTER INDEX t_cd RENAME TO t_cd2",
    "ALTER INDEX t_pkey RENAME TO t_key",
    "ALTER INDEX t_cd2 RENAME TO t_b_idx",
    "ALTER INDEX nope RENAME TO x",
    "ALTER INDEX t_cd2 RENAME TO sc.x",
    "SELECT conname FROM pg_constraint WHERE conrelid = 't'::regclass",
    "SELECT obj_description('t_cd2'::regclass, 'pg_class')",
    INDEXES,
    "DROP INDEX t_key",
    "DROP INDEX t",
    "DROP INDEX v",
    "DROP INDEX nope",
    "DROP INDEX sc.nope",
    "DROP INDEX nope.x",
    "DROP INDEX IF EXISTS nope, t_b_idx1",
    "DROP INDEX t_cd2, t_a_a1_idx",
    "DROP INDEX sc.t_b_idx CASCADE",
    INDEXES,
    # Transactional: a rollback takes an index (or its drop) back; another session sees an
    # index once it is committed.
    "BEGIN",
    "CREATE INDEX t_tx ON t (d)",
    "DROP INDEX t_b_idx",
    "SELECT count(*) FROM t WHERE d = '2024-01-02 01:00'",
    "ROLLBACK",
    INDEXES,
    "BEGIN",
    "CREATE INDEX CONCURRENTLY t_y ON t (c)",
    "ROLLBACK",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS t_y ON t (c)",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS t_y ON t (c)",
    "DROP INDEX CONCURRENTLY IF EXISTS nope",
    "CREATE INDEX t_c1 ON t (c)",
    "CREATE INDEX t_c2 ON t (c)",
    "DROP INDEX CONCURRENTLY t_c1, t_c2",
    "DROP INDEX CONCURRENTLY t_c1 CASCADE",
    "BEGIN",
    "DROP INDEX CONCURRENTLY t_c1",
    "ROLLBACK",
    "DROP INDEX CONCURRENTLY t_c1",
    "DROP INDEX CONCURRENTLY IF EXISTS t_c2 RESTRICT",
    "DROP INDEX CONCURRENTLY t_c2",
    "BEGIN READ ONLY",
    "CREATE INDEX t_ro ON t (c)",
    "ROLLBACK",
    # Column drops take their indexes along; a type change rebuilds them.
    "ALTER TABLE t DROP COLUMN g",
    "ALTER TABLE t ALTER COLUMN c TYPE int",
    "ALTER TABLE t ALTER COLUMN c TYPE json USING to_json(c)",
    INDEXES, PG_INDEX, DEPEND,
    "SELECT a FROM t WHERE c = 3 AND a < 30 ORDER BY a",
    "SELECT count(*) FROM t WHERE e = 12.5 AND f",
    # A key added under rows already indexed; the index follows the rows.
    "ALTER TABLE sc.u ADD PRIMARY KEY (k)",
    "INSERT INTO sc.u VALUES (1, 'one'), (2, 'two')",
    "UPDATE sc.u SET v = 'uno' WHERE k = 1",
    "SELECT k, v FROM sc.u WHERE k = 1",
    # Names PostgreSQL chooses for long names.
    "CREATE TABLE averyveryveryveryveryveryveryveryveryveryverylongtablename_abc (averyveryveryveryveryveryveryverylongcolumnname int, b int)",
    "CREATE INDEX ON averyveryveryveryveryveryveryveryveryveryverylongtablename_abc (averyveryveryveryveryveryveryverylongcolumnname, b)",
    "CREATE INDEX ON averyveryveryveryveryveryveryveryveryveryverylongtablename_abc (averyveryveryveryveryveryveryverylongcolumnname, b)",
    "CREATE INDEX ON averyveryveryveryveryveryveryveryveryveryverylongtablename_abc (b, b, b)",
    "SELECT indexname FROM pg_indexes WHERE tablename LIKE 'avery%' ORDER BY 1",
    "DROP TABLE averyveryveryveryveryveryveryveryveryveryverylongtablename_abc",
    # Partial indexes (their entries still cover every row): the predicate as PostgreSQL
    # writes it, plain and pretty, and its errors.
    "CREATE TABLE pf (id bigint PRIMARY KEY, table_id bigint, end_snapshot bigint, size bigint, flag boolean)",
    "INSERT INTO pf SELECT i, i % 5, CASE WHEN i % 4 = 0 THEN i END, i * 10, i % 2 = 0 FROM generate_series(1, 40) i",
    "CREATE INDEX idx_live ON pf (table_id, end_snapshot, size) WHERE end_snapshot IS NULL",
    "CREATE INDEX pf2 ON pf (table_id) WHERE end_snapshot IS NOT NULL AND size > 100",
    "CREATE INDEX pf3 ON pf (id) WHERE flag",
    "CREATE INDEX pf4 ON pf (id) WHERE NOT flag OR (table_id = 3 AND size < 50)",
    "CREATE INDEX pf5 ON pf (id) WHERE size BETWEEN 10 AND 100",
    "CREATE INDEX pf6 ON pf (id) WHERE (end_snapshot IS NULL AND size > 1) OR flag IS TRUE",
    "CREATE INDEX pf7 ON pf (id) WHERE (flag OR size > 5) AND NOT (table_id = 1 OR table_id = 2)",
    "CREATE INDEX pe1 ON pf (id) WHERE size",
    "CREATE INDEX pe2 ON pf (id) WHERE nope > 1",
    "CREATE INDEX pe3 ON pf (id) WHERE id > (SELECT 1)",
    "CREATE INDEX pe4 ON pf (id) WHERE size > extract(epoch from now())",
    "CREATE INDEX pe5 ON pf (id) WHERE count(*) > 1",
    "CREATE INDEX pe6 ON pf (nope) WHERE nope2 > 1",
    "CREATE INDEX pe7 ON pf (id) WHERE random() > 0.5",
    "SELECT indexname, indexdef, pg_get_indexdef(indexname::regclass, 0, true) FROM pg_indexes WHERE tablename = 'pf' ORDER BY 1",
    "SELECT c.relname, i.indpred IS NULL FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'pf'::regclass ORDER BY 1",
    "SELECT id FROM pf WHERE table_id = 2 AND end_snapshot IS NULL ORDER BY id",
    "SELECT id FROM pf WHERE table_id = 2 ORDER BY id",
    # The predicate follows its columns: qualified names written bare, renames, drops, types.
    "CREATE INDEX pq ON pf (id) WHERE pf.flag AND public.pf.table_id > 1",
    "CREATE INDEX pq2 ON pf (id) WHERE abs(pf.size) > 1",
    "SET quote_all_identifiers = on",
    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'pf' AND indexname IN ('idx_live', 'pf4', 'pq') ORDER BY 1",
    "RESET quote_all_identifiers",
    "ALTER TABLE pf RENAME COLUMN size TO bytes",
    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'pf' ORDER BY 1",
    DEPEND,
    "ALTER TABLE pf DROP COLUMN flag",
    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'pf' ORDER BY 1",
    "ALTER TABLE pf ALTER COLUMN bytes TYPE text",
    "ALTER TABLE pf ALTER COLUMN bytes TYPE numeric",
    "SELECT indexname FROM pg_indexes WHERE tablename = 'pf' ORDER BY 1",
    "DROP TABLE pf",
    # Two types changed in one statement: the predicate is bound again once, after both.
    "CREATE TABLE p2 (a int, b int, c int)",
    "CREATE INDEX p2_ab ON p2 (c) WHERE a = b",
    "ALTER TABLE p2 ALTER COLUMN a TYPE text, ALTER COLUMN b TYPE text",
    "ALTER TABLE p2 ALTER COLUMN a TYPE int USING a::int",
    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'p2' ORDER BY 1",
    "ALTER TABLE p2 RENAME TO p3",
    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'p3' ORDER BY 1",
    "DROP TABLE p3",
    "CREATE TABLE wide (" + ", ".join(f"c{i} int" for i in range(33)) + ")",
    "CREATE INDEX ON wide (" + ", ".join(f"c{i}" for i in range(33)) + ")",
    "CREATE INDEX ON wide (" + ", ".join(f"c{i}" for i in range(32)) + ")",
    "SELECT count(*) FROM pg_attribute WHERE attrelid = (SELECT indexrelid FROM pg_index WHERE indrelid = 'wide'::regclass)",
    "DROP TABLE wide",
    # ALTER INDEX renames a table or view too, as PostgreSQL's does.
    "ALTER INDEX v RENAME TO v2",
    "SELECT count(*) FROM v2",
    "DROP TABLE t CASCADE",
    "DROP SCHEMA sc CASCADE",
    INDEXES, "SELECT count(*) FROM pg_index WHERE NOT indisprimary AND indrelid::regclass::text NOT LIKE 'pg_%'",
]:
    run(sql)

# Another session sees an index once it is committed, and drops it.
run("CREATE TABLE w (x int, y text)")
run("INSERT INTO w SELECT i, 'y' || i FROM generate_series(1, 50) i")
run("BEGIN", a)
run("CREATE INDEX w_y ON w (y)", a)
run("SELECT indexname FROM pg_indexes WHERE tablename = 'w'", b)
run("SELECT x FROM w WHERE y = 'y7'", b)
run("COMMIT", a)
run("SELECT indexname FROM pg_indexes WHERE tablename = 'w'", b)
run("INSERT INTO w VALUES (51, 'y7')", b)
run("SELECT x FROM w WHERE y = 'y7' ORDER BY x", a)
run("DROP INDEX w_y", b)
run("SELECT x FROM w WHERE y = 'y7' ORDER BY x", a)
print("RESULT " + json.dumps(out))
"#;

#[test]
fn indexes_match_postgres() {
    let got = same_outcomes_as_postgres(&format!("{PSYCOPG_HARNESS}{SCRIPT}"));
    // The comparison compared real indexes: PostgreSQL's definitions were listed, and
    // queries found rows through them.
    let text = serde_json::Value::Array(got.clone()).to_string();
    for expected in [
        "CREATE INDEX t_cd ON public.t USING btree (c DESC, d NULLS FIRST, a DESC NULLS LAST)",
        "t_a_a1_idx",
        "u_k_idx",
    ] {
        assert!(text.contains(expected), "no outcome shows {expected}");
    }
    let errors = got.iter().filter(|o| o[1] == "error").count();
    assert!(errors >= 20, "{errors} errors");
}

/// What RockLake refuses, with PostgreSQL's SQLSTATE for an unsupported feature and a
/// session that serves on.
#[test]
fn unsupported_index_forms_are_refused_clearly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rl = Server::start(&dir.path().join("catalog"), "postgres", &[]).expect("rocklake");
    let setup = sql_line(&rl, "CREATE TABLE t (a int, b text)");
    assert!(setup.starts_with("OK"), "{setup}");
    for sql in [
        "CREATE UNIQUE INDEX t_u ON t (a)",
        "CREATE INDEX t_x ON t ((a + 1))",
        "CREATE INDEX t_x ON t (lower(b))",
        "CREATE INDEX t_x ON t USING hash (a)",
        "CREATE INDEX t_x ON t USING gin (b)",
        "CREATE UNIQUE INDEX t_x ON t (a) WHERE a > 1",
        "CREATE INDEX t_x ON t (a) INCLUDE (b)",
        "CREATE INDEX t_x ON t (a) WITH (fillfactor = 70)",
        "CREATE INDEX t_x ON t (b text_pattern_ops)",
    ] {
        let line = sql_line(&rl, sql);
        assert!(line.starts_with("ERR 0A000"), "{sql}: {line}");
    }
    let after = sql_line(
        &rl,
        "SELECT count(*) FROM pg_class WHERE relkind = 'i' AND relname LIKE 't_%'",
    );
    assert_eq!(after, "OK [(0,)]");
    rl.stop().expect("stop");
}
