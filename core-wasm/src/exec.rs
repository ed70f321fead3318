//! Statement execution: transactions, DDL, DML, COPY, and the read paths they share.

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
        now: cx.now,
        sequence_value: &|t| {
            let def = t.sequence.as_deref()?;
            Some(cx.st.sequences.borrow().value(t, def))
        },
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

/// CREATE TABLE clauses RockLake does not implement (PostgreSQL's `LIKE`, `INHERITS`,
/// `PARTITION BY`, storage parameters, …) or that other dialects add: refused, never ignored (an
/// ignored `LIKE` or `INHERITS` would make a table with other columns).
fn refuse_unsupported_create_clauses(ct: &ast::CreateTable) -> Result<(), SqlError> {
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
fn default_table_options(options: &ast::CreateTableOptions) -> bool {
    match options {
        ast::CreateTableOptions::None => true,
        ast::CreateTableOptions::Plain(o) => o.iter().all(|o| {
            matches!(o, ast::SqlOption::TableSpace(t) if t.name == "pg_default" && t.storage.is_none())
        }),
        _ => false,
    }
}

fn create_table(cx: &mut Cx<'_>, ct: &ast::CreateTable) -> Result<Output, SqlError> {
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
fn name_taken(
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
fn create_table_as(
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
fn select_into(q: &ast::Query) -> Option<&ast::SelectInto> {
    match q.body.as_ref() {
        ast::SetExpr::Select(s) => s.into.as_ref(),
        _ => None,
    }
}

/// `VACUUM` and `ANALYZE` ([`crate::maintenance`]): PostgreSQL's checks, and nothing to do.
fn maintenance(cx: &mut Cx<'_>, stmt: &Statement) -> Result<Output, SqlError> {
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
fn describe_query_params(
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
fn select_into_table(cx: &mut Cx<'_>, q: &ast::Query) -> Result<Output, SqlError> {
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

/// A column's sequence to be: its definition, the identity's ALWAYS (`None`: serial), and the
/// name `SEQUENCE NAME` gave it.
struct PlannedSequence {
    def: SequenceDef,
    always: Option<bool>,
    name: Option<ast::ObjectName>,
}

/// The name `SEQUENCE NAME` gives a column's sequence, checked as PostgreSQL does when it
/// creates the sequence and then makes the column own it: the schema exists, the name is free
/// (`chosen`: names this statement takes), and the schema is the table's.
fn named_sequence(
    cx: &mut Cx<'_>,
    name: &ast::ObjectName,
    (table_schema, table): (&str, &str),
    chosen: &[String],
) -> Result<String, SqlError> {
    // Unqualified, it goes in the table's schema (PostgreSQL's generateSerialExtraStmts).
    let (schema, rel) = split_name(&object_name(name))?;
    let schema = schema.unwrap_or_else(|| table_schema.to_string());
    if !schema_exists(cx, &schema) {
        return Err(SqlError::UndefinedSchema { name: schema });
    }
    let at = cx.read_point();
    if relation_name_taken(&cx.reader(at), &schema, &rel) || chosen.contains(&rel) || rel == table {
        return Err(SqlError::DuplicateTable { name: rel });
    }
    if schema != table_schema {
        return Err(SqlError::UndefinedTable {
            name: format!("{schema}.{table}"),
        });
    }
    Ok(rel)
}

/// The name of a column's new sequence: the one `SEQUENCE NAME` gave ([`named_sequence`]), or
/// PostgreSQL's choice ([`sequence_name`]); `chosen`: names this statement already takes.
fn column_sequence_name(
    cx: &mut Cx<'_>,
    given: Option<&ast::ObjectName>,
    (schema, table): (&str, &str),
    column: &str,
    chosen: &[String],
) -> Result<String, SqlError> {
    match given {
        Some(given) => named_sequence(cx, given, (schema, table), chosen),
        None => {
            let at = cx.read_point();
            Ok(sequence_name(&cx.reader(at), schema, table, column, chosen))
        }
    }
}

/// The sequence a serial column (`serial`) or an identity column (`identity`: ALWAYS, and its
/// options) needs, after PostgreSQL's checks, with the column made NOT NULL; `None` for
/// another column. The caller names, owns and links it.
fn column_sequence(
    col: &mut Column,
    serial: bool,
    identity: Option<(bool, &[ast::SequenceOptions])>,
    table: &str,
) -> Result<Option<PlannedSequence>, SqlError> {
    let planned = match identity {
        Some((always, options)) => {
            if serial || col.default_sql.is_some() {
                return Err(SqlError::Syntax {
                    message: format!(
                        "both default and identity specified for column \"{}\" of table \"{table}\"",
                        col.name
                    ),
                });
            }
            if !matches!(col.ty, PgType::Int2 | PgType::Int4 | PgType::Int8) {
                return Err(SqlError::InvalidParameter {
                    message: "identity column type must be smallint, integer, or bigint".into(),
                });
            }
            let (options, name) = crate::seqparse::identity_sequence_name(options);
            PlannedSequence {
                def: crate::sequence::define(&options, col.ty)?.0,
                always: Some(always),
                name: name.cloned(),
            }
        }
        None if serial => PlannedSequence {
            def: crate::sequence::define(&[], col.ty)?.0,
            always: None,
            name: None,
        },
        None => return Ok(None),
    };
    col.not_null = true;
    Ok(Some(planned))
}

/// A default that is just `nextval('s')` or `nextval('s'::regclass)` (what pg_dump writes for
/// a serial column) draws from that sequence by its id, as PostgreSQL's default holds the
/// sequence's OID: it shows the sequence's current name, follows a rename, and gives
/// `pg_depend` its row. Another expression naming a sequence keeps the name as text.
fn bind_sequence_default(
    cx: &mut Cx<'_>,
    table_schema: &str,
    col: &mut Column,
) -> Result<(), SqlError> {
    let Some(sql) = col.default_sql.as_deref().filter(|d| d.contains("nextval")) else {
        return Ok(());
    };
    let Some(name) = crate::sequence::sole_nextval(&parse_default(sql)?) else {
        return Ok(());
    };
    let Some((schema, rel)) = crate::query::name_parts(&name).and_then(|p| split_name(&p).ok())
    else {
        return Ok(());
    };
    let seq = {
        let at = cx.read_point();
        cx.reader(at).find_table(schema.as_deref(), &rel)
    };
    // A sequence of another schema stays named by text: DROP SCHEMA … CASCADE of its schema
    // would otherwise leave the default bound to nothing.
    if let Some(seq) = seq.filter(|s| s.sequence.is_some() && s.schema == table_schema) {
        // A concurrent DROP SEQUENCE then conflicts with this transaction.
        cx.pending()?.uses_definition(&seq);
        col.serial = Some(seq.id);
        col.default_sql = Some(serial_default(&seq.schema, &seq.name));
    }
    Ok(())
}

/// The name PostgreSQL chooses for a column's sequence: `t_c_seq`, else `t_c_seq1`, … past
/// the relations of the schema, the table's own name and the names `chosen` already.
fn sequence_name(
    rcx: &ReadCx<'_>,
    schema: &str,
    table: &str,
    column: &str,
    chosen: &[String],
) -> String {
    let base = format!("{table}_{column}_seq");
    let taken = |n: &str| {
        relation_name_taken(rcx, schema, n) || n == table || chosen.iter().any(|c| c == n)
    };
    let mut n = base.clone();
    let mut k = 0;
    while taken(&n) {
        k += 1;
        n = format!("{base}{k}");
    }
    n
}

/// Makes `def` the sequence of `col` (of table `table_id` in `schema`, named `table`):
/// the sequence relation, owned by the column, and the column's default (serial) or identity.
fn link_sequence(
    cx: &mut Cx<'_>,
    (schema, table_id): (&str, u32),
    seq_name: &str,
    col: &mut Column,
    mut def: SequenceDef,
    always: Option<bool>,
) -> Table {
    def.owner = Some((table_id, col.name.clone()));
    def.identity = always.is_some();
    let seq = new_sequence(cx, schema, seq_name, def);
    match always {
        Some(always) => {
            col.identity = Some(crate::catalog::Identity {
                always,
                sequence: seq.id,
            })
        }
        None => {
            col.default_sql = Some(serial_default(schema, seq_name));
            col.serial = Some(seq.id);
        }
    }
    seq
}

/// An identity column's sequence given the column's new type `ty`, as PostgreSQL runs `ALTER
/// SEQUENCE … AS` for it ([`crate::sequence::retyped`]); 22023 for a type a sequence cannot
/// have.
fn retype_identity_sequence(cx: &mut Cx<'_>, seq_id: u32, ty: PgType) -> Result<(), SqlError> {
    if !matches!(ty, PgType::Int2 | PgType::Int4 | PgType::Int8) {
        return Err(SqlError::InvalidParameter {
            message: "identity column type must be smallint, integer, or bigint".into(),
        });
    }
    let seq = {
        let at = cx.read_point();
        cx.reader(at)
            .sequences()
            .into_iter()
            .find(|s| s.id == seq_id)
    };
    let Some((seq, def)) = seq.and_then(|s| s.sequence.clone().map(|d| (s, d))) else {
        return Err(SqlError::internal("identity column without its sequence"));
    };
    let current = cx.st.sequences.get_mut().value(&seq, &def);
    let new = crate::sequence::retyped(&def, ty, current)?;
    let mut altered = (*seq).clone();
    altered.sequence = Some(Arc::new(new));
    let p = cx.pending()?;
    p.uses_definition(&seq);
    p.put_table(Arc::new(altered), false)
}

/// `serial`, `bigserial`, `smallserial` (or `serial4`, `serial8`, `serial2`): the column's
/// type; `None` for any other type.
fn serial_type(dt: &ast::DataType) -> Option<PgType> {
    let ast::DataType::Custom(name, mods) = dt else {
        return None;
    };
    let parts = object_name(name);
    if !mods.is_empty() || parts.len() > 2 || parts.len() == 2 && parts[0] != "pg_catalog" {
        return None;
    }
    match parts.last()?.as_str() {
        "serial" | "serial4" => Some(PgType::Int4),
        "bigserial" | "serial8" => Some(PgType::Int8),
        "smallserial" | "serial2" => Some(PgType::Int2),
        _ => None,
    }
}

/// A serial column's default: `nextval('t_id_seq'::regclass)`, the sequence named as
/// PostgreSQL shows it with the default search_path (qualified outside `public`).
fn serial_default(schema: &str, seq: &str) -> String {
    // Stored text: quoted by PostgreSQL's rule, never by the session's quote_all_identifiers.
    let q = crate::pgcatalog::quote_ident_if_needed;
    let name = if schema == "public" {
        q(seq)
    } else {
        format!("{}.{}", q(schema), q(seq))
    };
    format!("nextval({}::regclass)", crate::format::quote_literal(&name))
}

/// A sequence relation with a fresh id and OID (not yet in the transaction).
fn new_sequence(cx: &mut Cx<'_>, schema: &str, name: &str, def: SequenceDef) -> Table {
    let id = cx.st.next_table_id;
    cx.st.next_table_id += 1;
    let oid = cx.st.next_oid;
    cx.st.next_oid += 3;
    Table {
        id,
        oid,
        schema: schema.to_string(),
        name: name.to_string(),
        columns: SequenceDef::columns(),
        primary_key: Vec::new(),
        pkey_name: String::new(),
        indexes: Vec::new(),
        version: 0,
        layout: 0,
        sequence: Some(Arc::new(def)),
        view: None,
        comment: None,
        pkey_comment: None,
        pkey_constraint_comment: None,
        shape: 0,
    }
}

/// `CREATE SEQUENCE [IF NOT EXISTS] name [options]`.
fn create_sequence(
    cx: &mut Cx<'_>,
    name: &ast::ObjectName,
    if_not_exists: bool,
    temporary: bool,
    options: &[ast::SequenceOptions],
) -> Result<Output, SqlError> {
    cx.check_writable("CREATE SEQUENCE")?;
    if temporary {
        return Err(SqlError::feature("temporary sequences"));
    }
    let (schema, seq_name) = qualified(cx, &object_name(name))?;
    if !schema_exists(cx, &schema) {
        return Err(SqlError::UndefinedSchema { name: schema });
    }
    let taken = {
        let at = cx.read_point();
        relation_name_taken(&cx.reader(at), &schema, &seq_name)
    };
    let done = Output::Command {
        tag: "CREATE SEQUENCE".into(),
    };
    if taken {
        if if_not_exists {
            cx.sess.notice(Notice::RelationExists { name: seq_name });
            return Ok(done);
        }
        return Err(SqlError::DuplicateTable { name: seq_name });
    }
    let (mut def, owned) = crate::sequence::define(options, PgType::Int8)?;
    if let Some(Some(owner)) = owned {
        def.owner = Some(sequence_owner(cx, &owner, &schema)?);
    }
    let seq = new_sequence(cx, &schema, &seq_name, def);
    cx.pending()?.put_table(Arc::new(seq), true)?;
    Ok(done)
}

/// `OWNED BY table.column`: the table (in the sequence's schema) and column.
fn sequence_owner(
    cx: &mut Cx<'_>,
    owner: &ast::ObjectName,
    seq_schema: &str,
) -> Result<(u32, String), SqlError> {
    let mut parts = object_name(owner);
    let Some(column) = parts.pop().filter(|_| !parts.is_empty()) else {
        return Err(SqlError::SyntaxHint {
            message: "invalid OWNED BY option".into(),
            hint: "Specify OWNED BY table.column or OWNED BY NONE.",
        });
    };
    let t = resolve_target(
        cx,
        &ast::ObjectName::from(
            parts
                .iter()
                .map(|p| ast::Ident::new(p.clone()))
                .collect::<Vec<_>>(),
        ),
    )?;
    if t.sequence.is_some() {
        return Err(SqlError::WrongObjectType {
            message: format!(
                "referenced relation \"{}\" is not a table or foreign table",
                t.name
            ),
        });
    }
    if t.schema != seq_schema {
        return Err(SqlError::NotInPrerequisiteState {
            message: "sequence must be in same schema as table it is linked to".into(),
        });
    }
    if t.column_index(&column).is_none() {
        return Err(SqlError::UndefinedColumn {
            name: format!("{column}\" of relation \"{}", t.name),
        });
    }
    Ok((t.id, column))
}

/// The sequences owned by a column of table `table` (`column`: that column only).
fn owned_sequences(cx: &mut Cx<'_>, table: u32, column: Option<&str>) -> Vec<TableRef> {
    let at = cx.read_point();
    let rcx = cx.reader(at);
    rcx.sequences()
        .iter()
        .filter(|s| {
            s.sequence.as_ref().is_some_and(|d| {
                d.owner
                    .as_ref()
                    .is_some_and(|(t, c)| *t == table && column.is_none_or(|x| x == c))
            })
        })
        .cloned()
        .collect()
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

/// `ALTER SEQUENCE [IF EXISTS] name …` ([`crate::seqparse`]): its options (a new definition,
/// transactional as PostgreSQL's), `RESTART` (undone if the transaction does not commit),
/// `OWNED BY`, or `OWNER TO` / `RENAME TO` as ALTER TABLE does them for a sequence.
fn alter_sequence(cx: &mut Cx<'_>, at: &ast::AlterTable) -> Result<Output, SqlError> {
    cx.check_writable("ALTER SEQUENCE")?;
    let done = || Output::Command {
        tag: "ALTER SEQUENCE".into(),
    };
    let parts = object_name(&at.name);
    let Some(seq) = find_table(cx, &parts)? else {
        let name = parts.last().cloned().unwrap_or_default();
        if at.if_exists {
            cx.sess.notice(Notice::Missing {
                kind: "relation",
                name,
            });
            return Ok(done());
        }
        return Err(SqlError::UndefinedTable { name });
    };
    let Some(def) = seq.sequence.clone() else {
        return Err(SqlError::WrongObjectType {
            message: format!("\"{}\" is not a sequence", seq.name),
        });
    };
    if matches!(
        at.operations.as_slice(),
        [ast::AlterTableOperation::OwnerTo { .. } | ast::AlterTableOperation::RenameTable { .. }]
    ) {
        alter_sequence_as_table(cx, &seq, &at.operations)?;
        return Ok(done());
    }
    let (options, restart) = crate::seqparse::alter_sequence_options(at)?;
    change_sequence(cx, &seq, &def, options, restart)?;
    Ok(done())
}

/// Applies `ALTER SEQUENCE`'s options and RESTART to sequence `seq` (also an identity
/// column's, through `ALTER COLUMN … SET …` / `RESTART`).
fn change_sequence(
    cx: &mut Cx<'_>,
    seq: &TableRef,
    def: &SequenceDef,
    options: &[ast::SequenceOptions],
    restart: Option<Option<&ast::Expr>>,
) -> Result<(), SqlError> {
    let current = cx.st.sequences.get_mut().value(seq, def);
    let altered = crate::sequence::alter(def, options, restart, current)?;
    let mut new = altered.def;
    match altered.owned {
        Some(_) if def.identity => {
            let table = def.owner.as_ref().and_then(|(id, _)| {
                let at = cx.read_point();
                cx.reader(at).table_by_id(*id).map(|t| t.name.clone())
            });
            return Err(SqlError::UnsupportedByPostgresDetail {
                message: "cannot change ownership of identity sequence".into(),
                detail: format!(
                    "Sequence \"{}\" is linked to table \"{}\".",
                    seq.name,
                    table.unwrap_or_default()
                ),
            });
        }
        Some(Some(owner)) => new.owner = Some(sequence_owner(cx, &owner, &seq.schema)?),
        Some(None) => new.owner = None,
        None => {}
    }
    let mut table = (**seq).clone();
    table.sequence = Some(Arc::new(new.clone()));
    let p = cx.pending()?;
    p.uses_definition(seq);
    p.put_table(Arc::new(table), false)?;
    if let Some(value) = altered.restart {
        let states = cx.st.sequences.get_mut();
        let mine = cx.sess.seqs.get_mut();
        // Undone if the transaction does not commit (see SessionSeqs::restarts).
        mine.restarts.push((seq.id, current));
        crate::sequence::setval(states, mine, seq, &new, value.last, value.called)?;
    }
    Ok(())
}

/// `ALTER [COLUMN] c DROP IDENTITY [IF EXISTS]`, or an identity column's option list (`SET
/// GENERATED …`, `SET option`, `RESTART`), read as [`crate::seqparse::IdentityChange`] says.
fn alter_identity(
    cx: &mut Cx<'_>,
    table: &mut Table,
    i: usize,
    change: crate::seqparse::IdentityChange,
    op: &ast::AlterColumnOperation,
    restarts: &mut std::collections::BTreeMap<String, Option<ast::Expr>>,
) -> Result<(), SqlError> {
    use crate::seqparse::IdentityChange;
    let column = table.columns[i].name.clone();
    let Some(identity) = table.columns[i].identity else {
        if change == (IdentityChange::Drop { if_exists: true }) {
            cx.sess.notice(Notice::NotIdentity {
                column,
                table: table.name.clone(),
            });
            return Ok(());
        }
        return Err(SqlError::NotInPrerequisiteState {
            message: format!(
                "column \"{column}\" of relation \"{}\" is not an identity column",
                table.name
            ),
        });
    };
    let at = cx.read_point();
    let seq = cx.reader(at).table_by_id(identity.sequence);
    match (change, op) {
        (IdentityChange::Drop { .. }, _) => {
            // The column keeps its values and NOT NULL; its sequence goes, unless another
            // default draws from it (2BP01, as PostgreSQL's DROP SEQUENCE).
            table.columns[i].identity = None;
            if let Some(seq) = seq {
                let deps = default_dependents(cx, std::slice::from_ref(&seq), &|_, _| false)?;
                cascade_to_defaults(cx, deps, false, false, "sequence", &seq.name)?;
                cx.pending()?.drop_definition(&seq)?;
            }
        }
        (IdentityChange::Restart, ast::AlterColumnOperation::SetDefault { value }) => {
            let value = crate::seqparse::restart_value(value).cloned();
            restarts.insert(column, value);
        }
        (
            IdentityChange::Set,
            ast::AlterColumnOperation::AddGenerated {
                generated_as,
                sequence_options,
            },
        ) => {
            if let Some(g) = generated_as {
                let always = !matches!(g, ast::GeneratedAs::ByDefault);
                table.columns[i].identity = Some(crate::catalog::Identity { always, ..identity });
            }
            let options = sequence_options.as_deref().unwrap_or(&[]);
            let restart = restarts.remove(&column);
            if !options.is_empty() || restart.is_some() {
                let seq = seq.ok_or_else(|| SqlError::internal("identity without its sequence"))?;
                let def = seq
                    .sequence
                    .clone()
                    .ok_or_else(|| SqlError::internal("identity sequence without a definition"))?;
                change_sequence(
                    cx,
                    &seq,
                    &def,
                    options,
                    restart.as_ref().map(Option::as_ref),
                )?;
            }
        }
        _ => return Err(SqlError::internal("unexpected identity alteration")),
    }
    Ok(())
}

/// `ALTER TABLE` (or `ALTER SEQUENCE`) naming a sequence: `OWNER TO` the server's role (a
/// no-op) and `RENAME TO` (PostgreSQL's other actions on a sequence through ALTER TABLE are
/// storage, which RockLake does not have). The
/// serial defaults that name the sequence are rewritten to the new name: RockLake keeps a
/// default as text, where PostgreSQL keeps the sequence's OID.
fn alter_sequence_as_table(
    cx: &mut Cx<'_>,
    seq: &TableRef,
    ops: &[ast::AlterTableOperation],
) -> Result<Output, SqlError> {
    if let [ast::AlterTableOperation::OwnerTo { new_owner }] = ops {
        check_new_owner(cx, new_owner)?;
        return Ok(Output::Command {
            tag: "ALTER TABLE".into(),
        });
    }
    let [ast::AlterTableOperation::RenameTable {
        table_name: ast::RenameTableNameKind::To(new),
    }] = ops
    else {
        let action = ops
            .first()
            .map(|op| {
                op.to_string()
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        return Err(SqlError::WrongObjectTypeDetail {
            message: format!(
                "ALTER action {} cannot be performed on relation \"{}\"",
                action.to_uppercase(),
                seq.name
            ),
            detail: "This operation is not supported for sequences.".into(),
        });
    };
    let parts = object_name(new);
    let [new_name] = parts.as_slice() else {
        return Err(syntax_at("."));
    };
    let at = cx.read_point();
    if relation_name_taken(&cx.reader(at), &seq.schema, new_name) {
        return Err(SqlError::DuplicateTable {
            name: new_name.clone(),
        });
    }
    let new_default = serial_default(&seq.schema, new_name);
    // A serial default shows the sequence's name: it follows. Another expression naming it
    // by text would name nothing after the rename.
    let mut altered: std::collections::BTreeMap<u32, Table> = Default::default();
    for (_, t, ci) in default_dependents(cx, std::slice::from_ref(seq), &|_, _| false)? {
        let c = &t.columns[ci];
        if c.serial != Some(seq.id) {
            return Err(SqlError::feature(format!(
                "renaming sequence \"{}\", which the default of column \"{}\" of table \"{}\" names in an expression",
                seq.name, c.name, t.name
            )));
        }
        let a = altered.entry(t.id).or_insert_with(|| (*t).clone());
        a.columns[ci].default_sql = Some(new_default.clone());
    }
    for a in altered.into_values() {
        let p = cx.pending()?;
        p.uses_definition(&a);
        p.put_table(Arc::new(a), false)?;
    }
    let mut renamed = (**seq).clone();
    renamed.name = new_name.clone();
    let p = cx.pending()?;
    p.uses_definition(seq);
    p.put_table(Arc::new(renamed), false)?;
    Ok(Output::Command {
        tag: "ALTER TABLE".into(),
    })
}

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
type Dependent = (String, TableRef, usize);

/// The column defaults that draw from any of `seqs` — a serial column's by the sequence's id,
/// any other `nextval('…')` by the name it gives — except the columns `skip` names (table id,
/// column position: those going away with the sequences).
fn default_dependents(
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
fn cascade_to_defaults(
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
fn drop_sequences(
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

fn drop_tables(
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

fn refuse_system_column_name(name: &str) -> Result<(), SqlError> {
    if SYSTEM_COLUMNS.contains(&name) {
        return Err(SqlError::SystemColumnName {
            name: name.to_string(),
        });
    }
    Ok(())
}

fn create_schema(
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
const MAX_REPORTED_DEPS: usize = 100;

/// `DROP SCHEMA [IF EXISTS] name, … [CASCADE | RESTRICT]`: every name is checked before any is
/// dropped; a schema with tables needs CASCADE, which drops them first (one NOTICE lists them,
/// as PostgreSQL's). The built-in schemas stay.
fn drop_schemas(
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
fn reported(lines: impl Iterator<Item = String>) -> String {
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
fn lock_tables(cx: &mut Cx<'_>, l: &ast::Lock) -> Result<Output, SqlError> {
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
fn alter_schema(cx: &mut Cx<'_>, a: &ast::AlterSchema) -> Result<Output, SqlError> {
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

/// `ALTER TABLE`; then the views reading the table must still read it as they did.
fn alter_table(cx: &mut Cx<'_>, at: &ast::AlterTable) -> Result<Output, SqlError> {
    let before = find_table(cx, &object_name(&at.name))?;
    let owner_only = at
        .operations
        .iter()
        .all(|op| matches!(op, ast::AlterTableOperation::OwnerTo { .. }));
    if let Some(v) = before.as_ref().filter(|t| t.view.is_some()) {
        cx.check_writable("ALTER TABLE")?;
        let done = Output::Command {
            tag: "ALTER TABLE".into(),
        };
        // PostgreSQL's ALTER TABLE renames a view and its columns too.
        match at.operations.as_slice() {
            [ast::AlterTableOperation::RenameTable {
                table_name: ast::RenameTableNameKind::To(new),
            }] => {
                let [new] = object_name(new).try_into().map_err(|_| syntax_at("."))?;
                crate::view::rename_view(cx, v, &new)?;
                return Ok(done);
            }
            [ast::AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            }] => {
                crate::view::rename_view_column(
                    cx,
                    v,
                    &crate::query::ident(old_column_name),
                    &crate::query::ident(new_column_name),
                )?;
                return Ok(done);
            }
            _ => {}
        }
        if !owner_only {
            return Err(SqlError::FeatureNotSupportedHint {
                what: format!("ALTER TABLE of view \"{}\"", v.name),
                hint: "Drop the view and create it again as it should be.".into(),
            });
        }
    }
    // A column renamed: the views reading it are rewritten to name it anew.
    let renamed_in = match (&before, at.operations.as_slice()) {
        (
            Some(t),
            [ast::AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            }],
        ) if t.sequence.is_none() => crate::view::plan_column_rename(
            cx,
            t,
            &crate::query::ident(old_column_name),
            &crate::query::ident(new_column_name),
        )?,
        _ => None,
    };
    let out = alter_table_definition(cx, at)?;
    if let Some(t) = before.filter(|_| !owner_only) {
        let mut change = crate::view::Change::of_alter(&at.operations);
        if !change.renamed.is_empty() {
            cx.pending()?.renamed.push(t.id);
        }
        if let Some(planned) = renamed_in {
            crate::view::apply_column_rename(cx, planned)?;
            change.renamed.clear();
        }
        if change.renamed_relation {
            crate::view::follow_renamed(cx, &t)?;
        }
        crate::view::check_dependent_views(cx, &t, &change)?;
    }
    Ok(out)
}

fn alter_table_definition(cx: &mut Cx<'_>, at: &ast::AlterTable) -> Result<Output, SqlError> {
    cx.check_writable("ALTER TABLE")?;
    let parts = object_name(&at.name);
    let Some(t) = find_table(cx, &parts)? else {
        if at.if_exists {
            cx.sess.notice(Notice::Missing {
                kind: "relation",
                name: parts.last().cloned().unwrap_or_default(),
            });
            return Ok(Output::Command {
                tag: "ALTER TABLE".into(),
            });
        }
        return Err(SqlError::UndefinedTable {
            name: parts.last().cloned().unwrap_or_default(),
        });
    };
    if t.sequence.is_some() {
        return alter_sequence_as_table(cx, &t, &at.operations);
    }
    // OWNER TO alone changes nothing here: no new definition (which would make DuckDB reload
    // the table and other writers' commits conflict).
    let owner_only =
        |op: &ast::AlterTableOperation| matches!(op, ast::AlterTableOperation::OwnerTo { .. });
    if !at.operations.is_empty() && at.operations.iter().all(owner_only) {
        for op in &at.operations {
            if let ast::AlterTableOperation::OwnerTo { new_owner } = op {
                check_new_owner(cx, new_owner)?;
            }
        }
        return Ok(Output::Command {
            tag: "ALTER TABLE".into(),
        });
    }
    cx.pending()?.uses_definition(&t);
    let mut table = (*t).clone();
    // Added columns with a default, to fill into the rows already there.
    let mut fills: Vec<(String, String)> = Vec::new();
    // Positions of dropped columns, each in the column list left by the ones before it.
    let mut dropped: Vec<usize> = Vec::new();
    // Columns made NOT NULL, whose rows must hold no NULL (positions after every drop).
    let mut validate_not_null: Vec<usize> = Vec::new();
    // Columns given another type: position, and the new value's expression over the row as
    // it was before any type changed (USING, or the column itself), bound against
    // `before_retype`.
    let mut retyped: Vec<(usize, BExpr)> = Vec::new();
    let mut before_retype: Option<Table> = None;
    // ADD PRIMARY KEY / DROP CONSTRAINT of the key: the rows move under their new key.
    let mut rekey = false;
    // The key's name when this statement drops it: free for a key it adds.
    let mut dropped_key_name: Option<String> = None;
    // Names of the sequences this statement creates (not yet visible to its reads).
    let mut chosen_sequences: Vec<String> = Vec::new();
    // Identity columns' `RESTART`s (by column), for the option lists that follow them.
    let mut identity_restarts: std::collections::BTreeMap<String, Option<ast::Expr>> =
        Default::default();
    // PostgreSQL's grammar has RENAME only as the whole statement.
    let rename = |op: &ast::AlterTableOperation| {
        matches!(
            op,
            ast::AlterTableOperation::RenameTable { .. }
                | ast::AlterTableOperation::RenameColumn { .. }
                | ast::AlterTableOperation::RenameConstraint { .. }
        )
    };
    if at.operations.len() > 1 {
        if let Some(i) = at.operations.iter().position(rename) {
            return Err(syntax_at(if i == 0 { "," } else { "RENAME" }));
        }
    }
    // Subcommands run in PostgreSQL's passes (drops first), each pass in the written order.
    let mut ops: Vec<&ast::AlterTableOperation> = at.operations.iter().collect();
    ops.sort_by_key(|op| alter_pass(op));
    for op in ops {
        match op {
            ast::AlterTableOperation::RenameTable { table_name } => {
                let ast::RenameTableNameKind::To(new) = table_name else {
                    return Err(syntax_at("AS"));
                };
                let parts = object_name(new);
                let [new_name] = parts.as_slice() else {
                    return Err(syntax_at("."));
                };
                let at = cx.read_point();
                if relation_name_taken(&cx.reader(at), &table.schema, new_name) {
                    return Err(SqlError::DuplicateTable {
                        name: new_name.clone(),
                    });
                }
                table.name = new_name.clone();
            }
            ast::AlterTableOperation::RenameConstraint { old_name, new_name } => {
                // The primary key is the one constraint a table has here (its index is
                // renamed with it, as in PostgreSQL).
                let (old, new) = (crate::query::ident(old_name), crate::query::ident(new_name));
                if table.primary_key.is_empty() || table.pkey_name != old {
                    return Err(SqlError::UndefinedObject {
                        message: format!(
                            "constraint \"{old}\" for table \"{}\" does not exist",
                            table.name
                        ),
                    });
                }
                let at = cx.read_point();
                if relation_name_taken(&cx.reader(at), &table.schema, &new) {
                    return Err(SqlError::DuplicateTable { name: new });
                }
                table.pkey_name = new;
            }
            ast::AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let (old, new) = (
                    crate::query::ident(old_column_name),
                    crate::query::ident(new_column_name),
                );
                let Some(i) = table.columns.iter().position(|c| c.name == old) else {
                    if SYSTEM_COLUMNS.contains(&old.as_str()) {
                        return Err(SqlError::UnsupportedByPostgres {
                            message: format!("cannot rename system column \"{old}\""),
                        });
                    }
                    return Err(SqlError::UndefinedColumn { name: old });
                };
                refuse_system_column_name(&new)?;
                if table.columns.iter().any(|c| c.name == new) {
                    return Err(SqlError::DuplicateColumn {
                        column: new,
                        table: table.name.clone(),
                    });
                }
                // The column's sequences follow it.
                for s in owned_sequences(cx, table.id, Some(&table.columns[i].name)) {
                    let mut moved = (*s).clone();
                    if let Some(def) = moved.sequence.as_mut() {
                        Arc::make_mut(def).owner = Some((table.id, new.clone()));
                    }
                    let p = cx.pending()?;
                    p.uses_definition(&s);
                    p.put_table(Arc::new(moved), false)?;
                }
                table.columns[i].name = new;
            }
            ast::AlterTableOperation::AlterColumn { column_name, op } => {
                // An identity alteration rides on a marked pseudo-column (seqparse).
                let written = crate::query::ident(column_name);
                let (change, cname) = match crate::seqparse::identity_change(&written) {
                    Some((c, n)) => (Some(c), n.to_string()),
                    None => (None, written),
                };
                let Some(i) = table.columns.iter().position(|c| c.name == cname) else {
                    if SYSTEM_COLUMNS.contains(&cname.as_str()) {
                        return Err(SqlError::UnsupportedByPostgres {
                            message: format!("cannot alter system column \"{cname}\""),
                        });
                    }
                    return Err(SqlError::UndefinedColumn {
                        name: format!("{cname}\" of relation \"{}", table.name),
                    });
                };
                if let Some(change) = change {
                    alter_identity(cx, &mut table, i, change, op, &mut identity_restarts)?;
                    continue;
                }
                match op {
                    ast::AlterColumnOperation::SetNotNull => {
                        if !table.columns[i].not_null {
                            table.columns[i].not_null = true;
                            validate_not_null.push(i);
                        }
                    }
                    ast::AlterColumnOperation::DropNotNull
                    | ast::AlterColumnOperation::SetDefault { .. }
                    | ast::AlterColumnOperation::DropDefault
                        if table.columns[i].identity.is_some() =>
                    {
                        return Err(SqlError::SyntaxHint {
                            message: format!(
                                "column \"{cname}\" of relation \"{}\" is an identity column",
                                table.name
                            ),
                            hint: if matches!(op, ast::AlterColumnOperation::DropDefault) {
                                "Use ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY instead."
                            } else {
                                ""
                            },
                        });
                    }
                    ast::AlterColumnOperation::DropNotNull => {
                        if table.primary_key.contains(&i) {
                            return Err(SqlError::InvalidTableDefinition {
                                message: format!("column \"{cname}\" is in a primary key"),
                            });
                        }
                        table.columns[i].not_null = false;
                    }
                    ast::AlterColumnOperation::SetDefault { value } => {
                        let ty = table.columns[i].ty;
                        // Another default replaces a serial column's (its sequence stays).
                        table.columns[i].serial = None;
                        table.columns[i].default_sql = stored_default(value, ty);
                        check_default(cx, &table.columns[i])?;
                        let schema = table.schema.clone();
                        bind_sequence_default(cx, &schema, &mut table.columns[i])?;
                    }
                    ast::AlterColumnOperation::DropDefault => {
                        table.columns[i].default_sql = None;
                        table.columns[i].serial = None;
                    }
                    ast::AlterColumnOperation::SetDataType {
                        data_type, using, ..
                    } => {
                        if table.primary_key.contains(&i)
                            || table.indexes.iter().any(|x| x.columns.contains(&i))
                        {
                            return Err(SqlError::feature(
                                "ALTER COLUMN TYPE of a primary key or indexed column",
                            ));
                        }
                        let old = before_retype.get_or_insert_with(|| table.clone()).clone();
                        let (ty, typmod) = sql_type(data_type)?;
                        if let Some(identity) = table.columns[i].identity {
                            // The sequence takes the new type, as ALTER SEQUENCE … AS does.
                            retype_identity_sequence(cx, identity.sequence, ty)?;
                        }
                        let expr = retype_expr(cx, &old, i, ty, using.as_ref())?;
                        let c = &mut table.columns[i];
                        c.ty = ty;
                        c.typmod = typmod;
                        // The default goes on in the new type, as PostgreSQL converts it.
                        check_default(cx, c).map_err(|_| SqlError::DatatypeMismatch {
                            message: format!(
                                "default for column \"{cname}\" cannot be cast automatically to type {}",
                                crate::query::format_type(ty, typmod)
                            ),
                            hint: None,
                        })?;
                        if retyped.iter().any(|(p, _)| *p == i) {
                            return Err(SqlError::UnsupportedByPostgres {
                                message: format!("cannot alter type of column \"{cname}\" twice"),
                            });
                        }
                        retyped.push((i, expr));
                    }
                    ast::AlterColumnOperation::AddGenerated {
                        generated_as,
                        sequence_options,
                    } => {
                        // PostgreSQL's grammar needs ALWAYS or BY DEFAULT here.
                        if generated_as.is_none() {
                            return Err(SqlError::Syntax {
                                message: "syntax error at or near \"AS\"".into(),
                            });
                        }
                        // PostgreSQL creates the sequence first (its options, its name), then
                        // checks the column.
                        let col = &table.columns[i];
                        if !matches!(col.ty, PgType::Int2 | PgType::Int4 | PgType::Int8) {
                            return Err(SqlError::InvalidParameter {
                                message:
                                    "identity column type must be smallint, integer, or bigint"
                                        .into(),
                            });
                        }
                        let (options, given) = crate::seqparse::identity_sequence_name(
                            sequence_options.as_deref().unwrap_or(&[]),
                        );
                        let def = crate::sequence::define(&options, col.ty)?.0;
                        let seq_name = column_sequence_name(
                            cx,
                            given,
                            (&table.schema, &table.name),
                            &cname,
                            &chosen_sequences,
                        )?;
                        let refused = |what: &str| SqlError::NotInPrerequisiteState {
                            message: format!(
                                "column \"{cname}\" of relation \"{}\" {what}",
                                table.name
                            ),
                        };
                        if !col.not_null {
                            return Err(refused(
                                "must be declared NOT NULL before identity can be added",
                            ));
                        }
                        if col.identity.is_some() {
                            return Err(refused("is already an identity column"));
                        }
                        if col.default_sql.is_some() {
                            return Err(refused("already has a default value"));
                        }
                        chosen_sequences.push(seq_name.clone());
                        let always = !matches!(generated_as, Some(ast::GeneratedAs::ByDefault));
                        let mut col = table.columns[i].clone();
                        let seq = link_sequence(
                            cx,
                            (&table.schema.clone(), table.id),
                            &seq_name,
                            &mut col,
                            def,
                            Some(always),
                        );
                        table.columns[i] = col;
                        cx.pending()?.put_table(Arc::new(seq), true)?;
                    }
                    other => {
                        return Err(SqlError::feature(format!(
                            "ALTER TABLE … ALTER COLUMN … {}",
                            crate::query::leading_words(&other.to_string(), 2)
                        )))
                    }
                }
            }
            ast::AlterTableOperation::AddColumn {
                if_not_exists,
                column_def,
                ..
            } => {
                let cname =
                    object_name(&ast::ObjectName::from(vec![column_def.name.clone()])).concat();
                refuse_system_column_name(&cname)?;
                if table.columns.iter().any(|c| c.name == cname) {
                    if *if_not_exists {
                        cx.sess.notice(Notice::ColumnExists {
                            column: cname,
                            table: table.name.clone(),
                        });
                        continue;
                    }
                    return Err(SqlError::DuplicateColumn {
                        column: cname,
                        table: table.name.clone(),
                    });
                }
                let serial = serial_type(&column_def.data_type);
                let (ty, typmod) = match serial {
                    Some(t) => (t, -1),
                    None => sql_type(&column_def.data_type)
                        .map_err(|e| type_after(e, &column_def.name, &column_def.data_type))?,
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
                for opt in &column_def.options {
                    match &opt.option {
                        ast::ColumnOption::NotNull => col.not_null = true,
                        ast::ColumnOption::Null => {}
                        ast::ColumnOption::Default(_)
                            if serial.is_some() || col.default_sql.is_some() =>
                        {
                            return Err(SqlError::Syntax {
                                message: format!(
                                    "multiple default values specified for column \"{}\" of table \"{}\"",
                                    col.name, table.name
                                ),
                            })
                        }
                        ast::ColumnOption::Default(e) => col.default_sql = stored_default(e, ty),
                        ast::ColumnOption::Generated {
                            generated_as:
                                g @ (ast::GeneratedAs::Always | ast::GeneratedAs::ByDefault),
                            sequence_options,
                            generation_expr: None,
                            ..
                        } if identity.is_none() => {
                            identity = Some((
                                *g == ast::GeneratedAs::Always,
                                sequence_options.as_deref().unwrap_or(&[]),
                            ));
                        }
                        other => {
                            return Err(SqlError::feature(format!(
                                "column option {other} in ALTER TABLE"
                            )))
                        }
                    }
                }
                match column_sequence(&mut col, serial.is_some(), identity, &table.name)? {
                    Some(planned) => {
                        // The sequence exists before the rows are filled from it, one value
                        // per row already there.
                        let seq_name = column_sequence_name(
                            cx,
                            planned.name.as_ref(),
                            (&table.schema, &table.name),
                            &col.name,
                            &chosen_sequences,
                        )?;
                        chosen_sequences.push(seq_name.clone());
                        let seq = link_sequence(
                            cx,
                            (&table.schema.clone(), table.id),
                            &seq_name,
                            &mut col,
                            planned.def,
                            planned.always,
                        );
                        cx.pending()?.put_table(Arc::new(seq), true)?;
                        fills.push((col.name.clone(), "DEFAULT".into()));
                        table.columns.push(col);
                        continue;
                    }
                    None => {
                        check_default(cx, &col)?;
                        let schema = table.schema.clone();
                        bind_sequence_default(cx, &schema, &mut col)?;
                    }
                }
                if col.not_null && col.default_sql.is_none() {
                    // Every row already there would hold NULL in it: only an empty table
                    // takes it (checked below, and again at commit).
                    validate_not_null.push(table.columns.len());
                }
                if let Some(d) = &col.default_sql {
                    fills.push((col.name.clone(), d.clone()));
                }
                table.columns.push(col);
            }
            ast::AlterTableOperation::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                for name in column_names {
                    let cname = crate::query::ident(name);
                    if SYSTEM_COLUMNS.contains(&cname.as_str()) {
                        return Err(SqlError::UnsupportedByPostgres {
                            message: format!("cannot drop system column \"{cname}\""),
                        });
                    }
                    let Some(i) = table.columns.iter().position(|c| c.name == cname) else {
                        if *if_exists {
                            cx.sess.notice(Notice::ColumnMissing {
                                column: cname,
                                table: table.name.clone(),
                            });
                            continue;
                        }
                        return Err(SqlError::UndefinedColumn {
                            name: format!("{cname}\" of relation \"{}", table.name),
                        });
                    };
                    if table.primary_key.contains(&i)
                        || table.indexes.iter().any(|x| x.columns.contains(&i))
                    {
                        return Err(SqlError::feature(
                            "DROP COLUMN of a primary key or indexed column",
                        ));
                    }
                    // The column's sequences (serial, identity) go with it; a default of
                    // another column that draws from one stops the drop (2BP01).
                    let owned = owned_sequences(cx, table.id, Some(&cname));
                    if !owned.is_empty() {
                        let (tid, ci) = (table.id, i);
                        let deps = default_dependents(cx, &owned, &|t, c| t == tid && c == ci)?;
                        let what = {
                            let at = cx.read_point();
                            format!(
                                "{cname} of table {}",
                                name_in_message(&cx.reader(at), &table)
                            )
                        };
                        cascade_to_defaults(cx, deps, false, false, "column", &what)?;
                        crate::view::cascade_to_views(
                            cx,
                            &owned,
                            false,
                            false,
                            "column",
                            Some(&what),
                        )?;
                    }
                    for s in owned {
                        cx.pending()?.drop_definition(&s)?;
                    }
                    table.columns.remove(i);
                    let shift = |c: &mut usize| {
                        if *c > i {
                            *c -= 1;
                        }
                    };
                    table.primary_key.iter_mut().for_each(shift);
                    for x in &mut table.indexes {
                        x.columns.iter_mut().for_each(shift);
                    }
                    dropped.push(i);
                }
            }
            ast::AlterTableOperation::OwnerTo { new_owner } => check_new_owner(cx, new_owner)?,
            // The primary key is the one named constraint a table has here: dropping it moves
            // the rows back under row ids (its columns stay NOT NULL, as in PostgreSQL).
            ast::AlterTableOperation::DropConstraint {
                if_exists,
                name: cname,
                ..
            } => {
                let cname = crate::query::ident(cname);
                if !table.primary_key.is_empty() && table.pkey_name == cname {
                    table.primary_key.clear();
                    // The key's index goes, and its comments with it.
                    table.pkey_comment = None;
                    table.pkey_constraint_comment = None;
                    dropped_key_name = Some(cname);
                    rekey = true;
                } else if *if_exists {
                    cx.sess.notice(Notice::ConstraintMissing {
                        constraint: cname,
                        table: table.name.clone(),
                    });
                } else {
                    return Err(SqlError::UndefinedObject {
                        message: format!(
                            "constraint \"{cname}\" of relation \"{}\" does not exist",
                            table.name
                        ),
                    });
                }
            }
            ast::AlterTableOperation::AddConstraint {
                constraint: ast::TableConstraint::PrimaryKey(p),
                not_valid,
            } => {
                if *not_valid {
                    return Err(SqlError::UnsupportedByPostgres {
                        message: "PRIMARY KEY constraints cannot be marked NOT VALID".into(),
                    });
                }
                refuse_key_options(p)?;
                if !table.primary_key.is_empty() {
                    return Err(multiple_primary_keys(&table.name));
                }
                let mut key = Vec::with_capacity(p.columns.len());
                for col in &p.columns {
                    let cname = key_column_name(col)?;
                    let Some(i) = table.columns.iter().position(|c| c.name == cname) else {
                        return Err(SqlError::UndefinedColumn {
                            name: format!("{cname}\" of relation \"{}", table.name),
                        });
                    };
                    if key.contains(&i) {
                        return Err(SqlError::ColumnTwiceInKey { name: cname });
                    }
                    key.push(i);
                }
                check_key_types(&table.columns, &key)?;
                // NOT NULL, checked when the rows move (rekey_rows).
                for &i in &key {
                    table.columns[i].not_null = true;
                }
                let at = cx.read_point();
                let given = p.name.as_ref().map(crate::query::ident);
                table.pkey_name = primary_key_name(
                    &cx.reader(at),
                    &table.schema,
                    &table.name,
                    given,
                    &[],
                    dropped_key_name.as_deref(),
                )?;
                table.primary_key = key;
                rekey = true;
            }
            other => {
                return Err(SqlError::feature(format!(
                    "ALTER TABLE {}",
                    crate::query::leading_words(&other.to_string(), 2)
                )))
            }
        }
    }
    let (schema, name) = (table.schema.clone(), table.name.clone());
    // Rows are stored by column position: the rows already there (read with the old
    // definition) lose the dropped columns' values, keeping their keys, row ids and ctids.
    let rewrite = !(dropped.is_empty() && retyped.is_empty());
    let table_id = table.id;
    // A changed key moves the rows last, once the statement's other changes (an added
    // column's fill, which may be the new key) are in them under the old key.
    let keyed = if rekey {
        if rewrite {
            return Err(SqlError::feature(
                "changing the primary key together with DROP COLUMN or ALTER COLUMN TYPE",
            ));
        }
        let mut keyed = table.clone();
        // A snapshot from before would look rows up by a key they are not stored under.
        keyed.layout = crate::catalog::LAYOUT_THIS_COMMIT;
        table.primary_key = t.primary_key.clone();
        table.pkey_name = t.pkey_name.clone();
        Some(keyed)
    } else {
        None
    };
    if rewrite {
        table.layout = crate::catalog::LAYOUT_THIS_COMMIT;
        let rewritten = rewrite_rows(cx, &t, &dropped, before_retype.as_ref(), &retyped, &table)?;
        cx.pending()?.put_table(Arc::new(table.clone()), false)?;
        for (lk, row, seq) in rewritten {
            let size = buffered_size(&row, &t);
            cx.pending()?.put_row(
                lk,
                RowWrite {
                    table_id,
                    row: Some(row),
                    base_seq: seq,
                    inserted: false,
                },
                size,
            )?;
        }
    } else {
        cx.pending()?.put_table(Arc::new(table.clone()), false)?;
    }
    // A column filled with its default below is checked by the fill (its NOT NULL).
    validate_not_null.retain(|i| {
        let filled_here = table
            .columns
            .get(*i)
            .is_some_and(|c| fills.iter().any(|(name, _)| *name == c.name));
        !filled_here
    });
    if !validate_not_null.is_empty() {
        // The rows as the altered definition reads them (a drop rewrote them all into this
        // transaction's writes; otherwise an added column is past the end of every row).
        let at = cx.read_point();
        let rcx = cx.reader(at);
        rcx.check_layout(&t)?;
        for (_, row, _) in visible_rows(&rcx, &t)? {
            if let Some(&i) = validate_not_null.iter().find(|&&i| datum_is_null(&row, i)) {
                return Err(table.column_contains_nulls(i));
            }
        }
    }
    // Rows already there read an added column's default, as in PostgreSQL (which keeps a
    // constant default as the column's "missing value" and rewrites the table for a volatile
    // one): here they are rewritten with it, in the same transaction, as an UPDATE would.
    // One UPDATE for them all: each added NOT NULL column (a serial one) must hold its value
    // when the row is checked.
    let filled = !fills.is_empty();
    if filled {
        let sets: Vec<String> = fills
            .iter()
            .map(|(column, default)| format!("{} = {default}", quoted(column)))
            .collect();
        run_generated_dml(
            cx,
            &format!(
                "UPDATE {}.{} SET {}",
                quoted(&schema),
                quoted(&name),
                sets.join(", ")
            ),
        )?;
    }
    if let Some(keyed) = keyed {
        rekey_rows(cx, &table, &keyed)?;
        cx.pending()?.put_table(Arc::new(keyed), false)?;
    }
    if rewrite || filled || rekey || !validate_not_null.is_empty() {
        let at = cx.read_point();
        cx.pending()?.read_whole_table(table_id, at);
    }
    Ok(Output::Command {
        tag: "ALTER TABLE".into(),
    })
}

/// ADD PRIMARY KEY: moves every row of `t` (keyed by row id, as this transaction sees them)
/// under its key in `keyed`, the definition with the new primary key, after checking that no
/// two rows with the key's columns all non-NULL share it (PostgreSQL builds the unique index
/// first), then that no row has a NULL in them (its phase 3). The rows keep their row ids and
/// tuples; the old keys get tombstones, so a snapshot from before reads the rows it read.
fn rekey_rows(cx: &mut Cx<'_>, t: &Table, keyed: &Table) -> Result<(), SqlError> {
    let at = cx.read_point();
    let rows = {
        let rcx = cx.reader(at);
        rcx.check_layout(t)?;
        visible_rows(&rcx, t)?
    };
    let mut moved: std::collections::BTreeMap<Vec<u8>, usize> = Default::default();
    let mut duplicate: Option<Vec<u8>> = None;
    // PostgreSQL's phase 3 checks each row's NOT NULL columns in column order.
    let mut by_position = keyed.primary_key.clone();
    by_position.sort_unstable();
    let mut first_null: Option<usize> = None;
    for (i, (_, row, _)) in rows.iter().enumerate() {
        if let Some(&c) = by_position.iter().find(|&&c| datum_is_null(row, c)) {
            first_null = first_null.or(Some(c));
            continue;
        }
        let key = stored_row_key(keyed, row)?;
        if moved.insert(key.clone(), i).is_some() && duplicate.as_ref().is_none_or(|d| key < *d) {
            duplicate = Some(key);
        }
    }
    if let Some(key) = duplicate {
        let row = moved.get(&key).and_then(|&i| rows.get(i)).map(|r| &r.1);
        return Err(SqlError::UniqueIndexDuplicates {
            index: keyed.pkey_name.clone(),
            schema: keyed.schema.clone(),
            table: keyed.name.clone(),
            detail: format!("Key {} is duplicated.", key_text(keyed, row)),
        });
    }
    if let Some(c) = first_null {
        return Err(keyed.column_contains_nulls(c));
    }
    let table_id = t.id;
    // Tombstones first: a new key may equal an old row id's key, and must end up holding
    // the row.
    for (lk, _, seq) in &rows {
        cx.pending()?.put_row(
            lk.clone(),
            RowWrite {
                table_id,
                row: None,
                base_seq: *seq,
                inserted: false,
            },
            0,
        )?;
    }
    for (key, i) in moved {
        let Some((_, row, _)) = rows.get(i) else {
            continue;
        };
        let size = buffered_size(row, keyed);
        cx.pending()?.put_row(
            key,
            RowWrite {
                table_id,
                row: Some(row.clone()),
                base_seq: None,
                inserted: true,
            },
            size,
        )?;
    }
    Ok(())
}

/// `OWNER TO`: RockLake has one login role, which owns everything. Giving an object to it is
/// a no-op, as in PostgreSQL; to another role it cannot be represented.
pub(crate) fn check_new_owner(cx: &Cx<'_>, owner: &ast::Owner) -> Result<(), SqlError> {
    let ast::Owner::Ident(id) = owner else {
        return Ok(());
    };
    let name = crate::query::ident(id);
    if name == cx.sess.user {
        return Ok(());
    }
    if crate::pgcatalog::predefined_role(&name) {
        return Err(SqlError::FeatureNotSupportedHint {
            what: format!("changing the owner to role \"{name}\""),
            hint: format!(
                "RockLake has one login role, \"{}\", which owns every object.",
                cx.sess.user
            ),
        });
    }
    Err(SqlError::UndefinedObject {
        message: format!("role \"{name}\" does not exist"),
    })
}

/// The rows of `t` (as this transaction sees them) rewritten into the altered definition
/// `new`: the dropped positions removed in order, then each retyped column's value computed
/// over the row as `before_retype` reads it and converted as an assignment would. Keys, row
/// ids, tuples and base versions are kept.
fn rewrite_rows(
    cx: &mut Cx<'_>,
    t: &Table,
    dropped: &[usize],
    before_retype: Option<&Table>,
    retyped: &[(usize, BExpr)],
    new: &Table,
) -> Result<Vec<crate::engine::VisibleRow>, SqlError> {
    let at = cx.read_point();
    let rcx = cx.reader(at);
    rcx.check_layout(t)?;
    let mut rows = visible_rows(&rcx, t)?;
    let exec = Executor::new(&rcx);
    for (_, row, _) in &mut rows {
        rcx.tick()?;
        for &i in dropped {
            if i < row.values.len() {
                row.values.remove(i);
            }
        }
        let Some(old) = before_retype else {
            continue;
        };
        let values = row_values(old, row.clone())?;
        let env = Env {
            row: &values,
            parent: None,
            aggs: None,
        };
        for (i, e) in retyped {
            let v = assign(&new.columns[*i], exec.eval(e, &env)?)?;
            if let Some(slot) = row.values.get_mut(*i) {
                *slot = to_datum(&v);
            } else {
                row.values.resize(*i, pb::Datum::default());
                row.values.push(to_datum(&v));
            }
        }
    }
    Ok(rows)
}

/// The value ALTER COLUMN … TYPE gives column `i` of a row of `t` (before the change): the
/// USING expression or the column itself, which must convert to `ty` as an assignment
/// (PostgreSQL's 42804 and hints otherwise).
fn retype_expr(
    cx: &mut Cx<'_>,
    t: &Table,
    i: usize,
    ty: PgType,
    using: Option<&ast::Expr>,
) -> Result<BExpr, SqlError> {
    let c = &t.columns[i];
    let target = crate::query::format_type(ty, -1);
    let at = cx.read_point();
    let rcx = cx.reader(at);
    let (e, from) = match using {
        Some(u) => {
            refuse_in_expression(u, "transform expression", false)?;
            let scope = table_scope(t, &t.name);
            let mut binder = Binder::new(&rcx);
            let (e, from) = binder.bind_expr(u, &scope, None)?;
            if !crate::types::assignable(from, ty) {
                return Err(SqlError::DatatypeMismatch {
                    message: format!(
                        "result of USING clause for column \"{}\" cannot be cast automatically to type {target}",
                        c.name
                    ),
                    hint: Some("You might need to add an explicit cast.".into()),
                });
            }
            (e, from)
        }
        None => {
            if !crate::types::assignable(c.ty, ty) {
                return Err(SqlError::DatatypeMismatch {
                    message: format!(
                        "column \"{}\" cannot be cast automatically to type {target}",
                        c.name
                    ),
                    hint: Some(format!(
                        "You might need to specify \"USING {}::{target}\".",
                        crate::pgcatalog::quote_ident(&c.name)
                    )),
                });
            }
            (BExpr::Col(i), c.ty)
        }
    };
    crate::query::assignment(e, from, ty)
}

/// Whether a relation of schema `schema` (a table or a primary-key index) is named `name`.
pub(crate) fn relation_name_taken(rcx: &ReadCx<'_>, schema: &str, name: &str) -> bool {
    rcx.relation_named(schema, name) || crate::pgcatalog::columns(Some(schema), name).is_some()
}

/// The name of a new primary key's constraint and index: the one given (42P07 when a
/// relation of the schema, or one in `taken`, has it), or PostgreSQL's choice: `t_pkey`, else
/// `t_pkey1`, `t_pkey2`, … past the names taken.
fn primary_key_name(
    rcx: &ReadCx<'_>,
    schema: &str,
    table: &str,
    given: Option<String>,
    taken: &[String],
    freed: Option<&str>,
) -> Result<String, SqlError> {
    let used = |n: &String| {
        freed != Some(n.as_str()) && relation_name_taken(rcx, schema, n) || taken.contains(n)
    };
    if let Some(n) = given {
        if used(&n) {
            return Err(SqlError::DuplicateTable { name: n });
        }
        return Ok(n);
    }
    let base = format!("{table}_pkey");
    let mut n = base.clone();
    let mut k = 0;
    while used(&n) {
        k += 1;
        n = format!("{base}{k}");
    }
    Ok(n)
}

/// The column a key names (`PRIMARY KEY (a, b)`): a plain name, as PostgreSQL's grammar has it.
fn key_column_name(col: &ast::IndexColumn) -> Result<String, SqlError> {
    match &col.column.expr {
        ast::Expr::Identifier(_) if col.operator_class.is_some() => {
            Err(SqlError::feature("operator classes in a PRIMARY KEY"))
        }
        ast::Expr::Identifier(id) => Ok(crate::query::ident(id)),
        other => Err(syntax_at(
            other.to_string().split_whitespace().nth(1).unwrap_or("("),
        )),
    }
}

/// A primary key's index options: RockLake's key is the row order itself, checked at once.
fn refuse_key_options(p: &ast::PrimaryKeyConstraint) -> Result<(), SqlError> {
    // NOT DEFERRABLE and INITIALLY IMMEDIATE restate what every key is.
    let deferred = p.characteristics.as_ref().is_some_and(|c| {
        c.deferrable == Some(true)
            || c.initially == Some(ast::DeferrableInitial::Deferred)
            || c.enforced == Some(false)
    });
    if !p.include.is_empty()
        || p.index_type.is_some()
        || p.index_name.is_some()
        || !p.index_options.is_empty()
        || deferred
    {
        return Err(SqlError::feature(
            "PRIMARY KEY with INCLUDE, USING, WITH or DEFERRABLE",
        ));
    }
    Ok(())
}

/// A primary key's index needs a btree operator class for each column's type: json and xid
/// have none in PostgreSQL (42704).
fn check_key_types(columns: &[Column], key: &[usize]) -> Result<(), SqlError> {
    match key
        .iter()
        .filter_map(|i| columns.get(*i))
        .find(|c| matches!(c.ty, PgType::Json | PgType::Xid))
    {
        Some(c) => Err(SqlError::NoBtreeOperatorClass {
            type_name: c.ty.sql_name().into(),
        }),
        None => Ok(()),
    }
}

fn multiple_primary_keys(table: &str) -> SqlError {
    SqlError::InvalidTableDefinition {
        message: format!("multiple primary keys for table \"{table}\" are not allowed"),
    }
}

/// The pass of PostgreSQL's ALTER TABLE (`AT_PASS_*` of its tablecmds.c) a subcommand runs in.
fn alter_pass(op: &ast::AlterTableOperation) -> u8 {
    use ast::AlterColumnOperation as C;
    match op {
        ast::AlterTableOperation::DropColumn { .. } => 0,
        ast::AlterTableOperation::AlterColumn { op, .. } => match op {
            C::DropNotNull | C::DropDefault => 0,
            C::SetDataType { .. } => 1,
            C::SetNotNull => 5,
            C::SetDefault { .. } => 9,
            _ => 10,
        },
        ast::AlterTableOperation::AddColumn { .. } => 4,
        ast::AlterTableOperation::DropConstraint { .. } => 0,
        ast::AlterTableOperation::AddConstraint { .. } => 6,
        _ => 10,
    }
}

/// Whether column `i` of a stored row is NULL (a row written before the column was added
/// ends before it).
pub fn datum_is_null(row: &pb::Row, i: usize) -> bool {
    row.values.get(i).is_none_or(|d| d.kind.is_none())
}

// ------------------------------------------------------------------ DML

pub fn unique_violation(t: &Table, row: Option<&pb::Row>) -> SqlError {
    SqlError::UniqueViolation {
        constraint: t.pkey_name.clone(),
        schema: t.schema.clone(),
        table: t.name.clone(),
        detail: format!("Key {} already exists.", key_text(t, row)),
    }
}

/// A row's primary key as PostgreSQL's unique-index details write it: `(a, b)=(1, x)`.
fn key_text(t: &Table, row: Option<&pb::Row>) -> String {
    // Named as PostgreSQL's detail names them: quoted where the name needs it.
    let names: Vec<String> = t
        .primary_key
        .iter()
        .map(|i| crate::pgcatalog::quote_ident(&t.columns[*i].name))
        .collect();
    let vals: Vec<String> = match row {
        Some(r) => t
            .primary_key
            .iter()
            .map(|i| {
                r.values
                    .get(*i)
                    .and_then(|d| from_datum(d, t.columns[*i].ty).ok())
                    .and_then(|v| format_text(&v, t.columns[*i].ty))
                    .unwrap_or_else(|| "null".into())
            })
            .collect(),
        None => vec![],
    };
    format!("({})=({})", names.join(", "), vals.join(", "))
}

/// The logical key a stored row lives under: its primary key, or its row id.
pub fn stored_row_key(t: &Table, row: &pb::Row) -> Result<Vec<u8>, SqlError> {
    if t.primary_key.is_empty() {
        return Ok(keys::rowid_logical_key(t.id, row.row_id));
    }
    let fields = datum_fields(t, &t.primary_key, row)?;
    let refs: Vec<(&Value, PgType)> = fields.iter().map(|(v, ty)| (v, *ty)).collect();
    Ok(keys::row_logical_key(t.id, &refs))
}

/// The logical key of a row's entry in index `no` of its table.
pub fn index_entry_key(
    t: &Table,
    no: usize,
    row: &pb::Row,
    row_key: &[u8],
) -> Result<Vec<u8>, SqlError> {
    let ix = t
        .indexes
        .get(no)
        .ok_or_else(|| SqlError::internal("index number out of range"))?;
    let fields = datum_fields(t, &ix.columns, row)?;
    let refs: Vec<(&Value, PgType)> = fields.iter().map(|(v, ty)| (v, *ty)).collect();
    Ok(keys::index_logical_key(t.id, no as u8, &refs, row_key))
}

fn datum_fields(
    t: &Table,
    cols: &[usize],
    row: &pb::Row,
) -> Result<Vec<(Value, PgType)>, SqlError> {
    cols.iter()
        .map(|&i| {
            let ty = t.columns.get(i).map(|c| c.ty).unwrap_or(PgType::Text);
            let v = match row.values.get(i) {
                Some(d) => from_datum(d, ty)?,
                None => Value::Null,
            };
            Ok((v, ty))
        })
        .collect()
}

fn logical_key(t: &Table, values: &[Value], tuple: u64) -> Vec<u8> {
    if t.primary_key.is_empty() {
        keys::rowid_logical_key(t.id, tuple)
    } else {
        let fields: Vec<(&Value, PgType)> = t
            .primary_key
            .iter()
            .map(|i| (&values[*i], t.columns[*i].ty))
            .collect();
        keys::row_logical_key(t.id, &fields)
    }
}

/// A string stored into `varchar(n)` or `char(n)`, as PostgreSQL's `varchar` / `bpchar` input
/// with a typmod: characters past `n` may only be spaces (dropped; else 22001), and a
/// `char(n)` value is padded with spaces to `n`. `None`: the string stays as it is.
fn fit_string(s: &str, ty: PgType, n: usize) -> Result<Option<Value>, SqlError> {
    let len = s.chars().count();
    let kept: String = if len > n {
        let cut = s.char_indices().nth(n).map_or(s.len(), |(i, _)| i);
        if s[cut..].chars().any(|c| c != ' ') {
            let name = if ty == PgType::Bpchar {
                "character"
            } else {
                "character varying"
            };
            return Err(SqlError::StringTooLong {
                message: format!("value too long for type {name}({n})"),
            });
        }
        s[..cut].to_string()
    } else if ty == PgType::Bpchar && len < n {
        format!("{s}{}", " ".repeat(n - len))
    } else {
        return Ok(None);
    };
    Ok(Some(Value::text(kept)))
}

/// The length `n` of a `varchar(n)` / `char(n)` typmod.
fn n_of(typmod: i32) -> usize {
    usize::try_from(typmod - 4).unwrap_or(0)
}

/// Assignment conversion of a value into a column, with PostgreSQL's length check.
fn assign(col: &Column, v: Value) -> Result<Value, SqlError> {
    let v = cast_value(v, col.ty)?;
    fit_typmod(col.ty, col.typmod, v)
}

/// A value of type `ty` made to fit its typmod as an assignment does: `varchar(n)` and
/// `char(n)` checked (22001) and padded, `numeric(p,s)` rounded and checked (22003),
/// date/time precision rounded; an array's elements each as its element type's.
fn fit_typmod(ty: PgType, typmod: i32, v: Value) -> Result<Value, SqlError> {
    if typmod < 0 {
        return Ok(v);
    }
    if let (Value::Array(items), Some(elem)) = (&v, ty.element()) {
        if !ty.is_vector() {
            let fitted = items
                .iter()
                .map(|x| match (x, elem) {
                    // A char(n) array's elements are checked and cut but not padded:
                    // RockLake compares array elements as text, not with bpchar's rule that
                    // trailing spaces do not count, so padding would break `= ANY`.
                    (Value::Text(s), PgType::Bpchar) if s.chars().count() <= n_of(typmod) => {
                        Ok(x.clone())
                    }
                    _ => fit_typmod(elem, typmod, x.clone()),
                })
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Value::Array(fitted.into()));
        }
    }
    if let (Value::Text(s), PgType::Varchar | PgType::Bpchar) = (&v, ty) {
        if typmod >= 4 {
            if let Some(fitted) = fit_string(s, ty, n_of(typmod))? {
                return Ok(fitted);
            }
        }
    }
    if let (Value::Numeric(s), PgType::Numeric) = (&v, ty) {
        return Ok(Value::Numeric(crate::types::numeric_typmod(s, typmod)?));
    }
    if matches!(v, Value::Timestamp(_) | Value::Time(_)) {
        return Ok(crate::datetime::round_to_precision(v, typmod.into()));
    }
    Ok(v)
}

/// A column default as PostgreSQL stores and shows it (`pg_get_expr`, information_schema's
/// `column_default`): `DEFAULT NULL` is no default at all; a constant as PostgreSQL shows the
/// constant it keeps ([`constant_default`], [`datetime_constant_default`]); `TRUE`/`FALSE`
/// for a boolean column are `true`/`false`. Anything else is kept as written, its names
/// quoted as PostgreSQL would quote them.
fn stored_default(e: &ast::Expr, ty: PgType) -> Option<String> {
    if let Some(fixed) = datetime_constant_default(e, ty) {
        return Some(fixed);
    }
    if let Some(constant) = constant_default(e, ty) {
        return Some(constant);
    }
    let ast::Expr::Value(v) = e else {
        // PostgreSQL prints an operator expression in brackets, and its names quoted only
        // where they need it, however the client wrote them.
        let text = match e {
            ast::Expr::BinaryOp { .. } => format!("({e})"),
            _ => e.to_string(),
        };
        return Some(crate::pgcatalog::normalize_names(&text));
    };
    match (&v.value, ty) {
        (ast::Value::Null, _) => None,
        (ast::Value::Boolean(b), PgType::Bool) => Some(b.to_string()),
        _ => Some(e.to_string()),
    }
}

/// A constant default as PostgreSQL shows the constant it stores (ruleutils' `get_const_expr`):
/// a string read as the type it is cast or assigned to and written back as that type writes
/// it, named after it (`'{1,2}'::integer[]`, `'7'::bigint`, `'ab'::bpchar`,
/// `'q'::character varying`); bare where PostgreSQL writes it bare: a non-negative integer, a
/// numeric with a point and no sign, a boolean. A number literal is the constant of its own
/// type (integer, bigint or numeric) and the conversion to the column's type is not shown, as
/// PostgreSQL hides implicit casts. `None`: not such a constant, or one that does not
/// convert (the default's check reports it).
fn constant_default(e: &ast::Expr, ty: PgType) -> Option<String> {
    use ast::{Expr, UnaryOperator, Value as V};
    let number = |n: &str| -> Option<(String, PgType)> {
        let t = if n.contains(['.', 'e', 'E']) {
            PgType::Numeric
        } else if n.parse::<i32>().is_ok() {
            PgType::Int4
        } else if n.parse::<i64>().is_ok() {
            PgType::Int8
        } else {
            PgType::Numeric
        };
        Some((n.to_string(), t))
    };
    let (text, t, typmod) = match e {
        Expr::Value(v) => match &v.value {
            V::SingleQuotedString(s) => (s.clone(), ty, -1),
            V::Number(n, false) => {
                let (n, t) = number(n)?;
                (n, t, -1)
            }
            _ => return None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            Expr::Value(v) => match &v.value {
                V::Number(n, false) => {
                    let (n, t) = number(&format!("-{n}"))?;
                    (n, t, -1)
                }
                _ => return None,
            },
            _ => return None,
        },
        Expr::Cast {
            kind: ast::CastKind::DoubleColon | ast::CastKind::Cast,
            expr,
            data_type,
            format: None,
        } => match expr.as_ref() {
            Expr::Value(v) => match &v.value {
                V::SingleQuotedString(s) => {
                    let (t, m) = sql_type(data_type).ok()?;
                    // A modifier RockLake does not keep (an interval's precision): the text
                    // stays as written rather than lose it.
                    if m < 0 && data_type.to_string().contains('(') {
                        return None;
                    }
                    (s.clone(), t, m)
                }
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    };
    // The reg types name objects by the search_path of the moment.
    if t.is_reg() {
        return None;
    }
    // A cast to a length-limited string is the constant as written and the cast
    // (`'abcdef'::character varying(3)`): the length coercion is shown, not applied.
    if typmod >= 0 && matches!(t, PgType::Varchar | PgType::Bpchar) {
        return Some(format!(
            "'{}'::{}",
            text.replace('\'', "''"),
            crate::query::format_type_plain(t, typmod)
        ));
    }
    let value = crate::types::parse_text(&text, t).ok()?;
    let shown = crate::types::format_text(&value, t)?;
    let label = match t {
        PgType::Bpchar if typmod < 0 => "bpchar".to_string(),
        PgType::BpcharArray if typmod < 0 => "bpchar[]".to_string(),
        _ => crate::query::format_type_plain(t, typmod),
    };
    let quoted = || format!("'{}'::{label}", shown.replace('\'', "''"));
    Some(match t {
        PgType::Bool => if shown == "t" { "true" } else { "false" }.to_string(),
        PgType::Int4 if !shown.starts_with('-') => shown,
        // A cast to a numeric with a typmod is the constant (as written, not yet rounded)
        // and the cast.
        PgType::Numeric => {
            let bare = shown.starts_with(|c: char| c.is_ascii_digit()) && shown.contains('.');
            match (bare, typmod >= 0) {
                (true, false) => shown,
                (true, true) => format!("{shown}::{label}"),
                (false, _) => quoted(),
            }
        }
        _ => quoted(),
    })
}

/// A date/time column's constant default (`'2020-07-01 12:00'`, `'…'::timestamptz`) is read
/// once, as PostgreSQL stores the constant, and kept as PostgreSQL shows it
/// (`'2020-07-01 12:00:00'::timestamp without time zone`). A timestamptz is read in the zone of
/// the session that declares it and kept as the instant in UTC, not as text a later session
/// would read in its own zone.
fn datetime_constant_default(e: &ast::Expr, ty: PgType) -> Option<String> {
    use PgType::{Date, Time, Timestamp, Timestamptz};
    if !matches!(ty, Timestamptz | Timestamp | Date | Time) {
        return None;
    }
    let literal = match e {
        ast::Expr::Cast {
            expr, data_type, ..
        } if sql_type(data_type).is_ok_and(|(t, _)| t == ty) => expr.as_ref(),
        other => other,
    };
    let ast::Expr::Value(v) = literal else {
        return None;
    };
    let ast::Value::SingleQuotedString(text) = &v.value else {
        return None;
    };
    let value = parse_text(text, ty).ok()?;
    let _utc = crate::tz::enter(crate::tz::utc(), None);
    let shown = format_text(&value, ty)?;
    Some(format!("'{shown}'::{}", ty.sql_name()))
}

fn check_not_null(t: &Table, values: &[Value]) -> Result<(), SqlError> {
    for (i, c) in t.columns.iter().enumerate() {
        if c.not_null && values.get(i).is_none_or(Value::is_null) {
            let shown: Vec<String> = values
                .iter()
                .zip(&t.columns)
                .map(|(v, c)| format_text(v, c.ty).unwrap_or_else(|| "null".into()))
                .collect();
            return Err(SqlError::NotNullViolation {
                column: c.name.clone(),
                table: t.name.clone(),
                schema: t.schema.clone(),
                detail: format!("Failing row contains ({}).", shown.join(", ")),
            });
        }
    }
    Ok(())
}

fn encode_row(values: &[Value], tuple: u64) -> pb::Row {
    pb::Row {
        row_id: tuple,
        values: values.iter().map(to_datum).collect(),
        tuple,
    }
}

/// What a buffered row version counts against the transaction's batch limit: the row, once
/// more per index entry it writes at commit.
fn buffered_size(row: &pb::Row, t: &Table) -> usize {
    prost::Message::encoded_len(row) * (1 + t.indexes.len())
}

/// Buffers a new row.
/// What an INSERT does with a row whose primary key is taken (`ON CONFLICT`).
enum OnConflict {
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
fn bind_on_conflict(
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
fn refuse_unseen_version(cx: &Cx<'_>, seq: u64) -> Result<(), SqlError> {
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
type LiveRow = (Vec<Value>, Option<u64>);

/// The live row holding `lk` (this transaction's write, else the newest committed version):
/// its values with its ctid, and the version a write over it replaces.
fn live_row(cx: &Cx<'_>, t: &Table, lk: &[u8]) -> Result<Option<LiveRow>, SqlError> {
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
fn upsert_row(
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
fn write_insert(cx: &mut Cx<'_>, t: &Table, values: &[Value]) -> Result<u64, SqlError> {
    check_not_null(t, values)?;
    let tuple = cx.alloc_tuple(t.id)?;
    let lk = logical_key(t, values, tuple);
    write_insert_row(cx, t, lk, encode_row(values, tuple))?;
    Ok(tuple)
}

/// `RETURNING`: the bound items and the rows they produced over the written rows.
struct Returning {
    exprs: Vec<BExpr>,
    columns: Vec<ColMeta>,
    /// The width of the scope the items were bound in (rows are padded to it).
    width: usize,
    rows: Vec<Vec<Value>>,
}

impl Returning {
    fn bind(
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
    fn add(&mut self, cx: &Cx<'_>, at: u64, row: &[Value]) -> Result<(), SqlError> {
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
    fn fields(&self) -> Vec<crate::api::FieldDesc> {
        self.columns.iter().map(ColMeta::field).collect()
    }

    /// The statement's answer: its command tag, with the rows when it has RETURNING.
    fn answer(returning: Option<Returning>, tag: String) -> Result<Output, SqlError> {
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
fn insert_qual(ins: &ast::Insert, t: &Table) -> String {
    ins.table_alias
        .as_ref()
        .map(|a| crate::query::ident(&a.alias))
        .unwrap_or_else(|| t.name.clone())
}

/// INSERT's RETURNING, over the target's columns (under its alias).
fn insert_returning(
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
fn matching_scope(
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
fn dml_returning(
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

fn resolve_target(cx: &mut Cx<'_>, name: &ast::ObjectName) -> Result<TableRef, SqlError> {
    resolve_target_for(cx, name, Purpose::Write)
}

/// What a statement does with the relation it names, for PostgreSQL's error when that
/// relation is a sequence or a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    /// INSERT, UPDATE and DELETE.
    Write,
    Truncate,
    CopyTo,
    CopyFrom,
}

/// PostgreSQL's error for `t` named by a statement of `purpose`, if `t` is a sequence or view.
fn refuse_kind(t: &Table, purpose: Purpose) -> Result<(), SqlError> {
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
fn resolve_target_for(
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
fn dml_target(cx: &mut Cx<'_>, name: &ast::ObjectName) -> Result<TableRef, SqlError> {
    resolve_target(cx, name).map_err(|e| missing_table_at(e, name))
}

/// `err`, if the table `name` is missing, noted as pointing at the name.
fn missing_table_at(err: SqlError, name: &ast::ObjectName) -> SqlError {
    match err {
        SqlError::UndefinedTable { .. } => at_name(err, name),
        err => err,
    }
}

/// The table a statement writes rows into, its definition recorded for the commit's check.
fn write_target(cx: &mut Cx<'_>, name: &ast::ObjectName) -> Result<TableRef, SqlError> {
    write_target_for(cx, name, Purpose::Write)
}

/// [`write_target`] for a statement of `purpose`.
fn write_target_for(
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
fn check_insert_width(values: usize, targets: usize, listed: bool) -> Result<(), SqlError> {
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
fn insert_targets(t: &TableRef, ins: &ast::Insert) -> Result<Vec<usize>, SqlError> {
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
fn first_present(clauses: &[(bool, &'static str)]) -> Option<&'static str> {
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
fn refuse_foreign_insert_clauses(ins: &ast::Insert) -> Result<(), SqlError> {
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
fn refuse_foreign_update_clauses(u: &ast::Update) -> Result<(), SqlError> {
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
fn refuse_foreign_delete_clauses(d: &ast::Delete) -> Result<(), SqlError> {
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
fn select_of_srf_row(row: &[ast::Expr]) -> Result<Option<ast::Query>, SqlError> {
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

fn insert(
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
fn insert_into_always_identity(c: &Column) -> SqlError {
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
type Matched = (
    Vec<crate::engine::VisibleRow>,
    Vec<Vec<Value>>,
    Vec<(usize, BExpr)>,
);

/// Source items (target table first), filter and (column, value) assignments of a DML.
type BoundMatching = (Vec<FromItem>, Option<BExpr>, Vec<(usize, BExpr)>);

/// [`bind_matching`], with the target read through its key or an index when the WHERE clause
/// allows and WHERE conjuncts moved to the items they filter: how UPDATE and DELETE find their
/// rows, and what EXPLAIN shows of them.
fn plan_matching(binder: &mut Binder<'_, '_>, dml: &Dml<'_>) -> Result<BoundMatching, SqlError> {
    let (mut items, filter, sets) = bind_matching(binder, dml)?;
    crate::query::push_down_keys(&mut items, filter.as_ref());
    let filter = crate::query::push_down_filters(&mut items, filter);
    Ok((items, filter, sets))
}

/// Binds the target, FROM list, WHERE clause and SET expressions of an UPDATE or DELETE:
/// the source items (target table first), the filter and the (column, value) assignments.
fn bind_matching(binder: &mut Binder<'_, '_>, dml: &Dml<'_>) -> Result<BoundMatching, SqlError> {
    // The WITH clause's names are visible to FROM/USING, WHERE (subqueries too) and SET.
    let Some(w) = dml.with else {
        return bind_matching_scoped(binder, dml);
    };
    binder.push_ctes(w)?;
    let bound = bind_matching_scoped(binder, dml);
    binder.pop_ctes();
    bound
}

fn bind_matching_scoped(
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
fn bind_assignments(
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
fn row_constructor(f: &ast::Function) -> Option<Vec<&ast::Expr>> {
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
fn matching_rows(cx: &mut Cx<'_>, dml: &Dml<'_>) -> Result<Matched, SqlError> {
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
fn check_not_moved(cx: &Cx<'_>, lk: &[u8], seen: Option<u64>) -> Result<(), SqlError> {
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
struct Dml<'s> {
    table: TableRef,
    alias: Option<String>,
    from: Vec<ast::TableWithJoins>,
    selection: Option<&'s ast::Expr>,
    with: Option<&'s ast::With>,
    assignments: &'s [ast::Assignment],
}

fn update_dml<'s>(
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

fn delete_dml<'s>(
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

fn update(cx: &mut Cx<'_>, u: &ast::Update, with: Option<&ast::With>) -> Result<Output, SqlError> {
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
fn write_insert_row(cx: &mut Cx<'_>, t: &Table, lk: Vec<u8>, row: pb::Row) -> Result<(), SqlError> {
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
fn truncate(cx: &mut Cx<'_>, tr: &ast::Truncate) -> Result<Output, SqlError> {
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

fn delete(cx: &mut Cx<'_>, d: &ast::Delete, with: Option<&ast::With>) -> Result<Output, SqlError> {
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
fn type_after(err: SqlError, name: &ast::Ident, ty: &ast::DataType) -> SqlError {
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
fn at_name(err: SqlError, name: &ast::ObjectName) -> SqlError {
    if let Some(spot) = crate::query::name_spot(name) {
        crate::errpos::note(&err, spot);
    }
    err
}

fn undefined_column_of(column: &str, table: &str) -> SqlError {
    SqlError::UndefinedColumn {
        name: format!("{column}\" of relation \"{table}"),
    }
}

/// A COPY's columns among `all` (a relation's): every one, or the list's, each once
/// (PostgreSQL's `CopyGetAttnums`).
fn copy_columns(all: &[String], table: &str, list: &[ast::Ident]) -> Result<Vec<usize>, SqlError> {
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
fn relation_flags(
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
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Runs an UPDATE or DELETE the server wrote itself (ALTER TABLE's fill of an added column,
/// TRUNCATE), so that it goes through the one DML path with its MVCC and key checks.
fn run_generated_dml(cx: &mut Cx<'_>, sql: &str) -> Result<(), SqlError> {
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

fn parse_query_text(sql: &str) -> Result<ast::Query, SqlError> {
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

fn copy(
    cx: &mut Cx<'_>,
    source: &ast::CopySource,
    to: bool,
    target: &ast::CopyTarget,
    options: &[ast::CopyOption],
    legacy: &[ast::CopyLegacyOption],
) -> Result<Output, SqlError> {
    if !to {
        return copy_from(cx, source, target, options, legacy);
    }
    if !matches!(target, ast::CopyTarget::Stdout) {
        return Err(SqlError::feature("COPY TO a file or program (only STDOUT)"));
    }
    let at = cx.read_point();
    // A table's COPY opens the table before reading the options, a query's reads them first
    // (PostgreSQL's DoCopy and BeginCopyTo), so errors come in PostgreSQL's order. A table
    // (also pg_catalog's) is read as `SELECT cols FROM t`; its columns named in options are
    // checked against the relation's.
    let (spec, q, relation) = match source {
        ast::CopySource::Query(q) => (
            CopySpec::from_options(options, legacy, false)?,
            (**q).clone(),
            None,
        ),
        ast::CopySource::Table {
            table_name,
            columns,
        } => {
            if let Some(t) = find_table(cx, &object_name(table_name))? {
                refuse_kind(&t, Purpose::CopyTo)?;
            }
            let star = parse_query_text(&format!("SELECT * FROM {table_name}"))?;
            let all: Vec<String> = {
                let rcx = cx.reader(at);
                let bq = Binder::new(&rcx).bind_query(&star, None)?;
                bq.columns.iter().map(|c| c.name.to_string()).collect()
            };
            let spec = CopySpec::from_options(options, legacy, false)?;
            let table = object_name(table_name).last().cloned().unwrap_or_default();
            let cols = copy_columns(&all, &table, columns)?;
            let q = if columns.is_empty() {
                star
            } else {
                let list: Vec<String> = cols.iter().map(|i| quoted(&all[*i])).collect();
                parse_query_text(&format!("SELECT {} FROM {table_name}", list.join(", ")))?
            };
            (spec, q, Some((all, table, cols)))
        }
    };
    let binary = spec.format == copyformat::Format::Binary;
    // Only a result at the newest commit point, without writes of the session's own, can
    // be shared (see copycache).
    // A query's values can depend on the session's zone (a cast to date): only UTC sessions
    // share.
    let shareable = binary
        && at == cx.st.latest
        && cx.sess.txn.as_ref().is_none_or(|t| t.pending.is_empty())
        && crate::tz::session().is_utc()
        && !crate::pgcatalog::quote_all();
    if shareable {
        if let Some(hit) = cx.st.copies.get(at, &q) {
            return Ok(hit);
        }
    }
    // A result that may be kept notes the store ranges it reads (see copycache).
    let reads = crate::copycache::ReadSet::new(cx.kv);
    let mut rcx = cx.reader(at);
    if shareable {
        rcx.kv = &reads;
    }
    let mut binder = Binder::new(&rcx);
    let bq = binder.bind_query(&q, None)?;
    let shareable = shareable && binder.reads_only_committed_tables();
    let types: Vec<PgType> = bq
        .columns
        .iter()
        .map(|c| {
            if c.ty == PgType::Unknown {
                PgType::Text
            } else {
                c.ty
            }
        })
        .collect();
    let names: Vec<String> = bq.columns.iter().map(|c| c.name.to_string()).collect();
    let force_quote = if spec.force_quote_all {
        vec![true; names.len()]
    } else {
        match &relation {
            Some((all, table, cols)) => {
                relation_flags(all, table, cols, &spec.force_quote, "FORCE_QUOTE")?
            }
            None => CopySpec::flags(&spec.force_quote, &names, "FORCE_QUOTE", &|n| {
                (!names.iter().any(|x| x == n)).then(|| SqlError::UndefinedColumn {
                    name: n.to_string(),
                })
            })?,
        }
    };
    let mut chunks = CopyChunks::new();
    let too_large = |_| SqlError::ProgramLimit {
        message: "COPY result exceeds 4 GiB".into(),
    };
    let exec = Executor::new(&rcx);
    let n;
    if binary {
        // PostgreSQL sends the header with the first tuple, and with the trailer when
        // there is none; DuckDB's reader relies on that framing.
        chunks.buf().extend_from_slice(&wire::copy_binary_header());
        // A filtered projection of one table (DuckDB's catalog reads) is encoded from the
        // scanned values as they come; anything else runs as a query.
        let fast = match crate::query::simple_scan(&bq) {
            Some(scan) => exec.copy_simple_scan(&scan, &types, &mut chunks)?,
            None => None,
        };
        n = match fast {
            Some(n) => n,
            None => {
                let rows = exec.run_query(&bq, None)?;
                for r in &rows {
                    wire::copy_binary_row_into(r, &types, chunks.buf())?;
                    chunks.end_chunk().map_err(too_large)?;
                }
                rows.len()
            }
        };
        chunks.buf().extend_from_slice(&wire::copy_binary_trailer());
        chunks.end_chunk().map_err(too_large)?;
    } else {
        let mut rows = exec.run_query(&bq, None)?;
        rcx.name_reg_columns(&types, &mut rows);
        n = rows.len();
        if spec.header == copyformat::Header::Present {
            chunks
                .push(&spec.layout.write_header(&names))
                .map_err(too_large)?;
        }
        for r in &rows {
            chunks
                .push(&spec.layout.write_row(r, &types, &force_quote))
                .map_err(too_large)?;
        }
    }
    let out = Output::CopyOut {
        binary,
        columns: types.len() as u16,
        chunks,
        tag: format!("COPY {n}"),
    };
    if shareable {
        cx.st.copies.put(at, q, &out, reads.into_ranges());
    }
    Ok(out)
}

fn copy_from(
    cx: &mut Cx<'_>,
    source: &ast::CopySource,
    target: &ast::CopyTarget,
    options: &[ast::CopyOption],
    legacy: &[ast::CopyLegacyOption],
) -> Result<Output, SqlError> {
    cx.check_writable("COPY FROM")?;
    if !matches!(target, ast::CopyTarget::Stdin) {
        return Err(SqlError::feature(
            "COPY FROM a file or program (only STDIN)",
        ));
    }
    // `… WHERE cond` comes as a query over the table (see copyparse).
    let (table_name, columns, filter) = match source {
        ast::CopySource::Table {
            table_name,
            columns,
        } => (table_name.clone(), columns.clone(), None),
        ast::CopySource::Query(q) => crate::copyparse::filtered_parts(q)
            .map(|(t, c, f)| (t, c, Some(f)))
            .ok_or_else(|| SqlError::internal("COPY FROM source is not a table"))?,
    };
    let t = write_target_for(cx, &table_name, Purpose::CopyFrom)?;
    if let Some(f) = &filter {
        // Checked now, for PostgreSQL's errors before any data; bound again at the end.
        let at = cx.read_point();
        let rcx = cx.reader(at);
        Binder::new(&rcx).bind_copy_where(f, &table_scope(&t, &t.name))?;
    }
    let spec = CopySpec::from_options(options, legacy, true)?;
    let all: Vec<String> = t.columns.iter().map(|c| c.name.clone()).collect();
    let cols = copy_columns(&all, &t.name, &columns)?;
    let force_not_null =
        relation_flags(&all, &t.name, &cols, &spec.force_not_null, "FORCE_NOT_NULL")?;
    let force_null = relation_flags(&all, &t.name, &cols, &spec.force_null, "FORCE_NULL")?;
    cx.ensure_txn();
    let n = cols.len() as u16;
    let binary = spec.format == copyformat::Format::Binary;
    cx.sess.copy_in = Some(CopyIn {
        table_id: t.id,
        columns: cols,
        spec,
        force_not_null,
        force_null,
        filter,
        buf: Vec::new(),
    });
    Ok(Output::CopyIn { binary, columns: n })
}

/// The bound DEFAULT expression of each of `t`'s columns (`None`: no default, NULL).
fn column_defaults(cx: &mut Cx<'_>, at: u64, t: &Table) -> Result<Vec<Option<BExpr>>, SqlError> {
    let rcx = cx.reader(at);
    let mut binder = Binder::new(&rcx);
    t.columns
        .iter()
        .map(|c| bind_default(&mut binder, c))
        .collect()
}

/// A default as PostgreSQL checks it when it is declared: its expression must bind and
/// convert to the column's type (a constant is converted then: `'abc'` for an integer
/// column is 22P02 at CREATE or ALTER TABLE, not at the first INSERT).
fn check_default(cx: &mut Cx<'_>, c: &Column) -> Result<(), SqlError> {
    let Some(sql) = &c.default_sql else {
        return Ok(());
    };
    let e = parse_default(sql)?;
    refuse_in_expression(&e, "DEFAULT expression", true)?;
    let at = cx.read_point();
    let rcx = cx.reader(at);
    bind_default_expr(&mut Binder::new(&rcx), c, &e).map(|_| ())
}

/// PostgreSQL's refusals of a subquery (and, in a DEFAULT, of a column reference) in an
/// expression that is evaluated without a query around it: `what` names it as its messages
/// do ("DEFAULT expression", "transform expression").
fn refuse_in_expression(e: &ast::Expr, what: &str, columns: bool) -> Result<(), SqlError> {
    use std::ops::ControlFlow;
    // Words PostgreSQL's grammar reads as calls, which sqlparser reads as identifiers.
    const CALLS: &[&str] = &[
        "current_role",
        "current_schema",
        "current_user",
        "session_user",
        "user",
        "current_catalog",
        "current_date",
        "current_time",
        "current_timestamp",
        "localtime",
        "localtimestamp",
    ];
    let found = ast::visit_expressions(e, |x| match x {
        ast::Expr::Subquery(_)
        | ast::Expr::Exists { .. }
        | ast::Expr::In {
            target: ast::InTarget::Subquery(_),
            ..
        } => ControlFlow::Break(format!("cannot use subquery in {what}")),
        ast::Expr::Identifier(i)
            if columns
                && !(i.quote_style.is_none()
                    && CALLS.contains(&i.value.to_ascii_lowercase().as_str())) =>
        {
            ControlFlow::Break(format!("cannot use column reference in {what}"))
        }
        ast::Expr::CompoundIdentifier(_) if columns => {
            ControlFlow::Break(format!("cannot use column reference in {what}"))
        }
        _ => ControlFlow::Continue(()),
    });
    match found {
        ControlFlow::Break(message) => Err(SqlError::UnsupportedByPostgres { message }),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// A column's DEFAULT expression bound and converted to its type (`None`: no default).
fn bind_default(binder: &mut Binder<'_, '_>, c: &Column) -> Result<Option<BExpr>, SqlError> {
    if let Some(seq) = c.identity.map(|i| i.sequence).or(c.serial) {
        // `nextval` of the identity or serial column's sequence, by its OID.
        let oid = binder
            .cx
            .sequences()
            .iter()
            .find(|t| t.id == seq)
            .map(|t| t.oid)
            .ok_or_else(|| SqlError::internal("column without its sequence"))?;
        let call = BExpr::Func("nextval".into(), vec![BExpr::Const(Value::Int(oid.into()))]);
        return crate::query::assignment(call, PgType::Int8, c.ty).map(Some);
    }
    match &c.default_sql {
        Some(sql) => bind_default_expr(binder, c, &parse_default(sql)?).map(Some),
        None => Ok(None),
    }
}

/// A default's SQL text, as stored (RockLake wrote it: not parsing is an internal error).
fn parse_default(sql: &str) -> Result<ast::Expr, SqlError> {
    let mut e = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| SqlError::internal(format!("stored default does not parse: {e}")))?;
    crate::precedence::as_postgres_groups(sql, &mut e);
    Ok(e)
}

/// [`bind_default`] of an already parsed default.
fn bind_default_expr(
    binder: &mut Binder<'_, '_>,
    c: &Column,
    e: &ast::Expr,
) -> Result<BExpr, SqlError> {
    let (b, bt) = binder.bind_expr(e, &Scope::default(), None)?;
    check_assignable(c, bt, "default expression")?;
    crate::query::assignment(b, bt, c.ty)
}

/// PostgreSQL's refusal of a value no assignment cast converts into the column's type.
fn check_assignable(c: &Column, from: PgType, what: &str) -> Result<(), SqlError> {
    if crate::types::assignable(from, c.ty) {
        return Ok(());
    }
    Err(SqlError::DatatypeMismatch {
        message: format!(
            "column \"{}\" is of type {} but {what} is of type {}",
            c.name,
            crate::query::format_type(c.ty, c.typmod),
            crate::query::format_type(from, -1),
        ),
        hint: Some("You will need to rewrite or cast the expression.".into()),
    })
}

/// Ends COPY FROM STDIN: reads the buffered data as the COPY's format says and inserts each
/// row, columns outside the COPY's list taking their defaults. An error names its line (and
/// column) in PostgreSQL's CONTEXT.
pub fn finish_copy_in(cx: &mut Cx<'_>, copy: CopyIn) -> Result<Output, SqlError> {
    let _zone = cx.enter_statement_settings()?;
    let at = cx.read_point();
    let t = {
        let rcx = cx.reader(at);
        rcx.table_by_id(copy.table_id)
            .ok_or_else(|| SqlError::UndefinedTable {
                name: format!("table {}", copy.table_id),
            })?
    };
    let mut defaults = column_defaults(cx, at, &t)?;
    for i in &copy.columns {
        defaults[*i] = None;
    }
    let filter = match &copy.filter {
        Some(f) => {
            let rcx = cx.reader(at);
            let scope = table_scope(&t, &t.name);
            let bound = Binder::new(&rcx).bind_copy_where(f, &scope)?;
            Some((bound, scope.cols.len()))
        }
        None => None,
    };
    let fill = RowFill {
        at,
        columns: &copy.columns,
        defaults: &defaults,
        filter: filter.as_ref(),
    };
    let in_copy = |error: SqlError, context: String| SqlError::InCopy {
        error: Box::new(error),
        context,
    };
    let line_context = |number: u64, text: Option<&str>| match text {
        Some(text) => format!("COPY {}, line {number}: \"{}\"", t.name, printout(text)),
        None => format!("COPY {}, line {number}", t.name),
    };
    let mut n = 0u64;
    if copy.spec.format == copyformat::Format::Binary {
        let types: Vec<PgType> = copy.columns.iter().map(|i| t.columns[*i].ty).collect();
        for (line, values) in wire::parse_copy_binary(&copy.buf, &types)?
            .into_iter()
            .enumerate()
        {
            // PostgreSQL numbers binary tuples as lines.
            let line = line as u64 + 1;
            let mut row = Vec::with_capacity(values.len());
            for (v, ci) in values.into_iter().zip(&copy.columns) {
                let col = &t.columns[*ci];
                row.push(assign(col, v).map_err(|e| {
                    in_copy(
                        e,
                        format!("COPY {}, line {line}, column {}", t.name, col.name),
                    )
                })?);
            }
            let at_line = |e| in_copy(e, line_context(line, None));
            if let Some(full) = copied_row(cx, &t, &fill, row).map_err(at_line)? {
                write_insert(cx, &t, &full).map_err(at_line)?;
                n += 1;
            }
        }
        return Ok(Output::Command {
            tag: format!("COPY {n}"),
        });
    }
    let layout = &copy.spec.layout;
    let mut reader = LineReader::new(&copy.buf, layout, &t.name);
    if copy.spec.header == copyformat::Header::Present {
        // PostgreSQL reads a header line without splitting it into fields.
        reader.skip_line()?;
    }
    if copy.spec.header == copyformat::Header::Match {
        let header = reader.next_line()?;
        check_header(&t, &copy.columns, layout, header.as_ref()).map_err(|e| {
            in_copy(
                e,
                line_context(1, Some(header.as_ref().map_or("", |h| &h.text))),
            )
        })?;
    }
    while let Some(line) = reader.next_line()? {
        let bad_line = |e: SqlError| in_copy(e, line_context(line.number, Some(&line.text)));
        // A COPY of no columns takes empty lines (PostgreSQL reads no field from them).
        let fields = if copy.columns.is_empty() && line.text.is_empty() {
            0
        } else {
            line.fields.len()
        };
        if fields > copy.columns.len() {
            return Err(bad_line(SqlError::BadCopyFormat {
                message: "extra data after last expected column".into(),
                hint: None,
            }));
        }
        let mut row = Vec::with_capacity(copy.columns.len());
        for (k, ci) in copy.columns.iter().enumerate() {
            let col = &t.columns[*ci];
            let Some(field) = line.fields.get(k) else {
                return Err(bad_line(SqlError::BadCopyFormat {
                    message: format!("missing data for column \"{}\"", col.name),
                    hint: None,
                }));
            };
            let field = match field {
                None if copy.force_not_null[k] => Some(layout.null.as_str()),
                Some(f) if copy.force_null[k] && *f == layout.null => None,
                f => f.as_deref(),
            };
            row.push(match field {
                None => assign(col, Value::Null),
                Some(f) => parse_text(f, col.ty)
                    .and_then(|v| assign(col, v))
                    .map_err(|e| {
                        in_copy(
                            e,
                            format!(
                                "COPY {}, line {}, column {}: \"{}\"",
                                t.name,
                                line.number,
                                col.name,
                                printout(f)
                            ),
                        )
                    }),
            }?);
        }
        // Defaults, WHERE and NOT NULL are checked while the line is at hand (its text in the
        // context), keys when PostgreSQL flushes its batch (the line number only).
        let Some(full) = copied_row(cx, &t, &fill, row).map_err(bad_line)? else {
            continue;
        };
        write_insert(cx, &t, &full).map_err(|e| match e {
            SqlError::NotNullViolation { .. } => bad_line(e),
            e => in_copy(e, line_context(line.number, None)),
        })?;
        n += 1;
    }
    Ok(Output::Command {
        tag: format!("COPY {n}"),
    })
}

/// `HEADER MATCH`: the header line names the COPY's columns, in order.
fn check_header(
    t: &Table,
    cols: &[usize],
    layout: &copyformat::Layout,
    header: Option<&copyformat::Line>,
) -> Result<(), SqlError> {
    let bad = |message: String| SqlError::BadCopyFormat {
        message,
        hint: None,
    };
    // No line at all reads as an empty one: one empty field.
    let empty = [(!layout.null.is_empty()).then(String::new)];
    let fields = header.map_or(&empty[..], |h| h.fields.as_slice());
    if fields.len() != cols.len() {
        return Err(bad(format!(
            "wrong number of fields in header line: got {}, expected {}",
            fields.len(),
            cols.len()
        )));
    }
    for (k, (ci, got)) in cols.iter().zip(fields).enumerate() {
        let want = &t.columns[*ci].name;
        match got {
            Some(got) if got == want => {}
            Some(got) => {
                return Err(bad(format!(
                    "column name mismatch in header line field {}: got \"{got}\", expected \"{want}\"",
                    k + 1
                )))
            }
            None => {
                return Err(bad(format!(
                    "column name mismatch in header line field {}: got null value (\"{}\"), expected \"{want}\"",
                    k + 1,
                    layout.null
                )))
            }
        }
    }
    Ok(())
}

/// How a COPY FROM row becomes a table row.
struct RowFill<'a> {
    at: u64,
    /// The COPY's columns, in the order of its values.
    columns: &'a [usize],
    /// Defaults of the columns outside the COPY's list (`None` for those in it).
    defaults: &'a [Option<BExpr>],
    /// `WHERE`, over the table's row padded to its scope's width (hidden columns NULL).
    filter: Option<&'a (BExpr, usize)>,
}

/// One COPY row as a table row: the COPY's columns from `values`, the others their
/// defaults; `None` when the WHERE condition does not accept it.
fn copied_row(
    cx: &mut Cx<'_>,
    t: &Table,
    fill: &RowFill<'_>,
    values: Vec<Value>,
) -> Result<Option<Vec<Value>>, SqlError> {
    let mut full = vec![Value::Null; t.columns.len()];
    for (v, ci) in values.into_iter().zip(fill.columns) {
        full[*ci] = v;
    }
    if fill.defaults.iter().all(Option::is_none) && fill.filter.is_none() {
        return Ok(Some(full));
    }
    let rcx = cx.reader(fill.at);
    let exec = Executor::new(&rcx);
    let env = Env {
        row: &[],
        parent: None,
        aggs: None,
    };
    for (i, d) in fill.defaults.iter().enumerate() {
        if let Some(d) = d {
            full[i] = assign(&t.columns[i], exec.eval(d, &env)?)?;
        }
    }
    if let Some((cond, width)) = fill.filter {
        let mut row = full.clone();
        row.resize(*width, Value::Null);
        let env = Env {
            row: &row,
            parent: None,
            aggs: None,
        };
        if exec.eval(cond, &env)? != Value::Bool(true) {
            return Ok(None);
        }
    }
    Ok(Some(full))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctid_mapping_round_trips_like_heap_slots() {
        assert_eq!(tid_of(1), Value::Tid(0, 1));
        assert_eq!(tid_of(291), Value::Tid(0, 291));
        assert_eq!(tid_of(292), Value::Tid(1, 1));
        for n in [1u64, 5, 291, 292, 100_000] {
            assert_eq!(tuple_of(&tid_of(n)), Some(n));
        }
    }

    #[test]
    fn syntax_errors_read_like_postgres() {
        let e = parse("SELEC 1").expect_err("bad");
        assert_eq!(e.sqlstate(), "42601");
        assert!(e.to_string().contains("syntax error"), "{e}");
        let deep = format!("SELECT {}1{}", "(".repeat(500), ")".repeat(500));
        assert_eq!(parse(&deep).expect_err("deep").sqlstate(), "54000");
    }
}
