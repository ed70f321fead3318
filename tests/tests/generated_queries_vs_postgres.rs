//! Generated differential test: thousands of random statements of the SQL RockLake supports
//! (tests/e2e/querygen.py: NULL logic, subqueries of every kind, aggregates with ORDER BY and
//! FILTER, joins, UNION, integer overflow, writes; then numeric, date/time, interval and bytea
//! expressions: calendar arithmetic, date_trunc, extract/date_part, encodings, PostgreSQL's
//! constant folding and operator resolution; then GROUP BY ROLLUP / CUBE / GROUPING SETS
//! with GROUPING() and ordered-set aggregates), run against a real PostgreSQL 15 and
//! against RockLake from the same seed. Every statement must give the same columns, types,
//! rows, or the same SQLSTATE and message. The traces only hold the shapes DuckDB happened to
//! send; this covers the semantics behind them.

use rocklake_tests::{venv_python, Differential};

/// Seeds and statement counts: fixed, so a failure reproduces with
/// `querygen.py --seed N --count C --typed T --grouping G` against the two servers.
const RUNS: &[(u64, usize)] = &[(1, 2500), (2, 2500), (3, 2500)];
/// Statements of the typed phase (numeric, date/time, interval, bytea columns) per run.
const TYPED: usize = 800;
/// Statements of the grouping-set phase per run.
const GROUPING: usize = 300;

#[test]
fn generated_statements_match_postgres() {
    let py = venv_python("155").expect("the DuckDB 1.5 venv (psycopg)");
    let mut failures = Vec::new();
    for &(seed, count) in RUNS {
        let pair = Differential::start().expect("PostgreSQL and RockLake");
        let (seed_arg, count_arg) = (seed.to_string(), count.to_string());
        let typed_arg = TYPED.to_string();
        let grouping_arg = GROUPING.to_string();
        let (_, report) = pair
            .run_tool(
                &py,
                "querygen.py",
                &[
                    "--seed",
                    &seed_arg,
                    "--count",
                    &count_arg,
                    "--typed",
                    &typed_arg,
                    "--grouping",
                    &grouping_arg,
                ],
            )
            .expect("run querygen");
        let summary = &report["summary"];
        let n = |k: &str| summary[k].as_u64().unwrap_or(0);
        println!("seed {seed}: {summary}");
        assert!(
            n("statements") >= (count + TYPED + GROUPING) as u64,
            "seed {seed}: only {} statements ran",
            n("statements")
        );
        // Guards against a run that compares nothing: most statements must return rows, and
        // the fixed edge cases include errors.
        assert!(
            n("nonempty") * 3 >= n("statements"),
            "seed {seed}: too few statements returned rows: {summary}"
        );
        assert!(
            n("errors") >= 15,
            "seed {seed}: too few errors compared: {summary}"
        );
        if n("differences") > 0 {
            failures.push(format!(
                "seed {seed}: {} statements differ (first ones above; all in the report)",
                n("differences")
            ));
        }
        pair.rocklake.stop().expect("stop rocklake");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
