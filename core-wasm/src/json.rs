//! PostgreSQL's `json` type: the text as written, checked against PostgreSQL's JSON grammar
//! (its lexer's tokens and its parser's error details); values written as JSON as
//! `to_json` writes them; and reading into a document (`->`, `->>`, `json_typeof`,
//! `json_array_length`), which for `json` returns the text of a member as written.

use crate::error::SqlError;
use crate::types::{format_text, PgType, Value};

/// A parsed JSON value: its byte range in the input and what it is.
#[derive(Debug)]
pub(crate) struct Node {
    start: usize,
    end: usize,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
    /// The string's value, escapes decoded.
    String(String),
    Number,
    Bool,
    Null,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    ObjStart,
    ObjEnd,
    ArrStart,
    ArrEnd,
    Comma,
    Colon,
    Str(String),
    Number,
    True,
    False,
    Null,
    End,
}

struct Lexer<'a> {
    s: &'a [u8],
    text: &'a str,
    /// Whether strings are decoded (`->`, `->>`): then, as in PostgreSQL, surrogates must
    /// pair and `\u0000` is refused; input checking only checks an escape's form.
    decode: bool,
    pos: usize,
    /// The current token's range.
    start: usize,
    end: usize,
}

/// Where a document failed: PostgreSQL's detail, and where its CONTEXT line ends.
struct Failure {
    detail: String,
    at: usize,
    /// A character text cannot hold (22P05) rather than bad syntax (22P02).
    untranslatable: bool,
}

fn alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

impl<'a> Lexer<'a> {
    fn token_text(&self) -> &'a str {
        self.text.get(self.start..self.end).unwrap_or("")
    }

    fn fail(&self, detail: String) -> Failure {
        Failure {
            detail,
            at: self.end,
            untranslatable: false,
        }
    }

    /// PostgreSQL's "Token … is invalid": the token runs on over letters and digits.
    fn invalid_word(&mut self, from: usize) -> Failure {
        let mut p = from;
        while p < self.s.len() && alnum(self.s[p]) {
            p += 1;
        }
        if p == self.start {
            p = self.start
                + self.text[self.start..]
                    .chars()
                    .next()
                    .map_or(1, char::len_utf8);
        }
        self.end = p;
        self.fail(format!("Token \"{}\" is invalid.", self.token_text()))
    }

    fn next(&mut self) -> Result<Tok, Failure> {
        while self.pos < self.s.len() && matches!(self.s[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        self.start = self.pos;
        self.end = self.pos;
        let Some(&c) = self.s.get(self.pos) else {
            return Ok(Tok::End);
        };
        let single = |t: Tok, l: &mut Self| {
            l.pos += 1;
            l.end = l.pos;
            Ok(t)
        };
        match c {
            b'{' => single(Tok::ObjStart, self),
            b'}' => single(Tok::ObjEnd, self),
            b'[' => single(Tok::ArrStart, self),
            b']' => single(Tok::ArrEnd, self),
            b',' => single(Tok::Comma, self),
            b':' => single(Tok::Colon, self),
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.number(),
            _ => {
                let mut p = self.pos;
                while p < self.s.len() && alnum(self.s[p]) {
                    p += 1;
                }
                let word = &self.text[self.pos..p];
                let tok = match word {
                    "true" => Tok::True,
                    "false" => Tok::False,
                    "null" => Tok::Null,
                    _ => return Err(self.invalid_word(self.pos)),
                };
                self.pos = p;
                self.end = p;
                Ok(tok)
            }
        }
    }

    /// PostgreSQL's `json_lex_number`: after a malformed part it reads on through the
    /// fraction, the exponent and any letters, so the invalid token is all of them.
    fn number(&mut self) -> Result<Tok, Failure> {
        let s = self.s;
        let mut p = self.pos;
        let mut error = false;
        let digits = |p: &mut usize| {
            let from = *p;
            while *p < s.len() && s[*p].is_ascii_digit() {
                *p += 1;
            }
            *p > from
        };
        if s.get(p) == Some(&b'-') {
            p += 1;
        }
        match s.get(p) {
            Some(b'0') => p += 1,
            Some(b'1'..=b'9') => {
                digits(&mut p);
            }
            _ => error = true,
        }
        if s.get(p) == Some(&b'.') {
            p += 1;
            error |= !digits(&mut p);
        }
        if matches!(s.get(p), Some(b'e' | b'E')) {
            p += 1;
            if matches!(s.get(p), Some(b'+' | b'-')) {
                p += 1;
            }
            error |= !digits(&mut p);
        }
        if error || p < s.len() && alnum(s[p]) {
            return Err(self.invalid_word(p));
        }
        self.pos = p;
        self.end = p;
        Ok(Tok::Number)
    }

    fn string(&mut self) -> Result<Tok, Failure> {
        let s = self.s;
        let text = self.text;
        let mut p = self.pos + 1;
        let mut out = String::new();
        let mut high: Option<u32> = None;
        // Tokens end on character boundaries: a multi-byte character is taken whole.
        let char_len = |p: usize| {
            text.get(p..)
                .and_then(|t| t.chars().next())
                .map_or(1, char::len_utf8)
        };
        loop {
            let Some(&c) = s.get(p) else {
                // Unterminated: the whole rest is the invalid token.
                self.end = s.len();
                return Err(self.invalid_token());
            };
            if c == b'"' {
                p += 1;
                break;
            }
            if c < 0x20 {
                self.end = p + 1;
                return Err(self.fail(format!("Character with value 0x{c:02x} must be escaped.")));
            }
            if c != b'\\' {
                let n = char_len(p);
                if self.decode {
                    if high.is_some() {
                        self.end = p + n;
                        return Err(self.fail(LOW_SURROGATE.into()));
                    }
                    out.push_str(text.get(p..p + n).unwrap_or(""));
                }
                p += n;
                continue;
            }
            let Some(&e) = s.get(p + 1) else {
                self.end = s.len();
                return Err(self.invalid_token());
            };
            if e == b'u' {
                let mut code = 0u32;
                for i in 2..6 {
                    match s.get(p + i) {
                        None => {
                            self.end = s.len();
                            return Err(self.invalid_token());
                        }
                        Some(h) if h.is_ascii_hexdigit() => {
                            code = code * 16 + char::from(*h).to_digit(16).unwrap_or(0);
                        }
                        Some(_) => {
                            self.end = p + i + char_len(p + i);
                            return Err(self.fail(
                                "\"\\u\" must be followed by four hexadecimal digits.".into(),
                            ));
                        }
                    }
                }
                p += 6;
                self.end = p;
                if !self.decode {
                    continue;
                }
                let ch = match (code, high.take()) {
                    (0xd800..=0xdbff, Some(_)) => {
                        return Err(self.fail(
                            "Unicode high surrogate must not follow a high surrogate.".into(),
                        ))
                    }
                    (0xd800..=0xdbff, None) => {
                        high = Some(code);
                        continue;
                    }
                    (0xdc00..=0xdfff, Some(h)) => 0x10000 + ((h - 0xd800) << 10) + (code - 0xdc00),
                    (0xdc00..=0xdfff, None) | (_, Some(_)) => {
                        return Err(self.fail(LOW_SURROGATE.into()))
                    }
                    (c, None) => c,
                };
                if ch == 0 {
                    return Err(Failure {
                        untranslatable: true,
                        ..self.fail("\\u0000 cannot be converted to text.".into())
                    });
                }
                out.push(char::from_u32(ch).unwrap_or('\u{fffd}'));
                continue;
            }
            if self.decode && high.is_some() {
                self.end = p + 2;
                return Err(self.fail(LOW_SURROGATE.into()));
            }
            let decoded = match e {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                _ => {
                    let n = char_len(p + 1);
                    self.end = p + 1 + n;
                    return Err(self.fail(format!(
                        "Escape sequence \"{}\" is invalid.",
                        text.get(p..p + 1 + n).unwrap_or("")
                    )));
                }
            };
            if self.decode {
                out.push(decoded);
            }
            p += 2;
        }
        if self.decode && high.is_some() {
            self.end = p;
            return Err(self.fail(LOW_SURROGATE.into()));
        }
        self.pos = p;
        self.end = p;
        Ok(Tok::Str(out))
    }

    fn invalid_token(&self) -> Failure {
        self.fail(format!("Token \"{}\" is invalid.", self.token_text()))
    }
}

const LOW_SURROGATE: &str = "Unicode low surrogate must follow a high surrogate.";

/// Which token the parser wanted, for PostgreSQL's "Expected …, but found …" detail.
#[derive(Clone, Copy)]
enum Want {
    Value,
    ObjectFirst,
    ObjectNext,
    ObjectKey,
    Colon,
    ArrayNext,
    End,
}

struct Parser<'a> {
    lex: Lexer<'a>,
    tok: Tok,
}

impl Parser<'_> {
    fn advance(&mut self) -> Result<(), Failure> {
        self.tok = self.lex.next()?;
        Ok(())
    }

    fn unexpected(&self, want: Want) -> Failure {
        if self.tok == Tok::End {
            return self.lex.fail("The input string ended unexpectedly.".into());
        }
        let found = self.lex.token_text();
        self.lex.fail(match want {
            Want::Value => format!("Expected JSON value, but found \"{found}\"."),
            Want::ObjectFirst => format!("Expected string or \"}}\", but found \"{found}\"."),
            Want::ObjectNext => format!("Expected \",\" or \"}}\", but found \"{found}\"."),
            Want::ObjectKey => format!("Expected string, but found \"{found}\"."),
            Want::Colon => format!("Expected \":\", but found \"{found}\"."),

            Want::ArrayNext => format!("Expected \",\" or \"]\", but found \"{found}\"."),
            Want::End => format!("Expected end of input, but found \"{found}\"."),
        })
    }

    /// One value starting at the current token; leaves the token after it current.
    fn value(&mut self, want: Want, depth: usize) -> Result<Node, Failure> {
        if depth > MAX_DEPTH {
            return Err(Failure {
                detail: String::new(),
                at: usize::MAX,
                untranslatable: false,
            });
        }
        let start = self.lex.start;
        let kind = match std::mem::replace(&mut self.tok, Tok::End) {
            Tok::Str(s) => Kind::String(s),
            Tok::Number => Kind::Number,
            Tok::True | Tok::False => Kind::Bool,
            Tok::Null => Kind::Null,
            Tok::ObjStart => return self.object(start, depth),
            Tok::ArrStart => return self.array(start, depth),
            other => {
                self.tok = other;
                return Err(self.unexpected(want));
            }
        };
        let end = self.lex.end;
        self.advance()?;
        Ok(Node { start, end, kind })
    }

    /// Ends a container at the current token (its `}` or `]`).
    fn close(&mut self, start: usize, kind: Kind) -> Result<Node, Failure> {
        let end = self.lex.end;
        self.advance()?;
        Ok(Node { start, end, kind })
    }

    fn object(&mut self, start: usize, depth: usize) -> Result<Node, Failure> {
        self.advance()?;
        let mut fields = Vec::new();
        if self.tok == Tok::ObjEnd {
            return self.close(start, Kind::Object(fields));
        }
        let mut want = Want::ObjectFirst;
        loop {
            let key = match std::mem::replace(&mut self.tok, Tok::End) {
                Tok::Str(key) => key,
                other => {
                    self.tok = other;
                    return Err(self.unexpected(want));
                }
            };
            self.advance()?;
            if self.tok != Tok::Colon {
                return Err(self.unexpected(Want::Colon));
            }
            self.advance()?;
            fields.push((key, self.value(Want::Value, depth + 1)?));
            match self.tok {
                Tok::Comma => {
                    self.advance()?;
                    want = Want::ObjectKey;
                }
                Tok::ObjEnd => {
                    return self.close(start, Kind::Object(fields));
                }
                _ => return Err(self.unexpected(Want::ObjectNext)),
            }
        }
    }

    fn array(&mut self, start: usize, depth: usize) -> Result<Node, Failure> {
        self.advance()?;
        let mut items = Vec::new();
        if self.tok == Tok::ArrEnd {
            return self.close(start, Kind::Array(items));
        }
        loop {
            items.push(self.value(Want::Value, depth + 1)?);
            match self.tok {
                Tok::Comma => self.advance()?,
                Tok::ArrEnd => {
                    return self.close(start, Kind::Array(items));
                }
                _ => return Err(self.unexpected(Want::ArrayNext)),
            }
        }
    }
}

/// Parses a whole document as PostgreSQL's `json_in` checks it.
pub(crate) fn parse(text: &str) -> Result<Node, SqlError> {
    parse_as(text, false)
}

/// Nesting past this is PostgreSQL's 54001 (its stack depth check), here a bound on the
/// parser's recursion.
const MAX_DEPTH: usize = 6400;

/// Parses a whole document: as PostgreSQL's `json_in` checks it, or (`decode`) as its json
/// operators read it.
fn parse_as(text: &str, decode: bool) -> Result<Node, SqlError> {
    let run = || -> Result<Node, Failure> {
        let mut p = Parser {
            lex: Lexer {
                s: text.as_bytes(),
                text,
                decode,
                pos: 0,
                start: 0,
                end: 0,
            },
            tok: Tok::End,
        };
        p.advance()?;
        let node = p.value(Want::Value, 0)?;
        if p.tok != Tok::End {
            return Err(p.unexpected(Want::End));
        }
        Ok(node)
    };
    run().map_err(|f| match f {
        Failure { at: usize::MAX, .. } => SqlError::StackDepth,
        Failure {
            untranslatable: true,
            detail,
            at,
        } => SqlError::UntranslatableJson {
            detail,
            context: context_line(text, at),
        },
        Failure { detail, at, .. } => SqlError::InvalidJson {
            detail,
            context: context_line(text, at),
        },
    })
}

/// PostgreSQL's CONTEXT for a JSON error: the line up to the end of the failing token, its
/// last 50 bytes at most.
fn context_line(text: &str, at: usize) -> String {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let mut start = line_start;
    while at - start >= 50 {
        start += text[start..].chars().next().map_or(1, char::len_utf8);
    }
    // Within 3 bytes of the line's start, PostgreSQL shows the whole line.
    if start - line_start <= 3 {
        start = line_start;
    }
    let rest = &text[at..];
    let suffix = if !rest.is_empty() && !rest.starts_with(['\n', '\r']) {
        "..."
    } else {
        ""
    };
    let prefix = if start > line_start { "..." } else { "" };
    format!(
        "JSON data, line {line}: {prefix}{}{suffix}",
        &text[start..at]
    )
}

/// Checks `text` as `json` input; the value is the text itself.
pub(crate) fn validate(text: &str) -> Result<(), SqlError> {
    parse(text).map(|_| ())
}

/// `s` as a JSON string literal, escaped as PostgreSQL's `escape_json`.
pub(crate) fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `v` of type `ty` as `to_json` writes it (`datum_to_json`).
pub(crate) fn write_value(v: &Value, ty: PgType, out: &mut String) {
    if v.is_null() {
        out.push_str("null");
        return;
    }
    let text = || format_text(v, ty).unwrap_or_default();
    match (v, ty) {
        (Value::Array(items), _) => {
            let elem = ty.element().unwrap_or(PgType::Text);
            out.push('[');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(it, elem, out);
            }
            out.push(']');
        }
        (Value::Bool(b), _) => out.push_str(if *b { "true" } else { "false" }),
        (_, PgType::Json) => out.push_str(&text()),
        (
            _,
            PgType::Int2
            | PgType::Int4
            | PgType::Int8
            | PgType::Float4
            | PgType::Float8
            | PgType::Numeric,
        ) => {
            let t = text();
            // NaN and the infinities are no JSON numbers: written as strings.
            if t.bytes()
                .next()
                .is_some_and(|b| b == b'-' || b.is_ascii_digit())
                && !t.ends_with("Infinity")
            {
                out.push_str(&t);
            } else {
                quote(&t, out);
            }
        }
        (_, PgType::Date) => quote(&text(), out),
        (_, PgType::Timestamp) => quote(&text().replacen(' ', "T", 1), out),
        (_, PgType::Timestamptz) => quote(&iso_timestamptz(&text()), out),
        _ => quote(&text(), out),
    }
}

/// `2024-01-02 03:04:05.5+02` as XML Schema's `2024-01-02T03:04:05.5+02:00`.
fn iso_timestamptz(t: &str) -> String {
    let t = t.replacen(' ', "T", 1);
    let Some(at) = t.rfind(['+', '-']).filter(|&i| t[..i].contains('T')) else {
        return t;
    };
    let (time, zone) = t.split_at(at);
    let zone = if zone.len() == 3 {
        format!("{zone}:00")
    } else {
        zone.to_string()
    };
    format!("{time}{zone}")
}

/// `->`: the member's text as written and whether it is `null`, or `None` when there is none.
pub(crate) fn get<'t>(
    text: &'t str,
    key: Option<&str>,
    index: Option<i64>,
) -> Result<Option<(&'t str, bool)>, SqlError> {
    let doc = parse_as(text, true)?;
    Ok(member(&doc, key, index).map(|n| (&text[n.start..n.end], matches!(n.kind, Kind::Null))))
}

/// The member `key` of an object, or element `index` of an array (negative from the end).
fn member<'d>(doc: &'d Node, key: Option<&str>, index: Option<i64>) -> Option<&'d Node> {
    match (&doc.kind, key, index) {
        // With a key given twice, PostgreSQL's json operators find the last.
        (Kind::Object(fields), Some(k), _) => fields
            .iter()
            .rev()
            .find(|(name, _)| name == k)
            .map(|(_, n)| n),
        (Kind::Array(items), _, Some(i)) => {
            let i = if i < 0 { items.len() as i64 + i } else { i };
            usize::try_from(i).ok().and_then(|i| items.get(i))
        }
        _ => None,
    }
}

/// `->>`: a string member's value unescaped, another member's text, SQL NULL for `null`.
/// The document is parsed (and its strings decoded) once.
pub(crate) fn get_text(
    text: &str,
    key: Option<&str>,
    index: Option<i64>,
) -> Result<Value, SqlError> {
    let doc = parse_as(text, true)?;
    Ok(member(&doc, key, index).map_or(Value::Null, |n| member_text(text, n)))
}

/// A member's value as `->>` and the `_text` functions give it: a string unescaped, `null`
/// as SQL NULL, anything else as written.
fn member_text(text: &str, n: &Node) -> Value {
    match &n.kind {
        Kind::Null => Value::Null,
        Kind::String(s) => Value::text(s.as_str()),
        _ => Value::text(&text[n.start..n.end]),
    }
}

/// `#>` (`as_text`: `#>>`): the member at `path` — an object's member by key, an array's
/// element by an index (negative from the end; an element that is no integer finds
/// nothing) — as written (as text); NULL when there is none or a step is NULL. The empty
/// path finds the whole document.
pub(crate) fn get_path(
    text: &str,
    path: &[Option<&str>],
    as_text: bool,
) -> Result<Value, SqlError> {
    let doc = parse_as(text, true)?;
    let mut at = &doc;
    for step in path {
        let Some(step) = step else {
            return Ok(Value::Null);
        };
        let found = match &at.kind {
            Kind::Object(_) => member(at, Some(step), None),
            Kind::Array(_) => match step.trim_start().parse::<i64>() {
                Ok(i) if !step.ends_with(char::is_whitespace) => member(at, None, Some(i)),
                _ => None,
            },
            _ => None,
        };
        match found {
            Some(n) => at = n,
            None => return Ok(Value::Null),
        }
    }
    Ok(if as_text {
        member_text(text, at)
    } else {
        Value::text(&text[at.start..at.end])
    })
}

/// The rows of `json_each` (`as_text`: `json_each_text`): each member's key and value, in
/// document order, duplicates too.
pub(crate) fn each(text: &str, as_text: bool) -> Result<Vec<Vec<Value>>, SqlError> {
    match parse_as(text, true)?.kind {
        Kind::Object(fields) => Ok(fields
            .iter()
            .map(|(k, n)| {
                let value = if as_text {
                    member_text(text, n)
                } else {
                    Value::text(&text[n.start..n.end])
                };
                vec![Value::text(k.as_str()), value]
            })
            .collect()),
        Kind::Array(_) => Err(cannot("cannot deconstruct an array as an object")),
        _ => Err(cannot("cannot deconstruct a scalar")),
    }
}

/// The rows of `json_array_elements` (`as_text`: `json_array_elements_text`), named `function`
/// in its errors.
pub(crate) fn elements(
    text: &str,
    as_text: bool,
    function: &str,
) -> Result<Vec<Vec<Value>>, SqlError> {
    match parse_as(text, true)?.kind {
        Kind::Array(items) => Ok(items
            .iter()
            .map(|n| {
                vec![if as_text {
                    member_text(text, n)
                } else {
                    Value::text(&text[n.start..n.end])
                }]
            })
            .collect()),
        Kind::Object(_) => Err(cannot(&format!("cannot call {function} on a non-array"))),
        _ => Err(cannot(&format!("cannot call {function} on a scalar"))),
    }
}

/// The rows of `json_object_keys`: each member's key, duplicates too.
pub(crate) fn object_keys(text: &str) -> Result<Vec<Vec<Value>>, SqlError> {
    match parse_as(text, true)?.kind {
        Kind::Object(fields) => Ok(fields
            .iter()
            .map(|(k, _)| vec![Value::text(k.as_str())])
            .collect()),
        Kind::Array(_) => Err(cannot("cannot call json_object_keys on an array")),
        _ => Err(cannot("cannot call json_object_keys on a scalar")),
    }
}

fn cannot(message: &str) -> SqlError {
    SqlError::InvalidParameter {
        message: message.into(),
    }
}

pub(crate) fn typeof_(text: &str) -> Result<&'static str, SqlError> {
    Ok(match parse(text)?.kind {
        Kind::Object(_) => "object",
        Kind::Array(_) => "array",
        Kind::String(_) => "string",
        Kind::Number => "number",
        Kind::Bool => "boolean",
        Kind::Null => "null",
    })
}

pub(crate) fn array_length(text: &str) -> Result<i64, SqlError> {
    match parse(text)?.kind {
        Kind::Array(items) => Ok(items.len() as i64),
        Kind::Object(_) => Err(SqlError::InvalidParameter {
            message: "cannot get array length of a non-array".into(),
        }),
        _ => Err(SqlError::InvalidParameter {
            message: "cannot get array length of a scalar".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(text: &str) -> String {
        match parse(text) {
            Err(SqlError::InvalidJson { detail, .. }) => detail,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn documents_parse_as_postgresql_reads_them() {
        for ok in [
            "1",
            "-0",
            "1.5e-3",
            "\"a\\u00e9\\ud83d\\ude00\"",
            " [1, {\"a\" : [true, false, null]}] ",
            "{}",
            "[]",
            "\"\\u0000\"",
            "{\"a\":1,\"a\":2}",
        ] {
            assert!(parse(ok).is_ok(), "{ok}");
        }
        assert_eq!(detail("x"), "Token \"x\" is invalid.");
        assert_eq!(detail("01"), "Token \"01\" is invalid.");
        assert_eq!(detail("1.x"), "Token \"1.x\" is invalid.");
        assert_eq!(detail("[1, 2"), "The input string ended unexpectedly.");
        assert_eq!(detail(""), "The input string ended unexpectedly.");
        assert_eq!(detail("{\"a\" 1}"), "Expected \":\", but found \"1\".");
        assert_eq!(
            detail("{1:2}"),
            "Expected string or \"}\", but found \"1\"."
        );
        assert_eq!(detail("{\"a\":1,}"), "Expected string, but found \"}\".");
        assert_eq!(detail("[1 2]"), "Expected \",\" or \"]\", but found \"2\".");
        assert_eq!(detail("[,]"), "Expected JSON value, but found \",\".");
        assert_eq!(detail("-.5"), "Token \"-.5\" is invalid.");
        assert_eq!(detail("\"\\u12"), "Token \"\"\\u12\" is invalid.");
        // A multi-byte character where a token ends is not split (the CONTEXT line).
        for bad in ["\"\\u12€\"", "\"\\u1éé\"", "[\"€\", é]", "\"\\é\""] {
            assert!(
                matches!(parse(bad), Err(SqlError::InvalidJson { .. })),
                "{bad}"
            );
        }
        assert_eq!(detail("[1,]"), "Expected JSON value, but found \"]\".");
        assert_eq!(detail("1 2"), "Expected end of input, but found \"2\".");
        assert_eq!(
            detail("\"a\nb\""),
            "Character with value 0x0a must be escaped."
        );
        assert_eq!(detail("\"\\x\""), "Escape sequence \"\\x\" is invalid.");
        assert_eq!(
            detail("\"\\u12\""),
            "\"\\u\" must be followed by four hexadecimal digits."
        );
        // Input checks an escape's form only; reading a member decodes it.
        assert!(parse("\"\\udc00\"").is_ok());
        assert!(matches!(
            get("[\"\\udc00\"]", None, Some(0)),
            Err(SqlError::InvalidJson { .. })
        ));
        assert!(matches!(
            get_text("{\"a\": \"\\u0000\"}", Some("a"), None),
            Err(SqlError::UntranslatableJson { .. })
        ));
        assert_eq!(detail("\"abc"), "Token \"\"abc\" is invalid.");
    }

    proptest::proptest! {
        /// No input makes the lexer, the parser or the CONTEXT line panic (slicing inside a
        /// multi-byte character was one way), decoded or not.
        #[test]
        fn any_text_parses_or_fails_cleanly(
            text in "[\\[\\]{}:,\"\\\\ u0-9a-fé€.eE+-]{0,24}|\\PC{0,24}",
        ) {
            let _ = parse(&text);
            let _ = get(&text, Some("a"), None);
            let _ = get_text(&text, None, Some(0));
        }
    }

    #[test]
    fn members_are_read_as_written() {
        let doc = "{\"a\": [1, {\"x\" : \"y\\n\"} , 3], \"b\": null, \"a2\": \"q\\\"\"}";
        assert_eq!(
            get(doc, Some("a"), None).expect("ok").map(|m| m.0),
            Some("[1, {\"x\" : \"y\\n\"} , 3]")
        );
        assert_eq!(
            get("[1, 2, 3]", None, Some(-1)).expect("ok").map(|m| m.0),
            Some("3")
        );
        assert_eq!(get("[1]", None, Some(5)).expect("ok"), None);
        assert_eq!(
            get_text(doc, Some("a2"), None).expect("ok"),
            Value::text("q\"")
        );
        assert_eq!(get_text(doc, Some("b"), None).expect("ok"), Value::Null);
        assert_eq!(typeof_(" {}").expect("ok"), "object");
        assert_eq!(array_length("[1,[2,3]]").expect("ok"), 2);
    }

    #[test]
    fn values_are_written_as_to_json_writes_them() {
        let json = |v: Value, ty| {
            let mut s = String::new();
            write_value(&v, ty, &mut s);
            s
        };
        assert_eq!(
            json(Value::text("a\"b\t\u{1}"), PgType::Text),
            "\"a\\\"b\\t\\u0001\""
        );
        assert_eq!(
            json(
                Value::Array(vec![Value::Int(1), Value::Null].into()),
                PgType::Int4Array
            ),
            "[1,null]"
        );
        assert_eq!(json(Value::Float(f64::NAN), PgType::Float8), "\"NaN\"");
        assert_eq!(
            json(Value::Numeric("-Infinity".into()), PgType::Numeric),
            "\"-Infinity\""
        );
        assert_eq!(json(Value::Int(7), PgType::Oid), "\"7\"");
        assert_eq!(
            iso_timestamptz("2024-01-02 01:04:05.5+00"),
            "2024-01-02T01:04:05.5+00:00"
        );
        assert_eq!(
            iso_timestamptz("2024-01-02 08:34:05+05:30"),
            "2024-01-02T08:34:05+05:30"
        );
    }
}
