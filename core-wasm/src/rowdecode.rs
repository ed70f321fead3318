//! Stored rows decoded straight from their protobuf bytes into column values, reading only the
//! columns a query uses. The general path (`pb::Row::decode`, then one `Value` per `Datum`)
//! allocates a `Datum` and a string for every column of every row; catalog scans read tens of
//! thousands of rows to return a few columns of each, so that was most of their time.
//!
//! The wire format is `rocklake.proto`'s `Row` (row_id = 1, repeated Datum values = 2,
//! tuple = 3) and `Datum` (a oneof). Scalars are read here; an interval or a list datum is
//! handed to prost, and every datum then goes through [`from_datum_owned`], so both paths give
//! the same values for the same bytes and this one refuses nothing prost accepts (tested
//! against each other below and in the `envelope` fuzz target). Datums it does not read (unused
//! columns, datums beyond the columns) are not checked: it may accept a payload prost refuses
//! for those, which the envelope's checksum already makes a writer bug, not bit rot.

use prost::Message;
use rocklake_proto as pb;

use crate::catalog::{from_datum_owned, Table};
use crate::error::DecodeError;
use crate::types::Value;

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const START_GROUP: u8 = 3;
const END_GROUP: u8 = 4;
const FIXED32: u8 = 5;
/// Nesting prost accepts (its recursion limit).
const MAX_DEPTH: u32 = 100;

fn bad_group() -> DecodeError {
    DecodeError::Payload {
        message: "invalid wire type or unbalanced group in row payload".into(),
    }
}

fn truncated() -> DecodeError {
    DecodeError::Payload {
        message: "row payload ends inside a field".into(),
    }
}

/// A cursor over protobuf wire bytes.
struct Wire<'a>(&'a [u8]);

impl<'a> Wire<'a> {
    #[inline(always)]
    fn varint(&mut self) -> Result<u64, DecodeError> {
        // Most varints here (keys, lengths, small integers) are one byte.
        if let Some((&b, rest)) = self.0.split_first() {
            if b < 0x80 {
                self.0 = rest;
                return Ok(u64::from(b));
            }
        }
        self.varint_long()
    }

    #[inline(never)]
    fn varint_long(&mut self) -> Result<u64, DecodeError> {
        let mut v = 0u64;
        for (i, &b) in self.0.iter().enumerate().take(10) {
            // The tenth byte holds the 64th bit only (prost refuses more).
            if i == 9 && b > 1 {
                break;
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                self.0 = &self.0[i + 1..];
                return Ok(v);
            }
        }
        Err(DecodeError::Payload {
            message: "invalid varint in row payload".into(),
        })
    }

    /// The next field's number and wire type.
    #[inline(always)]
    fn key(&mut self) -> Result<(u64, u8), DecodeError> {
        let k = self.varint()?;
        // As prost: keys are 32-bit and field 0 does not exist.
        if k > u64::from(u32::MAX) || k >> 3 == 0 {
            return Err(DecodeError::Payload {
                message: format!("invalid field key {k} in row payload"),
            });
        }
        Ok((k >> 3, (k & 7) as u8))
    }

    #[inline(always)]
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.0.len() < n {
            return Err(truncated());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    #[inline(always)]
    fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let n = usize::try_from(self.varint()?).map_err(|_| truncated())?;
        self.take(n)
    }

    /// Skips a field of an unknown number (prost ignores those too), groups included.
    fn skip(&mut self, field: u64, wire_type: u8, depth: u32) -> Result<(), DecodeError> {
        match wire_type {
            VARINT => self.varint().map(drop),
            FIXED64 => self.take(8).map(drop),
            LEN => self.bytes().map(drop),
            FIXED32 => self.take(4).map(drop),
            START_GROUP if depth < MAX_DEPTH => loop {
                let (f, wt) = self.key()?;
                if wt == END_GROUP {
                    if f == field {
                        return Ok(());
                    }
                    return Err(bad_group());
                }
                self.skip(f, wt, depth + 1)?;
            },
            _ => Err(bad_group()),
        }
    }
}

fn invalid_utf8() -> DecodeError {
    DecodeError::Payload {
        message: "invalid UTF-8 in a text datum".into(),
    }
}

fn utf8(b: &[u8]) -> Result<String, DecodeError> {
    String::from_utf8(b.to_vec()).map_err(|_| invalid_utf8())
}

fn wrong_wire_type(field: u64) -> DecodeError {
    DecodeError::Payload {
        message: format!("datum field {field} has the wrong wire type"),
    }
}

/// One `Datum` message as a value of column type `ty`.
pub fn decode_datum(buf: &[u8], ty: crate::types::PgType) -> Result<Value, DecodeError> {
    use pb::datum::Kind;
    let mut w = Wire(buf);
    let mut kind = None;
    // A text datum (the last field wins, as for any oneof) is kept as the borrowed text, so
    // that a string column's value is allocated once, already shared.
    let mut text: Option<&str> = None;
    while !w.0.is_empty() {
        let (field, wt) = w.key()?;
        if (field, wt) == (4, LEN) {
            text = Some(std::str::from_utf8(w.bytes()?).map_err(|_| invalid_utf8())?);
            kind = None;
            continue;
        }
        if field > 8 {
            // Unknown fields (prost skips them) leave the oneof as it is.
            w.skip(field, wt, 1)?;
            continue;
        }
        text = None;
        kind = Some(match (field, wt) {
            (1, VARINT) => Kind::Boolean(w.varint()? != 0),
            (2, VARINT) => {
                let u = w.varint()?;
                Kind::Int(((u >> 1) as i64) ^ -((u & 1) as i64))
            }
            (3, FIXED64) => {
                let b: [u8; 8] = w.take(8)?.try_into().map_err(|_| truncated())?;
                Kind::Float(f64::from_le_bytes(b))
            }
            (5, LEN) => Kind::Bytes(w.bytes()?.to_vec()),
            (7, LEN) => Kind::Numeric(utf8(w.bytes()?)?),
            // Messages inside the oneof (interval, list): prost merges and checks them.
            (6 | 8, _) => {
                let d = pb::Datum::decode(buf).map_err(|e| DecodeError::Payload {
                    message: e.to_string(),
                })?;
                return from_datum_owned(d, ty);
            }
            _ => return Err(wrong_wire_type(field)),
        });
    }
    match text {
        Some(t) if ty.is_string() || ty == crate::types::PgType::Json => Ok(Value::text(t)),
        Some(t) => from_datum_owned(
            pb::Datum {
                kind: Some(Kind::Text(t.to_string())),
            },
            ty,
        ),
        None => from_datum_owned(pb::Datum { kind }, ty),
    }
}

/// A stored row's payload as `t`'s column values followed by its ctid, and its tuple number.
/// Columns outside `used` (one flag per column, then the ctid's) are NULL, never decoded;
/// columns added after the row was written read NULL, datums beyond the columns are ignored.
pub fn decode_row(
    buf: &[u8],
    t: &Table,
    used: Option<&[bool]>,
) -> Result<(u64, Vec<Value>), DecodeError> {
    let n = t.columns.len();
    // The row ends after the last column read (see [`used_width`]).
    let width = used_width(used, n + 1);
    let mut out = Vec::with_capacity(width);
    let mut tuple = 0u64;
    let mut w = Wire(buf);
    while !w.0.is_empty() {
        let (field, wt) = w.key()?;
        match (field, wt) {
            (1, VARINT) => drop(w.varint()?),
            (2, LEN) => {
                let d = w.bytes()?;
                let i = out.len();
                if let Some(c) = t.columns.get(i).filter(|_| i < width) {
                    let wanted = used.is_none_or(|u| u.get(i).copied().unwrap_or(true));
                    out.push(if wanted {
                        decode_datum(d, c.ty)?
                    } else {
                        Value::Null
                    });
                }
            }
            (3, VARINT) => tuple = w.varint()?,
            (1..=3, _) => {
                return Err(DecodeError::Payload {
                    message: format!("row field {field} has the wrong wire type"),
                })
            }
            (_, wt) => w.skip(field, wt, 0)?,
        }
    }
    out.resize(width.min(n), Value::Null);
    if width > n {
        out.push(crate::exec::tid_of(tuple));
    }
    Ok((tuple, out))
}

/// How many leading values of a `full`-wide row (columns, then the ctid) a reader of the
/// `used` ones needs: up to the last one it reads. A row is read through `get`, so a shorter
/// row reads NULL past its end, as the unread columns inside it do; `SELECT count(*)` over
/// millions of rows then holds no values at all (each `Value` is 32 bytes natively). Positions past the
/// mask's end count as read.
pub fn used_width(used: Option<&[bool]>, full: usize) -> usize {
    match used {
        Some(u) if u.len() >= full => u[..full].iter().rposition(|&b| b).map_or(0, |i| i + 1),
        _ => full,
    }
}

/// The same result by the general path (prost's `pb::Row`, then [`from_datum_owned`] per
/// column, as `exec::row_values` reads a row), for tests and the `envelope` fuzz target.
pub fn decode_row_prost(buf: &[u8], t: &Table) -> Result<(u64, Vec<Value>), DecodeError> {
    let row = pb::Row::decode(buf).map_err(|e| DecodeError::Payload {
        message: e.to_string(),
    })?;
    let tuple = row.tuple;
    Ok((tuple, crate::exec::row_values(t, row)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Column;
    use crate::types::PgType;
    use proptest::prelude::*;

    const TYPES: [PgType; 9] = [
        PgType::Bool,
        PgType::Int8,
        PgType::Int4,
        PgType::Float8,
        PgType::Text,
        PgType::Varchar,
        PgType::Numeric,
        PgType::Bytea,
        PgType::Timestamptz,
    ];

    fn datum() -> impl Strategy<Value = pb::Datum> {
        use pb::datum::Kind;
        prop_oneof![
            Just(pb::Datum { kind: None }),
            any::<bool>().prop_map(|b| pb::Datum {
                kind: Some(Kind::Boolean(b))
            }),
            any::<i64>().prop_map(|i| pb::Datum {
                kind: Some(Kind::Int(i))
            }),
            any::<f64>().prop_map(|f| pb::Datum {
                kind: Some(Kind::Float(f))
            }),
            ".{0,12}".prop_map(|s| pb::Datum {
                kind: Some(Kind::Text(s))
            }),
            "-?[0-9]{1,6}(\\.[0-9]{1,4})?".prop_map(|s| pb::Datum {
                kind: Some(Kind::Numeric(s))
            }),
            proptest::collection::vec(any::<u8>(), 0..8).prop_map(|b| pb::Datum {
                kind: Some(Kind::Bytes(b))
            }),
            (any::<i32>(), any::<i32>(), any::<i64>()).prop_map(|(months, days, micros)| {
                pb::Datum {
                    kind: Some(Kind::Interval(pb::Interval {
                        months,
                        days,
                        micros,
                    })),
                }
            }),
        ]
    }

    fn table(types: &[PgType]) -> Table {
        Table {
            id: 7,
            oid: 16_400,
            schema: "public".into(),
            name: "t".into(),
            columns: types
                .iter()
                .enumerate()
                .map(|(i, ty)| Column {
                    name: format!("c{i}"),
                    ty: *ty,
                    typmod: -1,
                    not_null: false,
                    default_sql: None,
                    identity: None,
                    serial: None,
                    comment: None,
                })
                .collect(),
            primary_key: Vec::new(),
            pkey_name: String::new(),
            indexes: Vec::new(),
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

    /// Found by the envelope fuzz target: a malformed datum beyond the table's columns (field 6
    /// with a fixed32 wire type) is never read here, while prost refuses the whole row.
    #[test]
    fn datums_beyond_the_columns_are_not_read() {
        let bytes = [
            0x08, 0x07, 0x12, 0x00, 0x12, 0x07, 0x08, 0x05, 0x35, 0x00, 0x12, 0x00, 0x08,
        ];
        let t = table(&[PgType::Int8]);
        assert!(decode_row_prost(&bytes, &t).is_err());
        let (_, values) = decode_row(&bytes, &t, None).expect("the one column reads");
        assert_eq!(values[0], Value::Null);
    }

    /// Found by the envelope fuzz target: an unknown field after a text datum (field 12,
    /// fixed64) left the direct decoder reading NULL where prost keeps the text.
    #[test]
    fn unknown_datum_fields_keep_the_text() {
        let bytes = [
            0x52, 0x01, 0x07, 0x12, 0x02, 0x10, 0x00, 0x12, 0x0f, 0x22, 0x04, 0x46, 0x6d, 0x04,
            0x6d, 0x61, 0x6d, 0x6e, 0x12, 0x02, 0x48, 0x01, 0x12, 0x00, 0x48, 0x01, 0x12, 0x00,
            0x12, 0x00, 0x12, 0x00, 0x12, 0x00,
        ];
        let t = table(&[PgType::Int8, PgType::Text, PgType::Numeric]);
        let (_, fast) = decode_row(&bytes, &t, None).expect("the direct decoder reads it");
        let (_, slow) = decode_row_prost(&bytes, &t).expect("prost reads it");
        assert_eq!(fast[1], Value::text("Fm\u{4}m"));
        assert_eq!(format!("{fast:?}"), format!("{slow:?}"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]

        /// Same values, same success or failure, as prost + `from_datum_owned`, whatever
        /// datum meets whatever column type (a mismatch is an error on both paths).
        #[test]
        fn matches_prost(
            datums in proptest::collection::vec(datum(), 0..6),
            type_ix in proptest::collection::vec(0..TYPES.len(), 0..7),
            row_id in any::<u64>(),
            tuple in any::<u64>(),
        ) {
            let types: Vec<PgType> = type_ix.iter().map(|i| TYPES[*i]).collect();
            let t = table(&types);
            let bytes = pb::Row { row_id, values: datums, tuple }.encode_to_vec();
            let fast = decode_row(&bytes, &t, None).map(|(_, v)| v);
            match (fast, decode_row_prost(&bytes, &t).map(|(_, v)| v)) {
                (Ok(a), Ok(b)) => prop_assert_eq!(format!("{a:?}"), format!("{b:?}")),
                (Err(_), Err(_)) => {}
                (a, b) => prop_assert!(false, "fast {a:?} vs prost {b:?}"),
            }
        }

        /// Unused columns read NULL; the others as decoded in full.
        #[test]
        fn mask_nulls_only_unused(
            ints in proptest::collection::vec(any::<i64>(), 1..6),
            mask in proptest::collection::vec(any::<bool>(), 7),
        ) {
            let t = table(&vec![PgType::Int8; ints.len()]);
            let values = ints.iter().map(|i| pb::Datum { kind: Some(pb::datum::Kind::Int(*i)) }).collect();
            let bytes = pb::Row { row_id: 1, values, tuple: 9 }.encode_to_vec();
            let (tuple, got) = decode_row(&bytes, &t, Some(&mask)).expect("a valid row");
            prop_assert_eq!(tuple, 9);
            // The row ends after the last value read; past its end reads NULL.
            let n = ints.len();
            let last = mask[..=n].iter().rposition(|&b| b).map_or(0, |i| i + 1);
            prop_assert_eq!(got.len(), last);
            let read = |i: usize| got.get(i).cloned().unwrap_or(Value::Null);
            for (i, v) in ints.iter().enumerate() {
                let want = if mask[i] { Value::Int(*v) } else { Value::Null };
                prop_assert_eq!(read(i), want);
            }
            if mask[n] {
                prop_assert_eq!(read(n), crate::exec::tid_of(9));
            }
        }

        /// A valid row with one byte changed or the tail cut: as prost (same values, or an
        /// error where prost errs).
        #[test]
        fn damaged_rows_match_prost(
            datums in proptest::collection::vec(datum(), 1..5),
            at in any::<proptest::sample::Index>(),
            byte in any::<u8>(),
            cut in any::<bool>(),
        ) {
            let t = table(&[PgType::Int8, PgType::Text, PgType::Numeric, PgType::Float8]);
            let mut bytes = pb::Row { row_id: 3, values: datums, tuple: 5 }.encode_to_vec();
            let i = at.index(bytes.len());
            if cut { bytes.truncate(i) } else { bytes[i] = byte }
            let fast = decode_row(&bytes, &t, None).map(|(_, v)| v);
            let slow = decode_row_prost(&bytes, &t).map(|(_, v)| v);
            if let (Ok(a), Ok(b)) = (&fast, &slow) {
                prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
            }
            prop_assert!(!(fast.is_err() && slow.is_ok()), "{:?} vs {:?} for {:?}", fast, slow, bytes);
        }

        /// Unknown fields of every wire type, groups included, are skipped as prost skips them.
        #[test]
        fn unknown_fields_are_skipped_like_prost(
            ints in proptest::collection::vec(any::<i64>(), 1..4),
            field in 9u64..40,
            wire_type in 0u8..6,
            junk in proptest::collection::vec(any::<u8>(), 0..6),
        ) {
            let t = table(&vec![PgType::Int8; ints.len()]);
            let values = ints.iter().map(|i| pb::Datum { kind: Some(pb::datum::Kind::Int(*i)) }).collect();
            let mut bytes = pb::Row { row_id: 1, values, tuple: 4 }.encode_to_vec();
            bytes.push(((field << 3) as u8) | wire_type);
            bytes.extend_from_slice(&junk);
            if wire_type == START_GROUP {
                bytes.push(((field << 3) as u8) | END_GROUP);
            }
            let fast = decode_row(&bytes, &t, None).map(|(_, v)| v);
            let slow = decode_row_prost(&bytes, &t).map(|(_, v)| v);
            if let (Ok(a), Ok(b)) = (&fast, &slow) {
                prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
            }
            prop_assert!(!(fast.is_err() && slow.is_ok()), "{:?} vs {:?} for {:?}", fast, slow, bytes);
        }

        /// An unknown field inside a datum, before or after its value, is skipped as prost
        /// skips it: the datum keeps its value, whatever its kind.
        #[test]
        fn unknown_fields_inside_a_datum_are_skipped_like_prost(
            datum in datum(),
            ty in 0..TYPES.len(),
            field in 9u64..16,
            wire_type in prop_oneof![Just(VARINT), Just(FIXED64), Just(LEN), Just(FIXED32)],
            before in any::<bool>(),
        ) {
            let t = table(&[TYPES[ty]]);
            let mut unknown = vec![((field << 3) as u8) | wire_type];
            unknown.extend_from_slice(match wire_type {
                VARINT => &[1][..],
                FIXED64 => &[0; 8][..],
                LEN => &[2, 7, 7][..],
                _ => &[0; 4][..],
            });
            let value = datum.encode_to_vec();
            let inner = if before { [unknown, value].concat() } else { [value, unknown].concat() };
            let mut bytes = vec![0x12];
            prost::encoding::encode_varint(inner.len() as u64, &mut bytes);
            bytes.extend_from_slice(&inner);
            let fast = decode_row(&bytes, &t, None).map(|(_, v)| v);
            let slow = decode_row_prost(&bytes, &t).map(|(_, v)| v);
            match (fast, slow) {
                (Ok(a), Ok(b)) => prop_assert_eq!(format!("{a:?}"), format!("{b:?}")),
                (Err(_), Err(_)) => {}
                (a, b) => prop_assert!(false, "fast {a:?} vs prost {b:?}"),
            }
        }

        /// Arbitrary bytes never panic, read as prost reads them, and fail only where prost fails.
        #[test]
        fn garbage_is_an_error_not_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let t = table(&[PgType::Int8, PgType::Text, PgType::Numeric]);
            let fast = decode_row(&bytes, &t, None).map(|(_, v)| v);
            let slow = decode_row_prost(&bytes, &t).map(|(_, v)| v);
            if let (Ok(a), Ok(b)) = (&fast, &slow) {
                prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
            }
            prop_assert!(!(fast.is_err() && slow.is_ok()), "{:?} vs {:?} for {:?}", fast, slow, bytes);
        }
    }
}
