//! Statements nested deeper than the core can walk.
//!
//! The parser reads chains of infix and postfix operators (`a + b + c …`, `x OR y OR …`,
//! `x::t::t …`) and of set operations (`SELECT … UNION ALL SELECT …`) in a loop, so their trees
//! can be as deep as the text is long, while everything after the parser (binding,
//! evaluation, cloning, dropping) walks trees recursively. [`check`] runs right after each
//! statement is parsed, before anything else walks it:
//! - chains of one boolean operator (`AND`, `OR`) of more than [`BALANCE_FROM`] operands are
//!   rebuilt as balanced trees (PostgreSQL's parser flattens them into one n-ary node; the
//!   operands keep their order, so evaluation order and short-circuiting are unchanged);
//! - a statement still nested deeper than [`MAX_EXPR_DEPTH`] expressions or [`MAX_SET_DEPTH`]
//!   set operations is refused with PostgreSQL's 54001 `stack depth limit exceeded`, and its
//!   tree is taken apart node by node instead of dropped recursively.
//!
//! The walks here are themselves bounded: they stop descending at the limits.

use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, Expr, Query, SetExpr, Statement, Value, VisitMut, VisitorMut,
};

use crate::error::SqlError;

/// Expression nesting a statement may have. The host runs the core on threads with stacks
/// sized for this depth (host-native `service::ENGINE_THREAD_STACK`, the component's stack).
pub const MAX_EXPR_DEPTH: usize = 1000;
/// Set operations one query may chain (`SELECT … UNION ALL SELECT … …`).
pub const MAX_SET_DEPTH: usize = 500;
/// `AND`/`OR` chains with more operands than this are balanced.
const BALANCE_FROM: usize = 32;

/// Balances long boolean chains of `stmt` and refuses it when it is still too deep.
pub fn check(mut stmt: Statement) -> Result<Statement, SqlError> {
    let mut walk = Checker { depth: 0 };
    if stmt.visit(&mut walk).is_break() {
        dismantle(stmt);
        return Err(SqlError::StackDepth);
    }
    Ok(stmt)
}

struct Checker {
    depth: usize,
}

impl VisitorMut for Checker {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        let mut set = q.body.as_ref();
        let mut chain = 0;
        while let SetExpr::SetOperation { left, .. } = set {
            chain += 1;
            if chain > MAX_SET_DEPTH {
                return ControlFlow::Break(());
            }
            set = left;
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        balance(e);
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _e: &mut Expr) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
}

/// A placeholder left where a subtree was taken out.
fn hole() -> Expr {
    Expr::value(Value::Null)
}

/// `e`, a left-deep chain of one boolean operator, as a balanced tree of its operands in the
/// same order (when it has more than [`BALANCE_FROM`] of them).
fn balance(e: &mut Expr) {
    let op = match e {
        Expr::BinaryOp {
            op: op @ (BinaryOperator::And | BinaryOperator::Or),
            left,
            ..
        } if matches!(&**left, Expr::BinaryOp { op: inner, .. } if inner == op) => op.clone(),
        _ => return,
    };
    // Count first (by reference): most chains are short and stay as they are.
    let mut n = 1;
    let mut at = &*e;
    while let Expr::BinaryOp { op: o, left, .. } = at {
        if *o != op {
            break;
        }
        n += 1;
        at = left;
    }
    if n <= BALANCE_FROM {
        return;
    }
    let mut operands = Vec::with_capacity(n);
    let mut rest = std::mem::replace(e, hole());
    loop {
        match rest {
            Expr::BinaryOp { left, op: o, right } if o == op => {
                operands.push(*right);
                rest = *left;
            }
            other => {
                operands.push(other);
                break;
            }
        }
    }
    operands.reverse();
    *e = balanced(operands, &op);
}

/// Operands joined by `op` in a tree of depth log2(n), left to right.
fn balanced(mut operands: Vec<Expr>, op: &BinaryOperator) -> Expr {
    if operands.len() <= 1 {
        return operands.pop().unwrap_or_else(hole);
    }
    let right = operands.split_off(operands.len() / 2);
    Expr::BinaryOp {
        left: Box::new(balanced(operands, op)),
        op: op.clone(),
        right: Box::new(balanced(right, op)),
    }
}

/// What [`dismantle`] has still to take apart.
enum Part {
    Expr(Box<Expr>),
    Set(Box<SetExpr>),
}

/// Takes the children of chain-forming nodes out of the tree it walks, so that walk stays
/// shallow; they are taken apart in turn.
struct Detacher {
    parts: Vec<Part>,
}

impl VisitorMut for Detacher {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        if matches!(*q.body, SetExpr::SetOperation { .. }) {
            let body = std::mem::replace(&mut q.body, Box::new(SetExpr::Values(empty_values())));
            self.parts.push(Part::Set(body));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        let mut take = |b: &mut Box<Expr>| {
            self.parts
                .push(Part::Expr(std::mem::replace(b, Box::new(hole()))))
        };
        match e {
            Expr::BinaryOp { left, right, .. } => {
                take(left);
                take(right);
            }
            Expr::Cast { expr, .. }
            | Expr::UnaryOp { expr, .. }
            | Expr::Nested(expr)
            | Expr::IsNull(expr)
            | Expr::IsNotNull(expr)
            | Expr::IsTrue(expr)
            | Expr::IsFalse(expr)
            | Expr::IsNotTrue(expr)
            | Expr::IsNotFalse(expr)
            | Expr::IsUnknown(expr)
            | Expr::IsNotUnknown(expr)
            | Expr::Collate { expr, .. } => take(expr),
            Expr::AtTimeZone {
                timestamp,
                time_zone,
            } => {
                take(timestamp);
                take(time_zone);
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

fn empty_values() -> sqlparser::ast::Values {
    sqlparser::ast::Values {
        explicit_row: false,
        value_keyword: false,
        rows: Vec::new(),
    }
}

/// Drops `stmt` without recursing along its chains.
fn dismantle(mut stmt: Statement) {
    let mut d = Detacher { parts: Vec::new() };
    let _ = stmt.visit(&mut d);
    drop(stmt);
    while let Some(part) = d.parts.pop() {
        match part {
            Part::Expr(mut e) => {
                let _ = e.visit(&mut d);
            }
            Part::Set(set) => match *set {
                SetExpr::SetOperation { left, right, .. } => {
                    d.parts.push(Part::Set(left));
                    d.parts.push(Part::Set(right));
                }
                mut other => {
                    let _ = other.visit(&mut d);
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(sql: &str) -> Statement {
        let mut p = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
            .try_with_sql(sql)
            .expect("tokens");
        p.parse_statement().expect("parse")
    }

    /// Debug builds' frames are large: walks near the limits get the stack the host gives.
    fn with_stack(f: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(f)
            .expect("thread")
            .join()
            .expect("no panic");
    }

    #[test]
    fn long_or_chains_are_balanced_in_order() {
        with_stack(long_or_chains_are_balanced_in_order_on_a_big_stack);
    }

    fn long_or_chains_are_balanced_in_order_on_a_big_stack() {
        let terms: Vec<String> = (0..5000).map(|i| format!("x = {i}")).collect();
        let sql = format!("SELECT 1 WHERE {}", terms.join(" OR "));
        let stmt = check(parse(&sql)).expect("balanced, not refused");
        // Printed back, the operands are in the same order.
        assert!(stmt.to_string().ends_with(&terms.join(" OR ")));
    }

    #[test]
    fn deep_chains_are_refused() {
        with_stack(deep_chains_are_refused_on_a_big_stack);
    }

    fn deep_chains_are_refused_on_a_big_stack() {
        let sql = format!("SELECT {}", vec!["1"; 100_000].join(" + "));
        assert!(matches!(check(parse(&sql)), Err(SqlError::StackDepth)));
        let sql = vec!["SELECT 1"; MAX_SET_DEPTH + 2].join(" UNION ALL ");
        assert!(matches!(check(parse(&sql)), Err(SqlError::StackDepth)));
        let sql = format!("SELECT 1{}", "::int".repeat(20_000));
        assert!(matches!(check(parse(&sql)), Err(SqlError::StackDepth)));
    }

    #[test]
    fn statements_within_the_limits_pass_unchanged() {
        with_stack(statements_within_the_limits_pass_unchanged_on_a_big_stack);
    }

    fn statements_within_the_limits_pass_unchanged_on_a_big_stack() {
        let sql = format!("SELECT {}", vec!["1"; MAX_EXPR_DEPTH - 10].join(" + "));
        let stmt = check(parse(&sql)).expect("within the limit");
        assert_eq!(stmt.to_string(), sql);
        let sql = "SELECT a FROM t WHERE a = 1 AND (b OR c) AND d UNION ALL SELECT 2";
        assert_eq!(check(parse(sql)).expect("short").to_string(), sql);
    }
}
