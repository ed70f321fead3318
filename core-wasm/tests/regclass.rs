//! `regclass`, `regtype` and `regnamespace` values are written as PostgreSQL's output functions
//! write them: the object's name (a relation's qualified when search_path does not find it,
//! quoted where needed), `-` for 0, the number for an OID that names nothing; sorted and
//! compared as OIDs.

mod common;

use common::{copy_of, fresh, rows_of, run, run_ok};

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

#[test]
fn regtype_and_regnamespace_are_oids_written_as_names() {
    let (mut kv, mut e, s) = fresh();
    let cases: &[(&str, &[&str])] = &[
        (
            "SELECT 'int4'::regtype, pg_typeof(1), 'int4'::regtype::oid, 23::regtype, 0::regtype, 0::regclass",
            &["integer", "integer", "23", "integer", "-", "-"],
        ),
        (
            "SELECT 'varchar(10)'::regtype, 'character varying'::regtype, '_int4'::regtype,              'int4[]'::regtype, 'pg_catalog.text'::regtype::text, pg_typeof('a')",
            &[
                "character varying",
                "character varying",
                "integer[]",
                "integer[]",
                "text",
                "unknown",
            ],
        ),
        // Compared as OIDs, with OID columns.
        (
            "SELECT typname FROM pg_type WHERE oid = 'int4'::regtype",
            &["int4"],
        ),
        (
            "SELECT (pg_typeof(1) = 'integer'::regtype)::text, pg_typeof(1.5)::text",
            &["true", "numeric"],
        ),
        (
            "SELECT 'public'::regnamespace, 'public'::regnamespace::oid, 11::regnamespace,              99999::regnamespace",
            &["public", "2200", "pg_catalog", "99999"],
        ),
        (
            "SELECT count(*) FROM pg_class WHERE relnamespace = 'pg_catalog'::regnamespace \
             AND relname = 'pg_class'",
            &["1"],
        ),
    ];
    for (sql, want) in cases {
        let got = one_row(&run_ok(&mut e, &mut kv, s, sql));
        let want: Vec<Option<String>> = want.iter().map(|w| Some(w.to_string())).collect();
        assert_eq!(got, want, "{sql}");
    }
    for (sql, code, message) in [
        (
            "SELECT 'nosuch'::regtype",
            "42704",
            "type \"nosuch\" does not exist",
        ),
        (
            "SELECT 'nosuch'::regnamespace",
            "3F000",
            "schema \"nosuch\" does not exist",
        ),
    ] {
        let err = run(&mut e, &mut kv, s, sql).error.expect("refused");
        assert_eq!((err.code.as_str(), err.message.as_str()), (code, message));
    }
    // A type's name gives back its OID (regtypesend); a schema's needs the catalog.
    assert!(rocklake_core::params::binary_result_supported(2206));
    assert!(!rocklake_core::params::binary_result_supported(4089));
}
