//! Binding expressions: column references, operators, casts, function and window calls.

use super::*;

impl<'a, 'b> Binder<'a, 'b> {
    pub(super) fn resolve_column(
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
    pub(super) fn alias_of_table(&self, table: &str, scope: &Scope) -> Option<String> {
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
    pub(super) fn bind_quantified(
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

    pub(super) fn bind_expr_node(
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
                if ty.is_reg() {
                    // `regclass 'name'` looks the name up, as `'name'::regclass` does.
                    let cast = Expr::Cast {
                        kind: ast::CastKind::DoubleColon,
                        expr: Box::new(Expr::Value(ts.value.clone())),
                        data_type: ts.data_type.clone(),
                        format: None,
                    };
                    return self.bind_expr(&cast, scope, aggs);
                }
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

    pub(super) fn bind_binop(
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

    pub(super) fn bind_function(
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
    pub(super) fn bind_datetime_op(
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
    pub(super) fn bind_datetime_call(
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
    pub(super) fn read_worktable(&mut self, name: &str) -> Result<(), SqlError> {
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
    pub(super) fn bind_math(
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
    pub(super) fn bind_srf_call(
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
    pub(super) fn bind_window(
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
    pub(super) fn bind_call(
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
        if super::waits::is_wait_function(&name) {
            return self.bind_wait_call(name, bargs, &types);
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
