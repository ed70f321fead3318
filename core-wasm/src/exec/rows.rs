//! Stored rows: keys, typmods, defaults (checked, bound, printed back), NOT NULL, encoding.

use super::*;

/// Whether column `i` of a stored row is NULL (a row written before the column was added
/// ends before it).
pub fn datum_is_null(row: &pb::Row, i: usize) -> bool {
    row.values.get(i).is_none_or(|d| d.kind.is_none())
}

// ------------------------------------------------------------------ DML

pub fn unique_violation(t: &Table, row: Option<&pb::Row>) -> SqlError {
    SqlError::UniqueViolation {
        constraint: t.pkey_name.clone(),
        schema: t.schema.clone(),
        table: t.name.clone(),
        detail: format!("Key {} already exists.", key_text(t, row)),
    }
}

/// A row's primary key as PostgreSQL's unique-index details write it: `(a, b)=(1, x)`.
pub(super) fn key_text(t: &Table, row: Option<&pb::Row>) -> String {
    // Named as PostgreSQL's detail names them: quoted where the name needs it.
    let names: Vec<String> = t
        .primary_key
        .iter()
        .map(|i| crate::pgcatalog::quote_ident(&t.columns[*i].name))
        .collect();
    let vals: Vec<String> = match row {
        Some(r) => t
            .primary_key
            .iter()
            .map(|i| {
                r.values
                    .get(*i)
                    .and_then(|d| from_datum(d, t.columns[*i].ty).ok())
                    .and_then(|v| format_text(&v, t.columns[*i].ty))
                    .unwrap_or_else(|| "null".into())
            })
            .collect(),
        None => vec![],
    };
    format!("({})=({})", names.join(", "), vals.join(", "))
}

/// The logical key a stored row lives under: its primary key, or its row id.
pub fn stored_row_key(t: &Table, row: &pb::Row) -> Result<Vec<u8>, SqlError> {
    if t.primary_key.is_empty() {
        return Ok(keys::rowid_logical_key(t.id, row.row_id));
    }
    let fields = datum_fields(t, &t.primary_key, row)?;
    let refs: Vec<(&Value, PgType)> = fields.iter().map(|(v, ty)| (v, *ty)).collect();
    Ok(keys::row_logical_key(t.id, &refs))
}

/// The logical key of a row's entry in index `no` of its table.
pub fn index_entry_key(
    t: &Table,
    no: usize,
    row: &pb::Row,
    row_key: &[u8],
) -> Result<Vec<u8>, SqlError> {
    let ix = t
        .indexes
        .get(no)
        .ok_or_else(|| SqlError::internal("index number out of range"))?;
    let fields = datum_fields(t, &ix.columns, row)?;
    let refs: Vec<(&Value, PgType)> = fields.iter().map(|(v, ty)| (v, *ty)).collect();
    Ok(keys::index_logical_key(t.id, ix.slot, &refs, row_key))
}

pub(super) fn datum_fields(
    t: &Table,
    cols: &[usize],
    row: &pb::Row,
) -> Result<Vec<(Value, PgType)>, SqlError> {
    cols.iter()
        .map(|&i| {
            let ty = t.columns.get(i).map(|c| c.ty).unwrap_or(PgType::Text);
            let v = match row.values.get(i) {
                Some(d) => from_datum(d, ty)?,
                None => Value::Null,
            };
            Ok((v, ty))
        })
        .collect()
}

pub(super) fn logical_key(t: &Table, values: &[Value], tuple: u64) -> Vec<u8> {
    if t.primary_key.is_empty() {
        keys::rowid_logical_key(t.id, tuple)
    } else {
        let fields: Vec<(&Value, PgType)> = t
            .primary_key
            .iter()
            .map(|i| (&values[*i], t.columns[*i].ty))
            .collect();
        keys::row_logical_key(t.id, &fields)
    }
}

/// A string stored into `varchar(n)` or `char(n)`, as PostgreSQL's `varchar` / `bpchar` input
/// with a typmod: characters past `n` may only be spaces (dropped; else 22001), and a
/// `char(n)` value is padded with spaces to `n`. `None`: the string stays as it is.
pub(super) fn fit_string(s: &str, ty: PgType, n: usize) -> Result<Option<Value>, SqlError> {
    let len = s.chars().count();
    let kept: String = if len > n {
        let cut = s.char_indices().nth(n).map_or(s.len(), |(i, _)| i);
        if s[cut..].chars().any(|c| c != ' ') {
            let name = if ty == PgType::Bpchar {
                "character"
            } else {
                "character varying"
            };
            return Err(SqlError::StringTooLong {
                message: format!("value too long for type {name}({n})"),
            });
        }
        s[..cut].to_string()
    } else if ty == PgType::Bpchar && len < n {
        format!("{s}{}", " ".repeat(n - len))
    } else {
        return Ok(None);
    };
    Ok(Some(Value::text(kept)))
}

/// The length `n` of a `varchar(n)` / `char(n)` typmod.
pub(super) fn n_of(typmod: i32) -> usize {
    usize::try_from(typmod - 4).unwrap_or(0)
}

/// Assignment conversion of a value into a column, with PostgreSQL's length check.
pub(super) fn assign(col: &Column, v: Value) -> Result<Value, SqlError> {
    let v = cast_value(v, col.ty)?;
    fit_typmod(col.ty, col.typmod, v)
}

/// A value of type `ty` made to fit its typmod as an assignment does: `varchar(n)` and
/// `char(n)` checked (22001) and padded, `numeric(p,s)` rounded and checked (22003),
/// date/time precision rounded; an array's elements each as its element type's.
pub(super) fn fit_typmod(ty: PgType, typmod: i32, v: Value) -> Result<Value, SqlError> {
    if typmod < 0 {
        return Ok(v);
    }
    if let (Value::Array(items), Some(elem)) = (&v, ty.element()) {
        if !ty.is_vector() {
            let fitted = items
                .iter()
                .map(|x| match (x, elem) {
                    // A char(n) array's elements are checked and cut but not padded:
                    // RockLake compares array elements as text, not with bpchar's rule that
                    // trailing spaces do not count, so padding would break `= ANY`.
                    (Value::Text(s), PgType::Bpchar) if s.chars().count() <= n_of(typmod) => {
                        Ok(x.clone())
                    }
                    _ => fit_typmod(elem, typmod, x.clone()),
                })
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Value::Array(fitted.into()));
        }
    }
    if let (Value::Text(s), PgType::Varchar | PgType::Bpchar) = (&v, ty) {
        if typmod >= 4 {
            if let Some(fitted) = fit_string(s, ty, n_of(typmod))? {
                return Ok(fitted);
            }
        }
    }
    if let (Value::Numeric(s), PgType::Numeric) = (&v, ty) {
        return Ok(Value::Numeric(crate::types::numeric_typmod(s, typmod)?));
    }
    if matches!(v, Value::Timestamp(_) | Value::Time(_)) {
        return Ok(crate::datetime::round_to_precision(v, typmod.into()));
    }
    Ok(v)
}

/// A column default as PostgreSQL stores and shows it (`pg_get_expr`, information_schema's
/// `column_default`): `DEFAULT NULL` is no default at all; a constant as PostgreSQL shows the
/// constant it keeps ([`constant_default`], [`datetime_constant_default`]); `TRUE`/`FALSE`
/// for a boolean column are `true`/`false`. Anything else is kept as written, its names
/// quoted as PostgreSQL would quote them.
pub(super) fn stored_default(e: &ast::Expr, ty: PgType) -> Option<String> {
    if let Some(fixed) = datetime_constant_default(e, ty) {
        return Some(fixed);
    }
    if let Some(constant) = constant_default(e, ty) {
        return Some(constant);
    }
    let ast::Expr::Value(v) = e else {
        // PostgreSQL prints an operator expression in brackets, and its names quoted only
        // where they need it, however the client wrote them.
        let text = match e {
            ast::Expr::BinaryOp { .. } => format!("({e})"),
            _ => e.to_string(),
        };
        return Some(crate::pgcatalog::normalize_names(&text));
    };
    match (&v.value, ty) {
        (ast::Value::Null, _) => None,
        (ast::Value::Boolean(b), PgType::Bool) => Some(b.to_string()),
        _ => Some(e.to_string()),
    }
}

/// A constant default as PostgreSQL shows the constant it stores (ruleutils' `get_const_expr`):
/// a string read as the type it is cast or assigned to and written back as that type writes
/// it, named after it (`'{1,2}'::integer[]`, `'7'::bigint`, `'ab'::bpchar`,
/// `'q'::character varying`); bare where PostgreSQL writes it bare: a non-negative integer, a
/// numeric with a point and no sign, a boolean. A number literal is the constant of its own
/// type (integer, bigint or numeric) and the conversion to the column's type is not shown, as
/// PostgreSQL hides implicit casts. `None`: not such a constant, or one that does not
/// convert (the default's check reports it).
pub(super) fn constant_default(e: &ast::Expr, ty: PgType) -> Option<String> {
    use ast::{Expr, UnaryOperator, Value as V};
    let number = |n: &str| -> Option<(String, PgType)> {
        let t = if n.contains(['.', 'e', 'E']) {
            PgType::Numeric
        } else if n.parse::<i32>().is_ok() {
            PgType::Int4
        } else if n.parse::<i64>().is_ok() {
            PgType::Int8
        } else {
            PgType::Numeric
        };
        Some((n.to_string(), t))
    };
    let (text, t, typmod) = match e {
        Expr::Value(v) => match &v.value {
            V::SingleQuotedString(s) => (s.clone(), ty, -1),
            V::Number(n, false) => {
                let (n, t) = number(n)?;
                (n, t, -1)
            }
            _ => return None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match expr.as_ref() {
            Expr::Value(v) => match &v.value {
                V::Number(n, false) => {
                    let (n, t) = number(&format!("-{n}"))?;
                    (n, t, -1)
                }
                _ => return None,
            },
            _ => return None,
        },
        Expr::Cast {
            kind: ast::CastKind::DoubleColon | ast::CastKind::Cast,
            expr,
            data_type,
            format: None,
        } => match expr.as_ref() {
            Expr::Value(v) => match &v.value {
                V::SingleQuotedString(s) => {
                    let (t, m) = sql_type(data_type).ok()?;
                    // A modifier RockLake does not keep (an interval's precision): the text
                    // stays as written rather than lose it.
                    if m < 0 && data_type.to_string().contains('(') {
                        return None;
                    }
                    (s.clone(), t, m)
                }
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    };
    // The reg types name objects by the search_path of the moment.
    if t.is_reg() {
        return None;
    }
    // A cast to a length-limited string is the constant as written and the cast
    // (`'abcdef'::character varying(3)`): the length coercion is shown, not applied.
    if typmod >= 0 && matches!(t, PgType::Varchar | PgType::Bpchar) {
        return Some(format!(
            "'{}'::{}",
            text.replace('\'', "''"),
            crate::query::format_type_plain(t, typmod)
        ));
    }
    let value = crate::types::parse_text(&text, t).ok()?;
    let shown = crate::types::format_text(&value, t)?;
    let label = match t {
        PgType::Bpchar if typmod < 0 => "bpchar".to_string(),
        PgType::BpcharArray if typmod < 0 => "bpchar[]".to_string(),
        _ => crate::query::format_type_plain(t, typmod),
    };
    let quoted = || format!("'{}'::{label}", shown.replace('\'', "''"));
    Some(match t {
        PgType::Bool => if shown == "t" { "true" } else { "false" }.to_string(),
        PgType::Int4 if !shown.starts_with('-') => shown,
        // A cast to a numeric with a typmod is the constant (as written, not yet rounded)
        // and the cast.
        PgType::Numeric => {
            let bare = shown.starts_with(|c: char| c.is_ascii_digit()) && shown.contains('.');
            match (bare, typmod >= 0) {
                (true, false) => shown,
                (true, true) => format!("{shown}::{label}"),
                (false, _) => quoted(),
            }
        }
        _ => quoted(),
    })
}

/// A date/time column's constant default (`'2020-07-01 12:00'`, `'…'::timestamptz`) is read
/// once, as PostgreSQL stores the constant, and kept as PostgreSQL shows it
/// (`'2020-07-01 12:00:00'::timestamp without time zone`). A timestamptz is read in the zone of
/// the session that declares it and kept as the instant in UTC, not as text a later session
/// would read in its own zone.
pub(super) fn datetime_constant_default(e: &ast::Expr, ty: PgType) -> Option<String> {
    use PgType::{Date, Time, Timestamp, Timestamptz};
    if !matches!(ty, Timestamptz | Timestamp | Date | Time) {
        return None;
    }
    let literal = match e {
        ast::Expr::Cast {
            expr, data_type, ..
        } if sql_type(data_type).is_ok_and(|(t, _)| t == ty) => expr.as_ref(),
        other => other,
    };
    let ast::Expr::Value(v) = literal else {
        return None;
    };
    let ast::Value::SingleQuotedString(text) = &v.value else {
        return None;
    };
    let value = parse_text(text, ty).ok()?;
    let _utc = crate::tz::enter(crate::tz::utc(), None);
    let shown = format_text(&value, ty)?;
    Some(format!("'{shown}'::{}", ty.sql_name()))
}

pub(super) fn check_not_null(t: &Table, values: &[Value]) -> Result<(), SqlError> {
    for (i, c) in t.columns.iter().enumerate() {
        if c.not_null && values.get(i).is_none_or(Value::is_null) {
            let shown: Vec<String> = values
                .iter()
                .zip(&t.columns)
                .map(|(v, c)| format_text(v, c.ty).unwrap_or_else(|| "null".into()))
                .collect();
            return Err(SqlError::NotNullViolation {
                column: c.name.clone(),
                table: t.name.clone(),
                schema: t.schema.clone(),
                detail: format!("Failing row contains ({}).", shown.join(", ")),
            });
        }
    }
    Ok(())
}

pub(super) fn encode_row(values: &[Value], tuple: u64) -> pb::Row {
    pb::Row {
        row_id: tuple,
        values: values.iter().map(to_datum).collect(),
        tuple,
    }
}

/// What a buffered row version counts against the transaction's batch limit: the row, once
/// more per index entry it writes at commit.
pub(super) fn buffered_size(row: &pb::Row, t: &Table) -> usize {
    prost::Message::encoded_len(row) * (1 + t.indexes.len())
}

/// The bound DEFAULT expression of each of `t`'s columns (`None`: no default, NULL).
pub(super) fn column_defaults(
    cx: &mut Cx<'_>,
    at: u64,
    t: &Table,
) -> Result<Vec<Option<BExpr>>, SqlError> {
    let rcx = cx.reader(at);
    let mut binder = Binder::new(&rcx);
    t.columns
        .iter()
        .map(|c| bind_default(&mut binder, c))
        .collect()
}

/// A default as PostgreSQL checks it when it is declared: its expression must bind and
/// convert to the column's type (a constant is converted then: `'abc'` for an integer
/// column is 22P02 at CREATE or ALTER TABLE, not at the first INSERT).
pub(super) fn check_default(cx: &mut Cx<'_>, c: &Column) -> Result<(), SqlError> {
    let Some(sql) = &c.default_sql else {
        return Ok(());
    };
    let e = parse_default(sql)?;
    refuse_in_expression(&e, "DEFAULT expression", true)?;
    let at = cx.read_point();
    let rcx = cx.reader(at);
    bind_default_expr(&mut Binder::new(&rcx), c, &e).map(|_| ())
}

/// PostgreSQL's refusals of a subquery (and, in a DEFAULT, of a column reference) in an
/// expression that is evaluated without a query around it: `what` names it as its messages
/// do ("DEFAULT expression", "transform expression").
pub(super) fn refuse_in_expression(
    e: &ast::Expr,
    what: &str,
    columns: bool,
) -> Result<(), SqlError> {
    use std::ops::ControlFlow;
    // Words PostgreSQL's grammar reads as calls, which sqlparser reads as identifiers.
    const CALLS: &[&str] = &[
        "current_role",
        "current_schema",
        "current_user",
        "session_user",
        "user",
        "current_catalog",
        "current_date",
        "current_time",
        "current_timestamp",
        "localtime",
        "localtimestamp",
    ];
    let found = ast::visit_expressions(e, |x| match x {
        ast::Expr::Subquery(_)
        | ast::Expr::Exists { .. }
        | ast::Expr::In {
            target: ast::InTarget::Subquery(_),
            ..
        } => ControlFlow::Break(format!("cannot use subquery in {what}")),
        ast::Expr::Identifier(i)
            if columns
                && !(i.quote_style.is_none()
                    && CALLS.contains(&i.value.to_ascii_lowercase().as_str())) =>
        {
            ControlFlow::Break(format!("cannot use column reference in {what}"))
        }
        ast::Expr::CompoundIdentifier(_) if columns => {
            ControlFlow::Break(format!("cannot use column reference in {what}"))
        }
        _ => ControlFlow::Continue(()),
    });
    match found {
        ControlFlow::Break(message) => Err(SqlError::UnsupportedByPostgres { message }),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// A column's DEFAULT expression bound and converted to its type (`None`: no default).
pub(super) fn bind_default(
    binder: &mut Binder<'_, '_>,
    c: &Column,
) -> Result<Option<BExpr>, SqlError> {
    if let Some(seq) = c.identity.map(|i| i.sequence).or(c.serial) {
        // `nextval` of the identity or serial column's sequence, by its OID.
        let oid = binder
            .cx
            .sequences()
            .iter()
            .find(|t| t.id == seq)
            .map(|t| t.oid)
            .ok_or_else(|| SqlError::internal("column without its sequence"))?;
        let call = BExpr::Func("nextval".into(), vec![BExpr::Const(Value::Int(oid.into()))]);
        return crate::query::assignment(call, PgType::Int8, c.ty).map(Some);
    }
    match &c.default_sql {
        Some(sql) => bind_default_expr(binder, c, &parse_default(sql)?).map(Some),
        None => Ok(None),
    }
}

/// A default's SQL text, as stored (RockLake wrote it: not parsing is an internal error).
pub(super) fn parse_default(sql: &str) -> Result<ast::Expr, SqlError> {
    let mut e = Parser::new(&PostgreSqlDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| SqlError::internal(format!("stored default does not parse: {e}")))?;
    crate::precedence::as_postgres_groups(sql, &mut e);
    Ok(e)
}

/// [`bind_default`] of an already parsed default.
pub(super) fn bind_default_expr(
    binder: &mut Binder<'_, '_>,
    c: &Column,
    e: &ast::Expr,
) -> Result<BExpr, SqlError> {
    let (b, bt) = binder.bind_expr(e, &Scope::default(), None)?;
    check_assignable(c, bt, "default expression")?;
    crate::query::assignment(b, bt, c.ty)
}

/// PostgreSQL's refusal of a value no assignment cast converts into the column's type.
pub(super) fn check_assignable(c: &Column, from: PgType, what: &str) -> Result<(), SqlError> {
    if crate::types::assignable(from, c.ty) {
        return Ok(());
    }
    Err(SqlError::DatatypeMismatch {
        message: format!(
            "column \"{}\" is of type {} but {what} is of type {}",
            c.name,
            crate::query::format_type(c.ty, c.typmod),
            crate::query::format_type(from, -1),
        ),
        hint: Some("You will need to rewrite or cast the expression.".into()),
    })
}
