//! `pg_stat_activity`, `pg_backend_pid()` and the backend signals through the engine, with
//! roles PostgreSQL's differential tests cannot have (RockLake's roles come from its
//! configuration): what a read-only role sees of other sessions and whom it may signal.
//! The messages are PostgreSQL 15's (checked by hand against 15.18 with two roles).

use rocklake_core::api::{Output, Reply, SessionId, SessionOptions};
use rocklake_core::memkv::MemKv;
use rocklake_core::Engine;

fn open(engine: &mut Engine, user: &str, read_only: bool, pid: i32, start: i64) -> SessionId {
    engine
        .open_session_with(&SessionOptions {
            user: user.into(),
            database: "lake".into(),
            read_only,
            settings: vec![("application_name".into(), format!("app{pid}"))],
            backend_pid: pid,
            client_addr: Some("192.0.2.7".into()),
            client_port: Some(40_000 + pid),
            backend_start: start,
        })
        .expect("open session")
        .id
}

fn rows(r: &Reply) -> Vec<Vec<Option<String>>> {
    assert!(r.error.is_none(), "{:?}", r.error);
    match r.outputs.last() {
        Some(Output::Rows { rows, .. }) => rows.to_strings(),
        other => panic!("expected rows, got {other:?}"),
    }
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

const COLUMNS: &str = "SELECT pid, usename, application_name, client_addr, client_port, \
    backend_start, xact_start IS NOT NULL, state, wait_event, query, backend_type \
    FROM pg_stat_activity ORDER BY pid";

#[test]
fn sessions_show_their_state_and_a_read_only_role_sees_only_its_own() {
    let kv = MemKv::new();
    let mut engine = Engine::open(&kv).expect("open");
    let admin = open(&mut engine, "postgres", false, 11, 1_000_000);
    let reader = open(&mut engine, "reader", true, 22, 2_000_000);
    let reader2 = open(&mut engine, "reader", true, 33, 3_000_000);
    assert!(engine
        .query(&kv, reader2, "BEGIN", 4_000_000)
        .error
        .is_none());
    assert!(engine
        .query(&kv, reader2, "SELECT 1", 5_000_000)
        .error
        .is_none());

    let seen = rows(&engine.query(&kv, admin, COLUMNS, 6_000_000));
    let row = |pid: &str, user: &str, state: &str, wait: Option<&str>, xact: &str, query: &str| {
        let n: i64 = pid.parse().expect("pid");
        vec![
            s(pid),
            s(user),
            s(&format!("app{pid}")),
            s("192.0.2.7"),
            s(&(40_000 + n).to_string()),
            s(&format!("2000-01-01 00:00:0{}+00", n / 11)),
            s(xact),
            s(state),
            wait.map(str::to_string),
            s(query),
            s("client backend"),
        ]
    };
    assert_eq!(
        seen,
        vec![
            row("11", "postgres", "active", None, "t", COLUMNS),
            row("22", "reader", "idle", Some("ClientRead"), "f", ""),
            row(
                "33",
                "reader",
                "idle in transaction",
                Some("ClientRead"),
                "t",
                "SELECT 1"
            ),
        ]
    );

    // A read-only role sees its own role's sessions; of the superuser's, the pid, role and
    // application only.
    let seen = rows(&engine.query(
        &kv,
        reader,
        "SELECT pid, usename, application_name, state, query, backend_type, client_addr \
         FROM pg_stat_activity ORDER BY pid",
        7_000_000,
    ));
    assert_eq!(seen[0][..3], [s("11"), s("postgres"), s("app11")]);
    assert_eq!(
        seen[0][3..],
        [None, s("<insufficient privilege>"), None, None]
    );
    assert_eq!(seen[2][3..5], [s("idle in transaction"), s("SELECT 1")]);
    assert_eq!(
        rows(&engine.query(&kv, reader, "SELECT pg_backend_pid()", 8_000_000)),
        vec![vec![s("22")]]
    );
}

#[test]
fn signals_follow_postgres_rules_and_reach_the_host() {
    let kv = MemKv::new();
    let mut engine = Engine::open(&kv).expect("open");
    let admin = open(&mut engine, "postgres", false, 11, 1);
    let reader = open(&mut engine, "reader", true, 22, 2);
    let _reader2 = open(&mut engine, "reader", true, 33, 3);

    let err = |r: Reply| {
        let e = r.error.expect("an error");
        (e.code, e.message)
    };
    assert_eq!(
        err(engine.query(&kv, reader, "SELECT pg_terminate_backend(11)", 4)),
        (
            "42501".into(),
            "must be a superuser to terminate superuser process".into()
        )
    );
    assert_eq!(
        err(engine.query(&kv, reader, "SELECT pg_cancel_backend(11)", 5)),
        (
            "42501".into(),
            "must be a superuser to cancel superuser query".into()
        )
    );

    // Its own role's other session: the host is told to end it.
    let r = engine.query(&kv, reader, "SELECT pg_terminate_backend(33)", 6);
    assert_eq!(rows(&r), vec![vec![s("t")]]);
    assert!(r.outputs.contains(&Output::Signal {
        pid: 33,
        terminate: true
    }));

    // An unknown pid: a WARNING and false, no signal.
    let r = engine.query(&kv, admin, "SELECT pg_cancel_backend(99)", 7);
    assert_eq!(rows(&r), vec![vec![s("f")]]);
    assert!(matches!(&r.outputs[0], Output::Notice(n)
        if n.severity == "WARNING" && n.code == "01000"
            && n.message == "PID 99 is not a PostgreSQL backend process"));
    assert!(!r.outputs.iter().any(|o| matches!(o, Output::Signal { .. })));

    // The superuser may cancel anyone; its own backend ends its statement (57014) or its
    // session (FATAL 57P01) at once, rolling its transaction back.
    let r = engine.query(&kv, admin, "SELECT pg_cancel_backend(22)", 8);
    assert!(r.outputs.contains(&Output::Signal {
        pid: 22,
        terminate: false
    }));
    assert_eq!(
        err(engine.query(&kv, admin, "SELECT pg_cancel_backend(pg_backend_pid())", 9)).0,
        "57014"
    );
    let r = engine.query(
        &kv,
        admin,
        "CREATE TABLE gone (a int); SELECT pg_terminate_backend(pg_backend_pid())",
        10,
    );
    let e = r.error.expect("FATAL");
    assert_eq!((e.severity.as_str(), e.code.as_str()), ("FATAL", "57P01"));
    assert!(
        r.commit.is_none(),
        "the implicit transaction must roll back"
    );
    let r = engine.query(
        &kv,
        reader,
        "SELECT count(*) FROM pg_tables WHERE tablename = 'gone'",
        11,
    );
    assert_eq!(rows(&r), vec![vec![s("0")]]);
}

#[test]
fn a_pipeline_between_its_executes_is_active_even_in_a_block() {
    let kv = MemKv::new();
    let mut engine = Engine::open(&kv).expect("open");
    let admin = open(&mut engine, "postgres", false, 11, 1);
    let piped = open(&mut engine, "postgres", false, 22, 2);
    assert!(engine.query(&kv, piped, "BEGIN", 3).error.is_none());
    assert!(engine.execute(&kv, piped, "SELECT 1", 4).error.is_none());
    let state = "SELECT state FROM pg_stat_activity WHERE pid = 22";
    assert_eq!(
        rows(&engine.query(&kv, admin, state, 5)),
        vec![vec![s("active")]]
    );
    assert!(engine.sync(&kv, piped, 6, false).error.is_none());
    assert_eq!(
        rows(&engine.query(&kv, admin, state, 7)),
        vec![vec![s("idle in transaction")]]
    );
}

#[test]
fn a_client_address_that_is_no_ip_address_is_refused_at_open() {
    let kv = MemKv::new();
    let mut engine = Engine::open(&kv).expect("open");
    let e = engine
        .open_session_with(&SessionOptions {
            client_addr: Some("not-an-address".into()),
            ..SessionOptions::plain("u", "lake")
        })
        .expect_err("refused");
    assert_eq!(e.code, "22P02", "{}", e.message);
}
