//! Binding select lists and what hangs on them: `*`, grouping, ordered-set aggregates, views.

use super::*;

impl<'a, 'b> Binder<'a, 'b> {
    /// One select-list item: its expressions appended to `projection`, their columns (names
    /// as PostgreSQL's `FigureColname`) to `columns`; `*` expands to the scope's columns.
    pub(super) fn bind_item(
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
    pub(super) fn record_column_ref(&mut self, name: &ast::Ident, read: &BExpr, scope: &Scope) {
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
    pub(super) fn reads_directly(&self, c: &ColMeta) -> bool {
        c.qual
            .as_ref()
            .is_some_and(|q| self.table_quals.iter().any(|t| Rc::ptr_eq(t, q)))
    }

    /// Notes what a `*` read ([`Self::star_expansions`]): `read`, its columns of `scope`.
    pub(super) fn record_star(
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

    pub(super) fn bind_select(
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
        push_down_keys(&mut from, filter.as_ref(), self.cx.at);
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
    pub(super) fn bind_ordered_set(
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
    pub(super) fn bind_view(
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
    pub(super) fn bind_group_key(
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
    pub(super) fn bind_grouping(
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
    pub(super) fn check_grouping_calls(&self, e: &BExpr, keys: &[BExpr]) -> Result<(), SqlError> {
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
}
