//! A long statement does not stall the server. Statements run directly on the connection's
//! runtime worker when the engine is free; one that runs long gets another worker woken to
//! serve the sockets meanwhile. So while one session runs a statement far too long to finish,
//! the server still answers `/metrics` and reads a CancelRequest, which stops the statement;
//! and the same holds for a long statement that never asks the host whether to stop (a large
//! `INSERT … VALUES`). Asserted by order of events (what finished first), not by time
//! limits: a statement that finished before `/metrics` was even asked is retried twice as
//! large. Each case fails with the watcher's wake-up removed. (The rest of a query string
//! after a COMMIT in it is watched too, but not tested here: on local storage it runs on a
//! worker woken from outside, while another holds the I/O driver, so it passes either way.)

use rocklake_tests::{duckdb_python_quiet, Server};

const SCRIPT: &str = r#"
import json, sys, threading, time, urllib.request, psycopg
dsn, metrics = sys.argv[1], sys.argv[2]
c = psycopg.connect(dsn, autocommit=True)
c.execute("SELECT 1")
outcome = {}

def ask_metrics_during(work):
    """Runs work() in a thread and asks /metrics 0.5 s later: when the request was sent and
    answered, and when work() returned."""
    times = {}
    def run():
        try:
            work()
        finally:
            times["ended"] = time.monotonic()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    time.sleep(0.5)
    times["sent"] = time.monotonic()
    body = urllib.request.urlopen(metrics, timeout=120).read().decode()
    times["answered"] = time.monotonic()
    times["body"] = body
    return t, times

# A statement that asks the host whether to stop: far too long to finish, cancelled.
def endless():
    try:
        c.execute("SELECT count(*) FROM generate_series(1, 30000) a, generate_series(1, 10000) b")
        outcome["long"] = "finished"
    except psycopg.Error as e:
        outcome["long"] = e.sqlstate
t, times = ask_metrics_during(endless)
outcome["metrics answered while running"] = "ended" not in times
outcome["metrics has statements"] = "rocklake_statements_total" in times["body"]
c.cancel_safe()
t.join()
outcome["session works after"] = c.execute("SELECT 41 + 1").fetchone()[0]

# A statement that never asks: a large INSERT text in an open block. It must still run when
# /metrics is asked (else it is retried twice as large) and must not have returned when
# /metrics answers.
def served_while_inserting(label):
    n = 200000
    for attempt in range(5):
        c.execute("DROP TABLE IF EXISTS wide")
        c.execute("CREATE TABLE wide (a int PRIMARY KEY, b text)")
        big = "BEGIN; INSERT INTO wide VALUES " + ",".join(f"({i},'x{i}')" for i in range(n))
        t, times = ask_metrics_during(lambda: c.execute(big))
        t.join()
        rows = c.execute("SELECT count(*) FROM wide").fetchone()[0]
        c.execute("ROLLBACK")
        if times["ended"] > times["sent"]:
            outcome[label] = [times["answered"] < times["ended"], rows == n]
            return
        n *= 2
    outcome[label] = "always finished before /metrics was asked"
served_while_inserting("metrics answered while inserting")
print("RESULT", json.dumps(outcome, sort_keys=True))
"#;

#[test]
fn long_statements_leave_metrics_and_cancel_served() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (server, mport) =
        Server::start_with_metrics(&dir.path().join("catalog"), "rocklake").expect("server");
    let metrics = format!("http://127.0.0.1:{mport}/metrics");
    let (ok, out) = duckdb_python_quiet("155", SCRIPT, &[&server.dsn(), &metrics]).expect("python");
    assert!(ok, "script failed: {out}");
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("no RESULT line: {out}"));
    let got: serde_json::Value = serde_json::from_str(line).expect("json");
    assert_eq!(
        got,
        serde_json::json!({
            "long": "57014",
            "metrics answered while running": true,
            "metrics answered while inserting": [true, true],
            "metrics has statements": true,
            "session works after": 42,
        }),
        "{out}"
    );
    server.stop().expect("stop");
}
