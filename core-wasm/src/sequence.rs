//! Sequences (docs/decisions/0029): definitions are relations of the registry (`relkind 'S'`),
//! transactional like tables; their values live outside MVCC, as PostgreSQL's do — a value
//! handed out is never taken back by a rollback, and concurrent transactions draw distinct
//! values. The values are kept here, shared by all sessions, and written by commits as
//! unversioned records.

use std::collections::{BTreeSet, HashMap};

use sqlparser::ast;

use crate::catalog::{SequenceDef, Table};
use crate::error::SqlError;
use crate::types::PgType;

/// A sequence's value: PostgreSQL's `last_value` and `is_called`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeqValue {
    pub last: i64,
    pub called: bool,
}

impl SeqValue {
    /// The value of a sequence nothing has been drawn from.
    pub fn initial(def: &SequenceDef) -> SeqValue {
        SeqValue {
            last: def.start,
            called: false,
        }
    }

    /// Unversioned record layout: `last` big-endian, then `called`.
    pub fn encode(self) -> Vec<u8> {
        let mut v = self.last.to_be_bytes().to_vec();
        v.push(u8::from(self.called));
        v
    }

    pub fn decode(v: &[u8]) -> Option<SeqValue> {
        let (last, called) = v.split_at_checked(8)?;
        Some(SeqValue {
            last: i64::from_be_bytes(last.try_into().ok()?),
            called: match called {
                [0] => false,
                [1] => true,
                _ => return None,
            },
        })
    }
}

/// The values of all sequences (by table id), shared by the engine's sessions.
#[derive(Debug, Default)]
pub struct SeqStates {
    pub values: HashMap<u32, SeqValue>,
    /// Sequences whose value changed since a commit last wrote it. Every commit writes them
    /// (the one of the transaction that drew the value, or, after a rollback, the next of any
    /// session), so a value a committed row holds is never handed out again after a restart.
    pub unsaved: BTreeSet<u32>,
}

impl SeqStates {
    pub fn value(&self, t: &Table, def: &SequenceDef) -> SeqValue {
        self.values
            .get(&t.id)
            .copied()
            .unwrap_or_else(|| SeqValue::initial(def))
    }
}

/// What a session remembers of the sequences it used (`currval`, `lastval`).
#[derive(Debug, Default)]
pub struct SessionSeqs {
    /// The value `nextval` (or `setval` with `is_called`) last gave this session, by sequence.
    pub current: HashMap<u32, i64>,
    /// The sequence of the session's latest `nextval`.
    pub last_used: Option<u32>,
    /// The running transaction changed a sequence's value: it commits (writes) even when it
    /// changed nothing else, as PostgreSQL's `nextval` makes a transaction write WAL.
    pub touched: bool,
    /// Sequences the running transaction restarted (`TRUNCATE … RESTART IDENTITY`, `ALTER
    /// SEQUENCE … RESTART`), each restart with the value before it, in order: put back, last
    /// first, if it ends without committing (or is rolled back to a savepoint before them).
    pub restarts: Vec<(u32, SeqValue)>,
    /// Restarts of a transaction that ended without committing, for the engine to undo.
    pub to_restore: Vec<(u32, SeqValue)>,
}

impl SessionSeqs {
    /// The running transaction ended (`committed`: it commits, or will once durable).
    pub fn end_transaction(&mut self, committed: bool) {
        self.touched = false;
        let restarts = std::mem::take(&mut self.restarts);
        if !committed {
            self.to_restore.extend(restarts.into_iter().rev());
        }
    }
}

/// Undoes the restarts of a transaction that did not commit: each sequence goes back to its
/// value before, unless values drawn since went past it (then they stay: a value is never
/// drawn twice).
pub fn restore(states: &mut SeqStates, t: &Table, def: &SequenceDef, before: SeqValue) {
    let now = states.value(t, def);
    let past = |a: SeqValue, b: SeqValue| {
        let (a, b) = (
            if a.called { Some(a.last) } else { None },
            if b.called { Some(b.last) } else { None },
        );
        match (a, b) {
            (Some(a), Some(b)) if def.increment > 0 => a > b,
            (Some(a), Some(b)) => a < b,
            (Some(_), None) => true,
            _ => false,
        }
    };
    if !past(now, before) {
        states.values.insert(t.id, before);
        states.unsaved.insert(t.id);
    }
}

/// PostgreSQL's `nextval`: the next value of `t` (a sequence), advancing the shared value.
pub fn nextval(
    states: &mut SeqStates,
    session: &mut SessionSeqs,
    t: &Table,
    def: &SequenceDef,
) -> Result<i64, SqlError> {
    let cur = states.value(t, def);
    let next = if !cur.called {
        cur.last
    } else {
        let stepped = cur
            .last
            .checked_add(def.increment)
            .filter(|n| (def.min..=def.max).contains(n));
        match stepped {
            Some(n) => n,
            None if def.cycle => {
                if def.increment > 0 {
                    def.min
                } else {
                    def.max
                }
            }
            None => {
                let (which, bound) = if def.increment > 0 {
                    ("maximum", def.max)
                } else {
                    ("minimum", def.min)
                };
                return Err(SqlError::SequenceLimit {
                    message: format!(
                        "nextval: reached {which} value of sequence \"{}\" ({bound})",
                        t.name
                    ),
                });
            }
        }
    };
    states.values.insert(
        t.id,
        SeqValue {
            last: next,
            called: true,
        },
    );
    states.unsaved.insert(t.id);
    session.current.insert(t.id, next);
    session.last_used = Some(t.id);
    session.touched = true;
    Ok(next)
}

/// PostgreSQL's `setval(seq, value, is_called)`.
pub fn setval(
    states: &mut SeqStates,
    session: &mut SessionSeqs,
    t: &Table,
    def: &SequenceDef,
    value: i64,
    called: bool,
) -> Result<i64, SqlError> {
    if !(def.min..=def.max).contains(&value) {
        return Err(SqlError::ArgumentOutOfRange {
            message: format!(
                "setval: value {value} is out of bounds for sequence \"{}\" ({}..{})",
                t.name, def.min, def.max
            ),
        });
    }
    states.values.insert(
        t.id,
        SeqValue {
            last: value,
            called,
        },
    );
    states.unsaved.insert(t.id);
    if called {
        session.current.insert(t.id, value);
    }
    session.touched = true;
    Ok(value)
}

/// The range of a sequence's data type.
pub fn type_range(ty: PgType) -> (i64, i64) {
    match ty {
        PgType::Int2 => (i16::MIN.into(), i16::MAX.into()),
        PgType::Int4 => (i32::MIN.into(), i32::MAX.into()),
        _ => (i64::MIN, i64::MAX),
    }
}

/// An option's number: an integer literal, possibly negated.
fn option_number(e: &ast::Expr) -> Result<i64, SqlError> {
    let bad = || SqlError::Syntax {
        message: format!("syntax error at or near \"{e}\""),
    };
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse::<i64>().map_err(|_| {
                // PostgreSQL reads a larger number as numeric, which bigint cannot hold.
                SqlError::IntegerOutOfRange {
                    type_name: "bigint",
                }
            }),
            _ => Err(bad()),
        },
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => option_number(expr)?
            .checked_neg()
            .ok_or(SqlError::IntegerOutOfRange {
                type_name: "bigint",
            }),
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Plus,
            expr,
        } => option_number(expr),
        _ => Err(bad()),
    }
}

/// A sequence's options as CREATE SEQUENCE or an identity column gives them, checked as
/// PostgreSQL's `init_params`. `ty` is the type when no `AS` is given; the owner (`OWNED BY`)
/// is returned for the caller to resolve (`Some(None)`: `OWNED BY NONE`).
#[allow(clippy::type_complexity)]
pub fn define(
    options: &[ast::SequenceOptions],
    ty: PgType,
) -> Result<(SequenceDef, Option<Option<ast::ObjectName>>), SqlError> {
    let mut seen = [false; 8];
    let mut once = |i: usize| {
        if std::mem::replace(&mut seen[i], true) {
            Err(SqlError::Syntax {
                message: "conflicting or redundant options".into(),
            })
        } else {
            Ok(())
        }
    };
    let (mut ty, mut increment, mut min, mut max, mut start, mut cache, mut cycle, mut owned) =
        (ty, 1i64, None, None, None, 1i64, false, None);
    for o in options {
        match o {
            ast::SequenceOptions::DataType(dt) => {
                once(0)?;
                ty = match crate::query::sql_type(dt)? {
                    (t @ (PgType::Int2 | PgType::Int4 | PgType::Int8), _) => t,
                    _ => {
                        return Err(SqlError::InvalidParameter {
                            message: "sequence type must be smallint, integer, or bigint".into(),
                        })
                    }
                };
            }
            ast::SequenceOptions::IncrementBy(e, _) => {
                once(1)?;
                increment = option_number(e)?;
                if increment == 0 {
                    return Err(SqlError::InvalidParameter {
                        message: "INCREMENT must not be zero".into(),
                    });
                }
            }
            ast::SequenceOptions::MinValue(e) => {
                once(2)?;
                min = e.as_ref().map(option_number).transpose()?;
            }
            ast::SequenceOptions::MaxValue(e) => {
                once(3)?;
                max = e.as_ref().map(option_number).transpose()?;
            }
            ast::SequenceOptions::StartWith(e, _) => {
                once(4)?;
                start = Some(option_number(e)?);
            }
            ast::SequenceOptions::Cache(e) => {
                once(5)?;
                cache = option_number(e)?;
            }
            ast::SequenceOptions::Cycle(no) => {
                once(6)?;
                // sqlparser's flag is set for `NO CYCLE`.
                cycle = !*no;
            }
            ast::SequenceOptions::OwnedBy(name) => {
                once(7)?;
                owned = Some(name.clone());
            }
        }
    }
    let (lo, hi) = type_range(ty);
    let type_name = crate::query::format_type(ty, -1);
    let max = max.unwrap_or(if increment > 0 { hi } else { -1 });
    let min = min.unwrap_or(if increment > 0 { 1 } else { lo });
    if max < lo || max > hi {
        return Err(SqlError::InvalidParameter {
            message: format!("MAXVALUE ({max}) is out of range for sequence data type {type_name}"),
        });
    }
    if min < lo || min > hi {
        return Err(SqlError::InvalidParameter {
            message: format!("MINVALUE ({min}) is out of range for sequence data type {type_name}"),
        });
    }
    if min >= max {
        return Err(SqlError::InvalidParameter {
            message: format!("MINVALUE ({min}) must be less than MAXVALUE ({max})"),
        });
    }
    let start = start.unwrap_or(if increment > 0 { min } else { max });
    if start < min {
        return Err(SqlError::InvalidParameter {
            message: format!("START value ({start}) cannot be less than MINVALUE ({min})"),
        });
    }
    if start > max {
        return Err(SqlError::InvalidParameter {
            message: format!("START value ({start}) cannot be greater than MAXVALUE ({max})"),
        });
    }
    if cache <= 0 {
        return Err(SqlError::InvalidParameter {
            message: format!("CACHE ({cache}) must be greater than zero"),
        });
    }
    Ok((
        SequenceDef {
            ty,
            start,
            increment,
            min,
            max,
            cache,
            cycle,
            owner: None,
            identity: false,
        },
        owned,
    ))
}

/// What `ALTER SEQUENCE` makes of a sequence: its new definition, the owner it names (as
/// [`define`] returns it), and the value `RESTART` gives it.
#[derive(Debug)]
pub struct Altered {
    pub def: SequenceDef,
    pub owned: Option<Option<ast::ObjectName>>,
    pub restart: Option<SeqValue>,
}

/// `ALTER SEQUENCE`'s options over `old` (whose value is `current`), checked as PostgreSQL's
/// `init_params` for an existing sequence: an option not given keeps its value, except that
/// bounds that were the old type's become the new type's under `AS`, and `NO MINVALUE` /
/// `NO MAXVALUE` take the default for the (new) increment's direction. The value (restarted or
/// current) must lie within the new bounds.
pub fn alter(
    old: &SequenceDef,
    options: &[ast::SequenceOptions],
    restart: Option<Option<&ast::Expr>>,
    current: SeqValue,
) -> Result<Altered, SqlError> {
    let mut def = old.clone();
    let (mut min, mut max, mut owned) = (None, None, None);
    // Bounds given (`[NO] MINVALUE` / `[NO] MAXVALUE`), and bounds that were the old type's
    // limits under `AS` (they become the new type's, whatever the direction).
    let (mut given_min, mut given_max) = (false, false);
    let (mut type_min, mut type_max) = (false, false);
    for o in options {
        match o {
            ast::SequenceOptions::DataType(dt) => {
                let ty = match crate::query::sql_type(dt)? {
                    (t @ (PgType::Int2 | PgType::Int4 | PgType::Int8), _) => t,
                    _ => {
                        return Err(SqlError::InvalidParameter {
                            message: "sequence type must be smallint, integer, or bigint".into(),
                        })
                    }
                };
                let (lo, hi) = type_range(old.ty);
                type_max = old.max == hi;
                type_min = old.min == lo;
                def.ty = ty;
            }
            ast::SequenceOptions::IncrementBy(e, _) => {
                def.increment = option_number(e)?;
                if def.increment == 0 {
                    return Err(SqlError::InvalidParameter {
                        message: "INCREMENT must not be zero".into(),
                    });
                }
            }
            ast::SequenceOptions::MinValue(e) => {
                given_min = true;
                min = e.as_ref().map(option_number).transpose()?;
            }
            ast::SequenceOptions::MaxValue(e) => {
                given_max = true;
                max = e.as_ref().map(option_number).transpose()?;
            }
            ast::SequenceOptions::StartWith(e, _) => {
                def.start = option_number(e)?;
            }
            ast::SequenceOptions::Cache(e) => def.cache = option_number(e)?,
            ast::SequenceOptions::Cycle(no) => def.cycle = !*no,
            ast::SequenceOptions::OwnedBy(name) => owned = Some(name.clone()),
        }
    }
    let (lo, hi) = type_range(def.ty);
    let type_name = crate::query::format_type(def.ty, -1);
    if let Some(m) = max {
        def.max = m;
    } else if given_max || type_max {
        def.max = if def.increment > 0 || type_max {
            hi
        } else {
            -1
        };
    }
    if def.max < lo || def.max > hi {
        return Err(SqlError::InvalidParameter {
            message: format!(
                "MAXVALUE ({}) is out of range for sequence data type {type_name}",
                def.max
            ),
        });
    }
    if let Some(m) = min {
        def.min = m;
    } else if given_min || type_min {
        def.min = if def.increment < 0 || type_min { lo } else { 1 };
    }
    if def.min < lo || def.min > hi {
        return Err(SqlError::InvalidParameter {
            message: format!(
                "MINVALUE ({}) is out of range for sequence data type {type_name}",
                def.min
            ),
        });
    }
    if def.min >= def.max {
        return Err(SqlError::InvalidParameter {
            message: format!(
                "MINVALUE ({}) must be less than MAXVALUE ({})",
                def.min, def.max
            ),
        });
    }
    if def.start < def.min {
        return Err(SqlError::InvalidParameter {
            message: format!(
                "START value ({}) cannot be less than MINVALUE ({})",
                def.start, def.min
            ),
        });
    }
    if def.start > def.max {
        return Err(SqlError::InvalidParameter {
            message: format!(
                "START value ({}) cannot be greater than MAXVALUE ({})",
                def.start, def.max
            ),
        });
    }
    let restart = restart
        .map(|v| {
            v.map(option_number).transpose().map(|v| SeqValue {
                last: v.unwrap_or(def.start),
                called: false,
            })
        })
        .transpose()?;
    // The value the sequence goes on from, restarted or not, must lie within the bounds.
    let last = restart.unwrap_or(current).last;
    if last < def.min {
        return Err(SqlError::InvalidParameter {
            message: format!(
                "RESTART value ({last}) cannot be less than MINVALUE ({})",
                def.min
            ),
        });
    }
    if last > def.max {
        return Err(SqlError::InvalidParameter {
            message: format!(
                "RESTART value ({last}) cannot be greater than MAXVALUE ({})",
                def.max
            ),
        });
    }
    if def.cache <= 0 {
        return Err(SqlError::InvalidParameter {
            message: format!("CACHE ({}) must be greater than zero", def.cache),
        });
    }
    Ok(Altered {
        def,
        owned,
        restart,
    })
}

/// `ALTER SEQUENCE … AS ty` over `old` (an identity column's type change): [`alter`] with that
/// one option.
pub fn retyped(old: &SequenceDef, ty: PgType, current: SeqValue) -> Result<SequenceDef, SqlError> {
    let dt = match ty {
        PgType::Int2 => ast::DataType::SmallInt(None),
        PgType::Int4 => ast::DataType::Integer(None),
        _ => ast::DataType::BigInt(None),
    };
    Ok(alter(old, &[ast::SequenceOptions::DataType(dt)], None, current)?.def)
}

/// The names of the sequences a DEFAULT expression's `nextval('…')` calls name, as written.
pub fn default_references(e: &ast::Expr) -> Vec<String> {
    use std::ops::ControlFlow;
    let mut out = Vec::new();
    let _ = ast::visit_expressions(e, |x| {
        if let ast::Expr::Function(f) = x {
            out.extend(nextval_argument(f));
        }
        ControlFlow::<()>::Continue(())
    });
    out
}

/// The sequence a DEFAULT expression that is nothing but `nextval('s')` (or
/// `nextval('s'::regclass)`, `pg_catalog.nextval(…)`) names, as written.
pub fn sole_nextval(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Function(f) if f.filter.is_none() && f.over.is_none() => nextval_argument(f),
        _ => None,
    }
}

/// The sequence name a `nextval('…')` call gives as a literal (under casts).
fn nextval_argument(f: &ast::Function) -> Option<String> {
    let name = crate::query::object_name(&f.name);
    let is_nextval = match name.as_slice() {
        [n] => n == "nextval",
        [s, n] => s == "pg_catalog" && n == "nextval",
        _ => false,
    };
    let ast::FunctionArguments::List(l) = &f.args else {
        return None;
    };
    match l.args.as_slice() {
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(a))]
            if is_nextval && l.clauses.is_empty() =>
        {
            string_of(a)
        }
        _ => None,
    }
}

/// The string literal under casts (`'s'::regclass`).
fn string_of(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Cast { expr, .. } => string_of(expr),
        ast::Expr::Nested(x) => string_of(x),
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip() {
        for v in [
            SeqValue {
                last: i64::MIN,
                called: true,
            },
            SeqValue {
                last: 42,
                called: false,
            },
        ] {
            assert_eq!(SeqValue::decode(&v.encode()), Some(v));
        }
        assert_eq!(SeqValue::decode(&[0; 8]), None);
        assert_eq!(SeqValue::decode(&[0; 10]), None);
    }
}
