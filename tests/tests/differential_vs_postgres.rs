//! Differential replay: every recorded DuckDB exchange of ../shared/traces replayed against a
//! real PostgreSQL 15 started here and against RockLake; RowDescriptions, rows, command tags,
//! COPY data and SQLSTATEs compared (tests/e2e/replay.py). The matching fraction per run is
//! printed and recorded in COMPAT.md; the test fails if it drops below the recorded floor.

use std::process::Command;

use rocklake_tests::{repo_root, run_echo, shared_dir, Postgres, Server};

/// Floors per run: raise them as compatibility improves (COMPAT.md lists what still differs).
const FLOORS: [(&str, f64); 3] = [
    ("pg155", 0.99),
    ("pg155default", 0.99),
    ("pg155conflict", 0.99),
];

#[test]
fn replay_traces_against_postgres_and_rocklake() {
    let mut failures = Vec::new();
    for (run, floor) in FLOORS {
        let pg = Postgres::start().expect("start PostgreSQL");
        let dir = tempfile::tempdir().expect("tempdir");
        // Same user name as the reference so session_authorization matches.
        let server =
            Server::start(&dir.path().join("catalog"), "postgres", &[]).expect("start rocklake");
        let report = dir.path().join("report.json");
        let (_, out) = run_echo(
            Command::new("python3")
                .arg(repo_root().join("tests/e2e/replay.py"))
                .arg("--trace")
                .arg(shared_dir().join(format!("traces/statements-{run}.jsonl.gz")))
                .arg("--a")
                .arg(pg.dsn())
                .arg("--b")
                .arg(server.dsn())
                .arg("--report")
                .arg(&report)
                .arg("--show")
                .arg("15"),
        )
        .expect("run replay");
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("replay {run}:")))
            .unwrap_or("")
            .to_string();
        let pct: f64 = line
            .split('(')
            .nth(1)
            .and_then(|r| r.split('%').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or(0.0);
        println!("RESULT {run}: {line}");
        if pct / 100.0 < floor {
            failures.push(format!("{run}: {pct}% < floor {}%", floor * 100.0));
        }
        server.stop().expect("stop");
    }
    assert!(
        failures.is_empty(),
        "differential replay below floor: {failures:?}"
    );
}
