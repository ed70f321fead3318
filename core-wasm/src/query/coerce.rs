//! Type resolution and coercion: common types, assignment and explicit casts.

use super::*;

/// The type two timestamp-like arguments resolve to (`generate_series`, `age`, `date_bin`):
/// timestamp when one is and the other converts to it (a date, an untyped literal), else
/// timestamptz, PostgreSQL's preferred type of the category.
pub(super) fn moment_pair_type(a: PgType, b: PgType) -> PgType {
    use PgType::{Date, Timestamp, Timestamptz, Unknown};
    let local = [a, b]
        .iter()
        .all(|t| matches!(t, Timestamp | Date | Unknown))
        && [a, b].contains(&Timestamp);
    if local {
        Timestamp
    } else {
        Timestamptz
    }
}

/// Whether PostgreSQL has an `=` operator taking the two types as they are.
pub(super) fn cross_type_equality(a: PgType, b: PgType) -> bool {
    use PgType::{Date, Float4, Float8, Int2, Int4, Int8, Timestamp, Timestamptz};
    let family = |t| match t {
        Int2 | Int4 | Int8 => 1,
        Float4 | Float8 => 2,
        Date | Timestamp | Timestamptz => 3,
        _ => 0,
    };
    family(a) != 0 && family(a) == family(b)
}

/// The type of UNION, CASE, COALESCE, GREATEST and LEAST (`what`) over its inputs' types, as
/// PostgreSQL's `select_common_type`: Unknown if all are untyped, an error when two belong to
/// different categories.
pub(super) fn resolve_common(
    what: &str,
    types: impl Iterator<Item = PgType>,
) -> Result<PgType, SqlError> {
    let mut t = PgType::Unknown;
    for n in types {
        if t != PgType::Unknown && n != PgType::Unknown && category(t) != category(n) {
            return Err(SqlError::DatatypeMismatch {
                message: format!(
                    "{what} types {} and {} cannot be matched",
                    t.sql_name(),
                    n.sql_name()
                ),
                hint: None,
            });
        }
        t = select_common(t, n);
    }
    Ok(t)
}

/// The common type of two types as `select_common_type` picks it (UNION, VALUES, CASE,
/// COALESCE, ARRAY[…]): [`common_type`], except that integers and numeric convert to real
/// implicitly and real to numeric only by assignment, so real wins there (arithmetic resolves
/// `real + numeric` to double precision instead).
pub(super) fn select_common(a: PgType, b: PgType) -> PgType {
    match (a, b) {
        (PgType::Float4, x) | (x, PgType::Float4) if x.is_integer() || x == PgType::Numeric => {
            PgType::Float4
        }
        _ => common_type(a, b),
    }
}

/// PostgreSQL has no operator between values of two type categories (`text = bigint`): an
/// error telling the client to cast, unless one side is an untyped literal.
pub(super) fn operator_exists(a: PgType, op: &str, b: PgType) -> Result<(), SqlError> {
    let missing = || {
        no_such_operator(format!(
            "{} {} {}",
            a.sql_name(),
            if op == "!=" { "<>" } else { op },
            b.sql_name()
        ))
    };
    // json has no comparison operators at all (PostgreSQL compares jsonb, not json).
    if a == PgType::Json || b == PgType::Json {
        return Err(missing());
    }
    match (a, b) {
        (PgType::Record(_), PgType::Record(_)) => {
            return Err(SqlError::feature("comparing records"))
        }
        (PgType::Record(_), _) | (_, PgType::Record(_)) => return Err(missing()),
        _ => {}
    }
    if a == PgType::Xid || b == PgType::Xid {
        // xid has `=` and `<>`, against xid and against integer, and nothing else.
        let other = if a == PgType::Xid { b } else { a };
        if matches!(op, "=" | "<>" | "!=")
            && matches!(
                other,
                PgType::Xid | PgType::Int4 | PgType::Int2 | PgType::Unknown
            )
        {
            return Ok(());
        }
        return Err(missing());
    }
    if a == PgType::Unknown || b == PgType::Unknown || category(a) == category(b) {
        return Ok(());
    }
    Err(missing())
}

/// A grouping key: PostgreSQL has no equality operator for json.
pub(super) fn equatable((e, ty): (BExpr, PgType)) -> Result<BExpr, SqlError> {
    has_equality(ty)?;
    Ok(e)
}

/// Whether values of `ty` can be compared for DISTINCT, GROUP BY and set operations.
pub(super) fn has_equality(ty: PgType) -> Result<(), SqlError> {
    if ty == PgType::Json {
        return Err(SqlError::UndefinedFunction {
            message: "could not identify an equality operator for type json".into(),
            hint: None,
        });
    }
    Ok(())
}

/// The array type with elements of `elem` (text[] holds the elements' text when RockLake
/// has no array of that type), or 0A000 for json, whose elements text[] would quote.
pub(super) fn array_type_of(elem: PgType) -> Result<PgType, SqlError> {
    match elem {
        PgType::Json => Err(SqlError::feature("arrays of json (json[])")),
        PgType::Record(_) => Err(SqlError::feature("arrays of records (record[])")),
        _ => Ok(elem.array_or_text()),
    }
}

/// Whether values of type `ty` can be sorted: PostgreSQL has no ordering operator for xid.
pub(super) fn orderable(ty: PgType) -> Result<(), SqlError> {
    if matches!(ty, PgType::Xid | PgType::Json) {
        return Err(SqlError::UndefinedFunction {
            message: format!(
                "could not identify an ordering operator for type {}",
                ty.sql_name()
            ),
            hint: Some("Use an explicit ordering operator or modify the query.".into()),
        });
    }
    Ok(())
}

/// A frame offset written as an integer literal (`3 PRECEDING`, `-1 FOLLOWING`).
pub(super) fn literal_offset(e: &Expr) -> Option<i64> {
    match e {
        Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => literal_offset(expr).map(|n| -n),
        Expr::Nested(x) => literal_offset(x),
        _ => None,
    }
}

/// A strict operator with a NULL constant operand is NULL without evaluating the other, as
/// PostgreSQL's planner simplifies it (an error the other operand would raise never comes).
pub(super) fn strict_null(bin: BExpr) -> BExpr {
    match &bin {
        BExpr::Bin(_, l, r)
            if matches!(**l, BExpr::Const(Value::Null))
                || matches!(**r, BExpr::Const(Value::Null)) =>
        {
            BExpr::Const(Value::Null)
        }
        _ => bin,
    }
}

pub(super) fn is_datetime(t: PgType) -> bool {
    matches!(
        t,
        PgType::Date | PgType::Timestamp | PgType::Timestamptz | PgType::Interval | PgType::Time
    )
}

/// An operand of type `from` where the expression's resolved type is `to`: untyped literals
/// take `to` ([`coerce_expr`]), and a date facing a timestamp type is converted to it (the
/// one implicit conversion whose values differ in representation).
/// [`coerce_to`] for a value that is output as the resolved type (a CASE or COALESCE result,
/// lag's default): an integer or numeric widened to `numeric` or a float is converted, so
/// that equal results are equal values (`5` and `5.0` in one DISTINCT or GROUP BY).
pub(super) fn coerce_result(e: BExpr, from: PgType, to: PgType) -> Result<BExpr, SqlError> {
    let widened = from != to
        && from.is_numeric_family()
        && matches!(to, PgType::Numeric | PgType::Float4 | PgType::Float8);
    match e {
        e @ (BExpr::Const(_) | BExpr::Param(..)) => coerce_to(e, from, to),
        e if widened => Ok(BExpr::Cast(Box::new(e), to)),
        e => coerce_to(e, from, to),
    }
}

pub(super) fn coerce_to(e: BExpr, from: PgType, to: PgType) -> Result<BExpr, SqlError> {
    if let Some(trimmed) = char_to_text(&e, from, to) {
        return Ok(trimmed);
    }
    if through_zone(from, to) {
        zone_convert(e, from, to)
    } else if from == PgType::Date && to == PgType::Timestamp {
        coerce_or_cast(e, to)
    } else {
        coerce_expr(e, to)
    }
}

/// The type operands of types `types` compare as, given their common type `t`: `char(n)`
/// facing text (or name) compares as text (PostgreSQL resolves `bpchar = text` to text's
/// operator, the padding cast away), facing varchar as `char(n)` (`bpchar = varchar` is
/// bpchar's operator, varchar converted to it).
pub(super) fn comparison_type(t: PgType, types: &[PgType]) -> PgType {
    if !t.is_string() || !types.contains(&PgType::Bpchar) {
        return t;
    }
    if types
        .iter()
        .any(|x| matches!(x, PgType::Text | PgType::Name))
    {
        PgType::Text
    } else {
        PgType::Bpchar
    }
}

/// An operand of a comparison of type `t` ([`comparison_type`]): converted to it, and as
/// `char(n)` without its padding (PostgreSQL's `bpchar` operators ignore trailing spaces).
pub(super) fn compared(e: BExpr, from: PgType, t: PgType) -> Result<BExpr, SqlError> {
    let e = coerce_to(e, from, t)?;
    Ok(match e {
        BExpr::Const(Value::Text(s)) if t == PgType::Bpchar => {
            BExpr::Const(Value::text(s.trim_end_matches(' ')))
        }
        e if t == PgType::Bpchar => BExpr::Func("bpchar_text".into(), vec![e]),
        e => e,
    })
}

/// `char(n)` to text, varchar or name: PostgreSQL's `rtrim` of the padding (so `'ab'::char(3)`
/// equals `'ab'::text`).
pub(super) fn char_to_text(e: &BExpr, from: PgType, to: PgType) -> Option<BExpr> {
    drops_char_padding(from, to).then(|| BExpr::Func("bpchar_text".into(), vec![e.clone()]))
}

/// Whether converting `from` to `to` casts `char(n)`'s padding away (into a text type).
pub(super) fn drops_char_padding(from: PgType, to: PgType) -> bool {
    from == PgType::Bpchar && matches!(to, PgType::Text | PgType::Varchar | PgType::Name)
}

/// An expression of type `from` stored into a column of type `to` (INSERT, UPDATE SET, a
/// default): PostgreSQL's assignment conversion, through the session's zone between the
/// timestamp types and date.
pub fn assignment(e: BExpr, from: PgType, to: PgType) -> Result<BExpr, SqlError> {
    if let Some(trimmed) = char_to_text(&e, from, to) {
        return Ok(trimmed);
    }
    if through_zone(from, to) {
        zone_convert(e, from, to)
    } else {
        coerce_expr(e, to)
    }
}

/// [`assignment`] of a computed value (a row of `INSERT … SELECT`).
pub fn assign_value(v: Value, from: PgType, to: PgType) -> Result<Value, SqlError> {
    if let (Value::Text(s), true) = (&v, drops_char_padding(from, to)) {
        // char(n) into a text type: without its padding.
        return Ok(Value::text(s.trim_end_matches(' ')));
    }
    if !through_zone(from, to) {
        return Ok(v);
    }
    match zone_convert(BExpr::Const(v), from, to)? {
        BExpr::Const(v) => Ok(v),
        _ => Err(SqlError::internal("zone conversion of a constant")),
    }
}

/// Whether converting `from` to `to` reads the session's time zone: between a timestamptz
/// and a local type (timestamp, date, time).
pub(super) fn through_zone(from: PgType, to: PgType) -> bool {
    use PgType::{Date, Time, Timestamp, Timestamptz};
    matches!(
        (from, to),
        (Timestamp | Date, Timestamptz) | (Timestamptz, Timestamp | Date | Time)
    )
}

/// A conversion [`through_zone`]: a timestamptz is UTC, the others local time in the
/// session's zone (`timestamp2timestamptz`, `timestamptz_timestamp`, `timestamptz_date`, …).
/// Constants convert now.
pub(super) fn zone_convert(e: BExpr, from: PgType, to: PgType) -> Result<BExpr, SqlError> {
    let local = if from == PgType::Date {
        coerce_or_cast(e, PgType::Timestamp)?
    } else {
        e
    };
    let func = if to == PgType::Timestamptz {
        "timestamptz_from_local"
    } else {
        "timestamptz_to_local"
    };
    let converted = match local {
        BExpr::Const(v) => BExpr::Const(eval_zone_conversion(func, &v)),
        other => BExpr::Func(func.into(), vec![other]),
    };
    match to {
        PgType::Date | PgType::Time => coerce_or_cast(converted, to),
        _ => Ok(converted),
    }
}

/// The conversions [`zone_convert`] binds, in the session's zone.
pub(super) fn eval_zone_conversion(func: &str, v: &Value) -> Value {
    match v {
        Value::Timestamp(t) if func == "timestamptz_from_local" => {
            Value::Timestamp(crate::tz::session().to_utc(*t))
        }
        Value::Timestamp(t) => Value::Timestamp(crate::tz::session().to_local(*t)),
        _ => Value::Null,
    }
}

/// The type a call of `name` with one argument converts to, when `name` is a type's own name
/// (`pg_type.typname`) PostgreSQL accepts as a function-style cast. (`numeric`, `varchar`,
/// `time`, `timestamp` and `interval` are keywords there: `numeric(5)` is a type, a syntax
/// error in an expression; they stay unknown functions here.)
pub(super) fn function_style_cast(name: &str) -> Option<PgType> {
    const NAMES: &[&str] = &[
        "bool",
        "int2",
        "int4",
        "int8",
        "float4",
        "float8",
        "text",
        "bpchar",
        "name",
        "bytea",
        "uuid",
        "timestamptz",
        "date",
        "oid",
        "inet",
    ];
    NAMES
        .contains(&name)
        .then(|| PgType::from_typname(name))
        .flatten()
}

/// An explicit conversion from `from` to `to`: as [`coerce_or_cast`], except that a
/// `timestamp without time zone` becomes text without the `+00` a timestamptz shows (the two
/// share one value representation).
pub(super) fn cast_from(e: BExpr, from: PgType, to: PgType) -> Result<BExpr, SqlError> {
    if let Some(trimmed) = char_to_text(&e, from, to) {
        return Ok(trimmed);
    }
    // json converts from and to the string types only (through its text).
    if (from == PgType::Json) != (to == PgType::Json) {
        let other = if from == PgType::Json { to } else { from };
        if !other.is_string() {
            return Err(SqlError::CannotCast {
                from: from.sql_name().into(),
                to: to.sql_name().into(),
            });
        }
    }
    if let PgType::Record(fields) = from {
        if !to.is_string() {
            return Err(SqlError::CannotCast {
                from: from.sql_name().into(),
                to: to.sql_name().into(),
            });
        }
        let oids = fields
            .iter()
            .map(|(_, t)| Value::Int(t.oid().into()))
            .collect();
        let text = BExpr::Func(
            "record_text".into(),
            vec![e, BExpr::Const(Value::Array(oids))],
        );
        return coerce_or_cast(text, to);
    }
    if from == PgType::Timestamp && to.is_string() {
        return Ok(BExpr::Func("timestamp_text".into(), vec![e]));
    }
    if from == PgType::TimestampArray && to.is_string() {
        let text = BExpr::Func("timestamp_array_text".into(), vec![e]);
        return coerce_or_cast(text, to);
    }
    // A real is written with its own digits (`0.1`, not the double's `0.10000000149011612`).
    if from == PgType::Float4 && to == PgType::Numeric {
        return Ok(BExpr::Func("float4_numeric".into(), vec![e]));
    }
    if from == PgType::Float4 && to.is_string() {
        let text = BExpr::Func("float4_text".into(), vec![e]);
        return coerce_or_cast(text, to);
    }
    // An int2vector or oidvector is written with spaces, not as an array.
    if from.is_vector() && to.is_string() {
        let text = BExpr::Func("int2vector_text".into(), vec![e]);
        return coerce_or_cast(text, to);
    }
    if through_zone(from, to) {
        return zone_convert(e, from, to);
    }
    // inet converts from and to strings only; to text always with its prefix length
    // (PostgreSQL's `network_show`), where its output omits a host's.
    if from != to && (from == PgType::Inet || to == PgType::Inet) {
        if from == PgType::Inet && to.is_string() {
            // Only text, varchar and char have `text(inet)`; name goes through the output.
            let func = if to == PgType::Name {
                "inet_out"
            } else {
                "inet_text"
            };
            let text = BExpr::Func(func.into(), vec![e]);
            return coerce_or_cast(text, to);
        }
        if !(from.is_string() || from == PgType::Unknown) {
            return Err(SqlError::CannotCast {
                from: from.sql_name().into(),
                to: to.sql_name().into(),
            });
        }
    }
    // xid converts only through its text form.
    if (from == PgType::Xid) != (to == PgType::Xid) && !from.is_string() && !to.is_string() {
        return Err(SqlError::CannotCast {
            from: from.sql_name().into(),
            to: to.sql_name().into(),
        });
    }
    coerce_or_cast(e, to)
}
