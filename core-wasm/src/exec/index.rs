//! CREATE INDEX, DROP INDEX and ALTER INDEX … RENAME: secondary indexes a client makes on
//! any table (docs/decisions/0040). Their entries are kept like RockLake's own indexes'
//! (keys.rs, the commit's index maintenance); the commit that makes one writes the entries of
//! the rows already there, and the one that drops one removes its entries.

use super::*;
use crate::catalog::{Index, LAYOUT_THIS_COMMIT};

/// PostgreSQL's NAMEDATALEN - 1: the longest name it keeps, in bytes.
const MAX_NAME_BYTES: usize = 63;
/// PostgreSQL's INDEX_MAX_KEYS.
const MAX_INDEX_KEYS: usize = 32;

/// `CREATE [UNIQUE] INDEX [CONCURRENTLY] [IF NOT EXISTS] [name] ON table [USING btree]
/// (column [ASC | DESC] [NULLS FIRST | LAST], …)`. The checks come in PostgreSQL's order: the
/// table, its kind, the key's columns and their types, then the name.
pub(super) fn create_index(cx: &mut Cx<'_>, ci: &ast::CreateIndex) -> Result<Output, SqlError> {
    cx.check_writable("CREATE INDEX")?;
    if ci.concurrently && cx.sess.txn.as_ref().is_some_and(|t| t.explicit) {
        return Err(SqlError::ActiveTransaction {
            message: "CREATE INDEX CONCURRENTLY cannot run inside a transaction block".into(),
        });
    }
    refuse_index_options(ci)?;
    let given = match &ci.name {
        None => None,
        // PostgreSQL's grammar takes a bare name: the index goes into its table's schema.
        Some(n) => Some(bare_name(n)?),
    };
    let parts = object_name(&ci.table_name);
    let Some(t) = find_table(cx, &parts)? else {
        let (schema, name) = split_name(&parts)?;
        if crate::pgcatalog::columns(schema.as_deref(), &name).is_some() {
            return Err(SqlError::InsufficientPrivilege {
                message: format!("permission denied: \"{name}\" is a system catalog"),
            });
        }
        if let Some(s) = schema.filter(|s| !schema_exists(cx, s)) {
            return Err(SqlError::UndefinedSchema { name: s });
        }
        return Err(SqlError::UndefinedTable { name });
    };
    // PostgreSQL reads the predicate when it analyses the statement, before the key.
    let predicate = match &ci.predicate {
        Some(p) => Some(index_predicate(cx, &t, p)?),
        None => None,
    };
    // Then DefineIndex: the key's width, the relation's kind, the key's columns.
    if ci.columns.len() > MAX_INDEX_KEYS {
        return Err(SqlError::IndexTooWide {
            max: MAX_INDEX_KEYS,
        });
    }
    if t.sequence.is_some() || t.view.is_some() {
        return Err(SqlError::WrongObjectTypeDetail {
            message: format!("cannot create index on relation \"{}\"", t.name),
            detail: format!(
                "This operation is not supported for {}.",
                if t.view.is_some() {
                    "views"
                } else {
                    "sequences"
                }
            ),
        });
    }
    let mut columns = Vec::with_capacity(ci.columns.len());
    let mut options = Vec::with_capacity(ci.columns.len());
    for col in &ci.columns {
        let (i, option) = index_column(&t, col)?;
        columns.push(i);
        options.push(option);
    }
    check_key_types(&t.columns, &columns)?;
    let at = cx.read_point();
    let name = {
        let rcx = cx.reader(at);
        match given {
            Some(n) if relation_name_taken(&rcx, &t.schema, &n) => {
                if ci.if_not_exists {
                    cx.sess.notice(Notice::RelationExists { name: n });
                    return Ok(Output::Command {
                        tag: "CREATE INDEX".into(),
                    });
                }
                return Err(SqlError::DuplicateTable { name: n });
            }
            Some(n) => n,
            None => {
                let names: Vec<&str> = columns
                    .iter()
                    .map(|i| t.columns[*i].name.as_str())
                    .collect();
                choose_index_name(&t.name, &names, |n| relation_name_taken(&rcx, &t.schema, n))
            }
        }
    };
    let slot = free_slot(cx, &t)?;
    let oid = cx.st.next_oid;
    cx.st.next_oid += 1;
    // The commit writes an entry per row already there: its share of the transaction's batch
    // is counted now, so a table too large for one batch fails here (54001).
    let bytes = {
        let rcx = cx.reader(at);
        rcx.check_layout(&t)?;
        visible_rows(&rcx, &t)?
            .iter()
            .map(|(lk, row, _)| lk.len() + 16 + prost::Message::encoded_len(row) + 16)
            .sum::<usize>()
    };
    let mut altered = (*t).clone();
    altered.indexes.push(Index {
        name,
        columns,
        slot,
        oid,
        options,
        since: LAYOUT_THIS_COMMIT,
        comment: None,
        predicate,
    });
    let p = cx.pending()?;
    p.uses_definition(&t);
    p.reserve(bytes)?;
    // Writers of the table's rows are not disturbed: their commits, if later, write the new
    // index's entries too; if earlier, this one's commit writes the entries of their rows.
    p.put_commented_table(Arc::new(altered))?;
    p.meet_no_writer_in_flight(t.id);
    Ok(Output::Command {
        tag: "CREATE INDEX".into(),
    })
}

/// What CREATE INDEX takes beyond a btree over plain columns: refused, each with what
/// RockLake does instead.
fn refuse_index_options(ci: &ast::CreateIndex) -> Result<(), SqlError> {
    if ci.unique {
        return Err(SqlError::FeatureNotSupportedHint {
            what: "CREATE UNIQUE INDEX".into(),
            hint: "RockLake enforces uniqueness through a table's PRIMARY KEY only.".into(),
        });
    }
    match &ci.using {
        None => {}
        Some(ast::IndexType::BTree) => {}
        Some(ast::IndexType::Custom(id)) if id.value.eq_ignore_ascii_case("btree") => {}
        Some(other) => {
            let name = other.to_string().to_lowercase();
            if !["hash", "gist", "gin", "spgist", "brin"].contains(&name.as_str()) {
                return Err(SqlError::UndefinedObject {
                    message: format!("access method \"{name}\" does not exist"),
                });
            }
            return Err(SqlError::FeatureNotSupportedHint {
                what: format!("index access method \"{name}\""),
                hint: "RockLake's indexes are btree indexes.".into(),
            });
        }
    }
    let refused = [
        (!ci.include.is_empty(), "INCLUDE columns in an index"),
        (ci.nulls_distinct.is_some(), "NULLS [NOT] DISTINCT"),
        (!ci.with.is_empty(), "storage parameters (WITH) of an index"),
        (
            ci.r#async || !ci.index_options.is_empty() || !ci.alter_options.is_empty(),
            "this form of CREATE INDEX",
        ),
    ];
    match refused.iter().find(|(on, _)| *on) {
        Some((_, what)) => Err(SqlError::feature(*what)),
        None => Ok(()),
    }
}

/// A partial index's `WHERE`: bound over the table as PostgreSQL binds it (its columns, a
/// boolean, no subquery, no function whose result can change), and kept as PostgreSQL's
/// `pg_get_indexdef` writes it. The entries still cover every row.
fn index_predicate(cx: &mut Cx<'_>, t: &Table, p: &ast::Expr) -> Result<String, SqlError> {
    refuse_in_expression(p, "index predicate", false)?;
    let at = cx.read_point();
    let rcx = cx.reader(at);
    let scope = table_scope(t, &t.name);
    let (_, ty) = Binder::in_clause(&rcx, "index predicates").bind_expr(p, &scope, None)?;
    if !matches!(ty, PgType::Bool | PgType::Unknown) {
        let err = SqlError::DatatypeMismatch {
            message: format!(
                "argument of WHERE must be type boolean, not type {}",
                crate::query::format_type(ty, -1)
            ),
            hint: None,
        };
        let start = sqlparser::ast::Spanned::span(p).start;
        crate::errpos::note(&err, crate::errpos::Spot::at(start, ""));
        return Err(err);
    }
    if changes_between_calls(p) {
        return Err(SqlError::InvalidObjectDefinition {
            message: "functions in index predicate must be marked IMMUTABLE".into(),
        });
    }
    // The one relation in scope is the table: PostgreSQL writes its columns bare, wherever
    // they stand (so a rename of the table leaves the text right).
    let mut bare = p.clone();
    let _ = ast::visit_expressions_mut(&mut bare, |x| {
        if let ast::Expr::CompoundIdentifier(parts) = x {
            if let Some(last) = parts.last().cloned() {
                *x = ast::Expr::Identifier(last);
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    Ok(stored(|| predicate_text(&bare)))
}

/// `render` with identifiers quoted only where they must be, whatever the session's
/// `quote_all_identifiers`: the text kept in the catalog.
fn stored(render: impl FnOnce() -> String) -> String {
    let _plain = crate::pgcatalog::enter_quote_all(false);
    render()
}

/// A stored predicate as this session shows it: with `quote_all_identifiers` on, written
/// again with every name quoted, as PostgreSQL's deparser then writes it.
pub(crate) fn shown_predicate(text: &str) -> String {
    if !crate::pgcatalog::quote_all() {
        return text.to_string();
    }
    parse_predicate(text).map_or_else(|| text.to_string(), |e| predicate_text(&e))
}

/// Whether `e` calls a function PostgreSQL marks VOLATILE or STABLE (the clock, random
/// values, sequences, the session's settings).
fn changes_between_calls(e: &ast::Expr) -> bool {
    use std::ops::ControlFlow;
    const CHANGING: &[&str] = &[
        "now",
        "clock_timestamp",
        "statement_timestamp",
        "transaction_timestamp",
        "timeofday",
        "random",
        "setseed",
        "nextval",
        "currval",
        "lastval",
        "setval",
        "gen_random_uuid",
        "uuid_generate_v4",
        "current_setting",
        "current_schema",
        "current_schemas",
        "txid_current",
        "pg_backend_pid",
        "to_regclass",
    ];
    // Words PostgreSQL reads as calls of the clock or the session (`current_date`, `user`).
    const WORDS: &[&str] = crate::pgcatalog::SQL_VALUE_WORDS;
    let found = ast::visit_expressions(e, |x| {
        let hit = match x {
            ast::Expr::Function(f) => {
                let name = f.name.to_string().to_ascii_lowercase();
                let bare = name.rsplit('.').next().unwrap_or(&name).to_string();
                // age(t) reads the clock; age(a, b) does not.
                let one_argument = matches!(&f.args,
                    ast::FunctionArguments::List(l) if l.args.len() == 1);
                CHANGING.contains(&bare.as_str())
                    || WORDS.contains(&bare.as_str())
                    || (bare == "age" && one_argument)
            }
            ast::Expr::Identifier(i) => {
                i.quote_style.is_none() && WORDS.contains(&i.value.to_ascii_lowercase().as_str())
            }
            _ => false,
        };
        if hit {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    found.is_break()
}

/// A predicate as PostgreSQL's deparser writes it for the shapes it is usually given: each
/// operator, `IS [NOT] NULL`, `NOT` and `BETWEEN` in brackets, names quoted only where they
/// must be. Constants and calls are written as the client wrote them (PostgreSQL also
/// writes the type it read a constant as).
fn predicate_text(e: &ast::Expr) -> String {
    use ast::Expr as E;
    match e {
        E::Nested(inner) => predicate_text(inner),
        E::BinaryOp { left, op, right } => {
            format!("({} {op} {})", predicate_text(left), predicate_text(right))
        }
        E::IsNull(x) => format!("({} IS NULL)", predicate_text(x)),
        E::IsNotNull(x) => format!("({} IS NOT NULL)", predicate_text(x)),
        E::IsTrue(x) => format!("({} IS TRUE)", predicate_text(x)),
        E::IsNotTrue(x) => format!("({} IS NOT TRUE)", predicate_text(x)),
        E::IsFalse(x) => format!("({} IS FALSE)", predicate_text(x)),
        E::IsNotFalse(x) => format!("({} IS NOT FALSE)", predicate_text(x)),
        E::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr,
        } => format!("(NOT {})", predicate_text(expr)),
        // PostgreSQL keeps BETWEEN as the two comparisons it means.
        E::Between {
            expr,
            negated,
            low,
            high,
        } => {
            let (x, lo, hi) = (
                predicate_text(expr),
                predicate_text(low),
                predicate_text(high),
            );
            match negated {
                false => format!("(({x} >= {lo}) AND ({x} <= {hi}))"),
                true => format!("(({x} < {lo}) OR ({x} > {hi}))"),
            }
        }
        E::Identifier(id) => crate::pgcatalog::quote_ident(&crate::query::ident(id)),

        E::In { .. } => format!("({})", crate::pgcatalog::normalize_names(&e.to_string())),
        other => crate::pgcatalog::normalize_names(&other.to_string()),
    }
}

/// The stored predicate `text` parsed back (`None` if it somehow no longer parses).
fn parse_predicate(text: &str) -> Option<ast::Expr> {
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .ok()
}

/// The columns a stored predicate names.
pub(crate) fn predicate_columns(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    if let Some(e) = parse_predicate(text) {
        let _ = ast::visit_expressions(&e, |x| {
            if let ast::Expr::Identifier(id) = x {
                names.push(crate::query::ident(id));
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
    }
    names
}

/// A stored predicate with column `old` renamed `new` (ALTER TABLE … RENAME COLUMN).
pub(crate) fn rename_in_predicate(text: &str, old: &str, new: &str) -> String {
    let Some(mut e) = parse_predicate(text) else {
        return text.to_string();
    };
    let renamed = if crate::pgcatalog::quote_ident_if_needed(new) == new {
        ast::Ident::new(new)
    } else {
        ast::Ident::with_quote('"', new)
    };
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        if let ast::Expr::Identifier(id) = x {
            if crate::query::ident(id) == old {
                *id = renamed.clone();
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    stored(|| predicate_text(&e))
}

/// The indexes CREATE INDEX made on `table` whose predicate names a column whose type
/// changed: bound again over the table as it now is (PostgreSQL rebuilds them, and fails as
/// CREATE INDEX would).
pub(crate) fn rebind_predicates(
    cx: &mut Cx<'_>,
    table: &mut Table,
    column: &str,
) -> Result<(), SqlError> {
    for k in 0..table.indexes.len() {
        let Some(text) = table.indexes[k].predicate.clone() else {
            continue;
        };
        if !predicate_columns(&text).iter().any(|c| c == column) {
            continue;
        }
        let Some(e) = parse_predicate(&text) else {
            continue;
        };
        let bound = index_predicate(cx, table, &e)?;
        table.indexes[k].predicate = Some(bound);
    }
    Ok(())
}

/// The predicate `text` ([`predicate_text`]) as `pg_get_indexdef(…, true)` prints it: the
/// brackets that the operators' precedence makes needless left out.
pub(crate) fn pretty_predicate(text: &str) -> String {
    match parse_predicate(text) {
        Some(e) => pretty(&e, 0),
        None => text.to_string(),
    }
}

/// Binding strength of what [`pretty`] prints, as PostgreSQL's grammar has it.
fn strength(e: &ast::Expr) -> u8 {
    use ast::{BinaryOperator as B, Expr as E};
    match e {
        E::BinaryOp { op: B::Or, .. } => 1,
        E::BinaryOp { op: B::And, .. } => 2,
        E::UnaryOp {
            op: ast::UnaryOperator::Not,
            ..
        } => 3,
        E::IsNull(_)
        | E::IsNotNull(_)
        | E::IsTrue(_)
        | E::IsNotTrue(_)
        | E::IsFalse(_)
        | E::IsNotFalse(_) => 4,
        E::BinaryOp {
            op: B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq,
            ..
        } => 5,
        E::BinaryOp { .. } => 6,
        _ => 9,
    }
}

fn pretty(e: &ast::Expr, outer: u8) -> String {
    use ast::Expr as E;
    let own = strength(e);
    let text = match e {
        E::Nested(inner) => return pretty(inner, outer),
        E::BinaryOp { left, op, right } => {
            // Left-associative: a right operand as strong as the operator keeps its brackets.
            format!("{} {op} {}", pretty(left, own), pretty(right, own + 1))
        }
        E::IsNull(x) => format!("{} IS NULL", pretty(x, own + 1)),
        E::IsNotNull(x) => format!("{} IS NOT NULL", pretty(x, own + 1)),
        E::IsTrue(x) => format!("{} IS TRUE", pretty(x, own + 1)),
        E::IsNotTrue(x) => format!("{} IS NOT TRUE", pretty(x, own + 1)),
        E::IsFalse(x) => format!("{} IS FALSE", pretty(x, own + 1)),
        E::IsNotFalse(x) => format!("{} IS NOT FALSE", pretty(x, own + 1)),
        E::UnaryOp {
            op: ast::UnaryOperator::Not,
            expr,
        } => format!("NOT {}", pretty(expr, own)),
        E::Identifier(id) => crate::pgcatalog::quote_ident(&crate::query::ident(id)),
        other => return other.to_string(),
    };
    if own < outer {
        format!("({text})")
    } else {
        text
    }
}

/// A key column of CREATE INDEX: its position in `t` and its `pg_index.indoption` (1 DESC,
/// 2 NULLS FIRST, which DESC implies unless NULLS LAST is said).
fn index_column(t: &Table, col: &ast::IndexColumn) -> Result<(usize, i16), SqlError> {
    let name = match &col.column.expr {
        ast::Expr::Identifier(id) => crate::query::ident(id),
        _ => return Err(SqlError::feature("index expressions")),
    };
    if col.operator_class.is_some() {
        return Err(SqlError::FeatureNotSupportedHint {
            what: "operator classes in an index".into(),
            hint: "RockLake's indexes use each type's default btree operator class.".into(),
        });
    }
    let Some(i) = t.column_index(&name) else {
        if SYSTEM_COLUMNS.contains(&name.as_str()) {
            return Err(SqlError::feature("index creation on system columns"));
        }
        return Err(SqlError::UndefinedColumn { name });
    };
    let desc = match &col.column.options.sort {
        None | Some(ast::OrderBySort::Asc) => false,
        Some(ast::OrderBySort::Desc) => true,
        Some(ast::OrderBySort::Using(_)) => {
            return Err(syntax_at("USING"));
        }
    };
    let nulls_first = col.column.options.nulls_first.unwrap_or(desc);
    Ok((i, i16::from(desc) | (i16::from(nulls_first) << 1)))
}

/// PostgreSQL's name for an index nobody named (`ChooseIndexName`): the table's name and the
/// key's column names joined by `_`, then `idx`, shortened to 63 bytes as `makeObjectName`
/// does, and numbered (`idx1`, `idx2`, …) past the names `taken`.
pub(crate) fn choose_index_name(
    table: &str,
    columns: &[&str],
    taken: impl Fn(&str) -> bool,
) -> String {
    let names = index_column_names(columns);
    // `ChooseIndexNameAddition`: joined until the text reaches NAMEDATALEN.
    let mut addition = String::new();
    for n in &names {
        if !addition.is_empty() {
            addition.push('_');
        }
        addition.push_str(clip(n, MAX_NAME_BYTES));
        if addition.len() > MAX_NAME_BYTES {
            break;
        }
    }
    let mut label = "idx".to_string();
    let mut pass = 0;
    loop {
        let name = make_object_name(table, &addition, &label);
        if !taken(&name) {
            return name;
        }
        pass += 1;
        label = format!("idx{pass}");
    }
}

/// The names of an index's columns (`ChooseIndexColumnNames`): a name repeated in the key
/// gets a number (`a`, `a1`, …), shortened to stay within 63 bytes.
pub(crate) fn index_column_names(columns: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = Vec::with_capacity(columns.len());
    for orig in columns {
        let mut current = orig.to_string();
        let mut n = 1;
        while names.contains(&current) {
            let suffix = n.to_string();
            current = format!("{}{suffix}", clip(orig, MAX_NAME_BYTES - suffix.len()));
            n += 1;
        }
        names.push(current);
    }
    names
}

/// PostgreSQL's `makeObjectName(name1, name2, label)`: `name1_name2_label`, the longer of the
/// two names shortened a byte at a time until it fits in 63 bytes (whole characters kept).
fn make_object_name(name1: &str, name2: &str, label: &str) -> String {
    let overhead = 1 + label.len() + 1;
    let avail = MAX_NAME_BYTES.saturating_sub(overhead);
    let (mut n1, mut n2) = (name1.len(), name2.len());
    while n1 + n2 > avail {
        if n1 > n2 {
            n1 -= 1;
        } else {
            n2 -= 1;
        }
    }
    format!("{}_{}_{label}", clip(name1, n1), clip(name2, n2))
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn clip(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The one part of an index's name; a qualified one is PostgreSQL's syntax error at the dot.
fn bare_name(n: &ast::ObjectName) -> Result<String, SqlError> {
    match object_name(n).as_slice() {
        [one] => Ok(one.clone()),
        _ => {
            let err = syntax_at(".");
            if let Some(ast::ObjectNamePart::Identifier(id)) = n.0.first() {
                let spot =
                    crate::errpos::Spot::find(id.span.end, crate::errpos::Target::NextToken, ".");
                crate::errpos::note(&err, spot);
            }
            Err(err)
        }
    }
}

/// A slot no index of the table has, in this transaction or as committed: a slot whose
/// index is dropped in this transaction keeps its entries until the commit removes them.
fn free_slot(cx: &mut Cx<'_>, t: &Table) -> Result<u8, SqlError> {
    let committed = cx.st.tables.get(&t.id).cloned();
    let used = |slot: u8| {
        t.index_at_slot(slot).is_some()
            || committed
                .as_ref()
                .is_some_and(|c| c.index_at_slot(slot).is_some())
    };
    (0..u8::MAX)
        .find(|s| !used(*s))
        .ok_or_else(|| SqlError::ProgramLimit {
            message: format!(
                "table \"{}\" has too many indexes (RockLake keeps 255)",
                t.name
            ),
        })
}

/// Whether the parser stands at `DROP INDEX CONCURRENTLY`, which sqlparser does not read.
pub(crate) fn at_drop_index_concurrently(p: &Parser<'_>) -> bool {
    let word = |n: usize, w: Keyword| {
        matches!(&p.peek_nth_token_ref(n).token,
            Token::Word(x) if x.quote_style.is_none() && x.keyword == w)
    };
    word(0, Keyword::DROP) && word(1, Keyword::INDEX) && word(2, Keyword::CONCURRENTLY)
}

/// `DROP INDEX CONCURRENTLY [IF EXISTS] name, … [CASCADE | RESTRICT]`, as a DROP INDEX whose
/// `purge` flag (meaningless for PostgreSQL) marks CONCURRENTLY for [`drop_indexes`].
pub(crate) fn parse_drop_index_concurrently(
    p: &mut Parser<'_>,
    syntax: impl Fn(ParserError) -> SqlError,
) -> Result<Statement, SqlError> {
    for _ in 0..3 {
        p.next_token();
    }
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let names = p
        .parse_comma_separated(|p| p.parse_object_name(false))
        .map_err(&syntax)?;
    let behaviour = p.parse_one_of_keywords(&[Keyword::CASCADE, Keyword::RESTRICT]);
    Ok(Statement::Drop {
        object_type: ast::ObjectType::Index,
        if_exists,
        names,
        cascade: behaviour == Some(Keyword::CASCADE),
        restrict: behaviour == Some(Keyword::RESTRICT),
        purge: true,
        temporary: false,
        table: None,
    })
}

/// `DROP INDEX [CONCURRENTLY] [IF EXISTS] name, … [CASCADE | RESTRICT]`. A primary key's
/// index goes only with its constraint (2BP01, as in PostgreSQL); nothing else depends on an
/// index. CONCURRENTLY behaves as without it, with PostgreSQL's limits on its form.
pub(super) fn drop_indexes(
    cx: &mut Cx<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
    cascade: bool,
    concurrently: bool,
) -> Result<Output, SqlError> {
    if concurrently {
        if cx.sess.txn.as_ref().is_some_and(|t| t.explicit) {
            return Err(SqlError::ActiveTransaction {
                message: "DROP INDEX CONCURRENTLY cannot run inside a transaction block".into(),
            });
        }
        if names.len() != 1 {
            return Err(SqlError::UnsupportedByPostgres {
                message: "DROP INDEX CONCURRENTLY does not support dropping multiple objects"
                    .into(),
            });
        }
        if cascade {
            return Err(SqlError::UnsupportedByPostgres {
                message: "DROP INDEX CONCURRENTLY does not support CASCADE".into(),
            });
        }
    }
    cx.check_writable("DROP INDEX")?;
    let mut found: Vec<(u32, u32)> = Vec::new();
    for n in names {
        let parts = object_name(n);
        let (schema, name) = split_name(&parts)?;
        let at = cx.read_point();
        let hit = cx.reader(at).index_table(schema.as_deref(), &name);
        match hit {
            Some((t, oid)) if oid == t.pkey_oid() => {
                let rcx = cx.reader(at);
                let q = crate::pgcatalog::quote_ident;
                let (constraint, table) = (q(&t.pkey_name), name_in_message(&rcx, &t));
                return Err(SqlError::RequiredByColumn {
                    message: format!(
                        "cannot drop index {} because constraint {constraint} on table {table} requires it",
                        q(&name)
                    ),
                    hint: format!("You can drop constraint {constraint} on table {table} instead."),
                });
            }
            Some((t, oid)) => found.push((t.id, oid)),
            None => match find_table(cx, &parts)? {
                Some(t) => {
                    return Err(SqlError::WrongObjectTypeHint {
                        message: format!("\"{}\" is not an index", t.name),
                        hint: crate::view::drop_hint(&t).into(),
                    })
                }
                None => missing_to_drop(cx, &parts, if_exists, "index", |name| {
                    SqlError::UndefinedObject {
                        message: format!("index \"{name}\" does not exist"),
                    }
                })?,
            },
        }
    }
    for (table_id, oid) in found {
        // The definition as this statement leaves it (two of one table's indexes may go).
        let at = cx.read_point();
        let Some(current) = cx.reader(at).table_by_id(table_id) else {
            continue;
        };
        // The commit writes a tombstone per entry: counted against the batch now.
        let bytes = {
            let rcx = cx.reader(at);
            rcx.check_layout(&current)?;
            visible_rows(&rcx, &current)?
                .iter()
                .map(|(lk, _, _)| lk.len() + 32)
                .sum::<usize>()
        };
        let mut altered = (*current).clone();
        altered.indexes.retain(|ix| ix.oid != oid);
        let p = cx.pending()?;
        p.reserve(bytes)?;
        p.uses_definition(&current);
        p.put_commented_table(Arc::new(altered))?;
        // Entries a commit in flight writes into the dropped index would outlive it.
        p.meet_no_writer_in_flight(table_id);
    }
    Ok(Output::Command {
        tag: "DROP INDEX".into(),
    })
}

/// `ALTER INDEX name RENAME TO new`: a primary key's index takes its constraint's name along,
/// as in PostgreSQL.
pub(super) fn alter_index(
    cx: &mut Cx<'_>,
    name: &ast::ObjectName,
    op: &ast::AlterIndexOperation,
) -> Result<Output, SqlError> {
    cx.check_writable("ALTER INDEX")?;
    let ast::AlterIndexOperation::RenameIndex { index_name } = op;
    let new = bare_name(index_name)?;
    let parts = object_name(name);
    let (schema, old) = split_name(&parts)?;
    let at = cx.read_point();
    let hit = cx.reader(at).index_table(schema.as_deref(), &old);
    let Some((t, oid)) = hit else {
        if find_table(cx, &parts)?.is_none() {
            return Err(SqlError::UndefinedTable { name: old });
        }
        // PostgreSQL's ALTER INDEX … RENAME renames any relation, as ALTER TABLE does.
        let rename = ast::AlterTable {
            name: name.clone(),
            if_exists: false,
            only: false,
            operations: vec![ast::AlterTableOperation::RenameTable {
                table_name: ast::RenameTableNameKind::To(index_name.clone()),
            }],
            location: None,
            on_cluster: None,
            table_type: None,
            end_token: ast::helpers::attached_token::AttachedToken::empty(),
        };
        alter_table(cx, &rename)?;
        return Ok(Output::Command {
            tag: "ALTER INDEX".into(),
        });
    };
    if relation_name_taken(&cx.reader(at), &t.schema, &new) {
        return Err(SqlError::DuplicateTable { name: new });
    }
    let mut altered = (*t).clone();
    if oid == t.pkey_oid() {
        altered.pkey_name = new;
    } else if let Some(ix) = altered.indexes.iter_mut().find(|ix| ix.oid == oid) {
        ix.name = new;
    }
    let p = cx.pending()?;
    p.uses_definition(&t);
    // The table's columns, keys and entries stay: writers of its rows are not disturbed.
    p.put_commented_table(Arc::new(altered))?;
    Ok(Output::Command {
        tag: "ALTER INDEX".into(),
    })
}
