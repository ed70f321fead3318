#!/usr/bin/env python3
"""Generated differential test: random statements of the SQL RockLake supports, run against a
reference PostgreSQL and against RockLake, compared statement by statement.

usage: querygen.py --a DSN (reference) --b DSN (under test) [--seed N] [--count N]
                   [--report OUT.json] [--show N]

The traces only hold the statement shapes DuckDB happened to send; this covers the semantics
behind them: NULLs in comparisons, IN / NOT IN and EXISTS, three-valued logic, integer
overflow and division, string functions, CASE, aggregates over empty and NULL-only groups,
GROUP BY / HAVING, DISTINCT, joins (inner, LEFT, with ON filters), correlated subqueries,
UNION [ALL], ORDER BY with NULLS FIRST/LAST, LIMIT/OFFSET, and UPDATE / DELETE / INSERT …
SELECT with their errors rolling the statement back. Everything is generated from --seed, so
a run is repeatable; each statement's outcome (result column names and type OIDs and all
rows, or the error's SQLSTATE and message) must be the same on both servers.

Rows are compared in order: every generated query orders by all its output columns, so the
order is total up to identical rows. Generated values avoid what PostgreSQL leaves undefined
(float sums in another order, an error raised by a row another plan would not evaluate), so a
difference is a difference in semantics.

Prints a summary and the first --show differences; exit status 1 on any difference.
"""
import argparse
import json
import random
import sys

import psycopg

import difflog

SETUP = [
    "CREATE TABLE t1 (id BIGINT PRIMARY KEY, a INTEGER, b BIGINT, s VARCHAR, f BOOLEAN)",
    "CREATE TABLE t2 (id BIGINT PRIMARY KEY, t1_id BIGINT, n BIGINT, s VARCHAR)",
    "CREATE TABLE t3 (k VARCHAR, v BIGINT)",
]

# Fixed statements, run after the data: the edges a random draw rarely hits (overflow of each
# integer type, exact avg scales, aggregate ORDER BY / FILTER, untyped literals, empty
# quantified subqueries, UNION type resolution, syntax errors).
EDGE = [
    "SELECT 9223372036854775807 + 1",
    "SELECT (-9223372036854775807 - 1) / -1",
    "SELECT (-9223372036854775807 - 1) % -1",
    "SELECT abs(-9223372036854775807 - 1)",
    "SELECT 2147483647 + 1",
    "SELECT -(-2147483647 - 1)",
    "SELECT 32767::smallint + 1::smallint",
    "SELECT CAST(3000000000 AS INTEGER)",
    "SELECT CAST(3e9::float8 AS INTEGER)",
    "SELECT CAST(3000000000.5 AS INTEGER)",
    "SELECT CAST('3000000000' AS INTEGER)",
    "SELECT a * 1000000000 FROM t1 ORDER BY id",
    "SELECT sum(x) FROM (VALUES (9223372036854775807), (9223372036854775807)) v(x)",
    "SELECT avg(x) FROM (VALUES (1), (2), (2)) v(x)",
    "SELECT avg(x) FROM (VALUES (1000000), (1)) v(x)",
    "SELECT avg(x) FROM (VALUES (-7), (2)) v(x)",
    "SELECT avg(x) FROM (VALUES (0.001), (0.0001)) v(x)",
    "SELECT avg(x) FROM (VALUES (0), (0)) v(x)",
    "SELECT avg(x) FROM (VALUES (9223372036854775807), (9223372036854775807), (1)) v(x)",
    "SELECT count(*) FILTER (WHERE a > 0), sum(b) FILTER (WHERE f), count(*) FROM t1",
    "SELECT f, count(*) FILTER (WHERE s LIKE 'a%') FROM t1 GROUP BY f ORDER BY 1",
    "SELECT string_agg(s, '|' ORDER BY id DESC) FROM t1 WHERE id < 10",
    "SELECT string_agg(DISTINCT s, ',' ORDER BY s) FROM t1",
    "SELECT string_agg(DISTINCT s, ',' ORDER BY id) FROM t1",
    "SELECT -'5'",
    "SELECT '5' + '5'",
    "SELECT sum('5')",
    "SELECT abs('5'), abs(-2::smallint)",
    "SELECT abs('x'::text)",
    "SELECT NULL::bigint IN (SELECT n FROM t2 WHERE false), NULL::bigint NOT IN (SELECT n FROM t2 WHERE false)",
    "SELECT NULL::bigint IN (SELECT n FROM t2), 1 < ALL (SELECT n FROM t2 WHERE false)",
    "SELECT s FROM t1 UNION SELECT v FROM t3",
    "SELECT 1 UNION SELECT '2' ORDER BY 1",
    "SELECT '2' UNION SELECT 1 ORDER BY 1",
    "SELECT CASE WHEN true THEN 'a' END, COALESCE(NULL, NULL)",
    "SELECT CASE WHEN id > 3 THEN s ELSE 'x'::text END FROM t1 ORDER BY id LIMIT 3",
    "SELECT (--3)",
    "SELECT 1 +",
    "SELEC 1",
    "SELECT a.b.c.d FROM t1",
    "SELECT 2.5::float8 % 2",
    "SELECT 10.0 / 4, 1 / 3.0, 2.5 / 0.5, -7.25 / 3, 1 / -3.0, 0.001 / 7, 123456789.123 / 0.0007",
    "SELECT 100000000000000000000.0 / 3, 5 / 0.0000001, 0.0 / 5, -0.5 / 2",
    "SELECT 1.0 / 0",
    "SELECT 1.5 * 2.25, -0.10 * 3, 2 * 0.500, 0.0 * -1.5, 12345678901234567.89 * 1000.001, 1.1 * 1.1 * 1.1",
    "SELECT id, (SELECT max(z.n) FROM t2 z WHERE z.n = (SELECT min(q.n) FROM t2 q WHERE t1.f)) FROM t1 ORDER BY id",
    "SELECT s IN (1, 2) FROM t1",
    "SELECT lower(s) AS l, count(*) FROM t1 GROUP BY lower(s) ORDER BY 1",
    "SELECT lower(s) || '!' AS l, count(*) FROM t1 GROUP BY lower(s) ORDER BY 1",
    "SELECT s, count(*) FROM t1 GROUP BY lower(s)",
    "SELECT a FROM t1 INTERSECT ALL SELECT n FROM t2 UNION ALL SELECT NULL EXCEPT SELECT 3 ORDER BY 1",
    "SELECT f FROM t1 EXCEPT ALL SELECT true ORDER BY 1",
    "SELECT 1 INTERSECT SELECT 1, 2",
    "SELECT 'a' EXCEPT SELECT 1",
    "SELECT id FROM t1 ORDER BY id FETCH FIRST ROW ONLY",
    "SELECT id FROM t1 ORDER BY id OFFSET 3 ROWS FETCH NEXT 2 ROWS ONLY",
    "SELECT id FROM t1 ORDER BY id LIMIT 1 FETCH FIRST 2 ROWS ONLY",
    "SELECT count(*), count(x.id), count(y.id) FROM t1 x RIGHT JOIN t2 y ON x.id = y.t1_id WHERE x.id IS NULL",
    "SELECT x.id, y.id FROM t1 x FULL JOIN t2 y ON x.id = y.t1_id AND y.n > 3 WHERE y.s IS NULL OR x.a IS NULL ORDER BY 1, 2",
    "SELECT x.id, y.id, z.k FROM t1 x JOIN t2 y ON x.id = y.t1_id RIGHT JOIN t3 z ON z.v = y.n ORDER BY 1, 2, 3",
    "SELECT x.id, z.k FROM t1 x FULL OUTER JOIN t3 z ON z.v = x.a AND x.f ORDER BY 1, 2",
    # A bare name in ORDER BY / DISTINCT ON naming two output columns: ambiguous unless they
    # are the same expression.
    "SELECT a AS k, b AS k FROM t1 ORDER BY k",
    "SELECT a AS k, a AS k, id FROM t1 ORDER BY k, id",
    "SELECT DISTINCT ON (k) a AS k, b AS k FROM t1 ORDER BY 1",
    "SELECT x.id, y.id FROM t1 x JOIN t2 y ON x.id = y.t1_id ORDER BY id",
    "SELECT a AS k, b AS k FROM t1 UNION SELECT 1, 2 ORDER BY k",
    # Array text: elements quoted and escaped as array_out does, read back as array_in does.
    "SELECT ARRAY['a\\b', 'c\"d', 'e f', NULL, '', 'NULL', '{x}', 'a,b']",
    "SELECT '{\" a \",b\\,c, NULL ,null,\"NULL\"}'::text[]",
    "SELECT ARRAY['a\\b', 'x y']::text",
    "SELECT array_agg(s::text ORDER BY s) FROM t1",
    "SELECT '{a,,b}'::text[]",
    "SELECT '{1, 2 ,NULL}'::int2[]",
    "SELECT '{a}'::int2[]",
    # xid (pg_class.xmin, which DuckDB's staleness check reads): strtoul's input, = and <>
    # against xid and integer only, no ordering, casts through text only.
    "SELECT '-1'::xid, 'abc'::xid, '4294967296'::xid, ' 12 '::xid, '0x1f'::xid, '017'::xid, '+7'::xid",
    "SELECT '12'::xid = 12, '12'::xid <> 13, '12'::xid = '12', '12'::xid IN ('12', '13'), '12'::xid != 12",
    "SELECT '12'::xid = 12::bigint",
    "SELECT '12'::xid < '13'::xid",
    "SELECT '12'::xid::bigint",
    "SELECT 12::xid",
    "SELECT '12'::xid::text::bigint + 1, '7'::xid::text",
    "SELECT xmin FROM pg_class ORDER BY xmin LIMIT 1",
    "SELECT max(xmin) FROM pg_class",
    # A table and its primary key are written by one transaction, two tables by two.
    "SELECT c.xmin = i.xmin, c.xmin = d.xmin, c.xmin <> d.xmin FROM pg_class c, pg_class i, pg_class d "
    "WHERE c.relname = 't1' AND i.relname = 't1_pkey' AND d.relname = 't2'",
    "SELECT relname FROM pg_class WHERE xmin = xmin AND relname IN ('t1', 't2', 't3') ORDER BY 1",
    # numeric ±Infinity (PostgreSQL 14+): input, IEEE arithmetic, order, aggregates, casts.
    "SELECT '+inf'::numeric, '-Infinity'::numeric, 'INF'::numeric, -('inf'::numeric), 'inf'::numeric::float8",
    "SELECT 5 % 'inf'::numeric, 'inf'::numeric % 5, 5 / 'inf'::numeric, 'inf'::numeric * 0, "
    "'inf'::numeric - 'inf'::numeric, '-inf'::numeric * -2, 1e300::numeric * 1e300 * 'inf'",
    "SELECT 'nan'::numeric / 0, 'nan'::numeric % 0",
    "SELECT 'inf'::numeric / 0",
    "SELECT 'inf'::numeric % 0",
    "SELECT 'inf'::numeric::int",
    "SELECT 'nan'::numeric::bigint",
    "SELECT round('inf'::numeric), round('-inf'::numeric, 2), floor('inf'::numeric), ceil('-inf'::numeric), abs('-inf'::numeric)",
    "SELECT x FROM (VALUES ('inf'::numeric), (1), ('-inf'), ('nan'), (-5.5)) v(x) ORDER BY x",
    "SELECT sum(x), avg(x), min(x), max(x) FROM (VALUES ('inf'::numeric), (1), ('-inf')) v(x)",
    "SELECT extract(epoch FROM 'infinity'::timestamp) + 1, -extract(year FROM '-infinity'::timestamp) * 2",
    # Casts to numeric(p, s) round and check the precision; to varchar(n) truncate.
    "SELECT 'abcd'::varchar(2), 'äöüß'::varchar(3), 1.5::numeric(3,0), -2.5::numeric(3,0), 0.999::numeric(2,2), "
    "'nan'::numeric(3,1)",
    "SELECT 999.95::numeric(4,1)",
    "SELECT 'inf'::numeric(10,2)",
    "SELECT a::numeric(4,1), s::varchar(1) FROM t1 ORDER BY id LIMIT 5",
    # Arrays typed by their elements (int4[], int8[], numeric[], varchar[], bool[], oid[] …).
    "SELECT ARRAY[1, 2], ARRAY[1.5, 2], ARRAY[1, 2::bigint], ARRAY['a'::varchar, 'b'], ARRAY[NULL, 1], ARRAY[true]",
    "SELECT array_agg(a ORDER BY id), array_agg(b ORDER BY id), array_agg(s ORDER BY id), array_agg(f ORDER BY id) "
    "FROM t1",
    "SELECT (ARRAY[1.5, 2])[2], ARRAY['1', '2']::int[], ARRAY[1, 2]::text[], '{1.5,NaN}'::float8[], '{t,f}'::bool[]",
    "SELECT ARRAY[1] || 2, 0 || ARRAY[1], ARRAY[1] || ARRAY[2, 3], ARRAY[1] || NULL::int, NULL::int[] || 3",
    "SELECT x FROM unnest(ARRAY[3, 1, 2]) u(x) ORDER BY x",
    # numeric is exact past 38 digits (big integers), up to 131,072 digits before the point.
    "SELECT 99999999999999999999999999999999999999::numeric + 1, 1e30::numeric * 1e30::numeric + 0.5, "
    "-1e45::numeric % 7, 1e40::numeric / 3e39, 12345678901234567890123456789012345678901234567890::numeric "
    "/ 1234567890123456789012345678901234567890",
    "SELECT sum(x), avg(x), sum(x) - 1e40 FROM (VALUES (1e40::numeric), (1), (0.5)) v(x)",
    "SELECT 1e70000::numeric * 1e70000::numeric",
    "SELECT trunc(1.567, 2), trunc(-0.5), trunc(-0.05, 1), trunc(1234.5, -2), trunc(-2.7::float8), "
    "trunc(1e40::numeric / 7), trunc('-Infinity'::numeric, 2)",
    # Mathematical functions: double precision forms for integer arguments (results that are
    # exact in every libm), mod and sign over numeric, PostgreSQL's domain errors.
    "SELECT sqrt(16), sqrt(2), power(2, 10), 2 ^ 10, pow(2.0::float8, 0.5), pi(), ln(1), exp(0), log(100), "
    "degrees(pi()), radians(180)",
    "SELECT mod(7, 3), mod(-7, 3), mod(7.5, 2), mod(b, 7), sign(-5), sign(2.50), sign(a), sign(0::numeric) "
    "FROM t1 WHERE b IS NOT NULL ORDER BY id LIMIT 3",
    "SELECT sqrt(2::numeric), sqrt(0.0225), sqrt(0.00001), sqrt(123456789.123), sqrt(1e40::numeric), "
    "sqrt(1e-30::numeric), sqrt(2.000000000000000000000)",
    "SELECT sqrt(-1)",
    "SELECT sqrt(-0.5)",
    "SELECT ln(0)",
    "SELECT power(0, -1)",
    "SELECT (-8) ^ 0.5::float8",
    "SELECT exp(1000)",
    "SELECT mod(7, 0)",
    # Immutable arithmetic on constants fails while planning, even when no row is read.
    "SELECT 1 % 0, mod(1, 0) FROM t1 WHERE false",
    "SELECT 2147483647 + 1 FROM t1 WHERE false",
    # WITH RECURSIVE: rounds over the working table, UNION's duplicates dropped across rounds.
    "WITH RECURSIVE r(n) AS (SELECT min(id) FROM t1 UNION ALL SELECT n + 2 FROM r WHERE n < 9) "
    "SELECT n, (SELECT a FROM t1 WHERE id = n) FROM r",
    "WITH RECURSIVE r(n, path) AS (SELECT 1, 'x' UNION SELECT n % 4 + 1, path || n FROM r WHERE length(path) < 6) "
    "SELECT count(*), max(path) FROM r",
    "WITH RECURSIVE c(id, depth) AS (SELECT id, 0 FROM t2 WHERE id = 1 UNION ALL "
    "SELECT t2.id, depth + 1 FROM t2 JOIN c ON t2.t1_id = c.id WHERE depth < 3) SELECT * FROM c ORDER BY 2, 1",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n * 2 FROM r LIMIT 3 OFFSET 2",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1.5 FROM r WHERE n < 3) SELECT * FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT a.n + b.n FROM r a, r b WHERE a.n < 3) SELECT * FROM r",
    "WITH RECURSIVE r(n) AS (SELECT n FROM r) SELECT * FROM r",
    # regclass is written as the relation's name (qualified when search_path misses it).
    "CREATE SCHEMA IF NOT EXISTS qs",
    "CREATE TABLE IF NOT EXISTS qs.q (a INTEGER PRIMARY KEY)",
    "SELECT 'pg_class'::regclass, 't1'::regclass, 't1_pkey'::regclass, 'information_schema.tables'::regclass, "
    "'qs.q'::regclass, 'qs.q_pkey'::regclass, 99999::regclass",
    "SELECT 't1'::regclass::text, 'qs.q'::regclass::varchar, to_regclass('public.t2'), to_regclass('nope'), "
    "quote_ident('t1'), quote_ident('T1'), quote_ident('select')",
    "SELECT relname, pg_table_is_visible(oid) FROM pg_class WHERE oid IN ('t2'::regclass, 'qs.q'::regclass, "
    "'information_schema.columns'::regclass) ORDER BY 1",
    # Set-returning calls in the select list (PostgreSQL's ProjectSet), and where none may be.
    "SELECT id, generate_series(1, 3), unnest(ARRAY['p', 'q']) FROM t1 ORDER BY id, 2 LIMIT 9",
    "SELECT count(*), generate_series(1, count(*)::int % 4) FROM t1",
    "SELECT DISTINCT unnest(ARRAY[a, b]) AS u FROM t1 ORDER BY u LIMIT 5",
    "SELECT -generate_series(1, 2) * 10, greatest(unnest(ARRAY[1, 5]), 3), generate_series(3, 1)",
    "SELECT generate_series(1, NULL), 1",
    "SELECT id, generate_series(1, 2) + row_number() OVER (ORDER BY id), count(*) OVER () FROM t1 "
    "ORDER BY 1, 2 LIMIT 6",
    "SELECT id FROM t1 WHERE generate_series(1, 2) > 1",
    "SELECT count(generate_series(1, 2))",
    "SELECT CASE WHEN true THEN generate_series(1, 2) END",
    "SELECT coalesce(unnest(ARRAY[1]), 1)",
    "SELECT NOT generate_series(1, 2)::bool",
    "SELECT ARRAY[1, 'a']",
    "SELECT array(SELECT id FROM t1 ORDER BY id LIMIT 3), array(SELECT oid FROM pg_class WHERE relname = 'pg_class')",
    "SELECT id FROM t1 WHERE a = ANY(ARRAY[1, 2, 3]) OR b = ANY('{4,5}'::bigint[]) ORDER BY id",
    "SELECT ARRAY[DATE '2024-01-02', NULL], ARRAY[TIMESTAMP '2024-01-02 03:04:05.5'], "
    "ARRAY[TIMESTAMPTZ '2024-01-02 03:04:05+02'], ARRAY[INTERVAL '1 day 02:00'], ARRAY[TIME '01:02:03'], "
    "ARRAY['00000000-0000-0000-0000-000000000001'::uuid], ARRAY['\\x01ff'::bytea], ARRAY[1.5::real, 0.1], "
    "ARRAY['ab'::char(3)]",
    "SELECT '{2024-01-02,NULL}'::date[], '{\"2024-01-02 03:04:05\"}'::timestamp[], ARRAY[1, 2]::float4[]",
    "SELECT string_to_array('a,b,,c', ','), string_to_array('abc', NULL), string_to_array('abc', ''), "
    "string_to_array('', ','), string_to_array('a,*,b', ',', '*')",
    # regtype / regnamespace: OIDs written as names, compared as OIDs.
    "SELECT pg_typeof(1)::text, pg_typeof(1.5)::text, pg_typeof(ARRAY[1])::text, pg_typeof(NULL::date)::text, "
    "pg_typeof('x')::text, 'int4'::regtype::text, 'text[]'::regtype::text",
    "SELECT pg_typeof(1), 'int4'::regtype, 'int4'::regtype::oid, 23::regtype, 0::regtype, 'varchar(10)'::regtype, "
    "'_int4'::regtype, pg_typeof(a), pg_typeof(s) FROM t1 ORDER BY id LIMIT 1",
    "SELECT typname FROM pg_type WHERE oid IN ('int8'::regtype, 'bool'::regtype) ORDER BY 1",
    "SELECT 'public'::regnamespace, 'public'::regnamespace::oid, 2200::regnamespace, 99999::regnamespace, "
    "0::regclass",
    "SELECT 'nosuch'::regtype",
    "SELECT 'nosuch'::regnamespace",
    "SELECT true::text, false::varchar, true::char(5), f::text || '!' FROM t1 WHERE f IS NOT NULL ORDER BY id LIMIT 2",
    # LATERAL: subqueries and functions in FROM reading the items before them, per row.
    "SELECT x.id, s.* FROM t1 x, LATERAL (SELECT count(*) AS c, max(y.b) FROM t1 y WHERE y.f = x.f AND "
    "y.id < x.id) s ORDER BY 1",
    "SELECT x.id, s.id FROM t1 x LEFT JOIN LATERAL (SELECT id FROM t1 y WHERE y.a > x.a ORDER BY y.a, y.id "
    "LIMIT 1) s ON true ORDER BY 1",
    "SELECT x.id, s.k, s.v FROM t1 x JOIN LATERAL (SELECT k, v FROM t3 WHERE t3.v % 7 = x.id % 7) s "
    "ON s.k > x.s ORDER BY 1, 2, 3 LIMIT 30",
    "SELECT x.id, g FROM t1 x, generate_series(1, abs(x.a) % 4) g WHERE x.id < 8 ORDER BY 1, 2",
    "SELECT x.id, g, o FROM t1 x LEFT JOIN LATERAL generate_series(1, abs(x.a) % 3) WITH ORDINALITY AS g(g, o) "
    "ON g.o > 1 WHERE x.id < 8 ORDER BY 1, 2",
    "SELECT * FROM unnest(ARRAY['p', NULL, 'q']) WITH ORDINALITY, generate_series(1, 2) WITH ORDINALITY AS g "
    "ORDER BY 2, 4",
    "SELECT x.id, u FROM t1 x, unnest(ARRAY[x.a, x.b]) u WHERE x.id < 5 ORDER BY 1, 2",
    "SELECT x.id, s.k, t.w FROM t1 x, LATERAL (SELECT x.a + 1 AS k) s, LATERAL (SELECT s.k * 2 AS w) t "
    "WHERE x.id < 6 ORDER BY 1",
    "SELECT x.id, s.v FROM t1 x JOIN LATERAL (VALUES (x.a), (x.b)) s(v) ON true WHERE x.id < 4 ORDER BY 1, 2",
    "SELECT x.id, s.id FROM t1 x JOIN LATERAL (SELECT y.id FROM t1 y WHERE y.id <= x.id) s USING (id) ORDER BY 1",
    "SELECT (SELECT string_agg(q::text, ',' ORDER BY q) FROM LATERAL (SELECT x.id + g AS q FROM "
    "generate_series(1, 2) g) s) FROM t1 x ORDER BY x.id LIMIT 4",
    "SELECT count(*) FROM t1 x, LATERAL (SELECT t3.k FROM t3 WHERE t3.v > x.b UNION ALL SELECT x.s) s",
    "SELECT * FROM t1 x RIGHT JOIN LATERAL (SELECT x.id) s ON true",
    "SELECT * FROM t1 x FULL JOIN generate_series(1, x.a) g ON true",
    "SELECT * FROM t1 x, (SELECT x.id) s",
    "SELECT * FROM t1 x, (SELECT a) s",
    "SELECT * FROM generate_series(1, x.a) g, t1 x",
    "SELECT * FROM t1 AS x(p, q, r, s, f, extra)",
    "SELECT * FROM generate_series(1, 2) WITH ORDINALITY AS g(a, b, c)",
    # Parenthesized joins: a join as the right side of an outer join, merged USING columns,
    # an alias naming the whole join.
    "SELECT x.id, y.id, z.k FROM t1 x LEFT JOIN (t1 y JOIN t3 z ON z.v = y.b) ON y.a = x.a "
    "WHERE x.id < 10 ORDER BY 1, 2, 3",
    "SELECT * FROM (t1 JOIN t1 u USING (id)) j WHERE id < 4 ORDER BY id",
    "SELECT j.id, j.q FROM (t1 x JOIN t1 y USING (id, a)) AS j(id, a, p, q) WHERE j.id < 5 ORDER BY 1",
    "SELECT count(*), count(u.k) FROM (t1 x CROSS JOIN t1 y) LEFT JOIN (t3 u JOIN t3 w USING (k)) ON u.v = x.a",
    "SELECT * FROM (t1 x NATURAL JOIN (t1 y NATURAL JOIN t1 z)) WHERE id < 4 ORDER BY id",
    "SELECT * FROM (t1 JOIN t1 u USING (id)) AS j(a, b, c, d, e, f, g, h, i, k)",
    "SELECT * FROM t1 x JOIN (t1 y JOIN t1 z ON z.id = x.id) ON true",
    # RIGHT and FULL JOIN with USING / NATURAL: the merged column from the side that is not
    # null-extended (COALESCE for FULL), in the pair's common type.
    "SELECT id, x.a, y.a FROM t1 x FULL JOIN (SELECT id + 20 AS id, a FROM t1) y USING (id) "
    "ORDER BY 1, 2, 3",
    "SELECT * FROM t1 x RIGHT JOIN (SELECT id - 5 AS id, s FROM t1) y USING (id, s) ORDER BY 1, 2, 3, 4, 5, 6",
    "SELECT * FROM t1 x NATURAL FULL JOIN (SELECT id * 2 AS id, s, a FROM t1) y ORDER BY 1, 2, 3, 4, 5, 6",
    "SELECT pg_typeof(a), count(*) FROM t1 x JOIN (SELECT b AS a FROM t1) y USING (a) GROUP BY 1",
    "SELECT k, count(x.v), count(y.k) FROM t3 x FULL JOIN (SELECT s AS k FROM t1) y USING (k) GROUP BY k "
    "ORDER BY k NULLS FIRST",
    # LATERAL and functions in UPDATE … FROM / DELETE … USING read their own items (the
    # target's columns come first in the joined row); join conditions after a comma see only
    # their comma item; a USING name twice on one side is 42702.
    "UPDATE t1 SET a = s.x FROM t1 u, LATERAL (SELECT u.a % 7 AS x) s WHERE u.id = t1.id AND u.id < 6",
    "SELECT id, a FROM t1 WHERE id < 8 ORDER BY id",
    "DELETE FROM t3 USING t1 u, LATERAL (SELECT u.s AS k) s WHERE t3.k = s.k AND u.id > 35",
    "UPDATE t1 SET b = b FROM t1 u, unnest(ARRAY[u.id, u.id + 1]) g WHERE g = t1.id AND u.id = 2",
    "UPDATE t1 SET a = 1 FROM t1 u, LATERAL (SELECT t1.a) s",
    "SELECT count(*) FROM t1 p, t1 s LEFT JOIN t1 q ON p.id = q.id",
    "SELECT count(*) FROM t1 p, t1 s JOIN t3 q USING (s)",
    "SELECT count(*) FROM (t1 JOIN t2 ON t1.id = t2.id) NATURAL JOIN t3",
    "SELECT count(*) FROM t3 JOIN (t1 JOIN t2 ON t1.id = t2.id) USING (id)",
    "CREATE SCHEMA pg_foo",
    "CREATE TABLE qx (a int, ctid int)",
    "ALTER TABLE t3 ADD COLUMN IF NOT EXISTS xmin int",
    "ALTER TABLE t3 DROP COLUMN IF EXISTS tableoid",
    "SELECT * FROM t1 WITH ORDINALITY",
    "DELETE FROM t3 USING t3",
    "SELECT count(*) FROM t1, t1",
    "SELECT count(*) FROM t1 x, t2 x",
    "SELECT x, y FROM (VALUES (1::int), (2)) a(x) JOIN (VALUES (1::float8), (2.5)) b(y) ON x = y",
    "SELECT * FROM (VALUES (1::numeric(3,1))) a(x) JOIN (VALUES (1.0::float8)) b(x) USING (x)",
    "SELECT * FROM (VALUES ('a'::text)) a(x) JOIN (VALUES (1)) b(x) USING (x)",
    "SELECT * FROM (VALUES (1, 2)) a(x, y) JOIN (VALUES (1, 2)) b(x, y) USING (x, x)",
    "SELECT id FROM t1 ORDER BY id USING > LIMIT 3",
    "SELECT id FROM t1 ORDER BY id USING =",
    "SELECT regexp_replace('aaa', 'a*', 'X', 'g'), regexp_count('baaac', 'a*'), regexp_substr('aaa', 'a*', 1, 2), "
    "regexp_replace('abc', '^', '-', 2), regexp_count('abc', '^', 2), regexp_replace('abc', 'x*', '-', 5), "
    "regexp_substr('abc', 'c', 1, 1, '', 1), 'é' ~ '\\w', 'É' ~* 'é', regexp_replace('ÉCOLE école', 'é', 'X', 'gi'), "
    "chr('66'), 'ab '::char(3)::text || '|'",
    "SELECT t1.a FROM t1 AS x",
    # Regular expressions: PostgreSQL's flags, replacement escapes, groups, positions.
    "SELECT s, regexp_replace(s, '[aeiou]', '*', 'g'), regexp_replace(s, '^(.)(.)', '\\2\\1'), "
    "regexp_match(s, '(.)(_|%)?$'), regexp_like(s, '^A', 'i'), regexp_count(s, '.'), "
    "regexp_substr(s, '[a-z]', 1, 2), substring(s FROM '(b+)'), s ~ 'b.', s ~* '^AB' "
    "FROM t1 ORDER BY id LIMIT 12",
    "SELECT regexp_replace('foobarbaz', 'b(..)', 'X\\1Y', 'g'), regexp_replace('abc', 'x*', '-', 'g'), "
    "regexp_replace('abcabcabc', 'b', 'x', 1, 2), regexp_replace('aXbx', 'x', '_', 'gi'), "
    "regexp_match('a' || chr(10) || 'b', '^b', 'n'), regexp_match('AbC', 'abc', 'q'), "
    "regexp_substr('ABCABCAXYaxy', 'A(.)(.)', 1, 2, 'i', 2), substring('foobar' FROM 'o.b')",
    "SELECT regexp_replace('abc', 'b', 'x', 'z')",
    "SELECT regexp_match('abc', 'b', 'g')",
    "SELECT regexp_count('abc', 'b', 0)",
    "SELECT substr('foobar', 'o.b')",
    "SELECT chr(65) || chr(233), chr(0)",
    "SELECT x.a FROM t1 AS x WHERE t1.id = 1",
    "SELECT x.id, y.id, z.id FROM t1 x, t1 y RIGHT JOIN t1 z ON z.a = y.b WHERE x.id < 3 ORDER BY 1, 2, 3",
    "SELECT count(*), count(y.id), count(z.k) FROM t1 x, t1 y FULL JOIN t3 z ON z.v = y.b",
]

# Column name -> type, per table.
TABLES = {
    "t1": {"id": "int", "a": "int", "b": "int", "s": "str", "f": "bool"},
    "t2": {"id": "int", "t1_id": "int", "n": "int", "s": "str"},
    "t3": {"k": "str", "v": "int"},
}

STRINGS = ["''", "'a'", "'A'", "'ab'", "'abc'", "'b'", "'a_b'", "'a%'", "' x '", "'é'", "'Zz'",
           "'10'", "'2'"]
PATTERNS = ["'a%'", "'%b'", "'_'", "'a_b'", "'%'", "''", "'A%'", "'%\\%%'", "'é%'"]


def data(rng):
    def maybe(v, p=0.2):
        return "NULL" if rng.random() < p else v

    stmts = []
    rows = []
    for i in range(1, 41):
        rows.append(f"({i}, {maybe(str(rng.randint(-5, 5)))}, "
                    f"{maybe(str(rng.choice([0, 1, 2, 3, -7, 100, 2**20, -(2**20)])))}, "
                    f"{maybe(rng.choice(STRINGS))}, {maybe(rng.choice(['true', 'false']))})")
    stmts.append("INSERT INTO t1 VALUES " + ", ".join(rows))
    rows = []
    for i in range(1, 61):
        rows.append(f"({i}, {maybe(str(rng.randint(0, 45)), 0.1)}, {maybe(str(rng.randint(-3, 9)))}, "
                    f"{maybe(rng.choice(STRINGS))})")
    stmts.append("INSERT INTO t2 VALUES " + ", ".join(rows))
    rows = [f"({maybe(rng.choice(STRINGS))}, {maybe(str(rng.randint(0, 4)))})" for _ in range(25)]
    stmts.append("INSERT INTO t3 VALUES " + ", ".join(rows))
    return stmts


class Gen:
    def __init__(self, rng):
        self.r = rng

    def pick(self, xs):
        return self.r.choice(xs)

    def cols(self, scope, ty):
        return [f"{alias}.{c}" for alias, table in scope for c, t in TABLES[table].items() if t == ty]

    def int_expr(self, scope, d=0):
        r = self.r.random()
        cols = self.cols(scope, "int")
        if d > 2 or r < 0.35:
            if cols and self.r.random() < 0.7:
                return self.pick(cols)
            return self.pick(["0", "1", "2", "-3", "7", "NULL", "100", "'5'"])
        k = self.r.randrange(14)
        a = self.int_expr(scope, d + 1)
        if k == 12:
            return f"mod({a}, {self.pick(['3', '-4', '7'])})"
        if k == 13:
            return f"CAST(sign({a}) AS INTEGER)"
        if k == 0:
            return f"({a} + {self.int_expr(scope, d + 1)})"
        if k == 1:
            return f"({a} - {self.int_expr(scope, d + 1)})"
        if k == 2:
            return f"({a} * {self.int_expr(scope, d + 1)})"
        if k == 3:
            return f"({a} / {self.pick(['2', '3', '-2', '7'])})"
        if k == 4:
            return f"({a} % {self.pick(['2', '3', '-4'])})"
        if k == 5:
            return f"abs({a})"
        if k == 6:
            return f"length({self.str_expr(scope, d + 1)})"
        if k == 7:
            return f"COALESCE({a}, {self.int_expr(scope, d + 1)})"
        if k == 8:
            return f"NULLIF({a}, {self.pick(['0', '1'])})"
        if k == 9:
            return f"CASE WHEN {self.bool_expr(scope, d + 1)} THEN {a} ELSE {self.int_expr(scope, d + 1)} END"
        if k == 10:
            return f"(- {a})"
        return f"CAST({a} AS BIGINT)"

    def str_expr(self, scope, d=0):
        cols = self.cols(scope, "str")
        if d > 2 or self.r.random() < 0.4:
            if cols and self.r.random() < 0.7:
                return self.pick(cols)
            return self.pick(STRINGS + ["NULL"])
        k = self.r.randrange(11)
        a = self.str_expr(scope, d + 1)
        if k == 0:
            return f"lower({a})"
        if k == 1:
            return f"upper({a})"
        if k == 2:
            return f"({a} || {self.str_expr(scope, d + 1)})"
        if k == 3:
            return f"concat({a}, {self.int_expr(scope, d + 1)})"
        if k == 4:
            return f"substr({a}, {self.pick(['1', '2', '0'])}, {self.pick(['1', '2', '5'])})"
        if k == 5:
            return f"COALESCE({a}, {self.pick(STRINGS)})"
        if k == 6:
            return f"CAST({self.int_expr(scope, d + 1)} AS VARCHAR)"
        if k == 7:
            return f"replace({a}, {self.pick(STRINGS[1:5])}, {self.pick(STRINGS[:4])})"
        if k == 8:
            return f"{self.pick(['left', 'right'])}({a}, {self.pick(['1', '2', '-1'])})"
        if k == 9:
            return f"{self.pick(['btrim', 'ltrim', 'rtrim'])}({a})"
        return f"CASE WHEN {self.bool_expr(scope, d + 1)} THEN {a} ELSE {self.str_expr(scope, d + 1)} END"

    def bool_expr(self, scope, d=0):
        k = self.r.randrange(15 if d < 2 else 6)
        if k == 0:
            return f"{self.int_expr(scope, d + 1)} {self.pick(['=', '<>', '<', '<=', '>', '>='])} {self.int_expr(scope, d + 1)}"
        if k == 1:
            return f"{self.str_expr(scope, d + 1)} {self.pick(['=', '<>', '<', '>='])} {self.str_expr(scope, d + 1)}"
        if k == 2:
            e = self.pick([self.int_expr, self.str_expr])(scope, d + 1)
            return f"{e} IS {self.pick(['', 'NOT '])}NULL"
        if k == 3:
            bools = self.cols(scope, "bool")
            return self.pick(bools) if bools else self.pick(["true", "false", "NULL::boolean"])
        if k == 4:
            return f"{self.str_expr(scope, d + 1)} {self.pick(['LIKE', 'NOT LIKE'])} {self.pick(PATTERNS)}"
        if k == 5:
            vals = ", ".join(self.pick(["1", "2", "-3", "0", "NULL", "100"]) for _ in range(self.r.randint(1, 4)))
            return f"{self.int_expr(scope, d + 1)} {self.pick(['IN', 'NOT IN'])} ({vals})"
        if k in (6, 7):
            return f"({self.bool_expr(scope, d + 1)} {self.pick(['AND', 'OR'])} {self.bool_expr(scope, d + 1)})"
        if k == 8:
            return f"NOT ({self.bool_expr(scope, d + 1)})"
        if k == 9:
            lo, hi = sorted([self.r.randint(-3, 5), self.r.randint(-3, 5)])
            return f"{self.int_expr(scope, d + 1)} {self.pick(['', 'NOT '])}BETWEEN {lo} AND {hi}"
        if k == 10:
            return f"{self.int_expr(scope, d + 1)} IS {self.pick(['', 'NOT '])}DISTINCT FROM {self.int_expr(scope, d + 1)}"
        # Subqueries, possibly correlated with the enclosing scope.
        inner = self.pick(["t2", "t3"])
        alias = f"q{d}"
        iscope = scope + [(alias, inner)]
        col = "n" if inner == "t2" else "v"
        where = self.bool_expr(iscope, d + 2) if self.r.random() < 0.7 else "true"
        if k == 11:
            return f"{self.pick(['', 'NOT '])}EXISTS (SELECT 1 FROM {inner} {alias} WHERE {where})"
        if k == 12:
            return (f"{self.int_expr(scope, d + 1)} {self.pick(['IN', 'NOT IN'])} "
                    f"(SELECT {alias}.{col} FROM {inner} {alias} WHERE {where})")
        if k == 13:
            return (f"{self.int_expr(scope, d + 1)} {self.pick(['=', '<', '>='])} "
                    f"(SELECT {self.pick(['max', 'min', 'count', 'sum'])}({alias}.{col}) FROM {inner} {alias} WHERE {where})")
        return f"{self.int_expr(scope, d + 1)} {self.pick(['=', '<>'])} {self.pick(['ANY', 'ALL'])} (SELECT {alias}.{col} FROM {inner} {alias} WHERE {where})"

    def any_expr(self, scope):
        return self.pick([self.int_expr, self.int_expr, self.str_expr, self.bool_expr])(scope)

    def order_by(self, n):
        keys = []
        for i in range(1, n + 1):
            keys.append(f"{i}{self.pick(['', ' DESC', ' ASC'])}{self.pick(['', '', ' NULLS FIRST', ' NULLS LAST'])}")
        return " ORDER BY " + ", ".join(keys)

    def limit(self):
        r = self.r.random()
        if r < 0.7:
            return ""
        if r < 0.85:
            return f" LIMIT {self.r.randint(0, 10)}"
        return f" LIMIT {self.r.randint(1, 10)} OFFSET {self.r.randint(0, 30)}"

    def from_clause(self):
        k = self.r.randrange(6)
        if k < 2:
            t = self.pick(list(TABLES))
            return f"{t} x", [("x", t)]
        if k == 2:
            return "t1 x, t3 y", [("x", "t1"), ("y", "t3")]
        join = self.pick(["JOIN", "LEFT JOIN", "LEFT OUTER JOIN", "INNER JOIN", "RIGHT JOIN", "FULL JOIN"])
        on = "x.id = y.t1_id"
        scope = [("x", "t1"), ("y", "t2")]
        if self.r.random() < 0.4:
            on += f" AND {self.bool_expr(scope, 1)}"
        if k == 5:
            return f"t2 y {join} t1 x ON {on}", [("y", "t2"), ("x", "t1")]
        return f"t1 x {join} t2 y ON {on}", scope

    def select(self):
        frm, scope = self.from_clause()
        where = f" WHERE {self.bool_expr(scope)}" if self.r.random() < 0.7 else ""
        k = self.r.randrange(10)
        if k < 5:
            n = self.r.randint(1, 4)
            items = [f"{self.any_expr(scope)} AS c{i}" for i in range(n)]
            if self.r.random() < 0.15:
                alias = "z"
                inner = self.pick(["t2", "t3"])
                col = "n" if inner == "t2" else "v"
                items.append(f"(SELECT {self.pick(['max', 'count', 'sum', 'min'])}({alias}.{col}) FROM {inner} {alias} "
                             f"WHERE {self.bool_expr(scope + [(alias, inner)], 1)}) AS sub")
                n += 1
            distinct = "DISTINCT " if self.r.random() < 0.2 else ""
            return f"SELECT {distinct}{', '.join(items)} FROM {frm}{where}{self.order_by(n)}{self.limit()}"
        if k < 8:
            g = self.pick([self.int_expr, self.str_expr, self.bool_expr])(scope, 1)
            ints = self.cols(scope, "int")
            strs = self.cols(scope, "str")
            sa = self.pick(strs)
            aggs = ["count(*)", f"count({self.pick(ints + strs)})", f"sum({self.pick(ints)})",
                    f"min({self.pick(ints + strs)})", f"max({self.pick(ints + strs)})",
                    f"avg({self.pick(ints)})", f"count(DISTINCT {self.pick(ints + strs)})",
                    # Ordered by its own argument: rows with equal keys are then equal, so the
                    # order PostgreSQL's plan gives ties cannot show.
                    f"string_agg({sa}, ',' ORDER BY {sa}{self.pick(['', ' DESC'])})",
                    f"bool_and({self.bool_expr(scope, 2)})", f"bool_or({self.bool_expr(scope, 2)})",
                    f"sum({self.int_expr(scope, 1)})"]
            chosen = self.r.sample(aggs, self.r.randint(1, 3))
            having = f" HAVING count(*) {self.pick(['>', '<', '='])} {self.r.randint(0, 4)}" if self.r.random() < 0.3 else ""
            if self.r.random() < 0.25:
                return f"SELECT {', '.join(chosen)} FROM {frm}{where}"
            return (f"SELECT {g} AS g, {', '.join(chosen)} FROM {frm}{where} GROUP BY 1{having}"
                    f"{self.order_by(1 + len(chosen))}")
        # UNION [ALL] of two single-table selects with one int and one str column.
        parts = []
        for _ in range(2):
            t = self.pick(list(TABLES))
            sc = [("x", t)]
            w = f" WHERE {self.bool_expr(sc)}" if self.r.random() < 0.6 else ""
            parts.append(f"SELECT {self.int_expr(sc)}, {self.str_expr(sc)} FROM {t} x{w}")
        op = self.pick(['UNION', 'UNION ALL', 'INTERSECT', 'INTERSECT ALL', 'EXCEPT', 'EXCEPT ALL'])
        return f"{parts[0]} {op} {parts[1]}{self.order_by(2)}{self.limit()}"

    def grouping(self):
        """GROUP BY ROLLUP / CUBE / GROUPING SETS with GROUPING() and ordered-set aggregates
        (percentile_cont, percentile_disc, mode), ordered by every output column."""
        frm, scope = self.from_clause()
        where = f" WHERE {self.bool_expr(scope)}" if self.r.random() < 0.6 else ""
        ints = self.cols(scope, "int")
        strs = self.cols(scope, "str")
        n = self.r.choice([1, 2, 2, 3])
        # Keys read a column and fold to no constant: PostgreSQL 15 takes a constant key for
        # one in every set (a HAVING on it is folded), which PostgreSQL 18 corrects and
        # RockLake does not copy.
        bools = self.cols(scope, "bool")
        shapes = [lambda: self.pick(ints), lambda: f"({self.pick(ints)} % 3)", lambda: f"abs({self.pick(ints)})",
                  lambda: f"({self.pick(ints)} IS NULL)", lambda: self.pick(strs), lambda: f"lower({self.pick(strs)})",
                  lambda: f"length({self.pick(strs)})", lambda: f"({self.pick(ints)} > {self.pick(['0', '3'])})"]
        if bools:
            shapes.append(lambda: self.pick(bools))
        keys = []
        for _ in range(4 * n):
            k = self.pick(shapes)()
            if k not in keys:
                keys.append(k)
            if len(keys) == n:
                break
        n = len(keys)
        p = [str(i + 1) for i in range(n)]
        forms = [f"ROLLUP ({', '.join(p)})", f"CUBE ({', '.join(p)})",
                 f"GROUPING SETS ({', '.join(f'({x})' for x in p)}, ())"]
        if n > 1:
            forms += [f"{p[0]}, ROLLUP ({', '.join(p[1:])})", f"GROUPING SETS (({', '.join(p)}), ({p[0]}))",
                      f"ROLLUP (({p[0]}, {p[1]}){''.join(', ' + x for x in p[2:])})",
                      f"CUBE ({p[0]}), GROUPING SETS ({', '.join(p[1:])})"]
        frac = self.pick(["0", "0.25", "0.5", "0.9", "1", "NULL"])
        aggs = ["count(*)", f"count({self.pick(ints + strs)})", f"sum({self.pick(ints)})",
                f"max({self.pick(ints + strs)})",
                f"percentile_cont({frac}) WITHIN GROUP (ORDER BY {self.pick(ints)}{self.pick(['', ' DESC'])})",
                f"percentile_disc({frac}) WITHIN GROUP (ORDER BY {self.pick(ints + strs)}{self.pick(['', ' DESC'])})",
                f"percentile_cont(ARRAY[0.1, {frac}]) WITHIN GROUP (ORDER BY {self.pick(ints)})",
                f"mode() WITHIN GROUP (ORDER BY {self.pick(ints + strs)})",
                f"grouping({', '.join(keys)})", f"grouping({keys[-1]})"]
        chosen = self.r.sample(aggs, self.r.randint(1, 3))
        having = ""
        if self.r.random() < 0.3:
            having = self.pick([f" HAVING grouping({keys[0]}) = 0", " HAVING count(*) > 1",
                                f" HAVING {keys[0]} IS NULL"])
        items = [f"{k} AS g{i}" for i, k in enumerate(keys)] + [f"{c} AS a{i}" for i, c in enumerate(chosen)]
        # Sorted outside: PostgreSQL 15 drops a sort key its planner deems constant or equal to
        # another (`WHERE k = 'x'`, a join's `x.id = y.t1_id`, two items alike), though
        # grouping sets make it NULL in some rows; its subquery's output has no such
        # equivalences.
        return (f"SELECT * FROM (SELECT {', '.join(items)} FROM {frm}{where} GROUP BY {self.pick(forms)}{having}) s"
                f"{self.order_by(len(items))}")

    def write(self):
        k = self.r.randrange(4)
        if k == 0:
            sc = [("t1", "t1")]
            col = self.pick(["a", "b", "s", "f"])
            val = {"a": self.int_expr, "b": self.int_expr, "s": self.str_expr, "f": self.bool_expr}[col](sc, 1)
            # Numbers stay small, so that later arithmetic does not overflow on rows one
            # server's plan evaluates and the other's skips.
            if col in ("a", "b"):
                val = f"({val}) % {50 if col == 'a' else 100000}"
            return [f"UPDATE t1 SET {col} = {val} WHERE {self.bool_expr(sc)}", "SELECT * FROM t1 ORDER BY id"]
        if k == 1:
            sc = [("t2", "t2")]
            return [f"DELETE FROM t2 WHERE {self.bool_expr(sc)}", "SELECT * FROM t2 ORDER BY id"]
        if k == 2:
            sc = [("x", "t1")]
            # A few rows at a time, so that the cross joins over t3 stay small.
            return [f"INSERT INTO t3 SELECT {self.str_expr(sc)}, {self.int_expr(sc)} FROM t1 x "
                    f"WHERE {self.bool_expr(sc)} ORDER BY x.id LIMIT {self.r.randint(0, 3)}",
                    "SELECT k, v FROM t3 ORDER BY 1, 2"]
        sc = [("t3", "t3")]
        return [f"UPDATE t3 SET v = ({self.int_expr(sc, 1)}) % 1000 WHERE {self.bool_expr(sc)}",
                "SELECT k, v FROM t3 ORDER BY 1, 2"]


# The typed phase: numeric, date/time, interval and bytea columns, from a second random stream
# (so that the statements of the first phase stay what they were for a seed).
TYPED_SETUP = [
    "CREATE TABLE t4 (id BIGINT PRIMARY KEY, d NUMERIC(12,3), x NUMERIC, ts TIMESTAMP, "
    "tz TIMESTAMPTZ, dt DATE, iv INTERVAL, by BYTEA)",
]

# Fixed statements of the typed phase: calendar edges, unit and type errors, operator
# resolution with untyped literals, interval output, bytea encodings.
TYPED_EDGE = [
    "SELECT date '2024-01-31' + interval '1 month', timestamp '2024-03-31' - interval '1 month'",
    "SELECT timestamp '2023-12-15' + interval '14 mons 2 days 01:00:00', date '2024-02-29' + 365",
    "SELECT timestamp '294276-12-31' + interval '1 day'",
    "SELECT date '5874897-12-31' + 1",
    "SELECT interval '2147483647 days' + interval '1 day'",
    "SELECT -interval '1 day 02:00', interval '1.5 months', interval '1.5 years', interval '2' hour, interval '1 day' * 2.5",
    "SELECT (interval '-1 day +2 hours')::text, (interval '-1 years -2 mons 3 days -04:05:06.5')::text, interval '0'::text",
    "SELECT interval '3 mons' / 7, interval '1 day 02:00:00' * 1.5, interval '1 mon' * -0.5, interval '1 day' / 0",
    "SELECT date_trunc('foo', ts) FROM t4",
    "SELECT date_trunc('dow', tz) FROM t4",
    "SELECT date_trunc('week', iv) FROM t4",
    "SELECT extract(foo from ts) FROM t4",
    "SELECT extract(timezone from ts) FROM t4",
    "SELECT extract(timezone from tz), extract(timezone_hour from tz) FROM t4 ORDER BY id LIMIT 2",
    "SELECT extract(hour from dt) FROM t4",
    "SELECT extract(dow from iv) FROM t4",
    "SELECT extract(year from '2024-05-05')",
    "SELECT date_trunc('month', '2024-05-05')",
    "SELECT date_trunc('month', dt), date_trunc('hour', iv) FROM t4 ORDER BY id",
    "SELECT extract(week from date '2024-12-30'), extract(isoyear from date '2024-12-30'), extract(century from date '2000-12-30'), extract(millennium from date '2001-01-01'), extract(doy from date '2024-12-31')",
    "SELECT extract(epoch from interval '1 year 2 mons 3 days 04:05:06.5'), extract(month from interval '-14 mons'), extract(minute from interval '-1 hour -5 min')",
    "SELECT dt + '1 day' FROM t4",
    "SELECT '1 day' + dt FROM t4",
    "SELECT ts + '1 day', ts - '2000-01-01', dt - '2000-01-01' FROM t4 ORDER BY id",
    "SELECT ts - '1 day' FROM t4",
    "SELECT dt + 1.5 FROM t4",
    "SELECT dt + 1::bigint FROM t4",
    "SELECT ts + 1 FROM t4",
    "SELECT iv * '2', '2' * iv FROM t4 ORDER BY id",
    "SELECT dt < ts, dt = tz, ts < tz FROM t4 ORDER BY id",
    "SELECT '2024-02-30'::date",
    "SELECT '2024-13-01'::date",
    "SELECT 'abc'::date",
    "SELECT '2024-01-01 25:00'::timestamp",
    "SELECT 'xyz'::interval",
    "SELECT ts::text, tz::text, ts || 'x', concat(ts, '|', tz, '|', dt) FROM t4 ORDER BY id",
    "SELECT to_timestamp(1.5), to_timestamp(0), to_timestamp(-1e12)",
    "SELECT decode('AQI=', 'base64'), decode('0102', 'hex'), decode('zz', 'hex')",
    "SELECT decode('012', 'hex')",
    "SELECT encode('\\x00ff5c41'::bytea, 'escape'), encode('\\x00'::bytea, 'foo')",
    "SELECT md5('abc'), md5(''), md5(NULL), md5('\\x00ff'::bytea)",
    "SELECT d % 1, x % 3, -d, -x, d * x, d / 3 FROM t4 ORDER BY id",
    "SELECT x % 0 FROM t4",
    "SELECT sum(d), avg(d), sum(x), avg(x), min(iv), max(iv) FROM t4",
    "SELECT id FROM t4 WHERE row_number() OVER () > 1",
    "SELECT sum(row_number() OVER ()) OVER () FROM t4",
    "SELECT count(*) FROM t4 GROUP BY row_number() OVER ()",
    "SELECT count(*), row_number() OVER () FROM t4 GROUP BY 2",
    "SELECT ntile(0) OVER (ORDER BY id) FROM t4",
    "SELECT nth_value(id, 0) OVER (ORDER BY id) FROM t4",
    "SELECT lower('a') OVER () FROM t4",
    "SELECT count(DISTINCT id) OVER () FROM t4",
    "SELECT sum(id) OVER (ORDER BY id ROWS BETWEEN -1 PRECEDING AND CURRENT ROW) FROM t4",
    "SELECT sum(id) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW) FROM t4",
    "SELECT sum(id) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM t4",
    "SELECT row_number(id) OVER () FROM t4",
    "SELECT id, d, sum(d) OVER w FROM t4 WINDOW w AS (ORDER BY id)",
    "SELECT DISTINCT count(*) OVER (PARTITION BY d > 0) FROM t4 ORDER BY 1",
    "SELECT id, row_number() OVER (ORDER BY id) AS r FROM t4 ORDER BY r DESC LIMIT 3",
    "SELECT lag(d, 1, 'x') OVER (ORDER BY id) FROM t4",
    "SELECT DISTINCT ON (d > 0) id FROM t4 ORDER BY id",
    "SELECT ntile(4294967296) OVER () FROM t4",
    "SELECT id, sum(id) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 3000000000 PRECEDING) FROM t4 ORDER BY 1",
    "SELECT id, lag(id, 2147483647) OVER (ORDER BY id), nth_value(id, 2147483647) OVER (ORDER BY id) FROM t4 ORDER BY 1",
    "SELECT row_number() OVER (ORDER BY id) FROM t4 UNION ALL SELECT 1.5 ORDER BY 1",
    "SELECT date '2020-01-01' INTERSECT SELECT timestamp '2020-01-01'",
    "SELECT id, CASE WHEN d > 100 THEN 10 / (id - 1) ELSE row_number() OVER (ORDER BY id) END FROM t4 ORDER BY 1",
    "SELECT sum(row_number() OVER ()) FROM t4",
    "SELECT (SELECT count(*) FROM t4 b WHERE row_number() OVER () > 1) FROM t4",
    "SELECT DISTINCT ON (1) * FROM t4 ORDER BY 1",
    "SELECT DISTINCT ON (k) iv AS k, id FROM t4 ORDER BY k, id",
    "SELECT extract(epoch FROM timestamp 'infinity'), extract(year FROM timestamp '-infinity'), extract(day FROM timestamp 'infinity')",
    "SELECT encode('abc', 'hex'), interval '1.05 years', interval '1.5 decades'",
    "SELECT encode('abc'::text, 'hex')",
    "SELECT interval '1e10 years'",
    "SELECT CASE WHEN true THEN 1 ELSE extract(hour FROM date '2020-01-01') END, COALESCE(1, extract(hour FROM date '2020-01-01'))",
    "SELECT DISTINCT ON (dt IS NULL, iv) dt IS NULL, iv, id FROM t4 ORDER BY iv, dt IS NULL, id DESC",
    "SELECT DISTINCT ON (iv) iv, count(*) FROM t4 GROUP BY iv ORDER BY iv, 2",
    "SELECT lag(id, 1, 1.5) OVER (ORDER BY id), lead(ts, 1, '2000-01-01') OVER (ORDER BY id) FROM t4 ORDER BY 1, 2",
    # Equal spans are one interval to grouping, DISTINCT, set operations and joins.
    "SELECT count(DISTINCT x) FROM (VALUES ('1 day'::interval), ('24 hours'), ('1 mon'), ('30 days')) v(x)",
    "SELECT x, count(*) FROM (VALUES ('1 day'::interval), ('24 hours'), ('1 mon'), ('30 days')) v(x) GROUP BY x ORDER BY 2, 1",
    "SELECT count(*) FROM (SELECT '1 day'::interval UNION SELECT '24 hours'::interval) s",
    "SELECT count(*) FROM (VALUES ('1 day'::interval), ('24 hours')) a(x) JOIN (VALUES ('24 hours'::interval)) b(y) ON a.x = b.y",
    # Array containment and overlap.
    "SELECT ARRAY[1,2,3] @> ARRAY[2,3], ARRAY[1,2] @> ARRAY[2,4], ARRAY[2] <@ ARRAY[1,2], ARRAY[1,2] && ARRAY[2,5], ARRAY[1] && ARRAY[3]",
    "SELECT ARRAY[1,NULL] @> ARRAY[NULL::int], ARRAY[1] @> '{}', '{1,2}' <@ ARRAY[1,2,3], ARRAY[1,1] <@ ARRAY[1]",
    "SELECT ARRAY['a','b'] @> ARRAY['a'], NULL::int[] @> ARRAY[1], ARRAY['1 day'::interval] @> ARRAY['24 hours'::interval]",
    "SELECT ARRAY[1] @> ARRAY[1.5]",
    "SELECT ARRAY[1] @> 1",
    "SELECT ARRAY[1]::bigint[] @> ARRAY[1]",
]

NUMERICS = ["0", "1", "-1", "2.5", "-0.125", "10", "0.001", "3", "1000.5", "-7", "NULL", "'1.5'"]
INTERVALS = ["interval '1 day'", "interval '1 mon'", "interval '-2 hours'", "interval '1 year 2 mons'",
             "interval '3 days 04:05:06.5'", "interval '-1 mon 15 days'", "interval '90 minutes'",
             "interval '0'", "interval '1.5 months'", "interval '2 weeks'", "'1 day'::interval"]
UNITS = ["microseconds", "milliseconds", "second", "minute", "hour", "day", "week", "month",
         "quarter", "year", "decade", "century", "millennium"]
FIELDS = UNITS + ["dow", "isodow", "doy", "epoch", "isoyear", "julian"]


def typed_data(rng):
    def maybe(v, p=0.15):
        return "NULL" if rng.random() < p else v

    def stamp():
        y, m = rng.randint(1995, 2030), rng.randint(1, 12)
        d = rng.choice([1, 15, 28, 29, 30, 31]) if m != 2 else rng.choice([1, 28, 29])
        if m == 2 and d == 29 and y % 4:
            d = 28
        if m in (4, 6, 9, 11) and d == 31:
            d = 30
        us = rng.choice(["", ".5", ".123456", ".000001"])
        return f"{y:04d}-{m:02d}-{d:02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}{us}"

    rows = []
    for i in range(1, 31):
        d = f"{rng.randint(-99999, 99999) / 100:.2f}"
        x = rng.choice(["0.5", "-3", "12.345", "1e3", "0.0001", "99999.99999", "-0.1"])
        iv = rng.choice(["1 day", "2 mons 3 days", "-1 day 02:00:00", "04:05:06.789", "1 year", "-3 mons", "0", "36 hours"])
        by = "\\x" + "".join(f"{rng.randint(0, 255):02x}" for _ in range(rng.randint(0, 5)))
        rows.append(f"({i}, {maybe(d)}, {maybe(x)}, {maybe(repr(stamp()))}, {maybe(repr(stamp() + '+00'))}, "
                    f"{maybe(repr(stamp()[:10]))}, {maybe(repr(iv))}, {maybe(repr(by))})")
    return ["INSERT INTO t4 VALUES " + ", ".join(rows)]


class TypedGen:
    def __init__(self, rng):
        self.r = rng

    def pick(self, xs):
        return self.r.choice(xs)

    def num(self, d=0):
        if d > 1 or self.r.random() < 0.4:
            return self.pick(["x.d", "x.x", "x.d", "x.id"] + NUMERICS)
        a = self.num(d + 1)
        k = self.r.randrange(9)
        if k < 3:
            return f"({a} {self.pick(['+', '-', '*'])} {self.num(d + 1)})"
        if k == 3:
            return f"({a} {self.pick(['/', '%'])} {self.pick(['3', '-0.7', '2.25', '7', '0.001'])})"
        if k == 4:
            return f"round({a}, {self.pick(['0', '1', '2', '-1'])})"
        if k == 5:
            return f"{self.pick(['abs', 'ceil', 'floor', 'round'])}({a})"
        if k == 6:
            return f"(- {a})"
        if k == 7:
            return f"extract({self.pick(FIELDS)} from {self.stamp(d + 1)})"
        return f"COALESCE({a}, {self.pick(NUMERICS[:-2])})"

    def stamp(self, d=0):
        """A timestamp, timestamptz or date expression."""
        if d > 1 or self.r.random() < 0.4:
            return self.pick(["x.ts", "x.tz", "x.dt", "x.ts", "timestamp '2024-02-29 12:00:00'", "date '2023-01-31'"])
        k = self.r.randrange(6)
        a = self.stamp(d + 1)
        if k < 2:
            return f"({a} {self.pick(['+', '-'])} {self.interval(d + 1)})"
        if k == 2:
            return f"(x.dt {self.pick(['+', '-'])} {self.pick(['1', '-30', '365', 'x.id::int'])})"
        if k == 3:
            return f"date_trunc('{self.pick(UNITS)}', {a})"
        if k == 4:
            return f"CAST({a} AS {self.pick(['date', 'timestamp', 'timestamptz'])})"
        return f"COALESCE({a}, {self.pick(['x.ts', 'x.dt'])})"

    def interval(self, d=0):
        if d > 1 or self.r.random() < 0.45:
            return self.pick(["x.iv", "x.iv"] + INTERVALS)
        k = self.r.randrange(6)
        if k == 0:
            return f"({self.interval(d + 1)} {self.pick(['+', '-'])} {self.interval(d + 1)})"
        if k == 1:
            return f"({self.interval(d + 1)} {self.pick(['*', '/'])} {self.pick(['2', '1.5', '-3', '7', '0.25'])})"
        if k == 2:
            return f"(- {self.interval(d + 1)})"
        if k == 3:
            return f"(x.ts - {self.pick(['x.tz', 'x.dt', 'x.ts', 'timestamp ' + repr('2000-01-01 00:00:00')])})"
        if k == 4:
            return f"date_trunc('{self.pick(UNITS)}', {self.interval(d + 1)})"
        return f"({self.stamp(d + 1)} - {self.stamp(d + 1)})"

    def bytes(self):
        return self.pick(["x.by", "(x.by || x.by)", "decode(encode(x.by, 'base64'), 'base64')",
                          "decode(encode(x.by, 'escape'), 'escape')", "(x.by || '\\x00ff'::bytea)",
                          "(x.by || '\\x41')"])

    def item(self):
        k = self.r.randrange(10)
        if k < 3:
            return self.num()
        if k < 5:
            return self.stamp()
        if k == 5:
            return f"({self.interval()})::text"
        if k == 6:
            return self.interval()
        if k == 7:
            f = self.pick(["md5", "length", "octet_length", "encode"])
            fmt = f", '{self.pick(['hex', 'base64', 'escape'])}'" if f == "encode" else ""
            return f"{f}({self.bytes()}{fmt})"
        if k == 8:
            return f"({self.stamp()})::text"
        return f"date_part('{self.pick(FIELDS)}', {self.pick([self.stamp(), self.interval()])})"

    def cond(self):
        k = self.r.randrange(6)
        if k == 0:
            return f"{self.num(1)} {self.pick(['<', '>=', '=', '<>'])} {self.num(1)}"
        if k == 1:
            return f"{self.stamp(1)} {self.pick(['<', '>', '=', '<='])} {self.stamp(1)}"
        if k == 2:
            return f"{self.interval(1)} {self.pick(['<', '>', '='])} {self.interval(1)}"
        if k == 3:
            return f"x.dt BETWEEN date '2000-01-01' AND {self.stamp(1)}"
        if k == 4:
            return f"{self.pick(['x.ts', 'x.iv', 'x.by', 'x.d'])} IS {self.pick(['', 'NOT '])}NULL"
        return f"x.by {self.pick(['<', '>', '='])} '\\x80'::bytea"

    def window(self):
        """A window call whose result does not depend on how the server orders equal rows:
        functions that read row positions get a total order (ending in the unique id)."""
        part = self.pick(["", "", "PARTITION BY (x.d > 0) ", "PARTITION BY x.iv ",
                          "PARTITION BY date_trunc('decade', x.dt) "])
        keys = self.pick(["x.ts", "x.dt DESC", "x.d NULLS FIRST", "x.iv", "x.tz DESC NULLS LAST"])
        total = f"ORDER BY {keys}, x.id{self.pick(['', ' DESC'])}"
        k = self.r.randrange(9)
        if k == 0:
            return f"{self.pick(['rank', 'dense_rank', 'percent_rank', 'cume_dist'])}() OVER ({part}ORDER BY {keys})"
        if k == 1:
            return f"{self.pick(['row_number()', 'ntile(' + self.pick(['1', '3', '7', '40']) + ')'])} OVER ({part}{total})"
        if k == 2:
            col = self.pick(["x.d", "x.ts", "x.iv", "x.by", "x.id"])
            extra = self.pick(["", ", 2", ", -1", ", 3, NULL"])
            return f"{self.pick(['lag', 'lead'])}({col}{extra}) OVER ({part}{total})"
        if k == 3:
            f = self.pick(["first_value(x.d)", "last_value(x.ts)", "nth_value(x.iv, 2)", "first_value(x.id)"])
            frame = self.pick(["", " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
                               " ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING", " ROWS 2 PRECEDING"])
            return f"{f} OVER ({part}{total}{frame})"
        agg = self.pick(["sum(x.d)", "count(*)", "count(x.ts)", "min(x.iv)", "max(x.dt)", "avg(x.d)",
                         "sum(x.x)", "bool_or(x.d > 0)", "count(*) FILTER (WHERE x.d > 0)"])
        if k in (4, 5):
            return f"{agg} OVER ({part}{self.pick(['', 'ORDER BY ' + keys])})"
        if k == 6:
            frame = self.pick(["ROWS BETWEEN 2 PRECEDING AND CURRENT ROW", "ROWS BETWEEN CURRENT ROW AND 3 FOLLOWING",
                               "ROWS UNBOUNDED PRECEDING", "ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING"])
            return f"{agg} OVER ({part}{total} {frame})"
        if k == 7:
            return f"{agg} OVER ({part}ORDER BY {keys} RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)"
        return f"string_agg(x.id::text, ',') OVER ({part}{total})"

    def window_statement(self):
        where = f" WHERE {self.cond()}" if self.r.random() < 0.5 else ""
        if self.r.random() < 0.2:
            g = self.pick(["(x.d > 0)", "date_trunc('decade', x.ts)", "x.iv"])
            wins = self.pick(["sum(count(*)) OVER ()", "rank() OVER (ORDER BY count(*) DESC)",
                              "max(sum(x.d)) OVER ()", "count(*) - lag(count(*), 1, 0) OVER (ORDER BY " + g + ")"])
            return f"SELECT {g} AS g, count(*), {wins} AS w FROM t4 x{where} GROUP BY 1 ORDER BY 1"
        items = []
        for i in range(self.r.randint(1, 3)):
            w = self.window()
            if self.r.random() < 0.2:
                w = f"({w} {self.pick(['+', '*'])} {self.pick(['1', '2'])})" if "rank" in w or "row_number" in w or "count" in w else w
            items.append(f"{w} AS w{i}")
        return f"SELECT x.id, {', '.join(items)} FROM t4 x{where} ORDER BY 1"

    def distinct_on(self):
        key = self.pick(["(x.d > 0)", "x.iv", "date_trunc('decade', x.dt)", "x.dt IS NULL", "length(x.by)"])
        extra = self.pick(["", ", x.ts", ", x.d DESC NULLS LAST", ", x.iv DESC"])
        where = f" WHERE {self.cond()}" if self.r.random() < 0.4 else ""
        return (f"SELECT DISTINCT ON ({key}) {key} AS k, x.id, {self.item()} AS c FROM t4 x{where} "
                f"ORDER BY {key}{extra}, x.id{self.pick(['', ' DESC'])}")

    def statement(self):
        if self.r.random() < 0.08:
            return self.distinct_on()
        if self.r.random() < 0.25:
            return self.window_statement()
        where = f" WHERE {self.cond()}" if self.r.random() < 0.6 else ""
        if self.r.random() < 0.2:
            g = self.pick([f"date_trunc('{self.pick(UNITS[5:])}', x.ts)", "x.dt", "x.iv", "(x.d > 0)"])
            aggs = self.r.sample(["count(*)", "sum(x.d)", "avg(x.d)", "min(x.ts)", "max(x.tz)", "min(x.iv)",
                                  "max(x.dt)", "max(x.by)", "sum(x.x)", "avg(x.x)", "count(DISTINCT x.dt)"],
                                 self.r.randint(1, 3))
            n = 1 + len(aggs)
            return (f"SELECT {g} AS g, {', '.join(aggs)} FROM t4 x{where} GROUP BY 1 ORDER BY "
                    + ", ".join(str(i) for i in range(1, n + 1)))
        items = [f"{self.item()} AS c{i}" for i in range(self.r.randint(1, 3))]
        order = ", ".join(str(i) for i in range(1, len(items) + 1))
        return f"SELECT x.id, {', '.join(items)} FROM t4 x{where} ORDER BY 1, {order}"


def outcome(cur, stmt):
    try:
        cur.execute(stmt)
        if cur.description:
            cols = [[d.name, d.type_code] for d in cur.description]
            return ["ok", cols, [list(r) for r in cur.fetchall()]]
        return ["ok", cur.statusmessage]
    except psycopg.Error as e:
        return ["err", e.sqlstate, e.diag.message_primary, e.diag.message_hint]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--report")
    ap.add_argument("--show", type=int, default=20)
    ap.add_argument("--timeout-ms", type=int, default=20000)
    ap.add_argument("--typed", type=int, default=600,
                    help="statements over numeric, date/time, interval and bytea columns, after --count")
    ap.add_argument("--grouping", type=int, default=300,
                    help="GROUP BY ROLLUP / CUBE / GROUPING SETS statements, after --typed")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    gen = Gen(rng)
    stmts = SETUP + data(rng) + EDGE
    while len(stmts) < args.count:
        stmts.extend(gen.write() if rng.random() < 0.1 else [gen.select()])
    typed_rng = random.Random(args.seed * 7919 + 4)
    typed = TypedGen(typed_rng)
    stmts += TYPED_SETUP + typed_data(typed_rng) + TYPED_EDGE
    stmts += [typed.statement() for _ in range(args.typed)]
    # Grouping sets and ordered-set aggregates, from a stream of their own (the statements
    # above stay those of the seed).
    grouping = Gen(random.Random(args.seed * 104729 + 11))
    stmts += [grouping.grouping() for _ in range(args.grouping)]

    conns = [psycopg.connect(d, autocommit=True, cursor_factory=psycopg.ClientCursor) for d in (args.a, args.b)]
    curs = [c.cursor() for c in conns]
    # A statement that runs away is a difference (57014), not a stalled test.
    for c in curs:
        c.execute(f"SET statement_timeout = {args.timeout_ms}")
    diffs = []
    counts = {"statements": 0, "rows": 0, "errors": 0, "nonempty": 0}
    for i, s in enumerate(stmts):
        a, b = (json.loads(json.dumps(outcome(c, s), default=str)) for c in curs)
        counts["statements"] += 1
        if a[0] == "err":
            counts["errors"] += 1
        elif len(a) == 3 and a[2]:
            counts["nonempty"] += 1
            counts["rows"] += len(a[2])
        if a != b:
            diffs.append({"index": i, "sql": s, "postgres": a, "rocklake": b})
    for c in conns:
        c.close()
    summary = {"seed": args.seed, **counts, "differences": len(diffs)}
    return difflog.finish(summary, diffs, args.show, args.report, lambda d: f"#{d['index']}: {d['sql']}")


if __name__ == "__main__":
    sys.exit(main())
