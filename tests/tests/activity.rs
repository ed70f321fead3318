//! `pg_stat_activity`, `pg_backend_pid()`, `pg_cancel_backend` and `pg_terminate_backend`
//! against PostgreSQL 15: what an operator sees of the sessions (state, query, times, client)
//! and does to them (cancel a COPY that waits for data, end an idle session), with the same
//! rows, types, warnings and errors.

use rocklake_tests::same_outcomes_as_postgres;

const SCRIPT: &str = r#"
import sys, json, threading, time, psycopg
dsn = sys.argv[1]
out = []
notices = []
watch = psycopg.connect(dsn, autocommit=True, application_name="watcher")
watch.add_notice_handler(lambda d: notices.append([d.severity, d.sqlstate, d.message_primary]))
worker = psycopg.connect(dsn, autocommit=True, application_name="worker")

def run(sql, conn=watch):
    notices.clear()
    try:
        cur = conn.execute(sql)
        rows = cur.fetchall() if cur.description else cur.statusmessage
        res = [sql, [(d.name, d.type_code) for d in cur.description] if cur.description else None,
               [[str(v) if v is not None else None for v in r] for r in rows]
               if isinstance(rows, list) else rows]
    except psycopg.Error as e:
        res = [sql, "error", e.sqlstate, e.diag.message_primary]
    res.append(list(notices))
    out.append(res)

# The pid of BackendKeyData is pg_backend_pid() and pg_stat_activity's pid.
wpid = worker.info.backend_pid
out.append(["backend pid", worker.execute("SELECT pg_backend_pid()").fetchone()[0] == wpid,
            watch.execute("SELECT pid FROM pg_stat_activity WHERE application_name = 'worker'")
            .fetchone()[0] == wpid])

WORKER = ("SELECT datname, usename, application_name, client_addr, client_hostname, "
          "client_port > 0, backend_start <= query_start, xact_start IS NULL, "
          "xact_start <= query_start, state_change >= query_start, wait_event_type, wait_event, "
          "state, backend_xid IS NULL, backend_xmin IS NULL, query, backend_type, leader_pid, "
          "query_id FROM pg_stat_activity WHERE application_name = 'worker'")

def worker_row():
    # PostgreSQL's backend reports its state before it starts waiting for the client
    # (wait_event ClientRead): read the row once the worker is waiting, as RockLake's is.
    time.sleep(0.1)
    run(WORKER)

worker_row()
run("BEGIN ISOLATION LEVEL REPEATABLE READ", worker)
run("SELECT 1", worker)
worker_row()
run("CREATE TABLE act_t (a int)", worker)
worker_row()
run("SELECT 1/0", worker)
worker_row()
run("ROLLBACK", worker)
run("BEGIN", worker)
run("CREATE TABLE act_t (a int)", worker)
worker_row()
run("COMMIT", worker)
worker_row()
# The reader's own row: running its own statement.
run("SELECT application_name, state, query, wait_event, xact_start = now(), "
    "client_addr = inet_client_addr(), client_port = inet_client_port(), "
    "backend_xmin IS NOT NULL FROM pg_stat_activity WHERE pid = pg_backend_pid()")
run("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")
run("SELECT * FROM pg_stat_activity WHERE false")

# Signals that reach no session, and bad arguments.
for sql in ["SELECT pg_cancel_backend(0)", "SELECT pg_terminate_backend(0)",
            "SELECT pg_terminate_backend(0, 10)", "SELECT pg_terminate_backend(0, -1)",
            "SELECT pg_cancel_backend(NULL), pg_terminate_backend(NULL), pg_terminate_backend(1, NULL)",
            "SELECT pg_cancel_backend(1::bigint)", "SELECT pg_cancel_backend()",
            "SELECT pg_cancel_backend(pg_backend_pid())",
            "SELECT '10.1.2.3'::inet, '::1'::inet::text, '10.0.0.0/8'::inet < '192.168.1.1'",
            "SELECT '10.1.2.300'::inet"]:
    run(sql)

def while_copying(conn, value, during):
    """Runs `during` (on the watcher) while `conn` is in a COPY FROM STDIN that has sent one
    row and waits 1.5 s before finishing; returns how the COPY ended."""
    outcome = {}
    def copy_slowly():
        try:
            with conn.cursor() as cur:
                with cur.copy("COPY act_t FROM STDIN") as cp:
                    cp.write_row((value,))
                    time.sleep(1.5)
            outcome["end"] = "copied"
        except psycopg.Error as e:
            outcome["end"] = [type(e).__name__, e.sqlstate, conn.closed]
    t = threading.Thread(target=copy_slowly)
    t.start()
    time.sleep(0.5)
    for sql in during:
        run(sql)
    t.join()
    return outcome["end"]

# A COPY FROM STDIN waiting for its data is active, and pg_cancel_backend ends it with 57014.
out.append(["copy", while_copying(worker, 1, [
    "SELECT state, wait_event_type, wait_event, query FROM pg_stat_activity "
    "WHERE application_name = 'worker'",
    "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'worker'"])])
run("SELECT count(*) FROM act_t", worker)

# pg_terminate_backend ends a COPY waiting for its data at once: nothing of it is committed.
copier = psycopg.connect(dsn, autocommit=True, application_name="copier")
out.append(["copy terminated", while_copying(copier, 5, [
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'copier'"])])
run("SELECT count(*) FROM act_t WHERE a = 5")

# pg_terminate_backend ends an idle session: its next statement finds the connection gone.
run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'worker'")
time.sleep(0.5)
try:
    worker.execute("SELECT 1")
    out.append(["terminated", "still open"])
except psycopg.Error as e:
    out.append(["terminated", type(e).__name__, "terminating connection due to administrator command" in str(e), worker.closed])
run("SELECT application_name FROM pg_stat_activity WHERE application_name IN ('watcher', 'worker')")

# Terminating one's own backend: FATAL, and the implicit transaction is rolled back.
me = psycopg.connect(dsn, autocommit=True)
try:
    me.execute("INSERT INTO act_t VALUES (7); SELECT pg_terminate_backend(pg_backend_pid())")
    out.append(["self", "still open"])
except psycopg.Error as e:
    out.append(["self", e.sqlstate, e.diag.severity, e.diag.message_primary, me.closed])
run("SELECT count(*) FROM act_t WHERE a = 7")
print("RESULT", json.dumps(out))
"#;

#[test]
fn activity_and_backend_signals_match_postgres() {
    let got = same_outcomes_as_postgres(SCRIPT);
    let text = serde_json::Value::Array(got).to_string();
    // The comparison must have seen the behaviours it is about, not only agreement.
    for needle in [
        "idle in transaction (aborted)",
        "idle in transaction",
        "ClientRead",
        "PID 0 is not a PostgreSQL backend process",
        "\"timeout\\\" must not be negative",
        "[\"copy\",[\"QueryCanceled\",\"57014\",false]]",
        "\"terminated\",\"AdminShutdown\",true,true",
        "[\"copy terminated\",[\"AdminShutdown\",\"57P01\",true]]",
        "\"self\",\"57P01\",\"FATAL\"",
        "client backend",
        "[\"backend pid\",true,true]",
    ] {
        assert!(text.contains(needle), "{needle} missing from {text}");
    }
}
