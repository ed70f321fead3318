//! Queries: binding sqlparser's AST to typed expressions over a scope of columns, and
//! evaluating them with PostgreSQL semantics (three-valued logic, NULL ordering, unknown-typed
//! literals resolved by context, byte-wise "C" collation).
//!
//! The catalog's statements are few and known; this is a small tree-walking evaluator with
//! hash joins on equality conditions and primary-key point lookups, not a general planner.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use sqlparser::ast::{self as ast, Expr, SelectItem, SetExpr, TableFactor};

use crate::aggregate::AggState;
use crate::api::{CopyChunks, FieldDesc, KvRead};
use crate::catalog::{Table, TableRef};
use crate::engine::Shared;
use crate::error::SqlError;
use crate::numeric::{numeric_add, numeric_div, numeric_mod, numeric_mul, numeric_neg};
use crate::txn::PendingCatalogTxn;
use crate::types::{compare, format_text, numeric_canonical, parse_text, PgType, Value};

/// A column's name: `pg_catalog`'s are static, so binding DuckDB's introspection joins
/// (hundreds of catalog columns per statement) copies no string for them.
pub type ColName = std::borrow::Cow<'static, str>;

/// A record type's fields (`PgType::Record`'s): names and types.
type RecordFields = &'static [(&'static str, PgType)];

/// A column of a scope or result.
#[derive(Debug, Clone, PartialEq)]
pub struct ColMeta {
    pub name: ColName,
    pub ty: PgType,
    pub typmod: i32,
    pub table_oid: u32,
    pub attnum: i16,
    /// Alias or table name that qualifies the column in this scope (shared by its columns).
    pub qual: Option<Rc<str>>,
    /// Not expanded by `*` (ctid).
    pub hidden: bool,
}

impl ColMeta {
    pub fn expr(name: &str, ty: PgType) -> ColMeta {
        ColMeta {
            name: ColName::Owned(name.to_string()),
            ty,
            typmod: -1,
            table_oid: 0,
            attnum: 0,
            qual: None,
            hidden: false,
        }
    }
    pub fn field(&self) -> FieldDesc {
        let ty = if self.ty == PgType::Unknown {
            PgType::Text
        } else {
            self.ty
        };
        FieldDesc {
            name: self.name.to_string(),
            table_oid: self.table_oid,
            column_id: self.attnum,
            type_oid: ty.oid(),
            type_len: ty.typlen(),
            type_mod: self.typmod,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Concat,
}

impl BinOp {
    /// The arithmetic operator's symbol (`%` for the rest).
    pub fn arithmetic_symbol(self) -> char {
        match self {
            BinOp::Add => '+',
            BinOp::Sub => '-',
            BinOp::Mul => '*',
            BinOp::Div => '/',
            _ => '%',
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
    StringAgg,
    BoolAnd,
    BoolOr,
    ArrayAgg,
    /// `var_samp` / `variance`, `var_pop`, `stddev_samp` / `stddev`, `stddev_pop`.
    VarSamp,
    VarPop,
    StddevSamp,
    StddevPop,
    /// `json_agg(x)`: its input is `to_json(x)`.
    JsonAgg,
    /// `json_object_agg(k, v)`: its inputs are `k` as text and `to_json(v)`.
    JsonObjectAgg,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AggSpec {
    pub func: AggFunc,
    pub args: Vec<BExpr>,
    pub distinct: bool,
    pub ty: PgType,
    /// `agg(x ORDER BY …)`: (key, descending, nulls first); only the collecting aggregates
    /// (`string_agg`, `array_agg`) depend on it.
    pub order: Vec<(BExpr, bool, bool)>,
    /// `agg(…) FILTER (WHERE …)`: the rows the aggregate takes.
    pub filter: Option<BExpr>,
}

impl AggSpec {
    /// Every expression the aggregate evaluates over its input rows.
    pub fn exprs(&self) -> impl Iterator<Item = &BExpr> {
        self.args
            .iter()
            .chain(self.order.iter().map(|(k, ..)| k))
            .chain(self.filter.iter())
    }
}

/// A bound, typed expression. Equal expressions are the same computation (GROUP BY matches
/// select items to its keys this way); subqueries are equal only to themselves.
#[derive(Debug, Clone, PartialEq)]
pub enum BExpr {
    Const(Value),
    Col(usize),
    /// Column of an enclosing query: (levels up, index).
    Outer(usize, usize),
    Agg(usize),
    Bin(BinOp, Box<BExpr>, Box<BExpr>),
    And(Box<BExpr>, Box<BExpr>),
    Or(Box<BExpr>, Box<BExpr>),
    Not(Box<BExpr>),
    Neg(Box<BExpr>),
    IsNull(Box<BExpr>, bool),
    IsDistinct(Box<BExpr>, Box<BExpr>, bool),
    InList(Box<BExpr>, Vec<BExpr>, bool),
    /// `x op ANY (subquery)` (`all` false) or `x op ALL (subquery)`; `IN` is `= ANY`, `NOT IN`
    /// is `<> ALL`.
    InSub(Box<BExpr>, Rc<BQuery>, BinOp, bool),
    Exists(Rc<BQuery>, bool),
    Scalar(Rc<BQuery>),
    /// `ARRAY(SELECT …)`: the subquery's single column as an array.
    ArraySub(Rc<BQuery>),
    /// `x op ANY(array)` (false: ANY, true: ALL); elements are compared as the given type.
    AnyArray(BinOp, Box<BExpr>, Box<BExpr>, bool, PgType),
    Like(Box<BExpr>, Box<BExpr>, bool, bool),
    Case(Option<Box<BExpr>>, Vec<(BExpr, BExpr)>, Option<Box<BExpr>>),
    Cast(Box<BExpr>, PgType),
    Func(String, Vec<BExpr>),
    /// Window call `n` of the select being bound. Only while binding: the select's projection
    /// is rewritten so that window results are columns ([`Windowed`]).
    Win(usize),
    /// Set-returning call `n` of the select list being bound. Only while binding: the
    /// select's projection is rewritten so that its values are columns ([`ProjectSet`]).
    Srf(usize),
    /// Parameter `$n` of a statement being described (Parse + Describe): never executed.
    /// The cell receives the type the context gives it (a comparison with a column, a cast,
    /// an INSERT target), which ParameterDescription reports.
    Param(usize, Rc<Cell<PgType>>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    /// The joined rows so far are the null side.
    Right,
    /// Both sides are null sides.
    Full,
    Cross,
}

impl JoinKind {
    /// Whether rows of this item without a match are kept, padded with NULLs.
    fn keeps_unmatched_left(self) -> bool {
        matches!(self, JoinKind::Left | JoinKind::Full)
    }

    fn keeps_unmatched_right(self) -> bool {
        matches!(self, JoinKind::Right | JoinKind::Full)
    }

    fn outer(self) -> bool {
        matches!(self, JoinKind::Left | JoinKind::Right | JoinKind::Full)
    }
}

/// The key ranges a scan reads: prefixes of the key (expressions evaluated once per
/// execution), each narrowed by a range of the next key column when there is one.
#[derive(Debug, Clone)]
pub struct KeyScan {
    /// At least one; one empty prefix when only the range narrows the scan.
    pub prefixes: Vec<Vec<BExpr>>,
    pub range: Option<KeyRange>,
}

/// One end of a key range, its key column's value encoded ([`Executor::key_ranges`]).
enum Bound {
    Open,
    /// The encoded value, and whether it is inclusive.
    At(Vec<u8>, bool),
    /// A NULL bound: no row passes.
    Null,
}

/// Bounds of an integer key column: the bound and whether it is inclusive.
#[derive(Debug, Clone, Default)]
pub struct KeyRange {
    pub lo: Option<(BExpr, bool)>,
    pub hi: Option<(BExpr, bool)>,
}

#[derive(Debug, Clone)]
pub enum Source {
    Table {
        table: TableRef,
        /// The part of the key the WHERE clause fixes: the scan reads only those key
        /// ranges. `None`: the whole table.
        keys: Option<KeyScan>,
        /// `Some(n)`: `keys` are over the columns of secondary index `n`, not the primary
        /// key.
        index: Option<usize>,
    },
    Virtual {
        schema: Option<String>,
        name: String,
    },
    Derived(Rc<BQuery>),
    Values(Vec<Vec<BExpr>>),
    /// A set-returning function in FROM (`generate_series`, `unnest`); arguments may refer
    /// to enclosing queries.
    Function {
        name: String,
        args: Vec<BExpr>,
        /// `WITH ORDINALITY`: a bigint column numbering the rows from 1 follows.
        ordinality: bool,
    },
    /// `FROM` without tables: one empty row.
    Dual,
}

#[derive(Debug, Clone)]
pub struct FromItem {
    pub kind: JoinKind,
    pub source: Source,
    pub on: Option<BExpr>,
    pub width: usize,
    /// Equi-join keys (left expr over the accumulated row, right expr over this item's row).
    pub hash_keys: Vec<(BExpr, BExpr)>,
    /// WHERE conjuncts over this item's columns only (over its own row), applied to its rows
    /// before they are joined ([`push_down_filters`]); they are taken out of the WHERE clause
    /// that runs on the joined rows.
    pub pre_filter: Option<BExpr>,
    /// The item's columns the joined row carries, in order (set by [`compact_select`]):
    /// `pre_filter` and the right-hand `hash_keys` read the item's full row, everything else
    /// the compacted joined row. `None`: all `width` columns.
    pub keep: Option<Vec<usize>>,
    pub lateral: Lateral,
}

/// How a FROM item's source sees the joined row before it (PostgreSQL's LATERAL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lateral {
    /// It cannot (a table, a subquery without LATERAL): the source runs under the query's
    /// own enclosing rows.
    No,
    /// Bound as LATERAL (a function in FROM always is) but reads nothing of that row: it runs
    /// once, under an empty row standing in for it.
    Unread,
    /// Reads that row (as its nearest enclosing row): it runs for each joined row.
    Read,
}

impl FromItem {
    /// An item joined to the rows before it as a cross product (a comma item, or the wrapped
    /// join of a parenthesized or computed-USING join).
    pub fn cross(source: Source, width: usize, lateral: Lateral) -> FromItem {
        FromItem {
            kind: JoinKind::Cross,
            source,
            on: None,
            width,
            hash_keys: vec![],
            pre_filter: None,
            keep: None,
            lateral,
        }
    }

    /// Columns this item adds to the joined row.
    fn joined_width(&self) -> usize {
        self.keep.as_ref().map_or(self.width, Vec::len)
    }
}

#[derive(Debug, Clone)]
pub struct BSelect {
    pub from: Vec<FromItem>,
    pub filter: Option<BExpr>,
    pub group: Option<Vec<BExpr>>,
    pub aggs: Vec<AggSpec>,
    pub having: Option<BExpr>,
    pub projection: Vec<BExpr>,
    pub distinct: bool,
    /// Window functions: computed over the projected rows, before DISTINCT.
    pub windowed: Option<Box<Windowed>>,
    /// Set-returning functions of the select list: each projected row becomes as many rows
    /// as its longest call returns, before DISTINCT.
    pub project_set: Option<Box<ProjectSet>>,
    /// `DISTINCT ON (…)`: the projected columns after the output ones holding its keys; the
    /// first row of each key in the query's order is kept ([`Executor::run_query`]).
    pub distinct_on: Option<Vec<usize>>,
    /// `GROUP BY ROLLUP / CUBE / GROUPING SETS`, or any GROUP BY with `GROUPING(…)`: the
    /// groups are formed once per set.
    pub grouping_sets: Option<Box<GroupingSets>>,
}

/// The grouping sets of a select ([`BSelect::group`] holds every key once). The select's
/// projection, HAVING and ORDER BY read each key (wherever an expression equals it) from
/// the row a group is evaluated on: its first input row (`base` columns, with a key that is
/// a plain column set to NULL where the set leaves it out, for subqueries' outer
/// references), then each key's value (NULL where the set leaves it out), then each key's
/// `GROUPING` bit (1 where left out).
#[derive(Debug, Clone)]
pub struct GroupingSets {
    /// Each set's keys, as indices into `group`, in PostgreSQL's order of expansion.
    pub sets: Vec<Vec<usize>>,
    pub base: usize,
}

/// The final functions of the ordered-set aggregates ([`Binder::bind_ordered_set`]): their
/// direct argument (none for `mode`), then the group's non-null sort keys in order.
const PERCENTILE_CONT: &str = "\u{0}percentile_cont";
const PERCENTILE_DISC: &str = "\u{0}percentile_disc";
const MODE: &str = "\u{0}mode";

/// Where a `*` is in a statement's text, and the columns it read: each one's qualifier (the
/// FROM item's name) and name ([`Binder::star_expansions`]).
pub type StarExpansion = (
    sqlparser::tokenizer::Location,
    Vec<(Option<String>, String)>,
);

/// A column reference a statement's text makes ([`Binder::column_refs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnRef {
    /// Where the reference's column name (its last identifier) starts in the text.
    pub at: sqlparser::tokenizer::Location,
    /// The column read: its table's OID and number (0, 0: a computed column).
    pub table_oid: u32,
    pub attnum: i16,
    /// Read from the table's own FROM item, not through a subquery's or view's column.
    pub direct: bool,
}

/// A relation a FROM item names ([`Binder::relations_read`]).
#[derive(Debug, Clone)]
pub struct RelationRead {
    /// The schema it was found in.
    pub schema: String,
    /// A stored relation's table id; `None` for a catalog relation.
    pub id: Option<u32>,
    /// Where its name starts in the statement's text.
    pub at: Option<sqlparser::tokenizer::Location>,
}

/// Views within views deeper than this are taken for a view that reads itself.
const MAX_VIEW_DEPTH: usize = 64;

/// A view's stored query (written by RockLake, so it parses).
pub(crate) fn parse_view_query(sql: &str) -> Result<ast::Query, SqlError> {
    let mut parsed =
        sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, sql)
            .map_err(|e| SqlError::internal(format!("a view's query does not parse: {e}")))?;
    match parsed.pop() {
        Some(ast::Statement::Query(mut q)) if parsed.is_empty() => {
            crate::precedence::as_postgres_groups(sql, &mut q);
            Ok(*q)
        }
        _ => Err(SqlError::internal("a view's query is not one query")),
    }
}

/// `GROUPING(args)` while its select is bound: the call's number (its arguments' places in
/// the SQL are kept by the binder for errors), then the arguments.
const GROUPING_CALL: &str = "\u{0}grouping";
/// `GROUPING(args)` once bound: each argument's bit, first argument highest.
pub(crate) const GROUPING_BITS: &str = "\u{0}grouping bits";
/// PostgreSQL's limits: CUBE's elements, grouping sets after expansion, GROUPING's
/// arguments.
const MAX_CUBE: usize = 12;
const MAX_GROUPING_SETS: usize = 4096;
const MAX_GROUPING_ARGS: usize = 31;

/// The window functions of a select. Its projection then holds, after the `visible` output
/// columns, every input the windows read; each output column that contains a window call is
/// a placeholder there, computed afterwards by its `post` expression over the projected row
/// followed by the windows' values.
#[derive(Debug, Clone)]
pub struct Windowed {
    pub specs: Vec<crate::window::WindowSpec>,
    pub post: Vec<(usize, BExpr)>,
    pub visible: usize,
}

/// The set-returning calls of a select list, run as PostgreSQL's ProjectSet: the calls of one
/// projected row run in lockstep, row `i` of the result holds each call's `i`-th value (NULL
/// past a shorter call's end), and a row whose calls all return nothing is dropped. As with
/// [`Windowed`], the projection holds after the `visible` output columns the calls'
/// arguments; the output columns holding calls are placeholders computed by `post` over the
/// projected row followed by the calls' values.
#[derive(Debug, Clone)]
pub struct ProjectSet {
    /// (function, its arguments' projected columns).
    pub calls: Vec<(String, Vec<usize>)>,
    pub post: Vec<(usize, BExpr)>,
    pub visible: usize,
}

/// The working table of a recursive query while its recursive term is bound.
#[derive(Debug)]
struct WorkTableRef {
    name: String,
    /// The query nesting depth of the recursive term (a read deeper is in a subquery).
    level: usize,
    reads: usize,
}

/// A set-returning call as bound, before the select's projection is rewritten.
#[derive(Debug)]
struct BoundSrf {
    name: String,
    args: Vec<BExpr>,
}

/// A window call as bound, before the select's projection is rewritten.
#[derive(PartialEq)]
struct BoundWindow {
    func: crate::window::WinFunc,
    ty: PgType,
    args: Vec<BExpr>,
    partition: Vec<BExpr>,
    order: Vec<(BExpr, bool, bool)>,
    frame: crate::window::Frame,
    filter: Option<BExpr>,
}

#[derive(Debug, Clone)]
pub enum BSet {
    Select(Box<BSelect>),
    /// `left op right`, `ALL` when the bool is set.
    Combine(SetOp, Box<BSet>, Box<BSet>, bool),
    Values(Vec<Vec<BExpr>>),
    Query(Rc<BQuery>),
    /// `WITH RECURSIVE`'s `base UNION [ALL] step`: `base`'s rows, then rounds of `step` over
    /// the rows the previous round added (its [`BSet::WorkTable`] `id`) until a round adds none;
    /// without ALL, rows already produced are not added again.
    Recursive {
        id: usize,
        base: Box<BSet>,
        step: Box<BSet>,
        all: bool,
    },
    /// The rows the previous round of recursive query `id` added.
    WorkTable(usize),
}

/// UNION, INTERSECT or EXCEPT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOp {
    Union,
    Intersect,
    Except,
}

impl SetOp {
    fn keyword(self) -> &'static str {
        match self {
            SetOp::Union => "UNION",
            SetOp::Intersect => "INTERSECT",
            SetOp::Except => "EXCEPT",
        }
    }
}

#[derive(Debug, Clone)]
pub struct OrderKey {
    pub expr: BExpr,
    /// Evaluate over the output row (true) or the source row (false).
    pub on_output: bool,
    pub desc: bool,
    pub nulls_first: bool,
}

#[derive(Debug, Clone)]
pub struct BQuery {
    pub id: usize,
    /// The enclosing values the query reads (empty: it is not correlated): (parents above
    /// the row it is evaluated for, column). Its rows are a function of these, so they are
    /// kept per distinct values.
    pub outer_refs: Vec<(usize, usize)>,
    pub body: BSet,
    pub order: Vec<OrderKey>,
    pub limit: Option<BExpr>,
    /// `FETCH FIRST n ROWS WITH TIES`: the rows after the `n`-th that sort equal to it too.
    pub with_ties: bool,
    pub offset: Option<BExpr>,
    pub columns: Vec<ColMeta>,
    /// Run once per statement and its rows shared by every reader: a WITH query that calls a
    /// volatile function (`random()`), or is written `AS MATERIALIZED`, as PostgreSQL
    /// materialises it (readers of one CTE must see the same rows).
    pub materialized: bool,
}

impl BQuery {
    /// The query reads enclosing rows, so it runs per outer row.
    pub fn correlated(&self) -> bool {
        !self.outer_refs.is_empty()
    }
}

/// A subquery is equal only to itself: two bindings of one text are separate computations.
impl PartialEq for BQuery {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

// ------------------------------------------------------------------ binder

/// A level of name resolution.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub cols: Vec<ColMeta>,
    /// Right-hand columns of `JOIN ... USING` / `NATURAL JOIN`: reachable only qualified,
    /// because the unqualified name means the merged (left) column.
    pub merged_away: Vec<usize>,
    /// The order `*` expands in when joins merged columns (merged columns first, as
    /// PostgreSQL does); `None` means scope order.
    pub star: Option<Vec<usize>>,
}

impl Scope {
    fn resolve(&self, qual: Option<&str>, name: &str) -> Result<Option<usize>, SqlError> {
        let mut found = None;
        for (i, c) in self.cols.iter().enumerate() {
            // The name first: it tells most columns apart by its length alone.
            if c.name != name {
                continue;
            }
            let qual_ok = match qual {
                Some(q) => c.qual.as_deref() == Some(q),
                None => !self.merged_away.contains(&i),
            };
            if qual_ok {
                if found.is_some() {
                    return Err(SqlError::AmbiguousColumn {
                        name: name.to_string(),
                    });
                }
                found = Some(i);
            }
        }
        Ok(found)
    }

    /// These names with the first `upto` columns out of reach (they keep their positions):
    /// the items before a comma, for a join condition after it, or UPDATE's target for its
    /// FROM items.
    pub fn masked(&self, upto: usize) -> Scope {
        let mut s = self.clone();
        for c in s.cols.iter_mut().take(upto) {
            // No identifier is spelt with a NUL.
            c.name = "\0".into();
            c.qual = None;
            c.hidden = true;
        }
        if let Some(order) = s.star.as_mut() {
            order.retain(|&i| i >= upto);
        }
        s
    }

    /// Appends the names of the next FROM item: a parenthesized join's merged columns and
    /// `*` order come along, moved past the columns before it.
    fn append(&mut self, item: Scope) {
        let offset = self.cols.len();
        if self.star.is_some() || item.star.is_some() {
            let mut star = self.star_order();
            star.extend(item.star_order().into_iter().map(|i| i + offset));
            self.star = Some(star);
        }
        self.merged_away
            .extend(item.merged_away.iter().map(|i| i + offset));
        self.cols.extend(item.cols);
    }

    /// Column indices `*` expands to.
    pub(crate) fn star_order(&self) -> Vec<usize> {
        match &self.star {
            Some(order) => order.clone(),
            None => (0..self.cols.len())
                .filter(|&i| !self.cols[i].hidden)
                .collect(),
        }
    }
}

/// Everything queries read: storage, the committed registry, and the transaction's own writes.
pub struct ReadCx<'a> {
    pub kv: &'a dyn KvRead,
    pub st: &'a Shared,
    pub pending: Option<&'a PendingCatalogTxn>,
    pub at: u64,
    pub user: &'a str,
    pub database: &'a str,
    pub now: i64,
    pub settings: crate::settings::View<'a>,
    /// Rows worked on since the statement started (see [`ReadCx::tick`]).
    pub ticks: std::cell::Cell<u32>,
    /// The memory the statement may add (checked by [`ReadCx::tick`]).
    pub budget: crate::mem::Budget,
    /// [`ReadCx::all_tables`] and [`ReadCx::all_schemas`], built once per reader: a catalog
    /// join builds each of its `pg_catalog` relations from them, and neither the registry nor
    /// the transaction's DDL can change while the reader borrows them.
    pub catalog: CatalogMemo,
    /// The session's cursors and its transaction's serial (`pg_cursors`).
    pub cursors: &'a crate::cursor::Cursors,
    /// The engine's sessions (`pg_stat_activity`, signalling backends).
    pub sessions: crate::activity::Sessions<'a>,
    pub txn_serial: Option<u64>,
    /// The session's `random()` generator.
    pub prng: &'a std::cell::Cell<Option<crate::prng::Prng>>,
    /// The session's `currval` / `lastval` state.
    pub seqs: &'a std::cell::RefCell<crate::sequence::SessionSeqs>,
    /// Whether the statement may not write (`nextval`, `setval`): a read-only transaction,
    /// role or replica; `None` outside a transaction, where the session's default decides
    /// (looked up only when asked: [`ReadCx::read_only`]).
    pub read_only: Option<bool>,
}

/// See [`ReadCx::catalog`].
#[derive(Debug, Default)]
pub struct CatalogMemo {
    tables: std::cell::OnceCell<Rc<[TableRef]>>,
    schemas: std::cell::OnceCell<Rc<[crate::catalog::Schema]>>,
    /// Position in `tables` of each table's OID and its primary-key index's OID.
    relations: std::cell::OnceCell<HashMap<u32, usize>>,
}

impl ReadCx<'_> {
    /// The reading transaction's id (`txid_current()`): one past the commit it reads, the
    /// first sequence number its own commit could get.
    pub fn txid(&self) -> u64 {
        self.at + 1
    }

    /// Counts one row of work: fails when the statement outgrew its memory budget (a row can
    /// be wide, so every row), and every 4096 rows asks the host whether to stop.
    pub fn tick(&self) -> Result<(), SqlError> {
        self.budget.check()?;
        let n = self.ticks.get().wrapping_add(1);
        self.ticks.set(n);
        if n.is_multiple_of(4096) {
            if let Some(message) = self.kv.interrupted() {
                return Err(SqlError::QueryCanceled { message });
            }
        }
        Ok(())
    }

    /// Resolves a table by (optional) schema and name, own uncommitted DDL first.
    pub fn find_table(&self, schema: Option<&str>, name: &str) -> Option<TableRef> {
        let matches = |t: &Table| t.name == name && schema.is_none_or(|s| s == t.schema);
        // The transaction's own definitions (created, or altered: they replace the committed
        // one), then the committed ones it has not dropped; an unqualified name goes through
        // search_path either way.
        let own = self.pending.map(|p| &p.tables);
        let replaced = |id: u32| {
            self.pending
                .is_some_and(|p| p.dropped.contains(&id) || p.tables.contains_key(&id))
        };
        let candidates: Vec<&TableRef> = own
            .into_iter()
            .flat_map(|tables| tables.values())
            .filter(|t| matches(t))
            .chain(
                self.st
                    .table_ids_by_name
                    .get(name)
                    .into_iter()
                    .flatten()
                    .filter_map(|id| self.st.tables.get(id))
                    .filter(|t| matches(t) && !replaced(t.id)),
            )
            .collect();
        if schema.is_some() || candidates.is_empty() {
            // (No table of this name: a `pg_catalog` relation, say; search_path is not read.)
            return candidates.first().map(|t| (*t).clone());
        }
        // Unqualified names: the first schema of search_path holding one.
        self.settings
            .search_path()
            .iter()
            .find_map(|s| candidates.iter().find(|t| &t.schema == s))
            .map(|t| (*t).clone())
    }

    /// Whether a relation of `schema` — a table or a primary-key index — is named `name`: the
    /// transaction's own tables and the committed ones it has not dropped or replaced, found
    /// through the registry's name indexes (CREATE TABLE asks it; its cost must not grow with
    /// the registry).
    pub fn relation_named(&self, schema: &str, name: &str) -> bool {
        let hit = |t: &Table| {
            t.schema == schema
                && (t.name == name || (!t.primary_key.is_empty() && t.pkey_name == name))
        };
        let replaced = |id: u32| {
            self.pending
                .is_some_and(|p| p.dropped.contains(&id) || p.tables.contains_key(&id))
        };
        let st = &self.st;
        self.pending
            .is_some_and(|p| p.tables.values().any(|t| hit(t)))
            || [&st.table_ids_by_name, &st.table_ids_by_pkey_name]
                .into_iter()
                .filter_map(|index| index.get(name))
                .flatten()
                .filter(|id| !replaced(**id))
                .filter_map(|id| st.tables.get(id))
                .any(|t| hit(t))
    }

    /// Refuses a table whose rows were rewritten into another layout after this reader's
    /// snapshot: the versions it sees are in the old layout (a transaction's own rewrite is
    /// read through its own writes).
    pub fn check_layout(&self, t: &Table) -> Result<(), SqlError> {
        if t.layout > self.at && t.layout != crate::catalog::LAYOUT_THIS_COMMIT {
            return Err(SqlError::LayoutChanged {
                table: t.name.clone(),
            });
        }
        Ok(())
    }

    /// The schemas of search_path that exist, in order (`current_schemas(false)`).
    pub fn existing_search_path(&self) -> Vec<String> {
        self.settings
            .search_path()
            .into_iter()
            .filter(|s| {
                let dropped = self.pending.is_some_and(|p| p.dropped_schemas.contains(s));
                (self.st.schemas.contains_key(s) && !dropped)
                    || self
                        .pending
                        .is_some_and(|p| p.schemas.iter().any(|x| &x.name == s))
                    || crate::catalog::BUILTIN_SCHEMAS.iter().any(|(n, _)| n == s)
            })
            .collect()
    }

    /// Every table the statement can see (committed and its own DDL), by id.
    pub fn all_tables(&self) -> Rc<[TableRef]> {
        self.catalog
            .tables
            .get_or_init(|| {
                let mut out: Vec<TableRef> = self
                    .st
                    .tables
                    .values()
                    .filter(|t| {
                        !self.pending.is_some_and(|p| {
                            p.dropped.contains(&t.id) || p.tables.contains_key(&t.id)
                        })
                    })
                    .cloned()
                    .collect();
                if let Some(p) = self.pending {
                    out.extend(p.tables.values().cloned());
                }
                out.sort_by_key(|t| t.id);
                out.into()
            })
            .clone()
    }

    /// Whether the statement may not write (see [`ReadCx::read_only`]'s field).
    pub fn read_only(&self) -> bool {
        self.read_only
            .unwrap_or_else(|| self.settings.transaction_defaults().1)
    }

    /// The sequences the statement can see, found through the registry's sequence index and
    /// the transaction's own definitions (not by walking every table).
    pub fn sequences(&self) -> Vec<TableRef> {
        self.indexed(&self.st.sequence_ids, |t| t.sequence.is_some())
    }

    /// The views the statement can see, found the same way through the view index.
    pub fn views(&self) -> Vec<TableRef> {
        self.indexed(&self.st.view_ids, |t| t.view.is_some())
    }

    /// The relations of one kind (`is`) the statement can see: the transaction's own
    /// definitions, then the committed ones of `ids` it neither dropped nor redefined.
    fn indexed(&self, ids: &BTreeSet<u32>, is: fn(&Table) -> bool) -> Vec<TableRef> {
        let replaced = |id: u32| {
            self.pending
                .is_some_and(|p| p.dropped.contains(&id) || p.tables.contains_key(&id))
        };
        let mut out: Vec<TableRef> = self
            .pending
            .into_iter()
            .flat_map(|p| p.tables.values())
            .filter(|t| is(t))
            .cloned()
            .collect();
        out.extend(
            ids.iter()
                .filter(|id| !replaced(**id))
                .filter_map(|id| self.st.tables.get(id))
                .cloned(),
        );
        out
    }

    /// The table or sequence of id `id`, as [`Self::sequences`] sees them (the transaction's
    /// own definitions first).
    pub fn table_by_id(&self, id: u32) -> Option<TableRef> {
        if let Some(p) = self.pending {
            if p.dropped.contains(&id) {
                return None;
            }
            if let Some(t) = p.tables.get(&id) {
                return Some(t.clone());
            }
        }
        self.st.tables.get(&id).cloned()
    }

    /// The table a `pg_class` OID names — the table itself or its primary-key index (then
    /// `true`) — among those the statement can see.
    pub fn relation_by_oid(&self, oid: u32) -> Option<(TableRef, bool)> {
        let tables = self.all_tables();
        let index = self.catalog.relations.get_or_init(|| {
            let mut m = HashMap::with_capacity(tables.len() * 2);
            for (i, t) in tables.iter().enumerate() {
                m.insert(t.oid, i);
                if !t.primary_key.is_empty() {
                    m.insert(t.pkey_oid(), i);
                }
            }
            m
        });
        let t = tables.get(*index.get(&oid)?)?;
        Some((t.clone(), t.oid != oid))
    }

    /// `pg_table_is_visible`: whether the relation is the one its bare name finds through
    /// search_path (`pg_catalog` first, as PostgreSQL searches it when the path omits it);
    /// `None` for an OID that names no relation.
    pub fn relation_visible(&self, oid: u32) -> Option<bool> {
        if let Some((schema, _)) = crate::pgcatalog::relation_of(oid) {
            return Some(
                schema == "pg_catalog" || self.existing_search_path().iter().any(|s| s == schema),
            );
        }
        let (table, is_index) = self.relation_by_oid(oid)?;
        if is_index {
            return Some(self.existing_search_path().contains(&table.schema));
        }
        Some(
            !crate::pgcatalog::is_virtual(None, &table.name)
                && self
                    .find_table(None, &table.name)
                    .is_some_and(|t| t.id == table.id),
        )
    }

    /// The comment of the relation (table, sequence or primary-key index) of `pg_class` OID
    /// `oid` (`obj_description`).
    pub fn relation_comment(&self, oid: u32) -> Option<String> {
        let (t, index) = self.relation_by_oid(oid)?;
        if index { &t.pkey_comment } else { &t.comment }.clone()
    }

    /// The comment of the constraint of OID `oid` (a primary key's).
    pub fn constraint_comment(&self, oid: u32) -> Option<String> {
        let (t, true) = self.relation_by_oid(oid)? else {
            return None;
        };
        t.pkey_constraint_comment.clone()
    }

    /// The comment of column `attnum` of the table of OID `oid` (`col_description`; number 0
    /// is the relation's own, as in `pg_description`).
    pub fn column_comment(&self, oid: u32, attnum: i64) -> Option<String> {
        if attnum == 0 {
            return self.relation_comment(oid);
        }
        let (t, false) = self.relation_by_oid(oid)? else {
            return None;
        };
        let i = usize::try_from(attnum.checked_sub(1)?).ok()?;
        t.columns.get(i)?.comment.clone()
    }

    /// The comment of the schema of OID `oid` (`obj_description(oid, 'pg_namespace')`).
    pub fn schema_comment(&self, oid: u32) -> Option<String> {
        self.all_schemas()
            .iter()
            .find(|s| s.oid == oid)?
            .comment
            .clone()
    }

    /// The table whose primary-key index is named `name`, in `schema` or else the first
    /// schema of search_path holding one (indexes are relations too).
    pub fn key_index_table(&self, schema: Option<&str>, name: &str) -> Option<TableRef> {
        let tables = self.all_tables();
        let named = |s: &str| {
            tables
                .iter()
                .find(|t| !t.primary_key.is_empty() && t.pkey_name == name && t.schema == s)
                .cloned()
        };
        match schema {
            Some(s) => named(s),
            None => self.existing_search_path().iter().find_map(|s| named(s)),
        }
    }

    /// PostgreSQL's deparsed text of a serial column's default (`pg_get_expr(adbin, adrelid)`):
    /// `nextval('s'::regclass)` with the sequence named as `regclass` writes it under this
    /// session's search_path (qualified under pg_dump's empty one). RockLake keeps the
    /// default's text for the default search_path; the column's sequence id says which it is.
    pub fn serial_default_text(&self, expr: &str, relid: u32) -> Option<String> {
        let (t, false) = self.relation_by_oid(relid)? else {
            return None;
        };
        let seq = t
            .columns
            .iter()
            .find(|c| c.default_sql.as_deref() == Some(expr))?
            .serial?;
        let seq_oid = self.table_by_id(seq)?.oid;
        let name = self.regclass_name(seq_oid)?;
        Some(format!(
            "nextval({}::regclass)",
            crate::format::quote_literal(&name)
        ))
    }

    /// `regclass`'s text (PostgreSQL's `regclassout`): the relation's name, qualified with its
    /// schema when search_path would not find it, each part quoted where needed; `None` for an
    /// OID that names no relation (written as the number).
    pub fn regclass_name(&self, oid: u32) -> Option<String> {
        let (schema, name) = match crate::pgcatalog::relation_of(oid) {
            Some((schema, name)) => (schema.to_string(), name.to_string()),
            None => {
                let (t, is_index) = self.relation_by_oid(oid)?;
                let name = if is_index { &t.pkey_name } else { &t.name };
                (t.schema.clone(), name.clone())
            }
        };
        let quote = crate::pgcatalog::quote_ident;
        Some(if self.relation_visible(oid)? {
            quote(&name)
        } else {
            format!("{}.{}", quote(&schema), quote(&name))
        })
    }

    /// The text of OID `oid` as a value of `ty` (`regclass`, `regtype`, `regnamespace`), as
    /// PostgreSQL's output functions write it: the object's name, `-` for 0, the number for
    /// an OID that names nothing.
    pub fn reg_name(&self, oid: u32, ty: PgType) -> String {
        let name = match ty {
            _ if oid == 0 => Some("-".to_string()),
            PgType::Regclass => self.regclass_name(oid),
            PgType::Regtype => crate::types::any_type_by_oid(oid)
                .map(|t| format_type(t, -1))
                .or_else(|| crate::pgcatalog::other_type_name(oid)),
            PgType::Regnamespace => self
                .schema_name(oid)
                .map(|n| crate::pgcatalog::quote_ident(&n)),
            PgType::Regproc => {
                crate::pgcatalog::builtin_proc_name(oid).map(crate::pgcatalog::quote_ident)
            }
            _ => None,
        };
        name.unwrap_or_else(|| oid.to_string())
    }

    /// Writes the result's `regclass`, `regtype` and `regnamespace` columns as names
    /// ([`Self::reg_name`]), as PostgreSQL's text output does; binary output keeps the OID.
    pub fn name_reg_columns(&self, types: &[PgType], rows: &mut [Vec<Value>]) {
        let cols: Vec<(usize, PgType)> = types
            .iter()
            .enumerate()
            .filter(|(_, t)| t.is_reg())
            .map(|(i, t)| (i, *t))
            .collect();
        if cols.is_empty() {
            return;
        }
        for row in rows {
            for &(c, ty) in &cols {
                if let Some(Value::Int(oid)) = row.get(c) {
                    if let Ok(oid) = u32::try_from(*oid) {
                        row[c] = Value::text(self.reg_name(oid, ty));
                    }
                }
            }
        }
    }

    /// Name of a schema by OID (built-in or user).
    pub fn schema_name(&self, oid: u32) -> Option<String> {
        match crate::catalog::BUILTIN_SCHEMAS
            .iter()
            .find(|(_, o)| *o == oid)
        {
            Some((n, _)) => Some(n.to_string()),
            None => self
                .all_schemas()
                .iter()
                .find(|s| s.oid == oid)
                .map(|s| s.name.clone()),
        }
    }

    /// OID of a schema by name (built-in or user).
    pub fn schema_oid(&self, name: &str) -> Option<u32> {
        match crate::catalog::BUILTIN_SCHEMAS
            .iter()
            .find(|(n, _)| *n == name)
        {
            Some((_, oid)) => Some(*oid),
            None => self
                .all_schemas()
                .iter()
                .find(|s| s.name == name)
                .map(|s| s.oid),
        }
    }

    /// Every user schema the statement can see (committed, then its own).
    pub fn all_schemas(&self) -> Rc<[crate::catalog::Schema]> {
        self.catalog
            .schemas
            .get_or_init(|| {
                let mut out: Vec<crate::catalog::Schema> =
                    self.st.schemas.values().cloned().collect();
                if let Some(p) = self.pending {
                    // Dropped, or replaced by the transaction's own definition.
                    out.retain(|s| {
                        !p.dropped_schemas.contains(&s.name)
                            && !p.schemas.iter().any(|x| x.name == s.name)
                    });
                    out.extend(p.schemas.iter().cloned());
                }
                out.into()
            })
            .clone()
    }
}

/// A query being bound and the enclosing rows it reads.
struct Level {
    /// Enclosing scopes when it was entered (its own parent included).
    outer_len: usize,
    /// [`BQuery::outer_refs`].
    refs: Vec<(usize, usize)>,
}

pub struct Binder<'a, 'b> {
    pub cx: &'a ReadCx<'b>,
    /// Describing a statement: `$n` binds as [`BExpr::Param`], typed here by its context.
    params: Option<BTreeMap<usize, Rc<Cell<PgType>>>>,
    /// Enclosing scopes, innermost last, each with the number of queries being bound when it
    /// was entered: a reference to it makes every query bound since correlated.
    outer: Vec<(Scope, usize)>,
    ctes: Vec<HashMap<String, Rc<BQuery>>>,
    next_id: usize,
    /// One per query being bound, innermost last.
    levels: Vec<Level>,
    /// Set when the statement's result may depend on more than the committed tables it names
    /// and the commit point it reads: a function outside [`DETERMINISTIC_FUNCTIONS`], a
    /// virtual (pg_catalog) or set-returning relation, a table found through search_path, or a
    /// cast to regclass / regtype / regnamespace (catalog lookups by name).
    session_dependent: bool,
    /// Reads a `pg_catalog` / `information_schema` relation derived from the registry.
    reads_catalog: bool,
    /// Found a stored table (or sequence) by name: the plan holds its definition.
    reads_stored: bool,
    /// The names bound to `pg_catalog` / `information_schema` relations (schema as written):
    /// each is one only while no stored relation takes the name ([`Binder::virtual_names`]).
    virtual_names: Vec<(Option<String>, String)>,
    /// Calls of volatile functions bound so far (`random()`, `gen_random_uuid()`,
    /// `setseed()`): a WITH query that makes any is materialised.
    volatile_calls: usize,
    /// The FROM items of functions returning one scalar column (by their columns' shared
    /// qualifier): PostgreSQL reads such an item's name as that column (`SELECT e->>'n' FROM
    /// json_array_elements(j) AS e`).
    scalar_functions: Vec<Rc<str>>,
    /// The FROM items of functions returning records (`json_each`, `aclexplode`): their name
    /// reads as the record of their columns (`SELECT e FROM json_each(j) AS e`).
    record_functions: Vec<(Rc<str>, RecordFields)>,
    /// The first error of evaluating an immutable expression over constants while binding:
    /// PostgreSQL's planner raises it after the whole statement has been analysed (so an
    /// unknown function elsewhere in it is reported first), and even when no row is read.
    plan_error: Option<SqlError>,
    /// The window calls of the select list being bound; `None` where windows are not allowed.
    windows: Option<Vec<BoundWindow>>,
    /// The set-returning calls of the select list being bound; `None` where they are not
    /// allowed (the clause then names where, for PostgreSQL's message).
    srfs: Option<Vec<BoundSrf>>,
    /// The working table of the recursive query whose recursive term is being bound.
    worktable: Option<WorkTableRef>,
    /// The clause being bound, for "window functions are not allowed in …".
    clause: &'static str,
    /// The WINDOW clause of the select being bound: (name, definition).
    named_windows: Vec<(String, ast::WindowSpec)>,
    /// The ORDER BY keys of the query being bound that call window functions: bound with its
    /// select list as hidden items ([`Self::bind_select`]), since windows are computed over
    /// the select's rows, then sorted on by position.
    order_windows: Vec<Expr>,
    /// Where those hidden items are, and their types.
    order_window_cols: Vec<(usize, PgType)>,
    /// The arguments of each `GROUPING(…)` call bound so far, as written (an argument that
    /// is no grouping key is reported at its place).
    grouping_args: Vec<Vec<Expr>>,
    /// Views being expanded around what is bound now (their queries' own relations are not
    /// the statement's).
    view_depth: usize,
    /// The relations the statement's FROM items name (stored or catalog ones; not WITH
    /// queries), kept when `record_relations` is set: CREATE VIEW writes their schemas into
    /// its text and records the stored ones.
    pub relations_read: Vec<RelationRead>,
    pub record_relations: bool,
    /// What each `*` or `t.*` of the statement's own text read (with `record_relations`):
    /// the place of the `*`, and each column's qualifier and name. CREATE VIEW writes them
    /// out, as PostgreSQL fixes a view's columns when it is made.
    pub star_expansions: Vec<StarExpansion>,
    /// Each column reference of the statement's own text (with `record_relations`), in the
    /// order bound: what a view's query reads, by identity, for a rename to keep.
    pub column_refs: Vec<ColumnRef>,
    /// Qualifiers of the stored tables FROM items read (with `record_relations`): a column
    /// of one of these is read from the table itself, not through a subquery's column.
    table_quals: Vec<Rc<str>>,
}

/// Functions whose result depends only on their arguments (no clock, session, settings or
/// catalog lookups): a statement using only these may be answered from the copy cache.
const DETERMINISTIC_FUNCTIONS: &[&str] = &[
    "count",
    "grouping",
    "sum",
    "min",
    "max",
    "avg",
    "string_agg",
    "bool_and",
    "every",
    "bool_or",
    "array_agg",
    "variance",
    "var_samp",
    "var_pop",
    "stddev",
    "stddev_samp",
    "stddev_pop",
    "lower",
    "upper",
    "concat",
    "array_to_string",
    "replace",
    "substr",
    "substring",
    "btrim",
    "trim",
    "ltrim",
    "rtrim",
    "quote_ident",
    "md5",
    "split_part",
    "string_to_array",
    "regexp_replace",
    "regexp_match",
    "regexp_like",
    "regexp_count",
    "regexp_substr",
    "pg_typeof",
    "left",
    "right",
    "repeat",
    "chr",
    "length",
    "char_length",
    "octet_length",
    "strpos",
    "position",
    "array_length",
    "array_upper",
    "array_lower",
    "starts_with",
    "coalesce",
    "nullif",
    "greatest",
    "least",
    "abs",
    "round",
    "trunc",
    "floor",
    "ceil",
    "ceiling",
];

/// Functions that read a `char(n)` argument with its padding: those of `bpchar` itself
/// (`octet_length`) and those taking any type (`concat`, `format`, `coalesce`, …, whose
/// result keeps the type or prints the value as `bpchar` prints it).
const KEEPS_CHAR_PADDING: &[&str] = &[
    "octet_length",
    "concat",
    "concat_ws",
    "format",
    "coalesce",
    "nullif",
    "greatest",
    "least",
    "pg_typeof",
    "pg_column_size",
    "json_build_object",
    "json_build_array",
    "array_append",
    "array_prepend",
    "array_position",
    "array_positions",
    "array_cat",
    "array_remove",
    "array_replace",
    "array_ndims",
    "array_dims",
    "to_json",
    "row",
];

/// The stored table or sequence a relation name in FROM finds ([`Binder::bind_relation`]
/// looks there before the `pg_catalog` / `information_schema` relations).
fn stored_relation(cx: &ReadCx<'_>, schema: Option<&str>, name: &str) -> Option<TableRef> {
    match schema {
        Some("pg_catalog") | Some("information_schema") => None,
        _ => cx.find_table(schema, name),
    }
}

/// Whether a catalog relation's rows depend on the session, or its unqualified name is also a
/// committed table's, which could mean that table under another search_path.
fn shadowed_or_session(cx: &ReadCx<'_>, schema: Option<&str>, name: &str) -> bool {
    (schema.is_none() && cx.st.table_ids_by_name.contains_key(name))
        || crate::pgcatalog::depends_on_session(schema, name)
}

/// A subquery's or CTE's untyped-literal columns are text to the query reading them, as
/// PostgreSQL 10+ resolves them (`SELECT x + 1 FROM (SELECT '1' AS x) s` is text + integer).
fn resolve_unknown_columns(cols: &mut [ColMeta]) {
    for c in cols.iter_mut().filter(|c| c.ty == PgType::Unknown) {
        c.ty = PgType::Text;
    }
}

/// The unquoted word `DEFAULT` (sqlparser reads it as an identifier where a value goes).
pub fn is_default_keyword(e: &Expr) -> bool {
    match e {
        // `(DEFAULT)` is DEFAULT too.
        Expr::Nested(inner) => is_default_keyword(inner),
        Expr::Identifier(i) => i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"),
        _ => false,
    }
}

/// An identifier as PostgreSQL folds it: unquoted, only ASCII letters are lowered (its
/// `downcase_identifier` in a UTF-8 database), so `Ä` stays `Ä`.
pub(crate) fn ident(i: &ast::Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_ascii_lowercase()
    }
}

pub fn object_name(n: &ast::ObjectName) -> Vec<String> {
    n.0.iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => ident(i),
            other => other.to_string(),
        })
        .collect()
}

/// Splits `[db.]schema.name` into (schema, name).
pub fn split_name(parts: &[String]) -> Result<(Option<String>, String), SqlError> {
    match parts {
        [n] => Ok((None, n.clone())),
        [s, n] => Ok((Some(s.clone()), n.clone())),
        [_, s, n] => Ok((Some(s.clone()), n.clone())),
        _ => Err(SqlError::Syntax {
            message: format!(
                "improper qualified name (too many dotted names): {}",
                parts.join(".")
            ),
        }),
    }
}

fn const_ty(v: &Value) -> PgType {
    match v {
        Value::Null | Value::Text(_) => PgType::Unknown,
        Value::Bool(_) => PgType::Bool,
        Value::Int(i) if i32::try_from(*i).is_ok() => PgType::Int4,
        Value::Int(_) => PgType::Int8,
        Value::Float(_) => PgType::Float8,
        Value::Numeric(_) => PgType::Numeric,
        _ => PgType::Unknown,
    }
}

/// Converts a set operation branch's output columns from the types it has to the types the
/// set operation resolved.
fn coerce_branch(set: BSet, from: &[PgType], to: &[PgType]) -> Result<BSet, SqlError> {
    if from == to {
        return Ok(set);
    }
    let convert = |exprs: &mut [BExpr]| -> Result<(), SqlError> {
        for (i, e) in exprs.iter_mut().enumerate() {
            if let (Some(f), Some(&t)) = (from.get(i), to.get(i)) {
                if *f != t {
                    let x = std::mem::replace(e, BExpr::Const(Value::Null));
                    if through_zone(*f, t) {
                        *e = zone_convert(x, *f, t)?;
                        continue;
                    }
                    // Numbers change representation (an integer in a double precision column
                    // is a float, or UNION would keep 0 and 0.0 apart); texts do not.
                    let renumber = (f.is_numeric_family() && t.is_numeric_family())
                        || (*f == PgType::Date
                            && matches!(t, PgType::Timestamp | PgType::Timestamptz));
                    *e = match coerce_expr(x, t)? {
                        BExpr::Const(v) if renumber => BExpr::Const(cast_value(v, t)?),
                        c @ BExpr::Const(_) => c,
                        other if renumber => BExpr::Cast(Box::new(other), t),
                        other => other,
                    };
                }
            }
        }
        Ok(())
    };
    Ok(match set {
        BSet::Select(mut s) => {
            convert(&mut s.projection)?;
            // An output column holding a window or set-returning call is filled in by its
            // `post` expression.
            let windows = s.windowed.iter_mut().flat_map(|w| w.post.iter_mut());
            let calls = s.project_set.iter_mut().flat_map(|p| p.post.iter_mut());
            for (j, e) in windows.chain(calls) {
                if let (Some(f), Some(&t)) = (from.get(*j), to.get(*j)) {
                    if *f != t {
                        let x = std::mem::replace(e, BExpr::Const(Value::Null));
                        *e = if through_zone(*f, t) {
                            zone_convert(x, *f, t)?
                        } else {
                            BExpr::Cast(Box::new(x), t)
                        };
                    }
                }
            }
            BSet::Select(s)
        }
        BSet::Combine(op, l, r, all) => BSet::Combine(
            op,
            Box::new(coerce_branch(*l, from, to)?),
            Box::new(coerce_branch(*r, from, to)?),
            all,
        ),
        // Its terms' rows are the working table's too: converted where read.
        s @ (BSet::Recursive { .. } | BSet::WorkTable(_)) => {
            if from != to {
                return Err(SqlError::feature(
                    "a recursive query as a branch of a set operation of other types",
                ));
            }
            s
        }
        BSet::Values(mut rows) => {
            for row in &mut rows {
                convert(row)?;
            }
            BSet::Values(rows)
        }
        BSet::Query(q) => {
            let mut q = (*q).clone();
            let own: Vec<PgType> = q.columns.iter().map(|c| c.ty).collect();
            q.body = coerce_branch(q.body, &own, to)?;
            for (c, &t) in q.columns.iter_mut().zip(to) {
                c.ty = t;
            }
            BSet::Query(Rc::new(q))
        }
    })
}

/// Type category for comparison compatibility.
fn category(t: PgType) -> u8 {
    match t {
        PgType::Unknown => 0,
        t if t.is_numeric_family() => 1,
        t if t.is_string() => 2,
        PgType::Bool => 3,
        PgType::Timestamp | PgType::Timestamptz | PgType::Date => 4,
        PgType::Bytea => 5,
        PgType::Uuid => 6,
        PgType::Interval => 7,
        PgType::Time => 8,
        PgType::Tid => 9,
        t if t.is_array() => 10,
        PgType::Xid => 11,
        PgType::Json => 13,
        PgType::Record(_) => 14,
        _ => 12,
    }
}

/// Integer expressions compute in i64: a smallint or integer result is range-checked as
/// PostgreSQL's int2/int4 operators do (`integer out of range`).
fn narrow_integer(e: BExpr, ty: PgType) -> BExpr {
    match ty {
        _ if matches!(e, BExpr::Const(Value::Null)) => e,
        PgType::Int2 | PgType::Int4 => BExpr::Cast(Box::new(e), ty),
        _ => e,
    }
}

fn ambiguous(message: String) -> SqlError {
    SqlError::AmbiguousFunction { message }
}

const BIGINT_OUT_OF_RANGE: SqlError = SqlError::IntegerOutOfRange {
    type_name: "bigint",
};

/// PostgreSQL's resolution of a common type for UNION / CASE / COALESCE / IN.
pub fn common_type(a: PgType, b: PgType) -> PgType {
    use PgType::*;
    match (a, b) {
        (Unknown, x) | (x, Unknown) => x,
        (x, y) if x == y => x,
        (Float8, _) | (_, Float8) | (Float4, _) | (_, Float4)
            if a.is_numeric_family() && b.is_numeric_family() =>
        {
            Float8
        }
        (Numeric, _) | (_, Numeric) if a.is_numeric_family() && b.is_numeric_family() => Numeric,
        (Int8, _) | (_, Int8) if a.is_integer() && b.is_integer() => Int8,
        (Int4, _) | (_, Int4) if a.is_integer() && b.is_integer() => Int4,
        // Every string type converts implicitly to every other, so PostgreSQL keeps the first
        // (text only wins by coming first: it is the category's preferred type).
        (x, y) if x.is_string() && y.is_string() => x,
        (Timestamptz, Timestamp) | (Timestamp, Timestamptz) => Timestamptz,
        (Date, t @ (Timestamp | Timestamptz)) | (t @ (Timestamp | Timestamptz), Date) => t,
        // Records of other fields: a record whose fields are not known (read as text).
        (Record(_), Record(_)) => Record(&[]),
        (x, _) => x,
    }
}

/// An integer of a number conversion or of arithmetic, checked against its integer type's
/// range with PostgreSQL's error (`integer out of range`).
fn fit_integer(i: i128, to: PgType) -> Result<Value, SqlError> {
    let (lo, hi, type_name) = match to {
        PgType::Int2 => (i16::MIN.into(), i16::MAX.into(), "smallint"),
        PgType::Int4 => (i32::MIN.into(), i32::MAX.into(), "integer"),
        _ => (i64::MIN.into(), i64::MAX.into(), "bigint"),
    };
    if i < lo || i > hi {
        return Err(SqlError::IntegerOutOfRange { type_name });
    }
    i64::try_from(i)
        .map(Value::Int)
        .map_err(|_| SqlError::IntegerOutOfRange { type_name })
}

/// Functions over the objects of catalogs RockLake keeps empty (triggers, rules, functions,
/// operators, …: decision 0030), which psql and pg_dump call: they bind, and would answer NULL
/// for an OID that names nothing, as PostgreSQL's do.
const OF_EMPTY_CATALOGS_TEXT: &[&str] = &[
    "pg_get_triggerdef",
    "pg_get_ruledef",
    "pg_get_functiondef",
    "pg_get_function_result",
    "pg_get_function_arguments",
    "pg_get_function_identity_arguments",
];
/// The visibility tests of the same catalogs (psql's `\df`, `\do`, `\dF`, `\dAc`, `\dX`).
const OF_EMPTY_CATALOGS_BOOL: &[&str] = &[
    "pg_operator_is_visible",
    "pg_opclass_is_visible",
    "pg_opfamily_is_visible",
    "pg_conversion_is_visible",
    "pg_ts_config_is_visible",
    "pg_ts_dict_is_visible",
    "pg_ts_parser_is_visible",
    "pg_ts_template_is_visible",
    "pg_statistics_obj_is_visible",
];

/// Converts a value to another type (CAST / assignment).
pub fn cast_value(v: Value, to: PgType) -> Result<Value, SqlError> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    Ok(match (v, to) {
        (Value::Int(i), PgType::Float4) => Value::Float(f64::from(i as f32)),
        (Value::Int(i), PgType::Float8) => Value::Float(i as f64),
        (Value::Int(i), PgType::Numeric) => Value::Numeric(i.to_string()),
        (Value::Int(i), PgType::Int2 | PgType::Int4 | PgType::Int8) => fit_integer(i.into(), to)?,
        (Value::Int(i), t) if t == PgType::Oid || t.is_reg() => parse_text(&i.to_string(), to)?,
        // An integer compared with an xid (`xideqint4`): its 32 bits.
        (Value::Int(i), PgType::Xid) => Value::Int((i as u32).into()),
        (Value::Int(i), PgType::Bool) => Value::Bool(i != 0),
        // `bool_int4`: PostgreSQL casts a boolean to integer only (not to smallint or bigint).
        (Value::Bool(b), PgType::Int4) => Value::Int(b.into()),
        // `time_interval` and `interval_time` (the time of day of the interval's time part).
        (Value::Time(t), PgType::Interval) => Value::Interval(crate::types::Interval {
            months: 0,
            days: 0,
            micros: t,
        }),
        (Value::Interval(iv), PgType::Time) => Value::Time(iv.micros.rem_euclid(86_400_000_000)),
        (Value::Float(f), PgType::Int2 | PgType::Int4 | PgType::Int8) => {
            // NaN and infinities saturate, then fail the range check like PostgreSQL's.
            let r = if f.is_nan() {
                i128::MAX
            } else {
                f.round_ties_even() as i128
            };
            fit_integer(r, to)?
        }
        (Value::Float(f), t) if t.is_integer() => {
            if f.is_nan() || f.is_infinite() {
                return Err(SqlError::OutOfRange {
                    type_name: to.sql_name().into(),
                    input: f.to_string(),
                });
            }
            parse_text(&format!("{}", f.round_ties_even() as i128), to)?
        }
        (Value::Float(f), PgType::Numeric) => float_numeric(f, false),
        (Value::Float(f), PgType::Float4) => Value::Float(f as f32 as f64),
        (Value::Numeric(s), t) if t.is_integer() && crate::types::numeric_is_special(&s) => {
            return Err(SqlError::NoIntegerFor {
                what: if s == "NaN" { "NaN" } else { "infinity" },
                type_name: t.sql_name(),
            })
        }
        (Value::Numeric(s), t) if t.is_integer() => {
            let r = crate::types::numeric_round(&s, 0);
            // Any digits that do not fit are out of range, not malformed.
            match (t, r.parse::<i128>()) {
                (PgType::Int2 | PgType::Int4 | PgType::Int8, Ok(i)) => fit_integer(i, to)?,
                (PgType::Int2 | PgType::Int4 | PgType::Int8, Err(_)) => fit_integer(i128::MAX, to)?,
                _ => parse_text(&r, to).map_err(|_| SqlError::OutOfRange {
                    type_name: to.sql_name().into(),
                    input: s.clone(),
                })?,
            }
        }
        (Value::Numeric(s), PgType::Float4 | PgType::Float8) => parse_text(&s, to)?,
        (v @ Value::Numeric(_), PgType::Numeric) => v,
        (Value::Bytes(b), t) if t.is_string() => {
            Value::text(format_text(&Value::Bytes(b), PgType::Bytea).unwrap_or_default())
        }
        // Text to a text type is the same text (parse_text would copy it).
        (v @ Value::Text(_), PgType::Text | PgType::Varchar | PgType::Bpchar | PgType::Name) => v,
        (Value::Text(s), t) => parse_text(&s, t)?,
        // `booltext`: the cast spells the value out (`boolout`, and so `::name`, writes `t`).
        (Value::Bool(b), PgType::Text | PgType::Varchar | PgType::Bpchar) => {
            Value::text(if b { "true" } else { "false" })
        }
        (v, t) if t.is_string() => Value::text(format_text(&v, t).unwrap_or_default()),
        (v @ Value::Timestamp(_), PgType::Timestamp | PgType::Timestamptz) => v,
        (Value::Timestamp(i64::MAX), PgType::Date) => Value::Date(i32::MAX),
        (Value::Timestamp(i64::MIN), PgType::Date) => Value::Date(i32::MIN),
        (Value::Timestamp(i64::MAX | i64::MIN), PgType::Time) => Value::Null,
        (Value::Timestamp(t), PgType::Date) => Value::Date(t.div_euclid(86_400_000_000) as i32),
        (Value::Timestamp(t), PgType::Time) => Value::Time(t.rem_euclid(86_400_000_000)),
        (Value::Date(d), PgType::Timestamp | PgType::Timestamptz) => match d {
            i32::MAX => Value::Timestamp(i64::MAX),
            i32::MIN => Value::Timestamp(i64::MIN),
            // `date2timestamp`: past 294276 AD a date has no timestamp.
            _ => Value::Timestamp(
                i64::from(d)
                    .checked_mul(86_400_000_000)
                    .filter(|t| *t < crate::datetime::END_TIMESTAMP)
                    .ok_or_else(|| SqlError::DatetimeOutOfRange {
                        message: "date out of range for timestamp".into(),
                    })?,
            ),
        },
        // Element by element (`ARRAY['1', '2']::int[]`).
        (Value::Array(items), t) if t.is_array() => {
            let elem = t.element().unwrap_or(PgType::Text);
            Value::Array(
                items
                    .iter()
                    .map(|x| cast_value(x.clone(), elem))
                    .collect::<Result<Vec<_>, _>>()?
                    .into(),
            )
        }
        (v, t) => {
            let same = matches!(
                (&v, t),
                (Value::Bool(_), PgType::Bool)
                    | (Value::Float(_), PgType::Float8)
                    | (Value::Bytes(_), PgType::Bytea | PgType::Inet)
                    | (Value::Uuid(_), PgType::Uuid)
                    | (Value::Time(_), PgType::Time)
                    | (Value::Date(_), PgType::Date)
                    | (Value::Interval(_), PgType::Interval)
                    | (Value::Tid(..), PgType::Tid)
                    | (Value::Array(_), crate::types::array_types!())
            );
            if same {
                v
            } else {
                return Err(SqlError::CannotCast {
                    from: value_type_name(&v).into(),
                    to: t.sql_name().into(),
                });
            }
        }
    })
}

/// `float8_numeric` / `float4_numeric`: the value to 15 (real: 6) significant digits, as
/// PostgreSQL prints it with `DBL_DIG` / `FLT_DIG` before reading it as numeric.
fn float_numeric(f: f64, float4: bool) -> Value {
    let text = if !f.is_finite() {
        crate::types::fmt_float(f, float4)
    } else {
        let digits = if float4 {
            format!("{:.5e}", f as f32)
        } else {
            format!("{f:.14e}")
        };
        // `%g` drops the zeros ending the fraction.
        match digits.split_once('e') {
            Some((m, e)) if m.contains('.') => {
                format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
            }
            _ => digits,
        }
    };
    Value::Numeric(numeric_canonical(&text).unwrap_or_else(|| "NaN".into()))
}

fn value_type_name(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "boolean",
        Value::Int(_) => "bigint",
        Value::Float(_) => "double precision",
        Value::Numeric(_) => "numeric",
        Value::Bytes(_) => "bytea",
        Value::Uuid(_) => "uuid",
        Value::Timestamp(_) => "timestamp with time zone",
        Value::Date(_) => "date",
        Value::Time(_) => "time without time zone",
        Value::Interval(_) => "interval",
        Value::Tid(..) => "tid",
        Value::Array(_) => "array",
        Value::Text(_) | Value::Null => "text",
    }
}

/// Rows of a set-returning function in FROM (each row counted against the statement's
/// memory budget and interrupts through `cx`).
fn set_function_rows(
    cx: &ReadCx<'_>,
    name: &str,
    args: &[Value],
) -> Result<Vec<Vec<Value>>, SqlError> {
    if args.iter().any(Value::is_null) {
        return Ok(vec![]);
    }
    match (name, args) {
        ("generate_series", [Value::Int(a), Value::Int(b), rest @ ..]) => {
            let step = match rest.first() {
                Some(Value::Int(s)) => *s,
                _ => 1,
            };
            if step == 0 {
                return Err(zero_step());
            }
            series(
                cx,
                *a,
                *b,
                step > 0,
                Value::Int,
                |i| Ok(i.checked_add(step)),
            )
        }
        ("unnest", [Value::Array(items)]) => Ok(items.iter().map(|v| vec![v.clone()]).collect()),
        ("json_each" | "json_each_text", [Value::Text(doc)]) => {
            crate::json::each(doc, name == "json_each_text")
        }
        ("json_array_elements" | "json_array_elements_text", [Value::Text(doc)]) => {
            crate::json::elements(doc, name == "json_array_elements_text", name)
        }
        ("json_object_keys", [Value::Text(doc)]) => crate::json::object_keys(doc),
        (
            "regexp_split_to_table" | "regexp_matches",
            [Value::Text(s), Value::Text(p), rest @ ..],
        ) => {
            let flags = match rest.first() {
                Some(Value::Text(f)) => crate::regex::Flags::parse(f)?,
                _ => crate::regex::Flags::default(),
            };
            if name == "regexp_split_to_table" {
                let re = crate::regex::compile(p, flags.single(name)?)?;
                Ok(crate::regex::split(s, &re)
                    .into_iter()
                    .map(|piece| vec![Value::text(piece)])
                    .collect())
            } else {
                let re = crate::regex::compile(p, flags)?;
                Ok(crate::regex::all_matches(s, &re, flags.global)
                    .into_iter()
                    .map(|groups| {
                        vec![Value::Array(
                            groups
                                .into_iter()
                                .map(|g| g.map_or(Value::Null, Value::text))
                                .collect::<Vec<_>>()
                                .into(),
                        )]
                    })
                    .collect())
            }
        }
        ("pg_get_keywords", []) => Ok(crate::keywords::KEYWORDS
            .iter()
            .map(|(word, code, bare)| {
                vec![
                    Value::text(*word),
                    Value::text((*code as char).to_string()),
                    Value::Bool(*bare),
                    Value::text(crate::keywords::category_name(*code)),
                    Value::text(if *bare {
                        "can be bare label"
                    } else {
                        "requires AS"
                    }),
                ]
            })
            .collect()),
        ("aclexplode", [Value::Array(items)]) => {
            let mut rows = Vec::new();
            for item in items.iter() {
                if let Value::Text(acl) = item {
                    rows.extend(acl_explode(cx.user, acl)?);
                }
            }
            Ok(rows)
        }
        // Each element with its 1-based position, whatever the array's lower bound.
        ("_pg_expandarray", [Value::Array(items)]) => Ok((1..)
            .zip(items.iter())
            .map(|(n, v)| vec![v.clone(), Value::Int(n)])
            .collect()),
        ("pg_options_to_table", [Value::Array(items)]) => Ok(items
            .iter()
            .filter_map(|v| match v {
                Value::Text(s) => Some(match s.split_once('=') {
                    Some((n, v)) => vec![Value::Text(n.into()), Value::Text(v.into())],
                    None => vec![Value::Text(s.clone()), Value::Null],
                }),
                _ => None,
            })
            .collect()),
        // Arrays have one dimension here, subscripts from 1 (an int2vector's from 0, bound as
        // a fourth argument): dimension 1's, or none.
        ("generate_subscripts", [Value::Array(items), Value::Int(dim), rest @ ..]) => {
            if *dim != 1 {
                return Ok(vec![]);
            }
            let lower = match rest.get(1) {
                Some(Value::Int(l)) => *l,
                _ => 1,
            };
            let mut subscripts: Vec<Vec<Value>> = (lower..lower + items.len() as i64)
                .map(|i| vec![Value::Int(i)])
                .collect();
            if matches!(rest.first(), Some(Value::Bool(true))) {
                subscripts.reverse();
            }
            Ok(subscripts)
        }
        (
            "generate_series",
            [Value::Timestamp(start), Value::Timestamp(stop), Value::Interval(step), Value::Bool(tz)],
        ) => {
            let zero = crate::types::Interval::default();
            let direction = compare(&Value::Interval(*step), &Value::Interval(zero));
            if direction == std::cmp::Ordering::Equal {
                return Err(zero_step());
            }
            let zone = crate::tz::session();
            series(
                cx,
                *start,
                *stop,
                direction.is_gt(),
                Value::Timestamp,
                |t| {
                    Ok(Some(if *tz {
                        crate::datetime::timestamptz_add(t, *step, false, &zone)?
                    } else {
                        crate::datetime::timestamp_add(t, *step, false)?
                    }))
                },
            )
        }
        _ => Err(SqlError::internal(format!("set function {name}"))),
    }
}

fn zero_step() -> SqlError {
    SqlError::InvalidParameter {
        message: "step size cannot equal zero".into(),
    }
}

/// `generate_series`' rows from `start` while they have not passed `stop` (`next` gives the
/// following value, `None` past the type's range), counted against [`MAX_SERIES_ROWS`].
fn series<T: PartialOrd + Copy>(
    cx: &ReadCx<'_>,
    start: T,
    stop: T,
    ascending: bool,
    value: impl Fn(T) -> Value,
    mut next: impl FnMut(T) -> Result<Option<T>, SqlError>,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut out = Vec::new();
    let mut current = Some(start);
    while let Some(c) = current.filter(|c| if ascending { *c <= stop } else { *c >= stop }) {
        if out.len() >= MAX_SERIES_ROWS {
            return Err(SqlError::ProgramLimit {
                message: format!("generate_series produces more than {MAX_SERIES_ROWS} rows"),
            });
        }
        cx.tick()?;
        out.push(vec![value(c)]);
        current = next(c)?;
    }
    Ok(out)
}

/// The recursive query `q` reads all of, row for row, when `q` is `SELECT <columns or
/// expressions> FROM r` (no filter, grouping, DISTINCT, ordering or set-returning calls): the
/// first `n` rows of `r` make `q`'s first `n`.
fn limited_recursion(q: &BQuery) -> Option<usize> {
    let BSet::Select(sel) = &q.body else {
        return None;
    };
    let [FromItem {
        source: Source::Derived(r),
        on: None,
        ..
    }] = sel.from.as_slice()
    else {
        return None;
    };
    let plain = q.order.is_empty()
        && sel.filter.is_none()
        && sel.group.is_none()
        && sel.aggs.is_empty()
        && !sel.distinct
        && sel.windowed.is_none()
        && sel.project_set.is_none()
        && sel.distinct_on.is_none()
        && r.order.is_empty()
        && r.limit.is_none()
        && r.offset.is_none();
    match &r.body {
        BSet::Recursive { id, .. } if plain => Some(*id),
        _ => None,
    }
}

/// The `(base, step, all)` of a WITH RECURSIVE query of the form `base UNION [ALL] step`.
fn recursive_union<'q>(
    with: &ast::With,
    cte: &'q ast::Cte,
) -> Option<(&'q SetExpr, &'q SetExpr, bool)> {
    if !with.recursive || cte.query.with.is_some() {
        return None;
    }
    match cte.query.body.as_ref() {
        SetExpr::SetOperation {
            op: ast::SetOperator::Union,
            set_quantifier,
            left,
            right,
        } => Some((
            left,
            right,
            matches!(set_quantifier, ast::SetQuantifier::All),
        )),
        _ => None,
    }
}

/// Mathematical functions of one double precision argument ([`Binder::bind_math`]).
const FLOAT_MATH: &[&str] = &[
    "sqrt", "cbrt", "exp", "ln", "log", "log10", "degrees", "radians", "sin", "cos", "tan", "asin",
    "acos", "atan",
];

/// `name(args)` of [`Binder::bind_math`] over double precision values (`sign` also over a
/// numeric), with PostgreSQL's errors for arguments outside the function's domain and
/// results outside double precision's range.
fn eval_math(name: &str, args: &[Value]) -> Result<Value, SqlError> {
    let domain = |code: &'static str, message: &str| SqlError::MathDomain {
        code,
        message: message.into(),
    };
    let f = |i: usize| match args.get(i) {
        Some(Value::Float(f)) => Some(*f),
        Some(Value::Int(n)) => Some(*n as f64),
        _ => None,
    };
    if let Some(Value::Numeric(n)) = args.first() {
        let second = match args.get(1) {
            Some(Value::Numeric(m)) => Some(m.as_str()),
            Some(_) => return Ok(Value::Null),
            None => None,
        };
        let r = match (name, second) {
            ("sqrt", None) => Some(crate::numeric::numeric_sqrt(n)?),
            ("ln", None) => Some(crate::numeric::numeric_ln(n)?),
            ("exp", None) => Some(crate::numeric::numeric_exp(n)?),
            ("log" | "log10", None) => Some(crate::numeric::numeric_log("10", n)?),
            ("log", Some(x)) => Some(crate::numeric::numeric_log(n, x)?),
            ("power", Some(y)) => Some(crate::numeric::numeric_power(n, y)?),
            _ => None,
        };
        if let Some(r) = r {
            return Ok(Value::Numeric(r));
        }
    }
    if matches!(name, "log" | "power") && args.len() == 2 && args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    if let Some(Value::Numeric(n)) = args.first() {
        // sign(numeric): -1, 0 or 1 (NaN for NaN).
        let sign = match crate::types::compare(&Value::Numeric(n.clone()), &Value::Int(0)) {
            _ if n == "NaN" => "NaN",
            std::cmp::Ordering::Less => "-1",
            std::cmp::Ordering::Equal => "0",
            std::cmp::Ordering::Greater => "1",
        };
        return Ok(Value::Numeric(sign.into()));
    }
    if name == "pi" {
        return Ok(Value::Float(std::f64::consts::PI));
    }
    let Some(x) = f(0) else {
        return Ok(Value::Null);
    };
    let overflow = || domain("22003", "value out of range: overflow");
    let checked = |r: f64| -> Result<Value, SqlError> {
        if r.is_infinite() && x.is_finite() {
            return Err(overflow());
        }
        Ok(Value::Float(r))
    };
    match name {
        "sqrt" if x < 0.0 => Err(domain(
            "2201F",
            "cannot take square root of a negative number",
        )),
        "sqrt" => Ok(Value::Float(x.sqrt())),
        "cbrt" => Ok(Value::Float(x.cbrt())),
        "exp" => {
            let r = x.exp();
            if r == 0.0 && x.is_finite() {
                return Err(domain("22003", "value out of range: underflow"));
            }
            checked(r)
        }
        "ln" | "log" | "log10" if x == 0.0 => Err(domain("2201E", "cannot take logarithm of zero")),
        "ln" | "log" | "log10" if x < 0.0 => Err(domain(
            "2201E",
            "cannot take logarithm of a negative number",
        )),
        "ln" => Ok(Value::Float(x.ln())),
        "log" | "log10" => Ok(Value::Float(x.log10())),
        "degrees" => checked(x.to_degrees()),
        "radians" => Ok(Value::Float(x.to_radians())),
        "sin" | "cos" | "tan" if x.is_infinite() => Err(domain("22003", "input is out of range")),
        "sin" => Ok(Value::Float(x.sin())),
        "cos" => Ok(Value::Float(x.cos())),
        "tan" => checked(x.tan()),
        "asin" | "acos" if !(-1.0..=1.0).contains(&x) => {
            Err(domain("22003", "input is out of range"))
        }
        "asin" => Ok(Value::Float(x.asin())),
        "acos" => Ok(Value::Float(x.acos())),
        "atan" => Ok(Value::Float(x.atan())),
        "sign" => Ok(Value::Float(if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            x
        })),
        _ => {
            let Some(y) = f(1) else {
                return Ok(Value::Null);
            };
            match name {
                "atan2" => Ok(Value::Float(x.atan2(y))),
                _ if x == 0.0 && y < 0.0 => Err(domain(
                    "2201F",
                    "zero raised to a negative power is undefined",
                )),
                _ if x < 0.0 && y.is_finite() && y.fract() != 0.0 => Err(domain(
                    "2201F",
                    "a negative number raised to a non-integer power yields a complex result",
                )),
                _ => {
                    let r = x.powf(y);
                    if r.is_infinite() && x.is_finite() && y.is_finite() {
                        return Err(overflow());
                    }
                    if r == 0.0 && x != 0.0 && y.is_finite() {
                        return Err(domain("22003", "value out of range: underflow"));
                    }
                    Ok(Value::Float(r))
                }
            }
        }
    }
}

/// The type of the values set-returning function `name` returns for arguments of `types`
/// (in FROM or a select list). Untyped literals among integers are integers.
fn set_function_type(
    name: &str,
    args: &mut Vec<BExpr>,
    types: &[PgType],
) -> Result<PgType, SqlError> {
    use PgType::{Date, Interval, Timestamp, Timestamptz, Unknown};
    let integer_or_unknown = |t: &PgType| t.is_integer() || *t == PgType::Unknown;
    let moment = |t: &PgType| matches!(t, Timestamp | Timestamptz | Date | Unknown);
    match (name, types) {
        // `generate_series(start, stop, interval)` over timestamps; a timestamptz series steps
        // in the session's zone (a fourth, bound argument says so).
        ("generate_series", [a, b, step])
            if moment(a)
                && moment(b)
                && (*step == Interval || *step == Unknown && (*a != Unknown || *b != Unknown)) =>
        {
            let to = moment_pair_type(*a, *b);
            let mut converted = Vec::with_capacity(4);
            for (i, (x, t)) in std::mem::take(args)
                .into_iter()
                .zip([*a, *b, *step])
                .enumerate()
            {
                converted.push(if i < 2 {
                    coerce_to(x, t, to)?
                } else {
                    coerce_expr(x, Interval)?
                });
            }
            converted.push(BExpr::Const(Value::Bool(to == Timestamptz)));
            *args = converted;
            Ok(to)
        }
        ("generate_series", [_, _] | [_, _, _]) if types.iter().all(integer_or_unknown) => {
            for (a, t) in args.iter_mut().zip(types) {
                if *t == PgType::Unknown {
                    let x = std::mem::replace(a, BExpr::Const(Value::Null));
                    *a = coerce_expr(x, PgType::Int4)?;
                }
            }
            Ok(if types.contains(&PgType::Int8) {
                PgType::Int8
            } else {
                PgType::Int4
            })
        }
        ("unnest", [PgType::Unknown]) => Ok(PgType::Text),
        ("pg_get_keywords", []) => Ok(PgType::Record(KEYWORD_FIELDS)),
        ("regexp_split_to_table" | "regexp_matches", [_, _] | [_, _, _])
            if types.iter().all(|t| *t == PgType::Unknown || t.is_string()) =>
        {
            for (a, t) in args.iter_mut().zip(types) {
                let x = std::mem::replace(a, BExpr::Const(Value::Null));
                *a = match t {
                    PgType::Unknown => coerce_expr(x, PgType::Text)?,
                    t => cast_from(x, *t, PgType::Text)?,
                };
            }
            Ok(if name == "regexp_matches" {
                PgType::TextArray
            } else {
                PgType::Text
            })
        }
        (
            "json_each"
            | "json_each_text"
            | "json_array_elements"
            | "json_array_elements_text"
            | "json_object_keys",
            [PgType::Json | PgType::Unknown],
        ) => {
            if types == [PgType::Unknown] {
                let x = args.pop().unwrap_or(BExpr::Const(Value::Null));
                args.push(coerce_expr(x, PgType::Json)?);
            }
            Ok(match name {
                "json_each" => PgType::Record(JSON_EACH_FIELDS),
                "json_each_text" => PgType::Record(JSON_EACH_TEXT_FIELDS),
                "json_array_elements" => PgType::Json,
                _ => PgType::Text,
            })
        }
        // aclitem[] is text[] here (`relacl`, `nspacl`, …).
        ("aclexplode", [PgType::TextArray | PgType::Unknown]) => {
            if types == [PgType::Unknown] {
                let x = args.pop().unwrap_or(BExpr::Const(Value::Null));
                args.push(coerce_expr(x, PgType::TextArray)?);
            }
            Ok(PgType::Record(ACL_FIELDS))
        }
        ("_pg_expandarray", [PgType::Unknown]) => Err(SqlError::DatatypeMismatch {
            message: "could not determine polymorphic type because input has type unknown".into(),
            hint: None,
        }),
        ("_pg_expandarray", [a]) => match a.element() {
            Some(elem) => Ok(PgType::Record(elem.expanded_array_fields())),
            None => Err(no_such_function(
                "information_schema._pg_expandarray",
                types,
            )),
        },
        ("unnest", [a]) if a.is_array() => Ok(a.element().unwrap_or(PgType::Text)),
        // generate_subscripts(anyarray, integer [, boolean]).
        ("generate_subscripts", [a, d, rest @ ..])
            if a.is_array()
                && integer_or_unknown(d)
                && matches!(rest, [] | [PgType::Bool | PgType::Unknown]) =>
        {
            let mut it = std::mem::take(args).into_iter();
            let mut bound = Vec::with_capacity(3);
            bound.extend(it.next());
            if let Some(d) = it.next() {
                bound.push(coerce_expr(d, PgType::Int4)?);
            }
            if let Some(r) = it.next() {
                bound.push(coerce_expr(r, PgType::Bool)?);
            }
            if a.is_vector() {
                if bound.len() < 3 {
                    bound.push(BExpr::Const(Value::Bool(false)));
                }
                bound.push(BExpr::Const(Value::Int(0)));
            }
            *args = bound;
            Ok(PgType::Int4)
        }
        _ => Err(no_such_function(name, types)),
    }
}

/// PostgreSQL's largest single value (MaxAllocSize less a varlena header): `repeat` refuses to
/// build more with 54000.
const MAX_VALUE_BYTES: usize = 0x3fff_ffff - 4;

/// Rows one `generate_series` may produce (the result is materialised).
const MAX_SERIES_ROWS: usize = 10_000_000;

/// PostgreSQL's MaxTupleAttributeNumber: a target list holds at most this many entries (and
/// so a result row fits a DataRow's int16 column count).
const MAX_TARGET_LIST: usize = 1664;

/// PostgreSQL's `pg_size_pretty`: bytes below 10 kB, then kB/MB/GB/TB, half-rounded.
pub(crate) fn size_pretty(bytes: i64) -> String {
    const UNITS: [(&str, i64, bool, u32); 5] = [
        ("bytes", 10 * 1024, false, 0),
        ("kB", 20 * 1024 - 1, true, 10),
        ("MB", 20 * 1024 - 1, true, 20),
        ("GB", 20 * 1024 - 1, true, 30),
        ("TB", 20 * 1024 - 1, true, 40),
    ];
    let mut size = bytes;
    for (i, (name, limit, round, bits)) in UNITS.iter().enumerate() {
        let next = UNITS.get(i + 1);
        if next.is_none() || size.abs() < *limit {
            if *round {
                size = (size + if size < 0 { -1 } else { 1 }) / 2;
            }
            return format!("{size} {name}");
        }
        if let Some((_, _, next_round, next_bits)) = next {
            let shift = next_bits - bits - u32::from(*next_round) + u32::from(*round);
            size /= 1i64 << shift;
        }
    }
    format!("{size} bytes")
}

pub fn sql_type(dt: &ast::DataType) -> Result<(PgType, i32), SqlError> {
    type_from_text(&dt.to_string())
}

/// A type written as SQL writes it (`integer`, `varchar(10)`, `pg_catalog.int4`, `text[]`):
/// the type and its typmod.
fn type_from_text(text: &str) -> Result<(PgType, i32), SqlError> {
    let lower = text.to_lowercase();
    let (base, args) = match lower.split_once('(') {
        Some((b, rest)) => {
            let inner = rest.split(')').next().unwrap_or("");
            let tail = rest.split_once(')').map(|x| x.1).unwrap_or("");
            let args: Vec<i64> = inner
                .split(',')
                .filter_map(|a| a.trim().parse().ok())
                .collect();
            (format!("{}{}", b.trim(), tail).trim().to_string(), args)
        }
        None => (lower.trim().to_string(), vec![]),
    };
    let base = base.trim_start_matches("pg_catalog.");
    // Quoted, `"char"` is the one-byte internal type; bare, `char` is `character(1)`.
    if base == "\"char\"" {
        return Ok((PgType::Char, -1));
    }
    let base = base.replace('"', "");
    if let Some(elem) = base.strip_suffix("[]") {
        // An array column's typmod is its element's, as PostgreSQL's atttypmod.
        let (elem, typmod) = crate::catalog::resolve_type_name(elem.trim(), &args)?;
        return elem
            .array_of()
            .map(|a| (a, typmod))
            .ok_or_else(|| SqlError::feature(format!("array type {text}")));
    }
    crate::catalog::resolve_type_name(&base, &args)
}

impl<'a, 'b> Binder<'a, 'b> {
    pub fn new(cx: &'a ReadCx<'b>) -> Self {
        Binder {
            cx,
            params: None,
            outer: Vec::new(),
            ctes: Vec::new(),
            next_id: 0,
            levels: Vec::new(),
            session_dependent: false,
            reads_catalog: false,
            reads_stored: false,
            virtual_names: Vec::new(),
            volatile_calls: 0,
            scalar_functions: Vec::new(),
            record_functions: Vec::new(),
            plan_error: None,
            windows: None,
            srfs: None,
            worktable: None,
            clause: "this context",
            named_windows: Vec::new(),
            order_windows: Vec::new(),
            order_window_cols: Vec::new(),
            grouping_args: Vec::new(),
            view_depth: 0,
            relations_read: Vec::new(),
            record_relations: false,
            star_expansions: Vec::new(),
            column_refs: Vec::new(),
            table_quals: Vec::new(),
        }
    }

    /// True when the statements bound so far read only committed tables named with their
    /// schema, through deterministic functions: their result is a function of the commit
    /// point they read (and the text), whatever the session.
    pub fn reads_only_committed_tables(&self) -> bool {
        !self.session_dependent && !self.reads_catalog
    }

    /// True when the statements bound so far read catalog relations derived from the
    /// registry, and otherwise only what [`Self::reads_only_committed_tables`] allows: their
    /// result is a function of the commit point, the text, and the session's user and
    /// database.
    pub fn reads_only_catalog_and_committed_tables(&self) -> bool {
        !self.session_dependent && self.reads_catalog
    }

    /// The plan depends on nothing but the text and the names it binds to `pg_catalog` /
    /// `information_schema` relations (whose columns never change): it read `pg_catalog`
    /// relations, and no stored table, sequence or session state. Those names, as written
    /// (schema, relation), which a stored relation could later take.
    pub fn binds_only_catalog(&self) -> Option<&[(Option<String>, String)]> {
        (self.reads_catalog && !self.session_dependent && !self.reads_stored)
            .then_some(self.virtual_names.as_slice())
    }

    /// Whether the relation `(schema, name)` resolves to the `pg_catalog` /
    /// `information_schema` relation of that name in `cx`, as [`Self::bind_relation`] finds
    /// it (a CTE of the name aside, which the text itself decides).
    pub fn resolves_to_catalog(cx: &ReadCx<'_>, schema: Option<&str>, name: &str) -> bool {
        stored_relation(cx, schema, name).is_none()
            && crate::pgcatalog::columns(schema, name).is_some()
            && !shadowed_or_session(cx, schema, name)
    }

    /// A binder for Parse + Describe: parameters `$n` are allowed and typed from context.
    pub fn describing(cx: &'a ReadCx<'b>) -> Self {
        Binder {
            params: Some(BTreeMap::new()),
            ..Binder::new(cx)
        }
    }

    /// The types the statement's context gave its parameters (`Unknown`: none), by number.
    pub fn param_types(&self) -> BTreeMap<usize, PgType> {
        self.params
            .iter()
            .flatten()
            .map(|(n, c)| (*n, c.get()))
            .collect()
    }

    fn new_id(&mut self) -> usize {
        self.next_id += 1;
        self.next_id
    }

    pub fn bind_query(
        &mut self,
        q: &ast::Query,
        outer: Option<&Scope>,
    ) -> Result<BQuery, SqlError> {
        // A query's window and set-returning calls belong to its own select lists only.
        let windows = self.windows.take();
        let srfs = self.srfs.take();
        let r = self.bind_query_windowless(q, outer);
        self.windows = windows;
        self.srfs = srfs;
        r
    }

    /// Runs `bind` one query level down, with `outer` (if any) as the scope its outer
    /// references resolve in; returns its result and the outer references it made.
    fn as_subquery<T>(
        &mut self,
        outer: Option<&Scope>,
        bind: impl FnOnce(&mut Self) -> T,
    ) -> (T, Vec<(usize, usize)>) {
        if let Some(o) = outer {
            self.outer.push((o.clone(), self.levels.len()));
        }
        self.levels.push(Level {
            outer_len: self.outer.len(),
            refs: Vec::new(),
        });
        let r = bind(self);
        let level = self.levels.pop();
        if outer.is_some() {
            self.outer.pop();
        }
        (r, level.map(|l| l.refs).unwrap_or_default())
    }

    fn bind_query_windowless(
        &mut self,
        q: &ast::Query,
        outer: Option<&Scope>,
    ) -> Result<BQuery, SqlError> {
        let (r, refs) = self.as_subquery(outer, |b| b.bind_query_inner(q));
        let mut bq = r?;
        bq.outer_refs = refs;
        // The outermost query is analysed: now the planner's errors. (Parse + Describe only
        // analyses, as PostgreSQL's does.)
        if self.levels.is_empty() && self.params.is_none() {
            if let Some(e) = self.plan_error.take() {
                return Err(e);
            }
        }
        Ok(bq)
    }

    /// `nextval(regclass)`, `currval(regclass)`, `setval(regclass, bigint [, boolean])`,
    /// `lastval()`: bigint, evaluated per row (see [`crate::sequence`]).
    fn bind_sequence_call(
        &mut self,
        name: String,
        args: Vec<BExpr>,
        types: &[PgType],
    ) -> Result<(BExpr, PgType), SqlError> {
        self.session_dependent = true;
        if name != "currval" {
            self.volatile_calls += 1;
        }
        let relation = |t: &PgType| {
            t.is_string()
                || matches!(
                    t,
                    PgType::Unknown
                        | PgType::Regclass
                        | PgType::Oid
                        | PgType::Int2
                        | PgType::Int4
                        | PgType::Int8
                )
        };
        let shape_ok = match (name.as_str(), types) {
            ("lastval", []) => true,
            ("nextval" | "currval", [r]) => relation(r),
            ("setval", [r, v]) => relation(r) && (v.is_integer() || *v == PgType::Unknown),
            ("setval", [r, v, c]) => {
                relation(r)
                    && (v.is_integer() || *v == PgType::Unknown)
                    && matches!(c, PgType::Bool | PgType::Unknown)
            }
            _ => false,
        };
        if !shape_ok {
            return Err(no_such_function(&name, types));
        }
        let mut out = Vec::with_capacity(args.len());
        for (i, (a, t)) in args.into_iter().zip(types).enumerate() {
            out.push(match i {
                0 if t.is_string() || *t == PgType::Unknown => {
                    BExpr::Func("regclass_in".into(), vec![a])
                }
                0 => a,
                1 => coerce_or_cast(coerce_expr(a, PgType::Int8)?, PgType::Int8)?,
                _ => coerce_expr(a, PgType::Bool)?,
            });
        }
        Ok((BExpr::Func(name, out), PgType::Int8))
    }

    /// `value` (an immutable expression evaluated over constants) as a constant, or `unfolded`
    /// with the error kept for [`Self::bind_query`] to raise.
    fn fold(&mut self, unfolded: BExpr, value: Result<Value, SqlError>) -> BExpr {
        match value {
            Ok(v) => BExpr::Const(v),
            Err(e) => {
                self.plan_error.get_or_insert(e);
                unfolded
            }
        }
    }

    fn bind_query_inner(&mut self, q: &ast::Query) -> Result<BQuery, SqlError> {
        if let Some(with) = &q.with {
            self.push_ctes(with)?;
        }
        let r = self.bind_query_body(q);
        if q.with.is_some() {
            self.pop_ctes();
        }
        r
    }

    /// Binds a WITH clause and makes its names visible to everything bound until
    /// [`Binder::pop_ctes`] (on error nothing stays pushed).
    pub fn push_ctes(&mut self, with: &ast::With) -> Result<(), SqlError> {
        self.ctes.push(HashMap::new());
        for cte in &with.cte_tables {
            let volatile_before = self.volatile_calls;
            let bound = match recursive_union(with, cte) {
                Some((base, step, all)) => self.bind_recursive_cte(cte, base, step, all),
                None => match self.bind_query(&cte.query, None) {
                    // It reads itself, but not as `base UNION [ALL] step`.
                    Err(SqlError::UndefinedTable { name })
                        if with.recursive && name == ident(&cte.alias.name) =>
                    {
                        Err(SqlError::InvalidRecursion {
                            message: format!("recursive query \"{name}\" does not have the form non-recursive-term UNION [ALL] recursive-term"),
                        })
                    }
                    other => other,
                },
            };
            let mut sub = match bound {
                Ok(sub) => sub,
                Err(e) => {
                    self.ctes.pop();
                    return Err(e);
                }
            };
            sub.materialized = self.volatile_calls > volatile_before
                || matches!(cte.materialized, Some(ast::CteAsMaterialized::Materialized));
            for (c, a) in sub.columns.iter_mut().zip(cte.alias.columns.iter()) {
                c.name = ident(&a.name).into();
            }
            resolve_unknown_columns(&mut sub.columns);
            if let Some(top) = self.ctes.last_mut() {
                top.insert(ident(&cte.alias.name), Rc::new(sub));
            }
        }
        Ok(())
    }

    pub fn pop_ctes(&mut self) {
        self.ctes.pop();
    }

    /// `name AS (base UNION [ALL] step)` of a WITH RECURSIVE whose `step` reads `name`: while
    /// `step` is bound, `name` is the working table (the rows the previous round added) with
    /// `base`'s columns ([`BSet::Recursive`]). A `step` that does not read it makes a plain
    /// query.
    fn bind_recursive_cte(
        &mut self,
        cte: &ast::Cte,
        base: &SetExpr,
        step: &SetExpr,
        all: bool,
    ) -> Result<BQuery, SqlError> {
        let name = ident(&cte.alias.name);
        let q = &cte.query;
        let refused = if q.order_by.is_some() {
            Some("ORDER BY")
        } else if q.fetch.is_some() {
            Some("LIMIT")
        } else {
            match &q.limit_clause {
                Some(ast::LimitClause::LimitOffset {
                    offset: Some(_), ..
                }) => Some("OFFSET"),
                Some(_) => Some("LIMIT"),
                None => None,
            }
        };
        let id = self.new_id();
        let (base, mut cols, _) = self.bind_set(base, &mut None)?;
        for (c, a) in cols.iter_mut().zip(cte.alias.columns.iter()) {
            c.name = ident(&a.name).into();
        }
        // Untyped literals of the non-recursive term are text, as PostgreSQL resolves them.
        let base_types: Vec<PgType> = cols.iter().map(|c| c.ty).collect();
        for c in &mut cols {
            if c.ty == PgType::Unknown {
                c.ty = PgType::Text;
                c.typmod = -1;
            }
            c.qual = None;
        }
        let types: Vec<PgType> = cols.iter().map(|c| c.ty).collect();
        let base = coerce_branch(base, &base_types, &types)?;
        let work = BQuery {
            id,
            outer_refs: Vec::new(),
            body: BSet::WorkTable(id),
            order: Vec::new(),
            limit: None,
            with_ties: false,
            offset: None,
            columns: cols.clone(),
            materialized: false,
        };
        if let Some(top) = self.ctes.last_mut() {
            top.insert(name.clone(), Rc::new(work));
        }
        let outer = self.worktable.replace(WorkTableRef {
            name: name.clone(),
            level: self.levels.len(),
            reads: 0,
        });
        let bound = self.bind_set(step, &mut None);
        let reads = std::mem::replace(&mut self.worktable, outer).map_or(0, |w| w.reads);
        if let Some(top) = self.ctes.last_mut() {
            top.remove(&name);
        }
        let (step, step_cols, _) = bound?;
        if reads == 0 {
            // Not recursive after all: a plain query.
            return self.bind_query(q, None);
        }
        if let Some(clause) = refused {
            return Err(SqlError::UnsupportedByPostgres {
                message: format!("{clause} in a recursive query is not implemented"),
            });
        }
        if step_cols.len() != cols.len() {
            return Err(SqlError::Syntax {
                message: "each UNION query must have the same number of columns".into(),
            });
        }
        for (i, (c, s)) in cols.iter().zip(&step_cols).enumerate() {
            if s.ty != c.ty && s.ty != PgType::Unknown {
                return Err(SqlError::DatatypeMismatch {
                    message: format!(
                        "recursive query \"{name}\" column {} has type {} in non-recursive term but type {} overall",
                        i + 1,
                        format_type(c.ty, c.typmod),
                        format_type(select_common(c.ty, s.ty), -1),
                    ),
                    hint: Some("Cast the output of the non-recursive term to the correct type.".into()),
                });
            }
        }
        let step_types: Vec<PgType> = step_cols.iter().map(|c| c.ty).collect();
        let step = coerce_branch(step, &step_types, &types)?;
        let body = BSet::Recursive {
            id,
            base: Box::new(base),
            step: Box::new(step),
            all,
        };
        Ok(BQuery {
            id: self.new_id(),
            outer_refs: Vec::new(),
            body,
            order: Vec::new(),
            limit: None,
            with_ties: false,
            offset: None,
            columns: cols,
            materialized: false,
        })
    }

    fn bind_query_body(&mut self, q: &ast::Query) -> Result<BQuery, SqlError> {
        let id = self.new_id();
        let mut order_src: Option<Scope> = None;
        // ORDER BY keys calling window functions are bound with the select list.
        let window_keys: Vec<Expr> = match (q.body.as_ref(), &q.order_by) {
            (ast::SetExpr::Select(_) | ast::SetExpr::Table(_), Some(ob)) => match &ob.kind {
                ast::OrderByKind::Expressions(es) => es
                    .iter()
                    .filter(|o| calls_window(&o.expr))
                    .map(|o| o.expr.clone())
                    .collect(),
                ast::OrderByKind::All(_) => Vec::new(),
            },
            _ => Vec::new(),
        };
        let outer_keys = std::mem::replace(&mut self.order_windows, window_keys);
        let outer_cols = std::mem::take(&mut self.order_window_cols);
        let bound = self.bind_set(&q.body, &mut order_src);
        self.order_windows = outer_keys;
        let mut window_cols =
            std::mem::replace(&mut self.order_window_cols, outer_cols).into_iter();
        let (mut body, columns, select_scope) = bound?;
        let mut order = Vec::new();
        // The keys bound over the select's rows: (index in `order`, their text).
        let mut expr_keys: Vec<(usize, &Expr)> = Vec::new();
        if let Some(ob) = &q.order_by {
            let exprs = match &ob.kind {
                ast::OrderByKind::Expressions(e) => e,
                ast::OrderByKind::All(_) => return Err(SqlError::feature("ORDER BY ALL")),
            };
            for oe in exprs {
                let desc = sort_desc(&oe.options)?;
                let nulls_first = oe.options.nulls_first.unwrap_or(desc);
                // Output column by ordinal or name first, then an expression over the source.
                let out_idx = match &oe.expr {
                    Expr::Value(v) => match &v.value {
                        ast::Value::Number(n, _) => {
                            let i: usize = n.parse().map_err(|_| SqlError::Syntax {
                                message: "syntax error: bad ORDER BY position".into(),
                            })?;
                            if i == 0 || i > columns.len() {
                                return Err(SqlError::InvalidColumnReference {
                                    message: format!("ORDER BY position {i} is not in select list"),
                                });
                            }
                            Some(i - 1)
                        }
                        _ => None,
                    },
                    Expr::Identifier(idn) => {
                        let exprs = match &body {
                            BSet::Select(s) => Some(s.projection.as_slice()),
                            _ => None,
                        };
                        output_column_named(&columns, exprs, &ident(idn), "ORDER BY")?
                    }
                    _ => None,
                };
                let window_col = match out_idx {
                    None if calls_window(&oe.expr) && matches!(body, BSet::Select(_)) => {
                        window_cols.next()
                    }
                    _ => None,
                };
                if let Some((i, ty)) = window_col {
                    orderable(ty)?;
                    order.push(OrderKey {
                        expr: BExpr::Col(i),
                        on_output: true,
                        desc,
                        nulls_first,
                    });
                    continue;
                }
                match out_idx {
                    Some(i) => order.push(OrderKey {
                        expr: BExpr::Col(orderable(columns[i].ty).map(|()| i)?),
                        on_output: true,
                        desc,
                        nulls_first,
                    }),
                    None => {
                        let set_operation = match q.body.as_ref() {
                            ast::SetExpr::SetOperation { .. } => true,
                            ast::SetExpr::Query(inner) => {
                                matches!(inner.body.as_ref(), ast::SetExpr::SetOperation { .. })
                            }
                            _ => false,
                        };
                        if select_scope.is_none() && set_operation {
                            // A set operation's ORDER BY reads its result columns only, by
                            // name (also in parentheses) or position.
                            let mut e = &oe.expr;
                            while let Expr::Nested(inner) = e {
                                e = inner;
                            }
                            let err = match e {
                                Expr::Identifier(idn) => {
                                    let named = output_column_named(
                                        &columns,
                                        None,
                                        &ident(idn),
                                        "ORDER BY",
                                    )?;
                                    if let Some(i) = named {
                                        order.push(OrderKey {
                                            expr: BExpr::Col(orderable(columns[i].ty).map(|()| i)?),
                                            on_output: true,
                                            desc,
                                            nulls_first,
                                        });
                                        continue;
                                    }
                                    SqlError::UndefinedColumn { name: ident(idn) }
                                }
                                Expr::CompoundIdentifier(parts) if parts.len() > 1 => {
                                    SqlError::MissingFromEntry {
                                        table: ident(&parts[parts.len() - 2]),
                                    }
                                }
                                _ => SqlError::SetOperationOrderBy,
                            };
                            if let Some(spot) = start_spot(&oe.expr) {
                                crate::errpos::note(&err, spot);
                            }
                            return Err(err);
                        }
                        let scope = select_scope.clone().ok_or_else(|| {
                            SqlError::feature("ORDER BY expression on a set operation")
                        })?;
                        let mut aggs = match &body {
                            BSet::Select(s) => s.aggs.clone(),
                            _ => vec![],
                        };
                        let clause = std::mem::replace(&mut self.clause, "ORDER BY");
                        let e = self.bind_expr(&oe.expr, &scope, Some(&mut aggs));
                        self.clause = clause;
                        let (e, et) = e?;
                        orderable(et)?;
                        if let BSet::Select(s) = &mut body {
                            let added = aggs.len() > s.aggs.len();
                            // DISTINCT rows have no values but the selected ones to sort by:
                            // a column or an aggregate not selected is refused (other
                            // expressions are left to the executor).
                            // The select list reads grouping sets' keys from their columns.
                            let as_selected = match (&s.grouping_sets, &s.group) {
                                (Some(gs), Some(keys)) => gs.read_keys(e.clone(), keys),
                                _ => e.clone(),
                            };
                            if s.distinct
                                && s.distinct_on.is_none()
                                && (matches!(e, BExpr::Col(_))
                                    || added
                                    || contains_grouping_call(&e))
                                && !s.projection.contains(&as_selected)
                            {
                                let err = SqlError::InvalidColumnReference {
                                    message: "for SELECT DISTINCT, ORDER BY expressions must \
                                              appear in select list"
                                        .into(),
                                };
                                if let Some(spot) = start_spot(&oe.expr) {
                                    crate::errpos::note(&err, spot);
                                }
                                return Err(err);
                            }
                            if added {
                                // An aggregate only the ORDER BY computes: the select's
                                // groups compute it too, and a select without GROUP BY or
                                // aggregates becomes one group, as in PostgreSQL.
                                if s.group.is_none() {
                                    s.group = Some(Vec::new());
                                    if let ast::SetExpr::Select(sel) = q.body.as_ref() {
                                        ungrouped_select_list(
                                            sel,
                                            &[],
                                            &s.projection,
                                            s.having.as_ref(),
                                            &scope,
                                            &[],
                                        )?;
                                    }
                                }
                                s.aggs = aggs;
                            }
                        }
                        expr_keys.push((order.len(), &oe.expr));
                        order.push(OrderKey {
                            expr: e,
                            on_output: false,
                            desc,
                            nulls_first,
                        });
                    }
                }
            }
        }
        // Grouping is checked once every key is bound (an aggregate in a later key groups the
        // select), as PostgreSQL checks it after analysing the clause.
        if let (BSet::Select(s), ast::SetExpr::Select(sel), Some(scope)) =
            (&body, q.body.as_ref(), &select_scope)
        {
            if let Some(keys) = &s.group {
                for (k, src) in &expr_keys {
                    let Some(key) = order.get(*k) else { continue };
                    if let Some(i) = ungrouped_column(&key.expr, keys) {
                        return Err(grouping_error(scope, i, [*src], group_by_exprs(sel)));
                    }
                }
            }
        }
        // ORDER BY reads a grouped select's keys and GROUPING bits as its select list does.
        if let (BSet::Select(s), Some(scope)) = (&mut body, &select_scope) {
            let calls = order
                .iter()
                .any(|k| !k.on_output && contains_grouping_call(&k.expr));
            if calls || s.grouping_sets.is_some() {
                let keys = s.group.clone().unwrap_or_default();
                for k in order.iter().filter(|k| !k.on_output) {
                    self.check_grouping_calls(&k.expr, &keys)?;
                }
                let gs = s.grouping_sets.get_or_insert_with(|| {
                    Box::new(GroupingSets {
                        sets: vec![(0..keys.len()).collect()],
                        base: scope.cols.len(),
                    })
                });
                for k in order.iter_mut().filter(|k| !k.on_output) {
                    let e = std::mem::replace(&mut k.expr, BExpr::Const(Value::Null));
                    k.expr = gs.read_keys(e, &keys);
                }
            }
        }
        if let BSet::Select(sel) = &body {
            if let Some(keys) = &sel.distinct_on {
                distinct_on_matches_order(sel, keys, &order)?;
            }
        }
        let empty = Scope::default();
        let (mut limit, mut offset) = (None, None);
        if let Some(lc) = &q.limit_clause {
            match lc {
                ast::LimitClause::LimitOffset {
                    limit: l,
                    offset: o,
                    ..
                } => {
                    // bigint in PostgreSQL: unknown literals and parameters take that type.
                    if let Some(l) = l {
                        let b = self.bind_expr(l, &empty, None)?.0;
                        limit = Some(limit_count(b)?);
                    }
                    if let Some(o) = o {
                        let b = self.bind_expr(&o.value, &empty, None)?.0;
                        offset = Some(limit_count(b)?);
                    }
                }
                ast::LimitClause::OffsetCommaLimit { .. } => {
                    return Err(SqlError::feature("LIMIT offset, count"))
                }
            }
        }
        // `FETCH FIRST n ROWS ONLY` is the standard's LIMIT (one row when n is left out).
        let mut with_ties = false;
        if let Some(f) = &q.fetch {
            if f.percent {
                // PostgreSQL's grammar has no PERCENT.
                return Err(crate::exec::syntax_at("PERCENT"));
            }
            if f.with_ties && order.is_empty() {
                return Err(SqlError::Syntax {
                    message: "WITH TIES cannot be specified without ORDER BY clause".into(),
                });
            }
            with_ties = f.with_ties;
            if limit.is_some() {
                // PostgreSQL's grammar has no place for both.
                return Err(SqlError::Syntax {
                    message: "syntax error at or near \"FETCH\"".into(),
                });
            }
            let n = match &f.quantity {
                Some(e) => self.bind_expr(e, &empty, None)?.0,
                None => BExpr::Const(Value::Int(1)),
            };
            limit = Some(limit_count(n)?);
        }
        // Row locks would be taken and held to COMMIT in PostgreSQL; RockLake's transactions
        // take none (a conflicting write fails at COMMIT instead), so accepting the clause
        // would promise what is not done.
        if !q.locks.is_empty() {
            return Err(SqlError::feature(
                "SELECT … FOR UPDATE / FOR SHARE (row locks; conflicting writes fail at COMMIT with 40001 instead)",
            ));
        }
        Ok(BQuery {
            id,
            outer_refs: Vec::new(),
            body,
            order,
            limit,
            with_ties,
            offset,
            columns,
            materialized: false,
        })
    }

    fn bind_set(
        &mut self,
        s: &SetExpr,
        _o: &mut Option<Scope>,
    ) -> Result<(BSet, Vec<ColMeta>, Option<Scope>), SqlError> {
        match s {
            SetExpr::Select(sel) => {
                let (b, cols, scope) = self.bind_select(sel)?;
                Ok((BSet::Select(Box::new(b)), cols, Some(scope)))
            }
            SetExpr::Query(q) => {
                let bq = self.bind_query(q, None)?;
                let cols = bq.columns.clone();
                Ok((BSet::Query(Rc::new(bq)), cols, None))
            }
            SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => {
                let op = match op {
                    ast::SetOperator::Union => SetOp::Union,
                    ast::SetOperator::Intersect => SetOp::Intersect,
                    ast::SetOperator::Except => SetOp::Except,
                    other => return Err(SqlError::feature(format!("{other}"))),
                };
                let all = match set_quantifier {
                    ast::SetQuantifier::All => true,
                    ast::SetQuantifier::None | ast::SetQuantifier::Distinct => false,
                    other => return Err(SqlError::feature(format!("{} {other}", op.keyword()))),
                };
                let (l, lc, _) = self.bind_set(left, &mut None)?;
                let (r, rc, _) = self.bind_set(right, &mut None)?;
                for side in [&l, &r] {
                    if matches!(side, BSet::Select(s) if s.distinct_on.is_some()) {
                        return Err(SqlError::feature(
                            "DISTINCT ON in a set operation's branch (put the branch in parentheses)",
                        ));
                    }
                }
                if lc.len() != rc.len() {
                    return Err(SqlError::Syntax {
                        message: format!(
                            "each {} query must have the same number of columns",
                            op.keyword()
                        ),
                    });
                }
                for (a, b) in lc.iter().zip(rc.iter()) {
                    resolve_common(op.keyword(), [a.ty, b.ty].into_iter())?;
                    if !all {
                        // Without ALL, rows are compared: json has no equality.
                        has_equality(a.ty)?;
                        has_equality(b.ty)?;
                    }
                }
                let cols: Vec<ColMeta> = lc
                    .iter()
                    .zip(rc.iter())
                    .map(|(a, b)| {
                        let ty = select_common(a.ty, b.ty);
                        let ty = if ty == PgType::Unknown {
                            PgType::Text
                        } else {
                            ty
                        };
                        let typmod = if a.ty == b.ty && a.typmod == b.typmod {
                            a.typmod
                        } else {
                            -1
                        };
                        ColMeta {
                            name: a.name.clone(),
                            ty,
                            typmod,
                            table_oid: 0,
                            attnum: 0,
                            qual: None,
                            hidden: false,
                        }
                    })
                    .collect();
                // Each branch's values become the resolved column types (an untyped '5' facing
                // a bigint column is the number 5, sorted and compared as one).
                let to: Vec<PgType> = cols.iter().map(|c| c.ty).collect();
                let types = |c: &[ColMeta]| c.iter().map(|c| c.ty).collect::<Vec<_>>();
                let l = coerce_branch(l, &types(&lc), &to)?;
                let r = coerce_branch(r, &types(&rc), &to)?;
                Ok((BSet::Combine(op, Box::new(l), Box::new(r), all), cols, None))
            }
            SetExpr::Values(v) => {
                let (rows, cols) = self.bind_values(v)?;
                Ok((BSet::Values(rows), cols, None))
            }
            // `TABLE name` is `SELECT * FROM name`.
            SetExpr::Table(t) => {
                let Some(table) = &t.table_name else {
                    return Err(SqlError::Syntax {
                        message: "syntax error at end of input".into(),
                    });
                };
                // A name, not a string constant (sqlparser reads either there).
                if [Some(table), t.schema_name.as_ref()]
                    .into_iter()
                    .flatten()
                    .any(|i| i.quote_style == Some('\''))
                {
                    return Err(crate::exec::syntax_at(&format!("'{}'", table.value)));
                }
                let name = match &t.schema_name {
                    Some(schema) => format!("{schema}.{table}"),
                    None => table.to_string(),
                };
                let select = format!("SELECT * FROM {name}");
                let parsed = sqlparser::parser::Parser::parse_sql(
                    &sqlparser::dialect::PostgreSqlDialect {},
                    &select,
                )
                .map_err(|e| SqlError::Syntax {
                    message: e.to_string(),
                })?;
                match parsed.first() {
                    Some(ast::Statement::Query(q)) => self.bind_set(&q.body, _o),
                    _ => Err(SqlError::internal("TABLE name did not read as a query")),
                }
            }
            other => Err(SqlError::feature(format!(
                "query body {}",
                first_words(&other.to_string())
            ))),
        }
    }

    fn bind_values(
        &mut self,
        v: &ast::Values,
    ) -> Result<(Vec<Vec<BExpr>>, Vec<ColMeta>), SqlError> {
        let mut rows = Vec::new();
        let mut types: Vec<PgType> = Vec::new();
        for (ri, row) in v.rows.iter().enumerate() {
            let mut out = Vec::new();
            for (ci, e) in row.iter().enumerate() {
                let (b, t) = self.bind_values_expr(e)?;
                if ri == 0 {
                    types.push(t);
                } else if ci < types.len() {
                    types[ci] = select_common(types[ci], t);
                }
                out.push((b, t));
            }
            if ri > 0 && out.len() != types.len() {
                return Err(SqlError::Syntax {
                    message: "VALUES lists must all be the same length".into(),
                });
            }
            rows.push(out);
        }
        // Unknown literals in VALUES resolve to text unless another row fixes the type.
        let types: Vec<PgType> = types
            .into_iter()
            .map(|t| {
                if t == PgType::Unknown {
                    PgType::Text
                } else {
                    t
                }
            })
            .collect();
        let rows = rows
            .into_iter()
            .map(|r| {
                r.into_iter()
                    .zip(types.iter())
                    .map(|((e, from), t)| coerce_to(e, from, *t))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let cols = types
            .iter()
            .enumerate()
            .map(|(i, t)| ColMeta::expr(&format!("column{}", i + 1), *t))
            .collect();
        Ok((rows, cols))
    }

    /// Binds a FROM list to sources and the scope of their columns.
    pub fn bind_from(
        &mut self,
        from: &[ast::TableWithJoins],
    ) -> Result<(Vec<FromItem>, Scope), SqlError> {
        self.bind_from_after(from, Scope::default(), Vec::new())
    }

    /// FROM items joined after the columns of `before` (UPDATE's or DELETE's target, which
    /// they cannot name: its columns are [`Scope::unreachable`]); the returned scope starts
    /// with `before`'s columns.
    pub fn bind_from_after(
        &mut self,
        from: &[ast::TableWithJoins],
        before: Scope,
        mut names: Vec<RangeName>,
    ) -> Result<(Vec<FromItem>, Scope), SqlError> {
        let mut items = Vec::new();
        let mut scope = before;
        let start = scope.cols.len();
        if from.is_empty() {
            items.push(FromItem::cross(Source::Dual, 0, Lateral::No));
            return Ok((items, scope));
        }
        for (comma_item, twj) in from.iter().enumerate() {
            // After a comma, a RIGHT or FULL JOIN's left side is the items after the comma
            // alone (`a, b RIGHT JOIN c` is `a × (b RIGHT JOIN c)`): those joins run as a
            // parenthesized join. (INNER and LEFT joins give the same rows run over everything
            // before.)
            let outer_after_comma = (comma_item > 0 || start > 0)
                && twj.joins.iter().any(|j| {
                    matches!(
                        j.join_operator,
                        ast::JoinOperator::Right(_)
                            | ast::JoinOperator::RightOuter(_)
                            | ast::JoinOperator::FullOuter(_)
                    )
                });
            if outer_after_comma {
                let (src, item_scope) = self.bind_nested_join(twj, &None, &scope)?;
                claim_range_names(&mut names, None, &item_scope)?;
                items.push(FromItem::cross(src, item_scope.cols.len(), Lateral::No));
                scope.append(item_scope);
                continue;
            }
            // Where this comma item starts: its joins' ON and USING see only it.
            let item_start = scope.cols.len();
            let (src, item_scope, lateral) =
                self.bind_claimed_item(&twj.relation, &scope, &mut names)?;
            items.push(FromItem::cross(src, item_scope.cols.len(), lateral.read));
            scope.append(item_scope);
            for j in &twj.joins {
                let (src, item_scope, lateral) =
                    self.bind_claimed_item(&j.relation, &scope, &mut names)?;
                // The right side's names as `*` lists them (a parenthesized join's merged
                // columns once).
                let right_star = item_scope.star_order();
                let (kind, constraint) = match &j.join_operator {
                    ast::JoinOperator::Join(c) | ast::JoinOperator::Inner(c) => {
                        (JoinKind::Inner, Some(c))
                    }
                    ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => {
                        (JoinKind::Left, Some(c))
                    }
                    ast::JoinOperator::Right(c) | ast::JoinOperator::RightOuter(c) => {
                        (JoinKind::Right, Some(c))
                    }
                    ast::JoinOperator::FullOuter(c) => (JoinKind::Full, Some(c)),
                    ast::JoinOperator::CrossJoin(_) => (JoinKind::Cross, None),
                    other => {
                        return Err(SqlError::feature(
                            format!("join type {other:?}")
                                .chars()
                                .take(60)
                                .collect::<String>(),
                        ))
                    }
                };
                // The working table of a recursive query may not be a null side: PostgreSQL's
                // rounds could not tell its rows apart from the padding.
                let worktable = |s: &Source| matches!(s, Source::Derived(q) if matches!(q.body, BSet::WorkTable(_)));
                let null_side = (kind.keeps_unmatched_left() && worktable(&src))
                    || (kind.keeps_unmatched_right() && items.iter().any(|i| worktable(&i.source)));
                if let (true, Some(w)) = (null_side, &self.worktable) {
                    return Err(SqlError::InvalidRecursion {
                        message: format!(
                            "recursive reference to query \"{}\" must not appear within an outer join",
                            w.name
                        ),
                    });
                }
                // The rows before a RIGHT or FULL JOIN are its null side: there is no row of
                // them to compute the item for.
                if let (true, Some(table)) = (kind.keeps_unmatched_right(), &lateral.first_ref) {
                    return Err(SqlError::InvalidLateralReference {
                        table: table.clone(),
                    });
                }
                let left_width = scope.cols.len();
                let width = item_scope.cols.len();
                let using = match constraint {
                    // Never read as a plain join: the alias names columns this join would
                    // not give it.
                    Some(ast::JoinConstraint::UsingAlias(..)) => {
                        return Err(SqlError::feature("JOIN … USING (…) AS alias"))
                    }
                    Some(ast::JoinConstraint::Using(names)) => Some(
                        names
                            .iter()
                            .map(|n| object_name(n).last().cloned().unwrap_or_default())
                            .collect::<Vec<_>>(),
                    ),
                    Some(ast::JoinConstraint::Natural) => {
                        let left_side = join_left_side(&scope, left_width, item_start);
                        Some(
                            right_star
                                .iter()
                                .map(|&i| &item_scope.cols[i])
                                .filter(|c| !matches!(left_side.resolve(None, &c.name), Ok(None)))
                                .map(|c| c.name.to_string())
                                .collect(),
                        )
                    }
                    _ => None,
                };
                let right_cols = item_scope.cols.clone();
                // A FULL JOIN's merged USING columns are computed (COALESCE of both sides):
                // the join so far becomes a select that adds them ([`Self::merge_full_using`]).
                let mut full_using = None;
                scope.append(item_scope);
                let mut on = None;
                let mut hash_keys = Vec::new();
                if let Some(names) = using {
                    if let Some(twice) = names
                        .iter()
                        .enumerate()
                        .find_map(|(i, n)| names[..i].contains(n).then_some(n))
                    {
                        return Err(SqlError::UsingColumnTwice {
                            name: twice.clone(),
                        });
                    }
                    // Pairs that cannot use the hash index join through the condition.
                    let mut using_residual: Vec<BExpr> = Vec::new();
                    let mut left_star = scope.star_order();
                    left_star.retain(|&i| i < left_width);
                    // The items before the comma keep their place in `*`.
                    let before_comma: Vec<usize> = left_star
                        .iter()
                        .copied()
                        .filter(|&i| i < item_start)
                        .collect();
                    left_star.retain(|&i| i >= item_start);
                    let mut merged = Vec::new();
                    let mut right_merged = Vec::new();
                    let left_side = join_left_side(&scope, left_width, item_start);
                    for name in &names {
                        let missing = |side: &'static str| SqlError::UsingColumnMissing {
                            name: name.clone(),
                            side,
                        };
                        let li = left_side
                            .resolve(None, name)
                            .map_err(|_| SqlError::CommonColumnTwice {
                                name: name.clone(),
                                side: "left",
                            })?
                            .ok_or_else(|| missing("left"))?;
                        let mut named = right_star
                            .iter()
                            .copied()
                            .filter(|&i| &right_cols[i].name == name);
                        let ri = named.next().ok_or_else(|| missing("right"))?;
                        if named.next().is_some() {
                            return Err(SqlError::CommonColumnTwice {
                                name: name.clone(),
                                side: "right",
                            });
                        }
                        merged.push(li);
                        right_merged.push(left_width + ri);
                        let (lt, rt) = (scope.cols[li].ty, right_cols[ri].ty);
                        if lt != PgType::Unknown
                            && rt != PgType::Unknown
                            && category(lt) != category(rt)
                        {
                            return Err(SqlError::DatatypeMismatch {
                                message: format!(
                                    "JOIN/USING types {} and {} cannot be matched",
                                    lt.sql_name(),
                                    rt.sql_name()
                                ),
                                hint: None,
                            });
                        }
                        if hash_joinable(Some(lt), Some(rt)) {
                            hash_keys.push((BExpr::Col(li), BExpr::Col(ri)));
                        } else {
                            using_residual.push(BExpr::Bin(
                                BinOp::Eq,
                                Box::new(BExpr::Col(li)),
                                Box::new(BExpr::Col(left_width + ri)),
                            ));
                        }
                    }
                    // A merged column's value comes from the side that is not null-extended:
                    // the left one's (INNER, LEFT), the right one's (RIGHT).
                    let (kept, away) = match kind {
                        JoinKind::Right => (right_merged.clone(), merged.clone()),
                        _ => (merged.clone(), right_merged.clone()),
                    };
                    let mut star = before_comma;
                    star.extend(kept.iter().copied());
                    star.extend(left_star.into_iter().filter(|i| !merged.contains(i)));
                    star.extend(
                        right_star
                            .iter()
                            .map(|i| left_width + i)
                            .filter(|i| !right_merged.contains(i)),
                    );
                    // A FULL JOIN's merged value is computed, as is one of two types (it has
                    // their common type).
                    let retyped = merged
                        .iter()
                        .zip(&right_merged)
                        .any(|(&l, &r)| scope.cols[l].ty != scope.cols[r].ty);
                    on = using_residual
                        .into_iter()
                        .reduce(|a, b| BExpr::And(Box::new(a), Box::new(b)));
                    if kind == JoinKind::Full || retyped {
                        full_using = Some((merged, right_merged, star));
                    } else {
                        scope.star = Some(star);
                        scope.merged_away.extend(away);
                    }
                } else if let Some(ast::JoinConstraint::On(e)) = constraint {
                    let clause = std::mem::replace(&mut self.clause, "JOIN conditions");
                    // After a comma the condition sees only its comma item (a copy of the
                    // names with the ones before masked; none is needed for the first).
                    let masked;
                    let visible = if item_start == 0 {
                        &scope
                    } else {
                        masked = scope.masked(item_start);
                        &masked
                    };
                    let bound = self
                        .bind_expr(e, visible, None)
                        .map_err(|e| unreachable_from_here(e, &scope));
                    self.clause = clause;
                    let (b, _) = bound?;
                    let mut residual = Vec::new();
                    for c in conjuncts(b) {
                        match &c {
                            // A lateral item's rows differ per joined row: no hash index.
                            // Only sides whose equal values have equal keys (see
                            // [`hash_joinable`]).
                            BExpr::Bin(BinOp::Eq, l, r)
                                if lateral.read != Lateral::Read
                                    && hash_joinable(
                                        side_type(l, &scope.cols),
                                        side_type(r, &scope.cols),
                                    ) =>
                            {
                                let (lo, ro) = (col_range(l), col_range(r));
                                match (lo, ro) {
                                    (Some(a), Some(bb)) if a < left_width && bb >= left_width => {
                                        hash_keys.push((
                                            (**l).clone(),
                                            map_cols(r, &|i| i - left_width),
                                        ));
                                    }
                                    (Some(a), Some(bb)) if bb < left_width && a >= left_width => {
                                        hash_keys.push((
                                            (**r).clone(),
                                            map_cols(l, &|i| i - left_width),
                                        ));
                                    }
                                    _ => residual.push(c),
                                }
                            }
                            _ => residual.push(c),
                        }
                    }
                    on = residual
                        .into_iter()
                        .reduce(|a, b| BExpr::And(Box::new(a), Box::new(b)));
                }
                items.push(FromItem {
                    kind,
                    source: src,
                    on,
                    width,
                    hash_keys,
                    pre_filter: None,
                    keep: None,
                    lateral: lateral.read,
                });
                if let Some((left, right, star)) = full_using {
                    let merged = self.merge_using(
                        std::mem::take(&mut items),
                        scope,
                        kind,
                        (&left, &right),
                        star,
                    )?;
                    items = vec![merged.0];
                    scope = merged.1;
                }
            }
        }
        Ok((items, scope))
    }

    /// `… JOIN … USING (cols)` whose merged columns are computed (a FULL JOIN's, or a pair of
    /// two types): the join so far (`items`, named by `scope`) runs as a select whose first
    /// columns are the merged ones — `COALESCE` of the pair in their common type, the side
    /// that is not null-extended first — reachable by their bare names; the joined columns
    /// follow, reachable qualified. `star` is the join's `*` order over `scope`, led by the
    /// pairs' columns.
    fn merge_using(
        &mut self,
        items: Vec<FromItem>,
        scope: Scope,
        kind: JoinKind,
        (left, right): (&[usize], &[usize]),
        star: Vec<usize>,
    ) -> Result<(FromItem, Scope), SqlError> {
        let m = left.len();
        let mut projection = Vec::with_capacity(m + scope.cols.len());
        let mut cols = Vec::with_capacity(m + scope.cols.len());
        for (&l, &r) in left.iter().zip(right) {
            let (lc, rc) = (&scope.cols[l], &scope.cols[r]);
            let ty = common_type(lc.ty, rc.ty);
            let (first, second) = match kind {
                JoinKind::Right => ((r, rc.ty), (l, lc.ty)),
                _ => ((l, lc.ty), (r, rc.ty)),
            };
            projection.push(BExpr::Func(
                "coalesce".into(),
                vec![
                    coerce_to(BExpr::Col(first.0), first.1, ty)?,
                    coerce_to(BExpr::Col(second.0), second.1, ty)?,
                ],
            ));
            cols.push(ColMeta {
                name: lc.name.clone(),
                ty,
                typmod: -1,
                table_oid: 0,
                attnum: 0,
                qual: None,
                hidden: false,
            });
        }
        projection.extend((0..scope.cols.len()).map(BExpr::Col));
        cols.extend(scope.cols.iter().cloned());
        let query = self.join_query(items, projection, cols.clone());
        let width = cols.len();
        // The merged pairs' own columns stay reachable only qualified.
        let mut merged_away: Vec<usize> = scope.merged_away.iter().map(|i| i + m).collect();
        merged_away.extend(left.iter().chain(right).map(|i| i + m));
        // `*`: the merged columns in place of the pairs' own.
        let mut order: Vec<usize> = (0..m).collect();
        order.extend(
            star.into_iter()
                .filter(|i| !left.contains(i) && !right.contains(i))
                .map(|i| i + m),
        );
        let item = FromItem::cross(Source::Derived(Rc::new(query)), width, Lateral::No);
        Ok((
            item,
            Scope {
                cols,
                merged_away,
                star: Some(order),
            },
        ))
    }

    /// [`Self::bind_from_item`], its range names claimed among `names` (42712 for one given
    /// twice).
    fn bind_claimed_item(
        &mut self,
        f: &TableFactor,
        left: &Scope,
        names: &mut Vec<RangeName>,
    ) -> Result<(Source, Scope, LateralUse), SqlError> {
        let (src, item_scope, lateral) = self.bind_from_item(f, left)?;
        claim_range_names(names, plain_table(f, &item_scope), &item_scope)?;
        Ok((src, item_scope, lateral))
    }

    /// One FROM item and the names it brings: a parenthesized join its merged columns and `*`
    /// order too ([`Self::bind_nested_join`]), any other item its columns.
    fn bind_from_item(
        &mut self,
        f: &TableFactor,
        left: &Scope,
    ) -> Result<(Source, Scope, LateralUse), SqlError> {
        if let TableFactor::NestedJoin {
            table_with_joins,
            alias,
        } = f
        {
            let (source, scope) = self.bind_nested_join(table_with_joins, alias, left)?;
            return Ok((source, scope, LateralUse::NONE));
        }
        let (source, cols, lateral) = self.bind_factor(f, left)?;
        Ok((
            source,
            Scope {
                cols,
                ..Scope::default()
            },
            lateral,
        ))
    }

    /// `(a JOIN b …)` in FROM: its join runs as a select of every column of its items, which
    /// keep their names (`a.x`, `b.y`, the merged columns of USING) unless an alias names the
    /// whole (`(a JOIN b USING (id)) AS j`: then only `j`'s columns, in `*` order).
    fn bind_nested_join(
        &mut self,
        twj: &ast::TableWithJoins,
        alias: &Option<ast::TableAlias>,
        left: &Scope,
    ) -> Result<(Source, Scope), SqlError> {
        let (mut from, scope) = self
            .bind_from(std::slice::from_ref(twj))
            .map_err(|e| unreachable_from_here(e, left))?;
        push_down_keys(&mut from, None);
        // Under an alias the join is one relation of its `*` columns, qualified by the alias
        // and renamed by its column list.
        let (projection, columns, scope) = match alias {
            None => (
                (0..scope.cols.len()).map(BExpr::Col).collect(),
                scope.cols.clone(),
                scope,
            ),
            Some(a) => {
                let qual: Rc<str> = ident(&a.name).into();
                let order = scope.star_order();
                let cols = order
                    .iter()
                    .map(|&i| ColMeta {
                        qual: Some(qual.clone()),
                        ..scope.cols[i].clone()
                    })
                    .collect();
                let cols = apply_alias_cols(cols, alias, "join expression")?;
                (
                    order.into_iter().map(BExpr::Col).collect(),
                    cols.clone(),
                    Scope {
                        cols,
                        ..Scope::default()
                    },
                )
            }
        };
        let query = self.join_query(from, projection, columns);
        Ok((Source::Derived(Rc::new(query)), scope))
    }

    /// Joined FROM items run as a query of their own (a parenthesized join, a join whose USING
    /// columns are computed): `projection` over their joined row, named by `columns`.
    fn join_query(
        &mut self,
        from: Vec<FromItem>,
        projection: Vec<BExpr>,
        columns: Vec<ColMeta>,
    ) -> BQuery {
        BQuery {
            id: self.new_id(),
            outer_refs: Vec::new(),
            body: BSet::Select(Box::new(BSelect {
                from,
                filter: None,
                group: None,
                aggs: Vec::new(),
                having: None,
                projection,
                distinct: false,
                windowed: None,
                project_set: None,
                distinct_on: None,
                grouping_sets: None,
            })),
            order: Vec::new(),
            limit: None,
            with_ties: false,
            offset: None,
            columns,
            materialized: false,
        }
    }

    /// A function in FROM. Its arguments are bound as PostgreSQL binds them, LATERAL: they may
    /// read the items before it (`left`), as their nearest enclosing row.
    fn bind_table_function(
        &mut self,
        parts: &[String],
        args: &[ast::FunctionArg],
        alias: &Option<ast::TableAlias>,
        ordinality: bool,
        left: &Scope,
    ) -> Result<(Source, Vec<ColMeta>, LateralUse), SqlError> {
        self.session_dependent = true;
        let (schema, fname) = split_name(parts)?;
        let expandarray = fname == "_pg_expandarray";
        if !expandarray && !matches!(schema.as_deref(), None | Some("pg_catalog")) {
            return Err(SqlError::feature(format!(
                "table function {}",
                parts.join(".")
            )));
        }
        // The arguments are bound as a query of their own under `left`, so that the
        // references to it are counted as a subquery's are.
        let (bound, refs) = self.as_subquery(Some(left), |b| b.bind_table_function_args(args));
        let (mut bargs, types) = bound?;
        if expandarray && schema.as_deref() != Some("information_schema") {
            return Err(no_such_function(&parts.join("."), &types));
        }
        let lateral = LateralUse::of(&refs, left);
        let col_name = alias
            .as_ref()
            .map(|a| ident(&a.name))
            .unwrap_or_else(|| fname.clone());
        let qual: Rc<str> = col_name.clone().into();
        let column = |name: String, ty: PgType| ColMeta {
            name: name.into(),
            ty,
            typmod: -1,
            table_oid: 0,
            attnum: 0,
            qual: Some(qual.clone()),
            hidden: false,
        };
        let mut cols = if fname == "pg_options_to_table" {
            // pg_options_to_table(text[]): the `name=value` options of a reloptions-style array.
            if !matches!(types.as_slice(), [PgType::TextArray | PgType::Unknown]) {
                return Err(no_such_function(&fname, &types));
            }
            if types == [PgType::Unknown] {
                let x = bargs.pop().unwrap_or(BExpr::Const(Value::Null));
                bargs.push(coerce_expr(x, PgType::TextArray)?);
            }
            vec![
                column("option_name".into(), PgType::Text),
                column("option_value".into(), PgType::Text),
            ]
        } else {
            match set_function_type(&fname, &mut bargs, &types)? {
                // A function returning records returns their fields as columns.
                PgType::Record(fields) => {
                    if !ordinality {
                        self.record_functions.push((qual.clone(), fields));
                    }
                    fields
                        .iter()
                        .map(|(name, ty)| column((*name).into(), *ty))
                        .collect()
                }
                // A function with one named OUT column names it, alias or not.
                ty => vec![column(
                    match fname.as_str() {
                        "json_array_elements" | "json_array_elements_text" => "value".into(),
                        _ => col_name.clone(),
                    },
                    ty,
                )],
            }
        };
        if cols.len() == 1 && !ordinality {
            self.scalar_functions.push(qual.clone());
        }
        if ordinality {
            cols.push(ColMeta {
                name: "ordinality".into(),
                ty: PgType::Int8,
                typmod: -1,
                table_oid: 0,
                attnum: 0,
                qual: Some(qual),
                hidden: false,
            });
        }
        Ok((
            Source::Function {
                name: fname,
                args: bargs,
                ordinality,
            },
            apply_alias_cols(cols, alias, "table")?,
            lateral,
        ))
    }

    fn bind_table_function_args(
        &mut self,
        args: &[ast::FunctionArg],
    ) -> Result<(Vec<BExpr>, Vec<PgType>), SqlError> {
        let empty = Scope::default();
        let mut bargs: Vec<BExpr> = Vec::new();
        let mut types = Vec::new();
        for a in args {
            let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) = a else {
                return Err(SqlError::feature("named function arguments"));
            };
            let (b, t) = self.bind_expr(e, &empty, None)?;
            bargs.push(b);
            types.push(t);
        }
        Ok((bargs, types))
    }

    /// One FROM item; `left` is the scope of the items before it, which a LATERAL item (a
    /// subquery marked so, any function) may read.
    fn bind_factor(
        &mut self,
        f: &TableFactor,
        left: &Scope,
    ) -> Result<(Source, Vec<ColMeta>, LateralUse), SqlError> {
        let r = self.bind_factor_node(f, left);
        if let Err(err) = &r {
            // A relation or table function that does not exist: at its name.
            let name = match f {
                TableFactor::Table { name, .. } | TableFactor::Function { name, .. } => Some(name),
                _ => None,
            };
            if let (Some(spot), "42P01" | "42883") = (name.and_then(name_spot), err.sqlstate()) {
                crate::errpos::note(err, spot);
            }
        }
        r
    }

    fn bind_factor_node(
        &mut self,
        f: &TableFactor,
        left: &Scope,
    ) -> Result<(Source, Vec<ColMeta>, LateralUse), SqlError> {
        let not_lateral = |(source, cols)| (source, cols, LateralUse::NONE);
        match f {
            // `unnest(array)` in FROM, which the parser reads as its own construct.
            TableFactor::UNNEST {
                alias,
                array_exprs,
                with_offset: false,
                with_ordinality,
                ..
            } if array_exprs.len() == 1 => {
                let args: Vec<ast::FunctionArg> = array_exprs
                    .iter()
                    .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e.clone())))
                    .collect();
                self.bind_table_function(
                    &["unnest".to_string()],
                    &args,
                    alias,
                    *with_ordinality,
                    left,
                )
            }
            TableFactor::Function {
                name,
                args,
                with_ordinality,
                alias,
                ..
            } => self.bind_table_function(&object_name(name), args, alias, *with_ordinality, left),
            TableFactor::Table {
                sample: Some(_), ..
            } => {
                // Not ignored: a sample is fewer rows than the table.
                Err(SqlError::feature("TABLESAMPLE"))
            }
            TableFactor::Table {
                name,
                alias,
                args,
                with_ordinality,
                ..
            } => {
                let parts = object_name(name);
                if let Some(fargs) = args {
                    return self.bind_table_function(
                        &parts,
                        &fargs.args,
                        alias,
                        *with_ordinality,
                        left,
                    );
                }
                if *with_ordinality {
                    // Only a function has rows to number (PostgreSQL's grammar).
                    return Err(SqlError::Syntax {
                        message: "syntax error at or near \"WITH\"".into(),
                    });
                }
                let before = self.relations_read.len();
                let bound = self.bind_relation(&parts, alias).map(not_lateral);
                // Where the name is written, for CREATE VIEW to qualify that occurrence.
                for r in self.relations_read.iter_mut().skip(before) {
                    r.at.get_or_insert(sqlparser::ast::Spanned::span(name).start);
                }
                bound
            }
            TableFactor::Derived {
                subquery,
                alias,
                lateral,
                ..
            } => {
                let (q, lateral) = if *lateral {
                    let q = self.bind_query(subquery, Some(left))?;
                    let lateral = LateralUse::of(&q.outer_refs, left);
                    (q, lateral)
                } else {
                    let q = self
                        .bind_query(subquery, None)
                        .map_err(|e| unreachable_from_here(e, left))?;
                    (q, LateralUse::NONE)
                };
                let qual: Option<Rc<str>> = alias.as_ref().map(|a| ident(&a.name).into());
                let mut cols: Vec<ColMeta> = q
                    .columns
                    .iter()
                    .map(|c| ColMeta {
                        qual: qual.clone(),
                        ..c.clone()
                    })
                    .collect();
                resolve_unknown_columns(&mut cols);
                Ok((
                    Source::Derived(Rc::new(q)),
                    apply_alias_cols(cols, alias, "table")?,
                    lateral,
                ))
            }
            TableFactor::NestedJoin { .. } => Err(SqlError::internal("nested join as a factor")),
            other => Err(SqlError::feature(format!(
                "FROM item {}",
                first_words(&other.to_string())
            ))),
        }
    }

    /// A named relation in FROM: a CTE, a user table, a `pg_catalog` / `information_schema`
    /// relation.
    fn bind_relation(
        &mut self,
        parts: &[String],
        alias: &Option<ast::TableAlias>,
    ) -> Result<(Source, Vec<ColMeta>), SqlError> {
        let (schema, tname) = split_name(parts)?;
        let qual: Rc<str> = alias
            .as_ref()
            .map(|a| ident(&a.name))
            .unwrap_or_else(|| tname.clone())
            .into();
        if schema.is_none() {
            if let Some(cte) = self.ctes.iter().rev().find_map(|m| m.get(&tname)).cloned() {
                if let BSet::WorkTable(_) = cte.body {
                    self.read_worktable(&tname)?;
                }
                let cols = cte
                    .columns
                    .iter()
                    .map(|c| ColMeta {
                        qual: Some(qual.clone()),
                        ..c.clone()
                    })
                    .collect();
                return Ok((
                    Source::Derived(cte),
                    apply_alias_cols(cols, alias, "table")?,
                ));
            }
        }
        if let Some(t) = stored_relation(self.cx, schema.as_deref(), &tname) {
            self.reads_stored = true;
            if self.record_relations && self.view_depth == 0 {
                self.relations_read.push(RelationRead {
                    schema: t.schema.clone(),
                    id: Some(t.id),
                    at: None,
                });
            }
            if schema.is_none() {
                // Found through the search path.
                self.session_dependent = true;
            }
            if let Some(view) = t.view.clone() {
                return self.bind_view(&t, &view, &qual, alias);
            }
            if let Some(def) = t.sequence.as_deref() {
                // A sequence reads as its one row: the value now (outside MVCC, as
                // PostgreSQL's), `log_cnt` 0 (RockLake logs no values ahead).
                self.session_dependent = true;
                let v = self.cx.st.sequences.borrow().value(&t, def);
                let row = vec![
                    BExpr::Const(Value::Int(v.last)),
                    BExpr::Const(Value::Int(0)),
                    BExpr::Const(Value::Bool(v.called)),
                    BExpr::Const(Value::Tid(0, 1)),
                ];
                let cols = table_scope(&t, &qual).cols;
                self.next_id += 1;
                let q = BQuery {
                    id: self.next_id,
                    outer_refs: Vec::new(),
                    body: BSet::Values(vec![row]),
                    order: Vec::new(),
                    limit: None,
                    with_ties: false,
                    offset: None,
                    columns: cols.clone(),
                    materialized: false,
                };
                return Ok((
                    Source::Derived(Rc::new(q)),
                    apply_alias_cols(cols, alias, "table")?,
                ));
            }
            self.cx.check_layout(&t)?;
            let cols = table_scope(&t, &qual).cols;
            if self.record_relations && self.view_depth == 0 {
                // (The scope's columns share one qualifier.)
                self.table_quals
                    .extend(cols.last().and_then(|c| c.qual.clone()));
            }
            return Ok((
                Source::Table {
                    table: t,
                    keys: None,
                    index: None,
                },
                apply_alias_cols(cols, alias, "table")?,
            ));
        }
        if let Some((rel_oid, vcols)) = crate::pgcatalog::columns(schema.as_deref(), &tname) {
            if let (true, 0, Some(s)) = (
                self.record_relations,
                self.view_depth,
                crate::pgcatalog::virtual_schema(schema.as_deref(), &tname),
            ) {
                self.relations_read.push(RelationRead {
                    schema: s.to_string(),
                    id: None,
                    at: None,
                });
            }
            if shadowed_or_session(self.cx, schema.as_deref(), &tname) {
                self.session_dependent = true;
            } else {
                self.reads_catalog = true;
                self.virtual_names.push((schema.clone(), tname.clone()));
            }
            let cols = vcols
                .iter()
                .map(|c| ColMeta {
                    name: ColName::Borrowed(c.name),
                    ty: c.ty,
                    typmod: c.typmod,
                    table_oid: rel_oid,
                    attnum: c.attnum,
                    qual: Some(qual.clone()),
                    hidden: c.attnum < 0,
                })
                .collect();
            return Ok((
                Source::Virtual {
                    schema,
                    name: tname,
                },
                apply_alias_cols(cols, alias, "table")?,
            ));
        }
        let shown = match &schema {
            Some(s) => format!("{s}.{tname}"),
            None => tname,
        };
        Err(SqlError::UndefinedTable { name: shown })
    }

    /// One select-list item: its expressions appended to `projection`, their columns (names
    /// as PostgreSQL's `FigureColname`) to `columns`; `*` expands to the scope's columns.
    fn bind_item(
        &mut self,
        item: &SelectItem,
        scope: &Scope,
        aggs: Option<&mut Vec<AggSpec>>,
        projection: &mut Vec<BExpr>,
        columns: &mut Vec<ColMeta>,
    ) -> Result<(), SqlError> {
        match item {
            SelectItem::Wildcard(options) => {
                let start = projection.len();
                for i in scope.star_order() {
                    projection.push(BExpr::Col(i));
                    columns.push(ColMeta {
                        qual: None,
                        ..scope.cols[i].clone()
                    });
                }
                self.record_star(options, &projection[start..], scope);
            }
            SelectItem::QualifiedWildcard(kind, options) => {
                let start = projection.len();
                let q = match kind {
                    ast::SelectItemQualifiedWildcardKind::ObjectName(n) => {
                        object_name(n).last().cloned().unwrap_or_default()
                    }
                    ast::SelectItemQualifiedWildcardKind::Expr(_) => {
                        return Err(SqlError::feature("expression.*"))
                    }
                };
                let mut any = false;
                for (i, c) in scope.cols.iter().enumerate() {
                    if !c.hidden && c.qual.as_deref() == Some(q.as_str()) {
                        projection.push(BExpr::Col(i));
                        columns.push(ColMeta {
                            qual: None,
                            ..c.clone()
                        });
                        any = true;
                    }
                }
                if !any {
                    return Err(SqlError::MissingFromEntry { table: q });
                }
                self.record_star(options, &projection[start..], scope);
            }
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                // Aggregates found here make the select grouped (no text search for them:
                // a subquery's aggregates are its own).
                let (b, ty) = self.bind_expr(e, scope, aggs)?;
                srf_placement(&b)?;
                let mut meta = match &b {
                    // A function's FROM item read by its name is named so (see
                    // `scalar_functions`).
                    BExpr::Col(i) => match e {
                        Expr::Identifier(id) if ident(id) != scope.cols[*i].name => ColMeta {
                            qual: None,
                            name: ident(id).into(),
                            ..scope.cols[*i].clone()
                        },
                        _ => ColMeta {
                            qual: None,
                            ..scope.cols[*i].clone()
                        },
                    },
                    _ => ColMeta {
                        typmod: expr_typmod(&b, scope),
                        ..ColMeta::expr(&expr_name(e), ty)
                    },
                };
                if let BExpr::Scalar(q) = &b {
                    if let Some(c) = q.columns.first() {
                        meta.name = c.name.clone();
                    }
                }
                if let SelectItem::ExprWithAlias { alias, .. } = item {
                    meta.name = ident(alias).into();
                }
                // Unknown stays unknown here so UNION can still resolve it from the other
                // branch; it is reported as text at the very end (ColMeta::field).
                meta.ty = ty;
                if ty == PgType::Unknown {
                    meta.typmod = -1;
                }
                projection.push(b);
                columns.push(meta);
            }
            SelectItem::ExprWithAliases { .. } => {
                return Err(SqlError::feature("multiple aliases"))
            }
        }
        Ok(())
    }

    /// Notes the column `name` was resolved to (`read`: a column of `scope` or of an outer
    /// scope) in [`Self::column_refs`].
    fn record_column_ref(&mut self, name: &ast::Ident, read: &BExpr, scope: &Scope) {
        if !self.record_relations || self.view_depth > 0 {
            return;
        }
        let meta = match read {
            BExpr::Col(i) => scope.cols.get(*i),
            BExpr::Outer(depth, i) => self
                .outer
                .len()
                .checked_sub(*depth)
                .and_then(|d| self.outer.get(d))
                .and_then(|(s, _)| s.cols.get(*i)),
            _ => None,
        };
        let (table_oid, attnum, direct) = meta.map_or((0, 0, false), |c| {
            (c.table_oid, c.attnum, self.reads_directly(c))
        });
        self.column_refs.push(ColumnRef {
            at: name.span.start,
            table_oid,
            attnum,
            direct,
        });
    }

    /// Whether column `c` of a scope is read straight from a stored table's or view's FROM
    /// item (recorded ones only).
    fn reads_directly(&self, c: &ColMeta) -> bool {
        c.qual
            .as_ref()
            .is_some_and(|q| self.table_quals.iter().any(|t| Rc::ptr_eq(t, q)))
    }

    /// Notes what a `*` read ([`Self::star_expansions`]): `read`, its columns of `scope`.
    fn record_star(
        &mut self,
        options: &ast::WildcardAdditionalOptions,
        read: &[BExpr],
        scope: &Scope,
    ) {
        if !self.record_relations || self.view_depth > 0 {
            return;
        }
        let at = options.wildcard_token.0.span.start;
        let read: Vec<&ColMeta> = read
            .iter()
            .filter_map(|b| match b {
                BExpr::Col(i) => scope.cols.get(*i),
                _ => None,
            })
            .collect();
        // Each column counts as a reference, as the names it is written out as will.
        for c in &read {
            let direct = self.reads_directly(c);
            self.column_refs.push(ColumnRef {
                at,
                table_oid: c.table_oid,
                attnum: c.attnum,
                direct,
            });
        }
        let columns = read
            .iter()
            .map(|c| (c.qual.as_deref().map(str::to_string), c.name.to_string()))
            .collect();
        self.star_expansions.push((at, columns));
    }

    /// `RETURNING` items over the written rows' scope: no aggregate, window or set-returning
    /// calls (PostgreSQL's errors name the clause).
    pub fn bind_returning(
        &mut self,
        items: &[SelectItem],
        scope: &Scope,
    ) -> Result<(Vec<BExpr>, Vec<ColMeta>), SqlError> {
        let clause = std::mem::replace(&mut self.clause, "RETURNING");
        let windows = self.windows.take();
        let srfs = self.srfs.take();
        let (mut projection, mut columns) = (Vec::new(), Vec::new());
        let bound = items
            .iter()
            .try_for_each(|i| self.bind_item(i, scope, None, &mut projection, &mut columns));
        self.clause = clause;
        self.windows = windows;
        self.srfs = srfs;
        bound.map(|()| (projection, columns))
    }

    fn bind_select(
        &mut self,
        sel: &ast::Select,
    ) -> Result<(BSelect, Vec<ColMeta>, Scope), SqlError> {
        // Clauses this binder does not implement are refused, never ignored.
        if sel.into.is_some() {
            return Err(SqlError::feature("SELECT … INTO (use CREATE TABLE … AS)"));
        }
        let mut named = Vec::new();
        for ast::NamedWindowDefinition(name, def) in &sel.named_window {
            match def {
                ast::NamedWindowExpr::WindowSpec(s) if s.window_name.is_none() => {
                    named.push((ident(name), s.clone()))
                }
                _ => {
                    return Err(SqlError::feature(
                        "a window definition based on a named window",
                    ))
                }
            }
        }
        let outer_named = std::mem::replace(&mut self.named_windows, named);
        let order_windows = std::mem::take(&mut self.order_windows);
        if sel.top.is_some()
            || sel.exclude.is_some()
            || !sel.lateral_views.is_empty()
            || sel.prewhere.is_some()
            || !sel.connect_by.is_empty()
            || !sel.cluster_by.is_empty()
            || !sel.distribute_by.is_empty()
            || !sel.sort_by.is_empty()
            || sel.qualify.is_some()
            || sel.value_table_mode.is_some()
        {
            return Err(SqlError::feature(format!(
                "SELECT clause {}",
                first_words(&sel.to_string())
            )));
        }
        let (from, scope) = self.bind_from(&sel.from)?;
        let mut aggs = Vec::new();
        let mut projection = Vec::new();
        let mut columns = Vec::new();
        // Window calls are allowed in the select list only (a subquery's select list has its
        // own).
        let outer_windows = self.windows.replace(Vec::new());
        let outer_srfs = self.srfs.replace(Vec::new());
        let outer_clause = std::mem::replace(&mut self.clause, "this context");
        // Where each select item's expressions start in `projection`.
        let mut item_start = Vec::with_capacity(sel.projection.len());
        for item in &sel.projection {
            item_start.push(projection.len());
            self.bind_item(item, &scope, Some(&mut aggs), &mut projection, &mut columns)?;
        }
        // The query's ORDER BY keys that call window functions: hidden items after the
        // select list's (cut from the rows once sorted).
        let items_end = projection.len();
        for e in &order_windows {
            let (b, ty) = self.bind_expr(e, &scope, Some(&mut aggs))?;
            // The same call as a select item's is sorted on that item, as PostgreSQL matches
            // ORDER BY expressions to the select list (which DISTINCT needs).
            let windows = self.windows.as_deref().unwrap_or_default();
            let same = |x: &BExpr| match (x, &b) {
                (BExpr::Win(j), BExpr::Win(k)) => windows.get(*j) == windows.get(*k),
                _ => *x == b,
            };
            if let Some(p) = projection[..items_end].iter().position(same) {
                if let (BExpr::Win(k), Some(list)) = (&b, self.windows.as_mut()) {
                    if *k + 1 == list.len() {
                        list.pop();
                    }
                }
                self.order_window_cols.push((p, ty));
                continue;
            }
            if matches!(sel.distinct, Some(ast::Distinct::Distinct)) {
                let err = SqlError::InvalidColumnReference {
                    message: "for SELECT DISTINCT, ORDER BY expressions must appear in select list"
                        .into(),
                };
                if let Some(spot) = start_spot(e) {
                    crate::errpos::note(&err, spot);
                }
                return Err(err);
            }
            self.order_window_cols.push((projection.len(), ty));
            projection.push(b);
        }
        let windows = std::mem::replace(&mut self.windows, outer_windows).unwrap_or_default();
        let srfs = std::mem::replace(&mut self.srfs, outer_srfs).unwrap_or_default();
        self.named_windows = outer_named;
        // WHERE and GROUP BY after the select list, in PostgreSQL's order of analysis (which
        // decides which error a statement with several reports).
        self.clause = "WHERE";
        let filter = match &sel.selection {
            Some(e) => Some(self.bind_bool(e, &scope)?),
            None => None,
        };
        self.clause = "GROUP BY";
        // GROUP BY keys that name a select item by position: (key, select item).
        let mut by_position = Vec::new();
        let items = match &sel.group_by {
            ast::GroupByExpr::Expressions(es, _) => es.as_slice(),
            ast::GroupByExpr::All(_) => return Err(SqlError::feature("GROUP BY ALL")),
        };
        // With ROLLUP, CUBE or GROUPING SETS: the sets, as indices into the keys.
        let mut set_lists: Option<Vec<Vec<usize>>> = None;
        // With them, the select item each key is, if any (PostgreSQL's grouping columns are
        // select items: two items alike named by position are two keys).
        let mut key_items: Vec<Option<usize>> = Vec::new();
        let mut group_exprs: Option<Vec<BExpr>> = if items.is_empty() {
            None
        } else if items.iter().any(is_grouping_set_syntax) {
            let (exprs, sets) = expand_grouping_sets(items)?;
            let mut g = Vec::with_capacity(exprs.len());
            for e in exprs {
                let (key, item) = self.bind_group_key(e, sel, &scope)?;
                if let Some(i) = item {
                    by_position.push((g.len(), i));
                }
                // A key written as an expression is the first select item equal to it.
                key_items.push(match item {
                    Some(i) => item_start.get(i).copied(),
                    None => projection.iter().position(|p| *p == key),
                });
                g.push(key);
            }
            set_lists = Some(sets);
            Some(g)
        } else {
            let mut g = Vec::with_capacity(items.len());
            for e in items {
                let (key, item) = self.bind_group_key(e, sel, &scope)?;
                if let Some(i) = item {
                    by_position.push((g.len(), i));
                }
                g.push(key);
            }
            Some(g)
        };
        if let (Some(keys), None) = (group_exprs.as_mut(), &set_lists) {
            keys_with_dependent_columns(keys, &from);
        }
        self.clause = "HAVING";
        let having = match &sel.having {
            Some(h) => Some(self.bind_expr(h, &scope, Some(&mut aggs))?.0),
            None => None,
        };
        self.clause = outer_clause;
        let mut distinct_on = Vec::new();
        let distinct = match &sel.distinct {
            None | Some(ast::Distinct::All) => false,
            Some(ast::Distinct::Distinct) => true,
            Some(ast::Distinct::On(exprs)) => {
                if !windows.is_empty() {
                    return Err(SqlError::feature("DISTINCT ON with window functions"));
                }
                for e in exprs {
                    // A number names a select item by position, as in ORDER BY.
                    let position = match e {
                        Expr::Value(v) => match &v.value {
                            ast::Value::Number(n, _) => n.parse::<usize>().ok(),
                            _ => None,
                        },
                        _ => None,
                    };
                    // A bare name of exactly one output column is that column, as in ORDER BY.
                    let alias = match e {
                        Expr::Identifier(idn) => output_column_named(
                            &columns,
                            Some(&projection),
                            &ident(idn),
                            "DISTINCT ON",
                        )?
                        .map(|i| i + 1),
                        _ => None,
                    };
                    let bound = match position.or(alias) {
                        Some(i) => (1..=columns.len())
                            .contains(&i)
                            .then(|| projection.get(i - 1))
                            .flatten()
                            .cloned()
                            .ok_or_else(|| SqlError::InvalidColumnReference {
                                message: format!("DISTINCT ON position {i} is not in select list"),
                            })?,
                        None => self.bind_expr(e, &scope, Some(&mut aggs))?.0,
                    };
                    distinct_on.push(bound);
                }
                false
            }
        };
        if distinct {
            for c in &columns {
                has_equality(c.ty)?;
            }
        }
        // A key named by position is that select item's expression itself, so the item (and
        // its subqueries, equal only to themselves) is covered by it.
        if let Some(keys) = &mut group_exprs {
            for (k, item) in by_position {
                if let Some(e) = item_start.get(item).and_then(|&p| projection.get(p)) {
                    if contains_window(e) {
                        return Err(SqlError::Windowing {
                            message: "window functions are not allowed in GROUP BY".into(),
                        });
                    }
                    keys[k] = e.clone();
                }
            }
        }
        if let (Some(keys), Some(sets)) = (&mut group_exprs, &mut set_lists) {
            distinct_grouping_keys(keys, sets, &mut key_items);
            // Columns a table's primary key determines may be read too when every set
            // holds the whole key (PostgreSQL looks only at the keys common to all sets);
            // they join every set, which changes no group.
            let mut common: Vec<BExpr> = (0..keys.len())
                .filter(|i| sets.iter().all(|s| s.contains(i)))
                .filter_map(|i| keys.get(i).cloned())
                .collect();
            let before = common.len();
            keys_with_dependent_columns(&mut common, &from);
            for dependent in common.into_iter().skip(before) {
                let i = keys.len();
                keys.push(dependent);
                key_items.push(None);
                for s in sets.iter_mut() {
                    s.push(i);
                }
            }
        }
        if !srfs.is_empty() {
            // PostgreSQL plans these too (windows under the ProjectSet, grouping by a
            // set-returning item above it); RockLake runs the calls after the select.
            let refused = if !distinct_on.is_empty() {
                Some("set-returning functions with DISTINCT ON")
            } else if group_exprs
                .iter()
                .flatten()
                .any(|k| contains_placeholder(k, &|e| matches!(e, BExpr::Srf(_))))
            {
                Some("GROUP BY a set-returning select item")
            } else {
                None
            };
            if let Some(what) = refused {
                return Err(SqlError::feature(what));
            }
        }
        // Windows are computed first, over the rows before the set-returning calls expand
        // them (as PostgreSQL's WindowAgg runs under its ProjectSet): the calls' rewrite goes
        // first, so that their arguments are columns the windows' rewrite keeps.
        let project_set = if srfs.is_empty() {
            None
        } else {
            Some(Box::new(rewrite_srfs(&mut projection, srfs)?))
        };
        let windowed = if windows.is_empty() {
            None
        } else {
            Some(Box::new(rewrite_windows(&mut projection, windows)?))
        };
        let distinct_on = if distinct_on.is_empty() {
            None
        } else {
            let start = projection.len();
            projection.extend(distinct_on);
            Some((start..projection.len()).collect())
        };
        let grouping_calls = projection.iter().chain(&having).any(contains_grouping_call);
        if group_exprs.is_some() || !aggs.is_empty() || grouping_calls {
            let keys = group_exprs.as_deref().unwrap_or_default();
            for e in projection.iter().chain(&having) {
                self.check_grouping_calls(e, keys)?;
            }
            ungrouped_select_list(
                sel,
                keys,
                &projection,
                having.as_ref(),
                &scope,
                &order_windows,
            )?;
        }
        let group = if group_exprs.is_some() || !aggs.is_empty() {
            Some(group_exprs.unwrap_or_default())
        } else {
            None
        };
        let mut having = having;
        let grouping_sets = match (&group, set_lists) {
            (Some(keys), sets) if sets.is_some() || grouping_calls => {
                let gs = GroupingSets {
                    sets: sets.unwrap_or_else(|| vec![(0..keys.len()).collect()]),
                    base: scope.cols.len(),
                };
                // A select item that is a key reads its own key's column.
                for (k, p) in key_items.iter().enumerate() {
                    if let Some(e) = p.and_then(|p| projection.get_mut(p)) {
                        *e = BExpr::Col(gs.base + k);
                    }
                }
                projection = projection
                    .into_iter()
                    .map(|e| gs.read_keys(e, keys))
                    .collect();
                having = having.map(|e| gs.read_keys(e, keys));
                Some(Box::new(gs))
            }
            _ => None,
        };
        if columns.len() > MAX_TARGET_LIST {
            return Err(SqlError::TooManyColumns {
                max: MAX_TARGET_LIST,
            });
        }
        let mut from = from;
        push_down_keys(&mut from, filter.as_ref());
        let filter = push_down_join_keys(&mut from, filter, &scope.cols);
        let filter = push_down_filters(&mut from, filter);
        Ok((
            BSelect {
                from,
                filter,
                group,
                aggs,
                having,
                projection,
                distinct,
                windowed,
                project_set,
                distinct_on,
                grouping_sets,
            },
            columns,
            scope,
        ))
    }

    /// An ordered-set aggregate: `percentile_cont`, `percentile_disc` (a fraction or an array
    /// of them) or `mode()`, `WITHIN GROUP (ORDER BY key)`. The group's non-null keys are
    /// collected in order (an `array_agg` of them), and the call is a final function over the
    /// direct arguments (evaluated per group, as PostgreSQL does) and that array.
    fn bind_ordered_set(
        &mut self,
        f: &ast::Function,
        name: &str,
        direct: &[Expr],
        scope: &Scope,
        aggs: Option<&mut Vec<AggSpec>>,
    ) -> Result<(BExpr, PgType), SqlError> {
        let finals = [
            ("percentile_cont", PERCENTILE_CONT),
            ("percentile_disc", PERCENTILE_DISC),
            ("mode", MODE),
        ];
        let Some(&(_, final_name)) = finals.iter().find(|(n, _)| *n == name) else {
            if aggregate_func(name, false).is_some() {
                return Err(SqlError::WrongObjectType {
                    message: format!(
                        "{name} is not an ordered-set aggregate, so it cannot have WITHIN GROUP"
                    ),
                });
            }
            if ["rank", "dense_rank", "percent_rank", "cume_dist"].contains(&name) {
                return Err(SqlError::feature(format!(
                    "the hypothetical-set aggregate {name}(…) WITHIN GROUP"
                )));
            }
            return Err(SqlError::feature(format!("{name}(…) WITHIN GROUP")));
        };
        if f.over.is_some() {
            return Err(SqlError::UnsupportedByPostgres {
                message: format!("OVER is not supported for ordered-set aggregate {name}"),
            });
        }
        let Some(list) = aggs else {
            return Err(SqlError::AggregateMisplaced {
                message: match self.clause {
                    "aggregate arguments" => "aggregate function calls cannot be nested".into(),
                    "this context" => "aggregate functions are not allowed here".into(),
                    c => format!("aggregate functions are not allowed in {c}"),
                },
            });
        };
        let mut bound_direct = Vec::new();
        for d in direct {
            bound_direct.push(self.bind_expr(d, scope, None)?);
        }
        // The sort keys are the aggregate's input, read per row.
        let windows = self.windows.take();
        let srfs = self.srfs.take();
        let clause = std::mem::replace(&mut self.clause, "aggregate arguments");
        let keys = f
            .within_group
            .iter()
            .map(|k| {
                let desc = sort_desc(&k.options)?;
                let nulls_first = k.options.nulls_first.unwrap_or(desc);
                let (b, t) = self.bind_expr(&k.expr, scope, None)?;
                Ok((b, t, desc, nulls_first))
            })
            .collect::<Result<Vec<_>, SqlError>>();
        self.windows = windows;
        self.srfs = srfs;
        self.clause = clause;
        let keys = keys?;
        let types: Vec<PgType> = bound_direct
            .iter()
            .map(|(_, t)| *t)
            .chain(keys.iter().map(|k| k.1))
            .collect();
        let missing = || no_such_function(name, &types);
        let fraction = |t: PgType| t == PgType::Unknown || t.is_numeric_family();
        let fractions =
            |t: PgType| t.is_array() && t.element().is_some_and(|e| e.is_numeric_family());
        let ([(key, key_ty, desc, nulls_first)], direct_ty) = (
            keys.as_slice(),
            bound_direct.iter().map(|(_, t)| *t).collect::<Vec<_>>(),
        ) else {
            return Err(missing());
        };
        let (key_ty, desc, nulls_first) = (*key_ty, *desc, *nulls_first);
        let many = matches!(direct_ty.as_slice(), [t] if fractions(*t));
        if key_ty == PgType::Unknown && final_name != PERCENTILE_CONT {
            // percentile_disc and mode take anyelement.
            return Err(SqlError::DatatypeMismatch {
                message: "could not determine polymorphic type because input has type unknown"
                    .into(),
                hint: None,
            });
        }
        if final_name == PERCENTILE_DISC
            && direct_ty == [PgType::Unknown]
            && !key_ty.is_numeric_family()
        {
            // Its float8 and float8[] forms both take an untyped fraction; only a number's
            // category prefers one.
            return Err(ambiguous(format!(
                "function {name}(unknown, {}) is not unique",
                key_ty.sql_name()
            )));
        }
        let (key, out) = match (final_name, direct_ty.as_slice()) {
            (MODE, []) => {
                orderable(key_ty)?;
                (key.clone(), key_ty)
            }
            (PERCENTILE_CONT, [t]) if fraction(*t) || fractions(*t) => {
                if key_ty == PgType::Interval {
                    return Err(SqlError::feature("percentile_cont over interval"));
                }
                if !(key_ty == PgType::Unknown || key_ty.is_numeric_family()) {
                    return Err(missing());
                }
                (
                    cast_from(key.clone(), key_ty, PgType::Float8)?,
                    PgType::Float8,
                )
            }
            (PERCENTILE_DISC, [t]) if fraction(*t) || fractions(*t) => {
                orderable(key_ty)?;
                (key.clone(), key_ty)
            }
            _ => return Err(missing()),
        };
        let out = match (many, out) {
            (false, PgType::Unknown) => PgType::Text,
            (false, t) => t,
            (true, t) => t
                .array_of()
                .ok_or_else(|| SqlError::feature(format!("{name} of {} values", t.sql_name())))?,
        };
        let mut finals_args = Vec::new();
        for (b, t) in bound_direct {
            finals_args.push(if many {
                cast_from(b, t, PgType::Float8Array)?
            } else {
                cast_from(b, t, PgType::Float8)?
            });
        }
        let present = BExpr::IsNull(Box::new(key.clone()), true);
        let clause = std::mem::replace(&mut self.clause, "FILTER");
        let filter = match &f.filter {
            Some(w) => self.bind_bool(w, scope).map(Some),
            None => Ok(None),
        };
        self.clause = clause;
        let filter = match filter? {
            Some(w) => BExpr::And(Box::new(w), Box::new(present)),
            None => present,
        };
        let spec = AggSpec {
            func: AggFunc::ArrayAgg,
            args: vec![key.clone()],
            distinct: false,
            ty: PgType::Unknown,
            order: vec![(key, desc, nulls_first)],
            filter: Some(filter),
        };
        let i = match list.iter().position(|a| *a == spec) {
            Some(i) => i,
            None => {
                list.push(spec);
                list.len() - 1
            }
        };
        finals_args.push(BExpr::Agg(i));
        Ok((BExpr::Func(final_name.into(), finals_args), out))
    }

    /// A view in FROM: its query, bound on its own (no outer query's columns or WITH
    /// queries), as a subquery whose columns are the view's.
    fn bind_view(
        &mut self,
        t: &TableRef,
        view: &crate::catalog::ViewDef,
        qual: &Rc<str>,
        alias: &Option<ast::TableAlias>,
    ) -> Result<(Source, Vec<ColMeta>), SqlError> {
        if self.view_depth >= MAX_VIEW_DEPTH {
            return Err(SqlError::InfiniteRecursion {
                name: t.name.clone(),
            });
        }
        // Reading a view leaves the result's caching to what its query reads: the text names
        // its relations with their schemas, and a view's replacement changes the registry,
        // which empties the copy cache.
        let query = parse_view_query(&view.query)?;
        let outer = std::mem::take(&mut self.outer);
        let ctes = std::mem::take(&mut self.ctes);
        self.view_depth += 1;
        let bound = self.bind_query(&query, None);
        self.view_depth -= 1;
        self.outer = outer;
        self.ctes = ctes;
        let mut q = bound?;
        // The query's first columns are the view's (a table `*` reads may have more now).
        let fits = q.columns.len() >= t.columns.len()
            && view.query_columns.len() == t.columns.len()
            && q.columns
                .iter()
                .zip(&t.columns)
                .zip(&view.query_columns)
                .all(|((b, c), name)| {
                    *b.name == **name
                        && (b.ty == c.ty || (b.ty == PgType::Unknown && c.ty == PgType::Text))
                });
        if !fits {
            return Err(SqlError::ViewChanged {
                name: t.name.clone(),
            });
        }
        if q.columns.len() > t.columns.len() {
            let n = t.columns.len();
            let columns: Vec<ColMeta> = q.columns.iter().take(n).cloned().collect();
            let width = q.columns.len();
            let item = FromItem::cross(Source::Derived(Rc::new(q)), width, Lateral::No);
            q = self.join_query(vec![item], (0..n).map(BExpr::Col).collect(), columns);
        }
        // A table's scope but for its system column: a view has none.
        let mut cols = table_scope(t, qual).cols;
        cols.retain(|c| !c.hidden);
        if self.record_relations && self.view_depth == 0 {
            // The view's columns are its own, read directly.
            self.table_quals
                .extend(cols.last().and_then(|c| c.qual.clone()));
        }
        Ok((
            Source::Derived(Rc::new(q)),
            apply_alias_cols(cols, alias, "table")?,
        ))
    }

    /// A GROUP BY key: an output column's position or alias, else an expression over the
    /// FROM items. Returns the key and the select item it names, if it names one.
    fn bind_group_key(
        &mut self,
        e: &Expr,
        sel: &ast::Select,
        scope: &Scope,
    ) -> Result<(BExpr, Option<usize>), SqlError> {
        // GROUP BY may name an output column by position.
        if let Expr::Value(v) = e {
            if let ast::Value::Number(n, _) = &v.value {
                let i: usize = n.parse().map_err(|_| SqlError::Syntax {
                    message: "syntax error: bad GROUP BY position".into(),
                })?;
                let item = sel.projection.get(i.wrapping_sub(1)).ok_or_else(|| {
                    SqlError::InvalidColumnReference {
                        message: format!("GROUP BY position {i} is not in select list"),
                    }
                })?;
                let ex = match item {
                    SelectItem::UnnamedExpr(x) | SelectItem::ExprWithAlias { expr: x, .. } => x,
                    _ => return Err(SqlError::feature("GROUP BY position of *")),
                };
                return Ok((equatable(self.bind_expr(ex, scope, None)?)?, Some(i - 1)));
            }
        }
        // A bare name no column of this select's FROM has (outer ones do not count): an
        // output column's alias (PostgreSQL's SQL92 rule).
        if let Expr::Identifier(idn) = e {
            let name = ident(idn);
            if matches!(scope.resolve(None, &name), Ok(None)) {
                if let Some((i, ex)) = group_by_alias(&sel.projection, &name)? {
                    return Ok((equatable(self.bind_expr(ex, scope, None)?)?, Some(i)));
                }
            }
        }
        Ok((equatable(self.bind_expr(e, scope, None)?)?, None))
    }

    /// `GROUPING(args)`: a placeholder until the select's keys are known
    /// ([`Binder::check_grouping_calls`], [`GroupingSets::read_keys`]). Like an aggregate,
    /// it belongs to the select list, HAVING and ORDER BY (`grouped`: where aggregates may
    /// be).
    fn bind_grouping(
        &mut self,
        args: &[Expr],
        scope: &Scope,
        grouped: bool,
    ) -> Result<(BExpr, PgType), SqlError> {
        if !grouped {
            return Err(SqlError::AggregateMisplaced {
                message: match self.clause {
                    "aggregate arguments" => "aggregate function calls cannot be nested".into(),
                    "this context" => "grouping operations are not allowed here".into(),
                    c => format!("grouping operations are not allowed in {c}"),
                },
            });
        }
        if args.len() > MAX_GROUPING_ARGS {
            return Err(SqlError::GroupingLimit {
                code: "54023",
                message: format!(
                    "GROUPING must have fewer than {} arguments",
                    MAX_GROUPING_ARGS + 1
                ),
            });
        }
        let id = self.grouping_args.len();
        self.grouping_args.push(args.to_vec());
        let mut bound = vec![BExpr::Const(Value::Int(id as i64))];
        for a in args {
            bound.push(self.bind_expr(a, scope, None)?.0);
        }
        Ok((BExpr::Func(GROUPING_CALL.into(), bound), PgType::Int4))
    }

    /// PostgreSQL's 42803 for a `GROUPING` argument in `e` that is none of the select's
    /// grouping keys, at the argument.
    fn check_grouping_calls(&self, e: &BExpr, keys: &[BExpr]) -> Result<(), SqlError> {
        let mut stray: Option<Option<&Expr>> = None;
        let mut outer = false;
        visit_exprs(e, &mut |x| {
            if let (BExpr::Func(name, args), None) = (x, &stray) {
                if name == GROUPING_CALL {
                    let written = match args.first() {
                        Some(BExpr::Const(Value::Int(id))) => usize::try_from(*id)
                            .ok()
                            .and_then(|id| self.grouping_args.get(id)),
                        _ => None,
                    };
                    if let Some(j) = args.iter().skip(1).position(|a| !keys.contains(a)) {
                        stray = Some(written.and_then(|w| w.get(j)));
                    }
                    outer |= args
                        .iter()
                        .any(|a| contains_placeholder(a, &|y| matches!(y, BExpr::Outer(..))));
                }
            }
        });
        match stray {
            None => Ok(()),
            // PostgreSQL resolves these against the enclosing query's grouping sets.
            Some(_) if outer => Err(SqlError::feature(
                "GROUPING of an enclosing query's columns",
            )),
            Some(at) => {
                let err = SqlError::AggregateMisplaced {
                    message: "arguments to GROUPING must be grouping expressions of the \
                              associated query level"
                        .into(),
                };
                if let Some(spot) = at.and_then(start_spot) {
                    crate::errpos::note(&err, spot);
                }
                Err(err)
            }
        }
    }

    /// An expression of a VALUES row: PostgreSQL names the clause in its errors
    /// ("set-returning functions are not allowed in VALUES").
    pub fn bind_values_expr(&mut self, e: &Expr) -> Result<(BExpr, PgType), SqlError> {
        let clause = std::mem::replace(&mut self.clause, "VALUES");
        let bound = self.bind_expr(e, &Scope::default(), None);
        self.clause = clause;
        bound
    }

    /// The condition of `COPY … FROM … WHERE`, over the table's columns: PostgreSQL's
    /// errors for what it may not hold (subqueries, aggregate, window and set-returning calls).
    pub fn bind_copy_where(&mut self, e: &Expr, scope: &Scope) -> Result<BExpr, SqlError> {
        let mut subquery = false;
        let _ = ast::visit_expressions(e, |x| {
            if matches!(
                x,
                Expr::Subquery(_)
                    | Expr::Exists { .. }
                    | Expr::In {
                        target: ast::InTarget::Subquery(_),
                        ..
                    }
            ) {
                subquery = true;
                return std::ops::ControlFlow::Break(());
            }
            std::ops::ControlFlow::Continue(())
        });
        if subquery {
            return Err(SqlError::UnsupportedByPostgres {
                message: "cannot use subquery in COPY FROM WHERE condition".into(),
            });
        }
        let clause = std::mem::replace(&mut self.clause, "COPY FROM WHERE conditions");
        let bound = self.bind_bool(e, scope);
        self.clause = clause;
        bound
    }

    pub fn bind_bool(&mut self, e: &Expr, scope: &Scope) -> Result<BExpr, SqlError> {
        let (b, ty) = self.bind_expr(e, scope, None)?;
        if !matches!(ty, PgType::Bool | PgType::Unknown) {
            return Err(SqlError::DatatypeMismatch {
                message: format!(
                    "argument of WHERE must be type boolean, not type {}",
                    ty.sql_name()
                ),
                hint: None,
            });
        }
        coerce_expr(b, PgType::Bool)
    }

    fn resolve_column(
        &mut self,
        qual: Option<&str>,
        name: &str,
        scope: &Scope,
    ) -> Result<(BExpr, PgType), SqlError> {
        if let Some(i) = scope.resolve(qual, name)? {
            return Ok((BExpr::Col(i), scope.cols[i].ty));
        }
        let scopes = self.outer.len();
        for (depth, (s, level)) in self.outer.iter().rev().enumerate() {
            if let Some(i) = s.resolve(qual, name)? {
                // Every query between the reference and the scope it reads depends on the
                // outer row, not only the innermost one.
                let j = scopes - 1 - depth;
                for t in self.levels.iter_mut().skip(*level) {
                    let r = (t.outer_len.saturating_sub(j + 1), i);
                    if !t.refs.contains(&r) {
                        t.refs.push(r);
                    }
                }
                return Ok((BExpr::Outer(depth + 1, i), s.cols[i].ty));
            }
        }
        let Some(q) = qual else {
            // The name of a function's FROM item that returns one scalar column is that
            // column.
            let scalar = scope
                .cols
                .iter()
                .chain(self.outer.iter().rev().flat_map(|(s, _)| s.cols.iter()))
                .find(|c| {
                    c.qual.as_ref().is_some_and(|q| {
                        &**q == name && self.scalar_functions.iter().any(|f| Rc::ptr_eq(f, q))
                    })
                })
                .map(|c| c.name.to_string());
            if let Some(column) = scalar {
                return self.resolve_column(Some(name), &column, scope);
            }
            // A record-returning function's item: the record of its columns.
            // The nearest scope with an item of that name decides (an inner one hides outer
            // ones); the record is the function's own, so column aliases (whose names the
            // record type cannot carry) leave `(alias).column` to read them.
            let record = std::iter::once(scope)
                .chain(self.outer.iter().rev().map(|(s, _)| s))
                .find_map(|s| {
                    s.cols
                        .iter()
                        .find_map(|c| c.qual.as_ref().filter(|q| &***q == name && !c.hidden))
                        .map(|q| (s, q))
                })
                .and_then(|(s, q)| {
                    let fields = self
                        .record_functions
                        .iter()
                        .find(|(f, _)| Rc::ptr_eq(f, q))
                        .map(|(_, fields)| *fields)?;
                    let names: Vec<String> = s
                        .cols
                        .iter()
                        .filter(|c| c.qual.as_ref().is_some_and(|x| Rc::ptr_eq(x, q)))
                        .map(|c| c.name.to_string())
                        .collect();
                    let own = names.len() == fields.len()
                        && names.iter().zip(fields.iter()).all(|(n, (f, _))| n == f);
                    own.then_some((fields, names))
                });
            if let Some((fields, names)) = record {
                let mut args = Vec::with_capacity(names.len());
                for column in &names {
                    args.push(self.resolve_column(Some(name), column, scope)?.0);
                }
                return Ok((
                    BExpr::Func("make_record".into(), args),
                    PgType::Record(fields),
                ));
            }
            return Err(SqlError::UndefinedColumn {
                name: name.to_string(),
            });
        };
        let known = |s: &Scope| s.cols.iter().any(|c| c.qual.as_deref() == Some(q));
        if !known(scope) && !self.outer.iter().any(|(s, _)| known(s)) {
            return Err(match self.alias_of_table(q, scope) {
                Some(alias) => SqlError::InvalidFromReference {
                    table: q.to_string(),
                    alias: Some(alias),
                },
                None => SqlError::MissingFromEntry {
                    table: q.to_string(),
                },
            });
        }
        Err(SqlError::UndefinedQualifiedColumn {
            qual: q.to_string(),
            name: name.to_string(),
        })
    }

    /// The alias FROM gave a stored table named `table` (PostgreSQL's hint when a query
    /// names the table where only its alias is visible).
    fn alias_of_table(&self, table: &str, scope: &Scope) -> Option<String> {
        let mut seen = Vec::new();
        let scopes = std::iter::once(scope).chain(self.outer.iter().rev().map(|(s, _)| s));
        for c in scopes.flat_map(|s| s.cols.iter()) {
            if c.table_oid == 0 || seen.contains(&c.table_oid) {
                continue;
            }
            seen.push(c.table_oid);
            if let Some((t, _)) = self.cx.relation_by_oid(c.table_oid) {
                if t.name == table {
                    return c.qual.as_deref().map(str::to_string);
                }
            }
        }
        None
    }

    /// `x op ANY|ALL (subquery)`, with `x` already bound: the left side is coerced to the
    /// common type of it and the subquery's column. `symbol` is the operator as written
    /// (`=` for `NOT IN`, bound as `<> ALL`), for the error when the types do not compare.
    fn bind_quantified(
        &mut self,
        x: BExpr,
        xt: PgType,
        q: &ast::Query,
        (op, symbol): (BinOp, &str),
        all: bool,
        scope: &Scope,
    ) -> Result<BExpr, SqlError> {
        let mut bq = self.bind_query(q, Some(scope))?;
        if bq.columns.len() != 1 {
            return Err(SqlError::Syntax {
                message: if bq.columns.is_empty() {
                    "subquery has too few columns"
                } else {
                    "subquery has too many columns"
                }
                .into(),
            });
        }
        let st = bq.columns.first().map(|c| c.ty).unwrap_or(PgType::Unknown);
        operator_exists(xt, symbol, st)?;
        let t = common_type(xt, st);
        // The subquery's column converts too where the two are a timestamp type and
        // timestamptz (through the session's zone) or a date and a timestamp.
        if st != t && (through_zone(st, t) || st == PgType::Date) {
            let body = std::mem::replace(&mut bq.body, BSet::Values(Vec::new()));
            bq.body = coerce_branch(body, &[st], &[t])?;
            if let Some(c) = bq.columns.first_mut() {
                c.ty = t;
            }
        }
        // char(n) against a text column compares as text, without its padding.
        let x = match comparison_type(t, &[xt, st]) {
            PgType::Text if xt == PgType::Bpchar => compared(x, xt, PgType::Text)?,
            _ => coerce_to(x, xt, t)?,
        };
        Ok(BExpr::InSub(Box::new(x), Rc::new(bq), op, all))
    }

    /// Binds an expression; `aggs` is `Some` where aggregate calls are allowed.
    pub fn bind_expr(
        &mut self,
        e: &Expr,
        scope: &Scope,
        aggs: Option<&mut Vec<AggSpec>>,
    ) -> Result<(BExpr, PgType), SqlError> {
        self.bind_expr_node(e, scope, aggs)
            .map_err(|err| noted_at(e, err))
    }

    fn bind_expr_node(
        &mut self,
        e: &Expr,
        scope: &Scope,
        mut aggs: Option<&mut Vec<AggSpec>>,
    ) -> Result<(BExpr, PgType), SqlError> {
        macro_rules! sub {
            ($x:expr) => {
                self.bind_expr($x, scope, aggs.as_deref_mut())?
            };
        }
        Ok(match e {
            // PostgreSQL's grammar reads these words as calls, never as columns.
            Expr::Identifier(i)
                if i.quote_style.is_none()
                    && (i.value.eq_ignore_ascii_case("current_role")
                        || i.value.eq_ignore_ascii_case("current_schema")) =>
            {
                let call = Expr::Function(ast::Function {
                    name: ast::ObjectName::from(vec![ast::Ident::new(
                        i.value.to_ascii_lowercase(),
                    )]),
                    uses_odbc_syntax: false,
                    parameters: ast::FunctionArguments::None,
                    args: ast::FunctionArguments::None,
                    filter: None,
                    null_treatment: None,
                    over: None,
                    within_group: vec![],
                });
                sub!(&call)
            }
            // The word DEFAULT (reserved: a column of that name is quoted) stands for a
            // column's default only as a whole value of INSERT's VALUES or UPDATE's SET.
            Expr::Identifier(_) if is_default_keyword(e) => {
                return Err(SqlError::Syntax {
                    message: "DEFAULT is not allowed in this context".into(),
                })
            }
            Expr::Identifier(i) => {
                let read = self.resolve_column(None, &ident(i), scope)?;
                self.record_column_ref(i, &read.0, scope);
                read
            }
            Expr::CompoundIdentifier(parts) => {
                let names: Vec<String> = parts.iter().map(ident).collect();
                let read = match names.as_slice() {
                    [q, n] => Some(self.resolve_column(Some(q), n, scope)?),
                    [_, q, n] => Some(self.resolve_column(Some(q), n, scope)?),
                    _ => None,
                };
                if let (Some(read), Some(last)) = (read, parts.last()) {
                    self.record_column_ref(last, &read.0, scope);
                    return Ok(read);
                }
                match names.as_slice() {
                    // database.schema.table.column, as PostgreSQL answers it.
                    [_, _, _, _] => {
                        return Err(SqlError::UnsupportedByPostgres {
                            message: format!(
                                "cross-database references are not implemented: {}",
                                names.join(".")
                            ),
                        })
                    }
                    _ => {
                        return Err(SqlError::Syntax {
                            message: format!(
                                "improper qualified name (too many dotted names): {}",
                                names.join(".")
                            ),
                        })
                    }
                }
            }
            Expr::Value(v) => match (&v.value, self.params.as_mut()) {
                (ast::Value::Placeholder(p), Some(params)) => {
                    let n = p
                        .strip_prefix('$')
                        .and_then(|d| d.parse::<usize>().ok())
                        .ok_or_else(|| SqlError::Syntax {
                            message: format!("syntax error at or near \"{p}\""),
                        })?;
                    let cell = params
                        .entry(n)
                        .or_insert_with(|| Rc::new(Cell::new(PgType::Unknown)))
                        .clone();
                    let ty = cell.get();
                    (BExpr::Param(n, cell), ty)
                }
                (value, _) => {
                    let val = literal(value)?;
                    let ty = const_ty(&val);
                    (BExpr::Const(val), ty)
                }
            },
            Expr::TypedString(ts) => {
                let (ty, _) = sql_type(&ts.data_type)?;
                let s = match &ts.value.value {
                    ast::Value::SingleQuotedString(s) | ast::Value::EscapedStringLiteral(s) => {
                        s.clone()
                    }
                    other => other.to_string(),
                };
                (BExpr::Const(parse_text(&s, ty)?), ty)
            }
            Expr::Nested(inner) => sub!(inner),
            Expr::Collate { expr, .. } => sub!(expr),
            Expr::BinaryOp { left, op, right } => {
                if let Some(read) = prefix_operator_over(left, op, right) {
                    return self.bind_expr(&read, scope, aggs);
                }
                if let (Expr::Tuple(ls), Expr::Tuple(rs)) = (left.as_ref(), right.as_ref()) {
                    let compared = row_comparison(ls, op, rs)?;
                    return self.bind_expr(&compared, scope, aggs);
                }
                let (l, lt) = sub!(left);
                let (r, rt) = sub!(right);
                self.bind_binop(l, lt, op, r, rt)?
            }
            Expr::UnaryOp { op, expr } => {
                let (x, t) = sub!(expr);
                match op {
                    ast::UnaryOperator::Not => (
                        BExpr::Not(Box::new(boolean_test_argument((x, t), "NOT")?)),
                        PgType::Bool,
                    ),
                    // A negative number literal is one constant (`-2147483648` is an
                    // integer); negating anything else keeps the operand's type.
                    ast::UnaryOperator::Minus => match x {
                        BExpr::Const(Value::Int(i)) if matches!(expr.as_ref(), Expr::Value(_)) => {
                            let v = Value::Int(-i);
                            let ty = const_ty(&v);
                            (BExpr::Const(v), ty)
                        }
                        // `-9223372036854775808` is bigint's least value, as PostgreSQL's
                        // grammar negates the literal before typing it.
                        BExpr::Const(Value::Numeric(s))
                            if s == "9223372036854775808" && is_literal(expr) =>
                        {
                            (BExpr::Const(Value::Int(i64::MIN)), PgType::Int8)
                        }
                        BExpr::Const(Value::Numeric(s)) => (
                            BExpr::Const(Value::Numeric(numeric_neg(&s))),
                            PgType::Numeric,
                        ),
                        BExpr::Const(Value::Float(f)) => {
                            (BExpr::Const(Value::Float(-f)), PgType::Float8)
                        }
                        BExpr::Const(Value::Interval(iv)) => {
                            let v = crate::datetime::interval_neg(iv).map(Value::Interval);
                            let unfolded = BExpr::Neg(Box::new(BExpr::Const(Value::Interval(iv))));
                            (self.fold(unfolded, v), PgType::Interval)
                        }
                        _ if t == PgType::Unknown => {
                            return Err(ambiguous("operator is not unique: - unknown".into()))
                        }
                        _ if !t.is_numeric_family() && t != PgType::Interval => {
                            return Err(no_such_operator(format!("- {}", t.sql_name())))
                        }
                        other => (narrow_integer(BExpr::Neg(Box::new(other)), t), t),
                    },
                    ast::UnaryOperator::Plus => (x, t),
                    // Every bit flipped: as an i64, within the type's range whatever its width.
                    ast::UnaryOperator::BitwiseNot => match t {
                        PgType::Int2 | PgType::Int4 | PgType::Int8 => {
                            (BExpr::Func("bit_not".into(), vec![x]), t)
                        }
                        PgType::Unknown => {
                            return Err(ambiguous("operator is not unique: ~ unknown".into()))
                        }
                        _ => return Err(no_such_operator(format!("~ {}", t.sql_name()))),
                    },
                    other => return Err(SqlError::feature(format!("operator {other}"))),
                }
            }
            // A record is NULL when every field is, NOT NULL when none is (SQL's row rule).
            Expr::IsNull(x) | Expr::IsNotNull(x) => {
                let (v, t) = sub!(x);
                let not = matches!(e, Expr::IsNotNull(_));
                let test = match t {
                    PgType::Record(_) => BExpr::Func(
                        "record_is_null".into(),
                        vec![v, BExpr::Const(Value::Bool(not))],
                    ),
                    _ => BExpr::IsNull(Box::new(v), not),
                };
                (test, PgType::Bool)
            }
            // x IS [NOT] TRUE/FALSE is x IS [NOT] DISTINCT FROM true/false; IS [NOT] UNKNOWN is
            // IS [NOT] NULL of a boolean.
            Expr::IsTrue(x) | Expr::IsFalse(x) | Expr::IsNotTrue(x) | Expr::IsNotFalse(x) => {
                let (truth, not_distinct, test) = match e {
                    Expr::IsTrue(_) => (true, true, "IS TRUE"),
                    Expr::IsFalse(_) => (false, true, "IS FALSE"),
                    Expr::IsNotTrue(_) => (true, false, "IS NOT TRUE"),
                    _ => (false, false, "IS NOT FALSE"),
                };
                let b = boolean_test_argument(sub!(x), test)?;
                (
                    BExpr::IsDistinct(
                        Box::new(b),
                        Box::new(BExpr::Const(Value::Bool(truth))),
                        not_distinct,
                    ),
                    PgType::Bool,
                )
            }
            Expr::IsUnknown(x) | Expr::IsNotUnknown(x) => {
                let not = matches!(e, Expr::IsNotUnknown(_));
                let test = if not { "IS NOT UNKNOWN" } else { "IS UNKNOWN" };
                let b = boolean_test_argument(sub!(x), test)?;
                (BExpr::IsNull(Box::new(b), not), PgType::Bool)
            }
            Expr::IsDistinctFrom(a, b) | Expr::IsNotDistinctFrom(a, b) => {
                let neg = matches!(e, Expr::IsNotDistinctFrom(..));
                let (l, lt) = sub!(a);
                let (r, rt) = sub!(b);
                operator_exists(lt, "=", rt)?;
                let t = comparison_type(common_type(lt, rt), &[lt, rt]);
                (
                    BExpr::IsDistinct(
                        Box::new(compared(l, lt, t)?),
                        Box::new(compared(r, rt, t)?),
                        neg,
                    ),
                    PgType::Bool,
                )
            }
            // `(a, b) IN ((1, 2), (3, 4))`: one row comparison per item.
            Expr::In {
                expr,
                target: ast::InTarget::List(list),
                negated,
                ..
            } if matches!(expr.as_ref(), Expr::Tuple(_)) => {
                let Expr::Tuple(row) = expr.as_ref() else {
                    return Err(SqlError::internal("row IN"));
                };
                let (op, join) = if *negated {
                    (ast::BinaryOperator::NotEq, ast::BinaryOperator::And)
                } else {
                    (ast::BinaryOperator::Eq, ast::BinaryOperator::Or)
                };
                let mut combined: Option<Expr> = None;
                for item in list {
                    let Expr::Tuple(other) = item else {
                        return Err(SqlError::feature(
                            "a row compared with a value that is not a row",
                        ));
                    };
                    let one = row_comparison(row, &op, other)?;
                    combined = Some(match combined {
                        None => one,
                        Some(c) => Expr::BinaryOp {
                            left: Box::new(c),
                            op: join.clone(),
                            right: Box::new(one),
                        },
                    });
                }
                let combined = combined.ok_or_else(|| SqlError::internal("empty IN list"))?;
                return self.bind_expr(&combined, scope, aggs);
            }
            Expr::In {
                expr,
                target,
                negated,
                ..
            } => {
                let (x, xt) = sub!(expr);
                match target {
                    ast::InTarget::List(list) => {
                        let mut items = Vec::new();
                        let mut t = xt;
                        let mut bound = Vec::new();
                        for it in list {
                            let (b, bt) = sub!(it);
                            operator_exists(xt, "=", bt)?;
                            t = common_type(t, bt);
                            bound.push((b, bt));
                        }
                        let types: Vec<PgType> = std::iter::once(xt)
                            .chain(bound.iter().map(|b| b.1))
                            .collect();
                        let t = comparison_type(t, &types);
                        for (b, bt) in bound {
                            items.push(compared(b, bt, t)?);
                        }
                        (
                            BExpr::InList(Box::new(compared(x, xt, t)?), items, *negated),
                            PgType::Bool,
                        )
                    }
                    ast::InTarget::Subquery(q) => {
                        let (op, all) = if *negated {
                            (BinOp::NotEq, true)
                        } else {
                            (BinOp::Eq, false)
                        };
                        (
                            self.bind_quantified(x, xt, q, (op, "="), all, scope)?,
                            PgType::Bool,
                        )
                    }
                    _ => return Err(SqlError::feature("IN target")),
                }
            }
            Expr::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let (x, xt) = sub!(expr);
                let (lo, lt) = sub!(low);
                let (hi, ht) = sub!(high);
                // PostgreSQL rewrites `x BETWEEN a AND b` as `x >= a AND x <= b` (NOT BETWEEN
                // as `x < a OR x > b`), each operator resolved on its own.
                let (below, above) = if *negated { ("<", ">") } else { (">=", "<=") };
                operator_exists(xt, below, lt)?;
                operator_exists(xt, above, ht)?;
                let t = comparison_type(common_type(common_type(xt, lt), ht), &[xt, lt, ht]);
                let x = compared(x, xt, t)?;
                let ge = BExpr::Bin(
                    BinOp::GtEq,
                    Box::new(x.clone()),
                    Box::new(compared(lo, lt, t)?),
                );
                let le = BExpr::Bin(BinOp::LtEq, Box::new(x), Box::new(compared(hi, ht, t)?));
                let both = BExpr::And(Box::new(ge), Box::new(le));
                (
                    if *negated {
                        BExpr::Not(Box::new(both))
                    } else {
                        both
                    },
                    PgType::Bool,
                )
            }
            Expr::Like {
                negated,
                expr,
                pattern,
                escape_char,
                ..
            }
            | Expr::ILike {
                negated,
                expr,
                pattern,
                escape_char,
                ..
            } => {
                let ci = matches!(e, Expr::ILike { .. });
                if matches!(
                    e,
                    Expr::Like { any: true, .. } | Expr::ILike { any: true, .. }
                ) {
                    return Err(SqlError::feature("LIKE ANY/ALL (array)"));
                }
                let (x, xt) = sub!(expr);
                let (p, pt) = sub!(pattern);
                if xt == PgType::Bytea || pt == PgType::Bytea {
                    return Err(SqlError::feature("LIKE on bytea"));
                }
                // PostgreSQL's `~~` family takes strings (and bytea, which RockLake does not
                // match against): anything else has no such operator.
                let stringy = |t: PgType| t.is_string() || t == PgType::Unknown;
                if !stringy(xt) || !stringy(pt) {
                    let op = match (*negated, ci) {
                        (false, false) => "~~",
                        (true, false) => "!~~",
                        (false, true) => "~~*",
                        (true, true) => "!~~*",
                    };
                    return Err(no_such_operator(format!(
                        "{} {op} {}",
                        xt.sql_name(),
                        pt.sql_name()
                    )));
                }
                let mut p = coerce_expr(p, PgType::Text)?;
                if let Some(esc) = escape_char {
                    // PostgreSQL's `x LIKE p ESCAPE e` is `x ~~ like_escape(p, e)`: the
                    // pattern rewritten to escape with a backslash.
                    let (e, et) = sub!(esc);
                    if !stringy(et) {
                        return Err(no_such_function("pg_catalog.like_escape", &[pt, et]));
                    }
                    p = match (p, coerce_expr(e, PgType::Text)?) {
                        (BExpr::Const(Value::Text(pv)), BExpr::Const(Value::Text(ev))) => {
                            BExpr::Const(Value::text(like_escape(&pv, &ev)?))
                        }
                        (p, e) => BExpr::Func("like_escape".into(), vec![p, e]),
                    };
                }
                (
                    BExpr::Like(
                        Box::new(coerce_expr(x, PgType::Text)?),
                        Box::new(p),
                        *negated,
                        ci,
                    ),
                    PgType::Bool,
                )
            }
            Expr::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | Expr::AllOp {
                left,
                compare_op,
                right,
            } => {
                let all = matches!(e, Expr::AllOp { .. });
                let op = match compare_op {
                    ast::BinaryOperator::Eq => BinOp::Eq,
                    ast::BinaryOperator::NotEq => BinOp::NotEq,
                    ast::BinaryOperator::Lt => BinOp::Lt,
                    ast::BinaryOperator::LtEq => BinOp::LtEq,
                    ast::BinaryOperator::Gt => BinOp::Gt,
                    ast::BinaryOperator::GtEq => BinOp::GtEq,
                    other => return Err(SqlError::feature(format!("operator {other} ANY"))),
                };
                let (l, lt) = sub!(left);
                if let Expr::Subquery(q) = right.as_ref() {
                    let symbol = compare_op.to_string();
                    let bound = self.bind_quantified(l, lt, q, (op, &symbol), all, scope)?;
                    return Ok((bound, PgType::Bool));
                }
                let (r, rt) = sub!(right);
                let (r, elem) = match (rt, rt.element()) {
                    (_, Some(elem)) => (r, elem),
                    (PgType::Unknown, _) => (coerce_or_cast(r, PgType::TextArray)?, PgType::Text),
                    (_, None) => {
                        return Err(SqlError::WrongObjectType {
                            message: "op ANY/ALL (array) requires array on right side".into(),
                        })
                    }
                };
                // An untyped array takes the left side's element type, as PostgreSQL resolves it.
                // text[] is also the array of a type RockLake has no array type for (regclass,
                // "char"): facing such a type it may be that type's array, and is not checked.
                let stand_in = elem == PgType::Text && lt.array_of().is_none();
                if rt != PgType::Unknown && !stand_in {
                    operator_exists(lt, &compare_op.to_string(), elem)?;
                }
                let (l, lt) = if lt == PgType::Unknown {
                    (coerce_expr(l, elem)?, elem)
                } else if lt == PgType::Bpchar && elem.is_string() && elem != PgType::Bpchar {
                    // char(n) against text elements compares as text, without its padding.
                    (BExpr::Func("bpchar_text".into(), vec![l]), PgType::Text)
                } else {
                    (l, lt)
                };
                // A timestamp facing timestamptz elements (or the other way) compares as a
                // timestamptz, converted through the session's zone.
                let local = |t: PgType| matches!(t, PgType::Timestamp | PgType::Date);
                let (l, r, as_ty) = if local(lt) && elem == PgType::Timestamptz {
                    (zone_convert(l, lt, elem)?, r, elem)
                } else if lt == PgType::Timestamptz && local(elem) {
                    (l, BExpr::Func("array_to_timestamptz".into(), vec![r]), lt)
                } else {
                    (l, r, lt)
                };
                (
                    BExpr::AnyArray(op, Box::new(l), Box::new(r), all, as_ty),
                    PgType::Bool,
                )
            }
            Expr::CompoundFieldAccess { root, access_chain } => {
                // `t.col[i]` reads as a qualified column `t.col`, then the subscript.
                let (qualified, chain) = match (root.as_ref(), access_chain.as_slice()) {
                    (
                        Expr::Identifier(q),
                        [ast::AccessExpr::Dot(Expr::Identifier(c)), rest @ ..],
                    ) => (
                        Some(Expr::CompoundIdentifier(vec![q.clone(), c.clone()])),
                        rest,
                    ),
                    _ => (None, access_chain.as_slice()),
                };
                if let (None, [ast::AccessExpr::Dot(Expr::Identifier(field))]) = (&qualified, chain)
                {
                    let inner = unnested(root);
                    let bound = self.bind_expr(inner, scope, aggs.as_deref_mut());
                    // `(alias).column`: the column of a FROM item's row, when no column has
                    // the alias's name.
                    if let (Err(SqlError::UndefinedColumn { .. }), Expr::Identifier(q)) =
                        (&bound, inner)
                    {
                        let column = Expr::CompoundIdentifier(vec![q.clone(), field.clone()]);
                        let read = crate::errpos::preserved(|| {
                            self.bind_expr(&column, scope, aggs.as_deref_mut())
                        });
                        // Neither a column nor a FROM item of that name: the column's error.
                        return read.or(bound);
                    }
                    let (r, rt) = bound?;
                    return field_select(r, rt, &ident(field));
                }
                let [ast::AccessExpr::Subscript(ast::Subscript::Index { index })] = chain else {
                    return Err(SqlError::feature("field access or array slices"));
                };
                let root = qualified.as_ref().unwrap_or(root);
                let (a, at) = sub!(root);
                let (i, _) = sub!(index);
                let elem = match at.element() {
                    Some(elem) => elem,
                    // A name is a fixed array of 64 characters (`typname[0] = '_'`).
                    None if at == PgType::Name => {
                        return Ok((
                            BExpr::Func(
                                "name_subscript".into(),
                                vec![a, coerce_or_cast(i, PgType::Int4)?],
                            ),
                            PgType::Char,
                        ));
                    }
                    None => {
                        let other = at;
                        return Err(SqlError::DatatypeMismatch {
                            message: format!(
                                "cannot subscript type {} because it does not support subscripting",
                                other.sql_name()
                            ),
                            hint: None,
                        });
                    }
                };
                let subscript = if at.is_vector() {
                    "int2vector_subscript"
                } else {
                    "array_subscript"
                };
                (
                    BExpr::Func(subscript.into(), vec![a, coerce_or_cast(i, PgType::Int4)?]),
                    elem,
                )
            }
            Expr::Cast {
                expr, data_type, ..
            } => {
                let (ty, typmod) = sql_type(data_type)?;
                let (x, xt) = sub!(expr);
                if xt.is_reg() && ty.is_string() {
                    // The object's name (a catalog lookup, as for its text output).
                    self.session_dependent = true;
                    let name = BExpr::Func(
                        "reg_out".into(),
                        vec![x, BExpr::Const(Value::Int(xt.oid().into()))],
                    );
                    return Ok((cast_from(name, PgType::Text, ty)?, ty));
                }
                // An array's typmod applies to each element.
                let scalar = match ty.element() {
                    Some(e) if !ty.is_vector() => e,
                    _ => ty,
                };
                let datetime_precision = typmod >= 0
                    && matches!(
                        scalar,
                        PgType::Timestamp | PgType::Timestamptz | PgType::Time
                    );
                if datetime_precision
                    || typmod >= 4
                        && matches!(scalar, PgType::Numeric | PgType::Varchar | PgType::Bpchar)
                {
                    // `numeric(p, s)` rounds and checks the precision; `varchar(n)` truncates,
                    // `char(n)` truncates or pads with spaces.
                    let cast = cast_from(x, xt, ty)?;
                    let call = BExpr::Func(
                        "apply_typmod".into(),
                        vec![
                            cast,
                            BExpr::Const(Value::Int(typmod.into())),
                            // A char(n) array's elements are cut, not padded: RockLake
                            // compares array elements as text, not as bpchar.
                            BExpr::Const(Value::Bool(ty == PgType::Bpchar)),
                        ],
                    );
                    return Ok((call, ty));
                }
                if ty.is_reg() && (xt.is_string() || xt == PgType::Unknown) {
                    // Looks the name up (a relation through search_path).
                    self.session_dependent = true;
                    let input = match ty {
                        PgType::Regclass => "regclass_in",
                        PgType::Regtype => "regtype_in",
                        PgType::Regproc => "regproc_in",
                        _ => "regnamespace_in",
                    };
                    return Ok((BExpr::Func(input.into(), vec![x]), ty));
                }
                (cast_from(x, xt, ty)?, ty)
            }
            Expr::Interval(iv) => {
                let text = match iv.value.as_ref() {
                    Expr::Value(v) => match &v.value {
                        ast::Value::SingleQuotedString(s) => s.clone(),
                        other => other.to_string(),
                    },
                    other => {
                        return Err(SqlError::feature(format!(
                            "INTERVAL {}",
                            first_words(&other.to_string())
                        )))
                    }
                };
                // `INTERVAL '2' HOUR`: a bare number in the named unit. Ranges (`HOUR TO
                // SECOND`) would also truncate the lower fields; not supported.
                let text = match (&iv.leading_field, &iv.last_field) {
                    (None, None) => text,
                    (Some(unit), None) if text.trim().parse::<f64>().is_ok() => {
                        format!("{text} {unit}")
                    }
                    _ => return Err(SqlError::feature("INTERVAL with a field qualifier")),
                };
                (
                    BExpr::Const(parse_text(&text, PgType::Interval)?),
                    PgType::Interval,
                )
            }
            Expr::AtTimeZone {
                timestamp,
                time_zone,
            } => {
                let (x, xt) = sub!(timestamp);
                let (z, zt) = sub!(time_zone);
                // PostgreSQL names the function the syntax calls.
                self.bind_datetime_call("timezone", vec![z, x], &[zt, xt])
                    .map_err(|e| match e {
                        SqlError::UndefinedFunction { message, hint } => {
                            SqlError::UndefinedFunction {
                                message: message.replacen("timezone(", "pg_catalog.timezone(", 1),
                                hint,
                            }
                        }
                        other => other,
                    })?
            }
            Expr::Extract { field, expr, .. } => {
                let (x, xt) = sub!(expr);
                let unit = BExpr::Const(Value::text(field.to_string().to_ascii_lowercase()));
                self.bind_datetime_call("extract", vec![unit, x], &[PgType::Text, xt])?
            }
            Expr::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let op = match operand {
                    Some(o) => Some(sub!(o)),
                    None => None,
                };
                let mut arms = Vec::new();
                let mut then_types = Vec::new();
                let mut when_types = Vec::new();
                // PostgreSQL's planner drops the arms a constant condition rules out (and all
                // after a constant true), so planning errors in them never come.
                let mut live = true;
                for cw in conditions {
                    let saved = (!live).then(|| self.plan_error.take());
                    let (c, ct) = sub!(&cw.condition);
                    when_types.push(ct);
                    let ruled_out =
                        op.is_none() && matches!(c, BExpr::Const(Value::Bool(false) | Value::Null));
                    let saved_result = (live && ruled_out).then(|| self.plan_error.take());
                    let (r, rt) = sub!(&cw.result);
                    if let Some(s) = saved_result {
                        self.plan_error = s;
                    }
                    if let Some(s) = saved {
                        self.plan_error = s;
                    }
                    if op.is_none() && matches!(c, BExpr::Const(Value::Bool(true))) {
                        live = false;
                    }
                    then_types.push(rt);
                    arms.push((c, r));
                }
                // PostgreSQL resolves the result type with the ELSE branch first.
                let mut else_type = None;
                let saved = (!live).then(|| self.plan_error.take());
                let el = match else_result {
                    Some(x) => {
                        let (b, bt) = sub!(x);
                        else_type = Some(bt);
                        Some(b)
                    }
                    None => None,
                };
                if let Some(s) = saved {
                    self.plan_error = s;
                }
                let mut t = resolve_common(
                    "CASE",
                    else_type.into_iter().chain(then_types.iter().copied()),
                )?;
                // Only untyped literals (or NULLs): PostgreSQL resolves them as text.
                if t == PgType::Unknown {
                    t = PgType::Text;
                }
                // `CASE x WHEN v`: each v compares with x as `x = v` would, a timestamp facing a
                // timestamptz through the session's zone.
                let op = match op {
                    Some((o, mut ot)) => {
                        // json has no `=`, not even in `CASE j WHEN …`.
                        for ct in &when_types {
                            if ot == PgType::Json || *ct == PgType::Json {
                                operator_exists(ot, "=", *ct)?;
                            }
                        }
                        let local = matches!(ot, PgType::Timestamp | PgType::Date);
                        let o = if local && when_types.contains(&PgType::Timestamptz) {
                            let o = zone_convert(o, ot, PgType::Timestamptz)?;
                            ot = PgType::Timestamptz;
                            o
                        } else {
                            o
                        };
                        // char(n) compares without its padding (each arm as `x = v` would).
                        let bpchar = ot == PgType::Bpchar;
                        let o = if bpchar {
                            BExpr::Func("bpchar_text".into(), vec![o])
                        } else {
                            o
                        };
                        for ((c, _), ct) in arms.iter_mut().zip(&when_types) {
                            if bpchar {
                                let x = std::mem::replace(c, BExpr::Const(Value::Null));
                                let as_ty = comparison_type(PgType::Bpchar, &[ot, *ct]);
                                *c = compared(x, *ct, as_ty)?;
                            } else if *ct != ot && (*ct == PgType::Unknown || through_zone(*ct, ot))
                            {
                                let x = std::mem::replace(c, BExpr::Const(Value::Null));
                                *c = coerce_to(x, *ct, ot)?;
                            }
                        }
                        Some(Box::new(o))
                    }
                    None => None,
                };
                let arms = arms
                    .into_iter()
                    .zip(then_types)
                    .map(|((c, r), rt)| Ok((c, coerce_result(r, rt, t)?)))
                    .collect::<Result<Vec<_>, SqlError>>()?;
                let el = match (el, else_type) {
                    (Some(x), Some(xt)) => Some(Box::new(coerce_result(x, xt, t)?)),
                    _ => None,
                };
                (BExpr::Case(op, arms, el), t)
            }
            Expr::Exists { subquery, negated } => {
                let bq = self.bind_query(subquery, Some(scope))?;
                (BExpr::Exists(Rc::new(bq), *negated), PgType::Bool)
            }
            Expr::Subquery(q) => {
                let bq = self.bind_query(q, Some(scope))?;
                if bq.columns.len() != 1 {
                    return Err(SqlError::Syntax {
                        message: "subquery must return only one column".into(),
                    });
                }
                let t = bq.columns[0].ty;
                (BExpr::Scalar(Rc::new(bq)), t)
            }
            Expr::Function(f) => self.bind_function(f, scope, aggs)?,
            Expr::Ceil {
                expr,
                field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime),
            } => self.bind_call("ceil".into(), std::slice::from_ref(expr), scope, aggs)?,
            Expr::Floor {
                expr,
                field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime),
            } => self.bind_call("floor".into(), std::slice::from_ref(expr), scope, aggs)?,
            Expr::Position { expr, r#in } => {
                let args = [(**r#in).clone(), (**expr).clone()];
                self.bind_call("strpos".into(), &args, scope, aggs)?
            }
            Expr::Substring {
                expr,
                substring_from,
                substring_for,
                shorthand,
                ..
            } => {
                let from = substring_from
                    .as_deref()
                    .cloned()
                    .unwrap_or_else(|| Expr::value(ast::Value::Number("1".into(), false)));
                let mut args = vec![(**expr).clone(), from];
                args.extend(substring_for.as_deref().cloned());
                // `SUBSTRING(s FROM x)` is the regular expression form when `x` is text;
                // `substr(s, x)` never is.
                let name = if *shorthand { "substr" } else { "substring" };
                self.bind_call(name.into(), &args, scope, aggs)?
            }
            Expr::Trim {
                trim_where,
                trim_what,
                expr,
                trim_characters: None,
            } => {
                let name = match trim_where {
                    Some(ast::TrimWhereField::Leading) => "ltrim",
                    Some(ast::TrimWhereField::Trailing) => "rtrim",
                    Some(ast::TrimWhereField::Both) | None => "btrim",
                };
                let mut args = vec![(**expr).clone()];
                args.extend(trim_what.as_deref().cloned());
                self.bind_call(name.into(), &args, scope, aggs)?
            }
            Expr::Array(arr) => {
                let mut bound = Vec::new();
                for x in &arr.elem {
                    bound.push(sub!(x));
                }
                if bound.iter().any(|(_, t)| t.is_array()) {
                    // PostgreSQL builds a two-dimensional array; RockLake's have one.
                    return Err(SqlError::feature("multidimensional arrays"));
                }
                // The elements' common type, as PostgreSQL resolves it; all untyped is text.
                let elem = match resolve_common("ARRAY", bound.iter().map(|b| b.1))? {
                    PgType::Unknown => PgType::Text,
                    t => t,
                };
                let ty = array_type_of(elem)?;
                let to = ty.element().unwrap_or(PgType::Text);
                let items = bound
                    .into_iter()
                    .map(|(e, t)| match t {
                        _ if t == to => Ok(e),
                        // A type without an array of its own: its elements as text.
                        _ if to != elem => cast_from(e, t, to),
                        PgType::Unknown => coerce_expr(e, to),
                        _ if through_zone(t, to) => zone_convert(e, t, to),
                        _ => coerce_or_cast(e, to),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                (BExpr::Func("array".into(), items), ty)
            }
            other => {
                return Err(SqlError::feature(format!(
                    "expression {}",
                    first_words(&other.to_string())
                )))
            }
        })
    }

    fn bind_binop(
        &mut self,
        l: BExpr,
        lt: PgType,
        op: &ast::BinaryOperator,
        r: BExpr,
        rt: PgType,
    ) -> Result<(BExpr, PgType), SqlError> {
        use ast::BinaryOperator as O;
        // OPERATOR(pg_catalog.~) and friends, as psql writes them.
        if let O::PGCustomBinaryOperator(parts) = op {
            let plain = match parts.as_slice() {
                [schema, o] if schema == "pg_catalog" => o.as_str(),
                [o] => o.as_str(),
                _ => "",
            };
            let mapped = match plain {
                "~" => Some(O::PGRegexMatch),
                "!~" => Some(O::PGRegexNotMatch),
                "~*" => Some(O::PGRegexIMatch),
                "!~*" => Some(O::PGRegexNotIMatch),
                "=" => Some(O::Eq),
                "<>" => Some(O::NotEq),
                "~~" => Some(O::PGLikeMatch),
                _ => None,
            };
            if let Some(m) = mapped {
                return self.bind_binop(l, lt, &m, r, rt);
            }
        }
        // PostgreSQL's lexer ends an operator before a trailing `-` (`j->-1` is `j -> -1`);
        // sqlparser's reads `->-` as one.
        if let O::Custom(o) = op {
            let arrow = match o.as_str() {
                "->-" => Some(O::Arrow),
                "->>-" => Some(O::LongArrow),
                _ => None,
            };
            if let Some(m) = arrow {
                return self.bind_binop(l, lt, &m, BExpr::Neg(Box::new(r)), rt);
            }
        }
        if let O::HashArrow | O::HashLongArrow = op {
            // json #> text[] (the member at a path, as json), #>> (as text).
            let path = match rt {
                PgType::Unknown | PgType::TextArray => Some(coerce_expr(r, PgType::TextArray)?),
                _ => None,
            };
            let Some(path) = path.filter(|_| lt == PgType::Json) else {
                let operands = format!("{} {op} {}", lt.sql_name(), rt.sql_name());
                if lt == PgType::Unknown && matches!(rt, PgType::Unknown | PgType::TextArray) {
                    return Err(ambiguous(format!("operator is not unique: {operands}")));
                }
                return Err(no_such_operator(operands));
            };
            let (name, ty) = match op {
                O::HashArrow => ("json_fn:#>", PgType::Json),
                _ => ("json_fn:#>>", PgType::Text),
            };
            return Ok((BExpr::Func(name.into(), vec![l, path]), ty));
        }
        if let O::Arrow | O::LongArrow = op {
            // json -> text | integer (a member as json), ->> (as text). With an untyped left
            // side, json's and jsonb's operators both fit.
            let sel_ok = |t: PgType| {
                t == PgType::Unknown || t.is_string() || matches!(t, PgType::Int2 | PgType::Int4)
            };
            let sel = match rt {
                PgType::Unknown
                | PgType::Text
                | PgType::Varchar
                | PgType::Bpchar
                | PgType::Name => Some(cast_from(r, rt, PgType::Text)?),
                PgType::Int2 | PgType::Int4 => Some(r),
                _ => None,
            };
            let Some(sel) = sel.filter(|_| lt == PgType::Json) else {
                let operands = format!("{} {op} {}", lt.sql_name(), rt.sql_name());
                if lt == PgType::Unknown && sel_ok(rt) {
                    // json's and jsonb's both take two untyped literals.
                    return Err(ambiguous(format!("operator is not unique: {operands}")));
                }
                return Err(no_such_operator(operands));
            };
            let (name, ty) = match op {
                O::Arrow => ("json_fn:->", PgType::Json),
                _ => ("json_fn:->>", PgType::Text),
            };
            return Ok((BExpr::Func(name.into(), vec![l, sel]), ty));
        }
        let cmp = |o: BinOp| -> Option<BinOp> { Some(o) };
        let bop = match op {
            O::Eq => cmp(BinOp::Eq),
            O::NotEq => cmp(BinOp::NotEq),
            O::Lt => cmp(BinOp::Lt),
            O::LtEq => cmp(BinOp::LtEq),
            O::Gt => cmp(BinOp::Gt),
            O::GtEq => cmp(BinOp::GtEq),
            O::And => {
                return Ok((
                    BExpr::And(
                        Box::new(boolean_test_argument((l, lt), "AND")?),
                        Box::new(boolean_test_argument((r, rt), "AND")?),
                    ),
                    PgType::Bool,
                ))
            }
            O::Or => {
                return Ok((
                    BExpr::Or(
                        Box::new(boolean_test_argument((l, lt), "OR")?),
                        Box::new(boolean_test_argument((r, rt), "OR")?),
                    ),
                    PgType::Bool,
                ))
            }
            O::StringConcat if lt.is_array() || rt.is_array() => {
                let ty = if lt.is_array() { lt } else { rt };
                let elem = ty.element().unwrap_or(PgType::Text);
                // An untyped literal is read as the array; a value of another type is an
                // element to append or prepend (array_append / array_prepend).
                let call = match (
                    lt.is_array() || lt == PgType::Unknown,
                    rt.is_array() || rt == PgType::Unknown,
                ) {
                    (true, true) => ("array_cat", coerce_or_cast(l, ty)?, coerce_or_cast(r, ty)?),
                    (true, false) => (
                        "array_append",
                        coerce_or_cast(l, ty)?,
                        cast_from(r, rt, elem)?,
                    ),
                    _ => (
                        "array_prepend",
                        cast_from(l, lt, elem)?,
                        coerce_or_cast(r, ty)?,
                    ),
                };
                return Ok((BExpr::Func(call.0.into(), vec![call.1, call.2]), ty));
            }
            O::AtArrow | O::ArrowAt | O::PGOverlap if lt.is_array() || rt.is_array() => {
                // anyarray's operators: both sides one array type (an untyped literal is read
                // as the other side's).
                let ty = if lt.is_array() { lt } else { rt };
                if (lt != ty && lt != PgType::Unknown) || (rt != ty && rt != PgType::Unknown) {
                    return Err(no_such_operator(format!(
                        "{} {op} {}",
                        lt.sql_name(),
                        rt.sql_name()
                    )));
                }
                let name = match op {
                    O::AtArrow => "array_contains",
                    O::ArrowAt => "array_contained",
                    _ => "array_overlap",
                };
                let read = |e: BExpr, t: PgType| match t {
                    PgType::Unknown => coerce_or_cast(e, ty),
                    _ => Ok(e),
                };
                let args = vec![read(l, lt)?, read(r, rt)?];
                return Ok((BExpr::Func(name.into(), args), PgType::Bool));
            }
            O::StringConcat
                if matches!(
                    (lt, rt),
                    (PgType::Bytea, PgType::Bytea | PgType::Unknown)
                        | (PgType::Unknown, PgType::Bytea)
                ) =>
            {
                let l = coerce_expr(l, PgType::Bytea)?;
                let r = coerce_expr(r, PgType::Bytea)?;
                return Ok((
                    BExpr::Func("bytea_concat".into(), vec![l, r]),
                    PgType::Bytea,
                ));
            }
            O::StringConcat => {
                let l = cast_from(l, lt, PgType::Text)?;
                let r = cast_from(r, rt, PgType::Text)?;
                return Ok((
                    BExpr::Bin(BinOp::Concat, Box::new(l), Box::new(r)),
                    PgType::Text,
                ));
            }
            O::Plus => Some(BinOp::Add),
            O::Minus => Some(BinOp::Sub),
            O::Multiply => Some(BinOp::Mul),
            O::Divide => Some(BinOp::Div),
            O::Modulo => Some(BinOp::Mod),
            O::PGExp => {
                let mut args = vec![l, r];
                return match self.bind_math("power", &mut args, &[lt, rt]) {
                    Some(Err(SqlError::UndefinedFunction { .. })) => Err(no_such_operator(
                        format!("{} ^ {}", lt.sql_name(), rt.sql_name()),
                    )),
                    Some(bound) => bound,
                    None => Err(SqlError::internal("power")),
                };
            }
            O::PGLikeMatch | O::PGNotLikeMatch => {
                let neg = matches!(op, O::PGNotLikeMatch);
                return Ok((
                    BExpr::Like(
                        Box::new(coerce_expr(l, PgType::Text)?),
                        Box::new(coerce_expr(r, PgType::Text)?),
                        neg,
                        false,
                    ),
                    PgType::Bool,
                ));
            }
            O::PGRegexMatch | O::PGRegexNotMatch | O::PGRegexIMatch | O::PGRegexNotIMatch => {
                let name = match op {
                    O::PGRegexMatch => "regex_match",
                    O::PGRegexNotMatch => "regex_not_match",
                    O::PGRegexIMatch => "regex_imatch",
                    _ => "regex_not_imatch",
                };
                // The regular expression operators take strings.
                let stringy = |t: PgType| t.is_string() || t == PgType::Unknown;
                if !stringy(lt) || !stringy(rt) {
                    return Err(no_such_operator(format!(
                        "{} {op} {}",
                        lt.sql_name(),
                        rt.sql_name()
                    )));
                }
                return Ok((
                    BExpr::Func(
                        name.into(),
                        vec![coerce_expr(l, PgType::Text)?, coerce_expr(r, PgType::Text)?],
                    ),
                    PgType::Bool,
                ));
            }
            O::BitwiseAnd
            | O::BitwiseOr
            | O::PGBitwiseXor
            | O::PGBitwiseShiftLeft
            | O::PGBitwiseShiftRight => return bitwise_op(l, lt, op, r, rt),
            other => return Err(SqlError::feature(format!("operator {other}"))),
        };
        let Some(bop) = bop else {
            return Err(SqlError::internal("operator"));
        };
        let is_cmp = matches!(
            bop,
            BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq
        );
        if !is_cmp && (is_datetime(lt) || is_datetime(rt)) {
            return self.bind_datetime_op(l, lt, bop, r, rt);
        }
        // Unknown literals take the other side's type, as PostgreSQL resolves them.
        let t = match (lt, rt) {
            (PgType::Unknown, PgType::Unknown) if !is_cmp && bop != BinOp::Concat => {
                return Err(ambiguous(format!(
                    "operator is not unique: unknown {op} unknown"
                )));
            }
            (PgType::Unknown, PgType::Unknown) => PgType::Text,
            // json has no operators, not even against an untyped literal.
            (PgType::Unknown, PgType::Json) | (PgType::Json, PgType::Unknown) => {
                operator_exists(lt, &op.to_string(), rt)?;
                PgType::Json
            }
            (PgType::Unknown, x) | (x, PgType::Unknown) => x,
            (a, b) => {
                operator_exists(a, &op.to_string(), b)?;
                common_type(a, b)
            }
        };
        let float_mod = bop == BinOp::Mod && matches!(t, PgType::Float4 | PgType::Float8);
        if float_mod
            || !is_cmp
                && !t.is_numeric_family()
                && !matches!(
                    t,
                    PgType::Timestamptz | PgType::Timestamp | PgType::Date | PgType::Interval
                )
        {
            return Err(no_such_operator(format!(
                "{} {op} {}",
                lt.sql_name(),
                rt.sql_name()
            )));
        }
        // varchar has no operators of its own: PostgreSQL compares it as text, so that is
        // the type a parameter facing it gets.
        let param_ty = if t == PgType::Varchar {
            PgType::Text
        } else {
            t
        };
        for side in [&l, &r] {
            if let BExpr::Param(_, cell) = side {
                type_param(cell, param_ty);
            }
        }
        // A date facing a timestamp compares as that timestamp; char(n) without its padding.
        let (l, r) = if is_cmp {
            let t = comparison_type(t, &[lt, rt]);
            (compared(l, lt, t)?, compared(r, rt, t)?)
        } else {
            (coerce_to(l, lt, t)?, coerce_to(r, rt, t)?)
        };
        let out = if is_cmp {
            PgType::Bool
        } else if matches!(
            bop,
            BinOp::Div | BinOp::Mul | BinOp::Add | BinOp::Sub | BinOp::Mod
        ) && lt.is_integer()
            && rt.is_integer()
        {
            common_type(lt, rt)
        } else {
            t
        };
        let constants = matches!((&l, &r), (BExpr::Const(_), BExpr::Const(_)));
        let bin = BExpr::Bin(bop, Box::new(l), Box::new(r));
        let e = narrow_integer(strict_null(bin), out);
        if constants && !is_cmp {
            // Immutable arithmetic on constants is evaluated now, as PostgreSQL's planner
            // does: `1 % 0` fails even when no row is read.
            let none = Env {
                row: &[],
                parent: None,
                aggs: None,
            };
            let value = Executor::new(self.cx).eval(&e, &none);
            return Ok((self.fold(e, value), out));
        }
        Ok((e, out))
    }

    fn bind_function(
        &mut self,
        f: &ast::Function,
        scope: &Scope,
        mut aggs: Option<&mut Vec<AggSpec>>,
    ) -> Result<(BExpr, PgType), SqlError> {
        let parts = object_name(&f.name);
        let name = parts.last().cloned().unwrap_or_default();
        if parts.len() > 1 || !DETERMINISTIC_FUNCTIONS.contains(&name.as_str()) {
            self.session_dependent = true;
        }
        let mut order_by: &[ast::OrderByExpr] = &[];
        let (args, distinct, star) = match &f.args {
            ast::FunctionArguments::None => (vec![], false, false),
            ast::FunctionArguments::List(l) => {
                for clause in &l.clauses {
                    match clause {
                        ast::FunctionArgumentClause::OrderBy(keys) => order_by = keys,
                        other => {
                            return Err(SqlError::feature(format!(
                                "function argument clause {}",
                                first_words(&other.to_string())
                            )))
                        }
                    }
                }
                let mut star = false;
                let mut exprs = Vec::new();
                let mut named = Vec::new();
                for a in &l.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))
                            if named.is_empty() =>
                        {
                            exprs.push(e.clone())
                        }
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                        ast::FunctionArg::Named {
                            name: arg,
                            arg: ast::FunctionArgExpr::Expr(e),
                            ..
                        } => named.push((ident(arg), e.clone())),
                        ast::FunctionArg::ExprNamed {
                            name: Expr::Identifier(arg),
                            arg: ast::FunctionArgExpr::Expr(e),
                            ..
                        } => named.push((ident(arg), e.clone())),
                        ast::FunctionArg::Unnamed(_) => {
                            return Err(SqlError::Syntax {
                                message: "positional argument cannot follow named argument".into(),
                            })
                        }
                        _ => return Err(SqlError::feature("named function arguments")),
                    }
                }
                if !named.is_empty() {
                    exprs = place_named_arguments(&name, exprs, named)?;
                }
                (
                    exprs,
                    matches!(
                        l.duplicate_treatment,
                        Some(ast::DuplicateTreatment::Distinct)
                    ),
                    star,
                )
            }
            ast::FunctionArguments::Subquery(q) if name == "array" => {
                let bq = self.bind_query(q, Some(scope))?;
                if bq.columns.len() != 1 {
                    return Err(SqlError::Syntax {
                        message: "subquery must return only one column".into(),
                    });
                }
                let ty = array_type_of(bq.columns[0].ty)?;
                return Ok((BExpr::ArraySub(Rc::new(bq)), ty));
            }
            ast::FunctionArguments::Subquery(_) => {
                return Err(SqlError::feature("function with subquery argument"))
            }
        };
        if !f.within_group.is_empty() {
            return self.bind_ordered_set(f, &name, &args, scope, aggs);
        }
        if let Some(over) = &f.over {
            return self.bind_window(f, &name, over, &args, distinct, star, order_by, scope, aggs);
        }
        if name == "grouping" && parts.len() == 1 && !star && !distinct && order_by.is_empty() {
            return self.bind_grouping(&args, scope, aggs.is_some());
        }
        let agg = aggregate_func(&name, star);
        if let Some(func) = agg {
            let Some(list) = aggs.as_deref_mut() else {
                return Err(SqlError::AggregateMisplaced {
                    message: match self.clause {
                        "aggregate arguments" => "aggregate function calls cannot be nested".into(),
                        "this context" => "aggregate functions are not allowed here".into(),
                        c => format!("aggregate functions are not allowed in {c}"),
                    },
                });
            };
            let mut bargs = Vec::new();
            let mut ty = PgType::Int8;
            let volatile_before = self.volatile_calls;
            // Aggregate arguments are evaluated per input row: never nested aggregates,
            // window or set-returning calls.
            let windows = self.windows.take();
            let srfs = self.srfs.take();
            let clause = std::mem::replace(&mut self.clause, "aggregate arguments");
            let bound = args
                .iter()
                .map(|a| self.bind_expr(a, scope, None))
                .collect::<Result<Vec<_>, _>>();
            self.windows = windows;
            self.clause = clause;
            let bound = bound.and_then(|bound| {
                let types: Vec<PgType> = bound.iter().map(|(_, t)| *t).collect();
                aggregate_arguments_exist(func, &types, &name)?;
                let bytea_agg = func == AggFunc::StringAgg && types.contains(&PgType::Bytea);
                for (i, (b, t)) in bound.into_iter().enumerate() {
                    // string_agg(bytea, bytea): an untyped separator is bytea.
                    if bytea_agg {
                        bargs.push(coerce_expr(b, PgType::Bytea)?);
                        ty = PgType::Bytea;
                        continue;
                    }
                    // variance/stddev of an untyped literal: PostgreSQL chooses their float8
                    // form (all candidates are numbers, and float8 is the preferred one).
                    if t == PgType::Unknown && func.is_moment() {
                        bargs.push(coerce_expr(b, PgType::Float8)?);
                        ty = PgType::Float8;
                        continue;
                    }
                    // json_agg's value, json_object_agg's key and value, as JSON takes them.
                    if matches!(func, AggFunc::JsonAgg | AggFunc::JsonObjectAgg) {
                        bargs.push(json_aggregate_input(func, i, b, t)?);
                        ty = t;
                        continue;
                    }
                    // string_agg takes text: a char(n) value without its padding.
                    if t == PgType::Bpchar && name == "string_agg" {
                        bargs.push(BExpr::Func("bpchar_text".into(), vec![b]));
                        ty = PgType::Text;
                        continue;
                    }
                    bargs.push(b);
                    // The first argument's type decides (string_agg's separator does not).
                    if i == 0 {
                        ty = t;
                    }
                }
                let out = aggregate_type(func, ty, &name)?;
                if let Some(first) = bargs.first_mut() {
                    array_agg_input(first, func, ty)?;
                }
                if distinct {
                    // DISTINCT compares, then sorts its inputs.
                    has_equality(ty)?;
                    orderable(ty)?;
                }
                let mut order = Vec::new();
                for k in order_by {
                    let desc = sort_desc(&k.options)?;
                    let nulls_first = k.options.nulls_first.unwrap_or(desc);
                    let (b, bt) = self.bind_expr(&k.expr, scope, None)?;
                    orderable(bt)?;
                    if distinct && !bargs.contains(&b) {
                        return Err(SqlError::InvalidColumnReference {
                            message: "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list".into(),
                        });
                    }
                    order.push((b, desc, nulls_first));
                }
                let clause = std::mem::replace(&mut self.clause, "FILTER");
                let filter = match &f.filter {
                    Some(w) => self.bind_bool(w, scope).map(Some),
                    None => Ok(None),
                };
                self.clause = clause;
                Ok((out, order, filter?))
            });
            self.srfs = srfs;
            let (out, order, filter) = bound?;
            let spec = AggSpec {
                func,
                args: bargs,
                distinct,
                ty: out,
                order,
                filter,
            };
            // The same call again (`SELECT DISTINCT count(*) … ORDER BY count(*)`) is the
            // same aggregate, computed once, as PostgreSQL shares it (not with volatile
            // arguments, whose calls differ).
            if self.volatile_calls == volatile_before {
                if let Some(i) = list.iter().position(|a| *a == spec) {
                    return Ok((BExpr::Agg(i), out));
                }
            }
            list.push(spec);
            return Ok((BExpr::Agg(list.len() - 1), out));
        }
        // information_schema's helper: by its schema, or through a search_path holding it.
        let name = match parts.as_slice() {
            [schema, n] if schema == "information_schema" && n == "_pg_expandarray" => {
                EXPANDARRAY.to_string()
            }
            [n] if n == "_pg_expandarray"
                && self
                    .cx
                    .settings
                    .search_path()
                    .iter()
                    .any(|s| s == "information_schema") =>
            {
                EXPANDARRAY.to_string()
            }
            _ => name,
        };
        let bound = self.bind_call(name, &args, scope, aggs)?;
        // An aggregate's clauses on a function that is none (once it is known to exist).
        let clause = if distinct {
            Some("DISTINCT")
        } else if !order_by.is_empty() {
            Some("ORDER BY")
        } else if f.filter.is_some() {
            Some("FILTER")
        } else {
            None
        };
        if let Some(clause) = clause {
            return Err(SqlError::WrongObjectType {
                message: format!(
                    "{clause} specified, but {} is not an aggregate function",
                    parts.join(".")
                ),
            });
        }
        Ok(bound)
    }

    /// `l op r` where a date/time type takes part, resolved over PostgreSQL's date/time operators
    /// ([`crate::datetime::resolve_operator`]).
    fn bind_datetime_op(
        &mut self,
        l: BExpr,
        lt: PgType,
        op: BinOp,
        r: BExpr,
        rt: PgType,
    ) -> Result<(BExpr, PgType), SqlError> {
        let symbol = op.arithmetic_symbol();
        let Some((to_l, to_r, out)) = crate::datetime::resolve_operator(lt, symbol, rt)? else {
            return Err(no_such_operator(format!(
                "{} {symbol} {}",
                lt.sql_name(),
                rt.sql_name()
            )));
        };
        let convert = |e: BExpr, from: PgType, to: PgType| -> Result<BExpr, SqlError> {
            match (from, to) {
                (PgType::Unknown, _) => coerce_expr(e, to),
                (from, to) if through_zone(from, to) => zone_convert(e, from, to),
                (PgType::Date, PgType::Timestamp) => coerce_or_cast(e, to),
                // Integer widths share a value; numbers scale an interval as they are.
                _ => Ok(e),
            }
        };
        let l = convert(l, lt, to_l)?;
        let r = convert(r, rt, to_r)?;
        // A timestamptz moves by months and days in the session's zone (a day across a
        // daylight-saving change is 23 or 25 hours).
        if out == PgType::Timestamptz && matches!(symbol, '+' | '-') {
            let (ts, iv) = if to_l == PgType::Interval {
                (r, l)
            } else {
                (l, r)
            };
            let name = if symbol == '-' {
                "timestamptz_mi_interval"
            } else {
                "timestamptz_pl_interval"
            };
            return Ok((BExpr::Func(name.into(), vec![ts, iv]), out));
        }
        // Immutable operators on constants are evaluated now, as PostgreSQL's planner does (its
        // errors come even when no row is read); those involving timestamptz are only stable.
        let folded = match (&l, &r) {
            (BExpr::Const(a), BExpr::Const(b))
                if ![to_l, to_r, out].contains(&PgType::Timestamptz) =>
            {
                Some(binop(op, a.clone(), b.clone()))
            }
            _ => None,
        };
        let bin = BExpr::Bin(op, Box::new(l), Box::new(r));
        Ok((
            match folded {
                Some(v) => self.fold(bin, v),
                None => strict_null(bin),
            },
            out,
        ))
    }

    /// `date_trunc`, `date_part`, `extract`, `to_timestamp`, `current_date`, `localtimestamp`:
    /// their result type by argument type, and the evaluated function, named after the source
    /// type because PostgreSQL's units and errors depend on it.
    fn bind_datetime_call(
        &mut self,
        name: &str,
        mut args: Vec<BExpr>,
        types: &[PgType],
    ) -> Result<(BExpr, PgType), SqlError> {
        use PgType::*;
        match (name, types) {
            ("current_date", []) => return Ok((BExpr::Func("current_date".into(), args), Date)),
            ("localtimestamp", [] | [Int2 | Int4 | Int8]) => {
                return Ok((BExpr::Func("localtimestamp".into(), args), Timestamp))
            }
            // `ts AT TIME ZONE zone`: a timestamp read as local time in the zone gives a
            // timestamptz, a timestamptz (or an untyped or date value, as one) the zone's
            // local time.
            ("timezone", [z, t])
                if (z.is_string() || matches!(z, Unknown | Interval))
                    && matches!(t, Timestamp | Timestamptz | Date | Unknown) =>
            {
                let x = args.pop().unwrap_or(BExpr::Const(Value::Null));
                let zone = args.pop().unwrap_or(BExpr::Const(Value::Null));
                let zone = if *z == Unknown {
                    coerce_expr(zone, Text)?
                } else {
                    zone
                };
                let (x, func, out) = match t {
                    Timestamp => (x, "timezone_from_local", Timestamptz),
                    Unknown => (coerce_expr(x, Timestamptz)?, "timezone_to_local", Timestamp),
                    _ => (
                        coerce_to(x, *t, Timestamptz)?,
                        "timezone_to_local",
                        Timestamp,
                    ),
                };
                return Ok((BExpr::Func(func.into(), vec![zone, x]), out));
            }
            ("localtime", [] | [Int2 | Int4 | Int8]) => {
                return Ok((BExpr::Func("localtime".into(), args), Time))
            }
            // to_char's templates read back (tochar.rs).
            ("to_date" | "to_timestamp", [a, b])
                if (a.is_string() || *a == Unknown) && (b.is_string() || *b == Unknown) =>
            {
                let bound = args
                    .into_iter()
                    .map(|a| coerce_expr(a, Text))
                    .collect::<Result<Vec<_>, _>>()?;
                let (func, out) = if name == "to_date" {
                    ("to_date", Date)
                } else {
                    ("to_timestamp_text", Timestamptz)
                };
                return Ok((BExpr::Func(func.into(), bound), out));
            }
            // The calendar functions over broken-down fields (datefn.rs); a timestamptz or
            // date is read in the session's zone.
            ("age", [a, b])
                if [a, b]
                    .iter()
                    .all(|t| matches!(t, Timestamp | Timestamptz | Date | Unknown)) =>
            {
                let to = moment_pair_type(*a, *b);
                let local = to == Timestamp;
                let y = args.pop().unwrap_or(BExpr::Const(Value::Null));
                let x = args.pop().unwrap_or(BExpr::Const(Value::Null));
                let func = if local { "age_local" } else { "age_tz" };
                let call = BExpr::Func(
                    func.into(),
                    vec![coerce_to(x, *a, to)?, coerce_to(y, *b, to)?],
                );
                return Ok((call, Interval));
            }
            ("age" | "isfinite", [Unknown]) => {
                return Err(ambiguous(format!("function {name}(unknown) is not unique")))
            }
            ("age", [a]) if matches!(a, Timestamp | Timestamptz | Date) => {
                let x = args.pop().unwrap_or(BExpr::Const(Value::Null));
                let (x, func) = match a {
                    Timestamp => (x, "age_today_local"),
                    _ => (coerce_to(x, *a, Timestamptz)?, "age_today_tz"),
                };
                return Ok((BExpr::Func(func.into(), vec![x]), Interval));
            }
            ("justify_hours" | "justify_days" | "justify_interval", [Interval | Unknown]) => {
                let x = args.pop().map(|a| coerce_expr(a, Interval)).transpose()?;
                return Ok((BExpr::Func(name.into(), x.into_iter().collect()), Interval));
            }
            ("isfinite", [Date | Timestamp | Timestamptz | Interval]) => {
                return Ok((BExpr::Func("isfinite".into(), args), Bool));
            }
            (
                "make_date" | "make_time" | "make_timestamp" | "make_timestamptz" | "make_interval",
                _,
            ) => {
                let (ints, out) = match name {
                    "make_date" => (3, Date),
                    "make_time" => (2, Time),
                    "make_timestamp" => (5, Timestamp),
                    "make_timestamptz" => (5, Timestamptz),
                    _ => (6, Interval),
                };
                // make_date takes three integers; the others integers and seconds in double
                // precision last (make_timestamptz a zone after them); make_interval's all
                // have defaults.
                let secs = usize::from(name != "make_date");
                let zone =
                    usize::from(name == "make_timestamptz" && types.len() == ints + secs + 1);
                let arity_ok = if name == "make_interval" {
                    types.len() <= ints + 1
                } else {
                    types.len() == ints + secs + zone
                };
                let typed_ok = types.iter().enumerate().all(|(i, t)| match i {
                    i if i < ints => matches!(t, Int2 | Int4 | Unknown),
                    i if i == ints && secs == 1 => t.is_numeric_family() || *t == Unknown,
                    _ => t.is_string() || *t == Unknown,
                });
                if !arity_ok || !typed_ok {
                    return Err(no_such_function(name, types));
                }
                let mut bound = Vec::with_capacity(args.len());
                for (i, a) in args.into_iter().enumerate() {
                    bound.push(match i {
                        i if i < ints => coerce_or_cast(coerce_expr(a, Int8)?, Int8)?,
                        i if i == ints && secs == 1 => {
                            coerce_or_cast(coerce_expr(a, Float8)?, Float8)?
                        }
                        _ => coerce_expr(a, Text)?,
                    });
                }
                return Ok((BExpr::Func(name.into(), bound), out));
            }
            ("date_bin", [s, a, b])
                if matches!(s, Interval | Unknown)
                    && [a, b]
                        .iter()
                        .all(|t| matches!(t, Timestamp | Timestamptz | Date | Unknown)) =>
            {
                let to = moment_pair_type(*a, *b);
                let o = args.pop().unwrap_or(BExpr::Const(Value::Null));
                let x = args.pop().unwrap_or(BExpr::Const(Value::Null));
                let st = args.pop().unwrap_or(BExpr::Const(Value::Null));
                let call = BExpr::Func(
                    "date_bin".into(),
                    vec![
                        coerce_expr(st, Interval)?,
                        coerce_to(x, *a, to)?,
                        coerce_to(o, *b, to)?,
                    ],
                );
                return Ok((call, to));
            }
            ("date_trunc", [u, t, z])
                if (u.is_string() || *u == Unknown)
                    && matches!(t, Timestamptz | Timestamp | Date | Unknown)
                    && (z.is_string() || *z == Unknown) =>
            {
                let zone = args.pop().map(|a| coerce_expr(a, Text)).transpose()?;
                let x = args.pop().unwrap_or(BExpr::Const(Value::Null));
                let unit = args.pop().map(|a| coerce_expr(a, Text)).transpose()?;
                let x = if *t == Unknown {
                    coerce_expr(x, Timestamptz)?
                } else {
                    coerce_to(x, *t, Timestamptz)?
                };
                let call = BExpr::Func(
                    "date_trunc_zone".into(),
                    unit.into_iter().chain([x]).chain(zone).collect(),
                );
                return Ok((call, Timestamptz));
            }
            ("to_char", [t, f]) if f.is_string() || *f == Unknown => {
                let template = args.pop().map(|a| coerce_expr(a, Text)).transpose()?;
                let x = args.pop().unwrap_or(BExpr::Const(Value::Null));
                let (x, func) = match t {
                    Timestamp => (x, "to_char_timestamp"),
                    // A date is a timestamptz here: PostgreSQL's preferred candidate.
                    Timestamptz | Date => (coerce_to(x, *t, Timestamptz)?, "to_char_timestamptz"),
                    Interval => (x, "to_char_interval"),
                    Unknown => {
                        return Err(ambiguous(format!(
                            "function to_char(unknown, {}) is not unique",
                            f.sql_name()
                        )))
                    }
                    t if t.is_numeric_family() => {
                        return Err(SqlError::feature(
                            "to_char of a number (its numeric templates)",
                        ))
                    }
                    _ => return Err(no_such_function(name, types)),
                };
                return Ok((
                    BExpr::Func(func.into(), vec![x].into_iter().chain(template).collect()),
                    Text,
                ));
            }
            ("to_timestamp", [t]) if t.is_numeric_family() || *t == Unknown => {
                let x = args.pop().map(|a| coerce_expr(a, Float8)).transpose()?;
                return Ok((
                    BExpr::Func("to_timestamp".into(), x.into_iter().collect()),
                    Timestamptz,
                ));
            }
            ("date_trunc" | "date_part" | "extract", [u, Unknown])
                if u.is_string() || *u == Unknown =>
            {
                // PostgreSQL finds several candidates for an untyped source.
                let qualified = if name == "extract" {
                    "pg_catalog.extract"
                } else {
                    name
                };
                return Err(ambiguous(format!(
                    "function {qualified}(unknown, unknown) is not unique"
                )));
            }
            ("date_trunc" | "date_part" | "extract", [u, t]) if u.is_string() || *u == Unknown => {
                // An untyped source resolves to the category's preferred type, a date converts
                // to timestamptz for date_trunc (PostgreSQL has no date_trunc(text, date)).
                let source = match (name, *t) {
                    // PostgreSQL's date_part(text, date) is date_part over the date as a
                    // timestamp; date_trunc has none and takes it as a timestamptz.
                    ("date_part", Date) => Timestamp,
                    (_, Unknown) | ("date_trunc", Date) => Timestamptz,
                    (_, t) => t,
                };
                let valid = match name {
                    "date_trunc" => matches!(source, Timestamp | Timestamptz | Interval),
                    _ => is_datetime(source),
                };
                if valid {
                    if let Some(a) = args.pop() {
                        args.push(if *t == source {
                            a
                        } else if through_zone(*t, source) {
                            zone_convert(a, *t, source)?
                        } else {
                            coerce_or_cast(coerce_expr(a, source)?, source)?
                        });
                    }
                    let out = match name {
                        "date_trunc" => source,
                        "date_part" => Float8,
                        _ => Numeric,
                    };
                    let func = format!("{name}:{}", source.sql_name());
                    // PostgreSQL's planner evaluates immutable calls on constants (so their errors
                    // come even when no row is read); over timestamptz they are only stable.
                    if source != Timestamptz {
                        if let [BExpr::Const(u), BExpr::Const(v)] = args.as_slice() {
                            let value = eval_datetime_call(&func, &[u.clone(), v.clone()]);
                            return Ok((self.fold(BExpr::Func(func, args), value), out));
                        }
                    }
                    return Ok((BExpr::Func(func, args), out));
                }
            }
            _ => {}
        }
        Err(no_such_function(name, types))
    }

    /// Notes a read of the working table of the recursive query being bound: PostgreSQL's
    /// limits (once, not in a subquery).
    fn read_worktable(&mut self, name: &str) -> Result<(), SqlError> {
        let depth = self.levels.len();
        let Some(w) = self.worktable.as_mut().filter(|w| w.name == name) else {
            return Ok(());
        };
        let refused = |message: String| SqlError::InvalidRecursion { message };
        if w.level != depth {
            return Err(refused(format!(
                "recursive reference to query \"{name}\" must not appear within a subquery"
            )));
        }
        if w.reads > 0 {
            return Err(refused(format!(
                "recursive reference to query \"{name}\" must not appear more than once"
            )));
        }
        w.reads += 1;
        Ok(())
    }

    /// The mathematical functions (`sqrt`, `exp`, `ln`, `log`, `power`, `pi`, `sign`, `mod`,
    /// trigonometry) as PostgreSQL resolves them: integer and untyped arguments take the
    /// double precision forms (the numeric category's preferred type); numeric arguments the
    /// numeric forms, of which RockLake has `sqrt`, `sign` and `mod` (the others 0A000).
    /// `None`: not one of them.
    fn bind_math(
        &mut self,
        name: &str,
        args: &mut Vec<BExpr>,
        types: &[PgType],
    ) -> Option<Result<(BExpr, PgType), SqlError>> {
        let arity = match name {
            "pi" => 0,
            // log(b, x) exists over numeric only.
            "log" if types.len() == 2 => 2,
            "power" | "pow" | "atan2" | "mod" => 2,
            n if FLOAT_MATH.contains(&n) || n == "sign" => 1,
            _ => return None,
        };
        Some((|| {
            if types.len() != arity
                || !types
                    .iter()
                    .all(|t| t.is_numeric_family() || *t == PgType::Unknown)
            {
                return Err(no_such_function(name, types));
            }
            if name == "mod" {
                // mod(a, b) is `a % b`, for every type `%` takes.
                let r = args.pop().unwrap_or(BExpr::Const(Value::Null));
                let l = args.pop().unwrap_or(BExpr::Const(Value::Null));
                let (lt, rt) = (types[0], types[1]);
                let (lt, rt) = match (lt, rt) {
                    (PgType::Unknown, PgType::Unknown) => (PgType::Int4, PgType::Int4),
                    other => other,
                };
                let l = coerce_expr(l, if lt == PgType::Unknown { rt } else { lt })?;
                let r = coerce_expr(r, if rt == PgType::Unknown { lt } else { rt })?;
                let (lt, rt) = (
                    if lt == PgType::Unknown { rt } else { lt },
                    if rt == PgType::Unknown { lt } else { rt },
                );
                if matches!(lt, PgType::Float4 | PgType::Float8)
                    || matches!(rt, PgType::Float4 | PgType::Float8)
                {
                    return Err(no_such_function(name, types));
                }
                return self.bind_binop(l, lt, &ast::BinaryOperator::Modulo, r, rt);
            }
            // A double precision argument takes the double precision form (numeric converts
            // to it implicitly, not the other way round).
            let float = types
                .iter()
                .any(|t| matches!(t, PgType::Float4 | PgType::Float8));
            // Functions PostgreSQL has over double precision only take a numeric through its
            // implicit cast; those with a numeric form of their own give numeric results.
            let numeric_form = matches!(
                name,
                "sign" | "sqrt" | "exp" | "ln" | "log" | "log10" | "power" | "pow"
            );
            if (types.contains(&PgType::Numeric) && !float && numeric_form)
                || arity == 2 && name == "log"
            {
                let numerics = std::mem::take(args)
                    .into_iter()
                    .map(|a| coerce_or_cast(a, PgType::Numeric))
                    .collect::<Result<Vec<_>, _>>()?;
                let name = if name == "pow" { "power" } else { name };
                return Ok((BExpr::Func(name.into(), numerics), PgType::Numeric));
            }
            let floats = std::mem::take(args)
                .into_iter()
                .map(|a| coerce_or_cast(a, PgType::Float8))
                .collect::<Result<Vec<_>, _>>()?;
            let name = if name == "pow" { "power" } else { name };
            Ok((BExpr::Func(name.into(), floats), PgType::Float8))
        })())
    }

    /// A set-returning call outside FROM: in a select list, a placeholder for its values
    /// ([`ProjectSet`]); elsewhere PostgreSQL's error for the clause.
    fn bind_srf_call(
        &mut self,
        name: String,
        mut args: Vec<BExpr>,
        types: &[PgType],
    ) -> Result<(BExpr, PgType), SqlError> {
        let misplaced =
            |message: String, hint: bool| SqlError::SetReturningMisplaced { message, hint };
        let Some(list) = self.srfs.as_mut() else {
            return Err(match self.clause {
                "aggregate arguments" => misplaced(
                    "aggregate function calls cannot contain set-returning function calls".into(),
                    true,
                ),
                "window function arguments" => misplaced(
                    "window function calls cannot contain set-returning function calls".into(),
                    true,
                ),
                c @ ("WHERE"
                | "HAVING"
                | "JOIN conditions"
                | "FILTER"
                | "VALUES"
                | "COPY FROM WHERE conditions"
                | "RETURNING") => misplaced(
                    format!("set-returning functions are not allowed in {c}"),
                    false,
                ),
                "this context" => SqlError::feature(format!(
                    "set-returning function {name}() outside the select list and FROM"
                )),
                c => SqlError::feature(format!("set-returning function {name}() in {c}")),
            });
        };
        if args
            .iter()
            .any(|a| contains_placeholder(a, &|e| matches!(e, BExpr::Srf(_))))
        {
            return Err(SqlError::feature(
                "a set-returning function in the arguments of another",
            ));
        }
        let ty = set_function_type(&name, &mut args, types)?;
        list.push(BoundSrf { name, args });
        Ok((BExpr::Srf(list.len() - 1), ty))
    }

    /// `f(…) OVER (…)`: a window call of the select list being bound.
    #[allow(clippy::too_many_arguments)]
    fn bind_window(
        &mut self,
        f: &ast::Function,
        name: &str,
        over: &ast::WindowType,
        args: &[Expr],
        distinct: bool,
        star: bool,
        order_by: &[ast::OrderByExpr],
        scope: &Scope,
        mut aggs: Option<&mut Vec<AggSpec>>,
    ) -> Result<(BExpr, PgType), SqlError> {
        use crate::window::{Frame, FrameEdge, WinFunc};
        let windowing = |message: String| SqlError::Windowing { message };
        if self.clause == "ORDER BY" {
            // Bound with the select list instead (see `order_windows`): here only in the
            // ORDER BY of a set operation, which may name output columns only.
            return Err(SqlError::feature(
                "a window function in the ORDER BY of a set operation",
            ));
        }
        if self.clause == "aggregate arguments" {
            return Err(SqlError::AggregateNesting {
                message: "aggregate function calls cannot contain window function calls".into(),
            });
        }
        let Some(mut list) = self.windows.take() else {
            return Err(windowing(format!(
                "window functions are not allowed in {}",
                self.clause
            )));
        };
        let agg = aggregate_func(name, star);
        let func = match (agg, WinFunc::by_name(name)) {
            (Some(a), _) => WinFunc::Agg(a),
            (None, Some(w)) => w,
            (None, None) => {
                return Err(SqlError::WrongObjectType {
                    message: format!(
                    "OVER specified, but {name} is not a window function nor an aggregate function"
                ),
                })
            }
        };
        // PostgreSQL's own limits, with its messages.
        let unsupported = |message: &str| SqlError::UnsupportedByPostgres {
            message: message.into(),
        };
        if distinct {
            return Err(unsupported(
                "DISTINCT is not implemented for window functions",
            ));
        }
        if !order_by.is_empty() {
            return Err(unsupported(
                "aggregate ORDER BY is not implemented for window functions",
            ));
        }
        if f.filter.is_some() && agg.is_none() {
            return Err(unsupported(
                "FILTER is not implemented for non-aggregate window functions",
            ));
        }
        let named;
        let spec = match over {
            ast::WindowType::WindowSpec(s) if s.window_name.is_none() => s,
            ast::WindowType::NamedWindow(w) => {
                let n = ident(w);
                named = self
                    .named_windows
                    .iter()
                    .find(|(name, _)| *name == n)
                    .map(|(_, s)| s.clone())
                    .ok_or_else(|| SqlError::UndefinedObject {
                        message: format!("window \"{n}\" does not exist"),
                    })?;
                &named
            }
            _ => {
                return Err(SqlError::feature(
                    "a window definition based on a named window",
                ))
            }
        };
        // Window calls inside the arguments or the window definition are nested calls;
        // set-returning calls there are not run.
        let srfs = self.srfs.take();
        let result = (|| -> Result<BoundWindow, SqlError> {
            let mut bargs = Vec::new();
            let mut types = Vec::new();
            let clause = std::mem::replace(&mut self.clause, "window function arguments");
            let bound = args
                .iter()
                .map(|a| self.bind_expr(a, scope, aggs.as_deref_mut()))
                .collect::<Result<Vec<_>, _>>();
            self.clause = clause;
            for (b, t) in bound? {
                bargs.push(b);
                types.push(t);
            }
            let arg_ty = types.first().copied().unwrap_or(PgType::Unknown);
            let int4 = |b: BExpr, t: PgType| -> Result<BExpr, SqlError> {
                if matches!(t, PgType::Int2 | PgType::Int4 | PgType::Unknown) {
                    coerce_expr(b, PgType::Int4)
                } else {
                    Err(no_such_function(name, &types))
                }
            };
            let (ty, bargs) = match (func, bargs.len()) {
                (WinFunc::Agg(a), _) => {
                    let mut bargs = bargs;
                    if matches!(a, AggFunc::JsonAgg | AggFunc::JsonObjectAgg) {
                        aggregate_arguments_exist(a, &types, name)?;
                        bargs = bargs
                            .into_iter()
                            .zip(&types)
                            .enumerate()
                            .map(|(i, (b, t))| json_aggregate_input(a, i, b, *t))
                            .collect::<Result<_, _>>()?;
                    }
                    if let Some(first) = bargs.first_mut() {
                        array_agg_input(first, a, arg_ty)?;
                    }
                    (aggregate_type(a, arg_ty, name)?, bargs)
                }
                (WinFunc::RowNumber | WinFunc::Rank | WinFunc::DenseRank, 0) => {
                    (PgType::Int8, bargs)
                }
                (WinFunc::PercentRank | WinFunc::CumeDist, 0) => (PgType::Float8, bargs),
                (WinFunc::Ntile, 1) => {
                    let b = bargs
                        .into_iter()
                        .next()
                        .map(|b| int4(b, arg_ty))
                        .transpose()?;
                    (PgType::Int4, b.into_iter().collect())
                }
                (WinFunc::FirstValue | WinFunc::LastValue, 1) => (arg_ty, bargs),
                (WinFunc::NthValue, 2) => {
                    let mut it = bargs.into_iter();
                    let x = it.next();
                    let n = it.next().map(|b| int4(b, types[1])).transpose()?;
                    (arg_ty, x.into_iter().chain(n).collect())
                }
                (WinFunc::Lag | WinFunc::Lead, 1..=3) => {
                    // The value and the default share one type, as PostgreSQL's
                    // lag(anycompatible, integer, anycompatible).
                    let ty = match types.get(2) {
                        Some(d) => match resolve_common(name, [arg_ty, *d].into_iter())? {
                            PgType::Unknown => PgType::Text,
                            t => t,
                        },
                        None => arg_ty,
                    };
                    let mut it = bargs.into_iter();
                    let mut out = vec![coerce_result(
                        it.next().unwrap_or(BExpr::Const(Value::Null)),
                        arg_ty,
                        ty,
                    )?];
                    if let Some(off) = it.next() {
                        out.push(int4(off, types[1])?);
                    }
                    if let Some(d) = it.next() {
                        out.push(coerce_result(d, types[2], ty)?);
                    }
                    (ty, out)
                }
                _ => return Err(no_such_function(name, &types)),
            };
            let mut partition = Vec::new();
            for e in &spec.partition_by {
                partition.push(equatable(self.bind_expr(e, scope, aggs.as_deref_mut())?)?);
            }
            let mut order = Vec::new();
            for k in &spec.order_by {
                let desc = sort_desc(&k.options)?;
                let nulls_first = k.options.nulls_first.unwrap_or(desc);
                let (b, bt) = self.bind_expr(&k.expr, scope, aggs.as_deref_mut())?;
                orderable(bt)?;
                order.push((b, desc, nulls_first));
            }
            let filter = match &f.filter {
                Some(w) => Some(coerce_expr(
                    self.bind_expr(w, scope, aggs.as_deref_mut())?.0,
                    PgType::Bool,
                )?),
                None => None,
            };
            let frame = match &spec.window_frame {
                None => Frame::DEFAULT,
                Some(fr) => {
                    let rows = match fr.units {
                        ast::WindowFrameUnits::Rows => true,
                        ast::WindowFrameUnits::Range => false,
                        ast::WindowFrameUnits::Groups => {
                            return Err(SqlError::feature("GROUPS frames"))
                        }
                    };
                    let edge = |b: &ast::WindowFrameBound,
                                which: &'static str|
                     -> Result<FrameEdge, SqlError> {
                        let offset = |e: &Expr| -> Result<usize, SqlError> {
                            if !rows {
                                return Err(SqlError::feature("RANGE frames with an offset"));
                            }
                            match literal_offset(e) {
                                Some(n) if n >= 0 => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
                                Some(_) => Err(SqlError::WindowFrameOffset { which }),
                                None => Err(SqlError::feature(
                                    "a frame offset other than an integer literal",
                                )),
                            }
                        };
                        Ok(match b {
                            ast::WindowFrameBound::CurrentRow => FrameEdge::CurrentRow,
                            ast::WindowFrameBound::Preceding(None) => FrameEdge::UnboundedPreceding,
                            ast::WindowFrameBound::Following(None) => FrameEdge::UnboundedFollowing,
                            ast::WindowFrameBound::Preceding(Some(e)) => {
                                FrameEdge::Preceding(offset(e)?)
                            }
                            ast::WindowFrameBound::Following(Some(e)) => {
                                FrameEdge::Following(offset(e)?)
                            }
                        })
                    };
                    let start = edge(&fr.start_bound, "starting")?;
                    let end = match &fr.end_bound {
                        Some(b) => edge(b, "ending")?,
                        None => FrameEdge::CurrentRow,
                    };
                    if start == FrameEdge::UnboundedFollowing {
                        return Err(windowing(
                            "frame start cannot be UNBOUNDED FOLLOWING".into(),
                        ));
                    }
                    if end == FrameEdge::UnboundedPreceding {
                        return Err(windowing("frame end cannot be UNBOUNDED PRECEDING".into()));
                    }
                    if matches!(start, FrameEdge::CurrentRow)
                        && matches!(end, FrameEdge::Preceding(_))
                    {
                        return Err(windowing(
                            "frame starting from current row cannot have preceding rows".into(),
                        ));
                    }
                    if matches!(start, FrameEdge::Following(_))
                        && matches!(end, FrameEdge::Preceding(_) | FrameEdge::CurrentRow)
                    {
                        return Err(windowing(
                            "frame starting from following row cannot have preceding rows".into(),
                        ));
                    }
                    Frame { rows, start, end }
                }
            };
            Ok(BoundWindow {
                func,
                ty,
                args: bargs,
                partition,
                order,
                frame,
                filter,
            })
        })();
        self.srfs = srfs;
        let bound = match result {
            Ok(b) => b,
            Err(SqlError::Windowing { message })
                if message.starts_with("window functions are not allowed") =>
            {
                return Err(windowing("window function calls cannot be nested".into()))
            }
            Err(e) => return Err(e),
        };
        let ty = bound.ty;
        list.push(bound);
        let i = list.len() - 1;
        self.windows = Some(list);
        Ok((BExpr::Win(i), ty))
    }

    /// A scalar function call (also what `CEIL(x)`, `SUBSTRING(x FROM a FOR b)`,
    /// `TRIM(LEADING c FROM x)` and `POSITION(a IN b)` become).
    fn bind_call(
        &mut self,
        name: String,
        args: &[Expr],
        scope: &Scope,
        mut aggs: Option<&mut Vec<AggSpec>>,
    ) -> Result<(BExpr, PgType), SqlError> {
        let mut bargs: Vec<BExpr> = Vec::new();
        let mut types = Vec::new();
        for a in args {
            // COALESCE stops at a non-null constant: PostgreSQL's planner drops the arguments
            // after it, so their planning errors never come.
            let dead = name == "coalesce"
                && bargs
                    .iter()
                    .any(|b| matches!(b, BExpr::Const(v) if !v.is_null()));
            let saved = dead.then(|| self.plan_error.take());
            let bound = self.bind_expr(a, scope, aggs.as_deref_mut());
            if let Some(s) = saved {
                self.plan_error = s;
            }
            let (b, t) = bound?;
            bargs.push(b);
            types.push(t);
        }
        // A char(n) argument of a function taking text loses its padding (PostgreSQL's implicit
        // cast to text); functions of char(n) itself or of any type keep it.
        if !KEEPS_CHAR_PADDING.contains(&name.as_str()) {
            for (b, t) in bargs.iter_mut().zip(types.iter_mut()) {
                if *t == PgType::Bpchar {
                    let x = std::mem::replace(b, BExpr::Const(Value::Null));
                    *b = BExpr::Func("bpchar_text".into(), vec![x]);
                    *t = PgType::Text;
                }
            }
        }
        // num_nulls(VARIADIC "any"), num_nonnulls: at least one argument, of any type.
        if matches!(name.as_str(), "num_nulls" | "num_nonnulls") && !bargs.is_empty() {
            return Ok((BExpr::Func(name, bargs), PgType::Int4));
        }
        if name == "pg_my_temp_schema" && bargs.is_empty() {
            // No session has a temporary schema of its own (temporary tables live in the
            // transaction that makes them).
            return Ok((BExpr::Const(Value::Int(0)), PgType::Oid));
        }
        // width_bucket(operand, low, high, count) over double precision.
        if name == "width_bucket" {
            let number = |t: &PgType| *t == PgType::Unknown || t.is_numeric_family();
            let count = |t: &PgType| matches!(t, PgType::Unknown | PgType::Int2 | PgType::Int4);
            if !matches!(types.as_slice(), [a, b, c, d] if number(a) && number(b) && number(c) && count(d))
            {
                return Err(no_such_function(&name, &types));
            }
            // PostgreSQL's numeric form computes exactly; only the double precision one is here.
            if types[..3].contains(&PgType::Numeric) {
                return Err(SqlError::feature(
                    "width_bucket over numeric (cast the operand and bounds to double precision)",
                ));
            }
            let args = std::mem::take(&mut bargs)
                .into_iter()
                .enumerate()
                .map(|(i, b)| coerce_or_cast(b, if i == 3 { PgType::Int4 } else { PgType::Float8 }))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok((BExpr::Func(name, args), PgType::Int4));
        }
        if let Some((_, signatures)) = STRING_SIGNATURES.iter().find(|(n, _)| *n == name) {
            // to_hex(int4) and to_hex(int8): an untyped literal fits both.
            if name == "to_hex" && types.first() == Some(&PgType::Unknown) {
                return Err(ambiguous("function to_hex(unknown) is not unique".into()));
            }
            let Some(signature) = signatures.iter().find(|s| signature_fits(s, &types)) else {
                return Err(no_such_function(&name, &types));
            };
            // An untyped literal where the signature has an integer is read as one.
            for ((b, t), want) in bargs
                .iter_mut()
                .zip(types.iter_mut())
                .zip(signature.chars())
            {
                if want == 'I' && *t == PgType::Unknown {
                    let x = std::mem::replace(b, BExpr::Const(Value::Null));
                    *b = coerce_expr(x, PgType::Int4)?;
                    *t = PgType::Int4;
                }
            }
            if matches!(name.as_str(), "btrim" | "ltrim" | "rtrim")
                && types.first() == Some(&PgType::Bytea)
            {
                return Ok((BExpr::Func(name, bargs), PgType::Bytea));
            }
            if name == "to_hex" {
                let width = if types.first() == Some(&PgType::Int8) {
                    "to_hex64"
                } else {
                    "to_hex32"
                };
                return Ok((BExpr::Func(width.into(), bargs), PgType::Text));
            }
        }
        let name = if name == "character_length" {
            "char_length".to_string()
        } else {
            name
        };
        // encode(bytea, text): an untyped first argument is bytea; a text one has no encode.
        if name == "encode" {
            match types.first() {
                Some(PgType::Unknown) => {
                    if let Some(b) = bargs.first_mut() {
                        let x = std::mem::replace(b, BExpr::Const(Value::Null));
                        *b = coerce_expr(x, PgType::Bytea)?;
                    }
                }
                Some(PgType::Bytea) => {}
                _ => return Err(no_such_function(&name, &types)),
            }
        }
        if DATETIME_FUNCTIONS.contains(&name.as_str()) {
            return self.bind_datetime_call(&name, bargs, &types);
        }
        if matches!(
            name.as_str(),
            "unnest"
                | "generate_series"
                | "generate_subscripts"
                | "pg_get_keywords"
                | "aclexplode"
                | "json_each"
                | "json_each_text"
                | "json_array_elements"
                | "json_array_elements_text"
                | "json_object_keys"
                | "regexp_split_to_table"
                | "regexp_matches"
        ) {
            return self.bind_srf_call(name, bargs, &types);
        }
        if name == EXPANDARRAY {
            // pgjdbc's key and index queries call it.
            return self.bind_srf_call("_pg_expandarray".into(), bargs, &types);
        }
        if matches!(name.as_str(), "nextval" | "currval" | "setval" | "lastval") {
            return self.bind_sequence_call(name, bargs, &types);
        }
        if name == "pg_get_serial_sequence" {
            if !matches!(types.as_slice(), [a, b] if [a, b].iter().all(|t| t.is_string() || **t == PgType::Unknown))
            {
                return Err(no_such_function(&name, &types));
            }
            self.session_dependent = true;
            return Ok((BExpr::Func(name, bargs), PgType::Text));
        }
        if matches!(name.as_str(), "random" | "gen_random_uuid" | "setseed") {
            self.volatile_calls += 1;
        }
        match (name.as_str(), types.as_slice()) {
            ("random", []) => return Ok((BExpr::Func(name, bargs), PgType::Float8)),
            ("gen_random_uuid", []) => return Ok((BExpr::Func(name, bargs), PgType::Uuid)),
            ("setseed", [t])
                if t.is_numeric_family() && !t.is_reg() && *t != PgType::Oid
                    || *t == PgType::Unknown =>
            {
                let seed = bargs
                    .into_iter()
                    .map(|a| coerce_or_cast(a, PgType::Float8))
                    .collect::<Result<Vec<_>, _>>()?;
                return Ok((BExpr::Func(name, seed), PgType::Void));
            }
            ("random" | "gen_random_uuid" | "setseed", _) => {
                return Err(no_such_function(&name, &types))
            }
            _ => {}
        }
        if name == "pg_export_snapshot" {
            if !types.is_empty() {
                return Err(no_such_function(&name, &types));
            }
            self.volatile_calls += 1;
            return Ok((BExpr::Func(name, vec![]), PgType::Text));
        }
        if matches!(name.as_str(), "pg_cancel_backend" | "pg_terminate_backend") {
            // pg_cancel_backend(integer), pg_terminate_backend(integer, bigint DEFAULT 0).
            let int = |t: &PgType, big: bool| {
                matches!(t, PgType::Int2 | PgType::Int4 | PgType::Unknown)
                    || big && *t == PgType::Int8
            };
            let fits = match types.as_slice() {
                [pid] => int(pid, false),
                [pid, timeout] => {
                    name == "pg_terminate_backend" && int(pid, false) && int(timeout, true)
                }
                _ => false,
            };
            if !fits {
                return Err(no_such_function(&name, &types));
            }
            self.volatile_calls += 1;
            let args = bargs
                .into_iter()
                .zip([PgType::Int4, PgType::Int8])
                .map(|(a, t)| coerce_or_cast(a, t))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok((BExpr::Func(name, args), PgType::Bool));
        }
        if let Some(bound) = bind_array_function(&name, &mut bargs, &types) {
            return bound;
        }
        if let Some(bound) = bind_numeric_function(&name, &mut bargs, &types) {
            return bound;
        }
        if let Some(bound) = bind_inet_function(&name, &mut bargs, &types) {
            return bound;
        }
        if let Some(bound) = bind_json_function(&name, &mut bargs, &types) {
            return bound;
        }
        match (name.as_str(), types.as_slice()) {
            ("inet_client_addr", []) => return Ok((BExpr::Func(name, bargs), PgType::Inet)),
            ("inet_client_port", []) => return Ok((BExpr::Func(name, bargs), PgType::Int4)),
            ("inet_client_addr" | "inet_client_port", _) => {
                return Err(no_such_function(&name, &types))
            }
            _ => {}
        }
        if name == "pg_typeof" {
            // The argument's type, known while binding.
            let [t] = types.as_slice() else {
                return Err(no_such_function(&name, &types));
            };
            return Ok((BExpr::Const(Value::Int(t.oid().into())), PgType::Regtype));
        }
        if let Some(bound) = self.bind_math(&name, &mut bargs, &types) {
            return bound;
        }
        if let Some(bound) = bind_regex_call(&name, &mut bargs, &types) {
            return bound;
        }
        if name == "string_to_array" {
            if !(2..=3).contains(&types.len())
                || types
                    .iter()
                    .any(|t| *t != PgType::Unknown && !t.is_string())
            {
                return Err(no_such_function(&name, &types));
            }
            let args = bargs
                .into_iter()
                .map(|b| coerce_expr(b, PgType::Text))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok((BExpr::Func(name, args), PgType::TextArray));
        }
        if name == "format" && types.is_empty()
            || name == "concat_ws" && types.len() < 2
            || matches!(name.as_str(), "quote_literal" | "quote_nullable") && types.len() != 1
        {
            return Err(no_such_function(&name, &types));
        }
        // The text parameters (format's format string, concat_ws's separator,
        // quote_literal's argument) take their arguments cast to text (char(n) loses its
        // padding, a boolean is `true`); the "any" ones print each argument as its type
        // does (char(n) with its padding, a boolean as `t`).
        let text_params = match name.as_str() {
            "concat" => 0,
            "concat_ws" | "format" => 1,
            "quote_literal" | "quote_nullable" => 1,
            _ => usize::MAX,
        };
        if text_params != usize::MAX {
            bargs = bargs
                .into_iter()
                .zip(&types)
                .enumerate()
                .map(|(i, (b, t))| match t {
                    PgType::Bpchar | PgType::Bool if i >= text_params => Ok(b),
                    // Its output function (no `/32`), not its cast to text.
                    PgType::Inet if i >= text_params => Ok(BExpr::Func("inet_out".into(), vec![b])),
                    t => cast_from(b, *t, PgType::Text),
                })
                .collect::<Result<_, _>>()?;
        }
        // Functions taking a regclass read an untyped literal as a relation's name.
        if matches!(
            name.as_str(),
            "pg_total_relation_size" | "pg_relation_size" | "pg_table_size" | "pg_indexes_size"
        ) && types.first() == Some(&PgType::Unknown)
        {
            if let Some(b) = bargs.first_mut() {
                self.session_dependent = true;
                let literal = std::mem::replace(b, BExpr::Const(Value::Null));
                *b = BExpr::Func("regclass_in".into(), vec![literal]);
            }
        }
        if name == "pg_get_viewdef" && matches!(types.first(), Some(PgType::Unknown | PgType::Text))
        {
            // pg_get_viewdef(text): the view's name.
            if let Some(b) = bargs.first_mut() {
                self.session_dependent = true;
                let literal = std::mem::replace(b, BExpr::Const(Value::Null));
                *b = BExpr::Func("regclass_in".into(), vec![literal]);
            }
        }
        let ty = match name.as_str() {
            "pg_get_indexdef" if !matches!(types.len(), 1 | 3) => {
                return Err(no_such_function(&name, &types))
            }
            "pg_get_viewdef" if !matches!(types.len(), 1 | 2) => {
                return Err(no_such_function(&name, &types))
            }
            "pg_get_viewdef" => PgType::Text,
            // A record is no array (its value is held as one).
            "array_length" | "array_upper" | "array_lower" | "array_to_string"
                if matches!(types.first(), Some(PgType::Record(_))) =>
            {
                return Err(no_such_function(&name, &types))
            }
            "encode" => PgType::Text,
            "decode" => PgType::Bytea,
            "now"
            | "current_timestamp"
            | "transaction_timestamp"
            | "statement_timestamp"
            | "clock_timestamp" => PgType::Timestamptz,
            "version"
            | "lower"
            | "upper"
            | "concat_ws"
            | "format"
            | "quote_literal"
            | "quote_nullable"
            | "concat"
            | "format_type"
            | "pg_get_expr"
            | "obj_description"
            | "col_description"
            | "shobj_description"
            | "array_to_string"
            | "replace"
            | "substr"
            | "substring"
            | "btrim"
            | "trim"
            | "ltrim"
            | "rtrim"
            | "pg_get_constraintdef"
            | "pg_get_indexdef"
            | "pg_get_statisticsobjdef_columns"
            | "pg_get_partkeydef"
            | "pg_tablespace_location"
            | "quote_ident"
            | "md5"
            | "current_setting"
            | "set_config"
            | "pg_size_pretty"
            | "split_part"
            | "left"
            | "right"
            | "repeat"
            | "initcap"
            | "reverse"
            | "translate"
            | "lpad"
            | "rpad"
            | "chr" => PgType::Text,
            "pg_client_encoding" | "getdatabaseencoding" if types.is_empty() => PgType::Name,
            "pg_encoding_to_char" => PgType::Name,
            "pg_char_to_encoding" if types.len() == 1 => PgType::Int4,
            "to_regclass" => PgType::Regclass,
            "to_regtype" => PgType::Regtype,
            "to_regnamespace" => PgType::Regnamespace,
            "current_database" | "current_catalog" | "current_schema" | "current_user"
            | "session_user" | "user" | "current_role" | "pg_get_userbyid" => PgType::Name,
            "pg_database_size"
            | "pg_total_relation_size"
            | "pg_relation_size"
            | "pg_table_size"
            | "pg_indexes_size"
            | "pg_stat_get_numscans" => PgType::Int8,
            "length" | "char_length" | "octet_length" | "strpos" | "position" | "array_length"
            | "array_upper" | "array_lower" | "ascii" | "pg_backend_pid" => PgType::Int4,
            "cardinality" => match types.as_slice() {
                [t] if t.is_array() => PgType::Int4,
                _ => return Err(no_such_function(&name, &types)),
            },
            "pg_table_is_visible"
            | "pg_type_is_visible"
            | "pg_function_is_visible"
            | "pg_collation_is_visible"
            | "has_table_privilege"
            | "has_schema_privilege"
            | "has_database_privilege"
            | "pg_is_in_recovery"
            | "pg_relation_is_publishable"
            | "starts_with" => PgType::Bool,
            "coalesce" | "nullif" | "greatest" | "least" => {
                if let [a, b] = types.as_slice() {
                    if name == "nullif" {
                        operator_exists(*a, "=", *b)?;
                    }
                }
                if matches!(name.as_str(), "greatest" | "least") && types.contains(&PgType::Json) {
                    return Err(SqlError::UndefinedFunction {
                        message: "could not identify a comparison function for type json".into(),
                        hint: None,
                    });
                }
                match resolve_common(&name.to_uppercase(), types.iter().copied())? {
                    // Only untyped literals: PostgreSQL resolves them as text.
                    PgType::Unknown => PgType::Text,
                    t => t,
                }
            }
            // abs(unknown) resolves to the numeric category's preferred type.
            "abs" => match types.first() {
                Some(PgType::Unknown) => PgType::Float8,
                Some(t) if t.is_numeric_family() => *t,
                _ => return Err(no_such_function(&name, &types)),
            },
            // round(numeric, int) exists, round(double precision, int) does not; one argument:
            // numeric stays numeric, anything else is rounded as double precision.
            "round" | "trunc" if types.len() == 2 => match types[0] {
                PgType::Float4 | PgType::Float8 => return Err(no_such_function(&name, &types)),
                _ => PgType::Numeric,
            },
            "round" | "trunc" | "floor" | "ceil" | "ceiling" => match types.first() {
                Some(PgType::Numeric) => PgType::Numeric,
                _ => PgType::Float8,
            },
            "current_schemas" => PgType::NameArray,
            // aclitem[] is text[] here (pgcatalog's convention for ACL columns).
            "acldefault" => PgType::TextArray,
            n if OF_EMPTY_CATALOGS_TEXT.contains(&n) => PgType::Text,
            n if OF_EMPTY_CATALOGS_BOOL.contains(&n) => PgType::Bool,
            "txid_current" => PgType::Int8,
            // A type's name called with one argument is a cast to it, where the cast exists
            // (PostgreSQL's function-style cast: `text(42)`, `int8('5')`, `float8(x)`).
            _ => match (function_style_cast(&name), types.as_slice()) {
                (Some(to), [from]) => {
                    let arg = bargs
                        .into_iter()
                        .next()
                        .unwrap_or(BExpr::Const(Value::Null));
                    return match cast_from(arg, *from, to) {
                        Err(SqlError::CannotCast { .. }) => Err(no_such_function(&name, &types)),
                        other => other.map(|e| (e, to)),
                    };
                }
                _ => return Err(no_such_function(&name, &types)),
            },
        };
        // NULLIF is its first argument where PostgreSQL's `=` takes both as they are (a
        // cross-type operator: integers of two widths, the timestamp types and date): of its
        // type, with its value (`nullif(x, y, x_common)` compares the last two).
        let nullif_first = match (name.as_str(), types.as_slice()) {
            ("nullif", [a, b]) if a != b && cross_type_equality(*a, *b) => bargs.first().cloned(),
            _ => None,
        };
        let bargs = if matches!(
            name.as_str(),
            "coalesce" | "nullif" | "greatest" | "least" | "abs"
        ) {
            bargs
                .into_iter()
                .zip(&types)
                .map(|(b, t)| coerce_result(b, *t, ty))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            bargs
        };
        let (ty, mut bargs) = match nullif_first {
            Some(first) => (types[0], bargs.into_iter().chain([first]).collect()),
            None => (ty, bargs),
        };
        // An int2vector's subscripts start at 0: its lower bound as a third argument.
        if matches!(name.as_str(), "array_lower" | "array_upper")
            && types.first().is_some_and(|t| t.is_vector())
            && bargs.len() == 2
        {
            bargs.push(BExpr::Const(Value::Int(0)));
        }
        let narrow = name == "abs";
        let call = BExpr::Func(name, bargs);
        Ok((
            if narrow {
                narrow_integer(call, ty)
            } else {
                call
            },
            ty,
        ))
    }
}

/// The type two timestamp-like arguments resolve to (`generate_series`, `age`, `date_bin`):
/// timestamp when one is and the other converts to it (a date, an untyped literal), else
/// timestamptz, PostgreSQL's preferred type of the category.
fn moment_pair_type(a: PgType, b: PgType) -> PgType {
    use PgType::{Date, Timestamp, Timestamptz, Unknown};
    let local = [a, b]
        .iter()
        .all(|t| matches!(t, Timestamp | Date | Unknown))
        && [a, b].contains(&Timestamp);
    if local {
        Timestamp
    } else {
        Timestamptz
    }
}

/// Whether PostgreSQL has an `=` operator taking the two types as they are.
fn cross_type_equality(a: PgType, b: PgType) -> bool {
    use PgType::{Date, Float4, Float8, Int2, Int4, Int8, Timestamp, Timestamptz};
    let family = |t| match t {
        Int2 | Int4 | Int8 => 1,
        Float4 | Float8 => 2,
        Date | Timestamp | Timestamptz => 3,
        _ => 0,
    };
    family(a) != 0 && family(a) == family(b)
}

/// The type of UNION, CASE, COALESCE, GREATEST and LEAST (`what`) over its inputs' types, as
/// PostgreSQL's `select_common_type`: Unknown if all are untyped, an error when two belong to
/// different categories.
fn resolve_common(what: &str, types: impl Iterator<Item = PgType>) -> Result<PgType, SqlError> {
    let mut t = PgType::Unknown;
    for n in types {
        if t != PgType::Unknown && n != PgType::Unknown && category(t) != category(n) {
            return Err(SqlError::DatatypeMismatch {
                message: format!(
                    "{what} types {} and {} cannot be matched",
                    t.sql_name(),
                    n.sql_name()
                ),
                hint: None,
            });
        }
        t = select_common(t, n);
    }
    Ok(t)
}

/// The common type of two types as `select_common_type` picks it (UNION, VALUES, CASE,
/// COALESCE, ARRAY[…]): [`common_type`], except that integers and numeric convert to real
/// implicitly and real to numeric only by assignment, so real wins there (arithmetic resolves
/// `real + numeric` to double precision instead).
fn select_common(a: PgType, b: PgType) -> PgType {
    match (a, b) {
        (PgType::Float4, x) | (x, PgType::Float4) if x.is_integer() || x == PgType::Numeric => {
            PgType::Float4
        }
        _ => common_type(a, b),
    }
}

/// PostgreSQL has no operator between values of two type categories (`text = bigint`): an
/// error telling the client to cast, unless one side is an untyped literal.
fn operator_exists(a: PgType, op: &str, b: PgType) -> Result<(), SqlError> {
    let missing = || {
        no_such_operator(format!(
            "{} {} {}",
            a.sql_name(),
            if op == "!=" { "<>" } else { op },
            b.sql_name()
        ))
    };
    // json has no comparison operators at all (PostgreSQL compares jsonb, not json).
    if a == PgType::Json || b == PgType::Json {
        return Err(missing());
    }
    match (a, b) {
        (PgType::Record(_), PgType::Record(_)) => {
            return Err(SqlError::feature("comparing records"))
        }
        (PgType::Record(_), _) | (_, PgType::Record(_)) => return Err(missing()),
        _ => {}
    }
    if a == PgType::Xid || b == PgType::Xid {
        // xid has `=` and `<>`, against xid and against integer, and nothing else.
        let other = if a == PgType::Xid { b } else { a };
        if matches!(op, "=" | "<>" | "!=")
            && matches!(
                other,
                PgType::Xid | PgType::Int4 | PgType::Int2 | PgType::Unknown
            )
        {
            return Ok(());
        }
        return Err(missing());
    }
    if a == PgType::Unknown || b == PgType::Unknown || category(a) == category(b) {
        return Ok(());
    }
    Err(missing())
}

/// A grouping key: PostgreSQL has no equality operator for json.
fn equatable((e, ty): (BExpr, PgType)) -> Result<BExpr, SqlError> {
    has_equality(ty)?;
    Ok(e)
}

/// Whether values of `ty` can be compared for DISTINCT, GROUP BY and set operations.
fn has_equality(ty: PgType) -> Result<(), SqlError> {
    if ty == PgType::Json {
        return Err(SqlError::UndefinedFunction {
            message: "could not identify an equality operator for type json".into(),
            hint: None,
        });
    }
    Ok(())
}

/// The array type with elements of `elem` (text[] holds the elements' text when RockLake
/// has no array of that type), or 0A000 for json, whose elements text[] would quote.
fn array_type_of(elem: PgType) -> Result<PgType, SqlError> {
    match elem {
        PgType::Json => Err(SqlError::feature("arrays of json (json[])")),
        PgType::Record(_) => Err(SqlError::feature("arrays of records (record[])")),
        _ => Ok(elem.array_or_text()),
    }
}

/// Whether values of type `ty` can be sorted: PostgreSQL has no ordering operator for xid.
fn orderable(ty: PgType) -> Result<(), SqlError> {
    if matches!(ty, PgType::Xid | PgType::Json) {
        return Err(SqlError::UndefinedFunction {
            message: format!(
                "could not identify an ordering operator for type {}",
                ty.sql_name()
            ),
            hint: Some("Use an explicit ordering operator or modify the query.".into()),
        });
    }
    Ok(())
}

/// The regular expression functions, by the kinds of their arguments (`t` text, `i` integer)
/// in each arity PostgreSQL 15 has, their result type, and the name the executor calls.
/// `substring(text, text)` (also `SUBSTRING(s FROM pattern)`) is the regular expression one;
/// `substr` with an untyped second argument reads it as an integer, as PostgreSQL's does.
fn bind_regex_call(
    name: &str,
    bargs: &mut Vec<BExpr>,
    types: &[PgType],
) -> Option<Result<(BExpr, PgType), SqlError>> {
    let stringy = |t: &PgType| *t == PgType::Unknown || t.is_string();
    let (kinds, ty, call): (&str, PgType, &str) = match (name, types) {
        ("substring", [_, p]) if stringy(p) => ("tt", PgType::Text, "regexp_substring"),
        // substring(text, text, text) is SQL's SIMILAR-pattern form, not positions.
        ("substring", [_, a, b]) if *a == PgType::Unknown || a.is_string() || b.is_string() => {
            return Some(Err(SqlError::feature(
                "substring(text FROM pattern FOR escape) (SQL regular expressions)",
            )))
        }
        // Its argument was checked against STRING_SIGNATURES.
        ("chr", [_]) => ("i", PgType::Text, name),
        ("substr" | "substring", [first, rest @ ..])
            if !rest.is_empty()
                && rest.len() <= 2
                && rest
                    .iter()
                    .all(|t| matches!(t, PgType::Unknown | PgType::Int2 | PgType::Int4)) =>
        {
            // substr(bytea, …) counts bytes and gives bytea.
            let (kinds, ty) = match (*first == PgType::Bytea, rest.len()) {
                (true, 1) => ("bi", PgType::Bytea),
                (true, _) => ("bii", PgType::Bytea),
                (false, 1) => ("ti", PgType::Text),
                (false, _) => ("tii", PgType::Text),
            };
            (kinds, ty, "substr")
        }
        ("substr" | "substring", _) => return Some(Err(no_such_function(name, types))),
        ("regexp_replace", [_, _, _]) => ("ttt", PgType::Text, name),
        ("regexp_replace", [_, _, _, f]) if stringy(f) => ("tttt", PgType::Text, name),
        ("regexp_replace", [_, _, _, _]) => ("ttti", PgType::Text, name),
        ("regexp_replace", [_, _, _, _, _]) => ("tttii", PgType::Text, name),
        ("regexp_replace", [_, _, _, _, _, _]) => ("tttiit", PgType::Text, name),
        ("regexp_match", [_, _] | [_, _, _]) => (&"ttt"[..types.len()], PgType::TextArray, name),
        ("regexp_split_to_array", [_, _] | [_, _, _]) => {
            (&"ttt"[..types.len()], PgType::TextArray, name)
        }
        ("regexp_like", [_, _] | [_, _, _]) => (&"ttt"[..types.len()], PgType::Bool, name),
        ("regexp_count", [_, _] | [_, _, _] | [_, _, _, _]) => {
            (&"ttit"[..types.len()], PgType::Int4, name)
        }
        ("regexp_substr", [_, _, ..]) if types.len() <= 6 => {
            (&"ttiiti"[..types.len()], PgType::Text, name)
        }
        _ => return None,
    };
    let mut args = Vec::with_capacity(bargs.len());
    for ((b, t), kind) in std::mem::take(bargs)
        .into_iter()
        .zip(types)
        .zip(kinds.chars())
    {
        let fits = match kind {
            't' => stringy(t),
            'b' => *t == PgType::Bytea,
            // integer: bigint does not convert to it implicitly.
            _ => matches!(t, PgType::Unknown | PgType::Int2 | PgType::Int4),
        };
        if !fits {
            return Some(Err(no_such_function(name, types)));
        }
        let to = match kind {
            't' => PgType::Text,
            'b' => PgType::Bytea,
            _ => PgType::Int4,
        };
        match coerce_expr(b, to) {
            Ok(b) => args.push(b),
            Err(e) => return Some(Err(e)),
        }
    }
    Some(Ok((BExpr::Func(call.to_string(), args), ty)))
}

/// PostgreSQL's `width_bucket_float8`: the bucket of `x` among `n` equal ones from `lo` to
/// `hi` (either way round), 0 before them and `n + 1` after, with its errors (2201G).
fn width_bucket(x: f64, lo: f64, hi: f64, n: i64) -> Result<i64, SqlError> {
    let bad = |message: &str| SqlError::MathDomain {
        code: "2201G",
        message: message.into(),
    };
    if n <= 0 {
        return Err(bad("count must be greater than zero"));
    }
    if x.is_nan() || lo.is_nan() || hi.is_nan() {
        return Err(bad("operand, lower bound, and upper bound cannot be NaN"));
    }
    if lo.is_infinite() || hi.is_infinite() {
        return Err(bad("lower and upper bounds must be finite"));
    }
    let count = n as f64;
    // Past the last bucket: `n + 1`, an int4 as the result is.
    let after = || {
        if n >= i64::from(i32::MAX) {
            Err(SqlError::MathDomain {
                code: "22003",
                message: "integer out of range".into(),
            })
        } else {
            Ok(n + 1)
        }
    };
    // Rounding must not reach past the last bucket; PostgreSQL caps it too.
    let inside = |fraction: f64| ((fraction * count) as i64).min(n - 1) + 1;
    if lo < hi {
        if x < lo {
            Ok(0)
        } else if x >= hi {
            after()
        } else {
            Ok(inside((x - lo) / (hi - lo)))
        }
    } else if lo > hi {
        if x > lo {
            Ok(0)
        } else if x <= hi {
            after()
        } else {
            Ok(inside((lo - x) / (lo - hi)))
        }
    } else {
        Err(bad("lower bound cannot equal upper bound"))
    }
}

/// `chr(n)`: the character of code point `n` (UTF-8), with PostgreSQL's errors.
fn chr(n: i64) -> Result<char, SqlError> {
    let limit = |message: String| SqlError::ProgramLimit { message };
    if n == 0 {
        return Err(limit("null character not permitted".into()));
    }
    if n < 0 {
        return Err(SqlError::InvalidParameter {
            message: "character number must be positive".into(),
        });
    }
    let code = u32::try_from(n).unwrap_or(u32::MAX);
    if code > 0x10FFFF {
        return Err(limit(format!(
            "requested character too large for encoding: {n}"
        )));
    }
    char::from_u32(code)
        .ok_or_else(|| limit(format!("requested character not valid for encoding: {n}")))
}

/// A regular expression function over non-NULL arguments of the kinds
/// [`bind_regex_call`] gave them.
fn regexp_call(name: &str, a: &[Value]) -> Result<Value, SqlError> {
    let text = |i: usize| match a.get(i) {
        Some(Value::Text(s)) => Ok(s.to_string()),
        _ => Err(SqlError::internal(format!(
            "{name}: argument {i} is not text"
        ))),
    };
    let int = |i: usize, default: i64| match a.get(i) {
        Some(Value::Int(n)) => Ok(*n),
        None => Ok(default),
        _ => Err(SqlError::internal(format!(
            "{name}: argument {i} is not an integer"
        ))),
    };
    let flags = |i: usize| match a.get(i) {
        Some(_) => crate::regex::Flags::parse(&text(i)?),
        None => Ok(crate::regex::Flags::default()),
    };
    let (s, pattern) = (text(0)?, text(1)?);
    let whole_or_first_group = |groups: Vec<Option<String>>| -> Value {
        let pick = usize::from(groups.len() > 1);
        groups
            .into_iter()
            .nth(pick)
            .flatten()
            .map_or(Value::Null, Value::text)
    };
    Ok(match name {
        "regexp_replace" => {
            let replacement = text(2)?;
            // (source, pattern, replacement [, flags]) or (…, start [, n [, flags]]): without
            // `n`, the first match is replaced, or every one with `g`; `n` 0 is every one.
            let (start, n, f) = match a.get(3) {
                None => (1, 1, crate::regex::Flags::default()),
                Some(Value::Text(_)) => {
                    let f = flags(3)?;
                    (1, if f.global { 0 } else { 1 }, f)
                }
                Some(_) => {
                    let f = flags(5)?;
                    let n = int(4, 1)?;
                    (int(3, 1)?, if f.global && a.len() < 5 { 0 } else { n }, f)
                }
            };
            let re = crate::regex::compile(&pattern, f)?;
            Value::text(crate::regex::replace(&s, &re, &replacement, start, n)?)
        }
        "regexp_split_to_array" => {
            let re = crate::regex::compile(&pattern, flags(2)?.single(name)?)?;
            Value::Array(
                crate::regex::split(&s, &re)
                    .into_iter()
                    .map(Value::text)
                    .collect::<Vec<_>>()
                    .into(),
            )
        }
        "regexp_match" => {
            let re = crate::regex::compile(&pattern, flags(2)?.single(name)?)?;
            match crate::regex::nth_match(&s, &re, 1, 1)? {
                None => Value::Null,
                Some(groups) => {
                    let items: Vec<Value> = if groups.len() > 1 {
                        groups
                            .into_iter()
                            .skip(1)
                            .map(|g| g.map_or(Value::Null, Value::text))
                            .collect()
                    } else {
                        groups
                            .into_iter()
                            .map(|g| g.map_or(Value::Null, Value::text))
                            .collect()
                    };
                    Value::Array(items.into())
                }
            }
        }
        "regexp_like" => {
            let re = crate::regex::compile(&pattern, flags(2)?.single(name)?)?;
            Value::Bool(re.is_match(&s))
        }
        "regexp_count" => {
            let re = crate::regex::compile(&pattern, flags(3)?.single(name)?)?;
            Value::Int(crate::regex::count(&s, &re, int(2, 1)?)?)
        }
        "regexp_substr" => {
            let re = crate::regex::compile(&pattern, flags(4)?.single(name)?)?;
            let sub = int(5, 0)?;
            if sub < 0 {
                return Err(SqlError::InvalidParameter {
                    message: format!("invalid value for parameter \"subexpr\": {sub}"),
                });
            }
            match crate::regex::nth_match(&s, &re, int(2, 1)?, int(3, 1)?)? {
                None => Value::Null,
                // A pattern without groups gives its whole match for any `subexpr`.
                Some(groups) if groups.len() == 1 => groups
                    .into_iter()
                    .flatten()
                    .next()
                    .map_or(Value::Null, Value::text),
                Some(groups) => groups
                    .into_iter()
                    .nth(usize::try_from(sub).unwrap_or(usize::MAX))
                    .flatten()
                    .map_or(Value::Null, Value::text),
            }
        }
        // substring(text FROM pattern): the first group's text if the pattern has groups.
        _ => {
            let re = crate::regex::compile(&pattern, crate::regex::Flags::default())?;
            match crate::regex::nth_match(&s, &re, 1, 1)? {
                None => Value::Null,
                Some(groups) => whole_or_first_group(groups),
            }
        }
    })
}

/// PostgreSQL's 42803 for the source column `i` of `scope`, used outside an aggregate where
/// the rows are grouped, with its position at the first reference in `exprs` (the clauses in
/// the order PostgreSQL checks them).
fn grouping_error<'e>(
    scope: &Scope,
    i: usize,
    exprs: impl IntoIterator<Item = &'e Expr>,
    keys: &[Expr],
) -> SqlError {
    let c = &scope.cols[i];
    let name = match &c.qual {
        Some(q) => format!("{q}.{}", c.name),
        None => c.name.to_string(),
    };
    let err = SqlError::Grouping { name };
    let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    if let Some(spot) = exprs
        .into_iter()
        .find_map(|e| ungrouped_reference(e, c.qual.as_deref(), &c.name, &keys))
    {
        crate::errpos::note(&err, spot);
    }
    err
}

/// Where `e` first names the column `qual.name` outside an aggregate call and outside the
/// GROUP BY expressions `keys` (as printed), PostgreSQL's position of an ungrouped column.
/// Only the common expression forms are walked; `None` when the reference is not found in
/// them.
fn ungrouped_reference(
    e: &Expr,
    qual: Option<&str>,
    name: &str,
    keys: &[String],
) -> Option<crate::errpos::Spot> {
    if keys.iter().any(|k| *k == e.to_string()) {
        return None;
    }
    let walk = |x: &Expr| ungrouped_reference(x, qual, name, keys);
    match e {
        Expr::Identifier(i) => {
            (ident(i) == name).then(|| crate::errpos::Spot::at(i.span.start, ident_token(i)))
        }
        Expr::CompoundIdentifier(parts) => match parts.as_slice() {
            [.., q, last] if ident(last) == name && qual.is_none_or(|w| ident(q) == w) => parts
                .first()
                .map(|i| crate::errpos::Spot::at(i.span.start, ident_token(i))),
            _ => None,
        },
        Expr::BinaryOp { left, right, .. } => walk(left).or_else(|| walk(right)),
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::Cast { expr, .. }
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::IsTrue(expr)
        | Expr::IsFalse(expr)
        | Expr::IsNotTrue(expr)
        | Expr::IsNotFalse(expr)
        | Expr::IsUnknown(expr)
        | Expr::IsNotUnknown(expr) => walk(expr),
        Expr::Between {
            expr, low, high, ..
        } => walk(expr).or_else(|| walk(low)).or_else(|| walk(high)),
        Expr::In {
            expr,
            target: ast::InTarget::List(list),
            ..
        } => walk(expr).or_else(|| list.iter().find_map(walk)),
        Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => {
            walk(expr).or_else(|| walk(pattern))
        }
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => operand
            .as_deref()
            .and_then(walk)
            .or_else(|| {
                conditions
                    .iter()
                    .find_map(|w| walk(&w.condition).or_else(|| walk(&w.result)))
            })
            .or_else(|| else_result.as_deref().and_then(walk)),
        Expr::Function(f) => {
            let fname = object_name(&f.name).last().cloned().unwrap_or_default();
            if f.over.is_some() || aggregate_func(&fname, false).is_some() {
                return None;
            }
            match &f.args {
                ast::FunctionArguments::List(list) => list.args.iter().find_map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))
                    | ast::FunctionArg::Named {
                        arg: ast::FunctionArgExpr::Expr(x),
                        ..
                    } => walk(x),
                    _ => None,
                }),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The array functions PostgreSQL declares over `anycompatiblearray` / `anycompatible`:
/// `array_append`, `array_prepend`, `array_cat`, `array_remove`, `array_replace`,
/// `array_position` (with an optional start), `array_positions`, and `array_ndims` /
/// `array_dims` over `anyarray`. The array type comes from an array argument, or from a typed
/// element's array type; untyped literals take it. `None`: not one of them.
fn bind_array_function(
    name: &str,
    args: &mut Vec<BExpr>,
    types: &[PgType],
) -> Option<Result<(BExpr, PgType), SqlError>> {
    // Per argument: is it the array (true) or an element (false)?
    let shape: &[bool] = match (name, types.len()) {
        ("array_append" | "array_remove" | "array_position" | "array_positions", 2) => {
            &[true, false]
        }
        ("array_position", 3) => &[true, false],
        ("array_prepend", 2) => &[false, true],
        ("array_cat", 2) => &[true, true],
        ("array_replace", 3) => &[true, false, false],
        ("array_ndims" | "array_dims", 1) => &[true],
        (
            "array_append" | "array_remove" | "array_position" | "array_positions"
            | "array_prepend" | "array_cat" | "array_replace" | "array_ndims" | "array_dims",
            _,
        ) => return Some(Err(no_such_function(name, types))),
        _ => return None,
    };
    Some((|| {
        let array_given = shape
            .iter()
            .zip(types)
            .find(|(is_array, t)| **is_array && **t != PgType::Unknown)
            .map(|(_, t)| *t);
        let element_given = shape
            .iter()
            .zip(types)
            .find(|(is_array, t)| !**is_array && **t != PgType::Unknown)
            .map(|(_, t)| *t);
        let ty = match (array_given, element_given) {
            (Some(t), _) if t.is_array() => t,
            (Some(_), _) => return Err(no_such_function(name, types)),
            (None, Some(e)) => e.array_or_text(),
            // Untyped literals only: PostgreSQL resolves them as text.
            (None, None) => PgType::TextArray,
        };
        let elem = ty.element().unwrap_or(PgType::Text);
        let taken = std::mem::take(args);
        for (i, (arg, t)) in taken.into_iter().zip(types).enumerate() {
            let is_array = shape.get(i).copied();
            args.push(match is_array {
                Some(true) if *t == ty || *t == PgType::Unknown => coerce_or_cast(arg, ty)?,
                Some(true) => return Err(no_such_function(name, types)),
                Some(false) => cast_from(arg, *t, elem)?,
                // array_position's start: an integer.
                None if matches!(t, PgType::Int2 | PgType::Int4 | PgType::Unknown) => {
                    coerce_or_cast(arg, PgType::Int4)?
                }
                None => return Err(no_such_function(name, types)),
            });
        }
        let out = match name {
            "array_position" | "array_ndims" => PgType::Int4,
            "array_positions" => PgType::Int4Array,
            "array_dims" => PgType::Text,
            _ => ty,
        };
        if name == "array_dims" && types.first().is_some_and(|t| t.is_vector()) {
            args.push(BExpr::Const(Value::Int(0)));
        }
        Ok((BExpr::Func(name.to_string(), std::mem::take(args)), out))
    })())
}

/// PostgreSQL's functions of `inet`: `host`, `text`, `abbrev`, `masklen`, `family`,
/// `netmask`, `hostmask`, `broadcast`, `set_masklen` (an untyped literal read as inet).
/// `None`: not one of them with an inet first argument.
#[allow(clippy::type_complexity)]
fn bind_inet_function(
    name: &str,
    args: &mut [BExpr],
    types: &[PgType],
) -> Option<Result<(BExpr, PgType), SqlError>> {
    let out = match name {
        "host" | "text" | "abbrev" => PgType::Text,
        "masklen" | "family" => PgType::Int4,
        "netmask" | "hostmask" | "broadcast" | "set_masklen" => PgType::Inet,
        _ => return None,
    };
    let inet_first = |t: &PgType| *t == PgType::Inet || *t == PgType::Unknown && name != "text";
    let shape_ok = match (name, types) {
        ("set_masklen", [a, n]) => {
            inet_first(a) && (matches!(n, PgType::Int2 | PgType::Int4) || *n == PgType::Unknown)
        }
        ("set_masklen", _) => false,
        (_, [a]) => inet_first(a),
        _ => false,
    };
    if !shape_ok {
        // `text(x)` of another type is the cast, handled elsewhere.
        return (name != "text").then(|| Err(no_such_function(name, types)));
    }
    let bound = args
        .iter_mut()
        .enumerate()
        .map(|(i, a)| {
            let x = std::mem::replace(a, BExpr::Const(Value::Null));
            coerce_expr(x, if i == 0 { PgType::Inet } else { PgType::Int4 })
        })
        .collect::<Result<Vec<_>, _>>();
    Some(bound.map(|b| (BExpr::Func(format!("inet_fn:{name}"), b), out)))
}

/// The `json` functions. The ones taking any type (`to_json`, `json_build_object`,
/// `json_build_array`) get each argument's type as a constant after it, to write the value
/// as that type writes it in JSON.
fn bind_json_function(
    name: &str,
    args: &mut Vec<BExpr>,
    types: &[PgType],
) -> Option<Result<(BExpr, PgType), SqlError>> {
    let take = |args: &mut Vec<BExpr>| std::mem::take(args);
    let typed = |args: Vec<BExpr>| -> Vec<BExpr> {
        args.into_iter()
            .zip(types)
            .flat_map(|(a, t)| {
                // An untyped literal is text to json, as PostgreSQL resolves `unknown`.
                let t = if *t == PgType::Unknown {
                    PgType::Text
                } else {
                    *t
                };
                // A record's fields go with it by name and type (its value holds neither).
                let ty = match t {
                    PgType::Record(fields) => Value::Array(
                        fields
                            .iter()
                            .flat_map(|(n, f)| [Value::text(*n), Value::Int(f.oid().into())])
                            .collect(),
                    ),
                    t => Value::Int(t.oid().into()),
                };
                [a, BExpr::Const(ty)]
            })
            .collect()
    };
    let json_arg = |args: &mut Vec<BExpr>| -> Result<Vec<BExpr>, SqlError> {
        match types {
            [PgType::Json | PgType::Unknown] => {
                Ok(vec![coerce_expr(take(args).remove(0), PgType::Json)?])
            }
            _ => Err(no_such_function(name, types)),
        }
    };
    let call = |f: &str, a: Vec<BExpr>| BExpr::Func(format!("json_fn:{f}"), a);
    Some(match name {
        // An untyped literal has no type for to_json's anyelement to take.
        "to_json" if types == [PgType::Unknown] => Err(SqlError::DatatypeMismatch {
            message: "could not determine polymorphic type because input has type unknown".into(),
            hint: None,
        }),
        "to_json" if types.len() == 1 => Ok((call(name, typed(take(args))), PgType::Json)),
        // array_to_json(anyarray [, pretty]): to_json's array; pretty puts each top-level
        // element after the first on a line of its own.
        "array_to_json" if matches!(types, [a] | [a, PgType::Bool | PgType::Unknown] if a.is_array()) =>
        {
            let mut all = take(args);
            let pretty = if all.len() == 2 { all.pop() } else { None };
            let mut bound = match typed(all).into_iter().collect::<Vec<_>>() {
                v if v.len() == 2 => v,
                _ => return Some(Err(SqlError::internal("array_to_json's argument"))),
            };
            match pretty {
                Some(p) => match coerce_expr(p, PgType::Bool) {
                    Ok(p) => {
                        bound.push(p);
                        Ok((call("array_to_json", bound), PgType::Json))
                    }
                    Err(e) => Err(e),
                },
                None => Ok((call("to_json", bound), PgType::Json)),
            }
        }
        "array_to_json" => Err(no_such_function(name, types)),
        // row_to_json(record): to_json's object of its fields.
        "row_to_json" if matches!(types, [PgType::Record(_)]) => {
            Ok((call("to_json", typed(take(args))), PgType::Json))
        }
        "row_to_json" => Err(no_such_function(name, types)),
        "json_build_object" | "json_build_array" => {
            Ok((call(name, typed(take(args))), PgType::Json))
        }
        // json_extract_path(json, VARIADIC text[]): the path's steps as one text[].
        "json_extract_path" | "json_extract_path_text"
            if types.len() >= 2
                && matches!(types[0], PgType::Json | PgType::Unknown)
                && types[1..]
                    .iter()
                    .all(|t| t.is_string() || *t == PgType::Unknown) =>
        {
            let mut it = take(args).into_iter();
            let doc = match it.next() {
                Some(d) => coerce_expr(d, PgType::Json),
                None => Err(SqlError::internal("json_extract_path without arguments")),
            };
            let steps = it
                .zip(&types[1..])
                .map(|(s, t)| match t {
                    PgType::Unknown => coerce_expr(s, PgType::Text),
                    t => cast_from(s, *t, PgType::Text),
                })
                .collect::<Result<Vec<_>, _>>();
            let ty = if name == "json_extract_path" {
                PgType::Json
            } else {
                PgType::Text
            };
            doc.and_then(|d| Ok((call(name, vec![d, BExpr::Func("array".into(), steps?)]), ty)))
        }
        "json_extract_path" | "json_extract_path_text" => Err(no_such_function(name, types)),
        "json_typeof" => json_arg(args).map(|a| (call(name, a), PgType::Text)),
        "json_array_length" => json_arg(args).map(|a| (call(name, a), PgType::Int4)),
        "to_json" => Err(no_such_function(name, types)),
        _ => return None,
    })
}

/// The type [`bind_json_function`] passes beside a value: an OID, or a record's fields.
pub(crate) fn json_slot_type(slot: &Value) -> PgType {
    match slot {
        Value::Int(oid) => u32::try_from(*oid)
            .ok()
            .and_then(crate::types::type_by_oid)
            .unwrap_or(PgType::Text),
        Value::Array(_) => PgType::Record(&[]),
        _ => PgType::Text,
    }
}

/// A value as JSON, as `datum_to_json` writes it: a record as an object of its fields
/// (`{"x":1,"n":1}`, no spaces, as `composite_to_json`), anything else by its type.
fn write_json_typed(v: &Value, slot: &Value, out: &mut String) {
    match (v, slot) {
        (Value::Array(fields), Value::Array(shape)) => {
            out.push('{');
            for (i, (field, pair)) in fields.iter().zip(shape.chunks(2)).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if let Some(Value::Text(name)) = pair.first() {
                    crate::json::quote(name, out);
                }
                out.push(':');
                let ty = json_slot_type(pair.get(1).unwrap_or(&Value::Null));
                crate::json::write_value(field, ty, out);
            }
            out.push('}');
        }
        _ => crate::json::write_value(v, json_slot_type(slot), out),
    }
}

/// Evaluates [`bind_json_function`]'s calls and the `->` / `->>` operators.
fn eval_json_function(name: &str, a: &[Value]) -> Result<Value, SqlError> {
    // Typed arguments come in pairs: the value, then its type's OID (a record's field names
    // and types).
    let pairs = || {
        a.chunks(2).map(|p| {
            (
                p.first().unwrap_or(&Value::Null),
                p.get(1).unwrap_or(&Value::Null),
            )
        })
    };
    let json_text = |i: usize| match a.get(i) {
        Some(Value::Text(s)) => Some(&**s),
        _ => None,
    };
    Ok(match name {
        "to_json" => match pairs().next() {
            Some((v, _)) if v.is_null() => Value::Null,
            Some((v, ty)) => {
                let mut out = String::new();
                write_json_typed(v, ty, &mut out);
                Value::text(out)
            }
            None => Value::Null,
        },
        "array_to_json" => match (a.first(), a.get(1), a.get(2)) {
            (Some(Value::Array(items)), Some(slot), Some(pretty)) if !pretty.is_null() => {
                let sep = if *pretty == Value::Bool(true) {
                    ",\n "
                } else {
                    ","
                };
                let elem = json_slot_type(slot).element().unwrap_or(PgType::Text);
                let mut out = String::from("[");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(sep);
                    }
                    crate::json::write_value(item, elem, &mut out);
                }
                out.push(']');
                Value::text(out)
            }
            _ => Value::Null,
        },
        "json_build_array" => {
            let mut out = String::from("[");
            for (i, (v, ty)) in pairs().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json_typed(v, ty, &mut out);
            }
            out.push(']');
            Value::text(out)
        }
        "json_build_object" => {
            if !a.len().is_multiple_of(4) {
                return Err(SqlError::InvalidParameterHint {
                    message: "argument list must have even number of elements".into(),
                    hint: "The arguments of json_build_object() must consist of alternating keys and values.".into(),
                });
            }
            let mut out = String::from("{");
            let all: Vec<_> = pairs().collect();
            for (i, kv) in all.chunks(2).enumerate() {
                let [(k, kt), (v, vt)] = kv else { break };
                if k.is_null() {
                    return Err(SqlError::InvalidParameterHint {
                        message: format!("argument {} cannot be null", 2 * i + 1),
                        hint: "Object keys should be text.".into(),
                    });
                }
                let kt = &json_slot_type(kt);
                if kt.is_array() || matches!(kt, PgType::Json | PgType::Record(_)) {
                    return Err(SqlError::InvalidParameter {
                        message: "key value must be scalar, not array, composite, or json".into(),
                    });
                }
                if i > 0 {
                    out.push_str(", ");
                }
                // A key is always a string: a number key is quoted.
                let mut key = String::new();
                crate::json::write_value(k, *kt, &mut key);
                if key.starts_with('"') {
                    out.push_str(&key);
                } else {
                    crate::json::quote(&key, &mut out);
                }
                out.push_str(" : ");
                write_json_typed(v, vt, &mut out);
            }
            out.push('}');
            Value::text(out)
        }
        "json_typeof" => match json_text(0) {
            Some(s) => Value::text(crate::json::typeof_(s)?),
            None => Value::Null,
        },
        "json_array_length" => match json_text(0) {
            Some(s) => Value::Int(crate::json::array_length(s)?),
            None => Value::Null,
        },
        "#>" | "#>>" | "json_extract_path" | "json_extract_path_text" => {
            let (Some(doc), Some(Value::Array(steps))) = (json_text(0), a.get(1)) else {
                return Ok(Value::Null);
            };
            let path: Vec<Option<&str>> = steps
                .iter()
                .map(|s| match s {
                    Value::Text(t) => Some(&**t),
                    _ => None,
                })
                .collect();
            crate::json::get_path(doc, &path, matches!(name, "#>>" | "json_extract_path_text"))?
        }
        "->" | "->>" => {
            let (Some(doc), Some(sel)) = (json_text(0), a.get(1)) else {
                return Ok(Value::Null);
            };
            let (key, index) = match sel {
                Value::Text(k) => (Some(k.to_string()), None),
                Value::Int(i) => (None, Some(*i)),
                _ => return Ok(Value::Null),
            };
            if name == "->>" {
                crate::json::get_text(doc, key.as_deref(), index)?
            } else {
                match crate::json::get(doc, key.as_deref(), index)? {
                    Some((member, _)) => Value::text(member),
                    None => Value::Null,
                }
            }
        }
        other => {
            return Err(SqlError::internal(format!("no json function {other}")));
        }
    })
}

/// Evaluates [`bind_inet_function`]'s calls (NULL in, NULL out).
fn eval_inet_function(name: &str, a: &[Value]) -> Result<Value, SqlError> {
    let Some(Value::Bytes(b)) = a.first() else {
        return Ok(Value::Null);
    };
    let text = |s: Option<String>| s.map_or(Value::Null, Value::text);
    let int = |n: Option<i64>| n.map_or(Value::Null, Value::Int);
    let inet = |v: Option<Vec<u8>>| v.map_or(Value::Null, Value::Bytes);
    Ok(match name {
        "host" => text(crate::inet::host(b)),
        "text" => Value::text(crate::inet::show(b)),
        "abbrev" => Value::text(crate::inet::format(b)),
        "masklen" => int(crate::inet::masklen(b)),
        "family" => int(crate::inet::family(b)),
        "set_masklen" => match a.get(1) {
            Some(Value::Int(n)) => match crate::inet::set_masklen(b, *n) {
                Some(Some(v)) => Value::Bytes(v),
                Some(None) => {
                    return Err(SqlError::InvalidParameter {
                        message: format!("invalid mask length: {n}"),
                    })
                }
                None => Value::Null,
            },
            _ => Value::Null,
        },
        which => inet(crate::inet::derived(b, which)),
    })
}

/// `div`, `gcd`, `lcm`, `factorial`, `scale`, `min_scale`, `trim_scale` with PostgreSQL 15's
/// signatures: `gcd` / `lcm` over integer, bigint (a mix is bigint) or numeric, the others
/// over numeric (`factorial` over bigint). `None`: not one of them.
fn bind_numeric_function(
    name: &str,
    args: &mut Vec<BExpr>,
    types: &[PgType],
) -> Option<Result<(BExpr, PgType), SqlError>> {
    let arity = match name {
        "div" | "gcd" | "lcm" => 2,
        "factorial" | "scale" | "min_scale" | "trim_scale" => 1,
        _ => return None,
    };
    Some((|| {
        let numbers = types
            .iter()
            .all(|t| *t == PgType::Unknown || t.is_numeric_family() && !t.is_reg());
        if types.len() != arity || !numbers || types.contains(&PgType::Oid) {
            return Err(no_such_function(name, types));
        }
        // Double precision converts to numeric by assignment only: no candidate takes it.
        if types
            .iter()
            .any(|t| matches!(t, PgType::Float4 | PgType::Float8))
        {
            return Err(no_such_function(name, types));
        }
        let (arg, out) = match name {
            "gcd" | "lcm" if types.contains(&PgType::Numeric) => (PgType::Numeric, PgType::Numeric),
            "gcd" | "lcm" if types.contains(&PgType::Int8) => (PgType::Int8, PgType::Int8),
            "gcd" | "lcm" if types.contains(&PgType::Int4) => (PgType::Int4, PgType::Int4),
            // Two smallints (or untyped literals) fit integer and bigint alike.
            "gcd" | "lcm" => {
                return Err(ambiguous(format!(
                    "function {name}({}) is not unique",
                    types
                        .iter()
                        .map(|t| t.sql_name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
            "factorial" if types.contains(&PgType::Numeric) => {
                return Err(no_such_function(name, types))
            }
            "factorial" => (PgType::Int8, PgType::Numeric),
            "scale" | "min_scale" => (PgType::Numeric, PgType::Int4),
            _ => (PgType::Numeric, PgType::Numeric),
        };
        let bound = std::mem::take(args)
            .into_iter()
            .map(|a| coerce_or_cast(a, arg))
            .collect::<Result<Vec<_>, _>>()?;
        // gcd and lcm over integers check the result against their width.
        let width = match out {
            PgType::Int4 if name != "scale" && name != "min_scale" => "4",
            PgType::Int8 => "8",
            _ => "",
        };
        Ok((BExpr::Func(format!("numeric_fn:{name}{width}"), bound), out))
    })())
}

/// Evaluates a call bound by [`bind_numeric_function`].
fn eval_numeric_function(name: &str, a: &[Value]) -> Result<Value, SqlError> {
    use crate::numeric as n;
    if a.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let text = |i: usize| format_text(&a[i], PgType::Numeric).unwrap_or_default();
    Ok(match (name, a) {
        ("gcd4" | "lcm4" | "gcd8" | "lcm8", [Value::Int(x), Value::Int(y)]) => {
            let r = n::integer_gcd_lcm(*x, *y, name.starts_with("lcm"))?;
            if name.ends_with('4') {
                fit_integer(r.into(), PgType::Int4)?
            } else {
                Value::Int(r)
            }
        }
        ("gcd" | "lcm", _) => {
            Value::Numeric(n::numeric_gcd_lcm(&text(0), &text(1), name == "lcm")?)
        }
        ("div", _) => Value::Numeric(n::numeric_div_trunc(&text(0), &text(1))?),
        ("factorial", [Value::Int(x)]) => Value::Numeric(n::factorial(*x)?),
        ("scale", _) => n::scale_of(&text(0)).map_or(Value::Null, |s| Value::Int(s as i64)),
        ("min_scale", _) => n::min_scale(&text(0)).map_or(Value::Null, |s| Value::Int(s as i64)),
        ("trim_scale", _) => Value::Numeric(n::trim_scale(&text(0))),
        _ => return Err(SqlError::internal(format!("numeric function {name}"))),
    })
}

/// PostgreSQL 15's signatures of the string functions, one letter per argument: `T` text (any
/// string type converts to it), `B` bytea, `I` integer. A call none of them fits is 42883, as
/// PostgreSQL has no implicit cast from a number to text or from bigint to integer.
const STRING_SIGNATURES: &[(&str, &[&str])] = &[
    ("lower", &["T"]),
    ("upper", &["T"]),
    ("length", &["T", "B"]),
    ("char_length", &["T"]),
    ("character_length", &["T"]),
    ("octet_length", &["T", "B"]),
    ("btrim", &["T", "TT", "BB"]),
    ("ltrim", &["T", "TT", "BB"]),
    ("rtrim", &["T", "TT", "BB"]),
    ("replace", &["TTT"]),
    ("split_part", &["TTI"]),
    ("left", &["TI"]),
    ("right", &["TI"]),
    ("repeat", &["TI"]),
    ("strpos", &["TT"]),
    ("substr", &["TI", "TII", "BI", "BII"]),
    ("md5", &["T", "B"]),
    ("quote_ident", &["T"]),
    ("chr", &["I"]),
    ("initcap", &["T"]),
    ("reverse", &["T"]),
    ("translate", &["TTT"]),
    ("ascii", &["T"]),
    ("lpad", &["TI", "TIT"]),
    ("rpad", &["TI", "TIT"]),
    ("to_hex", &["I", "L"]),
];

/// Whether arguments of `types` fit `signature` (see [`STRING_SIGNATURES`]); an untyped
/// literal fits any letter.
fn signature_fits(signature: &str, types: &[PgType]) -> bool {
    signature.len() == types.len()
        && signature.chars().zip(types).all(|(want, t)| match want {
            _ if *t == PgType::Unknown => true,
            'T' => t.is_string(),
            'B' => *t == PgType::Bytea,
            'I' => matches!(t, PgType::Int2 | PgType::Int4),
            'L' => *t == PgType::Int8,
            _ => false,
        })
}

/// PostgreSQL's functional dependency: grouping by a table's whole primary key groups by each
/// of its columns, so they may be used outside aggregates. They are added to `keys` (which
/// changes no group: they are the same within one).
fn keys_with_dependent_columns(keys: &mut Vec<BExpr>, from: &[FromItem]) {
    let mut start = 0;
    let mut dependent = Vec::new();
    for item in from {
        if let Source::Table { table, .. } = &item.source {
            let grouped = |c: usize| keys.contains(&BExpr::Col(start + c));
            if !table.primary_key.is_empty() && table.primary_key.iter().all(|p| grouped(*p)) {
                dependent.extend(
                    (0..table.columns.len())
                        .filter(|c| !grouped(*c))
                        .map(|c| start + c),
                );
            }
        }
        start += item.width;
    }
    keys.extend(dependent.into_iter().map(BExpr::Col));
}

/// Whether a GROUP BY item is PostgreSQL's grouping-set syntax: `ROLLUP (…)`, `CUBE (…)`,
/// `GROUPING SETS (…)` or the empty set `()`.
fn is_grouping_set_syntax(e: &Expr) -> bool {
    matches!(e, Expr::Rollup(_) | Expr::Cube(_) | Expr::GroupingSets(_))
        || matches!(e, Expr::Tuple(t) if t.is_empty())
}

/// `ROLLUP (…)` or `CUBE (…)` inside GROUPING SETS, which sqlparser reads as a function call:
/// its elements (a parenthesised list is one element of several keys) and whether it is a
/// CUBE.
fn nested_rollup(e: &Expr) -> Option<(Vec<Vec<&Expr>>, bool)> {
    let Expr::Function(f) = e else { return None };
    let [name] = f.name.0.as_slice() else {
        return None;
    };
    let name = name.as_ident()?;
    if name.quote_style.is_some() || f.over.is_some() || f.filter.is_some() {
        return None;
    }
    let cube = match name.value.to_ascii_lowercase().as_str() {
        "rollup" => false,
        "cube" => true,
        _ => return None,
    };
    let ast::FunctionArguments::List(l) = &f.args else {
        return None;
    };
    let mut elements = Vec::new();
    for a in &l.args {
        let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) = a else {
            return None;
        };
        elements.push(match x {
            Expr::Tuple(t) => t.iter().collect(),
            Expr::Nested(inner) => vec![&**inner],
            other => vec![other],
        });
    }
    Some((elements, cube))
}

/// PostgreSQL's expansion of a GROUP BY with grouping sets: each item's sets (a plain key
/// is one set of itself; `ROLLUP (e1, …, en)` the sets of its first n, n-1, …, 0 elements;
/// `CUBE` every subset, counting up in binary with the first element lowest; `GROUPING SETS`
/// its members' sets in turn), then the product of the items' sets in order. Returns every
/// key expression as written (one per occurrence) and the sets as indices into them.
fn expand_grouping_sets(items: &[Expr]) -> Result<(Vec<&Expr>, Vec<Vec<usize>>), SqlError> {
    /// An element's keys, added to `exprs`.
    fn element<'a>(exprs: &mut Vec<&'a Expr>, es: &[&'a Expr]) -> Vec<usize> {
        es.iter()
            .map(|e| {
                exprs.push(e);
                exprs.len() - 1
            })
            .collect()
    }
    fn as_refs(v: &[Vec<Expr>]) -> Vec<Vec<&Expr>> {
        v.iter().map(|x| x.iter().collect()).collect()
    }
    let mut exprs: Vec<&Expr> = Vec::new();
    let rollup = |elements: Vec<Vec<usize>>| -> Vec<Vec<usize>> {
        (0..=elements.len())
            .rev()
            .map(|n| elements.iter().take(n).flatten().copied().collect())
            .collect()
    };
    let cube = |elements: Vec<Vec<usize>>| -> Result<Vec<Vec<usize>>, SqlError> {
        if elements.len() > MAX_CUBE {
            return Err(SqlError::GroupingLimit {
                code: "54011",
                message: format!("CUBE is limited to {MAX_CUBE} elements"),
            });
        }
        Ok((0..1usize << elements.len())
            .map(|bits| {
                elements
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| bits & (1 << i) != 0)
                    .flat_map(|(_, e)| e.iter().copied())
                    .collect()
            })
            .collect())
    };
    // `ROLLUP (())`: PostgreSQL's grammar has no empty element there.
    let empty_element = |elements: &Vec<Vec<Expr>>| elements.iter().any(Vec::is_empty);
    if items.iter().any(|i| match i {
        Expr::Rollup(e) | Expr::Cube(e) => empty_element(e),
        _ => false,
    }) {
        return Err(SqlError::Syntax {
            message: "syntax error at or near \")\"".into(),
        });
    }
    let mut per_item: Vec<Vec<Vec<usize>>> = Vec::with_capacity(items.len());
    for item in items {
        per_item.push(match item {
            Expr::Rollup(elements) => rollup(
                as_refs(elements)
                    .iter()
                    .map(|e| element(&mut exprs, e))
                    .collect(),
            ),
            Expr::Cube(elements) => cube(
                as_refs(elements)
                    .iter()
                    .map(|e| element(&mut exprs, e))
                    .collect(),
            )?,
            Expr::GroupingSets(members) => {
                let mut sets = Vec::new();
                for m in members {
                    match m.as_slice() {
                        [one] if nested_rollup(one).is_some() => {
                            if let Some((elements, is_cube)) = nested_rollup(one) {
                                let elements =
                                    elements.iter().map(|e| element(&mut exprs, e)).collect();
                                sets.extend(if is_cube {
                                    cube(elements)?
                                } else {
                                    rollup(elements)
                                });
                            }
                        }
                        keys => sets.push(element(&mut exprs, &keys.iter().collect::<Vec<_>>())),
                    }
                }
                sets
            }
            Expr::Tuple(t) if t.is_empty() => vec![Vec::new()],
            other => vec![element(&mut exprs, &[other])],
        });
    }
    let total = per_item
        .iter()
        .try_fold(1usize, |n, sets| n.checked_mul(sets.len()))
        .filter(|n| *n <= MAX_GROUPING_SETS);
    if total.is_none() {
        return Err(SqlError::GroupingLimit {
            code: "54001",
            message: format!("too many grouping sets present (maximum {MAX_GROUPING_SETS})"),
        });
    }
    let mut product: Vec<Vec<usize>> = vec![Vec::new()];
    for sets in per_item {
        product = product
            .iter()
            .flat_map(|q| {
                sets.iter()
                    .map(move |r| q.iter().chain(r.iter()).copied().collect())
            })
            .collect();
    }
    Ok((exprs, product))
}

/// Each key of `keys` once, `sets` pointing at the one kept (a key may be written in
/// several sets). Keys are the same when they are the same select item (`items`, kept in
/// step), or are none and equal.
fn distinct_grouping_keys(
    keys: &mut Vec<BExpr>,
    sets: &mut [Vec<usize>],
    items: &mut Vec<Option<usize>>,
) {
    let mut kept: Vec<(BExpr, Option<usize>)> = Vec::with_capacity(keys.len());
    let mut place = Vec::with_capacity(keys.len());
    for (k, item) in keys.drain(..).zip(items.iter().copied()) {
        let same = |(x, i): &(BExpr, Option<usize>)| match (item, i) {
            (Some(a), Some(b)) => a == *b,
            (None, None) => *x == k,
            _ => false,
        };
        match kept.iter().position(same) {
            Some(i) => place.push(i),
            None => {
                place.push(kept.len());
                kept.push((k, item));
            }
        }
    }
    let (kept, kept_items): (Vec<BExpr>, Vec<Option<usize>>) = kept.into_iter().unzip();
    *items = kept_items;
    for s in sets.iter_mut() {
        for i in s.iter_mut() {
            *i = place.get(*i).copied().unwrap_or(*i);
        }
    }
    *keys = kept;
}

/// Whether `e` holds a `GROUPING(…)` call not yet resolved against its select's keys.
fn contains_grouping_call(e: &BExpr) -> bool {
    contains_placeholder(e, &|x| matches!(x, BExpr::Func(n, _) if n == GROUPING_CALL))
}

impl GroupingSets {
    /// `e` reading the select's keys from a group's row: an expression equal to key `i`
    /// reads column `base + i`; `GROUPING(…)` reads its arguments' bits.
    fn read_keys(&self, e: BExpr, keys: &[BExpr]) -> BExpr {
        if let BExpr::Func(name, args) = &e {
            if name == GROUPING_CALL {
                let bits = args
                    .iter()
                    .skip(1)
                    .map(|a| match keys.iter().position(|k| k == a) {
                        Some(i) => BExpr::Col(self.base + keys.len() + i),
                        None => BExpr::Const(Value::Null),
                    })
                    .collect();
                return BExpr::Func(GROUPING_BITS.into(), bits);
            }
        }
        if let Some(i) = keys.iter().position(|k| *k == e) {
            return BExpr::Col(self.base + i);
        }
        map_children(e, &mut |c| self.read_keys(c, keys))
    }
}

/// The expressions of a select's GROUP BY (none for `GROUP BY ALL`).
fn group_by_exprs(sel: &ast::Select) -> &[Expr] {
    match &sel.group_by {
        ast::GroupByExpr::Expressions(exprs, _) => exprs,
        ast::GroupByExpr::All(_) => &[],
    }
}

/// The argument of `IS [NOT] TRUE/FALSE`, `AND`, `OR` or `NOT`: boolean, or an untyped
/// literal read as one (PostgreSQL's 42804 for anything else).
fn boolean_test_argument((e, t): (BExpr, PgType), test: &str) -> Result<BExpr, SqlError> {
    match t {
        PgType::Bool | PgType::Unknown => coerce_expr(e, PgType::Bool),
        other => Err(SqlError::DatatypeMismatch {
            message: format!(
                "argument of {test} must be type boolean, not type {}",
                other.sql_name()
            ),
            hint: None,
        }),
    }
}

/// The integer bitwise operators `&`, `|`, `#` (both sides one integer type, the wider of
/// the two) and `<<`, `>>` (the left side's type, shifted by an integer), as PostgreSQL's
/// `int2and` … `int8shr` compute them: a shift count is taken modulo the width it is done in
/// (32 bits for smallint and integer, 64 for bigint), as C on x86 does.
fn bitwise_op(
    l: BExpr,
    lt: PgType,
    op: &ast::BinaryOperator,
    r: BExpr,
    rt: PgType,
) -> Result<(BExpr, PgType), SqlError> {
    use ast::BinaryOperator as O;
    let operands = || format!("{} {op} {}", lt.sql_name(), rt.sql_name());
    if lt == PgType::Unknown && rt == PgType::Unknown {
        return Err(ambiguous(format!("operator is not unique: {}", operands())));
    }
    let int = |t: PgType| matches!(t, PgType::Int2 | PgType::Int4 | PgType::Int8);
    let shift = matches!(op, O::PGBitwiseShiftLeft | O::PGBitwiseShiftRight);
    let (ty, count_ty) = if shift {
        if lt == PgType::Unknown && rt == PgType::Int2 {
            // int2shl, int4shl and int8shl all take a smallint count.
            return Err(ambiguous(format!("operator is not unique: {}", operands())));
        }
        let ty = if lt == PgType::Unknown {
            PgType::Int4
        } else {
            lt
        };
        if !int(ty) || !matches!(rt, PgType::Int2 | PgType::Int4 | PgType::Unknown) {
            return Err(no_such_operator(operands()));
        }
        (ty, PgType::Int4)
    } else {
        let ty = match (lt, rt) {
            (PgType::Unknown, t) | (t, PgType::Unknown) => t,
            (PgType::Int8, _) | (_, PgType::Int8) => PgType::Int8,
            (PgType::Int4, _) | (_, PgType::Int4) => PgType::Int4,
            (t, _) => t,
        };
        if !int(lt) && lt != PgType::Unknown || !int(rt) && rt != PgType::Unknown {
            return Err(no_such_operator(operands()));
        }
        (ty, ty)
    };
    let name = match op {
        O::BitwiseAnd => "bit_and",
        O::BitwiseOr => "bit_or",
        O::PGBitwiseXor => "bit_xor",
        O::PGBitwiseShiftLeft => "bit_shl",
        _ => "bit_shr",
    };
    let width = match ty {
        PgType::Int8 => 64,
        PgType::Int4 => 32,
        _ => 16,
    };
    let args = vec![
        coerce_or_cast(l, ty)?,
        coerce_or_cast(r, count_ty)?,
        BExpr::Const(Value::Int(width)),
    ];
    Ok((BExpr::Func(name.into(), args), ty))
}

/// The typmod PostgreSQL reports for an expression's result (its `exprTypmod`): an explicit
/// cast's (`::varchar(3)`, `::numeric(5,2)`), a column's, a scalar subquery's column's; an
/// array constructor's, COALESCE's, GREATEST's, LEAST's or CASE's whose parts all have the
/// same one; -1 (none) for anything else.
fn expr_typmod(b: &BExpr, scope: &Scope) -> i32 {
    let same = |parts: &mut dyn Iterator<Item = &BExpr>| {
        let mut mods = parts.map(|p| expr_typmod(p, scope));
        match mods.next() {
            Some(first) if mods.all(|m| m == first) => first,
            _ => -1,
        }
    };
    match b {
        BExpr::Func(name, args) if name == "apply_typmod" => match args.get(1) {
            Some(BExpr::Const(Value::Int(m))) => i32::try_from(*m).unwrap_or(-1),
            _ => -1,
        },
        BExpr::Col(i) => scope.cols.get(*i).map_or(-1, |c| c.typmod),
        BExpr::Scalar(q) => q.columns.first().map_or(-1, |c| c.typmod),
        BExpr::Func(name, items)
            if matches!(name.as_str(), "array" | "coalesce" | "greatest" | "least") =>
        {
            same(&mut items.iter())
        }
        // Without an ELSE the result may be a NULL of no typmod.
        BExpr::Case(_, whens, Some(default)) => {
            same(&mut whens.iter().map(|(_, r)| r).chain([&**default]))
        }
        _ => -1,
    }
}

/// A LIMIT, OFFSET or FETCH count as the bigint PostgreSQL makes of it: a numeric or double
/// precision one is rounded (`LIMIT 2.5` is 3), as its cast to bigint rounds.
fn limit_count(e: BExpr) -> Result<BExpr, SqlError> {
    match e {
        BExpr::Const(Value::Numeric(_) | Value::Float(_)) => coerce_or_cast(e, PgType::Int8),
        e => coerce_expr(e, PgType::Int8),
    }
}

/// PostgreSQL's 42883 for an operator (`text = bigint`, `- text`) no signature matches;
/// `operands` as PostgreSQL writes them: `a + b`, or `- a` for a prefix operator (whose hint
/// speaks of one argument).
fn no_such_operator(operands: String) -> SqlError {
    let hint = if operands.starts_with(['-', '~']) {
        "No operator matches the given name and argument type. You might need to add an explicit type cast."
    } else {
        "No operator matches the given name and argument types. You might need to add explicit type casts."
    };
    SqlError::UndefinedFunction {
        message: format!("operator does not exist: {operands}"),
        hint: Some(hint.into()),
    }
}

impl AggFunc {
    /// A variance or standard deviation.
    pub fn is_moment(self) -> bool {
        matches!(
            self,
            AggFunc::VarSamp | AggFunc::VarPop | AggFunc::StddevSamp | AggFunc::StddevPop
        )
    }
}

/// The aggregate a function name calls (`count(*)` when `star`), if it is one.
fn aggregate_func(name: &str, star: bool) -> Option<AggFunc> {
    Some(match name {
        "count" if star => AggFunc::CountStar,
        "count" => AggFunc::Count,
        "sum" => AggFunc::Sum,
        "min" => AggFunc::Min,
        "max" => AggFunc::Max,
        "avg" => AggFunc::Avg,
        "string_agg" => AggFunc::StringAgg,
        "bool_and" | "every" => AggFunc::BoolAnd,
        "bool_or" => AggFunc::BoolOr,
        "array_agg" => AggFunc::ArrayAgg,
        "variance" | "var_samp" => AggFunc::VarSamp,
        "var_pop" => AggFunc::VarPop,
        "stddev" | "stddev_samp" => AggFunc::StddevSamp,
        "stddev_pop" => AggFunc::StddevPop,
        "json_agg" => AggFunc::JsonAgg,
        "json_object_agg" => AggFunc::JsonObjectAgg,
        _ => return None,
    })
}

/// Argument `i` (of type `ty`) of `json_agg` / `json_object_agg` as the aggregate takes it:
/// as `to_json` writes it (an untyped literal as text); only a scalar may be a key.
fn json_aggregate_input(func: AggFunc, i: usize, b: BExpr, ty: PgType) -> Result<BExpr, SqlError> {
    let key = func == AggFunc::JsonObjectAgg && i == 0;
    // json_agg(anyelement) has no type for an untyped literal (json_object_agg's "any" does).
    if func == AggFunc::JsonAgg && ty == PgType::Unknown {
        return Err(SqlError::DatatypeMismatch {
            message: "could not determine polymorphic type because input has type unknown".into(),
            hint: None,
        });
    }
    if key && (ty == PgType::Json || ty.is_array() || matches!(ty, PgType::Record(_))) {
        return Err(SqlError::InvalidParameter {
            message: "key value must be scalar, not array, composite, or json".into(),
        });
    }
    let (b, ty) = match ty {
        PgType::Unknown => (coerce_expr(b, PgType::Text)?, PgType::Text),
        t => (b, t),
    };
    match bind_json_function("to_json", &mut vec![b], &[ty]) {
        Some(r) => r.map(|(b, _)| b),
        None => Err(SqlError::internal("to_json is not bound")),
    }
}

/// `array_agg`'s input over a type RockLake has no array of: its text, for the text[] the
/// aggregate then returns.
fn array_agg_input(arg: &mut BExpr, func: AggFunc, ty: PgType) -> Result<(), SqlError> {
    if func == AggFunc::ArrayAgg && ty.is_array() {
        // PostgreSQL builds a two-dimensional array; RockLake's have one.
        return Err(SqlError::feature("multidimensional arrays"));
    }
    if func == AggFunc::ArrayAgg && ty != PgType::Unknown && ty.array_of().is_none() {
        let e = std::mem::replace(arg, BExpr::Const(Value::Null));
        *arg = cast_from(e, ty, PgType::Text)?;
    }
    Ok(())
}

/// The result type of aggregate `func` (called `name`) over an argument of type `ty`, as
/// PostgreSQL's aggregate signatures give it.
/// PostgreSQL 15's signatures of `string_agg` ((text, text), (bytea, bytea)) and `bool_and` /
/// `bool_or` (boolean): 42883 for other arguments. (`sum`/`avg`/`min`/`max` are checked by
/// [`aggregate_type`].)
fn aggregate_arguments_exist(func: AggFunc, types: &[PgType], name: &str) -> Result<(), SqlError> {
    let fits = |ok: &dyn Fn(PgType) -> bool| types.iter().all(|t| *t == PgType::Unknown || ok(*t));
    let exists = match func {
        AggFunc::StringAgg => fits(&|t| t.is_string()) || fits(&|t| t == PgType::Bytea),
        AggFunc::BoolAnd | AggFunc::BoolOr => fits(&|t| t == PgType::Bool),
        AggFunc::JsonAgg => types.len() == 1,
        AggFunc::JsonObjectAgg => types.len() == 2,
        _ => true,
    };
    if exists {
        Ok(())
    } else {
        Err(no_such_function(name, types))
    }
}

fn aggregate_type(func: AggFunc, ty: PgType, name: &str) -> Result<PgType, SqlError> {
    if ty == PgType::Unknown && matches!(func, AggFunc::Sum | AggFunc::Avg) {
        return Err(ambiguous(format!("function {name}(unknown) is not unique")));
    }
    Ok(match func {
        AggFunc::CountStar | AggFunc::Count => PgType::Int8,
        // PostgreSQL 15's signatures (money aside).
        AggFunc::Sum => match ty {
            PgType::Int2 | PgType::Int4 => PgType::Int8,
            PgType::Int8 | PgType::Numeric => PgType::Numeric,
            PgType::Float4 | PgType::Float8 | PgType::Interval => ty,
            other => return Err(no_such_function(name, &[other])),
        },
        AggFunc::Avg => match ty {
            PgType::Int2 | PgType::Int4 | PgType::Int8 | PgType::Numeric => PgType::Numeric,
            PgType::Float4 | PgType::Float8 => PgType::Float8,
            PgType::Interval => PgType::Interval,
            other => return Err(no_such_function(name, &[other])),
        },
        AggFunc::VarSamp | AggFunc::VarPop | AggFunc::StddevSamp | AggFunc::StddevPop => match ty {
            PgType::Int2 | PgType::Int4 | PgType::Int8 | PgType::Numeric => PgType::Numeric,
            PgType::Float4 | PgType::Float8 => PgType::Float8,
            other => return Err(no_such_function(name, &[other])),
        },
        // varchar and name have no min/max of their own: PostgreSQL uses text's.
        AggFunc::Min | AggFunc::Max => match ty {
            PgType::Unknown | PgType::Varchar | PgType::Name => PgType::Text,
            // PostgreSQL 15 has no min/max for these.
            PgType::Bytea
            | PgType::Bool
            | PgType::Uuid
            | PgType::Xid
            | PgType::Json
            | PgType::Record(_) => return Err(no_such_function(name, &[ty])),
            other => other,
        },
        AggFunc::StringAgg if ty == PgType::Bytea => PgType::Bytea,
        AggFunc::StringAgg => PgType::Text,
        AggFunc::BoolAnd | AggFunc::BoolOr => PgType::Bool,
        AggFunc::ArrayAgg => match ty {
            PgType::Unknown => PgType::TextArray,
            t => array_type_of(t)?,
        },
        AggFunc::JsonAgg | AggFunc::JsonObjectAgg => PgType::Json,
    })
}

/// PostgreSQL's rule for `DISTINCT ON`: the ORDER BY keys up to the last DISTINCT ON
/// expression must all be DISTINCT ON expressions (so that the first row of each key is the
/// first in the query's order).
fn distinct_on_matches_order(
    sel: &BSelect,
    keys: &[usize],
    order: &[OrderKey],
) -> Result<(), SqlError> {
    let on: Vec<&BExpr> = keys.iter().filter_map(|&c| sel.projection.get(c)).collect();
    let mut seen = vec![false; on.len()];
    for k in order {
        if seen.iter().all(|s| *s) {
            break;
        }
        let e = match (&k.expr, k.on_output) {
            (BExpr::Col(i), true) => sel.projection.get(*i),
            (e, false) => Some(e),
            _ => None,
        };
        let mut hit = false;
        for (p, x) in on.iter().enumerate() {
            if Some(*x) == e {
                seen[p] = true;
                hit = true;
            }
        }
        if !hit {
            return Err(SqlError::InvalidColumnReference {
                message: "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"
                    .into(),
            });
        }
    }
    Ok(())
}

/// The output column of this name, if exactly one has it (ORDER BY and DISTINCT ON read a
/// bare name as an output column first).
/// The output column a bare name in ORDER BY or DISTINCT ON means (PostgreSQL's SQL-92 rule:
/// output names before input columns). Several columns of that name are one only when they
/// are the same expression (`exprs`, the select list; none for a set operation's columns).
fn output_column_named(
    columns: &[ColMeta],
    exprs: Option<&[BExpr]>,
    name: &str,
    clause: &'static str,
) -> Result<Option<usize>, SqlError> {
    let mut hits = columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.name == name)
        .map(|(i, _)| i);
    let Some(first) = hits.next() else {
        return Ok(None);
    };
    let same = |i: usize| match exprs {
        Some(e) => e.get(i).is_some() && e.get(i) == e.get(first),
        None => false,
    };
    if hits.any(|i| !same(i)) {
        return Err(SqlError::AmbiguousOutputColumn {
            clause,
            name: name.into(),
        });
    }
    Ok(Some(first))
}

/// PostgreSQL's errors for a set-returning call of a select list inside an expression that
/// evaluates its operands conditionally (CASE, COALESCE) or as a condition (NOT, AND, OR).
fn srf_placement(e: &BExpr) -> Result<(), SqlError> {
    let srf = |x: &BExpr| contains_placeholder(x, &|c| matches!(c, BExpr::Srf(_)));
    if !srf(e) {
        return Ok(());
    }
    let mut err = None;
    visit_exprs(e, &mut |x| {
        let misplaced = |within: &str| SqlError::SetReturningMisplaced {
            message: format!("set-returning functions are not allowed in {within}"),
            hint: true,
        };
        let condition = |op: &str| SqlError::DatatypeMismatch {
            message: format!("argument of {op} must not return a set"),
            hint: None,
        };
        let found = match x {
            BExpr::Case(..) if srf(x) => Some(misplaced("CASE")),
            BExpr::Func(name, args) if name == "coalesce" && args.iter().any(srf) => {
                Some(misplaced("COALESCE"))
            }
            BExpr::Not(a) if srf(a) => Some(condition("NOT")),
            BExpr::And(a, b) if srf(a) || srf(b) => Some(condition("AND")),
            BExpr::Or(a, b) if srf(a) || srf(b) => Some(condition("OR")),
            _ => None,
        };
        if err.is_none() {
            err = found;
        }
    });
    err.map_or(Ok(()), Err)
}

fn contains_window(e: &BExpr) -> bool {
    contains_placeholder(e, &|x| matches!(x, BExpr::Win(_)))
}

/// Whether `e` calls a window function itself (not in a subquery, whose calls are its own).
fn calls_window(e: &Expr) -> bool {
    struct Calls {
        depth: usize,
    }
    impl ast::Visitor for Calls {
        type Break = ();
        fn pre_visit_query(&mut self, _: &ast::Query) -> std::ops::ControlFlow<()> {
            self.depth += 1;
            std::ops::ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &ast::Query) -> std::ops::ControlFlow<()> {
            self.depth -= 1;
            std::ops::ControlFlow::Continue(())
        }
        fn pre_visit_expr(&mut self, e: &Expr) -> std::ops::ControlFlow<()> {
            match e {
                Expr::Function(f) if self.depth == 0 && f.over.is_some() => {
                    std::ops::ControlFlow::Break(())
                }
                _ => std::ops::ControlFlow::Continue(()),
            }
        }
    }
    ast::Visit::visit(e, &mut Calls { depth: 0 }).is_break()
}

/// Whether `e` holds a call placeholder (`BExpr::Win`, `BExpr::Srf`) that `is_call` picks.
fn contains_placeholder(e: &BExpr, is_call: &dyn Fn(&BExpr) -> bool) -> bool {
    let mut found = false;
    visit_exprs(e, &mut |x| found |= is_call(x));
    found
}

/// `e` with each direct child replaced by `f(child)` (subqueries as they are).
fn map_children(e: BExpr, f: &mut dyn FnMut(BExpr) -> BExpr) -> BExpr {
    let mut m = |x: Box<BExpr>| Box::new(f(*x));
    match e {
        BExpr::Bin(op, a, b) => {
            let a = m(a);
            BExpr::Bin(op, a, m(b))
        }
        BExpr::And(a, b) => {
            let a = m(a);
            BExpr::And(a, m(b))
        }
        BExpr::Or(a, b) => {
            let a = m(a);
            BExpr::Or(a, m(b))
        }
        BExpr::IsDistinct(a, b, not) => {
            let a = m(a);
            BExpr::IsDistinct(a, m(b), not)
        }
        BExpr::Like(a, b, ci, not) => {
            let a = m(a);
            BExpr::Like(a, m(b), ci, not)
        }
        BExpr::AnyArray(op, a, b, all, t) => {
            let a = m(a);
            BExpr::AnyArray(op, a, m(b), all, t)
        }
        BExpr::Not(x) => BExpr::Not(m(x)),
        BExpr::Neg(x) => BExpr::Neg(m(x)),
        BExpr::IsNull(x, not) => BExpr::IsNull(m(x), not),
        BExpr::Cast(x, t) => BExpr::Cast(m(x), t),
        BExpr::InSub(x, q, op, all) => BExpr::InSub(m(x), q, op, all),
        BExpr::InList(x, l, not) => {
            let x = m(x);
            BExpr::InList(x, l.into_iter().map(&mut *f).collect(), not)
        }
        BExpr::Func(name, args) => BExpr::Func(name, args.into_iter().map(&mut *f).collect()),
        BExpr::Case(a, whens, el) => {
            let a = a.map(&mut m);
            let whens = whens.into_iter().map(|(w, t)| (f(w), f(t))).collect();
            BExpr::Case(a, whens, el.map(|x| Box::new(f(*x))))
        }
        other => other,
    }
}

/// Rewrites a select list with window calls ([`Windowed`]): the windows' inputs and the
/// window-free parts of the items that contain calls become extra projected columns, those
/// items placeholders computed afterwards.
fn rewrite_windows(
    projection: &mut Vec<BExpr>,
    windows: Vec<BoundWindow>,
) -> Result<Windowed, SqlError> {
    let visible = projection.len();
    let mut extra = ExtraColumns::new(visible);
    let mut specs = Vec::new();
    for w in windows {
        let args = w.args.into_iter().map(|a| extra.column(a)).collect();
        let partition = w.partition.into_iter().map(|p| extra.column(p)).collect();
        let order = w
            .order
            .into_iter()
            .map(|(k, desc, nf)| (extra.column(k), desc, nf))
            .collect();
        let filter = w.filter.map(|f| extra.column(f));
        specs.push(crate::window::WindowSpec {
            func: w.func,
            ty: w.ty,
            args,
            partition,
            order,
            frame: w.frame,
            filter,
        });
    }
    let post = split_call_items(projection, extra, &|e| match e {
        BExpr::Win(i) => Some(*i),
        _ => None,
    })?;
    Ok(Windowed {
        specs,
        post,
        visible,
    })
}

/// Rewrites a select list with set-returning calls ([`ProjectSet`]), as [`rewrite_windows`]
/// does for window calls.
fn rewrite_srfs(projection: &mut Vec<BExpr>, srfs: Vec<BoundSrf>) -> Result<ProjectSet, SqlError> {
    let visible = projection.len();
    let mut extra = ExtraColumns::new(visible);
    let calls = srfs
        .into_iter()
        .map(|c| {
            (
                c.name,
                c.args.into_iter().map(|a| extra.column(a)).collect(),
            )
        })
        .collect();
    let post = split_call_items(projection, extra, &|e| match e {
        BExpr::Srf(i) => Some(*i),
        _ => None,
    })?;
    Ok(ProjectSet {
        calls,
        post,
        visible,
    })
}

/// Expressions projected after a select list's `visible` columns, each once.
struct ExtraColumns {
    visible: usize,
    exprs: Vec<BExpr>,
}

impl ExtraColumns {
    fn new(visible: usize) -> Self {
        ExtraColumns {
            visible,
            exprs: Vec::new(),
        }
    }

    /// The projected column that holds `e`.
    fn column(&mut self, e: BExpr) -> usize {
        if let Some(i) = self.exprs.iter().position(|x| *x == e) {
            return self.visible + i;
        }
        self.exprs.push(e);
        self.visible + self.exprs.len() - 1
    }
}

/// The `post` expressions of a select list's items that hold calls (the placeholders
/// `call_index` numbers): what such an item reads of the row becomes projected columns
/// (appended to `projection` with `extra`'s); its operators stay in `post`, so a CASE
/// evaluates only the branch it takes, as it would have. A subquery is read whole (with the
/// row it belongs to). Call `n` becomes the column after the projected row's `n`-th.
fn split_call_items(
    projection: &mut Vec<BExpr>,
    mut extra: ExtraColumns,
    call_index: &dyn Fn(&BExpr) -> Option<usize>,
) -> Result<Vec<(usize, BExpr)>, SqlError> {
    let is_call = |e: &BExpr| call_index(e).is_some();
    let contains_call = |e: &BExpr| contains_placeholder(e, &is_call);
    fn split(
        e: BExpr,
        extra: &mut ExtraColumns,
        is_call: &dyn Fn(&BExpr) -> bool,
        contains_call: &dyn Fn(&BExpr) -> bool,
        err: &mut Option<SqlError>,
    ) -> BExpr {
        match e {
            e if is_call(&e) => e,
            e @ BExpr::Const(_) => e,
            // A placeholder of the other kind (a window call in an item with set-returning
            // calls) is computed before: a column too.
            e @ (BExpr::Col(_)
            | BExpr::Outer(..)
            | BExpr::Agg(_)
            | BExpr::Param(..)
            | BExpr::Scalar(_)
            | BExpr::Exists(..)
            | BExpr::ArraySub(_)
            | BExpr::Win(_)
            | BExpr::Srf(_)) => BExpr::Col(extra.column(e)),
            BExpr::InSub(x, q, op, all) if !contains_call(&x) => {
                BExpr::Col(extra.column(BExpr::InSub(x, q, op, all)))
            }
            BExpr::InSub(_, q, ..) if q.correlated() => {
                err.get_or_insert(SqlError::feature(
                    "a window or set-returning call compared with a correlated subquery",
                ));
                BExpr::Const(Value::Null)
            }
            other => map_children(other, &mut |c| split(c, extra, is_call, contains_call, err)),
        }
    }
    let mut err = None;
    let mut post = Vec::new();
    for (j, item) in projection.iter_mut().enumerate() {
        if contains_call(item) {
            let e = std::mem::replace(item, BExpr::Const(Value::Null));
            post.push((j, split(e, &mut extra, &is_call, &contains_call, &mut err)));
        }
    }
    if let Some(e) = err {
        return Err(e);
    }
    // Call `i`'s value follows the projected row.
    let base = extra.visible + extra.exprs.len();
    fn place(e: BExpr, base: usize, call_index: &dyn Fn(&BExpr) -> Option<usize>) -> BExpr {
        match call_index(&e) {
            Some(i) => BExpr::Col(base + i),
            None => map_children(e, &mut |c| place(c, base, call_index)),
        }
    }
    let post = post
        .into_iter()
        .map(|(j, e)| (j, place(e, base, call_index)))
        .collect();
    projection.extend(extra.exprs);
    Ok(post)
}

/// A frame offset written as an integer literal (`3 PRECEDING`, `-1 FOLLOWING`).
fn literal_offset(e: &Expr) -> Option<i64> {
    match e {
        Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => literal_offset(expr).map(|n| -n),
        Expr::Nested(x) => literal_offset(x),
        _ => None,
    }
}

/// A strict operator with a NULL constant operand is NULL without evaluating the other, as
/// PostgreSQL's planner simplifies it (an error the other operand would raise never comes).
fn strict_null(bin: BExpr) -> BExpr {
    match &bin {
        BExpr::Bin(_, l, r)
            if matches!(**l, BExpr::Const(Value::Null))
                || matches!(**r, BExpr::Const(Value::Null)) =>
        {
            BExpr::Const(Value::Null)
        }
        _ => bin,
    }
}

fn is_datetime(t: PgType) -> bool {
    matches!(
        t,
        PgType::Date | PgType::Timestamp | PgType::Timestamptz | PgType::Interval | PgType::Time
    )
}

/// An operand of type `from` where the expression's resolved type is `to`: untyped literals
/// take `to` ([`coerce_expr`]), and a date facing a timestamp type is converted to it (the
/// one implicit conversion whose values differ in representation).
/// [`coerce_to`] for a value that is output as the resolved type (a CASE or COALESCE result,
/// lag's default): an integer or numeric widened to `numeric` or a float is converted, so
/// that equal results are equal values (`5` and `5.0` in one DISTINCT or GROUP BY).
fn coerce_result(e: BExpr, from: PgType, to: PgType) -> Result<BExpr, SqlError> {
    let widened = from != to
        && from.is_numeric_family()
        && matches!(to, PgType::Numeric | PgType::Float4 | PgType::Float8);
    match e {
        e @ (BExpr::Const(_) | BExpr::Param(..)) => coerce_to(e, from, to),
        e if widened => Ok(BExpr::Cast(Box::new(e), to)),
        e => coerce_to(e, from, to),
    }
}

fn coerce_to(e: BExpr, from: PgType, to: PgType) -> Result<BExpr, SqlError> {
    if let Some(trimmed) = char_to_text(&e, from, to) {
        return Ok(trimmed);
    }
    if through_zone(from, to) {
        zone_convert(e, from, to)
    } else if from == PgType::Date && to == PgType::Timestamp {
        coerce_or_cast(e, to)
    } else {
        coerce_expr(e, to)
    }
}

/// The type operands of types `types` compare as, given their common type `t`: `char(n)`
/// facing text (or name) compares as text (PostgreSQL resolves `bpchar = text` to text's
/// operator, the padding cast away), facing varchar as `char(n)` (`bpchar = varchar` is
/// bpchar's operator, varchar converted to it).
fn comparison_type(t: PgType, types: &[PgType]) -> PgType {
    if !t.is_string() || !types.contains(&PgType::Bpchar) {
        return t;
    }
    if types
        .iter()
        .any(|x| matches!(x, PgType::Text | PgType::Name))
    {
        PgType::Text
    } else {
        PgType::Bpchar
    }
}

/// An operand of a comparison of type `t` ([`comparison_type`]): converted to it, and as
/// `char(n)` without its padding (PostgreSQL's `bpchar` operators ignore trailing spaces).
fn compared(e: BExpr, from: PgType, t: PgType) -> Result<BExpr, SqlError> {
    let e = coerce_to(e, from, t)?;
    Ok(match e {
        BExpr::Const(Value::Text(s)) if t == PgType::Bpchar => {
            BExpr::Const(Value::text(s.trim_end_matches(' ')))
        }
        e if t == PgType::Bpchar => BExpr::Func("bpchar_text".into(), vec![e]),
        e => e,
    })
}

/// `char(n)` to text, varchar or name: PostgreSQL's `rtrim` of the padding (so `'ab'::char(3)`
/// equals `'ab'::text`).
fn char_to_text(e: &BExpr, from: PgType, to: PgType) -> Option<BExpr> {
    drops_char_padding(from, to).then(|| BExpr::Func("bpchar_text".into(), vec![e.clone()]))
}

/// Whether converting `from` to `to` casts `char(n)`'s padding away (into a text type).
fn drops_char_padding(from: PgType, to: PgType) -> bool {
    from == PgType::Bpchar && matches!(to, PgType::Text | PgType::Varchar | PgType::Name)
}

/// An expression of type `from` stored into a column of type `to` (INSERT, UPDATE SET, a
/// default): PostgreSQL's assignment conversion, through the session's zone between the
/// timestamp types and date.
pub fn assignment(e: BExpr, from: PgType, to: PgType) -> Result<BExpr, SqlError> {
    if let Some(trimmed) = char_to_text(&e, from, to) {
        return Ok(trimmed);
    }
    if through_zone(from, to) {
        zone_convert(e, from, to)
    } else {
        coerce_expr(e, to)
    }
}

/// [`assignment`] of a computed value (a row of `INSERT … SELECT`).
pub fn assign_value(v: Value, from: PgType, to: PgType) -> Result<Value, SqlError> {
    if let (Value::Text(s), true) = (&v, drops_char_padding(from, to)) {
        // char(n) into a text type: without its padding.
        return Ok(Value::text(s.trim_end_matches(' ')));
    }
    if !through_zone(from, to) {
        return Ok(v);
    }
    match zone_convert(BExpr::Const(v), from, to)? {
        BExpr::Const(v) => Ok(v),
        _ => Err(SqlError::internal("zone conversion of a constant")),
    }
}

/// Whether converting `from` to `to` reads the session's time zone: between a timestamptz
/// and a local type (timestamp, date, time).
fn through_zone(from: PgType, to: PgType) -> bool {
    use PgType::{Date, Time, Timestamp, Timestamptz};
    matches!(
        (from, to),
        (Timestamp | Date, Timestamptz) | (Timestamptz, Timestamp | Date | Time)
    )
}

/// A conversion [`through_zone`]: a timestamptz is UTC, the others local time in the
/// session's zone (`timestamp2timestamptz`, `timestamptz_timestamp`, `timestamptz_date`, …).
/// Constants convert now.
fn zone_convert(e: BExpr, from: PgType, to: PgType) -> Result<BExpr, SqlError> {
    let local = if from == PgType::Date {
        coerce_or_cast(e, PgType::Timestamp)?
    } else {
        e
    };
    let func = if to == PgType::Timestamptz {
        "timestamptz_from_local"
    } else {
        "timestamptz_to_local"
    };
    let converted = match local {
        BExpr::Const(v) => BExpr::Const(eval_zone_conversion(func, &v)),
        other => BExpr::Func(func.into(), vec![other]),
    };
    match to {
        PgType::Date | PgType::Time => coerce_or_cast(converted, to),
        _ => Ok(converted),
    }
}

/// The conversions [`zone_convert`] binds, in the session's zone.
fn eval_zone_conversion(func: &str, v: &Value) -> Value {
    match v {
        Value::Timestamp(t) if func == "timestamptz_from_local" => {
            Value::Timestamp(crate::tz::session().to_utc(*t))
        }
        Value::Timestamp(t) => Value::Timestamp(crate::tz::session().to_local(*t)),
        _ => Value::Null,
    }
}

/// The type a call of `name` with one argument converts to, when `name` is a type's own name
/// (`pg_type.typname`) PostgreSQL accepts as a function-style cast. (`numeric`, `varchar`,
/// `time`, `timestamp` and `interval` are keywords there: `numeric(5)` is a type, a syntax
/// error in an expression; they stay unknown functions here.)
fn function_style_cast(name: &str) -> Option<PgType> {
    const NAMES: &[&str] = &[
        "bool",
        "int2",
        "int4",
        "int8",
        "float4",
        "float8",
        "text",
        "bpchar",
        "name",
        "bytea",
        "uuid",
        "timestamptz",
        "date",
        "oid",
        "inet",
    ];
    NAMES
        .contains(&name)
        .then(|| PgType::from_typname(name))
        .flatten()
}

/// An explicit conversion from `from` to `to`: as [`coerce_or_cast`], except that a
/// `timestamp without time zone` becomes text without the `+00` a timestamptz shows (the two
/// share one value representation).
fn cast_from(e: BExpr, from: PgType, to: PgType) -> Result<BExpr, SqlError> {
    if let Some(trimmed) = char_to_text(&e, from, to) {
        return Ok(trimmed);
    }
    // json converts from and to the string types only (through its text).
    if (from == PgType::Json) != (to == PgType::Json) {
        let other = if from == PgType::Json { to } else { from };
        if !other.is_string() {
            return Err(SqlError::CannotCast {
                from: from.sql_name().into(),
                to: to.sql_name().into(),
            });
        }
    }
    if let PgType::Record(fields) = from {
        if !to.is_string() {
            return Err(SqlError::CannotCast {
                from: from.sql_name().into(),
                to: to.sql_name().into(),
            });
        }
        let oids = fields
            .iter()
            .map(|(_, t)| Value::Int(t.oid().into()))
            .collect();
        let text = BExpr::Func(
            "record_text".into(),
            vec![e, BExpr::Const(Value::Array(oids))],
        );
        return coerce_or_cast(text, to);
    }
    if from == PgType::Timestamp && to.is_string() {
        return Ok(BExpr::Func("timestamp_text".into(), vec![e]));
    }
    if from == PgType::TimestampArray && to.is_string() {
        let text = BExpr::Func("timestamp_array_text".into(), vec![e]);
        return coerce_or_cast(text, to);
    }
    // A real is written with its own digits (`0.1`, not the double's `0.10000000149011612`).
    if from == PgType::Float4 && to == PgType::Numeric {
        return Ok(BExpr::Func("float4_numeric".into(), vec![e]));
    }
    if from == PgType::Float4 && to.is_string() {
        let text = BExpr::Func("float4_text".into(), vec![e]);
        return coerce_or_cast(text, to);
    }
    // An int2vector or oidvector is written with spaces, not as an array.
    if from.is_vector() && to.is_string() {
        let text = BExpr::Func("int2vector_text".into(), vec![e]);
        return coerce_or_cast(text, to);
    }
    if through_zone(from, to) {
        return zone_convert(e, from, to);
    }
    // inet converts from and to strings only; to text always with its prefix length
    // (PostgreSQL's `network_show`), where its output omits a host's.
    if from != to && (from == PgType::Inet || to == PgType::Inet) {
        if from == PgType::Inet && to.is_string() {
            // Only text, varchar and char have `text(inet)`; name goes through the output.
            let func = if to == PgType::Name {
                "inet_out"
            } else {
                "inet_text"
            };
            let text = BExpr::Func(func.into(), vec![e]);
            return coerce_or_cast(text, to);
        }
        if !(from.is_string() || from == PgType::Unknown) {
            return Err(SqlError::CannotCast {
                from: from.sql_name().into(),
                to: to.sql_name().into(),
            });
        }
    }
    // xid converts only through its text form.
    if (from == PgType::Xid) != (to == PgType::Xid) && !from.is_string() && !to.is_string() {
        return Err(SqlError::CannotCast {
            from: from.sql_name().into(),
            to: to.sql_name().into(),
        });
    }
    coerce_or_cast(e, to)
}

/// Evaluates a date/time function bound by [`bind_datetime_call`] (`date_trunc:<type>`,
/// `extract:<type>`, `date_part:<type>`, after the source type PostgreSQL's units and errors
/// depend on).
fn eval_datetime_call(name: &str, a: &[Value]) -> Result<Value, SqlError> {
    let (func, source) = name.split_once(':').unwrap_or_default();
    let ty = crate::types::ALL_TYPES
        .into_iter()
        .find(|t| t.sql_name() == source)
        .ok_or_else(|| SqlError::internal("date/time function type"))?;
    let (Some(Value::Text(unit)), Some(v)) = (a.first(), a.get(1)) else {
        return Ok(Value::Null);
    };
    Ok(match (func, v) {
        (_, Value::Null) => Value::Null,
        ("date_trunc", Value::Timestamp(ts)) if ty == PgType::Timestamptz => {
            Value::Timestamp(crate::datetime::trunc_timestamptz(unit, *ts)?)
        }
        ("date_trunc", Value::Timestamp(ts)) => {
            Value::Timestamp(crate::datetime::trunc_timestamp(unit, *ts, ty)?)
        }
        ("date_trunc", Value::Interval(iv)) => {
            Value::Interval(crate::datetime::trunc_interval(unit, *iv)?)
        }
        ("extract", v) => crate::datetime::extract(unit, v, ty)?,
        ("date_part", v) => crate::datetime::date_part(unit, v, ty)?,
        _ => return Err(SqlError::internal("date/time function")),
    })
}

/// The parameters of the functions that take named arguments (`make_interval(days => 10)`),
/// and whether the unnamed ones default to zero.
const NAMED_PARAMETERS: &[(&str, &[&str], bool)] = &[
    (
        "make_interval",
        &["years", "months", "weeks", "days", "hours", "mins", "secs"],
        true,
    ),
    ("make_date", &["year", "month", "day"], false),
    ("make_time", &["hour", "min", "sec"], false),
    (
        "make_timestamp",
        &["year", "month", "mday", "hour", "min", "sec"],
        false,
    ),
    (
        "make_timestamptz",
        &["year", "month", "mday", "hour", "min", "sec", "timezone"],
        false,
    ),
];

/// The arguments of `name` in parameter order: the positional ones, then the named ones at
/// their parameters' places (PostgreSQL's 42883 for a name the function does not have).
fn place_named_arguments(
    name: &str,
    positional: Vec<Expr>,
    named: Vec<(String, Expr)>,
) -> Result<Vec<Expr>, SqlError> {
    let not_found = || {
        SqlError::UndefinedFunction {
        message: format!("function {name} with named arguments does not exist"),
        hint: Some("No function matches the given name and argument types. You might need to add explicit type casts.".into()),
    }
    };
    let (_, params, zero_default) = NAMED_PARAMETERS
        .iter()
        .find(|(n, _, _)| *n == name)
        .ok_or_else(not_found)?;
    let mut slots: Vec<Option<Expr>> = positional.into_iter().map(Some).collect();
    slots.resize(params.len().max(slots.len()), None);
    for (arg, e) in named {
        let i = params
            .iter()
            .position(|p| *p == arg)
            .ok_or_else(not_found)?;
        if slots[i].is_some() {
            return Err(not_found());
        }
        slots[i] = Some(e);
    }
    // Trailing parameters without an argument are left out (their defaults apply); a gap
    // takes the default where there is one.
    while slots.last().is_some_and(Option::is_none) {
        slots.pop();
    }
    slots
        .into_iter()
        .map(|s| match s {
            Some(e) => Ok(e),
            None if *zero_default => Ok(Expr::value(ast::Value::Number("0".into(), false))),
            None => Err(not_found()),
        })
        .collect()
}

/// Date/time functions bound by [`bind_datetime_call`].
const DATETIME_FUNCTIONS: &[&str] = &[
    "timezone",
    "to_char",
    "to_date",
    "localtime",
    "age",
    "justify_hours",
    "justify_days",
    "justify_interval",
    "isfinite",
    "make_date",
    "make_time",
    "make_timestamp",
    "make_timestamptz",
    "make_interval",
    "date_bin",
    "date_trunc",
    "date_part",
    "to_timestamp",
    "current_date",
    "localtimestamp",
];

/// `err`, which binding or converting `e` gave, with its position noted where PostgreSQL's
/// parser gives one ([`error_spot`]).
pub(crate) fn noted_at(e: &Expr, err: SqlError) -> SqlError {
    if let Some(spot) = error_spot(e, &err) {
        crate::errpos::note(&err, spot);
    }
    err
}

/// Where PostgreSQL's parser points an error that binding `e` returned
/// ([`crate::errpos`]): a name that resolves to nothing at the name, a function that does not
/// exist at its name, an operator at the operator, a constant that does not convert at the
/// constant. `None`: no position (PostgreSQL gives none, or this node is not the one it
/// points at).
fn error_spot(e: &Expr, err: &SqlError) -> Option<crate::errpos::Spot> {
    use crate::errpos::{Spot, Target};
    use sqlparser::ast::Spanned;
    let message = err.to_string();
    // "operator does not exist: integer + text" (binary) or "…: - text" (prefix).
    let operator_error = |binary: bool| {
        message
            .strip_prefix("operator does not exist: ")
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| binary != "+-*/<>=~!@#%^&|`?".contains(c))
    };
    match (err.sqlstate(), e) {
        ("42703" | "42P01", Expr::Identifier(i)) => Some(Spot::at(i.span.start, ident_token(i))),
        ("42703" | "42P01", Expr::CompoundIdentifier(parts)) => parts
            .first()
            .map(|i| Spot::at(i.span.start, ident_token(i))),
        ("42883", Expr::Function(f)) if message.starts_with("function ") => name_spot(&f.name),
        ("42809", Expr::Function(f)) if message.contains(" specified, but ") => name_spot(&f.name),
        ("0A000", Expr::Function(f)) if message.starts_with("OVER is not supported for ") => {
            name_spot(&f.name)
        }
        ("42809", Expr::Function(f)) if message.contains(" is not an ordered-set aggregate") => {
            name_spot(&f.name)
        }
        // An aggregate, window or GROUPING call where none may be: at the call.
        ("42803" | "42P20", Expr::Function(f))
            if message.contains(" are not allowed ") || message.ends_with("cannot be nested") =>
        {
            name_spot(&f.name)
        }
        // `a + b` with no such operator: at the operator, which has no span of its own.
        ("42883", Expr::BinaryOp { left, op, .. }) if operator_error(true) => Some(Spot::find(
            left.span().end,
            Target::NextToken,
            op.to_string(),
        )),
        ("42725", Expr::BinaryOp { left, op, .. })
            if message.starts_with("operator is not unique: ") =>
        {
            Some(Spot::find(
                left.span().end,
                Target::NextToken,
                op.to_string(),
            ))
        }
        ("42725", Expr::UnaryOp { expr, op })
            if message.starts_with("operator is not unique: ") =>
        {
            Some(Spot::find(
                expr.span().start,
                Target::TokenBefore,
                op.to_string(),
            ))
        }
        // `(x).field` of a value that has no such field: at the value, inside its parentheses.
        ("42809" | "42703", Expr::CompoundFieldAccess { root, .. })
            if message.starts_with("column notation")
                || message.starts_with("could not identify column") =>
        {
            let inner = unnested(root);
            Some(Spot::at(inner.span().start, first_token(inner)))
        }
        ("42883", Expr::UnaryOp { expr, op }) if operator_error(false) => Some(Spot::find(
            expr.span().start,
            Target::TokenBefore,
            op.to_string(),
        )),
        ("42883", Expr::Like { expr, negated, .. } | Expr::ILike { expr, negated, .. })
            if operator_error(true) || message.starts_with("function pg_catalog.like_escape") =>
        {
            let word = match (negated, matches!(e, Expr::ILike { .. })) {
                (true, _) => "NOT",
                (false, true) => "ILIKE",
                (false, false) => "LIKE",
            };
            Some(Spot::find(expr.span().end, Target::NextToken, word))
        }
        (
            code @ ("42809" | "42883"),
            Expr::AnyOp {
                left, compare_op, ..
            }
            | Expr::AllOp {
                left, compare_op, ..
            },
        ) if code == "42809" || operator_error(true) => Some(Spot::find(
            left.span().end,
            Target::NextToken,
            compare_op.to_string(),
        )),
        // SUBSTRING's word has no span: back from its first argument.
        ("42883", Expr::Substring { expr, .. }) if message.starts_with("function ") => {
            Some(Spot::find(expr.span().start, Target::TokenBefore, "substr"))
        }
        // A cast to a type that does not exist: at the type name after `::` or `AS` (not
        // found past a cast inside, whose own type name has no span).
        (
            _,
            Expr::Cast {
                expr, data_type, ..
            },
        ) if points_at_type(err) && !matches!(**expr, Expr::Cast { .. }) => Some(Spot::find(
            expr.span().end,
            Target::CastTypeAfter,
            first_word(&data_type.to_string()),
        )),
        (
            "42804",
            Expr::IsTrue(x)
            | Expr::IsFalse(x)
            | Expr::IsNotTrue(x)
            | Expr::IsNotFalse(x)
            | Expr::IsUnknown(x)
            | Expr::IsNotUnknown(x),
        ) if message.starts_with("argument of IS") => {
            Some(Spot::at(x.span().start, first_token(x)))
        }
        // A constant's input error: at the constant, when it is this node or one of its
        // operands (PostgreSQL points where it converts an untyped constant; errors of
        // evaluation have no position).
        ("22P02" | "22007" | "22008" | "22003" | "22009", _) => {
            let literal = |x: &Expr| match x {
                Expr::Value(v) => literal_spot(&v.value, v.span().start),
                _ => None,
            };
            let mut operands: Vec<&Expr> = vec![e];
            match e {
                Expr::Cast { expr, .. }
                | Expr::IsTrue(expr)
                | Expr::IsFalse(expr)
                | Expr::IsNotTrue(expr)
                | Expr::IsNotFalse(expr)
                | Expr::IsUnknown(expr)
                | Expr::IsNotUnknown(expr) => operands.push(expr),
                Expr::BinaryOp { left, right, .. } => operands.extend([&**left, &**right]),
                Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => {
                    operands.extend([&**expr, &**pattern])
                }
                Expr::Between {
                    expr, low, high, ..
                } => operands.extend([&**expr, &**low, &**high]),
                Expr::In {
                    expr,
                    target: ast::InTarget::List(list),
                    ..
                } => {
                    operands.push(expr);
                    operands.extend(list.iter());
                }
                _ => {}
            }
            let typed = match e {
                Expr::TypedString(ts) => literal_spot(&ts.value.value, ts.value.span().start),
                _ => None,
            };
            typed
                .into_iter()
                .chain(operands.into_iter().filter_map(literal))
                .find(|(text, _)| message.contains(&format!("\"{text}\"")))
                .map(|(_, spot)| spot)
        }
        _ => None,
    }
}

/// An identifier as it is written (its quote, then its text).
pub(crate) fn ident_token(i: &ast::Ident) -> String {
    match i.quote_style {
        Some(q) => format!("{q}{}", i.value),
        None => i.value.clone(),
    }
}

/// Where a (possibly qualified) name starts, and its first part as written.
pub(crate) fn name_spot(name: &ast::ObjectName) -> Option<crate::errpos::Spot> {
    match name.0.first() {
        Some(ast::ObjectNamePart::Identifier(i)) => {
            Some(crate::errpos::Spot::at(i.span.start, ident_token(i)))
        }
        _ => None,
    }
}

/// The first token of `e` when it starts with a name (otherwise nothing to check).
fn first_token(e: &Expr) -> String {
    match e {
        Expr::Identifier(i) => ident_token(i),
        Expr::CompoundIdentifier(parts) => parts.first().map(ident_token).unwrap_or_default(),
        _ => String::new(),
    }
}

/// Whether PostgreSQL points `err` at the type name it is about: a type that does not exist,
/// or a type modifier it does not take.
pub(crate) fn points_at_type(err: &SqlError) -> bool {
    let message = err.to_string();
    match err.sqlstate() {
        "42704" => message.starts_with("type "),
        "22023" => message.starts_with("length for type ") || message.starts_with("NUMERIC "),
        "42601" => message.starts_with("type modifier is not allowed"),
        _ => false,
    }
}

/// A possibly qualified name as PostgreSQL's `regclass`/`regnamespace` input reads it:
/// unquoted parts folded to lower case, quoted ones kept as written (`""` is a quote), parts
/// joined by dots. `None` when it does not parse.
pub(crate) fn name_parts(s: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut chars = s.trim().chars().peekable();
    loop {
        let mut part = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next()? {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        part.push('"');
                    }
                    '"' => break,
                    c => part.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' || c == '"' || c.is_whitespace() {
                    break;
                }
                part.push(c.to_ascii_lowercase());
                chars.next();
            }
        }
        if part.is_empty() {
            return None;
        }
        parts.push(part);
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => return Some(parts),
            Some('.') => {
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
            }
            Some(_) => return None,
        }
    }
}

fn invalid_name_syntax() -> SqlError {
    SqlError::InvalidName {
        message: "invalid name syntax".into(),
    }
}

/// A comparison of two rows (`(a, b) < (1, 2)`) as PostgreSQL's row-wise comparison spells
/// it out: `=` is every pair equal, `<>` any pair unequal, the ordering operators compare
/// the pairs left to right and the first pair that is not equal decides (a NULL there makes
/// the result NULL).
fn row_comparison(ls: &[Expr], op: &ast::BinaryOperator, rs: &[Expr]) -> Result<Expr, SqlError> {
    use ast::BinaryOperator as B;
    if ls.len() != rs.len() {
        return Err(SqlError::Syntax {
            message: "unequal number of entries in row expressions".into(),
        });
    }
    let pair = |l: &Expr, op: B, r: &Expr| Expr::BinaryOp {
        left: Box::new(l.clone()),
        op,
        right: Box::new(r.clone()),
    };
    let join = |a: Expr, op: B, b: Expr| Expr::BinaryOp {
        left: Box::new(a),
        op,
        right: Box::new(b),
    };
    let pairs = ls.iter().zip(rs);
    match op {
        B::Eq | B::NotEq => {
            let join_op = if *op == B::Eq { B::And } else { B::Or };
            pairs
                .map(|(l, r)| pair(l, op.clone(), r))
                .reduce(|a, b| join(a, join_op.clone(), b))
                .ok_or_else(|| SqlError::feature("comparison of empty rows"))
        }
        B::Lt | B::LtEq | B::Gt | B::GtEq => {
            let strict = match op {
                B::Lt | B::LtEq => B::Lt,
                _ => B::Gt,
            };
            // From the last pair back: last_op, then `l < r OR (l = r AND rest)`.
            let mut rest: Option<Expr> = None;
            for (l, r) in pairs.rev() {
                rest = Some(match rest {
                    None => pair(l, op.clone(), r),
                    Some(inner) => join(
                        pair(l, strict.clone(), r),
                        B::Or,
                        Expr::Nested(Box::new(join(pair(l, B::Eq, r), B::And, inner))),
                    ),
                });
            }
            rest.ok_or_else(|| SqlError::feature("comparison of empty rows"))
        }
        other => Err(SqlError::feature(format!("row comparison with {other}"))),
    }
}

/// `initcap`: each run of letters and digits starts upper case, the rest lower case.
fn initcap(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut in_word = false;
    // One character for one, as PostgreSQL's towupper/towlower (`ß` stays `ß`).
    fn single(mut mapped: impl Iterator<Item = char>, c: char) -> char {
        match (mapped.next(), mapped.next()) {
            (Some(m), None) => m,
            _ => c,
        }
    }
    for c in t.chars() {
        out.push(if in_word {
            single(c.to_lowercase(), c)
        } else {
            single(c.to_uppercase(), c)
        });
        in_word = c.is_alphanumeric();
    }
    out
}

/// `lpad` / `rpad`: `t` cut or filled with `fill` (repeated, cut) to `len` characters; an
/// empty fill cannot lengthen.
fn pad(t: &str, len: usize, fill: &str, left: bool) -> String {
    let have = t.chars().count();
    if have >= len || fill.is_empty() {
        return t.chars().take(len).collect();
    }
    let filler: String = fill.chars().cycle().take(len - have).collect();
    if left {
        filler + t
    } else {
        format!("{t}{filler}")
    }
}

/// Where `e` starts, when it starts with a name (a column or a function call).
fn start_spot(e: &Expr) -> Option<crate::errpos::Spot> {
    use sqlparser::ast::Spanned;
    match e {
        Expr::Function(f) => name_spot(&f.name),
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
            Some(crate::errpos::Spot::at(e.span().start, first_token(e)))
        }
        _ => None,
    }
}

/// A type's name up to its first space or parenthesis (`nope(3)` → `nope`).
pub(crate) fn first_word(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c == '(' || c == '[')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// A string or number literal at `at`: its text as an input error quotes it, and where it
/// is, with the token it starts with.
fn literal_spot(
    v: &ast::Value,
    at: sqlparser::tokenizer::Location,
) -> Option<(String, crate::errpos::Spot)> {
    let token = match v {
        ast::Value::Number(n, _) => n.to_string(),
        ast::Value::EscapedStringLiteral(_) => "E'".into(),
        _ => "'".into(),
    };
    literal_text(v).map(|t| (t, crate::errpos::Spot::at(at, token)))
}

/// The text of a string or number literal as an input error quotes it.
fn literal_text(v: &ast::Value) -> Option<String> {
    match v {
        ast::Value::SingleQuotedString(s) | ast::Value::EscapedStringLiteral(s) => Some(s.clone()),
        ast::Value::Number(n, _) => Some(n.to_string()),
        _ => None,
    }
}

/// The fields of `pg_get_keywords()`'s rows.
const KEYWORD_FIELDS: &[(&str, PgType)] = &[
    ("word", PgType::Text),
    ("catcode", PgType::Char),
    ("barelabel", PgType::Bool),
    ("catdesc", PgType::Text),
    ("baredesc", PgType::Text),
];

/// The fields of `json_each()`'s rows, and of `json_each_text()`'s.
const JSON_EACH_FIELDS: &[(&str, PgType)] = &[("key", PgType::Text), ("value", PgType::Json)];
const JSON_EACH_TEXT_FIELDS: &[(&str, PgType)] = &[("key", PgType::Text), ("value", PgType::Text)];

/// The fields of `aclexplode()`'s rows.
const ACL_FIELDS: &[(&str, PgType)] = &[
    ("grantor", PgType::Oid),
    ("grantee", PgType::Oid),
    ("privilege_type", PgType::Text),
    ("is_grantable", PgType::Bool),
];

/// The privileges of an `aclitem` by their letter, in the order of their bits, which is the
/// order `aclexplode` lists them in.
const ACL_PRIVILEGES: &[(char, &str)] = &[
    ('a', "INSERT"),
    ('r', "SELECT"),
    ('w', "UPDATE"),
    ('d', "DELETE"),
    ('D', "TRUNCATE"),
    ('x', "REFERENCES"),
    ('t', "TRIGGER"),
    ('X', "EXECUTE"),
    ('U', "USAGE"),
    ('C', "CREATE"),
    ('T', "TEMPORARY"),
    ('c', "CONNECT"),
    ('s', "SET"),
    ('A', "ALTER SYSTEM"),
];

/// `aclexplode`'s rows for one `aclitem` text, `grantee=privileges/grantor` (an empty grantee
/// is PUBLIC; a `*` after a privilege's letter is its grant option). Names are quoted as
/// `aclitemout` quotes them.
fn acl_explode(user: &str, acl: &str) -> Result<Vec<Vec<Value>>, SqlError> {
    let invalid = || SqlError::InvalidText {
        type_name: "aclitem".into(),
        input: acl.into(),
    };
    let (grantee, rest) = split_acl_name(acl, '=').ok_or_else(invalid)?;
    // Privilege letters hold no `/`; a quoted grantor may.
    let (privileges, grantor) = rest.split_once('/').ok_or_else(invalid)?;
    let grantor = unquote_acl_name(grantor);
    let role = |name: &str| {
        crate::pgcatalog::role_oid(user, name).ok_or_else(|| SqlError::UndefinedObject {
            message: format!("role \"{name}\" does not exist"),
        })
    };
    let (grantor, grantee) = (role(&grantor)?, role(&grantee)?);
    let letters: Vec<char> = privileges.chars().collect();
    Ok(ACL_PRIVILEGES
        .iter()
        .filter_map(|(letter, name)| {
            let at = letters.iter().position(|c| c == letter)?;
            Some(vec![
                Value::Int(grantor.into()),
                Value::Int(grantee.into()),
                Value::text(*name),
                Value::Bool(letters.get(at + 1) == Some(&'*')),
            ])
        })
        .collect())
}

/// The role name before `end` in an `aclitem` text (quoted names may hold it), and the rest.
fn split_acl_name(s: &str, end: char) -> Option<(String, &str)> {
    let mut quoted = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c == end && !quoted => return Some((unquote_acl_name(&s[..i]), &s[i + 1..])),
            _ => {}
        }
    }
    None
}

/// A role name as `aclitemout` wrote it, without its quotes.
fn unquote_acl_name(s: &str) -> String {
    match s.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => s.to_string(),
    }
}

/// `l op r` with `op` `+` or `-` as PostgreSQL's grammar reads it when a prefix `~` comes before
/// it: a prefix operator has the precedence of any other operator, below `+` and `-`, so
/// `~1 + 1` is `~(1 + 1)` and `2 * ~1 + 1` is `2 * ~(1 + 1)`. sqlparser binds `~` as tightly
/// as a sign. `None` when there is nothing to move.
fn prefix_operator_over(l: &Expr, op: &ast::BinaryOperator, r: &Expr) -> Option<Expr> {
    use ast::BinaryOperator as O;
    if !matches!(op, O::Plus | O::Minus) {
        return None;
    }
    // The chain `a + b - c` is built from the left: its left part first.
    let left = match l {
        Expr::BinaryOp {
            left: a,
            op: o,
            right: b,
        } => prefix_operator_over(a, o, b),
        _ => None,
    };
    let l_read = left.as_ref().unwrap_or(l);
    match graft_under_prefix(l_read, op, r) {
        Some(e) => Some(e),
        None => left.map(|l| Expr::BinaryOp {
            left: Box::new(l),
            op: op.clone(),
            right: Box::new(r.clone()),
        }),
    }
}

/// `l op r` with `op r` moved under the prefix `~` that ends `l` (its last operand, through
/// operators that bind more tightly than a prefix operator).
fn graft_under_prefix(l: &Expr, op: &ast::BinaryOperator, r: &Expr) -> Option<Expr> {
    use ast::BinaryOperator as O;
    match l {
        Expr::UnaryOp {
            op: ast::UnaryOperator::BitwiseNot,
            expr,
        } => {
            let inner = graft_under_prefix(expr, op, r).unwrap_or_else(|| Expr::BinaryOp {
                left: expr.clone(),
                op: op.clone(),
                right: Box::new(r.clone()),
            });
            Some(Expr::UnaryOp {
                op: ast::UnaryOperator::BitwiseNot,
                expr: Box::new(inner),
            })
        }
        Expr::BinaryOp {
            left: a,
            op: o @ (O::Plus | O::Minus | O::Multiply | O::Divide | O::Modulo | O::PGExp),
            right: b,
        } => graft_under_prefix(b, op, r).map(|b| Expr::BinaryOp {
            left: a.clone(),
            op: o.clone(),
            right: Box::new(b),
        }),
        _ => None,
    }
}

/// Whether `e` is a literal, in parentheses or not (what PostgreSQL's grammar negates as one
/// constant).
fn is_literal(e: &Expr) -> bool {
    matches!(unnested(e), Expr::Value(_))
}

/// `e` without the parentheses around it.
fn unnested(mut e: &Expr) -> &Expr {
    while let Expr::Nested(x) = e {
        e = x;
    }
    e
}

/// The OID of the type `input` names as `regtype` reads it: `pg_type.typname`, SQL's spelling
/// (`integer`, `character varying`, `text[]`), schema-qualified or quoted; also the types
/// `pg_type` lists that have no [`PgType`] (`cid`, `record[]`).
pub fn type_oid_by_name(input: &str) -> Option<u32> {
    if input.trim() == "-" {
        return Some(0);
    }
    let t = input
        .trim()
        .trim_start_matches("pg_catalog.")
        .replace('"', "");
    PgType::from_typname(&t)
        .or_else(|| type_from_text(&t).ok().map(|(ty, _)| ty))
        .or_else(|| {
            [PgType::Unknown, PgType::Void, PgType::Record(&[])]
                .into_iter()
                .find(|p| p.typname() == t)
        })
        .map(PgType::oid)
        .or_else(|| crate::pgcatalog::other_type_oid(&t))
}

/// The OID of the function `input` names as `regproc` reads it: a number, `-` for none, or
/// the name (with its schema, quoted or not) of one of the built-in functions RockLake's
/// catalogs name (`pg_proc` lists none).
pub fn proc_oid_by_name(input: &str) -> Result<u32, SqlError> {
    let trimmed = input.trim();
    if let Ok(n) = trimmed.parse::<u32>() {
        return Ok(n);
    }
    if trimmed == "-" {
        return Ok(0);
    }
    let n = match name_parts(input).as_deref() {
        Some([one]) | Some([_, one]) => one.clone(),
        Some(_) => {
            return Err(SqlError::Syntax {
                message: "improper qualified name (too many dotted names)".into(),
            })
        }
        None => return Err(invalid_name_syntax()),
    };
    crate::pgcatalog::builtin_proc_oid(&n).ok_or_else(|| SqlError::UndefinedFunction {
        message: format!("function \"{input}\" does not exist"),
        hint: None,
    })
}

/// `information_schema._pg_expandarray` as [`Binder::bind_call`] sees it named: no identifier
/// holds a NUL, so no other function's name can be this.
const EXPANDARRAY: &str = "\0information_schema._pg_expandarray";

/// `(record).field`: the field's value, as PostgreSQL's FieldSelect reads it.
fn field_select(record: BExpr, ty: PgType, field: &str) -> Result<(BExpr, PgType), SqlError> {
    let PgType::Record(fields) = ty else {
        return Err(SqlError::WrongObjectType {
            message: format!(
                "column notation .{field} applied to type {}, which is not a composite type",
                ty.sql_name()
            ),
        });
    };
    let Some(i) = fields.iter().position(|(name, _)| *name == field) else {
        return Err(SqlError::UndefinedRecordField { name: field.into() });
    };
    let call = BExpr::Func(
        "record_field".into(),
        vec![record, BExpr::Const(Value::Int(i as i64))],
    );
    Ok((call, fields[i].1))
}

/// PostgreSQL's 42883 for a call no function signature matches.
fn no_such_function(name: &str, types: &[PgType]) -> SqlError {
    let sig: Vec<&str> = types.iter().map(|t| t.sql_name()).collect();
    SqlError::UndefinedFunction {
        message: format!("function {}({}) does not exist", name, sig.join(", ")),
        hint: Some("No function matches the given name and argument types. You might need to add explicit type casts.".into()),
    }
}

/// The select item a GROUP BY name stands for when no input column has it: the one item
/// with that alias (42702 for several).
fn group_by_alias<'s>(
    items: &'s [SelectItem],
    name: &str,
) -> Result<Option<(usize, &'s Expr)>, SqlError> {
    let mut found: Option<(usize, &Expr)> = None;
    for (i, item) in items.iter().enumerate() {
        if let SelectItem::ExprWithAlias { expr, alias } = item {
            if ident(alias) == name {
                // Two items of the name are ambiguous only when they differ.
                if found.is_some_and(|(_, f)| f != expr) {
                    return Err(SqlError::AmbiguousOutputColumn {
                        clause: "GROUP BY",
                        name: name.to_string(),
                    });
                }
                found = found.or(Some((i, expr)));
            }
        }
    }
    Ok(found)
}

/// PostgreSQL's 42803 when a grouped select's list or HAVING reads a column that is neither
/// grouped by `keys` nor inside an aggregate.
fn ungrouped_select_list(
    sel: &ast::Select,
    keys: &[BExpr],
    projection: &[BExpr],
    having: Option<&BExpr>,
    scope: &Scope,
    hidden: &[Expr],
) -> Result<(), SqlError> {
    for e in projection.iter().chain(having) {
        if let Some(i) = ungrouped_column(e, keys) {
            let items = sel.projection.iter().filter_map(|i| match i {
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
                _ => None,
            });
            return Err(grouping_error(
                scope,
                i,
                items.chain(hidden).chain(sel.having.as_ref()),
                group_by_exprs(sel),
            ));
        }
    }
    Ok(())
}

/// A column of the FROM scope used outside an aggregate and not covered by GROUP BY (a key
/// covers an expression equal to it, as in PostgreSQL).
fn ungrouped_column(e: &BExpr, keys: &[BExpr]) -> Option<usize> {
    if keys.contains(e) {
        return None;
    }
    let kids: Vec<&BExpr> = match e {
        BExpr::Col(i) => return Some(*i),
        BExpr::Const(_)
        | BExpr::Param(..)
        | BExpr::Outer(..)
        | BExpr::Agg(_)
        | BExpr::Win(_)
        | BExpr::Srf(_)
        | BExpr::Exists(..)
        | BExpr::Scalar(_)
        | BExpr::ArraySub(_) => vec![],
        BExpr::Bin(_, a, b)
        | BExpr::And(a, b)
        | BExpr::Or(a, b)
        | BExpr::Like(a, b, ..)
        | BExpr::AnyArray(_, a, b, ..)
        | BExpr::IsDistinct(a, b, _) => {
            vec![a, b]
        }
        BExpr::Not(a)
        | BExpr::Neg(a)
        | BExpr::IsNull(a, _)
        | BExpr::Cast(a, _)
        | BExpr::InSub(a, ..) => vec![a],
        BExpr::InList(a, items, _) => std::iter::once(&**a).chain(items.iter()).collect(),
        BExpr::Func(_, args) => args.iter().collect(),
        BExpr::Case(op, arms, el) => {
            let mut v: Vec<&BExpr> = op.iter().map(|b| &**b).collect();
            for (c, r) in arms {
                v.push(c);
                v.push(r);
            }
            v.extend(el.iter().map(|b| &**b));
            v
        }
    };
    kids.into_iter().find_map(|k| ungrouped_column(k, keys))
}

/// The columns renamed by a table alias's column list (`AS t(a, b)`); more names than
/// columns is PostgreSQL's 42P10.
fn apply_alias_cols(
    mut cols: Vec<ColMeta>,
    alias: &Option<ast::TableAlias>,
    relation: &'static str,
) -> Result<Vec<ColMeta>, SqlError> {
    if let Some(a) = alias {
        let visible: Vec<usize> = cols
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.hidden)
            .map(|(i, _)| i)
            .collect();
        if a.columns.len() > visible.len() {
            return Err(SqlError::TooManyColumnAliases {
                relation,
                name: ident(&a.name),
                available: visible.len(),
                specified: a.columns.len(),
            });
        }
        for (i, ac) in visible.into_iter().zip(a.columns.iter()) {
            cols[i].name = ident(&ac.name).into();
        }
    }
    Ok(cols)
}

/// Whether an ORDER BY key sorts descending: `DESC`, or `USING >` (`USING <` is ascending;
/// another operator is PostgreSQL's 42809).
fn sort_desc(options: &ast::OrderByOptions) -> Result<bool, SqlError> {
    Ok(match &options.sort {
        None | Some(ast::OrderBySort::Asc) => false,
        Some(ast::OrderBySort::Desc) => true,
        Some(ast::OrderBySort::Using(op)) => match op.to_string().as_str() {
            "<" => false,
            ">" => true,
            other => return Err(SqlError::WrongObjectTypeHint {
                message: format!("operator {other} is not a valid ordering operator"),
                hint:
                    "Ordering operators must be \"<\" or \">\" members of btree operator families."
                        .into(),
            }),
        },
    })
}

/// The type of an equi-join side that is a column or a cast of one (what [`col_range`]
/// accepts); `None` for anything else.
fn side_type(e: &BExpr, cols: &[ColMeta]) -> Option<PgType> {
    match e {
        BExpr::Col(i) => cols.get(*i).map(|c| c.ty),
        BExpr::Cast(_, t) => Some(*t),
        _ => None,
    }
}

/// Whether values of these two types are equal exactly when their [`value_key`]s are, so an
/// equi-join over them may use a hash index: integers of any width and integral numerics,
/// numerics, strings other than `char(n)`, and a few types against themselves. Floats against
/// integers, `char(n)` (its padding), intervals (`1 day` is `24 hours`) and mixed types compare
/// through the join condition instead.
fn hash_joinable(a: Option<PgType>, b: Option<PgType>) -> bool {
    let (Some(a), Some(b)) = (a, b) else {
        return false;
    };
    let exact = |t: PgType| t.is_integer() || t == PgType::Numeric;
    let text = |t: PgType| matches!(t, PgType::Text | PgType::Varchar | PgType::Name);
    (exact(a) && exact(b))
        || (text(a) && text(b))
        || (a == b
            && matches!(
                a,
                PgType::Bool
                    | PgType::Uuid
                    | PgType::Date
                    | PgType::Timestamp
                    | PgType::Timestamptz
                    | PgType::Time
                    | PgType::Bytea
                    | PgType::Float8
                    | PgType::Float4
                    | PgType::Interval
            ))
}

/// The table FROM item `f` (bound as `item`) names when it is a table named without an alias.
fn plain_table(f: &TableFactor, item: &Scope) -> Option<u32> {
    match f {
        TableFactor::Table {
            alias: None,
            args: None,
            ..
        } => item.cols.first().map(|c| c.table_oid).filter(|o| *o != 0),
        _ => None,
    }
}

/// A name a FROM item is known by, and the table it names when that is a table named without
/// an alias (two such of different schemas may share a name).
pub type RangeName = (Rc<str>, Option<u32>);

/// The names FROM item `f` (bound as `item`) brings, checked against those before it:
/// PostgreSQL's 42712 for a name given twice at one level (`FROM t, t`, `DELETE FROM t USING
/// t`), which would otherwise make every reference to it ambiguous or wrong.
fn claim_range_names(
    names: &mut Vec<RangeName>,
    plain_table: Option<u32>,
    item: &Scope,
) -> Result<(), SqlError> {
    let mut own: Vec<Rc<str>> = Vec::new();
    for q in item.cols.iter().filter_map(|c| c.qual.clone()) {
        if !own.contains(&q) {
            own.push(q);
        }
    }
    for q in own {
        let clash = names.iter().any(|(n, oid)| {
            *n == q && !matches!((oid, plain_table), (Some(a), Some(b)) if *a != b)
        });
        if clash {
            return Err(SqlError::DuplicateAlias {
                name: q.to_string(),
            });
        }
        names.push((q, plain_table));
    }
    Ok(())
}

/// A join's left side for USING and NATURAL: the columns of its comma item so far (those
/// before `left_width`, the ones before `item_start` out of reach).
fn join_left_side(scope: &Scope, left_width: usize, item_start: usize) -> Scope {
    Scope {
        cols: scope.cols[..left_width].to_vec(),
        merged_away: scope.merged_away.clone(),
        star: None,
    }
    .masked(item_start)
}

/// What a FROM item reads of the items before it.
struct LateralUse {
    read: Lateral,
    /// The table of the first of their columns it reads, for the error when it may not.
    first_ref: Option<String>,
}

impl LateralUse {
    const NONE: LateralUse = LateralUse {
        read: Lateral::No,
        first_ref: None,
    };

    /// From the references of a query bound under `left` ([`BQuery::outer_refs`]): those
    /// zero scopes up read `left`.
    fn of(refs: &[(usize, usize)], left: &Scope) -> LateralUse {
        match refs.iter().find(|(up, _)| *up == 0) {
            Some(&(_, col)) => LateralUse {
                read: Lateral::Read,
                first_ref: Some(
                    left.cols
                        .get(col)
                        .and_then(|c| c.qual.as_deref())
                        .unwrap_or_default()
                        .to_string(),
                ),
            },
            None => LateralUse {
                read: Lateral::Unread,
                first_ref: None,
            },
        }
    }
}

/// A subquery in FROM without LATERAL that named an item before it: PostgreSQL's error says
/// the name exists but cannot be reached from there.
pub(crate) fn unreachable_from_here(e: SqlError, left: &Scope) -> SqlError {
    match e {
        SqlError::MissingFromEntry { table }
            if left
                .cols
                .iter()
                .any(|c| c.qual.as_deref() == Some(table.as_str())) =>
        {
            SqlError::InvalidFromReference { table, alias: None }
        }
        SqlError::UndefinedColumn { name } => match left.resolve(None, &name) {
            Ok(Some(i)) => SqlError::UnreachableColumn {
                table: left.cols[i].qual.as_deref().unwrap_or_default().to_string(),
                name,
            },
            _ => SqlError::UndefinedColumn { name },
        },
        e => e,
    }
}

fn first_words(s: &str) -> String {
    leading_words(s, 4)
}

/// The first `n` words of `s` (naming a clause in an error without all of it).
pub fn leading_words(s: &str, n: usize) -> String {
    s.split_whitespace().take(n).collect::<Vec<_>>().join(" ")
}

/// PostgreSQL's default column name of an expression.
pub(crate) fn expr_name(e: &Expr) -> String {
    colname(e)
        .map(|(n, _)| n)
        .unwrap_or_else(|| "?column?".into())
}

/// The column name PostgreSQL gives an unaliased select item, with its strength
/// (`FigureColnameInternal`): 2 for a column, function or subquery name, 1 for a type name or
/// "case" (a weaker name that a CASE's ELSE or a cast's operand can override).
fn colname(e: &Expr) -> Option<(String, u8)> {
    let strong = |n: &str| Some((n.to_string(), 2));
    match e {
        Expr::Identifier(i) => Some((ident(i), 2)),
        Expr::CompoundIdentifier(p) => p.last().map(|i| (ident(i), 2)),
        Expr::Function(f) => object_name(&f.name).last().map(|n| (n.clone(), 2)),
        Expr::Cast {
            expr, data_type, ..
        } => match colname(expr) {
            Some(named) if named.1 > 1 => Some(named),
            _ => sql_type(data_type)
                .ok()
                .map(|(t, _)| (t.cast_column_name().to_string(), 1)),
        },
        Expr::Nested(x) => colname(x),
        Expr::Case { else_result, .. } => match else_result.as_deref().and_then(colname) {
            Some(named) if named.1 > 1 => Some(named),
            _ => Some(("case".into(), 1)),
        },
        Expr::Exists { .. } => strong("exists"),
        Expr::Subquery(q) => match q.body.as_ref() {
            ast::SetExpr::Select(sel) => match sel.projection.first() {
                Some(SelectItem::ExprWithAlias { alias, .. }) => Some((ident(alias), 2)),
                Some(SelectItem::UnnamedExpr(x)) => Some((expr_name(x), 2)),
                _ => None,
            },
            _ => None,
        },
        Expr::Array(_) => strong("array"),
        // A subscripted value is named after what is subscripted.
        // `t.col[i]`: the last name before the subscript.
        Expr::CompoundFieldAccess { root, access_chain } => {
            match access_chain.iter().rev().find_map(|a| match a {
                ast::AccessExpr::Dot(e) => Some(e),
                ast::AccessExpr::Subscript(_) => None,
            }) {
                Some(e) => colname(e),
                None => colname(root),
            }
        }
        Expr::Interval(_) => Some(("interval".into(), 1)),
        // `date '…'` is a cast of a literal: named after the type.
        Expr::TypedString(ts) => sql_type(&ts.data_type)
            .ok()
            .map(|(t, _)| (t.cast_column_name().to_string(), 1)),
        Expr::Extract { .. } => strong("extract"),
        Expr::AtTimeZone { .. } => strong("timezone"),
        // The special syntaxes are named after the function PostgreSQL calls.
        Expr::Ceil { .. } => strong("ceil"),
        Expr::Floor { .. } => strong("floor"),
        Expr::Position { .. } => strong("position"),
        Expr::Substring { shorthand, .. } => {
            strong(if *shorthand { "substr" } else { "substring" })
        }
        Expr::Trim { trim_where, .. } => strong(match trim_where {
            Some(ast::TrimWhereField::Leading) => "ltrim",
            Some(ast::TrimWhereField::Trailing) => "rtrim",
            _ => "btrim",
        }),
        _ => None,
    }
}

pub fn literal(v: &ast::Value) -> Result<Value, SqlError> {
    Ok(match v {
        ast::Value::Number(n, _) => {
            if let Ok(i) = n.parse::<i64>() {
                Value::Int(i)
            } else if n.contains(['e', 'E']) && !n.contains('.') && n.parse::<f64>().is_ok() {
                Value::Numeric(numeric_canonical(n).ok_or_else(|| SqlError::Syntax {
                    message: format!("syntax error: bad number {n}"),
                })?)
            } else {
                Value::Numeric(numeric_canonical(n).ok_or_else(|| SqlError::Syntax {
                    message: format!("syntax error: bad number {n}"),
                })?)
            }
        }
        ast::Value::SingleQuotedString(s)
        | ast::Value::EscapedStringLiteral(s)
        | ast::Value::DoubleQuotedString(s) => Value::text(s.as_str()),
        ast::Value::DollarQuotedString(d) => Value::text(d.value.as_str()),
        ast::Value::Boolean(b) => Value::Bool(*b),
        ast::Value::Null => Value::Null,
        other => return Err(SqlError::feature(format!("literal {other}"))),
    })
}

/// Resolves an expression to type `t` where PostgreSQL would do so implicitly (unknown
/// literals, integer widening, numeric promotion, NULL).
pub fn coerce_expr(e: BExpr, t: PgType) -> Result<BExpr, SqlError> {
    match e {
        BExpr::Param(n, cell) => {
            type_param(&cell, t);
            Ok(BExpr::Param(n, cell))
        }
        BExpr::Const(Value::Text(s)) if t != PgType::Unknown && !t.is_string() => {
            Ok(BExpr::Const(parse_text(&s, t)?))
        }
        BExpr::Const(Value::Int(i))
            if matches!(t, PgType::Float4 | PgType::Float8 | PgType::Numeric) =>
        {
            Ok(BExpr::Const(cast_value(Value::Int(i), t)?))
        }
        BExpr::Const(Value::Numeric(n)) if matches!(t, PgType::Float4 | PgType::Float8) => {
            Ok(BExpr::Const(cast_value(Value::Numeric(n), t)?))
        }
        other => Ok(other),
    }
}

/// Explicit CAST: constants are converted now, other expressions at run time.
fn coerce_or_cast(e: BExpr, t: PgType) -> Result<BExpr, SqlError> {
    match e {
        BExpr::Param(n, cell) => {
            // `$1::int8`: PostgreSQL gives the parameter the cast's type.
            type_param(&cell, t);
            Ok(BExpr::Param(n, cell))
        }
        BExpr::Const(v) => Ok(BExpr::Const(cast_value(v, t)?)),
        other => Ok(BExpr::Cast(Box::new(other), t)),
    }
}

/// The first context that types a parameter decides, as in PostgreSQL.
fn type_param(cell: &Cell<PgType>, t: PgType) {
    if cell.get() == PgType::Unknown && t != PgType::Unknown {
        cell.set(t);
    }
}

/// An expression with one value per execution: constants, casts of them, and uncorrelated
/// scalar subqueries (evaluated once and cached).
fn runtime_const(e: &BExpr) -> bool {
    match e {
        BExpr::Const(_) => true,
        BExpr::Cast(x, _) | BExpr::Neg(x) => runtime_const(x),
        BExpr::Scalar(q) => !q.correlated(),
        _ => false,
    }
}

/// The plan lines of `EXPLAIN`: one per source, indented by depth.
pub fn explain(q: &BQuery) -> Vec<String> {
    let mut out = Vec::new();
    explain_query(q, 0, &mut out);
    out
}

fn explain_query(q: &BQuery, depth: usize, out: &mut Vec<String>) {
    let mut d = depth;
    if !q.order.is_empty() {
        out.push(plan_line(d, "Sort".into()));
        d += 1;
    }
    if q.limit.is_some() || q.offset.is_some() {
        out.push(plan_line(d, "Limit".into()));
        d += 1;
    }
    explain_set(&q.body, d, out);
}

fn plan_line(depth: usize, text: String) -> String {
    if depth == 0 {
        text
    } else {
        format!("{}->  {text}", "  ".repeat(depth * 3 - 2))
    }
}

fn explain_set(s: &BSet, depth: usize, out: &mut Vec<String>) {
    match s {
        BSet::Select(sel) => {
            let mut d = depth;
            if sel.group.is_some() {
                out.push(plan_line(d, "Aggregate".into()));
                d += 1;
            }
            let exprs = sel
                .filter
                .iter()
                .chain(sel.projection.iter())
                .chain(sel.having.iter());
            explain_from(&sel.from, exprs, d, out);
        }
        BSet::Combine(op, a, b, all) => {
            let node = match (op, all) {
                (SetOp::Union, true) => "Append".to_string(),
                (SetOp::Union, false) => "Unique (Append)".to_string(),
                (op, _) => format!("SetOp {}", op.keyword()),
            };
            out.push(plan_line(depth, node));
            explain_set(a, depth + 1, out);
            explain_set(b, depth + 1, out);
        }
        BSet::Values(_) => out.push(plan_line(depth, "Values Scan".into())),
        BSet::Query(q) => explain_query(q, depth, out),
        BSet::Recursive { base, step, .. } => {
            out.push(plan_line(depth, "Recursive Union".into()));
            explain_set(base, depth + 1, out);
            explain_set(step, depth + 1, out);
        }
        BSet::WorkTable(_) => out.push(plan_line(depth, "WorkTable Scan".into())),
    }
}

/// The plan lines of `EXPLAIN UPDATE` / `EXPLAIN DELETE`: the target (`verb` on it), then
/// how the rows are found (the target first, as the statement reads it).
pub fn explain_dml(verb: &str, from: &[FromItem], filter: Option<&BExpr>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(Source::Table { table, .. }) = from.first().map(|f| &f.source) {
        out.push(format!("{verb} on {}.{}", table.schema, table.name));
    }
    explain_from(from, filter.into_iter(), 1, &mut out);
    out
}

/// The FROM items' sources and the subqueries of `exprs` and of the join conditions.
fn explain_from<'a>(
    from: &'a [FromItem],
    exprs: impl Iterator<Item = &'a BExpr>,
    depth: usize,
    out: &mut Vec<String>,
) {
    let mut d = depth;
    if from.len() > 1 {
        out.push(plan_line(d, "Nested Loop / Hash Join".into()));
        d += 1;
    }
    for item in from {
        explain_source(&item.source, d, out);
    }
    let mut subs = Vec::new();
    for e in exprs.chain(from.iter().filter_map(|f| f.on.as_ref())) {
        subqueries(e, &mut subs);
    }
    for q in subs {
        out.push(plan_line(d, "SubPlan".into()));
        explain_query(&q, d + 1, out);
    }
}

fn explain_source(src: &Source, depth: usize, out: &mut Vec<String>) {
    match src {
        Source::Table {
            table, keys: None, ..
        } => out.push(plan_line(
            depth,
            format!(
                "Seq Scan on {}.{} (every row of the table)",
                table.schema, table.name
            ),
        )),
        Source::Table {
            table,
            keys: Some(ks),
            index,
        } => {
            let (key_cols, key_name) = match index.and_then(|n| table.indexes.get(n)) {
                Some(ix) => (&ix.columns, &ix.name),
                None => (&table.primary_key, &table.pkey_name),
            };
            let ps = &ks.prefixes;
            let col_name = |k: usize| {
                key_cols
                    .get(k)
                    .and_then(|c| table.columns.get(*c))
                    .map(|c| c.name.clone())
                    .unwrap_or_default()
            };
            let shown = |e: &BExpr| match e {
                BExpr::Const(v) => {
                    crate::types::format_text(v, PgType::Text).unwrap_or_else(|| "NULL".into())
                }
                _ => "(subquery)".into(),
            };
            let mut cols: Vec<String> = ps
                .first()
                .map(|p| {
                    p.iter()
                        .enumerate()
                        .map(|(k, e)| format!("{} = {}", col_name(k), shown(e)))
                        .collect()
                })
                .unwrap_or_default();
            if let Some(r) = &ks.range {
                let name = col_name(ps.first().map_or(0, Vec::len));
                if let Some((e, inclusive)) = &r.lo {
                    let op = if *inclusive { ">=" } else { ">" };
                    cols.push(format!("{name} {op} {}", shown(e)));
                }
                if let Some((e, inclusive)) = &r.hi {
                    let op = if *inclusive { "<=" } else { "<" };
                    cols.push(format!("{name} {op} {}", shown(e)));
                }
            }
            out.push(plan_line(
                depth,
                format!(
                    "Index Scan using {} on {}.{} (key {}: {}{})",
                    key_name,
                    table.schema,
                    table.name,
                    if ks.range.is_some() {
                        "range"
                    } else {
                        "prefix"
                    },
                    cols.join(", "),
                    if ps.len() > 1 {
                        format!("; {} ranges", ps.len())
                    } else {
                        String::new()
                    }
                ),
            ))
        }
        Source::Virtual { schema, name } => out.push(plan_line(
            depth,
            format!(
                "Function Scan on {}.{name} (built from the catalog registry)",
                schema.as_deref().unwrap_or("pg_catalog")
            ),
        )),
        Source::Derived(q) => {
            out.push(plan_line(depth, "Subquery Scan".into()));
            explain_query(q, depth + 1, out);
        }
        Source::Values(_) => out.push(plan_line(depth, "Values Scan".into())),
        Source::Function { name, .. } => {
            out.push(plan_line(depth, format!("Function Scan on {name}")))
        }
        Source::Dual => out.push(plan_line(depth, "Result".into())),
    }
}

/// Which columns of a SELECT's joined row anything reads (WHERE, the select list, GROUP BY,
/// aggregates, HAVING, ORDER BY, join conditions), for [`Executor::run_from`]. `None` when it
/// cannot tell for sure: a correlated subquery (it reads the row through `Outer` references),
/// or a FROM item other than a stored or virtual table (a derived table or function may be
/// bound against this row). Then every column is kept.
pub fn used_columns(sel: &BSelect, order: &[OrderKey]) -> Option<Vec<bool>> {
    let width: usize = sel.from.iter().map(|f| f.width).sum();
    let mut used = vec![false; width];
    let mut start = 0;
    for item in &sel.from {
        match &item.source {
            Source::Table { .. } | Source::Virtual { .. } => {}
            Source::Derived(_) | Source::Values(_) | Source::Function { .. } | Source::Dual => {
                return None
            }
        }
        if let Some(on) = &item.on {
            mark_columns(on, 0, &mut used)?;
        }
        // A virtual relation builds only the used columns, and its pre-filter reads them.
        if let Some(pre) = &item.pre_filter {
            mark_columns(pre, start, &mut used)?;
        }
        for (left, right) in &item.hash_keys {
            mark_columns(left, 0, &mut used)?;
            mark_columns(right, start, &mut used)?;
        }
        start += item.width;
    }
    let exprs = sel
        .filter
        .iter()
        .chain(sel.group.iter().flatten())
        .chain(sel.aggs.iter().flat_map(AggSpec::exprs))
        .chain(sel.having.iter())
        .chain(sel.projection.iter())
        .chain(order.iter().map(|k| &k.expr));
    for e in exprs {
        mark_columns(e, 0, &mut used)?;
    }
    Some(used)
}

/// `sel` rewritten so that its joined rows carry only the `used` columns (see
/// [`used_columns`]): each FROM item keeps its used columns ([`FromItem::keep`]) and every
/// expression over the joined row reads their compacted positions. `None` when every column
/// is used. The catalog joins DuckDB and psql send read a handful of the hundred-odd columns
/// their catalogs add up to, and each join step copies the joined row.
pub fn compact_select(
    sel: &BSelect,
    order: &[OrderKey],
    used: &[bool],
) -> Option<(BSelect, Vec<OrderKey>)> {
    if used.iter().all(|u| *u) {
        return None;
    }
    let mut to = vec![usize::MAX; used.len()];
    for (next, (slot, _)) in to.iter_mut().zip(used).filter(|(_, u)| **u).enumerate() {
        *slot = next;
    }
    // Every column an expression reads is used, so none maps to the placeholder.
    let f = |i: usize| to.get(i).copied().unwrap_or(usize::MAX);
    let m = |e: &BExpr| map_cols(e, &f);
    let mut start = 0;
    let from = sel
        .from
        .iter()
        .map(|item| {
            let keep = (0..item.width)
                .filter(|i| used.get(start + i).copied().unwrap_or(true))
                .collect();
            start += item.width;
            FromItem {
                kind: item.kind,
                source: item.source.clone(),
                on: item.on.as_ref().map(m),
                width: item.width,
                hash_keys: item
                    .hash_keys
                    .iter()
                    .map(|(l, r)| (m(l), r.clone()))
                    .collect(),
                pre_filter: item.pre_filter.clone(),
                keep: Some(keep),
                lateral: item.lateral,
            }
        })
        .collect();
    let compacted = BSelect {
        from,
        filter: sel.filter.as_ref().map(m),
        group: sel.group.as_ref().map(|g| g.iter().map(m).collect()),
        aggs: sel
            .aggs
            .iter()
            .map(|a| AggSpec {
                func: a.func,
                args: a.args.iter().map(m).collect(),
                distinct: a.distinct,
                ty: a.ty,
                order: a.order.iter().map(|(k, d, n)| (m(k), *d, *n)).collect(),
                filter: a.filter.as_ref().map(m),
            })
            .collect(),
        having: sel.having.as_ref().map(m),
        projection: sel.projection.iter().map(m).collect(),
        distinct: sel.distinct,
        // Its expressions read projected columns, which compaction does not move.
        windowed: sel.windowed.clone(),
        project_set: sel.project_set.clone(),
        distinct_on: sel.distinct_on.clone(),
        grouping_sets: sel.grouping_sets.clone(),
    };
    // Keys over the output row read output positions.
    let order = order
        .iter()
        .map(|k| OrderKey {
            expr: if k.on_output {
                k.expr.clone()
            } else {
                m(&k.expr)
            },
            ..k.clone()
        })
        .collect();
    Some((compacted, order))
}

/// A query that returns one stored table's rows, filtered, as bare columns in heap order: no
/// join, grouping, ordering, DISTINCT or LIMIT; possibly wrapped in a derived table that
/// selects bare columns of it (DuckDB's `SELECT "a", "b" FROM (SELECT a, b FROM t WHERE …)
/// AS __unnamed_subquery`). Binary COPY encodes such a result straight from the scanned rows
/// ([`Executor::copy_simple_scan`]).
pub struct SimpleScan<'q> {
    pub table: &'q TableRef,
    pub keys: Option<&'q KeyScan>,
    pub index: Option<usize>,
    pub filter: Option<&'q BExpr>,
    /// The table columns of the output, in order.
    pub cols: Vec<usize>,
    pub used: Option<Vec<bool>>,
}

pub fn simple_scan(q: &BQuery) -> Option<SimpleScan<'_>> {
    if !q.order.is_empty() || q.limit.is_some() || q.offset.is_some() {
        return None;
    }
    let sel = match &q.body {
        BSet::Select(sel) => sel,
        BSet::Query(inner) => return simple_scan(inner),
        _ => return None,
    };
    let [item] = sel.from.as_slice() else {
        return None;
    };
    if sel.group.is_some()
        || !sel.aggs.is_empty()
        || sel.having.is_some()
        || sel.distinct
        || sel.windowed.is_some()
        || sel.project_set.is_some()
        || sel.distinct_on.is_some()
        || item.kind.outer()
        || item.on.is_some()
        || !item.hash_keys.is_empty()
    {
        return None;
    }
    let cols = sel
        .projection
        .iter()
        .map(|p| match p {
            BExpr::Col(c) => Some(*c),
            _ => None,
        })
        .collect::<Option<Vec<usize>>>()?;
    match &item.source {
        Source::Table { table, keys, index } => Some(SimpleScan {
            table,
            keys: keys.as_ref(),
            index: *index,
            filter: sel.filter.as_ref(),
            used: used_columns(sel, &[]),
            cols,
        }),
        Source::Derived(inner) if sel.filter.is_none() => {
            let mut scan = simple_scan(inner)?;
            scan.cols = cols
                .iter()
                .map(|c| scan.cols.get(*c).copied())
                .collect::<Option<Vec<usize>>>()?;
            Some(scan)
        }
        _ => None,
    }
}

/// A filter made only of `column op constant` comparisons (constant on either side), ANDed,
/// evaluated without the general evaluator: the COPY fast path runs DuckDB's file-list filter
/// (`table_id = '7' AND begin_snapshot <= '812'`) on tens of thousands of kept rows.
pub struct ColumnFilter {
    /// (column, comparison, constant): the column on the left.
    terms: Vec<(usize, BinOp, Value)>,
}

impl ColumnFilter {
    /// `None` when `e` has another shape.
    pub fn of(e: &BExpr) -> Option<ColumnFilter> {
        let mut terms = Vec::new();
        for c in conjuncts(e.clone()) {
            let BExpr::Bin(op, a, b) = c else {
                return None;
            };
            if !op.is_comparison() {
                return None;
            }
            terms.push(match (*a, *b) {
                (BExpr::Col(i), BExpr::Const(v)) => (i, op, v),
                (BExpr::Const(v), BExpr::Col(i)) => (i, mirrored(op), v),
                _ => return None,
            });
        }
        Some(ColumnFilter { terms })
    }

    /// The column each term reads, in term order.
    pub fn columns(&self) -> Vec<usize> {
        self.terms.iter().map(|t| t.0).collect()
    }

    /// [`ColumnFilter::passes`] for row `i`, given the columns [`ColumnFilter::columns`] names
    /// as separate vectors.
    pub fn passes_at(&self, columns: &[std::sync::Arc<Vec<Value>>], i: usize) -> bool {
        self.terms
            .iter()
            .zip(columns)
            .all(|((_, op, v), col)| col.get(i).is_some_and(|x| holds(*op, x, v)))
    }

    /// Whether the condition is true for `row` (NULL is not).
    pub fn passes(&self, row: &[Value]) -> bool {
        self.terms
            .iter()
            .all(|(c, op, v)| row.get(*c).is_some_and(|x| holds(*op, x, v)))
    }
}

/// Whether `x op v` is true: integers (snapshot and table ids) compared directly, the rest as
/// the evaluator compares them.
fn holds(op: BinOp, x: &Value, v: &Value) -> bool {
    match (x, v) {
        (Value::Int(x), Value::Int(y)) => int_comparison(op, *x, *y),
        _ => matches!(compare_op(op, x, v), Value::Bool(true)),
    }
}

/// `x op y` for a comparison `op` of two integers.
fn int_comparison(op: BinOp, x: i64, y: i64) -> bool {
    match op {
        BinOp::Eq => x == y,
        BinOp::NotEq => x != y,
        BinOp::Lt => x < y,
        BinOp::LtEq => x <= y,
        BinOp::Gt => x > y,
        BinOp::GtEq => x >= y,
        _ => false,
    }
}

/// `op` with its operands swapped (`a < b` is `b > a`).
fn mirrored(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::LtEq => BinOp::GtEq,
        BinOp::Gt => BinOp::Lt,
        BinOp::GtEq => BinOp::LtEq,
        other => other,
    }
}

/// For each item of a select list, the column it moves out of the row (a bare column
/// reference, the first of its column), or `None` for an item that is evaluated (an
/// expression, a constant, a column listed again). Items are evaluated before any column
/// moves, so an expression still reads every column. Catalog joins select mostly columns
/// with a few constants (`NULL constraint_id`): their strings move instead of being copied.
fn projection_moves(projection: &[BExpr]) -> Vec<Option<usize>> {
    let mut moved: Vec<usize> = Vec::new();
    projection
        .iter()
        .map(|p| match p {
            BExpr::Col(c) if !moved.contains(c) => {
                moved.push(*c);
                Some(*c)
            }
            _ => None,
        })
        .collect()
}

/// Marks the columns `e` reads (`Col(i)` is column `offset + i`); `None` for a correlated
/// subquery or a column outside the row.
fn mark_columns(e: &BExpr, offset: usize, used: &mut [bool]) -> Option<()> {
    let mut ok = true;
    visit_exprs(e, &mut |x| match x {
        BExpr::Col(i) => match used.get_mut(offset + i) {
            Some(u) => *u = true,
            None => ok = false,
        },
        BExpr::Scalar(q) | BExpr::Exists(q, _) | BExpr::ArraySub(q) | BExpr::InSub(_, q, ..)
            if q.correlated() =>
        {
            ok = false
        }
        _ => {}
    });
    ok.then_some(())
}

/// Subqueries inside an expression (scalar, IN, EXISTS, ARRAY), outermost first.
fn subqueries(e: &BExpr, out: &mut Vec<Rc<BQuery>>) {
    visit_exprs(e, &mut |x| {
        if let BExpr::Scalar(q)
        | BExpr::Exists(q, _)
        | BExpr::ArraySub(q)
        | BExpr::InSub(_, q, ..) = x
        {
            out.push(q.clone());
        }
    });
}

/// A column of a virtual relation and the [`value_key`]s of the only values it needs.
type NeededKeys = (usize, KeySet);

/// A set of [`value_key`]s. A catalog build asks it once per candidate row, and the keys are
/// usually one table's name or OID, or a handful of types: up to [`KeySet::FEW`] keys are
/// compared in place (no hash of each candidate's key), more go to a hash set.
#[derive(Debug, Default)]
struct KeySet {
    few: Vec<Vec<u8>>,
    many: crate::keyhash::KeySetOf,
}

impl KeySet {
    const FEW: usize = 8;

    fn len(&self) -> usize {
        self.few.len() + self.many.len()
    }

    fn contains(&self, key: &[u8]) -> bool {
        if self.many.is_empty() {
            self.few.iter().any(|k| k.as_slice() == key)
        } else {
            self.many.contains(key)
        }
    }

    /// Adds `key` (no effect when present).
    fn insert(&mut self, key: Vec<u8>) {
        if self.contains(&key) {
            return;
        }
        if self.many.is_empty() && self.few.len() < Self::FEW {
            self.few.push(key);
            return;
        }
        self.many.extend(self.few.drain(..));
        self.many.insert(key);
    }
}

impl FromIterator<Vec<u8>> for KeySet {
    fn from_iter<I: IntoIterator<Item = Vec<u8>>>(iter: I) -> Self {
        let mut set = KeySet::default();
        for k in iter {
            set.insert(k);
        }
        set
    }
}

/// Keeps the columns `keep` (ascending indexes; past the row's end reads NULL) at the front of
/// `row`, in order, without another vector: each kept value is swapped down to its place,
/// which only ever moves a dropped value up (every later index kept is beyond both).
fn compact_in_place(row: &mut Vec<Value>, keep: &[usize]) {
    for (to, &from) in keep.iter().enumerate() {
        if from < row.len() {
            row.swap(to, from);
        } else if to < row.len() {
            std::mem::replace(&mut row[to], Value::Null).release();
        }
    }
    if row.len() > keep.len() {
        crate::types::truncate_row(row, keep.len());
    } else {
        row.resize(keep.len(), Value::Null);
    }
}

/// Most distinct key values [`Executor::needed_keys`] collects for a virtual relation; with
/// more, it builds every row.
const NEEDED_KEYS_MAX: usize = 4096;

/// Most key ranges one scan is split into (an `IN` list per key column multiplies them).
const MAX_KEY_PREFIXES: usize = 1024;

/// Narrows the scan of the first FROM item to the key prefixes its WHERE clause fixes (`k =
/// v`, `k IN (…)` on leading columns of the primary key or an index, ANDed), each narrowed
/// further by bounds on the next key column when it is an integer (`k > v`, `k <= v`,
/// `BETWEEN`); without a prefix, by bounds on a leading integer key column alone. The filter
/// still runs on every row read, so this only skips rows that could not pass it. Later FROM
/// items may be the nullable side of an outer join and are left alone.
pub fn push_down_keys(from: &mut [FromItem], filter: Option<&BExpr>) {
    let (Some((first, rest)), Some(filter)) = (from.split_first_mut(), filter) else {
        return;
    };
    let width = first.width;
    let Source::Table { table, keys, index } = &mut first.source else {
        return;
    };
    if table.primary_key.is_empty() && table.indexes.is_empty() {
        return;
    }
    let mut eq: HashMap<usize, BExpr> = HashMap::new();
    let mut lists: HashMap<usize, Vec<BExpr>> = HashMap::new();
    let mut ranges: HashMap<usize, KeyRange> = HashMap::new();
    for c in conjuncts(filter.clone()) {
        match c {
            // `WHERE false`, or a strict comparison with NULL folded away: no row passes, so
            // none is read (a NULL bound on the leading key column is the empty scan).
            BExpr::Const(Value::Null | Value::Bool(false)) => {
                let leading = table
                    .primary_key
                    .first()
                    .map(|_| None)
                    .or_else(|| table.indexes.first().map(|_| Some(0)));
                if let Some(n) = leading {
                    *keys = Some(KeyScan {
                        prefixes: vec![vec![]],
                        range: Some(KeyRange {
                            lo: Some((BExpr::Const(Value::Null), true)),
                            hi: None,
                        }),
                    });
                    *index = n;
                }
                return;
            }
            BExpr::Bin(BinOp::Eq, a, b) => {
                let (col, val) = match (*a, *b) {
                    (BExpr::Col(i), v) | (v, BExpr::Col(i)) if i < width => (i, v),
                    _ => continue,
                };
                if runtime_const(&val) {
                    eq.entry(col).or_insert(val);
                } else if let Some(list) = constant_column(rest, width, &val) {
                    lists.entry(col).or_insert(list);
                }
            }
            BExpr::Bin(op @ (BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq), a, b) => {
                // `v < k` is `k > v`.
                let (col, val, op) = match (*a, *b) {
                    (BExpr::Col(i), v) if i < width => (i, v, op),
                    (v, BExpr::Col(i)) if i < width => (i, v, mirrored(op)),
                    _ => continue,
                };
                if !runtime_const(&val) {
                    continue;
                }
                let r = ranges.entry(col).or_default();
                let (slot, inclusive) = match op {
                    BinOp::Gt => (&mut r.lo, false),
                    BinOp::GtEq => (&mut r.lo, true),
                    BinOp::Lt => (&mut r.hi, false),
                    _ => (&mut r.hi, true),
                };
                // Any one bound of several narrows the scan correctly.
                slot.get_or_insert((val, inclusive));
            }
            BExpr::InList(a, list, false) => {
                if let BExpr::Col(i) = *a {
                    if i < width && !list.is_empty() && list.iter().all(runtime_const) {
                        lists.entry(i).or_insert(list);
                    }
                }
            }
            _ => {}
        }
    }
    // Bounds only on integer columns, the only bounded key columns DuckLake has (a text key's
    // escaped encoding also sorts like its bytes, but no test holds a bounded scan of one to
    // the comparison's answer).
    ranges.retain(|c, _| {
        table
            .columns
            .get(*c)
            .is_some_and(|col| matches!(col.ty, PgType::Int2 | PgType::Int4 | PgType::Int8))
    });
    let scan_of = |cols: &[usize], prefixes: Vec<Vec<BExpr>>| {
        let next = prefixes.first().map_or(0, Vec::len);
        let range = cols.get(next).and_then(|c| ranges.get(c)).cloned();
        KeyScan { prefixes, range }
    };
    // The primary key when the condition fixes its leading column, else the index whose
    // leading columns it fixes most of, else bounds on a leading column.
    let pk = key_prefixes_for(&table.primary_key, &eq, &lists);
    if !pk.is_empty() {
        *keys = Some(scan_of(&table.primary_key, pk));
        return;
    }
    let best = table
        .indexes
        .iter()
        .enumerate()
        .map(|(n, ix)| (n, key_prefixes_for(&ix.columns, &eq, &lists)))
        .filter(|(_, p)| !p.is_empty())
        .max_by_key(|(n, p)| (p.first().map_or(0, Vec::len), usize::MAX - n));
    if let Some((n, p)) = best {
        *keys = Some(scan_of(&table.indexes[n].columns, p));
        *index = Some(n);
        return;
    }
    let leading = std::iter::once((None, &table.primary_key)).chain(
        table
            .indexes
            .iter()
            .enumerate()
            .map(|(n, ix)| (Some(n), &ix.columns)),
    );
    for (n, cols) in leading {
        if let Some(r) = cols.first().and_then(|c| ranges.get(c)) {
            *keys = Some(KeyScan {
                prefixes: vec![vec![]],
                range: Some(r.clone()),
            });
            *index = n;
            return;
        }
    }
}

/// The values `e` takes when it reads one column of a later FROM item whose rows are
/// constants (a `VALUES` list, or a CTE that is one), perhaps cast: DuckLake's commits name
/// the catalog rows they change that way (`WITH new_values(tid, cid, …) AS (VALUES …) UPDATE
/// ducklake_table_column_stats … FROM new_values WHERE table_id = tid AND column_id = cid`),
/// so `key = e` fixes the key as `key IN (those values)` would. Distinct values, at most
/// [`MAX_KEY_PREFIXES`]; `None` for anything else.
fn constant_column(rest: &[FromItem], first_width: usize, e: &BExpr) -> Option<Vec<BExpr>> {
    let (col, cast) = match e {
        BExpr::Col(j) => (*j, None),
        BExpr::Cast(x, ty) => match x.as_ref() {
            BExpr::Col(j) => (*j, Some(*ty)),
            _ => return None,
        },
        _ => return None,
    };
    let mut start = first_width;
    let item = rest.iter().find(|item| {
        let here = col >= start && col < start + item.width;
        start += item.width;
        here
    })?;
    let at = col - (start - item.width);
    let rows = match &item.source {
        Source::Values(rows) => rows,
        Source::Derived(q) if q.order.is_empty() && q.limit.is_none() && q.offset.is_none() => {
            match &q.body {
                BSet::Values(rows) => rows,
                _ => return None,
            }
        }
        _ => return None,
    };
    let mut values: Vec<BExpr> = Vec::new();
    for row in rows {
        let v = row.get(at)?;
        if !runtime_const(v) {
            return None;
        }
        let seen = values.iter().any(|x| match (x, v) {
            (BExpr::Const(a), BExpr::Const(b)) => a == b,
            _ => false,
        });
        if !seen {
            if values.len() == MAX_KEY_PREFIXES {
                return None;
            }
            values.push(v.clone());
        }
    }
    if values.is_empty() {
        return None;
    }
    Some(match cast {
        Some(ty) => values
            .into_iter()
            .map(|v| BExpr::Cast(Box::new(v), ty))
            .collect(),
        None => values,
    })
}

/// Gives each FROM item of a join the WHERE conjuncts that read only its own columns, as its
/// `pre_filter`, so rows that cannot pass are dropped before they are joined rather than after
/// (DuckDB's per-table column query joins seven catalogs and keeps one table's columns). Left
/// alone: the nullable side of a LEFT JOIN (NULL padding may pass a condition its rows fail),
/// and conjuncts with subqueries or parameters.
pub fn push_down_filters(from: &mut [FromItem], filter: Option<BExpr>) -> Option<BExpr> {
    let filter = filter?;
    // One item: the WHERE clause filters each row as it is read, except that a virtual
    // relation builds its rows first (a conjunct pushed to it can narrow what it builds).
    if from.len() < 2
        && !matches!(
            from.first().map(|f| &f.source),
            Some(Source::Virtual { .. })
        )
    {
        return Some(filter);
    }
    let width: usize = from.iter().map(|f| f.width).sum();
    let mut residual: Option<BExpr> = None;
    for c in conjuncts(filter) {
        if let Some(c) = push_conjunct(from, width, c) {
            residual = Some(match residual {
                Some(r) => BExpr::And(Box::new(r), Box::new(c)),
                None => c,
            });
        }
    }
    residual
}

/// Turns WHERE equalities between a column of an inner or comma-joined item and one of the
/// items before it into that item's hash-join keys, as a JOIN … ON condition would be
/// (`FROM a, b WHERE a.id = b.a_id`). Without this, a comma join is the whole cross product
/// filtered afterwards: JDBC's metadata queries join nine catalogs that way. Same conditions
/// as an ON condition's keys: column sides of [`hash_joinable`] types, an item that is not
/// read laterally and not a null side.
fn push_down_join_keys(
    from: &mut [FromItem],
    filter: Option<BExpr>,
    cols: &[ColMeta],
) -> Option<BExpr> {
    let filter = filter?;
    if from.len() < 2 {
        return Some(filter);
    }
    let starts: Vec<usize> = from
        .iter()
        .scan(0, |at, item| {
            let s = *at;
            *at += item.width;
            Some(s)
        })
        .collect();
    let item_of = |col: usize| starts.iter().rposition(|s| *s <= col);
    let null_side: Vec<bool> = (0..from.len())
        .map(|i| {
            from[i].kind.keeps_unmatched_left()
                || from[i + 1..]
                    .iter()
                    .any(|it| it.kind.keeps_unmatched_right())
        })
        .collect();
    let mut residual: Option<BExpr> = None;
    for c in conjuncts(filter) {
        let key = match &c {
            BExpr::Bin(BinOp::Eq, l, r)
                if hash_joinable(side_type(l, cols), side_type(r, cols)) =>
            {
                match (
                    col_range(l).and_then(item_of),
                    col_range(r).and_then(item_of),
                ) {
                    (Some(a), Some(b)) if a != b => {
                        let (k, earlier, own) = if a > b { (a, r, l) } else { (b, l, r) };
                        let item = &from[k];
                        let fits = matches!(item.kind, JoinKind::Cross | JoinKind::Inner)
                            && item.lateral != Lateral::Read
                            && !null_side[k]
                            && !has_param(&c);
                        fits.then(|| {
                            let start = starts[k];
                            (k, (**earlier).clone(), map_cols(own, &|i| i - start))
                        })
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        match key {
            Some((k, left, right)) => from[k].hash_keys.push((left, right)),
            None => {
                residual = Some(match residual {
                    Some(r) => BExpr::And(Box::new(r), Box::new(c)),
                    None => c,
                })
            }
        }
    }
    residual
}

/// Moves one WHERE conjunct to the item whose columns it alone reads, unless that item is the
/// null side of a LEFT JOIN; gives it back when it stays in the WHERE clause. A conjunct an
/// inner item's rows pass before the join holds for every joined row they make (a LEFT JOIN
/// keeps its left rows as they are), so it is not evaluated again there.
fn push_conjunct(from: &mut [FromItem], width: usize, c: BExpr) -> Option<BExpr> {
    let mut used = vec![false; width];
    let mut subs = Vec::new();
    subqueries(&c, &mut subs);
    if !subs.is_empty() || has_param(&c) || mark_columns(&c, 0, &mut used).is_none() {
        return Some(c);
    }
    let (Some(lo), Some(hi)) = (used.iter().position(|u| *u), used.iter().rposition(|u| *u)) else {
        return Some(c);
    };
    let mut start = 0;
    // An item is a null side when it is joined by LEFT or FULL JOIN, or a later item by RIGHT
    // or FULL JOIN.
    let later_keeps_right: Vec<bool> = (0..from.len())
        .map(|i| {
            from[i + 1..]
                .iter()
                .any(|it| it.kind.keeps_unmatched_right())
        })
        .collect();
    for (idx, item) in from.iter_mut().enumerate() {
        let end = start + item.width;
        if lo >= start && hi < end {
            if item.kind.keeps_unmatched_left() || later_keeps_right[idx] {
                return Some(c);
            }
            let own = map_cols(&c, &|i| i - start);
            item.pre_filter = Some(match item.pre_filter.take() {
                Some(p) => BExpr::And(Box::new(p), Box::new(own)),
                None => own,
            });
            return None;
        }
        start = end;
    }
    Some(c)
}

fn has_param(e: &BExpr) -> bool {
    let mut found = false;
    visit_exprs(e, &mut |x| found |= matches!(x, BExpr::Param(..)));
    found
}

/// Calls `f` on `e` and every expression inside it (not inside subqueries).
fn visit_exprs(e: &BExpr, f: &mut dyn FnMut(&BExpr)) {
    f(e);
    match e {
        BExpr::Bin(_, a, b)
        | BExpr::And(a, b)
        | BExpr::Or(a, b)
        | BExpr::IsDistinct(a, b, _)
        | BExpr::Like(a, b, _, _)
        | BExpr::AnyArray(_, a, b, ..) => {
            visit_exprs(a, f);
            visit_exprs(b, f);
        }
        BExpr::Not(x)
        | BExpr::Neg(x)
        | BExpr::IsNull(x, _)
        | BExpr::Cast(x, _)
        | BExpr::InSub(x, ..) => visit_exprs(x, f),
        BExpr::InList(x, l, _) => {
            visit_exprs(x, f);
            l.iter().for_each(|y| visit_exprs(y, f));
        }
        BExpr::Func(_, args) => args.iter().for_each(|a| visit_exprs(a, f)),
        BExpr::Case(a, whens, el) => {
            if let Some(a) = a {
                visit_exprs(a, f);
            }
            for (w, t) in whens {
                visit_exprs(w, f);
                visit_exprs(t, f);
            }
            if let Some(x) = el {
                visit_exprs(x, f);
            }
        }
        BExpr::Const(_)
        | BExpr::Col(_)
        | BExpr::Outer(..)
        | BExpr::Agg(_)
        | BExpr::Win(_)
        | BExpr::Srf(_)
        | BExpr::Param(..)
        | BExpr::Scalar(_)
        | BExpr::Exists(..)
        | BExpr::ArraySub(_) => {}
    }
}

/// `e` with every column reference `Col(i)` replaced by `Col(f(i))` (subqueries as they are).
fn map_cols(e: &BExpr, f: &dyn Fn(usize) -> usize) -> BExpr {
    let m = |x: &BExpr| Box::new(map_cols(x, f));
    match e {
        BExpr::Col(i) => BExpr::Col(f(*i)),
        BExpr::Bin(op, a, b) => BExpr::Bin(*op, m(a), m(b)),
        BExpr::And(a, b) => BExpr::And(m(a), m(b)),
        BExpr::Or(a, b) => BExpr::Or(m(a), m(b)),
        BExpr::IsDistinct(a, b, not) => BExpr::IsDistinct(m(a), m(b), *not),
        BExpr::Like(a, b, ci, not) => BExpr::Like(m(a), m(b), *ci, *not),
        BExpr::AnyArray(op, a, b, all, t) => BExpr::AnyArray(*op, m(a), m(b), *all, *t),
        BExpr::Not(x) => BExpr::Not(m(x)),
        BExpr::Neg(x) => BExpr::Neg(m(x)),
        BExpr::IsNull(x, not) => BExpr::IsNull(m(x), *not),
        BExpr::Cast(x, t) => BExpr::Cast(m(x), *t),
        BExpr::InSub(x, q, op, all) => BExpr::InSub(m(x), q.clone(), *op, *all),
        BExpr::InList(x, l, not) => {
            BExpr::InList(m(x), l.iter().map(|y| map_cols(y, f)).collect(), *not)
        }
        BExpr::Func(name, args) => {
            BExpr::Func(name.clone(), args.iter().map(|a| map_cols(a, f)).collect())
        }
        BExpr::Case(a, whens, el) => BExpr::Case(
            a.as_deref().map(m),
            whens
                .iter()
                .map(|(w, t)| (map_cols(w, f), map_cols(t, f)))
                .collect(),
            el.as_deref().map(m),
        ),
        other => other.clone(),
    }
}

/// Key prefixes (as expressions) that a condition's `=`/`IN` conjuncts fix on the leading
/// `cols`; empty when it fixes none.
fn key_prefixes_for(
    cols: &[usize],
    eq: &HashMap<usize, BExpr>,
    lists: &HashMap<usize, Vec<BExpr>>,
) -> Vec<Vec<BExpr>> {
    let mut prefixes: Vec<Vec<BExpr>> = vec![vec![]];
    for col in cols {
        if let Some(v) = eq.get(col) {
            for p in &mut prefixes {
                p.push(v.clone());
            }
        } else if let Some(list) = lists.get(col) {
            if prefixes.len() * list.len() > MAX_KEY_PREFIXES {
                break;
            }
            prefixes = prefixes
                .iter()
                .flat_map(|p| {
                    list.iter().map(move |v| {
                        let mut q = p.clone();
                        q.push(v.clone());
                        q
                    })
                })
                .collect();
        } else {
            break;
        }
    }
    if prefixes.first().is_some_and(|p| !p.is_empty()) {
        prefixes
    } else {
        vec![]
    }
}

/// Whether `v` is stored under the key encoding of a column of type `ty` (so a key built from
/// it finds the rows equal to it).
fn key_compatible(v: &Value, ty: PgType) -> bool {
    matches!(
        (v, ty),
        (
            Value::Int(_),
            PgType::Int2 | PgType::Int4 | PgType::Int8 | PgType::Oid
        ) | (
            Value::Text(_),
            PgType::Text | PgType::Varchar | PgType::Name
        ) | (Value::Uuid(_), PgType::Uuid)
            | (Value::Bool(_), PgType::Bool)
            | (Value::Bytes(_), PgType::Bytea)
            | (Value::Date(_), PgType::Date)
            | (Value::Timestamp(_), PgType::Timestamptz | PgType::Timestamp)
    )
}

fn conjuncts(e: BExpr) -> Vec<BExpr> {
    match e {
        BExpr::And(a, b) => {
            let mut v = conjuncts(*a);
            v.extend(conjuncts(*b));
            v
        }
        other => vec![other],
    }
}

/// The column index range an expression reads (only for plain column references).
fn col_range(e: &BExpr) -> Option<usize> {
    match e {
        BExpr::Col(i) => Some(*i),
        BExpr::Cast(x, _) => col_range(x),
        _ => None,
    }
}

// ------------------------------------------------------------------ evaluation

/// The rows of enclosing queries, for correlated references.
/// Output rows, each with its ORDER BY keys that are not output columns.
type KeyedRows = Vec<(Vec<Value>, Vec<Value>)>;

/// `SELECT DISTINCT`: the first of each set of equal output rows.
fn distinct_rows(sel: &BSelect, mut out: KeyedRows) -> KeyedRows {
    if sel.distinct {
        let mut seen = HashSet::new();
        out.retain(|(row, _)| seen.insert(value_key(row)));
    }
    out
}

/// Rows a subquery gave, shared by every evaluation that reads them.
type SharedRows = Rc<Vec<Vec<Value>>>;

/// How many distinct outer-value sets of correlated subqueries one statement keeps rows for.
const MAX_KEPT_CORRELATED: usize = 16_384;

/// The query and the outer values it reads, exactly as held (`1.0` and `1.00` differ: the
/// subquery may print them), or `None` if a reference leads past the outermost row.
fn correlation_key(q: &BQuery, env: &Env<'_>) -> Option<String> {
    let mut key = format!("{};", q.id);
    for &(hops, col) in &q.outer_refs {
        let mut cur = env;
        for _ in 0..hops {
            cur = cur.parent?;
        }
        key.push_str(&format!("{:?};", cur.row.get(col)?));
    }
    Some(key)
}

pub struct Env<'r> {
    pub row: &'r [Value],
    pub parent: Option<&'r Env<'r>>,
    pub aggs: Option<&'r [Value]>,
}

pub struct Executor<'a, 'b> {
    pub cx: &'a ReadCx<'b>,
    cache: RefCell<HashMap<usize, Rc<Vec<Vec<Value>>>>>,
    /// Rows of correlated subqueries by the outer values they read, as PostgreSQL reruns a
    /// subplan only when its parameters change: [`correlation_key`] → rows.
    correlated_rows: RefCell<HashMap<String, SharedRows>>,
    /// The working tables of the recursive queries being run, by [`BSet::WorkTable`] id.
    worktables: RefCell<HashMap<usize, SharedRows>>,
    /// Rows after which a recursive query may stop: its reader needs no more.
    row_goals: RefCell<HashMap<usize, usize>>,
    /// Rows the next plain select's projection may stop after (a LIMIT with nothing between
    /// it and the select): the rows past it are never projected, so their expressions are not
    /// evaluated (nor their errors raised), as in PostgreSQL's pipeline.
    select_goal: std::cell::Cell<Option<usize>>,
    /// `set_config` calls evaluated so far, applied in order once the statement's rows are
    /// complete (the executor only reads the session). `None`: the statement cannot apply
    /// them (not a plain query), so `set_config` is refused instead of silently dropped.
    set_configs: Option<RefCell<Vec<crate::settings::SetConfig>>>,
    /// What `pg_cancel_backend` / `pg_terminate_backend` calls leave for the caller, in
    /// order; `None` as for `set_configs`.
    effects: Option<RefCell<Vec<Effect>>>,
}

/// A consequence of a statement beyond its rows, passed to the session once they are
/// complete.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Effect {
    /// The host signals another session's backend.
    Signal { pid: i32, terminate: bool },
    /// A WARNING sent before the statement's answer.
    Notice(crate::error::Notice),
    /// `pg_export_snapshot()` named the commit point the statement reads.
    ExportSnapshot { id: String, point: u64 },
}

pub(crate) fn truthy(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

/// [`value_key`] of one value: array elements compared as IS NOT DISTINCT FROM.
fn element_key(v: &Value) -> Vec<u8> {
    value_key(std::slice::from_ref(v))
}

/// A hashable, exact key for a row of values: equal values (in SQL's sense, across integer and
/// numeric representations) give equal keys, unequal ones different keys. Only ever hashed and
/// compared for equality (joins, GROUP BY, DISTINCT, IN sets), never ordered.
pub fn value_key(vals: &[Value]) -> Vec<u8> {
    let mut k = Vec::with_capacity(vals.len() * 10);
    for v in vals {
        push_value_key(&mut k, v);
    }
    k
}

/// One value's part of [`value_key`], appended to `k`.
fn push_value_key(k: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Int(i) => int_key(k, *i),
        Value::Numeric(s) => {
            // Trailing fractional zeros do not change the value.
            let t = if s.contains('.') {
                s.trim_end_matches('0').trim_end_matches('.')
            } else {
                s.as_str()
            };
            match t.parse::<i64>() {
                // An integral numeric meets the integer of the same value.
                Ok(i) => int_key(k, i),
                Err(_) => {
                    crate::keys::encode_field(k, &Value::Numeric(t.to_string()), PgType::Numeric)
                }
            }
        }
        Value::Text(_) => crate::keys::encode_field(k, v, PgType::Text),
        // PostgreSQL's interval equality compares spans, a month as 30 days and a day as 24
        // hours (`interval_cmp_value`): `1 day` and `24:00:00` are one group.
        Value::Interval(iv) => {
            const DAY: i128 = 86_400_000_000;
            let span =
                (i128::from(iv.months) * 30 + i128::from(iv.days)) * DAY + i128::from(iv.micros);
            k.push(0x04);
            k.extend_from_slice(&span.to_be_bytes());
        }
        // PostgreSQL's float equality: -0 is 0, and every NaN is the same NaN.
        Value::Float(f) if *f == 0.0 || f.is_nan() => {
            let canonical = if f.is_nan() { f64::NAN } else { 0.0 };
            crate::keys::encode_field(k, &Value::Float(canonical), PgType::Bytea)
        }
        // An array (or a record) is equal element by element, each by its own equality
        // (`{1.5}` and `{1.50}` are one group): its length, then each element's key.
        Value::Array(items) => {
            k.push(0x0A);
            k.extend_from_slice(&(items.len() as u64).to_be_bytes());
            for item in items.iter() {
                push_value_key(k, item);
            }
        }
        other => crate::keys::encode_field(k, other, PgType::Bytea),
    }
}

/// [`push_value_key`] of the value a catalog probe stands for (an OID is the `Int` the row
/// holds, a name its `Text`), built without that value. `false` for NULL, which no key meets.
fn push_probe_key(k: &mut Vec<u8>, p: crate::pgcatalog::Probe<'_>) -> bool {
    use crate::pgcatalog::Probe;
    match p {
        Probe::Value(v) if v.is_null() => return false,
        Probe::Value(v) => push_value_key(k, v),
        Probe::Oid(oid) => int_key(k, i64::from(oid)),
        Probe::Name(prefix, name) => crate::keys::encode_text_parts(k, &[prefix, name]),
    }
    true
}

/// An integer's part of [`value_key`]: a mark no encoded field starts with (those start with
/// the NULL or value mark, 0x00 / 0x01), then the 8 bytes.
fn int_key(k: &mut Vec<u8>, i: i64) {
    k.push(0x03);
    k.extend_from_slice(&i.to_be_bytes());
}

/// PostgreSQL's `like_escape(pattern, escape)`: the pattern rewritten to escape with a
/// backslash instead of `escape` (an empty escape: none, every backslash literal).
fn like_escape(p: &str, escape: &str) -> Result<String, SqlError> {
    let mut chars = escape.chars();
    let e = match (chars.next(), chars.next()) {
        (None, _) => return Ok(p.replace('\\', "\\\\")),
        (Some('\\'), None) => return Ok(p.to_string()),
        (Some(e), None) => e,
        _ => {
            return Err(SqlError::InvalidEscape {
                message: "invalid escape string".into(),
                hint: Some("Escape string must be empty or one character.".into()),
            })
        }
    };
    let mut out = String::with_capacity(p.len() + 2);
    let mut after_escape = false;
    for c in p.chars() {
        if c == e && !after_escape {
            out.push('\\');
            after_escape = true;
        } else if c == '\\' {
            out.push('\\');
            if !after_escape {
                out.push('\\');
            }
            after_escape = false;
        } else {
            out.push(c);
            after_escape = false;
        }
    }
    Ok(out)
}

/// SQL LIKE: `%` any run, `_` one character, `\\` escapes the next. Works on the strings in
/// place (byte offsets, characters decoded as met): it runs once per scanned row. A pattern
/// ending in the escape character is PostgreSQL's 22025 when matching reaches it.
fn like_match(s: &str, p: &str, ci: bool) -> Result<bool, SqlError> {
    // Iterative wildcard matching with backtracking on the last '%'.
    let at = |t: &str, i: usize| t[i..].chars().next();
    let eq = |a: char, b: char| {
        if ci {
            a.to_lowercase().eq(b.to_lowercase())
        } else {
            a == b
        }
    };
    let (mut si, mut pi) = (0usize, 0usize);
    let (mut star, mut mark) = (None::<usize>, 0usize);
    while let Some(c) = at(s, si) {
        let pc = at(p, pi);
        let escaped = match pc {
            Some('\\') => match at(p, pi + 1) {
                None => {
                    return Err(SqlError::InvalidEscape {
                        message: "LIKE pattern must not end with escape character".into(),
                        hint: None,
                    })
                }
                e => e,
            },
            _ => None,
        };
        if let Some(e) = escaped.filter(|e| eq(c, *e)) {
            si += c.len_utf8();
            pi += 1 + e.len_utf8();
        } else if pc.is_some_and(|q| q == '_' || (q != '%' && q != '\\' && eq(c, q))) {
            si += c.len_utf8();
            pi += pc.map_or(0, char::len_utf8);
        } else if pc == Some('%') {
            star = Some(pi);
            mark = si;
            pi += 1;
        } else if let Some(st) = star {
            pi = st + 1;
            mark += at(s, mark).map_or(1, char::len_utf8);
            si = mark;
        } else {
            return Ok(false);
        }
    }
    Ok(p[pi..].bytes().all(|b| b == b'%'))
}

impl<'a, 'b> Executor<'a, 'b> {
    /// The sequence relation `oid` names (PostgreSQL's errors for a table or no relation).
    fn sequence_of(&self, oid: i64) -> Result<TableRef, SqlError> {
        let t = u32::try_from(oid)
            .ok()
            .and_then(|o| self.cx.relation_by_oid(o))
            .ok_or(SqlError::NoRelationWithOid { oid })?;
        match t {
            (t, false) if t.sequence.is_some() => Ok(t),
            (t, is_index) => Err(SqlError::WrongObjectType {
                message: format!(
                    "\"{}\" is not a sequence",
                    if is_index { &t.pkey_name } else { &t.name }
                ),
            }),
        }
    }

    /// `nextval`, `setval`, `currval`, `lastval` over bound arguments (NULL in, NULL out).
    fn sequence_call(&self, name: &str, a: &[Value]) -> Result<Value, SqlError> {
        if a.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        if matches!(name, "nextval" | "setval") && self.cx.read_only() {
            return Err(SqlError::ReadOnlyTransaction {
                what: format!("{name}()"),
            });
        }
        let int = |i: usize| match a.get(i) {
            Some(Value::Int(n)) => Ok(*n),
            _ => Err(SqlError::internal(format!(
                "{name}: argument {i} is not bigint"
            ))),
        };
        if name == "lastval" {
            let sess = self.cx.seqs.borrow();
            // The sequence must still exist (and be visible to this transaction).
            let value = sess
                .last_used
                .filter(|id| self.cx.sequences().iter().any(|t| t.id == *id))
                .and_then(|id| sess.current.get(&id));
            return match value {
                Some(v) => Ok(Value::Int(*v)),
                None => Err(SqlError::NotInPrerequisiteState {
                    message: "lastval is not yet defined in this session".into(),
                }),
            };
        }
        let t = self.sequence_of(int(0)?)?;
        let Some(def) = t.sequence.as_deref() else {
            return Err(SqlError::internal("sequence without definition"));
        };
        let mut states = self.cx.st.sequences.borrow_mut();
        let mut sess = self.cx.seqs.borrow_mut();
        let v = match name {
            "nextval" => crate::sequence::nextval(&mut states, &mut sess, &t, def)?,
            "setval" => {
                let called = !matches!(a.get(2), Some(Value::Bool(false)));
                crate::sequence::setval(&mut states, &mut sess, &t, def, int(1)?, called)?
            }
            _ => match sess.current.get(&t.id) {
                Some(v) => *v,
                None => {
                    return Err(SqlError::NotInPrerequisiteState {
                        message: format!(
                            "currval of sequence \"{}\" is not yet defined in this session",
                            t.name
                        ),
                    })
                }
            },
        };
        Ok(Value::Int(v))
    }

    /// An executor for a plain query, whose caller applies the `set_config` calls it makes.
    pub(crate) fn with_set_config(cx: &'a ReadCx<'b>) -> Self {
        Executor {
            set_configs: Some(RefCell::new(Vec::new())),
            effects: Some(RefCell::new(Vec::new())),
            ..Executor::new(cx)
        }
    }

    /// The signals and warnings of the statement's `pg_cancel_backend` /
    /// `pg_terminate_backend` calls, in order.
    pub(crate) fn take_effects(&self) -> Vec<Effect> {
        self.effects
            .as_ref()
            .map(|c| std::mem::take(&mut *c.borrow_mut()))
            .unwrap_or_default()
    }

    /// The `set_config` calls the statement made, in order (see [`crate::settings::SetConfig`]).
    pub(crate) fn take_set_configs(&self) -> Vec<crate::settings::SetConfig> {
        self.set_configs
            .as_ref()
            .map(|c| std::mem::take(&mut *c.borrow_mut()))
            .unwrap_or_default()
    }

    pub fn new(cx: &'a ReadCx<'b>) -> Self {
        Executor {
            cx,
            cache: RefCell::new(HashMap::new()),
            correlated_rows: RefCell::new(HashMap::new()),
            worktables: RefCell::new(HashMap::new()),
            row_goals: RefCell::new(HashMap::new()),
            select_goal: std::cell::Cell::new(None),
            set_configs: None,
            effects: None,
        }
    }

    pub fn eval(&self, e: &BExpr, env: &Env<'_>) -> Result<Value, SqlError> {
        Ok(match e {
            BExpr::Const(v) => v.clone(),
            // Only described statements hold parameters, and those are never executed.
            BExpr::Param(..) => Value::Null,
            BExpr::Col(i) => env.row.get(*i).cloned().unwrap_or(Value::Null),
            BExpr::Outer(depth, i) => {
                let mut cur = env;
                for _ in 0..*depth {
                    cur = cur
                        .parent
                        .ok_or_else(|| SqlError::internal("outer reference without outer row"))?;
                }
                cur.row.get(*i).cloned().unwrap_or(Value::Null)
            }
            BExpr::Agg(i) => env
                .aggs
                .and_then(|a| a.get(*i))
                .cloned()
                .ok_or_else(|| SqlError::internal("aggregate outside group"))?,
            // Rewritten into columns when the select is bound.
            BExpr::Win(_) => return Err(SqlError::internal("window call outside its select")),
            BExpr::Srf(_) => {
                return Err(SqlError::internal(
                    "set-returning call outside its select list",
                ))
            }
            BExpr::Bin(op, l, r) => {
                // Comparisons of columns and constants (most WHERE conjuncts) read the values
                // in place instead of copying them.
                if let (Some(a), Some(b), true) = (peek(l, env), peek(r, env), op.is_comparison()) {
                    return Ok(compare_op(*op, a, b));
                }
                let a = self.eval(l, env)?;
                let b = self.eval(r, env)?;
                binop(*op, a, b)?
            }
            BExpr::And(l, r) => {
                let a = truthy(&self.eval(l, env)?);
                if a == Some(false) {
                    return Ok(Value::Bool(false));
                }
                let b = truthy(&self.eval(r, env)?);
                match (a, b) {
                    (_, Some(false)) => Value::Bool(false),
                    (Some(true), Some(true)) => Value::Bool(true),
                    _ => Value::Null,
                }
            }
            BExpr::Or(l, r) => {
                let a = truthy(&self.eval(l, env)?);
                if a == Some(true) {
                    return Ok(Value::Bool(true));
                }
                let b = truthy(&self.eval(r, env)?);
                match (a, b) {
                    (_, Some(true)) => Value::Bool(true),
                    (Some(false), Some(false)) => Value::Bool(false),
                    _ => Value::Null,
                }
            }
            BExpr::Not(x) => match truthy(&self.eval(x, env)?) {
                Some(b) => Value::Bool(!b),
                None => Value::Null,
            },
            BExpr::Neg(x) => match self.eval(x, env)? {
                Value::Int(i) => Value::Int(i.checked_neg().ok_or(BIGINT_OUT_OF_RANGE)?),
                Value::Float(f) => Value::Float(-f),
                Value::Numeric(s) => Value::Numeric(numeric_neg(&s)),
                Value::Interval(iv) => Value::Interval(crate::types::Interval {
                    months: -iv.months,
                    days: -iv.days,
                    micros: -iv.micros,
                }),
                Value::Null => Value::Null,
                other => return Err(SqlError::feature(format!("negation of {other:?}"))),
            },
            BExpr::IsNull(x, neg) => Value::Bool(self.eval(x, env)?.is_null() != *neg),
            BExpr::IsDistinct(a, b, neg) => {
                let x = self.eval(a, env)?;
                let y = self.eval(b, env)?;
                let distinct = match (&x, &y) {
                    (Value::Null, Value::Null) => false,
                    (Value::Null, _) | (_, Value::Null) => true,
                    _ => compare(&x, &y) != std::cmp::Ordering::Equal,
                };
                Value::Bool(distinct != *neg)
            }
            BExpr::InList(x, items, neg) => {
                let v = self.eval(x, env)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let mut saw_null = false;
                for it in items {
                    let w = self.eval(it, env)?;
                    if w.is_null() {
                        saw_null = true;
                    } else if compare(&v, &w) == std::cmp::Ordering::Equal {
                        return Ok(Value::Bool(!*neg));
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    Value::Bool(*neg)
                }
            }
            BExpr::InSub(x, q, op, all) => {
                // PostgreSQL's quantified comparison: ANY is true if one comparison is true,
                // ALL false if one is false; otherwise NULL if one was NULL. Over no rows ANY
                // is false and ALL true, whatever the left side is.
                let v = self.eval(x, env)?;
                let rows = self.subquery_rows(q, env)?;
                let mut saw_null = false;
                for r in rows.iter() {
                    let w = r.first().unwrap_or(&Value::Null);
                    match compare_op(*op, &v, w) {
                        Value::Bool(b) if b != *all => return Ok(Value::Bool(b)),
                        Value::Null => saw_null = true,
                        _ => {}
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    Value::Bool(*all)
                }
            }
            BExpr::Exists(q, neg) => Value::Bool(self.subquery_rows(q, env)?.is_empty() == *neg),
            BExpr::AnyArray(op, l, r, all, ty) => {
                let lv = self.eval(l, env)?;
                let Value::Array(items) = self.eval(r, env)? else {
                    return Ok(Value::Null);
                };
                // ANY: true if one comparison is true; ALL: false if one is false; otherwise
                // NULL when a comparison was NULL.
                let mut saw_null = false;
                for item in items.iter().cloned() {
                    let item = if item.is_null() {
                        item
                    } else {
                        cast_value(item, *ty)?
                    };
                    match binop(*op, lv.clone(), item)? {
                        Value::Bool(b) if b != *all => return Ok(Value::Bool(b)),
                        Value::Null => saw_null = true,
                        _ => {}
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    Value::Bool(*all)
                }
            }
            BExpr::ArraySub(q) => {
                let rows = self.subquery_rows(q, env)?;
                let text = q.columns[0].ty != PgType::Int2;
                let mut items = Vec::with_capacity(rows.len());
                for r in rows.iter() {
                    let v = r.first().cloned().unwrap_or(Value::Null);
                    items.push(if text && !v.is_null() {
                        cast_value(v, PgType::Text)?
                    } else {
                        v
                    });
                }
                Value::Array(items.into())
            }
            BExpr::Scalar(q) => {
                let rows = self.subquery_rows(q, env)?;
                if rows.len() > 1 {
                    return Err(SqlError::CardinalityViolation);
                }
                rows.first()
                    .and_then(|r| r.first().cloned())
                    .unwrap_or(Value::Null)
            }
            BExpr::Like(x, p, neg, ci) => {
                // Columns and constants are read in place (no copy per row).
                let (s_owned, p_owned);
                let s = match peek(x, env) {
                    Some(v) => v,
                    None => {
                        s_owned = self.eval(x, env)?;
                        &s_owned
                    }
                };
                let pat = match peek(p, env) {
                    Some(v) => v,
                    None => {
                        p_owned = self.eval(p, env)?;
                        &p_owned
                    }
                };
                match (s, pat) {
                    (Value::Text(s), Value::Text(p)) => Value::Bool(like_match(s, p, *ci)? != *neg),
                    _ => Value::Null,
                }
            }
            BExpr::Case(op, arms, el) => {
                let base = match op {
                    Some(o) => Some(self.eval(o, env)?),
                    None => None,
                };
                for (c, r) in arms {
                    let hit = match &base {
                        Some(b) => {
                            let cv = self.eval(c, env)?;
                            !b.is_null()
                                && !cv.is_null()
                                && compare(b, &cv) == std::cmp::Ordering::Equal
                        }
                        None => truthy(&self.eval(c, env)?) == Some(true),
                    };
                    if hit {
                        return self.eval(r, env);
                    }
                }
                match el {
                    Some(x) => self.eval(x, env)?,
                    None => Value::Null,
                }
            }
            BExpr::Cast(x, t) => cast_value(self.eval(x, env)?, *t)?,
            // COALESCE evaluates its arguments only up to the first that is not NULL.
            BExpr::Func(name, args) if name == "coalesce" => {
                for a in args {
                    let v = self.eval(a, env)?;
                    if !v.is_null() {
                        return Ok(v);
                    }
                }
                Value::Null
            }
            BExpr::Func(name, args) => {
                let vals = self.eval_each(args.iter(), env)?;
                self.call(name, vals)?
            }
        })
    }

    /// 64 bits of the host's entropy (the core has none of its own).
    fn entropy(&self) -> Result<u64, SqlError> {
        self.cx.kv.entropy().ok_or_else(|| {
            SqlError::feature("random numbers without a source of entropy in the host")
        })
    }

    fn call(&self, name: &str, a: Vec<Value>) -> Result<Value, SqlError> {
        let text = |i: usize| -> Option<String> {
            match a.get(i) {
                Some(Value::Text(s)) => Some(s.to_string()),
                Some(Value::Null) | None => None,
                Some(v) => format_text(v, PgType::Text),
            }
        };
        Ok(match name {
            // `current_timestamp(p)`: rounded to p fractional digits.
            "current_timestamp" if !a.is_empty() => match a.first() {
                Some(Value::Int(p)) => {
                    crate::datetime::round_to_precision(Value::Timestamp(self.cx.now), *p)
                }
                _ => Value::Null,
            },
            "now"
            | "current_timestamp"
            | "transaction_timestamp"
            | "statement_timestamp"
            | "clock_timestamp" => Value::Timestamp(self.cx.now),
            "version" => Value::text(crate::VERSION_STRING),
            "current_database" | "current_catalog" => Value::text(self.cx.database),
            "current_schema" => self
                .cx
                .existing_search_path()
                .into_iter()
                .next()
                .map_or(Value::Null, Value::text),
            "current_schemas" => {
                let implicit = matches!(a.first(), Some(Value::Bool(true)));
                let schemas = self.cx.existing_search_path();
                Value::Array(
                    implicit
                        .then(|| "pg_catalog".to_string())
                        .into_iter()
                        .chain(schemas)
                        .map(Value::text)
                        .collect(),
                )
            }
            "current_user" | "session_user" | "user" | "current_role" => Value::text(self.cx.user),
            "pg_get_userbyid" => match a.first() {
                Some(Value::Int(o)) if *o == crate::pgcatalog::PG_DATABASE_OWNER_OID as i64 => {
                    Value::Text("pg_database_owner".into())
                }
                Some(Value::Null) => Value::Null,
                _ => Value::text(self.cx.user),
            },
            "regtype_in" | "to_regtype" => match text(0) {
                // `'int4'::regtype`: the text read as a type name (`to_regtype`: NULL when
                // there is no such type).
                Some(input) => match type_oid_by_name(&input) {
                    Some(oid) => Value::Int(oid.into()),
                    None if name == "to_regtype" => Value::Null,
                    None => {
                        return Err(SqlError::UndefinedObject {
                            message: format!("type \"{input}\" does not exist"),
                        })
                    }
                },
                None => Value::Null,
            },
            "regproc_in" => match text(0) {
                Some(input) => Value::Int(proc_oid_by_name(&input)?.into()),
                None => Value::Null,
            },
            "regnamespace_in" | "to_regnamespace" => match text(0) {
                Some(input) => {
                    let n = match name_parts(&input).as_deref() {
                        Some([one]) => one.clone(),
                        Some(_) => {
                            return Err(SqlError::Syntax {
                                message: "improper qualified name (too many dotted names)".into(),
                            })
                        }
                        None => return Err(invalid_name_syntax()),
                    };
                    match self.cx.schema_oid(&n) {
                        Some(oid) => Value::Int(oid.into()),
                        None if name == "to_regnamespace" => Value::Null,
                        None => return Err(SqlError::UndefinedSchema { name: n }),
                    }
                }
                None => Value::Null,
            },
            "reg_out" => match (a.first(), a.get(1)) {
                (Some(Value::Int(o)), Some(Value::Int(ty))) => {
                    let ty = u32::try_from(*ty).ok().and_then(crate::types::type_by_oid);
                    match (u32::try_from(*o), ty) {
                        (Ok(oid), Some(ty)) => Value::text(self.cx.reg_name(oid, ty)),
                        _ => Value::text(o.to_string()),
                    }
                }
                _ => Value::Null,
            },
            // Strict, as PostgreSQL's.
            "pg_get_indexdef" | "pg_get_constraintdef" if a.iter().any(Value::is_null) => {
                Value::Null
            }
            "pg_get_indexdef" | "pg_get_constraintdef" => match a.first() {
                Some(Value::Int(o)) => {
                    let index = u32::try_from(*o)
                        .ok()
                        .and_then(|o| self.cx.relation_by_oid(o))
                        .filter(|(_, is_index)| *is_index);
                    match index {
                        // (index, column, pretty): one key column's definition, empty past
                        // the key's columns; column 0 is the whole index.
                        Some((t, _)) if name == "pg_get_indexdef" => match a.get(1) {
                            Some(Value::Int(c)) if *c != 0 => Value::text(
                                usize::try_from(*c - 1)
                                    .ok()
                                    .and_then(|i| {
                                        crate::pgcatalog::pkey_columns(&t).get(i).cloned()
                                    })
                                    .unwrap_or_default(),
                            ),
                            _ => Value::text(crate::pgcatalog::pkey_indexdef(&t)),
                        },
                        Some((t, _)) => Value::text(crate::pgcatalog::pkey_constraintdef(&t)),
                        None => Value::Null,
                    }
                }
                _ => Value::Null,
            },
            "pg_get_viewdef" => match a.first() {
                Some(Value::Int(o)) => u32::try_from(*o)
                    .ok()
                    .and_then(|o| self.cx.relation_by_oid(o))
                    .and_then(|(t, is_index)| t.view.clone().filter(|_| !is_index))
                    .map_or(Value::Null, |def| {
                        Value::text(crate::pgcatalog::viewdef(&def))
                    }),
                _ => Value::Null,
            },
            "pg_relation_is_publishable" => Value::Bool(false),
            // No extended statistics objects exist, so no OID names one.
            "pg_get_statisticsobjdef_columns" => Value::Null,
            // No relation is partitioned.
            "pg_get_partkeydef" => Value::Null,
            // No scans are counted: what PostgreSQL reports for a relation without statistics.
            "pg_stat_get_numscans" => match a.first() {
                Some(Value::Int(_)) => Value::Int(0),
                _ => Value::Null,
            },
            // The byte at 0-based `i` of a name, NUL (an empty "char") past its end up to
            // NAMEDATALEN - 1, NULL outside.
            "name_subscript" => match (a.first(), a.get(1)) {
                (Some(Value::Text(s)), Some(Value::Int(i))) => match usize::try_from(*i) {
                    Ok(i) if i < 64 => match s.as_bytes().get(i) {
                        Some(&b) if b.is_ascii() => Value::Text((b as char).to_string().into()),
                        Some(_) => return Err(SqlError::feature("subscripting a non-ASCII name")),
                        None => Value::Text("".into()),
                    },
                    _ => Value::Null,
                },
                _ => Value::Null,
            },
            "record_text" => match (a.first(), a.get(1)) {
                (Some(Value::Array(fields)), Some(Value::Array(oids))) => {
                    let types: Vec<PgType> = oids
                        .iter()
                        .map(|o| match o {
                            Value::Int(o) => {
                                crate::types::type_by_oid(*o as u32).unwrap_or(PgType::Text)
                            }
                            _ => PgType::Text,
                        })
                        .collect();
                    Value::text(crate::types::record_text(fields, &types))
                }
                _ => Value::Null,
            },
            "bit_not" => match a.first() {
                Some(Value::Int(x)) => Value::Int(!x),
                _ => Value::Null,
            },
            "bit_and" | "bit_or" | "bit_xor" | "bit_shl" | "bit_shr" => {
                match (a.first(), a.get(1), a.get(2)) {
                    (Some(Value::Int(x)), Some(Value::Int(y)), Some(Value::Int(width))) => {
                        let (x, y) = (*x, *y);
                        // smallint shifts as an int, then keeps its low 16 bits (`int2shl`).
                        let shifted = |v: i64| match width {
                            64 => v,
                            32 => v as i32 as i64,
                            _ => v as i16 as i64,
                        };
                        Value::Int(match name {
                            "bit_and" => x & y,
                            "bit_or" => x | y,
                            "bit_xor" => x ^ y,
                            "bit_shl" if *width == 64 => x.wrapping_shl(y as u32),
                            "bit_shl" => shifted((x as i32).wrapping_shl(y as u32) as i64),
                            _ if *width == 64 => x.wrapping_shr(y as u32),
                            _ => shifted((x as i32).wrapping_shr(y as u32) as i64),
                        })
                    }
                    _ => Value::Null,
                }
            }
            "record_is_null" => match (a.first(), a.get(1)) {
                (Some(Value::Array(fields)), Some(Value::Bool(not))) => Value::Bool(if *not {
                    !fields.iter().any(Value::is_null)
                } else {
                    fields.iter().all(Value::is_null)
                }),
                (Some(Value::Null), Some(Value::Bool(not))) => Value::Bool(!not),
                _ => Value::Null,
            },
            "record_field" => match (a.first(), a.get(1)) {
                (Some(Value::Array(fields)), Some(Value::Int(i))) => usize::try_from(*i)
                    .ok()
                    .and_then(|i| fields.get(i))
                    .cloned()
                    .unwrap_or(Value::Null),
                _ => Value::Null,
            },
            "array_subscript" => match (a.first(), a.get(1)) {
                (Some(Value::Array(items)), Some(Value::Int(i))) if *i >= 1 => {
                    items.get(*i as usize - 1).cloned().unwrap_or(Value::Null)
                }
                _ => Value::Null,
            },
            "int2vector_text" => match a.first() {
                Some(v @ Value::Array(_)) => {
                    Value::text(format_text(v, PgType::Int2Vector).unwrap_or_default())
                }
                _ => Value::Null,
            },
            // int2vector's subscripts start at 0.
            "int2vector_subscript" => match (a.first(), a.get(1)) {
                (Some(Value::Array(items)), Some(Value::Int(i))) if *i >= 0 => {
                    items.get(*i as usize).cloned().unwrap_or(Value::Null)
                }
                _ => Value::Null,
            },
            // A third argument is the lower bound when it is not 1 (0: an int2vector's).
            "array_upper" | "array_lower" => match (a.first(), a.get(1)) {
                (Some(Value::Array(items)), Some(Value::Int(1))) if !items.is_empty() => {
                    let lower = match a.get(2) {
                        Some(Value::Int(l)) => *l,
                        _ => 1,
                    };
                    Value::Int(if name == "array_upper" {
                        lower + items.len() as i64 - 1
                    } else {
                        lower
                    })
                }
                _ => Value::Null,
            },
            "array_append" => match (a.first(), a.get(1)) {
                (Some(Value::Array(x)), Some(v)) => {
                    Value::Array(x.iter().chain([v]).cloned().collect())
                }
                (_, Some(v)) => Value::Array(vec![v.clone()].into()),
                _ => Value::Null,
            },
            "array_prepend" => match (a.first(), a.get(1)) {
                (Some(v), Some(Value::Array(x))) => {
                    Value::Array([v].into_iter().chain(x.iter()).cloned().collect())
                }
                (Some(v), _) => Value::Array(vec![v.clone()].into()),
                _ => Value::Null,
            },
            // `@>`, `<@`, `&&`: elements met by equality; a NULL element meets nothing.
            "array_contains" | "array_contained" | "array_overlap" => match (a.first(), a.get(1)) {
                (Some(Value::Array(x)), Some(Value::Array(y))) => {
                    let (outer, inner) = if name == "array_contained" {
                        (y, x)
                    } else {
                        (x, y)
                    };
                    let keys: HashSet<Vec<u8>> = outer
                        .iter()
                        .filter(|v| !v.is_null())
                        .map(element_key)
                        .collect();
                    let met = |v: &Value| !v.is_null() && keys.contains(&element_key(v));
                    Value::Bool(if name == "array_overlap" {
                        inner.iter().any(met)
                    } else {
                        inner.iter().all(met)
                    })
                }
                _ => Value::Null,
            },
            // Elements are matched as IS NOT DISTINCT FROM (NULL finds NULL).
            "array_remove" => match a.first() {
                Some(Value::Array(x)) => {
                    let gone = element_key(a.get(1).unwrap_or(&Value::Null));
                    Value::Array(
                        x.iter()
                            .filter(|v| element_key(v) != gone)
                            .cloned()
                            .collect(),
                    )
                }
                _ => Value::Null,
            },
            "array_replace" => match a.first() {
                Some(Value::Array(x)) => {
                    let from = element_key(a.get(1).unwrap_or(&Value::Null));
                    let to = a.get(2).cloned().unwrap_or(Value::Null);
                    Value::Array(
                        x.iter()
                            .map(|v| {
                                if element_key(v) == from {
                                    to.clone()
                                } else {
                                    v.clone()
                                }
                            })
                            .collect(),
                    )
                }
                _ => Value::Null,
            },
            "array_position" | "array_positions" => match a.first() {
                Some(Value::Array(x)) => {
                    let start = match a.get(2) {
                        Some(Value::Null) => {
                            return Err(SqlError::NullValueNotAllowed {
                                message: "initial position must not be null".into(),
                            })
                        }
                        Some(Value::Int(s)) => *s,
                        _ => 1,
                    };
                    let wanted = element_key(a.get(1).unwrap_or(&Value::Null));
                    let mut hits = x
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (i as i64 + 1, v))
                        .filter(|(i, v)| *i >= start && element_key(v) == wanted)
                        .map(|(i, _)| Value::Int(i));
                    if name == "array_position" {
                        hits.next().unwrap_or(Value::Null)
                    } else {
                        Value::Array(hits.collect())
                    }
                }
                _ => Value::Null,
            },
            "array_ndims" => match a.first() {
                Some(Value::Array(x)) if !x.is_empty() => Value::Int(1),
                _ => Value::Null,
            },
            "array_dims" => match a.first() {
                Some(Value::Array(x)) if !x.is_empty() => {
                    let lower = match a.get(1) {
                        Some(Value::Int(l)) => *l,
                        _ => 1,
                    };
                    Value::text(format!("[{lower}:{}]", lower + x.len() as i64 - 1))
                }
                _ => Value::Null,
            },
            "array_cat" => match (a.first(), a.get(1)) {
                (Some(Value::Array(x)), Some(Value::Array(y))) => {
                    Value::Array(x.iter().chain(y.iter()).cloned().collect())
                }
                (Some(Value::Array(x)), _) | (_, Some(Value::Array(x))) => Value::Array(x.clone()),
                _ => Value::Null,
            },
            "pg_size_pretty" => match a.first() {
                Some(Value::Int(n)) => Value::text(size_pretty(*n)),
                Some(Value::Numeric(n)) => Value::text(size_pretty(n.parse().unwrap_or(0))),
                _ => Value::Null,
            },
            "to_regclass" | "regclass_in" => match text(0) {
                Some(s) => match self.relation_named(&s)? {
                    Ok(oid) => Value::Int(oid.into()),
                    Err(missing) if name == "regclass_in" => return Err(missing),
                    Err(_) => Value::Null,
                },
                None => Value::Null,
            },
            // Bytes RockLake stores for the relation: every version of every row (history is
            // kept until excision, as PostgreSQL keeps dead tuples until VACUUM). The primary
            // key is the row order itself; secondary index entries are stored apart.
            "pg_total_relation_size" | "pg_relation_size" | "pg_table_size" | "pg_indexes_size" => {
                match a.first() {
                    Some(Value::Int(o)) => {
                        let relation = u32::try_from(*o)
                            .ok()
                            .and_then(|o| self.cx.relation_by_oid(o));
                        match relation {
                            Some((t, is_index)) => {
                                let rows = crate::keys::table_prefix(t.id);
                                let mut index = rows.clone();
                                index[0] = crate::keys::TAG_INDEX;
                                Value::Int(match name {
                                    // An index is its keys, and has no index of its own.
                                    "pg_indexes_size" if is_index => 0,
                                    _ if is_index => self.stored_bytes(&index)?,
                                    "pg_indexes_size" => self.stored_bytes(&index)?,
                                    "pg_total_relation_size" => {
                                        self.stored_bytes(&rows)? + self.stored_bytes(&index)?
                                    }
                                    _ => self.stored_bytes(&rows)?,
                                })
                            }
                            None => Value::Null,
                        }
                    }
                    _ => Value::Null,
                }
            }
            "pg_database_size" => match text(0) {
                Some(d) if d == self.cx.database => Value::Int(self.stored_bytes(&[])?),
                Some(d) if matches!(d.as_str(), "postgres" | "template0" | "template1") => {
                    Value::Int(0)
                }
                Some(d) => return Err(SqlError::UndefinedDatabase { name: d }),
                None => Value::Null,
            },
            "coalesce" => a.into_iter().find(|v| !v.is_null()).unwrap_or(Value::Null),
            // A record of a FROM item's columns (see `record_functions`).
            "make_record" => Value::Array(a.into()),
            "num_nulls" => Value::Int(a.iter().filter(|v| v.is_null()).count() as i64),
            PERCENTILE_CONT | PERCENTILE_DISC | MODE => {
                crate::aggregate::ordered_set_final(name, &a)?
            }
            GROUPING_BITS => Value::Int(a.iter().fold(0, |bits, v| {
                bits << 1 | i64::from(matches!(v, Value::Int(1)))
            })),
            "num_nonnulls" => Value::Int(a.iter().filter(|v| !v.is_null()).count() as i64),
            "width_bucket" => match a.as_slice() {
                [Value::Float(x), Value::Float(lo), Value::Float(hi), Value::Int(n)] => {
                    Value::Int(width_bucket(*x, *lo, *hi, *n)?)
                }
                _ => Value::Null,
            },

            "nullif" => {
                let (x, y) = (
                    a.first().cloned().unwrap_or(Value::Null),
                    a.get(1).cloned().unwrap_or(Value::Null),
                );
                if !x.is_null() && !y.is_null() && compare(&x, &y) == std::cmp::Ordering::Equal {
                    Value::Null
                } else {
                    // The first argument as given, when the binder kept it (see bind_function).
                    a.get(2).cloned().unwrap_or(x)
                }
            }
            "greatest" | "least" => {
                let mut best: Option<Value> = None;
                for v in a.into_iter().filter(|v| !v.is_null()) {
                    best = Some(match best {
                        None => v,
                        Some(b) => {
                            let c = compare(&v, &b);
                            if (name == "greatest") == (c == std::cmp::Ordering::Greater) {
                                v
                            } else {
                                b
                            }
                        }
                    });
                }
                best.unwrap_or(Value::Null)
            }
            "lower" => text(0)
                .map(|s| Value::text(s.to_lowercase()))
                .unwrap_or(Value::Null),
            "upper" => text(0)
                .map(|s| Value::text(s.to_uppercase()))
                .unwrap_or(Value::Null),
            // A bytea's length is its bytes.
            "length" | "octet_length" if matches!(a.first(), Some(Value::Bytes(_))) => {
                match a.first() {
                    Some(Value::Bytes(b)) => Value::Int(b.len() as i64),
                    _ => Value::Null,
                }
            }
            "length" | "char_length" => text(0)
                .map(|s| Value::Int(s.chars().count() as i64))
                .unwrap_or(Value::Null),
            "octet_length" => text(0)
                .map(|s| Value::Int(s.len() as i64))
                .unwrap_or(Value::Null),
            "concat" => Value::text((0..a.len()).filter_map(text).collect::<String>()),
            "concat_ws" => match text(0) {
                Some(sep) => {
                    Value::text((1..a.len()).filter_map(text).collect::<Vec<_>>().join(&sep))
                }
                None => Value::Null,
            },
            "format" => match text(0) {
                Some(f) => {
                    let args: Vec<Option<String>> = (1..a.len()).map(text).collect();
                    Value::text(crate::format::format(&f, &args)?)
                }
                None => Value::Null,
            },
            "quote_literal" => text(0)
                .map(|s| Value::text(crate::format::quote_literal(&s)))
                .unwrap_or(Value::Null),
            "quote_nullable" => Value::text(
                text(0)
                    .map(|s| crate::format::quote_literal(&s))
                    .unwrap_or_else(|| "NULL".into()),
            ),
            "starts_with" => match (text(0), text(1)) {
                (Some(s), Some(p)) => Value::Bool(s.starts_with(&p)),
                _ => Value::Null,
            },
            "replace" => match (text(0), text(1), text(2)) {
                (Some(s), Some(f), Some(t)) => Value::text(s.replace(&f, &t)),
                _ => Value::Null,
            },
            // PostgreSQL's string_to_array: a NULL delimiter splits into characters, an
            // empty one keeps the string whole, an empty string is an empty array; elements
            // equal to the third argument are NULL.
            "string_to_array" => match text(0) {
                None => Value::Null,
                Some(s) if s.is_empty() => Value::Array(Vec::new().into()),
                Some(s) => {
                    let parts: Vec<String> = match text(1) {
                        None => s.chars().map(String::from).collect(),
                        Some(d) if d.is_empty() => vec![s.clone()],
                        Some(d) => s.split(d.as_str()).map(str::to_string).collect(),
                    };
                    let null = text(2);
                    Value::Array(
                        parts
                            .into_iter()
                            .map(|p| {
                                if null.as_deref() == Some(p.as_str()) {
                                    Value::Null
                                } else {
                                    Value::text(p)
                                }
                            })
                            .collect::<Vec<_>>()
                            .into(),
                    )
                }
            },
            // PostgreSQL 14+: a negative position counts from the end.
            "split_part" => match (text(0), text(1), a.get(2)) {
                (Some(_), Some(_), Some(Value::Int(0))) => {
                    return Err(SqlError::InvalidParameter {
                        message: "field position must not be zero".into(),
                    })
                }
                (Some(s), Some(d), Some(Value::Int(n))) => {
                    let parts: Vec<&str> = if d.is_empty() {
                        vec![s.as_str()]
                    } else {
                        s.split(d.as_str()).collect()
                    };
                    let at = if *n > 0 {
                        usize::try_from(*n - 1).ok()
                    } else {
                        usize::try_from(n.unsigned_abs())
                            .ok()
                            .and_then(|back| parts.len().checked_sub(back))
                    };
                    Value::text(at.and_then(|i| parts.get(i)).copied().unwrap_or(""))
                }
                _ => Value::Null,
            },
            "format_type" => match a.first() {
                Some(Value::Int(oid)) => {
                    let ty = crate::types::any_type_by_oid(*oid as u32);
                    let typmod = match a.get(1) {
                        Some(Value::Int(m)) => *m as i32,
                        _ => -1,
                    };
                    Value::text(match ty {
                        Some(t) => format_type(t, typmod),
                        None => crate::pgcatalog::other_type_name(*oid as u32)
                            .unwrap_or_else(|| "???".into()),
                    })
                }
                _ => Value::Null,
            },
            "pg_table_is_visible" => match a.first() {
                Some(Value::Int(oid)) => u32::try_from(*oid)
                    .ok()
                    .and_then(|o| self.cx.relation_visible(o))
                    .map_or(Value::Null, Value::Bool),
                _ => Value::Null,
            },
            // Where a tablespace's files are: the two built-in ones live in the data directory.
            "pg_tablespace_location" => match a.first() {
                Some(Value::Int(1663 | 1664)) => Value::text(""),
                _ => Value::Null,
            },
            "pg_type_is_visible" | "pg_function_is_visible" => Value::Bool(true),
            // RockLake's collations are pg_catalog's three, always on the search path.
            "pg_collation_is_visible" => match a.first() {
                Some(Value::Int(100 | 950 | 951)) => Value::Bool(true),
                _ => Value::Null,
            },
            "has_table_privilege" | "has_schema_privilege" | "has_database_privilege" => {
                self.has_privilege(name, &a)?
            }
            "pg_is_in_recovery" => Value::Bool(false),
            // No triggers, rules or functions of one's own exist to describe.
            n if OF_EMPTY_CATALOGS_TEXT.contains(&n) || OF_EMPTY_CATALOGS_BOOL.contains(&n) => {
                Value::Null
            }
            "acldefault" => match (a.first(), a.get(1)) {
                (Some(kind), Some(Value::Int(owner))) if !kind.is_null() => {
                    let kind = match kind {
                        Value::Text(s) => s.chars().next().unwrap_or(' '),
                        other => crate::types::format_text(other, PgType::Char)
                            .and_then(|s| s.chars().next())
                            .unwrap_or(' '),
                    };
                    let owner = u32::try_from(*owner).unwrap_or(0);
                    let owner = if owner == crate::pgcatalog::SUPERUSER_OID {
                        self.cx.user.to_string()
                    } else {
                        owner.to_string()
                    };
                    match crate::pgcatalog::acl_default(kind, &owner) {
                        Some(items) => Value::Array(
                            items
                                .into_iter()
                                .map(|i| Value::Text(i.into()))
                                .collect::<Vec<_>>()
                                .into(),
                        ),
                        None => {
                            return Err(SqlError::internal(format!(
                                "unrecognized object type abbreviation: {kind}"
                            )))
                        }
                    }
                }
                _ => Value::Null,
            },
            "obj_description" | "col_description" | "shobj_description" | "pg_get_expr" => {
                match name {
                    "pg_get_expr" => match (a.first(), a.get(1)) {
                        (Some(Value::Text(e)), Some(Value::Int(relid))) => {
                            let serial = self
                                .cx
                                .serial_default_text(e, u32::try_from(*relid).unwrap_or(0));
                            let text = serial.as_deref().unwrap_or(e);
                            if crate::pgcatalog::quote_all() {
                                Value::text(crate::pgcatalog::requote_expression(text))
                            } else {
                                Value::text(text)
                            }
                        }
                        _ => a.first().cloned().unwrap_or(Value::Null),
                    },
                    // pg_description's rows (COMMENT ON): a relation's or a schema's by the
                    // catalog named (either, without one), a column's by its number.
                    "obj_description" | "col_description" => {
                        let Some(Value::Int(o)) = a.first() else {
                            return Ok(Value::Null);
                        };
                        let o = u32::try_from(*o).unwrap_or(0);
                        let comment = if name == "col_description" {
                            match a.get(1) {
                                Some(Value::Int(n)) => self.cx.column_comment(o, *n),
                                _ => None,
                            }
                        } else {
                            match a.get(1).map(|_| text(1)) {
                                None => self
                                    .cx
                                    .relation_comment(o)
                                    .or_else(|| self.cx.schema_comment(o)),
                                Some(c) if c.as_deref() == Some("pg_class") => {
                                    self.cx.relation_comment(o)
                                }
                                Some(c) if c.as_deref() == Some("pg_namespace") => {
                                    self.cx.schema_comment(o)
                                }
                                Some(c) if c.as_deref() == Some("pg_constraint") => {
                                    self.cx.constraint_comment(o)
                                }
                                Some(_) => None,
                            }
                        };
                        comment.map_or(Value::Null, Value::text)
                    }
                    _ => Value::Null,
                }
            }
            "current_setting" => match text(0) {
                // A set_config earlier in this statement counts already (and has created a
                // custom placeholder it names).
                Some(name) => match self.set_configs.as_ref().and_then(|c| {
                    c.borrow()
                        .iter()
                        .rev()
                        .find(|c| c.name().eq_ignore_ascii_case(&name))
                        .map(|c| c.shown.clone())
                }) {
                    Some(shown) => Value::text(shown),
                    None => match self.cx.settings.show(&name) {
                        Ok((_, v)) => Value::text(v),
                        Err(_) if matches!(a.get(1), Some(Value::Bool(true))) => Value::Null,
                        Err(e) => return Err(e),
                    },
                },
                None => Value::Null,
            },
            "set_config" => {
                let Some(name) = text(0) else {
                    return Err(SqlError::NullValueNotAllowed {
                        message: "SET requires parameter name".into(),
                    });
                };
                let Some(calls) = self.set_configs.as_ref() else {
                    return Err(SqlError::feature(
                        "set_config() outside a SELECT (in INSERT, UPDATE, DELETE or COPY)",
                    ));
                };
                // is_local is boolean; a text argument ('true', or a bound parameter) is cast.
                let local = match a.get(2) {
                    Some(Value::Bool(b)) => *b,
                    Some(Value::Text(t)) => parse_text(t, PgType::Bool)? == Value::Bool(true),
                    _ => false,
                };
                let (call, shown) =
                    crate::settings::SetConfig::check(&self.cx.settings, &name, text(1), local)?;
                calls.borrow_mut().push(call);
                Value::text(shown)
            }
            "pg_encoding_to_char" => match a.first() {
                Some(Value::Int(n)) => Value::text(
                    usize::try_from(*n)
                        .ok()
                        .and_then(|i| crate::format::ENCODINGS.get(i))
                        .copied()
                        .unwrap_or(""),
                ),
                _ => Value::Null,
            },
            "pg_char_to_encoding" => match text(0) {
                Some(name) => {
                    Value::Int(crate::format::encoding_number(&name).map_or(-1, i64::from))
                }
                None => Value::Null,
            },
            "quote_ident" => text(0)
                .map(|s| Value::text(crate::pgcatalog::quote_ident(&s)))
                .unwrap_or(Value::Null),
            "txid_current" => Value::Int(self.cx.txid() as i64),
            "pg_backend_pid" => Value::Int(self.cx.sessions.me.activity.backend_pid.into()),
            "inet_client_addr" => self
                .cx
                .sessions
                .me
                .activity
                .client_addr
                .clone()
                .map_or(Value::Null, Value::Bytes),
            "inet_client_port" => self
                .cx
                .sessions
                .me
                .activity
                .client_port
                .map_or(Value::Null, |p| Value::Int(p.into())),
            // The statement's snapshot, named for `SET TRANSACTION SNAPSHOT` in other sessions
            // while this transaction is open (PostgreSQL's id: backend, transaction, and here
            // the commit point in place of a counter).
            "pg_export_snapshot" => {
                let Some(effects) = self.effects.as_ref() else {
                    return Err(SqlError::feature(
                        "pg_export_snapshot() outside a SELECT (in INSERT, UPDATE, DELETE or COPY)",
                    ));
                };
                let id = format!(
                    "{:08X}-{:08X}-{}",
                    self.cx.sessions.me.activity.backend_pid,
                    self.cx.txid(),
                    self.cx.at
                );
                effects.borrow_mut().push(Effect::ExportSnapshot {
                    id: id.clone(),
                    point: self.cx.at,
                });
                Value::text(id)
            }
            "pg_cancel_backend" | "pg_terminate_backend" => {
                let terminate = name == "pg_terminate_backend";
                let (Some(Value::Int(pid)), timeout) = (a.first(), a.get(1)) else {
                    return Ok(Value::Null);
                };
                match timeout {
                    Some(Value::Null) => return Ok(Value::Null),
                    Some(Value::Int(t)) if *t < 0 => {
                        return Err(SqlError::ArgumentOutOfRange {
                            message: "\"timeout\" must not be negative".into(),
                        })
                    }
                    _ => {}
                }
                let pid = i32::try_from(*pid).unwrap_or(i32::MIN);
                let Some(effects) = self.effects.as_ref() else {
                    return Err(SqlError::feature(format!(
                        "{name}() outside a SELECT (in INSERT, UPDATE, DELETE or COPY)"
                    )));
                };
                match self.cx.sessions.may_signal(pid, terminate)? {
                    crate::activity::SignalTarget::Unknown => {
                        effects
                            .borrow_mut()
                            .push(Effect::Notice(crate::error::Notice::NotABackend { pid }));
                        Value::Bool(false)
                    }
                    // The signal reaches the backend that sent it before the statement ends.
                    crate::activity::SignalTarget::Me if terminate => {
                        return Err(SqlError::Terminated)
                    }
                    crate::activity::SignalTarget::Me => {
                        return Err(SqlError::QueryCanceled {
                            message: "canceling statement due to user request".into(),
                        })
                    }
                    crate::activity::SignalTarget::Other => {
                        effects.borrow_mut().push(Effect::Signal { pid, terminate });
                        Value::Bool(true)
                    }
                }
            }
            "nextval" | "setval" | "currval" | "lastval" => {
                return self.sequence_call(name, &a);
            }
            // The sequence a serial or identity column owns, schema-qualified.
            "pg_get_serial_sequence" => match (text(0), text(1)) {
                (Some(table), Some(column)) => {
                    let oid = self.relation_named(&table)??;
                    let Some((t, false)) = self.cx.relation_by_oid(oid) else {
                        return Ok(Value::Null);
                    };
                    // The column name is read as an identifier (quotes keep case).
                    let column = name_parts(&column)
                        .and_then(|p| p.into_iter().next())
                        .unwrap_or(column);
                    if t.column_index(&column).is_none() {
                        return Err(SqlError::UndefinedColumn {
                            name: format!("{column}\" of relation \"{}", t.name),
                        });
                    }
                    let owned = self.cx.sequences().iter().find_map(|s| {
                        let def = s.sequence.as_deref()?;
                        (def.owner.as_ref() == Some(&(t.id, column.clone()))).then(|| {
                            let q = crate::pgcatalog::quote_ident;
                            format!("{}.{}", q(&s.schema), q(&s.name))
                        })
                    });
                    owned.map_or(Value::Null, Value::text)
                }
                _ => Value::Null,
            },
            "random" => {
                let mut prng = match self.cx.prng.get() {
                    Some(p) => p,
                    None => crate::prng::Prng::from_state(self.entropy()?, self.entropy()?),
                };
                let v = prng.next_double();
                self.cx.prng.set(Some(prng));
                Value::Float(v)
            }
            "setseed" => match a.first() {
                Some(Value::Float(x)) if (-1.0..=1.0).contains(x) => {
                    self.cx.prng.set(Some(crate::prng::Prng::from_fraction(*x)));
                    Value::text("")
                }
                Some(Value::Float(x)) => {
                    return Err(SqlError::InvalidParameter {
                        message: format!(
                            "setseed parameter {} is out of allowed range [-1,1]",
                            crate::datetime::c_format_g(*x)
                        ),
                    })
                }
                _ => Value::Null,
            },
            "gen_random_uuid" => {
                let mut u = [0u8; 16];
                u[..8].copy_from_slice(&self.entropy()?.to_le_bytes());
                u[8..].copy_from_slice(&self.entropy()?.to_le_bytes());
                // Version 4, variant 10 (RFC 9562).
                u[6] = (u[6] & 0x0f) | 0x40;
                u[8] = (u[8] & 0x3f) | 0x80;
                Value::Uuid(u)
            }
            "array" => Value::Array(a.into()),
            "array_length" => match a.first() {
                Some(Value::Array(x)) if !x.is_empty() => Value::Int(x.len() as i64),
                _ => Value::Null,
            },
            // A NULL element is skipped, or written as the third argument when there is one.
            "array_to_string" => match (a.first(), text(1)) {
                (Some(Value::Array(x)), Some(d)) => {
                    let null_text = text(2);
                    Value::text(
                        x.iter()
                            .filter_map(|v| {
                                format_text(v, PgType::Text).or_else(|| null_text.clone())
                            })
                            .collect::<Vec<_>>()
                            .join(&d),
                    )
                }
                _ => Value::Null,
            },
            "float4_text" => match a.first() {
                Some(Value::Float(f)) => Value::text(crate::types::fmt_float(*f, true)),
                _ => Value::Null,
            },
            "float4_numeric" => match a.first() {
                Some(Value::Float(f)) => float_numeric(*f, true),
                _ => Value::Null,
            },
            "like_escape" => match (text(0), text(1)) {
                (Some(p), Some(e)) => Value::text(like_escape(&p, &e)?),
                _ => Value::Null,
            },
            "bpchar_text" => match text(0) {
                Some(s) => Value::text(s.trim_end_matches(' ')),
                None => Value::Null,
            },
            "chr" => match a.first() {
                Some(Value::Int(n)) => Value::text(chr(*n)?.to_string()),
                _ => Value::Null,
            },
            "initcap" => text(0).map_or(Value::Null, |t| Value::text(initcap(&t))),
            "reverse" => text(0).map_or(Value::Null, |t| {
                Value::text(t.chars().rev().collect::<String>())
            }),
            "translate" => match (text(0), text(1), text(2)) {
                (Some(t), Some(from), Some(to)) => {
                    let from: Vec<char> = from.chars().collect();
                    let to: Vec<char> = to.chars().collect();
                    Value::text(
                        t.chars()
                            .filter_map(|c| match from.iter().position(|f| *f == c) {
                                Some(i) => to.get(i).copied(),
                                None => Some(c),
                            })
                            .collect::<String>(),
                    )
                }
                _ => Value::Null,
            },
            "ascii" => text(0).map_or(Value::Null, |t| {
                Value::Int(t.chars().next().map_or(0, |c| i64::from(u32::from(c))))
            }),
            "lpad" | "rpad" => match (text(0), a.get(1), a.get(2)) {
                (Some(t), Some(Value::Int(n)), fill) => {
                    let fill = match fill {
                        None => " ".to_string(),
                        Some(Value::Null) => return Ok(Value::Null),
                        Some(_) => text(2).unwrap_or_default(),
                    };
                    let len = usize::try_from(*n).unwrap_or(0);
                    // An empty fill cannot lengthen: no result is too long then.
                    if !fill.is_empty() && len.saturating_mul(4) > MAX_VALUE_BYTES {
                        return Err(SqlError::ProgramLimit {
                            message: "requested length too large".into(),
                        });
                    }
                    Value::text(pad(&t, len, &fill, name == "lpad"))
                }
                _ => Value::Null,
            },
            // Negative values as their two's complement in the argument's width.
            "to_hex32" => match a.first() {
                Some(Value::Int(n)) => Value::text(format!("{:x}", *n as i32)),
                _ => Value::Null,
            },
            "to_hex64" => match a.first() {
                Some(Value::Int(n)) => Value::text(format!("{n:x}")),
                _ => Value::Null,
            },
            "pg_client_encoding" | "getdatabaseencoding" => Value::text("UTF8"),
            "cardinality" => match a.first() {
                Some(Value::Array(x)) => Value::Int(x.len() as i64),
                _ => Value::Null,
            },
            "repeat" => match (text(0), a.get(1)) {
                (Some(t), Some(Value::Int(n))) => {
                    let n = usize::try_from(*n).unwrap_or(0);
                    // PostgreSQL's limit for one value (MaxAllocSize less the header).
                    if t.len()
                        .checked_mul(n)
                        .is_none_or(|len| len > MAX_VALUE_BYTES)
                    {
                        return Err(SqlError::ProgramLimit {
                            message: "requested length too large".into(),
                        });
                    }
                    Value::text(t.repeat(n))
                }
                _ => Value::Null,
            },
            "left" | "right" => match (text(0), a.get(1)) {
                (Some(t), Some(Value::Int(n))) => {
                    let len = t.chars().count() as i64;
                    // n < 0: all but |n| characters from the other end.
                    let keep = if *n >= 0 {
                        (*n).min(len)
                    } else {
                        (len + n).max(0)
                    };
                    let skip = if name == "left" { 0 } else { len - keep };
                    Value::text(
                        t.chars()
                            .skip(skip as usize)
                            .take(keep as usize)
                            .collect::<String>(),
                    )
                }
                _ => Value::Null,
            },
            "strpos" => match (text(0), text(1)) {
                (Some(t), Some(sub)) => Value::Int(match t.find(sub.as_str()) {
                    Some(byte) => t[..byte].chars().count() as i64 + 1,
                    None => 0,
                }),
                _ => Value::Null,
            },
            "btrim" | "ltrim" | "rtrim" if matches!(a.first(), Some(Value::Bytes(_))) => {
                match (a.first(), a.get(1)) {
                    (Some(Value::Bytes(b)), Some(Value::Bytes(set))) => {
                        let keep = |x: &u8| !set.contains(x);
                        let start = match name {
                            "rtrim" => 0,
                            _ => b.iter().position(keep).unwrap_or(b.len()),
                        };
                        let end = match name {
                            "ltrim" => b.len(),
                            _ => b.iter().rposition(keep).map_or(start, |i| i + 1),
                        };
                        Value::Bytes(b[start..end.max(start)].to_vec())
                    }
                    _ => Value::Null,
                }
            }
            "btrim" | "ltrim" | "rtrim" => {
                let set = if a.len() > 1 {
                    text(1)
                } else {
                    Some(" ".into())
                };
                match (text(0), set) {
                    (Some(t), Some(set)) => {
                        let strip = |c: char| set.contains(c);
                        Value::text(
                            match name {
                                "ltrim" => t.trim_start_matches(strip),
                                "rtrim" => t.trim_end_matches(strip),
                                _ => t.trim_matches(strip),
                            }
                            .to_string(),
                        )
                    }
                    _ => Value::Null,
                }
            }
            "substr" => match (a.first(), a.get(1)) {
                (Some(v), Some(Value::Int(from))) if !v.is_null() => {
                    // Positions from..from+count-1 (1-based, characters of text, bytes of
                    // bytea); a start before 1 still counts toward the length, as in
                    // PostgreSQL.
                    let end = match a.get(2) {
                        None => i64::MAX,
                        Some(Value::Int(c)) if *c < 0 => {
                            return Err(SqlError::SubstringError {
                                message: "negative substring length not allowed".into(),
                            })
                        }
                        Some(Value::Int(c)) => from.saturating_add(*c),
                        Some(_) => return Ok(Value::Null),
                    };
                    let start = (*from).max(1);
                    let skip = usize::try_from(start - 1).unwrap_or(usize::MAX);
                    let take =
                        usize::try_from(end.saturating_sub(start).max(0)).unwrap_or(usize::MAX);
                    match v {
                        Value::Bytes(b) => {
                            Value::Bytes(b.iter().skip(skip).take(take).copied().collect())
                        }
                        _ => text(0).map_or(Value::Null, |t| {
                            Value::text(t.chars().skip(skip).take(take).collect::<String>())
                        }),
                    }
                }
                _ => Value::Null,
            },
            "round" | "trunc" if a.len() == 2 => match (a.first(), a.get(1)) {
                (Some(v), Some(Value::Int(scale))) if !v.is_null() => {
                    match cast_value(v.clone(), PgType::Numeric)? {
                        Value::Numeric(n) if name == "trunc" => {
                            Value::Numeric(crate::types::numeric_trunc_at(&n, *scale))
                        }
                        Value::Numeric(n) => {
                            Value::Numeric(crate::types::numeric_round_at(&n, *scale))
                        }
                        _ => Value::Null,
                    }
                }
                _ => Value::Null,
            },
            "round" | "trunc" | "ceil" | "ceiling" | "floor" => match a.first() {
                Some(Value::Numeric(n)) => Value::Numeric(match name {
                    "round" => crate::types::numeric_round(n, 0),
                    "trunc" => crate::types::numeric_trunc_at(n, 0),
                    "floor" => crate::types::numeric_floor(n),
                    _ => crate::types::numeric_ceil(n),
                }),
                Some(v) if !v.is_null() => match cast_value(v.clone(), PgType::Float8)? {
                    Value::Float(f) => Value::Float(match name {
                        "round" => f.round_ties_even(),
                        "trunc" => f.trunc(),
                        "floor" => f.floor(),
                        _ => f.ceil(),
                    }),
                    _ => Value::Null,
                },
                _ => Value::Null,
            },
            "apply_typmod" => match (a.first(), a.get(1)) {
                (Some(v), Some(Value::Int(m))) => {
                    let pad = matches!(a.get(2), Some(Value::Bool(true)));
                    apply_typmod(v, *m, pad)?
                }
                (Some(v), _) => v.clone(),
                _ => Value::Null,
            },
            "sqrt" | "cbrt" | "exp" | "ln" | "log" | "log10" | "degrees" | "radians" | "sin"
            | "cos" | "tan" | "asin" | "acos" | "atan" | "atan2" | "power" | "pi" | "sign" => {
                eval_math(name, &a)?
            }
            "abs" => match a.first() {
                Some(Value::Int(i)) => Value::Int(i.checked_abs().ok_or(BIGINT_OUT_OF_RANGE)?),
                Some(Value::Float(f)) => Value::Float(f.abs()),
                Some(Value::Numeric(s)) => Value::Numeric(s.trim_start_matches('-').to_string()),
                _ => Value::Null,
            },
            "regexp_replace"
            | "regexp_match"
            | "regexp_like"
            | "regexp_count"
            | "regexp_substr"
            | "regexp_substring"
            | "regexp_split_to_array" => {
                if a.iter().any(Value::is_null) {
                    return Ok(Value::Null);
                }
                regexp_call(name, &a)?
            }
            "regex_match" | "regex_not_match" | "regex_imatch" | "regex_not_imatch" => {
                match (text(0), text(1)) {
                    (Some(s), Some(p)) => {
                        let ci = name.contains("imatch");
                        let hit = crate::regex::matches(&p, &s, ci)?;
                        Value::Bool(hit != name.contains("not"))
                    }
                    _ => Value::Null,
                }
            }
            "bytea_concat" => match (a.first(), a.get(1)) {
                (Some(Value::Bytes(x)), Some(Value::Bytes(y))) => {
                    Value::Bytes([x.as_slice(), y.as_slice()].concat())
                }
                _ => Value::Null,
            },
            "inet_text" => match a.first() {
                Some(Value::Bytes(b)) => Value::text(crate::inet::show(b)),
                _ => Value::Null,
            },
            "inet_out" => match a.first() {
                Some(Value::Bytes(b)) => Value::text(crate::inet::format(b)),
                _ => Value::Null,
            },
            "timestamp_text" => a
                .first()
                .and_then(|v| format_text(v, PgType::Timestamp))
                .map_or(Value::Null, Value::text),
            "timestamp_array_text" => a
                .first()
                .and_then(|v| format_text(v, PgType::TimestampArray))
                .map_or(Value::Null, Value::text),
            "current_date" => Value::Date(
                crate::tz::session()
                    .to_local(self.cx.now)
                    .div_euclid(86_400_000_000) as i32,
            ),
            "localtimestamp" => {
                let local = Value::Timestamp(crate::tz::session().to_local(self.cx.now));
                match a.first() {
                    Some(Value::Int(p)) => crate::datetime::round_to_precision(local, *p),
                    _ => local,
                }
            }
            "timezone_from_local" | "timezone_to_local" => match (a.first(), a.get(1)) {
                (Some(z), Some(Value::Timestamp(t))) if !z.is_null() => {
                    let zone = crate::tz::for_at_time_zone(z)?;
                    Value::Timestamp(if name == "timezone_from_local" {
                        zone.to_utc(*t)
                    } else {
                        zone.to_local(*t)
                    })
                }
                _ => Value::Null,
            },
            "to_char_timestamp" | "to_char_timestamptz" | "to_char_interval" => {
                use crate::tochar::{to_char, Source};
                match (a.first(), text(1)) {
                    // PostgreSQL: NULL for an infinite value or an empty template.
                    (Some(Value::Timestamp(i64::MAX | i64::MIN)), _) => Value::Null,
                    (_, Some(t)) if t.is_empty() => Value::Null,
                    (Some(Value::Timestamp(t)), Some(template))
                        if name == "to_char_timestamptz" =>
                    {
                        let zone = crate::tz::session();
                        let (east, abbrev, _) = zone.info_at(*t);
                        let source = Source::Time {
                            local: zone.to_local(*t),
                            zone: Some((east, &abbrev)),
                        };
                        Value::text(to_char(source, &template)?)
                    }
                    (Some(Value::Timestamp(t)), Some(template)) => Value::text(to_char(
                        Source::Time {
                            local: *t,
                            zone: None,
                        },
                        &template,
                    )?),
                    (Some(Value::Interval(iv)), Some(template)) => {
                        Value::text(to_char(Source::Interval(*iv), &template)?)
                    }
                    _ => Value::Null,
                }
            }
            "to_date" | "to_timestamp_text" => match (text(0), text(1)) {
                (Some(input), Some(template)) if name == "to_date" => {
                    let d = crate::tochar::to_date(&input, &template)?;
                    Value::Date(i32::try_from(d).map_err(|_| SqlError::DatetimeOutOfRange {
                        message: "date out of range".into(),
                    })?)
                }
                (Some(input), Some(template)) => {
                    Value::Timestamp(crate::tochar::to_timestamp(&input, &template)?)
                }
                _ => Value::Null,
            },
            "localtime" => {
                let local = crate::tz::session().to_local(self.cx.now);
                let time = Value::Time(local.rem_euclid(86_400_000_000));
                match a.first() {
                    Some(Value::Int(p)) => crate::datetime::round_to_precision(time, *p),
                    _ => time,
                }
            }
            "age_local" | "age_tz" => match (a.first(), a.get(1)) {
                (Some(Value::Timestamp(x)), Some(Value::Timestamp(y))) => {
                    let zone = crate::tz::session();
                    let local = |t: i64| {
                        if name == "age_tz" {
                            zone.to_local(t)
                        } else {
                            t
                        }
                    };
                    Value::Interval(crate::datefn::age(local(*x), local(*y))?)
                }
                _ => Value::Null,
            },
            "age_today_local" | "age_today_tz" => match a.first() {
                Some(Value::Timestamp(x)) => {
                    let zone = crate::tz::session();
                    let today =
                        zone.to_local(self.cx.now).div_euclid(86_400_000_000) * 86_400_000_000;
                    let x = if name == "age_today_tz" {
                        zone.to_local(*x)
                    } else {
                        *x
                    };
                    Value::Interval(crate::datefn::age(today, x)?)
                }
                _ => Value::Null,
            },
            "justify_hours" | "justify_days" | "justify_interval" => match a.first() {
                Some(Value::Interval(iv)) => Value::Interval(match name {
                    "justify_hours" => crate::datefn::justify_hours(*iv)?,
                    "justify_days" => crate::datefn::justify_days(*iv)?,
                    _ => crate::datefn::justify_interval(*iv)?,
                }),
                _ => Value::Null,
            },
            "isfinite" => match a.first() {
                Some(Value::Null) | None => Value::Null,
                Some(Value::Timestamp(t)) => Value::Bool(*t != i64::MAX && *t != i64::MIN),
                Some(Value::Date(d)) => Value::Bool(*d != i32::MAX && *d != i32::MIN),
                Some(_) => Value::Bool(true),
            },
            "make_date" | "make_time" | "make_timestamp" | "make_timestamptz" | "make_interval" => {
                if a.iter().any(Value::is_null) {
                    Value::Null
                } else {
                    let int = |i: usize| match a.get(i) {
                        Some(Value::Int(x)) => *x,
                        _ => 0,
                    };
                    let float = |i: usize| match a.get(i) {
                        Some(Value::Float(x)) => *x,
                        _ => 0.0,
                    };
                    match name {
                        "make_date" => {
                            Value::Date(crate::datefn::make_date(int(0), int(1), int(2))? as i32)
                        }
                        "make_time" => {
                            Value::Time(crate::datefn::make_time(int(0), int(1), float(2))?)
                        }
                        "make_interval" => Value::Interval(crate::datefn::make_interval(
                            [int(0), int(1), int(2), int(3), int(4), int(5)],
                            float(6),
                        )?),
                        _ => {
                            let day = crate::datefn::make_date(int(0), int(1), int(2))?;
                            let time = crate::datefn::make_time(int(3), int(4), float(5))?;
                            let local = day * 86_400_000_000 + time;
                            let range =
                                crate::datetime::MIN_TIMESTAMP..crate::datetime::END_TIMESTAMP;
                            if !range.contains(&local) {
                                let sec = float(5);
                                let sec = if sec.fract() == 0.0 {
                                    format!("{:02}", sec as i64)
                                } else {
                                    sec.to_string()
                                };
                                return Err(SqlError::DatetimeOutOfRange {
                                    message: format!(
                                        "timestamp out of range: {}-{:02}-{:02} {}:{:02}:{sec}",
                                        int(0),
                                        int(1),
                                        int(2),
                                        int(3),
                                        int(4)
                                    ),
                                });
                            }
                            if name == "make_timestamp" {
                                Value::Timestamp(local)
                            } else {
                                let zone = match text(6) {
                                    Some(z) => {
                                        std::rc::Rc::new(crate::tz::for_make_timestamptz(&z)?)
                                    }
                                    None => crate::tz::session(),
                                };
                                Value::Timestamp(zone.to_utc(local))
                            }
                        }
                    }
                }
            }
            "date_bin" => match (a.first(), a.get(1), a.get(2)) {
                (
                    Some(Value::Interval(s)),
                    Some(Value::Timestamp(x)),
                    Some(Value::Timestamp(o)),
                ) => Value::Timestamp(crate::datefn::date_bin(*s, *x, *o)?),
                _ => Value::Null,
            },
            "date_trunc_zone" => match (text(0), a.get(1), a.get(2)) {
                (Some(unit), Some(Value::Timestamp(t)), Some(z)) if !z.is_null() => {
                    let zone = crate::tz::for_at_time_zone(z)?;
                    Value::Timestamp(crate::datetime::trunc_timestamptz_in(&unit, *t, &zone)?)
                }
                _ => Value::Null,
            },
            "array_to_timestamptz" => match a.first() {
                Some(Value::Array(items)) => {
                    let zone = crate::tz::session();
                    let mut out = Vec::with_capacity(items.len());
                    for v in items.iter() {
                        out.push(match cast_value(v.clone(), PgType::Timestamp)? {
                            Value::Timestamp(t) => Value::Timestamp(zone.to_utc(t)),
                            other => other,
                        });
                    }
                    Value::Array(out.into())
                }
                _ => Value::Null,
            },
            "timestamptz_from_local" | "timestamptz_to_local" => match a.first() {
                Some(v) => eval_zone_conversion(name, v),
                None => Value::Null,
            },
            "timestamptz_pl_interval" | "timestamptz_mi_interval" => match (a.first(), a.get(1)) {
                (Some(Value::Timestamp(t)), Some(Value::Interval(iv))) => {
                    let sub = name == "timestamptz_mi_interval";
                    let zone = crate::tz::session();
                    Value::Timestamp(crate::datetime::timestamptz_add(*t, *iv, sub, &zone)?)
                }
                _ => Value::Null,
            },
            "to_timestamp" => match a.first() {
                Some(Value::Float(f)) => crate::datetime::to_timestamp(*f)?,
                _ => Value::Null,
            },
            "md5" => {
                let bytes = match a.first() {
                    Some(Value::Bytes(b)) => Some(b.clone()),
                    _ => text(0).map(String::into_bytes),
                };
                match bytes {
                    None => Value::Null,
                    Some(b) => {
                        use md5::Digest;
                        let hex: String = md5::Md5::digest(&b)
                            .iter()
                            .map(|x| format!("{x:02x}"))
                            .collect();
                        Value::text(hex)
                    }
                }
            }
            "encode" => match (a.first(), text(1)) {
                (Some(Value::Bytes(b)), Some(f)) => Value::text(crate::types::encode_bytes(b, &f)?),
                _ => Value::Null,
            },
            "decode" => match (text(0), text(1)) {
                (Some(s), Some(f)) => Value::Bytes(crate::types::decode_bytes(&s, &f)?),
                _ => Value::Null,
            },
            other if other.starts_with("numeric_fn:") => {
                eval_numeric_function(&other["numeric_fn:".len()..], &a)?
            }
            other if other.starts_with("inet_fn:") => {
                eval_inet_function(&other["inet_fn:".len()..], &a)?
            }
            other if other.starts_with("json_fn:") => {
                eval_json_function(&other["json_fn:".len()..], &a)?
            }
            other if other.contains(':') => eval_datetime_call(other, &a)?,
            other => {
                return Err(SqlError::UndefinedFunction {
                    message: format!("function {other} does not exist"),
                    hint: None,
                })
            }
        })
    }

    /// The OID of the primary-key index named `name` (in `schema`, or the first schema of
    /// search_path holding one): indexes are relations too.
    /// The relation a `regclass` text names (its OID), or the error `'…'::regclass` gives for
    /// a name that finds none (the outer error: one the name's syntax gives).
    fn relation_named(&self, s: &str) -> Result<Result<u32, SqlError>, SqlError> {
        let parts = name_parts(s).ok_or_else(invalid_name_syntax)?;
        if parts.len() > 3 {
            return Err(SqlError::Syntax {
                message: format!("improper relation name (too many dotted names): {s}"),
            });
        }
        let (schema, n) = split_name(&parts)?;
        // A qualified name in a schema that does not exist: PostgreSQL's 3F000 (NULL from
        // to_regclass).
        if let Some(missing) = schema
            .as_deref()
            .filter(|s| self.cx.schema_oid(s).is_none())
        {
            return Ok(Err(SqlError::UndefinedSchema {
                name: missing.to_string(),
            }));
        }
        let found = match self.cx.find_table(schema.as_deref(), &n) {
            Some(t) => Some(t.oid),
            None => crate::pgcatalog::columns(schema.as_deref(), &n)
                .map(|(oid, _)| oid)
                .or_else(|| self.primary_key_index(schema.as_deref(), &n)),
        };
        Ok(found.ok_or_else(|| SqlError::UndefinedTable {
            name: parts.join("."),
        }))
    }

    /// `has_table_privilege` / `has_schema_privilege` / `has_database_privilege` (`[user,]
    /// object, privileges`): the session's role is a superuser, so every privilege of an
    /// object that exists is granted; PostgreSQL's errors for a missing object, role or
    /// privilege name.
    fn has_privilege(&self, name: &str, a: &[Value]) -> Result<Value, SqlError> {
        if a.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        let (user, object, privileges) = match a {
            [o, p] => (None, o, p),
            [u, o, p] => (Some(u), o, p),
            _ => return Ok(Value::Null),
        };
        if let Some(Value::Text(u)) = user {
            if **u != *self.cx.user && !u.eq_ignore_ascii_case("public") {
                return Err(SqlError::UndefinedObject {
                    message: format!("role \"{u}\" does not exist"),
                });
            }
        }
        let known: &[&str] = match name {
            "has_table_privilege" => &[
                "SELECT",
                "INSERT",
                "UPDATE",
                "DELETE",
                "TRUNCATE",
                "REFERENCES",
                "TRIGGER",
            ],
            "has_schema_privilege" => &["CREATE", "USAGE"],
            _ => &["CREATE", "CONNECT", "TEMPORARY", "TEMP"],
        };
        if let Value::Text(p) = privileges {
            for part in p.split(',') {
                let word = part.trim().to_ascii_uppercase();
                let word = word
                    .strip_suffix("WITH GRANT OPTION")
                    .unwrap_or(&word)
                    .trim();
                if !known.contains(&word) {
                    return Err(SqlError::InvalidParameter {
                        message: format!("unrecognized privilege type: \"{}\"", part.trim()),
                    });
                }
            }
        }
        if let Value::Text(o) = object {
            match name {
                "has_table_privilege" => {
                    self.relation_named(o)??;
                }
                "has_schema_privilege" => {
                    if self.cx.schema_oid(o).is_none() {
                        return Err(SqlError::UndefinedSchema {
                            name: o.to_string(),
                        });
                    }
                }
                _ => {
                    // pg_database's rows: the templates, postgres and the session's.
                    let listed = matches!(&**o, "template1" | "template0" | "postgres");
                    if !listed && **o != *self.cx.database {
                        return Err(SqlError::UndefinedDatabase {
                            name: o.to_string(),
                        });
                    }
                }
            }
        }
        Ok(Value::Bool(true))
    }

    fn primary_key_index(&self, schema: Option<&str>, name: &str) -> Option<u32> {
        self.cx.key_index_table(schema, name).map(|t| t.pkey_oid())
    }

    /// Raw bytes (keys and values, every version) stored under a key prefix; empty = all.
    fn stored_bytes(&self, prefix: &[u8]) -> Result<i64, SqlError> {
        let end = if prefix.is_empty() {
            vec![0xFF; 8]
        } else {
            crate::keys::prefix_end(prefix)
        };
        let mut cursor = prefix.to_vec();
        let mut total = 0i64;
        loop {
            let batch = self.cx.kv.scan(&cursor, &end, crate::engine::SCAN_BATCH)?;
            for (k, v) in &batch {
                total += (k.len() + v.len()) as i64;
            }
            match batch.last() {
                Some((k, _)) if batch.len() == crate::engine::SCAN_BATCH => {
                    cursor = k.to_vec();
                    cursor.push(0);
                }
                _ => break,
            }
        }
        Ok(total)
    }

    fn subquery_rows(
        &self,
        q: &Rc<BQuery>,
        env: &Env<'_>,
    ) -> Result<Rc<Vec<Vec<Value>>>, SqlError> {
        if !q.correlated() {
            if let Some(r) = self.cache.borrow().get(&q.id) {
                return Ok(r.clone());
            }
        }
        let key = if q.correlated() {
            correlation_key(q, env)
        } else {
            None
        };
        if let Some(k) = &key {
            if let Some(r) = self.correlated_rows.borrow().get(k) {
                return Ok(r.clone());
            }
        }
        let rows = Rc::new(self.run_query(q, Some(env))?);
        if !q.correlated() {
            self.cache.borrow_mut().insert(q.id, rows.clone());
        } else if let Some(k) = key {
            let mut kept = self.correlated_rows.borrow_mut();
            if kept.len() < MAX_KEPT_CORRELATED {
                kept.insert(k, rows.clone());
            }
        }
        Ok(rows)
    }

    /// Runs a bound query and returns its rows.
    pub fn run_query(
        &self,
        q: &BQuery,
        parent: Option<&Env<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        // OFFSET is checked before the count, as PostgreSQL's `recompute_limits` does.
        let offset = match &q.offset {
            Some(e) => match self.eval(
                e,
                &Env {
                    row: &[],
                    parent,
                    aggs: None,
                },
            )? {
                Value::Int(i) if i >= 0 => i as usize,
                Value::Int(_) => {
                    return Err(SqlError::InvalidRowCount {
                        code: "2201X",
                        message: "OFFSET must not be negative",
                    })
                }
                _ => 0,
            },
            None => 0,
        };
        let limit = match &q.limit {
            Some(e) => match self.eval(
                e,
                &Env {
                    row: &[],
                    parent,
                    aggs: None,
                },
            )? {
                Value::Int(i) if i >= 0 => Some(i as usize),
                Value::Null if q.with_ties => {
                    return Err(SqlError::InvalidRowCount {
                        code: "2201W",
                        message: "row count cannot be null in FETCH FIRST ... WITH TIES clause",
                    })
                }
                Value::Null => None,
                _ => {
                    return Err(SqlError::InvalidRowCount {
                        code: "2201W",
                        message: "LIMIT must not be negative",
                    })
                }
            },
            None => None,
        };
        if let (Some(n), Some(id)) = (limit, limited_recursion(q)) {
            // `SELECT … FROM r LIMIT n` of a recursive query: its first rows are the result,
            // so the recursion stops there, as PostgreSQL's pipeline does (it may not end
            // otherwise).
            self.row_goals
                .borrow_mut()
                .insert(id, n.saturating_add(offset));
        }
        let needs_sort_keys = q.order.iter().any(|k| !k.on_output);
        if let (Some(n), true, BSet::Select(sel)) = (limit, q.order.is_empty(), &q.body) {
            let plain = sel.group.is_none()
                && !sel.distinct
                && sel.distinct_on.is_none()
                && sel.windowed.is_none()
                && sel.project_set.is_none();
            if plain {
                self.select_goal.set(Some(n.saturating_add(offset)));
            }
        }
        let mut rows: Vec<(Vec<Value>, Vec<Value>)> =
            self.run_set(&q.body, parent, &q.order, needs_sort_keys)?;
        let order = &q.order;
        let by_order = |a: &(Vec<Value>, Vec<Value>), b: &(Vec<Value>, Vec<Value>)| {
            for (i, k) in order.iter().enumerate() {
                let (x, y) = if k.on_output {
                    match &k.expr {
                        BExpr::Col(c) => (a.0.get(*c), b.0.get(*c)),
                        _ => (None, None),
                    }
                } else {
                    (a.1.get(i), b.1.get(i))
                };
                let (x, y) = (x.unwrap_or(&Value::Null), y.unwrap_or(&Value::Null));
                let ord = order_cmp(x, y, k.desc, k.nulls_first);
                if ord != std::cmp::Ordering::Equal {
                    return ord;
                }
            }
            std::cmp::Ordering::Equal
        };
        if !order.is_empty() {
            rows.sort_by(by_order);
        }
        if let BSet::Select(sel) = &q.body {
            if let Some(keys) = &sel.distinct_on {
                // The first row of each key, in the query's order.
                let mut seen = HashSet::new();
                rows.retain(|(r, _)| {
                    let k: Vec<Value> = keys
                        .iter()
                        .map(|&c| r.get(c).cloned().unwrap_or(Value::Null))
                        .collect();
                    seen.insert(value_key(&k))
                });
            }
        }
        // WITH TIES: the rows past the limit that sort equal to its last one (of the rows
        // DISTINCT ON kept, as PostgreSQL's Limit runs above its Unique).
        let limit = match (limit, q.with_ties) {
            (Some(n), true) if n > 0 => {
                let last = offset.saturating_add(n);
                let mut end = last.min(rows.len());
                while end < rows.len()
                    && by_order(&rows[last - 1], &rows[end]) == std::cmp::Ordering::Equal
                {
                    end += 1;
                }
                Some(end.saturating_sub(offset))
            }
            (limit, _) => limit,
        };
        if let BSet::Select(sel) = &q.body {
            // Only the output columns are left (DISTINCT ON's keys and ORDER BY's window
            // keys follow them).
            let visible = match &sel.distinct_on {
                Some(keys) => keys.first().copied().unwrap_or(0),
                None => q.columns.len(),
            };
            if rows.first().is_some_and(|(r, _)| r.len() > visible) {
                for (r, _) in &mut rows {
                    crate::types::truncate_row(r, visible);
                }
            }
        }
        let it = rows.into_iter().map(|r| r.0).skip(offset);
        Ok(match limit {
            Some(n) => it.take(n).collect(),
            None => it.collect(),
        })
    }

    /// The binary COPY tuples of a [`SimpleScan`], in heap order, appended to `out` (one
    /// chunk each), encoded from the scanned values without building output rows. Returns the
    /// number of rows, or `None` (nothing appended) when this transaction wrote to the table:
    /// the general path overlays its own writes.
    pub fn copy_simple_scan(
        &self,
        scan: &SimpleScan<'_>,
        types: &[PgType],
        out: &mut CopyChunks,
    ) -> Result<Option<usize>, SqlError> {
        let ranges = scan
            .keys
            .and_then(|ks| self.key_ranges(scan.table, scan.index, ks, None));
        let too_large = |_| SqlError::ProgramLimit {
            message: "COPY result exceeds 4 GiB".into(),
        };
        if crate::exec::has_own_writes(self.cx, scan.table) {
            return Ok(None);
        }
        let simple = scan.filter.and_then(ColumnFilter::of);
        let passes = |row: &[Value]| -> Result<bool, SqlError> {
            Ok(match (&simple, scan.filter) {
                (Some(f), _) => f.passes(row),
                (None, Some(f)) => {
                    let env = Env {
                        row,
                        parent: None,
                        aggs: None,
                    };
                    truthy(&self.eval(f, &env)?) == Some(true)
                }
                (None, None) => true,
            })
        };
        // Tuples go straight into `out` (after the header it holds), each noted with where
        // it starts; heap order is tuple order (see `exec::table_rows_where`), and an index
        // range's key order usually agrees, else they are put in order at the end.
        let (bytes0, chunks0) = (out.byte_len(), out.len());
        let mut tuples: Vec<u64> = Vec::new();
        let mut starts: Vec<usize> = Vec::new();
        let prefix = crate::keys::table_prefix(scan.table.id);
        let whole = [(prefix.clone(), crate::keys::prefix_end(&prefix))];
        let projection = (scan.cols.as_slice(), types);
        for range in ranges.as_deref().unwrap_or(&whole) {
            let (p, end) = range;
            let used = scan.used.as_deref();
            if let Some(rows) = crate::exec::kept_rows(self.cx, p, end, used) {
                let enc = self.encoded_rows(p, &rows, projection)?;
                let columns: Vec<_> = match &simple {
                    Some(f) => {
                        let mut scans = self.cx.st.scans.borrow_mut();
                        f.columns()
                            .into_iter()
                            .map(|c| scans.column(self.cx.at, p, &rows, c))
                            .collect()
                    }
                    None => Vec::new(),
                };
                out.reserve(enc.byte_len(), rows.len());
                for (i, (tuple, values)) in rows.iter().enumerate() {
                    self.cx.tick()?;
                    let pass = match &simple {
                        Some(f) => f.passes_at(&columns, i),
                        None => passes(values)?,
                    };
                    if pass {
                        let bytes = enc.tuple(i).ok_or_else(|| SqlError::Internal {
                            message: "kept row without its encoded tuple".into(),
                        })?;
                        starts.push(out.byte_len());
                        out.push(bytes).map_err(too_large)?;
                        tuples.push(*tuple);
                    }
                }
                continue;
            }
            crate::exec::visit_committed_rows(
                self.cx,
                scan.table,
                Some(std::slice::from_ref(range)),
                used,
                &mut |tuple, row| {
                    let row = row.values();
                    if passes(row)? {
                        starts.push(out.byte_len());
                        crate::wire::copy_binary_fields_into(row, &scan.cols, types, out.buf())?;
                        out.end_chunk().map_err(too_large)?;
                        tuples.push(tuple);
                    }
                    Ok(())
                },
            )?;
        }
        if !tuples.is_sorted() {
            let tail = out.split_off(bytes0, chunks0);
            let end = |i: usize| starts.get(i + 1).copied().unwrap_or(bytes0 + tail.len());
            let mut order: Vec<usize> = (0..tuples.len()).collect();
            order.sort_by_key(|&i| tuples[i]);
            for i in order {
                let span = tail
                    .get(starts[i] - bytes0..end(i) - bytes0)
                    .ok_or_else(|| SqlError::internal("COPY tuple outside its buffer"))?;
                out.push(span).map_err(too_large)?;
            }
        }
        Ok(Some(tuples.len()))
    }

    /// The binary COPY tuples of a kept range's `rows` for `projection`, from the scan
    /// cache or encoded now (every row, whichever pass the filter) and kept with the rows.
    fn encoded_rows(
        &self,
        start: &[u8],
        rows: &crate::scancache::ScannedRows,
        (cols, types): (&[usize], &[PgType]),
    ) -> Result<std::sync::Arc<crate::scancache::EncodedRows>, SqlError> {
        let at = self.cx.at;
        let kept = self
            .cx
            .st
            .scans
            .borrow_mut()
            .encoded(at, start, cols, types);
        if let Some(enc) = kept {
            if enc.len() == rows.len() {
                return Ok(enc);
            }
        }
        let mut enc = crate::scancache::EncodedRows::default();
        for (_, values) in rows.iter() {
            self.cx.tick()?;
            crate::wire::copy_binary_fields_into(values, cols, types, enc.buf())?;
            enc.end_tuple();
        }
        let enc = std::sync::Arc::new(enc);
        self.cx.st.scans.borrow_mut().put_encoded(
            at,
            start,
            rows,
            (cols, types),
            std::sync::Arc::clone(&enc),
        );
        Ok(enc)
    }

    /// Rows of a set expression, each with the sort keys that are not output columns.
    fn run_set(
        &self,
        s: &BSet,
        parent: Option<&Env<'_>>,
        order: &[OrderKey],
        keys: bool,
    ) -> Result<KeyedRows, SqlError> {
        match s {
            BSet::Select(sel) => self.run_select(sel, parent, if keys { order } else { &[] }),
            BSet::Query(q) => Ok(self
                .run_query(q, parent)?
                .into_iter()
                .map(|r| (r, vec![]))
                .collect()),
            BSet::Values(rows) => {
                let env = Env {
                    row: &[],
                    parent,
                    aggs: None,
                };
                rows.iter()
                    .map(|r| Ok((self.eval_each(r.iter(), &env)?, vec![])))
                    .collect()
            }
            BSet::WorkTable(id) => Ok(self
                .worktables
                .borrow()
                .get(id)
                .map(|rows| rows.iter().map(|r| (r.clone(), vec![])).collect())
                .unwrap_or_default()),
            BSet::Recursive {
                id,
                base,
                step,
                all,
            } => {
                let mut seen = HashSet::new();
                let mut fresh = |rows: KeyedRows| -> KeyedRows {
                    if *all {
                        rows
                    } else {
                        rows.into_iter()
                            .filter(|(r, _)| seen.insert(value_key(r)))
                            .collect()
                    }
                };
                let mut out = fresh(self.run_set(base, parent, &[], false)?);
                let goal = self.row_goals.borrow().get(id).copied();
                let mut added = out.len();
                while added > 0 && goal.is_none_or(|g| out.len() < g) {
                    let work: Vec<Vec<Value>> = out[out.len() - added..]
                        .iter()
                        .map(|(r, _)| r.clone())
                        .collect();
                    self.worktables.borrow_mut().insert(*id, Rc::new(work));
                    let round = fresh(self.run_set(step, parent, &[], false)?);
                    for _ in &round {
                        self.cx.tick()?;
                    }
                    added = round.len();
                    out.extend(round);
                }
                self.worktables.borrow_mut().remove(id);
                Ok(out)
            }
            BSet::Combine(SetOp::Union, l, r, all) => {
                let mut out = self.run_set(l, parent, &[], false)?;
                out.extend(self.run_set(r, parent, &[], false)?);
                if !*all {
                    let mut seen = HashSet::new();
                    out.retain(|(row, _)| seen.insert(value_key(row)));
                }
                Ok(out)
            }
            BSet::Combine(op, l, r, all) => {
                // How many times each row of the right side occurs (NULLs equal, as in
                // PostgreSQL's set operations); the left side's rows are kept in their order.
                let mut right: HashMap<Vec<u8>, usize> = HashMap::new();
                for (row, _) in self.run_set(r, parent, &[], false)? {
                    *right.entry(value_key(&row)).or_default() += 1;
                }
                let mut out = self.run_set(l, parent, &[], false)?;
                let mut seen = HashSet::new();
                out.retain(|(row, _)| {
                    let key = value_key(row);
                    let in_right = right.get_mut(&key);
                    match (op, all) {
                        // Each match uses up one right-hand occurrence.
                        (SetOp::Intersect, true) => match in_right {
                            Some(n) if *n > 0 => {
                                *n -= 1;
                                true
                            }
                            _ => false,
                        },
                        (SetOp::Except, true) => match in_right {
                            Some(n) if *n > 0 => {
                                *n -= 1;
                                false
                            }
                            _ => true,
                        },
                        (SetOp::Intersect, false) => in_right.is_some() && seen.insert(key),
                        _ => in_right.is_none() && seen.insert(key),
                    }
                });
                Ok(out)
            }
        }
    }

    /// The rows of one FROM item; a stored table leaves the columns outside `used` (when given)
    /// NULL without decoding them.
    fn source_rows(
        &self,
        src: &Source,
        parent: Option<&Env<'_>>,
        used: Option<&[bool]>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        match src {
            Source::Dual => Ok(vec![vec![]]),
            Source::Table { table, keys, index } => {
                let ranges = keys
                    .as_ref()
                    .and_then(|ks| self.key_ranges(table, *index, ks, parent));
                crate::exec::table_rows(self.cx, table, ranges.as_deref(), used)
            }
            Source::Virtual { schema, name } => {
                crate::exec::virtual_rows(self.cx, schema.as_deref(), name, None, used)
            }
            Source::Derived(q) if q.materialized && !q.correlated() => {
                let env = Env {
                    row: &[],
                    parent,
                    aggs: None,
                };
                Ok(self.subquery_rows(q, &env)?.as_ref().clone())
            }
            Source::Derived(q) => self.run_query(q, parent),
            Source::Function {
                name,
                args,
                ordinality,
            } => {
                let env = Env {
                    row: &[],
                    parent,
                    aggs: None,
                };
                let vals = self.eval_each(args.iter(), &env)?;
                let mut rows = set_function_rows(self.cx, name, &vals)?;
                if *ordinality {
                    for (n, row) in (1..).zip(&mut rows) {
                        row.push(Value::Int(n));
                    }
                }
                Ok(rows)
            }
            Source::Values(rows) => {
                let env = Env {
                    row: &[],
                    parent,
                    aggs: None,
                };
                rows.iter()
                    .map(|r| r.iter().map(|e| self.eval(e, &env)).collect())
                    .collect()
            }
        }
    }

    /// Encoded key ranges for a pushed-down scan, in key order; `None` falls back to the
    /// whole table (a value of another type, or an expression that fails: the filter decides
    /// then).
    pub fn key_ranges(
        &self,
        t: &TableRef,
        index: Option<usize>,
        keys: &KeyScan,
        parent: Option<&Env<'_>>,
    ) -> Option<Vec<crate::exec::KeyRangeBytes>> {
        let (start, key_cols) = match index {
            Some(n) => (
                crate::keys::index_prefix(t.id, u8::try_from(n).ok()?),
                &t.indexes.get(n)?.columns,
            ),
            None => (crate::keys::table_prefix(t.id), &t.primary_key),
        };
        let env = Env {
            row: &[],
            parent,
            aggs: None,
        };
        // A field's encoding for column `k` of the key; `Some(None)` for NULL.
        let field = |k: usize, e: &BExpr| -> Option<Option<Vec<u8>>> {
            let ty = t.columns.get(*key_cols.get(k)?)?.ty;
            let v = self.eval(e, &env).ok()?;
            if v.is_null() {
                return Some(None);
            }
            if !key_compatible(&v, ty) {
                return None;
            }
            let mut out = Vec::new();
            crate::keys::encode_field(&mut out, &v, ty);
            Some(Some(out))
        };
        // The range's bounds, encoded once (`None`: a value of another type).
        let next = keys.prefixes.first().map_or(0, Vec::len);
        let bound = |b: &Option<(BExpr, bool)>| -> Option<Bound> {
            Some(match b {
                None => Bound::Open,
                Some((e, inclusive)) => match field(next, e)? {
                    Some(f) => Bound::At(f, *inclusive),
                    None => Bound::Null,
                },
            })
        };
        let (lo, hi) = match &keys.range {
            None => (Bound::Open, Bound::Open),
            Some(r) => (bound(&r.lo)?, bound(&r.hi)?),
        };
        if matches!(lo, Bound::Null) || matches!(hi, Bound::Null) {
            return Some(Vec::new()); // `k > NULL` is never true
        }
        let mut out = Vec::with_capacity(keys.prefixes.len());
        'prefix: for p in &keys.prefixes {
            let mut key = start.clone();
            for (k, e) in p.iter().enumerate() {
                match field(k, e)? {
                    Some(f) => key.extend_from_slice(&f),
                    None => continue 'prefix, // `= NULL` matches nothing
                }
            }
            // Every key holding a value `v` of the next column starts with `key` + `v`'s
            // encoding, and a field's encoding is never a prefix of another's.
            let with = |f: &[u8]| [key.as_slice(), f].concat();
            let from = match &lo {
                Bound::At(f, true) => with(f),
                Bound::At(f, false) => crate::keys::prefix_end(&with(f)),
                Bound::Open | Bound::Null => key.clone(),
            };
            let to = match &hi {
                Bound::At(f, true) => crate::keys::prefix_end(&with(f)),
                Bound::At(f, false) => with(f),
                Bound::Open | Bound::Null => crate::keys::prefix_end(&key),
            };
            if from < to {
                out.push((from, to));
            }
        }
        out.sort();
        out.dedup();
        Some(out)
    }

    /// The joined rows of a FROM list (before WHERE). With `used` (see [`used_columns`]), a
    /// stored table leaves the columns nothing reads NULL without decoding them. Items with
    /// [`FromItem::keep`] (a [`compact_select`]) add only those columns: every join step
    /// copies the rows it combines, and the catalog views DuckDB and psql join have dozens of
    /// text columns each.
    pub fn run_from(
        &self,
        from: &[FromItem],
        parent: Option<&Env<'_>>,
        used: Option<&[bool]>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let mut acc: Vec<Vec<Value>> = vec![vec![]];
        let mut start = 0;
        // Joined rows are built at their final width once, then moved through the steps.
        let total: usize = from.iter().map(FromItem::joined_width).sum();
        let mut key = Vec::new();
        for (i, item) in from.iter().enumerate() {
            let joined_before: usize = from[..i].iter().map(FromItem::joined_width).sum();
            let mask = used.and_then(|u| u.get(start..start + item.width));
            if item.lateral == Lateral::Read {
                acc = self.lateral_join(item, acc, parent)?;
                start += item.width;
                continue;
            }
            // Bound under the joined row, reading none of it: an empty row stands in for it.
            let unread = Env {
                row: &[],
                parent,
                aggs: None,
            };
            let parent = match item.lateral {
                Lateral::Unread => Some(&unread),
                Lateral::No | Lateral::Read => parent,
            };
            let mut right = match (&item.source, self.needed_keys(item, &acc, parent)?) {
                (Source::Virtual { schema, name }, Some((column, keys))) => {
                    // Asked for every candidate row of the catalog: one key buffer for all.
                    let buf = RefCell::new(Vec::new());
                    let keep = |p: crate::pgcatalog::Probe<'_>| {
                        let mut k = buf.borrow_mut();
                        k.clear();
                        push_probe_key(&mut k, p) && keys.contains(k.as_slice())
                    };
                    crate::exec::virtual_rows(
                        self.cx,
                        schema.as_deref(),
                        name.as_str(),
                        Some(&crate::pgcatalog::Only {
                            column,
                            keep: &keep,
                        }),
                        mask,
                    )?
                }
                _ => self.source_rows(&item.source, parent, mask)?,
            };
            if let Some(pre) = &item.pre_filter {
                let mut kept = Vec::with_capacity(right.len());
                for row in right {
                    let env = Env {
                        row: &row,
                        parent,
                        aggs: None,
                    };
                    if truthy(&self.eval(pre, &env)?) == Some(true) {
                        kept.push(row);
                    }
                }
                right = kept;
            }
            if from.len() > 1 && item.keep.is_none() {
                // Joined rows concatenate the items' rows: each must be its full width (a
                // scan ends a row after the last column read).
                for row in &mut right {
                    if row.len() < item.width {
                        row.resize(item.width, Value::Null);
                    }
                }
            }
            start += item.width;
            let first = acc.len() == 1
                && acc[0].is_empty()
                && item.hash_keys.is_empty()
                && item.on.is_none()
                && !item.kind.outer();
            // Equi-join keys select candidate rows through a hash index (over the item's full
            // rows); otherwise every row of the right side is a candidate. ON (the residual
            // condition) and LEFT padding are shared. Rows with equal keys are chained in
            // ascending order, so the joined rows keep the right side's order.
            let hashed = !item.hash_keys.is_empty();
            let mut heads: crate::keyhash::KeyMap<usize> = Default::default();
            let mut chain = Vec::new();
            if hashed {
                chain = vec![usize::MAX; right.len()];
                for (ri, r) in right.iter().enumerate().rev() {
                    let env = Env {
                        row: r,
                        parent,
                        aggs: None,
                    };
                    if !self.join_key(item.hash_keys.iter().map(|(_, rk)| rk), &env, &mut key)? {
                        continue;
                    }
                    match heads.get_mut(key.as_slice()) {
                        Some(head) => {
                            chain[ri] = *head;
                            *head = ri;
                        }
                        None => {
                            heads.insert(key.clone(), ri);
                        }
                    }
                }
            }
            if let Some(keep) = &item.keep {
                for row in &mut right {
                    compact_in_place(row, keep);
                    if first {
                        row.reserve_exact(total.saturating_sub(row.len()));
                    } else if row.capacity() > 2 * row.len() {
                        // Shrinking reallocates in place; a copy would allocate anew.
                        row.shrink_to_fit();
                    }
                }
            }
            if first {
                // The first item: its rows are the joined rows as they are (no copy).
                if from.len() > 1 && item.keep.is_none() {
                    for row in &mut right {
                        row.reserve_exact(total - row.len());
                    }
                }
                acc = right;
                continue;
            }
            let mut next = Vec::new();
            let mut candidates = Vec::new();
            let added = item.joined_width();
            let left_width = joined_before;
            let mut right_matched = item
                .kind
                .keeps_unmatched_right()
                .then(|| vec![false; right.len()]);
            for mut l in acc {
                candidates.clear();
                if hashed {
                    let env = Env {
                        row: &l,
                        parent,
                        aggs: None,
                    };
                    if self.join_key(item.hash_keys.iter().map(|(lk, _)| lk), &env, &mut key)? {
                        let mut ri = heads.get(key.as_slice()).copied().unwrap_or(usize::MAX);
                        while let Some(&after) = chain.get(ri) {
                            candidates.push(ri);
                            ri = after;
                        }
                    }
                } else {
                    candidates.extend(0..right.len());
                }
                let mut matched = false;
                let width = l.len();
                for (n, &ri) in candidates.iter().enumerate() {
                    self.cx.tick()?;
                    // The last candidate takes the left row itself (an equi-join on a key
                    // usually has exactly one); the others copy it.
                    let mut row = if n + 1 == candidates.len() {
                        std::mem::take(&mut l)
                    } else {
                        let mut row = Vec::with_capacity(total);
                        row.extend_from_slice(&l);
                        row
                    };
                    row.extend(right[ri].iter().cloned());
                    let ok = match &item.on {
                        Some(on) => {
                            truthy(&self.eval(
                                on,
                                &Env {
                                    row: &row,
                                    parent,
                                    aggs: None,
                                },
                            )?) == Some(true)
                        }
                        None => true,
                    };
                    if ok {
                        matched = true;
                        if let Some(m) = right_matched.as_mut() {
                            m[ri] = true;
                        }
                        next.push(row);
                    } else if l.is_empty() && width > 0 {
                        // The taken left row did not match: give it back.
                        row.truncate(width);
                        l = row;
                    }
                }
                if !matched && item.kind.keeps_unmatched_left() {
                    l.extend(std::iter::repeat_n(Value::Null, added));
                    next.push(l);
                }
            }
            if let Some(matched) = right_matched {
                // RIGHT / FULL JOIN: each right row nothing matched, after NULLs for the
                // joined columns so far.
                for (r, m) in right.iter().zip(matched) {
                    if !m {
                        let mut row = Vec::with_capacity(total);
                        row.extend(std::iter::repeat_n(Value::Null, left_width));
                        row.extend(r.iter().cloned());
                        next.push(row);
                    }
                }
            }
            acc = next;
        }
        Ok(acc)
    }

    /// A LATERAL item ([`Lateral::Read`]) joined to `acc`: its rows computed for each joined
    /// row, which its source reads as its enclosing row (a subquery's rows are kept per
    /// distinct values it reads, as for a correlated subquery). Only INNER, CROSS and LEFT
    /// joins reach here (the binder refuses the others, as PostgreSQL does).
    fn lateral_join(
        &self,
        item: &FromItem,
        acc: Vec<Vec<Value>>,
        parent: Option<&Env<'_>>,
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let mut next = Vec::new();
        let (mut left_key, mut right_key) = (Vec::new(), Vec::new());
        for mut l in acc {
            let at = Env {
                row: &l,
                parent,
                aggs: None,
            };
            let right = match &item.source {
                Source::Derived(q) => self.subquery_rows(q, &at)?,
                source => Rc::new(self.source_rows(source, Some(&at), None)?),
            };
            let keyed = item.hash_keys.is_empty()
                || self.join_key(item.hash_keys.iter().map(|(lk, _)| lk), &at, &mut left_key)?;
            let width = l.len();
            let mut matched = false;
            for r in right.iter() {
                self.cx.tick()?;
                let own = Env {
                    row: r,
                    parent,
                    aggs: None,
                };
                if let Some(pre) = &item.pre_filter {
                    if truthy(&self.eval(pre, &own)?) != Some(true) {
                        continue;
                    }
                }
                // USING over a lateral item: its keys must equal the joined row's.
                if !item.hash_keys.is_empty() {
                    let equal = keyed
                        && self.join_key(
                            item.hash_keys.iter().map(|(_, rk)| rk),
                            &own,
                            &mut right_key,
                        )?
                        && left_key == right_key;
                    if !equal {
                        continue;
                    }
                }
                let mut row = Vec::with_capacity(width + item.width);
                row.extend_from_slice(&l);
                row.extend(r.iter().cloned());
                row.resize(width + item.width, Value::Null);
                let ok = match &item.on {
                    Some(on) => {
                        let joined = Env {
                            row: &row,
                            parent,
                            aggs: None,
                        };
                        truthy(&self.eval(on, &joined)?) == Some(true)
                    }
                    None => true,
                };
                if ok {
                    matched = true;
                    next.push(row);
                }
            }
            if !matched && item.kind.keeps_unmatched_left() {
                l.extend(std::iter::repeat_n(Value::Null, item.width));
                next.push(l);
            }
        }
        Ok(next)
    }

    /// Each of `exprs` over `env`, in a vector sized up front (collecting `Result`s would grow
    /// one from nothing, reallocating per row).
    fn eval_each<'e>(
        &self,
        exprs: impl ExactSizeIterator<Item = &'e BExpr>,
        env: &Env<'_>,
    ) -> Result<Vec<Value>, SqlError> {
        let mut out = Vec::with_capacity(exprs.len());
        for e in exprs {
            out.push(self.eval(e, env)?);
        }
        Ok(out)
    }

    /// The [`value_key`] of `exprs` over `env`, written to `key`; false when one is NULL (it
    /// joins nothing).
    fn join_key<'e>(
        &self,
        exprs: impl Iterator<Item = &'e BExpr>,
        env: &Env<'_>,
        key: &mut Vec<u8>,
    ) -> Result<bool, SqlError> {
        key.clear();
        for e in exprs {
            let owned;
            let v = match peek(e, env) {
                Some(v) => v,
                None => {
                    owned = self.eval(e, env)?;
                    &owned
                }
            };
            if v.is_null() {
                return Ok(false);
            }
            push_value_key(key, v);
        }
        Ok(true)
    }

    /// For a virtual relation joined in `run_from`: a column and the only values (as
    /// [`value_key`]s) its rows can have to be used, so that building the relation can skip
    /// the rest. Taken from the equi-join key when the rows joined so far are few, else from a
    /// pushed-down `column = constant` or `column IN (constants)` of a matching type.
    fn needed_keys(
        &self,
        item: &FromItem,
        acc: &[Vec<Value>],
        parent: Option<&Env<'_>>,
    ) -> Result<Option<NeededKeys>, SqlError> {
        let Source::Virtual { schema, name } = &item.source else {
            return Ok(None);
        };
        // A RIGHT or FULL JOIN keeps the rows nothing matches.
        if item.kind.keeps_unmatched_right() {
            return Ok(None);
        }
        // Many joined rows can share few values (every column of a catalog has one of a
        // handful of types), so the bound is on distinct values.
        if let Some((left, BExpr::Col(c))) = item.hash_keys.first() {
            let mut keys = KeySet::default();
            let mut key = Vec::new();
            let mut few = true;
            for row in acc {
                let env = Env {
                    row,
                    parent,
                    aggs: None,
                };
                if self.join_key(std::iter::once(left), &env, &mut key)?
                    && !keys.contains(key.as_slice())
                {
                    if keys.len() == NEEDED_KEYS_MAX {
                        few = false;
                        break;
                    }
                    keys.insert(key.clone());
                }
            }
            if few {
                return Ok(Some((*c, keys)));
            }
        }
        let Some(pre) = &item.pre_filter else {
            return Ok(None);
        };
        let Some((_, cols)) = crate::pgcatalog::columns(schema.as_deref(), name) else {
            return Ok(None);
        };
        let fits = |c: usize, v: &BExpr| match (cols.get(c), v) {
            (Some(col), BExpr::Const(v)) => key_compatible(v, col.ty),
            _ => false,
        };
        for c in conjuncts(pre.clone()) {
            let (col, consts) = match c {
                BExpr::Bin(BinOp::Eq, a, b) => match (*a, *b) {
                    (BExpr::Col(i), v) | (v, BExpr::Col(i)) if fits(i, &v) => (i, vec![v]),
                    _ => continue,
                },
                BExpr::InList(a, list, false) => match *a {
                    BExpr::Col(i) if list.iter().all(|v| fits(i, v)) => (i, list),
                    _ => continue,
                },
                _ => continue,
            };
            let keys = consts
                .iter()
                .filter_map(|v| match v {
                    BExpr::Const(v) => Some(value_key(std::slice::from_ref(v))),
                    _ => None,
                })
                .collect();
            return Ok(Some((col, keys)));
        }
        Ok(None)
    }

    /// Whether `sel` is `SELECT max(k) … FROM t` (any number of `max(k)`, nothing else
    /// aggregated, no WHERE or GROUP BY) with `k` the leading primary-key column of `t`, an
    /// integer, and no own writes to `t` in this transaction.
    fn max_of_leading_key(&self, sel: &BSelect, item: &FromItem) -> bool {
        let Source::Table {
            table, keys: None, ..
        } = &item.source
        else {
            return false;
        };
        let Some(&k) = table.primary_key.first() else {
            return false;
        };
        let integer_key = table.columns.get(k).is_some_and(|c| c.ty.is_integer());
        let only_max_k = !sel.aggs.is_empty()
            && sel.aggs.iter().all(|a| {
                a.func == AggFunc::Max
                    && a.filter.is_none()
                    && matches!(a.args.as_slice(), [BExpr::Col(c)] if *c == k)
            });
        let prefix = crate::keys::table_prefix(table.id);
        let own_writes = self.cx.pending.is_some_and(|p| {
            p.tables.contains_key(&table.id)
                || p.writes
                    .range(prefix.clone()..crate::keys::prefix_end(&prefix))
                    .next()
                    .is_some()
        });
        integer_key
            && only_max_k
            && sel.group.as_ref().is_some_and(Vec::is_empty)
            && !item.kind.outer()
            && item.on.is_none()
            && item.hash_keys.is_empty()
            && !own_writes
    }

    fn run_select(
        &self,
        sel: &BSelect,
        parent: Option<&Env<'_>>,
        order: &[OrderKey],
    ) -> Result<KeyedRows, SqlError> {
        // Taken first: the subqueries this select runs have their own.
        let goal = self.select_goal.take();
        let keep = |r: &[Value], f: &BExpr| -> Result<bool, SqlError> {
            Ok(truthy(&self.eval(
                f,
                &Env {
                    row: r,
                    parent,
                    aggs: None,
                },
            )?) == Some(true))
        };
        // A join carries only the columns something reads. (A select with grouping sets reads
        // its keys from columns past its FROM row's: it takes the rows whole.)
        let used = if sel.grouping_sets.is_some() {
            None
        } else if sel.from.len() > 1
            || matches!(
                sel.from.first().map(|f| &f.source),
                Some(Source::Table { .. })
            )
        {
            used_columns(sel, order)
        } else {
            None
        };
        let compacted = match (&used, sel.from.len() > 1) {
            (Some(u), true) => compact_select(sel, order, u),
            _ => None,
        };
        let (sel, order) = match &compacted {
            Some((s, o)) => (s, o.as_slice()),
            None => (sel, order),
        };
        let max_of_key = |item: &FromItem| {
            sel.filter.is_none()
                && sel.grouping_sets.is_none()
                && self.max_of_leading_key(sel, item)
        };
        if !matches!(sel.from.as_slice(), [item] if max_of_key(item)) && sel.grouping_sets.is_none()
        {
            if let Some(groups) = self.stream_groups(sel, parent, used.as_deref())? {
                let mut out = Vec::new();
                for (first, aggs) in &groups {
                    self.emit_group(sel, parent, order, first, aggs, &mut out)?;
                }
                let out = self.apply_windows(sel, parent, out)?;
                let out = self.apply_project_set(sel, parent, out)?;
                return Ok(distinct_rows(sel, out));
            }
        }
        // A filtered scan of one table is read through its key ranges (evaluated once).
        let lone = sel
            .filter
            .as_ref()
            .and_then(|_| self.lone_table(sel, parent));
        let rows = match (&sel.filter, sel.from.as_slice(), lone) {
            // `max(k)` of a table's leading integer key column alone (DuckLake's
            // `SELECT MAX(snapshot_id) FROM ducklake_snapshot` in every transaction): only the
            // last row can hold it.
            (None, [item], _) if self.max_of_leading_key(sel, item) => match &item.source {
                Source::Table { table, .. } => {
                    crate::exec::last_row(self.cx, table)?.into_iter().collect()
                }
                _ => Vec::new(),
            },
            // One stored table: filter each row as it is decoded, so rows that do not match
            // are never collected (most of a catalog scan, typically).
            (Some(f), _, Some((table, ranges))) => crate::exec::table_rows_where(
                self.cx,
                table,
                ranges.as_deref(),
                used.as_deref(),
                &mut |r| keep(r, f),
            )?,
            (filter, _, _) => {
                // Joins copy rows (unread columns are left out, see above); a stored table
                // skips decoding them.
                let mut rows = self.run_from(&sel.from, parent, used.as_deref())?;
                if let Some(f) = filter {
                    let mut kept = Vec::with_capacity(rows.len());
                    for r in rows {
                        self.cx.tick()?;
                        if keep(&r, f)? {
                            kept.push(r);
                        } else {
                            crate::types::release_row(r);
                        }
                    }
                    rows = kept;
                }
                rows
            }
        };
        let mut out = Vec::new();
        match (&sel.group, &sel.grouping_sets) {
            (Some(group), Some(gs)) => {
                self.group_by_sets(sel, gs, group, &rows, parent, order, &mut out)?
            }
            (None, _) => {
                // Bare columns of the select list (`SELECT a, b FROM …`, every catalog read
                // DuckDB makes) move out of the row instead of being copied.
                let moves = projection_moves(&sel.projection);
                for mut r in rows {
                    if goal.is_some_and(|g| out.len() >= g) {
                        crate::types::release_row(r);
                        continue;
                    }
                    self.cx.tick()?;
                    let env = Env {
                        row: &r,
                        parent,
                        aggs: None,
                    };
                    let keys = self.eval_each(order.iter().map(|k| &k.expr), &env)?;
                    let mut vals = Vec::with_capacity(sel.projection.len());
                    for (p, m) in sel.projection.iter().zip(&moves) {
                        vals.push(match m {
                            Some(_) => Value::Null,
                            None => self.eval(p, &env)?,
                        });
                    }
                    for (v, m) in vals.iter_mut().zip(&moves) {
                        if let Some(taken) = m.and_then(|c| r.get_mut(c)) {
                            *v = std::mem::replace(taken, Value::Null);
                        }
                    }
                    crate::types::release_row(r);
                    out.push((vals, keys));
                }
            }
            (Some(group), None) => {
                let mut groups: Vec<(Vec<Value>, Vec<usize>)> = Vec::new();
                let mut index: crate::keyhash::KeyMap<usize> = Default::default();
                for (ri, r) in rows.iter().enumerate() {
                    self.cx.tick()?;
                    let env = Env {
                        row: r,
                        parent,
                        aggs: None,
                    };
                    let k = self.eval_each(group.iter(), &env)?;
                    let key = value_key(&k);
                    match index.get(&key) {
                        Some(&gi) => groups[gi].1.push(ri),
                        None => {
                            index.insert(key, groups.len());
                            groups.push((k, vec![ri]));
                        }
                    }
                }
                if groups.is_empty() && group.is_empty() {
                    groups.push((vec![], vec![]));
                }
                let empty: Vec<Value> = Vec::new();
                for (_, members) in &groups {
                    let agg_vals = sel
                        .aggs
                        .iter()
                        .map(|a| self.aggregate(a, members, &rows, parent))
                        .collect::<Result<Vec<_>, _>>()?;
                    let first: &[Value] = members
                        .first()
                        .map(|i| rows[*i].as_slice())
                        .unwrap_or(&empty);
                    self.emit_group(sel, parent, order, first, &agg_vals, &mut out)?;
                }
            }
        }
        let out = self.apply_windows(sel, parent, out)?;
        let out = self.apply_project_set(sel, parent, out)?;
        Ok(distinct_rows(sel, out))
    }

    /// Groups `rows` once per grouping set ([`GroupingSets`]) and emits each group, with
    /// its keys (NULL where the set leaves them out) and GROUPING bits after its first row.
    #[allow(
        clippy::too_many_arguments,
        reason = "run_select's state, passed through"
    )]
    fn group_by_sets(
        &self,
        sel: &BSelect,
        gs: &GroupingSets,
        group: &[BExpr],
        rows: &[Vec<Value>],
        parent: Option<&Env<'_>>,
        order: &[OrderKey],
        out: &mut KeyedRows,
    ) -> Result<(), SqlError> {
        let mut keys = Vec::with_capacity(rows.len());
        for r in rows {
            self.cx.tick()?;
            let env = Env {
                row: r,
                parent,
                aggs: None,
            };
            keys.push(self.eval_each(group.iter(), &env)?);
        }
        for set in &gs.sets {
            let mut groups: Vec<Vec<usize>> = Vec::new();
            let mut index: crate::keyhash::KeyMap<usize> = Default::default();
            for (ri, k) in keys.iter().enumerate() {
                self.cx.tick()?;
                let of_set: Vec<Value> = set
                    .iter()
                    .map(|&i| k.get(i).cloned().unwrap_or(Value::Null))
                    .collect();
                let key = value_key(&of_set);
                match index.get(&key) {
                    Some(&gi) => groups[gi].push(ri),
                    None => {
                        index.insert(key, groups.len());
                        groups.push(vec![ri]);
                    }
                }
            }
            if groups.is_empty() && set.is_empty() {
                // The empty set is one group, even of no rows.
                groups.push(Vec::new());
            }
            for members in &groups {
                let agg_vals = sel
                    .aggs
                    .iter()
                    .map(|a| self.aggregate(a, members, rows, parent))
                    .collect::<Result<Vec<_>, _>>()?;
                let first = members.first().copied();
                let mut row: Vec<Value> = first
                    .and_then(|i| rows.get(i))
                    .map(|r| r.iter().take(gs.base).cloned().collect())
                    .unwrap_or_default();
                row.resize(gs.base, Value::Null);
                let in_set = |i: usize| set.contains(&i);
                for (i, k) in group.iter().enumerate() {
                    // (Unless a key of the set is the same column.)
                    let held = |c: &BExpr| set.iter().any(|&j| group.get(j) == Some(c));
                    if let (BExpr::Col(c), false) = (k, in_set(i) || held(k)) {
                        if let Some(v) = row.get_mut(*c) {
                            *v = Value::Null;
                        }
                    }
                }
                for i in 0..group.len() {
                    row.push(match (in_set(i), first.and_then(|f| keys.get(f))) {
                        (true, Some(k)) => k.get(i).cloned().unwrap_or(Value::Null),
                        _ => Value::Null,
                    });
                }
                row.extend((0..group.len()).map(|i| Value::Int(i64::from(!in_set(i)))));
                self.emit_group(sel, parent, order, &row, &agg_vals, out)?;
            }
        }
        Ok(())
    }

    /// Runs a select list's set-returning calls over its projected rows ([`ProjectSet`]):
    /// each row becomes as many rows as its longest call returns (none when every call
    /// returns nothing), each with the row's ORDER BY keys.
    fn apply_project_set(
        &self,
        sel: &BSelect,
        parent: Option<&Env<'_>>,
        out: KeyedRows,
    ) -> Result<KeyedRows, SqlError> {
        let Some(ps) = &sel.project_set else {
            return Ok(out);
        };
        let mut expanded = Vec::with_capacity(out.len());
        for (row, keys) in out {
            let results = ps
                .calls
                .iter()
                .map(|(name, args)| {
                    let args: Vec<Value> = args
                        .iter()
                        .map(|&c| row.get(c).cloned().unwrap_or(Value::Null))
                        .collect();
                    set_function_rows(self.cx, name, &args)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let n = results.iter().map(Vec::len).max().unwrap_or(0);
            for i in 0..n {
                self.cx.tick()?;
                let mut r = row.clone();
                // A call returning rows of several columns returns a record of them.
                r.extend(
                    results
                        .iter()
                        .map(|rows| match rows.get(i).map(Vec::as_slice) {
                            Some([one]) => one.clone(),
                            Some(fields @ [_, _, ..]) => Value::Array(fields.into()),
                            _ => Value::Null,
                        }),
                );
                self.fill_placeholders(&mut r, &ps.post, ps.visible, parent)?;
                expanded.push((r, keys.clone()));
            }
            crate::types::release_row(row);
        }
        Ok(expanded)
    }

    /// Computes a select's window functions over its projected rows ([`Windowed`]): fills in
    /// the output columns that hold window calls and drops the windows' input columns.
    fn apply_windows(
        &self,
        sel: &BSelect,
        parent: Option<&Env<'_>>,
        mut out: KeyedRows,
    ) -> Result<KeyedRows, SqlError> {
        let Some(w) = &sel.windowed else {
            return Ok(out);
        };
        // The windows read the projected rows in place (no copy of the result).
        let rows: Vec<&[Value]> = out.iter().map(|(r, _)| r.as_slice()).collect();
        let mut tick = || self.cx.tick();
        let results = w
            .specs
            .iter()
            .map(|s| crate::window::compute(s, &rows, &mut tick))
            .collect::<Result<Vec<_>, _>>()?;
        drop(rows);
        for (i, (row, _)) in out.iter_mut().enumerate() {
            row.extend(results.iter().map(|r| r[i].clone()));
            self.fill_placeholders(row, &w.post, w.visible, parent)?;
        }
        Ok(out)
    }

    /// Computes the output columns of a projected row that hold window or set-returning calls
    /// (`post`, over the row followed by the calls' values), then cuts the row to its
    /// `visible` columns.
    fn fill_placeholders(
        &self,
        row: &mut Vec<Value>,
        post: &[(usize, BExpr)],
        visible: usize,
        parent: Option<&Env<'_>>,
    ) -> Result<(), SqlError> {
        let env = Env {
            row,
            parent,
            aggs: None,
        };
        let vals = post
            .iter()
            .map(|(j, e)| Ok((*j, self.eval(e, &env)?)))
            .collect::<Result<Vec<_>, SqlError>>()?;
        for (j, v) in vals {
            row[j] = v;
        }
        crate::types::truncate_row(row, visible);
        Ok(())
    }

    /// Appends one group's output row (with its ORDER BY keys) unless HAVING rejects it.
    /// `first` is the group's first row in heap order (for grouped columns), `aggs` its
    /// aggregates' values.
    fn emit_group(
        &self,
        sel: &BSelect,
        parent: Option<&Env<'_>>,
        order: &[OrderKey],
        first: &[Value],
        aggs: &[Value],
        out: &mut KeyedRows,
    ) -> Result<(), SqlError> {
        let env = Env {
            row: first,
            parent,
            aggs: Some(aggs),
        };
        if let Some(h) = &sel.having {
            if truthy(&self.eval(h, &env)?) != Some(true) {
                return Ok(());
            }
        }
        let vals = self.eval_each(sel.projection.iter(), &env)?;
        let keys = self.eval_each(order.iter().map(|k| &k.expr), &env)?;
        out.push((vals, keys));
        Ok(())
    }

    /// The table and key ranges (`None`: all of it) when the FROM list is one stored table
    /// read alone, whose rows the scan can hand over one by one.
    fn lone_table<'s>(
        &self,
        sel: &'s BSelect,
        parent: Option<&Env<'_>>,
    ) -> Option<(&'s TableRef, Option<Vec<crate::exec::KeyRangeBytes>>)> {
        let [FromItem {
            source: Source::Table { table, keys, index },
            kind,
            on: None,
            hash_keys,
            ..
        }] = sel.from.as_slice()
        else {
            return None;
        };
        if !hash_keys.is_empty() || kind.outer() {
            return None;
        }
        let ranges = keys
            .as_ref()
            .and_then(|ks| self.key_ranges(table, *index, ks, parent));
        Some((table, ranges))
    }

    /// A grouped query over one stored table, grouped and aggregated as the scan visits its
    /// rows (each group as its first row and its aggregates' values): per group only its first row (in heap order) and its aggregates' state are kept,
    /// so `SELECT count(*) FROM t` holds no rows at all. Groups come out in the order of their
    /// first rows, as from the materialised rows. `None` (nothing read) when the query is not
    /// of that form, when an aggregate's result could depend on the order of its inputs (the
    /// scan visits rows in key order, not heap order), or when this transaction has written
    /// to the table.
    fn stream_groups(
        &self,
        sel: &BSelect,
        parent: Option<&Env<'_>>,
        used: Option<&[bool]>,
    ) -> Result<Option<KeyedRows>, SqlError> {
        let Some(group) = &sel.group else {
            return Ok(None);
        };
        if !sel.aggs.iter().all(AggState::order_insensitive) {
            return Ok(None);
        }
        let Some((table, ranges)) = self.lone_table(sel, parent) else {
            return Ok(None);
        };
        struct Group {
            first_tuple: u64,
            first: Vec<Value>,
            states: Vec<AggState>,
        }
        let mut groups: Vec<Group> = Vec::new();
        let mut by_key: crate::keyhash::KeyMap<usize> = Default::default();
        let visited = crate::exec::visit_committed_rows(
            self.cx,
            table,
            ranges.as_deref(),
            used,
            &mut |tuple, row| {
                let env = Env {
                    row: row.values(),
                    parent,
                    aggs: None,
                };
                if let Some(f) = &sel.filter {
                    if truthy(&self.eval(f, &env)?) != Some(true) {
                        return Ok(());
                    }
                }
                let k = self.eval_each(group.iter(), &env)?;
                let key = value_key(&k);
                let gi = match by_key.get(&key) {
                    Some(&gi) => gi,
                    None => {
                        by_key.insert(key, groups.len());
                        groups.push(Group {
                            first_tuple: u64::MAX,
                            first: Vec::new(),
                            states: sel.aggs.iter().map(AggState::new).collect(),
                        });
                        groups.len() - 1
                    }
                };
                let g = &mut groups[gi];
                for (a, state) in sel.aggs.iter().zip(g.states.iter_mut()) {
                    self.feed_aggregate(state, a, row.values(), parent)?;
                }
                if tuple < g.first_tuple {
                    g.first_tuple = tuple;
                    g.first = row.into_values(used);
                }
                Ok(())
            },
        )?;
        if !visited {
            return Ok(None);
        }
        groups.sort_by_key(|g| g.first_tuple);
        if groups.is_empty() && group.is_empty() {
            groups.push(Group {
                first_tuple: 0,
                first: Vec::new(),
                states: sel.aggs.iter().map(AggState::new).collect(),
            });
        }
        groups
            .into_iter()
            .map(|g| {
                let aggs = g
                    .states
                    .into_iter()
                    .map(AggState::finish)
                    .collect::<Result<Vec<_>, _>>()?;
                Ok((g.first, aggs))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    fn aggregate(
        &self,
        a: &AggSpec,
        members: &[usize],
        rows: &[Vec<Value>],
        parent: Option<&Env<'_>>,
    ) -> Result<Value, SqlError> {
        if a.func == AggFunc::CountStar && a.filter.is_none() {
            return Ok(Value::Int(members.len() as i64));
        }
        let mut state = AggState::new(a);
        for &i in members {
            self.cx.tick()?;
            self.feed_aggregate(&mut state, a, &rows[i], parent)?;
        }
        state.finish()
    }

    /// Feeds one row's input of `a` to its state.
    fn feed_aggregate(
        &self,
        state: &mut AggState,
        a: &AggSpec,
        row: &[Value],
        parent: Option<&Env<'_>>,
    ) -> Result<(), SqlError> {
        let env = Env {
            row,
            parent,
            aggs: None,
        };
        if let Some(f) = &a.filter {
            if truthy(&self.eval(f, &env)?) != Some(true) {
                return Ok(());
            }
        }
        if a.func == AggFunc::CountStar {
            state.count_row();
            return Ok(());
        }
        let v = match a.args.first() {
            Some(e) => self.eval(e, &env)?,
            None => Value::Null,
        };
        if v.is_null() && !AggState::takes_nulls(a.func) {
            return Ok(());
        }
        let sep = match (a.func, a.args.get(1)) {
            (AggFunc::StringAgg | AggFunc::JsonObjectAgg, Some(e)) => Some(self.eval(e, &env)?),
            (AggFunc::StringAgg, None) => Some(Value::empty_text()),
            _ => None,
        };
        let keys = if a.order.is_empty() || !AggState::collects(a.func) {
            Vec::new()
        } else {
            a.order
                .iter()
                .map(|(k, ..)| self.eval(k, &env))
                .collect::<Result<Vec<_>, _>>()?
        };
        state.feed(v, sep, keys)
    }
}

/// An explicit cast's typmod (`::numeric(5,2)`, `::varchar(3)`, `::char(3)`, `::time(0)`):
/// rounds, truncates or pads (`pad`: char(n)), element by element for an array.
fn apply_typmod(v: &Value, m: i64, pad: bool) -> Result<Value, SqlError> {
    Ok(match v {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|x| apply_typmod(x, m, pad))
                .collect::<Result<Vec<_>, _>>()?
                .into(),
        ),
        Value::Numeric(s) => Value::Numeric(crate::types::numeric_typmod(
            s,
            i32::try_from(m).unwrap_or(-1),
        )?),
        Value::Text(s) => {
            let n = usize::try_from(m - 4).unwrap_or(0);
            match s.char_indices().nth(n) {
                Some((cut, _)) => Value::text(&s[..cut]),
                None if pad => {
                    let len = s.chars().count();
                    Value::text(format!("{s}{}", " ".repeat(n - len)))
                }
                None => Value::Text(s.clone()),
            }
        }
        Value::Timestamp(_) | Value::Time(_) => crate::datetime::round_to_precision(v.clone(), m),
        other => other.clone(),
    })
}

/// `format_type(oid, typmod)` as PostgreSQL prints it, under the session's
/// `quote_all_identifiers` (which quotes the types printed by their name: `"text"`, `"uuid"`,
/// `"text"[]`, but not `integer` or `character varying(3)`, which PostgreSQL spells as SQL's
/// keywords).
pub fn format_type(t: PgType, typmod: i32) -> String {
    let plain = format_type_plain(t, typmod);
    if crate::pgcatalog::quote_all() {
        quote_type_name(&plain)
    } else {
        plain
    }
}

/// A type's name as [`format_type_plain`] writes it, quoted as `quote_all_identifiers` quotes
/// it: a name PostgreSQL prints through `quote_identifier` (one lower-case word), its array
/// brackets kept outside.
pub(crate) fn quote_type_name(plain: &str) -> String {
    let base = plain.trim_end_matches("[]");
    let brackets = &plain[base.len()..];
    // format_type_extended's special cases: SQL's spellings, never quoted (the first words
    // of the spellings with more than one: a default's text is quoted word by word).
    const KEYWORD_SPELLINGS: &[&str] = &[
        "bit",
        "boolean",
        "character",
        "real",
        "double",
        "smallint",
        "integer",
        "bigint",
        "numeric",
        "interval",
        "time",
        "timestamp",
    ];
    let plain_word = base
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if base.is_empty() || !plain_word || KEYWORD_SPELLINGS.contains(&base) {
        plain.to_string()
    } else {
        format!("\"{base}\"{brackets}")
    }
}

/// [`format_type`] regardless of `quote_all_identifiers`: for text RockLake stores or parses
/// again itself.
pub fn format_type_plain(t: PgType, typmod: i32) -> String {
    if let (Some(elem), true) = (t.element(), typmod >= 0) {
        if !t.is_vector() {
            return format!("{}[]", format_type_plain(elem, typmod));
        }
    }
    match (t, typmod) {
        (PgType::Varchar, m) if m >= 4 => format!("character varying({})", m - 4),
        (PgType::Bpchar, m) if m >= 4 => format!("character({})", m - 4),
        (PgType::Numeric, m) if m >= 4 => {
            let (p, s) = crate::types::numeric_precision_scale(m);
            format!("numeric({p},{s})")
        }
        (PgType::Timestamp, p) if p >= 0 => format!("timestamp({p}) without time zone"),
        (PgType::Timestamptz, p) if p >= 0 => format!("timestamp({p}) with time zone"),
        (PgType::Time, p) if p >= 0 => format!("time({p}) without time zone"),
        _ => t.sql_name().to_string(),
    }
}

/// A column or constant operand, by reference.
fn peek<'v>(e: &'v BExpr, env: &'v Env<'_>) -> Option<&'v Value> {
    match e {
        BExpr::Const(v) => Some(v),
        BExpr::Col(i) => env.row.get(*i),
        _ => None,
    }
}

/// Two values in the order of one ORDER BY key.
pub(crate) fn order_cmp(x: &Value, y: &Value, desc: bool, nulls_first: bool) -> std::cmp::Ordering {
    use std::cmp::Ordering as O;
    match (x.is_null(), y.is_null()) {
        (true, true) => O::Equal,
        (true, false) => {
            if nulls_first {
                O::Less
            } else {
                O::Greater
            }
        }
        (false, true) => {
            if nulls_first {
                O::Greater
            } else {
                O::Less
            }
        }
        _ => {
            let o = compare(x, y);
            if desc {
                o.reverse()
            } else {
                o
            }
        }
    }
}

/// A comparison with SQL's NULL rule.
fn compare_op(op: BinOp, a: &Value, b: &Value) -> Value {
    use std::cmp::Ordering as O;
    if a.is_null() || b.is_null() {
        return Value::Null;
    }
    let o = compare(a, b);
    Value::Bool(match op {
        BinOp::Eq => o == O::Equal,
        BinOp::NotEq => o != O::Equal,
        BinOp::Lt => o == O::Less,
        BinOp::LtEq => o != O::Greater,
        BinOp::Gt => o == O::Greater,
        BinOp::GtEq => o != O::Less,
        _ => false,
    })
}

pub fn binop(op: BinOp, a: Value, b: Value) -> Result<Value, SqlError> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    Ok(match op {
        BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq => {
            compare_op(op, &a, &b)
        }
        BinOp::Concat => {
            let s = format!(
                "{}{}",
                format_text(&a, PgType::Text).unwrap_or_default(),
                format_text(&b, PgType::Text).unwrap_or_default()
            );
            Value::text(s)
        }
        _ => match (a, b) {
            // Integers of every width compute in i64; narrower results are range-checked by
            // the cast the binder puts around them.
            (Value::Int(x), Value::Int(y)) => {
                Value::Int(match op {
                    BinOp::Add => x.checked_add(y).ok_or(BIGINT_OUT_OF_RANGE)?,
                    BinOp::Sub => x.checked_sub(y).ok_or(BIGINT_OUT_OF_RANGE)?,
                    BinOp::Mul => x.checked_mul(y).ok_or(BIGINT_OUT_OF_RANGE)?,
                    BinOp::Div => {
                        if y == 0 {
                            return Err(SqlError::DivisionByZero);
                        }
                        x.checked_div(y).ok_or(BIGINT_OUT_OF_RANGE)?
                    }
                    BinOp::Mod => {
                        if y == 0 {
                            return Err(SqlError::DivisionByZero);
                        }
                        // i64::MIN % -1 is 0 in PostgreSQL, an overflow in Rust.
                        x.checked_rem(y).unwrap_or(0)
                    }
                    _ => return Err(SqlError::internal("integer operator")),
                })
            }
            (Value::Numeric(x), Value::Numeric(y)) if matches!(op, BinOp::Add | BinOp::Sub) => {
                Value::Numeric(numeric_add(&x, &y, op == BinOp::Sub)?)
            }
            (Value::Numeric(x), Value::Int(y)) if matches!(op, BinOp::Add | BinOp::Sub) => {
                Value::Numeric(numeric_add(&x, &y.to_string(), op == BinOp::Sub)?)
            }
            (Value::Int(x), Value::Numeric(y)) if matches!(op, BinOp::Add | BinOp::Sub) => {
                Value::Numeric(numeric_add(&x.to_string(), &y, op == BinOp::Sub)?)
            }
            // Numeric division, multiplication and modulo are exact, at PostgreSQL's result
            // scales.
            (x @ (Value::Numeric(_) | Value::Int(_)), y @ (Value::Numeric(_) | Value::Int(_)))
                if matches!(op, BinOp::Div | BinOp::Mul | BinOp::Mod) =>
            {
                let text = |v: &Value| match v {
                    Value::Int(i) => i.to_string(),
                    Value::Numeric(s) => s.clone(),
                    _ => String::new(),
                };
                let (a, b) = (text(&x), text(&y));
                let exact = match op {
                    BinOp::Div => return Ok(Value::Numeric(numeric_div(&a, &b)?)),
                    BinOp::Mod => {
                        // NaN % 0 is NaN; any other number modulo zero is an error.
                        if compare(&y, &Value::Int(0)).is_eq() && a != "NaN" {
                            return Err(SqlError::DivisionByZero);
                        }
                        numeric_mod(&a, &b)?
                    }
                    _ => numeric_mul(&a, &b)?,
                };
                match exact {
                    Some(p) => Value::Numeric(p),
                    // NaN and ±Infinity: IEEE's rules.
                    None => {
                        let (fa, fb) = (
                            a.parse::<f64>().unwrap_or(f64::NAN),
                            b.parse::<f64>().unwrap_or(f64::NAN),
                        );
                        let f = if op == BinOp::Mod { fa % fb } else { fa * fb };
                        Value::Numeric(crate::numeric::from_f64(f))
                    }
                }
            }
            // Date/time operators; the binder converted the operands to their types.
            (
                x @ (Value::Date(_) | Value::Timestamp(_) | Value::Interval(_) | Value::Time(_)),
                y,
            )
            | (
                x,
                y @ (Value::Date(_) | Value::Timestamp(_) | Value::Interval(_) | Value::Time(_)),
            ) => crate::datetime::eval_operator(op.arithmetic_symbol(), x, y)?,
            (x, y) => {
                let fx =
                    to_f64(&x).ok_or_else(|| SqlError::feature("arithmetic on these types"))?;
                let fy =
                    to_f64(&y).ok_or_else(|| SqlError::feature("arithmetic on these types"))?;
                let numeric = matches!(x, Value::Numeric(_)) || matches!(y, Value::Numeric(_));
                let r = match op {
                    BinOp::Add => fx + fy,
                    BinOp::Sub => fx - fy,
                    BinOp::Mul => fx * fy,
                    BinOp::Div => {
                        if fy == 0.0 {
                            return Err(SqlError::DivisionByZero);
                        }
                        fx / fy
                    }
                    BinOp::Mod => fx % fy,
                    _ => return Err(SqlError::internal("operator")),
                };
                if numeric && !matches!(x, Value::Float(_)) && !matches!(y, Value::Float(_)) {
                    Value::Numeric(crate::numeric::from_f64(r))
                } else {
                    // PostgreSQL's float8 operators: an infinity from finite operands is an
                    // overflow, a zero from a product or quotient of non-zero ones an
                    // underflow.
                    let range = |m: &str| SqlError::MathDomain {
                        code: "22003",
                        message: format!("value out of range: {m}"),
                    };
                    if r.is_infinite() && fx.is_finite() && fy.is_finite() {
                        return Err(range("overflow"));
                    }
                    let underflow = match op {
                        BinOp::Mul => fx != 0.0 && fy != 0.0,
                        BinOp::Div => fx != 0.0 && fy.is_finite(),
                        _ => false,
                    };
                    if r == 0.0 && underflow {
                        return Err(range("underflow"));
                    }
                    Value::Float(r)
                }
            }
        },
    })
}

fn to_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        Value::Numeric(s) => s.parse().ok(),
        _ => None,
    }
}

/// Binds and checks a standalone expression over a table's columns (DEFAULTs, UPDATE SET).
pub fn table_scope(t: &Table, qual: &str) -> Scope {
    let qual: Rc<str> = qual.into();
    let mut cols: Vec<ColMeta> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| ColMeta {
            name: c.name.clone().into(),
            ty: c.ty,
            typmod: c.typmod,
            table_oid: t.oid,
            attnum: i as i16 + 1,
            qual: Some(qual.clone()),
            hidden: false,
        })
        .collect();
    cols.push(ColMeta {
        name: "ctid".into(),
        ty: PgType::Tid,
        typmod: -1,
        table_oid: t.oid,
        attnum: -1,
        qual: Some(qual),
        hidden: true,
    });
    Scope {
        cols,
        ..Scope::default()
    }
}

pub fn arc_table(t: &TableRef) -> Arc<Table> {
    t.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        let m = |s: &str, p: &str| like_match(s, p, false).unwrap_or(false);
        assert!(m("rds_x", "rds%"));
        assert!(!m("xrds", "rds%"));
        assert!(m("abc", "a_c"));
        assert!(m("a%c", "a\\%c"));
        assert!(!m("abc", "a\\%c"));
        assert!(m("", "%"));
        assert!(!m("", "_"));
        assert!(m("ab", "%%b%"));
        assert!(m("aXbXc", "a%c"));
        assert!(!m("aXbXd", "a%c"));
        assert!(m("abcabd", "%abd"));
        // Multi-byte characters count as one for `_`, backtracking steps over whole ones.
        assert!(m("é", "_"));
        assert!(m("xéyébz", "%é_z"));
        assert!(!m("xéyéz", "%é_z"));
        assert!(m("€10", "\\€%"));
        assert_eq!(like_match("ÉCOLE", "%cole", true), Ok(true));
        assert_eq!(like_match("ÉCOLE", "%cole", false), Ok(false));
        assert!(like_match("ab", "a\\", false).is_err());
        assert_eq!(like_escape("a#_b\\", "#"), Ok("a\\_b\\\\".to_string()));
        assert_eq!(like_escape("a##b", "#"), Ok("a\\#b".to_string()));
        assert_eq!(like_escape("a\\b", ""), Ok("a\\\\b".to_string()));
        assert!(like_escape("a", "ab").is_err());
    }

    /// LIKE by its definition, recursively over characters: the reference for the fast one.
    fn like_reference(s: &[char], p: &[char]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some(('%', rest)) => (0..=s.len()).any(|i| like_reference(&s[i..], rest)),
            Some(('_', rest)) => !s.is_empty() && like_reference(&s[1..], rest),
            Some(('\\', [e, rest @ ..])) => s.first() == Some(e) && like_reference(&s[1..], rest),
            // A pattern ending in the escape character matches nothing here (PostgreSQL
            // rejects it with 22025).
            Some(('\\', [])) => false,
            Some((c, rest)) => s.first() == Some(c) && like_reference(&s[1..], rest),
        }
    }

    proptest::proptest! {
        #[test]
        fn like_agrees_with_its_definition(
            s in "[abé%_\\\\]{0,8}",
            p in "[abé%_\\\\]{0,6}",
        ) {
            let sc: Vec<char> = s.chars().collect();
            let pc: Vec<char> = p.chars().collect();
            proptest::prop_assert_eq!(like_match(&s, &p, false).unwrap_or(false), like_reference(&sc, &pc), "{:?} LIKE {:?}", s, p);
        }
    }

    proptest::proptest! {
        /// A key set answers like a hash set of the same keys, below and above the size where
        /// it switches from comparing in place to hashing.
        #[test]
        fn key_sets_answer_like_hash_sets(
            inserted in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..3), 0..24),
            asked in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..3), 0..24),
        ) {
            let set: KeySet = inserted.iter().cloned().collect();
            let reference: HashSet<Vec<u8>> = inserted.iter().cloned().collect();
            proptest::prop_assert_eq!(set.len(), reference.len());
            for k in inserted.iter().chain(&asked) {
                proptest::prop_assert_eq!(set.contains(k), reference.contains(k), "{:?}", k);
            }
        }
    }

    proptest::proptest! {
        /// Compacting in place keeps the same values as picking them into a new row (NULL for
        /// a kept column past a short row's end).
        #[test]
        fn compacting_in_place_picks_the_kept_columns(
            len in 0usize..12,
            mask in proptest::collection::vec(proptest::prelude::any::<bool>(), 0..14),
        ) {
            let row: Vec<Value> = (0..len as i64).map(Value::Int).collect();
            let keep: Vec<usize> = (0..mask.len()).filter(|i| mask[*i]).collect();
            let picked: Vec<Value> = keep
                .iter()
                .map(|&i| row.get(i).cloned().unwrap_or(Value::Null))
                .collect();
            let mut compacted = row.clone();
            compact_in_place(&mut compacted, &keep);
            proptest::prop_assert_eq!(compacted, picked);
        }
    }

    proptest::proptest! {
        /// A catalog probe meets exactly the keys of the value it stands for.
        #[test]
        fn probes_key_as_their_values(oid in proptest::prelude::any::<u32>(), name in "(\\PC|\u{0})*") {
            use crate::pgcatalog::Probe;
            let key = |p: Probe<'_>| {
                let mut k = Vec::new();
                push_probe_key(&mut k, p).then_some(k)
            };
            let int = Value::Int(i64::from(oid));
            proptest::prop_assert_eq!(key(Probe::Oid(oid)), Some(value_key(std::slice::from_ref(&int))));
            let text = Value::text(format!("_{name}"));
            proptest::prop_assert_eq!(key(Probe::Name("_", &name)), Some(value_key(std::slice::from_ref(&text))));
            proptest::prop_assert_eq!(key(Probe::Value(&text)), Some(value_key(std::slice::from_ref(&text))));
            proptest::prop_assert_eq!(key(Probe::Value(&Value::Null)), None);
        }
    }
}
