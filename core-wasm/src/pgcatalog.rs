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

use crate::catalog::{Column, Schema, Table, TableRef, BUILTIN_SCHEMAS, FIRST_USER_OID};
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
    /// The statement's time (`pg_timezone_names` shows each zone's offset then).
    pub now: i64,
    /// A sequence's value now (`pg_sequences.last_value`).
    pub sequence_value: &'a dyn Fn(&Table) -> Option<crate::sequence::SeqValue>,
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

const OID: PgType = PgType::Oid;
const NAME: PgType = PgType::Name;
const TEXT: PgType = PgType::Text;
const BOOL: PgType = PgType::Bool;
const CHAR: PgType = PgType::Char;
const I2: PgType = PgType::Int2;
const I4: PgType = PgType::Int4;
const I8: PgType = PgType::Int8;
const F4: PgType = PgType::Float4;
const VARCHAR: PgType = PgType::Varchar;
const TSTZ: PgType = PgType::Timestamptz;
const TEXTS: PgType = PgType::TextArray;
const I2S: PgType = PgType::Int2Array;
const I2V: PgType = PgType::Int2Vector;
const OIDS: PgType = PgType::OidArray;
const OIDV: PgType = PgType::OidVector;
const REGPROC: PgType = PgType::Regproc;

const AGGREGATE_COLS: Spec = &[
    ("aggfnoid", REGPROC),
    ("aggkind", CHAR),
    ("aggnumdirectargs", I2),
    ("aggtransfn", REGPROC),
    ("aggfinalfn", REGPROC),
    ("aggcombinefn", REGPROC),
    ("aggserialfn", REGPROC),
    ("aggdeserialfn", REGPROC),
    ("aggmtransfn", REGPROC),
    ("aggminvtransfn", REGPROC),
    ("aggmfinalfn", REGPROC),
    ("aggfinalextra", BOOL),
    ("aggmfinalextra", BOOL),
    ("aggfinalmodify", CHAR),
    ("aggmfinalmodify", CHAR),
    ("aggsortop", OID),
    ("aggtranstype", OID),
    ("aggtransspace", I4),
    ("aggmtranstype", OID),
    ("aggmtransspace", I4),
    ("agginitval", TEXT),
    ("aggminitval", TEXT),
];
const POLICIES_COLS: Spec = &[
    ("schemaname", NAME),
    ("tablename", NAME),
    ("policyname", NAME),
    ("permissive", TEXT),
    ("roles", PgType::NameArray),
    ("cmd", TEXT),
    ("qual", TEXT),
    ("with_check", TEXT),
];
const DEFAULT_ACL_COLS: Spec = &[
    ("oid", OID),
    ("defaclrole", OID),
    ("defaclnamespace", OID),
    ("defaclobjtype", CHAR),
    ("defaclacl", TEXTS),
];
const PROC_COLS: Spec = &[
    ("oid", OID),
    ("proname", NAME),
    ("pronamespace", OID),
    ("proowner", OID),
    ("prolang", OID),
    ("procost", F4),
    ("prorows", F4),
    ("provariadic", OID),
    ("prosupport", PgType::Regproc),
    ("prokind", CHAR),
    ("prosecdef", BOOL),
    ("proleakproof", BOOL),
    ("proisstrict", BOOL),
    ("proretset", BOOL),
    ("provolatile", CHAR),
    ("proparallel", CHAR),
    ("pronargs", I2),
    ("pronargdefaults", I2),
    ("prorettype", OID),
    ("proargtypes", OIDV),
    ("proallargtypes", OIDS),
    ("proargmodes", TEXTS),
    ("proargnames", TEXTS),
    ("proargdefaults", TEXT),
    ("protrftypes", OIDS),
    ("prosrc", TEXT),
    ("probin", TEXT),
    ("prosqlbody", TEXT),
    ("proconfig", TEXTS),
    ("proacl", TEXTS),
];
const FOREIGN_SERVER_COLS: Spec = &[
    ("oid", OID),
    ("srvname", NAME),
    ("srvowner", OID),
    ("srvfdw", OID),
    ("srvtype", TEXT),
    ("srvversion", TEXT),
    ("srvacl", TEXTS),
    ("srvoptions", TEXTS),
];
const FOREIGN_DATA_WRAPPER_COLS: Spec = &[
    ("oid", OID),
    ("fdwname", NAME),
    ("fdwowner", OID),
    ("fdwhandler", OID),
    ("fdwvalidator", OID),
    ("fdwacl", TEXTS),
    ("fdwoptions", TEXTS),
];
const AMOP_COLS: Spec = &[
    ("oid", OID),
    ("amopfamily", OID),
    ("amoplefttype", OID),
    ("amoprighttype", OID),
    ("amopstrategy", I2),
    ("amoppurpose", CHAR),
    ("amopopr", OID),
    ("amopmethod", OID),
    ("amopsortfamily", OID),
];
const AMPROC_COLS: Spec = &[
    ("oid", OID),
    ("amprocfamily", OID),
    ("amproclefttype", OID),
    ("amprocrighttype", OID),
    ("amprocnum", I2),
    ("amproc", PgType::Regproc),
];
const CAST_COLS: Spec = &[
    ("oid", OID),
    ("castsource", OID),
    ("casttarget", OID),
    ("castfunc", OID),
    ("castcontext", CHAR),
    ("castmethod", CHAR),
];
const CONVERSION_COLS: Spec = &[
    ("oid", OID),
    ("conname", NAME),
    ("connamespace", OID),
    ("conowner", OID),
    ("conforencoding", I4),
    ("contoencoding", I4),
    ("conproc", PgType::Regproc),
    ("condefault", BOOL),
];
const LANGUAGE_COLS: Spec = &[
    ("oid", OID),
    ("lanname", NAME),
    ("lanowner", OID),
    ("lanispl", BOOL),
    ("lanpltrusted", BOOL),
    ("lanplcallfoid", OID),
    ("laninline", OID),
    ("lanvalidator", OID),
    ("lanacl", TEXTS),
];
const OPCLASS_COLS: Spec = &[
    ("oid", OID),
    ("opcmethod", OID),
    ("opcname", NAME),
    ("opcnamespace", OID),
    ("opcowner", OID),
    ("opcfamily", OID),
    ("opcintype", OID),
    ("opcdefault", BOOL),
    ("opckeytype", OID),
];
const OPERATOR_COLS: Spec = &[
    ("oid", OID),
    ("oprname", NAME),
    ("oprnamespace", OID),
    ("oprowner", OID),
    ("oprkind", CHAR),
    ("oprcanmerge", BOOL),
    ("oprcanhash", BOOL),
    ("oprleft", OID),
    ("oprright", OID),
    ("oprresult", OID),
    ("oprcom", OID),
    ("oprnegate", OID),
    ("oprcode", PgType::Regproc),
    ("oprrest", PgType::Regproc),
    ("oprjoin", PgType::Regproc),
];
const REWRITE_COLS: Spec = &[
    ("oid", OID),
    ("rulename", NAME),
    ("ev_class", OID),
    ("ev_type", CHAR),
    ("ev_enabled", CHAR),
    ("is_instead", BOOL),
    ("ev_qual", TEXT),
    ("ev_action", TEXT),
];
const TRIGGER_COLS: Spec = &[
    ("oid", OID),
    ("tgrelid", OID),
    ("tgparentid", OID),
    ("tgname", NAME),
    ("tgfoid", OID),
    ("tgtype", I2),
    ("tgenabled", CHAR),
    ("tgisinternal", BOOL),
    ("tgconstrrelid", OID),
    ("tgconstrindid", OID),
    ("tgconstraint", OID),
    ("tgdeferrable", BOOL),
    ("tginitdeferred", BOOL),
    ("tgnargs", I2),
    ("tgattr", I2V),
    ("tgargs", PgType::Bytea),
    ("tgqual", TEXT),
    ("tgoldtable", NAME),
    ("tgnewtable", NAME),
];
const OPFAMILY_COLS: Spec = &[
    ("oid", OID),
    ("opfmethod", OID),
    ("opfname", NAME),
    ("opfnamespace", OID),
    ("opfowner", OID),
];
const LARGEOBJECT_METADATA_COLS: Spec = &[("oid", OID), ("lomowner", OID), ("lomacl", TEXTS)];
const FOREIGN_TABLE_COLS: Spec = &[("ftrelid", OID), ("ftserver", OID), ("ftoptions", TEXTS)];
const PARTITIONED_TABLE_COLS: Spec = &[
    ("partrelid", OID),
    ("partstrat", CHAR),
    ("partnatts", I2),
    ("partdefid", OID),
    ("partattrs", I2V),
    ("partclass", OIDV),
    ("partcollation", OIDV),
    ("partexprs", TEXT),
];
const INIT_PRIVS_COLS: Spec = &[
    ("objoid", OID),
    ("classoid", OID),
    ("objsubid", I4),
    ("privtype", CHAR),
    ("initprivs", TEXTS),
];
const EVENT_TRIGGER_COLS: Spec = &[
    ("oid", OID),
    ("evtname", NAME),
    ("evtevent", NAME),
    ("evtowner", OID),
    ("evtfoid", OID),
    ("evtenabled", CHAR),
    ("evttags", TEXTS),
];
const RANGE_COLS: Spec = &[
    ("rngtypid", OID),
    ("rngsubtype", OID),
    ("rngmultitypid", OID),
    ("rngcollation", OID),
    ("rngsubopc", OID),
    ("rngcanonical", PgType::Regproc),
    ("rngsubdiff", PgType::Regproc),
];
const TRANSFORM_COLS: Spec = &[
    ("oid", OID),
    ("trftype", OID),
    ("trflang", OID),
    ("trffromsql", PgType::Regproc),
    ("trftosql", PgType::Regproc),
];
const SECLABEL_COLS: Spec = &[
    ("objoid", OID),
    ("classoid", OID),
    ("objsubid", I4),
    ("provider", TEXT),
    ("label", TEXT),
];
const SHSECLABEL_COLS: Spec = &[
    ("objoid", OID),
    ("classoid", OID),
    ("provider", TEXT),
    ("label", TEXT),
];
const USER_MAPPINGS_COLS: Spec = &[
    ("umid", OID),
    ("srvid", OID),
    ("srvname", NAME),
    ("umuser", OID),
    ("usename", NAME),
    ("umoptions", TEXTS),
];
const DB_ROLE_SETTING_COLS: Spec = &[("setdatabase", OID), ("setrole", OID), ("setconfig", TEXTS)];
const SHDESCRIPTION_COLS: Spec = &[("objoid", OID), ("classoid", OID), ("description", TEXT)];
const TS_DICT_COLS: Spec = &[
    ("oid", OID),
    ("dictname", NAME),
    ("dictnamespace", OID),
    ("dictowner", OID),
    ("dicttemplate", OID),
    ("dictinitoption", TEXT),
];
const TS_PARSER_COLS: Spec = &[
    ("oid", OID),
    ("prsname", NAME),
    ("prsnamespace", OID),
    ("prsstart", PgType::Regproc),
    ("prstoken", PgType::Regproc),
    ("prsend", PgType::Regproc),
    ("prsheadline", PgType::Regproc),
    ("prslextype", PgType::Regproc),
];
const TS_CONFIG_COLS: Spec = &[
    ("oid", OID),
    ("cfgname", NAME),
    ("cfgnamespace", OID),
    ("cfgowner", OID),
    ("cfgparser", OID),
];
const TS_TEMPLATE_COLS: Spec = &[
    ("oid", OID),
    ("tmplname", NAME),
    ("tmplnamespace", OID),
    ("tmplinit", PgType::Regproc),
    ("tmpllexize", PgType::Regproc),
];
const SUBSCRIPTION_COLS: Spec = &[
    ("oid", OID),
    ("subdbid", OID),
    ("subskiplsn", TEXT),
    ("subname", NAME),
    ("subowner", OID),
    ("subenabled", BOOL),
    ("subbinary", BOOL),
    ("substream", BOOL),
    ("subtwophasestate", CHAR),
    ("subdisableonerr", BOOL),
    ("subconninfo", TEXT),
    ("subslotname", NAME),
    ("subsynccommit", TEXT),
    ("subpublications", TEXTS),
];
const SECLABELS_COLS: Spec = &[
    ("objoid", OID),
    ("classoid", OID),
    ("objsubid", I4),
    ("objtype", TEXT),
    ("objnamespace", OID),
    ("objname", TEXT),
    ("provider", TEXT),
    ("label", TEXT),
];

const NAMESPACE_COLS: Spec = &[
    ("oid", OID),
    ("nspname", NAME),
    ("nspowner", OID),
    ("nspacl", TEXTS),
];
const CLASS_COLS: Spec = &[
    ("oid", OID),
    ("relname", NAME),
    ("relnamespace", OID),
    ("reltype", OID),
    ("reloftype", OID),
    ("relowner", OID),
    ("relam", OID),
    ("relfilenode", OID),
    ("reltablespace", OID),
    ("relpages", I4),
    ("reltuples", F4),
    ("relallvisible", I4),
    ("reltoastrelid", OID),
    ("relhasindex", BOOL),
    ("relisshared", BOOL),
    ("relpersistence", CHAR),
    ("relkind", CHAR),
    ("relnatts", I2),
    ("relchecks", I2),
    ("relhasrules", BOOL),
    ("relhastriggers", BOOL),
    ("relhassubclass", BOOL),
    ("relrowsecurity", BOOL),
    ("relforcerowsecurity", BOOL),
    ("relispopulated", BOOL),
    ("relreplident", CHAR),
    ("relispartition", BOOL),
    ("relrewrite", OID),
    ("relfrozenxid", OID),
    ("relminmxid", OID),
    ("relacl", TEXTS),
    ("reloptions", TEXTS),
    ("relpartbound", TEXT),
];
const ATTRIBUTE_COLS: Spec = &[
    ("attrelid", OID),
    ("attname", NAME),
    ("atttypid", OID),
    ("attstattarget", I4),
    ("attlen", I2),
    ("attnum", I2),
    ("attndims", I4),
    ("attcacheoff", I4),
    ("atttypmod", I4),
    ("attbyval", BOOL),
    ("attalign", CHAR),
    ("attstorage", CHAR),
    ("attcompression", CHAR),
    ("attnotnull", BOOL),
    ("atthasdef", BOOL),
    ("atthasmissing", BOOL),
    ("attidentity", CHAR),
    ("attgenerated", CHAR),
    ("attisdropped", BOOL),
    ("attislocal", BOOL),
    ("attinhcount", I4),
    ("attcollation", OID),
    ("attacl", TEXTS),
    ("attoptions", TEXTS),
    ("attfdwoptions", TEXTS),
    // anyarray in PostgreSQL; always NULL: ADD COLUMN writes its value into the rows.
    ("attmissingval", TEXTS),
];
const TYPE_COLS: Spec = &[
    ("oid", OID),
    ("typname", NAME),
    ("typnamespace", OID),
    ("typowner", OID),
    ("typlen", I2),
    ("typbyval", BOOL),
    ("typtype", CHAR),
    ("typcategory", CHAR),
    ("typispreferred", BOOL),
    ("typisdefined", BOOL),
    ("typdelim", CHAR),
    ("typrelid", OID),
    ("typsubscript", REGPROC),
    ("typelem", OID),
    ("typarray", OID),
    ("typinput", REGPROC),
    ("typoutput", REGPROC),
    ("typreceive", REGPROC),
    ("typsend", REGPROC),
    ("typmodin", REGPROC),
    ("typmodout", REGPROC),
    ("typanalyze", REGPROC),
    ("typalign", CHAR),
    ("typstorage", CHAR),
    ("typnotnull", BOOL),
    ("typbasetype", OID),
    ("typtypmod", I4),
    ("typndims", I4),
    ("typcollation", OID),
    ("typdefaultbin", TEXT),
    ("typdefault", TEXT),
    ("typacl", TEXTS),
];
const CONSTRAINT_COLS: Spec = &[
    ("oid", OID),
    ("conname", NAME),
    ("connamespace", OID),
    ("contype", CHAR),
    ("condeferrable", BOOL),
    ("condeferred", BOOL),
    ("convalidated", BOOL),
    ("conrelid", OID),
    ("contypid", OID),
    ("conindid", OID),
    ("conparentid", OID),
    ("confrelid", OID),
    ("confupdtype", CHAR),
    ("confdeltype", CHAR),
    ("confmatchtype", CHAR),
    ("conislocal", BOOL),
    ("coninhcount", I4),
    ("connoinherit", BOOL),
    ("conkey", I2S),
    ("confkey", I2S),
    ("conpfeqop", OIDS),
    ("conppeqop", OIDS),
    ("conffeqop", OIDS),
    ("confdelsetcols", I2S),
    ("conexclop", OIDS),
    ("conbin", TEXT),
];
const INDEX_COLS: Spec = &[
    ("indexrelid", OID),
    ("indrelid", OID),
    ("indnatts", I2),
    ("indnkeyatts", I2),
    ("indisunique", BOOL),
    ("indnullsnotdistinct", BOOL),
    ("indisprimary", BOOL),
    ("indisexclusion", BOOL),
    ("indimmediate", BOOL),
    ("indisclustered", BOOL),
    ("indisvalid", BOOL),
    ("indcheckxmin", BOOL),
    ("indisready", BOOL),
    ("indislive", BOOL),
    ("indisreplident", BOOL),
    ("indkey", I2V),
    ("indcollation", OIDV),
    ("indclass", OIDV),
    ("indoption", I2V),
    ("indexprs", TEXT),
    ("indpred", TEXT),
];
const INDEXES_COLS: Spec = &[
    ("schemaname", NAME),
    ("tablename", NAME),
    ("indexname", NAME),
    ("tablespace", NAME),
    ("indexdef", TEXT),
];
const DESCRIPTION_COLS: Spec = &[
    ("objoid", OID),
    ("classoid", OID),
    ("objsubid", I4),
    ("description", TEXT),
];
const ENUM_COLS: Spec = &[
    ("oid", OID),
    ("enumtypid", OID),
    ("enumsortorder", F4),
    ("enumlabel", NAME),
];
const SETTINGS_COLS: Spec = &[
    ("name", TEXT),
    ("setting", TEXT),
    ("unit", TEXT),
    ("category", TEXT),
    ("short_desc", TEXT),
    ("extra_desc", TEXT),
    ("context", TEXT),
    ("vartype", TEXT),
    ("source", TEXT),
    ("min_val", TEXT),
    ("max_val", TEXT),
    ("enumvals", TEXTS),
    ("boot_val", TEXT),
    ("reset_val", TEXT),
    ("sourcefile", TEXT),
    ("sourceline", I4),
    ("pending_restart", BOOL),
];
const DATABASE_COLS: Spec = &[
    ("oid", OID),
    ("datname", NAME),
    ("datdba", OID),
    ("encoding", I4),
    ("datlocprovider", CHAR),
    ("datistemplate", BOOL),
    ("datallowconn", BOOL),
    ("datconnlimit", I4),
    ("datfrozenxid", OID),
    ("datminmxid", OID),
    ("dattablespace", OID),
    ("datcollate", TEXT),
    ("datctype", TEXT),
    ("daticulocale", TEXT),
    ("datcollversion", TEXT),
    ("datacl", TEXTS),
];
const ROLES_COLS: Spec = &[
    ("rolname", NAME),
    ("rolsuper", BOOL),
    ("rolinherit", BOOL),
    ("rolcreaterole", BOOL),
    ("rolcreatedb", BOOL),
    ("rolcanlogin", BOOL),
    ("rolreplication", BOOL),
    ("rolconnlimit", I4),
    ("rolpassword", TEXT),
    ("rolvaliduntil", TSTZ),
    ("rolbypassrls", BOOL),
    ("rolconfig", TEXTS),
    ("oid", OID),
];
const USER_COLS: Spec = &[
    ("usename", NAME),
    ("usesysid", OID),
    ("usecreatedb", BOOL),
    ("usesuper", BOOL),
    ("userepl", BOOL),
    ("usebypassrls", BOOL),
    ("passwd", TEXT),
    ("valuntil", TSTZ),
    ("useconfig", TEXTS),
];
const TABLES_COLS: Spec = &[
    ("schemaname", NAME),
    ("tablename", NAME),
    ("tableowner", NAME),
    ("tablespace", NAME),
    ("hasindexes", BOOL),
    ("hasrules", BOOL),
    ("hastriggers", BOOL),
    ("rowsecurity", BOOL),
];
const VIEWS_COLS: Spec = &[
    ("schemaname", NAME),
    ("viewname", NAME),
    ("viewowner", NAME),
    ("definition", TEXT),
];
const AM_COLS: Spec = &[
    ("oid", OID),
    ("amname", NAME),
    ("amhandler", PgType::Regproc),
    ("amtype", CHAR),
];
const ATTRDEF_COLS: Spec = &[
    ("oid", OID),
    ("adrelid", OID),
    ("adnum", I2),
    ("adbin", TEXT),
];
const INHERITS_COLS: Spec = &[
    ("inhrelid", OID),
    ("inhparent", OID),
    ("inhseqno", I4),
    ("inhdetachpending", BOOL),
];
const AUTH_MEMBERS_COLS: Spec = &[
    ("roleid", OID),
    ("member", OID),
    ("grantor", OID),
    ("admin_option", BOOL),
];
const COLLATION_COLS: Spec = &[
    ("oid", OID),
    ("collname", NAME),
    ("collnamespace", OID),
    ("collowner", OID),
    ("collprovider", CHAR),
    ("collisdeterministic", BOOL),
    ("collencoding", I4),
    ("collcollate", TEXT),
    ("collctype", TEXT),
    ("colliculocale", TEXT),
    ("collversion", TEXT),
];
const TABLESPACE_COLS: Spec = &[
    ("oid", OID),
    ("spcname", NAME),
    ("spcowner", OID),
    ("spcacl", TEXTS),
    ("spcoptions", TEXTS),
];
const POLICY_COLS: Spec = &[
    ("oid", OID),
    ("polname", NAME),
    ("polrelid", OID),
    ("polcmd", CHAR),
    ("polpermissive", BOOL),
    ("polroles", OIDS),
    ("polqual", TEXT),
    ("polwithcheck", TEXT),
];
const CURSORS_COLS: Spec = &[
    ("name", TEXT),
    ("statement", TEXT),
    ("is_holdable", BOOL),
    ("is_binary", BOOL),
    ("is_scrollable", BOOL),
    ("creation_time", TSTZ),
];
const STAT_ACTIVITY_COLS: Spec = &[
    ("datid", OID),
    ("datname", NAME),
    ("pid", PgType::Int4),
    ("leader_pid", PgType::Int4),
    ("usesysid", OID),
    ("usename", NAME),
    ("application_name", TEXT),
    ("client_addr", PgType::Inet),
    ("client_hostname", TEXT),
    ("client_port", PgType::Int4),
    ("backend_start", TSTZ),
    ("xact_start", TSTZ),
    ("query_start", TSTZ),
    ("state_change", TSTZ),
    ("wait_event_type", TEXT),
    ("wait_event", TEXT),
    ("state", TEXT),
    ("backend_xid", PgType::Xid),
    ("backend_xmin", PgType::Xid),
    ("query_id", PgType::Int8),
    ("query", TEXT),
    ("backend_type", TEXT),
];
const TZ_NAMES_COLS: Spec = &[
    ("name", TEXT),
    ("abbrev", TEXT),
    ("utc_offset", PgType::Interval),
    ("is_dst", BOOL),
];
const TZ_ABBREVS_COLS: Spec = &[
    ("abbrev", TEXT),
    ("utc_offset", PgType::Interval),
    ("is_dst", BOOL),
];
const EXTENSION_COLS: Spec = &[
    ("oid", OID),
    ("extname", NAME),
    ("extowner", OID),
    ("extnamespace", OID),
    ("extrelocatable", BOOL),
    ("extversion", TEXT),
    ("extconfig", PgType::OidArray),
    ("extcondition", TEXTS),
];
const STATISTIC_EXT_COLS: Spec = &[
    ("oid", OID),
    ("stxrelid", OID),
    ("stxname", NAME),
    ("stxnamespace", OID),
    ("stxowner", OID),
    ("stxstattarget", I4),
    ("stxkeys", I2V),
    ("stxkind", TEXTS),
    ("stxexprs", TEXT),
];
const PUBLICATION_COLS: Spec = &[
    ("oid", OID),
    ("pubname", NAME),
    ("pubowner", OID),
    ("puballtables", BOOL),
    ("pubinsert", BOOL),
    ("pubupdate", BOOL),
    ("pubdelete", BOOL),
    ("pubtruncate", BOOL),
    ("pubviaroot", BOOL),
];
const PUBLICATION_REL_COLS: Spec = &[
    ("oid", OID),
    ("prpubid", OID),
    ("prrelid", OID),
    ("prqual", TEXT),
    ("prattrs", I2V),
];
const PUBLICATION_NAMESPACE_COLS: Spec = &[("oid", OID), ("pnpubid", OID), ("pnnspid", OID)];
const IS_SCHEMATA_COLS: Spec = &[
    ("catalog_name", NAME),
    ("schema_name", NAME),
    ("schema_owner", NAME),
    ("default_character_set_catalog", NAME),
    ("default_character_set_schema", NAME),
    ("default_character_set_name", NAME),
    ("sql_path", VARCHAR),
];
const IS_TABLE_CONSTRAINTS_COLS: Spec = &[
    ("constraint_catalog", NAME),
    ("constraint_schema", NAME),
    ("constraint_name", NAME),
    ("table_catalog", NAME),
    ("table_schema", NAME),
    ("table_name", NAME),
    ("constraint_type", VARCHAR),
    ("is_deferrable", VARCHAR),
    ("initially_deferred", VARCHAR),
    ("enforced", VARCHAR),
    ("nulls_distinct", VARCHAR),
];
const IS_KEY_COLUMN_USAGE_COLS: Spec = &[
    ("constraint_catalog", NAME),
    ("constraint_schema", NAME),
    ("constraint_name", NAME),
    ("table_catalog", NAME),
    ("table_schema", NAME),
    ("table_name", NAME),
    ("column_name", NAME),
    ("ordinal_position", I4),
    ("position_in_unique_constraint", I4),
];
const IS_CONSTRAINT_COLUMN_USAGE_COLS: Spec = &[
    ("table_catalog", NAME),
    ("table_schema", NAME),
    ("table_name", NAME),
    ("column_name", NAME),
    ("constraint_catalog", NAME),
    ("constraint_schema", NAME),
    ("constraint_name", NAME),
];
const IS_REFERENTIAL_CONSTRAINTS_COLS: Spec = &[
    ("constraint_catalog", NAME),
    ("constraint_schema", NAME),
    ("constraint_name", NAME),
    ("unique_constraint_catalog", NAME),
    ("unique_constraint_schema", NAME),
    ("unique_constraint_name", NAME),
    ("match_option", VARCHAR),
    ("update_rule", VARCHAR),
    ("delete_rule", VARCHAR),
];
const IS_CHECK_CONSTRAINTS_COLS: Spec = &[
    ("constraint_catalog", NAME),
    ("constraint_schema", NAME),
    ("constraint_name", NAME),
    ("check_clause", VARCHAR),
];
const SEQUENCE_COLS: Spec = &[
    ("seqrelid", OID),
    ("seqtypid", OID),
    ("seqstart", I8),
    ("seqincrement", I8),
    ("seqmax", I8),
    ("seqmin", I8),
    ("seqcache", I8),
    ("seqcycle", BOOL),
];
const DEPEND_COLS: Spec = &[
    ("classid", OID),
    ("objid", OID),
    ("objsubid", I4),
    ("refclassid", OID),
    ("refobjid", OID),
    ("refobjsubid", I4),
    ("deptype", CHAR),
];
const SEQUENCES_COLS: Spec = &[
    ("schemaname", NAME),
    ("sequencename", NAME),
    ("sequenceowner", NAME),
    ("data_type", PgType::Regtype),
    ("start_value", I8),
    ("min_value", I8),
    ("max_value", I8),
    ("increment_by", I8),
    ("cycle", BOOL),
    ("cache_size", I8),
    ("last_value", I8),
];
const IS_SEQUENCES_COLS: Spec = &[
    ("sequence_catalog", NAME),
    ("sequence_schema", NAME),
    ("sequence_name", NAME),
    ("data_type", VARCHAR),
    ("numeric_precision", I4),
    ("numeric_precision_radix", I4),
    ("numeric_scale", I4),
    ("start_value", VARCHAR),
    ("minimum_value", VARCHAR),
    ("maximum_value", VARCHAR),
    ("increment", VARCHAR),
    ("cycle_option", VARCHAR),
];
const IS_TABLES_COLS: Spec = &[
    ("table_catalog", NAME),
    ("table_schema", NAME),
    ("table_name", NAME),
    ("table_type", VARCHAR),
    ("self_referencing_column_name", NAME),
    ("reference_generation", VARCHAR),
    ("user_defined_type_catalog", NAME),
    ("user_defined_type_schema", NAME),
    ("user_defined_type_name", NAME),
    ("is_insertable_into", VARCHAR),
    ("is_typed", VARCHAR),
    ("commit_action", VARCHAR),
];
const IS_VIEWS_COLS: Spec = &[
    ("table_catalog", NAME),
    ("table_schema", NAME),
    ("table_name", NAME),
    ("view_definition", VARCHAR),
    ("check_option", VARCHAR),
    ("is_updatable", VARCHAR),
    ("is_insertable_into", VARCHAR),
    ("is_trigger_updatable", VARCHAR),
    ("is_trigger_deletable", VARCHAR),
    ("is_trigger_insertable_into", VARCHAR),
];
const IS_COLUMNS_COLS: Spec = &[
    ("table_catalog", NAME),
    ("table_schema", NAME),
    ("table_name", NAME),
    ("column_name", NAME),
    ("ordinal_position", I4),
    ("column_default", VARCHAR),
    ("is_nullable", VARCHAR),
    ("data_type", VARCHAR),
    ("character_maximum_length", I4),
    ("character_octet_length", I4),
    ("numeric_precision", I4),
    ("numeric_precision_radix", I4),
    ("numeric_scale", I4),
    ("datetime_precision", I4),
    ("interval_type", VARCHAR),
    ("interval_precision", I4),
    ("character_set_catalog", NAME),
    ("character_set_schema", NAME),
    ("character_set_name", NAME),
    ("collation_catalog", NAME),
    ("collation_schema", NAME),
    ("collation_name", NAME),
    ("domain_catalog", NAME),
    ("domain_schema", NAME),
    ("domain_name", NAME),
    ("udt_catalog", NAME),
    ("udt_schema", NAME),
    ("udt_name", NAME),
    ("scope_catalog", NAME),
    ("scope_schema", NAME),
    ("scope_name", NAME),
    ("maximum_cardinality", I4),
    ("dtd_identifier", NAME),
    ("is_self_referencing", VARCHAR),
    ("is_identity", VARCHAR),
    ("identity_generation", VARCHAR),
    ("identity_start", VARCHAR),
    ("identity_increment", VARCHAR),
    ("identity_maximum", VARCHAR),
    ("identity_minimum", VARCHAR),
    ("identity_cycle", VARCHAR),
    ("is_generated", VARCHAR),
    ("generation_expression", VARCHAR),
    ("is_updatable", VARCHAR),
];

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
        Which::Empty,
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

struct BaseType {
    oid: u32,
    name: &'static str,
    len: i16,
    byval: bool,
    /// `'b'` base or `'p'` pseudo.
    kind: char,
    category: char,
    preferred: bool,
    elem: u32,
    array: u32,
    align: char,
    storage: char,
    collation: u32,
    input: &'static str,
    modin: &'static str,
}

#[allow(clippy::too_many_arguments)]
const fn bt(
    oid: u32,
    name: &'static str,
    len: i16,
    byval: bool,
    category: char,
    preferred: bool,
    array: u32,
    align: char,
    storage: char,
    collation: u32,
    input: &'static str,
    modin: &'static str,
) -> BaseType {
    BaseType {
        oid,
        name,
        len,
        byval,
        kind: 'b',
        category,
        preferred,
        elem: 0,
        array,
        align,
        storage,
        collation,
        input,
        modin,
    }
}

/// The base types behind every [`PgType`], with PostgreSQL 15's pg_type data.
const BASE_TYPES: &[BaseType] = &[
    bt(
        16, "bool", 1, true, 'B', true, 1000, 'c', 'p', 0, "boolin", "-",
    ),
    bt(
        17, "bytea", -1, false, 'U', false, 1001, 'i', 'x', 0, "byteain", "-",
    ),
    bt(
        18, "char", 1, true, 'Z', false, 1002, 'c', 'p', 0, "charin", "-",
    ),
    BaseType {
        elem: 18,
        ..bt(
            19,
            "name",
            64,
            false,
            'S',
            false,
            1003,
            'c',
            'p',
            C_COLLATION_OID,
            "namein",
            "-",
        )
    },
    bt(
        20, "int8", 8, true, 'N', false, 1016, 'd', 'p', 0, "int8in", "-",
    ),
    bt(
        21, "int2", 2, true, 'N', false, 1005, 's', 'p', 0, "int2in", "-",
    ),
    bt(
        23, "int4", 4, true, 'N', false, 1007, 'i', 'p', 0, "int4in", "-",
    ),
    bt(
        25,
        "text",
        -1,
        false,
        'S',
        true,
        1009,
        'i',
        'x',
        DEFAULT_COLLATION_OID,
        "textin",
        "-",
    ),
    bt(
        26, "oid", 4, true, 'N', true, 1028, 'i', 'p', 0, "oidin", "-",
    ),
    bt(
        27, "tid", 6, false, 'U', false, 1010, 's', 'p', 0, "tidin", "-",
    ),
    bt(
        28, "xid", 4, true, 'U', false, 1011, 'i', 'p', 0, "xidin", "-",
    ),
    // The type of the system columns `cmin` and `cmax` (`pg_attribute`); no value has it.
    bt(
        29, "cid", 4, true, 'U', false, 1012, 'i', 'p', 0, "cidin", "-",
    ),
    bt(
        869, "inet", -1, false, 'I', true, 1041, 'i', 'm', 0, "inet_in", "-",
    ),
    bt(
        700, "float4", 4, true, 'N', false, 1021, 'i', 'p', 0, "float4in", "-",
    ),
    bt(
        701, "float8", 8, true, 'N', true, 1022, 'd', 'p', 0, "float8in", "-",
    ),
    BaseType {
        kind: 'p',
        ..bt(
            705,
            "unknown",
            -2,
            false,
            'X',
            false,
            0,
            'c',
            'p',
            0,
            "unknownin",
            "-",
        )
    },
    BaseType {
        kind: 'p',
        ..bt(
            2278, "void", 4, true, 'P', false, 0, 'i', 'p', 0, "void_in", "-",
        )
    },
    // An anonymous row (`_pg_expandarray`'s result); its array `_record` is a pseudo-type too.
    BaseType {
        kind: 'p',
        ..bt(
            2249,
            "record",
            -1,
            false,
            'P',
            false,
            2287,
            'd',
            'x',
            0,
            "record_in",
            "-",
        )
    },
    bt(
        1042,
        "bpchar",
        -1,
        false,
        'S',
        false,
        1014,
        'i',
        'x',
        DEFAULT_COLLATION_OID,
        "bpcharin",
        "bpchartypmodin",
    ),
    bt(
        1043,
        "varchar",
        -1,
        false,
        'S',
        false,
        1015,
        'i',
        'x',
        DEFAULT_COLLATION_OID,
        "varcharin",
        "varchartypmodin",
    ),
    bt(
        1082, "date", 4, true, 'D', false, 1182, 'i', 'p', 0, "date_in", "-",
    ),
    bt(
        1083,
        "time",
        8,
        true,
        'D',
        false,
        1183,
        'd',
        'p',
        0,
        "time_in",
        "timetypmodin",
    ),
    bt(
        1114,
        "timestamp",
        8,
        true,
        'D',
        false,
        1115,
        'd',
        'p',
        0,
        "timestamp_in",
        "timestamptypmodin",
    ),
    bt(
        1184,
        "timestamptz",
        8,
        true,
        'D',
        true,
        1185,
        'd',
        'p',
        0,
        "timestamptz_in",
        "timestamptztypmodin",
    ),
    bt(
        1186,
        "interval",
        16,
        false,
        'T',
        true,
        1187,
        'd',
        'p',
        0,
        "interval_in",
        "intervaltypmodin",
    ),
    bt(
        1700,
        "numeric",
        -1,
        false,
        'N',
        false,
        1231,
        'i',
        'm',
        0,
        "numeric_in",
        "numerictypmodin",
    ),
    bt(
        2205,
        "regclass",
        4,
        true,
        'N',
        false,
        2210,
        'i',
        'p',
        0,
        "regclassin",
        "-",
    ),
    bt(
        2206,
        "regtype",
        4,
        true,
        'N',
        false,
        2211,
        'i',
        'p',
        0,
        "regtypein",
        "-",
    ),
    bt(
        4089,
        "regnamespace",
        4,
        true,
        'N',
        false,
        4090,
        'i',
        'p',
        0,
        "regnamespacein",
        "-",
    ),
    bt(
        2950, "uuid", 16, false, 'U', false, 2951, 'c', 'p', 0, "uuid_in", "-",
    ),
    // Their array types (`_regproc`, `_int2vector`) are not listed: RockLake has none.
    bt(
        24,
        "regproc",
        4,
        true,
        'N',
        false,
        0,
        'i',
        'p',
        0,
        "regprocin",
        "-",
    ),
    bt(
        114, "json", -1, false, 'U', false, 0, 'i', 'x', 0, "json_in", "-",
    ),
    vector(22, "int2vector", 21, "int2vectorin"),
    vector(30, "oidvector", 26, "oidvectorin"),
];

/// `int2vector` / `oidvector`: arrays of `elem` written with spaces (no array type of their
/// own here).
const fn vector(oid: u32, name: &'static str, elem: u32, input: &'static str) -> BaseType {
    BaseType {
        elem,
        ..bt(oid, name, -1, false, 'A', false, 0, 'i', 'p', 0, input, "-")
    }
}

/// The name `format_type` gives a type `pg_type` lists that no [`PgType`] is (`cid`, arrays
/// such as `_cid` and `_record`: `cid[]`, `record[]`).
pub fn other_type_name(oid: u32) -> Option<String> {
    match base_type(oid) {
        Some(bt) => Some(bt.name.to_string()),
        None => BASE_TYPES
            .iter()
            .find(|bt| bt.array == oid)
            .map(|bt| format!("{}[]", bt.name)),
    }
}

/// The OID of a type [`other_type_name`] names.
pub fn other_type_oid(name: &str) -> Option<u32> {
    match name.strip_suffix("[]") {
        Some(elem) => BASE_TYPES
            .iter()
            .find(|bt| bt.name == elem && bt.array != 0)
            .map(|bt| bt.array),
        None => BASE_TYPES
            .iter()
            .find(|bt| bt.name == name)
            .map(|bt| bt.oid),
    }
}

fn base_type(oid: u32) -> Option<&'static BaseType> {
    BASE_TYPES.iter().find(|b| b.oid == oid)
}

/// Storage facts of a type: (byval, align, storage, collation); arrays are varlena.
fn type_facts(ty: PgType) -> (bool, char, char, u32) {
    match base_type(ty.oid()) {
        Some(bt) => (bt.byval, bt.align, bt.storage, bt.collation),
        None => {
            // an array type: find its element
            let elem = BASE_TYPES.iter().find(|bt| bt.array == ty.oid());
            let align = match elem {
                Some(e) if e.align == 'd' => 'd',
                _ => 'i',
            };
            (false, align, 'x', elem.map(|e| e.collation).unwrap_or(0))
        }
    }
}

/// A `regproc` value naming built-in function `name` (`-`: none, OID 0).
fn proc(name: &str) -> Value {
    oid(builtin_proc_oid(name).unwrap_or(0))
}

fn io_name(input: &str, which: &str) -> String {
    match input.strip_suffix("_in") {
        Some(stem) => format!("{stem}_{which}"),
        None => format!("{}{which}", input.strip_suffix("in").unwrap_or(input)),
    }
}

#[allow(clippy::too_many_arguments)]
fn type_row(
    need: Need<'_>,
    oid_: u32,
    name: &str,
    namespace: u32,
    len: i16,
    byval: bool,
    kind: char,
    category: char,
    preferred: bool,
    relid: u32,
    subscript: &str,
    elem: u32,
    array: u32,
    input: &str,
    modin: &str,
    analyze: &str,
    align: char,
    storage: char,
    collation: u32,
) -> Vec<Value> {
    let modout = || {
        if modin == "-" {
            proc("-")
        } else {
            proc(&modin.replace("typmodin", "typmodout"))
        }
    };
    row![
        oid(oid_),
        need.text(1, || t(name)),
        oid(namespace),
        oid(SUPERUSER_OID),
        int(len as i64),
        b(byval),
        need.text(6, || ch(kind)),
        need.text(7, || ch(category)),
        b(preferred),
        b(true),
        need.text(10, || ch(',')),
        oid(relid),
        need.text(12, || proc(subscript)),
        oid(elem),
        oid(array),
        need.text(15, || proc(input)),
        need.text(16, || proc(&io_name(input, "out"))),
        need.text(17, || proc(&io_name(input, "recv"))),
        need.text(18, || proc(&io_name(input, "send"))),
        need.text(19, || proc(modin)),
        need.text(20, modout),
        need.text(21, || proc(analyze)),
        need.text(22, || ch(align)),
        need.text(23, || ch(storage)),
        b(false),
        oid(0),
        int(-1),
        int(0),
        oid(collation),
        NULL,
        NULL,
        NULL,
    ]
}

fn type_rows(view: &CatalogView<'_>, want: Want<'_>, need: Need<'_>) -> Vec<Vec<Value>> {
    let mut rows: Vec<(u32, Vec<Value>)> = Vec::new();
    for bt in BASE_TYPES {
        let array_wanted = || bt.array != 0 && want(bt.array, "_", bt.name);
        if !(want(bt.oid, "", bt.name) || array_wanted()) {
            continue;
        }
        // `name` is subscripted as raw bytes; the vectors are arrays (from 0).
        let subscript = match (bt.elem, bt.category) {
            (0, _) => "-",
            (_, 'A') => "array_subscript_handler",
            _ => "raw_array_subscript_handler",
        };
        rows.push((
            bt.oid,
            type_row(
                need,
                bt.oid,
                bt.name,
                PG_CATALOG_OID,
                bt.len,
                bt.byval,
                bt.kind,
                bt.category,
                bt.preferred,
                0,
                subscript,
                bt.elem,
                bt.array,
                bt.input,
                bt.modin,
                "-",
                bt.align,
                bt.storage,
                bt.collation,
            ),
        ));
        if bt.array != 0 {
            let align = if bt.align == 'd' { 'd' } else { 'i' };
            let (kind, category) = if bt.kind == 'p' {
                ('p', 'P')
            } else {
                ('b', 'A')
            };
            rows.push((
                bt.array,
                type_row(
                    need,
                    bt.array,
                    &format!("_{}", bt.name),
                    PG_CATALOG_OID,
                    -1,
                    false,
                    kind,
                    category,
                    false,
                    0,
                    "array_subscript_handler",
                    bt.oid,
                    0,
                    "array_in",
                    bt.modin,
                    "array_typanalyze",
                    align,
                    'x',
                    bt.collation,
                ),
            ));
        }
    }
    rows.sort_by_key(|(o, _)| *o);
    let mut out: Vec<Vec<Value>> = rows.into_iter().map(|(_, r)| r).collect();
    let composite = |oid_: u32, name: &str, ns: u32, relid: u32| {
        type_row(
            need,
            oid_,
            name,
            ns,
            -1,
            false,
            'c',
            'C',
            false,
            relid,
            "-",
            0,
            0,
            "record_in",
            "-",
            "-",
            'd',
            'x',
            0,
        )
    };
    for r in RELATIONS
        .iter()
        .filter(|r| listed(r) && want(r.rowtype, "", r.name))
    {
        out.push(composite(
            r.rowtype,
            r.name,
            schema_oid_of(view, r.schema),
            r.oid,
        ));
    }
    // A sequence has no row type (`reltype` 0).
    for tb in view
        .tables
        .iter()
        .filter(|tb| tb.sequence.is_none() && want(tb.rowtype_oid(), "", &tb.name))
    {
        out.push(composite(
            tb.rowtype_oid(),
            &tb.name,
            schema_oid_of(view, &tb.schema),
            tb.oid,
        ));
    }
    out
}

// ------------------------------------------------------------------ namespaces

/// All namespaces in OID order: the built-in ones, then user schemas (a user entry named like a
/// built-in one is the built-in one).
fn all_schemas(view: &CatalogView<'_>) -> Vec<(String, u32)> {
    let mut v: Vec<(String, u32)> = BUILTIN_SCHEMAS
        .iter()
        .map(|(n, o)| (n.to_string(), *o))
        .collect();
    for s in view.schemas {
        if !v.iter().any(|(n, _)| *n == s.name) {
            v.push((s.name.clone(), s.oid));
        }
    }
    v.sort_by_key(|(_, o)| *o);
    v
}

/// OID of a schema by name; 0 when the registry holds a table in an unknown schema.
fn schema_oid_of(view: &CatalogView<'_>, name: &str) -> u32 {
    crate::catalog::schema_oid(name, view.schemas)
}

fn namespace_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let u = view.user;
    all_schemas(view)
        .into_iter()
        .map(|(name, o)| {
            let acl = match name.as_str() {
                "pg_catalog" | "information_schema" => {
                    let u = acl_role_name(u);
                    texts(&[format!("{u}=UC/{u}"), format!("=U/{u}")])
                }
                "public" => texts(&[
                    "pg_database_owner=UC/pg_database_owner".to_string(),
                    "=U/pg_database_owner".to_string(),
                ]),
                _ => NULL,
            };
            let owner = if name == "public" {
                PG_DATABASE_OWNER_OID
            } else {
                SUPERUSER_OID
            };
            row![oid(o), Value::text(name), oid(owner), acl]
        })
        .collect()
}

// ------------------------------------------------------------------ pg_class

#[allow(clippy::too_many_arguments)]
fn class_row(
    need: Need<'_>,
    oid_: u32,
    name: &str,
    namespace: u32,
    reltype: u32,
    am: u32,
    filenode: u32,
    tablespace: u32,
    relpages: i64,
    reltuples: f64,
    hasindex: bool,
    shared: bool,
    kind: char,
    natts: usize,
    xmin: u64,
) -> Vec<Value> {
    let is_table = kind == 'r';
    row![
        oid(oid_),
        need.text(1, || t(name)),
        oid(namespace),
        oid(reltype),
        oid(0),
        oid(SUPERUSER_OID),
        oid(am),
        oid(filenode),
        oid(tablespace),
        int(relpages),
        Value::Float(reltuples),
        int(0),
        oid(0),
        b(hasindex),
        b(shared),
        need.text(15, || ch('p')),
        need.text(16, || ch(kind)),
        int(natts as i64),
        int(0),
        b(false),
        b(false),
        b(false),
        b(false),
        b(false),
        b(true),
        need.text(25, || ch(if kind == 'r' { 'd' } else { 'n' })),
        b(false),
        oid(0),
        oid(if is_table { 3 } else { 0 }),
        oid(if is_table { 1 } else { 0 }),
        NULL,
        NULL,
        NULL,
        // xid is 32 bits wide.
        Value::Int((xmin as u32).into()),
    ]
}

/// `want(oid, prefix, name)`: whether the caller needs the row of the object with this OID
/// and name (`prefix` + `name`; see [`build_only`]).
type Want<'a> = &'a dyn Fn(u32, &'static str, &str) -> bool;

fn class_rows(view: &CatalogView<'_>, want: Want<'_>, need: Need<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for r in RELATIONS.iter().filter(|r| listed(r)) {
        if !want(r.oid, "", r.name) {
            continue;
        }
        let is_table = r.kind == 'r';
        rows.push(class_row(
            need,
            r.oid,
            r.name,
            schema_oid_of(view, r.schema),
            r.rowtype,
            if is_table { HEAP_AM_OID } else { 0 },
            if is_table && !r.shared { r.oid } else { 0 },
            if r.shared { 1664 } else { 0 },
            0,
            -1.0,
            false,
            r.shared,
            r.kind,
            r.cols.len(),
            BOOTSTRAP_XID,
        ));
    }
    for tb in view.tables {
        let has_pk = !tb.primary_key.is_empty();
        let want_table = want(tb.oid, "", &tb.name);
        let want_pkey = has_pk && want(tb.pkey_oid(), "", &tb.pkey_name);
        if !want_table && !want_pkey {
            continue;
        }
        let ns = schema_oid_of(view, &tb.schema);
        let live = (view.row_counts)(tb.id) as f32 as f64;
        let xmin = match tb.version {
            0 => view.txid,
            v => v,
        };
        if want_table && tb.sequence.is_some() {
            // A sequence: one page holding its one tuple, no access method, no row type.
            rows.push(class_row(
                need,
                tb.oid,
                &tb.name,
                ns,
                0,
                0,
                tb.oid,
                0,
                1,
                1.0,
                false,
                false,
                'S',
                tb.columns.len(),
                xmin,
            ));
        } else if want_table {
            // A view has a row type but no storage and no rows (PostgreSQL's reltuples -1:
            // never counted).
            let view = tb.view.is_some();
            rows.push(class_row(
                need,
                tb.oid,
                &tb.name,
                ns,
                tb.rowtype_oid(),
                if view { 0 } else { HEAP_AM_OID },
                if view { 0 } else { tb.oid },
                0,
                0, // relpages: always 0, see the module documentation
                if view { -1.0 } else { live },
                has_pk,
                false,
                if view { 'v' } else { 'r' },
                tb.columns.len(),
                xmin,
            ));
        }
        if want_pkey {
            rows.push(class_row(
                need,
                tb.pkey_oid(),
                &tb.pkey_name,
                ns,
                0,
                BTREE_AM_OID,
                tb.pkey_oid(),
                0,
                1, // a built btree index has its metapage
                0.0,
                false,
                false,
                'i',
                tb.primary_key.len(),
                xmin,
            ));
        }
    }
    rows
}

// ------------------------------------------------------------------ pg_attribute

#[allow(clippy::too_many_arguments)]
fn attribute_row(
    need: Need<'_>,
    relid: u32,
    name: &str,
    ty: PgType,
    num: i64,
    typmod: i32,
    notnull: bool,
    hasdef: bool,
) -> Vec<Value> {
    let (byval, align, storage, collation) = type_facts(ty);
    row![
        oid(relid),
        need.text(1, || t(name)),
        oid(ty.oid()),
        int(-1),
        int(ty.typlen() as i64),
        int(num),
        int(if ty.is_array() { 1 } else { 0 }),
        int(-1),
        int(typmod as i64),
        b(byval),
        need.text(10, || ch(align)),
        need.text(11, || ch(storage)),
        nul_char(),
        b(notnull),
        b(hasdef),
        b(false),
        nul_char(),
        nul_char(),
        b(false),
        b(true),
        int(0),
        oid(collation),
        NULL,
        NULL,
        NULL,
        NULL,
    ]
}

fn attribute_rows(view: &CatalogView<'_>, want: Want<'_>, need: Need<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for r in RELATIONS.iter().filter(|r| listed(r)) {
        if !want(r.oid, "", r.name) {
            continue;
        }
        // Bootstrap catalogs mark their leading fixed-width columns NOT NULL; views mark none.
        let mut fixed_prefix = r.kind == 'r';
        for (i, (name, ty)) in r.cols.iter().enumerate() {
            fixed_prefix = fixed_prefix && ty.typlen() > 0;
            // `name` columns get the "C" collation, text columns the default one (from the type).
            rows.push(attribute_row(
                need,
                r.oid,
                name,
                *ty,
                i as i64 + 1,
                -1,
                fixed_prefix,
                false,
            ));
        }
        if r.kind == 'r' {
            system_attribute_rows(r.oid, &mut rows, need);
        }
    }
    for tb in view.tables {
        if want(tb.oid, "", &tb.name) {
            table_attribute_rows(tb, &mut rows, need);
        }
        if !tb.primary_key.is_empty() && want(tb.pkey_oid(), "", &tb.pkey_name) {
            pkey_attribute_rows(tb, &mut rows, need);
        }
    }
    rows
}

/// A heap relation's system columns, as PostgreSQL lists them (attnum -6 … -1, NOT NULL, no
/// statistics target). `cmin`/`cmax` are `cid`, which has no [`PgType`]: written as `xid`,
/// whose storage is the same, then given cid's OID.
fn system_attribute_rows(relid: u32, rows: &mut Vec<Vec<Value>>, need: Need<'_>) {
    const CID_OID: u32 = 29;
    const SYSTEM: [(&str, PgType, u32); 6] = [
        ("tableoid", PgType::Oid, 26),
        ("cmax", PgType::Xid, CID_OID),
        ("xmax", PgType::Xid, 28),
        ("cmin", PgType::Xid, CID_OID),
        ("xmin", PgType::Xid, 28),
        ("ctid", PgType::Tid, 27),
    ];
    for (num, (name, ty, type_oid)) in (-6..).zip(SYSTEM) {
        let mut row = attribute_row(need, relid, name, ty, num, -1, true, false);
        row[2] = oid(type_oid);
        row[3] = int(0);
        rows.push(row);
    }
}

fn table_attribute_rows(tb: &Table, rows: &mut Vec<Vec<Value>>, need: Need<'_>) {
    // A view has none.
    if tb.view.is_none() {
        system_attribute_rows(tb.oid, rows, need);
    }
    for (i, c) in tb.columns.iter().enumerate() {
        // PRIMARY KEY implies NOT NULL, as PostgreSQL records it.
        let not_null = c.not_null || tb.primary_key.contains(&i);
        rows.push(attribute_row(
            need,
            tb.oid,
            &c.name,
            c.ty,
            i as i64 + 1,
            c.typmod,
            not_null,
            c.default_sql.is_some(),
        ));
        if let (Some(identity), Some(row)) = (c.identity, rows.last_mut()) {
            row[16] = ch(if identity.always { 'a' } else { 'd' });
        }
    }
}

/// The columns of a table's primary-key index.
fn pkey_attribute_rows(tb: &Table, rows: &mut Vec<Vec<Value>>, need: Need<'_>) {
    for (k, ci) in tb.primary_key.iter().enumerate() {
        if let Some(c) = tb.columns.get(*ci) {
            rows.push(attribute_row(
                need,
                tb.pkey_oid(),
                &c.name,
                c.ty,
                k as i64 + 1,
                c.typmod,
                false,
                false,
            ));
        }
    }
}

// ------------------------------------------------------------------ constraints and indexes

/// `pg_sequence` (`view`: false) or `pg_sequences` (true): one row per sequence.
fn sequence_rows(view: &CatalogView<'_>, as_view: bool) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for tb in view.tables {
        let Some(def) = tb.sequence.as_deref() else {
            continue;
        };
        let numbers = [def.start, def.min, def.max, def.increment];
        rows.push(if as_view {
            // `last_value` is NULL until a value has been drawn.
            let last = (view.sequence_value)(tb)
                .filter(|v| v.called)
                .map_or(NULL, |v| int(v.last));
            let mut row = vec![t(&tb.schema), t(&tb.name), t(view.user), oid(def.ty.oid())];
            row.extend(numbers.iter().map(|n| int(*n)));
            row.extend([b(def.cycle), int(def.cache), last]);
            row
        } else {
            vec![
                oid(tb.oid),
                oid(def.ty.oid()),
                int(def.start),
                int(def.increment),
                int(def.max),
                int(def.min),
                int(def.cache),
                b(def.cycle),
            ]
        });
    }
    rows
}

/// `pg_depend`: the dependencies RockLake tracks — each owned sequence on its column
/// (`'a'` for serial, `'i'` for identity), what psql's `\d` reads.
fn depend_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    const PG_CLASS: u32 = 1259;
    let mut rows = Vec::new();
    for s in view.tables {
        let Some((def, (owner, column))) = s
            .sequence
            .as_deref()
            .and_then(|d| d.owner.as_ref().map(|o| (d, o)))
        else {
            continue;
        };
        let Some(t) = view.tables.iter().find(|t| t.id == *owner) else {
            continue;
        };
        let Some(attnum) = t.column_index(column) else {
            continue;
        };
        rows.push(vec![
            oid(PG_CLASS),
            oid(s.oid),
            int(0),
            oid(PG_CLASS),
            oid(t.oid),
            int(attnum as i64 + 1),
            ch(if def.identity { 'i' } else { 'a' }),
        ]);
    }
    // A serial column's default draws from its sequence (pg_dump then sets the default after
    // creating the sequence).
    const PG_ATTRDEF: u32 = 2604;
    for t in view.tables {
        for (i, c) in t.columns.iter().enumerate() {
            let Some(seq) = c
                .serial
                .and_then(|id| view.tables.iter().find(|s| s.id == id))
            else {
                continue;
            };
            if c.default_sql.is_none() {
                continue;
            }
            rows.push(vec![
                oid(PG_ATTRDEF),
                oid(attrdef_oid(t.oid, i + 1)),
                int(0),
                oid(PG_CLASS),
                oid(seq.oid),
                int(0),
                ch('n'),
            ]);
        }
    }
    rows
}

/// `information_schema.sequences`: the sequences that are not an identity column's.
fn is_sequences_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for tb in view.tables {
        let Some(def) = tb.sequence.as_deref().filter(|d| !d.identity) else {
            continue;
        };
        let bits = match def.ty {
            PgType::Int2 => 16,
            PgType::Int4 => 32,
            _ => 64,
        };
        let text = |n: i64| Value::text(n.to_string());
        rows.push(vec![
            t(view.database),
            t(&tb.schema),
            t(&tb.name),
            Value::text(crate::query::format_type(def.ty, -1)),
            int(bits),
            int(2),
            int(0),
            text(def.start),
            text(def.min),
            text(def.max),
            text(def.increment),
            t(if def.cycle { "YES" } else { "NO" }),
        ]);
    }
    rows
}

/// The user relations that are tables (not sequences): what `pg_tables` and
/// `information_schema`'s table views list.
fn tables_only<'v>(view: &'v CatalogView<'_>) -> impl Iterator<Item = &'v TableRef> {
    view.tables.iter().filter(|tb| tb.sequence.is_none())
}

fn pk_attnums(tb: &Table) -> Vec<i64> {
    tb.primary_key.iter().map(|i| *i as i64 + 1).collect()
}

fn constraint_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    view.tables
        .iter()
        .filter(|tb| !tb.primary_key.is_empty())
        .map(|tb| {
            row![
                oid(tb.pkey_oid()),
                t(&tb.pkey_name),
                oid(schema_oid_of(view, &tb.schema)),
                ch('p'),
                b(false),
                b(false),
                b(true),
                oid(tb.oid),
                oid(0),
                oid(tb.pkey_oid()),
                oid(0),
                oid(0),
                ch(' '),
                ch(' '),
                ch(' '),
                b(true),
                int(0),
                b(true),
                int2s(pk_attnums(tb)),
                NULL,
                NULL,
                NULL,
                NULL,
                NULL,
                NULL,
                NULL,
            ]
        })
        .collect()
}

fn index_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    view.tables
        .iter()
        .filter(|tb| !tb.primary_key.is_empty())
        .map(|tb| {
            let n = tb.primary_key.len() as i64;
            row![
                oid(tb.pkey_oid()),
                oid(tb.oid),
                int(n),
                int(n),
                b(true),
                b(false),
                b(true),
                b(false),
                b(true),
                b(false),
                b(true),
                b(false),
                b(true),
                b(true),
                b(false),
                int2s(pk_attnums(tb)),
                int2s(pk_types(tb).map(|ty| i64::from(type_facts(ty).3))),
                int2s(pk_types(tb).map(|ty| i64::from(btree_opclass(ty)))),
                int2s(tb.primary_key.iter().map(|_| 0)),
                NULL,
                NULL,
            ]
        })
        .collect()
}

fn pk_types(tb: &Table) -> impl Iterator<Item = PgType> + '_ {
    tb.primary_key
        .iter()
        .filter_map(|i| tb.columns.get(*i))
        .map(|c| c.ty)
}

/// PostgreSQL 15's default btree operator classes of the types RockLake has ([`btree_opclass`]):
/// (oid, name, family, input type, key type).
const BTREE_OPCLASSES: &[(u32, &str, u32, u32, u32)] = &[
    (1978, "int4_ops", 1976, 23, 0),
    (1979, "int2_ops", 1976, 21, 0),
    (1981, "oid_ops", 1989, 26, 0),
    (3122, "date_ops", 434, 1082, 0),
    (3123, "float8_ops", 1970, 701, 0),
    (3124, "int8_ops", 1976, 20, 0),
    (3125, "numeric_ops", 1988, 1700, 0),
    (3126, "text_ops", 1994, 25, 0),
    (3127, "timestamptz_ops", 434, 1184, 0),
    (3128, "timestamp_ops", 434, 1114, 0),
    (10000, "array_ops", 397, 2277, 0),
    (10003, "bool_ops", 424, 16, 0),
    (10004, "bpchar_ops", 426, 1042, 0),
    (10006, "bytea_ops", 428, 17, 0),
    (10007, "char_ops", 429, 18, 0),
    (10012, "float4_ops", 1970, 700, 0),
    (10015, "inet_ops", 1974, 869, 0),
    (10022, "interval_ops", 1982, 1186, 0),
    (10028, "name_ops", 1994, 19, 2275),
    (10032, "oidvector_ops", 1991, 30, 0),
    (10038, "time_ops", 1996, 1083, 0),
    (10050, "tid_ops", 2789, 27, 0),
    (10065, "uuid_ops", 2968, 2950, 0),
];

/// The btree operator families of [`BTREE_OPCLASSES`].
const BTREE_OPFAMILIES: &[(u32, &str)] = &[
    (397, "array_ops"),
    (424, "bool_ops"),
    (426, "bpchar_ops"),
    (428, "bytea_ops"),
    (429, "char_ops"),
    (434, "datetime_ops"),
    (1970, "float_ops"),
    (1974, "network_ops"),
    (1976, "integer_ops"),
    (1982, "interval_ops"),
    (1988, "numeric_ops"),
    (1989, "oid_ops"),
    (1991, "oidvector_ops"),
    (1994, "text_ops"),
    (1996, "time_ops"),
    (2789, "tid_ops"),
    (2968, "uuid_ops"),
];

/// The OID of the default btree operator class of `ty` in PostgreSQL 15 (`pg_index.indclass`
/// of a key on it); 0 for a type that has none.
fn btree_opclass(ty: PgType) -> u32 {
    match ty {
        PgType::Int2 => 1979,
        PgType::Int4 => 1978,
        PgType::Int8 => 3124,
        PgType::Text | PgType::Varchar => 3126,
        PgType::Bpchar => 10004,
        PgType::Name => 10028,
        PgType::Char => 10007,
        PgType::Bool => 10003,
        PgType::Bytea => 10006,
        PgType::Oid
        | PgType::Regclass
        | PgType::Regtype
        | PgType::Regnamespace
        | PgType::Regproc => 1981,
        PgType::Float4 => 10012,
        PgType::Float8 => 3123,
        PgType::Numeric => 3125,
        PgType::Date => 3122,
        PgType::Time => 10038,
        PgType::Timestamp => 3128,
        PgType::Timestamptz => 3127,
        PgType::Interval => 10022,
        PgType::Uuid => 10065,
        PgType::Inet => 10015,
        PgType::Tid => 10050,
        PgType::OidVector => 10032,
        t if t.element().is_some() => 10000,
        _ => 0,
    }
}

/// The primary key's columns, quoted as `pg_get_indexdef` and `pg_get_constraintdef` show them.
pub fn pkey_columns(tb: &Table) -> Vec<String> {
    tb.primary_key
        .iter()
        .filter_map(|i| tb.columns.get(*i))
        .map(|c| quote_ident(&c.name))
        .collect()
}

/// `pg_get_indexdef` text of a table's primary-key index.
pub fn pkey_indexdef(tb: &Table) -> String {
    let cols = pkey_columns(tb);
    format!(
        "CREATE UNIQUE INDEX {} ON {}.{} USING {} ({})",
        quote_ident(&tb.pkey_name),
        quote_ident(&tb.schema),
        quote_ident(&tb.name),
        quote_ident("btree"),
        cols.join(", ")
    )
}

/// `pg_get_constraintdef` text of a table's primary-key constraint.
pub fn pkey_constraintdef(tb: &Table) -> String {
    format!("PRIMARY KEY ({})", pkey_columns(tb).join(", "))
}

fn indexes_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    view.tables
        .iter()
        .filter(|tb| !tb.primary_key.is_empty())
        .map(|tb| {
            row![
                t(&tb.schema),
                t(&tb.name),
                t(&tb.pkey_name),
                NULL,
                Value::text(pkey_indexdef(tb)),
            ]
        })
        .collect()
}

fn attrdef_oid(table_oid: u32, attnum: usize) -> u32 {
    // Unique while table OIDs stay below 2^31 / 1600 (MaxHeapAttributeNumber).
    0x8000_0000u32
        .wrapping_add(table_oid.wrapping_mul(1600))
        .wrapping_add(attnum as u32)
}

fn attrdef_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for tb in view.tables {
        for (i, c) in tb.columns.iter().enumerate() {
            if let Some(d) = &c.default_sql {
                // adbin holds the expression text; the executor's pg_get_expr returns it as is.
                rows.push(vec![
                    oid(attrdef_oid(tb.oid, i + 1)),
                    oid(tb.oid),
                    int(i as i64 + 1),
                    t(d),
                ]);
            }
        }
    }
    rows
}

// ------------------------------------------------------------------ pg_tables, pg_views

fn tables_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let u = view.user;
    let mut rows: Vec<Vec<Value>> = RELATIONS
        .iter()
        .filter(|r| r.kind == 'r' && listed(r))
        .map(|r| {
            let space = if r.shared { t("pg_global") } else { NULL };
            vec![
                t(r.schema),
                t(r.name),
                t(u),
                space,
                b(false),
                b(false),
                b(false),
                b(false),
            ]
        })
        .collect();
    for tb in tables_only(view).filter(|tb| tb.view.is_none()) {
        rows.push(vec![
            t(&tb.schema),
            t(&tb.name),
            t(u),
            NULL,
            b(!tb.primary_key.is_empty()),
            b(false),
            b(false),
            b(false),
        ]);
    }
    rows
}

fn views_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    // The virtual system views are listed without a definition.
    let mut rows: Vec<Vec<Value>> = RELATIONS
        .iter()
        .filter(|r| r.kind == 'v' && listed(r))
        .map(|r| vec![t(r.schema), t(r.name), t(view.user), NULL])
        .collect();
    for tb in view.tables {
        if let Some(def) = tb.view.as_deref() {
            rows.push(vec![
                t(&tb.schema),
                t(&tb.name),
                t(view.user),
                Value::text(viewdef(def)),
            ]);
        }
    }
    rows
}

// ------------------------------------------------------------------ databases, roles

pub const PG_DATABASE_OWNER_OID: u32 = 6171;

fn database_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let u = view.user;
    let template_acl = || texts(&[format!("=c/{u}"), format!("{u}=CTc/{u}")]);
    let db = |o: u32, name: &str, template: bool, allow: bool, acl: Value| {
        vec![
            oid(o),
            t(name),
            oid(SUPERUSER_OID),
            int(6), // UTF8
            ch('c'),
            b(template),
            b(allow),
            int(-1),
            oid(716),
            oid(1),
            oid(1663),
            t("C"),
            t("C"),
            NULL,
            NULL,
            acl,
        ]
    };
    let mut rows = vec![
        db(1, "template1", true, true, template_acl()),
        db(4, "template0", true, false, template_acl()),
        db(5, "postgres", false, true, NULL),
    ];
    // The reader's database, unless it is one of PostgreSQL's own.
    if database_oid(view.database, "").is_none() {
        rows.push(db(CURRENT_DATABASE_OID, view.database, false, true, NULL));
    }
    rows
}

/// The OID `pg_database` gives database `name` when the reader's database is `current`:
/// PostgreSQL's fixed ones for `template1`, `template0` and `postgres`; `None` for another
/// database than the reader's, which RockLake's catalogs do not describe.
fn database_oid(name: &str, current: &str) -> Option<u32> {
    match name {
        "template1" => Some(1),
        "template0" => Some(4),
        "postgres" => Some(5),
        _ if name == current => Some(CURRENT_DATABASE_OID),
        _ => None,
    }
}

/// The built-in functions RockLake's catalogs name (`pg_am.amhandler`, the `pg_type` I/O
/// functions), with PostgreSQL 15's OIDs, sorted by name: what a `regproc` value can name,
/// `pg_proc` listing no functions.
const BUILTIN_PROCS: &[(u32, &str)] = &[
    (750, "array_in"),
    (751, "array_out"),
    (2400, "array_recv"),
    (2401, "array_send"),
    (6179, "array_subscript_handler"),
    (3816, "array_typanalyze"),
    (1242, "boolin"),
    (1243, "boolout"),
    (2436, "boolrecv"),
    (2437, "boolsend"),
    (1044, "bpcharin"),
    (1045, "bpcharout"),
    (2430, "bpcharrecv"),
    (2431, "bpcharsend"),
    (2913, "bpchartypmodin"),
    (2914, "bpchartypmodout"),
    (335, "brinhandler"),
    (330, "bthandler"),
    (1244, "byteain"),
    (31, "byteaout"),
    (2412, "bytearecv"),
    (2413, "byteasend"),
    (1245, "charin"),
    (33, "charout"),
    (2434, "charrecv"),
    (2435, "charsend"),
    (52, "cidin"),
    (53, "cidout"),
    (2442, "cidrecv"),
    (2443, "cidsend"),
    (1084, "date_in"),
    (1085, "date_out"),
    (2468, "date_recv"),
    (2469, "date_send"),
    (200, "float4in"),
    (201, "float4out"),
    (2424, "float4recv"),
    (2425, "float4send"),
    (214, "float8in"),
    (215, "float8out"),
    (2426, "float8recv"),
    (2427, "float8send"),
    (333, "ginhandler"),
    (332, "gisthandler"),
    (331, "hashhandler"),
    (3, "heap_tableam_handler"),
    (910, "inet_in"),
    (911, "inet_out"),
    (2496, "inet_recv"),
    (2497, "inet_send"),
    (38, "int2in"),
    (39, "int2out"),
    (2404, "int2recv"),
    (2405, "int2send"),
    (40, "int2vectorin"),
    (41, "int2vectorout"),
    (2410, "int2vectorrecv"),
    (2411, "int2vectorsend"),
    (42, "int4in"),
    (43, "int4out"),
    (2406, "int4recv"),
    (2407, "int4send"),
    (460, "int8in"),
    (461, "int8out"),
    (2408, "int8recv"),
    (2409, "int8send"),
    (1160, "interval_in"),
    (1161, "interval_out"),
    (2478, "interval_recv"),
    (2479, "interval_send"),
    (2903, "intervaltypmodin"),
    (2904, "intervaltypmodout"),
    (321, "json_in"),
    (322, "json_out"),
    (323, "json_recv"),
    (324, "json_send"),
    (34, "namein"),
    (35, "nameout"),
    (2422, "namerecv"),
    (2423, "namesend"),
    (1701, "numeric_in"),
    (1702, "numeric_out"),
    (2460, "numeric_recv"),
    (2461, "numeric_send"),
    (2917, "numerictypmodin"),
    (2918, "numerictypmodout"),
    (1798, "oidin"),
    (1799, "oidout"),
    (2418, "oidrecv"),
    (2419, "oidsend"),
    (54, "oidvectorin"),
    (55, "oidvectorout"),
    (2420, "oidvectorrecv"),
    (2421, "oidvectorsend"),
    (6180, "raw_array_subscript_handler"),
    (2290, "record_in"),
    (2291, "record_out"),
    (2402, "record_recv"),
    (2403, "record_send"),
    (2218, "regclassin"),
    (2219, "regclassout"),
    (2452, "regclassrecv"),
    (2453, "regclasssend"),
    (4084, "regnamespacein"),
    (4085, "regnamespaceout"),
    (4087, "regnamespacerecv"),
    (4088, "regnamespacesend"),
    (44, "regprocin"),
    (45, "regprocout"),
    (2444, "regprocrecv"),
    (2445, "regprocsend"),
    (2220, "regtypein"),
    (2221, "regtypeout"),
    (2454, "regtyperecv"),
    (2455, "regtypesend"),
    (334, "spghandler"),
    (46, "textin"),
    (47, "textout"),
    (2414, "textrecv"),
    (2415, "textsend"),
    (48, "tidin"),
    (49, "tidout"),
    (2438, "tidrecv"),
    (2439, "tidsend"),
    (1143, "time_in"),
    (1144, "time_out"),
    (2470, "time_recv"),
    (2471, "time_send"),
    (1312, "timestamp_in"),
    (1313, "timestamp_out"),
    (2474, "timestamp_recv"),
    (2475, "timestamp_send"),
    (2905, "timestamptypmodin"),
    (2906, "timestamptypmodout"),
    (1150, "timestamptz_in"),
    (1151, "timestamptz_out"),
    (2476, "timestamptz_recv"),
    (2477, "timestamptz_send"),
    (2907, "timestamptztypmodin"),
    (2908, "timestamptztypmodout"),
    (2909, "timetypmodin"),
    (2910, "timetypmodout"),
    (109, "unknownin"),
    (110, "unknownout"),
    (2416, "unknownrecv"),
    (2417, "unknownsend"),
    (2952, "uuid_in"),
    (2953, "uuid_out"),
    (2961, "uuid_recv"),
    (2962, "uuid_send"),
    (1046, "varcharin"),
    (1047, "varcharout"),
    (2432, "varcharrecv"),
    (2433, "varcharsend"),
    (2915, "varchartypmodin"),
    (2916, "varchartypmodout"),
    (2298, "void_in"),
    (2299, "void_out"),
    (3120, "void_recv"),
    (3121, "void_send"),
    (50, "xidin"),
    (51, "xidout"),
    (2440, "xidrecv"),
    (2441, "xidsend"),
];

/// The name of built-in function `oid` ([`BUILTIN_PROCS`]).
pub fn builtin_proc_name(oid: u32) -> Option<&'static str> {
    BUILTIN_PROCS
        .iter()
        .find(|(o, _)| *o == oid)
        .map(|(_, n)| *n)
}

/// The OID of built-in function `name` ([`BUILTIN_PROCS`]).
pub fn builtin_proc_oid(name: &str) -> Option<u32> {
    BUILTIN_PROCS
        .binary_search_by(|(_, n)| (*n).cmp(name))
        .ok()
        .map(|i| BUILTIN_PROCS[i].0)
}

/// A role's name in `aclitem` text, quoted by aclitem's own rule (`putid`): only a name with
/// a character other than a letter, a digit or `_` (keywords and capitals stay bare, and
/// `quote_all_identifiers` does not change it).
fn acl_role_name(name: &str) -> String {
    if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

/// PostgreSQL's `acldefault(kind, owner)`: the privileges an object of that kind has before
/// any GRANT or REVOKE, as `aclitem` texts (`None`: not a kind PostgreSQL knows).
pub fn acl_default(kind: char, owner: &str) -> Option<Vec<String>> {
    let owner = acl_role_name(owner);
    let own = |privs: &str| format!("{owner}={privs}/{owner}");
    let public = |privs: &str| format!("={privs}/{owner}");
    Some(match kind {
        'c' => vec![],
        'r' => vec![own("arwdDxt")],
        's' => vec![own("rwU")],
        'd' => vec![public("Tc"), own("CTc")],
        'f' => vec![public("X"), own("X")],
        'l' => vec![public("U"), own("U")],
        'L' => vec![own("rw")],
        'n' => vec![own("UC")],
        'p' => vec![own("sA")],
        't' => vec![own("C")],
        'F' | 'S' => vec![own("U")],
        'T' => vec![public("U"), own("U")],
        _ => return None,
    })
}

/// `pg_namespace`'s OID (the `classoid` of a schema's comment or initial privileges).
const NAMESPACE_OID: u32 = 2615;
/// `pg_class`'s OID (the `classoid` of a relation's or a column's comment).
const CLASS_OID: u32 = 1259;
/// `pg_constraint`'s OID (the `classoid` of a constraint's comment).
const CONSTRAINT_OID: u32 = 2606;

/// A schema's comment: its definition's, or initdb's for a built-in schema the view does
/// not carry.
pub fn schema_comment<'v>(view_schemas: &'v [Schema], name: &str, o: u32) -> Option<&'v str> {
    match view_schemas.iter().find(|s| s.name == name) {
        Some(s) => s.comment.as_deref(),
        None => initdb_schema_comment(o),
    }
}

/// The comment initdb gives the built-in schema of OID `o`.
pub fn initdb_schema_comment(o: u32) -> Option<&'static str> {
    SCHEMA_COMMENTS
        .iter()
        .find(|(c, _)| *c == o)
        .map(|(_, text)| *text)
}

/// `pg_description`: the comments of schemas, relations, columns and primary-key indexes
/// (`COMMENT ON`, decision 0032).
fn description_rows(view: &CatalogView<'_>, want: Want<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    let mut row = |objoid: u32, classoid: u32, sub: usize, text: &str| {
        rows.push(row![oid(objoid), oid(classoid), int(sub as i64), t(text)]);
    };
    for (name, o) in all_schemas(view) {
        if !want(o, "", &name) {
            continue;
        }
        if let Some(c) = schema_comment(view.schemas, &name, o) {
            row(o, NAMESPACE_OID, 0, c);
        }
    }
    for tb in view.tables {
        let keyed = !tb.primary_key.is_empty();
        if keyed && want(tb.pkey_oid(), "", &tb.pkey_name) {
            if let Some(c) = &tb.pkey_comment {
                row(tb.pkey_oid(), CLASS_OID, 0, c);
            }
            if let Some(c) = &tb.pkey_constraint_comment {
                row(tb.pkey_oid(), CONSTRAINT_OID, 0, c);
            }
        }
        if !want(tb.oid, "", &tb.name) {
            continue;
        }
        if let Some(c) = &tb.comment {
            row(tb.oid, CLASS_OID, 0, c);
        }
        for (i, col) in tb.columns.iter().enumerate() {
            if let Some(c) = &col.comment {
                row(tb.oid, CLASS_OID, i + 1, c);
            }
        }
    }
    rows
}

/// The comments initdb gives the built-in schemas (`pg_description`, `obj_description`).
pub const SCHEMA_COMMENTS: &[(u32, &str)] = &[
    (11, "system catalog schema"),
    (99, "reserved schema for TOAST tables"),
    (2200, "standard public schema"),
];

/// Whether the relation is listed in `pg_class`, `pg_attribute`, `pg_type`, `pg_tables`,
/// `pg_views` and information_schema. The catalogs RockLake keeps empty are not (decision
/// 0030): DuckDB's ATTACH reads the columns of every listed relation, and listing them made
/// it ~10 ms slower. They are there for the queries that name them.
fn listed(r: &RelInfo) -> bool {
    !matches!(r.rel, Which::Empty | Which::Opclass | Which::Opfamily)
}

/// The OID of role `name` (`user` is the session's, the superuser; `""` is PUBLIC, 0).
pub fn role_oid(user: &str, name: &str) -> Option<u32> {
    match name {
        "" => Some(0),
        _ if name == user => Some(SUPERUSER_OID),
        _ => PREDEFINED_ROLES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, o)| *o),
    }
}

/// Whether `name` is one of PostgreSQL 15's predefined roles, which `pg_roles` lists.
pub fn predefined_role(name: &str) -> bool {
    PREDEFINED_ROLES.iter().any(|(n, _)| *n == name)
}

/// PostgreSQL 15's predefined roles (no login).
const PREDEFINED_ROLES: &[(&str, u32)] = &[
    ("pg_database_owner", PG_DATABASE_OWNER_OID),
    ("pg_read_all_data", 6181),
    ("pg_write_all_data", 6182),
    ("pg_monitor", 3373),
    ("pg_read_all_settings", 3374),
    ("pg_read_all_stats", 3375),
    ("pg_stat_scan_tables", 3377),
    ("pg_read_server_files", 4569),
    ("pg_write_server_files", 4570),
    ("pg_execute_server_program", 4571),
    ("pg_signal_backend", 4200),
    ("pg_checkpoint", 4544),
];

// ------------------------------------------------------------------ pg_stat_activity

/// One row per client session of the engine. RockLake's catalogs describe only the reader's
/// own role (OID 10) and database, so another role's `usesysid` and another database's
/// `datid` are NULL.
fn stat_activity_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let opt_text = |s: Option<&str>| s.map_or(NULL, t);
    let opt_ts = |v: Option<i64>| v.map_or(NULL, Value::Timestamp);
    let opt_xid = |v: Option<u32>| v.map_or(NULL, |x| int(x.into()));
    (view.activity)()
        .into_iter()
        .map(|r| {
            let datid = database_oid(&r.database, view.database).map_or(NULL, oid);
            let usesysid = if r.user == view.user {
                oid(SUPERUSER_OID)
            } else {
                NULL
            };
            let mut row = vec![
                datid,
                t(&r.database),
                int(r.pid.into()),
                NULL,
                usesysid,
                t(&r.user),
                t(&r.application_name),
            ];
            if r.visible {
                row.extend([
                    r.client_addr.map_or(NULL, Value::Bytes),
                    NULL,
                    r.client_port.map_or(NULL, |p| int(p.into())),
                    Value::Timestamp(r.backend_start),
                    opt_ts(r.xact_start),
                    opt_ts(r.query_start),
                    opt_ts(r.query_start),
                    opt_text(r.wait_event.map(|w| w.0)),
                    opt_text(r.wait_event.map(|w| w.1)),
                    t(r.state),
                    opt_xid(r.backend_xid),
                    opt_xid(r.backend_xmin),
                    NULL,
                    t(&r.query),
                    t("client backend"),
                ]);
            } else {
                // PostgreSQL shows the transaction ids to every reader.
                row.extend([NULL; 10]);
                row.extend([opt_xid(r.backend_xid), opt_xid(r.backend_xmin)]);
                row.extend([NULL, t("<insufficient privilege>"), NULL]);
            }
            row
        })
        .collect()
}

fn roles_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let role = |name: &str, o: u32, sup: bool| {
        vec![
            t(name),
            b(sup),
            b(true),
            b(sup),
            b(sup),
            b(sup),
            b(sup),
            int(-1),
            t("********"),
            NULL,
            b(sup),
            NULL,
            oid(o),
        ]
    };
    let mut rows = vec![role(view.user, SUPERUSER_OID, true)];
    rows.extend(PREDEFINED_ROLES.iter().map(|(n, o)| role(n, *o, false)));
    rows
}

fn user_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    vec![vec![
        t(view.user),
        oid(SUPERUSER_OID),
        b(true),
        b(true),
        b(true),
        b(true),
        t("********"),
        NULL,
        NULL,
    ]]
}

// ------------------------------------------------------------------ small fixed catalogs

fn am_rows() -> Vec<Vec<Value>> {
    [
        (2, "heap", "heap_tableam_handler", 't'),
        (403, "btree", "bthandler", 'i'),
        (405, "hash", "hashhandler", 'i'),
        (783, "gist", "gisthandler", 'i'),
        (2742, "gin", "ginhandler", 'i'),
        (4000, "spgist", "spghandler", 'i'),
        (3580, "brin", "brinhandler", 'i'),
    ]
    .iter()
    .map(|(o, n, h, k)| {
        let handler = builtin_proc_oid(h).unwrap_or(0);
        vec![oid(*o), t(n), oid(handler), ch(*k)]
    })
    .collect()
}

fn collation_rows() -> Vec<Vec<Value>> {
    let coll = |o: u32, name: &str, provider: char, locale: Option<&str>| {
        vec![
            oid(o),
            t(name),
            oid(PG_CATALOG_OID),
            oid(SUPERUSER_OID),
            ch(provider),
            b(true),
            int(-1),
            opt_text(locale),
            opt_text(locale),
            NULL,
            NULL,
        ]
    };
    vec![
        coll(DEFAULT_COLLATION_OID, "default", 'd', None),
        coll(C_COLLATION_OID, "C", 'c', Some("C")),
        coll(951, "POSIX", 'c', Some("POSIX")),
    ]
}

fn tablespace_rows() -> Vec<Vec<Value>> {
    vec![
        vec![oid(1663), t("pg_default"), oid(SUPERUSER_OID), NULL, NULL],
        vec![oid(1664), t("pg_global"), oid(SUPERUSER_OID), NULL, NULL],
    ]
}

// ------------------------------------------------------------------ pg_settings

/// `pg_timezone_names`: each zone of the database with its abbreviation, offset and
/// daylight-saving flag at `now`.
fn time_zone_rows(now: i64) -> Vec<Vec<Value>> {
    crate::tz::names()
        .into_iter()
        .filter_map(|name| {
            let zone = crate::tz::by_name(&name).ok()?;
            let (east, abbrev, dst) = zone.info_at(now);
            Some(vec![
                Value::text(name),
                Value::text(abbrev),
                offset_interval(east),
                Value::Bool(dst),
            ])
        })
        .collect()
}

/// `pg_timezone_abbrevs`: PostgreSQL's `Default` abbreviations; one defined by a zone has
/// that zone's offset at `now`.
fn abbreviation_rows(now: i64) -> Vec<Vec<Value>> {
    crate::tzabbrev::all()
        .map(|(name, meaning, dst)| {
            let (east, dst) = match meaning {
                crate::tzabbrev::Abbrev::Fixed(east) => (east, dst),
                crate::tzabbrev::Abbrev::Zone(z) => crate::tz::by_name(z)
                    .map(|zone| {
                        let (east, _, dst) = zone.info_at(now);
                        (east, dst)
                    })
                    .unwrap_or((0, false)),
            };
            vec![Value::text(name), offset_interval(east), Value::Bool(dst)]
        })
        .collect()
}

fn offset_interval(east: i32) -> Value {
    Value::Interval(crate::types::Interval {
        micros: i64::from(east) * 1_000_000,
        ..Default::default()
    })
}

fn settings_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    crate::settings::SETTINGS
        .iter()
        .map(|st| {
            let setting = match view.settings {
                Some(v) => v.stored(st),
                None if st.name == "session_authorization" => view.user.to_string(),
                None => st.setting.to_string(),
            };
            let reset = match view.settings {
                Some(v) => v.reset_value(st),
                None => setting.clone(),
            };
            let (min, max) = match st.min_max {
                Some((a, z)) => (t(a), t(z)),
                None => (NULL, NULL),
            };
            let enumvals = if st.enumvals.is_empty() {
                NULL
            } else {
                Value::Array(st.enumvals.iter().map(|e| t(e)).collect())
            };
            let source = if st.context == "internal" {
                "default"
            } else {
                "configuration file"
            };
            vec![
                t(st.name),
                t(&setting),
                opt_text(st.unit),
                t(st.category),
                t(st.short_desc),
                NULL,
                t(st.context),
                t(st.vartype),
                t(source),
                min,
                max,
                enumvals,
                t(st.setting),
                t(&reset),
                NULL,
                NULL,
                b(false),
            ]
        })
        .collect()
}

// ------------------------------------------------------------------ information_schema

fn is_schemata_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    all_schemas(view)
        .into_iter()
        .map(|(name, _)| {
            let owner = if name == "public" {
                "pg_database_owner"
            } else {
                view.user
            };
            vec![
                t(view.database),
                Value::text(name),
                t(owner),
                NULL,
                NULL,
                NULL,
                NULL,
            ]
        })
        .collect()
}

fn is_tables_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let row = |schema: &str, name: &str, is_view: bool| {
        vec![
            t(view.database),
            t(schema),
            t(name),
            t(if is_view { "VIEW" } else { "BASE TABLE" }),
            NULL,
            NULL,
            NULL,
            NULL,
            NULL,
            t(if is_view { "NO" } else { "YES" }),
            t("NO"),
            NULL,
        ]
    };
    let mut rows: Vec<Vec<Value>> = RELATIONS
        .iter()
        .filter(|r| listed(r))
        .map(|r| row(r.schema, r.name, r.kind == 'v'))
        .collect();
    rows.extend(tables_only(view).map(|tb| row(&tb.schema, &tb.name, tb.view.is_some())));
    rows
}

/// `information_schema.views`: the system views (without a definition, as `pg_views` lists
/// them) and the user's, with their text. RockLake's views are read-only and have no
/// triggers or CHECK OPTION.
fn is_views_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let row = |schema: &str, name: &str, definition: Value| {
        let mut r = vec![t(view.database), t(schema), t(name), definition, t("NONE")];
        r.extend((0..5).map(|_| t("NO")));
        r
    };
    let mut rows: Vec<Vec<Value>> = RELATIONS
        .iter()
        .filter(|r| r.kind == 'v' && listed(r))
        .map(|r| row(r.schema, r.name, NULL))
        .collect();
    for tb in view.tables {
        if let Some(def) = tb.view.as_deref() {
            rows.push(row(&tb.schema, &tb.name, Value::text(viewdef(def))));
        }
    }
    rows
}

/// The NOT NULL columns of a user table (primary-key columns are), with PostgreSQL 15's name
/// of the CHECK constraint information_schema shows for each: `<schema oid>_<table oid>_<attnum>_not_null`.
fn not_null_checks<'t>(view: &CatalogView<'_>, tb: &'t Table) -> Vec<(String, &'t str)> {
    let nsp = schema_oid_of(view, &tb.schema);
    tb.columns
        .iter()
        .enumerate()
        .filter(|(i, c)| c.not_null || tb.primary_key.contains(i))
        .map(|(i, c)| {
            (
                format!("{nsp}_{}_{}_not_null", tb.oid, i + 1),
                c.name.as_str(),
            )
        })
        .collect()
}

/// `information_schema.table_constraints`: each user table's primary key and its NOT NULL
/// columns as CHECK constraints, as PostgreSQL 15 lists them (the emulated catalogs' are left
/// out).
fn is_table_constraints_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let row = |tb: &Table, name: &str, kind: &str| {
        vec![
            t(view.database),
            t(&tb.schema),
            t(name),
            t(view.database),
            t(&tb.schema),
            t(&tb.name),
            t(kind),
            t("NO"),
            t("NO"),
            t("YES"),
            NULL,
        ]
    };
    let mut rows = Vec::new();
    for tb in tables_only(view) {
        for (name, _) in not_null_checks(view, tb) {
            rows.push(row(tb, &name, "CHECK"));
        }
        if !tb.primary_key.is_empty() {
            rows.push(row(tb, &tb.pkey_name, "PRIMARY KEY"));
        }
    }
    rows
}

/// `information_schema.key_column_usage` (`usage`: `constraint_column_usage`, its columns in
/// another order and without positions): each primary-key column.
fn is_key_column_usage_rows(view: &CatalogView<'_>, usage: bool) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for tb in view.tables {
        for (k, &c) in tb.primary_key.iter().enumerate() {
            let column = tb.columns.get(c).map_or("", |c| c.name.as_str());
            let (table, constraint) = (
                [t(view.database), t(&tb.schema), t(&tb.name)],
                [t(view.database), t(&tb.schema), t(&tb.pkey_name)],
            );
            rows.push(if usage {
                table
                    .into_iter()
                    .chain([t(column)])
                    .chain(constraint)
                    .collect()
            } else {
                constraint
                    .into_iter()
                    .chain(table)
                    .chain([t(column), int(k as i64 + 1), NULL])
                    .collect()
            });
        }
    }
    rows
}

/// `information_schema.check_constraints`: the NOT NULL columns of the user tables.
fn is_check_constraints_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    tables_only(view)
        .flat_map(|tb| {
            not_null_checks(view, tb).into_iter().map(|(name, column)| {
                vec![
                    t(view.database),
                    t(&tb.schema),
                    t(&name),
                    Value::text(format!("{column} IS NOT NULL")),
                ]
            })
        })
        .collect()
}

/// information_schema's type facts of a column: (data_type, char max length, char octet length,
/// numeric precision, radix, scale, datetime precision).
fn column_type_info(ty: PgType, typmod: i32) -> (String, Value, Value, Value, Value, Value, Value) {
    let some = |v: i64| Value::Int(v);
    let data_type = match ty {
        t if t.is_array() => "ARRAY".to_string(),
        PgType::Name => "name".to_string(),
        other => other.sql_name().to_string(),
    };
    let (maxlen, octets) = match ty {
        PgType::Varchar | PgType::Bpchar if typmod >= 4 => {
            (some(typmod as i64 - 4), some((typmod as i64 - 4) * 4))
        }
        PgType::Varchar | PgType::Bpchar | PgType::Text => (NULL, some(1_073_741_824)),
        _ => (NULL, NULL),
    };
    let (prec, radix, scale) = match ty {
        PgType::Int2 => (some(16), some(2), some(0)),
        PgType::Int4 => (some(32), some(2), some(0)),
        PgType::Int8 => (some(64), some(2), some(0)),
        PgType::Float4 => (some(24), some(2), NULL),
        PgType::Float8 => (some(53), some(2), NULL),
        PgType::Numeric if typmod >= 4 => {
            // PostgreSQL 15's view reads the scale's 16 bits as they are, so a negative scale
            // shows as 2048 + scale; so does this.
            let m = i64::from(typmod - 4);
            (some((m >> 16) & 0xFFFF), some(10), some(m & 0xFFFF))
        }
        PgType::Numeric => (NULL, some(10), NULL),
        _ => (NULL, NULL, NULL),
    };
    let dt_prec = match ty {
        PgType::Date => some(0),
        PgType::Time | PgType::Timestamp | PgType::Timestamptz | PgType::Interval => {
            some(if typmod >= 0 {
                (typmod & 0xFFFF) as i64
            } else {
                6
            })
        }
        _ => NULL,
    };
    (data_type, maxlen, octets, prec, radix, scale, dt_prec)
}

#[allow(clippy::too_many_arguments)]
fn is_column_row(
    view: &CatalogView<'_>,
    schema: &str,
    table: &str,
    name: &str,
    pos: usize,
    ty: PgType,
    typmod: i32,
    not_null: bool,
    default: Option<&str>,
    updatable: bool,
) -> Vec<Value> {
    let (data_type, maxlen, octets, prec, radix, scale, dt_prec) = column_type_info(ty, typmod);
    let yes_no = |v: bool| t(if v { "YES" } else { "NO" });
    vec![
        t(view.database),
        t(schema),
        t(table),
        t(name),
        int(pos as i64),
        opt_text(default),
        yes_no(!not_null),
        Value::text(data_type),
        maxlen,
        octets,
        prec,
        radix,
        scale,
        dt_prec,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        t(view.database),
        t("pg_catalog"),
        t(ty.typname()),
        NULL,
        NULL,
        NULL,
        NULL,
        Value::text(pos.to_string()),
        t("NO"),
        t("NO"),
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        t("NO"),
        t("NEVER"),
        NULL,
        yes_no(updatable),
    ]
}

fn is_columns_rows(view: &CatalogView<'_>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for r in RELATIONS.iter().filter(|r| listed(r)) {
        let mut fixed_prefix = r.kind == 'r';
        for (i, (name, ty)) in r.cols.iter().enumerate() {
            fixed_prefix = fixed_prefix && ty.typlen() > 0;
            rows.push(is_column_row(
                view,
                r.schema,
                r.name,
                name,
                i + 1,
                *ty,
                -1,
                fixed_prefix,
                None,
                r.kind == 'r',
            ));
        }
    }
    for tb in tables_only(view) {
        for (i, c) in tb.columns.iter().enumerate() {
            let Column {
                name,
                ty,
                typmod,
                not_null,
                default_sql,
                identity,
                serial: _,
                comment: _,
            } = c;
            let sequence = identity.and_then(|idn| {
                view.tables
                    .iter()
                    .find(|s| s.id == idn.sequence)
                    .and_then(|s| s.sequence.clone())
                    .map(|def| (idn.always, def))
            });
            let not_null = *not_null || tb.primary_key.contains(&i);
            rows.push(is_column_row(
                view,
                &tb.schema,
                &tb.name,
                name,
                i + 1,
                *ty,
                *typmod,
                not_null,
                // pg_get_expr's text: every name quoted under quote_all_identifiers.
                default_sql
                    .as_deref()
                    .map(|d| match quote_all() {
                        true => std::borrow::Cow::Owned(requote_expression(d)),
                        false => std::borrow::Cow::Borrowed(d),
                    })
                    .as_deref(),
                true,
            ));
            if let (Some((always, def)), Some(row)) = (sequence, rows.last_mut()) {
                row[34] = t("YES");
                row[35] = t(if always { "ALWAYS" } else { "BY DEFAULT" });
                row[36] = Value::text(def.start.to_string());
                row[37] = Value::text(def.increment.to_string());
                row[38] = Value::text(def.max.to_string());
                row[39] = Value::text(def.min.to_string());
                row[40] = t(if def.cycle { "YES" } else { "NO" });
            }
        }
    }
    rows
}

// ------------------------------------------------------------------ identifiers

/// Keywords `quote_ident` quotes (PostgreSQL 15's reserved, column-name and type/function-name
/// keywords).
const QUOTED_KEYWORDS: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "authorization",
    "between",
    "bigint",
    "binary",
    "bit",
    "boolean",
    "both",
    "case",
    "cast",
    "char",
    "character",
    "check",
    "coalesce",
    "collate",
    "collation",
    "column",
    "concurrently",
    "constraint",
    "create",
    "cross",
    "current_catalog",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "dec",
    "decimal",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "exists",
    "extract",
    "false",
    "fetch",
    "float",
    "for",
    "foreign",
    "freeze",
    "from",
    "full",
    "grant",
    "greatest",
    "group",
    "grouping",
    "having",
    "ilike",
    "in",
    "initially",
    "inner",
    "inout",
    "int",
    "integer",
    "intersect",
    "interval",
    "into",
    "is",
    "isnull",
    "join",
    "json_array",
    "json_arrayagg",
    "json_object",
    "json_objectagg",
    "lateral",
    "leading",
    "least",
    "left",
    "like",
    "limit",
    "localtime",
    "localtimestamp",
    "national",
    "natural",
    "nchar",
    "none",
    "normalize",
    "not",
    "notnull",
    "null",
    "nullif",
    "numeric",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "out",
    "outer",
    "overlaps",
    "overlay",
    "placing",
    "position",
    "precision",
    "primary",
    "real",
    "references",
    "returning",
    "right",
    "row",
    "select",
    "session_user",
    "setof",
    "similar",
    "smallint",
    "some",
    "substring",
    "symmetric",
    "table",
    "tablesample",
    "then",
    "time",
    "timestamp",
    "to",
    "trailing",
    "treat",
    "trim",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "values",
    "varchar",
    "variadic",
    "verbose",
    "when",
    "where",
    "window",
    "with",
    "xmlattributes",
    "xmlconcat",
    "xmlelement",
    "xmlexists",
    "xmlforest",
    "xmlnamespaces",
    "xmlparse",
    "xmlpi",
    "xmlroot",
    "xmlserialize",
    "xmltable",
];

thread_local! {
    /// The running statement's session has `quote_all_identifiers` on ([`enter_quote_all`]).
    static QUOTE_ALL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Until dropped, identifiers the statement writes are quoted as its session's
/// `quote_all_identifiers` says.
pub struct QuoteAllEntered {
    previous: bool,
}

impl Drop for QuoteAllEntered {
    fn drop(&mut self) {
        QUOTE_ALL.with(|q| q.set(self.previous));
    }
}

/// Makes `on` the `quote_all_identifiers` of the statement about to run (see
/// [`quote_ident`]) until the guard drops.
pub fn enter_quote_all(on: bool) -> QuoteAllEntered {
    QuoteAllEntered {
        previous: QUOTE_ALL.with(|q| q.replace(on)),
    }
}

/// Whether the running statement's session has `quote_all_identifiers` on.
pub fn quote_all() -> bool {
    QUOTE_ALL.with(std::cell::Cell::get)
}

/// PostgreSQL's `quote_identifier`: bare when the name is a lower-case identifier and no
/// keyword, unless the session's `quote_all_identifiers` is on (then always quoted, as
/// PostgreSQL quotes every identifier it writes: `quote_ident()`, `format('%I')`, `regclass`
/// output, `format_type`, `pg_get_expr`, `pg_get_indexdef`, `pg_get_constraintdef`, the
/// column names of a key's detail).
pub fn quote_ident(name: &str) -> String {
    if quote_all() {
        format!("\"{}\"", name.replace('"', "\"\""))
    } else {
        quote_ident_if_needed(name)
    }
}

/// Where a name stands in a default's text, for [`rewrite_names`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum NameRole {
    /// A function's name, or a qualifier before a dot.
    Function,
    /// The first word of a type after `::`.
    TypeHead,
    /// A part of the name inside a `regclass` constant.
    Regclass,
    /// Any other word, not quoted in the text (a keyword, `CURRENT_USER`).
    Word,
}

/// Calls PostgreSQL's grammar reads as SQL syntax, not as functions by name: its deparser
/// writes them in capitals and never quotes them (`COALESCE(1, 2)`, `CURRENT_TIMESTAMP(3)`).
const SQL_SYNTAX_CALLS: &[&str] = &[
    "coalesce",
    "greatest",
    "least",
    "nullif",
    "row",
    "current_timestamp",
    "current_time",
    "localtime",
    "localtimestamp",
];

/// Words PostgreSQL's grammar reads as calls without brackets (`DEFAULT current_user`): its
/// deparser writes them in capitals.
const SQL_VALUE_WORDS: &[&str] = &[
    "current_date",
    "current_time",
    "current_timestamp",
    "localtime",
    "localtimestamp",
    "current_user",
    "current_role",
    "session_user",
    "current_catalog",
    "current_schema",
    "user",
];

/// A default's stored text as `pg_get_expr` writes it under `quote_all_identifiers`:
/// function names (`"now"()`), types printed by their name after `::` (`'x'::"text"`,
/// `'{a}'::"text"[]`, but not `::character varying(3)`) and the names inside a `regclass`
/// constant (`'"app"."s1"'::"regclass"`) quoted, the rest as stored. RockLake keeps a
/// default as PostgreSQL deparses it (one lower-case word per function and type name,
/// [`normalize_names`]), so quoting those words gives PostgreSQL's text.
pub fn requote_expression(text: &str) -> String {
    let quoted = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
    rewrite_names(text, &|word, quote_style, role| match (role, quote_style) {
        (NameRole::Word, _) => word.to_string(),
        (_, Some(_)) | (NameRole::Regclass, None) => quoted(word),
        (NameRole::Function, None)
            if SQL_SYNTAX_CALLS
                .iter()
                .any(|c| c.eq_ignore_ascii_case(word)) =>
        {
            word.to_string()
        }
        (NameRole::Function, None)
            if word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') =>
        {
            quoted(word)
        }
        (NameRole::Function, None) => word.to_string(),
        (NameRole::TypeHead, None) => crate::query::quote_type_name(word),
    })
}

/// A default's text as RockLake stores it: the names a client quoted (a dump made with
/// `--quote-all-identifiers` writes `"now"()`, `'x'::"text"`) quoted only where
/// PostgreSQL's deparser would quote them, as PostgreSQL keeps the expression, not its text.
/// SQL's calls are written in capitals (`COALESCE(…)`, `CURRENT_USER`) and bare type names
/// in lower case (`::regclass` where sqlparser writes `::REGCLASS`), as PostgreSQL's deparser
/// writes them; a `regclass` constant names what it named (`'MySeq'` is `'myseq'`).
pub fn normalize_names(text: &str) -> String {
    let capitals = |word: &str, words: &[&str]| {
        words
            .iter()
            .any(|w| w.eq_ignore_ascii_case(word))
            .then(|| word.to_ascii_uppercase())
    };
    rewrite_names(text, &|word, quote_style, role| match (role, quote_style) {
        (NameRole::Function, None) => {
            capitals(word, SQL_SYNTAX_CALLS).unwrap_or_else(|| word.to_string())
        }
        (NameRole::Word, None) => {
            capitals(word, SQL_VALUE_WORDS).unwrap_or_else(|| word.to_string())
        }
        (NameRole::TypeHead, None) => word.to_ascii_lowercase(),
        (NameRole::Word, _) => word.to_string(),
        // Function names and types the client quoted, and a regclass constant's names (as
        // regclass input read them): quoted where PostgreSQL would quote them.
        _ => quote_ident_if_needed(word),
    })
}

/// `text` with each name in a [`NameRole`] written by `name(word, quote_style, role)` and
/// every other token as it is. A text that does not tokenize is returned unchanged.
fn rewrite_names(text: &str, name: &dyn Fn(&str, Option<char>, NameRole) -> String) -> String {
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::tokenizer::{Token, Tokenizer};
    let Ok(spanned) = Tokenizer::new(&PostgreSqlDialect {}, text).tokenize_with_location() else {
        return text.to_string();
    };
    // Tokens not rewritten are copied from the text itself (a token's Display does not
    // always give back its source: a string's doubled quotes).
    let mut offsets = std::collections::HashMap::new();
    let (mut line, mut column) = (1u64, 1u64);
    for (at, c) in text.char_indices() {
        offsets.insert((line, column), at);
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    offsets.insert((line, column), text.len());
    let source = |i: usize| -> Option<&str> {
        let span = spanned.get(i)?.span;
        let start = *offsets.get(&(span.start.line, span.start.column))?;
        let end = *offsets.get(&(span.end.line, span.end.column))?;
        text.get(start..end)
    };
    let tokens: Vec<Token> = spanned.iter().map(|t| t.token.clone()).collect();
    let copy = |out: &mut String, i: usize| match source(i) {
        Some(s) => out.push_str(s),
        None => out.push_str(&tokens[i].to_string()),
    };
    let literal = |s: &str| format!("'{}'", s.replace('\'', "''"));
    // The `n`-th token after `i` that is not whitespace (0: the next one).
    let ahead = |i: usize, n: usize| {
        tokens[i + 1..]
            .iter()
            .filter(|t| !matches!(t, Token::Whitespace(_)))
            .nth(n)
    };
    fn bare(t: &Token) -> Option<&str> {
        match t {
            Token::Word(w) if w.quote_style.is_none() => Some(w.value.as_str()),
            _ => None,
        }
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        match t {
            Token::DoubleColon => {
                out.push_str("::");
                i += 1;
                // The type: its first word as `name` says; the words, typmods and brackets
                // after it copied.
                let mut first = true;
                while let Some(t) = tokens.get(i) {
                    match t {
                        Token::Word(w) if first => {
                            out.push_str(&name(&w.value, w.quote_style, NameRole::TypeHead))
                        }
                        Token::Word(w) if w.quote_style.is_none() => {
                            out.push_str(&w.value.to_ascii_lowercase())
                        }
                        Token::Whitespace(_)
                            if ahead(i, 0).and_then(bare).is_some_and(|w| {
                                ["varying", "precision", "with", "without", "time", "zone"]
                                    .iter()
                                    .any(|k| k.eq_ignore_ascii_case(w))
                            }) =>
                        {
                            copy(&mut out, i)
                        }
                        Token::LParen => {
                            // A typmod: copied to its closing bracket.
                            while let Some(t) = tokens.get(i) {
                                copy(&mut out, i);
                                if matches!(t, Token::RParen) {
                                    break;
                                }
                                i += 1;
                            }
                        }
                        Token::LBracket | Token::RBracket => copy(&mut out, i),
                        _ => break,
                    }
                    first = false;
                    i += 1;
                }
                continue;
            }
            Token::SingleQuotedString(text)
                if matches!(ahead(i, 0), Some(Token::DoubleColon))
                    && ahead(i, 1).is_some_and(|t| match t {
                        Token::Word(w) => w.value.eq_ignore_ascii_case("regclass"),
                        _ => false,
                    }) =>
            {
                // A name as regclass input reads it; an OID or a malformed name as it is.
                match split_qualified(text) {
                    Some(parts) => {
                        let parts: Vec<String> = parts
                            .iter()
                            .map(|p| name(p, None, NameRole::Regclass))
                            .collect();
                        out.push_str(&literal(&parts.join(".")));
                    }
                    None => copy(&mut out, i),
                }
            }
            Token::Word(w) if matches!(ahead(i, 0), Some(Token::LParen | Token::Period)) => {
                out.push_str(&name(&w.value, w.quote_style, NameRole::Function))
            }
            Token::Word(w) if w.quote_style.is_none() => {
                out.push_str(&name(&w.value, None, NameRole::Word))
            }
            _ => copy(&mut out, i),
        }
        i += 1;
    }
    out
}

/// The parts of a qualified name as `regclass` input reads them (`query::name_parts`).
/// `None` for an OID or a name that does not parse: the constant is then left as written.
fn split_qualified(name: &str) -> Option<Vec<String>> {
    if name.trim().chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    crate::query::name_parts(name)
}

/// [`quote_ident`] regardless of `quote_all_identifiers`: for what PostgreSQL quotes by its
/// own rule, and for text RockLake stores.
/// `pg_get_viewdef`'s text of a view: its query as stored, PostgreSQL's leading space and
/// closing semicolon around it.
pub fn viewdef(def: &crate::catalog::ViewDef) -> String {
    format!(" {};", def.query)
}

pub fn quote_ident_if_needed(name: &str) -> String {
    let mut chars = name.chars();
    let plain = match chars.next() {
        Some(c) if c.is_ascii_lowercase() || c == '_' => {
            chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        }
        _ => false,
    };
    if plain && !QUOTED_KEYWORDS.contains(&name) {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::types::format_text;

    const DLMETA_OID: u32 = 17_343;

    fn col(
        name: &str,
        ty: PgType,
        typmod: i32,
        not_null: bool,
        default_sql: Option<&str>,
    ) -> Column {
        Column {
            name: name.into(),
            ty,
            typmod,
            not_null,
            default_sql: default_sql.map(str::to_string),
            identity: None,
            serial: None,
            comment: None,
        }
    }

    /// `CREATE TABLE "dlmeta"."ducklake_snapshot"("snapshot_id" BIGINT PRIMARY KEY, "snapshot_time"
    /// TIMESTAMP WITH TIME ZONE, "schema_version" BIGINT, "next_catalog_id" BIGINT, "next_file_id" BIGINT)`
    fn snapshot() -> Table {
        Table {
            id: 1,
            oid: 17_344,
            schema: "dlmeta".into(),
            name: "ducklake_snapshot".into(),
            columns: vec![
                // the PK column as a CREATE TABLE might record it: NOT NULL left implicit
                col("snapshot_id", PgType::Int8, -1, false, None),
                col("snapshot_time", PgType::Timestamptz, -1, false, None),
                col("schema_version", PgType::Int8, -1, false, None),
                col("next_catalog_id", PgType::Int8, -1, false, None),
                col("next_file_id", PgType::Int8, -1, false, None),
            ],
            primary_key: vec![0],
            pkey_name: "ducklake_snapshot_pkey".into(),
            indexes: vec![],
            version: 731,
            layout: 0,
            sequence: None,
            view: None,
            comment: None,
            pkey_comment: None,
            pkey_constraint_comment: None,
            shape: 0,
        }
    }

    /// `CREATE TABLE IF NOT EXISTS "dlmeta".ducklake_inlined_data_1_1(row_id BIGINT, begin_snapshot
    /// BIGINT, end_snapshot BIGINT, a INTEGER)` plus columns shaped like ducklake_inlined_data_2_2's
    /// (`u64 VARCHAR`, `d1 DECIMAL(9,2)`, `s BYTEA`) and one with a default.
    fn inlined() -> Table {
        Table {
            id: 2,
            oid: 17_400,
            schema: "dlmeta".into(),
            name: "ducklake_inlined_data_1_1".into(),
            columns: vec![
                col("row_id", PgType::Int8, -1, false, None),
                col("begin_snapshot", PgType::Int8, -1, false, None),
                col("end_snapshot", PgType::Int8, -1, false, None),
                col("a", PgType::Int4, -1, false, None),
                col("u64", PgType::Varchar, -1, false, None),
                col("d1", PgType::Numeric, 589_830, false, None),
                col("s", PgType::Bytea, -1, false, None),
                col(
                    "v20",
                    PgType::Varchar,
                    24,
                    true,
                    Some("'x'::character varying"),
                ),
            ],
            primary_key: vec![],
            pkey_name: String::new(),
            indexes: vec![],
            version: 0,
            layout: 0,
            sequence: None,
            view: None,
            comment: None,
            pkey_comment: None,
            pkey_constraint_comment: None,
            shape: 0,
        }
    }

    struct Fixture {
        schemas: Vec<Schema>,
        tables: Vec<TableRef>,
    }

    fn fixture() -> Fixture {
        Fixture {
            schemas: vec![Schema {
                name: "dlmeta".into(),
                oid: DLMETA_OID,
                comment: None,
            }],
            tables: vec![Arc::new(snapshot()), Arc::new(inlined())],
        }
    }

    fn counts(id: u32) -> u64 {
        if id == 2 {
            35
        } else {
            0
        }
    }

    fn view(f: &Fixture) -> CatalogView<'_> {
        CatalogView {
            schemas: &f.schemas,
            tables: &f.tables,
            database: "lake",
            user: "postgres",
            row_counts: &counts,
            settings: None,
            txid: 900,
            cursors: &Vec::new,
            activity: &Vec::new,
            now: 0,
            sequence_value: &|_| None,
        }
    }

    /// The relation as built, without its `tableoid` (checked in
    /// `pg_class_xmin_is_the_definitions_version`).
    fn get(schema: Option<&str>, name: &str, f: &Fixture) -> VirtualTable {
        let mut vt =
            build(schema, name, &view(f)).unwrap_or_else(|| panic!("{name} must be virtual"));
        if let Some(i) = vt.columns.iter().position(|c| c.name == "tableoid") {
            vt.columns.remove(i);
            for r in &mut vt.rows {
                r.remove(i);
            }
        }
        vt
    }

    #[test]
    fn relations_built_for_some_columns_hold_the_same_values_in_them() {
        let f = fixture();
        let all_relations = [
            "pg_class",
            "pg_attribute",
            "pg_type",
            "pg_namespace",
            "pg_index",
        ];
        for name in all_relations {
            let full = get(None, name, &f);
            let width = full.columns.len();
            for column in 0..width {
                let mut columns = vec![false; width];
                columns[column] = true;
                let part = build_only(None, name, &view(&f), None, Some(&columns))
                    .unwrap_or_else(|| panic!("{name} must be virtual"));
                assert_eq!(part.rows.len(), full.rows.len(), "{name}");
                for (p, r) in part.rows.iter().zip(&full.rows) {
                    assert_eq!(
                        p.get(column),
                        r.get(column),
                        "{name}.{} built alone",
                        full.columns[column].name
                    );
                }
            }
            // Columns nobody reads are left out where building them costs a string.
            let none = vec![false; width];
            let bare = build_only(None, name, &view(&f), None, Some(&none)).expect("virtual");
            let strings = |rows: &[Vec<Value>]| {
                rows.iter()
                    .flatten()
                    .filter(|v| matches!(v, Value::Text(s) if !s.is_empty()))
                    .count()
            };
            if ["pg_class", "pg_attribute", "pg_type"].contains(&name) {
                assert_eq!(
                    strings(&bare.rows),
                    0,
                    "{name}: strings built for no reader"
                );
            }
        }
        // The column a row filter reads is built even when the caller reads no column.
        for (name, column) in [("pg_class", "relname"), ("pg_type", "typname")] {
            let full = get(None, name, &f);
            let c = ci(&full, column);
            let keep = |p: Probe<'_>| match p {
                Probe::Value(v) => *v == t("ducklake_snapshot"),
                Probe::Name(prefix, name) => format!("{prefix}{name}") == "ducklake_snapshot",
                Probe::Oid(_) => panic!("{name}: filtered on {column}, probed by OID"),
            };
            let only = Only {
                column: c,
                keep: &keep,
            };
            let none = vec![false; full.columns.len()];
            let part =
                build_only(None, name, &view(&f), Some(&only), Some(&none)).expect("virtual");
            assert_eq!(part.rows.len(), 1, "{name} filtered on {column}");
            assert_eq!(part.rows[0][c], t("ducklake_snapshot"));
        }
        // An array type is probed by its name's parts ("_" + the element's name).
        let full = get(None, "pg_type", &f);
        let c = ci(&full, "typname");
        let keep = |p: Probe<'_>| match p {
            Probe::Value(v) => *v == t("_int8"),
            Probe::Name(prefix, name) => format!("{prefix}{name}") == "_int8",
            Probe::Oid(_) => panic!("pg_type filtered on typname, probed by OID"),
        };
        let only = Only {
            column: c,
            keep: &keep,
        };
        let part = build_only(None, "pg_type", &view(&f), Some(&only), None).expect("virtual");
        assert_eq!(part.rows.len(), 1);
        assert_eq!(part.rows[0][c], t("_int8"));
    }

    /// Column index by name.
    fn ci(vt: &VirtualTable, name: &str) -> usize {
        vt.columns
            .iter()
            .position(|c| c.name == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    }

    /// A row's value in text format, as the wire carries it.
    fn txt(vt: &VirtualTable, row: &[Value], name: &str) -> Option<String> {
        let i = ci(vt, name);
        format_text(&row[i], vt.columns[i].ty)
    }

    fn rows_where<'v>(vt: &'v VirtualTable, name: &str, value: &str) -> Vec<&'v Vec<Value>> {
        vt.rows
            .iter()
            .filter(|r| txt(vt, r, name).as_deref() == Some(value))
            .collect()
    }

    /// The catalogs kept empty are not listed (DuckDB's ATTACH reads every listed relation's
    /// columns), yet can be read by name.
    #[test]
    fn empty_catalogs_are_readable_but_not_listed() {
        let f = fixture();
        let class = get(None, "pg_class", &f);
        assert!(rows_where(&class, "relname", "pg_proc").is_empty());
        assert_eq!(rows_where(&class, "relname", "pg_class").len(), 1);
        let tables = get(None, "pg_tables", &f);
        assert!(rows_where(&tables, "tablename", "pg_trigger").is_empty());
        let proc_ = get(None, "pg_proc", &f);
        assert!(proc_.rows.is_empty());
        assert!(proc_.columns.iter().any(|c| c.name == "proname"));
        assert_eq!(relation_of(1255), Some(("pg_catalog", "pg_proc")));
    }

    /// Every relation: rows as wide as the column list, and every value of its column's type.
    #[test]
    fn every_relation_is_well_typed() {
        let f = fixture();
        for r in RELATIONS {
            let vt = build(Some(r.schema), r.name, &view(&f)).expect("virtual");
            assert_eq!(vt.rel_oid, r.oid);
            assert_eq!(
                columns(Some(r.schema), r.name).map(|(o, c)| (o, c.len())),
                Some((r.oid, vt.columns.len()))
            );
            for row in &vt.rows {
                assert_eq!(row.len(), vt.columns.len(), "{}: {row:?}", r.name);
                for (v, c) in row.iter().zip(&vt.columns) {
                    let ok = match (v, c.ty) {
                        (Value::Null, _) => true,
                        (Value::Int(_), t) => t.is_integer() || t == PgType::Xid,
                        (Value::Float(_), t) => t == PgType::Float4,
                        (Value::Bool(_), t) => t == PgType::Bool,
                        (Value::Interval(_), t) => t == PgType::Interval,
                        (Value::Text(s), PgType::Char) => s.chars().count() <= 1,
                        (Value::Text(_), t) => t.is_string(),
                        (
                            Value::Array(items),
                            PgType::Int2Array | PgType::Int2Vector | PgType::OidVector,
                        ) => items.iter().all(|x| matches!(x, Value::Int(_))),
                        (Value::Array(items), PgType::TextArray) => {
                            items.iter().all(|x| matches!(x, Value::Text(_)))
                        }
                        _ => false,
                    };
                    assert!(ok, "{}.{}: {v:?} is not a {:?}", r.name, c.name, c.ty);
                    assert_eq!(c.typmod, -1);
                }
            }
        }
    }

    #[test]
    fn lookup_follows_search_path() {
        assert!(is_virtual(None, "pg_class"));
        assert!(is_virtual(Some("pg_catalog"), "pg_settings"));
        assert!(is_virtual(Some("information_schema"), "tables"));
        assert!(
            !is_virtual(None, "tables"),
            "information_schema is not on the search path"
        );
        assert!(!is_virtual(Some("public"), "pg_class"));
        assert!(!is_virtual(None, "ducklake_snapshot"));
        assert_eq!(columns(None, "pg_namespace").map(|(o, _)| o), Some(2615));
        assert_eq!(columns(None, "pg_class").map(|(o, _)| o), Some(1259));
        assert_eq!(columns(None, "pg_attribute").map(|(o, _)| o), Some(1249));
        assert_eq!(columns(None, "pg_type").map(|(o, _)| o), Some(1247));
        assert!(build(None, "nope", &view(&fixture())).is_none());
    }

    /// RowDescription fields PostgreSQL sent for DuckDB's catalog queries: (relation, column,
    /// table_oid, attnum, type_oid).
    #[test]
    fn row_description_positions_match_the_trace() {
        let seen = [
            ("pg_namespace", "oid", 2615, 1, 26),
            ("pg_namespace", "nspname", 2615, 2, 19),
            ("pg_enum", "enumtypid", 3501, 2, 26),
            ("pg_enum", "enumlabel", 3501, 4, 19),
            ("pg_type", "typname", 1247, 2, 19),
            ("pg_type", "typrelid", 1247, 12, 26),
            ("pg_attribute", "attname", 1249, 2, 19),
            ("pg_indexes", "tablename", 12_043, 2, 19),
            ("pg_indexes", "indexname", 12_043, 3, 19),
        ];
        for (rel, column, table_oid, attnum, type_oid) in seen {
            let (oid_, cols) = columns(None, rel).unwrap_or_else(|| panic!("{rel}"));
            assert_eq!(oid_, table_oid, "{rel}");
            let pos = cols.iter().position(|c| c.name == column).map(|p| p + 1);
            assert_eq!(pos, Some(attnum), "{rel}.{column}");
            assert_eq!(cols[attnum - 1].ty.oid(), type_oid, "{rel}.{column}");
        }
        // the big column query's raw inputs
        let want = [
            ("pg_class", "relname", 19),
            ("pg_class", "relpages", 23),
            ("pg_attribute", "atttypmod", 23),
            ("pg_attribute", "attndims", 23),
            ("pg_attribute", "attnum", 21),
            ("pg_attribute", "attnotnull", 16),
            ("pg_constraint", "oid", 26),
            ("pg_constraint", "contype", 18),
            ("pg_constraint", "conkey", 1005),
            ("pg_description", "description", 25),
        ];
        for (rel, column, type_oid) in want {
            let (_, cols) = columns(None, rel).unwrap_or_else(|| panic!("{rel}"));
            assert_eq!(
                cols.iter().find(|c| c.name == column).map(|c| c.ty.oid()),
                Some(type_oid),
                "{rel}.{column}"
            );
        }
    }

    /// `SELECT oid, nspname FROM pg_namespace ORDER BY oid` (trace: 11 pg_catalog, 99 pg_toast,
    /// 2200 public, ...; dlmeta was 17343).
    #[test]
    fn namespaces() {
        let f = fixture();
        let vt = get(None, "pg_namespace", &f);
        let got: Vec<(String, String)> = vt
            .rows
            .iter()
            .map(|r| {
                (
                    txt(&vt, r, "oid").unwrap_or_default(),
                    txt(&vt, r, "nspname").unwrap_or_default(),
                )
            })
            .collect();
        let want = [
            ("11", "pg_catalog"),
            ("99", "pg_toast"),
            ("2200", "public"),
            ("13000", "information_schema"),
            ("17343", "dlmeta"),
        ];
        assert_eq!(
            got,
            want.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect::<Vec<_>>()
        );
    }

    /// DuckDB's per-table column query, evaluated over the virtual relations the way PostgreSQL
    /// would (joins by oid, `attnum > 0`, `relkind IN ('r','v','m','f','p')`, `contype IN ('p','u')`).
    fn duckdb_column_query(f: &Fixture, nspname: &str, relname: &str) -> Vec<Vec<Option<String>>> {
        let class = get(None, "pg_class", f);
        let ns = get(None, "pg_namespace", f);
        let att = get(None, "pg_attribute", f);
        let typ = get(None, "pg_type", f);
        let con = get(None, "pg_constraint", f);
        let nsp_oid = |name: &str| {
            rows_where(&ns, "nspname", name)
                .first()
                .and_then(|r| txt(&ns, r, "oid"))
        };
        let nsp_name = |o: &str| {
            rows_where(&ns, "oid", o)
                .first()
                .and_then(|r| txt(&ns, r, "nspname"))
        };
        let mut out = Vec::new();
        for c in &class.rows {
            let kind = txt(&class, c, "relkind").unwrap_or_default();
            if !["r", "v", "m", "f", "p"].contains(&kind.as_str())
                || txt(&class, c, "relname").as_deref() != Some(relname)
                || txt(&class, c, "relnamespace") != nsp_oid(nspname)
            {
                continue;
            }
            let coid = txt(&class, c, "oid");
            for a in rows_where(&att, "attrelid", coid.as_deref().unwrap_or_default()) {
                if txt(&att, a, "attnum")
                    .and_then(|n| n.parse::<i64>().ok())
                    .unwrap_or(0)
                    <= 0
                {
                    continue;
                }
                let ty = rows_where(&typ, "oid", &txt(&att, a, "atttypid").unwrap_or_default())[0]
                    .clone();
                out.push(vec![
                    txt(&class, c, "relnamespace"),
                    txt(&class, c, "relname"),
                    txt(&class, c, "relpages"),
                    txt(&att, a, "attname"),
                    txt(&typ, &ty, "typname"),
                    txt(&att, a, "atttypmod"),
                    txt(&att, a, "attndims"),
                    txt(&att, a, "attnum"),
                    txt(&att, a, "attnotnull"),
                    None,
                    None,
                    None,
                    nsp_name(&txt(&typ, &ty, "typnamespace").unwrap_or_default()),
                ]);
            }
            for k in rows_where(&con, "conrelid", coid.as_deref().unwrap_or_default()) {
                let ct = txt(&con, k, "contype").unwrap_or_default();
                if ct == "p" || ct == "u" {
                    out.push(vec![
                        txt(&class, c, "relnamespace"),
                        txt(&class, c, "relname"),
                        None,
                        None,
                        None,
                        None,
                        None,
                        None,
                        None,
                        txt(&con, k, "oid"),
                        Some(ct),
                        txt(&con, k, "conkey"),
                        None,
                    ]);
                }
            }
        }
        out
    }

    fn strs(row: &[Option<&str>]) -> Vec<Option<String>> {
        row.iter().map(|x| x.map(str::to_string)).collect()
    }

    #[test]
    fn duckdb_column_query_matches_postgres() {
        let f = fixture();
        // Trace (order 3807): the first rows PostgreSQL returned for this very table.
        let got = duckdb_column_query(&f, "dlmeta", "ducklake_inlined_data_1_1");
        let n = None;
        let pgc = Some("pg_catalog");
        assert_eq!(
            got[..4].to_vec(),
            vec![
                strs(&[
                    Some("17343"),
                    Some("ducklake_inlined_data_1_1"),
                    Some("0"),
                    Some("row_id"),
                    Some("int8"),
                    Some("-1"),
                    Some("0"),
                    Some("1"),
                    Some("f"),
                    n,
                    n,
                    n,
                    pgc
                ]),
                strs(&[
                    Some("17343"),
                    Some("ducklake_inlined_data_1_1"),
                    Some("0"),
                    Some("begin_snapshot"),
                    Some("int8"),
                    Some("-1"),
                    Some("0"),
                    Some("2"),
                    Some("f"),
                    n,
                    n,
                    n,
                    pgc
                ]),
                strs(&[
                    Some("17343"),
                    Some("ducklake_inlined_data_1_1"),
                    Some("0"),
                    Some("end_snapshot"),
                    Some("int8"),
                    Some("-1"),
                    Some("0"),
                    Some("3"),
                    Some("f"),
                    n,
                    n,
                    n,
                    pgc
                ]),
                strs(&[
                    Some("17343"),
                    Some("ducklake_inlined_data_1_1"),
                    Some("0"),
                    Some("a"),
                    Some("int4"),
                    Some("-1"),
                    Some("0"),
                    Some("4"),
                    Some("f"),
                    n,
                    n,
                    n,
                    pgc
                ]),
            ]
        );
        let typmods: Vec<(Option<String>, Option<String>, Option<String>)> = got[4..]
            .iter()
            .map(|r| (r[3].clone(), r[4].clone(), r[5].clone()))
            .collect();
        let s = |x: &str| Some(x.to_string());
        assert_eq!(
            typmods,
            vec![
                (s("u64"), s("varchar"), s("-1")),
                (s("d1"), s("numeric"), s("589830")),
                (s("s"), s("bytea"), s("-1")),
                (s("v20"), s("varchar"), s("24")),
            ]
        );
        assert_eq!(got.len(), 8, "no constraint rows for a table without a key");

        // A keyed table: 5 attribute rows (PK column NOT NULL) and one 'p' row with conkey {1}.
        let got = duckdb_column_query(&f, "dlmeta", "ducklake_snapshot");
        assert_eq!(got.len(), 6);
        assert_eq!(
            got[0][3..9].to_vec(),
            strs(&[
                Some("snapshot_id"),
                Some("int8"),
                Some("-1"),
                Some("0"),
                Some("1"),
                Some("t")
            ])
        );
        assert_eq!(
            got[1][3..9].to_vec(),
            strs(&[
                Some("snapshot_time"),
                Some("timestamptz"),
                Some("-1"),
                Some("0"),
                Some("2"),
                Some("f")
            ])
        );
        assert_eq!(
            got[5][9..12].to_vec(),
            strs(&[Some("17346"), Some("p"), Some("{1}")])
        );
        // A table DuckDB asks for before it exists (ducklake_inlined_delete_N): no rows.
        assert!(duckdb_column_query(&f, "dlmeta", "ducklake_inlined_delete_1").is_empty());
        assert!(duckdb_column_query(&f, "public", "ducklake_snapshot").is_empty());
    }

    /// `pg_class.xmin`, a system column after the others: the commit that wrote a table's
    /// definition (its primary key's too), the reader's own transaction for a definition it
    /// has not committed, bootstrap for the emulated catalogs.
    #[test]
    fn pg_class_xmin_is_the_definitions_version() {
        let f = fixture();
        let vt = build(None, "pg_class", &view(&f)).expect("pg_class");
        let system: Vec<_> = vt.columns[vt.columns.len() - 2..]
            .iter()
            .map(|c| (c.name, c.ty, c.attnum))
            .collect();
        assert_eq!(
            system,
            [("xmin", PgType::Xid, -2), ("tableoid", PgType::Oid, -6)]
        );
        assert!(vt.columns[..vt.columns.len() - 2]
            .iter()
            .all(|c| c.attnum > 0));
        assert_eq!(
            columns(None, "pg_class").map(|(_, c)| c.len()),
            Some(vt.columns.len())
        );
        let xmin = |name: &str| {
            let rows = rows_where(&vt, "relname", name);
            assert_eq!(rows.len(), 1, "{name}");
            txt(&vt, rows[0], "xmin")
        };
        assert_eq!(xmin("ducklake_snapshot").as_deref(), Some("731"));
        assert_eq!(xmin("ducklake_snapshot_pkey").as_deref(), Some("731"));
        // version 0: written by the reading transaction (the view's txid 900)
        assert_eq!(xmin("ducklake_inlined_data_1_1").as_deref(), Some("900"));
        assert_eq!(xmin("pg_class").as_deref(), Some("1"));
        assert!(rows_where(&vt, "relname", "pg_class")
            .iter()
            .all(|r| txt(&vt, r, "tableoid").as_deref() == Some("1259")));
        // The others have `tableoid` only; pg_attribute lists a heap relation's system columns
        // (-6 … -1) as PostgreSQL does, `cmin`/`cmax` as cid, and no view's or index's.
        let attribute = columns(None, "pg_attribute").unwrap_or_default().1;
        let hidden: Vec<_> = attribute.iter().filter(|c| c.attnum < 0).collect();
        assert_eq!(hidden.len(), 1);
        assert_eq!(hidden[0].name, "tableoid");
        let attrs = get(None, "pg_attribute", &f);
        let system = |relid: &str| -> Vec<(String, String, String)> {
            rows_where(&attrs, "attrelid", relid)
                .into_iter()
                .filter(|r| txt(&attrs, r, "attnum").is_some_and(|n| n.starts_with('-')))
                .map(|r| {
                    let g = |c: &str| txt(&attrs, r, c).unwrap_or_default();
                    (g("attname"), g("attnum"), g("atttypid"))
                })
                .collect()
        };
        let snapshot = txt(
            &vt,
            rows_where(&vt, "relname", "ducklake_snapshot")[0],
            "oid",
        )
        .unwrap_or_default();
        let want: Vec<(String, String, String)> = [
            ("tableoid", "-6", "26"),
            ("cmax", "-5", "29"),
            ("xmax", "-4", "28"),
            ("cmin", "-3", "29"),
            ("xmin", "-2", "28"),
            ("ctid", "-1", "27"),
        ]
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
        assert_eq!(system(&snapshot), want);
        assert_eq!(system("1259"), want, "pg_class");
        assert!(
            system("2604").len() == 6 && system("12035").is_empty(),
            "views have none"
        );
        assert!(
            !rows_where(&attrs, "attrelid", "12035").is_empty(),
            "pg_tables is listed"
        );
    }

    #[test]
    fn pg_class_rows() {
        let f = fixture();
        let vt = get(None, "pg_class", &f);
        let snap = rows_where(&vt, "relname", "ducklake_snapshot");
        assert_eq!(snap.len(), 1);
        let g = |r: &[Value], c: &str| txt(&vt, r, c).unwrap_or_else(|| "NULL".into());
        let r = snap[0];
        let got: Vec<String> = [
            "oid",
            "relnamespace",
            "reltype",
            "relkind",
            "relpages",
            "reltuples",
            "relhasindex",
            "relpersistence",
            "relispartition",
            "relnatts",
            "relam",
            "relowner",
        ]
        .iter()
        .map(|c| g(r, c))
        .collect();
        assert_eq!(
            got,
            ["17344", "17343", "17345", "r", "0", "0", "t", "p", "f", "5", "2", "10"]
        );
        let inl = rows_where(&vt, "relname", "ducklake_inlined_data_1_1")[0];
        assert_eq!(
            (
                g(inl, "relpages"),
                g(inl, "reltuples"),
                g(inl, "relhasindex")
            ),
            ("0".into(), "35".into(), "f".into())
        );
        let idx = rows_where(&vt, "relname", "ducklake_snapshot_pkey")[0];
        let got: Vec<String> = [
            "oid",
            "relkind",
            "relam",
            "reltype",
            "relnatts",
            "relnamespace",
        ]
        .iter()
        .map(|c| g(idx, c))
        .collect();
        assert_eq!(got, ["17346", "i", "403", "0", "1", "17343"]);
        let pgc = rows_where(&vt, "relname", "pg_class")[0];
        assert_eq!(
            (
                g(pgc, "oid"),
                g(pgc, "relnamespace"),
                g(pgc, "reltype"),
                g(pgc, "relkind")
            ),
            ("1259".into(), "11".into(), "83".into(), "r".into())
        );
        assert!(rows_where(&vt, "relname", "pg_settings")
            .iter()
            .all(|r| g(r, "relkind") == "v"));
    }

    /// DuckDB's composite-type query. PostgreSQL returns one row per column of every relation
    /// with relkind in ('c','r','v','m','f','p'), since each has a row type with typtype 'c' —
    /// user tables included.
    #[test]
    fn composite_types_like_postgres() {
        let f = fixture();
        let typ = get(None, "pg_type", &f);
        let class = get(None, "pg_class", &f);
        let att = get(None, "pg_attribute", &f);
        let mut got = Vec::new();
        for t_ in rows_where(&typ, "typtype", "c") {
            let relid = txt(&typ, t_, "typrelid").unwrap_or_default();
            let Some(c) = rows_where(&class, "oid", &relid).first().cloned() else {
                continue;
            };
            let kind = txt(&class, c, "relkind").unwrap_or_default();
            if !["c", "r", "v", "m", "f", "p"].contains(&kind.as_str()) {
                continue;
            }
            // DuckDB asks for `attnum > 0`.
            for a in rows_where(&att, "attrelid", &relid)
                .into_iter()
                .filter(|a| !txt(&att, a, "attnum").unwrap_or_default().starts_with('-'))
            {
                let sub = rows_where(&typ, "oid", &txt(&att, a, "atttypid").unwrap_or_default())[0];
                got.push((
                    txt(&typ, t_, "typnamespace").unwrap_or_default(),
                    relid.clone(),
                    txt(&typ, t_, "typname").unwrap_or_default(),
                    txt(&att, a, "attname").unwrap_or_default(),
                    txt(&typ, sub, "typname").unwrap_or_default(),
                ));
            }
        }
        let snap: Vec<_> = got.iter().filter(|g| g.2 == "ducklake_snapshot").collect();
        assert_eq!(snap.len(), 5);
        assert_eq!(
            snap[0],
            &(
                "17343".into(),
                "17344".into(),
                "ducklake_snapshot".into(),
                "snapshot_id".into(),
                "int8".into()
            )
        );
        assert_eq!(snap[1].4, "timestamptz");
        // trace sample: ["11", "1247", "pg_type", "oid", "oid"], then typname/name, typnamespace/oid
        let pt: Vec<_> = got.iter().filter(|g| g.2 == "pg_type").take(3).collect();
        assert_eq!(
            pt[0],
            &(
                "11".into(),
                "1247".into(),
                "pg_type".into(),
                "oid".into(),
                "oid".into()
            )
        );
        assert_eq!((pt[1].3.as_str(), pt[1].4.as_str()), ("typname", "name"));
        assert_eq!(
            (pt[2].3.as_str(), pt[2].4.as_str()),
            ("typnamespace", "oid")
        );
        // the pkey index has no row type
        assert!(got.iter().all(|g| g.2 != "ducklake_snapshot_pkey"));
    }

    /// `pg_index.indclass` names only operator classes `pg_opclass` lists, whose families
    /// `pg_opfamily` lists.
    #[test]
    fn index_operator_classes_are_listed() {
        let f = fixture();
        let classes = get(None, "pg_opclass", &f);
        let families = get(None, "pg_opfamily", &f);
        for ty in crate::types::ALL_TYPES {
            let class = btree_opclass(ty);
            if class == 0 {
                continue;
            }
            let row = rows_where(&classes, "oid", &class.to_string());
            assert_eq!(row.len(), 1, "{ty:?}");
            let family = txt(&classes, row[0], "opcfamily").unwrap_or_default();
            assert_eq!(rows_where(&families, "oid", &family).len(), 1, "{ty:?}");
        }
        assert_eq!(classes.rows.len(), BTREE_OPCLASSES.len());
        assert!(BTREE_OPCLASSES
            .iter()
            .all(|c| BTREE_OPFAMILIES.iter().any(|f| f.0 == c.2)));
    }

    /// Every function `pg_type` names is one RockLake knows the OID of, and the table stays
    /// sorted for [`builtin_proc_oid`]'s binary search.
    #[test]
    fn pg_type_functions_are_known() {
        assert!(BUILTIN_PROCS.windows(2).all(|w| w[0].1 < w[1].1));
        let f = fixture();
        let vt = get(None, "pg_type", &f);
        let regproc: Vec<usize> = TYPE_COLS
            .iter()
            .enumerate()
            .filter(|(_, (_, t))| *t == PgType::Regproc)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(regproc.len(), 8);
        for row in &vt.rows {
            for &c in &regproc {
                let Value::Int(o) = row[c] else {
                    panic!("{:?}: {:?}", row[1], row[c])
                };
                assert!(o == 0 || builtin_proc_name(o as u32).is_some(), "{row:?}");
            }
            // every type has input and output functions
            assert!(matches!(row[15], Value::Int(o) if o > 0), "{row:?}");
            assert!(matches!(row[16], Value::Int(o) if o > 0), "{row:?}");
        }
        assert_eq!(builtin_proc_oid("array_in"), Some(750));
        assert_eq!(builtin_proc_oid("nosuch"), None);
    }

    #[test]
    fn pg_type_builtins() {
        let f = fixture();
        let vt = get(None, "pg_type", &f);
        // regproc columns hold OIDs; read them as the names their output writes
        let g = |r: &[Value], c: &str| {
            let v = txt(&vt, r, c).unwrap_or_else(|| "NULL".into());
            let regproc = TYPE_COLS
                .iter()
                .any(|(n, t)| *n == c && *t == PgType::Regproc);
            match v.parse::<u32>() {
                Ok(o) if regproc && o != 0 => builtin_proc_name(o).unwrap_or("?").to_string(),
                _ => v,
            }
        };
        let by_oid = |o: u32| {
            rows_where(&vt, "oid", &o.to_string())
                .first()
                .cloned()
                .cloned()
        };
        for ty in crate::types::ALL_TYPES
            .into_iter()
            .chain([PgType::Unknown, PgType::Void])
        {
            let r = by_oid(ty.oid()).unwrap_or_else(|| panic!("{ty:?} missing"));
            assert_eq!(g(&r, "typname"), ty.typname());
            assert_eq!(g(&r, "typlen"), ty.typlen().to_string(), "{ty:?}");
            assert_eq!(g(&r, "typnamespace"), "11");
            assert_eq!(g(&r, "typrelid"), "0");
        }
        let i8 = by_oid(20).unwrap_or_default();
        assert_eq!(
            [
                g(&i8, "typtype"),
                g(&i8, "typcategory"),
                g(&i8, "typarray"),
                g(&i8, "typbyval"),
                g(&i8, "typinput"),
                g(&i8, "typoutput")
            ],
            ["b", "N", "1016", "t", "int8in", "int8out"]
        );
        let a = by_oid(1005).unwrap_or_default();
        assert_eq!(
            [
                g(&a, "typname"),
                g(&a, "typelem"),
                g(&a, "typcategory"),
                g(&a, "typinput")
            ],
            ["_int2", "21", "A", "array_in"]
        );
        let v = by_oid(1043).unwrap_or_default();
        assert_eq!(
            [
                g(&v, "typmodin"),
                g(&v, "typmodout"),
                g(&v, "typcollation"),
                g(&v, "typreceive")
            ],
            ["varchartypmodin", "varchartypmodout", "100", "varcharrecv"]
        );
        let ts = by_oid(1184).unwrap_or_default();
        assert_eq!(
            [g(&ts, "typinput"), g(&ts, "typsend"), g(&ts, "typarray")],
            ["timestamptz_in", "timestamptz_send", "1185"]
        );
        assert_eq!(g(&by_oid(705).unwrap_or_default(), "typtype"), "p");
        // one composite per user table, in the table's schema
        let c = rows_where(&vt, "typname", "ducklake_inlined_data_1_1");
        assert_eq!(c.len(), 1);
        assert_eq!(
            [
                g(c[0], "oid"),
                g(c[0], "typtype"),
                g(c[0], "typrelid"),
                g(c[0], "typnamespace")
            ],
            ["17401", "c", "17400", "17343"]
        );
        // oids unique
        let mut oids: Vec<String> = vt.rows.iter().map(|r| g(r, "oid")).collect();
        let n = oids.len();
        oids.sort();
        oids.dedup();
        assert_eq!(oids.len(), n);
    }

    #[test]
    fn constraints_indexes_and_pg_indexes() {
        let f = fixture();
        let con = get(None, "pg_constraint", &f);
        assert_eq!(con.rows.len(), 1, "only the keyed table has a constraint");
        let g = |vt: &VirtualTable, r: &[Value], c: &str| {
            txt(vt, r, c).unwrap_or_else(|| "NULL".into())
        };
        let r = &con.rows[0];
        let got: Vec<String> = [
            "oid",
            "conname",
            "connamespace",
            "contype",
            "conrelid",
            "conindid",
            "conkey",
            "confkey",
        ]
        .iter()
        .map(|c| g(&con, r, c))
        .collect();
        assert_eq!(
            got,
            [
                "17346",
                "ducklake_snapshot_pkey",
                "17343",
                "p",
                "17344",
                "17346",
                "{1}",
                "NULL"
            ]
        );
        assert_eq!(
            r[ci(&con, "conkey")],
            Value::Array(vec![Value::Int(1)].into())
        );

        let idx = get(None, "pg_index", &f);
        assert_eq!(idx.rows.len(), 1);
        let got: Vec<String> = [
            "indexrelid",
            "indrelid",
            "indnatts",
            "indisunique",
            "indisprimary",
            "indkey",
        ]
        .iter()
        .map(|c| g(&idx, &idx.rows[0], c))
        .collect();
        // `indkey` is an int2vector, written with spaces as PostgreSQL writes it.
        assert_eq!(got, ["17346", "17344", "1", "t", "t", "1"]);

        let ix = get(None, "pg_indexes", &f);
        assert_eq!(
            ix.rows,
            vec![vec![
                t("dlmeta"),
                t("ducklake_snapshot"),
                t("ducklake_snapshot_pkey"),
                NULL,
                t("CREATE UNIQUE INDEX ducklake_snapshot_pkey ON dlmeta.ducklake_snapshot USING btree (snapshot_id)"),
            ]]
        );
    }

    #[test]
    fn attributes_and_defaults() {
        let f = fixture();
        let att = get(None, "pg_attribute", &f);
        let g = |r: &[Value], c: &str| txt(&att, r, c).unwrap_or_else(|| "NULL".into());
        let rows = rows_where(&att, "attrelid", "17400");
        let v20 = rows
            .iter()
            .find(|r| g(r, "attname") == "v20")
            .copied()
            .cloned()
            .unwrap_or_default();
        let got: Vec<String> = [
            "atttypid",
            "attnum",
            "atttypmod",
            "attlen",
            "attnotnull",
            "atthasdef",
            "attisdropped",
            "attndims",
            "attcollation",
            "attstorage",
            "attalign",
        ]
        .iter()
        .map(|c| g(&v20, c))
        .collect();
        assert_eq!(
            got,
            ["1043", "8", "24", "-1", "t", "t", "f", "0", "100", "x", "i"]
        );
        let ts = rows_where(&att, "attrelid", "17344")
            .into_iter()
            .find(|r| g(r, "attname") == "snapshot_time")
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            [
                g(&ts, "attlen"),
                g(&ts, "attbyval"),
                g(&ts, "attalign"),
                g(&ts, "attstorage")
            ],
            ["8", "t", "d", "p"]
        );
        // the pkey index has its key column as attribute 1
        let pk = rows_where(&att, "attrelid", "17346");
        assert_eq!(pk.len(), 1);
        assert_eq!(g(pk[0], "attname"), "snapshot_id");

        let def = get(None, "pg_attrdef", &f);
        assert_eq!(def.rows.len(), 1);
        assert_eq!(
            def.rows[0][1..].to_vec(),
            vec![oid(17_400), int(8), t("'x'::character varying")]
        );
    }

    #[test]
    fn information_schema() {
        let f = fixture();
        let cols = get(Some("information_schema"), "columns", &f);
        let g = |r: &[Value], c: &str| txt(&cols, r, c).unwrap_or_else(|| "NULL".into());
        let mine: Vec<&Vec<Value>> = rows_where(&cols, "table_name", "ducklake_inlined_data_1_1");
        assert_eq!(mine.len(), 8);
        let d1 = mine[5];
        let got: Vec<String> = [
            "table_catalog",
            "table_schema",
            "column_name",
            "ordinal_position",
            "data_type",
            "numeric_precision",
            "numeric_precision_radix",
            "numeric_scale",
            "is_nullable",
            "udt_name",
        ]
        .iter()
        .map(|c| g(d1, c))
        .collect();
        assert_eq!(
            got,
            ["lake", "dlmeta", "d1", "6", "numeric", "9", "10", "2", "YES", "numeric"]
        );
        let v20 = mine[7];
        let got: Vec<String> = [
            "data_type",
            "character_maximum_length",
            "character_octet_length",
            "column_default",
            "is_nullable",
        ]
        .iter()
        .map(|c| g(v20, c))
        .collect();
        assert_eq!(
            got,
            [
                "character varying",
                "20",
                "80",
                "'x'::character varying",
                "NO"
            ]
        );
        let u64c = mine[4];
        assert_eq!(
            [
                g(u64c, "character_maximum_length"),
                g(u64c, "character_octet_length")
            ],
            ["NULL", "1073741824"]
        );
        let snap = rows_where(&cols, "table_name", "ducklake_snapshot");
        assert_eq!(
            [
                g(snap[0], "data_type"),
                g(snap[0], "is_nullable"),
                g(snap[0], "numeric_precision")
            ],
            ["bigint", "NO", "64"]
        );
        assert_eq!(
            [g(snap[1], "data_type"), g(snap[1], "datetime_precision")],
            ["timestamp with time zone", "6"]
        );

        let tabs = get(Some("information_schema"), "tables", &f);
        let tg = |r: &[Value], c: &str| txt(&tabs, r, c).unwrap_or_else(|| "NULL".into());
        let mine: Vec<String> = rows_where(&tabs, "table_schema", "dlmeta")
            .iter()
            .map(|r| format!("{}/{}", tg(r, "table_name"), tg(r, "table_type")))
            .collect();
        assert_eq!(
            mine,
            [
                "ducklake_snapshot/BASE TABLE",
                "ducklake_inlined_data_1_1/BASE TABLE"
            ]
        );
        assert_eq!(
            tg(rows_where(&tabs, "table_name", "pg_roles")[0], "table_type"),
            "VIEW"
        );

        let sch = get(Some("information_schema"), "schemata", &f);
        let names: Vec<String> = sch
            .rows
            .iter()
            .map(|r| txt(&sch, r, "schema_name").unwrap_or_default())
            .collect();
        assert_eq!(
            names,
            [
                "pg_catalog",
                "pg_toast",
                "public",
                "information_schema",
                "dlmeta"
            ]
        );
    }

    /// `SELECT version(), (SELECT COUNT(*) FROM pg_settings WHERE name LIKE 'rds%')` must count 0.
    #[test]
    fn settings() {
        let f = fixture();
        let vt = get(None, "pg_settings", &f);
        let setting = |n: &str| {
            rows_where(&vt, "name", n)
                .first()
                .and_then(|r| txt(&vt, r, "setting"))
        };
        assert_eq!(
            vt.rows
                .iter()
                .filter(|r| txt(&vt, r, "name").unwrap_or_default().starts_with("rds"))
                .count(),
            0
        );
        assert_eq!(setting("server_version_num").as_deref(), Some("150018"));
        assert!(setting("server_version")
            .unwrap_or_default()
            .starts_with("15.18 ("));
        assert_eq!(
            setting("standard_conforming_strings").as_deref(),
            Some("on")
        );
        assert_eq!(setting("TimeZone").as_deref(), Some("Etc/UTC"));
        assert_eq!(setting("DateStyle").as_deref(), Some("ISO, MDY"));
        assert_eq!(setting("client_encoding").as_deref(), Some("UTF8"));
        assert_eq!(setting("max_connections").as_deref(), Some("100"));
        assert_eq!(
            setting("transaction_isolation").as_deref(),
            Some("read committed")
        );
        assert_eq!(
            setting("session_authorization").as_deref(),
            Some("postgres")
        );
        let names: Vec<String> = vt
            .rows
            .iter()
            .map(|r| txt(&vt, r, "name").unwrap_or_default())
            .collect();
        let mut dedup = names.clone();
        dedup.dedup();
        assert_eq!(names, dedup);
    }

    #[test]
    fn databases_roles_and_small_catalogs() {
        let f = fixture();
        let db = get(None, "pg_database", &f);
        let names: Vec<String> = db
            .rows
            .iter()
            .map(|r| txt(&db, r, "datname").unwrap_or_default())
            .collect();
        assert_eq!(names, ["template1", "template0", "postgres", "lake"]);
        let lake = rows_where(&db, "datname", "lake")[0];
        assert_eq!(txt(&db, lake, "oid").as_deref(), Some("16383"));
        let fx = Fixture {
            schemas: vec![],
            tables: vec![],
        };
        let v = CatalogView {
            database: "postgres",
            ..view(&fx)
        };
        assert_eq!(
            build(None, "pg_database", &v).map(|x| x.rows.len()),
            Some(3)
        );

        let roles = get(None, "pg_roles", &f);
        let me = rows_where(&roles, "rolname", "postgres");
        assert_eq!(me.len(), 1);
        assert_eq!(
            [
                txt(&roles, me[0], "oid"),
                txt(&roles, me[0], "rolsuper"),
                txt(&roles, me[0], "rolcanlogin")
            ],
            [Some("10".into()), Some("t".into()), Some("t".into())]
        );
        let user = get(None, "pg_user", &f);
        assert_eq!(
            user.rows[0][..4].to_vec(),
            vec![t("postgres"), oid(10), b(true), b(true)]
        );

        let coll = get(None, "pg_collation", &f);
        let names: Vec<String> = coll
            .rows
            .iter()
            .map(|r| txt(&coll, r, "collname").unwrap_or_default())
            .collect();
        assert_eq!(names, ["default", "C", "POSIX"]);
        let am = get(None, "pg_am", &f);
        assert_eq!(
            rows_where(&am, "amname", "btree")
                .first()
                .and_then(|r| txt(&am, r, "oid"))
                .as_deref(),
            Some("403")
        );
        let ts = get(None, "pg_tablespace", &f);
        assert_eq!(ts.rows.len(), 2);
        let comments = get(None, "pg_description", &f);
        assert_eq!(comments.rows.len(), 3, "the built-in schemas' comments");
        for empty in [
            "pg_enum",
            "pg_inherits",
            "pg_auth_members",
            "pg_policy",
            "pg_statistic_ext",
            "pg_publication",
            "pg_publication_rel",
            "pg_publication_namespace",
        ] {
            assert!(get(None, empty, &f).rows.is_empty(), "{empty}");
        }
        let tables = get(None, "pg_tables", &f);
        let mine: Vec<Vec<Value>> = rows_where(&tables, "schemaname", "dlmeta")
            .into_iter()
            .cloned()
            .collect();
        assert_eq!(
            mine[0],
            vec![
                t("dlmeta"),
                t("ducklake_snapshot"),
                t("postgres"),
                NULL,
                b(true),
                b(false),
                b(false),
                b(false)
            ]
        );
        assert_eq!(mine.len(), 2);
        let views = get(None, "pg_views", &f);
        assert!(rows_where(&views, "schemaname", "dlmeta").is_empty());
    }

    /// Nothing is cached: a second build sees a changed registry.
    #[test]
    fn built_live_from_the_registry() {
        let mut f = fixture();
        let before = get(None, "pg_class", &f).rows.len();
        let mut t3 = snapshot();
        t3.id = 3;
        t3.oid = 17_500;
        t3.name = "ducklake_snapshot_changes".into();
        t3.pkey_name = "ducklake_snapshot_changes_pkey".into();
        f.tables.push(Arc::new(t3));
        let after = get(None, "pg_class", &f);
        assert_eq!(after.rows.len(), before + 2);
        assert_eq!(
            rows_where(&after, "relname", "ducklake_snapshot_changes").len(),
            1
        );
    }

    #[test]
    fn quote_all_identifiers_quotes_every_name_while_entered() {
        assert_eq!(quote_ident("abc"), "abc");
        {
            let _on = enter_quote_all(true);
            assert_eq!(quote_ident("abc"), "\"abc\"");
            assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
            // aclitem's quoting is its own.
            assert_eq!(
                acl_default('r', "postgres").expect("a relation's default")[0],
                "postgres=arwdDxt/postgres"
            );
            assert_eq!(crate::query::format_type(PgType::Text, -1), "\"text\"");
            assert_eq!(
                crate::query::format_type(PgType::TextArray, -1),
                "\"text\"[]"
            );
            assert_eq!(
                crate::query::format_type(PgType::Int4Array, -1),
                "integer[]"
            );
            assert_eq!(
                crate::query::format_type(PgType::Varchar, 14),
                "character varying(10)"
            );
            assert_eq!(crate::query::format_type(PgType::Char, -1), "\"char\"");
            assert_eq!(crate::query::format_type_plain(PgType::Uuid, -1), "uuid");
            {
                let _off = enter_quote_all(false);
                assert_eq!(quote_ident("abc"), "abc");
            }
            assert_eq!(quote_ident("abc"), "\"abc\"");
        }
        assert_eq!(quote_ident("abc"), "abc");
        assert_eq!(crate::query::format_type(PgType::Uuid, -1), "uuid");
    }

    #[test]
    fn defaults_are_requoted_as_postgres_deparses_them() {
        for (stored, quoted) in [
            ("now()", "\"now\"()"),
            ("'x'::text", "'x'::\"text\""),
            ("'x'::character varying", "'x'::character varying"),
            ("'abc'::character varying(3)", "'abc'::character varying(3)"),
            (
                "'2020-07-01 12:00:00'::timestamp without time zone",
                "'2020-07-01 12:00:00'::timestamp without time zone",
            ),
            ("'{a,b}'::text[]", "'{a,b}'::\"text\"[]"),
            ("'{1}'::integer[]", "'{1}'::integer[]"),
            (
                "nextval('app.s1'::regclass)",
                "\"nextval\"('\"app\".\"s1\"'::\"regclass\")",
            ),
            (
                "nextval('\"My\".\"s.1\"'::regclass)",
                "\"nextval\"('\"My\".\"s.1\"'::\"regclass\")",
            ),
            (
                "upper(lower('x'::text))",
                "\"upper\"(\"lower\"('x'::\"text\"))",
            ),
            ("pg_catalog.now()", "\"pg_catalog\".\"now\"()"),
            ("COALESCE(1, 2)", "COALESCE(1, 2)"),
            ("CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"),
            ("(1 + 2)", "(1 + 2)"),
            ("true", "true"),
            ("'it''s'::text", "'it''s'::\"text\""),
        ] {
            assert_eq!(requote_expression(stored), quoted, "{stored}");
            assert_eq!(normalize_names(quoted), stored, "{quoted}");
            assert_eq!(normalize_names(stored), stored, "{stored}");
        }
        // A name that needs its quotes keeps them.
        assert_eq!(normalize_names("\"My Fn\"()"), "\"My Fn\"()");
        assert_eq!(normalize_names("'x'::\"char\""), "'x'::\"char\"");
        // SQL's calls in capitals, never quoted; type names in lower case.
        assert_eq!(normalize_names("coalesce(1, 2)"), "COALESCE(1, 2)");
        assert_eq!(normalize_names("current_user"), "CURRENT_USER");
        assert_eq!(
            normalize_names("current_timestamp(3)"),
            "CURRENT_TIMESTAMP(3)"
        );
        assert_eq!(requote_expression("coalesce(1, 2)"), "coalesce(1, 2)");
        assert_eq!(
            normalize_names("nextval('other.s'::REGCLASS)"),
            "nextval('other.s'::regclass)"
        );
        assert_eq!(
            requote_expression("nextval('other.s'::REGCLASS)"),
            "\"nextval\"('\"other\".\"s\"'::REGCLASS)"
        );
        // A regclass constant names what regclass input reads; an OID or a malformed name
        // is left as it is.
        assert_eq!(
            normalize_names("nextval('MySeq'::regclass)"),
            "nextval('myseq'::regclass)"
        );
        assert_eq!(
            normalize_names("nextval(' App . \"S 1\" '::regclass)"),
            "nextval('app.\"S 1\"'::regclass)"
        );
        assert_eq!(normalize_names("'16384'::regclass"), "'16384'::regclass");
        // regclass input's own reading: ASCII letters folded, a space inside a bare name
        // does not parse.
        assert_eq!(normalize_names("'ÀB'::regclass"), "'\"Àb\"'::regclass");
        assert_eq!(normalize_names("'a b'::regclass"), "'a b'::regclass");
        assert_eq!(
            normalize_names("1::DOUBLE PRECISION"),
            "1::double precision"
        );
        assert_eq!(normalize_names("'\"a'::regclass"), "'\"a'::regclass");
        assert_eq!(
            requote_expression("'a..b'::regclass"),
            "'a..b'::\"regclass\""
        );
    }

    proptest::proptest! {
        /// Whatever a default's strings hold (quotes, dots, backslashes, non-ASCII), quoting
        /// its names and normalizing them again gives back the stored text, and the strings
        /// are left as they are.
        #[test]
        fn requoting_keeps_strings_and_round_trips(
            a in "[ -~é\n]{0,12}",
            b in "[a-z][a-z0-9_]{0,8}",
        ) {
            // A name PostgreSQL writes bare (a keyword would be stored quoted).
            proptest::prop_assume!(quote_ident_if_needed(&b) == b);
            let lit = format!("'{}'", a.replace('\'', "''"));
            let stored = format!("concat({lit}::text, {b}({lit}), ARRAY[{lit}])");
            let quoted = requote_expression(&stored);
            proptest::prop_assert_eq!(
                &quoted,
                &format!("\"concat\"({lit}::\"text\", \"{b}\"({lit}), ARRAY[{lit}])")
            );
            proptest::prop_assert_eq!(normalize_names(&quoted), stored);
        }
    }

    #[test]
    fn identifiers_are_quoted_like_quote_ident() {
        assert_eq!(quote_ident("snapshot_id"), "snapshot_id");
        assert_eq!(quote_ident("Mixed"), "\"Mixed\"");
        assert_eq!(quote_ident("user"), "\"user\"");
        assert_eq!(quote_ident("1a"), "\"1a\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
        assert_eq!(quote_ident("key"), "key");
        assert_eq!(quote_ident("a$b"), "\"a$b\"");
        assert_eq!(acl_role_name("Admin"), "Admin");
        assert_eq!(acl_role_name("user"), "user");
        assert_eq!(acl_role_name("a b"), "\"a b\"");
        assert_eq!(acl_role_name("a\"b"), "\"a\"\"b\"");
    }
}
