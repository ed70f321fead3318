//! Where in the query string an error points (PostgreSQL's cursor position, the ErrorResponse's
//! `P` field, psql's `LINE n:` caret).
//!
//! Errors are made far from the syntax tree (a column lookup, a cast of a constant), and one
//! error type serves every caller, so the position travels beside the error instead of inside
//! it: the code that binds a tree node notes, for an error it returns, the node's place in the
//! text ([`note`]). The innermost node that returns an error notes it first and outer nodes
//! returning the same error leave it be. When the statement's error reaches the engine, the
//! note is used only if it was made for that very error (same message) and the statement's
//! tree was parsed from this text ([`position`]), so a note never lands on another error.

use std::cell::RefCell;

use sqlparser::tokenizer::Location;

use crate::error::SqlError;

/// What an error points at, relative to a location in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The location itself.
    At,
    /// The operator that follows (an operand's end): past spaces and closing parentheses.
    NextToken,
    /// The type name of a cast that follows (its operand's end): past `::` or `AS`.
    CastTypeAfter,
    /// The prefix operator or function word before (its operand's start): back past spaces
    /// and opening parentheses to that token's first character.
    TokenBefore,
}

thread_local! {
    static NOTED: RefCell<Option<(String, Location, Target)>> = const { RefCell::new(None) };
}

/// Forgets any note (at the start of each request).
pub fn clear() {
    NOTED.with(|n| n.borrow_mut().take());
}

/// Where a parse error at the end of the input points: one past the last character.
pub const END_OF_INPUT: Location = Location {
    line: u64::MAX,
    column: u64::MAX,
};

/// Notes that the parse error `err` points at `at` (replacing any note: a text's last parse
/// error is the one reported).
pub fn note_parse(err: &SqlError, at: Location) {
    NOTED.with(|n| *n.borrow_mut() = Some((err.to_string(), at, Target::At)));
}

/// Notes that `err` points at `at`, unless the same error was noted already (by a node inside
/// this one). A location without a line (a node built, not parsed) is not noted.
pub fn note(err: &SqlError, at: Location) {
    note_target(err, at, Target::At);
}

/// [`note`], pointing at what `target` finds from `at`.
pub fn note_target(err: &SqlError, at: Location, target: Target) {
    if at.line == 0 || at.column == 0 {
        return;
    }
    let message = err.to_string();
    NOTED.with(|n| {
        let mut n = n.borrow_mut();
        if n.as_ref().is_some_and(|(m, ..)| *m == message) {
            return;
        }
        *n = Some((message, at, target));
    });
}

/// The 1-based character position in `sql` of the error whose message is `message`, if one was
/// noted for it. An error at the end of the input points one past the last character.
pub fn position(sql: &str, message: &str) -> Option<u32> {
    let (at, target) = NOTED.with(|n| match &*n.borrow() {
        Some((m, at, target)) if m == message => Some((*at, *target)),
        _ => None,
    })?;
    let from = char_position(sql, at)?;
    if target == Target::TokenBefore {
        let before: Vec<char> = sql.chars().take(from as usize - 1).collect();
        let mut i = before.len();
        while i > 0 && (before[i - 1].is_whitespace() || before[i - 1] == '(') {
            i -= 1;
        }
        let end = i;
        let operator = |c: char| "+-*/<>=~!@#%^&|`?".contains(c);
        let word = |c: char| c.is_alphanumeric() || c == '_';
        let class: &dyn Fn(char) -> bool = match before.get(i.wrapping_sub(1)) {
            Some(c) if operator(*c) => &operator,
            _ => &word,
        };
        while i > 0 && class(before[i - 1]) {
            i -= 1;
        }
        return (i < end).then(|| u32::try_from(i + 1).ok()).flatten();
    }
    let rest = sql.chars().skip(from as usize - 1);
    let skipped = match target {
        Target::At | Target::TokenBefore => 0,
        Target::NextToken => rest.take_while(|c| c.is_whitespace() || *c == ')').count(),
        Target::CastTypeAfter => {
            let rest: String = rest.take(64).collect();
            let gap = |s: &str| s.chars().take_while(|c| c.is_whitespace()).count();
            let mut n = gap(&rest);
            let after = &rest[rest.char_indices().nth(n).map_or(rest.len(), |(i, _)| i)..];
            let cast_word = after.starts_with("::")
                || after.get(..2).is_some_and(|w| w.eq_ignore_ascii_case("as"));
            if !cast_word {
                return None;
            }
            n += 2;
            let after: String = rest.chars().skip(n).collect();
            n + gap(&after)
        }
    };
    u32::try_from(skipped).ok().map(|s| from + s)
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
    fn a_note_serves_only_its_own_error() {
        clear();
        let e = SqlError::UndefinedColumn {
            name: "nope".into(),
        };
        note(&e, at(1, 8));
        // An outer node returning the same error keeps the inner note.
        note(&e, at(1, 1));
        assert_eq!(position("SELECT nope", &e.to_string()), Some(8));
        assert_eq!(position("SELECT nope", "another error"), None);
        note(&e, at(0, 0));
        assert_eq!(position("SELECT nope", &e.to_string()), Some(8));
        clear();
        assert_eq!(position("SELECT nope", &e.to_string()), None);
    }

    #[test]
    fn targets_found_after_a_location() {
        let e = SqlError::Syntax {
            message: "x".into(),
        };
        let cases = [
            // After `(b`: past `)` and spaces to the operator.
            ("SELECT (b) + 1", at(1, 10), Target::NextToken, Some(12)),
            ("SELECT b+1", at(1, 9), Target::NextToken, Some(9)),
            ("SELECT 1::nope", at(1, 9), Target::CastTypeAfter, Some(11)),
            (
                "SELECT CAST(1 AS  nope)",
                at(1, 14),
                Target::CastTypeAfter,
                Some(19),
            ),
            (
                "SELECT 'é' :: nope",
                at(1, 11),
                Target::CastTypeAfter,
                Some(15),
            ),
            // Neither `::` nor AS after the operand: no position rather than a wrong one.
            ("SELECT 1 é", at(1, 9), Target::CastTypeAfter, None),
            ("SELECT -b", at(1, 9), Target::TokenBefore, Some(8)),
            (
                "SELECT 'é', - ( b)",
                at(1, 17),
                Target::TokenBefore,
                Some(13),
            ),
            // Neither an operator nor a word before: none.
            ("SELECT 1, b", at(1, 11), Target::TokenBefore, None),
            (
                "SELECT substring( 'abc', 1)",
                at(1, 19),
                Target::TokenBefore,
                Some(8),
            ),
        ];
        for (sql, loc, target, want) in cases {
            clear();
            note_target(&e, loc, target);
            assert_eq!(position(sql, "x"), want, "{sql}");
        }
    }
}
