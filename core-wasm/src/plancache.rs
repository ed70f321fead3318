//! Bound plans kept by statement shape (decision record 0034).
//!
//! DuckDB's ATTACH asks for the columns of each of its ~28 tables with one catalog query that
//! differs only in the table's name (see [`crate::parsecache`]), and binding that query (seven
//! `pg_catalog` relations, two selects) costs about as much as running it. A plan is kept by
//! shape only where it cannot depend on the values of the literals that vary:
//!
//! - the text is one query of a shape whose texts parse to the same tree but for the value
//!   nodes of their literals ([`crate::parsecache::ParseCache::last_shape`]);
//! - every string or number literal in it is compared directly with a column
//!   (`col = '…'`, `col > 0`, `col IN ('…', …)`, wherever the comparison stands): no
//!   function, cast, LIKE pattern or LIMIT reads one, and none is a select item of its own;
//! - the plan reads only `pg_catalog` / `information_schema` relations, whose columns never
//!   change, and nothing of the session ([`Binder::binds_only_catalog`]);
//! - bound with a sentinel in place of each string literal, each sentinel comes out unchanged
//!   as a constant of the plan (a literal the binder converts or reads, such as one compared
//!   with an integer or `oid` column, does not). Numbers are *fixed*: later texts must have
//!   the template's values there;
//! - the sentinel plan with the text's own strings put in is, field for field, the plan that
//!   binding the text gives.
//!
//! A later text of the shape gets a copy of the sentinel plan with its own strings put in,
//! once its numbers are the template's, its strings are short enough that no type
//! truncates them (63 bytes, `name`'s limit) and each catalog name it binds still resolves to
//! the catalog relation (a stored or temporary table could take the name). Anything else is
//! bound as before.
//!
//! The plans are kept per thread, not per engine: a plan depends only on the text and the
//! fixed catalog definitions (every name is checked against the engine at hand on each use),
//! and plans hold `Rc`s, which the engine (moved between the host's threads) cannot.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::rc::Rc;
use std::sync::Arc;

use sqlparser::ast::{self, BinaryOperator, Expr, Statement, ValueWithSpan};
use sqlparser::ast::{Visit, VisitMut, Visitor, VisitorMut};

use crate::error::SqlError;
use crate::query::{BExpr, BQuery, BSelect, BSet, Binder, ReadCx, Source};
use crate::types::Value;

/// The shape key of a text of one query, and that query (by address: only it may use the
/// key, and only while the text runs).
#[derive(Debug, Clone)]
pub struct ShapeOf {
    key: Arc<str>,
    query: usize,
}

impl ShapeOf {
    pub fn new(key: Arc<str>, stmt: &Statement) -> Option<ShapeOf> {
        match stmt {
            Statement::Query(q) => Some(ShapeOf {
                key,
                query: std::ptr::from_ref::<ast::Query>(q) as usize,
            }),
            _ => None,
        }
    }

    fn is_of(&self, q: &ast::Query) -> bool {
        self.query == std::ptr::from_ref(q) as usize
    }
}

/// How queries with a shape were bound (for tests and measurements).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PlanStats {
    /// A copy of the shape's plan took the text's strings: no binding.
    pub hits: u64,
    /// Templates built and checked.
    pub templates: u64,
    /// Shapes found unusable.
    pub unusable: u64,
    /// A template was there, but the text's literals or names did not fit it.
    pub misfits: u64,
}

#[derive(Debug)]
struct Template {
    /// Bound with [`sentinel`]s in the free literals' places.
    plan: BQuery,
    /// Each string or number literal, in visiting order: `None` is free (the plan has its
    /// sentinel), `Some` is fixed to that value.
    literals: Vec<Option<ast::Value>>,
    /// [`Binder::binds_only_catalog`]'s names.
    relations: Vec<(Option<String>, String)>,
}

#[derive(Debug, Default)]
struct Plans {
    templates: HashMap<Arc<str>, Rc<Template>>,
    /// Shapes found unusable (their keys are shared with the parse cache's).
    unusable: HashSet<Arc<str>>,
    stats: PlanStats,
    off: bool,
}

/// Templates kept, and unusable shapes remembered (each a map that starts over when full:
/// cheap, and bounded). A template is a whole plan, an unusable shape only its key.
const MAX_TEMPLATES: usize = 64;
const MAX_UNUSABLE: usize = 1024;
/// The longest string a free literal may be: no type the binder could convert it to shortens
/// a string this short (`name` keeps 63 bytes).
const MAX_FREE_BYTES: usize = 63;

thread_local! {
    static PLANS: RefCell<Plans> = RefCell::new(Plans::default());
}

pub fn stats() -> PlanStats {
    PLANS.with(|p| p.borrow().stats)
}

/// Turns the cache off (`false`: every query is bound) or back on for this thread; what it
/// holds stays. Tests compare answers with and without it.
pub fn set_enabled(on: bool) {
    PLANS.with(|p| p.borrow_mut().off = !on);
}

/// The sentinel of string literal `i`. Besides being unlike any text a client sends, it has
/// what normalisations change: leading and trailing spaces (`char(n)` comparisons trim
/// them), a capital and a non-ASCII letter. A step the binder takes on a literal's value that
/// changes none of these would leave it as it is; the example text's check cannot see such a
/// step either, so the sentinel is what tells.
fn sentinel(i: usize) -> String {
    format!(" \u{1}rlplan{i}\u{1}Ä  ")
}

/// `i` when `s` is exactly [`sentinel`]`(i)`.
fn sentinel_index(s: &str) -> Option<usize> {
    let (digits, rest) = s.strip_prefix(" \u{1}rlplan")?.split_once('\u{1}')?;
    let i = digits.parse::<usize>().ok()?;
    (rest == "Ä  " && digits == i.to_string()).then_some(i)
}

/// Binds `q`, from the plan kept for its shape when it fits. Returns the plan and whether
/// [`Binder::reads_only_catalog_and_committed_tables`] holds for it.
pub fn bind(
    cx: &ReadCx<'_>,
    q: &ast::Query,
    shape: Option<&ShapeOf>,
) -> Result<(BQuery, bool), SqlError> {
    let Some(key) = shape.filter(|s| s.is_of(q)).map(|s| &s.key) else {
        return bind_fresh(cx, q);
    };
    let kept = PLANS.with(|p| {
        let p = p.borrow();
        if p.off {
            return Err(());
        }
        if p.unusable.contains(key) {
            return Err(());
        }
        Ok(p.templates.get(key).cloned())
    });
    match kept {
        Err(()) => bind_fresh(cx, q),
        Ok(Some(t)) => {
            let plan = fit(cx, q, &t);
            PLANS.with(|p| {
                let stats = &mut p.borrow_mut().stats;
                match plan {
                    Some(_) => stats.hits += 1,
                    None => stats.misfits += 1,
                }
            });
            match plan {
                // A template's plan reads only catalog relations.
                Some(plan) => Ok((plan, true)),
                None => bind_fresh(cx, q),
            }
        }
        Ok(None) => {
            let mut binder = Binder::new(cx);
            let plan = binder.bind_query(q, None)?;
            let catalog_only = binder.reads_only_catalog_and_committed_tables();
            let built = binder.binds_only_catalog().map(|names| {
                let names = names.to_vec();
                crate::errpos::preserved(|| template(cx, q, &plan, names))
            });
            PLANS.with(|p| {
                let mut p = p.borrow_mut();
                match built.flatten() {
                    Some(t) => {
                        p.stats.templates += 1;
                        if p.templates.len() >= MAX_TEMPLATES {
                            p.templates.clear();
                        }
                        p.templates.insert(key.clone(), Rc::new(t));
                    }
                    None => {
                        p.stats.unusable += 1;
                        if p.unusable.len() >= MAX_UNUSABLE {
                            p.unusable.clear();
                        }
                        p.unusable.insert(key.clone());
                    }
                }
            });
            Ok((plan, catalog_only))
        }
    }
}

fn bind_fresh(cx: &ReadCx<'_>, q: &ast::Query) -> Result<(BQuery, bool), SqlError> {
    let mut binder = Binder::new(cx);
    let plan = binder.bind_query(q, None)?;
    Ok((plan, binder.reads_only_catalog_and_committed_tables()))
}

/// The template's plan with `q`'s strings, if `q`'s literals and names fit it.
fn fit(cx: &ReadCx<'_>, q: &ast::Query, t: &Template) -> Option<BQuery> {
    let lits = literals(q)?;
    if lits.len() != t.literals.len() {
        return None;
    }
    let mut strings: Vec<Option<Arc<str>>> = vec![None; lits.len()];
    for (i, (lit, fixed)) in lits.into_iter().zip(&t.literals).enumerate() {
        match (fixed, lit) {
            (Some(v), lit) if *v == lit => {}
            (None, ast::Value::SingleQuotedString(s)) if s.len() <= MAX_FREE_BYTES => {
                strings[i] = Some(Arc::from(s));
            }
            _ => return None,
        }
    }
    if !t
        .relations
        .iter()
        .all(|(schema, name)| Binder::resolves_to_catalog(cx, schema.as_deref(), name))
    {
        return None;
    }
    let mut plan = t.plan.clone();
    fill_query(&mut plan, &strings);
    Some(plan)
}

/// The template of `q`'s shape, given `plan` (binding `q`) and the catalog names it binds;
/// `None` when the shape's plans may depend on its literals' values.
fn template(
    cx: &ReadCx<'_>,
    q: &ast::Query,
    plan: &BQuery,
    relations: Vec<(Option<String>, String)>,
) -> Option<Template> {
    let lits = literals(q)?;
    // A text that has a sentinel of its own could not be told apart from one.
    if lits.iter().any(|l| l.to_string().contains('\u{1}')) {
        return None;
    }
    // Numbers are fixed; every string must come out of binding as its sentinel, unchanged.
    let fixed: Vec<bool> = lits
        .iter()
        .map(|l| !matches!(l, ast::Value::SingleQuotedString(_)))
        .collect();
    let mut probe = q.clone();
    let _ = VisitMut::visit(
        &mut probe,
        &mut PutSentinels {
            fixed: &fixed,
            next: 0,
        },
    );
    let mut binder = Binder::new(cx);
    let sentinel_plan = binder.bind_query(&probe, None).ok()?;
    binder.binds_only_catalog()?;
    // Each name is checked on every use: once is enough.
    let mut relations = relations;
    relations.sort_unstable();
    relations.dedup();
    let mut kept = vec![false; lits.len()];
    find_sentinels(&sentinel_plan, &mut kept);
    if fixed.iter().zip(&kept).any(|(f, k)| !f && !k) {
        return None;
    }
    let literals: Vec<Option<ast::Value>> = lits
        .iter()
        .zip(&fixed)
        .map(|(l, f)| f.then(|| l.clone()))
        .collect();
    let strings: Vec<Option<Arc<str>>> = lits
        .iter()
        .zip(&literals)
        .map(|(l, fixed)| match (l, fixed) {
            (ast::Value::SingleQuotedString(s), None) => Some(Arc::from(s.as_str())),
            _ => None,
        })
        .collect();
    let mut check = sentinel_plan.clone();
    fill_query(&mut check, &strings);
    // Field for field: Debug shows every field, and subqueries by content.
    (format!("{check:?}") == format!("{plan:?}")).then_some(Template {
        plan: sentinel_plan,
        literals,
        relations,
    })
}

/// The string and number literals of `q` in visiting order, when every one of them is
/// compared directly with a column (`col op literal`, `literal op col`, `col [NOT] IN (…)`).
fn literals(q: &ast::Query) -> Option<Vec<ast::Value>> {
    let mut finder = FindLiterals {
        compared: Vec::new(),
        found: Vec::new(),
    };
    match q.visit(&mut finder) {
        ControlFlow::Break(()) => None,
        ControlFlow::Continue(()) => Some(finder.found),
    }
}

fn is_column(e: &Expr) -> bool {
    matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_))
}

struct FindLiterals {
    /// The value nodes compared with a column, by address (the tree does not move while
    /// visited).
    compared: Vec<usize>,
    found: Vec<ast::Value>,
}

impl Visitor for FindLiterals {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        let addr = |v: &ValueWithSpan| std::ptr::from_ref(v) as usize;
        match e {
            Expr::BinaryOp {
                left,
                op:
                    BinaryOperator::Eq
                    | BinaryOperator::NotEq
                    | BinaryOperator::Lt
                    | BinaryOperator::LtEq
                    | BinaryOperator::Gt
                    | BinaryOperator::GtEq,
                right,
            } => match (&**left, &**right) {
                (c, Expr::Value(v)) | (Expr::Value(v), c) if is_column(c) => {
                    self.compared.push(addr(v));
                }
                _ => {}
            },
            Expr::In {
                expr,
                target: ast::InTarget::List(list),
                ..
            } if is_column(expr) => {
                for item in list {
                    if let Expr::Value(v) = item {
                        self.compared.push(addr(v));
                    }
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_value(&mut self, v: &ValueWithSpan) -> ControlFlow<()> {
        match &v.value {
            ast::Value::SingleQuotedString(_) | ast::Value::Number(..) => {
                if !self.compared.contains(&(std::ptr::from_ref(v) as usize)) {
                    return ControlFlow::Break(());
                }
                self.found.push(v.value.clone());
            }
            // NULL, TRUE, FALSE are the same in every text of the shape; any other literal
            // (a prefixed or dollar-quoted string, a parameter) has no shape.
            ast::Value::Null | ast::Value::Boolean(_) => {}
            _ => return ControlFlow::Break(()),
        }
        ControlFlow::Continue(())
    }
}

/// Puts [`sentinel`]s in the place of the literals not `fixed` (the strings; numbered as
/// [`literals`] numbers them).
struct PutSentinels<'a> {
    fixed: &'a [bool],
    next: usize,
}

impl VisitorMut for PutSentinels<'_> {
    type Break = ();

    fn pre_visit_value(&mut self, v: &mut ValueWithSpan) -> ControlFlow<()> {
        if matches!(
            v.value,
            ast::Value::SingleQuotedString(_) | ast::Value::Number(..)
        ) {
            if self.fixed.get(self.next) == Some(&false) {
                v.value = ast::Value::SingleQuotedString(sentinel(self.next));
            }
            self.next += 1;
        }
        ControlFlow::Continue(())
    }
}

/// Marks in `kept` the literals whose sentinel is a constant of `q`.
fn find_sentinels(q: &BQuery, kept: &mut [bool]) {
    let mut q = q.clone();
    let mut seen = |s: &str| {
        if let Some(k) = sentinel_index(s).and_then(|i| kept.get_mut(i)) {
            *k = true;
        }
        None
    };
    walk_query(&mut q, &mut seen);
}

/// Puts `strings[i]` in the place of every constant that is sentinel `i`.
fn fill_query(q: &mut BQuery, strings: &[Option<Arc<str>>]) {
    let mut put = |s: &str| strings.get(sentinel_index(s)?)?.clone();
    walk_query(q, &mut put);
}

/// Calls `f` on every text constant of `q` (its subqueries too), replacing the constant with
/// what `f` returns. Shared subqueries are copied first (`Rc::make_mut`).
fn walk_query(q: &mut BQuery, f: &mut dyn FnMut(&str) -> Option<Arc<str>>) {
    walk_set(&mut q.body, f);
    for k in &mut q.order {
        walk_expr(&mut k.expr, f);
    }
    for e in q.limit.iter_mut().chain(q.offset.iter_mut()) {
        walk_expr(e, f);
    }
}

fn walk_set(s: &mut BSet, f: &mut dyn FnMut(&str) -> Option<Arc<str>>) {
    match s {
        BSet::Select(sel) => walk_select(sel, f),
        BSet::Combine(_, a, b, _) => {
            walk_set(a, f);
            walk_set(b, f);
        }
        BSet::Values(rows) => rows.iter_mut().flatten().for_each(|e| walk_expr(e, f)),
        BSet::Query(q) => walk_query(Rc::make_mut(q), f),
        BSet::Recursive { base, step, .. } => {
            walk_set(base, f);
            walk_set(step, f);
        }
        BSet::WorkTable(_) => {}
    }
}

fn walk_select(s: &mut BSelect, f: &mut dyn FnMut(&str) -> Option<Arc<str>>) {
    for item in &mut s.from {
        match &mut item.source {
            Source::Table { keys, .. } => {
                if let Some(keys) = keys {
                    keys.prefixes
                        .iter_mut()
                        .flatten()
                        .for_each(|e| walk_expr(e, f));
                    if let Some(r) = &mut keys.range {
                        for (e, _) in r.lo.iter_mut().chain(r.hi.iter_mut()) {
                            walk_expr(e, f);
                        }
                    }
                }
            }
            Source::Derived(q) => walk_query(Rc::make_mut(q), f),
            Source::Values(rows) => rows.iter_mut().flatten().for_each(|e| walk_expr(e, f)),
            Source::Function { args, .. } => args.iter_mut().for_each(|e| walk_expr(e, f)),
            Source::Virtual { .. } | Source::Dual => {}
        }
        for e in item.on.iter_mut().chain(item.pre_filter.iter_mut()) {
            walk_expr(e, f);
        }
        for (a, b) in &mut item.hash_keys {
            walk_expr(a, f);
            walk_expr(b, f);
        }
    }
    for e in s.filter.iter_mut().chain(s.having.iter_mut()) {
        walk_expr(e, f);
    }
    s.group.iter_mut().flatten().for_each(|e| walk_expr(e, f));
    for a in &mut s.aggs {
        a.args.iter_mut().for_each(|e| walk_expr(e, f));
        a.order.iter_mut().for_each(|(e, ..)| walk_expr(e, f));
        a.filter.iter_mut().for_each(|e| walk_expr(e, f));
    }
    s.projection.iter_mut().for_each(|e| walk_expr(e, f));
    if let Some(w) = &mut s.windowed {
        w.post.iter_mut().for_each(|(_, e)| walk_expr(e, f));
    }
    if let Some(p) = &mut s.project_set {
        p.post.iter_mut().for_each(|(_, e)| walk_expr(e, f));
    }
}

fn walk_expr(e: &mut BExpr, f: &mut dyn FnMut(&str) -> Option<Arc<str>>) {
    match e {
        BExpr::Const(Value::Text(s)) => {
            if let Some(v) = f(s) {
                *s = v;
            }
        }
        BExpr::Bin(_, a, b)
        | BExpr::And(a, b)
        | BExpr::Or(a, b)
        | BExpr::IsDistinct(a, b, _)
        | BExpr::Like(a, b, ..)
        | BExpr::AnyArray(_, a, b, ..) => {
            walk_expr(a, f);
            walk_expr(b, f);
        }
        BExpr::Not(x) | BExpr::Neg(x) | BExpr::IsNull(x, _) | BExpr::Cast(x, _) => walk_expr(x, f),
        BExpr::InList(x, list, _) => {
            walk_expr(x, f);
            list.iter_mut().for_each(|y| walk_expr(y, f));
        }
        BExpr::InSub(x, q, ..) => {
            walk_expr(x, f);
            walk_query(Rc::make_mut(q), f);
        }
        BExpr::Exists(q, _) | BExpr::Scalar(q) | BExpr::ArraySub(q) => {
            walk_query(Rc::make_mut(q), f)
        }
        BExpr::Func(_, args) => args.iter_mut().for_each(|a| walk_expr(a, f)),
        BExpr::Case(a, whens, el) => {
            if let Some(a) = a {
                walk_expr(a, f);
            }
            for (w, t) in whens {
                walk_expr(w, f);
                walk_expr(t, f);
            }
            if let Some(x) = el {
                walk_expr(x, f);
            }
        }
        BExpr::Const(_)
        | BExpr::Col(_)
        | BExpr::Outer(..)
        | BExpr::Agg(_)
        | BExpr::Win(_)
        | BExpr::Srf(_)
        | BExpr::Param(..) => {}
    }
}
