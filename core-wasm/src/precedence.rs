//! Where sqlparser's operator precedence differs from PostgreSQL's grammar, the parsed tree is
//! regrouped as PostgreSQL would have read the text.
//!
//! PostgreSQL's unary minus (and plus) binds tighter than `*`, `/`, `%` and `^`: `-2 ^ 2` is
//! `(-2) ^ 2` = 4. sqlparser reads a prefix sign's operand taking `^` in: `-(2 ^ 2)` = -4,
//! and `2 ^ -1 ^ 2` is `2 ^ -(1 ^ 2)` where PostgreSQL's left-associative `^` reads
//! `(2 ^ -1) ^ 2`. For `*`, `/` and `%` the grouping gives the same value, so a statement
//! without `^` is not walked. Parentheses written in the text are `Expr::Nested` and are left
//! alone; a regrouped sign is put in parentheses, so that the tree prints as it groups.

use std::ops::ControlFlow;

use sqlparser::ast::{self, BinaryOperator, Expr, UnaryOperator};

/// Regroups `tree` (a statement, query or expression) where the text was read with
/// sqlparser's precedence instead of PostgreSQL's. `sql` is its text, only looked at to skip
/// the walk when no `^` is written. Every parse of SQL text goes through this: a client's,
/// and a stored view's or default's (written before the regrouped signs were parenthesized).
pub fn as_postgres_groups<V: ast::VisitMut>(sql: &str, tree: &mut V) {
    if writes_power(sql) {
        regroup_signs(tree);
    }
}

/// Whether `sql` writes `^`: only then can a tree parsed from it need regrouping. A
/// multi-statement string is searched once, not once per statement.
pub fn writes_power(sql: &str) -> bool {
    sql.contains('^')
}

/// [`as_postgres_groups`] without looking at the text (its caller did, [`writes_power`]).
pub fn regroup_signs<V: ast::VisitMut>(tree: &mut V) {
    // Children first: an operand is regrouped before the operator over it.
    let _ = ast::visit_expressions_mut(tree, |e| {
        regroup(e);
        ControlFlow::<()>::Continue(())
    });
}

/// How tightly a binary operator a prefix sign's operand can take in binds (`None`: one it
/// cannot, or one sqlparser groups as PostgreSQL does).
fn tightness(op: &BinaryOperator) -> Option<u8> {
    match op {
        BinaryOperator::Multiply | BinaryOperator::Divide | BinaryOperator::Modulo => Some(1),
        BinaryOperator::PGExp => Some(2),
        _ => None,
    }
}

fn regroup(e: &mut Expr) {
    let placeholder = || Expr::value(ast::Value::Null);
    match e {
        // `-(a ^ b …)` as read from `- a ^ b …`: the sign goes to `a`.
        Expr::UnaryOp {
            op: op @ (UnaryOperator::Minus | UnaryOperator::Plus),
            expr,
        } if matches!(&**expr, Expr::BinaryOp { op, .. } if tightness(op).is_some()) => {
            let op = *op;
            let operand = std::mem::replace(&mut **expr, placeholder());
            *e = sign_on_leftmost(op, operand);
        }
        // `a ^ (b ^ c)` as read from `a ^ -b ^ c` (the sign took `^ c` in, and has gone to
        // `b`): left-associative again.
        Expr::BinaryOp { op, right, .. }
            if tightness(op).is_some_and(|outer| {
                matches!(&**right, Expr::BinaryOp { op, .. }
                    if tightness(op).is_some_and(|inner| inner <= outer))
            }) =>
        {
            let Expr::BinaryOp { left, op, right } = std::mem::replace(e, placeholder()) else {
                return;
            };
            *e = left_associated(*left, op, *right);
        }
        _ => {}
    }
}

/// `op` applied to the leftmost operand of `e`, down its chain of operators a sign binds
/// tighter than.
fn sign_on_leftmost(op: UnaryOperator, e: Expr) -> Expr {
    match e {
        Expr::BinaryOp {
            left,
            op: binary,
            right,
        } if tightness(&binary).is_some() => Expr::BinaryOp {
            left: Box::new(sign_on_leftmost(op, *left)),
            op: binary,
            right,
        },
        // In parentheses, so that the tree prints as it groups: a view's or a default's
        // stored text reads back the same.
        operand => Expr::Nested(Box::new(Expr::UnaryOp {
            op,
            expr: Box::new(operand),
        })),
    }
}

/// `left op right`, where `right` is a chain whose operators bind no tighter than `op`:
/// `op` takes `right`'s leftmost operand, and the chain's operators apply after it.
fn left_associated(left: Expr, op: BinaryOperator, right: Expr) -> Expr {
    match right {
        Expr::BinaryOp {
            left: inner_left,
            op: inner,
            right: inner_right,
        } if tightness(&inner).is_some_and(|i| tightness(&op).is_some_and(|o| i <= o)) => {
            Expr::BinaryOp {
                left: Box::new(left_associated(left, op, *inner_left)),
                op: inner,
                right: inner_right,
            }
        }
        right => Expr::BinaryOp {
            left: Box::new(left),
            op,
            right: Box::new(right),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    fn regrouped(sql: &str) -> String {
        let mut stmts = Parser::parse_sql(&PostgreSqlDialect {}, sql).expect("parses");
        let mut stmt = stmts.remove(0);
        as_postgres_groups(sql, &mut stmt);
        match stmt {
            ast::Statement::Query(q) => match *q.body {
                ast::SetExpr::Select(s) => match &s.projection[0] {
                    ast::SelectItem::UnnamedExpr(e) => format!("{e:?}")
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    fn same(a: &str, b: &str) {
        // Spans differ; compare the trees' shapes by their Display, fully parenthesized.
        let show = |sql: &str| {
            let mut stmts = Parser::parse_sql(&PostgreSqlDialect {}, sql).expect("parses");
            let mut stmt = stmts.remove(0);
            as_postgres_groups(sql, &mut stmt);
            grouping(&stmt)
        };
        assert_eq!(show(a), show(b), "{a} vs {b}");
    }

    /// The tree with every operator's operands in parentheses.
    fn grouping(stmt: &ast::Statement) -> String {
        fn g(e: &Expr) -> String {
            match e {
                Expr::BinaryOp { left, op, right } => format!("({} {op} {})", g(left), g(right)),
                Expr::UnaryOp { op, expr } => format!("({op}{})", g(expr)),
                Expr::Nested(inner) => g(inner),
                other => other.to_string(),
            }
        }
        let ast::Statement::Query(q) = stmt else {
            panic!("{stmt}")
        };
        let ast::SetExpr::Select(s) = &*q.body else {
            panic!("{stmt}")
        };
        s.projection
            .iter()
            .map(|i| match i {
                ast::SelectItem::UnnamedExpr(e) => g(e),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    #[test]
    fn a_sign_binds_tighter_than_power_as_in_postgres() {
        same("SELECT -2 ^ 2", "SELECT (-2) ^ 2");
        same("SELECT - 2 ^ 3 ^ 2", "SELECT ((-2) ^ 3) ^ 2");
        same("SELECT +x ^ 2", "SELECT (+x) ^ 2");
        same("SELECT - - 2 ^ 2", "SELECT (-(-2)) ^ 2");
        same("SELECT -3 * 2 ^ 2", "SELECT (-3) * (2 ^ 2)");
        same("SELECT 2 ^ -1 ^ 2", "SELECT (2 ^ (-1)) ^ 2");
        same("SELECT -a.b::int ^ 2", "SELECT (-(a.b::int)) ^ 2");
        same("SELECT -2 ^ 2 * 3", "SELECT ((-2) ^ 2) * 3");
        same("SELECT -2 ^ -1 ^ 2", "SELECT ((-2) ^ (-1)) ^ 2");
        same("SELECT 2 ^ -3 * 2", "SELECT (2 ^ (-3)) * 2");
        same("SELECT 2 * -3 ^ 2 * 4", "SELECT (2 * ((-3) ^ 2)) * 4");
        same("SELECT 2 * 3 ^ 2", "SELECT 2 * (3 ^ 2)");
        same("SELECT 2 ^ 3 ^ 2", "SELECT (2 ^ 3) ^ 2");
        // Written parentheses stay.
        same("SELECT -(2 ^ 2)", "SELECT -(2 ^ 2)");
        assert!(regrouped("SELECT -(2 ^ 2)").starts_with("UnaryOp"));
        // Inside any expression of any clause.
        let inside = regrouped("SELECT f(-2 ^ 2)");
        assert!(
            inside.contains("BinaryOp { left: Nested(UnaryOp { op: Minus"),
            "{inside}"
        );
        // The regrouped tree prints as it groups, and reads back the same.
        for sql in ["SELECT -2 ^ 2", "SELECT 2 ^ -1 ^ 2", "SELECT -x ^ 2 * 3"] {
            let mut stmts = Parser::parse_sql(&PostgreSqlDialect {}, sql).expect("parses");
            as_postgres_groups(sql, &mut stmts[0]);
            let printed = stmts[0].to_string();
            let back = Parser::parse_sql(&PostgreSqlDialect {}, &printed).expect("parses");
            assert_eq!(grouping(&back[0]), grouping(&stmts[0]), "{printed}");
        }
    }
}
