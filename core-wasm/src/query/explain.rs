//! EXPLAIN's plan text.

use super::*;

/// The plan lines of `EXPLAIN`: one per source, indented by depth.
pub fn explain(q: &BQuery) -> Vec<String> {
    let mut out = Vec::new();
    explain_query(q, 0, &mut out);
    out
}

pub(super) fn explain_query(q: &BQuery, depth: usize, out: &mut Vec<String>) {
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

pub(super) fn plan_line(depth: usize, text: String) -> String {
    if depth == 0 {
        text
    } else {
        format!("{}->  {text}", "  ".repeat(depth * 3 - 2))
    }
}

pub(super) fn explain_set(s: &BSet, depth: usize, out: &mut Vec<String>) {
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
pub(super) fn explain_from<'a>(
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

pub(super) fn explain_source(src: &Source, depth: usize, out: &mut Vec<String>) {
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
