//! The core's SQL parser and executor on arbitrary text: one session of an engine over DuckLake's
//! catalog (as DuckDB 1.5.5 creates it) runs the input as a simple-protocol query string and must
//! answer with rows, command tags or an ErrorResponse, never panic. A COPY FROM STDIN the input
//! starts is ended with no data. Each input starts from the same catalog.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocklake_fuzz::{awaits_copy_data, ducklake_catalog, Harness};

fuzz_target!(|data: &[u8]| {
    let Ok(sql) = std::str::from_utf8(data) else {
        return;
    };
    let mut h = Harness::open(ducklake_catalog().clone());
    let s = h.session();
    let r = h.query(s, sql);
    if awaits_copy_data(&r) {
        h.copy_in(s, &[]);
    }
    // Whatever state the input left behind, the session keeps answering.
    let r = h.query(s, "ROLLBACK; SELECT 1");
    assert!(
        r.error.is_none(),
        "session unusable after the input: {:?}",
        r.error
    );
});
