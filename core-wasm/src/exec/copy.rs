//! COPY TO and FROM: options, the rows of a COPY FROM, headers.

use super::*;

pub(super) fn copy(
    cx: &mut Cx<'_>,
    source: &ast::CopySource,
    to: bool,
    target: &ast::CopyTarget,
    options: &[ast::CopyOption],
    legacy: &[ast::CopyLegacyOption],
) -> Result<Output, SqlError> {
    if !to {
        return copy_from(cx, source, target, options, legacy);
    }
    if !matches!(target, ast::CopyTarget::Stdout) {
        return Err(SqlError::feature("COPY TO a file or program (only STDOUT)"));
    }
    let at = cx.read_point();
    // A table's COPY opens the table before reading the options, a query's reads them first
    // (PostgreSQL's DoCopy and BeginCopyTo), so errors come in PostgreSQL's order. A table
    // (also pg_catalog's) is read as `SELECT cols FROM t`; its columns named in options are
    // checked against the relation's.
    let (spec, q, relation) = match source {
        ast::CopySource::Query(q) => (
            CopySpec::from_options(options, legacy, false)?,
            (**q).clone(),
            None,
        ),
        ast::CopySource::Table {
            table_name,
            columns,
        } => {
            if let Some(t) = find_table(cx, &object_name(table_name))? {
                refuse_kind(&t, Purpose::CopyTo)?;
            }
            let star = parse_query_text(&format!("SELECT * FROM {table_name}"))?;
            let all: Vec<String> = {
                let rcx = cx.reader(at);
                let bq = Binder::new(&rcx).bind_query(&star, None)?;
                bq.columns.iter().map(|c| c.name.to_string()).collect()
            };
            let spec = CopySpec::from_options(options, legacy, false)?;
            let table = object_name(table_name).last().cloned().unwrap_or_default();
            let cols = copy_columns(&all, &table, columns)?;
            let q = if columns.is_empty() {
                star
            } else {
                let list: Vec<String> = cols.iter().map(|i| quoted(&all[*i])).collect();
                parse_query_text(&format!("SELECT {} FROM {table_name}", list.join(", ")))?
            };
            (spec, q, Some((all, table, cols)))
        }
    };
    let binary = spec.format == copyformat::Format::Binary;
    // Only a result at the newest commit point, without writes of the session's own, can
    // be shared (see copycache).
    // A query's values can depend on the session's zone (a cast to date): only UTC sessions
    // share.
    let shareable = binary
        && at == cx.st.latest
        && cx.sess.txn.as_ref().is_none_or(|t| t.pending.is_empty())
        && crate::tz::session().is_utc()
        && !crate::pgcatalog::quote_all();
    if shareable {
        if let Some(hit) = cx.st.copies.get(at, &q) {
            return Ok(hit);
        }
    }
    // A result that may be kept notes the store ranges it reads (see copycache).
    let reads = crate::copycache::ReadSet::new(cx.kv);
    let mut rcx = cx.reader(at);
    if shareable {
        rcx.kv = &reads;
    }
    let mut binder = Binder::new(&rcx);
    let bq = binder.bind_query(&q, None)?;
    let shareable = shareable && binder.reads_only_committed_tables();
    let types: Vec<PgType> = bq
        .columns
        .iter()
        .map(|c| {
            if c.ty == PgType::Unknown {
                PgType::Text
            } else {
                c.ty
            }
        })
        .collect();
    let names: Vec<String> = bq.columns.iter().map(|c| c.name.to_string()).collect();
    let force_quote = if spec.force_quote_all {
        vec![true; names.len()]
    } else {
        match &relation {
            Some((all, table, cols)) => {
                relation_flags(all, table, cols, &spec.force_quote, "FORCE_QUOTE")?
            }
            None => CopySpec::flags(&spec.force_quote, &names, "FORCE_QUOTE", &|n| {
                (!names.iter().any(|x| x == n)).then(|| SqlError::UndefinedColumn {
                    name: n.to_string(),
                })
            })?,
        }
    };
    let mut chunks = CopyChunks::new();
    let too_large = |_| SqlError::ProgramLimit {
        message: "COPY result exceeds 4 GiB".into(),
    };
    let exec = Executor::new(&rcx);
    let n;
    if binary {
        // PostgreSQL sends the header with the first tuple, and with the trailer when
        // there is none; DuckDB's reader relies on that framing.
        chunks.buf().extend_from_slice(&wire::copy_binary_header());
        // A filtered projection of one table (DuckDB's catalog reads) is encoded from the
        // scanned values as they come; anything else runs as a query.
        let fast = match crate::query::simple_scan(&bq) {
            Some(scan) => exec.copy_simple_scan(&scan, &types, &mut chunks)?,
            None => None,
        };
        n = match fast {
            Some(n) => n,
            None => {
                let rows = exec.run_query(&bq, None)?;
                for r in &rows {
                    wire::copy_binary_row_into(r, &types, chunks.buf())?;
                    chunks.end_chunk().map_err(too_large)?;
                }
                rows.len()
            }
        };
        chunks.buf().extend_from_slice(&wire::copy_binary_trailer());
        chunks.end_chunk().map_err(too_large)?;
    } else {
        let mut rows = exec.run_query(&bq, None)?;
        rcx.name_reg_columns(&types, &mut rows);
        n = rows.len();
        if spec.header == copyformat::Header::Present {
            chunks
                .push(&spec.layout.write_header(&names))
                .map_err(too_large)?;
        }
        for r in &rows {
            chunks
                .push(&spec.layout.write_row(r, &types, &force_quote))
                .map_err(too_large)?;
        }
    }
    let out = Output::CopyOut {
        binary,
        columns: types.len() as u16,
        chunks,
        tag: format!("COPY {n}"),
    };
    if shareable {
        cx.st.copies.put(at, q, &out, reads.into_ranges());
    }
    Ok(out)
}

pub(super) fn copy_from(
    cx: &mut Cx<'_>,
    source: &ast::CopySource,
    target: &ast::CopyTarget,
    options: &[ast::CopyOption],
    legacy: &[ast::CopyLegacyOption],
) -> Result<Output, SqlError> {
    cx.check_writable("COPY FROM")?;
    if !matches!(target, ast::CopyTarget::Stdin) {
        return Err(SqlError::feature(
            "COPY FROM a file or program (only STDIN)",
        ));
    }
    // `… WHERE cond` comes as a query over the table (see copyparse).
    let (table_name, columns, filter) = match source {
        ast::CopySource::Table {
            table_name,
            columns,
        } => (table_name.clone(), columns.clone(), None),
        ast::CopySource::Query(q) => crate::copyparse::filtered_parts(q)
            .map(|(t, c, f)| (t, c, Some(f)))
            .ok_or_else(|| SqlError::internal("COPY FROM source is not a table"))?,
    };
    let t = write_target_for(cx, &table_name, Purpose::CopyFrom)?;
    if let Some(f) = &filter {
        // Checked now, for PostgreSQL's errors before any data; bound again at the end.
        let at = cx.read_point();
        let rcx = cx.reader(at);
        Binder::new(&rcx).bind_copy_where(f, &table_scope(&t, &t.name))?;
    }
    let spec = CopySpec::from_options(options, legacy, true)?;
    let all: Vec<String> = t.columns.iter().map(|c| c.name.clone()).collect();
    let cols = copy_columns(&all, &t.name, &columns)?;
    let force_not_null =
        relation_flags(&all, &t.name, &cols, &spec.force_not_null, "FORCE_NOT_NULL")?;
    let force_null = relation_flags(&all, &t.name, &cols, &spec.force_null, "FORCE_NULL")?;
    cx.ensure_txn();
    let n = cols.len() as u16;
    let binary = spec.format == copyformat::Format::Binary;
    cx.sess.copy_in = Some(CopyIn {
        table_id: t.id,
        columns: cols,
        spec,
        force_not_null,
        force_null,
        filter,
        buf: Vec::new(),
    });
    Ok(Output::CopyIn { binary, columns: n })
}

/// Ends COPY FROM STDIN: reads the buffered data as the COPY's format says and inserts each
/// row, columns outside the COPY's list taking their defaults. An error names its line (and
/// column) in PostgreSQL's CONTEXT.
pub fn finish_copy_in(cx: &mut Cx<'_>, copy: CopyIn) -> Result<Output, SqlError> {
    let _zone = cx.enter_statement_settings()?;
    let at = cx.read_point();
    let t = {
        let rcx = cx.reader(at);
        rcx.table_by_id(copy.table_id)
            .ok_or_else(|| SqlError::UndefinedTable {
                name: format!("table {}", copy.table_id),
            })?
    };
    let mut defaults = column_defaults(cx, at, &t)?;
    for i in &copy.columns {
        defaults[*i] = None;
    }
    let filter = match &copy.filter {
        Some(f) => {
            let rcx = cx.reader(at);
            let scope = table_scope(&t, &t.name);
            let bound = Binder::new(&rcx).bind_copy_where(f, &scope)?;
            Some((bound, scope.cols.len()))
        }
        None => None,
    };
    let fill = RowFill {
        at,
        columns: &copy.columns,
        defaults: &defaults,
        filter: filter.as_ref(),
    };
    let in_copy = |error: SqlError, context: String| SqlError::InCopy {
        error: Box::new(error),
        context,
    };
    let line_context = |number: u64, text: Option<&str>| match text {
        Some(text) => format!("COPY {}, line {number}: \"{}\"", t.name, printout(text)),
        None => format!("COPY {}, line {number}", t.name),
    };
    let mut n = 0u64;
    if copy.spec.format == copyformat::Format::Binary {
        let types: Vec<PgType> = copy.columns.iter().map(|i| t.columns[*i].ty).collect();
        for (line, values) in wire::parse_copy_binary(&copy.buf, &types)?
            .into_iter()
            .enumerate()
        {
            // PostgreSQL numbers binary tuples as lines.
            let line = line as u64 + 1;
            let mut row = Vec::with_capacity(values.len());
            for (v, ci) in values.into_iter().zip(&copy.columns) {
                let col = &t.columns[*ci];
                row.push(assign(col, v).map_err(|e| {
                    in_copy(
                        e,
                        format!("COPY {}, line {line}, column {}", t.name, col.name),
                    )
                })?);
            }
            let at_line = |e| in_copy(e, line_context(line, None));
            if let Some(full) = copied_row(cx, &t, &fill, row).map_err(at_line)? {
                write_insert(cx, &t, &full).map_err(at_line)?;
                n += 1;
            }
        }
        return Ok(Output::Command {
            tag: format!("COPY {n}"),
        });
    }
    let layout = &copy.spec.layout;
    let mut reader = LineReader::new(&copy.buf, layout, &t.name);
    if copy.spec.header == copyformat::Header::Present {
        // PostgreSQL reads a header line without splitting it into fields.
        reader.skip_line()?;
    }
    if copy.spec.header == copyformat::Header::Match {
        let header = reader.next_line()?;
        check_header(&t, &copy.columns, layout, header.as_ref()).map_err(|e| {
            in_copy(
                e,
                line_context(1, Some(header.as_ref().map_or("", |h| &h.text))),
            )
        })?;
    }
    while let Some(line) = reader.next_line()? {
        let bad_line = |e: SqlError| in_copy(e, line_context(line.number, Some(&line.text)));
        // A COPY of no columns takes empty lines (PostgreSQL reads no field from them).
        let fields = if copy.columns.is_empty() && line.text.is_empty() {
            0
        } else {
            line.fields.len()
        };
        if fields > copy.columns.len() {
            return Err(bad_line(SqlError::BadCopyFormat {
                message: "extra data after last expected column".into(),
                hint: None,
            }));
        }
        let mut row = Vec::with_capacity(copy.columns.len());
        for (k, ci) in copy.columns.iter().enumerate() {
            let col = &t.columns[*ci];
            let Some(field) = line.fields.get(k) else {
                return Err(bad_line(SqlError::BadCopyFormat {
                    message: format!("missing data for column \"{}\"", col.name),
                    hint: None,
                }));
            };
            let field = match field {
                None if copy.force_not_null[k] => Some(layout.null.as_str()),
                Some(f) if copy.force_null[k] && *f == layout.null => None,
                f => f.as_deref(),
            };
            row.push(match field {
                None => assign(col, Value::Null),
                Some(f) => parse_text(f, col.ty)
                    .and_then(|v| assign(col, v))
                    .map_err(|e| {
                        in_copy(
                            e,
                            format!(
                                "COPY {}, line {}, column {}: \"{}\"",
                                t.name,
                                line.number,
                                col.name,
                                printout(f)
                            ),
                        )
                    }),
            }?);
        }
        // Defaults, WHERE and NOT NULL are checked while the line is at hand (its text in the
        // context), keys when PostgreSQL flushes its batch (the line number only).
        let Some(full) = copied_row(cx, &t, &fill, row).map_err(bad_line)? else {
            continue;
        };
        write_insert(cx, &t, &full).map_err(|e| match e {
            SqlError::NotNullViolation { .. } => bad_line(e),
            e => in_copy(e, line_context(line.number, None)),
        })?;
        n += 1;
    }
    Ok(Output::Command {
        tag: format!("COPY {n}"),
    })
}

/// `HEADER MATCH`: the header line names the COPY's columns, in order.
pub(super) fn check_header(
    t: &Table,
    cols: &[usize],
    layout: &copyformat::Layout,
    header: Option<&copyformat::Line>,
) -> Result<(), SqlError> {
    let bad = |message: String| SqlError::BadCopyFormat {
        message,
        hint: None,
    };
    // No line at all reads as an empty one: one empty field.
    let empty = [(!layout.null.is_empty()).then(String::new)];
    let fields = header.map_or(&empty[..], |h| h.fields.as_slice());
    if fields.len() != cols.len() {
        return Err(bad(format!(
            "wrong number of fields in header line: got {}, expected {}",
            fields.len(),
            cols.len()
        )));
    }
    for (k, (ci, got)) in cols.iter().zip(fields).enumerate() {
        let want = &t.columns[*ci].name;
        match got {
            Some(got) if got == want => {}
            Some(got) => {
                return Err(bad(format!(
                    "column name mismatch in header line field {}: got \"{got}\", expected \"{want}\"",
                    k + 1
                )))
            }
            None => {
                return Err(bad(format!(
                    "column name mismatch in header line field {}: got null value (\"{}\"), expected \"{want}\"",
                    k + 1,
                    layout.null
                )))
            }
        }
    }
    Ok(())
}

/// How a COPY FROM row becomes a table row.
pub(super) struct RowFill<'a> {
    pub(super) at: u64,
    /// The COPY's columns, in the order of its values.
    pub(super) columns: &'a [usize],
    /// Defaults of the columns outside the COPY's list (`None` for those in it).
    pub(super) defaults: &'a [Option<BExpr>],
    /// `WHERE`, over the table's row padded to its scope's width (hidden columns NULL).
    pub(super) filter: Option<&'a (BExpr, usize)>,
}

/// One COPY row as a table row: the COPY's columns from `values`, the others their
/// defaults; `None` when the WHERE condition does not accept it.
pub(super) fn copied_row(
    cx: &mut Cx<'_>,
    t: &Table,
    fill: &RowFill<'_>,
    values: Vec<Value>,
) -> Result<Option<Vec<Value>>, SqlError> {
    let mut full = vec![Value::Null; t.columns.len()];
    for (v, ci) in values.into_iter().zip(fill.columns) {
        full[*ci] = v;
    }
    if fill.defaults.iter().all(Option::is_none) && fill.filter.is_none() {
        return Ok(Some(full));
    }
    let rcx = cx.reader(fill.at);
    let exec = Executor::new(&rcx);
    let env = Env {
        row: &[],
        parent: None,
        aggs: None,
    };
    for (i, d) in fill.defaults.iter().enumerate() {
        if let Some(d) = d {
            full[i] = assign(&t.columns[i], exec.eval(d, &env)?)?;
        }
    }
    if let Some((cond, width)) = fill.filter {
        let mut row = full.clone();
        row.resize(*width, Value::Null);
        let env = Env {
            row: &row,
            parent: None,
            aggs: None,
        };
        if exec.eval(cond, &env)? != Value::Bool(true) {
            return Ok(None);
        }
    }
    Ok(Some(full))
}
