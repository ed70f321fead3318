//! Record and replay with real DuckDB: `rocklake serve --record DIR` records a DuckDB 1.5.5
//! session (ATTACH, DDL, inserts, updates, deletes, time travel, a second connection), and
//! `rocklake replay` re-runs it on the native core and on the WebAssembly component with no
//! store, network or clock: every result must be byte-identical.

use std::process::Command;

use rocklake_tests::{duckdb_python, result_json, rocklake_bin, Server};

const SESSION: &str = r#"
import sys, json, dlconn
attach = sys.argv[1]
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute(attach)
con.execute("CREATE TABLE lake.t (id BIGINT, name VARCHAR)")
con.execute("INSERT INTO lake.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
con.execute("UPDATE lake.t SET name = 'bb' WHERE id = 2")
con.execute("DELETE FROM lake.t WHERE id = 1")
con.execute("ALTER TABLE lake.t ADD COLUMN score INTEGER")
con.execute("INSERT INTO lake.t VALUES (4, 'd', 40)")
first = con.execute("SELECT min(snapshot_id) FROM ducklake_snapshots('lake')").fetchone()[0]
rows = con.execute("SELECT id, name FROM lake.t ORDER BY id").fetchall()
old = con.execute(f"SELECT count(*) FROM lake.t AT (VERSION => {first + 2})").fetchone()[0]
other = dlconn.connect(exts=("ducklake", "postgres"))
other.execute(attach)
n = other.execute("SELECT count(*) FROM lake.t").fetchone()[0]
print("RESULT", json.dumps({"rows": rows, "old": old, "other": n}))
"#;

fn replay(trace: &str, core: &str) -> serde_json::Value {
    let out = Command::new(rocklake_bin().expect("binary"))
        .args(["replay", trace, "--core", core, "--json"])
        .output()
        .expect("run replay");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "replay on {core} failed ({:?}): {stdout}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn duckdb_session_replays_exactly_on_both_builds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    let traces = dir.path().join("traces");
    let record = traces.display().to_string();
    let server = Server::start(&catalog, "rocklake", &["--record", &record]).expect("server");
    let (ok, out) = duckdb_python("155", SESSION, &[&server.attach]).expect("script");
    assert!(ok, "script failed: {out}");
    let r = result_json(&out);
    assert_eq!(
        r["rows"],
        serde_json::json!([[2, "bb"], [3, "c"], [4, "d"]]),
        "{r}"
    );
    assert_eq!(r["other"], 3, "{r}");
    server.stop().expect("stop");
    let files: Vec<_> = std::fs::read_dir(&traces)
        .expect("trace dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let trace = files[0].display().to_string();
    let size = std::fs::metadata(&files[0]).map(|m| m.len()).unwrap_or(0);
    // Replay needs nothing but the trace.
    std::fs::remove_dir_all(&catalog).expect("remove catalog");
    let native = replay(&trace, "native");
    assert_eq!(native["identical"], true, "{native}");
    let queries = native["queries"].as_u64().unwrap_or(0);
    assert!(
        queries > 50,
        "a DuckDB session sends many statements: {native}"
    );
    let wasm = replay(&trace, "wasm");
    assert_eq!(wasm["identical"], true, "{wasm}");
    assert_eq!(wasm["events"], native["events"]);
    println!(
        "replay: {} events ({queries} queries), trace {size} bytes; identical on native and wasm",
        native["events"]
    );
}
