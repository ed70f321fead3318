//! The functions that take advisory locks or sleep: binding their PostgreSQL signatures and
//! running them against the engine's [`crate::locks::Locks`].

use super::eval::{Effect, Executor};
use super::names::{coerce_or_cast, no_such_function};
use super::{BExpr, Binder};
use crate::error::{Notice, SqlError};
use crate::locks::{Acquired, LockMode, LockTag, Scope};
use crate::types::{PgType, Value};

/// The advisory lock functions of PostgreSQL 15, all with a `(bigint)` and an
/// `(integer, integer)` form except `pg_advisory_unlock_all()`.
const ADVISORY: &[&str] = &[
    "pg_advisory_lock",
    "pg_advisory_lock_shared",
    "pg_advisory_xact_lock",
    "pg_advisory_xact_lock_shared",
    "pg_try_advisory_lock",
    "pg_try_advisory_lock_shared",
    "pg_try_advisory_xact_lock",
    "pg_try_advisory_xact_lock_shared",
    "pg_advisory_unlock",
    "pg_advisory_unlock_shared",
    "pg_advisory_unlock_all",
];

/// The functions that sleep: for seconds, for an interval, until a time.
const SLEEPS: &[&str] = &["pg_sleep", "pg_sleep_for", "pg_sleep_until"];

/// Whether `name` is a function of this module.
pub(super) fn is_wait_function(name: &str) -> bool {
    ADVISORY.contains(&name) || SLEEPS.contains(&name)
}

impl Binder<'_, '_> {
    /// `pg_advisory_*` and `pg_sleep`: their argument types as PostgreSQL resolves them.
    pub(super) fn bind_wait_call(
        &mut self,
        name: String,
        args: Vec<BExpr>,
        types: &[PgType],
    ) -> Result<(BExpr, PgType), SqlError> {
        let int4ish = |t: &PgType| matches!(t, PgType::Int2 | PgType::Int4 | PgType::Unknown);
        let targets: &[PgType] = if SLEEPS.contains(&name.as_str()) {
            match (name.as_str(), types) {
                ("pg_sleep", [t])
                    if (t.is_numeric_family() && !t.is_reg() && *t != PgType::Oid)
                        || *t == PgType::Unknown =>
                {
                    &[PgType::Float8]
                }
                ("pg_sleep_for", [PgType::Interval | PgType::Unknown]) => &[PgType::Interval],
                (
                    "pg_sleep_until",
                    [PgType::Timestamptz | PgType::Timestamp | PgType::Date | PgType::Unknown],
                ) => &[PgType::Timestamptz],
                _ => return Err(no_such_function(&name, types)),
            }
        } else if name == "pg_advisory_unlock_all" {
            match types {
                [] => &[],
                _ => return Err(no_such_function(&name, types)),
            }
        } else {
            match types {
                [t] if int4ish(t) || *t == PgType::Int8 => &[PgType::Int8],
                [a, b] if int4ish(a) && int4ish(b) => &[PgType::Int4, PgType::Int4],
                _ => return Err(no_such_function(&name, types)),
            }
        };
        // Never kept or folded: each call acts on the session's locks.
        self.session_dependent = true;
        self.volatile_calls += 1;
        let args = args
            .into_iter()
            .zip(targets.iter().copied())
            .map(|(a, t)| coerce_or_cast(a, t))
            .collect::<Result<Vec<_>, _>>()?;
        let returns = if name.starts_with("pg_try_") || name.starts_with("pg_advisory_unlock") {
            if name == "pg_advisory_unlock_all" {
                PgType::Void
            } else {
                PgType::Bool
            }
        } else {
            PgType::Void
        };
        Ok((BExpr::Func(name, args), returns))
    }
}

impl Executor<'_, '_> {
    /// Runs `pg_advisory_*` or `pg_sleep` over bound arguments. A call that must wait stops
    /// the statement with [`SqlError::MustWait`]; when the statement runs again, the calls
    /// before it answer what they answered the first time.
    pub(super) fn wait_call(&self, name: &str, a: &[Value]) -> Result<Value, SqlError> {
        let sid = self.cx.sessions.me.id;
        // A sleep's argument may follow the clock, which moves between runs; the order of
        // the calls is what a rerun must keep.
        let call = crate::locks::Call {
            function: name.to_string(),
            args: if SLEEPS.contains(&name) {
                Vec::new()
            } else {
                a.to_vec()
            },
        };
        let replayed = self.cx.st.locks.borrow_mut().replayed(sid, &call)?;
        let (value, notice) = match replayed {
            Some(done) => done,
            None => {
                let done = self.wait_call_now(name, a)?;
                self.cx
                    .st
                    .locks
                    .borrow_mut()
                    .record(sid, call, done.0.clone(), done.1.clone());
                done
            }
        };
        if let (Some(n), Some(effects)) = (notice, self.effects.as_ref()) {
            effects.borrow_mut().push(Effect::Notice(n));
        }
        Ok(value)
    }

    fn wait_call_now(&self, name: &str, a: &[Value]) -> Result<(Value, Option<Notice>), SqlError> {
        let void = Value::text("");
        let sid = self.cx.sessions.me.id;
        let now = self.cx.st.now;
        if name == "pg_advisory_unlock_all" {
            self.cx.st.locks.borrow_mut().unlock_all(sid);
            return Ok((void, None));
        }
        if a.iter().any(Value::is_null) {
            return Ok((Value::Null, None));
        }
        if SLEEPS.contains(&name) {
            // The end of the sleep, fixed when it begins (a NaN or negative time sleeps not
            // at all; an interval's months are 30 days).
            let begun = match self.cx.st.locks.borrow().waiter(sid).map(|w| w.wanted) {
                Some(crate::locks::Wanted::Sleep { until }) => Some(until),
                _ => None,
            };
            let until = match (begun, a.first()) {
                (Some(until), _) => until,
                (None, Some(Value::Float(secs))) if secs.is_nan() || *secs <= 0.0 => now,
                (None, Some(Value::Float(secs))) => {
                    now.saturating_add((secs * 1e6).min(i64::MAX as f64) as i64)
                }
                (None, Some(Value::Interval(iv))) => {
                    let span = i64::try_from(iv.span()).unwrap_or(i64::MAX).max(0);
                    now.saturating_add(span)
                }
                (None, Some(Value::Timestamp(at))) => *at,
                _ => return Err(SqlError::internal(format!("{name}: unexpected argument"))),
            };
            if !self.cx.st.locks.borrow_mut().sleep(sid, until, now)? {
                return Ok((void, None));
            }
            return self.wait_here().map(|()| (void, None));
        }
        let tag = match a {
            [Value::Int(k)] => LockTag::of_bigint(*k),
            [Value::Int(k1), Value::Int(k2)] => LockTag::of_pair(*k1 as i32, *k2 as i32),
            _ => return Err(SqlError::internal(format!("{name}: unexpected arguments"))),
        };
        let mode = if name.ends_with("_shared") {
            LockMode::Share
        } else {
            LockMode::Exclusive
        };
        if name.starts_with("pg_advisory_unlock") {
            let released = self.cx.st.locks.borrow_mut().unlock(sid, tag, mode);
            let notice = (!released).then_some(Notice::NotLockOwner { mode: mode.name() });
            return Ok((Value::Bool(released), notice));
        }
        let scope = if name.contains("_xact_") {
            let txn = self.cx.sessions.me.txn.as_ref();
            Scope::Transaction {
                serial: self.cx.txn_serial,
                depth: txn.map_or(0, |t| t.savepoints.len() as u32),
            }
        } else {
            Scope::Session
        };
        let try_only = name.starts_with("pg_try_");
        let acquired = self
            .cx
            .st
            .locks
            .borrow_mut()
            .lock(sid, tag, mode, scope, !try_only, now)?;
        match acquired {
            Acquired::Granted if try_only => Ok((Value::Bool(true), None)),
            Acquired::Granted => Ok((void, None)),
            Acquired::NotAvailable => Ok((Value::Bool(false), None)),
            Acquired::MustWait => self.wait_here().map(|()| (void, None)),
        }
    }

    /// The session's statement waits: `Err(MustWait)` to suspend it, or the error that ends
    /// the wait (a cancel, a deadlock, `lock_timeout`). Only a plain query can be run again
    /// from its start; elsewhere a wait is refused.
    fn wait_here(&self) -> Result<(), SqlError> {
        let sid = self.cx.sessions.me.id;
        let mut locks = self.cx.st.locks.borrow_mut();
        if self.effects.is_none() {
            locks.stop_waiting(sid);
            return Err(SqlError::FeatureNotSupportedHint {
                what: "waiting for an advisory lock or pg_sleep outside a plain query".into(),
                hint: "Take the lock in a SELECT of its own, or use pg_try_advisory_lock, which \
                       does not wait."
                    .into(),
            });
        }
        let millis = |name: &str| {
            crate::settings::find(name)
                .map(|def| self.cx.settings.stored(def))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        locks.arm(sid, millis("deadlock_timeout"), millis("lock_timeout"));
        let sessions = self.cx.sessions;
        let pid_of = |s: crate::api::SessionId| {
            if s == sessions.me.id {
                sessions.me.activity.backend_pid
            } else {
                sessions
                    .others
                    .get(&s)
                    .map_or(0, |o| o.activity.backend_pid)
            }
        };
        locks.check_wait(
            sid,
            self.cx.st.now,
            self.cx.kv.interrupted(),
            crate::pgcatalog::CURRENT_DATABASE_OID,
            &pid_of,
        )?;
        Err(SqlError::MustWait)
    }
}
