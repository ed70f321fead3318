//! A long statement does not stall the server. Statements run directly on the connection's
//! runtime worker when the engine is free; one that runs long gets another worker woken to
//! serve the sockets meanwhile. So while one session runs a statement far too long to finish,
//! the server still answers `/metrics` and reads a CancelRequest, which stops the statement;
//! and the same holds for a long statement that never asks the host whether to stop (a large
//! `INSERT … VALUES`). Asserted by order of events (what finished first), not by time limits.

use rocklake_tests::{duckdb_python_quiet, Server};

const SCRIPT: &str = r#"
import json, sys, threading, time, urllib.request, psycopg
dsn, metrics = sys.argv[1], sys.argv[2]
c = psycopg.connect(dsn, autocommit=True)
c.execute("SELECT 1")
done = threading.Event()
outcome = {}
def endless():
    try:
        c.execute("SELECT count(*) FROM generate_series(1, 30000) a, generate_series(1, 10000) b")
        outcome["long"] = "finished"
    except psycopg.Error as e:
        outcome["long"] = e.sqlstate
    done.set()
t = threading.Thread(target=endless)
t.start()
time.sleep(0.5)
body = urllib.request.urlopen(metrics, timeout=60).read().decode()
outcome["metrics answered while running"] = not done.is_set()
outcome["metrics has statements"] = "rocklake_statements_total" in body
c.cancel_safe()
t.join()
outcome["session works after"] = c.execute("SELECT 41 + 1").fetchone()[0]

# 400,000 rows in one INSERT text (seconds of work in a debug build, well past the 0.5 s).
c.execute("CREATE TABLE wide (a int PRIMARY KEY, b text)")
c.execute("BEGIN")
big = "INSERT INTO wide VALUES " + ",".join(f"({i},'x{i}')" for i in range(400000))
done.clear()
def insert():
    c.execute(big)
    outcome["insert"] = c.pgconn.transaction_status == psycopg.pq.TransactionStatus.INTRANS
    done.set()
t = threading.Thread(target=insert)
t.start()
time.sleep(0.5)
urllib.request.urlopen(metrics, timeout=120).read()
outcome["metrics answered while inserting"] = not done.is_set()
t.join()
outcome["rows"] = c.execute("SELECT count(*) FROM wide").fetchone()[0]
c.execute("ROLLBACK")
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
            "insert": true,
            "metrics answered while inserting": true,
            "rows": 400000,
            "metrics has statements": true,
            "session works after": 42,
        }),
        "{out}"
    );
    server.stop().expect("stop");
}
