//! Bind parameters of the extended query protocol (`$1`, `$2`, …).
//!
//! The core executes SQL text, so a bound statement is the statement with each placeholder
//! replaced by a literal of the parameter's value: `'text'::type` when the client (or Parse)
//! gave a type, an untyped `'text'` otherwise, which PostgreSQL's rules type from its context
//! exactly like the parameter would have been. Placeholders inside string literals, quoted
//! identifiers, comments and dollar-quoted strings are left alone.

use crate::api::PgError;
use crate::types::PgType;

/// Where the block comment starting at `i` (`/*`) ends: past its `*/`, counting nested
/// comments as PostgreSQL's lexer does, or the end of `s`. Over bytes or characters.
pub(crate) fn block_comment_end<T: Copy + PartialEq>(
    s: &[T],
    mut i: usize,
    slash: T,
    star: T,
) -> usize {
    let at = |i: usize, a: T, b: T| s.get(i) == Some(&a) && s.get(i + 1) == Some(&b);
    let mut depth = 0usize;
    while i < s.len() {
        if at(i, slash, star) {
            depth += 1;
            i += 2;
        } else if at(i, star, slash) {
            depth -= 1;
            i += 2;
            if depth == 0 {
                break;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// One placeholder occurrence: byte range in the SQL text and its number (1-based).
fn placeholders(sql: &str) -> Vec<(usize, usize, usize)> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' => {
                // '…' with '' escapes; E'…' also has backslash escapes.
                let escapes = i > 0 && (b[i - 1] == b'E' || b[i - 1] == b'e');
                i += 1;
                while i < b.len() {
                    if escapes && b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == b'\'' {
                        if b.get(i + 1) == Some(&b'\'') {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += 1;
                }
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => i = block_comment_end(b, i, b'/', b'*'),
            b'$' => {
                let start = i;
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                let prev_ident =
                    start > 0 && (b[start - 1].is_ascii_alphanumeric() || b[start - 1] == b'_');
                if j > i + 1 && !prev_ident {
                    if let Ok(n) = sql[i + 1..j].parse::<usize>() {
                        out.push((start, j, n));
                    }
                    i = j;
                    continue;
                }
                // $tag$ … $tag$ (also $$ … $$).
                let mut k = i + 1;
                while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                    k += 1;
                }
                if !prev_ident && k < b.len() && b[k] == b'$' {
                    let tag = &sql[i..=k];
                    match sql[k + 1..].find(tag) {
                        Some(end) => i = k + 1 + end + tag.len(),
                        None => i = b.len(),
                    }
                    continue;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// How many parameters the statement has (the highest `$n` it uses); `$0` is refused as
/// PostgreSQL does at Parse (parameters are numbered from 1).
pub fn count(sql: &str) -> Result<usize, PgError> {
    let mut max = 0;
    for (_, _, n) in placeholders(sql) {
        if n == 0 {
            return Err(PgError::new("42P02", "there is no parameter $0"));
        }
        max = max.max(n);
    }
    Ok(max)
}

/// The name a parameter of type `oid` is cast to (the type table's own names; arrays in the
/// `elem[]` spelling the SQL layer reads).
fn type_name(oid: u32) -> Option<&'static str> {
    crate::types::type_by_oid(oid).map(|t| match t {
        t if t.is_array() => t.sql_name(),
        _ => t.typname(),
    })
}

/// `sql` with each placeholder `$n` replaced by `with(n)`.
pub fn replace_with(sql: &str, with: impl FnMut(usize) -> String) -> String {
    replace(sql, with)
}

fn replace(sql: &str, mut with: impl FnMut(usize) -> String) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut last = 0;
    for (start, end, n) in placeholders(sql) {
        out.push_str(&sql[last..start]);
        out.push_str(&with(n));
        last = end;
    }
    out.push_str(&sql[last..]);
    out
}

/// The statement as Parse/Describe sees it: each parameter the client typed a NULL of its
/// type; the others stay `$n`, for the core to type from their context (Describe reports it).
pub fn for_describe(sql: &str, types: &[u32]) -> String {
    replace(sql, |n| describe_stand_in(types, n))
}

fn describe_stand_in(types: &[u32], n: usize) -> String {
    match n
        .checked_sub(1)
        .and_then(|i| types.get(i))
        .copied()
        .and_then(type_name)
    {
        Some(t) => format!("CAST(NULL AS {t})"),
        None if n > 0 => format!("${n}"),
        None => "NULL".to_string(),
    }
}

/// An error position (1-based, in characters) in [`for_describe`]'s text of `sql` as one in
/// `sql`, the client's text: a position inside a stand-in points at its `$n`.
pub fn describe_position(sql: &str, types: &[u32], position: u32) -> Option<u32> {
    let target = usize::try_from(position).ok()?.checked_sub(1)?;
    // Characters before the current point, in the described text and in the client's.
    let (mut described, mut client) = (0, 0);
    let mut last = 0;
    for (start, end, n) in placeholders(sql) {
        let between = sql[last..start].chars().count();
        if target < described + between {
            break;
        }
        described += between;
        client += between;
        if target < described + describe_stand_in(types, n).chars().count() {
            return u32::try_from(client + 1).ok();
        }
        described += describe_stand_in(types, n).chars().count();
        client += sql[start..end].chars().count();
        last = end;
    }
    u32::try_from(client + (target - described) + 1).ok()
}

/// A parameter value from Bind, in text form (binary values decoded by [`decode_binary`]).
pub type ParamText = Option<String>;

/// The statement with every parameter replaced by a literal of its value.
pub fn substitute(sql: &str, types: &[u32], values: &[ParamText]) -> Result<String, PgError> {
    let mut missing = None;
    let out = replace(sql, |n| {
        let Some(v) = n.checked_sub(1).and_then(|i| values.get(i)) else {
            missing = Some(n);
            return String::new();
        };
        let ty = types.get(n - 1).copied().and_then(type_name);
        match (v, ty) {
            (None, Some(t)) => format!("CAST(NULL AS {t})"),
            (None, None) => "NULL".to_string(),
            (Some(s), Some(t)) => format!("CAST({} AS {t})", quote(s)),
            (Some(s), None) => quote(s),
        }
    });
    match missing {
        Some(n) => Err(PgError::new("42P02", format!("there is no parameter ${n}"))),
        None => Ok(out),
    }
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// PostgreSQL's 22021 for bytes that are not UTF-8: the first bad sequence's bytes, as many as
/// its first byte announces (`report_invalid_encoding`).
pub fn invalid_utf8(raw: &[u8]) -> PgError {
    let at = std::str::from_utf8(raw)
        .err()
        .map_or(0, |e| e.valid_up_to());
    crate::copyformat::invalid_utf8(&raw[at..]).to_pg()
}

/// Whether a text-format parameter reads as its type `oid`: the error reading it gives, for
/// the types whose input needs neither the catalog nor the session (not the reg types, nor
/// dates and times, whose words such as `now` need the clock and the time zone).
pub fn check_text(oid: u32, text: &str) -> Result<(), PgError> {
    fn context_free(ty: PgType) -> bool {
        match ty {
            PgType::Bool
            | PgType::Int2
            | PgType::Int4
            | PgType::Int8
            | PgType::Oid
            | PgType::Float4
            | PgType::Float8
            | PgType::Numeric
            | PgType::Bytea
            | PgType::Uuid
            | PgType::Inet
            | PgType::Json
            | PgType::Tid => true,
            ty if ty.is_array() && !ty.is_vector() => ty.element().is_some_and(context_free),
            _ => false,
        }
    }
    match crate::types::type_by_oid(oid) {
        Some(ty) if context_free(ty) => crate::types::parse_text(text, ty)
            .map(drop)
            .map_err(|e| e.to_pg()),
        _ => Ok(()),
    }
}

/// Decodes a binary-format parameter of type `oid` into its text form.
pub fn decode_binary(oid: u32, b: &[u8]) -> Result<String, PgError> {
    let bad = || {
        PgError::new(
            "22P03",
            format!("incorrect binary data format in bind parameter of type {oid}"),
        )
    };
    // A fixed-size value of `n` bytes: too few is the message running out (08P01), too many
    // bytes left unread (22P03), as PostgreSQL's receive functions find them.
    let sized = |n: usize| -> Result<(), PgError> {
        match b.len().cmp(&n) {
            std::cmp::Ordering::Less => {
                Err(PgError::new("08P01", "insufficient data left in message"))
            }
            std::cmp::Ordering::Greater => Err(bad()),
            std::cmp::Ordering::Equal => Ok(()),
        }
    };
    let int = |n: usize| -> Result<i64, PgError> {
        sized(n)?;
        Ok(match n {
            2 => i64::from(i16::from_be_bytes([b[0], b[1]])),
            4 => i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])),
            _ => i64::from_be_bytes(b.try_into().map_err(|_| bad())?),
        })
    };
    Ok(match oid {
        16 => {
            sized(1)?;
            // boolrecv takes any byte other than 0 as true.
            if b[0] == 0 { "false" } else { "true" }.into()
        }
        21 => int(2)?.to_string(),
        23 | 26 => int(4)?.to_string(),
        20 => int(8)?.to_string(),
        700 => {
            sized(4)?;
            f32::from_be_bytes(b.try_into().map_err(|_| bad())?).to_string()
        }
        701 => {
            sized(8)?;
            f64::from_be_bytes(b.try_into().map_err(|_| bad())?).to_string()
        }
        25 | 1043 | 19 | 0 => String::from_utf8(b.to_vec()).map_err(|_| invalid_utf8(b))?,
        17 => {
            let mut s = String::from("\\x");
            for x in b {
                s.push_str(&format!("{x:02x}"));
            }
            s
        }
        2950 => {
            sized(16)?;
            crate::types::fmt_uuid(&b.try_into().map_err(|_| bad())?)
        }
        // The other scalar types (numeric, dates and times, interval, bpchar, …): PostgreSQL's
        // receive format, shown as text for the literal the statement is bound with.
        _ => match crate::types::type_by_oid(oid) {
            Some(ty) => {
                // A malformed value is 22P03; an array of another element type or shape
                // keeps its own error (42804, 0A000).
                let v = crate::wire::decode_binary(b, ty).map_err(|e| match e {
                    crate::error::SqlError::BadCopyFormat { .. } => bad(),
                    e => e.to_pg(),
                })?;
                crate::types::format_text(&v, ty).ok_or_else(bad)?
            }
            None => {
                return Err(PgError::new(
                    "0A000",
                    format!("binary format for bind parameters of type {oid} is not supported"),
                )
                .with_hint("Send the parameter in text format."))
            }
        },
    })
}

/// The parameter numbers `$n` that occur in `sql` (outside literals, identifiers and comments).
pub fn numbers(sql: &str) -> std::collections::BTreeSet<usize> {
    placeholders(sql).into_iter().map(|(_, _, n)| n).collect()
}

/// Whether results of type `oid` can be sent in binary format ([`text_to_binary`]): not
/// `regclass` or `regnamespace`, whose text (a relation's or schema's name) gives back the OID
/// only through the catalog. A `regproc`'s or `regtype`'s name does (built-in functions and
/// types).
pub fn binary_result_supported(oid: u32) -> bool {
    oid == PgType::Void.oid()
        || crate::types::type_by_oid(oid)
            .is_some_and(|t| !matches!(t, PgType::Regclass | PgType::Regnamespace))
}

/// A result cell in PostgreSQL's binary send format, from its text form: results cross the
/// core boundary as text, and a client that asks for binary results (Bind result format 1)
/// gets them converted here, through the same parser and encoder as COPY.
pub fn text_to_binary(oid: u32, text: &[u8]) -> Result<Vec<u8>, PgError> {
    if oid == PgType::Void.oid() {
        // PostgreSQL's `void_send`: no bytes (what `pg_advisory_lock()` or `pg_sleep()`
        // answer to sqlx, which asks for binary results).
        return Ok(Vec::new());
    }
    let ty = crate::types::type_by_oid(oid).ok_or_else(|| {
        PgError::new(
            "0A000",
            format!("binary format for results of type {oid} is not supported"),
        )
    })?;
    let s = std::str::from_utf8(text).map_err(|_| invalid_utf8(text))?;
    // A name, as the text output writes it: its OID (`regprocsend`, `regtypesend`).
    let named = match ty {
        PgType::Regproc => Some(crate::query::proc_oid_by_name(s).map_err(|e| e.to_pg())?),
        PgType::Regtype => Some(
            crate::query::type_oid_by_name(s)
                .ok_or_else(|| PgError::new("42704", format!("type \"{s}\" does not exist")))?,
        ),
        _ => None,
    };
    if let Some(oid) = named {
        return Ok(oid.to_be_bytes().to_vec());
    }
    let v = crate::types::parse_text(s, ty).map_err(|e| e.to_pg())?;
    let mut out = Vec::new();
    crate::wire::encode_binary(&v, ty, &mut out).map_err(|e| e.to_pg())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `regproc` or `regtype` result's text is a name; its binary form is the OID it names.
    #[test]
    fn reg_names_convert_to_their_oids() {
        let oid = |ty: PgType, s: &str| {
            text_to_binary(ty.oid(), s.as_bytes())
                .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        };
        assert_eq!(oid(PgType::Regproc, "array_in").ok(), Some(750));
        assert_eq!(oid(PgType::Regproc, "\"array_in\"").ok(), Some(750));
        assert_eq!(oid(PgType::Regproc, "-").ok(), Some(0));
        assert_eq!(oid(PgType::Regproc, "12345").ok(), Some(12345));
        assert_eq!(oid(PgType::Regtype, "integer").ok(), Some(23));
        assert_eq!(oid(PgType::Regtype, "character varying").ok(), Some(1043));
        assert_eq!(oid(PgType::Regtype, "\"text\"[]").ok(), Some(1009));
        assert_eq!(oid(PgType::Regtype, "cid").ok(), Some(29));
        assert_eq!(oid(PgType::Regtype, "record[]").ok(), Some(2287));
        assert_eq!(oid(PgType::Regtype, "-").ok(), Some(0));
        assert!(oid(PgType::Regproc, "no_such_function").is_err());
        assert!(binary_result_supported(PgType::Regproc.oid()));
        assert!(binary_result_supported(PgType::Regtype.oid()));
        assert!(!binary_result_supported(PgType::Regclass.oid()));
        assert!(!binary_result_supported(PgType::Regnamespace.oid()));
    }

    #[test]
    fn text_results_convert_to_the_binary_send_format() {
        use crate::types::{format_text, PgType, Value};
        let cases: Vec<(Value, PgType)> = vec![
            (Value::Bool(true), PgType::Bool),
            (Value::Int(-7), PgType::Int2),
            (Value::Int(70_000), PgType::Int4),
            (Value::Int(i64::MIN), PgType::Int8),
            (Value::Float(0.1), PgType::Float8),
            (Value::Float(-2.5), PgType::Float4),
            (Value::Text("it's ✓".into()), PgType::Varchar),
            (Value::Bytes(vec![0, 1, 255]), PgType::Bytea),
            (Value::Uuid([7; 16]), PgType::Uuid),
            (Value::Numeric("-12.3400".into()), PgType::Numeric),
            (Value::Timestamp(815_000_000_123_456), PgType::Timestamptz),
            (Value::Date(9_000), PgType::Date),
        ];
        for (v, ty) in cases {
            let text = format_text(&v, ty).expect("text form");
            let bin = text_to_binary(ty.oid(), text.as_bytes()).expect("binary");
            let back = crate::wire::decode_binary(&bin, ty).expect("decodes");
            assert_eq!(format_text(&back, ty), Some(text.clone()), "{ty:?} {text}");
        }
        assert_eq!(
            text_to_binary(999_999, b"x").map_err(|e| e.code),
            Err("0A000".to_string())
        );
        // void (pg_advisory_lock, pg_sleep) is sent as no bytes, as `void_send` does.
        assert!(binary_result_supported(PgType::Void.oid()));
        assert_eq!(text_to_binary(PgType::Void.oid(), b""), Ok(Vec::new()));
    }

    #[test]
    fn placeholders_outside_quotes_and_comments_only() {
        let sql = "SELECT $1, '$2', \"$3\", E'\\'$4', $$ $5 $$, $t$ $6 $t$ -- $7\n /* $8 /* $9 */ */ , a$10, $2";
        let got: Vec<usize> = placeholders(sql).iter().map(|p| p.2).collect();
        assert_eq!(got, vec![1, 2]);
        assert_eq!(count(sql).expect("count"), 2);
    }

    #[test]
    fn substitution_quotes_and_types() {
        let s = substitute(
            "SELECT * FROM t WHERE a = $1 AND b = $2 AND c IS $3",
            &[20, 0],
            &[Some("42".into()), Some("it's".into()), None],
        )
        .expect("ok");
        assert_eq!(
            s,
            "SELECT * FROM t WHERE a = CAST('42' AS int8) AND b = 'it''s' AND c IS NULL"
        );
        assert_eq!(
            substitute("SELECT $2", &[], &[Some("x".into())])
                .expect_err("missing")
                .code,
            "42P02"
        );
        assert_eq!(
            for_describe("SELECT $1, $2", &[23]),
            "SELECT CAST(NULL AS int4), $2"
        );
    }

    /// Positions in the described text map back to the client's: before, between and after
    /// stand-ins, inside one (its `$n`), with characters of several bytes before.
    #[test]
    fn describe_positions_point_into_the_clients_text() {
        let sql = "SELECT 'é', $1 + nope, $2 FROM t";
        let described = for_describe(sql, &[23]);
        assert_eq!(
            described,
            "SELECT 'é', CAST(NULL AS int4) + nope, $2 FROM t"
        );
        let at = |needle: &str, text: &str| {
            u32::try_from(text[..text.find(needle).expect("needle")].chars().count() + 1)
                .expect("small")
        };
        for needle in ["SELECT", "'é'", "nope", "$2", "FROM t"] {
            assert_eq!(
                describe_position(sql, &[23], at(needle, &described)),
                Some(at(needle, sql)),
                "{needle}"
            );
        }
        assert_eq!(
            describe_position(sql, &[23], at("NULL", &described)),
            Some(at("$1", sql))
        );
        // Untyped parameters stay `$n`: the texts are the same.
        assert_eq!(describe_position(sql, &[], 17), Some(17));
        assert_eq!(describe_position(sql, &[23], 0), None);
    }

    /// Found by the pg_message fuzz target: `$0` underflowed the parameter index.
    #[test]
    fn parameter_zero_is_an_error_not_a_panic() {
        let sql = "SELECT snapshot_id FROM ducklake_snapshot WHERE snapshot.id = $0";
        assert_eq!(count(sql).expect_err("$0").code, "42P02");
        assert_eq!(for_describe(sql, &[20]), sql.replace("$0", "NULL"));
        assert_eq!(
            substitute(sql, &[], &[Some("1".into())])
                .expect_err("$0")
                .code,
            "42P02"
        );
    }

    #[test]
    fn binary_values_decode() {
        assert_eq!(decode_binary(20, &42i64.to_be_bytes()).expect("i8"), "42");
        assert_eq!(decode_binary(23, &(-7i32).to_be_bytes()).expect("i4"), "-7");
        assert_eq!(decode_binary(16, &[1]).expect("bool"), "true");
        assert_eq!(decode_binary(17, &[0xde, 0xad]).expect("bytea"), "\\xdead");
        // Too few bytes: the message ran out (PostgreSQL's pq_getmsgint); too many: left over.
        assert_eq!(decode_binary(20, &[1, 2]).expect_err("short").code, "08P01");
        assert_eq!(decode_binary(23, &[0; 5]).expect_err("long").code, "22P03");
        assert_eq!(decode_binary(16, &[2]).expect("bool"), "true");
        // Types through PostgreSQL's receive format: interval, date, numeric.
        let mut interval = 3_000_000i64.to_be_bytes().to_vec();
        interval.extend(2i32.to_be_bytes());
        interval.extend(1i32.to_be_bytes());
        assert_eq!(
            decode_binary(1186, &interval).expect("interval"),
            "1 mon 2 days 00:00:03"
        );
        assert_eq!(
            decode_binary(1082, &1i32.to_be_bytes()).expect("date"),
            "2000-01-02"
        );
        let mut numeric = Vec::new();
        crate::wire::numeric_to_binary("-12.50", &mut numeric);
        assert_eq!(decode_binary(1700, &numeric).expect("numeric"), "-12.50");
        assert_eq!(
            decode_binary(1082, &[0; 3]).expect_err("short date").code,
            "22P03"
        );
        // Arrays as array_recv reads them, shown as their text form.
        let mut text_array = Vec::new();
        for v in [1i32, 1, 25, 2, 1, 3] {
            text_array.extend_from_slice(&v.to_be_bytes());
        }
        text_array.extend_from_slice(b"a,b");
        text_array.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(
            decode_binary(1009, &text_array).expect("text[]"),
            "{\"a,b\",NULL}"
        );
        // An array of another element type: 42804; malformed: 22P03.
        assert_eq!(
            decode_binary(1007, &text_array).expect_err("int4[]").code,
            "42804"
        );
        assert_eq!(
            decode_binary(1009, &text_array[..20])
                .expect_err("cut")
                .code,
            "22P03"
        );
    }
}
