//! Snapshot lifecycle (spec F-31): the retain-from floor, leases, excision, checkpoints and the
//! logical restore. Everything here is planning and checking over the store the host supplies;
//! the writes go through the ordinary commit path (one batch, fencing, group commit), so a
//! lifecycle operation is atomic, durable and conflict-checked like any transaction.
//!
//! Snapshot ids are DuckLake's (`ducklake_snapshot.snapshot_id`); RockLake's MVCC works on
//! commit points. Snapshot `S` maps to the commit that inserted its `ducklake_snapshot` row,
//! `c(S)`: reading the catalog at `c(S)` shows it exactly as DuckLake left it after `S`.
//! See `docs/lifecycle.md` for the states and transitions.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use sqlparser::ast::{self, Expr, SelectItem, SetExpr, TableFactor};

use crate::api::{Output, TextRows};
use crate::catalog::Table;
use crate::engine::latest_version;
use crate::envelope::Envelope;
use crate::error::SqlError;
use crate::exec::Cx;
use crate::keys;
use crate::types::{PgType, Value};

/// Leases count as live this long after their expiry: the clock-skew tolerance between the
/// node that took a lease and the node that collects garbage.
pub const SKEW_TOLERANCE_MICROS: i64 = 5_000_000;
/// Default lease time to live.
pub const DEFAULT_LEASE_SECS: i64 = 3600;
/// Default bound on the row versions one excision batch deletes.
pub const DEFAULT_EXCISE_BATCH: usize = 10_000;

const RETAIN_FROM: &str = "lifecycle/retain_from";
const RETAIN_SEQ: &str = "lifecycle/retain_seq";
const EXCISED_SEQ: &str = "lifecycle/excised_seq";
const EXCISE_CURSOR: &str = "lifecycle/excise_cursor";
const NEXT_LEASE: &str = "lifecycle/next_lease";
const NEXT_CHECKPOINT: &str = "lifecycle/next_checkpoint";
pub const LEASE_PREFIX: &str = "lifecycle/lease/";
pub const CHECKPOINT_PREFIX: &str = "lifecycle/checkpoint/";
const SCAN_BATCH: usize = 4096;

/// Result columns of each function (also what Describe answers before executing).
const STATUS_COLUMNS: &[(&str, PgType)] = &[("name", PgType::Text), ("value", PgType::Text)];
const GC_COLUMNS: &[(&str, PgType)] = &[
    ("retain_from_before", PgType::Int8),
    ("retain_from", PgType::Int8),
    ("commit_floor", PgType::Int8),
    ("excisable_versions", PgType::Int8),
    ("excisable_bytes", PgType::Int8),
    ("applied", PgType::Bool),
    ("blocked_by", PgType::Text),
];
const EXCISE_COLUMNS: &[(&str, PgType)] = &[
    ("before", PgType::Int8),
    ("commit_cut", PgType::Int8),
    ("versions", PgType::Int8),
    ("bytes", PgType::Int8),
    ("resumed", PgType::Bool),
    ("done", PgType::Bool),
    ("applied", PgType::Bool),
];
const RESTORE_COLUMNS: &[(&str, PgType)] = &[
    ("checkpoint_id", PgType::Int8),
    ("snapshot_id", PgType::Int8),
    ("hide_snapshot", PgType::Int8),
    ("hidden_rows", PgType::Int8),
    ("revived_rows", PgType::Int8),
];
const REPAIR_COLUMNS: &[(&str, PgType)] = &[
    ("check", PgType::Text),
    ("subject", PgType::Text),
    ("fix", PgType::Text),
    ("applied", PgType::Bool),
];
const VERIFY_COLUMNS: &[(&str, PgType)] = &[
    ("check", PgType::Text),
    ("subject", PgType::Text),
    ("detail", PgType::Text),
];
const LEASE_LIST_COLUMNS: &[(&str, PgType)] = &[
    ("lease_id", PgType::Int8),
    ("snapshot_id", PgType::Int8),
    ("commit_seq", PgType::Int8),
    ("expires_at", PgType::Timestamptz),
    ("holder", PgType::Text),
    ("live", PgType::Bool),
];
const CHECKPOINT_LIST_COLUMNS: &[(&str, PgType)] = &[
    ("checkpoint_id", PgType::Int8),
    ("snapshot_id", PgType::Int8),
    ("commit_seq", PgType::Int8),
    ("created_at", PgType::Timestamptz),
    ("name", PgType::Text),
];
const LEASE_COLUMNS: &[(&str, PgType)] = &[
    ("lease_id", PgType::Int8),
    ("snapshot_id", PgType::Int8),
    ("commit_seq", PgType::Int8),
    ("time", PgType::Timestamptz),
    ("text", PgType::Text),
];
const CHECKPOINT_COLUMNS: &[(&str, PgType)] = &[
    ("checkpoint_id", PgType::Int8),
    ("snapshot_id", PgType::Int8),
    ("commit_seq", PgType::Int8),
    ("time", PgType::Timestamptz),
    ("text", PgType::Text),
];

/// The result columns of `rocklake_<name>`, for Parse/Describe (which must not execute).
pub fn result_columns(name: &str) -> Option<&'static [(&'static str, PgType)]> {
    Some(match name {
        "rocklake_status" => STATUS_COLUMNS,
        "rocklake_leases" => LEASE_LIST_COLUMNS,
        "rocklake_checkpoints" => CHECKPOINT_LIST_COLUMNS,
        "rocklake_lease" | "rocklake_lease_renew" | "rocklake_lease_release" => LEASE_COLUMNS,
        "rocklake_checkpoint_create" | "rocklake_checkpoint_drop" => CHECKPOINT_COLUMNS,
        "rocklake_gc_plan" | "rocklake_gc_apply" => GC_COLUMNS,
        "rocklake_excise_plan" | "rocklake_excise_apply" => EXCISE_COLUMNS,
        "rocklake_checkpoint_restore" => RESTORE_COLUMNS,
        "rocklake_repair" => REPAIR_COLUMNS,
        "rocklake_verify" => VERIFY_COLUMNS,
        _ => return None,
    })
}

/// Row description of a result.
pub fn fields(cols: &[(&str, PgType)]) -> Vec<crate::api::FieldDesc> {
    cols.iter()
        .map(|(name, ty)| crate::api::FieldDesc {
            name: name.to_string(),
            table_oid: 0,
            column_id: 0,
            type_oid: ty.oid(),
            type_len: ty.typlen(),
            type_mod: -1,
        })
        .collect()
}

/// Why a lifecycle operation was refused. Each variant says what to do instead.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LifecycleError {
    /// Advance the floor with gc apply first, or excise at or below it.
    #[error("ExcisionUnsafe: {reason}")]
    ExcisionUnsafe { reason: String },
    /// Release the lease, wait for it to expire, or choose a lower floor.
    #[error("snapshot {snapshot_id} is leased (lease {lease_id}) until {expires}")]
    Leased {
        lease_id: u64,
        snapshot_id: u64,
        expires: String,
    },
    /// Drop the checkpoint first, or choose a lower floor.
    #[error("snapshot {snapshot_id} is pinned by checkpoint {checkpoint_id}")]
    CheckpointPinned {
        checkpoint_id: u64,
        snapshot_id: u64,
    },
    /// Wait for the open transaction to end.
    #[error("an open transaction still reads commit {commit_seq}, older than the new floor")]
    SessionPinned { commit_seq: u64 },
    /// The floor only moves forward.
    #[error("the retain-from floor only moves forward (it is {current}, {requested} was asked)")]
    FloorBackwards { current: u64, requested: u64 },
    /// Choose a snapshot that exists (`SELECT snapshot_id FROM ducklake_snapshot`).
    #[error("{message}")]
    BadSnapshot { message: String },
    /// List them with `rocklake_leases()` / `rocklake_checkpoints()`.
    #[error("{what} {id} does not exist")]
    UnknownObject { what: &'static str, id: u64 },
    /// Attach DuckLake first; with several DuckLake metadata schemas, keep one per catalog.
    #[error("{message}")]
    NoLake { message: String },
    /// Restore to a later checkpoint, or re-create the removed objects in DuckDB.
    #[error("cannot restore checkpoint {checkpoint_id}: {reason}")]
    RestoreUnsafe { checkpoint_id: u64, reason: String },
    /// Run the function on its own, outside BEGIN ... COMMIT.
    #[error("{function} cannot run inside a transaction block")]
    InTransactionBlock { function: String },
    /// Fix the call (see `docs/lifecycle.md` for the signatures).
    #[error("{message}")]
    BadCall { message: String },
}

impl LifecycleError {
    pub fn sqlstate(&self) -> &'static str {
        match self {
            LifecycleError::ExcisionUnsafe { .. } | LifecycleError::RestoreUnsafe { .. } => "55000",
            LifecycleError::Leased { .. }
            | LifecycleError::CheckpointPinned { .. }
            | LifecycleError::SessionPinned { .. } => "55006",
            LifecycleError::FloorBackwards { .. }
            | LifecycleError::BadSnapshot { .. }
            | LifecycleError::BadCall { .. } => "22023",
            LifecycleError::UnknownObject { .. } => "42704",
            LifecycleError::NoLake { .. } => "42P01",
            LifecycleError::InTransactionBlock { .. } => "25001",
        }
    }

    pub fn hint(&self) -> Option<&'static str> {
        Some(match self {
            LifecycleError::ExcisionUnsafe { .. } => {
                "Run rocklake_gc_apply(retain_from) first; excision never goes past the floor."
            }
            LifecycleError::Leased { .. } => {
                "Release the lease (rocklake_lease_release) or choose a lower retain-from floor."
            }
            LifecycleError::CheckpointPinned { .. } => {
                "Drop the checkpoint (rocklake_checkpoint_drop) or choose a lower floor."
            }
            LifecycleError::SessionPinned { .. } => {
                "Retry when the long-running transaction has ended."
            }
            LifecycleError::RestoreUnsafe { .. } => {
                "Rows with unique ids cannot be revived without reusing ids; restore a later checkpoint."
            }
            _ => return None,
        })
    }
}

impl From<LifecycleError> for SqlError {
    fn from(e: LifecycleError) -> Self {
        SqlError::Lifecycle(e)
    }
}

/// A lease or a checkpoint: a snapshot kept readable at its commit point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinRecord {
    pub snapshot_id: u64,
    pub commit_seq: u64,
    /// Lease: expiry; checkpoint: creation time (microseconds since 2000-01-01 UTC).
    pub time: i64,
    /// Lease: holder; checkpoint: name.
    pub text: String,
}

impl PinRecord {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24 + self.text.len());
        out.extend_from_slice(&self.snapshot_id.to_be_bytes());
        out.extend_from_slice(&self.commit_seq.to_be_bytes());
        out.extend_from_slice(&self.time.to_be_bytes());
        out.extend_from_slice(self.text.as_bytes());
        out
    }

    pub fn decode(v: &[u8]) -> Option<PinRecord> {
        let u = |r: std::ops::Range<usize>| -> Option<[u8; 8]> { v.get(r)?.try_into().ok() };
        Some(PinRecord {
            snapshot_id: u64::from_be_bytes(u(0..8)?),
            commit_seq: u64::from_be_bytes(u(8..16)?),
            time: i64::from_be_bytes(u(16..24)?),
            text: String::from_utf8(v.get(24..)?.to_vec()).ok()?,
        })
    }
}

/// Checks one lifecycle meta entry for `verify`: `Some(problem)` when it is malformed.
pub fn check_meta_entry(name: &[u8], value: &[u8]) -> Option<String> {
    let name = String::from_utf8_lossy(name);
    if name.starts_with(LEASE_PREFIX) || name.starts_with(CHECKPOINT_PREFIX) {
        return PinRecord::decode(value)
            .is_none()
            .then(|| "malformed lease/checkpoint record".to_string());
    }
    if name == EXCISE_CURSOR {
        return (value.len() < 9).then(|| "malformed excision cursor".to_string());
    }
    if name.starts_with(crate::engine::META_SEQUENCE_PREFIX) {
        return crate::sequence::SeqValue::decode(value)
            .is_none()
            .then(|| "malformed sequence value record".to_string());
    }
    (value.len() != 8).then(|| format!("value has {} bytes, expected 8", value.len()))
}

/// A recognized call: the function, its constant arguments, and the selected columns
/// (`None`: all).
pub struct LifecycleCall {
    pub name: String,
    pub args: Vec<Expr>,
    pub columns: Option<Vec<String>>,
}

/// `SELECT * FROM rocklake_x(args)`, `SELECT col, … FROM rocklake_x(args)` or
/// `SELECT rocklake_x(args)`.
pub fn recognize(q: &ast::Query) -> Option<LifecycleCall> {
    let (name, args) = recognize_call(q)?;
    let SetExpr::Select(sel) = q.body.as_ref() else {
        return None;
    };
    let columns = match sel.projection.as_slice() {
        [SelectItem::Wildcard(_)] | [SelectItem::UnnamedExpr(Expr::Function(_))] => None,
        items => Some(
            items
                .iter()
                .map(|i| match i {
                    SelectItem::UnnamedExpr(Expr::Identifier(id)) => Some(crate::query::ident(id)),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?,
        ),
    };
    Some(LifecycleCall {
        name,
        args,
        columns,
    })
}

/// Keeps the named result columns, in the order asked.
pub fn project(out: Output, columns: &[String]) -> Result<Output, SqlError> {
    let Output::Rows { fields, rows, tag } = out else {
        return Ok(out);
    };
    let idx = columns
        .iter()
        .map(|c| {
            fields
                .iter()
                .position(|f| &f.name == c)
                .ok_or_else(|| SqlError::UndefinedColumn { name: c.clone() })
        })
        .collect::<Result<Vec<usize>, SqlError>>()?;
    let mut kept = TextRows::new();
    for r in rows.iter() {
        let values: Vec<Option<&[u8]>> = r.collect();
        kept.push(idx.iter().map(|i| values.get(*i).copied().flatten()))?;
    }
    Ok(Output::Rows {
        fields: idx.iter().map(|i| fields[*i].clone()).collect(),
        rows: kept,
        tag,
    })
}

fn recognize_call(q: &ast::Query) -> Option<(String, Vec<Expr>)> {
    if q.with.is_some() || q.order_by.is_some() || q.limit_clause.is_some() {
        return None;
    }
    let SetExpr::Select(sel) = q.body.as_ref() else {
        return None;
    };
    let name_args = |name: &ast::ObjectName, args: Vec<Expr>| {
        let n = crate::query::object_name(name).concat().to_lowercase();
        n.starts_with("rocklake_").then_some((n, args))
    };
    match (sel.from.as_slice(), sel.projection.as_slice()) {
        ([twj], items)
            if twj.joins.is_empty()
                && sel.selection.is_none()
                && !items.is_empty()
                && items.iter().all(|i| {
                    matches!(
                        i,
                        SelectItem::Wildcard(_) | SelectItem::UnnamedExpr(Expr::Identifier(_))
                    )
                }) =>
        {
            let TableFactor::Table {
                name,
                args: Some(a),
                ..
            } = &twj.relation
            else {
                return None;
            };
            let args = a
                .args
                .iter()
                .map(|fa| match fa {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e.clone()),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?;
            name_args(name, args)
        }
        ([], [SelectItem::UnnamedExpr(Expr::Function(f))]) => {
            let args = match &f.args {
                ast::FunctionArguments::None => vec![],
                ast::FunctionArguments::List(l) => l
                    .args
                    .iter()
                    .map(|fa| match fa {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e.clone()),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()?,
                ast::FunctionArguments::Subquery(_) => return None,
            };
            name_args(&f.name, args)
        }
        _ => None,
    }
}

fn int_arg(function: &str, args: &[Expr], i: usize, default: Option<i64>) -> Result<i64, SqlError> {
    let bad = || LifecycleError::BadCall {
        message: format!(
            "argument {} of {function} must be an integer constant",
            i + 1
        ),
    };
    let Some(e) = args.get(i) else {
        return default.ok_or_else(|| {
            LifecycleError::BadCall {
                message: format!("{function} needs argument {}", i + 1),
            }
            .into()
        });
    };
    let (neg, e) = match e {
        Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => (true, expr.as_ref()),
        e => (false, e),
    };
    match e {
        Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => {
                let n: i64 = n.parse().map_err(|_| bad())?;
                Ok(if neg { -n } else { n })
            }
            _ => Err(bad().into()),
        },
        _ => Err(bad().into()),
    }
}

fn text_arg(function: &str, args: &[Expr], i: usize, default: &str) -> Result<String, SqlError> {
    match args.get(i) {
        None => Ok(default.to_string()),
        Some(Expr::Value(v)) => match &v.value {
            ast::Value::SingleQuotedString(s) => Ok(s.clone()),
            ast::Value::Boolean(b) => Ok(b.to_string()),
            _ => Err(LifecycleError::BadCall {
                message: format!("argument {} of {function} must be a string constant", i + 1),
            }
            .into()),
        },
        Some(_) => Err(LifecycleError::BadCall {
            message: format!("argument {} of {function} must be a constant", i + 1),
        }
        .into()),
    }
}

fn non_negative(function: &str, v: i64) -> Result<u64, SqlError> {
    u64::try_from(v).map_err(|_| {
        LifecycleError::BadCall {
            message: format!("{function}: {v} must not be negative"),
        }
        .into()
    })
}

/// The DuckLake metadata this catalog holds: the schema of its `ducklake_snapshot` table.
struct Lake {
    snapshot: Arc<Table>,
}

impl Lake {
    fn find(cx: &Cx<'_>) -> Result<Lake, SqlError> {
        let found: Vec<&Arc<Table>> = cx
            .st
            .tables
            .values()
            .filter(|t| t.name == "ducklake_snapshot")
            .collect();
        match found.as_slice() {
            [t] => Ok(Lake {
                snapshot: Arc::clone(t),
            }),
            [] => Err(LifecycleError::NoLake {
                message: "this catalog holds no DuckLake metadata (no ducklake_snapshot table)"
                    .into(),
            }
            .into()),
            many => Err(LifecycleError::NoLake {
                message: format!(
                    "this catalog holds {} DuckLake metadata schemas; lifecycle operations need exactly one",
                    many.len()
                ),
            }
            .into()),
        }
    }

    fn schema(&self) -> &str {
        &self.snapshot.schema
    }

    fn qualified(&self, table: &str) -> String {
        format!("{}.{}", quote_ident(self.schema()), quote_ident(table))
    }

    /// Tables of the lake whose rows carry `begin_snapshot` / `end_snapshot`.
    fn versioned_tables(&self, cx: &Cx<'_>) -> Vec<Arc<Table>> {
        cx.st
            .tables
            .values()
            .filter(|t| {
                t.schema == self.snapshot.schema
                    && t.column_index("begin_snapshot").is_some()
                    && t.column_index("end_snapshot").is_some()
            })
            .cloned()
            .collect()
    }

    /// Newest snapshot id (at the latest commit).
    fn latest_snapshot(&self, cx: &mut Cx<'_>) -> Result<Option<u64>, SqlError> {
        let sql = format!(
            "SELECT max(snapshot_id) FROM {}",
            self.qualified("ducklake_snapshot")
        );
        Ok(
            match cx
                .select_values(&sql, None)?
                .first()
                .and_then(|r| r.first())
            {
                Some(Value::Int(n)) => u64::try_from(*n).ok(),
                _ => None,
            },
        )
    }

    /// `c(S)`: the commit that inserted snapshot `S` (its oldest live version, which stays
    /// until excised even after DuckLake expires the snapshot).
    fn creation_seq(&self, cx: &Cx<'_>, snapshot_id: u64) -> Result<Option<u64>, SqlError> {
        let id = i64::try_from(snapshot_id).map_err(|_| LifecycleError::BadSnapshot {
            message: format!("snapshot {snapshot_id} is out of range"),
        })?;
        let v = Value::Int(id);
        let logical = keys::row_logical_key(self.snapshot.id, &[(&v, PgType::Int8)]);
        let end = keys::prefix_end(&logical);
        let mut oldest = None;
        for (raw, value) in &cx.kv.scan(&logical, &end, usize::MAX)? {
            let (lk, seq) = keys::split_version(raw)?;
            if lk == logical.as_slice() && !matches!(Envelope::decode(value)?, Envelope::Tombstone)
            {
                oldest = Some(seq);
            }
        }
        Ok(oldest)
    }
}

fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn meta_u64(cx: &Cx<'_>, name: &str) -> Result<u64, SqlError> {
    match cx.kv.get(&keys::meta_key(name))? {
        Some(v) => Ok(u64::from_be_bytes(v.as_slice().try_into().map_err(
            |_| {
                SqlError::Corrupt(crate::error::DecodeError::Payload {
                    message: format!("lifecycle record {name} is not 8 bytes"),
                })
            },
        )?)),
        None => Ok(0),
    }
}

fn records(cx: &Cx<'_>, prefix: &str) -> Result<Vec<(u64, PinRecord)>, SqlError> {
    let p = keys::meta_key(prefix);
    let mut out = Vec::new();
    for (k, v) in &cx.kv.scan(&p, &keys::prefix_end(&p), usize::MAX)? {
        let id = k
            .get(p.len()..)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_be_bytes);
        let (Some(id), Some(rec)) = (id, PinRecord::decode(v)) else {
            return Err(SqlError::Corrupt(crate::error::DecodeError::Payload {
                message: format!("malformed lifecycle record under {prefix}"),
            }));
        };
        out.push((id, rec));
    }
    Ok(out)
}

fn record_key(prefix: &str, id: u64) -> Vec<u8> {
    let mut k = keys::meta_key(prefix);
    k.extend_from_slice(&id.to_be_bytes());
    k
}

fn lease_live(rec: &PinRecord, now: i64) -> bool {
    now <= rec.time.saturating_add(SKEW_TOLERANCE_MICROS)
}

/// Result-set building: every column is int8, text or bool.
struct Rows {
    cols: Vec<(&'static str, PgType)>,
    rows: Vec<Vec<Value>>,
}

impl Rows {
    fn new(cols: &[(&'static str, PgType)]) -> Rows {
        Rows {
            cols: cols.to_vec(),
            rows: vec![],
        }
    }
    fn push(&mut self, row: Vec<Value>) {
        self.rows.push(row);
    }
    fn output(self) -> Result<Output, SqlError> {
        let n = self.rows.len();
        let rows = TextRows::try_from_rows(self.rows.iter().map(|r| {
            r.iter()
                .zip(&self.cols)
                .map(|(v, (_, ty))| crate::types::format_text(v, *ty))
        }))?;
        Ok(Output::Rows {
            fields: fields(&self.cols),
            rows,
            tag: format!("SELECT {n}"),
        })
    }
}

fn int(v: u64) -> Value {
    Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
}

fn ts(micros: i64) -> Value {
    Value::Timestamp(micros)
}

fn opt_text(s: Option<String>) -> Value {
    s.map_or(Value::Null, Value::text)
}

/// Runs `rocklake_<name>(args)`.
pub fn call(cx: &mut Cx<'_>, name: &str, args: &[Expr]) -> Result<Output, SqlError> {
    let writes = match name {
        "rocklake_status"
        | "rocklake_leases"
        | "rocklake_checkpoints"
        | "rocklake_gc_plan"
        | "rocklake_excise_plan"
        | "rocklake_verify" => false,
        "rocklake_repair" => repair_applies(name, args)?,
        _ => true,
    };
    if writes {
        if cx.sess.txn.as_ref().is_some_and(|t| t.explicit) {
            return Err(LifecycleError::InTransactionBlock {
                function: name.to_string(),
            }
            .into());
        }
        cx.check_writable(name)?;
    }
    match name {
        "rocklake_status" => status(cx),
        "rocklake_leases" => list(cx, LEASE_PREFIX),
        "rocklake_checkpoints" => list(cx, CHECKPOINT_PREFIX),
        "rocklake_lease" => {
            let snap = non_negative(name, int_arg(name, args, 0, None)?)?;
            let ttl = int_arg(name, args, 1, Some(DEFAULT_LEASE_SECS))?;
            let holder = text_arg(name, args, 2, &cx.sess.user.clone())?;
            lease(cx, snap, ttl, holder)
        }
        "rocklake_lease_renew" => {
            let id = non_negative(name, int_arg(name, args, 0, None)?)?;
            let ttl = int_arg(name, args, 1, Some(DEFAULT_LEASE_SECS))?;
            lease_renew(cx, id, ttl)
        }
        "rocklake_lease_release" => {
            let id = non_negative(name, int_arg(name, args, 0, None)?)?;
            drop_record(cx, LEASE_PREFIX, "lease", id)
        }
        "rocklake_gc_plan" | "rocklake_gc_apply" => {
            let floor = non_negative(name, int_arg(name, args, 0, None)?)?;
            gc(cx, floor, name == "rocklake_gc_apply")
        }
        "rocklake_excise_plan" | "rocklake_excise_apply" => {
            let before = non_negative(name, int_arg(name, args, 0, None)?)?;
            let batch = int_arg(name, args, 1, Some(DEFAULT_EXCISE_BATCH as i64))?;
            let batch = usize::try_from(batch.max(1)).unwrap_or(DEFAULT_EXCISE_BATCH);
            excise(cx, before, batch, name == "rocklake_excise_apply")
        }
        "rocklake_checkpoint_create" => {
            let label = text_arg(name, args, 0, "")?;
            checkpoint_create(cx, label)
        }
        "rocklake_checkpoint_drop" => {
            let id = non_negative(name, int_arg(name, args, 0, None)?)?;
            drop_record(cx, CHECKPOINT_PREFIX, "checkpoint", id)
        }
        "rocklake_checkpoint_restore" => {
            let id = non_negative(name, int_arg(name, args, 0, None)?)?;
            restore(cx, id)
        }
        "rocklake_repair" => {
            let apply = repair_applies(name, args)?;
            repair(cx, apply)
        }
        "rocklake_verify" => verify(cx),
        other => Err(SqlError::UndefinedFunction {
            message: format!("function {other}() does not exist"),
            hint: Some(
                "RockLake's lifecycle functions are listed in docs/lifecycle.md.".to_string(),
            ),
        }),
    }
}

/// `rocklake_verify()`: verify_catalog on the catalog as committed, from a running server —
/// one row per violation, then a `summary` row (what was checked; `ok` or how many failed).
fn verify(cx: &mut Cx<'_>) -> Result<Output, SqlError> {
    // A fresh engine over the committed store: verify reads the catalog as a new session
    // would, independent of this session's own transaction.
    let mut engine = crate::Engine::open(cx.kv)?;
    let report = crate::verify::verify(&mut engine, cx.kv)?;
    let mut r = Rows::new(VERIFY_COLUMNS);
    for v in &report.violations {
        r.push(vec![
            Value::text(v.check),
            Value::text(v.subject.as_str()),
            Value::text(v.detail.as_str()),
        ]);
    }
    let verdict = match report.violations.len() {
        0 => "ok".to_string(),
        n => format!("{n} violation{}", if n == 1 { "" } else { "s" }),
    };
    r.push(vec![
        Value::Text("summary".into()),
        Value::text(report.summary()),
        Value::text(verdict),
    ]);
    r.output()
}

fn status(cx: &mut Cx<'_>) -> Result<Output, SqlError> {
    let mut r = Rows::new(STATUS_COLUMNS);
    let lake_latest = match Lake::find(cx) {
        Ok(l) => l.latest_snapshot(cx)?.map(|s| s.to_string()),
        Err(_) => None,
    };
    let now = cx.st.now;
    let leases = records(cx, LEASE_PREFIX)?;
    let live = leases.iter().filter(|(_, l)| lease_live(l, now)).count();
    let items: Vec<(&str, Option<String>)> = vec![
        ("latest_commit", Some(cx.st.latest.to_string())),
        ("latest_snapshot", lake_latest),
        ("retain_from", Some(meta_u64(cx, RETAIN_FROM)?.to_string())),
        ("retain_commit", Some(meta_u64(cx, RETAIN_SEQ)?.to_string())),
        (
            "excised_commit",
            Some(meta_u64(cx, EXCISED_SEQ)?.to_string()),
        ),
        (
            "excision_in_progress",
            Some(
                cx.kv
                    .get(&keys::meta_key(EXCISE_CURSOR))?
                    .is_some()
                    .to_string(),
            ),
        ),
        ("leases_live", Some(live.to_string())),
        ("leases_expired", Some((leases.len() - live).to_string())),
        (
            "checkpoints",
            Some(records(cx, CHECKPOINT_PREFIX)?.len().to_string()),
        ),
    ];
    let (stored_keys, stored_bytes) = stored_size(cx)?;
    let items = items.into_iter().chain([
        ("stored_keys", Some(stored_keys.to_string())),
        ("stored_bytes", Some(stored_bytes.to_string())),
    ]);
    for (k, v) in items {
        r.push(vec![Value::Text(k.into()), opt_text(v)]);
    }
    r.output()
}

/// Keys and key+value bytes the catalog holds (every version, every record): what excision
/// shrinks. The object store reclaims the space after SlateDB compacts and collects garbage.
fn stored_size(cx: &Cx<'_>) -> Result<(u64, u64), SqlError> {
    let (mut n, mut bytes) = (0u64, 0u64);
    let mut cursor = vec![keys::TAG_META];
    let end = vec![0xFF];
    loop {
        let batch = cx.kv.scan(&cursor, &end, SCAN_BATCH)?;
        for (k, v) in &batch {
            n += 1;
            bytes += (k.len() + v.len()) as u64;
        }
        match batch.last() {
            Some((k, _)) if batch.len() == SCAN_BATCH => {
                cursor = k.to_vec();
                cursor.push(0);
            }
            _ => break,
        }
    }
    Ok((n, bytes))
}

fn list(cx: &mut Cx<'_>, prefix: &str) -> Result<Output, SqlError> {
    let lease = prefix == LEASE_PREFIX;
    let mut r = Rows::new(if lease {
        LEASE_LIST_COLUMNS
    } else {
        CHECKPOINT_LIST_COLUMNS
    });
    let now = cx.st.now;
    for (id, rec) in records(cx, prefix)? {
        let mut row = vec![
            int(id),
            int(rec.snapshot_id),
            int(rec.commit_seq),
            ts(rec.time),
            Value::text(rec.text.as_str()),
        ];
        if lease {
            row.push(Value::Bool(lease_live(&rec, now)));
        }
        r.push(row);
    }
    r.output()
}

fn next_id(cx: &mut Cx<'_>, counter: &str) -> Result<u64, SqlError> {
    let id = meta_u64(cx, counter)? + 1;
    cx.pending()?
        .put_meta(keys::meta_key(counter), Some(id.to_be_bytes().to_vec()))?;
    Ok(id)
}

fn pin_row(
    cols: &'static [(&'static str, PgType)],
    id: u64,
    rec: &PinRecord,
) -> Result<Output, SqlError> {
    let mut r = Rows::new(cols);
    r.push(vec![
        int(id),
        int(rec.snapshot_id),
        int(rec.commit_seq),
        ts(rec.time),
        Value::text(rec.text.as_str()),
    ]);
    r.output()
}

fn lease(cx: &mut Cx<'_>, snapshot_id: u64, ttl: i64, holder: String) -> Result<Output, SqlError> {
    if ttl <= 0 {
        return Err(LifecycleError::BadCall {
            message: format!("lease time to live must be positive, not {ttl}"),
        }
        .into());
    }
    let lake = Lake::find(cx)?;
    let floor = meta_u64(cx, RETAIN_FROM)?;
    if snapshot_id < floor {
        return Err(LifecycleError::BadSnapshot {
            message: format!(
                "snapshot {snapshot_id} is below the retain-from floor {floor} and can no longer be leased"
            ),
        }
        .into());
    }
    let Some(seq) = lake.creation_seq(cx, snapshot_id)? else {
        return Err(LifecycleError::BadSnapshot {
            message: format!("snapshot {snapshot_id} does not exist"),
        }
        .into());
    };
    let id = next_id(cx, NEXT_LEASE)?;
    let rec = PinRecord {
        snapshot_id,
        commit_seq: seq,
        time: cx.st.now.saturating_add(ttl.saturating_mul(1_000_000)),
        text: holder,
    };
    cx.pending()?
        .put_meta(record_key(LEASE_PREFIX, id), Some(rec.encode()))?;
    pin_row(LEASE_COLUMNS, id, &rec)
}

fn lease_renew(cx: &mut Cx<'_>, id: u64, ttl: i64) -> Result<Output, SqlError> {
    if ttl <= 0 {
        return Err(LifecycleError::BadCall {
            message: format!("lease time to live must be positive, not {ttl}"),
        }
        .into());
    }
    let now = cx.st.now;
    let Some((_, mut rec)) = records(cx, LEASE_PREFIX)?
        .into_iter()
        .find(|(i, _)| *i == id)
    else {
        return Err(LifecycleError::UnknownObject { what: "lease", id }.into());
    };
    if !lease_live(&rec, now) {
        // An expired lease may already have let the floor pass its snapshot.
        return Err(LifecycleError::BadSnapshot {
            message: format!("lease {id} has expired; take a new lease"),
        }
        .into());
    }
    rec.time = now.saturating_add(ttl.saturating_mul(1_000_000));
    cx.pending()?
        .put_meta(record_key(LEASE_PREFIX, id), Some(rec.encode()))?;
    pin_row(LEASE_COLUMNS, id, &rec)
}

fn drop_record(
    cx: &mut Cx<'_>,
    prefix: &str,
    what: &'static str,
    id: u64,
) -> Result<Output, SqlError> {
    let key = record_key(prefix, id);
    let Some(v) = cx.kv.get(&key)? else {
        return Err(LifecycleError::UnknownObject { what, id }.into());
    };
    let rec = PinRecord::decode(&v).ok_or_else(|| {
        SqlError::Corrupt(crate::error::DecodeError::Payload {
            message: format!("malformed {what} record {id}"),
        })
    })?;
    cx.pending()?.put_meta(key, None)?;
    pin_row(
        if prefix == LEASE_PREFIX {
            LEASE_COLUMNS
        } else {
            CHECKPOINT_COLUMNS
        },
        id,
        &rec,
    )
}

/// What stops the floor from reaching `floor` (whose commit is `seq`).
fn floor_blocker(cx: &Cx<'_>, floor: u64, seq: u64) -> Result<Option<LifecycleError>, SqlError> {
    let now = cx.st.now;
    for (id, l) in records(cx, LEASE_PREFIX)? {
        if l.snapshot_id < floor && lease_live(&l, now) {
            return Ok(Some(LifecycleError::Leased {
                lease_id: id,
                snapshot_id: l.snapshot_id,
                expires: crate::types::format_text(&Value::Timestamp(l.time), PgType::Timestamptz)
                    .unwrap_or_default(),
            }));
        }
    }
    for (id, c) in records(cx, CHECKPOINT_PREFIX)? {
        if c.snapshot_id < floor {
            return Ok(Some(LifecycleError::CheckpointPinned {
                checkpoint_id: id,
                snapshot_id: c.snapshot_id,
            }));
        }
    }
    if let Some(pinned) = cx.st.oldest_session_pin.filter(|p| *p < seq) {
        return Ok(Some(LifecycleError::SessionPinned { commit_seq: pinned }));
    }
    Ok(None)
}

fn gc(cx: &mut Cx<'_>, floor: u64, apply: bool) -> Result<Output, SqlError> {
    let lake = Lake::find(cx)?;
    let current = meta_u64(cx, RETAIN_FROM)?;
    if floor < current {
        return Err(LifecycleError::FloorBackwards {
            current,
            requested: floor,
        }
        .into());
    }
    let latest = lake.latest_snapshot(cx)?.unwrap_or(0);
    if floor == 0 || floor > latest {
        return Err(LifecycleError::BadSnapshot {
            message: format!("retain_from must be a snapshot id between 1 and the latest snapshot ({latest}), not {floor}"),
        }
        .into());
    }
    let Some(seq) = lake.creation_seq(cx, floor)? else {
        return Err(LifecycleError::BadSnapshot {
            message: format!("snapshot {floor} does not exist (expired by DuckLake?); choose an existing snapshot"),
        }
        .into());
    };
    let blocker = floor_blocker(cx, floor, seq)?;
    // Counting what excision could delete reads every version: the plan does it, the apply
    // (which runs under the engine's lock like every statement) does not.
    let scan = if apply {
        None
    } else {
        Some(scan_excisable(cx, seq, &[keys::TAG_ROW], usize::MAX)?)
    };
    if apply {
        if let Some(b) = blocker {
            return Err(b.into());
        }
        let p = cx.pending()?;
        p.put_meta(
            keys::meta_key(RETAIN_FROM),
            Some(floor.to_be_bytes().to_vec()),
        )?;
        p.put_meta(keys::meta_key(RETAIN_SEQ), Some(seq.to_be_bytes().to_vec()))?;
    }
    let mut r = Rows::new(GC_COLUMNS);
    r.push(vec![
        int(current),
        int(floor),
        int(seq),
        scan.as_ref()
            .map_or(Value::Null, |x| int(x.deletes.len() as u64)),
        scan.as_ref().map_or(Value::Null, |x| int(x.bytes)),
        Value::Bool(apply),
        opt_text(blocker.map(|b| b.to_string())),
    ]);
    r.output()
}

/// Versions an excision at commit `cut` deletes, from `start` on, at most `max` (always whole
/// logical keys). Rows come first, then schema and table definitions, so a dropped table's
/// rows go before its definition and no intermediate state has rows without a definition.
pub struct Excisable {
    pub deletes: Vec<Vec<u8>>,
    pub bytes: u64,
    /// Where the next batch starts; `None` when the scan is complete.
    pub next: Option<Vec<u8>>,
}

const PHASES: [(u8, u8); 2] = [
    (keys::TAG_ROW, keys::TAG_INDEX + 1),
    (keys::TAG_SCHEMA, keys::TAG_TABLE_DEF + 1),
];

fn scan_excisable(cx: &Cx<'_>, cut: u64, start: &[u8], max: usize) -> Result<Excisable, SqlError> {
    let mut out = Excisable {
        deletes: vec![],
        bytes: 0,
        next: None,
    };
    // Commit at which each dropped table's definition was removed (None: no definition left).
    let mut dropped_at: HashMap<u32, Option<u64>> = HashMap::new();
    let first_phase = PHASES
        .iter()
        .position(|(lo, hi)| start.first().is_some_and(|b| b >= lo && b < hi))
        .unwrap_or(0);
    for (pi, (lo, hi)) in PHASES.iter().enumerate().skip(first_phase) {
        let mut cursor = if pi == first_phase && !start.is_empty() {
            start.to_vec()
        } else {
            vec![*lo]
        };
        let end = vec![*hi];
        // Versions of the logical key being collected: (raw key, seq, tombstone, bytes).
        let mut group: Vec<(Vec<u8>, u64, bool, u64)> = vec![];
        let mut group_key: Vec<u8> = vec![];
        loop {
            let batch = cx.kv.scan(&cursor, &end, SCAN_BATCH)?;
            let full = batch.len() == SCAN_BATCH;
            for (raw, value) in &batch {
                let (logical, seq) = keys::split_version(raw)?;
                if logical != group_key.as_slice() {
                    if !group.is_empty() {
                        settle(cx, cut, &group_key, &group, &mut dropped_at, &mut out)?;
                        group.clear();
                        if out.deletes.len() >= max {
                            out.next = Some(raw.to_vec());
                            return Ok(out);
                        }
                    }
                    group_key = logical.to_vec();
                }
                let tomb = matches!(Envelope::decode(value)?, Envelope::Tombstone);
                group.push((raw.to_vec(), seq, tomb, (raw.len() + value.len()) as u64));
            }
            match batch.last() {
                Some((k, _)) if full => {
                    cursor = k.to_vec();
                    cursor.push(0);
                }
                _ => break,
            }
        }
        if !group.is_empty() {
            settle(cx, cut, &group_key, &group, &mut dropped_at, &mut out)?;
        }
    }
    Ok(out)
}

/// Decides which versions of one logical key (newest first) no reader at or after `cut` sees.
fn settle(
    cx: &Cx<'_>,
    cut: u64,
    logical: &[u8],
    versions: &[(Vec<u8>, u64, bool, u64)],
    dropped_at: &mut HashMap<u32, Option<u64>>,
    out: &mut Excisable,
) -> Result<(), SqlError> {
    let mut all = false;
    // Index entries share the rows' layout (tag, table id) and their fate.
    if matches!(logical.first(), Some(&keys::TAG_ROW | &keys::TAG_INDEX)) {
        if let Some(id) = logical
            .get(1..5)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_be_bytes)
        {
            if !cx.st.tables.contains_key(&id) {
                let d = match dropped_at.get(&id) {
                    Some(d) => *d,
                    None => {
                        // Commit of the definition's tombstone; 0 when no version is left
                        // (an earlier excision removed it); none while it is still live.
                        let d = match latest_version(cx.kv, &keys::table_def_key(id))? {
                            None => Some(0),
                            Some((s, false)) => Some(s),
                            Some((_, true)) => None,
                        };
                        dropped_at.insert(id, d);
                        d
                    }
                };
                // The table's definition was removed at or before the cut: no reader at or
                // after the cut can see any of its rows.
                all = d.is_some_and(|d| d <= cut);
            }
        }
    }
    let keep_until = if all {
        0
    } else {
        match versions.iter().position(|(_, seq, _, _)| *seq <= cut) {
            // The newest version at or before the cut stays unless it is a tombstone.
            Some(i) if versions[i].2 => i,
            Some(i) => i + 1,
            None => versions.len(),
        }
    };
    for (raw, _, _, bytes) in versions.iter().skip(keep_until) {
        out.deletes.push(raw.clone());
        out.bytes += bytes;
    }
    Ok(())
}

fn excise(cx: &mut Cx<'_>, before: u64, batch: usize, apply: bool) -> Result<Output, SqlError> {
    let floor = meta_u64(cx, RETAIN_FROM)?;
    if floor == 0 {
        return Err(LifecycleError::ExcisionUnsafe {
            reason: "the retain-from floor is not set (retain_from = 0)".into(),
        }
        .into());
    }
    if floor < before {
        return Err(LifecycleError::ExcisionUnsafe {
            reason: format!(
                "the retain-from floor ({floor}) lags behind the requested cut point ({before})"
            ),
        }
        .into());
    }
    let lake = Lake::find(cx)?;
    let floor_seq = meta_u64(cx, RETAIN_SEQ)?;
    // c(before); when DuckLake expired `before` and an earlier excision removed its row, the
    // cut moves up to the next snapshot still known, never beyond the floor.
    let mut cut = None;
    if before > 0 {
        let latest = lake.latest_snapshot(cx)?.unwrap_or(0);
        for s in before..=latest.min(floor) {
            if let Some(seq) = lake.creation_seq(cx, s)? {
                cut = Some(seq.min(floor_seq));
                break;
            }
        }
    }
    let excised = meta_u64(cx, EXCISED_SEQ)?;
    let cut = cut.unwrap_or(excised).max(excised).min(floor_seq);
    if let Some(pinned) = cx.st.oldest_session_pin.filter(|p| *p < cut) {
        return Err(LifecycleError::SessionPinned { commit_seq: pinned }.into());
    }
    // Resume an interrupted excision at the same cut.
    let cursor = cx.kv.get(&keys::meta_key(EXCISE_CURSOR))?;
    let start = match cursor.as_deref() {
        Some(c) if c.len() >= 9 && c[..8] == cut.to_be_bytes() => c[8..].to_vec(),
        _ => vec![],
    };
    let resumed = !start.is_empty();
    let limit = if apply { batch } else { usize::MAX };
    let scan = scan_excisable(cx, cut, &start, limit)?;
    let done = scan.next.is_none();
    if apply {
        let p = cx.pending()?;
        let n = scan.deletes.len();
        p.excise_keys(scan.deletes.clone())?;
        match &scan.next {
            Some(next) => {
                let mut c = cut.to_be_bytes().to_vec();
                c.extend_from_slice(next);
                p.put_meta(keys::meta_key(EXCISE_CURSOR), Some(c))?;
            }
            None => {
                if cursor.is_some() {
                    p.put_meta(keys::meta_key(EXCISE_CURSOR), None)?;
                }
                if cut > excised || n > 0 {
                    p.put_meta(
                        keys::meta_key(EXCISED_SEQ),
                        Some(cut.max(excised).to_be_bytes().to_vec()),
                    )?;
                }
            }
        }
    }
    let mut r = Rows::new(EXCISE_COLUMNS);
    r.push(vec![
        int(before),
        int(cut),
        int(scan.deletes.len() as u64),
        int(scan.bytes),
        Value::Bool(resumed),
        Value::Bool(done),
        Value::Bool(apply),
    ]);
    r.output()
}

/// What a committed batch did to checkpoints, for a host that backs each with a checkpoint
/// of its store: `(id, true)` created, `(id, false)` dropped.
pub fn checkpoint_changes(batch: &crate::api::CommitBatch) -> Vec<(u64, bool)> {
    let prefix = keys::meta_key(CHECKPOINT_PREFIX);
    let id = |k: &[u8]| record_id(&prefix, k);
    let created = batch.puts.iter().filter_map(|(k, _)| Some((id(k)?, true)));
    let dropped = batch.deletes.iter().filter_map(|k| Some((id(k)?, false)));
    created.chain(dropped).collect()
}

/// The ids of the checkpoints the catalog holds.
pub fn checkpoint_ids(kv: &dyn crate::api::KvRead) -> Result<Vec<u64>, SqlError> {
    let prefix = keys::meta_key(CHECKPOINT_PREFIX);
    Ok(kv
        .scan(&prefix, &keys::prefix_end(&prefix), usize::MAX)?
        .iter()
        .filter_map(|(k, _)| record_id(&prefix, k))
        .collect())
}

/// The id of a lifecycle record key (see [`record_key`]).
fn record_id(prefix: &[u8], key: &[u8]) -> Option<u64> {
    key.strip_prefix(prefix)
        .and_then(|r| <[u8; 8]>::try_from(r).ok())
        .map(u64::from_be_bytes)
}

/// The commit point below which excision may have deleted versions: the cut of the last
/// finished excision, or of the one in progress (its cursor), whichever is higher.
pub(crate) fn excised_below(kv: &dyn crate::api::KvRead) -> Result<u64, SqlError> {
    let seq = |v: Option<Vec<u8>>| {
        v.and_then(|b| b.get(..8).and_then(|b| <[u8; 8]>::try_from(b).ok()))
            .map_or(0, u64::from_be_bytes)
    };
    let done = seq(kv.get(&keys::meta_key(EXCISED_SEQ))?);
    let running = seq(kv.get(&keys::meta_key(EXCISE_CURSOR))?);
    Ok(done.max(running))
}

fn checkpoint_create(cx: &mut Cx<'_>, label: String) -> Result<Output, SqlError> {
    let lake = Lake::find(cx)?;
    let Some(snapshot_id) = lake.latest_snapshot(cx)? else {
        return Err(LifecycleError::BadSnapshot {
            message: "the lake has no snapshot yet".into(),
        }
        .into());
    };
    let id = next_id(cx, NEXT_CHECKPOINT)?;
    let rec = PinRecord {
        snapshot_id,
        commit_seq: cx.st.latest,
        time: cx.st.now,
        text: label,
    };
    cx.pending()?
        .put_meta(record_key(CHECKPOINT_PREFIX, id), Some(rec.encode()))?;
    pin_row(CHECKPOINT_COLUMNS, id, &rec)
}

fn tag_count(out: &Output) -> u64 {
    match out {
        Output::Command { tag } => tag
            .rsplit(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0),
        _ => 0,
    }
}

/// The logical restore of the spec: facts born after the checkpoint's snapshot end at a new
/// snapshot `hide`; facts that ended after it are revived as copies beginning at `hide`; the
/// snapshot counter moves past `hide`. Older snapshot ids keep reading their own history.
fn restore(cx: &mut Cx<'_>, id: u64) -> Result<Output, SqlError> {
    let lake = Lake::find(cx)?;
    let Some(cp) = cx
        .kv
        .get(&record_key(CHECKPOINT_PREFIX, id))?
        .and_then(|v| PinRecord::decode(&v))
    else {
        return Err(LifecycleError::UnknownObject {
            what: "checkpoint",
            id,
        }
        .into());
    };
    let s = cp.snapshot_id;
    let snap_table = lake.qualified("ducklake_snapshot");
    let latest = cx.select_values(
        &format!(
            "SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM {snap_table} ORDER BY snapshot_id DESC LIMIT 1"
        ),
        None,
    )?;
    let ints: Vec<i64> = latest
        .first()
        .map(|r| {
            r.iter()
                .take(4)
                .map(|v| if let Value::Int(n) = v { *n } else { 0 })
                .collect()
        })
        .unwrap_or_default();
    let [last, schema_version, next_catalog_id, next_file_id] = ints[..] else {
        return Err(LifecycleError::BadSnapshot {
            message: "the lake has no snapshot".into(),
        }
        .into());
    };
    let hide = last + 1;
    let tables = lake.versioned_tables(cx);
    // Rows alive at the checkpoint and ended since then must come back; with a unique id
    // column a copy would collide with the original, so refuse rather than split history.
    let mut revive: Vec<Arc<Table>> = vec![];
    let mut refused: BTreeMap<String, i64> = BTreeMap::new();
    for t in &tables {
        let n = match cx
            .select_values(
                &format!(
                    "SELECT count(*) FROM {} WHERE begin_snapshot <= {s} AND end_snapshot > {s}",
                    lake.qualified(&t.name)
                ),
                None,
            )?
            .first()
            .and_then(|r| r.first())
        {
            Some(Value::Int(n)) => *n,
            _ => 0,
        };
        if n == 0 {
            continue;
        }
        if t.primary_key.is_empty() {
            revive.push(Arc::clone(t));
        } else {
            refused.insert(t.name.clone(), n);
        }
    }
    if !refused.is_empty() {
        let list: Vec<String> = refused.iter().map(|(t, n)| format!("{n} in {t}")).collect();
        return Err(LifecycleError::RestoreUnsafe {
            checkpoint_id: id,
            reason: format!(
                "rows removed after snapshot {s} would have to be revived: {}",
                list.join(", ")
            ),
        }
        .into());
    }
    let mut stmts = vec![format!(
        "INSERT INTO {snap_table} (snapshot_id, snapshot_time, schema_version, next_catalog_id, next_file_id) VALUES ({hide}, NOW(), {}, {next_catalog_id}, {next_file_id})",
        schema_version + 1
    )];
    if cx
        .st
        .tables
        .values()
        .any(|t| t.schema == lake.schema() && t.name == "ducklake_snapshot_changes")
    {
        let msg = if cp.text.is_empty() {
            format!("restore checkpoint {id} (snapshot {s})")
        } else {
            format!("restore checkpoint {id} '{}' (snapshot {s})", cp.text)
        };
        stmts.push(format!(
            "INSERT INTO {} (snapshot_id, changes_made, author, commit_message) VALUES ({hide}, '', 'rocklake', {})",
            lake.qualified("ducklake_snapshot_changes"),
            quote_literal(&msg)
        ));
    }
    let hide_from = stmts.len();
    for t in &tables {
        stmts.push(format!(
            "UPDATE {} SET end_snapshot = {hide} WHERE begin_snapshot > {s} AND end_snapshot IS NULL",
            lake.qualified(&t.name)
        ));
    }
    let revive_from = stmts.len();
    for t in &revive {
        let cols: Vec<String> = t.columns.iter().map(|c| quote_ident(&c.name)).collect();
        let exprs: Vec<String> = t
            .columns
            .iter()
            .map(|c| match c.name.as_str() {
                "begin_snapshot" => hide.to_string(),
                "end_snapshot" => "NULL".to_string(),
                n => quote_ident(n),
            })
            .collect();
        stmts.push(format!(
            "INSERT INTO {q} ({}) SELECT {} FROM {q} WHERE begin_snapshot <= {s} AND end_snapshot > {s} AND end_snapshot < {hide}",
            cols.join(", "),
            exprs.join(", "),
            q = lake.qualified(&t.name)
        ));
    }
    // Table statistics back to their values at the checkpoint (row ids keep counting up).
    let stats_from = stmts.len();
    if let Some(stats) = cx
        .st
        .tables
        .values()
        .find(|t| t.schema == lake.schema() && t.name == "ducklake_table_stats")
        .cloned()
    {
        let q = lake.qualified(&stats.name);
        let old = cx.select_values(
            &format!("SELECT table_id, record_count, file_size_bytes FROM {q}"),
            Some(cp.commit_seq),
        )?;
        for row in old {
            let f = |i: usize| match row.get(i) {
                Some(Value::Int(n)) => n.to_string(),
                _ => "NULL".to_string(),
            };
            stmts.push(format!(
                "UPDATE {q} SET record_count = {}, file_size_bytes = {} WHERE table_id = {}",
                f(1),
                f(2),
                f(0)
            ));
        }
    }
    let (mut hidden, mut revived) = (0u64, 0u64);
    for (i, sql) in stmts.iter().enumerate() {
        let out = cx.execute_sql(sql)?;
        if (hide_from..revive_from).contains(&i) {
            hidden += tag_count(&out);
        } else if (revive_from..stats_from).contains(&i) {
            revived += tag_count(&out);
        }
    }
    let mut r = Rows::new(RESTORE_COLUMNS);
    r.push(vec![
        int(id),
        int(s),
        Value::Int(hide),
        int(hidden),
        int(revived),
    ]);
    r.output()
}

/// The `apply` argument of `rocklake_repair` (default false: a dry run).
fn repair_applies(name: &str, args: &[Expr]) -> Result<bool, SqlError> {
    match text_arg(name, args, 0, "false")?.as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(LifecycleError::BadCall {
            message: format!("{name}(apply boolean): not a boolean: {other}"),
        }
        .into()),
    }
}

/// `rocklake_repair([apply])`: fixes what can be fixed without judgement — counters behind the
/// ids they hand out (RockLake's table id, oid and per-table tuple counters; DuckLake's
/// `next_catalog_id` / `next_file_id`), expired leases and a stale excision cursor — and lists
/// each fix. Without `true` it only lists them (dry run). Damage that needs a decision
/// (corrupt envelopes, rows that disagree with their keys, dangling references) is left to
/// `rocklake verify`, which reports it; `rocklake repair` refuses to call such a catalog fixed.
fn repair(cx: &mut Cx<'_>, apply: bool) -> Result<Output, SqlError> {
    let mut fixes: Vec<(String, String, String)> = vec![];
    // RockLake's own counters, from every stored version.
    let mut max_table_id = 0u32;
    let mut max_oid = 0u32;
    let mut max_tuple: BTreeMap<u32, u64> = BTreeMap::new();
    // Index entry versions stored under a key their row does not give: never readable as
    // what they claim at any commit, so they are deleted outright.
    let mut misplaced: Vec<Vec<u8>> = vec![];
    let mut cursor = vec![keys::TAG_SCHEMA];
    let end = vec![keys::TAG_INDEX + 1];
    loop {
        let batch = cx.kv.scan(&cursor, &end, SCAN_BATCH)?;
        for (raw, value) in &batch {
            // A corrupt envelope is verify's to report; nothing here can fix it.
            let Ok(env) = Envelope::decode(value) else {
                continue;
            };
            match env {
                Envelope::TableDef(def) => {
                    max_table_id = max_table_id.max(def.table_id);
                    max_oid = max_oid.max(def.oid.saturating_add(1));
                    for ix in &def.indexes {
                        max_oid = max_oid.max(ix.oid);
                    }
                }
                Envelope::SchemaDef(sd) => max_oid = max_oid.max(sd.oid),
                Envelope::Row(r) => {
                    let Some(id) = raw
                        .get(1..5)
                        .and_then(|b| <[u8; 4]>::try_from(b).ok())
                        .map(u32::from_be_bytes)
                    else {
                        continue;
                    };
                    if raw.first() == Some(&keys::TAG_ROW) {
                        let m = max_tuple.entry(id).or_default();
                        *m = (*m).max(r.tuple);
                    } else if let (Some(t), Some(slot), Ok((logical, seq))) =
                        (cx.st.tables.get(&id), raw.get(5), keys::split_version(raw))
                    {
                        // A version older than the index is a dropped index's that had
                        // the slot before: old snapshots read it by that one.
                        let Some(no) = t
                            .index_at_slot(*slot)
                            .filter(|&no| t.indexes[no].since <= seq)
                        else {
                            continue;
                        };
                        let expected = crate::exec::stored_row_key(t, &r)
                            .and_then(|rk| crate::exec::index_entry_key(t, no, &r, &rk));
                        if expected.is_ok_and(|k| k != logical) {
                            misplaced.push(raw.to_vec());
                        }
                    }
                }
                _ => {}
            }
        }
        match batch.last() {
            Some((k, _)) if batch.len() == SCAN_BATCH => {
                cursor = k.to_vec();
                cursor.push(0);
            }
            _ => break,
        }
    }
    let stored_table_id = meta_u64(cx, "next_table_id")?;
    if stored_table_id.min(u64::from(cx.st.next_table_id)) <= u64::from(max_table_id) {
        fixes.push((
            "counter".into(),
            "next_table_id".into(),
            format!("{stored_table_id} -> {}", u64::from(max_table_id) + 1),
        ));
        if apply {
            cx.st.next_table_id = cx.st.next_table_id.max(max_table_id + 1);
        }
    }
    let stored_oid = meta_u64(cx, "next_oid")?;
    if stored_oid.min(u64::from(cx.st.next_oid)) <= u64::from(max_oid) {
        fixes.push((
            "counter".into(),
            "next_oid".into(),
            format!("{stored_oid} -> {}", u64::from(max_oid) + 1),
        ));
        if apply {
            cx.st.next_oid = cx.st.next_oid.max(max_oid + 1);
        }
    }
    for (id, max) in max_tuple {
        let mut key = keys::meta_key("tuples/");
        key.extend_from_slice(&id.to_be_bytes());
        let persisted = match cx.kv.get(&key)? {
            Some(v) => <[u8; 8]>::try_from(v.as_slice())
                .map(u64::from_be_bytes)
                .unwrap_or(0),
            None => 0,
        };
        if persisted < max {
            fixes.push((
                "tuple_counter".into(),
                format!("table id {id}"),
                format!("{persisted} -> {max}"),
            ));
            if apply {
                let c = cx.st.tuple_counters.entry(id).or_default();
                *c = (*c).max(max);
                let now_at = *c;
                // Through the transaction's own counters, which the commit persists (a later
                // statement of this transaction may raise them further).
                let p = cx.pending()?;
                let t = p.tuple_counters.entry(id).or_default();
                *t = (*t).max(now_at);
                p.ops.push(crate::txn::BufferedOp::Meta { key });
            }
        }
    }
    if apply && fixes.iter().any(|f| f.0 == "counter") {
        // Every commit writes both counters from memory; this one writes the raised values.
        let (t, o) = (cx.st.next_table_id, cx.st.next_oid);
        let p = cx.pending()?;
        p.put_meta(
            keys::meta_key("next_table_id"),
            Some(u64::from(t).to_be_bytes().to_vec()),
        )?;
        p.put_meta(
            keys::meta_key("next_oid"),
            Some(u64::from(o).to_be_bytes().to_vec()),
        )?;
    }
    for raw in &misplaced {
        let key: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        fixes.push((
            "index".into(),
            key,
            "entry version stored under another key than its row gives: deleted".into(),
        ));
    }
    if apply && !misplaced.is_empty() {
        cx.pending()?.excise_keys(misplaced)?;
    }
    // Index entries that disagree with their rows (damage, or a store restored from parts):
    // rewritten from the rows at this commit.
    let tables: Vec<Arc<Table>> = cx.st.tables.values().cloned().collect();
    let refs: Vec<&Table> = tables.iter().map(|t| t.as_ref()).collect();
    let at = cx.st.latest;
    for (t, no, problems) in crate::verify::index_agreement(cx.kv, &refs, at, usize::MAX)? {
        for p in problems {
            let key: String = p.key.iter().map(|b| format!("{b:02x}")).collect();
            fixes.push((
                "index".into(),
                format!("{} {key}", t.indexes[no].name),
                p.detail,
            ));
            if apply {
                cx.pending()?.put_index_entry(p.fix.0, p.fix.1)?;
            }
        }
    }
    // DuckLake's counters on its latest snapshot row.
    if let Ok(lake) = Lake::find(cx) {
        let snap_table = lake.qualified("ducklake_snapshot");
        let latest = cx.select_values(
            &format!(
                "SELECT snapshot_id, next_catalog_id, next_file_id FROM {snap_table} ORDER BY snapshot_id DESC LIMIT 1"
            ),
            None,
        )?;
        if let Some(row) = latest.first() {
            let snap = row.first().cloned().unwrap_or(Value::Null);
            for (i, (counter, sources)) in crate::verify::ID_COUNTERS.iter().enumerate() {
                let (Some(Value::Int(value)), Value::Int(snap)) = (row.get(i + 1), &snap) else {
                    continue;
                };
                let mut max: Option<i64> = None;
                for (table, col) in *sources {
                    let exists = cx.st.tables.values().any(|t| {
                        t.schema == lake.schema()
                            && t.name == *table
                            && t.column_index(col).is_some()
                    });
                    if !exists {
                        continue;
                    }
                    let m = cx.select_values(
                        &format!("SELECT max({col}) FROM {}", lake.qualified(table)),
                        None,
                    )?;
                    if let Some(Value::Int(m)) = m.first().and_then(|r| r.first()) {
                        max = Some(max.map_or(*m, |x| x.max(*m)));
                    }
                }
                if let Some(m) = max.filter(|m| *m >= *value) {
                    fixes.push((
                        "counters".into(),
                        format!(
                            "{}.ducklake_snapshot snapshot_id={snap} {counter}",
                            lake.schema()
                        ),
                        format!("{value} -> {}", m + 1),
                    ));
                    if apply {
                        cx.execute_sql(&format!(
                            "UPDATE {snap_table} SET {counter} = {} WHERE snapshot_id = {snap}",
                            m + 1
                        ))?;
                    }
                }
            }
        }
    }
    // Lifecycle housekeeping.
    let now = cx.st.now;
    for (id, l) in records(cx, LEASE_PREFIX)? {
        if !lease_live(&l, now) {
            fixes.push((
                "lease".into(),
                format!("lease {id}"),
                "expired: removed".into(),
            ));
            if apply {
                cx.pending()?.put_meta(record_key(LEASE_PREFIX, id), None)?;
            }
        }
    }
    if let Some(c) = cx.kv.get(&keys::meta_key(EXCISE_CURSOR))? {
        let cut = c
            .get(..8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_be_bytes);
        let floor_seq = meta_u64(cx, RETAIN_SEQ)?;
        if cut.is_none_or(|cut| cut > floor_seq) {
            fixes.push((
                "excise_cursor".into(),
                EXCISE_CURSOR.into(),
                "beyond the floor: removed".into(),
            ));
            if apply {
                cx.pending()?
                    .put_meta(keys::meta_key(EXCISE_CURSOR), None)?;
            }
        }
    }
    let mut r = Rows::new(REPAIR_COLUMNS);
    for (check, subject, fix) in fixes {
        r.push(vec![
            Value::text(check),
            Value::text(subject),
            Value::text(fix),
            Value::Bool(apply),
        ]);
    }
    r.output()
}
