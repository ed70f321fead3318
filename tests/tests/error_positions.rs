//! Error positions (the ErrorResponse's `P` field, psql's `LINE n:` caret) as PostgreSQL 15
//! gives them: syntax errors at the token the parser stopped at or at the end of the input,
//! names that resolve to nothing (columns, tables, functions, INSERT and UPDATE target columns)
//! at the name, constants that do not convert at the constant — counted in characters over
//! the whole query string, through the simple protocol (libpq's PQexec, several statements in
//! one string) and the extended one (psycopg's Parse/Bind/Execute). Errors PostgreSQL gives
//! without a position must come without one here too. Every outcome is compared with
//! PostgreSQL's.

use rocklake_tests::same_outcomes_as_postgres;

const RUNNER: &str = r#"
import json, sys, psycopg
from psycopg.pq import DiagnosticField as F
dsn = sys.argv[1]
out = []

SETUP = ["DROP TABLE IF EXISTS pt", "CREATE TABLE pt (a int PRIMARY KEY, b text, d date)"]
ERRORS = [
    # Syntax: the token, the end of the input (one past the last character), a later line.
    "SELEC 1", "SELECT 1 2", "SELECT 1 +", "SELECT 1 +   ", "SELECT\n  1 +\n", "SELECT (1",
    "SELECT * FROM pt WHERE", "CREATE TABLE (", "SELECT 1)", "SELECT 'a' 'b'",
    "SELECT 'unterminated", "SELECT E'abc", "SELECT \"abc",
    # Names that resolve to nothing.
    "SELECT nope", "SELECT 'é', nope", "SELECT\n  1,\n  nope", "SELECT a, nope FROM pt",
    "SELECT pt.nope FROM pt", "SELECT x.a FROM pt", "SELECT * FROM pt p WHERE p.nope = 1",
    "SELECT * FROM nope", "SELECT * FROM public.nope", "SELECT * FROM pt JOIN nope ON true",
    "SELECT nofunc(1)", "SELECT * FROM pt WHERE a = nofunc(b)", "SELECT * FROM pt ORDER BY nope",
    "SELECT count(*) FROM pt HAVING nope > 1", "SELECT 1 FROM pt WHERE a IN (SELECT nope FROM pt)",
    "SELECT (SELECT nope)", "WITH c AS (SELECT 1) SELECT nope FROM c",
    "SELECT * FROM (SELECT 1 AS x) s WHERE s.y = 1", "SELECT * FROM generate_series(1, 2) g(n), nope",
    # DML targets.
    "INSERT INTO nope VALUES (1)", "INSERT INTO pt (a, nope) VALUES (1, 2)",
    "UPDATE pt SET nope = 1", "UPDATE nope SET a = 1", "UPDATE pt SET a = 1 WHERE nope = 2",
    "DELETE FROM nope", "DELETE FROM pt WHERE nope = 1",
    # Constants that do not convert.
    "SELECT 'abc'::int", "SELECT CAST('x' AS int)", "SELECT date '2020-13-01'",
    "SELECT * FROM pt WHERE a = 'abc'", "SELECT * FROM pt WHERE d > 'soon'",
    "INSERT INTO pt VALUES ('x')", "INSERT INTO pt (a, d) VALUES (1, 'not a date')",
    "SELECT 1 + '1.5'",
    # Operators that do not exist: at the operator; a type that does not exist: at its name.
    "SELECT * FROM pt WHERE b + 1 = 2", "SELECT * FROM pt WHERE a = 'x'::text", "SELECT (b) + 1 FROM pt",
    "SELECT (b)+1 FROM pt", "SELECT b || 1 - 2 FROM pt", "SELECT d - 'x'::text FROM pt", "SELECT b * 2 FROM pt",
    "SELECT * FROM pt WHERE b LIKE 1", "SELECT * FROM pt WHERE b NOT ILIKE 1", "SELECT * FROM pt WHERE 1 LIKE 'x'",
    "SELECT * FROM pt WHERE a = ANY('x'::text)", "SELECT -b FROM pt", "SELECT a, - (b) FROM pt",
    "SELECT length(42)", "SELECT lower(1)", "SELECT left('abc', 2::bigint)", "SELECT substr('hello', 2::bigint)",
    "SELECT 1, substring( 'abc', 2::bigint)", "SELECT chr(65::bigint)", "SELECT md5(1)",
    "SELECT left('abcd', '3'), repeat('ab', '2'), character_length('abc')",
    "SELECT 1::nope", "SELECT CAST(1 AS nope)", "SELECT 'x' :: nope", "SELECT a::nope FROM pt",
    "CREATE TABLE q (x nope)", "CREATE TABLE q (\n  x int,\n  y nope)", "ALTER TABLE pt ADD COLUMN z nope",
    # Boolean tests of something else; columns that must be grouped.
    "SELECT * FROM pt WHERE b IS TRUE", "SELECT a IS NOT FALSE FROM pt", "SELECT b IS UNKNOWN FROM pt",
    "SELECT 'x' IS TRUE", "SELECT NULL IS UNKNOWN, true IS NOT UNKNOWN, false IS NOT TRUE, NULL IS NOT FALSE",
    "SELECT a FROM pt GROUP BY b", "SELECT max(a), a FROM pt GROUP BY b", "SELECT b, a + 1 FROM pt GROUP BY b",
    "SELECT b, count(*) FROM pt GROUP BY b HAVING a > 1", "SELECT pt.a FROM pt GROUP BY b",
    "SELECT b FROM pt GROUP BY b ORDER BY a", "SELECT count(*) FROM pt ORDER BY a",
    "SELECT b FROM pt GROUP BY b HAVING max(a) > 1 AND a > 2", "SELECT b FROM pt GROUP BY 1 ORDER BY a + 1",
    # Without a position in PostgreSQL.
    "SELECT 1/0", "DROP TABLE nope", "INSERT INTO pt VALUES (1, 'x'), (1, 'y')",
    "SELECT b::int FROM (VALUES ('z')) v(b)",
]

def fields(res):
    def f(code):
        v = res.error_field(code)
        return v.decode() if v is not None else None
    return [f(F.SQLSTATE), f(F.MESSAGE_PRIMARY), f(F.STATEMENT_POSITION)]

with psycopg.connect(dsn, autocommit=True) as c:
    for s in SETUP:
        c.execute(s)
    for s in ERRORS:
        # The simple protocol, alone and after another statement in the same string.
        for text in (s, "SELECT 1;\n" + s):
            out.append(["simple", text] + fields(c.pgconn.exec_(text.encode())))
        # The extended protocol (a prepared statement: Parse, Describe, Bind, Execute).
        try:
            c.execute(s, prepare=True)
            out.append(["extended", s, "ok"])
        except psycopg.Error as e:
            out.append(["extended", s, e.sqlstate, e.diag.message_primary, e.diag.statement_position])
    c.execute("DROP TABLE pt")
print("RESULT " + json.dumps(out))
"#;

#[test]
fn error_positions_match_postgres() {
    let got = same_outcomes_as_postgres(RUNNER);
    // The comparison must have compared positions, not only their absence.
    let with_position = got
        .iter()
        .filter(|o| {
            o.as_array()
                .and_then(|a| a.last())
                .is_some_and(|p| !p.is_null())
        })
        .count();
    assert!(
        with_position >= 100,
        "only {with_position} of {} outcomes carried a position",
        got.len()
    );
    let without = got
        .iter()
        .filter(|o| {
            o.as_array()
                .and_then(|a| a.last())
                .is_some_and(|p| p.is_null())
        })
        .count();
    assert!(without >= 9, "errors without a position: {without}");
}
