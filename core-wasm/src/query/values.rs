//! Type names, ordering and operators over values.

use super::*;

/// An explicit cast's typmod (`::numeric(5,2)`, `::varchar(3)`, `::char(3)`, `::time(0)`):
/// rounds, truncates or pads (`pad`: char(n)), element by element for an array.
pub(super) fn apply_typmod(v: &Value, m: i64, pad: bool) -> Result<Value, SqlError> {
    Ok(match v {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|x| apply_typmod(x, m, pad))
                .collect::<Result<Vec<_>, _>>()?
                .into(),
        ),
        Value::Numeric(s) => Value::Numeric(crate::types::numeric_typmod(
            s,
            i32::try_from(m).unwrap_or(-1),
        )?),
        Value::Text(s) => {
            let n = usize::try_from(m - 4).unwrap_or(0);
            match s.char_indices().nth(n) {
                Some((cut, _)) => Value::text(&s[..cut]),
                None if pad => {
                    let len = s.chars().count();
                    Value::text(format!("{s}{}", " ".repeat(n - len)))
                }
                None => Value::Text(s.clone()),
            }
        }
        Value::Timestamp(_) | Value::Time(_) => crate::datetime::round_to_precision(v.clone(), m),
        other => other.clone(),
    })
}

/// `format_type(oid, typmod)` as PostgreSQL prints it, under the session's
/// `quote_all_identifiers` (which quotes the types printed by their name: `"text"`, `"uuid"`,
/// `"text"[]`, but not `integer` or `character varying(3)`, which PostgreSQL spells as SQL's
/// keywords).
pub fn format_type(t: PgType, typmod: i32) -> String {
    let plain = format_type_plain(t, typmod);
    if crate::pgcatalog::quote_all() {
        quote_type_name(&plain)
    } else {
        plain
    }
}

/// A type's name as [`format_type_plain`] writes it, quoted as `quote_all_identifiers` quotes
/// it: a name PostgreSQL prints through `quote_identifier` (one lower-case word), its array
/// brackets kept outside.
pub(crate) fn quote_type_name(plain: &str) -> String {
    let base = plain.trim_end_matches("[]");
    let brackets = &plain[base.len()..];
    // format_type_extended's special cases: SQL's spellings, never quoted (the first words
    // of the spellings with more than one: a default's text is quoted word by word).
    const KEYWORD_SPELLINGS: &[&str] = &[
        "bit",
        "boolean",
        "character",
        "real",
        "double",
        "smallint",
        "integer",
        "bigint",
        "numeric",
        "interval",
        "time",
        "timestamp",
    ];
    let plain_word = base
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if base.is_empty() || !plain_word || KEYWORD_SPELLINGS.contains(&base) {
        plain.to_string()
    } else {
        format!("\"{base}\"{brackets}")
    }
}

/// [`format_type`] regardless of `quote_all_identifiers`: for text RockLake stores or parses
/// again itself.
pub fn format_type_plain(t: PgType, typmod: i32) -> String {
    if let (Some(elem), true) = (t.element(), typmod >= 0) {
        if !t.is_vector() {
            return format!("{}[]", format_type_plain(elem, typmod));
        }
    }
    match (t, typmod) {
        (PgType::Varchar, m) if m >= 4 => format!("character varying({})", m - 4),
        (PgType::Bpchar, m) if m >= 4 => format!("character({})", m - 4),
        (PgType::Numeric, m) if m >= 4 => {
            let (p, s) = crate::types::numeric_precision_scale(m);
            format!("numeric({p},{s})")
        }
        (PgType::Timestamp, p) if p >= 0 => format!("timestamp({p}) without time zone"),
        (PgType::Timestamptz, p) if p >= 0 => format!("timestamp({p}) with time zone"),
        (PgType::Time, p) if p >= 0 => format!("time({p}) without time zone"),
        _ => t.sql_name().to_string(),
    }
}

/// A column or constant operand, by reference.
pub(super) fn peek<'v>(e: &'v BExpr, env: &'v Env<'_>) -> Option<&'v Value> {
    match e {
        BExpr::Const(v) => Some(v),
        BExpr::Col(i) => env.row.get(*i),
        _ => None,
    }
}

/// Two values in the order of one ORDER BY key.
pub(crate) fn order_cmp(x: &Value, y: &Value, desc: bool, nulls_first: bool) -> std::cmp::Ordering {
    use std::cmp::Ordering as O;
    match (x.is_null(), y.is_null()) {
        (true, true) => O::Equal,
        (true, false) => {
            if nulls_first {
                O::Less
            } else {
                O::Greater
            }
        }
        (false, true) => {
            if nulls_first {
                O::Greater
            } else {
                O::Less
            }
        }
        _ => {
            let o = compare(x, y);
            if desc {
                o.reverse()
            } else {
                o
            }
        }
    }
}

/// A comparison with SQL's NULL rule.
pub(super) fn compare_op(op: BinOp, a: &Value, b: &Value) -> Value {
    use std::cmp::Ordering as O;
    if a.is_null() || b.is_null() {
        return Value::Null;
    }
    let o = compare(a, b);
    Value::Bool(match op {
        BinOp::Eq => o == O::Equal,
        BinOp::NotEq => o != O::Equal,
        BinOp::Lt => o == O::Less,
        BinOp::LtEq => o != O::Greater,
        BinOp::Gt => o == O::Greater,
        BinOp::GtEq => o != O::Less,
        _ => false,
    })
}

pub fn binop(op: BinOp, a: Value, b: Value) -> Result<Value, SqlError> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    Ok(match op {
        BinOp::Eq | BinOp::NotEq | BinOp::Lt | BinOp::LtEq | BinOp::Gt | BinOp::GtEq => {
            compare_op(op, &a, &b)
        }
        BinOp::Concat => {
            let s = format!(
                "{}{}",
                format_text(&a, PgType::Text).unwrap_or_default(),
                format_text(&b, PgType::Text).unwrap_or_default()
            );
            Value::text(s)
        }
        _ => match (a, b) {
            // Integers of every width compute in i64; narrower results are range-checked by
            // the cast the binder puts around them.
            (Value::Int(x), Value::Int(y)) => {
                Value::Int(match op {
                    BinOp::Add => x.checked_add(y).ok_or(BIGINT_OUT_OF_RANGE)?,
                    BinOp::Sub => x.checked_sub(y).ok_or(BIGINT_OUT_OF_RANGE)?,
                    BinOp::Mul => x.checked_mul(y).ok_or(BIGINT_OUT_OF_RANGE)?,
                    BinOp::Div => {
                        if y == 0 {
                            return Err(SqlError::DivisionByZero);
                        }
                        x.checked_div(y).ok_or(BIGINT_OUT_OF_RANGE)?
                    }
                    BinOp::Mod => {
                        if y == 0 {
                            return Err(SqlError::DivisionByZero);
                        }
                        // i64::MIN % -1 is 0 in PostgreSQL, an overflow in Rust.
                        x.checked_rem(y).unwrap_or(0)
                    }
                    _ => return Err(SqlError::internal("integer operator")),
                })
            }
            (Value::Numeric(x), Value::Numeric(y)) if matches!(op, BinOp::Add | BinOp::Sub) => {
                Value::Numeric(numeric_add(&x, &y, op == BinOp::Sub)?)
            }
            (Value::Numeric(x), Value::Int(y)) if matches!(op, BinOp::Add | BinOp::Sub) => {
                Value::Numeric(numeric_add(&x, &y.to_string(), op == BinOp::Sub)?)
            }
            (Value::Int(x), Value::Numeric(y)) if matches!(op, BinOp::Add | BinOp::Sub) => {
                Value::Numeric(numeric_add(&x.to_string(), &y, op == BinOp::Sub)?)
            }
            // Numeric division, multiplication and modulo are exact, at PostgreSQL's result
            // scales.
            (x @ (Value::Numeric(_) | Value::Int(_)), y @ (Value::Numeric(_) | Value::Int(_)))
                if matches!(op, BinOp::Div | BinOp::Mul | BinOp::Mod) =>
            {
                let text = |v: &Value| match v {
                    Value::Int(i) => i.to_string(),
                    Value::Numeric(s) => s.clone(),
                    _ => String::new(),
                };
                let (a, b) = (text(&x), text(&y));
                let exact = match op {
                    BinOp::Div => return Ok(Value::Numeric(numeric_div(&a, &b)?)),
                    BinOp::Mod => {
                        // NaN % 0 is NaN; any other number modulo zero is an error.
                        if compare(&y, &Value::Int(0)).is_eq() && a != "NaN" {
                            return Err(SqlError::DivisionByZero);
                        }
                        numeric_mod(&a, &b)?
                    }
                    _ => numeric_mul(&a, &b)?,
                };
                match exact {
                    Some(p) => Value::Numeric(p),
                    // NaN and ±Infinity: IEEE's rules.
                    None => {
                        let (fa, fb) = (
                            a.parse::<f64>().unwrap_or(f64::NAN),
                            b.parse::<f64>().unwrap_or(f64::NAN),
                        );
                        let f = if op == BinOp::Mod { fa % fb } else { fa * fb };
                        Value::Numeric(crate::numeric::from_f64(f))
                    }
                }
            }
            // Date/time operators; the binder converted the operands to their types.
            (
                x @ (Value::Date(_) | Value::Timestamp(_) | Value::Interval(_) | Value::Time(_)),
                y,
            )
            | (
                x,
                y @ (Value::Date(_) | Value::Timestamp(_) | Value::Interval(_) | Value::Time(_)),
            ) => crate::datetime::eval_operator(op.arithmetic_symbol(), x, y)?,
            (x, y) => {
                let fx =
                    to_f64(&x).ok_or_else(|| SqlError::feature("arithmetic on these types"))?;
                let fy =
                    to_f64(&y).ok_or_else(|| SqlError::feature("arithmetic on these types"))?;
                let numeric = matches!(x, Value::Numeric(_)) || matches!(y, Value::Numeric(_));
                let r = match op {
                    BinOp::Add => fx + fy,
                    BinOp::Sub => fx - fy,
                    BinOp::Mul => fx * fy,
                    BinOp::Div => {
                        if fy == 0.0 {
                            return Err(SqlError::DivisionByZero);
                        }
                        fx / fy
                    }
                    BinOp::Mod => fx % fy,
                    _ => return Err(SqlError::internal("operator")),
                };
                if numeric && !matches!(x, Value::Float(_)) && !matches!(y, Value::Float(_)) {
                    Value::Numeric(crate::numeric::from_f64(r))
                } else {
                    // PostgreSQL's float8 operators: an infinity from finite operands is an
                    // overflow, a zero from a product or quotient of non-zero ones an
                    // underflow.
                    let range = |m: &str| SqlError::MathDomain {
                        code: "22003",
                        message: format!("value out of range: {m}"),
                    };
                    if r.is_infinite() && fx.is_finite() && fy.is_finite() {
                        return Err(range("overflow"));
                    }
                    let underflow = match op {
                        BinOp::Mul => fx != 0.0 && fy != 0.0,
                        BinOp::Div => fx != 0.0 && fy.is_finite(),
                        _ => false,
                    };
                    if r == 0.0 && underflow {
                        return Err(range("underflow"));
                    }
                    Value::Float(r)
                }
            }
        },
    })
}

pub(super) fn to_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        Value::Numeric(s) => s.parse().ok(),
        _ => None,
    }
}

/// Binds and checks a standalone expression over a table's columns (DEFAULTs, UPDATE SET).
pub fn table_scope(t: &Table, qual: &str) -> Scope {
    let qual: Rc<str> = qual.into();
    let mut cols: Vec<ColMeta> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| ColMeta {
            name: c.name.clone().into(),
            ty: c.ty,
            typmod: c.typmod,
            table_oid: t.oid,
            attnum: i as i16 + 1,
            qual: Some(qual.clone()),
            hidden: false,
        })
        .collect();
    cols.push(ColMeta {
        name: "ctid".into(),
        ty: PgType::Tid,
        typmod: -1,
        table_oid: t.oid,
        attnum: -1,
        qual: Some(qual),
        hidden: true,
    });
    Scope {
        cols,
        ..Scope::default()
    }
}

pub fn arc_table(t: &TableRef) -> Arc<Table> {
    t.clone()
}
