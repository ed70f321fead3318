//! Binary COPY results are kept for the newest commit point (copycache.rs). A kept result
//! must be exactly what executing the statement again would give: these tests check that
//! hits happen where they may, and that every change a statement could see — a commit, the
//! session's own writes, an older snapshot, the clock, search_path — makes it execute again.

mod common;

use rocklake_core::api::SessionId;
use rocklake_core::memkv::MemKv;
use rocklake_core::Engine;

use common::{assert_executed_twice, copy_of, run_ok as run};

const COPY: &str =
    "COPY (SELECT id, v FROM \"public\".t WHERE id >= 1) TO STDOUT (FORMAT \"binary\")";

fn setup() -> (MemKv, Engine, SessionId) {
    let (mut kv, mut e, s) = common::fresh();
    run(
        &mut e,
        &mut kv,
        s,
        "CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT)",
    );
    run(
        &mut e,
        &mut kv,
        s,
        "INSERT INTO t VALUES (1, 'a'), (2, 'b')",
    );
    (kv, e, s)
}

#[test]
fn a_repeated_copy_is_answered_from_the_cache_until_a_commit() {
    let (mut kv, mut e, s) = setup();
    let other = e.open_session("t", "lake");
    let first = copy_of(&run(&mut e, &mut kv, s, COPY));
    assert_eq!(first.1, "COPY 2");
    let hits = e.st.copies.hits();
    // Another session, and the same session inside a transaction: both hit.
    assert_eq!(copy_of(&run(&mut e, &mut kv, other, COPY)), first);
    run(&mut e, &mut kv, s, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(copy_of(&run(&mut e, &mut kv, s, COPY)), first);
    run(&mut e, &mut kv, s, "COMMIT");
    assert_eq!(e.st.copies.hits(), hits + 2);

    // A commit of another session: the next COPY executes again and sees the new row.
    run(&mut e, &mut kv, other, "INSERT INTO t VALUES (3, 'c')");
    let after = copy_of(&run(&mut e, &mut kv, s, COPY));
    assert_eq!(after.1, "COPY 3");
    assert_eq!(e.st.copies.hits(), hits + 2);
    assert_eq!(copy_of(&run(&mut e, &mut kv, s, COPY)), after);
    assert_eq!(e.st.copies.hits(), hits + 3);
}

#[test]
fn own_writes_and_older_snapshots_execute_again() {
    let (mut kv, mut e, s) = setup();
    let other = e.open_session("t", "lake");
    let before = copy_of(&run(&mut e, &mut kv, s, COPY));
    let hits = e.st.copies.hits();

    // The session's own uncommitted row must show; the cache must not keep that result.
    run(&mut e, &mut kv, s, "BEGIN");
    run(&mut e, &mut kv, s, "INSERT INTO t VALUES (9, 'own')");
    assert_eq!(copy_of(&run(&mut e, &mut kv, s, COPY)).1, "COPY 3");
    run(&mut e, &mut kv, s, "ROLLBACK");
    assert_eq!(copy_of(&run(&mut e, &mut kv, other, COPY)), before);
    assert_eq!(e.st.copies.hits(), hits + 1, "only the last COPY hit");

    // A repeatable-read snapshot taken before a commit reads the old rows, after the cache
    // was filled at the new commit point.
    run(&mut e, &mut kv, s, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    assert_eq!(copy_of(&run(&mut e, &mut kv, s, COPY)), before);
    run(&mut e, &mut kv, other, "INSERT INTO t VALUES (4, 'd')");
    assert_eq!(copy_of(&run(&mut e, &mut kv, other, COPY)).1, "COPY 3");
    assert_eq!(copy_of(&run(&mut e, &mut kv, s, COPY)), before);
    run(&mut e, &mut kv, s, "COMMIT");
    assert_eq!(copy_of(&run(&mut e, &mut kv, s, COPY)).1, "COPY 3");
}

#[test]
fn statements_that_depend_on_the_session_are_not_kept() {
    let (mut kv, mut e, s) = setup();
    for sql in [
        // search_path decides which table an unqualified name is.
        "COPY (SELECT id FROM t) TO STDOUT (FORMAT binary)",
        // The clock.
        "COPY (SELECT id, now() FROM \"public\".t) TO STDOUT (FORMAT binary)",
        // The session.
        "COPY (SELECT current_user, id FROM \"public\".t) TO STDOUT (FORMAT binary)",
        // Casts that look names up (regclass through search_path).
        "COPY (SELECT id, 't'::regclass FROM \"public\".t) TO STDOUT (FORMAT binary)",
        "COPY (SELECT id, 'int8'::regtype FROM \"public\".t) TO STDOUT (FORMAT binary)",
        // pg_catalog is derived per session (search_path, settings).
        "COPY (SELECT nspname FROM pg_catalog.pg_namespace) TO STDOUT (FORMAT binary)",
        // Text COPY is formatted by session settings.
        "COPY (SELECT id, v FROM \"public\".t) TO STDOUT",
    ] {
        assert_executed_twice(&mut e, &mut kv, s, sql, copy_of, sql.contains("now()"));
    }
    // Deterministic functions and aggregates over qualified tables are kept.
    let agg = "COPY (SELECT max(id), count(*), lower(min(v)) FROM \"public\".t) TO STDOUT (FORMAT binary)";
    let first = copy_of(&run(&mut e, &mut kv, s, agg));
    let hits = e.st.copies.hits();
    assert_eq!(copy_of(&run(&mut e, &mut kv, s, agg)), first);
    assert_eq!(e.st.copies.hits(), hits + 1);
}

#[test]
fn the_cache_keeps_a_bounded_number_of_statements() {
    let (mut kv, mut e, s) = setup();
    let limit = rocklake_core::copycache::COPY_CACHE_ENTRIES;
    for i in 0..limit + 10 {
        let sql =
            format!("COPY (SELECT id FROM \"public\".t WHERE id > {i}) TO STDOUT (FORMAT binary)");
        run(&mut e, &mut kv, s, &sql);
        assert!(
            e.st.copies.len() <= limit,
            "{} statements kept",
            e.st.copies.len()
        );
    }
    assert!(!e.st.copies.is_empty());
    // The last one is still kept and answers the next read.
    let hits = e.st.copies.hits();
    let last = format!(
        "COPY (SELECT id FROM \"public\".t WHERE id > {}) TO STDOUT (FORMAT binary)",
        limit + 9
    );
    run(&mut e, &mut kv, s, &last);
    assert_eq!(e.st.copies.hits(), hits + 1);
}

/// DuckLake's file list read for one table (through RockLake's `table_id` index) and a point
/// read of another table.
const FILES_OF_1: &str = "COPY (SELECT data_file_id, path FROM \"public\".ducklake_data_file WHERE table_id = 1) TO STDOUT (FORMAT \"binary\")";
const T_ROW_2: &str =
    "COPY (SELECT v FROM \"public\".t WHERE id = 2) TO STDOUT (FORMAT \"binary\")";

#[test]
fn a_commit_drops_only_the_results_whose_reads_it_wrote_into() {
    let (mut kv, mut e, s) = setup();
    let other = e.open_session("t", "lake");
    run(
        &mut e,
        &mut kv,
        s,
        "CREATE TABLE ducklake_data_file (data_file_id BIGINT PRIMARY KEY, table_id BIGINT, path TEXT)",
    );
    run(
        &mut e,
        &mut kv,
        s,
        "INSERT INTO ducklake_data_file VALUES (1, 1, 'a.parquet'), (2, 2, 'b.parquet')",
    );
    let files = copy_of(&run(&mut e, &mut kv, s, FILES_OF_1));
    assert_eq!(files.1, "COPY 1");
    let row = copy_of(&run(&mut e, &mut kv, s, T_ROW_2));
    assert_eq!(row.1, "COPY 1");

    // Files of another table, and a row of t that is not row 2: both results stay.
    run(
        &mut e,
        &mut kv,
        other,
        "INSERT INTO ducklake_data_file VALUES (3, 2, 'c.parquet')",
    );
    run(&mut e, &mut kv, other, "UPDATE t SET v = 'x' WHERE id = 1");
    let hits = e.st.copies.hits();
    assert_eq!(copy_of(&run(&mut e, &mut kv, s, FILES_OF_1)), files);
    assert_eq!(copy_of(&run(&mut e, &mut kv, s, T_ROW_2)), row);
    assert_eq!(e.st.copies.hits(), hits + 2, "both answered from the cache");

    // A file of table 1: its list is read again and shows it; row 2 stays kept.
    run(
        &mut e,
        &mut kv,
        other,
        "INSERT INTO ducklake_data_file VALUES (4, 1, 'd.parquet')",
    );
    let hits = e.st.copies.hits();
    let grown = copy_of(&run(&mut e, &mut kv, s, FILES_OF_1));
    assert_eq!(grown.1, "COPY 2");
    assert_eq!(copy_of(&run(&mut e, &mut kv, s, T_ROW_2)), row);
    assert_eq!(e.st.copies.hits(), hits + 1, "only row 2 hit");

    // Moving a file from table 1 to table 2 changes table 1's list (its old index entry goes).
    run(
        &mut e,
        &mut kv,
        other,
        "UPDATE ducklake_data_file SET table_id = 2 WHERE data_file_id = 4",
    );
    assert_eq!(copy_of(&run(&mut e, &mut kv, s, FILES_OF_1)), files);
    // Deleting row 2 of t changes its result.
    run(&mut e, &mut kv, other, "DELETE FROM t WHERE id = 2");
    assert_eq!(copy_of(&run(&mut e, &mut kv, s, T_ROW_2)).1, "COPY 0");

    // A commit that changes the registry drops every result: binding read it.
    run(&mut e, &mut kv, s, FILES_OF_1);
    let hits = e.st.copies.hits();
    run(&mut e, &mut kv, other, "CREATE TABLE unrelated (x BIGINT)");
    run(&mut e, &mut kv, s, FILES_OF_1);
    assert_eq!(e.st.copies.hits(), hits);
}

#[test]
fn a_view_read_is_kept_until_the_view_or_what_it_reads_changes() {
    let (mut kv, mut e, s) = setup();
    let other = e.open_session("t", "lake");
    run(
        &mut e,
        &mut kv,
        s,
        "CREATE VIEW v AS SELECT id, v FROM t WHERE id > 1",
    );
    let sql = "COPY (SELECT * FROM \"public\".v) TO STDOUT (FORMAT binary)";
    let first = copy_of(&run(&mut e, &mut kv, s, sql));
    assert_eq!(first.1, "COPY 1");
    let hits = e.st.copies.hits();
    assert_eq!(copy_of(&run(&mut e, &mut kv, other, sql)), first);
    assert_eq!(
        e.st.copies.hits(),
        hits + 1,
        "a qualified view's read is kept"
    );

    // A row of the table the view reads.
    run(&mut e, &mut kv, other, "INSERT INTO t VALUES (3, 'c')");
    let grown = copy_of(&run(&mut e, &mut kv, s, sql));
    assert_eq!(grown.1, "COPY 2");

    // The view replaced: same name, another query; the kept result must not answer.
    run(
        &mut e,
        &mut kv,
        other,
        "CREATE OR REPLACE VIEW v AS SELECT id, v FROM t WHERE id > 2",
    );
    let hits = e.st.copies.hits();
    assert_eq!(copy_of(&run(&mut e, &mut kv, s, sql)).1, "COPY 1");
    assert_eq!(e.st.copies.hits(), hits);

    // Named through search_path, or with the clock inside the view: executed each time.
    assert_executed_twice(
        &mut e,
        &mut kv,
        s,
        "COPY (SELECT * FROM v) TO STDOUT (FORMAT binary)",
        copy_of,
        false,
    );
    run(
        &mut e,
        &mut kv,
        s,
        "CREATE VIEW clock AS SELECT id, now() AS at FROM t",
    );
    assert_executed_twice(
        &mut e,
        &mut kv,
        s,
        "COPY (SELECT * FROM \"public\".clock) TO STDOUT (FORMAT binary)",
        copy_of,
        true,
    );
}
