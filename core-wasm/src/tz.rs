//! Time zones: the session's `TimeZone` setting (names of the IANA database compiled into the
//! core, fixed offsets, POSIX strings), the offset a zone has at an instant, and PostgreSQL's
//! reading of a local time in a zone.
//!
//! Values keep UTC (`timestamptz`) or a zone-less local time (`timestamp`); the zone only
//! matters where PostgreSQL consults its session zone: text input and output of timestamptz,
//! conversions between the two timestamp types and `date`, and the calendar fields and
//! arithmetic of a timestamptz. The zone of the statement being run is held per thread
//! ([`enter`]), as the core runs one statement at a time.

use std::cell::RefCell;
use std::rc::Rc;

use jiff::tz::{AmbiguousOffset, Offset, TimeZone};

const USECS_PER_SEC: i64 = 1_000_000;
/// Microseconds between 1970-01-01 and PostgreSQL's epoch 2000-01-01.
const UNIX_TO_PG_USECS: i64 = 946_684_800 * USECS_PER_SEC;
/// 400 Gregorian years: calendars and zone rules repeat after it.
const CYCLE_USECS: i64 = 146_097 * 86_400 * USECS_PER_SEC;

/// A time zone as the session names it.
#[derive(Debug, Clone)]
pub struct Zone {
    /// The setting's value as `SHOW TimeZone` prints it.
    name: String,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    /// The default, read without a lookup.
    Utc,
    /// Seconds east of UTC (offsets up to a week: more than the zone database allows).
    Fixed(i32),
    Rules(TimeZone),
}

impl Zone {
    pub fn utc() -> Zone {
        Zone {
            name: "Etc/UTC".into(),
            kind: Kind::Utc,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn is_utc(&self) -> bool {
        matches!(self.kind, Kind::Utc)
    }

    /// Seconds east of UTC at the instant `utc` (microseconds since 2000-01-01 UTC).
    pub fn offset_at(&self, utc: i64) -> i32 {
        match &self.kind {
            Kind::Utc => 0,
            Kind::Fixed(east) => *east,
            Kind::Rules(tz) => tz.to_offset(instant(utc)).seconds(),
        }
    }

    /// The offset (seconds east), abbreviation and daylight-saving flag the zone has at `utc`
    /// (`pg_timezone_names`).
    pub fn info_at(&self, utc: i64) -> (i32, String, bool) {
        match &self.kind {
            Kind::Utc => (0, "UTC".into(), false),
            Kind::Fixed(east) => {
                // PostgreSQL names a fixed offset's zone by the offset (`-08`, `+05:30`).
                let mut abbrev = String::new();
                crate::types::push_offset(&mut abbrev, *east);
                (*east, abbrev, false)
            }
            Kind::Rules(tz) => {
                let info = tz.to_offset_info(instant(utc));
                (
                    info.offset().seconds(),
                    info.abbreviation().to_string(),
                    info.dst().is_dst(),
                )
            }
        }
    }

    /// The local time the zone shows at `utc`; infinities stay.
    pub fn to_local(&self, utc: i64) -> i64 {
        if is_infinite(utc) {
            return utc;
        }
        utc.saturating_add(i64::from(self.offset_at(utc)) * USECS_PER_SEC)
    }

    /// The instant of local time `local` in this zone. A time skipped by a spring-forward
    /// transition takes the offset before it, a time repeated by a fall-back transition the
    /// offset after it (`DetermineTimeZoneOffset`).
    pub fn to_utc(&self, local: i64) -> i64 {
        if is_infinite(local) {
            return local;
        }
        local.saturating_sub(i64::from(self.local_offset(local)) * USECS_PER_SEC)
    }

    /// The offset [`Zone::to_utc`] applies to local time `local`.
    pub fn local_offset(&self, local: i64) -> i32 {
        let tz = match &self.kind {
            Kind::Utc => return 0,
            Kind::Fixed(east) => return *east,
            Kind::Rules(tz) => tz,
        };
        let (shifted, _) = into_range(local);
        let civil = Offset::UTC.to_datetime(unix(shifted));
        match tz.to_ambiguous_timestamp(civil).offset() {
            AmbiguousOffset::Unambiguous { offset } => offset.seconds(),
            AmbiguousOffset::Gap { before, .. } => before.seconds(),
            AmbiguousOffset::Fold { after, .. } => after.seconds(),
        }
    }
}

fn is_infinite(t: i64) -> bool {
    t == i64::MAX || t == i64::MIN
}

/// `t` moved by whole 400-year cycles into the years the zone database can represent, with
/// the number of cycles moved (zone rules past the tables repeat with the calendar).
fn into_range(t: i64) -> (i64, i64) {
    // Years 0002..9998 in PostgreSQL-epoch microseconds, with a day's margin for offsets.
    const LOW: i64 = -(1998 * 365 + 484) * 86_400 * USECS_PER_SEC;
    const HIGH: i64 = (7998 * 365 + 1939) * 86_400 * USECS_PER_SEC;
    if (LOW..HIGH).contains(&t) {
        return (t, 0);
    }
    let cycles = if t < LOW {
        (LOW - t + CYCLE_USECS - 1) / CYCLE_USECS
    } else {
        -((t - HIGH) / CYCLE_USECS + 1)
    };
    (t + cycles * CYCLE_USECS, cycles)
}

fn unix(t: i64) -> jiff::Timestamp {
    // into_range keeps `t` well inside jiff's span, so this cannot fail.
    jiff::Timestamp::from_microsecond(t + UNIX_TO_PG_USECS).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

fn instant(utc: i64) -> jiff::Timestamp {
    unix(into_range(utc).0)
}

/// Why a `TimeZone` value was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ZoneError {
    /// Not a zone name, a number of hours or a POSIX zone string: PostgreSQL's 22023.
    Unknown,
    /// An offset of a week or more.
    OffsetOutOfRange,
}

/// A zone name as PostgreSQL's `pg_tzset` reads it: a name of the zone database (any case;
/// shown as the database spells it), else a POSIX zone string (`UTC+3`, `<+03>-3`).
pub fn by_name(raw: &str) -> Result<Zone, ZoneError> {
    let name = raw;
    if name.is_empty() || name.len() > 255 {
        return Err(ZoneError::Unknown);
    }
    // jiff's placeholder for a zone it could not find is not a zone PostgreSQL knows.
    let known = |tz: &TimeZone| !tz.is_unknown() && !name.eq_ignore_ascii_case("Etc/Unknown");
    if let Some(tz) = jiff::tz::db().get(name).ok().filter(known) {
        let shown = tz.iana_name().unwrap_or(name).to_string();
        return Ok(Zone {
            name: shown,
            kind: Kind::Rules(tz),
        });
    }
    // A POSIX string needs a zone name of three letters or more, or one in <>.
    let plausible =
        name.starts_with('<') || name.chars().take_while(char::is_ascii_alphabetic).count() >= 3;
    match TimeZone::posix(name) {
        Ok(tz) if plausible => Ok(Zone {
            name: name.to_string(),
            kind: Kind::Rules(tz),
        }),
        _ => Err(ZoneError::Unknown),
    }
}

/// The zone `SET TIME ZONE <hours>` and `SET TIME ZONE INTERVAL '…'` make: a fixed offset
/// `east` seconds from UTC, named as PostgreSQL's `pg_tzset_offset` names it (`<-08>+08`).
pub fn fixed(east: i32) -> Result<Zone, ZoneError> {
    if east.unsigned_abs() >= 168 * 3600 {
        return Err(ZoneError::OffsetOutOfRange);
    }
    // The offset as ISO writes it, then in POSIX's sign (west positive).
    let mut iso = String::new();
    crate::types::push_offset(&mut iso, east);
    let posix = if east < 0 { '+' } else { '-' };
    let name = format!("<{iso}>{posix}{}", &iso[1..]);
    Ok(Zone {
        name,
        kind: Kind::Fixed(east),
    })
}

/// The zone of `AT TIME ZONE` and `timezone(zone, …)` (`timestamptz_zone`): an abbreviation,
/// a zone name, an offset in POSIX's sign (`'+05'` is five hours west), or an interval east.
pub fn for_at_time_zone(v: &crate::types::Value) -> Result<Zone, crate::error::SqlError> {
    use crate::error::SqlError;
    use crate::types::Value;
    match v {
        Value::Interval(iv) => {
            if iv.months != 0 || iv.days != 0 {
                return Err(SqlError::InvalidParameter {
                    message: format!(
                        "interval time zone \"{}\" must not include months or days",
                        crate::types::format_text(v, crate::types::PgType::Interval)
                            .unwrap_or_default()
                    ),
                });
            }
            fixed((iv.micros / USECS_PER_SEC) as i32).map_err(|_| not_recognized(v))
        }
        Value::Text(name) => {
            match crate::tzabbrev::lookup(name) {
                Some(crate::tzabbrev::Abbrev::Fixed(east)) => {
                    return fixed(east).map_err(|_| not_recognized(v))
                }
                Some(crate::tzabbrev::Abbrev::Zone(z)) => {
                    return by_name(z).map_err(|_| not_recognized(v))
                }
                None => {}
            }
            if let Ok(z) = by_name(name) {
                return Ok(z);
            }
            // POSIX's sign: `+05` is five hours west.
            signed_hms(name)
                .and_then(|west| fixed(-west).ok())
                .ok_or_else(|| not_recognized(v))
        }
        _ => Err(not_recognized(v)),
    }
}

/// An ISO offset past PostgreSQL's ±15:59:59.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetOutOfRange;

/// A numeric UTC offset with its sign as PostgreSQL's `DecodeTimezone` reads it (`+5`, `-08`,
/// `+0530`, `+05:30`, `+053015`, `-05:30:15`), seconds east; `None` when `text` is not one.
pub fn iso_offset(text: &str) -> Option<Result<i32, OffsetOutOfRange>> {
    let (sign, digits) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let parts: Vec<&str> = if digits.contains(':') {
        digits.split(':').collect()
    } else if matches!(digits.len(), 4 | 6) {
        (0..digits.len())
            .step_by(2)
            .map(|i| &digits[i..i + 2])
            .collect()
    } else {
        vec![digits]
    };
    let field = |p: &&str| {
        (!p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse::<i32>().ok())
            .flatten()
    };
    let n: Vec<i32> = parts.iter().map(field).collect::<Option<_>>()?;
    let [h, m, s] = match n.as_slice() {
        [h] => [*h, 0, 0],
        [h, m] => [*h, *m, 0],
        [h, m, s] => [*h, *m, *s],
        _ => return None,
    };
    Some(if h > 15 || m > 59 || s > 59 {
        Err(OffsetOutOfRange)
    } else {
        Ok(sign * (h * 3600 + m * 60 + s))
    })
}

/// The zone of `make_timestamptz(…, zone)` (`parse_sane_timezone`): a number with its sign
/// is an offset east of UTC (ISO's sign, unlike `AT TIME ZONE`'s), up to ±15:59:59; anything
/// else as [`for_at_time_zone`].
pub fn for_make_timestamptz(name: &str) -> Result<Zone, crate::error::SqlError> {
    use crate::error::SqlError;
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(SqlError::InvalidParameterHint {
            message: format!("invalid input syntax for type numeric time zone: \"{name}\""),
            hint: "Numeric time zones must have \"-\" or \"+\" as first character.".into(),
        });
    }
    match iso_offset(name) {
        Some(Ok(east)) => {
            return fixed(east).map_err(|_| not_recognized(&crate::types::Value::text(name)))
        }
        Some(Err(OffsetOutOfRange)) => {
            return Err(SqlError::InvalidParameter {
                message: format!("numeric time zone \"{name}\" out of range"),
            })
        }
        None => {}
    }
    for_at_time_zone(&crate::types::Value::text(name))
}

/// `[+-]hh[:mm[:ss]]` in seconds, with its sign.
fn signed_hms(s: &str) -> Option<i32> {
    let (sign, rest) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => (1, s),
    };
    let mut secs = 0i32;
    let mut scale = 3600;
    for (i, part) in rest.split(':').enumerate() {
        if i > 2 || part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        secs += part.parse::<i32>().ok()? * scale;
        scale /= 60;
    }
    Some(sign * secs)
}

fn not_recognized(v: &crate::types::Value) -> crate::error::SqlError {
    let shown = crate::types::format_text(v, crate::types::PgType::Text).unwrap_or_default();
    crate::error::SqlError::InvalidParameter {
        message: format!("time zone \"{shown}\" not recognized"),
    }
}

/// The names of the zone database (`pg_timezone_names`).
pub fn names() -> Vec<String> {
    jiff::tz::db()
        .available()
        .map(|n| n.as_str().to_string())
        .collect()
}

thread_local! {
    static UTC: Rc<Zone> = Rc::new(Zone::utc());
    static SESSION: RefCell<Rc<Zone>> = RefCell::new(UTC.with(Rc::clone));
    static NOW: std::cell::Cell<Option<i64>> = const { std::cell::Cell::new(None) };
    /// The zone last resolved from a setting's value, reused while sessions keep it.
    static RESOLVED: RefCell<Option<Rc<Zone>>> = const { RefCell::new(None) };
}

/// The default zone, UTC (shared).
pub fn utc() -> Rc<Zone> {
    UTC.with(Rc::clone)
}

/// The zone of a stored `TimeZone` setting: a name [`fixed`] gave, or one [`by_name`] takes
/// (the only values `SET` stores). `Err` only for a stored value that is neither.
pub fn for_setting(name: &str) -> Result<Rc<Zone>, crate::error::SqlError> {
    if name == "Etc/UTC" {
        return Ok(utc());
    }
    if let Some(z) = RESOLVED.with(|r| r.borrow().clone().filter(|z| z.name == name)) {
        return Ok(z);
    }
    let zone = fixed_by_name(name)
        .or_else(|_| by_name(name))
        .map(Rc::new)
        .map_err(|_| {
            crate::error::SqlError::internal(format!("stored TimeZone {name:?} does not resolve"))
        })?;
    RESOLVED.with(|r| *r.borrow_mut() = Some(zone.clone()));
    Ok(zone)
}

/// A name [`fixed`] gave (`<+05:30>-05:30`), read back.
fn fixed_by_name(name: &str) -> Result<Zone, ZoneError> {
    let east = name
        .strip_prefix('<')
        .and_then(|n| n.split_once('>'))
        .and_then(|(inner, _)| signed_hms(inner).filter(|_| inner.starts_with(['+', '-'])))
        .ok_or(ZoneError::Unknown)?;
    fixed(east)
}

/// The zone (and the transaction's time) statements of the current thread read until the
/// guard drops.
pub struct Entered {
    previous: Rc<Zone>,
    previous_now: Option<i64>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.previous.clone();
        SESSION.with(|s| *s.borrow_mut() = previous);
        NOW.with(|n| n.set(self.previous_now));
    }
}

/// Makes `zone` the session zone until the returned guard drops; `now` is the time date/time
/// input's `'now'` and `'today'` mean (the transaction's start), `None` outside a statement.
pub fn enter(zone: Rc<Zone>, now: Option<i64>) -> Entered {
    let previous = SESSION.with(|s| std::mem::replace(&mut *s.borrow_mut(), zone));
    let previous_now = NOW.with(|n| n.replace(now));
    Entered {
        previous,
        previous_now,
    }
}

/// The time `'now'` means in date/time input, if a statement is running.
pub fn statement_now() -> Option<i64> {
    NOW.with(std::cell::Cell::get)
}

/// The zone of the statement being run.
pub fn session() -> Rc<Zone> {
    SESSION.with(|s| s.borrow().clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3_600 * USECS_PER_SEC;

    fn local(s: &str) -> i64 {
        crate::types::parse_timestamp(s, false).expect("timestamp")
    }

    #[test]
    fn names_are_found_in_any_case_and_shown_as_the_database_spells_them() {
        assert_eq!(
            by_name("america/new_york").map(|z| z.name).as_deref(),
            Ok("America/New_York")
        );
        assert_eq!(by_name("est").map(|z| z.name).as_deref(), Ok("EST"));
        assert_eq!(by_name("UTC+3").map(|z| z.name).as_deref(), Ok("UTC+3"));
        assert_eq!(by_name("<+03>-3").map(|z| z.name).as_deref(), Ok("<+03>-3"));
        assert!(by_name("foo/bar").is_err());
        assert!(by_name("").is_err());
        // PostgreSQL reads the value as given: no trimming.
        assert!(by_name(" UTC").is_err());
        assert_eq!(by_name("utc").map(|z| z.name).as_deref(), Ok("UTC"));
        assert!(by_name("Z").is_err());
        assert!(by_name("Etc/Unknown").is_err());
    }

    #[test]
    fn fixed_offsets_are_named_as_postgres_names_them() {
        let name = |east| fixed(east).map(|z| z.name);
        assert_eq!(name(-8 * 3600).as_deref(), Ok("<-08>+08"));
        assert_eq!(name(5 * 3600).as_deref(), Ok("<+05>-05"));
        assert_eq!(name(5 * 3600 + 1800).as_deref(), Ok("<+05:30>-05:30"));
        assert_eq!(
            fixed_by_name("<+05:30>-05:30").map(|z| z.offset_at(0)),
            Ok(19_800)
        );
        assert_eq!(
            fixed_by_name("<-08>+08").map(|z| z.offset_at(0)),
            Ok(-28_800)
        );
        assert_eq!(
            name(167 * 3600 + 3564).as_deref(),
            Ok("<+167:59:24>-167:59:24")
        );
        assert_eq!(name(-168 * 3600).err(), Some(ZoneError::OffsetOutOfRange));
        assert_eq!(name(0).as_deref(), Ok("<+00>-00"));
    }

    #[test]
    fn numeric_offsets_are_read_as_decode_timezone_reads_them() {
        assert_eq!(iso_offset("+5"), Some(Ok(18_000)));
        assert_eq!(iso_offset("-0530"), Some(Ok(-19_800)));
        assert_eq!(iso_offset("+05:30:15"), Some(Ok(19_815)));
        assert_eq!(iso_offset("+053015"), Some(Ok(19_815)));
        assert_eq!(iso_offset("+16"), Some(Err(OffsetOutOfRange)));
        assert_eq!(iso_offset("+05:60"), Some(Err(OffsetOutOfRange)));
        assert_eq!(iso_offset("5"), None);
        assert_eq!(iso_offset("+05x"), None);
        assert_eq!(iso_offset("+12345678"), None);
    }

    #[test]
    fn gaps_take_the_offset_before_and_folds_the_offset_after() {
        let ny = by_name("America/New_York").expect("zone");
        // 2018-03-11 02:30 does not exist: read with -05, it is 03:30 -04.
        assert_eq!(
            ny.to_utc(local("2018-03-11 02:30")),
            local("2018-03-11 07:30")
        );
        // 2018-11-04 01:30 happens twice: the second time, -05.
        assert_eq!(
            ny.to_utc(local("2018-11-04 01:30")),
            local("2018-11-04 06:30")
        );
        assert_eq!(
            ny.to_local(local("2020-07-01 16:00")),
            local("2020-07-01 12:00")
        );
    }

    #[test]
    fn rules_continue_past_the_tables_and_the_years_the_database_spans() {
        let ny = by_name("America/New_York").expect("zone");
        assert_eq!(ny.offset_at(local("2050-07-01 16:00")), -4 * 3600);
        assert_eq!(ny.offset_at(local("12050-07-01 16:00")), -4 * 3600);
        assert_eq!(ny.offset_at(local("12050-01-01 16:00")), -5 * 3600);
        assert_eq!(
            ny.to_utc(local("3000-01-01 00:00")),
            local("3000-01-01 00:00") + 5 * HOUR
        );
        // Local mean time before standard zones (-04:56:02).
        assert_eq!(ny.offset_at(local("1880-01-01 05:00")), -17_762);
        assert_eq!(
            ny.offset_at(local("1880-01-01 05:00") - 60 * CYCLE_USECS),
            -17_762
        );
        assert_eq!(ny.to_local(i64::MAX), i64::MAX);
    }
}
