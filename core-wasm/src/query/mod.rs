//! Queries: binding sqlparser's AST to typed expressions over a scope of columns, and
//! evaluating them with PostgreSQL semantics (three-valued logic, NULL ordering, unknown-typed
//! literals resolved by context, byte-wise "C" collation).
//!
//! The catalog's statements are few and known; this is a small tree-walking evaluator with
//! hash joins on equality conditions and primary-key point lookups, not a general planner.
//!
//! This module holds the bound tree (`BQuery`, `BSelect`, `BExpr`, …), the read context
//! (`ReadCx`: catalog lookups, budgets) and scopes. The binder is `bind*.rs` (queries, FROM,
//! select lists, expressions) with its helpers in `coerce.rs`, `functions.rs`, `grouping.rs`
//! and `names.rs`; the executor is `eval.rs` (expressions), `builtins.rs` (function calls) and
//! `run.rs` (FROM, joins, grouping, windows), with `pushdown.rs` deciding what scans read.

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

mod bind;
mod bind_expr;
mod bind_from;
mod bind_select;
mod builtins;
mod coerce;
mod eval;
mod explain;
mod functions;
mod grouping;
mod names;
mod pushdown;
mod run;
#[cfg(test)]
mod tests;
mod values;
mod waits;

pub use coerce::*;
pub use eval::*;
pub use explain::*;
pub(crate) use functions::*;
use grouping::*;
pub use names::*;
pub use pushdown::*;
pub use values::*;

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
                return Err(SqlError::interrupted(message));
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

    /// Whether a relation of `schema` — a table or an index — is named `name`: the
    /// transaction's own tables and the committed ones it has not dropped or replaced, found
    /// through the registry's name indexes (CREATE TABLE asks it; its cost must not grow with
    /// the registry).
    pub fn relation_named(&self, schema: &str, name: &str) -> bool {
        let hit = |t: &Table| {
            t.schema == schema && (t.name == name || t.index_names().any(|n| n == name))
        };
        let replaced = |id: u32| {
            self.pending
                .is_some_and(|p| p.dropped.contains(&id) || p.tables.contains_key(&id))
        };
        let st = &self.st;
        self.pending
            .is_some_and(|p| p.tables.values().any(|t| hit(t)))
            || [&st.table_ids_by_name, &st.table_ids_by_index_name]
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

    /// The table a `pg_class` OID names — the table itself or one of its listed indexes
    /// (then `true`; [`Table::listed_index`] says which) — among those the statement can see.
    pub fn relation_by_oid(&self, oid: u32) -> Option<(TableRef, bool)> {
        let tables = self.all_tables();
        let index = self.catalog.relations.get_or_init(|| {
            let mut m = HashMap::with_capacity(tables.len() * 2);
            for (i, t) in tables.iter().enumerate() {
                m.insert(t.oid, i);
                for ix in t.listed_indexes() {
                    m.insert(ix.oid, i);
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
        match index {
            false => t.comment.clone(),
            true => t.listed_index(oid)?.comment.map(str::to_string),
        }
    }

    /// The comment of the constraint of OID `oid` (a primary key's).
    pub fn constraint_comment(&self, oid: u32) -> Option<String> {
        let (t, true) = self.relation_by_oid(oid)? else {
            return None;
        };
        t.pkey_constraint_comment
            .clone()
            .filter(|_| oid == t.pkey_oid())
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

    /// The table with a listed index named `name`, and that index's OID, in `schema` or else
    /// the first schema of search_path holding one (indexes are relations too).
    pub fn index_table(&self, schema: Option<&str>, name: &str) -> Option<(TableRef, u32)> {
        let tables = self.all_tables();
        let named = |s: &str| {
            tables.iter().filter(|t| t.schema == s).find_map(|t| {
                let ix = t.listed_indexes().find(|ix| ix.name == name)?;
                Some((t.clone(), ix.oid))
            })
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
                let (t, _) = self.relation_by_oid(oid)?;
                (t.schema.clone(), t.name_of(oid).to_string())
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
    /// The columns `JOIN … USING` and NATURAL joins compare (with `record_relations`;
    /// table OID, column number): read by the join though no name in the text reads them.
    pub join_column_refs: Vec<(u32, i16)>,
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
