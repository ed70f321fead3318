//! PostgreSQL binary value formats and the COPY stream formats (binary and text), both ways.

use crate::error::SqlError;
use crate::types::{numeric_canonical, Interval, PgType, Value};

pub const COPY_SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

fn bad(msg: impl Into<String>) -> SqlError {
    SqlError::BadCopyFormat {
        message: msg.into(),
        hint: None,
    }
}

/// Encodes numeric text in PostgreSQL's binary numeric format.
pub fn numeric_to_binary(s: &str, out: &mut Vec<u8>) {
    // No digits; the sign word tells NaN and the infinities (NUMERIC_NAN / PINF / NINF).
    let special = match s {
        "NaN" => Some(0xC0),
        "Infinity" => Some(0xD0),
        "-Infinity" => Some(0xF0),
        _ => None,
    };
    if let Some(sign) = special {
        out.extend_from_slice(&[0, 0, 0, 0, sign, 0, 0, 0]);
        return;
    }
    let neg = s.starts_with('-');
    let body = s.trim_start_matches('-');
    let (ip, fp) = body.split_once('.').unwrap_or((body, ""));
    let dscale = fp.len() as i16;
    // Pad the integer part on the left and the fraction on the right to groups of 4.
    let ip = ip.trim_start_matches('0');
    let ipad = (4 - ip.len() % 4) % 4;
    let int_digits = format!("{}{}", "0".repeat(ipad), ip);
    let fpad = (4 - fp.len() % 4) % 4;
    let frac_digits = format!("{}{}", fp, "0".repeat(fpad));
    let mut groups: Vec<i16> = Vec::new();
    for c in int_digits
        .as_bytes()
        .chunks(4)
        .chain(frac_digits.as_bytes().chunks(4))
    {
        let g = c.iter().fold(0i16, |a, d| a * 10 + (d - b'0') as i16);
        groups.push(g);
    }
    let int_groups = int_digits.len() / 4;
    let mut weight = int_groups as i16 - 1;
    // Strip leading zero groups (adjusting weight) and trailing zero groups.
    let mut start = 0;
    while start < groups.len() && groups[start] == 0 {
        start += 1;
        weight -= 1;
    }
    let mut end = groups.len();
    while end > start && groups[end - 1] == 0 {
        end -= 1;
    }
    let digits = &groups[start..end];
    if digits.is_empty() {
        weight = 0;
    }
    out.extend_from_slice(&(digits.len() as i16).to_be_bytes());
    out.extend_from_slice(&weight.to_be_bytes());
    out.extend_from_slice(
        &(if neg && !digits.is_empty() {
            0x4000u16
        } else {
            0
        })
        .to_be_bytes(),
    );
    out.extend_from_slice(&dscale.to_be_bytes());
    for d in digits {
        out.extend_from_slice(&d.to_be_bytes());
    }
}

pub fn numeric_from_binary(b: &[u8]) -> Result<String, SqlError> {
    if b.len() < 8 {
        return Err(bad("numeric value too short"));
    }
    let rd = |i: usize| i16::from_be_bytes([b[i], b[i + 1]]);
    let ndigits =
        usize::try_from(rd(0)).map_err(|_| bad("invalid length in external \"numeric\" value"))?;
    let weight = rd(2) as i32;
    let sign = u16::from_be_bytes([b[4], b[5]]);
    let dscale = rd(6).max(0) as usize;
    match sign {
        0xC000 => return Ok("NaN".into()),
        0xD000 => return Ok("Infinity".into()),
        0xF000 => return Ok("-Infinity".into()),
        _ => {}
    }
    if b.len() < 8 + 2 * ndigits {
        return Err(bad("numeric digits truncated"));
    }
    let mut text = String::new();
    for i in 0..ndigits {
        text.push_str(&format!("{:04}", rd(8 + 2 * i)));
    }
    // value = 0.<text> * 10000^(weight+1)
    let exp = (weight + 1) * 4 - text.len() as i32;
    let lit = format!(
        "{}{}e{}",
        if sign == 0x4000 { "-" } else { "" },
        if text.is_empty() { "0" } else { &text },
        exp
    );
    let canon = numeric_canonical(&lit).ok_or_else(|| bad("bad numeric"))?;
    Ok(crate::types::numeric_round(&canon, dscale))
}

/// PostgreSQL's binary send format of a value.
pub fn encode_binary(v: &Value, ty: PgType, out: &mut Vec<u8>) -> Result<(), SqlError> {
    match (v, ty) {
        (Value::Bool(b), _) => out.push(u8::from(*b)),
        (Value::Int(i), PgType::Int2) => out.extend_from_slice(&(*i as i16).to_be_bytes()),
        (Value::Int(i), PgType::Int4) => out.extend_from_slice(&(*i as i32).to_be_bytes()),
        (
            Value::Int(i),
            PgType::Oid
            | PgType::Regclass
            | PgType::Regtype
            | PgType::Regnamespace
            | PgType::Regproc
            | PgType::Xid,
        ) => out.extend_from_slice(&(*i as u32).to_be_bytes()),
        (Value::Int(i), _) => out.extend_from_slice(&i.to_be_bytes()),
        (Value::Float(f), PgType::Float4) => out.extend_from_slice(&(*f as f32).to_be_bytes()),
        (Value::Float(f), _) => out.extend_from_slice(&f.to_be_bytes()),
        (Value::Numeric(s), _) => numeric_to_binary(s, out),
        // `charsend`: always one byte, 0 for the empty "char".
        (Value::Text(s), PgType::Char) => out.push(s.as_bytes().first().copied().unwrap_or(0)),
        (Value::Text(s), _) => out.extend_from_slice(s.as_bytes()),
        (Value::Bytes(b), PgType::Inet) => crate::inet::to_binary(b, out),
        (Value::Bytes(b), _) => out.extend_from_slice(b),
        (Value::Uuid(u), _) => out.extend_from_slice(u),
        (Value::Timestamp(t), _) | (Value::Time(t), _) => out.extend_from_slice(&t.to_be_bytes()),
        (Value::Date(d), _) => out.extend_from_slice(&d.to_be_bytes()),
        (Value::Interval(iv), _) => {
            out.extend_from_slice(&iv.micros.to_be_bytes());
            out.extend_from_slice(&iv.days.to_be_bytes());
            out.extend_from_slice(&iv.months.to_be_bytes());
        }
        (Value::Tid(b, o), _) => {
            out.extend_from_slice(&b.to_be_bytes());
            out.extend_from_slice(&o.to_be_bytes());
        }
        // `record_send`: the field count, then each field's type, length (-1 for NULL) and
        // binary form.
        (Value::Array(fields), PgType::Record(types)) => {
            // A record whose fields are not known (two kinds met in a UNION) has no binary form.
            if fields.len() != types.len() {
                return Err(SqlError::feature("a record of unknown fields in binary"));
            }
            out.extend_from_slice(&(fields.len() as i32).to_be_bytes());
            for (v, (_, t)) in fields.iter().zip(types.iter()) {
                out.extend_from_slice(&t.oid().to_be_bytes());
                if v.is_null() {
                    out.extend_from_slice(&(-1i32).to_be_bytes());
                } else {
                    let mut b = Vec::new();
                    encode_binary(v, *t, &mut b)?;
                    out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    out.extend_from_slice(&b);
                }
            }
        }
        (Value::Array(items), _) => {
            let elem = ty.element().unwrap_or(PgType::Text);
            out.extend_from_slice(&1i32.to_be_bytes());
            out.extend_from_slice(&(i32::from(items.iter().any(Value::is_null))).to_be_bytes());
            out.extend_from_slice(&elem.oid().to_be_bytes());
            out.extend_from_slice(&(items.len() as i32).to_be_bytes());
            // The lower bound: an int2vector's subscripts start at 0 (`int2vectorsend`).
            let lower: i32 = if ty.is_vector() { 0 } else { 1 };
            out.extend_from_slice(&lower.to_be_bytes());
            for it in items.iter() {
                if it.is_null() {
                    out.extend_from_slice(&(-1i32).to_be_bytes());
                } else {
                    let mut b = Vec::new();
                    match it {
                        // Elements of a type without an array of its own, in a text[].
                        Value::Text(_) => encode_binary(it, elem, &mut b)?,
                        _ if elem.is_string() => b.extend_from_slice(
                            crate::types::format_text(it, elem)
                                .unwrap_or_default()
                                .as_bytes(),
                        ),
                        _ => encode_binary(it, elem, &mut b)?,
                    }
                    out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    out.extend_from_slice(&b);
                }
            }
        }
        (Value::Null, _) => return Err(SqlError::internal("NULL has no binary form")),
    }
    Ok(())
}

fn fixed<const N: usize>(b: &[u8], ty: PgType) -> Result<[u8; N], SqlError> {
    b.try_into().map_err(|_| {
        bad(format!(
            "incorrect binary data format for type {}",
            ty.typname()
        ))
    })
}

/// PostgreSQL's binary receive format of a value.
pub fn decode_binary(b: &[u8], ty: PgType) -> Result<Value, SqlError> {
    Ok(match ty {
        PgType::Record(_) => return Err(crate::types::anonymous_record_input()),
        PgType::Bool => Value::Bool(fixed::<1>(b, ty)?[0] != 0),
        PgType::Int2 => Value::Int(i16::from_be_bytes(fixed(b, ty)?) as i64),
        PgType::Int4 => Value::Int(i32::from_be_bytes(fixed(b, ty)?) as i64),
        PgType::Oid
        | PgType::Regclass
        | PgType::Regtype
        | PgType::Regnamespace
        | PgType::Regproc
        | PgType::Xid => Value::Int(u32::from_be_bytes(fixed(b, ty)?) as i64),
        PgType::Int8 => Value::Int(i64::from_be_bytes(fixed(b, ty)?)),
        PgType::Float4 => Value::Float(f32::from_be_bytes(fixed(b, ty)?) as f64),
        PgType::Float8 => Value::Float(f64::from_be_bytes(fixed(b, ty)?)),
        PgType::Numeric => Value::Numeric(numeric_from_binary(b)?),
        // `charrecv`: one byte, 0 for the empty "char".
        PgType::Char if b == [0] => Value::text(""),
        PgType::Text
        | PgType::Varchar
        | PgType::Bpchar
        | PgType::Name
        | PgType::Char
        | PgType::Unknown => {
            Value::text(
                String::from_utf8(b.to_vec()).map_err(|_| SqlError::InvalidText {
                    type_name: "text".into(),
                    input: "invalid UTF-8".into(),
                })?,
            )
        }
        PgType::Bytea => Value::Bytes(b.to_vec()),
        // json's binary form is its text.
        PgType::Json => {
            let s = String::from_utf8(b.to_vec()).map_err(|_| SqlError::InvalidText {
                type_name: "json".into(),
                input: "invalid UTF-8".into(),
            })?;
            crate::json::validate(&s)?;
            Value::text(s)
        }
        PgType::Inet => Value::Bytes(
            crate::inet::from_binary(b)
                .ok_or_else(|| bad("invalid length in external \"inet\" value".to_string()))?,
        ),
        PgType::Void => Value::text(""),
        PgType::Uuid => Value::Uuid(fixed(b, ty)?),
        PgType::Timestamp | PgType::Timestamptz => {
            Value::Timestamp(i64::from_be_bytes(fixed(b, ty)?))
        }
        PgType::Time => Value::Time(i64::from_be_bytes(fixed(b, ty)?)),
        PgType::Date => Value::Date(i32::from_be_bytes(fixed(b, ty)?)),
        PgType::Interval => {
            let a: [u8; 16] = fixed(b, ty)?;
            Value::Interval(Interval {
                micros: i64::from_be_bytes([a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]]),
                days: i32::from_be_bytes([a[8], a[9], a[10], a[11]]),
                months: i32::from_be_bytes([a[12], a[13], a[14], a[15]]),
            })
        }
        PgType::Tid => {
            let a: [u8; 6] = fixed(b, ty)?;
            Value::Tid(
                u32::from_be_bytes([a[0], a[1], a[2], a[3]]),
                u16::from_be_bytes([a[4], a[5]]),
            )
        }
        crate::types::array_types!() => array_from_binary(b, ty)?,
    })
}

/// PostgreSQL's `array_recv`: dimensions, a has-nulls flag, the element type, then each
/// element as a length (`-1` for NULL) and its own binary form. RockLake's arrays are
/// one-dimensional with subscripts from 1 (an `int2vector`'s from 0), so other shapes are
/// refused rather than changed.
fn array_from_binary(b: &[u8], ty: PgType) -> Result<Value, SqlError> {
    let elem = ty
        .element()
        .ok_or_else(|| SqlError::internal("array type without an element type"))?;
    let mut pos = 0usize;
    let take = |pos: &mut usize, n: usize| -> Result<&[u8], SqlError> {
        let v = b
            .get(*pos..pos.saturating_add(n))
            .ok_or_else(|| bad("insufficient data left in message"))?;
        *pos += n;
        Ok(v)
    };
    let int = |pos: &mut usize| -> Result<i32, SqlError> {
        let v = take(pos, 4)?;
        Ok(i32::from_be_bytes([v[0], v[1], v[2], v[3]]))
    };
    let ndim = int(&mut pos)?;
    let flags = int(&mut pos)?;
    let elem_oid = int(&mut pos)? as u32;
    if ndim < 0 {
        return Err(bad(format!("invalid number of dimensions: {ndim}")));
    }
    if flags != 0 && flags != 1 {
        return Err(bad("invalid array flags"));
    }
    if elem_oid != elem.oid() {
        let name = |oid: u32| {
            crate::types::type_by_oid(oid)
                .map_or_else(|| "???".to_string(), |t| t.sql_name().to_string())
        };
        return Err(SqlError::DatatypeMismatch {
            message: format!(
                "binary data has array element type {elem_oid} ({}) instead of expected {} ({})",
                name(elem_oid),
                elem.oid(),
                name(elem.oid())
            ),
            hint: None,
        });
    }
    if ndim > 1 {
        return Err(SqlError::feature("multidimensional arrays"));
    }
    let mut len = 0usize;
    if ndim == 1 {
        let n = int(&mut pos)?;
        let lower = int(&mut pos)?;
        let expected_lower = if ty.is_vector() { 0 } else { 1 };
        if n < 0 {
            return Err(bad("array size exceeds the maximum allowed"));
        }
        if n > 0 && lower != expected_lower {
            return Err(SqlError::feature(format!(
                "array subscripts starting at {lower} (RockLake's arrays start at {expected_lower})"
            )));
        }
        len = n as usize;
    }
    let mut items = Vec::with_capacity(len.min(b.len() / 4));
    for _ in 0..len {
        let n = int(&mut pos)?;
        if n == -1 {
            items.push(Value::Null);
            continue;
        }
        let n = usize::try_from(n).map_err(|_| bad("insufficient data left in message"))?;
        items.push(decode_binary(take(&mut pos, n)?, elem)?);
    }
    if pos != b.len() {
        return Err(bad("incorrect binary data format"));
    }
    Ok(Value::Array(items.into()))
}

/// One binary COPY tuple, appended to `out`.
pub fn copy_binary_row_into(
    values: &[Value],
    types: &[PgType],
    out: &mut Vec<u8>,
) -> Result<(), SqlError> {
    out.extend_from_slice(&(values.len() as i16).to_be_bytes());
    for (v, ty) in values.iter().zip(types) {
        binary_field_into(Some(v), *ty, out)?;
    }
    Ok(())
}

/// One field of a binary tuple: its length, then its bytes (`-1` alone for NULL; `None` is
/// NULL too).
fn binary_field_into(v: Option<&Value>, ty: PgType, out: &mut Vec<u8>) -> Result<(), SqlError> {
    match v {
        None | Some(Value::Null) => out.extend_from_slice(&(-1i32).to_be_bytes()),
        Some(v) => {
            let start = out.len();
            out.extend_from_slice(&[0, 0, 0, 0]);
            encode_binary(v, ty, out)?;
            let len = (out.len() - start - 4) as i32;
            out[start..start + 4].copy_from_slice(&len.to_be_bytes());
        }
    }
    Ok(())
}

/// One binary COPY tuple of the columns `cols` of `row` (`types[i]` is output column `i`'s).
pub fn copy_binary_fields_into(
    row: &[Value],
    cols: &[usize],
    types: &[PgType],
    out: &mut Vec<u8>,
) -> Result<(), SqlError> {
    out.extend_from_slice(&(cols.len() as i16).to_be_bytes());
    for (c, ty) in cols.iter().zip(types) {
        binary_field_into(row.get(*c), *ty, out)?;
    }
    Ok(())
}

pub fn copy_binary_header() -> Vec<u8> {
    let mut h = COPY_SIGNATURE.to_vec();
    h.extend_from_slice(&0i32.to_be_bytes());
    h.extend_from_slice(&0i32.to_be_bytes());
    h
}

pub fn copy_binary_trailer() -> Vec<u8> {
    (-1i16).to_be_bytes().to_vec()
}

/// Parses a complete binary COPY stream into rows of the given column types.
pub fn parse_copy_binary(data: &[u8], types: &[PgType]) -> Result<Vec<Vec<Value>>, SqlError> {
    if data.len() < 19 || &data[..11] != COPY_SIGNATURE {
        return Err(bad("COPY file signature not recognized"));
    }
    let ext_len = u32::from_be_bytes([data[15], data[16], data[17], data[18]]) as usize;
    let mut pos = 19usize
        .checked_add(ext_len)
        .ok_or_else(|| bad("bad header extension"))?;
    let mut rows = Vec::new();
    loop {
        if pos + 2 > data.len() {
            return Err(bad("unexpected EOF in COPY data"));
        }
        let n = i16::from_be_bytes([data[pos], data[pos + 1]]);
        pos += 2;
        if n == -1 {
            break;
        }
        if n as usize != types.len() {
            return Err(bad(format!(
                "row field count is {n}, expected {}",
                types.len()
            )));
        }
        let mut row = Vec::with_capacity(types.len());
        for ty in types {
            if pos + 4 > data.len() {
                return Err(bad("unexpected EOF in COPY data"));
            }
            let len = i32::from_be_bytes([data[pos], data[pos + 1], data[pos + 2], data[pos + 3]]);
            pos += 4;
            if len < 0 {
                row.push(Value::Null);
                continue;
            }
            let end = pos
                .checked_add(len as usize)
                .filter(|e| *e <= data.len())
                .ok_or_else(|| bad("unexpected EOF in COPY data"))?;
            row.push(decode_binary(&data[pos..end], *ty)?);
            pos = end;
        }
        rows.push(row);
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_binary_round_trip() {
        for s in [
            "0",
            "1.50",
            "-123456789.0001",
            "12345678901234567890.1234567890",
            "0.0001",
            "NaN",
            "Infinity",
            "-Infinity",
            "10000",
            "-0.5",
        ] {
            let mut b = Vec::new();
            numeric_to_binary(s, &mut b);
            assert_eq!(numeric_from_binary(&b).expect("decode"), s, "{s}");
        }
        // PostgreSQL's encoding of 1.50: ndigits 2, weight 0, sign 0, dscale 2, digits 1, 5000.
        let mut b = Vec::new();
        numeric_to_binary("1.50", &mut b);
        assert_eq!(b, vec![0, 2, 0, 0, 0, 0, 0, 2, 0, 1, 0x13, 0x88]);
    }

    fn array_bytes(
        ndim: i32,
        flags: i32,
        elem: u32,
        dims: &[(i32, i32)],
        items: &[Option<&[u8]>],
    ) -> Vec<u8> {
        let mut b = Vec::new();
        for v in [ndim, flags, elem as i32] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        for (n, lower) in dims {
            b.extend_from_slice(&n.to_be_bytes());
            b.extend_from_slice(&lower.to_be_bytes());
        }
        for it in items {
            match it {
                Some(x) => {
                    b.extend_from_slice(&(x.len() as i32).to_be_bytes());
                    b.extend_from_slice(x);
                }
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        b
    }

    #[test]
    fn binary_arrays_are_read_as_array_recv_reads_them() {
        let one = 1i32.to_be_bytes();
        let v = decode_binary(
            &array_bytes(1, 1, 23, &[(2, 1)], &[Some(&one), None]),
            PgType::Int4Array,
        )
        .expect("int4[]");
        assert_eq!(v, Value::Array(vec![Value::Int(1), Value::Null].into()));
        // Empty arrays: no dimensions, or one of length 0.
        for b in [
            array_bytes(0, 0, 25, &[], &[]),
            array_bytes(1, 0, 25, &[(0, 1)], &[]),
        ] {
            assert_eq!(
                decode_binary(&b, PgType::TextArray).expect("empty"),
                Value::Array(Vec::new().into())
            );
        }
        // An int2vector's subscripts start at 0.
        let two = 2i16.to_be_bytes();
        assert_eq!(
            decode_binary(
                &array_bytes(1, 0, 21, &[(1, 0)], &[Some(&two)]),
                PgType::Int2Vector
            )
            .expect("int2vector"),
            Value::Array(vec![Value::Int(2)].into())
        );
        let state = |b: &[u8], ty| decode_binary(b, ty).map(|_| ()).map_err(|e| e.sqlstate());
        // Another element type: 42804, as array_recv.
        assert_eq!(
            state(
                &array_bytes(1, 0, 25, &[(1, 1)], &[Some(b"x")]),
                PgType::Int4Array
            ),
            Err("42804")
        );
        // Shapes RockLake's arrays cannot hold are refused, not changed.
        assert_eq!(
            state(
                &array_bytes(2, 0, 23, &[(1, 1), (1, 1)], &[Some(&one)]),
                PgType::Int4Array
            ),
            Err("0A000")
        );
        assert_eq!(
            state(
                &array_bytes(1, 0, 23, &[(1, 0)], &[Some(&one)]),
                PgType::Int4Array
            ),
            Err("0A000")
        );
        // Malformed: bad flags, a negative dimension count, cut short, bytes left over, an
        // element of the wrong size.
        let malformed = [
            array_bytes(1, 2, 23, &[(1, 1)], &[Some(&one)]),
            array_bytes(-1, 0, 23, &[], &[]),
            array_bytes(1, 0, 23, &[(2, 1)], &[Some(&one)]),
            [array_bytes(1, 0, 23, &[(1, 1)], &[Some(&one)]), vec![0]].concat(),
            array_bytes(1, 0, 23, &[(1, 1)], &[Some(&[0, 1])]),
            array_bytes(1, 0, 23, &[(1, 1)], &[]),
            vec![0, 0],
        ];
        for b in malformed {
            assert!(state(&b, PgType::Int4Array).is_err(), "{b:?}");
        }
    }

    /// `record_send` and `record_out` of `_pg_expandarray`'s (x, n) rows; records are never
    /// read back (`record_in` refuses anonymous records, as PostgreSQL does).
    #[test]
    fn records_in_binary_and_text() {
        let ty = PgType::Text.expanded_array_fields();
        assert_eq!(ty, &[("x", PgType::Text), ("n", PgType::Int4)]);
        let record = PgType::Record(ty);
        let v = Value::Array(vec![Value::text("ab"), Value::Int(2)].into());
        let mut b = Vec::new();
        encode_binary(&v, record, &mut b).expect("encode");
        let mut want = 2i32.to_be_bytes().to_vec();
        want.extend(25u32.to_be_bytes());
        want.extend(2i32.to_be_bytes());
        want.extend(b"ab");
        want.extend(23u32.to_be_bytes());
        want.extend(4i32.to_be_bytes());
        want.extend(2i32.to_be_bytes());
        assert_eq!(b, want);
        let null_x = Value::Array(vec![Value::Null, Value::Int(1)].into());
        let mut b = Vec::new();
        encode_binary(&null_x, record, &mut b).expect("encode");
        assert_eq!(&b[8..12], &(-1i32).to_be_bytes());
        assert!(decode_binary(&b, record).is_err());
        for (x, text) in [
            (Value::Null, "(,1)"),
            (Value::text(""), "(\"\",1)"),
            (Value::text("a b"), "(\"a b\",1)"),
            (Value::text("q\"\\"), "(\"q\"\"\\\\\",1)"),
            (Value::text("(,)"), "(\"(,)\",1)"),
            (Value::text("é"), "(é,1)"),
        ] {
            let v = Value::Array(vec![x, Value::Int(1)].into());
            assert_eq!(crate::types::format_text(&v, record).as_deref(), Some(text));
        }
        assert!(crate::types::parse_text("(a,1)", record).is_err());
        // every array's element is its own field type
        for t in crate::types::ALL_TYPES.into_iter().filter(|t| t.is_array()) {
            let elem = t.element().expect("element");
            assert_eq!(elem.expanded_array_fields()[0].1, elem, "{t:?}");
        }
    }

    #[test]
    fn internal_char_is_one_byte_both_ways() {
        for (text, byte) in [("", 0u8), ("a", b'a')] {
            let mut b = Vec::new();
            encode_binary(&Value::text(text), PgType::Char, &mut b).expect("encode");
            assert_eq!(b, vec![byte], "{text:?}");
            assert_eq!(
                decode_binary(&b, PgType::Char).expect("decode"),
                Value::text(text)
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn binary_arrays_round_trip(
            ints in proptest::collection::vec(proptest::option::of(proptest::num::i64::ANY), 0..20),
            texts in proptest::collection::vec(proptest::option::of(".{0,8}"), 0..20),
        ) {
            let to_value = |items: Vec<Value>| Value::Array(items.into());
            let cases = [
                (to_value(ints.iter().map(|i| i.map_or(Value::Null, Value::Int)).collect()), PgType::Int8Array),
                (to_value(texts.iter().map(|t| t.clone().map_or(Value::Null, Value::text)).collect()), PgType::TextArray),
            ];
            for (v, ty) in cases {
                let mut b = Vec::new();
                encode_binary(&v, ty, &mut b).expect("encode");
                proptest::prop_assert_eq!(decode_binary(&b, ty).expect("decode"), v);
            }
        }
    }

    #[test]
    fn copy_binary_round_trip() {
        let types = [
            PgType::Int8,
            PgType::Varchar,
            PgType::Bool,
            PgType::Timestamptz,
            PgType::Uuid,
        ];
        let rows = vec![
            vec![
                Value::Int(1),
                Value::Text("a".into()),
                Value::Bool(true),
                Value::Timestamp(5),
                Value::Uuid([7; 16]),
            ],
            vec![
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ],
        ];
        let mut data = copy_binary_header();
        for r in &rows {
            copy_binary_row_into(r, &types, &mut data).expect("row");
        }
        data.extend(copy_binary_trailer());
        assert_eq!(parse_copy_binary(&data, &types).expect("parse"), rows);
        assert!(
            parse_copy_binary(&data[..data.len() - 3], &types).is_err(),
            "truncated stream is an error"
        );
    }
}
