//! COPY's text and CSV formats: the options as PostgreSQL checks them (`ProcessCopyOptions`),
//! lines written as `CopyOneRowTo` writes them, and lines read as `CopyReadLine` and
//! `CopyReadAttributesText` / `CopyReadAttributesCSV` read them — with PostgreSQL's errors and
//! their CONTEXT (`COPY t, line 3, column b: "x"`).

use sqlparser::ast::{CopyLegacyOption, CopyOption, Ident};

use crate::error::SqlError;
use crate::types::{format_text, PgType, Value};

/// Which of PostgreSQL's three COPY formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Csv,
    Binary,
}

/// PostgreSQL's `CopyHeaderChoice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header {
    None,
    /// Written by COPY TO; skipped by COPY FROM.
    Present,
    /// COPY FROM only: the header's names must be the columns'.
    Match,
}

/// A COPY's options after PostgreSQL's checks, with its defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopySpec {
    pub format: Format,
    pub layout: Layout,
    pub header: Header,
    /// `FORCE_QUOTE *`.
    pub force_quote_all: bool,
    pub force_quote: Vec<String>,
    pub force_not_null: Vec<String>,
    pub force_null: Vec<String>,
}

/// How the fields of a text or CSV line are laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub csv: bool,
    /// A single one-byte character (checked where the options are read).
    pub delimiter: u8,
    /// The text that stands for NULL.
    pub null: String,
    /// CSV only.
    pub quote: u8,
    /// CSV only.
    pub escape: u8,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            csv: false,
            delimiter: b'\t',
            null: "\\N".into(),
            quote: b'"',
            escape: b'"',
        }
    }
}

fn conflicting() -> SqlError {
    SqlError::Syntax {
        message: "conflicting or redundant options".into(),
    }
}

fn unsupported(message: &str) -> SqlError {
    SqlError::UnsupportedByPostgres {
        message: message.into(),
    }
}

fn invalid(message: impl Into<String>) -> SqlError {
    SqlError::InvalidParameter {
        message: message.into(),
    }
}

/// Sets `slot` once; a second setting is PostgreSQL's "conflicting or redundant options".
fn once<T>(slot: &mut Option<T>, v: T) -> Result<(), SqlError> {
    if slot.replace(v).is_some() {
        return Err(conflicting());
    }
    Ok(())
}

fn names(cols: &[Ident]) -> Vec<String> {
    cols.iter().map(crate::query::ident).collect()
}

impl CopySpec {
    /// PostgreSQL's `ProcessCopyOptions`, check for check in its order, over the options
    /// [`crate::copyparse`] read.
    pub fn from_options(
        options: &[CopyOption],
        legacy: &[CopyLegacyOption],
        is_from: bool,
    ) -> Result<CopySpec, SqlError> {
        let (mut format, mut freeze, mut delimiter, mut null) = (None, None, None, None);
        let (mut header, mut quote, mut escape, mut encoding) = (None, None, None, None);
        let (mut force_quote, mut force_not_null, mut force_null) = (None, None, None);
        for o in options {
            match o {
                CopyOption::Format(f) => {
                    let f = match f.value.as_str() {
                        "text" => Format::Text,
                        "csv" => Format::Csv,
                        "binary" => Format::Binary,
                        other => {
                            if format.is_some() {
                                return Err(conflicting());
                            }
                            return Err(invalid(format!("COPY format \"{other}\" not recognized")));
                        }
                    };
                    once(&mut format, f)?;
                }
                CopyOption::Freeze(b) => once(&mut freeze, *b)?,
                CopyOption::Delimiter(c) => once(&mut delimiter, *c)?,
                CopyOption::Null(n) => once(&mut null, n.clone())?,
                CopyOption::Header(h) => {
                    let h = match (h, crate::copyparse::header_match(legacy)) {
                        (false, _) => Header::None,
                        (true, false) => Header::Present,
                        (true, true) => Header::Match,
                    };
                    once(&mut header, h)?;
                }
                CopyOption::Quote(c) => once(&mut quote, *c)?,
                CopyOption::Escape(c) => once(&mut escape, *c)?,
                CopyOption::ForceQuote(cols) => once(&mut force_quote, cols.clone())?,
                CopyOption::ForceNotNull(cols) => once(&mut force_not_null, names(cols))?,
                CopyOption::ForceNull(cols) => once(&mut force_null, names(cols))?,
                CopyOption::Encoding(e) => {
                    if encoding.is_some() {
                        return Err(conflicting());
                    }
                    encoding = Some(check_encoding(e)?);
                }
            }
        }
        let format = format.unwrap_or(Format::Text);
        let (binary, csv) = (format == Format::Binary, format == Format::Csv);
        if binary && delimiter.is_some() {
            return Err(SqlError::Syntax {
                message: "cannot specify DELIMITER in BINARY mode".into(),
            });
        }
        if binary && null.is_some() {
            return Err(SqlError::Syntax {
                message: "cannot specify NULL in BINARY mode".into(),
            });
        }
        let delimiter = delimiter.unwrap_or(if csv { ',' } else { '\t' });
        let null = null.unwrap_or_else(|| if csv { String::new() } else { "\\N".into() });
        let quote_given = quote.is_some();
        let escape_given = escape.is_some();
        let quote = quote.unwrap_or('"');
        let escape = escape.unwrap_or(quote);
        if !delimiter.is_ascii() {
            return Err(unsupported(
                "COPY delimiter must be a single one-byte character",
            ));
        }
        if delimiter == '\n' || delimiter == '\r' {
            return Err(invalid(
                "COPY delimiter cannot be newline or carriage return",
            ));
        }
        if null.contains(['\n', '\r']) {
            return Err(invalid(
                "COPY null representation cannot use newline or carriage return",
            ));
        }
        if !csv
            && (delimiter == '\\'
                || delimiter == '.'
                || delimiter.is_ascii_lowercase()
                || delimiter.is_ascii_digit())
        {
            return Err(invalid(format!("COPY delimiter cannot be \"{delimiter}\"")));
        }
        let header = header.unwrap_or(Header::None);
        if binary && header != Header::None {
            return Err(unsupported("cannot specify HEADER in BINARY mode"));
        }
        if !csv && quote_given {
            return Err(unsupported("COPY quote available only in CSV mode"));
        }
        if csv && delimiter == quote {
            return Err(invalid("COPY delimiter and quote must be different"));
        }
        if !csv && escape_given {
            return Err(unsupported("COPY escape available only in CSV mode"));
        }
        if !csv && force_quote.is_some() {
            return Err(unsupported("COPY force quote available only in CSV mode"));
        }
        if force_quote.is_some() && is_from {
            return Err(unsupported("COPY force quote only available using COPY TO"));
        }
        if !csv && force_not_null.is_some() {
            return Err(unsupported(
                "COPY force not null available only in CSV mode",
            ));
        }
        if force_not_null.is_some() && !is_from {
            return Err(unsupported(
                "COPY force not null only available using COPY FROM",
            ));
        }
        if !csv && force_null.is_some() {
            return Err(unsupported("COPY force null available only in CSV mode"));
        }
        if force_null.is_some() && !is_from {
            return Err(unsupported(
                "COPY force null only available using COPY FROM",
            ));
        }
        if null.contains(delimiter) {
            return Err(unsupported(
                "COPY delimiter must not appear in the NULL specification",
            ));
        }
        if csv && null.contains(quote) {
            return Err(unsupported(
                "CSV quote character must not appear in the NULL specification",
            ));
        }
        let force_quote = force_quote.unwrap_or_default();
        let force_quote_all = crate::copyparse::is_star(&force_quote);
        Ok(CopySpec {
            format,
            layout: Layout {
                csv,
                // ASCII: checked above (quote and escape by the parser).
                delimiter: delimiter as u8,
                null,
                quote: quote as u8,
                escape: escape as u8,
            },
            header,
            force_quote_all,
            force_quote: if force_quote_all {
                Vec::new()
            } else {
                names(&force_quote)
            },
            force_not_null: force_not_null.unwrap_or_default(),
            force_null: force_null.unwrap_or_default(),
        })
    }

    /// Per column of the COPY (named `columns`), whether an option names it; PostgreSQL's
    /// errors for a name that is not a column of the relation (`undefined`) or not one of the
    /// COPY's (`option` names the option in the message).
    pub fn flags(
        names: &[String],
        columns: &[String],
        option: &str,
        undefined: &dyn Fn(&str) -> Option<SqlError>,
    ) -> Result<Vec<bool>, SqlError> {
        let mut flags = vec![false; columns.len()];
        for n in names {
            if let Some(e) = undefined(n) {
                return Err(e);
            }
            match columns.iter().position(|c| c == n) {
                Some(i) => flags[i] = true,
                None => {
                    return Err(SqlError::InvalidColumnReference {
                        message: format!("{option} column \"{n}\" not referenced by COPY"),
                    })
                }
            }
        }
        Ok(flags)
    }
}

/// PostgreSQL's encoding names (`pg_encname_tbl`), as `clean_encoding_name` writes them.
const ENCODING_NAMES: &[&str] = &[
    "abc",
    "alt",
    "big5",
    "euccn",
    "eucjis2004",
    "eucjp",
    "euckr",
    "euctw",
    "gb18030",
    "gbk",
    "iso88591",
    "iso885910",
    "iso885913",
    "iso885914",
    "iso885915",
    "iso885916",
    "iso88592",
    "iso88593",
    "iso88594",
    "iso88595",
    "iso88596",
    "iso88597",
    "iso88598",
    "iso88599",
    "johab",
    "koi8",
    "koi8r",
    "koi8u",
    "latin1",
    "latin10",
    "latin2",
    "latin3",
    "latin4",
    "latin5",
    "latin6",
    "latin7",
    "latin8",
    "latin9",
    "mskanji",
    "muleinternal",
    "shiftjis",
    "shiftjis2004",
    "sjis",
    "sqlascii",
    "tcvn",
    "tcvn5712",
    "uhc",
    "unicode",
    "utf8",
    "vscii",
    "win",
    "win1250",
    "win1251",
    "win1252",
    "win1253",
    "win1254",
    "win1255",
    "win1256",
    "win1257",
    "win1258",
    "win866",
    "win874",
    "win932",
    "win936",
    "win949",
    "win950",
    "windows1250",
    "windows1251",
    "windows1252",
    "windows1253",
    "windows1254",
    "windows1255",
    "windows1256",
    "windows1257",
    "windows1258",
    "windows866",
    "windows874",
    "windows932",
    "windows936",
    "windows949",
    "windows950",
];

/// `ENCODING`: PostgreSQL's 22023 for a name it does not know; RockLake reads and writes COPY
/// data in UTF-8 only, so another encoding is refused rather than misread.
fn check_encoding(name: &str) -> Result<(), SqlError> {
    let key: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if key == "utf8" || key == "unicode" {
        return Ok(());
    }
    if !ENCODING_NAMES.contains(&key.as_str()) {
        return Err(invalid(
            "argument to option \"encoding\" must be a valid encoding name",
        ));
    }
    Err(SqlError::feature(format!(
        "COPY ENCODING '{name}' (COPY data is UTF8 only here)"
    )))
}

// ------------------------------------------------------------------ writing

impl Layout {
    /// One line of COPY TO output (PostgreSQL's `CopyOneRowTo`): each value written as its
    /// type writes it, then escaped (text) or quoted where needed (CSV).
    pub fn write_row(&self, values: &[Value], types: &[PgType], force_quote: &[bool]) -> Vec<u8> {
        let mut line = Vec::new();
        let single = values.len() == 1;
        for (i, (v, ty)) in values.iter().zip(types).enumerate() {
            if i > 0 {
                line.push(self.delimiter);
            }
            match format_text(v, *ty) {
                None => line.extend_from_slice(self.null.as_bytes()),
                Some(s) if self.csv => {
                    let forced = force_quote.get(i).copied().unwrap_or(false);
                    self.csv_field(&s, forced, single, &mut line);
                }
                Some(s) => self.text_field(&s, &mut line),
            }
        }
        line.push(b'\n');
        line
    }

    /// The header line: the columns' names, escaped or quoted as values are.
    pub fn write_header(&self, names: &[String]) -> Vec<u8> {
        let mut line = Vec::new();
        for (i, n) in names.iter().enumerate() {
            if i > 0 {
                line.push(self.delimiter);
            }
            if self.csv {
                self.csv_field(n, false, names.len() == 1, &mut line);
            } else {
                self.text_field(n, &mut line);
            }
        }
        line.push(b'\n');
        line
    }

    /// PostgreSQL's `CopyAttributeOutText`: backslash, the delimiter and control characters
    /// escaped.
    fn text_field(&self, s: &str, out: &mut Vec<u8>) {
        for &b in s.as_bytes() {
            match b {
                8 => out.extend_from_slice(b"\\b"),
                12 => out.extend_from_slice(b"\\f"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                11 => out.extend_from_slice(b"\\v"),
                b if b == b'\\' || b == self.delimiter => {
                    out.push(b'\\');
                    out.push(b);
                }
                b => out.push(b),
            }
        }
    }

    /// PostgreSQL's `CopyAttributeOutCSV`: quoted when forced, when it is the NULL text, when
    /// it holds the delimiter, the quote, CR or LF, or when it is a lone column's `\.` (which
    /// would read as the end of the data); inside quotes the quote and escape characters are
    /// preceded by the escape character.
    fn csv_field(&self, s: &str, forced: bool, single: bool, out: &mut Vec<u8>) {
        let quote = forced
            || s == self.null
            || (single && s == "\\.")
            || s.bytes()
                .any(|b| b == self.delimiter || b == self.quote || b == b'\n' || b == b'\r');
        if !quote {
            out.extend_from_slice(s.as_bytes());
            return;
        }
        out.push(self.quote);
        for &b in s.as_bytes() {
            if b == self.quote || b == self.escape {
                out.push(self.escape);
            }
            out.push(b);
        }
        out.push(self.quote);
    }
}

// ------------------------------------------------------------------ reading

/// The line ending the data uses, fixed by its first line (PostgreSQL's `EolType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Eol {
    Unknown,
    Nl,
    Cr,
    CrNl,
}

/// One line of COPY FROM data, split into fields.
#[derive(Debug)]
pub struct Line {
    /// PostgreSQL's `cur_lineno`: lines read so far (the header counts; in CSV a line break
    /// inside quotes counts too).
    pub number: u64,
    /// The line as read, without its line ending (for error contexts).
    pub text: String,
    /// The fields; `None` is NULL.
    pub fields: Vec<Option<String>>,
}

/// Reads COPY FROM text or CSV data line by line, as PostgreSQL's `CopyReadLine` does.
pub struct LineReader<'a> {
    data: &'a [u8],
    pos: usize,
    eol: Eol,
    number: u64,
    done: bool,
    layout: &'a Layout,
    relation: &'a str,
}

/// PostgreSQL's `limit_printout_length`: at most 100 bytes of a value in a CONTEXT line.
pub fn printout(s: &str) -> String {
    const MAX: usize = 100;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

impl<'a> LineReader<'a> {
    pub fn new(data: &'a [u8], layout: &'a Layout, relation: &'a str) -> Self {
        LineReader {
            data,
            pos: 0,
            eol: Eol::Unknown,
            number: 0,
            done: false,
            layout,
            relation,
        }
    }

    /// The CONTEXT for an error on the current line, its text not known.
    fn at_line(&self, error: SqlError) -> SqlError {
        SqlError::InCopy {
            error: Box::new(error),
            context: format!("COPY {}, line {}", self.relation, self.number),
        }
    }

    fn eol_error(&self, newline: bool) -> SqlError {
        let (message, hint) = match (newline, self.layout.csv) {
            (false, false) => (
                "literal carriage return found in data",
                "Use \"\\r\" to represent carriage return.",
            ),
            (false, true) => (
                "unquoted carriage return found in data",
                "Use quoted CSV field to represent carriage return.",
            ),
            (true, false) => (
                "literal newline found in data",
                "Use \"\\n\" to represent newline.",
            ),
            (true, true) => (
                "unquoted newline found in data",
                "Use quoted CSV field to represent newline.",
            ),
        };
        self.at_line(SqlError::BadCopyFormat {
            message: message.into(),
            hint: Some(hint),
        })
    }

    fn marker_error(&self, message: &str) -> SqlError {
        self.at_line(SqlError::BadCopyFormat {
            message: message.into(),
            hint: None,
        })
    }

    /// The next line's raw bytes (without its ending); `None` at the end of the data or at
    /// the end-of-copy marker `\.`. A line's text before a marker is returned first.
    fn raw_line(&mut self) -> Result<Option<&'a [u8]>, SqlError> {
        if self.done {
            return Ok(None);
        }
        let d = self.data;
        let csv = self.layout.csv;
        let (quote, escape) = (self.layout.quote, self.layout.escape);
        let start = self.pos;
        let mut i = start;
        let mut in_quote = false;
        let mut last_was_esc = false;
        loop {
            let Some(&c) = d.get(i) else {
                self.done = true;
                self.pos = i;
                return Ok((i > start).then(|| &d[start..i]));
            };
            i += 1;
            if csv {
                if quote == escape {
                    if c == quote {
                        in_quote = !in_quote;
                    }
                } else {
                    if in_quote && c == escape {
                        last_was_esc = !last_was_esc;
                    }
                    if c == quote && !last_was_esc {
                        in_quote = !in_quote;
                    }
                    if c != escape {
                        last_was_esc = false;
                    }
                }
                // PostgreSQL counts a line break inside quotes as a line (its "fragile" count).
                if in_quote && c == if self.eol == Eol::Nl { b'\n' } else { b'\r' } {
                    self.number += 1;
                }
            }
            if c == b'\r' && (!csv || !in_quote) {
                let end = i - 1;
                match self.eol {
                    Eol::Unknown | Eol::CrNl => {
                        if d.get(i) == Some(&b'\n') {
                            i += 1;
                            self.eol = Eol::CrNl;
                        } else if self.eol == Eol::CrNl {
                            return Err(self.eol_error(false));
                        } else {
                            self.eol = Eol::Cr;
                        }
                    }
                    Eol::Nl => return Err(self.eol_error(false)),
                    Eol::Cr => {}
                }
                self.pos = i;
                return Ok(Some(&d[start..end]));
            }
            if c == b'\n' && (!csv || !in_quote) {
                if matches!(self.eol, Eol::Cr | Eol::CrNl) {
                    return Err(self.eol_error(true));
                }
                self.eol = Eol::Nl;
                self.pos = i;
                return Ok(Some(&d[start..i - 1]));
            }
            if c == b'\\' && (!csv || i - 1 == start) {
                if d.get(i) == Some(&b'.') {
                    if let Some(end) = self.end_marker(i + 1)? {
                        let before = &d[start..i - 1];
                        self.done = true;
                        self.pos = end;
                        return Ok((!before.is_empty()).then_some(before));
                    }
                } else if !csv {
                    // Text mode: the escaped character is data, even a line break (a
                    // backslash ending the data escapes nothing).
                    i = (i + 1).min(d.len());
                }
            }
        }
    }

    /// After `\.` at `at`: where the marker ends, or `None` when in CSV it is data after all.
    fn end_marker(&self, at: usize) -> Result<Option<usize>, SqlError> {
        let d = self.data;
        let csv = self.layout.csv;
        let mut i = at;
        if self.eol == Eol::CrNl {
            let c2 = d.get(i).copied();
            i += 1;
            if c2 == Some(b'\n') {
                if !csv {
                    return Err(self
                        .marker_error("end-of-copy marker does not match previous newline style"));
                }
                return Ok(None);
            }
            if c2 != Some(b'\r') {
                if !csv {
                    return Err(self.marker_error("end-of-copy marker corrupt"));
                }
                return Ok(None);
            }
        }
        let c2 = d.get(i).copied();
        i += 1;
        if c2 != Some(b'\r') && c2 != Some(b'\n') {
            if !csv {
                return Err(self.marker_error("end-of-copy marker corrupt"));
            }
            return Ok(None);
        }
        let matches = match self.eol {
            Eol::Nl | Eol::CrNl => c2 == Some(b'\n'),
            Eol::Cr => c2 == Some(b'\r'),
            Eol::Unknown => true,
        };
        if !matches {
            return Err(
                self.marker_error("end-of-copy marker does not match previous newline style")
            );
        }
        Ok(Some(i))
    }

    /// A line read and checked as UTF-8 (PostgreSQL verifies all input), not split: a
    /// header PostgreSQL skips.
    pub fn skip_line(&mut self) -> Result<(), SqlError> {
        self.number += 1;
        if let Some(raw) = self.raw_line()? {
            self.checked_text(raw)?;
        }
        Ok(())
    }

    /// A raw line as text: valid UTF-8 without NUL bytes (PostgreSQL's encoding check).
    fn checked_text(&self, raw: &'a [u8]) -> Result<&'a str, SqlError> {
        if let Some(at) = raw.iter().position(|b| *b == 0) {
            return Err(self.at_line(invalid_utf8(&raw[at..])));
        }
        std::str::from_utf8(raw).map_err(|e| self.at_line(invalid_utf8(&raw[e.valid_up_to()..])))
    }

    /// The next line with its fields, or `None` at the end of the data.
    pub fn next_line(&mut self) -> Result<Option<Line>, SqlError> {
        self.number += 1;
        let Some(raw) = self.raw_line()? else {
            return Ok(None);
        };
        let text = self.checked_text(raw)?;
        let fields = if self.layout.csv {
            self.csv_fields(text)
        } else {
            text_fields(text, self.layout)
        };
        let fields = fields.map_err(|e| SqlError::InCopy {
            error: Box::new(e),
            context: format!(
                "COPY {}, line {}: \"{}\"",
                self.relation,
                self.number,
                printout(text)
            ),
        })?;
        Ok(Some(Line {
            number: self.number,
            text: text.to_string(),
            fields,
        }))
    }

    /// PostgreSQL's `CopyReadAttributesCSV`.
    fn csv_fields(&self, line: &str) -> Result<Vec<Option<String>>, SqlError> {
        let l = self.layout;
        let b = line.as_bytes();
        let mut fields = Vec::new();
        let mut i = 0;
        loop {
            let start = i;
            let mut out: Vec<u8> = Vec::new();
            let mut saw_quote = false;
            let mut found_delim = false;
            let mut end;
            'field: loop {
                // Not in quotes.
                loop {
                    end = i;
                    let Some(&c) = b.get(i) else { break 'field };
                    i += 1;
                    if c == l.delimiter {
                        found_delim = true;
                        break 'field;
                    }
                    if c == l.quote {
                        saw_quote = true;
                        break;
                    }
                    out.push(c);
                }
                // In quotes.
                loop {
                    let Some(&c) = b.get(i) else {
                        return Err(SqlError::BadCopyFormat {
                            message: "unterminated CSV quoted field".into(),
                            hint: None,
                        });
                    };
                    i += 1;
                    if c == l.escape {
                        if let Some(&next) = b.get(i) {
                            if next == l.escape || next == l.quote {
                                out.push(next);
                                i += 1;
                                continue;
                            }
                        }
                    }
                    if c == l.quote {
                        break;
                    }
                    out.push(c);
                }
            }
            let raw = &b[start..end];
            let null = !saw_quote && raw == l.null.as_bytes();
            fields.push(if null {
                None
            } else {
                // Split at ASCII bytes of valid UTF-8: still UTF-8.
                Some(String::from_utf8(out).map_err(|_| invalid_utf8(raw))?)
            });
            if !found_delim {
                return Ok(fields);
            }
        }
    }
}

/// PostgreSQL's `report_invalid_encoding`: the bad sequence's bytes, as many as its first
/// byte announces.
pub(crate) fn invalid_utf8(bad: &[u8]) -> SqlError {
    let len = match bad.first() {
        Some(b) if b & 0xe0 == 0xc0 => 2,
        Some(b) if b & 0xf0 == 0xe0 => 3,
        Some(b) if b & 0xf8 == 0xf0 => 4,
        _ => 1,
    };
    SqlError::InvalidEncoding {
        bytes: bad
            .iter()
            .take(len)
            .map(|b| format!("0x{b:02x}"))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// PostgreSQL's `CopyReadAttributesText`: fields split at each unescaped delimiter, NULL when
/// the raw field is the null text, then backslash escapes read (`\b \f \n \r \t \v`, octal
/// `\NNN`, hex `\xHH`; any other character stands for itself).
fn text_fields(line: &str, l: &Layout) -> Result<Vec<Option<String>>, SqlError> {
    let b = line.as_bytes();
    let mut fields = Vec::new();
    let mut i = 0;
    loop {
        let start = i;
        let mut out: Vec<u8> = Vec::new();
        let mut found_delim = false;
        let mut end = b.len();
        while let Some(&c) = b.get(i) {
            i += 1;
            if c == l.delimiter {
                found_delim = true;
                end = i - 1;
                break;
            }
            if c != b'\\' {
                out.push(c);
                continue;
            }
            let Some(&c) = b.get(i) else {
                end = i;
                break;
            };
            i += 1;
            match c {
                b'0'..=b'7' => {
                    let mut v = u32::from(c - b'0');
                    for _ in 0..2 {
                        match b.get(i) {
                            Some(&d @ b'0'..=b'7') => {
                                v = v * 8 + u32::from(d - b'0');
                                i += 1;
                            }
                            _ => break,
                        }
                    }
                    out.push((v & 0xff) as u8);
                }
                b'x' if b.get(i).is_some_and(u8::is_ascii_hexdigit) => {
                    let mut v = 0u32;
                    for _ in 0..2 {
                        match b.get(i).and_then(|d| (*d as char).to_digit(16)) {
                            Some(d) => {
                                v = v * 16 + d;
                                i += 1;
                            }
                            None => break,
                        }
                    }
                    out.push(v as u8);
                }
                b'b' => out.push(8),
                b'f' => out.push(12),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'v' => out.push(11),
                other => out.push(other),
            }
        }
        let raw = &b[start..end];
        fields.push(if raw == l.null.as_bytes() {
            None
        } else {
            // An escape may make a NUL or a byte that is not UTF-8: PostgreSQL's encoding
            // error either way.
            if let Some(at) = out.iter().position(|b| *b == 0) {
                return Err(invalid_utf8(&out[at..]));
            }
            Some(String::from_utf8(out).map_err(|e| {
                let at = e.utf8_error().valid_up_to();
                invalid_utf8(&e.into_bytes()[at..])
            })?)
        });
        if !found_delim {
            return Ok(fields);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv() -> Layout {
        Layout {
            csv: true,
            delimiter: b',',
            null: String::new(),
            ..Layout::default()
        }
    }

    type Numbered = Vec<(u64, Vec<Option<String>>)>;

    fn read(data: &str, layout: &Layout) -> Result<Numbered, SqlError> {
        let mut r = LineReader::new(data.as_bytes(), layout, "t");
        let mut out = Vec::new();
        while let Some(l) = r.next_line()? {
            out.push((l.number, l.fields));
        }
        Ok(out)
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    #[test]
    fn csv_fields_read_quotes_escapes_and_nulls_as_postgres() {
        let got = read(
            "1,\"a,b\",\n\"\",\"x\"\"y\"\n\"two\nlines\",z,\"\"\n",
            &csv(),
        )
        .expect("reads");
        assert_eq!(
            got,
            vec![
                (1, vec![s("1"), s("a,b"), None]),
                (2, vec![s(""), s("x\"y")]),
                // The quoted line break counts as a line, as in PostgreSQL.
                (4, vec![s("two\nlines"), s("z"), s("")]),
            ]
        );
        let e = read("\"open\n", &csv()).expect_err("unterminated");
        assert_eq!(e.sqlstate(), "22P04");
        assert_eq!(e.to_pg().message, "unterminated CSV quoted field");
    }

    #[test]
    fn line_endings_follow_the_first_line() {
        let text = Layout::default();
        assert_eq!(read("a\r\nb\r\n", &text).expect("crlf").len(), 2);
        let e = read("a\nb\rc\n", &text).expect_err("mixed");
        let pg = e.to_pg();
        assert_eq!(pg.message, "literal carriage return found in data");
        assert_eq!(pg.context.as_deref(), Some("COPY t, line 2"));
        assert_eq!(read("a\n\\.\nignored\n", &text).expect("marker").len(), 1);
        assert_eq!(
            read("a\n\\.x", &text).expect_err("corrupt").to_pg().message,
            "end-of-copy marker corrupt"
        );
        // A backslash ending the data is part of the last line (PostgreSQL drops it).
        assert_eq!(
            read("a\\", &text).expect("trailing"),
            vec![(1, vec![s("a")])]
        );
        // In CSV a `\.` that is not alone on its line is data.
        assert_eq!(
            read("\\.x\n", &csv()).expect("data"),
            vec![(1, vec![s("\\.x")])]
        );
    }

    #[test]
    fn csv_output_quotes_where_postgres_does() {
        let l = csv();
        let types = [PgType::Text, PgType::Text, PgType::Text, PgType::Int4];
        let row = [
            Value::Text("a,b".into()),
            Value::Text("".into()),
            Value::Null,
            Value::Int(7),
        ];
        assert_eq!(
            l.write_row(&row, &types, &[]),
            b"\"a,b\",\"\",,7\n".to_vec()
        );
        let forced = l.write_row(&row, &types, &[false, false, true, true]);
        assert_eq!(forced, b"\"a,b\",\"\",,\"7\"\n".to_vec());
        let only = l.write_row(&[Value::Text("\\.".into())], &[PgType::Text], &[]);
        assert_eq!(only, b"\"\\.\"\n".to_vec());
    }
}
