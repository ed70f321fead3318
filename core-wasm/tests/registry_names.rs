//! Table names resolve through the registry's name index (`Shared::table_ids_by_name`), which
//! must say exactly what the registry says after every CREATE, DROP, rollback and reopen.

mod common;

use std::collections::HashMap;

use common::{run, run_ok};
use rocklake_core::api::last_text_rows;
use rocklake_core::Engine;

/// The index rebuilt from the registry itself.
fn rebuilt(e: &Engine) -> HashMap<String, Vec<u32>> {
    let mut m: HashMap<String, Vec<u32>> = HashMap::new();
    for t in e.st.tables.values() {
        m.entry(t.name.clone()).or_default().push(t.id);
    }
    m
}

#[test]
fn the_name_index_follows_the_registry() {
    let (mut kv, mut e, s) = common::fresh();
    let check = |e: &Engine, step: &str| assert_eq!(e.st.table_ids_by_name, rebuilt(e), "{step}");
    let one = |e: &mut Engine, kv: &mut rocklake_core::memkv::MemKv, sql: &str| {
        last_text_rows(&run_ok(e, kv, s, sql).outputs)[0][0].clone()
    };
    run_ok(&mut e, &mut kv, s, "CREATE TABLE t (x BIGINT)");
    run_ok(&mut e, &mut kv, s, "INSERT INTO t VALUES (1)");
    run_ok(&mut e, &mut kv, s, "CREATE SCHEMA s2");
    run_ok(&mut e, &mut kv, s, "CREATE TABLE s2.t (y TEXT)");
    run_ok(&mut e, &mut kv, s, "INSERT INTO s2.t VALUES ('two')");
    run_ok(&mut e, &mut kv, s, "CREATE TABLE u (z BIGINT)");
    check(&e, "created");
    assert_eq!(e.st.table_ids_by_name["t"].len(), 2);
    assert_eq!(
        one(&mut e, &mut kv, "SELECT x FROM t").as_deref(),
        Some("1")
    );
    assert_eq!(
        one(&mut e, &mut kv, "SELECT y FROM s2.t").as_deref(),
        Some("two")
    );
    // A drop rolled back leaves the name; inside the transaction the name is gone.
    run_ok(&mut e, &mut kv, s, "BEGIN");
    run_ok(&mut e, &mut kv, s, "DROP TABLE t");
    assert_eq!(
        run(&mut e, &mut kv, s, "SELECT x FROM t")
            .error
            .map(|x| x.code),
        Some("42P01".into())
    );
    run_ok(&mut e, &mut kv, s, "ROLLBACK");
    check(&e, "rolled back");
    assert_eq!(
        one(&mut e, &mut kv, "SELECT x FROM t").as_deref(),
        Some("1")
    );
    // Dropped for good: public.t is gone, s2.t stays (and is not on the search path).
    run_ok(&mut e, &mut kv, s, "DROP TABLE t");
    check(&e, "dropped");
    assert_eq!(e.st.table_ids_by_name["t"].len(), 1);
    assert_eq!(
        run(&mut e, &mut kv, s, "SELECT x FROM t")
            .error
            .map(|x| x.code),
        Some("42P01".into())
    );
    assert_eq!(
        one(&mut e, &mut kv, "SELECT y FROM s2.t").as_deref(),
        Some("two")
    );
    run_ok(&mut e, &mut kv, s, "SET search_path = s2, public");
    assert_eq!(
        one(&mut e, &mut kv, "SELECT y FROM t").as_deref(),
        Some("two")
    );
    run_ok(&mut e, &mut kv, s, "DROP TABLE u");
    check(&e, "dropped u");
    assert!(!e.st.table_ids_by_name.contains_key("u"));
    // The same name again gets a new table; a reopened engine builds the same index.
    run_ok(
        &mut e,
        &mut kv,
        s,
        "CREATE TABLE public.t (x BIGINT, w TEXT)",
    );
    run_ok(
        &mut e,
        &mut kv,
        s,
        "ALTER TABLE public.t ADD COLUMN v BIGINT",
    );
    check(&e, "created again");
    let reopened = Engine::open(&kv).expect("open");
    assert_eq!(reopened.st.table_ids_by_name, e.st.table_ids_by_name);
    check(&reopened, "reopened");
}

/// Unquoted identifiers fold as PostgreSQL folds them in a UTF-8 database: ASCII letters only
/// (`CREATE TABLE Tä_Ö (Ä INT)` makes table `tä_Ö` with column `Ä`, as PostgreSQL 15 does).
#[test]
fn unquoted_names_fold_only_ascii_letters() {
    let (mut kv, mut e, s) = common::fresh();
    run_ok(&mut e, &mut kv, s, "CREATE TABLE Tä_Ö (Ä INT, Bé INT)");
    // `TÄ_Ö` folds to `tÄ_Ö`, another name; `T`, `B` fold, `Ä`, `é` stay.
    let r = run(&mut e, &mut kv, s, "INSERT INTO TÄ_Ö (Ä, Bé) VALUES (1, 2)");
    assert_eq!(r.error.map(|e| e.code).as_deref(), Some("42P01"));
    run_ok(&mut e, &mut kv, s, "INSERT INTO Tä_Ö (Ä, Bé) VALUES (1, 2)");
    let names = last_text_rows(
        &run_ok(
            &mut e,
            &mut kv,
            s,
            "SELECT relname, attname FROM pg_class JOIN pg_attribute ON attrelid = pg_class.oid \
             WHERE relname LIKE 't_\\_%' AND attnum > 0 ORDER BY attnum",
        )
        .outputs,
    );
    let names: Vec<(String, String)> = names
        .into_iter()
        .map(|r| {
            (
                r[0].clone().unwrap_or_default(),
                r[1].clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [("tä_Ö".into(), "Ä".into()), ("tä_Ö".into(), "bé".into())]
    );
    let one = |e: &mut Engine, kv: &mut rocklake_core::memkv::MemKv, sql: &str| {
        last_text_rows(&run_ok(e, kv, s, sql).outputs)[0][0].clone()
    };
    assert_eq!(
        one(&mut e, &mut kv, r#"SELECT Ä + Bé FROM "tä_Ö""#).as_deref(),
        Some("3")
    );
    let r = run(&mut e, &mut kv, s, r#"SELECT BÉ FROM "tä_Ö""#);
    assert_eq!(r.error.map(|e| e.code).as_deref(), Some("42703"));
    let r = run(&mut e, &mut kv, s, r#"SELECT * FROM "tä_ö""#);
    assert_eq!(r.error.map(|e| e.code).as_deref(), Some("42P01"));
    // SET values fold the same way (PostgreSQL 15 shows `"Ä", public, "Bé"`).
    run_ok(&mut e, &mut kv, s, r#"SET search_path = Ä, Public, "Bé""#);
    assert_eq!(
        one(&mut e, &mut kv, "SHOW search_path").as_deref(),
        Some(r#""Ä", public, "Bé""#)
    );
}
