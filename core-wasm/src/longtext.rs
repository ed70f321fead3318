//! Long query strings read piece by piece.
//!
//! DuckLake sends each commit as one query string: a dozen statements, some of them
//! `INSERT … VALUES` with a row per data file or per column statistic — thousands of rows for
//! a wide table. sqlparser spends ~15 µs on every such row (for each `NULL`, `true` or `false`
//! it first tries to read a typed string such as `DATE '…'` and formats the error of that
//! attempt), which made bulk commits twice as slow as PostgreSQL's. So a long text is split
//! at its top-level semicolons and each statement parsed on its own (short ones through the
//! parse cache, where DuckLake's shapes hit), and the rows of a long `INSERT … VALUES` whose
//! values are all plain literals are read here, without sqlparser: its first row is parsed
//! by sqlparser too (with the statement's head) and must come out the same.
//!
//! The scanner gives up (the caller parses the whole text as before) on anything it does not
//! fully understand, by the shape scanner's rules: `$`, comments, backslashes outside strings,
//! prefixed strings, NUL. Any piece that fails to parse also sends the caller back to the
//! whole text, so errors are exactly sqlparser's.

use sqlparser::ast::{Expr, Parens, UnaryOperator, Value};

use crate::parsecache::{closing_quote, digits_end, gives_up_at, is_ident_char, word_end};

/// The statements of `sql`: the texts between its top-level semicolons, blank ones left out
/// (the parser skips empty statements too). `None` when the text holds something the scanner
/// does not fully understand.
pub(crate) fn statements(sql: &str) -> Option<Vec<&str>> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        if gives_up_at(b, i) {
            return None;
        }
        match b[i] {
            b'"' => i = closing_quote(b, i + 1, b'"')? + 1,
            b'\'' => i = closing_quote(b, i + 1, b'\'')? + 1,
            b';' => {
                push_unless_blank(&mut out, &sql[start..i]);
                i += 1;
                start = i;
            }
            c if is_ident_char(c) => {
                i = word_end(b, i);
                // A prefixed string (E'…', B'…', X'…', N'…').
                if b.get(i) == Some(&b'\'') {
                    return None;
                }
            }
            _ => i += 1,
        }
    }
    push_unless_blank(&mut out, &sql[start..]);
    Some(out)
}

fn push_unless_blank<'a>(out: &mut Vec<&'a str>, piece: &'a str) {
    if !piece
        .bytes()
        .all(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
    {
        out.push(piece);
    }
}

/// An `INSERT … VALUES (…), (…), …` whose values are all plain literals, read without the
/// parser.
#[derive(Debug)]
pub(crate) struct ValuesInsert<'a> {
    /// The statement up to the end of its `VALUES` keyword.
    pub head: &'a str,
    /// The first row's text, brackets included.
    pub first_row: &'a str,
    /// Every row, as the parser gives it.
    pub rows: Vec<Parens<Vec<Expr>>>,
}

/// `stmt` read as an `INSERT … VALUES` of plain literals: `'…'`, unsigned or negated integers
/// and decimals (`12`, `-3`, `1.5`), `NULL`, `TRUE`, `FALSE`. `None` for anything else
/// (another statement, an expression, `ON CONFLICT`, `RETURNING`, …). `stmt` is one piece of
/// [`statements`], so it holds no comment, `$` or prefixed string.
pub(crate) fn values_insert(stmt: &str) -> Option<ValuesInsert<'_>> {
    let b = stmt.as_bytes();
    let mut i = skip_blank(b, 0);
    let first = word_end(b, i);
    if !stmt[i..first].eq_ignore_ascii_case("insert") {
        return None;
    }
    // The first `VALUES` outside brackets and quotes ends the head.
    i = first;
    let mut depth = 0usize;
    let head_end = loop {
        match *b.get(i)? {
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' => {
                depth = depth.checked_sub(1)?;
                i += 1;
            }
            b'"' => i = closing_quote(b, i + 1, b'"')? + 1,
            b'\'' => i = closing_quote(b, i + 1, b'\'')? + 1,
            c if is_ident_char(c) => {
                let end = word_end(b, i);
                if depth == 0 && stmt[i..end].eq_ignore_ascii_case("values") {
                    break end;
                }
                i = end;
            }
            _ => i += 1,
        }
    };
    let mut rows = Vec::new();
    let mut first_row = None;
    i = head_end;
    loop {
        i = skip_blank(b, i);
        if b.get(i) != Some(&b'(') {
            return None;
        }
        let row_start = i;
        let mut row = Vec::new();
        i += 1;
        loop {
            let (value, next) = literal(stmt, skip_blank(b, i))?;
            row.push(value);
            i = skip_blank(b, next);
            match b.get(i)? {
                b',' => i += 1,
                b')' => break,
                _ => return None,
            }
        }
        i += 1;
        first_row.get_or_insert(&stmt[row_start..i]);
        rows.push(Parens::with_empty_span(row));
        i = skip_blank(b, i);
        match b.get(i) {
            None => break,
            Some(b',') => i += 1,
            Some(_) => return None,
        }
    }
    Some(ValuesInsert {
        head: &stmt[..head_end],
        first_row: first_row?,
        rows,
    })
}

fn skip_blank(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The plain literal starting at `i` and the index after it; `None` for anything else.
fn literal(stmt: &str, i: usize) -> Option<(Expr, usize)> {
    let b = stmt.as_bytes();
    match *b.get(i)? {
        b'\'' => {
            let close = closing_quote(b, i + 1, b'\'')?;
            let text = stmt[i + 1..close].replace("''", "'");
            Some((value(Value::SingleQuotedString(text)), close + 1))
        }
        b'0'..=b'9' => {
            let end = number_end(b, i)?;
            let number = Value::Number(stmt[i..end].to_string(), false);
            Some((value(number), end))
        }
        b'-' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
            let end = number_end(b, i + 1)?;
            let number = Value::Number(stmt[i + 1..end].to_string(), false);
            let negated = Expr::UnaryOp {
                op: UnaryOperator::Minus,
                expr: Box::new(value(number)),
            };
            Some((negated, end))
        }
        c if is_ident_char(c) => {
            let end = word_end(b, i);
            let word = &stmt[i..end];
            let keyword = if word.eq_ignore_ascii_case("null") {
                Value::Null
            } else if word.eq_ignore_ascii_case("true") {
                Value::Boolean(true)
            } else if word.eq_ignore_ascii_case("false") {
                Value::Boolean(false)
            } else {
                return None;
            };
            Some((value(keyword), end))
        }
        _ => None,
    }
}

/// The end of the integer or decimal (`12`, `1.5`) starting at `i`; `None` when more follows
/// that belongs to the token (`1e5`, `1.`, `1_000`, `1.2.3`).
fn number_end(b: &[u8], i: usize) -> Option<usize> {
    let i = digits_end(b, i);
    match b.get(i) {
        Some(&c) if is_ident_char(c) || c == b'.' || c == b'$' || c == b'\'' => None,
        _ => Some(i),
    }
}

fn value(v: Value) -> Expr {
    Expr::Value(v.with_empty_span())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_at_top_level_semicolons_only() {
        assert_eq!(
            statements("SELECT ';'; ;\n SELECT \"a;b\" FROM t;").expect("splits"),
            ["SELECT ';'", "\n SELECT \"a;b\" FROM t"]
        );
        for odd in [
            "SELECT $1; x",
            "SELECT E'a;b'",
            "SELECT 1 -- ;",
            "SELECT 'open;",
        ] {
            assert!(statements(odd).is_none(), "{odd:?}");
        }
    }

    #[test]
    fn only_plain_literal_rows_are_read() {
        let v = values_insert("INSERT INTO t (a, \"values\") VALUES (1, 'x''y'),( -2 ,NULL)")
            .expect("reads");
        assert_eq!(v.head, "INSERT INTO t (a, \"values\") VALUES");
        assert_eq!(v.first_row, "(1, 'x''y')");
        assert_eq!(v.rows.len(), 2);
        for odd in [
            "INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING",
            "INSERT INTO t VALUES (1) RETURNING a",
            "INSERT INTO t VALUES (now())",
            "INSERT INTO t VALUES (1e5)",
            "INSERT INTO t VALUES ()",
            "INSERT INTO t SELECT * FROM (VALUES (1)) v",
            "INSERT INTO t DEFAULT VALUES",
            "UPDATE t SET a = 1",
            "INSERT INTO t VALUES (1), ",
        ] {
            assert!(values_insert(odd).is_none(), "{odd:?}");
        }
    }
}
