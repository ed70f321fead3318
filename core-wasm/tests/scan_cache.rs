//! Decoded rows of large scanned ranges are kept for the newest commit point (scancache.rs).
//! A statement answered from them must give exactly what reading the store again gives: these
//! tests check hits where they may happen and fresh reads after every change a statement
//! could see, and compare random histories against an engine opened fresh (no caches).

mod common;

use proptest::prelude::*;
use rocklake_core::api::{last_text_rows, SessionId};
use rocklake_core::memkv::MemKv;
use rocklake_core::scancache::SCAN_CACHE_MIN_ROWS;
use rocklake_core::Engine;

use common::{copy_of, run_ok as run};

fn rows(e: &mut Engine, kv: &mut MemKv, s: SessionId, sql: &str) -> Vec<Vec<Option<String>>> {
    last_text_rows(&run(e, kv, s, sql).outputs)
}

/// The rows DuckDB's file-list read returns for `table` at snapshot `snap`, in scan order.
fn files(table: i64, snap: i64) -> String {
    format!(
        "SELECT data_file_id, path FROM \"public\".ducklake_data_file \
         WHERE table_id = {table} AND begin_snapshot <= {snap}"
    )
}

/// A `ducklake_data_file` (RockLake indexes it by `table_id`) with `n` files for each of
/// tables 1 and 2.
fn setup(n: usize) -> (MemKv, Engine, SessionId) {
    let (mut kv, mut e, s) = common::fresh();
    run(
        &mut e,
        &mut kv,
        s,
        "CREATE TABLE ducklake_data_file (data_file_id BIGINT PRIMARY KEY, table_id BIGINT, \
         begin_snapshot BIGINT, path TEXT)",
    );
    let values: Vec<String> = (0..2 * n)
        .map(|i| format!("({i}, {}, 1, 'f{i}.parquet')", 1 + i % 2))
        .collect();
    run(
        &mut e,
        &mut kv,
        s,
        &format!(
            "INSERT INTO ducklake_data_file VALUES {}",
            values.join(", ")
        ),
    );
    (kv, e, s)
}

#[test]
fn a_range_is_read_from_the_store_again_only_after_a_commit_writes_into_it() {
    let n = SCAN_CACHE_MIN_ROWS + 10;
    let (mut kv, mut e, s) = setup(n);
    let other = e.open_session("t", "lake");
    let first = rows(&mut e, &mut kv, s, &files(1, 5));
    assert_eq!(first.len(), n);
    let hits = e.st.scans.borrow().hits();
    // Another snapshot id in the text, another session: the same range, from the cache.
    assert_eq!(rows(&mut e, &mut kv, other, &files(1, 6)), first);
    assert_eq!(e.st.scans.borrow().hits(), hits + 1);

    // Files of table 2 do not touch table 1's range.
    run(
        &mut e,
        &mut kv,
        other,
        "INSERT INTO ducklake_data_file VALUES (100000, 2, 7, 'new2.parquet')",
    );
    assert_eq!(rows(&mut e, &mut kv, s, &files(1, 7)), first);
    assert_eq!(e.st.scans.borrow().hits(), hits + 2);

    // A file of table 1, and a changed path: read again, both seen.
    run(
        &mut e,
        &mut kv,
        other,
        "INSERT INTO ducklake_data_file VALUES (100001, 1, 8, 'new1.parquet')",
    );
    let grown = rows(&mut e, &mut kv, s, &files(1, 8));
    assert_eq!(grown.len(), n + 1);
    assert_eq!(e.st.scans.borrow().hits(), hits + 2);
    run(
        &mut e,
        &mut kv,
        other,
        "UPDATE ducklake_data_file SET path = 'moved.parquet' WHERE data_file_id = 0",
    );
    let moved = rows(&mut e, &mut kv, s, &files(1, 8));
    assert!(moved.contains(&vec![Some("0".into()), Some("moved.parquet".into())]));

    // The session's own uncommitted write shows (own writes bypass the cache), and does not
    // stay for others.
    run(&mut e, &mut kv, s, "BEGIN");
    run(
        &mut e,
        &mut kv,
        s,
        "DELETE FROM ducklake_data_file WHERE data_file_id = 2",
    );
    assert_eq!(rows(&mut e, &mut kv, s, &files(1, 8)).len(), n);
    assert_eq!(rows(&mut e, &mut kv, other, &files(1, 8)), moved);
    run(&mut e, &mut kv, s, "ROLLBACK");

    // A repeatable-read snapshot older than a commit into the range reads the old rows.
    run(&mut e, &mut kv, s, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(rows(&mut e, &mut kv, s, &files(1, 8)), moved);
    run(
        &mut e,
        &mut kv,
        other,
        "DELETE FROM ducklake_data_file WHERE data_file_id = 4",
    );
    assert_eq!(rows(&mut e, &mut kv, other, &files(1, 8)).len(), n);
    assert_eq!(rows(&mut e, &mut kv, s, &files(1, 8)), moved);
    run(&mut e, &mut kv, s, "COMMIT");
    assert_eq!(rows(&mut e, &mut kv, s, &files(1, 8)).len(), n);
}

#[test]
fn a_copy_computed_from_kept_rows_is_dropped_when_its_range_changes() {
    let n = SCAN_CACHE_MIN_ROWS + 10;
    let (mut kv, mut e, s) = setup(n);
    // Fill the scan cache with a plain SELECT; the COPY then reads the range from it, and
    // the copy cache must still learn which range it read.
    rows(&mut e, &mut kv, s, &files(1, 5));
    let copy = format!("COPY ({}) TO STDOUT (FORMAT binary)", files(1, 9));
    let hits = e.st.scans.borrow().hits();
    assert_eq!(
        copy_of(&run(&mut e, &mut kv, s, &copy)).1,
        format!("COPY {n}")
    );
    assert_eq!(e.st.scans.borrow().hits(), hits + 1);
    run(
        &mut e,
        &mut kv,
        s,
        "INSERT INTO ducklake_data_file VALUES (100001, 1, 8, 'new1.parquet')",
    );
    assert_eq!(
        copy_of(&run(&mut e, &mut kv, s, &copy)).1,
        format!("COPY {}", n + 1)
    );
}

#[test]
fn small_ranges_are_not_kept() {
    let (mut kv, mut e, s) = setup(SCAN_CACHE_MIN_ROWS - 1);
    rows(&mut e, &mut kv, s, &files(1, 5));
    rows(&mut e, &mut kv, s, &files(1, 6));
    assert!(e.st.scans.borrow().is_empty());
    assert_eq!(e.st.scans.borrow().hits(), 0);
}

/// A COPY answered from kept rows keeps their encoded tuples for its projection, and the next
/// such COPY (a new snapshot in its text) copies the tuples of the rows that pass its filter:
/// the bytes are always those an engine with empty caches sends, for each projection, and
/// after a commit into the range the rows and their tuples are read again.
#[test]
fn kept_rows_keep_their_encoded_tuples_per_projection() {
    let n = SCAN_CACHE_MIN_ROWS + 10;
    let (mut kv, mut e, s) = setup(n);
    let by_id = |snap: i64| format!("COPY ({}) TO STDOUT (FORMAT binary)", files(1, snap));
    let by_path = |snap: i64| {
        format!(
            "COPY (SELECT path, table_id, data_file_id FROM \"public\".ducklake_data_file \
             WHERE table_id = 1 AND begin_snapshot <= {snap} AND data_file_id % 3 <> 0) \
             TO STDOUT (FORMAT binary)"
        )
    };
    let check = |e: &mut Engine, kv: &mut MemKv, sql: &str| {
        let got = copy_of(&run(e, kv, s, sql));
        let mut fresh = Engine::open(kv).expect("open");
        let fs = fresh.open_session("t", "lake");
        assert_eq!(got, copy_of(&run(&mut fresh, kv, fs, sql)), "{sql}");
        got
    };
    assert_eq!(rows(&mut e, &mut kv, s, &files(1, 1)).len(), n);
    let encoded = |e: &Engine| e.st.scans.borrow().encoded_hits();
    let before = encoded(&e);
    let first = check(&mut e, &mut kv, &by_id(2));
    assert_eq!(first.1, format!("COPY {n}"));
    check(&mut e, &mut kv, &by_path(3));
    assert_eq!(encoded(&e), before, "first use of each projection encodes");
    assert_eq!(check(&mut e, &mut kv, &by_id(4)), first);
    let some = check(&mut e, &mut kv, &by_path(5));
    assert_eq!(some.1, format!("COPY {}", n - n.div_ceil(3)));
    assert_eq!(check(&mut e, &mut kv, &by_id(0)).1, "COPY 0");
    assert_eq!(encoded(&e), before + 3);
    // A commit into the range: the kept rows and their tuples go.
    run(
        &mut e,
        &mut kv,
        s,
        "UPDATE ducklake_data_file SET path = 'moved.parquet' WHERE data_file_id = 4",
    );
    let after = check(&mut e, &mut kv, &by_id(6));
    assert_ne!(after, first);
    assert_eq!(encoded(&e), before + 3);
}

#[derive(Debug, Clone)]
enum Op {
    Insert { table: i64 },
    Move { id: i64, table: i64 },
    Rename { id: i64 },
    Delete { id: i64 },
    Read { table: i64, snap: i64, copy: bool },
    CreateTable,
}

fn op() -> impl Strategy<Value = Op> {
    let id = 0i64..700;
    let table = 1i64..4;
    prop_oneof![
        table.clone().prop_map(|table| Op::Insert { table }),
        (id.clone(), table.clone()).prop_map(|(id, table)| Op::Move { id, table }),
        id.clone().prop_map(|id| Op::Rename { id }),
        id.prop_map(|id| Op::Delete { id }),
        (table, 0i64..10, any::<bool>()).prop_map(|(table, snap, copy)| Op::Read {
            table,
            snap,
            copy
        }),
        Just(Op::CreateTable),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever commits happen between them, every read answers what an engine opened fresh
    /// on the same store (with empty caches) answers.
    #[test]
    fn reads_agree_with_a_fresh_engine(ops in proptest::collection::vec(op(), 1..40)) {
        let (mut kv, mut e, s) = setup(SCAN_CACHE_MIN_ROWS + 20);
        let mut created = 0;
        let mut inserted = 0;
        for op in ops {
            let sql = match &op {
                Op::Insert { table } => {
                    inserted += 1;
                    format!("INSERT INTO ducklake_data_file VALUES ({}, {table}, 3, 'i')", 10_000 + inserted)
                }
                Op::Move { id, table } => format!(
                    "UPDATE ducklake_data_file SET table_id = {table}, begin_snapshot = 4 \
                     WHERE data_file_id = {id}"),
                Op::Rename { id } => format!(
                    "UPDATE ducklake_data_file SET path = path || 'r' WHERE data_file_id = {id}"),
                Op::Delete { id } => format!("DELETE FROM ducklake_data_file WHERE data_file_id = {id}"),
                Op::CreateTable => {
                    created += 1;
                    format!("CREATE TABLE other{created} (x BIGINT)")
                }
                Op::Read { table, snap, copy } => {
                    let q = files(*table, *snap);
                    let sql = if *copy { format!("COPY ({q}) TO STDOUT (FORMAT binary)") } else { q };
                    let got = run(&mut e, &mut kv, s, &sql);
                    let mut fresh = Engine::open(&kv).expect("open");
                    let fs = fresh.open_session("t", "lake");
                    let want = run(&mut fresh, &mut kv, fs, &sql);
                    prop_assert_eq!(&got.outputs, &want.outputs, "{}", sql);
                    continue;
                }
            };
            let r = common::run(&mut e, &mut kv, s, &sql);
            prop_assert!(r.error.is_none(), "{}: {:?}", sql, r.error);
        }
    }
}
