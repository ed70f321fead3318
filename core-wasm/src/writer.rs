//! The typed DuckLake catalog writer: stages catalog mutations (create schema / table / view,
//! drop table / column) as exactly the SQL statements DuckDB's ducklake extension (catalog
//! format 1.0, DuckDB 1.5.5) sends to a PostgreSQL metadata catalog, and commits them with the
//! `ducklake_snapshot` + `ducklake_snapshot_changes` rows as one transaction.
//!
//! The writer is pure: it reads the catalog and runs its statements through [`WriterHost`],
//! which the host implements on top of an [`crate::Engine`] session (or any PostgreSQL
//! connection). Randomness (UUIDs) and time also come from the host.
//!
//! Statement shapes, counter bookkeeping and `changes_made` texts were taken from the capture
//! `statements-pg155.jsonl.gz` (steps `create_schema`, `create_table_events`, `create_view`,
//! `alter_drop_column`, `drop_table`); the unit tests below compare against those strings.
//!
//! Protocol (see the spec's "Writer Protocol State Machine"):
//! 1. [`CatalogWriter::begin`]: `BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ`, then the
//!    latest snapshot's counters (snapshot_id, schema_version, next_catalog_id, next_file_id).
//! 2. Mutations resolve ids from live rows (`end_snapshot IS NULL`) and stage statements.
//! 3. [`CatalogWriter::finish`] renders one query string: the `ducklake_snapshot` row, the staged
//!    statements and the `ducklake_snapshot_changes` row; the host sends it, then `COMMIT` (one
//!    commit batch). [`CatalogWriter::create_snapshot`] does both for synchronous hosts.

use std::fmt::Write as _;
use std::ops::Deref;

use crate::api::PgError;

/// DuckLake's catalog initialisation (the 28 `ducklake_*` tables and the initial rows), as
/// DuckDB performs it at the first ATTACH. See the header of the file for its provenance.
pub const INIT_SQL: &str = include_str!("ducklake_init.sql");

/// How DuckLake opens its write transaction.
pub const BEGIN_SQL: &str = "BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ";

/// How DuckLake reads the latest snapshot's counters at the start of a write (verbatim).
pub const COUNTERS_SQL: &str = "SELECT snapshot_id, schema_version, next_catalog_id, next_file_id\n\t\t FROM \"public\".ducklake_snapshot WHERE snapshot_id = (\n\t\t     SELECT MAX(snapshot_id) FROM \"public\".ducklake_snapshot\n\t\t )";

/// Answers whether the catalog tables exist (NULL when they do not).
pub const IS_INITIALISED_SQL: &str = "SELECT to_regclass('public.ducklake_snapshot')";

/// A DuckLake snapshot id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SnapshotId(pub u64);

impl std::fmt::Display for SnapshotId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The counters of one `ducklake_snapshot` row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    pub snapshot_id: u64,
    pub schema_version: u64,
    pub next_catalog_id: u64,
    pub next_file_id: u64,
}

/// What a committed writer produced. It must be handed to the store
/// (`CatalogStore::commit_writer`) so its in-memory counters follow the catalog.
#[must_use = "CommitResult must be passed to CatalogStore::commit_writer(result)"]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitResult {
    pub snapshot_id: SnapshotId,
    next_snapshot_id: u64,
    next_catalog_id: u64,
    next_file_id: u64,
    schema_version: u64,
}

impl CommitResult {
    /// The snapshot id the next writer will commit.
    pub fn next_snapshot_id(&self) -> u64 {
        self.next_snapshot_id
    }
    pub fn next_catalog_id(&self) -> u64 {
        self.next_catalog_id
    }
    pub fn next_file_id(&self) -> u64 {
        self.next_file_id
    }
    pub fn schema_version(&self) -> u64 {
        self.schema_version
    }
    /// The counters of the committed `ducklake_snapshot` row.
    pub fn counters(&self) -> Counters {
        Counters {
            snapshot_id: self.snapshot_id.0,
            schema_version: self.schema_version,
            next_catalog_id: self.next_catalog_id,
            next_file_id: self.next_file_id,
        }
    }
}

impl Deref for CommitResult {
    type Target = SnapshotId;
    fn deref(&self) -> &SnapshotId {
        &self.snapshot_id
    }
}

impl From<CommitResult> for SnapshotId {
    fn from(c: CommitResult) -> SnapshotId {
        c.snapshot_id
    }
}

/// Why a writer operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriterError {
    /// A statement failed (or the commit was rejected: 23505 / 40001 when another writer
    /// committed first, 57P04 when fenced).
    #[error("{0}")]
    Sql(Box<PgError>),
    #[error("the DuckLake catalog is not initialised (no ducklake_snapshot row)")]
    NotInitialised,
    #[error("schema \"{0}\" does not exist")]
    NoSuchSchema(String),
    #[error("table \"{schema}\".\"{table}\" does not exist")]
    NoSuchTable { schema: String, table: String },
    #[error("column \"{column}\" of table \"{schema}\".\"{table}\" does not exist")]
    NoSuchColumn {
        schema: String,
        table: String,
        column: String,
    },
    #[error("{0} already exists")]
    AlreadyExists(String),
    #[error("invalid request: {0}")]
    Invalid(String),
    #[error("nothing to commit: the writer staged no change")]
    NothingToCommit,
    #[error("unexpected catalog data: {0}")]
    Corrupt(String),
}

/// A text result set: one `Vec` per row, `None` for SQL NULL.
pub type Rows = Vec<Vec<Option<String>>>;

/// What the writer needs from its host: one session of the catalog (statements run in order in
/// the same transaction), entropy and the wall clock.
pub trait WriterHost {
    /// Runs a simple-query string (possibly several statements). Returns the rows of the last
    /// result set (empty when no statement returned rows); any error fails the call.
    fn query(&mut self, sql: &str) -> Result<Rows, WriterError>;
    /// 16 random bytes (for UUIDs).
    fn random_bytes(&mut self) -> [u8; 16];
    /// Milliseconds since the Unix epoch (for UUIDv7).
    fn now_unix_millis(&mut self) -> u64;
}

/// One column of a new table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDef {
    pub name: String,
    /// DuckLake type name (`int64`, `varchar`, `decimal(10,2)`, ...).
    pub ty: String,
    pub nullable: bool,
}

impl ColumnDef {
    /// A nullable column. `ty` is a DuckDB/SQL type name (`BIGINT`, `VARCHAR`, `TIMESTAMPTZ`,
    /// `DECIMAL(10,2)`, ...) or a DuckLake type name (`int64`, `varchar`, ...).
    pub fn new(name: &str, ty: &str) -> ColumnDef {
        ColumnDef {
            name: name.to_string(),
            ty: ducklake_type(ty).unwrap_or_else(|| ty.trim().to_ascii_lowercase()),
            nullable: true,
        }
    }
    pub fn not_null(mut self) -> ColumnDef {
        self.nullable = false;
        self
    }
}

/// A live table: its schema and its own id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableRef {
    pub schema_id: u64,
    pub table_id: u64,
}

/// A live column: its table and its own id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnRef {
    pub schema_id: u64,
    pub table_id: u64,
    pub column_id: u64,
}

#[derive(Debug, Clone)]
struct NewSchema {
    id: u64,
    uuid: String,
    name: String,
}

#[derive(Debug, Clone)]
struct NewTable {
    id: u64,
    uuid: String,
    schema_id: u64,
    schema: String,
    name: String,
    columns: Vec<ColumnDef>,
}

#[derive(Debug, Clone)]
struct NewView {
    id: u64,
    uuid: String,
    schema_id: u64,
    schema: String,
    name: String,
    sql: String,
}

/// A table whose columns changed: the dropped column ids, and the live top-level columns
/// (name, DuckLake type) after the change.
#[derive(Debug, Clone)]
struct AlteredTable {
    table_id: u64,
    dropped: Vec<u64>,
    remaining: Vec<(u64, String, String)>,
}

/// The rendered commit of a writer: the statements (one query string, without `COMMIT`) and
/// the result to report once `COMMIT` succeeded.
#[derive(Debug, Clone)]
pub struct PreparedSnapshot {
    pub statements: String,
    pub commit: CommitResult,
}

/// Stages catalog mutations for one DuckLake snapshot. Created by [`CatalogWriter::begin`]
/// inside an open transaction of the host's session; dropping it without committing must
/// roll that transaction back (the host's job), which leaves no trace.
#[derive(Debug)]
pub struct CatalogWriter {
    base: Counters,
    next_catalog_id: u64,
    new_schemas: Vec<NewSchema>,
    new_tables: Vec<NewTable>,
    new_views: Vec<NewView>,
    dropped_tables: Vec<u64>,
    altered: Vec<AlteredTable>,
}

impl CatalogWriter {
    /// Opens the write transaction and reads the latest snapshot's counters, as DuckLake does.
    pub fn begin(host: &mut dyn WriterHost) -> Result<CatalogWriter, WriterError> {
        host.query(BEGIN_SQL)?;
        let base = read_counters(host)?;
        Ok(CatalogWriter {
            base,
            next_catalog_id: base.next_catalog_id,
            new_schemas: vec![],
            new_tables: vec![],
            new_views: vec![],
            dropped_tables: vec![],
            altered: vec![],
        })
    }

    /// The counters of the snapshot this writer started from.
    pub fn base(&self) -> Counters {
        self.base
    }

    /// The snapshot id this writer will commit.
    pub fn snapshot_id(&self) -> SnapshotId {
        SnapshotId(self.base.snapshot_id + 1)
    }

    /// True when nothing is staged.
    pub fn is_empty(&self) -> bool {
        self.new_schemas.is_empty()
            && self.new_tables.is_empty()
            && self.new_views.is_empty()
            && self.dropped_tables.is_empty()
            && self.altered.is_empty()
    }

    fn allocate_catalog_id(&mut self) -> u64 {
        let id = self.next_catalog_id;
        self.next_catalog_id += 1;
        id
    }

    /// The live schema `name`: staged in this writer, or committed (`end_snapshot IS NULL`).
    pub fn find_schema_id(
        &self,
        host: &mut dyn WriterHost,
        name: &str,
    ) -> Result<Option<u64>, WriterError> {
        if let Some(s) = self.new_schemas.iter().find(|s| s.name == name) {
            return Ok(Some(s.id));
        }
        let rows = host.query(&format!(
            "SELECT schema_id FROM \"public\".ducklake_schema WHERE schema_name = {} AND end_snapshot IS NULL",
            quote_literal(name)
        ))?;
        match rows.first() {
            Some(row) => Ok(Some(cell_u64(row, 0)?)),
            None => Ok(None),
        }
    }

    /// Resolves the live table `schema.table` to its schema id and table id, from the live
    /// rows of `ducklake_schema` / `ducklake_table` (or this writer's staged tables). Tables
    /// dropped by this writer are not found.
    pub fn find_table_schema_id(
        &self,
        host: &mut dyn WriterHost,
        schema: &str,
        table: &str,
    ) -> Result<Option<TableRef>, WriterError> {
        if let Some(t) = self
            .new_tables
            .iter()
            .find(|t| t.schema == schema && t.name == table)
        {
            return Ok(Some(TableRef {
                schema_id: t.schema_id,
                table_id: t.id,
            }));
        }
        let Some(schema_id) = self.find_schema_id(host, schema)? else {
            return Ok(None);
        };
        let rows = host.query(&format!(
            "SELECT table_id FROM \"public\".ducklake_table WHERE schema_id = {schema_id} AND table_name = {} AND end_snapshot IS NULL",
            quote_literal(table)
        ))?;
        for row in &rows {
            let table_id = cell_u64(row, 0)?;
            if !self.dropped_tables.contains(&table_id) {
                return Ok(Some(TableRef {
                    schema_id,
                    table_id,
                }));
            }
        }
        Ok(None)
    }

    /// Resolves the live column `schema.table.column` from the live rows of `ducklake_column`.
    /// Only committed tables are searched (columns of a table staged by this writer have no
    /// catalog rows yet).
    pub fn find_column_table_id(
        &self,
        host: &mut dyn WriterHost,
        schema: &str,
        table: &str,
        column: &str,
    ) -> Result<Option<ColumnRef>, WriterError> {
        let Some(t) = self.find_table_schema_id(host, schema, table)? else {
            return Ok(None);
        };
        if let Some(nt) = self.new_tables.iter().find(|n| n.id == t.table_id) {
            return Ok(nt
                .columns
                .iter()
                .position(|c| c.name == column)
                .map(|i| ColumnRef {
                    schema_id: t.schema_id,
                    table_id: t.table_id,
                    column_id: i as u64 + 1,
                }));
        }
        let live = self.live_columns(host, t.table_id)?;
        Ok(live
            .iter()
            .find(|(_, name, _)| name == column)
            .map(|(id, _, _)| ColumnRef {
                schema_id: t.schema_id,
                table_id: t.table_id,
                column_id: *id,
            }))
    }

    /// Live top-level columns of a committed table, in column order, minus the ones this
    /// writer dropped: (column_id, name, DuckLake type).
    fn live_columns(
        &self,
        host: &mut dyn WriterHost,
        table_id: u64,
    ) -> Result<Vec<(u64, String, String)>, WriterError> {
        if let Some(a) = self.altered.iter().find(|a| a.table_id == table_id) {
            return Ok(a.remaining.clone());
        }
        let rows = host.query(&format!(
            "SELECT column_id, column_name, column_type FROM \"public\".ducklake_column WHERE table_id = {table_id} AND end_snapshot IS NULL AND parent_column IS NULL ORDER BY column_order"
        ))?;
        rows.iter()
            .map(|r| Ok((cell_u64(r, 0)?, cell_str(r, 1)?, cell_str(r, 2)?)))
            .collect()
    }

    /// Whether a live table or view named `name` exists in schema `schema_id`.
    fn relation_exists(
        &self,
        host: &mut dyn WriterHost,
        schema_id: u64,
        name: &str,
    ) -> Result<bool, WriterError> {
        if self
            .new_tables
            .iter()
            .any(|t| t.schema_id == schema_id && t.name == name)
            || self
                .new_views
                .iter()
                .any(|v| v.schema_id == schema_id && v.name == name)
        {
            return Ok(true);
        }
        let tables = host.query(&format!(
            "SELECT table_id FROM \"public\".ducklake_table WHERE schema_id = {schema_id} AND table_name = {} AND end_snapshot IS NULL",
            quote_literal(name)
        ))?;
        for row in &tables {
            if !self.dropped_tables.contains(&cell_u64(row, 0)?) {
                return Ok(true);
            }
        }
        let views = host.query(&format!(
            "SELECT view_id FROM \"public\".ducklake_view WHERE schema_id = {schema_id} AND view_name = {} AND end_snapshot IS NULL",
            quote_literal(name)
        ))?;
        Ok(!views.is_empty())
    }

    /// `CREATE SCHEMA name`. Returns the new schema id (taken from `next_catalog_id`).
    pub fn create_schema(
        &mut self,
        host: &mut dyn WriterHost,
        name: &str,
    ) -> Result<u64, WriterError> {
        check_name("schema", name)?;
        if self.find_schema_id(host, name)?.is_some() {
            return Err(WriterError::AlreadyExists(format!("schema \"{name}\"")));
        }
        let uuid = uuid_v7(host);
        let id = self.allocate_catalog_id();
        self.new_schemas.push(NewSchema {
            id,
            uuid,
            name: name.to_string(),
        });
        Ok(id)
    }

    /// `CREATE TABLE schema.name (columns)`. Returns the new table id (from `next_catalog_id`);
    /// column ids are 1..=n within the table, as in DuckLake.
    pub fn create_table(
        &mut self,
        host: &mut dyn WriterHost,
        schema: &str,
        name: &str,
        columns: &[ColumnDef],
    ) -> Result<u64, WriterError> {
        check_name("table", name)?;
        if columns.is_empty() {
            return Err(WriterError::Invalid(format!(
                "table \"{name}\" must have at least one column"
            )));
        }
        for (i, c) in columns.iter().enumerate() {
            check_name("column", &c.name)?;
            if matches!(c.ty.as_str(), "struct" | "list" | "map")
                || inlined_column_type(&c.ty).is_none()
            {
                return Err(WriterError::Invalid(format!(
                    "column \"{}\": unsupported DuckLake type \"{}\"",
                    c.name, c.ty
                )));
            }
            if columns[..i].iter().any(|o| o.name == c.name) {
                return Err(WriterError::AlreadyExists(format!("column \"{}\"", c.name)));
            }
        }
        let schema_id = self
            .find_schema_id(host, schema)?
            .ok_or_else(|| WriterError::NoSuchSchema(schema.to_string()))?;
        if self.relation_exists(host, schema_id, name)? {
            return Err(WriterError::AlreadyExists(format!(
                "table \"{schema}\".\"{name}\""
            )));
        }
        let uuid = uuid_v7(host);
        let id = self.allocate_catalog_id();
        self.new_tables.push(NewTable {
            id,
            uuid,
            schema_id,
            schema: schema.to_string(),
            name: name.to_string(),
            columns: columns.to_vec(),
        });
        Ok(id)
    }

    /// `CREATE VIEW schema.name AS sql`. `sql` is stored as given (DuckDB stores the view's
    /// SELECT with the catalog name replaced by `{DUCKLAKE_CATALOG}`). Returns the view id.
    pub fn create_view(
        &mut self,
        host: &mut dyn WriterHost,
        schema: &str,
        name: &str,
        sql: &str,
    ) -> Result<u64, WriterError> {
        check_name("view", name)?;
        let schema_id = self
            .find_schema_id(host, schema)?
            .ok_or_else(|| WriterError::NoSuchSchema(schema.to_string()))?;
        if self.relation_exists(host, schema_id, name)? {
            return Err(WriterError::AlreadyExists(format!(
                "view \"{schema}\".\"{name}\""
            )));
        }
        let uuid = uuid_v4(host);
        let id = self.allocate_catalog_id();
        self.new_views.push(NewView {
            id,
            uuid,
            schema_id,
            schema: schema.to_string(),
            name: name.to_string(),
            sql: sql.to_string(),
        });
        Ok(id)
    }

    /// `DROP TABLE schema.name`: ends the table, its columns, tags, files, partition and sort
    /// info at the new snapshot. A table created by this writer is simply unstaged.
    pub fn drop_table(
        &mut self,
        host: &mut dyn WriterHost,
        schema: &str,
        name: &str,
    ) -> Result<(), WriterError> {
        if let Some(i) = self
            .new_tables
            .iter()
            .position(|t| t.schema == schema && t.name == name)
        {
            self.new_tables.remove(i);
            return Ok(());
        }
        let t = self
            .find_table_schema_id(host, schema, name)?
            .ok_or_else(|| WriterError::NoSuchTable {
                schema: schema.to_string(),
                table: name.to_string(),
            })?;
        self.altered.retain(|a| a.table_id != t.table_id);
        self.dropped_tables.push(t.table_id);
        Ok(())
    }

    /// `ALTER TABLE schema.table DROP COLUMN column` (top-level columns).
    pub fn drop_column(
        &mut self,
        host: &mut dyn WriterHost,
        schema: &str,
        table: &str,
        column: &str,
    ) -> Result<(), WriterError> {
        let c = self
            .find_column_table_id(host, schema, table, column)?
            .ok_or_else(|| WriterError::NoSuchColumn {
                schema: schema.to_string(),
                table: table.to_string(),
                column: column.to_string(),
            })?;
        if self.new_tables.iter().any(|t| t.id == c.table_id) {
            return Err(WriterError::Invalid(format!(
                "table \"{schema}\".\"{table}\" was created by this writer: create it without \"{column}\" instead"
            )));
        }
        let mut remaining = self.live_columns(host, c.table_id)?;
        if remaining.len() <= 1 {
            return Err(WriterError::Invalid(format!(
                "cannot drop column \"{column}\": table \"{schema}\".\"{table}\" has no other column"
            )));
        }
        remaining.retain(|(id, _, _)| *id != c.column_id);
        match self.altered.iter_mut().find(|a| a.table_id == c.table_id) {
            Some(a) => {
                a.dropped.push(c.column_id);
                a.remaining = remaining;
            }
            None => self.altered.push(AlteredTable {
                table_id: c.table_id,
                dropped: vec![c.column_id],
                remaining,
            }),
        }
        Ok(())
    }

    /// Renders the commit: the `ducklake_snapshot` row, the staged statements in DuckLake's
    /// order, and the `ducklake_snapshot_changes` row, as one query string (without `COMMIT`).
    pub fn finish(
        self,
        author: Option<&str>,
        comment: Option<&str>,
    ) -> Result<PreparedSnapshot, WriterError> {
        if self.is_empty() {
            return Err(WriterError::NothingToCommit);
        }
        let snap = self.base.snapshot_id + 1;
        // Every change this writer can stage alters the schema: one bump per snapshot.
        let schema_version = self.base.schema_version + 1;
        let next_catalog_id = self.next_catalog_id;
        let next_file_id = self.base.next_file_id;
        let mut stmts: Vec<String> = Vec::new();
        let mut changes: Vec<String> = Vec::new();
        stmts.push(format!(
            "INSERT INTO \"public\".ducklake_snapshot VALUES ({snap}, NOW(), {schema_version}, {next_catalog_id}, {next_file_id})"
        ));
        if !self.dropped_tables.is_empty() {
            let ids = join(self.dropped_tables.iter().map(u64::to_string), ", ");
            for (table, key) in [
                ("ducklake_table", "table_id"),
                ("ducklake_partition_info", "table_id"),
                ("ducklake_column", "table_id"),
                ("ducklake_column_tag", "table_id"),
                ("ducklake_data_file", "table_id"),
                ("ducklake_delete_file", "table_id"),
                ("ducklake_tag", "object_id"),
                ("ducklake_sort_info", "table_id"),
            ] {
                stmts.push(format!(
                    "UPDATE \"public\".{table} SET end_snapshot = {snap} WHERE end_snapshot IS NULL AND {key} IN ({ids})"
                ));
            }
            for id in &self.dropped_tables {
                changes.push(format!("dropped_table:{id}"));
            }
        }
        if !self.new_schemas.is_empty() {
            let values = join(
                self.new_schemas.iter().map(|s| {
                    format!(
                        "({}, {}, {snap}, NULL, {}, {}, true)",
                        s.id,
                        quote_literal(&s.uuid),
                        quote_literal(&s.name),
                        quote_literal(&format!("{}/", s.name))
                    )
                }),
                ",",
            );
            stmts.push(format!(
                "INSERT INTO \"public\".ducklake_schema VALUES {values}"
            ));
            for s in &self.new_schemas {
                changes.push(format!("created_schema:{}", quote_ident_always(&s.name)));
            }
        }
        if !self.new_tables.is_empty() {
            let tables = join(
                self.new_tables.iter().map(|t| {
                    format!(
                        "({}, {}, {snap}, NULL, {}, {}, {}, true)",
                        t.id,
                        quote_literal(&t.uuid),
                        t.schema_id,
                        quote_literal(&t.name),
                        quote_literal(&format!("{}/", t.name))
                    )
                }),
                ",",
            );
            stmts.push(format!(
                "INSERT INTO \"public\".ducklake_table VALUES {tables}"
            ));
            let columns = join(
                self.new_tables.iter().flat_map(|t| {
                    t.columns.iter().enumerate().map(move |(i, c)| {
                        let cid = i + 1;
                        format!(
                            "({cid}, {snap}, NULL, {}, {cid}, {}, {}, NULL, 'NULL', {}, NULL, 'literal', 'duckdb')",
                            t.id,
                            quote_literal(&c.name),
                            quote_literal(&c.ty),
                            c.nullable
                        )
                    })
                }),
                ",",
            );
            stmts.push(format!(
                "INSERT INTO \"public\".ducklake_column VALUES {columns}"
            ));
            for t in &self.new_tables {
                changes.push(format!(
                    "created_table:{}.{}",
                    quote_ident_always(&t.schema),
                    quote_ident_always(&t.name)
                ));
            }
        }
        if !self.new_views.is_empty() {
            let views = join(
                self.new_views.iter().map(|v| {
                    format!(
                        "({}, {}, {snap}, NULL, {}, {}, 'duckdb', {}, '')",
                        v.id,
                        quote_literal(&v.uuid),
                        v.schema_id,
                        quote_literal(&v.name),
                        quote_literal(&v.sql)
                    )
                }),
                ",",
            );
            stmts.push(format!(
                "INSERT INTO \"public\".ducklake_view VALUES {views}"
            ));
            for v in &self.new_views {
                changes.push(format!(
                    "created_view:{}.{}",
                    quote_ident_always(&v.schema),
                    quote_ident_always(&v.name)
                ));
            }
        }
        if !self.altered.is_empty() {
            let pairs = join(
                self.altered.iter().flat_map(|a| {
                    a.dropped
                        .iter()
                        .map(move |cid| format!("({}, {cid})", a.table_id))
                }),
                ",",
            );
            stmts.push(format!(
                "\nWITH dropped_cols(tid, cid) AS (\nVALUES {pairs}\n)\nUPDATE \"public\".ducklake_column\nSET end_snapshot = {snap}\nFROM dropped_cols\nWHERE table_id=tid AND column_id=cid AND end_snapshot IS NULL\n"
            ));
        }
        // Data inlining is on by default in DuckLake 1.0: every new table schema gets its
        // inlined-data table, named after the table id and the schema version.
        let mut versioned: Vec<u64> = Vec::new();
        for t in &self.new_tables {
            let cols: Vec<(String, String)> = t
                .columns
                .iter()
                .map(|c| (c.name.clone(), c.ty.clone()))
                .collect();
            push_inlined_table(&mut stmts, t.id, schema_version, &cols)?;
            versioned.push(t.id);
        }
        for a in &self.altered {
            let cols: Vec<(String, String)> = a
                .remaining
                .iter()
                .map(|(_, n, ty)| (n.clone(), ty.clone()))
                .collect();
            push_inlined_table(&mut stmts, a.table_id, schema_version, &cols)?;
            versioned.push(a.table_id);
        }
        if !versioned.is_empty() {
            let rows = join(
                versioned
                    .iter()
                    .map(|tid| format!("({snap},{schema_version},{tid})")),
                ",",
            );
            stmts.push(format!(
                "INSERT INTO \"public\".ducklake_schema_versions VALUES {rows}"
            ));
        }
        for a in &self.altered {
            changes.push(format!("altered_table:{}", a.table_id));
        }
        stmts.push(format!(
            "INSERT INTO \"public\".ducklake_snapshot_changes VALUES ({snap}, {}, {}, {}, NULL)",
            quote_literal(&changes.join(",")),
            author.map_or_else(|| "NULL".to_string(), quote_literal),
            comment.map_or_else(|| "NULL".to_string(), quote_literal)
        ));
        let mut statements = String::new();
        for s in &stmts {
            statements.push_str(s);
            statements.push(';');
        }
        Ok(PreparedSnapshot {
            statements,
            commit: CommitResult {
                snapshot_id: SnapshotId(snap),
                next_snapshot_id: snap + 1,
                next_catalog_id,
                next_file_id,
                schema_version,
            },
        })
    }

    /// For synchronous hosts: renders the commit, runs it and `COMMIT` in the writer's session
    /// (the host makes the commit batch durable inside `query("COMMIT")`).
    pub fn create_snapshot(
        self,
        host: &mut dyn WriterHost,
        author: Option<&str>,
        comment: Option<&str>,
    ) -> Result<CommitResult, WriterError> {
        let prepared = self.finish(author, comment)?;
        host.query(&prepared.statements)?;
        host.query("COMMIT")?;
        Ok(prepared.commit)
    }
}

/// Reads the latest snapshot's counters ([`COUNTERS_SQL`]).
pub fn read_counters(host: &mut dyn WriterHost) -> Result<Counters, WriterError> {
    let rows = host.query(COUNTERS_SQL)?;
    let row = rows.first().ok_or(WriterError::NotInitialised)?;
    Ok(Counters {
        snapshot_id: cell_u64(row, 0)?,
        schema_version: cell_u64(row, 1)?,
        next_catalog_id: cell_u64(row, 2)?,
        next_file_id: cell_u64(row, 3)?,
    })
}

/// The initialisation script ([`INIT_SQL`] with its placeholders filled in), one statement per
/// element, without BEGIN/COMMIT. `data_path` gets a trailing `/` as DuckDB stores it.
pub fn init_statements(data_path: &str, created_by: &str, main_schema_uuid: &str) -> Vec<String> {
    let mut data_path = data_path.to_string();
    if !data_path.ends_with('/') {
        data_path.push('/');
    }
    let escape = |s: &str| s.replace('\'', "''");
    let subst = [
        ("{CREATED_BY}", escape(created_by)),
        ("{DATA_PATH}", escape(&data_path)),
        ("{MAIN_SCHEMA_UUID}", escape(main_schema_uuid)),
    ];
    INIT_SQL
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("--"))
        .map(|line| {
            // One pass, so substituted text is never substituted again.
            let mut out = String::with_capacity(line.len());
            let mut rest = line;
            'scan: while !rest.is_empty() {
                for (ph, val) in &subst {
                    if let Some(after) = rest.strip_prefix(ph) {
                        out.push_str(val);
                        rest = after;
                        continue 'scan;
                    }
                }
                let mut chars = rest.chars();
                if let Some(c) = chars.next() {
                    out.push(c);
                }
                rest = chars.as_str();
            }
            out.trim_end_matches(';').to_string()
        })
        .collect()
}

fn push_inlined_table(
    stmts: &mut Vec<String>,
    table_id: u64,
    schema_version: u64,
    columns: &[(String, String)],
) -> Result<(), WriterError> {
    let name = format!("ducklake_inlined_data_{table_id}_{schema_version}");
    stmts.push(format!(
        "INSERT INTO \"public\".ducklake_inlined_data_tables VALUES ({table_id}, '{name}', {schema_version})"
    ));
    let mut ddl = format!(
        "CREATE TABLE IF NOT EXISTS \"public\".{name}(row_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT"
    );
    for (col, ty) in columns {
        let pg = inlined_column_type(ty).ok_or_else(|| {
            WriterError::Corrupt(format!(
                "column \"{col}\" has unknown DuckLake type \"{ty}\""
            ))
        })?;
        let _ = write!(ddl, ", {} {pg}", quote_ident_optional(col));
    }
    ddl.push(')');
    stmts.push(ddl);
    Ok(())
}

/// The PostgreSQL column type DuckLake uses for a DuckLake type in an inlined-data table (as
/// seen in the `CREATE TABLE ... ducklake_inlined_data_*` statements of the capture).
pub fn inlined_column_type(ducklake: &str) -> Option<String> {
    let t = ducklake.trim().to_ascii_lowercase();
    if let Some(args) = t.strip_prefix("decimal(").and_then(|r| r.strip_suffix(')')) {
        let mut parts = args.split(',');
        let p = parts.next()?.trim().parse::<u8>().ok()?;
        let s = parts.next()?.trim().parse::<u8>().ok()?;
        if parts.next().is_some() || p == 0 || p > 38 || s > p {
            return None;
        }
        return Some(format!("DECIMAL({p},{s})"));
    }
    Some(
        match t.as_str() {
            "boolean" => "BOOLEAN",
            "int8" | "int16" => "SMALLINT",
            "int32" | "uint8" | "uint16" => "INTEGER",
            "int64" | "uint32" => "BIGINT",
            "uint64" | "int128" | "uint128" => "VARCHAR",
            "float32" => "REAL",
            "float64" => "DOUBLE PRECISION",
            "varchar" | "blob" | "json" => "BYTEA",
            "uuid" => "UUID",
            "time" => "TIME",
            "interval" => "INTERVAL",
            "date" | "timestamp" | "timestamptz" | "timestamp_ns" | "timestamp_ms"
            | "timestamp_s" | "timetz" | "struct" | "list" | "map" => "VARCHAR",
            _ => return None,
        }
        .to_string(),
    )
}

/// The DuckLake type name of a DuckDB/SQL type name (`BIGINT` -> `int64`), as DuckDB writes
/// it into `ducklake_column.column_type`. `None` for names it does not know.
pub fn ducklake_type(sql: &str) -> Option<String> {
    let t = sql.trim().to_ascii_uppercase();
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(rest) = t
        .strip_prefix("DECIMAL")
        .or_else(|| t.strip_prefix("NUMERIC"))
    {
        let rest = rest.trim();
        if rest.is_empty() {
            return Some("decimal(18,3)".into());
        }
        let args = rest.strip_prefix('(')?.strip_suffix(')')?;
        let mut parts = args.split(',').map(str::trim);
        let p: u8 = parts.next()?.parse().ok()?;
        let s: u8 = match parts.next() {
            Some(s) => s.parse().ok()?,
            None => 0,
        };
        return Some(format!("decimal({p},{s})"));
    }
    let base = t.split('(').next().unwrap_or_default().trim();
    Some(
        match base {
            "BIGINT" | "INT8" | "LONG" | "INT64" => "int64",
            "INTEGER" | "INT" | "INT4" | "SIGNED" | "INT32" => "int32",
            "SMALLINT" | "INT2" | "SHORT" | "INT16" => "int16",
            "TINYINT" | "INT1" => "int8",
            "UTINYINT" | "UINT8" => "uint8",
            "USMALLINT" | "UINT16" => "uint16",
            "UINTEGER" | "UINT32" => "uint32",
            "UBIGINT" | "UINT64" => "uint64",
            "HUGEINT" | "INT128" => "int128",
            "UHUGEINT" | "UINT128" => "uint128",
            "BOOLEAN" | "BOOL" | "LOGICAL" => "boolean",
            "FLOAT" | "REAL" | "FLOAT4" | "FLOAT32" => "float32",
            "DOUBLE" | "FLOAT8" | "FLOAT64" | "DOUBLE PRECISION" => "float64",
            "VARCHAR" | "TEXT" | "STRING" | "CHAR" | "BPCHAR" | "CHARACTER VARYING" => "varchar",
            "BLOB" | "BYTEA" | "BINARY" | "VARBINARY" => "blob",
            "UUID" => "uuid",
            "JSON" => "json",
            "DATE" => "date",
            "TIME" => "time",
            "TIMETZ" | "TIME WITH TIME ZONE" => "timetz",
            "TIMESTAMP" | "DATETIME" => "timestamp",
            "TIMESTAMPTZ" | "TIMESTAMP WITH TIME ZONE" => "timestamptz",
            "TIMESTAMP_NS" => "timestamp_ns",
            "TIMESTAMP_MS" => "timestamp_ms",
            "TIMESTAMP_S" => "timestamp_s",
            "INTERVAL" => "interval",
            _ => return None,
        }
        .to_string(),
    )
}

fn check_name(what: &str, name: &str) -> Result<(), WriterError> {
    if name.is_empty() || name.contains('\0') {
        return Err(WriterError::Invalid(format!(
            "invalid {what} name {name:?}"
        )));
    }
    Ok(())
}

fn join(items: impl Iterator<Item = String>, sep: &str) -> String {
    items.collect::<Vec<_>>().join(sep)
}

/// A SQL string literal.
pub fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// `"name"`, as DuckLake writes names into `changes_made`.
fn quote_ident_always(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// A column name as DuckDB writes it into DDL: bare when it is a lower-case identifier that
/// is not a keyword, else quoted (DuckDB's `KeywordHelper::WriteOptionallyQuoted`).
fn quote_ident_optional(s: &str) -> String {
    let simple = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if simple && !DUCKDB_KEYWORDS.split_ascii_whitespace().any(|k| k == s) {
        s.to_string()
    } else {
        quote_ident_always(s)
    }
}

fn cell(row: &[Option<String>], i: usize) -> Result<&str, WriterError> {
    row.get(i)
        .and_then(|c| c.as_deref())
        .ok_or_else(|| WriterError::Corrupt(format!("column {i} of a catalog row is NULL")))
}

fn cell_u64(row: &[Option<String>], i: usize) -> Result<u64, WriterError> {
    let s = cell(row, i)?;
    s.parse()
        .map_err(|_| WriterError::Corrupt(format!("expected a non-negative integer, got {s:?}")))
}

fn cell_str(row: &[Option<String>], i: usize) -> Result<String, WriterError> {
    cell(row, i).map(str::to_string)
}

fn format_uuid(b: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        let _ = write!(s, "{byte:02x}");
    }
    s
}

/// A time-ordered UUID (version 7), as DuckLake uses for schemas and tables.
pub fn uuid_v7(host: &mut dyn WriterHost) -> String {
    let mut b = host.random_bytes();
    let ms = host.now_unix_millis().to_be_bytes();
    b[..6].copy_from_slice(&ms[2..8]);
    b[6] = 0x70 | (b[6] & 0x0f);
    b[8] = 0x80 | (b[8] & 0x3f);
    format_uuid(&b)
}

/// A random UUID (version 4), as DuckLake uses for views and the initial `main` schema.
pub fn uuid_v4(host: &mut dyn WriterHost) -> String {
    let mut b = host.random_bytes();
    b[6] = 0x40 | (b[6] & 0x0f);
    b[8] = 0x80 | (b[8] & 0x3f);
    format_uuid(&b)
}

/// DuckDB 1.5.5's keywords (`SELECT keyword_name FROM duckdb_keywords()`), all categories:
/// DuckDB quotes an identifier in generated SQL when it is any of these.
const DUCKDB_KEYWORDS: &str = "\
abort absolute access action add admin after aggregate all also alter always analyse analyze and \
anti any array as asc asof assertion assignment asymmetric at attach attribute authorization \
backward before begin between bigint binary bit boolean both by cache call called cascade \
cascaded case cast catalog centuries century chain char character characteristics check \
checkpoint class close cluster coalesce collate collation column columns comment comments commit \
committed compression concurrently configuration conflict connection constraint constraints \
content continue conversion copy cost create cross csv cube current cursor cycle data database \
day days deallocate dec decade decades decimal declare default defaults deferrable deferred \
definer delete delimiter delimiters depends desc describe detach dictionary disable discard \
distinct do document domain double drop each else enable encoding encrypted end enum error \
escape event except exclude excluding exclusive execute exists explain export export_state \
extension extensions external extract false family fetch filter first float following for force \
foreign forward freeze from full function functions generated glob global grant granted group \
grouping grouping_id groups handler having header hold hour hours identity if ignore ilike \
immediate immutable implicit import in include including increment index indexes inherit \
inherits initially inline inner inout input insensitive insert install instead int integer \
intersect interval into invoker is isnull isolation join json key label lambda language large \
last lateral leading leakproof left level like limit listen load local location lock locked \
logged macro map mapping match matched materialized maxvalue merge method microsecond \
microseconds millennia millennium millisecond milliseconds minute minutes minvalue mode month \
months move name names national natural nchar new next no none not nothing notify notnull nowait \
null nullif nulls numeric object of off offset oids old on only operator option options or order \
ordinality others out outer over overlaps overlay overriding owned owner parallel parser partial \
partition partitioned passing password percent persistent pivot pivot_longer pivot_wider placing \
plans policy position positional pragma preceding precision prepare prepared preserve primary \
prior privileges procedural procedure program publication qualify quarter quarters quote range \
read real reassign recheck recursive ref references referencing refresh reindex relative release \
rename repeatable replace replica reset respect restart restrict returning returns revoke right \
role rollback rollup row rows rule sample savepoint schema schemas scope scroll search second \
seconds secret security select semi sequence sequences serializable server session set setof \
sets share show similar simple skip smallint snapshot some sorted source sql stable standalone \
start statement statistics stdin stdout storage stored strict strip struct subscription \
substring summarize symmetric sysid system table tables tablesample tablespace target temp \
template temporary text then ties time timestamp to trailing transaction transform treat trigger \
trim true truncate trusted try_cast type types unbounded uncommitted unencrypted union unique \
unknown unlisten unlogged unpack unpivot until update use user using vacuum valid validate \
validator value values varchar variable variadic varying verbose version view views virtual \
volatile week weeks when where whitespace window with within without work wrapper write xml \
xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot \
xmlserialize xmltable year years yes zone \
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::SessionId;
    use crate::memkv::MemKv;
    use crate::Engine;

    /// A synchronous host: the engine over an in-memory store, commits applied at once.
    struct Host {
        kv: MemKv,
        engine: Engine,
        sid: SessionId,
        now: i64,
        seed: u8,
    }

    impl Host {
        fn new() -> Host {
            let kv = MemKv::new();
            let mut engine = Engine::open(&kv).expect("open");
            let sid = engine.open_session("t", "lake");
            let mut h = Host {
                kv,
                engine,
                sid,
                now: 1_000_000,
                seed: 0,
            };
            h.query(BEGIN_SQL).expect("begin");
            for stmt in init_statements(
                "/data",
                "RockLake test",
                "e5886472-2582-49e9-903a-4d58b709c117",
            ) {
                h.query(&stmt).expect("init statement");
            }
            h.query("COMMIT").expect("commit init");
            h
        }

        fn rows(&mut self, sql: &str) -> Rows {
            self.query(sql).expect(sql)
        }
    }

    impl WriterHost for Host {
        fn query(&mut self, sql: &str) -> Result<Rows, WriterError> {
            self.now += 1;
            let mut r = self.engine.query(&self.kv, self.sid, sql, self.now);
            let mut outputs = std::mem::take(&mut r.outputs);
            while let Some(batch) = r.commit.take() {
                self.kv.apply(&batch);
                r = self.engine.commit_finished(&self.kv, self.sid, Ok(()));
                outputs.append(&mut r.outputs);
            }
            if let Some(e) = r.error {
                return Err(WriterError::Sql(Box::new(e)));
            }
            Ok(crate::api::last_text_rows(&outputs))
        }
        fn random_bytes(&mut self) -> [u8; 16] {
            self.seed = self.seed.wrapping_add(1);
            [self.seed; 16]
        }
        fn now_unix_millis(&mut self) -> u64 {
            1_700_000_000_000
        }
    }

    /// Replaces every quoted UUID literal with '<uuid>'.
    fn mask_uuids(s: &str) -> String {
        let b = s.as_bytes();
        let mut out = String::new();
        let mut i = 0;
        while i < b.len() {
            let is_uuid = i + 38 <= b.len()
                && b[i] == b'\''
                && b[i + 37] == b'\''
                && b[i + 1..i + 37].iter().enumerate().all(|(j, c)| {
                    if matches!(j, 8 | 13 | 18 | 23) {
                        *c == b'-'
                    } else {
                        c.is_ascii_hexdigit()
                    }
                });
            if is_uuid {
                out.push_str("'<uuid>'");
                i += 38;
            } else {
                out.push(b[i] as char);
                i += 1;
            }
        }
        out
    }

    fn cols(spec: &[(&str, &str)]) -> Vec<ColumnDef> {
        spec.iter().map(|(n, t)| ColumnDef::new(n, t)).collect()
    }

    fn commit(h: &mut Host, w: CatalogWriter) -> (String, CommitResult) {
        let p = w.finish(None, None).expect("finish");
        h.query(&p.statements).expect("statements");
        h.query("COMMIT").expect("commit");
        (p.statements, p.commit)
    }

    // Verbatim from statements-pg155.jsonl.gz (the Query message), UUIDs masked.
    const TRACE_CREATE_SCHEMA: &str = "INSERT INTO \"public\".ducklake_snapshot VALUES (1, NOW(), 1, 2, 0);INSERT INTO \"public\".ducklake_schema VALUES (1, '<uuid>', 1, NULL, 's1', 's1/', true);INSERT INTO \"public\".ducklake_snapshot_changes VALUES (1, 'created_schema:\"s1\"', NULL, NULL, NULL);";
    const TRACE_CREATE_TABLE_EVENTS: &str = "INSERT INTO \"public\".ducklake_snapshot VALUES (3, NOW(), 3, 4, 0);INSERT INTO \"public\".ducklake_table VALUES (3, '<uuid>', 3, NULL, 1, 'events', 'events/', true);INSERT INTO \"public\".ducklake_column VALUES (1, 3, NULL, 3, 1, 'id', 'int64', NULL, 'NULL', true, NULL, 'literal', 'duckdb'),(2, 3, NULL, 3, 2, 'who', 'varchar', NULL, 'NULL', true, NULL, 'literal', 'duckdb'),(3, 3, NULL, 3, 3, 'ts', 'timestamptz', NULL, 'NULL', true, NULL, 'literal', 'duckdb'),(4, 3, NULL, 3, 4, 'val', 'float64', NULL, 'NULL', true, NULL, 'literal', 'duckdb'),(5, 3, NULL, 3, 5, 'region', 'varchar', NULL, 'NULL', true, NULL, 'literal', 'duckdb');INSERT INTO \"public\".ducklake_inlined_data_tables VALUES (3, 'ducklake_inlined_data_3_3', 3);CREATE TABLE IF NOT EXISTS \"public\".ducklake_inlined_data_3_3(row_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, id BIGINT, who BYTEA, ts VARCHAR, val DOUBLE PRECISION, region BYTEA);INSERT INTO \"public\".ducklake_schema_versions VALUES (3,3,3);INSERT INTO \"public\".ducklake_snapshot_changes VALUES (3, 'created_table:\"s1\".\"events\"', NULL, NULL, NULL);";

    #[test]
    fn create_schema_and_table_match_the_trace() {
        let mut h = Host::new();
        let mut w = CatalogWriter::begin(&mut h).expect("begin");
        assert_eq!(
            w.base(),
            Counters {
                snapshot_id: 0,
                schema_version: 0,
                next_catalog_id: 1,
                next_file_id: 0
            }
        );
        assert_eq!(w.create_schema(&mut h, "s1").expect("schema"), 1);
        let (sql, c) = commit(&mut h, w);
        assert_eq!(mask_uuids(&sql), TRACE_CREATE_SCHEMA);
        assert_eq!(*c, SnapshotId(1));

        // snapshot 2: another table, so that "events" lands on the trace's ids
        let mut w = CatalogWriter::begin(&mut h).expect("begin");
        w.create_table(&mut h, "s1", "wide", &cols(&[("id", "BIGINT")]))
            .expect("wide");
        let _ = commit(&mut h, w);

        let mut w = CatalogWriter::begin(&mut h).expect("begin");
        let events = cols(&[
            ("id", "BIGINT"),
            ("who", "VARCHAR"),
            ("ts", "TIMESTAMPTZ"),
            ("val", "DOUBLE"),
            ("region", "VARCHAR"),
        ]);
        assert_eq!(
            w.create_table(&mut h, "s1", "events", &events).expect("t"),
            3
        );
        let (sql, c) = commit(&mut h, w);
        assert_eq!(mask_uuids(&sql), TRACE_CREATE_TABLE_EVENTS);
        assert_eq!(
            c.counters(),
            Counters {
                snapshot_id: 3,
                schema_version: 3,
                next_catalog_id: 4,
                next_file_id: 0
            }
        );

        // the rows are there, and the inlined-data table exists
        let rows = h.rows("SELECT table_id, schema_id, table_name FROM \"public\".ducklake_table WHERE end_snapshot IS NULL ORDER BY table_id");
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[1],
            vec![Some("3".into()), Some("1".into()), Some("events".into())]
        );
        let n = h.rows("SELECT count(*) FROM \"public\".ducklake_inlined_data_3_3");
        assert_eq!(n, vec![vec![Some("0".into())]]);
    }

    #[test]
    fn drop_column_view_and_drop_table_follow_ducklake() {
        let mut h = Host::new();
        let mut w = CatalogWriter::begin(&mut h).expect("begin");
        w.create_schema(&mut h, "s1").expect("schema");
        let events = cols(&[("id", "BIGINT"), ("note", "VARCHAR"), ("name", "INTEGER")]);
        let tid = w.create_table(&mut h, "s1", "events", &events).expect("t");
        let _ = commit(&mut h, w);
        assert_eq!(tid, 2);

        let mut w = CatalogWriter::begin(&mut h).expect("begin");
        let c = w
            .find_column_table_id(&mut h, "s1", "events", "note")
            .expect("find");
        assert_eq!(
            c,
            Some(ColumnRef {
                schema_id: 1,
                table_id: 2,
                column_id: 2
            })
        );
        w.drop_column(&mut h, "s1", "events", "note")
            .expect("drop column");
        let (sql, _) = commit(&mut h, w);
        // alter_drop_column of the trace, with this catalog's ids (snapshot 2, schema version 2)
        assert_eq!(sql, "INSERT INTO \"public\".ducklake_snapshot VALUES (2, NOW(), 2, 3, 0);\nWITH dropped_cols(tid, cid) AS (\nVALUES (2, 2)\n)\nUPDATE \"public\".ducklake_column\nSET end_snapshot = 2\nFROM dropped_cols\nWHERE table_id=tid AND column_id=cid AND end_snapshot IS NULL\n;INSERT INTO \"public\".ducklake_inlined_data_tables VALUES (2, 'ducklake_inlined_data_2_2', 2);CREATE TABLE IF NOT EXISTS \"public\".ducklake_inlined_data_2_2(row_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, id BIGINT, \"name\" INTEGER);INSERT INTO \"public\".ducklake_schema_versions VALUES (2,2,2);INSERT INTO \"public\".ducklake_snapshot_changes VALUES (2, 'altered_table:2', NULL, NULL, NULL);");

        let mut w = CatalogWriter::begin(&mut h).expect("begin");
        let vid = w
            .create_view(
                &mut h,
                "s1",
                "v_eu",
                "SELECT id FROM {DUCKLAKE_CATALOG}.s1.events WHERE (region = 'eu')",
            )
            .expect("view");
        assert_eq!(vid, 3);
        let (sql, _) = commit(&mut h, w);
        assert_eq!(mask_uuids(&sql), "INSERT INTO \"public\".ducklake_snapshot VALUES (3, NOW(), 3, 4, 0);INSERT INTO \"public\".ducklake_view VALUES (3, '<uuid>', 3, NULL, 1, 'v_eu', 'duckdb', 'SELECT id FROM {DUCKLAKE_CATALOG}.s1.events WHERE (region = ''eu'')', '');INSERT INTO \"public\".ducklake_snapshot_changes VALUES (3, 'created_view:\"s1\".\"v_eu\"', NULL, NULL, NULL);");

        let mut w = CatalogWriter::begin(&mut h).expect("begin");
        assert_eq!(
            w.find_table_schema_id(&mut h, "s1", "events")
                .expect("find"),
            Some(TableRef {
                schema_id: 1,
                table_id: 2
            })
        );
        w.drop_table(&mut h, "s1", "events").expect("drop");
        assert_eq!(
            w.find_table_schema_id(&mut h, "s1", "events")
                .expect("find"),
            None
        );
        let p = w.finish(Some("me"), Some("bye")).expect("finish");
        assert_eq!(p.statements, "INSERT INTO \"public\".ducklake_snapshot VALUES (4, NOW(), 4, 4, 0);UPDATE \"public\".ducklake_table SET end_snapshot = 4 WHERE end_snapshot IS NULL AND table_id IN (2);UPDATE \"public\".ducklake_partition_info SET end_snapshot = 4 WHERE end_snapshot IS NULL AND table_id IN (2);UPDATE \"public\".ducklake_column SET end_snapshot = 4 WHERE end_snapshot IS NULL AND table_id IN (2);UPDATE \"public\".ducklake_column_tag SET end_snapshot = 4 WHERE end_snapshot IS NULL AND table_id IN (2);UPDATE \"public\".ducklake_data_file SET end_snapshot = 4 WHERE end_snapshot IS NULL AND table_id IN (2);UPDATE \"public\".ducklake_delete_file SET end_snapshot = 4 WHERE end_snapshot IS NULL AND table_id IN (2);UPDATE \"public\".ducklake_tag SET end_snapshot = 4 WHERE end_snapshot IS NULL AND object_id IN (2);UPDATE \"public\".ducklake_sort_info SET end_snapshot = 4 WHERE end_snapshot IS NULL AND table_id IN (2);INSERT INTO \"public\".ducklake_snapshot_changes VALUES (4, 'dropped_table:2', 'me', 'bye', NULL);");
        h.query(&p.statements).expect("statements");
        h.query("COMMIT").expect("commit");
        let live = h.rows("SELECT count(*) FROM \"public\".ducklake_column WHERE table_id = 2 AND end_snapshot IS NULL");
        assert_eq!(live, vec![vec![Some("0".into())]]);
    }

    #[test]
    fn errors_and_rollback() {
        let mut h = Host::new();
        let mut w = CatalogWriter::begin(&mut h).expect("begin");
        assert!(matches!(
            w.create_schema(&mut h, "main"),
            Err(WriterError::AlreadyExists(_))
        ));
        assert!(matches!(
            w.create_table(&mut h, "nope", "t", &cols(&[("a", "INTEGER")])),
            Err(WriterError::NoSuchSchema(_))
        ));
        assert!(matches!(
            w.drop_table(&mut h, "main", "t"),
            Err(WriterError::NoSuchTable { .. })
        ));
        assert!(matches!(
            w.create_table(&mut h, "main", "t", &cols(&[("a", "WHATEVER")])),
            Err(WriterError::Invalid(_))
        ));
        w.create_table(&mut h, "main", "t", &cols(&[("a", "INTEGER")]))
            .expect("t");
        assert!(matches!(
            w.create_table(&mut h, "main", "t", &cols(&[("a", "INTEGER")])),
            Err(WriterError::AlreadyExists(_))
        ));
        // created then dropped in the same writer: nothing left
        w.drop_table(&mut h, "main", "t").expect("drop staged");
        assert!(w.is_empty());
        assert!(matches!(
            w.finish(None, None),
            Err(WriterError::NothingToCommit)
        ));
        h.query("ROLLBACK").expect("rollback");
        let w = CatalogWriter::begin(&mut h).expect("begin");
        assert_eq!(w.snapshot_id(), SnapshotId(1));
        h.query("ROLLBACK").expect("rollback");
    }

    #[test]
    fn names_types_and_uuids() {
        assert_eq!(quote_ident_optional("name"), "\"name\"");
        assert_eq!(quote_ident_optional("region"), "region");
        assert_eq!(quote_ident_optional("Caps"), "\"Caps\"");
        assert_eq!(
            ducklake_type("DECIMAL(10,2)").as_deref(),
            Some("decimal(10,2)")
        );
        assert_eq!(
            ducklake_type("timestamp with time zone").as_deref(),
            Some("timestamptz")
        );
        assert_eq!(
            inlined_column_type("decimal(38,10)").as_deref(),
            Some("DECIMAL(38,10)")
        );
        assert_eq!(inlined_column_type("uint64").as_deref(), Some("VARCHAR"));
        let mut h = Host::new();
        let u = uuid_v7(&mut h);
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "7");
        assert_eq!(&u[..13], "018bcfe5-6800");
        let u4 = uuid_v4(&mut h);
        assert_eq!(&u4[14..15], "4");
        let init = init_statements("/x/it's", "c", "u");
        assert_eq!(
            init.iter()
                .filter(|s| s.starts_with("CREATE TABLE"))
                .count(),
            28
        );
        assert!(init
            .iter()
            .any(|s| s.contains("('data_path', '/x/it''s/')")));
    }
}
