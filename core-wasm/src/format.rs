//! PostgreSQL's `format(formatstr, args…)`, `quote_literal` and `quote_nullable`.
//!
//! `format` reads `%[position$][-][width]type` specifiers: `s` (the argument as text, NULL as
//! nothing), `I` (an identifier, quoted when needed; NULL is an error), `L` (a literal, NULL as
//! `NULL`), `%%` a percent sign. A width may be `*` (the next argument) or `*n$`; a negative
//! width or `-` pads on the right. An explicit position moves the next argument after it.

use crate::error::SqlError;

fn bad(message: impl Into<String>) -> SqlError {
    SqlError::InvalidParameterHint {
        message: message.into(),
        hint: "For a single \"%\" use \"%%\".".into(),
    }
}

fn invalid(message: impl Into<String>) -> SqlError {
    SqlError::InvalidParameter {
        message: message.into(),
    }
}

fn out_of_range(message: impl Into<String>) -> SqlError {
    SqlError::MathDomain {
        code: "22003",
        message: message.into(),
    }
}

/// The longest result `format` builds (PostgreSQL's 1 GB value limit).
const MAX_RESULT_BYTES: usize = 0x3fff_ffff - 4;

/// A `*` width argument read as PostgreSQL's int4 input reads it.
fn width_argument(t: &str) -> Result<i64, SqlError> {
    let n: i128 = t.trim().parse().map_err(|_| SqlError::InvalidText {
        type_name: "integer".into(),
        input: t.to_string(),
    })?;
    i32::try_from(n)
        .map(i64::from)
        .map_err(|_| out_of_range(format!("value \"{t}\" is out of range for type integer")))
}

/// `quote_literal`: the text in single quotes, quotes doubled; with a backslash, an `E'…'`
/// string with the backslashes doubled too.
pub fn quote_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 3);
    if s.contains('\\') {
        out.push('E');
    }
    out.push('\'');
    for c in s.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// `format(fmt, args)`: `args` are the arguments as text (`None`: NULL).
pub fn format(fmt: &str, args: &[Option<String>]) -> Result<String, SqlError> {
    let chars: Vec<char> = fmt.chars().collect();
    let mut out = String::with_capacity(fmt.len());
    let mut next = 0usize;
    let mut i = 0;
    let arg = |n: usize| -> Result<&Option<String>, SqlError> {
        args.get(n)
            .ok_or_else(|| invalid("too few arguments for format()"))
    };
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.get(i) == Some(&'%') {
            out.push('%');
            i += 1;
            continue;
        }
        // `n$`: a 1-based argument position.
        let position = |i: &mut usize| -> Result<Option<usize>, SqlError> {
            let start = *i;
            let mut n: usize = 0;
            while let Some(d) = chars.get(*i).and_then(|c| c.to_digit(10)) {
                n = n
                    .checked_mul(10)
                    .and_then(|n| n.checked_add(d as usize))
                    .filter(|n| *n <= i32::MAX as usize)
                    .ok_or_else(|| out_of_range("number is out of range"))?;
                *i += 1;
            }
            if *i > start && chars.get(*i) == Some(&'$') {
                *i += 1;
                if n == 0 {
                    return Err(invalid(
                        "format specifies argument 0, but arguments are numbered from 1",
                    ));
                }
                return Ok(Some(n));
            }
            *i = start;
            Ok(None)
        };
        let explicit = position(&mut i)?;
        let mut left = false;
        while chars.get(i) == Some(&'-') {
            left = true;
            i += 1;
        }
        let mut width: Option<i64> = None;
        if chars.get(i) == Some(&'*') {
            i += 1;
            let n = match position(&mut i)? {
                Some(n) => n,
                None => {
                    next += 1;
                    next
                }
            };
            next = n;
            let w = arg(n - 1)?;
            width = Some(match w {
                None => 0,
                Some(t) => width_argument(t)?,
            });
        } else {
            let mut w: i64 = 0;
            let mut any = false;
            while let Some(d) = chars.get(i).and_then(|c| c.to_digit(10)) {
                w = w * 10 + i64::from(d);
                if w > i64::from(i32::MAX) {
                    return Err(out_of_range("number is out of range"));
                }
                any = true;
                i += 1;
            }
            if any {
                width = Some(w);
            }
        }
        let Some(&kind) = chars.get(i) else {
            return Err(bad("unterminated format() type specifier"));
        };
        i += 1;
        if !matches!(kind, 's' | 'I' | 'L') {
            return Err(bad(format!(
                "unrecognized format() type specifier \"{kind}\""
            )));
        }
        let n = match explicit {
            Some(n) => n,
            None => next + 1,
        };
        next = n;
        let value = arg(n - 1)?;
        let text = match (kind, value) {
            ('s', v) => v.clone().unwrap_or_default(),
            ('I', Some(v)) => crate::pgcatalog::quote_ident(v),
            ('I', None) => {
                return Err(SqlError::NullValueNotAllowed {
                    message: "null values cannot be formatted as an SQL identifier".into(),
                })
            }
            (_, Some(v)) => quote_literal(v),
            (_, None) => "NULL".into(),
        };
        let (left, width) = match width {
            Some(w) if w < 0 => (true, w.unsigned_abs() as usize),
            Some(w) => (left, w as usize),
            None => (left, 0),
        };
        let pad = width.saturating_sub(text.chars().count());
        if out.len() + text.len() + pad > MAX_RESULT_BYTES {
            return Err(SqlError::ProgramLimit {
                message: "out of memory".into(),
            });
        }
        if !left {
            out.extend(std::iter::repeat_n(' ', pad));
        }
        out.push_str(&text);
        if left {
            out.extend(std::iter::repeat_n(' ', pad));
        }
    }
    Ok(out)
}

/// PostgreSQL 15's server and client encodings, by number (`pg_encoding_to_char`).
pub const ENCODINGS: [&str; 42] = [
    "SQL_ASCII",
    "EUC_JP",
    "EUC_CN",
    "EUC_KR",
    "EUC_TW",
    "EUC_JIS_2004",
    "UTF8",
    "MULE_INTERNAL",
    "LATIN1",
    "LATIN2",
    "LATIN3",
    "LATIN4",
    "LATIN5",
    "LATIN6",
    "LATIN7",
    "LATIN8",
    "LATIN9",
    "LATIN10",
    "WIN1256",
    "WIN1258",
    "WIN866",
    "WIN874",
    "KOI8R",
    "WIN1251",
    "WIN1252",
    "ISO_8859_5",
    "ISO_8859_6",
    "ISO_8859_7",
    "ISO_8859_8",
    "WIN1250",
    "WIN1253",
    "WIN1254",
    "WIN1255",
    "WIN1257",
    "KOI8U",
    "SJIS",
    "BIG5",
    "GBK",
    "UHC",
    "GB18030",
    "JOHAB",
    "SHIFT_JIS_2004",
];

/// The aliases PostgreSQL 15 reads besides the names (`encnames.c`), cleaned as it cleans a
/// name (letters and digits only, lower case), with the encoding each means.
const ENCODING_ALIASES: &[(&str, &str)] = &[
    ("abc", "WIN1258"),
    ("alt", "WIN866"),
    ("iso88591", "LATIN1"),
    ("iso885910", "LATIN6"),
    ("iso885913", "LATIN7"),
    ("iso885914", "LATIN8"),
    ("iso885915", "LATIN9"),
    ("iso885916", "LATIN10"),
    ("iso88592", "LATIN2"),
    ("iso88593", "LATIN3"),
    ("iso88594", "LATIN4"),
    ("iso88599", "LATIN5"),
    ("koi8", "KOI8R"),
    ("mskanji", "SJIS"),
    ("shiftjis", "SJIS"),
    ("tcvn", "WIN1258"),
    ("tcvn5712", "WIN1258"),
    ("unicode", "UTF8"),
    ("vscii", "WIN1258"),
    ("win", "WIN1251"),
    ("win932", "SJIS"),
    ("win936", "GBK"),
    ("win949", "UHC"),
    ("win950", "BIG5"),
    ("windows1250", "WIN1250"),
    ("windows1251", "WIN1251"),
    ("windows1252", "WIN1252"),
    ("windows1253", "WIN1253"),
    ("windows1254", "WIN1254"),
    ("windows1255", "WIN1255"),
    ("windows1256", "WIN1256"),
    ("windows1257", "WIN1257"),
    ("windows1258", "WIN1258"),
    ("windows866", "WIN866"),
    ("windows874", "WIN874"),
    ("windows932", "SJIS"),
    ("windows936", "GBK"),
    ("windows949", "UHC"),
    ("windows950", "BIG5"),
];

/// PostgreSQL's `pg_char_to_encoding`: the number of the encoding `name` names (a name or an
/// alias, compared without case and anything but letters and digits).
pub fn encoding_number(name: &str) -> Option<i32> {
    let clean = |s: &str| -> String {
        s.chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let wanted = clean(name);
    let canonical = ENCODING_ALIASES
        .iter()
        .find(|(alias, _)| *alias == wanted)
        .map(|(_, e)| clean(e))
        .unwrap_or(wanted);
    ENCODINGS
        .iter()
        .position(|e| clean(e) == canonical)
        .and_then(|i| i32::try_from(i).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[Option<&str>]) -> Vec<Option<String>> {
        v.iter().map(|a| a.map(str::to_string)).collect()
    }

    #[test]
    fn specifiers_as_postgres_formats_them() {
        let a = args(&[Some("a b"), None, Some("it's")]);
        assert_eq!(format("%s|%s|%L", &a).expect("ok"), "a b||'it''s'");
        assert_eq!(format("%I.%L", &a[..2]).expect("ok"), "\"a b\".NULL");
        assert_eq!(format("%3$s %1$s %s", &a).expect("ok"), "it's a b ");
        assert_eq!(
            format("[%5s][%-5s]", &args(&[Some("x"), Some("y")])).expect("ok"),
            "[    x][y    ]"
        );
        assert_eq!(
            format("[%*s]", &args(&[Some("-3"), Some("x")])).expect("ok"),
            "[x  ]"
        );
        assert_eq!(format("100%%", &[]).expect("ok"), "100%");
        assert_eq!(quote_literal("a\\b'c"), "E'a\\\\b''c'");
    }

    #[test]
    fn errors_as_postgres_reports_them() {
        let e = |f: &str, a: &[Option<&str>]| format(f, &args(a)).expect_err(f).to_string();
        assert_eq!(e("%s %s", &[Some("x")]), "too few arguments for format()");
        assert_eq!(
            e("%x", &[Some("x")]),
            "unrecognized format() type specifier \"x\""
        );
        assert_eq!(e("abc %", &[]), "unterminated format() type specifier");
        assert_eq!(
            e("%0$s", &[Some("x")]),
            "format specifies argument 0, but arguments are numbered from 1"
        );
        assert_eq!(
            e("%I", &[None]),
            "null values cannot be formatted as an SQL identifier"
        );
        // Widths are int4s; a result past PostgreSQL's value limit is refused, not built.
        assert_eq!(e("%99999999999s", &[Some("x")]), "number is out of range");
        assert_eq!(
            e("%*s", &[Some("5000000000"), Some("x")]),
            "value \"5000000000\" is out of range for type integer"
        );
        assert_eq!(e("%2000000000s", &[Some("x")]), "out of memory");
    }
}
