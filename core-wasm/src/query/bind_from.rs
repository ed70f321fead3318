//! Binding FROM: relations, joins (also parenthesized and lateral), table functions.

use super::*;

impl<'a, 'b> Binder<'a, 'b> {
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
                        if self.record_relations && self.view_depth == 0 {
                            // The join compares both columns, read or not.
                            self.join_column_refs.extend(
                                [&scope.cols[li], &right_cols[ri]]
                                    .into_iter()
                                    .filter(|c| c.table_oid != 0)
                                    .map(|c| (c.table_oid, c.attnum)),
                            );
                        }
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
    pub(super) fn merge_using(
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
    pub(super) fn bind_claimed_item(
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
    pub(super) fn bind_from_item(
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
    pub(super) fn bind_nested_join(
        &mut self,
        twj: &ast::TableWithJoins,
        alias: &Option<ast::TableAlias>,
        left: &Scope,
    ) -> Result<(Source, Scope), SqlError> {
        let (mut from, scope) = self
            .bind_from(std::slice::from_ref(twj))
            .map_err(|e| unreachable_from_here(e, left))?;
        push_down_keys(&mut from, None, self.cx.at);
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
    pub(super) fn join_query(
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
    pub(super) fn bind_table_function(
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

    pub(super) fn bind_table_function_args(
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
    pub(super) fn bind_factor(
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

    pub(super) fn bind_factor_node(
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
    pub(super) fn bind_relation(
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
}
