//! Advisory locks (`pg_advisory_lock` and its family) and the waits of statements (those
//! locks and `pg_sleep`), kept by the engine for all of its sessions.
//!
//! The core cannot block. A statement that must wait stops with [`SqlError::MustWait`]; the
//! engine suspends its request (the reply's `wait`) and the host runs the statement again
//! once a lock was released, the wait's next deadline passed, or the session was
//! interrupted. What the statement's lock and sleep calls did before it stopped is replayed
//! when it runs again, not done a second time: the locks it took stay held while it waits,
//! as in PostgreSQL (docs/decisions/0041-advisory-locks-and-waits.md).

use std::collections::{BTreeMap, HashMap};

use crate::api::SessionId;
use crate::error::{Notice, SqlError};
use crate::types::Value;

/// What an advisory lock locks: PostgreSQL's `LOCKTAG_ADVISORY` without the database (one per
/// engine). A bigint key is split into `classid` (high half) and `objid` (low half) with
/// `objsubid` 1; a pair of integers is `(classid, objid)` with `objsubid` 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LockTag {
    pub classid: u32,
    pub objid: u32,
    pub objsubid: u16,
}

impl LockTag {
    pub fn of_bigint(key: i64) -> LockTag {
        let key = key as u64;
        LockTag {
            classid: (key >> 32) as u32,
            objid: key as u32,
            objsubid: 1,
        }
    }

    pub fn of_pair(key1: i32, key2: i32) -> LockTag {
        LockTag {
            classid: key1 as u32,
            objid: key2 as u32,
            objsubid: 2,
        }
    }

    /// As PostgreSQL's `DescribeLockTag` writes it (deadlock reports).
    fn describe(&self, database_oid: u32) -> String {
        format!(
            "advisory lock [{database_oid},{},{},{}]",
            self.classid, self.objid, self.objsubid
        )
    }
}

/// The two modes advisory locks take: `_shared` functions take ShareLock, the others
/// ExclusiveLock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockMode {
    Share,
    Exclusive,
}

impl LockMode {
    fn conflicts(self, other: LockMode) -> bool {
        self == LockMode::Exclusive || other == LockMode::Exclusive
    }

    /// PostgreSQL's name of the mode (`pg_locks.mode`, messages).
    pub fn name(self) -> &'static str {
        match self {
            LockMode::Share => "ShareLock",
            LockMode::Exclusive => "ExclusiveLock",
        }
    }
}

/// Until when a lock is held: the session's end (or its unlock), or its transaction's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Session,
    Transaction {
        /// The transaction's serial; `None`: the transaction of the current request, which
        /// the core had not opened (a read outside a block).
        serial: Option<u64>,
        /// Its open savepoints when the lock was taken: ROLLBACK TO one of them releases the
        /// locks taken since, as PostgreSQL's subtransactions do.
        depth: u32,
    },
}

/// At most this many holds and waits in all (PostgreSQL's shared lock table: 64
/// `max_locks_per_transaction` × 100 `max_connections`); more is 53200.
pub const MAX_LOCKS: usize = 6_400;

/// One session's hold of one lock in one mode: PostgreSQL counts session-level and
/// transaction-level acquisitions apart, and shows them as one `pg_locks` row.
#[derive(Debug, Clone)]
struct Hold {
    sid: SessionId,
    mode: LockMode,
    session: u32,
    /// The transaction-level acquisitions, each as the savepoint depth it was made at.
    xact: Vec<u32>,
    /// The transaction of the transaction-level acquisitions.
    xact_of: Option<u64>,
}

/// What a waiting statement waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    Lock {
        tag: LockTag,
        mode: LockMode,
    },
    /// `pg_sleep`: until this time (the engine's clock, microseconds).
    Sleep {
        until: i64,
    },
}

/// A session whose statement waits.
#[derive(Debug, Clone)]
pub struct Waiter {
    pub sid: SessionId,
    pub wanted: Wanted,
    /// When the wait began (`pg_locks.waitstart`).
    pub since: i64,
    /// When to look for a deadlock (`deadlock_timeout` after `since`), until it was looked for.
    deadlock_at: Option<i64>,
    /// The deadlock check ran (once per wait, as PostgreSQL's timer fires once).
    deadlock_checked: bool,
    /// When the wait fails with 55P03 (`lock_timeout`).
    timeout_at: Option<i64>,
}

impl Waiter {
    /// When the host should run the statement again even if nothing is released.
    pub fn next_deadline(&self) -> Option<i64> {
        let sleep = match self.wanted {
            Wanted::Sleep { until } => Some(until),
            Wanted::Lock { .. } => None,
        };
        [sleep, self.deadlock_at, self.timeout_at]
            .into_iter()
            .flatten()
            .min()
    }
}

/// What a lock call answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acquired {
    Granted,
    /// A `try` call that would have to wait.
    NotAvailable,
    /// The statement must wait (the session is now in the queue).
    MustWait,
}

/// One row of `pg_locks` (an advisory lock held or waited for).
#[derive(Debug, Clone, PartialEq)]
pub struct LockRow {
    pub tag: LockTag,
    pub sid: SessionId,
    pub mode: LockMode,
    pub granted: bool,
    pub waitstart: Option<i64>,
}

/// A lock or sleep call of a statement, and what it answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub function: String,
    pub args: Vec<Value>,
}

/// What the lock and sleep calls of a statement that waits answered, in order.
#[derive(Debug, Default)]
struct Replay {
    done: Vec<(Call, Value, Option<Notice>)>,
    next: usize,
}

/// The engine's advisory locks and waiting statements.
#[derive(Debug, Default)]
pub struct Locks {
    holds: BTreeMap<LockTag, Vec<Hold>>,
    /// In the order the waits began: a lock goes to the first waiter it can.
    waiters: Vec<Waiter>,
    replays: HashMap<SessionId, Replay>,
    /// Transaction-level acquisitions per session (a statement's end skips the release for a
    /// session without any).
    xact_holds: HashMap<SessionId, usize>,
    /// Holds (a session's, of a lock, in a mode) and waits, against [`MAX_LOCKS`].
    entries: usize,
    /// Something was released or stopped waiting since [`Locks::take_released`]: waiters
    /// may now get their locks.
    released: bool,
}

impl Locks {
    /// A statement of `sid` starts; `again`: the one that waited, run again.
    pub fn begin_statement(&mut self, sid: SessionId, again: bool) {
        if self.replays.is_empty() {
            return;
        }
        if again {
            if let Some(r) = self.replays.get_mut(&sid) {
                r.next = 0;
            }
        } else {
            self.replays.remove(&sid);
        }
    }

    /// The statement of `sid` ended (done or failed, not waiting): it waits no more.
    pub fn statement_done(&mut self, sid: SessionId) {
        if !self.replays.is_empty() {
            self.replays.remove(&sid);
        }
        if !self.waiters.is_empty() {
            self.stop_waiting(sid);
        }
    }

    /// The answer of the running statement's next lock or sleep call, if it gave one before it
    /// had to wait. A run that calls something else there (it read other rows this time) is
    /// 40001: answering it from the first run's calls would claim locks never taken.
    pub fn replayed(
        &mut self,
        sid: SessionId,
        call: &Call,
    ) -> Result<Option<(Value, Option<Notice>)>, SqlError> {
        let Some(r) = self.replays.get_mut(&sid) else {
            return Ok(None);
        };
        let Some((done, value, notice)) = r.done.get(r.next) else {
            return Ok(None);
        };
        if done != call {
            self.replays.remove(&sid);
            return Err(SqlError::SerializationFailure);
        }
        let answer = (value.clone(), notice.clone());
        r.next += 1;
        Ok(Some(answer))
    }

    /// Notes the answer of a lock or sleep call, to replay if the statement waits later on.
    pub fn record(&mut self, sid: SessionId, call: Call, value: Value, notice: Option<Notice>) {
        let r = self.replays.entry(sid).or_default();
        r.done.push((call, value, notice));
        r.next = r.done.len();
    }

    /// Whether `sid` may have `tag` in `mode` now: it holds it in that mode already (counted
    /// again, as PostgreSQL's local lock table does), or no other session holds it in a
    /// conflicting mode and no conflicting request waits ahead of it.
    fn grantable(&self, sid: SessionId, tag: LockTag, mode: LockMode) -> bool {
        let holds = self.holds.get(&tag).map_or(&[][..], Vec::as_slice);
        if holds.iter().any(|h| h.sid == sid && h.mode == mode) {
            return true;
        }
        if holds.iter().any(|h| h.sid != sid && h.mode.conflicts(mode)) {
            return false;
        }
        for w in &self.waiters {
            if w.sid == sid {
                break;
            }
            if matches!(w.wanted, Wanted::Lock { tag: t, mode: m } if t == tag && m.conflicts(mode))
            {
                return false;
            }
        }
        true
    }

    /// Takes `tag` in `mode` for `sid`. `wait`: a call that waits (else a `try` call); the
    /// session then joins the queue (or keeps its place in it), its wait starting at `now`.
    /// 53200 when the table is full.
    pub fn lock(
        &mut self,
        sid: SessionId,
        tag: LockTag,
        mode: LockMode,
        scope: Scope,
        wait: bool,
        now: i64,
    ) -> Result<Acquired, SqlError> {
        if !self.grantable(sid, tag, mode) {
            if !wait {
                return Ok(Acquired::NotAvailable);
            }
            self.start_waiting(sid, Wanted::Lock { tag, mode }, now)?;
            return Ok(Acquired::MustWait);
        }
        // Granted: its wait (if it waited) is over. That frees nobody, so it is not a release.
        self.waiters.retain(|w| w.sid != sid);
        let known = self
            .holds
            .get(&tag)
            .is_some_and(|hs| hs.iter().any(|h| h.sid == sid && h.mode == mode));
        if !known {
            self.make_room()?;
            self.entries += 1;
        }
        let holds = self.holds.entry(tag).or_default();
        let i = match holds.iter().position(|h| h.sid == sid && h.mode == mode) {
            Some(i) => i,
            None => {
                holds.push(Hold {
                    sid,
                    mode,
                    session: 0,
                    xact: Vec::new(),
                    xact_of: None,
                });
                holds.len() - 1
            }
        };
        let h = &mut holds[i];
        match scope {
            Scope::Session => h.session += 1,
            Scope::Transaction { serial, depth } => {
                h.xact.push(depth);
                h.xact_of = serial;
                *self.xact_holds.entry(sid).or_default() += 1;
            }
        }
        Ok(Acquired::Granted)
    }

    /// 53200 when the table holds [`MAX_LOCKS`] entries.
    fn make_room(&self) -> Result<(), SqlError> {
        if self.entries + self.waiters.len() >= MAX_LOCKS {
            return Err(SqlError::OutOfSharedMemory);
        }
        Ok(())
    }

    /// Releases one session-level hold of `tag` in `mode` (`pg_advisory_unlock`): false when
    /// the session holds none.
    pub fn unlock(&mut self, sid: SessionId, tag: LockTag, mode: LockMode) -> bool {
        let Some(holds) = self.holds.get_mut(&tag) else {
            return false;
        };
        let Some(i) = holds
            .iter()
            .position(|h| h.sid == sid && h.mode == mode && h.session > 0)
        else {
            return false;
        };
        holds[i].session -= 1;
        if holds[i].session == 0 && holds[i].xact.is_empty() {
            holds.remove(i);
            if holds.is_empty() {
                self.holds.remove(&tag);
            }
            self.entries -= 1;
            self.released |= self.waited_for(tag);
        }
        true
    }

    /// Whether a statement waits for `tag`: only then does releasing it matter to anyone.
    fn waited_for(&self, tag: LockTag) -> bool {
        self.waiters
            .iter()
            .any(|w| matches!(w.wanted, Wanted::Lock { tag: t, .. } if t == tag))
    }

    /// Changes the holds of `sid` as `change` says, given each hold's session count, its
    /// transaction-level acquisitions (savepoint depths) and their transaction; holds left
    /// with nothing are released.
    fn release_where(
        &mut self,
        sid: SessionId,
        mut change: impl FnMut(&mut u32, &mut Vec<u32>, Option<u64>),
    ) {
        let (mut freed, mut gone, mut xact) = (Vec::new(), 0, 0);
        self.holds.retain(|tag, holds| {
            holds.retain_mut(|h| {
                if h.sid != sid {
                    return true;
                }
                let before = (h.session, h.xact.len());
                change(&mut h.session, &mut h.xact, h.xact_of);
                xact += h.xact.len();
                if (h.session, h.xact.len()) != before && h.session == 0 && h.xact.is_empty() {
                    freed.push(*tag);
                    gone += 1;
                    return false;
                }
                true
            });
            !holds.is_empty()
        });
        self.entries -= gone;
        if xact == 0 {
            self.xact_holds.remove(&sid);
        } else {
            self.xact_holds.insert(sid, xact);
        }
        self.released |= freed.into_iter().any(|t| self.waited_for(t));
    }

    /// `pg_advisory_unlock_all()` and DISCARD ALL: the session-level holds of `sid`.
    pub fn unlock_all(&mut self, sid: SessionId) {
        self.release_where(sid, |session, _, _| *session = 0);
    }

    /// Releases transaction-level holds of `sid`: for each hold's transaction `from` gives the
    /// savepoint depth from which its acquisitions go (0: all of them), or `None` to keep them.
    pub fn end_transactions(&mut self, sid: SessionId, from: impl Fn(Option<u64>) -> Option<u32>) {
        if !self.xact_holds.contains_key(&sid) {
            return;
        }
        self.release_where(sid, |_, xact, of| {
            if let Some(depth) = from(of) {
                xact.retain(|d| *d < depth);
            }
        });
    }

    /// RELEASE of the savepoint at `depth` (0-based): what was taken since belongs to the
    /// transaction around it.
    pub fn release_savepoint(&mut self, sid: SessionId, depth: u32) {
        if !self.xact_holds.contains_key(&sid) {
            return;
        }
        self.release_where(sid, |_, xact, _| {
            for d in xact.iter_mut() {
                *d = (*d).min(depth);
            }
        });
    }

    /// The session ended: all its holds, its wait and its replay go.
    pub fn forget(&mut self, sid: SessionId) {
        self.release_where(sid, |session, xact, _| {
            *session = 0;
            xact.clear();
        });
        self.statement_done(sid);
    }

    /// `sid` waits no more (its statement failed or may not wait).
    pub fn stop_waiting(&mut self, sid: SessionId) {
        let mut left = None;
        self.waiters.retain(|w| {
            let mine = w.sid == sid;
            if let (true, Wanted::Lock { tag, .. }) = (mine, w.wanted) {
                left = Some(tag);
            }
            !mine
        });
        if let Some(tag) = left {
            // A request it kept waiting behind it may be granted now.
            self.released |= self.waited_for(tag);
        }
    }

    /// Starts (or goes on with) a `pg_sleep` of `sid` until `until`: false once it is over.
    pub fn sleep(&mut self, sid: SessionId, until: i64, now: i64) -> Result<bool, SqlError> {
        if now >= until {
            self.stop_waiting(sid);
            return Ok(false);
        }
        self.start_waiting(sid, Wanted::Sleep { until }, now)?;
        Ok(true)
    }

    /// Puts `sid` in the queue for `wanted` from `now`, unless it waits for it already (then
    /// it keeps its place and start).
    fn start_waiting(&mut self, sid: SessionId, wanted: Wanted, now: i64) -> Result<(), SqlError> {
        if self
            .waiters
            .iter()
            .any(|w| w.sid == sid && w.wanted == wanted)
        {
            return Ok(());
        }
        self.stop_waiting(sid);
        self.make_room()?;
        self.waiters.push(Waiter {
            sid,
            wanted,
            since: now,
            deadlock_at: None,
            deadlock_checked: false,
            timeout_at: None,
        });
        Ok(())
    }

    /// What `sid` waits for, if it waits.
    pub fn waiter(&self, sid: SessionId) -> Option<&Waiter> {
        self.waiters.iter().find(|w| w.sid == sid)
    }

    /// Arms the waiting session's timers, measured from the wait's start: the deadlock check
    /// after `deadlock_ms`, and `lock_timeout` after `timeout_ms` (0: none). Once armed they
    /// stay as they are.
    pub fn arm(&mut self, sid: SessionId, deadlock_ms: u64, timeout_ms: u64) {
        if let Some(w) = self.waiters.iter_mut().find(|w| w.sid == sid) {
            let lock = matches!(w.wanted, Wanted::Lock { .. });
            if lock && !w.deadlock_checked && w.deadlock_at.is_none() {
                w.deadlock_at = Some(w.since.saturating_add(ms_to_us(deadlock_ms)));
            }
            if lock && timeout_ms > 0 && w.timeout_at.is_none() {
                w.timeout_at = Some(w.since.saturating_add(ms_to_us(timeout_ms)));
            }
        }
    }

    /// Checks the wait of `sid` at `now`: `Ok(())` to go on waiting, or the error that ends it
    /// (its wait is then over). `interrupted`: the host's cancel or statement timeout.
    /// `pid_of` gives a session's backend pid for the deadlock report.
    pub fn check_wait(
        &mut self,
        sid: SessionId,
        now: i64,
        interrupted: Option<String>,
        database_oid: u32,
        pid_of: &dyn Fn(SessionId) -> i32,
    ) -> Result<(), SqlError> {
        let Some(w) = self.waiters.iter().find(|w| w.sid == sid).cloned() else {
            return Ok(());
        };
        let fail = |locks: &mut Locks, e: SqlError| {
            locks.stop_waiting(sid);
            Err(e)
        };
        if let Some(message) = interrupted {
            return fail(self, SqlError::interrupted(message));
        }
        if w.deadlock_at.is_some_and(|at| now >= at) {
            if let Some(w) = self.waiters.iter_mut().find(|w| w.sid == sid) {
                w.deadlock_at = None;
                w.deadlock_checked = true;
            }
            if let Some(cycle) = self.cycle_from(sid) {
                let detail = cycle
                    .iter()
                    .map(|(waiter, blocker)| {
                        let Wanted::Lock { tag, mode } = waiter.wanted else {
                            return String::new();
                        };
                        format!(
                            "Process {} waits for {} on {}; blocked by process {}.",
                            pid_of(waiter.sid),
                            mode.name(),
                            tag.describe(database_oid),
                            pid_of(*blocker)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                return fail(self, SqlError::DeadlockDetected { detail });
            }
        }
        if w.timeout_at.is_some_and(|at| now >= at) {
            return fail(
                self,
                SqlError::LockNotAvailable {
                    message: "canceling statement due to lock timeout".into(),
                },
            );
        }
        Ok(())
    }

    /// The sessions the wait of `w` waits behind: holders in a conflicting mode, and
    /// conflicting requests ahead of it in the queue.
    fn blockers(&self, w: &Waiter) -> Vec<SessionId> {
        let Wanted::Lock { tag, mode } = w.wanted else {
            return Vec::new();
        };
        let mut out: Vec<SessionId> = self
            .holds
            .get(&tag)
            .into_iter()
            .flatten()
            .filter(|h| h.sid != w.sid && h.mode.conflicts(mode))
            .map(|h| h.sid)
            .collect();
        for ahead in &self.waiters {
            if ahead.sid == w.sid {
                break;
            }
            if matches!(ahead.wanted, Wanted::Lock { tag: t, mode: m } if t == tag && m.conflicts(mode))
            {
                out.push(ahead.sid);
            }
        }
        out.dedup();
        out
    }

    /// A cycle of waits through `start`, as (waiter, the session it waits behind) from
    /// `start`'s own wait on, as PostgreSQL's deadlock report lists it.
    fn cycle_from(&self, start: SessionId) -> Option<Vec<(Waiter, SessionId)>> {
        let mut path: Vec<(Waiter, SessionId)> = Vec::new();
        let mut visited: Vec<SessionId> = Vec::new();
        self.walk(start, start, &mut path, &mut visited)
            .then_some(path)
    }

    fn walk(
        &self,
        at: SessionId,
        start: SessionId,
        path: &mut Vec<(Waiter, SessionId)>,
        visited: &mut Vec<SessionId>,
    ) -> bool {
        let Some(w) = self.waiter(at) else {
            return false;
        };
        visited.push(at);
        for b in self.blockers(w) {
            path.push((w.clone(), b));
            if b == start || !visited.contains(&b) && self.walk(b, start, path, visited) {
                return true;
            }
            path.pop();
        }
        false
    }

    /// Whether something was released (or stopped waiting) since the last call.
    pub fn take_released(&mut self) -> bool {
        std::mem::take(&mut self.released)
    }

    /// The rows of `pg_locks`: granted holds by lock, then the waits in queue order.
    pub fn rows(&self) -> Vec<LockRow> {
        let mut rows: Vec<LockRow> = self
            .holds
            .iter()
            .flat_map(|(tag, holds)| {
                holds.iter().map(|h| LockRow {
                    tag: *tag,
                    sid: h.sid,
                    mode: h.mode,
                    granted: true,
                    waitstart: None,
                })
            })
            .collect();
        rows.extend(self.waiters.iter().filter_map(|w| match w.wanted {
            Wanted::Lock { tag, mode } => Some(LockRow {
                tag,
                sid: w.sid,
                mode,
                granted: false,
                waitstart: Some(w.since),
            }),
            Wanted::Sleep { .. } => None,
        }));
        rows
    }
}

fn ms_to_us(ms: u64) -> i64 {
    i64::try_from(ms.saturating_mul(1000)).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const K1: LockTag = LockTag {
        classid: 0,
        objid: 1,
        objsubid: 1,
    };
    const K2: LockTag = LockTag {
        classid: 0,
        objid: 2,
        objsubid: 1,
    };
    use LockMode::{Exclusive as X, Share as S};

    /// A session-level lock call of session `sid`.
    fn take(
        l: &mut Locks,
        sid: u64,
        tag: LockTag,
        mode: LockMode,
        wait: bool,
        now: i64,
    ) -> Acquired {
        l.lock(SessionId(sid), tag, mode, Scope::Session, wait, now)
            .expect("room")
    }

    #[test]
    fn keys_split_as_postgresql_splits_them() {
        assert_eq!(
            LockTag::of_bigint(-1),
            LockTag {
                classid: u32::MAX,
                objid: u32::MAX,
                objsubid: 1
            }
        );
        assert_eq!(
            LockTag::of_bigint(1 << 32),
            LockTag {
                classid: 1,
                objid: 0,
                objsubid: 1
            }
        );
        assert_eq!(
            LockTag::of_pair(-2, 3),
            LockTag {
                classid: u32::MAX - 1,
                objid: 3,
                objsubid: 2
            }
        );
    }

    #[test]
    fn modes_conflict_as_share_and_exclusive_locks() {
        let mut l = Locks::default();
        assert_eq!(take(&mut l, 1, K1, S, false, 0), Acquired::Granted);
        assert_eq!(take(&mut l, 2, K1, S, false, 0), Acquired::Granted);
        assert_eq!(take(&mut l, 3, K1, X, false, 0), Acquired::NotAvailable);
        // A session's own holds never conflict with its requests.
        assert_eq!(take(&mut l, 1, K2, X, false, 0), Acquired::Granted);
        assert_eq!(take(&mut l, 1, K2, S, false, 0), Acquired::Granted);
        assert!(l.unlock(SessionId(1), K1, S));
        assert!(!l.unlock(SessionId(1), K1, S));
        // Nobody waits for it: nobody is woken.
        assert!(!l.take_released());
        assert!(l.unlock(SessionId(2), K1, S));
        assert_eq!(take(&mut l, 3, K1, X, false, 0), Acquired::Granted);
    }

    #[test]
    fn a_request_waits_behind_conflicting_waiters_unless_it_holds_the_lock() {
        let mut l = Locks::default();
        take(&mut l, 1, K1, S, true, 0);
        assert_eq!(take(&mut l, 2, K1, X, true, 5), Acquired::MustWait);
        // A new shared request queues behind the exclusive waiter ...
        assert_eq!(take(&mut l, 3, K1, S, false, 6), Acquired::NotAvailable);
        // ... but the holder's own second request does not.
        assert_eq!(take(&mut l, 1, K1, S, true, 7), Acquired::Granted);
        assert_eq!(l.waiter(SessionId(2)).map(|w| w.since), Some(5));
        // Asking again keeps the waiter's place and start.
        assert_eq!(take(&mut l, 2, K1, X, true, 9), Acquired::MustWait);
        assert_eq!(l.waiter(SessionId(2)).map(|w| w.since), Some(5));
        l.unlock_all(SessionId(1));
        assert!(l.take_released());
        assert_eq!(take(&mut l, 2, K1, X, true, 10), Acquired::Granted);
        assert!(l.waiter(SessionId(2)).is_none());
        let rows = l.rows();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].sid, rows[0].mode, rows[0].granted),
            (SessionId(2), X, true)
        );
    }

    #[test]
    fn transaction_holds_end_with_their_transaction_and_session_holds_stay() {
        let mut l = Locks::default();
        l.lock(
            SessionId(1),
            K1,
            X,
            Scope::Transaction {
                serial: Some(7),
                depth: 0,
            },
            false,
            0,
        )
        .expect("room");
        take(&mut l, 1, K1, X, false, 0);
        l.lock(
            SessionId(1),
            K2,
            X,
            Scope::Transaction {
                serial: None,
                depth: 0,
            },
            false,
            0,
        )
        .expect("room");
        l.end_transactions(SessionId(1), |of| of.is_none().then_some(0));
        assert_eq!(l.rows().len(), 1);
        // pg_advisory_unlock releases only the session-level hold.
        assert!(l.unlock(SessionId(1), K1, X));
        assert!(!l.unlock(SessionId(1), K1, X));
        assert_eq!(take(&mut l, 2, K1, X, false, 0), Acquired::NotAvailable);
        l.end_transactions(SessionId(1), |of| (of == Some(7)).then_some(0));
        assert!(l.rows().is_empty());
        assert!(l.xact_holds.is_empty());
        assert_eq!(l.entries, 0);
    }

    #[test]
    fn a_cycle_of_waits_is_found_and_reported_from_the_checking_session() {
        let mut l = Locks::default();
        take(&mut l, 1, K1, X, true, 0);
        take(&mut l, 2, K2, X, true, 0);
        assert_eq!(take(&mut l, 2, K1, X, true, 10), Acquired::MustWait);
        l.arm(SessionId(2), 1, 0);
        // No cycle yet: waiting goes on.
        assert_eq!(
            l.check_wait(SessionId(2), 2_000, None, 16383, &|s| s.0 as i32 * 100),
            Ok(())
        );
        assert_eq!(take(&mut l, 1, K2, X, true, 3_000), Acquired::MustWait);
        l.arm(SessionId(1), 1, 0);
        let e = l.check_wait(SessionId(1), 4_000, None, 16383, &|s| s.0 as i32 * 100);
        assert_eq!(
            e,
            Err(SqlError::DeadlockDetected {
                detail: "Process 100 waits for ExclusiveLock on advisory lock [16383,0,2,1]; blocked by process 200.\n\
                         Process 200 waits for ExclusiveLock on advisory lock [16383,0,1,1]; blocked by process 100."
                    .into()
            })
        );
        assert!(l.waiter(SessionId(1)).is_none());
        assert!(l.waiter(SessionId(2)).is_some());
    }

    #[test]
    fn lock_timeout_and_interrupts_end_a_wait() {
        let mut l = Locks::default();
        take(&mut l, 1, K1, X, true, 0);
        take(&mut l, 2, K1, X, true, 1_000);
        l.arm(SessionId(2), 1_000, 200);
        assert_eq!(
            l.waiter(SessionId(2)).and_then(Waiter::next_deadline),
            Some(201_000)
        );
        assert_eq!(l.check_wait(SessionId(2), 100_000, None, 1, &|_| 0), Ok(()));
        assert!(matches!(
            l.check_wait(SessionId(2), 201_000, None, 1, &|_| 0),
            Err(SqlError::LockNotAvailable { .. })
        ));
        take(&mut l, 2, K1, X, true, 300_000);
        assert!(matches!(
            l.check_wait(
                SessionId(2),
                300_001,
                Some("canceling statement due to user request".into()),
                1,
                &|_| 0
            ),
            Err(SqlError::QueryCanceled { .. })
        ));
        assert!(l.rows().iter().all(|r| r.granted));
    }

    #[test]
    fn a_statement_run_again_replays_what_its_calls_answered() {
        let mut l = Locks::default();
        let call = |k: i64| Call {
            function: "pg_advisory_lock".into(),
            args: vec![Value::Int(k)],
        };
        l.begin_statement(SessionId(1), false);
        l.record(SessionId(1), call(1), Value::Bool(true), None);
        l.begin_statement(SessionId(1), true);
        assert_eq!(
            l.replayed(SessionId(1), &call(1)),
            Ok(Some((Value::Bool(true), None)))
        );
        assert_eq!(l.replayed(SessionId(1), &call(2)), Ok(None));
        l.begin_statement(SessionId(1), false);
        assert_eq!(l.replayed(SessionId(1), &call(1)), Ok(None));
        // A run that calls something else where the first called lock 1 is refused.
        l.record(SessionId(1), call(1), Value::Bool(true), None);
        l.begin_statement(SessionId(1), true);
        assert_eq!(
            l.replayed(SessionId(1), &call(3)),
            Err(SqlError::SerializationFailure)
        );
    }
}
