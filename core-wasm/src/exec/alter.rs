//! ALTER TABLE: columns, keys, types (rewriting rows), renames, owners.

use super::*;

/// `ALTER TABLE`; then the views reading the table must still read it as they did.
pub(super) fn alter_table(cx: &mut Cx<'_>, at: &ast::AlterTable) -> Result<Output, SqlError> {
    let before = find_table(cx, &object_name(&at.name))?;
    let owner_only = at
        .operations
        .iter()
        .all(|op| matches!(op, ast::AlterTableOperation::OwnerTo { .. }));
    if let Some(v) = before.as_ref().filter(|t| t.view.is_some()) {
        cx.check_writable("ALTER TABLE")?;
        let done = Output::Command {
            tag: "ALTER TABLE".into(),
        };
        // PostgreSQL's ALTER TABLE renames a view and its columns too.
        match at.operations.as_slice() {
            [ast::AlterTableOperation::RenameTable {
                table_name: ast::RenameTableNameKind::To(new),
            }] => {
                let [new] = object_name(new).try_into().map_err(|_| syntax_at("."))?;
                crate::view::rename_view(cx, v, &new)?;
                return Ok(done);
            }
            [ast::AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            }] => {
                crate::view::rename_view_column(
                    cx,
                    v,
                    &crate::query::ident(old_column_name),
                    &crate::query::ident(new_column_name),
                )?;
                return Ok(done);
            }
            _ => {}
        }
        if !owner_only {
            return Err(SqlError::FeatureNotSupportedHint {
                what: format!("ALTER TABLE of view \"{}\"", v.name),
                hint: "Drop the view and create it again as it should be.".into(),
            });
        }
    }
    // A column renamed: the views reading it are rewritten to name it anew.
    let renamed_in = match (&before, at.operations.as_slice()) {
        (
            Some(t),
            [ast::AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            }],
        ) if t.sequence.is_none() => crate::view::plan_column_rename(
            cx,
            t,
            &crate::query::ident(old_column_name),
            &crate::query::ident(new_column_name),
        )?,
        _ => None,
    };
    let out = alter_table_definition(cx, at)?;
    if let Some(t) = before.filter(|_| !owner_only) {
        let mut change = crate::view::Change::of_alter(&at.operations);
        if !change.renamed.is_empty() {
            cx.pending()?.renamed.push(t.id);
        }
        if let Some(planned) = renamed_in {
            crate::view::apply_column_rename(cx, planned)?;
            change.renamed.clear();
        }
        if change.renamed_relation {
            crate::view::follow_renamed(cx, &t)?;
        }
        crate::view::check_dependent_views(cx, &t, &change)?;
    }
    Ok(out)
}

pub(super) fn alter_table_definition(
    cx: &mut Cx<'_>,
    at: &ast::AlterTable,
) -> Result<Output, SqlError> {
    cx.check_writable("ALTER TABLE")?;
    let parts = object_name(&at.name);
    let Some(t) = find_table(cx, &parts)? else {
        if at.if_exists {
            cx.sess.notice(Notice::Missing {
                kind: "relation",
                name: parts.last().cloned().unwrap_or_default(),
            });
            return Ok(Output::Command {
                tag: "ALTER TABLE".into(),
            });
        }
        return Err(SqlError::UndefinedTable {
            name: parts.last().cloned().unwrap_or_default(),
        });
    };
    if t.sequence.is_some() {
        return alter_sequence_as_table(cx, &t, &at.operations);
    }
    // OWNER TO alone changes nothing here: no new definition (which would make DuckDB reload
    // the table and other writers' commits conflict).
    let owner_only =
        |op: &ast::AlterTableOperation| matches!(op, ast::AlterTableOperation::OwnerTo { .. });
    if !at.operations.is_empty() && at.operations.iter().all(owner_only) {
        for op in &at.operations {
            if let ast::AlterTableOperation::OwnerTo { new_owner } = op {
                check_new_owner(cx, new_owner)?;
            }
        }
        return Ok(Output::Command {
            tag: "ALTER TABLE".into(),
        });
    }
    cx.pending()?.uses_definition(&t);
    let mut table = (*t).clone();
    // Added columns with a default, to fill into the rows already there.
    let mut fills: Vec<(String, String)> = Vec::new();
    // Positions of dropped columns, each in the column list left by the ones before it.
    let mut dropped: Vec<usize> = Vec::new();
    // Columns made NOT NULL, whose rows must hold no NULL (positions after every drop).
    let mut validate_not_null: Vec<usize> = Vec::new();
    // Columns given another type: position, and the new value's expression over the row as
    // it was before any type changed (USING, or the column itself), bound against
    // `before_retype`.
    let mut retyped: Vec<(usize, BExpr)> = Vec::new();
    let mut before_retype: Option<Table> = None;
    // ADD PRIMARY KEY / DROP CONSTRAINT of the key: the rows move under their new key.
    let mut rekey = false;
    // Columns whose type changed: the partial indexes naming them are bound again once every
    // subcommand has run (as PostgreSQL rebuilds its indexes after all of them).
    let mut predicates_to_rebind: Vec<String> = Vec::new();
    // The key's name when this statement drops it: free for a key it adds.
    let mut dropped_key_name: Option<String> = None;
    // Names of the sequences this statement creates (not yet visible to its reads).
    let mut chosen_sequences: Vec<String> = Vec::new();
    // Identity columns' `RESTART`s (by column), for the option lists that follow them.
    let mut identity_restarts: std::collections::BTreeMap<String, Option<ast::Expr>> =
        Default::default();
    // PostgreSQL's grammar has RENAME only as the whole statement.
    let rename = |op: &ast::AlterTableOperation| {
        matches!(
            op,
            ast::AlterTableOperation::RenameTable { .. }
                | ast::AlterTableOperation::RenameColumn { .. }
                | ast::AlterTableOperation::RenameConstraint { .. }
        )
    };
    if at.operations.len() > 1 {
        if let Some(i) = at.operations.iter().position(rename) {
            return Err(syntax_at(if i == 0 { "," } else { "RENAME" }));
        }
    }
    // Subcommands run in PostgreSQL's passes (drops first), each pass in the written order.
    let mut ops: Vec<&ast::AlterTableOperation> = at.operations.iter().collect();
    ops.sort_by_key(|op| alter_pass(op));
    for op in ops {
        match op {
            ast::AlterTableOperation::RenameTable { table_name } => {
                let ast::RenameTableNameKind::To(new) = table_name else {
                    return Err(syntax_at("AS"));
                };
                let parts = object_name(new);
                let [new_name] = parts.as_slice() else {
                    return Err(syntax_at("."));
                };
                let at = cx.read_point();
                if relation_name_taken(&cx.reader(at), &table.schema, new_name) {
                    return Err(SqlError::DuplicateTable {
                        name: new_name.clone(),
                    });
                }
                table.name = new_name.clone();
            }
            ast::AlterTableOperation::RenameConstraint { old_name, new_name } => {
                // The primary key is the one constraint a table has here (its index is
                // renamed with it, as in PostgreSQL).
                let (old, new) = (crate::query::ident(old_name), crate::query::ident(new_name));
                if table.primary_key.is_empty() || table.pkey_name != old {
                    return Err(SqlError::UndefinedObject {
                        message: format!(
                            "constraint \"{old}\" for table \"{}\" does not exist",
                            table.name
                        ),
                    });
                }
                let at = cx.read_point();
                if relation_name_taken(&cx.reader(at), &table.schema, &new) {
                    return Err(SqlError::DuplicateTable { name: new });
                }
                table.pkey_name = new;
            }
            ast::AlterTableOperation::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let (old, new) = (
                    crate::query::ident(old_column_name),
                    crate::query::ident(new_column_name),
                );
                let Some(i) = table.columns.iter().position(|c| c.name == old) else {
                    if SYSTEM_COLUMNS.contains(&old.as_str()) {
                        return Err(SqlError::UnsupportedByPostgres {
                            message: format!("cannot rename system column \"{old}\""),
                        });
                    }
                    return Err(SqlError::UndefinedColumn { name: old });
                };
                refuse_system_column_name(&new)?;
                if table.columns.iter().any(|c| c.name == new) {
                    return Err(SqlError::DuplicateColumn {
                        column: new,
                        table: table.name.clone(),
                    });
                }
                // The column's sequences follow it.
                for s in owned_sequences(cx, table.id, Some(&table.columns[i].name)) {
                    let mut moved = (*s).clone();
                    if let Some(def) = moved.sequence.as_mut() {
                        Arc::make_mut(def).owner = Some((table.id, new.clone()));
                    }
                    let p = cx.pending()?;
                    p.uses_definition(&s);
                    p.put_table(Arc::new(moved), false)?;
                }
                // Partial indexes name it in their predicates.
                for x in &mut table.indexes {
                    if let Some(p) = &x.predicate {
                        x.predicate = Some(rename_in_predicate(p, &old, &new));
                    }
                }
                table.columns[i].name = new;
            }
            ast::AlterTableOperation::AlterColumn { column_name, op } => {
                // An identity alteration rides on a marked pseudo-column (seqparse).
                let written = crate::query::ident(column_name);
                let (change, cname) = match crate::seqparse::identity_change(&written) {
                    Some((c, n)) => (Some(c), n.to_string()),
                    None => (None, written),
                };
                let Some(i) = table.columns.iter().position(|c| c.name == cname) else {
                    if SYSTEM_COLUMNS.contains(&cname.as_str()) {
                        return Err(SqlError::UnsupportedByPostgres {
                            message: format!("cannot alter system column \"{cname}\""),
                        });
                    }
                    return Err(SqlError::UndefinedColumn {
                        name: format!("{cname}\" of relation \"{}", table.name),
                    });
                };
                if let Some(change) = change {
                    alter_identity(cx, &mut table, i, change, op, &mut identity_restarts)?;
                    continue;
                }
                match op {
                    ast::AlterColumnOperation::SetNotNull => {
                        if !table.columns[i].not_null {
                            table.columns[i].not_null = true;
                            validate_not_null.push(i);
                        }
                    }
                    ast::AlterColumnOperation::DropNotNull
                    | ast::AlterColumnOperation::SetDefault { .. }
                    | ast::AlterColumnOperation::DropDefault
                        if table.columns[i].identity.is_some() =>
                    {
                        return Err(SqlError::SyntaxHint {
                            message: format!(
                                "column \"{cname}\" of relation \"{}\" is an identity column",
                                table.name
                            ),
                            hint: if matches!(op, ast::AlterColumnOperation::DropDefault) {
                                "Use ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY instead."
                            } else {
                                ""
                            },
                        });
                    }
                    ast::AlterColumnOperation::DropNotNull => {
                        if table.primary_key.contains(&i) {
                            return Err(SqlError::InvalidTableDefinition {
                                message: format!("column \"{cname}\" is in a primary key"),
                            });
                        }
                        table.columns[i].not_null = false;
                    }
                    ast::AlterColumnOperation::SetDefault { value } => {
                        let ty = table.columns[i].ty;
                        // Another default replaces a serial column's (its sequence stays).
                        table.columns[i].serial = None;
                        table.columns[i].default_sql = stored_default(value, ty);
                        check_default(cx, &table.columns[i])?;
                        let schema = table.schema.clone();
                        bind_sequence_default(cx, &schema, &mut table.columns[i])?;
                    }
                    ast::AlterColumnOperation::DropDefault => {
                        table.columns[i].default_sql = None;
                        table.columns[i].serial = None;
                    }
                    ast::AlterColumnOperation::SetDataType {
                        data_type, using, ..
                    } => {
                        // Every row is rewritten, and the commit moves each index entry of
                        // a CREATE INDEX index to the new type's key with it.
                        if table.primary_key.contains(&i)
                            || table
                                .indexes
                                .iter()
                                .any(|x| x.oid == 0 && x.columns.contains(&i))
                        {
                            return Err(SqlError::feature(
                                "ALTER COLUMN TYPE of a primary key or indexed column",
                            ));
                        }
                        let old = before_retype.get_or_insert_with(|| table.clone()).clone();
                        let (ty, typmod) = sql_type(data_type)?;
                        if let Some(identity) = table.columns[i].identity {
                            // The sequence takes the new type, as ALTER SEQUENCE … AS does.
                            retype_identity_sequence(cx, identity.sequence, ty)?;
                        }
                        let expr = retype_expr(cx, &old, i, ty, using.as_ref())?;
                        let c = &mut table.columns[i];
                        c.ty = ty;
                        c.typmod = typmod;
                        // The default goes on in the new type, as PostgreSQL converts it.
                        check_default(cx, c).map_err(|_| SqlError::DatatypeMismatch {
                            message: format!(
                                "default for column \"{cname}\" cannot be cast automatically to type {}",
                                crate::query::format_type(ty, typmod)
                            ),
                            hint: None,
                        })?;
                        if retyped.iter().any(|(p, _)| *p == i) {
                            return Err(SqlError::UnsupportedByPostgres {
                                message: format!("cannot alter type of column \"{cname}\" twice"),
                            });
                        }
                        retyped.push((i, expr));
                        // An index over it is rebuilt in the new type, which needs a btree
                        // operator class (PostgreSQL's 42704 for json); a predicate naming it
                        // is bound again.
                        if table.indexes.iter().any(|x| x.columns.contains(&i)) {
                            check_key_types(&table.columns, &[i])?;
                        }
                        predicates_to_rebind.push(cname.clone());
                    }
                    ast::AlterColumnOperation::AddGenerated {
                        generated_as,
                        sequence_options,
                    } => {
                        // PostgreSQL's grammar needs ALWAYS or BY DEFAULT here.
                        if generated_as.is_none() {
                            return Err(SqlError::Syntax {
                                message: "syntax error at or near \"AS\"".into(),
                            });
                        }
                        // PostgreSQL creates the sequence first (its options, its name), then
                        // checks the column.
                        let col = &table.columns[i];
                        if !matches!(col.ty, PgType::Int2 | PgType::Int4 | PgType::Int8) {
                            return Err(SqlError::InvalidParameter {
                                message:
                                    "identity column type must be smallint, integer, or bigint"
                                        .into(),
                            });
                        }
                        let (options, given) = crate::seqparse::identity_sequence_name(
                            sequence_options.as_deref().unwrap_or(&[]),
                        );
                        let def = crate::sequence::define(&options, col.ty)?.0;
                        let seq_name = column_sequence_name(
                            cx,
                            given,
                            (&table.schema, &table.name),
                            &cname,
                            &chosen_sequences,
                        )?;
                        let refused = |what: &str| SqlError::NotInPrerequisiteState {
                            message: format!(
                                "column \"{cname}\" of relation \"{}\" {what}",
                                table.name
                            ),
                        };
                        if !col.not_null {
                            return Err(refused(
                                "must be declared NOT NULL before identity can be added",
                            ));
                        }
                        if col.identity.is_some() {
                            return Err(refused("is already an identity column"));
                        }
                        if col.default_sql.is_some() {
                            return Err(refused("already has a default value"));
                        }
                        chosen_sequences.push(seq_name.clone());
                        let always = !matches!(generated_as, Some(ast::GeneratedAs::ByDefault));
                        let mut col = table.columns[i].clone();
                        let seq = link_sequence(
                            cx,
                            (&table.schema.clone(), table.id),
                            &seq_name,
                            &mut col,
                            def,
                            Some(always),
                        );
                        table.columns[i] = col;
                        cx.pending()?.put_table(Arc::new(seq), true)?;
                    }
                    other => {
                        return Err(SqlError::feature(format!(
                            "ALTER TABLE … ALTER COLUMN … {}",
                            crate::query::leading_words(&other.to_string(), 2)
                        )))
                    }
                }
            }
            ast::AlterTableOperation::AddColumn {
                if_not_exists,
                column_def,
                ..
            } => {
                let cname =
                    object_name(&ast::ObjectName::from(vec![column_def.name.clone()])).concat();
                refuse_system_column_name(&cname)?;
                if table.columns.iter().any(|c| c.name == cname) {
                    if *if_not_exists {
                        cx.sess.notice(Notice::ColumnExists {
                            column: cname,
                            table: table.name.clone(),
                        });
                        continue;
                    }
                    return Err(SqlError::DuplicateColumn {
                        column: cname,
                        table: table.name.clone(),
                    });
                }
                let serial = serial_type(&column_def.data_type);
                let (ty, typmod) = match serial {
                    Some(t) => (t, -1),
                    None => sql_type(&column_def.data_type)
                        .map_err(|e| type_after(e, &column_def.name, &column_def.data_type))?,
                };
                let mut col = Column {
                    name: cname,
                    ty,
                    typmod,
                    not_null: false,
                    default_sql: None,
                    identity: None,
                    serial: None,
                    comment: None,
                };
                let mut identity: Option<(bool, &[ast::SequenceOptions])> = None;
                for opt in &column_def.options {
                    match &opt.option {
                        ast::ColumnOption::NotNull => col.not_null = true,
                        ast::ColumnOption::Null => {}
                        ast::ColumnOption::Default(_)
                            if serial.is_some() || col.default_sql.is_some() =>
                        {
                            return Err(SqlError::Syntax {
                                message: format!(
                                    "multiple default values specified for column \"{}\" of table \"{}\"",
                                    col.name, table.name
                                ),
                            })
                        }
                        ast::ColumnOption::Default(e) => col.default_sql = stored_default(e, ty),
                        ast::ColumnOption::Generated {
                            generated_as:
                                g @ (ast::GeneratedAs::Always | ast::GeneratedAs::ByDefault),
                            sequence_options,
                            generation_expr: None,
                            ..
                        } if identity.is_none() => {
                            identity = Some((
                                *g == ast::GeneratedAs::Always,
                                sequence_options.as_deref().unwrap_or(&[]),
                            ));
                        }
                        other => {
                            return Err(SqlError::feature(format!(
                                "column option {other} in ALTER TABLE"
                            )))
                        }
                    }
                }
                match column_sequence(&mut col, serial.is_some(), identity, &table.name)? {
                    Some(planned) => {
                        // The sequence exists before the rows are filled from it, one value
                        // per row already there.
                        let seq_name = column_sequence_name(
                            cx,
                            planned.name.as_ref(),
                            (&table.schema, &table.name),
                            &col.name,
                            &chosen_sequences,
                        )?;
                        chosen_sequences.push(seq_name.clone());
                        let seq = link_sequence(
                            cx,
                            (&table.schema.clone(), table.id),
                            &seq_name,
                            &mut col,
                            planned.def,
                            planned.always,
                        );
                        cx.pending()?.put_table(Arc::new(seq), true)?;
                        fills.push((col.name.clone(), "DEFAULT".into()));
                        table.columns.push(col);
                        continue;
                    }
                    None => {
                        check_default(cx, &col)?;
                        let schema = table.schema.clone();
                        bind_sequence_default(cx, &schema, &mut col)?;
                    }
                }
                if col.not_null && col.default_sql.is_none() {
                    // Every row already there would hold NULL in it: only an empty table
                    // takes it (checked below, and again at commit).
                    validate_not_null.push(table.columns.len());
                }
                if let Some(d) = &col.default_sql {
                    fills.push((col.name.clone(), d.clone()));
                }
                table.columns.push(col);
            }
            ast::AlterTableOperation::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                for name in column_names {
                    let cname = crate::query::ident(name);
                    if SYSTEM_COLUMNS.contains(&cname.as_str()) {
                        return Err(SqlError::UnsupportedByPostgres {
                            message: format!("cannot drop system column \"{cname}\""),
                        });
                    }
                    let Some(i) = table.columns.iter().position(|c| c.name == cname) else {
                        if *if_exists {
                            cx.sess.notice(Notice::ColumnMissing {
                                column: cname,
                                table: table.name.clone(),
                            });
                            continue;
                        }
                        return Err(SqlError::UndefinedColumn {
                            name: format!("{cname}\" of relation \"{}", table.name),
                        });
                    };
                    if table.primary_key.contains(&i)
                        || table
                            .indexes
                            .iter()
                            .any(|x| x.oid == 0 && x.columns.contains(&i))
                    {
                        return Err(SqlError::feature(
                            "DROP COLUMN of a primary key or indexed column",
                        ));
                    }
                    // The indexes CREATE INDEX made over it, or whose predicate names it, go
                    // with it, as in PostgreSQL (the commit removes their entries).
                    table.indexes.retain(|x| {
                        let in_predicate = x
                            .predicate
                            .as_deref()
                            .is_some_and(|p| predicate_columns(p).contains(&cname));
                        x.oid == 0 || !(x.columns.contains(&i) || in_predicate)
                    });
                    // The column's sequences (serial, identity) go with it; a default of
                    // another column that draws from one stops the drop (2BP01).
                    let owned = owned_sequences(cx, table.id, Some(&cname));
                    if !owned.is_empty() {
                        let (tid, ci) = (table.id, i);
                        let deps = default_dependents(cx, &owned, &|t, c| t == tid && c == ci)?;
                        let what = {
                            let at = cx.read_point();
                            format!(
                                "{cname} of table {}",
                                name_in_message(&cx.reader(at), &table)
                            )
                        };
                        cascade_to_defaults(cx, deps, false, false, "column", &what)?;
                        crate::view::cascade_to_views(
                            cx,
                            &owned,
                            false,
                            false,
                            "column",
                            Some(&what),
                        )?;
                    }
                    for s in owned {
                        cx.pending()?.drop_definition(&s)?;
                    }
                    table.columns.remove(i);
                    let shift = |c: &mut usize| {
                        if *c > i {
                            *c -= 1;
                        }
                    };
                    table.primary_key.iter_mut().for_each(shift);
                    for x in &mut table.indexes {
                        x.columns.iter_mut().for_each(shift);
                    }
                    dropped.push(i);
                }
            }
            ast::AlterTableOperation::OwnerTo { new_owner } => check_new_owner(cx, new_owner)?,
            // The primary key is the one named constraint a table has here: dropping it moves
            // the rows back under row ids (its columns stay NOT NULL, as in PostgreSQL).
            ast::AlterTableOperation::DropConstraint {
                if_exists,
                name: cname,
                ..
            } => {
                let cname = crate::query::ident(cname);
                if !table.primary_key.is_empty() && table.pkey_name == cname {
                    table.primary_key.clear();
                    // The key's index goes, and its comments with it.
                    table.pkey_comment = None;
                    table.pkey_constraint_comment = None;
                    dropped_key_name = Some(cname);
                    rekey = true;
                } else if *if_exists {
                    cx.sess.notice(Notice::ConstraintMissing {
                        constraint: cname,
                        table: table.name.clone(),
                    });
                } else {
                    return Err(SqlError::UndefinedObject {
                        message: format!(
                            "constraint \"{cname}\" of relation \"{}\" does not exist",
                            table.name
                        ),
                    });
                }
            }
            ast::AlterTableOperation::AddConstraint {
                constraint: ast::TableConstraint::PrimaryKey(p),
                not_valid,
            } => {
                if *not_valid {
                    return Err(SqlError::UnsupportedByPostgres {
                        message: "PRIMARY KEY constraints cannot be marked NOT VALID".into(),
                    });
                }
                refuse_key_options(p)?;
                if !table.primary_key.is_empty() {
                    return Err(multiple_primary_keys(&table.name));
                }
                let mut key = Vec::with_capacity(p.columns.len());
                for col in &p.columns {
                    let cname = key_column_name(col)?;
                    let Some(i) = table.columns.iter().position(|c| c.name == cname) else {
                        return Err(SqlError::UndefinedColumn {
                            name: format!("{cname}\" of relation \"{}", table.name),
                        });
                    };
                    if key.contains(&i) {
                        return Err(SqlError::ColumnTwiceInKey { name: cname });
                    }
                    key.push(i);
                }
                check_key_types(&table.columns, &key)?;
                // NOT NULL, checked when the rows move (rekey_rows).
                for &i in &key {
                    table.columns[i].not_null = true;
                }
                let at = cx.read_point();
                let given = p.name.as_ref().map(crate::query::ident);
                table.pkey_name = primary_key_name(
                    &cx.reader(at),
                    &table.schema,
                    &table.name,
                    given,
                    &[],
                    dropped_key_name.as_deref(),
                )?;
                table.primary_key = key;
                rekey = true;
            }
            other => {
                return Err(SqlError::feature(format!(
                    "ALTER TABLE {}",
                    crate::query::leading_words(&other.to_string(), 2)
                )))
            }
        }
    }
    for column in &predicates_to_rebind {
        rebind_predicates(cx, &mut table, column)?;
    }
    let (schema, name) = (table.schema.clone(), table.name.clone());
    // Rows are stored by column position: the rows already there (read with the old
    // definition) lose the dropped columns' values, keeping their keys, row ids and ctids.
    let rewrite = !(dropped.is_empty() && retyped.is_empty());
    let table_id = table.id;
    // A changed key moves the rows last, once the statement's other changes (an added
    // column's fill, which may be the new key) are in them under the old key.
    let keyed = if rekey {
        if rewrite {
            return Err(SqlError::feature(
                "changing the primary key together with DROP COLUMN or ALTER COLUMN TYPE",
            ));
        }
        let mut keyed = table.clone();
        // A snapshot from before would look rows up by a key they are not stored under.
        keyed.layout = crate::catalog::LAYOUT_THIS_COMMIT;
        table.primary_key = t.primary_key.clone();
        table.pkey_name = t.pkey_name.clone();
        Some(keyed)
    } else {
        None
    };
    if rewrite {
        table.layout = crate::catalog::LAYOUT_THIS_COMMIT;
        let rewritten = rewrite_rows(cx, &t, &dropped, before_retype.as_ref(), &retyped, &table)?;
        cx.pending()?.put_table(Arc::new(table.clone()), false)?;
        for (lk, row, seq) in rewritten {
            let size = buffered_size(&row, &t);
            cx.pending()?.put_row(
                lk,
                RowWrite {
                    table_id,
                    row: Some(row),
                    base_seq: seq,
                    inserted: false,
                },
                size,
            )?;
        }
    } else {
        cx.pending()?.put_table(Arc::new(table.clone()), false)?;
    }
    // A column filled with its default below is checked by the fill (its NOT NULL).
    validate_not_null.retain(|i| {
        let filled_here = table
            .columns
            .get(*i)
            .is_some_and(|c| fills.iter().any(|(name, _)| *name == c.name));
        !filled_here
    });
    if !validate_not_null.is_empty() {
        // The rows as the altered definition reads them (a drop rewrote them all into this
        // transaction's writes; otherwise an added column is past the end of every row).
        let at = cx.read_point();
        let rcx = cx.reader(at);
        rcx.check_layout(&t)?;
        for (_, row, _) in visible_rows(&rcx, &t)? {
            if let Some(&i) = validate_not_null.iter().find(|&&i| datum_is_null(&row, i)) {
                return Err(table.column_contains_nulls(i));
            }
        }
    }
    // Rows already there read an added column's default, as in PostgreSQL (which keeps a
    // constant default as the column's "missing value" and rewrites the table for a volatile
    // one): here they are rewritten with it, in the same transaction, as an UPDATE would.
    // One UPDATE for them all: each added NOT NULL column (a serial one) must hold its value
    // when the row is checked.
    let filled = !fills.is_empty();
    if filled {
        let sets: Vec<String> = fills
            .iter()
            .map(|(column, default)| format!("{} = {default}", quoted(column)))
            .collect();
        run_generated_dml(
            cx,
            &format!(
                "UPDATE {}.{} SET {}",
                quoted(&schema),
                quoted(&name),
                sets.join(", ")
            ),
        )?;
    }
    if let Some(keyed) = keyed {
        rekey_rows(cx, &table, &keyed)?;
        cx.pending()?.put_table(Arc::new(keyed), false)?;
    }
    if rewrite || filled || rekey || !validate_not_null.is_empty() {
        let at = cx.read_point();
        cx.pending()?.read_whole_table(table_id, at);
    }
    Ok(Output::Command {
        tag: "ALTER TABLE".into(),
    })
}

/// ADD PRIMARY KEY: moves every row of `t` (keyed by row id, as this transaction sees them)
/// under its key in `keyed`, the definition with the new primary key, after checking that no
/// two rows with the key's columns all non-NULL share it (PostgreSQL builds the unique index
/// first), then that no row has a NULL in them (its phase 3). The rows keep their row ids and
/// tuples; the old keys get tombstones, so a snapshot from before reads the rows it read.
pub(super) fn rekey_rows(cx: &mut Cx<'_>, t: &Table, keyed: &Table) -> Result<(), SqlError> {
    let at = cx.read_point();
    let rows = {
        let rcx = cx.reader(at);
        rcx.check_layout(t)?;
        visible_rows(&rcx, t)?
    };
    let mut moved: std::collections::BTreeMap<Vec<u8>, usize> = Default::default();
    let mut duplicate: Option<Vec<u8>> = None;
    // PostgreSQL's phase 3 checks each row's NOT NULL columns in column order.
    let mut by_position = keyed.primary_key.clone();
    by_position.sort_unstable();
    let mut first_null: Option<usize> = None;
    for (i, (_, row, _)) in rows.iter().enumerate() {
        if let Some(&c) = by_position.iter().find(|&&c| datum_is_null(row, c)) {
            first_null = first_null.or(Some(c));
            continue;
        }
        let key = stored_row_key(keyed, row)?;
        if moved.insert(key.clone(), i).is_some() && duplicate.as_ref().is_none_or(|d| key < *d) {
            duplicate = Some(key);
        }
    }
    if let Some(key) = duplicate {
        let row = moved.get(&key).and_then(|&i| rows.get(i)).map(|r| &r.1);
        return Err(SqlError::UniqueIndexDuplicates {
            index: keyed.pkey_name.clone(),
            schema: keyed.schema.clone(),
            table: keyed.name.clone(),
            detail: format!("Key {} is duplicated.", key_text(keyed, row)),
        });
    }
    if let Some(c) = first_null {
        return Err(keyed.column_contains_nulls(c));
    }
    let table_id = t.id;
    // Tombstones first: a new key may equal an old row id's key, and must end up holding
    // the row.
    for (lk, _, seq) in &rows {
        cx.pending()?.put_row(
            lk.clone(),
            RowWrite {
                table_id,
                row: None,
                base_seq: *seq,
                inserted: false,
            },
            0,
        )?;
    }
    for (key, i) in moved {
        let Some((_, row, _)) = rows.get(i) else {
            continue;
        };
        let size = buffered_size(row, keyed);
        cx.pending()?.put_row(
            key,
            RowWrite {
                table_id,
                row: Some(row.clone()),
                base_seq: None,
                inserted: true,
            },
            size,
        )?;
    }
    Ok(())
}

/// `OWNER TO`: RockLake has one login role, which owns everything. Giving an object to it is
/// a no-op, as in PostgreSQL; to another role it cannot be represented.
pub(crate) fn check_new_owner(cx: &Cx<'_>, owner: &ast::Owner) -> Result<(), SqlError> {
    let ast::Owner::Ident(id) = owner else {
        return Ok(());
    };
    let name = crate::query::ident(id);
    if name == cx.sess.user {
        return Ok(());
    }
    if crate::pgcatalog::predefined_role(&name) {
        return Err(SqlError::FeatureNotSupportedHint {
            what: format!("changing the owner to role \"{name}\""),
            hint: format!(
                "RockLake has one login role, \"{}\", which owns every object.",
                cx.sess.user
            ),
        });
    }
    Err(SqlError::UndefinedObject {
        message: format!("role \"{name}\" does not exist"),
    })
}

/// The rows of `t` (as this transaction sees them) rewritten into the altered definition
/// `new`: the dropped positions removed in order, then each retyped column's value computed
/// over the row as `before_retype` reads it and converted as an assignment would. Keys, row
/// ids, tuples and base versions are kept.
pub(super) fn rewrite_rows(
    cx: &mut Cx<'_>,
    t: &Table,
    dropped: &[usize],
    before_retype: Option<&Table>,
    retyped: &[(usize, BExpr)],
    new: &Table,
) -> Result<Vec<crate::engine::VisibleRow>, SqlError> {
    let at = cx.read_point();
    let rcx = cx.reader(at);
    rcx.check_layout(t)?;
    let mut rows = visible_rows(&rcx, t)?;
    let exec = Executor::new(&rcx);
    for (_, row, _) in &mut rows {
        rcx.tick()?;
        for &i in dropped {
            if i < row.values.len() {
                row.values.remove(i);
            }
        }
        let Some(old) = before_retype else {
            continue;
        };
        let values = row_values(old, row.clone())?;
        let env = Env {
            row: &values,
            parent: None,
            aggs: None,
        };
        for (i, e) in retyped {
            let v = assign(&new.columns[*i], exec.eval(e, &env)?)?;
            if let Some(slot) = row.values.get_mut(*i) {
                *slot = to_datum(&v);
            } else {
                row.values.resize(*i, pb::Datum::default());
                row.values.push(to_datum(&v));
            }
        }
    }
    Ok(rows)
}

/// The value ALTER COLUMN … TYPE gives column `i` of a row of `t` (before the change): the
/// USING expression or the column itself, which must convert to `ty` as an assignment
/// (PostgreSQL's 42804 and hints otherwise).
pub(super) fn retype_expr(
    cx: &mut Cx<'_>,
    t: &Table,
    i: usize,
    ty: PgType,
    using: Option<&ast::Expr>,
) -> Result<BExpr, SqlError> {
    let c = &t.columns[i];
    let target = crate::query::format_type(ty, -1);
    let at = cx.read_point();
    let rcx = cx.reader(at);
    let (e, from) = match using {
        Some(u) => {
            refuse_in_expression(u, "transform expression", false)?;
            let scope = table_scope(t, &t.name);
            let mut binder = Binder::new(&rcx);
            let (e, from) = binder.bind_expr(u, &scope, None)?;
            if !crate::types::assignable(from, ty) {
                return Err(SqlError::DatatypeMismatch {
                    message: format!(
                        "result of USING clause for column \"{}\" cannot be cast automatically to type {target}",
                        c.name
                    ),
                    hint: Some("You might need to add an explicit cast.".into()),
                });
            }
            (e, from)
        }
        None => {
            if !crate::types::assignable(c.ty, ty) {
                return Err(SqlError::DatatypeMismatch {
                    message: format!(
                        "column \"{}\" cannot be cast automatically to type {target}",
                        c.name
                    ),
                    hint: Some(format!(
                        "You might need to specify \"USING {}::{target}\".",
                        crate::pgcatalog::quote_ident(&c.name)
                    )),
                });
            }
            (BExpr::Col(i), c.ty)
        }
    };
    crate::query::assignment(e, from, ty)
}

/// Whether a relation of schema `schema` (a table or a primary-key index) is named `name`.
pub(crate) fn relation_name_taken(rcx: &ReadCx<'_>, schema: &str, name: &str) -> bool {
    rcx.relation_named(schema, name) || crate::pgcatalog::columns(Some(schema), name).is_some()
}

/// The name of a new primary key's constraint and index: the one given (42P07 when a
/// relation of the schema, or one in `taken`, has it), or PostgreSQL's choice: `t_pkey`, else
/// `t_pkey1`, `t_pkey2`, … past the names taken.
pub(super) fn primary_key_name(
    rcx: &ReadCx<'_>,
    schema: &str,
    table: &str,
    given: Option<String>,
    taken: &[String],
    freed: Option<&str>,
) -> Result<String, SqlError> {
    let used = |n: &String| {
        freed != Some(n.as_str()) && relation_name_taken(rcx, schema, n) || taken.contains(n)
    };
    if let Some(n) = given {
        if used(&n) {
            return Err(SqlError::DuplicateTable { name: n });
        }
        return Ok(n);
    }
    let base = format!("{table}_pkey");
    let mut n = base.clone();
    let mut k = 0;
    while used(&n) {
        k += 1;
        n = format!("{base}{k}");
    }
    Ok(n)
}

/// The column a key names (`PRIMARY KEY (a, b)`): a plain name, as PostgreSQL's grammar has it.
pub(super) fn key_column_name(col: &ast::IndexColumn) -> Result<String, SqlError> {
    match &col.column.expr {
        ast::Expr::Identifier(_) if col.operator_class.is_some() => {
            Err(SqlError::feature("operator classes in a PRIMARY KEY"))
        }
        ast::Expr::Identifier(id) => Ok(crate::query::ident(id)),
        other => Err(syntax_at(
            other.to_string().split_whitespace().nth(1).unwrap_or("("),
        )),
    }
}

/// A primary key's index options: RockLake's key is the row order itself, checked at once.
pub(super) fn refuse_key_options(p: &ast::PrimaryKeyConstraint) -> Result<(), SqlError> {
    // NOT DEFERRABLE and INITIALLY IMMEDIATE restate what every key is.
    let deferred = p.characteristics.as_ref().is_some_and(|c| {
        c.deferrable == Some(true)
            || c.initially == Some(ast::DeferrableInitial::Deferred)
            || c.enforced == Some(false)
    });
    if !p.include.is_empty()
        || p.index_type.is_some()
        || p.index_name.is_some()
        || !p.index_options.is_empty()
        || deferred
    {
        return Err(SqlError::feature(
            "PRIMARY KEY with INCLUDE, USING, WITH or DEFERRABLE",
        ));
    }
    Ok(())
}

/// A primary key's index needs a btree operator class for each column's type: json and xid
/// have none in PostgreSQL (42704).
pub(super) fn check_key_types(columns: &[Column], key: &[usize]) -> Result<(), SqlError> {
    match key
        .iter()
        .filter_map(|i| columns.get(*i))
        .find(|c| matches!(c.ty, PgType::Json | PgType::Xid))
    {
        Some(c) => Err(SqlError::NoBtreeOperatorClass {
            type_name: c.ty.sql_name().into(),
        }),
        None => Ok(()),
    }
}

pub(super) fn multiple_primary_keys(table: &str) -> SqlError {
    SqlError::InvalidTableDefinition {
        message: format!("multiple primary keys for table \"{table}\" are not allowed"),
    }
}

/// The pass of PostgreSQL's ALTER TABLE (`AT_PASS_*` of its tablecmds.c) a subcommand runs in.
pub(super) fn alter_pass(op: &ast::AlterTableOperation) -> u8 {
    use ast::AlterColumnOperation as C;
    match op {
        ast::AlterTableOperation::DropColumn { .. } => 0,
        ast::AlterTableOperation::AlterColumn { op, .. } => match op {
            C::DropNotNull | C::DropDefault => 0,
            C::SetDataType { .. } => 1,
            C::SetNotNull => 5,
            C::SetDefault { .. } => 9,
            _ => 10,
        },
        ast::AlterTableOperation::AddColumn { .. } => 4,
        ast::AlterTableOperation::DropConstraint { .. } => 0,
        ast::AlterTableOperation::AddConstraint { .. } => 6,
        _ => 10,
    }
}
