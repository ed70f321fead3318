//! The rows of `information_schema`'s views.

use super::*;

pub(super) fn is_schemata_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    all_schemas(view)
        .into_iter()
        .map(|(name, _)| {
            let owner = if name == "public" {
                "pg_database_owner"
            } else {
                view.user
            };
            vec![
                t(view.database),
                Value::text(name),
                t(owner),
                NULL,
                NULL,
                NULL,
                NULL,
            ]
        })
        .collect()
}

pub(super) fn is_tables_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let row = |schema: &str, name: &str, is_view: bool| {
        vec![
            t(view.database),
            t(schema),
            t(name),
            t(if is_view { "VIEW" } else { "BASE TABLE" }),
            NULL,
            NULL,
            NULL,
            NULL,
            NULL,
            t(if is_view { "NO" } else { "YES" }),
            t("NO"),
            NULL,
        ]
    };
    let mut rows: Vec<Vec<Value>> = RELATIONS
        .iter()
        .filter(|r| listed(r))
        .map(|r| row(r.schema, r.name, r.kind == 'v'))
        .collect();
    rows.extend(tables_only(view).map(|tb| row(&tb.schema, &tb.name, tb.view.is_some())));
    rows
}

/// `information_schema.views`: the system views (without a definition, as `pg_views` lists
/// them) and the user's, with their text. RockLake's views are read-only and have no
/// triggers or CHECK OPTION.
pub(super) fn is_views_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let row = |schema: &str, name: &str, definition: Value| {
        let mut r = vec![t(view.database), t(schema), t(name), definition, t("NONE")];
        r.extend((0..5).map(|_| t("NO")));
        r
    };
    let mut rows: Vec<Vec<Value>> = RELATIONS
        .iter()
        .filter(|r| r.kind == 'v' && listed(r))
        .map(|r| row(r.schema, r.name, NULL))
        .collect();
    for tb in view.tables {
        if let Some(def) = tb.view.as_deref() {
            rows.push(row(&tb.schema, &tb.name, Value::text(viewdef(def))));
        }
    }
    rows
}

/// The NOT NULL columns of a user table (primary-key columns are), with PostgreSQL 15's name
/// of the CHECK constraint information_schema shows for each: `<schema oid>_<table oid>_<attnum>_not_null`.
pub(super) fn not_null_checks<'t>(view: &CatalogView<'_>, tb: &'t Table) -> Vec<(String, &'t str)> {
    let nsp = schema_oid_of(view, &tb.schema);
    tb.columns
        .iter()
        .enumerate()
        .filter(|(i, c)| c.not_null || tb.primary_key.contains(i))
        .map(|(i, c)| {
            (
                format!("{nsp}_{}_{}_not_null", tb.oid, i + 1),
                c.name.as_str(),
            )
        })
        .collect()
}

/// `information_schema.table_constraints`: each user table's primary key and its NOT NULL
/// columns as CHECK constraints, as PostgreSQL 15 lists them (the emulated catalogs' are left
/// out).
pub(super) fn is_table_constraints_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let row = |tb: &Table, name: &str, kind: &str| {
        vec![
            t(view.database),
            t(&tb.schema),
            t(name),
            t(view.database),
            t(&tb.schema),
            t(&tb.name),
            t(kind),
            t("NO"),
            t("NO"),
            t("YES"),
            NULL,
        ]
    };
    let mut rows = Vec::new();
    for tb in tables_only(view) {
        for (name, _) in not_null_checks(view, tb) {
            rows.push(row(tb, &name, "CHECK"));
        }
        if !tb.primary_key.is_empty() {
            rows.push(row(tb, &tb.pkey_name, "PRIMARY KEY"));
        }
    }
    rows
}

/// `information_schema.key_column_usage` (`usage`: `constraint_column_usage`, its columns in
/// another order and without positions): each primary-key column.
pub(super) fn is_key_column_usage_rows(view: &CatalogView<'_>, usage: bool) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for tb in view.tables {
        for (k, &c) in tb.primary_key.iter().enumerate() {
            let column = tb.columns.get(c).map_or("", |c| c.name.as_str());
            let (table, constraint) = (
                [t(view.database), t(&tb.schema), t(&tb.name)],
                [t(view.database), t(&tb.schema), t(&tb.pkey_name)],
            );
            rows.push(if usage {
                table
                    .into_iter()
                    .chain([t(column)])
                    .chain(constraint)
                    .collect()
            } else {
                constraint
                    .into_iter()
                    .chain(table)
                    .chain([t(column), int(k as i64 + 1), NULL])
                    .collect()
            });
        }
    }
    rows
}

/// `information_schema.check_constraints`: the NOT NULL columns of the user tables.
pub(super) fn is_check_constraints_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    tables_only(view)
        .flat_map(|tb| {
            not_null_checks(view, tb).into_iter().map(|(name, column)| {
                vec![
                    t(view.database),
                    t(&tb.schema),
                    t(&name),
                    Value::text(format!("{column} IS NOT NULL")),
                ]
            })
        })
        .collect()
}

/// information_schema's type facts of a column: (data_type, char max length, char octet length,
/// numeric precision, radix, scale, datetime precision).
pub(super) fn column_type_info(
    ty: PgType,
    typmod: i32,
) -> (String, Value, Value, Value, Value, Value, Value) {
    let some = |v: i64| Value::Int(v);
    let data_type = match ty {
        t if t.is_array() => "ARRAY".to_string(),
        PgType::Name => "name".to_string(),
        other => other.sql_name().to_string(),
    };
    let (maxlen, octets) = match ty {
        PgType::Varchar | PgType::Bpchar if typmod >= 4 => {
            (some(typmod as i64 - 4), some((typmod as i64 - 4) * 4))
        }
        PgType::Varchar | PgType::Bpchar | PgType::Text => (NULL, some(1_073_741_824)),
        _ => (NULL, NULL),
    };
    let (prec, radix, scale) = match ty {
        PgType::Int2 => (some(16), some(2), some(0)),
        PgType::Int4 => (some(32), some(2), some(0)),
        PgType::Int8 => (some(64), some(2), some(0)),
        PgType::Float4 => (some(24), some(2), NULL),
        PgType::Float8 => (some(53), some(2), NULL),
        PgType::Numeric if typmod >= 4 => {
            // PostgreSQL 15's view reads the scale's 16 bits as they are, so a negative scale
            // shows as 2048 + scale; so does this.
            let m = i64::from(typmod - 4);
            (some((m >> 16) & 0xFFFF), some(10), some(m & 0xFFFF))
        }
        PgType::Numeric => (NULL, some(10), NULL),
        _ => (NULL, NULL, NULL),
    };
    let dt_prec = match ty {
        PgType::Date => some(0),
        PgType::Time | PgType::Timestamp | PgType::Timestamptz | PgType::Interval => {
            some(if typmod >= 0 {
                (typmod & 0xFFFF) as i64
            } else {
                6
            })
        }
        _ => NULL,
    };
    (data_type, maxlen, octets, prec, radix, scale, dt_prec)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn is_column_row(
    view: &CatalogView<'_>,
    schema: &str,
    table: &str,
    name: &str,
    pos: usize,
    ty: PgType,
    typmod: i32,
    not_null: bool,
    default: Option<&str>,
    updatable: bool,
) -> Vec<Value> {
    let (data_type, maxlen, octets, prec, radix, scale, dt_prec) = column_type_info(ty, typmod);
    let yes_no = |v: bool| t(if v { "YES" } else { "NO" });
    vec![
        t(view.database),
        t(schema),
        t(table),
        t(name),
        int(pos as i64),
        opt_text(default),
        yes_no(!not_null),
        Value::text(data_type),
        maxlen,
        octets,
        prec,
        radix,
        scale,
        dt_prec,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        t(view.database),
        t("pg_catalog"),
        t(ty.typname()),
        NULL,
        NULL,
        NULL,
        NULL,
        Value::text(pos.to_string()),
        t("NO"),
        t("NO"),
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        t("NO"),
        t("NEVER"),
        NULL,
        yes_no(updatable),
    ]
}

pub(super) fn is_columns_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for r in RELATIONS.iter().filter(|r| listed(r)) {
        let mut fixed_prefix = r.kind == 'r';
        for (i, (name, ty)) in r.cols.iter().enumerate() {
            fixed_prefix = fixed_prefix && ty.typlen() > 0;
            rows.push(is_column_row(
                view,
                r.schema,
                r.name,
                name,
                i + 1,
                *ty,
                -1,
                fixed_prefix,
                None,
                r.kind == 'r',
            ));
        }
    }
    for tb in tables_only(view) {
        for (i, c) in tb.columns.iter().enumerate() {
            let Column {
                name,
                ty,
                typmod,
                not_null,
                default_sql,
                identity,
                serial: _,
                comment: _,
            } = c;
            let sequence = identity.and_then(|idn| {
                view.tables
                    .iter()
                    .find(|s| s.id == idn.sequence)
                    .and_then(|s| s.sequence.clone())
                    .map(|def| (idn.always, def))
            });
            let not_null = *not_null || tb.primary_key.contains(&i);
            rows.push(is_column_row(
                view,
                &tb.schema,
                &tb.name,
                name,
                i + 1,
                *ty,
                *typmod,
                not_null,
                // pg_get_expr's text: every name quoted under quote_all_identifiers.
                default_sql
                    .as_deref()
                    .map(|d| match quote_all() {
                        true => std::borrow::Cow::Owned(requote_expression(d)),
                        false => std::borrow::Cow::Borrowed(d),
                    })
                    .as_deref(),
                true,
            ));
            if let (Some((always, def)), Some(row)) = (sequence, rows.last_mut()) {
                row[34] = t("YES");
                row[35] = t(if always { "ALWAYS" } else { "BY DEFAULT" });
                row[36] = Value::text(def.start.to_string());
                row[37] = Value::text(def.increment.to_string());
                row[38] = Value::text(def.max.to_string());
                row[39] = Value::text(def.min.to_string());
                row[40] = t(if def.cycle { "YES" } else { "NO" });
            }
        }
    }
    rows
}

// ------------------------------------------------------------------ identifiers
