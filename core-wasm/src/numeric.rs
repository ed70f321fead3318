//! Exact numeric arithmetic on PostgreSQL's decimal text form ([`crate::types::Value::Numeric`]):
//! results at the scales PostgreSQL's `numeric` operators give them.

use crate::error::SqlError;
use crate::types::numeric_canonical;

/// `a * b` over exact numbers: the product at the sum of the scales, as PostgreSQL's numeric
/// multiplication gives it; `None` past i128's 38 digits or for special values.
pub(crate) fn numeric_mul(a: &str, b: &str) -> Option<String> {
    let (neg_a, int_a, frac_a) = decimal_parts(a);
    let (neg_b, int_b, frac_b) = decimal_parts(b);
    let x: i128 = format!("0{int_a}{frac_a}").parse().ok()?;
    let y: i128 = format!("0{int_b}{frac_b}").parse().ok()?;
    let product = x.checked_mul(y)?;
    let signed = if neg_a != neg_b { -product } else { product };
    Some(scaled_decimal(signed, frac_a.len() + frac_b.len()))
}

/// `a % b` over exact numbers: `a - trunc(a / b) * b` at the larger of the two scales, with the
/// dividend's sign, as PostgreSQL's numeric modulo; `None` past i128's 38 digits or for special
/// values. The caller has refused a zero divisor.
pub(crate) fn numeric_mod(a: &str, b: &str) -> Option<String> {
    let (neg_a, int_a, frac_a) = decimal_parts(a);
    let (neg_b, int_b, frac_b) = decimal_parts(b);
    let scale = frac_a.len().max(frac_b.len());
    let scaled = |neg: bool, int: &str, frac: &str| -> Option<i128> {
        let pad = "0".repeat(scale - frac.len());
        let v: i128 = format!("0{int}{frac}{pad}").parse().ok()?;
        Some(if neg { -v } else { v })
    };
    let x = scaled(neg_a, int_a, frac_a)?;
    let y = scaled(neg_b, int_b, frac_b)?;
    let r = x.checked_rem(y)?;
    numeric_canonical(&scaled_decimal(r, scale))
}

/// A double as numeric text: NaN, ±Infinity, or its shortest decimal (a negative zero is 0).
pub(crate) fn from_f64(f: f64) -> String {
    numeric_canonical(&crate::types::fmt_float(f, false))
        .map(|s| if s == "-0" { "0".into() } else { s })
        .unwrap_or_else(|| "NaN".into())
}

/// `-a`: the sign flipped, zero (`0.00`) kept unsigned.
pub(crate) fn numeric_neg(a: &str) -> String {
    if a == "NaN" || a.bytes().all(|c| matches!(c, b'0' | b'.')) {
        a.to_string()
    } else if let Some(abs) = a.strip_prefix('-') {
        abs.to_string()
    } else {
        format!("-{a}")
    }
}

/// `v × 10^-scale` as a decimal string with exactly `scale` fraction digits.
pub(crate) fn scaled_decimal(v: i128, scale: usize) -> String {
    let mut d = v.unsigned_abs().to_string();
    while d.len() <= scale {
        d.insert(0, '0');
    }
    let (ip, fp) = d.split_at(d.len() - scale);
    let sign = if v < 0 { "-" } else { "" };
    if scale > 0 {
        format!("{sign}{ip}.{fp}")
    } else {
        format!("{sign}{ip}")
    }
}

/// A decimal string's sign, integer digits (no leading zeros) and fraction digits.
fn decimal_parts(s: &str) -> (bool, &str, &str) {
    let neg = s.starts_with('-');
    let body = s.trim_start_matches(['-', '+']);
    let (int_part, frac_part) = body.split_once('.').unwrap_or((body, ""));
    (neg, int_part.trim_start_matches('0'), frac_part)
}

/// `a / b` over exact numbers as PostgreSQL's numeric division computes it: exact long
/// division, rounded half away from zero at the scale `select_div_scale` picks (at least 16
/// significant digits, more when the quotient is below 1, never fewer fraction digits than
/// either input has). A divisor of more than 36 digits is divided in double precision.
pub(crate) fn numeric_div(a: &str, b: &str) -> Result<String, SqlError> {
    let plain = |s: &str| {
        s.bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'+'))
    };
    if !plain(a) || !plain(b) {
        // NaN and ±Infinity: PostgreSQL's rules for them are IEEE's, except that only NaN
        // may be divided by zero.
        let (x, y) = (
            a.parse::<f64>().unwrap_or(f64::NAN),
            b.parse::<f64>().unwrap_or(f64::NAN),
        );
        if y == 0.0 && !x.is_nan() {
            return Err(SqlError::DivisionByZero);
        }
        return Ok(from_f64(x / y));
    }
    let (neg_a, int_a, frac_a) = decimal_parts(a);
    let (neg_b, int_b, frac_b) = decimal_parts(b);
    let divisor_digits = format!("{int_b}{frac_b}");
    let divisor: u128 = match divisor_digits.trim_start_matches('0') {
        "" => return Err(SqlError::DivisionByZero),
        d if d.len() > 36 => {
            let q = a.parse::<f64>().unwrap_or(0.0) / b.parse::<f64>().unwrap_or(1.0);
            return Ok(numeric_canonical(&q.to_string()).unwrap_or_else(|| "0".into()));
        }
        d => d.parse().unwrap_or(1),
    };
    let scale = div_scale((int_a, frac_a), (int_b, frac_b));
    // A × 10^(scale + sb − sa + 1) / B: the quotient to one digit past the result's scale.
    let mut digits: Vec<u8> = int_a
        .bytes()
        .chain(frac_a.bytes())
        .map(|b| b - b'0')
        .collect();
    let extra = scale + frac_b.len() + 1 - frac_a.len();
    digits.extend(std::iter::repeat_n(0, extra));
    let mut quotient = Vec::with_capacity(digits.len());
    let mut rem: u128 = 0;
    for d in digits {
        // rem < divisor < 10^36, so rem * 10 + 9 fits.
        let cur = rem * 10 + u128::from(d);
        quotient.push((cur / divisor) as u8);
        rem = cur % divisor;
    }
    // Round at `scale` on the extra digit (exact: the digits past it only add to it).
    let round_up = quotient.pop().is_some_and(|d| d >= 5);
    if round_up {
        let mut i = quotient.len();
        loop {
            if i == 0 {
                quotient.insert(0, 1);
                break;
            }
            i -= 1;
            if quotient[i] == 9 {
                quotient[i] = 0;
            } else {
                quotient[i] += 1;
                break;
            }
        }
    }
    while quotient.len() <= scale {
        quotient.insert(0, 0);
    }
    let split = quotient.len() - scale;
    let ip: String = quotient[..split]
        .iter()
        .map(|d| char::from(b'0' + d))
        .collect();
    let fp: String = quotient[split..]
        .iter()
        .map(|d| char::from(b'0' + d))
        .collect();
    let ip = match ip.trim_start_matches('0') {
        "" => "0",
        t => t,
    };
    let zero = quotient.iter().all(|d| *d == 0);
    let sign = if neg_a != neg_b && !zero { "-" } else { "" };
    Ok(if scale > 0 {
        format!("{sign}{ip}.{fp}")
    } else {
        format!("{sign}{ip}")
    })
}

/// PostgreSQL's `select_div_scale` for a dividend and a divisor given as (integer digits
/// without leading zeros, fraction digits): weights and first digits are in base 10,000.
fn div_scale((int_a, frac_a): (&str, &str), (int_b, frac_b): (&str, &str)) -> usize {
    // (weight, first base-10,000 digit) of a decimal; zero has weight 0, digit 0.
    fn weight(int_part: &str, frac_part: &str) -> (i64, u32) {
        if !int_part.is_empty() {
            let lead = (int_part.len() - 1) % 4 + 1;
            let w = ((int_part.len() - 1) / 4) as i64;
            return (w, int_part[..lead].parse().unwrap_or(0));
        }
        let mut padded = frac_part.to_string();
        while !padded.len().is_multiple_of(4) {
            padded.push('0');
        }
        for (i, group) in padded.as_bytes().chunks(4).enumerate() {
            let g: u32 = std::str::from_utf8(group)
                .ok()
                .and_then(|t| t.parse().ok())
                .unwrap_or(0);
            if g != 0 {
                return (-(i as i64) - 1, g);
            }
        }
        (0, 0)
    }
    let (w1, d1) = weight(int_a, frac_a);
    let (w2, d2) = weight(int_b, frac_b);
    let mut qweight = w1 - w2;
    if d1 <= d2 {
        qweight -= 1;
    }
    let rscale = (16 - qweight * 4)
        .max(frac_a.len() as i64)
        .max(frac_b.len() as i64)
        .clamp(0, 1000);
    rscale as usize
}

pub(crate) fn numeric_add(a: &str, b: &str, sub: bool) -> String {
    // Exact addition on decimal strings via i128 with aligned scales.
    let scale_of = |s: &str| s.split_once('.').map(|x| x.1.len()).unwrap_or(0);
    let sc = scale_of(a).max(scale_of(b));
    let to_i = |s: &str| -> Option<i128> {
        let neg = s.starts_with('-');
        let body = s.trim_start_matches('-');
        let (i, f) = body.split_once('.').unwrap_or((body, ""));
        let digits = format!("{i}{f}{}", "0".repeat(sc - f.len()));
        let v: i128 = digits.parse().ok()?;
        Some(if neg { -v } else { v })
    };
    let exact = match (to_i(a), to_i(b)) {
        (Some(x), Some(y)) if sub => x.checked_sub(y),
        (Some(x), Some(y)) => x.checked_add(y),
        _ => None,
    };
    match exact {
        Some(r) => numeric_canonical(&scaled_decimal(r, sc)).unwrap_or_else(|| "0".into()),
        // Past i128's 38 digits (or NaN, ±Infinity): double precision (COMPAT).
        None => from_f64(
            a.parse::<f64>().unwrap_or(f64::NAN)
                + if sub { -1.0 } else { 1.0 } * b.parse::<f64>().unwrap_or(f64::NAN),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_sums_are_exact() {
        assert_eq!(numeric_add("0.1", "0.2", false), "0.3");
        assert_eq!(numeric_add("1.50", "-2", false), "-0.50");
        // The sum of two 38-digit numbers does not fit i128: no overflow, a double's value.
        let nines = "9".repeat(38);
        assert_eq!(
            numeric_add(&nines, &nines, false),
            format!("2{}", "0".repeat(38))
        );
        assert_eq!(numeric_add("Infinity", "-Infinity", false), "NaN");
        assert_eq!(numeric_add("1", "-Infinity", true), "Infinity");
    }

    #[test]
    fn numeric_modulo_and_negation_are_exact() {
        assert_eq!(numeric_mod("-3.125", "1").as_deref(), Some("-0.125"));
        assert_eq!(numeric_mod("1.500", "1").as_deref(), Some("0.500"));
        assert_eq!(numeric_mod("10", "3").as_deref(), Some("1"));
        assert_eq!(numeric_mod("7.5", "-2.25").as_deref(), Some("0.75"));
        assert_eq!(numeric_neg("-3.125"), "3.125");
        assert_eq!(numeric_neg("2.50"), "-2.50");
        assert_eq!(numeric_neg("0.00"), "0.00");
    }
}
