//! Views (docs/decisions/0039): `CREATE [OR REPLACE] VIEW`, `DROP VIEW`, and what keeps a
//! view and the relations it reads consistent.
//!
//! A view is a relation definition like a table's or a sequence's (`relkind = 'v'`), stored in
//! the catalog with its columns, no rows, and its query as RockLake prints it, each relation
//! the query reads named with its schema. Reading the view binds that query on its own, as a
//! subquery ([`crate::query`]'s `bind_view`). The view records the relations it reads: they
//! cannot be dropped without CASCADE (which drops the view), and a change to one that the
//! view's query no longer reads the same way is refused.

use std::sync::Arc;

use sqlparser::ast;

use crate::api::Output;
use crate::catalog::{Column, Table, TableRef, ViewDef};
use crate::error::SqlError;
use crate::exec::{self, Cx};
use crate::query::{ident, object_name, parse_view_query, Binder, ReadCx};

/// `CREATE [OR REPLACE] VIEW name [(columns)] AS query`.
pub fn create_view(cx: &mut Cx<'_>, cv: &ast::CreateView) -> Result<Output, SqlError> {
    cx.check_writable("CREATE VIEW")?;
    if cv.materialized {
        return Err(SqlError::feature("materialized views"));
    }
    if cv.temporary {
        return Err(SqlError::feature(
            "temporary views (temporary tables live in the transaction that makes them)",
        ));
    }
    if cv.if_not_exists {
        // PostgreSQL's grammar has no IF NOT EXISTS for views.
        return Err(exec::syntax_at("NOT"));
    }
    if !matches!(cv.options, ast::CreateTableOptions::None) {
        return Err(SqlError::feature("CREATE VIEW … WITH (options)"));
    }
    if cv.columns.iter().any(|c| c.data_type.is_some()) {
        return Err(SqlError::Syntax {
            message: "syntax error at or near \"(\"".into(),
        });
    }
    let (schema, name) = exec::qualified(cx, &object_name(&cv.name))?;
    if !exec::schema_exists(cx, &schema) {
        return Err(SqlError::UndefinedSchema { name: schema });
    }
    // `TABLE name` is written as the `SELECT * FROM name` it is, so that its name is a FROM
    // item's (bound, then qualified below) and the stored text parses as a plain query.
    let mut query = (*cv.query).clone();
    let _ = ast::VisitMut::visit(&mut query, &mut TablesAsSelects);
    // The query is bound as it reads now; each relation name it writes is then given the
    // schema it was found in, so that it reads the same ones under any search_path.
    let (result, reads, stars, before) = {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        let mut binder = Binder::new(&rcx);
        binder.record_relations = true;
        let bq = binder.bind_query(&query, None)?;
        let before = Reading::of(&binder, &bq.columns);
        (
            bq.columns.clone(),
            std::mem::take(&mut binder.relations_read),
            std::mem::take(&mut binder.star_expansions),
            before,
        )
    };
    if cv.columns.len() > result.len() {
        return Err(SqlError::Syntax {
            message: "CREATE VIEW specifies more column names than columns".into(),
        });
    }
    let names: Vec<String> = cv.columns.iter().map(|c| ident(&c.name)).collect();
    let columns = exec::columns_of_query(&result, &names, false)?;
    // Relations named in strings PostgreSQL reads as `regclass` constants are found now, as
    // there (their binding looks them up only when the view is read): written with their
    // schemas, and kept from being dropped under the view.
    let mut named = {
        let at = cx.read_point();
        qualify_relation_literals(&cx.reader(at), &mut query)?
    };
    named.sort_unstable();
    named.dedup();
    let reads_temporary = cx.sess.txn.as_ref().is_some_and(|t| {
        reads
            .iter()
            .filter_map(|r| r.id)
            .chain(named.iter().copied())
            .any(|id| t.pending.temporary.contains(&id))
    });
    if reads_temporary {
        // PostgreSQL makes such a view temporary; RockLake has no temporary views.
        return Err(SqlError::feature(
            "a view over a temporary table (it would be a temporary view)",
        ));
    }
    let _ = ast::visit_relations_mut(&mut query, |n| {
        if let [only] = n.0.as_slice() {
            let at = only.as_ident().map(|i| i.span.start);
            let found = reads.iter().find(|r| r.at.is_some() && r.at == at);
            if let (Some(r), Some(written)) = (found, only.as_ident().cloned()) {
                *n = ast::ObjectName::from(vec![name_ident(r.schema.clone()), written]);
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    let mut depends_on: Vec<u32> = reads.iter().filter_map(|r| r.id).collect();
    depends_on.sort_unstable();
    depends_on.dedup();
    // A relation a FROM item reads is a dependency already (with its columns).
    named.retain(|id| !depends_on.contains(id));
    // The text names the view's columns itself (as PostgreSQL's definition does), so that
    // it reads back as the same view, in pg_dump's `CREATE VIEW name AS definition` too:
    // `*` written out, the view's column names as aliases. Kept only if it reads exactly
    // what the query did; otherwise the query is kept as written.
    let plain_columns: Vec<String> = result.iter().map(|c| c.name.to_string()).collect();
    let mut written = query.clone();
    write_out_stars(&mut written.body, &stars);
    let renames: Vec<(usize, String, String)> = columns
        .iter()
        .zip(&plain_columns)
        .enumerate()
        .filter(|(_, (c, old))| c.name != **old)
        .map(|(i, (c, old))| (i, old.clone(), c.name.clone()))
        .collect();
    let mut query_columns = plain_columns.clone();
    if !renames.is_empty() && name_outputs(&mut written, &renames) {
        for (i, _, new) in &renames {
            query_columns[*i] = new.clone();
        }
    }
    let written = written.to_string();
    let expected = Reading {
        refs: before.refs.clone(),
        columns: query_columns
            .iter()
            .zip(&before.columns)
            .map(|(n, (_, ty))| (n.clone(), *ty))
            .collect(),
    };
    let same = {
        let at = cx.read_point();
        Reading::of_text(&cx.reader(at), &written).is_some_and(|r| r == expected)
    };
    let (text, query_columns) = if same {
        (written, query_columns)
    } else {
        (query.to_string(), plain_columns)
    };
    let def = ViewDef {
        query: text,
        depends_on,
        query_columns,
        named,
    };
    let done = Output::Command {
        tag: "CREATE VIEW".into(),
    };
    // The definitions the view was bound to: a transaction that drops or changes one and
    // commits first makes this one's commit fail (40001) rather than leave the view reading
    // what is gone.
    let read: Vec<TableRef> = {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        def.relations()
            .filter_map(|id| rcx.table_by_id(id))
            .collect()
    };
    for t in &read {
        cx.pending()?.uses_definition(t);
    }
    let existing = exec::find_table(cx, &[schema.clone(), name.clone()])?;
    match existing {
        Some(old) if cv.or_replace && old.view.is_some() => {
            same_columns_as_before(&old, &columns)?;
            let mut view = (*old).clone();
            view.columns = columns;
            view.view = Some(Arc::new(def));
            let p = cx.pending()?;
            p.uses_definition(&old);
            p.put_table(Arc::new(view), false)?;
            // Views reading this one must still read it as before.
            let replaced = Change {
                replaced: true,
                ..Change::default()
            };
            check_dependent_views(cx, &old, &replaced)?;
        }
        Some(old) if cv.or_replace => {
            return Err(SqlError::WrongObjectType {
                message: format!("\"{}\" is not a view", old.name),
            })
        }
        _ => {
            let taken = {
                let at = cx.read_point();
                exec::relation_name_taken(&cx.reader(at), &schema, &name)
            };
            if taken {
                return Err(SqlError::DuplicateTable { name });
            }
            let id = cx.st.next_table_id;
            cx.st.next_table_id += 1;
            let oid = cx.st.next_oid;
            cx.st.next_oid += 3;
            let mut view =
                exec::new_table(id, oid, schema, name, String::new(), columns, Vec::new());
            view.indexes.clear();
            view.view = Some(Arc::new(def));
            cx.pending()?.put_table(Arc::new(view), true)?;
        }
    }
    Ok(done)
}

/// Functions whose first argument PostgreSQL reads as a `regclass`: an untyped string
/// literal there is a relation's name, looked up when the statement is parsed.
const REGCLASS_ARGUMENT: &[&str] = &[
    "nextval",
    "currval",
    "setval",
    "pg_relation_size",
    "pg_total_relation_size",
    "pg_table_size",
    "pg_indexes_size",
];

/// Calls `f` on each string literal of `query` that PostgreSQL reads as a relation's name
/// when it parses the query (a `regclass` constant): `'t'::regclass`, `CAST('t' AS
/// regclass)`, and the first argument of [`REGCLASS_ARGUMENT`]'s functions. `f`'s first
/// error stops the walk.
fn relation_literals(
    query: &mut ast::Query,
    f: impl FnMut(&mut String) -> Result<(), SqlError>,
) -> Result<(), SqlError> {
    struct Walk<F> {
        f: F,
        failed: Option<SqlError>,
    }
    impl<F: FnMut(&mut String) -> Result<(), SqlError>> ast::VisitorMut for Walk<F> {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &mut ast::Expr) -> std::ops::ControlFlow<()> {
            let regclass = |t: &ast::DataType| {
                crate::query::sql_type(t).is_ok_and(|(t, _)| t == crate::types::PgType::Regclass)
            };
            let literal = match e {
                ast::Expr::Cast {
                    data_type, expr, ..
                } if regclass(data_type) => value_of(expr),
                ast::Expr::TypedString(typed) if regclass(&typed.data_type) => {
                    Some(&mut typed.value)
                }
                ast::Expr::Function(call) => {
                    let named = object_name(&call.name)
                        .last()
                        .is_some_and(|n| REGCLASS_ARGUMENT.contains(&n.as_str()));
                    match &mut call.args {
                        ast::FunctionArguments::List(list) if named => {
                            match list.args.first_mut() {
                                Some(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(
                                    first,
                                ))) => value_of(first),
                                _ => None,
                            }
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            let Some(literal) = literal else {
                return std::ops::ControlFlow::Continue(());
            };
            // The error of a name that finds nothing points at its string, as PostgreSQL's.
            let at = literal.span.start;
            let text = match &mut literal.value {
                ast::Value::SingleQuotedString(s) | ast::Value::EscapedStringLiteral(s) => s,
                ast::Value::DollarQuotedString(d) => &mut d.value,
                _ => return std::ops::ControlFlow::Continue(()),
            };
            if let Err(e) = (self.f)(text) {
                crate::errpos::note(&e, crate::errpos::Spot::at(at, ""));
                self.failed = Some(e);
                return std::ops::ControlFlow::Break(());
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    /// The constant `e` is, inside any parentheses.
    fn value_of(e: &mut ast::Expr) -> Option<&mut ast::ValueWithSpan> {
        match e {
            ast::Expr::Nested(inner) => value_of(inner),
            ast::Expr::Value(v) => Some(v),
            _ => None,
        }
    }
    let mut walk = Walk { f, failed: None };
    let _ = ast::VisitMut::visit(query, &mut walk);
    walk.failed.map_or(Ok(()), Err)
}

/// Finds each relation `query` names in a string PostgreSQL reads as a `regclass`
/// ([`relation_literals`]) with PostgreSQL's errors for one that does not exist, writes the
/// name of a stored one with its schema (so it reads the same under any search_path), and
/// returns their table ids: the view depends on them as on its FROM items. Catalog relations
/// and indexes are left as written.
fn qualify_relation_literals(
    rcx: &ReadCx<'_>,
    query: &mut ast::Query,
) -> Result<Vec<u32>, SqlError> {
    let executor = crate::query::Executor::new(rcx);
    let mut ids = Vec::new();
    relation_literals(query, |name| {
        let oid = executor.relation_named(name)??;
        if let Some((t, false)) = rcx.relation_by_oid(oid) {
            *name = qualified_name(&t.schema, &t.name);
            ids.push(t.id);
        }
        Ok(())
    })?;
    Ok(ids)
}

/// `schema.name`, each quoted where it must be (as a `regclass` prints it).
fn qualified_name(schema: &str, name: &str) -> String {
    use crate::pgcatalog::quote_ident_if_needed as quoted;
    format!("{}.{}", quoted(schema), quoted(name))
}

/// Rewrites `TABLE name` into `SELECT * FROM name` wherever a query body is one (alone, in a
/// set operation, in a subquery), keeping the name's identifiers (and their places in the
/// text).
struct TablesAsSelects;

impl ast::VisitorMut for TablesAsSelects {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut ast::Query) -> std::ops::ControlFlow<()> {
        tables_as_selects(&mut query.body);
        std::ops::ControlFlow::Continue(())
    }
}

fn tables_as_selects(body: &mut ast::SetExpr) {
    match body {
        ast::SetExpr::SetOperation { left, right, .. } => {
            tables_as_selects(left);
            tables_as_selects(right);
        }
        ast::SetExpr::Table(t) => {
            let parts: Vec<ast::Ident> = [t.schema_name.clone(), t.table_name.clone()]
                .into_iter()
                .flatten()
                .collect();
            // A string constant there is the binder's syntax error to report.
            if parts.is_empty() || parts.iter().any(|i| i.quote_style == Some('\'')) {
                return;
            }
            let Ok(Some(ast::Statement::Query(q))) = sqlparser::parser::Parser::parse_sql(
                &sqlparser::dialect::PostgreSqlDialect {},
                "SELECT * FROM x",
            )
            .map(|mut v| v.pop()) else {
                return;
            };
            let mut select = q.body;
            if let ast::SetExpr::Select(sel) = select.as_mut() {
                // The `*` takes the name's place in the text: each one's is its own.
                let at = parts.last().map(|i| i.span);
                if let (Some(ast::SelectItem::Wildcard(options)), Some(at)) =
                    (sel.projection.first_mut(), at)
                {
                    options.wildcard_token.0.span = at;
                }
                if let Some(ast::TableFactor::Table { name, .. }) =
                    sel.from.first_mut().map(|f| &mut f.relation)
                {
                    *name = ast::ObjectName::from(parts);
                }
            }
            *body = *select;
        }
        _ => {}
    }
}

/// What a view's query reads: each column reference by identity (table OID, column number,
/// straight from the table's FROM item), in binding order and with a `*`'s columns, and its
/// output columns' names and types. Two texts that read the same are the same view.
#[derive(Debug, Clone, PartialEq)]
struct Reading {
    refs: Vec<(u32, i16, bool)>,
    columns: Vec<(String, crate::types::PgType)>,
}

impl Reading {
    /// What the query `binder` bound (with `record_relations`) reads; `columns`, its output.
    fn of(binder: &Binder<'_, '_>, columns: &[crate::query::ColMeta]) -> Reading {
        Reading {
            refs: binder
                .column_refs
                .iter()
                .map(|r| (r.table_oid, r.attnum, r.direct))
                .collect(),
            columns: columns.iter().map(|c| (c.name.to_string(), c.ty)).collect(),
        }
    }

    /// What `text` reads in `rcx`, if it parses and binds.
    fn of_text(rcx: &ReadCx<'_>, text: &str) -> Option<Reading> {
        let q = parse_view_query(text).ok()?;
        Reading::of_query(rcx, &q)
    }

    fn of_query(rcx: &ReadCx<'_>, q: &ast::Query) -> Option<Reading> {
        let mut binder = Binder::new(rcx);
        binder.record_relations = true;
        let bq = binder.bind_query(q, None).ok()?;
        Some(Reading::of(&binder, &bq.columns))
    }
}

/// Writes each `*` and `t.*` of the query's own select lists (each branch of a set
/// operation) as the columns it read when the view was made (`stars`, from the binder):
/// PostgreSQL fixes a view's columns then, and a column added to a table later is not the
/// view's.
fn write_out_stars(body: &mut ast::SetExpr, stars: &[crate::query::StarExpansion]) {
    match body {
        ast::SetExpr::SetOperation { left, right, .. } => {
            write_out_stars(left, stars);
            write_out_stars(right, stars);
        }
        ast::SetExpr::Query(q) => write_out_stars(&mut q.body, stars),
        ast::SetExpr::Select(sel) => {
            let mut items = Vec::with_capacity(sel.projection.len());
            for item in std::mem::take(&mut sel.projection) {
                let options = match &item {
                    ast::SelectItem::Wildcard(o) | ast::SelectItem::QualifiedWildcard(_, o) => o,
                    _ => {
                        items.push(item);
                        continue;
                    }
                };
                let at = options.wildcard_token.0.span.start;
                let Some((_, columns)) = stars.iter().find(|(s, _)| *s == at) else {
                    items.push(item);
                    continue;
                };
                for (qual, name) in columns {
                    let column = name_ident(name.clone());
                    items.push(ast::SelectItem::UnnamedExpr(match qual {
                        Some(q) => {
                            ast::Expr::CompoundIdentifier(vec![name_ident(q.clone()), column])
                        }
                        None => ast::Expr::Identifier(column),
                    }));
                }
            }
            sel.projection = items;
        }
        _ => {}
    }
}

/// The select list that names a query's columns: its first branch's.
fn naming_select(body: &mut ast::SetExpr) -> Option<&mut ast::Select> {
    match body {
        ast::SetExpr::SetOperation { left, .. } => naming_select(left),
        ast::SetExpr::Query(q) => naming_select(&mut q.body),
        ast::SetExpr::Select(sel) => Some(sel),
        _ => None,
    }
}

/// Names the query's output columns anew: each `(i, old, new)` gives column `i`, named
/// `old`, the name `new` (an alias on its select item). ORDER BY and DISTINCT ON name output
/// columns before input ones: a key naming one of these is given its new name, in one pass
/// (so a name given to one column is not taken for another's old one). False, and nothing
/// changed, when the select list has no item of its own for a column (a `*`).
fn name_outputs(query: &mut ast::Query, renames: &[(usize, String, String)]) -> bool {
    let Some(sel) = naming_select(&mut query.body) else {
        return false;
    };
    let own_item = |i: usize| {
        matches!(
            sel.projection.get(i),
            Some(ast::SelectItem::UnnamedExpr(_) | ast::SelectItem::ExprWithAlias { .. })
        )
    };
    let starred = sel.projection.iter().any(|item| {
        matches!(
            item,
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..)
        )
    });
    if starred || !renames.iter().all(|(i, _, _)| own_item(*i)) {
        return false;
    }
    for (i, _, new) in renames {
        if let Some(item) = sel.projection.get_mut(*i) {
            let expr = match std::mem::replace(item, ast::SelectItem::Wildcard(Default::default()))
            {
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => e,
                other => {
                    *item = other;
                    continue;
                }
            };
            *item = ast::SelectItem::ExprWithAlias {
                expr,
                alias: name_ident(new.clone()),
            };
        }
    }
    let rename_key = |e: &mut ast::Expr| {
        if let ast::Expr::Identifier(id) = e {
            let named = ident(id);
            if let Some((_, _, new)) = renames.iter().find(|(_, old, _)| *old == named) {
                *id = name_ident(new.clone());
            }
        }
    };
    if let Some(ast::Distinct::On(keys)) = sel.distinct.as_mut() {
        keys.iter_mut().for_each(rename_key);
    }
    if let Some(ast::OrderByKind::Expressions(keys)) = query.order_by.as_mut().map(|o| &mut o.kind)
    {
        keys.iter_mut().for_each(|k| rename_key(&mut k.expr));
    }
    true
}

/// A name as an identifier that reads back as it is: quoted only when it must be.
fn name_ident(name: String) -> ast::Ident {
    if crate::pgcatalog::quote_ident_if_needed(&name) == name {
        ast::Ident::new(name)
    } else {
        ast::Ident::with_quote('"', name)
    }
}

/// PostgreSQL's rule for `CREATE OR REPLACE VIEW`: the columns it had stay, with their names
/// and types, in their places; new ones may follow.
fn same_columns_as_before(old: &Table, new: &[Column]) -> Result<(), SqlError> {
    if new.len() < old.columns.len() {
        return Err(SqlError::InvalidTableDefinition {
            message: "cannot drop columns from view".into(),
        });
    }
    for (o, n) in old.columns.iter().zip(new) {
        if o.name != n.name {
            return Err(SqlError::InvalidTableDefinitionHint {
                message: format!(
                    "cannot change name of view column \"{}\" to \"{}\"",
                    o.name, n.name
                ),
                hint: "Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead."
                    .into(),
            });
        }
        if (o.ty, o.typmod) != (n.ty, n.typmod) {
            return Err(SqlError::InvalidTableDefinition {
                message: format!(
                    "cannot change data type of view column \"{}\" from {} to {}",
                    o.name,
                    crate::query::format_type(o.ty, o.typmod),
                    crate::query::format_type(n.ty, n.typmod)
                ),
            });
        }
    }
    Ok(())
}

/// `DROP VIEW [IF EXISTS] name, … [CASCADE | RESTRICT]`.
pub fn drop_views(
    cx: &mut Cx<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
) -> Result<Output, SqlError> {
    cx.check_writable("DROP VIEW")?;
    let mut found: Vec<TableRef> = Vec::new();
    for n in names {
        let parts = object_name(n);
        match exec::find_table(cx, &parts)? {
            Some(t) if t.view.is_none() => {
                return Err(SqlError::WrongObjectTypeHint {
                    message: format!("\"{}\" is not a view", t.name),
                    hint: drop_hint(&t).into(),
                })
            }
            Some(t) => found.push(t),
            None => exec::missing_to_drop(cx, &parts, if_exists, "view", |name| {
                SqlError::UndefinedViewToDrop { name }
            })?,
        }
    }
    let several = found.len() > 1;
    cascade_to_views(cx, &found, cascade, several, "view", None)?;
    for v in found {
        cx.pending()?.drop_definition(&v)?;
    }
    Ok(Output::Command {
        tag: "DROP VIEW".into(),
    })
}

/// The hint of a DROP naming a relation of another kind: the DROP for its kind.
pub fn drop_hint(t: &Table) -> &'static str {
    if t.view.is_some() {
        "Use DROP VIEW to remove a view."
    } else if t.sequence.is_some() {
        "Use DROP SEQUENCE to remove a sequence."
    } else {
        "Use DROP TABLE to remove a table."
    }
}

/// `view v` or `table t`, as PostgreSQL's dependency messages name a relation.
pub fn described(rcx: &ReadCx<'_>, t: &Table) -> String {
    let kind = if t.view.is_some() {
        "view"
    } else if t.sequence.is_some() {
        "sequence"
    } else {
        "table"
    };
    format!("{kind} {}", exec::name_in_message(rcx, t))
}

/// What view `v`'s query reads, as PostgreSQL records its `_RETURN` rule's dependencies
/// (`pg_depend`): each column it reads of a relation (OID, column number), and each relation
/// it reads (OID, 0; `pg_depend`'s rows keep only the columns of one whose columns are read).
/// PostgreSQL's own relations are pinned and not listed. The stored text is bound again; a
/// view that does not bind (one reading itself) lists the relations it was made over.
pub fn rule_reads(rcx: &ReadCx<'_>, v: &Table) -> Vec<(u32, i64)> {
    let Some(def) = v.view.as_deref() else {
        return Vec::new();
    };
    let columns: std::collections::BTreeSet<(u32, i64)> = parse_view_query(&def.query)
        .ok()
        .and_then(|q| {
            let mut binder = Binder::new(rcx);
            binder.record_relations = true;
            binder.bind_query(&q, None).ok()?;
            let named = binder.column_refs.iter().map(|r| (r.table_oid, r.attnum));
            Some(
                named
                    .chain(binder.join_column_refs.iter().copied())
                    .filter(|&(oid, attnum)| oid >= crate::catalog::FIRST_USER_OID && attnum > 0)
                    .map(|(oid, attnum)| (oid, i64::from(attnum)))
                    .collect(),
            )
        })
        .unwrap_or_default();
    let mut reads: Vec<(u32, i64)> = columns.iter().copied().collect();
    reads.extend(
        def.relations()
            .filter_map(|id| rcx.table_by_id(id))
            .map(|relation| (relation.oid, 0)),
    );
    reads
}

/// Every view that reads one of `dropped`, directly or through another view, except those in
/// `dropped`: with the relation each reads (for PostgreSQL's "view v depends on table t").
pub fn dependents(rcx: &ReadCx<'_>, dropped: &[TableRef]) -> Vec<(TableRef, TableRef)> {
    let all = rcx.views();
    let mut out: Vec<(TableRef, TableRef)> = Vec::new();
    let mut frontier: Vec<TableRef> = dropped.to_vec();
    while let Some(t) = frontier.pop() {
        for v in all.iter() {
            let reads = v.view.as_ref().is_some_and(|d| d.reads(t.id));
            let known =
                dropped.iter().any(|d| d.id == v.id) || out.iter().any(|(o, _)| o.id == v.id);
            if reads && !known {
                out.push((v.clone(), t.clone()));
                frontier.push(v.clone());
            }
        }
    }
    out.sort_by_key(|(v, _)| v.oid);
    out
}

/// What a DROP of `dropped` (`kind`: "table", "view", …) does to the views that read them:
/// without CASCADE PostgreSQL's 2BP01 listing them; with it, its notice, and they are dropped.
pub fn cascade_to_views(
    cx: &mut Cx<'_>,
    dropped: &[TableRef],
    cascade: bool,
    several: bool,
    kind: &'static str,
    named: Option<&str>,
) -> Result<(), SqlError> {
    let (deps, lines, name) = {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        let deps = dependents(&rcx, dropped);
        let lines: Vec<(String, String)> = deps
            .iter()
            .map(|(v, on)| (described(&rcx, v), described(&rcx, on)))
            .collect();
        let name = match named {
            Some(n) => n.to_string(),
            None => dropped
                .first()
                .map(|t| exec::name_in_message(&rcx, t))
                .unwrap_or_default(),
        };
        (deps, lines, name)
    };
    if deps.is_empty() {
        return Ok(());
    }
    if !cascade {
        let detail = lines
            .iter()
            .map(|(v, on)| format!("{v} depends on {on}"))
            .collect::<Vec<_>>()
            .join("\n");
        return Err(if several {
            SqlError::DependentObjectsOfSeveral { detail }
        } else {
            SqlError::DependentObjectsOf { kind, name, detail }
        });
    }
    let objects: Vec<String> = lines.iter().map(|(v, _)| v.clone()).collect();
    if let Some(n) = exec::cascade_notice(&objects) {
        cx.sess.notice(n);
    }
    for (v, _) in deps {
        cx.pending()?.drop_definition(&v)?;
    }
    Ok(())
}

/// What a statement changes in a relation that views read ([`check_dependent_views`]).
#[derive(Debug, Default, Clone)]
pub struct Change {
    /// Columns dropped (`DROP COLUMN`), given another type, or renamed from.
    pub dropped: Vec<String>,
    pub retyped: Vec<String>,
    /// Columns added, or renamed to.
    pub added: Vec<String>,
    pub renamed: Vec<(String, String)>,
    /// The relation itself renamed.
    pub renamed_relation: bool,
    /// `DROP COLUMN … CASCADE`: the views that read a dropped column are dropped too.
    pub cascade: bool,
    /// `CREATE OR REPLACE VIEW` of a view others read.
    pub replaced: bool,
}

impl Change {
    /// What `ALTER TABLE`'s operations change.
    pub fn of_alter(ops: &[ast::AlterTableOperation]) -> Change {
        let mut c = Change::default();
        for op in ops {
            match op {
                ast::AlterTableOperation::DropColumn {
                    column_names,
                    drop_behavior,
                    ..
                } => {
                    c.dropped.extend(column_names.iter().map(ident));
                    c.cascade |= matches!(drop_behavior, Some(ast::DropBehavior::Cascade));
                }
                ast::AlterTableOperation::AlterColumn {
                    column_name,
                    op: ast::AlterColumnOperation::SetDataType { .. },
                } => c.retyped.push(ident(column_name)),
                ast::AlterTableOperation::AddColumn { column_def, .. } => {
                    c.added.push(ident(&column_def.name))
                }
                ast::AlterTableOperation::RenameColumn {
                    old_column_name,
                    new_column_name,
                } => c
                    .renamed
                    .push((ident(old_column_name), ident(new_column_name))),
                ast::AlterTableOperation::RenameTable { .. } => c.renamed_relation = true,
                _ => {}
            }
        }
        c
    }
}

/// Why a view stops reading a changed relation as it did.
enum Broken {
    /// It reads a column that is dropped (or renamed away).
    Dropped(String),
    Retyped(String),
    /// A column added or renamed to could be read by a name of its query in place of
    /// another relation's (or by `*` or NATURAL).
    Captured(String),
    /// Its query no longer binds to the view's columns.
    Unbound,
}

/// After `changed` was given a new definition in this transaction: every view reading it
/// must still read it as it did. PostgreSQL holds a view's columns by identity; RockLake's
/// views keep their query's text, read by name each time, so a view fails when its query
/// names a column dropped, retyped or renamed (or reads `*`, or joins NATURAL, which read
/// columns unnamed), when a column added or renamed to could be read by one of
/// its names, or when the query no longer binds to the view's columns. A failing view makes
/// the statement fail with PostgreSQL's error for it, or for `DROP COLUMN … CASCADE` is
/// dropped with the views reading it.
pub fn check_dependent_views(
    cx: &mut Cx<'_>,
    changed: &Table,
    change: &Change,
) -> Result<(), SqlError> {
    let (failing, lines, table) = {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        let deps = dependents(&rcx, &[Arc::new(changed.clone())]);
        let table = exec::name_in_message(&rcx, changed);
        let mut failing: Vec<(TableRef, Broken)> = Vec::new();
        let mut lines: Vec<String> = Vec::new();
        for (v, on) in &deps {
            let Some(def) = v.view.as_deref() else {
                continue;
            };
            let view = described(&rcx, v);
            if on.id != changed.id {
                // Through another view: fails with it.
                if failing.iter().any(|(f, _)| f.id == on.id) {
                    lines.push(format!("{view} depends on {}", described(&rcx, on)));
                    failing.push((v.clone(), Broken::Unbound));
                }
                continue;
            }
            if !def.depends_on.contains(&changed.id) {
                // Only named in a string: the view reads none of its columns.
                continue;
            }
            let words = QueryWords::of(&def.query);
            let several = def.depends_on.len() > 1;
            let removed = change
                .dropped
                .iter()
                .map(|c| (c, true))
                .chain(change.renamed.iter().map(|(old, _)| (old, true)))
                .chain(change.retyped.iter().map(|c| (c, false)));
            let mut broken = None;
            for (c, gone) in removed {
                if words.names(c) || words.star || words.natural {
                    broken = Some(if gone {
                        Broken::Dropped(c.clone())
                    } else {
                        Broken::Retyped(c.clone())
                    });
                    break;
                }
            }
            if broken.is_none() {
                let new = change
                    .added
                    .iter()
                    .chain(change.renamed.iter().map(|(_, new)| new));
                for c in new {
                    if words.names(c) || words.natural || (words.star && several) {
                        broken = Some(Broken::Captured(c.clone()));
                        break;
                    }
                }
            }
            if broken.is_none() && !binds(&rcx, v) {
                broken = Some(Broken::Unbound);
            }
            if let Some(b) = broken {
                lines.push(match &b {
                    Broken::Dropped(c) | Broken::Retyped(c) => {
                        format!("{view} depends on column {c} of table {table}")
                    }
                    _ => format!("{view} depends on table {table}"),
                });
                failing.push((v.clone(), b));
            }
        }
        (failing, lines, table)
    };
    let Some((first, why)) = failing.first() else {
        return Ok(());
    };
    let view = {
        let at = cx.read_point();
        described(&cx.reader(at), first)
    };
    let err = match why {
        Broken::Dropped(c) if change.renamed.iter().all(|(old, _)| old != c) => {
            if change.cascade {
                let names: Vec<String> = {
                    let at = cx.read_point();
                    let rcx = cx.reader(at);
                    failing.iter().map(|(v, _)| described(&rcx, v)).collect()
                };
                if let Some(n) = exec::cascade_notice(&names) {
                    cx.sess.notice(n);
                }
                for (v, _) in failing {
                    cx.pending()?.drop_definition(&v)?;
                }
                return Ok(());
            }
            SqlError::DependentObjectsOf {
                kind: "column",
                name: format!("{c} of table {table}"),
                detail: lines.join("\n"),
            }
        }
        Broken::Retyped(c) => SqlError::UnsupportedByPostgresDetail {
            message: "cannot alter type of a column used by a view or rule".into(),
            detail: format!("rule _RETURN on {view} depends on column \"{c}\""),
        },
        Broken::Dropped(_) | Broken::Captured(_) if !change.renamed.is_empty() => {
            renaming(&view)
        }
        Broken::Captured(c) => SqlError::FeatureNotSupportedHint {
            what: format!("adding column {c} to table {table}, which {view} reads"),
            hint: "A view keeps its query's text, whose names could then read the new column: drop the view, alter the table, and create the view again."
                .into(),
        },
        _ if change.renamed_relation => renaming(&view),
        _ => SqlError::ViewChanged {
            name: first.name.clone(),
        },
    };
    Err(err)
}

fn renaming(view: &str) -> SqlError {
    SqlError::FeatureNotSupportedHint {
        what: format!("renaming what {view} reads"),
        hint: "A view keeps its query's text: drop the view, rename, and create the view again."
            .into(),
    }
}

/// Whether a read of view `v` binds (its query gives the view's columns).
fn binds(rcx: &ReadCx<'_>, v: &Table) -> bool {
    let read = ast::ObjectName::from(vec![
        name_ident(v.schema.clone()),
        name_ident(v.name.clone()),
    ]);
    parse_view_query(&format!("SELECT * FROM {read}"))
        .and_then(|q| Binder::new(rcx).bind_query(&q, None))
        .is_ok()
}

/// The words of a view's query (names as they read: unquoted ones in lower case) and whether
/// it reads columns it does not name: a select list's `*` or `t.*`, a NATURAL join.
struct QueryWords {
    words: Vec<String>,
    star: bool,
    natural: bool,
}

impl QueryWords {
    fn of(query: &str) -> QueryWords {
        use sqlparser::keywords::Keyword;
        use sqlparser::tokenizer::Token;
        let Ok(tokens) =
            sqlparser::tokenizer::Tokenizer::new(&sqlparser::dialect::PostgreSqlDialect {}, query)
                .tokenize()
        else {
            // Stored text always tokenizes; otherwise every column counts as read.
            return QueryWords {
                words: Vec::new(),
                star: true,
                natural: true,
            };
        };
        let significant: Vec<&Token> = tokens
            .iter()
            .filter(|t| !matches!(t, Token::Whitespace(_)))
            .collect();
        let mut out = QueryWords {
            words: Vec::new(),
            star: false,
            natural: false,
        };
        for (i, t) in significant.iter().enumerate() {
            match t {
                Token::Word(w) => {
                    // (USING names its columns, which are words here.)
                    out.natural |= w.quote_style.is_none() && w.keyword == Keyword::NATURAL;
                    out.words.push(if w.quote_style.is_some() {
                        w.value.clone()
                    } else {
                        w.value.to_lowercase()
                    });
                }
                // A select list's `*` or `t.*` (not `count(*)`).
                Token::Mul => {
                    out.star |= i.checked_sub(1).and_then(|p| significant.get(p)).is_some_and(|p| {
                        matches!(p, Token::Comma | Token::Period)
                            || matches!(p, Token::Word(w) if matches!(w.keyword, Keyword::SELECT | Keyword::DISTINCT | Keyword::ALL))
                    })
                }
                _ => {}
            }
        }
        out
    }

    fn names(&self, column: &str) -> bool {
        self.words.iter().any(|w| w == column)
    }
}

/// `ALTER VIEW [IF EXISTS] name …`: RENAME TO, RENAME COLUMN and OWNER TO; what would change
/// a view's query or options is refused (a view is made again with CREATE OR REPLACE).
pub fn alter_view(cx: &mut Cx<'_>, av: &ast::AlterView) -> Result<Output, SqlError> {
    cx.check_writable("ALTER VIEW")?;
    if av.materialized {
        return Err(SqlError::feature("materialized views"));
    }
    let done = || Output::Command {
        tag: "ALTER VIEW".into(),
    };
    let parts = object_name(&av.name);
    let Some(v) = exec::find_table(cx, &parts)? else {
        let name = parts.last().cloned().unwrap_or_default();
        if av.if_exists {
            cx.sess.notice(crate::error::Notice::Missing {
                kind: "relation",
                name,
            });
            return Ok(done());
        }
        return Err(SqlError::UndefinedTable { name });
    };
    if v.view.is_none() {
        return Err(SqlError::WrongObjectType {
            message: format!("\"{}\" is not a view", v.name),
        });
    }
    match &av.operation {
        ast::AlterViewOperation::RenameTo { new_name } => {
            let [new] = object_name(new_name)
                .try_into()
                .map_err(|_| exec::syntax_at("."))?;
            rename_view(cx, &v, &new)?;
        }
        ast::AlterViewOperation::RenameColumn {
            old_column_name,
            new_column_name,
        } => rename_view_column(cx, &v, &ident(old_column_name), &ident(new_column_name))?,
        ast::AlterViewOperation::OwnerTo(owner) => exec::check_new_owner(cx, owner)?,
        ast::AlterViewOperation::As { columns, .. } => {
            // PostgreSQL's grammar has no ALTER VIEW … AS.
            return Err(exec::syntax_at(if columns.is_empty() { "AS" } else { "(" }));
        }
        ast::AlterViewOperation::AlterColumn { .. } => {
            return Err(SqlError::FeatureNotSupportedHint {
                what: "column defaults of views".into(),
                hint: "RockLake's views are read-only: write to the tables the view reads.".into(),
            })
        }
        // Into the schema it is in: nothing to do, as in PostgreSQL.
        ast::AlterViewOperation::SetSchema { schema_name }
            if object_name(schema_name).last() == Some(&v.schema) => {}
        ast::AlterViewOperation::SetSchema { .. } => {
            return Err(SqlError::feature("ALTER VIEW … SET SCHEMA"))
        }
        _ => return Err(SqlError::feature("ALTER VIEW … SET / RESET (options)")),
    }
    Ok(done())
}

/// View `v` renamed `new` (ALTER VIEW or ALTER TABLE … RENAME TO), with the views that read
/// it following.
pub fn rename_view(cx: &mut Cx<'_>, v: &TableRef, new: &str) -> Result<(), SqlError> {
    let taken = {
        let at = cx.read_point();
        exec::relation_name_taken(&cx.reader(at), &v.schema, new)
    };
    if taken {
        return Err(SqlError::DuplicateTable {
            name: new.to_string(),
        });
    }
    let mut renamed = (**v).clone();
    renamed.name = new.to_string();
    let p = cx.pending()?;
    p.renamed.push(v.id);
    p.uses_definition(v);
    p.put_table(Arc::new(renamed), false)?;
    follow_relation_rename(cx, v, new)?;
    let change = Change {
        renamed_relation: true,
        ..Change::default()
    };
    check_dependent_views(cx, v, &change)
}

/// Column `old` of view `v` renamed `new` (ALTER VIEW or ALTER TABLE … RENAME COLUMN): its
/// query's item for the column is given the new name, as PostgreSQL's definition shows it.
pub fn rename_view_column(
    cx: &mut Cx<'_>,
    v: &TableRef,
    old: &str,
    new: &str,
) -> Result<(), SqlError> {
    let Some(def) = v.view.as_deref() else {
        return Err(SqlError::internal("not a view"));
    };
    let Some(i) = v.columns.iter().position(|c| c.name == old) else {
        return Err(SqlError::UndefinedColumn {
            name: old.to_string(),
        });
    };
    if v.columns.iter().any(|c| c.name == new) {
        return Err(SqlError::DuplicateColumn {
            column: new.to_string(),
            table: v.name.clone(),
        });
    }
    let readers = plan_column_rename(cx, v, old, new)?;
    let mut query = parse_view_query(&def.query)?;
    let before = {
        let at = cx.read_point();
        Reading::of_query(&cx.reader(at), &query)
    };
    let view_name = {
        let at = cx.read_point();
        exec::name_in_message(&cx.reader(at), v)
    };
    let refused = |why: &str| SqlError::FeatureNotSupportedHint {
        what: format!("renaming a column of view {view_name}, {why}"),
        hint: "Create the view again (DROP VIEW, then CREATE VIEW) with the new name.".into(),
    };
    let named = def.query_columns.get(i).cloned().unwrap_or_default();
    if !name_outputs(&mut query, &[(i, named, new.to_string())]) {
        return Err(refused("which its query reads with *"));
    }
    let mut def = def.clone();
    def.query = query.to_string();
    match def.query_columns.get_mut(i) {
        Some(c) => *c = new.to_string(),
        None => {
            return Err(SqlError::internal(
                "a view's query has fewer columns than the view",
            ))
        }
    }
    let mut renamed = (**v).clone();
    renamed.columns[i].name = new.to_string();
    // It must read what it did, but for the column's name (its query may name the old one
    // again: `ORDER BY old` would read another column, or none).
    let expected = before.map(|mut r| {
        if let Some(c) = r.columns.get_mut(i) {
            c.0 = new.to_string();
        }
        r
    });
    let same = {
        let at = cx.read_point();
        expected.is_some() && Reading::of_text(&cx.reader(at), &def.query) == expected
    };
    if !same {
        return Err(refused(
            "whose query would then read other columns (it names the old name elsewhere)",
        ));
    }
    renamed.view = Some(Arc::new(def));
    let p = cx.pending()?;
    p.renamed.push(v.id);
    p.uses_definition(v);
    p.put_table(Arc::new(renamed), false)?;
    let mut change = Change::default();
    match readers {
        Some(planned) => apply_column_rename(cx, planned)?,
        None => change.renamed = vec![(old.to_string(), new.to_string())],
    }
    check_dependent_views(cx, v, &change)
}

/// After a statement renamed relation `old` (its definition before): the views reading it
/// follow ([`follow_relation_rename`]).
pub fn follow_renamed(cx: &mut Cx<'_>, old: &Table) -> Result<(), SqlError> {
    cx.pending()?.renamed.push(old.id);
    let new = {
        let at = cx.read_point();
        cx.reader(at).table_by_id(old.id).map(|n| n.name.clone())
    };
    match new.filter(|n| *n != old.name) {
        Some(new) => follow_relation_rename(cx, old, &new),
        None => Ok(()),
    }
}

/// Relation `old` (a table, view or sequence) renamed `new`: each view that reads it names it anew in
/// its text, with its old name kept as the alias its columns are read by. PostgreSQL's views
/// hold relations by identity; a view's text names them, and so follows the rename.
pub fn follow_relation_rename(cx: &mut Cx<'_>, old: &Table, new: &str) -> Result<(), SqlError> {
    let readers: Vec<TableRef> = {
        let at = cx.read_point();
        cx.reader(at)
            .views()
            .into_iter()
            .filter(|v| v.view.as_ref().is_some_and(|d| d.reads(old.id)))
            .collect()
    };
    for v in readers {
        let Some(def) = v.view.as_deref() else {
            continue;
        };
        let mut query = parse_view_query(&def.query)?;
        let mut rename = RenameRelation {
            schema: &old.schema,
            old: &old.name,
            new,
        };
        let _ = ast::VisitMut::visit(&mut query, &mut rename);
        // A relation named in a `regclass` string (written with its schema at CREATE VIEW).
        let (old_name, new_name) = (
            qualified_name(&old.schema, &old.name),
            qualified_name(&old.schema, new),
        );
        relation_literals(&mut query, |name| {
            if *name == old_name {
                name.clone_from(&new_name);
            }
            Ok(())
        })?;
        let mut def = def.clone();
        def.query = query.to_string();
        let mut renamed = (*v).clone();
        renamed.view = Some(Arc::new(def));
        let p = cx.pending()?;
        p.uses_definition(&v);
        p.put_table(Arc::new(renamed), false)?;
    }
    Ok(())
}

/// Renames `schema.old` to `schema.new AS old` in FROM items. A view's text names every
/// relation with its schema, so such a name is the renamed relation (never a WITH query's).
struct RenameRelation<'a> {
    schema: &'a str,
    old: &'a str,
    new: &'a str,
}

impl ast::VisitorMut for RenameRelation<'_> {
    type Break = ();

    fn pre_visit_table_factor(
        &mut self,
        factor: &mut ast::TableFactor,
    ) -> std::ops::ControlFlow<()> {
        if let ast::TableFactor::Table { name, alias, .. } = factor {
            let parts = object_name(name);
            if let [s, n] = parts.as_slice() {
                if s == self.schema && n == self.old {
                    *name = ast::ObjectName::from(vec![
                        name_ident(s.clone()),
                        name_ident(self.new.to_string()),
                    ]);
                    let redundant = alias.as_ref().is_some_and(|a| {
                        a.columns.is_empty() && a.at.is_none() && ident(&a.name) == self.new
                    });
                    if redundant {
                        // Renamed back: the name itself qualifies its columns again.
                        *alias = None;
                    } else if alias.is_none() {
                        *alias = Some(ast::TableAlias {
                            explicit: true,
                            name: name_ident(self.old.to_string()),
                            columns: Vec::new(),
                            at: None,
                        });
                    }
                }
            }
        }
        std::ops::ControlFlow::Continue(())
    }
}

/// A view's query rewritten for a column rename ([`plan_column_rename`]): the new text, and
/// what each column reference of the old text read, in binding order.
pub struct RenamedIn {
    view: TableRef,
    query: String,
    reads: Reading,
}

/// Before column `old` of `rel` (a table or view) is renamed `new`: each view reading `rel`
/// with its text naming the column anew, and each select item whose name came from the
/// column keeping it by an alias, as PostgreSQL's definition then shows. `None` when a
/// reader's query does not bind as it is (it then fails the rename's check).
pub fn plan_column_rename(
    cx: &mut Cx<'_>,
    rel: &Table,
    old: &str,
    new: &str,
) -> Result<Option<Vec<RenamedIn>>, SqlError> {
    let Some(attnum) = rel.columns.iter().position(|c| c.name == old) else {
        return Ok(None);
    };
    let attnum = attnum as i16 + 1;
    let at = cx.read_point();
    let rcx = cx.reader(at);
    let mut out = Vec::new();
    for v in rcx.views() {
        let Some(def) = v.view.as_deref().filter(|d| d.depends_on.contains(&rel.id)) else {
            continue;
        };
        // A NATURAL join's columns are those its two sides share by name: a rename changes
        // the join's condition, which no column reference shows.
        if QueryWords::of(&def.query).natural {
            return Ok(None);
        }
        let mut query = parse_view_query(&def.query)?;
        let mut binder = Binder::new(&rcx);
        binder.record_relations = true;
        let Ok(bound) = binder.bind_query(&query, None) else {
            return Ok(None);
        };
        let spans: Vec<sqlparser::tokenizer::Location> = binder
            .column_refs
            .iter()
            .filter(|r| r.direct && r.table_oid == rel.oid && r.attnum == attnum)
            .map(|r| r.at)
            .collect();
        let _ = ast::VisitMut::visit(&mut query, &mut KeepItemNames { spans: &spans });
        let _ = ast::visit_expressions_mut(&mut query, |e| {
            let last = match e {
                ast::Expr::Identifier(i) => Some(i),
                ast::Expr::CompoundIdentifier(parts) => parts.last_mut(),
                _ => None,
            };
            if let Some(i) = last.filter(|i| spans.contains(&i.span.start) && ident(i) == old) {
                *i = name_ident(new.to_string());
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
        out.push(RenamedIn {
            view: v.clone(),
            query: query.to_string(),
            reads: Reading::of(&binder, &bound.columns),
        });
    }
    Ok(Some(out))
}

/// After the rename: the views [`plan_column_rename`] rewrote take their new text, which must
/// read exactly the columns the old one did (no name read in place of another).
pub fn apply_column_rename(cx: &mut Cx<'_>, planned: Vec<RenamedIn>) -> Result<(), SqlError> {
    for r in &planned {
        let Some(def) = r.view.view.as_deref() else {
            continue;
        };
        let mut def = def.clone();
        def.query = r.query.clone();
        let mut view = (*r.view).clone();
        view.view = Some(Arc::new(def));
        let p = cx.pending()?;
        p.uses_definition(&r.view);
        p.put_table(Arc::new(view), false)?;
    }
    let at = cx.read_point();
    let rcx = cx.reader(at);
    for r in &planned {
        if Reading::of_text(&rcx, &r.query).as_ref() != Some(&r.reads) {
            return Err(renaming(&described(&rcx, &r.view)));
        }
    }
    Ok(())
}

/// Gives each select item whose expression reads one of `spans` its present name as an
/// alias, so that renaming what it reads leaves the query's column names as they are.
struct KeepItemNames<'a> {
    spans: &'a [sqlparser::tokenizer::Location],
}

impl KeepItemNames<'_> {
    fn keep(&self, body: &mut ast::SetExpr) {
        match body {
            ast::SetExpr::SetOperation { left, right, .. } => {
                self.keep(left);
                self.keep(right);
            }
            ast::SetExpr::Select(sel) => {
                for item in sel.projection.iter_mut() {
                    let ast::SelectItem::UnnamedExpr(e) = item else {
                        continue;
                    };
                    if !self.reads(e) {
                        continue;
                    }
                    let alias = name_ident(crate::query::expr_name(e));
                    let expr = std::mem::replace(e, ast::Expr::value(ast::Value::Null));
                    *item = ast::SelectItem::ExprWithAlias { expr, alias };
                }
            }
            // A parenthesized query is visited as a query of its own.
            _ => {}
        }
    }

    fn reads(&self, e: &ast::Expr) -> bool {
        ast::visit_expressions(e, |x| {
            let last = match x {
                ast::Expr::Identifier(i) => Some(i),
                ast::Expr::CompoundIdentifier(parts) => parts.last(),
                _ => None,
            };
            if last.is_some_and(|i| self.spans.contains(&i.span.start)) {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        })
        .is_break()
    }
}

impl ast::VisitorMut for KeepItemNames<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, query: &mut ast::Query) -> std::ops::ControlFlow<()> {
        self.keep(&mut query.body);
        std::ops::ControlFlow::Continue(())
    }
}
