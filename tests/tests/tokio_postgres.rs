//! tokio-postgres (the Rust client under deadpool, bb8, refinery and diesel-async) against
//! RockLake and PostgreSQL 15, compared step by step: binary parameters and results of every
//! type it maps, statements prepared with and without types, pipelined queries, simple-query
//! batches, every error field it exposes (`DbError`: SQLSTATE, message, detail, hint,
//! position, schema, table, column, constraint), notices, transactions and savepoints, named
//! portals read in parts (`bind` + `query_portal`), binary COPY both ways, a COPY refused
//! mid-stream, and a COPY cancelled with the cancel key.

use std::fmt::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::{SinkExt, StreamExt, TryStreamExt};
use rocklake_tests::Differential;
use tokio_postgres::binary_copy::{BinaryCopyInWriter, BinaryCopyOutStream};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{AsyncMessage, Client, Error, IsolationLevel, NoTls, SimpleQueryMessage};

type Step = Result<String, Error>;

/// An error as everything tokio-postgres lets a program read of it.
fn describe(e: &Error) -> String {
    match e.as_db_error() {
        Some(d) => format!(
            "ERROR {} {} | detail={:?} hint={:?} position={:?} schema={:?} table={:?} column={:?} constraint={:?}",
            d.code().code(),
            d.message(),
            d.detail(),
            d.hint(),
            d.position(),
            d.schema(),
            d.table(),
            d.column(),
            d.constraint(),
        ),
        None => format!("client error: {e}"),
    }
}

async fn connect(dsn: &str) -> Result<Client, Error> {
    let (client, conn) = tokio_postgres::connect(dsn, NoTls).await?;
    tokio::spawn(conn);
    Ok(client)
}

/// Reads an Execute of `portal` fetching at most `n` rows: the rows and the final tag's count
/// (`None` while the portal is suspended).
async fn fetch(
    tx: &tokio_postgres::Transaction<'_>,
    portal: &tokio_postgres::Portal,
    n: i32,
) -> String {
    let r = async {
        let rows = tx.query_portal_raw(portal, n).await?;
        futures::pin_mut!(rows);
        let mut ids = Vec::new();
        while let Some(row) = rows.try_next().await? {
            ids.push(row.get::<_, i64>(0));
        }
        Ok::<_, Error>(format!("{ids:?} tag={:?}", rows.rows_affected()))
    }
    .await;
    r.unwrap_or_else(|e| describe(&e))
}

/// Every step's outcome against the server at `dsn`, in order.
async fn probe(dsn: &str) -> Vec<(&'static str, String)> {
    let (client, mut conn) = tokio_postgres::connect(dsn, NoTls).await.expect("connect");
    // The connection's messages: notices are asynchronous ones.
    let (notices_tx, mut notices) = futures::channel::mpsc::unbounded();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| conn.poll_message(cx));
        while let Some(Ok(m)) = messages.next().await {
            if let AsyncMessage::Notice(n) = m {
                let _ = notices_tx.unbounded_send(format!("{} {}", n.code().code(), n.message()));
            }
        }
    });
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let mut record = |name: &'static str, r: Step| {
        out.push((name, r.unwrap_or_else(|e| describe(&e))));
    };

    record(
        "create table",
        async {
            client
                .batch_execute(
                    "CREATE TABLE tp(id int8 PRIMARY KEY, a int2, b int4, c float4, d float8, \
                 e numeric(10,2), f text, g varchar(10), h bool, i bytea, j date, k timestamp, \
                 l timestamptz, m uuid, n json, o int4[], p text[], q oid, r \"char\", s name)",
                )
                .await?;
            Ok("ok".into())
        }
        .await,
    );

    record(
        "notices",
        async {
            client
                .batch_execute("DROP TABLE IF EXISTS tp_nosuch; DROP TABLE IF EXISTS tp_other")
                .await?;
            // Notices arrive before the batch's ReadyForQuery, so they are all queued by now.
            let mut s = String::new();
            while let Ok(n) = notices.try_recv() {
                writeln!(s, "NOTICE {n}").expect("a String takes any write");
            }
            Ok(s)
        }
        .await,
    );

    record(
        "insert with binary parameters",
        async {
            let st = client
            .prepare(
                "INSERT INTO tp(id,a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s) VALUES ($1,$2,$3,$4,$5,\
                 $6::text::numeric,$7,$8,$9,$10,$11::text::date,$12::text::timestamp,$13,\
                 $14::text::uuid,$15,$16,$17,$18,$19,$20)",
            )
            .await?;
            let types: Vec<&str> = st.params().iter().map(Type::name).collect();
            let at = UNIX_EPOCH + Duration::from_micros(1_700_000_000_654_321);
            let n = client
                .execute(
                    &st,
                    &[
                        &1i64,
                        &7i16,
                        &-3i32,
                        &1.5f32,
                        &2.25f64,
                        &"12.34",
                        &"héllo, wörld",
                        &"v",
                        &true,
                        &vec![0u8, 255, 10],
                        &"2024-02-29",
                        &"2024-01-02 03:04:05.123456",
                        &at,
                        &"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                        &serde_json::json!({"k": [1, 2], "s": "x\"y"}),
                        &vec![Some(1i32), None, Some(3)],
                        &vec!["x".to_string(), "y z".into(), "{q}".into(), "NULL".into()],
                        &42u32,
                        &b'q'.cast_signed(),
                        &"a_name",
                    ],
                )
                .await?;
            let m = client
                .execute("INSERT INTO tp(id) VALUES ($1)", &[&2i64])
                .await?;
            Ok(format!("{}\nrows {n} {m}", types.join(" ")))
        }
        .await,
    );

    record(
        "select with binary results",
        async {
            let rows = client
                .query(
                    "SELECT id,a,b,c,d,e::text,f,g,h,i,j::text,k::text,l,m::text,n,o,p,q,r,s \
                 FROM tp ORDER BY id",
                    &[],
                )
                .await?;
            let mut s = String::new();
            for c in rows.first().map(|r| r.columns()).unwrap_or_default() {
                write!(s, "{}:{} ", c.name(), c.type_().name()).expect("a String takes any write");
            }
            for r in &rows {
                let at: Option<SystemTime> = r.get(12);
                write!(
                    s,
                    "\n{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                    r.get::<_, i64>(0),
                    r.get::<_, Option<i16>>(1),
                    r.get::<_, Option<i32>>(2),
                    r.get::<_, Option<f32>>(3),
                    r.get::<_, Option<f64>>(4),
                    r.get::<_, Option<String>>(5),
                    r.get::<_, Option<String>>(6),
                    r.get::<_, Option<String>>(7),
                    r.get::<_, Option<bool>>(8),
                    r.get::<_, Option<Vec<u8>>>(9),
                    r.get::<_, Option<String>>(10),
                    r.get::<_, Option<String>>(11),
                    at.map(|t| t.duration_since(UNIX_EPOCH).map(|d| d.as_micros())),
                    r.get::<_, Option<String>>(13),
                )
                .expect("a String takes any write");
                write!(
                    s,
                    " {:?} {:?} {:?} {:?} {:?} {:?}",
                    r.get::<_, Option<serde_json::Value>>(14),
                    r.get::<_, Option<Vec<Option<i32>>>>(15),
                    r.get::<_, Option<Vec<String>>>(16),
                    r.get::<_, Option<u32>>(17),
                    r.get::<_, Option<i8>>(18),
                    r.get::<_, Option<String>>(19),
                )
                .expect("a String takes any write");
            }
            Ok(s)
        }
        .await,
    );

    record(
        "prepare_typed",
        async {
            let st = client
                .prepare_typed("SELECT $1 + 1, $2 || 'x'", &[Type::INT8, Type::TEXT])
                .await?;
            let r = client.query_one(&st, &[&41i64, &"a"]).await?;
            Ok(format!("{} {}", r.get::<_, i64>(0), r.get::<_, String>(1)))
        }
        .await,
    );

    record(
        "query_typed (one round trip, portal described)",
        async {
            let rows = client
                .query_typed(
                    "SELECT id, $1::text AS t FROM tp WHERE id < $2 ORDER BY id",
                    &[(&"p", Type::TEXT), (&5i64, Type::INT8)],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|r| format!("{} {}", r.get::<_, i64>(0), r.get::<_, String>(1)))
                .collect::<Vec<_>>()
                .join(", "))
        }
        .await,
    );

    record(
        "parameter types inferred",
        async {
            let st = client
                .prepare(
                    "SELECT id FROM tp WHERE id = $1 AND f = $2 OR $3::bool IS NULL AND a < $4",
                )
                .await?;
            let params: Vec<&str> = st.params().iter().map(Type::name).collect();
            let columns: Vec<String> = st
                .columns()
                .iter()
                .map(|c| format!("{}:{}", c.name(), c.type_().name()))
                .collect();
            Ok(format!("{} -> {}", params.join(","), columns.join(",")))
        }
        .await,
    );

    record(
        "pipelined queries",
        async {
            let (a, b, c) = futures::join!(
                client.query_one("SELECT count(*) FROM tp", &[]),
                client.query("SELECT id FROM tp WHERE id = $1", &[&2i64]),
                client.query_one("SELECT $1::text || '!'", &[&"piped"]),
            );
            Ok(format!(
                "{} {} {}",
                a?.get::<_, i64>(0),
                b?.len(),
                c?.get::<_, String>(0)
            ))
        }
        .await,
    );

    record(
        "simple_query batch",
        async {
            let messages = client
                .simple_query(
                    "SELECT 1 AS one, NULL::text AS n; SELECT id FROM tp ORDER BY id; \
                 UPDATE tp SET a = 1 WHERE id = 2",
                )
                .await?;
            let mut s = String::new();
            for m in messages {
                match m {
                    SimpleQueryMessage::Row(r) => {
                        write!(s, "row").expect("a String takes any write");
                        for i in 0..r.len() {
                            write!(s, " {}={:?}", r.columns()[i].name(), r.get(i))
                                .expect("a String takes any write");
                        }
                        writeln!(s).expect("a String takes any write");
                    }
                    SimpleQueryMessage::CommandComplete(n) => {
                        writeln!(s, "complete {n}").expect("a String takes any write")
                    }
                    SimpleQueryMessage::RowDescription(c) => {
                        writeln!(s, "columns {}", c.len()).expect("a String takes any write")
                    }
                    _ => writeln!(s, "other").expect("a String takes any write"),
                }
            }
            Ok(s)
        }
        .await,
    );

    record(
        "simple_query batch failing half-way",
        async {
            let e = client
                .simple_query(
                    "INSERT INTO tp(id) VALUES (3); SELECT 1/0; INSERT INTO tp(id) VALUES (4)",
                )
                .await
                .expect_err("a division by zero");
            let ids = client
                .query("SELECT id FROM tp WHERE id IN (3, 4)", &[])
                .await?;
            Ok(format!("{}\nkept {}", describe(&e), ids.len()))
        }
        .await,
    );

    for (name, sql) in [
        ("syntax error", "SELEC 1"),
        ("undefined table", "SELECT * FROM tp_nosuch"),
        ("undefined column", "SELECT nosuch FROM tp"),
        ("duplicate key", "INSERT INTO tp(id) VALUES (1)"),
        (
            "null in a not-null column",
            "INSERT INTO tp(id) VALUES (NULL)",
        ),
        ("division by zero", "SELECT 1/0"),
        ("invalid integer", "SELECT 'abc'::int4"),
        (
            "value too long",
            "INSERT INTO tp(id, g) VALUES (9, 'abcdefghijkl')",
        ),
        ("operator does not exist", "SELECT now() + true"),
    ] {
        record(name, client.query(sql, &[]).await.map(|_| "ok".into()));
    }

    record(
        "error position past a typed parameter",
        client
            .prepare_typed("SELECT $1 + 1, nope FROM tp", &[Type::INT8])
            .await
            .map(|_| "prepared".into()),
    );

    record(
        "parameter of the wrong Rust type",
        async {
            match client.query("SELECT $1::int4", &[&1i64]).await {
                Ok(_) => Ok("accepted".into()),
                Err(e) => Ok(format!(
                    "refused by the client: {}",
                    e.as_db_error().is_none()
                )),
            }
        }
        .await,
    );

    record(
        "failed transaction",
        async {
            let mut c = connect(dsn).await?;
            let tx = c.transaction().await?;
            tx.execute("INSERT INTO tp(id) VALUES (10)", &[]).await?;
            let dup = tx
                .execute("INSERT INTO tp(id) VALUES (10)", &[])
                .await
                .expect_err("duplicate");
            let aborted = tx.execute("SELECT 1", &[]).await.expect_err("aborted");
            tx.rollback().await?;
            let n: i64 = c.query_one("SELECT count(*) FROM tp", &[]).await?.get(0);
            Ok(format!(
                "{}\n{}\ncount {n}",
                describe(&dup),
                describe(&aborted)
            ))
        }
        .await,
    );

    record(
        "savepoints",
        async {
            let mut c = connect(dsn).await?;
            let mut tx = c.transaction().await?;
            tx.execute("INSERT INTO tp(id) VALUES (20)", &[]).await?;
            {
                let sp = tx.transaction().await?;
                sp.execute("INSERT INTO tp(id) VALUES (21)", &[]).await?;
                let dup = sp.execute("INSERT INTO tp(id) VALUES (21)", &[]).await;
                assert!(dup.is_err());
                sp.rollback().await?;
            }
            {
                let sp = tx.savepoint("named").await?;
                sp.execute("INSERT INTO tp(id) VALUES (22)", &[]).await?;
                sp.commit().await?;
            }
            tx.commit().await?;
            let rows = c
                .query("SELECT id FROM tp WHERE id >= 20 ORDER BY id", &[])
                .await?;
            Ok(format!(
                "{:?}",
                rows.iter().map(|r| r.get::<_, i64>(0)).collect::<Vec<_>>()
            ))
        }
        .await,
    );

    record(
        "read-only repeatable read",
        async {
            let mut c = connect(dsn).await?;
            let tx = c
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
                .await?;
            let level: String = tx
                .query_one("SHOW transaction_isolation", &[])
                .await?
                .get(0);
            let write = tx.execute("INSERT INTO tp(id) VALUES (30)", &[]).await;
            tx.rollback().await?;
            Ok(format!(
                "{level}\n{}",
                write.map_or_else(|e| describe(&e), |n| n.to_string())
            ))
        }
        .await,
    );

    record(
        "portals read in parts",
        async {
            let mut c = connect(dsn).await?;
            let tx = c.transaction().await?;
            let mut s = String::new();
            let all = tx.bind("SELECT id FROM tp ORDER BY id", &[]).await?;
            for _ in 0..4 {
                writeln!(s, "by 2: {}", fetch(&tx, &all, 2).await)
                    .expect("a String takes any write");
            }
            let some = tx
                .bind("SELECT id FROM tp WHERE id < $1 ORDER BY id", &[&3i64])
                .await?;
            writeln!(s, "whole: {}", fetch(&tx, &some, 0).await).expect("a String takes any write");
            writeln!(s, "whole again: {}", fetch(&tx, &some, 0).await)
                .expect("a String takes any write");
            let exact = tx
                .bind("SELECT id FROM tp WHERE id < $1 ORDER BY id", &[&3i64])
                .await?;
            writeln!(s, "exactly 2: {}", fetch(&tx, &exact, 2).await)
                .expect("a String takes any write");
            writeln!(s, "then: {}", fetch(&tx, &exact, 2).await).expect("a String takes any write");
            let update = tx
                .bind("UPDATE tp SET a = a WHERE id = 1 RETURNING id", &[])
                .await?;
            writeln!(s, "returning: {}", fetch(&tx, &update, 0).await)
                .expect("a String takes any write");
            writeln!(s, "returning again: {}", fetch(&tx, &update, 0).await)
                .expect("a String takes any write");
            let command = tx.bind("UPDATE tp SET a = a WHERE id = 1", &[]).await?;
            let n = tx.query_portal(&command, 0).await.map(|r| r.len());
            writeln!(s, "command: {n:?}").expect("a String takes any write");
            let again = tx.query_portal(&command, 0).await;
            writeln!(
                s,
                "command again: {}",
                again.map_or_else(|e| describe(&e), |r| r.len().to_string())
            )
            .expect("a String takes any write");
            tx.rollback().await?;
            Ok(s)
        }
        .await,
    );

    record(
        "binary COPY in",
        async {
            let sink = client
                .copy_in("COPY tp(id, f, o, l) FROM STDIN (FORMAT binary)")
                .await?;
            let writer = BinaryCopyInWriter::new(
                sink,
                &[Type::INT8, Type::TEXT, Type::INT4_ARRAY, Type::TIMESTAMPTZ],
            );
            futures::pin_mut!(writer);
            for i in 100..105i64 {
                let at =
                    UNIX_EPOCH + Duration::from_micros(1_600_000_000_123_456 + i.unsigned_abs());
                let f = format!("r{i}");
                let o = vec![i32::try_from(i).unwrap_or_default(), 2];
                let row: [&(dyn ToSql + Sync); 4] = [&i, &f, &o, &at];
                writer.as_mut().write(&row).await?;
            }
            Ok(format!("rows {}", writer.finish().await?))
        }
        .await,
    );

    record(
        "text COPY out",
        async {
            let stream = client
                .copy_out("COPY (SELECT id, f, o, l FROM tp WHERE id >= 100 ORDER BY id) TO STDOUT")
                .await?;
            let chunks: Vec<bytes::Bytes> = stream.try_collect().await?;
            Ok(chunks.iter().map(|b| String::from_utf8_lossy(b)).collect())
        }
        .await,
    );

    record("binary COPY out", async {
        let stream = client
            .copy_out(
                "COPY (SELECT id, f, o FROM tp WHERE id >= 100 ORDER BY id) TO STDOUT (FORMAT binary)",
            )
            .await?;
        let rows: Vec<_> = BinaryCopyOutStream::new(stream, &[Type::INT8, Type::TEXT, Type::INT4_ARRAY])
            .try_collect()
            .await?;
        Ok(rows
            .iter()
            .map(|r| format!("{} {} {:?}", r.get::<i64>(0), r.get::<&str>(1), r.get::<Vec<i32>>(2)))
            .collect::<Vec<_>>()
            .join("\n"))
    }
    .await);

    record(
        "COPY in with a bad line",
        async {
            let sink = client.copy_in("COPY tp(id) FROM STDIN").await?;
            futures::pin_mut!(sink);
            sink.send(bytes::Bytes::from_static(b"1000\nxyz\n")).await?;
            Ok(format!("rows {}", sink.finish().await?))
        }
        .await,
    );

    record(
        "COPY in cancelled",
        async {
            let c = connect(dsn).await?;
            let token = c.cancel_token();
            let sink = c
                .copy_in::<_, bytes::Bytes>("COPY tp(id) FROM STDIN")
                .await?;
            futures::pin_mut!(sink);
            sink.send(bytes::Bytes::from_static(b"2000\n")).await?;
            // The server holds the COPY open, waiting for more data. PostgreSQL acts on a
            // cancel when the next data arrives, once its postmaster has signalled the backend
            // (cancel_query returns when the request is sent): the data ends a moment later,
            // or it could arrive first and the cancel hit nothing. RockLake acts at once.
            token.cancel_query(NoTls).await?;
            tokio::time::sleep(Duration::from_secs(1)).await;
            let ended = sink.finish().await;
            let after = c
                .query_one("SELECT count(*) FROM tp WHERE id = 2000", &[])
                .await;
            Ok(format!(
                "{}\nrows with id 2000: {}",
                ended.map_or_else(|e| describe(&e), |n| n.to_string()),
                after.map_or_else(|e| describe(&e), |r| r.get::<_, i64>(0).to_string())
            ))
        }
        .await,
    );

    record(
        "count at the end",
        async {
            let r = client
                .query_one("SELECT count(*), sum(id)::text FROM tp", &[])
                .await?;
            Ok(format!(
                "{} {:?}",
                r.get::<_, i64>(0),
                r.get::<_, Option<String>>(1)
            ))
        }
        .await,
    );

    record(
        "special floats",
        async {
            let r = client
                .query_one(
                    "SELECT 'NaN'::float8, '-Infinity'::float4, '-0'::float8",
                    &[],
                )
                .await?;
            Ok(format!(
                "{:?} {:?} {:?}",
                r.get::<_, f64>(0),
                r.get::<_, f32>(1),
                r.get::<_, f64>(2)
            ))
        }
        .await,
    );

    record(
        "empty query",
        async { Ok(client.simple_query("").await?.len().to_string()) }.await,
    );

    out
}

/// `text` with every `portal "pN"` written `portal "p"`.
fn portal_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("portal \"p") {
        let (head, tail) = rest.split_at(at + "portal \"p".len());
        out.push_str(head);
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

#[test]
fn tokio_postgres_steps_match_postgres() {
    let pair = Differential::start().expect("PostgreSQL and RockLake");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let expected = runtime.block_on(probe(&pair.postgres.dsn()));
    let got = runtime.block_on(probe(&pair.rocklake.dsn()));
    assert_eq!(expected.len(), got.len(), "the same steps ran");
    let mut differences = Vec::new();
    for ((name, want), (_, have)) in expected.iter().zip(&got) {
        // tokio-postgres names portals from one counter per process (p0, p1, …), which the
        // second run carries on.
        if portal_names(want) != portal_names(have) {
            differences.push(format!(
                "--- {name}\nPostgreSQL:\n{want}\nRockLake:\n{have}"
            ));
        }
    }
    // The steps reached what they test (the same failure on both sides would also match).
    let step = |name: &str| {
        &expected
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("no step {name}"))
            .1
    };
    assert!(
        step("portals read in parts").contains("by 2: [1, 2] tag=None"),
        "{}",
        step("portals read in parts")
    );
    assert!(step("portals read in parts").contains("55000"));
    assert!(step("null in a not-null column").contains("column=Some(\"id\")"));
    assert!(step("error position past a typed parameter").contains("position=Some(Original(16))"));
    assert!(step("COPY in cancelled").contains("57014"));
    assert!(step("binary COPY out").lines().count() == 5);
    assert!(step("select with binary results").contains("a0eebc99"));
    assert!(
        differences.is_empty(),
        "{} of {} steps differ from PostgreSQL:\n{}",
        differences.len(),
        expected.len(),
        differences.join("\n")
    );
}
