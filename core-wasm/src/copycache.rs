//! Results of binary `COPY (query) TO STDOUT` kept for the commit point they read.
//!
//! DuckDB reads a DuckLake table's file list and statistics with binary COPYs in every query
//! that touches it: tens of thousands of rows per query, the same rows until a commit changes
//! them. A result computed at the newest commit point, for a statement that reads only
//! committed tables through deterministic functions ([`crate::query::Binder::
//! reads_only_committed_tables`]) and by a session without writes of its own, is a function
//! of the statement and of the stored entries it read. Each kept result remembers the key
//! ranges its execution read ([`ReadSet`]); a finished commit drops the results whose ranges
//! hold a key it wrote or deleted, and the others stay valid at the new commit point (a commit
//! into one DuckLake table leaves another table's file list where it was). A commit that
//! changes the registry (tables, schemas) drops everything, since binding read the registry,
//! not the store. So a hit is exactly what executing the statement again would give. Bounded
//! in bytes and entries; when full it starts over, like the parse cache.
//!
//! The text rows of catalog queries (`SELECT`s over `pg_catalog` / `information_schema`
//! relations, [`crate::query::Binder::reads_only_catalog_and_committed_tables`]) are kept the
//! same way, for sessions of the user and database they were computed for: those relations
//! are derived from the registry, the user and the database (decision record 0014).

use std::cell::RefCell;
use std::collections::HashMap;

use sqlparser::ast;

use crate::api::{CopyChunks, FieldDesc, KvError, KvPage, KvRead, Output, TextRows};

/// Key ranges `[start, end)` of the store.
pub type KeyRanges = Vec<(Vec<u8>, Vec<u8>)>;

/// A [`KvRead`] that notes every range it is asked for, so a result computed through it can
/// be checked later against the keys a commit wrote. Conservative: a scan that stopped at its
/// limit still counts its whole requested range.
pub struct ReadSet<'a> {
    inner: &'a dyn KvRead,
    ranges: RefCell<KeyRanges>,
}

impl<'a> ReadSet<'a> {
    pub fn new(inner: &'a dyn KvRead) -> Self {
        ReadSet {
            inner,
            ranges: RefCell::new(Vec::new()),
        }
    }

    fn note(&self, start: &[u8], end: &[u8]) {
        self.ranges
            .borrow_mut()
            .push((start.to_vec(), end.to_vec()));
    }

    /// The ranges read, sorted and with overlapping ones merged.
    pub fn into_ranges(self) -> KeyRanges {
        let mut ranges = self.ranges.into_inner();
        ranges.sort();
        let mut merged: KeyRanges = Vec::with_capacity(ranges.len());
        for (s, e) in ranges {
            match merged.last_mut() {
                Some((_, last_end)) if s <= *last_end => {
                    if e > *last_end {
                        *last_end = e;
                    }
                }
                _ => merged.push((s, e)),
            }
        }
        merged
    }
}

impl KvRead for ReadSet<'_> {
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.note(start, end);
        self.inner.scan(start, end, limit)
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        let mut end = key.to_vec();
        end.push(0);
        self.note(key, &end);
        self.inner.get(key)
    }

    fn scan_rev(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        self.note(start, end);
        self.inner.scan_rev(start, end, limit)
    }

    fn reading(&self, start: &[u8], end: &[u8]) {
        self.note(start, end);
        self.inner.reading(start, end);
    }

    fn interrupted(&self) -> Option<String> {
        self.inner.interrupted()
    }

    fn entropy(&self) -> Option<u64> {
        self.inner.entropy()
    }
}

/// Whether any of the sorted `keys` lies in `[start, end)`.
pub(crate) fn touches_range(start: &[u8], end: &[u8], keys: &[Vec<u8>]) -> bool {
    let i = keys.partition_point(|k| k.as_slice() < start);
    keys.get(i).is_some_and(|k| k.as_slice() < end)
}

/// Whether any of the sorted `keys` lies in one of `ranges`.
fn touches(ranges: &[(Vec<u8>, Vec<u8>)], keys: &[Vec<u8>]) -> bool {
    ranges.iter().any(|(s, e)| touches_range(s, e, keys))
}

/// Bytes of binary COPY results kept at most; a single result larger than half of this is
/// never kept.
pub const COPY_CACHE_BYTES: usize = 64 << 20;
/// Statements kept at most. Each key is a syntax tree of a few KB: without this bound, a
/// client reading many small results (DuckDB's `SHOW ALL TABLES` sends one COPY per table)
/// would keep thousands of keys under the byte bound. DuckDB re-reads a handful per query.
pub const COPY_CACHE_ENTRIES: usize = 256;

#[derive(Debug)]
struct Entry {
    /// The store ranges its execution read.
    reads: KeyRanges,
    kept: Kept,
}

#[derive(Debug)]
enum Kept {
    /// A binary COPY's data.
    Copy { columns: u16, chunks: CopyChunks },
    /// A query's text rows, for sessions of this user and database (catalog relations show
    /// them).
    Rows {
        user: String,
        database: String,
        fields: Vec<FieldDesc>,
        rows: TextRows,
    },
}

impl Entry {
    fn bytes(&self) -> usize {
        match &self.kept {
            Kept::Copy { chunks, .. } => chunks.byte_len(),
            Kept::Rows { rows, .. } => rows.byte_len() + 4 * rows.len(),
        }
    }
}

/// Catalog query results kept at most, in bytes and statements: a pool of their own, so that
/// the stream of small COPYs of `SHOW ALL TABLES` (two per table) does not push out the
/// introspection every ATTACH reads. A single result larger than half the bytes is not kept.
pub const CATALOG_RESULT_BYTES: usize = 64 << 20;
pub const CATALOG_RESULT_ENTRIES: usize = 64;

/// Kept results of one kind, by statement, and their bytes.
#[derive(Debug, Default)]
struct Pool {
    entries: HashMap<ast::Query, (Entry, String)>,
    bytes: usize,
}

impl Pool {
    fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// Drops the entries whose reads hold one of the sorted `keys`.
    fn drop_touched(&mut self, keys: &[Vec<u8>]) {
        let mut freed = 0;
        self.entries.retain(|_, (e, _)| {
            let keep = !touches(&e.reads, keys);
            if !keep {
                freed += e.bytes();
            }
            keep
        });
        self.bytes -= freed;
    }

    /// Keeps `entry` within `max_bytes` and `max_entries`, starting over when full.
    fn insert(
        &mut self,
        q: ast::Query,
        entry: Entry,
        tag: String,
        max_bytes: usize,
        max_entries: usize,
    ) {
        let size = entry.bytes();
        if size > max_bytes / 2 {
            return;
        }
        if self.bytes + size > max_bytes || self.entries.len() >= max_entries {
            self.clear();
        }
        self.bytes += size;
        if let Some((old, _)) = self.entries.insert(q, (entry, tag)) {
            self.bytes -= old.bytes();
        }
    }
}

#[derive(Debug, Default)]
pub struct CopyCache {
    /// The commit point every entry was computed at.
    at: u64,
    /// Binary COPY results, and catalog query results (`SELECT` over `pg_catalog`), by
    /// statement. A statement is kept as one or the other: COPY keys are the inner query.
    copies: Pool,
    rows: Pool,
    hits: u64,
}

impl CopyCache {
    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.copies.clear();
        self.rows.clear();
    }

    /// A commit finished: the newest commit point moved from `from` to `to`, and the commit
    /// wrote or deleted `written` (sorted store keys; `None`: too many to keep, or the
    /// registry changed). Entries computed at `from` that read none of those keys give the
    /// same result at `to` and stay; the rest go.
    pub fn committed(&mut self, from: u64, to: u64, written: Option<&[Vec<u8>]>) {
        match written {
            Some(keys) if self.at == from => {
                self.copies.drop_touched(keys);
                self.rows.drop_touched(keys);
            }
            _ => self.clear(),
        }
        self.at = to;
    }

    /// The binary COPY output of `q` computed at commit point `at`, if kept.
    pub fn get(&mut self, at: u64, q: &ast::Query) -> Option<Output> {
        if at != self.at {
            return None;
        }
        let (e, tag) = self.copies.entries.get(q)?;
        let Kept::Copy { columns, chunks } = &e.kept else {
            return None;
        };
        self.hits += 1;
        Some(Output::CopyOut {
            binary: true,
            columns: *columns,
            chunks: chunks.clone(),
            tag: tag.clone(),
        })
    }

    /// Keeps `out` (a binary COPY output) as the result of `q` at commit point `at`, computed
    /// by reading `reads`.
    pub fn put(&mut self, at: u64, q: ast::Query, out: &Output, reads: KeyRanges) {
        let Output::CopyOut {
            binary: true,
            columns,
            chunks,
            tag,
        } = out
        else {
            return;
        };
        let kept = Kept::Copy {
            columns: *columns,
            chunks: chunks.clone(),
        };
        self.keep(at, q, Entry { reads, kept }, tag.clone(), false);
    }

    /// The rows of catalog query `q` computed at commit point `at` for a session of `user`
    /// on `database`, if kept.
    pub fn get_rows(
        &mut self,
        at: u64,
        user: &str,
        database: &str,
        q: &ast::Query,
    ) -> Option<Output> {
        if at != self.at {
            return None;
        }
        let (e, tag) = self.rows.entries.get(q)?;
        let Kept::Rows {
            user: u,
            database: d,
            fields,
            rows,
        } = &e.kept
        else {
            return None;
        };
        if u != user || d != database {
            return None;
        }
        self.hits += 1;
        Some(Output::Rows {
            fields: fields.clone(),
            rows: rows.clone(),
            tag: tag.clone(),
        })
    }

    /// Keeps `out` (text rows) as the result of catalog query `q` at commit point `at` for
    /// sessions of `user` on `database`, computed by reading `reads`.
    pub fn put_rows(
        &mut self,
        at: u64,
        user: &str,
        database: &str,
        q: ast::Query,
        out: &Output,
        reads: KeyRanges,
    ) {
        let Output::Rows { fields, rows, tag } = out else {
            return;
        };
        let kept = Kept::Rows {
            user: user.to_string(),
            database: database.to_string(),
            fields: fields.clone(),
            rows: rows.clone(),
        };
        self.keep(at, q, Entry { reads, kept }, tag.clone(), true);
    }

    fn keep(&mut self, at: u64, q: ast::Query, entry: Entry, tag: String, rows: bool) {
        if at != self.at {
            self.clear();
            self.at = at;
        }
        if rows {
            let (bytes, entries) = (CATALOG_RESULT_BYTES, CATALOG_RESULT_ENTRIES);
            self.rows.insert(q, entry, tag, bytes, entries);
        } else {
            let (bytes, entries) = (COPY_CACHE_BYTES, COPY_CACHE_ENTRIES);
            self.copies.insert(q, entry, tag, bytes, entries);
        }
    }

    /// Statements answered from the cache since the engine opened.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Statements kept now.
    pub fn len(&self) -> usize {
        self.copies.entries.len() + self.rows.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
