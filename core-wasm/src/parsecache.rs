//! Parse results kept by text and by shape.
//!
//! Clients send the same statements over and over, and parsing is most of a small statement's
//! cost. Many of them differ only in their literals: DuckDB's ATTACH asks for the columns of
//! each of its ~28 tables with one query that differs only in the table's name, and every
//! commit inserts new values into the same statement shapes. So besides the exact text, the
//! cache keys a statement by its *shape*: the text with each plain literal (`'…'`, `123`,
//! `1.5`) replaced by a marker. The first text of a shape is parsed and kept with its
//! literals. The second is parsed only with a sentinel in every literal's place; the sentinels
//! are found in the tree's value nodes, and the tree filled with the first text's literals
//! must equal the first text's tree. That text and every later one get the tree with their
//! own literals put in: no parse of their own.
//!
//! A shape whose literals do not all land in value nodes (a type length such as
//! `VARCHAR(10)`, `COMMENT … IS '…'`) is remembered as unusable and its texts are parsed as
//! before. The scanner gives up (no shape) on anything it does not fully understand: `$`
//! (parameters, dollar quotes), comments, backslashes outside strings, prefixed strings
//! (`E'…'`, `U&'…'`), NUL characters.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use sqlparser::ast::{SetExpr, Statement, Value, ValueWithSpan, VisitMut, VisitorMut};

use crate::error::SqlError;

/// Parsed statements of one text, shared by every run of it.
pub type Parsed = Arc<[Arc<Statement>]>;

/// Counts of how texts were answered (for tests and measurements).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ParseStats {
    /// The exact text was cached.
    pub exact_hits: u64,
    /// A copy of the shape's tree took this text's literals.
    pub shape_hits: u64,
    /// Parsed (first text of a shape, an unusable shape, or no shape).
    pub parses: u64,
    /// Shapes whose sentinel tree was built and checked.
    pub templates: u64,
    /// Shapes found unusable when checked.
    pub unusable: u64,
    /// Long texts answered statement by statement ([`crate::longtext`]).
    pub long_texts: u64,
    /// Rows of long `INSERT … VALUES` statements read without the parser.
    pub rows_read: u64,
}

/// A bounded cache of parse results. Parsing is a pure function of the text, so every answer
/// is exactly what parsing again would give.
#[derive(Debug, Default)]
pub struct ParseCache {
    /// Each text's statements, and its shape key when it has one.
    exact: HashMap<String, (Parsed, Option<Arc<str>>)>,
    shapes: HashMap<String, Shape>,
    stats: ParseStats,
    /// The shape of the last text parsed when that shape is a checked template (see
    /// [`ParseCache::last_shape`]).
    last_shape: Option<Arc<str>>,
}

#[derive(Debug)]
enum Shape {
    /// One text of the shape was parsed; the next one builds the template and checks it
    /// against this text's tree (so that it is parsed only with sentinels, not twice).
    Seen(Box<FirstText>),
    Template(Template),
    Unusable,
}

/// The tree of a shape's sentinel text, and where its literals go. After a fill the tree holds
/// that text's literals; every fill overwrites every slot, so the rest never changes.
#[derive(Debug)]
struct Template {
    stmts: Vec<Arc<Statement>>,
    /// (ordinal of the value node in visiting order, index of the literal), by ordinal.
    slots: Vec<(usize, usize)>,
}

/// The first text of a shape and its tree (its literals are found again from the text).
#[derive(Debug)]
struct FirstText {
    sql: String,
    parsed: Parsed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LitKind {
    Str,
    Num,
}

/// One plain literal of a text: its kind, its source text (a string's text between the
/// quotes, still escaped), and where its token starts and ends in the text.
#[derive(Debug, Clone, Copy)]
struct Literal<'a> {
    kind: LitKind,
    raw: &'a str,
    token: (usize, usize),
}

impl Literal<'_> {
    /// The value node parsing this literal gives.
    fn value(&self) -> Value {
        match self.kind {
            LitKind::Str => Value::SingleQuotedString(self.raw.replace("''", "'")),
            LitKind::Num => Value::Number(self.raw.to_string(), false),
        }
    }
}

/// Marks a literal's place in a shape key. NUL never occurs in a text that has a shape.
const STR_MARK: &str = "'\0'";
const NUM_MARK: &str = "\0";
/// Sentinels: `'\u{1}rl<i>'` for strings, `<NUM_SENTINEL + i>` for numbers.
const NUM_SENTINEL: u64 = 917_000_000_000;

fn str_sentinel(i: usize) -> String {
    format!("\u{1}rl{i}")
}

fn num_sentinel(i: usize) -> String {
    (NUM_SENTINEL + i as u64).to_string()
}

impl ParseCache {
    /// Texts up to this long are cached (large INSERTs are not worth keeping).
    const MAX_TEXT: usize = 4096;
    /// Entries kept in each map; a map starts over when full (cheap, and bounded).
    const MAX_ENTRIES: usize = 512;
    /// Literals a shape may have (a many-row INSERT is parsed, not templated).
    const MAX_LITERALS: usize = 256;

    pub fn stats(&self) -> ParseStats {
        self.stats
    }

    /// The shape key of the text [`Self::parse`] last answered, when every text of that shape
    /// is known to parse to the same tree but for the value nodes of its literals (its
    /// template was built and checked): the key of [`crate::plancache`]. `None` for a text
    /// without a shape, a long text, or a shape seen only once or found unusable.
    pub fn last_shape(&self) -> Option<Arc<str>> {
        self.last_shape.clone()
    }

    /// The statements of `sql`, as [`crate::exec::parse`] gives them.
    pub fn parse(&mut self, sql: &str) -> Result<Parsed, SqlError> {
        self.last_shape = None;
        if let Some((hit, key)) = self.exact.get(sql) {
            self.stats.exact_hits += 1;
            if let Some(key) = key {
                if let Some(Shape::Template(_)) = self.shapes.get(&**key) {
                    self.last_shape = Some(key.clone());
                }
            }
            return Ok(hit.clone());
        }
        if sql.len() > Self::MAX_TEXT {
            crate::exec::check_limits(sql)?;
            let long = self.parse_long(sql);
            self.last_shape = None;
            if let Some(parsed) = long {
                self.stats.long_texts += 1;
                return Ok(parsed);
            }
            return self.parse_new(sql, false, None);
        }
        let Some((key, lits)) =
            shape_of(sql).filter(|(_, l)| !l.is_empty() && l.len() <= Self::MAX_LITERALS)
        else {
            return self.parse_new(sql, true, None);
        };
        let shared: Arc<str> = Arc::from(key.as_str());
        match self.shapes.get_mut(&key) {
            Some(Shape::Template(t)) => {
                // Brackets inside literals count towards parse's depth limit too.
                crate::exec::check_limits(sql)?;
                self.stats.shape_hits += 1;
                let filled = t.fill(&lits);
                self.last_shape = Some(shared);
                return Ok(filled);
            }
            Some(Shape::Unusable) => return self.parse_new(sql, true, Some(shared)),
            Some(Shape::Seen(_)) => {}
            None => {
                let parsed = self.parse_new(sql, true, Some(shared))?;
                let first = FirstText {
                    sql: sql.to_string(),
                    parsed: parsed.clone(),
                };
                self.remember_shape(key, Shape::Seen(Box::new(first)));
                return Ok(parsed);
            }
        }
        let Some(Shape::Seen(first)) = self.shapes.remove(&key) else {
            return self.parse_new(sql, true, Some(shared));
        };
        // The second text of the shape: the sentinel tree, checked against the first text's.
        let template = shape_of(&first.sql)
            .filter(|(_, first_lits)| first_lits.len() == lits.len())
            .and_then(|(_, first_lits)| Template::build(sql, &lits, &first_lits, &first.parsed));
        match template {
            Some(mut t) => {
                self.stats.templates += 1;
                // Brackets inside literals count towards parse's depth limit too.
                let filled = crate::exec::check_limits(sql).map(|()| t.fill(&lits));
                if filled.is_ok() {
                    self.stats.shape_hits += 1;
                    self.last_shape = Some(shared);
                }
                self.remember_shape(key, Shape::Template(t));
                filled
            }
            None => {
                self.stats.unusable += 1;
                self.remember_shape(key, Shape::Unusable);
                self.parse_new(sql, true, Some(shared))
            }
        }
    }

    fn parse_new(
        &mut self,
        sql: &str,
        keep: bool,
        shape: Option<Arc<str>>,
    ) -> Result<Parsed, SqlError> {
        self.stats.parses += 1;
        let stmts: Parsed = crate::exec::parse(sql)?.into_iter().map(Arc::new).collect();
        if keep && sql.len() <= Self::MAX_TEXT {
            if self.exact.len() >= Self::MAX_ENTRIES {
                self.exact.clear();
            }
            self.exact.insert(sql.to_string(), (stmts.clone(), shape));
        }
        Ok(stmts)
    }

    /// A long text statement by statement: short statements through the caches, long
    /// `INSERT … VALUES` of plain literals row by row, any other long one parsed on its own.
    /// `None` when the text cannot be split, or a statement does not parse (the whole text is
    /// then parsed as before, so an error is the one parsing it gives).
    fn parse_long(&mut self, sql: &str) -> Option<Parsed> {
        let mut out: Vec<Arc<Statement>> = Vec::new();
        for stmt in crate::longtext::statements(sql)? {
            if stmt.len() <= Self::MAX_TEXT {
                out.extend(self.parse(stmt).ok()?.iter().cloned());
            } else if let Some(insert) = self.values_insert(stmt) {
                out.push(Arc::new(insert));
            } else {
                out.extend(self.parse_new(stmt, false, None).ok()?.iter().cloned());
            }
        }
        Some(out.into())
    }

    /// A long `INSERT … VALUES` of plain literals: its head and first row parsed (through the
    /// caches), every row read by [`crate::longtext::values_insert`]; the first row must be
    /// the one the parser gave.
    fn values_insert(&mut self, stmt: &str) -> Option<Statement> {
        let read = crate::longtext::values_insert(stmt)?;
        let probe = format!("{} {}", read.head, read.first_row);
        // A probe too long for the caches would come back here: parse it directly.
        let parsed: Parsed = if probe.len() <= Self::MAX_TEXT {
            self.parse(&probe).ok()?
        } else {
            crate::exec::parse(&probe)
                .ok()?
                .into_iter()
                .map(Arc::new)
                .collect()
        };
        let [one] = &*parsed else { return None };
        let Statement::Insert(insert) = &**one else {
            return None;
        };
        let mut insert = insert.clone();
        let SetExpr::Values(values) = insert.source.as_mut()?.body.as_mut() else {
            return None;
        };
        let [row] = values.rows.as_slice() else {
            return None;
        };
        if values.explicit_row || values.value_keyword || row.content != read.rows[0].content {
            return None;
        }
        self.stats.rows_read += read.rows.len() as u64;
        values.rows = read.rows;
        Some(Statement::Insert(insert))
    }

    fn remember_shape(&mut self, key: String, shape: Shape) {
        if self.shapes.len() >= Self::MAX_ENTRIES && !self.shapes.contains_key(&key) {
            self.shapes.clear();
        }
        self.shapes.insert(key, shape);
    }
}

impl Template {
    /// Parses `sql` with a sentinel in each of its literals' (`lits`) places, finds each
    /// literal's value node, and checks that the tree filled with `check_lits` is
    /// `check_parsed` (the tree of another text of the shape, whose literals those are).
    /// `None`: the shape cannot be filled in (a literal the parser keeps outside a value node,
    /// or copies).
    fn build(
        sql: &str,
        lits: &[Literal<'_>],
        check_lits: &[Literal<'_>],
        check_parsed: &Parsed,
    ) -> Option<Template> {
        let mut sentinel_sql = String::with_capacity(sql.len() + lits.len() * 16);
        let mut copied = 0;
        for (i, lit) in lits.iter().enumerate() {
            sentinel_sql.push_str(&sql[copied..lit.token.0]);
            match lit.kind {
                LitKind::Str => {
                    sentinel_sql.push('\'');
                    sentinel_sql.push_str(&str_sentinel(i));
                    sentinel_sql.push('\'');
                }
                LitKind::Num => sentinel_sql.push_str(&num_sentinel(i)),
            }
            copied = lit.token.1;
        }
        sentinel_sql.push_str(&sql[copied..]);
        let mut stmts = crate::exec::parse(&sentinel_sql).ok()?;
        let mut finder = FindSentinels {
            lits,
            ordinal: 0,
            slots: Vec::with_capacity(lits.len()),
            seen: vec![false; lits.len()],
            twice: false,
        };
        let _ = stmts.visit(&mut finder);
        if finder.twice || finder.seen.iter().any(|s| !s) {
            return None;
        }
        let mut template = Template {
            stmts: stmts.into_iter().map(Arc::new).collect(),
            slots: finder.slots,
        };
        let filled = template.fill(check_lits);
        let same = filled.len() == check_parsed.len()
            && filled.iter().zip(check_parsed.iter()).all(|(a, b)| a == b);
        same.then_some(template)
    }

    /// The tree with `lits` in the literals' places. The template's own tree is patched in
    /// place and shared with the caller: once the caller of the previous fill has dropped its
    /// statements (the usual case: one statement runs at a time) nothing is copied; a tree
    /// still held is copied first (`Arc::make_mut`), so no holder ever sees its tree change.
    fn fill(&mut self, lits: &[Literal<'_>]) -> Parsed {
        let mut filler = Fill {
            lits,
            slots: &self.slots,
            next: 0,
            ordinal: 0,
        };
        for stmt in &mut self.stmts {
            // Statements after the last slot are left alone (not even copied when held).
            if filler.next == filler.slots.len() {
                break;
            }
            // Value nodes are numbered across the statements, as when the whole list was
            // visited to find the sentinels.
            let _ = Arc::make_mut(stmt).visit(&mut filler);
        }
        self.stmts.iter().cloned().collect()
    }
}

struct FindSentinels<'a, 'l> {
    lits: &'a [Literal<'l>],
    ordinal: usize,
    slots: Vec<(usize, usize)>,
    seen: Vec<bool>,
    twice: bool,
}

impl VisitorMut for FindSentinels<'_, '_> {
    type Break = ();

    fn pre_visit_value(&mut self, value: &mut ValueWithSpan) -> ControlFlow<()> {
        let found = match &value.value {
            Value::SingleQuotedString(s) => s
                .strip_prefix("\u{1}rl")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|i| {
                    self.lits.get(*i).map(|l| l.kind) == Some(LitKind::Str)
                        && *s == str_sentinel(*i)
                }),
            Value::Number(s, false) => s
                .parse::<u64>()
                .ok()
                .and_then(|n| n.checked_sub(NUM_SENTINEL))
                .and_then(|i| usize::try_from(i).ok())
                .filter(|i| {
                    self.lits.get(*i).map(|l| l.kind) == Some(LitKind::Num)
                        && *s == num_sentinel(*i)
                }),
            _ => None,
        };
        if let Some(i) = found {
            if self.seen[i] {
                self.twice = true;
            }
            self.seen[i] = true;
            self.slots.push((self.ordinal, i));
        }
        self.ordinal += 1;
        ControlFlow::Continue(())
    }
}

struct Fill<'a, 'l> {
    lits: &'a [Literal<'l>],
    slots: &'a [(usize, usize)],
    next: usize,
    ordinal: usize,
}

impl VisitorMut for Fill<'_, '_> {
    type Break = ();

    fn pre_visit_value(&mut self, value: &mut ValueWithSpan) -> ControlFlow<()> {
        if let Some(&(ordinal, lit)) = self.slots.get(self.next) {
            if ordinal == self.ordinal {
                value.value = self.lits[lit].value();
                self.next += 1;
            }
        }
        self.ordinal += 1;
        if self.next == self.slots.len() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

/// The end of the plain integer or decimal digits (`12`, `1.5`) starting at `i`.
pub(crate) fn digits_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    i
}

pub(crate) fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// Characters after which a quote or a digit starts a plain literal (an operator, an opening
/// bracket, a separator, or white space).
fn opens_literal(prev: Option<u8>) -> bool {
    match prev {
        None => true,
        Some(c) => c.is_ascii_whitespace() || b"(,=<>![;+-*/%|^~[".contains(&c),
    }
}

/// The index of the quote that closes a quoted span starting at `from` (a doubled quote
/// inside is part of the span); `None` for an unclosed span or a NUL in it.
pub(crate) fn closing_quote(b: &[u8], mut from: usize, quote: u8) -> Option<usize> {
    loop {
        match *b.get(from)? {
            0 => return None,
            c if c == quote && b.get(from + 1) == Some(&quote) => from += 2,
            c if c == quote => return Some(from),
            _ => from += 1,
        }
    }
}

/// Whether the scanners (the shape key here, `longtext::statements`) give up at `b[i]`: a byte
/// or token they do not read — NUL, `$`, a backslash outside strings, a comment, `U&'`.
pub(crate) fn gives_up_at(b: &[u8], i: usize) -> bool {
    match b[i] {
        0 | b'$' | b'\\' => true,
        b'-' => b.get(i + 1) == Some(&b'-'),
        b'/' => b.get(i + 1) == Some(&b'*'),
        b'&' => b.get(i + 1) == Some(&b'\''),
        _ => false,
    }
}

/// The end of the word (identifier, keyword or number) starting at `i`.
pub(crate) fn word_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (is_ident_char(b[i]) || b[i] == b'$') {
        i += 1;
    }
    i
}

/// The shape key of `sql` and its plain literals, or `None` when the text holds something the
/// scanner does not fully understand (then the text is only cached as it is).
fn shape_of(sql: &str) -> Option<(String, Vec<Literal<'_>>)> {
    let b = sql.as_bytes();
    let mut key = String::with_capacity(sql.len());
    let mut lits = Vec::new();
    let mut i = 0;
    // Start of the text not yet copied into the key.
    let mut copied = 0;
    while i < b.len() {
        let c = b[i];
        let prev = (i > 0).then(|| b[i - 1]);
        if gives_up_at(b, i) {
            return None;
        }
        match c {
            // A quoted identifier, copied as it is.
            b'"' => i = closing_quote(b, i + 1, b'"')? + 1,
            b'\'' => {
                if !opens_literal(prev) {
                    return None;
                }
                let start = i + 1;
                i = closing_quote(b, start, b'\'')?;
                key.push_str(&sql[copied..start - 1]);
                key.push_str(STR_MARK);
                lits.push(Literal {
                    kind: LitKind::Str,
                    raw: &sql[start..i],
                    token: (start - 1, i + 1),
                });
                i += 1;
                copied = i;
            }
            b'0'..=b'9' => {
                let start = i;
                i = digits_end(b, i);
                let next = b.get(i).copied();
                let ends = next.is_none_or(|n| !(is_ident_char(n) || n == b'.' || n == b'$'));
                if opens_literal(prev) && ends {
                    key.push_str(&sql[copied..start]);
                    key.push_str(NUM_MARK);
                    lits.push(Literal {
                        kind: LitKind::Num,
                        raw: &sql[start..i],
                        token: (start, i),
                    });
                    copied = i;
                } else {
                    // Part of a larger token (`1e5`, `1_000`, `t.1`): kept as it is.
                    while i < b.len() && (is_ident_char(b[i]) || b[i] == b'.') {
                        i += 1;
                    }
                }
            }
            c if is_ident_char(c) => {
                i = word_end(b, i);
                // A prefixed string (E'…', B'…', X'…', N'…'; U&'…' is in `gives_up_at`).
                if b.get(i) == Some(&b'\'') {
                    return None;
                }
            }
            _ => i += 1,
        }
    }
    key.push_str(&sql[copied..]);
    Some((key, lits))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(sql: &str) -> Option<(String, Vec<String>)> {
        shape_of(sql).map(|(k, l)| (k, l.iter().map(|l| l.raw.to_string()).collect()))
    }

    #[test]
    fn shapes_replace_plain_literals_only() {
        let (k, l) = key("SELECT a1, 'x''y', 12, 1.5, t.c FROM t2 WHERE x = -3 AND y IN ('a','b')")
            .expect("shape");
        assert_eq!(
            k,
            "SELECT a1, '\0', \0, \0, t.c FROM t2 WHERE x = -\0 AND y IN ('\0','\0')"
        );
        assert_eq!(l, ["x''y", "12", "1.5", "3", "a", "b"]);
        // Part of a larger token: kept in the key.
        let (k, l) = key("SELECT 1e5, 1_000, x.1, \"q'1\" FROM t").expect("shape");
        assert_eq!(k, "SELECT 1e5, 1_000, x.1, \"q'1\" FROM t");
        assert!(l.is_empty());
        for odd in [
            "SELECT $1",
            "SELECT E'\\n'",
            "SELECT U&'x'",
            "SELECT 1 -- c",
            "SELECT /* c */ 1",
            "SELECT 'open",
            "SELECT \"open",
            "SELECT x'1f'",
            "SELECT '\0'",
        ] {
            assert!(shape_of(odd).is_none(), "{odd:?}");
        }
    }

    fn same_as_parsing(cache: &mut ParseCache, sql: &str) {
        let direct = crate::exec::parse(sql);
        let cached = cache.parse(sql);
        match (direct, cached) {
            (Ok(d), Ok(c)) => {
                assert_eq!(d.len(), c.len(), "{sql}");
                for (a, b) in d.iter().zip(c.iter()) {
                    assert_eq!(a, &**b, "{sql}");
                }
            }
            (Err(d), Err(c)) => assert_eq!(d.to_pg(), c.to_pg(), "{sql}"),
            (d, c) => panic!("{sql}: direct {d:?}, cached {c:?}"),
        }
    }

    #[test]
    fn a_shape_seen_twice_is_filled_in_not_parsed_again() {
        let mut cache = ParseCache::default();
        let q = |t: &str, n: i64| {
            format!("SELECT attname FROM pg_attribute WHERE attrelid = '{t}'::regclass AND attnum > {n} ORDER BY 1")
        };
        for (i, t) in ["a", "b''c", "", "d e", "ducklake_snapshot"]
            .iter()
            .enumerate()
        {
            same_as_parsing(&mut cache, &q(t, i as i64 * 7));
        }
        // Only the first text is parsed on its own; the second builds the template (parsed
        // with sentinels, checked against the first) and is filled in like the rest.
        let s = cache.stats();
        assert_eq!((s.parses, s.templates, s.shape_hits), (1, 1, 4), "{s:?}");
    }

    #[test]
    fn a_tree_still_held_keeps_its_literals_when_the_shape_is_filled_again() {
        let mut cache = ParseCache::default();
        let q = |n: i64, t: &str| format!("SELECT {n}; SELECT a FROM t WHERE b = '{t}'");
        let direct = |sql: &str| crate::exec::parse(sql).expect("parses");
        cache.parse(&q(1, "a")).expect("seen");
        cache.parse(&q(2, "b")).expect("template");
        // Held across later fills (as a prepared statement or a running query would).
        let held = cache.parse(&q(3, "c")).expect("filled");
        let later = cache.parse(&q(4, "d")).expect("filled");
        drop(later);
        // Not held any more: patched in place, and still right.
        let again = cache.parse(&q(5, "e")).expect("filled");
        assert_eq!(cache.stats().shape_hits, 4);
        for (tree, sql) in [(&held, q(3, "c")), (&again, q(5, "e"))] {
            let want = direct(&sql);
            assert_eq!(want.len(), tree.len());
            for (a, b) in want.iter().zip(tree.iter()) {
                assert_eq!(a, &**b, "{sql}");
            }
        }
    }

    #[test]
    fn literals_the_parser_keeps_outside_value_nodes_make_a_shape_unusable() {
        let mut cache = ParseCache::default();
        for n in [10, 20, 30] {
            same_as_parsing(
                &mut cache,
                &format!("CREATE TABLE t (a VARCHAR({n}), b BIGINT DEFAULT {n})"),
            );
        }
        for c in ["x", "y", "z"] {
            same_as_parsing(&mut cache, &format!("COMMENT ON TABLE t IS '{c}'"));
        }
        let s = cache.stats();
        assert_eq!((s.unusable, s.shape_hits, s.parses), (2, 0, 6), "{s:?}");
    }

    #[test]
    fn errors_of_a_shape_are_the_texts_own() {
        let mut cache = ParseCache::default();
        for v in ["1", "2", "3", "'x'"] {
            same_as_parsing(&mut cache, &format!("SELECT {v} FROM t WHERE"));
            same_as_parsing(&mut cache, &format!("SELECT {v} FROM t WHERE a = {v}"));
        }
        // The depth limit counts brackets in literals: a filled-in text must fail it too, the
        // one that builds the template ("((…" second) as well as later ones ("((…" fourth).
        for deep in [1, 3] {
            let hits = cache.stats().shape_hits;
            let mut texts = vec!["a".to_string(), "b".into(), "c".into()];
            texts.insert(deep, "(".repeat(250));
            for s in &texts {
                same_as_parsing(&mut cache, &format!("SELECT '{s}' FROM t{deep}"));
            }
            assert_eq!(cache.stats().shape_hits, hits + 2, "{:?}", cache.stats());
        }
    }
}
