//! sqlx's migrator (sqlx 0.8: `sqlx migrate run`, `sqlx::migrate!`) against RockLake and
//! PostgreSQL 15, as operators run it on a DuckLake catalog to add their indexes. Four
//! migrators start at once, as four replicas of a service do. Each takes sqlx's advisory lock
//! (`SELECT pg_advisory_lock($1)`, over the extended protocol) before it reads what is
//! applied, so they run one after another: while the first sleeps in its first migration the
//! three others wait in `pg_locks`, then each migration is applied exactly once and the others
//! find it applied. A migration changed after it was applied is then refused by its checksum.
//! Everything is compared with PostgreSQL.

use std::path::Path;
use std::time::Duration;

use rocklake_tests::Differential;
use sqlx::migrate::Migrator;
use sqlx::postgres::PgPoolOptions;
use sqlx::Row;

const MIGRATIONS: &[(&str, &str)] = &[
    (
        "1_items.sql",
        "CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL);\n\
         -- Keeps the lock long enough for the other runners to queue behind it.\n\
         SELECT pg_sleep(0.8);",
    ),
    ("2_index.sql", "CREATE INDEX items_name ON items (name);"),
    ("3_rows.sql", "INSERT INTO items VALUES (1, 'a'), (2, 'b');"),
    (
        "4_column.sql",
        "ALTER TABLE items ADD COLUMN note text DEFAULT 'x';",
    ),
];

/// `postgres://` URL of a `host=… port=… …` DSN.
fn url(dsn: &str) -> String {
    let field = |k: &str| {
        dsn.split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
            .unwrap_or_default()
            .to_string()
    };
    format!(
        "postgres://{}:{}@{}:{}/{}",
        field("user"),
        field("password"),
        field("host"),
        field("port"),
        field("dbname")
    )
}

async fn migrate(url: &str, dir: &Path) -> String {
    let pool = match PgPoolOptions::new().max_connections(1).connect(url).await {
        Ok(p) => p,
        Err(e) => return format!("connect: {e}"),
    };
    let outcome = match Migrator::new(dir).await {
        Ok(m) => match m.run(&pool).await {
            Ok(()) => "ok".to_string(),
            Err(e) => format!("error: {e}"),
        },
        Err(e) => format!("migrator: {e}"),
    };
    pool.close().await;
    outcome
}

/// Runs the race on one server; returns what a reader saw, step by step.
async fn race(dsn: &str, dir: &Path) -> Vec<String> {
    let url = url(dsn);
    let mut out = Vec::new();
    let runners: Vec<_> = (0..4)
        .map(|_| {
            let (url, dir) = (url.clone(), dir.to_path_buf());
            tokio::spawn(async move { migrate(&url, &dir).await })
        })
        .collect();
    // While the first runner sleeps in migration 1, the others wait for its lock.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let monitor = PgPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .expect("monitor");
    let row = sqlx::query(
        "SELECT count(*) FILTER (WHERE granted), count(*) FILTER (WHERE NOT granted), \
         count(DISTINCT objid) FROM pg_locks WHERE locktype = 'advisory'",
    )
    .fetch_one(&monitor)
    .await
    .expect("pg_locks");
    out.push(format!(
        "while migrating: held {} waiting {} locks {}",
        row.get::<i64, _>(0),
        row.get::<i64, _>(1),
        row.get::<i64, _>(2)
    ));
    for r in runners {
        out.push(format!("runner: {}", r.await.expect("runner task")));
    }
    for q in [
        "SELECT version, description, success, encode(checksum, 'hex') FROM _sqlx_migrations ORDER BY version",
        "SELECT id, name, note FROM items ORDER BY id",
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'items' ORDER BY 1",
        "SELECT count(*)::text FROM pg_locks WHERE locktype = 'advisory'",
    ] {
        let rows = match sqlx::raw_sql(q).fetch_all(&monitor).await {
            Ok(rows) => rows,
            Err(e) => {
                out.push(format!("{q}\n  error: {e}"));
                continue;
            }
        };
        let rows: Vec<String> = rows
            .iter()
            .map(|r| {
                (0..r.len())
                    .map(|i| {
                        r.try_get::<String, _>(i)
                            .or_else(|_| r.try_get::<i64, _>(i).map(|v| v.to_string()))
                            .or_else(|_| r.try_get::<bool, _>(i).map(|v| v.to_string()))
                            .or_else(|_| {
                                r.try_get::<Option<String>, _>(i).map(|v| format!("{v:?}"))
                            })
                            .unwrap_or_else(|e| format!("<{e}>"))
                    })
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .collect();
        out.push(format!("{q}\n  {}", rows.join("\n  ")));
    }
    // A migration edited after it ran is refused.
    let edited = dir.join("edited");
    std::fs::create_dir_all(&edited).expect("dir");
    for (name, sql) in MIGRATIONS {
        let sql = if *name == "3_rows.sql" {
            "INSERT INTO items VALUES (3, 'c');"
        } else {
            sql
        };
        std::fs::write(edited.join(name), sql).expect("write");
    }
    out.push(format!("edited: {}", migrate(&url, &edited).await));
    monitor.close().await;
    out
}

#[test]
fn sqlx_migrators_racing_on_one_lock_match_postgres() {
    let pair = Differential::start().expect("PostgreSQL and RockLake");
    let dir = pair.dir.path().join("migrations");
    std::fs::create_dir_all(&dir).expect("dir");
    for (name, sql) in MIGRATIONS {
        std::fs::write(dir.join(name), sql).expect("write");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let expected = runtime.block_on(race(&pair.postgres.dsn(), &dir));
    let got = runtime.block_on(race(&pair.rocklake.dsn(), &dir));
    assert_eq!(
        expected, got,
        "PostgreSQL:\n{expected:#?}\nRockLake:\n{got:#?}"
    );
    // The race happened and ended as it should, not only alike.
    assert_eq!(
        got[0], "while migrating: held 1 waiting 3 locks 1",
        "{got:#?}"
    );
    assert!(got[1..5].iter().all(|r| r == "runner: ok"), "{got:#?}");
    assert!(got[5].matches(" | true | ").count() == 4, "{}", got[5]);
    assert!(got[6].contains("2 | b | x"), "{}", got[6]);
    assert!(got[7].contains("items_name"), "{}", got[7]);
    assert!(got[8].ends_with("\n  0"), "{}", got[8]);
    assert!(
        got[9].contains("was previously applied but has been modified"),
        "{}",
        got[9]
    );
    println!("sqlx migrate: {} steps identical to PostgreSQL", got.len());
}
