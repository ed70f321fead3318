//! Statement execution: transactions, DDL, DML, COPY, and the read paths they share.
//!
//! This module parses statement strings, dispatches each statement (`execute`, `describe`),
//! and runs transactions, savepoints, cursors and EXPLAIN; it also holds the row reads the
//! others share (`visible_rows`, `table_rows_where`, …). The statements that change things
//! are in `create.rs`, `alter.rs`, `drop.rs`, `sequences.rs`, `dml.rs` and `copy.rs`;
//! `rows.rs` is what they share about stored rows (keys, typmods, defaults, encoding).

use std::sync::Arc;

use rocklake_proto as pb;
use sqlparser::ast::{self as ast, Statement};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use crate::api::{CopyChunks, Describe, KvRead, Output, TextRows};
use crate::catalog::{from_datum, to_datum, Column, Schema, SequenceDef, Table, TableRef};
use crate::copyformat::{self, printout, CopySpec, LineReader};
use crate::engine::{
    latest_version, scan_visible, visit_visible, CopyIn, Isolation, Session, Shared, Txn,
};
use crate::envelope::Envelope;
use crate::error::{Notice, SqlError};
use crate::keys;
use crate::query::{
    cast_value, coerce_expr, object_name, split_name, sql_type, table_scope, BExpr, Binder,
    ColMeta, Env, Executor, FromItem, ReadCx, Scope, Source,
};
use crate::scancache;
use crate::txn::RowWrite;
use crate::types::{format_text, parse_text, PgType, Value};
use crate::wire;

mod alter;
mod copy;
mod create;
mod dml;
mod drop;
mod index;
mod rows;
mod sequences;
#[cfg(test)]
mod tests;

pub(crate) use alter::*;
pub use copy::*;
pub(crate) use create::*;
pub(crate) use dml::*;
pub(crate) use drop::*;
use index::*;
pub(crate) use index::{index_column_names, predicate_columns, pretty_predicate, shown_predicate};
pub use rows::*;
use sequences::*;

/// Statements longer than this are refused before parsing (54000).
pub const MAX_STATEMENT_BYTES: usize = 64 * 1024 * 1024;
/// PostgreSQL's MaxHeapTuplesPerPage for 8 KiB pages: tuple numbers map to ctids like heap slots.
const TUPLES_PER_PAGE: u64 = 291;
/// Nesting deeper than this is refused (stack safety in the recursive binder).
pub(crate) const MAX_NESTING: usize = 200;

pub struct Cx<'a> {
    pub kv: &'a dyn KvRead,
    pub st: &'a mut Shared,
    pub sess: &'a mut Session,
    /// The engine's other sessions (`pg_stat_activity`, signalling backends).
    pub others: &'a std::collections::HashMap<crate::api::SessionId, Session>,
}

#[allow(
    clippy::large_enum_variant,
    reason = "one Step per statement, moved once; boxing its Output would allocate per statement"
)]
pub enum Step {
    Output(Output),
    /// The statement ends the transaction: the engine plans the commit.
    Commit {
        tag: Option<String>,
    },
}

pub fn parse(sql: &str) -> Result<Vec<Statement>, SqlError> {
    check_limits(sql)?;
    let syntax = |e: ParserError| syntax_error(&e.to_string(), sql);
    let syntax: &dyn Fn(ParserError) -> SqlError = &syntax;
    let p = Parser::new(&PostgreSqlDialect {}).with_recursion_limit(MAX_NESTING);
    let operators = crate::seqparse::names_builtin_operator(sql);
    let identity_changes = crate::seqparse::mentions_identity_change(sql);
    let table_only = crate::seqparse::mentions_table_only(sql);
    let mut p = if operators || identity_changes || table_only {
        let mut tokens = sqlparser::tokenizer::Tokenizer::new(&PostgreSqlDialect {}, sql)
            .tokenize_with_location()
            .map_err(|e| syntax(e.into()))?;
        if operators {
            tokens = crate::seqparse::builtin_operators_before_any(tokens);
        }
        if identity_changes {
            tokens = crate::seqparse::identity_changes(tokens)?;
        }
        if table_only {
            tokens = crate::seqparse::query_table_only(tokens);
        }
        p.with_tokens_with_locations(tokens)
    } else {
        p.try_with_sql(sql).map_err(syntax)?
    };
    let identity = crate::seqparse::mentions_identity(sql);
    let power = crate::precedence::writes_power(sql);
    // sqlparser's statement loop, with COPY read as PostgreSQL's grammar has it (copyparse).
    let mut stmts = Vec::new();
    let mut expecting_delimiter = false;
    loop {
        while p.consume_token(&Token::SemiColon) {
            expecting_delimiter = false;
        }
        if p.peek_token_ref().token == Token::EOF {
            return Ok(stmts);
        }
        if expecting_delimiter {
            return Err(syntax(crate::copyparse::expected(&p, "end of statement")));
        }
        let is_move = matches!(&p.peek_token_ref().token,
            Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("move"));
        let stmt = if p.parse_keyword(Keyword::COPY) {
            crate::copyparse::parse_copy(&mut p, syntax)?
        } else if let Some(stmt) = multi_word_setting(&mut p) {
            stmt
        } else if ends_and_chains(&p) {
            // sqlparser reads `AND CHAIN` and `AND NO CHAIN` alike: refused, never committed
            // without the chained transaction.
            return Err(SqlError::feature(
                "COMMIT AND CHAIN / ROLLBACK AND CHAIN (commit, then BEGIN)",
            ));
        } else if is_move || p.parse_keyword(Keyword::FETCH) {
            if is_move {
                p.next_token();
            }
            crate::cursor::parse_fetch(&mut p, is_move, syntax)?
        } else if crate::seqparse::at_alter_sequence(&p) {
            crate::seqparse::parse_alter_sequence(&mut p, syntax)?
        } else if matches!(&p.peek_token_ref().token,
            Token::Word(w) if w.quote_style.is_none() && w.keyword == Keyword::TABLE)
        {
            // `TABLE name [ORDER BY …]`, a query of its own (sqlparser reads it only inside one).
            Statement::Query(p.parse_query().map_err(syntax)?)
        } else if at_ctas_with_names(&p) {
            parse_ctas_with_names(&mut p, syntax)?
        } else if crate::maintenance::at_maintenance(&p) {
            crate::maintenance::parse_maintenance(&mut p, syntax)?
        } else if at_drop_index_concurrently(&p) {
            parse_drop_index_concurrently(&mut p, syntax)?
        } else if crate::comment::at_comment_on_constraint(&p) {
            crate::comment::parse_comment_on_constraint(&mut p, syntax)?
        } else if let Some(e) = crate::comment::unquoted_comment_text(&p) {
            return Err(e);
        } else if let Some(stmt) = identity
            .then(|| crate::seqparse::parse_with_sequence_names(&mut p, syntax))
            .transpose()?
            .flatten()
        {
            stmt
        } else {
            p.parse_statement().map_err(syntax)?
        };
        let mut stmt = crate::depth::check(stmt)?;
        if power {
            crate::precedence::regroup_signs(&mut stmt);
        }
        stmts.push(stmt);
        expecting_delimiter = true;
    }
}

/// Where a `CREATE [TEMP | TEMPORARY | UNLOGGED] TABLE [IF NOT EXISTS] name (a, b, …) AS …`
/// starts, the parser at `CREATE`. sqlparser reads a column list only with types, so this
/// form of CREATE TABLE AS is read here ([`parse_ctas_with_names`]).
fn at_ctas_with_names(p: &Parser<'_>) -> bool {
    let word = |n: usize, w: &str| {
        matches!(&p.peek_nth_token_ref(n).token,
            Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
    };
    if !word(0, "create") {
        return false;
    }
    let mut n = 1;
    if ["temp", "temporary", "unlogged"].iter().any(|w| word(n, w)) {
        n += 1;
    }
    if !word(n, "table") {
        return false;
    }
    n += 1;
    if word(n, "if") && word(n + 1, "not") && word(n + 2, "exists") {
        n += 3;
    }
    // The table's name: words joined by dots.
    loop {
        if !matches!(p.peek_nth_token_ref(n).token, Token::Word(_)) {
            return false;
        }
        n += 1;
        if p.peek_nth_token_ref(n).token != Token::Period {
            break;
        }
        n += 1;
    }
    if p.peek_nth_token_ref(n).token != Token::LParen {
        return false;
    }
    n += 1;
    // Names only (a word then `,` or `)`), then AS.
    loop {
        if !matches!(p.peek_nth_token_ref(n).token, Token::Word(_)) {
            return false;
        }
        n += 1;
        match p.peek_nth_token_ref(n).token {
            Token::Comma => n += 1,
            Token::RParen => break,
            _ => return false,
        }
    }
    n += 1;
    if word(n, "on") && word(n + 1, "commit") {
        if word(n + 2, "drop") {
            n += 3;
        } else if ["delete", "preserve"].iter().any(|w| word(n + 2, w)) && word(n + 3, "rows") {
            n += 4;
        } else {
            // Not an action: the parser's error names the word.
            return true;
        }
    }
    word(n, "as")
}

/// Reads the CREATE TABLE AS [`at_ctas_with_names`] found.
fn parse_ctas_with_names(
    p: &mut Parser<'_>,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<Statement, SqlError> {
    p.next_token(); // CREATE
    let temporary = p
        .parse_one_of_keywords(&[Keyword::TEMP, Keyword::TEMPORARY])
        .is_some();
    let _ = p.parse_keyword(Keyword::UNLOGGED);
    p.expect_keyword_is(Keyword::TABLE).map_err(syntax)?;
    let if_not_exists = p.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    let name = p.parse_object_name(false).map_err(syntax)?;
    p.expect_token(&Token::LParen).map_err(syntax)?;
    let mut columns = Vec::new();
    loop {
        columns.push(ast::ColumnDef {
            name: p.parse_identifier().map_err(syntax)?,
            data_type: ast::DataType::Unspecified,
            options: Vec::new(),
        });
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    p.expect_token(&Token::RParen).map_err(syntax)?;
    let on_commit = if p.parse_keywords(&[Keyword::ON, Keyword::COMMIT]) {
        Some(if p.parse_keyword(Keyword::DROP) {
            ast::OnCommit::Drop
        } else if p.parse_keywords(&[Keyword::DELETE, Keyword::ROWS]) {
            ast::OnCommit::DeleteRows
        } else {
            p.expect_keywords(&[Keyword::PRESERVE, Keyword::ROWS])
                .map_err(syntax)?;
            ast::OnCommit::PreserveRows
        })
    } else {
        None
    };
    p.expect_keyword_is(Keyword::AS).map_err(syntax)?;
    let query = p.parse_query().map_err(syntax)?;
    let with_data = if p.parse_keywords(&[Keyword::WITH, Keyword::NO, Keyword::DATA]) {
        Some(ast::WithData {
            data: false,
            statistics: None,
        })
    } else if p.parse_keywords(&[Keyword::WITH, Keyword::DATA]) {
        Some(ast::WithData {
            data: true,
            statistics: None,
        })
    } else {
        None
    };
    Ok(Statement::CreateTable(
        ast::helpers::stmt_create_table::CreateTableBuilder::new(name)
            .temporary(temporary)
            .if_not_exists(if_not_exists)
            .on_commit(on_commit)
            .columns(columns)
            .query(Some(query))
            .with_data(with_data)
            .build(),
    ))
}

/// `SHOW SESSION AUTHORIZATION`, `RESET TIME ZONE`, `RESET TRANSACTION ISOLATION LEVEL`,
/// `RESET SESSION AUTHORIZATION`: PostgreSQL's grammar names these settings in several words,
/// which sqlparser reads otherwise (SHOW takes SESSION as MySQL's modifier; RESET takes one
/// name). Read here as the one-word name's statement, as is `SHOW session` (and the other
/// words sqlparser's SHOW swallows); `None` leaves the parser where it was.
fn multi_word_setting(p: &mut Parser<'_>) -> Option<Statement> {
    let word = |n: usize| match &p.peek_nth_token_ref(n).token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
        _ => None,
    };
    let verb = word(0)?;
    if verb != "show" && verb != "reset" {
        return None;
    }
    let mut words = Vec::new();
    let mut n = 1;
    while let Some(w) = word(n) {
        words.push(w);
        n += 1;
    }
    if !matches!(p.peek_nth_token_ref(n).token, Token::EOF | Token::SemiColon) {
        return None;
    }
    // One word SHOW would take as a modifier of MySQL's or Snowflake's SHOW: a name here.
    let modifier = ["session", "global", "terse", "extended", "full", "external"];
    let name = match words.as_slice() {
        [one] if verb == "show" && modifier.contains(&one.as_str()) => one.as_str(),
        [_, _, ..] => crate::settings::multi_word_name(&words.join(" "))?,
        _ => return None,
    };
    for _ in 0..n {
        p.next_token();
    }
    let ident = ast::Ident::new(name);
    Some(if verb == "show" {
        Statement::ShowVariable {
            variable: vec![ident],
        }
    } else {
        Statement::Reset(ast::ResetStatement {
            reset: ast::Reset::ConfigurationParameter(ast::ObjectName::from(vec![ident])),
        })
    })
}

/// A transaction end with `AND CHAIN` (not `AND NO CHAIN`) coming up.
fn ends_and_chains(p: &Parser<'_>) -> bool {
    let word = |n: usize| match &p.peek_nth_token_ref(n).token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_lowercase()),
        _ => None,
    };
    if !matches!(
        word(0).as_deref(),
        Some("commit" | "end" | "rollback" | "abort")
    ) {
        return false;
    }
    let mut n = 1;
    if matches!(word(n).as_deref(), Some("work" | "transaction")) {
        n += 1;
    }
    word(n).as_deref() == Some("and") && word(n + 1).as_deref() == Some("chain")
}

/// The limits [`parse`] checks before parsing: the text's length and its bracket depth
/// (counted over every byte, literals included, as a cheap bound).
pub fn check_limits(sql: &str) -> Result<(), SqlError> {
    if sql.len() > MAX_STATEMENT_BYTES {
        return Err(SqlError::ProgramLimit {
            message: format!("statement is too long ({} bytes)", sql.len()),
        });
    }
    let depth = sql.bytes().fold((0usize, 0usize), |(d, m), c| match c {
        b'(' => (d + 1, m.max(d + 1)),
        b')' => (d.saturating_sub(1), m),
        _ => (d, m),
    });
    if depth.1 > MAX_NESTING {
        return Err(SqlError::ProgramLimit {
            message: "statement is too deeply nested".into(),
        });
    }
    // PostgreSQL's texts cannot hold NUL (the wire protocol ends strings with it); the
    // parser's NUL-marked names (seqparse, comment) rely on that whatever the host.
    if sql.contains('\0') {
        return Err(SqlError::InvalidEncoding {
            bytes: "0x00".into(),
        });
    }
    Ok(())
}

fn syntax_message(raw: &str) -> String {
    // sqlparser: "sql parser error: Expected: ..., found: X at Line: 1, Column: 5"
    let body = raw.trim_start_matches("sql parser error: ");
    // sqlparser refuses a repeated sequence option itself; PostgreSQL's words for it.
    if body.ends_with(" specified more than once") {
        return "conflicting or redundant options".into();
    }
    match body.split_once("found: ") {
        Some((_, rest)) => {
            let tok = rest.split(" at Line").next().unwrap_or(rest).trim();
            if tok.eq_ignore_ascii_case("EOF") {
                "syntax error at end of input".into()
            } else {
                format!("syntax error at or near \"{tok}\"")
            }
        }
        None => format!("syntax error: {body}"),
    }
}

/// A parse error of `sql` as PostgreSQL words it, with its position noted
/// ([`crate::errpos`]): the token sqlparser stopped at, or the end of the input.
fn syntax_error(raw: &str, sql: &str) -> SqlError {
    let body = raw.trim_start_matches("sql parser error: ");
    let (text, at) = match body.rsplit_once(" at Line: ") {
        Some((text, place)) => {
            let at = place.split_once(", Column: ").and_then(|(l, c)| {
                Some(sqlparser::tokenizer::Location {
                    line: l.trim().parse().ok()?,
                    column: c.trim().trim_end_matches('.').parse().ok()?,
                })
            });
            (text, at)
        }
        None => (body, None),
    };
    // The rest of the text from the error's place, as PostgreSQL's lexer quotes it.
    let rest = || {
        let at = at?;
        let from = crate::errpos::char_position(sql, at)? as usize - 1;
        Some(sql.chars().skip(from).collect::<String>())
    };
    let unterminated =
        |what: &str| rest().map(|r| format!("unterminated {what} at or near \"{r}\""));
    use crate::errpos::{Spot, Target};
    let (message, spot) = if text.starts_with("Unterminated string literal")
        || text.starts_with("Unterminated encoded string literal")
    {
        match unterminated("quoted string") {
            Some(m) => (m, at.map(|at| Spot::at(at, ""))),
            None => (syntax_message(raw), None),
        }
    } else if text.starts_with("Expected close delimiter '\"'") {
        match unterminated("quoted identifier") {
            Some(m) => (m, at.map(|at| Spot::at(at, "\""))),
            None => (syntax_message(raw), None),
        }
    } else if text.ends_with("found: EOF") {
        let end = Spot::at(crate::errpos::END_OF_INPUT, "");
        (syntax_message(raw), Some(end))
    } else if let Some((_, found)) = text.split_once("found: ") {
        // The token the message names, where sqlparser says or just before.
        let spot = at.map(|at| Spot::find(at, Target::AtOrBefore, found.trim()));
        (syntax_message(raw), spot)
    } else {
        (syntax_message(raw), None)
    };
    let e = SqlError::Syntax { message };
    if let Some(spot) = spot {
        crate::errpos::note_parse(&e, spot);
    }
    e
}

/// The setting SHOW names (`SHOW TIME ZONE` → "time zone").
fn show_name(variable: &[ast::Ident]) -> String {
    let words = variable
        .iter()
        .map(|i| i.value.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    match crate::settings::multi_word_name(&words) {
        Some(name) if variable.len() > 1 => name.to_string(),
        // A custom placeholder's dotted name (`SHOW myapp.x`).
        _ if variable.len() > 1 => variable
            .iter()
            .map(|i| i.value.as_str())
            .collect::<Vec<_>>()
            .join("."),
        _ => words,
    }
}

pub(crate) fn tid_of(tuple: u64) -> Value {
    let n = tuple.max(1) - 1;
    Value::Tid(
        (n / TUPLES_PER_PAGE) as u32,
        (n % TUPLES_PER_PAGE + 1) as u16,
    )
}

fn tuple_of(tid: &Value) -> Option<u64> {
    match tid {
        Value::Tid(b, o) if *o >= 1 => Some(*b as u64 * TUPLES_PER_PAGE + (*o as u64 - 1) + 1),
        _ => None,
    }
}

/// Decodes a stored row into column values (+ ctid), padding columns added later with NULL.
/// The general path; `rowdecode::decode_row` reads committed rows straight from their bytes.
pub(crate) fn row_values(t: &Table, row: pb::Row) -> Result<Vec<Value>, crate::error::DecodeError> {
    let mut out = Vec::with_capacity(t.columns.len() + 1);
    let mut values = row.values.into_iter();
    for c in &t.columns {
        out.push(match values.next() {
            Some(d) => crate::catalog::from_datum_owned(d, c.ty)?,
            None => Value::Null,
        });
    }
    out.push(tid_of(row.tuple));
    Ok(out)
}

/// Visible rows of a table for a reader: committed at `cx.at`, overlaid with own writes.
pub fn visible_rows(
    cx: &ReadCx<'_>,
    t: &Table,
) -> Result<Vec<crate::engine::VisibleRow>, SqlError> {
    let prefix = keys::table_prefix(t.id);
    visible_rows_in(cx, &prefix, &keys::prefix_end(&prefix))
}

/// Visible rows of a table whose logical key is in `[start, end)` (the table's own prefix
/// range: every row).
fn visible_rows_in(
    cx: &ReadCx<'_>,
    start: &[u8],
    end: &[u8],
) -> Result<Vec<crate::engine::VisibleRow>, SqlError> {
    let committed = scan_visible(cx.kv, start, end, cx.at)?;
    let mut out: Vec<crate::engine::VisibleRow> = Vec::with_capacity(committed.len());
    let overlay = cx
        .pending
        .map(|p| p.writes.range(start.to_vec()..end.to_vec()));
    let mut own: std::collections::BTreeMap<&Vec<u8>, &RowWrite> =
        std::collections::BTreeMap::new();
    if let Some(ov) = overlay {
        for (k, w) in ov {
            own.insert(k, w);
        }
    }
    for (lk, env, seq) in committed {
        if own.contains_key(&lk) {
            continue;
        }
        if let Envelope::Row(r) = env {
            out.push((lk, r, Some(seq)));
        }
    }
    for (lk, w) in own {
        if let Some(r) = &w.row {
            out.push((lk.clone(), r.clone(), None));
        }
    }
    if cx.pending.is_some() {
        out.sort_by(|a, b| a.0.cmp(&b.0));
    }
    Ok(out)
}

/// An encoded key range `[start, end)`.
pub type KeyRangeBytes = (Vec<u8>, Vec<u8>);

/// Visible rows of a table in encoded key ranges: row-key ranges (a pushed-down primary-key
/// condition) or index-entry ranges (a condition on an index's leading columns), told apart
/// by their tag. `None`: every row.
///
/// Rows read through an index come with their row key only when `with_keys` (UPDATE and
/// DELETE write by it); otherwise the key is computed only to overlay this transaction's own
/// writes, and left empty.
pub fn table_versions(
    cx: &ReadCx<'_>,
    t: &Table,
    key_ranges: Option<&[KeyRangeBytes]>,
    with_keys: bool,
) -> Result<Vec<crate::engine::VisibleRow>, SqlError> {
    let Some(ranges) = key_ranges else {
        return visible_rows(cx, t);
    };
    let mut rows = Vec::new();
    if ranges.first().and_then(|(start, _)| start.first()) != Some(&keys::TAG_INDEX) {
        for (start, end) in ranges {
            rows.extend(visible_rows_in(cx, start, end)?);
        }
        return Ok(rows);
    }
    // Index entries are copies of the committed rows; this transaction's own writes to the
    // table replace them (all of them: the caller's filter decides which match).
    let table = keys::table_prefix(t.id);
    let own: std::collections::BTreeMap<&Vec<u8>, &RowWrite> = cx
        .pending
        .map(|p| {
            p.writes
                .range(table.clone()..keys::prefix_end(&table))
                .collect()
        })
        .unwrap_or_default();
    for (start, end) in ranges {
        for (_, env, seq) in scan_visible(cx.kv, start, end, cx.at)? {
            if let Envelope::Row(r) = env {
                if own.is_empty() && !with_keys {
                    rows.push((Vec::new(), r, Some(seq)));
                    continue;
                }
                let lk = stored_row_key(t, &r)?;
                if !own.contains_key(&lk) {
                    rows.push((lk, r, Some(seq)));
                }
            }
        }
    }
    for (lk, w) in own {
        if let Some(r) = &w.row {
            rows.push((lk.clone(), r.clone(), None));
        }
    }
    Ok(rows)
}

/// Rows of a table as value vectors (columns + ctid), from every row or only those under
/// `key_ranges` (see [`table_versions`]); with `used`, columns outside it are NULL.
pub fn table_rows(
    cx: &ReadCx<'_>,
    t: &TableRef,
    key_ranges: Option<&[KeyRangeBytes]>,
    used: Option<&[bool]>,
) -> Result<Vec<Vec<Value>>, SqlError> {
    table_rows_where(cx, t, key_ranges, used, &mut |_| Ok(true))
}

/// The visible row of `t` with the greatest key at `cx.at` — the row holding `max` of the
/// table's first primary-key column — read backwards from the end of the table, so the
/// answer costs a few keys however many rows the table has. `None`: no visible row. Own
/// uncommitted writes are not looked at: callers use it only when the transaction has none
/// for `t`.
pub fn last_row(cx: &ReadCx<'_>, t: &TableRef) -> Result<Option<Vec<Value>>, SqlError> {
    const BATCH: usize = 64;
    let prefix = keys::table_prefix(t.id);
    let mut end = keys::prefix_end(&prefix);
    // A logical key's versions arrive oldest first (they are stored newest first); the
    // newest one at or before `cx.at` decides whether the row is visible.
    let mut current: Vec<u8> = Vec::new();
    let mut visible: Option<(u64, Vec<u8>)> = None;
    let live = |value: Option<(u64, Vec<u8>)>| -> Result<Option<Vec<Value>>, SqlError> {
        match value.map(|(_, v)| Envelope::decode(&v)).transpose()? {
            Some(Envelope::Row(r)) => Ok(Some(row_values(t, r)?)),
            _ => Ok(None),
        }
    };
    loop {
        let batch = cx.kv.scan_rev(&prefix, &end, BATCH)?;
        for (raw, value) in &batch {
            cx.tick()?;
            let (logical, seq) = keys::split_version(raw)?;
            if logical != current.as_slice() {
                if let Some(row) = live(visible.take())? {
                    return Ok(Some(row));
                }
                current = logical.to_vec();
            }
            if seq <= cx.at && visible.as_ref().is_none_or(|(s, _)| seq > *s) {
                visible = Some((seq, value.to_vec()));
            }
        }
        match batch.last() {
            Some((k, _)) if batch.len() == BATCH => end = k.to_vec(),
            _ => return live(visible.take()),
        }
    }
}

/// The rows of [`table_rows`] for which `keep` holds, tested as each row is decoded. `used`
/// (one flag per column, then the ctid's) names the columns the caller reads: the others are
/// NULL and never decoded.
pub fn table_rows_where(
    cx: &ReadCx<'_>,
    t: &TableRef,
    key_ranges: Option<&[KeyRangeBytes]>,
    used: Option<&[bool]>,
    keep: &mut dyn FnMut(&[Value]) -> Result<bool, SqlError>,
) -> Result<Vec<Vec<Value>>, SqlError> {
    // PostgreSQL returns an unordered scan in heap order: insertion order, with every updated
    // row moved to the end. Tuple numbers are assigned the same way, so sorting by them
    // reproduces the order clients (and the differential replay) observe.
    let mut kept: Vec<(u64, Vec<Value>)> = Vec::new();
    let committed_only = visit_committed_rows(cx, t, key_ranges, used, &mut |tuple, row| {
        if keep(row.values())? {
            kept.push((tuple, row.into_values(used)));
        }
        Ok(())
    })?;
    if !committed_only {
        for (_, r, _) in table_versions(cx, t, key_ranges, false)? {
            cx.tick()?;
            let tuple = r.tuple;
            let values = row_values(t, r)?;
            if keep(&values)? {
                kept.push((tuple, values));
            }
        }
    }
    kept.sort_by_key(|(tuple, _)| *tuple);
    Ok(kept.into_iter().map(|(_, values)| values).collect())
}

/// A visible row's values as [`visit_committed_rows`] hands them over.
pub enum ScannedRow<'r> {
    /// Decoded for this scan (columns outside `used` NULL).
    Decoded(Vec<Value>),
    /// Kept by the scan cache, with at least the `used` columns decoded.
    Kept(&'r [Value]),
}

impl ScannedRow<'_> {
    pub fn values(&self) -> &[Value] {
        match self {
            ScannedRow::Decoded(v) => v,
            ScannedRow::Kept(v) => v,
        }
    }

    /// The values to keep, with the columns outside `used` NULL.
    pub fn into_values(self, used: Option<&[bool]>) -> Vec<Value> {
        match self {
            ScannedRow::Decoded(v) => v,
            ScannedRow::Kept(v) => only_used(v, used),
        }
    }
}

/// Calls `visit` with the tuple number and values of every visible committed row under
/// `key_ranges` (the whole table when `None`), in key order per range, decoding only the
/// `used` columns or taking the range's rows from the scan cache. Returns false, visiting
/// nothing, when this transaction has written to the table: its own writes are not here.
pub fn visit_committed_rows(
    cx: &ReadCx<'_>,
    t: &TableRef,
    key_ranges: Option<&[KeyRangeBytes]>,
    used: Option<&[bool]>,
    visit: &mut dyn FnMut(u64, ScannedRow<'_>) -> Result<(), SqlError>,
) -> Result<bool, SqlError> {
    if has_own_writes(cx, t) {
        return Ok(false);
    }
    let prefix = keys::table_prefix(t.id);
    let whole = [(prefix.clone(), keys::prefix_end(&prefix))];
    for (p, end) in key_ranges.unwrap_or(&whole) {
        let newest = cx.at == cx.st.latest;
        if let Some(rows) = kept_rows(cx, p, end, used) {
            for (tuple, values) in rows.iter() {
                cx.tick()?;
                visit(*tuple, ScannedRow::Kept(values))?;
            }
            continue;
        }
        // At the newest commit point the range's rows are collected for the scan cache until
        // they outgrow what it keeps; from then on they are visited as they come.
        let mut collecting = newest;
        let mut all: Vec<(u64, Vec<Value>)> = Vec::new();
        let mut bytes = 0;
        visit_visible(cx.kv, p, end, cx.at, &mut |_, value, _| {
            let Some(payload) = Envelope::row_payload(value)? else {
                return Ok(());
            };
            cx.tick()?;
            let (tuple, values) = crate::rowdecode::decode_row(payload, t, used)?;
            if collecting {
                bytes += scancache::row_bytes(&values);
                all.push((tuple, values));
                if bytes > scancache::SCAN_CACHE_RANGE_BYTES {
                    collecting = false;
                    // Taken, not drained: the collected vector's memory goes now.
                    for (tuple, values) in std::mem::take(&mut all) {
                        visit(tuple, ScannedRow::Decoded(values))?;
                    }
                }
                Ok(())
            } else {
                visit(tuple, ScannedRow::Decoded(values))
            }
        })?;
        if collecting && all.len() >= scancache::SCAN_CACHE_MIN_ROWS {
            let all = std::sync::Arc::new(all);
            for (tuple, values) in all.iter() {
                visit(*tuple, ScannedRow::Kept(values))?;
            }
            cx.st
                .scans
                .borrow_mut()
                .put(cx.at, (p, end), used, all, bytes);
        } else {
            for (tuple, values) in all {
                visit(tuple, ScannedRow::Decoded(values))?;
            }
        }
    }
    Ok(true)
}

/// Whether this transaction has written to `t` (its reads of `t` must overlay those writes).
pub fn has_own_writes(cx: &ReadCx<'_>, t: &TableRef) -> bool {
    let table = keys::table_prefix(t.id);
    cx.pending.is_some_and(|p| {
        p.writes
            .range(table.clone()..keys::prefix_end(&table))
            .next()
            .is_some()
    })
}

/// The scan cache's rows of `[start, end)` when this statement reads at the newest commit
/// point and they hold the `used` columns (the read is noted as one of the range).
pub fn kept_rows(
    cx: &ReadCx<'_>,
    start: &[u8],
    end: &[u8],
    used: Option<&[bool]>,
) -> Option<scancache::ScannedRows> {
    if cx.at != cx.st.latest {
        return None;
    }
    let rows = cx.st.scans.borrow_mut().get(cx.at, start, end, used)?;
    cx.kv.reading(start, end);
    Some(rows)
}

/// A kept row's values with the columns outside `used` NULL (the ctid is last; see
/// [`table_rows_where`]).
fn only_used(values: &[Value], used: Option<&[bool]>) -> Vec<Value> {
    let width = crate::rowdecode::used_width(used, values.len());
    match used {
        None => values.to_vec(),
        Some(u) => values[..width]
            .iter()
            .enumerate()
            .map(|(i, v)| {
                if u.get(i).copied().unwrap_or(true) {
                    v.clone()
                } else {
                    Value::Null
                }
            })
            .collect(),
    }
}

pub fn virtual_rows(
    cx: &ReadCx<'_>,
    schema: Option<&str>,
    name: &str,
    only: Option<&crate::pgcatalog::Only<'_>>,
    columns: Option<&[bool]>,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let tables = cx.all_tables();
    let schemas = cx.all_schemas();
    let counts = |_id: u32| 0u64;
    let view = crate::pgcatalog::CatalogView {
        schemas: &schemas,
        tables: &tables,
        database: cx.database,
        user: cx.user,
        row_counts: &counts,
        settings: Some(cx.settings),
        txid: cx.txid(),
        cursors: &|| cx.cursors.infos(cx.txn_serial),
        activity: &|| cx.sessions.rows(),
        locks: &|| cx.sessions.shown_locks(&cx.st.locks.borrow()),
        now: cx.now,
        sequence_value: &|t| {
            let def = t.sequence.as_deref()?;
            Some(cx.st.sequences.borrow().value(t, def))
        },
        view_reads: &|v| crate::view::rule_reads(cx, v),
    };
    crate::pgcatalog::build_only(schema, name, &view, only, columns)
        .map(|v| v.rows)
        .ok_or_else(|| SqlError::UndefinedTable {
            name: name.to_string(),
        })
}

impl<'a> Cx<'a> {
    pub(crate) fn ensure_txn(&mut self) {
        if self.sess.txn.is_none() {
            let (isolation, read_only) = self.settings().transaction_defaults();
            let serial = self.sess.take_txn_serial();
            self.sess.txn = Some(Txn {
                explicit: false,
                isolation,
                read_only,
                snapshot: None,
                start_time: self.st.now,
                failed: false,
                pending: Default::default(),
                settings: Default::default(),
                serial,
                savepoints: Vec::new(),
                queried: false,
            });
        }
    }

    /// The session's settings as its current statement sees them.
    pub(crate) fn settings(&self) -> crate::settings::View<'_> {
        crate::settings::View {
            sess: &self.sess.settings,
            txn: self.sess.txn.as_ref(),
            user: &self.sess.user,
            hot_standby: self.st.read_only,
        }
    }

    /// The commit point this statement reads at (fixing the snapshot of a repeatable-read
    /// transaction at its first statement, as PostgreSQL does).
    pub(crate) fn read_point(&mut self) -> u64 {
        let latest = self.st.latest;
        match self.sess.txn.as_mut() {
            Some(t) => {
                t.queried = true;
                match t.isolation {
                    Isolation::ReadCommitted => latest,
                    _ => *t.snapshot.get_or_insert(latest),
                }
            }
            None => latest,
        }
    }

    /// A pinned snapshot that excision has reached since it was taken reads a partial history:
    /// refuse it (only a replica can get here; the writer refuses to excise past its own open
    /// transactions).
    pub(crate) fn check_snapshot_age(&self) -> Result<(), SqlError> {
        match self.sess.txn.as_ref().and_then(|t| t.snapshot) {
            Some(at) if at < self.st.excised_below => Err(SqlError::SnapshotTooOld {
                commit_seq: at,
                excised_below: self.st.excised_below,
            }),
            _ => Ok(()),
        }
    }

    /// The session's zone and the transaction's time (see [`crate::tz::enter`]), and its
    /// `quote_all_identifiers` (see [`crate::pgcatalog::enter_quote_all`]), for the
    /// statement about to run.
    pub(crate) fn enter_statement_settings(&self) -> Result<StatementSettings, SqlError> {
        let settings = self.settings();
        Ok(StatementSettings {
            _zone: crate::tz::enter(settings.time_zone()?, Some(self.txn_now())),
            _quote_all: crate::pgcatalog::enter_quote_all(settings.quote_all_identifiers()),
        })
    }

    /// The transaction's start (`now()`), or the statement's when none has begun.
    fn txn_now(&self) -> i64 {
        self.sess
            .txn
            .as_ref()
            .map(|t| t.start_time)
            .unwrap_or(self.st.now)
    }

    pub(crate) fn reader(&self, at: u64) -> ReadCx<'_> {
        let now = self.txn_now();
        ReadCx {
            kv: self.kv,
            st: self.st,
            pending: self.sess.txn.as_ref().map(|t| &t.pending),
            at,
            user: &self.sess.user,
            database: &self.sess.database,
            now,
            settings: self.settings(),
            ticks: std::cell::Cell::new(0),
            budget: crate::mem::Budget::start(self.st.statement_memory_limit),
            catalog: Default::default(),
            cursors: &self.sess.cursors,
            sessions: crate::activity::Sessions {
                me: &*self.sess,
                others: self.others,
                latest: self.st.latest,
            },
            txn_serial: self.sess.txn.as_ref().map(|t| t.serial),
            prng: &self.sess.prng,
            seqs: &self.sess.seqs,
            read_only: if self.st.read_only || self.sess.settings.read_only_role {
                Some(true)
            } else {
                self.sess.txn.as_ref().map(|t| t.read_only)
            },
        }
    }

    pub(crate) fn check_writable(&self, what: &str) -> Result<(), SqlError> {
        // A read replica refuses writes like a PostgreSQL hot standby (25006).
        // Before its transaction starts, a statement's is the session's default mode.
        let read_only_txn = match self.sess.txn.as_ref() {
            Some(t) => t.read_only,
            None => self.settings().transaction_defaults().1,
        };
        if self.st.read_only || self.sess.settings.read_only_role || read_only_txn {
            return Err(SqlError::ReadOnlyTransaction {
                what: what.to_string(),
            });
        }
        Ok(())
    }

    /// Runs one SELECT and returns its rows (columns only, no ctid), at commit `at` or at the
    /// statement's own read point. Used by the lifecycle planner.
    pub(crate) fn select_values(
        &mut self,
        sql: &str,
        at: Option<u64>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let stmts = parse(sql)?;
        let [Statement::Query(q)] = stmts.as_slice() else {
            return Err(SqlError::internal(format!("not one query: {sql}")));
        };
        let at = match at {
            Some(a) => a,
            None => self.read_point(),
        };
        let rcx = self.reader(at);
        let mut binder = Binder::new(&rcx);
        let bq = binder.bind_query(q, None)?;
        Executor::new(&rcx).run_query(&bq, None)
    }

    /// Executes one generated statement inside the session's current transaction.
    pub(crate) fn execute_sql(&mut self, sql: &str) -> Result<Output, SqlError> {
        let stmts = parse(sql)?;
        let [stmt] = stmts.as_slice() else {
            return Err(SqlError::internal(format!("not one statement: {sql}")));
        };
        match execute(self, stmt)? {
            Step::Output(o) => Ok(o),
            Step::Commit { .. } => Err(SqlError::internal(
                "generated statement ended the transaction",
            )),
        }
    }

    pub(crate) fn pending(&mut self) -> Result<&mut crate::txn::PendingCatalogTxn, SqlError> {
        self.ensure_txn();
        self.sess
            .txn
            .as_mut()
            .map(|t| &mut t.pending)
            .ok_or_else(|| SqlError::internal("no transaction"))
    }

    fn alloc_tuple(&mut self, table_id: u32) -> Result<u64, SqlError> {
        let c = self.st.tuple_counters.entry(table_id).or_insert(0);
        *c += 1;
        let n = *c;
        let p = self.pending()?;
        p.tuple_counters.insert(table_id, n);
        Ok(n)
    }
}

/// The session settings a statement reads through thread-locals, in force until dropped.
pub(crate) struct StatementSettings {
    _zone: crate::tz::Entered,
    _quote_all: crate::pgcatalog::QuoteAllEntered,
}

pub fn execute(cx: &mut Cx<'_>, stmt: &Statement) -> Result<Step, SqlError> {
    let _zone = cx.enter_statement_settings()?;
    let failed = cx.sess.txn.as_ref().is_some_and(|t| t.failed);
    let explicit = cx.sess.txn.as_ref().is_some_and(|t| t.explicit);
    match stmt {
        Statement::Commit { .. }
        | Statement::Rollback {
            savepoint: None, ..
        } if !explicit => {
            cx.sess.notice(Notice::NoTransaction);
        }
        _ => {}
    }
    match stmt {
        Statement::Commit { .. } => {
            return Ok(Step::Commit {
                tag: Some("COMMIT".into()),
            })
        }
        Statement::Rollback {
            savepoint: None, ..
        } => {
            cx.sess.end_transaction(false);
            return Ok(Step::Output(Output::Command {
                tag: "ROLLBACK".into(),
            }));
        }
        // The one statement besides a transaction end a failed block takes.
        Statement::Rollback {
            savepoint: Some(name),
            ..
        } => return rollback_to_savepoint(cx, name).map(Step::Output),
        _ if failed => return Err(SqlError::InFailedTransaction),
        _ => cx.check_snapshot_age()?,
    }
    let out = match stmt {
        Statement::StartTransaction {
            modes, begin: word, ..
        } => begin(cx, modes, if *word { "BEGIN" } else { "START TRANSACTION" })?,
        Statement::Explain {
            statement,
            analyze,
            format,
            options,
            ..
        } => {
            explain_options(format.as_ref(), options.as_deref())?;
            explain(cx, statement, *analyze)?
        }
        Statement::Query(q) if select_into(q).is_some() => select_into_table(cx, q)?,
        Statement::Query(q) => match crate::lifecycle::recognize(q) {
            Some(call) => {
                let out = crate::lifecycle::call(cx, &call.name, &call.args)?;
                match &call.columns {
                    Some(cols) => crate::lifecycle::project(out, cols)?,
                    None => out,
                }
            }
            None => query_statement(cx, q)?,
        },
        Statement::Insert(ins) => insert(cx, ins, None)?,
        Statement::Update(u) => update(cx, u, None)?,
        Statement::Delete(d) => delete(cx, d, None)?,
        Statement::CreateTable(ct) => create_table(cx, ct)?,
        Statement::Analyze(_) => maintenance(cx, stmt)?,
        Statement::Drop {
            object_type: ast::ObjectType::Table,
            if_exists,
            names,
            cascade,
            ..
        } => drop_tables(cx, names, *if_exists, *cascade)?,
        Statement::Drop {
            object_type: ast::ObjectType::Sequence,
            if_exists,
            names,
            cascade,
            ..
        } => drop_sequences(cx, names, *if_exists, *cascade)?,
        Statement::Drop {
            object_type: ast::ObjectType::View,
            if_exists,
            names,
            cascade,
            ..
        } => crate::view::drop_views(cx, names, *if_exists, *cascade)?,
        Statement::Drop {
            object_type: ast::ObjectType::Index,
            if_exists,
            names,
            cascade,
            purge,
            table: None,
            ..
        } => drop_indexes(cx, names, *if_exists, *cascade, *purge)?,
        Statement::CreateIndex(ci) => create_index(cx, ci)?,
        Statement::AlterIndex { name, operation } => alter_index(cx, name, operation)?,
        Statement::CreateView(cv) => crate::view::create_view(cx, cv)?,
        Statement::AlterView(av) => crate::view::alter_view(cx, av)?,
        Statement::CreateSequence {
            temporary,
            if_not_exists,
            name,
            sequence_options,
        } => create_sequence(cx, name, *if_not_exists, *temporary, sequence_options)?,
        Statement::CreateSchema {
            schema_name,
            if_not_exists,
            ..
        } => create_schema(cx, schema_name, *if_not_exists)?,
        Statement::Drop {
            object_type: ast::ObjectType::Schema,
            if_exists,
            names,
            cascade,
            ..
        } => drop_schemas(cx, names, *if_exists, *cascade)?,
        Statement::AlterTable(at) if crate::seqparse::is_alter_sequence(at) => {
            let before = find_table(cx, &object_name(&at.name))?;
            let out = alter_sequence(cx, at)?;
            if let Some(seq) = before {
                let change = crate::view::Change::of_alter(&at.operations);
                if change.renamed_relation {
                    crate::view::follow_renamed(cx, &seq)?;
                }
                crate::view::check_dependent_views(cx, &seq, &change)?;
            }
            out
        }
        Statement::AlterTable(at) => alter_table(cx, at)?,
        Statement::AlterSchema(a) => alter_schema(cx, a)?,
        Statement::Comment {
            object_type,
            object_name,
            comment,
            if_exists,
        } => crate::comment::comment_on(
            cx,
            object_type,
            object_name,
            comment.as_deref(),
            *if_exists,
        )?,
        Statement::Lock(l) => lock_tables(cx, l)?,
        Statement::Prepare {
            name,
            data_types,
            statement,
        } => crate::prepared::prepare(cx, name, data_types, statement)?,
        Statement::Execute {
            name: Some(name),
            parameters,
            immediate: false,
            into,
            using,
            output: false,
            default: false,
            ..
        } if into.is_empty() && using.is_empty() => {
            return crate::prepared::execute(cx, name, parameters)
        }
        Statement::Deallocate { name, .. } => crate::prepared::deallocate(cx, name)?,
        Statement::Copy {
            source,
            to,
            target,
            options,
            legacy_options,
            ..
        } => copy(cx, source, *to, target, options, legacy_options)?,
        Statement::Declare { stmts, .. } => declare(cx, stmts)?,
        Statement::Truncate(tr) => truncate(cx, tr)?,
        Statement::Savepoint { name } => savepoint(cx, name)?,
        Statement::ReleaseSavepoint { name } => release_savepoint(cx, name)?,
        Statement::Fetch {
            name,
            direction,
            into,
            ..
        } => fetch(cx, name, direction, crate::cursor::is_move(into))?,
        Statement::Close { cursor } => {
            let txn = cx.sess.txn.as_ref().map(|t| t.serial);
            match cursor {
                ast::CloseCursor::All => {
                    cx.sess.cursors.close(None, txn)?;
                    Output::Command {
                        tag: "CLOSE CURSOR ALL".into(),
                    }
                }
                ast::CloseCursor::Specific { name } => {
                    cx.sess
                        .cursors
                        .close(Some(&crate::query::ident(name)), txn)?;
                    Output::Command {
                        tag: "CLOSE CURSOR".into(),
                    }
                }
            }
        }
        Statement::Discard { object_type } => {
            let all = matches!(object_type, ast::DiscardObject::ALL);
            if all && cx.sess.txn.as_ref().is_some_and(|t| t.explicit) {
                return Err(SqlError::ActiveTransaction {
                    message: "DISCARD ALL cannot run inside a transaction block".into(),
                });
            }
            if all {
                // DISCARD ALL includes RESET ALL, CLOSE ALL and DEALLOCATE ALL.
                crate::settings::reset(cx, None)?;
                cx.sess.cursors.close(None, None)?;
                cx.sess.prepared.clear();
                // And pg_advisory_unlock_all().
                cx.st.locks.get_mut().unlock_all(cx.sess.id);
            }
            if all || matches!(object_type, ast::DiscardObject::SEQUENCES) {
                // What currval and lastval remember (a pooler's next client starts without).
                let seqs = cx.sess.seqs.get_mut();
                seqs.current.clear();
                seqs.last_used = None;
            }
            // PLANS and TEMP: no cached plans, and temporary tables end with their
            // transaction.
            Output::Command {
                tag: format!("DISCARD {object_type}"),
            }
        }
        Statement::Set(set) => {
            crate::settings::set(cx, set)?;
            Output::Command { tag: "SET".into() }
        }
        Statement::Reset(r) => {
            let name = match &r.reset {
                ast::Reset::ALL => None,
                ast::Reset::SessionAuthorization => Some("session_authorization".to_string()),
                ast::Reset::ConfigurationParameter(n) => Some(n.to_string()),
            };
            crate::settings::reset(cx, name.as_deref())?;
            Output::Command {
                tag: "RESET".into(),
            }
        }
        Statement::ShowVariable { variable } if show_name(variable).eq_ignore_ascii_case("all") => {
            let rows = crate::settings::show_all(&cx.settings());
            Output::Rows {
                fields: ["name", "setting", "description"]
                    .into_iter()
                    .map(|c| ColMeta::expr(c, PgType::Text).field())
                    .collect(),
                rows: TextRows::try_from_rows(
                    rows.into_iter()
                        .map(|r| r.into_iter().map(Some).collect::<Vec<_>>()),
                )?,
                tag: "SHOW".into(),
            }
        }
        Statement::ShowVariable { variable } => {
            let (name, value) = cx.settings().show(&show_name(variable))?;
            let meta = ColMeta::expr(&name, PgType::Text);
            Output::Rows {
                fields: vec![meta.field()],
                rows: TextRows::try_from_rows([[Some(value)]])?,
                tag: "SHOW".into(),
            }
        }
        other => {
            let text = other.to_string();
            let words: Vec<&str> = text.split_whitespace().take(2).collect();
            return Err(SqlError::feature(format!("statement {}", words.join(" "))));
        }
    };
    // A statement that drew a sequence value commits, even a SELECT outside a block.
    if cx.sess.seqs.get_mut().touched {
        cx.ensure_txn();
    }
    Ok(Step::Output(out))
}

/// The open transaction block, for the savepoint statements (`what`), which PostgreSQL takes
/// only inside BEGIN … COMMIT.
fn block<'t>(cx: &'t mut Cx<'_>, what: &'static str) -> Result<&'t mut Txn, SqlError> {
    match cx.sess.txn.as_mut() {
        Some(t) if t.explicit => Ok(t),
        _ => Err(SqlError::NoTransactionBlock { what }),
    }
}

/// The most recent open savepoint called `name`.
fn find_savepoint(txn: &Txn, name: &ast::Ident) -> Result<usize, SqlError> {
    let name = crate::query::ident(name);
    txn.savepoints
        .iter()
        .rposition(|s| s.name == name)
        .ok_or(SqlError::NoSuchSavepoint { name })
}

fn savepoint(cx: &mut Cx<'_>, name: &ast::Ident) -> Result<Output, SqlError> {
    let serial = block(cx, "SAVEPOINT")?.serial;
    let cursors = cx.sess.cursors.declared_in(serial);
    let restarts = cx.sess.seqs.get_mut().restarts.len();
    let txn = block(cx, "SAVEPOINT")?;
    let mark = txn.pending.mark();
    txn.savepoints.push(crate::engine::Savepoint {
        name: crate::query::ident(name),
        mark,
        settings: txn.settings.clone(),
        cursors,
        read_only: txn.read_only,
        restarts,
    });
    Ok(Output::Command {
        tag: "SAVEPOINT".into(),
    })
}

/// `RELEASE [SAVEPOINT] name`: it and every savepoint opened after it are gone; what was done
/// since stays in the transaction.
fn release_savepoint(cx: &mut Cx<'_>, name: &ast::Ident) -> Result<Output, SqlError> {
    let txn = block(cx, "RELEASE SAVEPOINT")?;
    let at = find_savepoint(txn, name)?;
    let gone = txn.savepoints.len() - at;
    // The access mode is the subtransaction's own: it returns to what it was at the
    // savepoint, released or rolled back (PostgreSQL's `prevXactReadOnly`).
    if let Some(sp) = txn.savepoints.get(at) {
        txn.read_only = sp.read_only;
    }
    txn.savepoints.truncate(at);
    txn.pending.release(gone);
    // Advisory locks taken since belong to the transaction around the savepoint now.
    cx.st
        .locks
        .get_mut()
        .release_savepoint(cx.sess.id, at as u32);
    Ok(Output::Command {
        tag: "RELEASE".into(),
    })
}

/// `ROLLBACK TO [SAVEPOINT] name`: the transaction as it was at the savepoint (rows, tables,
/// settings, cursors declared since closed), no longer failed; the savepoint stays open, later
/// ones are gone.
fn rollback_to_savepoint(cx: &mut Cx<'_>, name: &ast::Ident) -> Result<Output, SqlError> {
    let txn = block(cx, "ROLLBACK TO SAVEPOINT")?;
    let at = find_savepoint(txn, name)?;
    let later = txn.savepoints.len() - at - 1;
    txn.savepoints.truncate(at + 1);
    let serial = txn.serial;
    let sp = &txn.savepoints[at];
    txn.pending.rollback_to(&sp.mark);
    txn.settings = sp.settings.clone();
    txn.read_only = sp.read_only;
    let kept = sp.cursors.clone();
    let restarts_kept = sp.restarts;
    txn.pending.release(later);
    txn.failed = false;
    // And the transaction-level advisory locks taken since the savepoint.
    let since = at as u32 + 1;
    cx.st
        .locks
        .get_mut()
        .end_transactions(cx.sess.id, |of| (of == Some(serial)).then_some(since));
    cx.sess.cursors.close_declared_since(serial, &kept);
    // The sequences restarted since go back, last restart first, as when a transaction
    // ends without committing (the engine settles them after the statement).
    let mine = cx.sess.seqs.get_mut();
    let keep = restarts_kept.min(mine.restarts.len());
    let undone: Vec<_> = mine.restarts.drain(keep..).rev().collect();
    mine.to_restore.extend(undone);
    Ok(Output::Command {
        tag: "ROLLBACK".into(),
    })
}

fn begin(cx: &mut Cx<'_>, modes: &[ast::TransactionMode], tag: &str) -> Result<Output, SqlError> {
    let (mut isolation, mut read_only) = cx.settings().transaction_defaults();
    for m in modes {
        match m {
            ast::TransactionMode::IsolationLevel(l) => {
                isolation = match l {
                    ast::TransactionIsolationLevel::RepeatableRead => Isolation::RepeatableRead,
                    ast::TransactionIsolationLevel::Serializable => Isolation::Serializable,
                    _ => Isolation::ReadCommitted,
                }
            }
            ast::TransactionMode::AccessMode(a) => {
                read_only = matches!(a, ast::TransactionAccessMode::ReadOnly);
                if !read_only {
                    crate::settings::refuse_read_write(
                        cx.st.read_only,
                        cx.sess.settings.read_only_role,
                        &cx.sess.user,
                    )?;
                }
            }
        }
    }
    match cx.sess.txn.as_mut() {
        // BEGIN inside a block: PostgreSQL warns, keeps the block and applies the modes as
        // SET TRANSACTION does (with its checks: no isolation change after a query).
        Some(t) if t.explicit => {
            cx.sess.notice(Notice::AlreadyInTransaction);
            if !modes.is_empty() {
                crate::settings::set(
                    cx,
                    &ast::Set::SetTransaction {
                        modes: modes.to_vec(),
                        snapshot: None,
                        session: false,
                    },
                )?;
            }
        }
        // BEGIN inside an implicit (multi-statement) transaction turns it into a block.
        Some(t) => {
            t.explicit = true;
            t.isolation = isolation;
            t.read_only = read_only;
        }
        None => {
            let serial = cx.sess.take_txn_serial();
            cx.sess.txn = Some(Txn {
                explicit: true,
                isolation,
                read_only,
                snapshot: None,
                start_time: cx.st.now,
                failed: false,
                pending: Default::default(),
                settings: Default::default(),
                serial,
                savepoints: Vec::new(),
                queried: false,
            })
        }
    }
    Ok(Output::Command { tag: tag.into() })
}

fn rows_output(cols: &[ColMeta], rows: Vec<Vec<Value>>) -> Result<Output, SqlError> {
    let n = rows.len();
    let types: Vec<PgType> = cols.iter().map(|c| c.ty).collect();
    Ok(Output::Rows {
        fields: cols.iter().map(ColMeta::field).collect(),
        rows: text_rows(&types, rows)?,
        tag: format!("SELECT {n}"),
    })
}

/// Rows in PostgreSQL's text format, each value written as its column's type writes it.
fn text_rows(types: &[PgType], rows: Vec<Vec<Value>>) -> Result<TextRows, SqlError> {
    let mut text = TextRows::new();
    for r in rows {
        text.push_row(|w| {
            for (v, ty) in r.iter().zip(types) {
                w.value_with(|buf| crate::types::write_text(v, *ty, buf))?;
            }
            Ok(())
        })?;
        crate::types::release_row(r);
    }
    Ok(text)
}

/// `DECLARE name [NO] SCROLL CURSOR [WITH HOLD] FOR query`: the query runs now (its rows are
/// what PostgreSQL's cursor would read from the same snapshot); see [`crate::cursor`].
fn declare(cx: &mut Cx<'_>, stmts: &[ast::Declare]) -> Result<Output, SqlError> {
    let ([d], Some(q)) = (stmts, stmts.first().and_then(|d| d.for_query.as_ref())) else {
        return Err(SqlError::feature("DECLARE of anything but a cursor"));
    };
    if d.binary == Some(true) {
        return Err(SqlError::feature("DECLARE … BINARY CURSOR"));
    }
    let name = d.names.first().map(crate::query::ident).unwrap_or_default();
    let hold = d.hold == Some(true);
    let at = cx.read_point();
    let bq = {
        let rcx = cx.reader(at);
        Binder::new(&rcx).bind_query(q, None)?
    };
    if !hold && !cx.sess.multi_statement && !cx.sess.txn.as_ref().is_some_and(|t| t.explicit) {
        return Err(SqlError::NoTransactionBlock {
            what: "DECLARE CURSOR",
        });
    }
    cx.ensure_txn();
    let serial = cx.sess.txn.as_ref().map_or(0, |t| t.serial);
    if cx.sess.cursors.get(&name, Some(serial)).is_ok() {
        return Err(SqlError::DuplicateCursor { name });
    }
    let types: Vec<PgType> = bq.columns.iter().map(|c| c.ty).collect();
    let rows = {
        let rcx = cx.reader(at);
        let mut rows = Executor::new(&rcx).run_query(&bq, None)?;
        if types.iter().any(|t| t.is_reg()) {
            rcx.name_reg_columns(&types, &mut rows);
        }
        rows
    };
    let fields = bq.columns.iter().map(ColMeta::field).collect();
    cx.sess.cursors.declare(
        crate::cursor::Declared {
            statement: ast::Statement::Declare {
                stmts: stmts.to_vec(),
                separator: Default::default(),
            }
            .to_string(),
            created: cx.st.now,
            name,
            fields,
            types,
            rows,
            no_scroll: d.scroll == Some(false),
            hold,
        },
        serial,
    )?;
    Ok(Output::Command {
        tag: "DECLARE CURSOR".into(),
    })
}

/// `FETCH` / `MOVE` over a declared cursor.
fn fetch(
    cx: &mut Cx<'_>,
    name: &ast::Ident,
    direction: &ast::FetchDirection,
    is_move: bool,
) -> Result<Output, SqlError> {
    let name = crate::query::ident(name);
    let txn = cx.sess.txn.as_ref().map(|t| t.serial);
    let (cursor, n, rows) = cx.sess.cursors.fetch(&name, txn, direction, !is_move)?;
    if is_move {
        return Ok(Output::Command {
            tag: format!("MOVE {n}"),
        });
    }
    Ok(Output::Rows {
        fields: cursor.fields.clone(),
        rows: text_rows(&cursor.types, rows)?,
        tag: format!("FETCH {n}"),
    })
}

/// `EXPLAIN SELECT …`: how RockLake will read each table — a key-range scan of the primary
/// key (with the key columns the WHERE clause fixes) or a scan of the whole table — as rows
/// of one `QUERY PLAN` column, like PostgreSQL. Nothing is executed.
fn explain(cx: &mut Cx<'_>, stmt: &Statement, analyze: bool) -> Result<Output, SqlError> {
    if analyze {
        return Err(SqlError::feature("EXPLAIN ANALYZE"));
    }
    if let Some((verb, dml)) = explained_dml(cx, stmt)? {
        let at = cx.read_point();
        let rcx = cx.reader(at);
        let (items, filter, _) = plan_matching(&mut Binder::new(&rcx), &dml)?;
        return plan_output(crate::query::explain_dml(verb, &items, filter.as_ref()));
    }
    let Statement::Query(q) = stmt else {
        return Err(SqlError::feature(
            "EXPLAIN of statements other than SELECT, UPDATE and DELETE",
        ));
    };
    if let Some(call) = crate::lifecycle::recognize(q) {
        return plan_output(vec![format!("Function Scan on {}", call.name)]);
    }
    let at = cx.read_point();
    let rcx = cx.reader(at);
    let bq = Binder::new(&rcx).bind_query(q, None)?;
    plan_output(crate::query::explain(&bq))
}

/// EXPLAIN's options: those that change only what RockLake's plan lines do not show anyway
/// (COSTS, VERBOSE, …) are taken; ANALYZE (it would run the statement) and output formats
/// other than text are refused rather than ignored.
fn explain_options(
    format: Option<&ast::AnalyzeFormatKind>,
    options: Option<&[ast::UtilityOption]>,
) -> Result<(), SqlError> {
    if let Some(f) = format {
        let f = f.to_string().to_ascii_uppercase();
        if !f.ends_with("TEXT") {
            return Err(SqlError::feature(format!("EXPLAIN {f}")));
        }
    }
    for o in options.unwrap_or_default() {
        let name = o.name.value.to_ascii_lowercase();
        let arg = o.arg.as_ref().map(|a| a.to_string().to_ascii_lowercase());
        let off = matches!(arg.as_deref(), Some("false" | "off" | "0"));
        match name.as_str() {
            "analyze" if !off => return Err(SqlError::feature("EXPLAIN ANALYZE")),
            "format" if arg.as_deref() != Some("text") => {
                return Err(SqlError::feature(format!(
                    "EXPLAIN (FORMAT {})",
                    arg.unwrap_or_default().to_uppercase()
                )))
            }
            "analyze" | "format" | "verbose" | "costs" | "settings" | "buffers" | "wal"
            | "timing" | "summary" => {}
            _ => {
                return Err(SqlError::Syntax {
                    message: format!("unrecognized EXPLAIN option \"{name}\""),
                })
            }
        }
    }
    Ok(())
}

/// The UPDATE or DELETE an EXPLAIN names (with its plan's verb), `None` for other statements.
fn explained_dml<'s>(
    cx: &mut Cx<'_>,
    stmt: &'s Statement,
) -> Result<Option<(&'static str, Dml<'s>)>, SqlError> {
    Ok(match stmt {
        Statement::Update(u) => Some(("Update", update_dml(cx, u, None)?)),
        Statement::Delete(d) => Some(("Delete", delete_dml(cx, d, None)?)),
        Statement::Query(q) => match q.body.as_ref() {
            ast::SetExpr::Update(Statement::Update(u)) => {
                Some(("Update", update_dml(cx, u, q.with.as_ref())?))
            }
            ast::SetExpr::Delete(Statement::Delete(d)) => {
                Some(("Delete", delete_dml(cx, d, q.with.as_ref())?))
            }
            _ => None,
        },
        _ => None,
    })
}

fn plan_output(lines: Vec<String>) -> Result<Output, SqlError> {
    Ok(Output::Rows {
        fields: vec![ColMeta {
            name: "QUERY PLAN".into(),
            ty: PgType::Text,
            typmod: -1,
            table_oid: 0,
            attnum: 0,
            qual: None,
            hidden: false,
        }
        .field()],
        rows: TextRows::try_from_rows(lines.into_iter().map(|l| [Some(l)]))?,
        tag: "EXPLAIN".into(),
    })
}

fn query_statement(cx: &mut Cx<'_>, q: &ast::Query) -> Result<Output, SqlError> {
    match q.body.as_ref() {
        ast::SetExpr::Update(Statement::Update(u)) => return update(cx, u, q.with.as_ref()),
        ast::SetExpr::Delete(Statement::Delete(d)) => return delete(cx, d, q.with.as_ref()),
        ast::SetExpr::Insert(Statement::Insert(i)) => return insert(cx, i, q.with.as_ref()),
        _ => {}
    }
    let at = cx.read_point();
    // Results of catalog queries (DuckDB's introspection at every ATTACH, psql's `\d`) are
    // kept like binary COPY results, for sessions of the same user and database (see
    // copycache).
    // Text results show timestamptz values in the session's zone: only UTC sessions share;
    // and names as quote_all_identifiers quotes them: only sessions with it off.
    let shareable = at == cx.st.latest
        && cx.sess.txn.as_ref().is_none_or(|t| t.pending.is_empty())
        && crate::tz::session().is_utc()
        && !crate::pgcatalog::quote_all();
    if shareable {
        if let Some(hit) = cx
            .st
            .copies
            .get_rows(at, &cx.sess.user, &cx.sess.database, q)
        {
            return Ok(hit);
        }
    }
    let reads = crate::copycache::ReadSet::new(cx.kv);
    let shape = cx.sess.plan_shape.take();
    let mut rcx = cx.reader(at);
    let (bq, catalog_only) = crate::plancache::bind(&rcx, q, shape.as_ref())?;
    // Binding reads the registry, not the store: only a result that may be kept notes the
    // ranges its execution reads.
    // A regclass (regtype, regnamespace) column is written as names, which depend on
    // search_path too.
    let names_oids = bq.columns.iter().any(|c| c.ty.is_reg());
    let may_keep = shareable && catalog_only && !names_oids;
    if may_keep {
        rcx.kv = &reads;
    }
    let exec = Executor::with_set_config(&rcx);
    let mut rows = exec.run_query(&bq, None)?;
    let set_configs = exec.take_set_configs();
    let effects = exec.take_effects();
    if names_oids {
        let types: Vec<PgType> = bq.columns.iter().map(|c| c.ty).collect();
        rcx.name_reg_columns(&types, &mut rows);
    }
    let out = rows_output(&bq.columns, rows)?;
    let keep = may_keep && set_configs.is_empty() && effects.is_empty();
    for call in set_configs {
        crate::settings::apply_set_config(cx, call)?;
    }
    for effect in effects {
        match effect {
            crate::query::Effect::Signal { pid, terminate } => cx.sess.signal(pid, terminate),
            crate::query::Effect::Notice(n) => cx.sess.notice(n),
            crate::query::Effect::ExportSnapshot { id, point } => export_snapshot(cx, id, point)?,
        }
    }
    if keep {
        cx.st.copies.put_rows(
            at,
            &cx.sess.user,
            &cx.sess.database,
            q.clone(),
            &out,
            reads.into_ranges(),
        );
    }
    Ok(out)
}

pub fn describe(cx: &mut Cx<'_>, sql: &str) -> Result<Describe, SqlError> {
    let _zone = cx.enter_statement_settings()?;
    let stmts = parse(sql)?;
    let Some(stmt) = stmts.first() else {
        return Ok(Describe {
            param_types: vec![],
            fields: None,
        });
    };
    if stmts.len() > 1 {
        return Err(SqlError::Syntax {
            message: "cannot insert multiple commands into a prepared statement".into(),
        });
    }
    describe_statement(cx, sql, stmt, true)
}

/// Binds statement `index` of `sql`'s own parse tree again, without executing it, so that an
/// error its binding gives notes where in this text it points ([`crate::errpos`]): a tree
/// taken from another text of the same shape carries that text's positions. Also in a failed
/// transaction block, whose failure the error may be; the transaction's snapshot and state are
/// as they were.
pub fn locate_error(cx: &mut Cx<'_>, sql: &str, index: usize) {
    let Ok(_zone) = cx.enter_statement_settings() else {
        return;
    };
    let Some(stmt) = parse(sql).ok().and_then(|mut s| {
        s.truncate(index + 1);
        s.pop()
    }) else {
        return;
    };
    let kept = cx.sess.txn.as_ref().map(|t| (t.snapshot, t.queried));
    // Only the note it leaves is wanted.
    let _ = describe_statement(cx, sql, &stmt, false);
    if let (Some(t), Some((snapshot, queried))) = (cx.sess.txn.as_mut(), kept) {
        t.snapshot = snapshot;
        t.queried = queried;
    }
}

/// [`describe`] of one statement of `sql`.
fn describe_statement(
    cx: &mut Cx<'_>,
    sql: &str,
    stmt: &Statement,
    refuse_in_failed_block: bool,
) -> Result<Describe, SqlError> {
    // In a failed block only a transaction end may be prepared (PostgreSQL's
    // `IsTransactionExitStmt`): psycopg prepares a ROLLBACK it has sent often.
    let ends_transaction = matches!(stmt, Statement::Commit { .. } | Statement::Rollback { .. });
    if refuse_in_failed_block && cx.sess.txn.as_ref().is_some_and(|t| t.failed) && !ends_transaction
    {
        return Err(SqlError::InFailedTransaction);
    }
    // Types the statement's context gives its parameters `$n` (the host reports the others,
    // and those the client gave, as it should).
    let mut params: std::collections::BTreeMap<usize, PgType> = Default::default();
    let fields = match stmt {
        Statement::Query(q) if crate::lifecycle::recognize(q).is_some() => {
            let call = crate::lifecycle::recognize(q);
            let name = call.as_ref().map(|c| c.name.clone()).unwrap_or_default();
            let cols = crate::lifecycle::result_columns(&name).ok_or_else(|| {
                SqlError::UndefinedFunction {
                    message: format!("function {name}() does not exist"),
                    hint: None,
                }
            })?;
            let all = crate::lifecycle::fields(cols);
            match call.and_then(|c| c.columns) {
                None => Some(all),
                Some(names) => Some(
                    names
                        .iter()
                        .map(|n| {
                            all.iter()
                                .find(|f| &f.name == n)
                                .cloned()
                                .ok_or_else(|| SqlError::UndefinedColumn { name: n.clone() })
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                ),
            }
        }
        // A new table's rows, not a result: the query is bound for its errors (and their
        // positions) and its parameters' types.
        Statement::Query(q) if select_into(q).is_some() => {
            let mut inner = (**q).clone();
            if let ast::SetExpr::Select(s) = inner.body.as_mut() {
                s.into = None;
            }
            params = describe_query_params(cx, &inner)?;
            None
        }
        Statement::CreateTable(ast::CreateTable { query: Some(q), .. }) => {
            params = describe_query_params(cx, q)?;
            None
        }
        Statement::Query(q)
            if matches!(
                q.body.as_ref(),
                ast::SetExpr::Select(_)
                    | ast::SetExpr::SetOperation { .. }
                    | ast::SetExpr::Values(_)
                    | ast::SetExpr::Query(_)
            ) =>
        {
            let at = cx.read_point();
            let rcx = cx.reader(at);
            let mut binder = Binder::describing(&rcx);
            let bq = binder.bind_query(q, None)?;
            params = binder.param_types();
            Some(bq.columns.iter().map(ColMeta::field).collect())
        }
        Statement::Insert(ins) => {
            params = insert_param_types(cx, ins)?;
            match &ins.table {
                ast::TableObject::TableName(name) if ins.returning.is_some() => {
                    let t = dml_target(cx, name)?;
                    let at = cx.read_point();
                    insert_returning(cx, at, ins, &t)?.map(|r| r.fields())
                }
                _ => None,
            }
        }
        Statement::Fetch { name, into, .. } if !crate::cursor::is_move(into) => {
            let txn = cx.sess.txn.as_ref().map(|t| t.serial);
            let name = crate::query::ident(name);
            Some(cx.sess.cursors.get(&name, txn)?.fields.clone())
        }
        Statement::Explain {
            statement,
            analyze: false,
            ..
        } if matches!(statement.as_ref(), Statement::Query(q) if crate::lifecycle::recognize(q).is_none())
            || matches!(
                statement.as_ref(),
                Statement::Update(_) | Statement::Delete(_)
            ) =>
        {
            if let Some((_, dml)) = explained_dml(cx, statement)? {
                params = dml_param_types(cx, &dml)?;
            } else if let Statement::Query(q) = statement.as_ref() {
                let at = cx.read_point();
                let rcx = cx.reader(at);
                let mut binder = Binder::describing(&rcx);
                binder.bind_query(q, None)?;
                params = binder.param_types();
            }
            match plan_output(vec![])? {
                Output::Rows { fields, .. } => Some(fields),
                _ => None,
            }
        }
        Statement::Update(u) => {
            let dml = update_dml(cx, u, None)?;
            params = dml_param_types(cx, &dml)?;
            dml_returning(cx, &dml, u.returning.as_deref())?.map(|r| r.fields())
        }
        Statement::Delete(d) => {
            let dml = delete_dml(cx, d, None)?;
            params = dml_param_types(cx, &dml)?;
            dml_returning(cx, &dml, d.returning.as_deref())?.map(|r| r.fields())
        }
        Statement::Query(q) => match q.body.as_ref() {
            ast::SetExpr::Update(Statement::Update(u)) => {
                let dml = update_dml(cx, u, q.with.as_ref())?;
                params = dml_param_types(cx, &dml)?;
                dml_returning(cx, &dml, u.returning.as_deref())?.map(|r| r.fields())
            }
            ast::SetExpr::Delete(Statement::Delete(d)) => {
                let dml = delete_dml(cx, d, q.with.as_ref())?;
                params = dml_param_types(cx, &dml)?;
                dml_returning(cx, &dml, d.returning.as_deref())?.map(|r| r.fields())
            }
            _ => None,
        },
        Statement::ShowVariable { variable } if show_name(variable).eq_ignore_ascii_case("all") => {
            Some(
                ["name", "setting", "description"]
                    .into_iter()
                    .map(|c| ColMeta::expr(c, PgType::Text).field())
                    .collect(),
            )
        }
        Statement::ShowVariable { variable } => {
            let (name, _) = cx.settings().show(&show_name(variable))?;
            Some(vec![ColMeta::expr(&name, PgType::Text).field()])
        }
        _ => None,
    };
    // Parameters the statement has but nothing above typed (statements not analysed here,
    // clauses the binder does not visit) are reported as text, as an untyped value is taken.
    for n in crate::params::numbers(sql).into_iter().filter(|n| *n > 0) {
        params.entry(n).or_insert(PgType::Unknown);
    }
    let count = params.keys().next_back().copied().unwrap_or(0);
    Ok(Describe {
        param_types: (1..=count)
            .map(|n| match params.get(&n) {
                Some(t) if *t != PgType::Unknown => t.oid(),
                // Used, but nothing types it (`SELECT $1`): PostgreSQL resolves it as text.
                Some(_) => PgType::Text.oid(),
                // Not in the statement at all: the host reports it unless the client typed it.
                None => 0,
            })
            .collect(),
        fields,
    })
}

/// Parameter types of an UPDATE or DELETE: SET values take their column's type, the WHERE
/// clause and FROM/USING items type the rest.
fn dml_param_types(
    cx: &mut Cx<'_>,
    dml: &Dml<'_>,
) -> Result<std::collections::BTreeMap<usize, PgType>, SqlError> {
    let at = cx.read_point();
    let rcx = cx.reader(at);
    let mut binder = Binder::describing(&rcx);
    bind_matching(&mut binder, dml)?;
    Ok(binder.param_types())
}

/// Parameter types of an INSERT: each `VALUES` item takes its target column's type (and
/// typed by its own context inside: `$1 + 1`, `CAST($2 AS …)`); an `INSERT … SELECT` types
/// them as the SELECT does.
fn insert_param_types(
    cx: &mut Cx<'_>,
    ins: &ast::Insert,
) -> Result<std::collections::BTreeMap<usize, PgType>, SqlError> {
    let ast::TableObject::TableName(name) = &ins.table else {
        return Err(SqlError::feature("INSERT into a table function"));
    };
    let t = dml_target(cx, name)?;
    let targets = insert_targets(&t, ins)?;
    let Some(source) = &ins.source else {
        return Ok(Default::default());
    };
    let at = cx.read_point();
    let rcx = cx.reader(at);
    let mut binder = Binder::describing(&rcx);
    match source.body.as_ref() {
        ast::SetExpr::Values(v) if source.with.is_none() => {
            let empty = Scope::default();
            for r in &v.rows {
                check_insert_width(r.len(), targets.len(), !ins.columns.is_empty())?;
                for (e, ci) in r.iter().zip(&targets) {
                    if crate::query::is_default_keyword(e) {
                        continue;
                    }
                    let (b, _) = binder.bind_expr(e, &empty, None)?;
                    coerce_expr(b, t.columns[*ci].ty)
                        .map_err(|err| crate::query::noted_at(e, err))?;
                }
            }
        }
        _ => {
            binder.bind_query(source, None)?;
        }
    }
    Ok(binder.param_types())
}

// ------------------------------------------------------------------ DDL

/// Schema and name of an object to create: unqualified names go to the first existing
/// schema of search_path.
pub(crate) fn qualified(cx: &mut Cx<'_>, parts: &[String]) -> Result<(String, String), SqlError> {
    let (s, n) = split_name(parts)?;
    if let Some(s) = s {
        return Ok((s, n));
    }
    let at = cx.read_point();
    let schema = cx.reader(at).existing_search_path().into_iter().next();
    schema.map(|s| (s, n)).ok_or(SqlError::NoSchemaSelected)
}

pub(crate) fn schema_exists(cx: &Cx<'_>, name: &str) -> bool {
    let pending = cx.sess.txn.as_ref().map(|t| &t.pending);
    let dropped = pending.is_some_and(|p| p.dropped_schemas.iter().any(|d| d == name));
    (cx.st.schemas.contains_key(name) && !dropped)
        || pending.is_some_and(|p| p.schemas.iter().any(|s| s.name == name))
}

pub(crate) fn find_table(cx: &mut Cx<'_>, parts: &[String]) -> Result<Option<TableRef>, SqlError> {
    let (schema, name) = split_name(parts)?;
    let at = cx.read_point();
    let rcx = cx.reader(at);
    Ok(rcx.find_table(schema.as_deref(), &name))
}

/// Whether the transaction that exported `e` is still open.
fn exported_snapshot_valid(cx: &Cx<'_>, e: &crate::engine::ExportedSnapshot) -> bool {
    let exporter = if e.session == cx.sess.id {
        Some(&*cx.sess)
    } else {
        cx.others.get(&e.session)
    };
    e.exporter_open(exporter)
}

/// Records what `pg_export_snapshot()` named (forgetting the snapshots of transactions that
/// have ended).
fn export_snapshot(cx: &mut Cx<'_>, id: String, point: u64) -> Result<(), SqlError> {
    let Some(txn) = cx.sess.txn.as_ref() else {
        return Ok(());
    };
    if !txn.savepoints.is_empty() {
        return Err(SqlError::ActiveTransaction {
            message: "cannot export a snapshot from a subtransaction".into(),
        });
    }
    let txn = txn.serial;
    let stale: Vec<String> = cx
        .st
        .exported_snapshots
        .iter()
        .filter(|(_, e)| !exported_snapshot_valid(cx, e))
        .map(|(k, _)| k.clone())
        .collect();
    for k in stale {
        cx.st.exported_snapshots.remove(&k);
    }
    let session = cx.sess.id;
    cx.st.exported_snapshots.insert(
        id,
        crate::engine::ExportedSnapshot {
            session,
            txn,
            point,
        },
    );
    Ok(())
}

/// `SET TRANSACTION SNAPSHOT 'id'` in a transaction block: the transaction reads at the commit
/// point another (still open) transaction exported, as PostgreSQL's pg_dump workers do.
pub(crate) fn import_snapshot(cx: &mut Cx<'_>, id: &ast::Value) -> Result<(), SqlError> {
    // Outside a block, the statement's own transaction (of the session's default isolation).
    let (queried, in_savepoint, isolation) = match cx.sess.txn.as_ref() {
        Some(t) => (t.queried, !t.savepoints.is_empty(), t.isolation),
        None => (false, false, cx.settings().transaction_defaults().0),
    };
    // A SAVEPOINT already took the transaction's snapshot in PostgreSQL.
    if queried || in_savepoint {
        return Err(SqlError::ActiveTransaction {
            message: "SET TRANSACTION SNAPSHOT must be called before any query".into(),
        });
    }
    if isolation == crate::engine::Isolation::ReadCommitted {
        return Err(SqlError::UnsupportedByPostgres {
            message: "a snapshot-importing transaction must have isolation level SERIALIZABLE or REPEATABLE READ".into(),
        });
    }
    let text = match id {
        ast::Value::SingleQuotedString(s) => s.clone(),
        other => other.to_string(),
    };
    let found = cx
        .st
        .exported_snapshots
        .get(&text)
        .copied()
        .filter(|e| exported_snapshot_valid(cx, e));
    let Some(e) = found else {
        return Err(SqlError::InvalidParameter {
            message: format!("invalid snapshot identifier: \"{text}\""),
        });
    };
    // The transaction now has its snapshot, as after a first query: its isolation, or
    // another import, can no longer change it.
    if let Some(t) = cx.sess.txn.as_mut() {
        t.snapshot = Some(e.point);
        t.queried = true;
    }
    cx.check_snapshot_age()
}
