//! Aggregate functions fed one input at a time, so a grouped query keeps per group only its
//! aggregates' running state instead of every row (`query::Executor::stream_groups`), and the
//! grouping of materialised rows (joins) computes the same values the same way.

use crate::error::SqlError;
use crate::numeric::numeric_div;
use crate::query::{binop, order_cmp, truthy, value_key, AggFunc, AggSpec, BinOp};
use crate::types::{compare, format_text, PgType, Value};

/// The running state of one aggregate over one group.
#[derive(Debug, Clone)]
pub struct AggState {
    func: AggFunc,
    ty: PgType,
    /// The ORDER BY keys' (descending, nulls first).
    order: Vec<(bool, bool)>,
    /// Keys of the values taken so far, for `DISTINCT`.
    seen: Option<crate::keyhash::KeySetOf>,
    acc: Acc,
}

#[derive(Debug, Clone)]
enum Acc {
    /// `count(*)`: rows; `count(x)`: non-null inputs.
    Count(i64),
    /// `min` / `max`: the extreme so far.
    Extreme(Option<Value>),
    /// `sum` / `avg`: the running sum (from integer 0, as PostgreSQL's result types follow from
    /// adding) and the inputs added.
    Sum { sum: Value, n: usize },
    /// `bool_and` / `bool_or`: whether all / any inputs were true, and how many there were.
    Bools { all: bool, any: bool, n: usize },
    /// `string_agg` / `array_agg`: the inputs (and separators, and ORDER BY keys), in input
    /// order.
    Collect {
        vals: Vec<Value>,
        seps: Vec<Value>,
        keys: Vec<Vec<Value>>,
    },
}

impl AggState {
    pub fn new(a: &AggSpec) -> Self {
        let acc = match a.func {
            AggFunc::CountStar | AggFunc::Count => Acc::Count(0),
            AggFunc::Min | AggFunc::Max => Acc::Extreme(None),
            AggFunc::Sum | AggFunc::Avg => Acc::Sum {
                sum: Value::Null,
                n: 0,
            },
            AggFunc::BoolAnd | AggFunc::BoolOr => Acc::Bools {
                all: true,
                any: false,
                n: 0,
            },
            AggFunc::StringAgg | AggFunc::ArrayAgg => Acc::Collect {
                vals: Vec::new(),
                seps: Vec::new(),
                keys: Vec::new(),
            },
        };
        AggState {
            func: a.func,
            ty: a.ty,
            order: a.order.iter().map(|(_, desc, nf)| (*desc, *nf)).collect(),
            seen: a.distinct.then(Default::default),
            acc,
        }
    }

    /// Whether the result cannot depend on the order of the inputs, so that the rows of a
    /// group may be fed in key order rather than PostgreSQL's heap order. Not so for
    /// `string_agg` / `array_agg`, for sums of floating-point values (rounding), and for
    /// `min` / `max` of types whose equal values can print differently (`1.0` and `1.00`,
    /// `0` and `-0`, `1 day` and `24:00:00`).
    pub fn order_insensitive(a: &AggSpec) -> bool {
        let inexact = matches!(a.ty, PgType::Float4 | PgType::Float8);
        match a.func {
            AggFunc::CountStar | AggFunc::Count | AggFunc::BoolAnd | AggFunc::BoolOr => true,
            AggFunc::Min | AggFunc::Max => {
                !inexact && !matches!(a.ty, PgType::Numeric | PgType::Interval)
            }
            AggFunc::Sum | AggFunc::Avg => !inexact,
            AggFunc::StringAgg | AggFunc::ArrayAgg => false,
        }
    }

    /// One input row of `count(*)`.
    pub fn count_row(&mut self) {
        if let Acc::Count(n) = &mut self.acc {
            *n += 1;
        }
    }

    /// Whether the aggregate keeps its inputs (so that its ORDER BY matters).
    pub fn collects(f: AggFunc) -> bool {
        matches!(f, AggFunc::StringAgg | AggFunc::ArrayAgg)
    }

    /// Whether NULL inputs are fed to the aggregate: `array_agg` is not strict, its array
    /// holds them; every other aggregate skips them.
    pub fn takes_nulls(f: AggFunc) -> bool {
        f == AggFunc::ArrayAgg
    }

    /// One input, not NULL unless [`AggState::takes_nulls`] (`sep`: `string_agg`'s separator for it; `keys`: its ORDER BY
    /// values, empty without ORDER BY).
    pub fn feed(&mut self, v: Value, sep: Option<Value>, keys: Vec<Value>) -> Result<(), SqlError> {
        if let Some(seen) = &mut self.seen {
            if !seen.insert(value_key(std::slice::from_ref(&v))) {
                return Ok(());
            }
        }
        match &mut self.acc {
            Acc::Count(n) => *n += 1,
            Acc::Extreme(best) => {
                // PostgreSQL's `*_larger` / `*_smaller` keep the state only when it is strictly
                // better, so of equal inputs the later one wins (`1.0` then `1.00` gives `1.00`).
                let worse = if self.func == AggFunc::Min {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Less
                };
                match best {
                    Some(b) if compare(&v, b) == worse => {}
                    _ => *best = Some(v),
                }
            }
            Acc::Sum { sum, n } => {
                let s = std::mem::replace(sum, Value::Null);
                *sum = match (s, v) {
                    (Value::Null, v) => v,
                    // sum(bigint) is numeric in PostgreSQL: past i64 the sum goes on exactly.
                    (Value::Int(a), Value::Int(b)) => match a.checked_add(b) {
                        Some(c) => Value::Int(c),
                        None => binop(BinOp::Add, Value::Numeric(a.to_string()), Value::Int(b))?,
                    },
                    (s, v) => binop(BinOp::Add, s, v)?,
                };
                // sum(real) adds in single precision, as PostgreSQL's float4pl.
                if let (Value::Float(f), AggFunc::Sum, PgType::Float4) = (&*sum, self.func, self.ty)
                {
                    *sum = Value::Float(f64::from(*f as f32));
                }
                *n += 1;
            }
            Acc::Bools { all, any, n } => {
                let t = truthy(&v) == Some(true);
                *all &= t;
                *any |= t;
                *n += 1;
            }
            Acc::Collect {
                vals,
                seps,
                keys: ks,
            } => {
                if let Some(s) = sep {
                    seps.push(s);
                }
                vals.push(v);
                if !self.order.is_empty() {
                    ks.push(keys);
                }
            }
        }
        Ok(())
    }

    /// The aggregate's value (NULL for no input, but 0 for the counts).
    pub fn finish(self) -> Result<Value, SqlError> {
        Ok(match self.acc {
            Acc::Count(n) => Value::Int(n),
            Acc::Extreme(best) => best.unwrap_or(Value::Null),
            Acc::Sum { n: 0, .. } => Value::Null,
            Acc::Sum { sum, n } => {
                if self.func == AggFunc::Avg {
                    match sum {
                        Value::Float(f) => Value::Float(f / n as f64),
                        // PostgreSQL 15's interval_avg: the sum divided by the count.
                        Value::Interval(iv) => {
                            Value::Interval(crate::datetime::interval_scale(iv, n as f64, true)?)
                        }
                        other => {
                            let s = format_text(&other, PgType::Numeric).unwrap_or_default();
                            Value::Numeric(numeric_div(&s, &n.to_string())?)
                        }
                    }
                } else {
                    match (sum, self.ty) {
                        (Value::Int(i), PgType::Numeric) => Value::Numeric(i.to_string()),
                        (v, _) => v,
                    }
                }
            }
            Acc::Bools { n: 0, .. } => Value::Null,
            Acc::Bools { all, any, .. } => Value::Bool(if self.func == AggFunc::BoolAnd {
                all
            } else {
                any
            }),
            Acc::Collect { vals, .. } if vals.is_empty() => Value::Null,
            Acc::Collect {
                mut vals,
                mut seps,
                keys,
            } => {
                if !self.order.is_empty() {
                    // A stable sort: inputs with equal keys stay in input order.
                    let mut idx: Vec<usize> = (0..vals.len()).collect();
                    idx.sort_by(|&a, &b| {
                        self.order
                            .iter()
                            .enumerate()
                            .map(|(k, &(desc, nf))| order_cmp(&keys[a][k], &keys[b][k], desc, nf))
                            .find(|o| o.is_ne())
                            .unwrap_or(std::cmp::Ordering::Equal)
                    });
                    vals = idx.iter().map(|&i| vals[i].clone()).collect();
                    if seps.len() == idx.len() {
                        seps = idx.iter().map(|&i| seps[i].clone()).collect();
                    }
                }
                if self.func == AggFunc::ArrayAgg {
                    Value::Array(vals.into())
                } else if self.ty == PgType::Bytea {
                    let mut out = Vec::new();
                    for (i, v) in vals.iter().enumerate() {
                        if i > 0 {
                            if let Some(Value::Bytes(sep)) = seps.get(i) {
                                out.extend_from_slice(sep);
                            }
                        }
                        if let Value::Bytes(b) = v {
                            out.extend_from_slice(b);
                        }
                    }
                    Value::Bytes(out)
                } else {
                    let mut s = String::new();
                    for (i, v) in vals.iter().enumerate() {
                        if i > 0 {
                            if let Some(Value::Text(sep)) = seps.get(i) {
                                s.push_str(sep);
                            }
                        }
                        s.push_str(&format_text(v, PgType::Text).unwrap_or_default());
                    }
                    Value::text(s)
                }
            }
        })
    }
}
