//! Session settings through the engine: transactional SET, reports to the host, read-only
//! roles, and statements the host interrupts.

use std::cell::Cell;

use rocklake_core::api::{KvError, KvPage, KvRead, Reply, SessionOptions, TxnStatus};
use rocklake_core::memkv::MemKv;
use rocklake_core::Engine;

/// The store, plus a host that asks every statement to stop after `stop_after` checks.
struct Interrupting<'a> {
    kv: &'a MemKv,
    checks: Cell<u32>,
    stop_after: u32,
}

impl KvRead for Interrupting<'_> {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.kv.scan(start, end, limit)
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        self.kv.get(key)
    }
    fn interrupted(&self) -> Option<String> {
        self.checks.set(self.checks.get() + 1);
        (self.checks.get() > self.stop_after)
            .then(|| "canceling statement due to statement timeout".to_string())
    }
}

fn code(r: &Reply) -> Option<&str> {
    r.error.as_ref().map(|e| e.code.as_str())
}

#[test]
fn an_interrupted_statement_fails_with_57014_and_aborts_its_block() {
    let kv = MemKv::new();
    let mut engine = Engine::open(&kv).expect("open");
    let s = engine.open_session("t", "lake");
    let slow = "SELECT count(*) FROM generate_series(1, 300) a, generate_series(1, 100) b";
    let host = Interrupting {
        kv: &kv,
        checks: Cell::new(0),
        stop_after: 2,
    };
    let r = engine.query(&host, s, "BEGIN", 1);
    assert!(r.error.is_none());
    let r = engine.query(&host, s, slow, 2);
    assert_eq!(code(&r), Some("57014"), "{r:?}");
    assert_eq!(r.status, TxnStatus::Failed);
    assert!(
        host.checks.get() >= 3,
        "the host was asked {} times",
        host.checks.get()
    );
    let r = engine.query(&kv, s, "ROLLBACK", 3);
    assert!(r.error.is_none());
    // Without an interruption the same statement completes.
    let r = engine.query(&kv, s, slow, 4);
    assert!(r.error.is_none(), "{r:?}");
}

#[test]
fn set_reports_changes_in_postgresql_order_and_undoes_them_on_rollback() {
    let kv = MemKv::new();
    let mut engine = Engine::open(&kv).expect("open");
    let opened = engine
        .open_session_with(&SessionOptions {
            user: "u".into(),
            database: "lake".into(),
            read_only: false,
            settings: vec![
                ("statement_timeout".into(), "5000".into()),
                ("application_name".into(), "app".into()),
            ],
            ..Default::default()
        })
        .expect("open session");
    let names: Vec<&str> = opened.settings.iter().map(|(n, _)| n.as_str()).collect();
    let mut expected: Vec<&str> = rocklake_core::settings::REPORTED.to_vec();
    expected.extend(rocklake_core::settings::HOST_ENFORCED);
    assert_eq!(names, expected);
    assert!(opened
        .settings
        .contains(&("statement_timeout".into(), "5s".into())));
    let s = opened.id;
    let r = engine.query(&kv, s, "BEGIN; SET application_name = 'x'", 1);
    assert_eq!(
        r.settings,
        [("application_name".to_string(), "x".to_string())]
    );
    let r = engine.query(&kv, s, "SELECT 1", 2);
    assert!(r.settings.is_empty(), "{:?}", r.settings);
    let r = engine.query(&kv, s, "ROLLBACK", 3);
    assert_eq!(
        r.settings,
        [("application_name".to_string(), "app".to_string())]
    );
    let r = engine.query(
        &kv,
        s,
        "SET statement_timeout = 0; SET application_name = DEFAULT",
        4,
    );
    assert_eq!(
        r.settings,
        [("statement_timeout".to_string(), "0".to_string())]
    );
    let r = engine.query(&kv, s, "RESET ALL", 5);
    assert_eq!(
        r.settings,
        [("statement_timeout".to_string(), "5s".to_string())]
    );
}

#[test]
fn a_read_only_role_cannot_write_or_ask_for_read_write() {
    let kv = MemKv::new();
    let mut engine = Engine::open(&kv).expect("open");
    let opened = engine
        .open_session_with(&SessionOptions {
            user: "reader".into(),
            database: "lake".into(),
            read_only: true,
            settings: vec![],
            ..Default::default()
        })
        .expect("open session");
    let s = opened.id;
    for (sql, want) in [
        ("CREATE TABLE t (a int)", "25006"),
        ("SET default_transaction_read_only = off", "42501"),
        ("BEGIN READ WRITE", "42501"),
    ] {
        let r = engine.query(&kv, s, sql, 1);
        assert_eq!(code(&r), Some(want), "{sql}: {r:?}");
    }
    let bad = engine.open_session_with(&SessionOptions {
        user: "u".into(),
        settings: vec![("nosuch".into(), "1".into())],
        ..Default::default()
    });
    assert_eq!(bad.err().map(|e| e.code), Some("42704".to_string()));
}

#[test]
fn a_custom_name_must_be_dotted_simple_identifiers() {
    let kv = MemKv::new();
    let mut engine = Engine::open(&kv).expect("open");
    let s = engine.open_session("u", "lake");
    let r = engine.query(&kv, s, "SET \"my app\".x = 1", 1);
    let e = r.error.expect("an error");
    assert_eq!(e.code, "42602");
    assert_eq!(
        e.message,
        "invalid configuration parameter name \"my app.x\""
    );
    assert_eq!(
        e.detail.as_deref(),
        Some("Custom parameter names must be two or more simple identifiers separated by dots.")
    );
    assert!(engine
        .query(&kv, s, "SET my_app.x$1 = 'v'", 2)
        .error
        .is_none());
}
