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

/// The rows of the last output, values as text (`None` for NULL).
#[allow(dead_code)]
pub fn rows_of(r: &Reply) -> Vec<Vec<Option<String>>> {
    match r.outputs.last() {
        Some(rocklake_core::api::Output::Rows { rows, .. }) => rows.to_strings(),
        other => panic!("not rows: {other:?}"),
    }
}

/// Runs `sql` twice and checks that neither was answered from the result cache (copycache.rs)
/// and, unless `volatile` (it reads the clock), that both gave the same result (`read`).
#[allow(dead_code)]
pub fn assert_executed_twice<T: PartialEq + std::fmt::Debug>(
    e: &mut Engine,
    kv: &mut MemKv,
    s: SessionId,
    sql: &str,
    read: fn(&Reply) -> T,
    volatile: bool,
) {
    let hits = e.st.copies.hits();
    let first = read(&run_ok(e, kv, s, sql));
    let second = read(&run_ok(e, kv, s, sql));
    assert_eq!(
        e.st.copies.hits(),
        hits,
        "{sql} was answered from the cache"
    );
    if !volatile {
        assert_eq!(first, second, "{sql}");
    }
}

/// The shared test material (`ROCKLAKE_SHARED`, else `../shared` beside the checkout).
#[allow(dead_code)]
pub fn shared_dir() -> std::path::PathBuf {
    std::env::var_os("ROCKLAKE_SHARED")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

/// The records of a recorded trace (`traces/statements-<run>.jsonl.gz`), in order.
#[allow(dead_code)]
pub fn trace(run: &str) -> Vec<serde_json::Value> {
    let path = shared_dir().join(format!("traces/statements-{run}.jsonl.gz"));
    let out = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("gzip -dc {}: {e}", path.display()));
    assert!(out.status.success(), "gzip -dc {}", path.display());
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}
