//! `INSERT`, `UPDATE` and `DELETE … RETURNING` as PostgreSQL 15 answers them: the rows (new
//! rows for INSERT and UPDATE, old for DELETE, FROM / USING columns beside them), their column
//! names and types, the command tags, the errors for what RETURNING may not hold — through the
//! simple protocol and through Parse/Describe/Bind/Execute with parameters (psycopg); and the
//! errors for a qualified name FROM does not have; TRUNCATE; `ON CONFLICT … DO NOTHING | DO
//! UPDATE`.

use rocklake_tests::same_outcomes_as_postgres;

const RUNNER: &str = r#"
import sys, json, psycopg
out = []
def outcome(sql, cur):
    if cur.description:
        rows = sorted(cur.fetchall(), key=repr)
        return [sql, [d.name for d in cur.description], [d.type_code for d in cur.description], rows, cur.statusmessage]
    return [sql, cur.statusmessage]
def run(c, sql, params=None):
    try:
        out.append(outcome(sql, c.execute(sql, params)))
    except psycopg.Error as e:
        out.append([sql, "err", e.sqlstate, e.diag.message_primary])
with psycopg.connect(sys.argv[1], autocommit=True, cursor_factory=psycopg.ClientCursor) as c:
    for s in [
        "CREATE TABLE rt (id INTEGER PRIMARY KEY, name TEXT, qty NUMERIC(6,2) DEFAULT 1.5, note VARCHAR(5))",
        "CREATE TABLE other (id INTEGER, tag TEXT)",
        "INSERT INTO other VALUES (1, 'a'), (2, 'b')",
        "INSERT INTO rt VALUES (1, 'one') RETURNING *",
        "INSERT INTO rt (id, name) VALUES (2, 'two'), (3, 'three') RETURNING id, name || '!' AS shout, qty * 2",
        "INSERT INTO rt AS r (id) VALUES (4) RETURNING r.id, r.qty, r.name IS NULL",
        "INSERT INTO rt (id, name) SELECT id + 10, tag FROM other RETURNING id, upper(name)",
        "WITH x AS (SELECT 5 AS v) INSERT INTO rt (id) SELECT v FROM x RETURNING id, note",
        "UPDATE rt SET qty = qty + 1 WHERE id <= 2 RETURNING id, qty",
        "UPDATE rt SET name = o.tag FROM other o WHERE o.id = rt.id RETURNING rt.id, rt.name, o.tag",
        "UPDATE rt SET note = 'x' WHERE id = 99 RETURNING *",
        "UPDATE rt AS r SET note = 'long' WHERE r.id = 4 RETURNING r.*",
        "DELETE FROM rt WHERE id = 3 RETURNING *, ctid IS NOT NULL AS had_ctid",
        "DELETE FROM rt USING other o WHERE o.id = rt.id AND o.tag = 'b' RETURNING rt.id, o.tag",
        "WITH gone AS (SELECT 11 AS v) DELETE FROM rt WHERE id IN (SELECT v FROM gone) RETURNING id",
        "INSERT INTO rt VALUES (30, 'x') RETURNING count(*)",
        "INSERT INTO rt VALUES (31, 'x') RETURNING row_number() OVER ()",
        "INSERT INTO rt VALUES (32, 'x') RETURNING generate_series(1, 2)",
        "INSERT INTO rt VALUES (33, 'x') RETURNING nosuch",
        "UPDATE rt SET note = 'y' RETURNING other.tag",
        "DELETE FROM rt WHERE id = 1 RETURNING sum(id)",
        "INSERT INTO rt VALUES (1, 'dup') RETURNING id",
        "SELECT id, name, qty, note FROM rt ORDER BY id",
        "INSERT INTO rt (id) VALUES (40), (41) RETURNING id, qty",
        "CREATE TABLE dv (a INTEGER DEFAULT 7, b TEXT DEFAULT 'd', c INTEGER)",
        "INSERT INTO dv DEFAULT VALUES RETURNING *",
        "INSERT INTO dv VALUES (1) RETURNING *",
        "INSERT INTO dv (c, c) VALUES (1, 2)",
        "SELECT other.tag FROM rt",
        "SELECT rt.nosuch FROM rt",
        "SELECT x.* FROM rt",
        "SELECT (SELECT rt.nosuch) FROM rt",
        "CREATE TABLE tr1 (a INTEGER)",
        "INSERT INTO tr1 VALUES (1), (2)",
        "BEGIN",
        "TRUNCATE tr1",
        "SELECT count(*) FROM tr1",
        "ROLLBACK",
        "SELECT count(*) FROM tr1",
        "TRUNCATE TABLE ONLY tr1, dv RESTART IDENTITY CASCADE",
        "SELECT (SELECT count(*) FROM tr1) + (SELECT count(*) FROM dv)",
        "TRUNCATE tr1, nosuch",
        "CREATE TABLE up (k INTEGER PRIMARY KEY, v TEXT)",
        "INSERT INTO up VALUES (1, 'a')",
        "INSERT INTO up VALUES (1, 'b'), (2, 'c') ON CONFLICT DO NOTHING RETURNING *",
        "INSERT INTO up VALUES (3, 'x'), (3, 'y') ON CONFLICT (k) DO NOTHING",
        "INSERT INTO up VALUES (1, 'z') ON CONFLICT ON CONSTRAINT up_pkey DO NOTHING",
        "INSERT INTO up VALUES (1, 'z') ON CONFLICT (v) DO NOTHING",
        "INSERT INTO up VALUES (1, 'z') ON CONFLICT (nosuch) DO NOTHING",
        "INSERT INTO up VALUES (1, 'z') ON CONFLICT ON CONSTRAINT nope DO NOTHING",
        "BEGIN",
        "DELETE FROM up WHERE k = 1",
        "INSERT INTO up VALUES (1, 'again') ON CONFLICT DO NOTHING",
        "COMMIT",
        "SELECT k, v FROM up ORDER BY k",
        "INSERT INTO dv (a, b) VALUES (1)",
        "INSERT INTO dv VALUES (1, 'x'), (2)",
        "INSERT INTO dv SELECT 1, 'x', 2, 3",
        "INSERT INTO dv (a, b) SELECT 1",
        "INSERT INTO up VALUES (1, 'upd') ON CONFLICT (k) DO UPDATE SET v = excluded.v RETURNING *",
        "INSERT INTO up VALUES (2, 'x'), (9, 'new') ON CONFLICT (k) DO UPDATE SET v = up.v || '+' || excluded.v RETURNING k, v",
        "INSERT INTO up AS u VALUES (2, 'w') ON CONFLICT (k) DO UPDATE SET v = 'never' WHERE u.v = 'nope'",
        "INSERT INTO up AS u VALUES (2, 'w') ON CONFLICT ON CONSTRAINT up_pkey DO UPDATE SET v = u.v || excluded.v WHERE u.k = 2 RETURNING u.v",
        "INSERT INTO up VALUES (4, 'a'), (4, 'b') ON CONFLICT (k) DO UPDATE SET v = excluded.v",
        "INSERT INTO up VALUES (1, 'z') ON CONFLICT DO UPDATE SET v = 'q'",
        "INSERT INTO up VALUES (1, 'z') ON CONFLICT (k) DO UPDATE SET k = 100 RETURNING k, v",
        "INSERT INTO up VALUES (100, 'z') ON CONFLICT (k) DO UPDATE SET k = 2",
        "INSERT INTO up VALUES (3, 'z') ON CONFLICT (k) DO UPDATE SET v = NULL, nosuch = 1",
        "SELECT k, v FROM up ORDER BY k",
        "INSERT INTO up VALUES (500, 'base')",
        "INSERT INTO up VALUES (500, 'm'), (600, 'n') ON CONFLICT (k) DO UPDATE SET k = up.k + 100, v = excluded.v RETURNING *",
        "SELECT k, v FROM up WHERE k >= 500 ORDER BY k",
        "INSERT INTO tr1 VALUES (5), (5) ON CONFLICT DO NOTHING",
        "INSERT INTO tr1 VALUES (6) ON CONFLICT (a) DO NOTHING",
    ]:
        run(c, s)
# ON CONFLICT under REPEATABLE READ: a row committed after the snapshot is a serialization
# failure, as an UPDATE of it is.
a = psycopg.connect(sys.argv[1], autocommit=True, cursor_factory=psycopg.ClientCursor)
b = psycopg.connect(sys.argv[1], autocommit=True)
for s in ["CREATE TABLE rr (k INTEGER PRIMARY KEY, v INTEGER)", "INSERT INTO rr VALUES (1, 10)"]:
    a.execute(s)
for conflict, concurrent in [
    ("INSERT INTO rr VALUES (1, 100) ON CONFLICT (k) DO UPDATE SET v = rr.v + excluded.v", "UPDATE rr SET v = 11 WHERE k = 1"),
    ("INSERT INTO rr VALUES (3, 300) ON CONFLICT DO NOTHING", "INSERT INTO rr VALUES (3, 30)"),
]:
    run(a, "BEGIN ISOLATION LEVEL REPEATABLE READ")
    run(a, "SELECT count(*) FROM rr")
    b.execute(concurrent)
    run(a, conflict)
    run(a, "ROLLBACK")
run(a, "SELECT k, v FROM rr ORDER BY k")
a.close(); b.close()
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    run(c, "INSERT INTO rt (id, name) VALUES (%s, %s) RETURNING id, name, qty", (20, "p"))
    run(c, "UPDATE rt SET note = %s WHERE id = %s RETURNING note, id", ("q", 20))
    run(c, "DELETE FROM rt WHERE id = %s RETURNING *", (20,))
    run(c, "DELETE FROM rt WHERE id = %s RETURNING id", (999,))
print("RESULT", json.dumps(out, default=str))
"#;

#[test]
fn returning_matches_postgres() {
    let got = same_outcomes_as_postgres(RUNNER);
    // The comparison compared rows: RETURNING gave them, with the tags.
    let text = serde_json::to_string(&got).expect("json");
    assert!(
        text.contains(r#"[[2,"two!","3.00"],[3,"three!","3.00"]],"INSERT 0 2"]"#),
        "{text}"
    );
    assert!(
        text.contains(r#"[[1,"a","a"],[2,"b","b"]],"UPDATE 2"]"#),
        "{text}"
    );
    assert!(
        text.contains("aggregate functions are not allowed in RETURNING"),
        "{text}"
    );
    assert!(
        text.contains(r#"[[20,"p","1.50"]],"INSERT 0 1"]"#),
        "{text}"
    );
    assert!(text.contains(r#"[[1,"upd"]],"INSERT 0 1"]"#), "{text}");
    assert!(
        text.contains("ON CONFLICT DO UPDATE command cannot affect row a second time"),
        "{text}"
    );
}
