//! SQL cursors as PostgreSQL 15 runs them: DECLARE (SCROLL, NO SCROLL, WITH HOLD), every FETCH
//! and MOVE direction, CLOSE, cursors ending with their transaction, and their errors —
//! compared statement by statement with a real PostgreSQL; psycopg's server-side cursors (which
//! describe the cursor's portal) and psql's `FETCH_COUNT` (which reads a query through a
//! cursor) against both; `pg_cursors`.

use std::process::Command;

use rocklake_tests::{same_outcomes_as_postgres, Postgres, Server};

/// Runs each statement through the simple protocol and prints its outcome: the columns, rows
/// and command tag, or the error's SQLSTATE, message and hint.
const RUNNER: &str = r#"
import sys, json, psycopg
out = []
def run(c, sql):
    try:
        cur = c.execute(sql)
        if cur.description:
            out.append([sql, [d.name for d in cur.description], [d.type_code for d in cur.description], cur.fetchall(), cur.statusmessage])
        else:
            out.append([sql, cur.statusmessage])
    except psycopg.Error as e:
        out.append([sql, "err", e.sqlstate, e.diag.message_primary, e.diag.message_hint])
with psycopg.connect(sys.argv[1], autocommit=True, cursor_factory=psycopg.ClientCursor) as c:
    for s in [
        "CREATE TABLE cur (i INTEGER, s TEXT)",
        "INSERT INTO cur VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, NULL)",
        "DECLARE c CURSOR FOR SELECT 1",
        "BEGIN",
        "DECLARE c SCROLL CURSOR FOR SELECT i, s FROM cur ORDER BY i",
        "FETCH c",
        "FETCH NEXT FROM c",
        "FETCH 2 IN c",
        "FETCH PRIOR c",
        "FETCH RELATIVE 0 FROM c",
        "FETCH FORWARD c",
        "FETCH FORWARD 0 FROM c",
        "FETCH BACKWARD ALL FROM c",
        "FETCH LAST FROM c",
        "FETCH NEXT FROM c",
        "FETCH FIRST FROM c",
        "FETCH ABSOLUTE 3 FROM c",
        "FETCH ABSOLUTE -2 FROM c",
        "FETCH ABSOLUTE 0 FROM c",
        "FETCH ABSOLUTE 9 FROM c",
        "FETCH RELATIVE -1 FROM c",
        "FETCH -2 FROM c",
        "FETCH BACKWARD -1 FROM c",
        "FETCH FORWARD -1 FROM c",
        "FETCH ALL FROM c",
        "MOVE BACKWARD 2 IN c",
        "FETCH NEXT FROM c",
        "MOVE ABSOLUTE 0 FROM c",
        "MOVE 0 FROM c",
        "MOVE FORWARD ALL IN c",
        "MOVE BACKWARD ALL IN c",
        "MOVE RELATIVE 2 IN c",
        "MOVE 0 c",
        "FETCH FORWARD ALL FROM c",
        "UPDATE cur SET s = 'changed' WHERE i = 1",
        "FETCH FIRST FROM c",
        "DECLARE c CURSOR FOR SELECT 1",
        "FETCH c",
        "ROLLBACK",
        "FETCH c",
        "BEGIN",
        "DECLARE n NO SCROLL CURSOR FOR SELECT i FROM cur ORDER BY i",
        "FETCH 2 FROM n",
        "FETCH ABSOLUTE 3 FROM n",
        "FETCH RELATIVE 1 FROM n",
        "MOVE 10 IN n",
        "FETCH n",
        "FETCH PRIOR FROM n",
        "ROLLBACK",
        "BEGIN",
        "DECLARE n NO SCROLL CURSOR FOR SELECT i FROM cur ORDER BY i",
        "FETCH ABSOLUTE 1 FROM n",
        "FETCH ABSOLUTE 1 FROM n",
        "ROLLBACK",
        "BEGIN",
        "DECLARE empty NO SCROLL CURSOR FOR SELECT i FROM cur WHERE false",
        "FETCH empty",
        "FETCH FIRST FROM empty",
        "ROLLBACK",
        "BEGIN",
        "DECLARE h CURSOR WITH HOLD FOR SELECT i, s FROM cur WHERE i > 3 ORDER BY i",
        "DECLARE w CURSOR FOR SELECT 1 AS one",
        "DECLARE ns NO SCROLL CURSOR FOR SELECT 2 AS two",
        # PostgreSQL's planner decides whether a cursor declared without SCROLL can move back
        # (`w`'s plan, a Result, cannot); RockLake lets it (COMPAT).
        "SELECT name, is_holdable, is_binary, CASE WHEN name = 'w' THEN NULL ELSE is_scrollable END AS scrollable, creation_time IS NOT NULL AS timed, statement LIKE 'DECLARE%' AS declared FROM pg_cursors ORDER BY name",
        "COMMIT",
        "SELECT name, is_holdable FROM pg_cursors",
        "FETCH ALL FROM h",
        "FETCH BACKWARD 1 FROM h",
        "FETCH w",
        "BEGIN",
        "DECLARE h2 CURSOR WITH HOLD FOR SELECT 2",
        "ROLLBACK",
        "FETCH h2",
        "CLOSE h",
        "CLOSE h",
        "DECLARE h3 CURSOR WITH HOLD FOR SELECT 'x'::text AS t, NULL::int AS n, 1.5::numeric AS d, now() IS NOT NULL AS b",
        "FETCH ALL h3",
        "CLOSE ALL",
        "FETCH h3",
        "DECLARE a CURSOR FOR SELECT 1 AS x; FETCH ALL FROM a",
        "FETCH a",
        "BEGIN",
        "DECLARE e CURSOR FOR SELECT * FROM nosuch",
        "ROLLBACK",
        "DECLARE \"Q c\" CURSOR WITH HOLD FOR SELECT 7 AS seven",
        "FETCH FROM \"Q c\"",
        "CLOSE \"Q c\"",
        "DECLARE d CURSOR WITH HOLD FOR SELECT 1",
        "DISCARD ALL",
        "FETCH d",
        "FETCH 1.5 FROM c",
        "FETCH ABSOLUTE FROM c",
        "MOVE",
    ]:
        run(c, s)
with psycopg.connect(sys.argv[1]) as c:
    cur = c.cursor("srv")
    cur.execute("SELECT i, s FROM cur WHERE i > %s ORDER BY i", (1,))
    out.append([[d.name for d in cur.description], cur.fetchmany(2), cur.fetchone(), cur.fetchall()])
    cur.close()
    sc = c.cursor("scrolling", scrollable=True)
    sc.execute("SELECT i FROM cur ORDER BY i")
    sc.scroll(3, mode="absolute")
    out.append(sc.fetchone())
    sc.scroll(-2)
    out.append(sc.fetchall())
    sc.close()
    c.commit()
    held = c.cursor("held", withhold=True)
    held.execute("SELECT count(*) AS n FROM cur")
    c.commit()
    out.append(held.fetchall())
    held.close()
print("RESULT", json.dumps(out, default=str))
"#;

#[test]
fn cursors_match_postgres() {
    let got = same_outcomes_as_postgres(RUNNER);
    let text = serde_json::to_string(&got).expect("json");
    assert!(text.contains(r#"[[4,"d"],[5,null]],"FETCH 2"]"#), "{text}");
    assert!(text.contains("cursor can only scan forward"), "{text}");
    assert!(
        text.contains(r#"[["i","s"],[[2,"b"],[3,"c"]],[4,"d"],[[5,null]]]"#),
        "{text}"
    );
}

/// psql's `FETCH_COUNT` reads a query through `DECLARE _psql_cursor NO SCROLL CURSOR` and
/// `FETCH FORWARD n`: the printed result is PostgreSQL's.
#[test]
fn psql_fetch_count_reads_through_a_cursor() {
    let pg = Postgres::start().expect("postgres");
    let dir = tempfile::tempdir().expect("tempdir");
    let rl = Server::start(&dir.path().join("catalog"), "postgres", &[]).expect("rocklake");
    let psql = |dsn: &str, args: &[&str]| -> String {
        let out = Command::new("psql")
            .args(["-X", "-v", "ON_ERROR_STOP=1", dsn])
            .args(args)
            .output()
            .expect("run psql");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "psql {args:?} on {dsn}: {stderr}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut outputs = Vec::new();
    for dsn in [pg.dsn(), rl.dsn()] {
        psql(
            &dsn,
            &[
                "-q",
                "-c",
                "CREATE TABLE big (i INTEGER, label TEXT); INSERT INTO big SELECT i, 'row ' || i FROM generate_series(1, 25) AS g(i)",
            ],
        );
        outputs.push(psql(
            &dsn,
            &[
                "-v",
                "FETCH_COUNT=4",
                "-c",
                "SELECT i, label FROM big ORDER BY i",
            ],
        ));
    }
    assert_eq!(
        outputs[1], outputs[0],
        "RockLake (right) differs from PostgreSQL (left)"
    );
    assert!(outputs[1].contains("25 | row 25"), "{}", outputs[1]);
    rl.stop().expect("stop");
}
