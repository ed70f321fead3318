//! The value envelope: `magic "RL" (2) | version (1) | kind (1) | crc32 of the first four bytes and the payload (4, BE) |
//! protobuf payload`. The checksum turns bit rot into a clean [`DecodeError`] instead of a
//! plausible but wrong row; unknown versions and kinds are errors, never guesses.

use prost::Message;
use rocklake_proto as pb;

use crate::error::DecodeError;

pub const MAGIC: [u8; 2] = *b"RL";
pub const VERSION: u8 = 1;
const HEADER: usize = 8;

const KIND_ROW: u8 = 1;
const KIND_TOMBSTONE: u8 = 2;
const KIND_TABLE_DEF: u8 = 3;
const KIND_SCHEMA_DEF: u8 = 4;

/// A decoded stored value.
#[derive(Debug, Clone, PartialEq)]
pub enum Envelope {
    Row(pb::Row),
    /// The logical key was deleted at this version.
    Tombstone,
    TableDef(pb::TableDef),
    SchemaDef(pb::SchemaDef),
}

/// CRC-32 (IEEE). Every row read checks one, so it uses crc32fast (hardware-assisted natively,
/// slicing-by-16 in the component).
pub fn crc32(data: &[u8]) -> u32 {
    crc32_parts(data, &[])
}

/// CRC-32 over the concatenation of `a` and `b` (header fields and payload are both covered, so
/// a flipped kind byte cannot turn a row into a table definition).
fn crc32_parts(a: &[u8], b: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(a);
    h.update(b);
    h.finalize()
}

fn wrap(kind: u8, payload: Vec<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(&MAGIC);
    out.push(VERSION);
    out.push(kind);
    let crc = crc32_parts(&out[..4], &payload);
    out.extend_from_slice(&crc.to_be_bytes());
    out.extend_from_slice(&payload);
    out
}

impl Envelope {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Envelope::Row(r) => wrap(KIND_ROW, r.encode_to_vec()),
            Envelope::Tombstone => wrap(KIND_TOMBSTONE, Vec::new()),
            Envelope::TableDef(t) => wrap(KIND_TABLE_DEF, t.encode_to_vec()),
            Envelope::SchemaDef(s) => wrap(KIND_SCHEMA_DEF, s.encode_to_vec()),
        }
    }

    /// Checks the header and checksum; the kind byte and the payload.
    fn open(bytes: &[u8]) -> Result<(u8, &[u8]), DecodeError> {
        if bytes.len() < HEADER {
            return Err(DecodeError::Truncated { len: bytes.len() });
        }
        if bytes[0..2] != MAGIC {
            return Err(DecodeError::BadMagic {
                found: [bytes[0], bytes[1]],
            });
        }
        if bytes[2] != VERSION {
            return Err(DecodeError::UnknownVersion { version: bytes[2] });
        }
        let kind = bytes[3];
        if !(KIND_ROW..=KIND_SCHEMA_DEF).contains(&kind) {
            return Err(DecodeError::UnknownKind { kind });
        }
        let crc = u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        let payload = &bytes[HEADER..];
        if crc32_parts(&bytes[..4], payload) != crc {
            return Err(DecodeError::Payload {
                message: "checksum mismatch".into(),
            });
        }
        Ok((kind, payload))
    }

    /// The checked protobuf payload of a stored row (`pb::Row`), without decoding it; `None`
    /// for a tombstone or a definition.
    pub fn row_payload(bytes: &[u8]) -> Result<Option<&[u8]>, DecodeError> {
        let (kind, payload) = Envelope::open(bytes)?;
        Ok((kind == KIND_ROW).then_some(payload))
    }

    pub fn decode(bytes: &[u8]) -> Result<Envelope, DecodeError> {
        let (kind, payload) = Envelope::open(bytes)?;
        let perr = |e: prost::DecodeError| DecodeError::Payload {
            message: e.to_string(),
        };
        Ok(match kind {
            KIND_ROW => Envelope::Row(pb::Row::decode(payload).map_err(perr)?),
            KIND_TOMBSTONE => Envelope::Tombstone,
            KIND_TABLE_DEF => Envelope::TableDef(pb::TableDef::decode(payload).map_err(perr)?),
            KIND_SCHEMA_DEF => Envelope::SchemaDef(pb::SchemaDef::decode(payload).map_err(perr)?),
            kind => return Err(DecodeError::UnknownKind { kind }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn datum(k: pb::datum::Kind) -> pb::Datum {
        pb::Datum { kind: Some(k) }
    }

    proptest! {
        #[test]
        fn row_round_trip(row_id in any::<u64>(), ints in proptest::collection::vec(any::<i64>(), 0..8), text in ".{0,30}", nulls in 0usize..3) {
            let mut values: Vec<pb::Datum> = ints.iter().map(|i| datum(pb::datum::Kind::Int(*i))).collect();
            values.push(datum(pb::datum::Kind::Text(text)));
            for _ in 0..nulls { values.push(pb::Datum { kind: None }); }
            let env = Envelope::Row(pb::Row { row_id, values, tuple: row_id });
            prop_assert_eq!(Envelope::decode(&env.encode()).expect("decode"), env);
        }

        #[test]
        fn corrupted_bytes_are_errors(row_id in any::<u64>(), text in ".{1,30}", flip in any::<usize>(), bit in 0u8..8) {
            let env = Envelope::Row(pb::Row { row_id, values: vec![datum(pb::datum::Kind::Text(text))], tuple: 1 });
            let mut bytes = env.encode();
            let i = flip % bytes.len();
            bytes[i] ^= 1 << bit;
            // Any single bit flip is detected: header fields are checked, payload is checksummed.
            prop_assert!(Envelope::decode(&bytes).is_err());
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Envelope::decode(&bytes);
        }
    }

    #[test]
    fn crc32_matches_the_ieee_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32_parts(b"1234", b"56789"), 0xCBF4_3926);
    }

    #[test]
    fn unknown_version_and_kind_are_reported() {
        let mut b = Envelope::Tombstone.encode();
        b[2] = 9;
        assert_eq!(
            Envelope::decode(&b),
            Err(DecodeError::UnknownVersion { version: 9 })
        );
        let mut b = Envelope::Tombstone.encode();
        b[3] = 77;
        assert_eq!(
            Envelope::decode(&b),
            Err(DecodeError::UnknownKind { kind: 77 })
        );
        assert_eq!(
            Envelope::decode(b"RL"),
            Err(DecodeError::Truncated { len: 2 })
        );
    }
}
