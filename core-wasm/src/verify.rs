//! `verify_catalog`: checks every stored key and the DuckLake invariants of the transaction
//! model, reporting each violation with the key or row it concerns. Pure: reads through
//! [`KvRead`] only, so the host can run it on a live server's store or on a read-only open.
//!
//! RockLake's own invariants (every key):
//! * every value is a valid envelope (magic, version, kind, CRC) — `envelope`;
//! * versioned keys carry a commit sequence no later than the recorded `commit_seq`, so no
//!   commit is partly visible ahead of its sequence — `commit_seq`;
//! * a row's key is the key its values give (primary key fields, or its row id) and its table
//!   is defined — `key_row`;
//! * an index entry's key is the key its row gives, for an index its table defines, and at
//!   the latest commit every index of a live table holds exactly one entry per live row, a
//!   copy of the row — `index` (per-index sums first; keys listed only for an index whose sums
//!   disagree; `rocklake repair` rewrites those entries);
//! * tuple numbers never exceed the table's persisted counter, so new rows cannot reuse a
//!   ctid — `tuple_counter`;
//! * counters are 8-byte integers — `meta`.
//!
//! DuckLake's (per schema holding a `ducklake_snapshot` table, at the latest commit):
//! tables → schemas, columns → tables, data files → tables (`references`),
//! `end_snapshot > begin_snapshot` (`snapshot_range`), `next_catalog_id` / `next_file_id` above
//! every id they hand out (`counters`).

use std::collections::{BTreeMap, HashMap};

use crate::api::{KvRead, Output};
use crate::catalog::{from_datum, Table};
use crate::engine::Engine;
use crate::envelope::Envelope;
use crate::error::SqlError;
use crate::keys;
use crate::types::Value;

/// One broken invariant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Which check found it (`envelope`, `commit_seq`, `key_row`, `tuple_counter`, `meta`,
    /// `references`, `snapshot_range`, `counters`, `view`).
    pub check: &'static str,
    /// The key (hex) or row it concerns.
    pub subject: String,
    pub detail: String,
}

/// What was checked and what was found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub keys_checked: u64,
    pub rows_checked: u64,
    pub ducklake_schemas: Vec<String>,
    pub violations: Vec<Violation>,
}

impl Report {
    /// "N keys (M row versions), DuckLake schemas: …" — the one-line summary the CLI and
    /// `rocklake_verify()` print.
    pub fn summary(&self) -> String {
        format!(
            "checked {} keys ({} row versions), DuckLake schemas: {}",
            self.keys_checked,
            self.rows_checked,
            if self.ducklake_schemas.is_empty() {
                "none".to_string()
            } else {
                self.ducklake_schemas.join(", ")
            }
        )
    }
}

const SCAN_BATCH: usize = 4096;

/// DuckLake's id counters on its latest `ducklake_snapshot` row, in column order after
/// `snapshot_id`, with the (table, column) ids each hands out: every id in use must be below
/// its counter. Checked here, fixed by `rocklake_repair`.
pub(crate) const ID_COUNTERS: [(&str, &[(&str, &str)]); 2] = [
    (
        "next_catalog_id",
        &[
            ("ducklake_schema", "schema_id"),
            ("ducklake_table", "table_id"),
            ("ducklake_view", "view_id"),
            ("ducklake_macro", "macro_id"),
        ],
    ),
    (
        "next_file_id",
        &[
            ("ducklake_data_file", "data_file_id"),
            ("ducklake_delete_file", "delete_file_id"),
        ],
    ),
];

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Runs every check. Errors are only those of the store itself (a read failed).
pub fn verify(engine: &mut Engine, kv: &dyn KvRead) -> Result<Report, SqlError> {
    let mut report = Report::default();
    check_keys(engine, kv, &mut report)?;
    check_views(engine, &mut report);
    check_ducklake(engine, kv, &mut report)?;
    Ok(report)
}

/// Every view reads relations that are there (docs/decisions/0039).
fn check_views(engine: &Engine, report: &mut Report) {
    for t in engine.st.tables.values() {
        let Some(def) = t.view.as_deref() else {
            continue;
        };
        for id in def.relations() {
            if !engine.st.tables.contains_key(&id) {
                report.violations.push(Violation {
                    check: "view",
                    subject: format!("{}.{}", t.schema, t.name),
                    detail: format!("reads table id {id}, which is gone"),
                });
            }
        }
    }
}

/// The definition of table `id` a row version of commit `seq` was written by: the newest at or
/// before it (else the oldest kept, when excision removed the older ones).
fn def_at(defs: &BTreeMap<u32, Vec<(u64, Table)>>, id: u32, seq: u64) -> Option<&Table> {
    let versions = defs.get(&id)?;
    versions
        .iter()
        .find(|(at, _)| *at <= seq)
        .or(versions.last())
        .map(|(_, t)| t)
}

fn check_keys(engine: &Engine, kv: &dyn KvRead, report: &mut Report) -> Result<(), SqlError> {
    let latest = engine.st.latest;
    // Table definitions of every version (commit, definition), newest first per id: each row
    // version is checked against the definition its commit wrote it by (a dropped table's
    // rows, still readable at older commits, against their own; rows from before ADD PRIMARY
    // KEY moved them under their key, by row id).
    let mut defs: BTreeMap<u32, Vec<(u64, Table)>> = BTreeMap::new();

    let mut max_tuple: HashMap<u32, u64> = HashMap::new();
    let mut cursor = vec![keys::TAG_META];
    let end = vec![0xFF; 1];
    loop {
        let batch = kv.scan(&cursor, &end, SCAN_BATCH)?;
        let n = batch.len();
        for (key, value) in &batch {
            report.keys_checked += 1;
            let mut bad = |check: &'static str, detail: String| {
                report.violations.push(Violation {
                    check,
                    subject: hex(key),
                    detail,
                })
            };
            match key.first().copied() {
                Some(keys::TAG_META) => {
                    if let Some(problem) = crate::lifecycle::check_meta_entry(&key[1..], value) {
                        bad("meta", problem);
                    }
                    continue;
                }
                Some(keys::TAG_SCHEMA | keys::TAG_TABLE_DEF | keys::TAG_ROW | keys::TAG_INDEX) => {}
                Some(other) => {
                    bad("key_row", format!("unknown key tag {other:#04x}"));
                    continue;
                }
                None => continue,
            }
            let (logical, seq) = match keys::split_version(key) {
                Ok(x) => x,
                Err(e) => {
                    bad("key_row", e.to_string());
                    continue;
                }
            };
            if seq > latest {
                bad(
                    "commit_seq",
                    format!("written by commit {seq}, after the recorded commit_seq {latest}"),
                );
            }
            let env = match Envelope::decode(value) {
                Ok(env) => env,
                Err(e) => {
                    bad("envelope", e.to_string());
                    continue;
                }
            };

            match (logical[0], env) {
                (keys::TAG_TABLE_DEF, Envelope::TableDef(def)) => match Table::from_proto(&def) {
                    Ok(t) => {
                        defs.entry(t.id).or_default().push((seq, t));
                    }
                    Err(e) => bad("envelope", format!("table definition: {e}")),
                },
                (keys::TAG_ROW, Envelope::Row(row)) => {
                    report.rows_checked += 1;
                    let Some(id) = logical
                        .get(1..5)
                        .and_then(|b| <[u8; 4]>::try_from(b).ok())
                        .map(u32::from_be_bytes)
                    else {
                        bad("key_row", "row key without table id".into());
                        continue;
                    };
                    let Some(t) = def_at(&defs, id, seq) else {
                        bad("key_row", format!("row of undefined table id {id}"));
                        continue;
                    };
                    let expected = if t.primary_key.is_empty() {
                        Ok(keys::rowid_logical_key(id, row.row_id))
                    } else {
                        t.primary_key
                            .iter()
                            .map(|&i| {
                                let ty = t.columns[i].ty;
                                row.values
                                    .get(i)
                                    .map(|d| from_datum(d, ty))
                                    .unwrap_or(Ok(Value::Null))
                                    .map(|v| (v, ty))
                            })
                            .collect::<Result<Vec<_>, _>>()
                            .map(|f| {
                                let refs: Vec<_> = f.iter().map(|(v, ty)| (v, *ty)).collect();
                                keys::row_logical_key(id, &refs)
                            })
                    };
                    match expected {
                        Ok(k) if k == logical => {}
                        Ok(_) => bad(
                            "key_row",
                            format!("row of {}.{} is stored under another key", t.schema, t.name),
                        ),
                        Err(e) => bad("envelope", format!("row value: {e}")),
                    }
                    let m = max_tuple.entry(id).or_insert(0);
                    *m = (*m).max(row.tuple);
                }
                (keys::TAG_INDEX, Envelope::Row(row)) => {
                    let (id, no) = match index_of_key(logical) {
                        Some(x) => x,
                        None => {
                            bad("index", "index entry key without table id and index".into());
                            continue;
                        }
                    };
                    let found = def_at(&defs, id, seq)
                        .and_then(|t| Some((t, t.index_at_slot(u8::try_from(no).ok()?)?)));
                    let Some((t, no)) = found else {
                        bad(
                            "index",
                            format!(
                                "entry of index {no} of table id {id}, which no definition has"
                            ),
                        );
                        continue;
                    };
                    let expected = crate::exec::stored_row_key(t, &row)
                        .and_then(|rk| crate::exec::index_entry_key(t, no, &row, &rk));
                    match expected {
                        Ok(k) if k == logical => {}
                        Ok(_) => bad(
                            "index",
                            format!(
                                "entry of {} in {}.{} is stored under another key",
                                t.indexes[no].name, t.schema, t.name
                            ),
                        ),
                        Err(e) => bad("envelope", format!("index entry value: {e}")),
                    }
                }
                (keys::TAG_SCHEMA, Envelope::SchemaDef(_)) | (_, Envelope::Tombstone) => {}
                (tag, _) => bad(
                    "envelope",
                    format!("value kind does not belong under key tag {tag:#04x}"),
                ),
            }
        }
        match batch.last() {
            Some((k, _)) if n == SCAN_BATCH => {
                cursor = k.to_vec();
                cursor.push(0);
            }
            _ => break,
        }
    }
    let tables: Vec<&Table> = engine.st.tables.values().map(|t| t.as_ref()).collect();
    for (t, no, problems) in index_agreement(kv, &tables, latest, MAX_INDEX_PROBLEMS)? {
        let name = &t.indexes[no].name;
        for p in &problems {
            report.violations.push(Violation {
                check: "index",
                subject: hex(&p.key),
                detail: format!("{name} of {}.{}: {}", t.schema, t.name, p.detail),
            });
        }
        if problems.is_empty() {
            report.violations.push(Violation {
                check: "index",
                subject: name.clone(),
                detail: format!("entries of {}.{} disagree with its rows", t.schema, t.name),
            });
        }
    }
    for (id, max) in max_tuple {
        let counter = engine.st.tuple_counters.get(&id).copied().unwrap_or(0);
        if max > counter {
            report.violations.push(Violation {
                check: "tuple_counter",
                subject: format!("table id {id}"),
                detail: format!("a row has tuple {max}, the counter is {counter}"),
            });
        }
    }
    Ok(())
}

/// Table id and index slot of an index entry's logical key.
fn index_of_key(logical: &[u8]) -> Option<(u32, usize)> {
    let id = u32::from_be_bytes(logical.get(1..5)?.try_into().ok()?);
    Some((id, usize::from(*logical.get(5)?)))
}

/// One disagreement between an index and its table, with the entry write that mends it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexProblem {
    /// The entry's key (for an entry without a row) or the row's key (for a row without its
    /// entry).
    pub key: Vec<u8>,
    pub detail: String,
    /// Entry key and what to write there: `None` removes the entry, `Some(row)` writes it.
    pub fix: (Vec<u8>, Option<rocklake_proto::Row>),
}

/// A table, one of its index numbers, and what is wrong with that index.
pub(crate) type Disagreement<'t> = (&'t Table, usize, Vec<IndexProblem>);

/// Indexes of `tables` whose entries disagree with their rows at commit `latest`, each with
/// at most `max` problems listed. Order-independent sums (count and wrapping sum of 64-bit
/// hashes of entry key ‖ row) of the entries each index should hold and does hold are
/// compared first, one scan of rows and entries per table with constant memory; keys are
/// looked up only for an index whose sums differ.
pub(crate) fn index_agreement<'t>(
    kv: &dyn KvRead,
    tables: &[&'t Table],
    latest: u64,
    max: usize,
) -> Result<Vec<Disagreement<'t>>, SqlError> {
    let mut out = Vec::new();
    for t in tables.iter().filter(|t| !t.indexes.is_empty()) {
        let mut expected = vec![(0u64, 0u64); t.indexes.len()];
        let tp = keys::table_prefix(t.id);
        for (rk, env, _) in crate::engine::scan_visible(kv, &tp, &keys::prefix_end(&tp), latest)? {
            let Envelope::Row(row) = env else { continue };
            let value = Envelope::Row(row.clone()).encode();
            for (no, sum) in expected.iter_mut().enumerate() {
                let ek = crate::exec::index_entry_key(t, no, &row, &rk)?;
                sum.0 += 1;
                sum.1 = sum.1.wrapping_add(fnv64(&ek, &value));
            }
        }
        for (no, want) in expected.iter().enumerate() {
            let ix = keys::index_prefix(t.id, t.indexes[no].slot);
            let mut got = (0u64, 0u64);
            for (ek, env, _) in
                crate::engine::scan_visible(kv, &ix, &keys::prefix_end(&ix), latest)?
            {
                got.0 += 1;
                got.1 = got.1.wrapping_add(fnv64(&ek, &env.encode()));
            }
            if got != *want {
                out.push((*t, no, index_disagreements(kv, t, no, latest, max)?));
            }
        }
    }
    Ok(out)
}

fn fnv64(a: &[u8], b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for x in a.iter().chain([0xFFu8].iter()).chain(b) {
        h ^= u64::from(*x);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Most keys listed for one disagreeing index.
const MAX_INDEX_PROBLEMS: usize = 100;

/// The keys behind a disagreeing index, at commit `latest`: live entries whose row is gone or
/// different, and live rows without their entry. Point reads, so only run for such an index.
fn index_disagreements(
    kv: &dyn KvRead,
    t: &Table,
    no: usize,
    latest: u64,
    max: usize,
) -> Result<Vec<IndexProblem>, SqlError> {
    let mut out = Vec::new();
    let ix = keys::index_prefix(t.id, t.indexes[no].slot);
    for (ek, env, _) in crate::engine::scan_visible(kv, &ix, &keys::prefix_end(&ix), latest)? {
        let Envelope::Row(row) = env else { continue };
        let rk = crate::exec::stored_row_key(t, &row)?;
        let fine = match crate::engine::scan_visible(kv, &rk, &keys::prefix_end(&rk), latest)?
            .into_iter()
            .find(|(lk, _, _)| *lk == rk)
        {
            Some((_, Envelope::Row(live), _)) => {
                live == row && crate::exec::index_entry_key(t, no, &live, &rk)? == ek
            }
            _ => false,
        };
        if !fine {
            out.push(IndexProblem {
                key: ek.clone(),
                detail: "entry without a matching live row".into(),
                fix: (ek, None),
            });
            if out.len() >= max {
                return Ok(out);
            }
        }
    }
    let tp = keys::table_prefix(t.id);
    for (rk, env, _) in crate::engine::scan_visible(kv, &tp, &keys::prefix_end(&tp), latest)? {
        let Envelope::Row(row) = env else { continue };
        let ek = crate::exec::index_entry_key(t, no, &row, &rk)?;
        let present = crate::engine::scan_visible(kv, &ek, &keys::prefix_end(&ek), latest)?
            .into_iter()
            .any(|(k, e, _)| k == ek && matches!(e, Envelope::Row(r) if r == row));
        if !present {
            out.push(IndexProblem {
                key: rk,
                detail: "live row without its index entry".into(),
                fix: (ek, Some(row)),
            });
            if out.len() >= max {
                break;
            }
        }
    }
    Ok(out)
}

/// Runs `sql` on a fresh session and returns its rows as text.
fn rows(
    engine: &mut Engine,
    kv: &dyn KvRead,
    sql: &str,
) -> Result<Vec<Vec<Option<String>>>, SqlError> {
    let sid = engine.open_session("rocklake_verify", "lake");
    let reply = engine.query(kv, sid, sql, 0);
    engine.close_session(sid);
    if let Some(e) = reply.error {
        return Err(SqlError::internal(format!(
            "verify query failed: {} ({sql})",
            e.message
        )));
    }
    let mut out = Vec::new();
    for o in reply.outputs {
        if let Output::Rows { rows, .. } = o {
            out.extend(rows.to_strings());
        }
    }
    Ok(out)
}

fn show(row: &[Option<String>]) -> String {
    let cells: Vec<String> = row
        .iter()
        .map(|c| c.clone().unwrap_or_else(|| "NULL".into()))
        .collect();
    format!("({})", cells.join(", "))
}

fn check_ducklake(
    engine: &mut Engine,
    kv: &dyn KvRead,
    report: &mut Report,
) -> Result<(), SqlError> {
    let tables: Vec<(String, String, Vec<String>)> = engine
        .st
        .tables
        .values()
        .map(|t| {
            (
                t.schema.clone(),
                t.name.clone(),
                t.columns.iter().map(|c| c.name.clone()).collect(),
            )
        })
        .collect();
    let has = |schema: &str, name: &str| {
        tables
            .iter()
            .find(|(s, n, _)| s == schema && n == name)
            .map(|(_, _, cols)| cols.clone())
    };
    let mut schemas: Vec<String> = tables
        .iter()
        .filter(|(_, n, _)| n == "ducklake_snapshot")
        .map(|(s, _, _)| s.clone())
        .collect();
    schemas.sort();
    for s in &schemas {
        let q = |t: &str| format!("\"{}\".{t}", s.replace('"', "\"\""));
        let refs = [
            ("ducklake_table", "table_id", "schema_id", "ducklake_schema"),
            ("ducklake_column", "column_id", "table_id", "ducklake_table"),
            (
                "ducklake_data_file",
                "data_file_id",
                "table_id",
                "ducklake_table",
            ),
        ];
        for (child, id, fk, parent) in refs {
            if has(s, child).is_none() || has(s, parent).is_none() {
                continue;
            }
            let sql = format!(
                "SELECT c.{id}, c.{fk} FROM {} c WHERE NOT EXISTS \
                 (SELECT 1 FROM {} p WHERE p.{fk} = c.{fk})",
                q(child),
                q(parent)
            );
            for r in rows(engine, kv, &sql)? {
                report.violations.push(Violation {
                    check: "references",
                    subject: format!("{s}.{child} {id}={}", show(&r[..1])),
                    detail: format!("{fk} {} has no row in {parent}", show(&r[1..])),
                });
            }
        }
        for (schema, name, cols) in &tables {
            if schema != s
                || !cols.iter().any(|c| c == "begin_snapshot")
                || !cols.iter().any(|c| c == "end_snapshot")
            {
                continue;
            }
            let sql = format!(
                "SELECT {}, begin_snapshot, end_snapshot FROM {} \
                 WHERE end_snapshot IS NOT NULL AND end_snapshot <= begin_snapshot",
                cols[0],
                q(name)
            );
            for r in rows(engine, kv, &sql)? {
                report.violations.push(Violation {
                    check: "snapshot_range",
                    subject: format!("{s}.{name} {}={}", cols[0], show(&r[..1])),
                    detail: format!("end_snapshot {} is not after begin_snapshot", show(&r[1..])),
                });
            }
        }
        let latest = rows(
            engine,
            kv,
            &format!(
                "SELECT snapshot_id, next_catalog_id, next_file_id FROM {} \
                 ORDER BY snapshot_id DESC LIMIT 1",
                q("ducklake_snapshot")
            ),
        )?;
        let Some(snap) = latest.first() else { continue };
        let num = |c: &Option<String>| c.as_deref().and_then(|v| v.parse::<i64>().ok());
        let values = [num(&snap[1]), num(&snap[2])];
        for ((counter, sources), value) in ID_COUNTERS.iter().zip(values) {
            let Some(value) = value else { continue };
            for (table, col) in *sources {
                if has(s, table).is_none_or(|cols| !cols.iter().any(|c| c == col)) {
                    continue;
                }
                let max = rows(engine, kv, &format!("SELECT max({col}) FROM {}", q(table)))?;
                if let Some(m) = max.first().and_then(|r| num(&r[0])) {
                    if m >= value {
                        report.violations.push(Violation {
                            check: "counters",
                            subject: format!("{s}.ducklake_snapshot {}", show(&snap[..1])),
                            detail: format!("{counter} {value} is not above max {table}.{col} {m}"),
                        });
                    }
                }
            }
        }
    }
    report.ducklake_schemas = schemas;
    Ok(())
}
