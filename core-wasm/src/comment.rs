//! `COMMENT ON TABLE | COLUMN | SEQUENCE | INDEX | SCHEMA … IS 'text' | NULL` (decision
//! 0032). A comment is part of its object's definition: stored with it, gone with it, undone
//! with its transaction, kept by a rename or a type change. `pg_description`,
//! `obj_description` and `col_description` show it, so psql's `\d+`, pg_dump and DuckDB's
//! `postgres` extension see it as on PostgreSQL.

use std::sync::Arc;

use sqlparser::ast::{self, CommentObject, ObjectName, Statement};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use crate::api::Output;
use crate::catalog::{Schema, TableRef};
use crate::error::SqlError;
use crate::exec::{schema_exists, syntax_at, syntax_near, Cx, SYSTEM_COLUMNS};
use crate::query::object_name;
use crate::seqparse::word_is;

/// A relation a COMMENT names.
enum Relation {
    /// A table or sequence of the registry.
    Table(TableRef),
    /// One of a table's listed indexes (its primary key's or one CREATE INDEX made), by OID.
    Index(TableRef, u32),
    /// One of the emulated system catalogs: `relkind` ('r' or 'v'), schema, name.
    Catalog(char, String, String),
}

impl Relation {
    fn name(&self) -> &str {
        match self {
            Relation::Table(t) => &t.name,
            Relation::Index(t, oid) => t.name_of(*oid),
            Relation::Catalog(_, _, n) => n,
        }
    }

    /// `pg_class.relkind`.
    fn kind(&self) -> char {
        match self {
            Relation::Table(t) if t.sequence.is_some() => 'S',
            Relation::Table(t) if t.view.is_some() => 'v',
            Relation::Table(_) => 'r',
            Relation::Index(..) => 'i',
            Relation::Catalog(k, _, _) => *k,
        }
    }
}

/// Marks the last part of a `COMMENT ON CONSTRAINT`'s object name: the constraint's name,
/// after the table's (sqlparser has no such statement; see [`parse_comment_on_constraint`]).
const CONSTRAINT: &str = "\u{0}constraint\u{0}";

/// Whether the parser stands at `COMMENT ON CONSTRAINT`.
pub fn at_comment_on_constraint(p: &Parser<'_>) -> bool {
    word_is(p, 0, Keyword::COMMENT)
        && word_is(p, 1, Keyword::ON)
        && word_is(p, 2, Keyword::CONSTRAINT)
}

/// `COMMENT ON CONSTRAINT name ON [DOMAIN] table IS 'text' | NULL` (what pg_dump writes for a
/// constraint's comment), the parser standing at `COMMENT`: carried as sqlparser's `COMMENT ON
/// TABLE` (`DOMAIN` for a domain's) of the table's name followed by the marked constraint name.
pub fn parse_comment_on_constraint(
    p: &mut Parser<'_>,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<Statement, SqlError> {
    for _ in 0..3 {
        p.next_token();
    }
    // A name (sqlparser's parse_identifier would also take a quoted string).
    if !matches!(p.peek_token_ref().token, Token::Word(_)) {
        return Err(syntax_near(&p.peek_token_ref().token));
    }
    let name = p.parse_identifier().map_err(syntax)?;
    p.expect_keyword_is(Keyword::ON).map_err(syntax)?;
    // DOMAIN is an unreserved word: a table may be named so.
    let domain = word_is(p, 0, Keyword::DOMAIN)
        && !matches!(&p.peek_nth_token_ref(1).token, Token::Period)
        && !word_is(p, 1, Keyword::IS);
    if domain {
        p.next_token();
    }
    let mut object_name = p.parse_object_name(false).map_err(syntax)?;
    p.expect_keyword_is(Keyword::IS).map_err(syntax)?;
    if let Some(e) = not_comment_text(p, 0) {
        return Err(e);
    }
    let comment = if p.parse_keyword(Keyword::NULL) {
        None
    } else {
        Some(p.parse_literal_string().map_err(syntax)?)
    };
    let marked = format!("{CONSTRAINT}{}", crate::query::ident(&name));
    object_name
        .0
        .push(ast::ObjectNamePart::Identifier(ast::Ident::with_quote(
            '"', marked,
        )));
    Ok(Statement::Comment {
        object_type: if domain {
            CommentObject::Domain
        } else {
            CommentObject::Table
        },
        object_name,
        comment,
        if_exists: false,
    })
}

/// The error for a `COMMENT ON … IS x` whose `x` is neither a string nor NULL, the parser
/// standing at `COMMENT` (sqlparser's COMMENT would take a bare or double-quoted word as the
/// text); `None` for any other statement.
pub fn unquoted_comment_text(p: &Parser<'_>) -> Option<SqlError> {
    if !(word_is(p, 0, Keyword::COMMENT)
        && (word_is(p, 1, Keyword::ON) || word_is(p, 1, Keyword::IF)))
    {
        return None;
    }
    // The first IS of the statement: names before it are identifiers, never IS itself.
    let mut n = 2;
    loop {
        match &p.peek_nth_token_ref(n).token {
            Token::EOF | Token::SemiColon => return None,
            _ if word_is(p, n, Keyword::IS) => return not_comment_text(p, n + 1),
            _ => n += 1,
        }
    }
}

/// The syntax error for the token `n` ahead when it is neither a string nor NULL.
fn not_comment_text(p: &Parser<'_>, n: usize) -> Option<SqlError> {
    match &p.peek_nth_token_ref(n).token {
        Token::SingleQuotedString(_)
        | Token::EscapedStringLiteral(_)
        | Token::UnicodeStringLiteral(_) => None,
        _ if word_is(p, n, Keyword::NULL) => None,
        t => Some(syntax_near(t)),
    }
}

pub(crate) fn comment_on(
    cx: &mut Cx<'_>,
    object_type: &CommentObject,
    name: &ObjectName,
    comment: Option<&str>,
    if_exists: bool,
) -> Result<Output, SqlError> {
    if if_exists {
        // sqlparser reads Snowflake's `COMMENT IF EXISTS`; PostgreSQL's grammar has none.
        return Err(syntax_at("IF"));
    }
    cx.check_writable("COMMENT")?;
    let parts = object_name(name);
    // PostgreSQL removes a comment set to the empty string.
    let comment = comment.filter(|c| !c.is_empty()).map(str::to_string);
    let constraint = parts
        .split_last()
        .and_then(|(last, table)| Some((last.strip_prefix(CONSTRAINT)?, table)));
    match constraint {
        Some((name, table)) => {
            let domain = matches!(object_type, CommentObject::Domain);
            comment_on_constraint(cx, table, name, domain, comment)?
        }
        None => comment_on_object(cx, object_type, &parts, comment)?,
    }
    Ok(Output::Command {
        tag: "COMMENT".into(),
    })
}

/// `COMMENT ON` a table, column, sequence, index or schema (any other kind is refused).
fn comment_on_object(
    cx: &mut Cx<'_>,
    object_type: &CommentObject,
    parts: &[String],
    comment: Option<String>,
) -> Result<(), SqlError> {
    match object_type {
        CommentObject::Schema => comment_on_schema(cx, parts, comment),
        CommentObject::Column => comment_on_column(cx, parts, comment),
        CommentObject::Table
        | CommentObject::Sequence
        | CommentObject::Index
        | CommentObject::View
        | CommentObject::MaterializedView
        | CommentObject::ForeignTable => {
            let rel = relation(cx, parts)?;
            let (want, what) = match object_type {
                CommentObject::Table => ('r', "a table"),
                CommentObject::Sequence => ('S', "a sequence"),
                CommentObject::Index => ('i', "an index"),
                CommentObject::View => ('v', "a view"),
                CommentObject::MaterializedView => ('m', "a materialized view"),
                _ => ('f', "a foreign table"),
            };
            if rel.kind() != want {
                return Err(SqlError::WrongObjectType {
                    message: format!("\"{}\" is not {what}", rel.name()),
                });
            }
            match rel {
                Relation::Table(t) => set(cx, &t, |d| d.comment = comment),
                Relation::Index(t, oid) if oid == t.pkey_oid() => {
                    set(cx, &t, |d| d.pkey_comment = comment)
                }
                Relation::Index(t, oid) => set(cx, &t, |d| {
                    if let Some(ix) = d.indexes.iter_mut().find(|ix| ix.oid == oid) {
                        ix.comment = comment;
                    }
                }),
                Relation::Catalog(..) => Err(system_catalog()),
            }
        }
        other => Err(SqlError::FeatureNotSupportedHint {
            what: format!("COMMENT ON {other}"),
            hint: "RockLake keeps comments on tables, columns, sequences, primary-key indexes, \
                   primary-key constraints and schemas."
                .into(),
        }),
    }
}

fn system_catalog() -> SqlError {
    SqlError::FeatureNotSupportedHint {
        what: "COMMENT ON a system catalog".into(),
        hint: "RockLake's system catalogs are derived from its own tables and keep no comments."
            .into(),
    }
}

/// Stores an altered copy of `t`'s definition.
fn set(
    cx: &mut Cx<'_>,
    t: &TableRef,
    change: impl FnOnce(&mut crate::catalog::Table),
) -> Result<(), SqlError> {
    let mut altered = (**t).clone();
    change(&mut altered);
    let p = cx.pending()?;
    p.uses_definition(t);
    p.put_commented_table(Arc::new(altered))
}

/// The relation `parts` names, found as PostgreSQL's `RangeVarGetRelid` finds it: the
/// system catalogs first for a bare name, then the schemas of search_path.
fn relation(cx: &mut Cx<'_>, parts: &[String]) -> Result<Relation, SqlError> {
    let (schema, name) = match parts {
        [n] => (None, n.clone()),
        [s, n] => (Some(s.clone()), n.clone()),
        [d, s, n] if *d == cx.sess.database => (Some(s.clone()), n.clone()),
        [_, _, _] => {
            return Err(SqlError::UnsupportedByPostgres {
                message: format!(
                    "cross-database references are not implemented: \"{}\"",
                    parts.join(".")
                ),
            })
        }
        _ => {
            return Err(SqlError::Syntax {
                message: format!(
                    "improper relation name (too many dotted names): {}",
                    parts.join(".")
                ),
            })
        }
    };
    if let Some(s) = &schema {
        if !schema_exists(cx, s) {
            return Err(SqlError::UndefinedSchema { name: s.clone() });
        }
    }
    let catalog = |s: &str| {
        crate::pgcatalog::relation_kind(Some(s), &name)
            .map(|k| Relation::Catalog(k, s.to_string(), name.clone()))
    };
    if schema.is_none() {
        if let Some(r) = catalog("pg_catalog") {
            return Ok(r);
        }
    }
    let at = cx.read_point();
    let rcx = cx.reader(at);
    let schemas = match &schema {
        Some(s) => vec![s.clone()],
        None => rcx.existing_search_path(),
    };
    for s in &schemas {
        if let Some(t) = rcx.find_table(Some(s), &name) {
            return Ok(Relation::Table(t));
        }
        if let Some((t, oid)) = rcx.index_table(Some(s), &name) {
            return Ok(Relation::Index(t, oid));
        }
        if let Some(r) = catalog(s) {
            return Ok(r);
        }
    }
    Err(SqlError::UndefinedTable {
        name: match schema {
            Some(s) => format!("{s}.{name}"),
            None => name,
        },
    })
}

fn comment_on_column(
    cx: &mut Cx<'_>,
    parts: &[String],
    comment: Option<String>,
) -> Result<(), SqlError> {
    let Some((column, rel_parts)) = parts.split_last().filter(|(_, r)| !r.is_empty()) else {
        return Err(SqlError::Syntax {
            message: "column name must be qualified".into(),
        });
    };
    let rel = relation(cx, rel_parts)?;
    let missing = || SqlError::UndefinedColumn {
        name: format!("{column}\" of relation \"{}", rel.name()),
    };
    let position = match &rel {
        Relation::Table(t) => t.column_index(column),
        Relation::Index(t, oid) => t.listed_index(*oid).and_then(|ix| {
            ix.columns
                .iter()
                .position(|i| t.columns.get(*i).is_some_and(|c| &c.name == column))
        }),
        Relation::Catalog(_, s, n) => crate::pgcatalog::columns(Some(s), n)
            .and_then(|(_, cols)| cols.iter().position(|c| c.name == column)),
    };
    let Some(i) = position else {
        if SYSTEM_COLUMNS.contains(&column.as_str()) {
            return Err(SqlError::feature("COMMENT ON a system column"));
        }
        return Err(missing());
    };
    let relname = rel.name().to_string();
    let not_for = |what: &str| SqlError::WrongObjectTypeDetail {
        message: format!("cannot set comment on relation \"{relname}\""),
        detail: format!("This operation is not supported for {what}."),
    };
    match rel {
        Relation::Table(t) if t.sequence.is_some() => Err(not_for("sequences")),
        Relation::Table(t) => set(cx, &t, |d| d.columns[i].comment = comment),
        Relation::Index(..) => Err(not_for("indexes")),
        Relation::Catalog(..) => Err(system_catalog()),
    }
}

/// A constraint's comment: RockLake's one constraint is a table's primary key.
fn comment_on_constraint(
    cx: &mut Cx<'_>,
    table: &[String],
    constraint: &str,
    domain: bool,
    comment: Option<String>,
) -> Result<(), SqlError> {
    let found = relation(cx, table);
    if domain {
        // RockLake has no domains; a table's row type is a type, but not a domain (an index
        // has none).
        return Err(match found {
            Ok(Relation::Index(..)) | Err(SqlError::UndefinedTable { .. }) => {
                SqlError::UndefinedObject {
                    message: format!("type \"{}\" does not exist", table.join(".")),
                }
            }
            Ok(rel) => SqlError::WrongObjectType {
                message: format!("\"{}\" is not a domain", rel.name()),
            },
            Err(e) => e,
        });
    }
    match found? {
        Relation::Table(t)
            if t.sequence.is_none() && !t.primary_key.is_empty() && t.pkey_name == constraint =>
        {
            set(cx, &t, |d| d.pkey_constraint_comment = comment)
        }
        rel => Err(SqlError::UndefinedObject {
            message: format!(
                "constraint \"{constraint}\" for table \"{}\" does not exist",
                rel.name()
            ),
        }),
    }
}

fn comment_on_schema(
    cx: &mut Cx<'_>,
    parts: &[String],
    comment: Option<String>,
) -> Result<(), SqlError> {
    let [name] = parts else {
        return Err(syntax_at("."));
    };
    let at = cx.read_point();
    let current: Option<Schema> = cx
        .reader(at)
        .all_schemas()
        .iter()
        .find(|s| &s.name == name)
        .cloned();
    let Some(mut schema) = current else {
        return Err(SqlError::UndefinedSchema { name: name.clone() });
    };
    schema.comment = comment;
    cx.pending()?.alter_schema(schema)
}
