//! `CREATE TABLE … AS` and `SELECT … INTO` compared with PostgreSQL 15: the new table's
//! columns (names, types with their typmods, as `format_type` prints them), its rows, the
//! command tags (`SELECT n`, `CREATE TABLE AS` for WITH NO DATA and IF NOT EXISTS), notices
//! and errors; and the typmods a query's result reports for its casts.

use rocklake_tests::{same_outcomes_as_postgres, PSYCOPG_HARNESS};

const SCRIPT: &str = r#"
def columns(t):
    run(f"SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute "
        f"WHERE attrelid = '{t}'::regclass AND attnum > 0 ORDER BY attnum")

run("CREATE TABLE src (a int PRIMARY KEY, b varchar(5), c numeric(6,2), d timestamptz(3), e int[], f char(2))")
run("INSERT INTO src VALUES (1, 'x', 1.5, '2024-01-01 00:00:00.1234+00', '{1,2}', 'p'), (2, 'yy', NULL, NULL, NULL, NULL)")
run("CREATE TABLE c1 AS SELECT * FROM src")
columns("c1")
run("SELECT * FROM c1 ORDER BY a")
run("SELECT conname FROM pg_constraint WHERE conrelid = 'c1'::regclass")
run("CREATE TABLE c3 AS SELECT 1, 'lit', 2.5, now() > '2000-01-01', NULL, 'a'::char(3), 'b'::varchar(4), 1.5::numeric(5,2), ARRAY['x'::varchar(3)]")
columns("c3")
run("SELECT * FROM c3")
run("CREATE TABLE c2 (x, y) AS SELECT a, b FROM src WHERE a > 1")
columns("c2")
run("SELECT * FROM c2")
run("CREATE TABLE c4 (x, y, z) AS SELECT 1, 2")
run("CREATE TABLE c22 (x) AS SELECT 1, 2 AS two")
columns("c22")
run("CREATE TABLE c23 (x, x) AS SELECT 1, 2")
run("CREATE TABLE IF NOT EXISTS c2 (x) AS SELECT 1")
run("CREATE TABLE c24 (\"Q\", public) AS VALUES (1, 2) WITH NO DATA")
columns("c24")
run("CREATE TABLE IF NOT EXISTS c1 AS SELECT 1")
run("CREATE TABLE c1 AS SELECT 1")
run("CREATE TABLE c5 AS SELECT 1 AS a, 2 AS a")
run("CREATE TABLE c6 AS SELECT ctid FROM src")
run("CREATE TABLE c7 AS VALUES (1, 'a'), (2, 'b')")
columns("c7")
run("SELECT * FROM c7 ORDER BY 1")
run("CREATE TABLE c8 AS SELECT * FROM src WITH NO DATA")
columns("c8")
run("SELECT count(*) FROM c8")
run("CREATE TABLE c9 AS WITH w AS (SELECT 5 AS v) SELECT v FROM w")
run("SELECT * FROM c9")
run("CREATE TABLE c10 (x int) AS SELECT 1")
run("CREATE TABLE c11 AS SELECT nosuch FROM src WITH NO DATA")
run("CREATE TABLE c12 AS SELECT (information_schema._pg_expandarray(ARRAY[1])) AS r")
run("CREATE TABLE c13 AS SELECT a::varchar(3) AS v, c FROM src WITH DATA")
columns("c13")
run("CREATE TABLE c14 AS SELECT a FROM src UNION ALL SELECT 5 ORDER BY 1")
run("SELECT * FROM c14")
run("CREATE TABLE c15 AS SELECT 'x'::varchar(1) AS v WHERE false")
run("INSERT INTO c15 VALUES ('toolong')")
run("CREATE UNLOGGED TABLE c16 AS SELECT 1 AS one")
run("SELECT * FROM c16")
run("CREATE TABLE nosuch_schema.c17 AS SELECT 1")
# TABLE name: SELECT * FROM name, alone, in CREATE TABLE AS and as a subquery.
run("TABLE src ORDER BY a")
run("TABLE public.src ORDER BY 1 DESC LIMIT 1")
run("CREATE TABLE c25 AS TABLE src")
columns("c25")
run("SELECT a, b FROM (TABLE src) s WHERE a > 1")
run("TABLE src UNION ALL TABLE src ORDER BY 1")
run("TABLE 'src'")
run("TABLE ONLY src ORDER BY a")
run("SELECT * FROM (TABLE ONLY src) s UNION ALL TABLE ONLY public.src ORDER BY 1")
run("CREATE TABLE c26 AS TABLE ONLY src WITH NO DATA")
columns("c26")
# FETCH … WITH TIES counts the rows DISTINCT ON keeps.
run("CREATE TABLE ties (k, v) AS VALUES (1, 'x'), (1, 'y'), (2, 'z'), (2, 'w'), (3, 'q')")
run("SELECT DISTINCT ON (k) k, v FROM ties ORDER BY k, v DESC FETCH FIRST 2 ROWS WITH TIES")
run("SELECT DISTINCT ON (k) k, v FROM ties ORDER BY k, v FETCH FIRST 1 ROW WITH TIES")
run("SELECT DISTINCT ON (v) k, v FROM ties ORDER BY v DESC, k OFFSET 1 FETCH FIRST 1 ROW WITH TIES")
run("SELECT * INTO c20 FROM src WHERE a = 2")
columns("c20")
run("SELECT a, b, f FROM c20")
run("SELECT 1 AS x INTO TABLE c21")
run("SELECT * FROM c21")
run("SELECT 1 INTO c20")
# Any relation's name is taken: a primary key's index too.
run("CREATE TABLE src_pkey AS SELECT 1")
run("CREATE TABLE IF NOT EXISTS src_pkey AS SELECT 1")
run("BEGIN READ ONLY")
run("CREATE TABLE ro AS SELECT 1")
run("ROLLBACK")
run("BEGIN READ ONLY")
run("SELECT 1 INTO ro")
run("ROLLBACK")
# In a transaction: the table and its rows are the transaction's until it ends.
run("BEGIN")
run("CREATE TABLE c30 AS SELECT a FROM src")
run("SELECT count(*) FROM c30")
run("SELECT count(*) FROM c30", b)
run("ROLLBACK")
run("SELECT count(*) FROM c30")
# A temporary table's ON COMMIT action comes before AS.
run("BEGIN")
run("CREATE TEMP TABLE c31 (x, y) ON COMMIT DROP AS SELECT a, b FROM src")
run("SELECT * FROM c31 ORDER BY x")
run("COMMIT")
run("SELECT * FROM c31")
run("CREATE TEMP TABLE c32 (x) ON COMMIT bogus AS SELECT 1")
# The typmods a query reports for its casts (psycopg's description, field by field).
cur = a.execute("SELECT 'a'::char(3) AS a, 'b'::varchar(4) AS b, 1.5::numeric(5,2) AS n, "
                "'2020-01-01 10:00:00.123+00'::timestamptz(1) AS t, ARRAY['x'::varchar(3)] AS arr, "
                "x::varchar(2) AS sub FROM (SELECT 'yz'::varchar(2) AS x) s")
out.append(["typmods", [cur.pgresult.fmod(i) for i in range(len(cur.description))]])
print("RESULT", json.dumps(out))
"#;

#[test]
fn create_table_as_and_select_into_match_postgres() {
    let got = same_outcomes_as_postgres(&format!("{PSYCOPG_HARNESS}{SCRIPT}"));
    // The comparison compared the tables' columns and rows.
    let text = serde_json::to_string(&got).expect("json");
    assert!(text.contains("character varying(5)"), "{text}");
    assert!(text.contains("SELECT 2"), "{text}");
    assert!(text.contains("CREATE TABLE AS"), "{text}");
    assert!(text.contains("[\"typmods\",[7,8,327686,1,7,6]]"), "{text}");
}
