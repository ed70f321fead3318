//! Results of catalog queries (`SELECT`s over `pg_catalog` / `information_schema` relations,
//! which are derived from the registry) are kept like binary COPY results (copycache.rs), for
//! sessions of the same user and database. A kept result must be exactly what executing the
//! query again would give: these tests check that hits happen where they may, and that every
//! change the query could see — DDL, the session's own DDL, the user, the database, settings,
//! a user table that could take the name — makes it execute again.

mod common;

use rocklake_core::api::SessionId;
use rocklake_core::memkv::MemKv;
use rocklake_core::Engine;

use common::{assert_executed_twice, rows_of, run_ok as run};

/// The shape of DuckDB's column introspection at ATTACH: catalogs joined on their keys, a
/// LEFT JOIN, and an ORDER BY over joined columns.
const COLUMNS: &str = "SELECT pg_namespace.nspname, relname, attname, pg_type.typname, attnum, \
     col_desc.description \
     FROM pg_class JOIN pg_namespace ON relnamespace = pg_namespace.oid \
     JOIN pg_attribute ON pg_class.oid = pg_attribute.attrelid \
     JOIN pg_type ON atttypid = pg_type.oid \
     LEFT JOIN pg_description col_desc ON col_desc.objoid = pg_class.oid \
       AND col_desc.objsubid = pg_attribute.attnum \
     WHERE attnum > 0 AND relkind = 'r' AND pg_namespace.nspname NOT IN ('pg_catalog', 'information_schema') \
     ORDER BY pg_namespace.nspname, relname, attnum";

fn setup() -> (MemKv, Engine, SessionId) {
    let (mut kv, mut e, s) = common::fresh();
    run(
        &mut e,
        &mut kv,
        s,
        "CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT)",
    );
    (kv, e, s)
}

fn row(parts: &[&str]) -> Vec<Option<String>> {
    parts
        .iter()
        .map(|p| (*p != "NULL").then(|| p.to_string()))
        .collect()
}

#[test]
fn a_catalog_query_is_kept_until_the_registry_changes() {
    let (mut kv, mut e, s) = setup();
    let other = e.open_session("t", "lake");
    let first = rows_of(&run(&mut e, &mut kv, s, COLUMNS));
    assert_eq!(
        first,
        vec![
            row(&["public", "t", "id", "int8", "1", "NULL"]),
            row(&["public", "t", "v", "text", "2", "NULL"]),
        ]
    );
    let hits = e.st.copies.hits();
    assert_eq!(rows_of(&run(&mut e, &mut kv, other, COLUMNS)), first);
    assert_eq!(
        e.st.copies.hits(),
        hits + 1,
        "another session of the same user hits"
    );

    // Rows written into a table do not change the catalog: still kept.
    run(&mut e, &mut kv, other, "INSERT INTO t VALUES (1, 'a')");
    assert_eq!(rows_of(&run(&mut e, &mut kv, s, COLUMNS)), first);
    assert_eq!(e.st.copies.hits(), hits + 2);

    // A new table (and a column added) change it: executed again, and kept again.
    run(&mut e, &mut kv, other, "CREATE TABLE u (x INTEGER)");
    run(
        &mut e,
        &mut kv,
        other,
        "ALTER TABLE t ADD COLUMN w DOUBLE PRECISION",
    );
    let grown = rows_of(&run(&mut e, &mut kv, s, COLUMNS));
    assert_eq!(e.st.copies.hits(), hits + 2);
    assert_eq!(
        grown,
        vec![
            row(&["public", "t", "id", "int8", "1", "NULL"]),
            row(&["public", "t", "v", "text", "2", "NULL"]),
            row(&["public", "t", "w", "float8", "3", "NULL"]),
            row(&["public", "u", "x", "int4", "1", "NULL"]),
        ]
    );
    assert_eq!(rows_of(&run(&mut e, &mut kv, s, COLUMNS)), grown);
    assert_eq!(e.st.copies.hits(), hits + 3);

    // A kept result is what an engine with empty caches computes over the same store.
    let mut fresh = Engine::open(&kv).expect("reopen");
    let fs = fresh.open_session("t", "lake");
    assert_eq!(rows_of(&run(&mut fresh, &mut kv, fs, COLUMNS)), grown);

    // A dropped table goes from the result.
    run(&mut e, &mut kv, other, "DROP TABLE u");
    let shrunk = rows_of(&run(&mut e, &mut kv, s, COLUMNS));
    assert_eq!(shrunk, grown[..3].to_vec());
}

#[test]
fn catalog_results_are_kept_per_user_and_database() {
    let (mut kv, mut e, s) = setup();
    // The schema ACLs name the session's user; information_schema names its database.
    let acl = "SELECT nspname, nspacl FROM pg_catalog.pg_namespace WHERE nspname = 'pg_catalog'";
    let cat =
        "SELECT table_catalog, table_name FROM information_schema.tables WHERE table_name = 't'";
    let mine = (
        rows_of(&run(&mut e, &mut kv, s, acl)),
        rows_of(&run(&mut e, &mut kv, s, cat)),
    );
    assert_eq!(mine.0[0][1].as_deref(), Some("{t=UC/t,=U/t}"));
    assert_eq!(mine.1, vec![row(&["lake", "t"])]);
    let hits = e.st.copies.hits();
    let bob = e.open_session("bob", "lake");
    let other_db = e.open_session("t", "lake2");
    assert_eq!(
        rows_of(&run(&mut e, &mut kv, bob, acl))[0][1].as_deref(),
        Some("{bob=UC/bob,=U/bob}")
    );
    assert_eq!(
        rows_of(&run(&mut e, &mut kv, other_db, cat)),
        vec![row(&["lake2", "t"])]
    );
    assert_eq!(
        e.st.copies.hits(),
        hits,
        "another user or database never hits"
    );
    // Each is kept for its own sessions.
    assert_eq!(
        rows_of(&run(&mut e, &mut kv, other_db, cat)),
        vec![row(&["lake2", "t"])]
    );
    assert_eq!(e.st.copies.hits(), hits + 1);
}

#[test]
fn catalog_reads_that_depend_on_the_session_are_not_kept() {
    let (mut kv, mut e, s) = setup();
    run(&mut e, &mut kv, s, "CREATE SCHEMA s2");
    run(&mut e, &mut kv, s, "CREATE TABLE s2.pg_type (x INTEGER)");
    for sql in [
        // The session's settings.
        "SELECT setting FROM pg_settings WHERE name = 'search_path'",
        // The clock.
        "SELECT relname, now() FROM pg_catalog.pg_class WHERE relname = 't'",
        // An unqualified name a user table has: another search_path finds that table.
        "SELECT typname FROM pg_type WHERE typname = 'int8'",
        // Names looked up through search_path.
        "SELECT relname FROM pg_catalog.pg_class WHERE oid = 't'::regclass",
    ] {
        assert_executed_twice(&mut e, &mut kv, s, sql, rows_of, sql.contains("now()"));
    }
    // Settings: a changed search_path shows at once.
    run(&mut e, &mut kv, s, "SET search_path = s2, public");
    assert_eq!(
        rows_of(&run(
            &mut e,
            &mut kv,
            s,
            "SELECT setting FROM pg_settings WHERE name = 'search_path'"
        )),
        vec![row(&["s2, public"])]
    );

    // The session's own DDL shows to it and is not kept; after ROLLBACK it is gone.
    let tables =
        "SELECT relname FROM pg_catalog.pg_class WHERE relname IN ('t', 'mine') ORDER BY relname";
    run(&mut e, &mut kv, s, "BEGIN");
    run(&mut e, &mut kv, s, "CREATE TABLE mine (x INTEGER)");
    assert_eq!(
        rows_of(&run(&mut e, &mut kv, s, tables)),
        vec![row(&["mine"]), row(&["t"])]
    );
    run(&mut e, &mut kv, s, "ROLLBACK");
    assert_eq!(rows_of(&run(&mut e, &mut kv, s, tables)), vec![row(&["t"])]);
}

#[test]
fn many_small_copies_do_not_push_out_kept_catalog_results() {
    let (mut kv, mut e, s) = setup();
    let first = rows_of(&run(&mut e, &mut kv, s, COLUMNS));
    // DuckDB's SHOW ALL TABLES reads two small COPYs per table: more statements than the COPY
    // results' bound.
    for i in 0..rocklake_core::copycache::COPY_CACHE_ENTRIES + 10 {
        run(
            &mut e,
            &mut kv,
            s,
            &format!(
                "COPY (SELECT id FROM \"public\".t WHERE id = {i}) TO STDOUT (FORMAT \"binary\")"
            ),
        );
    }
    let hits = e.st.copies.hits();
    assert_eq!(rows_of(&run(&mut e, &mut kv, s, COLUMNS)), first);
    assert_eq!(
        e.st.copies.hits(),
        hits + 1,
        "the catalog result was pushed out"
    );
}
