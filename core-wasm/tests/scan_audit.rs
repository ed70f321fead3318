//! No statement DuckDB sends scans a whole table when its condition fixes a key: every
//! SELECT, UPDATE, DELETE and `COPY (SELECT …)` of the recorded traces (three DuckDB runs
//! against PostgreSQL, replayed here connection by connection with the COPY rows the traces
//! kept, each statement failing exactly where it failed on PostgreSQL) is EXPLAINed, and each
//! `Seq Scan` is checked against the statement's own text: a WHERE clause of the query that
//! reads the table must not compare the leading column of the table's primary key or of one
//! of its indexes (`=`, `IN`, `<`, `<=`, `>`, `>=`, `BETWEEN`) to a constant, a list of
//! constants or a column of a constant `VALUES` list. (Bounds narrow only integer keys; every
//! bounded key column in the traces is one.)

mod common;

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

use rocklake_core::memkv::MemKv;
use rocklake_core::Engine;
use sqlparser::ast::{
    BinaryOperator, CopySource, Expr, FromTable, InTarget, Select, SetExpr, Statement, TableFactor,
    TableWithJoins, Visit, Visitor,
};

/// A binary COPY stream of the rows the trace kept (their values as hex; a long stream keeps
/// only its first rows, which the catalog's plans do not depend on).
fn binary_copy(decoded: &serde_json::Value) -> Vec<u8> {
    let mut out = b"PGCOPY\n\xff\r\n\0".to_vec();
    out.extend_from_slice(&[0; 8]);
    for row in decoded["sample_hex"].as_array().expect("rows") {
        let fields = row.as_array().expect("fields");
        out.extend_from_slice(&(fields.len() as i16).to_be_bytes());
        for f in fields {
            match f.as_str() {
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(h) => {
                    let bytes: Vec<u8> = (0..h.len() / 2)
                        .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).expect("hex"))
                        .collect();
                    out.extend_from_slice(&(bytes.len() as i32).to_be_bytes());
                    out.extend_from_slice(&bytes);
                }
            }
        }
    }
    out.extend_from_slice(&(-1i16).to_be_bytes());
    out
}

/// The leading column of the primary key and of each index, by table name.
fn leading_key_columns(e: &Engine) -> HashMap<(String, String), HashSet<String>> {
    let mut out: HashMap<(String, String), HashSet<String>> = HashMap::new();
    for t in e.st.tables.values() {
        let leading = t
            .primary_key
            .first()
            .into_iter()
            .chain(t.indexes.iter().filter_map(|ix| ix.columns.first()))
            .map(|c| t.columns[*c].name.clone());
        out.entry((t.schema.clone(), t.name.clone()))
            .or_default()
            .extend(leading);
    }
    out
}

/// Whether `stmt` has a WHERE clause over `table` that fixes one of `keys` (see the module
/// comment), read from the statement's syntax only.
fn fixes_a_key(stmt: &Statement, table: &str, keys: &HashSet<String>) -> bool {
    struct Finder<'a> {
        table: &'a str,
        keys: &'a HashSet<String>,
        /// Columns of `WITH x(…) AS (VALUES …)` lists.
        constant_columns: HashSet<String>,
        found: bool,
    }
    impl Finder<'_> {
        /// The names the table goes by in these FROM items (its name, its alias).
        fn names(&self, from: &[TableWithJoins]) -> Vec<String> {
            let mut names = Vec::new();
            let factors = from.iter().flat_map(|f| {
                std::iter::once(&f.relation).chain(f.joins.iter().map(|j| &j.relation))
            });
            for tf in factors {
                if let TableFactor::Table { name, alias, .. } = tf {
                    let last = name
                        .0
                        .last()
                        .and_then(|p| p.as_ident())
                        .map(|i| i.value.clone());
                    if last.as_deref() == Some(self.table) {
                        names.push(self.table.to_string());
                        names.extend(alias.as_ref().map(|a| a.name.value.clone()));
                    }
                }
            }
            names
        }

        fn check(&mut self, from: &[TableWithJoins], selection: Option<&Expr>) {
            let names = self.names(from);
            if names.is_empty() {
                return;
            }
            let mut conjuncts = vec![];
            if let Some(w) = selection {
                split_and(w, &mut conjuncts);
            }
            for c in conjuncts {
                let fixed = match c {
                    Expr::BinaryOp {
                        left,
                        op:
                            BinaryOperator::Eq
                            | BinaryOperator::Lt
                            | BinaryOperator::LtEq
                            | BinaryOperator::Gt
                            | BinaryOperator::GtEq,
                        right,
                    } => {
                        (self.is_key(left, &names) && self.is_constant(right))
                            || (self.is_key(right, &names) && self.is_constant(left))
                    }
                    Expr::In {
                        expr,
                        target: InTarget::List(list),
                        negated: false,
                        ..
                    } => self.is_key(expr, &names) && list.iter().all(|x| self.is_constant(x)),
                    Expr::Between {
                        expr,
                        negated: false,
                        low,
                        high,
                    } => {
                        self.is_key(expr, &names) && self.is_constant(low) && self.is_constant(high)
                    }
                    _ => false,
                };
                self.found |= fixed;
            }
        }

        fn is_key(&self, e: &Expr, names: &[String]) -> bool {
            match e {
                Expr::Identifier(i) => self.keys.contains(&i.value),
                Expr::CompoundIdentifier(parts) => match parts.as_slice() {
                    [.., q, c] => names.contains(&q.value) && self.keys.contains(&c.value),
                    _ => false,
                },
                Expr::Nested(x) | Expr::Collate { expr: x, .. } => self.is_key(x, names),
                _ => false,
            }
        }

        fn is_constant(&self, e: &Expr) -> bool {
            match e {
                Expr::Value(_) => true,
                Expr::Cast { expr, .. } | Expr::Nested(expr) | Expr::Collate { expr, .. } => {
                    self.is_constant(expr)
                }
                Expr::UnaryOp { expr, .. } => self.is_constant(expr),
                Expr::Identifier(i) => self.constant_columns.contains(&i.value),
                Expr::CompoundIdentifier(parts) => parts
                    .last()
                    .is_some_and(|c| self.constant_columns.contains(&c.value)),
                _ => false,
            }
        }
    }
    impl Visitor for Finder<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &sqlparser::ast::Query) -> ControlFlow<()> {
            for cte in q.with.iter().flat_map(|w| &w.cte_tables) {
                if matches!(cte.query.body.as_ref(), SetExpr::Values(_)) {
                    self.constant_columns
                        .extend(cte.alias.columns.iter().map(|c| c.name.value.clone()));
                }
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_select(&mut self, s: &Select) -> ControlFlow<()> {
            self.check(&s.from, s.selection.as_ref());
            ControlFlow::Continue(())
        }
        fn pre_visit_statement(&mut self, st: &Statement) -> ControlFlow<()> {
            match st {
                Statement::Update(u) => {
                    self.check(std::slice::from_ref(&u.table), u.selection.as_ref())
                }
                Statement::Delete(d) => {
                    let (FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f)) = &d.from;
                    self.check(f, d.selection.as_ref());
                }
                _ => {}
            }
            ControlFlow::Continue(())
        }
    }
    let mut f = Finder {
        table,
        keys,
        constant_columns: HashSet::new(),
        found: false,
    };
    let _ = stmt.visit(&mut f);
    f.found
}

fn split_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            split_and(left, out);
            split_and(right, out);
        }
        Expr::Nested(x) => split_and(x, out),
        _ => out.push(e),
    }
}

/// The statement EXPLAIN can show for `st` (a COPY's query), or `None`.
fn explainable(st: &Statement) -> Option<String> {
    match st {
        Statement::Query(_) | Statement::Update(_) | Statement::Delete(_) => Some(st.to_string()),
        Statement::Copy {
            source: CopySource::Query(q),
            ..
        } => Some(q.to_string()),
        _ => None,
    }
}

#[test]
fn no_traced_statement_scans_a_whole_table_when_its_condition_fixes_a_key() {
    let (mut explained, mut index_scans) = (0, 0);
    let mut violations = Vec::new();
    for run in ["pg155", "pg155default", "pg155conflict"] {
        let mut kv = MemKv::new();
        let mut e = Engine::open(&kv).expect("open");
        let audit = e.open_session("audit", "lake");
        let mut sessions = HashMap::new();
        for rec in common::trace(run) {
            let conn = rec["conn"].as_i64().expect("conn");
            let s = *sessions
                .entry(conn)
                .or_insert_with(|| e.open_session("duckdb", "lake"));
            for msg in rec["front"].as_array().expect("front") {
                if msg["type"] == "CopyDataStream" {
                    e.copy_in_data(s, &binary_copy(&msg["decoded"]))
                        .expect("copy data");
                    let mut r = e.copy_in_done(&kv, s, 1);
                    while let Some(b) = r.commit.take() {
                        kv.apply(&b);
                        r = e.commit_finished(&kv, s, Ok(()));
                    }
                    assert!(r.error.is_none(), "{run}: COPY: {:?}", r.error);
                    continue;
                }
                if msg["type"] != "Query" {
                    continue;
                }
                let sql = msg["query"].as_str().expect("query text");
                // The replay must go as it went on PostgreSQL (a statement that failed there
                // fails here, and only those), or what is audited is not DuckDB's session.
                let r = common::run(&mut e, &mut kv, s, sql);
                let failed_there = rec["back"]
                    .as_array()
                    .expect("back messages")
                    .iter()
                    .any(|m| m["type"] == "ErrorResponse");
                assert_eq!(
                    r.error.is_some(),
                    failed_there,
                    "{run}: {sql}: {:?}",
                    r.error
                );
                let Ok(stmts) = rocklake_core::exec::parse(sql) else {
                    continue;
                };
                // Table names now, after the statement: it may have created the table.
                let leading = leading_key_columns(&e);
                for st in &stmts {
                    let Some(text) = explainable(st) else {
                        continue;
                    };
                    let r = common::run(&mut e, &mut kv, audit, &format!("EXPLAIN {text}"));
                    assert!(r.error.is_none(), "{run}: EXPLAIN {text}: {:?}", r.error);
                    explained += 1;
                    for line in common::rows_of(&r).into_iter().flatten().flatten() {
                        index_scans += usize::from(line.contains("Index Scan"));
                        let Some(rest) = line.split("Seq Scan on ").nth(1) else {
                            continue;
                        };
                        let name = rest.split(' ').next().unwrap_or_default();
                        let Some((schema, table)) = name.split_once('.') else {
                            continue;
                        };
                        let keys = leading
                            .get(&(schema.to_string(), table.to_string()))
                            .cloned()
                            .unwrap_or_default();
                        if fixes_a_key(st, table, &keys) {
                            violations.push(format!("{run}: {line}\n    {text}"));
                        }
                    }
                }
            }
        }
    }
    eprintln!("{explained} statements explained, {index_scans} index scans");
    assert!(explained > 5_000, "{explained} statements explained");
    assert!(index_scans > 1_000, "{index_scans} index scans");
    violations.sort();
    violations.dedup();
    assert!(
        violations.is_empty(),
        "{} whole-table scans where the condition fixes a key:\n{}",
        violations.len(),
        violations.join("\n")
    );
}
