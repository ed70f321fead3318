//! Helpers shared by the engine-level tests.

use rocklake_core::api::{Reply, SessionId};
use rocklake_core::memkv::MemKv;
use rocklake_core::Engine;

/// Runs `sql` to the end of the request: every commit batch it suspends on is applied to `kv`
/// and reported durable. The reply carries the outputs of the whole request.
pub fn run(e: &mut Engine, kv: &mut MemKv, s: SessionId, sql: &str) -> Reply {
    let mut r = e.query(kv, s, sql, 1);
    let mut outputs = std::mem::take(&mut r.outputs);
    while let Some(b) = r.commit.take() {
        kv.apply(&b);
        r = e.commit_finished(kv, s, Ok(()));
        outputs.append(&mut r.outputs);
    }
    r.outputs = outputs;
    r
}

/// [`run`], which must succeed.
#[allow(dead_code)] // not every test file uses every helper
pub fn run_ok(e: &mut Engine, kv: &mut MemKv, s: SessionId, sql: &str) -> Reply {
    let r = run(e, kv, s, sql);
    assert!(r.error.is_none(), "{sql}: {:?}", r.error);
    r
}

/// The COPY stream of the last output, chunk by chunk, and its tag.
#[allow(dead_code)]
pub fn copy_of(r: &Reply) -> (Vec<Vec<u8>>, String) {
    match r.outputs.last() {
        Some(rocklake_core::api::Output::CopyOut { chunks, tag, .. }) => {
            (chunks.iter().map(<[u8]>::to_vec).collect(), tag.clone())
        }
        other => panic!("not a COPY: {other:?}"),
    }
}

/// An empty store, an engine over it and one session.
#[allow(dead_code)]
pub fn fresh() -> (MemKv, Engine, SessionId) {
    let kv = MemKv::new();
    let mut e = Engine::open(&kv).expect("open");
    let s = e.open_session("t", "lake");
    (kv, e, s)
}
