//! JDBC (pgjdbc, the driver of DBeaver, DataGrip, Metabase and Spark) against RockLake and
//! PostgreSQL 15, compared step by step (tests/e2e/jdbc/JdbcProbe.java): the
//! `DatabaseMetaData` calls a SQL tool makes when it opens a database (schemas, tables,
//! columns, keys, privileges), a batch of prepared inserts, prepared selects past pgjdbc's
//! server-prepare threshold, result-set metadata, a rolled-back transaction, an error; then
//! the catalog queries DBeaver sends when it connects and browses (its texts, bound as it binds
//! them), each row's chosen columns compared (OIDs and sizes, which differ between any two
//! servers, left out; catalogs PostgreSQL fills with its built-in objects by their columns only).
//!
//! `getTypeInfo` lists every type of `pg_type`, and PostgreSQL has many RockLake does not
//! (geometry, ranges, full-text search…), in an order its query leaves unspecified: its rows
//! are compared for the types RockLake has, as a set, and must cover all of them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use rocklake_tests::{repo_root, Differential};

/// pgjdbc as Debian packages it (scripts/setup.sh installs it and a JDK).
const DRIVER: &str = "/usr/share/java/postgresql.jar";

/// The step listing types (see above).
const TYPE_INFO: &str = "typeInfo";

/// The header of a `typeInfo` step and its rows as (type name, line), sorted: the rows are
/// compared as a multiset (a name listed twice, in two schemas, counts twice).
fn type_rows(step: &str) -> (String, Vec<(String, String)>) {
    let mut lines = step.lines().skip(1);
    let header = lines.next().unwrap_or_default().to_string();
    let mut rows: Vec<(String, String)> = lines
        .map(|l| {
            let name = l.trim_start_matches('[').split(',').next().unwrap_or("");
            (name.to_string(), l.to_string())
        })
        .collect();
    rows.sort();
    (header, rows)
}

fn probe(classes: &Path, port: u16, user: &str, password: &str) -> BTreeMap<String, String> {
    let out = Command::new("java")
        .arg("-cp")
        .arg(format!("{DRIVER}:{}", classes.display()))
        .arg("JdbcProbe")
        .arg(format!("jdbc:postgresql://127.0.0.1:{port}/lake"))
        .arg(user)
        .arg(password)
        .output()
        .expect("run java");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "JdbcProbe failed: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut steps = BTreeMap::new();
    let mut name = String::new();
    for line in text.lines() {
        if let Some(head) = line.strip_prefix("== ") {
            name = head.split(' ').next().unwrap_or("").to_string();
        }
        steps
            .entry(name.clone())
            .or_insert_with(String::new)
            .push_str(&format!("{line}\n"));
    }
    steps
}

#[test]
fn jdbc_metadata_and_statements_match_postgres() {
    let pair = Differential::start().expect("PostgreSQL and RockLake");
    let classes = pair.dir.path().join("classes");
    std::fs::create_dir_all(&classes).expect("classes dir");
    let javac = Command::new("javac")
        .arg("-cp")
        .arg(DRIVER)
        .arg("-d")
        .arg(&classes)
        .arg(repo_root().join("tests/e2e/jdbc/JdbcProbe.java"))
        .output()
        .expect("run javac");
    assert!(
        javac.status.success(),
        "javac: {}",
        String::from_utf8_lossy(&javac.stderr)
    );
    let pg = probe(&classes, pair.postgres.port, "postgres", "postgres");
    let rl = probe(
        &classes,
        pair.rocklake.port,
        &pair.rocklake.user,
        &pair.rocklake.password,
    );
    // Guards against a run that compares nothing: every step ran on PostgreSQL without error.
    assert!(pg.len() >= 70, "too few steps: {pg:?}");
    // A column the probe asks for that PostgreSQL does not have is a typo in the probe.
    assert!(
        !pg.values().any(|b| b.contains("?missing")),
        "the probe names a column PostgreSQL does not have: {pg:?}"
    );
    let dbeaver = pg.keys().filter(|k| k.starts_with("dbeaver.")).count();
    assert_eq!(dbeaver, 46, "DBeaver's queries: {pg:?}");
    assert!(
        !pg.values()
            .any(|b| b.contains(" ERROR ") && !b.starts_with("== error")),
        "PostgreSQL failed a step: {pg:?}"
    );
    let mut differences = Vec::new();
    for (step, expected) in &pg {
        let got = rl.get(step).cloned().unwrap_or_default();
        if step == TYPE_INFO {
            let (pg_header, pg_types) = type_rows(expected);
            let (rl_header, rl_types) = type_rows(&got);
            // RockLake's pg_type: every base type it has, their arrays, record, unknown, void.
            assert!(rl_types.len() >= 60, "too few types: {got}");
            if pg_header != rl_header {
                differences.push(format!("{step}: {pg_header} vs {rl_header}"));
            }
            let names: BTreeSet<&String> = rl_types.iter().map(|(n, _)| n).collect();
            let pg_rows: Vec<&(String, String)> =
                pg_types.iter().filter(|(n, _)| names.contains(n)).collect();
            let rl_rows: Vec<&(String, String)> = rl_types.iter().collect();
            if pg_rows != rl_rows {
                differences.push(format!(
                    "{step}:\nPostgreSQL:\n{pg_rows:#?}\nRockLake:\n{rl_rows:#?}"
                ));
            }
        } else if &got != expected {
            differences.push(format!("{step}:\nPostgreSQL:\n{expected}RockLake:\n{got}"));
        }
    }
    assert!(
        differences.is_empty(),
        "JDBC steps differ:\n{}",
        differences.join("\n")
    );
}
