//! The binder's constructors, and binding queries: WITH (also recursive), set operations and
//! VALUES.

use super::*;

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
            join_column_refs: Vec::new(),
            table_quals: Vec::new(),
        }
    }

    /// A binder for an expression of `clause` (PostgreSQL's name for where it stands, as in
    /// "aggregate functions are not allowed in index predicates").
    pub fn in_clause(cx: &'a ReadCx<'b>, clause: &'static str) -> Self {
        Binder {
            clause,
            ..Binder::new(cx)
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

    pub(super) fn new_id(&mut self) -> usize {
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
    pub(super) fn as_subquery<T>(
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

    pub(super) fn bind_query_windowless(
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
    pub(super) fn bind_sequence_call(
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
    pub(super) fn fold(&mut self, unfolded: BExpr, value: Result<Value, SqlError>) -> BExpr {
        match value {
            Ok(v) => BExpr::Const(v),
            Err(e) => {
                self.plan_error.get_or_insert(e);
                unfolded
            }
        }
    }

    pub(super) fn bind_query_inner(&mut self, q: &ast::Query) -> Result<BQuery, SqlError> {
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
    pub(super) fn bind_recursive_cte(
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

    pub(super) fn bind_query_body(&mut self, q: &ast::Query) -> Result<BQuery, SqlError> {
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

    pub(super) fn bind_set(
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

    pub(super) fn bind_values(
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
}
