//! Running bound queries: FROM, joins, grouping, windows, set operations.

use super::*;

impl<'a, 'b> Executor<'a, 'b> {
    pub(super) fn subquery_rows(
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
    pub(super) fn encoded_rows(
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
    pub(super) fn run_set(
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
    pub(super) fn source_rows(
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
            // An index built after this snapshot lacks entries of rows it reads, and one
            // of a table whose rows this transaction rewrites holds them in the old layout
            // (every row is an own write then): the whole table (the filter decides).
            Some(n) => match t.indexes.get(n)? {
                ix if ix.readable_at(self.cx.at)
                    && t.layout != crate::catalog::LAYOUT_THIS_COMMIT =>
                {
                    (crate::keys::index_prefix(t.id, ix.slot), &ix.columns)
                }
                _ => return None,
            },
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
    pub(super) fn lateral_join(
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
    pub(super) fn eval_each<'e>(
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
    pub(super) fn join_key<'e>(
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
    pub(super) fn needed_keys(
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
    pub(super) fn max_of_leading_key(&self, sel: &BSelect, item: &FromItem) -> bool {
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

    pub(super) fn run_select(
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
    pub(super) fn group_by_sets(
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
    pub(super) fn apply_project_set(
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
    pub(super) fn apply_windows(
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
    pub(super) fn fill_placeholders(
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
    pub(super) fn emit_group(
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
    pub(super) fn lone_table<'s>(
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
    pub(super) fn stream_groups(
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

    pub(super) fn aggregate(
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
    pub(super) fn feed_aggregate(
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
