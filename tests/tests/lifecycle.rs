//! Snapshot lifecycle with real DuckDB attached: a lake with 500 snapshots, DuckDB's own
//! expire + cleanup, then RockLake's gc apply + excise apply through the running server (while
//! DuckDB stays attached); every retained version reads identically and the catalog's stored
//! bytes shrink. A checkpoint restore with DuckDB attached. Every lifecycle CLI subcommand's
//! `--help` and one real run of each against the stopped server's catalog; `rocklake bench`
//! on fresh catalogs, and its refusal to touch an existing one.

use std::path::Path;
use std::process::Command;

use rocklake_tests::{duckdb_python, result_json, rocklake_bin, verify_catalog, Server};

const FIVE_HUNDRED: &str = r#"
import sys, json, dlconn, psycopg
attach, dsn = sys.argv[1:3]
out = {}
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute(attach)
con.execute("CREATE TABLE lake.t (id BIGINT, v BIGINT)")
for i in range(520):
    if i % 10 == 9:
        con.execute(f"UPDATE lake.t SET v = v + 1 WHERE id = {i - 5}")
    elif i % 25 == 24:
        con.execute(f"DELETE FROM lake.t WHERE id = {i - 20}")
    else:
        con.execute(f"INSERT INTO lake.t VALUES ({i}, {i})")
snaps = [r[0] for r in con.execute("SELECT snapshot_id FROM ducklake_snapshots('lake') ORDER BY 1").fetchall()]
out["snapshots"] = len(snaps)
keep = snaps[len(snaps) // 2]
def read(v):
    return list(con.execute(f"SELECT count(*), coalesce(sum(v), 0), coalesce(sum(id), 0) FROM lake.t AT (VERSION => {v})").fetchone())
retained = [s for s in snaps if s >= keep]
before = {s: read(s) for s in retained}
expired = [s for s in snaps if s < keep]
con.execute(f"CALL ducklake_expire_snapshots('lake', versions => {expired})")
con.execute("CALL ducklake_cleanup_old_files('lake', cleanup_all => true)")
with psycopg.connect(dsn, autocommit=True) as c:
    status = lambda: {k: v for k, v in c.execute("SELECT * FROM rocklake_status()").fetchall()}
    s0 = status()
    plan = c.execute(f"SELECT excisable_versions, blocked_by FROM rocklake_gc_plan({keep})").fetchone()
    out["plan_versions"], out["plan_blocked"] = plan
    try:
        c.execute(f"SELECT * FROM rocklake_excise_apply({keep})")
        out["excise_first"] = "ok"
    except psycopg.Error as e:
        out["excise_first"] = e.sqlstate
    c.execute(f"SELECT * FROM rocklake_gc_apply({keep})")
    try:
        c.execute(f"SELECT * FROM rocklake_excise_apply({keep + 1})")
        out["excise_beyond"] = "ok"
    except psycopg.Error as e:
        out["excise_beyond"] = e.sqlstate
    total, batches = 0, 0
    while True:
        n, done = c.execute(f"SELECT versions, done FROM rocklake_excise_apply({keep}, 2000)").fetchone()
        total += n
        batches += 1
        if done:
            break
    s1 = status()
out["excised"], out["batches"] = total, batches
out["stored_bytes_before"], out["stored_bytes_after"] = int(s0["stored_bytes"]), int(s1["stored_bytes"])
out["stored_keys_before"], out["stored_keys_after"] = int(s0["stored_keys"]), int(s1["stored_keys"])
after = {s: read(s) for s in retained}
out["retained"] = len(retained)
out["identical"] = sum(1 for s in retained if before[s] == after[s])
out["diffs"] = [[s, before[s], after[s]] for s in retained if before[s] != after[s]][:5]
try:
    con.execute(f"SELECT count(*) FROM lake.t AT (VERSION => {expired[0]})").fetchone()
    out["expired_read"] = "ok"
except Exception as e:
    out["expired_read"] = "error"
con.execute("INSERT INTO lake.t VALUES (100000, 1)")
out["after_insert"] = con.execute("SELECT count(*) FROM lake.t").fetchone()[0]
out["latest_before_insert"] = before[retained[-1]][0]
out["final_rows"] = list(con.execute("SELECT count(*), sum(v) FROM lake.t").fetchone())
out["keep"], out["keep_read"] = keep, read(keep)
print("RESULT", json.dumps(out))
"#;

const RESTORE: &str = r#"
import sys, json, dlconn, psycopg
attach, dsn = sys.argv[1:3]
out = {}
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute(attach)
con.execute("CREATE TABLE lake.t (id BIGINT)")
con.execute("INSERT INTO lake.t VALUES (1), (2)")
pg = psycopg.connect(dsn, autocommit=True)
cp, cp_snap = pg.execute("SELECT checkpoint_id, snapshot_id FROM rocklake_checkpoint_create('e2e')").fetchone()
con.execute("INSERT INTO lake.t VALUES (3)")
con.execute("CREATE TABLE lake.u (x INTEGER)")
con.execute("INSERT INTO lake.u VALUES (7)")
con.execute("ALTER TABLE lake.t ADD COLUMN note VARCHAR")
con.execute("DELETE FROM lake.t WHERE id = 1")
pre = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('lake')").fetchone()[0]
out["pre_rows"] = [r[0] for r in con.execute("SELECT id FROM lake.t ORDER BY id").fetchall()]
hide = pg.execute(f"SELECT hide_snapshot FROM rocklake_checkpoint_restore({cp})").fetchone()[0]
out["hide_is_next"] = hide == pre + 1
out["rows"] = [r[0] for r in con.execute("SELECT id FROM lake.t ORDER BY id").fetchall()]
out["tables"] = sorted(r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'").fetchall())
out["columns"] = [r[0] for r in con.execute("DESCRIBE lake.t").fetchall()]
con.execute("INSERT INTO lake.t VALUES (10)")
out["new_snapshot_is_fresh"] = con.execute("SELECT max(snapshot_id) FROM ducklake_snapshots('lake')").fetchone()[0] == hide + 1
out["rows_after_insert"] = [r[0] for r in con.execute("SELECT id FROM lake.t ORDER BY id").fetchall()]
out["time_travel_pre"] = [r[0] for r in con.execute(f"SELECT id FROM lake.t AT (VERSION => {pre}) ORDER BY id").fetchall()]
out["time_travel_cp"] = [r[0] for r in con.execute(f"SELECT id FROM lake.t AT (VERSION => {cp_snap}) ORDER BY id").fetchall()]
print("RESULT", json.dumps(out))
"#;

fn dir_size(p: &Path) -> u64 {
    let mut total = 0;
    if let Ok(entries) = std::fs::read_dir(p) {
        for e in entries.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => total += dir_size(&e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

#[test]
fn lake_with_500_snapshots_survives_gc_and_excision() {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    let server = Server::start(&catalog, "rocklake", &[]).expect("server");
    let (ok, out) =
        duckdb_python("155", FIVE_HUNDRED, &[&server.attach, &server.dsn()]).expect("script");
    assert!(ok, "script failed: {out}");
    let r = result_json(&out);
    let disk_before_gc = dir_size(&catalog);
    assert!(r["snapshots"].as_u64().unwrap_or(0) >= 500, "{r}");
    assert_eq!(
        r["excise_first"], "55000",
        "excise before gc must fail: {r}"
    );
    assert_eq!(
        r["excise_beyond"], "55000",
        "excise beyond the floor must fail: {r}"
    );
    assert!(r["plan_blocked"].is_null(), "{r}");
    let excised = r["excised"].as_u64().unwrap_or(0);
    assert!(
        excised > 500,
        "500 snapshots leave many superseded versions: {r}"
    );
    assert_eq!(
        r["plan_versions"], r["excised"],
        "the plan counted what apply deleted: {r}"
    );
    assert!(r["batches"].as_u64().unwrap_or(0) >= 1, "{r}");
    assert_eq!(
        r["identical"], r["retained"],
        "every retained version reads identically: {r}"
    );
    assert!(r["retained"].as_u64().unwrap_or(0) >= 250, "{r}");
    assert_eq!(
        r["expired_read"], "error",
        "expired snapshots are gone: {r}"
    );
    assert_eq!(
        r["after_insert"].as_u64(),
        r["latest_before_insert"].as_u64().map(|n| n + 1),
        "DuckDB keeps committing: {r}"
    );
    let (kb, ka) = (
        r["stored_bytes_before"].as_u64().unwrap_or(0),
        r["stored_bytes_after"].as_u64().unwrap_or(u64::MAX),
    );
    println!(
        "lifecycle: {} snapshots, floor at the middle; excised {excised} versions in {} batch(es); \
         catalog keys {} -> {}, stored bytes {kb} -> {ka}; catalog directory {} bytes before gc",
        r["snapshots"],
        r["batches"],
        r["stored_keys_before"],
        r["stored_keys_after"],
        disk_before_gc
    );
    assert!(ka < kb, "stored bytes shrink: {kb} -> {ka}");
    server.stop().expect("stop");
    let disk_after_stop = dir_size(&catalog);
    // The space comes back now: one full compaction and a garbage collection.
    let reclaimed = cli_json(&[
        "reclaim",
        "--catalog",
        &catalog.display().to_string(),
        "--json",
    ]);
    let disk_after_reclaim = dir_size(&catalog);
    println!(
        "lifecycle: catalog directory {disk_before_gc} bytes before gc, {disk_after_stop} after \
         excision and a clean stop (deletions are written first), {disk_after_reclaim} after \
         `rocklake reclaim` ({reclaimed})"
    );
    assert_eq!(
        reclaimed["bytes_after"].as_u64(),
        Some(disk_after_reclaim),
        "reclaim reports what is on disk"
    );
    assert!(
        disk_after_reclaim < disk_before_gc,
        "the store shrinks below its size before gc: {disk_before_gc} -> {disk_after_reclaim}"
    );
    let (code, report) = verify_catalog(&catalog.display().to_string(), &[]).expect("verify");
    assert_eq!(code, 0, "verify after excision and reclaim: {report}");
    // DuckDB still reads the retained history after the reclaim.
    let server = Server::start(&catalog, "rocklake", &[]).expect("restart");
    let keep = r["keep"].to_string();
    let (ok, out) = duckdb_python("155", REREAD, &[&server.attach, &keep]).expect("reread");
    assert!(ok, "reread failed: {out}");
    let again = result_json(&out);
    assert_eq!(again["rows"], r["final_rows"], "{again} vs {r}");
    assert_eq!(again["keep"], r["keep_read"], "{again} vs {r}");
    server.stop().expect("stop");
}

/// Re-attaches and reads the table at the latest snapshot.
const REREAD: &str = r#"
import sys, json, dlconn
con = dlconn.connect(exts=("ducklake", "postgres"))
con.execute(sys.argv[1])
keep = int(sys.argv[2])
rows = list(con.execute("SELECT count(*), sum(v) FROM lake.t").fetchone())
at_keep = list(con.execute(f"SELECT count(*), coalesce(sum(v), 0), coalesce(sum(id), 0) FROM lake.t AT (VERSION => {keep})").fetchone())
print("RESULT", json.dumps({"rows": rows, "keep": at_keep}))
"#;

#[test]
fn checkpoint_restore_with_duckdb_attached() {
    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    let server = Server::start(&catalog, "rocklake", &[]).expect("server");
    let (ok, out) =
        duckdb_python("155", RESTORE, &[&server.attach, &server.dsn()]).expect("script");
    assert!(ok, "script failed: {out}");
    let r = result_json(&out);
    assert_eq!(r["pre_rows"], serde_json::json!([2, 3]), "{r}");
    assert_eq!(r["hide_is_next"], true, "{r}");
    assert_eq!(
        r["rows"],
        serde_json::json!([1, 2]),
        "DuckDB sees the checkpoint: {r}"
    );
    assert_eq!(r["tables"], serde_json::json!(["t"]), "{r}");
    assert_eq!(r["columns"], serde_json::json!(["id"]), "{r}");
    assert_eq!(r["new_snapshot_is_fresh"], true, "{r}");
    assert_eq!(r["rows_after_insert"], serde_json::json!([1, 2, 10]), "{r}");
    assert_eq!(r["time_travel_pre"], serde_json::json!([2, 3]), "{r}");
    assert_eq!(r["time_travel_cp"], serde_json::json!([1, 2]), "{r}");
    server.stop().expect("stop");
    let (code, report) = verify_catalog(&catalog.display().to_string(), &[]).expect("verify");
    assert_eq!(code, 0, "verify after restore: {report}");
}

fn cli(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(rocklake_bin().expect("binary"))
        .args(args)
        .env(
            "ROCKLAKE_CORE",
            std::env::var("ROCKLAKE_CORE").unwrap_or_else(|_| "native".into()),
        )
        .output()
        .expect("run rocklake");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn cli_json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = cli(args);
    assert_eq!(code, 0, "rocklake {args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("rocklake {args:?}: {e}: {out}"))
}

#[test]
fn lifecycle_cli_subcommands() {
    for sub in [
        vec!["gc", "--help"],
        vec!["gc", "plan", "--help"],
        vec!["gc", "apply", "--help"],
        vec!["excise", "--help"],
        vec!["excise", "plan", "--help"],
        vec!["excise", "apply", "--help"],
        vec!["checkpoint", "--help"],
        vec!["checkpoint", "create", "--help"],
        vec!["checkpoint", "list", "--help"],
        vec!["checkpoint", "drop", "--help"],
        vec!["checkpoint", "restore", "--help"],
        vec!["restore", "--help"],
        vec!["lease", "--help"],
        vec!["lease", "create", "--help"],
        vec!["lease", "renew", "--help"],
        vec!["lease", "release", "--help"],
        vec!["lease", "list", "--help"],
        vec!["status", "--help"],
        vec!["repair", "--help"],
        vec!["replay", "--help"],
        vec!["bench", "--help"],
        vec!["bench", "commit", "--help"],
        vec!["bench", "scan", "--help"],
    ] {
        let (code, out, err) = cli(&sub);
        assert_eq!(code, 0, "{sub:?}: {err}");
        assert!(out.contains("Usage"), "{sub:?}: {out}");
    }
    for sub in [
        "gc",
        "excise",
        "checkpoint",
        "restore",
        "lease",
        "status",
        "repair",
        "replay",
        "bench",
    ] {
        let (_, out, _) = cli(&[sub, "--help"]);
        assert!(
            out.contains("Example"),
            "{sub} --help shows examples: {out}"
        );
    }

    let dir = tempfile::tempdir().expect("tempdir");
    let catalog = dir.path().join("catalog");
    // A missing catalog is not created by an admin command.
    let missing = dir.path().join("nothing").display().to_string();
    let (code, _, err) = cli(&["status", "--catalog", &missing]);
    assert_eq!(code, 3, "{err}");
    assert!(!dir.path().join("nothing").exists());

    let server = Server::start(&catalog, "rocklake", &[]).expect("server");
    let (ok, out) = duckdb_python(
        "155",
        "import sys, dlconn\nc = dlconn.connect(exts=('ducklake', 'postgres'))\nc.execute(sys.argv[1])\n\
         c.execute('CREATE TABLE lake.t (id BIGINT)')\n\
         for i in range(6):\n    c.execute(f'INSERT INTO lake.t VALUES ({i})')\n",
        &[&server.attach],
    )
    .expect("script");
    assert!(ok, "{out}");
    server.stop().expect("stop");
    let cat = catalog.display().to_string();
    let c = |args: &[&str]| {
        let mut v = args.to_vec();
        v.extend(["--catalog", &cat, "--json"]);
        cli_json(&v)
    };
    let status = c(&["status"]);
    let latest: u64 = status
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == "latest_snapshot"))
        .and_then(|r| r["value"].as_str())
        .and_then(|v| v.parse().ok())
        .expect("latest snapshot");
    assert!(latest >= 7, "{status}");
    let cp = c(&["checkpoint", "create", "--name", "cli"]);
    assert_eq!(cp[0]["text"], "cli", "{cp}");
    assert_eq!(c(&["checkpoint", "list"]).as_array().map(Vec::len), Some(1));
    let lease = c(&[
        "lease",
        "create",
        "--snapshot",
        &latest.to_string(),
        "--ttl-secs",
        "60",
    ]);
    let lease_id = lease[0]["lease_id"].to_string();
    assert_eq!(c(&["lease", "list"])[0]["live"], true);
    c(&["lease", "renew", &lease_id, "--ttl-secs", "120"]);
    c(&["lease", "release", &lease_id]);
    let floor = (latest - 2).to_string();
    let plan = c(&["gc", "plan", "--retain-from", &floor]);
    assert!(
        plan[0]["excisable_versions"].as_u64().unwrap_or(0) > 0,
        "{plan}"
    );
    // The checkpoint (at the latest snapshot) does not block a lower floor.
    c(&["gc", "apply", "--retain-from", &floor]);
    // A refusal exits 1 with the reason: excision beyond the floor.
    let (code, _, err) = cli(&[
        "excise",
        "apply",
        "--before",
        &latest.to_string(),
        "--catalog",
        &cat,
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("ExcisionUnsafe"), "{err}");
    let eplan = c(&["excise", "plan", "--before", &floor]);
    let applied = c(&["excise", "apply", "--before", &floor, "--batch", "5"]);
    assert_eq!(
        applied[0]["versions"], eplan[0]["versions"],
        "{applied} vs {eplan}"
    );
    assert!(
        applied[0]["batches"].as_u64().unwrap_or(0) >= 2,
        "{applied}"
    );
    let cp_id = cp[0]["checkpoint_id"].to_string();
    let restored = c(&["restore", &cp_id]);
    assert_eq!(
        restored[0]["hide_snapshot"].as_u64(),
        Some(latest + 1),
        "{restored}"
    );
    let cp_restore = c(&["checkpoint", "restore", &cp_id]);
    assert_eq!(
        cp_restore[0]["hide_snapshot"].as_u64(),
        Some(latest + 2),
        "{cp_restore}"
    );
    c(&["checkpoint", "drop", &cp_id]);
    // Repair on a healthy catalog: nothing to fix, verify clean, exit 0.
    assert_eq!(c(&["repair"]).as_array().map(Vec::len), Some(0));
    assert_eq!(c(&["repair", "--apply"]).as_array().map(Vec::len), Some(0));
    let (code, report) = verify_catalog(&cat, &[]).expect("verify");
    assert_eq!(code, 0, "{report}");
    // Human output is a table.
    let (code, out, _) = cli(&["status", "--catalog", &cat]);
    assert_eq!(code, 0);
    assert!(
        out.contains("retain_from") && out.contains("rows)"),
        "{out}"
    );
}

/// Files (not directories) under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(
                    p.strip_prefix(dir)
                        .expect("under dir")
                        .display()
                        .to_string(),
                );
            }
        }
    }
    out.sort();
    out
}

#[test]
fn bench_cli_measures_fresh_catalogs_and_refuses_existing_ones() {
    // Default location: a temporary directory, removed afterwards.
    let r = cli_json(&[
        "bench",
        "commit",
        "--sessions",
        "2",
        "--commits-per-session",
        "5",
        "--json",
    ]);
    assert_eq!(r["commits"], 10, "{r}");
    assert_eq!(r["temporary"], true, "{r}");
    let f = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("{k} in {r}"));
    assert!(f("commits_per_s") > 0.0, "{r}");
    assert!(f("p50_ms") > 0.0 && f("p50_ms") <= f("p99_ms"), "{r}");
    assert!(f("put_p50_ms") > 0.0 && f("p50_over_put") > 0.0, "{r}");
    assert_eq!(
        r["commit_journal"], true,
        "a local directory commits through the journal: {r}"
    );
    let temp = r["catalog"].as_str().expect("catalog");
    assert!(!Path::new(temp).exists(), "{temp} should be removed");

    // A given location, kept: a valid DuckLake catalog that verify accepts.
    let dir = tempfile::tempdir().expect("tempdir");
    let kept = dir.path().join("kept");
    let kept_s = kept.display().to_string();
    let r = cli_json(&[
        "bench",
        "commit",
        "--catalog",
        &kept_s,
        "--sessions",
        "2",
        "--commits-per-session",
        "5",
        "--keep",
        "--commit-journal",
        "false",
        "--json",
    ]);
    assert_eq!(r["kept"], true, "{r}");
    assert_eq!(r["commit_journal"], false, "{r}");
    // Without the journal every commit group is a WAL upload (concurrent ones share it).
    let puts = r["store_puts_per_commit"].as_f64().unwrap_or(0.0);
    assert!(puts >= 0.5, "{r}");
    let (code, report) = verify_catalog(&kept_s, &[]).expect("verify");
    assert_eq!(
        code, 0,
        "the benchmark's catalog is valid DuckLake: {report}"
    );

    // An existing catalog is refused before anything is written: exit 1, the reason on stderr.
    let before = files_under(&kept);
    for sub in ["commit", "scan"] {
        let (code, out, err) = cli(&["bench", sub, "--catalog", &kept_s, "--json"]);
        assert_eq!(code, 1, "bench {sub} on a catalog: {out} {err}");
        assert!(err.contains("already holds a catalog"), "{err}");
        assert!(out.is_empty(), "{out}");
    }
    assert_eq!(files_under(&kept), before, "the refused runs wrote nothing");
    // So is any other non-empty location.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).expect("mkdir");
    std::fs::write(other.join("data.parquet"), b"x").expect("write");
    let (code, _, err) = cli(&["bench", "commit", "--catalog", &other.display().to_string()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not empty"), "{err}");

    // A given location, not kept: everything the run wrote is deleted.
    let fresh = dir.path().join("fresh");
    let r = cli_json(&[
        "bench",
        "scan",
        "--catalog",
        &fresh.display().to_string(),
        "--rows",
        "300",
        "--json",
    ]);
    assert_eq!(r["rows"], 300, "{r}");
    assert!(r["count_rows_per_s"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
    assert!(r["reopen_ms"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
    assert_eq!(files_under(&fresh), Vec::<String>::new());

    // Human output.
    let (code, out, err) = cli(&[
        "bench",
        "commit",
        "--sessions",
        "1",
        "--commits-per-session",
        "3",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("commits/s") && out.contains("PUT"), "{out}");
}
