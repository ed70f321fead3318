//! `regclass` values are written as PostgreSQL's `regclassout` writes them: the relation's name,
//! qualified when search_path does not find it, quoted where needed, the number for an OID that
//! names nothing; sorted and compared as OIDs.

mod common;

use common::{copy_of, fresh, rows_of, run_ok};

fn one_row(r: &rocklake_core::api::Reply) -> Vec<Option<String>> {
    rows_of(r).into_iter().next().expect("a row")
}

#[test]
fn regclass_is_written_as_the_relation_name() {
    let (mut kv, mut e, s) = fresh();
    for sql in [
        "CREATE SCHEMA s2",
        "CREATE TABLE s2.x (a INT PRIMARY KEY)",
        "CREATE TABLE \"Mixed\" (a INT)",
        "CREATE TABLE t (a INT PRIMARY KEY)",
    ] {
        run_ok(&mut e, &mut kv, s, sql);
    }
    let sql = "SELECT 'pg_class'::regclass, 't'::regclass, 't_pkey'::regclass, 's2.x'::regclass, \
               's2.x_pkey'::regclass, '\"Mixed\"'::regclass, 'information_schema.tables'::regclass, \
               99999::regclass, 's2.x'::regclass::text";
    let want = [
        "pg_class",
        "t",
        "t_pkey",
        "s2.x",
        "s2.x_pkey",
        "\"Mixed\"",
        "information_schema.tables",
        "99999",
        "s2.x",
    ];
    let got = one_row(&run_ok(&mut e, &mut kv, s, sql));
    assert_eq!(got, want.map(|w| Some(w.to_string())).to_vec());
    // On the search path, the bare name finds it: written unqualified.
    run_ok(&mut e, &mut kv, s, "SET search_path = s2, public");
    let got = one_row(&run_ok(
        &mut e,
        &mut kv,
        s,
        "SELECT 's2.x'::regclass, 't'::regclass",
    ));
    assert_eq!(got, vec![Some("x".into()), Some("t".into())]);
    // Ordered by OID, not by name (pg_class's OID is the smallest).
    let ordered = rows_of(&run_ok(
        &mut e,
        &mut kv,
        s,
        "SELECT oid::regclass FROM pg_class WHERE relname IN ('x', 'pg_class', 't') ORDER BY 1",
    ));
    assert_eq!(ordered.first(), Some(&vec![Some("pg_class".into())]));
    assert_eq!(ordered.len(), 3);
    // COPY's text output writes names too.
    let (chunks, _) = copy_of(&run_ok(
        &mut e,
        &mut kv,
        s,
        "COPY (SELECT 't'::regclass, 'pg_class'::regclass) TO STDOUT",
    ));
    assert_eq!(chunks.concat(), b"t\tpg_class\n");
    // A name cannot come back as the OID binary output needs: refused before executing.
    assert!(!rocklake_core::params::binary_result_supported(2205));
    assert!(rocklake_core::params::binary_result_supported(26));
}
