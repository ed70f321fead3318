//! The rows of `pg_catalog`'s relations, built from the catalog's own registry.

use super::*;

/// All namespaces in OID order: the built-in ones, then user schemas (a user entry named like a
/// built-in one is the built-in one).
pub(super) fn all_schemas(view: &CatalogView<'_>) -> Vec<(String, u32)> {
    let mut v: Vec<(String, u32)> = BUILTIN_SCHEMAS
        .iter()
        .map(|(n, o)| (n.to_string(), *o))
        .collect();
    for s in view.schemas {
        if !v.iter().any(|(n, _)| *n == s.name) {
            v.push((s.name.clone(), s.oid));
        }
    }
    v.sort_by_key(|(_, o)| *o);
    v
}

/// OID of a schema by name; 0 when the registry holds a table in an unknown schema.
pub(super) fn schema_oid_of(view: &CatalogView<'_>, name: &str) -> u32 {
    crate::catalog::schema_oid(name, view.schemas)
}

pub(super) fn namespace_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let u = view.user;
    all_schemas(view)
        .into_iter()
        .map(|(name, o)| {
            let acl = match name.as_str() {
                "pg_catalog" | "information_schema" => {
                    let u = acl_role_name(u);
                    texts(&[format!("{u}=UC/{u}"), format!("=U/{u}")])
                }
                "public" => texts(&[
                    "pg_database_owner=UC/pg_database_owner".to_string(),
                    "=U/pg_database_owner".to_string(),
                ]),
                _ => NULL,
            };
            let owner = if name == "public" {
                PG_DATABASE_OWNER_OID
            } else {
                SUPERUSER_OID
            };
            row![oid(o), Value::text(name), oid(owner), acl]
        })
        .collect()
}

// ------------------------------------------------------------------ pg_class

#[allow(clippy::too_many_arguments)]
pub(super) fn class_row(
    need: Need<'_>,
    oid_: u32,
    name: &str,
    namespace: u32,
    reltype: u32,
    am: u32,
    filenode: u32,
    tablespace: u32,
    relpages: i64,
    reltuples: f64,
    hasindex: bool,
    shared: bool,
    kind: char,
    natts: usize,
    xmin: u64,
) -> Vec<Value> {
    let is_table = kind == 'r';
    row![
        oid(oid_),
        need.text(1, || t(name)),
        oid(namespace),
        oid(reltype),
        oid(0),
        oid(SUPERUSER_OID),
        oid(am),
        oid(filenode),
        oid(tablespace),
        int(relpages),
        Value::Float(reltuples),
        int(0),
        oid(0),
        b(hasindex),
        b(shared),
        need.text(15, || ch('p')),
        need.text(16, || ch(kind)),
        int(natts as i64),
        int(0),
        // relhasrules: a view's `_RETURN` rule.
        b(kind == 'v'),
        b(false),
        b(false),
        b(false),
        b(false),
        b(true),
        need.text(25, || ch(if kind == 'r' { 'd' } else { 'n' })),
        b(false),
        oid(0),
        oid(if is_table { 3 } else { 0 }),
        oid(if is_table { 1 } else { 0 }),
        NULL,
        NULL,
        NULL,
        // xid is 32 bits wide.
        Value::Int((xmin as u32).into()),
    ]
}

/// `want(oid, prefix, name)`: whether the caller needs the row of the object with this OID
/// and name (`prefix` + `name`; see [`build_only`]).
pub(super) type Want<'a> = &'a dyn Fn(u32, &'static str, &str) -> bool;

pub(super) fn class_rows(
    view: &CatalogView<'_>,
    want: Want<'_>,
    need: Need<'_>,
) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for r in RELATIONS.iter().filter(|r| listed(r)) {
        if !want(r.oid, "", r.name) {
            continue;
        }
        let is_table = r.kind == 'r';
        rows.push(class_row(
            need,
            r.oid,
            r.name,
            schema_oid_of(view, r.schema),
            r.rowtype,
            if is_table { HEAP_AM_OID } else { 0 },
            if is_table && !r.shared { r.oid } else { 0 },
            if r.shared { 1664 } else { 0 },
            0,
            -1.0,
            false,
            r.shared,
            r.kind,
            r.cols.len(),
            BOOTSTRAP_XID,
        ));
    }
    for tb in view.tables {
        let has_index = tb.listed_indexes().next().is_some();
        let want_table = want(tb.oid, "", &tb.name);
        let wanted_indexes: Vec<ListedIndex<'_>> = tb
            .listed_indexes()
            .filter(|ix| want(ix.oid, "", ix.name))
            .collect();
        if !want_table && wanted_indexes.is_empty() {
            continue;
        }
        let ns = schema_oid_of(view, &tb.schema);
        let live = (view.row_counts)(tb.id) as f32 as f64;
        let xmin = match tb.version {
            0 => view.txid,
            v => v,
        };
        if want_table && tb.sequence.is_some() {
            // A sequence: one page holding its one tuple, no access method, no row type.
            rows.push(class_row(
                need,
                tb.oid,
                &tb.name,
                ns,
                0,
                0,
                tb.oid,
                0,
                1,
                1.0,
                false,
                false,
                'S',
                tb.columns.len(),
                xmin,
            ));
        } else if want_table {
            // A view has a row type but no storage and no rows (PostgreSQL's reltuples -1:
            // never counted).
            let view = tb.view.is_some();
            rows.push(class_row(
                need,
                tb.oid,
                &tb.name,
                ns,
                tb.rowtype_oid(),
                if view { 0 } else { HEAP_AM_OID },
                if view { 0 } else { tb.oid },
                0,
                0, // relpages: always 0, see the module documentation
                if view { -1.0 } else { live },
                has_index,
                false,
                if view { 'v' } else { 'r' },
                tb.columns.len(),
                xmin,
            ));
        }
        for ix in wanted_indexes {
            rows.push(class_row(
                need,
                ix.oid,
                ix.name,
                ns,
                0,
                BTREE_AM_OID,
                ix.oid,
                0,
                1, // a built btree index has its metapage
                0.0,
                false,
                false,
                'i',
                ix.columns.len(),
                xmin,
            ));
        }
    }
    rows
}

// ------------------------------------------------------------------ pg_attribute

#[allow(clippy::too_many_arguments)]
pub(super) fn attribute_row(
    need: Need<'_>,
    relid: u32,
    name: &str,
    ty: PgType,
    num: i64,
    typmod: i32,
    notnull: bool,
    hasdef: bool,
) -> Vec<Value> {
    let (byval, align, storage, collation) = type_facts(ty);
    row![
        oid(relid),
        need.text(1, || t(name)),
        oid(ty.oid()),
        int(-1),
        int(ty.typlen() as i64),
        int(num),
        int(if ty.is_array() { 1 } else { 0 }),
        int(-1),
        int(typmod as i64),
        b(byval),
        need.text(10, || ch(align)),
        need.text(11, || ch(storage)),
        nul_char(),
        b(notnull),
        b(hasdef),
        b(false),
        nul_char(),
        nul_char(),
        b(false),
        b(true),
        int(0),
        oid(collation),
        NULL,
        NULL,
        NULL,
        NULL,
    ]
}

pub(super) fn attribute_rows(
    view: &CatalogView<'_>,
    want: Want<'_>,
    need: Need<'_>,
) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for r in RELATIONS.iter().filter(|r| listed(r)) {
        if !want(r.oid, "", r.name) {
            continue;
        }
        // Bootstrap catalogs mark their leading fixed-width columns NOT NULL; views mark none.
        let mut fixed_prefix = r.kind == 'r';
        for (i, (name, ty)) in r.cols.iter().enumerate() {
            fixed_prefix = fixed_prefix && ty.typlen() > 0;
            // `name` columns get the "C" collation, text columns the default one (from the type).
            rows.push(attribute_row(
                need,
                r.oid,
                name,
                *ty,
                i as i64 + 1,
                -1,
                fixed_prefix,
                false,
            ));
        }
        if r.kind == 'r' {
            system_attribute_rows(r.oid, &mut rows, need);
        }
    }
    for tb in view.tables {
        if want(tb.oid, "", &tb.name) {
            table_attribute_rows(tb, &mut rows, need);
        }
        for ix in tb.listed_indexes().filter(|ix| want(ix.oid, "", ix.name)) {
            index_attribute_rows(tb, &ix, &mut rows, need);
        }
    }
    rows
}

/// A heap relation's system columns, as PostgreSQL lists them (attnum -6 … -1, NOT NULL, no
/// statistics target). `cmin`/`cmax` are `cid`, which has no [`PgType`]: written as `xid`,
/// whose storage is the same, then given cid's OID.
pub(super) fn system_attribute_rows(relid: u32, rows: &mut Vec<Vec<Value>>, need: Need<'_>) {
    const CID_OID: u32 = 29;
    const SYSTEM: [(&str, PgType, u32); 6] = [
        ("tableoid", PgType::Oid, 26),
        ("cmax", PgType::Xid, CID_OID),
        ("xmax", PgType::Xid, 28),
        ("cmin", PgType::Xid, CID_OID),
        ("xmin", PgType::Xid, 28),
        ("ctid", PgType::Tid, 27),
    ];
    for (num, (name, ty, type_oid)) in (-6..).zip(SYSTEM) {
        let mut row = attribute_row(need, relid, name, ty, num, -1, true, false);
        row[2] = oid(type_oid);
        row[3] = int(0);
        rows.push(row);
    }
}

pub(super) fn table_attribute_rows(tb: &Table, rows: &mut Vec<Vec<Value>>, need: Need<'_>) {
    // A view has none.
    if tb.view.is_none() {
        system_attribute_rows(tb.oid, rows, need);
    }
    for (i, c) in tb.columns.iter().enumerate() {
        // PRIMARY KEY implies NOT NULL, as PostgreSQL records it.
        let not_null = c.not_null || tb.primary_key.contains(&i);
        rows.push(attribute_row(
            need,
            tb.oid,
            &c.name,
            c.ty,
            i as i64 + 1,
            c.typmod,
            not_null,
            c.default_sql.is_some(),
        ));
        if let (Some(identity), Some(row)) = (c.identity, rows.last_mut()) {
            row[16] = ch(if identity.always { 'a' } else { 'd' });
        }
    }
}

/// The columns of one of a table's listed indexes.
pub(super) fn index_attribute_rows(
    tb: &Table,
    ix: &ListedIndex<'_>,
    rows: &mut Vec<Vec<Value>>,
    need: Need<'_>,
) {
    let written: Vec<&str> = ix
        .columns
        .iter()
        .filter_map(|ci| tb.columns.get(*ci))
        .map(|c| c.name.as_str())
        .collect();
    let names = crate::exec::index_column_names(&written);
    for (k, ci) in ix.columns.iter().enumerate() {
        if let (Some(c), Some(name)) = (tb.columns.get(*ci), names.get(k)) {
            rows.push(attribute_row(
                need,
                ix.oid,
                name,
                c.ty,
                k as i64 + 1,
                c.typmod,
                false,
                false,
            ));
        }
    }
}

// ------------------------------------------------------------------ constraints and indexes

/// `pg_sequence` (`view`: false) or `pg_sequences` (true): one row per sequence.
pub(super) fn sequence_rows(view: &CatalogView<'_>, as_view: bool) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for tb in view.tables {
        let Some(def) = tb.sequence.as_deref() else {
            continue;
        };
        let numbers = [def.start, def.min, def.max, def.increment];
        rows.push(if as_view {
            // `last_value` is NULL until a value has been drawn.
            let last = (view.sequence_value)(tb)
                .filter(|v| v.called)
                .map_or(NULL, |v| int(v.last));
            let mut row = vec![t(&tb.schema), t(&tb.name), t(view.user), oid(def.ty.oid())];
            row.extend(numbers.iter().map(|n| int(*n)));
            row.extend([b(def.cycle), int(def.cache), last]);
            row
        } else {
            vec![
                oid(tb.oid),
                oid(def.ty.oid()),
                int(def.start),
                int(def.increment),
                int(def.max),
                int(def.min),
                int(def.cache),
                b(def.cycle),
            ]
        });
    }
    rows
}

/// `pg_depend`: the dependencies RockLake tracks — each owned sequence on its column
/// (`'a'` for serial, `'i'` for identity), what psql's `\d` reads.
pub(super) fn depend_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    const PG_CLASS: u32 = 1259;
    let mut rows = Vec::new();
    for s in view.tables {
        let Some((def, (owner, column))) = s
            .sequence
            .as_deref()
            .and_then(|d| d.owner.as_ref().map(|o| (d, o)))
        else {
            continue;
        };
        let Some(t) = view.tables.iter().find(|t| t.id == *owner) else {
            continue;
        };
        let Some(attnum) = t.column_index(column) else {
            continue;
        };
        rows.push(vec![
            oid(PG_CLASS),
            oid(s.oid),
            int(0),
            oid(PG_CLASS),
            oid(t.oid),
            int(attnum as i64 + 1),
            ch(if def.identity { 'i' } else { 'a' }),
        ]);
    }
    // An index CREATE INDEX made goes with its table's columns ('a'); a primary key's index
    // depends on its constraint, which RockLake does not list here.
    for t in view.tables {
        for (_, ix) in t.user_indexes() {
            // The key's columns once each, then those its predicate names once each (a
            // column in both is listed twice, as PostgreSQL records them apart).
            let once = |mut v: Vec<usize>| {
                v.sort_unstable();
                v.dedup();
                v
            };
            let mut columns = once(ix.columns.clone());
            if let Some(p) = &ix.predicate {
                let named = crate::exec::predicate_columns(p);
                columns.extend(once(
                    named.iter().filter_map(|n| t.column_index(n)).collect(),
                ));
            }
            for c in &columns {
                rows.push(vec![
                    oid(PG_CLASS),
                    oid(ix.oid),
                    int(0),
                    oid(PG_CLASS),
                    oid(t.oid),
                    int(*c as i64 + 1),
                    ch('a'),
                ]);
            }
        }
    }
    // A serial column's default draws from its sequence (pg_dump then sets the default after
    // creating the sequence).
    const PG_ATTRDEF: u32 = 2604;
    for t in view.tables {
        for (i, c) in t.columns.iter().enumerate() {
            let Some(seq) = c
                .serial
                .and_then(|id| view.tables.iter().find(|s| s.id == id))
            else {
                continue;
            };
            if c.default_sql.is_none() {
                continue;
            }
            rows.push(vec![
                oid(PG_ATTRDEF),
                oid(attrdef_oid(t.oid, i + 1)),
                int(0),
                oid(PG_CLASS),
                oid(seq.oid),
                int(0),
                ch('n'),
            ]);
        }
    }
    // A view's `_RETURN` rule is part of the view ('i') and depends on what its query reads
    // ('n'): each column read, or the relation when none of its columns is (PostgreSQL keeps
    // the column references and drops the relation's). pg_dump orders
    // views after the relations they read by these rows.
    const PG_REWRITE: u32 = 2618;
    for v in view.tables.iter().filter(|t| t.view.is_some()) {
        let rule = |refobj: u32, subid: i64, deptype: char| {
            vec![
                oid(PG_REWRITE),
                oid(v.rule_oid()),
                int(0),
                oid(PG_CLASS),
                oid(refobj),
                int(subid),
                ch(deptype),
            ]
        };
        rows.push(rule(v.oid, 0, 'i'));
        // The rule also reads its view (as a whole unless a column of it: a view that reads
        // itself), and a column reference makes the relation's own one redundant.
        let mut reads = (view.view_reads)(v);
        reads.push((v.oid, 0));
        reads.sort_unstable();
        reads.dedup();
        let columns_of = |relation: u32| reads.iter().any(|&(o, a)| o == relation && a != 0);
        for &(relation, attnum) in &reads {
            if attnum != 0 || !columns_of(relation) {
                rows.push(rule(relation, attnum, 'n'));
            }
        }
    }
    rows
}

/// `pg_rewrite`: each view's `_RETURN` rule (RockLake has no other rules). `ev_action` holds
/// the view's query text where PostgreSQL keeps the parsed query tree.
pub(super) fn rewrite_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    view.tables
        .iter()
        .filter_map(|v| {
            let def = v.view.as_deref()?;
            Some(vec![
                oid(v.rule_oid()),
                t("_RETURN"),
                oid(v.oid),
                ch('1'),
                ch('O'),
                b(true),
                t("<>"),
                t(&def.query),
            ])
        })
        .collect()
}

/// `information_schema.sequences`: the sequences that are not an identity column's.
pub(super) fn is_sequences_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for tb in view.tables {
        let Some(def) = tb.sequence.as_deref().filter(|d| !d.identity) else {
            continue;
        };
        let bits = match def.ty {
            PgType::Int2 => 16,
            PgType::Int4 => 32,
            _ => 64,
        };
        let text = |n: i64| Value::text(n.to_string());
        rows.push(vec![
            t(view.database),
            t(&tb.schema),
            t(&tb.name),
            Value::text(crate::query::format_type(def.ty, -1)),
            int(bits),
            int(2),
            int(0),
            text(def.start),
            text(def.min),
            text(def.max),
            text(def.increment),
            t(if def.cycle { "YES" } else { "NO" }),
        ]);
    }
    rows
}

/// The user relations that are tables (not sequences): what `pg_tables` and
/// `information_schema`'s table views list.
pub(super) fn tables_only<'v>(view: &'v CatalogView<'_>) -> impl Iterator<Item = &'v TableRef> {
    view.tables.iter().filter(|tb| tb.sequence.is_none())
}

pub(super) fn pk_attnums(tb: &Table) -> Vec<i64> {
    tb.primary_key.iter().map(|i| *i as i64 + 1).collect()
}

pub(super) fn constraint_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    view.tables
        .iter()
        .filter(|tb| !tb.primary_key.is_empty())
        .map(|tb| {
            row![
                oid(tb.pkey_oid()),
                t(&tb.pkey_name),
                oid(schema_oid_of(view, &tb.schema)),
                ch('p'),
                b(false),
                b(false),
                b(true),
                oid(tb.oid),
                oid(0),
                oid(tb.pkey_oid()),
                oid(0),
                oid(0),
                ch(' '),
                ch(' '),
                ch(' '),
                b(true),
                int(0),
                b(true),
                int2s(pk_attnums(tb)),
                NULL,
                NULL,
                NULL,
                NULL,
                NULL,
                NULL,
                NULL,
            ]
        })
        .collect()
}

pub(super) fn index_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for tb in view.tables {
        for ix in tb.listed_indexes() {
            let n = ix.columns.len() as i64;
            let types = || {
                ix.columns
                    .iter()
                    .filter_map(|i| tb.columns.get(*i))
                    .map(|c| c.ty)
            };
            rows.push(row![
                oid(ix.oid),
                oid(tb.oid),
                int(n),
                int(n),
                b(ix.primary),
                b(false),
                b(ix.primary),
                b(false),
                b(true),
                b(false),
                b(true),
                b(false),
                b(true),
                b(true),
                b(false),
                int2s(ix.columns.iter().map(|i| *i as i64 + 1)),
                int2s(types().map(|ty| i64::from(type_facts(ty).3))),
                int2s(types().map(|ty| i64::from(btree_opclass(ty)))),
                int2s((0..ix.columns.len()).map(|k| i64::from(ix.option(k)))),
                NULL,
                // PostgreSQL keeps a node tree; its text is what RockLake has.
                ix.predicate.map_or(NULL, t),
            ]);
        }
    }
    rows
}

/// PostgreSQL 15's default btree operator classes of the types RockLake has ([`btree_opclass`]):
/// (oid, name, family, input type, key type).
pub(super) const BTREE_OPCLASSES: &[(u32, &str, u32, u32, u32)] = &[
    (1978, "int4_ops", 1976, 23, 0),
    (1979, "int2_ops", 1976, 21, 0),
    (1981, "oid_ops", 1989, 26, 0),
    (3122, "date_ops", 434, 1082, 0),
    (3123, "float8_ops", 1970, 701, 0),
    (3124, "int8_ops", 1976, 20, 0),
    (3125, "numeric_ops", 1988, 1700, 0),
    (3126, "text_ops", 1994, 25, 0),
    (3127, "timestamptz_ops", 434, 1184, 0),
    (3128, "timestamp_ops", 434, 1114, 0),
    (10000, "array_ops", 397, 2277, 0),
    (10003, "bool_ops", 424, 16, 0),
    (10004, "bpchar_ops", 426, 1042, 0),
    (10006, "bytea_ops", 428, 17, 0),
    (10007, "char_ops", 429, 18, 0),
    (10012, "float4_ops", 1970, 700, 0),
    (10015, "inet_ops", 1974, 869, 0),
    (10022, "interval_ops", 1982, 1186, 0),
    (10028, "name_ops", 1994, 19, 2275),
    (10032, "oidvector_ops", 1991, 30, 0),
    (10038, "time_ops", 1996, 1083, 0),
    (10050, "tid_ops", 2789, 27, 0),
    (10065, "uuid_ops", 2968, 2950, 0),
];

/// The btree operator families of [`BTREE_OPCLASSES`].
pub(super) const BTREE_OPFAMILIES: &[(u32, &str)] = &[
    (397, "array_ops"),
    (424, "bool_ops"),
    (426, "bpchar_ops"),
    (428, "bytea_ops"),
    (429, "char_ops"),
    (434, "datetime_ops"),
    (1970, "float_ops"),
    (1974, "network_ops"),
    (1976, "integer_ops"),
    (1982, "interval_ops"),
    (1988, "numeric_ops"),
    (1989, "oid_ops"),
    (1991, "oidvector_ops"),
    (1994, "text_ops"),
    (1996, "time_ops"),
    (2789, "tid_ops"),
    (2968, "uuid_ops"),
];

/// The OID of the default btree operator class of `ty` in PostgreSQL 15 (`pg_index.indclass`
/// of a key on it); 0 for a type that has none.
pub(super) fn btree_opclass(ty: PgType) -> u32 {
    match ty {
        PgType::Int2 => 1979,
        PgType::Int4 => 1978,
        PgType::Int8 => 3124,
        PgType::Text | PgType::Varchar => 3126,
        PgType::Bpchar => 10004,
        PgType::Name => 10028,
        PgType::Char => 10007,
        PgType::Bool => 10003,
        PgType::Bytea => 10006,
        PgType::Oid
        | PgType::Regclass
        | PgType::Regtype
        | PgType::Regnamespace
        | PgType::Regproc => 1981,
        PgType::Float4 => 10012,
        PgType::Float8 => 3123,
        PgType::Numeric => 3125,
        PgType::Date => 3122,
        PgType::Time => 10038,
        PgType::Timestamp => 3128,
        PgType::Timestamptz => 3127,
        PgType::Interval => 10022,
        PgType::Uuid => 10065,
        PgType::Inet => 10015,
        PgType::Tid => 10050,
        PgType::OidVector => 10032,
        t if t.element().is_some() => 10000,
        _ => 0,
    }
}

/// The primary key's columns, quoted as `pg_get_indexdef` and `pg_get_constraintdef` show them.
pub fn pkey_columns(tb: &Table) -> Vec<String> {
    tb.primary_key
        .iter()
        .filter_map(|i| tb.columns.get(*i))
        .map(|c| quote_ident(&c.name))
        .collect()
}

/// An index's key columns, quoted as `pg_get_indexdef(oid, column, …)` shows each.
pub fn index_columns(tb: &Table, ix: &ListedIndex<'_>) -> Vec<String> {
    ix.columns
        .iter()
        .filter_map(|i| tb.columns.get(*i))
        .map(|c| quote_ident(&c.name))
        .collect()
}

/// `schema.table`, each part quoted as PostgreSQL's deparser quotes it.
pub fn qualified_relation(tb: &Table) -> String {
    format!("{}.{}", quote_ident(&tb.schema), quote_ident(&tb.name))
}

/// `pg_get_indexdef` text of one of a table's listed indexes, the table written as `table`
/// and a partial index's predicate as `predicate` (see [`crate::exec::shown_predicate`]):
/// PostgreSQL's, with each key column's ordering where it is not the default (`DESC` takes
/// NULLS FIRST by default).
pub fn indexdef(table: &str, ix: &ListedIndex<'_>, tb: &Table, predicate: Option<&str>) -> String {
    let cols: Vec<String> = index_columns(tb, ix)
        .into_iter()
        .enumerate()
        .map(|(k, c)| {
            let o = ix.option(k);
            let (desc, nulls_first) = (o & 1 != 0, o & 2 != 0);
            match (desc, nulls_first) {
                (true, true) => format!("{c} DESC"),
                (true, false) => format!("{c} DESC NULLS LAST"),
                (false, true) => format!("{c} NULLS FIRST"),
                (false, false) => c,
            }
        })
        .collect();
    let mut def = format!(
        "CREATE {}INDEX {} ON {table} USING {} ({})",
        if ix.primary { "UNIQUE " } else { "" },
        quote_ident(ix.name),
        quote_ident("btree"),
        cols.join(", ")
    );
    if let Some(p) = predicate {
        def.push_str(" WHERE ");
        def.push_str(p);
    }
    def
}

/// `pg_get_constraintdef` text of a table's primary-key constraint.
pub fn pkey_constraintdef(tb: &Table) -> String {
    format!("PRIMARY KEY ({})", pkey_columns(tb).join(", "))
}

pub(super) fn indexes_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for tb in view.tables {
        for ix in tb.listed_indexes() {
            rows.push(row![
                t(&tb.schema),
                t(&tb.name),
                t(ix.name),
                NULL,
                Value::text(indexdef(
                    &qualified_relation(tb),
                    &ix,
                    tb,
                    ix.predicate.map(crate::exec::shown_predicate).as_deref(),
                )),
            ]);
        }
    }
    rows
}

pub(super) fn attrdef_oid(table_oid: u32, attnum: usize) -> u32 {
    // Unique while table OIDs stay below 2^31 / 1600 (MaxHeapAttributeNumber).
    0x8000_0000u32
        .wrapping_add(table_oid.wrapping_mul(1600))
        .wrapping_add(attnum as u32)
}

pub(super) fn attrdef_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for tb in view.tables {
        for (i, c) in tb.columns.iter().enumerate() {
            if let Some(d) = &c.default_sql {
                // adbin holds the expression text; the executor's pg_get_expr returns it as is.
                rows.push(vec![
                    oid(attrdef_oid(tb.oid, i + 1)),
                    oid(tb.oid),
                    int(i as i64 + 1),
                    t(d),
                ]);
            }
        }
    }
    rows
}

// ------------------------------------------------------------------ pg_tables, pg_views

pub(super) fn tables_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let u = view.user;
    let mut rows: Vec<Vec<Value>> = RELATIONS
        .iter()
        .filter(|r| r.kind == 'r' && listed(r))
        .map(|r| {
            let space = if r.shared { t("pg_global") } else { NULL };
            vec![
                t(r.schema),
                t(r.name),
                t(u),
                space,
                b(false),
                b(false),
                b(false),
                b(false),
            ]
        })
        .collect();
    for tb in tables_only(view).filter(|tb| tb.view.is_none()) {
        rows.push(vec![
            t(&tb.schema),
            t(&tb.name),
            t(u),
            NULL,
            b(!tb.primary_key.is_empty()),
            b(false),
            b(false),
            b(false),
        ]);
    }
    rows
}

pub(super) fn views_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    // The virtual system views are listed without a definition.
    let mut rows: Vec<Vec<Value>> = RELATIONS
        .iter()
        .filter(|r| r.kind == 'v' && listed(r))
        .map(|r| vec![t(r.schema), t(r.name), t(view.user), NULL])
        .collect();
    for tb in view.tables {
        if let Some(def) = tb.view.as_deref() {
            rows.push(vec![
                t(&tb.schema),
                t(&tb.name),
                t(view.user),
                Value::text(viewdef(def)),
            ]);
        }
    }
    rows
}

// ------------------------------------------------------------------ databases, roles

pub const PG_DATABASE_OWNER_OID: u32 = 6171;

pub(super) fn database_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let u = view.user;
    let template_acl = || texts(&[format!("=c/{u}"), format!("{u}=CTc/{u}")]);
    let db = |o: u32, name: &str, template: bool, allow: bool, acl: Value| {
        vec![
            oid(o),
            t(name),
            oid(SUPERUSER_OID),
            int(6), // UTF8
            ch('c'),
            b(template),
            b(allow),
            int(-1),
            oid(716),
            oid(1),
            oid(1663),
            t("C"),
            t("C"),
            NULL,
            NULL,
            acl,
        ]
    };
    let mut rows = vec![
        db(1, "template1", true, true, template_acl()),
        db(4, "template0", true, false, template_acl()),
        db(5, "postgres", false, true, NULL),
    ];
    // The reader's database, unless it is one of PostgreSQL's own.
    if database_oid(view.database, "").is_none() {
        rows.push(db(CURRENT_DATABASE_OID, view.database, false, true, NULL));
    }
    rows
}

/// The OID `pg_database` gives database `name` when the reader's database is `current`:
/// PostgreSQL's fixed ones for `template1`, `template0` and `postgres`; `None` for another
/// database than the reader's, which RockLake's catalogs do not describe.
pub(super) fn database_oid(name: &str, current: &str) -> Option<u32> {
    match name {
        "template1" => Some(1),
        "template0" => Some(4),
        "postgres" => Some(5),
        _ if name == current => Some(CURRENT_DATABASE_OID),
        _ => None,
    }
}

/// `pg_description`: the comments of schemas, relations, columns and primary-key indexes
/// (`COMMENT ON`, decision 0032).
pub(super) fn description_rows(view: &CatalogView<'_>, want: Want<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    let mut row = |objoid: u32, classoid: u32, sub: usize, text: &str| {
        rows.push(row![oid(objoid), oid(classoid), int(sub as i64), t(text)]);
    };
    for (name, o) in all_schemas(view) {
        if !want(o, "", &name) {
            continue;
        }
        if let Some(c) = schema_comment(view.schemas, &name, o) {
            row(o, NAMESPACE_OID, 0, c);
        }
    }
    for tb in view.tables {
        for ix in tb.listed_indexes().filter(|ix| want(ix.oid, "", ix.name)) {
            if let Some(c) = ix.comment {
                row(ix.oid, CLASS_OID, 0, c);
            }
            if let Some(c) = tb.pkey_constraint_comment.as_ref().filter(|_| ix.primary) {
                row(ix.oid, CONSTRAINT_OID, 0, c);
            }
        }
        if !want(tb.oid, "", &tb.name) {
            continue;
        }
        if let Some(c) = &tb.comment {
            row(tb.oid, CLASS_OID, 0, c);
        }
        for (i, col) in tb.columns.iter().enumerate() {
            if let Some(c) = &col.comment {
                row(tb.oid, CLASS_OID, i + 1, c);
            }
        }
    }
    rows
}

/// The comments initdb gives the built-in schemas (`pg_description`, `obj_description`).
pub const SCHEMA_COMMENTS: &[(u32, &str)] = &[
    (11, "system catalog schema"),
    (99, "reserved schema for TOAST tables"),
    (2200, "standard public schema"),
];

/// Whether the relation is listed in `pg_class`, `pg_attribute`, `pg_type`, `pg_tables`,
/// `pg_views` and information_schema. The catalogs RockLake keeps empty are not (decision
/// 0030): DuckDB's ATTACH reads the columns of every listed relation, and listing them made
/// it ~10 ms slower. They are there for the queries that name them.
pub(super) fn listed(r: &RelInfo) -> bool {
    !matches!(r.rel, Which::Empty | Which::Opclass | Which::Opfamily)
}

/// The OID of role `name` (`user` is the session's, the superuser; `""` is PUBLIC, 0).
pub fn role_oid(user: &str, name: &str) -> Option<u32> {
    match name {
        "" => Some(0),
        _ if name == user => Some(SUPERUSER_OID),
        _ => PREDEFINED_ROLES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, o)| *o),
    }
}

/// Whether `name` is one of PostgreSQL 15's predefined roles, which `pg_roles` lists.
pub fn predefined_role(name: &str) -> bool {
    PREDEFINED_ROLES.iter().any(|(n, _)| *n == name)
}

/// PostgreSQL 15's predefined roles (no login).
pub(super) const PREDEFINED_ROLES: &[(&str, u32)] = &[
    ("pg_database_owner", PG_DATABASE_OWNER_OID),
    ("pg_read_all_data", 6181),
    ("pg_write_all_data", 6182),
    ("pg_monitor", 3373),
    ("pg_read_all_settings", 3374),
    ("pg_read_all_stats", 3375),
    ("pg_stat_scan_tables", 3377),
    ("pg_read_server_files", 4569),
    ("pg_write_server_files", 4570),
    ("pg_execute_server_program", 4571),
    ("pg_signal_backend", 4200),
    ("pg_checkpoint", 4544),
];

// ------------------------------------------------------------------ pg_stat_activity

/// One row per client session of the engine. RockLake's catalogs describe only the reader's
/// own role (OID 10) and database, so another role's `usesysid` and another database's
/// `datid` are NULL.
pub(super) fn stat_activity_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let opt_text = |s: Option<&str>| s.map_or(NULL, t);
    let opt_ts = |v: Option<i64>| v.map_or(NULL, Value::Timestamp);
    let opt_xid = |v: Option<u32>| v.map_or(NULL, |x| int(x.into()));
    (view.activity)()
        .into_iter()
        .map(|r| {
            let datid = database_oid(&r.database, view.database).map_or(NULL, oid);
            let usesysid = if r.user == view.user {
                oid(SUPERUSER_OID)
            } else {
                NULL
            };
            let mut row = vec![
                datid,
                t(&r.database),
                int(r.pid.into()),
                NULL,
                usesysid,
                t(&r.user),
                t(&r.application_name),
            ];
            if r.visible {
                row.extend([
                    r.client_addr.map_or(NULL, Value::Bytes),
                    NULL,
                    r.client_port.map_or(NULL, |p| int(p.into())),
                    Value::Timestamp(r.backend_start),
                    opt_ts(r.xact_start),
                    opt_ts(r.query_start),
                    opt_ts(r.query_start),
                    opt_text(r.wait_event.map(|w| w.0)),
                    opt_text(r.wait_event.map(|w| w.1)),
                    t(r.state),
                    opt_xid(r.backend_xid),
                    opt_xid(r.backend_xmin),
                    NULL,
                    t(&r.query),
                    t("client backend"),
                ]);
            } else {
                // PostgreSQL shows the transaction ids to every reader.
                row.extend([NULL; 10]);
                row.extend([opt_xid(r.backend_xid), opt_xid(r.backend_xmin)]);
                row.extend([NULL, t("<insufficient privilege>"), NULL]);
            }
            row
        })
        .collect()
}

// ------------------------------------------------------------------ pg_locks

/// One row per advisory lock a session holds in a mode, or waits for. PostgreSQL lists the
/// relation and virtual-transaction locks of every running statement too; RockLake has none
/// (its reads take no locks), so only advisory locks appear.
pub(super) fn lock_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    (view.locks)()
        .into_iter()
        .map(|l| {
            vec![
                t("advisory"),
                oid(CURRENT_DATABASE_OID),
                NULL,
                NULL,
                NULL,
                NULL,
                NULL,
                oid(l.row.tag.classid),
                oid(l.row.tag.objid),
                int(l.row.tag.objsubid.into()),
                t(&l.virtualtransaction),
                int(l.pid.into()),
                t(l.row.mode.name()),
                b(l.row.granted),
                b(false),
                l.row.waitstart.map_or(NULL, Value::Timestamp),
            ]
        })
        .collect()
}

pub(super) fn roles_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let role = |name: &str, o: u32, sup: bool| {
        vec![
            t(name),
            b(sup),
            b(true),
            b(sup),
            b(sup),
            b(sup),
            b(sup),
            int(-1),
            t("********"),
            NULL,
            b(sup),
            NULL,
            oid(o),
        ]
    };
    let mut rows = vec![role(view.user, SUPERUSER_OID, true)];
    rows.extend(PREDEFINED_ROLES.iter().map(|(n, o)| role(n, *o, false)));
    rows
}

pub(super) fn user_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    vec![vec![
        t(view.user),
        oid(SUPERUSER_OID),
        b(true),
        b(true),
        b(true),
        b(true),
        t("********"),
        NULL,
        NULL,
    ]]
}

// ------------------------------------------------------------------ small fixed catalogs

pub(super) fn am_rows() -> Vec<Vec<Value>> {
    [
        (2, "heap", "heap_tableam_handler", 't'),
        (403, "btree", "bthandler", 'i'),
        (405, "hash", "hashhandler", 'i'),
        (783, "gist", "gisthandler", 'i'),
        (2742, "gin", "ginhandler", 'i'),
        (4000, "spgist", "spghandler", 'i'),
        (3580, "brin", "brinhandler", 'i'),
    ]
    .iter()
    .map(|(o, n, h, k)| {
        let handler = builtin_proc_oid(h).unwrap_or(0);
        vec![oid(*o), t(n), oid(handler), ch(*k)]
    })
    .collect()
}

pub(super) fn collation_rows() -> Vec<Vec<Value>> {
    let coll = |o: u32, name: &str, provider: char, locale: Option<&str>| {
        vec![
            oid(o),
            t(name),
            oid(PG_CATALOG_OID),
            oid(SUPERUSER_OID),
            ch(provider),
            b(true),
            int(-1),
            opt_text(locale),
            opt_text(locale),
            NULL,
            NULL,
        ]
    };
    vec![
        coll(DEFAULT_COLLATION_OID, "default", 'd', None),
        coll(C_COLLATION_OID, "C", 'c', Some("C")),
        coll(951, "POSIX", 'c', Some("POSIX")),
    ]
}

pub(super) fn tablespace_rows() -> Vec<Vec<Value>> {
    vec![
        vec![oid(1663), t("pg_default"), oid(SUPERUSER_OID), NULL, NULL],
        vec![oid(1664), t("pg_global"), oid(SUPERUSER_OID), NULL, NULL],
    ]
}

// ------------------------------------------------------------------ pg_settings

/// `pg_timezone_names`: each zone of the database with its abbreviation, offset and
/// daylight-saving flag at `now`.
pub(super) fn time_zone_rows(now: i64) -> Vec<Vec<Value>> {
    crate::tz::names()
        .into_iter()
        .filter_map(|name| {
            let zone = crate::tz::by_name(&name).ok()?;
            let (east, abbrev, dst) = zone.info_at(now);
            Some(vec![
                Value::text(name),
                Value::text(abbrev),
                offset_interval(east),
                Value::Bool(dst),
            ])
        })
        .collect()
}

/// `pg_timezone_abbrevs`: PostgreSQL's `Default` abbreviations; one defined by a zone has
/// that zone's offset at `now`.
pub(super) fn abbreviation_rows(now: i64) -> Vec<Vec<Value>> {
    crate::tzabbrev::all()
        .map(|(name, meaning, dst)| {
            let (east, dst) = match meaning {
                crate::tzabbrev::Abbrev::Fixed(east) => (east, dst),
                crate::tzabbrev::Abbrev::Zone(z) => crate::tz::by_name(z)
                    .map(|zone| {
                        let (east, _, dst) = zone.info_at(now);
                        (east, dst)
                    })
                    .unwrap_or((0, false)),
            };
            vec![Value::text(name), offset_interval(east), Value::Bool(dst)]
        })
        .collect()
}

pub(super) fn offset_interval(east: i32) -> Value {
    Value::Interval(crate::types::Interval {
        micros: i64::from(east) * 1_000_000,
        ..Default::default()
    })
}

pub(super) fn settings_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    crate::settings::SETTINGS
        .iter()
        .map(|st| {
            let setting = match view.settings {
                Some(v) => v.stored(st),
                None if st.name == "session_authorization" => view.user.to_string(),
                None => st.setting.to_string(),
            };
            let reset = match view.settings {
                Some(v) => v.reset_value(st),
                None => setting.clone(),
            };
            let (min, max) = match st.min_max {
                Some((a, z)) => (t(a), t(z)),
                None => (NULL, NULL),
            };
            let enumvals = if st.enumvals.is_empty() {
                NULL
            } else {
                Value::Array(st.enumvals.iter().map(|e| t(e)).collect())
            };
            let source = if st.context == "internal" {
                "default"
            } else {
                "configuration file"
            };
            vec![
                t(st.name),
                t(&setting),
                opt_text(st.unit),
                t(st.category),
                t(st.short_desc),
                NULL,
                t(st.context),
                t(st.vartype),
                t(source),
                min,
                max,
                enumvals,
                t(st.setting),
                t(&reset),
                NULL,
                NULL,
                b(false),
            ]
        })
        .collect()
}

// ------------------------------------------------------------------ information_schema
