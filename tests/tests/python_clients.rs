//! Python's other PostgreSQL clients against RockLake, compared with PostgreSQL step by step
//! (tests/e2e/pyclients.py): asyncpg, which speaks the binary protocol throughout, sends
//! `client_encoding='utf-8'`, introspects array types with its own recursive catalog query and
//! ends Parse/Describe with Flush rather than Sync; SQLAlchemy's PostgreSQL dialect (its
//! reflection queries, Core, ORM and DDL from metadata); pandas' read_sql and to_sql. These are
//! how people read a DuckLake catalog from Python outside DuckDB.

use rocklake_tests::{venv_python, Differential};

#[test]
fn python_clients_match_postgres() {
    let py = venv_python("clients").expect("the Python clients venv");
    let pair = Differential::start().expect("PostgreSQL and RockLake");
    let (_, report) = pair
        .run_tool(&py, "pyclients.py", &[])
        .expect("run pyclients.py");
    let summary = &report["summary"];
    let n = |k: &str| summary[k].as_u64().unwrap_or(u64::MAX);
    // Guards against a run that compares nothing: every step ran on both servers, and only
    // the steps written to fail failed on PostgreSQL.
    assert!(n("steps") >= 29, "too few steps ran: {summary}");
    assert_eq!(
        n("errors_on_postgres"),
        4,
        "unexpected failures on PostgreSQL: {report}"
    );
    assert_eq!(
        n("differences"),
        0,
        "RockLake answered the clients differently (first differences above): {}",
        report["differences"]
    );
}

/// The catalog columns SQLAlchemy's index reflection reads: `pg_index.indclass` and
/// `indcollation` (`oidvector`, the default btree operator class and the collation of each key
/// column), and the `oidvector` / `int2vector` types themselves, compared with PostgreSQL.
#[test]
fn index_vectors_match_postgres() {
    let script = format!(
        "{}{}",
        rocklake_tests::PSYCOPG_HARNESS,
        r#"
run("CREATE TABLE ix (a int, b text, c name, d numeric, e varchar(3), f uuid, g timestamptz, h bool, i bytea, j char(2), k date, l int2, m int8, n float8, o interval, p oid, PRIMARY KEY (b, a, c, d, e, f, g, h, i, j, k, l, m, n, o, p))")
run("SELECT indkey, indcollation, indclass, indoption, indclass[0], pg_typeof(indclass) FROM pg_index WHERE indrelid = 'ix'::regclass")
run("SELECT u, pg_typeof(u) FROM (SELECT unnest(indclass) AS u FROM pg_index WHERE indrelid = 'ix'::regclass) s")
run("SELECT oid, typname, typlen, typcategory, typelem, typinput::text, typoutput::text, typsubscript::text, typalign, typstorage FROM pg_type WHERE oid IN (22, 30) ORDER BY oid")
run("SELECT '1 2'::int2vector, '1 2 3'::oidvector, array_lower('1 2'::oidvector, 1), array_upper('7 8 9'::oidvector, 1), ('4 5'::oidvector)[1], pg_typeof(('4 5'::oidvector)[1])")
run("SELECT ('4 5'::oidvector)::text, format_type(30, NULL), format_type(22, -1), 'oidvector'::regtype::oid")
run("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'pg_index'::regclass AND attnum BETWEEN 1 AND 19 ORDER BY attnum")
run("SELECT proargtypes FROM pg_proc WHERE false")
print("RESULT", json.dumps(out))
"#
    );
    let results = rocklake_tests::same_outcomes_as_postgres(&script);
    assert_eq!(results.len(), 8, "every statement compared");
}
