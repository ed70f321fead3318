//! Inputs found by the fuzz targets (fuzz/, docs/fuzzing.md), each replayed through the call that
//! failed, with the answer it must give now.

use rocklake_core::keys::decode_fields;
use rocklake_core::types::{numeric_canonical, PgType};

/// fuzz target `keys`, timeout-86bdfc61bd0f561d9952d66f9815f8734130c9a1: a numeric key field
/// whose stored exponent is about -2^31. Decoding expanded it into a decimal string of ~2^31
/// digits (minutes and gigabytes) instead of refusing it.
#[test]
fn numeric_key_with_a_huge_exponent_is_an_error() {
    let key = [
        0x01, 0x03, 0x01, 0x00, 0x00, 0x02, 0x02, 0x06, 0x00, 0x00, 0x01,
    ];
    assert!(decode_fields(&key, &[PgType::Numeric]).is_err());
}

/// fuzz target `keys`, crash-c2940f4f37e589da4bf6c1dd56b6a43b6ea35823: a numeric key field
/// with a trailing zero digit ("20" × 10^131072, which the encoder writes as "2" × 10^131073).
/// It decoded to a value whose own key was then refused: the decoder accepted a form the
/// encoder never writes. Non-canonical digits are an error now.
#[test]
fn numeric_key_with_non_canonical_digits_is_an_error() {
    let key = [1, 3, 128, 2, 0, 2, 3, 1, 0, 0, 4];
    assert!(decode_fields(&key, &[PgType::Numeric]).is_err());
    // The canonical form of a small value still decodes (digit 2 stored as 3, then the end).
    let mut ok = Vec::new();
    rocklake_core::keys::encode_field(
        &mut ok,
        &rocklake_core::types::Value::Numeric("20".into()),
        PgType::Numeric,
    );
    let back = decode_fields(&ok, &[PgType::Numeric]).expect("canonical key decodes");
    assert_eq!(
        back,
        vec![rocklake_core::types::Value::Numeric("20".into())]
    );
}

/// The same through SQL text: exponents beyond what PostgreSQL's numeric can hold are refused
/// at once; the extremes of what it can hold still work.
#[test]
fn numeric_text_beyond_postgres_limits_is_refused() {
    for text in [
        "1e-2000000000",
        "1e2000000000",
        "15e-2147483648",
        "1e131073",
        "1e-16384",
    ] {
        assert_eq!(numeric_canonical(text), None, "{text}");
    }
    assert_eq!(numeric_canonical("12.50e1").as_deref(), Some("125.0"));
    assert_eq!(
        numeric_canonical("1e131072").map(|s| s.len()),
        Some(131_073)
    );
    assert_eq!(numeric_canonical("1e-16383").map(|s| s.len()), Some(16_385));
}

/// fuzz target `copy_binary`, crash-48b7c4bf27a98c3980b52b24c19a48c1544b3543: a binary numeric
/// with a negative digit count (`attempt to multiply with overflow` in numeric_from_binary).
#[test]
fn binary_numeric_with_negative_digit_count_is_an_error() {
    use rocklake_core::wire::{decode_binary, numeric_from_binary};
    let value = [0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00];
    assert!(numeric_from_binary(&value).is_err());
    assert!(decode_binary(&value, PgType::Numeric).is_err());
}

/// fuzz target `keys`, crash-792c1283322212c6fd9371c578b2e34557de0015: an interval key field
/// whose span is near i128::MIN (`attempt to subtract with overflow` in decode_fields).
#[test]
fn interval_key_with_an_impossible_span_is_an_error() {
    let mut key = vec![0x01];
    key.extend_from_slice(&[0u8; 16]); // span = i128::MIN after the sign flip
    key.extend_from_slice(&(1u64 << 63 | 1).to_be_bytes()); // months = 1
    key.extend_from_slice(&(1u64 << 63).to_be_bytes()); // days = 0
    assert!(decode_fields(&key, &[PgType::Interval]).is_err());
}
