//! Order-preserving ("memcomparable") key encoding.
//!
//! Layout of a versioned key: `tag (1) | table id (4, BE) | key fields | !commit_seq (8, BE)`.
//! Fields are self-delimiting, so the *logical key* (everything before the version) of one row
//! never prefixes another's. The version is stored inverted so that, within one logical key,
//! the newest version sorts first: a reader at commit point `c` takes the first version `<= c`.
//! See docs/key-encoding.md.

use crate::error::DecodeError;
use crate::types::{numeric_canonical, Interval, PgType, Value};

/// Keys of the host itself (writer epoch). The core never writes them.
pub const TAG_HOST: u8 = 0x00;
/// Unversioned system counters, rewritten by every commit that changes them.
pub const TAG_META: u8 = 0x01;
/// Versioned schema (namespace) definitions, keyed by name.
pub const TAG_SCHEMA: u8 = 0x02;
/// Versioned table definitions, keyed by table id.
pub const TAG_TABLE_DEF: u8 = 0x03;
/// Versioned rows, keyed by table id and primary key (or row id).
pub const TAG_ROW: u8 = 0x10;
/// Secondary index entries: `table id (u32 BE) ‖ index number (u8) ‖ index fields ‖ row key
/// fields`, versioned like rows, the value a copy of the row.
pub const TAG_INDEX: u8 = 0x11;

pub const VERSION_LEN: usize = 8;

/// Appends the inverted commit sequence that makes newer versions sort first.
pub fn push_version(out: &mut Vec<u8>, seq: u64) {
    out.extend_from_slice(&(u64::MAX - seq).to_be_bytes());
}

/// Splits a versioned key into its logical part and commit sequence.
pub fn split_version(raw: &[u8]) -> Result<(&[u8], u64), DecodeError> {
    if raw.len() < 1 + VERSION_LEN {
        return Err(DecodeError::Key {
            message: format!("versioned key too short ({} bytes)", raw.len()),
        });
    }
    let (logical, ver) = raw.split_at(raw.len() - VERSION_LEN);
    let mut b = [0u8; 8];
    b.copy_from_slice(ver);
    Ok((logical, u64::MAX - u64::from_be_bytes(b)))
}

pub fn meta_key(name: &str) -> Vec<u8> {
    let mut k = vec![TAG_META];
    k.extend_from_slice(name.as_bytes());
    k
}

/// Prefix of every row of one table.
pub fn table_prefix(table_id: u32) -> Vec<u8> {
    let mut k = Vec::with_capacity(5);
    k.push(TAG_ROW);
    k.extend_from_slice(&table_id.to_be_bytes());
    k
}

/// Prefix of every entry of one index of a table.
pub fn index_prefix(table_id: u32, index_no: u8) -> Vec<u8> {
    let mut k = Vec::with_capacity(6);
    k.push(TAG_INDEX);
    k.extend_from_slice(&table_id.to_be_bytes());
    k.push(index_no);
    k
}

/// The logical key of a row's entry in an index: the index prefix, the indexed values, then the
/// row's own key fields (so entries of equal values stay distinct and ordered by row key).
pub fn index_logical_key(
    table_id: u32,
    index_no: u8,
    fields: &[(&Value, PgType)],
    row_key: &[u8],
) -> Vec<u8> {
    let mut k = index_prefix(table_id, index_no);
    for (v, ty) in fields {
        encode_field(&mut k, v, *ty);
    }
    k.extend_from_slice(row_key.get(5..).unwrap_or_default());
    k
}

pub fn table_def_key(table_id: u32) -> Vec<u8> {
    let mut k = vec![TAG_TABLE_DEF];
    k.extend_from_slice(&table_id.to_be_bytes());
    k
}

pub fn schema_key(name: &str) -> Vec<u8> {
    let mut k = vec![TAG_SCHEMA];
    encode_bytes(&mut k, name.as_bytes());
    k
}

/// The exclusive end of the range of all keys starting with `prefix`.
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return end;
        }
    }
    vec![0xFF; prefix.len() + 1]
}

const NULL_MARK: u8 = 0x00;
const VALUE_MARK: u8 = 0x01;

fn encode_bytes(out: &mut Vec<u8>, b: &[u8]) {
    escape_bytes(out, b);
    out.extend_from_slice(&[0x00, 0x01]);
}

/// A NUL becomes 00 FF, so that the terminator 00 01 ends the field.
fn escape_bytes(out: &mut Vec<u8>, b: &[u8]) {
    for &x in b {
        if x == 0 {
            out.extend_from_slice(&[0x00, 0xFF]);
        } else {
            out.push(x);
        }
    }
}

/// [`encode_field`] of the text that is `parts` joined, without joining them.
pub fn encode_text_parts(out: &mut Vec<u8>, parts: &[&str]) {
    out.push(VALUE_MARK);
    for part in parts {
        escape_bytes(out, part.as_bytes());
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

fn encode_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(&((v as u64) ^ (1 << 63)).to_be_bytes());
}

fn encode_f64(out: &mut Vec<u8>, v: f64) {
    // Canonical NaN sorts above +Infinity, as PostgreSQL orders floats; -0 equals 0.
    let v = if v == 0.0 { 0.0 } else { v };
    let bits = if v.is_nan() { u64::MAX } else { v.to_bits() };
    let enc = if v.is_nan() {
        bits
    } else if bits >> 63 == 0 {
        bits ^ (1 << 63)
    } else {
        !bits
    };
    out.extend_from_slice(&enc.to_be_bytes());
}

/// Numerics: class byte (neg < zero < pos < NaN), then for non-zero values a decimal exponent and
/// the significant digits, complemented for negatives, then the display scale (which does not
/// affect order between unequal values).
fn encode_numeric(out: &mut Vec<u8>, s: &str) {
    match s {
        "NaN" => return out.push(4),
        // The class of their sign and the largest exponent, no digits: beyond every number.
        "Infinity" => {
            out.push(3);
            out.extend_from_slice(&[0xFF; 4]);
            return;
        }
        "-Infinity" => {
            out.push(1);
            out.extend_from_slice(&[0; 4]);
            return;
        }
        _ => {}
    }
    let neg = s.starts_with('-');
    let body = s.trim_start_matches('-');
    let (ip, fp) = body.split_once('.').unwrap_or((body, ""));
    let scale = fp.len() as u16;
    let all: String = format!("{ip}{fp}");
    let lead = all.len() - all.trim_start_matches('0').len();
    let sig = all.trim_start_matches('0').trim_end_matches('0');
    if sig.is_empty() {
        out.push(2);
        out.extend_from_slice(&scale.to_be_bytes());
        return;
    }
    // value = 0.sig * 10^exp
    let exp = ip.len() as i32 - lead as i32;
    let mut body_bytes: Vec<u8> = Vec::with_capacity(sig.len() + 5);
    body_bytes.extend_from_slice(&((exp as u32) ^ (1 << 31)).to_be_bytes());
    body_bytes.extend(sig.bytes().map(|d| d - b'0' + 1));
    body_bytes.push(0);
    if neg {
        out.push(1);
        out.extend(body_bytes.iter().map(|b| !b));
    } else {
        out.push(3);
        out.extend_from_slice(&body_bytes);
    }
    out.extend_from_slice(&scale.to_be_bytes());
}

/// Appends one field. Order of the encodings equals PostgreSQL's order of the values, with NULL
/// first (keys never hold NULL for primary keys; the mark keeps the format total).
pub fn encode_field(out: &mut Vec<u8>, v: &Value, ty: PgType) {
    if v.is_null() {
        out.push(NULL_MARK);
        return;
    }
    out.push(VALUE_MARK);
    match v {
        Value::Null => {}
        Value::Bool(b) => out.push(u8::from(*b)),
        Value::Int(i) => encode_i64(out, *i),
        Value::Float(f) => encode_f64(out, *f),
        Value::Numeric(s) => encode_numeric(out, s),
        Value::Text(s) => encode_bytes(out, s.as_bytes()),
        Value::Bytes(b) => encode_bytes(out, b),
        Value::Uuid(u) => out.extend_from_slice(u),
        Value::Timestamp(t) | Value::Time(t) => encode_i64(out, *t),
        Value::Date(d) => encode_i64(out, *d as i64),
        Value::Interval(iv) => {
            let span = iv.span();
            out.extend_from_slice(&((span as u128) ^ (1 << 127)).to_be_bytes());
            encode_i64(out, iv.months as i64);
            encode_i64(out, iv.days as i64);
        }
        Value::Tid(b, o) => {
            out.extend_from_slice(&b.to_be_bytes());
            out.extend_from_slice(&o.to_be_bytes());
        }
        Value::Array(items) => {
            let elem = ty.element().unwrap_or(PgType::Text);
            for it in items.iter() {
                out.push(0x02);
                encode_field(out, it, elem);
            }
            out.push(0x01);
        }
    }
}

struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.buf.len() < n {
            return Err(DecodeError::Key {
                message: "key field truncated".into(),
            });
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Ok(a)
    }
    fn byte(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(b))
    }
    fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok((self.u64()? ^ (1 << 63)) as i64)
    }
    fn bytes(&mut self) -> Result<Vec<u8>, DecodeError> {
        let mut out = Vec::new();
        loop {
            let b = self.byte()?;
            if b != 0 {
                out.push(b);
                continue;
            }
            match self.byte()? {
                0xFF => out.push(0),
                0x01 => return Ok(out),
                other => {
                    return Err(DecodeError::Key {
                        message: format!("bad escape byte {other:#x}"),
                    })
                }
            }
        }
    }
}

fn decode_numeric(r: &mut Reader<'_>) -> Result<String, DecodeError> {
    let class = r.byte()?;
    let bad = || DecodeError::Key {
        message: "bad numeric key".into(),
    };
    let (neg, exp, digits) = match class {
        4 => return Ok("NaN".into()),
        2 => (false, 0, String::new()),
        1 | 3 => {
            let neg = class == 1;
            let fix = |b: u8| if neg { !b } else { b };
            let mut e = [0u8; 4];
            for x in e.iter_mut() {
                *x = fix(r.byte()?);
            }
            let exp = (u32::from_be_bytes(e) ^ (1 << 31)) as i32;
            if exp == i32::MAX {
                return Ok(if neg { "-Infinity" } else { "Infinity" }.into());
            }
            let mut digits = String::new();
            loop {
                let d = fix(r.byte()?);
                if d == 0 {
                    break;
                }
                if !(1..=10).contains(&d) {
                    return Err(bad());
                }
                digits.push((b'0' + d - 1) as char);
            }
            // The encoder writes significant digits only; anything else is not a key it made
            // (and would decode to a value whose own key differs).
            if digits.is_empty() || digits.starts_with('0') || digits.ends_with('0') {
                return Err(bad());
            }
            (neg, exp, digits)
        }
        _ => return Err(bad()),
    };
    let mut sb = [0u8; 2];
    sb.copy_from_slice(r.take(2)?);
    let scale = u16::from_be_bytes(sb) as i64;
    if digits.is_empty() {
        return Ok(if scale > 0 {
            format!("0.{}", "0".repeat(scale as usize))
        } else {
            "0".into()
        });
    }
    // digits * 10^(exp - len)
    let shift = exp as i64 - digits.len() as i64;
    let text = format!("{}{}e{}", if neg { "-" } else { "" }, digits, shift);
    let canon = numeric_canonical(&text).ok_or_else(bad)?;
    Ok(crate::types::numeric_round(&canon, scale as usize))
}

/// Decodes one field written by [`encode_field`].
fn decode_field_inner(r: &mut Reader<'_>, ty: PgType) -> Result<Value, DecodeError> {
    match r.byte()? {
        NULL_MARK => return Ok(Value::Null),
        VALUE_MARK => {}
        other => {
            return Err(DecodeError::Key {
                message: format!("bad field mark {other:#x}"),
            })
        }
    }
    Ok(match ty {
        PgType::Record(_) => {
            return Err(DecodeError::Key {
                message: "a record is never stored".into(),
            })
        }
        PgType::Bool => Value::Bool(r.byte()? != 0),
        PgType::Int2
        | PgType::Int4
        | PgType::Int8
        | PgType::Oid
        | PgType::Regclass
        | PgType::Regtype
        | PgType::Regnamespace
        | PgType::Regproc
        | PgType::Xid => Value::Int(r.i64()?),
        PgType::Float4 | PgType::Float8 => {
            let enc = r.u64()?;
            let bits = if enc == u64::MAX {
                f64::NAN.to_bits()
            } else if enc >> 63 == 1 {
                enc ^ (1 << 63)
            } else {
                !enc
            };
            Value::Float(f64::from_bits(bits))
        }
        PgType::Numeric => Value::Numeric(decode_numeric(r)?),
        PgType::Bytea | PgType::Inet => Value::Bytes(r.bytes()?),
        PgType::Text
        | PgType::Varchar
        | PgType::Bpchar
        | PgType::Name
        | PgType::Char
        | PgType::Json
        | PgType::Unknown
        | PgType::Void => {
            Value::text(String::from_utf8(r.bytes()?).map_err(|_| DecodeError::Key {
                message: "text key is not UTF-8".into(),
            })?)
        }
        PgType::Uuid => {
            let mut u = [0u8; 16];
            u.copy_from_slice(r.take(16)?);
            Value::Uuid(u)
        }
        PgType::Timestamp | PgType::Timestamptz => Value::Timestamp(r.i64()?),
        PgType::Time => Value::Time(r.i64()?),
        PgType::Date => Value::Date(r.i64()? as i32),
        PgType::Interval => {
            r.take(16)?;
            let months = r.i64()? as i32;
            let days = r.i64()? as i32;
            // micros = span - (months*30 + days) days; recompute from the stored span
            Value::Interval(Interval {
                months,
                days,
                micros: 0,
            })
        }
        PgType::Tid => {
            let b = r.take(4)?;
            let o = r.take(2)?;
            Value::Tid(
                u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                u16::from_be_bytes([o[0], o[1]]),
            )
        }
        crate::types::array_types!() => {
            let elem = ty.element().unwrap_or(PgType::Text);
            let mut items = Vec::new();
            loop {
                match r.byte()? {
                    0x01 => break,
                    0x02 => items.push(decode_field_inner(r, elem)?),
                    _ => {
                        return Err(DecodeError::Key {
                            message: "bad array key".into(),
                        })
                    }
                }
            }
            Value::Array(items.into())
        }
    })
}

/// Decodes the fields of a logical key (after tag and table id) given their types.
pub fn decode_fields(mut buf: &[u8], types: &[PgType]) -> Result<Vec<Value>, DecodeError> {
    let mut out = Vec::with_capacity(types.len());
    for ty in types {
        let mut r = Reader { buf };
        let mut v = decode_field_inner(&mut r, *ty)?;
        if let (Value::Interval(iv), PgType::Interval) = (&mut v, ty) {
            // The span was skipped above; recover micros from it.
            let start = buf.len() - r.buf.len();
            let field = &buf[..start];
            let mut span = [0u8; 16];
            span.copy_from_slice(&field[1..17]);
            let span = (u128::from_be_bytes(span) ^ (1 << 127)) as i128;
            // A span no interval encodes (only in a damaged key) is an error, not an overflow.
            iv.micros = span
                .checked_sub((iv.months as i128 * 30 + iv.days as i128) * 86_400_000_000)
                .and_then(|m| i64::try_from(m).ok())
                .ok_or_else(|| DecodeError::Key {
                    message: "interval key out of range".into(),
                })?;
        }
        out.push(v);
        buf = r.buf;
    }
    if !buf.is_empty() {
        return Err(DecodeError::Key {
            message: format!("{} trailing bytes after key fields", buf.len()),
        });
    }
    Ok(out)
}

/// Encodes the logical key of a row: `TAG_ROW | table id | fields`.
pub fn row_logical_key(table_id: u32, fields: &[(&Value, PgType)]) -> Vec<u8> {
    let mut k = table_prefix(table_id);
    for (v, ty) in fields {
        encode_field(&mut k, v, *ty);
    }
    k
}

/// The logical key of a row of a table without primary key: its row id.
pub fn rowid_logical_key(table_id: u32, row_id: u64) -> Vec<u8> {
    let mut k = table_prefix(table_id);
    encode_field(&mut k, &Value::Int(row_id as i64), PgType::Int8);
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::compare;
    use proptest::prelude::*;
    use std::cmp::Ordering;

    fn key_of(v: &Value, ty: PgType) -> Vec<u8> {
        let mut k = Vec::new();
        encode_field(&mut k, v, ty);
        k
    }

    fn arb_value(ty: PgType) -> BoxedStrategy<Value> {
        match ty {
            PgType::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
            PgType::Int8 => any::<i64>().prop_map(Value::Int).boxed(),
            PgType::Int4 => any::<i32>().prop_map(|v| Value::Int(v as i64)).boxed(),
            PgType::Float8 => prop_oneof![
                any::<f64>().prop_map(Value::Float),
                Just(Value::Float(f64::NAN)),
                Just(Value::Float(f64::INFINITY)),
                Just(Value::Float(f64::NEG_INFINITY)),
            ]
            .boxed(),
            PgType::Numeric => prop_oneof![
                8 => (any::<bool>(), "[0-9]{1,25}", "[0-9]{0,12}").prop_map(|(neg, i, f)| {
                    let text = if f.is_empty() {
                        format!("{}{i}", if neg { "-" } else { "" })
                    } else {
                        format!("{}{i}.{f}", if neg { "-" } else { "" })
                    };
                    Value::Numeric(numeric_canonical(&text).unwrap_or_else(|| "0".into()))
                }),
                1 => prop_oneof![Just("NaN"), Just("Infinity"), Just("-Infinity")]
                    .prop_map(|s| Value::Numeric(s.into())),
            ]
            .boxed(),
            PgType::Text => ".{0,20}".prop_map(Value::text).boxed(),
            PgType::Bytea => proptest::collection::vec(any::<u8>(), 0..20)
                .prop_map(Value::Bytes)
                .boxed(),
            PgType::Uuid => any::<[u8; 16]>().prop_map(Value::Uuid).boxed(),
            PgType::Timestamptz => any::<i64>().prop_map(Value::Timestamp).boxed(),
            PgType::Date => any::<i32>().prop_map(Value::Date).boxed(),
            PgType::Time => (0i64..86_400_000_000).prop_map(Value::Time).boxed(),
            PgType::Interval => (
                -1000i32..1000,
                -1000i32..1000,
                -1_000_000_000_000i64..1_000_000_000_000,
            )
                .prop_map(|(months, days, micros)| {
                    Value::Interval(Interval {
                        months,
                        days,
                        micros,
                    })
                })
                .boxed(),
            PgType::Tid => (any::<u32>(), any::<u16>())
                .prop_map(|(b, o)| Value::Tid(b, o))
                .boxed(),
            _ => any::<i64>().prop_map(Value::Int).boxed(),
        }
    }

    const TYPES: [PgType; 12] = [
        PgType::Bool,
        PgType::Int8,
        PgType::Int4,
        PgType::Float8,
        PgType::Numeric,
        PgType::Text,
        PgType::Bytea,
        PgType::Uuid,
        PgType::Timestamptz,
        PgType::Date,
        PgType::Time,
        PgType::Tid,
    ];

    fn same_value(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Float(x), Value::Float(y)) => (x.is_nan() && y.is_nan()) || x == y,
            _ => a == b,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn key_order_is_value_order((ty, a, b) in (0usize..TYPES.len()).prop_flat_map(|i| {
            let ty = TYPES[i];
            (Just(ty), arb_value(ty), arb_value(ty))
        })) {
            let ka = key_of(&a, ty);
            let kb = key_of(&b, ty);
            let vo = compare(&a, &b);
            if vo != Ordering::Equal {
                prop_assert_eq!(vo, ka.cmp(&kb), "{:?} vs {:?}", a, b);
            }
            let back = decode_fields(&ka, &[ty]).expect("decode");
            prop_assert!(same_value(&back[0], &a), "{:?} -> {:?}", a, back[0]);
        }

        #[test]
        fn interval_round_trip_and_order(a in arb_value(PgType::Interval), b in arb_value(PgType::Interval)) {
            let ka = key_of(&a, PgType::Interval);
            let kb = key_of(&b, PgType::Interval);
            if compare(&a, &b) != Ordering::Equal {
                prop_assert_eq!(compare(&a, &b), ka.cmp(&kb));
            }
            prop_assert_eq!(decode_fields(&ka, &[PgType::Interval]).expect("decode")[0].clone(), a);
        }

        #[test]
        fn text_parts_encode_as_their_joined_text(a in "(\\PC|\u{0})*", b in "(\\PC|\u{0})*") {
            let mut parts = Vec::new();
            encode_text_parts(&mut parts, &[&a, &b]);
            let mut joined = Vec::new();
            encode_field(&mut joined, &Value::text(format!("{a}{b}")), PgType::Text);
            prop_assert_eq!(parts, joined);
        }

        #[test]
        fn composite_keys_are_prefix_free(a in ".{0,8}", b in ".{0,8}", x in any::<i64>(), y in any::<i64>()) {
            let ka = row_logical_key(7, &[(&Value::text(a.clone()), PgType::Text), (&Value::Int(x), PgType::Int8)]);
            let kb = row_logical_key(7, &[(&Value::text(b.clone()), PgType::Text), (&Value::Int(y), PgType::Int8)]);
            let expect = a.as_bytes().cmp(b.as_bytes()).then(x.cmp(&y));
            prop_assert_eq!(ka.cmp(&kb), expect);
        }

        #[test]
        fn newer_versions_sort_first(seq_a in any::<u64>(), seq_b in any::<u64>()) {
            let base = rowid_logical_key(1, 42);
            let mut ka = base.clone();
            push_version(&mut ka, seq_a);
            let mut kb = base.clone();
            push_version(&mut kb, seq_b);
            prop_assert_eq!(ka.cmp(&kb), seq_b.cmp(&seq_a));
            prop_assert_eq!(split_version(&ka).expect("split"), (&base[..], seq_a));
        }

        #[test]
        fn garbage_keys_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..40), ty_idx in 0usize..TYPES.len()) {
            let _ = decode_fields(&bytes, &[TYPES[ty_idx], PgType::Text]);
            let _ = split_version(&bytes);
        }
    }

    #[test]
    fn prefix_end_covers_prefix() {
        assert_eq!(prefix_end(&[1, 2, 3]), vec![1, 2, 4]);
        assert_eq!(prefix_end(&[1, 0xFF]), vec![2]);
    }
}
