//! PostgreSQL's grammar where sqlparser has none. Sequences: `ALTER SEQUENCE`, and `SEQUENCE
//! NAME n` among an identity column's sequence options (what `pg_dump` writes for every
//! identity column: `ALTER TABLE t ALTER COLUMN c ADD GENERATED … AS IDENTITY (SEQUENCE NAME
//! s …)`).
//!
//! Both are carried in sqlparser's own AST, so that the parse cache, the statement limits and
//! the executor's dispatch see ordinary statements:
//! * `ALTER SEQUENCE` is an [`ast::AlterTable`] marked by [`ALTER_SEQUENCE`] in its
//!   `on_cluster` (a ClickHouse clause PostgreSQL's grammar never fills). Its options are an
//!   `ALTER COLUMN` [`OPTIONS`] `ADD GENERATED` holding them as [`ast::SequenceOptions`], and
//!   `RESTART [WITH n]` an `ALTER COLUMN` [`RESTART`] `SET DEFAULT n` (NULL: the start).
//! * `SEQUENCE NAME s` becomes `OwnedBy(Some(s))` in the identity's option list: sqlparser
//!   refuses `OWNED BY` there, so in an identity's options it can only be a sequence name.

use sqlparser::ast::{self, Statement};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan};

use crate::error::SqlError;

/// Marks an [`ast::AlterTable`] as `ALTER SEQUENCE` (in `on_cluster`; NUL cannot be in a name
/// a client writes).
pub const ALTER_SEQUENCE: &str = "\u{0}ALTER SEQUENCE";
/// The pseudo-column whose `ADD GENERATED` carries an `ALTER SEQUENCE`'s options.
pub const OPTIONS: &str = "\u{0}options";
/// The pseudo-column whose `SET DEFAULT` carries `RESTART [WITH n]`.
pub const RESTART: &str = "\u{0}restart";

/// Whether the token `n` ahead is the unquoted keyword `kw`.
pub(crate) fn word_is(p: &Parser<'_>, n: usize, kw: Keyword) -> bool {
    matches!(&p.peek_nth_token_ref(n).token, Token::Word(w) if w.keyword == kw && w.quote_style.is_none())
}

/// Whether the parser stands at `ALTER SEQUENCE`.
pub fn at_alter_sequence(p: &Parser<'_>) -> bool {
    word_is(p, 0, Keyword::ALTER) && word_is(p, 1, Keyword::SEQUENCE)
}

fn conflicting() -> SqlError {
    SqlError::Syntax {
        message: "conflicting or redundant options".into(),
    }
}

/// `ALTER SEQUENCE [IF EXISTS] name { option … | OWNER TO role | RENAME TO new }`, the parser
/// standing at `ALTER`. Options: `AS type`, `INCREMENT [BY] n`, `[NO] MINVALUE n`,
/// `[NO] MAXVALUE n`, `START [WITH] n`, `RESTART [[WITH] n]`, `CACHE n`, `[NO] CYCLE`,
/// `OWNED BY t.c | NONE`.
pub fn parse_alter_sequence(
    p: &mut Parser<'_>,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<Statement, SqlError> {
    p.next_token();
    p.next_token();
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let name = p.parse_object_name(false).map_err(syntax)?;
    let mut operations = Vec::new();
    if p.parse_keywords(&[Keyword::OWNER, Keyword::TO]) {
        operations.push(ast::AlterTableOperation::OwnerTo {
            new_owner: p.parse_owner().map_err(syntax)?,
        });
    } else if p.parse_keywords(&[Keyword::RENAME, Keyword::TO]) {
        operations.push(ast::AlterTableOperation::RenameTable {
            table_name: ast::RenameTableNameKind::To(p.parse_object_name(false).map_err(syntax)?),
        });
    } else if word_is(p, 0, Keyword::SET) {
        return Err(SqlError::feature(
            "ALTER SEQUENCE … SET SCHEMA / SET LOGGED / SET UNLOGGED",
        ));
    } else {
        let mut options: Vec<ast::SequenceOptions> = Vec::new();
        let mut restart: Option<ast::Expr> = None;
        loop {
            let option = if p.parse_keyword(Keyword::AS) {
                ast::SequenceOptions::DataType(p.parse_data_type().map_err(syntax)?)
            } else if p.parse_keyword(Keyword::INCREMENT) {
                let by = p.parse_keyword(Keyword::BY);
                ast::SequenceOptions::IncrementBy(p.parse_number().map_err(syntax)?, by)
            } else if p.parse_keyword(Keyword::MINVALUE) {
                ast::SequenceOptions::MinValue(Some(p.parse_number().map_err(syntax)?))
            } else if p.parse_keywords(&[Keyword::NO, Keyword::MINVALUE]) {
                ast::SequenceOptions::MinValue(None)
            } else if p.parse_keyword(Keyword::MAXVALUE) {
                ast::SequenceOptions::MaxValue(Some(p.parse_number().map_err(syntax)?))
            } else if p.parse_keywords(&[Keyword::NO, Keyword::MAXVALUE]) {
                ast::SequenceOptions::MaxValue(None)
            } else if p.parse_keyword(Keyword::START) {
                let with = p.parse_keyword(Keyword::WITH);
                ast::SequenceOptions::StartWith(p.parse_number().map_err(syntax)?, with)
            } else if p.parse_keyword(Keyword::RESTART) {
                if restart.is_some() {
                    return Err(conflicting());
                }
                let with = p.parse_keyword(Keyword::WITH);
                let value = if with
                    || matches!(
                        p.peek_token_ref().token,
                        Token::Number(..) | Token::Minus | Token::Plus
                    ) {
                    p.parse_number().map_err(syntax)?
                } else {
                    ast::Expr::value(ast::Value::Null)
                };
                restart = Some(value);
                continue;
            } else if p.parse_keyword(Keyword::CACHE) {
                ast::SequenceOptions::Cache(p.parse_number().map_err(syntax)?)
            } else if p.parse_keywords(&[Keyword::NO, Keyword::CYCLE]) {
                ast::SequenceOptions::Cycle(true)
            } else if p.parse_keyword(Keyword::CYCLE) {
                ast::SequenceOptions::Cycle(false)
            } else if p.parse_keywords(&[Keyword::OWNED, Keyword::BY]) {
                let owner = p.parse_object_name(false).map_err(syntax)?;
                // PostgreSQL compares the name read (folded unless quoted) with "none".
                let none = matches!(owner.0.as_slice(),
                    [ast::ObjectNamePart::Identifier(i)]
                        if crate::query::ident(i) == "none");
                ast::SequenceOptions::OwnedBy((!none).then_some(owner))
            } else {
                break;
            };
            if options
                .iter()
                .any(|o| std::mem::discriminant(o) == std::mem::discriminant(&option))
            {
                return Err(conflicting());
            }
            options.push(option);
        }
        if options.is_empty() && restart.is_none() {
            let found = p.peek_token();
            return Err(syntax(
                p.expected::<()>("a sequence option", found)
                    .err()
                    .unwrap_or_else(|| ParserError::ParserError(String::new())),
            ));
        }
        operations.push(pseudo_column(
            OPTIONS,
            ast::AlterColumnOperation::AddGenerated {
                generated_as: None,
                sequence_options: Some(options),
            },
        ));
        if let Some(value) = restart {
            operations.push(pseudo_column(
                RESTART,
                ast::AlterColumnOperation::SetDefault { value },
            ));
        }
    }
    Ok(Statement::AlterTable(ast::AlterTable {
        name,
        if_exists,
        only: false,
        operations,
        location: None,
        on_cluster: Some(ast::Ident::new(ALTER_SEQUENCE)),
        table_type: None,
        end_token: ast::helpers::attached_token::AttachedToken::empty(),
    }))
}

fn pseudo_column(name: &str, op: ast::AlterColumnOperation) -> ast::AlterTableOperation {
    ast::AlterTableOperation::AlterColumn {
        column_name: ast::Ident::new(name),
        op,
    }
}

/// Whether `at` is an `ALTER SEQUENCE` ([`parse_alter_sequence`]).
pub fn is_alter_sequence(at: &ast::AlterTable) -> bool {
    at.on_cluster
        .as_ref()
        .is_some_and(|i| i.value == ALTER_SEQUENCE)
}

/// The value a `RESTART` pseudo-column's `SET DEFAULT` carries: `None` (NULL) restarts at the
/// sequence's start.
pub fn restart_value(value: &ast::Expr) -> Option<&ast::Expr> {
    match value {
        ast::Expr::Value(v) if v.value == ast::Value::Null => None,
        e => Some(e),
    }
}

/// An `ALTER SEQUENCE`'s options and its `RESTART` (`Some(None)`: restart at the start).
pub fn alter_sequence_options(
    at: &ast::AlterTable,
) -> Result<(&[ast::SequenceOptions], Option<Option<&ast::Expr>>), SqlError> {
    let mut options: &[ast::SequenceOptions] = &[];
    let mut restart = None;
    for op in &at.operations {
        match op {
            ast::AlterTableOperation::AlterColumn {
                column_name,
                op:
                    ast::AlterColumnOperation::AddGenerated {
                        sequence_options: Some(o),
                        ..
                    },
            } if column_name.value == OPTIONS => options = o,
            ast::AlterTableOperation::AlterColumn {
                column_name,
                op: ast::AlterColumnOperation::SetDefault { value },
            } if column_name.value == RESTART => {
                restart = Some(restart_value(value));
            }
            _ => {
                return Err(SqlError::Internal {
                    message: format!("unexpected ALTER SEQUENCE operation {op}"),
                })
            }
        }
    }
    Ok((options, restart))
}

/// When the statement at the parser's position (an `ALTER` or `CREATE`) writes `SEQUENCE NAME
/// s` among an identity's options, parses it without those words and puts each name into its
/// option list as `OwnedBy(Some(s))` (see the module's notes). `None` (the parser untouched)
/// for any other statement.
pub fn parse_with_sequence_names(
    p: &mut Parser<'_>,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<Option<Statement>, SqlError> {
    if !(word_is(p, 0, Keyword::ALTER) || word_is(p, 0, Keyword::CREATE)) {
        return Ok(None);
    }
    // The statement's tokens, with the `SEQUENCE NAME s` of each identity's option list taken
    // out; the names by option list, in order.
    let mut kept: Vec<TokenWithSpan> = Vec::new();
    // One entry per `AS IDENTITY` (the identity columns in the order written): its
    // `SEQUENCE NAME`, if any.
    let mut names: Vec<Option<ast::ObjectName>> = Vec::new();
    // Tokens consumed (to step back over when there is nothing to take out), paren depth, and
    // the depth inside an identity's option list while in one.
    let (mut consumed, mut depth) = (0usize, 0usize);
    let mut in_options: Option<usize> = None;
    loop {
        let t = p.peek_token_ref();
        match &t.token {
            Token::EOF => break,
            Token::SemiColon if depth == 0 => break,
            Token::Word(w)
                if w.keyword == Keyword::IDENTITY
                    && w.quote_style.is_none()
                    && matches!(kept.last(),
                        Some(TokenWithSpan { token: Token::Word(a), .. })
                            if a.keyword == Keyword::AS && a.quote_style.is_none()) =>
            {
                names.push(None);
            }
            Token::LParen => {
                depth += 1;
                let after_identity = matches!(kept.last(),
                    Some(TokenWithSpan { token: Token::Word(w), .. })
                        if w.keyword == Keyword::IDENTITY && w.quote_style.is_none());
                if after_identity && in_options.is_none() && !names.is_empty() {
                    in_options = Some(depth);
                }
            }
            Token::RParen => {
                if in_options == Some(depth) {
                    in_options = None;
                }
                depth = depth.saturating_sub(1);
            }
            Token::Word(w)
                if in_options == Some(depth)
                    && w.keyword == Keyword::SEQUENCE
                    && w.quote_style.is_none()
                    && word_is(p, 1, Keyword::NAME) =>
            {
                p.next_token();
                p.next_token();
                consumed += 2;
                let mut parts = Vec::new();
                loop {
                    let part = p.next_token();
                    consumed += 1;
                    let Token::Word(w) = part.token else {
                        return Err(syntax(ParserError::ParserError(format!(
                            "Expected: identifier, found: {}",
                            part.token
                        ))));
                    };
                    parts.push(ast::ObjectNamePart::Identifier(ast::Ident {
                        value: w.value,
                        quote_style: w.quote_style,
                        span: part.span,
                    }));
                    if p.peek_token_ref().token != Token::Period {
                        break;
                    }
                    p.next_token();
                    consumed += 1;
                }
                let slot = names.last_mut().ok_or_else(conflicting)?;
                if slot.is_some() {
                    return Err(conflicting());
                }
                *slot = Some(ast::ObjectName(parts));
                continue;
            }
            _ => {}
        }
        kept.push(p.next_token());
        consumed += 1;
    }
    if names.iter().all(Option::is_none) {
        for _ in 0..consumed {
            p.prev_token();
        }
        return Ok(None);
    }
    let end = p.peek_token_ref().clone();
    kept.push(TokenWithSpan {
        token: Token::EOF,
        span: end.span,
    });
    let mut sub = Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .with_recursion_limit(crate::exec::MAX_NESTING)
        .with_tokens_with_locations(kept);
    let mut stmt = sub.parse_statement().map_err(syntax)?;
    if sub.peek_token_ref().token != Token::EOF {
        let found = sub.peek_token();
        return Err(syntax(
            sub.expected::<()>("end of statement", found)
                .err()
                .unwrap_or_else(|| ParserError::ParserError(String::new())),
        ));
    }
    // The identity columns' option lists in the order they were written, each taking its
    // name (sqlparser gives a CREATE TABLE identity an empty list even without parentheses).
    fn column_lists<'a>(
        cd: &'a mut ast::ColumnDef,
        out: &mut Vec<&'a mut Option<Vec<ast::SequenceOptions>>>,
    ) {
        for o in &mut cd.options {
            if let ast::ColumnOption::Generated {
                generated_as: ast::GeneratedAs::Always | ast::GeneratedAs::ByDefault,
                sequence_options,
                generation_expr: None,
                ..
            } = &mut o.option
            {
                out.push(sequence_options);
            }
        }
    }
    let mut lists: Vec<&mut Option<Vec<ast::SequenceOptions>>> = Vec::new();
    match &mut stmt {
        Statement::AlterTable(at) => {
            for op in &mut at.operations {
                match op {
                    ast::AlterTableOperation::AlterColumn {
                        op:
                            ast::AlterColumnOperation::AddGenerated {
                                sequence_options, ..
                            },
                        ..
                    } => lists.push(sequence_options),
                    ast::AlterTableOperation::AddColumn { column_def, .. } => {
                        column_lists(column_def, &mut lists)
                    }
                    _ => {}
                }
            }
        }
        Statement::CreateTable(ct) => {
            for cd in &mut ct.columns {
                column_lists(cd, &mut lists);
            }
        }
        _ => {}
    }
    if lists.len() != names.len() {
        return Err(SqlError::feature(
            "SEQUENCE NAME where the identity columns cannot be told apart",
        ));
    }
    for (list, name) in lists.into_iter().zip(names) {
        if let Some(name) = name {
            list.get_or_insert_with(Vec::new)
                .push(ast::SequenceOptions::OwnedBy(Some(name)));
        }
    }
    Ok(Some(stmt))
}

/// The sequence name `SEQUENCE NAME` gave an identity ([`parse_with_sequence_names`]), and the
/// options without it.
pub fn identity_sequence_name(
    options: &[ast::SequenceOptions],
) -> (Vec<ast::SequenceOptions>, Option<&ast::ObjectName>) {
    let mut name = None;
    let rest = options
        .iter()
        .filter(|o| match o {
            ast::SequenceOptions::OwnedBy(Some(n)) => {
                name = Some(n);
                false
            }
            _ => true,
        })
        .cloned()
        .collect();
    (rest, name)
}

/// Whether `sql` may write `OPERATOR(pg_catalog.op)` (what pg_dump and psql write to name the
/// built-in operators whatever the search_path).
pub fn names_builtin_operator(sql: &str) -> bool {
    mentions(sql, b"operator(")
}

/// Whether `sql` may write an identity column (and so `SEQUENCE NAME` among its options):
/// [`parse_with_sequence_names`] scans a statement's tokens only then.
pub fn mentions_identity(sql: &str) -> bool {
    mentions(sql, b"identity")
}

/// Whether `sql` holds `word`, ASCII case ignored.
fn mentions(sql: &str, word: &[u8]) -> bool {
    sql.as_bytes()
        .windows(word.len())
        .any(|w| w.eq_ignore_ascii_case(word))
}

/// `x OPERATOR(pg_catalog.op) ANY (…)` (also ALL, SOME) as `x op ANY (…)`: sqlparser reads a
/// quantified comparison only after a plain operator (pg_dump's `-t` pattern query writes
/// `c.relkind OPERATOR(pg_catalog.=) ANY (array[…])`). `pg_catalog`'s operator is the plain
/// one; but `OPERATOR(…)` binds tighter than a plain comparison, so this is done only for a
/// comparison operator whose left operand is a column reference standing alone (after `(`,
/// `,` or a keyword). Other `OPERATOR(…)` forms are left to sqlparser.
pub fn builtin_operators_before_any(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let significant = significant_tokens(&tokens);
    let word = |i: usize, kw: Keyword| matches!(&tokens[i].token, Token::Word(w) if w.keyword == kw && w.quote_style.is_none());
    let mut drop = vec![false; tokens.len()];
    let mut k = 0;
    while k + 6 < significant.len() {
        let at = |n: usize| significant[k + n];
        let is_schema = matches!(&tokens[at(2)].token,
            Token::Word(w) if w.value.eq_ignore_ascii_case("pg_catalog") && w.quote_style.is_none());
        // The left operand: `name` or `qualifier.name`, after `(`, `,` or a keyword.
        let operand_alone = || {
            let before = |n: usize| k.checked_sub(n).map(|i| &tokens[significant[i]].token);
            let ident = |t: Option<&Token>| matches!(t, Some(Token::Word(_)));
            let start = match (before(1), before(2)) {
                (t, Some(Token::Period)) if ident(t) && ident(before(3)) => 4,
                (t, _) if ident(t) => 2,
                _ => return false,
            };
            match before(start) {
                Some(Token::LParen | Token::Comma) => true,
                Some(Token::Word(w)) => {
                    w.quote_style.is_none()
                        && matches!(
                            w.keyword,
                            Keyword::WHERE
                                | Keyword::AND
                                | Keyword::OR
                                | Keyword::ON
                                | Keyword::NOT
                                | Keyword::WHEN
                                | Keyword::THEN
                                | Keyword::ELSE
                                | Keyword::SELECT
                                | Keyword::HAVING
                        )
                }
                _ => false,
            }
        };
        let comparison = matches!(
            tokens[at(4)].token,
            Token::Eq | Token::Neq | Token::Lt | Token::Gt | Token::LtEq | Token::GtEq
        );
        if word(at(0), Keyword::OPERATOR)
            && comparison
            && operand_alone()
            && tokens[at(1)].token == Token::LParen
            && is_schema
            && tokens[at(3)].token == Token::Period
            && tokens[at(5)].token == Token::RParen
            && (word(at(6), Keyword::ANY)
                || word(at(6), Keyword::ALL)
                || word(at(6), Keyword::SOME))
        {
            for n in [0, 1, 2, 3, 5] {
                drop[at(n)] = true;
            }
            k += 6;
        } else {
            k += 1;
        }
    }
    without(tokens, &drop)
}

/// The positions of `tokens` that are not whitespace.
fn significant_tokens(tokens: &[TokenWithSpan]) -> Vec<usize> {
    tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
        .map(|(i, _)| i)
        .collect()
}

/// `tokens` without those `drop` marks.
fn without(tokens: Vec<TokenWithSpan>, drop: &[bool]) -> Vec<TokenWithSpan> {
    tokens
        .into_iter()
        .zip(drop)
        .filter(|(_, d)| !**d)
        .map(|(t, _)| t)
        .collect()
}

/// Whether `sql` may hold the query `TABLE ONLY name` ([`query_table_only`] scans its tokens
/// only then).
pub fn mentions_table_only(sql: &str) -> bool {
    mentions(sql, b"only") && mentions(sql, b"table")
}

/// `TABLE ONLY name` as `TABLE name`: sqlparser's `TABLE` query reads no `ONLY`, which only
/// leaves out inheritance children, and RockLake has no inheritance. Only a `TABLE` where a
/// query starts (a statement's start, after `(`, `AS` or a set operation) is a query; `ALTER`,
/// `LOCK` and `TRUNCATE TABLE ONLY` keep theirs.
pub fn query_table_only(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let significant = significant_tokens(&tokens);
    let word = |i: usize, kw: Keyword| matches!(&tokens[i].token, Token::Word(w) if w.keyword == kw && w.quote_style.is_none());
    let mut drop = vec![false; tokens.len()];
    for (k, pair) in significant.windows(2).enumerate() {
        if !(word(pair[0], Keyword::TABLE) && word(pair[1], Keyword::ONLY)) {
            continue;
        }
        let query_starts = match k.checked_sub(1).map(|b| significant[b]) {
            None => true,
            Some(b) => {
                matches!(tokens[b].token, Token::SemiColon | Token::LParen)
                    || [
                        Keyword::AS,
                        Keyword::UNION,
                        Keyword::INTERSECT,
                        Keyword::EXCEPT,
                        Keyword::ALL,
                        Keyword::DISTINCT,
                    ]
                    .into_iter()
                    .any(|kw| word(b, kw))
            }
        };
        if query_starts {
            drop[pair[1]] = true;
        }
    }
    without(tokens, &drop)
}

/// How an identity column is altered (`ALTER TABLE … ALTER [COLUMN] c …`), carried in the
/// name of the subcommand's pseudo-column: the marker, then the column's name.
/// `DROP IDENTITY [IF EXISTS]` is that column's `DROP DEFAULT`; `SET GENERATED …` and `SET
/// option` an `ADD GENERATED [ALWAYS | BY DEFAULT] AS IDENTITY [(options)]`; `RESTART [[WITH]
/// n]` a `SET DEFAULT n` (NULL: the start) just before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentityChange {
    Drop { if_exists: bool },
    Restart,
    Set,
}

const IDENTITY_MARKERS: [(&str, IdentityChange); 4] = [
    (
        "\u{0}drop identity\u{0}",
        IdentityChange::Drop { if_exists: false },
    ),
    (
        "\u{0}drop identity if exists\u{0}",
        IdentityChange::Drop { if_exists: true },
    ),
    ("\u{0}restart identity\u{0}", IdentityChange::Restart),
    ("\u{0}set identity\u{0}", IdentityChange::Set),
];

/// The identity alteration a subcommand's column name carries, and the column's name.
pub fn identity_change(column: &str) -> Option<(IdentityChange, &str)> {
    IDENTITY_MARKERS
        .iter()
        .find_map(|(m, c)| column.strip_prefix(m).map(|name| (*c, name)))
}

/// Whether `sql` may alter an identity column ([`identity_changes`] scans its tokens only
/// then).
pub fn mentions_identity_change(sql: &str) -> bool {
    mentions(sql, b"alter")
        && [&b"identity"[..], b"restart", b"set"]
            .iter()
            .any(|w| mentions(sql, w))
}

/// Rewrites PostgreSQL's identity alterations, which sqlparser does not read, inside `ALTER
/// TABLE` statements into subcommands it does (see [`IdentityChange`]): `ALTER [COLUMN] c DROP
/// IDENTITY [IF EXISTS]`, and `ALTER [COLUMN] c` followed by any of `SET GENERATED { ALWAYS |
/// BY DEFAULT }`, `RESTART [[WITH] n]`, `SET sequence_option`. Every other token stays.
pub fn identity_changes(tokens: Vec<TokenWithSpan>) -> Result<Vec<TokenWithSpan>, SqlError> {
    let sig = significant_tokens(&tokens);
    let tok = |k: usize| sig.get(k).map_or(&Token::EOF, |i| &tokens[*i].token);
    let is = |k: usize, kw: Keyword| matches!(tok(k), Token::Word(w) if w.keyword == kw && w.quote_style.is_none());
    // Replacements: (first significant index, one past the last, new tokens).
    let mut edits: Vec<(usize, usize, Vec<Token>)> = Vec::new();
    let (mut k, mut depth, mut in_alter_table, mut statement_start) = (0, 0usize, false, true);
    while k < sig.len() {
        match tok(k) {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            Token::SemiColon if depth == 0 => {
                in_alter_table = false;
                statement_start = true;
                k += 1;
                continue;
            }
            _ => {}
        }
        if statement_start {
            in_alter_table = is(k, Keyword::ALTER) && is(k + 1, Keyword::TABLE);
            statement_start = false;
            k += 1;
            continue;
        }
        if !(in_alter_table && depth == 0 && is(k, Keyword::ALTER)) {
            k += 1;
            continue;
        }
        let mut i = k + 1;
        if is(i, Keyword::COLUMN) {
            i += 1;
        }
        let Token::Word(col) = tok(i) else {
            k += 1;
            continue;
        };
        let column = crate::query::ident(&ast::Ident {
            value: col.value.clone(),
            quote_style: col.quote_style,
            span: sqlparser::tokenizer::Span::empty(),
        });
        i += 1;
        let named = |marker: IdentityChange| {
            let m = IDENTITY_MARKERS
                .iter()
                .find(|(_, c)| *c == marker)
                .map_or("", |(m, _)| *m);
            vec![
                Token::make_keyword("ALTER"),
                Token::make_keyword("COLUMN"),
                Token::make_word(&format!("{m}{column}"), Some('"')),
            ]
        };
        if is(i, Keyword::DROP) && is(i + 1, Keyword::IDENTITY) {
            let if_exists = is(i + 2, Keyword::IF) && is(i + 3, Keyword::EXISTS);
            let mut new = named(IdentityChange::Drop { if_exists });
            new.extend([Token::make_keyword("DROP"), Token::make_keyword("DEFAULT")]);
            let end = if if_exists { i + 4 } else { i + 2 };
            edits.push((k, end, new));
            k = end;
            continue;
        }
        // The identity's option list: each element's tokens.
        let mut generated: Option<Vec<Token>> = None;
        let mut restart: Option<Vec<Token>> = None;
        let mut options: Vec<Token> = Vec::new();
        let mut found = false;
        loop {
            if is(i, Keyword::SET) && is(i + 1, Keyword::GENERATED) {
                let when = if is(i + 2, Keyword::ALWAYS) {
                    i += 3;
                    vec![Token::make_keyword("ALWAYS")]
                } else if is(i + 2, Keyword::BY) && is(i + 3, Keyword::DEFAULT) {
                    i += 4;
                    vec![Token::make_keyword("BY"), Token::make_keyword("DEFAULT")]
                } else {
                    break;
                };
                if generated.replace(when).is_some() {
                    return Err(conflicting());
                }
            } else if is(i, Keyword::RESTART) {
                i += 1;
                let with = is(i, Keyword::WITH);
                if with {
                    i += 1;
                }
                let mut value = Vec::new();
                let signed = matches!(tok(i), Token::Minus | Token::Plus);
                if signed {
                    value.push(tok(i).clone());
                    i += 1;
                }
                if matches!(tok(i), Token::Number(..)) {
                    value.push(tok(i).clone());
                    i += 1;
                } else if signed || with {
                    return Err(crate::exec::syntax_near(tok(i)));
                } else {
                    value.push(Token::make_keyword("NULL"));
                }
                if restart.replace(value).is_some() {
                    return Err(conflicting());
                }
            } else if is(i, Keyword::SET) {
                let Token::Word(w) = tok(i + 1) else { break };
                let option = w.value.to_ascii_lowercase();
                match option.as_str() {
                    "increment" | "start" | "minvalue" | "maxvalue" | "no" | "cache" | "cycle" => {}
                    "sequence" if w.quote_style.is_none() => {
                        return Err(SqlError::Syntax {
                            message: "invalid sequence option SEQUENCE NAME".into(),
                        });
                    }
                    "as" | "owned" | "restart" if w.quote_style.is_none() => {
                        let name = if option == "owned" {
                            "owned_by"
                        } else {
                            &option
                        };
                        return Err(SqlError::Syntax {
                            message: format!("sequence option \"{name}\" not supported here"),
                        });
                    }
                    _ => break,
                }
                i += 1;
                while !matches!(tok(i), Token::EOF | Token::SemiColon | Token::Comma)
                    && !is(i, Keyword::SET)
                    && !is(i, Keyword::RESTART)
                {
                    options.push(tok(i).clone());
                    i += 1;
                }
            } else {
                break;
            }
            found = true;
        }
        if !found {
            k += 1;
            continue;
        }
        let mut new = Vec::new();
        if let Some(value) = restart {
            new.extend(named(IdentityChange::Restart));
            new.extend([Token::make_keyword("SET"), Token::make_keyword("DEFAULT")]);
            new.extend(value);
            new.push(Token::Comma);
        }
        new.extend(named(IdentityChange::Set));
        new.extend([Token::make_keyword("ADD"), Token::make_keyword("GENERATED")]);
        new.extend(generated.unwrap_or_default());
        new.extend([Token::make_keyword("AS"), Token::make_keyword("IDENTITY")]);
        if !options.is_empty() {
            new.push(Token::LParen);
            new.extend(options);
            new.push(Token::RParen);
        }
        edits.push((k, i, new));
        k = i;
    }
    if edits.is_empty() {
        return Ok(tokens);
    }
    let space = || Token::Whitespace(sqlparser::tokenizer::Whitespace::Space);
    let mut out = Vec::with_capacity(tokens.len());
    let mut next = 0;
    for (from, to, new) in edits {
        let (first, end) = (sig[from], sig.get(to).copied().unwrap_or(tokens.len()));
        out.extend(tokens[next..first].iter().cloned());
        let span = tokens[first].span;
        for t in new {
            out.push(TokenWithSpan { token: t, span });
            out.push(TokenWithSpan {
                token: space(),
                span,
            });
        }
        next = end;
    }
    out.extend(tokens[next..].iter().cloned());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::tokenizer::Tokenizer;

    fn rewritten(sql: &str) -> String {
        let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql)
            .tokenize_with_location()
            .expect("tokens");
        builtin_operators_before_any(tokens)
            .iter()
            .map(|t| t.token.to_string())
            .collect()
    }

    fn identity_rewritten(sql: &str) -> String {
        let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql)
            .tokenize_with_location()
            .expect("tokens");
        identity_changes(tokens)
            .expect("rewritten")
            .iter()
            .map(|t| t.token.to_string())
            .collect::<String>()
            .replace('\u{0}', "~")
    }

    #[test]
    fn identity_alterations_become_marked_subcommands() {
        assert_eq!(
            identity_rewritten("ALTER TABLE t ALTER COLUMN Id DROP IDENTITY IF EXISTS, ADD x int"),
            "ALTER TABLE t ALTER COLUMN \"~drop identity if exists~id\" DROP DEFAULT , ADD x int"
        );
        assert_eq!(
            identity_rewritten(
                "ALTER TABLE t ALTER \"Id\" SET GENERATED BY DEFAULT SET INCREMENT BY 2 RESTART WITH -3"
            ),
            "ALTER TABLE t ALTER COLUMN \"~restart identity~Id\" SET DEFAULT - 3 , ALTER COLUMN \
             \"~set identity~Id\" ADD GENERATED BY DEFAULT AS IDENTITY ( INCREMENT BY 2 ) "
        );
        assert_eq!(
            identity_rewritten("alter table t alter c restart"),
            "alter table t ALTER COLUMN \"~restart identity~c\" SET DEFAULT NULL , ALTER COLUMN \
             \"~set identity~c\" ADD GENERATED AS IDENTITY "
        );
        // Other subcommands, and other statements, stay as they were.
        for kept in [
            "ALTER TABLE t ALTER COLUMN c SET DEFAULT 1, ALTER c SET NOT NULL",
            "ALTER TABLE t ALTER COLUMN c SET DATA TYPE bigint",
            "ALTER SEQUENCE s RESTART",
            "SELECT 1; ALTER TABLE t ALTER COLUMN c DROP DEFAULT",
            "ALTER TABLE t ALTER COLUMN c ADD GENERATED ALWAYS AS IDENTITY (START 2)",
        ] {
            assert_eq!(identity_rewritten(kept), kept);
        }
        let refused = |sql: &str| {
            let tokens = Tokenizer::new(&PostgreSqlDialect {}, sql)
                .tokenize_with_location()
                .expect("tokens");
            identity_changes(tokens).err().map(|e| e.to_string())
        };
        assert_eq!(
            refused("ALTER TABLE t ALTER c RESTART 1 RESTART 2").as_deref(),
            Some("conflicting or redundant options")
        );
        assert_eq!(
            refused("ALTER TABLE t ALTER c SET OWNED BY NONE").as_deref(),
            Some("sequence option \"owned_by\" not supported here")
        );
    }

    #[test]
    fn builtin_operator_before_any_is_the_plain_operator() {
        assert!(names_builtin_operator("x Operator(pg_catalog.=) y"));
        assert!(!names_builtin_operator("SELECT operator FROM t"));
        assert_eq!(
            rewritten("WHERE c.k OPERATOR(pg_catalog.=) ANY (array['r'])"),
            "WHERE c.k = ANY (array['r'])"
        );
        assert_eq!(
            rewritten("(a OPERATOR(pg_catalog.<) ALL (b))"),
            "(a < ALL (b))"
        );
        assert_eq!(
            rewritten("AND c.name OPERATOR(pg_catalog.<>) SOME (b)"),
            "AND c.name <> SOME (b)"
        );
        // Not before a quantifier, another schema's operator, an operator that is not a
        // comparison, or a left operand that is not a lone column (OPERATOR() binds tighter
        // than the plain comparison would): left for sqlparser.
        for kept in [
            "WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$'",
            "WHERE a OPERATOR(myschema.=) ANY (b)",
            "WHERE a OPERATOR(pg_catalog.~~) ANY (b)",
            "SELECT true < false OPERATOR(pg_catalog.=) ANY (b)",
            "SELECT 1 + a OPERATOR(pg_catalog.=) ANY (b)",
        ] {
            assert_eq!(rewritten(kept), kept);
        }
    }
}
