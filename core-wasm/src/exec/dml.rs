//! INSERT (with ON CONFLICT), UPDATE, DELETE, TRUNCATE, RETURNING, and their targets.

use super::*;

/// Buffers a new row.
/// What an INSERT does with a row whose primary key is taken (`ON CONFLICT`).
pub(super) enum OnConflict {
    /// No ON CONFLICT clause: 23505.
    Fail,
    /// `DO NOTHING`: the row is skipped.
    Skip,
    /// `DO UPDATE SET … [WHERE …]`, bound over the existing row's columns (then its ctid)
    /// followed by `excluded`'s (the proposed row's, then a NULL ctid).
    Update {
        sets: Vec<(usize, BExpr)>,
        filter: Option<BExpr>,
    },
}

/// `ON CONFLICT [target] DO NOTHING | DO UPDATE`. The target must be the primary key (its
/// columns in any order, or its constraint's name), the only unique constraint RockLake's
/// tables have; `DO UPDATE` needs one.
pub(super) fn bind_on_conflict(
    cx: &Cx<'_>,
    at: u64,
    ins: &ast::Insert,
    t: &Table,
) -> Result<OnConflict, SqlError> {
    let Some(on) = &ins.on else {
        return Ok(OnConflict::Fail);
    };
    let ast::OnInsert::OnConflict(oc) = on else {
        return Err(syntax_at("ON"));
    };
    let no_match = || SqlError::InvalidColumnReference {
        message:
            "there is no unique or exclusion constraint matching the ON CONFLICT specification"
                .into(),
    };
    match &oc.conflict_target {
        None => {}
        Some(ast::ConflictTarget::Columns { columns, predicate }) => {
            if predicate.is_some() {
                return Err(SqlError::feature("ON CONFLICT (…) WHERE index_predicate"));
            }
            let mut named = Vec::with_capacity(columns.len());
            for c in columns {
                let n = crate::query::ident(c);
                let i = t
                    .column_index(&n)
                    .ok_or(SqlError::UndefinedColumn { name: n })?;
                named.push(i);
            }
            named.sort_unstable();
            named.dedup();
            let mut pk = t.primary_key.clone();
            pk.sort_unstable();
            if pk.is_empty() || named != pk {
                return Err(no_match());
            }
        }
        Some(ast::ConflictTarget::OnConstraint(name)) => {
            let n = object_name(name).last().cloned().unwrap_or_default();
            if t.primary_key.is_empty() || n != t.pkey_name {
                return Err(SqlError::UndefinedObject {
                    message: format!("constraint \"{n}\" for table \"{}\" does not exist", t.name),
                });
            }
        }
    }
    let ast::OnConflictAction::DoUpdate(du) = &oc.action else {
        return Ok(OnConflict::Skip);
    };
    if oc.conflict_target.is_none() {
        return Err(SqlError::SyntaxHint {
            message: "ON CONFLICT DO UPDATE requires inference specification or constraint name"
                .into(),
            hint: "For example, ON CONFLICT (column_name).",
        });
    }
    let mut scope = table_scope(t, &insert_qual(ins, t));
    scope.cols.extend(table_scope(t, "excluded").cols);
    let rcx = cx.reader(at);
    let mut binder = Binder::new(&rcx);
    let sets = bind_assignments(&mut binder, t, &du.assignments, &scope)?;
    let filter = match &du.selection {
        Some(e) => Some(binder.bind_bool(e, &scope)?),
        None => None,
    };
    Ok(OnConflict::Update { sets, filter })
}

/// Under REPEATABLE READ or SERIALIZABLE, a version committed after the transaction's snapshot
/// may not decide an `ON CONFLICT` (PostgreSQL's 40001: retry the transaction).
pub(super) fn refuse_unseen_version(cx: &Cx<'_>, seq: u64) -> Result<(), SqlError> {
    let unseen = cx.sess.txn.as_ref().is_some_and(|t| {
        !matches!(t.isolation, crate::engine::Isolation::ReadCommitted)
            && t.snapshot.is_some_and(|s| seq > s)
    });
    if unseen {
        return Err(SqlError::SerializationFailure);
    }
    Ok(())
}

/// A live row's values (with its ctid) and the committed version a write over it replaces.
pub(super) type LiveRow = (Vec<Value>, Option<u64>);

/// The live row holding `lk` (this transaction's write, else the newest committed version):
/// its values with its ctid, and the version a write over it replaces.
pub(super) fn live_row(cx: &Cx<'_>, t: &Table, lk: &[u8]) -> Result<Option<LiveRow>, SqlError> {
    let own = cx.sess.txn.as_ref().and_then(|x| x.pending.writes.get(lk));
    if let Some(w) = own {
        return match &w.row {
            Some(row) => Ok(Some((row_values(t, row.clone())?, w.base_seq))),
            None => Ok(None),
        };
    }
    match crate::engine::latest_entry(cx.kv, lk)? {
        Some((seq, Envelope::Row(row))) => {
            refuse_unseen_version(cx, seq)?;
            Ok(Some((row_values(t, row)?, Some(seq))))
        }
        Some((seq, _)) => {
            refuse_unseen_version(cx, seq)?;
            Ok(None)
        }
        None => Ok(None),
    }
}

/// `ON CONFLICT DO UPDATE` for one proposed row whose key `lk` is held by `existing`: the
/// existing row with the SET values, written over it (`None`: the WHERE condition declined).
pub(super) fn upsert_row(
    cx: &mut Cx<'_>,
    at: u64,
    t: &Table,
    (sets, filter): (&[(usize, BExpr)], Option<&BExpr>),
    lk: Vec<u8>,
    (existing, base): LiveRow,
    proposed: &[Value],
) -> Result<Option<(Vec<Value>, u64)>, SqlError> {
    let n = t.columns.len();
    let mut env_row = existing;
    env_row.extend_from_slice(proposed);
    env_row.push(Value::Null);
    let mut new = env_row[..n].to_vec();
    {
        let rcx = cx.reader(at);
        let exec = Executor::new(&rcx);
        let env = Env {
            row: &env_row,
            parent: None,
            aggs: None,
        };
        if let Some(f) = filter {
            if exec.eval(f, &env)? != Value::Bool(true) {
                return Ok(None);
            }
        }
        for (ci, e) in sets {
            new[*ci] = assign(&t.columns[*ci], exec.eval(e, &env)?)?;
        }
    }
    check_not_null(t, &new)?;
    check_not_moved(cx, &lk, base)?;
    let tuple = cx.alloc_tuple(t.id)?;
    let row = encode_row(&new, tuple);
    let new_lk = logical_key(t, &new, tuple);
    if new_lk == lk {
        let size = buffered_size(&row, t);
        cx.pending()?.put_row(
            lk,
            RowWrite {
                table_id: t.id,
                row: Some(row),
                base_seq: base,
                inserted: false,
            },
            size,
        )?;
    } else {
        cx.pending()?.put_row(
            lk,
            RowWrite {
                table_id: t.id,
                row: None,
                base_seq: base,
                inserted: false,
            },
            0,
        )?;
        write_insert_row(cx, t, new_lk, row)?;
    }
    Ok(Some((new, tuple)))
}

/// Inserts one row; its tuple number (its ctid) comes back.
pub(super) fn write_insert(cx: &mut Cx<'_>, t: &Table, values: &[Value]) -> Result<u64, SqlError> {
    check_not_null(t, values)?;
    let tuple = cx.alloc_tuple(t.id)?;
    let lk = logical_key(t, values, tuple);
    write_insert_row(cx, t, lk, encode_row(values, tuple))?;
    Ok(tuple)
}

/// `RETURNING`: the bound items and the rows they produced over the written rows.
pub(super) struct Returning {
    pub(super) exprs: Vec<BExpr>,
    pub(super) columns: Vec<ColMeta>,
    /// The width of the scope the items were bound in (rows are padded to it).
    pub(super) width: usize,
    pub(super) rows: Vec<Vec<Value>>,
}

impl Returning {
    pub(super) fn bind(
        binder: &mut Binder<'_, '_>,
        items: &[ast::SelectItem],
        scope: &Scope,
    ) -> Result<Returning, SqlError> {
        let (exprs, columns) = binder.bind_returning(items, scope)?;
        Ok(Returning {
            exprs,
            columns,
            width: scope.cols.len(),
            rows: Vec::new(),
        })
    }

    /// The items over one written row, laid out as the scope's columns.
    pub(super) fn add(&mut self, cx: &Cx<'_>, at: u64, row: &[Value]) -> Result<(), SqlError> {
        let rcx = cx.reader(at);
        let exec = Executor::new(&rcx);
        let padded;
        let row = if row.len() < self.width {
            let mut p = row.to_vec();
            p.resize(self.width, Value::Null);
            padded = p;
            &padded
        } else {
            row
        };
        let env = Env {
            row,
            parent: None,
            aggs: None,
        };
        let out = self
            .exprs
            .iter()
            .map(|e| exec.eval(e, &env))
            .collect::<Result<Vec<_>, _>>()?;
        self.rows.push(out);
        Ok(())
    }

    /// The RowDescription a Describe of the statement gives.
    pub(super) fn fields(&self) -> Vec<crate::api::FieldDesc> {
        self.columns.iter().map(ColMeta::field).collect()
    }

    /// The statement's answer: its command tag, with the rows when it has RETURNING.
    pub(super) fn answer(returning: Option<Returning>, tag: String) -> Result<Output, SqlError> {
        let Some(r) = returning else {
            return Ok(Output::Command { tag });
        };
        let types: Vec<PgType> = r.columns.iter().map(|c| c.ty).collect();
        Ok(Output::Rows {
            fields: r.columns.iter().map(ColMeta::field).collect(),
            rows: text_rows(&types, r.rows)?,
            tag,
        })
    }
}

/// The name an INSERT's target is known by: its alias, else its own.
pub(super) fn insert_qual(ins: &ast::Insert, t: &Table) -> String {
    ins.table_alias
        .as_ref()
        .map(|a| crate::query::ident(&a.alias))
        .unwrap_or_else(|| t.name.clone())
}

/// INSERT's RETURNING, over the target's columns (under its alias).
pub(super) fn insert_returning(
    cx: &Cx<'_>,
    at: u64,
    ins: &ast::Insert,
    t: &Table,
) -> Result<Option<Returning>, SqlError> {
    let Some(items) = ins.returning.as_deref() else {
        return Ok(None);
    };
    let rcx = cx.reader(at);
    Returning::bind(
        &mut Binder::new(&rcx),
        items,
        &table_scope(t, &insert_qual(ins, t)),
    )
    .map(Some)
}

/// The scope UPDATE and DELETE bind in: the target's columns (under its alias), then those of
/// the FROM / USING items; with the items.
pub(super) fn matching_scope(
    binder: &mut Binder<'_, '_>,
    dml: &Dml<'_>,
) -> Result<(Vec<FromItem>, Scope), SqlError> {
    let t = &dml.table;
    let qual = dml.alias.clone().unwrap_or_else(|| t.name.clone());
    let target = table_scope(t, &qual);
    let width = target.cols.len();
    let mut items = vec![FromItem::cross(
        Source::Table {
            table: t.clone(),
            keys: None,
            index: None,
        },
        width,
        crate::query::Lateral::No,
    )];
    if dml.from.is_empty() {
        return Ok((items, target));
    }
    // FROM's items come after the target's columns in the joined row, and cannot name it
    // (PostgreSQL joins them to it through WHERE alone).
    let (more, mut scope) = binder
        .bind_from_after(
            &dml.from,
            target.masked(width),
            vec![(qual.as_str().into(), dml.alias.is_none().then_some(t.oid))],
        )
        .map_err(|e| match crate::query::unreachable_from_here(e, &target) {
            // PostgreSQL's code for the target named from FROM.
            SqlError::InvalidFromReference { table, alias: None } => {
                SqlError::InvalidTargetReference { table }
            }
            e => e,
        })?;
    items.extend(more);
    scope.cols.splice(..width, target.cols.iter().cloned());
    let mut star = target.star_order();
    star.extend(scope.star_order().into_iter().filter(|&i| i >= width));
    scope.star = Some(star);
    Ok((items, scope))
}

/// UPDATE's or DELETE's RETURNING, bound in [`matching_scope`] (WITH names visible).
pub(super) fn dml_returning(
    cx: &mut Cx<'_>,
    dml: &Dml<'_>,
    items: Option<&[ast::SelectItem]>,
) -> Result<Option<Returning>, SqlError> {
    let Some(items) = items else {
        return Ok(None);
    };
    let at = cx.read_point();
    let rcx = cx.reader(at);
    let mut binder = Binder::new(&rcx);
    if let Some(w) = dml.with {
        binder.push_ctes(w)?;
    }
    let (_, scope) = matching_scope(&mut binder, dml)?;
    Returning::bind(&mut binder, items, &scope).map(Some)
}

pub(super) fn resolve_target(
    cx: &mut Cx<'_>,
    name: &ast::ObjectName,
) -> Result<TableRef, SqlError> {
    resolve_target_for(cx, name, Purpose::Write)
}

/// What a statement does with the relation it names, for PostgreSQL's error when that
/// relation is a sequence or a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Purpose {
    /// INSERT, UPDATE and DELETE.
    Write,
    Truncate,
    CopyTo,
    CopyFrom,
}

/// PostgreSQL's error for `t` named by a statement of `purpose`, if `t` is a sequence or view.
pub(super) fn refuse_kind(t: &Table, purpose: Purpose) -> Result<(), SqlError> {
    let kind = if t.sequence.is_some() {
        "sequence"
    } else if t.view.is_some() {
        "view"
    } else {
        return Ok(());
    };
    let name = &t.name;
    Err(match (purpose, kind) {
        (Purpose::Write, "sequence") => SqlError::WrongObjectType {
            message: format!("cannot change sequence \"{name}\""),
        },
        (Purpose::Write, _) => SqlError::FeatureNotSupportedHint {
            what: format!("writing to view \"{name}\""),
            hint: "RockLake's views are read-only: write to the tables the view reads.".into(),
        },
        (Purpose::Truncate, _) => SqlError::WrongObjectType {
            message: format!("\"{name}\" is not a table"),
        },
        (Purpose::CopyTo, "sequence") => SqlError::WrongObjectType {
            message: format!("cannot copy from sequence \"{name}\""),
        },
        (Purpose::CopyTo, _) => SqlError::WrongObjectTypeHint {
            message: format!("cannot copy from view \"{name}\""),
            hint: "Try the COPY (SELECT ...) TO variant.".into(),
        },
        (Purpose::CopyFrom, "sequence") => SqlError::WrongObjectType {
            message: format!("cannot copy to sequence \"{name}\""),
        },
        (Purpose::CopyFrom, _) => SqlError::WrongObjectTypeHint {
            message: format!("cannot copy to view \"{name}\""),
            hint: "To enable copying to a view, provide an INSTEAD OF INSERT trigger.".into(),
        },
    })
}

/// The table a statement of `purpose` names: it must exist, be a table, and have a layout
/// this build reads. One lookup serves all three checks.
pub(super) fn resolve_target_for(
    cx: &mut Cx<'_>,
    name: &ast::ObjectName,
    purpose: Purpose,
) -> Result<TableRef, SqlError> {
    let parts = object_name(name);
    let t = find_table(cx, &parts)?.ok_or_else(|| SqlError::UndefinedTable {
        name: parts.last().cloned().unwrap_or_default(),
    })?;
    refuse_kind(&t, purpose)?;
    let at = cx.read_point();
    cx.reader(at).check_layout(&t)?;
    Ok(t)
}

/// [`resolve_target`] for INSERT, UPDATE and DELETE, whose missing table PostgreSQL's parser
/// points at (TRUNCATE's and COPY's it does not).
pub(super) fn dml_target(cx: &mut Cx<'_>, name: &ast::ObjectName) -> Result<TableRef, SqlError> {
    resolve_target(cx, name).map_err(|e| missing_table_at(e, name))
}

/// `err`, if the table `name` is missing, noted as pointing at the name.
pub(super) fn missing_table_at(err: SqlError, name: &ast::ObjectName) -> SqlError {
    match err {
        SqlError::UndefinedTable { .. } => at_name(err, name),
        err => err,
    }
}

/// The table a statement writes rows into, its definition recorded for the commit's check.
pub(super) fn write_target(cx: &mut Cx<'_>, name: &ast::ObjectName) -> Result<TableRef, SqlError> {
    write_target_for(cx, name, Purpose::Write)
}

/// [`write_target`] for a statement of `purpose`.
pub(super) fn write_target_for(
    cx: &mut Cx<'_>,
    name: &ast::ObjectName,
    purpose: Purpose,
) -> Result<TableRef, SqlError> {
    let t = resolve_target_for(cx, name, purpose)?;
    cx.pending()?.writes_rows_by(&t);
    Ok(t)
}

/// PostgreSQL's checks of an INSERT's widths: no more values than target columns, and with a
/// column list no fewer (without one, the columns left over take their defaults).
pub(super) fn check_insert_width(
    values: usize,
    targets: usize,
    listed: bool,
) -> Result<(), SqlError> {
    let message = if values > targets {
        "INSERT has more expressions than target columns"
    } else if listed && values < targets {
        "INSERT has more target columns than expressions"
    } else {
        return Ok(());
    };
    Err(SqlError::Syntax {
        message: message.into(),
    })
}

/// The column indexes an INSERT writes, in the order its values come.
pub(super) fn insert_targets(t: &TableRef, ins: &ast::Insert) -> Result<Vec<usize>, SqlError> {
    if ins.columns.is_empty() {
        return Ok((0..t.columns.len()).collect());
    }
    let mut targets = Vec::with_capacity(ins.columns.len());
    for c in &ins.columns {
        let n = object_name(c).concat();
        let i = t.column_index(&n).ok_or_else(|| {
            at_name(
                SqlError::UndefinedColumn {
                    name: format!("{n}\" of relation \"{}", t.name),
                },
                c,
            )
        })?;
        if targets.contains(&i) {
            return Err(SqlError::ColumnTwice { name: n });
        }
        targets.push(i);
    }
    Ok(targets)
}

/// The name of the first clause a statement has, of those listed as (present, name).
pub(super) fn first_present(clauses: &[(bool, &'static str)]) -> Option<&'static str> {
    clauses
        .iter()
        .find(|(present, _)| *present)
        .map(|(_, n)| *n)
}

pub(crate) fn syntax_at(token: &str) -> SqlError {
    SqlError::Syntax {
        message: format!("syntax error at or near \"{token}\""),
    }
}

/// PostgreSQL's syntax error at `token` (at the end of the text for EOF).
pub(crate) fn syntax_near(token: &Token) -> SqlError {
    match token {
        Token::EOF => SqlError::Syntax {
            message: "syntax error at end of input".into(),
        },
        t => syntax_at(&t.to_string()),
    }
}

/// sqlparser reads clauses of other SQL dialects into INSERT (MySQL's `IGNORE`, `SET`,
/// `ON DUPLICATE`, SQLite's `OR REPLACE`, …): PostgreSQL's grammar has none of them, so they are
/// its syntax errors here, never ignored.
pub(super) fn refuse_foreign_insert_clauses(ins: &ast::Insert) -> Result<(), SqlError> {
    let foreign = [
        (ins.or.is_some(), "OR"),
        (ins.ignore, "IGNORE"),
        (!ins.into, "INSERT"),
        (ins.by_name, "BY"),
        (ins.overwrite, "OVERWRITE"),
        (!ins.assignments.is_empty(), "SET"),
        (ins.partitioned.is_some(), "PARTITION"),
        (!ins.after_columns.is_empty(), "("),
        (ins.has_table_keyword, "TABLE"),
        (ins.output.is_some(), "OUTPUT"),
        (ins.replace_into, "REPLACE"),
        (ins.priority.is_some(), "PRIORITY"),
        (ins.insert_alias.is_some(), "AS"),
        (ins.settings.is_some(), "SETTINGS"),
        (ins.format_clause.is_some(), "FORMAT"),
        (ins.multi_table_insert_type.is_some(), "ALL"),
        (!ins.optimizer_hints.is_empty(), "/*+"),
        (ins.source.is_none() && !ins.columns.is_empty(), "DEFAULT"),
    ];
    first_present(&foreign).map_or(Ok(()), |token| Err(syntax_at(token)))
}

/// UPDATE's clauses of other dialects (`ORDER BY`, `LIMIT`, SQLite's `OR`, …): PostgreSQL's
/// syntax errors, never ignored (an ignored LIMIT would change every matching row).
pub(super) fn refuse_foreign_update_clauses(u: &ast::Update) -> Result<(), SqlError> {
    let foreign = [
        (!u.order_by.is_empty(), "ORDER"),
        (u.limit.is_some(), "LIMIT"),
        (u.or.is_some(), "OR"),
        (u.on_cluster.is_some(), "ON"),
        (u.output.is_some(), "OUTPUT"),
        (u.settings.is_some(), "SETTINGS"),
        (!u.optimizer_hints.is_empty(), "/*+"),
        (
            matches!(u.from, Some(ast::UpdateTableFromKind::BeforeSet(_))),
            "FROM",
        ),
    ];
    first_present(&foreign).map_or(Ok(()), |token| Err(syntax_at(token)))
}

/// DELETE's clauses of other dialects (`ORDER BY`, `LIMIT`, MySQL's multi-table form, …):
/// PostgreSQL's syntax errors, never ignored (an ignored LIMIT would delete every matching
/// row).
pub(super) fn refuse_foreign_delete_clauses(d: &ast::Delete) -> Result<(), SqlError> {
    let foreign = [
        (!d.order_by.is_empty(), "ORDER"),
        (d.limit.is_some(), "LIMIT"),
        (!d.tables.is_empty(), "FROM"),
        (d.on_cluster.is_some(), "ON"),
        (d.output.is_some(), "OUTPUT"),
        (d.settings.is_some(), "SETTINGS"),
        (!d.optimizer_hints.is_empty(), "/*+"),
    ];
    first_present(&foreign).map_or(Ok(()), |token| Err(syntax_at(token)))
}

/// `SELECT <row>` when a VALUES row calls a set-returning function (`None` otherwise).
pub(super) fn select_of_srf_row(row: &[ast::Expr]) -> Result<Option<ast::Query>, SqlError> {
    use std::ops::ControlFlow;
    let calls_srf = row.iter().any(|x| {
        ast::visit_expressions(x, |e| match e {
            ast::Expr::Function(f)
                if matches!(
                    object_name(&f.name).last().map(String::as_str),
                    Some("generate_series" | "unnest" | "generate_subscripts")
                ) =>
            {
                ControlFlow::Break(())
            }
            _ => ControlFlow::Continue(()),
        })
        .is_break()
    });
    if !calls_srf {
        return Ok(None);
    }
    let items: Vec<String> = row.iter().map(ToString::to_string).collect();
    let sql = format!("SELECT {}", items.join(", "));
    let mut q = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_query())
        .map_err(|e| SqlError::internal(format!("a VALUES row as a select list: {e}")))?;
    crate::precedence::as_postgres_groups(&sql, &mut q);
    Ok(Some(*q))
}

pub(super) fn insert(
    cx: &mut Cx<'_>,
    ins: &ast::Insert,
    with: Option<&ast::With>,
) -> Result<Output, SqlError> {
    cx.check_writable("INSERT")?;
    refuse_foreign_insert_clauses(ins)?;
    let ast::TableObject::TableName(name) = &ins.table else {
        return Err(SqlError::feature("INSERT into a table function"));
    };
    let t = write_target(cx, name).map_err(|e| missing_table_at(e, name))?;
    let targets = insert_targets(&t, ins)?;
    // Identity columns: a GENERATED ALWAYS one takes only DEFAULT unless OVERRIDING SYSTEM
    // VALUE; OVERRIDING USER VALUE replaces the values given for any with the sequence's.
    let system_override = ins.overriding == Some(ast::InsertOverriding::System);
    let user_override = ins.overriding == Some(ast::InsertOverriding::User);
    let always_identity =
        |ci: usize| !system_override && t.columns[ci].identity.is_some_and(|i| i.always);
    let takes_default = |ci: usize| user_override && t.columns[ci].identity.is_some();

    let at = cx.read_point();
    let defaults = column_defaults(cx, at, &t)?;
    // `DEFAULT VALUES` has no source: one row of defaults.
    let rows: Vec<Vec<Value>> = if let Some(source) = &ins.source {
        let rcx = cx.reader(at);
        let mut binder = Binder::new(&rcx);
        let exec = Executor::new(&rcx);
        let env = Env {
            row: &[],
            parent: None,
            aggs: None,
        };
        // `INSERT … VALUES (generate_series(…), …)`: one row with set-returning calls is a
        // select list, as PostgreSQL takes it (several rows may hold none).
        let srf_row = match source.body.as_ref() {
            ast::SetExpr::Values(v) if v.rows.len() == 1 => select_of_srf_row(&v.rows[0])?,
            _ => None,
        };
        match (source.body.as_ref(), with) {
            (ast::SetExpr::Values(v), None) if source.with.is_none() && srf_row.is_none() => {
                let width = v.rows.first().map_or(0, |r| r.len());
                if v.rows.iter().any(|r| r.len() != width) {
                    return Err(SqlError::Syntax {
                        message: "VALUES lists must all be the same length".into(),
                    });
                }
                check_insert_width(width, targets.len(), !ins.columns.is_empty())?;
                let mut out = Vec::with_capacity(v.rows.len());
                for r in &v.rows {
                    let mut vals = Vec::with_capacity(r.len());
                    for (e, ci) in r.iter().zip(&targets) {
                        let default = crate::query::is_default_keyword(e);
                        if !default && always_identity(*ci) {
                            return Err(insert_into_always_identity(&t.columns[*ci]));
                        }
                        if takes_default(*ci) {
                            // The row's assembly below takes the sequence's value.
                            vals.push(Value::Null);
                            continue;
                        }
                        if default {
                            vals.push(match &defaults[*ci] {
                                Some(d) => exec.eval(d, &env)?,
                                None => Value::Null,
                            });
                            continue;
                        }
                        let value = (|| {
                            let (b, bt) = binder.bind_values_expr(e)?;
                            check_assignable(&t.columns[*ci], bt, "expression")?;
                            let b = crate::query::assignment(b, bt, t.columns[*ci].ty)?;
                            exec.eval(&b, &env)
                        })();
                        vals.push(value.map_err(|err| crate::query::noted_at(e, err))?);
                    }
                    out.push(vals);
                }
                out
            }
            _ => {
                let mut q = srf_row.unwrap_or_else(|| (**source).clone());
                if q.with.is_none() {
                    q.with = with.cloned();
                }
                let bq = binder.bind_query(&q, None)?;
                check_insert_width(bq.columns.len(), targets.len(), !ins.columns.is_empty())?;
                if let Some(ci) = targets
                    .iter()
                    .take(bq.columns.len())
                    .find(|ci| always_identity(**ci))
                {
                    return Err(insert_into_always_identity(&t.columns[*ci]));
                }
                for (c, ci) in bq.columns.iter().zip(&targets) {
                    check_assignable(&t.columns[*ci], c.ty, "expression")?;
                }
                let mut rows = exec.run_query(&bq, None)?;
                // Values of a timestamp type stored into another go through the zone.
                for (i, (c, ci)) in bq.columns.iter().zip(&targets).enumerate() {
                    let to = t.columns[*ci].ty;
                    if c.ty != to {
                        for r in &mut rows {
                            if let Some(v) = r.get_mut(i) {
                                *v = crate::query::assign_value(
                                    std::mem::replace(v, Value::Null),
                                    c.ty,
                                    to,
                                )?;
                            }
                        }
                    }
                }
                rows
            }
        }
    } else {
        vec![Vec::new()]
    };
    let mut returning = insert_returning(cx, at, ins, &t)?;
    let on_conflict = bind_on_conflict(cx, at, ins, &t)?;
    // Keys this statement inserted or updated: DO UPDATE may not touch one twice.
    let mut touched: std::collections::HashSet<Vec<u8>> = Default::default();
    let mut n = rows.len();
    for r in rows {
        let mut full: Vec<Value> = Vec::with_capacity(t.columns.len());
        {
            let rcx = cx.reader(at);
            let exec = Executor::new(&rcx);
            let env = Env {
                row: &[],
                parent: None,
                aggs: None,
            };
            for (i, c) in t.columns.iter().enumerate() {
                // A column without a value (not listed, or past a short VALUES row of an
                // INSERT without a column list) takes its default.
                let v = match targets
                    .iter()
                    .position(|x| *x == i)
                    .filter(|p| *p < r.len() && !takes_default(i))
                {
                    Some(p) => r[p].clone(),
                    None => match &defaults[i] {
                        Some(d) => exec.eval(d, &env)?,
                        None => Value::Null,
                    },
                };
                full.push(assign(c, v)?);
            }
        }
        let tuple = match &on_conflict {
            OnConflict::Fail => write_insert(cx, &t, &full)?,
            OnConflict::Skip => {
                // Rows keyed by a fresh row id cannot conflict.
                let taken = !t.primary_key.is_empty()
                    && live_row(cx, &t, &logical_key(&t, &full, 0))?.is_some();
                if taken {
                    n -= 1;
                    continue;
                }
                write_insert(cx, &t, &full)?
            }
            OnConflict::Update { sets, filter } => {
                // A row this statement inserted or updated (under its key now) may not be
                // updated again.
                let lk = logical_key(&t, &full, 0);
                if touched.contains(&lk) {
                    return Err(SqlError::CardinalityViolationUpsert);
                }
                let tuple = match live_row(cx, &t, &lk)? {
                    None => write_insert(cx, &t, &full)?,
                    Some(existing) => {
                        let bound = (sets.as_slice(), filter.as_ref());
                        match upsert_row(cx, at, &t, bound, lk, existing, &full)? {
                            None => {
                                n -= 1;
                                continue;
                            }
                            Some((new, tuple)) => {
                                full = new;
                                tuple
                            }
                        }
                    }
                };
                touched.insert(logical_key(&t, &full, 0));
                tuple
            }
        };
        if let Some(ret) = returning.as_mut() {
            full.push(tid_of(tuple));
            ret.add(cx, at, &full)?;
        }
    }
    Returning::answer(returning, format!("INSERT 0 {n}"))
}

/// PostgreSQL's refusal of a value for a GENERATED ALWAYS identity column.
pub(super) fn insert_into_always_identity(c: &Column) -> SqlError {
    SqlError::GeneratedAlways {
        message: format!(
            "cannot insert a non-DEFAULT value into column \"{}\"",
            c.name
        ),
        detail: format!(
            "Column \"{}\" is an identity column defined as GENERATED ALWAYS.",
            c.name
        ),
        hint: Some("Use OVERRIDING SYSTEM VALUE to override.".into()),
    }
}

/// Target rows, the matching joined rows, and the bound SET expressions.
pub(super) type Matched = (
    Vec<crate::engine::VisibleRow>,
    Vec<Vec<Value>>,
    Vec<(usize, BExpr)>,
);

/// Source items (target table first), filter and (column, value) assignments of a DML.
pub(super) type BoundMatching = (Vec<FromItem>, Option<BExpr>, Vec<(usize, BExpr)>);

/// [`bind_matching`], with the target read through its key or an index when the WHERE clause
/// allows and WHERE conjuncts moved to the items they filter: how UPDATE and DELETE find their
/// rows, and what EXPLAIN shows of them.
pub(super) fn plan_matching(
    binder: &mut Binder<'_, '_>,
    dml: &Dml<'_>,
) -> Result<BoundMatching, SqlError> {
    let (mut items, filter, sets) = bind_matching(binder, dml)?;
    crate::query::push_down_keys(&mut items, filter.as_ref(), binder.cx.at);
    let filter = crate::query::push_down_filters(&mut items, filter);
    Ok((items, filter, sets))
}

/// Binds the target, FROM list, WHERE clause and SET expressions of an UPDATE or DELETE:
/// the source items (target table first), the filter and the (column, value) assignments.
pub(super) fn bind_matching(
    binder: &mut Binder<'_, '_>,
    dml: &Dml<'_>,
) -> Result<BoundMatching, SqlError> {
    // The WITH clause's names are visible to FROM/USING, WHERE (subqueries too) and SET.
    let Some(w) = dml.with else {
        return bind_matching_scoped(binder, dml);
    };
    binder.push_ctes(w)?;
    let bound = bind_matching_scoped(binder, dml);
    binder.pop_ctes();
    bound
}

pub(super) fn bind_matching_scoped(
    binder: &mut Binder<'_, '_>,
    dml: &Dml<'_>,
) -> Result<BoundMatching, SqlError> {
    let Dml {
        table: t,
        selection,
        assignments,
        ..
    } = dml;
    let (items, scope) = matching_scope(binder, dml)?;
    let filter = match selection {
        Some(e) => Some(binder.bind_bool(e, &scope)?),
        None => None,
    };
    let sets = bind_assignments(binder, t, assignments, &scope)?;
    Ok((items, filter, sets))
}

/// `SET col = expr, …` of UPDATE or `ON CONFLICT DO UPDATE`: each target column with its value
/// bound in `scope` and coerced to the column's type.
pub(super) fn bind_assignments(
    binder: &mut Binder<'_, '_>,
    t: &Table,
    assignments: &[ast::Assignment],
    scope: &Scope,
) -> Result<Vec<(usize, BExpr)>, SqlError> {
    let mut sets = Vec::with_capacity(assignments.len());
    for a in assignments {
        // `SET (a, b) = (x, y)`: a value for each column, as `SET a = x, b = y`.
        let pairs: Vec<(&ast::ObjectName, &ast::Expr)> = match &a.target {
            ast::AssignmentTarget::ColumnName(n) => vec![(n, &a.value)],
            ast::AssignmentTarget::Tuple(names) => {
                let values: Vec<&ast::Expr> = match &a.value {
                    ast::Expr::Tuple(items) => items.iter().collect(),
                    ast::Expr::Function(f) if row_constructor(f).is_some() => {
                        row_constructor(f).unwrap_or_default()
                    }
                    ast::Expr::Subquery(_) => {
                        return Err(SqlError::feature("SET (…) = (SELECT …)"));
                    }
                    _ => {
                        return Err(SqlError::UnsupportedByPostgres {
                            message: "source for a multiple-column UPDATE item must be a \
                                      sub-SELECT or ROW() expression"
                                .into(),
                        })
                    }
                };
                if values.len() != names.len() {
                    return Err(SqlError::Syntax {
                        message: "number of columns does not match number of values".into(),
                    });
                }
                names.iter().zip(values).collect()
            }
        };
        for (n, value) in pairs {
            let name = object_name(n).last().cloned().unwrap_or_default();
            let ci = t
                .column_index(&name)
                .ok_or_else(|| at_name(undefined_column_of(&name, &t.name), n))?;
            if sets.iter().any(|(x, _)| *x == ci) {
                return Err(SqlError::Syntax {
                    message: format!("multiple assignments to same column \"{name}\""),
                });
            }
            let c = &t.columns[ci];
            if crate::query::is_default_keyword(value) {
                let d = bind_default(binder, c)?;
                sets.push((ci, d.unwrap_or(BExpr::Const(Value::Null))));
                continue;
            }
            if c.identity.is_some_and(|i| i.always) {
                return Err(SqlError::GeneratedAlways {
                    message: format!("column \"{name}\" can only be updated to DEFAULT"),
                    detail: format!(
                        "Column \"{name}\" is an identity column defined as GENERATED ALWAYS."
                    ),
                    hint: None,
                });
            }
            let (b, bt) = binder.bind_expr(value, scope, None)?;
            check_assignable(c, bt, "expression")?;
            sets.push((ci, crate::query::assignment(b, bt, c.ty)?));
        }
    }
    Ok(sets)
}

/// The values of `ROW(a, b, …)` (sqlparser reads it as a call of `row`); `None` for
/// another call.
pub(super) fn row_constructor(f: &ast::Function) -> Option<Vec<&ast::Expr>> {
    if !object_name(&f.name).concat().eq_ignore_ascii_case("row") {
        return None;
    }
    let ast::FunctionArguments::List(l) = &f.args else {
        return Some(Vec::new());
    };
    l.args
        .iter()
        .map(|a| match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
            _ => None,
        })
        .collect()
}

/// Target rows of UPDATE/DELETE joined with their FROM/USING items and filtered.
/// Returns, per matching target row, the joined value row.
pub(super) fn matching_rows(cx: &mut Cx<'_>, dml: &Dml<'_>) -> Result<Matched, SqlError> {
    let t = &dml.table;
    let at = cx.read_point();
    let rcx = cx.reader(at);
    // The target versions below come from the same key ranges as the matching rows.
    let (items, filter, sets) = plan_matching(&mut Binder::new(&rcx), dml)?;
    let exec = Executor::new(&rcx);
    let ranges = match items.first().map(|i| &i.source) {
        Some(Source::Table {
            keys: Some(ks),
            index,
            ..
        }) => exec.key_ranges(t, *index, ks, None),
        _ => None,
    };
    let joined = exec.run_from(&items, None, None)?;
    let mut hits = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in joined {
        let ok = match &filter {
            Some(f) => matches!(
                exec.eval(
                    f,
                    &Env {
                        row: &r,
                        parent: None,
                        aggs: None
                    }
                )?,
                Value::Bool(true)
            ),
            None => true,
        };
        if ok {
            let tid = r.get(t.columns.len()).cloned().unwrap_or(Value::Null);
            if seen.insert(tuple_of(&tid)) {
                hits.push(r);
            }
        }
    }
    let targets = table_versions(&rcx, t, ranges.as_deref(), true)?;
    Ok((targets, hits, sets))
}

/// Checks that a row this transaction is about to change was not changed by a transaction that
/// committed after our snapshot (PostgreSQL's 40001 under REPEATABLE READ).
pub(super) fn check_not_moved(cx: &Cx<'_>, lk: &[u8], seen: Option<u64>) -> Result<(), SqlError> {
    let Some(seen) = seen else { return Ok(()) };
    if let Some((latest, _)) = latest_version(cx.kv, lk)? {
        if latest != seen {
            return Err(SqlError::SerializationFailure);
        }
    }
    Ok(())
}

/// What an UPDATE or DELETE reads: its target table (and alias), the other FROM/USING items,
/// the WHERE clause, the WITH clause around it and the SET assignments (none for DELETE).
pub(super) struct Dml<'s> {
    pub(super) table: TableRef,
    pub(super) alias: Option<String>,
    pub(super) from: Vec<ast::TableWithJoins>,
    pub(super) selection: Option<&'s ast::Expr>,
    pub(super) with: Option<&'s ast::With>,
    pub(super) assignments: &'s [ast::Assignment],
}

pub(super) fn update_dml<'s>(
    cx: &mut Cx<'_>,
    u: &'s ast::Update,
    with: Option<&'s ast::With>,
) -> Result<Dml<'s>, SqlError> {
    refuse_foreign_update_clauses(u)?;
    let (name, alias) = match &u.table.relation {
        ast::TableFactor::Table { name, alias, .. } => {
            (name, alias.as_ref().map(|a| a.name.value.clone()))
        }
        _ => return Err(SqlError::feature("UPDATE of a non-table")),
    };
    let from: Vec<ast::TableWithJoins> = match &u.from {
        Some(ast::UpdateTableFromKind::AfterSet(f))
        | Some(ast::UpdateTableFromKind::BeforeSet(f)) => f.clone(),
        None => vec![],
    };
    Ok(Dml {
        table: dml_target(cx, name)?,
        alias,
        from,
        selection: u.selection.as_ref(),
        with,
        assignments: &u.assignments,
    })
}

pub(super) fn delete_dml<'s>(
    cx: &mut Cx<'_>,
    d: &'s ast::Delete,
    with: Option<&'s ast::With>,
) -> Result<Dml<'s>, SqlError> {
    refuse_foreign_delete_clauses(d)?;
    let tables = match &d.from {
        ast::FromTable::WithFromKeyword(t) | ast::FromTable::WithoutKeyword(t) => t,
    };
    let Some(first) = tables.first() else {
        return Err(SqlError::Syntax {
            message: "syntax error: DELETE without table".into(),
        });
    };
    let (name, alias) = match &first.relation {
        ast::TableFactor::Table { name, alias, .. } => {
            (name, alias.as_ref().map(|a| a.name.value.clone()))
        }
        _ => return Err(SqlError::feature("DELETE from a non-table")),
    };
    Ok(Dml {
        table: dml_target(cx, name)?,
        alias,
        from: d.using.clone().unwrap_or_default(),
        selection: d.selection.as_ref(),
        with,
        assignments: &[],
    })
}

pub(super) fn update(
    cx: &mut Cx<'_>,
    u: &ast::Update,
    with: Option<&ast::With>,
) -> Result<Output, SqlError> {
    cx.check_writable("UPDATE")?;
    let dml = update_dml(cx, u, with)?;
    cx.pending()?.writes_rows_by(&dml.table);
    let mut returning = dml_returning(cx, &dml, u.returning.as_deref())?;
    let (targets, hits, sets) = matching_rows(cx, &dml)?;
    let at = cx.read_point();
    let t = dml.table;
    let by_tuple: std::collections::HashMap<u64, usize> = targets
        .iter()
        .enumerate()
        .map(|(i, (_, r, _))| (r.tuple, i))
        .collect();
    let mut changes = Vec::new();
    {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        let exec = Executor::new(&rcx);
        for (hi, r) in hits.iter().enumerate() {
            let env = Env {
                row: r,
                parent: None,
                aggs: None,
            };
            let Some(tuple) = tuple_of(&r[t.columns.len()]) else {
                continue;
            };
            let Some(&ti) = by_tuple.get(&tuple) else {
                continue;
            };
            let mut vals: Vec<Value> = r[..t.columns.len()].to_vec();
            for (ci, e) in &sets {
                vals[*ci] = assign(&t.columns[*ci], exec.eval(e, &env)?)?;
            }
            changes.push((ti, vals, hi));
        }
    }
    let n = changes.len();
    for (ti, vals, hi) in changes {
        check_not_null(&t, &vals)?;
        let (old_lk, _, seq) = &targets[ti];
        check_not_moved(cx, old_lk, *seq)?;
        let tuple = cx.alloc_tuple(t.id)?;
        if let Some(ret) = returning.as_mut() {
            // The new row (with its new ctid) beside the FROM items' columns.
            let mut joined = hits[hi].clone();
            joined[..vals.len()].clone_from_slice(&vals);
            joined[vals.len()] = tid_of(tuple);
            ret.add(cx, at, &joined)?;
        }
        let mut row = encode_row(&vals, tuple);
        let new_lk = logical_key(&t, &vals, tuple);
        if t.primary_key.is_empty() {
            // Rows without a key keep their storage identity (row id) across updates.
            let old_id = targets[ti].1.row_id;
            row.row_id = old_id;
            let size = buffered_size(&row, &t);
            cx.pending()?.put_row(
                old_lk.clone(),
                RowWrite {
                    table_id: t.id,
                    row: Some(row),
                    base_seq: *seq,
                    inserted: false,
                },
                size,
            )?;
        } else if &new_lk == old_lk {
            let size = buffered_size(&row, &t);
            cx.pending()?.put_row(
                old_lk.clone(),
                RowWrite {
                    table_id: t.id,
                    row: Some(row),
                    base_seq: *seq,
                    inserted: false,
                },
                size,
            )?;
        } else {
            cx.pending()?.put_row(
                old_lk.clone(),
                RowWrite {
                    table_id: t.id,
                    row: None,
                    base_seq: *seq,
                    inserted: false,
                },
                0,
            )?;
            write_insert_row(cx, &t, new_lk, row)?;
        }
    }
    Returning::answer(returning, format!("UPDATE {n}"))
}

/// Buffers a new row version under `lk`, enforcing the primary key against own writes and
/// everything committed (rows keyed by a fresh row id cannot collide and skip the lookup).
pub(super) fn write_insert_row(
    cx: &mut Cx<'_>,
    t: &Table,
    lk: Vec<u8>,
    row: pb::Row,
) -> Result<(), SqlError> {
    let own = if t.primary_key.is_empty() {
        Some(false)
    } else {
        cx.sess
            .txn
            .as_ref()
            .and_then(|x| x.pending.writes.get(&lk))
            .map(|w| w.row.is_some())
    };
    let mut base = None;
    match own {
        Some(true) => return Err(unique_violation(t, Some(&row))),
        Some(false) => {}
        None => match latest_version(cx.kv, &lk)? {
            Some((_, true)) => return Err(unique_violation(t, Some(&row))),
            Some((seq, false)) => base = Some(seq),
            None => {}
        },
    }
    let size = buffered_size(&row, t);
    cx.pending()?.put_row(
        lk,
        RowWrite {
            table_id: t.id,
            row: Some(row),
            base_seq: base,
            inserted: true,
        },
        size,
    )
}

/// `TRUNCATE [TABLE] [ONLY] t, …`: every row of each table deleted, as a DELETE without WHERE
/// (so a transaction that read the tables before keeps its view of them, where PostgreSQL's
/// TRUNCATE is not MVCC-safe). RockLake has no sequences or foreign keys, so `RESTART IDENTITY`
/// and `CASCADE` have nothing more to do.
pub(super) fn truncate(cx: &mut Cx<'_>, tr: &ast::Truncate) -> Result<Output, SqlError> {
    cx.check_writable("TRUNCATE TABLE")?;
    if let Some(token) = first_present(&[
        (tr.if_exists, "IF"),
        (tr.partitions.is_some(), "PARTITION"),
        (tr.on_cluster.is_some(), "ON"),
    ]) {
        return Err(syntax_at(token));
    }
    // Every table is found before any is emptied.
    let mut tables = Vec::with_capacity(tr.table_names.len());
    for t in &tr.table_names {
        tables.push(resolve_target_for(cx, &t.name, Purpose::Truncate)?);
    }
    let restart = matches!(tr.identity, Some(ast::TruncateIdentityOption::Restart));
    for t in tables {
        run_generated_dml(
            cx,
            &format!("DELETE FROM {}.{}", quoted(&t.schema), quoted(&t.name)),
        )?;
        if restart {
            // The sequences of its serial and identity columns start over; if the
            // transaction does not commit, they go back (see SessionSeqs::restarts).
            for s in owned_sequences(cx, t.id, None) {
                if let Some(def) = s.sequence.as_deref() {
                    let states = cx.st.sequences.get_mut();
                    let mine = cx.sess.seqs.get_mut();
                    mine.restarts.push((s.id, states.value(&s, def)));
                    crate::sequence::setval(states, mine, &s, def, def.start, false)?;
                }
            }
        }
    }
    Ok(Output::Command {
        tag: "TRUNCATE TABLE".into(),
    })
}

pub(super) fn delete(
    cx: &mut Cx<'_>,
    d: &ast::Delete,
    with: Option<&ast::With>,
) -> Result<Output, SqlError> {
    cx.check_writable("DELETE")?;
    let dml = delete_dml(cx, d, with)?;
    cx.pending()?.writes_rows_by(&dml.table);
    let mut returning = dml_returning(cx, &dml, d.returning.as_deref())?;
    let (targets, hits, _) = matching_rows(cx, &dml)?;
    let at = cx.read_point();
    let t = dml.table;
    let by_tuple: std::collections::HashMap<u64, usize> = targets
        .iter()
        .enumerate()
        .map(|(i, (_, r, _))| (r.tuple, i))
        .collect();
    let mut n = 0;
    for r in &hits {
        let Some(tuple) = tuple_of(&r[t.columns.len()]) else {
            continue;
        };
        let Some(&ti) = by_tuple.get(&tuple) else {
            continue;
        };
        let (lk, _, seq) = &targets[ti];
        check_not_moved(cx, lk, *seq)?;
        let lk = lk.clone();
        let seq = *seq;
        cx.pending()?.put_row(
            lk,
            RowWrite {
                table_id: t.id,
                row: None,
                base_seq: seq,
                inserted: false,
            },
            0,
        )?;
        if let Some(ret) = returning.as_mut() {
            ret.add(cx, at, r)?;
        }
        n += 1;
    }
    Returning::answer(returning, format!("DELETE {n}"))
}

// ------------------------------------------------------------------ COPY

/// `err`, a column's type that does not exist, noted as pointing at the type name after the
/// column's `name`.
pub(super) fn type_after(err: SqlError, name: &ast::Ident, ty: &ast::DataType) -> SqlError {
    // serial is no type but PostgreSQL's shorthand for an integer column with a sequence
    // default; RockLake has no sequences.
    let written = ty.to_string().to_ascii_lowercase();
    if matches!(
        written.as_str(),
        "serial" | "serial4" | "bigserial" | "serial8" | "smallserial" | "serial2"
    ) {
        return SqlError::feature(format!("a {written} column (RockLake has no sequences)"));
    }
    if crate::query::points_at_type(&err) {
        let spot = crate::errpos::Spot::find(
            name.span.end,
            crate::errpos::Target::NextToken,
            crate::query::first_word(&ty.to_string()),
        );
        crate::errpos::note(&err, spot);
    }
    err
}

/// `err`, noted as pointing at `name` ([`crate::errpos`]).
pub(super) fn at_name(err: SqlError, name: &ast::ObjectName) -> SqlError {
    if let Some(spot) = crate::query::name_spot(name) {
        crate::errpos::note(&err, spot);
    }
    err
}

pub(super) fn undefined_column_of(column: &str, table: &str) -> SqlError {
    SqlError::UndefinedColumn {
        name: format!("{column}\" of relation \"{table}"),
    }
}

/// A COPY's columns among `all` (a relation's): every one, or the list's, each once
/// (PostgreSQL's `CopyGetAttnums`).
pub(super) fn copy_columns(
    all: &[String],
    table: &str,
    list: &[ast::Ident],
) -> Result<Vec<usize>, SqlError> {
    if list.is_empty() {
        return Ok((0..all.len()).collect());
    }
    let mut out = Vec::with_capacity(list.len());
    for c in list {
        let n = crate::query::ident(c);
        let i = all
            .iter()
            .position(|x| *x == n)
            .ok_or_else(|| undefined_column_of(&n, table))?;
        if out.contains(&i) {
            return Err(SqlError::ColumnTwice { name: n });
        }
        out.push(i);
    }
    Ok(out)
}

/// Per COPY column (`cols` of the relation's `all`), whether an option's list names it.
pub(super) fn relation_flags(
    all: &[String],
    table: &str,
    cols: &[usize],
    names: &[String],
    option: &str,
) -> Result<Vec<bool>, SqlError> {
    let copied: Vec<String> = cols.iter().map(|i| all[*i].clone()).collect();
    CopySpec::flags(names, &copied, option, &|n| {
        (!all.iter().any(|x| x == n)).then(|| undefined_column_of(n, table))
    })
}

/// A name in SQL the server writes for its own parser: always quoted (sqlparser's keywords
/// are not PostgreSQL's, so `pgcatalog::quote_ident`'s bare names could read differently).
pub(super) fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Runs an UPDATE or DELETE the server wrote itself (ALTER TABLE's fill of an added column,
/// TRUNCATE), so that it goes through the one DML path with its MVCC and key checks.
pub(super) fn run_generated_dml(cx: &mut Cx<'_>, sql: &str) -> Result<(), SqlError> {
    let stmts = parse(sql)?;
    match stmts.as_slice() {
        [Statement::Update(u)] => update(cx, u, None)?,
        [Statement::Delete(d)] => delete(cx, d, None)?,
        _ => {
            return Err(SqlError::internal(format!(
                "not one UPDATE or DELETE: {sql}"
            )))
        }
    };
    Ok(())
}

pub(super) fn parse_query_text(sql: &str) -> Result<ast::Query, SqlError> {
    let mut q = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_query())
        .map(|q| *q)
        .map_err(|e| SqlError::Syntax {
            message: syntax_message(&e.to_string()),
        })?;
    crate::precedence::as_postgres_groups(sql, &mut q);
    Ok(q)
}
