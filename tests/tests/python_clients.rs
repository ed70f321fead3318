//! Python's other PostgreSQL clients against RockLake, compared with PostgreSQL step by step
//! (tests/e2e/pyclients.py): asyncpg, which speaks the binary protocol throughout, sends
//! `client_encoding='utf-8'`, introspects array types with its own recursive catalog query and
//! ends Parse/Describe with Flush rather than Sync; SQLAlchemy's PostgreSQL dialect (its
//! reflection queries, Core, ORM and DDL from metadata); pandas' read_sql and to_sql. These are
//! how people read a DuckLake catalog from Python outside DuckDB.

use rocklake_tests::{venv_python, Differential};

#[test]
fn python_clients_match_postgres() {
    let py = venv_python("clients").expect("the Python clients venv");
    let pair = Differential::start().expect("PostgreSQL and RockLake");
    let (_, report) = pair
        .run_tool(&py, "pyclients.py", &[])
        .expect("run pyclients.py");
    let summary = &report["summary"];
    let n = |k: &str| summary[k].as_u64().unwrap_or(u64::MAX);
    // Guards against a run that compares nothing: every step ran on both servers, and only
    // the steps written to fail failed on PostgreSQL.
    assert!(n("steps") >= 29, "too few steps ran: {summary}");
    assert_eq!(
        n("errors_on_postgres"),
        4,
        "unexpected failures on PostgreSQL: {report}"
    );
    assert_eq!(
        n("differences"),
        0,
        "RockLake answered the clients differently (first differences above): {}",
        report["differences"]
    );
}
