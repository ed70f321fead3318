//! json's aggregates, path operators and set-returning functions compared with PostgreSQL 15:
//! `json_agg` and `json_object_agg` (ORDER BY, DISTINCT, NULLs, grouped and over windows,
//! their spacing), `#>` / `#>>` and `json_extract_path[_text]`, `json_each[_text]`,
//! `json_array_elements[_text]` and `json_object_keys` in FROM and in a select list, with
//! PostgreSQL's errors; a function's FROM item read by its name (`SELECT e->>'n' FROM
//! json_array_elements(j) AS e`, a record-returning one's as its record), `row_to_json`.
//! json results are compared as the server's text.

use rocklake_tests::{same_outcomes_as_postgres, PSYCOPG_HARNESS};

const SCRIPT: &str = r#"
from psycopg.types.string import TextLoader
for c in (a, b):
    c.adapters.register_loader("json", TextLoader)
for sql in [
    "SELECT * FROM json_each('[1]')",
    "SELECT * FROM json_each('1')",
    'SELECT * FROM json_each_text(\'{"a":null,"b":"x\\ty","c":[1, 2 ],"a":2}\')',
    'SELECT * FROM json_each(\'{"a":null,"b":"x\\ty","c":[1, 2 ],"a":2}\') AS e',
    'SELECT json_each(\'{"a":1}\'), json_each_text(\'{"a":"q"}\')',
    'SELECT * FROM json_array_elements(\'{"a":1}\')',
    "SELECT * FROM json_array_elements('1')",
    'SELECT * FROM json_array_elements_text(\'{"a":1}\')',
    'SELECT * FROM json_array_elements_text(\'[1,"a\\"b",null,{"x": 1}]\')',
    'SELECT * FROM json_array_elements(\'[1,"a\\"b",null,{"x": 1}]\') AS e',
    "SELECT e.value FROM json_array_elements('[1,2]') AS e",
    "SELECT json_array_elements('[1,2]')",
    "SELECT json_object_keys('[1]')",
    "SELECT json_object_keys('1')",
    'SELECT * FROM json_object_keys(\'{"a":1,"b":2,"a":3}\') k',
    'SELECT json_agg(x ORDER BY x DESC) FROM (VALUES (1),(NULL),(3)) v(x)',
    'SELECT json_agg(x) FROM (VALUES (\'a\'::text),(\'b"c\')) v(x)',
    'SELECT json_agg(x) FROM (VALUES (\'{"a":1}\'::json)) v(x)',
    'SELECT json_agg(x) FROM (VALUES (1)) v(x) WHERE false',
    'SELECT json_agg(ARRAY[1,2])',
    "SELECT json_agg('a')",
    'SELECT json_agg(x, 1) FROM (VALUES (1)) v(x)',
    'SELECT json_agg(DISTINCT x) FROM (VALUES (1),(1),(2)) v(x)',
    "SELECT json_agg(now()::date - '2020-01-01'::date > 0)",
    "SELECT json_agg(t::timestamptz) FROM (VALUES ('2020-01-01 10:00+02')) v(t)",
    "SELECT json_object_agg(k, v) FROM (VALUES ('a',1),(NULL,2)) t(k,v)",
    "SELECT json_object_agg(k, v) FROM (VALUES (1,'x'::text),(2,NULL)) t(k,v)",
    "SELECT json_object_agg(k, v) FROM (VALUES (1,'x'::text)) t(k,v) WHERE false",
    "SELECT json_object_agg(k, v ORDER BY k DESC) FROM (VALUES ('a',1.50),('b',2)) t(k,v)",
    'SELECT json_object_agg(\'{"a":1}\'::json, 1)',
    'SELECT json_object_agg(ARRAY[1], 1)',
    'SELECT g % 2, json_agg(g ORDER BY g) FROM generate_series(1,5) g GROUP BY 1 ORDER BY 1',
    'SELECT json_agg(g) OVER (ORDER BY g) FROM generate_series(1,3) g',
    'SELECT json_object_agg(g, g * 2) OVER () FROM generate_series(1,2) g',
    'SELECT \'{"a":[1,{"b":2}]}\'::json #> \'{a,1,b}\', \'{"a":[1,{"b":2}]}\'::json #> \'{a,x}\', \'{"a":[1,{"b":"s"}]}\'::json #>> \'{a,1,b}\', \'{"a":1}\'::json #> \'{}\', \'{"a":1}\'::json #>> \'{}\', \'[1,2]\'::json #> \'{-1}\', \'{"a":null}\'::json #>> \'{a}\', \'{"a":null}\'::json #> \'{a}\'',
    'SELECT pg_typeof(\'{"a":1}\'::json #> \'{a}\'), pg_typeof(\'{"a":1}\'::json #>> \'{a}\')',
    'SELECT \'{"a":1}\'::json #> NULL, \'{"a":1}\' #> \'{a}\'',
    'SELECT \'"abc"\'::json #>> \'{}\', \'[1,2]\'::json #> \'{ 1}\', \'[1,2]\'::json #> \'{1 }\', \'{"a":1}\'::json #> ARRAY[\'a\', NULL]',
    "SELECT 1 #> '{a}'",
    'SELECT json_extract_path(\'{"a":{"b":2}}\', \'a\', \'b\'), json_extract_path_text(\'{"a":{"b":"x"}}\', \'a\', \'b\')',
    'SELECT json_extract_path(\'{"a":1}\')',
    'SELECT json_extract_path(\'{"a":{"b":2}}\'::json, \'a\'::varchar, \'b\'::name)',
    "SELECT json_build_object('a', json_agg(1))",
    'SELECT k, v FROM json_each(\'{"x":1,"y":[2]}\') AS t(k, v) ORDER BY k',
    'SELECT * FROM json_each(\'{"x":1}\') WITH ORDINALITY',
    'SELECT count(*) FROM (SELECT json_array_elements_text(\'["a","b"]\') AS x) s WHERE x = \'b\'',
    'SELECT x->>\'n\' FROM json_array_elements(\'[{"n":1},{"n":2}]\') AS x',
    "SELECT json_object_agg('a', 'b')",
    'SELECT e FROM json_array_elements_text(\'["x","y"]\') e ORDER BY e DESC',
    'SELECT (SELECT string_agg(x, \',\') FROM json_array_elements_text(j) x) FROM (VALUES (\'["p","q"]\'::json)) v(j)',
    'SELECT u FROM unnest(ARRAY[1,2]) AS u',
    "SELECT e FROM json_each('{\"a\":1,\"b\":null}') e",
    "SELECT e FROM json_each_text('{\"a\":1,\"b\":null}') e",
    "SELECT row_to_json(e) FROM json_each('{\"a\":1,\"b\":[2]}') e",
    "SELECT (e).key, (e).value FROM json_each('{\"a\":1}') e",
    "SELECT (e).k, (e).v, e.k FROM json_each('{\"a\":1}') AS e(k, v)",
    "SELECT (SELECT count(*) FROM json_array_elements('[1]') e) FROM json_each('{\"a\":1}') e",
    "SELECT k FROM pg_get_keywords() k WHERE (k).word = 'select'",
    "SELECT e IS NULL, e IS NOT NULL FROM json_each_text('{\"a\":null}') e",
    "SELECT row_to_json(1)",
    "SELECT json_agg(e) FROM json_each('{\"a\":1,\"b\":2}') e",
    "SELECT json_agg(x) FROM (VALUES (ARRAY[1,2]), (NULL), (ARRAY[3])) v(x)",
    "SELECT json_agg(x ORDER BY x) FROM (VALUES (ARRAY[2]), (ARRAY[1])) v(x)",
]:
    run(sql)
print("RESULT", json.dumps(out))
"#;

#[test]
fn json_aggregates_paths_and_set_functions_match_postgres() {
    let got = same_outcomes_as_postgres(&format!("{PSYCOPG_HARNESS}{SCRIPT}"));
    let text = serde_json::to_string(&got).expect("json");
    // Results as the server wrote them were compared, and errors too.
    assert!(text.contains(r#"{ \"b\" : 2, \"a\" : 1.50 }"#), "{text}");
    assert!(text.contains("[null, 3, 1]"), "{text}");
    assert!(text.contains("cannot deconstruct a scalar"), "{text}");
}
