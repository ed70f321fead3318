//! Set-returning functions in a select list run as PostgreSQL's ProjectSet: the calls of a
//! row in lockstep, NULL past a shorter call's end, no row when all return nothing; and where
//! PostgreSQL allows none, its errors.

mod common;

use common::{fresh, rows_of, run, run_ok};

fn texts(rows: &[&[Option<&str>]]) -> Vec<Vec<Option<String>>> {
    rows.iter()
        .map(|r| r.iter().map(|v| v.map(str::to_string)).collect())
        .collect()
}

#[test]
fn select_list_calls_expand_rows_in_lockstep() {
    let (mut kv, mut e, s) = fresh();
    run_ok(
        &mut e,
        &mut kv,
        s,
        "CREATE TABLE t (a INT PRIMARY KEY, b TEXT)",
    );
    run_ok(
        &mut e,
        &mut kv,
        s,
        "INSERT INTO t VALUES (1, 'x'), (3, 'y')",
    );
    let cases: &[(&str, &[&[Option<&str>]])] = &[
        (
            "SELECT generate_series(1, 3)",
            &[&[Some("1")], &[Some("2")], &[Some("3")]],
        ),
        // Lockstep: the shorter call is NULL past its end.
        (
            "SELECT generate_series(1, 2)::text || 'a', unnest(ARRAY['p', 'q', 'r'])",
            &[
                &[Some("1a"), Some("p")],
                &[Some("2a"), Some("q")],
                &[None, Some("r")],
            ],
        ),
        // Per input row, with the row's other columns.
        (
            "SELECT a, b, generate_series(1, a) FROM t ORDER BY a DESC, 3",
            &[
                &[Some("3"), Some("y"), Some("1")],
                &[Some("3"), Some("y"), Some("2")],
                &[Some("3"), Some("y"), Some("3")],
                &[Some("1"), Some("x"), Some("1")],
            ],
        ),
        // Calls that return nothing drop the row; NULL arguments return nothing.
        ("SELECT a, generate_series(3, 1) FROM t", &[]),
        ("SELECT generate_series(1, NULL)", &[]),
        ("SELECT unnest(NULL::int[])", &[]),
        // After grouping: the arguments may be aggregates.
        (
            "SELECT count(*), generate_series(1, count(*)::int) FROM t",
            &[&[Some("2"), Some("1")], &[Some("2"), Some("2")]],
        ),
        // Before DISTINCT, ORDER BY (by output column) and LIMIT / OFFSET.
        (
            "SELECT DISTINCT unnest(ARRAY[2, 1, 2]) AS u ORDER BY u DESC",
            &[&[Some("2")], &[Some("1")]],
        ),
        (
            "SELECT generate_series(1, 5) LIMIT 2 OFFSET 1",
            &[&[Some("2")], &[Some("3")]],
        ),
        // Inside expressions, evaluated per produced row.
        (
            "SELECT -generate_series(1, 2) * 10, greatest(unnest(ARRAY[1, 5]), 3)",
            &[&[Some("-10"), Some("3")], &[Some("-20"), Some("5")]],
        ),
        // In a subquery's select list, and under UNION.
        (
            "SELECT x FROM (SELECT generate_series(1, 3) AS x) s WHERE x > 1",
            &[&[Some("2")], &[Some("3")]],
        ),
        (
            "SELECT 7 UNION SELECT generate_series(6, 7) ORDER BY 1",
            &[&[Some("6")], &[Some("7")]],
        ),
        (
            "SELECT unnest(ARRAY[1.5, 2.25]) * 2",
            &[&[Some("3.0")], &[Some("4.50")]],
        ),
        // Window functions are computed first, over the rows before the calls expand them.
        (
            "SELECT generate_series(1, 2), row_number() OVER ()",
            &[&[Some("1"), Some("1")], &[Some("2"), Some("1")]],
        ),
        (
            "SELECT generate_series(1, 2) + row_number() OVER ()",
            &[&[Some("2")], &[Some("3")]],
        ),
        (
            "SELECT x, generate_series(1, count(*) OVER ()::int) FROM (VALUES (10), (20)) v(x) \
             ORDER BY 1, 2",
            &[
                &[Some("10"), Some("1")],
                &[Some("10"), Some("2")],
                &[Some("20"), Some("1")],
                &[Some("20"), Some("2")],
            ],
        ),
        (
            "SELECT generate_series(1, x), rank() OVER (ORDER BY x DESC) FROM (VALUES (1), (2)) v(x) \
             ORDER BY 2, 1",
            &[
                &[Some("1"), Some("1")],
                &[Some("2"), Some("1")],
                &[Some("1"), Some("2")],
            ],
        ),
    ];
    for (sql, want) in cases {
        let got = rows_of(&run_ok(&mut e, &mut kv, s, sql));
        assert_eq!(got, texts(want), "{sql}");
    }
    // One VALUES row with set-returning calls inserts a row per value, as a select list;
    // several rows may hold none.
    run_ok(
        &mut e,
        &mut kv,
        s,
        "CREATE TABLE g (a INT PRIMARY KEY, b TEXT)",
    );
    let err = run(
        &mut e,
        &mut kv,
        s,
        "INSERT INTO g VALUES (generate_series(1, 3), 'x'), (9, 'y')",
    )
    .error
    .expect("refused");
    assert_eq!(
        (err.code.as_str(), err.message.as_str()),
        ("0A000", "set-returning functions are not allowed in VALUES")
    );
    for sql in [
        "INSERT INTO g VALUES (generate_series(1, 3) * 10, unnest(ARRAY['p', 'q', 'r']))",
        "INSERT INTO g VALUES (generate_series(4, 5), unnest(ARRAY['s']))",
    ] {
        run_ok(&mut e, &mut kv, s, sql);
    }
    let got = rows_of(&run_ok(&mut e, &mut kv, s, "SELECT a, b FROM g ORDER BY a"));
    assert_eq!(
        got,
        texts(&[
            &[Some("4"), Some("s")],
            &[Some("5"), None],
            &[Some("10"), Some("p")],
            &[Some("20"), Some("q")],
            &[Some("30"), Some("r")],
        ])
    );
}

#[test]
fn misplaced_calls_get_postgres_errors() {
    let (mut kv, mut e, s) = fresh();
    run_ok(&mut e, &mut kv, s, "CREATE TABLE t (a INT PRIMARY KEY)");
    let lateral =
        Some("You might be able to move the set-returning function into a LATERAL FROM item.");
    let cases: &[(&str, &str, &str, Option<&str>)] = &[
        (
            "SELECT a FROM t WHERE generate_series(1, 2) > 1",
            "0A000",
            "set-returning functions are not allowed in WHERE",
            None,
        ),
        (
            "SELECT a FROM t GROUP BY a HAVING generate_series(1, 2) > 1",
            "0A000",
            "set-returning functions are not allowed in HAVING",
            None,
        ),
        (
            "SELECT 1 FROM t JOIN t u ON generate_series(1, 2) = 1",
            "0A000",
            "set-returning functions are not allowed in JOIN conditions",
            None,
        ),
        (
            "VALUES (generate_series(1, 2))",
            "0A000",
            "set-returning functions are not allowed in VALUES",
            None,
        ),
        (
            "SELECT count(*) FILTER (WHERE generate_series(1, 2) > 1) FROM t",
            "0A000",
            "set-returning functions are not allowed in FILTER",
            None,
        ),
        (
            "SELECT count(generate_series(1, 2))",
            "0A000",
            "aggregate function calls cannot contain set-returning function calls",
            lateral,
        ),
        (
            "SELECT sum(generate_series(1, 2)) OVER ()",
            "0A000",
            "window function calls cannot contain set-returning function calls",
            lateral,
        ),
        (
            "SELECT CASE WHEN true THEN generate_series(1, 2) END",
            "0A000",
            "set-returning functions are not allowed in CASE",
            lateral,
        ),
        (
            "SELECT coalesce(generate_series(1, 2), 1)",
            "0A000",
            "set-returning functions are not allowed in COALESCE",
            lateral,
        ),
        (
            "SELECT NOT generate_series(1, 2)::bool",
            "42804",
            "argument of NOT must not return a set",
            None,
        ),
    ];
    for (sql, code, message, hint) in cases {
        let err = run(&mut e, &mut kv, s, sql)
            .error
            .unwrap_or_else(|| panic!("accepted: {sql}"));
        assert_eq!(
            (err.code.as_str(), err.message.as_str(), err.hint.as_deref()),
            (*code, *message, *hint),
            "{sql}"
        );
    }
    // The session goes on.
    let one = rows_of(&run_ok(&mut e, &mut kv, s, "SELECT unnest(ARRAY['ok'])"));
    assert_eq!(one, texts(&[&[Some("ok")]]));
}
