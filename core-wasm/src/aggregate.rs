//! Aggregate functions fed one input at a time, so a grouped query keeps per group only its
//! aggregates' running state instead of every row (`query::Executor::stream_groups`), and the
//! grouping of materialised rows (joins) computes the same values the same way.

use crate::error::SqlError;
use crate::numeric::{numeric_add, numeric_div, numeric_div_scale, numeric_mul, numeric_sqrt_at};
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
    /// `json_agg` of arrays or records: PostgreSQL starts each value after the first on a line
    /// of its own.
    structured: bool,
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
    /// `var_*` / `stddev_*`: the inputs counted, and over integers and numerics their exact
    /// sum and sum of squares (PostgreSQL's numeric accumulators, `None` after a NaN); over
    /// floating-point inputs Youngs–Cramer's sum and sum of squared differences, as
    /// PostgreSQL's `float8_accum` computes them.
    Moments {
        n: i64,
        exact: Option<(String, String)>,
        float: Option<(f64, f64)>,
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
            AggFunc::StringAgg | AggFunc::ArrayAgg | AggFunc::JsonAgg | AggFunc::JsonObjectAgg => {
                Acc::Collect {
                    vals: Vec::new(),
                    seps: Vec::new(),
                    keys: Vec::new(),
                }
            }
            AggFunc::VarSamp | AggFunc::VarPop | AggFunc::StddevSamp | AggFunc::StddevPop => {
                Acc::Moments {
                    n: 0,
                    exact: Some(("0".into(), "0".into())),
                    float: None,
                }
            }
        };
        AggState {
            func: a.func,
            ty: a.ty,
            order: a.order.iter().map(|(_, desc, nf)| (*desc, *nf)).collect(),
            seen: a.distinct.then(Default::default),
            structured: a.func == AggFunc::JsonAgg && structured_json_input(a.args.first()),
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
            AggFunc::StringAgg | AggFunc::ArrayAgg | AggFunc::JsonAgg | AggFunc::JsonObjectAgg => {
                false
            }
            AggFunc::VarSamp | AggFunc::VarPop | AggFunc::StddevSamp | AggFunc::StddevPop => {
                !inexact
            }
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
        matches!(
            f,
            AggFunc::StringAgg | AggFunc::ArrayAgg | AggFunc::JsonAgg | AggFunc::JsonObjectAgg
        )
    }

    /// Whether NULL inputs are fed to the aggregate: `array_agg` and `json_agg` are not
    /// strict, their arrays hold them; `json_object_agg` refuses a NULL key; every other
    /// aggregate skips them.
    pub fn takes_nulls(f: AggFunc) -> bool {
        matches!(
            f,
            AggFunc::ArrayAgg | AggFunc::JsonAgg | AggFunc::JsonObjectAgg
        )
    }

    /// One input, not NULL unless [`AggState::takes_nulls`] (`sep`: `string_agg`'s separator for it; `keys`: its ORDER BY
    /// values, empty without ORDER BY).
    pub fn feed(&mut self, v: Value, sep: Option<Value>, keys: Vec<Value>) -> Result<(), SqlError> {
        if self.func == AggFunc::JsonObjectAgg && v.is_null() {
            return Err(SqlError::InvalidParameter {
                message: "field name must not be null".into(),
            });
        }
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
            Acc::Moments { n, exact, float } => {
                *n += 1;
                match v {
                    Value::Float(x) => {
                        let (sx, sxx) = float.get_or_insert((0.0, 0.0));
                        feed_float_moments(sx, sxx, *n as f64, x)?;
                    }
                    Value::Numeric(ref s) if !is_plain_number(s) => *exact = None,
                    v => {
                        if let Some((sum, squares)) = exact {
                            let x = format_text(&v, PgType::Numeric).unwrap_or_default();
                            let square = numeric_mul(&x, &x)?.unwrap_or_default();
                            *sum = numeric_add(sum, &x, false)?;
                            *squares = numeric_add(squares, &square, false)?;
                        }
                    }
                }
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
            Acc::Moments { n, exact, float } => {
                let sample = matches!(self.func, AggFunc::VarSamp | AggFunc::StddevSamp);
                let root = matches!(self.func, AggFunc::StddevSamp | AggFunc::StddevPop);
                if n == 0 || sample && n == 1 {
                    return Ok(Value::Null);
                }
                match (float, exact) {
                    (Some((_, sxx)), _) => {
                        let var = sxx / if sample { n as f64 - 1.0 } else { n as f64 };
                        Value::Float(if root { var.sqrt() } else { var })
                    }
                    (None, None) => Value::Numeric("NaN".into()),
                    (None, Some((sum, squares))) => {
                        Value::Numeric(exact_moment(n, &sum, &squares, sample, root)?)
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
                } else if let Some(json) = json_aggregate(self.func, &vals, &seps, self.structured)
                {
                    json
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

/// `json_agg`'s array (`[1, 2]`) or `json_object_agg`'s object (`{ "k" : 1 }`) of the
/// collected values (already JSON; NULL is `null`) and keys, spaced as PostgreSQL's; `None`
/// for the other aggregates.
fn json_aggregate(
    func: AggFunc,
    vals: &[Value],
    keys: &[Value],
    structured: bool,
) -> Option<Value> {
    let json = |v: Option<&Value>| match v {
        Some(Value::Text(t)) => t.to_string(),
        _ => "null".to_string(),
    };
    let mut out = String::new();
    match func {
        AggFunc::JsonAgg => {
            out.push('[');
            for (i, v) in vals.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                    // An array's or a record's JSON, not NULL, starts a line.
                    if structured && !v.is_null() {
                        out.push_str("\n ");
                    }
                }
                out.push_str(&json(Some(v)));
            }
            out.push(']');
        }
        AggFunc::JsonObjectAgg => {
            out.push_str("{ ");
            for (i, k) in vals.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                // A key is always a string: a number's JSON is quoted.
                let k = json(Some(k));
                if k.starts_with('"') {
                    out.push_str(&k);
                } else {
                    crate::json::quote(&k, &mut out);
                }
                out.push_str(" : ");
                out.push_str(&json(keys.get(i)));
            }
            out.push_str(" }");
        }
        _ => return None,
    }
    Some(Value::text(out))
}

/// Whether `json_agg`'s argument (`to_json` of a value, with its type beside it) is of an
/// array or record type.
fn structured_json_input(arg: Option<&crate::query::BExpr>) -> bool {
    use crate::query::BExpr;
    match arg {
        Some(BExpr::Func(name, args)) if name == "json_fn:to_json" => match args.get(1) {
            Some(BExpr::Const(slot)) => {
                let ty = crate::query::json_slot_type(slot);
                ty.is_array() || matches!(ty, PgType::Record(_))
            }
            _ => false,
        },
        _ => false,
    }
}

/// A number with digits (not NaN or ±Infinity).
fn is_plain_number(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-')
}

/// One input of a float variance, as PostgreSQL's `float8_accum` (Youngs–Cramer): `n` counts
/// it already. Finite inputs whose sums overflow are 22003; an infinite or NaN input makes the
/// result NaN.
fn feed_float_moments(sx: &mut f64, sxx: &mut f64, n: f64, x: f64) -> Result<(), SqlError> {
    let before = *sx;
    *sx += x;
    if n > 1.0 {
        let tmp = x * n - *sx;
        *sxx += tmp * tmp / (n * (n - 1.0));
        if sx.is_infinite() || sxx.is_infinite() {
            if !before.is_infinite() && !x.is_infinite() {
                return Err(SqlError::MathDomain {
                    code: "22003",
                    message: "value out of range: overflow".into(),
                });
            }
            *sxx = f64::NAN;
        }
    } else if !x.is_finite() {
        *sxx = f64::NAN;
    }
    Ok(())
}

/// PostgreSQL's `numeric_stddev_internal`: (n·Σx² − (Σx)²) / (n·(n−1)) (or n² for the
/// population), exact up to the division, which is at PostgreSQL's division scale; the root
/// at that scale too. Rounding below zero gives 0.
fn exact_moment(
    n: i64,
    sum: &str,
    squares: &str,
    sample: bool,
    root: bool,
) -> Result<String, SqlError> {
    let count = n.to_string();
    let n_squares = numeric_mul(&count, squares)?.unwrap_or_default();
    let sum_squared = numeric_mul(sum, sum)?.unwrap_or_default();
    let numerator = numeric_add(&n_squares, &sum_squared, true)?;
    if numerator.starts_with('-') || numerator.bytes().all(|b| b == b'0' || b == b'.') {
        return Ok("0".into());
    }
    let n = i128::from(n);
    let denominator = if sample { n * (n - 1) } else { n * n }.to_string();
    let var = numeric_div(&numerator, &denominator)?;
    if root {
        numeric_sqrt_at(&var, numeric_div_scale(&numerator, &denominator))
    } else {
        Ok(var)
    }
}

/// The final function of an ordered-set aggregate (`query::Binder::bind_ordered_set`):
/// `args` are its direct argument (none for `mode`) and the group's non-null sort keys in
/// order (NULL for none), as PostgreSQL's `percentile_cont_final` … `mode_final` compute.
pub fn ordered_set_final(name: &str, args: &[Value]) -> Result<Value, SqlError> {
    let sorted = |v: &Value| -> Option<std::sync::Arc<[Value]>> {
        match v {
            Value::Array(items) if !items.is_empty() => Some(items.clone()),
            _ => None,
        }
    };
    let cont = name.ends_with("percentile_cont");
    match args {
        [values] => Ok(sorted(values).map_or(Value::Null, |vals| mode_of(&vals))),
        // One fraction: checked even when the group has no rows.
        [fraction @ (Value::Float(_) | Value::Null), values] => {
            let Value::Float(p) = fraction else {
                return Ok(Value::Null);
            };
            check_fraction(*p)?;
            Ok(match sorted(values) {
                Some(vals) => percentile(&vals, *p, cont),
                None => Value::Null,
            })
        }
        // An array of fractions: a group without rows is NULL before any is checked.
        [Value::Array(fractions), values] => {
            let Some(vals) = sorted(values) else {
                return Ok(Value::Null);
            };
            let mut out = Vec::with_capacity(fractions.len());
            for f in fractions.iter() {
                out.push(match f {
                    Value::Float(p) => {
                        check_fraction(*p)?;
                        percentile(&vals, *p, cont)
                    }
                    _ => Value::Null,
                });
            }
            Ok(Value::Array(out.into()))
        }
        _ => Err(SqlError::internal(format!(
            "{name} got {} arguments",
            args.len()
        ))),
    }
}

fn check_fraction(p: f64) -> Result<(), SqlError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(SqlError::ArgumentOutOfRange {
            message: format!("percentile value {} is not between 0 and 1", format_g(p)),
        })
    }
}

/// The value at fraction `p` of `vals` (at least one): interpolated between the two nearest
/// (`cont`, over float8), or the first whose cumulative share reaches `p`.
fn percentile(vals: &[Value], p: f64, cont: bool) -> Value {
    let n = vals.len();
    if !cont {
        // Row ceil(p · n), counted from 1; the first row for p = 0.
        let row = (p * n as f64).ceil() as usize;
        return vals[row.clamp(1, n) - 1].clone();
    }
    let pos = p * (n - 1) as f64;
    let (lo, hi) = (pos.floor(), pos.ceil());
    let at = |i: f64| match vals.get(i as usize) {
        Some(Value::Float(x)) => *x,
        _ => f64::NAN,
    };
    let first = at(lo);
    if lo == hi {
        return Value::Float(first);
    }
    Value::Float(first + (at(hi) - first) * (pos - lo))
}

/// The most frequent of `vals` (sorted): the first in their order among equally frequent.
fn mode_of(vals: &[Value]) -> Value {
    let (mut best, mut best_n) = (0, 0);
    let mut start = 0;
    for i in 1..=vals.len() {
        let run_ends = i == vals.len()
            || order_cmp(&vals[i], &vals[start], false, false) != std::cmp::Ordering::Equal;
        if run_ends {
            if i - start > best_n {
                (best, best_n) = (start, i - start);
            }
            start = i;
        }
    }
    vals.get(best).cloned().unwrap_or(Value::Null)
}

/// C's `%g`: six significant digits, trailing zeros dropped, an exponent outside 1e-4 … 1e6.
fn format_g(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    let exp = x.abs().log10().floor() as i32;
    if (-4..6).contains(&exp) {
        let decimals = usize::try_from(5 - exp).unwrap_or(0);
        trim(format!("{x:.decimals$}"))
    } else {
        let s = format!("{x:.5e}");
        let (mantissa, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        format!(
            "{}e{}{:02}",
            trim(mantissa.to_string()),
            if e < 0 { '-' } else { '+' },
            e.abs()
        )
    }
}
