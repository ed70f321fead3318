//! Protocol-layer tests: the server runs against a scripted fake backend and a raw-socket client
//! checks the exact message sequences PostgreSQL 15 would send.

#[path = "server_common/mod.rs"]
mod common;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use rocklake::server::{serve_backend, AuthConfig, AuthMethod, Backend, ServerConfig};
use rocklake_core::api::{
    Describe, FieldDesc, OpenedSession, Output, PgError, Reply, SessionId, SessionOptions,
    TxnStatus,
};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

const USER: &str = "rocklake";
const PASSWORD: &str = "s3cret-pw";

/// A backend that answers by matching the SQL text and records every call.
#[derive(Default)]
struct Fake {
    calls: Mutex<Vec<String>>,
    copied: Mutex<Vec<u8>>,
    in_block: Mutex<bool>,
    /// Set by `interrupt`; ends a running "sleep" with this error.
    interrupted: Mutex<Option<PgError>>,
    wake: tokio::sync::Notify,
}

fn field(name: &str, type_oid: u32, type_len: i16) -> FieldDesc {
    FieldDesc {
        name: name.into(),
        table_oid: 0,
        column_id: 0,
        type_oid,
        type_len,
        type_mod: -1,
    }
}

fn reply(outputs: Vec<Output>, error: Option<PgError>, status: TxnStatus) -> Reply {
    Reply {
        outputs,
        error,
        status,
        commit: None,
        settings: Vec::new(),
        ..Reply::default()
    }
}

/// A binary COPY stream with one (int8 7, NULL) row, split as PostgreSQL sends it.
fn binary_copy_chunks() -> Vec<Vec<u8>> {
    let mut header = b"PGCOPY\n\xff\r\n\0".to_vec();
    header.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
    let mut row = 2i16.to_be_bytes().to_vec();
    row.extend_from_slice(&8i32.to_be_bytes());
    row.extend_from_slice(&7i64.to_be_bytes());
    row.extend_from_slice(&(-1i32).to_be_bytes());
    let mut first = header;
    first.extend_from_slice(&row);
    vec![first, (-1i16).to_be_bytes().to_vec()]
}

impl Fake {
    fn status(&self) -> TxnStatus {
        if *self.in_block.lock().expect("lock") {
            TxnStatus::InBlock
        } else {
            TxnStatus::Idle
        }
    }
    fn log(&self, s: String) {
        self.calls.lock().expect("lock").push(s);
    }
    fn calls(&self) -> Vec<String> {
        self.calls.lock().expect("lock").clone()
    }
}

impl Backend for Fake {
    fn open_session(&self, options: &SessionOptions) -> Result<OpenedSession, PgError> {
        self.log(format!("open {} {}", options.user, options.database));
        // The core's own settings logic: the server must pass on what it reports.
        let mut settings =
            rocklake_core::settings::SessionSettings::new(&options.settings, options.read_only)
                .map_err(|e| e.to_pg())?;
        Ok(OpenedSession {
            id: SessionId(7),
            settings: settings.report(None, &options.user, false),
        })
    }

    fn query(&self, sid: SessionId, sql: &str) -> impl Future<Output = Reply> + Send {
        assert_eq!(sid, SessionId(7));
        self.log(format!("query {sql}"));
        let sql = sql.to_owned();
        async move {
            match sql.as_str() {
                "" => reply(vec![Output::Empty], None, self.status()),
                "BEGIN" => {
                    *self.in_block.lock().expect("lock") = true;
                    reply(
                        vec![Output::Command {
                            tag: "BEGIN".into(),
                        }],
                        None,
                        TxnStatus::InBlock,
                    )
                }
                "ROLLBACK" => {
                    *self.in_block.lock().expect("lock") = false;
                    reply(
                        vec![Output::Command {
                            tag: "ROLLBACK".into(),
                        }],
                        None,
                        TxnStatus::Idle,
                    )
                }
                "multi" => {
                    let mut e = PgError::new(
                        "23505",
                        "duplicate key value violates unique constraint \"ducklake_snapshot_pkey\"",
                    )
                    .with_detail("Key (snapshot_id)=(2) already exists.")
                    .with_hint("a hint");
                    e.schema = Some("public".into());
                    e.table = Some("ducklake_snapshot".into());
                    e.constraint = Some("ducklake_snapshot_pkey".into());
                    reply(
                        vec![
                            Output::Rows {
                                fields: vec![field("a", 20, 8), field("b", 25, -1)],
                                rows: [
                                    vec![Some(b"1".to_vec()), None],
                                    vec![Some(b"2".to_vec()), Some(b"x".to_vec())],
                                ]
                                .into_iter()
                                .collect(),
                                tag: "SELECT 2".into(),
                            },
                            Output::Command {
                                tag: "INSERT 0 1".into(),
                            },
                        ],
                        Some(e),
                        TxnStatus::Failed,
                    )
                }
                "rows3" => reply(
                    vec![Output::Rows {
                        fields: vec![field("n", 23, 4)],
                        rows: [
                            vec![Some(b"1".to_vec())],
                            vec![Some(b"2".to_vec())],
                            vec![Some(b"3".to_vec())],
                        ]
                        .into_iter()
                        .collect(),
                        tag: "SELECT 3".into(),
                    }],
                    None,
                    self.status(),
                ),
                "copy out" => reply(
                    vec![Output::CopyOut {
                        binary: true,
                        columns: 2,
                        chunks: binary_copy_chunks().iter().map(Vec::as_slice).collect(),
                        tag: "COPY 1".into(),
                    }],
                    None,
                    self.status(),
                ),
                "copy in" => reply(
                    vec![Output::CopyIn {
                        binary: true,
                        columns: 3,
                    }],
                    None,
                    self.status(),
                ),
                "sleep" => {
                    *self.interrupted.lock().expect("lock") = None;
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_secs(60)) => {}
                        _ = self.wake.notified() => {}
                    }
                    let error = self.interrupted.lock().expect("lock").take();
                    reply(
                        if error.is_some() {
                            vec![]
                        } else {
                            vec![Output::Command {
                                tag: "SLEPT".into(),
                            }]
                        },
                        error,
                        self.status(),
                    )
                }
                other => reply(
                    vec![],
                    Some(PgError::new("42601", format!("unexpected {other}"))),
                    self.status(),
                ),
            }
        }
    }

    fn describe(
        &self,
        _sid: SessionId,
        sql: &str,
    ) -> impl Future<Output = Result<Describe, PgError>> + Send {
        self.log(format!("describe {sql}"));
        let sql = sql.to_owned();
        async move {
            match sql.as_str() {
                "rows3" => Ok(Describe {
                    param_types: vec![],
                    fields: Some(vec![field("n", 23, 4)]),
                }),
                "BEGIN" | "ROLLBACK" => Ok(Describe {
                    param_types: vec![],
                    fields: None,
                }),
                "with param" => Ok(Describe {
                    param_types: vec![20],
                    fields: None,
                }),
                _ => Err(PgError::new("42P01", "relation \"nope\" does not exist")),
            }
        }
    }

    fn copy_in_data(
        &self,
        _sid: SessionId,
        data: &[u8],
    ) -> impl Future<Output = Result<(), PgError>> + Send {
        self.log(format!("copy data {}", data.len()));
        let bad = data.starts_with(b"BAD");
        if !bad {
            self.copied.lock().expect("lock").extend_from_slice(data);
        }
        async move {
            if bad {
                Err(PgError::new(
                    "22P04",
                    "invalid COPY file header (wrong length)",
                ))
            } else {
                Ok(())
            }
        }
    }

    fn copy_in_done(&self, _sid: SessionId) -> impl Future<Output = Reply> + Send {
        self.log("copy done".into());
        async move {
            // The statement after the COPY in the same query string continues here.
            reply(
                vec![
                    Output::Command {
                        tag: "COPY 1".into(),
                    },
                    Output::Command {
                        tag: "INSERT 0 1".into(),
                    },
                ],
                None,
                TxnStatus::InBlock,
            )
        }
    }

    fn copy_in_fail(&self, _sid: SessionId, message: &str) -> impl Future<Output = Reply> + Send {
        self.log(format!("copy fail {message}"));
        async move { reply(vec![], None, TxnStatus::Idle) }
    }

    fn close_session(&self, sid: SessionId) -> impl Future<Output = ()> + Send {
        self.log(format!("close {}", sid.0));
        async {}
    }

    fn interrupt(&self, sid: SessionId, reason: PgError) {
        self.log(format!("interrupt {} {}", sid.0, reason.message));
        *self.interrupted.lock().expect("lock") = Some(reason);
        self.wake.notify_waiters();
    }
    // The fake's requests are async and the server's own timer interrupts them.
    fn set_deadline(&self, _sid: SessionId, _deadline: Option<(std::time::Instant, PgError)>) {}
}

struct Harness {
    addr: SocketAddr,
    backend: Arc<Fake>,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

async fn start_with(method: AuthMethod, tweak: impl FnOnce(&mut ServerConfig)) -> Harness {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let backend = Arc::new(Fake::default());
    let mut config =
        ServerConfig::new(AuthConfig::new(method, USER, PASSWORD).expect("auth config"));
    tweak(&mut config);
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(serve_backend(
        listener,
        backend.clone(),
        config,
        async move {
            let _ = rx.await;
        },
    ));
    Harness {
        addr,
        backend,
        stop: Some(tx),
        task,
    }
}

async fn start() -> Harness {
    start_with(AuthMethod::Scram, |_| {}).await
}

impl Harness {
    async fn login(&self) -> Client {
        let mut c = Client::raw(self.addr).await;
        c.scram_login(USER, PASSWORD).await.expect("login");
        c
    }
}

#[tokio::test]
async fn server_startup_sends_pg15_parameters_and_key() {
    let h = start().await;
    let c = h.login().await;
    let names: Vec<&str> = c.params.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "application_name",
            "client_encoding",
            "DateStyle",
            "default_transaction_read_only",
            "in_hot_standby",
            "integer_datetimes",
            "IntervalStyle",
            "is_superuser",
            "server_encoding",
            "server_version",
            "session_authorization",
            "standard_conforming_strings",
            "TimeZone"
        ]
    );
    let get = |n: &str| {
        c.params
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
            .expect("param")
    };
    assert_eq!(get("application_name"), "");
    assert_eq!(get("client_encoding"), "UTF8");
    assert_eq!(get("DateStyle"), "ISO, MDY");
    assert_eq!(get("integer_datetimes"), "on");
    assert_eq!(get("standard_conforming_strings"), "on");
    assert_eq!(get("session_authorization"), USER);
    assert_eq!(get("TimeZone"), "Etc/UTC");
    assert!(
        get("server_version").starts_with("15.18 ("),
        "libpq must parse 15.18"
    );
    assert!(c.pid > 0);
    assert_eq!(h.backend.calls(), vec![format!("open {USER} lake")]);
}

#[tokio::test]
async fn server_scram_wrong_password_and_unknown_user_fail_28p01() {
    let h = start().await;
    let mut c = Client::raw(h.addr).await;
    let err = c.scram_login(USER, "wrong").await.expect_err("must fail");
    assert_eq!(err.sqlstate(), "28P01");
    assert_eq!(err.field('S').as_deref(), Some("FATAL"));
    assert_eq!(
        err.field('M').as_deref(),
        Some("password authentication failed for user \"rocklake\"")
    );
    assert!(c.is_closed().await);

    let mut c = Client::raw(h.addr).await;
    let err = c
        .scram_login("mallory", PASSWORD)
        .await
        .expect_err("unknown user must fail");
    assert_eq!(err.sqlstate(), "28P01");
    assert!(h.backend.calls().is_empty(), "no session for failed logins");
}

async fn password_login(h: &Harness, code: i32, password: &str) -> Msg {
    let mut c = Client::raw(h.addr).await;
    let m = c.start(USER).await;
    assert_eq!((m.ty, be_i32(&m.body)), (b'R', code));
    let response = if code == 5 {
        let salt: [u8; 4] = m.body[4..8].try_into().expect("salt");
        postgres_protocol::authentication::md5_hash(USER.as_bytes(), password.as_bytes(), salt)
    } else {
        password.to_owned()
    };
    let mut b = response.into_bytes();
    b.push(0);
    c.send(&msg(b'p', &b)).await;
    c.recv().await
}

#[tokio::test]
async fn server_md5_and_cleartext_auth() {
    let h = start_with(AuthMethod::Md5, |_| {}).await;
    let ok = password_login(&h, 5, PASSWORD).await;
    assert_eq!((ok.ty, be_i32(&ok.body)), (b'R', 0));
    assert_eq!(password_login(&h, 5, "nope").await.sqlstate(), "28P01");

    let h = start_with(AuthMethod::Password, |_| {}).await;
    let ok = password_login(&h, 3, PASSWORD).await;
    assert_eq!((ok.ty, be_i32(&ok.body)), (b'R', 0));
    assert_eq!(password_login(&h, 3, "nope").await.sqlstate(), "28P01");
}

#[tokio::test]
async fn server_trust_needs_no_password() {
    let h = start_with(AuthMethod::Trust, |_| {}).await;
    let mut c = Client::raw(h.addr).await;
    let m = c.start(USER).await;
    assert_eq!((m.ty, be_i32(&m.body)), (b'R', 0));
    c.finish_startup().await;
}

#[tokio::test]
async fn server_multi_output_reply_then_error_and_failed_status() {
    let h = start().await;
    let mut c = h.login().await;
    c.send(&query("multi")).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "TDDCCEZ");
    // RowDescription: 2 fields, text format, OIDs as given.
    let t = &msgs[0].body;
    assert_eq!(be_i16(t), 2);
    assert_eq!(cstr(&t[2..]), "a");
    let a = &t[4..];
    assert_eq!(be_i32(a), 0); // table oid
    assert_eq!(be_i16(&a[4..]), 0); // column number
    assert_eq!(be_i32(&a[6..]) as u32, 20); // int8
    assert_eq!(be_i16(&a[10..]), 8);
    assert_eq!(be_i32(&a[12..]), -1);
    assert_eq!(be_i16(&a[16..]), 0); // text
    assert_eq!(a.len(), 18 + 2 + 18, "exactly two field descriptions");
    // DataRow with a NULL.
    assert_eq!(
        msgs[1].body,
        [
            &[0, 2][..],
            &1i32.to_be_bytes(),
            b"1",
            &(-1i32).to_be_bytes()
        ]
        .concat()
    );
    assert_eq!(msgs[3].tag(), "SELECT 2");
    assert_eq!(msgs[4].tag(), "INSERT 0 1");
    let e = &msgs[5];
    assert_eq!(
        e.fields(),
        vec![
            ('S', "ERROR".to_string()),
            ('V', "ERROR".to_string()),
            ('C', "23505".to_string()),
            (
                'M',
                "duplicate key value violates unique constraint \"ducklake_snapshot_pkey\""
                    .to_string()
            ),
            ('D', "Key (snapshot_id)=(2) already exists.".to_string()),
            ('H', "a hint".to_string()),
            ('s', "public".to_string()),
            ('t', "ducklake_snapshot".to_string()),
            ('n', "ducklake_snapshot_pkey".to_string()),
        ]
    );
    assert_eq!(msgs[6].body, b"E");
}

#[tokio::test]
async fn server_empty_query() {
    let h = start().await;
    let mut c = h.login().await;
    c.send(&query("")).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "IZ");
    assert_eq!(msgs[1].body, b"I");
}

#[tokio::test]
async fn server_copy_out_binary_framing() {
    let h = start().await;
    let mut c = h.login().await;
    c.send(&query("BEGIN")).await;
    assert_eq!(
        c.until_ready().await.last().map(|m| m.body.clone()),
        Some(b"T".to_vec())
    );
    c.send(&query("copy out")).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "HddcCZ");
    // CopyOutResponse: overall format 1, 2 columns, each format 1.
    assert_eq!(msgs[0].body, [1, 0, 2, 0, 1, 0, 1]);
    let chunks = binary_copy_chunks();
    assert_eq!(msgs[1].body, chunks[0]);
    assert!(msgs[1].body.starts_with(b"PGCOPY\n\xff\r\n\0"));
    assert_eq!(msgs[2].body, chunks[1]);
    assert!(msgs[3].body.is_empty());
    assert_eq!(msgs[4].tag(), "COPY 1");
    assert_eq!(msgs[5].body, b"T");
}

#[tokio::test]
async fn server_copy_in_round_trip_continues_the_query() {
    let h = start().await;
    let mut c = h.login().await;
    c.send(&query("copy in")).await;
    let g = c.recv().await;
    assert_eq!(g.ty(), 'G');
    assert_eq!(g.body, [1, 0, 3, 0, 1, 0, 1, 0, 1]);
    c.send(&copy_data(b"PGCOPY\n\xff\r\n\0part1")).await;
    c.send(&sync()).await; // ignored during COPY, as by PostgreSQL
    c.send(&copy_data(b"part2")).await;
    c.send(&copy_done()).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "CCZ");
    assert_eq!(msgs[0].tag(), "COPY 1");
    assert_eq!(msgs[1].tag(), "INSERT 0 1");
    assert_eq!(msgs[2].body, b"T");
    assert_eq!(
        h.backend.copied.lock().expect("lock").as_slice(),
        b"PGCOPY\n\xff\r\n\0part1part2"
    );
}

#[tokio::test]
async fn server_copy_fail_and_bad_data_end_the_copy() {
    let h = start().await;
    let mut c = h.login().await;
    c.send(&query("copy in")).await;
    assert_eq!(c.recv().await.ty(), 'G');
    c.send(&copy_fail("client gave up")).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "EZ");
    assert_eq!(msgs[0].sqlstate(), "57014");
    assert_eq!(
        msgs[0].field('M').as_deref(),
        Some("COPY from stdin failed: client gave up")
    );

    // A data error answers at once; the client's further COPY messages are ignored.
    c.send(&query("copy in")).await;
    assert_eq!(c.recv().await.ty(), 'G');
    c.send(&copy_data(b"BAD")).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "EZ");
    assert_eq!(msgs[0].sqlstate(), "22P04");
    c.send(&copy_data(b"more")).await;
    c.send(&copy_done()).await;
    c.send(&query("")).await;
    assert_eq!(Client::types(&c.until_ready().await), "IZ");
    assert!(h
        .backend
        .calls()
        .contains(&"copy fail invalid COPY file header (wrong length)".to_string()));
}

#[tokio::test]
async fn server_parse_describe_as_duckdb_sends_it() {
    let h = start().await;
    let mut c = h.login().await;
    c.send(&query("BEGIN")).await;
    c.until_ready().await;
    // DuckDB: Parse(unnamed) + Sync, then Describe('S') + Sync.
    c.send(&[parse("", "rows3", &[]), sync()].concat()).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "1Z");
    assert_eq!(msgs[1].body, b"T");
    c.send(&[describe(b'S', ""), sync()].concat()).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "tTZ");
    assert_eq!(msgs[0].body, [0, 0]);
    assert_eq!(be_i16(&msgs[1].body), 1);
    // A statement without result columns: NoData.
    c.send(&[parse("", "with param", &[]), describe(b'S', ""), sync()].concat())
        .await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "1tnZ");
    assert_eq!(msgs[1].body, [0, 1, 0, 0, 0, 20]);
}

#[tokio::test]
async fn server_parse_error_skips_to_sync_and_aborts_block() {
    let h = start().await;
    let mut c = h.login().await;
    c.send(&query("BEGIN")).await;
    c.until_ready().await;
    c.send(
        &[
            parse("", "select from nope", &[]),
            describe(b'S', ""),
            sync(),
        ]
        .concat(),
    )
    .await;
    let msgs = c.until_ready().await;
    assert_eq!(
        Client::types(&msgs),
        "EZ",
        "Describe after a failed Parse is skipped"
    );
    assert_eq!(msgs[0].sqlstate(), "42P01");
    assert_eq!(msgs[1].body, b"E");
    // Like PostgreSQL: the block is aborted until ROLLBACK.
    c.send(&query("rows3")).await;
    let msgs = c.until_ready().await;
    assert_eq!(msgs[0].sqlstate(), "25P02");
    assert_eq!(msgs[1].body, b"E");
    c.send(&query("rollback;")).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "CZ");
    assert_eq!(msgs[1].body, b"I");
    let calls = h.backend.calls();
    assert!(calls.contains(&"query ROLLBACK".to_string()), "{calls:?}");
    assert!(!calls.contains(&"query rows3".to_string()), "{calls:?}");
}

#[tokio::test]
async fn server_bind_execute_unnamed_with_row_limit() {
    let h = start().await;
    let mut c = h.login().await;
    c.send(
        &[
            parse("", "rows3", &[]),
            bind_unnamed(&[]),
            describe(b'P', ""),
            execute(2),
            execute(0),
            sync(),
        ]
        .concat(),
    )
    .await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "12TDDsDCZ");
    assert_eq!(
        msgs[6].body,
        [&[0, 1][..], &1i32.to_be_bytes(), b"3"].concat()
    );
    // The tag that ends a portal read in parts counts that Execute's rows, as PostgreSQL's.
    assert_eq!(msgs[7].tag(), "SELECT 1");
    // A Bind with fewer values than the statement has parameters is a protocol error;
    // a named statement is kept, and preparing its name again is 42P05.
    c.send(
        &[
            parse("", "with param", &[]),
            bind_unnamed(&[]),
            execute(0),
            sync(),
        ]
        .concat(),
    )
    .await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "1EZ");
    assert_eq!(msgs[1].sqlstate(), "08P01");
    c.send(&[parse("s1", "rows3", &[]), describe(b'S', "s1"), sync()].concat())
        .await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "1tTZ");
    c.send(&[parse("s1", "rows3", &[]), sync()].concat()).await;
    let msgs = c.until_ready().await;
    assert_eq!(msgs[0].sqlstate(), "42P05");
    assert_eq!(msgs[1].body, b"I");
}

#[tokio::test]
async fn server_cancel_request_cancels_running_query() {
    let h = start().await;
    let mut c = h.login().await;
    // Cancelling an idle session does nothing.
    send_cancel(h.addr, c.pid, c.secret).await;
    c.send(&query("")).await;
    assert_eq!(Client::types(&c.until_ready().await), "IZ");
    // A wrong key does not cancel.
    c.send(&query("sleep")).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    send_cancel(h.addr, c.pid, c.secret.wrapping_add(1)).await;
    send_cancel(h.addr, c.pid, c.secret).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "EZ");
    assert_eq!(msgs[0].sqlstate(), "57014");
    assert_eq!(
        msgs[0].field('M').as_deref(),
        Some("canceling statement due to user request")
    );
    assert_eq!(msgs[1].body, b"I");
    // The session keeps working.
    c.send(&query("rows3")).await;
    assert_eq!(Client::types(&c.until_ready().await), "TDDDCZ");
}

#[tokio::test]
async fn server_statement_timeout_interrupts_with_57014() {
    let h = start_with(AuthMethod::Scram, |c| {
        c.statement_timeout = Some(Duration::from_millis(200));
    })
    .await;
    let mut c = h.login().await;
    c.send(&query("sleep")).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "EZ");
    assert_eq!(msgs[0].sqlstate(), "57014");
    assert_eq!(
        msgs[0].field('M').as_deref(),
        Some("canceling statement due to statement timeout")
    );
    // Quick statements are not affected, and the session keeps working.
    c.send(&query("rows3")).await;
    assert_eq!(Client::types(&c.until_ready().await), "TDDDCZ");
}

#[tokio::test]
async fn server_idle_in_transaction_timeout_is_fatal_25p03() {
    let h = start_with(AuthMethod::Scram, |c| {
        c.idle_in_transaction_timeout = Some(Duration::from_millis(200));
    })
    .await;
    let mut c = h.login().await;
    // Idle outside a transaction: no timeout.
    tokio::time::sleep(Duration::from_millis(400)).await;
    c.send(&query("BEGIN")).await;
    assert_eq!(Client::types(&c.until_ready().await), "CZ");
    let m = c.recv().await;
    assert_eq!(m.sqlstate(), "25P03");
    assert_eq!(m.field('S').as_deref(), Some("FATAL"));
    assert_eq!(
        m.field('M').as_deref(),
        Some("terminating connection due to idle-in-transaction timeout")
    );
    assert!(c.is_closed().await, "the server closes the connection");
}

#[tokio::test]
async fn server_invalid_message_type_is_fatal_08p01() {
    let h = start().await;
    let mut c = h.login().await;
    c.send(&msg(b'Y', b"junk")).await;
    let e = c.recv().await;
    assert_eq!(e.sqlstate(), "08P01");
    assert_eq!(e.field('S').as_deref(), Some("FATAL"));
    assert_eq!(
        e.field('M').as_deref(),
        Some("invalid frontend message type 89")
    );
    assert!(c.is_closed().await);
    // The session was closed in the service.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(h.backend.calls().contains(&"close 7".to_string()));
}

#[tokio::test]
async fn server_malformed_bodies_are_errors_not_crashes() {
    let h = start().await;
    let mut c = h.login().await;
    // Query without its terminating NUL: ERROR 08P01, connection stays.
    c.send(&msg(b'Q', b"SELECT 1")).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "EZ");
    assert_eq!(msgs[0].sqlstate(), "08P01");
    assert_eq!(
        msgs[0].field('M').as_deref(),
        Some("invalid string in message")
    );
    // A bad Describe subtype in the extended protocol: error, skip to Sync.
    c.send(&[msg(b'D', b"X\0"), parse("", "rows3", &[]), sync()].concat())
        .await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "EZ");
    assert_eq!(
        msgs[0].field('M').as_deref(),
        Some("invalid DESCRIBE message subtype 88")
    );
    // Invalid UTF-8.
    c.send(&query("SELECT '\u{0}")).await; // embedded NUL ends the string early: trailing bytes
    let msgs = c.until_ready().await;
    assert_eq!(msgs[0].sqlstate(), "08P01");
    c.send(&msg(b'Q', b"\xff\xfe\0")).await;
    let msgs = c.until_ready().await;
    assert_eq!(msgs[0].sqlstate(), "22021");
    // A negative length word is fatal.
    c.send(&[b'Q', 0, 0, 0, 1]).await;
    let e = c.recv().await;
    assert_eq!(e.sqlstate(), "08P01");
    assert!(c.is_closed().await);
}

#[tokio::test]
async fn server_oversized_statement_is_54000_and_connection_survives() {
    let h = start_with(AuthMethod::Scram, |c| c.max_message_bytes = 1024).await;
    let mut c = h.login().await;
    c.send(&query(&"x".repeat(5000))).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "EZ");
    assert_eq!(msgs[0].sqlstate(), "54000");
    c.send(&query("rows3")).await;
    assert_eq!(Client::types(&c.until_ready().await), "TDDDCZ");
    assert!(!h.backend.calls().iter().any(|s| s.starts_with("query xxx")));
}

#[tokio::test]
async fn server_unsupported_protocol_and_missing_user() {
    let h = start().await;
    let mut c = Client::raw(h.addr).await;
    c.send(&startup_packet(&[("user", USER)], 2 << 16)).await;
    let e = c.recv().await;
    assert_eq!(e.sqlstate(), "0A000");
    assert_eq!(
        e.field('M').as_deref(),
        Some("unsupported frontend protocol 2.0: server supports 3.0 to 3.0")
    );

    let mut c = Client::raw(h.addr).await;
    c.send(&startup_packet(&[("database", "lake")], 196_608))
        .await;
    assert_eq!(c.recv().await.sqlstate(), "28000");

    // Protocol 3.2 is negotiated down to 3.0 and the session continues.
    let mut c = Client::raw(h.addr).await;
    c.send(&startup_packet(
        &[("user", USER), ("_pq_.x", "1")],
        (3 << 16) | 2,
    ))
    .await;
    let v = c.recv().await;
    assert_eq!(v.ty(), 'v');
    assert_eq!(be_i32(&v.body), 3 << 16);
    assert_eq!(be_i32(&v.body[4..]), 1);
    assert_eq!(cstr(&v.body[8..]), "_pq_.x");
    assert_eq!(c.recv().await.ty(), 'R');
}

#[tokio::test]
async fn server_connection_limit_is_53300() {
    let h = start_with(AuthMethod::Scram, |c| c.max_connections = 1).await;
    let _first = h.login().await;
    let mut second = Client::raw(h.addr).await;
    let e = second.start(USER).await;
    assert_eq!(e.sqlstate(), "53300");
}

#[tokio::test]
async fn server_shutdown_ends_idle_sessions_with_57p01() {
    let mut h = start().await;
    let mut c = h.login().await;
    if let Some(stop) = h.stop.take() {
        let _ = stop.send(());
    }
    let e = c.recv().await;
    assert_eq!(e.sqlstate(), "57P01");
    assert!(c.is_closed().await);
    let result = tokio::time::timeout(TIMEOUT, &mut h.task)
        .await
        .expect("server stops")
        .expect("join");
    assert!(result.is_ok());
    assert!(h.backend.calls().contains(&"close 7".to_string()));
    assert!(
        tokio::net::TcpStream::connect(h.addr).await.is_err(),
        "listener closed"
    );
}

#[tokio::test]
async fn server_cancel_request_aborts_copy_in() {
    let h = start().await;
    let mut c = h.login().await;
    c.send(&query("copy in")).await;
    assert_eq!(c.recv().await.ty(), 'G');
    send_cancel(h.addr, c.pid, c.secret).await;
    let msgs = c.until_ready().await;
    assert_eq!(Client::types(&msgs), "EZ");
    assert_eq!(msgs[0].sqlstate(), "57014");
    assert!(h
        .backend
        .calls()
        .contains(&"copy fail canceling statement due to user request".to_string()));
}
