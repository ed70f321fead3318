//! `VACUUM` and `ANALYZE` compared with PostgreSQL 15: both of PostgreSQL's spellings, their
//! options by name (an unknown one is 42601 at its place), the tables and columns they name
//! (42P01, 42703, 42701), `VACUUM` refused inside a transaction block (25001), `ANALYZE`
//! accepted in one, catalog tables as targets. RockLake has nothing for them to do (no planner
//! statistics; old row versions go with compaction), so each is checked and succeeds or fails
//! as in PostgreSQL. `VERBOSE` is left out: PostgreSQL's INFO lines report its pages.

use rocklake_tests::{same_outcomes_as_postgres, PSYCOPG_HARNESS};

const SCRIPT: &str = r#"
run("CREATE TABLE src (a int PRIMARY KEY, b text)")
for sql in [
    "VACUUM", "VACUUM src", "VACUUM FULL src", "VACUUM FREEZE src", "VACUUM ANALYZE src",
    "vacuum full freeze analyse src", "VACUUM nosuch", "VACUUM public.nosuch", "VACUUM src, nosuch",
    "ANALYZE", "ANALYSE", "ANALYZE src", "ANALYZE src (a, b)", "ANALYZE src (zz)", "ANALYZE src (a, a)",
    "ANALYZE nosuch", "ANALYZE public.src, src", "ANALYZE pg_class", "ANALYZE pg_catalog.pg_class (relname)",
    "VACUUM pg_class", "ANALYZE (SKIP_LOCKED) src", "ANALYZE (SKIP_LOCKED true, VERBOSE off) src",
    "VACUUM (FREEZE, DISABLE_PAGE_SKIPPING) src", "VACUUM (BOGUS) src", "ANALYZE (FULL) src",
    "VACUUM src (a)", "VACUUM (ANALYZE) src (a)", "VACUUM (ANALYZE false) src (a)",
    "VACUUM (INDEX_CLEANUP auto, PARALLEL 2, TRUNCATE off, PROCESS_TOAST) src, pg_catalog.pg_class",
    "VACUUM (FULL maybe) src", "VACUUM (ANALYZE) src (nope)", "VACUUM src (", "ANALYZE src a",
]:
    run(sql)
run("BEGIN")
run("VACUUM src")
run("ROLLBACK")
# The other command PostgreSQL keeps out of transaction blocks with the same SQLSTATE.
run("BEGIN")
run("DISCARD ALL")
run("ROLLBACK")
run("BEGIN")
run("ANALYZE src")
run("COMMIT")
run("BEGIN READ ONLY")
run("ANALYZE src")
run("ROLLBACK")
print("RESULT", json.dumps(out))
"#;

#[test]
fn vacuum_and_analyze_match_postgres() {
    let got = same_outcomes_as_postgres(&format!("{PSYCOPG_HARNESS}{SCRIPT}"));
    let text = serde_json::to_string(&got).expect("json");
    // Both kinds of outcome were compared.
    assert!(text.contains("\"VACUUM\""), "{text}");
    assert!(text.contains("\"ANALYZE\""), "{text}");
    assert!(text.contains("25001"), "{text}");
    assert!(text.contains("42703"), "{text}");
}
