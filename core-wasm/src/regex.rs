//! PostgreSQL's regular expression operators and functions (`~`, `~*`, `regexp_replace`,
//! `regexp_match`, `regexp_like`, `regexp_count`, `regexp_substr`, `substring(s FROM pattern)`)
//! over the `regex` crate (Unicode classes and case folding, as PostgreSQL's in a UTF-8
//! database). PostgreSQL's flags are read as its `parse_re_flags` reads them, and matches are
//! walked as its `RE_execute` loop walks them (a search from a position sees the text before
//! it; an empty match may follow a match). The pattern language is the crate's (Perl-like,
//! leftmost-first), which agrees with PostgreSQL's advanced REs on the common constructs;
//! `\y`, `\Y` and `\Z` are translated.

use std::cell::RefCell;
use std::collections::HashMap;

use regex::Regex;

use crate::error::SqlError;

/// The options a flags string sets (PostgreSQL's `pg_re_flags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags {
    /// `g`: every match (regexp_replace); refused by the functions that take one match.
    pub global: bool,
    case_insensitive: bool,
    /// `.` and `[^…]` stop at a newline (`n`, `m`, `p`).
    dot_stops_at_newline: bool,
    /// `^` and `$` match at line ends (`n`, `m`, `w`).
    line_anchors: bool,
    /// `x`: whitespace and `#` comments in the pattern are ignored.
    expanded: bool,
    /// `q`: the pattern is a literal string.
    literal: bool,
}

impl Flags {
    /// `flags` as PostgreSQL's `parse_re_flags` reads them, starting from the defaults.
    pub fn parse(flags: &str) -> Result<Flags, SqlError> {
        let mut f = Flags::default();
        for c in flags.chars() {
            match c {
                'g' => f.global = true,
                'i' => f.case_insensitive = true,
                'c' => f.case_insensitive = false,
                'n' | 'm' => {
                    f.dot_stops_at_newline = true;
                    f.line_anchors = true;
                }
                's' => {
                    f.dot_stops_at_newline = false;
                    f.line_anchors = false;
                }
                'p' => {
                    f.dot_stops_at_newline = true;
                    f.line_anchors = false;
                }
                'w' => {
                    f.dot_stops_at_newline = false;
                    f.line_anchors = true;
                }
                'x' => f.expanded = true,
                't' => f.expanded = false,
                'q' => f.literal = true,
                // Advanced REs are the only kind here.
                'e' | 'b' => {
                    return Err(SqlError::feature(
                        "basic and extended (non-advanced) regular expression flavours",
                    ))
                }
                other => {
                    return Err(SqlError::InvalidParameter {
                        message: format!("invalid regular expression option: \"{other}\""),
                    })
                }
            }
        }
        Ok(f)
    }

    /// Refuses `g` for a function that returns one match (`regexp_match()` and the like).
    pub fn single(self, function: &str) -> Result<Flags, SqlError> {
        if self.global {
            let message = format!("{function}() does not support the \"global\" option");
            return Err(match function {
                "regexp_match" => SqlError::InvalidParameterHint {
                    message,
                    hint: "Use the regexp_matches function instead.".into(),
                },
                _ => SqlError::InvalidParameter { message },
            });
        }
        Ok(self)
    }
}

/// Compiled patterns kept for the statement's next rows (and the next statements): a pattern
/// is usually a constant evaluated once per row.
const KEPT_PATTERNS: usize = 64;

thread_local! {
    static COMPILED: RefCell<HashMap<(String, Flags), Regex>> = RefCell::new(HashMap::new());
}

/// `pattern` compiled under `flags`, as PostgreSQL's `RE_compile_and_cache`.
pub fn compile(pattern: &str, flags: Flags) -> Result<Regex, SqlError> {
    let key = (pattern.to_string(), flags);
    if let Some(re) = COMPILED.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(re);
    }
    let source = if flags.literal {
        regex::escape(pattern)
    } else {
        translate(pattern)
    };
    let re = regex::RegexBuilder::new(&source)
        .case_insensitive(flags.case_insensitive)
        .dot_matches_new_line(!flags.dot_stops_at_newline)
        .multi_line(flags.line_anchors)
        .ignore_whitespace(flags.expanded)
        .build()
        .map_err(|e| SqlError::InvalidRegex {
            message: format!("invalid regular expression: {e}"),
        })?;
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= KEPT_PATTERNS {
            c.clear();
        }
        c.insert(key, re.clone());
    });
    Ok(re)
}

/// PostgreSQL's escapes regex-lite spells otherwise: `\y` (word boundary) is `\b`, `\Y` is
/// `\B`, `\Z` (end of string) is `\z`. Inside brackets escapes are left alone.
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    let mut in_bracket = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('y') if !in_bracket => out.push_str("\\b"),
                Some('Y') if !in_bracket => out.push_str("\\B"),
                Some('Z') if !in_bracket => out.push_str("\\z"),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            },
            '[' if !in_bracket => {
                in_bracket = true;
                out.push(c);
            }
            ']' if in_bracket => {
                in_bracket = false;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// `~` / `~*`.
pub fn matches(pattern: &str, text: &str, case_insensitive: bool) -> Result<bool, SqlError> {
    let flags = Flags {
        case_insensitive,
        ..Flags::default()
    };
    Ok(compile(pattern, flags)?.is_match(text))
}

/// The byte offset of 1-based character `start` of `s` (its end for the character after the
/// last, `None` past that: nothing is searched); PostgreSQL's 22023 for a start below 1.
fn start_offset(s: &str, start: i64) -> Result<Option<usize>, SqlError> {
    if start < 1 {
        return Err(bad_parameter("start", start));
    }
    let skip = usize::try_from(start - 1).unwrap_or(usize::MAX);
    let mut offsets = s
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(s.len()));
    Ok(offsets.nth(skip))
}

/// The matches of `re` in `s` from byte `from`, as PostgreSQL's `regexp` functions walk them:
/// each search starts where the last match ended and sees the text before it (anchors and
/// word boundaries judge by it); after an empty match the search moves one character on.
fn matches_from<'s>(
    re: &'s Regex,
    s: &'s str,
    from: Option<usize>,
) -> impl Iterator<Item = regex::Captures<'s>> + 's {
    let mut at = from;
    std::iter::from_fn(move || {
        let pos = at?;
        let caps = re.captures_at(s, pos)?;
        let whole = caps.get(0)?;
        at = if whole.end() > whole.start() {
            Some(whole.end())
        } else {
            // One character past an empty match (none past the end).
            s[whole.end()..]
                .chars()
                .next()
                .map(|c| whole.end() + c.len_utf8())
        };
        Some(caps)
    })
}

fn bad_parameter(name: &str, value: i64) -> SqlError {
    SqlError::InvalidParameter {
        message: format!("invalid value for parameter \"{name}\": {value}"),
    }
}

/// `regexp_replace(source, pattern, replacement [, start [, n]] [, flags])`: the `n`-th match
/// from character `start` replaced (`n` 0: every one), the replacement's `\1`…`\9` and `\&`
/// standing for the groups and the whole match, `\\` for a backslash.
pub fn replace(
    s: &str,
    re: &Regex,
    replacement: &str,
    start: i64,
    n: i64,
) -> Result<String, SqlError> {
    if n < 0 {
        return Err(bad_parameter("n", n));
    }
    let from = start_offset(s, start)?;
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for (k, caps) in (1..).zip(matches_from(re, s, from)) {
        let Some(whole) = caps.get(0) else {
            continue;
        };
        if n != 0 && k != n {
            continue;
        }
        out.push_str(&s[last..whole.start()]);
        expand(&mut out, replacement, &caps);
        last = whole.end();
        if n != 0 {
            break;
        }
    }
    out.push_str(&s[last..]);
    Ok(out)
}

/// The replacement text for one match, as PostgreSQL's `appendStringInfoRegexpSubstr`.
fn expand(out: &mut String, replacement: &str, caps: &regex::Captures<'_>) {
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some(d @ '1'..='9') => {
                chars.next();
                let group = d as usize - '0' as usize;
                if let Some(m) = caps.get(group) {
                    out.push_str(m.as_str());
                }
            }
            Some('&') => {
                chars.next();
                if let Some(m) = caps.get(0) {
                    out.push_str(m.as_str());
                }
            }
            Some('\\') => {
                chars.next();
                out.push('\\');
            }
            // Any other escape is kept as written.
            _ => out.push('\\'),
        }
    }
}

/// The `n`-th match (1-based) from character `start`: its groups, `None` for a group that took
/// no part; group 0 is the whole match.
pub fn nth_match(
    s: &str,
    re: &Regex,
    start: i64,
    n: i64,
) -> Result<Option<Vec<Option<String>>>, SqlError> {
    if n < 1 {
        return Err(bad_parameter("n", n));
    }
    let from = start_offset(s, start)?;
    let skip = usize::try_from(n - 1).unwrap_or(usize::MAX);
    Ok(matches_from(re, s, from).nth(skip).map(|caps| {
        (0..caps.len())
            .map(|i| caps.get(i).map(|m| m.as_str().to_string()))
            .collect()
    }))
}

/// `regexp_split_to_array` / `_to_table`: the text between the matches PostgreSQL counts for
/// splitting (its `ignore_degenerate`: not a match at the very end, nor an empty one where the
/// previous ended), then the rest.
pub fn split(s: &str, re: &Regex) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut last = 0;
    for caps in matches_from(re, s, Some(0)) {
        let Some(m) = caps.get(0) else { continue };
        if m.start() < s.len() && m.end() > last {
            pieces.push(s[last..m.start()].to_string());
            last = m.end();
        }
    }
    pieces.push(s[last..].to_string());
    pieces
}

/// `regexp_matches`: each match's groups (the whole match when the pattern has none), every
/// match with the `global` flag, else the first.
pub fn all_matches(s: &str, re: &Regex, global: bool) -> Vec<Vec<Option<String>>> {
    matches_from(re, s, Some(0))
        .take(if global { usize::MAX } else { 1 })
        .map(|caps| {
            let groups = (0..caps.len()).map(|i| caps.get(i).map(|m| m.as_str().to_string()));
            if caps.len() > 1 {
                groups.skip(1).collect()
            } else {
                groups.collect()
            }
        })
        .collect()
}

/// `regexp_count`: matches from character `start`, none overlapping.
pub fn count(s: &str, re: &Regex, start: i64) -> Result<i64, SqlError> {
    let from = start_offset(s, start)?;
    Ok(matches_from(re, s, from).count() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str, flags: &str) -> Regex {
        compile(p, Flags::parse(flags).expect("flags")).expect("compiles")
    }

    #[test]
    fn replacements_read_postgres_escapes() {
        let r = re("b(..)", "");
        assert_eq!(
            replace("foobarbaz", &r, "X\\1Y", 1, 1).expect("ok"),
            "fooXarYbaz"
        );
        assert_eq!(
            replace("foobarbaz", &r, "X\\1Y", 1, 0).expect("ok"),
            "fooXarYXazY"
        );
        assert_eq!(
            replace("abc", &re("x*", ""), "-", 1, 0).expect("ok"),
            "-a-b-c-"
        );
        assert_eq!(
            replace("a\\b", &re("b", ""), "\\\\ \\& \\q $1", 1, 1).expect("ok"),
            "a\\\\ b \\q $1"
        );
        assert_eq!(
            replace("abcabcabc", &re("b", ""), "x", 1, 2).expect("ok"),
            "abcaxcabc"
        );
        assert_eq!(
            replace("abcabc", &re("b", ""), "x", 2, 1).expect("ok"),
            "axcabc"
        );
        assert_eq!(
            replace("abcabc", &re("b", ""), "x", 3, 1).expect("ok"),
            "abcaxc"
        );
        // An empty match may follow a match; a search from a position sees what is before.
        assert_eq!(replace("aaa", &re("a*", ""), "X", 1, 0).expect("ok"), "XX");
        assert_eq!(replace("abc", &re("^", ""), "-", 2, 1).expect("ok"), "abc");
        assert_eq!(replace("abc", &re("x*", ""), "-", 5, 1).expect("ok"), "abc");
        assert_eq!(
            replace("abc", &re("x*", ""), "-", 4, 1).expect("ok"),
            "abc-"
        );
        let folded = replace("ÉCOLE école", &re("é", "gi"), "X", 1, 0).expect("ok");
        assert_eq!(folded, "XCOLE Xcole");
    }

    #[test]
    fn flags_are_read_as_postgres_reads_them() {
        assert!(
            re("a.b", "").is_match("a\nb"),
            "by default . matches a newline"
        );
        assert!(!re("a.b", "n").is_match("a\nb"));
        assert!(re("^b", "n").is_match("a\nb"));
        assert!(!re("^b", "").is_match("a\nb"));
        assert!(re("ABC", "i").is_match("abc"));
        assert!(re("a.c", "q").is_match("a.c") && !re("a.c", "q").is_match("abc"));
        assert!(re("a b c", "x").is_match("abc"));
        assert_eq!(
            replace("ab", &re("\\y", ""), "|", 1, 0).expect("ok"),
            "|ab|"
        );
        let e = Flags::parse("gz").expect_err("z is no flag");
        assert_eq!(e.to_pg().code, "22023");
        assert_eq!(
            e.to_pg().message,
            "invalid regular expression option: \"z\""
        );
        let e = Flags::parse("g").and_then(|f| f.single("regexp_match"));
        assert_eq!(
            e.expect_err("g refused").to_pg().hint.as_deref(),
            Some("Use the regexp_matches function instead.")
        );
    }

    #[test]
    fn matches_count_and_positions() {
        let r = re("A(.)(.)", "i");
        let m = nth_match("ABCABCAXYaxy", &r, 1, 2)
            .expect("ok")
            .expect("a match");
        assert_eq!(
            m,
            vec![Some("ABC".into()), Some("B".into()), Some("C".into())]
        );
        assert_eq!(nth_match("abc", &re("x", ""), 1, 1).expect("ok"), None);
        assert_eq!(count("ABCABCAXYaxy", &re("A.", ""), 1).expect("ok"), 3);
        assert_eq!(count("abc", &re("b", ""), 3).expect("ok"), 0);
        assert_eq!(
            count("abc", &re("b", ""), 0)
                .expect_err("start 0")
                .to_pg()
                .code,
            "22023"
        );
        let bad = compile("(", Flags::default()).expect_err("unbalanced");
        assert_eq!(bad.to_pg().code, "2201B");
    }
}
