//! Shared set-up of the fuzz targets: the core engine over an in-memory store (as
//! `core-wasm/tests/*.rs` drive it), DuckLake's catalog as DuckDB 1.5.5 creates it, and a
//! [`Backend`] that runs the engine behind the real PostgreSQL front end.
//!
//! Set-up failures panic on purpose: a fuzz target cannot run without its fixture.

use std::future::Future;
use std::sync::{Mutex, MutexGuard, OnceLock};

use rocklake::server::Backend;
use rocklake_core::api::{
    Describe, OpenedSession, Output, PgError, Reply, SessionId, SessionOptions,
};
use rocklake_core::memkv::MemKv;
use rocklake_core::Engine;

/// One engine over one in-memory store, acting as a durable host: every commit batch is applied
/// to the store and reported back as written.
pub struct Harness {
    pub kv: MemKv,
    pub engine: Engine,
    now: i64,
}

impl Harness {
    /// Opens an engine over (a copy of) `kv`.
    pub fn open(kv: MemKv) -> Harness {
        let engine = Engine::open(&kv).expect("engine opens over the fixture store");
        Harness {
            kv,
            engine,
            now: 1_000_000,
        }
    }

    pub fn session(&mut self) -> SessionId {
        self.engine.open_session("rocklake", "lake")
    }

    /// Completes a suspended request: applies each commit batch and continues the request.
    fn finish(&mut self, sid: SessionId, mut r: Reply) -> Reply {
        let mut outputs = std::mem::take(&mut r.outputs);
        // A `pg_sleep` waits until its end, which the clock jumps to; one session never
        // waits for a lock of its own, so a wait without an end is left suspended.
        let mut wakes = 0;
        loop {
            if let Some(batch) = r.commit.take() {
                self.kv.apply(&batch);
                r = self.engine.commit_finished(&self.kv, sid, Ok(()));
            } else if let Some(until) = r.wait.and_then(|w| w.until).filter(|_| wakes < 8) {
                wakes += 1;
                self.now = until.max(self.now + 1);
                r = self.engine.wake(&self.kv, sid, self.now);
            } else {
                break;
            }
            outputs.append(&mut r.outputs);
        }
        r.outputs = outputs;
        r
    }

    /// Runs a query string to its end (commits included).
    pub fn query(&mut self, sid: SessionId, sql: &str) -> Reply {
        self.now += 1;
        let r = self.engine.query(&self.kv, sid, sql, self.now);
        self.finish(sid, r)
    }

    /// Feeds a COPY FROM STDIN stream and ends it (or fails it when the data is refused).
    pub fn copy_in(&mut self, sid: SessionId, data: &[u8]) -> Reply {
        self.now += 1;
        let r = match self.engine.copy_in_data(sid, data) {
            Ok(()) => self.engine.copy_in_done(&self.kv, sid, self.now),
            Err(e) => self.engine.copy_in_fail(sid, &e.message),
        };
        self.finish(sid, r)
    }

    /// Runs fixture SQL that must succeed.
    pub fn must(&mut self, sid: SessionId, sql: &str) -> Vec<Output> {
        let r = self.query(sid, sql);
        if let Some(e) = r.error {
            panic!("fixture statement failed: {sql}: {e:?}");
        }
        r.outputs
    }
}

/// Whether a reply left the session inside COPY FROM STDIN (the last output is `CopyIn`).
pub fn awaits_copy_data(r: &Reply) -> bool {
    r.error.is_none() && matches!(r.outputs.last(), Some(Output::CopyIn { .. }))
}

/// A store holding DuckLake's catalog exactly as DuckDB 1.5.5's first ATTACH creates it (the
/// core's own initialisation script), plus one snapshot's worth of rows. Built once per process.
pub fn ducklake_catalog() -> &'static MemKv {
    static KV: OnceLock<MemKv> = OnceLock::new();
    KV.get_or_init(|| {
        let mut h = Harness::open(MemKv::new());
        let s = h.session();
        h.must(s, "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        for stmt in rocklake_core::writer::init_statements(
            "/tmp/lake/",
            "DuckDB fuzz",
            "7b3c1f0e-8a61-4c7f-9a52-0d0b6a1e2f33",
        ) {
            h.must(s, &stmt);
        }
        h.must(s, "COMMIT");
        h.engine.close_session(s);
        h.kv
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The core engine behind the real PostgreSQL front end ([`rocklake::server::serve_backend`]),
/// synchronous like the production service's core calls. `reset` puts a fresh engine over the
/// DuckLake fixture in place, so every fuzz input starts from the same state.
pub struct EngineBackend {
    inner: Mutex<Harness>,
}

impl Default for EngineBackend {
    fn default() -> Self {
        EngineBackend {
            inner: Mutex::new(Harness::open(ducklake_catalog().clone())),
        }
    }
}

impl EngineBackend {
    pub fn reset(&self) {
        *lock(&self.inner) = Harness::open(ducklake_catalog().clone());
    }

    pub fn session_count(&self) -> usize {
        lock(&self.inner).engine.session_count()
    }
}

impl Backend for EngineBackend {
    fn open_session(&self, options: &SessionOptions) -> Result<OpenedSession, PgError> {
        lock(&self.inner).engine.open_session_with(options)
    }

    fn query(&self, sid: SessionId, sql: &str) -> impl Future<Output = Reply> + Send {
        std::future::ready(lock(&self.inner).query(sid, sql))
    }

    fn execute(&self, sid: SessionId, sql: &str) -> impl Future<Output = Reply> + Send {
        let mut guard = lock(&self.inner);
        let h = &mut *guard;
        h.now += 1;
        let r = h.engine.execute(&h.kv, sid, sql, h.now);
        std::future::ready(h.finish(sid, r))
    }

    fn sync(&self, sid: SessionId, abort: bool) -> impl Future<Output = Option<Reply>> + Send {
        let mut guard = lock(&self.inner);
        let h = &mut *guard;
        h.now += 1;
        let r = h.engine.sync(&h.kv, sid, h.now, abort);
        std::future::ready(Some(h.finish(sid, r)))
    }

    fn describe(
        &self,
        sid: SessionId,
        sql: &str,
    ) -> impl Future<Output = Result<Describe, PgError>> + Send {
        let mut h = lock(&self.inner);
        let h = &mut *h;
        std::future::ready(h.engine.describe(&h.kv, sid, sql))
    }

    fn copy_in_data(
        &self,
        sid: SessionId,
        data: &[u8],
    ) -> impl Future<Output = Result<(), PgError>> + Send {
        std::future::ready(lock(&self.inner).engine.copy_in_data(sid, data))
    }

    fn copy_in_done(&self, sid: SessionId) -> impl Future<Output = Reply> + Send {
        let mut guard = lock(&self.inner);
        let h = &mut *guard;
        h.now += 1;
        let now = h.now;
        let r = h.engine.copy_in_done(&h.kv, sid, now);
        std::future::ready(h.finish(sid, r))
    }

    fn copy_in_fail(&self, sid: SessionId, message: &str) -> impl Future<Output = Reply> + Send {
        std::future::ready(lock(&self.inner).engine.copy_in_fail(sid, message))
    }

    fn close_session(&self, sid: SessionId) -> impl Future<Output = ()> + Send {
        lock(&self.inner).engine.close_session(sid);
        std::future::ready(())
    }

    fn interrupt(&self, _sid: SessionId, _reason: PgError) {
        // Every call completes synchronously; there is never a running request to interrupt.
    }

    fn set_deadline(&self, _sid: SessionId, _deadline: Option<(std::time::Instant, PgError)>) {
        // No statement timeout either, for the same reason.
    }
}
