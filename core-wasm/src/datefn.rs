//! PostgreSQL's date/time functions over broken-down fields: `age`, `justify_hours`,
//! `justify_days`, `justify_interval`, `make_date`, `make_time`, `make_timestamp`,
//! `make_interval`, `date_bin`. Timestamps are local times here (a timestamptz is converted
//! by the caller through the session's zone, as PostgreSQL's `timestamp2tm` does).

use crate::error::SqlError;
use crate::types::{civil_from_days, days_from_civil, Interval};

const USECS_PER_DAY: i64 = 86_400_000_000;
const UNIX_TO_PG_DAYS: i64 = 10_957;

fn out_of_range(what: &str) -> SqlError {
    SqlError::DatetimeOutOfRange {
        message: format!("{what} out of range"),
    }
}

fn days_in_month(y: i64, m: i64) -> i64 {
    crate::datetime::days_in_month(y, m as u32).into()
}

/// Broken-down local time: (year, month, day, microseconds of the day).
fn fields(t: i64) -> (i64, i64, i64, i64) {
    let (y, m, d) = civil_from_days(t.div_euclid(USECS_PER_DAY) + UNIX_TO_PG_DAYS);
    (y, m.into(), d.into(), t.rem_euclid(USECS_PER_DAY))
}

/// `age(a, b)`: the difference in years, months and days of the calendar, then time
/// (`timestamp_age`): a negative field borrows from the next, days from the month of the
/// earlier-listed value when `a < b`, else of `b`.
pub fn age(a: i64, b: i64) -> Result<Interval, SqlError> {
    if [a, b].iter().any(|t| *t == i64::MAX || *t == i64::MIN) {
        return Err(SqlError::DatetimeOutOfRange {
            message: "cannot subtract infinite timestamps".into(),
        });
    }
    let (y1, m1, d1, t1) = fields(a);
    let (y2, m2, d2, t2) = fields(b);
    let sign = if a < b { -1 } else { 1 };
    let mut time = sign * (t1 - t2);
    let mut day = sign * (d1 - d2);
    let mut month = sign * (m1 - m2);
    let mut year = sign * (y1 - y2);
    while time < 0 {
        time += USECS_PER_DAY;
        day -= 1;
    }
    while day < 0 {
        day += if a < b {
            days_in_month(y1, m1)
        } else {
            days_in_month(y2, m2)
        };
        month -= 1;
    }
    while month < 0 {
        month += 12;
        year -= 1;
    }
    let months = i32::try_from(sign * (year * 12 + month)).map_err(|_| out_of_range("interval"))?;
    let days = i32::try_from(sign * day).map_err(|_| out_of_range("interval"))?;
    Ok(Interval {
        months,
        days,
        micros: sign * time,
    })
}

/// Days and time of one sign: a day borrowed or lent to the time part.
fn same_sign(days: i64, micros: i64) -> (i64, i64) {
    if days > 0 && micros < 0 {
        (days - 1, micros + USECS_PER_DAY)
    } else if days < 0 && micros > 0 {
        (days + 1, micros - USECS_PER_DAY)
    } else {
        (days, micros)
    }
}

/// `justify_hours`: whole days of the time part into days.
pub fn justify_hours(iv: Interval) -> Result<Interval, SqlError> {
    let whole = iv.micros / USECS_PER_DAY;
    let micros = iv.micros - whole * USECS_PER_DAY;
    let days = i64::from(iv.days) + whole;
    let (days, micros) = same_sign(days, micros);
    Ok(Interval {
        months: iv.months,
        days: i32::try_from(days).map_err(|_| out_of_range("interval"))?,
        micros,
    })
}

/// `justify_days`: whole 30-day months of the days into months.
pub fn justify_days(iv: Interval) -> Result<Interval, SqlError> {
    let whole = iv.days / 30;
    let mut days = iv.days - whole * 30;
    let mut months = i64::from(iv.months) + i64::from(whole);
    if months > 0 && days < 0 {
        days += 30;
        months -= 1;
    } else if months < 0 && days > 0 {
        days -= 30;
        months += 1;
    }
    Ok(Interval {
        months: i32::try_from(months).map_err(|_| out_of_range("interval"))?,
        days,
        micros: iv.micros,
    })
}

/// `justify_interval`: both, with one sign across the fields.
pub fn justify_interval(iv: Interval) -> Result<Interval, SqlError> {
    let mut months = i64::from(iv.months);
    let mut days = i64::from(iv.days);
    let mut micros = iv.micros;
    if (days > 0 && micros > 0) || (days < 0 && micros < 0) {
        let whole = days / 30;
        days -= whole * 30;
        months += whole;
    }
    let whole = micros / USECS_PER_DAY;
    micros -= whole * USECS_PER_DAY;
    days += whole;
    let whole = days / 30;
    days -= whole * 30;
    months += whole;
    if months > 0 && (days < 0 || (days == 0 && micros < 0)) {
        days += 30;
        months -= 1;
    } else if months < 0 && (days > 0 || (days == 0 && micros > 0)) {
        days -= 30;
        months += 1;
    }
    (days, micros) = same_sign(days, micros);
    Ok(Interval {
        months: i32::try_from(months).map_err(|_| out_of_range("interval"))?,
        days: i32::try_from(days).map_err(|_| out_of_range("interval"))?,
        micros,
    })
}

/// `make_date(year, month, day)`: a negative year is BC; days since 2000-01-01.
pub fn make_date(year: i64, month: i64, day: i64) -> Result<i64, SqlError> {
    let bad = || SqlError::DatetimeOutOfRange {
        message: format!("date field value out of range: {year}-{month:02}-{day:02}"),
    };
    if year == 0 || !(1..=12).contains(&month) {
        return Err(bad());
    }
    // 44 BC is the astronomical year -43.
    let y = if year < 0 { year + 1 } else { year };
    if !(1..=days_in_month(y, month)).contains(&day) {
        return Err(bad());
    }
    let days = days_from_civil(y, month as u32, day as u32) - UNIX_TO_PG_DAYS;
    // PostgreSQL's dates start at Julian day 0 (4714-11-24 BC) and end in 5874897.
    if days + 2_451_545 < 0 || y > 5_874_897 {
        return Err(SqlError::DatetimeOutOfRange {
            message: format!("date out of range: {y}-{month:02}-{day:02}"),
        });
    }
    Ok(days)
}

/// `make_time(hour, min, sec)`: microseconds since midnight.
pub fn make_time(hour: i64, min: i64, sec: f64) -> Result<i64, SqlError> {
    let micros = (sec * 1_000_000.0).round_ties_even();
    let ok = (0..=24).contains(&hour)
        && (0..=59).contains(&min)
        && (0.0..=60_000_000.0).contains(&micros)
        && (hour < 24 || (min == 0 && micros == 0.0));
    if !ok {
        return Err(SqlError::DatetimeOutOfRange {
            message: format!("time field value out of range: {hour:02}:{min:02}:{sec:09.6}")
                .replace(".000000", ""),
        });
    }
    Ok((hour * 60 + min) * 60_000_000 + micros as i64)
}

/// `make_interval(years, months, weeks, days, hours, mins, secs)`.
pub fn make_interval(f: [i64; 6], secs: f64) -> Result<Interval, SqlError> {
    let [years, months, weeks, days, hours, mins] = f;
    let range = || out_of_range("interval");
    let months = years
        .checked_mul(12)
        .and_then(|y| y.checked_add(months))
        .and_then(|m| i32::try_from(m).ok())
        .ok_or_else(range)?;
    let days = weeks
        .checked_mul(7)
        .and_then(|w| w.checked_add(days))
        .and_then(|d| i32::try_from(d).ok())
        .ok_or_else(range)?;
    let secs = (secs * 1_000_000.0).round();
    if !secs.is_finite() || secs.abs() > 9.2e18 {
        return Err(range());
    }
    let micros = hours
        .checked_mul(3_600_000_000)
        .and_then(|h| h.checked_add(mins.checked_mul(60_000_000)?))
        .and_then(|t| t.checked_add(secs as i64))
        .ok_or_else(range)?;
    Ok(Interval {
        months,
        days,
        micros,
    })
}

/// `date_bin(stride, source, origin)`: the start of the stride-wide bin (counted from
/// `origin`) that holds `source`.
pub fn date_bin(stride: Interval, source: i64, origin: i64) -> Result<i64, SqlError> {
    if stride.months != 0 {
        return Err(SqlError::UnsupportedByPostgres {
            message: "timestamps cannot be binned into intervals containing months or years".into(),
        });
    }
    let width = i64::from(stride.days)
        .checked_mul(USECS_PER_DAY)
        .and_then(|d| d.checked_add(stride.micros))
        .ok_or_else(|| out_of_range("interval"))?;
    if width <= 0 {
        return Err(SqlError::DatetimeOutOfRange {
            message: "stride must be greater than zero".into(),
        });
    }
    if origin == i64::MAX || origin == i64::MIN {
        return Err(SqlError::DatetimeOutOfRange {
            message: "origin out of range".into(),
        });
    }
    if source == i64::MAX || source == i64::MIN {
        return Ok(source);
    }
    let diff = source
        .checked_sub(origin)
        .ok_or_else(|| out_of_range("interval"))?;
    // PostgreSQL truncates toward zero, then steps back one bin for a source before origin.
    let mut bin = diff - diff % width;
    if diff < 0 && diff % width != 0 {
        bin -= width;
    }
    origin
        .checked_add(bin)
        .ok_or_else(|| out_of_range("timestamp"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> i64 {
        crate::types::parse_timestamp(s, false).expect("timestamp")
    }

    fn iv(months: i32, days: i32, micros: i64) -> Interval {
        Interval {
            months,
            days,
            micros,
        }
    }

    #[test]
    fn age_borrows_as_postgres_does() {
        let h = 3_600_000_000;
        assert_eq!(
            age(ts("2001-04-10"), ts("1957-06-13")),
            Ok(iv(43 * 12 + 9, 27, 0))
        );
        assert_eq!(
            age(ts("1957-06-13"), ts("2001-04-10")),
            Ok(iv(-(43 * 12 + 9), -27, 0))
        );
        assert_eq!(
            age(ts("2020-03-01 01:00"), ts("2020-01-31 03:00")),
            Ok(iv(1, 0, 22 * h))
        );
    }

    #[test]
    fn justify_moves_whole_units_up() {
        let h = 3_600_000_000;
        assert_eq!(justify_hours(iv(0, 0, 27 * h)), Ok(iv(0, 1, 3 * h)));
        assert_eq!(justify_days(iv(0, 35, 0)), Ok(iv(1, 5, 0)));
        assert_eq!(justify_interval(iv(1, -1, 0)), Ok(iv(0, 29, 0)));
        assert_eq!(justify_interval(iv(0, 0, -27 * h)), Ok(iv(0, -1, -3 * h)));
    }

    #[test]
    fn makers_check_their_fields() {
        assert_eq!(make_date(2020, 2, 29), Ok(ts("2020-02-29") / USECS_PER_DAY));
        assert!(make_date(2021, 2, 29).is_err());
        assert!(make_date(0, 1, 1).is_err());
        assert_eq!(
            make_time(12, 30, 1.5),
            Ok((12 * 60 + 30) * 60_000_000 + 1_500_000)
        );
        assert!(make_time(25, 0, 0.0).is_err());
        assert_eq!(
            date_bin(
                iv(0, 0, 15 * 60_000_000),
                ts("2020-02-11 15:44:17"),
                ts("2001-01-01")
            ),
            Ok(ts("2020-02-11 15:30:00"))
        );
        assert_eq!(
            date_bin(
                iv(0, 0, 15 * 60_000_000),
                ts("2000-12-31 23:50:00"),
                ts("2001-01-01")
            ),
            Ok(ts("2000-12-31 23:45:00"))
        );
    }
}
