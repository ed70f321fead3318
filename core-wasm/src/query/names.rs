//! Names, error positions and smaller binder helpers.

use super::*;

/// `err`, which binding or converting `e` gave, with its position noted where PostgreSQL's
/// parser gives one ([`error_spot`]).
pub(crate) fn noted_at(e: &Expr, err: SqlError) -> SqlError {
    if let Some(spot) = error_spot(e, &err) {
        crate::errpos::note(&err, spot);
    }
    err
}

/// Where PostgreSQL's parser points an error that binding `e` returned
/// ([`crate::errpos`]): a name that resolves to nothing at the name, a function that does not
/// exist at its name, an operator at the operator, a constant that does not convert at the
/// constant. `None`: no position (PostgreSQL gives none, or this node is not the one it
/// points at).
pub(super) fn error_spot(e: &Expr, err: &SqlError) -> Option<crate::errpos::Spot> {
    use crate::errpos::{Spot, Target};
    use sqlparser::ast::Spanned;
    let message = err.to_string();
    // "operator does not exist: integer + text" (binary) or "…: - text" (prefix).
    let operator_error = |binary: bool| {
        message
            .strip_prefix("operator does not exist: ")
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| binary != "+-*/<>=~!@#%^&|`?".contains(c))
    };
    match (err.sqlstate(), e) {
        ("42703" | "42P01", Expr::Identifier(i)) => Some(Spot::at(i.span.start, ident_token(i))),
        ("42703" | "42P01", Expr::CompoundIdentifier(parts)) => parts
            .first()
            .map(|i| Spot::at(i.span.start, ident_token(i))),
        ("42883", Expr::Function(f)) if message.starts_with("function ") => name_spot(&f.name),
        ("42809", Expr::Function(f)) if message.contains(" specified, but ") => name_spot(&f.name),
        ("0A000", Expr::Function(f)) if message.starts_with("OVER is not supported for ") => {
            name_spot(&f.name)
        }
        ("42809", Expr::Function(f)) if message.contains(" is not an ordered-set aggregate") => {
            name_spot(&f.name)
        }
        // An aggregate, window or GROUPING call where none may be: at the call.
        ("42803" | "42P20", Expr::Function(f))
            if message.contains(" are not allowed ") || message.ends_with("cannot be nested") =>
        {
            name_spot(&f.name)
        }
        // `a + b` with no such operator: at the operator, which has no span of its own.
        ("42883", Expr::BinaryOp { left, op, .. }) if operator_error(true) => Some(Spot::find(
            left.span().end,
            Target::NextToken,
            op.to_string(),
        )),
        ("42725", Expr::BinaryOp { left, op, .. })
            if message.starts_with("operator is not unique: ") =>
        {
            Some(Spot::find(
                left.span().end,
                Target::NextToken,
                op.to_string(),
            ))
        }
        ("42725", Expr::UnaryOp { expr, op })
            if message.starts_with("operator is not unique: ") =>
        {
            Some(Spot::find(
                expr.span().start,
                Target::TokenBefore,
                op.to_string(),
            ))
        }
        // `(x).field` of a value that has no such field: at the value, inside its parentheses.
        ("42809" | "42703", Expr::CompoundFieldAccess { root, .. })
            if message.starts_with("column notation")
                || message.starts_with("could not identify column") =>
        {
            let inner = unnested(root);
            Some(Spot::at(inner.span().start, first_token(inner)))
        }
        ("42883", Expr::UnaryOp { expr, op }) if operator_error(false) => Some(Spot::find(
            expr.span().start,
            Target::TokenBefore,
            op.to_string(),
        )),
        ("42883", Expr::Like { expr, negated, .. } | Expr::ILike { expr, negated, .. })
            if operator_error(true) || message.starts_with("function pg_catalog.like_escape") =>
        {
            let word = match (negated, matches!(e, Expr::ILike { .. })) {
                (true, _) => "NOT",
                (false, true) => "ILIKE",
                (false, false) => "LIKE",
            };
            Some(Spot::find(expr.span().end, Target::NextToken, word))
        }
        (
            code @ ("42809" | "42883"),
            Expr::AnyOp {
                left, compare_op, ..
            }
            | Expr::AllOp {
                left, compare_op, ..
            },
        ) if code == "42809" || operator_error(true) => Some(Spot::find(
            left.span().end,
            Target::NextToken,
            compare_op.to_string(),
        )),
        // SUBSTRING's word has no span: back from its first argument.
        ("42883", Expr::Substring { expr, .. }) if message.starts_with("function ") => {
            Some(Spot::find(expr.span().start, Target::TokenBefore, "substr"))
        }
        // A cast to a type that does not exist: at the type name after `::` or `AS` (not
        // found past a cast inside, whose own type name has no span).
        (
            _,
            Expr::Cast {
                expr, data_type, ..
            },
        ) if points_at_type(err) && !matches!(**expr, Expr::Cast { .. }) => Some(Spot::find(
            expr.span().end,
            Target::CastTypeAfter,
            first_word(&data_type.to_string()),
        )),
        (
            "42804",
            Expr::IsTrue(x)
            | Expr::IsFalse(x)
            | Expr::IsNotTrue(x)
            | Expr::IsNotFalse(x)
            | Expr::IsUnknown(x)
            | Expr::IsNotUnknown(x),
        ) if message.starts_with("argument of IS") => {
            Some(Spot::at(x.span().start, first_token(x)))
        }
        // A constant's input error: at the constant, when it is this node or one of its
        // operands (PostgreSQL points where it converts an untyped constant; errors of
        // evaluation have no position).
        ("22P02" | "22007" | "22008" | "22003" | "22009", _) => {
            let literal = |x: &Expr| match x {
                Expr::Value(v) => literal_spot(&v.value, v.span().start),
                _ => None,
            };
            let mut operands: Vec<&Expr> = vec![e];
            match e {
                Expr::Cast { expr, .. }
                | Expr::IsTrue(expr)
                | Expr::IsFalse(expr)
                | Expr::IsNotTrue(expr)
                | Expr::IsNotFalse(expr)
                | Expr::IsUnknown(expr)
                | Expr::IsNotUnknown(expr) => operands.push(expr),
                Expr::BinaryOp { left, right, .. } => operands.extend([&**left, &**right]),
                Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => {
                    operands.extend([&**expr, &**pattern])
                }
                Expr::Between {
                    expr, low, high, ..
                } => operands.extend([&**expr, &**low, &**high]),
                Expr::In {
                    expr,
                    target: ast::InTarget::List(list),
                    ..
                } => {
                    operands.push(expr);
                    operands.extend(list.iter());
                }
                _ => {}
            }
            let typed = match e {
                Expr::TypedString(ts) => literal_spot(&ts.value.value, ts.value.span().start),
                _ => None,
            };
            typed
                .into_iter()
                .chain(operands.into_iter().filter_map(literal))
                .find(|(text, _)| message.contains(&format!("\"{text}\"")))
                .map(|(_, spot)| spot)
        }
        _ => None,
    }
}

/// An identifier as it is written (its quote, then its text).
pub(crate) fn ident_token(i: &ast::Ident) -> String {
    match i.quote_style {
        Some(q) => format!("{q}{}", i.value),
        None => i.value.clone(),
    }
}

/// Where a (possibly qualified) name starts, and its first part as written.
pub(crate) fn name_spot(name: &ast::ObjectName) -> Option<crate::errpos::Spot> {
    match name.0.first() {
        Some(ast::ObjectNamePart::Identifier(i)) => {
            Some(crate::errpos::Spot::at(i.span.start, ident_token(i)))
        }
        _ => None,
    }
}

/// The first token of `e` when it starts with a name (otherwise nothing to check).
pub(super) fn first_token(e: &Expr) -> String {
    match e {
        Expr::Identifier(i) => ident_token(i),
        Expr::CompoundIdentifier(parts) => parts.first().map(ident_token).unwrap_or_default(),
        _ => String::new(),
    }
}

/// Whether PostgreSQL points `err` at the type name it is about: a type that does not exist,
/// or a type modifier it does not take.
pub(crate) fn points_at_type(err: &SqlError) -> bool {
    let message = err.to_string();
    match err.sqlstate() {
        "42704" => message.starts_with("type "),
        "22023" => message.starts_with("length for type ") || message.starts_with("NUMERIC "),
        "42601" => message.starts_with("type modifier is not allowed"),
        _ => false,
    }
}

/// A possibly qualified name as PostgreSQL's `regclass`/`regnamespace` input reads it:
/// unquoted parts folded to lower case, quoted ones kept as written (`""` is a quote), parts
/// joined by dots. `None` when it does not parse.
pub(crate) fn name_parts(s: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut chars = s.trim().chars().peekable();
    loop {
        let mut part = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next()? {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        part.push('"');
                    }
                    '"' => break,
                    c => part.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' || c == '"' || c.is_whitespace() {
                    break;
                }
                part.push(c.to_ascii_lowercase());
                chars.next();
            }
        }
        if part.is_empty() {
            return None;
        }
        parts.push(part);
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.next() {
            None => return Some(parts),
            Some('.') => {
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
            }
            Some(_) => return None,
        }
    }
}

pub(super) fn invalid_name_syntax() -> SqlError {
    SqlError::InvalidName {
        message: "invalid name syntax".into(),
    }
}

/// A comparison of two rows (`(a, b) < (1, 2)`) as PostgreSQL's row-wise comparison spells
/// it out: `=` is every pair equal, `<>` any pair unequal, the ordering operators compare
/// the pairs left to right and the first pair that is not equal decides (a NULL there makes
/// the result NULL).
pub(super) fn row_comparison(
    ls: &[Expr],
    op: &ast::BinaryOperator,
    rs: &[Expr],
) -> Result<Expr, SqlError> {
    use ast::BinaryOperator as B;
    if ls.len() != rs.len() {
        return Err(SqlError::Syntax {
            message: "unequal number of entries in row expressions".into(),
        });
    }
    let pair = |l: &Expr, op: B, r: &Expr| Expr::BinaryOp {
        left: Box::new(l.clone()),
        op,
        right: Box::new(r.clone()),
    };
    let join = |a: Expr, op: B, b: Expr| Expr::BinaryOp {
        left: Box::new(a),
        op,
        right: Box::new(b),
    };
    let pairs = ls.iter().zip(rs);
    match op {
        B::Eq | B::NotEq => {
            let join_op = if *op == B::Eq { B::And } else { B::Or };
            pairs
                .map(|(l, r)| pair(l, op.clone(), r))
                .reduce(|a, b| join(a, join_op.clone(), b))
                .ok_or_else(|| SqlError::feature("comparison of empty rows"))
        }
        B::Lt | B::LtEq | B::Gt | B::GtEq => {
            let strict = match op {
                B::Lt | B::LtEq => B::Lt,
                _ => B::Gt,
            };
            // From the last pair back: last_op, then `l < r OR (l = r AND rest)`.
            let mut rest: Option<Expr> = None;
            for (l, r) in pairs.rev() {
                rest = Some(match rest {
                    None => pair(l, op.clone(), r),
                    Some(inner) => join(
                        pair(l, strict.clone(), r),
                        B::Or,
                        Expr::Nested(Box::new(join(pair(l, B::Eq, r), B::And, inner))),
                    ),
                });
            }
            rest.ok_or_else(|| SqlError::feature("comparison of empty rows"))
        }
        other => Err(SqlError::feature(format!("row comparison with {other}"))),
    }
}

/// `initcap`: each run of letters and digits starts upper case, the rest lower case.
pub(super) fn initcap(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut in_word = false;
    // One character for one, as PostgreSQL's towupper/towlower (`ß` stays `ß`).
    fn single(mut mapped: impl Iterator<Item = char>, c: char) -> char {
        match (mapped.next(), mapped.next()) {
            (Some(m), None) => m,
            _ => c,
        }
    }
    for c in t.chars() {
        out.push(if in_word {
            single(c.to_lowercase(), c)
        } else {
            single(c.to_uppercase(), c)
        });
        in_word = c.is_alphanumeric();
    }
    out
}

/// `lpad` / `rpad`: `t` cut or filled with `fill` (repeated, cut) to `len` characters; an
/// empty fill cannot lengthen.
pub(super) fn pad(t: &str, len: usize, fill: &str, left: bool) -> String {
    let have = t.chars().count();
    if have >= len || fill.is_empty() {
        return t.chars().take(len).collect();
    }
    let filler: String = fill.chars().cycle().take(len - have).collect();
    if left {
        filler + t
    } else {
        format!("{t}{filler}")
    }
}

/// Where `e` starts, when it starts with a name (a column or a function call).
pub(super) fn start_spot(e: &Expr) -> Option<crate::errpos::Spot> {
    use sqlparser::ast::Spanned;
    match e {
        Expr::Function(f) => name_spot(&f.name),
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
            Some(crate::errpos::Spot::at(e.span().start, first_token(e)))
        }
        _ => None,
    }
}

/// A type's name up to its first space or parenthesis (`nope(3)` → `nope`).
pub(crate) fn first_word(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c == '(' || c == '[')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// A string or number literal at `at`: its text as an input error quotes it, and where it
/// is, with the token it starts with.
pub(super) fn literal_spot(
    v: &ast::Value,
    at: sqlparser::tokenizer::Location,
) -> Option<(String, crate::errpos::Spot)> {
    let token = match v {
        ast::Value::Number(n, _) => n.to_string(),
        ast::Value::EscapedStringLiteral(_) => "E'".into(),
        _ => "'".into(),
    };
    literal_text(v).map(|t| (t, crate::errpos::Spot::at(at, token)))
}

/// The text of a string or number literal as an input error quotes it.
pub(super) fn literal_text(v: &ast::Value) -> Option<String> {
    match v {
        ast::Value::SingleQuotedString(s) | ast::Value::EscapedStringLiteral(s) => Some(s.clone()),
        ast::Value::Number(n, _) => Some(n.to_string()),
        _ => None,
    }
}

/// The fields of `pg_get_keywords()`'s rows.
pub(super) const KEYWORD_FIELDS: &[(&str, PgType)] = &[
    ("word", PgType::Text),
    ("catcode", PgType::Char),
    ("barelabel", PgType::Bool),
    ("catdesc", PgType::Text),
    ("baredesc", PgType::Text),
];

/// The fields of `json_each()`'s rows, and of `json_each_text()`'s.
pub(super) const JSON_EACH_FIELDS: &[(&str, PgType)] =
    &[("key", PgType::Text), ("value", PgType::Json)];
pub(super) const JSON_EACH_TEXT_FIELDS: &[(&str, PgType)] =
    &[("key", PgType::Text), ("value", PgType::Text)];

/// The fields of `aclexplode()`'s rows.
pub(super) const ACL_FIELDS: &[(&str, PgType)] = &[
    ("grantor", PgType::Oid),
    ("grantee", PgType::Oid),
    ("privilege_type", PgType::Text),
    ("is_grantable", PgType::Bool),
];

/// The privileges of an `aclitem` by their letter, in the order of their bits, which is the
/// order `aclexplode` lists them in.
pub(super) const ACL_PRIVILEGES: &[(char, &str)] = &[
    ('a', "INSERT"),
    ('r', "SELECT"),
    ('w', "UPDATE"),
    ('d', "DELETE"),
    ('D', "TRUNCATE"),
    ('x', "REFERENCES"),
    ('t', "TRIGGER"),
    ('X', "EXECUTE"),
    ('U', "USAGE"),
    ('C', "CREATE"),
    ('T', "TEMPORARY"),
    ('c', "CONNECT"),
    ('s', "SET"),
    ('A', "ALTER SYSTEM"),
];

/// `aclexplode`'s rows for one `aclitem` text, `grantee=privileges/grantor` (an empty grantee
/// is PUBLIC; a `*` after a privilege's letter is its grant option). Names are quoted as
/// `aclitemout` quotes them.
pub(super) fn acl_explode(user: &str, acl: &str) -> Result<Vec<Vec<Value>>, SqlError> {
    let invalid = || SqlError::InvalidText {
        type_name: "aclitem".into(),
        input: acl.into(),
    };
    let (grantee, rest) = split_acl_name(acl, '=').ok_or_else(invalid)?;
    // Privilege letters hold no `/`; a quoted grantor may.
    let (privileges, grantor) = rest.split_once('/').ok_or_else(invalid)?;
    let grantor = unquote_acl_name(grantor);
    let role = |name: &str| {
        crate::pgcatalog::role_oid(user, name).ok_or_else(|| SqlError::UndefinedObject {
            message: format!("role \"{name}\" does not exist"),
        })
    };
    let (grantor, grantee) = (role(&grantor)?, role(&grantee)?);
    let letters: Vec<char> = privileges.chars().collect();
    Ok(ACL_PRIVILEGES
        .iter()
        .filter_map(|(letter, name)| {
            let at = letters.iter().position(|c| c == letter)?;
            Some(vec![
                Value::Int(grantor.into()),
                Value::Int(grantee.into()),
                Value::text(*name),
                Value::Bool(letters.get(at + 1) == Some(&'*')),
            ])
        })
        .collect())
}

/// The role name before `end` in an `aclitem` text (quoted names may hold it), and the rest.
pub(super) fn split_acl_name(s: &str, end: char) -> Option<(String, &str)> {
    let mut quoted = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c == end && !quoted => return Some((unquote_acl_name(&s[..i]), &s[i + 1..])),
            _ => {}
        }
    }
    None
}

/// A role name as `aclitemout` wrote it, without its quotes.
pub(super) fn unquote_acl_name(s: &str) -> String {
    match s.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => s.to_string(),
    }
}

/// `l op r` with `op` `+` or `-` as PostgreSQL's grammar reads it when a prefix `~` comes before
/// it: a prefix operator has the precedence of any other operator, below `+` and `-`, so
/// `~1 + 1` is `~(1 + 1)` and `2 * ~1 + 1` is `2 * ~(1 + 1)`. sqlparser binds `~` as tightly
/// as a sign. `None` when there is nothing to move.
pub(super) fn prefix_operator_over(l: &Expr, op: &ast::BinaryOperator, r: &Expr) -> Option<Expr> {
    use ast::BinaryOperator as O;
    if !matches!(op, O::Plus | O::Minus) {
        return None;
    }
    // The chain `a + b - c` is built from the left: its left part first.
    let left = match l {
        Expr::BinaryOp {
            left: a,
            op: o,
            right: b,
        } => prefix_operator_over(a, o, b),
        _ => None,
    };
    let l_read = left.as_ref().unwrap_or(l);
    match graft_under_prefix(l_read, op, r) {
        Some(e) => Some(e),
        None => left.map(|l| Expr::BinaryOp {
            left: Box::new(l),
            op: op.clone(),
            right: Box::new(r.clone()),
        }),
    }
}

/// `l op r` with `op r` moved under the prefix `~` that ends `l` (its last operand, through
/// operators that bind more tightly than a prefix operator).
pub(super) fn graft_under_prefix(l: &Expr, op: &ast::BinaryOperator, r: &Expr) -> Option<Expr> {
    use ast::BinaryOperator as O;
    match l {
        Expr::UnaryOp {
            op: ast::UnaryOperator::BitwiseNot,
            expr,
        } => {
            let inner = graft_under_prefix(expr, op, r).unwrap_or_else(|| Expr::BinaryOp {
                left: expr.clone(),
                op: op.clone(),
                right: Box::new(r.clone()),
            });
            Some(Expr::UnaryOp {
                op: ast::UnaryOperator::BitwiseNot,
                expr: Box::new(inner),
            })
        }
        Expr::BinaryOp {
            left: a,
            op: o @ (O::Plus | O::Minus | O::Multiply | O::Divide | O::Modulo | O::PGExp),
            right: b,
        } => graft_under_prefix(b, op, r).map(|b| Expr::BinaryOp {
            left: a.clone(),
            op: o.clone(),
            right: Box::new(b),
        }),
        _ => None,
    }
}

/// Whether `e` is a literal, in parentheses or not (what PostgreSQL's grammar negates as one
/// constant).
pub(super) fn is_literal(e: &Expr) -> bool {
    matches!(unnested(e), Expr::Value(_))
}

/// `e` without the parentheses around it.
pub(super) fn unnested(mut e: &Expr) -> &Expr {
    while let Expr::Nested(x) = e {
        e = x;
    }
    e
}

/// The OID of the type `input` names as `regtype` reads it: `pg_type.typname`, SQL's spelling
/// (`integer`, `character varying`, `text[]`), schema-qualified or quoted; also the types
/// `pg_type` lists that have no [`PgType`] (`cid`, `record[]`).
pub fn type_oid_by_name(input: &str) -> Option<u32> {
    if input.trim() == "-" {
        return Some(0);
    }
    let t = input
        .trim()
        .trim_start_matches("pg_catalog.")
        .replace('"', "");
    PgType::from_typname(&t)
        .or_else(|| type_from_text(&t).ok().map(|(ty, _)| ty))
        .or_else(|| {
            [PgType::Unknown, PgType::Void, PgType::Record(&[])]
                .into_iter()
                .find(|p| p.typname() == t)
        })
        .map(PgType::oid)
        .or_else(|| crate::pgcatalog::other_type_oid(&t))
}

/// The OID of the function `input` names as `regproc` reads it: a number, `-` for none, or
/// the name (with its schema, quoted or not) of one of the built-in functions RockLake's
/// catalogs name (`pg_proc` lists none).
pub fn proc_oid_by_name(input: &str) -> Result<u32, SqlError> {
    let trimmed = input.trim();
    if let Ok(n) = trimmed.parse::<u32>() {
        return Ok(n);
    }
    if trimmed == "-" {
        return Ok(0);
    }
    let n = match name_parts(input).as_deref() {
        Some([one]) | Some([_, one]) => one.clone(),
        Some(_) => {
            return Err(SqlError::Syntax {
                message: "improper qualified name (too many dotted names)".into(),
            })
        }
        None => return Err(invalid_name_syntax()),
    };
    crate::pgcatalog::builtin_proc_oid(&n).ok_or_else(|| SqlError::UndefinedFunction {
        message: format!("function \"{input}\" does not exist"),
        hint: None,
    })
}

/// `information_schema._pg_expandarray` as [`Binder::bind_call`] sees it named: no identifier
/// holds a NUL, so no other function's name can be this.
pub(super) const EXPANDARRAY: &str = "\0information_schema._pg_expandarray";

/// `(record).field`: the field's value, as PostgreSQL's FieldSelect reads it.
pub(super) fn field_select(
    record: BExpr,
    ty: PgType,
    field: &str,
) -> Result<(BExpr, PgType), SqlError> {
    let PgType::Record(fields) = ty else {
        return Err(SqlError::WrongObjectType {
            message: format!(
                "column notation .{field} applied to type {}, which is not a composite type",
                ty.sql_name()
            ),
        });
    };
    let Some(i) = fields.iter().position(|(name, _)| *name == field) else {
        return Err(SqlError::UndefinedRecordField { name: field.into() });
    };
    let call = BExpr::Func(
        "record_field".into(),
        vec![record, BExpr::Const(Value::Int(i as i64))],
    );
    Ok((call, fields[i].1))
}

/// PostgreSQL's 42883 for a call no function signature matches.
pub(super) fn no_such_function(name: &str, types: &[PgType]) -> SqlError {
    let sig: Vec<&str> = types.iter().map(|t| t.sql_name()).collect();
    SqlError::UndefinedFunction {
        message: format!("function {}({}) does not exist", name, sig.join(", ")),
        hint: Some("No function matches the given name and argument types. You might need to add explicit type casts.".into()),
    }
}

/// The select item a GROUP BY name stands for when no input column has it: the one item
/// with that alias (42702 for several).
pub(super) fn group_by_alias<'s>(
    items: &'s [SelectItem],
    name: &str,
) -> Result<Option<(usize, &'s Expr)>, SqlError> {
    let mut found: Option<(usize, &Expr)> = None;
    for (i, item) in items.iter().enumerate() {
        if let SelectItem::ExprWithAlias { expr, alias } = item {
            if ident(alias) == name {
                // Two items of the name are ambiguous only when they differ.
                if found.is_some_and(|(_, f)| f != expr) {
                    return Err(SqlError::AmbiguousOutputColumn {
                        clause: "GROUP BY",
                        name: name.to_string(),
                    });
                }
                found = found.or(Some((i, expr)));
            }
        }
    }
    Ok(found)
}

/// PostgreSQL's 42803 when a grouped select's list or HAVING reads a column that is neither
/// grouped by `keys` nor inside an aggregate.
pub(super) fn ungrouped_select_list(
    sel: &ast::Select,
    keys: &[BExpr],
    projection: &[BExpr],
    having: Option<&BExpr>,
    scope: &Scope,
    hidden: &[Expr],
) -> Result<(), SqlError> {
    for e in projection.iter().chain(having) {
        if let Some(i) = ungrouped_column(e, keys) {
            let items = sel.projection.iter().filter_map(|i| match i {
                ast::SelectItem::UnnamedExpr(e)
                | ast::SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
                _ => None,
            });
            return Err(grouping_error(
                scope,
                i,
                items.chain(hidden).chain(sel.having.as_ref()),
                group_by_exprs(sel),
            ));
        }
    }
    Ok(())
}

/// A column of the FROM scope used outside an aggregate and not covered by GROUP BY (a key
/// covers an expression equal to it, as in PostgreSQL).
pub(super) fn ungrouped_column(e: &BExpr, keys: &[BExpr]) -> Option<usize> {
    if keys.contains(e) {
        return None;
    }
    let kids: Vec<&BExpr> = match e {
        BExpr::Col(i) => return Some(*i),
        BExpr::Const(_)
        | BExpr::Param(..)
        | BExpr::Outer(..)
        | BExpr::Agg(_)
        | BExpr::Win(_)
        | BExpr::Srf(_)
        | BExpr::Exists(..)
        | BExpr::Scalar(_)
        | BExpr::ArraySub(_) => vec![],
        BExpr::Bin(_, a, b)
        | BExpr::And(a, b)
        | BExpr::Or(a, b)
        | BExpr::Like(a, b, ..)
        | BExpr::AnyArray(_, a, b, ..)
        | BExpr::IsDistinct(a, b, _) => {
            vec![a, b]
        }
        BExpr::Not(a)
        | BExpr::Neg(a)
        | BExpr::IsNull(a, _)
        | BExpr::Cast(a, _)
        | BExpr::InSub(a, ..) => vec![a],
        BExpr::InList(a, items, _) => std::iter::once(&**a).chain(items.iter()).collect(),
        BExpr::Func(_, args) => args.iter().collect(),
        BExpr::Case(op, arms, el) => {
            let mut v: Vec<&BExpr> = op.iter().map(|b| &**b).collect();
            for (c, r) in arms {
                v.push(c);
                v.push(r);
            }
            v.extend(el.iter().map(|b| &**b));
            v
        }
    };
    kids.into_iter().find_map(|k| ungrouped_column(k, keys))
}

/// The columns renamed by a table alias's column list (`AS t(a, b)`); more names than
/// columns is PostgreSQL's 42P10.
pub(super) fn apply_alias_cols(
    mut cols: Vec<ColMeta>,
    alias: &Option<ast::TableAlias>,
    relation: &'static str,
) -> Result<Vec<ColMeta>, SqlError> {
    if let Some(a) = alias {
        let visible: Vec<usize> = cols
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.hidden)
            .map(|(i, _)| i)
            .collect();
        if a.columns.len() > visible.len() {
            return Err(SqlError::TooManyColumnAliases {
                relation,
                name: ident(&a.name),
                available: visible.len(),
                specified: a.columns.len(),
            });
        }
        for (i, ac) in visible.into_iter().zip(a.columns.iter()) {
            cols[i].name = ident(&ac.name).into();
        }
    }
    Ok(cols)
}

/// Whether an ORDER BY key sorts descending: `DESC`, or `USING >` (`USING <` is ascending;
/// another operator is PostgreSQL's 42809).
pub(super) fn sort_desc(options: &ast::OrderByOptions) -> Result<bool, SqlError> {
    Ok(match &options.sort {
        None | Some(ast::OrderBySort::Asc) => false,
        Some(ast::OrderBySort::Desc) => true,
        Some(ast::OrderBySort::Using(op)) => match op.to_string().as_str() {
            "<" => false,
            ">" => true,
            other => return Err(SqlError::WrongObjectTypeHint {
                message: format!("operator {other} is not a valid ordering operator"),
                hint:
                    "Ordering operators must be \"<\" or \">\" members of btree operator families."
                        .into(),
            }),
        },
    })
}

/// The type of an equi-join side that is a column or a cast of one (what [`col_range`]
/// accepts); `None` for anything else.
pub(super) fn side_type(e: &BExpr, cols: &[ColMeta]) -> Option<PgType> {
    match e {
        BExpr::Col(i) => cols.get(*i).map(|c| c.ty),
        BExpr::Cast(_, t) => Some(*t),
        _ => None,
    }
}

/// Whether values of these two types are equal exactly when their [`value_key`]s are, so an
/// equi-join over them may use a hash index: integers of any width and integral numerics,
/// numerics, strings other than `char(n)`, and a few types against themselves. Floats against
/// integers, `char(n)` (its padding), intervals (`1 day` is `24 hours`) and mixed types compare
/// through the join condition instead.
pub(super) fn hash_joinable(a: Option<PgType>, b: Option<PgType>) -> bool {
    let (Some(a), Some(b)) = (a, b) else {
        return false;
    };
    let exact = |t: PgType| t.is_integer() || t == PgType::Numeric;
    let text = |t: PgType| matches!(t, PgType::Text | PgType::Varchar | PgType::Name);
    (exact(a) && exact(b))
        || (text(a) && text(b))
        || (a == b
            && matches!(
                a,
                PgType::Bool
                    | PgType::Uuid
                    | PgType::Date
                    | PgType::Timestamp
                    | PgType::Timestamptz
                    | PgType::Time
                    | PgType::Bytea
                    | PgType::Float8
                    | PgType::Float4
                    | PgType::Interval
            ))
}

/// The table FROM item `f` (bound as `item`) names when it is a table named without an alias.
pub(super) fn plain_table(f: &TableFactor, item: &Scope) -> Option<u32> {
    match f {
        TableFactor::Table {
            alias: None,
            args: None,
            ..
        } => item.cols.first().map(|c| c.table_oid).filter(|o| *o != 0),
        _ => None,
    }
}

/// A name a FROM item is known by, and the table it names when that is a table named without
/// an alias (two such of different schemas may share a name).
pub type RangeName = (Rc<str>, Option<u32>);

/// The names FROM item `f` (bound as `item`) brings, checked against those before it:
/// PostgreSQL's 42712 for a name given twice at one level (`FROM t, t`, `DELETE FROM t USING
/// t`), which would otherwise make every reference to it ambiguous or wrong.
pub(super) fn claim_range_names(
    names: &mut Vec<RangeName>,
    plain_table: Option<u32>,
    item: &Scope,
) -> Result<(), SqlError> {
    let mut own: Vec<Rc<str>> = Vec::new();
    for q in item.cols.iter().filter_map(|c| c.qual.clone()) {
        if !own.contains(&q) {
            own.push(q);
        }
    }
    for q in own {
        let clash = names.iter().any(|(n, oid)| {
            *n == q && !matches!((oid, plain_table), (Some(a), Some(b)) if *a != b)
        });
        if clash {
            return Err(SqlError::DuplicateAlias {
                name: q.to_string(),
            });
        }
        names.push((q, plain_table));
    }
    Ok(())
}

/// A join's left side for USING and NATURAL: the columns of its comma item so far (those
/// before `left_width`, the ones before `item_start` out of reach).
pub(super) fn join_left_side(scope: &Scope, left_width: usize, item_start: usize) -> Scope {
    Scope {
        cols: scope.cols[..left_width].to_vec(),
        merged_away: scope.merged_away.clone(),
        star: None,
    }
    .masked(item_start)
}

/// What a FROM item reads of the items before it.
pub(super) struct LateralUse {
    pub(super) read: Lateral,
    /// The table of the first of their columns it reads, for the error when it may not.
    pub(super) first_ref: Option<String>,
}

impl LateralUse {
    pub(super) const NONE: LateralUse = LateralUse {
        read: Lateral::No,
        first_ref: None,
    };

    /// From the references of a query bound under `left` ([`BQuery::outer_refs`]): those
    /// zero scopes up read `left`.
    pub(super) fn of(refs: &[(usize, usize)], left: &Scope) -> LateralUse {
        match refs.iter().find(|(up, _)| *up == 0) {
            Some(&(_, col)) => LateralUse {
                read: Lateral::Read,
                first_ref: Some(
                    left.cols
                        .get(col)
                        .and_then(|c| c.qual.as_deref())
                        .unwrap_or_default()
                        .to_string(),
                ),
            },
            None => LateralUse {
                read: Lateral::Unread,
                first_ref: None,
            },
        }
    }
}

/// A subquery in FROM without LATERAL that named an item before it: PostgreSQL's error says
/// the name exists but cannot be reached from there.
pub(crate) fn unreachable_from_here(e: SqlError, left: &Scope) -> SqlError {
    match e {
        SqlError::MissingFromEntry { table }
            if left
                .cols
                .iter()
                .any(|c| c.qual.as_deref() == Some(table.as_str())) =>
        {
            SqlError::InvalidFromReference { table, alias: None }
        }
        SqlError::UndefinedColumn { name } => match left.resolve(None, &name) {
            Ok(Some(i)) => SqlError::UnreachableColumn {
                table: left.cols[i].qual.as_deref().unwrap_or_default().to_string(),
                name,
            },
            _ => SqlError::UndefinedColumn { name },
        },
        e => e,
    }
}

pub(super) fn first_words(s: &str) -> String {
    leading_words(s, 4)
}

/// The first `n` words of `s` (naming a clause in an error without all of it).
pub fn leading_words(s: &str, n: usize) -> String {
    s.split_whitespace().take(n).collect::<Vec<_>>().join(" ")
}

/// PostgreSQL's default column name of an expression.
pub(crate) fn expr_name(e: &Expr) -> String {
    colname(e)
        .map(|(n, _)| n)
        .unwrap_or_else(|| "?column?".into())
}

/// The column name PostgreSQL gives an unaliased select item, with its strength
/// (`FigureColnameInternal`): 2 for a column, function or subquery name, 1 for a type name or
/// "case" (a weaker name that a CASE's ELSE or a cast's operand can override).
pub(super) fn colname(e: &Expr) -> Option<(String, u8)> {
    let strong = |n: &str| Some((n.to_string(), 2));
    match e {
        Expr::Identifier(i) => Some((ident(i), 2)),
        Expr::CompoundIdentifier(p) => p.last().map(|i| (ident(i), 2)),
        Expr::Function(f) => object_name(&f.name).last().map(|n| (n.clone(), 2)),
        Expr::Cast {
            expr, data_type, ..
        } => match colname(expr) {
            Some(named) if named.1 > 1 => Some(named),
            _ => sql_type(data_type)
                .ok()
                .map(|(t, _)| (t.cast_column_name().to_string(), 1)),
        },
        Expr::Nested(x) => colname(x),
        Expr::Case { else_result, .. } => match else_result.as_deref().and_then(colname) {
            Some(named) if named.1 > 1 => Some(named),
            _ => Some(("case".into(), 1)),
        },
        Expr::Exists { .. } => strong("exists"),
        Expr::Subquery(q) => match q.body.as_ref() {
            ast::SetExpr::Select(sel) => match sel.projection.first() {
                Some(SelectItem::ExprWithAlias { alias, .. }) => Some((ident(alias), 2)),
                Some(SelectItem::UnnamedExpr(x)) => Some((expr_name(x), 2)),
                _ => None,
            },
            _ => None,
        },
        Expr::Array(_) => strong("array"),
        // A subscripted value is named after what is subscripted.
        // `t.col[i]`: the last name before the subscript.
        Expr::CompoundFieldAccess { root, access_chain } => {
            match access_chain.iter().rev().find_map(|a| match a {
                ast::AccessExpr::Dot(e) => Some(e),
                ast::AccessExpr::Subscript(_) => None,
            }) {
                Some(e) => colname(e),
                None => colname(root),
            }
        }
        Expr::Interval(_) => Some(("interval".into(), 1)),
        // `date '…'` is a cast of a literal: named after the type.
        Expr::TypedString(ts) => sql_type(&ts.data_type)
            .ok()
            .map(|(t, _)| (t.cast_column_name().to_string(), 1)),
        Expr::Extract { .. } => strong("extract"),
        Expr::AtTimeZone { .. } => strong("timezone"),
        // The special syntaxes are named after the function PostgreSQL calls.
        Expr::Ceil { .. } => strong("ceil"),
        Expr::Floor { .. } => strong("floor"),
        Expr::Position { .. } => strong("position"),
        Expr::Substring { shorthand, .. } => {
            strong(if *shorthand { "substr" } else { "substring" })
        }
        Expr::Trim { trim_where, .. } => strong(match trim_where {
            Some(ast::TrimWhereField::Leading) => "ltrim",
            Some(ast::TrimWhereField::Trailing) => "rtrim",
            _ => "btrim",
        }),
        _ => None,
    }
}

pub fn literal(v: &ast::Value) -> Result<Value, SqlError> {
    Ok(match v {
        ast::Value::Number(n, _) => {
            if let Ok(i) = n.parse::<i64>() {
                Value::Int(i)
            } else if n.contains(['e', 'E']) && !n.contains('.') && n.parse::<f64>().is_ok() {
                Value::Numeric(numeric_canonical(n).ok_or_else(|| SqlError::Syntax {
                    message: format!("syntax error: bad number {n}"),
                })?)
            } else {
                Value::Numeric(numeric_canonical(n).ok_or_else(|| SqlError::Syntax {
                    message: format!("syntax error: bad number {n}"),
                })?)
            }
        }
        ast::Value::SingleQuotedString(s)
        | ast::Value::EscapedStringLiteral(s)
        | ast::Value::DoubleQuotedString(s) => Value::text(s.as_str()),
        ast::Value::DollarQuotedString(d) => Value::text(d.value.as_str()),
        ast::Value::Boolean(b) => Value::Bool(*b),
        ast::Value::Null => Value::Null,
        other => return Err(SqlError::feature(format!("literal {other}"))),
    })
}

/// Resolves an expression to type `t` where PostgreSQL would do so implicitly (unknown
/// literals, integer widening, numeric promotion, NULL).
pub fn coerce_expr(e: BExpr, t: PgType) -> Result<BExpr, SqlError> {
    match e {
        BExpr::Param(n, cell) => {
            type_param(&cell, t);
            Ok(BExpr::Param(n, cell))
        }
        BExpr::Const(Value::Text(s)) if t != PgType::Unknown && !t.is_string() => {
            Ok(BExpr::Const(parse_text(&s, t)?))
        }
        BExpr::Const(Value::Int(i))
            if matches!(t, PgType::Float4 | PgType::Float8 | PgType::Numeric) =>
        {
            Ok(BExpr::Const(cast_value(Value::Int(i), t)?))
        }
        BExpr::Const(Value::Numeric(n)) if matches!(t, PgType::Float4 | PgType::Float8) => {
            Ok(BExpr::Const(cast_value(Value::Numeric(n), t)?))
        }
        other => Ok(other),
    }
}

/// Explicit CAST: constants are converted now, other expressions at run time.
pub(super) fn coerce_or_cast(e: BExpr, t: PgType) -> Result<BExpr, SqlError> {
    match e {
        BExpr::Param(n, cell) => {
            // `$1::int8`: PostgreSQL gives the parameter the cast's type.
            type_param(&cell, t);
            Ok(BExpr::Param(n, cell))
        }
        BExpr::Const(v) => Ok(BExpr::Const(cast_value(v, t)?)),
        other => Ok(BExpr::Cast(Box::new(other), t)),
    }
}

/// The first context that types a parameter decides, as in PostgreSQL.
pub(super) fn type_param(cell: &Cell<PgType>, t: PgType) {
    if cell.get() == PgType::Unknown && t != PgType::Unknown {
        cell.set(t);
    }
}

/// An expression with one value per execution: constants, casts of them, and uncorrelated
/// scalar subqueries (evaluated once and cached).
pub(super) fn runtime_const(e: &BExpr) -> bool {
    match e {
        BExpr::Const(_) => true,
        BExpr::Cast(x, _) | BExpr::Neg(x) => runtime_const(x),
        BExpr::Scalar(q) => !q.correlated(),
        _ => false,
    }
}
