//! Results of binary `COPY (query) TO STDOUT` kept for the commit point they read.
//!
//! DuckDB reads a DuckLake table's file list and statistics with binary COPYs in every query
//! that touches it: tens of thousands of rows per query, the same rows until a commit changes
//! them. A result computed at the newest commit point, for a statement that reads only
//! committed tables through deterministic functions ([`crate::query::Binder::
//! reads_only_committed_tables`]) and by a session without writes of its own, is a function
//! of the statement and that commit point. So it is kept until the next commit finishes (or
//! the registry is reloaded), and a hit is exactly what executing the statement again would
//! give. Bounded in bytes; when full it starts over, like the parse cache.

use std::collections::HashMap;

use sqlparser::ast;

use crate::api::{CopyChunks, Output};

/// Bytes of COPY data kept at most; a single result larger than a quarter of this is never
/// kept.
pub const COPY_CACHE_BYTES: usize = 64 << 20;
/// Statements kept at most. Each key is a syntax tree of a few KB: without this bound, a
/// client reading many small results (DuckDB's `SHOW ALL TABLES` sends one COPY per table)
/// would keep thousands of keys under the byte bound. DuckDB re-reads a handful per query.
pub const COPY_CACHE_ENTRIES: usize = 256;

#[derive(Debug)]
struct Entry {
    columns: u16,
    chunks: CopyChunks,
    tag: String,
}

#[derive(Debug, Default)]
pub struct CopyCache {
    /// The commit point every entry was computed at.
    at: u64,
    bytes: usize,
    entries: HashMap<ast::Query, Entry>,
    hits: u64,
}

impl CopyCache {
    /// Forgets every entry: a commit finished, so the newest commit point moved (or a commit
    /// that finished out of order changed what an older one reads).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// The binary COPY output of `q` computed at commit point `at`, if kept.
    pub fn get(&mut self, at: u64, q: &ast::Query) -> Option<Output> {
        if at != self.at {
            return None;
        }
        let e = self.entries.get(q)?;
        self.hits += 1;
        Some(Output::CopyOut {
            binary: true,
            columns: e.columns,
            chunks: e.chunks.clone(),
            tag: e.tag.clone(),
        })
    }

    /// Keeps `out` (a binary COPY output) as the result of `q` at commit point `at`.
    pub fn put(&mut self, at: u64, q: ast::Query, out: &Output) {
        let Output::CopyOut {
            binary: true,
            columns,
            chunks,
            tag,
        } = out
        else {
            return;
        };
        let size = chunks.byte_len();
        if size > COPY_CACHE_BYTES / 4 {
            return;
        }
        if at != self.at
            || self.bytes + size > COPY_CACHE_BYTES
            || self.entries.len() >= COPY_CACHE_ENTRIES
        {
            self.clear();
            self.at = at;
        }
        self.bytes += size;
        let old = self.entries.insert(
            q,
            Entry {
                columns: *columns,
                chunks: chunks.clone(),
                tag: tag.clone(),
            },
        );
        if let Some(old) = old {
            self.bytes -= old.chunks.byte_len();
        }
    }

    /// Statements answered from the cache since the engine opened.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Statements kept now.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
