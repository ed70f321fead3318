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
# (is_updatable and is_insertable_into differ: RockLake's views are read-only.)
run("SELECT table_catalog, table_schema, table_name, view_definition IS NOT NULL, check_option, is_trigger_updatable, "
    "is_trigger_deletable, is_trigger_insertable_into FROM information_schema.views WHERE table_schema = 'public' ORDER BY 3")
run("SELECT count(*) > 10 FROM information_schema.views WHERE table_schema = 'pg_catalog'")
run("SELECT table_name, table_type, is_insertable_into FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'VIEW' ORDER BY 1")
run("SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_name IN ('big', 'literal') ORDER BY 1, ordinal_position")
run("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
# Each view's _RETURN rule and what it depends on (pg_dump orders views by these): each
# column read (also USING's and a WITH query's), or a relation read whole.
RULES = ("SELECT c.relname, d.refobjid::regclass::text, d.refobjsubid, d.deptype FROM pg_depend d "
         "JOIN pg_rewrite r ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid "
         "JOIN pg_class c ON c.oid = r.ev_class WHERE c.relnamespace = 'public'::regnamespace ORDER BY 1, 2, 3, 4")
run(RULES)
# (ev_qual and ev_action are pg_node_tree there, text here.)
run("SELECT rulename, ev_class::regclass::text, ev_type, ev_enabled, is_instead FROM pg_rewrite "
    "WHERE ev_class IN (SELECT oid FROM pg_class WHERE relnamespace = 'public'::regnamespace) ORDER BY 2")
run("SELECT relname, relhasrules FROM pg_class WHERE relnamespace = 'public'::regnamespace ORDER BY 1")
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
# (Its rule reads its own column `a` there; here, as it does not bind, the view as a whole.)
run("DROP VIEW again")
# TABLE name as a view's query, alone and inside one.
run("CREATE TABLE w (a int, b int)")
run("INSERT INTO w VALUES (1, 2)")
run("CREATE VIEW vt AS TABLE w")
run("CREATE VIEW vt2 AS SELECT * FROM (TABLE w) s UNION ALL TABLE w")
run("SELECT * FROM vt")
run("SELECT * FROM vt2")
# Columns read without being named: NATURAL joins and `*`.
run("CREATE TABLE n1 (id int, b int)")
run("CREATE TABLE n2 (id int, b int)")
run("INSERT INTO n1 VALUES (1, 1), (1, 2)")
run("INSERT INTO n2 VALUES (1, 1)")
run("CREATE VIEW vn AS SELECT count(*) FROM n1 NATURAL JOIN n2")
run("ALTER TABLE n1 DROP COLUMN b")
run("ALTER TABLE w DROP COLUMN b")
# Every operation of an ALTER counts; CASCADE drops the views reading the column.
run("CREATE VIEW vw AS SELECT b FROM w WHERE a > 0")
run("CREATE VIEW vw2 AS SELECT * FROM vw")
run("ALTER TABLE w ADD COLUMN z int, ALTER COLUMN a TYPE bigint")
run("ALTER TABLE w DROP COLUMN b CASCADE")
run("SELECT * FROM vt")
run("SELECT count(*) FROM pg_views WHERE viewname IN ('vt', 'vt2', 'vw', 'vw2')")
# A serial column's sequence, read by a view, goes only with CASCADE.
run("CREATE TABLE ser (id serial, x int)")
run("CREATE VIEW vser AS SELECT last_value FROM ser_id_seq")
run("DROP TABLE ser")
run("ALTER TABLE ser DROP COLUMN id")
run("DROP TABLE ser CASCADE")
run("SELECT * FROM vser")
# In a schema, dropped with it.
run("CREATE SCHEMA lake")
run("CREATE TABLE lake.snap (id int)")
run("CREATE VIEW public.snaps AS SELECT id FROM lake.snap")
run("DROP SCHEMA lake")
run("DROP SCHEMA lake CASCADE")
run("SELECT * FROM snaps")
# Relations named in strings PostgreSQL reads as regclass constants: found at CREATE VIEW
# (with its errors), depended on (DROP, pg_depend), followed through renames.
run("CREATE TABLE rc (id int PRIMARY KEY, v text)")
run("CREATE SEQUENCE rs")
run("CREATE VIEW vrs AS SELECT nextval('rs') > 0 AS drew, 'rc'::regclass::text AS r, CAST('rs' AS regclass)::text AS s, "
    "pg_relation_size('rc') >= 0 AS sized")
run("CREATE VIEW vbad AS SELECT 'nosuch'::regclass")
run("CREATE VIEW vbad AS SELECT nextval('nosch.rs')")
run("CREATE VIEW vbad AS SELECT currval('\"RS\"')")
run("CREATE VIEW vcat AS SELECT 'pg_class'::regclass::text AS c")
run("SELECT * FROM vrs")
run("SELECT * FROM vcat")
run(RULES)
run("DROP SEQUENCE rs")
run("DROP TABLE rc")
run("ALTER SEQUENCE rs RENAME TO rs2")
run("ALTER TABLE rc RENAME TO rc2")
run("SELECT r, s FROM vrs")
run("DROP SEQUENCE rs2 CASCADE")
run("SELECT count(*) FROM pg_views WHERE viewname = 'vrs'")
# A relation only named in a string: none of its columns is the view's.
run("CREATE TABLE ru (a int, c int)")
run("CREATE VIEW vru AS SELECT pg_total_relation_size('ru') >= 0 AS sized, 1 AS a")
run("ALTER TABLE ru DROP COLUMN a")
run("ALTER TABLE ru ALTER COLUMN c TYPE bigint")
run("ALTER TABLE ru ADD COLUMN b int")
run("ALTER TABLE ru DROP COLUMN c CASCADE")
run("SELECT * FROM vru")
run("DROP TABLE ru")
# The other spellings of such a string; a column error comes before the string's.
run("CREATE SEQUENCE rq")
run("CREATE VIEW vrq AS SELECT nextval(('rq')) > 0 AS p, currval(E'rq') > 0 AS c, regclass 'rq' AS r, $$rq$$::regclass AS d")
run("ALTER SEQUENCE rq RENAME TO rq2")
run("SELECT * FROM vrq")
run("SELECT regclass 'rq2'::oid > 0, regclass 'nosuch'")
run("CREATE VIEW vbad AS SELECT nocol, 'nope'::regclass FROM rc2")
run("CREATE VIEW vbad AS SELECT regclass 'nope'")
run("DROP SEQUENCE rq2")
print("RESULT", json.dumps(out))
"#;

/// Renames under views: a table, a view, their columns. PostgreSQL's views hold what they
/// read by identity; RockLake rewrites the views' texts to name what was renamed, keeping
/// their column names, and refuses a rename the new text would read otherwise.
const RENAMES: &str = r#"
run("CREATE TABLE ra (id int, a int, b text)")
run("CREATE TABLE rb (id int, c int)")
run("INSERT INTO ra VALUES (1, 10, 'x'), (2, 20, 'y')")
run("INSERT INTO rb VALUES (1, 100)")
run("CREATE VIEW v1 AS SELECT a, b, a + 1 AS a1, (SELECT max(a) FROM ra) AS m FROM ra WHERE a > 5 ORDER BY a")
run("CREATE VIEW v2 AS SELECT ra.a, rb.c FROM ra JOIN rb ON ra.id = rb.id")
run("CREATE VIEW v3 AS SELECT x.a FROM (SELECT a FROM ra) x")
run("CREATE VIEW v4 AS SELECT a::text, upper(b), a AS named FROM ra")
run("CREATE VIEW v5 AS SELECT * FROM ra")
run("CREATE VIEW v6 AS SELECT a FROM ra JOIN rb USING (id)")
run("CREATE VIEW v7 AS SELECT r.q AS k FROM ra r(i, q)")
run("CREATE VIEW v8 AS SELECT (SELECT c FROM rb WHERE rb.id = ra.id) FROM ra")
run("CREATE VIEW v9 AS SELECT sum(a) OVER (ORDER BY a), a FROM ra GROUP BY a HAVING a > 0")
run("CREATE VIEW v10 AS SELECT a, b FROM v1 WHERE a1 > 0")
views = ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10"]
def read_all():
    for v in views:
        run(f"SELECT * FROM {v} ORDER BY 1")
    run("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name LIKE 'v%' ORDER BY 1, ordinal_position")
# A table's column renamed: every view still reads it under its own column names.
run("ALTER TABLE ra RENAME COLUMN a TO z")
read_all()
run("INSERT INTO ra VALUES (3, 30, 'z')")
run("ALTER TABLE ra RENAME COLUMN z TO a")
run("ALTER TABLE ra RENAME COLUMN b TO c")
run("ALTER TABLE rb RENAME COLUMN c TO cc")
read_all()
# A table renamed, and back.
run("ALTER TABLE ra RENAME TO ra2")
read_all()
run("ALTER TABLE ra2 RENAME TO ra")
# A view renamed, and its columns (views reading it follow).
run("ALTER VIEW v1 RENAME TO v1x")
run("ALTER VIEW v1x RENAME COLUMN a TO aa")
run("SELECT * FROM v1x ORDER BY 1")
run("SELECT * FROM v10 ORDER BY 1")
run("ALTER TABLE v1x RENAME TO v1")
run("ALTER TABLE v1 RENAME COLUMN aa TO a")
views[0] = "v1"
read_all()
run("BEGIN")
run("ALTER VIEW v5 RENAME COLUMN a TO renamed")
run("SELECT * FROM v5 ORDER BY 1")
run("ROLLBACK")
run("SELECT * FROM v5 ORDER BY 1")
# ALTER VIEW's errors and no-ops.
run("ALTER VIEW nosuch RENAME TO x")
run("ALTER VIEW IF EXISTS nosuch RENAME TO x")
run("ALTER VIEW ra RENAME TO x")
run("ALTER VIEW v5 RENAME COLUMN nosuch TO y")
run("ALTER VIEW v5 RENAME COLUMN a TO b")
run("ALTER VIEW v5 RENAME TO v4")
run("ALTER VIEW v5 OWNER TO postgres")
run("ALTER VIEW v5 SET SCHEMA public")
# A sequence a view reads, renamed both ways.
run("CREATE SEQUENCE rs")
run("CREATE VIEW vseq AS SELECT last_value, is_called FROM rs")
run("ALTER SEQUENCE rs RENAME TO rs2")
run("SELECT * FROM vseq")
run("ALTER TABLE rs2 RENAME TO rs3")
run("SELECT * FROM vseq")
run("DROP SEQUENCE rs3")
# What CREATE VIEW writes out (`*`, `TABLE`, the view's column names) reads as written.
run("CREATE TABLE ta (x int, y text)")
run("CREATE TABLE tb (x int, y text)")
run("INSERT INTO ta VALUES (1, 'a'), (2, 'b')")
run("INSERT INTO tb VALUES (3, 'c')")
run("CREATE VIEW vu AS TABLE ta UNION ALL TABLE tb")
run("CREATE VIEW vw AS WITH c AS (TABLE ta) TABLE tb")
run("CREATE VIEW vo (z) AS SELECT y AS x FROM ta ORDER BY x DESC LIMIT 1")
run("CREATE VIEW vk (w) AS SELECT x AS k FROM ta ORDER BY k")
run("CREATE VIEW vd (a1, a2) AS SELECT * FROM (SELECT 1 a, 2 a) s")
run("CREATE TABLE tc (x int, y text)")
run("INSERT INTO tc VALUES (1, 'b'), (2, 'a'), (2, 'c')")
run("CREATE VIEW vs (y, x) AS SELECT x, y FROM tc ORDER BY x DESC, y")
run("CREATE VIEW vs2 (y, x) AS SELECT DISTINCT ON (x) x, y FROM tc ORDER BY x DESC, y")
run("CREATE VIEW vp AS SELECT -2 ^ 2 AS p, 2 ^ -1 ^ 2 AS q, -x ^ 2 AS r FROM ta")
for v in ["vu", "vw", "vo", "vk", "vd", "vp"]:
    run(f"SELECT * FROM {v} ORDER BY 1")
# (In the view's own order.)
run("SELECT * FROM vs")
run("SELECT * FROM vs2")
run("ALTER VIEW vo RENAME COLUMN z TO zz")
run("SELECT * FROM vo")
run("ALTER VIEW ta OWNER TO postgres")
run("ALTER VIEW ta SET SCHEMA public")
run("CREATE TABLE tp (a float8 DEFAULT -2 ^ 2, b int)")
run("INSERT INTO tp (b) VALUES (1)")
run("SELECT * FROM tp")
# Column names given to a view are its query's, in its definition (what pg_dump writes).
run("CREATE VIEW named (x, y) AS SELECT a, b FROM ra")
run("CREATE VIEW named2 AS " + "SELECT * FROM named")
run("SELECT * FROM named2 ORDER BY 1")
print("RESULT", json.dumps(out))
"#;

#[test]
fn renames_under_views_match_postgres() {
    let got = same_outcomes_as_postgres(&format!("{PSYCOPG_HARNESS}{RENAMES}"));
    let text = serde_json::to_string(&got).expect("json");
    assert!(text.contains(r#"["10","x","11","30"]"#), "{text}");
}

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
    # Names qualified where they are read: TABLE, a subquery, and a table whose name is also
    # a WITH query's inside the view.
    c.execute("CREATE VIEW vt AS SELECT * FROM (TABLE t) s")
    c.execute("CREATE VIEW vc AS SELECT a FROM t WHERE a IN (WITH t AS (SELECT 2 AS a) SELECT a FROM t)")
else:
    c.execute("SET search_path = other, public")
    out["rows"] = c.execute("SELECT * FROM v").fetchall()
    out["def"] = c.execute("SELECT definition FROM pg_views WHERE viewname = 'v'").fetchone()[0]
    out["kind"] = c.execute("SELECT relkind FROM pg_class WHERE relname = 'v'").fetchone()[0]
    out["vt"] = c.execute("SELECT * FROM vt ORDER BY 1").fetchall()
    out["vc"] = c.execute("SELECT * FROM vc").fetchall()
    # Read-only: writes go to the tables (PostgreSQL would refuse these too, for the
    # aggregate, with 55000).
    for sql in ("INSERT INTO v VALUES (1)", "UPDATE v SET s = 1", "DELETE FROM v"):
        try:
            c.execute(sql)
            out[sql] = "ok"
        except psycopg.Error as e:
            out[sql] = e.sqlstate
    # What a view reads stays a dependency after the restart.
    for sql in ("DROP TABLE public.t", "ALTER TABLE public.t DROP COLUMN a"):
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
    assert_eq!(got["vt"], serde_json::json!([[1], [2]]), "{got}");
    assert_eq!(got["vc"], serde_json::json!([[2]]), "{got}");
    for sql in [
        "INSERT INTO v VALUES (1)",
        "UPDATE v SET s = 1",
        "DELETE FROM v",
    ] {
        assert_eq!(got[sql], "0A000", "{got}");
    }
    assert_eq!(got["DROP TABLE public.t"], "2BP01", "{got}");
    assert_eq!(got["ALTER TABLE public.t DROP COLUMN a"], "2BP01", "{got}");
    let def = got["def"].as_str().unwrap_or_default();
    assert!(def.contains("public.t"), "{def}");
    rl.stop().expect("stop");
}

/// A view and a DROP of what it reads, in two transactions at once: whichever commits
/// second fails (40001), so a committed view never reads a relation that is gone.
const RACE: &str = r#"
import sys, json, psycopg
dsn = sys.argv[1]
a = psycopg.connect(dsn, autocommit=True)
b = psycopg.connect(dsn, autocommit=True)
out = {}
def outcome(f):
    try:
        f()
        return "ok"
    except psycopg.Error as e:
        return e.sqlstate
a.execute("CREATE TABLE t1 (i int)")
a.execute("CREATE TABLE t2 (i int)")
# The DROP first, the view committed while it is open.
a.execute("BEGIN")
a.execute("DROP TABLE t1")
out["view over a table being dropped"] = outcome(lambda: b.execute("CREATE VIEW v1 AS SELECT i FROM t1"))
out["drop committed after the view"] = outcome(lambda: a.execute("COMMIT"))
out["v1 reads"] = outcome(lambda: b.execute("SELECT * FROM v1").fetchall())
# The view first, the DROP committed while it is open.
a.execute("BEGIN")
a.execute("CREATE VIEW v2 AS SELECT i FROM t2")
out["drop of a table a view is being made over"] = outcome(lambda: b.execute("DROP TABLE t2"))
out["view committed after the drop"] = outcome(lambda: a.execute("COMMIT"))
out["v2 exists"] = b.execute("SELECT count(*) FROM pg_views WHERE viewname = 'v2'").fetchone()[0]
# A rename, and a view over the old names committed while it is open.
a.execute("CREATE TABLE t3 (i int)")
a.execute("BEGIN")
a.execute("ALTER TABLE t3 RENAME COLUMN i TO j")
out["view over a column being renamed"] = outcome(lambda: b.execute("CREATE VIEW v3 AS SELECT i FROM t3"))
out["rename committed after the view"] = outcome(lambda: a.execute("COMMIT"))
out["v3 reads"] = outcome(lambda: b.execute("SELECT * FROM v3").fetchall())
print("RESULT", json.dumps(out))
"#;

#[test]
fn a_view_and_a_drop_of_what_it_reads_do_not_both_commit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rl = Server::start(&dir.path().join("catalog"), "postgres", &[]).expect("rocklake");
    let (ok, out) = duckdb_python("155", RACE, &[&rl.dsn()]).expect("race");
    assert!(ok, "{out}");
    let got = result_json(&out);
    assert_eq!(got["view over a table being dropped"], "ok", "{got}");
    assert_eq!(got["drop committed after the view"], "40001", "{got}");
    assert_eq!(got["v1 reads"], "ok", "{got}");
    assert_eq!(
        got["drop of a table a view is being made over"], "ok",
        "{got}"
    );
    assert_eq!(got["view committed after the drop"], "40001", "{got}");
    assert_eq!(got["v2 exists"], 0, "{got}");
    assert_eq!(got["view over a column being renamed"], "ok", "{got}");
    assert_eq!(got["rename committed after the view"], "40001", "{got}");
    assert_eq!(got["v3 reads"], "ok", "{got}");
    rl.stop().expect("stop");
}

/// Where PostgreSQL follows a view's columns by identity and RockLake's views read their
/// query's text by name, RockLake refuses the change rather than let a view read another
/// column: a column added where a name of the view could read it, a rename whose rewritten
/// text would read another column or names a USING column; and a view over a temporary
/// table (PostgreSQL makes it a temporary view).
const REFUSED: &str = r#"
import sys, json, psycopg
dsn = sys.argv[1]
c = psycopg.connect(dsn, autocommit=True)
out = {}
def outcome(sql):
    try:
        c.execute(sql)
        return "ok"
    except psycopg.Error as e:
        return e.sqlstate
c.execute("CREATE TABLE j1 (a int)")
c.execute("CREATE TABLE j2 (b int)")
c.execute("INSERT INTO j1 VALUES (1)")
c.execute("INSERT INTO j2 VALUES (42)")
c.execute("CREATE VIEW vj AS SELECT * FROM j1, j2")
c.execute("CREATE VIEW vk AS SELECT * FROM j2 WHERE EXISTS (SELECT 1 FROM j1 WHERE a = b - 41)")
out["add b to j1"] = outcome("ALTER TABLE j1 ADD COLUMN b int")
out["add c to j2"] = outcome("ALTER TABLE j2 ADD COLUMN c int")
out["rename a"] = outcome("ALTER TABLE j1 RENAME COLUMN a TO x")
out["rename j1"] = outcome("ALTER TABLE j1 RENAME TO j9")
out["vj"] = c.execute("SELECT * FROM vj").fetchall()
out["vk"] = c.execute("SELECT * FROM vk").fetchall()
# Renames whose rewritten view would read otherwise: a name made ambiguous, a USING column.
c.execute("CREATE TABLE k1 (id int, a int)")
c.execute("CREATE TABLE k2 (id int, c int)")
c.execute("INSERT INTO k1 VALUES (1, 5)")
c.execute("INSERT INTO k2 VALUES (1, 6)")
c.execute("CREATE VIEW vu AS SELECT a FROM k1 JOIN k2 USING (id)")
c.execute("CREATE TABLE k3 (c int)")
c.execute("INSERT INTO k3 VALUES (7)")
c.execute("CREATE VIEW vs AS SELECT (SELECT a FROM k3 LIMIT 1) AS s FROM k1")
out["rename c to a"] = outcome("ALTER TABLE k2 RENAME COLUMN c TO a")
out["rename k3's c to a"] = outcome("ALTER TABLE k3 RENAME COLUMN c TO a")
out["rename id"] = outcome("ALTER TABLE k1 RENAME COLUMN id TO kid")
out["vu"] = c.execute("SELECT * FROM vu").fetchall()
out["vs"] = c.execute("SELECT * FROM vs").fetchall()
# A NATURAL join's condition is the columns its sides share by name.
c.execute("CREATE TABLE n1 (id int, v int)")
c.execute("CREATE TABLE n2 (id int, w int)")
c.execute("CREATE VIEW vn AS SELECT n1.id, n1.v, n2.w FROM n1 NATURAL JOIN n2")
out["rename under NATURAL"] = outcome("ALTER TABLE n2 RENAME COLUMN w TO v")
c.execute("BEGIN")
c.execute("CREATE TEMP TABLE tt (a int) ON COMMIT DROP")
out["view over a temporary table"] = outcome("CREATE VIEW vtt AS SELECT a FROM tt")
c.execute("ROLLBACK")
c.execute("BEGIN")
c.execute("CREATE TEMP TABLE tt (a int) ON COMMIT DROP")
out["view naming a temporary table"] = outcome("CREATE VIEW vtt AS SELECT 'tt'::regclass AS r")
c.execute("ROLLBACK")
print("RESULT", json.dumps(out))
"#;

#[test]
fn changes_a_view_would_read_otherwise_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rl = Server::start(&dir.path().join("catalog"), "postgres", &[]).expect("rocklake");
    let (ok, out) = duckdb_python("155", REFUSED, &[&rl.dsn()]).expect("refused");
    assert!(ok, "{out}");
    let got = result_json(&out);
    for step in [
        "add b to j1",
        "rename c to a",
        "rename k3's c to a",
        "rename under NATURAL",
        "rename id",
        "view over a temporary table",
        "view naming a temporary table",
    ] {
        assert_eq!(got[step], "0A000", "{step}: {got}");
    }
    // A `*` was written out when the view was made: a column added later is not the view's.
    // Renames the views' texts follow are allowed, and the views read what they did.
    for step in ["add c to j2", "rename a", "rename j1"] {
        assert_eq!(got[step], "ok", "{step}: {got}");
    }
    assert_eq!(got["vj"], serde_json::json!([[1, 42]]), "{got}");
    assert_eq!(got["vk"], serde_json::json!([[42]]), "{got}");
    assert_eq!(got["vu"], serde_json::json!([[5]]), "{got}");
    // `a` inside the subquery read k1's column (correlated); k3's new `a` would take it.
    assert_eq!(got["vs"], serde_json::json!([[5]]), "{got}");
    rl.stop().expect("stop");
}
