//! The row envelope decoder (core-wasm/src/envelope.rs) on arbitrary stored bytes: it returns a
//! `DecodeError` or a value, never panics; a decoded value re-encodes to bytes that decode and
//! re-encode to themselves.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocklake_core::envelope::Envelope;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = Envelope::decode(data) {
        let bytes = value.encode();
        let again = Envelope::decode(&bytes).expect("a re-encoded envelope decodes");
        assert_eq!(again.encode(), bytes, "envelope encoding is not stable");
    }
});
