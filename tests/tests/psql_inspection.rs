//! psql works for humans: the same catalog built in a real PostgreSQL 15 and in RockLake, and
//! psql's describe commands (`\dn`, `\dt`, `\d table`, `\di`, `\du`, `\dp`, `\db`, …) print
//! the same text on both. Sizes (`\dt+`, `\l+`) are RockLake's own stored bytes, checked for plausibility;
//! EXPLAIN shows which key ranges a scan reads.

use std::process::Command;

use rocklake_tests::{Postgres, Server};

/// A slice of DuckLake's catalog: tables with and without a primary key, NOT NULL columns,
/// a second schema, and some rows.
const DDL: &str = "
CREATE TABLE ducklake_snapshot(snapshot_id BIGINT PRIMARY KEY, snapshot_time TIMESTAMPTZ, schema_version BIGINT, next_catalog_id BIGINT, next_file_id BIGINT);
CREATE TABLE ducklake_table(table_id BIGINT, table_uuid UUID, begin_snapshot BIGINT, end_snapshot BIGINT, schema_id BIGINT, table_name VARCHAR, path VARCHAR, path_is_relative BOOLEAN);
CREATE TABLE ducklake_data_file(data_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, file_order BIGINT, path VARCHAR, path_is_relative BOOLEAN, file_format VARCHAR, record_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, row_id_start BIGINT, partition_id BIGINT, encryption_key VARCHAR, mapping_id BIGINT, partial_max BIGINT);
CREATE SCHEMA dlmeta;
CREATE TABLE dlmeta.ducklake_metadata(key VARCHAR NOT NULL, value VARCHAR NOT NULL, scope VARCHAR, scope_id BIGINT);
INSERT INTO ducklake_snapshot VALUES (0, NOW(), 0, 1, 0), (1, NOW(), 1, 2, 0);
INSERT INTO ducklake_table VALUES (1, '8e4fd7a2-63a4-4a8c-8a1e-63fb7e0c37a4', 1, NULL, 0, 't', 't/', true);
INSERT INTO dlmeta.ducklake_metadata VALUES ('version', '1.0', NULL, NULL);
COMMENT ON SCHEMA dlmeta IS 'DuckLake''s metadata';
COMMENT ON TABLE ducklake_table IS 'one row per table version';
COMMENT ON COLUMN ducklake_table.path IS 'relative to the data path';
COMMENT ON COLUMN ducklake_snapshot.snapshot_id IS 'the key';
COMMENT ON INDEX ducklake_snapshot_pkey IS 'by snapshot';
COMMENT ON CONSTRAINT ducklake_data_file_pkey ON ducklake_data_file IS 'one row per file';
CREATE INDEX ducklake_data_file_lookup ON ducklake_data_file (table_id, end_snapshot DESC);
CREATE INDEX ON dlmeta.ducklake_metadata (key NULLS FIRST, scope_id);
COMMENT ON INDEX ducklake_data_file_lookup IS 'files of a table';
";

/// Commands whose whole output must match PostgreSQL's.
const SAME_AS_POSTGRES: &[&str] = &[
    r"\dn",
    r"\dn+",
    r"\dt",
    r"\dt dlmeta.*",
    r"\d ducklake_snapshot",
    r"\d+ ducklake_snapshot",
    r"\dd",
    r"\d ducklake_data_file",
    r"\d+ ducklake_table",
    r"\d dlmeta.ducklake_metadata",
    r"\di",
    r"\di dlmeta.*",
    r"\d ducklake_data_file_lookup",
    r"\d dlmeta.ducklake_metadata_key_scope_id_idx",
    r"\dv",
    r"\du",
    r"\d",
    r"\dp",
    r"\db",
    r"\dT",
    r"\dD",
    r"\df",
    r"\do",
    r"\des",
    r"\dy",
    r"\dX",
    r"\deu",
    r"\dO",
];

fn psql(dsn: &str, args: &[&str]) -> String {
    let out = Command::new("psql")
        .arg("-X")
        .arg("-P")
        .arg("pager=off")
        .arg(dsn)
        .args(args)
        .output()
        .expect("run psql");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("ERROR"),
        "psql {args:?} on {dsn}: {stderr}"
    );
    // psql reports "Did not find any relations." on stderr: part of what a human sees.
    format!("{}{stderr}", String::from_utf8_lossy(&out.stdout))
}

#[test]
fn psql_describe_commands_match_postgres() {
    let pg = Postgres::start().expect("start PostgreSQL");
    let dir = tempfile::tempdir().expect("tempdir");
    let server =
        Server::start(&dir.path().join("catalog"), "postgres", &[]).expect("start rocklake");
    let rl = server.dsn();
    for dsn in [pg.dsn(), rl.clone()] {
        psql(&dsn, &["-q", "-v", "ON_ERROR_STOP=1", "-c", DDL]);
    }
    let mut differ = Vec::new();
    for cmd in SAME_AS_POSTGRES {
        let want = psql(&pg.dsn(), &["-c", cmd]);
        let got = psql(&rl, &["-c", cmd]);
        if want != got {
            differ.push(format!("{cmd}\n--- PostgreSQL\n{want}--- RockLake\n{got}"));
        }
    }
    assert!(
        differ.is_empty(),
        "psql output differs:\n{}",
        differ.join("\n")
    );

    // The primary key shows as PostgreSQL shows it; a sanity check that the comparison above
    // compared real content.
    let d = psql(&rl, &["-c", r"\d ducklake_snapshot"]);
    assert!(
        d.contains(r#""ducklake_snapshot_pkey" PRIMARY KEY, btree (snapshot_id)"#),
        "{d}"
    );
    let d = psql(&rl, &["-c", r"\d ducklake_data_file"]);
    assert!(
        d.contains(r#""ducklake_data_file_lookup" btree (table_id, end_snapshot DESC)"#),
        "{d}"
    );

    // `\dx` lists what is installed: PostgreSQL's PL/pgSQL, nothing on RockLake (it runs no
    // extension and no procedural language).
    let extensions = |dsn: &str| psql(dsn, &["-A", "-t", "-F", "|", "-c", r"\dx"]);
    assert!(extensions(&pg.dsn()).starts_with("plpgsql|"));
    assert_eq!(extensions(&rl), "");

    // Sizes are RockLake's stored bytes: empty tables 0, others more than their raw values.
    let sizes = psql(&rl, &["-A", "-t", "-F", "|", "-c", r"\dt+"]);
    let size_of = |name: &str| -> String {
        sizes
            .lines()
            .find(|l| l.split('|').nth(1) == Some(name))
            .and_then(|l| l.split('|').nth(6))
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(size_of("ducklake_data_file"), "0 bytes", "{sizes}");
    // And the table's comment, last.
    assert!(
        sizes
            .lines()
            .any(|l| l.starts_with("public|ducklake_table|")
                && l.ends_with("|one row per table version")),
        "{sizes}"
    );
    let snap: u64 = size_of("ducklake_snapshot")
        .trim_end_matches(" bytes")
        .parse()
        .unwrap_or(0);
    assert!((80..8192).contains(&snap), "snapshot size {snap}: {sizes}");
    let dbs = psql(&rl, &["-A", "-t", "-F", "|", "-c", r"\l+"]);
    let lake = dbs
        .lines()
        .find(|l| l.starts_with("lake|"))
        .unwrap_or_default();
    assert!(
        lake.contains("UTF8") && (lake.contains(" bytes|") || lake.contains(" kB|")),
        "{dbs}"
    );

    // EXPLAIN names the key ranges a scan reads.
    let plan = psql(
        &rl,
        &[
            "-A",
            "-t",
            "-c",
            "EXPLAIN SELECT * FROM ducklake_snapshot WHERE snapshot_id = 1",
        ],
    );
    assert!(plan.contains("Index Scan"), "{plan}");
    // DuckLake's tables carry RockLake's own secondary indexes (not SQL objects, so `\d` shows
    // what PostgreSQL shows); EXPLAIN names them.
    let ix = psql(
        &rl,
        &[
            "-A",
            "-t",
            "-c",
            "EXPLAIN SELECT * FROM ducklake_table WHERE table_id = 1",
        ],
    );
    assert!(
        ix.contains("Index Scan using ducklake_table_table_id_idx"),
        "{ix}"
    );
    let seq = psql(
        &rl,
        &[
            "-A",
            "-t",
            "-c",
            "EXPLAIN SELECT * FROM ducklake_table WHERE table_name = 't'",
        ],
    );
    assert!(seq.contains("Seq Scan"), "{seq}");
    server.stop().expect("stop");
}
