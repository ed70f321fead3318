//! `to_char(timestamp | timestamptz | interval, text)` and its inverse, `to_date` and
//! `to_timestamp(text, text)`: PostgreSQL's date/time templates (`formatting.c`'s DCH
//! keywords) with the `FM` and `TM` prefixes and the `TH`/`th` suffixes; quoted text and
//! backslash escapes are literal. A timestamptz is formatted in the session's zone, with its
//! abbreviation (`TZ`) and offset (`OF`, `TZH`, `TZM`), and read in it unless the input gives
//! an offset.

use crate::error::SqlError;
use crate::types::{civil_from_days, days_from_civil, Interval};

const USECS_PER_DAY: i64 = 86_400_000_000;
const UNIX_TO_PG_DAYS: i64 = 10_957;
const PG_EPOCH_JDATE: i64 = 2_451_545;

/// What is formatted.
pub enum Source<'a> {
    /// Local time (a timestamp, or a timestamptz in the session's zone) with the zone's
    /// offset in seconds east and abbreviation (`None` for a timestamp).
    Time {
        local: i64,
        zone: Option<(i32, &'a str)>,
    },
    Interval(Interval),
}

/// The broken-down fields a template reads.
struct Fields<'a> {
    /// Astronomical year (0 is 1 BC); for an interval, its years.
    year: i64,
    month: i64,
    mday: i64,
    hour: i64,
    minute: i64,
    second: i64,
    micros: i64,
    /// Days since 2000-01-01 (not for intervals).
    days: i64,
    offset: i32,
    abbrev: &'a str,
    interval: bool,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const ROMAN: [&str; 12] = [
    "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII",
];

/// The template keywords, longest first where one is a prefix of another (PostgreSQL's
/// `DCH_keywords` order matters the same way).
const KEYWORDS: &[&str] = &[
    "A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "Day", "Dy", "D",
    "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "FX", "HH24", "HH12", "HH", "IDDD", "ID", "IW",
    "IYYY", "IYY", "IY", "I", "J", "MI", "MM", "MONTH", "MON", "MS", "Month", "Mon", "OF", "P.M.",
    "PM", "Q", "RM", "SSSSS", "SSSS", "SS", "TZH", "TZM", "TZ", "US", "WW", "W", "Y,YYY", "YYYY",
    "YYY", "YY", "Y", "a.d.", "a.m.", "ad", "am", "b.c.", "bc", "cc", "day", "ddd", "dd", "dy",
    "d", "ff1", "ff2", "ff3", "ff4", "ff5", "ff6", "fx", "hh24", "hh12", "hh", "iddd", "id", "iw",
    "iyyy", "iyy", "iy", "i", "j", "mi", "mm", "month", "mon", "ms", "of", "p.m.", "pm", "q", "rm",
    "sssss", "ssss", "ss", "tzh", "tzm", "tz", "us", "ww", "w", "y,yyy", "yyyy", "yyy", "yy", "y",
];

fn interval_error() -> SqlError {
    format_error(
        "invalid format specification for an interval value".into(),
        None,
        Some("Intervals are not tied to specific calendar dates."),
    )
}

/// `to_char(value, template)`.
pub fn to_char(source: Source<'_>, template: &str) -> Result<String, SqlError> {
    let f = match source {
        Source::Time { local, zone } => {
            let days = local.div_euclid(USECS_PER_DAY);
            let time = local.rem_euclid(USECS_PER_DAY);
            let (y, m, d) = civil_from_days(days + UNIX_TO_PG_DAYS);
            let (offset, abbrev) = zone.unwrap_or((0, ""));
            Fields {
                year: y,
                month: m.into(),
                mday: d.into(),
                hour: time / 3_600_000_000,
                minute: time / 60_000_000 % 60,
                second: time / 1_000_000 % 60,
                micros: time % 1_000_000,
                days,
                offset,
                abbrev,
                interval: false,
            }
        }
        Source::Interval(iv) => Fields {
            year: i64::from(iv.months / 12),
            month: i64::from(iv.months % 12),
            mday: iv.days.into(),
            hour: iv.micros / 3_600_000_000,
            minute: iv.micros / 60_000_000 % 60,
            second: iv.micros / 1_000_000 % 60,
            micros: iv.micros % 1_000_000,
            days: 0,
            offset: 0,
            abbrev: "",
            interval: true,
        },
    };
    let mut out = String::new();
    for node in nodes(template) {
        match node {
            Node::Key {
                key,
                fill,
                translated,
                ordinal,
            } => {
                let is_name = matches!(key.to_ascii_uppercase().as_str(), "DAY" | "MONTH");
                keyword(&mut out, key, &f, fill || translated && is_name, ordinal)?;
            }
            Node::Space(c) | Node::Separator(c) | Node::Literal(c) => out.push(c),
        }
    }
    Ok(out)
}

/// Writes `n` zero-padded to `width` (one more for a negative number), or plain in fill mode,
/// with an ordinal suffix if asked.
fn number(out: &mut String, n: i64, width: usize, fill: bool, ordinal: Option<bool>) {
    // printf's `%0*d`: the width counts the sign.
    let width = if fill { 0 } else { width };
    out.push_str(&format!("{n:0width$}"));
    if let Some(upper) = ordinal {
        let suffix = match (n.abs() % 100, n.abs() % 10) {
            (11..=13, _) => "th",
            (_, 1) => "st",
            (_, 2) => "nd",
            (_, 3) => "rd",
            _ => "th",
        };
        if upper {
            out.push_str(&suffix.to_ascii_uppercase());
        } else {
            out.push_str(suffix);
        }
    }
}

/// Writes a name in the case the keyword is written in, padded to `width` unless in fill
/// mode.
fn name(out: &mut String, key: &str, text: &str, width: usize, fill: bool) {
    let upper = key.chars().all(|c| !c.is_ascii_lowercase());
    let lower = key.chars().all(|c| !c.is_ascii_uppercase());
    let shown = if upper {
        text.to_ascii_uppercase()
    } else if lower {
        text.to_ascii_lowercase()
    } else {
        text.to_string()
    };
    if fill {
        out.push_str(&shown);
    } else {
        out.push_str(&format!("{shown:<width$}"));
    }
}

fn keyword(
    out: &mut String,
    key: &str,
    f: &Fields<'_>,
    fill: bool,
    ordinal: Option<bool>,
) -> Result<(), SqlError> {
    let upper = key.to_ascii_uppercase();
    // The year as written: BC years count up from 1 (an interval's may be negative).
    let year = if f.year <= 0 && !f.interval {
        1 - f.year
    } else {
        f.year
    };
    let bc = f.year <= 0 && !f.interval;
    let iso = || {
        let isodow = (f.days + 5).rem_euclid(7) + 1;
        let thursday = f.days - isodow + 4;
        let (y, _, _) = civil_from_days(thursday + UNIX_TO_PG_DAYS);
        let jan1 = days_from_civil(y, 1, 1) - UNIX_TO_PG_DAYS;
        let week = (thursday - jan1) / 7 + 1;
        // A BC ISO year is written as its positive number, as YYYY's.
        (if y <= 0 { 1 - y } else { y }, week, isodow)
    };
    let yday = || f.days - (days_from_civil(f.year, 1, 1) - UNIX_TO_PG_DAYS) + 1;
    let wday = (f.days + 6).rem_euclid(7); // 0 is Sunday
                                           // PostgreSQL refuses the fields an interval does not have (names, eras, weekdays, zones).
    let not_for_intervals = matches!(
        upper.as_str(),
        "DAY"
            | "DY"
            | "MONTH"
            | "MON"
            | "A.D."
            | "B.C."
            | "AD"
            | "BC"
            | "D"
            | "ID"
            | "TZ"
            | "TZH"
            | "TZM"
            | "OF"
    );
    if f.interval && not_for_intervals {
        return Err(interval_error());
    }
    // The calendar-derived ones PostgreSQL computes from an interval's fields in its own way:
    // refused here rather than answered differently.
    let derived = matches!(
        upper.as_str(),
        "DDD" | "IDDD" | "IW" | "IYYY" | "IYY" | "IY" | "I" | "WW" | "W" | "J" | "Q" | "RM"
    );
    if f.interval && derived {
        return Err(SqlError::feature(format!(
            "to_char of an interval with the \"{key}\" field"
        )));
    }
    match upper.as_str() {
        "A.D." | "B.C." => name(out, key, if bc { "B.C." } else { "A.D." }, 0, true),
        "AD" | "BC" => name(out, key, if bc { "BC" } else { "AD" }, 0, true),
        "A.M." | "P.M." => name(
            out,
            key,
            if f.hour % 24 >= 12 { "P.M." } else { "A.M." },
            0,
            true,
        ),
        "AM" | "PM" => name(
            out,
            key,
            if f.hour % 24 >= 12 { "PM" } else { "AM" },
            0,
            true,
        ),
        "CC" => {
            let cc = if f.interval {
                f.year / 100
            } else if f.year > 0 {
                f.year / 100 + i64::from(f.year % 100 != 0)
            } else {
                f.year / 100 - 1
            };
            number(out, cc, if cc < 0 { 3 } else { 2 }, fill, ordinal);
        }
        "DAY" => name(out, key, DAYS[wday as usize], 9, fill),
        "DY" => name(out, key, &DAYS[wday as usize][..3], 3, true),
        "DDD" => number(out, yday(), 3, fill, ordinal),
        "DD" => number(out, f.mday, 2, fill, ordinal),
        "D" => number(out, wday + 1, 1, fill, ordinal),
        "FF1" | "FF2" | "FF3" | "FF4" | "FF5" | "FF6" => {
            let digits = usize::from(upper.as_bytes()[2] - b'0');
            let scale = 10i64.pow(6 - digits as u32);
            number(out, f.micros / scale, digits, fill, ordinal);
        }
        "FX" => {}
        "HH24" => number(out, f.hour, 2, fill, ordinal),
        "HH12" | "HH" => {
            let h = f.hour % 12;
            number(out, if h == 0 { 12 } else { h }, 2, fill, ordinal);
        }
        "IDDD" => {
            let (_, week, isodow) = iso();
            number(out, (week - 1) * 7 + isodow, 3, fill, ordinal);
        }
        "ID" => number(out, iso().2, 1, fill, ordinal),
        "IW" => number(out, iso().1, 2, fill, ordinal),
        "IYYY" => number(out, iso().0, 4, fill, ordinal),
        "IYY" => number(out, iso().0 % 1000, 3, fill, ordinal),
        "IY" => number(out, iso().0 % 100, 2, fill, ordinal),
        "I" => number(out, iso().0 % 10, 1, fill, ordinal),
        "J" => number(out, f.days + PG_EPOCH_JDATE, 1, true, ordinal),
        "MI" => number(out, f.minute, 2, fill, ordinal),
        "MM" => number(out, f.month, 2, fill, ordinal),
        "MONTH" => name(
            out,
            key,
            MONTHS[(f.month - 1).clamp(0, 11) as usize],
            9,
            fill,
        ),
        "MON" => name(
            out,
            key,
            &MONTHS[(f.month - 1).clamp(0, 11) as usize][..3],
            3,
            true,
        ),
        "MS" => number(out, f.micros / 1000, 3, fill, ordinal),
        "OF" => {
            let abs = f.offset.unsigned_abs();
            out.push(if f.offset < 0 { '-' } else { '+' });
            out.push_str(&format!("{:02}", abs / 3600));
            if !abs.is_multiple_of(3600) {
                out.push_str(&format!(":{:02}", abs / 60 % 60));
            }
        }
        "Q" => number(out, (f.month - 1) / 3 + 1, 1, fill, ordinal),
        "RM" => {
            let roman = ROMAN[(f.month - 1).clamp(0, 11) as usize];
            name(out, key, roman, 4, fill);
        }
        "SSSSS" | "SSSS" => number(
            out,
            f.hour * 3600 + f.minute * 60 + f.second,
            1,
            true,
            ordinal,
        ),
        "SS" => number(out, f.second, 2, fill, ordinal),
        "TZH" => {
            out.push(if f.offset < 0 { '-' } else { '+' });
            out.push_str(&format!("{:02}", f.offset.unsigned_abs() / 3600));
        }
        "TZM" => out.push_str(&format!("{:02}", f.offset.unsigned_abs() / 60 % 60)),
        "TZ" => name(out, key, f.abbrev, 0, true),
        "US" => number(out, f.micros, 6, fill, ordinal),
        "WW" => number(out, (yday() - 1) / 7 + 1, 2, fill, ordinal),
        "W" => number(out, (f.mday - 1) / 7 + 1, 1, fill, ordinal),
        "Y,YYY" => {
            out.push_str(&format!("{},", year / 1000));
            number(out, year % 1000, 3, false, ordinal);
        }
        "YYYY" => number(out, year, if year < 0 { 5 } else { 4 }, fill, ordinal),
        "YYY" => number(out, year % 1000, 3, fill, ordinal),
        "YY" => number(out, year % 100, 2, fill, ordinal),
        "Y" => number(out, year % 10, 1, fill, ordinal),
        _ => return Err(SqlError::internal("to_char keyword")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(local: &str, zone: Option<(i32, &str)>, template: &str) -> String {
        let local = crate::types::parse_timestamp(local, false).expect("timestamp");
        to_char(Source::Time { local, zone }, template).expect("formats")
    }

    #[test]
    fn templates_format_as_postgres_formats_them() {
        let t = "2020-07-04 11:05:09.123456";
        assert_eq!(
            fmt(
                t,
                Some((-14_400, "EDT")),
                "YYYY-MM-DD HH24:MI:SS.MS US TZ tz OF TZH:TZM AM"
            ),
            "2020-07-04 11:05:09.123 123456 EDT edt -04 -04:00 AM"
        );
        assert_eq!(
            fmt(
                t,
                None,
                "Day|DAY|Dy|Month|Mon|FMMonth|FMDD|DDth|FMDDth|RM|FMrm"
            ),
            "Saturday |SATURDAY |Sat|July     |Jul|July|4|04th|4th|VII |vii"
        );
        assert_eq!(
            fmt(
                t,
                None,
                "DDD IDDD D ID W WW IW Q J CC Y,YYY YYY YY Y SSSS FF1 \"q YYYY\" \\\"x"
            ),
            "186 188 7 6 1 27 27 3 2459035 21 2,020 020 20 0 39909 1 q YYYY \"x"
        );
        assert_eq!(
            fmt("2020-07-04 00:00", None, "HH HH12 AM OF TZ|"),
            "12 12 AM +00 |"
        );
        assert_eq!(
            fmt("2021-01-03", None, "IYYY-IW-ID WW D DDD"),
            "2020-53-7 01 1 003"
        );
        let iv = Interval {
            months: 14,
            days: 3,
            micros: 50 * 3_600_000_000 + 5 * 60_000_000 + 6_500_000,
        };
        assert_eq!(
            to_char(Source::Interval(iv), "YYYY MM DD HH24 HH MI SS MS").expect("interval"),
            "0001 02 03 50 02 05 06 500"
        );
        assert!(to_char(Source::Interval(iv), "Month").is_err());
    }
}

// ------------------------------------------------------------------ to_date / to_timestamp

/// One piece of a template.
enum Node<'t> {
    Key {
        key: &'t str,
        /// `FM`: no padding (and, reading, as many digits as there are).
        fill: bool,
        /// `TM`: names in the session's language (PostgreSQL's C locale: English), unpadded.
        translated: bool,
        /// `TH` (`Some(true)`) or `th` (`Some(false)`): an ordinal suffix.
        ordinal: Option<bool>,
    },
    /// A space: written as is; reading, it matches one space or separator, or none.
    Space(char),
    /// A character that is neither a letter nor a digit, treated as a space is.
    Separator(char),
    /// Literal text: written as is; reading, each character consumes one of the input.
    Literal(char),
}

/// A template's pieces: keywords with their prefixes and suffixes, quoted text (with its
/// backslash escapes), `\"` outside quotes as a quote, and the characters between.
fn nodes(template: &str) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut rest = template;
    while !rest.is_empty() {
        let (mut fill, mut translated) = (false, false);
        loop {
            if let Some(r) = rest.strip_prefix("FM").or_else(|| rest.strip_prefix("fm")) {
                fill = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("TM").or_else(|| rest.strip_prefix("tm")) {
                translated = true;
                rest = r;
            } else {
                break;
            }
        }
        if let Some(key) = KEYWORDS.iter().find(|k| rest.starts_with(**k)) {
            rest = &rest[key.len()..];
            let ordinal = if let Some(r) = rest.strip_prefix("TH") {
                rest = r;
                Some(true)
            } else if let Some(r) = rest.strip_prefix("th") {
                rest = r;
                Some(false)
            } else {
                None
            };
            out.push(Node::Key {
                key,
                fill,
                translated,
                ordinal,
            });
            continue;
        }
        let mut chars = rest.chars();
        match chars.next() {
            Some('"') => {
                let mut it = chars;
                while let Some(c) = it.next() {
                    match c {
                        '"' => break,
                        '\\' => out.push(Node::Literal(it.next().unwrap_or('\\'))),
                        c => out.push(Node::Literal(c)),
                    }
                }
                rest = it.as_str();
            }
            // Outside quotes a backslash is text, except before a double quote.
            Some('\\') if chars.as_str().starts_with('"') => {
                out.push(Node::Literal('"'));
                rest = &chars.as_str()[1..];
            }
            Some(c) => {
                out.push(if c.is_whitespace() {
                    Node::Space(c)
                } else if c.is_ascii() && !c.is_ascii_alphanumeric() {
                    Node::Separator(c)
                } else {
                    Node::Literal(c)
                });
                rest = chars.as_str();
            }
            None => break,
        }
    }
    out
}

/// Whether a keyword reads digits.
fn is_digit_key(key: &str) -> bool {
    !matches!(
        key.to_ascii_uppercase().as_str(),
        "A.D."
            | "A.M."
            | "AD"
            | "AM"
            | "B.C."
            | "BC"
            | "P.M."
            | "PM"
            | "DAY"
            | "DY"
            | "MONTH"
            | "MON"
            | "RM"
            | "TZ"
            | "OF"
            | "FX"
    )
}

/// The fields `to_date`/`to_timestamp` read.
#[derive(Default)]
struct Parsed {
    year: Option<i64>,
    year_digits: usize,
    bc: bool,
    month: Option<i64>,
    mday: Option<i64>,
    yday: Option<i64>,
    julian: Option<i64>,
    hour: Option<i64>,
    twelve_hour: bool,
    pm: Option<bool>,
    minute: i64,
    second: i64,
    micros: i64,
    tzh: Option<i64>,
    tzm: i64,
    tz_negative: bool,
}

fn format_error(message: String, detail: Option<String>, hint: Option<&str>) -> SqlError {
    SqlError::InvalidFormat {
        message,
        detail,
        hint: hint.map(str::to_string),
    }
}

/// Reads an integer for `key` (PostgreSQL's `from_char_parse_int_len`): as many digits as
/// there are when the field is in fill mode or a non-digit follows it, else exactly `len`.
fn parse_int(s: &mut &str, key: &str, len: usize, greedy: bool) -> Result<(i64, usize), SqlError> {
    *s = s.trim_start_matches(' ');
    let copy: String = s.chars().take(len).collect();
    let invalid = |detail: String, fm_hint: bool| {
        format_error(
            format!("invalid value \"{copy}\" for \"{key}\""),
            Some(detail),
            fm_hint.then_some(
                "If your source string is not fixed-width, try using the \"FM\" modifier.",
            ),
        )
    };
    let sign = usize::from(s.starts_with(['+', '-']));
    let digits = s[sign..].bytes().take_while(u8::is_ascii_digit).count();
    let used = if greedy {
        if digits == 0 {
            return Err(invalid("Value must be an integer.".into(), false));
        }
        sign + digits
    } else {
        let avail = s.chars().count();
        if avail < len {
            return Err(format_error(
                format!("source string too short for \"{key}\" formatting field"),
                Some(format!(
                    "Field requires {len} characters, but only {avail} remain."
                )),
                Some("If your source string is not fixed-width, try using the \"FM\" modifier."),
            ));
        }
        let within = (sign + digits).min(len);
        if within <= sign {
            return Err(invalid("Value must be an integer.".into(), false));
        }
        if within < len {
            return Err(invalid(
                format!("Field requires {len} characters, but only {within} could be parsed."),
                true,
            ));
        }
        within
    };
    let text = &s[..used];
    let value: i64 = text
        .parse()
        .map_err(|_| invalid("Value must be an integer.".into(), false))?;
    if i32::try_from(value).is_err() {
        return Err(format_error(
            format!("value for \"{key}\" in source string is out of range"),
            Some(format!(
                "Value must be in the range {} to {}.",
                i32::MIN,
                i32::MAX
            )),
            None,
        ));
    }
    *s = &s[used..];
    Ok((value, digits))
}

/// Matches one of `names` (case-insensitive) at the start of `s`; its index.
fn parse_name(s: &mut &str, key: &str, names: &[&str]) -> Result<usize, SqlError> {
    let lower = s.to_ascii_lowercase();
    for (i, n) in names.iter().enumerate() {
        if lower.starts_with(&n.to_ascii_lowercase()) {
            *s = &s[n.len()..];
            return Ok(i);
        }
    }
    let shown: String = s.split_whitespace().next().unwrap_or("").to_string();
    Err(format_error(
        format!("invalid value \"{shown}\" for \"{key}\""),
        Some("The given value did not match any of the allowed values for this field.".into()),
        None,
    ))
}

fn read(input: &str, template: &str) -> Result<Parsed, SqlError> {
    let nodes = nodes(template);
    let mut p = Parsed::default();
    let mut s = input;
    let mut extra_skip = 0usize;
    for (i, node) in nodes.iter().enumerate() {
        if s.is_empty() {
            break;
        }
        let skipped = s.len() - s.trim_start().len();
        s = s.trim_start();
        extra_skip += skipped;
        match node {
            Node::Space(_) | Node::Separator(_) => {
                extra_skip = extra_skip.saturating_sub(1);
                if let Some(c) = s.chars().next() {
                    if c.is_whitespace() || c.is_ascii() && !c.is_ascii_alphanumeric() {
                        s = &s[c.len_utf8()..];
                        extra_skip += 1;
                    }
                }
                continue;
            }
            Node::Literal(_) => {
                if extra_skip > 0 {
                    extra_skip -= 1;
                } else if let Some(c) = s.chars().next() {
                    s = &s[c.len_utf8()..];
                }
                continue;
            }
            Node::Key {
                key, fill, ordinal, ..
            } => {
                // A field followed by a non-digit (or nothing) reads all the digits there are.
                let greedy = *fill
                    || ordinal.is_some()
                    || match nodes.get(i + 1) {
                        None => true,
                        Some(Node::Key { key, .. }) => !is_digit_key(key),
                        Some(Node::Literal(c)) => !c.is_ascii_digit(),
                        Some(_) => true,
                    };
                let upper = key.to_ascii_uppercase();
                let int = |s: &mut &str, len| parse_int(s, key, len, greedy);
                match upper.as_str() {
                    "YYYY" | "IYYY" => {
                        let (v, _) = int(&mut s, 4)?;
                        p.year = Some(v);
                        p.year_digits = 4;
                    }
                    "YYY" | "IYY" | "YY" | "IY" | "Y" | "I" => {
                        let len = match upper.as_str() {
                            "YYY" | "IYY" => 3,
                            "YY" | "IY" => 2,
                            _ => 1,
                        };
                        let (v, digits) = int(&mut s, len)?;
                        p.year = Some(if digits < 4 {
                            nearest_2020(v, digits)
                        } else {
                            v
                        });
                        p.year_digits = len;
                    }
                    "Y,YYY" => {
                        let (thousands, _) = parse_int(&mut s, key, 1, true)?;
                        s = s.strip_prefix(',').unwrap_or(s);
                        let (rest, _) = parse_int(&mut s, key, 3, false)?;
                        p.year = Some(thousands * 1000 + rest);
                    }
                    "MM" => p.month = Some(int(&mut s, 2)?.0),
                    "DD" => p.mday = Some(int(&mut s, 2)?.0),
                    "DDD" | "IDDD" => p.yday = Some(int(&mut s, 3)?.0),
                    "J" => p.julian = Some(parse_int(&mut s, key, 1, true)?.0),
                    "HH" | "HH12" => {
                        p.hour = Some(int(&mut s, 2)?.0);
                        p.twelve_hour = true;
                    }
                    "HH24" => p.hour = Some(int(&mut s, 2)?.0),
                    "MI" => p.minute = int(&mut s, 2)?.0,
                    "SS" => p.second = int(&mut s, 2)?.0,
                    "SSSS" | "SSSSS" => {
                        let v = parse_int(&mut s, key, 1, true)?.0;
                        p.hour = Some(v / 3600);
                        p.minute = v / 60 % 60;
                        p.second = v % 60;
                    }
                    "MS" | "US" | "FF1" | "FF2" | "FF3" | "FF4" | "FF5" | "FF6" => {
                        let len = match upper.as_str() {
                            "MS" => 3,
                            "US" => 6,
                            f => usize::from(f.as_bytes()[2] - b'0'),
                        };
                        let before = s.len();
                        let (v, _) = int(&mut s, len)?;
                        let used = before - s.len();
                        let scale = 10i64.pow(6u32.saturating_sub(used as u32));
                        p.micros = if upper == "MS" {
                            v * 10i64.pow(3u32.saturating_sub(used as u32)) * 1000
                        } else {
                            v * scale
                        };
                    }
                    "TZH" => {
                        // The sign may have been taken for a separator: a `-` skipped just
                        // before counts (PostgreSQL's rule).
                        let negative = match s.chars().next() {
                            Some(c @ ('+' | '-' | ' ')) => {
                                s = &s[1..];
                                c == '-'
                            }
                            _ => extra_skip > 0 && input[..input.len() - s.len()].ends_with('-'),
                        };
                        let (v, _) = int(&mut s, 2)?;
                        p.tzh = Some(v);
                        p.tz_negative = negative;
                    }
                    "TZM" => p.tzm = int(&mut s, 2)?.0,
                    "AM" | "PM" => p.pm = Some(parse_name(&mut s, key, &["AM", "PM"])? == 1),
                    "A.M." | "P.M." => {
                        p.pm = Some(parse_name(&mut s, key, &["A.M.", "P.M."])? == 1)
                    }
                    "AD" | "BC" => p.bc = parse_name(&mut s, key, &["AD", "BC"])? == 1,
                    "A.D." | "B.C." => p.bc = parse_name(&mut s, key, &["A.D.", "B.C."])? == 1,
                    "MONTH" => p.month = Some(parse_name(&mut s, key, &MONTHS)? as i64 + 1),
                    "MON" => {
                        let short: Vec<&str> = MONTHS.iter().map(|m| &m[..3]).collect();
                        p.month = Some(parse_name(&mut s, key, &short)? as i64 + 1);
                    }
                    "RM" => {
                        // Longest numerals first (VIII before V).
                        let mut order: Vec<usize> = (0..12).collect();
                        order.sort_by_key(|i| std::cmp::Reverse(ROMAN[*i].len()));
                        let names: Vec<&str> = order.iter().map(|i| ROMAN[*i]).collect();
                        let found = parse_name(&mut s, key, &names)?;
                        p.month = Some(order[found] as i64 + 1);
                    }
                    "DAY" => {
                        parse_name(&mut s, key, &DAYS)?;
                    }
                    "DY" => {
                        let short: Vec<&str> = DAYS.iter().map(|d| &d[..3]).collect();
                        parse_name(&mut s, key, &short)?;
                    }
                    "D" | "ID" | "W" | "WW" | "IW" | "Q" | "CC" => {
                        int(
                            &mut s,
                            if matches!(upper.as_str(), "WW" | "IW" | "CC") {
                                2
                            } else {
                                1
                            },
                        )?;
                    }
                    "FX" => {}
                    "TZ" | "OF" => {
                        return Err(SqlError::UnsupportedByPostgres {
                            message: format!(
                                "formatting field \"{key}\" is only supported in to_char"
                            ),
                        })
                    }
                    _ => return Err(SqlError::internal("to_date keyword")),
                }
                if ordinal.is_some() {
                    let lower = s.to_ascii_lowercase();
                    if ["st", "nd", "rd", "th"]
                        .iter()
                        .any(|x| lower.starts_with(x))
                    {
                        s = &s[2..];
                    }
                }
                extra_skip = s.len() - s.trim_start().len();
                s = s.trim_start();
            }
        }
    }
    Ok(p)
}

/// PostgreSQL's `adjust_partial_year_to_2020`: a year of fewer than four digits is the one
/// nearest 2020.
fn nearest_2020(year: i64, digits: usize) -> i64 {
    match digits {
        1 => year + 2000,
        2 if year < 70 => year + 2000,
        2 => year + 1900,
        3 if year < 100 => year + 2000,
        3 => year + 1000,
        _ => year,
    }
}

/// `to_date`/`to_timestamp`'s local time (microseconds since 2000-01-01) and the offset the
/// input gave (`TZH`/`TZM`), seconds east.
fn local_time(input: &str, template: &str) -> Result<(i64, Option<i64>), SqlError> {
    let p = read(input, template)?;
    let out_of_range = || SqlError::DatetimeOutOfRange {
        message: format!("date/time field value out of range: \"{input}\""),
    };
    // Astronomical year: 1 BC is 0, as PostgreSQL's default year is.
    let year = match p.year {
        Some(y) if p.bc => 1 - y,
        Some(y) => y,
        None => 0,
    };
    let days = if let Some(j) = p.julian {
        j - PG_EPOCH_JDATE
    } else if let (Some(yday), None, None) = (p.yday, p.month, p.mday) {
        days_from_civil(year, 1, 1) - UNIX_TO_PG_DAYS + yday - 1
    } else {
        let month = p.month.unwrap_or(1);
        let mday = p.mday.unwrap_or(1);
        if !(1..=12).contains(&month)
            || mday < 1
            || mday > i64::from(crate::datetime::days_in_month(year, month as u32))
        {
            return Err(out_of_range());
        }
        days_from_civil(year, month as u32, mday as u32) - UNIX_TO_PG_DAYS
    };
    let mut hour = p.hour.unwrap_or(0);
    if p.twelve_hour {
        if !(1..=12).contains(&hour) {
            return Err(format_error(
                format!("hour \"{hour}\" is invalid for the 12-hour clock"),
                None,
                Some("Use the 24-hour clock, or give an hour between 1 and 12."),
            ));
        }
        hour %= 12;
    }
    if p.pm == Some(true) && hour < 12 {
        hour += 12;
    }
    if !(0..=24).contains(&hour) || !(0..=59).contains(&p.minute) || !(0..=60).contains(&p.second) {
        return Err(out_of_range());
    }
    let time = ((hour * 60 + p.minute) * 60 + p.second) * 1_000_000 + p.micros;
    let offset = p.tzh.map(|h| {
        let east = h * 3600 + p.tzm * 60;
        if p.tz_negative {
            -east
        } else {
            east
        }
    });
    Ok((days * USECS_PER_DAY + time, offset))
}

/// `to_date(text, template)`: days since 2000-01-01.
pub fn to_date(input: &str, template: &str) -> Result<i64, SqlError> {
    Ok(local_time(input, template)?.0.div_euclid(USECS_PER_DAY))
}

/// `to_timestamp(text, template)`: the instant, read in the session's zone unless the input
/// gave an offset.
pub fn to_timestamp(input: &str, template: &str) -> Result<i64, SqlError> {
    let (local, offset) = local_time(input, template)?;
    Ok(match offset {
        Some(east) => local - east * 1_000_000,
        None => crate::tz::session().to_utc(local),
    })
}

#[cfg(test)]
mod parse_tests {
    use super::*;

    fn date(input: &str, template: &str) -> String {
        let d = to_date(input, template).expect("parses");
        crate::types::format_text(
            &crate::types::Value::Date(d as i32),
            crate::types::PgType::Date,
        )
        .unwrap_or_default()
    }

    #[test]
    fn templates_read_as_postgres_reads_them() {
        assert_eq!(date("5", "MM"), "0001-05-01 BC");
        assert_eq!(date("04/07/2020", "DD/MM/YYYY"), "2020-07-04");
        assert_eq!(date("20200704", "YYYYMMDD"), "2020-07-04");
        assert_eq!(date("July 4, 2020", "Month DD, YYYY"), "2020-07-04");
        assert_eq!(date("4 jul 20", "DD mon YY"), "2020-07-04");
        assert_eq!(date("99", "YY"), "1999-01-01");
        assert_eq!(date("069", "YYY"), "2069-01-01");
        assert_eq!(date("202007", "YYYYMMDD"), "2020-07-01");
        assert_eq!(date("  2020   07 04", "YYYY MM DD"), "2020-07-04");
        assert_eq!(date("44 BC", "YYYY BC"), "0044-01-01 BC");
        assert_eq!(date("2020-200", "YYYY-DDD"), "2020-07-18");
        assert_eq!(date("2459035", "J"), "2020-07-04");
        assert!(to_date("2020-13-01", "YYYY-MM-DD").is_err());
        assert!(to_date("2020x07x04", "YYYY-MM-DD").is_err());
    }
}
