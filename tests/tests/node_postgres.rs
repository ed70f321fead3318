//! node-postgres (`pg`, the JavaScript client, with `pg-cursor` and `pg-copy-streams`)
//! against RockLake and PostgreSQL 15, compared step by step (tests/e2e/node/probe.js): its
//! extended-protocol queries with untyped text parameters, the values it parses from text
//! results (int8 and numeric as strings, dates, JSON, arrays, bytea), named prepared
//! statements, row arrays, multi-statement strings, every error field it exposes (SQLSTATE,
//! message, detail, hint, position, schema, table, column, constraint, context), notices, a
//! failed transaction, cursors read in parts (named portals), COPY both ways, a pool of
//! connections, 20,000 rows.

use std::collections::BTreeMap;
use std::process::Command;

use rocklake_tests::{node_clients_modules, repo_root, Differential};

/// Each step's outcome (JSON) by name, in the probe's order.
fn probe(url: &str) -> Vec<(String, serde_json::Value)> {
    let out = Command::new("node")
        .arg(repo_root().join("tests/e2e/node/probe.js"))
        .arg(url)
        .env("NODE_PATH", node_clients_modules().expect("node-postgres"))
        // Dates without a zone are read in the client's zone.
        .env("TZ", "UTC")
        .output()
        .expect("run node");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "probe.js failed: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .map(|l| serde_json::from_str::<(String, serde_json::Value)>(l).expect("a JSON step"))
        .collect()
}

#[test]
fn node_postgres_steps_match_postgres() {
    let pair = Differential::start().expect("PostgreSQL and RockLake");
    let url = |port: u16, user: &str, password: &str| {
        format!("postgresql://{user}:{password}@127.0.0.1:{port}/lake")
    };
    let expected = probe(&url(pair.postgres.port, "postgres", "postgres"));
    let got = probe(&url(
        pair.rocklake.port,
        &pair.rocklake.user,
        &pair.rocklake.password,
    ));
    let names: Vec<&String> = expected.iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        got.iter().map(|(n, _)| n).collect::<Vec<_>>(),
        "the same steps ran"
    );
    let steps: BTreeMap<&str, &serde_json::Value> =
        expected.iter().map(|(n, v)| (n.as_str(), v)).collect();
    // The steps reached what they test (the same failure on both sides would also match).
    assert_eq!(steps["select typed values"]["rowCount"], 2);
    assert_eq!(
        steps["cursor read in parts"].as_array().map(Vec::len),
        Some(3)
    );
    assert_eq!(steps["bad parameter"]["error"]["code"], "22P02");
    assert_eq!(steps["undefined column"]["error"]["position"], "8");
    assert_eq!(
        steps["COPY out"].as_str().map(|s| s.lines().count()),
        Some(3)
    );
    assert_eq!(steps["many rows"][0], 20000);
    let differences: Vec<String> = expected
        .iter()
        .zip(&got)
        .filter(|((_, want), (_, have))| want != have)
        .map(|((name, want), (_, have))| {
            format!("--- {name}\nPostgreSQL: {want}\nRockLake:   {have}")
        })
        .collect();
    assert!(
        differences.is_empty(),
        "{} of {} steps differ from PostgreSQL:\n{}",
        differences.len(),
        expected.len(),
        differences.join("\n")
    );
}
