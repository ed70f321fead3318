//! Record and replay: a session recorded through the service replays byte-identically on the
//! native core and on the component, and a deliberately changed core — one
//! flipped result — is reported at exactly that call.

use std::path::{Path, PathBuf};

use rocklake::service::{CatalogService, Core, CoreKind, ServiceConfig};
use rocklake::trace::{core_factory, replay};
use rocklake_core::api::{
    CommitFailure, Describe, KvRead, OpenedSession, Output, PgError, Reply, SessionId,
    SessionOptions,
};
use rocklake_core::Engine;

const SESSION: &[&str] = &[
    "CREATE TABLE t (id BIGINT PRIMARY KEY, name VARCHAR)",
    "INSERT INTO t VALUES (1, 'a'), (2, 'b')",
    "BEGIN; UPDATE t SET name = 'bb' WHERE id = 2; COMMIT",
    "SELECT * FROM t ORDER BY id",
    "INSERT INTO t VALUES (1, 'dup')",
    "SELECT count(*), now() IS NOT NULL FROM t",
    // Host entropy: recorded with the call, so the replay's values are the recording's.
    "SELECT random(), gen_random_uuid(), random() FROM t",
    "SELECT setseed(0.5), random()",
    "DELETE FROM t WHERE id = 1",
    "SELECT name FROM t",
];

async fn record(dir: &Path) -> PathBuf {
    let mut cfg = ServiceConfig::new(dir.join("catalog").display().to_string());
    cfg.record = Some(dir.join("traces"));
    let svc = CatalogService::open(&cfg).await.expect("open");
    let sid = svc.open_session("u", "lake");
    for sql in SESSION {
        let r = svc.query(sid, sql).await;
        if sql.contains("'dup'") {
            assert_eq!(r.error.map(|e| e.code).as_deref(), Some("23505"));
        } else {
            assert!(r.error.is_none(), "{sql}: {:?}", r.error);
        }
    }
    let d = svc.describe(sid, "SELECT id, name FROM t").await;
    assert!(d.is_ok(), "{d:?}");
    svc.close_session(sid).await;
    svc.shutdown().await.expect("shutdown");
    let traces: Vec<PathBuf> = std::fs::read_dir(dir.join("traces"))
        .expect("trace dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    assert_eq!(traces.len(), 1, "{traces:?}");
    traces[0].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn recorded_session_replays_exactly_on_the_native_core() {
    let dir = tempfile::tempdir().expect("tmp");
    let trace = record(dir.path()).await;
    let report = replay(&trace, core_factory(CoreKind::Native)).expect("replay");
    assert_eq!(report.divergence, None, "{report:?}");
    assert_eq!(report.queries, SESSION.len());
    assert!(!report.truncated);
    // open + open_session + queries + commit outcomes + describe + close
    assert!(report.events > SESSION.len() + 3, "{report:?}");
    // Replay needs nothing but the trace: the catalog may be gone.
    std::fs::remove_dir_all(dir.path().join("catalog")).expect("rm");
    let again = replay(&trace, core_factory(CoreKind::Native)).expect("replay");
    assert_eq!(again, report);
}

#[tokio::test(flavor = "multi_thread")]
async fn recorded_session_replays_exactly_on_the_component() {
    // `cargo xtask ci` builds the component before the tests; without it there is nothing to
    // compare, and the test says so instead of passing.
    let component = rocklake::component::default_component_path()
        .filter(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "the core component is missing; build it with {}",
                rocklake::component::BUILD_COMMAND
            )
        });
    let dir = tempfile::tempdir().expect("tmp");
    let trace = record(dir.path()).await;
    let report = replay(&trace, core_factory(CoreKind::Wasm(component))).expect("replay");
    assert_eq!(report.divergence, None, "{report:?}");
    assert_eq!(report.queries, SESSION.len());
}

/// The native core with one deliberately changed result: the `flip_at`-th query's first
/// output is altered.
struct Flipped {
    inner: Engine,
    queries: usize,
    flip_at: usize,
}

impl Core for Flipped {
    fn latest(&self) -> u64 {
        Core::latest(&self.inner)
    }
    fn open_session_with(&mut self, options: &SessionOptions) -> Result<OpenedSession, PgError> {
        Core::open_session_with(&mut self.inner, options)
    }
    fn query(&mut self, kv: &dyn KvRead, sid: SessionId, sql: &str, now: i64) -> Reply {
        let mut r = Core::query(&mut self.inner, kv, sid, sql, now);
        self.queries += 1;
        if self.queries == self.flip_at {
            match r.outputs.first_mut() {
                Some(Output::Rows { rows, .. }) => {
                    let mut changed = rows.to_vecs();
                    if let Some(Some(cell)) = changed.first_mut().and_then(|row| row.first_mut()) {
                        cell.push(b'!');
                    }
                    *rows = changed.into_iter().collect();
                }
                Some(Output::Command { tag }) => tag.push('!'),
                _ => {}
            }
        }
        r
    }
    fn execute(&mut self, kv: &dyn KvRead, sid: SessionId, sql: &str, now: i64) -> Reply {
        Core::execute(&mut self.inner, kv, sid, sql, now)
    }
    fn sync(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64, abort: bool) -> Reply {
        Core::sync(&mut self.inner, kv, sid, now, abort)
    }
    fn describe(
        &mut self,
        kv: &dyn KvRead,
        sid: SessionId,
        sql: &str,
    ) -> Result<Describe, PgError> {
        Core::describe(&mut self.inner, kv, sid, sql)
    }
    fn copy_in_data(&mut self, sid: SessionId, data: &[u8]) -> Result<(), PgError> {
        Core::copy_in_data(&mut self.inner, sid, data)
    }
    fn copy_in_done(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64) -> Reply {
        Core::copy_in_done(&mut self.inner, kv, sid, now)
    }
    fn copy_in_fail(&mut self, sid: SessionId, message: &str) -> Reply {
        Core::copy_in_fail(&mut self.inner, sid, message)
    }
    fn commit_finished(
        &mut self,
        kv: &dyn KvRead,
        sid: SessionId,
        outcome: Result<(), CommitFailure>,
    ) -> Reply {
        Core::commit_finished(&mut self.inner, kv, sid, outcome)
    }
    fn wake(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64) -> Reply {
        Core::wake(&mut self.inner, kv, sid, now)
    }
    fn close_session(&mut self, sid: SessionId) {
        Core::close_session(&mut self.inner, sid)
    }
    fn set_read_only(&mut self, on: bool) {
        Core::set_read_only(&mut self.inner, on)
    }
    fn set_statement_memory_limit(&mut self, bytes: u64) {
        Core::set_statement_memory_limit(&mut self.inner, bytes)
    }
    fn refresh(&mut self, kv: &dyn KvRead) -> Result<(), PgError> {
        Core::refresh(&mut self.inner, kv)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_core_is_reported_at_the_first_divergence() {
    let dir = tempfile::tempdir().expect("tmp");
    let trace = record(dir.path()).await;
    // The 4th query is `SELECT * FROM t ORDER BY id`.
    let report = replay(
        &trace,
        Box::new(|kv: &dyn KvRead| -> anyhow::Result<Box<dyn Core>> {
            Ok(Box::new(Flipped {
                inner: Engine::open(kv).map_err(|e| anyhow::anyhow!("{e}"))?,
                queries: 0,
                flip_at: 4,
            }))
        }),
    )
    .expect("replay");
    let d = report.divergence.expect("divergence reported");
    assert!(d.call.contains("SELECT * FROM t ORDER BY id"), "{d:?}");
    assert!(d.detail.contains("result differs"), "{d:?}");
    assert!(
        d.detail.contains("1!"),
        "the replayed result is shown: {d:?}"
    );
    // A damaged trace is a divergence too (here: one byte of a recorded result).
    let mut bytes = std::fs::read(&trace).expect("read");
    let needle = b"bb";
    let at = bytes
        .windows(needle.len())
        .rposition(|w| w == needle)
        .expect("recorded 'bb'");
    bytes[at] = b'x';
    let damaged = dir.path().join("damaged.rltrace");
    std::fs::write(&damaged, bytes).expect("write");
    let report = replay(&damaged, core_factory(CoreKind::Native)).expect("replay");
    assert!(report.divergence.is_some(), "{report:?}");
}
