//! `WITH RECURSIVE`: the non-recursive term, then rounds of the recursive term over the rows
//! the previous round added, until a round adds none; PostgreSQL's errors for the forms it
//! refuses.

mod common;

use common::{fresh, rows_of, run, run_ok};

// The memory budget reads the heap through this allocator (the server binary installs it too).
#[global_allocator]
static ALLOC: rocklake_core::mem::CountingAlloc<std::alloc::System> =
    rocklake_core::mem::CountingAlloc(std::alloc::System);

fn column(r: &rocklake_core::api::Reply) -> Vec<String> {
    rows_of(r)
        .into_iter()
        .map(|row| row.into_iter().next().flatten().unwrap_or_default())
        .collect()
}

#[test]
fn recursive_queries_run_rounds_until_none_adds_rows() {
    let (mut kv, mut e, s) = fresh();
    run_ok(&mut e, &mut kv, s, "CREATE TABLE edge (src INT, dst INT)");
    run_ok(
        &mut e,
        &mut kv,
        s,
        "INSERT INTO edge VALUES (1, 2), (2, 3), (3, 1), (3, 4), (5, 6)",
    );
    let cases: &[(&str, &[&str])] = &[
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r",
            &["1", "2", "3", "4", "5"],
        ),
        // UNION drops rows produced before, so a cycle ends.
        (
            "WITH RECURSIVE reach(v) AS (SELECT 1 UNION SELECT dst FROM edge JOIN reach ON src = v) \
             SELECT v FROM reach ORDER BY v",
            &["1", "2", "3", "4"],
        ),
        (
            "WITH RECURSIVE fib(a, b) AS (SELECT 0::bigint, 1::bigint UNION ALL \
             SELECT b, a + b FROM fib WHERE b < 30) SELECT a FROM fib",
            &["0", "1", "1", "2", "3", "5", "8", "13", "21"],
        ),
        // A LIMIT over the recursive query alone stops it (it would not end otherwise).
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n * 10 FROM r LIMIT 3",
            &["10", "20", "30"],
        ),
        // Not reading itself: a plain query.
        (
            "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT 2) SELECT n FROM t",
            &["1", "2"],
        ),
        // Read twice by the main query, and by a later CTE.
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3), \
             s(m) AS (SELECT n * 10 FROM r) SELECT count(*)::text || '/' || sum(m) FROM r, s",
            &["9/180"],
        ),
    ];
    for (sql, want) in cases {
        assert_eq!(column(&run_ok(&mut e, &mut kv, s, sql)), *want, "{sql}");
    }
}

#[test]
fn malformed_recursion_gets_postgres_errors() {
    let (mut kv, mut e, s) = fresh();
    let cases: &[(&str, &str, &str)] = &[
        (
            "WITH RECURSIVE r(n) AS (SELECT n FROM r) SELECT * FROM r",
            "42P19",
            "recursive query \"r\" does not have the form non-recursive-term UNION [ALL] recursive-term",
        ),
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT (SELECT n + 1 FROM r) FROM r) SELECT * FROM r",
            "42P19",
            "recursive reference to query \"r\" must not appear within a subquery",
        ),
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT a.n FROM r a, r b) SELECT * FROM r",
            "42P19",
            "recursive reference to query \"r\" must not appear more than once",
        ),
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT 2 FROM (SELECT 1) z LEFT JOIN r ON true) SELECT * FROM r",
            "42P19",
            "recursive reference to query \"r\" must not appear within an outer join",
        ),
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1.5 FROM r WHERE n < 3) SELECT * FROM r",
            "42804",
            "recursive query \"r\" column 1 has type integer in non-recursive term but type numeric overall",
        ),
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r ORDER BY 1) SELECT * FROM r",
            "0A000",
            "ORDER BY in a recursive query is not implemented",
        ),
    ];
    for (sql, code, message) in cases {
        let err = run(&mut e, &mut kv, s, sql)
            .error
            .unwrap_or_else(|| panic!("accepted: {sql}"));
        assert_eq!(
            (err.code.as_str(), err.message.as_str()),
            (*code, *message),
            "{sql}"
        );
    }
}

#[test]
fn endless_recursion_stops_at_the_memory_budget() {
    let (mut kv, mut e, s) = fresh();
    e.set_statement_memory_limit(16 << 20);
    let err = run(
        &mut e,
        &mut kv,
        s,
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    )
    .error
    .expect("runs out of memory");
    assert_eq!(err.code, "53200", "{}", err.message);
    // The session goes on.
    assert_eq!(column(&run_ok(&mut e, &mut kv, s, "SELECT 1")), ["1"]);
}
