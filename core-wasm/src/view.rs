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
use crate::error::{Notice, SqlError};
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
    // The query is bound as it reads now; its relations' names are then written with their
    // schemas, so that it reads the same ones under any search_path.
    let (result, reads, ctes) = {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        let mut binder = Binder::new(&rcx);
        let bq = binder.bind_query(&cv.query, None)?;
        (
            bq.columns.clone(),
            std::mem::take(&mut binder.relations_read),
            std::mem::take(&mut binder.cte_names),
        )
    };
    if cv.columns.len() > result.len() {
        return Err(SqlError::Syntax {
            message: "CREATE VIEW specifies more column names than columns".into(),
        });
    }
    let names: Vec<String> = cv.columns.iter().map(|c| ident(&c.name)).collect();
    let columns = exec::columns_of_query(&result, &names, false)?;
    let mut query = (*cv.query).clone();
    let schemas: Vec<(u32, String)> = {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        reads
            .iter()
            .filter_map(|(_, _, id)| rcx.table_by_id(*id).map(|t| (*id, t.schema.clone())))
            .collect()
    };
    let _ = ast::visit_relations_mut(&mut query, |n| {
        if let [only] = n.0.as_slice() {
            let written = only.as_ident().map(ident);
            let resolved = written.as_ref().and_then(|w| {
                reads
                    .iter()
                    .find(|(s, r, _)| s.is_none() && r == w && !ctes.contains(w))
                    .and_then(|(_, _, id)| schemas.iter().find(|(i, _)| i == id))
                    .map(|(_, s)| (s.clone(), w.clone()))
            });
            if let Some((s, r)) = resolved {
                *n = ast::ObjectName::from(vec![name_ident(s), name_ident(r)]);
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    let mut depends_on: Vec<u32> = reads.iter().map(|(_, _, id)| *id).collect();
    depends_on.sort_unstable();
    depends_on.dedup();
    let def = ViewDef {
        query: query.to_string(),
        depends_on,
        query_columns: result.iter().map(|c| c.name.to_string()).collect(),
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
        def.depends_on
            .iter()
            .filter_map(|id| rcx.table_by_id(*id))
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
            check_dependent_views(cx, &old, Change::Replace)?;
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

/// Every view that reads one of `dropped`, directly or through another view, except those in
/// `dropped`: with the relation each reads (for PostgreSQL's "view v depends on table t").
pub fn dependents(rcx: &ReadCx<'_>, dropped: &[TableRef]) -> Vec<(TableRef, TableRef)> {
    let all = rcx.all_tables();
    let mut out: Vec<(TableRef, TableRef)> = Vec::new();
    let mut frontier: Vec<TableRef> = dropped.to_vec();
    while let Some(t) = frontier.pop() {
        for v in all.iter() {
            let reads = v
                .view
                .as_ref()
                .is_some_and(|d| d.depends_on.contains(&t.id));
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
    cx.sess.notice(match lines.as_slice() {
        [(one, _)] => Notice::Cascade {
            message: format!("drop cascades to {one}"),
            detail: None,
        },
        many => Notice::Cascade {
            message: format!("drop cascades to {} other objects", many.len()),
            detail: Some(
                many.iter()
                    .map(|(v, _)| format!("drop cascades to {v}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
        },
    });
    for (v, _) in deps {
        cx.pending()?.drop_definition(&v)?;
    }
    Ok(())
}

/// How a relation that views read is being changed, for the error when one of them no
/// longer reads it as it did.
#[derive(Debug, Clone, Copy)]
pub enum Change<'a> {
    /// `ALTER TABLE … DROP COLUMN c`.
    DropColumn(&'a str),
    /// `ALTER TABLE … ALTER COLUMN c TYPE …`.
    ColumnType(&'a str),
    /// A rename of the relation or of a column, or a move to another schema.
    Rename,
    /// `CREATE OR REPLACE VIEW` of a view others read.
    Replace,
    /// Any other change.
    Other,
}

/// After `changed` was given a new definition in this transaction: every view reading it
/// (directly or through other views) must still read it as it did. A view fails when its
/// query no longer binds to the columns it has, or (for a column dropped or given another
/// type) when its query names that column, as PostgreSQL refuses any change to a column a
/// view uses. PostgreSQL keeps a view by the relations' identities, so it follows renames;
/// RockLake's views keep their query's text, so a rename of what one reads is refused (drop
/// and re-create the view).
pub fn check_dependent_views(
    cx: &mut Cx<'_>,
    changed: &Table,
    change: Change<'_>,
) -> Result<(), SqlError> {
    let at = cx.read_point();
    let rcx = cx.reader(at);
    let deps = dependents(&rcx, &[Arc::new(changed.clone())]);
    let column = match change {
        Change::DropColumn(c) | Change::ColumnType(c) => Some(c),
        _ => None,
    };
    let table = exec::name_in_message(&rcx, changed);
    // (view, its line in PostgreSQL's detail)
    let mut failing: Vec<(TableRef, String)> = Vec::new();
    for (v, on) in &deps {
        let Some(def) = v.view.as_deref() else {
            continue;
        };
        let view = described(&rcx, v);
        if on.id != changed.id {
            // Through another view: fails with it.
            if failing.iter().any(|(f, _)| f.id == on.id) {
                failing.push((
                    v.clone(),
                    format!("{view} depends on {}", described(&rcx, on)),
                ));
            }
            continue;
        }
        let read = ast::ObjectName::from(vec![
            name_ident(v.schema.clone()),
            name_ident(v.name.clone()),
        ]);
        let binds = parse_view_query(&format!("SELECT * FROM {read}"))
            .and_then(|q| Binder::new(&rcx).bind_query(&q, None))
            .is_ok();
        let names_column = column.is_some_and(|c| mentions(&def.query, c));
        if !binds || names_column {
            let line = match column {
                Some(c) => format!("{view} depends on column {c} of table {table}"),
                None => format!("{view} depends on table {table}"),
            };
            failing.push((v.clone(), line));
        }
    }
    let Some((first, _)) = failing.first() else {
        return Ok(());
    };
    let view = described(&rcx, first);
    Err(match change {
        Change::DropColumn(c) => SqlError::DependentObjectsOf {
            kind: "column",
            name: format!("{c} of table {table}"),
            detail: failing
                .iter()
                .map(|(_, l)| l.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        },
        Change::ColumnType(c) => SqlError::UnsupportedByPostgresDetail {
            message: "cannot alter type of a column used by a view or rule".into(),
            detail: format!("rule _RETURN on {view} depends on column \"{c}\""),
        },
        Change::Rename => SqlError::FeatureNotSupportedHint {
            what: format!("renaming what {view} reads"),
            hint:
                "A view keeps its query's text: drop the view, rename, and create the view again."
                    .into(),
        },
        Change::Replace | Change::Other => SqlError::ViewChanged {
            name: first.name.clone(),
        },
    })
}

/// Whether a view's query names `column` (a word of it, unquoted or quoted, or `*`, which
/// reads every column).
fn mentions(query: &str, column: &str) -> bool {
    let Ok(tokens) =
        sqlparser::tokenizer::Tokenizer::new(&sqlparser::dialect::PostgreSqlDialect {}, query)
            .tokenize()
    else {
        return true;
    };
    use sqlparser::keywords::Keyword;
    use sqlparser::tokenizer::Token;
    let significant: Vec<&Token> = tokens
        .iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    significant.iter().enumerate().any(|(i, t)| match t {
        Token::Word(w) => {
            let value = if w.quote_style.is_some() {
                w.value.clone()
            } else {
                w.value.to_lowercase()
            };
            value == column
        }
        // A select list's `*` or `t.*` (not `count(*)`).
        Token::Mul => i.checked_sub(1).and_then(|p| significant.get(p)).is_some_and(|p| {
            matches!(p, Token::Comma | Token::Period)
                || matches!(p, Token::Word(w) if matches!(w.keyword, Keyword::SELECT | Keyword::DISTINCT | Keyword::ALL))
        }),
        _ => false,
    })
}
