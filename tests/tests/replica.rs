//! Read replicas: `rocklake serve --read-only` on the writer's catalog serves DuckDB's
//! READ_ONLY and SNAPSHOT_VERSION attaches, follows the writer's commits within a bound, refuses
//! writes with 25006, and never fences the writer.

use rocklake_tests::{duckdb_python, result_json, Server};

const SCRIPT: &str = r#"
import sys, time, json, dlconn, psycopg
writer_attach, replica_attach, replica_dsn, writer_dsn = sys.argv[1:5]
out = {}
w = dlconn.connect(exts=("ducklake", "postgres"))
w.execute(writer_attach)
w.execute("CREATE TABLE lake.t (id BIGINT, name VARCHAR)")
w.execute("INSERT INTO lake.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
first_snapshot = w.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('lake')").fetchone()[0]

r = dlconn.connect(exts=("ducklake", "postgres"))
r.execute(replica_attach)
# The replica polls every 50 ms; give it a bounded time to see the writer's state.
deadline = time.time() + 10
while True:
    try:
        n = r.execute("SELECT count(*) FROM lake.t").fetchone()[0]
    except Exception as e:
        n = str(e)[:200]
    if n == 3 or time.time() > deadline:
        break
    time.sleep(0.05)
out["replica_initial"] = n

t0 = time.time()
w.execute("INSERT INTO lake.t VALUES (4, 'd')")
committed = time.time()
while True:
    n = r.execute("SELECT count(*) FROM lake.t").fetchone()[0]
    if n == 4 or time.time() - committed > 10:
        break
    time.sleep(0.01)
out["replica_after_insert"] = n
out["lag_ms"] = round((time.time() - committed) * 1000, 1)

try:
    r.execute("INSERT INTO lake.t VALUES (5, 'e')")
    out["duckdb_write_on_replica"] = "ok"
except Exception as e:
    out["duckdb_write_on_replica"] = "error"

with psycopg.connect(replica_dsn, autocommit=True) as c:
    try:
        c.execute("INSERT INTO ducklake_snapshot (snapshot_id) VALUES (999999)")
        out["sql_write_on_replica"] = "ok"
    except psycopg.Error as e:
        out["sql_write_on_replica"] = e.sqlstate
    out["replica_snapshot_rows"] = c.execute("SELECT count(*) FROM ducklake_snapshot").fetchone()[0]

s = dlconn.connect(exts=("ducklake", "postgres"))
s.execute(replica_attach.replace("READ_ONLY", f"SNAPSHOT_VERSION {first_snapshot}"))
out["at_first_snapshot"] = s.execute("SELECT count(*) FROM lake.t").fetchone()[0]

# The writer is still the writer.
w.execute("INSERT INTO lake.t VALUES (6, 'f')")
out["writer_after"] = w.execute("SELECT count(*) FROM lake.t").fetchone()[0]
with psycopg.connect(writer_dsn, autocommit=True) as c:
    out["writer_snapshot_rows"] = c.execute("SELECT count(*) FROM ducklake_snapshot").fetchone()[0]
print("RESULT", json.dumps(out))
"#;

#[test]
fn read_replica_follows_the_writer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    let writer = Server::start(&catalog, "rocklake", &[]).expect("writer");
    // The replica needs an existing catalog: let the writer create DuckLake's tables first.
    let (ok, _) = duckdb_python(
        "155",
        "import sys, dlconn\nc = dlconn.connect(exts=('ducklake', 'postgres'))\nc.execute(sys.argv[1])",
        &[&writer.attach],
    )
    .expect("init");
    assert!(ok, "DuckDB could not attach the writer");
    let replica = Server::start(
        &catalog,
        "rocklake",
        &["--read-only", "--replica-poll-ms", "50"],
    )
    .expect("replica");
    assert!(
        replica.attach.contains("READ_ONLY"),
        "the replica's ATTACH line says READ_ONLY: {}",
        replica.attach
    );
    let (ok, out) = duckdb_python(
        "155",
        SCRIPT,
        &[
            &writer.attach,
            &replica.attach,
            &replica.dsn(),
            &writer.dsn(),
        ],
    )
    .expect("script");
    assert!(ok, "script failed: {out}");
    let r = result_json(&out);
    assert_eq!(r["replica_initial"], 3, "{r}");
    assert_eq!(r["replica_after_insert"], 4, "{r}");
    let lag = r["lag_ms"].as_f64().unwrap_or(f64::MAX);
    println!("replica lag after a commit: {lag} ms");
    assert!(lag < 5000.0, "replica lag {lag} ms");
    assert_eq!(r["duckdb_write_on_replica"], "error", "{r}");
    assert_eq!(r["sql_write_on_replica"], "25006", "{r}");
    assert_eq!(r["at_first_snapshot"], 3, "{r}");
    assert_eq!(r["writer_after"], 5, "{r}");
    assert!(r["writer_snapshot_rows"].as_u64().unwrap_or(0) >= 4, "{r}");
    replica.stop().expect("stop replica");
    writer.stop().expect("stop writer");
}
