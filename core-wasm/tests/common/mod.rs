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
