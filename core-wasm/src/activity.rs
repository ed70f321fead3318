//! What `pg_stat_activity` shows of the engine's sessions, and who may signal whom with
//! `pg_cancel_backend` / `pg_terminate_backend`.
//!
//! The host gives each session its backend pid, client address and connection time when it
//! opens it; every request brings its text and time. The engine runs one request at a time, so
//! the only session running a statement is the one that reads the view; another session is
//! `active` only while its commit is being made durable, while a COPY FROM STDIN takes its
//! data, between the Executes of a pipeline, or while its statement waits for an advisory lock
//! or a `pg_sleep`.

use std::collections::HashMap;

use crate::api::{SessionId, SessionOptions};
use crate::engine::Session;
use crate::error::SqlError;

/// PostgreSQL's `track_activity_query_size` (1024 bytes, its terminating NUL included).
const QUERY_BYTES: usize = 1023;

/// A session's connection facts and its latest request.
#[derive(Debug, Clone, Default)]
pub struct Activity {
    pub backend_pid: i32,
    /// The client's address as an `inet` value (parsed once, when the session opens).
    pub client_addr: Option<Vec<u8>>,
    pub client_port: Option<i32>,
    pub backend_start: i64,
    /// The latest request's text, cut at [`QUERY_BYTES`] on a character boundary.
    pub query: String,
    /// When the latest request started: also when the session's state last changed, since
    /// the core is given the time only at the start of a request.
    pub query_start: Option<i64>,
}

impl Activity {
    /// The session's connection facts; an address that is not an IP address is the host's
    /// error (22P02), reported when the session opens.
    pub fn new(opts: &SessionOptions) -> Result<Activity, SqlError> {
        let client_addr = match &opts.client_addr {
            Some(text) => Some(
                crate::inet::parse(text).ok_or_else(|| SqlError::InvalidText {
                    type_name: "inet".into(),
                    input: text.clone(),
                })?,
            ),
            None => None,
        };
        Ok(Activity {
            backend_pid: opts.backend_pid,
            client_addr,
            client_port: opts.client_port,
            backend_start: opts.backend_start,
            query: String::new(),
            query_start: None,
        })
    }

    /// A request with text `sql` starts at `now`.
    pub fn started(&mut self, sql: &str, now: i64) {
        let mut end = sql.len().min(QUERY_BYTES);
        while !sql.is_char_boundary(end) {
            end -= 1;
        }
        self.query.clear();
        self.query.push_str(&sql[..end]);
        self.query_start = Some(now);
    }
}

/// One row of `pg_stat_activity`.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivityRow {
    pub pid: i32,
    pub user: String,
    pub database: String,
    pub application_name: String,
    /// The reader may see the columns below (its own role's session, or it is a superuser);
    /// otherwise they are NULL and the query reads `<insufficient privilege>`.
    pub visible: bool,
    pub client_addr: Option<Vec<u8>>,
    pub client_port: Option<i32>,
    pub backend_start: i64,
    pub xact_start: Option<i64>,
    pub query_start: Option<i64>,
    pub state: &'static str,
    pub wait_event: Option<(&'static str, &'static str)>,
    /// The transaction's id once it has written (its `txid_current()`), and the first
    /// transaction id its REPEATABLE READ snapshot cannot see: shown to every reader, as in
    /// PostgreSQL.
    pub backend_xid: Option<u32>,
    pub backend_xmin: Option<u32>,
    pub query: String,
}

/// One row of `pg_locks`: an advisory lock with its session's pid and virtual transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownLock {
    pub row: crate::locks::LockRow,
    pub pid: i32,
    /// PostgreSQL's `backend/local transaction`: here the session's number and its
    /// transaction's serial.
    pub virtualtransaction: String,
}

/// The sessions a statement can see: its own (running) and the engine's others.
#[derive(Clone, Copy)]
pub struct Sessions<'a> {
    pub me: &'a Session,
    pub others: &'a HashMap<SessionId, Session>,
    /// The latest commit point (a READ COMMITTED transaction's id is `txid_current()` now).
    pub latest: u64,
}

/// Why a session may not signal another (PostgreSQL's `pg_signal_backend` outcomes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalTarget {
    /// The pid is the reader's own backend.
    Me,
    /// Another session of the engine the reader may signal.
    Other,
    /// No session has this pid (a WARNING and `false`).
    Unknown,
}

impl<'a> Sessions<'a> {
    fn all(&self) -> impl Iterator<Item = &'a Session> {
        std::iter::once(self.me).chain(self.others.values())
    }

    /// The rows of `pg_stat_activity`, ordered by connection time then pid.
    pub fn rows(&self) -> Vec<ActivityRow> {
        let superuser = !self.me.settings.read_only_role;
        let mut rows: Vec<ActivityRow> = self
            .all()
            .map(|s| {
                let me = std::ptr::eq(s, self.me);
                row_of(s, me, superuser || s.user == self.me.user, self.latest)
            })
            .collect();
        rows.sort_by_key(|r| (r.backend_start, r.pid));
        rows
    }

    /// The rows of `pg_locks`, each with the pid of its session.
    pub fn shown_locks(&self, locks: &crate::locks::Locks) -> Vec<ShownLock> {
        locks
            .rows()
            .into_iter()
            .filter_map(|row| {
                let s = self.all().find(|s| s.id == row.sid)?;
                let serial = s.txn.as_ref().map_or(s.next_txn_serial, |t| t.serial);
                Some(ShownLock {
                    pid: s.activity.backend_pid,
                    virtualtransaction: format!("{}/{}", s.id.0, serial),
                    row,
                })
            })
            .collect()
    }

    /// Whether the reader may signal the session with backend `pid`: PostgreSQL 15's rules,
    /// where only a superuser signals a superuser's backend and a role signals its own.
    /// `terminate` chooses the wording of the refusal.
    pub fn may_signal(&self, pid: i32, terminate: bool) -> Result<SignalTarget, SqlError> {
        let Some(target) = self.all().find(|s| s.activity.backend_pid == pid) else {
            return Ok(SignalTarget::Unknown);
        };
        let superuser = !self.me.settings.read_only_role;
        if !target.settings.read_only_role && !superuser {
            return Err(SqlError::InsufficientPrivilege {
                message: if terminate {
                    "must be a superuser to terminate superuser process"
                } else {
                    "must be a superuser to cancel superuser query"
                }
                .into(),
            });
        }
        if !superuser && target.user != self.me.user {
            return Err(SqlError::InsufficientPrivilege {
                message: if terminate {
                    "must be a member of the role whose process is being terminated or member of pg_signal_backend"
                } else {
                    "must be a member of the role whose query is being canceled or member of pg_signal_backend"
                }
                .into(),
            });
        }
        Ok(if std::ptr::eq(target, self.me) {
            SignalTarget::Me
        } else {
            SignalTarget::Other
        })
    }
}

fn row_of(s: &Session, me: bool, visible: bool, latest: u64) -> ActivityRow {
    // A failed block is over as far as PostgreSQL's statistics go: no start, no ids.
    let live = s.txn.as_ref().filter(|t| !t.failed);
    let txn = s.txn.as_ref();
    let (state, wait_event) = if me {
        ("active", None)
    } else if let Some(wanted) = s.waits_for {
        let event = match wanted {
            crate::locks::Wanted::Lock { .. } => ("Lock", "advisory"),
            crate::locks::Wanted::Sleep { .. } => ("Timeout", "PgSleep"),
        };
        ("active", Some(event))
    } else if s.is_committing() {
        // Its commit is being made durable (PostgreSQL: flushing its WAL).
        ("active", Some(("IO", "WALSync")))
    } else if s.copy_in.is_some() {
        ("active", Some(("Client", "ClientRead")))
    } else {
        let state = match txn {
            // Between the Executes of a pipeline PostgreSQL reports no idle state.
            Some(_) if s.until_sync => "active",
            Some(t) if t.explicit && t.failed => "idle in transaction (aborted)",
            Some(t) if t.explicit => "idle in transaction",
            Some(_) => "active",
            None => "idle",
        };
        (state, Some(("Client", "ClientRead")))
    };
    // `txid_current()` of a transaction reading at `seq`, as a 32-bit xid.
    let xid = |seq: u64| Some(seq.wrapping_add(1) as u32);
    ActivityRow {
        pid: s.activity.backend_pid,
        user: s.user.clone(),
        database: s.database.clone(),
        application_name: s.application_name(),
        visible,
        client_addr: s.activity.client_addr.clone(),
        client_port: s.activity.client_port,
        backend_start: s.activity.backend_start,
        // A statement outside a block runs in a transaction of its own, which the core opens
        // only when it writes.
        xact_start: live
            .map(|t| t.start_time)
            .or(if me { s.activity.query_start } else { None }),
        query_start: s.activity.query_start,
        state,
        wait_event,
        backend_xid: live
            .filter(|t| !t.pending.is_empty())
            .and_then(|t| xid(t.snapshot.unwrap_or(latest))),
        // The reader's statement reads a snapshot too (the latest commit, outside REPEATABLE
        // READ).
        backend_xmin: live
            .and_then(|t| t.snapshot)
            .or(if me { Some(latest) } else { None })
            .and_then(xid),
        query: s.activity.query.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_text_is_cut_on_a_character_boundary() {
        let mut a = Activity::default();
        let text = format!("{}é{}", "x".repeat(QUERY_BYTES - 1), "y".repeat(10));
        a.started(&text, 5);
        assert_eq!(a.query.len(), QUERY_BYTES - 1);
        assert!(a.query.chars().all(|c| c == 'x'));
        assert_eq!(a.query_start, Some(5));
        a.started("SELECT 1", 6);
        assert_eq!(a.query, "SELECT 1");
    }
}
