//! Identifier quoting (`quote_ident`, `quote_all_identifiers`) and the names in stored expression text.

/// Keywords `quote_ident` quotes (PostgreSQL 15's reserved, column-name and type/function-name
/// keywords).
pub(super) const QUOTED_KEYWORDS: &[&str] = &[
    "all",
    "analyse",
    "analyze",
    "and",
    "any",
    "array",
    "as",
    "asc",
    "asymmetric",
    "authorization",
    "between",
    "bigint",
    "binary",
    "bit",
    "boolean",
    "both",
    "case",
    "cast",
    "char",
    "character",
    "check",
    "coalesce",
    "collate",
    "collation",
    "column",
    "concurrently",
    "constraint",
    "create",
    "cross",
    "current_catalog",
    "current_date",
    "current_role",
    "current_schema",
    "current_time",
    "current_timestamp",
    "current_user",
    "dec",
    "decimal",
    "default",
    "deferrable",
    "desc",
    "distinct",
    "do",
    "else",
    "end",
    "except",
    "exists",
    "extract",
    "false",
    "fetch",
    "float",
    "for",
    "foreign",
    "freeze",
    "from",
    "full",
    "grant",
    "greatest",
    "group",
    "grouping",
    "having",
    "ilike",
    "in",
    "initially",
    "inner",
    "inout",
    "int",
    "integer",
    "intersect",
    "interval",
    "into",
    "is",
    "isnull",
    "join",
    "json_array",
    "json_arrayagg",
    "json_object",
    "json_objectagg",
    "lateral",
    "leading",
    "least",
    "left",
    "like",
    "limit",
    "localtime",
    "localtimestamp",
    "national",
    "natural",
    "nchar",
    "none",
    "normalize",
    "not",
    "notnull",
    "null",
    "nullif",
    "numeric",
    "offset",
    "on",
    "only",
    "or",
    "order",
    "out",
    "outer",
    "overlaps",
    "overlay",
    "placing",
    "position",
    "precision",
    "primary",
    "real",
    "references",
    "returning",
    "right",
    "row",
    "select",
    "session_user",
    "setof",
    "similar",
    "smallint",
    "some",
    "substring",
    "symmetric",
    "table",
    "tablesample",
    "then",
    "time",
    "timestamp",
    "to",
    "trailing",
    "treat",
    "trim",
    "true",
    "union",
    "unique",
    "user",
    "using",
    "values",
    "varchar",
    "variadic",
    "verbose",
    "when",
    "where",
    "window",
    "with",
    "xmlattributes",
    "xmlconcat",
    "xmlelement",
    "xmlexists",
    "xmlforest",
    "xmlnamespaces",
    "xmlparse",
    "xmlpi",
    "xmlroot",
    "xmlserialize",
    "xmltable",
];

thread_local! {
    /// The running statement's session has `quote_all_identifiers` on ([`enter_quote_all`]).
    static QUOTE_ALL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Until dropped, identifiers the statement writes are quoted as its session's
/// `quote_all_identifiers` says.
pub struct QuoteAllEntered {
    pub(super) previous: bool,
}

impl Drop for QuoteAllEntered {
    fn drop(&mut self) {
        QUOTE_ALL.with(|q| q.set(self.previous));
    }
}

/// Makes `on` the `quote_all_identifiers` of the statement about to run (see
/// [`quote_ident`]) until the guard drops.
pub fn enter_quote_all(on: bool) -> QuoteAllEntered {
    QuoteAllEntered {
        previous: QUOTE_ALL.with(|q| q.replace(on)),
    }
}

/// Whether the running statement's session has `quote_all_identifiers` on.
pub fn quote_all() -> bool {
    QUOTE_ALL.with(std::cell::Cell::get)
}

/// PostgreSQL's `quote_identifier`: bare when the name is a lower-case identifier and no
/// keyword, unless the session's `quote_all_identifiers` is on (then always quoted, as
/// PostgreSQL quotes every identifier it writes: `quote_ident()`, `format('%I')`, `regclass`
/// output, `format_type`, `pg_get_expr`, `pg_get_indexdef`, `pg_get_constraintdef`, the
/// column names of a key's detail).
pub fn quote_ident(name: &str) -> String {
    if quote_all() {
        format!("\"{}\"", name.replace('"', "\"\""))
    } else {
        quote_ident_if_needed(name)
    }
}

/// Where a name stands in a default's text, for [`rewrite_names`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum NameRole {
    /// A function's name, or a qualifier before a dot.
    Function,
    /// The first word of a type after `::`.
    TypeHead,
    /// A part of the name inside a `regclass` constant.
    Regclass,
    /// Any other word, not quoted in the text (a keyword, `CURRENT_USER`).
    Word,
}

/// Calls PostgreSQL's grammar reads as SQL syntax, not as functions by name: its deparser
/// writes them in capitals and never quotes them (`COALESCE(1, 2)`, `CURRENT_TIMESTAMP(3)`).
pub(super) const SQL_SYNTAX_CALLS: &[&str] = &[
    "coalesce",
    "greatest",
    "least",
    "nullif",
    "row",
    "current_timestamp",
    "current_time",
    "localtime",
    "localtimestamp",
];

/// Words PostgreSQL's grammar reads as calls without brackets (`DEFAULT current_user`): its
/// deparser writes them in capitals.
pub const SQL_VALUE_WORDS: &[&str] = &[
    "current_date",
    "current_time",
    "current_timestamp",
    "localtime",
    "localtimestamp",
    "current_user",
    "current_role",
    "session_user",
    "current_catalog",
    "current_schema",
    "user",
];

/// A default's stored text as `pg_get_expr` writes it under `quote_all_identifiers`:
/// function names (`"now"()`), types printed by their name after `::` (`'x'::"text"`,
/// `'{a}'::"text"[]`, but not `::character varying(3)`) and the names inside a `regclass`
/// constant (`'"app"."s1"'::"regclass"`) quoted, the rest as stored. RockLake keeps a
/// default as PostgreSQL deparses it (one lower-case word per function and type name,
/// [`normalize_names`]), so quoting those words gives PostgreSQL's text.
pub fn requote_expression(text: &str) -> String {
    let quoted = |name: &str| format!("\"{}\"", name.replace('"', "\"\""));
    rewrite_names(text, &|word, quote_style, role| match (role, quote_style) {
        (NameRole::Word, _) => word.to_string(),
        (_, Some(_)) | (NameRole::Regclass, None) => quoted(word),
        (NameRole::Function, None)
            if SQL_SYNTAX_CALLS
                .iter()
                .any(|c| c.eq_ignore_ascii_case(word)) =>
        {
            word.to_string()
        }
        (NameRole::Function, None)
            if word
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') =>
        {
            quoted(word)
        }
        (NameRole::Function, None) => word.to_string(),
        (NameRole::TypeHead, None) => crate::query::quote_type_name(word),
    })
}

/// A default's text as RockLake stores it: the names a client quoted (a dump made with
/// `--quote-all-identifiers` writes `"now"()`, `'x'::"text"`) quoted only where
/// PostgreSQL's deparser would quote them, as PostgreSQL keeps the expression, not its text.
/// SQL's calls are written in capitals (`COALESCE(…)`, `CURRENT_USER`) and bare type names
/// in lower case (`::regclass` where sqlparser writes `::REGCLASS`), as PostgreSQL's deparser
/// writes them; a `regclass` constant names what it named (`'MySeq'` is `'myseq'`).
pub fn normalize_names(text: &str) -> String {
    let capitals = |word: &str, words: &[&str]| {
        words
            .iter()
            .any(|w| w.eq_ignore_ascii_case(word))
            .then(|| word.to_ascii_uppercase())
    };
    rewrite_names(text, &|word, quote_style, role| match (role, quote_style) {
        (NameRole::Function, None) => {
            capitals(word, SQL_SYNTAX_CALLS).unwrap_or_else(|| word.to_string())
        }
        (NameRole::Word, None) => {
            capitals(word, SQL_VALUE_WORDS).unwrap_or_else(|| word.to_string())
        }
        (NameRole::TypeHead, None) => word.to_ascii_lowercase(),
        (NameRole::Word, _) => word.to_string(),
        // Function names and types the client quoted, and a regclass constant's names (as
        // regclass input read them): quoted where PostgreSQL would quote them.
        _ => quote_ident_if_needed(word),
    })
}

/// `text` with each name in a [`NameRole`] written by `name(word, quote_style, role)` and
/// every other token as it is. A text that does not tokenize is returned unchanged.
pub(super) fn rewrite_names(
    text: &str,
    name: &dyn Fn(&str, Option<char>, NameRole) -> String,
) -> String {
    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::tokenizer::{Token, Tokenizer};
    let Ok(spanned) = Tokenizer::new(&PostgreSqlDialect {}, text).tokenize_with_location() else {
        return text.to_string();
    };
    // Tokens not rewritten are copied from the text itself (a token's Display does not
    // always give back its source: a string's doubled quotes).
    let mut offsets = std::collections::HashMap::new();
    let (mut line, mut column) = (1u64, 1u64);
    for (at, c) in text.char_indices() {
        offsets.insert((line, column), at);
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    offsets.insert((line, column), text.len());
    let source = |i: usize| -> Option<&str> {
        let span = spanned.get(i)?.span;
        let start = *offsets.get(&(span.start.line, span.start.column))?;
        let end = *offsets.get(&(span.end.line, span.end.column))?;
        text.get(start..end)
    };
    let tokens: Vec<Token> = spanned.iter().map(|t| t.token.clone()).collect();
    let copy = |out: &mut String, i: usize| match source(i) {
        Some(s) => out.push_str(s),
        None => out.push_str(&tokens[i].to_string()),
    };
    let literal = |s: &str| format!("'{}'", s.replace('\'', "''"));
    // The `n`-th token after `i` that is not whitespace (0: the next one).
    let ahead = |i: usize, n: usize| {
        tokens[i + 1..]
            .iter()
            .filter(|t| !matches!(t, Token::Whitespace(_)))
            .nth(n)
    };
    fn bare(t: &Token) -> Option<&str> {
        match t {
            Token::Word(w) if w.quote_style.is_none() => Some(w.value.as_str()),
            _ => None,
        }
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        match t {
            Token::DoubleColon => {
                out.push_str("::");
                i += 1;
                // The type: its first word as `name` says; the words, typmods and brackets
                // after it copied.
                let mut first = true;
                while let Some(t) = tokens.get(i) {
                    match t {
                        Token::Word(w) if first => {
                            out.push_str(&name(&w.value, w.quote_style, NameRole::TypeHead))
                        }
                        Token::Word(w) if w.quote_style.is_none() => {
                            out.push_str(&w.value.to_ascii_lowercase())
                        }
                        Token::Whitespace(_)
                            if ahead(i, 0).and_then(bare).is_some_and(|w| {
                                ["varying", "precision", "with", "without", "time", "zone"]
                                    .iter()
                                    .any(|k| k.eq_ignore_ascii_case(w))
                            }) =>
                        {
                            copy(&mut out, i)
                        }
                        Token::LParen => {
                            // A typmod: copied to its closing bracket.
                            while let Some(t) = tokens.get(i) {
                                copy(&mut out, i);
                                if matches!(t, Token::RParen) {
                                    break;
                                }
                                i += 1;
                            }
                        }
                        Token::LBracket | Token::RBracket => copy(&mut out, i),
                        _ => break,
                    }
                    first = false;
                    i += 1;
                }
                continue;
            }
            Token::SingleQuotedString(text)
                if matches!(ahead(i, 0), Some(Token::DoubleColon))
                    && ahead(i, 1).is_some_and(|t| match t {
                        Token::Word(w) => w.value.eq_ignore_ascii_case("regclass"),
                        _ => false,
                    }) =>
            {
                // A name as regclass input reads it; an OID or a malformed name as it is.
                match split_qualified(text) {
                    Some(parts) => {
                        let parts: Vec<String> = parts
                            .iter()
                            .map(|p| name(p, None, NameRole::Regclass))
                            .collect();
                        out.push_str(&literal(&parts.join(".")));
                    }
                    None => copy(&mut out, i),
                }
            }
            Token::Word(w) if matches!(ahead(i, 0), Some(Token::LParen | Token::Period)) => {
                out.push_str(&name(&w.value, w.quote_style, NameRole::Function))
            }
            Token::Word(w) if w.quote_style.is_none() => {
                out.push_str(&name(&w.value, None, NameRole::Word))
            }
            _ => copy(&mut out, i),
        }
        i += 1;
    }
    out
}

/// The parts of a qualified name as `regclass` input reads them (`query::name_parts`).
/// `None` for an OID or a name that does not parse: the constant is then left as written.
pub(super) fn split_qualified(name: &str) -> Option<Vec<String>> {
    if name.trim().chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    crate::query::name_parts(name)
}

/// [`quote_ident`] regardless of `quote_all_identifiers`: for what PostgreSQL quotes by its
/// own rule, and for text RockLake stores.
/// `pg_get_viewdef`'s text of a view: its query as stored, PostgreSQL's leading space and
/// closing semicolon around it.
pub fn viewdef(def: &crate::catalog::ViewDef) -> String {
    format!(" {};", def.query)
}

pub fn quote_ident_if_needed(name: &str) -> String {
    let mut chars = name.chars();
    let plain = match chars.next() {
        Some(c) if c.is_ascii_lowercase() || c == '_' => {
            chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        }
        _ => false,
    };
    if plain && !QUOTED_KEYWORDS.contains(&name) {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}
