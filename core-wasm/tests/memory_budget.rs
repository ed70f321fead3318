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
    let run = |engine: &mut Engine, kv: &mut MemKv, sql: &str| {
        let mut r = engine.query(kv, s, sql, 1_000_000);
        while let Some(batch) = r.commit.take() {
            kv.apply(&batch);
            r = engine.commit_finished(kv, s, Ok(()));
        }
        r
    };
    let r = run(
        &mut engine,
        &mut kv,
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
