//! The key decoders (core-wasm/src/keys.rs) on arbitrary bytes: `split_version` and
//! `decode_fields` for a list of column types taken from the input return errors, never panic;
//! decoded fields re-encode to a key that decodes to the same encoding again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocklake_core::keys;
use rocklake_core::types::{PgType, ALL_TYPES};

fuzz_target!(|data: &[u8]| {
    // Byte 0: how many fields (0..=3); then one byte per field type; the rest is the key.
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(n % 4);
    if rest.len() < n {
        return;
    }
    let (tys, key) = rest.split_at(n);
    let types: Vec<PgType> = tys
        .iter()
        .map(|b| ALL_TYPES[usize::from(*b) % ALL_TYPES.len()])
        .collect();

    // A versioned stored key: logical part and inverted commit sequence.
    if let Ok((logical, seq)) = keys::split_version(key) {
        let mut again = logical.to_vec();
        keys::push_version(&mut again, seq);
        assert_eq!(again, key, "split_version/push_version do not round-trip");
    }

    // The fields of a logical key.
    if let Ok(values) = keys::decode_fields(key, &types) {
        assert_eq!(values.len(), types.len());
        let mut encoded = Vec::new();
        for (v, ty) in values.iter().zip(&types) {
            keys::encode_field(&mut encoded, v, *ty);
        }
        let decoded = keys::decode_fields(&encoded, &types)
            .expect("a key encoded from decoded fields decodes");
        let mut again = Vec::new();
        for (v, ty) in decoded.iter().zip(&types) {
            keys::encode_field(&mut again, v, *ty);
        }
        assert_eq!(again, encoded, "key field encoding is not stable");
    }
});
