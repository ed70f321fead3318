//! SQL the core does not implement is refused with 0A000 and a message naming it, never
//! ignored (an ignored FETCH FIRST returned every row; an ignored FOR UPDATE would promise a
//! lock that is not taken).

mod common;

use common::{fresh, rows_of, run, run_ok};

#[test]
fn unimplemented_clauses_are_refused_not_ignored() {
    let (mut kv, mut e, s) = fresh();
    run_ok(&mut e, &mut kv, s, "CREATE TABLE t (a BIGINT, b BIGINT)");
    run_ok(&mut e, &mut kv, s, "CREATE TABLE u (a BIGINT)");
    run_ok(
        &mut e,
        &mut kv,
        s,
        "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)",
    );
    for sql in [
        "SELECT a INTO t2 FROM t",
        "SELECT a FROM t FOR UPDATE",
        "SELECT a FROM t ORDER BY a FETCH FIRST 1 ROWS WITH TIES",
        "SELECT count(*) FROM t, u RIGHT JOIN t x ON x.a = u.a",
        "SELECT count(*) FROM t FULL JOIN u USING (a)",
        "SELECT a FROM t ORDER BY row_number() OVER (ORDER BY b)",
        "SELECT sum(a) OVER (ORDER BY a RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
        // Set-returning calls in the select list run, but not nested, under DISTINCT ON or
        // ORDER BY / GROUP BY of one (PostgreSQL runs those too).
        "SELECT generate_series(1, generate_series(1, a)) FROM t",
        "SELECT DISTINCT ON (1) unnest(ARRAY[1, 2])",
        "SELECT a FROM t ORDER BY generate_series(1, a)",
        "SELECT generate_series(1, 2) GROUP BY 1",
        // Multidimensional arrays would be text[] of their rows' text.
        "SELECT ARRAY[ARRAY[1, 2], ARRAY[3, 4]]",
        "SELECT array_agg(ARRAY[a]) FROM t",
    ] {
        let r = run(&mut e, &mut kv, s, sql);
        let err = r.error.unwrap_or_else(|| panic!("accepted: {sql}"));
        assert_eq!(err.code, "0A000", "{sql}: {}", err.message);
        assert!(
            err.message.ends_with("is not supported"),
            "{sql}: {}",
            err.message
        );
    }
    // What is implemented of the same clauses answers.
    let first = rows_of(&run_ok(
        &mut e,
        &mut kv,
        s,
        "SELECT a FROM t ORDER BY a DESC FETCH FIRST 2 ROWS ONLY",
    ));
    assert_eq!(first, vec![vec![Some("3".into())], vec![Some("2".into())]]);
    let unnested = rows_of(&run_ok(
        &mut e,
        &mut kv,
        s,
        "SELECT x FROM unnest(ARRAY[3, 1]) u(x) ORDER BY x",
    ));
    assert_eq!(
        unnested,
        vec![vec![Some("1".into())], vec![Some("3".into())]]
    );
}
