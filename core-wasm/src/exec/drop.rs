//! DROP of tables, sequences and schemas with their cascades; CREATE / ALTER SCHEMA; LOCK.

use super::*;

/// A relation's name as PostgreSQL's messages give it (`getObjectDescription`): bare when
/// search_path finds it by that name, else qualified with its schema, each part quoted where
/// needed.
pub(crate) fn name_in_message(rcx: &ReadCx<'_>, t: &Table) -> String {
    let q = crate::pgcatalog::quote_ident;
    match rcx.relation_visible(t.oid) {
        Some(true) => q(&t.name),
        _ => format!("{}.{}", q(&t.schema), q(&t.name)),
    }
}

/// A column default that draws from one of the sequences being dropped: its description as
/// PostgreSQL's messages give it, the table, the column.
pub(super) type Dependent = (String, TableRef, usize);

/// The column defaults that draw from any of `seqs` — a serial column's by the sequence's id,
/// any other `nextval('…')` by the name it gives — except the columns `skip` names (table id,
/// column position: those going away with the sequences).
pub(super) fn default_dependents(
    cx: &mut Cx<'_>,
    seqs: &[TableRef],
    skip: &dyn Fn(u32, usize) -> bool,
) -> Result<Vec<Dependent>, SqlError> {
    let at = cx.read_point();
    let rcx = cx.reader(at);
    let mut out = Vec::new();
    for t in rcx.all_tables().iter().filter(|t| t.sequence.is_none()) {
        for (ci, c) in t.columns.iter().enumerate() {
            if skip(t.id, ci) {
                continue;
            }
            let Some(sql) = c.default_sql.as_deref().filter(|d| d.contains("nextval")) else {
                continue;
            };
            let named = match c.serial {
                Some(id) => vec![id],
                None => crate::sequence::default_references(&parse_default(sql)?)
                    .iter()
                    .filter_map(|name| {
                        crate::query::name_parts(name)
                            .and_then(|parts| split_name(&parts).ok())
                            .and_then(|(schema, rel)| rcx.find_table(schema.as_deref(), &rel))
                            .map(|x| x.id)
                    })
                    .collect(),
            };
            if let Some(s) = seqs.iter().find(|s| named.contains(&s.id)) {
                out.push((
                    format!(
                        "default value for column {} of table {} depends on sequence {}",
                        c.name,
                        name_in_message(&rcx, t),
                        name_in_message(&rcx, s)
                    ),
                    t.clone(),
                    ci,
                ));
            }
        }
    }
    Ok(out)
}

/// Dropping sequences that column defaults use: without CASCADE PostgreSQL's 2BP01 (for the
/// `kind` of object the statement drops, `name` when it names one, `several` otherwise);
/// with it, the defaults are removed under PostgreSQL's notice.
pub(super) fn cascade_to_defaults(
    cx: &mut Cx<'_>,
    dependents: Vec<Dependent>,
    cascade: bool,
    several: bool,
    kind: &'static str,
    name: &str,
) -> Result<(), SqlError> {
    if dependents.is_empty() {
        return Ok(());
    }
    if !cascade {
        let detail = dependents
            .iter()
            .map(|d| d.0.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        return Err(if several {
            SqlError::DependentObjectsOfSeveral { detail }
        } else {
            SqlError::DependentObjectsOf {
                kind,
                name: name.to_string(),
                detail,
            }
        });
    }
    // PostgreSQL's notice names the dependent object, or counts them and lists them.
    let objects: Vec<String> = dependents
        .iter()
        .map(|d| {
            d.0.split(" depends on")
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    if let Some(n) = cascade_notice(&objects) {
        cx.sess.notice(n);
    }
    for (_, t, ci) in dependents {
        // The table as this transaction has it now (an earlier default of it may be gone).
        let at = cx.read_point();
        let current = cx
            .reader(at)
            .find_table(Some(&t.schema), &t.name)
            .unwrap_or(t);
        let mut altered = (*current).clone();
        if let Some(c) = altered.columns.get_mut(ci) {
            c.default_sql = None;
            c.serial = None;
        }
        let p = cx.pending()?;
        p.uses_definition(&current);
        p.put_table(Arc::new(altered), false)?;
    }
    Ok(())
}

/// `DROP SEQUENCE [IF EXISTS] name, … [CASCADE | RESTRICT]`: a sequence a column's default
/// calls needs CASCADE, which removes those defaults (PostgreSQL's `drop cascades to default
/// value …`); an identity column's sequence goes only with its column.
pub(super) fn drop_sequences(
    cx: &mut Cx<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
) -> Result<Output, SqlError> {
    cx.check_writable("DROP SEQUENCE")?;
    let mut found: Vec<TableRef> = Vec::new();
    for n in names {
        let parts = object_name(n);
        match find_table(cx, &parts)? {
            Some(t) if t.sequence.is_none() => {
                return Err(SqlError::WrongObjectTypeHint {
                    message: format!("\"{}\" is not a sequence", t.name),
                    hint: crate::view::drop_hint(&t).into(),
                })
            }
            Some(t) => found.push(t),
            None => missing_to_drop(cx, &parts, if_exists, "sequence", |name| {
                SqlError::UndefinedSequence { name }
            })?,
        }
    }
    // Identity columns and defaults that need each sequence.
    let tables = {
        let at = cx.read_point();
        cx.reader(at).all_tables()
    };
    for s in &found {
        let Some(def) = s.sequence.as_deref() else {
            continue;
        };
        if let (true, Some((owner, column))) = (def.identity, def.owner.as_ref()) {
            if let Some(t) = tables.iter().find(|t| t.id == *owner) {
                if !found.iter().any(|f| f.id == t.id) {
                    let at = cx.read_point();
                    let rcx = cx.reader(at);
                    let (s_name, t_name) = (name_in_message(&rcx, s), name_in_message(&rcx, t));
                    return Err(SqlError::RequiredByColumn {
                        message: format!(
                            "cannot drop sequence {s_name} because column {column} of table {t_name} requires it"
                        ),
                        hint: format!("You can drop column {column} of table {t_name} instead."),
                    });
                }
            }
        }
    }
    let dependents = default_dependents(cx, &found, &|_, _| false)?;
    let name = {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        found
            .first()
            .map(|s| name_in_message(&rcx, s))
            .unwrap_or_default()
    };
    cascade_to_defaults(cx, dependents, cascade, found.len() > 1, "sequence", &name)?;
    crate::view::cascade_to_views(cx, &found, cascade, found.len() > 1, "sequence", None)?;
    for s in found {
        cx.pending()?.drop_definition(&s)?;
    }
    Ok(Output::Command {
        tag: "DROP SEQUENCE".into(),
    })
}

pub(super) fn drop_tables(
    cx: &mut Cx<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
) -> Result<Output, SqlError> {
    cx.check_writable("DROP TABLE")?;
    // The tables the statement drops: their own columns' defaults go with them.
    let mut named: Vec<u32> = Vec::new();
    for n in names {
        if let Some(t) = find_table(cx, &object_name(n))? {
            named.push(t.id);
        }
    }
    for n in names {
        let parts = object_name(n);
        let found = find_table(cx, &parts)?;
        if found.is_none() {
            // A primary key's index is a relation of that name, but not a table.
            let (schema, name) = split_name(&parts)?;
            let at = cx.read_point();
            let rcx = cx.reader(at);
            let schemas = schema.map_or_else(|| rcx.existing_search_path(), |s| vec![s]);
            if schemas.iter().any(|s| rcx.relation_named(s, &name)) {
                return Err(SqlError::WrongObjectTypeHint {
                    message: format!("\"{name}\" is not a table"),
                    hint: "Use DROP INDEX to remove an index.".into(),
                });
            }
        }
        match found {
            Some(t) if t.sequence.is_some() || t.view.is_some() => {
                return Err(SqlError::WrongObjectTypeHint {
                    message: format!("\"{}\" is not a table", t.name),
                    hint: crate::view::drop_hint(&t).into(),
                })
            }
            Some(t) => {
                // Its columns' sequences go with it; other tables' defaults that draw from
                // them need CASCADE, which removes those defaults.
                let owned = owned_sequences(cx, t.id, None);
                let with_sequences: Vec<TableRef> = std::iter::once(t.clone())
                    .chain(owned.iter().cloned())
                    .collect();
                crate::view::cascade_to_views(
                    cx,
                    &with_sequences,
                    cascade,
                    names.len() > 1,
                    "table",
                    None,
                )?;
                if !owned.is_empty() {
                    let deps = default_dependents(cx, &owned, &|tid, _| named.contains(&tid))?;
                    let shown = {
                        let at = cx.read_point();
                        name_in_message(&cx.reader(at), &t)
                    };
                    cascade_to_defaults(cx, deps, cascade, names.len() > 1, "table", &shown)?;
                }
                let p = cx.pending()?;
                p.drop_definition(&t)?;
                for s in owned {
                    p.drop_definition(&s)?;
                }
            }
            None => missing_to_drop(cx, &parts, if_exists, "table", |name| {
                SqlError::UndefinedTableToDrop { name }
            })?,
        }
    }
    Ok(Output::Command {
        tag: "DROP TABLE".into(),
    })
}

/// A DROP's name that finds nothing: with IF EXISTS PostgreSQL's notice, else its error —
/// naming what is missing, the schema of a qualified name first (`kind`: "table",
/// "sequence"; `missing` makes the error for the relation).
pub(crate) fn missing_to_drop(
    cx: &mut Cx<'_>,
    parts: &[String],
    if_exists: bool,
    kind: &'static str,
    missing: fn(String) -> SqlError,
) -> Result<(), SqlError> {
    let (schema, name) = split_name(parts)?;
    let missing_schema = schema.filter(|s| !schema_exists(cx, s));
    if !if_exists {
        return Err(match missing_schema {
            Some(name) => SqlError::UndefinedSchema { name },
            None => missing(name),
        });
    }
    cx.sess.notice(match missing_schema {
        Some(name) => Notice::Missing {
            kind: "schema",
            name,
        },
        None => Notice::Missing { kind, name },
    });
    Ok(())
}

/// PostgreSQL's system columns: no user column may take their names.
pub(crate) const SYSTEM_COLUMNS: [&str; 6] = ["ctid", "xmin", "cmin", "xmax", "cmax", "tableoid"];

pub(super) fn refuse_system_column_name(name: &str) -> Result<(), SqlError> {
    if SYSTEM_COLUMNS.contains(&name) {
        return Err(SqlError::SystemColumnName {
            name: name.to_string(),
        });
    }
    Ok(())
}

pub(super) fn create_schema(
    cx: &mut Cx<'_>,
    name: &ast::SchemaName,
    if_not_exists: bool,
) -> Result<Output, SqlError> {
    cx.check_writable("CREATE SCHEMA")?;
    let n = match name {
        ast::SchemaName::Simple(o) => object_name(o).concat(),
        other => return Err(SqlError::feature(format!("CREATE SCHEMA {other}"))),
    };
    if n.starts_with("pg_") {
        return Err(SqlError::ReservedName {
            message: format!("unacceptable schema name \"{n}\""),
            detail: "The prefix \"pg_\" is reserved for system schemas.".into(),
        });
    }
    if schema_exists(cx, &n) {
        if if_not_exists {
            cx.sess.notice(Notice::SchemaExists { name: n });
            return Ok(Output::Command {
                tag: "CREATE SCHEMA".into(),
            });
        }
        return Err(SqlError::DuplicateSchema { name: n });
    }
    let oid = cx.st.next_oid;
    cx.st.next_oid += 1;
    cx.pending()?.create_schema(Schema {
        name: n,
        oid,
        comment: None,
    })?;
    Ok(Output::Command {
        tag: "CREATE SCHEMA".into(),
    })
}

/// PostgreSQL lists at most this many dependent objects in a message.
pub(super) const MAX_REPORTED_DEPS: usize = 100;

/// `DROP SCHEMA [IF EXISTS] name, … [CASCADE | RESTRICT]`: every name is checked before any is
/// dropped; a schema with tables needs CASCADE, which drops them first (one NOTICE lists them,
/// as PostgreSQL's). The built-in schemas stay.
pub(super) fn drop_schemas(
    cx: &mut Cx<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
) -> Result<Output, SqlError> {
    cx.check_writable("DROP SCHEMA")?;
    // Every name is found before anything depending on one is looked at (PostgreSQL's
    // `RemoveObjects`).
    let mut found: Vec<String> = Vec::new();
    for n in names {
        let name = object_name(n).concat();
        match name.as_str() {
            "pg_catalog" | "pg_toast" => return Err(SqlError::RequiredBySystem { name }),
            "information_schema" => {
                return Err(SqlError::DependentObjects {
                    name,
                    detail: String::new(),
                })
            }
            "public" => return Err(SqlError::feature("DROP SCHEMA public")),
            _ => {}
        }
        if schema_exists(cx, &name) {
            found.push(name);
        } else if if_exists {
            cx.sess.notice(Notice::Missing {
                kind: "schema",
                name,
            });
        } else {
            return Err(SqlError::UndefinedSchema { name });
        }
    }
    let mut drops: Vec<(String, Vec<TableRef>)> = Vec::new();
    let mut cascaded: Vec<String> = Vec::new();
    // Dependents of several schemas are listed from the last one named (PostgreSQL's
    // dependency walk), under a message for them all.
    let several = found.len() > 1;
    let mut dependents: Vec<String> = Vec::new();
    for name in found.into_iter().rev() {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        let mut tables: Vec<TableRef> = rcx
            .all_tables()
            .iter()
            .filter(|t| t.schema == name)
            .cloned()
            .collect();
        tables.sort_by_key(|t| t.oid);
        // Named as PostgreSQL's messages name them ([`name_in_message`]). A sequence a column
        // owns goes with its table, unnamed.
        let described: Vec<String> = tables
            .iter()
            .filter(|t| {
                !t.sequence.as_ref().is_some_and(|d| {
                    d.owner
                        .as_ref()
                        .is_some_and(|(o, _)| tables.iter().any(|x| x.id == *o))
                })
            })
            .map(|t| {
                let kind = if t.sequence.is_some() {
                    "sequence"
                } else if t.view.is_some() {
                    "view"
                } else {
                    "table"
                };
                format!("{kind} {}", name_in_message(&rcx, t))
            })
            .collect();
        dependents.extend(
            described
                .iter()
                .map(|d| format!("{d} depends on schema {name}")),
        );
        cascaded.extend(described);
        drops.push((name, tables));
    }
    // Views elsewhere that read what the schemas hold go with them.
    let dropped: Vec<TableRef> = drops.iter().flat_map(|(_, t)| t.iter().cloned()).collect();
    let views_elsewhere = {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        let deps = crate::view::dependents(&rcx, &dropped);
        for (v, on) in &deps {
            let (v, on) = (
                crate::view::described(&rcx, v),
                crate::view::described(&rcx, on),
            );
            dependents.push(format!("{v} depends on {on}"));
            cascaded.push(v);
        }
        deps.into_iter().map(|(v, _)| v).collect::<Vec<_>>()
    };
    if !cascaded.is_empty() && !cascade {
        let detail = reported(dependents.into_iter());
        return Err(match drops.first() {
            Some((name, _)) if !several => SqlError::DependentObjects {
                name: name.clone(),
                detail,
            },
            _ => SqlError::DependentObjectsOfSeveral { detail },
        });
    }
    if let Some(n) = cascade_notice(&cascaded) {
        cx.sess.notice(n);
    }
    for v in views_elsewhere {
        cx.pending()?.drop_definition(&v)?;
    }
    for (name, tables) in drops {
        let committed = cx.st.schemas.contains_key(&name);
        let p = cx.pending()?;
        for t in tables {
            p.drop_definition(&t)?;
        }
        p.drop_schema(&name, committed)?;
    }
    Ok(Output::Command {
        tag: "DROP SCHEMA".into(),
    })
}

/// PostgreSQL's notice for what a DROP … CASCADE takes with it (`objects`: "table t",
/// "view v", …): the one, or how many, each on a line of its detail.
pub(crate) fn cascade_notice(objects: &[String]) -> Option<Notice> {
    match objects {
        [] => None,
        [one] => Some(Notice::Cascade {
            message: format!("drop cascades to {one}"),
            detail: None,
        }),
        many => Some(Notice::Cascade {
            message: format!("drop cascades to {} other objects", many.len()),
            detail: Some(reported(
                many.iter().map(|d| format!("drop cascades to {d}")),
            )),
        }),
    }
}

/// Dependent objects as PostgreSQL's messages list them: one per line, the first
/// [`MAX_REPORTED_DEPS`], then how many more.
pub(super) fn reported(lines: impl Iterator<Item = String>) -> String {
    let all: Vec<String> = lines.collect();
    let mut out: Vec<String> = all.iter().take(MAX_REPORTED_DEPS).cloned().collect();
    if all.len() > MAX_REPORTED_DEPS {
        out.push(format!(
            "and {} other objects (see server log for list)",
            all.len() - MAX_REPORTED_DEPS
        ));
    }
    out.join("\n")
}

/// `LOCK [TABLE] name, … IN ACCESS SHARE MODE`, what pg_dump takes on every table it dumps:
/// what a plain read takes, and RockLake's reads take no locks (the transaction's snapshot
/// keeps what it reads). Stronger modes, taken to keep other writers out, are refused rather
/// than granted without effect.
pub(super) fn lock_tables(cx: &mut Cx<'_>, l: &ast::Lock) -> Result<Output, SqlError> {
    if !cx.sess.multi_statement && !cx.sess.txn.as_ref().is_some_and(|t| t.explicit) {
        return Err(SqlError::NoTransactionBlock { what: "LOCK TABLE" });
    }
    for target in &l.tables {
        let parts = object_name(&target.name);
        let virtual_relation = match parts.as_slice() {
            [schema, name] => crate::pgcatalog::is_virtual(Some(schema), name),
            [name] => crate::pgcatalog::is_virtual(None, name),
            _ => false,
        };
        if virtual_relation {
            continue;
        }
        match find_table(cx, &parts)? {
            None => {
                return Err(SqlError::UndefinedTable {
                    name: parts.last().cloned().unwrap_or_default(),
                })
            }
            Some(t) if t.sequence.is_some() => {
                return Err(SqlError::WrongObjectTypeDetail {
                    message: format!("cannot lock relation \"{}\"", t.name),
                    detail: "This operation is not supported for sequences.".into(),
                })
            }
            Some(_) => {}
        }
    }
    match &l.lock_mode {
        Some(ast::LockTableMode::AccessShare) => {}
        mode => {
            let mode = mode
                .as_ref()
                .map_or("ACCESS EXCLUSIVE".to_string(), |m| m.to_string());
            return Err(SqlError::FeatureNotSupportedHint {
                what: format!("LOCK TABLE … IN {mode} MODE"),
                hint: "RockLake takes no table locks: a conflicting write fails at COMMIT with \
                       40001 instead of waiting."
                    .into(),
            });
        }
    }
    cx.ensure_txn();
    Ok(Output::Command {
        tag: "LOCK TABLE".into(),
    })
}

/// `ALTER SCHEMA name OWNER TO role`, the one action pg_dump's output has (RockLake's single
/// role owns every schema already).
pub(super) fn alter_schema(cx: &mut Cx<'_>, a: &ast::AlterSchema) -> Result<Output, SqlError> {
    let [ast::AlterSchemaOperation::OwnerTo { owner }] = a.operations.as_slice() else {
        return Err(SqlError::feature(format!(
            "ALTER SCHEMA {}",
            a.operations
                .first()
                .map(|op| crate::query::leading_words(&op.to_string(), 2))
                .unwrap_or_default()
        )));
    };
    if a.if_exists {
        return Err(syntax_at("EXISTS"));
    }
    cx.check_writable("ALTER SCHEMA")?;
    let [name] = object_name(&a.name)
        .try_into()
        .map_err(|_| syntax_at("."))?;
    let system = matches!(name.as_str(), "pg_catalog" | "information_schema");
    if !system && !schema_exists(cx, &name) {
        return Err(SqlError::UndefinedSchema { name });
    }
    check_new_owner(cx, owner)?;
    Ok(Output::Command {
        tag: "ALTER SCHEMA".into(),
    })
}
