//! COPY FROM STDIN decoding in the core on arbitrary bytes: binary (wire::parse_copy_binary),
//! text and CSV (copyformat's line reader), and the insert path behind them, into a table with
//! one column of each type DuckLake's catalog uses, and into the DuckLake tables DuckDB fills
//! with binary COPY. The engine must answer with `COPY n` or an error, never panic.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rocklake_core::memkv::MemKv;
use rocklake_fuzz::{awaits_copy_data, ducklake_catalog, Harness};

/// Every column type the catalog's tables use, plus the rest of the binary decoders.
const WIDE_TABLE: &str = "CREATE TABLE t (a BIGINT PRIMARY KEY, b VARCHAR, c BOOLEAN, \
     d TIMESTAMPTZ, e UUID, f DOUBLE PRECISION, g NUMERIC, h INTEGER, i SMALLINT, j BYTEA, \
     k DATE, l TIME, m INTERVAL, n TIMESTAMP, o REAL, p TEXT[], q OID, r JSON, s INT4[])";

fn fixture() -> &'static MemKv {
    static KV: OnceLock<MemKv> = OnceLock::new();
    KV.get_or_init(|| {
        let mut h = Harness::open(ducklake_catalog().clone());
        let s = h.session();
        h.must(s, WIDE_TABLE);
        h.kv
    })
}

/// COPY targets, picked by the input's first byte: the wide table in each format, then the
/// DuckLake tables DuckDB loads with binary COPY at its first ATTACH.
const COPIES: [&str; 9] = [
    "COPY t FROM STDIN",
    "COPY t FROM STDIN (FORMAT csv, HEADER)",
    "COPY t (b, a, p) FROM STDIN (FORMAT csv, QUOTE '''', ESCAPE '\\', FORCE_NULL (b), FORCE_NOT_NULL (p))",
    "COPY t (a, b) FROM STDIN (FORMAT text, HEADER match, DELIMITER '|', NULL '')",
    "COPY t FROM STDIN (FORMAT BINARY)",
    "COPY \"public\".\"ducklake_schema\" FROM STDIN (FORMAT BINARY)",
    "COPY \"public\".\"ducklake_snapshot\" FROM STDIN (FORMAT BINARY)",
    "COPY \"public\".\"ducklake_snapshot_changes\" FROM STDIN (FORMAT BINARY)",
    "COPY \"public\".\"ducklake_metadata\" FROM STDIN (FORMAT BINARY)",
];

fuzz_target!(|data: &[u8]| {
    let Some((&which, stream)) = data.split_first() else {
        return;
    };
    let copy = COPIES[usize::from(which) % COPIES.len()];
    let mut h = Harness::open(fixture().clone());
    let s = h.session();
    let r = h.query(s, copy);
    assert!(awaits_copy_data(&r), "{copy}: {r:?}");
    h.copy_in(s, stream);
    let r = h.query(s, "ROLLBACK; SELECT count(*) FROM t");
    assert!(
        r.error.is_none(),
        "session unusable after COPY: {:?}",
        r.error
    );
});
