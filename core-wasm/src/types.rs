//! PostgreSQL types and values as the catalog needs them: type identity (OID, name, length),
//! the in-memory value, text input/output in PostgreSQL's formats (DateStyle ISO, TimeZone UTC),
//! and ordering with PostgreSQL semantics.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::SqlError;

/// The PostgreSQL types RockLake stores or returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PgType {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Numeric,
    Text,
    Varchar,
    Bpchar,
    Name,
    Char,
    Bytea,
    Uuid,
    Timestamptz,
    Timestamp,
    Date,
    Time,
    Interval,
    Oid,
    Regclass,
    Regtype,
    Regnamespace,
    Regproc,
    Tid,
    /// A transaction id (`xmin` of `pg_class` rows): only `=` / `<>` (also against integer)
    /// and casts from and to text, as in PostgreSQL.
    Xid,
    /// An IPv4 or IPv6 host or network address (`pg_stat_activity.client_addr`), held as
    /// [`Value::Bytes`] in the order it sorts by: family (4 or 6), address, prefix length.
    Inet,
    /// `json`: the text as written, checked to be a JSON document (no operators compare it).
    Json,
    // One-dimensional arrays of the element types clients aggregate and build most (an array
    // of another type is text[], its elements as text).
    Int2Array,
    /// `int2vector`: an `int2` array written with spaces, subscripted from 0 (`pg_index.indkey`).
    Int2Vector,
    /// `oidvector`: the same for `oid` (`pg_index.indclass`, `pg_proc.proargtypes`).
    OidVector,
    TextArray,
    BoolArray,
    Int4Array,
    Int8Array,
    Float4Array,
    Float8Array,
    NumericArray,
    VarcharArray,
    NameArray,
    OidArray,
    BpcharArray,
    ByteaArray,
    DateArray,
    TimeArray,
    TimestampArray,
    TimestamptzArray,
    IntervalArray,
    UuidArray,
    /// An untyped string literal before it meets a context (PostgreSQL's `unknown`).
    Unknown,
    /// What a function returning nothing returns (`setseed`): an empty value.
    Void,
    /// An anonymous row (`record`) with these fields, held as [`Value::Array`] of the fields'
    /// values (`information_schema._pg_expandarray`'s rows).
    Record(&'static [(&'static str, PgType)]),
}

impl PgType {
    pub fn oid(self) -> u32 {
        match self {
            PgType::Bool => 16,
            PgType::Bytea => 17,
            PgType::Char => 18,
            PgType::Name => 19,
            PgType::Int8 => 20,
            PgType::Int2 => 21,
            PgType::Int4 => 23,
            PgType::Regclass => 2205,
            PgType::Regtype => 2206,
            PgType::Regnamespace => 4089,
            PgType::Regproc => 24,
            PgType::Text => 25,
            PgType::Oid => 26,
            PgType::Tid => 27,
            PgType::Xid => 28,
            PgType::Inet => 869,
            PgType::Json => 114,
            PgType::Float4 => 700,
            PgType::Float8 => 701,
            PgType::Int2Array => 1005,
            PgType::Int2Vector => 22,
            PgType::OidVector => 30,
            PgType::TextArray => 1009,
            PgType::BoolArray => 1000,
            PgType::NameArray => 1003,
            PgType::Int4Array => 1007,
            PgType::VarcharArray => 1015,
            PgType::Int8Array => 1016,
            PgType::Float4Array => 1021,
            PgType::Float8Array => 1022,
            PgType::NumericArray => 1231,
            PgType::OidArray => 1028,
            PgType::BpcharArray => 1014,
            PgType::ByteaArray => 1001,
            PgType::DateArray => 1182,
            PgType::TimeArray => 1183,
            PgType::TimestampArray => 1115,
            PgType::TimestamptzArray => 1185,
            PgType::IntervalArray => 1187,
            PgType::UuidArray => 2951,
            PgType::Bpchar => 1042,
            PgType::Varchar => 1043,
            PgType::Date => 1082,
            PgType::Time => 1083,
            PgType::Timestamp => 1114,
            PgType::Timestamptz => 1184,
            PgType::Interval => 1186,
            PgType::Numeric => 1700,
            PgType::Uuid => 2950,
            PgType::Unknown => 705,
            PgType::Void => 2278,
            PgType::Record(_) => 2249,
        }
    }

    /// `typlen` as pg_type reports it (-1 varlena, -2 cstring).
    pub fn typlen(self) -> i16 {
        match self {
            PgType::Bool | PgType::Char => 1,
            PgType::Int2 => 2,
            PgType::Int4
            | PgType::Float4
            | PgType::Oid
            | PgType::Regclass
            | PgType::Regtype
            | PgType::Regnamespace
            | PgType::Regproc
            | PgType::Date
            | PgType::Xid
            | PgType::Void => 4,
            PgType::Int8
            | PgType::Float8
            | PgType::Timestamp
            | PgType::Timestamptz
            | PgType::Time => 8,
            PgType::Tid => 6,
            PgType::Interval | PgType::Uuid => 16,
            PgType::Name => 64,
            PgType::Unknown => -2,
            _ => -1,
        }
    }

    /// The name PostgreSQL's `pg_type.typname` gives the type.
    pub fn typname(self) -> &'static str {
        match self {
            PgType::Bool => "bool",
            PgType::Int2 => "int2",
            PgType::Int4 => "int4",
            PgType::Int8 => "int8",
            PgType::Float4 => "float4",
            PgType::Float8 => "float8",
            PgType::Numeric => "numeric",
            PgType::Text => "text",
            PgType::Varchar => "varchar",
            PgType::Bpchar => "bpchar",
            PgType::Name => "name",
            PgType::Char => "char",
            PgType::Bytea => "bytea",
            PgType::Uuid => "uuid",
            PgType::Timestamptz => "timestamptz",
            PgType::Timestamp => "timestamp",
            PgType::Date => "date",
            PgType::Time => "time",
            PgType::Interval => "interval",
            PgType::Oid => "oid",
            PgType::Regclass => "regclass",
            PgType::Regtype => "regtype",
            PgType::Regnamespace => "regnamespace",
            PgType::Regproc => "regproc",
            PgType::Tid => "tid",
            PgType::Xid => "xid",
            PgType::Inet => "inet",
            PgType::Json => "json",
            PgType::Int2Array => "_int2",
            PgType::Int2Vector => "int2vector",
            PgType::OidVector => "oidvector",
            PgType::TextArray => "_text",
            PgType::BoolArray => "_bool",
            PgType::NameArray => "_name",
            PgType::Int4Array => "_int4",
            PgType::VarcharArray => "_varchar",
            PgType::Int8Array => "_int8",
            PgType::Float4Array => "_float4",
            PgType::Float8Array => "_float8",
            PgType::NumericArray => "_numeric",
            PgType::OidArray => "_oid",
            PgType::BpcharArray => "_bpchar",
            PgType::ByteaArray => "_bytea",
            PgType::DateArray => "_date",
            PgType::TimeArray => "_time",
            PgType::TimestampArray => "_timestamp",
            PgType::TimestamptzArray => "_timestamptz",
            PgType::IntervalArray => "_interval",
            PgType::UuidArray => "_uuid",
            PgType::Unknown => "unknown",
            PgType::Void => "void",
            PgType::Record(_) => "record",
        }
    }

    /// The name `format_type` prints, used in error messages ("integer", "character varying").
    pub fn sql_name(self) -> &'static str {
        match self {
            PgType::Bool => "boolean",
            PgType::Int2 => "smallint",
            PgType::Int4 => "integer",
            PgType::Int8 => "bigint",
            PgType::Float4 => "real",
            PgType::Float8 => "double precision",
            PgType::Varchar => "character varying",
            PgType::Bpchar => "character",
            PgType::Timestamptz => "timestamp with time zone",
            PgType::Timestamp => "timestamp without time zone",
            PgType::Time => "time without time zone",
            PgType::Int2Array => "smallint[]",
            PgType::Int2Vector => "int2vector",
            PgType::OidVector => "oidvector",
            PgType::TextArray => "text[]",
            PgType::BoolArray => "boolean[]",
            PgType::NameArray => "name[]",
            PgType::Int4Array => "integer[]",
            PgType::VarcharArray => "character varying[]",
            PgType::Int8Array => "bigint[]",
            PgType::Float4Array => "real[]",
            PgType::Float8Array => "double precision[]",
            PgType::NumericArray => "numeric[]",
            PgType::OidArray => "oid[]",
            PgType::BpcharArray => "character[]",
            PgType::ByteaArray => "bytea[]",
            PgType::DateArray => "date[]",
            PgType::TimeArray => "time without time zone[]",
            PgType::TimestampArray => "timestamp without time zone[]",
            PgType::TimestamptzArray => "timestamp with time zone[]",
            PgType::IntervalArray => "interval[]",
            PgType::UuidArray => "uuid[]",
            PgType::Char => "\"char\"",
            other => other.typname(),
        }
    }

    pub fn from_typname(name: &str) -> Option<PgType> {
        Some(match name {
            "bool" => PgType::Bool,
            "int2" => PgType::Int2,
            "int4" => PgType::Int4,
            "int8" => PgType::Int8,
            "float4" => PgType::Float4,
            "float8" => PgType::Float8,
            "numeric" => PgType::Numeric,
            "text" => PgType::Text,
            "varchar" => PgType::Varchar,
            "bpchar" => PgType::Bpchar,
            "name" => PgType::Name,
            "char" => PgType::Char,
            "bytea" => PgType::Bytea,
            "uuid" => PgType::Uuid,
            "timestamptz" => PgType::Timestamptz,
            "timestamp" => PgType::Timestamp,
            "date" => PgType::Date,
            "time" => PgType::Time,
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
            "_int2" => PgType::Int2Array,
            "int2vector" => PgType::Int2Vector,
            "oidvector" => PgType::OidVector,
            "_text" => PgType::TextArray,
            "_bool" => PgType::BoolArray,
            "_name" => PgType::NameArray,
            "_int4" => PgType::Int4Array,
            "_varchar" => PgType::VarcharArray,
            "_int8" => PgType::Int8Array,
            "_float4" => PgType::Float4Array,
            "_float8" => PgType::Float8Array,
            "_numeric" => PgType::NumericArray,
            "_oid" => PgType::OidArray,
            "_bpchar" => PgType::BpcharArray,
            "_bytea" => PgType::ByteaArray,
            "_date" => PgType::DateArray,
            "_time" => PgType::TimeArray,
            "_timestamp" => PgType::TimestampArray,
            "_timestamptz" => PgType::TimestamptzArray,
            "_interval" => PgType::IntervalArray,
            "_uuid" => PgType::UuidArray,
            _ => return None,
        })
    }

    /// `int2vector` or `oidvector`: written with spaces, subscripted from 0.
    pub fn is_vector(self) -> bool {
        matches!(self, PgType::Int2Vector | PgType::OidVector)
    }

    pub fn is_integer(self) -> bool {
        matches!(
            self,
            PgType::Int2 | PgType::Int4 | PgType::Int8 | PgType::Oid
        ) || self.is_reg()
    }

    /// An OID type whose text is an object's name (`regclass`, `regtype`, `regnamespace`).
    pub fn is_reg(self) -> bool {
        matches!(
            self,
            PgType::Regclass | PgType::Regtype | PgType::Regnamespace | PgType::Regproc
        )
    }
    pub fn is_numeric_family(self) -> bool {
        self.is_integer() || matches!(self, PgType::Float4 | PgType::Float8 | PgType::Numeric)
    }
    /// The column name PostgreSQL gives a cast to this type: the type's name as written, so
    /// an array type is named after its element (`x::text[]` is `text`); the vectors are
    /// named as themselves.
    pub fn cast_column_name(self) -> &'static str {
        match self.element() {
            Some(e) if !self.is_vector() => e.typname(),
            _ => self.typname(),
        }
    }

    /// The element type of an array type.
    pub fn element(self) -> Option<PgType> {
        match self {
            PgType::Int2Array | PgType::Int2Vector => Some(PgType::Int2),
            PgType::TextArray => Some(PgType::Text),
            PgType::BoolArray => Some(PgType::Bool),
            PgType::NameArray => Some(PgType::Name),
            PgType::Int4Array => Some(PgType::Int4),
            PgType::VarcharArray => Some(PgType::Varchar),
            PgType::Int8Array => Some(PgType::Int8),
            PgType::Float4Array => Some(PgType::Float4),
            PgType::Float8Array => Some(PgType::Float8),
            PgType::NumericArray => Some(PgType::Numeric),
            PgType::OidArray | PgType::OidVector => Some(PgType::Oid),
            PgType::BpcharArray => Some(PgType::Bpchar),
            PgType::ByteaArray => Some(PgType::Bytea),
            PgType::DateArray => Some(PgType::Date),
            PgType::TimeArray => Some(PgType::Time),
            PgType::TimestampArray => Some(PgType::Timestamp),
            PgType::TimestamptzArray => Some(PgType::Timestamptz),
            PgType::IntervalArray => Some(PgType::Interval),
            PgType::UuidArray => Some(PgType::Uuid),
            _ => None,
        }
    }

    /// The fields of `information_schema._pg_expandarray`'s rows over an array of `self`:
    /// the element `x` and its 1-based position `n`.
    pub fn expanded_array_fields(self) -> &'static [(&'static str, PgType)] {
        macro_rules! fields {
            ($($t:ident),*) => {
                match self {
                    $(PgType::$t => &[("x", PgType::$t), ("n", PgType::Int4)],)*
                    _ => &[("x", PgType::Text), ("n", PgType::Int4)],
                }
            };
        }
        fields!(
            Bool,
            Int2,
            Int4,
            Int8,
            Float4,
            Float8,
            Numeric,
            Varchar,
            Bpchar,
            Name,
            Bytea,
            Uuid,
            Timestamptz,
            Timestamp,
            Date,
            Time,
            Interval,
            Oid
        )
    }

    /// The array type of element type `self`, when RockLake has one.
    pub fn array_of(self) -> Option<PgType> {
        ALL_TYPES
            .into_iter()
            .find(|t| !t.is_vector() && t.element() == Some(self))
    }

    /// The array type of `self`, or text[] (whose elements are then `self`'s text) when
    /// RockLake has none.
    pub fn array_or_text(self) -> PgType {
        self.array_of().unwrap_or(PgType::TextArray)
    }

    pub fn is_array(self) -> bool {
        self.element().is_some()
    }
    pub fn is_string(self) -> bool {
        matches!(
            self,
            PgType::Text
                | PgType::Varchar
                | PgType::Bpchar
                | PgType::Name
                | PgType::Char
                | PgType::Unknown
        )
    }
}

/// Whether PostgreSQL converts a value of type `from` where an assignment stores it into a
/// column of type `to` (INSERT, UPDATE's SET, a default): an implicit or assignment cast of
/// its `pg_cast`, element by element between arrays, or the conversion through text into a
/// string type that PostgreSQL allows in assignments. Otherwise it refuses with 42804.
pub fn assignable(from: PgType, to: PgType) -> bool {
    use PgType::*;
    if from == to || from == Unknown {
        return true;
    }
    if let (Some(f), Some(t)) = (from.element(), to.element()) {
        return assignable(f, t);
    }
    match (from, to) {
        (_, Text | Varchar | Bpchar | Name) => true,
        (f, t) if f.is_numeric_family() && t.is_numeric_family() => true,
        (Int2 | Int4 | Int8 | Regclass | Regtype | Regnamespace | Regproc, Oid) => true,
        (Oid | Regclass | Regtype | Regnamespace | Regproc, Int4 | Int8) => true,
        (
            Int2 | Int4 | Int8 | Oid | Text | Varchar,
            Regclass | Regtype | Regnamespace | Regproc,
        ) => true,
        (Text | Varchar | Bpchar, Char) => true,
        (Date, Timestamp | Timestamptz)
        | (Timestamp, Date | Time | Timestamptz)
        | (Timestamptz, Date | Time | Timestamp)
        | (Time, Interval)
        | (Interval, Time) => true,
        _ => false,
    }
}

/// Every array [`PgType`], as a pattern.
macro_rules! array_types {
    () => {
        $crate::types::PgType::Int2Array
            | $crate::types::PgType::Int2Vector
            | $crate::types::PgType::OidVector
            | $crate::types::PgType::TextArray
            | $crate::types::PgType::BoolArray
            | $crate::types::PgType::Int4Array
            | $crate::types::PgType::Int8Array
            | $crate::types::PgType::Float4Array
            | $crate::types::PgType::Float8Array
            | $crate::types::PgType::NumericArray
            | $crate::types::PgType::VarcharArray
            | $crate::types::PgType::NameArray
            | $crate::types::PgType::OidArray
            | $crate::types::PgType::BpcharArray
            | $crate::types::PgType::ByteaArray
            | $crate::types::PgType::DateArray
            | $crate::types::PgType::TimeArray
            | $crate::types::PgType::TimestampArray
            | $crate::types::PgType::TimestamptzArray
            | $crate::types::PgType::IntervalArray
            | $crate::types::PgType::UuidArray
    };
}
pub(crate) use array_types;

/// An interval as PostgreSQL keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

impl Interval {
    /// PostgreSQL compares intervals by their span with 30-day months and 24-hour days.
    pub fn span(&self) -> i128 {
        (self.months as i128 * 30 + self.days as i128) * 86_400_000_000 + self.micros as i128
    }
}

/// A value. Integers of every width are `Int`; the declared type says which one it is.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// Canonical decimal text (see [`numeric_canonical`]); also `NaN`.
    Numeric(String),
    Text(Arc<str>),
    Bytes(Vec<u8>),
    Uuid([u8; 16]),
    /// Microseconds since 2000-01-01 00:00:00 UTC (timestamptz and timestamp).
    Timestamp(i64),
    /// Days since 2000-01-01.
    Date(i32),
    /// Microseconds since midnight.
    Time(i64),
    Interval(Interval),
    Tid(u32, u16),
    Array(Arc<[Value]>),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether dropping the value frees or releases memory. Every variant is named, so a new
    /// one must be placed here (a heap variant missing would leak in [`Value::release`]).
    #[inline]
    fn owns_heap(&self) -> bool {
        match self {
            Value::Numeric(_) | Value::Text(_) | Value::Bytes(_) | Value::Array(_) => true,
            Value::Null
            | Value::Bool(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Uuid(_)
            | Value::Timestamp(_)
            | Value::Date(_)
            | Value::Time(_)
            | Value::Interval(_)
            | Value::Tid(..) => false,
        }
    }

    /// Drops the value, running its drop glue only when it holds memory. In the wasm32 build
    /// that glue stays out of line, and the executor drops millions of integers and NULLs
    /// (catalog rows' unread columns, joined rows after projection, result rows once
    /// encoded): a call each was 14 % of DuckDB's column join in the component.
    #[inline]
    pub fn release(self) {
        if self.owns_heap() {
            drop(self);
        } else {
            // Nothing to free: the value is plain bytes.
            std::mem::forget(self);
        }
    }

    /// A text value (shared: copies of it into joined rows and results only count references).
    pub fn text(s: impl Into<Arc<str>>) -> Value {
        Value::Text(s.into())
    }

    /// The empty text, without an allocation of its own (catalog rows hold many).
    pub fn empty_text() -> Value {
        static EMPTY: std::sync::LazyLock<Arc<str>> = std::sync::LazyLock::new(|| Arc::from(""));
        Value::Text(EMPTY.clone())
    }
}

/// Drops a row through [`Value::release`].
#[inline]
pub fn release_row(row: Vec<Value>) {
    for v in row {
        v.release();
    }
}

/// `row.truncate(len)` through [`Value::release`].
#[inline]
pub fn truncate_row(row: &mut Vec<Value>, len: usize) {
    for v in row.drain(len.min(row.len())..) {
        v.release();
    }
}

// ------------------------------------------------------------------ ordering

/// PostgreSQL ordering of two non-null values of comparable types (NULLs are handled by callers).
pub fn compare(a: &Value, b: &Value) -> Ordering {
    use Value::*;
    match (a, b) {
        (Null, Null) => Ordering::Equal,
        (Null, _) => Ordering::Greater,
        (_, Null) => Ordering::Less,
        (Bool(x), Bool(y)) => x.cmp(y),
        (Int(x), Int(y)) => x.cmp(y),
        (Float(x), Float(y)) => float_cmp(*x, *y),
        (Int(x), Float(y)) => float_cmp(*x as f64, *y),
        (Float(x), Int(y)) => float_cmp(*x, *y as f64),
        (Numeric(x), Numeric(y)) => numeric_cmp(x, y),
        (Numeric(x), Int(y)) => numeric_cmp(x, &y.to_string()),
        (Int(x), Numeric(y)) => numeric_cmp(&x.to_string(), y),
        (Numeric(x), Float(y)) => float_cmp(x.parse::<f64>().unwrap_or(f64::NAN), *y),
        (Float(x), Numeric(y)) => float_cmp(*x, y.parse::<f64>().unwrap_or(f64::NAN)),
        (Text(x), Text(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Bytes(x), Bytes(y)) => x.cmp(y),
        (Uuid(x), Uuid(y)) => x.cmp(y),
        (Timestamp(x), Timestamp(y)) => x.cmp(y),
        (Date(x), Date(y)) => x.cmp(y),
        (Time(x), Time(y)) => x.cmp(y),
        (Interval(x), Interval(y)) => x.span().cmp(&y.span()),
        (Tid(b1, o1), Tid(b2, o2)) => (b1, o1).cmp(&(b2, o2)),
        (Array(x), Array(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                let c = compare(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        // Mixed kinds only meet after a failed type check; order them stably by kind.
        _ => kind_rank(a).cmp(&kind_rank(b)),
    }
}

fn kind_rank(v: &Value) -> u8 {
    match v {
        Value::Null => 255,
        Value::Bool(_) => 1,
        Value::Int(_) | Value::Float(_) | Value::Numeric(_) => 2,
        Value::Text(_) => 3,
        Value::Bytes(_) => 4,
        Value::Uuid(_) => 5,
        Value::Timestamp(_) => 6,
        Value::Date(_) => 7,
        Value::Time(_) => 8,
        Value::Interval(_) => 9,
        Value::Tid(..) => 10,
        Value::Array(_) => 11,
    }
}

/// PostgreSQL float order: NaN is greater than every other value and equal to itself.
pub fn float_cmp(x: f64, y: f64) -> Ordering {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

// ------------------------------------------------------------------ numeric

/// Splits canonical numeric text into (negative, integer digits, fraction digits).
fn numeric_parts(s: &str) -> (bool, &str, &str) {
    let (neg, body) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    match body.split_once('.') {
        Some((i, f)) => (neg, i, f),
        None => (neg, body, ""),
    }
}

/// NaN, Infinity or -Infinity: numeric values without digits, whose arithmetic follows IEEE
/// floating point in PostgreSQL (`inf - inf` is NaN, `x / inf` is 0).
pub fn numeric_is_special(s: &str) -> bool {
    s == "NaN" || s == "Infinity" || s == "-Infinity"
}

/// Compares two canonical numerics exactly: -Infinity, the numbers, Infinity, NaN, as in
/// PostgreSQL.
pub fn numeric_cmp(a: &str, b: &str) -> Ordering {
    let rank = |s: &str| match s {
        "-Infinity" => 0,
        "Infinity" => 2,
        "NaN" => 3,
        _ => 1,
    };
    match rank(a).cmp(&rank(b)) {
        Ordering::Equal if rank(a) != 1 => return Ordering::Equal,
        Ordering::Equal => {}
        other => return other,
    }
    let (na, ia, fa) = numeric_parts(a);
    let (nb, ib, fb) = numeric_parts(b);
    let za = ia.trim_start_matches('0').is_empty() && fa.trim_end_matches('0').is_empty();
    let zb = ib.trim_start_matches('0').is_empty() && fb.trim_end_matches('0').is_empty();
    let na = na && !za;
    let nb = nb && !zb;
    if na != nb {
        return if na {
            Ordering::Less
        } else {
            Ordering::Greater
        };
    }
    let ia = ia.trim_start_matches('0');
    let ib = ib.trim_start_matches('0');
    let mag = ia
        .len()
        .cmp(&ib.len())
        .then_with(|| ia.cmp(ib))
        .then_with(|| {
            let fa = fa.trim_end_matches('0');
            let fb = fb.trim_end_matches('0');
            fa.cmp(fb)
        });
    if na {
        mag.reverse()
    } else {
        mag
    }
}

/// Parses numeric input text into canonical form: optional '-', digits, optional '.digits'
/// (scale preserved as written, as PostgreSQL does), or `NaN`, `Infinity`, `-Infinity` (also
/// written `inf`, with a sign, in any case).
pub fn numeric_canonical(input: &str) -> Option<String> {
    let s = input.trim();
    if s.eq_ignore_ascii_case("nan") {
        return Some("NaN".into());
    }
    let (sign, unsigned) = match s.as_bytes().first() {
        Some(b'-') => ("-", &s[1..]),
        Some(b'+') => ("", &s[1..]),
        _ => ("", s),
    };
    if unsigned.eq_ignore_ascii_case("inf") || unsigned.eq_ignore_ascii_case("infinity") {
        return Some(format!("{sign}Infinity"));
    }
    let (neg, body) = if let Some(r) = s.strip_prefix('-') {
        (true, r)
    } else if let Some(r) = s.strip_prefix('+') {
        (false, r)
    } else {
        (false, s)
    };
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i32>().ok()?),
        None => (body, 0),
    };
    let (ip, fp) = match mantissa.split_once('.') {
        Some((i, f)) => (i, f),
        None => (mantissa, ""),
    };
    if (ip.is_empty() && fp.is_empty())
        || !ip.bytes().all(|c| c.is_ascii_digit())
        || !fp.bytes().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let mut digits: String = format!("{ip}{fp}");
    // PostgreSQL's numeric holds at most 131072 digits before the point and 16383 after; beyond
    // that it refuses the value (22003), and expanding a huge exponent would take gigabytes.
    let mut scale = fp.len() as i64 - i64::from(exp);
    if !(-131_072..=16_383).contains(&scale) {
        return None;
    }
    if scale < 0 {
        digits.push_str(&"0".repeat((-scale) as usize));
        scale = 0;
    }
    let scale = scale as usize;
    while digits.len() <= scale {
        digits.insert(0, '0');
    }
    let split = digits.len() - scale;
    let int_part = digits[..split].trim_start_matches('0');
    let int_part = if int_part.is_empty() { "0" } else { int_part };
    let frac = &digits[split..];
    let zero = int_part == "0" && frac.bytes().all(|c| c == b'0');
    let sign = if neg && !zero { "-" } else { "" };
    Some(if frac.is_empty() {
        format!("{sign}{int_part}")
    } else {
        format!("{sign}{int_part}.{frac}")
    })
}

/// Rounds canonical numeric text to `scale` fraction digits (half away from zero).
pub fn numeric_round(s: &str, scale: usize) -> String {
    if numeric_is_special(s) {
        return s.to_string();
    }
    let (neg, ip, fp) = numeric_parts(s);
    if fp.len() <= scale {
        let mut out = String::new();
        if neg {
            out.push('-');
        }
        out.push_str(ip);
        if scale > 0 {
            out.push('.');
            out.push_str(fp);
            out.push_str(&"0".repeat(scale - fp.len()));
        }
        return out;
    }
    let digits = format!("{ip}{}", &fp[..scale]);
    let text = if fp.as_bytes()[scale] >= b'5' {
        increment_digits(&digits)
    } else {
        digits
    };
    let split = text.len() - scale;
    let body = if scale > 0 {
        format!("{}.{}", &text[..split], &text[split..])
    } else {
        text
    };
    numeric_canonical(&if neg { format!("-{body}") } else { body }).unwrap_or_else(|| "0".into())
}

/// A numeric value stored in or cast to `numeric(p, s)` (`typmod` as pg_attribute has it):
/// rounded to `s` fraction digits, then refused when its integer part has more than `p - s`
/// digits or it is infinite, as PostgreSQL's `apply_typmod`. NaN fits every typmod.
pub fn numeric_typmod(n: &str, typmod: i32) -> Result<String, SqlError> {
    if typmod < 4 || n == "NaN" {
        return Ok(n.to_string());
    }
    let (precision, scale) = numeric_precision_scale(typmod);
    let integer_digits = precision - scale;
    let limit = if integer_digits != 0 {
        format!("10^{integer_digits}")
    } else {
        "1".into()
    };
    if numeric_is_special(n) {
        return Err(SqlError::NumericFieldOverflow {
            detail: format!(
                "A field with precision {precision}, scale {scale} cannot hold an infinite value."
            ),
        });
    }
    let rounded = numeric_round_at(n, i64::from(scale));
    let (_, ip, fp) = numeric_parts(&rounded);
    // Digits before the point, counted from the first that is not zero (negative for a value
    // below 0.1), as PostgreSQL's apply_typmod counts them; zero fits every typmod.
    let significant = ip.trim_start_matches('0').len() as i32;
    let digits = if significant > 0 {
        Some(significant)
    } else {
        fp.find(|c| c != '0').map(|z| -(z as i32))
    };
    if digits.is_some_and(|d| d > integer_digits) {
        return Err(SqlError::NumericFieldOverflow {
            detail: format!(
                "A field with precision {precision}, scale {scale} must round to an absolute value less than {limit}."
            ),
        });
    }
    Ok(rounded)
}

/// Precision and scale of a `numeric(p, s)` typmod (the scale may be negative: PostgreSQL
/// keeps it in 11 bits).
pub fn numeric_precision_scale(typmod: i32) -> (i32, i32) {
    let m = typmod - 4;
    ((m >> 16) & 0xFFFF, ((m & 0x7FF) ^ 1024) - 1024)
}

/// The typmod of `numeric(precision, scale)`, with PostgreSQL's ranges.
pub fn numeric_typmod_of(precision: i64, scale: i64) -> Result<i32, SqlError> {
    if !(1..=1000).contains(&precision) {
        return Err(SqlError::InvalidParameter {
            message: format!("NUMERIC precision {precision} must be between 1 and 1000"),
        });
    }
    if !(-1000..=1000).contains(&scale) {
        return Err(SqlError::InvalidParameter {
            message: format!("NUMERIC scale {scale} must be between -1000 and 1000"),
        });
    }
    Ok((((precision as i32) << 16) | (scale as i32 & 0x7FF)) + 4)
}

/// `round(numeric, scale)`: half away from zero at `scale` fraction digits; a negative scale
/// rounds to tens, hundreds, … (`round(2567, -2)` = 2600).
pub fn numeric_round_at(n: &str, scale: i64) -> String {
    if scale >= 0 {
        // PostgreSQL keeps at most 16,383 fraction digits.
        return numeric_round(n, scale.min(16_383) as usize);
    }
    if numeric_is_special(n) {
        return n.to_string();
    }
    let k = usize::try_from(scale.unsigned_abs()).unwrap_or(usize::MAX);
    let (neg, ip, fp) = numeric_parts(n);
    if k > ip.len() {
        // |n| < 10^(k-1), less than half of 10^k.
        return "0".into();
    }
    // Shift the point k places left, round to an integer, shift back.
    let split = ip.len() - k;
    let shifted = format!(
        "{}{}.{}{fp}",
        if neg { "-" } else { "" },
        if split == 0 { "0" } else { &ip[..split] },
        &ip[split..],
    );
    let rounded = numeric_round(
        &numeric_canonical(&shifted).unwrap_or_else(|| "0".into()),
        0,
    );
    if rounded == "0" {
        rounded
    } else {
        format!("{rounded}{}", "0".repeat(k))
    }
}

/// `trunc(numeric, scale)`: `n` cut (toward zero) to `scale` fraction digits, or to a multiple
/// of `10^-scale` for a negative scale, as PostgreSQL's.
pub fn numeric_trunc_at(n: &str, scale: i64) -> String {
    if numeric_is_special(n) {
        return n.to_string();
    }
    let (neg, ip, fp) = numeric_parts(n);
    let ip = ip.trim_start_matches('0');
    let (int_digits, frac_digits) = if scale >= 0 {
        let keep = usize::try_from(scale.min(16_383)).unwrap_or(0);
        let cut = &fp[..keep.min(fp.len())];
        (
            ip.to_string(),
            format!("{cut}{}", "0".repeat(keep - cut.len())),
        )
    } else {
        let k = usize::try_from(scale.unsigned_abs()).unwrap_or(usize::MAX);
        if k >= ip.len() {
            (String::new(), String::new())
        } else {
            (
                format!("{}{}", &ip[..ip.len() - k], "0".repeat(k)),
                String::new(),
            )
        }
    };
    let zero = int_digits
        .bytes()
        .chain(frac_digits.bytes())
        .all(|d| d == b'0');
    let sign = if neg && !zero { "-" } else { "" };
    let int_digits = if int_digits.is_empty() {
        "0"
    } else {
        &int_digits
    };
    if frac_digits.is_empty() {
        format!("{sign}{int_digits}")
    } else {
        format!("{sign}{int_digits}.{frac_digits}")
    }
}

/// `floor(numeric)`: the largest integer not above `n`.
pub fn numeric_floor(n: &str) -> String {
    if numeric_is_special(n) {
        return n.to_string();
    }
    let (neg, ip, fp) = numeric_parts(n);
    let int = if neg && fp.bytes().any(|c| c != b'0') {
        increment_digits(ip)
    } else {
        ip.to_string()
    };
    numeric_canonical(&format!("{}{int}", if neg { "-" } else { "" })).unwrap_or_else(|| "0".into())
}

/// `ceil(numeric)` = -floor(-n).
pub fn numeric_ceil(n: &str) -> String {
    let negate = |x: &str| match x.strip_prefix('-') {
        Some(b) => b.to_string(),
        None if x == "0" || x == "NaN" => x.to_string(),
        None => format!("-{x}"),
    };
    negate(&numeric_floor(&negate(n)))
}

/// Decimal digits plus one (`"199"` → `"200"`, `"99"` → `"100"`).
fn increment_digits(digits: &str) -> String {
    let mut out = digits.as_bytes().to_vec();
    // The last digit that is not a 9 goes up one, the 9s after it become 0s.
    let zeros_from = match out.iter().rposition(|&d| d != b'9') {
        Some(i) => {
            out[i] += 1;
            i + 1
        }
        None => {
            out.insert(0, b'1');
            1
        }
    };
    for d in &mut out[zeros_from..] {
        *d = b'0';
    }
    String::from_utf8(out).unwrap_or_default()
}

// ------------------------------------------------------------------ dates and times

const USECS_PER_DAY: i64 = 86_400_000_000;
/// Days from 1970-01-01 to 2000-01-01.
const UNIX_TO_PG_DAYS: i64 = 10_957;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Converts Unix microseconds to PostgreSQL's epoch (2000-01-01).
pub fn unix_micros_to_pg(us: i64) -> i64 {
    us - UNIX_TO_PG_DAYS * USECS_PER_DAY
}

fn fmt_date(days_pg: i64) -> String {
    let (y, m, d) = civil_from_days(days_pg + UNIX_TO_PG_DAYS);
    if y <= 0 {
        format!("{:04}-{:02}-{:02} BC", 1 - y, m, d)
    } else {
        format!("{y:04}-{m:02}-{d:02}")
    }
}

fn fmt_time(us: i64) -> String {
    let h = us / 3_600_000_000;
    let mi = (us / 60_000_000) % 60;
    let s = (us / 1_000_000) % 60;
    let frac = us % 1_000_000;
    if frac == 0 {
        format!("{h:02}:{mi:02}:{s:02}")
    } else {
        let f = format!("{frac:06}");
        format!("{h:02}:{mi:02}:{s:02}.{}", f.trim_end_matches('0'))
    }
}

fn fmt_timestamp(us: i64, tz: bool) -> String {
    match us {
        i64::MAX => return "infinity".into(),
        i64::MIN => return "-infinity".into(),
        _ => {}
    }
    // A timestamptz shows the session zone's local time and offset.
    let (us, offset) = if tz {
        let zone = crate::tz::session();
        let offset = zone.offset_at(us);
        (zone.to_local(us), Some(offset))
    } else {
        (us, None)
    };
    let days = us.div_euclid(USECS_PER_DAY);
    let rem = us.rem_euclid(USECS_PER_DAY);
    // A BC date's mark goes after the time and offset (`0001-12-31 19:03:58-04:56:02 BC`).
    let date = fmt_date(days);
    let (date, bc) = match date.strip_suffix(" BC") {
        Some(d) => (d, true),
        None => (date.as_str(), false),
    };
    let mut out = format!("{date} {}", fmt_time(rem));
    if let Some(offset) = offset {
        push_offset(&mut out, offset);
    }
    if bc {
        out.push_str(" BC");
    }
    out
}

/// A UTC offset as PostgreSQL writes it (`EncodeTimezone`): `+05`, `-03:30`, `+00:19:32`.
pub fn push_offset(out: &mut String, east: i32) {
    use std::fmt::Write;
    let abs = east.unsigned_abs();
    let (h, m, s) = (abs / 3600, abs / 60 % 60, abs % 60);
    let sign = if east < 0 { '-' } else { '+' };
    let _ = match (m, s) {
        (0, 0) => write!(out, "{sign}{h:02}"),
        (_, 0) => write!(out, "{sign}{h:02}:{m:02}"),
        _ => write!(out, "{sign}{h:02}:{m:02}:{s:02}"),
    };
}

/// PostgreSQL's `postgres` IntervalStyle: `1 year 2 mons -3 days +04:05:06.5`. Each field
/// carries its own sign; after a negative field a positive one is written with `+`.
fn fmt_interval(iv: &Interval) -> String {
    let mut out = String::new();
    let mut before_negative = false;
    for (value, unit) in [
        (iv.months / 12, "year"),
        (iv.months % 12, "mon"),
        (iv.days, "day"),
    ] {
        if value == 0 {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        let plus = if before_negative && value > 0 {
            "+"
        } else {
            ""
        };
        let s = if value != 1 { "s" } else { "" };
        out.push_str(&format!("{plus}{value} {unit}{s}"));
        before_negative = value < 0;
    }
    if out.is_empty() || iv.micros != 0 {
        if !out.is_empty() {
            out.push(' ');
        }
        let sign = if iv.micros < 0 {
            "-"
        } else if before_negative {
            "+"
        } else {
            ""
        };
        out.push_str(sign);
        out.push_str(&fmt_time(iv.micros.unsigned_abs() as i64));
    }
    out
}

/// Formats a float8 the way PostgreSQL does with extra_float_digits = 1 (shortest exact form,
/// exponent notation outside 1e-4 ..= 1e15).
pub fn fmt_float(x: f64, float4: bool) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let shortest = if float4 {
        format!("{:e}", x as f32)
    } else {
        format!("{x:e}")
    };
    let (mant, exp) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let limit = if float4 { 6 } else { 15 };
    if exp < -4 || exp >= limit {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else if float4 {
        format!("{}", x as f32)
    } else {
        format!("{x}")
    }
}

pub fn fmt_uuid(u: &[u8; 16]) -> String {
    let h: String = u.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Appends the text [`format_text`] gives for `v` to `out`, without a string of its own for
/// the common kinds; false for NULL.
pub fn write_text(v: &Value, ty: PgType, out: &mut Vec<u8>) -> bool {
    match v {
        Value::Null => false,
        Value::Text(s) => {
            out.extend_from_slice(s.as_bytes());
            true
        }
        Value::Numeric(s) => {
            out.extend_from_slice(s.as_bytes());
            true
        }
        Value::Bool(b) => {
            out.push(if *b { b't' } else { b'f' });
            true
        }
        Value::Int(i) => {
            out.extend_from_slice(itoa::Buffer::new().format(*i).as_bytes());
            true
        }
        other => match format_text(other, ty) {
            Some(s) => {
                out.extend_from_slice(s.as_bytes());
                true
            }
            None => false,
        },
    }
}

/// PostgreSQL's text output of a value of type `ty`.
pub fn format_text(v: &Value, ty: PgType) -> Option<String> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => if *b { "t" } else { "f" }.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => fmt_float(*f, ty == PgType::Float4),
        Value::Numeric(s) => s.clone(),
        Value::Text(s) => s.to_string(),
        Value::Bytes(b) if ty == PgType::Inet => crate::inet::format(b),
        Value::Bytes(b) => {
            let mut s = String::with_capacity(2 + b.len() * 2);
            s.push_str("\\x");
            const HEX: &[u8; 16] = b"0123456789abcdef";
            for x in b {
                s.push(HEX[(x >> 4) as usize] as char);
                s.push(HEX[(x & 15) as usize] as char);
            }
            s
        }
        Value::Uuid(u) => fmt_uuid(u),
        Value::Timestamp(t) => fmt_timestamp(*t, ty != PgType::Timestamp),
        Value::Date(i32::MAX) => "infinity".into(),
        Value::Date(i32::MIN) => "-infinity".into(),
        Value::Date(d) => fmt_date(*d as i64),
        Value::Time(t) => fmt_time(*t),
        Value::Interval(iv) => fmt_interval(iv),
        Value::Tid(b, o) => format!("({b},{o})"),
        Value::Array(fields) if matches!(ty, PgType::Record(_)) => record_out(fields, ty),
        Value::Array(items) if ty.is_vector() => items
            .iter()
            .map(|x| format_text(x, ty.element().unwrap_or(PgType::Int2)).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(" "),
        Value::Array(items) => {
            // Each element as its own type writes it (a real's digits, a timestamp without
            // zone); text[] holds text.
            let elem = ty.element().unwrap_or(PgType::Text);
            let mut out = String::from("{");
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                match format_text(x, elem) {
                    Some(t) => push_array_element(&mut out, &t),
                    None => out.push_str("NULL"),
                }
            }
            out.push('}');
            out
        }
    })
}

/// `record_out`: the fields in parentheses, separated by commas, NULL as nothing; a field that
/// is empty or holds a quote, backslash, parenthesis, comma or white space (C's `isspace`,
/// vertical tab and form feed included) is double-quoted,
/// with quotes and backslashes doubled.
fn record_out(fields: &[Value], ty: PgType) -> String {
    let types: Vec<PgType> = match ty {
        PgType::Record(f) => f.iter().map(|(_, t)| *t).collect(),
        _ => Vec::new(),
    };
    record_text(fields, &types)
}

/// [`record_out`] of fields of `types`.
pub fn record_text(fields: &[Value], types: &[PgType]) -> String {
    let mut out = String::from("(");
    for (i, v) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let field_ty = types.get(i).copied().unwrap_or(PgType::Text);
        let Some(text) = format_text(v, field_ty) else {
            continue;
        };
        let quote = text.is_empty()
            || text
                .chars()
                .any(|c| matches!(c, '"' | '\\' | '(' | ')' | ',') || is_array_space(c));
        if quote {
            out.push('"');
            for c in text.chars() {
                if c == '"' || c == '\\' {
                    out.push(c);
                }
                out.push(c);
            }
            out.push('"');
        } else {
            out.push_str(&text);
        }
    }
    out.push(')');
    out
}

/// White space as `array_in` / `array_out` see it (`array_isspace`).
fn is_array_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c')
}

/// Appends an array element as PostgreSQL's `array_out` writes it: in double quotes, with `"` and `\`
/// escaped, when it is empty, reads as NULL, or holds a delimiter, brace, quote, backslash or
/// white space; as it is otherwise.
fn push_array_element(out: &mut String, t: &str) {
    let needs = t.is_empty()
        || t.eq_ignore_ascii_case("NULL")
        || t.chars()
            .any(|c| matches!(c, '"' | '\\' | '{' | '}' | ',') || is_array_space(c));
    if !needs {
        out.push_str(t);
        return;
    }
    out.push('"');
    for c in t.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// The elements of a one-dimensional array literal's body (between its braces), as
/// PostgreSQL's `array_in` reads them: quoted or not, backslash escapes in both, white space
/// around unquoted elements dropped, an unquoted `NULL` (any case) a null element. `None` for
/// a malformed body (nested braces, stray quotes, an empty element).
fn parse_array_elements(body: &str) -> Option<Vec<Option<String>>> {
    let mut items = Vec::new();
    if body.chars().all(is_array_space) {
        return Some(items);
    }
    let mut chars = body.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| is_array_space(*c)) {
            chars.next();
        }
        let mut text = String::new();
        let item = if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next()? {
                    '"' => break,
                    '\\' => text.push(chars.next()?),
                    c => text.push(c),
                }
            }
            while chars.peek().is_some_and(|c| is_array_space(*c)) {
                chars.next();
            }
            Some(text)
        } else {
            // Unescaped trailing white space is not part of the element.
            let (mut kept, mut escaped) = (0, false);
            while let Some(&c) = chars.peek() {
                match c {
                    ',' => break,
                    '{' | '}' | '"' => return None,
                    '\\' => {
                        chars.next();
                        text.push(chars.next()?);
                        kept = text.len();
                        escaped = true;
                        continue;
                    }
                    c => {
                        text.push(c);
                        if !is_array_space(c) {
                            kept = text.len();
                        }
                    }
                }
                chars.next();
            }
            text.truncate(kept);
            if text.is_empty() {
                return None;
            }
            (escaped || !text.eq_ignore_ascii_case("NULL")).then_some(text)
        };
        items.push(item);
        match chars.next() {
            None => return Some(items),
            Some(',') => {}
            Some(_) => return None,
        }
    }
}

// ------------------------------------------------------------------ text input

fn invalid(ty: PgType, s: &str) -> SqlError {
    if ty.is_array() {
        return SqlError::MalformedArray {
            input: s.to_string(),
        };
    }
    // A reg type's text input here is its number (a name is looked up only by a cast); what
    // reads it so is a comparison, which PostgreSQL makes on `oid` (the reg types have no
    // operators of their own).
    let ty = if ty.is_reg() { PgType::Oid } else { ty };
    SqlError::InvalidText {
        type_name: ty.sql_name().to_string(),
        input: s.to_string(),
    }
}

/// `encode(bytes, format)`: PostgreSQL's `hex`, `base64` (lines of 76 characters) and
/// `escape` text forms.
pub fn encode_bytes(b: &[u8], format: &str) -> Result<String, SqlError> {
    use base64::Engine;
    Ok(match format.to_ascii_lowercase().as_str() {
        "hex" => b.iter().map(|x| format!("{x:02x}")).collect(),
        "base64" => {
            let s = base64::engine::general_purpose::STANDARD.encode(b);
            let lines: Vec<&str> = s
                .as_bytes()
                .chunks(76)
                .map(|c| std::str::from_utf8(c).unwrap_or_default())
                .collect();
            lines.join("\n")
        }
        "escape" => {
            let mut out = String::with_capacity(b.len());
            for &x in b {
                match x {
                    b'\\' => out.push_str("\\\\"),
                    0 | 0x80..=0xff => out.push_str(&format!("\\{x:03o}")),
                    _ => out.push(x as char),
                }
            }
            out
        }
        _ => return Err(unrecognized_encoding(format)),
    })
}

/// `decode(text, format)`, the inverse of [`encode_bytes`].
pub fn decode_bytes(s: &str, format: &str) -> Result<Vec<u8>, SqlError> {
    use base64::Engine;
    let bad = |message: String| SqlError::InvalidParameter { message };
    match format.to_ascii_lowercase().as_str() {
        "hex" => {
            let digits: Vec<u8> = s.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
            if let Some(c) = digits.iter().find(|c| !c.is_ascii_hexdigit()) {
                return Err(bad(format!(
                    "invalid hexadecimal digit: \"{}\"",
                    *c as char
                )));
            }
            if !digits.len().is_multiple_of(2) {
                return Err(bad("invalid hexadecimal data: odd number of digits".into()));
            }
            Ok(digits
                .chunks(2)
                .map(|p| {
                    let v = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
                    v(p[0]) * 16 + v(p[1])
                })
                .collect())
        }
        "base64" => {
            let body: String = s.chars().filter(|c| !c.is_ascii_whitespace()).collect();
            if let Some(c) = body
                .chars()
                .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=')))
            {
                return Err(bad(format!(
                    "invalid symbol \"{c}\" found while decoding base64 sequence"
                )));
            }
            base64::engine::general_purpose::STANDARD
                .decode(body)
                .map_err(|_| bad("invalid base64 end sequence".into()))
        }
        "escape" => parse_bytea(s).ok_or_else(|| SqlError::InvalidText {
            type_name: "bytea".into(),
            input: s.to_string(),
        }),
        _ => Err(unrecognized_encoding(format)),
    }
}

fn unrecognized_encoding(format: &str) -> SqlError {
    SqlError::InvalidParameter {
        message: format!("unrecognized encoding: \"{format}\""),
    }
}

/// PostgreSQL's error for date/time text it cannot take: 22008 when the text has a date's
/// shape but a field out of range (`2024-02-30`, month 13, hour 25), else 22007.
fn datetime_invalid(ty: PgType, s: &str) -> SqlError {
    // A month written by name is judged by its numeric form (`Feb 30 2024`: out of range).
    let numeric = month_name_date(s.trim());
    let body = numeric.as_deref().unwrap_or(s.trim());
    let (date, time) = body.split_once([' ', 'T']).unwrap_or((body, ""));
    let nums = |part: &str, sep: char| -> Option<Vec<i64>> {
        part.split(sep)
            .map(|x| x.trim().parse::<i64>().ok())
            .collect()
    };
    let date_fields = matches!(nums(date, '-').as_deref(), Some([_, m, d])
        if !(1..=12).contains(m) || !(1..=31).contains(d));
    let date_range = date_fields
        || matches!(nums(date, '-').as_deref(), Some([_, _, _]) if parse_date_part(date).is_none());
    // (An hour past 12 with AM/PM is out of range too.)
    let (time, time_meridiem) = split_meridiem(time);
    let (date_clock, date_meridiem) = split_meridiem(date);
    let max_hour = |meridiem: Option<bool>| if meridiem.is_some() { 12 } else { 24 };
    let time_clock = time.split(['+', '-', 'Z', ' ']).next().unwrap_or("");
    let time_range = matches!(
        nums(time_clock.split('.').next().unwrap_or(""), ':').as_deref(),
        Some([h, m, ..]) if *h > max_hour(time_meridiem) || *m > 59
    );
    let whole_time = ty == PgType::Time
        && matches!(nums(date_clock.split('.').next().unwrap_or(""), ':').as_deref(),
            Some([h, m, ..]) if *h > max_hour(date_meridiem.or(time_meridiem)) || *m > 59);
    // The time's fields are checked first (no hint then).
    if ty != PgType::Interval && date_fields && !time_range && !whole_time {
        return SqlError::DateFieldOverflow {
            input: s.to_string(),
        };
    }
    if ty != PgType::Interval && (date_range || time_range || whole_time) {
        return SqlError::DatetimeOutOfRange {
            message: format!("date/time field value out of range: \"{s}\""),
        };
    }
    // PostgreSQL's input functions name `timestamp` and `time` without "without time zone".
    let type_name = match ty {
        PgType::Timestamp => "timestamp",
        PgType::Time => "time",
        other => other.sql_name(),
    };
    SqlError::InvalidDatetimeText {
        type_name: type_name.to_string(),
        input: s.to_string(),
    }
}

pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "t" | "true" | "y" | "yes" | "on" | "1" => Some(true),
        "f" | "false" | "n" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

pub fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let t = s.trim();
    let t = t
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .unwrap_or(t);
    let hex: String = t.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

pub fn parse_bytea(s: &str) -> Option<Vec<u8>> {
    if let Some(hex) = s.strip_prefix("\\x") {
        let hex: Vec<u8> = hex.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
        if !hex.len().is_multiple_of(2) {
            return None;
        }
        let mut out = Vec::with_capacity(hex.len() / 2);
        for pair in hex.chunks(2) {
            let p = std::str::from_utf8(pair).ok()?;
            out.push(u8::from_str_radix(p, 16).ok()?);
        }
        return Some(out);
    }
    // Escape format: backslash-octal and doubled backslashes.
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            if b.get(i + 1) == Some(&b'\\') {
                out.push(b'\\');
                i += 2;
            } else {
                let oct = std::str::from_utf8(b.get(i + 1..i + 4)?).ok()?;
                out.push(u8::from_str_radix(oct, 8).ok()?);
                i += 4;
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

fn parse_date_part(s: &str) -> Option<i64> {
    let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (y, m, d): (i64, u32, u32) = if digits && s.len() == 8 {
        // YYYYMMDD, and YYMMDD with PostgreSQL's two-digit years (70–99: 19xx, else 20xx).
        (
            s[..4].parse().ok()?,
            s[4..6].parse().ok()?,
            s[6..].parse().ok()?,
        )
    } else if digits && s.len() == 6 {
        let yy: i64 = s[..2].parse().ok()?;
        let y = if yy >= 70 { 1900 + yy } else { 2000 + yy };
        (y, s[2..4].parse().ok()?, s[4..].parse().ok()?)
    } else {
        // `-`, `/` or `.` between the fields: year first, or month/day/year after a one- or
        // two-digit first field and a four-digit last one (DateStyle's MDY order, the only
        // one RockLake takes).
        let sep = ['-', '/', '.'].into_iter().find(|c| s.contains(*c))?;
        let fields: Vec<&str> = s.trim().splitn(3, sep).collect();
        let [first, second, third] = fields.as_slice() else {
            return None;
        };
        if first.len() <= 2 && third.len() == 4 {
            (
                third.parse().ok()?,
                first.parse().ok()?,
                second.parse().ok()?,
            )
        } else if sep == '-' || first.len() == 4 {
            (
                first.parse().ok()?,
                second.parse().ok()?,
                third.parse().ok()?,
            )
        } else {
            return None;
        }
    };
    if !(1..=12).contains(&m) || d < 1 || d > crate::datetime::days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d) - UNIX_TO_PG_DAYS)
}

fn parse_time_part(s: &str) -> Option<i64> {
    let (s, meridiem) = split_meridiem(s);
    let mut it = s.split(':');
    let h: i64 = it.next()?.trim().parse().ok()?;
    // 12 AM is midnight, 1–11 PM the afternoon; AM/PM past 12 o'clock is no time.
    let h = match meridiem {
        None => h,
        Some(_) if h > 12 => return None,
        Some(pm) => h % 12 + if pm { 12 } else { 0 },
    };
    let m: i64 = it.next().unwrap_or("0").parse().ok()?;
    let sec = it.next().unwrap_or("0");
    let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
    let s: i64 = whole.parse().ok()?;
    let us = fraction_micros(frac)?;
    if h > 24 || m > 59 || s > 60 {
        return None;
    }
    Some(((h * 60 + m) * 60 + s) * 1_000_000 + us)
}

/// A time's text without its trailing `AM` / `PM` (any case, spaced or not), and whether it
/// was `PM` (`None`: neither).
fn split_meridiem(s: &str) -> (&str, Option<bool>) {
    let t = s.trim_end();
    let n = t.len();
    if n >= 2 && t.is_char_boundary(n - 2) {
        let (body, suffix) = t.split_at(n - 2);
        match suffix.to_ascii_lowercase().as_str() {
            "am" => return (body.trim_end(), Some(false)),
            "pm" => return (body.trim_end(), Some(true)),
            _ => {}
        }
    }
    (s, None)
}

/// The digits after a seconds' point in microseconds, rounded to even past the sixth as
/// PostgreSQL's `rint` rounds them (`.9999995` is a whole second).
fn fraction_micros(frac: &str) -> Option<i64> {
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digit = |i: usize| i64::from(frac.as_bytes().get(i).map_or(0, |b| b - b'0'));
    let micros = (0..6).fold(0, |acc, i| acc * 10 + digit(i));
    let rest = frac.get(6..).unwrap_or("");
    let up = match rest.as_bytes().first() {
        Some(b'6'..=b'9') => true,
        Some(b'5') if rest[1..].bytes().any(|b| b != b'0') => true,
        Some(b'5') => micros % 2 == 1,
        _ => false,
    };
    Some(micros + i64::from(up))
}

/// The zone a timestamp's text names after its time.
enum GivenZone {
    /// None: the session's zone.
    Session,
    /// Seconds east of UTC.
    Offset(i64),
    Zone(crate::tz::Zone),
}

/// Splits a trailing zone off a timestamp: an offset (`+00`, `-05:30`, `+0530`), `Z`, an
/// abbreviation of PostgreSQL's `Default` set (` PST`, ` CEST`) or a zone name
/// (` Europe/Berlin`). `Err` names a zone (a word with `/`) that does not exist.
fn split_zone(s: &str) -> Result<Option<(&str, GivenZone)>, SqlError> {
    let t = s.trim_end();
    if let Some((head, word)) = t.rsplit_once(' ') {
        let named = word.starts_with(|c: char| c.is_ascii_alphabetic())
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "/_-+".contains(c));
        if named {
            let zone = match crate::tzabbrev::lookup(word) {
                Some(crate::tzabbrev::Abbrev::Fixed(east)) => GivenZone::Offset(east.into()),
                Some(crate::tzabbrev::Abbrev::Zone(z)) => match crate::tz::by_name(z) {
                    Ok(zone) => GivenZone::Zone(zone),
                    Err(_) => return Ok(None),
                },
                None => match crate::tz::by_name(word) {
                    Ok(zone) => GivenZone::Zone(zone),
                    // PostgreSQL reads the words of date/time input in lower case.
                    Err(_) if word.contains('/') => {
                        return Err(SqlError::InvalidParameter {
                            message: format!(
                                "time zone \"{}\" not recognized",
                                word.to_ascii_lowercase()
                            ),
                        })
                    }
                    Err(_) => return Ok(None),
                },
            };
            return Ok(Some((head, zone)));
        }
    }
    if let Some(rest) = t.strip_suffix(['Z', 'z']) {
        return Ok(Some((rest, GivenZone::Offset(0))));
    }
    // An offset after the time part.
    if let Some(pos) = t.rfind(['+', '-']) {
        let (head, off) = t.split_at(pos);
        if head.contains(':') || head.contains(' ') || head.contains('T') {
            return match crate::tz::iso_offset(off.trim_end()) {
                Some(Ok(east)) => Ok(Some((head, GivenZone::Offset(east.into())))),
                Some(Err(_)) => Err(SqlError::TimeZoneDisplacement {
                    input: s.to_string(),
                }),
                None => Ok(None),
            };
        }
    }
    Ok(None)
}

/// A timestamp's text: microseconds since 2000-01-01, UTC for `with_tz` (a time without a zone
/// is in the session's zone), local otherwise (a zone given is ignored, as PostgreSQL does).
pub fn parse_timestamp(s: &str, with_tz: bool) -> Option<i64> {
    timestamp_in(s, with_tz).ok().flatten()
}

/// [`parse_timestamp`] with the error for a zone name that does not exist.
fn timestamp_in(s: &str, with_tz: bool) -> Result<Option<i64>, SqlError> {
    let t = s.trim();
    match t.to_ascii_lowercase().as_str() {
        "infinity" => return Ok(Some(i64::MAX)),
        "-infinity" => return Ok(Some(i64::MIN)),
        // 1970-01-01 00:00:00 (UTC for a timestamptz).
        "epoch" => return Ok(Some(-UNIX_TO_PG_DAYS * USECS_PER_DAY)),
        word => {
            if let Some(local) = special_local_time(word) {
                let zone = crate::tz::session();
                return Ok(Some(match local {
                    // `now` is the transaction's instant.
                    Special::Now(utc) if with_tz => utc,
                    Special::Now(utc) => zone.to_local(utc),
                    Special::Midnight(local) if with_tz => zone.to_utc(local),
                    Special::Midnight(local) => local,
                }));
            }
        }
    }
    if let Some(iso) = month_name_date(t) {
        return timestamp_in(&iso, with_tz);
    }
    let (body, zone) = split_zone(t)?.unwrap_or((t, GivenZone::Session));
    Ok(local_timestamp(body).map(|local| match zone {
        _ if !with_tz => local,
        GivenZone::Session => crate::tz::session().to_utc(local),
        GivenZone::Offset(east) => local - east * 1_000_000,
        GivenZone::Zone(z) => z.to_utc(local),
    }))
}

/// What `now`, `today`, `tomorrow` and `yesterday` mean in date/time input.
enum Special {
    /// The transaction's start (UTC).
    Now(i64),
    /// Local midnight of a day in the session's zone.
    Midnight(i64),
}

/// [`Special`] for `word` (lower case), when a statement is running.
fn special_local_time(word: &str) -> Option<Special> {
    let shift = match word {
        "now" => return crate::tz::statement_now().map(Special::Now),
        "today" => 0,
        "tomorrow" => 1,
        "yesterday" => -1,
        _ => return None,
    };
    let now = crate::tz::statement_now()?;
    let today = crate::tz::session().to_local(now).div_euclid(USECS_PER_DAY);
    Some(Special::Midnight((today + shift) * USECS_PER_DAY))
}

/// A date written with its month's name — `January 8, 1999`, `8 Jan 1999`, `1999-Jan-08`,
/// `Sat Jan 08 1999 04:05:06 PST` — rewritten with the date in ISO order (`1999-01-08`)
/// and the rest (time, zone) after it as written; `None` for text without a month name or
/// not one day and one year besides it. A field of more than two digits (or past 31) is the
/// year, else the day comes first; a two-digit year is PostgreSQL's (70–99: 19xx, else 20xx).
fn month_name_date(s: &str) -> Option<String> {
    const MONTHS: [(&str, u32); 24] = [
        ("jan", 1),
        ("january", 1),
        ("feb", 2),
        ("february", 2),
        ("mar", 3),
        ("march", 3),
        ("apr", 4),
        ("april", 4),
        ("may", 5),
        ("jun", 6),
        ("june", 6),
        ("jul", 7),
        ("july", 7),
        ("aug", 8),
        ("august", 8),
        ("sep", 9),
        ("sept", 9),
        ("september", 9),
        ("oct", 10),
        ("october", 10),
        ("nov", 11),
        ("november", 11),
        ("dec", 12),
        ("december", 12),
    ];
    const WEEKDAYS: [&str; 14] = [
        "sun",
        "sunday",
        "mon",
        "monday",
        "tue",
        "tuesday",
        "wed",
        "wednesday",
        "thu",
        "thursday",
        "fri",
        "friday",
        "sat",
        "saturday",
    ];
    if !s.bytes().any(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    // (field, whether it stands alone: a part of `1999-Jan-08` must be a date field).
    let mut fields: Vec<(&str, bool)> = Vec::new();
    for tok in s
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
    {
        let separated = tok.contains(['-', '/', '.']) && !tok.contains(':');
        if separated && tok.bytes().any(|b| b.is_ascii_alphabetic()) {
            fields.extend(tok.split(['-', '/', '.']).map(|p| (p, false)));
        } else {
            fields.push((tok, true));
        }
    }
    let mut month = None;
    let mut numbers: Vec<&str> = Vec::new();
    let mut rest: Vec<&str> = Vec::new();
    for (part, whole) in fields {
        let lower = part.to_ascii_lowercase();
        if let Some((_, m)) = MONTHS.iter().find(|(n, _)| *n == lower) {
            if month.replace(*m).is_some() {
                return None;
            }
        } else if WEEKDAYS.contains(&lower.as_str()) {
            // A weekday name is read and ignored, as PostgreSQL does.
        } else if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            numbers.push(part);
        } else if whole {
            rest.push(part);
        } else {
            return None;
        }
    }
    let (m, [a, b]) = (month?, numbers.as_slice()) else {
        return None;
    };
    let year_first = a.len() > 2 || a.parse::<u32>().ok()? > 31;
    let (day, year) = if year_first { (b, a) } else { (a, b) };
    let mut y: i64 = year.parse().ok()?;
    if year.len() <= 2 {
        y += if y >= 70 { 1900 } else { 2000 };
    }
    let d: u32 = day.parse().ok()?;
    let mut out = format!("{y:04}-{m:02}-{d:02}");
    for r in rest {
        out.push(' ');
        out.push_str(r);
    }
    Some(out)
}

/// A timestamp's text without its zone: local microseconds since 2000-01-01.
fn local_timestamp(body: &str) -> Option<i64> {
    let (date, time) = match body.split_once([' ', 'T']) {
        Some((d, tm)) => (d, tm.trim()),
        None => (body, "00:00:00"),
    };
    let days = parse_date_part(date)?;
    let us = parse_time_part(time)?;
    Some(days * USECS_PER_DAY + us)
}

/// Parses PostgreSQL interval input: `1 year 2 mons 3 days 04:05:06.5`, `00:00:01`, `3 days`,
/// `-1 day`, unit words in singular or plural, and ISO-ish `@` prefixed forms.
pub fn parse_interval(s: &str) -> Option<Interval> {
    let mut iv = Interval::default();
    let text = s.trim().trim_start_matches('@').trim();
    if let Some(iso) = text.strip_prefix('P') {
        return parse_iso_interval(iso);
    }
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut i = 0;
    let mut seen = false;
    while i < tokens.len() {
        let tok = tokens[i];
        if tok.contains(':') {
            let (neg, body) = match tok.strip_prefix('-') {
                Some(b) => (true, b),
                None => (false, tok.trim_start_matches('+')),
            };
            let us = parse_time_part_unbounded(body)?;
            iv.micros += if neg { -us } else { us };
            i += 1;
            seen = true;
            continue;
        }
        let n: f64 = tok.parse().ok()?;
        let unit = tokens
            .get(i + 1)
            .map(|u| u.to_ascii_lowercase())
            .unwrap_or_else(|| "second".into());
        let unit = unit.trim_end_matches(',');
        // Fractions cascade down as PostgreSQL's: a month is 30 days, a day 24 hours.
        let base = match unit {
            "ms" | "us" => unit,
            _ => unit.trim_end_matches('s'),
        };
        add_interval_unit(&mut iv, n, base)?;
        i += 2;
        seen = true;
    }
    if seen {
        Some(iv)
    } else {
        None
    }
}

/// ISO 8601 interval input after its `P`, as PostgreSQL reads it: designators
/// (`1Y2M3DT4H5M6S`, `1W`, fractions and signs on any number) or the alternative format
/// (`0001-02-03T04:05:06`).
fn parse_iso_interval(s: &str) -> Option<Interval> {
    let mut iv = Interval::default();
    let (date, time) = match s.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    // The alternative format: `Y-M-D` (no designators) before the T, `h:m:s` after it.
    let undesignated = !date.is_empty() && !date.contains(|c: char| c.is_ascii_alphabetic());
    if undesignated || time.is_some_and(|t| t.contains(':')) {
        // Signed numbers separated by `-` (`-1-2` is -1 years 2 months).
        let mut rest = date;
        for unit in ["year", "mon", "day"] {
            if rest.is_empty() {
                break;
            }
            let sign = usize::from(rest.starts_with(['-', '+']));
            let end = rest[sign..].find('-').map_or(rest.len(), |e| e + sign);
            add_interval_unit(&mut iv, rest[..end].parse().ok()?, unit)?;
            rest = match rest[end..].strip_prefix('-') {
                Some(r) if !r.is_empty() => r,
                Some(_) => return None,
                None => "",
            };
        }
        if !rest.is_empty() {
            return None;
        }
        if let Some(t) = time {
            iv.micros = iv.micros.checked_add(parse_time_part_unbounded(t)?)?;
        }
        return Some(iv);
    }
    let mut seen = false;
    for (part, units) in [(date, "YMWD"), (time.unwrap_or(""), "HMS")] {
        let mut rest = part;
        while !rest.is_empty() {
            let end = rest.find(|c: char| c.is_ascii_alphabetic())?;
            let n: f64 = rest[..end].parse().ok()?;
            let designator = rest[end..].chars().next()?;
            if !units.contains(designator) {
                return None;
            }
            let unit = match (units, designator) {
                ("YMWD", 'Y') => "year",
                ("YMWD", 'M') => "mon",
                ("YMWD", 'W') => "week",
                ("YMWD", 'D') => "day",
                (_, 'H') => "hour",
                (_, 'M') => "minute",
                _ => "second",
            };
            add_interval_unit(&mut iv, n, unit)?;
            rest = &rest[end + 1..];
            seen = true;
        }
    }
    // `P` alone is no interval; `PT` is zero.
    (seen || time.is_some()).then_some(iv)
}

/// Adds `n` of the unit `base` (singular, as [`parse_interval`] reads it) to `iv`, fractions
/// cascading down as PostgreSQL's: a month is 30 days, a day 24 hours.
fn add_interval_unit(iv: &mut Interval, n: f64, base: &str) -> Option<()> {
    {
        let (months, days, secs) = match base {
            "year" | "yr" | "y" => (n * 12.0, 0.0, 0.0),
            "decade" => (n * 120.0, 0.0, 0.0),
            "century" | "centurie" => (n * 1_200.0, 0.0, 0.0),
            "millennium" | "millennia" => (n * 12_000.0, 0.0, 0.0),
            "mon" | "month" => (n, 0.0, 0.0),
            "week" | "w" => (0.0, n * 7.0, 0.0),
            "day" | "d" => (0.0, n, 0.0),
            "hour" | "h" | "hr" => (0.0, 0.0, n * 3_600.0),
            "minute" | "min" | "m" => (0.0, 0.0, n * 60.0),
            "second" | "sec" | "" => (0.0, 0.0, n),
            "millisecond" | "ms" | "msec" => (0.0, 0.0, n / 1_000.0),
            "microsecond" | "us" | "usec" => (0.0, 0.0, n / 1_000_000.0),
            _ => return None,
        };
        // Fractions of a year or more are rounded to whole months (PostgreSQL 15); a month's
        // fraction goes on into days.
        let yearly = matches!(
            base,
            "year" | "yr" | "y" | "decade" | "century" | "centurie" | "millennium" | "millennia"
        );
        let months = if yearly {
            months.round_ties_even()
        } else {
            months
        };
        if months.abs() > f64::from(i32::MAX) || days.abs() > f64::from(i32::MAX) {
            return None;
        }
        let whole_months = months.trunc();
        let days = days + (months - whole_months) * 30.0;
        let whole_days = days.trunc();
        let secs = secs + (days - whole_days) * 86_400.0;
        iv.months = iv.months.checked_add(whole_months as i32)?;
        iv.days = iv.days.checked_add(whole_days as i32)?;
        iv.micros = iv.micros.checked_add((secs * 1_000_000.0).round() as i64)?;
    }
    Some(())
}

fn parse_time_part_unbounded(s: &str) -> Option<i64> {
    let mut it = s.split(':');
    let h: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next().unwrap_or("0").parse().ok()?;
    let sec = it.next().unwrap_or("0");
    let secs: f64 = sec.parse().ok()?;
    Some((h * 3600 + m * 60) * 1_000_000 + (secs * 1_000_000.0).round() as i64)
}

/// PostgreSQL's refusal to read an anonymous `record` (`record_in`, `record_recv`).
pub fn anonymous_record_input() -> SqlError {
    SqlError::UnsupportedByPostgres {
        message: "input of anonymous composite types is not implemented".into(),
    }
}

/// Converts text input to a value of type `ty` (PostgreSQL's input functions).
pub fn parse_text(s: &str, ty: PgType) -> Result<Value, SqlError> {
    let err = || invalid(ty, s);
    Ok(match ty {
        PgType::Record(_) => return Err(anonymous_record_input()),
        PgType::Bool => Value::Bool(parse_bool(s).ok_or_else(err)?),
        PgType::Int2
        | PgType::Int4
        | PgType::Int8
        | PgType::Oid
        | PgType::Regclass
        | PgType::Regtype
        | PgType::Regnamespace
        | PgType::Regproc => {
            let v: i64 = s.trim().parse().map_err(|_| err())?;
            let (lo, hi) = match ty {
                PgType::Int2 => (i16::MIN as i64, i16::MAX as i64),
                PgType::Int4 => (i32::MIN as i64, i32::MAX as i64),
                PgType::Oid
                | PgType::Regclass
                | PgType::Regtype
                | PgType::Regnamespace
                | PgType::Regproc => (0, u32::MAX as i64),
                _ => (i64::MIN, i64::MAX),
            };
            if v < lo || v > hi {
                return Err(SqlError::OutOfRange {
                    type_name: ty.sql_name().to_string(),
                    input: s.to_string(),
                });
            }
            Value::Int(v)
        }
        PgType::Float4 | PgType::Float8 => {
            let t = s.trim();
            let v = match t.to_ascii_lowercase().as_str() {
                "nan" => f64::NAN,
                "infinity" | "inf" | "+infinity" | "+inf" => f64::INFINITY,
                "-infinity" | "-inf" => f64::NEG_INFINITY,
                _ => {
                    let v = t.parse::<f64>().map_err(|_| err())?;
                    // A number past the type's range, or too small for it but not zero, is
                    // an error in PostgreSQL, not an infinity or a zero.
                    let narrowed = if ty == PgType::Float4 {
                        v as f32 as f64
                    } else {
                        v
                    };
                    let mantissa = t.split(['e', 'E']).next().unwrap_or(t);
                    let nonzero = mantissa.chars().any(|c| ('1'..='9').contains(&c));
                    if narrowed.is_infinite() || (narrowed == 0.0 && nonzero) {
                        return Err(SqlError::MathDomain {
                            code: "22003",
                            message: format!("\"{s}\" is out of range for type {}", ty.sql_name()),
                        });
                    }
                    narrowed
                }
            };
            Value::Float(v)
        }
        PgType::Numeric => Value::Numeric(numeric_canonical(s).ok_or_else(err)?),
        PgType::Text | PgType::Varchar | PgType::Bpchar | PgType::Name | PgType::Unknown => {
            Value::text(s)
        }
        PgType::Char => Value::text(s.chars().take(1).collect::<String>()),
        // void_in takes any text and gives nothing.
        PgType::Void => Value::text(""),
        PgType::Bytea => Value::Bytes(parse_bytea(s).ok_or_else(|| {
            if s.starts_with("\\x") {
                SqlError::InvalidParameter {
                    message: "invalid hexadecimal digit".into(),
                }
            } else {
                err()
            }
        })?),
        PgType::Uuid => Value::Uuid(parse_uuid(s).ok_or_else(err)?),
        PgType::Timestamptz => {
            Value::Timestamp(timestamp_in(s, true)?.ok_or_else(|| datetime_invalid(ty, s))?)
        }
        PgType::Timestamp => {
            Value::Timestamp(timestamp_in(s, false)?.ok_or_else(|| datetime_invalid(ty, s))?)
        }
        PgType::Date => match s.trim().to_ascii_lowercase().as_str() {
            "infinity" => Value::Date(i32::MAX),
            "-infinity" => Value::Date(i32::MIN),
            "epoch" => Value::Date(-UNIX_TO_PG_DAYS as i32),
            _ => match parse_date_part(s.trim()) {
                Some(d) => Value::Date(d as i32),
                // A date with a time (and zone) after it, or `today`: the local date.
                None => match timestamp_in(s, false)? {
                    Some(t) => Value::Date(t.div_euclid(USECS_PER_DAY) as i32),
                    None => return Err(datetime_invalid(ty, s)),
                },
            },
        },
        PgType::Time => match s.trim().to_ascii_lowercase().as_str() {
            "allballs" => Value::Time(0),
            "now" => match special_local_time("now") {
                Some(Special::Now(utc)) => {
                    Value::Time(crate::tz::session().to_local(utc).rem_euclid(USECS_PER_DAY))
                }
                _ => return Err(datetime_invalid(ty, s)),
            },
            _ => Value::Time(parse_time_part(s.trim()).ok_or_else(|| datetime_invalid(ty, s))?),
        },
        PgType::Interval => {
            Value::Interval(parse_interval(s).ok_or_else(|| datetime_invalid(ty, s))?)
        }
        PgType::Tid => {
            let (b, o) = parse_tid(s).ok_or_else(err)?;
            Value::Tid(b, o)
        }
        PgType::Xid => Value::Int(xid_in(s).into()),
        PgType::Inet => Value::Bytes(crate::inet::parse(s).ok_or_else(err)?),
        PgType::Json => {
            crate::json::validate(s)?;
            Value::text(s)
        }
        array_types!() if ty.is_vector() => Value::Array(
            s.split_ascii_whitespace()
                .map(|x| parse_text(x, ty.element().unwrap_or(PgType::Int2)))
                .collect::<Result<Vec<_>, _>>()?
                .into(),
        ),
        array_types!() => {
            let inner = s
                .trim()
                .strip_prefix('{')
                .and_then(|x| x.strip_suffix('}'))
                .ok_or_else(err)?;
            let elem = ty.element().unwrap_or(PgType::Text);
            let mut items = Vec::new();
            for part in parse_array_elements(inner).ok_or_else(err)? {
                items.push(match part {
                    None => Value::Null,
                    Some(t) => parse_text(&t, elem)?,
                });
            }
            Value::Array(items.into())
        }
    })
}

/// Every type RockLake knows, for lookups by OID.
pub const ALL_TYPES: [PgType; 49] = [
    PgType::Bool,
    PgType::Int2,
    PgType::Int4,
    PgType::Int8,
    PgType::Float4,
    PgType::Float8,
    PgType::Numeric,
    PgType::Text,
    PgType::Varchar,
    PgType::Bpchar,
    PgType::Name,
    PgType::Char,
    PgType::Bytea,
    PgType::Uuid,
    PgType::Timestamptz,
    PgType::Timestamp,
    PgType::Date,
    PgType::Time,
    PgType::Interval,
    PgType::Oid,
    PgType::Regclass,
    PgType::Regtype,
    PgType::Regnamespace,
    PgType::Regproc,
    PgType::Tid,
    PgType::Xid,
    PgType::Inet,
    PgType::Json,
    PgType::Int2Array,
    PgType::Int2Vector,
    PgType::OidVector,
    PgType::TextArray,
    PgType::BoolArray,
    PgType::Int4Array,
    PgType::Int8Array,
    PgType::Float4Array,
    PgType::Float8Array,
    PgType::NumericArray,
    PgType::VarcharArray,
    PgType::NameArray,
    PgType::OidArray,
    PgType::BpcharArray,
    PgType::ByteaArray,
    PgType::DateArray,
    PgType::TimeArray,
    PgType::TimestampArray,
    PgType::TimestamptzArray,
    PgType::IntervalArray,
    PgType::UuidArray,
];

/// PostgreSQL 15's `xidin`: C's `strtoul(s, NULL, 0)` truncated to 32 bits — leading white
/// space, a sign (a minus negates, wrapping), `0x` for hexadecimal and `0` for octal, digits up
/// to the first that is not one; nothing readable is 0. It never fails.
fn xid_in(s: &str) -> u32 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) = if let Some(h) = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .filter(|h| h.starts_with(|c: char| c.is_ascii_hexdigit()))
    {
        (16, h)
    } else if t.starts_with('0') {
        (8, t)
    } else {
        (10, t)
    };
    let mut n: u64 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else { break };
        // strtoul saturates at ULONG_MAX on overflow, whose low 32 bits are all ones.
        n = n
            .checked_mul(radix.into())
            .and_then(|n| n.checked_add(d.into()))
            .unwrap_or(u64::MAX);
    }
    let n = if negative { n.wrapping_neg() } else { n };
    n as u32
}

pub fn type_by_oid(oid: u32) -> Option<PgType> {
    ALL_TYPES.iter().copied().find(|t| t.oid() == oid)
}

/// [`type_by_oid`], or one of the pseudo-types RockLake has (`unknown`, `void`): what names
/// an OID for `regtype` output and `format_type`, not what a column or parameter may be.
pub fn any_type_by_oid(oid: u32) -> Option<PgType> {
    type_by_oid(oid).or_else(|| {
        [PgType::Unknown, PgType::Void, PgType::Record(&[])]
            .into_iter()
            .find(|t| t.oid() == oid)
    })
}

/// PostgreSQL's `tidin`: the block number follows the first `(` (or `,`), the offset the next
/// `,`; each is read as C's `strtoul`/`strtol` read it (leading space, a sign, digits, or none
/// at all for 0) and must be followed by `,` and `)` respectively. What comes before the `(`
/// and after the `)` is ignored, as there: DuckDB's UPDATE sends ctids as `'(0,1)'`, quotes
/// included.
fn parse_tid(s: &str) -> Option<(u32, u16)> {
    let b = s.as_bytes();
    let mut coords = [0usize; 2];
    let mut n = 0;
    for (i, &c) in b.iter().enumerate() {
        if n == 2 {
            break;
        }
        if c == b',' || (c == b'(' && n == 0) {
            coords[n] = i + 1;
            n += 1;
        }
    }
    if n < 2 {
        return None;
    }
    let (block, rest) = c_integer(&s[coords[0]..])?;
    if !rest.starts_with(',') {
        return None;
    }
    // strtoul wraps a negative number; PostgreSQL accepts what still fits a block number
    // read as signed or unsigned 32 bits.
    let block = u32::try_from(block)
        .ok()
        .or_else(|| i32::try_from(block).ok().map(|v| v as u32))?;
    let (offset, rest) = c_integer(&s[coords[1]..])?;
    if !rest.starts_with(')') {
        return None;
    }
    Some((block, u16::try_from(offset).ok()?))
}

/// C's `strtol` on `s`: the value and the text after it (all of `s` when no digits follow the
/// optional space and sign: the value is then 0). `None` when the number overflows.
fn c_integer(s: &str) -> Option<(i64, &str)> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = digits.bytes().take_while(u8::is_ascii_digit).count();
    if end == 0 {
        return Some((0, s));
    }
    let v: i64 = digits[..end].parse().ok()?;
    Some((if negative { -v } else { v }, &digits[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tids_read_as_postgresql_reads_them() {
        let read = |s: &str| parse_tid(s);
        assert_eq!(read("(0,1)"), Some((0, 1)));
        // DuckDB's UPDATE sends its ctids quoted; PostgreSQL skips to the bracket.
        assert_eq!(read("'(12,3)'"), Some((12, 3)));
        assert_eq!(read("(,1)"), Some((0, 1)));
        assert_eq!(read("( 5,+6)"), Some((5, 6)));
        assert_eq!(read("(-1,0)"), Some((u32::MAX, 0)));
        assert_eq!(read("(4294967295,65535)"), Some((u32::MAX, 65535)));
        for bad in [
            "(4294967296,1)",
            "(1,65536)",
            "(1,-1)",
            "(1 ,2)",
            "(1,2",
            "1,2)",
            "",
            "(1)",
        ] {
            assert_eq!(read(bad), None, "{bad:?}");
        }
    }
    use proptest::prelude::*;

    #[test]
    fn released_values_still_give_back_what_they_share() {
        let text: Arc<str> = Arc::from("relname");
        let array: Arc<[Value]> = Arc::from(vec![Value::text("a")]);
        let row = || {
            vec![
                Value::Int(7),
                Value::Text(text.clone()),
                Value::Null,
                Value::Array(array.clone()),
                Value::Bool(true),
            ]
        };
        release_row(row());
        assert_eq!(
            (Arc::strong_count(&text), Arc::strong_count(&array)),
            (1, 1)
        );
        let mut r = row();
        truncate_row(&mut r, 2);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (Arc::strong_count(&text), Arc::strong_count(&array)),
            (2, 1)
        );
        truncate_row(&mut r, 0);
        assert_eq!(
            (Arc::strong_count(&text), Arc::strong_count(&array)),
            (1, 1)
        );
    }

    /// PostgreSQL 15.18's answers for casts to `numeric(p, s)` and for infinite numerics.
    #[test]
    fn numeric_typmods_and_infinities_as_postgresql() {
        let m = |p: i32, s: i32| ((p << 16) | s) + 4;
        assert_eq!(numeric_typmod("1.234", m(10, 2)).as_deref(), Ok("1.23"));
        assert_eq!(numeric_typmod("-2.5", m(3, 0)).as_deref(), Ok("-3"));
        assert_eq!(numeric_typmod("NaN", m(3, 1)).as_deref(), Ok("NaN"));
        assert_eq!(numeric_typmod("99.94", m(3, 1)).as_deref(), Ok("99.9"));
        let detail = |r: Result<String, SqlError>| match r {
            Err(SqlError::NumericFieldOverflow { detail }) => detail,
            other => format!("{other:?}"),
        };
        assert_eq!(
            detail(numeric_typmod("999.95", m(4, 1))),
            "A field with precision 4, scale 1 must round to an absolute value less than 10^3."
        );
        assert_eq!(
            detail(numeric_typmod("0.995", m(2, 2))),
            "A field with precision 2, scale 2 must round to an absolute value less than 1."
        );
        assert_eq!(
            detail(numeric_typmod("-Infinity", m(10, 2))),
            "A field with precision 10, scale 2 cannot hold an infinite value."
        );
        for (text, canon) in [
            ("inf", "Infinity"),
            ("+Infinity", "Infinity"),
            (" -INF ", "-Infinity"),
        ] {
            assert_eq!(numeric_canonical(text).as_deref(), Some(canon));
        }
        let mut order = vec!["NaN", "1000", "Infinity", "-5.5", "-Infinity", "0"];
        order.sort_by(|a, b| numeric_cmp(a, b));
        assert_eq!(order, ["-Infinity", "-5.5", "0", "1000", "Infinity", "NaN"]);
    }

    /// What PostgreSQL 15.18 answered for `'…'::xid` (its xidin is C's strtoul, truncated).
    #[test]
    fn xid_input_reads_as_postgresql_does() {
        for (text, want) in [
            ("12", 12),
            (" 12 ", 12),
            ("-1", 4_294_967_295),
            ("abc", 0),
            ("", 0),
            ("4294967296", 0),
            ("4294967297", 1),
            ("99999999999999999999999", 4_294_967_295),
            ("0x1f", 31),
            ("0X1F", 31),
            ("0xg", 0),
            ("017", 15),
            ("019", 1),
            ("+7", 7),
            ("7abc", 7),
        ] {
            assert_eq!(
                parse_text(text, PgType::Xid),
                Ok(Value::Int(want)),
                "{text:?}"
            );
        }
        assert_eq!(
            format_text(&Value::Int(4_294_967_295), PgType::Xid).as_deref(),
            Some("4294967295")
        );
    }

    #[test]
    fn arrays_read_and_write_as_postgresql_does() {
        // PostgreSQL 15's output for these elements, byte for byte.
        let items = ["a\\b", "c\"d", "e f", "", "NULL", "{x}", "a,b", "plain"];
        let mut v: Vec<Value> = items.iter().map(|t| Value::text(*t)).collect();
        v.insert(3, Value::Null);
        let text = format_text(&Value::Array(v.clone().into()), PgType::TextArray);
        assert_eq!(
            text.as_deref(),
            Some(r#"{"a\\b","c\"d","e f",NULL,"","NULL","{x}","a,b",plain}"#)
        );
        let back = parse_text(text.as_deref().unwrap_or_default(), PgType::TextArray);
        assert_eq!(back.ok(), Some(Value::Array(v.into())));
        // array_in: white space around unquoted elements, escapes outside quotes, NULL in
        // any case unquoted only.
        let read = |s: &str| parse_text(s, PgType::TextArray).ok();
        let arr = |xs: &[Option<&str>]| {
            Value::Array(
                xs.iter()
                    .map(|x| x.map_or(Value::Null, Value::text))
                    .collect::<Vec<_>>()
                    .into(),
            )
        };
        assert_eq!(
            read("{ a , b c ,null}"),
            Some(arr(&[Some("a"), Some("b c"), None]))
        );
        assert_eq!(
            read("{a\\,b,\"NULL\",\\NULL}"),
            Some(arr(&[Some("a,b"), Some("NULL"), Some("NULL")]))
        );
        assert_eq!(read("{}"), Some(arr(&[])));
        assert_eq!(read("{ }"), Some(arr(&[])));
        assert_eq!(read("{\"\"}"), Some(arr(&[Some("")])));
        for bad in [
            "{a,,b}", "{{a}}", "{a\"b}", "{\"a\"b}", "{a,}", "{\"a}", "a,b",
        ] {
            assert_eq!(read(bad), None, "{bad:?}");
        }
        let ints = parse_text("{1, 2 ,NULL}", PgType::Int2Array).ok();
        assert_eq!(
            ints,
            Some(Value::Array(
                vec![Value::Int(1), Value::Int(2), Value::Null].into()
            ))
        );
    }

    proptest! {
        #[test]
        fn written_text_is_format_text(
            i in prop_oneof![any::<i64>(), Just(i64::MIN), Just(i64::MAX), Just(0)],
            b in any::<bool>(),
            s in ".{0,8}",
            f in any::<f64>(),
        ) {
            for v in [Value::Int(i), Value::Bool(b), Value::text(s.clone()), Value::Numeric(s.clone()),
                      Value::Float(f), Value::Null, Value::Tid(i as u32, 7)] {
                for ty in [PgType::Int8, PgType::Int4, PgType::Text, PgType::Float4, PgType::Float8] {
                    let mut out = b"x".to_vec();
                    let written = write_text(&v, ty, &mut out).then(|| out[1..].to_vec());
                    prop_assert_eq!(written, format_text(&v, ty).map(String::into_bytes));
                }
            }
        }
    }

    #[test]
    fn numeric_rounding_carries_and_keeps_signs() {
        assert_eq!(increment_digits("199"), "200");
        assert_eq!(increment_digits("99"), "100");
        assert_eq!(increment_digits("0"), "1");
        assert_eq!(numeric_round("9.95", 1), "10.0");
        assert_eq!(numeric_round("-0.4", 0), "0");
        assert_eq!(numeric_round_at("950", -2), "1000");
        assert_eq!(numeric_round_at("-950", -2), "-1000");
        assert_eq!(numeric_round_at("949.9", -2), "900");
        assert_eq!(numeric_round_at("49", -2), "0");
        assert_eq!(numeric_round_at("2.5", 3), "2.500");
        assert_eq!(numeric_floor("-9.5"), "-10");
        assert_eq!(numeric_floor("9.5"), "9");
        assert_eq!(numeric_floor("-7"), "-7");
        assert_eq!(numeric_ceil("9.5"), "10");
        assert_eq!(numeric_ceil("-0.5"), "0");
        assert_eq!(numeric_ceil("-9.5"), "-9");
        assert_eq!(numeric_ceil("NaN"), "NaN");
    }

    #[test]
    fn numeric_canonical_forms() {
        assert_eq!(numeric_canonical("001.50").as_deref(), Some("1.50"));
        assert_eq!(numeric_canonical("-0.0").as_deref(), Some("0.0"));
        assert_eq!(numeric_canonical("1e3").as_deref(), Some("1000"));
        assert_eq!(
            numeric_canonical("12345678901234567890").as_deref(),
            Some("12345678901234567890")
        );
        assert_eq!(numeric_canonical("abc"), None);
        assert_eq!(numeric_round("1.255", 2), "1.26");
        assert_eq!(numeric_round("-9.995", 2), "-10.00");
        assert_eq!(numeric_cmp("10", "9.99"), Ordering::Greater);
        assert_eq!(numeric_cmp("-10", "-9.99"), Ordering::Less);
        assert_eq!(numeric_cmp("1.10", "1.1"), Ordering::Equal);
    }

    #[test]
    fn timestamps_round_trip() {
        let t = parse_timestamp("2024-06-15 12:34:56.5+02", true).expect("parse");
        assert_eq!(
            format_text(&Value::Timestamp(t), PgType::Timestamptz).as_deref(),
            Some("2024-06-15 10:34:56.5+00")
        );
        assert_eq!(parse_timestamp("2000-01-01 00:00:00", false), Some(0));
        let d = parse_text("1999-12-31", PgType::Date).expect("date");
        assert_eq!(format_text(&d, PgType::Date).as_deref(), Some("1999-12-31"));
    }

    #[test]
    fn intervals() {
        let iv = parse_interval("1 year 2 mons 3 days 04:05:06").expect("iv");
        assert_eq!(fmt_interval(&iv), "1 year 2 mons 3 days 04:05:06");
        assert_eq!(
            fmt_interval(&parse_interval("00:00:01").expect("iv")),
            "00:00:01"
        );
        assert_eq!(fmt_interval(&Interval::default()), "00:00:00");
    }

    #[test]
    fn floats_like_postgres() {
        assert_eq!(fmt_float(1e20, false), "1e+20");
        assert_eq!(fmt_float(0.1, false), "0.1");
        assert_eq!(fmt_float(1.5e-5, false), "1.5e-05");
        assert_eq!(fmt_float(123456.0, false), "123456");
        assert_eq!(fmt_float(f64::NAN, false), "NaN");
    }

    #[test]
    fn bytea_and_uuid() {
        assert_eq!(parse_bytea("\\x6869"), Some(b"hi".to_vec()));
        let u = parse_uuid("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11").expect("uuid");
        assert_eq!(fmt_uuid(&u), "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    }
}
