//! verify_catalog: a catalog DuckLake wrote is clean; each kind of damage is reported with its
//! check and subject.

use rocklake_core::api::{CommitBatch, CommitSeq, KvRead, SessionId};
use rocklake_core::memkv::MemKv;
use rocklake_core::verify::{verify, Report};
use rocklake_core::writer::init_statements;
use rocklake_core::Engine;

struct Lake {
    kv: MemKv,
    engine: Engine,
    s: SessionId,
}

impl Lake {
    /// A catalog initialised with DuckLake's own statements, one table with two columns and a
    /// data file.
    fn new() -> Lake {
        let kv = MemKv::new();
        let mut engine = Engine::open(&kv).expect("open");
        let s = engine.open_session("t", "lake");
        let mut lake = Lake { kv, engine, s };
        let mut sql = vec!["BEGIN".to_string()];
        sql.extend(init_statements(
            "/data/",
            "test",
            "0190f6a2-0000-7000-8000-000000000000",
        ));
        sql.push("COMMIT".into());
        lake.run(&sql.join(";\n"));
        lake.run(
            "BEGIN;\
             INSERT INTO ducklake_snapshot VALUES (1, now(), 1, 3, 1);\
             INSERT INTO ducklake_table VALUES (1, '0190f6a2-0000-7000-8000-000000000001', 1, NULL, 0, 't', 't/', true);\
             INSERT INTO ducklake_column (column_id, begin_snapshot, end_snapshot, table_id, column_order, column_name, column_type, nulls_allowed) VALUES (1, 1, NULL, 1, 1, 'a', 'int64', true), (2, 1, NULL, 1, 2, 'b', 'varchar', true);\
             INSERT INTO ducklake_data_file (data_file_id, table_id, begin_snapshot, end_snapshot, path, path_is_relative, file_format, record_count, file_size_bytes, footer_size, row_id_start) VALUES (0, 1, 1, NULL, 'f.parquet', true, 'parquet', 1, 100, 10, 0);\
             COMMIT",
        );
        lake
    }

    fn run(&mut self, sql: &str) {
        let mut r = self.engine.query(&self.kv, self.s, sql, 1_000_000);
        while let Some(batch) = r.commit.take() {
            self.kv.apply(&batch);
            r = self.engine.commit_finished(&self.kv, self.s, Ok(()));
        }
        assert!(r.error.is_none(), "{sql}: {:?}", r.error);
    }

    fn verify(&mut self) -> Report {
        verify(&mut self.engine, &self.kv).expect("verify")
    }

    fn checks(&mut self) -> Vec<&'static str> {
        let mut c: Vec<_> = self.verify().violations.iter().map(|v| v.check).collect();
        c.sort();
        c.dedup();
        c
    }

    /// Writes raw bytes, as damage from outside would.
    fn put_raw(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.kv.apply(&CommitBatch {
            seq: CommitSeq(0),
            puts: vec![(key, value)],
            deletes: vec![],
        });
    }

    /// Some stored row key and value (tag 0x10).
    fn a_row(&self) -> (Vec<u8>, Vec<u8>) {
        self.kv
            .scan(&[0x10], &[0x11], 1)
            .expect("scan")
            .to_pairs()
            .into_iter()
            .next()
            .expect("a row")
    }
}

#[test]
fn a_ducklake_catalog_is_clean() {
    let mut lake = Lake::new();
    let r = lake.verify();
    assert!(r.violations.is_empty(), "{:#?}", r.violations);
    assert_eq!(r.ducklake_schemas, vec!["public".to_string()]);
    assert!(
        r.rows_checked > 5 && r.keys_checked > r.rows_checked,
        "{r:?}"
    );
}

#[test]
fn a_flipped_bit_is_an_envelope_violation() {
    let mut lake = Lake::new();
    let (k, mut v) = lake.a_row();
    let last = v.len() - 1;
    v[last] ^= 0x01;
    lake.put_raw(k.clone(), v);
    let r = lake.verify();
    assert!(
        r.violations.iter().any(|x| x.check == "envelope"
            && x.subject == k.iter().map(|b| format!("{b:02x}")).collect::<String>()),
        "{:#?}",
        r.violations
    );
}

#[test]
fn a_version_beyond_commit_seq_is_reported() {
    let mut lake = Lake::new();
    let (k, v) = lake.a_row();
    // Same logical key, a commit sequence the catalog never recorded.
    let mut future = k[..k.len() - 8].to_vec();
    future.extend_from_slice(&(u64::MAX - 1_000_000).to_be_bytes());
    lake.put_raw(future, v);
    assert!(lake.checks().contains(&"commit_seq"));
}

#[test]
fn a_row_under_the_wrong_key_is_reported() {
    let mut lake = Lake::new();
    let (k, v) = lake.a_row();
    let mut moved = k.clone();
    // Change a byte of the key fields (after tag and table id), keep the version.
    moved[6] ^= 0x40;
    lake.put_raw(moved, v);
    assert!(lake.checks().contains(&"key_row"));
}

#[test]
fn ducklake_invariants_are_checked() {
    let mut lake = Lake::new();
    lake.run("INSERT INTO ducklake_column (column_id, begin_snapshot, table_id, column_order, column_name, column_type, nulls_allowed) VALUES (9, 1, 42, 1, 'x', 'int64', true)");
    assert_eq!(lake.checks(), vec!["references"]);
    let r = lake.verify();
    assert!(
        r.violations[0]
            .subject
            .contains("ducklake_column column_id=(9)"),
        "{r:?}"
    );

    let mut lake = Lake::new();
    lake.run("UPDATE ducklake_column SET end_snapshot = 1 WHERE column_id = 2");
    assert_eq!(lake.checks(), vec!["snapshot_range"]);

    let mut lake = Lake::new();
    lake.run("INSERT INTO ducklake_data_file (data_file_id, table_id, begin_snapshot, path, path_is_relative, file_format, record_count, file_size_bytes, footer_size, row_id_start) VALUES (7, 1, 1, 'g.parquet', true, 'parquet', 1, 100, 10, 1)");
    assert_eq!(lake.checks(), vec!["counters"]);
}

#[test]
fn a_catalog_with_sequences_is_clean_and_a_bad_sequence_record_is_reported() {
    let mut lake = Lake::new();
    lake.run("CREATE SEQUENCE s; CREATE TABLE ids (id serial PRIMARY KEY, v int)");
    lake.run("SELECT nextval('s'); INSERT INTO ids (v) VALUES (1), (2)");
    let r = lake.verify();
    assert!(r.violations.is_empty(), "{:#?}", r.violations);
    // A sequence value record that is not 8 bytes and a flag.
    let mut key = vec![0x01]; // the unversioned records' tag
    key.extend_from_slice(b"sequences/");
    key.extend_from_slice(&1u32.to_be_bytes());
    lake.put_raw(key, vec![0; 8]);
    assert_eq!(lake.checks(), vec!["meta"]);
}

#[test]
fn a_catalog_with_views_is_clean_and_a_view_over_a_missing_table_is_reported() {
    let mut lake = Lake::new();
    lake.run("CREATE TABLE base (a int); CREATE VIEW over_base AS SELECT a FROM base");
    lake.run("CREATE VIEW over_ducklake AS SELECT count(*) AS n FROM ducklake_table");
    let r = lake.verify();
    assert!(r.violations.is_empty(), "{:#?}", r.violations);
    // The registry as if `base` were gone under the view (what the commit checks prevent).
    let id = lake
        .engine
        .st
        .tables
        .values()
        .find(|t| t.name == "base")
        .map(|t| t.id)
        .expect("base");
    lake.engine.st.remove_table(id);
    let r = lake.verify();
    assert_eq!(lake.checks(), vec!["view"], "{:#?}", r.violations);
    assert_eq!(r.violations[0].subject, "public.over_base");
}
