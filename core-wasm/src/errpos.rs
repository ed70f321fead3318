//! Where in the query string an error points (PostgreSQL's cursor position, the ErrorResponse's
//! `P` field, psql's `LINE n:` caret).
//!
//! Errors are made far from the syntax tree (a column lookup, a cast of a constant), and one
//! error type serves every caller, so the position travels beside the error instead of inside
//! it: the code that binds a tree node notes, for an error it returns, the node's place in the
//! text and the token it expects there ([`note`]). The innermost node that returns an error
//! notes it first and outer nodes returning the same error leave it be. When the statement's
//! error reaches the engine, the note is used only if it was made for that very error (same
//! message), the statement's tree was parsed from this text, and the text at the position
//! starts with the expected token ([`position`]): a tree parsed from a text RockLake built
//! itself (a COPY's query, a stored default) points elsewhere, and is dropped.

use std::cell::RefCell;

use sqlparser::tokenizer::Location;

use crate::error::SqlError;

/// What an error points at, relative to a location in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The location itself.
    At,
    /// The location, or if the token is not there the nearest one before it (a parse error:
    /// sqlparser sometimes reports the place after the token it names).
    AtOrBefore,
    /// The token that follows (an operand's end): past spaces, comments and closing
    /// parentheses.
    NextToken,
    /// The type name of a cast that follows (its operand's end): past `::` or `AS`.
    CastTypeAfter,
    /// The prefix operator or function word before (its operand's start): back past spaces
    /// and opening parentheses to that token's first character.
    TokenBefore,
}

/// Where an error points: a location, how to find the token from it, and the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spot {
    pub at: Location,
    pub target: Target,
    /// The text the position must start with (compared without case); empty: anything.
    pub token: String,
}

impl Spot {
    pub fn at(at: Location, token: impl Into<String>) -> Spot {
        Spot {
            at,
            target: Target::At,
            token: token.into(),
        }
    }

    pub fn find(at: Location, target: Target, token: impl Into<String>) -> Spot {
        Spot {
            at,
            target,
            token: token.into(),
        }
    }
}

thread_local! {
    static NOTED: RefCell<Option<(String, Spot)>> = const { RefCell::new(None) };
}

/// Forgets any note (at the start of each request).
pub fn clear() {
    NOTED.with(|n| n.borrow_mut().take());
}

/// Runs `f` and puts back the note there was before it: errors `f` makes and discards
/// (trial bindings) leave no note behind.
pub fn preserved<T>(f: impl FnOnce() -> T) -> T {
    let before = NOTED.with(|n| n.borrow_mut().take());
    let out = f();
    NOTED.with(|n| *n.borrow_mut() = before);
    out
}

/// Where a parse error at the end of the input points: one past the last character.
pub const END_OF_INPUT: Location = Location {
    line: u64::MAX,
    column: u64::MAX,
};

/// Notes that the parse error `err` points at `spot` (replacing any note: a text's last parse
/// error is the one reported).
pub fn note_parse(err: &SqlError, spot: Spot) {
    NOTED.with(|n| *n.borrow_mut() = Some((err.to_string(), spot)));
}

/// Notes that `err` points at `spot`, unless the same error was noted already (by a node
/// inside this one). A location without a line (a node built, not parsed) is not noted.
pub fn note(err: &SqlError, spot: Spot) {
    if spot.at.line == 0 || spot.at.column == 0 {
        return;
    }
    let message = err.to_string();
    NOTED.with(|n| {
        let mut n = n.borrow_mut();
        if n.as_ref().is_some_and(|(m, _)| *m == message) {
            return;
        }
        *n = Some((message, spot));
    });
}

/// The 1-based character position in `sql` of the error whose message is `message`, if one was
/// noted for it and the text there is the noted token. An error at the end of the input
/// points one past the last character.
pub fn position(sql: &str, message: &str) -> Option<u32> {
    let spot = NOTED.with(|n| match &*n.borrow() {
        Some((m, spot)) if m == message => Some(spot.clone()),
        _ => None,
    })?;
    let chars: Vec<char> = sql.chars().collect();
    let from = char_position(sql, spot.at)? as usize - 1;
    let found = match spot.target {
        Target::At => Some(from),
        Target::AtOrBefore => (0..=from.min(chars.len()))
            .rev()
            .find(|&i| starts_with(&chars, i, &spot.token) && token_starts(&chars, i)),
        Target::NextToken => Some(skip_gap(&chars, from, true)),
        Target::CastTypeAfter => {
            let i = skip_gap(&chars, from, false);
            let cast_word = starts_with(&chars, i, "::") || starts_with(&chars, i, "as");
            cast_word.then(|| skip_gap(&chars, i + 2, false))
        }
        Target::TokenBefore => {
            let mut i = from;
            while i > 0 && (chars[i - 1].is_whitespace() || chars[i - 1] == '(') {
                i -= 1;
            }
            let end = i;
            let operator = |c: char| "+-*/<>=~!@#%^&|`?".contains(c);
            let word = |c: char| c.is_alphanumeric() || c == '_';
            let class: &dyn Fn(char) -> bool = match chars.get(i.wrapping_sub(1)) {
                Some(c) if operator(*c) => &operator,
                _ => &word,
            };
            while i > 0 && class(chars[i - 1]) {
                i -= 1;
            }
            (i < end).then_some(i)
        }
    }?;
    if spot.at != END_OF_INPUT && !starts_with(&chars, found, &spot.token) {
        return None;
    }
    u32::try_from(found + 1).ok()
}

/// Whether `chars[i..]` starts with `token`, ignoring ASCII case.
fn starts_with(chars: &[char], i: usize, token: &str) -> bool {
    let mut at = i;
    for t in token.chars() {
        match chars.get(at) {
            Some(c) if c.eq_ignore_ascii_case(&t) => at += 1,
            _ => return false,
        }
    }
    true
}

/// Whether a token can start at `i` (not inside a word).
fn token_starts(chars: &[char], i: usize) -> bool {
    let word = |c: &char| c.is_alphanumeric() || *c == '_';
    i == 0 || !(chars.get(i).is_some_and(word) && chars.get(i - 1).is_some_and(word))
}

/// From `i`, past spaces, comments and (`closing`) closing parentheses.
fn skip_gap(chars: &[char], mut i: usize, closing: bool) -> usize {
    loop {
        match (chars.get(i), chars.get(i + 1)) {
            (Some(c), _) if c.is_whitespace() || (closing && *c == ')') => i += 1,
            // A call's empty argument list (`now()`): sqlparser's span of the call ends at its
            // name.
            (Some('('), _) if closing => {
                let close = skip_gap(chars, i + 1, false);
                if chars.get(close) != Some(&')') {
                    return i;
                }
                i = close + 1;
            }
            (Some('-'), Some('-')) => {
                while chars.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
            }
            (Some('/'), Some('*')) => i = crate::params::block_comment_end(chars, i, '/', '*'),
            _ => return i,
        }
    }
}

/// `at` (1-based line and column, columns counted in characters as sqlparser's tokenizer
/// counts them) as a 1-based character index into `sql`.
pub fn char_position(sql: &str, at: Location) -> Option<u32> {
    if at == END_OF_INPUT {
        return u32::try_from(sql.chars().count() + 1).ok();
    }
    let mut line = 1u64;
    let mut column = 1u64;
    for (i, c) in sql.chars().enumerate() {
        if line == at.line && column == at.column {
            return u32::try_from(i + 1).ok();
        }
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    (line == at.line && column == at.column)
        .then(|| u32::try_from(sql.chars().count() + 1).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u64, column: u64) -> Location {
        Location { line, column }
    }

    #[test]
    fn lines_and_characters() {
        assert_eq!(char_position("SELECT nope", at(1, 8)), Some(8));
        assert_eq!(char_position("SELECT 'é', nope", at(1, 13)), Some(13));
        assert_eq!(char_position("SELECT\n  1,\n  nope", at(3, 3)), Some(15));
        // The end of the input: one past the last character.
        assert_eq!(char_position("SELECT 1 +", at(1, 11)), Some(11));
        assert_eq!(char_position("SELECT 1", at(2, 1)), None);
        assert_eq!(char_position("SELECT 1", at(1, 20)), None);
        assert_eq!(char_position("SELECT 'é' +", END_OF_INPUT), Some(13));
    }

    #[test]
    fn a_note_serves_only_its_own_error_and_token() {
        clear();
        let e = SqlError::UndefinedColumn {
            name: "nope".into(),
        };
        note(&e, Spot::at(at(1, 8), "nope"));
        // An outer node returning the same error keeps the inner note.
        note(&e, Spot::at(at(1, 1), "select"));
        assert_eq!(position("SELECT nope", &e.to_string()), Some(8));
        assert_eq!(position("SELECT NOPE", &e.to_string()), Some(8));
        assert_eq!(position("SELECT nope", "another error"), None);
        // The same place in another text holds another token: no position.
        assert_eq!(position("SELECT x, nope", &e.to_string()), None);
        note(&e, Spot::at(at(0, 0), "nope"));
        assert_eq!(position("SELECT nope", &e.to_string()), Some(8));
        clear();
        assert_eq!(position("SELECT nope", &e.to_string()), None);
    }

    #[test]
    fn tokens_found_from_a_location() {
        let e = SqlError::Syntax {
            message: "x".into(),
        };
        let cases = [
            // After `(b`: past `)`, spaces and comments to the operator.
            (
                "SELECT (b) + 1",
                at(1, 10),
                Target::NextToken,
                "+",
                Some(12),
            ),
            ("SELECT b+1", at(1, 9), Target::NextToken, "+", Some(9)),
            (
                "SELECT now( ) + true",
                at(1, 11),
                Target::NextToken,
                "+",
                Some(15),
            ),
            ("SELECT f (a) + 1", at(1, 9), Target::NextToken, "+", None),
            (
                "SELECT b /* c */ + 1",
                at(1, 9),
                Target::NextToken,
                "+",
                Some(18),
            ),
            (
                "SELECT b -- c\n + 1",
                at(1, 9),
                Target::NextToken,
                "+",
                Some(16),
            ),
            // A cast's type is not in its span: the token there is not the operator.
            ("SELECT b::int + 1", at(1, 9), Target::NextToken, "+", None),
            (
                "SELECT 1::nope",
                at(1, 9),
                Target::CastTypeAfter,
                "nope",
                Some(11),
            ),
            (
                "SELECT CAST(1 AS  nope)",
                at(1, 14),
                Target::CastTypeAfter,
                "nope",
                Some(19),
            ),
            (
                "SELECT 'é' :: nope",
                at(1, 11),
                Target::CastTypeAfter,
                "nope",
                Some(15),
            ),
            ("SELECT 1 é", at(1, 9), Target::CastTypeAfter, "é", None),
            ("SELECT -b", at(1, 9), Target::TokenBefore, "-", Some(8)),
            (
                "SELECT 'é', - ( b)",
                at(1, 17),
                Target::TokenBefore,
                "-",
                Some(13),
            ),
            ("SELECT 1, b", at(1, 11), Target::TokenBefore, "", None),
            (
                "SELECT substring( 'abc', 1)",
                at(1, 19),
                Target::TokenBefore,
                "substring",
                Some(8),
            ),
            // A parse error reported after its token: the token before.
            (
                "SELECT a, FROM t",
                at(1, 16),
                Target::AtOrBefore,
                "FROM",
                Some(11),
            ),
            (
                "SELECT a, FROMAGE t",
                at(1, 16),
                Target::AtOrBefore,
                "t",
                None,
            ),
            (
                "SELECT a FROM tfrom",
                at(1, 15),
                Target::AtOrBefore,
                "from",
                Some(10),
            ),
        ];
        for (sql, loc, target, token, want) in cases {
            clear();
            note(&e, Spot::find(loc, target, token));
            assert_eq!(position(sql, "x"), want, "{sql}");
        }
    }
}
