//! Bind parameters of the extended protocol, differentially: psycopg sends the same
//! parameterized statements (Parse with `$n`, Bind with text and binary values, typed and
//! untyped) to PostgreSQL 15 and to RockLake; rows, types and SQLSTATEs must agree.

use rocklake_tests::{duckdb_python_quiet, result_json, Postgres, Server};

const SCRIPT: &str = r#"
import sys, json, psycopg
from psycopg.types.numeric import Int8
dsn = sys.argv[1]
out = []
c = psycopg.connect(dsn, autocommit=True)
c.execute("DROP TABLE IF EXISTS bp")
c.execute("CREATE TABLE bp (id BIGINT PRIMARY KEY, name VARCHAR, b BYTEA, f DOUBLE PRECISION, ok BOOLEAN)")
def run(sql, params, binary=False):
    try:
        cur = c.cursor()
        cur.execute(sql, params, binary=False) if not binary else cur.execute(sql, params)
        if cur.description is None:
            out.append([sql, "ok", cur.rowcount])
        else:
            out.append([sql, [d.type_code for d in cur.description], [[repr(v) for v in r] for r in cur.fetchall()]])
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
print("RESULT", json.dumps(out))
"#;

fn run(dsn: &str) -> serde_json::Value {
    let (ok, out) = duckdb_python_quiet("155", SCRIPT, &[dsn]).expect("python");
    assert!(ok, "script failed: {out}");
    result_json(&out)
}

#[test]
fn psycopg_parameters_match_postgres() {
    let pg = Postgres::start().expect("postgres");
    let expected = run(&pg.dsn());
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("catalog"), "rocklake", &[]).expect("server");
    let got = run(&server.dsn());
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
    println!(
        "bind parameters: {} statements identical to PostgreSQL",
        e.len()
    );
    server.stop().expect("stop");
}
