//! The typed catalog API of the spec ("Writer Protocol State Machine", "CommitResult
//! Contract"): a [`CatalogStore`] over one catalog location, whose [`CatalogWriter`]s stage
//! DuckLake mutations and commit each as one DuckLake snapshot, and whose [`CatalogReader`]s
//! list what is visible at a snapshot.
//!
//! Everything goes through the SQL engine exactly as DuckDB's ducklake extension would send it
//! (see [`rocklake_core::writer`]), so a DuckDB attached to a server over the same catalog reads
//! what was written here. Do not open a `CatalogStore` and a server on the same location at the
//! same time: each open claims the writer role and fences the other.
//!
//! Commits are driven like `service.rs` does: `engine.query` suspends on `COMMIT` with one
//! commit batch, `Store::commit` makes it durable, `engine.commit_finished` publishes it.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, MutexGuard};

use rocklake_core::api::{CommitFailure, Output, Reply, SessionId, TxnStatus};
use rocklake_core::writer::{
    self, ColumnDef, ColumnRef, Counters, Rows, TableRef, WriterError, WriterHost,
};
use rocklake_core::Engine;

pub use crate::service::{Clock, SystemClock};
pub use rocklake_core::writer::{CommitResult, SnapshotId};

use crate::store::{Store, StoreError, StoreOptions};

/// Microseconds from 1970-01-01 to 2000-01-01 (PostgreSQL's epoch).
const PG_EPOCH_UNIX_MICROS: i64 = 946_684_800_000_000;

/// A clock for tests: returns the instant it was set to (PostgreSQL microseconds).
#[derive(Debug)]
pub struct MockClock {
    now: AtomicI64,
}

impl MockClock {
    /// A clock standing at `unix_secs` seconds after the Unix epoch.
    pub fn at_unix_secs(unix_secs: i64) -> MockClock {
        MockClock {
            now: AtomicI64::new(unix_secs * 1_000_000 - PG_EPOCH_UNIX_MICROS),
        }
    }
    /// Moves the clock to `pg_micros` (microseconds since 2000-01-01 UTC).
    pub fn set_pg_micros(&self, pg_micros: i64) {
        self.now.store(pg_micros, Ordering::SeqCst);
    }
    pub fn advance_micros(&self, micros: i64) {
        self.now.fetch_add(micros, Ordering::SeqCst);
    }
}

impl Clock for MockClock {
    fn now_pg_micros(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }
}

/// A shared clock: lets a test keep a handle on the `MockClock` it gave the store.
impl<C: Clock> Clock for std::sync::Arc<C> {
    fn now_pg_micros(&self) -> i64 {
        (**self).now_pg_micros()
    }
}

/// Why a catalog operation failed.
#[derive(thiserror::Error, Debug)]
pub enum CatalogError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Writer(#[from] WriterError),
    #[error("snapshot {requested} does not exist")]
    NoSuchSnapshot { requested: u64 },
}

/// How to open a catalog.
pub struct CatalogOptions {
    /// The lake's DATA_PATH, recorded in `ducklake_metadata` when the catalog is initialised.
    /// Default: beside the catalog (`<catalog>.files/`).
    pub data_path: Option<String>,
    /// Recorded as `created_by` when the catalog is initialised.
    pub created_by: String,
    pub clock: Box<dyn Clock>,
}

impl Default for CatalogOptions {
    fn default() -> Self {
        CatalogOptions {
            data_path: None,
            created_by: format!("RockLake {}", env!("CARGO_PKG_VERSION")),
            clock: Box::new(SystemClock),
        }
    }
}

/// A DuckLake catalog opened as its writer.
pub struct CatalogStore {
    engine: Mutex<Engine>,
    store: Store,
    clock: Box<dyn Clock>,
    /// Serializes commits: plan (engine) → durable write (store) → publish (engine).
    commit_lock: tokio::sync::Mutex<()>,
    /// The latest committed snapshot's counters, as far as `commit_writer` has reported.
    latest: Mutex<Counters>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every mutation under these locks completes before the guard drops.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn sql_error(reply: &Reply) -> Option<WriterError> {
    reply.error.clone().map(|e| WriterError::Sql(Box::new(e)))
}

fn default_data_path(url: &str) -> String {
    let base = if url.contains("://") {
        url.trim_end_matches('/').to_string()
    } else {
        std::path::absolute(url)
            .map(|p| p.to_string_lossy().trim_end_matches('/').to_string())
            .unwrap_or_else(|_| url.trim_end_matches('/').to_string())
    };
    format!("{base}.files/")
}

impl CatalogStore {
    /// Opens (creating and initialising when needed) the catalog at `url` with the system clock.
    pub async fn open(url: &str) -> Result<CatalogStore, CatalogError> {
        Self::open_with(url, CatalogOptions::default()).await
    }

    /// Opens the catalog at `url`. An empty catalog is initialised as DuckDB does at its first
    /// ATTACH ([`writer::INIT_SQL`]: the 28 `ducklake_*` tables, snapshot 0, schema `main`).
    pub async fn open_with(url: &str, opts: CatalogOptions) -> Result<CatalogStore, CatalogError> {
        let store = Store::open(url, StoreOptions::default()).await?;
        let engine = match Engine::open(&store.reader()) {
            Ok(e) => e,
            Err(e) => {
                let _ = store.close().await;
                return Err(WriterError::Corrupt(format!("cannot load catalog: {e}")).into());
            }
        };
        let cs = CatalogStore {
            engine: Mutex::new(engine),
            store,
            clock: opts.clock,
            commit_lock: tokio::sync::Mutex::new(()),
            latest: Mutex::new(Counters::default()),
        };
        let data_path = opts.data_path.unwrap_or_else(|| default_data_path(url));
        if let Err(e) = cs.init_if_needed(&data_path, &opts.created_by).await {
            let _ = cs.store.close().await;
            return Err(e);
        }
        let counters = {
            let mut s = cs.session();
            writer::read_counters(&mut s)?
        };
        *lock(&cs.latest) = counters;
        Ok(cs)
    }

    async fn init_if_needed(&self, data_path: &str, created_by: &str) -> Result<(), CatalogError> {
        let mut s = self.session();
        let rows = s.query(writer::IS_INITIALISED_SQL)?;
        if rows
            .first()
            .and_then(|r| r.first())
            .is_some_and(Option::is_some)
        {
            return Ok(());
        }
        let main_uuid = writer::uuid_v4(&mut s);
        s.query(writer::BEGIN_SQL)?;
        for stmt in writer::init_statements(data_path, created_by, &main_uuid) {
            s.query(&stmt)?;
        }
        s.commit().await
    }

    /// Flushes and closes the store. Writers and readers must be dropped first.
    pub async fn close(&self) -> Result<(), CatalogError> {
        Ok(self.store.close().await?)
    }

    /// The store's writer epoch.
    pub fn epoch(&self) -> u64 {
        self.store.epoch()
    }

    fn session(&self) -> Session<'_> {
        let sid = lock(&self.engine).open_session("rocklake", "lake");
        Session { cs: self, sid }
    }

    /// Step 1 of the writer protocol: opens a write transaction (REPEATABLE READ, as DuckLake)
    /// and loads the latest snapshot's counters from the catalog.
    pub fn begin_write(&self) -> Result<CatalogWriter<'_>, CatalogError> {
        let mut session = self.session();
        let inner = writer::CatalogWriter::begin(&mut session)?;
        Ok(CatalogWriter { session, inner })
    }

    /// Step 4 of the writer protocol: records a committed writer's counters, so that
    /// [`CatalogStore::read_latest`] and [`CatalogStore::latest`] see its snapshot.
    pub fn commit_writer(&self, result: CommitResult) {
        let mut latest = lock(&self.latest);
        if result.snapshot_id.0 >= latest.snapshot_id {
            *latest = result.counters();
        }
    }

    /// The latest snapshot's counters as reported through [`CatalogStore::commit_writer`].
    pub fn latest(&self) -> Counters {
        *lock(&self.latest)
    }

    /// A reader of the catalog as of DuckLake snapshot `snapshot` (which must exist).
    pub fn read_at(
        &self,
        snapshot: impl Into<SnapshotId>,
    ) -> Result<CatalogReader<'_>, CatalogError> {
        let snapshot = snapshot.into();
        let mut session = self.session();
        let rows = session.query(&format!(
            "SELECT snapshot_id FROM \"public\".ducklake_snapshot WHERE snapshot_id = {}",
            snapshot.0
        ))?;
        if rows.is_empty() {
            return Err(CatalogError::NoSuchSnapshot {
                requested: snapshot.0,
            });
        }
        Ok(CatalogReader { session, snapshot })
    }

    /// A reader at the latest snapshot reported through [`CatalogStore::commit_writer`].
    pub fn read_latest(&self) -> Result<CatalogReader<'_>, CatalogError> {
        let s = self.latest().snapshot_id;
        self.read_at(SnapshotId(s))
    }
}

/// One engine session; closing it (on drop) rolls back whatever transaction it has open.
struct Session<'a> {
    cs: &'a CatalogStore,
    sid: SessionId,
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        lock(&self.cs.engine).close_session(self.sid);
    }
}

impl Session<'_> {
    /// Sends `COMMIT` and makes the resulting batch durable, in commit order.
    async fn commit(&mut self) -> Result<(), CatalogError> {
        let cs = self.cs;
        let _turn = cs.commit_lock.lock().await;
        let now = cs.clock.now_pg_micros();
        let mut reply = lock(&cs.engine).query(&cs.store.reader(), self.sid, "COMMIT", now);
        let mut outputs = std::mem::take(&mut reply.outputs);
        while let Some(batch) = reply.commit.take() {
            let outcome = cs.store.commit(&batch).await.map_err(|e| CommitFailure {
                fenced: matches!(e, StoreError::Fenced { .. }),
                transient: matches!(
                    e,
                    StoreError::Unavailable {
                        transient: true,
                        ..
                    }
                ),
                message: e.to_string(),
            });
            reply = lock(&cs.engine).commit_finished(&cs.store.reader(), self.sid, outcome);
            outputs.append(&mut reply.outputs);
        }
        if let Some(e) = sql_error(&reply) {
            return Err(e.into());
        }
        // COMMIT of a failed transaction block answers ROLLBACK, without an error.
        let committed = outputs
            .iter()
            .any(|o| matches!(o, Output::Command { tag } if tag == "COMMIT"));
        if !committed {
            return Err(WriterError::Sql(Box::new(rocklake_core::api::PgError::new(
                "25P02",
                "the write transaction was rolled back",
            )))
            .into());
        }
        Ok(())
    }
}

impl WriterHost for Session<'_> {
    fn query(&mut self, sql: &str) -> Result<Rows, WriterError> {
        let cs = self.cs;
        let now = cs.clock.now_pg_micros();
        let reader = cs.store.reader();
        let mut engine = lock(&cs.engine);
        let mut reply = engine.query(&reader, self.sid, sql, now);
        if reply.commit.is_some() {
            // Only reads and statements inside an explicit transaction come through here; a
            // commit needs the async path (Session::commit). Refuse it: nothing is written.
            reply = engine.commit_finished(
                &reader,
                self.sid,
                Err(CommitFailure {
                    fenced: false,
                    transient: false,
                    message: "commit outside CatalogWriter::create_snapshot".into(),
                }),
            );
            return Err(sql_error(&reply).unwrap_or_else(|| {
                WriterError::Invalid("statement tried to commit outside create_snapshot".into())
            }));
        }
        if let Some(e) = sql_error(&reply) {
            return Err(e);
        }
        debug_assert!(reply.status != TxnStatus::Failed);
        Ok(rocklake_core::api::last_text_rows(&reply.outputs))
    }

    fn random_bytes(&mut self) -> [u8; 16] {
        let mut b = [0u8; 16];
        if getrandom::fill(&mut b).is_err() {
            // No OS entropy: fall back on the clock (uniqueness within the catalog is all
            // DuckLake needs from these UUIDs).
            let t = self.cs.clock.now_pg_micros().to_le_bytes();
            b[..8].copy_from_slice(&t);
            b[8..16].copy_from_slice(&self.sid.0.to_le_bytes());
        }
        b
    }

    fn now_unix_millis(&mut self) -> u64 {
        let us = self.cs.clock.now_pg_micros() + PG_EPOCH_UNIX_MICROS;
        (us / 1000).max(0) as u64
    }
}

/// A write in progress (spec step 2). Dropping it without [`CatalogWriter::create_snapshot`]
/// rolls its transaction back: nothing of it reaches the store.
pub struct CatalogWriter<'a> {
    session: Session<'a>,
    inner: writer::CatalogWriter,
}

impl CatalogWriter<'_> {
    /// The counters of the snapshot this writer started from.
    pub fn base(&self) -> Counters {
        self.inner.base()
    }
    /// The snapshot id this writer will commit.
    pub fn snapshot_id(&self) -> SnapshotId {
        self.inner.snapshot_id()
    }
    pub fn create_schema(&mut self, name: &str) -> Result<u64, CatalogError> {
        Ok(self.inner.create_schema(&mut self.session, name)?)
    }
    pub fn create_table(
        &mut self,
        schema: &str,
        name: &str,
        columns: &[ColumnDef],
    ) -> Result<u64, CatalogError> {
        Ok(self
            .inner
            .create_table(&mut self.session, schema, name, columns)?)
    }
    pub fn create_view(
        &mut self,
        schema: &str,
        name: &str,
        sql: &str,
    ) -> Result<u64, CatalogError> {
        Ok(self
            .inner
            .create_view(&mut self.session, schema, name, sql)?)
    }
    pub fn drop_table(&mut self, schema: &str, name: &str) -> Result<(), CatalogError> {
        Ok(self.inner.drop_table(&mut self.session, schema, name)?)
    }
    pub fn drop_column(
        &mut self,
        schema: &str,
        table: &str,
        column: &str,
    ) -> Result<(), CatalogError> {
        Ok(self
            .inner
            .drop_column(&mut self.session, schema, table, column)?)
    }
    pub fn find_table_schema_id(
        &mut self,
        schema: &str,
        table: &str,
    ) -> Result<Option<TableRef>, CatalogError> {
        Ok(self
            .inner
            .find_table_schema_id(&mut self.session, schema, table)?)
    }
    pub fn find_column_table_id(
        &mut self,
        schema: &str,
        table: &str,
        column: &str,
    ) -> Result<Option<ColumnRef>, CatalogError> {
        Ok(self
            .inner
            .find_column_table_id(&mut self.session, schema, table, column)?)
    }

    /// Step 3: writes the staged statements, the `ducklake_snapshot` row and the
    /// `ducklake_snapshot_changes` row, then `COMMIT`: one transaction, one commit batch. Pass
    /// the result to [`CatalogStore::commit_writer`].
    pub async fn create_snapshot(
        mut self,
        author: Option<&str>,
        comment: Option<&str>,
    ) -> Result<CommitResult, CatalogError> {
        let prepared = self.inner.finish(author, comment)?;
        self.session.query(&prepared.statements)?;
        self.session.commit().await?;
        Ok(prepared.commit)
    }
}

/// A schema visible at a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaInfo {
    pub schema_id: u64,
    pub name: String,
}

/// A table (or view) visible at a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    pub table_id: u64,
    pub schema_id: u64,
    pub schema: String,
    pub name: String,
}

/// A top-level column visible at a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnInfo {
    pub column_id: u64,
    pub name: String,
    /// DuckLake type name (`int64`, `varchar`, ...).
    pub ty: String,
    pub nullable: bool,
}

/// The catalog as of one DuckLake snapshot: rows with
/// `begin_snapshot <= s AND (end_snapshot IS NULL OR end_snapshot > s)`.
pub struct CatalogReader<'a> {
    session: Session<'a>,
    snapshot: SnapshotId,
}

impl CatalogReader<'_> {
    pub fn snapshot_id(&self) -> SnapshotId {
        self.snapshot
    }

    fn visible(&self, alias: &str) -> String {
        let s = self.snapshot.0;
        format!("{alias}.begin_snapshot <= {s} AND ({alias}.end_snapshot IS NULL OR {alias}.end_snapshot > {s})")
    }

    pub fn schemas(&mut self) -> Result<Vec<SchemaInfo>, CatalogError> {
        let sql = format!(
            "SELECT s.schema_id, s.schema_name FROM \"public\".ducklake_schema s WHERE {} ORDER BY s.schema_id",
            self.visible("s")
        );
        self.session
            .query(&sql)?
            .iter()
            .map(|r| {
                Ok(SchemaInfo {
                    schema_id: num(r, 0)?,
                    name: text(r, 1)?,
                })
            })
            .collect()
    }

    fn relations(
        &mut self,
        table: &str,
        id: &str,
        name: &str,
    ) -> Result<Vec<TableInfo>, CatalogError> {
        let sql = format!(
            "SELECT t.{id}, t.schema_id, s.schema_name, t.{name} FROM \"public\".{table} t JOIN \"public\".ducklake_schema s ON s.schema_id = t.schema_id WHERE {} AND {} ORDER BY t.{id}",
            self.visible("t"),
            self.visible("s")
        );
        self.session
            .query(&sql)?
            .iter()
            .map(|r| {
                Ok(TableInfo {
                    table_id: num(r, 0)?,
                    schema_id: num(r, 1)?,
                    schema: text(r, 2)?,
                    name: text(r, 3)?,
                })
            })
            .collect()
    }

    /// All tables visible at the snapshot, in table id order.
    pub fn tables(&mut self) -> Result<Vec<TableInfo>, CatalogError> {
        self.relations("ducklake_table", "table_id", "table_name")
    }

    /// All views visible at the snapshot, in view id order.
    pub fn views(&mut self) -> Result<Vec<TableInfo>, CatalogError> {
        self.relations("ducklake_view", "view_id", "view_name")
    }

    /// The table `schema.name` visible at the snapshot.
    pub fn table(&mut self, schema: &str, name: &str) -> Result<Option<TableInfo>, CatalogError> {
        Ok(self
            .tables()?
            .into_iter()
            .find(|t| t.schema == schema && t.name == name))
    }

    /// The top-level columns of `schema.table` at the snapshot, in column order (`None`: no such
    /// table at the snapshot).
    pub fn columns(
        &mut self,
        schema: &str,
        table: &str,
    ) -> Result<Option<Vec<ColumnInfo>>, CatalogError> {
        let Some(t) = self.table(schema, table)? else {
            return Ok(None);
        };
        let sql = format!(
            "SELECT c.column_id, c.column_name, c.column_type, c.nulls_allowed FROM \"public\".ducklake_column c WHERE c.table_id = {} AND c.parent_column IS NULL AND {} ORDER BY c.column_order",
            t.table_id,
            self.visible("c")
        );
        let cols = self
            .session
            .query(&sql)?
            .iter()
            .map(|r| {
                Ok(ColumnInfo {
                    column_id: num(r, 0)?,
                    name: text(r, 1)?,
                    ty: text(r, 2)?,
                    nullable: text(r, 3)? == "t",
                })
            })
            .collect::<Result<Vec<_>, CatalogError>>()?;
        Ok(Some(cols))
    }
}

fn text(row: &[Option<String>], i: usize) -> Result<String, CatalogError> {
    row.get(i)
        .and_then(Clone::clone)
        .ok_or_else(|| WriterError::Corrupt(format!("column {i} of a catalog row is NULL")).into())
}

fn num(row: &[Option<String>], i: usize) -> Result<u64, CatalogError> {
    let s = text(row, i)?;
    s.parse()
        .map_err(|_| WriterError::Corrupt(format!("expected an integer, got {s:?}")).into())
}
