//! The rules `tests/e2e/run_workload.py` compares a workload run with PostgreSQL's by, where a
//! step's outcome depends on the run's speed: here, when a failed `time_travel_timestamp`
//! (`AT (TIMESTAMP => now() - INTERVAL 1 SECOND)`) counts as a run too fast for its cut-off.

use std::process::Command;

use rocklake_tests::repo_root;

const CHECKS: &str = r#"
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("run_workload", sys.argv[1])
rw = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rw)
young = rw._too_young_for_time_travel
no_table = "Catalog Error: Table with name events does not exist at timestamp 2026-12-06 16:54:03+00!"
no_snapshot = "Catalog Error: No snapshot found at timestamp 2026-12-06 16:54:03+00"
def run(error, *seconds):
    steps = [{"name": n, "seconds": s} for n, s in seconds]
    steps.append({"name": "time_travel_timestamp", "ok": False, "error": error})
    return young({"steps": steps}, steps[-1])
print("RESULT", json.dumps([
    run(no_table, ("a", 5.0), ("create_table_events", 0.3), ("b", 0.4)),
    run(no_table, ("a", 5.0), ("create_table_events", 0.3), ("b", 0.6), ("c", 0.5)),
    run(no_table, ("a", 0.2)),
    run(no_snapshot, ("a", 0.3), ("b", 0.5)),
    run(no_snapshot, ("a", 0.3), ("b", 0.8)),
    run("Catalog Error: something else", ("create_table_events", 0.1)),
    young({"steps": [{"name": "time_travel_timestamp", "ok": True}]},
          {"name": "time_travel_timestamp", "ok": True}),
]))
"#;

#[test]
fn a_time_travel_error_counts_as_too_fast_only_when_the_steps_were() {
    let out = Command::new("python3")
        .arg("-c")
        .arg(CHECKS)
        .arg(repo_root().join("tests/e2e/run_workload.py"))
        .output()
        .expect("python3");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("no RESULT: {text}"));
    // Too young: the table's steps since its creation (0.4 s), the lake's steps (0.8 s).
    // Not: 1.1 s since the table's creation, no creation step at all, 1.1 s of the lake's,
    // another error, a step that succeeded.
    assert_eq!(line, "[true, false, false, true, false, false, false]");
}
