//! SQL cursors: `DECLARE`, `FETCH`, `MOVE`, `CLOSE` as PostgreSQL runs them.
//!
//! A cursor's rows are computed when it is declared (RockLake materialises results; PostgreSQL
//! reads the same snapshot lazily, so the rows are the same). Fetching moves over them exactly
//! as PostgreSQL's portal code does (`DoPortalRunFetch` over `PortalRunSelect`, with its
//! `atStart` / `atEnd` / `portalPos` state), so every direction returns the rows and the
//! `FETCH n` / `MOVE n` counts PostgreSQL's do, and a `NO SCROLL` cursor refuses to move back
//! where PostgreSQL's does.
//!
//! A cursor lives until its transaction ends, or with `WITH HOLD` until the session closes it
//! (dropped if its transaction rolls back).
//!
//! sqlparser reads `DECLARE` and `CLOSE` fully, but not `MOVE` and not every `FETCH` form
//! (`FETCH c`, `FETCH NEXT c`, `FORWARD` without a count, signed counts), so both are read here
//! into `Statement::Fetch`; a `MOVE` carries the marker [`MOVE_MARKER`] in `into` (PostgreSQL's
//! FETCH has no INTO clause, so no FETCH text parses to one).

use sqlparser::ast::{
    FetchDirection, FetchPosition, Ident, ObjectName, Statement, Value as AstValue, ValueWithSpan,
};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Span, Token};

use crate::api::FieldDesc;
use crate::error::SqlError;
use crate::types::{PgType, Value};

/// The `into` of a `Statement::Fetch` that is a MOVE.
pub const MOVE_MARKER: &str = "\u{0}move";

/// Whether a parsed FETCH is a MOVE.
pub fn is_move(into: &Option<ObjectName>) -> bool {
    into.as_ref()
        .is_some_and(|o| o.to_string().contains(MOVE_MARKER))
}

fn number(n: i64) -> ValueWithSpan {
    ValueWithSpan {
        value: AstValue::Number(n.to_string(), false),
        span: Span::empty(),
    }
}

/// Reads `FETCH` or `MOVE` (`is_move`) after its keyword: PostgreSQL's `fetch_args`.
pub fn parse_fetch(
    p: &mut Parser<'_>,
    is_move: bool,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<Statement, SqlError> {
    let signed = |p: &mut Parser<'_>| -> Result<Option<i64>, SqlError> {
        let negative = match &p.peek_token_ref().token {
            Token::Minus => true,
            Token::Plus => false,
            Token::Number(..) => {
                return integer(p, false, syntax).map(Some);
            }
            _ => return Ok(None),
        };
        p.next_token();
        integer(p, negative, syntax).map(Some)
    };
    let kw = p.parse_one_of_keywords(&[
        Keyword::NEXT,
        Keyword::PRIOR,
        Keyword::FIRST,
        Keyword::LAST,
        Keyword::ABSOLUTE,
        Keyword::RELATIVE,
        Keyword::ALL,
        Keyword::FORWARD,
        Keyword::BACKWARD,
    ]);
    let direction = match kw {
        Some(Keyword::NEXT) => FetchDirection::Next,
        Some(Keyword::PRIOR) => FetchDirection::Prior,
        Some(Keyword::FIRST) => FetchDirection::First,
        Some(Keyword::LAST) => FetchDirection::Last,
        Some(Keyword::ALL) => FetchDirection::All,
        Some(Keyword::ABSOLUTE) => FetchDirection::Absolute {
            limit: number(required(signed(p)?, p, syntax)?),
        },
        Some(Keyword::RELATIVE) => FetchDirection::Relative {
            limit: number(required(signed(p)?, p, syntax)?),
        },
        Some(Keyword::FORWARD) if p.parse_keyword(Keyword::ALL) => FetchDirection::ForwardAll,
        Some(Keyword::FORWARD) => FetchDirection::Forward {
            limit: signed(p)?.map(number),
        },
        Some(Keyword::BACKWARD) if p.parse_keyword(Keyword::ALL) => FetchDirection::BackwardAll,
        Some(Keyword::BACKWARD) => FetchDirection::Backward {
            limit: signed(p)?.map(number),
        },
        _ => match signed(p)? {
            Some(n) => FetchDirection::Count { limit: number(n) },
            None => FetchDirection::Next,
        },
    };
    let position = if p.parse_keyword(Keyword::IN) {
        FetchPosition::In
    } else {
        let _ = p.parse_keyword(Keyword::FROM);
        FetchPosition::From
    };
    let name = p.parse_identifier().map_err(syntax)?;
    Ok(Statement::Fetch {
        name,
        direction,
        position,
        into: is_move.then(|| ObjectName::from(vec![Ident::new(MOVE_MARKER)])),
    })
}

fn required(
    n: Option<i64>,
    p: &Parser<'_>,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<i64, SqlError> {
    n.ok_or_else(|| syntax(crate::copyparse::expected(p, "an integer")))
}

fn integer(
    p: &mut Parser<'_>,
    negative: bool,
    syntax: &dyn Fn(ParserError) -> SqlError,
) -> Result<i64, SqlError> {
    let t = p.next_token();
    let Token::Number(n, _) = &t.token else {
        p.prev_token();
        return Err(syntax(crate::copyparse::expected(p, "an integer")));
    };
    // PostgreSQL's SignedIconst is an int4.
    let v: i64 = n
        .parse::<i32>()
        .map(i64::from)
        .map_err(|_| SqlError::Syntax {
            message: format!("syntax error at or near \"{n}\""),
        })?;
    Ok(if negative { -v } else { v })
}

/// A fetch as PostgreSQL's grammar turns it into (`FetchStmt`): a direction and a count
/// (`None`: ALL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fetch {
    Forward(Option<i64>),
    Backward(Option<i64>),
    Absolute(i64),
    Relative(i64),
}

fn count_of(v: &ValueWithSpan) -> Result<i64, SqlError> {
    match &v.value {
        AstValue::Number(n, _) => n
            .parse()
            .map_err(|_| SqlError::internal(format!("bad FETCH count {n}"))),
        other => Err(SqlError::internal(format!("bad FETCH count {other}"))),
    }
}

fn fetch_of(d: &FetchDirection) -> Result<Fetch, SqlError> {
    Ok(match d {
        FetchDirection::Count { limit } => Fetch::Forward(Some(count_of(limit)?)),
        FetchDirection::Next => Fetch::Forward(Some(1)),
        FetchDirection::Prior => Fetch::Backward(Some(1)),
        FetchDirection::First => Fetch::Absolute(1),
        FetchDirection::Last => Fetch::Absolute(-1),
        FetchDirection::Absolute { limit } => Fetch::Absolute(count_of(limit)?),
        FetchDirection::Relative { limit } => Fetch::Relative(count_of(limit)?),
        FetchDirection::All | FetchDirection::ForwardAll => Fetch::Forward(None),
        FetchDirection::Forward { limit } => {
            Fetch::Forward(Some(limit.as_ref().map(count_of).transpose()?.unwrap_or(1)))
        }
        FetchDirection::Backward { limit } => {
            Fetch::Backward(Some(limit.as_ref().map(count_of).transpose()?.unwrap_or(1)))
        }
        FetchDirection::BackwardAll => Fetch::Backward(None),
    })
}

/// One declared cursor.
#[derive(Debug)]
pub struct Cursor {
    pub name: String,
    statement: String,
    created: i64,
    pub fields: Vec<FieldDesc>,
    pub types: Vec<PgType>,
    rows: Vec<Vec<Value>>,
    no_scroll: bool,
    /// The transaction that declared it (its serial).
    txn: u64,
    hold: bool,
    /// A WITH HOLD cursor whose transaction committed: it outlives transactions.
    held: bool,
    at_start: bool,
    at_end: bool,
    /// PostgreSQL's `portalPos`: the row last fetched, counted from 1.
    pos: u64,
}

/// A cursor as `pg_cursors` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CursorInfo {
    pub name: String,
    /// The DECLARE statement (as RockLake prints it back; PostgreSQL shows the query string
    /// as the client sent it).
    pub statement: String,
    pub holdable: bool,
    pub scrollable: bool,
    /// When it was declared (microseconds since 2000-01-01 UTC).
    pub created: i64,
}

/// What DECLARE made: the cursor's rows and how it may move.
#[derive(Debug)]
pub struct Declared {
    pub statement: String,
    pub created: i64,
    pub name: String,
    pub fields: Vec<FieldDesc>,
    pub types: Vec<PgType>,
    pub rows: Vec<Vec<Value>>,
    pub no_scroll: bool,
    pub hold: bool,
}

/// The cursors of one session.
#[derive(Debug, Default)]
pub struct Cursors {
    open: Vec<Cursor>,
}

fn no_such(name: &str) -> SqlError {
    SqlError::UndefinedCursor {
        name: name.to_string(),
    }
}

impl Cursors {
    /// Cursors usable in transaction `txn` (the current one's serial; `None` outside one).
    fn live(&self, txn: Option<u64>) -> impl Iterator<Item = &Cursor> {
        self.open
            .iter()
            .filter(move |c| c.held || Some(c.txn) == txn)
    }

    /// The cursors usable in transaction `txn`, as `pg_cursors` lists them.
    pub fn infos(&self, txn: Option<u64>) -> Vec<CursorInfo> {
        self.live(txn)
            .map(|c| CursorInfo {
                name: c.name.clone(),
                statement: c.statement.clone(),
                holdable: c.hold,
                scrollable: !c.no_scroll,
                created: c.created,
            })
            .collect()
    }

    pub fn get(&self, name: &str, txn: Option<u64>) -> Result<&Cursor, SqlError> {
        self.live(txn)
            .find(|c| c.name == name)
            .ok_or_else(|| no_such(name))
    }

    /// Opens a cursor in transaction `txn`.
    pub fn declare(&mut self, d: Declared, txn: u64) -> Result<(), SqlError> {
        if self.live(Some(txn)).any(|c| c.name == d.name) {
            return Err(SqlError::DuplicateCursor { name: d.name });
        }
        self.open.retain(|c| c.held || c.txn == txn);
        self.open.push(Cursor {
            statement: d.statement,
            created: d.created,
            name: d.name,
            fields: d.fields,
            types: d.types,
            rows: d.rows,
            no_scroll: d.no_scroll,
            txn,
            hold: d.hold,
            held: false,
            at_start: true,
            at_end: false,
            pos: 0,
        });
        Ok(())
    }

    /// `CLOSE name` (`None`: `CLOSE ALL`).
    pub fn close(&mut self, name: Option<&str>, txn: Option<u64>) -> Result<(), SqlError> {
        match name {
            None => self.open.clear(),
            Some(n) => {
                let i = self
                    .open
                    .iter()
                    .position(|c| c.name == n && (c.held || Some(c.txn) == txn))
                    .ok_or_else(|| no_such(n))?;
                self.open.remove(i);
            }
        }
        Ok(())
    }

    /// The end of transaction `txn`: its WITH HOLD cursors stay when it committed; every other
    /// cursor of it is closed.
    pub fn end_transaction(&mut self, txn: u64, committed: bool) {
        for c in &mut self.open {
            if c.txn == txn && c.hold && committed {
                c.held = true;
            }
        }
        self.open.retain(|c| c.held);
    }

    /// The names of transaction `txn`'s own cursors.
    pub fn declared_in(&self, txn: u64) -> Vec<String> {
        self.open
            .iter()
            .filter(|c| !c.held && c.txn == txn)
            .map(|c| c.name.clone())
            .collect()
    }

    /// `ROLLBACK TO SAVEPOINT`: transaction `txn`'s cursors other than `kept` (those open at
    /// the savepoint) close.
    pub fn close_declared_since(&mut self, txn: u64, kept: &[String]) {
        self.open
            .retain(|c| c.held || c.txn != txn || kept.contains(&c.name));
    }

    /// Drops the cursors transaction `txn` declared (its commit failed after all).
    pub fn forget_transaction(&mut self, txn: u64) {
        self.open.retain(|c| c.txn != txn);
    }

    /// `FETCH` (rows returned) or `MOVE` (`emit` false: counted only).
    pub fn fetch(
        &mut self,
        name: &str,
        txn: Option<u64>,
        direction: &FetchDirection,
        emit: bool,
    ) -> Result<(&Cursor, u64, Vec<Vec<Value>>), SqlError> {
        let fetch = fetch_of(direction)?;
        let c = self
            .open
            .iter_mut()
            .find(|c| c.name == name && (c.held || Some(c.txn) == txn))
            .ok_or_else(|| no_such(name))?;
        let mut out = Vec::new();
        let n = c.run_fetch(fetch, emit, &mut out)?;
        Ok((c, n, out))
    }
}

/// Where a fetch's rows go: `out` for FETCH, nowhere for MOVE.
fn sink(out: &mut Vec<Vec<Value>>, emit: bool) -> Option<&mut Vec<Vec<Value>>> {
    emit.then_some(out)
}

/// Count `None` is ALL.
type Count = Option<u64>;

impl Cursor {
    fn len(&self) -> u64 {
        self.rows.len() as u64
    }

    fn row(&self, k: u64) -> Vec<Value> {
        usize::try_from(k - 1)
            .ok()
            .and_then(|i| self.rows.get(i))
            .cloned()
            .unwrap_or_default()
    }

    /// PostgreSQL's `PortalRunSelect`: up to `count` rows forward or backward from the current
    /// position, into `out` when given.
    fn run_select(
        &mut self,
        forward: bool,
        count: Count,
        out: Option<&mut Vec<Vec<Value>>>,
    ) -> Result<u64, SqlError> {
        if forward {
            if self.at_end || count == Some(0) {
                return Ok(0);
            }
            let first = self.pos + 1;
            let last = match count {
                Some(k) => self.len().min(self.pos.saturating_add(k)),
                None => self.len(),
            };
            let n = (last + 1).saturating_sub(first);
            if let Some(out) = out {
                for k in first..=last {
                    out.push(self.row(k));
                }
            }
            if n > 0 {
                self.at_start = false;
            }
            if count.is_none_or(|k| n < k) {
                self.at_end = true;
            }
            self.pos += n;
            Ok(n)
        } else {
            if self.no_scroll {
                return Err(SqlError::CursorNoScroll);
            }
            if self.at_start || count == Some(0) {
                return Ok(0);
            }
            // From past the end the first row back is the last one.
            let first = if self.at_end {
                self.len()
            } else {
                self.pos - 1
            };
            let n = match count {
                Some(k) => first.min(k),
                None => first,
            };
            if let Some(out) = out {
                for i in 0..n {
                    out.push(self.row(first - i));
                }
            }
            if n > 0 && self.at_end {
                self.at_end = false;
                self.pos += 1;
            }
            if count.is_none_or(|k| n < k) {
                self.at_start = true;
                self.pos = 0;
            } else {
                self.pos -= n;
            }
            Ok(n)
        }
    }

    /// PostgreSQL's `DoPortalRewind`.
    fn rewind(&mut self) -> Result<(), SqlError> {
        if self.at_start && !self.at_end {
            return Ok(());
        }
        if self.no_scroll {
            return Err(SqlError::CursorNoScroll);
        }
        self.at_start = true;
        self.at_end = false;
        self.pos = 0;
        Ok(())
    }

    /// PostgreSQL's `DoPortalRunFetch`: the rows a FETCH returns (into `out` when `emit`) and
    /// the count its tag shows.
    fn run_fetch(
        &mut self,
        fetch: Fetch,
        emit: bool,
        out: &mut Vec<Vec<Value>>,
    ) -> Result<u64, SqlError> {
        let (mut forward, mut count): (bool, Count) = match fetch {
            Fetch::Forward(Some(k)) if k < 0 => (false, Some(k.unsigned_abs())),
            Fetch::Backward(Some(k)) if k < 0 => (true, Some(k.unsigned_abs())),
            Fetch::Forward(k) => (true, k.map(i64::unsigned_abs)),
            Fetch::Backward(k) => (false, k.map(i64::unsigned_abs)),
            Fetch::Absolute(k) if k > 0 => {
                let k = k.unsigned_abs();
                if k - 1 < self.pos / 2 {
                    self.rewind()?;
                    if k > 1 {
                        self.run_select(true, Some(k - 1), None)?;
                    }
                } else {
                    let mut pos = self.pos;
                    if self.at_end {
                        pos += 1;
                    }
                    if k <= pos {
                        self.run_select(false, Some(pos - k + 1), None)?;
                    } else if k > pos + 1 {
                        self.run_select(true, Some(k - pos - 1), None)?;
                    }
                }
                return self.run_select(true, Some(1), sink(out, emit));
            }
            Fetch::Absolute(k) if k < 0 => {
                self.run_select(true, None, None)?;
                if k < -1 {
                    self.run_select(false, Some(k.unsigned_abs() - 1), None)?;
                }
                return self.run_select(false, Some(1), sink(out, emit));
            }
            Fetch::Absolute(_) => {
                self.rewind()?;
                return self.run_select(true, Some(0), sink(out, emit));
            }
            Fetch::Relative(k) if k > 0 => {
                if k > 1 {
                    self.run_select(true, Some(k.unsigned_abs() - 1), None)?;
                }
                return self.run_select(true, Some(1), sink(out, emit));
            }
            Fetch::Relative(k) if k < 0 => {
                if k < -1 {
                    self.run_select(false, Some(k.unsigned_abs() - 1), None)?;
                }
                return self.run_select(false, Some(1), sink(out, emit));
            }
            Fetch::Relative(_) => (true, Some(0)),
        };
        // A zero count re-fetches the current row, if there is one.
        if count == Some(0) {
            let on_row = !self.at_start && !self.at_end;
            if !emit {
                return Ok(u64::from(on_row));
            }
            if on_row {
                self.run_select(false, Some(1), None)?;
                count = Some(1);
                forward = true;
            }
        }
        // MOVE BACKWARD ALL is a rewind.
        if !forward && count.is_none() && !emit {
            let mut result = self.pos;
            if result > 0 && !self.at_end {
                result -= 1;
            }
            self.rewind()?;
            return Ok(result);
        }
        self.run_select(forward, count, sink(out, emit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor(n: i64, no_scroll: bool) -> Cursor {
        Cursor {
            name: "c".into(),
            statement: String::new(),
            created: 0,
            fields: vec![],
            types: vec![PgType::Int8],
            rows: (1..=n).map(|i| vec![Value::Int(i)]).collect(),
            no_scroll,
            txn: 1,
            hold: false,
            held: false,
            at_start: true,
            at_end: false,
            pos: 0,
        }
    }

    fn fetch(c: &mut Cursor, f: Fetch) -> Vec<i64> {
        let mut out = Vec::new();
        let n = c.run_fetch(f, true, &mut out).expect("fetch");
        assert_eq!(n as usize, out.len());
        out.iter()
            .map(|r| match r[0] {
                Value::Int(i) => i,
                _ => panic!("{r:?}"),
            })
            .collect()
    }

    #[test]
    fn directions_move_as_postgres_portals_do() {
        let mut c = cursor(5, false);
        assert_eq!(fetch(&mut c, Fetch::Forward(Some(2))), vec![1, 2]);
        assert_eq!(fetch(&mut c, Fetch::Backward(Some(1))), vec![1]);
        assert_eq!(fetch(&mut c, Fetch::Relative(0)), vec![1]);
        assert_eq!(fetch(&mut c, Fetch::Forward(None)), vec![2, 3, 4, 5]);
        assert_eq!(fetch(&mut c, Fetch::Forward(Some(1))), Vec::<i64>::new());
        assert_eq!(fetch(&mut c, Fetch::Backward(Some(2))), vec![5, 4]);
        assert_eq!(fetch(&mut c, Fetch::Absolute(-1)), vec![5]);
        assert_eq!(fetch(&mut c, Fetch::Absolute(2)), vec![2]);
        assert_eq!(fetch(&mut c, Fetch::Relative(-5)), Vec::<i64>::new());
        assert_eq!(fetch(&mut c, Fetch::Forward(Some(-1))), Vec::<i64>::new());
        assert_eq!(fetch(&mut c, Fetch::Relative(3)), vec![3]);
        assert_eq!(fetch(&mut c, Fetch::Absolute(9)), Vec::<i64>::new());
        assert_eq!(fetch(&mut c, Fetch::Backward(None)), vec![5, 4, 3, 2, 1]);
        // MOVE counts what FETCH would return.
        let mut out = Vec::new();
        assert_eq!(
            c.run_fetch(Fetch::Forward(None), false, &mut out)
                .expect("move"),
            5
        );
        assert!(out.is_empty());
    }

    #[test]
    fn no_scroll_cursors_refuse_to_move_back() {
        let mut c = cursor(3, true);
        assert_eq!(fetch(&mut c, Fetch::Forward(Some(1))), vec![1]);
        assert_eq!(fetch(&mut c, Fetch::Absolute(3)), vec![3]);
        let mut out = Vec::new();
        let e = c
            .run_fetch(Fetch::Backward(Some(1)), true, &mut out)
            .expect_err("backward");
        assert_eq!(e.sqlstate(), "55000");
        assert_eq!(
            e.to_pg().hint.as_deref(),
            Some("Declare it with SCROLL option to enable backward scan.")
        );
    }
}
