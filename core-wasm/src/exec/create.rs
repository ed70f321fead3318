//! CREATE TABLE, CREATE TABLE AS, SELECT INTO, and the maintenance statements (VACUUM, ANALYZE).

use super::*;

/// CREATE TABLE clauses RockLake does not implement (PostgreSQL's `LIKE`, `INHERITS`,
/// `PARTITION BY`, storage parameters, …) or that other dialects add: refused, never ignored (an
/// ignored `LIKE` or `INHERITS` would make a table with other columns).
pub(super) fn refuse_unsupported_create_clauses(ct: &ast::CreateTable) -> Result<(), SqlError> {
    if ct.on_commit.is_some() && !ct.temporary {
        return Err(SqlError::InvalidTableDefinition {
            message: "ON COMMIT can only be used on temporary tables".into(),
        });
    }
    let refused = [
        (ct.like.is_some(), "CREATE TABLE … (LIKE …)"),
        (ct.inherits.is_some(), "CREATE TABLE … INHERITS"),
        (ct.partition_by.is_some(), "CREATE TABLE … PARTITION BY"),
        (
            ct.partition_of.is_some() || ct.for_values.is_some(),
            "CREATE TABLE … PARTITION OF",
        ),
        (
            !default_table_options(&ct.table_options),
            "CREATE TABLE … WITH (storage parameters), TABLESPACE or table options",
        ),
        (ct.or_replace, "CREATE OR REPLACE TABLE"),
        (
            ct.external || ct.dynamic || ct.transient || ct.volatile || ct.iceberg,
            "this kind of table",
        ),
        (ct.clone.is_some(), "CREATE TABLE … CLONE"),
        (ct.comment.is_some(), "CREATE TABLE … COMMENT"),
        (ct.on_cluster.is_some(), "CREATE TABLE … ON CLUSTER"),
        (
            ct.primary_key.is_some() || ct.order_by.is_some() || ct.cluster_by.is_some(),
            "CREATE TABLE … ORDER BY / PRIMARY KEY / CLUSTER BY clauses",
        ),
        (
            ct.file_format.is_some() || ct.location.is_some(),
            "CREATE TABLE … STORED AS / LOCATION",
        ),
        (
            !ct.sqlite_table_options.options.is_empty(),
            "CREATE TABLE … WITHOUT ROWID / STRICT",
        ),
    ];
    first_present(&refused).map_or(Ok(()), |what| Err(SqlError::feature(what)))
}

/// No table options, or only `TABLESPACE pg_default` (PostgreSQL's default, RockLake's only).
pub(super) fn default_table_options(options: &ast::CreateTableOptions) -> bool {
    match options {
        ast::CreateTableOptions::None => true,
        ast::CreateTableOptions::Plain(o) => o.iter().all(|o| {
            matches!(o, ast::SqlOption::TableSpace(t) if t.name == "pg_default" && t.storage.is_none())
        }),
        _ => false,
    }
}

pub(super) fn create_table(cx: &mut Cx<'_>, ct: &ast::CreateTable) -> Result<Output, SqlError> {
    cx.check_writable(if ct.query.is_some() {
        "CREATE TABLE AS"
    } else {
        "CREATE TABLE"
    })?;
    refuse_unsupported_create_clauses(ct)?;
    let parts = object_name(&ct.name);
    let (schema, name) = qualified(cx, &parts)?;
    if !schema_exists(cx, &schema) {
        return Err(SqlError::UndefinedSchema { name: schema });
    }
    let existing = {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        rcx.find_table(Some(&schema), &name)
    };
    if existing.is_some() {
        if ct.if_not_exists {
            cx.sess.notice(Notice::RelationExists { name });
            return Ok(Output::Command {
                tag: if ct.query.is_some() {
                    "CREATE TABLE AS"
                } else {
                    "CREATE TABLE"
                }
                .into(),
            });
        }
        return Err(SqlError::DuplicateTable { name });
    }
    // A temporary table lives only in the transaction that creates it (`ON COMMIT DROP`, as
    // DuckDB's UPDATE through the postgres extension makes them); one that would outlive it
    // is refused rather than made a permanent table.
    let temporary = ct.temporary;
    if temporary && !matches!(ct.on_commit, Some(ast::OnCommit::Drop)) {
        return Err(SqlError::feature(
            "temporary tables other than ON COMMIT DROP",
        ));
    }
    if let Some(query) = &ct.query {
        return create_table_as(cx, ct, query, schema, name);
    }
    if ct.with_data.is_some() {
        return Err(SqlError::Syntax {
            message: "WITH [NO] DATA belongs to CREATE TABLE … AS".into(),
        });
    }
    let mut columns: Vec<Column> = Vec::new();
    let mut pk: Vec<usize> = Vec::new();
    let mut pk_name: Option<String> = None;
    // The sequences of serial and identity columns: (column, definition, identity's ALWAYS).
    let mut owned_sequences: Vec<(usize, PlannedSequence)> = Vec::new();
    for (i, cd) in ct.columns.iter().enumerate() {
        let cname =
            crate::query::object_name(&ast::ObjectName::from(vec![cd.name.clone()])).concat();
        if columns.iter().any(|c| c.name == cname) {
            return Err(SqlError::ColumnTwice { name: cname });
        }
        refuse_system_column_name(&cname)?;
        let serial = serial_type(&cd.data_type);
        let (ty, typmod) = match serial {
            Some(t) => (t, -1),
            None => sql_type(&cd.data_type).map_err(|e| type_after(e, &cd.name, &cd.data_type))?,
        };
        let mut col = Column {
            name: cname,
            ty,
            typmod,
            not_null: false,
            default_sql: None,
            identity: None,
            serial: None,
            comment: None,
        };
        let mut identity: Option<(bool, &[ast::SequenceOptions])> = None;
        for opt in &cd.options {
            match &opt.option {
                ast::ColumnOption::NotNull => col.not_null = true,
                ast::ColumnOption::Null => col.not_null = false,
                ast::ColumnOption::Default(_) if serial.is_some() || col.default_sql.is_some() => {
                    return Err(SqlError::Syntax {
                        message: format!(
                            "multiple default values specified for column \"{}\" of table \"{name}\"",
                            col.name
                        ),
                    })
                }
                ast::ColumnOption::Default(e) => col.default_sql = stored_default(e, ty),
                ast::ColumnOption::Generated {
                    generated_as: g @ (ast::GeneratedAs::Always | ast::GeneratedAs::ByDefault),
                    sequence_options,
                    generation_expr: None,
                    ..
                } => {
                    if identity.is_some() {
                        return Err(SqlError::Syntax {
                            message: format!(
                                "multiple identity specifications for column \"{}\" of table \"{name}\"",
                                col.name
                            ),
                        });
                    }
                    identity = Some((
                        *g == ast::GeneratedAs::Always,
                        sequence_options.as_deref().unwrap_or(&[]),
                    ));
                }
                ast::ColumnOption::PrimaryKey(c) => {
                    if !pk.is_empty() {
                        return Err(multiple_primary_keys(&name));
                    }
                    col.not_null = true;
                    pk.push(i);
                    pk_name = opt
                        .name
                        .as_ref()
                        .or(c.name.as_ref())
                        .map(crate::query::ident);
                }
                ast::ColumnOption::Unique(_) => {
                    return Err(SqlError::feature("UNIQUE constraints"))
                }
                other => return Err(SqlError::feature(format!("column option {other}"))),
            }
        }
        match column_sequence(&mut col, serial.is_some(), identity, &name)? {
            Some(planned) => owned_sequences.push((i, planned)),
            None => {
                check_default(cx, &col)?;
                bind_sequence_default(cx, &schema, &mut col)?;
            }
        }
        columns.push(col);
    }
    for c in &ct.constraints {
        match c {
            ast::TableConstraint::PrimaryKey(p) => {
                if !pk.is_empty() {
                    return Err(multiple_primary_keys(&name));
                }
                refuse_key_options(p)?;
                pk_name = p.name.as_ref().map(crate::query::ident);
                for col in &p.columns {
                    let n = key_column_name(col)?;
                    let Some(idx) = columns.iter().position(|c| c.name == n) else {
                        return Err(SqlError::KeyColumnMissing { name: n });
                    };
                    if pk.contains(&idx) {
                        return Err(SqlError::ColumnTwiceInKey { name: n });
                    }
                    columns[idx].not_null = true;
                    pk.push(idx);
                }
            }
            other => {
                return Err(SqlError::feature(format!(
                    "table constraint {}",
                    other.to_string().split_whitespace().next().unwrap_or("")
                )))
            }
        }
    }
    check_key_types(&columns, &pk)?;
    // The owned sequences' names, chosen first as PostgreSQL chooses them (`t_id_seq`, else
    // `t_id_seq1`, …), then the primary key's constraint and index: the name given, or
    // PostgreSQL's choice (`t_pkey`, else `t_pkey1`, `t_pkey2`, … past names taken in the
    // schema).
    if let Some(skipped) = name_taken(cx, ct.if_not_exists, &schema, &name, "CREATE TABLE")? {
        return Ok(skipped);
    }
    let mut sequence_names: Vec<String> = Vec::new();
    for (ci, planned) in &owned_sequences {
        let n = column_sequence_name(
            cx,
            planned.name.as_ref(),
            (&schema, &name),
            &columns[*ci].name,
            &sequence_names,
        )?;
        sequence_names.push(n);
    }
    let pkey_name = {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        let mut taken = sequence_names.clone();
        taken.push(name.clone());
        if pk.is_empty() {
            format!("{name}_pkey")
        } else {
            primary_key_name(&rcx, &schema, &name, pk_name, &taken, None)?
        }
    };
    let id = cx.st.next_table_id;
    cx.st.next_table_id += 1;
    // The sequences first, as PostgreSQL creates them (their OIDs come before the table's).
    let mut sequences = Vec::with_capacity(owned_sequences.len());
    for ((ci, planned), seq_name) in owned_sequences.into_iter().zip(sequence_names) {
        let seq = link_sequence(
            cx,
            (&schema, id),
            &seq_name,
            &mut columns[ci],
            planned.def,
            planned.always,
        );
        sequences.push(seq);
    }
    let oid = cx.st.next_oid;
    cx.st.next_oid += 3;
    let table = new_table(id, oid, schema, name, pkey_name, columns, pk);
    let pending = cx.pending()?;
    for s in sequences {
        let sid = s.id;
        pending.put_table(Arc::new(s), true)?;
        if temporary {
            pending.temporary.push(sid);
        }
    }
    pending.put_table(Arc::new(table), true)?;
    if temporary {
        pending.temporary.push(id);
    }
    Ok(Output::Command {
        tag: "CREATE TABLE".into(),
    })
}

/// CREATE TABLE's answer when a relation in `schema` has `name` (a table, a sequence, a
/// primary key's index, a catalog): with IF NOT EXISTS the NOTICE and `tag`, else 42P07;
/// `None` when the name is free.
pub(super) fn name_taken(
    cx: &mut Cx<'_>,
    if_not_exists: bool,
    schema: &str,
    name: &str,
    tag: &str,
) -> Result<Option<Output>, SqlError> {
    let taken = {
        let at = cx.read_point();
        relation_name_taken(&cx.reader(at), schema, name)
    };
    if !taken {
        return Ok(None);
    }
    if !if_not_exists {
        return Err(SqlError::DuplicateTable {
            name: name.to_string(),
        });
    }
    cx.sess.notice(Notice::RelationExists {
        name: name.to_string(),
    });
    Ok(Some(Output::Command { tag: tag.into() }))
}

/// `CREATE TABLE … AS query`: a table of the query's columns (their names, or those listed;
/// their types and typmods, an untyped literal's as text) holding its rows, with no key, as
/// in PostgreSQL. The rows are those of the statement's snapshot.
pub(super) fn create_table_as(
    cx: &mut Cx<'_>,
    ct: &ast::CreateTable,
    query: &ast::Query,
    schema: String,
    name: String,
) -> Result<Output, SqlError> {
    if !ct.constraints.is_empty()
        || ct
            .columns
            .iter()
            .any(|c| c.data_type != ast::DataType::Unspecified || !c.options.is_empty())
    {
        // PostgreSQL's grammar has no column types or constraints there.
        return Err(syntax_at("AS"));
    }
    // Any relation's name (a primary key's index, a sequence, a catalog's), as CREATE TABLE.
    if let Some(skipped) = name_taken(cx, ct.if_not_exists, &schema, &name, "CREATE TABLE AS")? {
        return Ok(skipped);
    }
    let with_data = match ct.with_data {
        None => true,
        Some(ast::WithData {
            data,
            statistics: None,
        }) => data,
        Some(_) => {
            return Err(SqlError::Syntax {
                message: "syntax error at or near \"AND\"".into(),
            })
        }
    };
    // WITH NO DATA binds the query (its errors are the statement's) without running it.
    let (result, rows) = {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        let mut binder = Binder::new(&rcx);
        let bq = binder.bind_query(query, None)?;
        let rows = if with_data {
            Some(Executor::new(&rcx).run_query(&bq, None)?)
        } else {
            None
        };
        (bq.columns.clone(), rows)
    };
    if ct.columns.len() > result.len() {
        return Err(SqlError::Syntax {
            message: "too many column names were specified".into(),
        });
    }
    let names: Vec<String> = ct
        .columns
        .iter()
        .map(|cd| crate::query::ident(&cd.name))
        .collect();
    let columns = columns_of_query(&result, &names, true)?;
    let id = cx.st.next_table_id;
    cx.st.next_table_id += 1;
    let oid = cx.st.next_oid;
    cx.st.next_oid += 3;
    let pkey_name = format!("{name}_pkey");
    let table = new_table(
        id,
        oid,
        schema.clone(),
        name.clone(),
        pkey_name,
        columns,
        Vec::new(),
    );
    let pending = cx.pending()?;
    pending.put_table(Arc::new(table), true)?;
    if ct.temporary {
        pending.temporary.push(id);
    }
    let target = ast::ObjectName::from(vec![
        ast::Ident::with_quote('"', schema),
        ast::Ident::with_quote('"', name),
    ]);
    let t = write_target(cx, &target)?;
    let Some(rows) = rows else {
        return Ok(Output::Command {
            tag: "CREATE TABLE AS".into(),
        });
    };
    let n = rows.len();
    for r in rows {
        let full = t
            .columns
            .iter()
            .zip(r)
            .map(|(c, v)| assign(c, v))
            .collect::<Result<Vec<_>, _>>()?;
        write_insert(cx, &t, &full)?;
    }
    Ok(Output::Command {
        tag: format!("SELECT {n}"),
    })
}

/// The `INTO` of a `SELECT … INTO name FROM …` (the whole statement's select).
pub(super) fn select_into(q: &ast::Query) -> Option<&ast::SelectInto> {
    match q.body.as_ref() {
        ast::SetExpr::Select(s) => s.into.as_ref(),
        _ => None,
    }
}

/// `VACUUM` and `ANALYZE` ([`crate::maintenance`]): PostgreSQL's checks, and nothing to do.
pub(super) fn maintenance(cx: &mut Cx<'_>, stmt: &Statement) -> Result<Output, SqlError> {
    use crate::maintenance::Command;
    let Some((command, targets)) = crate::maintenance::recognize(stmt) else {
        return Err(SqlError::feature("this form of ANALYZE"));
    };
    // ANALYZE runs in a read-only transaction too, as in PostgreSQL.
    let tag = if command == Command::Analyze {
        "ANALYZE"
    } else {
        if cx.sess.txn.as_ref().is_some_and(|t| t.explicit) {
            return Err(SqlError::ActiveTransaction {
                message: "VACUUM cannot run inside a transaction block".into(),
            });
        }
        "VACUUM"
    };
    for target in &targets {
        let parts: Vec<String> = target.table.iter().map(crate::query::ident).collect();
        let columns: Vec<String> = match find_table(cx, &parts)? {
            Some(t) => t.columns.iter().map(|c| c.name.clone()).collect(),
            None => {
                let (schema, name) = match parts.as_slice() {
                    [name] => (None, name.as_str()),
                    [.., schema, name] => (Some(schema.as_str()), name.as_str()),
                    [] => (None, ""),
                };
                match crate::pgcatalog::columns(schema, name) {
                    Some((_, cols)) => cols.iter().map(|c| c.name.to_string()).collect(),
                    // Named as written, schema and all.
                    None => {
                        return Err(SqlError::UndefinedTable {
                            name: parts.join("."),
                        })
                    }
                }
            }
        };
        if !target.columns.is_empty() && command == Command::Vacuum {
            return Err(SqlError::UnsupportedByPostgres {
                message: "ANALYZE option must be specified when a column list is provided".into(),
            });
        }
        let table = parts.last().cloned().unwrap_or_default();
        let mut seen: Vec<String> = Vec::new();
        for c in &target.columns {
            let column = crate::query::ident(c);
            if !columns.contains(&column) {
                return Err(SqlError::UndefinedColumnOf { column, table });
            }
            if seen.contains(&column) {
                return Err(SqlError::ColumnOfListedTwice { column, table });
            }
            seen.push(column);
        }
    }
    Ok(Output::Command { tag: tag.into() })
}

/// The types a query's context gives its parameters, binding it as Describe does.
pub(super) fn describe_query_params(
    cx: &mut Cx<'_>,
    q: &ast::Query,
) -> Result<std::collections::BTreeMap<usize, PgType>, SqlError> {
    let at = cx.read_point();
    let rcx = cx.reader(at);
    let mut binder = Binder::describing(&rcx);
    binder.bind_query(q, None)?;
    Ok(binder.param_types())
}

/// `SELECT … INTO [TEMPORARY | UNLOGGED] [TABLE] name …`: PostgreSQL's older spelling of
/// The columns of a relation made from a query's result (CREATE TABLE AS, CREATE VIEW):
/// named by `names` first, then by the query; each of the query's type and typmod, an
/// untyped literal's as text; 42701 for a name twice, 42P16 for a pseudo-type, and for a
/// table (`table`) 42701 for a system column's name.
pub(crate) fn columns_of_query(
    result: &[crate::query::ColMeta],
    names: &[String],
    table: bool,
) -> Result<Vec<Column>, SqlError> {
    let mut columns: Vec<Column> = Vec::with_capacity(result.len());
    for (i, c) in result.iter().enumerate() {
        let cname = names.get(i).cloned().unwrap_or_else(|| c.name.to_string());
        if columns.iter().any(|x| x.name == cname) {
            return Err(SqlError::ColumnTwice { name: cname });
        }
        if table {
            refuse_system_column_name(&cname)?;
        }
        let ty = match c.ty {
            PgType::Unknown => PgType::Text,
            PgType::Record(_) | PgType::Void => {
                return Err(SqlError::InvalidTableDefinition {
                    message: format!("column \"{cname}\" has pseudo-type {}", c.ty.sql_name()),
                })
            }
            t => t,
        };
        columns.push(Column {
            name: cname,
            ty,
            typmod: if c.ty == PgType::Unknown {
                -1
            } else {
                c.typmod
            },
            not_null: false,
            default_sql: None,
            identity: None,
            serial: None,
            comment: None,
        });
    }
    Ok(columns)
}

/// `CREATE TABLE name AS SELECT …`.
pub(super) fn select_into_table(cx: &mut Cx<'_>, q: &ast::Query) -> Result<Output, SqlError> {
    cx.check_writable("SELECT INTO")?;
    let mut query = q.clone();
    let into = match query.body.as_mut() {
        ast::SetExpr::Select(s) => s.into.take(),
        _ => None,
    };
    let Some(into) = into else {
        return Err(SqlError::internal("SELECT INTO without INTO"));
    };
    let name = match into.targets.as_slice() {
        [ast::Expr::Identifier(i)] => ast::ObjectName::from(vec![i.clone()]),
        [ast::Expr::CompoundIdentifier(parts)] => ast::ObjectName::from(parts.clone()),
        _ => {
            return Err(SqlError::Syntax {
                message: "SELECT … INTO takes one table name".into(),
            })
        }
    };
    let ct = ast::helpers::stmt_create_table::CreateTableBuilder::new(name)
        .temporary(into.temporary)
        .query(Some(Box::new(query)))
        .build();
    create_table(cx, &ct)
}

/// A new table's definition, at its first version, with the indexes its key makes.
pub(crate) fn new_table(
    id: u32,
    oid: u32,
    schema: String,
    name: String,
    pkey_name: String,
    columns: Vec<Column>,
    primary_key: Vec<usize>,
) -> Table {
    Table {
        id,
        oid,
        schema,
        pkey_name,
        indexes: crate::catalog::default_indexes(&name, &columns, &primary_key),
        name,
        columns,
        primary_key,
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
