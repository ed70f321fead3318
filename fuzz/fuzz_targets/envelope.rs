//! The row envelope decoder (core-wasm/src/envelope.rs) on arbitrary stored bytes: it returns a
//! `DecodeError` or a value, never panics; a decoded value re-encodes to bytes that decode and
//! re-encode to themselves. The same bytes as a row payload: the direct row decoder
//! (core-wasm/src/rowdecode.rs) reads exactly what prost's path reads whenever prost succeeds,
//! and refuses nothing prost accepts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocklake_core::catalog::{Column, Table};
use rocklake_core::envelope::Envelope;
use rocklake_core::rowdecode::{decode_row, decode_row_prost};
use rocklake_core::types::PgType;

fn table() -> Table {
    let types = [
        PgType::Int8,
        PgType::Text,
        PgType::Numeric,
        PgType::Float8,
        PgType::Bool,
        PgType::Bytea,
        PgType::Interval,
        PgType::Timestamptz,
    ];
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

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = Envelope::decode(data) {
        let bytes = value.encode();
        let again = Envelope::decode(&bytes).expect("a re-encoded envelope decodes");
        assert_eq!(again.encode(), bytes, "envelope encoding is not stable");
    }
    let t = table();
    // The direct decoder never reads datums beyond the table's columns, so it may accept a
    // payload prost refuses for those; everything prost accepts it must read the same, and
    // whatever it refuses prost must refuse too.
    match (decode_row(data, &t, None), decode_row_prost(data, &t)) {
        (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "row decoders disagree"),
        (Err(a), Ok(b)) => panic!("direct decoder refused ({a:?}) what prost read: {b:?}"),
        (Ok(_) | Err(_), Err(_)) => {}
    }
});
