//! One client connection: start-up, authentication, and the query loop.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use pgwire::error::PgWireError;
use rocklake_core::api::{
    Describe, FieldDesc, Output, PgError, Reply, SessionId, SessionOptions, TextRows, TxnStatus,
};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::{oneshot, watch, OwnedSemaphorePermit};

use super::auth::AuthMethod;
use super::codec::{self, Frontend, Out};
use super::{Backend, CancelSlot, Shared};

const SSL_REQUEST: i32 = 80_877_103;
const GSSENC_REQUEST: i32 = 80_877_104;
const CANCEL_REQUEST: i32 = 80_877_102;
/// Flush the output buffer once this much is pending, so large COPY OUT streams do not sit in
/// memory.
const FLUSH_THRESHOLD: usize = 256 << 10;

/// Why a connection ends. Every variant just closes the socket; anything the client should hear
/// has been sent already.
#[derive(Debug)]
enum Exit {
    Io(io::Error),
    Closed,
}

impl From<io::Error> for Exit {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            Exit::Closed
        } else {
            Exit::Io(e)
        }
    }
}

type R<T> = Result<T, Exit>;

fn fatal(code: &str, message: impl Into<String>) -> PgError {
    let mut e = PgError::new(code, message);
    e.severity = "FATAL".into();
    e
}

fn canceled() -> PgError {
    PgError::new("57014", "canceling statement due to user request")
}

fn statement_timed_out() -> PgError {
    PgError::new("57014", "canceling statement due to statement timeout")
}

fn in_failed_block() -> PgError {
    PgError::new(
        "25P02",
        "current transaction is aborted, commands ignored until end of transaction block",
    )
}

/// A single `ROLLBACK`/`ABORT`/`COMMIT`/`END` (optionally `WORK`/`TRANSACTION`) — the only
/// statements PostgreSQL accepts in an aborted transaction block (COMMIT then rolls back).
fn is_txn_end(sql: &str) -> bool {
    let s = sql.trim().trim_end_matches(';').trim();
    let mut words = s.split_ascii_whitespace().map(|w| w.to_ascii_uppercase());
    let first_ok = matches!(
        words.next().as_deref(),
        Some("ROLLBACK" | "ABORT" | "COMMIT" | "END")
    );
    let rest: Vec<String> = words.collect();
    first_ok
        && (rest.is_empty() || (rest.len() == 1 && (rest[0] == "WORK" || rest[0] == "TRANSACTION")))
}

/// A single `ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT] name`: in an aborted block it
/// returns to the savepoint, as PostgreSQL lets it.
fn is_rollback_to(sql: &str) -> bool {
    let s = sql.trim().trim_end_matches(';').trim();
    let words: Vec<String> = s
        .split_ascii_whitespace()
        .map(|w| w.to_ascii_uppercase())
        .collect();
    let mut rest = match words.split_first() {
        Some((first, rest)) if first == "ROLLBACK" => rest,
        _ => return false,
    };
    if let Some((w, r)) = rest.split_first() {
        if w == "WORK" || w == "TRANSACTION" {
            rest = r;
        }
    }
    match rest {
        [to, _name] => to == "TO",
        [to, sp, _name] => to == "TO" && sp == "SAVEPOINT",
        _ => false,
    }
}

struct Startup {
    user: String,
    database: String,
    /// Setting values from the start-up packet (`options=-c name=value` included), in order.
    settings: Vec<(String, String)>,
}

struct Prepared {
    sql: String,
    describe: Describe,
    /// Parameter types the client gave in Parse (0: untyped, typed from context).
    given_types: Vec<u32>,
}

struct Portal {
    sql: String,
    fields: Option<Vec<FieldDesc>>,
    /// Bind's result format codes (0 text, 1 binary; see `codec::result_format`).
    formats: Vec<i16>,
    /// Rows left over after an Execute with a row limit: the result, how many of its rows
    /// were sent, and the final tag.
    pending: Option<(TextRows, usize, String)>,
    /// Set once the portal has run to its end: what another Execute of it answers.
    finished: Option<Finished>,
    /// `sql` has the Bind parameters' values in place of `$n`: an error's position in it is
    /// not one in the client's text.
    bound: bool,
}

/// What PostgreSQL answers to an Execute of a portal that already ran to its end (the
/// portal lives on until it is closed or its transaction ends).
#[derive(Clone)]
enum Finished {
    /// A portal that returns rows returns none more: its command tag with a count of 0
    /// (`SELECT 0`, `INSERT 0 0`).
    NoMoreRows(String),
    /// An empty query's: EmptyQueryResponse again.
    Empty,
    /// Any other portal: 55000 `portal "…" cannot be run`.
    NotRunnable,
}

/// `tag` with its row count (its last word) replaced by `n`, as PostgreSQL's tag counts the
/// rows of the Execute that ends a portal read in parts, not of the whole result.
fn tag_with_count(tag: &str, n: usize) -> String {
    match tag.rsplit_once(' ') {
        Some((head, count)) if count.bytes().all(|b| b.is_ascii_digit()) => format!("{head} {n}"),
        _ => tag.to_string(),
    }
}

/// A raw message read from the socket.
enum Raw {
    Msg(u8, Bytes),
    /// A large-type message over `max_message_bytes`; its body was read and discarded.
    TooLarge(u8, usize),
}

/// Which protocol the current statement came from: RowDescription is only sent for simple
/// queries, and after an error the extended protocol skips to Sync instead of sending
/// ReadyForQuery.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Proto {
    Simple,
    Extended,
}

type ReadHalf = Box<dyn AsyncRead + Unpin + Send>;
type WriteHalf = Box<dyn AsyncWrite + Unpin + Send>;

struct Conn<B: Backend> {
    reader: BufReader<ReadHalf>,
    writer: WriteHalf,
    /// The connection runs over TLS.
    encrypted: bool,
    out: Out,
    backend: Arc<B>,
    shared: Arc<Shared>,
    stop: watch::Receiver<bool>,
    peer: SocketAddr,
    sid: Option<SessionId>,
    cancel: Option<Arc<CancelSlot>>,
    /// Backend pid announced in BackendKeyData (the CancelRequest key).
    pid: Option<i32>,
    status: TxnStatus,
    /// The server (not the service) failed a statement inside a transaction block: the block is
    /// aborted as far as the client knows, although the service still has it open.
    poisoned: bool,
    skip_till_sync: bool,
    /// An Execute left its implicit transaction open since the last Sync: the Sync ends it.
    executed: bool,
    /// The server failed a message since the last Sync (the core did not see that error):
    /// the Sync rolls the Executes' transaction back instead of committing it.
    failed_before_sync: bool,
    /// Prepared statements by name ("" is the unnamed one).
    statements: HashMap<String, Prepared>,
    /// Portals by name ("" is the unnamed one); all end with the transaction.
    portals: HashMap<String, Portal>,
    /// The portal the running Execute reads (rows left over are kept on it).
    current_portal: String,
    /// The session's `statement_timeout` (server default, then SET).
    statement_timeout: Option<Duration>,
    /// The session's `idle_in_transaction_session_timeout`.
    idle_in_transaction_timeout: Option<Duration>,
}

/// Most named prepared statements or portals one connection may hold (each keeps its SQL and
/// description in memory).
const MAX_NAMED: usize = 10_000;

pub(crate) async fn run<B: Backend>(
    socket: TcpStream,
    peer: SocketAddr,
    backend: Arc<B>,
    shared: Arc<Shared>,
    stop: watch::Receiver<bool>,
) {
    let timeout = shared.config.startup_timeout;
    let negotiated = tokio::time::timeout(
        timeout,
        negotiate_encryption(socket, shared.config.tls.as_ref()),
    )
    .await;
    let (r, w, encrypted) = match negotiated {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => {
            tracing::debug!(%peer, "connection ended during SSL negotiation: {e}");
            return;
        }
        Err(_) => {
            tracing::info!(%peer, "start-up timed out");
            return;
        }
    };
    let mut conn = Conn {
        reader: BufReader::with_capacity(64 << 10, r),
        writer: w,
        encrypted,
        out: Out::default(),
        backend,
        shared,
        stop,
        peer,
        sid: None,
        cancel: None,
        pid: None,
        status: TxnStatus::Idle,
        poisoned: false,
        skip_till_sync: false,
        executed: false,
        failed_before_sync: false,
        statements: HashMap::new(),
        portals: HashMap::new(),
        current_portal: String::new(),
        statement_timeout: None,
        idle_in_transaction_timeout: None,
    };
    let result = conn.serve().await;
    match result {
        Ok(()) | Err(Exit::Closed) => tracing::debug!(peer = %conn.peer, "connection closed"),
        Err(Exit::Io(e)) => tracing::debug!(peer = %conn.peer, "connection ended: {e}"),
    }
    if let Some(slot) = &conn.cancel {
        slot.disarm();
    }
    if let Some(sid) = conn.sid.take() {
        conn.backend.close_session(sid).await;
    }
    if let Some(pid) = conn.pid() {
        conn.shared.unregister(pid);
    }
}

/// Answers the SSLRequest / GSSENCRequest packets that may open a connection (`S` and the
/// TLS handshake when TLS is configured, else `N`) and returns the streams the protocol runs
/// on, with any bytes already read of the first other packet put back in front.
async fn negotiate_encryption(
    mut socket: TcpStream,
    tls: Option<&super::tls::TlsSettings>,
) -> io::Result<(ReadHalf, WriteHalf, bool)> {
    loop {
        let mut head = [0u8; 8];
        socket.read_exact(&mut head).await?;
        let len = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        let code = i32::from_be_bytes([head[4], head[5], head[6], head[7]]);
        if len == 8 && code == SSL_REQUEST {
            if let Some(tls) = tls {
                socket.write_all(b"S").await?;
                let stream = tls.acceptor.accept(socket).await?;
                let (r, w) = tokio::io::split(stream);
                return Ok((Box::new(r), Box::new(w), true));
            }
            socket.write_all(b"N").await?;
            continue;
        }
        if len == 8 && code == GSSENC_REQUEST {
            socket.write_all(b"N").await?;
            continue;
        }
        let (r, w) = socket.into_split();
        let r = std::io::Cursor::new(head.to_vec()).chain(r);
        return Ok((Box::new(r), Box::new(w), false));
    }
}

impl<B: Backend> Conn<B> {
    fn pid(&self) -> Option<i32> {
        self.pid
    }

    async fn flush(&mut self) -> R<()> {
        if !self.out.is_empty() {
            self.writer.write_all(&self.out.buf).await?;
            self.out.buf.clear();
        }
        Ok(())
    }

    async fn maybe_flush(&mut self) -> R<()> {
        if self.out.len() >= FLUSH_THRESHOLD {
            self.flush().await?;
        }
        Ok(())
    }

    /// Send a FATAL error and end the connection.
    async fn fatal(&mut self, e: PgError) -> R<()> {
        tracing::info!(peer = %self.peer, code = %e.code, "closing connection: {}", e.message);
        self.out.error(&e);
        self.flush().await?;
        let _ = self.writer.shutdown().await;
        Err(Exit::Closed)
    }

    async fn serve(&mut self) -> R<()> {
        let timeout = self.shared.config.startup_timeout;
        let started = match tokio::time::timeout(timeout, self.startup()).await {
            Ok(r) => r?,
            Err(_) => {
                // PostgreSQL drops connections that do not finish authentication in time
                // without a message.
                tracing::info!(peer = %self.peer, "start-up timed out");
                return Err(Exit::Closed);
            }
        };
        let Some((startup, _permit)) = started else {
            return Ok(());
        };
        self.ready(startup).await?;
        self.query_loop().await
    }

    // ---------------------------------------------------------------- start-up

    /// Negotiate SSL/GSS, read the StartupMessage and authenticate. `None` when the connection
    /// was a CancelRequest.
    async fn startup(&mut self) -> R<Option<(Startup, OwnedSemaphorePermit)>> {
        let mut ssl_done = false;
        let mut gss_done = false;
        loop {
            let len = self.reader.read_i32().await?;
            let Ok(len) = usize::try_from(len) else {
                return Err(Exit::Closed);
            };
            if !(8..=codec::MAX_STARTUP_PACKET).contains(&len) {
                // PostgreSQL: "invalid length of startup packet", logged, connection dropped.
                return Err(Exit::Closed);
            }
            let mut body = vec![0u8; len - 4];
            self.reader.read_exact(&mut body).await?;
            let code = i32::from_be_bytes([body[0], body[1], body[2], body[3]]);
            if code == SSL_REQUEST && !ssl_done {
                // TLS is not offered yet: 'N', and the client continues in plaintext.
                self.out.ssl_no();
                self.flush().await?;
                ssl_done = true;
                continue;
            }
            if code == GSSENC_REQUEST && !gss_done {
                self.out.ssl_no();
                self.flush().await?;
                gss_done = true;
                continue;
            }
            if code == CANCEL_REQUEST {
                if body.len() == 12 {
                    let pid = i32::from_be_bytes([body[4], body[5], body[6], body[7]]);
                    let secret = u32::from_be_bytes([body[8], body[9], body[10], body[11]]);
                    self.shared.cancel(pid, secret);
                }
                return Ok(None);
            }
            let major = (code >> 16) & 0xffff;
            let minor = code & 0xffff;
            if major != 3 {
                self.fatal(fatal(
                    "0A000",
                    format!(
                        "unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0"
                    ),
                ))
                .await?;
            }
            let startup = match parse_startup_params(&body[4..]) {
                Ok((s, unrecognized)) => {
                    if minor > 0 || !unrecognized.is_empty() {
                        // Like PostgreSQL 15: offer 3.0 and list the `_pq_.` options we ignore.
                        self.out.negotiate_protocol_version(3 << 16, &unrecognized);
                    }
                    s
                }
                Err(e) => {
                    self.fatal(e).await?;
                    return Err(Exit::Closed);
                }
            };
            if !self.encrypted && self.shared.config.tls.as_ref().is_some_and(|t| t.required) {
                // What PostgreSQL says when only `hostssl` lines match.
                self.fatal(fatal(
                    "28000",
                    format!(
                        "no pg_hba.conf entry for host \"{}\", user \"{}\", database \"{}\", no encryption",
                        self.peer.ip(),
                        startup.user,
                        startup.database
                    ),
                ))
                .await?;
                return Err(Exit::Closed);
            }
            let Ok(permit) = self.shared.connection_slots.clone().try_acquire_owned() else {
                self.fatal(fatal("53300", "sorry, too many clients already"))
                    .await?;
                return Err(Exit::Closed);
            };
            self.authenticate(&startup.user).await?;
            return Ok(Some((startup, permit)));
        }
    }

    /// Read one password-family ('p') message during authentication.
    async fn read_auth_message(&mut self, expected: &str) -> R<Bytes> {
        let ty = self.reader.read_u8().await?;
        if ty != b'p' {
            self.fatal(fatal(
                "08P01",
                format!("expected {expected} response, got message type {ty}"),
            ))
            .await?;
        }
        let len = self.reader.read_i32().await?;
        let len = usize::try_from(len).unwrap_or(0);
        if !(4..=codec::MAX_AUTH_TOKEN + 4).contains(&len) {
            self.fatal(fatal("08P01", "invalid message length")).await?;
        }
        let mut body = BytesMut::zeroed(len - 4);
        self.reader.read_exact(&mut body).await?;
        Ok(body.freeze())
    }

    async fn auth_failed(&mut self, user: &str) -> R<()> {
        self.fatal(fatal(
            "28P01",
            format!("password authentication failed for user \"{user}\""),
        ))
        .await
    }

    async fn authenticate(&mut self, user: &str) -> R<()> {
        let config = self.shared.config.auth.clone();
        match config.method {
            AuthMethod::Trust => {
                if !config.knows(user) {
                    self.fatal(fatal("28000", format!("role \"{user}\" does not exist")))
                        .await?;
                }
            }
            AuthMethod::Password => {
                self.out.auth(3, &[]);
                self.flush().await?;
                let body = self.read_auth_message("password").await?;
                let mut r = codec::BodyReader::new(body);
                let ok = match r.cstring() {
                    Ok(pw) => config.check_cleartext(user, &pw),
                    Err(_) => false,
                };
                if !ok {
                    self.auth_failed(user).await?;
                }
            }
            AuthMethod::Md5 => {
                let salt = match super::auth::random_bytes::<4>() {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::error!("{e}");
                        return self
                            .fatal(fatal("XX000", "could not generate random salt"))
                            .await;
                    }
                };
                self.out.auth(5, &salt);
                self.flush().await?;
                let body = self.read_auth_message("password").await?;
                let mut r = codec::BodyReader::new(body);
                let ok = match r.cstring() {
                    Ok(resp) => config.check_md5(user, &salt, &resp),
                    Err(_) => false,
                };
                if !ok {
                    self.auth_failed(user).await?;
                }
            }
            AuthMethod::Scram => self.scram(&config, user).await?,
        }
        self.out.auth(0, &[]);
        Ok(())
    }

    async fn scram(&mut self, config: &super::AuthConfig, user: &str) -> R<()> {
        const MECHANISM: &str = "SCRAM-SHA-256";
        self.out.auth_sasl(&[MECHANISM]);
        self.flush().await?;
        let body = self.read_auth_message("SASL").await?;
        let mut r = codec::BodyReader::new(body);
        let initial = (|| -> Result<(String, Bytes), PgError> {
            let mechanism = r.cstring()?;
            let len = r.i32()?;
            let data = if len < 0 {
                Bytes::new()
            } else {
                r.bytes(usize::try_from(len).unwrap_or(0))?
            };
            r.end()?;
            Ok((mechanism, data))
        })();
        let (mechanism, client_first) = match initial {
            Ok(v) => v,
            Err(e) => return self.fatal(fatal(&e.code, e.message)).await,
        };
        if mechanism != MECHANISM {
            return self
                .fatal(fatal(
                    "08P01",
                    "client selected an invalid SASL authentication mechanism",
                ))
                .await;
        }
        let secret = match config.scram_secret_for(user) {
            Ok(s) => s,
            Err(e) => {
                tracing::error!("{e}");
                return self
                    .fatal(fatal("XX000", "could not generate SCRAM secret"))
                    .await;
            }
        };
        let server = super::AuthConfig::scram_server();
        let (server_first, waiting) =
            match server.on_client_first_message_with_secret(&client_first, secret) {
                Ok(v) => v,
                Err(e) => return self.fatal(malformed_scram(e)).await,
            };
        self.out.auth(11, server_first.as_bytes());
        self.flush().await?;
        let client_final = self.read_auth_message("SASL").await?;
        match waiting.on_client_final_message(&client_final) {
            Ok(server_final) => {
                self.out.auth(12, server_final.as_bytes());
                Ok(())
            }
            Err(PgWireError::InvalidPassword(_)) => self.auth_failed(user).await,
            Err(e) => self.fatal(malformed_scram(e)).await,
        }
    }

    /// Authentication succeeded: open the session and send what PostgreSQL 15 sends.
    async fn ready(&mut self, startup: Startup) -> R<()> {
        let (pid, slot) = match self.shared.register() {
            Ok(v) => v,
            Err(e) => {
                tracing::error!("{e}");
                return self
                    .fatal(fatal("XX000", "could not generate backend key"))
                    .await;
            }
        };
        let secret = slot.secret;
        self.cancel = Some(slot);
        self.pid = Some(pid);
        let mut settings = Vec::new();
        let config = &self.shared.config;
        for (name, limit) in [
            ("statement_timeout", config.statement_timeout),
            (
                "idle_in_transaction_session_timeout",
                config.idle_in_transaction_timeout,
            ),
        ] {
            if let Some(t) = limit {
                settings.push((name.to_string(), t.as_millis().to_string()));
            }
        }
        settings.extend(startup.settings);
        let options = SessionOptions {
            read_only: config.auth.is_read_only(&startup.user),
            user: startup.user,
            database: startup.database,
            settings,
            backend_pid: pid,
            client_addr: Some(self.peer.ip().to_canonical().to_string()),
            client_port: Some(i32::from(self.peer.port())),
            // Stamped by the service, which owns the clock.
            backend_start: 0,
        };
        let opened = match self.backend.open_session(&options) {
            Ok(o) => o,
            Err(mut e) => {
                e.severity = "FATAL".into();
                return self.fatal(e).await;
            }
        };
        self.sid = Some(opened.id);
        if let Some(slot) = &self.cancel {
            let (backend, sid) = (self.backend.clone(), opened.id);
            slot.set_direct(Box::new(move |terminate| {
                let reason = if terminate {
                    fatal(
                        "57P01",
                        "terminating connection due to administrator command",
                    )
                } else {
                    canceled()
                };
                backend.interrupt(sid, reason)
            }));
        }
        tracing::info!(peer = %self.peer, pid, user = %options.user, database = %options.database, read_only = options.read_only, "session started");
        // PostgreSQL 15's GUC_REPORT set, in the order it sends them, as the core has them.
        self.apply_settings(opened.settings, true);
        self.out.backend_key_data(pid, secret);
        self.out.ready(TxnStatus::Idle);
        self.flush().await
    }

    /// Takes the settings the core reports changed: the timeouts this connection enforces,
    /// and ParameterStatus for the others (sent now at start-up, else before the next
    /// ReadyForQuery, where PostgreSQL reports them).
    fn apply_settings(&mut self, settings: Vec<(String, String)>, now: bool) {
        for (name, value) in settings {
            let limit = rocklake_core::settings::timeout_millis(&value).map(Duration::from_millis);
            match name.as_str() {
                "statement_timeout" => self.statement_timeout = limit,
                "idle_in_transaction_session_timeout" => self.idle_in_transaction_timeout = limit,
                _ if now => self.out.parameter_status(&name, &value),
                _ => self.out.setting_changed(&name, &value),
            }
        }
    }

    // ---------------------------------------------------------------- message reading

    /// Wait until input is available or the server shuts down (then end the session as
    /// PostgreSQL's fast shutdown does).
    async fn wait_for_input(&mut self) -> R<()> {
        let slot = self.cancel.clone();
        if *self.stop.borrow() || slot.as_ref().is_some_and(|s| s.is_terminating()) {
            return self
                .fatal(fatal(
                    "57P01",
                    "terminating connection due to administrator command",
                ))
                .await;
        }
        let idle_limit = match self.status {
            TxnStatus::Idle => None,
            _ => self.idle_in_transaction_timeout,
        };
        let idle_expired = async {
            match idle_limit {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let terminated = async {
            match &slot {
                Some(s) => s.terminate.notified().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            // fill_buf is cancel-safe: nothing is consumed until a whole message is read below.
            _ = idle_expired => {
                self.fatal(fatal("25P03", "terminating connection due to idle-in-transaction timeout")).await
            }
            r = self.reader.fill_buf() => {
                if r?.is_empty() {
                    return Err(Exit::Closed);
                }
                Ok(())
            }
            _ = self.stop.changed() => {
                self.fatal(fatal("57P01", "terminating connection due to administrator command")).await
            }
            _ = terminated => {
                self.fatal(fatal("57P01", "terminating connection due to administrator command")).await
            }
        }
    }

    /// Read a message header and body with PostgreSQL's type and length checks. `in_copy`
    /// switches to the COPY FROM STDIN rules.
    async fn read_raw(&mut self, in_copy: bool) -> R<Raw> {
        let ty = self.reader.read_u8().await?;
        if in_copy {
            if !matches!(ty, b'd' | b'c' | b'f' | b'H' | b'S') {
                // PostgreSQL raises this before reading the body, so it also loses message
                // synchronisation and ends the connection.
                self.out.error(&PgError::new(
                    "08P01",
                    format!("unexpected message type 0x{ty:02X} during COPY from stdin"),
                ));
                if let Some(sid) = self.sid {
                    let _ = self.backend.copy_in_fail(sid, "protocol violation").await;
                }
                self.fatal(fatal(
                    "08P01",
                    "terminating connection because protocol synchronization was lost",
                ))
                .await?;
            }
        } else if !codec::is_known_type(ty) {
            self.fatal(fatal(
                "08P01",
                format!("invalid frontend message type {ty}"),
            ))
            .await?;
        }
        let len = self.reader.read_i32().await?;
        let limit = if codec::is_large_type(ty) {
            codec::LARGE_MESSAGE_LIMIT
        } else {
            codec::SMALL_MESSAGE_LIMIT
        };
        let body_len = match usize::try_from(len) {
            Ok(l) if l >= 4 && l - 4 <= limit => l - 4,
            _ => {
                self.fatal(fatal("08P01", "invalid message length")).await?;
                return Err(Exit::Closed);
            }
        };
        if codec::is_large_type(ty) && body_len > self.shared.config.max_message_bytes {
            // Skip the body without buffering it, so an oversized statement costs no memory and
            // the connection stays in sync.
            let mut remaining = body_len as u64;
            let mut sink = tokio::io::sink();
            while remaining > 0 {
                let n = tokio::io::copy(&mut (&mut self.reader).take(remaining), &mut sink).await?;
                if n == 0 {
                    return Err(Exit::Closed);
                }
                remaining -= n;
            }
            return Ok(Raw::TooLarge(ty, body_len));
        }
        let mut body = BytesMut::zeroed(body_len);
        self.reader.read_exact(&mut body).await?;
        Ok(Raw::Msg(ty, body.freeze()))
    }

    fn too_large(&self, ty: u8, len: usize) -> PgError {
        let what = if ty == b'd' {
            "COPY data message"
        } else {
            "statement"
        };
        PgError::new(
            "54000",
            format!(
                "{what} is too large ({len} bytes, the limit is {} bytes)",
                self.shared.config.max_message_bytes
            ),
        )
        .with_hint("Raise the server's message size limit or split the statement.")
    }

    // ---------------------------------------------------------------- query loop

    async fn query_loop(&mut self) -> R<()> {
        loop {
            if self.skip_till_sync {
                // PostgreSQL sends an error at once (elog.c flushes it), so a client that
                // ended its Parse/Describe with Flush, as asyncpg does, hears it before Sync.
                self.flush().await?;
            }
            self.wait_for_input().await?;
            let raw = self.read_raw(false).await?;
            let (ty, body) = match raw {
                Raw::TooLarge(ty, len) => {
                    if self.skip_till_sync {
                        continue;
                    }
                    let e = self.too_large(ty, len);
                    match ty {
                        b'Q' | b'F' => self.simple_error(e).await?,
                        b'd' => {} // COPY data outside COPY is ignored, as by PostgreSQL.
                        _ => self.ext_error(e),
                    }
                    continue;
                }
                Raw::Msg(ty, body) => (ty, body),
            };
            if self.skip_till_sync && ty != b'S' {
                // PostgreSQL discards everything up to Sync after an extended-protocol error.
                if ty == b'X' {
                    return Ok(());
                }
                continue;
            }
            let msg = match codec::decode(ty, body) {
                Ok(m) => m,
                Err(e) => {
                    match ty {
                        b'Q' | b'F' | b'S' => {
                            self.skip_till_sync = false;
                            self.simple_error(e).await?;
                        }
                        b'd' | b'c' | b'f' | b'X' => {}
                        _ => self.ext_error(e),
                    }
                    continue;
                }
            };
            match msg {
                Frontend::Query(sql) => self.simple_query(sql).await?,
                Frontend::Parse {
                    name,
                    sql,
                    param_types,
                } => self.parse(name, sql, param_types).await?,
                Frontend::Bind {
                    portal,
                    statement,
                    param_formats,
                    params,
                    result_formats,
                } => self.bind(portal, statement, &param_formats, params, result_formats),
                Frontend::Describe { kind, name } => self.describe(kind, &name).await,
                Frontend::Execute { portal, max_rows } => self.execute(&portal, max_rows).await?,
                Frontend::Close { kind, name } => {
                    // Closing something that does not exist is not an error.
                    if kind == b'S' {
                        self.statements.remove(&name);
                    } else {
                        self.portals.remove(&name);
                    }
                    self.out.close_complete();
                }
                Frontend::Sync => {
                    self.skip_till_sync = false;
                    let abort = std::mem::take(&mut self.failed_before_sync);
                    if std::mem::take(&mut self.executed) {
                        // PostgreSQL commits the Executes' implicit transaction here (rolls it
                        // back after an error).
                        let backend = self.backend.clone();
                        let sid = self.sid();
                        if let Some(reply) = self.interruptible(backend.sync(sid, abort)).await {
                            let reply = self.send_reply(reply, Proto::Extended, 0).await?;
                            // A block the server failed stays failed.
                            if !(self.poisoned && self.status == TxnStatus::Failed) {
                                self.status = reply.status;
                            }
                            if let Some(e) = &reply.error {
                                self.out.error(e);
                            }
                        }
                    }
                    if self.status == TxnStatus::Idle {
                        // The (implicit or explicit) transaction has ended: its portals with it.
                        self.portals.clear();
                    }
                    self.out.ready(self.status);
                    self.flush().await?;
                }
                Frontend::Flush => self.flush().await?,
                Frontend::Terminate => return Ok(()),
                // Leftovers of a COPY that already ended with an error: PostgreSQL ignores them.
                Frontend::CopyData(_) | Frontend::CopyDone | Frontend::CopyFail(_) => {}
                Frontend::FunctionCall => {
                    self.simple_error(PgError::new(
                        "0A000",
                        "the function call protocol is not supported",
                    ))
                    .await?
                }
            }
        }
    }

    /// The server itself failed a statement: inside a transaction block that aborts the block.
    fn server_failed_statement(&mut self) {
        if self.status == TxnStatus::InBlock {
            self.poisoned = true;
            self.status = TxnStatus::Failed;
        }
    }

    /// An error answered in simple-query style: ErrorResponse + ReadyForQuery.
    async fn simple_error(&mut self, e: PgError) -> R<()> {
        self.out.error(&e);
        self.server_failed_statement();
        self.out.ready(self.status);
        self.flush().await
    }

    /// An error in the extended protocol: ErrorResponse, then skip to Sync.
    fn ext_error(&mut self, e: PgError) {
        self.out.error(&e);
        self.server_failed_statement();
        self.skip_till_sync = true;
        self.failed_before_sync = true;
    }

    /// Run a backend request that a CancelRequest or the statement timeout may interrupt: the
    /// backend is told and decides (see [`Backend::interrupt`]); its reply is awaited either way.
    async fn interruptible<T>(&mut self, fut: impl std::future::Future<Output = T>) -> T {
        let sid = self.sid();
        let slot = self.cancel.clone();
        // Armed, a CancelRequest interrupts the backend directly (`CancelSlot::set_direct`);
        // the trigger's receiver is not needed here.
        if let Some(s) = &slot {
            drop(s.arm());
        }
        let timeout = self.statement_timeout;
        if let Some(t) = timeout {
            let deadline = std::time::Instant::now() + t;
            self.backend
                .set_deadline(sid, Some((deadline, statement_timed_out())));
        }
        tokio::pin!(fut);
        let timed_out = async {
            match timeout {
                Some(t) => {
                    tokio::time::sleep(t).await;
                    statement_timed_out()
                }
                None => std::future::pending().await,
            }
        };
        let result = tokio::select! {
            biased;
            r = &mut fut => r,
            reason = timed_out => {
                self.backend.interrupt(sid, reason);
                fut.await
            }
        };
        if let Some(s) = &slot {
            s.disarm();
        }
        if timeout.is_some() {
            self.backend.set_deadline(sid, None);
        }
        result
    }

    /// Run a backend call that changes nothing and that a CancelRequest may drop; `None` when
    /// it was cancelled.
    async fn cancellable<T>(&mut self, fut: impl std::future::Future<Output = T>) -> Option<T> {
        let Some(slot) = self.cancel.clone() else {
            return Some(fut.await);
        };
        let rx = slot.arm();
        let result = tokio::select! {
            biased;
            r = fut => Some(r),
            Ok(()) = rx => None,
        };
        slot.disarm();
        result
    }

    fn sid(&self) -> SessionId {
        // Only called after start-up, which always sets the session.
        self.sid.unwrap_or(SessionId(0))
    }

    /// The SQL actually sent to the service: in a block the server aborted, only a
    /// transaction end passes, as ROLLBACK.
    fn gate(&self, sql: &str) -> Result<String, PgError> {
        if !self.poisoned {
            return Ok(sql.to_owned());
        }
        if is_txn_end(sql) {
            Ok("ROLLBACK".to_owned())
        } else if is_rollback_to(sql) {
            Ok(sql.to_owned())
        } else {
            Err(in_failed_block())
        }
    }

    async fn simple_query(&mut self, sql: String) -> R<()> {
        // A simple query replaces the unnamed statement and portal, as in PostgreSQL.
        self.statements.remove("");
        self.portals.remove("");
        let sql = match self.gate(&sql) {
            Ok(s) => s,
            Err(e) => return self.simple_error(e).await,
        };
        if let Some(tag) = self.deallocate(&sql) {
            self.out.command_complete(tag);
            self.out.ready(self.status);
            return self.flush().await;
        }
        let backend = self.backend.clone();
        let sid = self.sid();
        tracing::debug!(pid = ?self.pid(), "query: {sql}");
        let reply = self.interruptible(backend.query(sid, &sql)).await;
        self.poisoned = false;
        let reply = self.send_reply(reply, Proto::Simple, 0).await?;
        if let Some(e) = &reply.error {
            self.out.error(e);
        }
        self.status = reply.status;
        if self.status == TxnStatus::Idle {
            // No transaction is open: any portal belonged to one that has ended.
            self.portals.clear();
        }
        self.out.ready(self.status);
        self.flush().await
    }

    /// The running portal's result formats when any column is wanted in binary.
    fn result_formats(&self, proto: Proto) -> Option<Vec<i16>> {
        if proto != Proto::Extended {
            return None;
        }
        let p = self.portals.get(&self.current_portal)?;
        p.formats.contains(&1).then(|| p.formats.clone())
    }

    /// `DEALLOCATE name | ALL` (the whole statement) of a statement the protocol's Parse
    /// prepared: those live in the connection. `None` when `sql` is something else, or
    /// names a statement SQL's PREPARE made (the core's, which answers for it, 26000 when it
    /// has none either); `DEALLOCATE ALL` forgets the connection's and goes on to the core.
    /// In a failed transaction block the core answers (25P02) and nothing is forgotten.
    fn deallocate(&mut self, sql: &str) -> Option<&'static str> {
        if self.status == TxnStatus::Failed {
            return None;
        }
        match deallocate_target(sql)? {
            None => {
                self.statements.clear();
                None
            }
            Some(name) if self.statements.remove(&name).is_some() => Some("DEALLOCATE"),
            Some(_) => None,
        }
    }

    /// Send the outputs of a reply, running COPY FROM STDIN sub-protocols as they come, and
    /// return the reply whose error and status end the request (the last continuation).
    async fn send_reply(&mut self, mut reply: Reply, proto: Proto, max_rows: usize) -> R<Reply> {
        loop {
            self.apply_settings(std::mem::take(&mut reply.settings), false);
            let outputs = std::mem::take(&mut reply.outputs);
            let count = outputs.len();
            let mut copy_in = None;
            for (i, output) in outputs.into_iter().enumerate() {
                match output {
                    Output::Rows { fields, rows, tag } => {
                        if proto == Proto::Simple {
                            self.out.row_description(&fields);
                        }
                        let rows = match self.result_formats(proto) {
                            Some(formats) => match binary_rows(rows, &fields, &formats) {
                                Ok(rows) => rows,
                                Err(e) => {
                                    reply.error = Some(e);
                                    return Ok(reply);
                                }
                            },
                            None => rows,
                        };
                        let last = i + 1 == count && reply.error.is_none();
                        // A result of exactly `max_rows` rows also suspends, as in PostgreSQL
                        // (it does not look past them): the next Execute ends it with none.
                        if proto == Proto::Extended
                            && last
                            && max_rows > 0
                            && rows.len() >= max_rows
                        {
                            for body in rows.bodies().take(max_rows) {
                                self.out.data_row(body);
                            }
                            self.out.portal_suspended();
                            if let Some(p) = self.portals.get_mut(&self.current_portal) {
                                p.pending = Some((rows, max_rows, tag));
                            }
                            return Ok(reply);
                        }
                        for body in rows.bodies() {
                            self.out.data_row(body);
                            self.maybe_flush().await?;
                        }
                        self.out.command_complete(&tag);
                        if proto == Proto::Extended && last {
                            if let Some(p) = self.portals.get_mut(&self.current_portal) {
                                p.finished = Some(Finished::NoMoreRows(tag_with_count(&tag, 0)));
                            }
                        }
                    }
                    Output::Command { tag } => {
                        if tag == "DISCARD ALL" {
                            // DISCARD ALL includes DEALLOCATE ALL and CLOSE ALL.
                            self.statements.clear();
                            self.portals.clear();
                        }
                        self.out.command_complete(&tag)
                    }
                    Output::Empty => self.out.empty_query(),
                    Output::Notice(e) => self.out.notice(&e),
                    Output::Signal { pid, terminate } => self.shared.signal(pid, terminate),
                    Output::CopyOut {
                        binary,
                        columns,
                        chunks,
                        tag,
                    } => {
                        self.out.copy_out_response(binary, columns);
                        for chunk in chunks.iter() {
                            self.out.copy_data(chunk);
                            self.maybe_flush().await?;
                        }
                        self.out.copy_done();
                        self.out.command_complete(&tag);
                    }
                    Output::CopyIn { binary, columns } => {
                        if i + 1 != count {
                            tracing::error!("backend returned outputs after CopyIn; ignoring them");
                        }
                        copy_in = Some((binary, columns));
                        break;
                    }
                }
            }
            let Some((binary, columns)) = copy_in else {
                if let Some(e) = reply.error.as_ref().filter(|e| e.severity == "FATAL") {
                    // The core ended the session (`pg_terminate_backend` of its own backend).
                    self.fatal(e.clone()).await?;
                }
                return Ok(reply);
            };
            self.out.copy_in_response(binary, columns);
            self.flush().await?;
            reply = self.copy_in().await?;
        }
    }

    /// The COPY FROM STDIN sub-protocol: route CopyData/CopyDone/CopyFail to the service until
    /// the copy ends; returns the continuation reply.
    async fn copy_in(&mut self) -> R<Reply> {
        let backend = self.backend.clone();
        let sid = self.sid();
        let slot = self.cancel.clone();
        let mut cancel_rx = slot.as_ref().map(|s| s.arm());
        let result = self.copy_in_inner(&backend, sid, &mut cancel_rx).await;
        if let Some(s) = &slot {
            s.disarm();
        }
        result
    }

    async fn copy_in_inner(
        &mut self,
        backend: &Arc<B>,
        sid: SessionId,
        cancel_rx: &mut Option<oneshot::Receiver<()>>,
    ) -> R<Reply> {
        let slot = self.cancel.clone();
        loop {
            // Wait for client data, a CancelRequest or `pg_terminate_backend` (a COPY waiting
            // for its client ends at once, its rows not committed, as in PostgreSQL).
            // Shutdown is not checked here: the copy runs to its end within the grace period,
            // like any other running statement.
            let terminate_now = slot.as_ref().is_some_and(|s| s.is_terminating());
            let cancel_state = {
                let wait_cancel = async {
                    match cancel_rx.as_mut() {
                        Some(rx) => rx.await.is_ok(),
                        None => std::future::pending().await,
                    }
                };
                let terminated = async {
                    match &slot {
                        Some(s) if !terminate_now => s.terminate.notified().await,
                        _ if terminate_now => {}
                        _ => std::future::pending().await,
                    }
                };
                tokio::select! {
                    biased;
                    () = terminated => {
                        let message = "terminating connection due to administrator command";
                        let _ = backend.copy_in_fail(sid, message).await;
                        self.fatal(fatal("57P01", message)).await?;
                        return Err(Exit::Closed);
                    }
                    fired = wait_cancel => Some(fired),
                    r = self.reader.fill_buf() => {
                        if r?.is_empty() {
                            return Err(Exit::Closed);
                        }
                        None
                    }
                }
            };
            match cancel_state {
                Some(true) => {
                    *cancel_rx = None;
                    return Ok(self.end_copy_with_error(backend, sid, canceled()).await);
                }
                // The trigger went away without firing; stop watching it (a finished receiver
                // must not be polled again).
                Some(false) => {
                    *cancel_rx = None;
                    continue;
                }
                None => {}
            }
            let (ty, body) = match self.read_raw(true).await? {
                Raw::TooLarge(ty, len) => {
                    let e = self.too_large(ty, len);
                    return Ok(self.end_copy_with_error(backend, sid, e).await);
                }
                Raw::Msg(ty, body) => (ty, body),
            };
            let msg = match codec::decode(ty, body) {
                Ok(m) => m,
                Err(e) => return Ok(self.end_copy_with_error(backend, sid, e).await),
            };
            match msg {
                Frontend::CopyData(data) => {
                    if let Err(e) = backend.copy_in_data(sid, &data).await {
                        return Ok(self.end_copy_with_error(backend, sid, e).await);
                    }
                }
                Frontend::CopyDone => {
                    // A cancel from here on reaches the backend directly.
                    return Ok(backend.copy_in_done(sid).await);
                }
                Frontend::CopyFail(message) => {
                    let mut reply = backend.copy_in_fail(sid, &message).await;
                    if reply.error.is_none() {
                        reply.error = Some(PgError::new(
                            "57014",
                            format!("COPY from stdin failed: {message}"),
                        ));
                    }
                    return Ok(reply);
                }
                // PostgreSQL ignores Flush and Sync during COPY FROM STDIN.
                _ => {}
            }
        }
    }

    /// Abort the running COPY in the service and report `e` with the service's resulting status.
    async fn end_copy_with_error(&mut self, backend: &Arc<B>, sid: SessionId, e: PgError) -> Reply {
        let mut reply = backend.copy_in_fail(sid, &e.message).await;
        reply.outputs.clear();
        reply.error = Some(e);
        reply
    }

    // ---------------------------------------------------------------- extended protocol

    async fn parse(&mut self, name: String, sql: String, param_types: Vec<u32>) -> R<()> {
        if !name.is_empty() {
            if self.statements.contains_key(&name) {
                self.ext_error(PgError::new(
                    "42P05",
                    format!("prepared statement \"{name}\" already exists"),
                ));
                return Ok(());
            }
            if self.statements.len() >= MAX_NAMED {
                self.ext_error(PgError::new(
                    "54000",
                    format!(
                        "too many prepared statements on this connection (at most {MAX_NAMED})"
                    ),
                ));
                return Ok(());
            }
        }
        if let Err(e) = self.gate(&sql) {
            self.ext_error(e);
            return Ok(());
        }
        let backend = self.backend.clone();
        let sid = self.sid();
        tracing::debug!(pid = ?self.pid(), "parse: {sql}");
        // Parameters are described as NULLs of their types and bound as literals.
        let nparams = match rocklake_core::params::count(&sql) {
            Ok(n) => n.max(param_types.len()),
            Err(e) => {
                if name.is_empty() {
                    self.statements.remove("");
                }
                self.ext_error(e);
                return Ok(());
            }
        };
        let shape = if nparams > 0 {
            rocklake_core::params::for_describe(&sql, &param_types)
        } else {
            sql.clone()
        };
        let described = if deallocate_target(&sql).is_some() {
            // Handled by the connection at Execute; it returns no rows.
            Ok(Describe {
                param_types: vec![],
                fields: None,
            })
        } else {
            match self.cancellable(backend.describe(sid, &shape)).await {
                None => Err(canceled()),
                // The described text has stand-ins for the typed `$n`: its positions are
                // moved back onto the client's text.
                Some(Err(mut e)) if nparams > 0 => {
                    e.position = e.position.and_then(|p| {
                        rocklake_core::params::describe_position(&sql, &param_types, p)
                    });
                    Err(e)
                }
                Some(r) => r,
            }
        };
        match described {
            Ok(mut describe) => {
                // Types the client specified win, then those the core inferred from the
                // statement; a parameter with neither is not in the statement at all.
                let inferred = std::mem::take(&mut describe.param_types);
                let types: Vec<u32> = (0..nparams.max(inferred.len()))
                    .map(|i| match (param_types.get(i), inferred.get(i)) {
                        (Some(t), _) if *t != 0 => *t,
                        (_, Some(t)) => *t,
                        _ => 0,
                    })
                    .collect();
                if let Some(i) = types.iter().position(|t| *t == 0) {
                    if name.is_empty() {
                        self.statements.remove("");
                    }
                    self.ext_error(PgError::new(
                        "42P18",
                        format!("could not determine data type of parameter ${}", i + 1),
                    ));
                    return Ok(());
                }
                describe.param_types = types;
                self.statements.insert(
                    name,
                    Prepared {
                        sql,
                        describe,
                        given_types: param_types,
                    },
                );
                self.out.parse_complete();
            }
            Err(e) => {
                if name.is_empty() {
                    self.statements.remove("");
                }
                self.ext_error(e);
            }
        }
        Ok(())
    }

    fn bind(
        &mut self,
        portal: String,
        statement: String,
        param_formats: &[i16],
        params: Vec<Option<Bytes>>,
        result_formats: Vec<i16>,
    ) {
        let Some(stmt) = self.statements.get(&statement) else {
            return self.ext_error(PgError::new(
                "26000",
                if statement.is_empty() {
                    "unnamed prepared statement does not exist".to_string()
                } else {
                    format!("prepared statement \"{statement}\" does not exist")
                },
            ));
        };
        let stmt = Prepared {
            sql: stmt.sql.clone(),
            describe: stmt.describe.clone(),
            given_types: stmt.given_types.clone(),
        };
        if !portal.is_empty() {
            if self.portals.contains_key(&portal) {
                return self.ext_error(PgError::new(
                    "42P03",
                    format!("cursor \"{portal}\" already exists"),
                ));
            }
            if self
                .portals
                .values()
                .filter(|p| p.finished.is_none())
                .count()
                >= MAX_NAMED
            {
                return self.ext_error(PgError::new(
                    "54000",
                    format!("too many portals on this connection (at most {MAX_NAMED})"),
                ));
            }
        }
        let wanted = stmt.describe.param_types.len();
        if params.len() != wanted {
            return self.ext_error(PgError::new(
                "08P01",
                format!("bind message supplies {} parameters, but prepared statement \"{statement}\" requires {wanted}", params.len()),
            ));
        }
        if param_formats.len() > 1 && param_formats.len() != params.len() {
            return self.ext_error(PgError::new(
                "08P01",
                format!(
                    "bind message has {} parameter formats but {} parameters",
                    param_formats.len(),
                    params.len()
                ),
            ));
        }
        let mut texts = Vec::with_capacity(params.len());
        // PostgreSQL's CONTEXT for a parameter that does not convert. Its value shows as
        // `'...'`: `log_parameter_max_length_on_error` is 0, so none of it is shown.
        let param_context = |i: usize, value: Option<&str>| {
            let value = match value {
                Some("") => " = ''".to_string(),
                Some(_) => " = '...'".to_string(),
                None => String::new(),
            };
            if portal.is_empty() {
                format!("unnamed portal parameter ${}{value}", i + 1)
            } else {
                format!("portal \"{portal}\" parameter ${}{value}", i + 1)
            }
        };
        for (i, p) in params.iter().enumerate() {
            let format = match param_formats {
                [] => 0,
                [one] => *one,
                many => many[i],
            };
            let oid = stmt.describe.param_types.get(i).copied().unwrap_or(25);
            texts.push(match p {
                None => None,
                Some(b) if format == 0 => match std::str::from_utf8(b) {
                    Ok(s) => {
                        // A value that does not read as its type fails the Bind, as the
                        // type's input function does in PostgreSQL (the same reading the
                        // statement would do).
                        if let Err(mut e) = rocklake_core::params::check_text(oid, s) {
                            e.context = Some(param_context(i, Some(s)));
                            return self.ext_error(e);
                        }
                        Some(s.to_string())
                    }
                    Err(_) => {
                        let mut e = rocklake_core::params::invalid_utf8(b);
                        e.context = Some(param_context(i, None));
                        return self.ext_error(e);
                    }
                },
                Some(b) => match rocklake_core::params::decode_binary(oid, b) {
                    Ok(s) => Some(s),
                    Err(mut e) => {
                        if e.code == "22P03" {
                            e.message =
                                format!("incorrect binary data format in bind parameter {}", i + 1);
                        }
                        e.context = Some(param_context(i, None));
                        return self.ext_error(e);
                    }
                },
            });
        }
        let sql = if params.is_empty() {
            stmt.sql.clone()
        } else {
            match rocklake_core::params::substitute(&stmt.sql, &stmt.given_types, &texts) {
                Ok(s) => s,
                Err(e) => return self.ext_error(e),
            }
        };
        let columns = stmt.describe.fields.as_ref().map_or(0, Vec::len);
        if result_formats.len() > 1 && result_formats.len() != columns {
            return self.ext_error(PgError::new(
                "08P01",
                format!(
                    "bind message has {} result formats but query has {columns} columns",
                    result_formats.len()
                ),
            ));
        }
        if let Some(f) = result_formats.iter().find(|f| !matches!(f, 0 | 1)) {
            return self.ext_error(PgError::new(
                "22023",
                format!("unsupported format code: {f}"),
            ));
        }
        let fields = stmt.describe.fields.clone();
        for (i, f) in fields.iter().flatten().enumerate() {
            if super::codec::result_format(&result_formats, i) == 1
                && !rocklake_core::params::binary_result_supported(f.type_oid)
            {
                return self.ext_error(PgError::new(
                    "0A000",
                    format!(
                        "binary format for results of type {} is not supported",
                        f.type_oid
                    ),
                ));
            }
        }
        self.portals.insert(
            portal,
            Portal {
                sql,
                fields,
                formats: result_formats,
                pending: None,
                finished: None,
                bound: !params.is_empty(),
            },
        );
        self.out.bind_complete();
    }

    async fn describe(&mut self, kind: u8, name: &str) {
        if kind == b'S' {
            let Some(stmt) = self.statements.get(name) else {
                return self.ext_error(PgError::new(
                    "26000",
                    if name.is_empty() {
                        "unnamed prepared statement does not exist".to_string()
                    } else {
                        format!("prepared statement \"{name}\" does not exist")
                    },
                ));
            };
            let (types, fields) = (
                stmt.describe.param_types.clone(),
                stmt.describe.fields.clone(),
            );
            self.out.parameter_description(&types);
            match fields {
                Some(f) => self.out.row_description(&f),
                None => self.out.no_data(),
            }
        } else {
            let Some(portal) = self.portals.get(name) else {
                // A cursor DECLAREd in SQL is a portal too (psycopg's server-side cursors
                // describe theirs): its columns are a FETCH's.
                return self.describe_cursor(name).await;
            };
            match portal.fields.clone() {
                Some(f) => {
                    let formats = portal.formats.clone();
                    self.out.row_description_formats(&f, &formats)
                }
                None => self.out.no_data(),
            }
        }
    }

    /// Describe of a portal the protocol did not create: the SQL cursor of that name, or
    /// PostgreSQL's 34000 for the portal.
    async fn describe_cursor(&mut self, name: &str) {
        let missing = || PgError::new("34000", format!("portal \"{name}\" does not exist"));
        if name.is_empty() {
            return self.ext_error(missing());
        }
        let backend = self.backend.clone();
        let sid = self.sid();
        let sql = format!("FETCH 0 FROM \"{}\"", name.replace('"', "\"\""));
        match self.cancellable(backend.describe(sid, &sql)).await {
            Some(Ok(d)) => match d.fields {
                Some(f) => self.out.row_description(&f),
                None => self.out.no_data(),
            },
            Some(Err(e)) if e.code == "34000" => self.ext_error(missing()),
            Some(Err(e)) => self.ext_error(e),
            None => self.ext_error(canceled()),
        }
    }

    async fn execute(&mut self, name: &str, max_rows: i32) -> R<()> {
        let Some(portal) = self.portals.get_mut(name) else {
            self.ext_error(PgError::new(
                "34000",
                format!("portal \"{name}\" does not exist"),
            ));
            return Ok(());
        };
        let max_rows = usize::try_from(max_rows).unwrap_or(0);
        if self.status == TxnStatus::Failed
            && (portal.finished.is_some() || portal.pending.is_some())
        {
            // Only a COMMIT or ROLLBACK runs in a failed block, and such a portal is none.
            self.ext_error(in_failed_block());
            return Ok(());
        }
        match portal.finished.clone() {
            Some(Finished::NoMoreRows(tag)) => {
                self.out.command_complete(&tag);
                return Ok(());
            }
            Some(Finished::Empty) => {
                self.out.empty_query();
                return Ok(());
            }
            Some(Finished::NotRunnable) => {
                self.ext_error(PgError::new(
                    "55000",
                    format!("portal \"{name}\" cannot be run"),
                ));
                return Ok(());
            }
            None => {}
        }
        if let Some((rows, sent, tag)) = portal.pending.take() {
            let left = rows.len().saturating_sub(sent);
            let n = if max_rows == 0 {
                left
            } else {
                max_rows.min(left)
            };
            for body in rows.bodies().skip(sent).take(n) {
                self.out.data_row(body);
            }
            // PostgreSQL suspends again after a full batch even when no row is left.
            if max_rows == 0 || n < max_rows {
                self.out.command_complete(&tag_with_count(&tag, n));
                portal.finished = Some(Finished::NoMoreRows(tag_with_count(&tag, 0)));
                // Only the answer to another Execute is left to keep.
                portal.sql = String::new();
            } else {
                self.out.portal_suspended();
                portal.pending = Some((rows, sent + n, tag));
            }
            return Ok(());
        }
        let portal_sql = portal.sql.clone();
        let bound = portal.bound;
        let sql = match self.gate(&portal_sql) {
            Ok(s) => s,
            Err(e) => {
                self.ext_error(e);
                return Ok(());
            }
        };
        if let Some(tag) = self.deallocate(&sql) {
            if let Some(p) = self.portals.get_mut(name) {
                p.finished = Some(Finished::NotRunnable);
            }
            self.out.command_complete(tag);
            return Ok(());
        }
        let backend = self.backend.clone();
        let sid = self.sid();
        tracing::debug!(pid = ?self.pid(), "execute: {sql}");
        // The Execute just before a Sync (libpq's and JDBC's usual one per Sync) runs as a query:
        // its implicit transaction ends with it, as at the Sync, in one call to the core.
        let sync_next = self.reader.buffer().starts_with(&[b'S', 0, 0, 0, 4]);
        let mut reply = if sync_next {
            self.interruptible(backend.query(sid, &sql)).await
        } else {
            self.executed = true;
            self.interruptible(backend.execute(sid, &sql)).await
        };
        if bound {
            if let Some(e) = reply.error.as_mut() {
                e.position = None;
            }
        }
        self.poisoned = false;
        self.current_portal = name.to_string();
        let empty = matches!(reply.outputs.as_slice(), [Output::Empty]);
        let was = self.status;
        let reply = self.send_reply(reply, Proto::Extended, max_rows).await?;
        self.status = reply.status;
        if was != TxnStatus::Idle && self.status == TxnStatus::Idle {
            // This Execute ended the transaction block (COMMIT, ROLLBACK): its portals too.
            self.portals.clear();
        } else if reply.error.is_some() {
            // A portal that failed is gone, with its transaction.
            self.portals.remove(name);
        } else if let Some(p) = self.portals.get_mut(name) {
            if p.pending.is_none() {
                if p.finished.is_none() {
                    p.finished = Some(if empty {
                        Finished::Empty
                    } else {
                        Finished::NotRunnable
                    });
                }
                // Only the answer to another Execute is left to keep.
                p.sql = String::new();
            }
        }
        if let Some(e) = &reply.error {
            self.out.error(e);
            self.skip_till_sync = true;
            // The core rolled back what it failed itself; an error of the server's own (a
            // result it could not send in binary) must roll back at the Sync too.
            self.failed_before_sync = true;
        }
        Ok(())
    }
}

/// Converts text result rows to the binary send format where `formats` ask for it.
fn binary_rows(rows: TextRows, fields: &[FieldDesc], formats: &[i16]) -> Result<TextRows, PgError> {
    let binary = |i| super::codec::result_format(formats, i) == 1;
    if !(0..fields.len()).any(binary) {
        return Ok(rows);
    }
    let mut out = TextRows::new();
    out.reserve(rows.byte_len(), rows.len());
    for row in rows.iter() {
        let values = row
            .enumerate()
            .map(|(i, cell)| match cell {
                Some(text) if binary(i) => {
                    let oid = fields.get(i).map_or(25, |f| f.type_oid);
                    rocklake_core::params::text_to_binary(oid, text).map(Some)
                }
                other => Ok(other.map(<[u8]>::to_vec)),
            })
            .collect::<Result<Vec<_>, PgError>>()?;
        out.push(values)
            .map_err(|_| PgError::new("54000", "result set exceeds 4 GiB"))?;
    }
    Ok(out)
}

/// `DEALLOCATE [PREPARE] name | ALL` as the whole query: `Some(None)` for ALL, `Some(name)`.
fn deallocate_target(sql: &str) -> Option<Option<String>> {
    // Every query comes here: look at its first word before splitting the whole text.
    let head = sql.trim_start().get(..10)?;
    if !head.eq_ignore_ascii_case("deallocate") {
        return None;
    }
    let words: Vec<&str> = sql
        .trim()
        .trim_end_matches(';')
        .split_whitespace()
        .collect();
    let rest = match words.as_slice() {
        [first, rest @ ..] if first.eq_ignore_ascii_case("deallocate") => rest,
        _ => return None,
    };
    let rest = match rest {
        [p, tail @ ..] if p.eq_ignore_ascii_case("prepare") => tail,
        other => other,
    };
    match rest {
        [all] if all.eq_ignore_ascii_case("all") => Some(None),
        [name] if name.starts_with('"') && name.ends_with('"') && name.len() >= 2 => {
            Some(Some(name[1..name.len() - 1].replace("\"\"", "\"")))
        }
        [name] => Some(Some(name.to_lowercase())),
        _ => None,
    }
}

fn malformed_scram(e: PgWireError) -> PgError {
    let mut err = fatal("08P01", "malformed SCRAM message");
    err.detail = Some(e.to_string());
    err
}

/// Parse the name/value pairs of a StartupMessage. Returns the start-up data and the `_pq_.`
/// protocol options we do not support (reported in NegotiateProtocolVersion).
fn parse_startup_params(body: &[u8]) -> Result<(Startup, Vec<String>), PgError> {
    let layout = || {
        fatal(
            "08P01",
            "invalid startup packet layout: expected terminator as last byte",
        )
    };
    if body.last() != Some(&0) {
        return Err(layout());
    }
    let mut parts = body[..body.len() - 1].split(|b| *b == 0);
    let mut user = None;
    let mut database = None;
    let mut settings = Vec::new();
    let mut unrecognized = Vec::new();
    while let Some(name) = parts.next() {
        if name.is_empty() {
            break;
        }
        let value = parts.next().ok_or_else(layout)?;
        let name = String::from_utf8_lossy(name).into_owned();
        let value = String::from_utf8_lossy(value).into_owned();
        match name.as_str() {
            "user" => user = Some(value),
            "database" => database = Some(value),
            "options" => settings.extend(command_line_settings(&value)?),
            // Asks for a walsender, which RockLake is not; PostgreSQL's own clients send
            // "false" or nothing.
            "replication" if !matches!(value.as_str(), "false" | "0" | "off" | "no") => {
                return Err(fatal(
                    "0A000",
                    "RockLake does not serve replication connections",
                ))
            }
            "replication" => {}
            n if n.starts_with("_pq_.") => unrecognized.push(name),
            // Every other parameter is a setting (application_name, client_encoding, ...),
            // checked by the core when the session opens.
            _ => settings.push((name, value)),
        }
    }
    let user = match user {
        Some(u) if !u.is_empty() => u,
        _ => {
            return Err(fatal(
                "28000",
                "no PostgreSQL user name specified in startup packet",
            ))
        }
    };
    let database = match database {
        Some(d) if !d.is_empty() => d,
        _ => user.clone(),
    };
    Ok((
        Startup {
            user,
            database,
            settings,
        },
        unrecognized,
    ))
}

/// The `-c name=value` / `--name=value` switches of the start-up `options` parameter
/// (whitespace separates them; a backslash escapes the next character).
fn command_line_settings(options: &str) -> Result<Vec<(String, String)>, PgError> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let invalid = |w: &str| {
        fatal(
            "42601",
            format!("invalid command-line argument for server process: {w}"),
        )
    };
    let mut out = Vec::new();
    let mut words = words.into_iter();
    while let Some(w) = words.next() {
        let assignment = if w == "-c" {
            words.next().ok_or_else(|| invalid(&w))?
        } else if let Some(rest) = w.strip_prefix("-c").or_else(|| w.strip_prefix("--")) {
            rest.to_string()
        } else {
            return Err(invalid(&w));
        };
        let (name, value) = assignment
            .split_once('=')
            .ok_or_else(|| fatal("42601", format!("-c {assignment} requires a value")))?;
        out.push((name.replace('-', "_"), value.to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{command_line_settings, deallocate_target, is_rollback_to, is_txn_end};

    #[test]
    fn startup_options_become_settings() {
        let got = command_line_settings(
            "-c statement_timeout=5s --application-name=a\\ b -cDateStyle=ISO",
        )
        .expect("valid");
        assert_eq!(
            got,
            [
                ("statement_timeout".to_string(), "5s".to_string()),
                ("application_name".to_string(), "a b".to_string()),
                ("DateStyle".to_string(), "ISO".to_string()),
            ]
        );
        assert!(command_line_settings("-x").is_err());
        assert!(command_line_settings("-c nothing").is_err());
    }

    #[test]
    fn deallocate_statements() {
        assert_eq!(deallocate_target("DEALLOCATE ALL"), Some(None));
        assert_eq!(deallocate_target("deallocate prepare all;"), Some(None));
        assert_eq!(
            deallocate_target("DEALLOCATE _pg3_0"),
            Some(Some("_pg3_0".into()))
        );
        assert_eq!(
            deallocate_target("DEALLOCATE \"Mixed\"\"q\""),
            Some(Some("Mixed\"q".into()))
        );
        assert_eq!(deallocate_target("DEALLOCATE a b"), None);
        assert_eq!(deallocate_target("SELECT 1"), None);
    }

    #[test]
    fn txn_end_detection() {
        assert!(is_txn_end("ROLLBACK"));
        assert!(is_txn_end(" rollback ; "));
        assert!(is_txn_end("COMMIT WORK"));
        assert!(is_txn_end("abort transaction"));
        assert!(!is_txn_end("ROLLBACK TO SAVEPOINT a"));
        assert!(!is_txn_end("SELECT 1"));
        assert!(!is_txn_end("ROLLBACK; SELECT 1"));
        assert!(is_rollback_to("ROLLBACK TO SAVEPOINT a"));
        assert!(is_rollback_to(" rollback work to b; "));
        assert!(!is_rollback_to("ROLLBACK"));
        assert!(!is_rollback_to("ROLLBACK TO a; SELECT 1"));
        assert!(!is_rollback_to("SAVEPOINT a"));
    }
}
