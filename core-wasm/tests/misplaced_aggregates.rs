//! Aggregate calls where PostgreSQL allows none get its messages (the clause named), and
//! `COPY … FROM … WHERE` refuses subqueries and aggregate calls as PostgreSQL does.

mod common;

use common::{fresh, run, run_ok};

#[test]
fn misplaced_aggregates_name_their_clause() {
    let (mut kv, mut e, s) = fresh();
    run_ok(&mut e, &mut kv, s, "CREATE TABLE t (a INT PRIMARY KEY)");
    for (sql, message) in [
        (
            "SELECT a FROM t WHERE count(*) > 1",
            "aggregate functions are not allowed in WHERE",
        ),
        (
            "SELECT 1 FROM t JOIN t u ON count(*) = 1",
            "aggregate functions are not allowed in JOIN conditions",
        ),
        (
            "SELECT sum(count(*)) FROM t",
            "aggregate function calls cannot be nested",
        ),
        (
            "COPY t FROM STDIN WHERE count(*) > 1",
            "aggregate functions are not allowed in COPY FROM WHERE conditions",
        ),
    ] {
        let r = run(&mut e, &mut kv, s, sql);
        let err = r.error.unwrap_or_else(|| panic!("{sql}: no error"));
        assert_eq!(
            (err.code.as_str(), err.message.as_str()),
            ("42803", message),
            "{sql}"
        );
    }
    let r = run(
        &mut e,
        &mut kv,
        s,
        "COPY t FROM STDIN WHERE a IN (SELECT 1)",
    );
    let err = r.error.expect("subquery refused");
    assert_eq!(
        (err.code.as_str(), err.message.as_str()),
        ("0A000", "cannot use subquery in COPY FROM WHERE condition")
    );
}
