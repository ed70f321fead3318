//! The table registry: every table (DuckLake's static `ducklake_*` tables and the dynamic
//! `ducklake_inlined_data_<t>_<v>` ones alike) is an ordinary definition stored in the catalog.

use std::sync::Arc;

use rocklake_proto as pb;

use crate::error::{DecodeError, SqlError};
use crate::types::{Interval, PgType, Value};

/// First OID handed to user objects, as in PostgreSQL (`FirstNormalObjectId`).
pub const FIRST_USER_OID: u32 = 16384;

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub ty: PgType,
    /// PostgreSQL typmod (`-1` none; varchar(n) = n+4; numeric(p,s) = ((p<<16)|s)+4).
    pub typmod: i32,
    pub not_null: bool,
    /// Default expression as SQL text.
    pub default_sql: Option<String>,
    /// Set for an identity column (`GENERATED … AS IDENTITY`).
    pub identity: Option<Identity>,
    /// A serial column's sequence (its table id): the default draws from it by id, as
    /// PostgreSQL's default holds the sequence's OID; `default_sql` is its text for display.
    pub serial: Option<u32>,
    /// `COMMENT ON COLUMN` (`pg_description`, `col_description`); never empty.
    pub comment: Option<String>,
}

/// An identity column's generation and the sequence (its table id) its values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    /// GENERATED ALWAYS (`attidentity = 'a'`); else BY DEFAULT (`'d'`).
    pub always: bool,
    pub sequence: u32,
}

/// A view's definition (docs/decisions/0039): the query as RockLake prints it, each relation
/// it reads named with its schema (so that it reads the same relations under any
/// search_path), and those relations' table ids, which cannot be dropped or changed under
/// it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewDef {
    pub query: String,
    pub depends_on: Vec<u32>,
    /// The query's own column names when the view was created (the view's may be others):
    /// the query read later must begin with these columns, of the view's types (a column
    /// added to a table `*` reads comes after them).
    pub query_columns: Vec<String>,
    /// Relations its query names in strings PostgreSQL reads as `regclass` constants
    /// (`nextval('s')`): they cannot be dropped under it, and their renames are followed, but
    /// it reads none of their columns (table ids).
    pub named: Vec<u32>,
}

impl ViewDef {
    /// Whether the view reads relation `id`, by a FROM item or by name in a string.
    pub fn reads(&self, id: u32) -> bool {
        self.depends_on.contains(&id) || self.named.contains(&id)
    }

    /// Every relation the view reads (table ids), FROM items' first.
    pub fn relations(&self) -> impl Iterator<Item = u32> + '_ {
        self.depends_on.iter().chain(&self.named).copied()
    }
}

/// A sequence's definition (`pg_sequence`). Its current value is not part of the definition:
/// it lives outside MVCC (docs/decisions/0029).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SequenceDef {
    /// `int2`, `int4` or `int8`.
    pub ty: PgType,
    pub start: i64,
    pub increment: i64,
    pub min: i64,
    pub max: i64,
    pub cache: i64,
    pub cycle: bool,
    /// The column that owns it (table id, column name): dropping that column or table drops
    /// the sequence.
    pub owner: Option<(u32, String)>,
    /// Owned as an identity column's sequence (`pg_depend.deptype = 'i'`, else `'a'`).
    pub identity: bool,
}

impl SequenceDef {
    /// The columns every sequence relation has, as PostgreSQL's.
    pub fn columns() -> Vec<Column> {
        [
            ("last_value", PgType::Int8),
            ("log_cnt", PgType::Int8),
            ("is_called", PgType::Bool),
        ]
        .into_iter()
        .map(|(name, ty)| Column {
            name: name.into(),
            ty,
            typmod: -1,
            not_null: true,
            default_sql: None,
            identity: None,
            serial: None,
            comment: None,
        })
        .collect()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub id: u32,
    pub oid: u32,
    pub schema: String,
    pub name: String,
    pub columns: Vec<Column>,
    /// Column indexes of the primary key, in key order (empty: rows are keyed by row id).
    pub primary_key: Vec<usize>,
    pub pkey_name: String,
    /// Secondary indexes: RockLake's access paths for DuckLake's own tables, then those
    /// CREATE INDEX made (each entry's key holds its index's [`Index::slot`]).
    pub indexes: Vec<Index>,
    /// The commit that wrote this definition (`pg_class.xmin`, which clients such as DuckDB's
    /// staleness check compare to see a table changed); 0 while the transaction that creates
    /// or alters it is open. Not stored: it is the definition's version.
    pub version: u64,
    /// The commit that last rewrote the rows into another column layout (DROP COLUMN, a
    /// column's TYPE) or moved them under other keys (ADD PRIMARY KEY); 0 when
    /// they have kept the layout since creation, [`LAYOUT_THIS_COMMIT`] in the transaction
    /// that changes it. A snapshot older than it cannot read the rows by this definition.
    pub layout: u64,
    /// Set when the relation is a sequence (`relkind = 'S'`).
    pub sequence: Option<Arc<SequenceDef>>,
    /// Set when the relation is a view (`relkind = 'v'`): `columns` are its query's.
    pub view: Option<Arc<ViewDef>>,
    /// `COMMENT ON TABLE` / `SEQUENCE`, and `COMMENT ON INDEX` of the primary key's index;
    /// never empty.
    pub comment: Option<String>,
    pub pkey_comment: Option<String>,
    /// `COMMENT ON CONSTRAINT` of the primary key (PostgreSQL keeps it apart from its
    /// index's).
    pub pkey_constraint_comment: Option<String>,
    /// The commit whose definition this one's columns and keys are, when only comments or
    /// indexes changed since (decisions 0032, 0040); 0: this definition's own
    /// ([`Self::version`]).
    pub shape: u64,
}

impl Table {
    /// PostgreSQL's error for making column `i` NOT NULL over rows that hold NULL in it.
    pub fn column_contains_nulls(&self, i: usize) -> SqlError {
        SqlError::ColumnContainsNulls {
            column: self
                .columns
                .get(i)
                .map(|c| c.name.clone())
                .unwrap_or_default(),
            table: self.name.clone(),
            schema: self.schema.clone(),
        }
    }
}

/// [`Table::layout`] of a definition whose transaction rewrites the rows: the commit that
/// writes the definition puts its own sequence number there.
pub const LAYOUT_THIS_COMMIT: u64 = u64::MAX;

/// A secondary index: entries keyed by these columns' values, then the row key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    pub name: String,
    pub columns: Vec<usize>,
    /// The byte after the table id in its entries' keys. Kept when other indexes are
    /// dropped, so their entries never move.
    pub slot: u8,
    /// The `pg_class` OID of an index a client made (CREATE INDEX); 0 for RockLake's own,
    /// which the catalogs do not list.
    pub oid: u32,
    /// `pg_index.indoption` per key column (1 DESC, 2 NULLS FIRST): how CREATE INDEX asked
    /// for it. Entries are always in ascending key order; equality lookups do not care.
    pub options: Vec<i16>,
    /// The first commit at which every row has its entry: 0 since the table's creation,
    /// [`LAYOUT_THIS_COMMIT`] while the transaction that builds it is open. A snapshot older
    /// than it does not read through the index.
    pub since: u64,
    /// COMMENT ON INDEX; never empty.
    pub comment: Option<String>,
    /// A partial index's predicate as `pg_get_indexdef` shows it after `WHERE`. The entries
    /// still cover every row (a superset PostgreSQL's would hold), so any query may use them.
    pub predicate: Option<String>,
}

impl Index {
    /// RockLake's own index over `columns`, kept from the table's creation.
    pub fn internal(name: String, columns: Vec<usize>, slot: u8) -> Index {
        Index {
            name,
            columns,
            slot,
            oid: 0,
            options: Vec::new(),
            since: 0,
            comment: None,
            predicate: None,
        }
    }

    /// Whether a snapshot at commit `at` may read the table through this index.
    pub fn readable_at(&self, at: u64) -> bool {
        self.since <= at && self.since != LAYOUT_THIS_COMMIT
    }
}

/// The indexes RockLake keeps for DuckLake's catalog tables (DuckLake itself creates none): the
/// columns its per-query and per-commit reads filter on by equality (docs/decisions/0008).
const DUCKLAKE_INDEXES: &[(&str, &[&str])] = &[
    ("ducklake_data_file", &["table_id"]),
    ("ducklake_delete_file", &["table_id"]),
    ("ducklake_file_column_stats", &["table_id", "column_id"]),
    ("ducklake_file_variant_stats", &["table_id", "column_id"]),
    (
        "ducklake_file_partition_value",
        &["table_id", "partition_key_index"],
    ),
    ("ducklake_table_stats", &["table_id"]),
    ("ducklake_table_column_stats", &["table_id", "column_id"]),
    ("ducklake_schema_versions", &["table_id", "schema_version"]),
    (
        "ducklake_inlined_data_tables",
        &["table_id", "schema_version"],
    ),
    ("ducklake_table", &["table_id"]),
    ("ducklake_column", &["table_id", "column_id"]),
    ("ducklake_column_tag", &["table_id", "column_id"]),
    ("ducklake_partition_info", &["table_id"]),
    ("ducklake_sort_info", &["table_id"]),
    ("ducklake_tag", &["object_id"]),
];

/// Indexes for a new table: DuckLake's tables (by name, in any schema) get theirs when every
/// indexed column exists and the primary key does not already lead with it.
pub fn default_indexes(name: &str, columns: &[Column], primary_key: &[usize]) -> Vec<Index> {
    let Some((_, cols)) = DUCKLAKE_INDEXES.iter().find(|(t, _)| *t == name) else {
        return vec![];
    };
    let Some(positions) = cols
        .iter()
        .map(|c| columns.iter().position(|col| col.name == *c))
        .collect::<Option<Vec<usize>>>()
    else {
        return vec![];
    };
    if primary_key.first() == positions.first() {
        return vec![];
    }
    vec![Index::internal(
        format!("{name}_{}_idx", cols.join("_")),
        positions,
        0,
    )]
}

/// An index the catalogs list: a table's primary key's, or one CREATE INDEX made.
#[derive(Debug, Clone, Copy)]
pub struct ListedIndex<'t> {
    pub oid: u32,
    pub name: &'t str,
    pub columns: &'t [usize],
    /// `pg_index.indoption` per key column (empty: all ascending).
    pub options: &'t [i16],
    pub primary: bool,
    pub comment: Option<&'t str>,
    pub predicate: Option<&'t str>,
}

impl ListedIndex<'_> {
    /// `pg_index.indoption` of key column `k`.
    pub fn option(&self, k: usize) -> i16 {
        self.options.get(k).copied().unwrap_or(0)
    }
}

pub type TableRef = Arc<Table>;

impl Table {
    /// The commit whose columns, keys and indexes this definition has (see [`Self::shape`]);
    /// 0 while this transaction's own change is not committed.
    pub fn shape_version(&self) -> u64 {
        if self.shape == 0 {
            self.version
        } else {
            self.shape
        }
    }

    /// The indexes CREATE INDEX made (the catalogs list them), with their positions.
    pub fn user_indexes(&self) -> impl Iterator<Item = (usize, &Index)> {
        self.indexes
            .iter()
            .enumerate()
            .filter(|(_, ix)| ix.oid != 0)
    }

    /// The table's indexes the catalogs list: its primary key's, then those CREATE INDEX
    /// made.
    pub fn listed_indexes(&self) -> impl Iterator<Item = ListedIndex<'_>> {
        let pkey = (!self.primary_key.is_empty()).then(|| ListedIndex {
            oid: self.pkey_oid(),
            name: &self.pkey_name,
            columns: &self.primary_key,
            options: &[],
            primary: true,
            comment: self.pkey_comment.as_deref(),
            predicate: None,
        });
        pkey.into_iter()
            .chain(self.user_indexes().map(|(_, ix)| ListedIndex {
                oid: ix.oid,
                name: &ix.name,
                columns: &ix.columns,
                options: &ix.options,
                primary: false,
                comment: ix.comment.as_deref(),
                predicate: ix.predicate.as_deref(),
            }))
    }

    /// The listed index of `pg_class` OID `oid`.
    pub fn listed_index(&self, oid: u32) -> Option<ListedIndex<'_>> {
        self.listed_indexes().find(|ix| ix.oid == oid)
    }

    /// The name of the relation of OID `oid`: this table, or one of its listed indexes.
    pub fn name_of(&self, oid: u32) -> &str {
        self.listed_index(oid)
            .map_or(self.name.as_str(), |ix| ix.name)
    }

    /// The names of the indexes the catalogs list (see [`Self::listed_indexes`]).
    pub fn index_names(&self) -> impl Iterator<Item = &str> {
        self.listed_indexes().map(|ix| ix.name)
    }

    /// The position of the index whose entries' keys hold `slot`.
    pub fn index_at_slot(&self, slot: u8) -> Option<usize> {
        self.indexes.iter().position(|ix| ix.slot == slot)
    }

    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    pub fn qualified(&self) -> String {
        format!("{}.{}", self.schema, self.name)
    }

    /// OID of the table's row type in pg_type.
    pub fn rowtype_oid(&self) -> u32 {
        self.oid + 1
    }
    /// OID of the primary-key index / constraint.
    pub fn pkey_oid(&self) -> u32 {
        self.oid + 2
    }
    /// OID of a view's `_RETURN` rule (`pg_rewrite`): a view has no primary key, so the
    /// third OID it was given is free.
    pub fn rule_oid(&self) -> u32 {
        self.oid + 2
    }

    pub fn to_proto(&self) -> pb::TableDef {
        pb::TableDef {
            table_id: self.id,
            schema: self.schema.clone(),
            name: self.name.clone(),
            columns: self
                .columns
                .iter()
                .map(|c| pb::ColumnDef {
                    name: c.name.clone(),
                    type_name: c.ty.typname().to_string(),
                    typmod: c.typmod,
                    not_null: c.not_null,
                    default_sql: c.default_sql.clone().unwrap_or_default(),
                    identity_sequence: c.identity.map_or(0, |i| i.sequence),
                    identity_always: c.identity.is_some_and(|i| i.always),
                    serial_sequence: c.serial.unwrap_or(0),
                    comment: c.comment.clone().unwrap_or_default(),
                })
                .collect(),
            primary_key: self.primary_key.iter().map(|i| *i as u32).collect(),
            oid: self.oid,
            layout_seq: self.layout,
            pkey_name: self.pkey_name.clone(),
            indexes: self
                .indexes
                .iter()
                .map(|ix| pb::IndexDef {
                    name: ix.name.clone(),
                    columns: ix.columns.iter().map(|c| *c as u32).collect(),
                    slot_plus_one: u32::from(ix.slot) + 1,
                    oid: ix.oid,
                    options: ix.options.iter().map(|o| i32::from(*o)).collect(),
                    since_seq: ix.since,
                    comment: ix.comment.clone().unwrap_or_default(),
                    predicate: ix.predicate.clone().unwrap_or_default(),
                })
                .collect(),
            sequence: self.sequence.as_ref().map(|q| {
                Box::new(pb::SequenceDef {
                    type_name: q.ty.typname().to_string(),
                    start: q.start,
                    increment: q.increment,
                    min: q.min,
                    max: q.max,
                    cache: q.cache,
                    cycle: q.cycle,
                    owner_table: q.owner.as_ref().map_or(0, |o| o.0),
                    owner_column: q.owner.as_ref().map(|o| o.1.clone()).unwrap_or_default(),
                    identity: q.identity,
                })
            }),
            view: self.view.as_ref().map(|v| {
                Box::new(pb::ViewDef {
                    query: v.query.clone(),
                    depends_on: v.depends_on.clone(),
                    query_columns: v.query_columns.clone(),
                    named: v.named.clone(),
                })
            }),
            comment: self.comment.clone().unwrap_or_default(),
            pkey_comment: self.pkey_comment.clone().unwrap_or_default(),
            shape_seq: self.shape,
            pkey_constraint_comment: self.pkey_constraint_comment.clone().unwrap_or_default(),
        }
    }

    pub fn from_proto(def: &pb::TableDef) -> Result<Table, DecodeError> {
        let columns = def
            .columns
            .iter()
            .map(|c| {
                Ok(Column {
                    name: c.name.clone(),
                    ty: PgType::from_typname(&c.type_name).ok_or_else(|| DecodeError::Payload {
                        message: format!("unknown column type {}", c.type_name),
                    })?,
                    typmod: c.typmod,
                    not_null: c.not_null,
                    default_sql: if c.default_sql.is_empty() {
                        None
                    } else {
                        Some(c.default_sql.clone())
                    },
                    identity: (c.identity_sequence != 0).then_some(Identity {
                        always: c.identity_always,
                        sequence: c.identity_sequence,
                    }),
                    serial: (c.serial_sequence != 0).then_some(c.serial_sequence),
                    comment: non_empty(&c.comment),
                })
            })
            .collect::<Result<Vec<_>, DecodeError>>()?;
        let primary_key: Vec<usize> = def.primary_key.iter().map(|i| *i as usize).collect();
        if primary_key.iter().any(|i| *i >= columns.len()) {
            return Err(DecodeError::Payload {
                message: "primary key column out of range".into(),
            });
        }
        let indexes: Vec<Index> = def
            .indexes
            .iter()
            .enumerate()
            .map(|(n, ix)| Index {
                name: ix.name.clone(),
                columns: ix.columns.iter().map(|c| *c as usize).collect(),
                // Definitions written before slots were kept: the slot is the position.
                slot: match ix.slot_plus_one {
                    0 => u8::try_from(n).unwrap_or(u8::MAX),
                    s => u8::try_from(s - 1).unwrap_or(u8::MAX),
                },
                oid: ix.oid,
                options: ix
                    .options
                    .iter()
                    .map(|o| i16::try_from(*o).unwrap_or(0))
                    .collect(),
                since: ix.since_seq,
                comment: Some(ix.comment.clone()).filter(|c| !c.is_empty()),
                predicate: Some(ix.predicate.clone()).filter(|c| !c.is_empty()),
            })
            .collect();
        let mut slots: Vec<u8> = indexes.iter().map(|ix| ix.slot).collect();
        slots.sort_unstable();
        slots.dedup();
        if indexes.len() > usize::from(u8::MAX)
            || slots.len() != indexes.len()
            || indexes
                .iter()
                .any(|ix| ix.columns.is_empty() || ix.columns.iter().any(|c| *c >= columns.len()))
        {
            return Err(DecodeError::Payload {
                message: "index definition out of range".into(),
            });
        }
        Ok(Table {
            id: def.table_id,
            oid: def.oid,
            schema: def.schema.clone(),
            name: def.name.clone(),
            columns,
            primary_key,
            pkey_name: def.pkey_name.clone(),
            indexes,
            version: 0,
            layout: def.layout_seq,
            sequence: match &def.sequence {
                None => None,
                Some(q) => Some(Arc::new(SequenceDef {
                    ty: PgType::from_typname(&q.type_name)
                        .filter(|t| matches!(t, PgType::Int2 | PgType::Int4 | PgType::Int8))
                        .ok_or_else(|| DecodeError::Payload {
                            message: format!("bad sequence type {}", q.type_name),
                        })?,
                    start: q.start,
                    increment: q.increment,
                    min: q.min,
                    max: q.max,
                    cache: q.cache,
                    cycle: q.cycle,
                    owner: (q.owner_table != 0).then(|| (q.owner_table, q.owner_column.clone())),
                    identity: q.identity,
                })),
            },
            view: def.view.as_ref().map(|v| {
                Arc::new(ViewDef {
                    query: v.query.clone(),
                    depends_on: v.depends_on.clone(),
                    query_columns: v.query_columns.clone(),
                    named: v.named.clone(),
                })
            }),
            comment: non_empty(&def.comment),
            pkey_comment: non_empty(&def.pkey_comment),
            shape: def.shape_seq,
            pkey_constraint_comment: non_empty(&def.pkey_constraint_comment),
        })
    }
}

/// A stored text that is empty when absent (a comment).
pub fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

/// A schema (namespace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    pub name: String,
    pub oid: u32,
    /// `COMMENT ON SCHEMA`; never empty.
    pub comment: Option<String>,
}

/// OID of schema `name`: a built-in one, else the first of `schemas` so named; 0 when none is.
pub fn schema_oid<'s>(name: &str, schemas: impl IntoIterator<Item = &'s Schema>) -> u32 {
    if let Some((_, o)) = BUILTIN_SCHEMAS.iter().find(|(n, _)| *n == name) {
        return *o;
    }
    schemas
        .into_iter()
        .find(|s| s.name == name)
        .map_or(0, |s| s.oid)
}

/// Built-in namespaces, with PostgreSQL's OIDs.
pub const BUILTIN_SCHEMAS: [(&str, u32); 4] = [
    ("pg_catalog", 11),
    ("public", 2200),
    ("information_schema", 13_000),
    ("pg_toast", 99),
];

// ------------------------------------------------------------------ value <-> datum

/// Converts a value of column type `ty` to its stored form.
pub fn to_datum(v: &Value) -> pb::Datum {
    use pb::datum::Kind;
    let kind = match v {
        Value::Null => None,
        Value::Bool(b) => Some(Kind::Boolean(*b)),
        Value::Int(i) => Some(Kind::Int(*i)),
        Value::Float(f) => Some(Kind::Float(*f)),
        Value::Numeric(s) => Some(Kind::Numeric(s.clone())),
        Value::Text(s) => Some(Kind::Text(s.to_string())),
        Value::Bytes(b) => Some(Kind::Bytes(b.clone())),
        Value::Uuid(u) => Some(Kind::Bytes(u.to_vec())),
        Value::Timestamp(t) | Value::Time(t) => Some(Kind::Int(*t)),
        Value::Date(d) => Some(Kind::Int(*d as i64)),
        Value::Interval(iv) => Some(Kind::Interval(pb::Interval {
            months: iv.months,
            days: iv.days,
            micros: iv.micros,
        })),
        Value::Tid(b, o) => Some(Kind::Int(((*b as i64) << 16) | *o as i64)),
        Value::Array(items) => Some(Kind::List(pb::DatumList {
            items: items.iter().map(to_datum).collect(),
        })),
    };
    pb::Datum { kind }
}

/// [`from_datum`] for a datum the caller owns: strings and bytes move instead of being copied
/// (the scan path decodes every column of every row it reads).
pub fn from_datum_owned(d: pb::Datum, ty: PgType) -> Result<Value, DecodeError> {
    use pb::datum::Kind;
    match (d.kind, ty) {
        (Some(Kind::Text(s)), t) if t.is_string() || t == PgType::Json => Ok(Value::text(s)),
        (Some(Kind::Numeric(s)), PgType::Numeric) => Ok(Value::Numeric(s)),
        (Some(Kind::Bytes(b)), PgType::Bytea) => Ok(Value::Bytes(b)),
        (kind, ty) => from_datum(&pb::Datum { kind }, ty),
    }
}

/// Reads a stored datum as a value of column type `ty`.
pub fn from_datum(d: &pb::Datum, ty: PgType) -> Result<Value, DecodeError> {
    use pb::datum::Kind;
    let bad = || DecodeError::Payload {
        message: format!("datum does not fit column type {}", ty.typname()),
    };
    let Some(kind) = &d.kind else {
        return Ok(Value::Null);
    };
    Ok(match (kind, ty) {
        (Kind::Boolean(b), PgType::Bool) => Value::Bool(*b),
        (Kind::Int(i), PgType::Timestamp | PgType::Timestamptz) => Value::Timestamp(*i),
        (Kind::Int(i), PgType::Time) => Value::Time(*i),
        (Kind::Int(i), PgType::Date) => Value::Date(*i as i32),
        (Kind::Int(i), PgType::Tid) => Value::Tid((*i >> 16) as u32, (*i & 0xFFFF) as u16),
        (Kind::Int(i), t) if t.is_integer() => Value::Int(*i),
        (Kind::Float(f), PgType::Float4 | PgType::Float8) => Value::Float(*f),
        (Kind::Numeric(s), PgType::Numeric) => Value::Numeric(s.clone()),
        (Kind::Text(s), t) if t.is_string() || t == PgType::Json => Value::text(s.as_str()),
        (Kind::Bytes(b), PgType::Bytea) => Value::Bytes(b.clone()),
        (Kind::Bytes(b), PgType::Inet) => Value::Bytes(b.clone()),
        (Kind::Bytes(b), PgType::Uuid) => Value::Uuid(b.as_slice().try_into().map_err(|_| bad())?),
        (Kind::Interval(iv), PgType::Interval) => Value::Interval(Interval {
            months: iv.months,
            days: iv.days,
            micros: iv.micros,
        }),
        (Kind::List(l), crate::types::array_types!()) => {
            let elem = ty.element().unwrap_or(PgType::Text);
            Value::Array(
                l.items
                    .iter()
                    .map(|x| from_datum(x, elem))
                    .collect::<Result<_, _>>()?,
            )
        }
        _ => return Err(bad()),
    })
}

/// Parses a type name as written in CREATE TABLE into (type, typmod).
pub fn resolve_type_name(name: &str, args: &[i64]) -> Result<(PgType, i32), SqlError> {
    let n = name.to_ascii_lowercase();
    if !args.is_empty() {
        // Types PostgreSQL's grammar spells as keywords take no modifier list at all.
        if matches!(
            n.as_str(),
            "bigint" | "integer" | "int" | "smallint" | "boolean" | "real" | "double precision"
        ) {
            return Err(SqlError::Syntax {
                message: "syntax error at or near \"(\"".into(),
            });
        }
        if n == "float" {
            return float_of_precision(args);
        }
    }
    let ty = match n.as_str() {
        "bigint" | "int8" => PgType::Int8,
        "integer" | "int" | "int4" => PgType::Int4,
        "smallint" | "int2" => PgType::Int2,
        "boolean" | "bool" => PgType::Bool,
        "real" | "float4" => PgType::Float4,
        "double precision" | "float8" | "float" => PgType::Float8,
        "numeric" | "decimal" => PgType::Numeric,
        "text" => PgType::Text,
        "varchar" | "character varying" => PgType::Varchar,
        "char" | "character" | "bpchar" => PgType::Bpchar,
        "name" => PgType::Name,
        "bytea" => PgType::Bytea,
        "uuid" => PgType::Uuid,
        "timestamptz" | "timestamp with time zone" => PgType::Timestamptz,
        "timestamp" | "timestamp without time zone" => PgType::Timestamp,
        "date" => PgType::Date,
        "time" | "time without time zone" => PgType::Time,
        "interval" => PgType::Interval,
        "oid" => PgType::Oid,
        "regclass" => PgType::Regclass,
        "regtype" => PgType::Regtype,
        "regnamespace" => PgType::Regnamespace,
        "regproc" => PgType::Regproc,
        "tid" => PgType::Tid,
        "xid" => PgType::Xid,
        "inet" => PgType::Inet,
        "json" => PgType::Json,
        "int2vector" => PgType::Int2Vector,
        "oidvector" => PgType::OidVector,
        other => {
            return Err(SqlError::UndefinedObject {
                message: format!("type \"{other}\" does not exist"),
            })
        }
    };
    let invalid = |message: String| SqlError::InvalidParameter { message };
    let typmod = match (ty, args) {
        (PgType::Varchar | PgType::Bpchar, [len]) => {
            let what = if ty == PgType::Varchar {
                "varchar"
            } else {
                "char"
            };
            if *len < 1 {
                return Err(invalid(format!(
                    "length for type {what} must be at least 1"
                )));
            }
            if *len > MAX_STRING_TYPMOD {
                return Err(invalid(format!(
                    "length for type {what} cannot exceed {MAX_STRING_TYPMOD}"
                )));
            }
            *len as i32 + 4
        }
        (PgType::Bpchar, []) if n != "bpchar" => 1 + 4,
        (PgType::Numeric, [p]) => crate::types::numeric_typmod_of(*p, 0)?,
        (PgType::Numeric, [p, s]) => crate::types::numeric_typmod_of(*p, *s)?,
        // Fractional digits of seconds; PostgreSQL reduces more than 6 to 6.
        (PgType::Timestamp | PgType::Timestamptz | PgType::Time, [p]) => (*p).clamp(0, 6) as i32,
        (PgType::Interval, [_]) => -1,
        (_, []) => -1,
        (PgType::Varchar | PgType::Bpchar | PgType::Numeric, _) => {
            return Err(SqlError::Syntax {
                message: "invalid type modifier".into(),
            })
        }
        _ => {
            return Err(SqlError::Syntax {
                message: format!("type modifier is not allowed for type \"{}\"", ty.typname()),
            })
        }
    };
    Ok((ty, typmod))
}

/// The longest `varchar(n)` / `char(n)` PostgreSQL allows (its 10 MB limit).
const MAX_STRING_TYPMOD: i64 = 10_485_760;

/// `float(p)`: real up to 24 bits of precision, double precision up to 53, as PostgreSQL's
/// grammar reads it.
fn float_of_precision(args: &[i64]) -> Result<(PgType, i32), SqlError> {
    let invalid = |message: &str| SqlError::InvalidParameter {
        message: message.into(),
    };
    match args {
        [p] if *p < 1 => Err(invalid("precision for type float must be at least 1 bit")),
        [p] if *p <= 24 => Ok((PgType::Float4, -1)),
        [p] if *p <= 53 => Ok((PgType::Float8, -1)),
        [_] => Err(invalid(
            "precision for type float must be less than 54 bits",
        )),
        _ => Err(SqlError::Syntax {
            message: "syntax error at or near \",\"".into(),
        }),
    }
}
