use std::sync::Arc;

use super::*;
use crate::types::format_text;

const DLMETA_OID: u32 = 17_343;

fn col(name: &str, ty: PgType, typmod: i32, not_null: bool, default_sql: Option<&str>) -> Column {
    Column {
        name: name.into(),
        ty,
        typmod,
        not_null,
        default_sql: default_sql.map(str::to_string),
        identity: None,
        serial: None,
        comment: None,
    }
}

/// `CREATE TABLE "dlmeta"."ducklake_snapshot"("snapshot_id" BIGINT PRIMARY KEY, "snapshot_time"
/// TIMESTAMP WITH TIME ZONE, "schema_version" BIGINT, "next_catalog_id" BIGINT, "next_file_id" BIGINT)`
fn snapshot() -> Table {
    Table {
        id: 1,
        oid: 17_344,
        schema: "dlmeta".into(),
        name: "ducklake_snapshot".into(),
        columns: vec![
            // the PK column as a CREATE TABLE might record it: NOT NULL left implicit
            col("snapshot_id", PgType::Int8, -1, false, None),
            col("snapshot_time", PgType::Timestamptz, -1, false, None),
            col("schema_version", PgType::Int8, -1, false, None),
            col("next_catalog_id", PgType::Int8, -1, false, None),
            col("next_file_id", PgType::Int8, -1, false, None),
        ],
        primary_key: vec![0],
        pkey_name: "ducklake_snapshot_pkey".into(),
        indexes: vec![],
        version: 731,
        layout: 0,
        sequence: None,
        view: None,
        comment: None,
        pkey_comment: None,
        pkey_constraint_comment: None,
        shape: 0,
    }
}

/// `CREATE TABLE IF NOT EXISTS "dlmeta".ducklake_inlined_data_1_1(row_id BIGINT, begin_snapshot
/// BIGINT, end_snapshot BIGINT, a INTEGER)` plus columns shaped like ducklake_inlined_data_2_2's
/// (`u64 VARCHAR`, `d1 DECIMAL(9,2)`, `s BYTEA`) and one with a default.
fn inlined() -> Table {
    Table {
        id: 2,
        oid: 17_400,
        schema: "dlmeta".into(),
        name: "ducklake_inlined_data_1_1".into(),
        columns: vec![
            col("row_id", PgType::Int8, -1, false, None),
            col("begin_snapshot", PgType::Int8, -1, false, None),
            col("end_snapshot", PgType::Int8, -1, false, None),
            col("a", PgType::Int4, -1, false, None),
            col("u64", PgType::Varchar, -1, false, None),
            col("d1", PgType::Numeric, 589_830, false, None),
            col("s", PgType::Bytea, -1, false, None),
            col(
                "v20",
                PgType::Varchar,
                24,
                true,
                Some("'x'::character varying"),
            ),
        ],
        primary_key: vec![],
        pkey_name: String::new(),
        indexes: vec![],
        version: 0,
        layout: 0,
        sequence: None,
        view: None,
        comment: None,
        pkey_comment: None,
        pkey_constraint_comment: None,
        shape: 0,
    }
}

struct Fixture {
    schemas: Vec<Schema>,
    tables: Vec<TableRef>,
}

fn fixture() -> Fixture {
    Fixture {
        schemas: vec![Schema {
            name: "dlmeta".into(),
            oid: DLMETA_OID,
            comment: None,
        }],
        tables: vec![Arc::new(snapshot()), Arc::new(inlined())],
    }
}

fn counts(id: u32) -> u64 {
    if id == 2 {
        35
    } else {
        0
    }
}

fn view(f: &Fixture) -> CatalogView<'_> {
    CatalogView {
        schemas: &f.schemas,
        tables: &f.tables,
        database: "lake",
        user: "postgres",
        row_counts: &counts,
        settings: None,
        txid: 900,
        cursors: &Vec::new,
        activity: &Vec::new,
        locks: &Vec::new,
        now: 0,
        sequence_value: &|_| None,
        view_reads: &|_| Vec::new(),
    }
}

/// The relation as built, without its `tableoid` (checked in
/// `pg_class_xmin_is_the_definitions_version`).
fn get(schema: Option<&str>, name: &str, f: &Fixture) -> VirtualTable {
    let mut vt = build(schema, name, &view(f)).unwrap_or_else(|| panic!("{name} must be virtual"));
    if let Some(i) = vt.columns.iter().position(|c| c.name == "tableoid") {
        vt.columns.remove(i);
        for r in &mut vt.rows {
            r.remove(i);
        }
    }
    vt
}

#[test]
fn relations_built_for_some_columns_hold_the_same_values_in_them() {
    let f = fixture();
    let all_relations = [
        "pg_class",
        "pg_attribute",
        "pg_type",
        "pg_namespace",
        "pg_index",
    ];
    for name in all_relations {
        let full = get(None, name, &f);
        let width = full.columns.len();
        for column in 0..width {
            let mut columns = vec![false; width];
            columns[column] = true;
            let part = build_only(None, name, &view(&f), None, Some(&columns))
                .unwrap_or_else(|| panic!("{name} must be virtual"));
            assert_eq!(part.rows.len(), full.rows.len(), "{name}");
            for (p, r) in part.rows.iter().zip(&full.rows) {
                assert_eq!(
                    p.get(column),
                    r.get(column),
                    "{name}.{} built alone",
                    full.columns[column].name
                );
            }
        }
        // Columns nobody reads are left out where building them costs a string.
        let none = vec![false; width];
        let bare = build_only(None, name, &view(&f), None, Some(&none)).expect("virtual");
        let strings = |rows: &[Vec<Value>]| {
            rows.iter()
                .flatten()
                .filter(|v| matches!(v, Value::Text(s) if !s.is_empty()))
                .count()
        };
        if ["pg_class", "pg_attribute", "pg_type"].contains(&name) {
            assert_eq!(
                strings(&bare.rows),
                0,
                "{name}: strings built for no reader"
            );
        }
    }
    // The column a row filter reads is built even when the caller reads no column.
    for (name, column) in [("pg_class", "relname"), ("pg_type", "typname")] {
        let full = get(None, name, &f);
        let c = ci(&full, column);
        let keep = |p: Probe<'_>| match p {
            Probe::Value(v) => *v == t("ducklake_snapshot"),
            Probe::Name(prefix, name) => format!("{prefix}{name}") == "ducklake_snapshot",
            Probe::Oid(_) => panic!("{name}: filtered on {column}, probed by OID"),
        };
        let only = Only {
            column: c,
            keep: &keep,
        };
        let none = vec![false; full.columns.len()];
        let part = build_only(None, name, &view(&f), Some(&only), Some(&none)).expect("virtual");
        assert_eq!(part.rows.len(), 1, "{name} filtered on {column}");
        assert_eq!(part.rows[0][c], t("ducklake_snapshot"));
    }
    // An array type is probed by its name's parts ("_" + the element's name).
    let full = get(None, "pg_type", &f);
    let c = ci(&full, "typname");
    let keep = |p: Probe<'_>| match p {
        Probe::Value(v) => *v == t("_int8"),
        Probe::Name(prefix, name) => format!("{prefix}{name}") == "_int8",
        Probe::Oid(_) => panic!("pg_type filtered on typname, probed by OID"),
    };
    let only = Only {
        column: c,
        keep: &keep,
    };
    let part = build_only(None, "pg_type", &view(&f), Some(&only), None).expect("virtual");
    assert_eq!(part.rows.len(), 1);
    assert_eq!(part.rows[0][c], t("_int8"));
}

/// Column index by name.
fn ci(vt: &VirtualTable, name: &str) -> usize {
    vt.columns
        .iter()
        .position(|c| c.name == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

/// A row's value in text format, as the wire carries it.
fn txt(vt: &VirtualTable, row: &[Value], name: &str) -> Option<String> {
    let i = ci(vt, name);
    format_text(&row[i], vt.columns[i].ty)
}

fn rows_where<'v>(vt: &'v VirtualTable, name: &str, value: &str) -> Vec<&'v Vec<Value>> {
    vt.rows
        .iter()
        .filter(|r| txt(vt, r, name).as_deref() == Some(value))
        .collect()
}

/// The catalogs kept empty are not listed (DuckDB's ATTACH reads every listed relation's
/// columns), yet can be read by name.
#[test]
fn empty_catalogs_are_readable_but_not_listed() {
    let f = fixture();
    let class = get(None, "pg_class", &f);
    assert!(rows_where(&class, "relname", "pg_proc").is_empty());
    assert_eq!(rows_where(&class, "relname", "pg_class").len(), 1);
    let tables = get(None, "pg_tables", &f);
    assert!(rows_where(&tables, "tablename", "pg_trigger").is_empty());
    let proc_ = get(None, "pg_proc", &f);
    assert!(proc_.rows.is_empty());
    assert!(proc_.columns.iter().any(|c| c.name == "proname"));
    assert_eq!(relation_of(1255), Some(("pg_catalog", "pg_proc")));
}

/// Every relation: rows as wide as the column list, and every value of its column's type.
#[test]
fn every_relation_is_well_typed() {
    let f = fixture();
    for r in RELATIONS {
        let vt = build(Some(r.schema), r.name, &view(&f)).expect("virtual");
        assert_eq!(vt.rel_oid, r.oid);
        assert_eq!(
            columns(Some(r.schema), r.name).map(|(o, c)| (o, c.len())),
            Some((r.oid, vt.columns.len()))
        );
        for row in &vt.rows {
            assert_eq!(row.len(), vt.columns.len(), "{}: {row:?}", r.name);
            for (v, c) in row.iter().zip(&vt.columns) {
                let ok = match (v, c.ty) {
                    (Value::Null, _) => true,
                    (Value::Int(_), t) => t.is_integer() || t == PgType::Xid,
                    (Value::Float(_), t) => t == PgType::Float4,
                    (Value::Bool(_), t) => t == PgType::Bool,
                    (Value::Interval(_), t) => t == PgType::Interval,
                    (Value::Text(s), PgType::Char) => s.chars().count() <= 1,
                    (Value::Text(_), t) => t.is_string(),
                    (
                        Value::Array(items),
                        PgType::Int2Array | PgType::Int2Vector | PgType::OidVector,
                    ) => items.iter().all(|x| matches!(x, Value::Int(_))),
                    (Value::Array(items), PgType::TextArray) => {
                        items.iter().all(|x| matches!(x, Value::Text(_)))
                    }
                    _ => false,
                };
                assert!(ok, "{}.{}: {v:?} is not a {:?}", r.name, c.name, c.ty);
                assert_eq!(c.typmod, -1);
            }
        }
    }
}

#[test]
fn lookup_follows_search_path() {
    assert!(is_virtual(None, "pg_class"));
    assert!(is_virtual(Some("pg_catalog"), "pg_settings"));
    assert!(is_virtual(Some("information_schema"), "tables"));
    assert!(
        !is_virtual(None, "tables"),
        "information_schema is not on the search path"
    );
    assert!(!is_virtual(Some("public"), "pg_class"));
    assert!(!is_virtual(None, "ducklake_snapshot"));
    assert_eq!(columns(None, "pg_namespace").map(|(o, _)| o), Some(2615));
    assert_eq!(columns(None, "pg_class").map(|(o, _)| o), Some(1259));
    assert_eq!(columns(None, "pg_attribute").map(|(o, _)| o), Some(1249));
    assert_eq!(columns(None, "pg_type").map(|(o, _)| o), Some(1247));
    assert!(build(None, "nope", &view(&fixture())).is_none());
}

/// RowDescription fields PostgreSQL sent for DuckDB's catalog queries: (relation, column,
/// table_oid, attnum, type_oid).
#[test]
fn row_description_positions_match_the_trace() {
    let seen = [
        ("pg_namespace", "oid", 2615, 1, 26),
        ("pg_namespace", "nspname", 2615, 2, 19),
        ("pg_enum", "enumtypid", 3501, 2, 26),
        ("pg_enum", "enumlabel", 3501, 4, 19),
        ("pg_type", "typname", 1247, 2, 19),
        ("pg_type", "typrelid", 1247, 12, 26),
        ("pg_attribute", "attname", 1249, 2, 19),
        ("pg_indexes", "tablename", 12_043, 2, 19),
        ("pg_indexes", "indexname", 12_043, 3, 19),
    ];
    for (rel, column, table_oid, attnum, type_oid) in seen {
        let (oid_, cols) = columns(None, rel).unwrap_or_else(|| panic!("{rel}"));
        assert_eq!(oid_, table_oid, "{rel}");
        let pos = cols.iter().position(|c| c.name == column).map(|p| p + 1);
        assert_eq!(pos, Some(attnum), "{rel}.{column}");
        assert_eq!(cols[attnum - 1].ty.oid(), type_oid, "{rel}.{column}");
    }
    // the big column query's raw inputs
    let want = [
        ("pg_class", "relname", 19),
        ("pg_class", "relpages", 23),
        ("pg_attribute", "atttypmod", 23),
        ("pg_attribute", "attndims", 23),
        ("pg_attribute", "attnum", 21),
        ("pg_attribute", "attnotnull", 16),
        ("pg_constraint", "oid", 26),
        ("pg_constraint", "contype", 18),
        ("pg_constraint", "conkey", 1005),
        ("pg_description", "description", 25),
    ];
    for (rel, column, type_oid) in want {
        let (_, cols) = columns(None, rel).unwrap_or_else(|| panic!("{rel}"));
        assert_eq!(
            cols.iter().find(|c| c.name == column).map(|c| c.ty.oid()),
            Some(type_oid),
            "{rel}.{column}"
        );
    }
}

/// `SELECT oid, nspname FROM pg_namespace ORDER BY oid` (trace: 11 pg_catalog, 99 pg_toast,
/// 2200 public, ...; dlmeta was 17343).
#[test]
fn namespaces() {
    let f = fixture();
    let vt = get(None, "pg_namespace", &f);
    let got: Vec<(String, String)> = vt
        .rows
        .iter()
        .map(|r| {
            (
                txt(&vt, r, "oid").unwrap_or_default(),
                txt(&vt, r, "nspname").unwrap_or_default(),
            )
        })
        .collect();
    let want = [
        ("11", "pg_catalog"),
        ("99", "pg_toast"),
        ("2200", "public"),
        ("13000", "information_schema"),
        ("17343", "dlmeta"),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect::<Vec<_>>()
    );
}

/// DuckDB's per-table column query, evaluated over the virtual relations the way PostgreSQL
/// would (joins by oid, `attnum > 0`, `relkind IN ('r','v','m','f','p')`, `contype IN ('p','u')`).
fn duckdb_column_query(f: &Fixture, nspname: &str, relname: &str) -> Vec<Vec<Option<String>>> {
    let class = get(None, "pg_class", f);
    let ns = get(None, "pg_namespace", f);
    let att = get(None, "pg_attribute", f);
    let typ = get(None, "pg_type", f);
    let con = get(None, "pg_constraint", f);
    let nsp_oid = |name: &str| {
        rows_where(&ns, "nspname", name)
            .first()
            .and_then(|r| txt(&ns, r, "oid"))
    };
    let nsp_name = |o: &str| {
        rows_where(&ns, "oid", o)
            .first()
            .and_then(|r| txt(&ns, r, "nspname"))
    };
    let mut out = Vec::new();
    for c in &class.rows {
        let kind = txt(&class, c, "relkind").unwrap_or_default();
        if !["r", "v", "m", "f", "p"].contains(&kind.as_str())
            || txt(&class, c, "relname").as_deref() != Some(relname)
            || txt(&class, c, "relnamespace") != nsp_oid(nspname)
        {
            continue;
        }
        let coid = txt(&class, c, "oid");
        for a in rows_where(&att, "attrelid", coid.as_deref().unwrap_or_default()) {
            if txt(&att, a, "attnum")
                .and_then(|n| n.parse::<i64>().ok())
                .unwrap_or(0)
                <= 0
            {
                continue;
            }
            let ty =
                rows_where(&typ, "oid", &txt(&att, a, "atttypid").unwrap_or_default())[0].clone();
            out.push(vec![
                txt(&class, c, "relnamespace"),
                txt(&class, c, "relname"),
                txt(&class, c, "relpages"),
                txt(&att, a, "attname"),
                txt(&typ, &ty, "typname"),
                txt(&att, a, "atttypmod"),
                txt(&att, a, "attndims"),
                txt(&att, a, "attnum"),
                txt(&att, a, "attnotnull"),
                None,
                None,
                None,
                nsp_name(&txt(&typ, &ty, "typnamespace").unwrap_or_default()),
            ]);
        }
        for k in rows_where(&con, "conrelid", coid.as_deref().unwrap_or_default()) {
            let ct = txt(&con, k, "contype").unwrap_or_default();
            if ct == "p" || ct == "u" {
                out.push(vec![
                    txt(&class, c, "relnamespace"),
                    txt(&class, c, "relname"),
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    txt(&con, k, "oid"),
                    Some(ct),
                    txt(&con, k, "conkey"),
                    None,
                ]);
            }
        }
    }
    out
}

fn strs(row: &[Option<&str>]) -> Vec<Option<String>> {
    row.iter().map(|x| x.map(str::to_string)).collect()
}

#[test]
fn duckdb_column_query_matches_postgres() {
    let f = fixture();
    // Trace (order 3807): the first rows PostgreSQL returned for this very table.
    let got = duckdb_column_query(&f, "dlmeta", "ducklake_inlined_data_1_1");
    let n = None;
    let pgc = Some("pg_catalog");
    assert_eq!(
        got[..4].to_vec(),
        vec![
            strs(&[
                Some("17343"),
                Some("ducklake_inlined_data_1_1"),
                Some("0"),
                Some("row_id"),
                Some("int8"),
                Some("-1"),
                Some("0"),
                Some("1"),
                Some("f"),
                n,
                n,
                n,
                pgc
            ]),
            strs(&[
                Some("17343"),
                Some("ducklake_inlined_data_1_1"),
                Some("0"),
                Some("begin_snapshot"),
                Some("int8"),
                Some("-1"),
                Some("0"),
                Some("2"),
                Some("f"),
                n,
                n,
                n,
                pgc
            ]),
            strs(&[
                Some("17343"),
                Some("ducklake_inlined_data_1_1"),
                Some("0"),
                Some("end_snapshot"),
                Some("int8"),
                Some("-1"),
                Some("0"),
                Some("3"),
                Some("f"),
                n,
                n,
                n,
                pgc
            ]),
            strs(&[
                Some("17343"),
                Some("ducklake_inlined_data_1_1"),
                Some("0"),
                Some("a"),
                Some("int4"),
                Some("-1"),
                Some("0"),
                Some("4"),
                Some("f"),
                n,
                n,
                n,
                pgc
            ]),
        ]
    );
    let typmods: Vec<(Option<String>, Option<String>, Option<String>)> = got[4..]
        .iter()
        .map(|r| (r[3].clone(), r[4].clone(), r[5].clone()))
        .collect();
    let s = |x: &str| Some(x.to_string());
    assert_eq!(
        typmods,
        vec![
            (s("u64"), s("varchar"), s("-1")),
            (s("d1"), s("numeric"), s("589830")),
            (s("s"), s("bytea"), s("-1")),
            (s("v20"), s("varchar"), s("24")),
        ]
    );
    assert_eq!(got.len(), 8, "no constraint rows for a table without a key");

    // A keyed table: 5 attribute rows (PK column NOT NULL) and one 'p' row with conkey {1}.
    let got = duckdb_column_query(&f, "dlmeta", "ducklake_snapshot");
    assert_eq!(got.len(), 6);
    assert_eq!(
        got[0][3..9].to_vec(),
        strs(&[
            Some("snapshot_id"),
            Some("int8"),
            Some("-1"),
            Some("0"),
            Some("1"),
            Some("t")
        ])
    );
    assert_eq!(
        got[1][3..9].to_vec(),
        strs(&[
            Some("snapshot_time"),
            Some("timestamptz"),
            Some("-1"),
            Some("0"),
            Some("2"),
            Some("f")
        ])
    );
    assert_eq!(
        got[5][9..12].to_vec(),
        strs(&[Some("17346"), Some("p"), Some("{1}")])
    );
    // A table DuckDB asks for before it exists (ducklake_inlined_delete_N): no rows.
    assert!(duckdb_column_query(&f, "dlmeta", "ducklake_inlined_delete_1").is_empty());
    assert!(duckdb_column_query(&f, "public", "ducklake_snapshot").is_empty());
}

/// `pg_class.xmin`, a system column after the others: the commit that wrote a table's
/// definition (its primary key's too), the reader's own transaction for a definition it
/// has not committed, bootstrap for the emulated catalogs.
#[test]
fn pg_class_xmin_is_the_definitions_version() {
    let f = fixture();
    let vt = build(None, "pg_class", &view(&f)).expect("pg_class");
    let system: Vec<_> = vt.columns[vt.columns.len() - 2..]
        .iter()
        .map(|c| (c.name, c.ty, c.attnum))
        .collect();
    assert_eq!(
        system,
        [("xmin", PgType::Xid, -2), ("tableoid", PgType::Oid, -6)]
    );
    assert!(vt.columns[..vt.columns.len() - 2]
        .iter()
        .all(|c| c.attnum > 0));
    assert_eq!(
        columns(None, "pg_class").map(|(_, c)| c.len()),
        Some(vt.columns.len())
    );
    let xmin = |name: &str| {
        let rows = rows_where(&vt, "relname", name);
        assert_eq!(rows.len(), 1, "{name}");
        txt(&vt, rows[0], "xmin")
    };
    assert_eq!(xmin("ducklake_snapshot").as_deref(), Some("731"));
    assert_eq!(xmin("ducklake_snapshot_pkey").as_deref(), Some("731"));
    // version 0: written by the reading transaction (the view's txid 900)
    assert_eq!(xmin("ducklake_inlined_data_1_1").as_deref(), Some("900"));
    assert_eq!(xmin("pg_class").as_deref(), Some("1"));
    assert!(rows_where(&vt, "relname", "pg_class")
        .iter()
        .all(|r| txt(&vt, r, "tableoid").as_deref() == Some("1259")));
    // The others have `tableoid` only; pg_attribute lists a heap relation's system columns
    // (-6 … -1) as PostgreSQL does, `cmin`/`cmax` as cid, and no view's or index's.
    let attribute = columns(None, "pg_attribute").unwrap_or_default().1;
    let hidden: Vec<_> = attribute.iter().filter(|c| c.attnum < 0).collect();
    assert_eq!(hidden.len(), 1);
    assert_eq!(hidden[0].name, "tableoid");
    let attrs = get(None, "pg_attribute", &f);
    let system = |relid: &str| -> Vec<(String, String, String)> {
        rows_where(&attrs, "attrelid", relid)
            .into_iter()
            .filter(|r| txt(&attrs, r, "attnum").is_some_and(|n| n.starts_with('-')))
            .map(|r| {
                let g = |c: &str| txt(&attrs, r, c).unwrap_or_default();
                (g("attname"), g("attnum"), g("atttypid"))
            })
            .collect()
    };
    let snapshot = txt(
        &vt,
        rows_where(&vt, "relname", "ducklake_snapshot")[0],
        "oid",
    )
    .unwrap_or_default();
    let want: Vec<(String, String, String)> = [
        ("tableoid", "-6", "26"),
        ("cmax", "-5", "29"),
        ("xmax", "-4", "28"),
        ("cmin", "-3", "29"),
        ("xmin", "-2", "28"),
        ("ctid", "-1", "27"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(system(&snapshot), want);
    assert_eq!(system("1259"), want, "pg_class");
    assert!(
        system("2604").len() == 6 && system("12035").is_empty(),
        "views have none"
    );
    assert!(
        !rows_where(&attrs, "attrelid", "12035").is_empty(),
        "pg_tables is listed"
    );
}

#[test]
fn pg_class_rows() {
    let f = fixture();
    let vt = get(None, "pg_class", &f);
    let snap = rows_where(&vt, "relname", "ducklake_snapshot");
    assert_eq!(snap.len(), 1);
    let g = |r: &[Value], c: &str| txt(&vt, r, c).unwrap_or_else(|| "NULL".into());
    let r = snap[0];
    let got: Vec<String> = [
        "oid",
        "relnamespace",
        "reltype",
        "relkind",
        "relpages",
        "reltuples",
        "relhasindex",
        "relpersistence",
        "relispartition",
        "relnatts",
        "relam",
        "relowner",
    ]
    .iter()
    .map(|c| g(r, c))
    .collect();
    assert_eq!(
        got,
        ["17344", "17343", "17345", "r", "0", "0", "t", "p", "f", "5", "2", "10"]
    );
    let inl = rows_where(&vt, "relname", "ducklake_inlined_data_1_1")[0];
    assert_eq!(
        (
            g(inl, "relpages"),
            g(inl, "reltuples"),
            g(inl, "relhasindex")
        ),
        ("0".into(), "35".into(), "f".into())
    );
    let idx = rows_where(&vt, "relname", "ducklake_snapshot_pkey")[0];
    let got: Vec<String> = [
        "oid",
        "relkind",
        "relam",
        "reltype",
        "relnatts",
        "relnamespace",
    ]
    .iter()
    .map(|c| g(idx, c))
    .collect();
    assert_eq!(got, ["17346", "i", "403", "0", "1", "17343"]);
    let pgc = rows_where(&vt, "relname", "pg_class")[0];
    assert_eq!(
        (
            g(pgc, "oid"),
            g(pgc, "relnamespace"),
            g(pgc, "reltype"),
            g(pgc, "relkind")
        ),
        ("1259".into(), "11".into(), "83".into(), "r".into())
    );
    assert!(rows_where(&vt, "relname", "pg_settings")
        .iter()
        .all(|r| g(r, "relkind") == "v"));
}

/// DuckDB's composite-type query. PostgreSQL returns one row per column of every relation
/// with relkind in ('c','r','v','m','f','p'), since each has a row type with typtype 'c' —
/// user tables included.
#[test]
fn composite_types_like_postgres() {
    let f = fixture();
    let typ = get(None, "pg_type", &f);
    let class = get(None, "pg_class", &f);
    let att = get(None, "pg_attribute", &f);
    let mut got = Vec::new();
    for t_ in rows_where(&typ, "typtype", "c") {
        let relid = txt(&typ, t_, "typrelid").unwrap_or_default();
        let Some(c) = rows_where(&class, "oid", &relid).first().cloned() else {
            continue;
        };
        let kind = txt(&class, c, "relkind").unwrap_or_default();
        if !["c", "r", "v", "m", "f", "p"].contains(&kind.as_str()) {
            continue;
        }
        // DuckDB asks for `attnum > 0`.
        for a in rows_where(&att, "attrelid", &relid)
            .into_iter()
            .filter(|a| !txt(&att, a, "attnum").unwrap_or_default().starts_with('-'))
        {
            let sub = rows_where(&typ, "oid", &txt(&att, a, "atttypid").unwrap_or_default())[0];
            got.push((
                txt(&typ, t_, "typnamespace").unwrap_or_default(),
                relid.clone(),
                txt(&typ, t_, "typname").unwrap_or_default(),
                txt(&att, a, "attname").unwrap_or_default(),
                txt(&typ, sub, "typname").unwrap_or_default(),
            ));
        }
    }
    let snap: Vec<_> = got.iter().filter(|g| g.2 == "ducklake_snapshot").collect();
    assert_eq!(snap.len(), 5);
    assert_eq!(
        snap[0],
        &(
            "17343".into(),
            "17344".into(),
            "ducklake_snapshot".into(),
            "snapshot_id".into(),
            "int8".into()
        )
    );
    assert_eq!(snap[1].4, "timestamptz");
    // trace sample: ["11", "1247", "pg_type", "oid", "oid"], then typname/name, typnamespace/oid
    let pt: Vec<_> = got.iter().filter(|g| g.2 == "pg_type").take(3).collect();
    assert_eq!(
        pt[0],
        &(
            "11".into(),
            "1247".into(),
            "pg_type".into(),
            "oid".into(),
            "oid".into()
        )
    );
    assert_eq!((pt[1].3.as_str(), pt[1].4.as_str()), ("typname", "name"));
    assert_eq!(
        (pt[2].3.as_str(), pt[2].4.as_str()),
        ("typnamespace", "oid")
    );
    // the pkey index has no row type
    assert!(got.iter().all(|g| g.2 != "ducklake_snapshot_pkey"));
}

/// `pg_index.indclass` names only operator classes `pg_opclass` lists, whose families
/// `pg_opfamily` lists.
#[test]
fn index_operator_classes_are_listed() {
    let f = fixture();
    let classes = get(None, "pg_opclass", &f);
    let families = get(None, "pg_opfamily", &f);
    for ty in crate::types::ALL_TYPES {
        let class = btree_opclass(ty);
        if class == 0 {
            continue;
        }
        let row = rows_where(&classes, "oid", &class.to_string());
        assert_eq!(row.len(), 1, "{ty:?}");
        let family = txt(&classes, row[0], "opcfamily").unwrap_or_default();
        assert_eq!(rows_where(&families, "oid", &family).len(), 1, "{ty:?}");
    }
    assert_eq!(classes.rows.len(), BTREE_OPCLASSES.len());
    assert!(BTREE_OPCLASSES
        .iter()
        .all(|c| BTREE_OPFAMILIES.iter().any(|f| f.0 == c.2)));
}

/// Every function `pg_type` names is one RockLake knows the OID of, and the table stays
/// sorted for [`builtin_proc_oid`]'s binary search.
#[test]
fn pg_type_functions_are_known() {
    assert!(BUILTIN_PROCS.windows(2).all(|w| w[0].1 < w[1].1));
    let f = fixture();
    let vt = get(None, "pg_type", &f);
    let regproc: Vec<usize> = TYPE_COLS
        .iter()
        .enumerate()
        .filter(|(_, (_, t))| *t == PgType::Regproc)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(regproc.len(), 8);
    for row in &vt.rows {
        for &c in &regproc {
            let Value::Int(o) = row[c] else {
                panic!("{:?}: {:?}", row[1], row[c])
            };
            assert!(o == 0 || builtin_proc_name(o as u32).is_some(), "{row:?}");
        }
        // every type has input and output functions
        assert!(matches!(row[15], Value::Int(o) if o > 0), "{row:?}");
        assert!(matches!(row[16], Value::Int(o) if o > 0), "{row:?}");
    }
    assert_eq!(builtin_proc_oid("array_in"), Some(750));
    assert_eq!(builtin_proc_oid("nosuch"), None);
}

#[test]
fn pg_type_builtins() {
    let f = fixture();
    let vt = get(None, "pg_type", &f);
    // regproc columns hold OIDs; read them as the names their output writes
    let g = |r: &[Value], c: &str| {
        let v = txt(&vt, r, c).unwrap_or_else(|| "NULL".into());
        let regproc = TYPE_COLS
            .iter()
            .any(|(n, t)| *n == c && *t == PgType::Regproc);
        match v.parse::<u32>() {
            Ok(o) if regproc && o != 0 => builtin_proc_name(o).unwrap_or("?").to_string(),
            _ => v,
        }
    };
    let by_oid = |o: u32| {
        rows_where(&vt, "oid", &o.to_string())
            .first()
            .cloned()
            .cloned()
    };
    for ty in crate::types::ALL_TYPES
        .into_iter()
        .chain([PgType::Unknown, PgType::Void])
    {
        let r = by_oid(ty.oid()).unwrap_or_else(|| panic!("{ty:?} missing"));
        assert_eq!(g(&r, "typname"), ty.typname());
        assert_eq!(g(&r, "typlen"), ty.typlen().to_string(), "{ty:?}");
        assert_eq!(g(&r, "typnamespace"), "11");
        assert_eq!(g(&r, "typrelid"), "0");
    }
    let i8 = by_oid(20).unwrap_or_default();
    assert_eq!(
        [
            g(&i8, "typtype"),
            g(&i8, "typcategory"),
            g(&i8, "typarray"),
            g(&i8, "typbyval"),
            g(&i8, "typinput"),
            g(&i8, "typoutput")
        ],
        ["b", "N", "1016", "t", "int8in", "int8out"]
    );
    let a = by_oid(1005).unwrap_or_default();
    assert_eq!(
        [
            g(&a, "typname"),
            g(&a, "typelem"),
            g(&a, "typcategory"),
            g(&a, "typinput")
        ],
        ["_int2", "21", "A", "array_in"]
    );
    let v = by_oid(1043).unwrap_or_default();
    assert_eq!(
        [
            g(&v, "typmodin"),
            g(&v, "typmodout"),
            g(&v, "typcollation"),
            g(&v, "typreceive")
        ],
        ["varchartypmodin", "varchartypmodout", "100", "varcharrecv"]
    );
    let ts = by_oid(1184).unwrap_or_default();
    assert_eq!(
        [g(&ts, "typinput"), g(&ts, "typsend"), g(&ts, "typarray")],
        ["timestamptz_in", "timestamptz_send", "1185"]
    );
    assert_eq!(g(&by_oid(705).unwrap_or_default(), "typtype"), "p");
    // one composite per user table, in the table's schema
    let c = rows_where(&vt, "typname", "ducklake_inlined_data_1_1");
    assert_eq!(c.len(), 1);
    assert_eq!(
        [
            g(c[0], "oid"),
            g(c[0], "typtype"),
            g(c[0], "typrelid"),
            g(c[0], "typnamespace")
        ],
        ["17401", "c", "17400", "17343"]
    );
    // oids unique
    let mut oids: Vec<String> = vt.rows.iter().map(|r| g(r, "oid")).collect();
    let n = oids.len();
    oids.sort();
    oids.dedup();
    assert_eq!(oids.len(), n);
}

#[test]
fn constraints_indexes_and_pg_indexes() {
    let f = fixture();
    let con = get(None, "pg_constraint", &f);
    assert_eq!(con.rows.len(), 1, "only the keyed table has a constraint");
    let g =
        |vt: &VirtualTable, r: &[Value], c: &str| txt(vt, r, c).unwrap_or_else(|| "NULL".into());
    let r = &con.rows[0];
    let got: Vec<String> = [
        "oid",
        "conname",
        "connamespace",
        "contype",
        "conrelid",
        "conindid",
        "conkey",
        "confkey",
    ]
    .iter()
    .map(|c| g(&con, r, c))
    .collect();
    assert_eq!(
        got,
        [
            "17346",
            "ducklake_snapshot_pkey",
            "17343",
            "p",
            "17344",
            "17346",
            "{1}",
            "NULL"
        ]
    );
    assert_eq!(
        r[ci(&con, "conkey")],
        Value::Array(vec![Value::Int(1)].into())
    );

    let idx = get(None, "pg_index", &f);
    assert_eq!(idx.rows.len(), 1);
    let got: Vec<String> = [
        "indexrelid",
        "indrelid",
        "indnatts",
        "indisunique",
        "indisprimary",
        "indkey",
    ]
    .iter()
    .map(|c| g(&idx, &idx.rows[0], c))
    .collect();
    // `indkey` is an int2vector, written with spaces as PostgreSQL writes it.
    assert_eq!(got, ["17346", "17344", "1", "t", "t", "1"]);

    let ix = get(None, "pg_indexes", &f);
    assert_eq!(
        ix.rows,
        vec![vec![
            t("dlmeta"),
            t("ducklake_snapshot"),
            t("ducklake_snapshot_pkey"),
            NULL,
            t("CREATE UNIQUE INDEX ducklake_snapshot_pkey ON dlmeta.ducklake_snapshot USING btree (snapshot_id)"),
        ]]
    );
}

#[test]
fn attributes_and_defaults() {
    let f = fixture();
    let att = get(None, "pg_attribute", &f);
    let g = |r: &[Value], c: &str| txt(&att, r, c).unwrap_or_else(|| "NULL".into());
    let rows = rows_where(&att, "attrelid", "17400");
    let v20 = rows
        .iter()
        .find(|r| g(r, "attname") == "v20")
        .copied()
        .cloned()
        .unwrap_or_default();
    let got: Vec<String> = [
        "atttypid",
        "attnum",
        "atttypmod",
        "attlen",
        "attnotnull",
        "atthasdef",
        "attisdropped",
        "attndims",
        "attcollation",
        "attstorage",
        "attalign",
    ]
    .iter()
    .map(|c| g(&v20, c))
    .collect();
    assert_eq!(
        got,
        ["1043", "8", "24", "-1", "t", "t", "f", "0", "100", "x", "i"]
    );
    let ts = rows_where(&att, "attrelid", "17344")
        .into_iter()
        .find(|r| g(r, "attname") == "snapshot_time")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        [
            g(&ts, "attlen"),
            g(&ts, "attbyval"),
            g(&ts, "attalign"),
            g(&ts, "attstorage")
        ],
        ["8", "t", "d", "p"]
    );
    // the pkey index has its key column as attribute 1
    let pk = rows_where(&att, "attrelid", "17346");
    assert_eq!(pk.len(), 1);
    assert_eq!(g(pk[0], "attname"), "snapshot_id");

    let def = get(None, "pg_attrdef", &f);
    assert_eq!(def.rows.len(), 1);
    assert_eq!(
        def.rows[0][1..].to_vec(),
        vec![oid(17_400), int(8), t("'x'::character varying")]
    );
}

#[test]
fn information_schema() {
    let f = fixture();
    let cols = get(Some("information_schema"), "columns", &f);
    let g = |r: &[Value], c: &str| txt(&cols, r, c).unwrap_or_else(|| "NULL".into());
    let mine: Vec<&Vec<Value>> = rows_where(&cols, "table_name", "ducklake_inlined_data_1_1");
    assert_eq!(mine.len(), 8);
    let d1 = mine[5];
    let got: Vec<String> = [
        "table_catalog",
        "table_schema",
        "column_name",
        "ordinal_position",
        "data_type",
        "numeric_precision",
        "numeric_precision_radix",
        "numeric_scale",
        "is_nullable",
        "udt_name",
    ]
    .iter()
    .map(|c| g(d1, c))
    .collect();
    assert_eq!(
        got,
        ["lake", "dlmeta", "d1", "6", "numeric", "9", "10", "2", "YES", "numeric"]
    );
    let v20 = mine[7];
    let got: Vec<String> = [
        "data_type",
        "character_maximum_length",
        "character_octet_length",
        "column_default",
        "is_nullable",
    ]
    .iter()
    .map(|c| g(v20, c))
    .collect();
    assert_eq!(
        got,
        [
            "character varying",
            "20",
            "80",
            "'x'::character varying",
            "NO"
        ]
    );
    let u64c = mine[4];
    assert_eq!(
        [
            g(u64c, "character_maximum_length"),
            g(u64c, "character_octet_length")
        ],
        ["NULL", "1073741824"]
    );
    let snap = rows_where(&cols, "table_name", "ducklake_snapshot");
    assert_eq!(
        [
            g(snap[0], "data_type"),
            g(snap[0], "is_nullable"),
            g(snap[0], "numeric_precision")
        ],
        ["bigint", "NO", "64"]
    );
    assert_eq!(
        [g(snap[1], "data_type"), g(snap[1], "datetime_precision")],
        ["timestamp with time zone", "6"]
    );

    let tabs = get(Some("information_schema"), "tables", &f);
    let tg = |r: &[Value], c: &str| txt(&tabs, r, c).unwrap_or_else(|| "NULL".into());
    let mine: Vec<String> = rows_where(&tabs, "table_schema", "dlmeta")
        .iter()
        .map(|r| format!("{}/{}", tg(r, "table_name"), tg(r, "table_type")))
        .collect();
    assert_eq!(
        mine,
        [
            "ducklake_snapshot/BASE TABLE",
            "ducklake_inlined_data_1_1/BASE TABLE"
        ]
    );
    assert_eq!(
        tg(rows_where(&tabs, "table_name", "pg_roles")[0], "table_type"),
        "VIEW"
    );

    let sch = get(Some("information_schema"), "schemata", &f);
    let names: Vec<String> = sch
        .rows
        .iter()
        .map(|r| txt(&sch, r, "schema_name").unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        [
            "pg_catalog",
            "pg_toast",
            "public",
            "information_schema",
            "dlmeta"
        ]
    );
}

/// `SELECT version(), (SELECT COUNT(*) FROM pg_settings WHERE name LIKE 'rds%')` must count 0.
#[test]
fn settings() {
    let f = fixture();
    let vt = get(None, "pg_settings", &f);
    let setting = |n: &str| {
        rows_where(&vt, "name", n)
            .first()
            .and_then(|r| txt(&vt, r, "setting"))
    };
    assert_eq!(
        vt.rows
            .iter()
            .filter(|r| txt(&vt, r, "name").unwrap_or_default().starts_with("rds"))
            .count(),
        0
    );
    assert_eq!(setting("server_version_num").as_deref(), Some("150018"));
    assert!(setting("server_version")
        .unwrap_or_default()
        .starts_with("15.18 ("));
    assert_eq!(
        setting("standard_conforming_strings").as_deref(),
        Some("on")
    );
    assert_eq!(setting("TimeZone").as_deref(), Some("Etc/UTC"));
    assert_eq!(setting("DateStyle").as_deref(), Some("ISO, MDY"));
    assert_eq!(setting("client_encoding").as_deref(), Some("UTF8"));
    assert_eq!(setting("max_connections").as_deref(), Some("100"));
    assert_eq!(
        setting("transaction_isolation").as_deref(),
        Some("read committed")
    );
    assert_eq!(
        setting("session_authorization").as_deref(),
        Some("postgres")
    );
    let names: Vec<String> = vt
        .rows
        .iter()
        .map(|r| txt(&vt, r, "name").unwrap_or_default())
        .collect();
    let mut dedup = names.clone();
    dedup.dedup();
    assert_eq!(names, dedup);
}

#[test]
fn databases_roles_and_small_catalogs() {
    let f = fixture();
    let db = get(None, "pg_database", &f);
    let names: Vec<String> = db
        .rows
        .iter()
        .map(|r| txt(&db, r, "datname").unwrap_or_default())
        .collect();
    assert_eq!(names, ["template1", "template0", "postgres", "lake"]);
    let lake = rows_where(&db, "datname", "lake")[0];
    assert_eq!(txt(&db, lake, "oid").as_deref(), Some("16383"));
    let fx = Fixture {
        schemas: vec![],
        tables: vec![],
    };
    let v = CatalogView {
        database: "postgres",
        ..view(&fx)
    };
    assert_eq!(
        build(None, "pg_database", &v).map(|x| x.rows.len()),
        Some(3)
    );

    let roles = get(None, "pg_roles", &f);
    let me = rows_where(&roles, "rolname", "postgres");
    assert_eq!(me.len(), 1);
    assert_eq!(
        [
            txt(&roles, me[0], "oid"),
            txt(&roles, me[0], "rolsuper"),
            txt(&roles, me[0], "rolcanlogin")
        ],
        [Some("10".into()), Some("t".into()), Some("t".into())]
    );
    let user = get(None, "pg_user", &f);
    assert_eq!(
        user.rows[0][..4].to_vec(),
        vec![t("postgres"), oid(10), b(true), b(true)]
    );

    let coll = get(None, "pg_collation", &f);
    let names: Vec<String> = coll
        .rows
        .iter()
        .map(|r| txt(&coll, r, "collname").unwrap_or_default())
        .collect();
    assert_eq!(names, ["default", "C", "POSIX"]);
    let am = get(None, "pg_am", &f);
    assert_eq!(
        rows_where(&am, "amname", "btree")
            .first()
            .and_then(|r| txt(&am, r, "oid"))
            .as_deref(),
        Some("403")
    );
    let ts = get(None, "pg_tablespace", &f);
    assert_eq!(ts.rows.len(), 2);
    let comments = get(None, "pg_description", &f);
    assert_eq!(comments.rows.len(), 3, "the built-in schemas' comments");
    for empty in [
        "pg_enum",
        "pg_inherits",
        "pg_auth_members",
        "pg_policy",
        "pg_statistic_ext",
        "pg_publication",
        "pg_publication_rel",
        "pg_publication_namespace",
    ] {
        assert!(get(None, empty, &f).rows.is_empty(), "{empty}");
    }
    let tables = get(None, "pg_tables", &f);
    let mine: Vec<Vec<Value>> = rows_where(&tables, "schemaname", "dlmeta")
        .into_iter()
        .cloned()
        .collect();
    assert_eq!(
        mine[0],
        vec![
            t("dlmeta"),
            t("ducklake_snapshot"),
            t("postgres"),
            NULL,
            b(true),
            b(false),
            b(false),
            b(false)
        ]
    );
    assert_eq!(mine.len(), 2);
    let views = get(None, "pg_views", &f);
    assert!(rows_where(&views, "schemaname", "dlmeta").is_empty());
}

/// Nothing is cached: a second build sees a changed registry.
#[test]
fn built_live_from_the_registry() {
    let mut f = fixture();
    let before = get(None, "pg_class", &f).rows.len();
    let mut t3 = snapshot();
    t3.id = 3;
    t3.oid = 17_500;
    t3.name = "ducklake_snapshot_changes".into();
    t3.pkey_name = "ducklake_snapshot_changes_pkey".into();
    f.tables.push(Arc::new(t3));
    let after = get(None, "pg_class", &f);
    assert_eq!(after.rows.len(), before + 2);
    assert_eq!(
        rows_where(&after, "relname", "ducklake_snapshot_changes").len(),
        1
    );
}

#[test]
fn quote_all_identifiers_quotes_every_name_while_entered() {
    assert_eq!(quote_ident("abc"), "abc");
    {
        let _on = enter_quote_all(true);
        assert_eq!(quote_ident("abc"), "\"abc\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
        // aclitem's quoting is its own.
        assert_eq!(
            acl_default('r', "postgres").expect("a relation's default")[0],
            "postgres=arwdDxt/postgres"
        );
        assert_eq!(crate::query::format_type(PgType::Text, -1), "\"text\"");
        assert_eq!(
            crate::query::format_type(PgType::TextArray, -1),
            "\"text\"[]"
        );
        assert_eq!(
            crate::query::format_type(PgType::Int4Array, -1),
            "integer[]"
        );
        assert_eq!(
            crate::query::format_type(PgType::Varchar, 14),
            "character varying(10)"
        );
        assert_eq!(crate::query::format_type(PgType::Char, -1), "\"char\"");
        assert_eq!(crate::query::format_type_plain(PgType::Uuid, -1), "uuid");
        {
            let _off = enter_quote_all(false);
            assert_eq!(quote_ident("abc"), "abc");
        }
        assert_eq!(quote_ident("abc"), "\"abc\"");
    }
    assert_eq!(quote_ident("abc"), "abc");
    assert_eq!(crate::query::format_type(PgType::Uuid, -1), "uuid");
}

#[test]
fn defaults_are_requoted_as_postgres_deparses_them() {
    for (stored, quoted) in [
        ("now()", "\"now\"()"),
        ("'x'::text", "'x'::\"text\""),
        ("'x'::character varying", "'x'::character varying"),
        ("'abc'::character varying(3)", "'abc'::character varying(3)"),
        (
            "'2020-07-01 12:00:00'::timestamp without time zone",
            "'2020-07-01 12:00:00'::timestamp without time zone",
        ),
        ("'{a,b}'::text[]", "'{a,b}'::\"text\"[]"),
        ("'{1}'::integer[]", "'{1}'::integer[]"),
        (
            "nextval('app.s1'::regclass)",
            "\"nextval\"('\"app\".\"s1\"'::\"regclass\")",
        ),
        (
            "nextval('\"My\".\"s.1\"'::regclass)",
            "\"nextval\"('\"My\".\"s.1\"'::\"regclass\")",
        ),
        (
            "upper(lower('x'::text))",
            "\"upper\"(\"lower\"('x'::\"text\"))",
        ),
        ("pg_catalog.now()", "\"pg_catalog\".\"now\"()"),
        ("COALESCE(1, 2)", "COALESCE(1, 2)"),
        ("CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"),
        ("(1 + 2)", "(1 + 2)"),
        ("true", "true"),
        ("'it''s'::text", "'it''s'::\"text\""),
    ] {
        assert_eq!(requote_expression(stored), quoted, "{stored}");
        assert_eq!(normalize_names(quoted), stored, "{quoted}");
        assert_eq!(normalize_names(stored), stored, "{stored}");
    }
    // A name that needs its quotes keeps them.
    assert_eq!(normalize_names("\"My Fn\"()"), "\"My Fn\"()");
    assert_eq!(normalize_names("'x'::\"char\""), "'x'::\"char\"");
    // SQL's calls in capitals, never quoted; type names in lower case.
    assert_eq!(normalize_names("coalesce(1, 2)"), "COALESCE(1, 2)");
    assert_eq!(normalize_names("current_user"), "CURRENT_USER");
    assert_eq!(
        normalize_names("current_timestamp(3)"),
        "CURRENT_TIMESTAMP(3)"
    );
    assert_eq!(requote_expression("coalesce(1, 2)"), "coalesce(1, 2)");
    assert_eq!(
        normalize_names("nextval('other.s'::REGCLASS)"),
        "nextval('other.s'::regclass)"
    );
    assert_eq!(
        requote_expression("nextval('other.s'::REGCLASS)"),
        "\"nextval\"('\"other\".\"s\"'::REGCLASS)"
    );
    // A regclass constant names what regclass input reads; an OID or a malformed name
    // is left as it is.
    assert_eq!(
        normalize_names("nextval('MySeq'::regclass)"),
        "nextval('myseq'::regclass)"
    );
    assert_eq!(
        normalize_names("nextval(' App . \"S 1\" '::regclass)"),
        "nextval('app.\"S 1\"'::regclass)"
    );
    assert_eq!(normalize_names("'16384'::regclass"), "'16384'::regclass");
    // regclass input's own reading: ASCII letters folded, a space inside a bare name
    // does not parse.
    assert_eq!(normalize_names("'ÀB'::regclass"), "'\"Àb\"'::regclass");
    assert_eq!(normalize_names("'a b'::regclass"), "'a b'::regclass");
    assert_eq!(
        normalize_names("1::DOUBLE PRECISION"),
        "1::double precision"
    );
    assert_eq!(normalize_names("'\"a'::regclass"), "'\"a'::regclass");
    assert_eq!(
        requote_expression("'a..b'::regclass"),
        "'a..b'::\"regclass\""
    );
}

proptest::proptest! {
    /// Whatever a default's strings hold (quotes, dots, backslashes, non-ASCII), quoting
    /// its names and normalizing them again gives back the stored text, and the strings
    /// are left as they are.
    #[test]
    fn requoting_keeps_strings_and_round_trips(
        a in "[ -~é\n]{0,12}",
        b in "[a-z][a-z0-9_]{0,8}",
    ) {
        // A name PostgreSQL writes bare (a keyword would be stored quoted).
        proptest::prop_assume!(quote_ident_if_needed(&b) == b);
        let lit = format!("'{}'", a.replace('\'', "''"));
        let stored = format!("concat({lit}::text, {b}({lit}), ARRAY[{lit}])");
        let quoted = requote_expression(&stored);
        proptest::prop_assert_eq!(
            &quoted,
            &format!("\"concat\"({lit}::\"text\", \"{b}\"({lit}), ARRAY[{lit}])")
        );
        proptest::prop_assert_eq!(normalize_names(&quoted), stored);
    }
}

#[test]
fn identifiers_are_quoted_like_quote_ident() {
    assert_eq!(quote_ident("snapshot_id"), "snapshot_id");
    assert_eq!(quote_ident("Mixed"), "\"Mixed\"");
    assert_eq!(quote_ident("user"), "\"user\"");
    assert_eq!(quote_ident("1a"), "\"1a\"");
    assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
    assert_eq!(quote_ident("key"), "key");
    assert_eq!(quote_ident("a$b"), "\"a$b\"");
    assert_eq!(acl_role_name("Admin"), "Admin");
    assert_eq!(acl_role_name("user"), "user");
    assert_eq!(acl_role_name("a b"), "\"a b\"");
    assert_eq!(acl_role_name("a\"b"), "\"a\"\"b\"");
}
