//! Sequences: CREATE / ALTER SEQUENCE, serial and identity columns, their defaults.

use super::*;

/// A column's sequence to be: its definition, the identity's ALWAYS (`None`: serial), and the
/// name `SEQUENCE NAME` gave it.
pub(super) struct PlannedSequence {
    pub(super) def: SequenceDef,
    pub(super) always: Option<bool>,
    pub(super) name: Option<ast::ObjectName>,
}

/// The name `SEQUENCE NAME` gives a column's sequence, checked as PostgreSQL does when it
/// creates the sequence and then makes the column own it: the schema exists, the name is free
/// (`chosen`: names this statement takes), and the schema is the table's.
pub(super) fn named_sequence(
    cx: &mut Cx<'_>,
    name: &ast::ObjectName,
    (table_schema, table): (&str, &str),
    chosen: &[String],
) -> Result<String, SqlError> {
    // Unqualified, it goes in the table's schema (PostgreSQL's generateSerialExtraStmts).
    let (schema, rel) = split_name(&object_name(name))?;
    let schema = schema.unwrap_or_else(|| table_schema.to_string());
    if !schema_exists(cx, &schema) {
        return Err(SqlError::UndefinedSchema { name: schema });
    }
    let at = cx.read_point();
    if relation_name_taken(&cx.reader(at), &schema, &rel) || chosen.contains(&rel) || rel == table {
        return Err(SqlError::DuplicateTable { name: rel });
    }
    if schema != table_schema {
        return Err(SqlError::UndefinedTable {
            name: format!("{schema}.{table}"),
        });
    }
    Ok(rel)
}

/// The name of a column's new sequence: the one `SEQUENCE NAME` gave ([`named_sequence`]), or
/// PostgreSQL's choice ([`sequence_name`]); `chosen`: names this statement already takes.
pub(super) fn column_sequence_name(
    cx: &mut Cx<'_>,
    given: Option<&ast::ObjectName>,
    (schema, table): (&str, &str),
    column: &str,
    chosen: &[String],
) -> Result<String, SqlError> {
    match given {
        Some(given) => named_sequence(cx, given, (schema, table), chosen),
        None => {
            let at = cx.read_point();
            Ok(sequence_name(&cx.reader(at), schema, table, column, chosen))
        }
    }
}

/// The sequence a serial column (`serial`) or an identity column (`identity`: ALWAYS, and its
/// options) needs, after PostgreSQL's checks, with the column made NOT NULL; `None` for
/// another column. The caller names, owns and links it.
pub(super) fn column_sequence(
    col: &mut Column,
    serial: bool,
    identity: Option<(bool, &[ast::SequenceOptions])>,
    table: &str,
) -> Result<Option<PlannedSequence>, SqlError> {
    let planned = match identity {
        Some((always, options)) => {
            if serial || col.default_sql.is_some() {
                return Err(SqlError::Syntax {
                    message: format!(
                        "both default and identity specified for column \"{}\" of table \"{table}\"",
                        col.name
                    ),
                });
            }
            if !matches!(col.ty, PgType::Int2 | PgType::Int4 | PgType::Int8) {
                return Err(SqlError::InvalidParameter {
                    message: "identity column type must be smallint, integer, or bigint".into(),
                });
            }
            let (options, name) = crate::seqparse::identity_sequence_name(options);
            PlannedSequence {
                def: crate::sequence::define(&options, col.ty)?.0,
                always: Some(always),
                name: name.cloned(),
            }
        }
        None if serial => PlannedSequence {
            def: crate::sequence::define(&[], col.ty)?.0,
            always: None,
            name: None,
        },
        None => return Ok(None),
    };
    col.not_null = true;
    Ok(Some(planned))
}

/// A default that is just `nextval('s')` or `nextval('s'::regclass)` (what pg_dump writes for
/// a serial column) draws from that sequence by its id, as PostgreSQL's default holds the
/// sequence's OID: it shows the sequence's current name, follows a rename, and gives
/// `pg_depend` its row. Another expression naming a sequence keeps the name as text.
pub(super) fn bind_sequence_default(
    cx: &mut Cx<'_>,
    table_schema: &str,
    col: &mut Column,
) -> Result<(), SqlError> {
    let Some(sql) = col.default_sql.as_deref().filter(|d| d.contains("nextval")) else {
        return Ok(());
    };
    let Some(name) = crate::sequence::sole_nextval(&parse_default(sql)?) else {
        return Ok(());
    };
    let Some((schema, rel)) = crate::query::name_parts(&name).and_then(|p| split_name(&p).ok())
    else {
        return Ok(());
    };
    let seq = {
        let at = cx.read_point();
        cx.reader(at).find_table(schema.as_deref(), &rel)
    };
    // A sequence of another schema stays named by text: DROP SCHEMA … CASCADE of its schema
    // would otherwise leave the default bound to nothing.
    if let Some(seq) = seq.filter(|s| s.sequence.is_some() && s.schema == table_schema) {
        // A concurrent DROP SEQUENCE then conflicts with this transaction.
        cx.pending()?.uses_definition(&seq);
        col.serial = Some(seq.id);
        col.default_sql = Some(serial_default(&seq.schema, &seq.name));
    }
    Ok(())
}

/// The name PostgreSQL chooses for a column's sequence: `t_c_seq`, else `t_c_seq1`, … past
/// the relations of the schema, the table's own name and the names `chosen` already.
pub(super) fn sequence_name(
    rcx: &ReadCx<'_>,
    schema: &str,
    table: &str,
    column: &str,
    chosen: &[String],
) -> String {
    let base = format!("{table}_{column}_seq");
    let taken = |n: &str| {
        relation_name_taken(rcx, schema, n) || n == table || chosen.iter().any(|c| c == n)
    };
    let mut n = base.clone();
    let mut k = 0;
    while taken(&n) {
        k += 1;
        n = format!("{base}{k}");
    }
    n
}

/// Makes `def` the sequence of `col` (of table `table_id` in `schema`, named `table`):
/// the sequence relation, owned by the column, and the column's default (serial) or identity.
pub(super) fn link_sequence(
    cx: &mut Cx<'_>,
    (schema, table_id): (&str, u32),
    seq_name: &str,
    col: &mut Column,
    mut def: SequenceDef,
    always: Option<bool>,
) -> Table {
    def.owner = Some((table_id, col.name.clone()));
    def.identity = always.is_some();
    let seq = new_sequence(cx, schema, seq_name, def);
    match always {
        Some(always) => {
            col.identity = Some(crate::catalog::Identity {
                always,
                sequence: seq.id,
            })
        }
        None => {
            col.default_sql = Some(serial_default(schema, seq_name));
            col.serial = Some(seq.id);
        }
    }
    seq
}

/// An identity column's sequence given the column's new type `ty`, as PostgreSQL runs `ALTER
/// SEQUENCE … AS` for it ([`crate::sequence::retyped`]); 22023 for a type a sequence cannot
/// have.
pub(super) fn retype_identity_sequence(
    cx: &mut Cx<'_>,
    seq_id: u32,
    ty: PgType,
) -> Result<(), SqlError> {
    if !matches!(ty, PgType::Int2 | PgType::Int4 | PgType::Int8) {
        return Err(SqlError::InvalidParameter {
            message: "identity column type must be smallint, integer, or bigint".into(),
        });
    }
    let seq = {
        let at = cx.read_point();
        cx.reader(at)
            .sequences()
            .into_iter()
            .find(|s| s.id == seq_id)
    };
    let Some((seq, def)) = seq.and_then(|s| s.sequence.clone().map(|d| (s, d))) else {
        return Err(SqlError::internal("identity column without its sequence"));
    };
    let current = cx.st.sequences.get_mut().value(&seq, &def);
    let new = crate::sequence::retyped(&def, ty, current)?;
    let mut altered = (*seq).clone();
    altered.sequence = Some(Arc::new(new));
    let p = cx.pending()?;
    p.uses_definition(&seq);
    p.put_table(Arc::new(altered), false)
}

/// `serial`, `bigserial`, `smallserial` (or `serial4`, `serial8`, `serial2`): the column's
/// type; `None` for any other type.
pub(super) fn serial_type(dt: &ast::DataType) -> Option<PgType> {
    let ast::DataType::Custom(name, mods) = dt else {
        return None;
    };
    let parts = object_name(name);
    if !mods.is_empty() || parts.len() > 2 || parts.len() == 2 && parts[0] != "pg_catalog" {
        return None;
    }
    match parts.last()?.as_str() {
        "serial" | "serial4" => Some(PgType::Int4),
        "bigserial" | "serial8" => Some(PgType::Int8),
        "smallserial" | "serial2" => Some(PgType::Int2),
        _ => None,
    }
}

/// A serial column's default: `nextval('t_id_seq'::regclass)`, the sequence named as
/// PostgreSQL shows it with the default search_path (qualified outside `public`).
pub(super) fn serial_default(schema: &str, seq: &str) -> String {
    // Stored text: quoted by PostgreSQL's rule, never by the session's quote_all_identifiers.
    let q = crate::pgcatalog::quote_ident_if_needed;
    let name = if schema == "public" {
        q(seq)
    } else {
        format!("{}.{}", q(schema), q(seq))
    };
    format!("nextval({}::regclass)", crate::format::quote_literal(&name))
}

/// A sequence relation with a fresh id and OID (not yet in the transaction).
pub(super) fn new_sequence(cx: &mut Cx<'_>, schema: &str, name: &str, def: SequenceDef) -> Table {
    let id = cx.st.next_table_id;
    cx.st.next_table_id += 1;
    let oid = cx.st.next_oid;
    cx.st.next_oid += 3;
    Table {
        id,
        oid,
        schema: schema.to_string(),
        name: name.to_string(),
        columns: SequenceDef::columns(),
        primary_key: Vec::new(),
        pkey_name: String::new(),
        indexes: Vec::new(),
        version: 0,
        layout: 0,
        sequence: Some(Arc::new(def)),
        view: None,
        comment: None,
        pkey_comment: None,
        pkey_constraint_comment: None,
        shape: 0,
    }
}

/// `CREATE SEQUENCE [IF NOT EXISTS] name [options]`.
pub(super) fn create_sequence(
    cx: &mut Cx<'_>,
    name: &ast::ObjectName,
    if_not_exists: bool,
    temporary: bool,
    options: &[ast::SequenceOptions],
) -> Result<Output, SqlError> {
    cx.check_writable("CREATE SEQUENCE")?;
    if temporary {
        return Err(SqlError::feature("temporary sequences"));
    }
    let (schema, seq_name) = qualified(cx, &object_name(name))?;
    if !schema_exists(cx, &schema) {
        return Err(SqlError::UndefinedSchema { name: schema });
    }
    let taken = {
        let at = cx.read_point();
        relation_name_taken(&cx.reader(at), &schema, &seq_name)
    };
    let done = Output::Command {
        tag: "CREATE SEQUENCE".into(),
    };
    if taken {
        if if_not_exists {
            cx.sess.notice(Notice::RelationExists { name: seq_name });
            return Ok(done);
        }
        return Err(SqlError::DuplicateTable { name: seq_name });
    }
    let (mut def, owned) = crate::sequence::define(options, PgType::Int8)?;
    if let Some(Some(owner)) = owned {
        def.owner = Some(sequence_owner(cx, &owner, &schema)?);
    }
    let seq = new_sequence(cx, &schema, &seq_name, def);
    cx.pending()?.put_table(Arc::new(seq), true)?;
    Ok(done)
}

/// `OWNED BY table.column`: the table (in the sequence's schema) and column.
pub(super) fn sequence_owner(
    cx: &mut Cx<'_>,
    owner: &ast::ObjectName,
    seq_schema: &str,
) -> Result<(u32, String), SqlError> {
    let mut parts = object_name(owner);
    let Some(column) = parts.pop().filter(|_| !parts.is_empty()) else {
        return Err(SqlError::SyntaxHint {
            message: "invalid OWNED BY option".into(),
            hint: "Specify OWNED BY table.column or OWNED BY NONE.",
        });
    };
    let t = resolve_target(
        cx,
        &ast::ObjectName::from(
            parts
                .iter()
                .map(|p| ast::Ident::new(p.clone()))
                .collect::<Vec<_>>(),
        ),
    )?;
    if t.sequence.is_some() {
        return Err(SqlError::WrongObjectType {
            message: format!(
                "referenced relation \"{}\" is not a table or foreign table",
                t.name
            ),
        });
    }
    if t.schema != seq_schema {
        return Err(SqlError::NotInPrerequisiteState {
            message: "sequence must be in same schema as table it is linked to".into(),
        });
    }
    if t.column_index(&column).is_none() {
        return Err(SqlError::UndefinedColumn {
            name: format!("{column}\" of relation \"{}", t.name),
        });
    }
    Ok((t.id, column))
}

/// The sequences owned by a column of table `table` (`column`: that column only).
pub(super) fn owned_sequences(cx: &mut Cx<'_>, table: u32, column: Option<&str>) -> Vec<TableRef> {
    let at = cx.read_point();
    let rcx = cx.reader(at);
    rcx.sequences()
        .iter()
        .filter(|s| {
            s.sequence.as_ref().is_some_and(|d| {
                d.owner
                    .as_ref()
                    .is_some_and(|(t, c)| *t == table && column.is_none_or(|x| x == c))
            })
        })
        .cloned()
        .collect()
}

/// `ALTER SEQUENCE [IF EXISTS] name …` ([`crate::seqparse`]): its options (a new definition,
/// transactional as PostgreSQL's), `RESTART` (undone if the transaction does not commit),
/// `OWNED BY`, or `OWNER TO` / `RENAME TO` as ALTER TABLE does them for a sequence.
pub(super) fn alter_sequence(cx: &mut Cx<'_>, at: &ast::AlterTable) -> Result<Output, SqlError> {
    cx.check_writable("ALTER SEQUENCE")?;
    let done = || Output::Command {
        tag: "ALTER SEQUENCE".into(),
    };
    let parts = object_name(&at.name);
    let Some(seq) = find_table(cx, &parts)? else {
        let name = parts.last().cloned().unwrap_or_default();
        if at.if_exists {
            cx.sess.notice(Notice::Missing {
                kind: "relation",
                name,
            });
            return Ok(done());
        }
        return Err(SqlError::UndefinedTable { name });
    };
    let Some(def) = seq.sequence.clone() else {
        return Err(SqlError::WrongObjectType {
            message: format!("\"{}\" is not a sequence", seq.name),
        });
    };
    if matches!(
        at.operations.as_slice(),
        [ast::AlterTableOperation::OwnerTo { .. } | ast::AlterTableOperation::RenameTable { .. }]
    ) {
        alter_sequence_as_table(cx, &seq, &at.operations)?;
        return Ok(done());
    }
    let (options, restart) = crate::seqparse::alter_sequence_options(at)?;
    change_sequence(cx, &seq, &def, options, restart)?;
    Ok(done())
}

/// Applies `ALTER SEQUENCE`'s options and RESTART to sequence `seq` (also an identity
/// column's, through `ALTER COLUMN … SET …` / `RESTART`).
pub(super) fn change_sequence(
    cx: &mut Cx<'_>,
    seq: &TableRef,
    def: &SequenceDef,
    options: &[ast::SequenceOptions],
    restart: Option<Option<&ast::Expr>>,
) -> Result<(), SqlError> {
    let current = cx.st.sequences.get_mut().value(seq, def);
    let altered = crate::sequence::alter(def, options, restart, current)?;
    let mut new = altered.def;
    match altered.owned {
        Some(_) if def.identity => {
            let table = def.owner.as_ref().and_then(|(id, _)| {
                let at = cx.read_point();
                cx.reader(at).table_by_id(*id).map(|t| t.name.clone())
            });
            return Err(SqlError::UnsupportedByPostgresDetail {
                message: "cannot change ownership of identity sequence".into(),
                detail: format!(
                    "Sequence \"{}\" is linked to table \"{}\".",
                    seq.name,
                    table.unwrap_or_default()
                ),
            });
        }
        Some(Some(owner)) => new.owner = Some(sequence_owner(cx, &owner, &seq.schema)?),
        Some(None) => new.owner = None,
        None => {}
    }
    let mut table = (**seq).clone();
    table.sequence = Some(Arc::new(new.clone()));
    let p = cx.pending()?;
    p.uses_definition(seq);
    p.put_table(Arc::new(table), false)?;
    if let Some(value) = altered.restart {
        let states = cx.st.sequences.get_mut();
        let mine = cx.sess.seqs.get_mut();
        // Undone if the transaction does not commit (see SessionSeqs::restarts).
        mine.restarts.push((seq.id, current));
        crate::sequence::setval(states, mine, seq, &new, value.last, value.called)?;
    }
    Ok(())
}

/// `ALTER [COLUMN] c DROP IDENTITY [IF EXISTS]`, or an identity column's option list (`SET
/// GENERATED …`, `SET option`, `RESTART`), read as [`crate::seqparse::IdentityChange`] says.
pub(super) fn alter_identity(
    cx: &mut Cx<'_>,
    table: &mut Table,
    i: usize,
    change: crate::seqparse::IdentityChange,
    op: &ast::AlterColumnOperation,
    restarts: &mut std::collections::BTreeMap<String, Option<ast::Expr>>,
) -> Result<(), SqlError> {
    use crate::seqparse::IdentityChange;
    let column = table.columns[i].name.clone();
    let Some(identity) = table.columns[i].identity else {
        if change == (IdentityChange::Drop { if_exists: true }) {
            cx.sess.notice(Notice::NotIdentity {
                column,
                table: table.name.clone(),
            });
            return Ok(());
        }
        return Err(SqlError::NotInPrerequisiteState {
            message: format!(
                "column \"{column}\" of relation \"{}\" is not an identity column",
                table.name
            ),
        });
    };
    let at = cx.read_point();
    let seq = cx.reader(at).table_by_id(identity.sequence);
    match (change, op) {
        (IdentityChange::Drop { .. }, _) => {
            // The column keeps its values and NOT NULL; its sequence goes, unless another
            // default draws from it (2BP01, as PostgreSQL's DROP SEQUENCE).
            table.columns[i].identity = None;
            if let Some(seq) = seq {
                let deps = default_dependents(cx, std::slice::from_ref(&seq), &|_, _| false)?;
                cascade_to_defaults(cx, deps, false, false, "sequence", &seq.name)?;
                cx.pending()?.drop_definition(&seq)?;
            }
        }
        (IdentityChange::Restart, ast::AlterColumnOperation::SetDefault { value }) => {
            let value = crate::seqparse::restart_value(value).cloned();
            restarts.insert(column, value);
        }
        (
            IdentityChange::Set,
            ast::AlterColumnOperation::AddGenerated {
                generated_as,
                sequence_options,
            },
        ) => {
            if let Some(g) = generated_as {
                let always = !matches!(g, ast::GeneratedAs::ByDefault);
                table.columns[i].identity = Some(crate::catalog::Identity { always, ..identity });
            }
            let options = sequence_options.as_deref().unwrap_or(&[]);
            let restart = restarts.remove(&column);
            if !options.is_empty() || restart.is_some() {
                let seq = seq.ok_or_else(|| SqlError::internal("identity without its sequence"))?;
                let def = seq
                    .sequence
                    .clone()
                    .ok_or_else(|| SqlError::internal("identity sequence without a definition"))?;
                change_sequence(
                    cx,
                    &seq,
                    &def,
                    options,
                    restart.as_ref().map(Option::as_ref),
                )?;
            }
        }
        _ => return Err(SqlError::internal("unexpected identity alteration")),
    }
    Ok(())
}

/// `ALTER TABLE` (or `ALTER SEQUENCE`) naming a sequence: `OWNER TO` the server's role (a
/// no-op) and `RENAME TO` (PostgreSQL's other actions on a sequence through ALTER TABLE are
/// storage, which RockLake does not have). The
/// serial defaults that name the sequence are rewritten to the new name: RockLake keeps a
/// default as text, where PostgreSQL keeps the sequence's OID.
pub(super) fn alter_sequence_as_table(
    cx: &mut Cx<'_>,
    seq: &TableRef,
    ops: &[ast::AlterTableOperation],
) -> Result<Output, SqlError> {
    if let [ast::AlterTableOperation::OwnerTo { new_owner }] = ops {
        check_new_owner(cx, new_owner)?;
        return Ok(Output::Command {
            tag: "ALTER TABLE".into(),
        });
    }
    let [ast::AlterTableOperation::RenameTable {
        table_name: ast::RenameTableNameKind::To(new),
    }] = ops
    else {
        let action = ops
            .first()
            .map(|op| {
                op.to_string()
                    .split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        return Err(SqlError::WrongObjectTypeDetail {
            message: format!(
                "ALTER action {} cannot be performed on relation \"{}\"",
                action.to_uppercase(),
                seq.name
            ),
            detail: "This operation is not supported for sequences.".into(),
        });
    };
    let parts = object_name(new);
    let [new_name] = parts.as_slice() else {
        return Err(syntax_at("."));
    };
    let at = cx.read_point();
    if relation_name_taken(&cx.reader(at), &seq.schema, new_name) {
        return Err(SqlError::DuplicateTable {
            name: new_name.clone(),
        });
    }
    let new_default = serial_default(&seq.schema, new_name);
    // A serial default shows the sequence's name: it follows. Another expression naming it
    // by text would name nothing after the rename.
    let mut altered: std::collections::BTreeMap<u32, Table> = Default::default();
    for (_, t, ci) in default_dependents(cx, std::slice::from_ref(seq), &|_, _| false)? {
        let c = &t.columns[ci];
        if c.serial != Some(seq.id) {
            return Err(SqlError::feature(format!(
                "renaming sequence \"{}\", which the default of column \"{}\" of table \"{}\" names in an expression",
                seq.name, c.name, t.name
            )));
        }
        let a = altered.entry(t.id).or_insert_with(|| (*t).clone());
        a.columns[ci].default_sql = Some(new_default.clone());
    }
    for a in altered.into_values() {
        let p = cx.pending()?;
        p.uses_definition(&a);
        p.put_table(Arc::new(a), false)?;
    }
    let mut renamed = (**seq).clone();
    renamed.name = new_name.clone();
    let p = cx.pending()?;
    p.uses_definition(seq);
    p.put_table(Arc::new(renamed), false)?;
    Ok(Output::Command {
        tag: "ALTER TABLE".into(),
    })
}
