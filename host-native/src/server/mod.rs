//! The PostgreSQL front end: accepts connections, runs start-up and authentication, and
//! translates the v3 wire protocol to calls of a [`Backend`] (the catalog service in production,
//! scripted fakes in tests).
//!
//! Message framing is our own (see `codec`), so every reaction can follow PostgreSQL 15 exactly;
//! pgwire supplies the SCRAM-SHA-256 server state machine and the MD5 hash. pgwire's
//! `process_socket` framework is not used because its handler API cannot express what DuckDB
//! relies on: a COPY FROM STDIN in the middle of a multi-statement query whose remaining
//! statements run after CopyDone, the service (not the framework) owning the transaction status,
//! and PostgreSQL's exact ParameterStatus set.

// `PgError` (the core API's error, ~200 bytes) is the natural error of every protocol step; errors
// are rare and end up on the wire anyway, so boxing it would only add noise.
#![allow(clippy::result_large_err)]

mod auth;
mod codec;
mod conn;
pub mod tls;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rocklake_core::api::{Describe, OpenedSession, PgError, Reply, SessionId, SessionOptions};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch, Semaphore};
use tokio::task::JoinSet;

pub use auth::{random_password, AuthConfig, AuthMethod};

use crate::service::CatalogService;

/// What the protocol layer needs from the catalog engine. The semantics are those of
/// [`CatalogService`]; the trait exists so the protocol can be tested against scripted fakes.
///
/// Contract details the server relies on:
/// * In a [`Reply`], an [`rocklake_core::api::Output::CopyIn`] is the last output; the rest of
///   the request continues in the reply of `copy_in_done` / `copy_in_fail`.
/// * When `copy_in_data` fails, the server ends the COPY by calling `copy_in_fail` (its status is
///   reported to the client, its error is replaced by the data error, as PostgreSQL reports the
///   first error).
/// * A CancelRequest or the statement timeout calls `interrupt` during `query` /
///   `copy_in_done`, and the server keeps awaiting the reply: the backend ends the request with
///   the given error if it can do so truthfully (its commit has not reached storage), or lets it
///   finish, so a client never hears 57014 for a durable transaction. `describe` is only
///   dropped on cancel (it changes nothing).
pub trait Backend: Send + Sync + 'static {
    fn open_session(&self, options: &SessionOptions) -> Result<OpenedSession, PgError>;
    fn query(&self, sid: SessionId, sql: &str) -> impl Future<Output = Reply> + Send;
    /// An extended-protocol Execute: as `query`, but an implicit transaction stays open until
    /// `sync` (by default, a backend without one commits each Execute as a query).
    fn execute(&self, sid: SessionId, sql: &str) -> impl Future<Output = Reply> + Send {
        self.query(sid, sql)
    }
    /// The extended protocol's Sync after Executes: commits their implicit transaction, or
    /// rolls it back when `abort` (the server failed a message of the pipeline itself).
    /// `None`: nothing to do (the default, for a backend whose Executes commit themselves).
    fn sync(&self, sid: SessionId, abort: bool) -> impl Future<Output = Option<Reply>> + Send {
        let _ = (sid, abort);
        std::future::ready(None)
    }
    fn describe(
        &self,
        sid: SessionId,
        sql: &str,
    ) -> impl Future<Output = Result<Describe, PgError>> + Send;
    fn copy_in_data(
        &self,
        sid: SessionId,
        data: &[u8],
    ) -> impl Future<Output = Result<(), PgError>> + Send;
    fn copy_in_done(&self, sid: SessionId) -> impl Future<Output = Reply> + Send;
    fn copy_in_fail(&self, sid: SessionId, message: &str) -> impl Future<Output = Reply> + Send;
    fn close_session(&self, sid: SessionId) -> impl Future<Output = ()> + Send;
    /// A CancelRequest or statement timeout for the session's running `query` /
    /// `copy_in_done`: the backend ends it with `reason` if it can still do so without lying
    /// (before its commit reaches storage), else lets it finish; the server keeps awaiting the
    /// call's reply either way.
    fn interrupt(&self, sid: SessionId, reason: PgError);
    /// The statement timeout of the session's next requests: once `deadline` passes, the
    /// backend ends the running `query` / `copy_in_done` as [`Backend::interrupt`] with
    /// `reason` would. The backend checks it itself, because it may run a request in place on
    /// the connection's task, which cannot poll a timer meanwhile. `None` clears it.
    fn set_deadline(&self, sid: SessionId, deadline: Option<(std::time::Instant, PgError)>);
}

impl Backend for CatalogService {
    fn open_session(&self, options: &SessionOptions) -> Result<OpenedSession, PgError> {
        CatalogService::open_session_with(self, options)
    }
    fn query(&self, sid: SessionId, sql: &str) -> impl Future<Output = Reply> + Send {
        CatalogService::query(self, sid, sql)
    }
    fn execute(&self, sid: SessionId, sql: &str) -> impl Future<Output = Reply> + Send {
        CatalogService::execute(self, sid, sql)
    }
    async fn sync(&self, sid: SessionId, abort: bool) -> Option<Reply> {
        Some(CatalogService::sync(self, sid, abort).await)
    }
    fn describe(
        &self,
        sid: SessionId,
        sql: &str,
    ) -> impl Future<Output = Result<Describe, PgError>> + Send {
        CatalogService::describe(self, sid, sql)
    }
    fn copy_in_data(
        &self,
        sid: SessionId,
        data: &[u8],
    ) -> impl Future<Output = Result<(), PgError>> + Send {
        CatalogService::copy_in_data(self, sid, data)
    }
    fn copy_in_done(&self, sid: SessionId) -> impl Future<Output = Reply> + Send {
        CatalogService::copy_in_done(self, sid)
    }
    fn copy_in_fail(&self, sid: SessionId, message: &str) -> impl Future<Output = Reply> + Send {
        CatalogService::copy_in_fail(self, sid, message)
    }
    fn close_session(&self, sid: SessionId) -> impl Future<Output = ()> + Send {
        CatalogService::close_session(self, sid)
    }
    fn interrupt(&self, sid: SessionId, reason: PgError) {
        CatalogService::interrupt(self, sid, reason)
    }
    fn set_deadline(&self, sid: SessionId, deadline: Option<(std::time::Instant, PgError)>) {
        CatalogService::set_deadline(self, sid, deadline)
    }
}

/// Protocol-level settings of the server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub auth: AuthConfig,
    /// Largest Query/Parse/Bind/CopyData message accepted; larger ones are skipped and answered
    /// with 54000 (program_limit_exceeded).
    pub max_message_bytes: usize,
    /// Connections beyond this get PostgreSQL's 53300 "sorry, too many clients already".
    pub max_connections: usize,
    /// Start-up and authentication must finish within this (PostgreSQL's
    /// `authentication_timeout`, 60 s).
    pub startup_timeout: Duration,
    /// On shutdown, how long running statements may take before their connections are cut.
    pub shutdown_grace: Duration,
    /// TLS offered to clients (SSLRequest answered `S`); `None`: `N`, plaintext only.
    pub tls: Option<tls::TlsSettings>,
    /// PostgreSQL's `statement_timeout`: a request running longer is interrupted with 57014.
    pub statement_timeout: Option<Duration>,
    /// PostgreSQL's `idle_in_transaction_session_timeout`: a session idle inside a
    /// transaction block longer than this is terminated with FATAL 25P03.
    pub idle_in_transaction_timeout: Option<Duration>,
}

impl ServerConfig {
    pub fn new(auth: AuthConfig) -> Self {
        ServerConfig {
            auth,
            max_message_bytes: 64 << 20,
            max_connections: 100,
            startup_timeout: Duration::from_secs(60),
            shutdown_grace: Duration::from_secs(10),
            tls: None,
            statement_timeout: None,
            idle_in_transaction_timeout: None,
        }
    }
}

/// One registered session for CancelRequest: its secret key and, while a statement runs, the
/// trigger that aborts it.
struct CancelSlot {
    secret: u32,
    armed: Mutex<Option<oneshot::Sender<()>>>,
    /// Interrupts the session's backend request directly: the connection's task may be busy
    /// running that request in place and not see the trigger until it ends.
    direct: Mutex<Option<DirectCancel>>,
    /// `pg_terminate_backend` asked for the session to end: it does when it next waits for
    /// input (a running request finishes first).
    terminate: tokio::sync::Notify,
    terminating: std::sync::atomic::AtomicBool,
}

/// Called with `true` for `pg_terminate_backend`, `false` for a cancel.
type DirectCancel = Box<dyn Fn(bool) + Send + Sync>;

/// State shared by all connections of one server.
pub(crate) struct Shared {
    config: ServerConfig,
    cancels: Mutex<HashMap<i32, Arc<CancelSlot>>>,
    connection_slots: Arc<Semaphore>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding one of these short locks cannot leave the map inconsistent, so a
    // poisoned lock is still usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    /// Allocate a random unused backend pid and secret.
    fn register(&self) -> anyhow::Result<(i32, Arc<CancelSlot>)> {
        loop {
            let raw = auth::random_bytes::<8>()?;
            let pid = i32::from_be_bytes([raw[0] & 0x7f, raw[1], raw[2], raw[3]]);
            let secret = u32::from_be_bytes([raw[4], raw[5], raw[6], raw[7]]);
            if pid == 0 {
                continue;
            }
            let mut map = lock(&self.cancels);
            if map.contains_key(&pid) {
                continue;
            }
            let slot = Arc::new(CancelSlot {
                secret,
                armed: Mutex::new(None),
                direct: Mutex::new(None),
                terminate: tokio::sync::Notify::new(),
                terminating: std::sync::atomic::AtomicBool::new(false),
            });
            map.insert(pid, slot.clone());
            return Ok((pid, slot));
        }
    }

    fn unregister(&self, pid: i32) {
        lock(&self.cancels).remove(&pid);
    }

    /// Handle a CancelRequest: abort the target's running statement, if any. Like PostgreSQL,
    /// a wrong key or an idle session is silently ignored.
    fn cancel(&self, pid: i32, secret: u32) {
        let slot = lock(&self.cancels).get(&pid).cloned();
        match slot {
            Some(slot) if slot.secret == secret => slot.cancel_running(pid, "cancel request"),
            Some(_) => tracing::warn!(pid, "cancel request with wrong secret key ignored"),
            None => tracing::debug!(pid, "cancel request for unknown backend pid ignored"),
        }
    }

    /// `pg_cancel_backend(pid)` / `pg_terminate_backend(pid)` of another session (the core
    /// checked the caller's right). A session that has ended meanwhile is ignored.
    pub(crate) fn signal(&self, pid: i32, terminate: bool) {
        let Some(slot) = lock(&self.cancels).get(&pid).cloned() else {
            tracing::debug!(pid, "signal for a backend that has ended ignored");
            return;
        };
        if terminate {
            tracing::info!(pid, "pg_terminate_backend: ending the session");
            slot.terminating
                .store(true, std::sync::atomic::Ordering::SeqCst);
            // Stored as a permit if the session is not waiting for input right now.
            slot.terminate.notify_one();
            // A request of the session that waits (an advisory lock, pg_sleep) or runs long
            // ends now, its session with it.
            if lock(&slot.armed).is_some() {
                if let Some(direct) = lock(&slot.direct).as_ref() {
                    direct(true);
                }
            }
        } else {
            slot.cancel_running(pid, "pg_cancel_backend");
        }
    }
}

impl CancelSlot {
    /// Aborts the running statement, if any; an idle session is left alone, as in PostgreSQL.
    fn cancel_running(&self, pid: i32, why: &str) {
        if let Some(trigger) = lock(&self.armed).take() {
            tracing::info!(pid, "{why}: cancelling running statement");
            if let Some(direct) = lock(&self.direct).as_ref() {
                direct(false);
            }
            let _ = trigger.send(());
        } else {
            tracing::debug!(pid, "{why} for an idle session");
        }
    }

    /// `pg_terminate_backend` has asked the session to end.
    fn is_terminating(&self) -> bool {
        self.terminating.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Start a cancellable section; the receiver fires when a CancelRequest arrives.
    fn arm(&self) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        *lock(&self.armed) = Some(tx);
        rx
    }

    fn disarm(&self) {
        lock(&self.armed).take();
    }

    /// Sets how a cancel reaches the session's running request without its connection task.
    fn set_direct(&self, direct: DirectCancel) {
        *lock(&self.direct) = Some(direct);
    }
}

/// Serve the catalog service on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    service: Arc<CatalogService>,
    auth: AuthConfig,
    shutdown: impl Future,
) -> anyhow::Result<()> {
    serve_backend(listener, service, ServerConfig::new(auth), shutdown).await
}

/// Serve any [`Backend`] on `listener` until `shutdown` resolves; then stop accepting, end idle
/// sessions with 57P01 (as PostgreSQL's fast shutdown does), let running statements finish
/// within the grace period, and close every session.
pub async fn serve_backend<B: Backend>(
    listener: TcpListener,
    backend: Arc<B>,
    config: ServerConfig,
    shutdown: impl Future,
) -> anyhow::Result<()> {
    let slots = Arc::new(Semaphore::new(config.max_connections));
    let grace = config.shutdown_grace;
    let shared = Arc::new(Shared {
        config,
        cancels: Mutex::new(HashMap::new()),
        connection_slots: slots,
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((socket, peer)) => {
                    // Small request/response round trips dominate; never wait for Nagle.
                    if let Err(e) = socket.set_nodelay(true) {
                        tracing::debug!(%peer, "set_nodelay failed: {e}");
                    }
                    tasks.spawn(conn::run(socket, peer, backend.clone(), shared.clone(), stop_rx.clone()));
                }
                Err(e) => {
                    // Typically EMFILE or a connection reset before accept; back off briefly
                    // instead of spinning.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                if let Err(e) = done {
                    tracing::error!("connection task failed: {e}");
                }
            }
        }
    }
    drop(listener);
    tracing::info!(connections = tasks.len(), "shutting down");
    let _ = stop_tx.send(true);
    let drained =
        tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tracing::warn!(
            connections = tasks.len(),
            "grace period over; closing connections"
        );
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
    Ok(())
}
