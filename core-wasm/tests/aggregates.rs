//! Whether a SELECT aggregates is decided by binding its target list, as PostgreSQL does: an
//! aggregate however it is spelled makes it grouped, and a subquery's aggregates are the
//! subquery's own.

mod common;

use common::{fresh, rows_of, run, run_ok};

#[test]
fn aggregates_are_found_by_binding_not_by_their_text() {
    let (mut kv, mut e, s) = fresh();
    run_ok(&mut e, &mut kv, s, "CREATE TABLE t (a BIGINT, b VARCHAR)");
    run_ok(
        &mut e,
        &mut kv,
        s,
        "INSERT INTO t VALUES (1, 'x'), (2, 'count(')",
    );
    let one =
        |e: &mut rocklake_core::Engine, kv: &mut _, sql: &str| rows_of(&run_ok(e, kv, s, sql));
    let text = |v: &str| vec![Some(v.to_string())];
    // A quoted function name is still the aggregate.
    assert_eq!(
        one(&mut e, &mut kv, r#"SELECT "count"(*) FROM t"#),
        vec![text("2")]
    );
    assert_eq!(
        one(&mut e, &mut kv, r#"SELECT "max"(a) + 1 FROM t"#),
        vec![text("3")]
    );
    // An aggregate only inside a subquery, or a literal that reads like one, groups nothing.
    assert_eq!(
        one(
            &mut e,
            &mut kv,
            "SELECT a, (SELECT count(*) FROM t) FROM t ORDER BY a"
        ),
        vec![
            vec![Some("1".into()), Some("2".into())],
            vec![Some("2".into()), Some("2".into())]
        ]
    );
    assert_eq!(
        one(
            &mut e,
            &mut kv,
            "SELECT a, 'sum(' FROM t WHERE b = 'count(' ORDER BY a"
        ),
        vec![vec![Some("2".into()), Some("sum(".into())]]
    );
    // Ungrouped columns next to an aggregate are still refused, as by PostgreSQL.
    let r = run(&mut e, &mut kv, s, r#"SELECT a, "count"(*) FROM t"#);
    assert_eq!(r.error.map(|e| e.code).as_deref(), Some("42803"));
}
