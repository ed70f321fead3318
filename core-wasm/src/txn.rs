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
    pub schemas: Vec<Schema>,
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

    pub fn create_schema(&mut self, schema: Schema) -> Result<(), SqlError> {
        self.charge(64)?;
        self.ops.push(BufferedOp::CreateSchema {
            name: schema.name.clone(),
        });
        self.schemas.push(schema);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
