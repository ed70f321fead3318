//! The boundary types of the core: what goes in (SQL text, COPY bytes, raw KV answers) and what
//! comes out (protocol-neutral results, errors, and at most one write batch per commit).
//!
//! These types mirror `wit/rocklake.wit` one to one so the native build and the component are
//! interchangeable behind the host.

/// Identifies one client session inside an [`crate::Engine`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub u64);

/// A commit point: the sequence number of a committed RockLake transaction (not a DuckLake
/// snapshot id). Readers bound to `CommitSeq(n)` see exactly the transactions `1..=n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct CommitSeq(pub u64);

/// One column of a result set, as PostgreSQL's RowDescription describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDesc {
    pub name: String,
    pub table_oid: u32,
    pub column_id: i16,
    pub type_oid: u32,
    pub type_len: i16,
    pub type_mod: i32,
}

/// What one statement produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// A result set in text format (simple query protocol). `None` is SQL NULL.
    Rows {
        fields: Vec<FieldDesc>,
        rows: TextRows,
        tag: String,
    },
    /// A command without rows (`INSERT 0 1`, `BEGIN`, `CREATE TABLE`, ...).
    Command { tag: String },
    /// `COPY ... TO STDOUT`: the complete COPY data stream (for binary: header, tuples, trailer),
    /// split into one chunk per row as PostgreSQL sends it. `tag` is `COPY n`.
    CopyOut {
        binary: bool,
        columns: u16,
        chunks: CopyChunks,
        tag: String,
    },
    /// `COPY ... FROM STDIN`: the host must now collect CopyData from the client and pass it to
    /// `copy_in_data`, then call `copy_in_done` (or `copy_in_fail`).
    CopyIn { binary: bool, columns: u16 },
    /// An empty query string.
    Empty,
    /// A NoticeResponse (severity `NOTICE` or `WARNING`): sent before the output of the
    /// statement that raised it, as PostgreSQL's `ereport(NOTICE, …)` is.
    Notice(PgError),
    /// `pg_cancel_backend` / `pg_terminate_backend` of another session: the host cancels that
    /// backend's running statement or ends its connection. The core has checked that the pid
    /// is a session of this engine and that the caller may signal it.
    Signal { pid: i32, terminate: bool },
}

/// The chunks of a COPY data stream packed into one buffer: chunk `i` is
/// `data[ends[i-1]..ends[i]]` (from 0 for the first). A catalog read returns tens of thousands
/// of rows; one buffer costs one allocation and crosses the WIT boundary in one copy, where a
/// list per row cost an allocation on each side per row.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CopyChunks {
    data: Vec<u8>,
    ends: Vec<u32>,
}

impl CopyChunks {
    pub fn new() -> CopyChunks {
        CopyChunks::default()
    }

    /// The buffer the next chunk is written into; [`CopyChunks::end_chunk`] closes it.
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.data
    }

    /// Closes the chunk written since the previous one. Fails when the stream would pass
    /// 4 GiB (offsets are u32 so that it reads the same in a 32-bit guest).
    pub fn end_chunk(&mut self) -> Result<(), CopyTooLarge> {
        let end = u32::try_from(self.data.len()).map_err(|_| CopyTooLarge)?;
        self.ends.push(end);
        Ok(())
    }

    /// Removes the chunks after the first `chunks` and the bytes after the first `bytes`
    /// (where those chunks end, plus any bytes of an unclosed chunk), returning those bytes.
    pub fn split_off(&mut self, bytes: usize, chunks: usize) -> Vec<u8> {
        self.ends.truncate(chunks);
        self.data.split_off(bytes.min(self.data.len()))
    }

    /// Makes room for `bytes` more bytes in `chunks` more chunks.
    pub fn reserve(&mut self, bytes: usize, chunks: usize) {
        self.data.reserve(bytes);
        self.ends.reserve(chunks);
    }

    /// Appends one whole chunk.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), CopyTooLarge> {
        self.data.extend_from_slice(chunk);
        self.end_chunk()
    }

    /// Rebuilds the chunks from their two lists (as they crossed the boundary), checking that
    /// every offset lies inside `data` and that they never go backwards.
    pub fn from_parts(data: Vec<u8>, ends: Vec<u32>) -> Option<CopyChunks> {
        (ends_fit(&ends, data.len())? == data.len()).then_some(CopyChunks { data, ends })
    }

    pub fn into_parts(self) -> (Vec<u8>, Vec<u32>) {
        (self.data, self.ends)
    }

    /// Number of chunks.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Total bytes of all chunks.
    pub fn byte_len(&self) -> usize {
        self.data.len()
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.ends.len()).map(move |i| {
            let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
            &self.data[start..self.ends[i] as usize]
        })
    }
}

impl<'a> FromIterator<&'a [u8]> for CopyChunks {
    /// Tests and tools: panics past 4 GiB, which no test builds.
    fn from_iter<I: IntoIterator<Item = &'a [u8]>>(chunks: I) -> CopyChunks {
        let mut out = CopyChunks::new();
        for c in chunks {
            out.push(c).expect("COPY stream under 4 GiB");
        }
        out
    }
}

/// Writes one row's values for [`TextRows::push_row`].
pub struct RowWriter<'a> {
    buf: &'a mut Vec<u8>,
    columns: usize,
}

impl RowWriter<'_> {
    /// Appends one value that `write` appends to the buffer; `write` returns false for NULL
    /// (whatever it appended is dropped).
    pub fn value_with(
        &mut self,
        write: impl FnOnce(&mut Vec<u8>) -> bool,
    ) -> Result<(), CopyTooLarge> {
        let at = self.buf.len();
        self.buf.extend_from_slice(&[0; 4]);
        let len = if write(self.buf) {
            i32::try_from(self.buf.len() - at - 4).map_err(|_| CopyTooLarge)?
        } else {
            self.buf.truncate(at + 4);
            -1
        };
        self.buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
        self.columns += 1;
        Ok(())
    }
}

/// A result set's rows in text format, each packed as the body of PostgreSQL's DataRow
/// message (an int16 column count, then per column an int32 length, -1 for NULL, and the
/// bytes), all in one buffer like [`CopyChunks`]. The host frames each body as a DataRow
/// without looking at its values, a kept result is one buffer to clone, and 120,000 catalog
/// rows cross the WIT boundary as two lists instead of 1.8 million.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TextRows {
    bodies: CopyChunks,
}

impl TextRows {
    pub fn new() -> TextRows {
        TextRows::default()
    }

    /// Appends one row (`None` is NULL). Fails, appending nothing, when the result would pass
    /// 4 GiB, a value 2 GiB, or the row 32,767 columns (PostgreSQL allows 1,664).
    pub fn push<T, I>(&mut self, values: I) -> Result<(), CopyTooLarge>
    where
        T: AsRef<[u8]>,
        I: IntoIterator<Item = Option<T>>,
        I::IntoIter: ExactSizeIterator,
    {
        self.push_row(|w| {
            for v in values {
                w.value_with(|buf| match v {
                    Some(v) => {
                        buf.extend_from_slice(v.as_ref());
                        true
                    }
                    None => false,
                })?;
            }
            Ok(())
        })
    }

    /// Appends one row whose values `write` appends through a [`RowWriter`], straight into
    /// the buffer (no string per value: a catalog join's 30,000 rows of 15 columns made
    /// 450,000 of them). Fails, appending nothing, as [`TextRows::push`] does.
    pub fn push_row(
        &mut self,
        write: impl FnOnce(&mut RowWriter<'_>) -> Result<(), CopyTooLarge>,
    ) -> Result<(), CopyTooLarge> {
        let buf = self.bodies.buf();
        let start = buf.len();
        let written = (|| {
            buf.extend_from_slice(&[0, 0]);
            let mut w = RowWriter { buf, columns: 0 };
            write(&mut w)?;
            let columns = i16::try_from(w.columns).map_err(|_| CopyTooLarge)?;
            buf[start..start + 2].copy_from_slice(&columns.to_be_bytes());
            Ok(())
        })();
        match written.and_then(|()| self.bodies.end_chunk()) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.bodies.buf().truncate(start);
                Err(e)
            }
        }
    }

    /// The rows of `rows`, each appended as by [`TextRows::push`].
    pub fn try_from_rows<T, R, I>(rows: I) -> Result<TextRows, CopyTooLarge>
    where
        T: AsRef<[u8]>,
        R: IntoIterator<Item = Option<T>>,
        R::IntoIter: ExactSizeIterator,
        I: IntoIterator<Item = R>,
    {
        let mut out = TextRows::new();
        for r in rows {
            out.push(r)?;
        }
        Ok(out)
    }

    /// Makes room for `bytes` more bytes in `rows` more rows.
    pub fn reserve(&mut self, bytes: usize, rows: usize) {
        self.bodies.reserve(bytes, rows);
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.bodies.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }

    /// Total bytes of all row bodies.
    pub fn byte_len(&self) -> usize {
        self.bodies.byte_len()
    }

    /// Each row's DataRow message body.
    pub fn bodies(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        self.bodies.iter()
    }

    /// Each row's values.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = RowValues<'_>> + '_ {
        self.bodies.iter().map(RowValues::of)
    }

    /// The rows as owned values, for readers that keep them (tests, tools).
    pub fn to_vecs(&self) -> Vec<Vec<Option<Vec<u8>>>> {
        self.iter()
            .map(|r| r.map(|v| v.map(<[u8]>::to_vec)).collect())
            .collect()
    }

    /// The rows as text (invalid UTF-8 replaced), for readers that show or compare them.
    pub fn to_strings(&self) -> Vec<Vec<Option<String>>> {
        self.iter()
            .map(|r| {
                r.map(|v| v.map(|b| String::from_utf8_lossy(b).into_owned()))
                    .collect()
            })
            .collect()
    }

    /// Rebuilds the rows from their two lists (as they crossed the boundary), checking the
    /// offsets and that every body is exactly a column count and that many values.
    pub fn from_parts(data: Vec<u8>, ends: Vec<u32>) -> Option<TextRows> {
        let bodies = CopyChunks::from_parts(data, ends)?;
        let whole = bodies.iter().all(RowValues::whole);
        whole.then_some(TextRows { bodies })
    }

    pub fn into_parts(self) -> (Vec<u8>, Vec<u32>) {
        self.bodies.into_parts()
    }
}

impl<T: AsRef<[u8]>> FromIterator<Vec<Option<T>>> for TextRows {
    /// Tests and tools: panics past 4 GiB, which no test builds.
    fn from_iter<I: IntoIterator<Item = Vec<Option<T>>>>(rows: I) -> TextRows {
        TextRows::try_from_rows(rows).expect("result under 4 GiB")
    }
}

/// The values of one row of [`TextRows`], in column order (`None` is NULL).
#[derive(Debug, Clone)]
pub struct RowValues<'a> {
    rest: &'a [u8],
    left: usize,
}

impl<'a> RowValues<'a> {
    fn of(body: &'a [u8]) -> RowValues<'a> {
        match body.split_first_chunk::<2>() {
            Some((n, rest)) => RowValues {
                rest,
                left: usize::try_from(i16::from_be_bytes(*n)).unwrap_or(0),
            },
            None => RowValues { rest: &[], left: 0 },
        }
    }

    /// Whether `body` is a column count (not negative) and exactly that many values.
    fn whole(body: &[u8]) -> bool {
        let count_ok = body
            .first_chunk::<2>()
            .is_some_and(|n| i16::from_be_bytes(*n) >= 0);
        let mut values = RowValues::of(body);
        let n = values.left;
        count_ok && (&mut values).take(n).count() == n && values.rest.is_empty()
    }
}

impl<'a> Iterator for RowValues<'a> {
    type Item = Option<&'a [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        let Some((len, rest)) = self.rest.split_first_chunk::<4>() else {
            self.left = 0;
            return None;
        };
        let value = match usize::try_from(i32::from_be_bytes(*len)) {
            Err(_) => {
                self.rest = rest;
                None
            }
            Ok(len) if len <= rest.len() => {
                let (value, rest) = rest.split_at(len);
                self.rest = rest;
                Some(value)
            }
            Ok(_) => {
                self.left = 0;
                return None;
            }
        };
        self.left -= 1;
        Some(value)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for RowValues<'_> {}

/// Checks the end offsets of a packed buffer of `len` bytes (never backwards, never past the
/// end) and returns the last one (0 for none).
fn ends_fit(ends: &[u32], len: usize) -> Option<usize> {
    let mut prev = 0usize;
    for &e in ends {
        let e = e as usize;
        if e < prev || e > len {
            return None;
        }
        prev = e;
    }
    Some(prev)
}

/// A packed result (a COPY data stream, text rows) passed its size limits (4 GiB).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyTooLarge;

/// PostgreSQL transaction status as reported in ReadyForQuery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TxnStatus {
    /// 'I'
    #[default]
    Idle,
    /// 'T'
    InBlock,
    /// 'E'
    Failed,
}

impl TxnStatus {
    pub fn as_byte(self) -> u8 {
        match self {
            TxnStatus::Idle => b'I',
            TxnStatus::InBlock => b'T',
            TxnStatus::Failed => b'E',
        }
    }
}

/// A PostgreSQL ErrorResponse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgError {
    /// "ERROR" or "FATAL".
    pub severity: String,
    /// Five-character SQLSTATE.
    pub code: String,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
    pub schema: Option<String>,
    pub table: Option<String>,
    /// The column the error is about (field `c`): a not-null violation's.
    pub column: Option<String>,
    pub constraint: Option<String>,
    /// Where the error happened (PostgreSQL's CONTEXT, field `W`): the COPY line for COPY FROM.
    pub context: Option<String>,
    /// The 1-based character position in the query string the error points at (field `P`;
    /// psql draws its `LINE n:` caret from it).
    pub position: Option<u32>,
}

impl PgError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        PgError {
            severity: "ERROR".into(),
            code: code.into(),
            message: message.into(),
            detail: None,
            hint: None,
            schema: None,
            table: None,
            column: None,
            constraint: None,
            context: None,
            position: None,
        }
    }
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl std::fmt::Display for PgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} (SQLSTATE {})",
            self.severity, self.message, self.code
        )
    }
}

/// One atomic write: every key/value of one committed transaction (rows, table definitions,
/// counters). The host must make it durable as a single write and then call
/// [`crate::Engine::commit_finished`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitBatch {
    pub seq: CommitSeq,
    pub puts: Vec<(Vec<u8>, Vec<u8>)>,
    /// Keys to delete physically: row versions removed by excision and lifecycle records
    /// (leases, checkpoints) that were released. Ordinary SQL never produces deletes.
    pub deletes: Vec<Vec<u8>>,
}

impl CommitBatch {
    pub fn size_bytes(&self) -> usize {
        self.puts
            .iter()
            .map(|(k, v)| k.len() + v.len())
            .sum::<usize>()
            + self.deletes.iter().map(Vec::len).sum::<usize>()
    }
}

/// What the host knows about a client when it opens a session.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionOptions {
    pub user: String,
    pub database: String,
    /// The role may only read: every write fails with 25006 and read-write mode is refused.
    pub read_only: bool,
    /// Setting values in the order they apply: the server's defaults, then the client's
    /// start-up parameters (`options=-c name=value` included). RESET returns to them.
    pub settings: Vec<(String, String)>,
    /// The pid announced in BackendKeyData (`pg_backend_pid()`, `pg_stat_activity.pid`).
    pub backend_pid: i32,
    /// The client's address and port; `None` for a Unix socket or a session without a client.
    pub client_addr: Option<String>,
    pub client_port: Option<i32>,
    /// When the client connected (microseconds since 2000-01-01 UTC, as every `now`).
    pub backend_start: i64,
}

impl SessionOptions {
    /// A read-write session with the default settings (tools, tests).
    pub fn plain(user: &str, database: &str) -> SessionOptions {
        SessionOptions {
            user: user.to_string(),
            database: database.to_string(),
            ..Default::default()
        }
    }
}

/// A session the core opened.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenedSession {
    pub id: SessionId,
    /// Every setting PostgreSQL reports with ParameterStatus at start-up, in its order, then
    /// the timeouts the host enforces (`statement_timeout`, `idle_in_transaction_session_timeout`).
    pub settings: Vec<(String, String)>,
}

/// What the core answers to one request of the host.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    /// Outputs of the statements that completed, in order.
    pub outputs: Vec<Output>,
    /// The error that stopped the request, if any (the remaining statements were skipped).
    pub error: Option<PgError>,
    /// Transaction status after the request (valid once `commit` is `None`).
    pub status: TxnStatus,
    /// When set, the request is suspended: the host must write this batch durably and call
    /// `commit_finished`, which continues the request and returns the rest of the reply.
    pub commit: Option<CommitBatch>,
    /// Settings whose values changed during the request (as SHOW shows them): those
    /// PostgreSQL reports with ParameterStatus and the timeouts the host enforces.
    pub settings: Vec<(String, String)>,
    /// When set, the request is suspended while its statement waits (for an advisory lock or
    /// a `pg_sleep`): the host calls `wake` to run the statement again once
    /// `locks_released` was reported by any request, the wait's deadline passed, or the
    /// session was interrupted (cancel, statement timeout). The outputs so far come with the
    /// final reply.
    pub wait: Option<Wait>,
    /// An advisory lock was released, or a session stopped waiting, during the request:
    /// waiting sessions may get their locks now.
    pub locks_released: bool,
}

/// A suspended request's wait (see [`Reply::wait`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// Wake the session at this time (the clock of every call's `now`) even if nothing is
    /// released: a `pg_sleep`'s end, the deadlock check, `lock_timeout`.
    pub until: Option<i64>,
}

/// One answer of a scan: key/value entries in scan order, packed into one buffer.
///
/// A page costs one allocation however many rows it holds, and crosses the WIT boundary as
/// two flat lists (one copy each) instead of two lists per row, which the canonical ABI
/// would lower with one call into the guest's allocator per key and per value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KvPage {
    /// Entry `i` is `data[start..ends[2i]]` (key) then `data[ends[2i]..ends[2i+1]]` (value),
    /// where `start` is the previous entry's value end (0 for the first).
    data: Vec<u8>,
    ends: Vec<u32>,
}

impl KvPage {
    pub fn new() -> KvPage {
        KvPage::default()
    }

    /// Appends one entry. Fails only when the page would pass 4 GiB (offsets are u32 so
    /// that a page reads the same in a 32-bit guest).
    pub fn push(&mut self, key: &[u8], value: &[u8]) -> Result<(), KvError> {
        let too_big = || KvError {
            message: "scan page exceeds 4 GiB; scan with a smaller limit".into(),
            transient: false,
        };
        let key_end = u32::try_from(self.data.len() + key.len()).map_err(|_| too_big())?;
        let value_end = u32::try_from(key_end as usize + value.len()).map_err(|_| too_big())?;
        self.data.extend_from_slice(key);
        self.data.extend_from_slice(value);
        self.ends.push(key_end);
        self.ends.push(value_end);
        Ok(())
    }

    /// Rebuilds a page from its two lists (as they crossed the boundary), checking that every
    /// offset lies inside `data` and that they never go backwards.
    pub fn from_parts(data: Vec<u8>, ends: Vec<u32>) -> Result<KvPage, KvError> {
        if ends.len().is_multiple_of(2) && ends_fit(&ends, data.len()).is_some() {
            Ok(KvPage { data, ends })
        } else {
            Err(KvError {
                message: "malformed scan page from the host (offsets out of order or range)".into(),
                transient: false,
            })
        }
    }

    pub fn into_parts(self) -> (Vec<u8>, Vec<u32>) {
        (self.data, self.ends)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.ends.len() / 2
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Entry `i` as (key, value).
    pub fn get(&self, i: usize) -> Option<(&[u8], &[u8])> {
        let key_end = *self.ends.get(2 * i)? as usize;
        let value_end = *self.ends.get(2 * i + 1)? as usize;
        let start = if i == 0 {
            0
        } else {
            self.ends[2 * i - 1] as usize
        };
        Some((
            self.data.get(start..key_end)?,
            self.data.get(key_end..value_end)?,
        ))
    }

    pub fn last(&self) -> Option<(&[u8], &[u8])> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    pub fn iter(&self) -> KvPageIter<'_> {
        KvPageIter {
            page: self,
            front: 0,
            back: self.len(),
        }
    }

    /// The entries as owned pairs (tests and tools).
    pub fn to_pairs(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
    }

    /// Builds a page from entries; fails like [`KvPage::push`].
    pub fn try_from_iter<'a>(
        entries: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
    ) -> Result<KvPage, KvError> {
        let mut page = KvPage::new();
        for (k, v) in entries {
            page.push(k, v)?;
        }
        Ok(page)
    }
}

/// The entries of a [`KvPage`] as borrowed (key, value) slices.
pub struct KvPageIter<'a> {
    page: &'a KvPage,
    front: usize,
    back: usize,
}

impl<'a> Iterator for KvPageIter<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.front >= self.back {
            return None;
        }
        self.front += 1;
        self.page.get(self.front - 1)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }
}

impl DoubleEndedIterator for KvPageIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front >= self.back {
            return None;
        }
        self.back -= 1;
        self.page.get(self.back)
    }
}

impl ExactSizeIterator for KvPageIter<'_> {}

impl<'a> IntoIterator for &'a KvPage {
    type Item = (&'a [u8], &'a [u8]);
    type IntoIter = KvPageIter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Read access to the raw key/value store, answered by the host. Keys are the versioned keys of
/// [`crate::keys`]; MVCC filtering happens in the core.
/// The rows of the last result set among `outputs`, as text (`None` is NULL); empty when
/// there is none. For hosts and tools that read answers back (the typed writer, the CLI).
pub fn last_text_rows(outputs: &[Output]) -> Vec<Vec<Option<String>>> {
    outputs
        .iter()
        .rev()
        .find_map(|o| match o {
            Output::Rows { rows, .. } => Some(rows.to_strings()),
            _ => None,
        })
        .unwrap_or_default()
}

pub trait KvRead {
    /// All entries with `start <= key < end`, in key order, at most `limit` of them.
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError>;
    /// The value stored under exactly `key`.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError>;
    /// The entries with `start <= key < end` in descending key order, at most `limit` of
    /// them. The default reads the range forwards; stores that can walk backwards override it.
    fn scan_rev(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPage, KvError> {
        let all = self.scan(start, end, usize::MAX)?;
        KvPage::try_from_iter(all.iter().rev().take(limit))
    }
    /// Told that `[start, end)` was read from entries kept in memory (the scan cache)
    /// instead of through this store: a store that notes what it reads notes it too.
    fn reading(&self, _start: &[u8], _end: &[u8]) {}
    /// Polled by long statements every few thousand rows: `Some(message)` cancels the
    /// statement with 57014 (statement timeout or CancelRequest).
    fn interrupted(&self) -> Option<String> {
        None
    }
    /// 64 bits from the host's entropy source (`random()` seeds a session's generator from
    /// it; `gen_random_uuid()` draws from it), or `None` from a host without one: the core
    /// has no randomness of its own.
    fn entropy(&self) -> Option<u64> {
        None
    }
}

/// A storage failure reported by the host. The statement fails; nothing is committed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("storage error: {message}")]
pub struct KvError {
    pub message: String,
    /// True when retrying later may succeed (timeouts, 5xx).
    pub transient: bool,
}

/// The answer to Parse + Describe of an unnamed statement: parameter types and, for statements
/// that return rows, the row description (computed without executing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Describe {
    pub param_types: Vec<u32>,
    pub fields: Option<Vec<FieldDesc>>,
}

/// Why the host could not make a commit batch durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitFailure {
    /// Another writer took over the catalog (57P04).
    pub fenced: bool,
    /// Retrying later may succeed.
    pub transient: bool,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::{CopyChunks, KvPage, TextRows};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn rows_written_value_by_value_read_back_as_written(
            rows in proptest::collection::vec(
                proptest::collection::vec(proptest::option::of("[a-z]{0,5}"), 0..5),
                0..6,
            )
        ) {
            let mut written = TextRows::new();
            for r in &rows {
                written.push_row(|w| {
                    for v in r {
                        w.value_with(|buf| match v {
                            Some(v) => {
                                buf.extend_from_slice(v.as_bytes());
                                true
                            }
                            // What a NULL's writer appended does not count.
                            None => {
                                buf.extend_from_slice(b"junk");
                                false
                            }
                        })?;
                    }
                    Ok(())
                }).expect("small");
            }
            prop_assert_eq!(written.to_strings(), rows.clone());
            let (data, ends) = written.clone().into_parts();
            prop_assert_eq!(TextRows::from_parts(data, ends), Some(written.clone()));
            let pushed = TextRows::try_from_rows(rows.iter().map(|r| r.iter().map(Option::as_deref)))
                .expect("small");
            prop_assert_eq!(pushed, written);
        }

        #[test]
        fn copy_chunks_give_back_what_was_pushed_and_cross_intact(
            chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 0..20)
        ) {
            let packed: CopyChunks = chunks.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(packed.len(), chunks.len());
            prop_assert_eq!(packed.iter().map(<[u8]>::to_vec).collect::<Vec<_>>(), chunks.clone());
            let (data, ends) = packed.clone().into_parts();
            prop_assert_eq!(CopyChunks::from_parts(data.clone(), ends.clone()), Some(packed));
            // Offsets past the buffer, going backwards, or leaving bytes unaccounted: refused.
            let mut past = ends.clone();
            past.push(data.len() as u32 + 1);
            prop_assert_eq!(CopyChunks::from_parts(data.clone(), past), None);
            if data.len() > 1 {
                prop_assert_eq!(CopyChunks::from_parts(data.clone(), vec![1, 0, data.len() as u32]), None);
                prop_assert_eq!(CopyChunks::from_parts(data.clone(), vec![1]), None);
            }
        }

        #[test]
        fn a_page_gives_back_what_was_pushed(
            entries in proptest::collection::vec(
                (proptest::collection::vec(any::<u8>(), 0..12), proptest::collection::vec(any::<u8>(), 0..12)),
                0..20,
            )
        ) {
            let page = KvPage::try_from_iter(entries.iter().map(|(k, v)| (&k[..], &v[..]))).expect("page");
            prop_assert_eq!(page.len(), entries.len());
            prop_assert_eq!(page.to_pairs(), entries.clone());
            let back: Vec<_> = page.iter().rev().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
            let mut expected = entries.clone();
            expected.reverse();
            prop_assert_eq!(back, expected);
            // What crossed the boundary reads back the same.
            let (data, ends) = page.clone().into_parts();
            prop_assert_eq!(KvPage::from_parts(data, ends).expect("valid parts"), page);
        }
    }

    #[test]
    fn malformed_parts_are_an_error() {
        // Odd number of offsets, an offset past the data, offsets going backwards.
        assert!(KvPage::from_parts(vec![1, 2, 3], vec![1]).is_err());
        assert!(KvPage::from_parts(vec![1, 2, 3], vec![1, 4]).is_err());
        assert!(KvPage::from_parts(vec![1, 2, 3], vec![2, 1]).is_err());
        assert!(KvPage::from_parts(vec![1, 2, 3], vec![1, 2, 2, 3]).is_ok());
        assert_eq!(KvPage::new().last(), None);
    }
}
