//! Savepoints as PostgreSQL 15 has them: `SAVEPOINT`, `RELEASE [SAVEPOINT]`, `ROLLBACK TO
//! [SAVEPOINT]` — rows, tables, settings and cursors back to the savepoint, a failed block
//! made usable again, names reused and case-folded, the errors outside a block and for a
//! name not open — through psycopg's simple and prepared statements, psycopg's nested
//! `transaction()` blocks (which are savepoints), and psql's `ON_ERROR_ROLLBACK`. Every
//! outcome, NOTICE and transaction status is compared with PostgreSQL's.

use rocklake_tests::same_outcomes_as_postgres;

const RUNNER: &str = r#"
import json, subprocess, sys, psycopg
dsn = sys.argv[1]
out = []
notices = []
def connect(**kw):
    c = psycopg.connect(dsn, **kw)
    c.add_notice_handler(lambda d: notices.append([d.severity, d.sqlstate, d.message_primary]))
    return c
def run(c, sql):
    notices.clear()
    try:
        cur = c.execute(sql)
        res = [sql, cur.fetchall() if cur.description else cur.statusmessage]
    except psycopg.Error as e:
        res = [sql, "error", e.sqlstate, e.diag.message_primary]
    res += [c.info.transaction_status.name, list(notices)]
    out.append(res)

SCRIPT = [
    "DROP TABLE IF EXISTS sp", "CREATE TABLE sp (id int PRIMARY KEY, v text)",
    "SAVEPOINT a", "RELEASE a", "ROLLBACK TO a", "SELECT 1; SAVEPOINT a",
    "BEGIN", "INSERT INTO sp VALUES (1, 'one')", "SAVEPOINT a", "INSERT INTO sp VALUES (2, 'two')",
    "SELECT * FROM sp ORDER BY 1", "ROLLBACK TO SAVEPOINT a", "SELECT * FROM sp ORDER BY 1",
    "INSERT INTO sp VALUES (2, 'deux')", "SAVEPOINT b", "UPDATE sp SET v = 'uno' WHERE id = 1",
    "DELETE FROM sp WHERE id = 2", "SELECT * FROM sp ORDER BY 1", "ROLLBACK TO b",
    "SELECT * FROM sp ORDER BY 1",
    # A failed block: only ROLLBACK TO (or the end) goes through, and it makes the block usable.
    "INSERT INTO sp VALUES (1, 'dup')", "SELECT 1", "SAVEPOINT c", "RELEASE b", "ROLLBACK TO nosuch",
    "ROLLBACK TO a", "SELECT * FROM sp ORDER BY 1", "RELEASE b",
    # Names: reused (the latest wins), case-folded unless quoted.
    "SAVEPOINT a", "SAVEPOINT \"A\"", "INSERT INTO sp VALUES (3, 'three')", "ROLLBACK TO \"A\"",
    "RELEASE a", "ROLLBACK TO a", "RELEASE SAVEPOINT a", "SELECT * FROM sp ORDER BY 1",
    # Settings, tables and cursors made after the savepoint go with it.
    "SET LOCAL work_mem = '8MB'", "SAVEPOINT s", "SET work_mem = '16MB'", "SHOW work_mem",
    "ROLLBACK TO s", "SHOW work_mem",
    "CREATE TABLE sp2 (a int)", "SAVEPOINT d", "DROP TABLE sp2", "CREATE TABLE sp3 (a int)",
    "INSERT INTO sp3 VALUES (1)", "ROLLBACK TO d",
    "SELECT relname FROM pg_class WHERE relname LIKE 'sp%' ORDER BY 1",
    "DECLARE cur CURSOR FOR SELECT id FROM sp ORDER BY id", "SAVEPOINT e",
    "DECLARE cur2 CURSOR FOR SELECT 1", "FETCH cur", "ROLLBACK TO e", "FETCH cur2",
    "ROLLBACK TO e", "FETCH cur",
    "COMMIT", "SELECT * FROM sp ORDER BY 1",
    "SELECT relname FROM pg_class WHERE relname LIKE 'sp%' ORDER BY 1",
    # Released savepoints keep their work; ROLLBACK still drops it all.
    "BEGIN", "SAVEPOINT x", "INSERT INTO sp VALUES (4, 'four')", "RELEASE x", "SELECT count(*) FROM sp",
    "ROLLBACK", "SELECT count(*) FROM sp",
    "BEGIN", "SAVEPOINT x", "SAVEPOINT y", "SAVEPOINT x", "RELEASE x", "ROLLBACK TO y", "ROLLBACK TO x",
    "RELEASE y", "COMMIT",
    "BEGIN", "SAVEPOINT x", "SELECT 1/0", "ROLLBACK TO x", "INSERT INTO sp VALUES (5, 'five')", "COMMIT",
    # The access mode returns with the savepoint; the isolation level cannot change under one.
    "BEGIN", "SAVEPOINT r", "SET TRANSACTION READ ONLY", "ROLLBACK TO r", "SHOW transaction_read_only",
    "INSERT INTO sp VALUES (20, 'rw')", "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", "ROLLBACK",
    "START TRANSACTION", "COMMIT",
    # BEGIN inside a block applies its modes as SET TRANSACTION; RELEASE returns the access
    # mode to the savepoint's.
    "BEGIN", "BEGIN READ ONLY", "SHOW transaction_read_only", "INSERT INTO sp VALUES (40, 'ro')",
    "ROLLBACK", "BEGIN", "SAVEPOINT rr", "SET TRANSACTION READ ONLY", "RELEASE rr",
    "SHOW transaction_read_only", "INSERT INTO sp VALUES (41, 'rw')", "ROLLBACK",
    "BEGIN", "SELECT 1", "BEGIN ISOLATION LEVEL SERIALIZABLE", "SHOW transaction_isolation",
    "ROLLBACK",
    "BEGIN READ ONLY", "SAVEPOINT ro", "SET TRANSACTION READ WRITE", "ROLLBACK",
    "SET default_transaction_read_only = on", "INSERT INTO sp VALUES (30, 'x')",
    "RESET default_transaction_read_only",
    # A name dropped and made again in one transaction.
    "CREATE TABLE sp_re (a int)", "BEGIN", "SAVEPOINT q", "DROP TABLE sp_re", "CREATE TABLE sp_re (b int)",
    "COMMIT", "SELECT * FROM sp_re", "DROP TABLE sp_re",
    "SELECT * FROM sp ORDER BY 1", "DROP TABLE sp2",
]
c = connect(autocommit=True)
for s in SCRIPT:
    run(c, s)
c.close()

# The same through prepared statements (Parse of ROLLBACK TO in a failed block too).
c = connect(autocommit=True, prepare_threshold=0)
for s in ["BEGIN", "SAVEPOINT p", "INSERT INTO sp VALUES (6, 'six')", "SELECT 1/0", "SELECT 1",
          "ROLLBACK TO SAVEPOINT p", "INSERT INTO sp VALUES (7, 'seven')", "COMMIT",
          "SELECT * FROM sp WHERE id > 5 ORDER BY 1"]:
    run(c, s)
c.close()

# psycopg's nested transaction blocks are savepoints: an inner failure rolls back only it.
c = connect()
with c.transaction():
    c.execute("INSERT INTO sp VALUES (8, 'eight')")
    try:
        with c.transaction():
            c.execute("INSERT INTO sp VALUES (9, 'nine')")
            c.execute("INSERT INTO sp VALUES (8, 'again')")
    except psycopg.Error as e:
        out.append(["inner block", e.sqlstate])
    with c.transaction():
        c.execute("INSERT INTO sp VALUES (10, 'ten')")
out.append(["after nested blocks", c.execute("SELECT id, v FROM sp WHERE id >= 8 ORDER BY 1").fetchall()])
c.close()

# psql's ON_ERROR_ROLLBACK wraps each statement of a block in a savepoint.
psql = subprocess.run(
    ["psql", "-X", "-q", "-v", "ON_ERROR_ROLLBACK=on", dsn],
    input="BEGIN;\nINSERT INTO sp VALUES (11, 'a');\nINSERT INTO sp VALUES (11, 'b');\n"
          "INSERT INTO sp VALUES (12, 'c');\nCOMMIT;\nSELECT id, v FROM sp WHERE id > 10 ORDER BY 1;\n",
    capture_output=True, text=True)
out.append(["psql ON_ERROR_ROLLBACK", psql.stdout.splitlines(),
            [l.split("ERROR:")[-1].strip() for l in psql.stderr.splitlines() if "ERROR" in l]])
c = connect(autocommit=True)
run(c, "DROP TABLE sp")
print("RESULT", json.dumps(out, default=str))
"#;

#[test]
fn savepoints_match_postgres() {
    let got = same_outcomes_as_postgres(RUNNER);
    // The script must have reached what it is about, not only agreed.
    let text = serde_json::Value::Array(got).to_string();
    for needle in [
        "3B001", "25P01", "25P02", "\"16MB\"", "\"8MB\"", "eight", "ten", "five",
    ] {
        assert!(text.contains(needle), "{needle} never seen: {text}");
    }
    assert!(
        !text.contains("nine"),
        "the failed inner block's row stayed: {text}"
    );
}
