//! The virtual relations of `pg_catalog` and `information_schema`.
//!
//! Every relation is derived live from the table registry handed in through [`CatalogView`]
//! (nothing is cached), with PostgreSQL 15's column names and types, so that DuckDB's postgres
//! scanner (ATTACH, per-table column query, composite types, enums, `pg_indexes`,
//! `pg_settings`) and psql (`\dt`, `\d t`, `\l`, `\dn`, `\du`) see what a real server would show.
//!
//! Deliberate choices (see the tests for the values PostgreSQL 15.18 returned in the traces):
//! * `pg_class.relpages` of every table is 0 (of a primary-key index 1, its metapage). PostgreSQL
//!   only sets a table's relpages in VACUUM/ANALYZE (and CREATE INDEX on a non-empty table);
//!   every user table in the traces reported 0, including inlined-data tables holding rows. A
//!   value > 0 would also switch DuckDB 1.4's scanner to ctid-range scans. `reltuples` carries
//!   the live row count from [`CatalogView::row_counts`] (-1, "never analyzed", for the virtual
//!   catalogs).
//! * The virtual relations are themselves listed in `pg_class`/`pg_attribute`/`pg_type` (as real
//!   catalogs are), so `\d pg_class` and the composite-type query work as against PostgreSQL.
//! * Column types PostgreSQL declares with types RockLake has no [`PgType`] for are declared with
//!   the closest one: `regproc` (in the older relations; the catalogs RockLake keeps empty
//!   have `regproc`) and `pg_node_tree` as `text`, `xid` as `oid`, `aclitem[]` and
//!   `"char"[]` as `text[]` (`oid[]` columns are `oid[]`, so `oid = ANY(pg_policy.polroles)`
//!   is checked as PostgreSQL checks it), the information_schema domains as their base
//!   types (`sql_identifier` → `name`, `character_data`/`yes_or_no` → `varchar`,
//!   `cardinal_number` → `int4`); `anyarray`
//!   (`pg_attribute.attmissingval`, always NULL) is `text[]`; system columns (`ctid`,
//!   attnum < 0) are not listed in `pg_attribute`.
//! * Every relation has the system column `tableoid` (its own OID), and `pg_class` one more,
//!   `xmin`: the commit that wrote the table's definition
//!   ([`crate::catalog::Table::version`]). It changes with every change of a definition, a
//!   superset of PostgreSQL's (whose `pg_class` row is not rewritten by DROP or RENAME COLUMN),
//!   so a client that reloads on a changed `xmin` (DuckDB's `pg_staleness_query_enabled`) never
//!   keeps a stale table.
//!
//! Layout: this module keeps the registry of emulated relations (`RELATIONS`) and builds a
//! relation's rows on demand (`build`, `build_only`); `columns.rs` defines their columns,
//! `catalog_rows.rs` and `information_schema.rs` their rows, `base_types.rs` the types,
//! `procs.rs` the built-in functions' OIDs, `quoting.rs` identifier quoting.

use crate::catalog::{
    Column, ListedIndex, Schema, Table, TableRef, BUILTIN_SCHEMAS, FIRST_USER_OID,
};
use crate::types::{PgType, Value};

/// A row of a relation [`build_only`] builds: its values, with room for the `tableoid`
/// `build_only` appends to every row (a `vec!` of exactly the values would be copied to grow
/// by that one, for every row of a large catalog).
macro_rules! row {
    ($($v:expr),* $(,)?) => {{
        let values = [$($v),*];
        let mut row = Vec::with_capacity(values.len() + 1);
        row.extend(values);
        row
    }};
}

mod base_types;
mod catalog_rows;
mod columns;
mod information_schema;
mod procs;
mod quoting;
#[cfg(test)]
mod tests;

pub use base_types::*;
pub use catalog_rows::*;
use columns::*;
use information_schema::*;
pub use procs::*;
pub use quoting::*;

/// `server_version` as `pg_settings` reports it (the same text the host sends in ParameterStatus).
pub const SERVER_VERSION: &str = concat!("15.18 (RockLake ", env!("CARGO_PKG_VERSION"), ")");
/// `server_version_num` for PostgreSQL 15.18.
pub const SERVER_VERSION_NUM: &str = "150018";
/// OID of the (only) login role, PostgreSQL's bootstrap superuser.
pub const SUPERUSER_OID: u32 = 10;
/// OID given to the current database in `pg_database` (below user objects: never a table's).
pub const CURRENT_DATABASE_OID: u32 = FIRST_USER_OID - 1;

const PG_CATALOG_OID: u32 = 11;
/// `xmin` of what exists from the start (PostgreSQL's `BootstrapTransactionId`).
const BOOTSTRAP_XID: u64 = 1;
const HEAP_AM_OID: u32 = 2;
const BTREE_AM_OID: u32 = 403;
const DEFAULT_COLLATION_OID: u32 = 100;
const C_COLLATION_OID: u32 = 950;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VColumn {
    pub name: &'static str,
    pub ty: PgType,
    pub typmod: i32,
    /// `pg_attribute.attnum`: its position from 1, or a system column's negative number
    /// (hidden from `*`, after the others in every row).
    pub attnum: i16,
}

#[derive(Debug, Clone, PartialEq)]
pub struct VirtualTable {
    pub rel_oid: u32,
    pub columns: Vec<VColumn>,
    pub rows: Vec<Vec<Value>>,
}

pub struct CatalogView<'a> {
    /// User schemas (e.g. "dlmeta"); the built-in ones come from [`BUILTIN_SCHEMAS`].
    pub schemas: &'a [Schema],
    /// All user tables, any schema.
    pub tables: &'a [TableRef],
    /// Current database name.
    pub database: &'a str,
    pub user: &'a str,
    /// Table id -> approximate live rows (for `reltuples`).
    pub row_counts: &'a dyn Fn(u32) -> u64,
    /// The session's settings (`pg_settings`); `None`: a fresh session's defaults.
    pub settings: Option<crate::settings::View<'a>>,
    /// The reading transaction's id (`txid_current()`): the `xmin` of definitions it wrote.
    pub txid: u64,
    /// The session's open cursors (`pg_cursors`), listed only when that view is read.
    pub cursors: &'a dyn Fn() -> Vec<crate::cursor::CursorInfo>,
    /// The engine's sessions (`pg_stat_activity`), listed only when that view is read.
    pub activity: &'a dyn Fn() -> Vec<crate::activity::ActivityRow>,
    /// The advisory locks held and waited for (`pg_locks`), listed only when that view is
    /// read.
    pub locks: &'a dyn Fn() -> Vec<crate::activity::ShownLock>,
    /// The statement's time (`pg_timezone_names` shows each zone's offset then).
    pub now: i64,
    /// A sequence's value now (`pg_sequences.last_value`).
    pub sequence_value: &'a dyn Fn(&Table) -> Option<crate::sequence::SeqValue>,
    /// What a view's query reads, as its `_RETURN` rule's dependencies in `pg_depend`: each
    /// column it reads (OID, column number) and each relation (OID, 0). Listed only when
    /// `pg_depend` is read.
    pub view_reads: &'a dyn Fn(&Table) -> Vec<(u32, i64)>,
}

// ------------------------------------------------------------------ relation directory

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Namespace,
    Class,
    Attribute,
    Type,
    Constraint,
    Index,
    Indexes,
    Description,
    Enum,
    Settings,
    Cursors,
    StatActivity,
    Locks,
    TzNames,
    TzAbbrevs,
    Database,
    Roles,
    User,
    Tables,
    Views,
    Am,
    Attrdef,
    Inherits,
    AuthMembers,
    Collation,
    Tablespace,
    Policy,
    Extension,
    StatisticExt,
    Publication,
    PublicationRel,
    PublicationNamespace,
    IsSchemata,
    IsTables,
    IsViews,
    IsColumns,
    IsTableConstraints,
    IsKeyColumnUsage,
    IsConstraintColumnUsage,
    IsReferentialConstraints,
    IsCheckConstraints,
    Sequence,
    Sequences,
    IsSequences,
    Depend,
    Rewrite,
    InitPrivs,
    /// The default btree operator classes `pg_index.indclass` names, and their families:
    /// unlisted, as the empty catalogs are (decision 0030).
    Opclass,
    Opfamily,
    /// Always empty.
    Empty,
}

type Spec = &'static [(&'static str, PgType)];

struct RelInfo {
    rel: Which,
    schema: &'static str,
    name: &'static str,
    oid: u32,
    /// OID of the relation's composite row type.
    rowtype: u32,
    /// `'r'` catalog table or `'v'` view.
    kind: char,
    /// Shared across databases (`relisshared`).
    shared: bool,
    cols: Spec,
}

const fn rel(
    rel: Which,
    schema: &'static str,
    name: &'static str,
    oid: u32,
    rowtype: u32,
    kind: char,
    cols: Spec,
) -> RelInfo {
    RelInfo {
        rel,
        schema,
        name,
        oid,
        rowtype,
        kind,
        shared: false,
        cols,
    }
}
const fn shared(rel: Which, name: &'static str, oid: u32, rowtype: u32, cols: Spec) -> RelInfo {
    RelInfo {
        rel,
        schema: "pg_catalog",
        name,
        oid,
        rowtype,
        kind: 'r',
        shared: true,
        cols,
    }
}

/// Relation OIDs are PostgreSQL 15's: fixed catalog OIDs, `pg_indexes` = 12043 as seen in the
/// trace; the other views' and row types' OIDs (assigned at initdb) follow initdb's allocation
/// pattern but are not verified.
const RELATIONS: &[RelInfo] = &[
    rel(
        Which::Type,
        "pg_catalog",
        "pg_type",
        1247,
        71,
        'r',
        TYPE_COLS,
    ),
    rel(
        Which::Attribute,
        "pg_catalog",
        "pg_attribute",
        1249,
        75,
        'r',
        ATTRIBUTE_COLS,
    ),
    rel(
        Which::Class,
        "pg_catalog",
        "pg_class",
        1259,
        83,
        'r',
        CLASS_COLS,
    ),
    shared(Which::Database, "pg_database", 1262, 1248, DATABASE_COLS),
    // RockLake has one role per server and no role memberships.
    shared(
        Which::AuthMembers,
        "pg_auth_members",
        1261,
        2843,
        AUTH_MEMBERS_COLS,
    ),
    shared(
        Which::Tablespace,
        "pg_tablespace",
        1213,
        10_001,
        TABLESPACE_COLS,
    ),
    rel(Which::Am, "pg_catalog", "pg_am", 2601, 10_002, 'r', AM_COLS),
    rel(
        Which::Attrdef,
        "pg_catalog",
        "pg_attrdef",
        2604,
        10_003,
        'r',
        ATTRDEF_COLS,
    ),
    rel(
        Which::Constraint,
        "pg_catalog",
        "pg_constraint",
        2606,
        10_004,
        'r',
        CONSTRAINT_COLS,
    ),
    rel(
        Which::Description,
        "pg_catalog",
        "pg_description",
        2609,
        10_005,
        'r',
        DESCRIPTION_COLS,
    ),
    rel(
        Which::Index,
        "pg_catalog",
        "pg_index",
        2610,
        10_006,
        'r',
        INDEX_COLS,
    ),
    rel(
        Which::Inherits,
        "pg_catalog",
        "pg_inherits",
        2611,
        10_007,
        'r',
        INHERITS_COLS,
    ),
    rel(
        Which::Namespace,
        "pg_catalog",
        "pg_namespace",
        2615,
        10_008,
        'r',
        NAMESPACE_COLS,
    ),
    rel(
        Which::Policy,
        "pg_catalog",
        "pg_policy",
        3256,
        10_009,
        'r',
        POLICY_COLS,
    ),
    // RockLake runs no extensions (PostgreSQL's one built-in, PL/pgSQL, included).
    rel(
        Which::Extension,
        "pg_catalog",
        "pg_extension",
        3079,
        10_016,
        'r',
        EXTENSION_COLS,
    ),
    rel(
        Which::StatisticExt,
        "pg_catalog",
        "pg_statistic_ext",
        3381,
        10_010,
        'r',
        STATISTIC_EXT_COLS,
    ),
    rel(
        Which::Collation,
        "pg_catalog",
        "pg_collation",
        3456,
        10_011,
        'r',
        COLLATION_COLS,
    ),
    rel(
        Which::Enum,
        "pg_catalog",
        "pg_enum",
        3501,
        10_012,
        'r',
        ENUM_COLS,
    ),
    rel(
        Which::Publication,
        "pg_catalog",
        "pg_publication",
        6104,
        10_013,
        'r',
        PUBLICATION_COLS,
    ),
    rel(
        Which::PublicationRel,
        "pg_catalog",
        "pg_publication_rel",
        6106,
        10_014,
        'r',
        PUBLICATION_REL_COLS,
    ),
    rel(
        Which::PublicationNamespace,
        "pg_catalog",
        "pg_publication_namespace",
        6237,
        10_015,
        'r',
        PUBLICATION_NAMESPACE_COLS,
    ),
    rel(
        Which::Roles,
        "pg_catalog",
        "pg_roles",
        12_007,
        12_008,
        'v',
        ROLES_COLS,
    ),
    rel(
        Which::User,
        "pg_catalog",
        "pg_user",
        12_019,
        12_020,
        'v',
        USER_COLS,
    ),
    rel(
        Which::Views,
        "pg_catalog",
        "pg_views",
        12_031,
        12_032,
        'v',
        VIEWS_COLS,
    ),
    rel(
        Which::Tables,
        "pg_catalog",
        "pg_tables",
        12_035,
        12_036,
        'v',
        TABLES_COLS,
    ),
    rel(
        Which::Indexes,
        "pg_catalog",
        "pg_indexes",
        12_043,
        12_044,
        'v',
        INDEXES_COLS,
    ),
    rel(
        Which::Settings,
        "pg_catalog",
        "pg_settings",
        12_095,
        12_096,
        'v',
        SETTINGS_COLS,
    ),
    rel(
        Which::Cursors,
        "pg_catalog",
        "pg_cursors",
        12_077,
        12_079,
        'v',
        CURSORS_COLS,
    ),
    rel(
        Which::StatActivity,
        "pg_catalog",
        "pg_stat_activity",
        12_222,
        12_224,
        'v',
        STAT_ACTIVITY_COLS,
    ),
    rel(
        Which::Locks,
        "pg_catalog",
        "pg_locks",
        12_073,
        12_075,
        'v',
        LOCKS_COLS,
    ),
    rel(
        Which::TzAbbrevs,
        "pg_catalog",
        "pg_timezone_abbrevs",
        12_122,
        12_124,
        'v',
        TZ_ABBREVS_COLS,
    ),
    rel(
        Which::TzNames,
        "pg_catalog",
        "pg_timezone_names",
        12_126,
        12_128,
        'v',
        TZ_NAMES_COLS,
    ),
    rel(
        Which::IsSchemata,
        "information_schema",
        "schemata",
        13_105,
        13_106,
        'v',
        IS_SCHEMATA_COLS,
    ),
    rel(
        Which::Sequence,
        "pg_catalog",
        "pg_sequence",
        2224,
        10_105,
        'r',
        SEQUENCE_COLS,
    ),
    rel(
        Which::Depend,
        "pg_catalog",
        "pg_depend",
        2608,
        10_051,
        'r',
        DEPEND_COLS,
    ),
    rel(
        Which::Sequences,
        "pg_catalog",
        "pg_sequences",
        12_048,
        12_050,
        'v',
        SEQUENCES_COLS,
    ),
    rel(
        Which::IsSequences,
        "information_schema",
        "sequences",
        13_386,
        13_388,
        'v',
        IS_SEQUENCES_COLS,
    ),
    rel(
        Which::IsTables,
        "information_schema",
        "tables",
        13_205,
        13_206,
        'v',
        IS_TABLES_COLS,
    ),
    rel(
        Which::IsViews,
        "information_schema",
        "views",
        13_483,
        13_485,
        'v',
        IS_VIEWS_COLS,
    ),
    rel(
        Which::IsColumns,
        "information_schema",
        "columns",
        13_305,
        13_306,
        'v',
        IS_COLUMNS_COLS,
    ),
    // PostgreSQL 15.18's OIDs for these views.
    rel(
        Which::IsTableConstraints,
        "information_schema",
        "table_constraints",
        13_411,
        13_413,
        'v',
        IS_TABLE_CONSTRAINTS_COLS,
    ),
    rel(
        Which::IsKeyColumnUsage,
        "information_schema",
        "key_column_usage",
        13_329,
        13_331,
        'v',
        IS_KEY_COLUMN_USAGE_COLS,
    ),
    rel(
        Which::IsConstraintColumnUsage,
        "information_schema",
        "constraint_column_usage",
        13_300,
        13_302,
        'v',
        IS_CONSTRAINT_COLUMN_USAGE_COLS,
    ),
    rel(
        Which::IsReferentialConstraints,
        "information_schema",
        "referential_constraints",
        13_339,
        13_341,
        'v',
        IS_REFERENTIAL_CONSTRAINTS_COLS,
    ),
    rel(
        Which::IsCheckConstraints,
        "information_schema",
        "check_constraints",
        13_260,
        13_262,
        'v',
        IS_CHECK_CONSTRAINTS_COLS,
    ),
    // Catalogs of objects RockLake has none of, users' or built-in (functions, operators,
    // casts, languages, triggers, rules, foreign data, text search, large objects, …): empty,
    // so that tools reading every catalog (pg_dump) find what PostgreSQL has for a database
    // with no such objects of its own.
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_default_acl",
        826,
        10200,
        'r',
        DEFAULT_ACL_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_proc",
        1255,
        10201,
        'r',
        PROC_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_foreign_server",
        1417,
        10202,
        'r',
        FOREIGN_SERVER_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_user_mappings",
        12327,
        12329,
        'v',
        USER_MAPPINGS_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_foreign_data_wrapper",
        2328,
        10203,
        'r',
        FOREIGN_DATA_WRAPPER_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_amop",
        2602,
        10204,
        'r',
        AMOP_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_amproc",
        2603,
        10205,
        'r',
        AMPROC_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_cast",
        2605,
        10206,
        'r',
        CAST_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_conversion",
        2607,
        10207,
        'r',
        CONVERSION_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_language",
        2612,
        10208,
        'r',
        LANGUAGE_COLS,
    ),
    rel(
        Which::Opclass,
        "pg_catalog",
        "pg_opclass",
        2616,
        10209,
        'r',
        OPCLASS_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_operator",
        2617,
        10210,
        'r',
        OPERATOR_COLS,
    ),
    rel(
        Which::Rewrite,
        "pg_catalog",
        "pg_rewrite",
        2618,
        10211,
        'r',
        REWRITE_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_trigger",
        2620,
        10212,
        'r',
        TRIGGER_COLS,
    ),
    rel(
        Which::Opfamily,
        "pg_catalog",
        "pg_opfamily",
        2753,
        10213,
        'r',
        OPFAMILY_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_largeobject_metadata",
        2995,
        10214,
        'r',
        LARGEOBJECT_METADATA_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_foreign_table",
        3118,
        10215,
        'r',
        FOREIGN_TABLE_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_partitioned_table",
        3350,
        10216,
        'r',
        PARTITIONED_TABLE_COLS,
    ),
    rel(
        Which::InitPrivs,
        "pg_catalog",
        "pg_init_privs",
        3394,
        10217,
        'r',
        INIT_PRIVS_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_event_trigger",
        3466,
        10218,
        'r',
        EVENT_TRIGGER_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_range",
        3541,
        10219,
        'r',
        RANGE_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_transform",
        3576,
        10220,
        'r',
        TRANSFORM_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_seclabel",
        3596,
        10221,
        'r',
        SECLABEL_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_ts_dict",
        3600,
        10222,
        'r',
        TS_DICT_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_ts_parser",
        3601,
        10223,
        'r',
        TS_PARSER_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_ts_config",
        3602,
        10224,
        'r',
        TS_CONFIG_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_ts_template",
        3764,
        10225,
        'r',
        TS_TEMPLATE_COLS,
    ),
    shared(Which::Empty, "pg_shseclabel", 3592, 4066, SHSECLABEL_COLS),
    shared(
        Which::Empty,
        "pg_db_role_setting",
        2964,
        10054,
        DB_ROLE_SETTING_COLS,
    ),
    shared(
        Which::Empty,
        "pg_shdescription",
        2396,
        10062,
        SHDESCRIPTION_COLS,
    ),
    shared(
        Which::Empty,
        "pg_subscription",
        6100,
        10226,
        SUBSCRIPTION_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_seclabels",
        12099,
        10227,
        'v',
        SECLABELS_COLS,
    ),
    // DBeaver reads both for every schema and table it opens.
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_aggregate",
        2600,
        10228,
        'r',
        AGGREGATE_COLS,
    ),
    rel(
        Which::Empty,
        "pg_catalog",
        "pg_policies",
        12018,
        10229,
        'v',
        POLICIES_COLS,
    ),
];

/// An emulated catalog relation's `relkind` ('r' or 'v'), whether listed or not.
pub fn relation_kind(schema: Option<&str>, name: &str) -> Option<char> {
    find(schema, name).map(|r| r.kind)
}

fn find(schema: Option<&str>, name: &str) -> Option<&'static RelInfo> {
    // Without a schema, the search path is pg_catalog then public; public holds no virtual relation.
    let schema = schema.unwrap_or("pg_catalog");
    RELATIONS
        .iter()
        .find(|r| r.schema == schema && r.name == name)
}

/// A relation's columns, then its system columns: `tableoid` (the relation's own OID, which
/// pg_dump reads from every catalog) and, for `pg_class`, `xmin` (the transaction that last
/// wrote the row, which DuckDB's staleness check reads).
fn vcolumns(info: &RelInfo) -> Vec<VColumn> {
    let system: &[(&str, PgType, i16)] = match info.rel {
        Which::Class => &[("xmin", PgType::Xid, -2), ("tableoid", PgType::Oid, -6)],
        _ => &[("tableoid", PgType::Oid, -6)],
    };
    let visible = info.cols.iter().enumerate().map(|(i, (name, ty))| VColumn {
        name,
        ty: *ty,
        typmod: -1,
        attnum: i as i16 + 1,
    });
    visible
        .chain(system.iter().map(|&(name, ty, attnum)| VColumn {
            name,
            ty,
            typmod: -1,
            attnum,
        }))
        .collect()
}

/// The schema and name of the virtual relation with this `pg_class` OID.
pub fn relation_of(oid: u32) -> Option<(&'static str, &'static str)> {
    RELATIONS
        .iter()
        .find(|r| r.oid == oid)
        .map(|r| (r.schema, r.name))
}

/// True when `name` (optionally schema-qualified; schema `None` means search_path pg_catalog then
/// public) is a virtual relation.
pub fn is_virtual(schema: Option<&str>, name: &str) -> bool {
    find(schema, name).is_some()
}

/// The schema of the catalog relation a name finds (`pg_catalog`, `information_schema`).
pub fn virtual_schema(schema: Option<&str>, name: &str) -> Option<&'static str> {
    find(schema, name).map(|r| r.schema)
}

/// Whether a relation's rows depend on more than the registry, the session's user and its
/// database: on the session's settings (`pg_settings`) or cursors (`pg_cursors`), or on the
/// statement's time (the zone views show offsets then). Results read from the others can be
/// kept across sessions with the same user and database (see copycache).
pub fn depends_on_session(schema: Option<&str>, name: &str) -> bool {
    find(schema, name).is_some_and(|r| {
        matches!(
            r.rel,
            Which::Settings
                | Which::Cursors
                | Which::StatActivity
                | Which::Locks
                | Which::Sequences
                | Which::TzNames
                | Which::TzAbbrevs
        )
    })
}

/// Column list without building rows (for planning/Describe).
pub fn columns(schema: Option<&str>, name: &str) -> Option<(u32, Vec<VColumn>)> {
    find(schema, name).map(|r| (r.oid, vcolumns(r)))
}

/// The rows a caller needs of a relation: those whose column `column` passes `keep` (a join
/// key's values, or a constant the WHERE clause compares the column with).
pub struct Only<'a> {
    pub column: usize,
    pub keep: &'a dyn Fn(Probe<'_>) -> bool,
}

/// A value of the column [`Only`] filters on: a built row's, or, before the builders of the
/// large catalogs build a row, its OID or its name. A name comes as a prefix and the rest, so
/// that testing an array type's `_name` (or any candidate's name) allocates nothing.
#[derive(Debug, Clone, Copy)]
pub enum Probe<'v> {
    Value(&'v Value),
    Oid(u32),
    Name(&'static str, &'v str),
}

/// Columns + rows, derived from `view` now.
pub fn build(schema: Option<&str>, name: &str, view: &CatalogView<'_>) -> Option<VirtualTable> {
    build_only(schema, name, view, None, None)
}

/// [`build`], keeping only the rows `only` asks for. The catalogs that grow with the number of
/// tables (`pg_class`, `pg_attribute`, `pg_type`) skip the others before building them, so
/// DuckDB's per-table column query builds a few dozen rows rather than every column of the
/// catalog. With `columns`, those three may leave the text columns it marks `false` NULL
/// instead of building their strings (the caller reads only the others).
pub fn build_only(
    schema: Option<&str>,
    name: &str,
    view: &CatalogView<'_>,
    only: Option<&Only<'_>>,
    columns: Option<&[bool]>,
) -> Option<VirtualTable> {
    let info = find(schema, name)?;
    // The column `only` filters on is read here, whatever the caller reads.
    let need = Need {
        columns,
        filtered: only.map(|o| o.column),
    };
    let column = only.and_then(|o| info.cols.get(o.column)).map(|c| c.0);
    // Whether an object with this OID (and name) has rows the caller needs, for the builders
    // that test before they build; the rest are filtered below.
    let want = |oid_: u32, prefix: &'static str, name: &str| match (only, column) {
        (Some(o), Some("oid" | "attrelid" | "objoid")) => (o.keep)(Probe::Oid(oid_)),
        (Some(o), Some("relname" | "typname")) => (o.keep)(Probe::Name(prefix, name)),
        _ => true,
    };
    let mut rows = match info.rel {
        Which::Namespace => namespace_rows(view),
        Which::Class => class_rows(view, &want, need),
        Which::Attribute => attribute_rows(view, &want, need),
        Which::Type => type_rows(view, &want, need),
        Which::Constraint => constraint_rows(view),
        Which::Index => index_rows(view),
        Which::Indexes => indexes_rows(view),
        Which::Settings => settings_rows(view),
        Which::Cursors => (view.cursors)()
            .into_iter()
            .map(|c| {
                vec![
                    Value::Text(c.name.into()),
                    Value::Text(c.statement.into()),
                    Value::Bool(c.holdable),
                    Value::Bool(false),
                    Value::Bool(c.scrollable),
                    Value::Timestamp(c.created),
                ]
            })
            .collect(),
        Which::StatActivity => stat_activity_rows(view),
        Which::Locks => lock_rows(view),
        Which::TzNames => time_zone_rows(view.now),
        Which::TzAbbrevs => abbreviation_rows(view.now),
        Which::Database => database_rows(view),
        Which::Roles => roles_rows(view),
        Which::User => user_rows(view),
        Which::Tables => tables_rows(view),
        Which::Views => views_rows(view),
        Which::Am => am_rows(),
        Which::Attrdef => attrdef_rows(view),
        Which::Collation => collation_rows(),
        Which::Tablespace => tablespace_rows(),
        Which::IsSchemata => is_schemata_rows(view),
        Which::IsTables => is_tables_rows(view),
        Which::IsViews => is_views_rows(view),
        Which::Sequence => sequence_rows(view, false),
        Which::Depend => depend_rows(view),
        Which::Rewrite => rewrite_rows(view),
        Which::Sequences => sequence_rows(view, true),
        Which::IsSequences => is_sequences_rows(view),
        Which::IsColumns => is_columns_rows(view),
        Which::IsTableConstraints => is_table_constraints_rows(view),
        Which::IsKeyColumnUsage => is_key_column_usage_rows(view, false),
        Which::IsConstraintColumnUsage => is_key_column_usage_rows(view, true),
        // RockLake has no foreign keys.
        Which::IsReferentialConstraints => Vec::new(),
        Which::IsCheckConstraints => is_check_constraints_rows(view),
        Which::Description => description_rows(view, &want),
        // What initdb leaves the schemas with ACLs, which pg_dump compares them with.
        Which::InitPrivs => namespace_rows(view)
            .into_iter()
            .filter(|r| matches!(r.first(), Some(Value::Int(11 | 2200))))
            .map(|r| {
                let acl = r.get(3).cloned().unwrap_or(NULL);
                let o = r.first().cloned().unwrap_or(NULL);
                vec![o, oid(NAMESPACE_OID), int(0), ch('i'), acl]
            })
            .collect(),
        Which::Enum
        | Which::Inherits
        | Which::AuthMembers
        | Which::Policy
        | Which::Extension
        | Which::StatisticExt
        | Which::Publication
        | Which::PublicationRel
        | Which::PublicationNamespace
        | Which::Empty => Vec::new(),
        Which::Opclass => BTREE_OPCLASSES
            .iter()
            .map(|(o, name, family, intype, keytype)| {
                row![
                    oid(*o),
                    oid(BTREE_AM_OID),
                    t(name),
                    oid(PG_CATALOG_OID),
                    oid(SUPERUSER_OID),
                    oid(*family),
                    oid(*intype),
                    b(true),
                    oid(*keytype),
                ]
            })
            .collect(),
        Which::Opfamily => BTREE_OPFAMILIES
            .iter()
            .map(|(o, name)| {
                row![
                    oid(*o),
                    oid(BTREE_AM_OID),
                    t(name),
                    oid(PG_CATALOG_OID),
                    oid(SUPERUSER_OID),
                ]
            })
            .collect(),
    };
    if let (Some(o), Some(_)) = (only, column) {
        rows.retain(|r| r.get(o.column).is_some_and(|v| (o.keep)(Probe::Value(v))));
    }
    for r in &mut rows {
        r.push(oid(info.oid));
    }
    Some(VirtualTable {
        rel_oid: info.oid,
        columns: vcolumns(info),
        rows,
    })
}

// ------------------------------------------------------------------ value helpers

/// Which columns of a relation are read (see [`build_only`]): those the caller marks
/// (`None`: all) and the one [`Only`] filters on.
#[derive(Clone, Copy)]
struct Need<'a> {
    columns: Option<&'a [bool]>,
    filtered: Option<usize>,
}

impl Need<'_> {
    /// `make()` for a column that is read, NULL for one that is not.
    fn text(self, column: usize, make: impl FnOnce() -> Value) -> Value {
        match self.columns {
            Some(cols)
                if self.filtered != Some(column) && !cols.get(column).copied().unwrap_or(true) =>
            {
                NULL
            }
            _ => make(),
        }
    }
}

fn oid(v: u32) -> Value {
    Value::Int(v as i64)
}
fn int(v: i64) -> Value {
    Value::Int(v)
}
fn t(s: &str) -> Value {
    Value::text(s)
}
fn ch(c: char) -> Value {
    Value::text(&*c.encode_utf8(&mut [0; 4]))
}
/// A `"char"` holding `'\0'`, which PostgreSQL prints as the empty string.
fn nul_char() -> Value {
    Value::empty_text()
}
fn b(v: bool) -> Value {
    Value::Bool(v)
}
fn int2s(items: impl IntoIterator<Item = i64>) -> Value {
    Value::Array(items.into_iter().map(Value::Int).collect())
}
fn texts(items: &[String]) -> Value {
    Value::Array(items.iter().map(|s| Value::text(s.as_str())).collect())
}
fn opt_text(s: Option<&str>) -> Value {
    s.map(t).unwrap_or(Value::Null)
}
const NULL: Value = Value::Null;

// ------------------------------------------------------------------ builtin types
