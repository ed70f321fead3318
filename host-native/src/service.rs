//! The catalog service: runs the core engine for every session and drives its commits through
//! the store, in commit-sequence order, each durable before the client hears about it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use rocklake_core::api::{
    CommitBatch, CommitFailure, Describe, KvRead, OpenedSession, PgError, Reply, SessionId,
    SessionOptions,
};
use rocklake_core::Engine;
use tokio::sync::Notify;

use crate::metrics::{statement_class, Metrics};
use crate::store::{
    GroupCommit, Replica, Store, StoreError, StoreOptions, StoreReader, UploadSlot,
};

/// Where the catalog's keys come from: this server is the writer, or a read replica.
enum Backing {
    Writer(Box<Store>),
    Replica(Box<Replica>),
}

impl Backing {
    fn reader(&self) -> StoreReader {
        match self {
            Backing::Writer(s) => s.reader(),
            Backing::Replica(r) => r.reader(),
        }
    }

    async fn commit_group(&self, batches: &[CommitBatch]) -> Result<(), StoreError> {
        match self {
            Backing::Writer(s) => s.commit_group(batches).await,
            // The engine refuses writes on a replica before any batch exists.
            Backing::Replica(_) => Err(StoreError::Invalid {
                message: "a read replica does not commit".into(),
            }),
        }
    }

    async fn upload_slot(&self) -> UploadSlot {
        match self {
            Backing::Writer(s) => s.upload_slot().await,
            Backing::Replica(_) => UploadSlot::default(),
        }
    }

    fn epoch(&self) -> u64 {
        match self {
            Backing::Writer(s) => s.epoch(),
            Backing::Replica(_) => 0,
        }
    }

    async fn close(&self) -> Result<(), StoreError> {
        match self {
            Backing::Writer(s) => s.close().await,
            Backing::Replica(r) => r.close().await,
        }
    }
}

/// How to open a catalog.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Catalog location: a path or a file://, s3://, gs://, az:// URL.
    pub catalog: String,
    /// Query strings slower than this are logged (target `rocklake::slow`) and counted.
    pub slow_statement: Option<std::time::Duration>,
    /// Serve as a read replica, checking the writer's progress at this interval; `None`:
    /// open as the writer.
    pub replica_poll: Option<std::time::Duration>,
    /// Object-store faults to inject (tests and benchmarks only).
    pub faults: Option<crate::store::Faults>,
    /// Create an empty catalog when none exists (the server does; admin commands do not).
    pub create_if_missing: bool,
    /// Record every call into the core to a trace in this directory.
    pub record: Option<std::path::PathBuf>,
    /// A commit whose durable write has not finished after this long fails with 58030
    /// ("outcome unknown"); see `StoreOptions::commit_timeout`.
    pub commit_timeout: std::time::Duration,
    /// See `StoreOptions::commit_journal`.
    pub commit_journal: bool,
    /// See `StoreOptions::journal_uploads`.
    pub journal_uploads: usize,
    /// Heap one statement may add before it fails with 53200 (0: no limit but the
    /// component's ceiling); see `rocklake_core::mem`.
    pub statement_memory_limit: u64,
}

impl ServiceConfig {
    pub fn new(catalog: impl Into<String>) -> ServiceConfig {
        ServiceConfig {
            catalog: catalog.into(),
            slow_statement: None,
            replica_poll: None,
            faults: None,
            create_if_missing: true,
            record: None,
            commit_timeout: crate::store::DEFAULT_COMMIT_TIMEOUT,
            commit_journal: true,
            journal_uploads: crate::store::DEFAULT_JOURNAL_UPLOADS,
            statement_memory_limit: rocklake_core::mem::DEFAULT_STATEMENT_MEMORY_LIMIT,
        }
    }
}

/// The wall clock, read only here in the host (the core never reads a clock).
pub trait Clock: Send + Sync {
    /// Microseconds since 2000-01-01 UTC (PostgreSQL's epoch).
    fn now_pg_micros(&self) -> i64;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now_pg_micros(&self) -> i64 {
        #[allow(clippy::disallowed_methods)] // the host is where wall-clock time enters
        let now = std::time::SystemTime::now();
        let unix = now
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        rocklake_core::types::unix_micros_to_pg(unix)
    }
}

struct Inner {
    engine: Mutex<Box<dyn Core>>,
    store: Backing,
    clock: Box<dyn Clock>,
    /// Highest commit sequence whose batch has been applied (or has failed) and reported.
    done: AtomicU64,
    turn: Notify,
    /// Group commit: batches waiting for the next durable write, in sequence order.
    queue: Mutex<Vec<Queued>>,
    /// Highest commit sequence put in `queue`.
    queued: AtomicU64,
    queued_turn: Notify,
    /// Held by the session that currently writes a group (the leader).
    leader: tokio::sync::Mutex<()>,
    /// Cancel requests and statement timeouts per session (see [`CatalogService::interrupt`]).
    interrupts: Mutex<std::collections::HashMap<SessionId, Arc<Interrupt>>>,
    metrics: Arc<Metrics>,
    slow_statement: Option<std::time::Duration>,
    /// Recovering from a failed object store without a restart (see [`Inner::start_group`]).
    recovery: Mutex<Recovery>,
    /// Engine calls running directly on a runtime worker, and their watcher.
    direct: Arc<DirectCalls>,
    /// Whether the watcher of `direct` runs (started by the first direct call).
    watcher: std::sync::OnceLock<bool>,
    /// Counts the replies that released advisory locks (and session closes); a request
    /// whose statement waits runs it again once this moves past what it saw with its wait.
    releases: AtomicU64,
    released: Notify,
}

/// Stack of every thread that runs the core (the runtime's workers and blocking threads):
/// binding and evaluating a statement recurse as deep as it nests, up to the core's limit
/// (`rocklake_core::depth::MAX_EXPR_DEPTH`). A release build needs a few MiB for that; an
/// unoptimised build's frames are tens of times larger (measured: more than 64 MiB). Only the
/// pages a thread touches are resident.
pub const ENGINE_THREAD_STACK: usize = if cfg!(debug_assertions) {
    1 << 30
} else {
    64 << 20
};
/// How much of that stack the WebAssembly core may use (the rest is the host's frames).
pub const ENGINE_WASM_STACK: usize = 32 << 20;

/// How long a commit whose outcome is unknown keeps reopening the store to find out whether it
/// landed, before it is reported as unknown (58030).
const RESOLVE_WITHIN: Duration = Duration::from_secs(3);
/// Pause between those attempts.
const RESOLVE_RETRY: Duration = Duration::from_millis(250);
/// While the store stays down, it is reopened at most this often; commits in between fail at
/// once (58030, nothing written, retry).
const REOPEN_INTERVAL: Duration = Duration::from_millis(500);

/// State of the recovery from a failed object store.
#[derive(Debug, Default)]
struct Recovery {
    /// Highest commit sequence the store confirmed durable.
    durable: u64,
    /// The store holds another commit sequence than the one confirmed (a commit reported as
    /// failed because its outcome was unknown did land): the engine must reload the catalog
    /// from the store before it plans another commit, and until then commits fail (retry).
    refresh_pending: bool,
    /// When the last attempt to reopen the store failed.
    failed_at: Option<Instant>,
}

/// The commit sequence the store holds (the `commit_seq` meta key every batch writes).
fn stored_commit_seq(reader: &StoreReader) -> u64 {
    let key = rocklake_core::keys::meta_key(rocklake_core::engine::META_COMMIT_SEQ);
    reader
        .get(&key)
        .ok()
        .flatten()
        .and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok())
        .map_or(0, u64::from_be_bytes)
}

/// A failure that wrote nothing and that the client may retry (58030 with a retry hint).
fn retry_later(message: String) -> CommitFailure {
    CommitFailure {
        fenced: false,
        transient: true,
        message,
    }
}

/// Which build of the core runs the catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreKind {
    /// `rocklake-core` linked into this binary.
    Native,
    /// The core component at this path, run with wasmtime (see [`crate::component`]).
    Wasm(std::path::PathBuf),
}

/// Shared by all connections (`Arc<CatalogService>`).
pub struct CatalogService {
    inner: Arc<Inner>,
}

fn store_failure(e: StoreError) -> CommitFailure {
    match e {
        StoreError::Fenced { .. } => CommitFailure {
            fenced: true,
            transient: false,
            message: e.to_string(),
        },
        StoreError::Unavailable { message, transient } => CommitFailure {
            fenced: false,
            transient,
            message,
        },
        other => CommitFailure {
            fenced: false,
            transient: false,
            message: other.to_string(),
        },
    }
}

/// The core as the host drives it: the native build of `rocklake-core`, or the same crate
/// compiled to a WebAssembly component. Every call is synchronous and deterministic given its
/// arguments and the answers of `kv`.
pub trait Core: Send {
    fn latest(&self) -> u64;
    fn open_session_with(&mut self, options: &SessionOptions) -> Result<OpenedSession, PgError>;
    /// A read-write session with the default settings (tools, tests). Without settings there
    /// is nothing to refuse; a core that fails anyway (a trapped component) is logged, and the
    /// id returned is one no engine hands out, so every later call fails with "session does
    /// not exist".
    fn open_session(&mut self, user: &str, database: &str) -> SessionId {
        match self.open_session_with(&SessionOptions::plain(user, database)) {
            Ok(s) => s.id,
            Err(e) => {
                tracing::error!(code = %e.code, "opening a session failed: {}", e.message);
                SessionId(u64::MAX)
            }
        }
    }
    fn query(&mut self, kv: &dyn KvRead, sid: SessionId, sql: &str, now: i64) -> Reply;
    /// An extended-protocol Execute: its implicit transaction stays open until `sync`.
    fn execute(&mut self, kv: &dyn KvRead, sid: SessionId, sql: &str, now: i64) -> Reply;
    /// The extended protocol's Sync: commits the implicit transaction of the Executes before.
    fn sync(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64, abort: bool) -> Reply;
    fn describe(&mut self, kv: &dyn KvRead, sid: SessionId, sql: &str)
        -> Result<Describe, PgError>;
    fn copy_in_data(&mut self, sid: SessionId, data: &[u8]) -> Result<(), PgError>;
    fn copy_in_done(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64) -> Reply;
    fn copy_in_fail(&mut self, sid: SessionId, message: &str) -> Reply;
    fn commit_finished(
        &mut self,
        kv: &dyn KvRead,
        sid: SessionId,
        outcome: Result<(), CommitFailure>,
    ) -> Reply;
    /// Runs the waiting statement of a suspended request again (see [`Reply::wait`]).
    fn wake(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64) -> Reply;
    fn close_session(&mut self, sid: SessionId);
    /// Read-replica mode (writes fail with 25006).
    fn set_read_only(&mut self, on: bool);
    /// Heap one statement may add before it fails with 53200 (0: no limit).
    fn set_statement_memory_limit(&mut self, bytes: u64);
    /// Reload the committed state from `kv` (a replica's copy advanced).
    fn refresh(&mut self, kv: &dyn KvRead) -> Result<(), PgError>;
}

/// The native build.
impl Core for Engine {
    fn latest(&self) -> u64 {
        Engine::latest(self).0
    }
    fn open_session_with(&mut self, options: &SessionOptions) -> Result<OpenedSession, PgError> {
        Engine::open_session_with(self, options)
    }
    fn open_session(&mut self, user: &str, database: &str) -> SessionId {
        Engine::open_session(self, user, database)
    }
    fn query(&mut self, kv: &dyn KvRead, sid: SessionId, sql: &str, now: i64) -> Reply {
        Engine::query(self, kv, sid, sql, now)
    }
    fn execute(&mut self, kv: &dyn KvRead, sid: SessionId, sql: &str, now: i64) -> Reply {
        Engine::execute(self, kv, sid, sql, now)
    }
    fn sync(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64, abort: bool) -> Reply {
        Engine::sync(self, kv, sid, now, abort)
    }
    fn describe(
        &mut self,
        kv: &dyn KvRead,
        sid: SessionId,
        sql: &str,
    ) -> Result<Describe, PgError> {
        Engine::describe(self, kv, sid, sql)
    }
    fn copy_in_data(&mut self, sid: SessionId, data: &[u8]) -> Result<(), PgError> {
        Engine::copy_in_data(self, sid, data)
    }
    fn copy_in_done(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64) -> Reply {
        Engine::copy_in_done(self, kv, sid, now)
    }
    fn copy_in_fail(&mut self, sid: SessionId, message: &str) -> Reply {
        Engine::copy_in_fail(self, sid, message)
    }
    fn commit_finished(
        &mut self,
        kv: &dyn KvRead,
        sid: SessionId,
        outcome: Result<(), CommitFailure>,
    ) -> Reply {
        Engine::commit_finished(self, kv, sid, outcome)
    }
    fn wake(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64) -> Reply {
        Engine::wake(self, kv, sid, now)
    }
    fn close_session(&mut self, sid: SessionId) {
        Engine::close_session(self, sid)
    }
    fn set_read_only(&mut self, on: bool) {
        Engine::set_read_only(self, on)
    }
    fn set_statement_memory_limit(&mut self, bytes: u64) {
        Engine::set_statement_memory_limit(self, bytes)
    }
    fn refresh(&mut self, kv: &dyn KvRead) -> Result<(), PgError> {
        Engine::refresh(self, kv)
    }
}

impl Inner {
    /// Statement metrics and the slow-statement log.
    fn observe(&self, sql: &str, elapsed: std::time::Duration, failed: bool) {
        let class = statement_class(sql);
        self.metrics.statement(class, elapsed, failed);
        if self.slow_statement.is_some_and(|t| elapsed >= t) {
            self.metrics.slow_statements.inc();
            let shown: String = sql.chars().take(500).collect();
            tracing::warn!(
                target: "rocklake::slow",
                ms = elapsed.as_millis() as u64,
                // Sub-millisecond statements are the common case when the threshold is low.
                us = elapsed.as_micros() as u64,
                class,
                failed,
                sql = %shown,
                "slow statement"
            );
        }
    }

    /// Pins (or unpins) the store checkpoints backing the RockLake checkpoints a durable batch
    /// created (or dropped). The commit stands either way; a failure is logged and repaired
    /// at the next open ([`Store::reconcile_checkpoints`]).
    async fn back_checkpoints(&self, batch: &CommitBatch) {
        let Backing::Writer(store) = &self.store else {
            return;
        };
        for (id, created) in rocklake_core::lifecycle::checkpoint_changes(batch) {
            let r = if created {
                store.pin_checkpoint(id).await
            } else {
                store.unpin_checkpoint(id).await
            };
            match r {
                Ok(()) => tracing::info!(checkpoint = id, pinned = created, "store checkpoint"),
                Err(e) => {
                    tracing::warn!(checkpoint = id, error = %e, "store checkpoint not updated; repaired at the next open")
                }
            }
        }
    }

    /// Runs one request of the engine from an async task. Statements are CPU-bound and may run
    /// long, and an async worker they occupy would stop driving the sockets and timers of
    /// other sessions ([`EngineCalls`]). A `SELECT 1` took 256 µs through a spawned task and
    /// `spawn_blocking`, 180 µs in place. A call in place cannot be cancelled half-way (no
    /// await point); on the blocking pool the caller awaits it inside a task of its own
    /// ([`CatalogService::query`]).
    async fn on_engine<F>(self: &Arc<Self>, interrupt: &Arc<Interrupt>, call: F) -> Reply
    where
        F: FnOnce(&mut dyn Core, &dyn KvRead, i64) -> Reply + Send + 'static,
    {
        match EngineCalls::now() {
            EngineCalls::InPlace => self.engine_call_in_place(interrupt, call),
            EngineCalls::BlockingPool => {
                let inner = self.clone();
                let interrupt = interrupt.clone();
                tokio::task::spawn_blocking(move || {
                    let mut eng = inner.engine();
                    inner.engine_call(&mut eng, &interrupt, call)
                })
                .await
                .unwrap_or_else(|e| internal_reply(&format!("engine call failed: {e}")))
            }
        }
    }

    /// [`EngineCalls::InPlace`]: runs `call` on this thread. When the engine is free and a
    /// long call can be watched ([`Inner::can_watch`]), directly: most calls are short, and
    /// handing this worker's core to another thread first (`block_in_place`) cost a thread
    /// wake-up per statement, about 1–2 of the 12–14 ms of statement time in DuckDB's fresh
    /// ATTACH. Otherwise (the engine is busy, or no other worker could take over) inside
    /// `block_in_place`, which hands this worker's other tasks and the I/O driver to another
    /// thread first.
    fn engine_call_in_place<F>(&self, interrupt: &Interrupt, call: F) -> Reply
    where
        F: FnOnce(&mut dyn Core, &dyn KvRead, i64) -> Reply,
    {
        if self.can_watch() {
            if let Some(eng) = self.try_engine() {
                let mut eng = EngineGuard {
                    _direct: Some(self.direct.begin()),
                    eng,
                };
                return self.engine_call(&mut eng, interrupt, call);
            }
        }
        tokio::task::block_in_place(|| {
            // Handed off: nothing to watch.
            let mut eng = EngineGuard {
                _direct: None,
                eng: self.lock_engine(),
            };
            self.engine_call(&mut eng, interrupt, call)
        })
    }

    /// Whether a call running directly on this thread can be watched: this is a worker of a
    /// multi-threaded runtime with another worker to take over, and the watcher runs (started
    /// with the first call).
    fn can_watch(&self) -> bool {
        another_worker()
            && *self.watcher.get_or_init(|| {
                let calls = Arc::downgrade(&self.direct);
                let runtime = tokio::runtime::Handle::current();
                let started = std::thread::Builder::new()
                    .name("rocklake-watch".into())
                    .spawn(move || watch_direct_calls(&calls, &runtime));
                if let Err(e) = &started {
                    tracing::warn!(error = %e, "no watcher for long engine calls: every call hands its worker off first");
                }
                started.is_ok()
            })
    }

    fn engine_call<F>(&self, eng: &mut EngineGuard<'_>, interrupt: &Interrupt, call: F) -> Reply
    where
        F: FnOnce(&mut dyn Core, &dyn KvRead, i64) -> Reply,
    {
        let now = self.clock.now_pg_micros();
        let reader = self.store.reader();
        let kv = RequestKv {
            inner: &reader,
            interrupt,
        };
        self.refresh_if_pending(eng);
        let reply = call(&mut ***eng, &kv, now);
        self.note_locks(&reply, interrupt);
        reply
    }

    /// Called with the engine held, after each call that returned `reply`: wakes the sessions
    /// that wait when it released locks, and notes what a reply that waits has seen of the
    /// releases (a release after it, by a call that takes the engine next, is then noticed).
    fn note_locks(&self, reply: &Reply, interrupt: &Interrupt) {
        if reply.locks_released {
            self.note_release();
        }
        if reply.wait.is_some() {
            interrupt
                .releases_seen
                .store(self.releases.load(Ordering::SeqCst), Ordering::SeqCst);
        }
    }

    fn note_release(&self) {
        self.releases.fetch_add(1, Ordering::SeqCst);
        self.released.notify_waiters();
    }

    /// Waits until the suspended request of a session should run its statement again: a
    /// release since its wait began, its `until` (engine clock), its statement timeout, or
    /// an interrupt.
    async fn await_wake(&self, until: Option<i64>, interrupt: &Interrupt) {
        let released = self.released.notified();
        let interrupted = interrupt.notify.notified();
        tokio::pin!(released, interrupted);
        released.as_mut().enable();
        interrupted.as_mut().enable();
        if self.releases.load(Ordering::SeqCst) != interrupt.releases_seen.load(Ordering::SeqCst)
            || interrupt.reason().is_some()
        {
            return;
        }
        let now = Instant::now();
        let mut deadline = until.map(|at| {
            let micros = at.saturating_sub(self.clock.now_pg_micros()).max(0);
            now + Duration::from_micros(micros as u64)
        });
        if let Some((at, _)) = &*lock(&interrupt.deadline) {
            deadline = Some(deadline.map_or(*at, |d| d.min(*at)));
        }
        let sleep = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = released => {}
            _ = interrupted => {}
            _ = sleep => {}
        }
    }

    /// The engine, waiting for it if another request holds it. On a runtime worker the wait
    /// happens inside `block_in_place`: a worker blocked here while another runs a long call
    /// directly would leave no worker to serve the sockets and timers. Taken at once, it is
    /// used on this thread, watched like [`Inner::engine_call_in_place`]'s direct calls (the
    /// rest of a query string after its first COMMIT runs in `commit_finished`).
    fn engine(&self) -> EngineGuard<'_> {
        if let Some(eng) = self.try_engine() {
            return EngineGuard {
                _direct: self.can_watch().then(|| self.direct.begin()),
                eng,
            };
        }
        let eng = match EngineCalls::now() {
            EngineCalls::InPlace => tokio::task::block_in_place(|| self.lock_engine()),
            EngineCalls::BlockingPool => self.lock_engine(),
        };
        EngineGuard { _direct: None, eng }
    }

    /// The engine, waiting on this thread for as long as another request holds it.
    fn lock_engine(&self) -> MutexGuard<'_, Box<dyn Core>> {
        // As in `try_engine`: a poisoned lock still guards a consistent engine.
        self.engine.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The engine if no other request holds it.
    fn try_engine(&self) -> Option<MutexGuard<'_, Box<dyn Core>>> {
        match self.engine.try_lock() {
            Ok(eng) => Some(eng),
            // A panic while holding the lock is a bug; the engine's state is still consistent
            // because every mutation completes before it returns, so keep serving.
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Applies `batch` in sequence order and continues the suspended request until it needs
    /// nothing more from the store.
    async fn drive(&self, sid: SessionId, mut reply: Reply, interrupt: &Interrupt) -> Reply {
        let mut outputs = std::mem::take(&mut reply.outputs);
        loop {
            if let Some(wait) = reply.wait.take() {
                self.await_wake(wait.until, interrupt).await;
                reply = self.wake(sid, interrupt);
                outputs.append(&mut reply.outputs);
                continue;
            }
            let Some(batch) = reply.commit.take() else {
                break;
            };
            let (outcome, aborted) = self.apply_in_order(&batch, interrupt).await;
            if outcome.is_ok() {
                self.back_checkpoints(&batch).await;
            }
            let next = {
                let mut eng = self.engine();
                let reader = self.store.reader();
                let kv = RequestKv {
                    inner: &reader,
                    interrupt,
                };
                let mut r = eng.commit_finished(&kv, sid, outcome);
                self.note_locks(&r, interrupt);
                self.done.store(batch.seq.0, Ordering::SeqCst);
                self.refresh_if_pending(&mut eng);
                if let Some(e) = aborted {
                    // The engine rolled the transaction back; tell the client why.
                    r.error = Some(e);
                }
                r
            };
            self.turn.notify_waiters();
            reply = next;
            outputs.append(&mut reply.outputs);
        }
        reply.outputs = outputs;
        reply
    }

    /// Runs the waiting statement of the session's suspended request again.
    fn wake(&self, sid: SessionId, interrupt: &Interrupt) -> Reply {
        let mut eng = self.engine();
        self.engine_call(&mut eng, interrupt, |eng, kv, now| eng.wake(kv, sid, now))
    }

    /// Starts making one group durable (the leader calls this, holding the leader lock; the
    /// next leader may start the next group as soon as this returns, and with the object-store
    /// journal their uploads overlap). With [`Inner::finish_group`], recovers from a failed
    /// object store without a restart:
    ///
    /// - A group whose outcome the store cannot confirm (`Indeterminate`: SlateDB stops after
    ///   a WAL upload fails beyond its retries) leaves the store broken. The leader reopens it
    ///   for up to [`RESOLVE_WITHIN`] and reads from what is durable whether the group landed:
    ///   then the clients hear COMMIT, or a retryable error when nothing of it is stored. If
    ///   the store stays down, the outcome is reported as unknown.
    /// - While the store is broken, each group first tries to reopen it (at most once per
    ///   [`REOPEN_INTERVAL`]); meanwhile commits fail at once with a retryable error and
    ///   nothing is written. Reads are served from memory throughout.
    /// - When a reopened store holds a commit that was reported as failed, the engine reloads
    ///   the catalog from the store ([`Inner::refresh_if_pending`]) before it plans another
    ///   commit; commits planned before that fail with a retryable error.
    async fn start_group(
        &self,
        batches: &Arc<[CommitBatch]>,
        slot: UploadSlot,
    ) -> Result<GroupCommit, CommitFailure> {
        let Backing::Writer(store) = &self.store else {
            return self
                .store
                .commit_group(batches)
                .await
                .map(|()| GroupCommit::Done(Ok(())))
                .map_err(store_failure);
        };
        if batches.is_empty() {
            return Ok(GroupCommit::Done(Ok(())));
        }
        let stale = || {
            retry_later(
                "not committed: the catalog is being reloaded after a storage failure; \
                 retry the transaction"
                    .into(),
            )
        };
        let mut slot = Some(slot);
        for attempt in 0..2 {
            if lock(&self.recovery).refresh_pending {
                return Err(stale());
            }
            if store.needs_recovery() {
                self.reopen(store).await?;
                if lock(&self.recovery).refresh_pending {
                    return Err(stale());
                }
            }
            match store
                .start_group(batches.clone(), slot.take().unwrap_or_default())
                .await
            {
                Ok(started) => return Ok(started),
                // SlateDB stopped in the background before this group was written: reopen
                // and try once more.
                Err(StoreError::Unavailable { .. }) if attempt == 0 && store.needs_recovery() => {}
                Err(e) => return Err(store_failure(e)),
            }
        }
        Err(retry_later(
            "not committed: the object store is failing; retry the transaction".into(),
        ))
    }

    /// Waits for a group [`Inner::start_group`] started to become durable (see there).
    async fn finish_group(
        &self,
        batches: &[CommitBatch],
        started: GroupCommit,
    ) -> Result<(), CommitFailure> {
        let outcome = started.durable().await;
        let Backing::Writer(store) = &self.store else {
            return outcome.map_err(store_failure);
        };
        let (Some(first), Some(last)) = (batches.first(), batches.last()) else {
            return Ok(());
        };
        let (first, last) = (first.seq.0, last.seq.0);
        match outcome {
            Ok(()) => {
                // (A group of empty batches writes nothing, not even commit_seq.)
                if batches
                    .iter()
                    .any(|b| !b.puts.is_empty() || !b.deletes.is_empty())
                {
                    let mut r = lock(&self.recovery);
                    r.durable = r.durable.max(last);
                }
                Ok(())
            }
            Err(StoreError::Indeterminate { message }) => {
                self.resolve(store, first, last, &message).await
            }
            Err(e) => Err(store_failure(e)),
        }
    }

    /// Reopens a broken store, at most once per [`REOPEN_INTERVAL`].
    async fn reopen(&self, store: &Store) -> Result<(), CommitFailure> {
        if lock(&self.recovery)
            .failed_at
            .is_some_and(|t| t.elapsed() < REOPEN_INTERVAL)
        {
            return Err(retry_later(
                "not committed: the object store failed and is not reachable again yet; \
                 retry the transaction"
                    .into(),
            ));
        }
        match store.recover().await {
            Ok(()) => {
                self.reconcile(store, None);
                Ok(())
            }
            Err(e) => {
                if !matches!(e, StoreError::Fenced { .. }) {
                    lock(&self.recovery).failed_at = Some(Instant::now());
                }
                Err(store_failure(e))
            }
        }
    }

    /// The outcome of the group `first..=last` is unknown: reopen the store (for up to
    /// [`RESOLVE_WITHIN`]) and read whether it landed.
    async fn resolve(
        &self,
        store: &Store,
        first: u64,
        last: u64,
        message: &str,
    ) -> Result<(), CommitFailure> {
        tracing::warn!(first, last, %message, "commit outcome unknown; reopening the store");
        let deadline = Instant::now() + RESOLVE_WITHIN;
        loop {
            match store.recover().await {
                Ok(()) => break,
                Err(StoreError::Unavailable { .. }) if Instant::now() < deadline => {
                    tokio::time::sleep(RESOLVE_RETRY).await;
                }
                Err(e) => {
                    if !matches!(e, StoreError::Fenced { .. }) {
                        lock(&self.recovery).failed_at = Some(Instant::now());
                    }
                    return Err(CommitFailure {
                        fenced: false,
                        transient: false,
                        message: format!(
                            "commit outcome unknown: {message}; reopening the store failed: \
                             {e}. This server commits again once the store is back; check \
                             whether the transaction landed before repeating it"
                        ),
                    });
                }
            }
        }
        let stored = self.reconcile(store, Some(last));
        if stored >= last {
            tracing::warn!(
                first,
                last,
                "the commit whose outcome was unknown is durable"
            );
            Ok(())
        } else if stored < first {
            tracing::warn!(
                first,
                last,
                "the commit whose outcome was unknown was not stored"
            );
            Err(retry_later(format!(
                "not committed: the object store failed while this commit was written \
                 ({message}); nothing of it is stored, retry the transaction"
            )))
        } else {
            // A group is one atomic write; this cannot happen.
            tracing::error!(
                first,
                last,
                stored,
                "the store holds part of a commit group"
            );
            Err(CommitFailure {
                fenced: false,
                transient: false,
                message: format!(
                    "commit outcome unknown: the store holds commit {stored} of the group \
                     {first}..={last}"
                ),
            })
        }
    }

    /// After a reopen: compares what the store holds with what was confirmed (plus `landing`,
    /// the group being resolved, which is confirmed when the store holds it) and schedules the
    /// engine's reload when they differ. Returns the stored commit sequence.
    fn reconcile(&self, store: &Store, landing: Option<u64>) -> u64 {
        let stored = stored_commit_seq(&store.reader());
        let mut r = lock(&self.recovery);
        r.failed_at = None;
        if landing.is_some_and(|l| stored >= l) {
            r.durable = r.durable.max(stored);
        }
        if stored != r.durable {
            if stored > r.durable {
                tracing::warn!(
                    stored,
                    confirmed = r.durable,
                    "a commit reported as failed is durable; reloading the catalog"
                );
            } else {
                tracing::error!(
                    stored,
                    confirmed = r.durable,
                    "the reopened store lacks confirmed commits; reloading the catalog from it"
                );
            }
            r.durable = stored;
            r.refresh_pending = true;
        }
        stored
    }

    /// Reloads the engine from the store when [`Recovery::refresh_pending`], as soon as no
    /// commit is in flight (the engine refuses before); called with the engine locked.
    fn refresh_if_pending(&self, eng: &mut Box<dyn Core>) {
        if !lock(&self.recovery).refresh_pending {
            return;
        }
        if eng.refresh(&self.store.reader()).is_err() {
            return;
        }
        let latest = eng.latest();
        // No commit is between planning and reporting now, so the sequence counters restart
        // from what the store holds.
        self.done.store(latest, Ordering::SeqCst);
        self.queued.store(latest, Ordering::SeqCst);
        lock(&self.recovery).refresh_pending = false;
        self.metrics.last_commit_seq.set(latest as i64);
        self.turn.notify_waiters();
        self.queued_turn.notify_waiters();
        tracing::warn!(
            latest,
            "catalog reloaded from the store after a storage failure"
        );
    }

    fn interrupt_slot(&self, sid: SessionId) -> Arc<Interrupt> {
        lock(&self.interrupts).entry(sid).or_default().clone()
    }

    /// Makes `batch` durable, sharing one store write with the batches that queue up while
    /// another group is being written (group commit), and waits until every earlier commit has
    /// been reported, so commits are acknowledged in sequence order and never before they are
    /// durable.
    ///
    /// A cancel or statement timeout aborts the commit while its batch has not been handed to
    /// the store (still waiting in the queue); then the outcome is a failure and the second
    /// value the error to report. Once a leader has taken the batch the interrupt is ignored,
    /// as PostgreSQL ignores a cancel during commit: the client must never hear "canceled" for
    /// a transaction that is durable.
    async fn apply_in_order(
        &self,
        batch: &CommitBatch,
        interrupt: &Interrupt,
    ) -> (Result<(), CommitFailure>, Option<PgError>) {
        let started = std::time::Instant::now();
        // Queue in sequence order, so a group is written in ascending sequence (an interrupted
        // commit may leave a gap; that is harmless, its seq is reported as failed).
        wait_for(&self.queued_turn, || {
            self.queued.load(Ordering::SeqCst) + 1 >= batch.seq.0
        })
        .await;
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        lock(&self.queue).push(Queued {
            batch: batch.clone(),
            tx,
        });
        self.queued.fetch_max(batch.seq.0, Ordering::SeqCst);
        self.queued_turn.notify_waiters();
        let mut aborted = None;
        let result = loop {
            let interrupted = interrupt.notify.notified();
            if let Some(reason) = interrupt.reason() {
                let mut queue = lock(&self.queue);
                if let Some(i) = queue.iter().position(|q| q.batch.seq == batch.seq) {
                    queue.remove(i);
                    aborted = Some(reason);
                    break Err(CommitFailure {
                        fenced: false,
                        transient: false,
                        message: "canceled before commit".into(),
                    });
                }
            }
            tokio::select! {
                biased;
                r = &mut rx => break r.unwrap_or_else(|_| Err(lost_commit())),
                _ = interrupted, if interrupt.reason().is_none() => {}
                guard = self.leader.lock() => {
                    // Leader: write everything queued (ours, unless an earlier leader did).
                    if let Ok(r) = rx.try_recv() {
                        break r;
                    }
                    if !lock(&self.queue).iter().any(|q| q.batch.seq == batch.seq) {
                        // An earlier leader took our batch and is still uploading it (leaders
                        // let go of the lock once their group has its place): wait for that
                        // outcome instead of leading empty groups meanwhile.
                        drop(guard);
                        break rx.await.unwrap_or_else(|_| Err(lost_commit()));
                    }
                    // Room to upload first, then the queue: what arrives while every upload
                    // is busy joins this group.
                    let slot = self.store.upload_slot().await;
                    let group: Vec<Queued> = std::mem::take(&mut *lock(&self.queue));
                    // The batches move into the group (the upload task shares them).
                    let (batches, replies): (Vec<CommitBatch>, Vec<_>) =
                        group.into_iter().map(|q| (q.batch, q.tx)).unzip();
                    let batches: Arc<[CommitBatch]> = batches.into();
                    let started = self.start_group(&batches, slot).await;
                    // The group has its place in commit order: the next leader may start.
                    drop(guard);
                    let outcome = match started {
                        Ok(started) => self.finish_group(&batches, started).await,
                        Err(f) => Err(f),
                    };
                    self.metrics.commit_group_size.observe(replies.len() as f64);
                    for tx in replies {
                        let _ = tx.send(outcome.clone());
                    }
                }
            }
        };
        wait_for(&self.turn, || {
            self.done.load(Ordering::SeqCst) + 1 >= batch.seq.0
        })
        .await;
        let m = &self.metrics;
        match &result {
            Err(_) if aborted.is_some() => {
                m.commits_aborted.inc();
            }
            Ok(()) => {
                m.commits.inc();
                m.commit_seconds.observe(started.elapsed().as_secs_f64());
                let bytes: usize = batch
                    .puts
                    .iter()
                    .map(|(k, v)| k.len() + v.len())
                    .sum::<usize>()
                    + batch.deletes.iter().map(Vec::len).sum::<usize>();
                m.commit_bytes.inc_by(bytes as u64);
                m.last_commit_seq.set(batch.seq.0 as i64);
            }
            Err(f) => {
                m.commit_failures.inc();
                if f.fenced {
                    m.set_fenced();
                }
            }
        }
        (result, aborted)
    }
}

impl CatalogService {
    pub async fn open(config: &ServiceConfig) -> anyhow::Result<Arc<CatalogService>> {
        Self::open_with_clock(config, Box::new(SystemClock)).await
    }

    pub async fn open_with_clock(
        config: &ServiceConfig,
        clock: Box<dyn Clock>,
    ) -> anyhow::Result<Arc<CatalogService>> {
        Self::open_with_core(config, CoreKind::Native, clock).await
    }

    /// Opens the catalog with the given build of the core.
    pub async fn open_with_core(
        config: &ServiceConfig,
        core: CoreKind,
        clock: Box<dyn Clock>,
    ) -> anyhow::Result<Arc<CatalogService>> {
        // Load (compile) the component before taking the catalog's writer role.
        let component = match &core {
            CoreKind::Native => None,
            CoreKind::Wasm(path) => Some(crate::component::WasmComponent::load(path)?),
        };
        let metrics = Arc::new(Metrics::new());
        let opts = StoreOptions {
            metrics: Some(metrics.clone()),
            faults: config.faults.clone(),
            create_if_missing: config.create_if_missing,
            commit_timeout: config.commit_timeout,
            commit_journal: config.commit_journal,
            journal_uploads: config.journal_uploads,
            ..StoreOptions::default()
        };
        let store = match config.replica_poll {
            None => Backing::Writer(Box::new(Store::open(&config.catalog, opts).await?)),
            Some(poll) => {
                Backing::Replica(Box::new(Replica::open(&config.catalog, poll, opts).await?))
            }
        };
        metrics.writer_epoch.set(store.epoch() as i64);
        if let Backing::Writer(s) = &store {
            // A crash between a checkpoint's commit and its store checkpoint, or a failed
            // pin, is repaired here.
            let ids = rocklake_core::lifecycle::checkpoint_ids(&s.reader())
                .map_err(|e| anyhow::anyhow!("cannot read checkpoints: {e}"))?;
            match s.reconcile_checkpoints(&ids).await {
                Ok((0, 0)) => {}
                Ok((pinned, unpinned)) => {
                    tracing::info!(pinned, unpinned, "store checkpoints reconciled")
                }
                Err(e) => tracing::warn!(error = %e, "store checkpoints not reconciled"),
            }
        }
        let reader = store.reader();
        let recording = crate::trace::RecordingKv::new(&reader);
        let open_kv: &dyn KvRead = if config.record.is_some() {
            &recording
        } else {
            &reader
        };
        {
            let mirror = store.reader();
            let core_memory = component.as_ref().map(|c| c.memory());
            metrics.set_memory_probe(Box::new(move || crate::metrics::MemorySample {
                mirror_bytes: mirror.memory_bytes(),
                core_memory_bytes: core_memory.as_ref().map(|m| m.bytes()),
            }));
        }
        let mut engine: Box<dyn Core> = match component {
            None => Box::new(
                Engine::open(open_kv).map_err(|e| anyhow::anyhow!("cannot load catalog: {e}"))?,
            ),
            Some(component) => Box::new(component.instantiate(open_kv)?),
        };
        if let Some(dir) = &config.record {
            let unix = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            let mut out = crate::trace::TraceWriter::create(dir, unix)
                .map_err(|e| anyhow::anyhow!("cannot create a trace in {}: {e}", dir.display()))?;
            out.record_open(&recording, engine.latest());
            tracing::info!(trace = out.path(), "recording every call into the core");
            engine = Box::new(crate::trace::Recorder::new(engine, out));
        }
        if config.replica_poll.is_some() {
            engine.set_read_only(true);
        }
        engine.set_statement_memory_limit(config.statement_memory_limit);
        let done = engine.latest();
        metrics.last_commit_seq.set(done as i64);
        let inner = Arc::new(Inner {
            engine: Mutex::new(engine),
            store,
            clock,
            done: AtomicU64::new(done),
            turn: Notify::new(),
            releases: AtomicU64::new(0),
            released: Notify::new(),
            queue: Mutex::new(Vec::new()),
            queued: AtomicU64::new(done),
            queued_turn: Notify::new(),
            leader: tokio::sync::Mutex::new(()),
            interrupts: Mutex::new(std::collections::HashMap::new()),
            metrics,
            slow_statement: config.slow_statement,
            recovery: Mutex::new(Recovery {
                durable: done,
                ..Recovery::default()
            }),
            direct: Arc::new(DirectCalls::new()),
            watcher: std::sync::OnceLock::new(),
        });
        if let Some(poll) = config.replica_poll {
            tokio::spawn(follow_writer(Arc::downgrade(&inner), poll));
        }
        Ok(Arc::new(CatalogService { inner }))
    }

    /// The store's writer epoch (for logs and metrics).
    pub fn epoch(&self) -> u64 {
        self.inner.store.epoch()
    }

    /// A read-write session with default settings (admin commands, benchmarks).
    pub fn open_session(&self, user: &str, database: &str) -> SessionId {
        let sid = self.inner.engine().open_session(user, database);
        self.inner.metrics.sessions.inc();
        self.inner.metrics.sessions_opened.inc();
        sid
    }

    /// A client's session: fails when a start-up setting is unknown or invalid. Its
    /// `backend_start` is stamped here, from the service's clock.
    pub fn open_session_with(&self, options: &SessionOptions) -> Result<OpenedSession, PgError> {
        let options = SessionOptions {
            backend_start: self.inner.clock.now_pg_micros(),
            ..options.clone()
        };
        let r = self.inner.engine().open_session_with(&options);
        if r.is_ok() {
            self.inner.metrics.sessions.inc();
            self.inner.metrics.sessions_opened.inc();
        }
        r
    }

    /// The server's metrics (rendered by `/metrics`).
    pub fn metrics(&self) -> Arc<Metrics> {
        self.inner.metrics.clone()
    }

    /// Runs a simple-query string. Commits happen in a spawned task so that a cancelled or
    /// disconnected client can never leave a planned commit half-reported.
    pub async fn query(&self, sid: SessionId, sql: &str) -> Reply {
        self.request(sid, sql, Request::Query).await
    }

    /// An extended-protocol Execute: as [`CatalogService::query`], but its implicit
    /// transaction stays open until [`CatalogService::sync`].
    pub async fn execute(&self, sid: SessionId, sql: &str) -> Reply {
        self.request(sid, sql, Request::Execute).await
    }

    /// The extended protocol's Sync: commits the implicit transaction of the Executes before
    /// it (durably, as a query's commit).
    pub async fn sync(&self, sid: SessionId, abort: bool) -> Reply {
        self.request(sid, "", Request::Sync { abort }).await
    }

    async fn request(&self, sid: SessionId, sql: &str, kind: Request) -> Reply {
        let inner = self.inner.clone();
        // A cancel from an earlier request must not hit this one.
        let interrupt = inner.interrupt_slot(sid);
        interrupt.clear();
        let started = std::time::Instant::now();
        if EngineCalls::now() == EngineCalls::InPlace {
            // No await point between the engine's reply and the spawn of its commit: dropping
            // this future cannot strand a planned commit.
            let reply = inner
                .engine_call_in_place(&interrupt, |eng, kv, now| kind.call(eng, kv, sid, sql, now));
            if reply.commit.is_none() && reply.wait.is_none() {
                kind.observe(&inner, sql, started.elapsed(), &reply, false);
                return reply;
            }
            let sql = sql.to_string();
            let task = tokio::spawn(async move {
                let reply = inner.drive(sid, reply, &interrupt).await;
                kind.observe(&inner, &sql, started.elapsed(), &reply, true);
                reply
            });
            return task
                .await
                .unwrap_or_else(|e| internal_reply(&format!("query task failed: {e}")));
        }
        let sql = sql.to_string();
        let task = tokio::spawn(async move {
            let statement = sql.clone();
            let reply = inner
                .on_engine(&interrupt, move |eng, kv, now| {
                    kind.call(eng, kv, sid, &statement, now)
                })
                .await;
            let committed = reply.commit.is_some();
            let reply = inner.drive(sid, reply, &interrupt).await;
            kind.observe(&inner, &sql, started.elapsed(), &reply, committed);
            reply
        });
        task.await
            .unwrap_or_else(|e| internal_reply(&format!("query task failed: {e}")))
    }

    pub async fn describe(&self, sid: SessionId, sql: &str) -> Result<Describe, PgError> {
        let reader = self.inner.store.reader();
        self.inner.engine().describe(&reader, sid, sql)
    }

    pub async fn copy_in_data(&self, sid: SessionId, data: &[u8]) -> Result<(), PgError> {
        self.inner.engine().copy_in_data(sid, data)
    }

    pub async fn copy_in_done(&self, sid: SessionId) -> Reply {
        let inner = self.inner.clone();
        let interrupt = inner.interrupt_slot(sid);
        interrupt.clear();
        let task = tokio::spawn(async move {
            let reply = inner
                .on_engine(&interrupt, move |eng, kv, now| {
                    eng.copy_in_done(kv, sid, now)
                })
                .await;
            inner.drive(sid, reply, &interrupt).await
        });
        task.await
            .unwrap_or_else(|e| internal_reply(&format!("copy task failed: {e}")))
    }

    pub async fn copy_in_fail(&self, sid: SessionId, message: &str) -> Reply {
        let reply = self.inner.engine().copy_in_fail(sid, message);
        if reply.locks_released {
            // The failed COPY ended a transaction that held advisory locks.
            self.inner.note_release();
        }
        reply
    }

    /// Cancel request or statement timeout for the session's running request: its commit is
    /// aborted with `reason` if the batch has not reached the store yet; otherwise the request
    /// completes normally. Statements themselves run to completion (they are short and
    /// synchronous in the core).
    pub fn interrupt(&self, sid: SessionId, reason: PgError) {
        let slot = self.inner.interrupt_slot(sid);
        *lock(&slot.reason) = Some(reason);
        slot.notify.notify_waiters();
    }

    /// The session's statement timeout (see [`Interrupt::reason`]); `None` clears it.
    pub fn set_deadline(&self, sid: SessionId, deadline: Option<(Instant, PgError)>) {
        let slot = self.inner.interrupt_slot(sid);
        *lock(&slot.deadline) = deadline;
    }

    pub async fn close_session(&self, sid: SessionId) {
        lock(&self.inner.interrupts).remove(&sid);
        self.inner.metrics.sessions.dec();
        self.inner.engine().close_session(sid);
        // Its advisory locks went with it.
        self.inner.note_release();
    }

    /// Flushes and closes the store. Sessions must be closed first.
    pub async fn shutdown(&self) -> anyhow::Result<()> {
        self.inner.store.close().await?;
        Ok(())
    }

    /// Where closing the writer's store is ([`crate::store::ClosePhase`]); `None` on a replica.
    pub fn close_phase(&self) -> Option<crate::store::ClosePhase> {
        match &self.inner.store {
            Backing::Writer(s) => Some(s.close_phase()),
            Backing::Replica(_) => None,
        }
    }
}

/// A read replica's loop: reload the copy and the engine whenever the writer committed. Ends
/// when the service is dropped or its store closed.
async fn follow_writer(inner: std::sync::Weak<Inner>, poll: std::time::Duration) {
    loop {
        tokio::time::sleep(poll).await;
        let Some(inner) = inner.upgrade() else { return };
        let Backing::Replica(replica) = &inner.store else {
            return;
        };
        match replica.refresh().await {
            Ok(false) => {}
            Ok(true) => {
                let reader = replica.reader();
                let mut eng = inner.engine();
                match eng.refresh(&reader) {
                    Ok(()) => {
                        let latest = eng.latest();
                        inner.done.store(latest, Ordering::SeqCst);
                        inner.queued.store(latest, Ordering::SeqCst);
                        inner.metrics.last_commit_seq.set(latest as i64);
                        tracing::debug!(latest, "replica caught up");
                    }
                    Err(e) => tracing::warn!("replica refresh: {}", e.message),
                }
            }
            Err(StoreError::Closed) => return,
            Err(e) => tracing::warn!("replica poll: {e}"),
        }
    }
}

/// The requests that run statements or end their implicit transaction.
#[derive(Debug, Clone, Copy)]
enum Request {
    Query,
    Execute,
    Sync { abort: bool },
}

impl Request {
    fn call(
        self,
        eng: &mut dyn Core,
        kv: &dyn KvRead,
        sid: SessionId,
        sql: &str,
        now: i64,
    ) -> Reply {
        match self {
            Request::Query => eng.query(kv, sid, sql, now),
            Request::Execute => eng.execute(kv, sid, sql, now),
            Request::Sync { abort } => eng.sync(kv, sid, now, abort),
        }
    }

    /// Statement metrics and the slow-statement log. A Sync runs no statement of its own; the
    /// commit it made (the pipeline's) counts as a COMMIT.
    fn observe(
        self,
        inner: &Inner,
        sql: &str,
        elapsed: std::time::Duration,
        reply: &Reply,
        committed: bool,
    ) {
        match self {
            Request::Sync { .. } if committed => {
                inner.observe("COMMIT", elapsed, reply.error.is_some())
            }
            Request::Sync { .. } => {}
            _ => inner.observe(sql, elapsed, reply.error.is_some()),
        }
    }
}

/// Where an async task runs an engine call.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EngineCalls {
    /// On the task's own thread, directly or in `block_in_place` (multi-threaded runtimes
    /// only; [`Inner::engine_call_in_place`]). The connection's task cannot poll its timer or
    /// cancel trigger meanwhile, so a CancelRequest reaches the running request directly, as
    /// does its statement timeout ([`Interrupt::reason`]).
    InPlace,
    /// On tokio's blocking pool (single-threaded runtimes).
    BlockingPool,
}

impl EngineCalls {
    fn now() -> EngineCalls {
        match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                EngineCalls::InPlace
            }
            _ => EngineCalls::BlockingPool,
        }
    }
}

/// A pending cancel or statement timeout of one session.
#[derive(Default)]
struct Interrupt {
    reason: Mutex<Option<PgError>>,
    /// The statement timeout of the session's requests, and its error. Checked here rather
    /// than only by the connection's timer: a request running in place on the connection's
    /// task keeps that task from polling the timer until it ends.
    deadline: Mutex<Option<(Instant, PgError)>>,
    notify: Notify,
    /// [`Inner::releases`] when the session's statement began to wait.
    releases_seen: AtomicU64,
}

impl Interrupt {
    fn reason(&self) -> Option<PgError> {
        if let Some(reason) = lock(&self.reason).clone() {
            return Some(reason);
        }
        match &*lock(&self.deadline) {
            Some((at, reason)) if Instant::now() >= *at => Some(reason.clone()),
            _ => None,
        }
    }

    fn clear(&self) {
        *lock(&self.reason) = None;
    }
}

/// The store as one request of a session reads it: long statements ask it whether the
/// session's statement timeout or a CancelRequest wants them stopped.
struct RequestKv<'a> {
    inner: &'a dyn KvRead,
    interrupt: &'a Interrupt,
}

/// The engine, held ([`Inner::engine`]).
struct EngineGuard<'a> {
    /// Ends before the lock is released (fields drop in order).
    _direct: Option<DirectCall<'a>>,
    eng: MutexGuard<'a, Box<dyn Core>>,
}

impl std::ops::Deref for EngineGuard<'_> {
    type Target = Box<dyn Core>;
    fn deref(&self) -> &Box<dyn Core> {
        &self.eng
    }
}

impl std::ops::DerefMut for EngineGuard<'_> {
    fn deref_mut(&mut self) -> &mut Box<dyn Core> {
        &mut self.eng
    }
}

/// Whether this thread is a worker of a multi-threaded runtime with another worker, which can
/// serve the runtime's sockets and timers while this one runs an engine call directly.
fn another_worker() -> bool {
    tokio::runtime::Handle::try_current().is_ok_and(|h| {
        h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
            && h.metrics().num_workers() > 1
    })
}

/// Engine calls running directly on a runtime worker ([`Inner::engine_call_in_place`]; one
/// at a time, under the engine's lock). Such a worker polls no socket or timer until the call
/// returns, and when the other workers are parked none may poll them either: a worker takes
/// tokio's I/O driver only when it parks, and one woken by I/O with a single task to run wakes
/// no other. So a thread of its own ([`watch_direct_calls`]) wakes a parked worker once a
/// call has run for [`DirectCalls::LONG_NS`]; that worker runs an empty task and then parks on
/// the free driver, and a CancelRequest, `/metrics` and the other sessions' traffic are
/// served meanwhile. A thread rather than the core's periodic `interrupted` question: some
/// long calls never ask it (planning a large commit, a large COPY's rows). Not served
/// meanwhile: the tasks this worker itself holds back, which `block_in_place` would have
/// released first (its LIFO slot, and tasks that yielded on tokio's cooperative budget, such
/// as a connection that wrote a large result in many pieces); they resume when the call
/// returns. Decision record 0033.
struct DirectCalls {
    epoch: Instant,
    /// When the call in progress started (ns after `epoch`, at least 1); 0 when none runs.
    running_since: AtomicU64,
    /// Calls started so far: the watcher looks often only while they keep coming.
    started: AtomicU64,
}

impl DirectCalls {
    /// Far above most statements (tens to hundreds of µs), far below a noticeable stall (ns).
    const LONG_NS: u64 = 2_000_000;
    /// How often the watcher looks while calls come, and otherwise: a long call after a quiet
    /// spell gets its worker woken within about 100 ms, and an idle server is woken 10 times a
    /// second.
    const BUSY_LOOK: Duration = Duration::from_millis(2);
    const IDLE_LOOK: Duration = Duration::from_millis(100);
    /// How long after the last call started the watcher keeps looking often.
    const BUSY_FOR: Duration = Duration::from_secs(1);

    fn new() -> DirectCalls {
        DirectCalls {
            epoch: Instant::now(),
            running_since: AtomicU64::new(0),
            started: AtomicU64::new(0),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Marks a call running directly on this thread until the mark drops. Only while
    /// holding the engine: one call at a time.
    fn begin(&self) -> DirectCall<'_> {
        self.started.fetch_add(1, Ordering::Relaxed);
        self.running_since
            .store(self.now().max(1), Ordering::Relaxed);
        DirectCall(self)
    }
}

/// A call of [`DirectCalls`] in progress; ends it when dropped (also on unwinding).
struct DirectCall<'a>(&'a DirectCalls);

impl Drop for DirectCall<'_> {
    fn drop(&mut self) {
        self.0.running_since.store(0, Ordering::Relaxed);
    }
}

/// The watcher of [`DirectCalls`]; ends when the service is dropped.
fn watch_direct_calls(calls: &std::sync::Weak<DirectCalls>, runtime: &tokio::runtime::Handle) {
    let (mut seen, mut woken) = (0, 0);
    let mut busy_until = Instant::now();
    loop {
        let Some(c) = calls.upgrade() else {
            return;
        };
        let started = c.started.load(Ordering::Relaxed);
        if started != seen {
            seen = started;
            busy_until = Instant::now() + DirectCalls::BUSY_FOR;
        }
        let since = c.running_since.load(Ordering::Relaxed);
        if since != 0 && since != woken && c.now().saturating_sub(since) >= DirectCalls::LONG_NS {
            woken = since;
            // Spawned from outside the runtime, a task is scheduled remotely, which unparks an
            // idle worker.
            drop(runtime.spawn(async {}));
        }
        drop(c);
        std::thread::sleep(if Instant::now() < busy_until {
            DirectCalls::BUSY_LOOK
        } else {
            DirectCalls::IDLE_LOOK
        });
    }
}

impl KvRead for RequestKv<'_> {
    fn scan(
        &self,
        start: &[u8],
        end: &[u8],
        limit: usize,
    ) -> Result<rocklake_core::api::KvPage, rocklake_core::api::KvError> {
        self.inner.scan(start, end, limit)
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, rocklake_core::api::KvError> {
        self.inner.get(key)
    }
    fn scan_rev(
        &self,
        start: &[u8],
        end: &[u8],
        limit: usize,
    ) -> Result<rocklake_core::api::KvPage, rocklake_core::api::KvError> {
        self.inner.scan_rev(start, end, limit)
    }
    fn interrupted(&self) -> Option<String> {
        self.interrupt.reason().map(|e| e.message)
    }
    /// The OS's generator; `None` only if it fails, which the statement reports.
    fn entropy(&self) -> Option<u64> {
        let mut b = [0u8; 8];
        getrandom::fill(&mut b).ok().map(|()| u64::from_le_bytes(b))
    }
}

/// A commit waiting in the group-commit queue.
struct Queued {
    batch: CommitBatch,
    tx: tokio::sync::oneshot::Sender<Result<(), CommitFailure>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A leader dropped its group without answering (its task was cancelled mid-write): the
/// outcome is unknown, so the commit must be reported as failed and the store re-checked.
fn lost_commit() -> CommitFailure {
    CommitFailure {
        fenced: false,
        transient: false,
        message: "the group commit carrying this transaction was abandoned".into(),
    }
}

/// Waits until `ready()` holds, re-checking whenever `notify` fires.
async fn wait_for(notify: &Notify, ready: impl Fn() -> bool) {
    loop {
        let notified = notify.notified();
        if ready() {
            return;
        }
        notified.await;
    }
}

fn internal_reply(message: &str) -> Reply {
    Reply {
        outputs: vec![],
        error: Some(PgError::new("XX000", message)),
        ..Reply::default()
    }
}
