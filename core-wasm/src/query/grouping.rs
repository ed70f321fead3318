//! Grouping sets, aggregate signatures, and the rewrites of window and set-returning calls.

use super::*;

/// PostgreSQL's functional dependency: grouping by a table's whole primary key groups by each
/// of its columns, so they may be used outside aggregates. They are added to `keys` (which
/// changes no group: they are the same within one).
pub(super) fn keys_with_dependent_columns(keys: &mut Vec<BExpr>, from: &[FromItem]) {
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
pub(super) fn is_grouping_set_syntax(e: &Expr) -> bool {
    matches!(e, Expr::Rollup(_) | Expr::Cube(_) | Expr::GroupingSets(_))
        || matches!(e, Expr::Tuple(t) if t.is_empty())
}

/// `ROLLUP (…)` or `CUBE (…)` inside GROUPING SETS, which sqlparser reads as a function call:
/// its elements (a parenthesised list is one element of several keys) and whether it is a
/// CUBE.
pub(super) fn nested_rollup(e: &Expr) -> Option<(Vec<Vec<&Expr>>, bool)> {
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
pub(super) fn expand_grouping_sets(
    items: &[Expr],
) -> Result<(Vec<&Expr>, Vec<Vec<usize>>), SqlError> {
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
pub(super) fn distinct_grouping_keys(
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
pub(super) fn contains_grouping_call(e: &BExpr) -> bool {
    contains_placeholder(e, &|x| matches!(x, BExpr::Func(n, _) if n == GROUPING_CALL))
}

impl GroupingSets {
    /// `e` reading the select's keys from a group's row: an expression equal to key `i`
    /// reads column `base + i`; `GROUPING(…)` reads its arguments' bits.
    pub(super) fn read_keys(&self, e: BExpr, keys: &[BExpr]) -> BExpr {
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
pub(super) fn group_by_exprs(sel: &ast::Select) -> &[Expr] {
    match &sel.group_by {
        ast::GroupByExpr::Expressions(exprs, _) => exprs,
        ast::GroupByExpr::All(_) => &[],
    }
}

/// The argument of `IS [NOT] TRUE/FALSE`, `AND`, `OR` or `NOT`: boolean, or an untyped
/// literal read as one (PostgreSQL's 42804 for anything else).
pub(super) fn boolean_test_argument(
    (e, t): (BExpr, PgType),
    test: &str,
) -> Result<BExpr, SqlError> {
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
pub(super) fn bitwise_op(
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
pub(super) fn expr_typmod(b: &BExpr, scope: &Scope) -> i32 {
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
pub(super) fn limit_count(e: BExpr) -> Result<BExpr, SqlError> {
    match e {
        BExpr::Const(Value::Numeric(_) | Value::Float(_)) => coerce_or_cast(e, PgType::Int8),
        e => coerce_expr(e, PgType::Int8),
    }
}

/// PostgreSQL's 42883 for an operator (`text = bigint`, `- text`) no signature matches;
/// `operands` as PostgreSQL writes them: `a + b`, or `- a` for a prefix operator (whose hint
/// speaks of one argument).
pub(super) fn no_such_operator(operands: String) -> SqlError {
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
pub(super) fn aggregate_func(name: &str, star: bool) -> Option<AggFunc> {
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
pub(super) fn json_aggregate_input(
    func: AggFunc,
    i: usize,
    b: BExpr,
    ty: PgType,
) -> Result<BExpr, SqlError> {
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
pub(super) fn array_agg_input(arg: &mut BExpr, func: AggFunc, ty: PgType) -> Result<(), SqlError> {
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
pub(super) fn aggregate_arguments_exist(
    func: AggFunc,
    types: &[PgType],
    name: &str,
) -> Result<(), SqlError> {
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

pub(super) fn aggregate_type(func: AggFunc, ty: PgType, name: &str) -> Result<PgType, SqlError> {
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
pub(super) fn distinct_on_matches_order(
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
pub(super) fn output_column_named(
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
pub(super) fn srf_placement(e: &BExpr) -> Result<(), SqlError> {
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

pub(super) fn contains_window(e: &BExpr) -> bool {
    contains_placeholder(e, &|x| matches!(x, BExpr::Win(_)))
}

/// Whether `e` calls a window function itself (not in a subquery, whose calls are its own).
pub(super) fn calls_window(e: &Expr) -> bool {
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
pub(super) fn contains_placeholder(e: &BExpr, is_call: &dyn Fn(&BExpr) -> bool) -> bool {
    let mut found = false;
    visit_exprs(e, &mut |x| found |= is_call(x));
    found
}

/// `e` with each direct child replaced by `f(child)` (subqueries as they are).
pub(super) fn map_children(e: BExpr, f: &mut dyn FnMut(BExpr) -> BExpr) -> BExpr {
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
pub(super) fn rewrite_windows(
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
pub(super) fn rewrite_srfs(
    projection: &mut Vec<BExpr>,
    srfs: Vec<BoundSrf>,
) -> Result<ProjectSet, SqlError> {
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
pub(super) struct ExtraColumns {
    pub(super) visible: usize,
    pub(super) exprs: Vec<BExpr>,
}

impl ExtraColumns {
    pub(super) fn new(visible: usize) -> Self {
        ExtraColumns {
            visible,
            exprs: Vec::new(),
        }
    }

    /// The projected column that holds `e`.
    pub(super) fn column(&mut self, e: BExpr) -> usize {
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
pub(super) fn split_call_items(
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
