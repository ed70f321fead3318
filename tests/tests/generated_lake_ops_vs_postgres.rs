//! Generated differential test at DuckLake's level: random sequences of DuckLake operations
//! (tests/e2e/lakegen.py: tables of a dozen column types, nested ones too, filled inline and as
//! Parquet files; UPDATE / DELETE whose file pruning the catalog's stats decide; every kind of
//! ALTER TABLE; views; transactions that commit or roll back; partitioning; time travel;
//! change feeds; flushes, compaction, snapshot expiry, file cleanup; detach / re-attach) run by
//! real DuckDB on a lake whose catalog is PostgreSQL 15 and on one whose catalog is RockLake.
//! Every operation must give the same rows or the same error, and every table's contents, the
//! snapshot list and every DuckLake catalog table must match at each probe. The workload test
//! runs each feature once on fixed tables; this covers them in combination.

use rocklake_tests::{venv_python, Differential};

/// Seeds and operation counts: fixed, so a failure reproduces with
/// `lakegen.py --seed N --ops C --trace` against the two servers. The seeds cover both data
/// inlining settings the generator draws (0 and 10 rows).
const RUNS: &[(u64, usize)] = &[(2, 300), (5, 300), (8, 300)];

#[test]
fn generated_lake_operations_match_postgres() {
    let py = venv_python("155").expect("the DuckDB 1.5 venv");
    let mut failures = Vec::new();
    let mut inline_settings = std::collections::BTreeSet::new();
    for &(seed, ops) in RUNS {
        let pair = Differential::start().expect("PostgreSQL and RockLake");
        let data = pair.dir.path().join("lakes");
        let data_arg = data.to_string_lossy().to_string();
        let (seed_arg, ops_arg) = (seed.to_string(), ops.to_string());
        let (_, report) = pair
            .run_tool(
                &py,
                "lakegen.py",
                &["--seed", &seed_arg, "--ops", &ops_arg, "--data", &data_arg],
            )
            .expect("run lakegen");
        let summary = &report["summary"];
        let n = |k: &str| summary[k].as_u64().unwrap_or(0);
        println!("seed {seed}: {summary}");
        inline_settings.insert(n("inline"));
        assert_eq!(n("ops"), ops as u64, "seed {seed}: not every operation ran");
        // Guards against a run that compares nothing: most statements succeed and return rows,
        // the probes read DuckLake's catalog tables, and DuckDB itself stayed usable.
        assert!(
            n("errors") * 5 <= n("statements"),
            "seed {seed}: too many statements failed alike on both lakes: {summary}"
        );
        assert!(
            n("rows") >= 300,
            "seed {seed}: too few rows compared: {summary}"
        );
        assert!(
            n("catalog_tables_compared") >= 25,
            "seed {seed}: the probes read too few catalog tables: {summary}"
        );
        assert!(
            n("internal_errors") <= 2,
            "seed {seed}: DuckDB failed internally too often: {summary}"
        );
        if n("differences") > 0 {
            failures.push(format!(
                "seed {seed}: {} outcomes differ (first ones above; all in the report)",
                n("differences")
            ));
        }
        pair.rocklake.stop().expect("stop rocklake");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        inline_settings.len(),
        2,
        "the seeds should cover inlined and non-inlined lakes"
    );
}
