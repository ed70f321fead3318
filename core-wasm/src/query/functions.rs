//! Binding and evaluating function families: regex, inet, json, numeric, arrays, date/time calls.

use super::*;

/// The regular expression functions, by the kinds of their arguments (`t` text, `i` integer)
/// in each arity PostgreSQL 15 has, their result type, and the name the executor calls.
/// `substring(text, text)` (also `SUBSTRING(s FROM pattern)`) is the regular expression one;
/// `substr` with an untyped second argument reads it as an integer, as PostgreSQL's does.
pub(super) fn bind_regex_call(
    name: &str,
    bargs: &mut Vec<BExpr>,
    types: &[PgType],
) -> Option<Result<(BExpr, PgType), SqlError>> {
    let stringy = |t: &PgType| *t == PgType::Unknown || t.is_string();
    let (kinds, ty, call): (&str, PgType, &str) = match (name, types) {
        ("substring", [_, p]) if stringy(p) => ("tt", PgType::Text, "regexp_substring"),
        // substring(text, text, text) is SQL's SIMILAR-pattern form, not positions.
        ("substring", [_, a, b]) if *a == PgType::Unknown || a.is_string() || b.is_string() => {
            return Some(Err(SqlError::feature(
                "substring(text FROM pattern FOR escape) (SQL regular expressions)",
            )))
        }
        // Its argument was checked against STRING_SIGNATURES.
        ("chr", [_]) => ("i", PgType::Text, name),
        ("substr" | "substring", [first, rest @ ..])
            if !rest.is_empty()
                && rest.len() <= 2
                && rest
                    .iter()
                    .all(|t| matches!(t, PgType::Unknown | PgType::Int2 | PgType::Int4)) =>
        {
            // substr(bytea, …) counts bytes and gives bytea.
            let (kinds, ty) = match (*first == PgType::Bytea, rest.len()) {
                (true, 1) => ("bi", PgType::Bytea),
                (true, _) => ("bii", PgType::Bytea),
                (false, 1) => ("ti", PgType::Text),
                (false, _) => ("tii", PgType::Text),
            };
            (kinds, ty, "substr")
        }
        ("substr" | "substring", _) => return Some(Err(no_such_function(name, types))),
        ("regexp_replace", [_, _, _]) => ("ttt", PgType::Text, name),
        ("regexp_replace", [_, _, _, f]) if stringy(f) => ("tttt", PgType::Text, name),
        ("regexp_replace", [_, _, _, _]) => ("ttti", PgType::Text, name),
        ("regexp_replace", [_, _, _, _, _]) => ("tttii", PgType::Text, name),
        ("regexp_replace", [_, _, _, _, _, _]) => ("tttiit", PgType::Text, name),
        ("regexp_match", [_, _] | [_, _, _]) => (&"ttt"[..types.len()], PgType::TextArray, name),
        ("regexp_split_to_array", [_, _] | [_, _, _]) => {
            (&"ttt"[..types.len()], PgType::TextArray, name)
        }
        ("regexp_like", [_, _] | [_, _, _]) => (&"ttt"[..types.len()], PgType::Bool, name),
        ("regexp_count", [_, _] | [_, _, _] | [_, _, _, _]) => {
            (&"ttit"[..types.len()], PgType::Int4, name)
        }
        ("regexp_substr", [_, _, ..]) if types.len() <= 6 => {
            (&"ttiiti"[..types.len()], PgType::Text, name)
        }
        _ => return None,
    };
    let mut args = Vec::with_capacity(bargs.len());
    for ((b, t), kind) in std::mem::take(bargs)
        .into_iter()
        .zip(types)
        .zip(kinds.chars())
    {
        let fits = match kind {
            't' => stringy(t),
            'b' => *t == PgType::Bytea,
            // integer: bigint does not convert to it implicitly.
            _ => matches!(t, PgType::Unknown | PgType::Int2 | PgType::Int4),
        };
        if !fits {
            return Some(Err(no_such_function(name, types)));
        }
        let to = match kind {
            't' => PgType::Text,
            'b' => PgType::Bytea,
            _ => PgType::Int4,
        };
        match coerce_expr(b, to) {
            Ok(b) => args.push(b),
            Err(e) => return Some(Err(e)),
        }
    }
    Some(Ok((BExpr::Func(call.to_string(), args), ty)))
}

/// PostgreSQL's `width_bucket_float8`: the bucket of `x` among `n` equal ones from `lo` to
/// `hi` (either way round), 0 before them and `n + 1` after, with its errors (2201G).
pub(super) fn width_bucket(x: f64, lo: f64, hi: f64, n: i64) -> Result<i64, SqlError> {
    let bad = |message: &str| SqlError::MathDomain {
        code: "2201G",
        message: message.into(),
    };
    if n <= 0 {
        return Err(bad("count must be greater than zero"));
    }
    if x.is_nan() || lo.is_nan() || hi.is_nan() {
        return Err(bad("operand, lower bound, and upper bound cannot be NaN"));
    }
    if lo.is_infinite() || hi.is_infinite() {
        return Err(bad("lower and upper bounds must be finite"));
    }
    let count = n as f64;
    // Past the last bucket: `n + 1`, an int4 as the result is.
    let after = || {
        if n >= i64::from(i32::MAX) {
            Err(SqlError::MathDomain {
                code: "22003",
                message: "integer out of range".into(),
            })
        } else {
            Ok(n + 1)
        }
    };
    // Rounding must not reach past the last bucket; PostgreSQL caps it too.
    let inside = |fraction: f64| ((fraction * count) as i64).min(n - 1) + 1;
    if lo < hi {
        if x < lo {
            Ok(0)
        } else if x >= hi {
            after()
        } else {
            Ok(inside((x - lo) / (hi - lo)))
        }
    } else if lo > hi {
        if x > lo {
            Ok(0)
        } else if x <= hi {
            after()
        } else {
            Ok(inside((lo - x) / (lo - hi)))
        }
    } else {
        Err(bad("lower bound cannot equal upper bound"))
    }
}

/// `chr(n)`: the character of code point `n` (UTF-8), with PostgreSQL's errors.
pub(super) fn chr(n: i64) -> Result<char, SqlError> {
    let limit = |message: String| SqlError::ProgramLimit { message };
    if n == 0 {
        return Err(limit("null character not permitted".into()));
    }
    if n < 0 {
        return Err(SqlError::InvalidParameter {
            message: "character number must be positive".into(),
        });
    }
    let code = u32::try_from(n).unwrap_or(u32::MAX);
    if code > 0x10FFFF {
        return Err(limit(format!(
            "requested character too large for encoding: {n}"
        )));
    }
    char::from_u32(code)
        .ok_or_else(|| limit(format!("requested character not valid for encoding: {n}")))
}

/// A regular expression function over non-NULL arguments of the kinds
/// [`bind_regex_call`] gave them.
pub(super) fn regexp_call(name: &str, a: &[Value]) -> Result<Value, SqlError> {
    let text = |i: usize| match a.get(i) {
        Some(Value::Text(s)) => Ok(s.to_string()),
        _ => Err(SqlError::internal(format!(
            "{name}: argument {i} is not text"
        ))),
    };
    let int = |i: usize, default: i64| match a.get(i) {
        Some(Value::Int(n)) => Ok(*n),
        None => Ok(default),
        _ => Err(SqlError::internal(format!(
            "{name}: argument {i} is not an integer"
        ))),
    };
    let flags = |i: usize| match a.get(i) {
        Some(_) => crate::regex::Flags::parse(&text(i)?),
        None => Ok(crate::regex::Flags::default()),
    };
    let (s, pattern) = (text(0)?, text(1)?);
    let whole_or_first_group = |groups: Vec<Option<String>>| -> Value {
        let pick = usize::from(groups.len() > 1);
        groups
            .into_iter()
            .nth(pick)
            .flatten()
            .map_or(Value::Null, Value::text)
    };
    Ok(match name {
        "regexp_replace" => {
            let replacement = text(2)?;
            // (source, pattern, replacement [, flags]) or (…, start [, n [, flags]]): without
            // `n`, the first match is replaced, or every one with `g`; `n` 0 is every one.
            let (start, n, f) = match a.get(3) {
                None => (1, 1, crate::regex::Flags::default()),
                Some(Value::Text(_)) => {
                    let f = flags(3)?;
                    (1, if f.global { 0 } else { 1 }, f)
                }
                Some(_) => {
                    let f = flags(5)?;
                    let n = int(4, 1)?;
                    (int(3, 1)?, if f.global && a.len() < 5 { 0 } else { n }, f)
                }
            };
            let re = crate::regex::compile(&pattern, f)?;
            Value::text(crate::regex::replace(&s, &re, &replacement, start, n)?)
        }
        "regexp_split_to_array" => {
            let re = crate::regex::compile(&pattern, flags(2)?.single(name)?)?;
            Value::Array(
                crate::regex::split(&s, &re)
                    .into_iter()
                    .map(Value::text)
                    .collect::<Vec<_>>()
                    .into(),
            )
        }
        "regexp_match" => {
            let re = crate::regex::compile(&pattern, flags(2)?.single(name)?)?;
            match crate::regex::nth_match(&s, &re, 1, 1)? {
                None => Value::Null,
                Some(groups) => {
                    let items: Vec<Value> = if groups.len() > 1 {
                        groups
                            .into_iter()
                            .skip(1)
                            .map(|g| g.map_or(Value::Null, Value::text))
                            .collect()
                    } else {
                        groups
                            .into_iter()
                            .map(|g| g.map_or(Value::Null, Value::text))
                            .collect()
                    };
                    Value::Array(items.into())
                }
            }
        }
        "regexp_like" => {
            let re = crate::regex::compile(&pattern, flags(2)?.single(name)?)?;
            Value::Bool(re.is_match(&s))
        }
        "regexp_count" => {
            let re = crate::regex::compile(&pattern, flags(3)?.single(name)?)?;
            Value::Int(crate::regex::count(&s, &re, int(2, 1)?)?)
        }
        "regexp_substr" => {
            let re = crate::regex::compile(&pattern, flags(4)?.single(name)?)?;
            let sub = int(5, 0)?;
            if sub < 0 {
                return Err(SqlError::InvalidParameter {
                    message: format!("invalid value for parameter \"subexpr\": {sub}"),
                });
            }
            match crate::regex::nth_match(&s, &re, int(2, 1)?, int(3, 1)?)? {
                None => Value::Null,
                // A pattern without groups gives its whole match for any `subexpr`.
                Some(groups) if groups.len() == 1 => groups
                    .into_iter()
                    .flatten()
                    .next()
                    .map_or(Value::Null, Value::text),
                Some(groups) => groups
                    .into_iter()
                    .nth(usize::try_from(sub).unwrap_or(usize::MAX))
                    .flatten()
                    .map_or(Value::Null, Value::text),
            }
        }
        // substring(text FROM pattern): the first group's text if the pattern has groups.
        _ => {
            let re = crate::regex::compile(&pattern, crate::regex::Flags::default())?;
            match crate::regex::nth_match(&s, &re, 1, 1)? {
                None => Value::Null,
                Some(groups) => whole_or_first_group(groups),
            }
        }
    })
}

/// PostgreSQL's 42803 for the source column `i` of `scope`, used outside an aggregate where
/// the rows are grouped, with its position at the first reference in `exprs` (the clauses in
/// the order PostgreSQL checks them).
pub(super) fn grouping_error<'e>(
    scope: &Scope,
    i: usize,
    exprs: impl IntoIterator<Item = &'e Expr>,
    keys: &[Expr],
) -> SqlError {
    let c = &scope.cols[i];
    let name = match &c.qual {
        Some(q) => format!("{q}.{}", c.name),
        None => c.name.to_string(),
    };
    let err = SqlError::Grouping { name };
    let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    if let Some(spot) = exprs
        .into_iter()
        .find_map(|e| ungrouped_reference(e, c.qual.as_deref(), &c.name, &keys))
    {
        crate::errpos::note(&err, spot);
    }
    err
}

/// Where `e` first names the column `qual.name` outside an aggregate call and outside the
/// GROUP BY expressions `keys` (as printed), PostgreSQL's position of an ungrouped column.
/// Only the common expression forms are walked; `None` when the reference is not found in
/// them.
pub(super) fn ungrouped_reference(
    e: &Expr,
    qual: Option<&str>,
    name: &str,
    keys: &[String],
) -> Option<crate::errpos::Spot> {
    if keys.iter().any(|k| *k == e.to_string()) {
        return None;
    }
    let walk = |x: &Expr| ungrouped_reference(x, qual, name, keys);
    match e {
        Expr::Identifier(i) => {
            (ident(i) == name).then(|| crate::errpos::Spot::at(i.span.start, ident_token(i)))
        }
        Expr::CompoundIdentifier(parts) => match parts.as_slice() {
            [.., q, last] if ident(last) == name && qual.is_none_or(|w| ident(q) == w) => parts
                .first()
                .map(|i| crate::errpos::Spot::at(i.span.start, ident_token(i))),
            _ => None,
        },
        Expr::BinaryOp { left, right, .. } => walk(left).or_else(|| walk(right)),
        Expr::UnaryOp { expr, .. }
        | Expr::Nested(expr)
        | Expr::Cast { expr, .. }
        | Expr::IsNull(expr)
        | Expr::IsNotNull(expr)
        | Expr::IsTrue(expr)
        | Expr::IsFalse(expr)
        | Expr::IsNotTrue(expr)
        | Expr::IsNotFalse(expr)
        | Expr::IsUnknown(expr)
        | Expr::IsNotUnknown(expr) => walk(expr),
        Expr::Between {
            expr, low, high, ..
        } => walk(expr).or_else(|| walk(low)).or_else(|| walk(high)),
        Expr::In {
            expr,
            target: ast::InTarget::List(list),
            ..
        } => walk(expr).or_else(|| list.iter().find_map(walk)),
        Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => {
            walk(expr).or_else(|| walk(pattern))
        }
        Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => operand
            .as_deref()
            .and_then(walk)
            .or_else(|| {
                conditions
                    .iter()
                    .find_map(|w| walk(&w.condition).or_else(|| walk(&w.result)))
            })
            .or_else(|| else_result.as_deref().and_then(walk)),
        Expr::Function(f) => {
            let fname = object_name(&f.name).last().cloned().unwrap_or_default();
            if f.over.is_some() || aggregate_func(&fname, false).is_some() {
                return None;
            }
            match &f.args {
                ast::FunctionArguments::List(list) => list.args.iter().find_map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))
                    | ast::FunctionArg::Named {
                        arg: ast::FunctionArgExpr::Expr(x),
                        ..
                    } => walk(x),
                    _ => None,
                }),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The array functions PostgreSQL declares over `anycompatiblearray` / `anycompatible`:
/// `array_append`, `array_prepend`, `array_cat`, `array_remove`, `array_replace`,
/// `array_position` (with an optional start), `array_positions`, and `array_ndims` /
/// `array_dims` over `anyarray`. The array type comes from an array argument, or from a typed
/// element's array type; untyped literals take it. `None`: not one of them.
pub(super) fn bind_array_function(
    name: &str,
    args: &mut Vec<BExpr>,
    types: &[PgType],
) -> Option<Result<(BExpr, PgType), SqlError>> {
    // Per argument: is it the array (true) or an element (false)?
    let shape: &[bool] = match (name, types.len()) {
        ("array_append" | "array_remove" | "array_position" | "array_positions", 2) => {
            &[true, false]
        }
        ("array_position", 3) => &[true, false],
        ("array_prepend", 2) => &[false, true],
        ("array_cat", 2) => &[true, true],
        ("array_replace", 3) => &[true, false, false],
        ("array_ndims" | "array_dims", 1) => &[true],
        (
            "array_append" | "array_remove" | "array_position" | "array_positions"
            | "array_prepend" | "array_cat" | "array_replace" | "array_ndims" | "array_dims",
            _,
        ) => return Some(Err(no_such_function(name, types))),
        _ => return None,
    };
    Some((|| {
        let array_given = shape
            .iter()
            .zip(types)
            .find(|(is_array, t)| **is_array && **t != PgType::Unknown)
            .map(|(_, t)| *t);
        let element_given = shape
            .iter()
            .zip(types)
            .find(|(is_array, t)| !**is_array && **t != PgType::Unknown)
            .map(|(_, t)| *t);
        let ty = match (array_given, element_given) {
            (Some(t), _) if t.is_array() => t,
            (Some(_), _) => return Err(no_such_function(name, types)),
            (None, Some(e)) => e.array_or_text(),
            // Untyped literals only: PostgreSQL resolves them as text.
            (None, None) => PgType::TextArray,
        };
        let elem = ty.element().unwrap_or(PgType::Text);
        let taken = std::mem::take(args);
        for (i, (arg, t)) in taken.into_iter().zip(types).enumerate() {
            let is_array = shape.get(i).copied();
            args.push(match is_array {
                Some(true) if *t == ty || *t == PgType::Unknown => coerce_or_cast(arg, ty)?,
                Some(true) => return Err(no_such_function(name, types)),
                Some(false) => cast_from(arg, *t, elem)?,
                // array_position's start: an integer.
                None if matches!(t, PgType::Int2 | PgType::Int4 | PgType::Unknown) => {
                    coerce_or_cast(arg, PgType::Int4)?
                }
                None => return Err(no_such_function(name, types)),
            });
        }
        let out = match name {
            "array_position" | "array_ndims" => PgType::Int4,
            "array_positions" => PgType::Int4Array,
            "array_dims" => PgType::Text,
            _ => ty,
        };
        if name == "array_dims" && types.first().is_some_and(|t| t.is_vector()) {
            args.push(BExpr::Const(Value::Int(0)));
        }
        Ok((BExpr::Func(name.to_string(), std::mem::take(args)), out))
    })())
}

/// PostgreSQL's functions of `inet`: `host`, `text`, `abbrev`, `masklen`, `family`,
/// `netmask`, `hostmask`, `broadcast`, `set_masklen` (an untyped literal read as inet).
/// `None`: not one of them with an inet first argument.
#[allow(clippy::type_complexity)]
pub(super) fn bind_inet_function(
    name: &str,
    args: &mut [BExpr],
    types: &[PgType],
) -> Option<Result<(BExpr, PgType), SqlError>> {
    let out = match name {
        "host" | "text" | "abbrev" => PgType::Text,
        "masklen" | "family" => PgType::Int4,
        "netmask" | "hostmask" | "broadcast" | "set_masklen" => PgType::Inet,
        _ => return None,
    };
    let inet_first = |t: &PgType| *t == PgType::Inet || *t == PgType::Unknown && name != "text";
    let shape_ok = match (name, types) {
        ("set_masklen", [a, n]) => {
            inet_first(a) && (matches!(n, PgType::Int2 | PgType::Int4) || *n == PgType::Unknown)
        }
        ("set_masklen", _) => false,
        (_, [a]) => inet_first(a),
        _ => false,
    };
    if !shape_ok {
        // `text(x)` of another type is the cast, handled elsewhere.
        return (name != "text").then(|| Err(no_such_function(name, types)));
    }
    let bound = args
        .iter_mut()
        .enumerate()
        .map(|(i, a)| {
            let x = std::mem::replace(a, BExpr::Const(Value::Null));
            coerce_expr(x, if i == 0 { PgType::Inet } else { PgType::Int4 })
        })
        .collect::<Result<Vec<_>, _>>();
    Some(bound.map(|b| (BExpr::Func(format!("inet_fn:{name}"), b), out)))
}

/// The `json` functions. The ones taking any type (`to_json`, `json_build_object`,
/// `json_build_array`) get each argument's type as a constant after it, to write the value
/// as that type writes it in JSON.
pub(super) fn bind_json_function(
    name: &str,
    args: &mut Vec<BExpr>,
    types: &[PgType],
) -> Option<Result<(BExpr, PgType), SqlError>> {
    let take = |args: &mut Vec<BExpr>| std::mem::take(args);
    let typed = |args: Vec<BExpr>| -> Vec<BExpr> {
        args.into_iter()
            .zip(types)
            .flat_map(|(a, t)| {
                // An untyped literal is text to json, as PostgreSQL resolves `unknown`.
                let t = if *t == PgType::Unknown {
                    PgType::Text
                } else {
                    *t
                };
                // A record's fields go with it by name and type (its value holds neither).
                let ty = match t {
                    PgType::Record(fields) => Value::Array(
                        fields
                            .iter()
                            .flat_map(|(n, f)| [Value::text(*n), Value::Int(f.oid().into())])
                            .collect(),
                    ),
                    t => Value::Int(t.oid().into()),
                };
                [a, BExpr::Const(ty)]
            })
            .collect()
    };
    let json_arg = |args: &mut Vec<BExpr>| -> Result<Vec<BExpr>, SqlError> {
        match types {
            [PgType::Json | PgType::Unknown] => {
                Ok(vec![coerce_expr(take(args).remove(0), PgType::Json)?])
            }
            _ => Err(no_such_function(name, types)),
        }
    };
    let call = |f: &str, a: Vec<BExpr>| BExpr::Func(format!("json_fn:{f}"), a);
    Some(match name {
        // An untyped literal has no type for to_json's anyelement to take.
        "to_json" if types == [PgType::Unknown] => Err(SqlError::DatatypeMismatch {
            message: "could not determine polymorphic type because input has type unknown".into(),
            hint: None,
        }),
        "to_json" if types.len() == 1 => Ok((call(name, typed(take(args))), PgType::Json)),
        // array_to_json(anyarray [, pretty]): to_json's array; pretty puts each top-level
        // element after the first on a line of its own.
        "array_to_json" if matches!(types, [a] | [a, PgType::Bool | PgType::Unknown] if a.is_array()) =>
        {
            let mut all = take(args);
            let pretty = if all.len() == 2 { all.pop() } else { None };
            let mut bound = match typed(all).into_iter().collect::<Vec<_>>() {
                v if v.len() == 2 => v,
                _ => return Some(Err(SqlError::internal("array_to_json's argument"))),
            };
            match pretty {
                Some(p) => match coerce_expr(p, PgType::Bool) {
                    Ok(p) => {
                        bound.push(p);
                        Ok((call("array_to_json", bound), PgType::Json))
                    }
                    Err(e) => Err(e),
                },
                None => Ok((call("to_json", bound), PgType::Json)),
            }
        }
        "array_to_json" => Err(no_such_function(name, types)),
        // row_to_json(record): to_json's object of its fields.
        "row_to_json" if matches!(types, [PgType::Record(_)]) => {
            Ok((call("to_json", typed(take(args))), PgType::Json))
        }
        "row_to_json" => Err(no_such_function(name, types)),
        "json_build_object" | "json_build_array" => {
            Ok((call(name, typed(take(args))), PgType::Json))
        }
        // json_extract_path(json, VARIADIC text[]): the path's steps as one text[].
        "json_extract_path" | "json_extract_path_text"
            if types.len() >= 2
                && matches!(types[0], PgType::Json | PgType::Unknown)
                && types[1..]
                    .iter()
                    .all(|t| t.is_string() || *t == PgType::Unknown) =>
        {
            let mut it = take(args).into_iter();
            let doc = match it.next() {
                Some(d) => coerce_expr(d, PgType::Json),
                None => Err(SqlError::internal("json_extract_path without arguments")),
            };
            let steps = it
                .zip(&types[1..])
                .map(|(s, t)| match t {
                    PgType::Unknown => coerce_expr(s, PgType::Text),
                    t => cast_from(s, *t, PgType::Text),
                })
                .collect::<Result<Vec<_>, _>>();
            let ty = if name == "json_extract_path" {
                PgType::Json
            } else {
                PgType::Text
            };
            doc.and_then(|d| Ok((call(name, vec![d, BExpr::Func("array".into(), steps?)]), ty)))
        }
        "json_extract_path" | "json_extract_path_text" => Err(no_such_function(name, types)),
        "json_typeof" => json_arg(args).map(|a| (call(name, a), PgType::Text)),
        "json_array_length" => json_arg(args).map(|a| (call(name, a), PgType::Int4)),
        "to_json" => Err(no_such_function(name, types)),
        _ => return None,
    })
}

/// The type [`bind_json_function`] passes beside a value: an OID, or a record's fields.
pub(crate) fn json_slot_type(slot: &Value) -> PgType {
    match slot {
        Value::Int(oid) => u32::try_from(*oid)
            .ok()
            .and_then(crate::types::type_by_oid)
            .unwrap_or(PgType::Text),
        Value::Array(_) => PgType::Record(&[]),
        _ => PgType::Text,
    }
}

/// A value as JSON, as `datum_to_json` writes it: a record as an object of its fields
/// (`{"x":1,"n":1}`, no spaces, as `composite_to_json`), anything else by its type.
pub(super) fn write_json_typed(v: &Value, slot: &Value, out: &mut String) {
    match (v, slot) {
        (Value::Array(fields), Value::Array(shape)) => {
            out.push('{');
            for (i, (field, pair)) in fields.iter().zip(shape.chunks(2)).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if let Some(Value::Text(name)) = pair.first() {
                    crate::json::quote(name, out);
                }
                out.push(':');
                let ty = json_slot_type(pair.get(1).unwrap_or(&Value::Null));
                crate::json::write_value(field, ty, out);
            }
            out.push('}');
        }
        _ => crate::json::write_value(v, json_slot_type(slot), out),
    }
}

/// Evaluates [`bind_json_function`]'s calls and the `->` / `->>` operators.
pub(super) fn eval_json_function(name: &str, a: &[Value]) -> Result<Value, SqlError> {
    // Typed arguments come in pairs: the value, then its type's OID (a record's field names
    // and types).
    let pairs = || {
        a.chunks(2).map(|p| {
            (
                p.first().unwrap_or(&Value::Null),
                p.get(1).unwrap_or(&Value::Null),
            )
        })
    };
    let json_text = |i: usize| match a.get(i) {
        Some(Value::Text(s)) => Some(&**s),
        _ => None,
    };
    Ok(match name {
        "to_json" => match pairs().next() {
            Some((v, _)) if v.is_null() => Value::Null,
            Some((v, ty)) => {
                let mut out = String::new();
                write_json_typed(v, ty, &mut out);
                Value::text(out)
            }
            None => Value::Null,
        },
        "array_to_json" => match (a.first(), a.get(1), a.get(2)) {
            (Some(Value::Array(items)), Some(slot), Some(pretty)) if !pretty.is_null() => {
                let sep = if *pretty == Value::Bool(true) {
                    ",\n "
                } else {
                    ","
                };
                let elem = json_slot_type(slot).element().unwrap_or(PgType::Text);
                let mut out = String::from("[");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(sep);
                    }
                    crate::json::write_value(item, elem, &mut out);
                }
                out.push(']');
                Value::text(out)
            }
            _ => Value::Null,
        },
        "json_build_array" => {
            let mut out = String::from("[");
            for (i, (v, ty)) in pairs().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json_typed(v, ty, &mut out);
            }
            out.push(']');
            Value::text(out)
        }
        "json_build_object" => {
            if !a.len().is_multiple_of(4) {
                return Err(SqlError::InvalidParameterHint {
                    message: "argument list must have even number of elements".into(),
                    hint: "The arguments of json_build_object() must consist of alternating keys and values.".into(),
                });
            }
            let mut out = String::from("{");
            let all: Vec<_> = pairs().collect();
            for (i, kv) in all.chunks(2).enumerate() {
                let [(k, kt), (v, vt)] = kv else { break };
                if k.is_null() {
                    return Err(SqlError::InvalidParameterHint {
                        message: format!("argument {} cannot be null", 2 * i + 1),
                        hint: "Object keys should be text.".into(),
                    });
                }
                let kt = &json_slot_type(kt);
                if kt.is_array() || matches!(kt, PgType::Json | PgType::Record(_)) {
                    return Err(SqlError::InvalidParameter {
                        message: "key value must be scalar, not array, composite, or json".into(),
                    });
                }
                if i > 0 {
                    out.push_str(", ");
                }
                // A key is always a string: a number key is quoted.
                let mut key = String::new();
                crate::json::write_value(k, *kt, &mut key);
                if key.starts_with('"') {
                    out.push_str(&key);
                } else {
                    crate::json::quote(&key, &mut out);
                }
                out.push_str(" : ");
                write_json_typed(v, vt, &mut out);
            }
            out.push('}');
            Value::text(out)
        }
        "json_typeof" => match json_text(0) {
            Some(s) => Value::text(crate::json::typeof_(s)?),
            None => Value::Null,
        },
        "json_array_length" => match json_text(0) {
            Some(s) => Value::Int(crate::json::array_length(s)?),
            None => Value::Null,
        },
        "#>" | "#>>" | "json_extract_path" | "json_extract_path_text" => {
            let (Some(doc), Some(Value::Array(steps))) = (json_text(0), a.get(1)) else {
                return Ok(Value::Null);
            };
            let path: Vec<Option<&str>> = steps
                .iter()
                .map(|s| match s {
                    Value::Text(t) => Some(&**t),
                    _ => None,
                })
                .collect();
            crate::json::get_path(doc, &path, matches!(name, "#>>" | "json_extract_path_text"))?
        }
        "->" | "->>" => {
            let (Some(doc), Some(sel)) = (json_text(0), a.get(1)) else {
                return Ok(Value::Null);
            };
            let (key, index) = match sel {
                Value::Text(k) => (Some(k.to_string()), None),
                Value::Int(i) => (None, Some(*i)),
                _ => return Ok(Value::Null),
            };
            if name == "->>" {
                crate::json::get_text(doc, key.as_deref(), index)?
            } else {
                match crate::json::get(doc, key.as_deref(), index)? {
                    Some((member, _)) => Value::text(member),
                    None => Value::Null,
                }
            }
        }
        other => {
            return Err(SqlError::internal(format!("no json function {other}")));
        }
    })
}

/// Evaluates [`bind_inet_function`]'s calls (NULL in, NULL out).
pub(super) fn eval_inet_function(name: &str, a: &[Value]) -> Result<Value, SqlError> {
    let Some(Value::Bytes(b)) = a.first() else {
        return Ok(Value::Null);
    };
    let text = |s: Option<String>| s.map_or(Value::Null, Value::text);
    let int = |n: Option<i64>| n.map_or(Value::Null, Value::Int);
    let inet = |v: Option<Vec<u8>>| v.map_or(Value::Null, Value::Bytes);
    Ok(match name {
        "host" => text(crate::inet::host(b)),
        "text" => Value::text(crate::inet::show(b)),
        "abbrev" => Value::text(crate::inet::format(b)),
        "masklen" => int(crate::inet::masklen(b)),
        "family" => int(crate::inet::family(b)),
        "set_masklen" => match a.get(1) {
            Some(Value::Int(n)) => match crate::inet::set_masklen(b, *n) {
                Some(Some(v)) => Value::Bytes(v),
                Some(None) => {
                    return Err(SqlError::InvalidParameter {
                        message: format!("invalid mask length: {n}"),
                    })
                }
                None => Value::Null,
            },
            _ => Value::Null,
        },
        which => inet(crate::inet::derived(b, which)),
    })
}

/// `div`, `gcd`, `lcm`, `factorial`, `scale`, `min_scale`, `trim_scale` with PostgreSQL 15's
/// signatures: `gcd` / `lcm` over integer, bigint (a mix is bigint) or numeric, the others
/// over numeric (`factorial` over bigint). `None`: not one of them.
pub(super) fn bind_numeric_function(
    name: &str,
    args: &mut Vec<BExpr>,
    types: &[PgType],
) -> Option<Result<(BExpr, PgType), SqlError>> {
    let arity = match name {
        "div" | "gcd" | "lcm" => 2,
        "factorial" | "scale" | "min_scale" | "trim_scale" => 1,
        _ => return None,
    };
    Some((|| {
        let numbers = types
            .iter()
            .all(|t| *t == PgType::Unknown || t.is_numeric_family() && !t.is_reg());
        if types.len() != arity || !numbers || types.contains(&PgType::Oid) {
            return Err(no_such_function(name, types));
        }
        // Double precision converts to numeric by assignment only: no candidate takes it.
        if types
            .iter()
            .any(|t| matches!(t, PgType::Float4 | PgType::Float8))
        {
            return Err(no_such_function(name, types));
        }
        let (arg, out) = match name {
            "gcd" | "lcm" if types.contains(&PgType::Numeric) => (PgType::Numeric, PgType::Numeric),
            "gcd" | "lcm" if types.contains(&PgType::Int8) => (PgType::Int8, PgType::Int8),
            "gcd" | "lcm" if types.contains(&PgType::Int4) => (PgType::Int4, PgType::Int4),
            // Two smallints (or untyped literals) fit integer and bigint alike.
            "gcd" | "lcm" => {
                return Err(ambiguous(format!(
                    "function {name}({}) is not unique",
                    types
                        .iter()
                        .map(|t| t.sql_name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
            "factorial" if types.contains(&PgType::Numeric) => {
                return Err(no_such_function(name, types))
            }
            "factorial" => (PgType::Int8, PgType::Numeric),
            "scale" | "min_scale" => (PgType::Numeric, PgType::Int4),
            _ => (PgType::Numeric, PgType::Numeric),
        };
        let bound = std::mem::take(args)
            .into_iter()
            .map(|a| coerce_or_cast(a, arg))
            .collect::<Result<Vec<_>, _>>()?;
        // gcd and lcm over integers check the result against their width.
        let width = match out {
            PgType::Int4 if name != "scale" && name != "min_scale" => "4",
            PgType::Int8 => "8",
            _ => "",
        };
        Ok((BExpr::Func(format!("numeric_fn:{name}{width}"), bound), out))
    })())
}

/// Evaluates a call bound by [`bind_numeric_function`].
pub(super) fn eval_numeric_function(name: &str, a: &[Value]) -> Result<Value, SqlError> {
    use crate::numeric as n;
    if a.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let text = |i: usize| format_text(&a[i], PgType::Numeric).unwrap_or_default();
    Ok(match (name, a) {
        ("gcd4" | "lcm4" | "gcd8" | "lcm8", [Value::Int(x), Value::Int(y)]) => {
            let r = n::integer_gcd_lcm(*x, *y, name.starts_with("lcm"))?;
            if name.ends_with('4') {
                fit_integer(r.into(), PgType::Int4)?
            } else {
                Value::Int(r)
            }
        }
        ("gcd" | "lcm", _) => {
            Value::Numeric(n::numeric_gcd_lcm(&text(0), &text(1), name == "lcm")?)
        }
        ("div", _) => Value::Numeric(n::numeric_div_trunc(&text(0), &text(1))?),
        ("factorial", [Value::Int(x)]) => Value::Numeric(n::factorial(*x)?),
        ("scale", _) => n::scale_of(&text(0)).map_or(Value::Null, |s| Value::Int(s as i64)),
        ("min_scale", _) => n::min_scale(&text(0)).map_or(Value::Null, |s| Value::Int(s as i64)),
        ("trim_scale", _) => Value::Numeric(n::trim_scale(&text(0))),
        _ => return Err(SqlError::internal(format!("numeric function {name}"))),
    })
}

/// PostgreSQL 15's signatures of the string functions, one letter per argument: `T` text (any
/// string type converts to it), `B` bytea, `I` integer. A call none of them fits is 42883, as
/// PostgreSQL has no implicit cast from a number to text or from bigint to integer.
pub(super) const STRING_SIGNATURES: &[(&str, &[&str])] = &[
    ("lower", &["T"]),
    ("upper", &["T"]),
    ("length", &["T", "B"]),
    ("char_length", &["T"]),
    ("character_length", &["T"]),
    ("octet_length", &["T", "B"]),
    ("btrim", &["T", "TT", "BB"]),
    ("ltrim", &["T", "TT", "BB"]),
    ("rtrim", &["T", "TT", "BB"]),
    ("replace", &["TTT"]),
    ("split_part", &["TTI"]),
    ("left", &["TI"]),
    ("right", &["TI"]),
    ("repeat", &["TI"]),
    ("strpos", &["TT"]),
    ("substr", &["TI", "TII", "BI", "BII"]),
    ("md5", &["T", "B"]),
    ("quote_ident", &["T"]),
    ("chr", &["I"]),
    ("initcap", &["T"]),
    ("reverse", &["T"]),
    ("translate", &["TTT"]),
    ("ascii", &["T"]),
    ("lpad", &["TI", "TIT"]),
    ("rpad", &["TI", "TIT"]),
    ("to_hex", &["I", "L"]),
];

/// Whether arguments of `types` fit `signature` (see [`STRING_SIGNATURES`]); an untyped
/// literal fits any letter.
pub(super) fn signature_fits(signature: &str, types: &[PgType]) -> bool {
    signature.len() == types.len()
        && signature.chars().zip(types).all(|(want, t)| match want {
            _ if *t == PgType::Unknown => true,
            'T' => t.is_string(),
            'B' => *t == PgType::Bytea,
            'I' => matches!(t, PgType::Int2 | PgType::Int4),
            'L' => *t == PgType::Int8,
            _ => false,
        })
}

/// Evaluates a date/time function bound by [`bind_datetime_call`] (`date_trunc:<type>`,
/// `extract:<type>`, `date_part:<type>`, after the source type PostgreSQL's units and errors
/// depend on).
pub(super) fn eval_datetime_call(name: &str, a: &[Value]) -> Result<Value, SqlError> {
    let (func, source) = name.split_once(':').unwrap_or_default();
    let ty = crate::types::ALL_TYPES
        .into_iter()
        .find(|t| t.sql_name() == source)
        .ok_or_else(|| SqlError::internal("date/time function type"))?;
    let (Some(Value::Text(unit)), Some(v)) = (a.first(), a.get(1)) else {
        return Ok(Value::Null);
    };
    Ok(match (func, v) {
        (_, Value::Null) => Value::Null,
        ("date_trunc", Value::Timestamp(ts)) if ty == PgType::Timestamptz => {
            Value::Timestamp(crate::datetime::trunc_timestamptz(unit, *ts)?)
        }
        ("date_trunc", Value::Timestamp(ts)) => {
            Value::Timestamp(crate::datetime::trunc_timestamp(unit, *ts, ty)?)
        }
        ("date_trunc", Value::Interval(iv)) => {
            Value::Interval(crate::datetime::trunc_interval(unit, *iv)?)
        }
        ("extract", v) => crate::datetime::extract(unit, v, ty)?,
        ("date_part", v) => crate::datetime::date_part(unit, v, ty)?,
        _ => return Err(SqlError::internal("date/time function")),
    })
}

/// The parameters of the functions that take named arguments (`make_interval(days => 10)`),
/// and whether the unnamed ones default to zero.
pub(super) const NAMED_PARAMETERS: &[(&str, &[&str], bool)] = &[
    (
        "make_interval",
        &["years", "months", "weeks", "days", "hours", "mins", "secs"],
        true,
    ),
    ("make_date", &["year", "month", "day"], false),
    ("make_time", &["hour", "min", "sec"], false),
    (
        "make_timestamp",
        &["year", "month", "mday", "hour", "min", "sec"],
        false,
    ),
    (
        "make_timestamptz",
        &["year", "month", "mday", "hour", "min", "sec", "timezone"],
        false,
    ),
];

/// The arguments of `name` in parameter order: the positional ones, then the named ones at
/// their parameters' places (PostgreSQL's 42883 for a name the function does not have).
pub(super) fn place_named_arguments(
    name: &str,
    positional: Vec<Expr>,
    named: Vec<(String, Expr)>,
) -> Result<Vec<Expr>, SqlError> {
    let not_found = || {
        SqlError::UndefinedFunction {
        message: format!("function {name} with named arguments does not exist"),
        hint: Some("No function matches the given name and argument types. You might need to add explicit type casts.".into()),
    }
    };
    let (_, params, zero_default) = NAMED_PARAMETERS
        .iter()
        .find(|(n, _, _)| *n == name)
        .ok_or_else(not_found)?;
    let mut slots: Vec<Option<Expr>> = positional.into_iter().map(Some).collect();
    slots.resize(params.len().max(slots.len()), None);
    for (arg, e) in named {
        let i = params
            .iter()
            .position(|p| *p == arg)
            .ok_or_else(not_found)?;
        if slots[i].is_some() {
            return Err(not_found());
        }
        slots[i] = Some(e);
    }
    // Trailing parameters without an argument are left out (their defaults apply); a gap
    // takes the default where there is one.
    while slots.last().is_some_and(Option::is_none) {
        slots.pop();
    }
    slots
        .into_iter()
        .map(|s| match s {
            Some(e) => Ok(e),
            None if *zero_default => Ok(Expr::value(ast::Value::Number("0".into(), false))),
            None => Err(not_found()),
        })
        .collect()
}

/// Date/time functions bound by [`bind_datetime_call`].
pub(super) const DATETIME_FUNCTIONS: &[&str] = &[
    "timezone",
    "to_char",
    "to_date",
    "localtime",
    "age",
    "justify_hours",
    "justify_days",
    "justify_interval",
    "isfinite",
    "make_date",
    "make_time",
    "make_timestamp",
    "make_timestamptz",
    "make_interval",
    "date_bin",
    "date_trunc",
    "date_part",
    "to_timestamp",
    "current_date",
    "localtimestamp",
];
