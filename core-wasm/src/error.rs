//! Errors of the core, one `#[non_exhaustive]` enum per operation family, mapped to PostgreSQL
//! SQLSTATE + message + hint in exactly one place ([`SqlError::to_pg`]).

use crate::api::{CopyTooLarge, KvError, PgError};

/// What a statement reports and goes on from (PostgreSQL's `ereport(NOTICE | WARNING, …)`):
/// sent to the client as a NoticeResponse before the statement's own answer. Nothing for the
/// caller to do; the variant says what PostgreSQL would have said.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Notice {
    /// `DROP TABLE IF EXISTS`, `ALTER TABLE IF EXISTS` of a missing relation (`kind`:
    /// "table", "relation", "schema").
    #[error("{kind} \"{name}\" does not exist, skipping")]
    Missing { kind: &'static str, name: String },
    /// `CREATE TABLE IF NOT EXISTS` of a table that exists.
    #[error("relation \"{name}\" already exists, skipping")]
    RelationExists { name: String },
    /// `CREATE SCHEMA IF NOT EXISTS` of a schema that exists.
    #[error("schema \"{name}\" already exists, skipping")]
    SchemaExists { name: String },
    /// `ADD COLUMN IF NOT EXISTS` of a column the table has.
    #[error("column \"{column}\" of relation \"{table}\" already exists, skipping")]
    ColumnExists { column: String, table: String },
    /// `DROP COLUMN IF EXISTS` of a column the table lacks.
    #[error("column \"{column}\" of relation \"{table}\" does not exist, skipping")]
    ColumnMissing { column: String, table: String },
    #[error("constraint \"{constraint}\" of relation \"{table}\" does not exist, skipping")]
    ConstraintMissing { constraint: String, table: String },
    /// `ALTER COLUMN … DROP IDENTITY IF EXISTS` of a column that is not one.
    #[error("column \"{column}\" of relation \"{table}\" is not an identity column, skipping")]
    NotIdentity { column: String, table: String },
    /// `DROP SCHEMA … CASCADE` dropping the schema's tables (PostgreSQL's message names one, or
    /// counts several and lists them in the detail).
    #[error("{message}")]
    Cascade {
        message: String,
        detail: Option<String>,
    },
    /// BEGIN inside a transaction block.
    #[error("there is already a transaction in progress")]
    AlreadyInTransaction,
    /// COMMIT / ROLLBACK without BEGIN.
    #[error("there is no transaction in progress")]
    NoTransaction,
    /// `SET LOCAL`, `SET TRANSACTION`, `RESET TRANSACTION` outside a transaction block: they
    /// last until the end of a transaction that ends with the statement.
    #[error("{what} can only be used in transaction blocks")]
    OutsideTransactionBlock { what: &'static str },
    /// `pg_cancel_backend` / `pg_terminate_backend` of a pid that is no session's (the call
    /// returns false).
    #[error("PID {pid} is not a PostgreSQL backend process")]
    NotABackend { pid: i32 },
    /// `pg_advisory_unlock` of a lock the session does not hold in that mode at session
    /// level (the call returns false).
    #[error("you don't own a lock of type {mode}")]
    NotLockOwner { mode: &'static str },
}

impl Notice {
    /// The NoticeResponse: severity, SQLSTATE and message as PostgreSQL's.
    pub fn to_pg(&self) -> PgError {
        let (severity, code) = match self {
            Notice::Missing { .. }
            | Notice::ColumnMissing { .. }
            | Notice::ConstraintMissing { .. }
            | Notice::NotIdentity { .. }
            | Notice::Cascade { .. } => ("NOTICE", "00000"),
            Notice::RelationExists { .. } => ("NOTICE", "42P07"),
            Notice::SchemaExists { .. } => ("NOTICE", "42P06"),
            Notice::ColumnExists { .. } => ("NOTICE", "42701"),
            Notice::AlreadyInTransaction => ("WARNING", "25001"),
            Notice::NoTransaction | Notice::OutsideTransactionBlock { .. } => ("WARNING", "25P01"),
            Notice::NotABackend { .. } | Notice::NotLockOwner { .. } => ("WARNING", "01000"),
        };
        let mut e = PgError::new(code, self.to_string());
        e.severity = severity.into();
        if let Notice::Cascade {
            detail: Some(d), ..
        } = self
        {
            e.detail = Some(d.clone());
        }
        e
    }
}

/// Decoding stored bytes failed: the store holds something this core did not write.
/// Callers must stop using the affected key and report it (verify/repair), never guess.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    #[error("value envelope too short ({len} bytes)")]
    Truncated { len: usize },
    #[error("value envelope has bad magic {found:02x?}")]
    BadMagic { found: [u8; 2] },
    #[error("value envelope version {version} is not supported by this build")]
    UnknownVersion { version: u8 },
    #[error("value envelope kind {kind} is unknown")]
    UnknownKind { kind: u8 },
    #[error("protobuf payload is invalid: {message}")]
    Payload { message: String },
    #[error("key is malformed: {message}")]
    Key { message: String },
}

/// Errors of statement execution. Each variant says what the client should do.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SqlError {
    /// Fix the statement text.
    /// The message is PostgreSQL's own (most start "syntax error at or near …").
    #[error("{message}")]
    Syntax { message: String },
    /// As [`SqlError::Syntax`], with PostgreSQL's hint.
    #[error("{message}")]
    SyntaxHint { message: String, hint: &'static str },
    /// Create the relation or fix its name.
    #[error("relation \"{name}\" does not exist")]
    UndefinedTable { name: String },
    /// DROP TABLE of a name no table has (PostgreSQL's wording for DROP).
    #[error("table \"{name}\" does not exist")]
    UndefinedTableToDrop { name: String },
    /// DROP VIEW of a name no relation has.
    #[error("view \"{name}\" does not exist")]
    UndefinedViewToDrop { name: String },
    /// DROP SEQUENCE of a name no relation has.
    #[error("sequence \"{name}\" does not exist")]
    UndefinedSequence { name: String },
    #[error("column \"{name}\" does not exist")]
    UndefinedColumn { name: String },
    /// A column list (ANALYZE's) names a column the table does not have.
    #[error("column \"{column}\" of relation \"{table}\" does not exist")]
    UndefinedColumnOf { column: String, table: String },
    /// A column list (ANALYZE's) names a column twice: name it once.
    #[error("column \"{column}\" of relation \"{table}\" appears more than once")]
    ColumnOfListedTwice { column: String, table: String },
    /// `(record).field` names a field the record does not have.
    #[error("could not identify column \"{name}\" in record data type")]
    UndefinedRecordField { name: String },
    /// A key (PRIMARY KEY of CREATE TABLE) names a column the table does not have.
    #[error("column \"{name}\" named in key does not exist")]
    KeyColumnMissing { name: String },
    /// A qualified name whose qualifier names nothing in FROM: add the table to FROM or fix
    /// the qualifier.
    #[error("missing FROM-clause entry for table \"{table}\"")]
    MissingFromEntry { table: String },
    /// A subquery in FROM naming an item before it: write it `LATERAL (…)`. With `alias`: a
    /// table named by its name where FROM gave it that alias; use the alias.
    #[error("invalid reference to FROM-clause entry for table \"{table}\"")]
    InvalidFromReference {
        table: String,
        alias: Option<String>,
    },
    /// UPDATE's or DELETE's target named inside its FROM / USING items: join them to it in
    /// WHERE instead.
    #[error("invalid reference to FROM-clause entry for table \"{table}\"")]
    InvalidTargetReference { table: String },
    /// An unqualified name only an earlier FROM item has, in a subquery in FROM: write it
    /// `LATERAL (…)`.
    #[error("column \"{name}\" does not exist")]
    UnreachableColumn { name: String, table: String },
    /// A LATERAL item reading the rows before a RIGHT or FULL JOIN (they are its null side):
    /// join with INNER or LEFT, or reorder the items.
    #[error("invalid reference to FROM-clause entry for table \"{table}\"")]
    InvalidLateralReference { table: String },
    /// More column aliases than the relation has columns: drop the extra names.
    #[error(
        "{relation} \"{name}\" has {available} columns available but {specified} columns specified"
    )]
    TooManyColumnAliases {
        /// "table" or "join expression".
        relation: &'static str,
        name: String,
        available: usize,
        specified: usize,
    },
    /// `t.x` where `t` has no column `x` (PostgreSQL writes the name unquoted).
    #[error("column {qual}.{name} does not exist")]
    UndefinedQualifiedColumn { qual: String, name: String },
    /// Name a column both sides of the join have.
    #[error("column \"{name}\" specified in USING clause does not exist in {side} table")]
    UsingColumnMissing { name: String, side: &'static str },
    #[error("schema \"{name}\" does not exist")]
    UndefinedSchema { name: String },
    /// The host interrupted the statement (statement_timeout, CancelRequest); its effects are
    /// undone as for any failed statement.
    #[error("{message}")]
    QueryCanceled { message: String },
    /// `pg_terminate_backend` of the session's own backend: the host ends the connection
    /// (the error is FATAL) and the transaction is rolled back.
    #[error("terminating connection due to administrator command")]
    Terminated,
    /// The statement must wait for an advisory lock or a `pg_sleep` (see [`crate::locks`]):
    /// the engine suspends the request and runs the statement again later. Never reaches a
    /// client.
    #[error("the statement waits")]
    MustWait,
    /// The session's wait closed a cycle of waits: roll back, and take locks in one order.
    #[error("deadlock detected")]
    DeadlockDetected { detail: String },
    /// `lock_timeout` passed while the statement waited for a lock: try again later.
    #[error("{message}")]
    LockNotAvailable { message: String },
    /// The transaction's snapshot is older than what excision kept (a replica's REPEATABLE READ
    /// transaction that outlived a gc + excise on the writer): start a new transaction, and hold
    /// a lease on the writer for reads that must survive excision.
    #[error("snapshot too old")]
    SnapshotTooOld { commit_seq: u64, excised_below: u64 },
    /// Qualify the name or SET search_path to an existing schema.
    #[error("no schema has been selected to create in")]
    NoSchemaSelected,
    #[error("relation \"{name}\" already exists")]
    DuplicateTable { name: String },
    #[error("schema \"{name}\" already exists")]
    DuplicateSchema { name: String },
    #[error("column \"{column}\" of relation \"{table}\" already exists")]
    DuplicateColumn { column: String, table: String },
    /// SET NOT NULL (or ADD COLUMN … NOT NULL) over rows holding NULL: fill them first.
    #[error("column \"{column}\" of relation \"{table}\" contains null values")]
    ColumnContainsNulls {
        column: String,
        table: String,
        schema: String,
    },
    /// The table definition is invalid (PostgreSQL's 42P16): fix the CREATE TABLE.
    #[error("{message}")]
    InvalidTableDefinition { message: String },
    /// The same, with PostgreSQL's hint for what to do instead.
    #[error("{message}")]
    InvalidTableDefinitionHint { message: String, hint: String },
    /// DECLARE the cursor first (or in this transaction: cursors without HOLD end with it).
    #[error("cursor \"{name}\" does not exist")]
    UndefinedCursor { name: String },
    /// CLOSE it first, or pick another name.
    #[error("cursor \"{name}\" already exists")]
    DuplicateCursor { name: String },
    /// A NO SCROLL cursor moved backward: declare it with SCROLL.
    #[error("cursor can only scan forward")]
    CursorNoScroll,
    /// DROP of a schema that still holds tables: drop them first, or add CASCADE. `detail`
    /// lists them as PostgreSQL does, one per line.
    #[error("cannot drop schema {name} because other objects depend on it")]
    DependentObjects { name: String, detail: String },
    /// DROP of another object (`kind`: "sequence") that others depend on.
    #[error("cannot drop {kind} {name} because other objects depend on it")]
    DependentObjectsOf {
        kind: &'static str,
        name: String,
        detail: String,
    },
    /// The same, for a DROP naming several objects.
    #[error("cannot drop desired object(s) because other objects depend on them")]
    DependentObjectsOfSeveral { detail: String },
    /// DROP of a sequence an identity column requires: drop the column (`hint` names it).
    #[error("{message}")]
    RequiredByColumn { message: String, hint: String },
    /// A sequence reached its MAXVALUE / MINVALUE without CYCLE: raise the bound
    /// (`ALTER SEQUENCE … MAXVALUE`) or make it cycle.
    #[error("{message}")]
    SequenceLimit { message: String },
    /// An object not in the state the call needs (55000): `currval` / `lastval` before this
    /// session's first `nextval` (call `nextval` first), `OWNED BY` a table of another schema.
    #[error("{message}")]
    NotInPrerequisiteState { message: String },
    /// A value for a GENERATED ALWAYS identity column: leave it out, write DEFAULT, or add
    /// `OVERRIDING SYSTEM VALUE` (`hint` says so where PostgreSQL does).
    #[error("{message}")]
    GeneratedAlways {
        message: String,
        detail: String,
        hint: Option<String>,
    },
    /// DROP of a schema PostgreSQL itself needs (`pg_catalog`).
    #[error("cannot drop schema {name} because it is required by the database system")]
    RequiredBySystem { name: String },
    /// A pattern the regular expression engine cannot read: fix the pattern.
    #[error("{message}")]
    InvalidRegex { message: String },
    /// Name a savepoint the transaction has open.
    #[error("savepoint \"{name}\" does not exist")]
    NoSuchSavepoint { name: String },
    /// Run it inside BEGIN … COMMIT (`what`: the statement, e.g. `DECLARE CURSOR`).
    #[error("{what} can only be used in transaction blocks")]
    NoTransactionBlock { what: &'static str },
    /// Name each USING column once.
    #[error("column name \"{name}\" appears more than once in USING clause")]
    UsingColumnTwice { name: String },
    /// DEALLOCATE it first, or PREPARE under another name.
    #[error("prepared statement \"{name}\" already exists")]
    DuplicatePreparedStatement { name: String },
    /// PREPARE it first (prepared statements belong to the session that made them).
    #[error("prepared statement \"{name}\" does not exist")]
    UndefinedPreparedStatement { name: String },
    /// Give EXECUTE one value per parameter.
    #[error("wrong number of parameters for prepared statement \"{name}\"")]
    WrongParameterCount {
        name: String,
        expected: usize,
        got: usize,
    },
    /// Name each column of a key once.
    #[error("column \"{name}\" appears twice in primary key constraint")]
    ColumnTwiceInKey { name: String },
    /// Name each column once (a COPY or INSERT column list).
    #[error("column \"{name}\" specified more than once")]
    ColumnTwice { name: String },
    /// Rows already there share a value of the key a constraint being added would make
    /// unique: remove or change them first.
    #[error("could not create unique index \"{index}\"")]
    UniqueIndexDuplicates {
        index: String,
        schema: String,
        table: String,
        detail: String,
    },
    /// Another row holds the key: retry the transaction with fresh ids (DuckLake does).
    #[error("duplicate key value violates unique constraint \"{constraint}\"")]
    UniqueViolation {
        constraint: String,
        schema: String,
        table: String,
        detail: String,
    },
    #[error(
        "null value in column \"{column}\" of relation \"{table}\" violates not-null constraint"
    )]
    NotNullViolation {
        column: String,
        table: String,
        schema: String,
        detail: String,
    },
    #[error("invalid input syntax for type {type_name}: \"{input}\"")]
    InvalidText { type_name: String, input: String },
    /// An array literal that is not `{…}` of elements: fix the literal.
    #[error("malformed array literal: \"{input}\"")]
    MalformedArray { input: String },
    /// Date/time text that is not a date or time at all: fix the literal.
    #[error("invalid input syntax for type {type_name}: \"{input}\"")]
    InvalidDatetimeText { type_name: String, input: String },
    /// A date/time value or field outside PostgreSQL's range (`timestamp out of range`,
    /// `date/time field value out of range: "2024-02-30"`).
    #[error("{message}")]
    DatetimeOutOfRange { message: String },
    /// A month or day field outside 1–12 / 1–31 in date text: PostgreSQL's
    /// `DTERR_MDY_FIELD_OVERFLOW`, whose hint suggests another DateStyle.
    #[error("date/time field value out of range: \"{input}\"")]
    DateFieldOverflow { input: String },
    #[error("value \"{input}\" is out of range for type {type_name}")]
    OutOfRange { type_name: String, input: String },
    /// Integer arithmetic or a conversion from another number overflowed its type
    /// (`integer`, `bigint`, `smallint`); text input that does not fit is [`Self::OutOfRange`].
    #[error("{type_name} out of range")]
    IntegerOutOfRange { type_name: &'static str },
    /// A function's argument is outside what it accepts (`pg_terminate_backend`'s negative
    /// timeout).
    #[error("{message}")]
    ArgumentOutOfRange { message: String },
    /// A numeric NaN or infinity converted to an integer type, which has neither.
    #[error("cannot convert {what} to {type_name}")]
    NoIntegerFor {
        what: &'static str,
        type_name: &'static str,
    },
    /// A numeric infinity assigned to `numeric(p, s)`, which holds finite values only.
    #[error("numeric field overflow")]
    NumericFieldOverflow { detail: String },
    /// A recursive query that reads itself where PostgreSQL does not allow it (in a subquery,
    /// more than once): rewrite the recursive term.
    #[error("{message}")]
    InvalidRecursion { message: String },
    /// A mathematical function's argument outside its domain, or its result outside the
    /// type's range: PostgreSQL's SQLSTATE for the case (2201E, 2201F, 22003).
    #[error("{message}")]
    MathDomain { code: &'static str, message: String },
    /// A LIMIT, OFFSET or FETCH row count that is negative (or NULL with WITH TIES): give
    /// one that is not (2201W for LIMIT, 2201X for OFFSET).
    #[error("{message}")]
    InvalidRowCount {
        code: &'static str,
        message: &'static str,
    },
    /// A numeric result with more than 131,072 digits before the point.
    #[error("value overflows numeric format")]
    NumericOverflow,
    #[error("{message}")]
    DatatypeMismatch {
        message: String,
        hint: Option<String>,
    },
    #[error("{message}")]
    UndefinedFunction {
        message: String,
        hint: Option<String>,
    },
    /// An operator or function over untyped literals has several candidates: the client
    /// should cast the literal.
    #[error("{message}")]
    AmbiguousFunction { message: String },
    #[error("cannot cast type {from} to {to}")]
    CannotCast { from: String, to: String },
    #[error("column reference \"{name}\" is ambiguous")]
    AmbiguousColumn { name: String },
    /// A bare name in ORDER BY or DISTINCT ON names two different output columns: the client
    /// should rename one or order by position.
    #[error("{clause} \"{name}\" is ambiguous")]
    AmbiguousOutputColumn { clause: &'static str, name: String },
    #[error(
        "column \"{name}\" must appear in the GROUP BY clause or be used in an aggregate function"
    )]
    Grouping { name: String },
    /// An aggregate call where none may be (WHERE, JOIN conditions, another aggregate's
    /// arguments): move it to the select list or HAVING.
    #[error("{message}")]
    AggregateMisplaced { message: String },
    #[error("more than one row returned by a subquery used as an expression")]
    CardinalityViolation,
    /// Two proposed rows of one `INSERT … ON CONFLICT DO UPDATE` share a key: send each once.
    #[error("ON CONFLICT DO UPDATE command cannot affect row a second time")]
    CardinalityViolationUpsert,
    #[error("division by zero")]
    DivisionByZero,
    /// The feature is outside what RockLake implements; see COMPAT.md.
    #[error("{what} is not supported")]
    FeatureNotSupported { what: String },
    /// The same, with what to do instead (`hint`).
    #[error("{what} is not supported")]
    FeatureNotSupportedHint { what: String, hint: String },
    /// PostgreSQL refuses this too, as a feature it does not support (its own message): change
    /// the statement.
    #[error("{message}")]
    UnsupportedByPostgres { message: String },
    /// The same, with PostgreSQL's detail (what the object is tied to).
    #[error("{message}")]
    UnsupportedByPostgresDetail { message: String, detail: String },
    /// A set operation's ORDER BY names something other than its result columns: sort by a
    /// result column, or make the set operation a FROM item.
    #[error("invalid UNION/INTERSECT/EXCEPT ORDER BY clause")]
    SetOperationOrderBy,
    /// A window function where none is allowed, nested, or with an impossible frame: fix the
    /// statement.
    #[error("{message}")]
    Windowing { message: String },
    /// A column named as a system column (`ctid`, `xmin`, …): pick another name.
    #[error("column name \"{name}\" conflicts with a system column name")]
    SystemColumnName { name: String },
    /// A name PostgreSQL reserves (a schema starting `pg_`): pick another.
    #[error("{message}")]
    ReservedName { message: String, detail: String },
    /// One name for two FROM items of a query level: alias one of them.
    #[error("table name \"{name}\" specified more than once")]
    DuplicateAlias { name: String },
    /// A join column USING or NATURAL names twice on one side: qualify, or join ON.
    #[error("common column name \"{name}\" appears more than once in {side} table")]
    CommonColumnTwice { name: String, side: &'static str },
    /// A named object (a window of the WINDOW clause) that does not exist.
    #[error("{message}")]
    UndefinedObject { message: String },
    /// A window call inside an aggregate's arguments.
    #[error("{message}")]
    AggregateNesting { message: String },
    /// A set-returning function where PostgreSQL allows none (WHERE, HAVING, CASE, an
    /// aggregate's arguments, …): move it into FROM (a LATERAL item). `hint`: whether
    /// PostgreSQL gives that advice for the place.
    #[error("{message}")]
    SetReturningMisplaced { message: String, hint: bool },
    /// `OVER` on a function that is neither a window function nor an aggregate.
    #[error("{message}")]
    WrongObjectType { message: String },
    /// The same, with PostgreSQL's hint (an ORDER BY … USING operator that does not order).
    #[error("{message}")]
    WrongObjectTypeHint { message: String, hint: String },
    #[error("{message}")]
    WrongObjectTypeDetail { message: String, detail: String },
    #[error("frame {which} offset must not be negative")]
    WindowFrameOffset { which: &'static str },
    /// `ntile(0)`, `nth_value(x, 0)`.
    #[error("argument of {function} must be greater than zero")]
    WindowArgument { function: &'static str },
    /// ROLLBACK first.
    #[error("current transaction is aborted, commands ignored until end of transaction block")]
    InFailedTransaction,
    /// Retry the whole transaction.
    #[error("could not serialize access due to concurrent update")]
    SerializationFailure,
    /// Retry the whole transaction: its snapshot predates an ALTER TABLE that rewrote the
    /// table's rows into another layout, so it cannot read them by the current definition.
    #[error("could not serialize access due to concurrent ALTER TABLE")]
    LayoutChanged { table: String },
    #[error("cannot execute {what} in a read-only transaction")]
    ReadOnlyTransaction { what: String },
    /// Split the work into smaller transactions.
    #[error("Transaction exceeds maximum batch size (64 MiB).")]
    BatchTooLarge,
    #[error("{message}")]
    ProgramLimit { message: String },
    /// A substring length below zero.
    #[error("{message}")]
    SubstringError { message: String },
    /// A view reads itself (through `CREATE OR REPLACE VIEW`): replace it with a query that
    /// does not.
    #[error("infinite recursion detected in rules for relation \"{name}\"")]
    InfiniteRecursion { name: String },
    /// An index definition that calls a function whose result can change (PostgreSQL's
    /// "must be marked IMMUTABLE"): write the condition without it.
    #[error("{message}")]
    InvalidObjectDefinition { message: String },
    /// A view whose query no longer gives the columns it was created with (a relation it
    /// reads was changed under it): drop and re-create the view.
    #[error("view \"{name}\" no longer matches the relations it reads")]
    ViewChanged { name: String },
    /// A GROUP BY past PostgreSQL's limits on grouping sets (CUBE's elements, the sets
    /// after expansion, GROUPING's arguments): group by fewer keys.
    #[error("{message}")]
    GroupingLimit { code: &'static str, message: String },
    /// Select fewer columns.
    #[error("target lists can have at most {max} entries")]
    TooManyColumns { max: usize },
    /// An index over more columns than PostgreSQL's INDEX_MAX_KEYS: index fewer.
    #[error("cannot use more than {max} columns in an index")]
    IndexTooWide { max: usize },
    /// The statement needed more memory than its budget (`limit` bytes, 0: the component's
    /// heap ceiling): narrow it (fewer rows, a join condition) or raise the server's
    /// `statement_memory_limit`. Its rows are freed; the session goes on.
    #[error("out of memory")]
    OutOfMemory { limit: u64 },
    /// The advisory lock table is full ([`crate::locks::MAX_LOCKS`]): release locks first.
    #[error("out of shared memory")]
    OutOfSharedMemory,
    /// The value does not fit the column (varchar(n) too short).
    #[error("{message}")]
    StringTooLong { message: String },
    /// ORDER BY / GROUP BY position out of range.
    #[error("{message}")]
    InvalidColumnReference { message: String },
    /// Name a database that exists (`current_database()`).
    #[error("database \"{name}\" does not exist")]
    UndefinedDatabase { name: String },
    /// A statement nested deeper than the core walks (crate::depth): write long chains as
    /// IN lists or split the statement.
    #[error("stack depth limit exceeded")]
    StackDepth,
    #[error("{message}")]
    InvalidParameter { message: String },
    /// A name in text (`'a..b'::regclass`) that does not read as one: fix its quoting.
    #[error("{message}")]
    InvalidName { message: String },
    /// SET of a name that is no setting and no valid custom name (`"my app".x`): custom
    /// names are dotted simple identifiers.
    #[error("invalid configuration parameter name \"{name}\"")]
    InvalidCustomParameterName { name: String },
    /// A LIKE escape string longer than one character, or a pattern ending in its escape
    /// character: fix the pattern.
    #[error("{message}")]
    InvalidEscape {
        message: String,
        hint: Option<String>,
    },
    #[error("{message}")]
    InvalidTransactionState { message: String },
    /// SET/SHOW/RESET of a name PostgreSQL does not know: fix the name.
    #[error("unrecognized configuration parameter \"{name}\"")]
    UndefinedParameter { name: String },
    /// The setting is fixed (server-wide or read-only); leave it alone.
    #[error("{message}")]
    CantChangeParameter { message: String },
    /// The value does not parse or is out of range for the setting; the hint lists valid ones.
    #[error("{message}")]
    BadParameterValue {
        message: String,
        hint: Option<String>,
    },
    /// As [`SqlError::InvalidParameter`], with a hint.
    #[error("{message}")]
    InvalidParameterHint { message: String, hint: String },
    /// A date/time template that does not fit its value or input (`to_char(interval,
    /// 'Month')`, `to_date('abc', 'YYYY')`), with PostgreSQL's detail and hint: fix either.
    #[error("{message}")]
    InvalidFormat {
        message: String,
        detail: Option<String>,
        hint: Option<String>,
    },
    /// A UTC offset past ±15:59:59 in date/time input: fix the offset.
    #[error("time zone displacement out of range: \"{input}\"")]
    TimeZoneDisplacement { input: String },
    /// As [`SqlError::BadParameterValue`], with PostgreSQL's detail saying why.
    #[error("{message}")]
    BadParameterDetail { message: String, detail: String },
    /// A function argument that must not be NULL was (`set_config(NULL, …)`).
    #[error("{message}")]
    NullValueNotAllowed { message: String },
    /// The role may not do this (a read-only role asking for read-write mode).
    #[error("{message}")]
    InsufficientPrivilege { message: String },
    /// Must come before the transaction's first query (SET TRANSACTION ISOLATION LEVEL).
    #[error("{message}")]
    ActiveTransaction { message: String },
    /// The COPY data stream is malformed: fix the data (the hint says how, where PostgreSQL
    /// gives one).
    #[error("{message}")]
    BadCopyFormat {
        message: String,
        hint: Option<&'static str>,
    },
    /// Bytes that are not UTF-8 where text was expected: send UTF-8.
    #[error("invalid byte sequence for encoding \"UTF8\": {bytes}")]
    InvalidEncoding { bytes: String },
    /// A COPY FROM line failed: `error` says why, `context` which line and column
    /// (PostgreSQL's CONTEXT). Fix that line of the data.
    #[error("{error}")]
    InCopy {
        error: Box<SqlError>,
        context: String,
    },
    /// The writer lost its lease on the catalog: stop writing, reconnect to the new writer.
    #[error("Writer has been fenced. Another instance has taken over as writer.")]
    Fenced,
    /// The storage layer failed; the transaction was not committed. Retry later.
    #[error("{0}")]
    Storage(KvError),
    /// Stored bytes failed to decode. Run `rocklake verify`.
    #[error("catalog data is corrupt: {0}")]
    Corrupt(DecodeError),
    #[error("internal error: {message}")]
    Internal { message: String },
    /// A key on a type without a btree operator class (json, xid): key another column.
    #[error("data type {type_name} has no default operator class for access method \"btree\"")]
    NoBtreeOperatorClass { type_name: String },
    /// Text that is no JSON document: PostgreSQL's detail says which token, the context
    /// shows where.
    #[error("invalid input syntax for type json")]
    InvalidJson { detail: String, context: String },
    /// A JSON string read as text holds `\u0000`, which text cannot hold.
    #[error("unsupported Unicode escape sequence")]
    UntranslatableJson { detail: String, context: String },
    /// A `regclass` given as a number that is no relation's OID (`nextval(99999)`).
    #[error("could not open relation with OID {oid}")]
    NoRelationWithOid { oid: i64 },
    /// See the variant's own documentation.
    #[error(transparent)]
    Lifecycle(crate::lifecycle::LifecycleError),
}

impl From<KvError> for SqlError {
    fn from(e: KvError) -> Self {
        SqlError::Storage(e)
    }
}

impl From<DecodeError> for SqlError {
    fn from(e: DecodeError) -> Self {
        SqlError::Corrupt(e)
    }
}

impl From<CopyTooLarge> for SqlError {
    /// A result set's rows passed what one result may hold.
    fn from(_: CopyTooLarge) -> Self {
        SqlError::ProgramLimit {
            message: "result set exceeds 4 GiB".into(),
        }
    }
}

impl SqlError {
    /// The error a statement stops with when the host interrupts it with `message` (the
    /// `interrupted` import): `pg_terminate_backend`'s ends the session, others cancel.
    pub fn interrupted(message: String) -> SqlError {
        if message == SqlError::Terminated.to_string() {
            SqlError::Terminated
        } else {
            SqlError::QueryCanceled { message }
        }
    }

    pub fn feature(what: impl Into<String>) -> Self {
        SqlError::FeatureNotSupported { what: what.into() }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        SqlError::Internal {
            message: message.into(),
        }
    }

    /// The SQLSTATE of this error.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            SqlError::Syntax { .. } | SqlError::SyntaxHint { .. } => "42601",
            SqlError::UndefinedTable { .. }
            | SqlError::UndefinedTableToDrop { .. }
            | SqlError::UndefinedViewToDrop { .. }
            | SqlError::UndefinedSequence { .. }
            | SqlError::MissingFromEntry { .. }
            | SqlError::InvalidFromReference { .. } => "42P01",
            SqlError::InvalidLateralReference { .. }
            | SqlError::TooManyColumnAliases { .. }
            | SqlError::InvalidTargetReference { .. } => "42P10",
            SqlError::UndefinedColumn { .. }
            | SqlError::UnreachableColumn { .. }
            | SqlError::UndefinedQualifiedColumn { .. }
            | SqlError::UsingColumnMissing { .. }
            | SqlError::KeyColumnMissing { .. }
            | SqlError::UndefinedColumnOf { .. }
            | SqlError::UndefinedRecordField { .. } => "42703",
            SqlError::UndefinedSchema { .. } | SqlError::NoSchemaSelected => "3F000",
            SqlError::DuplicateTable { .. } => "42P07",
            SqlError::DuplicateSchema { .. } => "42P06",
            SqlError::DuplicateColumn { .. }
            | SqlError::ColumnTwice { .. }
            | SqlError::ColumnOfListedTwice { .. }
            | SqlError::ColumnTwiceInKey { .. }
            | SqlError::UsingColumnTwice { .. } => "42701",
            SqlError::UniqueViolation { .. } | SqlError::UniqueIndexDuplicates { .. } => "23505",
            SqlError::NotNullViolation { .. } | SqlError::ColumnContainsNulls { .. } => "23502",
            SqlError::InvalidText { .. }
            | SqlError::MalformedArray { .. }
            | SqlError::InvalidJson { .. } => "22P02",
            SqlError::UntranslatableJson { .. } => "22P05",
            SqlError::Windowing { .. } => "42P20",
            SqlError::AggregateNesting { .. } => "42803",
            SqlError::UndefinedObject { .. } | SqlError::NoBtreeOperatorClass { .. } => "42704",
            SqlError::WrongObjectType { .. }
            | SqlError::WrongObjectTypeHint { .. }
            | SqlError::WrongObjectTypeDetail { .. } => "42809",
            SqlError::WindowFrameOffset { .. } => "22013",
            SqlError::WindowArgument { function: "ntile" } => "22014",
            SqlError::WindowArgument { .. } => "22016",
            SqlError::InvalidDatetimeText { .. } => "22007",
            SqlError::DatetimeOutOfRange { .. } | SqlError::DateFieldOverflow { .. } => "22008",
            SqlError::OutOfRange { .. }
            | SqlError::IntegerOutOfRange { .. }
            | SqlError::ArgumentOutOfRange { .. }
            | SqlError::NumericFieldOverflow { .. }
            | SqlError::NumericOverflow => "22003",
            // PostgreSQL files these under "feature not supported".
            SqlError::NoIntegerFor { .. } => "0A000",
            SqlError::DatatypeMismatch { .. } => "42804",
            SqlError::UndefinedFunction { .. } => "42883",
            SqlError::AmbiguousFunction { .. } => "42725",
            SqlError::CannotCast { .. } => "42846",
            SqlError::AmbiguousColumn { .. }
            | SqlError::AmbiguousOutputColumn { .. }
            | SqlError::CommonColumnTwice { .. } => "42702",
            SqlError::SystemColumnName { .. } => "42701",
            SqlError::DuplicateAlias { .. } => "42712",
            SqlError::ReservedName { .. } => "42939",
            SqlError::Grouping { .. } | SqlError::AggregateMisplaced { .. } => "42803",
            SqlError::CardinalityViolation | SqlError::CardinalityViolationUpsert => "21000",
            SqlError::DivisionByZero => "22012",
            SqlError::FeatureNotSupported { .. }
            | SqlError::FeatureNotSupportedHint { .. }
            | SqlError::UnsupportedByPostgres { .. }
            | SqlError::UnsupportedByPostgresDetail { .. }
            | SqlError::SetOperationOrderBy
            | SqlError::SetReturningMisplaced { .. } => "0A000",
            SqlError::InvalidRecursion { .. } => "42P19",
            SqlError::MathDomain { code, .. } | SqlError::InvalidRowCount { code, .. } => code,
            SqlError::InFailedTransaction => "25P02",
            SqlError::SerializationFailure | SqlError::LayoutChanged { .. } => "40001",
            SqlError::ReadOnlyTransaction { .. } => "25006",
            SqlError::BatchTooLarge | SqlError::StackDepth => "54001",
            SqlError::ProgramLimit { .. } => "54000",
            SqlError::SubstringError { .. } => "22011",
            SqlError::TooManyColumns { .. } | SqlError::IndexTooWide { .. } => "54011",
            SqlError::GroupingLimit { code, .. } => code,
            SqlError::ViewChanged { .. } => "55000",
            SqlError::InfiniteRecursion { .. } | SqlError::InvalidObjectDefinition { .. } => {
                "42P17"
            }
            SqlError::OutOfMemory { .. } | SqlError::OutOfSharedMemory => "53200",
            SqlError::StringTooLong { .. } => "22001",
            SqlError::InvalidColumnReference { .. } => "42P10",
            SqlError::InvalidParameter { .. } | SqlError::InvalidParameterHint { .. } => "22023",
            SqlError::InvalidEscape { .. } => "22025",
            SqlError::InvalidName { .. } | SqlError::InvalidCustomParameterName { .. } => "42602",
            SqlError::UndefinedDatabase { .. } => "3D000",
            SqlError::InvalidTransactionState { .. } => "25000",
            SqlError::UndefinedParameter { .. } => "42704",
            SqlError::QueryCanceled { .. } => "57014",
            SqlError::Terminated => "57P01",
            SqlError::MustWait => "XX000",
            SqlError::DeadlockDetected { .. } => "40P01",
            SqlError::LockNotAvailable { .. } => "55P03",
            SqlError::SnapshotTooOld { .. } => "72000",
            SqlError::CantChangeParameter { .. } => "55P02",
            SqlError::BadParameterValue { .. } | SqlError::BadParameterDetail { .. } => "22023",
            SqlError::TimeZoneDisplacement { .. } => "22009",
            SqlError::InvalidFormat { .. } => "22007",
            SqlError::NullValueNotAllowed { .. } => "22004",
            SqlError::InsufficientPrivilege { .. } => "42501",
            SqlError::ActiveTransaction { .. } => "25001",
            SqlError::BadCopyFormat { .. } => "22P04",
            SqlError::UndefinedCursor { .. } => "34000",
            SqlError::InvalidTableDefinition { .. }
            | SqlError::InvalidTableDefinitionHint { .. } => "42P16",
            SqlError::DuplicateCursor { .. } => "42P03",
            SqlError::CursorNoScroll => "55000",
            SqlError::NoTransactionBlock { .. } => "25P01",
            SqlError::DuplicatePreparedStatement { .. } => "42P05",
            SqlError::UndefinedPreparedStatement { .. } => "26000",
            SqlError::WrongParameterCount { .. } => "42601",
            SqlError::NoSuchSavepoint { .. } => "3B001",
            SqlError::InvalidRegex { .. } => "2201B",
            SqlError::DependentObjects { .. }
            | SqlError::DependentObjectsOf { .. }
            | SqlError::DependentObjectsOfSeveral { .. }
            | SqlError::RequiredBySystem { .. }
            | SqlError::RequiredByColumn { .. } => "2BP01",
            SqlError::SequenceLimit { .. } => "2200H",
            SqlError::NotInPrerequisiteState { .. } => "55000",
            SqlError::GeneratedAlways { .. } => "428C9",
            SqlError::InvalidEncoding { .. } => "22021",
            SqlError::InCopy { error, .. } => error.sqlstate(),
            SqlError::Fenced => "57P04",
            SqlError::Storage(_) => "58030",
            SqlError::Corrupt(_) => "XX001",
            SqlError::Internal { .. } | SqlError::NoRelationWithOid { .. } => "XX000",
            SqlError::Lifecycle(e) => e.sqlstate(),
        }
    }

    /// The one mapping from core errors to PostgreSQL ErrorResponse fields.
    pub fn to_pg(&self) -> PgError {
        if let SqlError::InCopy { error, context } = self {
            let mut e = error.to_pg();
            e.context = Some(context.clone());
            return e;
        }
        let mut e = PgError::new(self.sqlstate(), self.to_string());
        match self {
            SqlError::Terminated => e.severity = "FATAL".into(),
            SqlError::OutOfSharedMemory => {
                e.hint = Some("You might need to increase max_locks_per_transaction.".into());
            }
            SqlError::DeadlockDetected { detail } => {
                e.detail = Some(detail.clone());
                e.hint = Some("See server log for query details.".into());
            }
            SqlError::InvalidCustomParameterName { .. } => e.detail = Some(
                "Custom parameter names must be two or more simple identifiers separated by dots."
                    .into(),
            ),
            SqlError::StackDepth => {
                e.hint = Some(format!(
                    "RockLake nests at most {} expressions and {} set operations in a statement; \
                     write long chains as IN lists or split the statement.",
                    crate::depth::MAX_EXPR_DEPTH,
                    crate::depth::MAX_SET_DEPTH
                ));
            }
            SqlError::CardinalityViolationUpsert => {
                e.hint = Some("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.".into());
            }
            SqlError::DependentObjects { detail, .. }
            | SqlError::DependentObjectsOf { detail, .. }
            | SqlError::DependentObjectsOfSeveral { detail } => {
                if !detail.is_empty() {
                    e.detail = Some(detail.clone());
                }
                e.hint = Some("Use DROP ... CASCADE to drop the dependent objects too.".into());
            }
            SqlError::ReservedName { detail, .. }
            | SqlError::UnsupportedByPostgresDetail { detail, .. } => {
                e.detail = Some(detail.clone())
            }
            SqlError::SetOperationOrderBy => {
                e.detail = Some(
                    "Only result column names can be used, not expressions or functions.".into(),
                );
                e.hint = Some("Add the expression/function to every SELECT, or move the UNION into a FROM clause.".into());
            }
            SqlError::RequiredByColumn { hint, .. }
            | SqlError::FeatureNotSupportedHint { hint, .. } => e.hint = Some(hint.clone()),
            SqlError::GeneratedAlways { detail, hint, .. } => {
                e.detail = Some(detail.clone());
                e.hint = hint.clone();
            }
            SqlError::DateFieldOverflow { .. } => {
                e.hint = Some("Perhaps you need a different \"datestyle\" setting.".into());
            }
            SqlError::InvalidFromReference { table, alias } => {
                e.hint = Some(match alias {
                    Some(alias) => {
                        format!("Perhaps you meant to reference the table alias \"{alias}\".")
                    }
                    None => format!("There is an entry for table \"{table}\", but it cannot be referenced from this part of the query."),
                });
            }
            SqlError::InvalidTargetReference { table } => {
                e.hint = Some(format!("There is an entry for table \"{table}\", but it cannot be referenced from this part of the query."));
            }
            SqlError::UnreachableColumn { name, table } => {
                e.hint = Some(format!("There is a column named \"{name}\" in table \"{table}\", but it cannot be referenced from this part of the query."));
            }
            SqlError::InvalidLateralReference { .. } => {
                e.detail = Some(
                    "The combining JOIN type must be INNER or LEFT for a LATERAL reference.".into(),
                );
            }
            SqlError::CursorNoScroll => {
                e.hint = Some("Declare it with SCROLL option to enable backward scan.".into());
            }
            SqlError::BadCopyFormat {
                hint: Some(hint), ..
            } => {
                e.hint = Some((*hint).to_string());
            }
            SqlError::UniqueViolation {
                constraint,
                schema,
                table,
                detail,
            }
            | SqlError::UniqueIndexDuplicates {
                index: constraint,
                schema,
                table,
                detail,
            } => {
                e.detail = Some(detail.clone());
                e.schema = Some(schema.clone());
                e.table = Some(table.clone());
                e.constraint = Some(constraint.clone());
            }
            SqlError::NotNullViolation {
                schema,
                table,
                column,
                detail,
            } => {
                e.detail = Some(detail.clone());
                e.schema = Some(schema.clone());
                e.table = Some(table.clone());
                e.column = Some(column.clone());
            }
            SqlError::WrongParameterCount { expected, got, .. } => {
                e.detail = Some(format!("Expected {expected} parameters but got {got}."));
            }
            SqlError::ColumnContainsNulls {
                schema,
                table,
                column,
            } => {
                e.schema = Some(schema.clone());
                e.table = Some(table.clone());
                e.column = Some(column.clone());
            }
            SqlError::BatchTooLarge => {
                e.hint = Some("Split large operations into smaller transactions.".into());
            }
            // (An empty hint is none: the same error with and without one.)
            SqlError::SyntaxHint { hint, .. } => {
                e.hint = (!hint.is_empty()).then(|| (*hint).to_string())
            }
            SqlError::LayoutChanged { table } => {
                e.detail = Some(format!(
                    "Table \"{table}\" was rewritten by a transaction that committed after this transaction's snapshot was taken."
                ));
                e.hint = Some("Retry the transaction.".into());
            }
            SqlError::AmbiguousFunction { message } => {
                let what = if message.starts_with("operator") {
                    "operator"
                } else {
                    "function"
                };
                e.hint = Some(format!(
                    "Could not choose a best candidate {what}. You might need to add explicit type casts."
                ));
            }
            SqlError::SnapshotTooOld {
                commit_seq,
                excised_below,
            } => {
                e.detail = Some(format!(
                    "The transaction reads commit {commit_seq}; excision has removed versions that commits below {excised_below} read."
                ));
                e.hint = Some(
                    "Start a new transaction. Reads that must outlive gc and excise on the writer hold a lease there (rocklake_lease).".into(),
                );
            }
            SqlError::SetReturningMisplaced { hint: true, .. } => {
                e.hint = Some(
                    "You might be able to move the set-returning function into a LATERAL FROM item."
                        .into(),
                );
            }
            SqlError::DatatypeMismatch { hint, .. }
            | SqlError::InvalidEscape { hint, .. }
            | SqlError::UndefinedFunction { hint, .. }
            | SqlError::BadParameterValue { hint, .. } => {
                e.hint = hint.clone();
            }
            SqlError::Storage(kv) if kv.transient => {
                e.hint = Some(
                    "The object store is temporarily unavailable; retry the transaction.".into(),
                );
            }
            SqlError::Corrupt(_) => {
                e.hint = Some("Run `rocklake verify` against this catalog.".into());
            }
            SqlError::InvalidParameterHint { hint, .. }
            | SqlError::WrongObjectTypeHint { hint, .. }
            | SqlError::InvalidTableDefinitionHint { hint, .. } => e.hint = Some(hint.clone()),
            SqlError::NoBtreeOperatorClass { .. } => {
                e.hint = Some("You must specify an operator class for the index or define a default operator class for the data type.".into());
            }
            SqlError::InvalidJson { detail, context }
            | SqlError::UntranslatableJson { detail, context } => {
                e.detail = Some(detail.clone());
                e.context = Some(context.clone());
            }
            SqlError::InvalidFormat { detail, hint, .. } => {
                e.detail = detail.clone();
                e.hint = hint.clone();
            }
            SqlError::NumericFieldOverflow { detail }
            | SqlError::WrongObjectTypeDetail { detail, .. }
            | SqlError::BadParameterDetail { detail, .. } => {
                e.detail = Some(detail.clone());
            }
            SqlError::Fenced => {
                e.hint = Some("Connect to the RockLake instance that now owns the catalog.".into());
            }
            SqlError::Lifecycle(l) => {
                e.hint = l.hint().map(str::to_string);
            }
            SqlError::OutOfMemory { limit } => {
                e.detail = Some(match limit {
                    0 => "The statement filled the catalog core's heap.".into(),
                    l => format!(
                        "The statement needed more than its statement_memory_limit of {}.",
                        crate::query::size_pretty(i64::try_from(*l).unwrap_or(i64::MAX))
                    ),
                });
                e.hint = Some(
                    "Narrow the statement (fewer rows, a join condition), or raise the server's statement_memory_limit.".into(),
                );
            }
            _ => {}
        }
        e
    }
}
