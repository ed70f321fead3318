//! Key and filter push-down into scans; the simple scans of catalog COPY statements.

use super::*;

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
    pub(super) terms: Vec<(usize, BinOp, Value)>,
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
pub(super) fn holds(op: BinOp, x: &Value, v: &Value) -> bool {
    match (x, v) {
        (Value::Int(x), Value::Int(y)) => int_comparison(op, *x, *y),
        _ => matches!(compare_op(op, x, v), Value::Bool(true)),
    }
}

/// `x op y` for a comparison `op` of two integers.
pub(super) fn int_comparison(op: BinOp, x: i64, y: i64) -> bool {
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
pub(super) fn mirrored(op: BinOp) -> BinOp {
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
pub(super) fn projection_moves(projection: &[BExpr]) -> Vec<Option<usize>> {
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
pub(super) fn mark_columns(e: &BExpr, offset: usize, used: &mut [bool]) -> Option<()> {
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
pub(super) fn subqueries(e: &BExpr, out: &mut Vec<Rc<BQuery>>) {
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
pub(super) type NeededKeys = (usize, KeySet);

/// A set of [`value_key`]s. A catalog build asks it once per candidate row, and the keys are
/// usually one table's name or OID, or a handful of types: up to [`KeySet::FEW`] keys are
/// compared in place (no hash of each candidate's key), more go to a hash set.
#[derive(Debug, Default)]
pub(super) struct KeySet {
    pub(super) few: Vec<Vec<u8>>,
    pub(super) many: crate::keyhash::KeySetOf,
}

impl KeySet {
    pub(super) const FEW: usize = 8;

    pub(super) fn len(&self) -> usize {
        self.few.len() + self.many.len()
    }

    pub(super) fn contains(&self, key: &[u8]) -> bool {
        if self.many.is_empty() {
            self.few.iter().any(|k| k.as_slice() == key)
        } else {
            self.many.contains(key)
        }
    }

    /// Adds `key` (no effect when present).
    pub(super) fn insert(&mut self, key: Vec<u8>) {
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
pub(super) fn compact_in_place(row: &mut Vec<Value>, keep: &[usize]) {
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
pub(super) const NEEDED_KEYS_MAX: usize = 4096;

/// Most key ranges one scan is split into (an `IN` list per key column multiplies them).
pub(super) const MAX_KEY_PREFIXES: usize = 1024;

/// Narrows the scan of the first FROM item to the key prefixes its WHERE clause fixes (`k =
/// v`, `k IN (…)` on leading columns of the primary key or an index, ANDed), each narrowed
/// further by bounds on the next key column when it is an integer (`k > v`, `k <= v`,
/// `BETWEEN`); without a prefix, by bounds on a leading integer key column alone. The filter
/// still runs on every row read, so this only skips rows that could not pass it. Later FROM
/// items may be the nullable side of an outer join and are left alone.
pub fn push_down_keys(from: &mut [FromItem], filter: Option<&BExpr>, at: u64) {
    let (Some((first, rest)), Some(filter)) = (from.split_first_mut(), filter) else {
        return;
    };
    let width = first.width;
    let Source::Table { table, keys, index } = &mut first.source else {
        return;
    };
    // Only indexes a snapshot at `at` may read through (see `Executor::key_ranges`).
    let rewritten = table.layout == crate::catalog::LAYOUT_THIS_COMMIT;
    let readable: Vec<bool> = table
        .indexes
        .iter()
        .map(|ix| !rewritten && ix.readable_at(at))
        .collect();
    if table.primary_key.is_empty() && !readable.contains(&true) {
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
                    .or_else(|| readable.iter().position(|r| *r).map(Some));
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
        .filter(|(n, _)| readable[*n])
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
            .filter(|(n, _)| readable[*n])
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
pub(super) fn constant_column(
    rest: &[FromItem],
    first_width: usize,
    e: &BExpr,
) -> Option<Vec<BExpr>> {
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
pub(super) fn push_down_join_keys(
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
pub(super) fn push_conjunct(from: &mut [FromItem], width: usize, c: BExpr) -> Option<BExpr> {
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

pub(super) fn has_param(e: &BExpr) -> bool {
    let mut found = false;
    visit_exprs(e, &mut |x| found |= matches!(x, BExpr::Param(..)));
    found
}

/// Calls `f` on `e` and every expression inside it (not inside subqueries).
pub(super) fn visit_exprs(e: &BExpr, f: &mut dyn FnMut(&BExpr)) {
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
pub(super) fn map_cols(e: &BExpr, f: &dyn Fn(usize) -> usize) -> BExpr {
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
pub(super) fn key_prefixes_for(
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
pub(super) fn key_compatible(v: &Value, ty: PgType) -> bool {
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

pub(super) fn conjuncts(e: BExpr) -> Vec<BExpr> {
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
pub(super) fn col_range(e: &BExpr) -> Option<usize> {
    match e {
        BExpr::Col(i) => Some(*i),
        BExpr::Cast(x, _) => col_range(x),
        _ => None,
    }
}

// ------------------------------------------------------------------ evaluation

/// The rows of enclosing queries, for correlated references.
/// Output rows, each with its ORDER BY keys that are not output columns.
pub(super) type KeyedRows = Vec<(Vec<Value>, Vec<Value>)>;

/// `SELECT DISTINCT`: the first of each set of equal output rows.
pub(super) fn distinct_rows(sel: &BSelect, mut out: KeyedRows) -> KeyedRows {
    if sel.distinct {
        let mut seen = HashSet::new();
        out.retain(|(row, _)| seen.insert(value_key(row)));
    }
    out
}

/// Rows a subquery gave, shared by every evaluation that reads them.
pub(super) type SharedRows = Rc<Vec<Vec<Value>>>;

/// How many distinct outer-value sets of correlated subqueries one statement keeps rows for.
pub(super) const MAX_KEPT_CORRELATED: usize = 16_384;

/// The query and the outer values it reads, exactly as held (`1.0` and `1.00` differ: the
/// subquery may print them), or `None` if a reference leads past the outermost row.
pub(super) fn correlation_key(q: &BQuery, env: &Env<'_>) -> Option<String> {
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
