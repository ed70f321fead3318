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
        rows: Vec<Vec<Option<Vec<u8>>>>,
        tag: String,
    },
    /// A command without rows (`INSERT 0 1`, `BEGIN`, `CREATE TABLE`, ...).
    Command { tag: String },
    /// `COPY ... TO STDOUT`: the complete COPY data stream (for binary: header, tuples, trailer),
    /// split into one chunk per row as PostgreSQL sends it. `tag` is `COPY n`.
    CopyOut {
        binary: bool,
        columns: u16,
        chunks: Vec<Vec<u8>>,
        tag: String,
    },
    /// `COPY ... FROM STDIN`: the host must now collect CopyData from the client and pass it to
    /// `copy_in_data`, then call `copy_in_done` (or `copy_in_fail`).
    CopyIn { binary: bool, columns: u16 },
    /// An empty query string.
    Empty,
}

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
    pub constraint: Option<String>,
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
            constraint: None,
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
}

/// Key/value pairs in key order.
pub type KvPairs = Vec<(Vec<u8>, Vec<u8>)>;

/// Read access to the raw key/value store, answered by the host. Keys are the versioned keys of
/// [`crate::keys`]; MVCC filtering happens in the core.
/// The rows of the last result set among `outputs`, as text (`None` is NULL); empty when
/// there is none. For hosts and tools that read answers back (the typed writer, the CLI).
pub fn last_text_rows(outputs: &[Output]) -> Vec<Vec<Option<String>>> {
    outputs
        .iter()
        .rev()
        .find_map(|o| match o {
            Output::Rows { rows, .. } => Some(
                rows.iter()
                    .map(|r| {
                        r.iter()
                            .map(|c| c.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()))
                            .collect()
                    })
                    .collect(),
            ),
            _ => None,
        })
        .unwrap_or_default()
}

pub trait KvRead {
    /// All entries with `start <= key < end`, in key order, at most `limit` of them.
    fn scan(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPairs, KvError>;
    /// The value stored under exactly `key`.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError>;
    /// The entries with `start <= key < end` in descending key order, at most `limit` of
    /// them. The default reads the range forwards; stores that can walk backwards override it.
    fn scan_rev(&self, start: &[u8], end: &[u8], limit: usize) -> Result<KvPairs, KvError> {
        let mut all = self.scan(start, end, usize::MAX)?;
        all.reverse();
        all.truncate(limit);
        Ok(all)
    }
    /// Polled by long statements every few thousand rows: `Some(message)` cancels the
    /// statement with 57014 (statement timeout or CancelRequest).
    fn interrupted(&self) -> Option<String> {
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
