//! `VACUUM` and `ANALYZE`, read as PostgreSQL's grammar has them and checked as PostgreSQL
//! checks them: the options by name, the tables and columns named, `VACUUM` outside a
//! transaction block. Neither has work to do here: RockLake keeps no planner statistics, and
//! the row versions a `VACUUM` would reclaim are reclaimed by the store's compaction and
//! `rocklake gc` (docs/lifecycle.md). Administrators' scripts and tools (`vacuumdb`) run them
//! against a catalog as against PostgreSQL, so they succeed or fail as there.
//!
//! sqlparser reads a few of their forms only; this module reads them all after their first
//! word. The statement is carried as sqlparser's `ANALYZE` with a marked name (which no SQL
//! text parses to: it holds a NUL) saying which command it is, each target a tuple of the
//! table's name and its columns.

use sqlparser::ast::{Analyze, Expr, Ident, ObjectName, Statement};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use crate::error::SqlError;

const VACUUM: &str = "\u{0}vacuum\u{0}";
const VACUUM_ANALYZE: &str = "\u{0}vacuum analyze\u{0}";
const ANALYZE: &str = "\u{0}analyze\u{0}";

/// Which maintenance command a statement is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Vacuum,
    /// `VACUUM` with its ANALYZE option: columns may be listed.
    VacuumAnalyze,
    Analyze,
}

/// A table to work on and the columns listed for it (none: all).
pub struct Target<'a> {
    pub table: &'a [Ident],
    pub columns: Vec<&'a Ident>,
}

/// Whether the parser stands at `VACUUM`, `ANALYZE` or `ANALYSE`.
pub fn at_maintenance(p: &Parser<'_>) -> bool {
    match &p.peek_token_ref().token {
        Token::Word(w) if w.quote_style.is_none() => {
            let v = w.value.to_ascii_lowercase();
            v == "vacuum" || v == "analyze" || v == "analyse"
        }
        _ => false,
    }
}

/// Reads `VACUUM …` or `ANALYZE …`, the parser standing at its first word.
pub fn parse_maintenance(
    p: &mut Parser<'_>,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<Statement, SqlError> {
    let vacuum = matches!(&p.next_token().token,
        Token::Word(w) if w.value.eq_ignore_ascii_case("vacuum"));
    let name = if vacuum { "VACUUM" } else { "ANALYZE" };
    let mut analyze = false;
    if p.consume_token(&Token::LParen) {
        loop {
            let token = p.next_token();
            let (option, written) = match token.token {
                Token::Word(w) => (w.value.to_ascii_lowercase(), w.value),
                other => return Err(crate::exec::syntax_near(&other)),
            };
            let known: &[&str] = if vacuum {
                &[
                    "analyze",
                    "verbose",
                    "freeze",
                    "full",
                    "disable_page_skipping",
                    "skip_locked",
                    "index_cleanup",
                    "process_toast",
                    "truncate",
                    "parallel",
                ]
            } else {
                &["verbose", "skip_locked"]
            };
            if !known.contains(&option.as_str()) {
                let e = SqlError::Syntax {
                    message: format!("unrecognized {name} option \"{option}\""),
                };
                crate::errpos::note_parse(&e, crate::errpos::Spot::at(token.span.start, written));
                return Err(e);
            }
            // An option's value: a boolean word or number (PARALLEL's is a count).
            let value = match &p.peek_token_ref().token {
                Token::Comma | Token::RParen => None,
                _ => Some(p.next_token().token.to_string().to_ascii_lowercase()),
            };
            let on = match value.as_deref() {
                None | Some("true" | "on" | "1" | "'true'" | "'on'") => true,
                Some("false" | "off" | "0" | "'false'" | "'off'") => false,
                Some(v) if option == "parallel" && v.parse::<u32>().is_ok() => true,
                Some("auto" | "'auto'") if option == "index_cleanup" => true,
                Some(_) => {
                    return Err(SqlError::Syntax {
                        message: format!("{option} requires a Boolean value"),
                    })
                }
            };
            if option == "analyze" {
                analyze = on;
            }
            if !p.consume_token(&Token::Comma) {
                p.expect_token(&Token::RParen).map_err(syntax)?;
                break;
            }
        }
    } else if vacuum {
        // The older spelling: [FULL] [FREEZE] [VERBOSE] [ANALYZE], in that order.
        let _ = p.parse_keyword(Keyword::FULL);
        let _ = p.parse_keyword(Keyword::FREEZE);
        let _ = p.parse_keyword(Keyword::VERBOSE);
        analyze = p.parse_keyword(Keyword::ANALYZE) || parse_word(p, "analyse");
    } else {
        let _ = p.parse_keyword(Keyword::VERBOSE);
    }
    let mut targets = Vec::new();
    if !matches!(p.peek_token_ref().token, Token::EOF | Token::SemiColon) {
        loop {
            let table = p.parse_object_name(false).map_err(syntax)?;
            let mut parts = vec![Expr::CompoundIdentifier(
                table
                    .0
                    .iter()
                    .filter_map(|p| p.as_ident().cloned())
                    .collect(),
            )];
            if p.consume_token(&Token::LParen) {
                loop {
                    parts.push(Expr::Identifier(p.parse_identifier().map_err(syntax)?));
                    if !p.consume_token(&Token::Comma) {
                        p.expect_token(&Token::RParen).map_err(syntax)?;
                        break;
                    }
                }
            }
            targets.push(Expr::Tuple(parts));
            if !p.consume_token(&Token::Comma) {
                break;
            }
        }
    }
    let marker = match (vacuum, analyze) {
        (true, false) => VACUUM,
        (true, true) => VACUUM_ANALYZE,
        (false, _) => ANALYZE,
    };
    Ok(Statement::Analyze(Analyze {
        table_name: Some(ObjectName::from(vec![Ident::new(marker)])),
        partitions: Some(targets),
        for_columns: false,
        columns: Vec::new(),
        cache_metadata: false,
        noscan: false,
        compute_statistics: false,
        has_table_keyword: false,
    }))
}

/// Consumes the unquoted word `word` if the parser stands at it.
fn parse_word(p: &mut Parser<'_>, word: &str) -> bool {
    let at = matches!(&p.peek_token_ref().token,
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word));
    if at {
        p.next_token();
    }
    at
}

/// The command and targets of a statement [`parse_maintenance`] read; `None` for any other.
pub fn recognize(stmt: &Statement) -> Option<(Command, Vec<Target<'_>>)> {
    let Statement::Analyze(a) = stmt else {
        return None;
    };
    let command = match a.table_name.as_ref()?.0.as_slice() {
        [part] => match part.as_ident()?.value.as_str() {
            VACUUM => Command::Vacuum,
            VACUUM_ANALYZE => Command::VacuumAnalyze,
            ANALYZE => Command::Analyze,
            _ => return None,
        },
        _ => return None,
    };
    let targets = a
        .partitions
        .iter()
        .flatten()
        .filter_map(|t| match t {
            Expr::Tuple(parts) => match parts.split_first() {
                Some((Expr::CompoundIdentifier(table), columns)) => Some(Target {
                    table,
                    columns: columns
                        .iter()
                        .filter_map(|c| match c {
                            Expr::Identifier(i) => Some(i),
                            _ => None,
                        })
                        .collect(),
                }),
                _ => None,
            },
            _ => None,
        })
        .collect();
    Some((command, targets))
}
