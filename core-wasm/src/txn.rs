//! Transaction buffering: [`PendingCatalogTxn`] holds every change of an open transaction in
//! memory, in order, until COMMIT turns it into one [`crate::api::CommitBatch`].

use std::collections::BTreeMap;
use std::sync::Arc;

use rocklake_proto as pb;

use crate::catalog::{Schema, Table};
use crate::error::SqlError;

/// The most a single transaction may buffer (the spec's MAX_BATCH_SIZE).
pub const MAX_BATCH_SIZE: usize = 64 * 1024 * 1024;

/// One buffered change, in the order the statements made them.
#[derive(Debug, Clone, PartialEq)]
pub enum BufferedOp {
    /// Row written or deleted under `logical_key`.
    Row {
        table_id: u32,
        logical_key: Vec<u8>,
    },
    CreateTable {
        table_id: u32,
    },
    AlterTable {
        table_id: u32,
    },
    DropTable {
        table_id: u32,
    },
    CreateSchema {
        name: String,
    },
    DropSchema {
        name: String,
    },
    /// A lifecycle record (lease, checkpoint, floor) written or removed.
    Meta {
        key: Vec<u8>,
    },
    /// Versioned keys to delete physically (excision).
    Excise {
        count: usize,
    },
    /// An index entry rewritten by repair.
    IndexEntry {
        key: Vec<u8>,
    },
}

/// The latest state of one row key inside the transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct RowWrite {
    pub table_id: u32,
    /// `None`: deleted.
    pub row: Option<pb::Row>,
    /// Commit sequence of the committed version this write replaces (for conflict checks);
    /// `None` when the key had no visible committed version.
    pub base_seq: Option<u64>,
    /// True when the row was inserted (not updated): the primary key must be unique at commit.
    pub inserted: bool,
}

/// The committed definition a transaction planned against ([`PendingCatalogTxn::def_bases`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefBase {
    /// The definition's version ([`Table::version`]).
    pub version: u64,
    /// Its columns', keys' and indexes' version ([`Table::shape_version`]).
    pub shape: u64,
    /// Only rows were written by it: a later definition that changed nothing but comments
    /// (the same shape) does not conflict.
    pub rows_only: bool,
}

/// [`PendingCatalogTxn::whole_table_reads`] read point that checks only commits in flight.
pub const IN_FLIGHT_ONLY: u64 = u64::MAX;

#[derive(Debug, Default, Clone)]
pub struct PendingCatalogTxn {
    pub ops: Vec<BufferedOp>,
    pub estimated_size: usize,
    /// Latest write per logical key.
    pub writes: BTreeMap<Vec<u8>, RowWrite>,
    /// Table definitions created or altered in this transaction (by id).
    pub tables: BTreeMap<u32, Arc<Table>>,
    /// Tables dropped in this transaction.
    pub dropped: Vec<u32>,
    /// Relations this transaction renamed, or renamed a column of: the views reading them
    /// were rewritten to the new names, so the commit fails (40001) if a view reading one
    /// was committed meanwhile (its text names the old ones).
    pub renamed: Vec<u32>,
    pub schemas: Vec<Schema>,
    /// Committed schemas this transaction dropped.
    pub dropped_schemas: Vec<String>,
    /// Committed schemas whose definition this transaction changed (a comment; the new one
    /// is in `schemas`): the commit fails (40001) if another commit dropped one meanwhile.
    pub altered_schemas: Vec<String>,
    /// Highest tuple number used per table (persisted as the table's counter at commit).
    pub tuple_counters: BTreeMap<u32, u64>,
    /// Unversioned lifecycle records: `Some` writes the value, `None` removes the key.
    pub meta: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Row versions no reader at or above the excision cut can see, deleted at commit.
    pub excise: Vec<Vec<u8>>,
    /// Index entries repair rewrites (logical key → row copy, `None` removes the entry);
    /// ordinary writes maintain indexes at commit instead.
    pub index_fixes: BTreeMap<Vec<u8>, Option<pb::Row>>,
    /// Temporary tables `ON COMMIT DROP` created in this transaction: forgotten at commit.
    pub temporary: Vec<u32>,
    /// The committed definition each table this transaction writes rows into, alters or
    /// drops was first used at: the commit fails (40001) if another commit changed or dropped
    /// it meanwhile, as its rows or its altered copy follow the old layout — for a table it
    /// only wrote rows into, unless that commit changed only comments.
    pub def_bases: BTreeMap<u32, DefBase>,
    /// Tables whose every row an ALTER TABLE of this transaction read (to rewrite them into
    /// another layout, fill an added column's default, or check a NOT NULL), with the read
    /// point: rows another transaction commits into them after it fail the commit (40001),
    /// as they were neither rewritten nor checked ([`IN_FLIGHT_ONLY`]: only those whose
    /// commit is in flight when this one is planned).
    pub whole_table_reads: BTreeMap<u32, u64>,
    /// While a savepoint is open: each `writes` entry as it was before a write changed it,
    /// oldest first ([`Self::rollback_to`] replays them backwards).
    undo: Vec<(Vec<u8>, Option<RowWrite>)>,
    /// Savepoints open ([`Self::mark`]).
    marks: usize,
}

/// The buffered state at a savepoint, which [`PendingCatalogTxn::rollback_to`] returns to:
/// lengths of what only grows, copies of the small maps; the row writes through the undo log.
#[derive(Debug, Clone)]
pub struct Mark {
    ops: usize,
    estimated_size: usize,
    undo: usize,
    excise: usize,
    tables: BTreeMap<u32, Arc<Table>>,
    dropped: Vec<u32>,
    renamed: Vec<u32>,
    schemas: Vec<Schema>,
    dropped_schemas: Vec<String>,
    altered_schemas: Vec<String>,
    meta: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    index_fixes: BTreeMap<Vec<u8>, Option<pb::Row>>,
    temporary: Vec<u32>,
    def_bases: BTreeMap<u32, DefBase>,
    whole_table_reads: BTreeMap<u32, u64>,
}

impl PendingCatalogTxn {
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    fn charge(&mut self, bytes: usize) -> Result<(), SqlError> {
        if self.estimated_size + bytes > MAX_BATCH_SIZE {
            return Err(SqlError::BatchTooLarge);
        }
        self.estimated_size += bytes;
        Ok(())
    }

    /// Buffers a row write, refusing it when the transaction would exceed MAX_BATCH_SIZE.
    pub fn put_row(
        &mut self,
        logical_key: Vec<u8>,
        write: RowWrite,
        encoded_len: usize,
    ) -> Result<(), SqlError> {
        self.charge(logical_key.len() + encoded_len + 16)?;
        if self.marks > 0 {
            self.undo
                .push((logical_key.clone(), self.writes.get(&logical_key).cloned()));
        }
        self.ops.push(BufferedOp::Row {
            table_id: write.table_id,
            logical_key: logical_key.clone(),
        });
        match self.writes.get_mut(&logical_key) {
            Some(prev) => {
                // Keep the base version and insert flag of the first write to this key.
                prev.row = write.row;
            }
            None => {
                self.writes.insert(logical_key, write);
            }
        }
        Ok(())
    }

    pub fn put_table(&mut self, mut table: Arc<Table>, created: bool) -> Result<(), SqlError> {
        if table.shape != 0 {
            // Its columns, keys or indexes may have changed: their version is this one's.
            Arc::make_mut(&mut table).shape = 0;
        }
        self.put_definition(table, created)
    }

    /// Stores an altered copy of a definition whose columns and keys stay as they were (only
    /// comments, or indexes, changed): writers of rows by the old one do not conflict with it
    /// (their commits maintain the latest definition's indexes).
    pub fn put_commented_table(&mut self, mut table: Arc<Table>) -> Result<(), SqlError> {
        let shape = table.shape_version();
        Arc::make_mut(&mut table).shape = shape;
        self.put_definition(table, false)
    }

    fn put_definition(&mut self, mut table: Arc<Table>, created: bool) -> Result<(), SqlError> {
        self.charge(256 + table.columns.len() * 64)?;
        if table.version != 0 {
            // An altered copy of a committed definition: its version is this transaction's.
            Arc::make_mut(&mut table).version = 0;
        }
        let id = table.id;
        self.ops.push(if created {
            BufferedOp::CreateTable { table_id: id }
        } else {
            BufferedOp::AlterTable { table_id: id }
        });
        self.dropped.retain(|d| *d != id);
        self.tables.insert(id, table);
        Ok(())
    }

    /// Records the committed definition a write, ALTER or DROP of `t` is planned against (see
    /// [`Self::def_bases`]); the transaction's own definitions (version 0) are not committed.
    pub fn uses_definition(&mut self, t: &Table) {
        self.base(t, false);
    }

    /// As [`Self::uses_definition`], for a statement that only writes rows by `t`.
    pub fn writes_rows_by(&mut self, t: &Table) {
        self.base(t, true);
    }

    fn base(&mut self, t: &Table, rows_only: bool) {
        if t.version == 0 {
            return;
        }
        let base = self.def_bases.entry(t.id).or_insert(DefBase {
            version: t.version,
            shape: t.shape_version(),
            rows_only,
        });
        if base.rows_only && !rows_only {
            // Altered or dropped as well: the whole definition must stay — the one planned
            // against now, when a comment is all that changed since the rows were written.
            if t.shape_version() == base.shape {
                base.version = t.version;
            }
            base.rows_only = false;
        }
    }

    /// Records that an ALTER TABLE read every row of a table at read point `at` (see
    /// [`Self::whole_table_reads`]); an earlier read keeps its older point.
    pub fn read_whole_table(&mut self, table_id: u32, at: u64) {
        let first = self.whole_table_reads.entry(table_id).or_insert(at);
        *first = (*first).min(at);
    }

    /// Fails the commit (40001) should a commit writing rows into the table be in flight when
    /// it is planned: CREATE / DROP INDEX, whose commit writes or removes the entries of the
    /// rows committed by then, which a commit not yet durable would miss.
    pub fn meet_no_writer_in_flight(&mut self, table_id: u32) {
        self.read_whole_table(table_id, IN_FLIGHT_ONLY);
    }

    /// Drops a table or sequence planned against its definition `t` (see
    /// [`Self::uses_definition`]).
    pub fn drop_definition(&mut self, t: &Table) -> Result<(), SqlError> {
        self.uses_definition(t);
        self.drop_table(t.id)
    }

    pub fn drop_table(&mut self, table_id: u32) -> Result<(), SqlError> {
        self.charge(32)?;
        self.ops.push(BufferedOp::DropTable { table_id });
        self.tables.remove(&table_id);
        self.dropped.push(table_id);
        Ok(())
    }

    /// Removes every trace of a table this transaction created (definition, rows, tuple
    /// counter, buffered operations): a temporary table `ON COMMIT DROP`, which never reaches
    /// the store. Other tables' writes are untouched.
    pub fn forget_table(&mut self, id: u32) {
        self.tables.remove(&id);
        self.dropped.retain(|d| *d != id);
        self.writes.retain(|_, w| w.table_id != id);
        self.tuple_counters.remove(&id);
        self.ops.retain(|op| match op {
            BufferedOp::Row { table_id, .. }
            | BufferedOp::CreateTable { table_id }
            | BufferedOp::AlterTable { table_id }
            | BufferedOp::DropTable { table_id } => *table_id != id,
            _ => true,
        });
    }

    pub fn put_meta(&mut self, key: Vec<u8>, value: Option<Vec<u8>>) -> Result<(), SqlError> {
        self.charge(key.len() + value.as_ref().map_or(0, Vec::len) + 16)?;
        self.ops.push(BufferedOp::Meta { key: key.clone() });
        self.meta.insert(key, value);
        Ok(())
    }

    /// Counts `bytes` the commit will write for this transaction (index entries it derives)
    /// against the batch limit, refusing the statement when they would exceed it.
    pub fn reserve(&mut self, bytes: usize) -> Result<(), SqlError> {
        self.charge(bytes)
    }

    pub fn put_index_entry(&mut self, key: Vec<u8>, row: Option<pb::Row>) -> Result<(), SqlError> {
        self.charge(key.len() + row.as_ref().map_or(0, prost::Message::encoded_len) + 16)?;
        self.ops.push(BufferedOp::IndexEntry { key: key.clone() });
        self.index_fixes.insert(key, row);
        Ok(())
    }

    pub fn excise_keys(&mut self, keys: Vec<Vec<u8>>) -> Result<(), SqlError> {
        self.charge(keys.iter().map(|k| k.len() + 16).sum())?;
        self.ops.push(BufferedOp::Excise { count: keys.len() });
        self.excise.extend(keys);
        Ok(())
    }

    /// Opens a savepoint: the state to return to, and row writes recorded for undo from now
    /// until every savepoint is gone.
    pub fn mark(&mut self) -> Mark {
        self.marks += 1;
        Mark {
            ops: self.ops.len(),
            estimated_size: self.estimated_size,
            undo: self.undo.len(),
            excise: self.excise.len(),
            tables: self.tables.clone(),
            dropped: self.dropped.clone(),
            renamed: self.renamed.clone(),
            schemas: self.schemas.clone(),
            dropped_schemas: self.dropped_schemas.clone(),
            altered_schemas: self.altered_schemas.clone(),
            meta: self.meta.clone(),
            index_fixes: self.index_fixes.clone(),
            temporary: self.temporary.clone(),
            def_bases: self.def_bases.clone(),
            whole_table_reads: self.whole_table_reads.clone(),
        }
    }

    /// `ROLLBACK TO SAVEPOINT`: everything buffered since `mark` undone. Tuple counters stay
    /// where they got (numbers once handed out are not handed out again), as PostgreSQL's
    /// sequences and OIDs do not go back either.
    pub fn rollback_to(&mut self, mark: &Mark) {
        while self.undo.len() > mark.undo {
            let Some((key, before)) = self.undo.pop() else {
                break;
            };
            match before {
                Some(w) => {
                    self.writes.insert(key, w);
                }
                None => {
                    self.writes.remove(&key);
                }
            }
        }
        self.ops.truncate(mark.ops);
        self.estimated_size = mark.estimated_size;
        self.excise.truncate(mark.excise);
        self.tables = mark.tables.clone();
        self.dropped = mark.dropped.clone();
        self.renamed = mark.renamed.clone();
        self.schemas = mark.schemas.clone();
        self.dropped_schemas = mark.dropped_schemas.clone();
        self.altered_schemas = mark.altered_schemas.clone();
        self.meta = mark.meta.clone();
        self.index_fixes = mark.index_fixes.clone();
        self.temporary = mark.temporary.clone();
        self.def_bases = mark.def_bases.clone();
        self.whole_table_reads = mark.whole_table_reads.clone();
    }

    /// `count` savepoints gone (released, or rolled back past): with none left open, nothing
    /// needs undoing any more.
    pub fn release(&mut self, count: usize) {
        self.marks = self.marks.saturating_sub(count);
        if self.marks == 0 {
            self.undo = Vec::new();
        }
    }

    pub fn create_schema(&mut self, schema: Schema) -> Result<(), SqlError> {
        self.charge(64)?;
        self.ops.push(BufferedOp::CreateSchema {
            name: schema.name.clone(),
        });
        // Dropped and made again: the new definition replaces the committed one.
        self.dropped_schemas.retain(|d| *d != schema.name);
        self.schemas.push(schema);
        Ok(())
    }

    /// Replaces a schema's definition (its comment): one this transaction made (or dropped
    /// and made again, or altered before) in place, a committed one at commit.
    pub fn alter_schema(&mut self, schema: Schema) -> Result<(), SqlError> {
        self.charge(64 + schema.comment.as_ref().map_or(0, String::len))?;
        self.ops.push(BufferedOp::CreateSchema {
            name: schema.name.clone(),
        });
        if !self.schemas.iter().any(|s| s.name == schema.name) {
            self.altered_schemas.push(schema.name.clone());
        }
        self.schemas.retain(|s| s.name != schema.name);
        self.schemas.push(schema);
        Ok(())
    }

    /// Drops schema `name` (its tables are dropped first, by the caller): one this transaction
    /// made is forgotten, a committed one is removed at commit.
    pub fn drop_schema(&mut self, name: &str, committed: bool) -> Result<(), SqlError> {
        self.charge(64)?;
        self.ops.push(BufferedOp::DropSchema {
            name: name.to_string(),
        });
        self.schemas.retain(|s| s.name != name);
        self.altered_schemas.retain(|s| s != name);
        if committed && !self.dropped_schemas.iter().any(|d| d == name) {
            self.dropped_schemas.push(name.to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One step of a transaction with savepoints: a row write (key, value), SAVEPOINT,
    /// ROLLBACK TO the n-th open savepoint, RELEASE of the n-th.
    #[derive(Debug, Clone)]
    enum Step {
        Write(u8, Option<u8>),
        Savepoint,
        RollbackTo(usize),
        Release(usize),
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            4 => (0u8..6, proptest::option::of(any::<u8>())).prop_map(|(k, v)| Step::Write(k, v)),
            1 => Just(Step::Savepoint),
            1 => (0usize..4).prop_map(Step::RollbackTo),
            1 => (0usize..4).prop_map(Step::Release),
        ]
    }

    fn write(value: Option<u8>) -> RowWrite {
        RowWrite {
            table_id: 1,
            row: value.map(|v| pb::Row {
                row_id: 1,
                values: vec![pb::Datum {
                    kind: Some(pb::datum::Kind::Int(i64::from(v))),
                }],
                tuple: 1,
            }),
            base_seq: None,
            inserted: true,
        }
    }

    proptest::proptest! {
        /// ROLLBACK TO returns the buffered writes and operations to exactly what they were at
        /// the savepoint (compared with a copy taken then), whatever was written, released or
        /// rolled back in between.
        #[test]
        fn rollback_to_returns_to_the_savepoint(steps in proptest::collection::vec(step(), 0..60)) {
            let mut t = PendingCatalogTxn::default();
            // The open savepoints: their marks and copies of the state at each.
            let mut open: Vec<(Mark, BTreeMap<Vec<u8>, RowWrite>, usize)> = Vec::new();
            for s in steps {
                match s {
                    Step::Write(k, v) => t.put_row(vec![k], write(v), 8).expect("small"),
                    Step::Savepoint => {
                        let copy = (t.writes.clone(), t.ops.len());
                        open.push((t.mark(), copy.0, copy.1));
                    }
                    Step::RollbackTo(n) if n < open.len() => {
                        let later = open.len() - n - 1;
                        open.truncate(n + 1);
                        let (mark, writes, ops) = &open[n];
                        t.rollback_to(mark);
                        t.release(later);
                        proptest::prop_assert_eq!(&t.writes, writes);
                        proptest::prop_assert_eq!(t.ops.len(), *ops);
                    }
                    Step::Release(n) if n < open.len() => {
                        let gone = open.len() - n;
                        open.truncate(n);
                        t.release(gone);
                    }
                    Step::RollbackTo(_) | Step::Release(_) => {}
                }
                proptest::prop_assert_eq!(t.marks, open.len());
                if open.is_empty() {
                    proptest::prop_assert!(t.undo.is_empty());
                }
            }
        }
    }

    #[test]
    fn batch_limit_is_enforced_and_nothing_partial_is_kept() {
        let mut t = PendingCatalogTxn::default();
        let big = MAX_BATCH_SIZE / 4;
        for i in 0..3u8 {
            t.put_row(
                vec![i],
                RowWrite {
                    table_id: 1,
                    row: None,
                    base_seq: None,
                    inserted: true,
                },
                big,
            )
            .expect("fits");
        }
        let err = t
            .put_row(
                vec![9],
                RowWrite {
                    table_id: 1,
                    row: None,
                    base_seq: None,
                    inserted: true,
                },
                big,
            )
            .expect_err("over the limit");
        assert_eq!(err, SqlError::BatchTooLarge);
        let pg = err.to_pg();
        assert_eq!(pg.code, "54001");
        assert_eq!(
            pg.message,
            "Transaction exceeds maximum batch size (64 MiB)."
        );
        assert_eq!(
            pg.hint.as_deref(),
            Some("Split large operations into smaller transactions.")
        );
        assert_eq!(t.writes.len(), 3, "the refused write is not buffered");
    }
}
