//! Date and time arithmetic, truncation and field extraction with PostgreSQL's rules. The
//! session time zone is always UTC (RockLake refuses others), so `timestamp` and `timestamptz`
//! compute alike and differ only in their type and text form.

use crate::error::SqlError;
use crate::types::{civil_from_days, days_from_civil, Interval, PgType, Value};

const USECS_PER_SEC: i64 = 1_000_000;
const USECS_PER_DAY: i64 = 86_400_000_000;
/// Days from 1970-01-01 to 2000-01-01 (PostgreSQL's epoch).
const UNIX_TO_PG_DAYS: i64 = 10_957;
/// PostgreSQL's Julian day of 2000-01-01.
const PG_EPOCH_JDATE: i64 = 2_451_545;
/// PostgreSQL's timestamp range: 4714-11-24 BC 00:00 up to (excluding) 294277-01-01.
pub(crate) const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
pub(crate) const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;
/// PostgreSQL's date range in days since 2000-01-01: Julian day 0 up to 5874898-01-01.
const MIN_DATE: i64 = -PG_EPOCH_JDATE;
const END_DATE: i64 = 2_147_483_494 - PG_EPOCH_JDATE;

fn out_of_range(what: &'static str) -> SqlError {
    SqlError::DatetimeOutOfRange {
        message: format!("{what} out of range"),
    }
}

/// `timestamp`/`timestamptz` ± `interval` as PostgreSQL's `timestamp_pl_interval`: months
/// move the calendar month (the day clamped to the month's last), then days, then time.
pub fn timestamp_add(ts: i64, iv: Interval, subtract: bool) -> Result<i64, SqlError> {
    if ts == i64::MAX || ts == i64::MIN {
        return Ok(ts);
    }
    let iv = if subtract { interval_neg(iv)? } else { iv };
    let mut days = ts.div_euclid(USECS_PER_DAY);
    let time = ts.rem_euclid(USECS_PER_DAY);
    if iv.months != 0 {
        let (y, m, d) = civil_from_days(days + UNIX_TO_PG_DAYS);
        let months = y * 12 + i64::from(m) - 1 + i64::from(iv.months);
        let (y, m) = (months.div_euclid(12), months.rem_euclid(12) as u32 + 1);
        days = days_from_civil(y, m, d.min(days_in_month(y, m))) - UNIX_TO_PG_DAYS;
    }
    days += i64::from(iv.days);
    let out = days
        .checked_mul(USECS_PER_DAY)
        .and_then(|x| x.checked_add(time))
        .and_then(|x| x.checked_add(iv.micros))
        .filter(|x| (MIN_TIMESTAMP..END_TIMESTAMP).contains(x));
    out.ok_or_else(|| out_of_range("timestamp"))
}

/// `timestamptz ± interval` as PostgreSQL's `timestamptz_pl_interval`: the months, then the
/// days move the local time in `zone` (each result read back in the zone), the time part the
/// instant.
pub fn timestamptz_add(
    ts: i64,
    iv: Interval,
    subtract: bool,
    zone: &crate::tz::Zone,
) -> Result<i64, SqlError> {
    if ts == i64::MAX || ts == i64::MIN || zone.is_utc() {
        return timestamp_add(ts, iv, subtract);
    }
    let iv = if subtract { interval_neg(iv)? } else { iv };
    let mut t = ts;
    for calendar in [
        Interval {
            months: iv.months,
            ..Interval::default()
        },
        Interval {
            days: iv.days,
            ..Interval::default()
        },
    ] {
        if calendar != Interval::default() {
            t = zone.to_utc(timestamp_add(zone.to_local(t), calendar, false)?);
        }
    }
    t.checked_add(iv.micros)
        .filter(|x| (MIN_TIMESTAMP..END_TIMESTAMP).contains(x))
        .ok_or_else(|| out_of_range("timestamp"))
}

/// A timestamp or time rounded to `precision` fractional digits of seconds, halves away from
/// zero (`AdjustTimestampForTypmod`); infinities stay.
pub fn round_to_precision(v: Value, precision: i64) -> Value {
    let Ok(p) = u32::try_from(precision) else {
        return v;
    };
    let scale = 10i64.pow(6 - p.min(6));
    let round = |t: i64| {
        let r = (t.abs() + scale / 2) / scale * scale;
        if t < 0 {
            -r
        } else {
            r
        }
    };
    match v {
        Value::Timestamp(t) if t == i64::MAX || t == i64::MIN => v,
        Value::Timestamp(t) => Value::Timestamp(round(t)),
        Value::Time(t) => Value::Time(round(t)),
        other => other,
    }
}

pub(crate) fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `date ± integer` (days), range-checked as PostgreSQL's `date_pli`.
pub fn date_add_days(d: i32, n: i64) -> Result<i32, SqlError> {
    let r = i64::from(d) + n;
    if !(MIN_DATE..END_DATE).contains(&r) {
        return Err(out_of_range("date"));
    }
    i32::try_from(r).map_err(|_| out_of_range("date"))
}

/// `timestamp - timestamp`: the difference in days and time (PostgreSQL's `justify_hours`,
/// never months).
pub fn timestamp_diff(x: i64, y: i64) -> Result<Interval, SqlError> {
    if [x, y].iter().any(|t| *t == i64::MAX || *t == i64::MIN) {
        return Err(SqlError::DatetimeOutOfRange {
            message: "cannot subtract infinite timestamps".into(),
        });
    }
    let d = x.checked_sub(y).ok_or_else(|| out_of_range("interval"))?;
    Ok(Interval {
        months: 0,
        days: i32::try_from(d / USECS_PER_DAY).map_err(|_| out_of_range("interval"))?,
        micros: d % USECS_PER_DAY,
    })
}

pub fn interval_neg(iv: Interval) -> Result<Interval, SqlError> {
    Ok(Interval {
        months: iv
            .months
            .checked_neg()
            .ok_or_else(|| out_of_range("interval"))?,
        days: iv
            .days
            .checked_neg()
            .ok_or_else(|| out_of_range("interval"))?,
        micros: iv
            .micros
            .checked_neg()
            .ok_or_else(|| out_of_range("interval"))?,
    })
}

/// `interval ± interval`, field by field.
pub fn interval_add(a: Interval, b: Interval, subtract: bool) -> Result<Interval, SqlError> {
    let b = if subtract { interval_neg(b)? } else { b };
    Ok(Interval {
        months: a
            .months
            .checked_add(b.months)
            .ok_or_else(|| out_of_range("interval"))?,
        days: a
            .days
            .checked_add(b.days)
            .ok_or_else(|| out_of_range("interval"))?,
        micros: a
            .micros
            .checked_add(b.micros)
            .ok_or_else(|| out_of_range("interval"))?,
    })
}

/// Rounds to microseconds, as PostgreSQL's `TSROUND`.
fn ts_round(x: f64) -> f64 {
    (x * 1e6).round_ties_even() / 1e6
}

/// `interval * factor` (and `/ divisor` as the factor's inverse) as PostgreSQL 15's
/// `interval_mul`: whole months and days scale, their fractions cascade into days and time.
pub fn interval_scale(iv: Interval, factor: f64, divide: bool) -> Result<Interval, SqlError> {
    if divide && factor == 0.0 {
        return Err(SqlError::DivisionByZero);
    }
    let scale = |x: f64| if divide { x / factor } else { x * factor };
    let fit = |x: f64| -> Result<i32, SqlError> {
        if x.is_nan() || x < f64::from(i32::MIN) || x > f64::from(i32::MAX) {
            return Err(out_of_range("interval"));
        }
        Ok(x as i32)
    };
    let months_f = scale(f64::from(iv.months));
    let months = fit(months_f)?;
    let days_f = scale(f64::from(iv.days));
    let mut days = fit(days_f)?;
    let month_remainder_days = ts_round((months_f - f64::from(months)) * 30.0);
    let mut sec_remainder = ts_round(
        (days_f - f64::from(days) + month_remainder_days - month_remainder_days.trunc()) * 86_400.0,
    );
    if sec_remainder.abs() >= 86_400.0 {
        let whole = (sec_remainder / 86_400.0).trunc();
        days = days
            .checked_add(fit(whole)?)
            .ok_or_else(|| out_of_range("interval"))?;
        sec_remainder -= whole * 86_400.0;
    }
    days = days
        .checked_add(fit(month_remainder_days.trunc())?)
        .ok_or_else(|| out_of_range("interval"))?;
    let micros = (scale(iv.micros as f64) + sec_remainder * 1e6).round_ties_even();
    if micros.is_nan() || micros < i64::MIN as f64 || micros >= i64::MAX as f64 {
        return Err(out_of_range("interval"));
    }
    Ok(Interval {
        months,
        days,
        micros: micros as i64,
    })
}

/// A unit name of `date_trunc` / `extract`, lower-cased, with PostgreSQL's aliases folded.
fn unit(name: &str) -> Option<&'static str> {
    Some(match name.to_ascii_lowercase().as_str() {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "useconds" => "microseconds",
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "mseconds" => "milliseconds",
        "second" | "seconds" | "s" | "sec" | "secs" => "second",
        "minute" | "minutes" | "m" | "min" | "mins" => "minute",
        "hour" | "hours" | "h" | "hr" | "hrs" => "hour",
        "day" | "days" | "d" => "day",
        "week" | "weeks" | "w" => "week",
        "month" | "months" | "mon" | "mons" => "month",
        "quarter" | "qtr" => "quarter",
        "year" | "years" | "y" | "yr" | "yrs" => "year",
        "decade" | "decades" | "dec" | "decs" => "decade",
        "century" | "centuries" | "c" | "cent" => "century",
        "millennium" | "millennia" | "mil" | "mils" | "millenniums" => "millennium",
        "dow" => "dow",
        "isodow" => "isodow",
        "doy" => "doy",
        "isoyear" => "isoyear",
        "epoch" => "epoch",
        "julian" | "j" | "jd" => "julian",
        "timezone" => "timezone",
        "timezone_h" | "timezone_hour" => "timezone_hour",
        "timezone_m" | "timezone_minute" => "timezone_minute",
        _ => return None,
    })
}

fn not_recognized(name: &str, ty: PgType) -> SqlError {
    SqlError::InvalidParameter {
        message: format!(
            "unit \"{}\" not recognized for type {}",
            name.to_ascii_lowercase(),
            ty.sql_name()
        ),
    }
}

fn not_supported(name: &str, ty: PgType) -> SqlError {
    SqlError::UnsupportedByPostgres {
        message: format!(
            "unit \"{}\" not supported for type {}",
            name.to_ascii_lowercase(),
            ty.sql_name()
        ),
    }
}

/// The year `extract` reports: there is no year 0, so astronomical year 0 is 1 BC (-1).
fn bc_year(y: i64) -> i64 {
    if y > 0 {
        y
    } else {
        y - 1
    }
}

/// `date_trunc(unit, timestamptz)`: truncated in the session's local time. Units of a day and
/// longer read the result back in the zone; shorter ones keep the offset the value had
/// (`timestamptz_trunc_internal`).
pub fn trunc_timestamptz(name: &str, ts: i64) -> Result<i64, SqlError> {
    trunc_timestamptz_in(name, ts, &crate::tz::session())
}

/// [`trunc_timestamptz`] in `zone` (`date_trunc(unit, ts, zone)`).
pub fn trunc_timestamptz_in(name: &str, ts: i64, zone: &crate::tz::Zone) -> Result<i64, SqlError> {
    if zone.is_utc() || ts == i64::MAX || ts == i64::MIN {
        return trunc_timestamp(name, ts, PgType::Timestamptz);
    }
    let offset = i64::from(zone.offset_at(ts)) * USECS_PER_SEC;
    let local = trunc_timestamp(name, ts + offset, PgType::Timestamptz)?;
    Ok(match unit(name) {
        Some("microseconds" | "milliseconds" | "second" | "minute" | "hour") => local - offset,
        _ => zone.to_utc(local),
    })
}

/// `date_trunc(unit, timestamp)`; `ty` is the argument's type, named in errors.
pub fn trunc_timestamp(name: &str, ts: i64, ty: PgType) -> Result<i64, SqlError> {
    let u = unit(name).ok_or_else(|| not_recognized(name, ty))?;
    if ts == i64::MAX || ts == i64::MIN {
        return Ok(ts);
    }
    let days = ts.div_euclid(USECS_PER_DAY);
    let time = ts.rem_euclid(USECS_PER_DAY);
    let (y, m, _) = civil_from_days(days + UNIX_TO_PG_DAYS);
    let to_day =
        |y: i64, m: u32, d: u32| (days_from_civil(y, m, d) - UNIX_TO_PG_DAYS) * USECS_PER_DAY;
    let year_start = |y: i64| to_day(y, 1, 1);
    // PostgreSQL's arithmetic on the astronomical year (0 is 1 BC).
    let py = y;
    Ok(match u {
        "microseconds" => ts,
        "milliseconds" => days * USECS_PER_DAY + time - time % 1_000,
        "second" => days * USECS_PER_DAY + time - time % USECS_PER_SEC,
        "minute" => days * USECS_PER_DAY + time - time % 60_000_000,
        "hour" => days * USECS_PER_DAY + time - time % 3_600_000_000,
        "day" => days * USECS_PER_DAY,
        // Monday of the ISO week.
        "week" => (days - (days + 5).rem_euclid(7)) * USECS_PER_DAY,
        "month" => to_day(y, m, 1),
        "quarter" => to_day(y, 3 * ((m - 1) / 3) + 1, 1),
        "year" => to_day(y, 1, 1),
        "decade" => year_start(if py > 0 {
            (py / 10) * 10
        } else {
            -((8 - (py - 1)) / 10) * 10
        }),
        "century" => year_start(if py > 0 {
            ((py + 99) / 100) * 100 - 99
        } else {
            -((99 - (py - 1)) / 100) * 100 + 1
        }),
        "millennium" => year_start(if py > 0 {
            ((py + 999) / 1000) * 1000 - 999
        } else {
            -((999 - (py - 1)) / 1000) * 1000 + 1
        }),
        _ => return Err(not_recognized(name, ty)),
    })
}

/// `date_trunc(unit, interval)`.
pub fn trunc_interval(name: &str, iv: Interval) -> Result<Interval, SqlError> {
    let u = unit(name).ok_or_else(|| not_recognized(name, PgType::Interval))?;
    let t = iv.micros;
    let keep_time = |step: i64| Interval {
        micros: t - t % step,
        ..iv
    };
    Ok(match u {
        "microseconds" => iv,
        "milliseconds" => keep_time(1_000),
        "second" => keep_time(USECS_PER_SEC),
        "minute" => keep_time(60_000_000),
        "hour" => keep_time(3_600_000_000),
        "day" => Interval { micros: 0, ..iv },
        "month" | "quarter" | "year" | "decade" | "century" | "millennium" => {
            let step = match u {
                "month" => 1,
                "quarter" => 3,
                "year" => 12,
                "decade" => 120,
                "century" => 1_200,
                _ => 12_000,
            };
            Interval {
                months: iv.months - iv.months % step,
                days: 0,
                micros: 0,
            }
        }
        _ => return Err(not_supported(name, PgType::Interval)),
    })
}

/// An integer or `value / 10^scale` as a numeric.
fn numeric(v: i64, scale: usize) -> Value {
    Value::Numeric(crate::numeric::scaled_decimal(i128::from(v), scale))
}

/// ISO 8601 week number and week-based year of a date (days since 2000-01-01).
fn iso_week(days: i64) -> (i64, i64) {
    let isodow = (days + 5).rem_euclid(7) + 1;
    // The Thursday of this ISO week decides the year.
    let thursday = days - isodow + 4;
    let (y, _, _) = civil_from_days(thursday + UNIX_TO_PG_DAYS);
    let jan1 = days_from_civil(y, 1, 1) - UNIX_TO_PG_DAYS;
    ((thursday - jan1) / 7 + 1, y)
}

/// The calendar fields of a date every source type shares.
fn date_field(u: &str, days: i64) -> Option<Value> {
    let (y, m, d) = civil_from_days(days + UNIX_TO_PG_DAYS);
    let py = y;
    let n = |v: i64| Some(numeric(v, 0));
    match u {
        "day" => n(d.into()),
        "month" => n(m.into()),
        "quarter" => n(((m - 1) / 3 + 1).into()),
        "year" => n(bc_year(y)),
        "decade" => n(if py >= 0 {
            py / 10
        } else {
            -((8 - (py - 1)) / 10)
        }),
        "century" => n(if py > 0 {
            (py + 99) / 100
        } else {
            -((99 - (py - 1)) / 100)
        }),
        "millennium" => n(if py > 0 {
            (py + 999) / 1000
        } else {
            -((999 - (py - 1)) / 1000)
        }),
        "week" => n(iso_week(days).0),
        "isoyear" => n(bc_year(iso_week(days).1)),
        "dow" => n((days + 6).rem_euclid(7)),
        "isodow" => n((days + 5).rem_euclid(7) + 1),
        "doy" => n(days - (days_from_civil(y, 1, 1) - UNIX_TO_PG_DAYS) + 1),
        _ => None,
    }
}

/// `extract(unit FROM value)`: a numeric, as PostgreSQL 14 and later give it. `ty` is the
/// source's type (it decides which units exist and names it in errors).
pub fn extract(name: &str, v: &Value, ty: PgType) -> Result<Value, SqlError> {
    let u = unit(name).ok_or_else(|| not_recognized(name, ty))?;
    Ok(match v {
        Value::Null => Value::Null,
        Value::Date(d) => {
            let days = i64::from(*d);
            match u {
                "epoch" => numeric((days + UNIX_TO_PG_DAYS) * 86_400, 0),
                "julian" => numeric(days + PG_EPOCH_JDATE, 0),
                _ => date_field(u, days).ok_or_else(|| not_supported(name, ty))?,
            }
        }
        // PostgreSQL 14+: infinity for the fields that grow with time, NULL for the others.
        Value::Timestamp(ts @ (i64::MAX | i64::MIN)) => match u {
            "epoch" | "julian" | "year" | "isoyear" | "decade" | "century" | "millennium" => {
                Value::Numeric(if *ts > 0 { "Infinity" } else { "-Infinity" }.into())
            }
            "timezone" | "timezone_hour" | "timezone_minute" if ty != PgType::Timestamptz => {
                return Err(not_supported(name, ty))
            }
            _ => Value::Null,
        },
        Value::Timestamp(utc) => {
            // A timestamptz's fields are those of its local time in the session's zone.
            let east = if ty == PgType::Timestamptz {
                crate::tz::session().offset_at(*utc)
            } else {
                0
            };
            let ts = &(utc + i64::from(east) * USECS_PER_SEC);
            let days = ts.div_euclid(USECS_PER_DAY);
            let time = ts.rem_euclid(USECS_PER_DAY);
            let sec_us = time % 60_000_000;
            match u {
                "microseconds" => numeric(sec_us, 0),
                "milliseconds" => numeric(sec_us, 3),
                "second" => numeric(sec_us, 6),
                "minute" => numeric((time / 60_000_000) % 60, 0),
                "hour" => numeric(time / 3_600_000_000, 0),
                "epoch" => Value::Numeric(crate::numeric::scaled_decimal(
                    i128::from(*utc) + i128::from(UNIX_TO_PG_DAYS * USECS_PER_DAY),
                    6,
                )),
                "timezone" if ty == PgType::Timestamptz => numeric(east.into(), 0),
                "timezone_hour" if ty == PgType::Timestamptz => numeric((east / 3600).into(), 0),
                "timezone_minute" if ty == PgType::Timestamptz => {
                    numeric((east / 60 % 60).into(), 0)
                }
                "julian" => {
                    // Day number plus the fraction of the day, at PostgreSQL's division scale.
                    let frac = crate::numeric::numeric_div(&time.to_string(), "86400000000")?;
                    Value::Numeric(crate::numeric::numeric_add(
                        &(days + PG_EPOCH_JDATE).to_string(),
                        &frac,
                        false,
                    )?)
                }
                _ => date_field(u, days).ok_or_else(|| not_supported(name, ty))?,
            }
        }
        Value::Interval(iv) => {
            let t = iv.micros;
            match u {
                "microseconds" => numeric(t % 60_000_000, 0),
                "milliseconds" => numeric(t % 60_000_000, 3),
                "second" => numeric(t % 60_000_000, 6),
                "minute" => numeric((t / 60_000_000) % 60, 0),
                "hour" => numeric(t / 3_600_000_000, 0),
                "day" => numeric(iv.days.into(), 0),
                "month" => numeric((iv.months % 12).into(), 0),
                "quarter" => numeric(((iv.months % 12) / 3 + 1).into(), 0),
                "year" => numeric((iv.months / 12).into(), 0),
                "decade" => numeric((iv.months / 120).into(), 0),
                "century" => numeric((iv.months / 1_200).into(), 0),
                "millennium" => numeric((iv.months / 12_000).into(), 0),
                "epoch" => {
                    // 365.25 days a year, 30 a month, as PostgreSQL's interval epoch.
                    let years = i64::from(iv.months / 12);
                    let months = i64::from(iv.months % 12);
                    let micros = i128::from(years) * 31_557_600_000_000
                        + i128::from(months) * 30 * i128::from(USECS_PER_DAY)
                        + i128::from(iv.days) * i128::from(USECS_PER_DAY)
                        + i128::from(t);
                    let m = i64::try_from(micros).map_err(|_| out_of_range("interval"))?;
                    numeric(m, 6)
                }
                _ => return Err(not_supported(name, ty)),
            }
        }
        Value::Time(t) => match u {
            "microseconds" => numeric(t % 60_000_000, 0),
            "milliseconds" => numeric(t % 60_000_000, 3),
            "second" => numeric(t % 60_000_000, 6),
            "minute" => numeric((t / 60_000_000) % 60, 0),
            "hour" => numeric(t / 3_600_000_000, 0),
            "epoch" => numeric(*t, 6),
            _ => return Err(not_supported(name, ty)),
        },
        _ => {
            return Err(SqlError::internal("extract from a non-datetime value"));
        }
    })
}

/// `date_part(unit, value)`: [`extract`]'s units and errors, computed in double precision
/// where PostgreSQL's `date_part` does (seconds with their fraction, the Julian day, an
/// interval's epoch), so the last bit agrees with it.
pub fn date_part(name: &str, v: &Value, ty: PgType) -> Result<Value, SqlError> {
    let exact = extract(name, v, ty)?;
    match &exact {
        Value::Null => return Ok(Value::Null),
        Value::Numeric(n) if n.ends_with("Infinity") => {
            return Ok(Value::Float(n.parse().unwrap_or(f64::NAN)))
        }
        _ => {}
    }
    // Seconds of the minute and their microseconds, with C's truncating signs.
    let seconds = |u: &str, us: i64| -> f64 {
        let (s, f) = ((us / USECS_PER_SEC) as f64, (us % USECS_PER_SEC) as f64);
        match u {
            "second" => s + f / 1_000_000.0,
            "milliseconds" => s * 1_000.0 + f / 1_000.0,
            _ => s * 1_000_000.0 + f,
        }
    };
    let u = unit(name).unwrap_or_default();
    let fraction_unit = matches!(u, "second" | "milliseconds" | "microseconds");
    let local;
    let v = match v {
        Value::Timestamp(t) if ty == PgType::Timestamptz => {
            local = Value::Timestamp(crate::tz::session().to_local(*t));
            &local
        }
        other => other,
    };
    let f = match v {
        Value::Timestamp(ts) if fraction_unit => {
            seconds(u, ts.rem_euclid(USECS_PER_DAY) % 60_000_000)
        }
        Value::Timestamp(ts) if u == "julian" => {
            let days = ts.div_euclid(USECS_PER_DAY) + PG_EPOCH_JDATE;
            let time = ts.rem_euclid(USECS_PER_DAY);
            let secs = (time / USECS_PER_SEC) as f64 + (time % USECS_PER_SEC) as f64 / 1_000_000.0;
            days as f64 + secs / 86_400.0
        }
        Value::Interval(iv) if fraction_unit => seconds(u, iv.micros % 60_000_000),
        Value::Interval(iv) if u == "epoch" => {
            let mut r = iv.micros as f64 / 1_000_000.0;
            r += (365.25 * 86_400.0) * f64::from(iv.months / 12);
            r += (30.0 * 86_400.0) * f64::from(iv.months % 12);
            r + 86_400.0 * f64::from(iv.days)
        }
        Value::Time(t) if fraction_unit => seconds(u, t % 60_000_000),
        _ => match exact {
            Value::Numeric(n) => n.parse().unwrap_or(f64::NAN),
            other => return Ok(other),
        },
    };
    Ok(Value::Float(f))
}

/// `to_timestamp(double precision)`: Unix seconds to a timestamptz.
pub fn to_timestamp(secs: f64) -> Result<Value, SqlError> {
    if secs.is_nan() {
        return Err(SqlError::DatetimeOutOfRange {
            message: "timestamp cannot be NaN".into(),
        });
    }
    if secs.is_infinite() {
        return Ok(Value::Timestamp(if secs > 0.0 {
            i64::MAX
        } else {
            i64::MIN
        }));
    }
    let us = (secs * 1e6).round_ties_even() - (UNIX_TO_PG_DAYS * USECS_PER_DAY) as f64;
    if !(MIN_TIMESTAMP as f64..END_TIMESTAMP as f64).contains(&us) {
        return Err(SqlError::DatetimeOutOfRange {
            message: format!("timestamp out of range: \"{}\"", c_format_g(secs)),
        });
    }
    Ok(Value::Timestamp(us as i64))
}

/// C's `%g` (six significant digits, exponent form below 1e-4 or from 1e6), which PostgreSQL's
/// `to_timestamp` and `setseed` error messages use; PostgreSQL's own `snprintf` spells the
/// special values `NaN`, `Infinity` and `-Infinity`.
pub(crate) fn c_format_g(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-Infinity" } else { "Infinity" }.into();
    }
    if x == 0.0 {
        return format!("{x}");
    }
    let exp = x.abs().log10().floor() as i32;
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..6).contains(&exp) {
        let s = format!("{x:.5e}");
        let (mant, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant.to_string()), e.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        trim(format!("{x:.decimals$}"))
    }
}

/// The operators PostgreSQL has between date/time types (left, operator, right, result).
/// Arguments convert implicitly as PostgreSQL's do: `smallint` to `integer`, any number to
/// `double precision`, `date` to `timestamp` and `timestamp with time zone`, `timestamp`
/// to `timestamp with time zone`.
const OPERATORS: &[(PgType, char, PgType, PgType)] = {
    use PgType::{Date, Float8, Int4, Interval as Iv, Time, Timestamp as Ts, Timestamptz as Tz};
    &[
        (Date, '+', Int4, Date),
        (Int4, '+', Date, Date),
        (Date, '-', Int4, Date),
        (Date, '-', Date, Int4),
        (Date, '+', Iv, Ts),
        (Iv, '+', Date, Ts),
        (Date, '-', Iv, Ts),
        (Date, '+', Time, Ts),
        (Time, '+', Date, Ts),
        (Ts, '+', Iv, Ts),
        (Iv, '+', Ts, Ts),
        (Ts, '-', Iv, Ts),
        (Ts, '-', Ts, Iv),
        (Tz, '+', Iv, Tz),
        (Iv, '+', Tz, Tz),
        (Tz, '-', Iv, Tz),
        (Tz, '-', Tz, Iv),
        (Time, '+', Iv, Time),
        (Iv, '+', Time, Time),
        (Time, '-', Iv, Time),
        (Time, '-', Time, Iv),
        (Iv, '+', Iv, Iv),
        (Iv, '-', Iv, Iv),
        (Iv, '*', Float8, Iv),
        (Float8, '*', Iv, Iv),
        (Iv, '/', Float8, Iv),
    ]
};

/// Whether a value of type `from` converts implicitly to `to` for an operator argument.
fn implicit(from: PgType, to: PgType) -> bool {
    from == to
        || match to {
            PgType::Int4 => from == PgType::Int2,
            PgType::Float8 => from.is_numeric_family(),
            PgType::Timestamp => from == PgType::Date,
            PgType::Timestamptz => matches!(from, PgType::Date | PgType::Timestamp),
            _ => false,
        }
}

/// Resolves `l op r` when a date/time type takes part: the argument types to convert to and
/// the result type, or `None` when no operator matches. An untyped literal takes the other
/// side's type if that operator exists, else the one candidate type at its place;
/// `Err` when several remain (42725), as PostgreSQL's operator resolution.
pub fn resolve_operator(
    l: PgType,
    op: char,
    r: PgType,
) -> Result<Option<(PgType, PgType, PgType)>, SqlError> {
    let unknown = PgType::Unknown;
    let exact = |a: PgType, b: PgType| {
        OPERATORS
            .iter()
            .find(|(x, o, y, _)| *o == op && *x == a && *y == b)
            .map(|(x, _, y, out)| (*x, *y, *out))
    };
    if l == unknown || r == unknown {
        let known = if l == unknown { r } else { l };
        if let Some(found) = exact(known, known) {
            return Ok(Some(found));
        }
        // Candidates taking the known side as it is win over those that convert it.
        let known_at =
            |(x, _, y, _): &&(PgType, char, PgType, PgType)| if l == unknown { *y } else { *x };
        let on_op: Vec<_> = OPERATORS.iter().filter(|c| c.1 == op).collect();
        let mut candidates: Vec<_> = on_op
            .iter()
            .copied()
            .filter(|c| known_at(c) == known)
            .collect();
        if candidates.is_empty() {
            candidates = on_op
                .into_iter()
                .filter(|c| implicit(known, known_at(c)))
                .collect();
        }
        return match candidates.as_slice() {
            [] => Ok(None),
            [(x, _, y, out)] => Ok(Some((*x, *y, *out))),
            _ => Err(SqlError::AmbiguousFunction {
                message: format!(
                    "operator is not unique: {} {op} {}",
                    l.sql_name(),
                    r.sql_name()
                ),
            }),
        };
    }
    // The candidate with the most arguments of exactly the given types wins; ties keep the
    // first listed.
    let mut best: Option<(usize, (PgType, PgType, PgType))> = None;
    for (x, o, y, out) in OPERATORS {
        if *o == op && implicit(l, *x) && implicit(r, *y) {
            let exact = usize::from(*x == l) + usize::from(*y == r);
            if best.is_none_or(|(e, _)| exact > e) {
                best = Some((exact, (*x, *y, *out)));
            }
        }
    }
    Ok(best.map(|(_, found)| found))
}

/// Evaluates a date/time operator on values the binder converted to the operator's types.
pub fn eval_operator(op: char, a: Value, b: Value) -> Result<Value, SqlError> {
    let sub = op == '-';
    Ok(match (op, a, b) {
        ('+' | '-', Value::Date(d), Value::Int(n)) => {
            Value::Date(date_add_days(d, if sub { -n } else { n })?)
        }
        ('+', Value::Int(n), Value::Date(d)) => Value::Date(date_add_days(d, n)?),
        ('-', Value::Date(x), Value::Date(y)) => Value::Int(i64::from(x) - i64::from(y)),
        ('+' | '-', Value::Date(d), Value::Interval(iv)) => {
            Value::Timestamp(timestamp_add(i64::from(d) * USECS_PER_DAY, iv, sub)?)
        }
        ('+', Value::Interval(iv), Value::Date(d)) => {
            Value::Timestamp(timestamp_add(i64::from(d) * USECS_PER_DAY, iv, false)?)
        }
        ('+', Value::Date(d), Value::Time(t)) | ('+', Value::Time(t), Value::Date(d)) => {
            Value::Timestamp(i64::from(d) * USECS_PER_DAY + t)
        }
        ('+' | '-', Value::Timestamp(t), Value::Interval(iv)) => {
            Value::Timestamp(timestamp_add(t, iv, sub)?)
        }
        ('+', Value::Interval(iv), Value::Timestamp(t)) => {
            Value::Timestamp(timestamp_add(t, iv, false)?)
        }
        ('-', Value::Timestamp(x), Value::Timestamp(y)) => Value::Interval(timestamp_diff(x, y)?),
        ('+' | '-', Value::Time(t), Value::Interval(iv)) => {
            let d = if sub { -iv.micros } else { iv.micros };
            Value::Time((t + d).rem_euclid(USECS_PER_DAY))
        }
        ('+', Value::Interval(iv), Value::Time(t)) => {
            Value::Time((t + iv.micros).rem_euclid(USECS_PER_DAY))
        }
        ('-', Value::Time(x), Value::Time(y)) => Value::Interval(Interval {
            micros: x - y,
            ..Interval::default()
        }),
        ('+' | '-', Value::Interval(x), Value::Interval(y)) => {
            Value::Interval(interval_add(x, y, sub)?)
        }
        ('*' | '/', Value::Interval(iv), f) | ('*', f, Value::Interval(iv)) => {
            let factor = match f {
                Value::Float(x) => x,
                Value::Int(i) => i as f64,
                Value::Numeric(s) => s.parse().unwrap_or(f64::NAN),
                _ => return Err(SqlError::internal("interval factor")),
            };
            Value::Interval(interval_scale(iv, factor, op == '/')?)
        }
        _ => return Err(SqlError::internal("date/time operator")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{format_text, parse_text};

    fn ts(s: &str) -> i64 {
        match parse_text(s, PgType::Timestamp) {
            Ok(Value::Timestamp(t)) => t,
            other => panic!("{s}: {other:?}"),
        }
    }

    fn show(t: i64) -> String {
        format_text(&Value::Timestamp(t), PgType::Timestamp).unwrap_or_default()
    }

    fn iv(s: &str) -> Interval {
        match parse_text(s, PgType::Interval) {
            Ok(Value::Interval(i)) => i,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn months_move_the_calendar_and_clamp_the_day() {
        let r = timestamp_add(ts("2024-01-31 10:00"), iv("1 mon"), false).map(show);
        assert_eq!(r.as_deref(), Ok("2024-02-29 10:00:00"));
        let r = timestamp_add(ts("2024-03-31"), iv("1 mon"), true).map(show);
        assert_eq!(r.as_deref(), Ok("2024-02-29 00:00:00"));
        let r = timestamp_add(ts("2023-12-15"), iv("14 mons 2 days 01:00:00"), false).map(show);
        assert_eq!(r.as_deref(), Ok("2025-02-17 01:00:00"));
        assert!(timestamp_add(ts("294276-12-31"), iv("1 day"), false).is_err());
    }

    #[test]
    fn truncation_and_fields_follow_postgres() {
        let t = ts("2024-01-03 10:11:12.5");
        let tr = |u: &str| trunc_timestamp(u, t, PgType::Timestamp).map(show);
        assert_eq!(tr("week").as_deref(), Ok("2024-01-01 00:00:00"));
        assert_eq!(tr("quarter").as_deref(), Ok("2024-01-01 00:00:00"));
        assert_eq!(tr("minute").as_deref(), Ok("2024-01-03 10:11:00"));
        assert_eq!(tr("century").as_deref(), Ok("2001-01-01 00:00:00"));
        assert_eq!(tr("decade").as_deref(), Ok("2020-01-01 00:00:00"));
        assert!(tr("dow").is_err());
        let ex = |u: &str, v: &Value| match extract(u, v, PgType::Date) {
            Ok(Value::Numeric(s)) => s,
            other => format!("{other:?}"),
        };
        let d = |s: &str| parse_text(s, PgType::Date).unwrap_or(Value::Null);
        assert_eq!(ex("week", &d("2024-12-30")), "1");
        assert_eq!(ex("isoyear", &d("2024-12-30")), "2025");
        assert_eq!(ex("century", &d("2000-12-30")), "20");
        assert_eq!(ex("millennium", &d("2001-01-01")), "3");
        assert_eq!(ex("doy", &d("2024-12-31")), "366");
        assert_eq!(ex("isodow", &d("2024-12-29")), "7");
        assert_eq!(ex("dow", &d("2024-12-29")), "0");
        assert_eq!(ex("epoch", &d("2000-01-01")), "946684800");
        let e = extract("second", &Value::Timestamp(t), PgType::Timestamp);
        assert_eq!(e, Ok(Value::Numeric("12.500000".into())));
        let e = extract(
            "epoch",
            &Value::Interval(iv("1 year 2 mons 3 days 04:05:06.5")),
            PgType::Interval,
        );
        assert_eq!(e, Ok(Value::Numeric("37015506.500000".into())));
    }

    #[test]
    fn interval_scaling_cascades_fractions() {
        let show =
            |i: Interval| format_text(&Value::Interval(i), PgType::Interval).unwrap_or_default();
        assert_eq!(
            interval_scale(iv("1 day 02:00:00"), 1.5, false)
                .map(show)
                .as_deref(),
            Ok("1 day 15:00:00")
        );
        assert_eq!(
            interval_scale(iv("3 mons"), 7.0, true).map(show).as_deref(),
            Ok("12 days 20:34:17.1552")
        );
        assert_eq!(
            interval_scale(iv("1 day"), 0.0, true),
            Err(SqlError::DivisionByZero)
        );
    }

    #[test]
    fn operators_resolve_as_postgres() {
        use PgType::*;
        assert_eq!(
            resolve_operator(Date, '+', Int4),
            Ok(Some((Date, Int4, Date)))
        );
        assert_eq!(resolve_operator(Date, '+', Int8), Ok(None));
        assert_eq!(
            resolve_operator(Date, '-', Timestamp),
            Ok(Some((Timestamp, Timestamp, Interval)))
        );
        assert_eq!(
            resolve_operator(Timestamp, '-', Unknown),
            Ok(Some((Timestamp, Timestamp, Interval)))
        );
        assert_eq!(
            resolve_operator(Timestamp, '+', Unknown),
            Ok(Some((Timestamp, Interval, Timestamp)))
        );
        assert!(resolve_operator(Date, '+', Unknown).is_err());
        assert_eq!(
            resolve_operator(Interval, '*', Unknown),
            Ok(Some((Interval, Float8, Interval)))
        );
        assert_eq!(resolve_operator(Timestamp, '+', Int4), Ok(None));
    }
}
