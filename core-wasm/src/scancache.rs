//! Decoded rows of large key-range scans, kept for the newest commit point.
//!
//! DuckDB reads a DuckLake table's file list in every query with the snapshot id in its WHERE
//! clause (`… WHERE table_id = 7 AND begin_snapshot <= 812`), so each commit changes the
//! statement's text and the copy cache (copycache.rs) cannot answer it, even when the commit
//! did not touch that table. Most of such a read is fetching, checking and decoding tens of
//! thousands of stored rows; filtering, projecting and encoding them is the small part. This
//! cache keeps the decoded visible rows of one scanned key range (an index prefix such as
//! `table_id = 7`, or a whole table), so a new statement over the same range skips the store.
//!
//! Validity is the copy cache's: rows read at the newest commit point stay valid across a
//! finished commit that wrote no key in their range; a registry change (a table's columns
//! may have changed) drops everything. Only ranges of at least [`SCAN_CACHE_MIN_ROWS`] rows
//! are kept (small scans cost little to repeat), and at most [`SCAN_CACHE_BYTES`] in all.

use std::collections::HashMap;
use std::sync::Arc;

use crate::copycache::touches_range;
use crate::types::{PgType, Value};

/// Estimated bytes of decoded rows kept at most.
pub const SCAN_CACHE_BYTES: usize = 128 << 20;
/// A single range larger than this is never kept (DuckLake's file list of a table with 30,000
/// files is about 18 MB decoded).
pub const SCAN_CACHE_RANGE_BYTES: usize = SCAN_CACHE_BYTES / 4;
/// Ranges with fewer visible rows than this are not kept.
pub const SCAN_CACHE_MIN_ROWS: usize = 256;

/// The visible rows of one range in key order: tuple number and the values of the columns
/// then (the ctid last), NULL for the columns not decoded.
pub type ScannedRows = Arc<Vec<(u64, Vec<Value>)>>;

/// The binary COPY tuples of a kept range's rows for one projection (table columns and the
/// types they are sent as), in the range's row order. A new statement over the range (DuckDB's
/// file list after a commit, whose text names the new snapshot) then filters the kept rows and
/// copies the tuples of those that pass, instead of encoding them again.
#[derive(Debug, Default)]
pub struct EncodedRows {
    bytes: Vec<u8>,
    /// Where each tuple ends in `bytes`.
    ends: Vec<usize>,
}

impl EncodedRows {
    /// The buffer to encode the next tuple into; [`EncodedRows::end_tuple`] closes it.
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }

    pub fn end_tuple(&mut self) {
        self.ends.push(self.bytes.len());
    }

    /// Tuple `i`, if there is one.
    pub fn tuple(&self, i: usize) -> Option<&[u8]> {
        let start = match i {
            0 => 0,
            _ => *self.ends.get(i - 1)?,
        };
        self.bytes.get(start..*self.ends.get(i)?)
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// All tuples' bytes together.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn size(&self) -> usize {
        self.bytes.len() + self.ends.len() * std::mem::size_of::<usize>()
    }
}

/// Which encoding of a range's rows: the table columns, and the types they are sent as.
type Projection = (Vec<usize>, Vec<PgType>);

#[derive(Debug)]
struct Entry {
    end: Vec<u8>,
    /// The columns decoded (see [`crate::exec::table_rows_where`]'s `used`; `None`: all).
    decoded: Option<Vec<bool>>,
    rows: ScannedRows,
    bytes: usize,
    /// The rows encoded for the projections that asked (their bytes are in `bytes` too).
    encoded: Vec<(Projection, Arc<EncodedRows>)>,
    /// Single columns of the rows, contiguous, for filters that asked (in `bytes` too): a
    /// filter over tens of thousands of kept rows would otherwise wait on a cache miss for
    /// every row it looks at.
    columns: Vec<(usize, Arc<Vec<Value>>)>,
}

#[derive(Debug, Default)]
pub struct ScanCache {
    /// The commit point every entry was read at.
    at: u64,
    bytes: usize,
    /// By the range's start key (a table or index prefix).
    entries: HashMap<Vec<u8>, Entry>,
    hits: u64,
    encoded_hits: u64,
}

/// Whether rows decoded with `decoded` hold every column of `used` (both as in
/// [`crate::exec::table_rows_where`]: one flag per column then the ctid's; `None`: all).
pub fn covers(decoded: Option<&[bool]>, used: Option<&[bool]>) -> bool {
    let Some(decoded) = decoded else {
        return true;
    };
    let Some(used) = used else {
        return false;
    };
    // A flag beyond the mask counts as set (a column added since).
    let n = decoded.len().max(used.len());
    (0..n).all(|i| !used.get(i).copied().unwrap_or(true) || decoded.get(i).copied().unwrap_or(true))
}

/// A rough size of a decoded value, for the byte bound.
/// Estimated bytes of one kept row: its tuple number and vector, and its values. A row of no
/// decoded columns (`count(*)`) still costs its vector.
pub fn row_bytes(values: &[Value]) -> usize {
    std::mem::size_of::<(u64, Vec<Value>)>() + values.iter().map(value_bytes).sum::<usize>()
}

pub fn value_bytes(v: &Value) -> usize {
    std::mem::size_of::<Value>()
        + match v {
            Value::Numeric(s) => s.len(),
            // Shared values carry their two reference counts.
            Value::Text(s) => 16 + s.len(),
            Value::Bytes(b) => b.len(),
            Value::Array(a) => 16 + a.iter().map(value_bytes).sum::<usize>(),
            _ => 0,
        }
}

impl ScanCache {
    pub fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// The rows of `[start, end)` read at commit point `at` with at least the columns `used`
    /// decoded, if kept.
    pub fn get(
        &mut self,
        at: u64,
        start: &[u8],
        end: &[u8],
        used: Option<&[bool]>,
    ) -> Option<ScannedRows> {
        if at != self.at {
            return None;
        }
        let e = self
            .entries
            .get(start)
            .filter(|e| e.end == end && covers(e.decoded.as_deref(), used))?;
        self.hits += 1;
        Some(Arc::clone(&e.rows))
    }

    /// The kept rows of the range starting at `start` encoded for `cols` sent as `types`, if
    /// some statement encoded them since the rows were kept.
    pub fn encoded(
        &mut self,
        at: u64,
        start: &[u8],
        cols: &[usize],
        types: &[PgType],
    ) -> Option<Arc<EncodedRows>> {
        if at != self.at {
            return None;
        }
        let e = self.entries.get(start)?;
        let enc = e
            .encoded
            .iter()
            .find(|((c, t), _)| c == cols && t == types)
            .map(|(_, enc)| Arc::clone(enc))?;
        self.encoded_hits += 1;
        Some(enc)
    }

    /// Keeps `enc`, the rows `rows` of the range starting at `start` encoded for `cols` sent
    /// as `types`, while those rows are the range's kept rows and the byte bound allows.
    pub fn put_encoded(
        &mut self,
        at: u64,
        start: &[u8],
        rows: &ScannedRows,
        (cols, types): (&[usize], &[PgType]),
        enc: Arc<EncodedRows>,
    ) {
        let size = enc.size();
        if at != self.at || self.bytes + size > SCAN_CACHE_BYTES {
            return;
        }
        let Some(e) = self.entries.get_mut(start) else {
            return;
        };
        if !Arc::ptr_eq(&e.rows, rows) || enc.len() != rows.len() {
            return;
        }
        e.bytes += size;
        self.bytes += size;
        e.encoded.push(((cols.to_vec(), types.to_vec()), enc));
    }

    /// Column `col` of `rows`, the kept rows of the range starting at `start`, as one vector:
    /// kept from an earlier statement, or collected now and kept while the byte bound allows.
    pub fn column(
        &mut self,
        at: u64,
        start: &[u8],
        rows: &ScannedRows,
        col: usize,
    ) -> Arc<Vec<Value>> {
        let entry = self
            .entries
            .get_mut(start)
            .filter(|e| at == self.at && Arc::ptr_eq(&e.rows, rows));
        if let Some(found) = entry
            .as_ref()
            .and_then(|e| e.columns.iter().find(|(c, _)| *c == col))
        {
            return Arc::clone(&found.1);
        }
        let values: Vec<Value> = rows
            .iter()
            .map(|(_, v)| v.get(col).cloned().unwrap_or(Value::Null))
            .collect();
        let values = Arc::new(values);
        let size: usize = values.iter().map(value_bytes).sum();
        if let Some(e) = entry {
            if self.bytes + size <= SCAN_CACHE_BYTES {
                e.bytes += size;
                self.bytes += size;
                e.columns.push((col, Arc::clone(&values)));
            }
        }
        values
    }

    /// Keeps the rows of `[start, end)` read at `at` with the columns `decoded` (`bytes`:
    /// their [`value_bytes`]).
    pub fn put(
        &mut self,
        at: u64,
        (start, end): (&[u8], &[u8]),
        decoded: Option<&[bool]>,
        rows: ScannedRows,
        bytes: usize,
    ) {
        if rows.len() < SCAN_CACHE_MIN_ROWS || bytes > SCAN_CACHE_RANGE_BYTES {
            return;
        }
        if at != self.at || self.bytes + bytes > SCAN_CACHE_BYTES {
            self.clear();
            self.at = at;
        }
        self.bytes += bytes;
        let old = self.entries.insert(
            start.to_vec(),
            Entry {
                end: end.to_vec(),
                decoded: decoded.map(<[bool]>::to_vec),
                rows,
                bytes,
                encoded: Vec::new(),
                columns: Vec::new(),
            },
        );
        if let Some(old) = old {
            self.bytes -= old.bytes;
        }
    }

    /// A commit finished (see [`crate::copycache::CopyCache::committed`]): ranges it wrote
    /// into go, the others stay valid at `to`.
    pub fn committed(&mut self, from: u64, to: u64, written: Option<&[Vec<u8>]>) {
        match written {
            Some(keys) if self.at == from => {
                let mut freed = 0;
                self.entries.retain(|start, e| {
                    let keep = !touches_range(start, &e.end, keys);
                    if !keep {
                        freed += e.bytes;
                    }
                    keep
                });
                self.bytes -= freed;
            }
            _ => self.clear(),
        }
        self.at = to;
    }

    /// Scans answered from the cache since the engine opened.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Binary COPY tuples taken from [`EncodedRows`] kept with a range, by statement.
    pub fn encoded_hits(&self) -> u64 {
        self.encoded_hits
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
