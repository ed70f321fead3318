//! The executor's expression evaluation.

use super::*;

pub struct Env<'r> {
    pub row: &'r [Value],
    pub parent: Option<&'r Env<'r>>,
    pub aggs: Option<&'r [Value]>,
}

pub struct Executor<'a, 'b> {
    pub cx: &'a ReadCx<'b>,
    pub(super) cache: RefCell<HashMap<usize, Rc<Vec<Vec<Value>>>>>,
    /// Rows of correlated subqueries by the outer values they read, as PostgreSQL reruns a
    /// subplan only when its parameters change: [`correlation_key`] → rows.
    pub(super) correlated_rows: RefCell<HashMap<String, SharedRows>>,
    /// The working tables of the recursive queries being run, by [`BSet::WorkTable`] id.
    pub(super) worktables: RefCell<HashMap<usize, SharedRows>>,
    /// Rows after which a recursive query may stop: its reader needs no more.
    pub(super) row_goals: RefCell<HashMap<usize, usize>>,
    /// Rows the next plain select's projection may stop after (a LIMIT with nothing between
    /// it and the select): the rows past it are never projected, so their expressions are not
    /// evaluated (nor their errors raised), as in PostgreSQL's pipeline.
    pub(super) select_goal: std::cell::Cell<Option<usize>>,
    /// `set_config` calls evaluated so far, applied in order once the statement's rows are
    /// complete (the executor only reads the session). `None`: the statement cannot apply
    /// them (not a plain query), so `set_config` is refused instead of silently dropped.
    pub(super) set_configs: Option<RefCell<Vec<crate::settings::SetConfig>>>,
    /// What `pg_cancel_backend` / `pg_terminate_backend` calls leave for the caller, in
    /// order; `None` as for `set_configs`.
    pub(super) effects: Option<RefCell<Vec<Effect>>>,
}

/// A consequence of a statement beyond its rows, passed to the session once they are
/// complete.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Effect {
    /// The host signals another session's backend.
    Signal { pid: i32, terminate: bool },
    /// A WARNING sent before the statement's answer.
    Notice(crate::error::Notice),
    /// `pg_export_snapshot()` named the commit point the statement reads.
    ExportSnapshot { id: String, point: u64 },
}

pub(crate) fn truthy(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

/// [`value_key`] of one value: array elements compared as IS NOT DISTINCT FROM.
pub(super) fn element_key(v: &Value) -> Vec<u8> {
    value_key(std::slice::from_ref(v))
}

/// A hashable, exact key for a row of values: equal values (in SQL's sense, across integer and
/// numeric representations) give equal keys, unequal ones different keys. Only ever hashed and
/// compared for equality (joins, GROUP BY, DISTINCT, IN sets), never ordered.
pub fn value_key(vals: &[Value]) -> Vec<u8> {
    let mut k = Vec::with_capacity(vals.len() * 10);
    for v in vals {
        push_value_key(&mut k, v);
    }
    k
}

/// One value's part of [`value_key`], appended to `k`.
pub(super) fn push_value_key(k: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Int(i) => int_key(k, *i),
        Value::Numeric(s) => {
            // Trailing fractional zeros do not change the value.
            let t = if s.contains('.') {
                s.trim_end_matches('0').trim_end_matches('.')
            } else {
                s.as_str()
            };
            match t.parse::<i64>() {
                // An integral numeric meets the integer of the same value.
                Ok(i) => int_key(k, i),
                Err(_) => {
                    crate::keys::encode_field(k, &Value::Numeric(t.to_string()), PgType::Numeric)
                }
            }
        }
        Value::Text(_) => crate::keys::encode_field(k, v, PgType::Text),
        // PostgreSQL's interval equality compares spans, a month as 30 days and a day as 24
        // hours (`interval_cmp_value`): `1 day` and `24:00:00` are one group.
        Value::Interval(iv) => {
            const DAY: i128 = 86_400_000_000;
            let span =
                (i128::from(iv.months) * 30 + i128::from(iv.days)) * DAY + i128::from(iv.micros);
            k.push(0x04);
            k.extend_from_slice(&span.to_be_bytes());
        }
        // PostgreSQL's float equality: -0 is 0, and every NaN is the same NaN.
        Value::Float(f) if *f == 0.0 || f.is_nan() => {
            let canonical = if f.is_nan() { f64::NAN } else { 0.0 };
            crate::keys::encode_field(k, &Value::Float(canonical), PgType::Bytea)
        }
        // An array (or a record) is equal element by element, each by its own equality
        // (`{1.5}` and `{1.50}` are one group): its length, then each element's key.
        Value::Array(items) => {
            k.push(0x0A);
            k.extend_from_slice(&(items.len() as u64).to_be_bytes());
            for item in items.iter() {
                push_value_key(k, item);
            }
        }
        other => crate::keys::encode_field(k, other, PgType::Bytea),
    }
}

/// [`push_value_key`] of the value a catalog probe stands for (an OID is the `Int` the row
/// holds, a name its `Text`), built without that value. `false` for NULL, which no key meets.
pub(super) fn push_probe_key(k: &mut Vec<u8>, p: crate::pgcatalog::Probe<'_>) -> bool {
    use crate::pgcatalog::Probe;
    match p {
        Probe::Value(v) if v.is_null() => return false,
        Probe::Value(v) => push_value_key(k, v),
        Probe::Oid(oid) => int_key(k, i64::from(oid)),
        Probe::Name(prefix, name) => crate::keys::encode_text_parts(k, &[prefix, name]),
    }
    true
}

/// An integer's part of [`value_key`]: a mark no encoded field starts with (those start with
/// the NULL or value mark, 0x00 / 0x01), then the 8 bytes.
pub(super) fn int_key(k: &mut Vec<u8>, i: i64) {
    k.push(0x03);
    k.extend_from_slice(&i.to_be_bytes());
}

/// PostgreSQL's `like_escape(pattern, escape)`: the pattern rewritten to escape with a
/// backslash instead of `escape` (an empty escape: none, every backslash literal).
pub(super) fn like_escape(p: &str, escape: &str) -> Result<String, SqlError> {
    let mut chars = escape.chars();
    let e = match (chars.next(), chars.next()) {
        (None, _) => return Ok(p.replace('\\', "\\\\")),
        (Some('\\'), None) => return Ok(p.to_string()),
        (Some(e), None) => e,
        _ => {
            return Err(SqlError::InvalidEscape {
                message: "invalid escape string".into(),
                hint: Some("Escape string must be empty or one character.".into()),
            })
        }
    };
    let mut out = String::with_capacity(p.len() + 2);
    let mut after_escape = false;
    for c in p.chars() {
        if c == e && !after_escape {
            out.push('\\');
            after_escape = true;
        } else if c == '\\' {
            out.push('\\');
            if !after_escape {
                out.push('\\');
            }
            after_escape = false;
        } else {
            out.push(c);
            after_escape = false;
        }
    }
    Ok(out)
}

/// SQL LIKE: `%` any run, `_` one character, `\\` escapes the next. Works on the strings in
/// place (byte offsets, characters decoded as met): it runs once per scanned row. A pattern
/// ending in the escape character is PostgreSQL's 22025 when matching reaches it.
pub(super) fn like_match(s: &str, p: &str, ci: bool) -> Result<bool, SqlError> {
    // Iterative wildcard matching with backtracking on the last '%'.
    let at = |t: &str, i: usize| t[i..].chars().next();
    let eq = |a: char, b: char| {
        if ci {
            a.to_lowercase().eq(b.to_lowercase())
        } else {
            a == b
        }
    };
    let (mut si, mut pi) = (0usize, 0usize);
    let (mut star, mut mark) = (None::<usize>, 0usize);
    while let Some(c) = at(s, si) {
        let pc = at(p, pi);
        let escaped = match pc {
            Some('\\') => match at(p, pi + 1) {
                None => {
                    return Err(SqlError::InvalidEscape {
                        message: "LIKE pattern must not end with escape character".into(),
                        hint: None,
                    })
                }
                e => e,
            },
            _ => None,
        };
        if let Some(e) = escaped.filter(|e| eq(c, *e)) {
            si += c.len_utf8();
            pi += 1 + e.len_utf8();
        } else if pc.is_some_and(|q| q == '_' || (q != '%' && q != '\\' && eq(c, q))) {
            si += c.len_utf8();
            pi += pc.map_or(0, char::len_utf8);
        } else if pc == Some('%') {
            star = Some(pi);
            mark = si;
            pi += 1;
        } else if let Some(st) = star {
            pi = st + 1;
            mark += at(s, mark).map_or(1, char::len_utf8);
            si = mark;
        } else {
            return Ok(false);
        }
    }
    Ok(p[pi..].bytes().all(|b| b == b'%'))
}

impl<'a, 'b> Executor<'a, 'b> {
    /// The sequence relation `oid` names (PostgreSQL's errors for a table or no relation).
    pub(super) fn sequence_of(&self, oid: i64) -> Result<TableRef, SqlError> {
        let t = u32::try_from(oid)
            .ok()
            .and_then(|o| self.cx.relation_by_oid(o))
            .ok_or(SqlError::NoRelationWithOid { oid })?;
        match t {
            (t, false) if t.sequence.is_some() => Ok(t),
            (t, _) => Err(SqlError::WrongObjectType {
                message: format!(
                    "\"{}\" is not a sequence",
                    u32::try_from(oid).map_or(t.name.as_str(), |o| t.name_of(o))
                ),
            }),
        }
    }

    /// `nextval`, `setval`, `currval`, `lastval` over bound arguments (NULL in, NULL out).
    pub(super) fn sequence_call(&self, name: &str, a: &[Value]) -> Result<Value, SqlError> {
        if a.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        if matches!(name, "nextval" | "setval") && self.cx.read_only() {
            return Err(SqlError::ReadOnlyTransaction {
                what: format!("{name}()"),
            });
        }
        let int = |i: usize| match a.get(i) {
            Some(Value::Int(n)) => Ok(*n),
            _ => Err(SqlError::internal(format!(
                "{name}: argument {i} is not bigint"
            ))),
        };
        if name == "lastval" {
            let sess = self.cx.seqs.borrow();
            // The sequence must still exist (and be visible to this transaction).
            let value = sess
                .last_used
                .filter(|id| self.cx.sequences().iter().any(|t| t.id == *id))
                .and_then(|id| sess.current.get(&id));
            return match value {
                Some(v) => Ok(Value::Int(*v)),
                None => Err(SqlError::NotInPrerequisiteState {
                    message: "lastval is not yet defined in this session".into(),
                }),
            };
        }
        let t = self.sequence_of(int(0)?)?;
        let Some(def) = t.sequence.as_deref() else {
            return Err(SqlError::internal("sequence without definition"));
        };
        let mut states = self.cx.st.sequences.borrow_mut();
        let mut sess = self.cx.seqs.borrow_mut();
        let v = match name {
            "nextval" => crate::sequence::nextval(&mut states, &mut sess, &t, def)?,
            "setval" => {
                let called = !matches!(a.get(2), Some(Value::Bool(false)));
                crate::sequence::setval(&mut states, &mut sess, &t, def, int(1)?, called)?
            }
            _ => match sess.current.get(&t.id) {
                Some(v) => *v,
                None => {
                    return Err(SqlError::NotInPrerequisiteState {
                        message: format!(
                            "currval of sequence \"{}\" is not yet defined in this session",
                            t.name
                        ),
                    })
                }
            },
        };
        Ok(Value::Int(v))
    }

    /// An executor for a plain query, whose caller applies the `set_config` calls it makes.
    pub(crate) fn with_set_config(cx: &'a ReadCx<'b>) -> Self {
        Executor {
            set_configs: Some(RefCell::new(Vec::new())),
            effects: Some(RefCell::new(Vec::new())),
            ..Executor::new(cx)
        }
    }

    /// The signals and warnings of the statement's `pg_cancel_backend` /
    /// `pg_terminate_backend` calls, in order.
    pub(crate) fn take_effects(&self) -> Vec<Effect> {
        self.effects
            .as_ref()
            .map(|c| std::mem::take(&mut *c.borrow_mut()))
            .unwrap_or_default()
    }

    /// The `set_config` calls the statement made, in order (see [`crate::settings::SetConfig`]).
    pub(crate) fn take_set_configs(&self) -> Vec<crate::settings::SetConfig> {
        self.set_configs
            .as_ref()
            .map(|c| std::mem::take(&mut *c.borrow_mut()))
            .unwrap_or_default()
    }

    pub fn new(cx: &'a ReadCx<'b>) -> Self {
        Executor {
            cx,
            cache: RefCell::new(HashMap::new()),
            correlated_rows: RefCell::new(HashMap::new()),
            worktables: RefCell::new(HashMap::new()),
            row_goals: RefCell::new(HashMap::new()),
            select_goal: std::cell::Cell::new(None),
            set_configs: None,
            effects: None,
        }
    }

    pub fn eval(&self, e: &BExpr, env: &Env<'_>) -> Result<Value, SqlError> {
        Ok(match e {
            BExpr::Const(v) => v.clone(),
            // Only described statements hold parameters, and those are never executed.
            BExpr::Param(..) => Value::Null,
            BExpr::Col(i) => env.row.get(*i).cloned().unwrap_or(Value::Null),
            BExpr::Outer(depth, i) => {
                let mut cur = env;
                for _ in 0..*depth {
                    cur = cur
                        .parent
                        .ok_or_else(|| SqlError::internal("outer reference without outer row"))?;
                }
                cur.row.get(*i).cloned().unwrap_or(Value::Null)
            }
            BExpr::Agg(i) => env
                .aggs
                .and_then(|a| a.get(*i))
                .cloned()
                .ok_or_else(|| SqlError::internal("aggregate outside group"))?,
            // Rewritten into columns when the select is bound.
            BExpr::Win(_) => return Err(SqlError::internal("window call outside its select")),
            BExpr::Srf(_) => {
                return Err(SqlError::internal(
                    "set-returning call outside its select list",
                ))
            }
            BExpr::Bin(op, l, r) => {
                // Comparisons of columns and constants (most WHERE conjuncts) read the values
                // in place instead of copying them.
                if let (Some(a), Some(b), true) = (peek(l, env), peek(r, env), op.is_comparison()) {
                    return Ok(compare_op(*op, a, b));
                }
                let a = self.eval(l, env)?;
                let b = self.eval(r, env)?;
                binop(*op, a, b)?
            }
            BExpr::And(l, r) => {
                let a = truthy(&self.eval(l, env)?);
                if a == Some(false) {
                    return Ok(Value::Bool(false));
                }
                let b = truthy(&self.eval(r, env)?);
                match (a, b) {
                    (_, Some(false)) => Value::Bool(false),
                    (Some(true), Some(true)) => Value::Bool(true),
                    _ => Value::Null,
                }
            }
            BExpr::Or(l, r) => {
                let a = truthy(&self.eval(l, env)?);
                if a == Some(true) {
                    return Ok(Value::Bool(true));
                }
                let b = truthy(&self.eval(r, env)?);
                match (a, b) {
                    (_, Some(true)) => Value::Bool(true),
                    (Some(false), Some(false)) => Value::Bool(false),
                    _ => Value::Null,
                }
            }
            BExpr::Not(x) => match truthy(&self.eval(x, env)?) {
                Some(b) => Value::Bool(!b),
                None => Value::Null,
            },
            BExpr::Neg(x) => match self.eval(x, env)? {
                Value::Int(i) => Value::Int(i.checked_neg().ok_or(BIGINT_OUT_OF_RANGE)?),
                Value::Float(f) => Value::Float(-f),
                Value::Numeric(s) => Value::Numeric(numeric_neg(&s)),
                Value::Interval(iv) => Value::Interval(crate::types::Interval {
                    months: -iv.months,
                    days: -iv.days,
                    micros: -iv.micros,
                }),
                Value::Null => Value::Null,
                other => return Err(SqlError::feature(format!("negation of {other:?}"))),
            },
            BExpr::IsNull(x, neg) => Value::Bool(self.eval(x, env)?.is_null() != *neg),
            BExpr::IsDistinct(a, b, neg) => {
                let x = self.eval(a, env)?;
                let y = self.eval(b, env)?;
                let distinct = match (&x, &y) {
                    (Value::Null, Value::Null) => false,
                    (Value::Null, _) | (_, Value::Null) => true,
                    _ => compare(&x, &y) != std::cmp::Ordering::Equal,
                };
                Value::Bool(distinct != *neg)
            }
            BExpr::InList(x, items, neg) => {
                let v = self.eval(x, env)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let mut saw_null = false;
                for it in items {
                    let w = self.eval(it, env)?;
                    if w.is_null() {
                        saw_null = true;
                    } else if compare(&v, &w) == std::cmp::Ordering::Equal {
                        return Ok(Value::Bool(!*neg));
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    Value::Bool(*neg)
                }
            }
            BExpr::InSub(x, q, op, all) => {
                // PostgreSQL's quantified comparison: ANY is true if one comparison is true,
                // ALL false if one is false; otherwise NULL if one was NULL. Over no rows ANY
                // is false and ALL true, whatever the left side is.
                let v = self.eval(x, env)?;
                let rows = self.subquery_rows(q, env)?;
                let mut saw_null = false;
                for r in rows.iter() {
                    let w = r.first().unwrap_or(&Value::Null);
                    match compare_op(*op, &v, w) {
                        Value::Bool(b) if b != *all => return Ok(Value::Bool(b)),
                        Value::Null => saw_null = true,
                        _ => {}
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    Value::Bool(*all)
                }
            }
            BExpr::Exists(q, neg) => Value::Bool(self.subquery_rows(q, env)?.is_empty() == *neg),
            BExpr::AnyArray(op, l, r, all, ty) => {
                let lv = self.eval(l, env)?;
                let Value::Array(items) = self.eval(r, env)? else {
                    return Ok(Value::Null);
                };
                // ANY: true if one comparison is true; ALL: false if one is false; otherwise
                // NULL when a comparison was NULL.
                let mut saw_null = false;
                for item in items.iter().cloned() {
                    let item = if item.is_null() {
                        item
                    } else {
                        cast_value(item, *ty)?
                    };
                    match binop(*op, lv.clone(), item)? {
                        Value::Bool(b) if b != *all => return Ok(Value::Bool(b)),
                        Value::Null => saw_null = true,
                        _ => {}
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    Value::Bool(*all)
                }
            }
            BExpr::ArraySub(q) => {
                let rows = self.subquery_rows(q, env)?;
                let text = q.columns[0].ty != PgType::Int2;
                let mut items = Vec::with_capacity(rows.len());
                for r in rows.iter() {
                    let v = r.first().cloned().unwrap_or(Value::Null);
                    items.push(if text && !v.is_null() {
                        cast_value(v, PgType::Text)?
                    } else {
                        v
                    });
                }
                Value::Array(items.into())
            }
            BExpr::Scalar(q) => {
                let rows = self.subquery_rows(q, env)?;
                if rows.len() > 1 {
                    return Err(SqlError::CardinalityViolation);
                }
                rows.first()
                    .and_then(|r| r.first().cloned())
                    .unwrap_or(Value::Null)
            }
            BExpr::Like(x, p, neg, ci) => {
                // Columns and constants are read in place (no copy per row).
                let (s_owned, p_owned);
                let s = match peek(x, env) {
                    Some(v) => v,
                    None => {
                        s_owned = self.eval(x, env)?;
                        &s_owned
                    }
                };
                let pat = match peek(p, env) {
                    Some(v) => v,
                    None => {
                        p_owned = self.eval(p, env)?;
                        &p_owned
                    }
                };
                match (s, pat) {
                    (Value::Text(s), Value::Text(p)) => Value::Bool(like_match(s, p, *ci)? != *neg),
                    _ => Value::Null,
                }
            }
            BExpr::Case(op, arms, el) => {
                let base = match op {
                    Some(o) => Some(self.eval(o, env)?),
                    None => None,
                };
                for (c, r) in arms {
                    let hit = match &base {
                        Some(b) => {
                            let cv = self.eval(c, env)?;
                            !b.is_null()
                                && !cv.is_null()
                                && compare(b, &cv) == std::cmp::Ordering::Equal
                        }
                        None => truthy(&self.eval(c, env)?) == Some(true),
                    };
                    if hit {
                        return self.eval(r, env);
                    }
                }
                match el {
                    Some(x) => self.eval(x, env)?,
                    None => Value::Null,
                }
            }
            BExpr::Cast(x, t) => cast_value(self.eval(x, env)?, *t)?,
            // COALESCE evaluates its arguments only up to the first that is not NULL.
            BExpr::Func(name, args) if name == "coalesce" => {
                for a in args {
                    let v = self.eval(a, env)?;
                    if !v.is_null() {
                        return Ok(v);
                    }
                }
                Value::Null
            }
            BExpr::Func(name, args) => {
                let vals = self.eval_each(args.iter(), env)?;
                self.call(name, vals)?
            }
        })
    }

    /// 64 bits of the host's entropy (the core has none of its own).
    pub(super) fn entropy(&self) -> Result<u64, SqlError> {
        self.cx.kv.entropy().ok_or_else(|| {
            SqlError::feature("random numbers without a source of entropy in the host")
        })
    }
}
