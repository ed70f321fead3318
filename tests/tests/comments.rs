//! `COMMENT ON` against PostgreSQL 15: comments on tables, columns, sequences, primary-key
//! indexes and schemas; their removal (`NULL`, `''`); what renames, type changes, drops and
//! rollbacks do to them; `pg_description`, `obj_description`, `col_description` and DuckDB's
//! own catalog query (which reads the comments) — same rows, notices and errors (SQLSTATE,
//! message, detail).

use rocklake_tests::{same_outcomes_as_postgres, PSYCOPG_HARNESS};

const SCRIPT: &str = r#"

DESC = ("SELECT objoid::regclass::text, classoid::regclass, objsubid, description FROM pg_description "
        "WHERE classoid = 'pg_class'::regclass ORDER BY 1, 3")
SCHEMAS = ("SELECT n.nspname, d.description FROM pg_description d JOIN pg_namespace n ON n.oid = d.objoid "
           "WHERE d.classoid = 'pg_namespace'::regclass ORDER BY 1")
FUNCS = ("SELECT obj_description('t'::regclass, 'pg_class'), obj_description('t'::regclass), "
         "col_description('t'::regclass, 1), col_description('t'::regclass, 2), "
         "col_description('t'::regclass, 3), col_description('t'::regclass, 0), "
         "obj_description('t_pkey'::regclass, 'pg_class'), obj_description('s'::regclass, 'pg_class'), "
         "obj_description('t'::regclass, 'pg_namespace'), obj_description('t'::regclass, 'nope'), "
         "obj_description('sc'::regnamespace, 'pg_namespace'), obj_description('sc'::regnamespace), "
         "obj_description('public'::regnamespace, 'pg_namespace'), obj_description(0, 'pg_class'), "
         "col_description(0, 1), obj_description(NULL, 'pg_class')")
# DuckDB's postgres extension reads the comments with the columns of a table.
DUCKDB = """
SELECT relname, attname, attnum, col_desc.description AS column_comment, tbl_desc.description AS table_comment
FROM pg_class
JOIN pg_namespace ON relnamespace = pg_namespace.oid
JOIN pg_attribute ON pg_class.oid=pg_attribute.attrelid
LEFT JOIN pg_description col_desc ON col_desc.objoid=pg_class.oid AND col_desc.objsubid=pg_attribute.attnum
LEFT JOIN pg_description tbl_desc ON tbl_desc.objoid=pg_class.oid AND tbl_desc.objsubid=0
WHERE attnum > 0 AND relkind IN ('r', 'v', 'm', 'f', 'p') AND pg_namespace.nspname IN ('public', 'sc')
ORDER BY relname, attnum"""
for sql in [
    "CREATE TABLE t (a int PRIMARY KEY, b text, c numeric(10, 2))",
    "CREATE SEQUENCE s",
    "CREATE SCHEMA sc",
    "CREATE TABLE sc.u (x int, y text)",
    DESC, SCHEMAS, FUNCS,
    "COMMENT ON TABLE t IS 'the table'",
    "COMMENT ON COLUMN t.a IS 'the key'",
    "COMMENT ON COLUMN public.t.b IS E'it''s b\\tand a tab'",
    "COMMENT ON COLUMN lake.public.t.c IS 'qualified by the database'",
    "COMMENT ON INDEX t_pkey IS 'the key''s index'",
    "COMMENT ON CONSTRAINT t_pkey ON t IS 'the key constraint'",
    "SELECT classoid::regclass, objsubid, description FROM pg_description WHERE classoid = 'pg_constraint'::regclass",
    "SELECT conname, obj_description(oid, 'pg_constraint') FROM pg_constraint WHERE conrelid = 't'::regclass",
    "COMMENT ON SEQUENCE s IS 'a sequence'",
    "COMMENT ON SCHEMA sc IS 'a schema'",
    "COMMENT ON TABLE sc.u IS 'in sc'",
    "COMMENT ON COLUMN sc.u.y IS 'y''s'",
    DESC, SCHEMAS, FUNCS, DUCKDB,
    # Replaced, and removed by NULL or ''.
    "COMMENT ON TABLE t IS 'the table, again'",
    "COMMENT ON COLUMN sc.u.y IS NULL",
    "COMMENT ON TABLE sc.u IS ''",
    "COMMENT ON COLUMN t.b IS NULL",
    "COMMENT ON COLUMN t.b IS 'b again'",
    DESC, FUNCS,
    # The public schema's comment from initdb, changed and restored.
    "COMMENT ON SCHEMA public IS 'changed'",
    SCHEMAS,
    "COMMENT ON SCHEMA public IS 'standard public schema'",
    SCHEMAS,
    # Errors, in PostgreSQL's order.
    "COMMENT ON TABLE nope IS 'x'",
    "COMMENT ON TABLE sc.nope IS 'x'",
    "COMMENT ON TABLE nope.t IS 'x'",
    "COMMENT ON TABLE a.b.c.d IS 'x'",
    "COMMENT ON TABLE other.public.t IS 'x'",
    "COMMENT ON TABLE s IS 'x'",
    "COMMENT ON TABLE t_pkey IS 'x'",
    "COMMENT ON SEQUENCE t IS 'x'",
    "COMMENT ON INDEX t IS 'x'",
    "COMMENT ON INDEX nope IS 'x'",
    "COMMENT ON VIEW t IS 'x'",
    "COMMENT ON MATERIALIZED VIEW t IS 'x'",
    "COMMENT ON FOREIGN TABLE t IS 'x'",
    "COMMENT ON COLUMN t.nope IS 'x'",
    "COMMENT ON COLUMN t IS 'x'",
    "COMMENT ON COLUMN nope.a IS 'x'",
    "COMMENT ON COLUMN a.b.c.d.e IS 'x'",
    "COMMENT ON COLUMN s.last_value IS 'x'",
    "COMMENT ON COLUMN s.nope IS 'x'",
    "COMMENT ON COLUMN t_pkey.a IS 'x'",
    "COMMENT ON COLUMN t_pkey.b IS 'x'",
    "COMMENT ON CONSTRAINT nope ON t IS 'x'",
    "COMMENT ON CONSTRAINT t_pkey ON nope IS 'x'",
    "COMMENT ON CONSTRAINT t_pkey ON s IS 'x'",
    "COMMENT ON CONSTRAINT t_pkey ON DOMAIN t IS 'x'",
    "COMMENT ON CONSTRAINT t_pkey IS 'x'",
    "COMMENT ON SCHEMA nope IS 'x'",
    "COMMENT ON SCHEMA sc.x IS 'x'",
    "COMMENT IF EXISTS ON TABLE t IS 'x'",
    "COMMENT ON TABLE t IS 42",
    "COMMENT ON TABLE t IS foo",
    "COMMENT ON TABLE t IS \"Foo\"",
    "COMMENT ON CONSTRAINT 't_pkey' ON t IS 'x'",
    "COMMENT ON CONSTRAINT t_pkey ON DOMAIN t_pkey IS 'x'",
    "COMMENT ON CONSTRAINT t_pkey ON DOMAIN nosuch.t IS 'x'",
    "COMMENT ON CONSTRAINT t_pkey ON DOMAIN nosuch IS 'x'",
    "COMMENT ON CONSTRAINT t_pkey ON t IS foo",
    # DOMAIN is an unreserved word: a table may be named so.
    "CREATE TABLE domain (k int PRIMARY KEY)",
    "COMMENT ON CONSTRAINT domain_pkey ON domain IS 'on a table named domain'",
    "COMMENT ON CONSTRAINT domain_pkey ON public.domain IS 'qualified'",
    "SELECT obj_description(oid, 'pg_constraint') FROM pg_constraint WHERE conname = 'domain_pkey'",
    "DROP TABLE domain",
    "COMMENT ON TABLE t",
    # Transactional: a rollback (or a rollback to a savepoint) takes a comment back.
    "BEGIN",
    "COMMENT ON TABLE t IS 'rolled back'",
    "COMMENT ON SCHEMA sc IS 'rolled back'",
    "SELECT obj_description('t'::regclass, 'pg_class'), obj_description('sc'::regnamespace, 'pg_namespace')",
    "ROLLBACK",
    "SELECT obj_description('t'::regclass, 'pg_class'), obj_description('sc'::regnamespace, 'pg_namespace')",
    "BEGIN",
    "COMMENT ON COLUMN t.a IS 'kept'",
    "SAVEPOINT p",
    "COMMENT ON COLUMN t.a IS 'undone'",
    "COMMENT ON SCHEMA sc IS 'undone'",
    "ROLLBACK TO p",
    "COMMIT",
    DESC, SCHEMAS,
    # A schema made in the transaction takes its comment with it.
    "BEGIN",
    "CREATE SCHEMA sc2",
    "COMMENT ON SCHEMA sc2 IS 'new'",
    "COMMIT",
    SCHEMAS,
    "BEGIN READ ONLY",
    "COMMENT ON TABLE t IS 'read only'",
    "ROLLBACK",
    # Comments follow their objects through renames and type changes, and go with them.
    "ALTER TABLE t RENAME COLUMN a TO aa",
    "ALTER TABLE t RENAME TO t2",
    "ALTER TABLE t2 RENAME CONSTRAINT t_pkey TO t2_pkey",
    "ALTER TABLE t2 ALTER COLUMN b TYPE varchar(20)",
    "ALTER SEQUENCE s RENAME TO s2",
    DESC,
    "ALTER TABLE t2 DROP COLUMN c",
    "SELECT conname, obj_description(oid, 'pg_constraint') FROM pg_constraint WHERE conrelid = 't2'::regclass",
    "ALTER TABLE t2 DROP CONSTRAINT t2_pkey",
    DESC,
    "SELECT count(*) FROM pg_description WHERE classoid = 'pg_constraint'::regclass",
    "ALTER TABLE t2 ADD PRIMARY KEY (aa)",
    DESC,
    "DROP TABLE t2",
    "DROP SEQUENCE s2",
    "DROP SCHEMA sc CASCADE",
    DESC, SCHEMAS,
]:
    run(sql)

# Another session sees a comment once it is committed.
run("CREATE TABLE v (x int)")
run("BEGIN", a)
run("COMMENT ON TABLE v IS 'later'", a)
run("SELECT obj_description('v'::regclass, 'pg_class')", b)
run("COMMIT", a)
run("SELECT obj_description('v'::regclass, 'pg_class')", b)
print("RESULT " + json.dumps(out))
"#;

#[test]
fn comments_match_postgres() {
    let got = same_outcomes_as_postgres(&format!("{PSYCOPG_HARNESS}{SCRIPT}"));
    // The comments were stored: the catalog query after the first round shows them.
    let shown = got
        .iter()
        .filter(|o| {
            o[0].as_str()
                .is_some_and(|s| s.contains("FROM pg_description"))
        })
        .filter(|o| o.to_string().contains("the key's index"))
        .count();
    assert!(shown >= 1, "no query showed the index's comment");
    let errors = got.iter().filter(|o| o[1] == "error").count();
    assert!(errors >= 20, "{errors} errors");
}
