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
    assert!(n("steps") >= 51, "too few steps ran: {summary}");
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
run('SELECT \'ab\'::"char", pg_typeof(\'a\'::"char"), \'ab\'::char, pg_typeof(\'ab\'::char), \'\'::"char" = \'\'')
print("RESULT", json.dumps(out))
"#
    );
    let results = rocklake_tests::same_outcomes_as_postgres(&script);
    assert_eq!(results.len(), 9, "every statement compared");
}

/// The `json` type (what SQLAlchemy's reflection builds with `json_build_object`, and what its
/// `JSON` columns store): input checked with PostgreSQL's details, text kept as written,
/// `to_json` / `json_build_object` / `json_build_array` writing each SQL type as PostgreSQL
/// does, `->` / `->>`, `json_typeof`, `json_array_length`, and the operators json lacks.
#[test]
fn json_matches_postgres() {
    let script = format!(
        "{}{}",
        rocklake_tests::PSYCOPG_HARNESS,
        r#"
for sql in [
    "SELECT ' [1, 2 ]'::json::text, '{\"a\":1,\"a\": [2, 3] }'::json->'a'",
    "SELECT ('[1, {\"x\" : \"y\\\\n\"} , 3]'::json->1)::text, '[1,2,3]'::json->-1, '[1,2,3]'::json->5, '[1,2]'::json->'a', '{\"a\":1}'::json->0, '\"s\"'::json->0",
    "SELECT '{\"a\":\"x\\\\u0041\\\\t\"}'::json->>'a', '{\"a\":null}'::json->>'a', '{\"a\":null}'::json->'a', ('{\"a\":[1, 2]}'::json->>'a')",
    "SELECT '[10, 20]'::json->>1, '{\"k\": {\"n\": true}}'::json->'k'->>'n'",
    "SELECT to_json('2024-01-02 03:04:05.5+02'::timestamptz)::text, to_json(ARRAY[1,NULL])::text, to_json('a\"b'::text)::text, to_json('\\x01'::bytea)::text, to_json(1e20::float8)::text, to_json(ARRAY['x','y'])::text, to_json(E'tab\\there\\u0001'::text)::text, to_json(0.1::float8)::text",
    "SELECT to_json(1::oid)::text, to_json('x'::name)::text, to_json(12.5::numeric(5,2))::text, to_json('-Infinity'::numeric)::text, to_json(2::int2)::text, to_json(true)::text, to_json(NULL::int), to_json('NaN'::float8)::text",
    "SET TimeZone = 'Asia/Kolkata'",
    "SELECT to_json('2024-01-02 03:04:05+00'::timestamptz)::text, to_json('infinity'::timestamptz)::text, to_json('infinity'::date)::text, to_json(timestamp '2024-01-01 10:00:00.25')::text",
    "RESET TimeZone",
    "SELECT json_build_object('a', 1, 2, 'x', 'n', NULL, 'arr', ARRAY[1,2], 'j', '{\"q\": 1}'::json)::text, json_build_array(1, 'a', NULL, ARRAY['b'], true)::text, json_build_object()::text, json_build_array()::text",
    "SELECT json_build_object('t', 'a'::varchar, 'c', 'ab'::char(3), 'd', date '2024-02-29', 'i', interval '1 day', 'u', uuid '00000000-0000-0000-0000-000000000001', 'o', 5::oid, 'f', 'NaN'::numeric, true, 1.5)::text",
    "SELECT json_build_object('a')", "SELECT json_build_object(NULL, 1)", "SELECT json_build_object(ARRAY[1], 1)",
    "SELECT json_typeof('{}'), json_typeof('[]'), json_typeof('1'), json_typeof('\"s\"'), json_typeof('null'), json_typeof(' true'), json_array_length('[1,[2,3]]')",
    "SELECT json_array_length('{}')", "SELECT json_array_length('1')",
    "SELECT '{\"a\":1}'::json = '{\"a\":1}'::json", "SELECT '[1]'::json ORDER BY 1", "SELECT 'x' -> 'a'",
    "SELECT '1'::json -> 'a'", "SELECT 'a'::text != 1", "SELECT '{}'::json != '{}'::json", "SELECT '{\"a\":1}'::json || 'x'", "SELECT '{}'::json -> 1::bigint",
    "SELECT pg_typeof(json_build_object()), pg_typeof('{}'::json->'a'), pg_typeof('{}'::json->>'a'), pg_typeof(to_json(1))",
    "SELECT 'x'::text::json", "SELECT 1::json", "SELECT '{}'::json::int",
    # Input errors: the token, what was expected, the unexpected end.
    "SELECT '[1, 2'::json", "SELECT '{\"a\" 1}'::json", "SELECT '01'::json", "SELECT '{1:2}'::json",
    "SELECT '[1,]'::json", "SELECT '1 2'::json", "SELECT E'\"a\\nb\"'::json", "SELECT '\"\\x\"'::json",
    "SELECT '\"\\u12\"'::json", "SELECT '\"\\u12'::json", "SELECT '\"\\u12€\"'::json", "SELECT '-.5'::json",
    "SELECT '[,]'::json", "SELECT '\"abc'::json", "SELECT ''::json", "SELECT '[\"\\é\"]'::json",
    # Input checks an escape's form only; the operators decode strings (22P05 for \u0000).
    "SELECT '\"\\udc00\"'::json::text", "SELECT '[\"\\udc00\"]'::json->>0", "SELECT '[\"\\u0000\"]'::json->>0",
    "SELECT '[\"\\ud83d\\ude00\", \"\\u00e9\"]'::json->>0, '[\"\\u00e9\"]'::json->>0",
    "SELECT length('[' || repeat('1,', 60) || '1]'), '{\"a\": 1, \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": x}'::json",
    "SELECT '{\"a\": [1, {\"b\": nul}]}'::json",
    "CREATE TABLE jt (id int PRIMARY KEY, j json)",
    "INSERT INTO jt VALUES (1, '{\"k\": [1, 2], \"s\": \"v\"}'), (2, '[true, null]'), (3, NULL)",
    "INSERT INTO jt VALUES (4, '{bad')",
    "INSERT INTO jt VALUES (5, 'x'::text)",
    "SELECT id, j::text, j->'k', j->>'s', j->0, json_typeof(j) FROM jt ORDER BY id",
    "SELECT id FROM jt WHERE j->>'s' = 'v'",
    "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'jt'::regclass AND attnum > 0 ORDER BY attnum",
    "SELECT data_type, udt_name FROM information_schema.columns WHERE table_name = 'jt' ORDER BY ordinal_position",
    "SELECT oid, typname, typlen, typcategory, typinput::text, typalign, typstorage, typelem FROM pg_type WHERE oid = 114",
    "UPDATE jt SET j = json_build_object('n', id) WHERE id = 3",
    "SELECT j::text FROM jt WHERE id = 3",
    "SELECT j FROM jt GROUP BY j", "SELECT DISTINCT j FROM jt", "SELECT j FROM jt UNION SELECT j FROM jt",
    "SELECT count(*) FROM (SELECT j FROM jt UNION ALL SELECT j FROM jt) s", "SELECT id FROM jt WHERE j = '[true, null]'",
    "SELECT min(j) FROM jt", "SELECT greatest(j, j) FROM jt",
    "SELECT '[1]' -> 0", "SELECT to_json('abc')", "SELECT to_json('1 2'::int2vector)::text",
    "SELECT json_build_object('k', j)::text FROM jt ORDER BY id", "SELECT j->'s' IS NULL FROM jt ORDER BY id",
    "SELECT CASE j WHEN '[true, null]' THEN 1 END FROM jt", "SELECT CASE WHEN j IS NULL THEN 0 ELSE 1 END FROM jt ORDER BY id",
    "SELECT count(DISTINCT j) FROM jt", "SELECT string_agg(id::text, ',' ORDER BY j) FROM jt",
    "SELECT row_number() OVER (PARTITION BY j) FROM jt", "SELECT row_number() OVER (ORDER BY j) FROM jt",
    "SELECT row_number() OVER (ORDER BY id), j::text FROM jt ORDER BY id",
    "CREATE TABLE jk (j json PRIMARY KEY)", "CREATE TABLE jk2 (j json, PRIMARY KEY (j))",
    "CREATE TABLE jk3 (j json)", "ALTER TABLE jk3 ADD PRIMARY KEY (j)", "CREATE TABLE jk4 (v int2vector PRIMARY KEY)",
]:
    run(sql)
with a.cursor(binary=True) as cur:
    cur.execute("SELECT j FROM jt ORDER BY id")
    out.append(["binary json results", [str(r[0]) for r in cur.fetchall()]])
with a.cursor() as cur:
    with cur.copy("COPY (SELECT id, j FROM jt ORDER BY id) TO STDOUT") as copy:
        out.append(["copy out", bytes(b"".join(copy)).decode()])
print("RESULT", json.dumps(out))
"#
    );
    let results = rocklake_tests::same_outcomes_as_postgres(&script);
    assert_eq!(results.len(), 88, "every statement compared");
}
