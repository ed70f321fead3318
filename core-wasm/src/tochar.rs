//! `to_char(timestamp | timestamptz | interval, text)`: PostgreSQL's date/time formatting
//! templates (`formatting.c`'s DCH keywords) with the `FM` and `TM` prefixes and the `TH`/`th`
//! suffixes; quoted text and backslash escapes are copied. A timestamptz is formatted in the
//! session's zone, with its abbreviation (`TZ`) and offset (`OF`, `TZH`, `TZM`).

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
    SqlError::InvalidFormat {
        message: "invalid format specification for an interval value".into(),
        hint: Some("Intervals are not tied to specific calendar dates.".into()),
    }
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
    let mut rest = template;
    while !rest.is_empty() {
        let mut fill = false;
        let mut translated = false;
        loop {
            if let Some(r) = rest.strip_prefix("FM").or_else(|| rest.strip_prefix("fm")) {
                fill = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("TM").or_else(|| rest.strip_prefix("tm")) {
                // Names in the session's language (PostgreSQL's C locale: English), unpadded.
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
            let is_name = matches!(key.to_ascii_uppercase().as_str(), "DAY" | "MONTH");
            keyword(&mut out, key, &f, fill || translated && is_name, ordinal)?;
            continue;
        }
        let mut chars = rest.chars();
        match chars.next() {
            Some('"') => {
                // Quoted text, with backslash escapes, up to the closing quote.
                let mut it = chars;
                while let Some(c) = it.next() {
                    match c {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = it.next() {
                                out.push(n);
                            }
                        }
                        c => out.push(c),
                    }
                }
                rest = it.as_str();
            }
            Some('\\') => {
                match chars.next() {
                    Some(n) => out.push(n),
                    None => out.push('\\'),
                }
                rest = chars.as_str();
            }
            Some(c) => {
                out.push(c);
                rest = chars.as_str();
            }
            None => break,
        }
    }
    Ok(out)
}

/// Writes `n` zero-padded to `width` (one more for a negative number), or plain in fill mode,
/// with an ordinal suffix if asked.
fn number(out: &mut String, n: i64, width: usize, fill: bool, ordinal: Option<bool>) {
    let width = if fill {
        0
    } else if n < 0 {
        width + 1
    } else {
        width
    };
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
        (y, week, isodow)
    };
    let yday = || f.days - (days_from_civil(f.year, 1, 1) - UNIX_TO_PG_DAYS) + 1;
    let wday = (f.days + 6).rem_euclid(7); // 0 is Sunday
    let calendar_only = matches!(
        upper.as_str(),
        "DAY"
            | "DY"
            | "MONTH"
            | "MON"
            | "RM"
            | "D"
            | "ID"
            | "DDD"
            | "IDDD"
            | "IW"
            | "IYYY"
            | "IYY"
            | "IY"
            | "I"
            | "WW"
            | "W"
            | "J"
    );
    if f.interval && calendar_only && matches!(upper.as_str(), "DAY" | "DY" | "MONTH" | "MON") {
        return Err(interval_error());
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
            number(out, cc, 2, fill, ordinal);
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
        "Y,YYY" => out.push_str(&format!("{},{:03}", year / 1000, year % 1000)),
        "YYYY" => number(out, year, 4, fill, ordinal),
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
