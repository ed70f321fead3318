//! The engine: all sessions of one catalog, the committed catalog registry, and the commit
//! protocol. The host calls it serially; it never blocks: a COMMIT suspends the request with a
//! [`CommitBatch`] that the host makes durable before calling [`Engine::commit_finished`].

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use rocklake_proto as pb;
use sqlparser::ast::Statement;

use crate::api::{CommitBatch, CommitSeq, KvRead, Output, PgError, Reply, SessionId, TxnStatus};
use crate::catalog::{Schema, Table, BUILTIN_SCHEMAS, FIRST_USER_OID, LAYOUT_THIS_COMMIT};
use crate::envelope::Envelope;
use crate::error::{DecodeError, SqlError};
use crate::keys;
use crate::parsecache::ParseCache;
use crate::txn::PendingCatalogTxn;

/// Meta key holding the newest commit sequence (read replicas watch it).
pub const META_COMMIT_SEQ: &str = "commit_seq";
const META_NEXT_TABLE_ID: &str = "next_table_id";
const META_NEXT_OID: &str = "next_oid";
const META_TUPLE_PREFIX: &str = "tuples/";
/// Sequence values by table id ([`crate::sequence::SeqValue::encode`]).
pub const META_SEQUENCE_PREFIX: &str = "sequences/";
pub const SCAN_BATCH: usize = 4096;
/// The first page of a [`visit_visible`] scan, and of each one after a seek.
const FIRST_SCAN_PAGE: usize = 32;
/// Useless versions in a row after which [`visit_visible`] seeks past the rest.
const SEEK_AFTER_SKIPS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

/// An open transaction of a session.
#[derive(Debug)]
pub struct Txn {
    /// Opened by BEGIN (as opposed to the implicit transaction of a query string).
    pub explicit: bool,
    pub isolation: Isolation,
    pub read_only: bool,
    /// Commit point of REPEATABLE READ / SERIALIZABLE, fixed at the first statement.
    pub snapshot: Option<u64>,
    /// Transaction start time (microseconds since 2000-01-01 UTC): `now()`.
    pub start_time: i64,
    pub failed: bool,
    pub pending: PendingCatalogTxn,
    /// SETs made in this transaction (kept only if it commits).
    pub settings: crate::settings::TxnSettings,
    /// Numbers the session's transactions (cursors belong to one).
    pub serial: u64,
    /// Open savepoints, oldest first.
    pub savepoints: Vec<Savepoint>,
    /// A statement has read the catalog (PostgreSQL's `FirstSnapshotSet`): the isolation
    /// level and read-write mode are fixed from then on.
    pub queried: bool,
}

/// `SAVEPOINT name`: what `ROLLBACK TO SAVEPOINT name` returns to.
#[derive(Debug)]
pub struct Savepoint {
    pub name: String,
    pub mark: crate::txn::Mark,
    pub settings: crate::settings::TxnSettings,
    /// The cursors open then (those declared later close when it is rolled back to).
    pub cursors: Vec<String>,
    /// The transaction's access mode then (`SET TRANSACTION READ ONLY` after it is undone).
    pub read_only: bool,
    /// How many sequence restarts the transaction had made then (those made since are undone
    /// when it is rolled back to).
    pub restarts: usize,
}

/// What the session does when the host reports the outcome of its commit.
#[derive(Debug)]
struct AwaitingCommit {
    seq: u64,
    /// Command tag to emit on success (`COMMIT`), or none for implicit commits.
    tag: Option<String>,
    /// The transaction's SETs, kept once the commit is durable.
    settings: crate::settings::TxnSettings,
    /// The transaction's serial (its WITH HOLD cursors go if the commit fails).
    serial: u64,
}

#[derive(Debug)]
pub struct CopyIn {
    pub table_id: u32,
    pub columns: Vec<usize>,
    /// The format and its options.
    pub spec: crate::copyformat::CopySpec,
    /// Per COPY column: `FORCE_NOT_NULL` / `FORCE_NULL` name it (CSV).
    pub force_not_null: Vec<bool>,
    pub force_null: Vec<bool>,
    /// `WHERE`: rows it does not accept are not inserted.
    pub filter: Option<sqlparser::ast::Expr>,
    pub buf: Vec<u8>,
}

#[derive(Debug)]
pub struct Session {
    pub id: SessionId,
    pub user: String,
    pub database: String,
    pub txn: Option<Txn>,
    queue: VecDeque<Arc<Statement>>,
    outputs: Vec<Output>,
    awaiting: Option<AwaitingCommit>,
    pub copy_in: Option<CopyIn>,
    pub settings: crate::settings::SessionSettings,
    pub cursors: crate::cursor::Cursors,
    /// The serial the session's next transaction takes.
    pub next_txn_serial: u64,
    /// The current query string holds more than one statement (an implicit transaction
    /// block, where PostgreSQL lets DECLARE run).
    pub multi_statement: bool,
    /// The statements of the query string left unrun after the one that failed.
    pub skipped_after_error: usize,
    /// The extended protocol's implicit transaction: statements run by `execute` leave it
    /// open, and `sync` ends it (PostgreSQL commits at Sync, so the statements of a pipeline
    /// commit together or not at all).
    pub until_sync: bool,
    /// `random()`'s generator: seeded by `setseed`, or from the host's entropy at the first
    /// draw. Not transactional, as in PostgreSQL.
    pub prng: std::cell::Cell<Option<crate::prng::Prng>>,
    /// What `pg_stat_activity` shows of the session.
    pub activity: crate::activity::Activity,
    /// `currval` / `lastval` state, and whether the transaction drew a sequence value.
    pub seqs: std::cell::RefCell<crate::sequence::SessionSeqs>,
    /// `PREPARE`d statements.
    pub prepared: crate::prepared::PreparedStatements,
    /// While a text of one query runs: its shape key (see [`ParseCache::last_shape`]) and
    /// that query, which alone may use it (see [`crate::plancache`]).
    pub plan_shape: Option<crate::plancache::ShapeOf>,
    /// What the session's suspended statement waits for (see [`Engine::wake`]).
    pub waits_for: Option<crate::locks::Wanted>,
}

impl Session {
    /// Asks the host to cancel (or end) the backend `pid`, before the statement's answer.
    pub(crate) fn signal(&mut self, pid: i32, terminate: bool) {
        self.outputs.push(Output::Signal { pid, terminate });
    }

    /// Its commit is being made durable (the host has the batch).
    pub fn is_committing(&self) -> bool {
        self.awaiting.is_some()
    }

    /// The session's `application_name` now.
    pub fn application_name(&self) -> String {
        crate::settings::View {
            sess: &self.settings,
            txn: self.txn.as_ref(),
            user: &self.user,
            hot_standby: false,
        }
        .show("application_name")
        .map(|(_, v)| v)
        .unwrap_or_default()
    }

    /// Reports `notice` to the client, before the answer of the statement running.
    pub(crate) fn notice(&mut self, notice: crate::error::Notice) {
        let notice = notice.to_pg();
        // client_min_messages: levels below it are not sent.
        const LEVELS: [&str; 10] = [
            "debug5", "debug4", "debug3", "debug2", "debug1", "log", "info", "notice", "warning",
            "error",
        ];
        let rank = |level: &str| LEVELS.iter().position(|l| l.eq_ignore_ascii_case(level));
        let minimum = crate::settings::find("client_min_messages").map(|def| {
            crate::settings::View {
                sess: &self.settings,
                txn: self.txn.as_ref(),
                user: &self.user,
                hot_standby: false,
            }
            .display(def)
        });
        if let (Some(level), Some(min)) =
            (rank(&notice.severity), minimum.as_deref().and_then(rank))
        {
            if level < min {
                return;
            }
        }
        self.outputs.push(Output::Notice(notice));
    }

    /// Inside a transaction block: BEGIN's, or the implicit one of a query string with
    /// several statements (PostgreSQL's `IsTransactionBlock`).
    pub(crate) fn in_transaction_block(&self) -> bool {
        self.multi_statement || self.txn.as_ref().is_some_and(|t| t.explicit)
    }

    /// Ends the current transaction (`committed`: it committed, or will once durable): its
    /// cursors close, except WITH HOLD ones of a committed transaction.
    pub fn end_transaction(&mut self, committed: bool) {
        self.seqs.get_mut().end_transaction(committed);
        if let Some(t) = self.txn.take() {
            self.cursors.end_transaction(t.serial, committed);
        }
    }

    /// A fresh transaction's serial.
    pub fn take_txn_serial(&mut self) -> u64 {
        self.next_txn_serial += 1;
        self.next_txn_serial
    }
}

/// A commit planned but not yet reported durable.
#[derive(Debug)]
struct InFlight {
    keys: HashSet<Vec<u8>>,
    /// The store keys its batch writes or deletes, sorted, for the copy cache (`None`: more
    /// than [`WRITE_SET_KEYS`], or the registry changes; every kept result is dropped then).
    written: Option<Vec<Vec<u8>>>,
    tables: Vec<Arc<Table>>,
    dropped: Vec<u32>,
    schemas: Vec<Schema>,
    dropped_schemas: Vec<String>,
    tuple_counters: BTreeMap<u32, u64>,
    /// Sequences whose values the batch writes: changed again since, unless it lands.
    sequences: Vec<u32>,
}

/// Write sets larger than this are not kept for the copy cache's check (a bulk load).
const WRITE_SET_KEYS: usize = 1 << 16;

/// State shared by all sessions: the committed registry and the allocators.
#[derive(Debug)]
pub struct Shared {
    pub latest: u64,
    next_seq: u64,
    /// The committed tables by id; change them through [`Shared::put_table`] and
    /// [`Shared::remove_table`], which keep `table_ids_by_name` in step.
    pub tables: BTreeMap<u32, Arc<Table>>,
    /// Committed table ids by name (any schema), ascending: binding a name does not walk the
    /// registry, which holds a table per DuckLake table with inlined data (20,000 in
    /// `bench scale`).
    pub table_ids_by_name: HashMap<String, Vec<u32>>,
    /// Ids of committed tables by the names of their indexes (the primary key's, and those
    /// CREATE INDEX made), kept in step the same way: relation names a new table or a rename
    /// may not take.
    pub table_ids_by_index_name: HashMap<String, Vec<u32>>,
    /// Ids of the committed sequences (kept in step the same way): what owns one is found
    /// without walking the registry.
    pub sequence_ids: BTreeSet<u32>,
    /// Ids of the committed views (kept in step the same way): a DROP or ALTER finds the views
    /// that read a relation without walking the registry.
    pub view_ids: BTreeSet<u32>,
    pub schemas: BTreeMap<String, Schema>,
    pub next_table_id: u32,
    pub next_oid: u32,
    /// Highest tuple number handed out per table (in memory; persisted by commits).
    pub tuple_counters: HashMap<u32, u64>,
    in_flight: BTreeMap<u64, InFlight>,
    /// Wall clock of the current request, supplied by the host.
    pub now: i64,
    /// Serving a read replica: every write fails with 25006.
    pub read_only: bool,
    /// Bytes of heap one statement may add (0: no limit but the component's ceiling); see
    /// [`crate::mem`].
    pub statement_memory_limit: u64,
    /// Excision may have deleted versions that commit points below this read (the cut of a
    /// finished or running excision, as of the last open or refresh): reading there fails
    /// with 72000 instead of seeing part of the history.
    pub excised_below: u64,
    /// Oldest commit point another session's open transaction reads (lifecycle safety),
    /// refreshed before each statement.
    pub oldest_session_pin: Option<u64>,
    /// Binary COPY results at the newest commit point (each dropped by the first finished
    /// commit that writes into what it read).
    pub copies: crate::copycache::CopyCache,
    /// Decoded rows of large scanned ranges at the newest commit point (the same validity);
    /// filled by reads, which see this state shared.
    pub scans: std::cell::RefCell<crate::scancache::ScanCache>,
    /// Every sequence's value (outside MVCC; see [`crate::sequence`]).
    pub sequences: std::cell::RefCell<crate::sequence::SeqStates>,
    /// The sessions' advisory locks and waiting statements (outside transactions' MVCC;
    /// see [`crate::locks`]).
    pub locks: std::cell::RefCell<crate::locks::Locks>,
    /// Snapshots exported by `pg_export_snapshot()`, by identifier: valid while the
    /// transaction that exported one is open (pg_dump's parallel workers import its leader's).
    pub exported_snapshots: HashMap<String, ExportedSnapshot>,
}

/// A snapshot `pg_export_snapshot()` named: the commit point it reads, and the transaction
/// that exported it (the session and its transaction serial).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportedSnapshot {
    pub session: SessionId,
    pub txn: u64,
    pub point: u64,
}

impl ExportedSnapshot {
    /// Whether the exporting transaction is still open (`exporter`: its session, if any).
    pub fn exporter_open(&self, exporter: Option<&Session>) -> bool {
        exporter
            .and_then(|s| s.txn.as_ref())
            .is_some_and(|t| t.serial == self.txn)
    }
}

impl Shared {
    /// Adds or replaces a committed table (a rename moves its name entry).
    pub fn put_table(&mut self, t: Arc<Table>) {
        self.remove_table(t.id);
        index_name(&mut self.table_ids_by_name, &t.name, t.id);
        for name in t.index_names() {
            index_name(&mut self.table_ids_by_index_name, name, t.id);
        }
        if t.sequence.is_some() {
            self.sequence_ids.insert(t.id);
        }
        if t.view.is_some() {
            self.view_ids.insert(t.id);
        }
        self.tables.insert(t.id, t);
    }

    pub fn remove_table(&mut self, id: u32) {
        let Some(old) = self.tables.remove(&id) else {
            return;
        };
        self.sequence_ids.remove(&id);
        self.view_ids.remove(&id);
        unindex_name(&mut self.table_ids_by_name, &old.name, id);
        for name in old.index_names() {
            unindex_name(&mut self.table_ids_by_index_name, name, id);
        }
    }
}

/// PostgreSQL's 23505 on a system catalog's unique `(name, namespace)` index — `pg_type`'s
/// (`typ`) or `pg_class`'s (`rel`) — for a name another commit took.
fn catalog_key_taken(catalog: &str, prefix: &str, name: &str, namespace: u32) -> SqlError {
    SqlError::UniqueViolation {
        constraint: format!("{catalog}_{prefix}name_nsp_index"),
        schema: "pg_catalog".into(),
        table: catalog.into(),
        detail: format!(
            "Key ({prefix}name, {prefix}namespace)=({name}, {namespace}) already exists."
        ),
    }
}

/// Adds `id` under `name` in a name index of the registry (ids kept sorted).
fn index_name(index: &mut HashMap<String, Vec<u32>>, name: &str, id: u32) {
    let ids = index.entry(name.to_string()).or_default();
    if let Err(at) = ids.binary_search(&id) {
        ids.insert(at, id);
    }
}

/// Removes `id` from under `name` (and the name once no id is left).
fn unindex_name(index: &mut HashMap<String, Vec<u32>>, name: &str, id: u32) {
    if let Some(ids) = index.get_mut(name) {
        ids.retain(|i| *i != id);
        if ids.is_empty() {
            index.remove(name);
        }
    }
}

pub struct Engine {
    pub st: Shared,
    sessions: HashMap<SessionId, Session>,
    next_session: u64,
    /// Parsed statements by text and by shape (parsecache.rs).
    parsed: ParseCache,
}

/// A visible row: logical key, decoded row, and the commit that wrote it (`None`: own write).
pub type VisibleRow = (Vec<u8>, pb::Row, Option<u64>);

fn decode_meta_u64(v: &[u8]) -> Result<u64, DecodeError> {
    let b: [u8; 8] = v.try_into().map_err(|_| DecodeError::Payload {
        message: "meta value is not 8 bytes".into(),
    })?;
    Ok(u64::from_be_bytes(b))
}

/// Scans `[start, end)` and returns the newest version `<= at` of every logical key in range
/// (tombstones hide the key). This is the MVCC filter.
pub fn scan_visible(
    kv: &dyn KvRead,
    start: &[u8],
    end: &[u8],
    at: u64,
) -> Result<Vec<(Vec<u8>, Envelope, u64)>, SqlError> {
    let mut out = Vec::new();
    visit_visible(kv, start, end, at, &mut |logical, value, seq| {
        match Envelope::decode(value)? {
            Envelope::Tombstone => {}
            env => out.push((logical.to_vec(), env, seq)),
        }
        Ok(())
    })?;
    Ok(out)
}

/// Receives (logical key, stored value, commit) from [`visit_visible`].
pub type VisibleVisitor<'a> = dyn FnMut(&[u8], &[u8], u64) -> Result<(), SqlError> + 'a;

/// The MVCC filter of [`scan_visible`] without decoding: `visit` gets the logical key, the
/// stored value (a tombstone too) and the commit of the newest version `<= at` of every logical
/// key in `[start, end)`, in key order.
///
/// Versions stay until excision (docs/lifecycle.md), so a row DuckLake rewrites in every commit
/// (`ducklake_table_stats`) has one version per commit. The scan therefore starts with a short
/// page, grows it while pages come back full, and once [`SEEK_AFTER_SKIPS`] versions in a row
/// are of no use (older versions of the key just taken, or versions newer than `at`) it seeks
/// past them: to the key's end, or to its first version `<= at`. Reading one row costs the same
/// after a thousand commits as after one. Seeking relies on logical keys never prefixing one
/// another (keys.rs).
pub fn visit_visible(
    kv: &dyn KvRead,
    start: &[u8],
    end: &[u8],
    at: u64,
    visit: &mut VisibleVisitor<'_>,
) -> Result<(), SqlError> {
    let mut cursor = start.to_vec();
    // The logical key whose visible version was taken (older versions of it are skipped).
    let mut last_logical: Vec<u8> = Vec::new();
    let mut have_last = false;
    let mut limit = FIRST_SCAN_PAGE;
    loop {
        let batch = kv.scan(&cursor, end, limit)?;
        let n = batch.len();
        let mut skipped = 0;
        let mut seek = None;
        for (raw, value) in &batch {
            let (logical, seq) = keys::split_version(raw)?;
            let taken = have_last && last_logical == logical;
            if seq > at || taken {
                skipped += 1;
                if skipped >= SEEK_AFTER_SKIPS {
                    seek = Some(if taken {
                        keys::prefix_end(logical)
                    } else {
                        let mut k = logical.to_vec();
                        keys::push_version(&mut k, at);
                        k
                    });
                    break;
                }
                continue;
            }
            skipped = 0;
            last_logical.clear();
            last_logical.extend_from_slice(logical);
            have_last = true;
            visit(logical, value, seq)?;
        }
        if let Some(target) = seek {
            if target.as_slice() >= end {
                break;
            }
            cursor = target;
            limit = FIRST_SCAN_PAGE;
            continue;
        }
        match batch.last() {
            Some((k, _)) if n == limit => {
                cursor = k.to_vec();
                cursor.push(0);
                limit = (limit * 2).min(SCAN_BATCH);
            }
            _ => break,
        }
    }
    Ok(())
}

/// Commit sequence of the newest committed version of `logical` (live or tombstone).
pub fn latest_version(kv: &dyn KvRead, logical: &[u8]) -> Result<Option<(u64, bool)>, SqlError> {
    Ok(latest_entry(kv, logical)?.map(|(seq, env)| (seq, !matches!(env, Envelope::Tombstone))))
}

/// The newest committed version of `logical` with its value.
pub fn latest_entry(kv: &dyn KvRead, logical: &[u8]) -> Result<Option<(u64, Envelope)>, SqlError> {
    let end = keys::prefix_end(logical);
    // Versions of this key follow it directly; a longer logical key sharing the prefix cannot
    // appear first because fields are self-delimiting and versions are 8 bytes.
    for (raw, value) in &kv.scan(logical, &end, 4)? {
        let (lk, seq) = keys::split_version(raw)?;
        if lk == logical {
            return Ok(Some((seq, Envelope::decode(value)?)));
        }
    }
    Ok(None)
}

impl Engine {
    /// Opens the engine over a store: loads counters, schemas and table definitions.
    pub fn open(kv: &dyn KvRead) -> Result<Engine, SqlError> {
        let meta = |name: &str| -> Result<Option<u64>, SqlError> {
            match kv.get(&keys::meta_key(name))? {
                Some(v) => Ok(Some(decode_meta_u64(&v)?)),
                None => Ok(None),
            }
        };
        let latest = meta(META_COMMIT_SEQ)?.unwrap_or(0);
        let mut st = Shared {
            latest,
            next_seq: latest + 1,
            tables: BTreeMap::new(),
            table_ids_by_name: HashMap::new(),
            table_ids_by_index_name: HashMap::new(),
            sequence_ids: BTreeSet::new(),
            view_ids: BTreeSet::new(),
            schemas: BTreeMap::new(),
            next_table_id: meta(META_NEXT_TABLE_ID)?.unwrap_or(1) as u32,
            next_oid: meta(META_NEXT_OID)?.unwrap_or(FIRST_USER_OID as u64) as u32,
            tuple_counters: HashMap::new(),
            in_flight: BTreeMap::new(),
            now: 0,
            read_only: false,
            statement_memory_limit: crate::mem::DEFAULT_STATEMENT_MEMORY_LIMIT,
            oldest_session_pin: None,
            excised_below: crate::lifecycle::excised_below(kv)?,
            copies: Default::default(),
            scans: Default::default(),
            sequences: Default::default(),
            locks: Default::default(),
            exported_snapshots: HashMap::new(),
        };
        for (name, oid) in BUILTIN_SCHEMAS {
            st.schemas.insert(
                name.to_string(),
                Schema {
                    name: name.to_string(),
                    oid,
                    comment: crate::pgcatalog::initdb_schema_comment(oid).map(str::to_string),
                },
            );
        }
        let p = [keys::TAG_SCHEMA];
        for (_, env, _) in scan_visible(kv, &p, &keys::prefix_end(&p), latest)? {
            if let Envelope::SchemaDef(s) = env {
                st.schemas.insert(
                    s.name.clone(),
                    Schema {
                        comment: crate::catalog::non_empty(&s.comment),
                        name: s.name,
                        oid: s.oid,
                    },
                );
            }
        }
        let p = [keys::TAG_TABLE_DEF];
        for (_, env, seq) in scan_visible(kv, &p, &keys::prefix_end(&p), latest)? {
            if let Envelope::TableDef(def) = env {
                let t = Table {
                    version: seq,
                    ..Table::from_proto(&def)?
                };
                st.put_table(Arc::new(t));
            }
        }
        let tp = keys::meta_key(META_TUPLE_PREFIX);
        for (k, v) in &kv.scan(&tp, &keys::prefix_end(&tp), usize::MAX)? {
            let id_bytes: [u8; 4] = k[tp.len()..].try_into().map_err(|_| DecodeError::Key {
                message: "bad tuple counter key".into(),
            })?;
            st.tuple_counters
                .insert(u32::from_be_bytes(id_bytes), decode_meta_u64(v)?);
        }
        let sp = keys::meta_key(META_SEQUENCE_PREFIX);
        for (k, v) in &kv.scan(&sp, &keys::prefix_end(&sp), usize::MAX)? {
            let bad = || DecodeError::Key {
                message: "bad sequence value record".into(),
            };
            let id_bytes: [u8; 4] = k[sp.len()..].try_into().map_err(|_| bad())?;
            let value = crate::sequence::SeqValue::decode(v).ok_or_else(bad)?;
            st.sequences
                .get_mut()
                .values
                .insert(u32::from_be_bytes(id_bytes), value);
        }
        Ok(Engine {
            st,
            sessions: HashMap::new(),
            next_session: 1,
            parsed: ParseCache::default(),
        })
    }

    pub fn latest(&self) -> CommitSeq {
        CommitSeq(self.st.latest)
    }

    /// Read-replica mode: every write statement fails with 25006 from now on.
    pub fn set_read_only(&mut self, on: bool) {
        self.st.read_only = on;
    }

    /// Bytes of heap one statement may add before it fails with 53200 (0: no limit but the
    /// component's ceiling). Takes effect with the next statement.
    pub fn set_statement_memory_limit(&mut self, bytes: u64) {
        self.st.statement_memory_limit = bytes;
    }

    /// Reloads the committed state (registry, schemas, counters, latest commit) from `kv`
    /// after another process committed to the store, keeping the sessions: a read replica
    /// calls this when its copy of the store advanced. Sessions pinned to an older commit
    /// (REPEATABLE READ) keep reading it, since commits only add versions. Refused while this
    /// engine has commits of its own in flight.
    pub fn refresh(&mut self, kv: &dyn KvRead) -> Result<(), PgError> {
        if !self.st.in_flight.is_empty() {
            return Err(PgError::new(
                "55000",
                "cannot refresh the catalog while commits are in flight",
            ));
        }
        let fresh = Engine::open(kv).map_err(|e| e.to_pg())?;
        let (read_only, limit) = (self.st.read_only, self.st.statement_memory_limit);
        // Snapshots exported by transactions still open stay importable (a replica refreshes
        // at every commit of its writer, between pg_dump's leader and its workers).
        let exported = std::mem::take(&mut self.st.exported_snapshots);
        // The sessions' advisory locks are theirs, not the catalog's.
        let locks = std::mem::take(&mut self.st.locks);
        self.st = fresh.st;
        self.st.locks = locks;
        self.st.read_only = read_only;
        self.st.statement_memory_limit = limit;
        self.st.exported_snapshots = exported;
        Ok(())
    }

    /// Opens a read-write session with the default settings (tools, tests).
    pub fn open_session(&mut self, user: &str, database: &str) -> SessionId {
        let opts = crate::api::SessionOptions::plain(user, database);
        // No client address: nothing to refuse.
        let activity = crate::activity::Activity {
            backend_start: opts.backend_start,
            ..Default::default()
        };
        self.add_session(&opts, crate::settings::SessionSettings::default(), activity)
            .id
    }

    /// Opens a session for `opts.user`; fails (the host ends the connection) when a start-up
    /// setting is unknown or invalid.
    pub fn open_session_with(
        &mut self,
        opts: &crate::api::SessionOptions,
    ) -> Result<crate::api::OpenedSession, PgError> {
        let settings = crate::settings::SessionSettings::new(&opts.settings, opts.read_only)
            .map_err(|e| e.to_pg())?;
        let activity = crate::activity::Activity::new(opts).map_err(|e| e.to_pg())?;
        Ok(self.add_session(opts, settings, activity))
    }

    /// Registers a session whose settings are already checked.
    fn add_session(
        &mut self,
        opts: &crate::api::SessionOptions,
        settings: crate::settings::SessionSettings,
        activity: crate::activity::Activity,
    ) -> crate::api::OpenedSession {
        let id = SessionId(self.next_session);
        self.next_session += 1;
        let mut sess = Session {
            id,
            user: opts.user.clone(),
            database: opts.database.clone(),
            txn: None,
            queue: VecDeque::new(),
            outputs: Vec::new(),
            awaiting: None,
            copy_in: None,
            settings,
            cursors: Default::default(),
            prepared: Default::default(),
            next_txn_serial: 0,
            multi_statement: false,
            skipped_after_error: 0,
            until_sync: false,
            prng: std::cell::Cell::new(None),
            seqs: Default::default(),
            activity,
            plan_shape: None,
            waits_for: None,
        };
        let settings = sess.settings.report(None, &sess.user, self.st.read_only);
        self.sessions.insert(id, sess);
        crate::api::OpenedSession { id, settings }
    }

    /// Puts a session back after a request, adding the settings the request changed to the
    /// reply (not while its commit is suspended, the outcome deciding them, nor while its
    /// statement waits), and settling what the request did with advisory locks.
    fn finish(&mut self, mut sess: Session, mut reply: Reply) -> Reply {
        let locks = self.st.locks.get_mut();
        if reply.wait.is_none() && reply.commit.is_none() {
            if reply.error.is_some() {
                // The failed statement waits no more.
                locks.statement_done(sess.id);
            }
            Self::end_transaction_locks(locks, &sess);
        }
        reply.locks_released = locks.take_released();
        // A suspended request reports its settings with its final reply.
        if reply.commit.is_none() && reply.wait.is_none() {
            reply.settings = sess
                .settings
                .report(sess.txn.as_ref(), &sess.user, self.st.read_only);
        }
        self.sessions.insert(sess.id, sess);
        reply
    }

    /// Ends a session; an open transaction is rolled back (nothing of it was ever written).
    pub fn close_session(&mut self, sid: SessionId) {
        if let Some(mut sess) = self.sessions.remove(&sid) {
            // Its locks go with it; the host wakes the sessions that wait after any close.
            self.st.locks.get_mut().forget(sid);
            // Its open transaction ends without committing.
            sess.end_transaction(false);
            Self::settle_sequences(&mut self.st, &mut sess);
        }
    }

    /// Undoes the sequence restarts of the session's transactions that ended without
    /// committing (see [`crate::sequence::restore`]).
    fn settle_sequences(st: &mut Shared, sess: &mut Session) {
        let seqs = sess.seqs.get_mut();
        if seqs.to_restore.is_empty() {
            return;
        }
        let pending = sess.txn.as_ref().map(|t| &t.pending.tables);
        for (id, before) in std::mem::take(&mut seqs.to_restore) {
            // Rolled back to a savepoint, a sequence may be the transaction's own.
            let own = pending.and_then(|p| p.get(&id));
            if let Some(t) = own.or_else(|| st.tables.get(&id)) {
                if let Some(def) = t.sequence.as_deref() {
                    crate::sequence::restore(st.sequences.get_mut(), t, def, before);
                }
            }
        }
    }

    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// Oldest commit point any open transaction still reads, or may still be imported by
    /// another (`pg_export_snapshot()`, even under READ COMMITTED), for GC safety.
    pub fn oldest_pinned_snapshot(&self) -> Option<u64> {
        self.sessions
            .values()
            .filter_map(|s| s.txn.as_ref().and_then(|t| t.snapshot))
            .chain(
                self.st
                    .exported_snapshots
                    .values()
                    .filter(|e| e.exporter_open(self.sessions.get(&e.session)))
                    .map(|e| e.point),
            )
            .min()
    }

    fn status_of(s: &Session) -> TxnStatus {
        match &s.txn {
            Some(t) if t.explicit && t.failed => TxnStatus::Failed,
            Some(t) if t.explicit => TxnStatus::InBlock,
            _ => TxnStatus::Idle,
        }
    }

    fn missing_session() -> Reply {
        Reply {
            outputs: vec![],
            error: Some(PgError::new("08003", "session does not exist")),
            status: TxnStatus::Idle,
            commit: None,
            settings: Vec::new(),
            wait: None,
            locks_released: false,
        }
    }

    /// Runs a simple-query string (one or more statements).
    pub fn query(&mut self, kv: &dyn KvRead, sid: SessionId, sql: &str, now: i64) -> Reply {
        self.run_text(kv, sid, sql, now, false)
    }

    /// Runs the statement of an extended-protocol Execute. As [`Engine::query`], except that
    /// an implicit transaction stays open until [`Engine::sync`].
    pub fn execute(&mut self, kv: &dyn KvRead, sid: SessionId, sql: &str, now: i64) -> Reply {
        self.run_text(kv, sid, sql, now, true)
    }

    /// The extended protocol's Sync: ends the implicit transaction the Executes since the last
    /// Sync ran in, committing it (its commit may suspend the request, as a query's does).
    /// `abort`: the host failed a message of the pipeline itself; the implicit transaction is
    /// rolled back and a transaction block fails, as that error does in PostgreSQL.
    pub fn sync(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64, abort: bool) -> Reply {
        self.st.now = now;
        let Some(mut sess) = self.sessions.remove(&sid) else {
            return Self::missing_session();
        };
        sess.outputs.clear();
        sess.until_sync = false;
        Self::abandon_wait(&mut self.st, &mut sess);
        if abort {
            match sess.txn.as_mut() {
                Some(t) if t.explicit => t.failed = true,
                Some(_) => sess.end_transaction(false),
                None => {}
            }
        }
        let implicit = sess.txn.as_ref().is_some_and(|t| !t.explicit);
        let committing = if implicit && sess.copy_in.is_none() {
            self.commit_or_fail(kv, &mut sess, None)
        } else {
            None
        };
        let reply = committing.unwrap_or_else(|| Reply {
            outputs: std::mem::take(&mut sess.outputs),
            error: None,
            status: Self::status_of(&sess),
            commit: None,
            settings: Vec::new(),
            wait: None,
            locks_released: false,
        });
        self.finish(sess, reply)
    }

    fn run_text(
        &mut self,
        kv: &dyn KvRead,
        sid: SessionId,
        sql: &str,
        now: i64,
        until_sync: bool,
    ) -> Reply {
        self.st.now = now;
        let Some(mut sess) = self.sessions.remove(&sid) else {
            return Self::missing_session();
        };
        sess.until_sync = until_sync;
        Self::abandon_wait(&mut self.st, &mut sess);
        sess.activity.started(sql, now);
        sess.outputs.clear();
        sess.queue.clear();
        crate::errpos::clear();
        let seen = self.parsed.stats();
        let parsed = self.parsed.parse(sql);
        let shape = self.parsed.last_shape();
        // A tree made from another text of the same shape (or read without the parser) has
        // that text's positions.
        let now_seen = self.parsed.stats();
        let shape_hit = now_seen.shape_hits != seen.shape_hits;
        let long_text = now_seen.long_texts != seen.long_texts;
        let statements = parsed.as_ref().map_or(0, |s| s.len());
        sess.skipped_after_error = 0;
        let mut reply = match parsed {
            Ok(stmts) if stmts.is_empty() => Reply {
                outputs: vec![Output::Empty],
                error: None,
                status: Self::status_of(&sess),
                commit: None,
                settings: Vec::new(),
                wait: None,
                locks_released: false,
            },
            Ok(stmts) => {
                sess.multi_statement = stmts.len() > 1;
                if until_sync {
                    // The Executes up to Sync are one transaction: `now()` is its start for
                    // each of them, reads included.
                    crate::exec::Cx {
                        kv,
                        st: &mut self.st,
                        sess: &mut sess,
                        others: &self.sessions,
                    }
                    .ensure_txn();
                }
                sess.queue = stmts.iter().cloned().collect();
                sess.plan_shape = match (&*stmts, shape) {
                    ([one], Some(key)) => crate::plancache::ShapeOf::new(key, one),
                    _ => None,
                };
                let reply = self.run(kv, &mut sess);
                sess.plan_shape = None;
                reply
            }
            Err(e) => {
                // A parse error fails the transaction block like any other error.
                match sess.txn.as_mut() {
                    Some(t) if t.explicit => t.failed = true,
                    Some(_) => sess.end_transaction(false),
                    None => {}
                }
                Reply {
                    outputs: vec![],
                    error: Some(e.to_pg()),
                    status: Self::status_of(&sess),
                    commit: None,
                    settings: Vec::new(),
                    wait: None,
                    locks_released: false,
                }
            }
        };
        if let Some(e) = reply.error.as_mut() {
            // Only binding errors point into the text (classes 42 and 22: names, types,
            // constants); a conflict at COMMIT, say, never does.
            let positioned = e.code.starts_with("42") || e.code.starts_with("22");
            let failed = statements.checked_sub(1 + sess.skipped_after_error);
            if shape_hit && !long_text && e.position.is_none() && positioned {
                // The tree came from another text of this shape, with that text's positions:
                // the failed statement's own tree, bound again, says where the error is in it.
                // (A long text, read without the parser, is not parsed for it.)
                crate::errpos::clear();
                if let Some(index) = failed {
                    crate::exec::locate_error(
                        &mut crate::exec::Cx {
                            kv,
                            st: &mut self.st,
                            sess: &mut sess,
                            others: &self.sessions,
                        },
                        sql,
                        index,
                    );
                }
                e.position = crate::errpos::position(sql, &e.message);
            } else if !shape_hit && !long_text {
                e.position = e
                    .position
                    .or_else(|| crate::errpos::position(sql, &e.message));
            }
        }
        self.finish(sess, reply)
    }

    /// Describes the row shape of one statement without executing it.
    pub fn describe(
        &mut self,
        kv: &dyn KvRead,
        sid: SessionId,
        sql: &str,
    ) -> Result<crate::api::Describe, PgError> {
        let Some(mut sess) = self.sessions.remove(&sid) else {
            return Err(PgError::new("08003", "session does not exist"));
        };
        crate::errpos::clear();
        let r = crate::exec::describe(
            &mut crate::exec::Cx {
                kv,
                st: &mut self.st,
                sess: &mut sess,
                others: &self.sessions,
            },
            sql,
        );
        self.sessions.insert(sid, sess);
        r.map_err(|e| {
            let mut e = e.to_pg();
            e.position = crate::errpos::position(sql, &e.message);
            e
        })
    }

    /// Feeds COPY FROM STDIN data.
    pub fn copy_in_data(&mut self, sid: SessionId, data: &[u8]) -> Result<(), PgError> {
        let sess = self
            .sessions
            .get_mut(&sid)
            .ok_or_else(|| PgError::new("08003", "session does not exist"))?;
        let copy = sess
            .copy_in
            .as_mut()
            .ok_or_else(|| PgError::new("08P01", "unexpected CopyData message"))?;
        if copy.buf.len() + data.len() > crate::txn::MAX_BATCH_SIZE {
            return Err(SqlError::BatchTooLarge.to_pg());
        }
        copy.buf.extend_from_slice(data);
        Ok(())
    }

    /// Ends COPY FROM STDIN: parses the buffered stream and inserts the rows.
    pub fn copy_in_done(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64) -> Reply {
        self.st.now = now;
        let Some(mut sess) = self.sessions.remove(&sid) else {
            return Self::missing_session();
        };
        let result = match sess.copy_in.take() {
            Some(copy) => crate::exec::finish_copy_in(
                &mut crate::exec::Cx {
                    kv,
                    st: &mut self.st,
                    sess: &mut sess,
                    others: &self.sessions,
                },
                copy,
            ),
            None => Err(SqlError::Syntax {
                message: "no COPY in progress".into(),
            }),
        };
        let reply = match result {
            Ok(out) => {
                sess.outputs.push(out);
                self.run(kv, &mut sess)
            }
            Err(e) => self.fail(&mut sess, e),
        };
        self.finish(sess, reply)
    }

    pub fn copy_in_fail(&mut self, sid: SessionId, message: &str) -> Reply {
        let Some(mut sess) = self.sessions.remove(&sid) else {
            return Self::missing_session();
        };
        sess.copy_in = None;
        let e = SqlError::BadCopyFormat {
            message: format!("COPY from stdin failed: {message}"),
            hint: None,
        };
        let mut reply = self.fail(&mut sess, e);
        if let Some(err) = reply.error.as_mut() {
            err.code = "57014".into();
        }
        self.finish(sess, reply)
    }

    /// Records an error: the transaction block fails (explicit) or is discarded (implicit).
    fn fail(&mut self, sess: &mut Session, e: SqlError) -> Reply {
        sess.skipped_after_error = sess.queue.len();
        sess.queue.clear();
        match sess.txn.as_mut() {
            Some(t) if t.explicit => t.failed = true,
            _ => sess.end_transaction(false),
        }
        Self::settle_sequences(&mut self.st, sess);
        Reply {
            outputs: std::mem::take(&mut sess.outputs),
            error: Some(e.to_pg()),
            status: Self::status_of(sess),
            commit: None,
            settings: Vec::new(),
            wait: None,
            locks_released: false,
        }
    }

    /// Executes queued statements until the queue is empty, an error occurs, or a commit must
    /// be made durable.
    fn run(&mut self, kv: &dyn KvRead, sess: &mut Session) -> Reply {
        // The statement that waited runs again from its start (see crate::locks).
        let mut again = sess.waits_for.take().is_some();
        while let Some(stmt) = sess.queue.pop_front() {
            self.st
                .locks
                .get_mut()
                .begin_statement(sess.id, std::mem::take(&mut again));
            // Only the lifecycle functions look at other sessions' read points.
            self.st.oldest_session_pin = match &*stmt {
                Statement::Query(q) if crate::lifecycle::recognize(q).is_some() => {
                    self.oldest_pinned_snapshot()
                }
                _ => None,
            };
            let step = {
                let mut cx = crate::exec::Cx {
                    kv,
                    st: &mut self.st,
                    sess,
                    others: &self.sessions,
                };
                crate::exec::execute(&mut cx, &stmt)
            };
            Self::settle_sequences(&mut self.st, sess);
            if let Err(SqlError::MustWait) = step {
                return self.suspend_waiting(sess, stmt);
            }
            let locks = self.st.locks.get_mut();
            locks.statement_done(sess.id);
            Self::end_transaction_locks(locks, sess);
            match step {
                Ok(crate::exec::Step::Output(o)) => {
                    let is_copy_in = matches!(o, Output::CopyIn { .. });
                    sess.outputs.push(o);
                    if is_copy_in {
                        // The rest of the query string waits for the COPY data.
                        break;
                    }
                }
                Ok(crate::exec::Step::Commit { tag }) => {
                    if let Some(reply) = self.commit_or_fail(kv, sess, tag) {
                        return reply;
                    }
                    // Committed with nothing to write: its transaction's locks go now.
                    Self::end_transaction_locks(self.st.locks.get_mut(), sess);
                }
                Err(e) => return self.fail(sess, e),
            }
        }
        if sess.copy_in.is_none() && !sess.until_sync {
            // End of the query string closes its implicit transaction.
            if sess.txn.as_ref().is_some_and(|t| !t.explicit) {
                if let Some(reply) = self.commit_or_fail(kv, sess, None) {
                    return reply;
                }
            }
        }
        Reply {
            outputs: std::mem::take(&mut sess.outputs),
            error: None,
            status: Self::status_of(sess),
            commit: None,
            settings: Vec::new(),
            wait: None,
            locks_released: false,
        }
    }

    /// Suspends the request while `stmt`, the statement that must wait, waits: it goes back to
    /// the front of the queue, to run again when the host wakes the session.
    fn suspend_waiting(&mut self, sess: &mut Session, stmt: Arc<Statement>) -> Reply {
        let locks = self.st.locks.get_mut();
        // A transaction a COMMIT before it ended lets its locks go while this one waits.
        Self::end_transaction_locks(locks, sess);
        let waiter = locks.waiter(sess.id).cloned();
        sess.waits_for = waiter.as_ref().map(|w| w.wanted);
        sess.queue.push_front(stmt);
        Reply {
            outputs: vec![],
            error: None,
            status: Self::status_of(sess),
            commit: None,
            settings: Vec::new(),
            wait: Some(crate::api::Wait {
                until: waiter
                    .as_ref()
                    .and_then(crate::locks::Waiter::next_deadline),
            }),
            locks_released: false,
        }
    }

    /// A new request of a session whose statement still waits (a host that gave up on the
    /// wait): the statement and its wait are dropped, its replayed answers with them.
    fn abandon_wait(st: &mut Shared, sess: &mut Session) {
        if sess.waits_for.take().is_some() {
            st.locks.get_mut().statement_done(sess.id);
            sess.queue.clear();
        }
    }

    /// Releases the transaction-level advisory locks of the session's transactions that are
    /// over: those of a transaction block once it ended or failed, and those taken outside
    /// any (by a read the core ran without opening one) once the request is done with its
    /// implicit transaction.
    fn end_transaction_locks(locks: &mut crate::locks::Locks, sess: &Session) {
        let txn = sess.txn.as_ref();
        let request_over = sess.queue.is_empty() && !sess.until_sync && sess.copy_in.is_none();
        locks.end_transactions(sess.id, |of| match of {
            Some(serial) => match txn.filter(|t| t.serial == serial) {
                None => Some(0),
                // A failed block aborted its innermost subtransaction: the locks taken since
                // the last savepoint (all of them without one). ROLLBACK TO revives the rest.
                Some(t) if t.failed => Some(t.savepoints.len() as u32),
                Some(_) => None,
            },
            None => (request_over && txn.is_none_or(|t| !t.explicit)).then_some(0),
        });
    }

    /// The host wakes a session whose request waits (see [`Reply::wait`]): its statement runs
    /// again, and the request goes on.
    pub fn wake(&mut self, kv: &dyn KvRead, sid: SessionId, now: i64) -> Reply {
        self.st.now = now;
        let Some(mut sess) = self.sessions.remove(&sid) else {
            return Self::missing_session();
        };
        if sess.waits_for.is_none() {
            self.sessions.insert(sid, sess);
            return Reply {
                outputs: vec![],
                error: Some(PgError::new("XX000", "no statement of this session waits")),
                status: TxnStatus::Idle,
                commit: None,
                settings: Vec::new(),
                wait: None,
                locks_released: false,
            };
        }
        let reply = self.run(kv, &mut sess);
        self.finish(sess, reply)
    }

    /// Plans the session's commit: `Some(reply)` suspends the request with the batch (or ends it
    /// with the conflict error); `None` means there was nothing to write and the request goes on.
    fn commit_or_fail(
        &mut self,
        kv: &dyn KvRead,
        sess: &mut Session,
        tag: Option<String>,
    ) -> Option<Reply> {
        match self.plan_commit(kv, sess, tag) {
            Ok(Some(batch)) => Some(Reply {
                outputs: std::mem::take(&mut sess.outputs),
                error: None,
                status: TxnStatus::Idle,
                commit: Some(batch),
                settings: Vec::new(),
                wait: None,
                locks_released: false,
            }),
            Ok(None) => None,
            Err(e) => Some(self.fail(sess, e)),
        }
    }

    /// Turns the session's transaction into a write batch after checking it against everything
    /// committed (and in flight) since it started. `Ok(None)`: nothing to write.
    fn plan_commit(
        &mut self,
        kv: &dyn KvRead,
        sess: &mut Session,
        tag: Option<String>,
    ) -> Result<Option<CommitBatch>, SqlError> {
        let Some(txn) = sess.txn.take() else {
            if let Some(tag) = tag {
                sess.outputs.push(Output::Command { tag });
            }
            return Ok(None);
        };
        let (serial, failed) = (txn.serial, txn.failed);
        let planned = self.plan_txn_commit(kv, sess, tag, txn);
        // The transaction's WITH HOLD cursors stay if it commits (dropped again should the
        // batch fail to become durable).
        sess.cursors
            .end_transaction(serial, !failed && planned.is_ok());
        planned
    }

    /// The entries of indexes this transaction made or dropped (CREATE / DROP INDEX): every
    /// committed row it did not write gets its entry in each new index (its own writes got
    /// theirs above), and every entry of a dropped index is removed: as of the latest commit,
    /// which holds every row committed since the statement too. A commit into the table still
    /// in flight failed this one above (its rows are not there yet).
    fn plan_index_changes(
        &self,
        kv: &dyn KvRead,
        p: &PendingCatalogTxn,
        puts: &mut Vec<(Vec<u8>, Vec<u8>)>,
        seq: u64,
    ) -> Result<(), SqlError> {
        let latest = self.st.latest;
        for (id, t) in &p.tables {
            if p.dropped.contains(id) {
                continue;
            }
            let Some(committed) = self.st.tables.get(id) else {
                continue; // made by this transaction: it has no committed rows
            };
            let added: Vec<usize> = (0..t.indexes.len())
                .filter(|&no| {
                    t.indexes[no].since == LAYOUT_THIS_COMMIT
                        && committed.index_at_slot(t.indexes[no].slot).is_none()
                })
                .collect();
            let dropped: Vec<u8> = committed
                .indexes
                .iter()
                .map(|ix| ix.slot)
                .filter(|slot| t.index_at_slot(*slot).is_none())
                .collect();
            let versioned = |lk: &[u8]| {
                let mut k = lk.to_vec();
                keys::push_version(&mut k, seq);
                k
            };
            if !added.is_empty() {
                // The statement counted the rows it saw against the batch; with the rows
                // committed since, the entries alone stay within the limit.
                let mut bytes = 0;
                let tp = keys::table_prefix(*id);
                for (rk, env, _) in scan_visible(kv, &tp, &keys::prefix_end(&tp), latest)? {
                    let Envelope::Row(row) = env else { continue };
                    if p.writes.contains_key(&rk) {
                        continue;
                    }
                    let value = Envelope::Row(row.clone()).encode();
                    for &no in &added {
                        let ek = crate::exec::index_entry_key(t, no, &row, &rk)?;
                        bytes += ek.len() + value.len();
                        puts.push((versioned(&ek), value.clone()));
                    }
                }
                if bytes > crate::txn::MAX_BATCH_SIZE {
                    return Err(SqlError::BatchTooLarge);
                }
            }
            for slot in dropped {
                let ip = keys::index_prefix(*id, slot);
                visit_visible(
                    kv,
                    &ip,
                    &keys::prefix_end(&ip),
                    latest,
                    &mut |ek, value, _| {
                        if !matches!(Envelope::decode(value)?, Envelope::Tombstone) {
                            puts.push((versioned(ek), Envelope::Tombstone.encode()));
                        }
                        Ok(())
                    },
                )?;
            }
        }
        Ok(())
    }

    fn plan_txn_commit(
        &mut self,
        kv: &dyn KvRead,
        sess: &mut Session,
        tag: Option<String>,
        txn: Txn,
    ) -> Result<Option<CommitBatch>, SqlError> {
        let drew_sequence = sess.seqs.get_mut().touched;
        sess.seqs.get_mut().end_transaction(!txn.failed);
        if txn.failed {
            // COMMIT of a failed block is a ROLLBACK, as in PostgreSQL.
            sess.outputs.push(Output::Command {
                tag: "ROLLBACK".into(),
            });
            return Ok(None);
        }
        let crate::engine::Txn {
            pending: mut p,
            settings,
            serial: txn_serial,
            ..
        } = txn;
        for id in std::mem::take(&mut p.temporary) {
            p.forget_table(id);
        }
        if p.is_empty() && !drew_sequence {
            sess.settings.commit(settings);
            if let Some(tag) = tag {
                sess.outputs.push(Output::Command { tag });
            }
            return Ok(None);
        }
        let in_flight_keys: HashSet<&Vec<u8>> = self
            .st
            .in_flight
            .values()
            .flat_map(|f| f.keys.iter())
            .collect();
        // The committed row each write replaces, for tables with indexes (its entries move).
        let table_of = |id: u32| -> Option<&Arc<Table>> {
            if p.dropped.contains(&id) {
                return None;
            }
            p.tables.get(&id).or_else(|| self.st.tables.get(&id))
        };
        let mut replaced: HashMap<&Vec<u8>, pb::Row> = HashMap::new();
        for (lk, w) in &p.writes {
            let entry = latest_entry(kv, lk)?;
            let latest = entry
                .as_ref()
                .map(|(seq, env)| (*seq, !matches!(env, Envelope::Tombstone)));
            if let Some((_, Envelope::Row(old))) = entry {
                if table_of(w.table_id).is_some_and(|t| !t.indexes.is_empty()) {
                    replaced.insert(lk, old);
                }
            }
            let moved = if w.inserted {
                // An insert conflicts only with a live row that appeared meanwhile.
                in_flight_keys.contains(lk)
                    || matches!(latest, Some((s, true)) if Some(s) != w.base_seq)
            } else {
                in_flight_keys.contains(lk) || latest.map(|(s, _)| s) != w.base_seq
            };
            if !moved {
                continue;
            }
            if w.inserted {
                let table = self
                    .st
                    .tables
                    .get(&w.table_id)
                    .or_else(|| p.tables.get(&w.table_id));
                return Err(match table {
                    Some(t) if !t.primary_key.is_empty() => {
                        crate::exec::unique_violation(t, w.row.as_ref())
                    }
                    _ => SqlError::SerializationFailure,
                });
            }
            return Err(SqlError::SerializationFailure);
        }
        // The definitions this transaction wrote rows by, altered or dropped must still be the
        // latest: rows are stored by column position, so rows or an altered copy made for a
        // definition another commit has changed or dropped since (or is changing) would be
        // read by the wrong layout, and one of two ALTERs would be lost. PostgreSQL makes the
        // later one wait for the earlier's lock; here the later commit is refused.
        for (id, base) in &p.def_bases {
            // A definition whose columns and keys are the base's (only comments or indexes
            // changed) is the same to a writer of rows (decisions 0032, 0040): its commit
            // maintains the indexes of the latest definition.
            let same_shape = |t: &Table| base.rows_only && t.shape_version() == base.shape;
            let stands = self
                .st
                .tables
                .get(id)
                .is_some_and(|t| t.version == base.version || same_shape(t));
            // An index made or dropped by a commit not yet durable: this commit's entries
            // would follow the definition before it (once durable, the latest one is used).
            let same_indexes = |t: &Table| {
                self.st.tables.get(id).is_some_and(|latest| {
                    let slots = |x: &Table| x.indexes.iter().map(|ix| ix.slot).collect::<Vec<_>>();
                    slots(latest) == slots(t)
                })
            };
            let changing = self.st.in_flight.values().any(|f| {
                f.dropped.contains(id)
                    || f.tables
                        .iter()
                        .any(|t| t.id == *id && (!same_shape(t) || !same_indexes(t)))
            });
            if changing || !stands {
                return Err(SqlError::SerializationFailure);
            }
        }
        // A table an ALTER of this transaction read whole (rewrote, filled or checked) must
        // have had no rows committed into it since: they were neither rewritten nor checked.
        for (id, at) in &p.whole_table_reads {
            let prefix = keys::table_prefix(*id);
            let mut newer = in_flight_keys.iter().any(|k| k.starts_with(&prefix));
            if !newer && *at != crate::txn::IN_FLIGHT_ONLY {
                visit_visible(
                    kv,
                    &prefix,
                    &keys::prefix_end(&prefix),
                    u64::MAX,
                    &mut |_, _, seq| {
                        newer |= seq > *at;
                        Ok(())
                    },
                )?;
            }
            if newer {
                return Err(SqlError::SerializationFailure);
            }
        }
        // A dropped schema must still be empty: a table another transaction made in it since
        // (committed or on its way) depends on it.
        for name in &p.dropped_schemas {
            let committed = self
                .st
                .tables
                .values()
                .filter(|t| !p.dropped.contains(&t.id));
            let in_flight = self.st.in_flight.values().flat_map(|f| f.tables.iter());
            let mut dependents: Vec<&Arc<Table>> = committed
                .chain(in_flight)
                .filter(|t| &t.schema == name)
                .collect();
            if !dependents.is_empty() {
                dependents.sort_by_key(|t| t.oid);
                return Err(SqlError::DependentObjects {
                    name: name.clone(),
                    detail: dependents
                        .iter()
                        .map(|t| format!("table {}.{} depends on schema {name}", t.schema, t.name))
                        .collect::<Vec<_>>()
                        .join("\n"),
                });
            }
        }
        // A relation this transaction drops must have no view reading it that stays: one that
        // does was made (committed or on its way) after this transaction's DROP looked
        // (docs/decisions/0039), and would read what is gone.
        // So must one it renamed (or renamed a column of): the views reading it were
        // rewritten to the new names, and one made since names the old ones.
        if !p.dropped.is_empty() || !p.renamed.is_empty() {
            let gone = |d: &u32| p.dropped.contains(d) || p.renamed.contains(d);
            let committed = self
                .st
                .view_ids
                .iter()
                .filter_map(|id| self.st.tables.get(id));
            let in_flight = self.st.in_flight.values().flat_map(|f| f.tables.iter());
            let stranded = committed.chain(in_flight).any(|t| {
                !p.dropped.contains(&t.id)
                    && !p.tables.contains_key(&t.id)
                    && t.view
                        .as_ref()
                        .is_some_and(|v| v.relations().any(|id| gone(&id)))
            });
            if stranded {
                return Err(SqlError::SerializationFailure);
            }
        }
        // And a table's schema must still be there: another transaction may have dropped it.
        for t in p.tables.values() {
            let dropping = self
                .st
                .in_flight
                .values()
                .any(|f| f.dropped_schemas.contains(&t.schema));
            let exists = self.st.schemas.contains_key(&t.schema)
                || p.schemas.iter().any(|s| s.name == t.schema);
            if dropping || !exists {
                return Err(SqlError::UndefinedSchema {
                    name: t.schema.clone(),
                });
            }
        }
        // A schema whose definition this transaction changed must not have been dropped since
        // (its new definition would bring it back).
        for name in &p.altered_schemas {
            let oid = p.schemas.iter().find(|s| &s.name == name).map(|s| s.oid);
            // Dropped (and perhaps made again) by a commit still in flight.
            let dropping = self.st.in_flight.values().any(|f| {
                f.dropped_schemas.contains(name)
                    || f.schemas
                        .iter()
                        .any(|s| &s.name == name && Some(s.oid) != oid)
            });
            if dropping || self.st.schemas.get(name).map(|s| s.oid) != oid {
                return Err(SqlError::SerializationFailure);
            }
        }
        // Lifecycle records are read at the latest commit; another commit in flight that
        // changes the same record would make this one's checks stale.
        if p.meta.keys().any(|k| in_flight_keys.contains(k)) {
            return Err(SqlError::SerializationFailure);
        }
        let namespace = |t: &Table| {
            crate::catalog::schema_oid(&t.schema, p.schemas.iter().chain(self.st.schemas.values()))
        };
        for t in p.tables.values() {
            // Through the name index: a commit's cost must not grow with the registry. Tables
            // of commits still in flight count too (not yet in the registry).
            let same_name = self.st.table_ids_by_name.get(&t.name).into_iter().flatten();
            // A table this transaction dropped or renamed frees its name (its own version
            // is among this transaction's tables).
            let committed = same_name
                .filter(|id| !p.dropped.contains(id) && !p.tables.contains_key(id))
                .filter_map(|id| self.st.tables.get(id));
            let in_flight = self.st.in_flight.values().flat_map(|f| f.tables.iter());
            if committed
                .chain(in_flight)
                .any(|o| o.id != t.id && o.schema == t.schema && o.name == t.name)
            {
                // What PostgreSQL answers the later of two concurrent CREATEs once the first
                // commits (its row type's entry in pg_type collides first).
                return Err(catalog_key_taken("pg_type", "typ", &t.name, namespace(t)));
            }
            // Indexes are relations too: no name this transaction gives a table or index may
            // be another relation's of the schema, committed meanwhile or in flight (names
            // its committed version already had were checked when they were given).
            let before = self.st.tables.get(&t.id);
            let had = |name: &str| {
                before.is_some_and(|b| b.name == name || b.index_names().any(|n| n == name))
            };
            let names = || std::iter::once(t.name.as_str()).chain(t.index_names());
            for name in names().filter(|n| !had(n)) {
                let committed = [&self.st.table_ids_by_name, &self.st.table_ids_by_index_name]
                    .into_iter()
                    .filter_map(|by| by.get(name))
                    .flatten()
                    .filter(|id| !p.dropped.contains(id) && !p.tables.contains_key(id))
                    .filter_map(|id| self.st.tables.get(id));
                let in_flight = self.st.in_flight.values().flat_map(|f| f.tables.iter());
                let taken = committed.chain(in_flight).any(|o| {
                    o.id != t.id
                        && o.schema == t.schema
                        && (o.index_names().any(|n| n == name)
                            || (o.name == name && name != t.name))
                });
                if taken {
                    return Err(catalog_key_taken("pg_class", "rel", name, namespace(t)));
                }
            }
        }
        let seq = self.st.next_seq;
        self.st.next_seq += 1;
        let mut puts: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(p.writes.len() + 8);
        let versioned = |lk: &[u8]| {
            let mut k = lk.to_vec();
            keys::push_version(&mut k, seq);
            k
        };
        for (lk, w) in &p.writes {
            let env = match &w.row {
                Some(r) => Envelope::Row(r.clone()),
                None => Envelope::Tombstone,
            };
            if w.row.is_none() && w.base_seq.is_none() {
                continue; // inserted and deleted inside the transaction: nothing to record
            }
            let encoded = env.encode();
            if let Some(t) = table_of(w.table_id).filter(|t| !t.indexes.is_empty()) {
                // Index entries carry the row, versioned at the same commit: an entry moves
                // (tombstone + new key) when its values change, else it is rewritten in place.
                let old = replaced.get(lk);
                // The committed row is read by the committed definition (an ALTER of this
                // transaction may have moved its columns).
                let old_def = self.st.tables.get(&w.table_id).unwrap_or(t);
                for (no, ix) in t.indexes.iter().enumerate() {
                    // An index this transaction made has no entry for the old row yet.
                    let old_key = match (old, old_def.index_at_slot(ix.slot)) {
                        (Some(r), Some(old_no)) => {
                            Some(crate::exec::index_entry_key(old_def, old_no, r, lk)?)
                        }
                        _ => None,
                    };
                    let new_key = match &w.row {
                        Some(r) => Some(crate::exec::index_entry_key(t, no, r, lk)?),
                        None => None,
                    };
                    if let Some(ok) = &old_key {
                        if new_key.as_ref() != Some(ok) {
                            puts.push((versioned(ok), Envelope::Tombstone.encode()));
                        }
                    }
                    if let Some(nk) = &new_key {
                        puts.push((versioned(nk), encoded.clone()));
                    }
                }
            }
            puts.push((versioned(lk), encoded));
        }
        self.plan_index_changes(kv, &p, &mut puts, seq)?;
        for (k, row) in &p.index_fixes {
            let env = match row {
                Some(r) => Envelope::Row(r.clone()),
                None => Envelope::Tombstone,
            };
            puts.push((versioned(k), env.encode()));
        }
        for t in p.tables.values_mut() {
            if t.layout == LAYOUT_THIS_COMMIT {
                Arc::make_mut(t).layout = seq;
            }
            if t.indexes.iter().any(|ix| ix.since == LAYOUT_THIS_COMMIT) {
                for ix in &mut Arc::make_mut(t).indexes {
                    if ix.since == LAYOUT_THIS_COMMIT {
                        ix.since = seq;
                    }
                }
            }
        }
        for t in p.tables.values() {
            puts.push((
                versioned(&keys::table_def_key(t.id)),
                Envelope::TableDef(t.to_proto()).encode(),
            ));
        }
        for id in &p.dropped {
            puts.push((
                versioned(&keys::table_def_key(*id)),
                Envelope::Tombstone.encode(),
            ));
        }
        for name in &p.dropped_schemas {
            puts.push((
                versioned(&keys::schema_key(name)),
                Envelope::Tombstone.encode(),
            ));
        }
        for s in &p.schemas {
            puts.push((
                versioned(&keys::schema_key(&s.name)),
                Envelope::SchemaDef(pb::SchemaDef {
                    name: s.name.clone(),
                    oid: s.oid,
                    comment: s.comment.clone().unwrap_or_default(),
                })
                .encode(),
            ));
        }
        for (id, n) in &p.tuple_counters {
            // The highest number handed out so far, not this transaction's: another
            // transaction may have taken higher ones and committed first, and the counter a
            // later batch writes must not fall below them (a restart would hand them out again).
            let highest = self.st.tuple_counters.get(id).copied().unwrap_or(0).max(*n);
            let mut k = keys::meta_key(META_TUPLE_PREFIX);
            k.extend_from_slice(&id.to_be_bytes());
            puts.push((k, highest.to_be_bytes().to_vec()));
        }
        let mut deletes: Vec<Vec<u8>> = p.excise.clone();
        let mut written_sequences: Vec<u32> = Vec::new();
        {
            // Sequence values: those changed since a commit last wrote them, of sequences
            // that exist after this commit (the ones it creates among them), and the values
            // of the sequences it creates; a dropped sequence's value goes with it. (A
            // sequence another open transaction created is written by that one's commit.)
            let seq_key = |id: u32| {
                let mut k = keys::meta_key(META_SEQUENCE_PREFIX);
                k.extend_from_slice(&id.to_be_bytes());
                k
            };
            let states = self.st.sequences.get_mut();
            let created = p.tables.values().filter(|t| t.sequence.is_some());
            let ids: BTreeSet<u32> = std::mem::take(&mut states.unsaved)
                .into_iter()
                .chain(created.map(|t| t.id))
                .collect();
            written_sequences.extend(ids.iter().copied());
            for id in ids {
                let exists = p.tables.get(&id).map_or_else(
                    || {
                        self.st
                            .tables
                            .get(&id)
                            .is_some_and(|t| t.sequence.is_some())
                            && !p.dropped.contains(&id)
                    },
                    |t| t.sequence.is_some(),
                );
                if let (true, Some(v)) = (exists, states.values.get(&id)) {
                    puts.push((seq_key(id), v.encode()));
                }
            }
            // (The value itself is forgotten once the drop lands.)
            for id in &p.dropped {
                if self.st.tables.get(id).is_some_and(|t| t.sequence.is_some()) {
                    deletes.push(seq_key(*id));
                }
            }
        }
        for (k, v) in &p.meta {
            match v {
                Some(v) => puts.push((k.clone(), v.clone())),
                None => deletes.push(k.clone()),
            }
        }
        puts.push((keys::meta_key(META_COMMIT_SEQ), seq.to_be_bytes().to_vec()));
        puts.push((
            keys::meta_key(META_NEXT_TABLE_ID),
            (self.st.next_table_id as u64).to_be_bytes().to_vec(),
        ));
        puts.push((
            keys::meta_key(META_NEXT_OID),
            (self.st.next_oid as u64).to_be_bytes().to_vec(),
        ));
        let registry_changes = !(p.tables.is_empty()
            && p.dropped.is_empty()
            && p.schemas.is_empty()
            && p.dropped_schemas.is_empty());
        let written =
            (!registry_changes && puts.len() + deletes.len() <= WRITE_SET_KEYS).then(|| {
                let mut w: Vec<Vec<u8>> = puts
                    .iter()
                    .map(|(k, _)| k.clone())
                    .chain(deletes.iter().cloned())
                    .collect();
                w.sort_unstable();
                w
            });
        self.st.in_flight.insert(
            seq,
            InFlight {
                keys: p.writes.keys().chain(p.meta.keys()).cloned().collect(),
                written,
                tables: p.tables.values().cloned().collect(),
                dropped: p.dropped.clone(),
                schemas: p.schemas.clone(),
                dropped_schemas: p.dropped_schemas.clone(),
                tuple_counters: p.tuple_counters.clone(),
                sequences: written_sequences,
            },
        );
        sess.awaiting = Some(AwaitingCommit {
            seq,
            tag,
            settings,
            serial: txn_serial,
        });
        Ok(Some(CommitBatch {
            seq: CommitSeq(seq),
            puts,
            deletes,
        }))
    }

    /// The host reports the outcome of the batch it was given; the suspended request continues.
    /// Batches must be reported in sequence order.
    pub fn commit_finished(
        &mut self,
        kv: &dyn KvRead,
        sid: SessionId,
        outcome: Result<(), crate::api::CommitFailure>,
    ) -> Reply {
        let outcome = outcome.map_err(|f| {
            if f.fenced {
                SqlError::Fenced
            } else {
                SqlError::Storage(crate::api::KvError {
                    message: f.message,
                    transient: f.transient,
                })
            }
        });
        let Some(mut sess) = self.sessions.remove(&sid) else {
            return Self::missing_session();
        };
        let Some(aw) = sess.awaiting.take() else {
            self.sessions.insert(sid, sess);
            return Reply {
                outputs: vec![],
                error: Some(PgError::new(
                    "XX000",
                    "no commit in progress for this session",
                )),
                status: TxnStatus::Idle,
                commit: None,
                settings: Vec::new(),
                wait: None,
                locks_released: false,
            };
        };
        let flight = self.st.in_flight.remove(&aw.seq);
        let reply = match outcome {
            Ok(()) => {
                if let Some(f) = flight {
                    let from = self.st.latest;
                    self.st.latest = self.st.latest.max(aw.seq);
                    self.st
                        .copies
                        .committed(from, self.st.latest, f.written.as_deref());
                    self.st
                        .scans
                        .get_mut()
                        .committed(from, self.st.latest, f.written.as_deref());
                    for mut t in f.tables {
                        Arc::make_mut(&mut t).version = aw.seq;
                        self.st.put_table(t);
                    }
                    for id in f.dropped {
                        self.st.remove_table(id);
                        self.st.sequences.get_mut().values.remove(&id);
                    }
                    for name in &f.dropped_schemas {
                        self.st.schemas.remove(name);
                    }
                    for s in f.schemas {
                        self.st.schemas.insert(s.name.clone(), s);
                    }
                    let _ = f.tuple_counters;
                }
                sess.settings.commit(aw.settings);
                if let Some(tag) = aw.tag {
                    sess.outputs.push(Output::Command { tag });
                }
                self.run(kv, &mut sess)
            }
            Err(e) => {
                // The values the batch carried are still to be written by a later commit.
                if let Some(f) = flight {
                    let states = self.st.sequences.get_mut();
                    states.unsaved.extend(f.sequences);
                }
                sess.cursors.forget_transaction(aw.serial);
                self.fail(&mut sess, e)
            }
        };
        self.finish(sess, reply)
    }
}
