//! Views (docs/decisions/0039) compared with PostgreSQL 15: `CREATE [OR REPLACE] VIEW` with
//! PostgreSQL's checks, reads through views (joins, grouping, views of views, WITH, ORDER BY
//! and LIMIT inside), the catalog's view of them (`pg_class`, `pg_attribute`, `pg_views`,
//! `information_schema`), DROP with its dependencies and CASCADE, and the changes to a table
//! a view reads that PostgreSQL refuses. Then a view kept across a restart, and read under
//! another search_path.

use rocklake_tests::{
    duckdb_python, result_json, same_outcomes_as_postgres, Server, PSYCOPG_HARNESS,
};

const SCRIPT: &str = r#"
run("CREATE TABLE files (file_id bigint PRIMARY KEY, table_id bigint, size_bytes bigint, path text)")
run("INSERT INTO files VALUES (1, 10, 1000, 'a.parquet'), (2, 10, 3000, 'b.parquet'), (3, 11, NULL, 'c.parquet')")
run("CREATE TABLE tables (table_id bigint PRIMARY KEY, name varchar(20))")
run("INSERT INTO tables VALUES (10, 'orders'), (11, 'items'), (12, 'users')")
run("CREATE VIEW table_sizes AS SELECT t.name, count(f.file_id) AS files, sum(f.size_bytes) AS bytes "
    "FROM tables t LEFT JOIN files f USING (table_id) GROUP BY t.name")
run("SELECT * FROM table_sizes ORDER BY name")
run("SELECT s.name FROM table_sizes s WHERE s.files > 0 ORDER BY 1")
run("SELECT * FROM table_sizes ts JOIN tables t ON t.name = ts.name ORDER BY t.table_id")
# A view of a view, column names given, a WITH query, ORDER BY and LIMIT inside.
run("CREATE VIEW big (table_name, total) AS SELECT name, bytes FROM table_sizes WHERE bytes > 500")
run("SELECT * FROM big")
run("CREATE VIEW counted AS WITH w AS (SELECT table_id FROM files) SELECT count(*) AS n FROM w")
run("SELECT n FROM counted")
run("CREATE VIEW largest AS SELECT path, size_bytes FROM files ORDER BY size_bytes DESC NULLS LAST LIMIT 2")
run("SELECT * FROM largest")
run("CREATE VIEW literal AS SELECT 'x' AS l, 1 AS one, 2.5::numeric(4,2) AS n")
run("SELECT pg_typeof(l), l, one, n FROM literal")
# What the catalog says.
run("SELECT relkind, relpages, reltuples, relhasindex, relam, relfilenode, relreplident, relnatts, reltype <> 0 "
    "FROM pg_class WHERE relname IN ('table_sizes', 'big') ORDER BY relname")
run("SELECT attname, attnum, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute "
    "WHERE attrelid = 'big'::regclass ORDER BY attnum")
run("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'literal'::regclass ORDER BY attnum")
run("SELECT schemaname, viewname, viewowner FROM pg_views WHERE schemaname = 'public' ORDER BY viewname")
run("SELECT table_name, table_type, is_insertable_into FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'VIEW' ORDER BY 1")
run("SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_name IN ('big', 'literal') ORDER BY 1, ordinal_position")
run("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
# CREATE's checks.
run("CREATE VIEW big AS SELECT 1")
run("CREATE VIEW files AS SELECT 1")
run("CREATE OR REPLACE VIEW files AS SELECT 1")
run("CREATE VIEW dup AS SELECT table_id, table_id FROM files")
run("CREATE VIEW wide (a, b, c) AS SELECT 1, 2")
run("CREATE VIEW nosuch_schema.v AS SELECT 1")
run("CREATE VIEW broken AS SELECT nosuch FROM files")
# OR REPLACE keeps the columns it had (names, types, places); new ones may follow.
run("CREATE OR REPLACE VIEW largest AS SELECT path, size_bytes, table_id FROM files ORDER BY size_bytes LIMIT 1")
run("SELECT * FROM largest")
run("CREATE OR REPLACE VIEW largest AS SELECT path FROM files")
run("CREATE OR REPLACE VIEW largest AS SELECT size_bytes, path, table_id FROM files")
run("CREATE OR REPLACE VIEW largest AS SELECT path, size_bytes::int, table_id FROM files")
# Changes to what a view reads.
run("ALTER TABLE files ADD COLUMN note text")
run("SELECT * FROM largest")
run("ALTER TABLE files DROP COLUMN size_bytes")
run("ALTER TABLE files ALTER COLUMN size_bytes TYPE numeric")
run("ALTER TABLE files DROP COLUMN note")
run("TRUNCATE big")
run("COPY big TO STDOUT")
run("COMMENT ON VIEW big IS 'tables over 500 bytes'")
run("SELECT obj_description('big'::regclass, 'pg_class')")
run("COMMENT ON TABLE big IS 'x'")
run("COMMENT ON VIEW files IS 'x'")
# DROP and its dependencies.
run("DROP TABLE files")
run("DROP VIEW files")
run("DROP TABLE big")
run("DROP SEQUENCE big")
run("DROP VIEW table_sizes")
run("DROP VIEW table_sizes, largest")
run("BEGIN")
run("DROP VIEW table_sizes CASCADE")
run("SELECT * FROM big")
run("ROLLBACK")
run("SELECT count(*) FROM big")
run("DROP TABLE tables CASCADE")
run("SELECT * FROM table_sizes")
run("DROP VIEW IF EXISTS big, nosuch")
run("DROP VIEW nosuch")
# A view that reads itself through OR REPLACE.
run("CREATE VIEW again AS SELECT 1 AS a")
run("CREATE OR REPLACE VIEW again AS SELECT a FROM again")
run("SELECT * FROM again")
# In a schema, dropped with it.
run("CREATE SCHEMA lake")
run("CREATE TABLE lake.snap (id int)")
run("CREATE VIEW public.snaps AS SELECT id FROM lake.snap")
run("DROP SCHEMA lake")
run("DROP SCHEMA lake CASCADE")
run("SELECT * FROM snaps")
print("RESULT", json.dumps(out))
"#;

#[test]
fn views_match_postgres() {
    let got = same_outcomes_as_postgres(&format!("{PSYCOPG_HARNESS}{SCRIPT}"));
    let text = serde_json::to_string(&got).expect("json");
    // Rows came through views, and the dependency errors and cascades were compared.
    assert!(text.contains(r#"["orders","2","4000"]"#), "{text}");
    assert!(
        text.contains("cannot drop table files because other objects depend on it"),
        "{text}"
    );
    assert!(text.contains("drop cascades to view big"), "{text}");
    assert!(text.contains("drop cascades to 2 other objects"), "{text}");
    assert!(
        text.contains("cannot drop column size_bytes of table files"),
        "{text}"
    );
    assert!(text.contains("infinite recursion detected"), "{text}");
}

/// A view is part of the catalog: there after a restart, with its definition, and it reads
/// the relations it was created over whatever search_path a later session has.
const KEPT: &str = r#"
import sys, json, psycopg
dsn, step = sys.argv[1], sys.argv[2]
c = psycopg.connect(dsn, autocommit=True)
out = {}
if step == "make":
    c.execute("CREATE SCHEMA other")
    c.execute("CREATE TABLE t (a int)")
    c.execute("INSERT INTO t VALUES (1), (2)")
    c.execute("CREATE TABLE other.t (a int)")
    c.execute("INSERT INTO other.t VALUES (100)")
    c.execute("CREATE VIEW v AS SELECT sum(a) AS s FROM t")
else:
    c.execute("SET search_path = other, public")
    out["rows"] = c.execute("SELECT * FROM v").fetchall()
    out["def"] = c.execute("SELECT definition FROM pg_views WHERE viewname = 'v'").fetchone()[0]
    out["kind"] = c.execute("SELECT relkind FROM pg_class WHERE relname = 'v'").fetchone()[0]
    # Read-only: writes go to the tables (PostgreSQL would refuse these too, for the
    # aggregate, with 55000).
    for sql in ("INSERT INTO v VALUES (1)", "UPDATE v SET s = 1", "DELETE FROM v"):
        try:
            c.execute(sql)
            out[sql] = "ok"
        except psycopg.Error as e:
            out[sql] = e.sqlstate
print("RESULT", json.dumps(out, default=str))
"#;

#[test]
fn views_are_kept_and_read_the_relations_they_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    let rl = Server::start(&catalog, "postgres", &[]).expect("rocklake");
    let (ok, out) = duckdb_python("155", KEPT, &[&rl.dsn(), "make"]).expect("make");
    assert!(ok, "{out}");
    rl.stop().expect("stop");
    let rl = Server::start(&catalog, "postgres", &[]).expect("rocklake again");
    let (ok, out) = duckdb_python("155", KEPT, &[&rl.dsn(), "read"]).expect("read");
    assert!(ok, "{out}");
    let got = result_json(&out);
    // public.t's sum, not other.t's, though `other` comes first in search_path now.
    assert_eq!(got["rows"], serde_json::json!([[3]]), "{got}");
    assert_eq!(got["kind"], "v", "{got}");
    for sql in [
        "INSERT INTO v VALUES (1)",
        "UPDATE v SET s = 1",
        "DELETE FROM v",
    ] {
        assert_eq!(got[sql], "0A000", "{got}");
    }
    let def = got["def"].as_str().unwrap_or_default();
    assert!(def.contains("public.t"), "{def}");
    rl.stop().expect("stop");
}
