//! Reading rows with many versions: `visit_visible` returns, for every logical key of a range,
//! its newest version at or before the read point — the same answer as looking at every
//! version — and a row rewritten by a thousand commits costs a few dozen stored entries to
//! read, at the newest commit point and at an old one, rather than a thousand.

use std::cell::Cell;
use std::collections::BTreeMap;

use proptest::prelude::*;
use rocklake_core::api::{CommitBatch, CommitSeq, KvError, KvPage, KvRead};
use rocklake_core::engine::visit_visible;
use rocklake_core::keys;
use rocklake_core::memkv::MemKv;
use rocklake_core::types::{PgType, Value};

/// The store, counting the entries it hands out.
struct Counting {
    kv: MemKv,
    read: Cell<usize>,
}

impl KvRead for Counting {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        let r = self.kv.scan(start, end, limit)?;
        self.read.set(self.read.get() + r.len());
        Ok(r)
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        self.read.set(self.read.get() + 1);
        self.kv.get(key)
    }
}

fn logical(k: i64) -> Vec<u8> {
    keys::row_logical_key(7, &[(&Value::Int(k), PgType::Int8)])
}

/// A store holding, for each row key, versions at the given commits (value: the commit).
fn store(rows: &BTreeMap<i64, Vec<u64>>) -> Counting {
    let mut puts = Vec::new();
    for (k, seqs) in rows {
        for seq in seqs {
            let mut raw = logical(*k);
            keys::push_version(&mut raw, *seq);
            puts.push((raw, seq.to_be_bytes().to_vec()));
        }
    }
    let mut kv = MemKv::new();
    kv.apply(&CommitBatch {
        seq: CommitSeq(1),
        puts,
        deletes: vec![],
    });
    Counting {
        kv,
        read: Cell::new(0),
    }
}

/// (logical key, value, commit) of every visible row of `[start, end)` at `at`.
fn visible(kv: &dyn KvRead, start: &[u8], end: &[u8], at: u64) -> Vec<(Vec<u8>, Vec<u8>, u64)> {
    let mut out = Vec::new();
    visit_visible(kv, start, end, at, &mut |l, v, s| {
        out.push((l.to_vec(), v.to_vec(), s));
        Ok(())
    })
    .expect("scan");
    out
}

/// The same, by looking at every version of every row.
fn expected(
    rows: &BTreeMap<i64, Vec<u64>>,
    keys_in: &[i64],
    at: u64,
) -> Vec<(Vec<u8>, Vec<u8>, u64)> {
    keys_in
        .iter()
        .filter_map(|k| {
            let seq = rows.get(k)?.iter().copied().filter(|s| *s <= at).max()?;
            Some((logical(*k), seq.to_be_bytes().to_vec(), seq))
        })
        .collect()
}

#[test]
fn a_row_rewritten_a_thousand_times_reads_a_few_entries() {
    let mut rows = BTreeMap::new();
    rows.insert(1, (1..=1000).collect::<Vec<u64>>());
    rows.insert(2, (1..=1000).collect());
    rows.insert(3, vec![5]);
    let kv = store(&rows);
    let table = keys::table_prefix(7);
    let end = keys::prefix_end(&table);
    for at in [1000, 500, 3, 0] {
        kv.read.set(0);
        let got = visible(&kv, &table, &end, at);
        assert_eq!(got, expected(&rows, &[1, 2, 3], at), "at {at}");
        assert!(
            kv.read.get() <= 160,
            "at {at}: {} entries read for 3 rows",
            kv.read.get()
        );
    }
    // One row's own range.
    let one = logical(2);
    kv.read.set(0);
    assert_eq!(
        visible(&kv, &one, &keys::prefix_end(&one), 999),
        expected(&rows, &[2], 999)
    );
    assert!(kv.read.get() <= 80, "{}", kv.read.get());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn visible_versions_match_a_full_look(
        rows in prop::collection::btree_map(
            0i64..12,
            prop::collection::btree_set(1u64..120, 0..40).prop_map(|s| s.into_iter().collect::<Vec<_>>()),
            0..10,
        ),
        at in 0u64..130,
        lo in 0i64..13,
        len in 0i64..14,
    ) {
        let kv = store(&rows);
        let hi = lo + len;
        let start = logical(lo);
        let end = logical(hi);
        let keys_in: Vec<i64> = (lo..hi).collect();
        prop_assert_eq!(visible(&kv, &start, &end, at), expected(&rows, &keys_in, at));
        // The whole table.
        let table = keys::table_prefix(7);
        let all: Vec<i64> = (0..12).collect();
        prop_assert_eq!(
            visible(&kv, &table, &keys::prefix_end(&table), at),
            expected(&rows, &all, at)
        );
    }
}
