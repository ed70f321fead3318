//! Built-in function calls at run time.

use super::*;

impl<'a, 'b> Executor<'a, 'b> {
    pub(super) fn call(&self, name: &str, a: Vec<Value>) -> Result<Value, SqlError> {
        let text = |i: usize| -> Option<String> {
            match a.get(i) {
                Some(Value::Text(s)) => Some(s.to_string()),
                Some(Value::Null) | None => None,
                Some(v) => format_text(v, PgType::Text),
            }
        };
        Ok(match name {
            // `current_timestamp(p)`: rounded to p fractional digits.
            "current_timestamp" if !a.is_empty() => match a.first() {
                Some(Value::Int(p)) => {
                    crate::datetime::round_to_precision(Value::Timestamp(self.cx.now), *p)
                }
                _ => Value::Null,
            },
            "now"
            | "current_timestamp"
            | "transaction_timestamp"
            | "statement_timestamp"
            | "clock_timestamp" => Value::Timestamp(self.cx.now),
            "version" => Value::text(crate::VERSION_STRING),
            "current_database" | "current_catalog" => Value::text(self.cx.database),
            "current_schema" => self
                .cx
                .existing_search_path()
                .into_iter()
                .next()
                .map_or(Value::Null, Value::text),
            "current_schemas" => {
                let implicit = matches!(a.first(), Some(Value::Bool(true)));
                let schemas = self.cx.existing_search_path();
                Value::Array(
                    implicit
                        .then(|| "pg_catalog".to_string())
                        .into_iter()
                        .chain(schemas)
                        .map(Value::text)
                        .collect(),
                )
            }
            "current_user" | "session_user" | "user" | "current_role" => Value::text(self.cx.user),
            "pg_get_userbyid" => match a.first() {
                Some(Value::Int(o)) if *o == crate::pgcatalog::PG_DATABASE_OWNER_OID as i64 => {
                    Value::Text("pg_database_owner".into())
                }
                Some(Value::Null) => Value::Null,
                _ => Value::text(self.cx.user),
            },
            "regtype_in" | "to_regtype" => match text(0) {
                // `'int4'::regtype`: the text read as a type name (`to_regtype`: NULL when
                // there is no such type).
                Some(input) => match type_oid_by_name(&input) {
                    Some(oid) => Value::Int(oid.into()),
                    None if name == "to_regtype" => Value::Null,
                    None => {
                        return Err(SqlError::UndefinedObject {
                            message: format!("type \"{input}\" does not exist"),
                        })
                    }
                },
                None => Value::Null,
            },
            "regproc_in" => match text(0) {
                Some(input) => Value::Int(proc_oid_by_name(&input)?.into()),
                None => Value::Null,
            },
            "regnamespace_in" | "to_regnamespace" => match text(0) {
                Some(input) => {
                    let n = match name_parts(&input).as_deref() {
                        Some([one]) => one.clone(),
                        Some(_) => {
                            return Err(SqlError::Syntax {
                                message: "improper qualified name (too many dotted names)".into(),
                            })
                        }
                        None => return Err(invalid_name_syntax()),
                    };
                    match self.cx.schema_oid(&n) {
                        Some(oid) => Value::Int(oid.into()),
                        None if name == "to_regnamespace" => Value::Null,
                        None => return Err(SqlError::UndefinedSchema { name: n }),
                    }
                }
                None => Value::Null,
            },
            "reg_out" => match (a.first(), a.get(1)) {
                (Some(Value::Int(o)), Some(Value::Int(ty))) => {
                    let ty = u32::try_from(*ty).ok().and_then(crate::types::type_by_oid);
                    match (u32::try_from(*o), ty) {
                        (Ok(oid), Some(ty)) => Value::text(self.cx.reg_name(oid, ty)),
                        _ => Value::text(o.to_string()),
                    }
                }
                _ => Value::Null,
            },
            // Strict, as PostgreSQL's.
            "pg_get_indexdef" | "pg_get_constraintdef" if a.iter().any(Value::is_null) => {
                Value::Null
            }
            "pg_get_indexdef" | "pg_get_constraintdef" => match a.first() {
                Some(Value::Int(o)) => {
                    let oid = u32::try_from(*o).unwrap_or(0);
                    let index = self
                        .cx
                        .relation_by_oid(oid)
                        .filter(|(_, is_index)| *is_index);
                    let listed = index.as_ref().and_then(|(t, _)| t.listed_index(oid));
                    match (index.as_ref(), listed) {
                        // (index, column, pretty): one key column's definition, empty past
                        // the key's columns; column 0 is the whole index.
                        (Some((t, _)), Some(ix)) if name == "pg_get_indexdef" => match a.get(1) {
                            Some(Value::Int(c)) if *c != 0 => Value::text(
                                usize::try_from(*c - 1)
                                    .ok()
                                    .and_then(|i| {
                                        crate::pgcatalog::index_columns(t, &ix).get(i).cloned()
                                    })
                                    .unwrap_or_default(),
                            ),
                            // Pretty: the table named as search_path finds it.
                            _ => {
                                let pretty = matches!(a.get(2), Some(Value::Bool(true)));
                                let table = match self.cx.regclass_name(t.oid) {
                                    Some(name) if pretty => name,
                                    _ => crate::pgcatalog::qualified_relation(t),
                                };
                                let predicate = ix.predicate.map(|p| match pretty {
                                    true => crate::exec::pretty_predicate(p),
                                    false => crate::exec::shown_predicate(p),
                                });
                                Value::text(crate::pgcatalog::indexdef(
                                    &table,
                                    &ix,
                                    t,
                                    predicate.as_deref(),
                                ))
                            }
                        },
                        (Some((t, _)), Some(ix)) if ix.primary => {
                            Value::text(crate::pgcatalog::pkey_constraintdef(t))
                        }
                        _ => Value::Null,
                    }
                }
                _ => Value::Null,
            },
            "pg_get_viewdef" => match a.first() {
                Some(Value::Int(o)) => u32::try_from(*o)
                    .ok()
                    .and_then(|o| self.cx.relation_by_oid(o))
                    .and_then(|(t, is_index)| t.view.clone().filter(|_| !is_index))
                    .map_or(Value::Null, |def| {
                        Value::text(crate::pgcatalog::viewdef(&def))
                    }),
                _ => Value::Null,
            },
            "pg_relation_is_publishable" => Value::Bool(false),
            // No extended statistics objects exist, so no OID names one.
            "pg_get_statisticsobjdef_columns" => Value::Null,
            // No relation is partitioned.
            "pg_get_partkeydef" => Value::Null,
            // No scans are counted: what PostgreSQL reports for a relation without statistics.
            "pg_stat_get_numscans" => match a.first() {
                Some(Value::Int(_)) => Value::Int(0),
                _ => Value::Null,
            },
            // The byte at 0-based `i` of a name, NUL (an empty "char") past its end up to
            // NAMEDATALEN - 1, NULL outside.
            "name_subscript" => match (a.first(), a.get(1)) {
                (Some(Value::Text(s)), Some(Value::Int(i))) => match usize::try_from(*i) {
                    Ok(i) if i < 64 => match s.as_bytes().get(i) {
                        Some(&b) if b.is_ascii() => Value::Text((b as char).to_string().into()),
                        Some(_) => return Err(SqlError::feature("subscripting a non-ASCII name")),
                        None => Value::Text("".into()),
                    },
                    _ => Value::Null,
                },
                _ => Value::Null,
            },
            "record_text" => match (a.first(), a.get(1)) {
                (Some(Value::Array(fields)), Some(Value::Array(oids))) => {
                    let types: Vec<PgType> = oids
                        .iter()
                        .map(|o| match o {
                            Value::Int(o) => {
                                crate::types::type_by_oid(*o as u32).unwrap_or(PgType::Text)
                            }
                            _ => PgType::Text,
                        })
                        .collect();
                    Value::text(crate::types::record_text(fields, &types))
                }
                _ => Value::Null,
            },
            "bit_not" => match a.first() {
                Some(Value::Int(x)) => Value::Int(!x),
                _ => Value::Null,
            },
            "bit_and" | "bit_or" | "bit_xor" | "bit_shl" | "bit_shr" => {
                match (a.first(), a.get(1), a.get(2)) {
                    (Some(Value::Int(x)), Some(Value::Int(y)), Some(Value::Int(width))) => {
                        let (x, y) = (*x, *y);
                        // smallint shifts as an int, then keeps its low 16 bits (`int2shl`).
                        let shifted = |v: i64| match width {
                            64 => v,
                            32 => v as i32 as i64,
                            _ => v as i16 as i64,
                        };
                        Value::Int(match name {
                            "bit_and" => x & y,
                            "bit_or" => x | y,
                            "bit_xor" => x ^ y,
                            "bit_shl" if *width == 64 => x.wrapping_shl(y as u32),
                            "bit_shl" => shifted((x as i32).wrapping_shl(y as u32) as i64),
                            _ if *width == 64 => x.wrapping_shr(y as u32),
                            _ => shifted((x as i32).wrapping_shr(y as u32) as i64),
                        })
                    }
                    _ => Value::Null,
                }
            }
            "record_is_null" => match (a.first(), a.get(1)) {
                (Some(Value::Array(fields)), Some(Value::Bool(not))) => Value::Bool(if *not {
                    !fields.iter().any(Value::is_null)
                } else {
                    fields.iter().all(Value::is_null)
                }),
                (Some(Value::Null), Some(Value::Bool(not))) => Value::Bool(!not),
                _ => Value::Null,
            },
            "record_field" => match (a.first(), a.get(1)) {
                (Some(Value::Array(fields)), Some(Value::Int(i))) => usize::try_from(*i)
                    .ok()
                    .and_then(|i| fields.get(i))
                    .cloned()
                    .unwrap_or(Value::Null),
                _ => Value::Null,
            },
            "array_subscript" => match (a.first(), a.get(1)) {
                (Some(Value::Array(items)), Some(Value::Int(i))) if *i >= 1 => {
                    items.get(*i as usize - 1).cloned().unwrap_or(Value::Null)
                }
                _ => Value::Null,
            },
            "int2vector_text" => match a.first() {
                Some(v @ Value::Array(_)) => {
                    Value::text(format_text(v, PgType::Int2Vector).unwrap_or_default())
                }
                _ => Value::Null,
            },
            // int2vector's subscripts start at 0.
            "int2vector_subscript" => match (a.first(), a.get(1)) {
                (Some(Value::Array(items)), Some(Value::Int(i))) if *i >= 0 => {
                    items.get(*i as usize).cloned().unwrap_or(Value::Null)
                }
                _ => Value::Null,
            },
            // A third argument is the lower bound when it is not 1 (0: an int2vector's).
            "array_upper" | "array_lower" => match (a.first(), a.get(1)) {
                (Some(Value::Array(items)), Some(Value::Int(1))) if !items.is_empty() => {
                    let lower = match a.get(2) {
                        Some(Value::Int(l)) => *l,
                        _ => 1,
                    };
                    Value::Int(if name == "array_upper" {
                        lower + items.len() as i64 - 1
                    } else {
                        lower
                    })
                }
                _ => Value::Null,
            },
            "array_append" => match (a.first(), a.get(1)) {
                (Some(Value::Array(x)), Some(v)) => {
                    Value::Array(x.iter().chain([v]).cloned().collect())
                }
                (_, Some(v)) => Value::Array(vec![v.clone()].into()),
                _ => Value::Null,
            },
            "array_prepend" => match (a.first(), a.get(1)) {
                (Some(v), Some(Value::Array(x))) => {
                    Value::Array([v].into_iter().chain(x.iter()).cloned().collect())
                }
                (Some(v), _) => Value::Array(vec![v.clone()].into()),
                _ => Value::Null,
            },
            // `@>`, `<@`, `&&`: elements met by equality; a NULL element meets nothing.
            "array_contains" | "array_contained" | "array_overlap" => match (a.first(), a.get(1)) {
                (Some(Value::Array(x)), Some(Value::Array(y))) => {
                    let (outer, inner) = if name == "array_contained" {
                        (y, x)
                    } else {
                        (x, y)
                    };
                    let keys: HashSet<Vec<u8>> = outer
                        .iter()
                        .filter(|v| !v.is_null())
                        .map(element_key)
                        .collect();
                    let met = |v: &Value| !v.is_null() && keys.contains(&element_key(v));
                    Value::Bool(if name == "array_overlap" {
                        inner.iter().any(met)
                    } else {
                        inner.iter().all(met)
                    })
                }
                _ => Value::Null,
            },
            // Elements are matched as IS NOT DISTINCT FROM (NULL finds NULL).
            "array_remove" => match a.first() {
                Some(Value::Array(x)) => {
                    let gone = element_key(a.get(1).unwrap_or(&Value::Null));
                    Value::Array(
                        x.iter()
                            .filter(|v| element_key(v) != gone)
                            .cloned()
                            .collect(),
                    )
                }
                _ => Value::Null,
            },
            "array_replace" => match a.first() {
                Some(Value::Array(x)) => {
                    let from = element_key(a.get(1).unwrap_or(&Value::Null));
                    let to = a.get(2).cloned().unwrap_or(Value::Null);
                    Value::Array(
                        x.iter()
                            .map(|v| {
                                if element_key(v) == from {
                                    to.clone()
                                } else {
                                    v.clone()
                                }
                            })
                            .collect(),
                    )
                }
                _ => Value::Null,
            },
            "array_position" | "array_positions" => match a.first() {
                Some(Value::Array(x)) => {
                    let start = match a.get(2) {
                        Some(Value::Null) => {
                            return Err(SqlError::NullValueNotAllowed {
                                message: "initial position must not be null".into(),
                            })
                        }
                        Some(Value::Int(s)) => *s,
                        _ => 1,
                    };
                    let wanted = element_key(a.get(1).unwrap_or(&Value::Null));
                    let mut hits = x
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (i as i64 + 1, v))
                        .filter(|(i, v)| *i >= start && element_key(v) == wanted)
                        .map(|(i, _)| Value::Int(i));
                    if name == "array_position" {
                        hits.next().unwrap_or(Value::Null)
                    } else {
                        Value::Array(hits.collect())
                    }
                }
                _ => Value::Null,
            },
            "array_ndims" => match a.first() {
                Some(Value::Array(x)) if !x.is_empty() => Value::Int(1),
                _ => Value::Null,
            },
            "array_dims" => match a.first() {
                Some(Value::Array(x)) if !x.is_empty() => {
                    let lower = match a.get(1) {
                        Some(Value::Int(l)) => *l,
                        _ => 1,
                    };
                    Value::text(format!("[{lower}:{}]", lower + x.len() as i64 - 1))
                }
                _ => Value::Null,
            },
            "array_cat" => match (a.first(), a.get(1)) {
                (Some(Value::Array(x)), Some(Value::Array(y))) => {
                    Value::Array(x.iter().chain(y.iter()).cloned().collect())
                }
                (Some(Value::Array(x)), _) | (_, Some(Value::Array(x))) => Value::Array(x.clone()),
                _ => Value::Null,
            },
            "pg_size_pretty" => match a.first() {
                Some(Value::Int(n)) => Value::text(size_pretty(*n)),
                Some(Value::Numeric(n)) => Value::text(size_pretty(n.parse().unwrap_or(0))),
                _ => Value::Null,
            },
            "to_regclass" | "regclass_in" => match text(0) {
                Some(s) => match self.relation_named(&s)? {
                    Ok(oid) => Value::Int(oid.into()),
                    Err(missing) if name == "regclass_in" => return Err(missing),
                    Err(_) => Value::Null,
                },
                None => Value::Null,
            },
            // Bytes RockLake stores for the relation: every version of every row (history is
            // kept until excision, as PostgreSQL keeps dead tuples until VACUUM). The primary
            // key is the row order itself; secondary index entries are stored apart.
            "pg_total_relation_size" | "pg_relation_size" | "pg_table_size" | "pg_indexes_size" => {
                match a.first() {
                    Some(Value::Int(o)) => {
                        let relation = u32::try_from(*o)
                            .ok()
                            .and_then(|o| self.cx.relation_by_oid(o));
                        match relation {
                            Some((t, is_index)) => {
                                let rows = crate::keys::table_prefix(t.id);
                                let mut index = rows.clone();
                                index[0] = crate::keys::TAG_INDEX;
                                // An index CREATE INDEX made is its own entries.
                                let own = u32::try_from(*o)
                                    .ok()
                                    .and_then(|o| t.user_indexes().find(|(_, ix)| ix.oid == o));
                                if let Some((_, ix)) = own {
                                    index = crate::keys::index_prefix(t.id, ix.slot);
                                }
                                Value::Int(match name {
                                    // An index is its keys, and has no index of its own.
                                    "pg_indexes_size" if is_index => 0,
                                    _ if is_index => self.stored_bytes(&index)?,
                                    "pg_indexes_size" => self.stored_bytes(&index)?,
                                    "pg_total_relation_size" => {
                                        self.stored_bytes(&rows)? + self.stored_bytes(&index)?
                                    }
                                    _ => self.stored_bytes(&rows)?,
                                })
                            }
                            None => Value::Null,
                        }
                    }
                    _ => Value::Null,
                }
            }
            "pg_database_size" => match text(0) {
                Some(d) if d == self.cx.database => Value::Int(self.stored_bytes(&[])?),
                Some(d) if matches!(d.as_str(), "postgres" | "template0" | "template1") => {
                    Value::Int(0)
                }
                Some(d) => return Err(SqlError::UndefinedDatabase { name: d }),
                None => Value::Null,
            },
            "coalesce" => a.into_iter().find(|v| !v.is_null()).unwrap_or(Value::Null),
            // A record of a FROM item's columns (see `record_functions`).
            "make_record" => Value::Array(a.into()),
            "num_nulls" => Value::Int(a.iter().filter(|v| v.is_null()).count() as i64),
            PERCENTILE_CONT | PERCENTILE_DISC | MODE => {
                crate::aggregate::ordered_set_final(name, &a)?
            }
            GROUPING_BITS => Value::Int(a.iter().fold(0, |bits, v| {
                bits << 1 | i64::from(matches!(v, Value::Int(1)))
            })),
            "num_nonnulls" => Value::Int(a.iter().filter(|v| !v.is_null()).count() as i64),
            "width_bucket" => match a.as_slice() {
                [Value::Float(x), Value::Float(lo), Value::Float(hi), Value::Int(n)] => {
                    Value::Int(width_bucket(*x, *lo, *hi, *n)?)
                }
                _ => Value::Null,
            },

            "nullif" => {
                let (x, y) = (
                    a.first().cloned().unwrap_or(Value::Null),
                    a.get(1).cloned().unwrap_or(Value::Null),
                );
                if !x.is_null() && !y.is_null() && compare(&x, &y) == std::cmp::Ordering::Equal {
                    Value::Null
                } else {
                    // The first argument as given, when the binder kept it (see bind_function).
                    a.get(2).cloned().unwrap_or(x)
                }
            }
            "greatest" | "least" => {
                let mut best: Option<Value> = None;
                for v in a.into_iter().filter(|v| !v.is_null()) {
                    best = Some(match best {
                        None => v,
                        Some(b) => {
                            let c = compare(&v, &b);
                            if (name == "greatest") == (c == std::cmp::Ordering::Greater) {
                                v
                            } else {
                                b
                            }
                        }
                    });
                }
                best.unwrap_or(Value::Null)
            }
            "lower" => text(0)
                .map(|s| Value::text(s.to_lowercase()))
                .unwrap_or(Value::Null),
            "upper" => text(0)
                .map(|s| Value::text(s.to_uppercase()))
                .unwrap_or(Value::Null),
            // A bytea's length is its bytes.
            "length" | "octet_length" if matches!(a.first(), Some(Value::Bytes(_))) => {
                match a.first() {
                    Some(Value::Bytes(b)) => Value::Int(b.len() as i64),
                    _ => Value::Null,
                }
            }
            "length" | "char_length" => text(0)
                .map(|s| Value::Int(s.chars().count() as i64))
                .unwrap_or(Value::Null),
            "octet_length" => text(0)
                .map(|s| Value::Int(s.len() as i64))
                .unwrap_or(Value::Null),
            "concat" => Value::text((0..a.len()).filter_map(text).collect::<String>()),
            "concat_ws" => match text(0) {
                Some(sep) => {
                    Value::text((1..a.len()).filter_map(text).collect::<Vec<_>>().join(&sep))
                }
                None => Value::Null,
            },
            "format" => match text(0) {
                Some(f) => {
                    let args: Vec<Option<String>> = (1..a.len()).map(text).collect();
                    Value::text(crate::format::format(&f, &args)?)
                }
                None => Value::Null,
            },
            "quote_literal" => text(0)
                .map(|s| Value::text(crate::format::quote_literal(&s)))
                .unwrap_or(Value::Null),
            "quote_nullable" => Value::text(
                text(0)
                    .map(|s| crate::format::quote_literal(&s))
                    .unwrap_or_else(|| "NULL".into()),
            ),
            "starts_with" => match (text(0), text(1)) {
                (Some(s), Some(p)) => Value::Bool(s.starts_with(&p)),
                _ => Value::Null,
            },
            "replace" => match (text(0), text(1), text(2)) {
                (Some(s), Some(f), Some(t)) => Value::text(s.replace(&f, &t)),
                _ => Value::Null,
            },
            // PostgreSQL's string_to_array: a NULL delimiter splits into characters, an
            // empty one keeps the string whole, an empty string is an empty array; elements
            // equal to the third argument are NULL.
            "string_to_array" => match text(0) {
                None => Value::Null,
                Some(s) if s.is_empty() => Value::Array(Vec::new().into()),
                Some(s) => {
                    let parts: Vec<String> = match text(1) {
                        None => s.chars().map(String::from).collect(),
                        Some(d) if d.is_empty() => vec![s.clone()],
                        Some(d) => s.split(d.as_str()).map(str::to_string).collect(),
                    };
                    let null = text(2);
                    Value::Array(
                        parts
                            .into_iter()
                            .map(|p| {
                                if null.as_deref() == Some(p.as_str()) {
                                    Value::Null
                                } else {
                                    Value::text(p)
                                }
                            })
                            .collect::<Vec<_>>()
                            .into(),
                    )
                }
            },
            // PostgreSQL 14+: a negative position counts from the end.
            "split_part" => match (text(0), text(1), a.get(2)) {
                (Some(_), Some(_), Some(Value::Int(0))) => {
                    return Err(SqlError::InvalidParameter {
                        message: "field position must not be zero".into(),
                    })
                }
                (Some(s), Some(d), Some(Value::Int(n))) => {
                    let parts: Vec<&str> = if d.is_empty() {
                        vec![s.as_str()]
                    } else {
                        s.split(d.as_str()).collect()
                    };
                    let at = if *n > 0 {
                        usize::try_from(*n - 1).ok()
                    } else {
                        usize::try_from(n.unsigned_abs())
                            .ok()
                            .and_then(|back| parts.len().checked_sub(back))
                    };
                    Value::text(at.and_then(|i| parts.get(i)).copied().unwrap_or(""))
                }
                _ => Value::Null,
            },
            "format_type" => match a.first() {
                Some(Value::Int(oid)) => {
                    let ty = crate::types::any_type_by_oid(*oid as u32);
                    let typmod = match a.get(1) {
                        Some(Value::Int(m)) => *m as i32,
                        _ => -1,
                    };
                    Value::text(match ty {
                        Some(t) => format_type(t, typmod),
                        None => crate::pgcatalog::other_type_name(*oid as u32)
                            .unwrap_or_else(|| "???".into()),
                    })
                }
                _ => Value::Null,
            },
            "pg_table_is_visible" => match a.first() {
                Some(Value::Int(oid)) => u32::try_from(*oid)
                    .ok()
                    .and_then(|o| self.cx.relation_visible(o))
                    .map_or(Value::Null, Value::Bool),
                _ => Value::Null,
            },
            // Where a tablespace's files are: the two built-in ones live in the data directory.
            "pg_tablespace_location" => match a.first() {
                Some(Value::Int(1663 | 1664)) => Value::text(""),
                _ => Value::Null,
            },
            "pg_type_is_visible" | "pg_function_is_visible" => Value::Bool(true),
            // RockLake's collations are pg_catalog's three, always on the search path.
            "pg_collation_is_visible" => match a.first() {
                Some(Value::Int(100 | 950 | 951)) => Value::Bool(true),
                _ => Value::Null,
            },
            "has_table_privilege" | "has_schema_privilege" | "has_database_privilege" => {
                self.has_privilege(name, &a)?
            }
            "pg_is_in_recovery" => Value::Bool(false),
            // No triggers, rules or functions of one's own exist to describe.
            n if OF_EMPTY_CATALOGS_TEXT.contains(&n) || OF_EMPTY_CATALOGS_BOOL.contains(&n) => {
                Value::Null
            }
            "acldefault" => match (a.first(), a.get(1)) {
                (Some(kind), Some(Value::Int(owner))) if !kind.is_null() => {
                    let kind = match kind {
                        Value::Text(s) => s.chars().next().unwrap_or(' '),
                        other => crate::types::format_text(other, PgType::Char)
                            .and_then(|s| s.chars().next())
                            .unwrap_or(' '),
                    };
                    let owner = u32::try_from(*owner).unwrap_or(0);
                    let owner = if owner == crate::pgcatalog::SUPERUSER_OID {
                        self.cx.user.to_string()
                    } else {
                        owner.to_string()
                    };
                    match crate::pgcatalog::acl_default(kind, &owner) {
                        Some(items) => Value::Array(
                            items
                                .into_iter()
                                .map(|i| Value::Text(i.into()))
                                .collect::<Vec<_>>()
                                .into(),
                        ),
                        None => {
                            return Err(SqlError::internal(format!(
                                "unrecognized object type abbreviation: {kind}"
                            )))
                        }
                    }
                }
                _ => Value::Null,
            },
            "obj_description" | "col_description" | "shobj_description" | "pg_get_expr" => {
                match name {
                    "pg_get_expr" => match (a.first(), a.get(1)) {
                        (Some(Value::Text(e)), Some(Value::Int(relid))) => {
                            let serial = self
                                .cx
                                .serial_default_text(e, u32::try_from(*relid).unwrap_or(0));
                            let text = serial.as_deref().unwrap_or(e);
                            if crate::pgcatalog::quote_all() {
                                Value::text(crate::pgcatalog::requote_expression(text))
                            } else {
                                Value::text(text)
                            }
                        }
                        _ => a.first().cloned().unwrap_or(Value::Null),
                    },
                    // pg_description's rows (COMMENT ON): a relation's or a schema's by the
                    // catalog named (either, without one), a column's by its number.
                    "obj_description" | "col_description" => {
                        let Some(Value::Int(o)) = a.first() else {
                            return Ok(Value::Null);
                        };
                        let o = u32::try_from(*o).unwrap_or(0);
                        let comment = if name == "col_description" {
                            match a.get(1) {
                                Some(Value::Int(n)) => self.cx.column_comment(o, *n),
                                _ => None,
                            }
                        } else {
                            match a.get(1).map(|_| text(1)) {
                                None => self
                                    .cx
                                    .relation_comment(o)
                                    .or_else(|| self.cx.schema_comment(o)),
                                Some(c) if c.as_deref() == Some("pg_class") => {
                                    self.cx.relation_comment(o)
                                }
                                Some(c) if c.as_deref() == Some("pg_namespace") => {
                                    self.cx.schema_comment(o)
                                }
                                Some(c) if c.as_deref() == Some("pg_constraint") => {
                                    self.cx.constraint_comment(o)
                                }
                                Some(_) => None,
                            }
                        };
                        comment.map_or(Value::Null, Value::text)
                    }
                    _ => Value::Null,
                }
            }
            "current_setting" => match text(0) {
                // A set_config earlier in this statement counts already (and has created a
                // custom placeholder it names).
                Some(name) => match self.set_configs.as_ref().and_then(|c| {
                    c.borrow()
                        .iter()
                        .rev()
                        .find(|c| c.name().eq_ignore_ascii_case(&name))
                        .map(|c| c.shown.clone())
                }) {
                    Some(shown) => Value::text(shown),
                    None => match self.cx.settings.show(&name) {
                        Ok((_, v)) => Value::text(v),
                        Err(_) if matches!(a.get(1), Some(Value::Bool(true))) => Value::Null,
                        Err(e) => return Err(e),
                    },
                },
                None => Value::Null,
            },
            "set_config" => {
                let Some(name) = text(0) else {
                    return Err(SqlError::NullValueNotAllowed {
                        message: "SET requires parameter name".into(),
                    });
                };
                let Some(calls) = self.set_configs.as_ref() else {
                    return Err(SqlError::feature(
                        "set_config() outside a SELECT (in INSERT, UPDATE, DELETE or COPY)",
                    ));
                };
                // is_local is boolean; a text argument ('true', or a bound parameter) is cast.
                let local = match a.get(2) {
                    Some(Value::Bool(b)) => *b,
                    Some(Value::Text(t)) => parse_text(t, PgType::Bool)? == Value::Bool(true),
                    _ => false,
                };
                let (call, shown) =
                    crate::settings::SetConfig::check(&self.cx.settings, &name, text(1), local)?;
                calls.borrow_mut().push(call);
                Value::text(shown)
            }
            "pg_encoding_to_char" => match a.first() {
                Some(Value::Int(n)) => Value::text(
                    usize::try_from(*n)
                        .ok()
                        .and_then(|i| crate::format::ENCODINGS.get(i))
                        .copied()
                        .unwrap_or(""),
                ),
                _ => Value::Null,
            },
            "pg_char_to_encoding" => match text(0) {
                Some(name) => {
                    Value::Int(crate::format::encoding_number(&name).map_or(-1, i64::from))
                }
                None => Value::Null,
            },
            "quote_ident" => text(0)
                .map(|s| Value::text(crate::pgcatalog::quote_ident(&s)))
                .unwrap_or(Value::Null),
            "txid_current" => Value::Int(self.cx.txid() as i64),
            "pg_backend_pid" => Value::Int(self.cx.sessions.me.activity.backend_pid.into()),
            "inet_client_addr" => self
                .cx
                .sessions
                .me
                .activity
                .client_addr
                .clone()
                .map_or(Value::Null, Value::Bytes),
            "inet_client_port" => self
                .cx
                .sessions
                .me
                .activity
                .client_port
                .map_or(Value::Null, |p| Value::Int(p.into())),
            // The statement's snapshot, named for `SET TRANSACTION SNAPSHOT` in other sessions
            // while this transaction is open (PostgreSQL's id: backend, transaction, and here
            // the commit point in place of a counter).
            "pg_export_snapshot" => {
                let Some(effects) = self.effects.as_ref() else {
                    return Err(SqlError::feature(
                        "pg_export_snapshot() outside a SELECT (in INSERT, UPDATE, DELETE or COPY)",
                    ));
                };
                let id = format!(
                    "{:08X}-{:08X}-{}",
                    self.cx.sessions.me.activity.backend_pid,
                    self.cx.txid(),
                    self.cx.at
                );
                effects.borrow_mut().push(Effect::ExportSnapshot {
                    id: id.clone(),
                    point: self.cx.at,
                });
                Value::text(id)
            }
            "pg_cancel_backend" | "pg_terminate_backend" => {
                let terminate = name == "pg_terminate_backend";
                let (Some(Value::Int(pid)), timeout) = (a.first(), a.get(1)) else {
                    return Ok(Value::Null);
                };
                match timeout {
                    Some(Value::Null) => return Ok(Value::Null),
                    Some(Value::Int(t)) if *t < 0 => {
                        return Err(SqlError::ArgumentOutOfRange {
                            message: "\"timeout\" must not be negative".into(),
                        })
                    }
                    _ => {}
                }
                let pid = i32::try_from(*pid).unwrap_or(i32::MIN);
                let Some(effects) = self.effects.as_ref() else {
                    return Err(SqlError::feature(format!(
                        "{name}() outside a SELECT (in INSERT, UPDATE, DELETE or COPY)"
                    )));
                };
                match self.cx.sessions.may_signal(pid, terminate)? {
                    crate::activity::SignalTarget::Unknown => {
                        effects
                            .borrow_mut()
                            .push(Effect::Notice(crate::error::Notice::NotABackend { pid }));
                        Value::Bool(false)
                    }
                    // The signal reaches the backend that sent it before the statement ends.
                    crate::activity::SignalTarget::Me if terminate => {
                        return Err(SqlError::Terminated)
                    }
                    crate::activity::SignalTarget::Me => {
                        return Err(SqlError::QueryCanceled {
                            message: "canceling statement due to user request".into(),
                        })
                    }
                    crate::activity::SignalTarget::Other => {
                        effects.borrow_mut().push(Effect::Signal { pid, terminate });
                        Value::Bool(true)
                    }
                }
            }
            "nextval" | "setval" | "currval" | "lastval" => {
                return self.sequence_call(name, &a);
            }
            "pg_advisory_lock"
            | "pg_advisory_lock_shared"
            | "pg_advisory_xact_lock"
            | "pg_advisory_xact_lock_shared"
            | "pg_try_advisory_lock"
            | "pg_try_advisory_lock_shared"
            | "pg_try_advisory_xact_lock"
            | "pg_try_advisory_xact_lock_shared"
            | "pg_advisory_unlock"
            | "pg_advisory_unlock_shared"
            | "pg_advisory_unlock_all"
            | "pg_sleep"
            | "pg_sleep_for"
            | "pg_sleep_until" => return self.wait_call(name, &a),
            // The sequence a serial or identity column owns, schema-qualified.
            "pg_get_serial_sequence" => match (text(0), text(1)) {
                (Some(table), Some(column)) => {
                    let oid = self.relation_named(&table)??;
                    let Some((t, false)) = self.cx.relation_by_oid(oid) else {
                        return Ok(Value::Null);
                    };
                    // The column name is read as an identifier (quotes keep case).
                    let column = name_parts(&column)
                        .and_then(|p| p.into_iter().next())
                        .unwrap_or(column);
                    if t.column_index(&column).is_none() {
                        return Err(SqlError::UndefinedColumn {
                            name: format!("{column}\" of relation \"{}", t.name),
                        });
                    }
                    let owned = self.cx.sequences().iter().find_map(|s| {
                        let def = s.sequence.as_deref()?;
                        (def.owner.as_ref() == Some(&(t.id, column.clone()))).then(|| {
                            let q = crate::pgcatalog::quote_ident;
                            format!("{}.{}", q(&s.schema), q(&s.name))
                        })
                    });
                    owned.map_or(Value::Null, Value::text)
                }
                _ => Value::Null,
            },
            "random" => {
                let mut prng = match self.cx.prng.get() {
                    Some(p) => p,
                    None => crate::prng::Prng::from_state(self.entropy()?, self.entropy()?),
                };
                let v = prng.next_double();
                self.cx.prng.set(Some(prng));
                Value::Float(v)
            }
            "setseed" => match a.first() {
                Some(Value::Float(x)) if (-1.0..=1.0).contains(x) => {
                    self.cx.prng.set(Some(crate::prng::Prng::from_fraction(*x)));
                    Value::text("")
                }
                Some(Value::Float(x)) => {
                    return Err(SqlError::InvalidParameter {
                        message: format!(
                            "setseed parameter {} is out of allowed range [-1,1]",
                            crate::datetime::c_format_g(*x)
                        ),
                    })
                }
                _ => Value::Null,
            },
            "gen_random_uuid" => {
                let mut u = [0u8; 16];
                u[..8].copy_from_slice(&self.entropy()?.to_le_bytes());
                u[8..].copy_from_slice(&self.entropy()?.to_le_bytes());
                // Version 4, variant 10 (RFC 9562).
                u[6] = (u[6] & 0x0f) | 0x40;
                u[8] = (u[8] & 0x3f) | 0x80;
                Value::Uuid(u)
            }
            "array" => Value::Array(a.into()),
            "array_length" => match a.first() {
                Some(Value::Array(x)) if !x.is_empty() => Value::Int(x.len() as i64),
                _ => Value::Null,
            },
            // A NULL element is skipped, or written as the third argument when there is one.
            "array_to_string" => match (a.first(), text(1)) {
                (Some(Value::Array(x)), Some(d)) => {
                    let null_text = text(2);
                    Value::text(
                        x.iter()
                            .filter_map(|v| {
                                format_text(v, PgType::Text).or_else(|| null_text.clone())
                            })
                            .collect::<Vec<_>>()
                            .join(&d),
                    )
                }
                _ => Value::Null,
            },
            "float4_text" => match a.first() {
                Some(Value::Float(f)) => Value::text(crate::types::fmt_float(*f, true)),
                _ => Value::Null,
            },
            "float4_numeric" => match a.first() {
                Some(Value::Float(f)) => float_numeric(*f, true),
                _ => Value::Null,
            },
            "like_escape" => match (text(0), text(1)) {
                (Some(p), Some(e)) => Value::text(like_escape(&p, &e)?),
                _ => Value::Null,
            },
            "bpchar_text" => match text(0) {
                Some(s) => Value::text(s.trim_end_matches(' ')),
                None => Value::Null,
            },
            "chr" => match a.first() {
                Some(Value::Int(n)) => Value::text(chr(*n)?.to_string()),
                _ => Value::Null,
            },
            "initcap" => text(0).map_or(Value::Null, |t| Value::text(initcap(&t))),
            "reverse" => text(0).map_or(Value::Null, |t| {
                Value::text(t.chars().rev().collect::<String>())
            }),
            "translate" => match (text(0), text(1), text(2)) {
                (Some(t), Some(from), Some(to)) => {
                    let from: Vec<char> = from.chars().collect();
                    let to: Vec<char> = to.chars().collect();
                    Value::text(
                        t.chars()
                            .filter_map(|c| match from.iter().position(|f| *f == c) {
                                Some(i) => to.get(i).copied(),
                                None => Some(c),
                            })
                            .collect::<String>(),
                    )
                }
                _ => Value::Null,
            },
            "ascii" => text(0).map_or(Value::Null, |t| {
                Value::Int(t.chars().next().map_or(0, |c| i64::from(u32::from(c))))
            }),
            "lpad" | "rpad" => match (text(0), a.get(1), a.get(2)) {
                (Some(t), Some(Value::Int(n)), fill) => {
                    let fill = match fill {
                        None => " ".to_string(),
                        Some(Value::Null) => return Ok(Value::Null),
                        Some(_) => text(2).unwrap_or_default(),
                    };
                    let len = usize::try_from(*n).unwrap_or(0);
                    // An empty fill cannot lengthen: no result is too long then.
                    if !fill.is_empty() && len.saturating_mul(4) > MAX_VALUE_BYTES {
                        return Err(SqlError::ProgramLimit {
                            message: "requested length too large".into(),
                        });
                    }
                    Value::text(pad(&t, len, &fill, name == "lpad"))
                }
                _ => Value::Null,
            },
            // Negative values as their two's complement in the argument's width.
            "to_hex32" => match a.first() {
                Some(Value::Int(n)) => Value::text(format!("{:x}", *n as i32)),
                _ => Value::Null,
            },
            "to_hex64" => match a.first() {
                Some(Value::Int(n)) => Value::text(format!("{n:x}")),
                _ => Value::Null,
            },
            "pg_client_encoding" | "getdatabaseencoding" => Value::text("UTF8"),
            "cardinality" => match a.first() {
                Some(Value::Array(x)) => Value::Int(x.len() as i64),
                _ => Value::Null,
            },
            "repeat" => match (text(0), a.get(1)) {
                (Some(t), Some(Value::Int(n))) => {
                    let n = usize::try_from(*n).unwrap_or(0);
                    // PostgreSQL's limit for one value (MaxAllocSize less the header).
                    if t.len()
                        .checked_mul(n)
                        .is_none_or(|len| len > MAX_VALUE_BYTES)
                    {
                        return Err(SqlError::ProgramLimit {
                            message: "requested length too large".into(),
                        });
                    }
                    Value::text(t.repeat(n))
                }
                _ => Value::Null,
            },
            "left" | "right" => match (text(0), a.get(1)) {
                (Some(t), Some(Value::Int(n))) => {
                    let len = t.chars().count() as i64;
                    // n < 0: all but |n| characters from the other end.
                    let keep = if *n >= 0 {
                        (*n).min(len)
                    } else {
                        (len + n).max(0)
                    };
                    let skip = if name == "left" { 0 } else { len - keep };
                    Value::text(
                        t.chars()
                            .skip(skip as usize)
                            .take(keep as usize)
                            .collect::<String>(),
                    )
                }
                _ => Value::Null,
            },
            "strpos" => match (text(0), text(1)) {
                (Some(t), Some(sub)) => Value::Int(match t.find(sub.as_str()) {
                    Some(byte) => t[..byte].chars().count() as i64 + 1,
                    None => 0,
                }),
                _ => Value::Null,
            },
            "btrim" | "ltrim" | "rtrim" if matches!(a.first(), Some(Value::Bytes(_))) => {
                match (a.first(), a.get(1)) {
                    (Some(Value::Bytes(b)), Some(Value::Bytes(set))) => {
                        let keep = |x: &u8| !set.contains(x);
                        let start = match name {
                            "rtrim" => 0,
                            _ => b.iter().position(keep).unwrap_or(b.len()),
                        };
                        let end = match name {
                            "ltrim" => b.len(),
                            _ => b.iter().rposition(keep).map_or(start, |i| i + 1),
                        };
                        Value::Bytes(b[start..end.max(start)].to_vec())
                    }
                    _ => Value::Null,
                }
            }
            "btrim" | "ltrim" | "rtrim" => {
                let set = if a.len() > 1 {
                    text(1)
                } else {
                    Some(" ".into())
                };
                match (text(0), set) {
                    (Some(t), Some(set)) => {
                        let strip = |c: char| set.contains(c);
                        Value::text(
                            match name {
                                "ltrim" => t.trim_start_matches(strip),
                                "rtrim" => t.trim_end_matches(strip),
                                _ => t.trim_matches(strip),
                            }
                            .to_string(),
                        )
                    }
                    _ => Value::Null,
                }
            }
            "substr" => match (a.first(), a.get(1)) {
                (Some(v), Some(Value::Int(from))) if !v.is_null() => {
                    // Positions from..from+count-1 (1-based, characters of text, bytes of
                    // bytea); a start before 1 still counts toward the length, as in
                    // PostgreSQL.
                    let end = match a.get(2) {
                        None => i64::MAX,
                        Some(Value::Int(c)) if *c < 0 => {
                            return Err(SqlError::SubstringError {
                                message: "negative substring length not allowed".into(),
                            })
                        }
                        Some(Value::Int(c)) => from.saturating_add(*c),
                        Some(_) => return Ok(Value::Null),
                    };
                    let start = (*from).max(1);
                    let skip = usize::try_from(start - 1).unwrap_or(usize::MAX);
                    let take =
                        usize::try_from(end.saturating_sub(start).max(0)).unwrap_or(usize::MAX);
                    match v {
                        Value::Bytes(b) => {
                            Value::Bytes(b.iter().skip(skip).take(take).copied().collect())
                        }
                        _ => text(0).map_or(Value::Null, |t| {
                            Value::text(t.chars().skip(skip).take(take).collect::<String>())
                        }),
                    }
                }
                _ => Value::Null,
            },
            "round" | "trunc" if a.len() == 2 => match (a.first(), a.get(1)) {
                (Some(v), Some(Value::Int(scale))) if !v.is_null() => {
                    match cast_value(v.clone(), PgType::Numeric)? {
                        Value::Numeric(n) if name == "trunc" => {
                            Value::Numeric(crate::types::numeric_trunc_at(&n, *scale))
                        }
                        Value::Numeric(n) => {
                            Value::Numeric(crate::types::numeric_round_at(&n, *scale))
                        }
                        _ => Value::Null,
                    }
                }
                _ => Value::Null,
            },
            "round" | "trunc" | "ceil" | "ceiling" | "floor" => match a.first() {
                Some(Value::Numeric(n)) => Value::Numeric(match name {
                    "round" => crate::types::numeric_round(n, 0),
                    "trunc" => crate::types::numeric_trunc_at(n, 0),
                    "floor" => crate::types::numeric_floor(n),
                    _ => crate::types::numeric_ceil(n),
                }),
                Some(v) if !v.is_null() => match cast_value(v.clone(), PgType::Float8)? {
                    Value::Float(f) => Value::Float(match name {
                        "round" => f.round_ties_even(),
                        "trunc" => f.trunc(),
                        "floor" => f.floor(),
                        _ => f.ceil(),
                    }),
                    _ => Value::Null,
                },
                _ => Value::Null,
            },
            "apply_typmod" => match (a.first(), a.get(1)) {
                (Some(v), Some(Value::Int(m))) => {
                    let pad = matches!(a.get(2), Some(Value::Bool(true)));
                    apply_typmod(v, *m, pad)?
                }
                (Some(v), _) => v.clone(),
                _ => Value::Null,
            },
            "sqrt" | "cbrt" | "exp" | "ln" | "log" | "log10" | "degrees" | "radians" | "sin"
            | "cos" | "tan" | "asin" | "acos" | "atan" | "atan2" | "power" | "pi" | "sign" => {
                eval_math(name, &a)?
            }
            "abs" => match a.first() {
                Some(Value::Int(i)) => Value::Int(i.checked_abs().ok_or(BIGINT_OUT_OF_RANGE)?),
                Some(Value::Float(f)) => Value::Float(f.abs()),
                Some(Value::Numeric(s)) => Value::Numeric(s.trim_start_matches('-').to_string()),
                _ => Value::Null,
            },
            "regexp_replace"
            | "regexp_match"
            | "regexp_like"
            | "regexp_count"
            | "regexp_substr"
            | "regexp_substring"
            | "regexp_split_to_array" => {
                if a.iter().any(Value::is_null) {
                    return Ok(Value::Null);
                }
                regexp_call(name, &a)?
            }
            "regex_match" | "regex_not_match" | "regex_imatch" | "regex_not_imatch" => {
                match (text(0), text(1)) {
                    (Some(s), Some(p)) => {
                        let ci = name.contains("imatch");
                        let hit = crate::regex::matches(&p, &s, ci)?;
                        Value::Bool(hit != name.contains("not"))
                    }
                    _ => Value::Null,
                }
            }
            "bytea_concat" => match (a.first(), a.get(1)) {
                (Some(Value::Bytes(x)), Some(Value::Bytes(y))) => {
                    Value::Bytes([x.as_slice(), y.as_slice()].concat())
                }
                _ => Value::Null,
            },
            "inet_text" => match a.first() {
                Some(Value::Bytes(b)) => Value::text(crate::inet::show(b)),
                _ => Value::Null,
            },
            "inet_out" => match a.first() {
                Some(Value::Bytes(b)) => Value::text(crate::inet::format(b)),
                _ => Value::Null,
            },
            "timestamp_text" => a
                .first()
                .and_then(|v| format_text(v, PgType::Timestamp))
                .map_or(Value::Null, Value::text),
            "timestamp_array_text" => a
                .first()
                .and_then(|v| format_text(v, PgType::TimestampArray))
                .map_or(Value::Null, Value::text),
            "current_date" => Value::Date(
                crate::tz::session()
                    .to_local(self.cx.now)
                    .div_euclid(86_400_000_000) as i32,
            ),
            "localtimestamp" => {
                let local = Value::Timestamp(crate::tz::session().to_local(self.cx.now));
                match a.first() {
                    Some(Value::Int(p)) => crate::datetime::round_to_precision(local, *p),
                    _ => local,
                }
            }
            "timezone_from_local" | "timezone_to_local" => match (a.first(), a.get(1)) {
                (Some(z), Some(Value::Timestamp(t))) if !z.is_null() => {
                    let zone = crate::tz::for_at_time_zone(z)?;
                    Value::Timestamp(if name == "timezone_from_local" {
                        zone.to_utc(*t)
                    } else {
                        zone.to_local(*t)
                    })
                }
                _ => Value::Null,
            },
            "to_char_timestamp" | "to_char_timestamptz" | "to_char_interval" => {
                use crate::tochar::{to_char, Source};
                match (a.first(), text(1)) {
                    // PostgreSQL: NULL for an infinite value or an empty template.
                    (Some(Value::Timestamp(i64::MAX | i64::MIN)), _) => Value::Null,
                    (_, Some(t)) if t.is_empty() => Value::Null,
                    (Some(Value::Timestamp(t)), Some(template))
                        if name == "to_char_timestamptz" =>
                    {
                        let zone = crate::tz::session();
                        let (east, abbrev, _) = zone.info_at(*t);
                        let source = Source::Time {
                            local: zone.to_local(*t),
                            zone: Some((east, &abbrev)),
                        };
                        Value::text(to_char(source, &template)?)
                    }
                    (Some(Value::Timestamp(t)), Some(template)) => Value::text(to_char(
                        Source::Time {
                            local: *t,
                            zone: None,
                        },
                        &template,
                    )?),
                    (Some(Value::Interval(iv)), Some(template)) => {
                        Value::text(to_char(Source::Interval(*iv), &template)?)
                    }
                    _ => Value::Null,
                }
            }
            "to_date" | "to_timestamp_text" => match (text(0), text(1)) {
                (Some(input), Some(template)) if name == "to_date" => {
                    let d = crate::tochar::to_date(&input, &template)?;
                    Value::Date(i32::try_from(d).map_err(|_| SqlError::DatetimeOutOfRange {
                        message: "date out of range".into(),
                    })?)
                }
                (Some(input), Some(template)) => {
                    Value::Timestamp(crate::tochar::to_timestamp(&input, &template)?)
                }
                _ => Value::Null,
            },
            "localtime" => {
                let local = crate::tz::session().to_local(self.cx.now);
                let time = Value::Time(local.rem_euclid(86_400_000_000));
                match a.first() {
                    Some(Value::Int(p)) => crate::datetime::round_to_precision(time, *p),
                    _ => time,
                }
            }
            "age_local" | "age_tz" => match (a.first(), a.get(1)) {
                (Some(Value::Timestamp(x)), Some(Value::Timestamp(y))) => {
                    let zone = crate::tz::session();
                    let local = |t: i64| {
                        if name == "age_tz" {
                            zone.to_local(t)
                        } else {
                            t
                        }
                    };
                    Value::Interval(crate::datefn::age(local(*x), local(*y))?)
                }
                _ => Value::Null,
            },
            "age_today_local" | "age_today_tz" => match a.first() {
                Some(Value::Timestamp(x)) => {
                    let zone = crate::tz::session();
                    let today =
                        zone.to_local(self.cx.now).div_euclid(86_400_000_000) * 86_400_000_000;
                    let x = if name == "age_today_tz" {
                        zone.to_local(*x)
                    } else {
                        *x
                    };
                    Value::Interval(crate::datefn::age(today, x)?)
                }
                _ => Value::Null,
            },
            "justify_hours" | "justify_days" | "justify_interval" => match a.first() {
                Some(Value::Interval(iv)) => Value::Interval(match name {
                    "justify_hours" => crate::datefn::justify_hours(*iv)?,
                    "justify_days" => crate::datefn::justify_days(*iv)?,
                    _ => crate::datefn::justify_interval(*iv)?,
                }),
                _ => Value::Null,
            },
            "isfinite" => match a.first() {
                Some(Value::Null) | None => Value::Null,
                Some(Value::Timestamp(t)) => Value::Bool(*t != i64::MAX && *t != i64::MIN),
                Some(Value::Date(d)) => Value::Bool(*d != i32::MAX && *d != i32::MIN),
                Some(_) => Value::Bool(true),
            },
            "make_date" | "make_time" | "make_timestamp" | "make_timestamptz" | "make_interval" => {
                if a.iter().any(Value::is_null) {
                    Value::Null
                } else {
                    let int = |i: usize| match a.get(i) {
                        Some(Value::Int(x)) => *x,
                        _ => 0,
                    };
                    let float = |i: usize| match a.get(i) {
                        Some(Value::Float(x)) => *x,
                        _ => 0.0,
                    };
                    match name {
                        "make_date" => {
                            Value::Date(crate::datefn::make_date(int(0), int(1), int(2))? as i32)
                        }
                        "make_time" => {
                            Value::Time(crate::datefn::make_time(int(0), int(1), float(2))?)
                        }
                        "make_interval" => Value::Interval(crate::datefn::make_interval(
                            [int(0), int(1), int(2), int(3), int(4), int(5)],
                            float(6),
                        )?),
                        _ => {
                            let day = crate::datefn::make_date(int(0), int(1), int(2))?;
                            let time = crate::datefn::make_time(int(3), int(4), float(5))?;
                            let local = day * 86_400_000_000 + time;
                            let range =
                                crate::datetime::MIN_TIMESTAMP..crate::datetime::END_TIMESTAMP;
                            if !range.contains(&local) {
                                let sec = float(5);
                                let sec = if sec.fract() == 0.0 {
                                    format!("{:02}", sec as i64)
                                } else {
                                    sec.to_string()
                                };
                                return Err(SqlError::DatetimeOutOfRange {
                                    message: format!(
                                        "timestamp out of range: {}-{:02}-{:02} {}:{:02}:{sec}",
                                        int(0),
                                        int(1),
                                        int(2),
                                        int(3),
                                        int(4)
                                    ),
                                });
                            }
                            if name == "make_timestamp" {
                                Value::Timestamp(local)
                            } else {
                                let zone = match text(6) {
                                    Some(z) => {
                                        std::rc::Rc::new(crate::tz::for_make_timestamptz(&z)?)
                                    }
                                    None => crate::tz::session(),
                                };
                                Value::Timestamp(zone.to_utc(local))
                            }
                        }
                    }
                }
            }
            "date_bin" => match (a.first(), a.get(1), a.get(2)) {
                (
                    Some(Value::Interval(s)),
                    Some(Value::Timestamp(x)),
                    Some(Value::Timestamp(o)),
                ) => Value::Timestamp(crate::datefn::date_bin(*s, *x, *o)?),
                _ => Value::Null,
            },
            "date_trunc_zone" => match (text(0), a.get(1), a.get(2)) {
                (Some(unit), Some(Value::Timestamp(t)), Some(z)) if !z.is_null() => {
                    let zone = crate::tz::for_at_time_zone(z)?;
                    Value::Timestamp(crate::datetime::trunc_timestamptz_in(&unit, *t, &zone)?)
                }
                _ => Value::Null,
            },
            "array_to_timestamptz" => match a.first() {
                Some(Value::Array(items)) => {
                    let zone = crate::tz::session();
                    let mut out = Vec::with_capacity(items.len());
                    for v in items.iter() {
                        out.push(match cast_value(v.clone(), PgType::Timestamp)? {
                            Value::Timestamp(t) => Value::Timestamp(zone.to_utc(t)),
                            other => other,
                        });
                    }
                    Value::Array(out.into())
                }
                _ => Value::Null,
            },
            "timestamptz_from_local" | "timestamptz_to_local" => match a.first() {
                Some(v) => eval_zone_conversion(name, v),
                None => Value::Null,
            },
            "timestamptz_pl_interval" | "timestamptz_mi_interval" => match (a.first(), a.get(1)) {
                (Some(Value::Timestamp(t)), Some(Value::Interval(iv))) => {
                    let sub = name == "timestamptz_mi_interval";
                    let zone = crate::tz::session();
                    Value::Timestamp(crate::datetime::timestamptz_add(*t, *iv, sub, &zone)?)
                }
                _ => Value::Null,
            },
            "to_timestamp" => match a.first() {
                Some(Value::Float(f)) => crate::datetime::to_timestamp(*f)?,
                _ => Value::Null,
            },
            "md5" => {
                let bytes = match a.first() {
                    Some(Value::Bytes(b)) => Some(b.clone()),
                    _ => text(0).map(String::into_bytes),
                };
                match bytes {
                    None => Value::Null,
                    Some(b) => {
                        use md5::Digest;
                        let hex: String = md5::Md5::digest(&b)
                            .iter()
                            .map(|x| format!("{x:02x}"))
                            .collect();
                        Value::text(hex)
                    }
                }
            }
            "encode" => match (a.first(), text(1)) {
                (Some(Value::Bytes(b)), Some(f)) => Value::text(crate::types::encode_bytes(b, &f)?),
                _ => Value::Null,
            },
            "decode" => match (text(0), text(1)) {
                (Some(s), Some(f)) => Value::Bytes(crate::types::decode_bytes(&s, &f)?),
                _ => Value::Null,
            },
            other if other.starts_with("numeric_fn:") => {
                eval_numeric_function(&other["numeric_fn:".len()..], &a)?
            }
            other if other.starts_with("inet_fn:") => {
                eval_inet_function(&other["inet_fn:".len()..], &a)?
            }
            other if other.starts_with("json_fn:") => {
                eval_json_function(&other["json_fn:".len()..], &a)?
            }
            other if other.contains(':') => eval_datetime_call(other, &a)?,
            other => {
                return Err(SqlError::UndefinedFunction {
                    message: format!("function {other} does not exist"),
                    hint: None,
                })
            }
        })
    }

    /// The OID of the primary-key index named `name` (in `schema`, or the first schema of
    /// search_path holding one): indexes are relations too.
    /// The relation a `regclass` text names (its OID), or the error `'…'::regclass` gives for
    /// a name that finds none (the outer error: one the name's syntax gives).
    pub(crate) fn relation_named(&self, s: &str) -> Result<Result<u32, SqlError>, SqlError> {
        let parts = name_parts(s).ok_or_else(invalid_name_syntax)?;
        if parts.len() > 3 {
            return Err(SqlError::Syntax {
                message: format!("improper relation name (too many dotted names): {s}"),
            });
        }
        let (schema, n) = split_name(&parts)?;
        // A qualified name in a schema that does not exist: PostgreSQL's 3F000 (NULL from
        // to_regclass).
        if let Some(missing) = schema
            .as_deref()
            .filter(|s| self.cx.schema_oid(s).is_none())
        {
            return Ok(Err(SqlError::UndefinedSchema {
                name: missing.to_string(),
            }));
        }
        let found = match self.cx.find_table(schema.as_deref(), &n) {
            Some(t) => Some(t.oid),
            None => crate::pgcatalog::columns(schema.as_deref(), &n)
                .map(|(oid, _)| oid)
                .or_else(|| self.primary_key_index(schema.as_deref(), &n)),
        };
        Ok(found.ok_or_else(|| SqlError::UndefinedTable {
            name: parts.join("."),
        }))
    }

    /// `has_table_privilege` / `has_schema_privilege` / `has_database_privilege` (`[user,]
    /// object, privileges`): the session's role is a superuser, so every privilege of an
    /// object that exists is granted; PostgreSQL's errors for a missing object, role or
    /// privilege name.
    pub(super) fn has_privilege(&self, name: &str, a: &[Value]) -> Result<Value, SqlError> {
        if a.iter().any(Value::is_null) {
            return Ok(Value::Null);
        }
        let (user, object, privileges) = match a {
            [o, p] => (None, o, p),
            [u, o, p] => (Some(u), o, p),
            _ => return Ok(Value::Null),
        };
        if let Some(Value::Text(u)) = user {
            if **u != *self.cx.user && !u.eq_ignore_ascii_case("public") {
                return Err(SqlError::UndefinedObject {
                    message: format!("role \"{u}\" does not exist"),
                });
            }
        }
        let known: &[&str] = match name {
            "has_table_privilege" => &[
                "SELECT",
                "INSERT",
                "UPDATE",
                "DELETE",
                "TRUNCATE",
                "REFERENCES",
                "TRIGGER",
            ],
            "has_schema_privilege" => &["CREATE", "USAGE"],
            _ => &["CREATE", "CONNECT", "TEMPORARY", "TEMP"],
        };
        if let Value::Text(p) = privileges {
            for part in p.split(',') {
                let word = part.trim().to_ascii_uppercase();
                let word = word
                    .strip_suffix("WITH GRANT OPTION")
                    .unwrap_or(&word)
                    .trim();
                if !known.contains(&word) {
                    return Err(SqlError::InvalidParameter {
                        message: format!("unrecognized privilege type: \"{}\"", part.trim()),
                    });
                }
            }
        }
        if let Value::Text(o) = object {
            match name {
                "has_table_privilege" => {
                    self.relation_named(o)??;
                }
                "has_schema_privilege" => {
                    if self.cx.schema_oid(o).is_none() {
                        return Err(SqlError::UndefinedSchema {
                            name: o.to_string(),
                        });
                    }
                }
                _ => {
                    // pg_database's rows: the templates, postgres and the session's.
                    let listed = matches!(&**o, "template1" | "template0" | "postgres");
                    if !listed && **o != *self.cx.database {
                        return Err(SqlError::UndefinedDatabase {
                            name: o.to_string(),
                        });
                    }
                }
            }
        }
        Ok(Value::Bool(true))
    }

    pub(super) fn primary_key_index(&self, schema: Option<&str>, name: &str) -> Option<u32> {
        self.cx.index_table(schema, name).map(|(_, oid)| oid)
    }

    /// Raw bytes (keys and values, every version) stored under a key prefix; empty = all.
    pub(super) fn stored_bytes(&self, prefix: &[u8]) -> Result<i64, SqlError> {
        let end = if prefix.is_empty() {
            vec![0xFF; 8]
        } else {
            crate::keys::prefix_end(prefix)
        };
        let mut cursor = prefix.to_vec();
        let mut total = 0i64;
        loop {
            let batch = self.cx.kv.scan(&cursor, &end, crate::engine::SCAN_BATCH)?;
            for (k, v) in &batch {
                total += (k.len() + v.len()) as i64;
            }
            match batch.last() {
                Some((k, _)) if batch.len() == crate::engine::SCAN_BATCH => {
                    cursor = k.to_vec();
                    cursor.push(0);
                }
                _ => break,
            }
        }
        Ok(total)
    }
}
