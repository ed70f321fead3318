//! PostgreSQL's COPY grammar, read from sqlparser's tokens.
//!
//! sqlparser's own COPY parser reads a Redshift-flavoured legacy option list and a subset of
//! PostgreSQL's parenthesised options: no `FORCE_QUOTE *`, no `HEADER MATCH`, no boolean
//! spellings such as `HEADER on` or `HEADER 1`, no quoted format names, no legacy `FORCE NULL`.
//! This module reads both of PostgreSQL's option syntaxes (gram.y's `copy_opt_list` and
//! `copy_generic_opt_list`) into one list of sqlparser `CopyOption`s, as PostgreSQL's grammar
//! turns both into one option list; [`crate::copyformat`] checks that list as PostgreSQL's
//! `ProcessCopyOptions` does, when the statement runs.
//!
//! Two options have no `CopyOption` of their own, so they are written as values no COPY text
//! parses to: `FORCE_QUOTE *` as `ForceQuote([*])` with an unquoted `*` (a column name read
//! here is always quoted, see [`column`]), and `HEADER MATCH` as `Header(true)` with
//! `CopyLegacyOption::Header` in the legacy list (which this parser otherwise leaves empty).
//!
//! `COPY t [(cols)] FROM … WHERE cond` has no place for its condition either: it is written
//! with the source query `SELECT cols FROM t WHERE cond` (a COPY FROM's source is otherwise
//! always a table).
//!
//! An option value of the wrong kind (`HEADER 2`, `DELIMITER ';;'`) is refused here, with
//! PostgreSQL's message, rather than when the statement runs.

use sqlparser::ast::{
    CopyLegacyOption, CopyOption, CopySource, CopyTarget, Expr, Ident, ObjectName, Query,
    SelectItem, SetExpr, Statement, TableFactor,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{IsOptional, Parser, ParserError};
use sqlparser::tokenizer::Token;

use crate::error::SqlError;

/// Reads a COPY statement after its `COPY` keyword.
pub fn parse_copy(
    p: &mut Parser<'_>,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<Statement, SqlError> {
    // `COPY BINARY t …`: the pre-7.3 spelling of FORMAT binary.
    let old_binary = p.parse_keyword(Keyword::BINARY);
    let mut source = if !old_binary && p.consume_token(&Token::LParen) {
        let q = p.parse_query().map_err(syntax)?;
        p.expect_token(&Token::RParen).map_err(syntax)?;
        CopySource::Query(q)
    } else {
        let table_name: ObjectName = p.parse_object_name(false).map_err(syntax)?;
        let columns = p
            .parse_parenthesized_column_list(IsOptional::Optional, false)
            .map_err(syntax)?;
        CopySource::Table {
            table_name,
            columns,
        }
    };
    let to = if matches!(source, CopySource::Query(_)) {
        p.expect_keyword(Keyword::TO).map_err(syntax)?;
        true
    } else {
        match p.parse_one_of_keywords(&[Keyword::FROM, Keyword::TO]) {
            Some(Keyword::TO) => true,
            Some(_) => false,
            None => return Err(syntax(expected(p, "FROM or TO"))),
        }
    };
    let target = if p.parse_keyword(Keyword::STDIN) {
        CopyTarget::Stdin
    } else if p.parse_keyword(Keyword::STDOUT) {
        CopyTarget::Stdout
    } else if p.parse_keyword(Keyword::PROGRAM) {
        CopyTarget::Program {
            command: sconst(p).map_err(syntax)?,
        }
    } else {
        CopyTarget::File {
            filename: sconst(p).map_err(syntax)?,
        }
    };
    let mut options = Vec::new();
    let mut legacy = Vec::new();
    if old_binary {
        options.push(CopyOption::Format(Ident::new("binary")));
    }
    // `[USING] DELIMITERS 'c'`, PostgreSQL 7.2's spelling of DELIMITER.
    let using = p.parse_keyword(Keyword::USING);
    let delimiters = matches!(&p.peek_token_ref().token,
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("delimiters"));
    if using && !delimiters {
        return Err(syntax(expected(p, "DELIMITERS")));
    }
    if delimiters {
        p.next_token();
        options.push(CopyOption::Delimiter(one_char(p, "delimiter", syntax)?));
    }
    let _ = p.parse_keyword(Keyword::WITH);
    if p.consume_token(&Token::LParen) {
        loop {
            generic_option(p, to, &mut options, &mut legacy, syntax)?;
            if !p.consume_token(&Token::Comma) {
                break;
            }
        }
        p.expect_token(&Token::RParen).map_err(syntax)?;
    } else {
        while legacy_option(p, to, &mut options, &mut legacy, syntax)? {}
    }
    if !to && p.parse_keyword(Keyword::WHERE) {
        let cond = p.parse_expr().map_err(syntax)?;
        source = filtered(&source, &cond, syntax)?;
    }
    // Inline data after `COPY … FROM STDIN;` (a script's, not the protocol's) is not read.
    if let Token::CopyData { .. } = p.peek_token_ref().token {
        p.next_token();
    }
    Ok(Statement::Copy {
        source,
        to,
        target,
        options,
        legacy_options: legacy,
        payload: None,
    })
}

/// `COPY t [(cols)] FROM … WHERE cond` as its source query `SELECT cols FROM t WHERE cond`
/// (see the module docs).
fn filtered(
    source: &CopySource,
    cond: &Expr,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<CopySource, SqlError> {
    let CopySource::Table {
        table_name,
        columns,
    } = source
    else {
        return Err(SqlError::Syntax {
            message: "syntax error at or near \"WHERE\"".into(),
        });
    };
    let cols = if columns.is_empty() {
        "*".to_string()
    } else {
        columns
            .iter()
            .map(Ident::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sql = format!("SELECT {cols} FROM {table_name} WHERE {cond}");
    let q = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_query())
        .map_err(syntax)?;
    Ok(CopySource::Query(q))
}

/// The table, column list and condition of a `COPY … FROM … WHERE` (its source query, as
/// [`filtered`] wrote it).
pub fn filtered_parts(q: &Query) -> Option<(ObjectName, Vec<Ident>, Expr)> {
    let SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    let [from] = s.from.as_slice() else {
        return None;
    };
    let TableFactor::Table { name, .. } = &from.relation else {
        return None;
    };
    let mut columns = Vec::new();
    for item in &s.projection {
        match item {
            SelectItem::Wildcard(_) => {}
            SelectItem::UnnamedExpr(Expr::Identifier(id)) => columns.push(id.clone()),
            _ => return None,
        }
    }
    Some((name.clone(), columns, s.selection.clone()?))
}

/// sqlparser's "Expected: …, found: …" error at the next token.
pub(crate) fn expected(p: &Parser<'_>, what: &str) -> ParserError {
    match p.expected_ref::<()>(what, p.peek_token_ref()) {
        Err(e) => e,
        Ok(()) => ParserError::ParserError(format!("Expected: {what}")),
    }
}

/// A string constant (`Sconst`): quoted, `E'…'`, `U&'…'` or dollar-quoted.
fn sconst(p: &mut Parser<'_>) -> Result<String, ParserError> {
    let t = p.next_token();
    match t.token {
        Token::SingleQuotedString(s)
        | Token::EscapedStringLiteral(s)
        | Token::UnicodeStringLiteral(s) => Ok(s),
        Token::DollarQuotedString(d) => Ok(d.value),
        _ => p.expected("string constant", t),
    }
}

/// A one-character option value (DELIMITER, QUOTE, ESCAPE).
fn one_char(
    p: &mut Parser<'_>,
    what: &str,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<char, SqlError> {
    let s = sconst(p).map_err(syntax)?;
    single(&s, what)
}

fn single(s: &str, what: &str) -> Result<char, SqlError> {
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii() => Ok(c),
        _ => Err(SqlError::UnsupportedByPostgres {
            message: format!("COPY {what} must be a single one-byte character"),
        }),
    }
}

/// A column name as written: folded to lower case unless quoted. The name is kept quoted so
/// later resolution takes it as it is.
fn column(name: String) -> Ident {
    Ident::with_quote('"', name)
}

/// The marker `FORCE_QUOTE *` is written as (see the module docs).
pub fn is_star(cols: &[Ident]) -> bool {
    matches!(cols, [c] if c.quote_style.is_none() && c.value == "*")
}

fn star() -> Vec<Ident> {
    vec![Ident::new("*")]
}

/// Whether a COPY's options asked for `HEADER MATCH` (see the module docs).
pub fn header_match(legacy: &[CopyLegacyOption]) -> bool {
    legacy.iter().any(|l| matches!(l, CopyLegacyOption::Header))
}

/// A `copy_generic_opt_arg`: what follows a parenthesised option's name.
enum Arg {
    None,
    /// An integer (PostgreSQL's `Integer` node: booleans accept 0 and 1 spelled so).
    Int(i64),
    /// A string, a word (folded unless quoted) or a non-integer number, as text.
    Str(String),
    Star,
    List(Vec<String>),
}

impl Arg {
    /// PostgreSQL's `defGetString`.
    fn string(self, name: &str) -> Result<String, SqlError> {
        match self {
            Arg::None => Err(SqlError::Syntax {
                message: format!("{name} requires a parameter"),
            }),
            Arg::Int(i) => Ok(i.to_string()),
            Arg::Str(s) => Ok(s),
            Arg::Star => Ok("*".into()),
            Arg::List(l) => Ok(l.join(".")),
        }
    }

    /// PostgreSQL's `defGetBoolean`.
    fn boolean(self, name: &str) -> Result<bool, SqlError> {
        match self {
            Arg::None | Arg::Int(1) => return Ok(true),
            Arg::Int(0) => return Ok(false),
            Arg::Str(ref s) => match s.to_ascii_lowercase().as_str() {
                "true" | "on" => return Ok(true),
                "false" | "off" => return Ok(false),
                _ => {}
            },
            _ => {}
        }
        Err(SqlError::Syntax {
            message: format!("{name} requires a Boolean value"),
        })
    }

    fn columns(self, name: &str, star_allowed: bool) -> Result<Vec<Ident>, SqlError> {
        match self {
            Arg::Star if star_allowed => Ok(star()),
            Arg::List(l) => Ok(l.into_iter().map(column).collect()),
            _ => Err(SqlError::InvalidParameter {
                message: format!("argument to option \"{name}\" must be a list of column names"),
            }),
        }
    }
}

fn word_text(value: String, quote_style: Option<char>) -> String {
    if quote_style.is_some() {
        value
    } else {
        value.to_lowercase()
    }
}

fn generic_arg(
    p: &mut Parser<'_>,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<Arg, SqlError> {
    let t = p.peek_token_ref().token.clone();
    Ok(match t {
        Token::Comma | Token::RParen => Arg::None,
        Token::Mul => {
            p.next_token();
            Arg::Star
        }
        Token::LParen => {
            p.next_token();
            let mut items = Vec::new();
            loop {
                let t = p.next_token();
                items.push(match t.token {
                    Token::Word(w) => word_text(w.value, w.quote_style),
                    Token::SingleQuotedString(s)
                    | Token::EscapedStringLiteral(s)
                    | Token::UnicodeStringLiteral(s) => s,
                    _ => {
                        p.prev_token();
                        return Err(syntax(expected(p, "column name")));
                    }
                });
                if !p.consume_token(&Token::Comma) {
                    break;
                }
            }
            p.expect_token(&Token::RParen).map_err(syntax)?;
            Arg::List(items)
        }
        Token::Minus | Token::Plus | Token::Number(..) => {
            let sign = match p.next_token().token {
                Token::Minus => "-",
                Token::Plus => "",
                Token::Number(n, _) => return Ok(number(n)),
                _ => "",
            };
            let t = p.next_token();
            match t.token {
                Token::Number(n, _) => number(format!("{sign}{n}")),
                _ => {
                    p.prev_token();
                    return Err(syntax(expected(p, "a number")));
                }
            }
        }
        Token::Word(w) => {
            p.next_token();
            Arg::Str(word_text(w.value, w.quote_style))
        }
        _ => Arg::Str(sconst(p).map_err(syntax)?),
    })
}

fn number(n: String) -> Arg {
    match n.parse::<i32>() {
        Ok(i) => Arg::Int(i64::from(i)),
        Err(_) => Arg::Str(n),
    }
}

/// One parenthesised option: `name [arg]`.
fn generic_option(
    p: &mut Parser<'_>,
    to: bool,
    options: &mut Vec<CopyOption>,
    legacy: &mut Vec<CopyLegacyOption>,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<(), SqlError> {
    let t = p.next_token();
    let name = match t.token {
        Token::Word(w) => word_text(w.value, w.quote_style),
        _ => {
            p.prev_token();
            return Err(syntax(expected(p, "an option name")));
        }
    };
    let arg = generic_arg(p, syntax)?;
    options.push(match name.as_str() {
        "format" => CopyOption::Format(Ident::new(arg.string(&name)?)),
        "freeze" => CopyOption::Freeze(arg.boolean(&name)?),
        "delimiter" => CopyOption::Delimiter(single(&arg.string(&name)?, "delimiter")?),
        "null" => CopyOption::Null(arg.string(&name)?),
        "header" => header(arg, to, legacy)?,
        "quote" => CopyOption::Quote(single(&arg.string(&name)?, "quote")?),
        "escape" => CopyOption::Escape(single(&arg.string(&name)?, "escape")?),
        "force_quote" => CopyOption::ForceQuote(arg.columns(&name, true)?),
        "force_not_null" => CopyOption::ForceNotNull(arg.columns(&name, false)?),
        "force_null" => CopyOption::ForceNull(arg.columns(&name, false)?),
        "encoding" => CopyOption::Encoding(arg.string(&name)?),
        _ => {
            return Err(SqlError::Syntax {
                message: format!("option \"{name}\" not recognized"),
            })
        }
    });
    Ok(())
}

/// PostgreSQL's `defGetCopyHeaderChoice`: a boolean, or `match` (COPY FROM only).
fn header(arg: Arg, to: bool, legacy: &mut Vec<CopyLegacyOption>) -> Result<CopyOption, SqlError> {
    if let Arg::Str(s) = &arg {
        if s.eq_ignore_ascii_case("match") {
            if to {
                return Err(SqlError::UnsupportedByPostgres {
                    message: format!("cannot use \"{s}\" with HEADER in COPY TO"),
                });
            }
            legacy.push(CopyLegacyOption::Header);
            return Ok(CopyOption::Header(true));
        }
    }
    arg.boolean("header")
        .map(CopyOption::Header)
        .map_err(|_| SqlError::Syntax {
            message: "header requires a Boolean value or \"match\"".into(),
        })
}

/// One item of the unparenthesised list; `false` when the next token starts none.
fn legacy_option(
    p: &mut Parser<'_>,
    to: bool,
    options: &mut Vec<CopyOption>,
    legacy: &mut Vec<CopyLegacyOption>,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<bool, SqlError> {
    let Some(kw) = p.parse_one_of_keywords(&[
        Keyword::BINARY,
        Keyword::FREEZE,
        Keyword::DELIMITER,
        Keyword::NULL,
        Keyword::CSV,
        Keyword::HEADER,
        Keyword::QUOTE,
        Keyword::ESCAPE,
        Keyword::FORCE,
        Keyword::ENCODING,
    ]) else {
        return Ok(false);
    };
    let as_ = |p: &mut Parser<'_>| {
        let _ = p.parse_keyword(Keyword::AS);
    };
    options.push(match kw {
        Keyword::BINARY => CopyOption::Format(Ident::new("binary")),
        Keyword::CSV => CopyOption::Format(Ident::new("csv")),
        Keyword::FREEZE => CopyOption::Freeze(true),
        Keyword::HEADER => header(Arg::None, to, legacy)?,
        Keyword::DELIMITER => {
            as_(p);
            CopyOption::Delimiter(one_char(p, "delimiter", syntax)?)
        }
        Keyword::NULL => {
            as_(p);
            CopyOption::Null(sconst(p).map_err(syntax)?)
        }
        Keyword::QUOTE => {
            as_(p);
            CopyOption::Quote(one_char(p, "quote", syntax)?)
        }
        Keyword::ESCAPE => {
            as_(p);
            CopyOption::Escape(one_char(p, "escape", syntax)?)
        }
        Keyword::ENCODING => CopyOption::Encoding(sconst(p).map_err(syntax)?),
        _ => {
            // FORCE QUOTE {cols | *}, FORCE NOT NULL cols, FORCE NULL cols.
            if p.parse_keyword(Keyword::QUOTE) {
                if p.consume_token(&Token::Mul) {
                    CopyOption::ForceQuote(star())
                } else {
                    CopyOption::ForceQuote(column_list(p, syntax)?)
                }
            } else if p.parse_keywords(&[Keyword::NOT, Keyword::NULL]) {
                CopyOption::ForceNotNull(column_list(p, syntax)?)
            } else if p.parse_keyword(Keyword::NULL) {
                CopyOption::ForceNull(column_list(p, syntax)?)
            } else {
                return Err(syntax(expected(p, "QUOTE, NOT NULL or NULL")));
            }
        }
    });
    Ok(true)
}

/// `columnList` of the legacy syntax: names without parentheses.
fn column_list(
    p: &mut Parser<'_>,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<Vec<Ident>, SqlError> {
    let mut cols = Vec::new();
    loop {
        let id = p.parse_identifier().map_err(syntax)?;
        cols.push(column(word_text(id.value, id.quote_style)));
        if !p.consume_token(&Token::Comma) {
            return Ok(cols);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy_of(sql: &str) -> (Vec<CopyOption>, Vec<CopyLegacyOption>) {
        let stmts = crate::exec::parse(sql).expect("parses");
        match stmts.as_slice() {
            [Statement::Copy {
                options,
                legacy_options,
                ..
            }] => (options.clone(), legacy_options.clone()),
            other => panic!("not one COPY: {other:?}"),
        }
    }

    #[test]
    fn both_option_syntaxes_read_into_one_list() {
        let (legacy, _) = copy_of("COPY t TO STDOUT WITH CSV HEADER FORCE QUOTE *");
        let (generic, _) = copy_of("COPY t TO STDOUT (FORMAT csv, HEADER true, FORCE_QUOTE *)");
        assert_eq!(legacy, generic);
        let CopyOption::ForceQuote(cols) = &legacy[2] else {
            panic!("{legacy:?}")
        };
        assert!(is_star(cols));
        // A column called `*` is a quoted name, not the marker.
        let (named, _) = copy_of("COPY t TO STDOUT (FORMAT csv, FORCE_QUOTE (\"*\"))");
        let CopyOption::ForceQuote(cols) = &named[1] else {
            panic!("{named:?}")
        };
        assert!(!is_star(cols));
        let (opts, legacy) = copy_of("COPY t FROM STDIN (FORMAT 'csv', HEADER MATCH, FREEZE 0)");
        assert!(header_match(&legacy));
        assert_eq!(opts[2], CopyOption::Freeze(false));
        let (_, legacy) = copy_of("COPY t FROM STDIN (FORMAT csv, HEADER on)");
        assert!(!header_match(&legacy));
    }

    #[test]
    fn malformed_copies_get_postgres_errors() {
        for (sql, state) in [
            ("COPY (SELECT 1) FROM STDIN", "42601"),
            ("COPY t FROM STDIN (FORMAT csv) WHERE", "42601"),
            ("COPY t TO STDOUT (HEADER match)", "0A000"),
            ("COPY t TO STDOUT (HEADER 'maybe')", "42601"),
            ("COPY t TO STDOUT (QUOTE '')", "0A000"),
            ("COPY t TO STDOUT (bogus)", "42601"),
            ("COPY t TO STDOUT (FORCE_NOT_NULL *)", "22023"),
            ("COPY t TO STDOUT FORCE", "42601"),
            ("COPY t TO STDOUT USING", "42601"),
        ] {
            let e = crate::exec::parse(sql).expect_err(sql);
            assert_eq!(e.sqlstate(), state, "{sql}: {e}");
        }
        // The statements around a COPY are read as before.
        assert_eq!(
            crate::exec::parse("SELECT 1; COPY t TO STDOUT; SELECT 2")
                .expect("parses")
                .len(),
            3
        );
        assert_eq!(
            crate::exec::parse("COPY t TO STDOUT SELECT 2")
                .expect_err("no delimiter")
                .sqlstate(),
            "42601"
        );
    }
}
