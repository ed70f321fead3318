//! Protobuf row messages of the RockLake catalog, derived with prost from `rocklake.proto`
//! (hand-written derives: no `protoc` at build time).

/// One value; `kind == None` is SQL NULL.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Datum {
    #[prost(oneof = "datum::Kind", tags = "1, 2, 3, 4, 5, 6, 7, 8")]
    pub kind: ::core::option::Option<datum::Kind>,
}

pub mod datum {
    #[derive(Clone, PartialEq, ::prost::Oneof)]
    pub enum Kind {
        #[prost(bool, tag = "1")]
        Boolean(bool),
        #[prost(sint64, tag = "2")]
        Int(i64),
        #[prost(double, tag = "3")]
        Float(f64),
        #[prost(string, tag = "4")]
        Text(::prost::alloc::string::String),
        #[prost(bytes = "vec", tag = "5")]
        Bytes(::prost::alloc::vec::Vec<u8>),
        #[prost(message, tag = "6")]
        Interval(super::Interval),
        #[prost(string, tag = "7")]
        Numeric(::prost::alloc::string::String),
        #[prost(message, tag = "8")]
        List(super::DatumList),
    }
}

#[derive(Clone, Copy, PartialEq, ::prost::Message)]
pub struct Interval {
    #[prost(int32, tag = "1")]
    pub months: i32,
    #[prost(int32, tag = "2")]
    pub days: i32,
    #[prost(int64, tag = "3")]
    pub micros: i64,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct DatumList {
    #[prost(message, repeated, tag = "1")]
    pub items: ::prost::alloc::vec::Vec<Datum>,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct Row {
    #[prost(uint64, tag = "1")]
    pub row_id: u64,
    #[prost(message, repeated, tag = "2")]
    pub values: ::prost::alloc::vec::Vec<Datum>,
    /// Tuple number behind `ctid`: assigned anew by every insert and update, as PostgreSQL's
    /// heap does.
    #[prost(uint64, tag = "3")]
    pub tuple: u64,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct ColumnDef {
    #[prost(string, tag = "1")]
    pub name: ::prost::alloc::string::String,
    #[prost(string, tag = "2")]
    pub type_name: ::prost::alloc::string::String,
    #[prost(int32, tag = "3")]
    pub typmod: i32,
    #[prost(bool, tag = "4")]
    pub not_null: bool,
    #[prost(string, tag = "5")]
    pub default_sql: ::prost::alloc::string::String,
    /// The sequence (its table id) an identity column takes its values from; 0: none.
    #[prost(uint32, tag = "6")]
    pub identity_sequence: u32,
    #[prost(bool, tag = "7")]
    pub identity_always: bool,
    /// A serial column's sequence (its table id): the default draws from it; 0: none.
    #[prost(uint32, tag = "8")]
    pub serial_sequence: u32,
    /// COMMENT ON COLUMN; empty when none.
    #[prost(string, tag = "9")]
    pub comment: ::prost::alloc::string::String,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct TableDef {
    #[prost(uint32, tag = "1")]
    pub table_id: u32,
    #[prost(string, tag = "2")]
    pub schema: ::prost::alloc::string::String,
    #[prost(string, tag = "3")]
    pub name: ::prost::alloc::string::String,
    #[prost(message, repeated, tag = "4")]
    pub columns: ::prost::alloc::vec::Vec<ColumnDef>,
    #[prost(uint32, repeated, tag = "5")]
    pub primary_key: ::prost::alloc::vec::Vec<u32>,
    #[prost(uint32, tag = "6")]
    pub oid: u32,
    #[prost(string, tag = "7")]
    pub pkey_name: ::prost::alloc::string::String,
    #[prost(message, repeated, tag = "8")]
    pub indexes: ::prost::alloc::vec::Vec<IndexDef>,
    /// The commit that last rewrote the rows into another column layout; 0: since creation.
    #[prost(uint64, tag = "9")]
    pub layout_seq: u64,
    /// Set when the relation is a sequence.
    #[prost(message, optional, boxed, tag = "10")]
    pub sequence: ::core::option::Option<::prost::alloc::boxed::Box<SequenceDef>>,
    /// COMMENT ON TABLE / SEQUENCE; empty when none.
    #[prost(string, tag = "11")]
    pub comment: ::prost::alloc::string::String,
    /// COMMENT ON INDEX of the primary key's index; empty when none.
    #[prost(string, tag = "12")]
    pub pkey_comment: ::prost::alloc::string::String,
    /// The commit whose columns, keys and indexes this definition has, when only comments
    /// changed since; 0: its own commit.
    #[prost(uint64, tag = "13")]
    pub shape_seq: u64,
    /// COMMENT ON CONSTRAINT of the primary key; empty when none.
    #[prost(string, tag = "14")]
    pub pkey_constraint_comment: ::prost::alloc::string::String,
    /// Set when the relation is a view.
    #[prost(message, optional, boxed, tag = "15")]
    pub view: ::core::option::Option<::prost::alloc::boxed::Box<ViewDef>>,
}

/// A view's definition (docs/decisions/0039).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct ViewDef {
    /// The query, its relations' names qualified.
    #[prost(string, tag = "1")]
    pub query: ::prost::alloc::string::String,
    /// The relations it reads (table ids).
    #[prost(uint32, repeated, tag = "2")]
    pub depends_on: ::prost::alloc::vec::Vec<u32>,
    /// The query's own column names when the view was created.
    #[prost(string, repeated, tag = "3")]
    pub query_columns: ::prost::alloc::vec::Vec<::prost::alloc::string::String>,
    /// The relations it names in `regclass` strings (table ids): kept, renamed with it, but
    /// none of their columns read.
    #[prost(uint32, repeated, tag = "4")]
    pub named: ::prost::alloc::vec::Vec<u32>,
}

/// A sequence's definition (its value lives outside MVCC, see docs/decisions/0029).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct SequenceDef {
    #[prost(string, tag = "1")]
    pub type_name: ::prost::alloc::string::String,
    #[prost(int64, tag = "2")]
    pub start: i64,
    #[prost(int64, tag = "3")]
    pub increment: i64,
    #[prost(int64, tag = "4")]
    pub min: i64,
    #[prost(int64, tag = "5")]
    pub max: i64,
    #[prost(int64, tag = "6")]
    pub cache: i64,
    #[prost(bool, tag = "7")]
    pub cycle: bool,
    /// The table whose column owns the sequence; 0: none.
    #[prost(uint32, tag = "8")]
    pub owner_table: u32,
    #[prost(string, tag = "9")]
    pub owner_column: ::prost::alloc::string::String,
    /// Owned as an identity column's sequence.
    #[prost(bool, tag = "10")]
    pub identity: bool,
}

/// A secondary index RockLake keeps for a table (see docs/decisions/0008).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct IndexDef {
    #[prost(string, tag = "1")]
    pub name: ::prost::alloc::string::String,
    #[prost(uint32, repeated, tag = "2")]
    pub columns: ::prost::alloc::vec::Vec<u32>,
    /// The key byte of its entries, plus one; 0 (written before slots were kept): the
    /// index's position in the table's list.
    #[prost(uint32, tag = "3")]
    pub slot_plus_one: u32,
    /// `pg_class` OID of an index CREATE INDEX made; 0 for RockLake's own.
    #[prost(uint32, tag = "4")]
    pub oid: u32,
    /// `pg_index.indoption` per key column.
    #[prost(int32, repeated, tag = "5")]
    pub options: ::prost::alloc::vec::Vec<i32>,
    /// The first commit at which every row has its entry (0: since the table's creation).
    #[prost(uint64, tag = "6")]
    pub since_seq: u64,
    /// COMMENT ON INDEX; empty when none.
    #[prost(string, tag = "7")]
    pub comment: ::prost::alloc::string::String,
    /// A partial index's predicate as `pg_get_indexdef` shows it; empty when none.
    #[prost(string, tag = "8")]
    pub predicate: ::prost::alloc::string::String,
}

#[derive(Clone, PartialEq, ::prost::Message)]
pub struct SchemaDef {
    #[prost(string, tag = "1")]
    pub name: ::prost::alloc::string::String,
    #[prost(uint32, tag = "2")]
    pub oid: u32,
    /// COMMENT ON SCHEMA; empty when none.
    #[prost(string, tag = "3")]
    pub comment: ::prost::alloc::string::String,
}
