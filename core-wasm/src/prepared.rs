//! SQL-level prepared statements: `PREPARE name [(types)] AS statement`, `EXECUTE name
//! [(values)]`, `DEALLOCATE [PREPARE] name | ALL` — PostgreSQL's named statements of a
//! session, which pg_dump uses (the protocol's Parse/Bind are the host's). A statement is kept
//! as its text with `$n` placeholders and the types of its parameters; EXECUTE puts each value
//! in as a cast to its parameter's type and runs the text, so it sees the catalog as it is then
//! (PostgreSQL re-plans on a changed catalog too). Not transactional, as in PostgreSQL.

use std::collections::BTreeMap;

use sqlparser::ast::{self, Statement};

use crate::error::SqlError;
use crate::exec::{Cx, Step};
use crate::types::PgType;

/// One prepared statement.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The statement's text, `$n` for its parameters.
    sql: String,
    /// Parameter types, `$1` first.
    types: Vec<PgType>,
}

/// A session's prepared statements, by name.
#[derive(Debug, Default)]
pub struct PreparedStatements(BTreeMap<String, Prepared>);

impl PreparedStatements {
    /// DEALLOCATE ALL (and DISCARD ALL).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// `PREPARE name [(types)] AS statement`: the statement is parsed and typed now, so its
/// errors come at PREPARE, as in PostgreSQL.
pub fn prepare(
    cx: &mut Cx<'_>,
    name: &ast::Ident,
    data_types: &[ast::DataType],
    statement: &Statement,
) -> Result<crate::api::Output, SqlError> {
    let name = crate::query::ident(name);
    if cx.sess.prepared.0.contains_key(&name) {
        return Err(SqlError::DuplicatePreparedStatement { name });
    }
    if !matches!(
        statement,
        Statement::Query(_) | Statement::Insert(_) | Statement::Update(_) | Statement::Delete(_)
    ) {
        let first = statement.to_string();
        let word = first.split_whitespace().next().unwrap_or("");
        return Err(SqlError::Syntax {
            message: format!("syntax error at or near \"{word}\""),
        });
    }
    let mut types = Vec::with_capacity(data_types.len());
    for t in data_types {
        types.push(crate::query::sql_type(t)?.0);
    }
    let sql = statement.to_string();
    let oids: Vec<u32> = types.iter().map(|t| t.oid()).collect();
    let described = crate::exec::describe(cx, &crate::params::for_describe(&sql, &oids))?;
    // Parameters past the declared ones take the types their context gives them.
    let inferred: Vec<PgType> = described.param_types
        [types.len().min(described.param_types.len())..]
        .iter()
        .map(|oid| crate::types::type_by_oid(*oid).unwrap_or(PgType::Text))
        .collect();
    types.extend(inferred);
    let count = crate::params::numbers(&sql).into_iter().max().unwrap_or(0);
    while types.len() < count {
        types.push(PgType::Text);
    }
    cx.sess.prepared.0.insert(name, Prepared { sql, types });
    Ok(crate::api::Output::Command {
        tag: "PREPARE".into(),
    })
}

/// `EXECUTE name [(values)]`: the statement with each value cast to its parameter's type.
pub fn execute(
    cx: &mut Cx<'_>,
    name: &ast::ObjectName,
    values: &[ast::Expr],
) -> Result<Step, SqlError> {
    let name = crate::query::object_name(name).pop().unwrap_or_default();
    let Some(p) = cx.sess.prepared.0.get(&name).cloned() else {
        return Err(SqlError::UndefinedPreparedStatement { name });
    };
    if values.len() != p.types.len() {
        return Err(SqlError::WrongParameterCount {
            name,
            expected: p.types.len(),
            got: values.len(),
        });
    }
    let sql = crate::params::replace_with(&p.sql, |n| {
        let (Some(v), Some(t)) = (values.get(n - 1), p.types.get(n - 1)) else {
            return format!("${n}");
        };
        format!("CAST(({v}) AS {})", crate::query::format_type_plain(*t, -1))
    });
    let stmts = crate::exec::parse(&sql)?;
    let [stmt] = stmts.as_slice() else {
        return Err(SqlError::internal("a prepared statement is one statement"));
    };
    crate::exec::execute(cx, stmt)
}

/// `DEALLOCATE [PREPARE] name | ALL`.
pub fn deallocate(cx: &mut Cx<'_>, name: &ast::Ident) -> Result<crate::api::Output, SqlError> {
    let name = crate::query::ident(name);
    if name.eq_ignore_ascii_case("all") && !cx.sess.prepared.0.contains_key(&name) {
        cx.sess.prepared.clear();
        return Ok(crate::api::Output::Command {
            tag: "DEALLOCATE ALL".into(),
        });
    }
    if cx.sess.prepared.0.remove(&name).is_none() {
        return Err(SqlError::UndefinedPreparedStatement { name });
    }
    Ok(crate::api::Output::Command {
        tag: "DEALLOCATE".into(),
    })
}
