//! The core as a WebAssembly component: exports `rocklake:core/engine` of `wit/rocklake.wit`
//! over one [`Engine`], reading storage through the imported `rocklake:core/kv`.
//!
//! Compiled only for `wasm32`. The component is single-threaded and the host calls it
//! serially, so the engine lives in a thread-local cell (one per instance).
//!
//! Nothing here may pull in a WASI import: no clock (time comes in as `now`), no randomness,
//! no environment, no files. A panic aborts the instance (a trap the host reports).

use std::cell::RefCell;

use crate::api::{
    self, CommitFailure, KvError, KvPage, KvRead, Output, PgError, Reply, SessionId, TxnStatus,
};
use crate::Engine;

// The generated canonical-ABI glue reads and writes linear memory through raw pointers; that
// `unsafe` is wit-bindgen's and confined to this module. The code of this file has none.
#[allow(unsafe_code)]
mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "catalog-core",
    });

    use super::Component;
    export!(Component);
}

use bindings::exports::rocklake::core::engine as wit_engine;
use bindings::rocklake::core::kv as wit_kv;
use bindings::rocklake::core::types as wit;

thread_local! {
    static ENGINE: RefCell<Option<Engine>> = const { RefCell::new(None) };
}

/// [`KvRead`] over the host's imports. Each call is one batch across the boundary.
struct HostKv;

impl KvRead for HostKv {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        page(wit_kv::kv_scan(start, end, wire_limit(limit)))
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        wit_kv::kv_get(key).map_err(kv_error)
    }

    fn scan_rev(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        page(wit_kv::kv_scan_rev(start, end, wire_limit(limit)))
    }

    fn interrupted(&self) -> Option<String> {
        wit_kv::interrupted()
    }

    fn entropy(&self) -> Option<u64> {
        wit_kv::entropy()
    }
}

/// A page from the host, checked before use (a bad offset is an error, not a trap).
fn page(answer: Result<wit::KvPage, wit::KvError>) -> Result<KvPage, KvError> {
    let p = answer.map_err(kv_error)?;
    KvPage::from_parts(p.data, p.ends)
}

/// usize is 32 bits here: `usize::MAX` means "no limit", which the host spells u64::MAX.
fn wire_limit(limit: usize) -> u64 {
    if limit == usize::MAX {
        u64::MAX
    } else {
        limit as u64
    }
}

fn kv_error(e: wit::KvError) -> KvError {
    KvError {
        message: e.message,
        transient: e.transient,
    }
}

/// Runs `f` on the engine. Calling any export before `open` is a host bug: it traps.
fn with_engine<R>(f: impl FnOnce(&mut Engine) -> R) -> R {
    ENGINE.with_borrow_mut(|slot| match slot.as_mut() {
        Some(engine) => f(engine),
        None => panic!("rocklake core: open() must be called before any other export"),
    })
}

fn field(f: api::FieldDesc) -> wit::FieldDesc {
    wit::FieldDesc {
        name: f.name,
        table_oid: f.table_oid,
        column_id: f.column_id,
        type_oid: f.type_oid,
        type_len: f.type_len,
        type_mod: f.type_mod,
    }
}

fn output(o: Output) -> wit::Output {
    match o {
        Output::Rows { fields, rows, tag } => {
            let (data, ends) = rows.into_parts();
            wit::Output::Rows(wit::Rows {
                fields: fields.into_iter().map(field).collect(),
                data,
                ends,
                tag,
            })
        }
        Output::Command { tag } => wit::Output::Command(tag),
        Output::CopyOut {
            binary,
            columns,
            chunks,
            tag,
        } => {
            let (data, ends) = chunks.into_parts();
            wit::Output::CopyOut(wit::CopyOut {
                binary,
                columns,
                data,
                ends,
                tag,
            })
        }
        Output::CopyIn { binary, columns } => wit::Output::CopyIn(wit::CopyIn { binary, columns }),
        Output::Empty => wit::Output::Empty,
        Output::Notice(e) => wit::Output::Notice(pg_error(e)),
        Output::Signal { pid, terminate } => {
            wit::Output::Signal(wit::BackendSignal { pid, terminate })
        }
    }
}

fn pg_error(e: PgError) -> wit::PgError {
    wit::PgError {
        severity: e.severity,
        code: e.code,
        message: e.message,
        detail: e.detail,
        hint: e.hint,
        schema: e.schema,
        table: e.table,
        column: e.column,
        constraint: e.constraint,
        context: e.context,
        position: e.position,
    }
}

fn reply(r: Reply) -> wit::Reply {
    wit::Reply {
        outputs: r.outputs.into_iter().map(output).collect(),
        error: r.error.map(pg_error),
        status: match r.status {
            TxnStatus::Idle => wit::TxnStatus::Idle,
            TxnStatus::InBlock => wit::TxnStatus::InBlock,
            TxnStatus::Failed => wit::TxnStatus::Failed,
        },
        commit: r.commit.map(|b| wit::CommitBatch {
            seq: b.seq.0,
            puts: b.puts,
            deletes: b.deletes,
        }),
        settings: r.settings,
        wait: r.wait.map(|w| wit::Wait { until: w.until }),
        locks_released: r.locks_released,
    }
}

struct Component;

impl wit_engine::Guest for Component {
    fn open() -> Result<(), wit::PgError> {
        let engine = Engine::open(&HostKv).map_err(|e| pg_error(e.to_pg()))?;
        ENGINE.with_borrow_mut(|slot| *slot = Some(engine));
        Ok(())
    }

    fn latest() -> u64 {
        with_engine(|e| e.latest().0)
    }

    fn open_session(options: wit::SessionOptions) -> Result<wit::OpenedSession, wit::PgError> {
        let opts = crate::api::SessionOptions {
            user: options.user,
            database: options.database,
            read_only: options.read_only,
            settings: options.settings,
            backend_pid: options.backend_pid,
            client_addr: options.client_addr,
            client_port: options.client_port,
            backend_start: options.backend_start,
        };
        with_engine(|e| e.open_session_with(&opts))
            .map(|o| wit::OpenedSession {
                id: o.id.0,
                settings: o.settings,
            })
            .map_err(pg_error)
    }

    fn query(session: u64, sql: String, now: i64) -> wit::Reply {
        reply(with_engine(|e| {
            e.query(&HostKv, SessionId(session), &sql, now)
        }))
    }

    fn execute(session: u64, sql: String, now: i64) -> wit::Reply {
        reply(with_engine(|e| {
            e.execute(&HostKv, SessionId(session), &sql, now)
        }))
    }

    fn sync(session: u64, now: i64, abort: bool) -> wit::Reply {
        reply(with_engine(|e| {
            e.sync(&HostKv, SessionId(session), now, abort)
        }))
    }

    fn describe(session: u64, sql: String) -> Result<wit::Description, wit::PgError> {
        with_engine(|e| e.describe(&HostKv, SessionId(session), &sql))
            .map(|d| wit::Description {
                param_types: d.param_types,
                fields: d.fields.map(|fs| fs.into_iter().map(field).collect()),
            })
            .map_err(pg_error)
    }

    fn copy_in_data(session: u64, data: Vec<u8>) -> Result<(), wit::PgError> {
        with_engine(|e| e.copy_in_data(SessionId(session), &data)).map_err(pg_error)
    }

    fn copy_in_done(session: u64, now: i64) -> wit::Reply {
        reply(with_engine(|e| {
            e.copy_in_done(&HostKv, SessionId(session), now)
        }))
    }

    fn copy_in_fail(session: u64, message: String) -> wit::Reply {
        reply(with_engine(|e| {
            e.copy_in_fail(SessionId(session), &message)
        }))
    }

    fn commit_finished(session: u64, outcome: Result<(), wit::CommitFailure>) -> wit::Reply {
        let outcome = outcome.map_err(|f| CommitFailure {
            fenced: f.fenced,
            transient: f.transient,
            message: f.message,
        });
        reply(with_engine(|e| {
            e.commit_finished(&HostKv, SessionId(session), outcome)
        }))
    }

    fn wake(session: u64, now: i64) -> wit::Reply {
        reply(with_engine(|e| e.wake(&HostKv, SessionId(session), now)))
    }

    fn close_session(session: u64) {
        with_engine(|e| e.close_session(SessionId(session)))
    }

    fn set_read_only(read_only: bool) {
        with_engine(|e| e.set_read_only(read_only))
    }

    fn set_statement_memory_limit(bytes: u64) {
        with_engine(|e| e.set_statement_memory_limit(bytes))
    }

    fn refresh() -> Result<(), wit::PgError> {
        with_engine(|e| e.refresh(&HostKv)).map_err(pg_error)
    }
}
