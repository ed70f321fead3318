//! Bind parameters of the extended protocol, differentially: psycopg sends the same
//! parameterized statements (Parse with `$n`, Bind with text and binary values, typed and
//! untyped) to PostgreSQL 15 and to RockLake; rows, types and SQLSTATEs must agree. A second
//! pass makes psycopg prepare every statement under a name (`prepare_threshold=0`: Parse with
//! a name, Bind/Describe/Execute by name, reuse on the next call) and adds the named-statement
//! protocol errors and DEALLOCATE. A third asks for binary results.

use rocklake_tests::{duckdb_python_quiet, result_json, Postgres, Server};

const SCRIPT: &str = r#"
import sys, json, psycopg
from psycopg.types.numeric import Int8
dsn, mode = sys.argv[1], sys.argv[2]
out = []
named = mode == "named"
binary_results = mode == "binary"
c = psycopg.connect(dsn, autocommit=True, prepare_threshold=0 if named else None)
c.execute("DROP TABLE IF EXISTS bp")
c.execute("CREATE TABLE bp (id BIGINT PRIMARY KEY, name VARCHAR, b BYTEA, f DOUBLE PRECISION, ok BOOLEAN)")
c.execute("DROP TABLE IF EXISTS bp2")
c.execute("CREATE TABLE bp2 (k INTEGER, t TIMESTAMPTZ, n NUMERIC, v VARCHAR)")
def run(sql, params, binary=False):
    for _ in range(2 if named else 1):
        run_once(sql, params, binary)
def run_once(sql, params, binary=False):
    try:
        cur = c.cursor()
        cur.execute(sql, params, binary=binary_results)
        if cur.description is None:
            out.append([sql, "ok", cur.rowcount])
        else:
            formats = [cur.pgresult.fformat(i) for i in range(cur.pgresult.nfields)]
            out.append([sql, [d.type_code for d in cur.description], formats, [[repr(v) for v in r] for r in cur.fetchall()]])
    except psycopg.Error as e:
        out.append([sql, "error", e.sqlstate])
run("INSERT INTO bp VALUES (%s, %s, %s, %s, %s)", (1, "it's", b"\x00\x01\xff", 1.5, True))
run("INSERT INTO bp VALUES (%s, %s, %s, %s, %s)", (2, None, None, None, None))
run("INSERT INTO bp VALUES (%s, %s, %s, %s, %s)", (3, "$1 -- not a parameter", b"", -0.25, False))
run("SELECT id, name, b, f, ok FROM bp WHERE id = %s", (1,))
run("SELECT id FROM bp WHERE name IS NULL AND id > %s ORDER BY id", (0,))
run("SELECT name FROM bp WHERE name = %s OR id = %s ORDER BY 1", ("$1 -- not a parameter", 1))
run("SELECT %s::int + 1, %s || 'x'", (41, "a"))
run("SELECT id FROM bp WHERE id IN (%s, %s, %s) ORDER BY 1", (3, 1, 99))
run("UPDATE bp SET name = %s WHERE id = %s", ("new", 2))
run("SELECT name FROM bp WHERE id = %s", (Int8(2),))
run("DELETE FROM bp WHERE ok = %s", (False,))
run("SELECT count(*) FROM bp", ())
run("SELECT * FROM bp WHERE id = %s", ("abc",))
run("SELECT id FROM bp WHERE f > %s ORDER BY 1", (1.0,))
run("SELECT count(*) FROM bp2 WHERE n = %b OR t < %b", (__import__("decimal").Decimal("1.25"), __import__("datetime").datetime(2024, 1, 2, 3, 4, 5, tzinfo=__import__("datetime").timezone.utc)))
run("SELECT set_config('statement_timeout', '4s', %s)", ("true",))
run("SELECT current_setting('statement_timeout')", ())
run("WITH x AS (SELECT 3 AS a) UPDATE bp SET f = %s WHERE id IN (SELECT a FROM x)", (2.5,))
run("WITH x AS (SELECT 3 AS a) DELETE FROM bp WHERE id IN (SELECT a FROM x) AND f = %s", (7.0,))
run("SELECT id, f FROM bp ORDER BY id", ())
# A failed block still ends with a (prepared, when named) ROLLBACK or COMMIT: PostgreSQL lets
# only those through Parse there.
for end in ["ROLLBACK", "COMMIT"]:
    for sql in ["BEGIN", "SELECT 1/0", "SELECT 1", end, "SELECT count(*) FROM bp"]:
        run_once(sql, None)
if named:
    from psycopg import pq
    pgc = c.pgconn
    def proto(label, res):
        state = res.error_field(pq.DiagnosticField.SQLSTATE)
        out.append([label, pq.ExecStatus(res.status).name, state.decode() if state else None])
    proto("prepare s1", pgc.prepare(b"s1", b"SELECT count(*) FROM bp WHERE id > $1"))
    proto("prepare s1 again", pgc.prepare(b"s1", b"SELECT 1"))
    r = pgc.exec_prepared(b"s1", [b"0"])
    out.append(["exec s1", pq.ExecStatus(r.status).name, r.get_value(0, 0).decode()])
    proto("describe s1", pgc.describe_prepared(b"s1"))
    proto("exec missing", pgc.exec_prepared(b"nope", []))
    proto("describe missing", pgc.describe_prepared(b"nope"))
    run_once("DEALLOCATE s1", None)
    proto("exec after deallocate", pgc.exec_prepared(b"s1", [b"0"]))
    run_once("DEALLOCATE s1", None)
    proto("prepare s2", pgc.prepare(b"s2", b"SELECT 2"))
    run_once("DEALLOCATE ALL", None)
    proto("exec after deallocate all", pgc.exec_prepared(b"s2", []))
# ParameterDescription: the types PostgreSQL infers for untyped parameters from their
# context (drivers such as asyncpg, tokio-postgres and JDBC encode arguments by them).
from psycopg import pq as _pq
for i, sql in enumerate([
    "SELECT id FROM bp WHERE id = $1",
    "SELECT id FROM bp WHERE $1 < id AND name = $2",
    "SELECT id FROM bp WHERE id IN ($1, $2) AND f > $3",
    "SELECT $1::int4, CAST($2 AS bytea), $3",
    "SELECT $1",
    "SELECT id FROM bp b JOIN bp2 x ON x.k = $1 WHERE b.ok = $2",
    "SELECT id FROM bp WHERE id = (SELECT max(k) FROM bp2 WHERE n > $1)",
    "SELECT id FROM bp WHERE id = $2",
    "SELECT id + $1 FROM bp",
    "INSERT INTO bp VALUES ($1, $2, $3, $4, $5)",
    "INSERT INTO bp2 (v, k) VALUES ($1, $2), ($3, $4)",
    "INSERT INTO bp2 (t, n) VALUES ($1, $2 + 1)",
    "UPDATE bp SET name = $1, f = f * $2 WHERE id = $3",
    "UPDATE bp2 SET t = $1 FROM bp WHERE bp.id = bp2.k AND bp.name = $2",
    "DELETE FROM bp WHERE ok = $1 OR id > $2",
    "DELETE FROM bp2 USING bp WHERE bp.id = bp2.k AND bp.b = $1",
    "WITH x(a, b) AS (VALUES (1, 'a')) UPDATE bp SET name = x.b FROM x WHERE bp.id = x.a AND bp.f < $1",
    "WITH x AS (SELECT 1 AS a) DELETE FROM bp USING x WHERE bp.id = x.a AND ok = $1",
    "WITH x AS (SELECT 1 AS a) DELETE FROM bp WHERE id IN (SELECT a FROM x) AND ok = $1",
    "WITH x AS (SELECT 2 AS a) UPDATE bp SET f = $1 WHERE id IN (SELECT a FROM x)",
    "EXPLAIN SELECT id FROM bp WHERE id = $1",
    "SELECT id FROM bp ORDER BY id LIMIT $1 OFFSET $2",
    "SELECT id FROM bp ORDER BY id FETCH FIRST 1 ROWS ONLY",
    "INSERT INTO bp (id, name) VALUES ($1, $2, $3)",
    "INSERT INTO bp (id, name) VALUES ($1, DEFAULT)",
    "UPDATE bp SET name = DEFAULT WHERE id = $1",
    "SELECT t + $1, t - $2, $3 * interval '1 day' FROM bp2",
    "SELECT k FROM bp2 WHERE t > now() - $1 AND t - $2 > interval '1 hour'",
]):
    name = f"pd{i}".encode()
    res = c.pgconn.prepare(name, sql.encode())
    if res.status != _pq.ExecStatus.COMMAND_OK:
        out.append([sql, "prepare error", res.error_field(_pq.DiagnosticField.SQLSTATE).decode()])
        continue
    d = c.pgconn.describe_prepared(name)
    out.append([sql, "params", [d.param_type(j) for j in range(d.nparams)],
                "fields", [d.ftype(j) for j in range(d.nfields)]])
    c.pgconn.exec_(b"DEALLOCATE " + name)
print("RESULT", json.dumps(out))
"#;

fn run(dsn: &str, mode: &str) -> serde_json::Value {
    let (ok, out) = duckdb_python_quiet("155", SCRIPT, &[dsn, mode]).expect("python");
    assert!(ok, "script failed: {out}");
    result_json(&out)
}

#[test]
fn psycopg_parameters_match_postgres() {
    compare("unnamed");
}

#[test]
fn named_prepared_statements_match_postgres() {
    compare("named");
}

/// psycopg asks for every result column in binary (Bind result format 1).
#[test]
fn binary_results_match_postgres() {
    compare("binary");
}

fn compare(mode: &str) {
    let pg = Postgres::start().expect("postgres");
    let expected = run(&pg.dsn(), mode);
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("catalog"), "rocklake", &[]).expect("server");
    let got = run(&server.dsn(), mode);
    let (e, g) = (
        expected.as_array().expect("array"),
        got.as_array().expect("array"),
    );
    assert_eq!(e.len(), g.len());
    let mut mismatches = vec![];
    for (a, b) in e.iter().zip(g) {
        if a != b {
            mismatches.push(format!("PostgreSQL: {a}\nRockLake:   {b}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
    // Row results carry their format codes: all 1 when binary results were asked for.
    let formats: Vec<&serde_json::Value> = g
        .iter()
        .filter(|r| r.get(1).is_some_and(|k| k.is_array()))
        .filter_map(|r| r.get(2).filter(|f| f.is_array()))
        .collect();
    assert!(!formats.is_empty(), "no row results recorded");
    let want = if mode == "binary" { 1 } else { 0 };
    assert!(
        formats
            .iter()
            .all(|f| f.as_array().is_some_and(|a| a.iter().all(|x| x == want))),
        "format codes {formats:?}, expected all {want}"
    );
    println!(
        "bind parameters ({mode}): {} statements identical to PostgreSQL",
        e.len()
    );
    server.stop().expect("stop");
}
