//! What pgjdbc's key, index and type metadata queries need, compared with PostgreSQL 15:
//! `information_schema._pg_expandarray` (in a select list, in FROM, as a derived column),
//! anonymous records (`(x).field`, their text and binary output, casts), the integer bitwise
//! operators, `pg_get_indexdef`'s column form, and `pg_type`'s I/O functions as `regproc`.
//! Results in text, and in binary where RockLake has a binary form.

#[test]
fn records_bitwise_and_type_functions_match_postgres() {
    let script = format!(
        "{}{}",
        rocklake_tests::PSYCOPG_HARNESS,
        r#"
for sql in [
    "CREATE SCHEMA r",
    "CREATE TABLE r.t (id bigint, name text, at date, PRIMARY KEY (id, name))",
    "CREATE TABLE r.u (k int PRIMARY KEY, v int)",
    "INSERT INTO r.u VALUES (1, 12), (2, -8), (3, NULL), (4, 2147483647)",
    # _pg_expandarray: select list, FROM, ordinality, aliases, derived columns, lockstep
    "SELECT information_schema._pg_expandarray(ARRAY['a', NULL, 'b c', '', 'x\"y', 'a\\b', '(', ',', 'é'])",
    "SELECT (information_schema._pg_expandarray(ARRAY[5, 6])).n, (information_schema._pg_expandarray(ARRAY[5, 6])).x",
    "SELECT * FROM information_schema._pg_expandarray(ARRAY['a', NULL, 'b']) WITH ORDINALITY",
    "SELECT t.x, t.n FROM information_schema._pg_expandarray(ARRAY[true, false]) t",
    "SELECT * FROM information_schema._pg_expandarray(ARRAY[1.5, 2]) AS t(a, b)",
    "SELECT (k).n, (k).x, pg_typeof(k), pg_typeof((k).x) FROM (SELECT information_schema._pg_expandarray(ARRAY[5, 6]) k) s ORDER BY 1",
    "SELECT information_schema._pg_expandarray(NULL::int[])",
    "SELECT information_schema._pg_expandarray('{}'::text[])",
    "SELECT k, information_schema._pg_expandarray(ARRAY[k, v]) FROM r.u ORDER BY 2 DESC, 1",
    "SELECT (information_schema._pg_expandarray(ARRAY[1, 2, 3])).x, generate_series(1, 2)",
    "SELECT information_schema._pg_expandarray(ARRAY[DATE '2024-02-29', NULL]), information_schema._pg_expandarray(ARRAY[1::int2])",
    "SELECT information_schema._pg_expandarray(ARRAY[1, 2])::text, information_schema._pg_expandarray(ARRAY['a b'])::varchar",
    "SELECT c.relname, (information_schema._pg_expandarray(i.indkey)).n AS seq, a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_attribute a ON a.attrelid = c.oid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'r' AND a.attnum > 0 ORDER BY 1, 2, 3",
    "SELECT result.col, result.seq FROM (SELECT a.attname AS col, (information_schema._pg_expandarray(i.indkey)).n AS seq, information_schema._pg_expandarray(i.indkey) AS keys, a.attnum FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid JOIN pg_class c ON c.oid = i.indrelid WHERE c.relname = 't' AND i.indisprimary) result WHERE result.attnum = (result.keys).x ORDER BY seq",
    "SELECT a.attname FROM pg_attribute a JOIN (SELECT i.indrelid, information_schema._pg_expandarray(i.indkey) AS keys FROM pg_index i) i ON a.attnum = (i.keys).x AND a.attrelid = i.indrelid JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = 'u' ORDER BY 1",
    "SELECT (c).relname, (c).relkind FROM pg_class c WHERE relname = 'u'",
    # what records and _pg_expandarray refuse
    "SELECT _pg_expandarray(ARRAY[1])",
    "SELECT * FROM _pg_expandarray(ARRAY[1])",
    "SELECT information_schema._pg_expandarray(1)",
    "SELECT information_schema._pg_expandarray('{1,2}')",
    "SELECT (information_schema._pg_expandarray(ARRAY[1])).y",
    "SELECT (1).x",
    "SELECT (k).x FROM r.u",
    "SELECT information_schema._pg_expandarray(ARRAY[1, 2])::int",
    "SELECT information_schema._pg_expandarray(ARRAY[1]) FROM r.u WHERE information_schema._pg_expandarray(ARRAY[1]) IS NULL",
    "SELECT max(k) FROM (SELECT information_schema._pg_expandarray(ARRAY[3]) k) s",
    "SELECT k IS NULL, k IS NOT NULL, k FROM (SELECT information_schema._pg_expandarray(ARRAY[NULL::int, 5]) k) s",
    "SELECT k IS NULL, k IS NOT NULL FROM (SELECT (SELECT information_schema._pg_expandarray(ARRAY[1]) WHERE false) k) s",
    "SELECT k FROM (SELECT information_schema._pg_expandarray(ARRAY[3, 1, 2]) k) s ORDER BY k DESC",
    "SELECT DISTINCT k FROM (SELECT information_schema._pg_expandarray(ARRAY[3, 3]) k) s",
    "SELECT coalesce(k, k), (SELECT information_schema._pg_expandarray(ARRAY['z']) LIMIT 1) FROM (SELECT information_schema._pg_expandarray(ARRAY[3]) k) s",
    "CREATE TABLE r.v (a int, b text)",
    "INSERT INTO r.v SELECT 1, information_schema._pg_expandarray(ARRAY[1])",
    "SELECT information_schema._pg_expandarray(ARRAY['a' || chr(11) || 'b', 'c' || chr(12), 'd' || chr(9)])",
    "SELECT count(DISTINCT k) FROM (SELECT information_schema._pg_expandarray(ARRAY[1.5]) k UNION ALL SELECT information_schema._pg_expandarray(ARRAY[1.50])) s",
    "SELECT count(DISTINCT a) FROM (VALUES (ARRAY[1.5]), (ARRAY[1.50]), (ARRAY[2.0])) v(a)",
    "SELECT array_length(information_schema._pg_expandarray(ARRAY[1]), 1)",
    "SELECT array_to_string(information_schema._pg_expandarray(ARRAY[1]), ',')",
    "SELECT information_schema._pg_expandarray(ARRAY[1]) = '10.0.0.1'::inet",
    "SELECT to_json(information_schema._pg_expandarray(ARRAY['a', NULL, 'b\"c'])), json_build_array(information_schema._pg_expandarray(ARRAY[1.5])), json_build_object('k', information_schema._pg_expandarray(ARRAY[DATE '2024-01-02']))",
    "SELECT to_json(k) FROM (SELECT information_schema._pg_expandarray(ARRAY[1]) k) s",
    "SELECT to_json(a) FROM (SELECT aclexplode('{postgres=r*/postgres}') a) s",
    "SELECT json_build_object(information_schema._pg_expandarray(ARRAY[1]), 1)",
    "SELECT (nosuch).x FROM r.u",
    "SET search_path = information_schema, public",
    "SELECT _pg_expandarray(ARRAY[7])",
    "RESET search_path",
    "SELECT \"information_schema._pg_expandarray\"(ARRAY[1])",
    # aclexplode over literal acl items and over the catalogs' acl columns
    "SELECT * FROM aclexplode('{postgres=arw*/postgres,=r/postgres}')",
    "SELECT (aclexplode(nspacl)).privilege_type, (aclexplode(nspacl)).is_grantable FROM pg_namespace WHERE nspname = 'public' ORDER BY 1",
    "SELECT a.grantee, a.privilege_type FROM pg_namespace n, aclexplode(n.nspacl) a WHERE n.nspname = 'information_schema' ORDER BY 1, 2",
    "SELECT count(*), min(word), max(word), count(*) FILTER (WHERE NOT barelabel) FROM pg_get_keywords()",
    "SELECT word, catcode, barelabel, catdesc, baredesc FROM pg_get_keywords() WHERE word IN ('all', 'between', 'abort', 'authorization', 'year') ORDER BY 1",
    # pg_type's I/O functions are regproc
    "SELECT oid, typname, typinput, typoutput, typreceive, typsend, typmodin, typmodout, typanalyze, typsubscript, pg_typeof(typinput) FROM pg_type WHERE oid IN (16, 22, 23, 25, 30, 114, 705, 1007, 1043, 1184, 1700, 2249, 2278, 2287) ORDER BY oid",
    "SELECT typinput = 'pg_catalog.array_in'::regproc AS is_array, typname FROM pg_type WHERE oid IN (23, 1007, 2287) ORDER BY 2",
    "SELECT typinput::oid, typsend::oid, typinput::text FROM pg_type WHERE oid = 1043",
    "SELECT 'array_in'::regproc, 'array_in'::regproc::oid, 'int4in'::regproc = 42, 'record_out'::regproc::oid",
    "SELECT typname, typtype, typcategory, typelem, typarray, typalign, typstorage FROM pg_type WHERE oid IN (2249, 2287) ORDER BY oid",
    "SELECT format_type(2249, NULL), pg_typeof(information_schema._pg_expandarray(ARRAY[1]))",
    "SELECT format_type(29, NULL), format_type(1012, NULL), format_type(2287, NULL), 29::regtype, 1012::regtype",
    "SELECT attname, attnum, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute WHERE attrelid = 'r.u'::regclass ORDER BY attnum",
    "SELECT count(*) FROM pg_type WHERE typinput = 'array_in'",
    # bitwise operators
    "SELECT 1::int4 << 33, 1::int8 << 65, (-8)::int2 >> 1, 1::int2 << 15, 1::int2 << 16, 1 << -1, 1::int2 << 40000",
    "SELECT pg_typeof(1::int2 & 1::int2), pg_typeof(1::int2 & 1), pg_typeof('3' & 1), pg_typeof('3' & 1::int2), pg_typeof(1::int2 | 1::int8), pg_typeof('3' << 1), pg_typeof(1::int8 << '2'), pg_typeof(~1::int2), pg_typeof(null & 1)",
    "SELECT 5 # 3, ~5, ~0::int8, 7 & NULL, -9223372036854775808 >> 63, 9223372036854775807 # -1, (-1)::int8 << 63",
    "SELECT 12 | 3 & 5, 12 & 3 | 5, 2 # 3 & 1, 1 << 1 | 1, 8 >> 1 # 1, 1 + 1 & 3, 3 & 1 = 1, 1 << 2 + 1",
    "SELECT k, v & 6, v | 8, v # k, v >> 1, v << 1, ~v FROM r.u ORDER BY k",
    "SELECT -9223372036854775808, pg_typeof(-9223372036854775808), - 9223372036854775808, pg_typeof(-9223372036854775809)",
    "SELECT ~1 + 1, 1 + ~2 + 3, ~1 * 2, ~ 2 - 1, ~1 & 3, 2 * ~1 + 1, ~1 + 2 + 3, ~ - 1 + 1, (~1) + 1, 1 - ~1 - 1",
    "SELECT pg_typeof(-(9223372036854775808)), -(9223372036854775808), -((9223372036854775808))",
    "SELECT '3' << 1::int2",
    "SELECT 1 << 2::bigint",
    "SELECT 1.5 & 1",
    "SELECT 'a' & 1",
    "SELECT '1' & '3'",
    "SELECT true | 1",
    "SELECT ~ 'a'::text",
    "SELECT ~ '5'",
    "SELECT 5 # 3.0",
    # pg_get_indexdef's column form
    "SELECT pg_get_indexdef('r.t_pkey'::regclass, 0, false), pg_get_indexdef('r.t_pkey'::regclass, 1, false), pg_get_indexdef('r.t_pkey'::regclass, 2, true), pg_get_indexdef('r.t_pkey'::regclass, 3, true) = '', pg_get_indexdef('r.t_pkey'::regclass, -1, true) = '', pg_get_indexdef(0, 1, true) IS NULL",
    "SELECT i.indoption[0] & 1::smallint, pg_get_indexdef(i.indexrelid, 1, false) FROM pg_index i WHERE i.indrelid = 'r.u'::regclass",
    "SELECT pg_get_indexdef('r.t_pkey'::regclass, NULL, true) IS NULL, pg_get_indexdef(NULL::oid) IS NULL",
    "SELECT pg_get_indexdef('r.t_pkey'::regclass, 1)",
]:
    run(sql)
# in binary: the fields of records, the bitwise operators' results (a record itself has no
# binary form here: results cross the core as text, and a record's text does not name its
# fields' types; COMPAT.md)
with a.cursor(binary=True) as cur:
    for sql in [
        "SELECT (information_schema._pg_expandarray(ARRAY[1.5::numeric, NULL])).x, (information_schema._pg_expandarray(ARRAY[1.5::numeric, NULL])).n",
        "SELECT (information_schema._pg_expandarray(ARRAY[DATE '2024-02-29'])).x, 7 & 3, 1::int2 << 3, ~1::int8",
        # regproc and regtype results in binary are their OIDs
        "SELECT typname, typinput, typoutput, typreceive, typmodin, typsubscript, typanalyze FROM pg_type WHERE oid IN (23, 1007, 1043, 2249, 29) ORDER BY oid",
        "SELECT pg_typeof(1), pg_typeof('a'::text), 'int4'::regtype, 'character varying'::regtype, 'text[]'::regtype, 29::regtype, 2287::regtype, 'array_in'::regproc, 0::regproc, 0::regtype",
    ]:
        cur.execute(sql)
        out.append([sql, [(d.name, d.type_code) for d in cur.description], [[repr(v) for v in r] for r in cur.fetchall()]])
print("RESULT", json.dumps(out))
"#
    );
    let results = rocklake_tests::same_outcomes_as_postgres(&script);
    assert_eq!(results.len(), 91, "every statement compared");
}
