//! The statement memory budget (`rocklake_core::mem`): a statement that materialises more
//! rows than its budget fails with 53200 "out of memory" instead of taking the heap (in the
//! component: trapping the whole core), and the session and the others go on. The budget is
//! what stops it: the same statement passes under a larger one.

use rocklake_core::api::{Output, Reply, SessionId};
use rocklake_core::memkv::MemKv;
use rocklake_core::Engine;

// The budget reads the heap through this allocator (the server binary installs it too).
#[global_allocator]
static ALLOC: rocklake_core::mem::CountingAlloc<std::alloc::System> =
    rocklake_core::mem::CountingAlloc(std::alloc::System);

/// One million joined rows: well over 64 MiB once materialised, well under 512 MiB.
const JOIN: &str = "SELECT count(*) FROM generate_series(1, 1000) a, generate_series(1, 1000) b";

fn query(engine: &mut Engine, kv: &MemKv, s: SessionId, sql: &str) -> Reply {
    let r = engine.query(kv, s, sql, 1_000_000);
    assert!(r.commit.is_none(), "{sql}: unexpected commit");
    r
}

/// Runs `sql` to completion in session `s`, applying its commits to `kv`; it must succeed.
fn run(engine: &mut Engine, kv: &mut MemKv, s: SessionId, sql: &str) -> Reply {
    let mut r = engine.query(kv, s, sql, 1_000_000);
    while let Some(batch) = r.commit.take() {
        kv.apply(&batch);
        r = engine.commit_finished(kv, s, Ok(()));
    }
    assert!(r.error.is_none(), "{sql}: {:?}", r.error);
    r
}

fn single(engine: &mut Engine, kv: &MemKv, s: SessionId, sql: &str) -> Option<String> {
    let r = query(engine, kv, s, sql);
    assert!(r.error.is_none(), "{sql}: {:?}", r.error);
    match r.outputs.last() {
        Some(Output::Rows { rows, .. }) => rows.to_strings()[0][0].clone(),
        other => panic!("{sql}: expected rows, got {other:?}"),
    }
}

fn assert_out_of_memory(r: &Reply) {
    assert_eq!(
        r.error.as_ref().map(|e| e.code.as_str()),
        Some("53200"),
        "{:?}",
        r.error
    );
}

#[test]
fn a_statement_over_its_budget_fails_with_53200_and_the_sessions_go_on() {
    let kv = MemKv::new();
    let mut engine = Engine::open(&kv).expect("open");
    engine.set_statement_memory_limit(64 << 20);
    let s = engine.open_session("t", "lake");
    let other = engine.open_session("t", "lake");

    let r = query(&mut engine, &kv, s, JOIN);
    let e = r.error.expect("the join must exceed 64 MiB");
    assert_eq!(e.code, "53200", "{e:?}");
    assert_eq!(e.message, "out of memory");
    assert_eq!(
        e.detail.as_deref(),
        Some("The statement needed more than its statement_memory_limit of 64 MB.")
    );
    assert!(e.hint.is_some_and(|h| h.contains("statement_memory_limit")));

    // A set-returning function's rows count too (5 million of them).
    let r = query(
        &mut engine,
        &kv,
        s,
        "SELECT count(*) FROM generate_series(1, 5000000)",
    );
    assert_out_of_memory(&r);

    // Wide values count too: 2,000 strings of 100 kB aggregated into one (200 MB).
    let r = query(
        &mut engine,
        &kv,
        s,
        "SELECT length(string_agg(repeat('x', 100000), ',')) FROM generate_series(1, 2000)",
    );
    assert_out_of_memory(&r);

    // Inside a transaction block it is an error like any other: the block is aborted.
    assert!(query(&mut engine, &kv, s, "BEGIN").error.is_none());
    assert_out_of_memory(&query(&mut engine, &kv, s, JOIN));
    assert_eq!(
        query(&mut engine, &kv, s, "SELECT 1")
            .error
            .map(|e| e.code)
            .as_deref(),
        Some("25P02")
    );
    assert!(query(&mut engine, &kv, s, "ROLLBACK").error.is_none());

    // Both sessions go on, and smaller statements fit.
    assert_eq!(
        single(&mut engine, &kv, s, "SELECT 1").as_deref(),
        Some("1")
    );
    assert_eq!(
        single(
            &mut engine,
            &kv,
            other,
            "SELECT count(*) FROM generate_series(1, 100) a, generate_series(1, 100) b"
        )
        .as_deref(),
        Some("10000")
    );

    // The budget is what stopped the join: under a larger one it runs.
    engine.set_statement_memory_limit(512 << 20);
    assert_eq!(
        single(
            &mut engine,
            &kv,
            s,
            "SELECT length(string_agg(repeat('x', 100000), ',')) FROM generate_series(1, 2000)"
        )
        .as_deref(),
        Some("200001999")
    );
    assert_eq!(
        single(&mut engine, &kv, s, JOIN).as_deref(),
        Some("1000000")
    );
}

#[test]
fn without_a_limit_nothing_is_stopped() {
    let kv = MemKv::new();
    let mut engine = Engine::open(&kv).expect("open");
    engine.set_statement_memory_limit(0);
    let s = engine.open_session("t", "lake");
    assert_eq!(
        single(&mut engine, &kv, s, JOIN).as_deref(),
        Some("1000000")
    );
}

/// A scan holds only the columns up to the last one the statement reads: `count(*)` over a
/// wide table keeps no values per row, so it fits a budget that `SELECT *` of the same rows
/// does not.
#[test]
fn a_scan_holds_only_the_columns_it_reads() {
    let mut kv = MemKv::new();
    let mut engine = Engine::open(&kv).expect("open");
    let s = engine.open_session("t", "lake");
    let r = run(
        &mut engine,
        &mut kv,
        s,
        "CREATE TABLE stats (a BIGINT, b BIGINT, c BIGINT, d BIGINT, e BIGINT, \
         f BIGINT, g VARCHAR, h VARCHAR, i BOOLEAN, j VARCHAR)",
    );
    assert!(r.error.is_none(), "{:?}", r.error);
    const ROWS: usize = 40_000;
    for chunk in (0..ROWS).collect::<Vec<_>>().chunks(5_000) {
        let values: Vec<String> = chunk
            .iter()
            .map(|k| format!("({k}, 7, {}, 1, 2, 3, 'x{k}', 'y', false, NULL)", k % 200))
            .collect();
        let r = run(
            &mut engine,
            &mut kv,
            s,
            &format!("INSERT INTO stats VALUES {}", values.join(",")),
        );
        assert!(r.error.is_none(), "{:?}", r.error);
    }
    // Full-width rows of 11 values (ctid included) take over 350 bytes each: 14 MB here,
    // before the scan cache's copy.
    engine.set_statement_memory_limit(12 << 20);
    for _ in 0..2 {
        // The second time from the scan cache.
        assert_eq!(
            single(&mut engine, &kv, s, "SELECT count(*) FROM stats").as_deref(),
            Some("40000")
        );
        assert_eq!(
            single(&mut engine, &kv, s, "SELECT max(b) FROM stats WHERE a >= 0").as_deref(),
            Some("7")
        );
    }
    assert_out_of_memory(&query(&mut engine, &kv, s, "SELECT * FROM stats"));
}

/// Grouped aggregates over one table fold each row into its group as the scan visits it
/// (`Executor::stream_groups`): they hold no rows, so they fit a budget the materialised
/// rows would not, and give the same groups in the same order (first appearance in heap
/// order). Order-sensitive aggregates (`string_agg`) and a transaction's own writes still
/// take the materialising path.
#[test]
fn grouped_aggregates_over_a_table_hold_no_rows() {
    let mut kv = MemKv::new();
    let mut engine = Engine::open(&kv).expect("open");
    let s = engine.open_session("t", "lake");
    run(
        &mut engine,
        &mut kv,
        s,
        "CREATE TABLE t (a BIGINT PRIMARY KEY, b VARCHAR, c BIGINT, d NUMERIC(10, 2))",
    );
    // Inserted in descending key order, so key order is the reverse of heap order: the
    // groups' first rows are 'g0', 'g1', 'g2', 'g3' in heap order, and the first key read
    // (a = 8) is in 'g3'.
    const ROWS: i64 = 120_000;
    let keys: Vec<i64> = (0..ROWS).rev().collect();
    for chunk in keys.chunks(6_000) {
        let values: Vec<String> = chunk
            .iter()
            .map(|k| format!("({k}, 'g{}', {}, {k}.25)", (ROWS - 1 - k) % 4, k % 7))
            .collect();
        run(
            &mut engine,
            &mut kv,
            s,
            &format!("INSERT INTO t VALUES {}", values.join(",")),
        );
    }
    let grouped = "SELECT b, count(*), count(DISTINCT c), sum(a), min(c), max(a), avg(d), \
                   bool_or(c = 6) FROM t WHERE a >= 8 GROUP BY b";
    let expected = |g: i64| {
        let ks: Vec<i64> = (8..ROWS).filter(|k| (ROWS - 1 - k) % 4 == g).collect();
        let n = ks.len() as i64;
        let sum: i64 = ks.iter().sum();
        // avg(d) = avg(k) + 0.25, to 16 decimal places as numeric avg prints here.
        let avg_d = format!("{:.16}", sum as f64 / n as f64 + 0.25);
        vec![
            Some(format!("g{g}")),
            Some(n.to_string()),
            Some("7".to_string()),
            Some(sum.to_string()),
            Some("0".to_string()),
            Some(ks.iter().max().map(|m| m.to_string()).unwrap_or_default()),
            Some(avg_d),
            Some("t".to_string()),
        ]
    };
    // A reader whose snapshot is older than the newest commit: the scan cache, which keeps
    // the newest rows of a range up to 32 MB and counts them against the statement, stays
    // out of it, so the budget below measures the statement alone.
    let reader = engine.open_session("t", "lake");
    for sql in ["BEGIN ISOLATION LEVEL REPEATABLE READ", "SELECT 1"] {
        assert!(query(&mut engine, &kv, reader, sql).error.is_none());
    }
    run(&mut engine, &mut kv, s, "CREATE TABLE later (x BIGINT)");
    let rows_of = |r: &Reply| match r.outputs.last() {
        Some(Output::Rows { rows, .. }) => rows.to_strings(),
        other => panic!("expected rows, got {other:?}"),
    };
    // Materialised, these rows take well over 8 MiB.
    engine.set_statement_memory_limit(4 << 20);
    for _ in 0..2 {
        let r = query(&mut engine, &kv, reader, grouped);
        assert!(r.error.is_none(), "{:?}", r.error);
        let got = rows_of(&r);
        assert_eq!(got.len(), 4);
        for (i, g) in [0, 1, 2, 3].into_iter().enumerate() {
            assert_eq!(got[i][..6], expected(g)[..6], "group g{g}");
            assert_eq!(got[i][7], expected(g)[7], "group g{g}");
            let avg: f64 = got[i][6]
                .as_deref()
                .and_then(|v| v.parse().ok())
                .expect("avg");
            let want: f64 = expected(g)[6]
                .as_deref()
                .and_then(|v| v.parse().ok())
                .expect("avg");
            assert!((avg - want).abs() < 1e-6, "avg {avg} against {want}");
        }
        assert_eq!(
            single(&mut engine, &kv, reader, "SELECT count(*) FROM t").as_deref(),
            Some("120000")
        );
        assert_eq!(
            single(
                &mut engine,
                &kv,
                reader,
                "SELECT count(*) FROM t WHERE c = 99"
            )
            .as_deref(),
            Some("0")
        );
        assert_eq!(
            single(
                &mut engine,
                &kv,
                reader,
                "SELECT sum(a) FROM t WHERE c = 99"
            )
            .as_deref(),
            None
        );
    }
    // string_agg depends on the order of its inputs: it reads the materialised rows.
    assert_out_of_memory(&query(
        &mut engine,
        &kv,
        reader,
        "SELECT b, length(string_agg(b, ',')) FROM t GROUP BY b",
    ));
    // With the transaction's own write to the table, the materialising path sees it.
    engine.set_statement_memory_limit(0);
    assert!(query(&mut engine, &kv, s, "BEGIN").error.is_none());
    let r = engine.query(&kv, s, "INSERT INTO t VALUES (-1, 'g9', 1, 0)", 1_000_000);
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(
        single(&mut engine, &kv, s, "SELECT count(*) FROM t").as_deref(),
        Some("120001")
    );
    assert!(query(&mut engine, &kv, s, "ROLLBACK").error.is_none());
}
