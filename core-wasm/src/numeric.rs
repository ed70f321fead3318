//! Exact numeric arithmetic on PostgreSQL's decimal text form ([`crate::types::Value::Numeric`]):
//! results at the scales PostgreSQL's `numeric` operators give them, in i128 while the digits
//! fit and in big integers past that (PostgreSQL's numeric is exact at any size, up to 131,072
//! digits before the point).

use num_bigint::{BigInt, Sign};

use crate::error::SqlError;
use crate::types::numeric_canonical;

/// `a * b` over exact numbers: the product at the sum of the scales, as PostgreSQL's numeric
/// multiplication gives it; `None` for special values (NaN, ±Infinity: IEEE's rules).
pub(crate) fn numeric_mul(a: &str, b: &str) -> Result<Option<String>, SqlError> {
    if !plain(a) || !plain(b) {
        return Ok(None);
    }
    let (neg_a, int_a, frac_a) = decimal_parts(a);
    let (neg_b, int_b, frac_b) = decimal_parts(b);
    let scale = frac_a.len() + frac_b.len();
    let small = |int: &str, frac: &str| format!("0{int}{frac}").parse::<i128>().ok();
    let sign = |v: BigInt| if neg_a != neg_b { -v } else { v };
    if let (Some(x), Some(y)) = (small(int_a, frac_a), small(int_b, frac_b)) {
        if let Some(product) = x.checked_mul(y) {
            let signed = if neg_a != neg_b { -product } else { product };
            return Ok(Some(scaled_decimal(signed, scale)));
        }
    }
    let product = sign(unsigned_big(int_a, frac_a) * unsigned_big(int_b, frac_b));
    big_decimal(&product, scale).map(Some)
}

/// `a % b` over exact numbers: `a - trunc(a / b) * b` at the larger of the two scales, with the
/// dividend's sign, as PostgreSQL's numeric modulo; `None` for special values. The caller has
/// refused a zero divisor.
pub(crate) fn numeric_mod(a: &str, b: &str) -> Result<Option<String>, SqlError> {
    if !plain(a) || !plain(b) {
        return Ok(None);
    }
    let (neg_a, int_a, frac_a) = decimal_parts(a);
    let (neg_b, int_b, frac_b) = decimal_parts(b);
    let scale = frac_a.len().max(frac_b.len());
    let scaled = |neg: bool, int: &str, frac: &str| -> BigInt {
        let v = unsigned_big(int, frac) * pow10(scale - frac.len());
        if neg {
            -v
        } else {
            v
        }
    };
    let x = scaled(neg_a, int_a, frac_a);
    let y = scaled(neg_b, int_b, frac_b);
    if y.sign() == Sign::NoSign {
        return Err(SqlError::DivisionByZero);
    }
    // BigInt's `%` truncates toward zero: the dividend's sign, as PostgreSQL's.
    let r = big_decimal(&(x % y), scale)?;
    Ok(Some(numeric_canonical(&r).unwrap_or(r)))
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

/// Digits before the point PostgreSQL's numeric holds (NUMERIC_WEIGHT_MAX's); more is 22003.
const MAX_INTEGER_DIGITS: usize = 131_072;

/// A plain decimal (no NaN or ±Infinity).
fn plain(s: &str) -> bool {
    s.bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'+'))
}

/// The digits `int` then `frac` as one unsigned integer.
fn unsigned_big(int: &str, frac: &str) -> BigInt {
    let digits = format!("0{int}{frac}");
    BigInt::parse_bytes(digits.as_bytes(), 10).unwrap_or_default()
}

fn pow10(n: usize) -> BigInt {
    num_bigint::BigUint::from(10u8).pow(n as u32).into()
}

/// `v × 10^-scale` as a decimal string with exactly `scale` fraction digits; 22003 past
/// PostgreSQL's numeric range.
fn big_decimal(v: &BigInt, scale: usize) -> Result<String, SqlError> {
    let mut d = v.magnitude().to_str_radix(10);
    if d.len() > scale + MAX_INTEGER_DIGITS {
        return Err(SqlError::NumericOverflow);
    }
    while d.len() <= scale {
        d.insert(0, '0');
    }
    let (ip, fp) = d.split_at(d.len() - scale);
    let sign = if v.sign() == Sign::Minus { "-" } else { "" };
    Ok(if scale > 0 {
        format!("{sign}{ip}.{fp}")
    } else {
        format!("{sign}{ip}")
    })
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
    if !plain(a) || !plain(b) {
        return special_quotient(a, b).map(from_f64);
    }
    let (neg_a, int_a, frac_a) = decimal_parts(a);
    let (neg_b, int_b, frac_b) = decimal_parts(b);
    let divisor_digits = format!("{int_b}{frac_b}");
    let scale = div_scale((int_a, frac_a), (int_b, frac_b));
    let divisor: u128 = match divisor_digits.trim_start_matches('0') {
        "" => return Err(SqlError::DivisionByZero),
        d if d.len() > 36 => {
            // A × 10^(scale + sb − sa + 1) / B in big integers: the quotient to one digit
            // past the result's scale, rounded half away from zero on it.
            let extra = scale + frac_b.len() + 1 - frac_a.len();
            let q = unsigned_big(int_a, frac_a) * pow10(extra) / unsigned_big(int_b, frac_b);
            let (q, last) = (&q / BigInt::from(10u8), &q % BigInt::from(10u8));
            let q = if last >= BigInt::from(5u8) {
                q + 1u8
            } else {
                q
            };
            let q = if neg_a != neg_b { -q } else { q };
            return big_decimal(&q, scale);
        }
        d => d.parse().unwrap_or(1),
    };
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

/// `sqrt(numeric)` as PostgreSQL's: rounded half away from zero at the scale that gives at
/// least 16 significant digits (never fewer fraction digits than the argument has, at most
/// 1,000); NaN and Infinity are their own roots.
pub(crate) fn numeric_sqrt(a: &str) -> Result<String, SqlError> {
    let negative = || SqlError::MathDomain {
        code: "2201F",
        message: "cannot take square root of a negative number".into(),
    };
    match a {
        "NaN" | "Infinity" => return Ok(a.to_string()),
        "-Infinity" => return Err(negative()),
        _ => {}
    }
    let (neg, int, frac) = decimal_parts(a);
    let digits = unsigned_big(int, frac);
    if neg && digits.sign() != Sign::NoSign {
        return Err(negative());
    }
    let (w, _) = weight(int, frac);
    let rscale = (16 - ((w + 1) * 2 - 1))
        .max(frac.len() as i64)
        .clamp(0, 1000) as usize;
    sqrt_at(int, frac, rscale)
}

/// The scale `a / b` is computed at (PostgreSQL's `select_div_scale`); both plain decimals.
pub(crate) fn numeric_div_scale(a: &str, b: &str) -> usize {
    let (_, int_a, frac_a) = decimal_parts(a);
    let (_, int_b, frac_b) = decimal_parts(b);
    div_scale((int_a, frac_a), (int_b, frac_b))
}

/// The square root of a plain, non-negative decimal at `rscale` fraction digits, rounded half
/// away from zero (PostgreSQL's `sqrt_var`, as `stddev` calls it at the variance's scale).
pub(crate) fn numeric_sqrt_at(a: &str, rscale: usize) -> Result<String, SqlError> {
    let (_, int, frac) = decimal_parts(a);
    sqrt_at(int, frac, rscale.max(frac.len()))
}

fn sqrt_at(int: &str, frac: &str, rscale: usize) -> Result<String, SqlError> {
    let digits = unsigned_big(int, frac);
    // √(A × 10^-sa) to one digit past `rscale`: ⌊√(A × 10^(2(rscale + 1) − sa))⌋ (the
    // exponent is positive and even in effect: rscale ≥ sa), then rounded on that digit.
    let n = digits * pow10(2 * (rscale + 1) - frac.len());
    let root = n.sqrt();
    let ten = BigInt::from(10u8);
    let (q, last) = (&root / &ten, &root % &ten);
    let q = if last >= BigInt::from(5u8) {
        q + 1u8
    } else {
        q
    };
    big_decimal(&q, rscale)
}

/// (weight, first base-10,000 digit) of a decimal given as integer digits without leading
/// zeros and fraction digits, as PostgreSQL's numeric stores it; zero has weight 0, digit 0.
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

/// PostgreSQL's `select_div_scale` for a dividend and a divisor given as (integer digits
/// without leading zeros, fraction digits): weights and first digits are in base 10,000.
fn div_scale((int_a, frac_a): (&str, &str), (int_b, frac_b): (&str, &str)) -> usize {
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

/// `a + b` (`a - b` when `sub`) over exact numbers, at the larger of the two scales.
pub(crate) fn numeric_add(a: &str, b: &str, sub: bool) -> Result<String, SqlError> {
    if !plain(a) || !plain(b) {
        // NaN and ±Infinity: IEEE's rules.
        return Ok(from_f64(
            a.parse::<f64>().unwrap_or(f64::NAN)
                + if sub { -1.0 } else { 1.0 } * b.parse::<f64>().unwrap_or(f64::NAN),
        ));
    }
    let (neg_a, int_a, frac_a) = decimal_parts(a);
    let (neg_b, int_b, frac_b) = decimal_parts(b);
    let neg_b = neg_b != sub;
    let sc = frac_a.len().max(frac_b.len());
    let small = |neg: bool, int: &str, frac: &str| -> Option<i128> {
        let digits = format!("0{int}{frac}{}", "0".repeat(sc - frac.len()));
        let v: i128 = digits.parse().ok()?;
        Some(if neg { -v } else { v })
    };
    let canonical = |s: String| numeric_canonical(&s).unwrap_or(s);
    if let (Some(x), Some(y)) = (small(neg_a, int_a, frac_a), small(neg_b, int_b, frac_b)) {
        if let Some(r) = x.checked_add(y) {
            return Ok(canonical(scaled_decimal(r, sc)));
        }
    }
    let big = |neg: bool, int: &str, frac: &str| -> BigInt {
        let v = unsigned_big(int, frac) * pow10(sc - frac.len());
        if neg {
            -v
        } else {
            v
        }
    };
    let sum = big(neg_a, int_a, frac_a) + big(neg_b, int_b, frac_b);
    big_decimal(&sum, sc).map(canonical)
}

// ------------------------------------------------------------------ ln, exp, log, power

/// PostgreSQL's `NUMERIC_MIN_SIG_DIGITS`, `NUMERIC_MAX_DISPLAY_SCALE`,
/// `NUMERIC_MAX_RESULT_SCALE`.
const MIN_SIG_DIGITS: i64 = 16;
const MAX_DISPLAY_SCALE: i64 = 1000;
const MAX_RESULT_SCALE: f64 = 2000.0;

/// Digits computed past a result's scale before it is rounded: PostgreSQL's transcendental
/// functions compute with guard digits and round, so the value rounded from a more precise
/// one is theirs.
const GUARD: usize = 12;

fn log_domain(message: &str) -> SqlError {
    SqlError::MathDomain {
        code: "2201E",
        message: message.into(),
    }
}

fn power_domain(message: &str) -> SqlError {
    SqlError::MathDomain {
        code: "2201F",
        message: message.into(),
    }
}

/// A plain decimal as (negative, digits as an integer, fraction digits, zero).
fn exact(a: &str) -> (bool, BigInt, usize, bool) {
    let (neg, int, frac) = decimal_parts(a);
    let digits = unsigned_big(int, frac);
    let zero = digits.sign() == Sign::NoSign;
    (neg && !zero, digits, frac.len(), zero)
}

/// `v / 10^from` rounded half away from zero to `to` fraction digits (`to <= from`).
fn round_scaled(v: &BigInt, from: usize, to: usize) -> BigInt {
    let drop = pow10(from - to);
    let half = &drop / 2u8;
    let mag = (v.magnitude().clone() + half.magnitude()) / drop.magnitude();
    BigInt::from_biguint(v.sign(), mag)
}

/// PostgreSQL's `estimate_ln_dweight`: the decimal weight of ln(x), from its first two
/// base-10,000 digits (or from x − 1 near 1).
fn estimate_ln_dweight(a: &str) -> i64 {
    let (neg, int, frac) = decimal_parts(a);
    if neg {
        return 0;
    }
    let x: f64 = a.parse().unwrap_or(0.0);
    if (0.9..=1.1).contains(&x) {
        let d = numeric_add(a, "1", true).unwrap_or_default();
        let (_, dint, dfrac) = decimal_parts(&d);
        if unsigned_big(dint, dfrac).sign() == Sign::NoSign {
            return 0;
        }
        let (w, first) = weight(dint, dfrac);
        return w * 4 + i64::from(first).ilog10() as i64;
    }
    if unsigned_big(int, frac).sign() == Sign::NoSign {
        return 0;
    }
    let (w, first) = weight(int, frac);
    // The second base-10,000 digit, when there is one.
    let second = base10000_digit(int, frac, 1);
    let (digits, dweight) = match second {
        Some(d) => (f64::from(first) * 10_000.0 + f64::from(d), w * 4 - 4),
        None => (f64::from(first), w * 4),
    };
    let ln = digits.ln() + dweight as f64 * std::f64::consts::LN_10;
    // Truncated toward zero, as C's (int) cast in PostgreSQL's.
    ln.abs().log10() as i64
}

/// The `i`th base-10,000 digit (0: the first non-zero one) of a decimal as PostgreSQL stores
/// it, or `None` past its last non-zero digit.
fn base10000_digit(int: &str, frac: &str, i: usize) -> Option<u32> {
    // Align the digits to groups of four around the decimal point.
    let lead = (4 - int.len() % 4) % 4;
    let mut all = "0".repeat(lead);
    all.push_str(int);
    all.push_str(frac);
    while !all.len().is_multiple_of(4) {
        all.push('0');
    }
    let groups: Vec<u32> = all
        .as_bytes()
        .chunks(4)
        .map(|g| {
            std::str::from_utf8(g)
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0)
        })
        .collect();
    let first = groups.iter().position(|g| *g != 0)?;
    let last = groups.iter().rposition(|g| *g != 0)?;
    let at = first + i;
    (at <= last).then(|| groups[at])
}

/// ln(x) × 10^s for x = digits × 10^-frac > 0, to within a few units of the last place.
fn ln_fixed(digits: &BigInt, frac: usize, s: usize) -> BigInt {
    // x = m × 10^k with 1 <= m < 10: ln x = ln m + k ln 10.
    let nd = digits.magnitude().to_str_radix(10).len();
    let k = nd as i64 - 1 - frac as i64;
    let kdigits = k.unsigned_abs().max(1).ilog10() as usize + 1;
    let w = s + kdigits + 8;
    let m = scale_digits(digits, nd - 1, w);
    let mut ln = ln_near_one(m, w);
    if k != 0 {
        ln += ln_near_one(pow10(w + 1), w) * k;
    }
    round_scaled(&ln, w, s)
}

/// `digits × 10^-point` at scale `w` (truncated when it has more digits).
fn scale_digits(digits: &BigInt, point: usize, w: usize) -> BigInt {
    if w >= point {
        digits * pow10(w - point)
    } else {
        digits / pow10(point - w)
    }
}

/// ln(m) × 10^w for m = M / 10^w in [1, 10]: square roots bring it near 1, then the series
/// of 2·atanh((m − 1)/(m + 1)).
fn ln_near_one(mut m: BigInt, w: usize) -> BigInt {
    let one = pow10(w);
    let limit = &one + &one / 10u8;
    let mut halvings = 0u32;
    while m > limit {
        m = (&m * &one).sqrt();
        halvings += 1;
    }
    let z = (&m - &one) * &one / (&m + &one);
    let z2 = &z * &z / &one;
    let mut sum = z.clone();
    let mut power = z;
    let mut n = 3u32;
    loop {
        power = &power * &z2 / &one;
        let term = &power / n;
        if term.sign() == Sign::NoSign {
            break;
        }
        sum += term;
        n += 2;
    }
    sum * 2u8 * (BigInt::from(1u8) << halvings)
}

/// e^y × 10^s for y = Y / 10^s, accurate to the last place of a result of decimal weight
/// at most `weight`.
fn exp_fixed(y: &BigInt, s: usize, weight: i64) -> BigInt {
    // e^y = (e^(y / 2^n))^(2^n), with |y / 2^n| < 0.01 for a short series.
    let small = pow10(s) / 100u8;
    let mut n = 0u32;
    while (y.magnitude() >> n) > *small.magnitude() {
        n += 1;
    }
    let w = s + weight.max(0) as usize + n as usize / 3 + 10;
    let one = pow10(w);
    let x = y * pow10(w - s) / (BigInt::from(1u8) << n);
    let mut sum = &one + &x;
    let mut term = x.clone();
    let mut k = 2u32;
    loop {
        term = &term * &x / &one / k;
        if term.sign() == Sign::NoSign {
            break;
        }
        sum += &term;
        k += 1;
    }
    for _ in 0..n {
        sum = &sum * &sum / &one;
    }
    round_scaled(&sum, w, s)
}

fn clamp_scale(rscale: i64) -> usize {
    rscale.clamp(0, MAX_DISPLAY_SCALE) as usize
}

/// `ln(numeric)` as PostgreSQL's: 16 significant digits (more when the argument has more
/// fraction digits), rounded half away from zero.
pub(crate) fn numeric_ln(a: &str) -> Result<String, SqlError> {
    match a {
        "NaN" | "Infinity" => return Ok(a.into()),
        "-Infinity" => return Err(log_domain("cannot take logarithm of a negative number")),
        _ => {}
    }
    let (neg, digits, frac, zero) = exact(a);
    if zero {
        return Err(log_domain("cannot take logarithm of zero"));
    }
    if neg {
        return Err(log_domain("cannot take logarithm of a negative number"));
    }
    let rscale = clamp_scale((MIN_SIG_DIGITS - estimate_ln_dweight(a)).max(frac as i64));
    let ln = ln_fixed(&digits, frac, rscale + GUARD);
    big_decimal(&round_scaled(&ln, rscale + GUARD, rscale), rscale)
}

/// `log(b, x)` (and `log(x)`, `log10(x)`: base 10) over numerics as PostgreSQL's.
pub(crate) fn numeric_log(base: &str, a: &str) -> Result<String, SqlError> {
    if !plain(base) || !plain(a) {
        return Ok("NaN".into());
    }
    for v in [base, a] {
        let (neg, _, _, zero) = exact(v);
        if zero {
            return Err(log_domain("cannot take logarithm of zero"));
        }
        if neg {
            return Err(log_domain("cannot take logarithm of a negative number"));
        }
    }
    let (_, bd, bf, _) = exact(base);
    let (_, xd, xf, _) = exact(a);
    let dweight = estimate_ln_dweight(a) - estimate_ln_dweight(base);
    let rscale = clamp_scale((MIN_SIG_DIGITS - dweight).max(bf as i64).max(xf as i64));
    // Enough digits of both logarithms for the quotient's scale.
    let s = rscale + GUARD + dweight.unsigned_abs() as usize + 20;
    let ln_base = ln_fixed(&bd, bf, s);
    if ln_base.sign() == Sign::NoSign {
        return Err(SqlError::DivisionByZero);
    }
    let ln_x = ln_fixed(&xd, xf, s);
    let q = ln_x * pow10(rscale + GUARD) / ln_base;
    big_decimal(&round_scaled(&q, rscale + GUARD, rscale), rscale)
}

/// `exp(numeric)` as PostgreSQL's: 16 significant digits (more when the argument has more
/// fraction digits); 22003 past numeric's range, 0 below it.
pub(crate) fn numeric_exp(a: &str) -> Result<String, SqlError> {
    match a {
        "NaN" | "Infinity" => return Ok(a.into()),
        "-Infinity" => return Ok("0".into()),
        _ => {}
    }
    let (neg, digits, frac, _) = exact(a);
    let x: f64 = a.parse().unwrap_or(0.0);
    let weight = x * std::f64::consts::LOG10_E;
    let clamped = weight.clamp(-MAX_RESULT_SCALE, MAX_RESULT_SCALE);
    let rscale = clamp_scale((MIN_SIG_DIGITS - clamped as i64).max(frac as i64));
    if x.abs() >= MAX_RESULT_SCALE * 3.0 {
        if x > 0.0 {
            return Err(SqlError::NumericOverflow);
        }
        return big_decimal(&BigInt::from(0u8), rscale);
    }
    exp_at(
        &if neg { -digits } else { digits },
        frac,
        rscale,
        weight.ceil() as i64,
    )
}

/// The series behind `exp` and non-integer powers work at the result's full precision; past
/// this many digits before the point they would hold the engine for minutes, so RockLake
/// refuses them (PostgreSQL computes up to 131,072).
const MAX_SERIES_WEIGHT: f64 = 10_000.0;

fn too_many_digits(weight: f64) -> Result<(), SqlError> {
    if weight > MAX_SERIES_WEIGHT {
        return Err(SqlError::feature(
            "exp() and power() results of more than 10,000 digits before the decimal point",
        ));
    }
    Ok(())
}

/// e^(y) rounded to `rscale` for y = digits × 10^-frac.
fn exp_at(digits: &BigInt, frac: usize, rscale: usize, weight: i64) -> Result<String, SqlError> {
    too_many_digits(weight as f64)?;
    let s = rscale + GUARD;
    let y = scale_digits(digits, frac, s);
    let e = exp_fixed(&y, s, weight);
    big_decimal(&round_scaled(&e, s, rscale), rscale)
}

/// `power(numeric, numeric)` as PostgreSQL's: an integer exponent multiplies (exactly, then
/// rounded at the scale giving 16 significant digits, or the base's scale); otherwise
/// exp(y · ln x) at the scale its estimated size calls for.
pub(crate) fn numeric_power(x: &str, y: &str) -> Result<String, SqlError> {
    if !plain(x) || !plain(y) {
        let (a, b) = (
            x.parse::<f64>().unwrap_or(f64::NAN),
            y.parse::<f64>().unwrap_or(f64::NAN),
        );
        return Ok(from_f64(a.powf(b)));
    }
    let (xneg, xd, xf, xzero) = exact(x);
    let (yneg, yd, yf, yzero) = exact(y);
    let y_integral = yzero || (&yd % pow10(yf)).sign() == Sign::NoSign;
    if xzero && yneg {
        return Err(power_domain("zero raised to a negative power is undefined"));
    }
    if xneg && !y_integral {
        return Err(power_domain(
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    if y_integral {
        let e = &yd / pow10(yf);
        if let Ok(e) = i32::try_from(if yneg { -e } else { e }) {
            let rscale = clamp_scale(MIN_SIG_DIGITS.max(xf as i64));
            return power_int(&xd, xf, xneg, xzero, e, rscale);
        }
    }
    if xzero {
        return big_decimal(&BigInt::from(0u8), MIN_SIG_DIGITS as usize);
    }
    let ln_estimate = x.parse::<f64>().unwrap_or(1.0).ln() * y.parse::<f64>().unwrap_or(0.0);
    if ln_estimate.abs() > MAX_RESULT_SCALE * 3.01 {
        if ln_estimate > 0.0 {
            return Err(SqlError::NumericOverflow);
        }
        return big_decimal(&BigInt::from(0u8), MAX_DISPLAY_SCALE as usize);
    }
    let weight = ln_estimate * std::f64::consts::LOG10_E;
    let rscale = clamp_scale(
        (MIN_SIG_DIGITS - weight as i64)
            .max(xf as i64)
            .max(yf as i64),
    );
    let signed_y = if yneg { -yd } else { yd };
    power_through_ln(&xd, xf, &signed_y, yf, weight, rscale)
}

/// |x|^y = e^(y · ln |x|) rounded at `rscale`, for a result of decimal weight about `weight`.
fn power_through_ln(
    xd: &BigInt,
    xf: usize,
    y: &BigInt,
    yf: usize,
    weight: f64,
    rscale: usize,
) -> Result<String, SqlError> {
    too_many_digits(weight)?;
    // y · ln x with enough digits for e^ of it to the result's scale.
    let s = rscale + GUARD + weight.max(0.0) as usize + 10;
    let ln_x = ln_fixed(xd, xf, s);
    let prod = ln_x * y / pow10(yf);
    let e = exp_fixed(&prod, s, weight.ceil() as i64);
    big_decimal(&round_scaled(&e, s, rscale), rscale)
}

/// x^e for an integer e, exact then rounded at `rscale` (a negative e divides 1 by it).
fn power_int(
    xd: &BigInt,
    xf: usize,
    xneg: bool,
    xzero: bool,
    e: i32,
    rscale: usize,
) -> Result<String, SqlError> {
    if e == 0 {
        return big_decimal(&pow10(rscale), rscale);
    }
    if xzero {
        return big_decimal(&BigInt::from(0u8), rscale);
    }
    // Past numeric's range, as PostgreSQL's estimate finds (log10 of the result, from the
    // leading digits).
    let text = xd.magnitude().to_str_radix(10);
    let lead: f64 = text[..text.len().min(15)].parse().unwrap_or(1.0);
    let log10_x = lead.log10() + text.len() as f64 - text.len().min(15) as f64 - xf as f64;
    let log10 = f64::from(e) * log10_x;
    if log10 >= MAX_INTEGER_DIGITS as f64 {
        return Err(SqlError::NumericOverflow);
    }
    let n = e.unsigned_abs();
    let digits_needed = n as usize * text.len();
    if digits_needed > 200_000 {
        // Too many digits to multiply out exactly: through ln and exp, with the sign of an
        // odd power of a negative base.
        let r = power_through_ln(xd, xf, &BigInt::from(e), 0, log10, rscale)?;
        return Ok(
            if xneg && e % 2 != 0 && r.bytes().any(|b| matches!(b, b'1'..=b'9')) {
                format!("-{r}")
            } else {
                r
            },
        );
    }
    let mag = num_bigint::BigUint::pow(xd.magnitude(), n);
    let negative = xneg && n % 2 == 1;
    let scale = xf * n as usize;
    let value = if e > 0 {
        let v = BigInt::from_biguint(Sign::Plus, mag);
        if scale >= rscale {
            round_scaled(&v, scale, rscale)
        } else {
            v * pow10(rscale - scale)
        }
    } else {
        // 1 / x^n = 10^scale / mag at rscale, rounded half away from zero.
        let num = pow10(scale + rscale + 1);
        let q = num / BigInt::from_biguint(Sign::Plus, mag);
        round_scaled(&q, rscale + 1, rscale)
    };
    big_decimal(&if negative { -value } else { value }, rscale)
}

// ------------------------------------------------------------------ div, gcd, lcm, factorial, scales

/// The quotient of two numerics of which one is NaN or ±Infinity: PostgreSQL's rules for them
/// are IEEE's, except that only NaN may be divided by zero.
fn special_quotient(a: &str, b: &str) -> Result<f64, SqlError> {
    let (x, y) = (
        a.parse::<f64>().unwrap_or(f64::NAN),
        b.parse::<f64>().unwrap_or(f64::NAN),
    );
    if y == 0.0 && !x.is_nan() {
        return Err(SqlError::DivisionByZero);
    }
    Ok(x / y)
}

/// `div(a, b)`: the quotient truncated toward zero, scale 0.
pub(crate) fn numeric_div_trunc(a: &str, b: &str) -> Result<String, SqlError> {
    if !plain(a) || !plain(b) {
        return special_quotient(a, b).map(|q| from_f64(q.trunc()));
    }
    let (an, ad, af, _) = exact(a);
    let (bn, bd, bf, bzero) = exact(b);
    if bzero {
        return Err(SqlError::DivisionByZero);
    }
    // a / b = (ad · 10^bf) / (bd · 10^af)
    let q = (ad * pow10(bf)) / (bd * pow10(af));
    big_decimal(&if an != bn { -q } else { q }, 0)
}

/// gcd / lcm of two integers of one width (`i32` range checks are the binder's types:
/// both i64 here, checked against the width of the larger input by the caller's type).
pub(crate) fn integer_gcd_lcm(x: i64, y: i64, lcm: bool) -> Result<i64, SqlError> {
    let (mut p, mut q) = (i128::from(x).abs(), i128::from(y).abs());
    while q != 0 {
        (p, q) = (q, p % q);
    }
    let r = if !lcm {
        p
    } else if x == 0 || y == 0 {
        0
    } else {
        (i128::from(x) / p * i128::from(y)).abs()
    };
    i64::try_from(r).map_err(|_| SqlError::IntegerOutOfRange {
        type_name: "bigint",
    })
}

/// gcd / lcm of two numerics, at the larger of their scales.
pub(crate) fn numeric_gcd_lcm(a: &str, b: &str, lcm: bool) -> Result<String, SqlError> {
    if !plain(a) || !plain(b) {
        return Ok("NaN".into());
    }
    let (_, ad, af, azero) = exact(a);
    let (_, bd, bf, bzero) = exact(b);
    let scale = af.max(bf);
    let x = ad * pow10(scale - af);
    let y = bd * pow10(scale - bf);
    let (mut p, mut q) = (x.clone(), y.clone());
    while q.sign() != Sign::NoSign {
        let r = &p % &q;
        p = q;
        q = r;
    }
    let r = if !lcm {
        p
    } else if azero || bzero {
        BigInt::from(0u8)
    } else {
        x / &p * y
    };
    big_decimal(&r, scale)
}

/// `factorial(n)`: 22003 for a negative n (PostgreSQL's code for it) and past numeric's range.
pub(crate) fn factorial(n: i64) -> Result<String, SqlError> {
    if n < 0 {
        return Err(SqlError::ArgumentOutOfRange {
            message: "factorial of a negative number is undefined".into(),
        });
    }
    // 32,177! is the first with more than 131,072 digits.
    if n > 32_177 {
        return Err(SqlError::NumericOverflow);
    }
    let mut r = num_bigint::BigUint::from(1u8);
    for i in 2..=n as u64 {
        r *= i;
    }
    big_decimal(&BigInt::from_biguint(Sign::Plus, r), 0)
}

/// `scale(numeric)`: its fraction digits; NULL for NaN and the infinities.
pub(crate) fn scale_of(a: &str) -> Option<usize> {
    plain(a).then(|| decimal_parts(a).2.len())
}

/// `min_scale(numeric)`: the fraction digits it needs; NULL for NaN and the infinities.
pub(crate) fn min_scale(a: &str) -> Option<usize> {
    plain(a).then(|| decimal_parts(a).2.trim_end_matches('0').len())
}

/// `trim_scale(numeric)`: without trailing fraction zeros.
pub(crate) fn trim_scale(a: &str) -> String {
    if !plain(a) || !a.contains('.') {
        return a.to_string();
    }
    let t = a.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" || t.is_empty() {
        "0".into()
    } else {
        t.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::any;

    #[test]
    fn numeric_sums_are_exact() {
        let add = |a: &str, b: &str, sub: bool| numeric_add(a, b, sub).expect("in range");
        assert_eq!(add("0.1", "0.2", false), "0.3");
        assert_eq!(add("1.50", "-2", false), "-0.50");
        // Past i128's 38 digits: exact in big integers, as PostgreSQL's numeric.
        let nines = "9".repeat(38);
        assert_eq!(add(&nines, "1", false), format!("1{}", "0".repeat(38)));
        assert_eq!(add(&nines, &nines, false), format!("1{}8", "9".repeat(37)));
        assert_eq!(
            add(&format!("1{}.5", "0".repeat(40)), "0.25", true),
            format!("1{}.25", "0".repeat(40))
        );
        assert_eq!(add(&nines, &nines, true), "0");
        assert_eq!(add("Infinity", "-Infinity", false), "NaN");
        assert_eq!(add("1", "-Infinity", true), "Infinity");
    }

    #[test]
    fn big_products_quotients_and_remainders_are_exact() {
        let big = format!("1{}", "0".repeat(30)); // 10^30
        let product = numeric_mul(&big, &format!("{big}.5")).expect("in range");
        assert_eq!(
            product,
            Some(format!("1{}5{}.0", "0".repeat(30), "0".repeat(29)))
        );
        let p = numeric_mul(&format!("-{}", "7".repeat(40)), "3").expect("in range");
        assert_eq!(p, Some(format!("-2{}1", "3".repeat(39))));
        // A divisor of more than 36 digits: long division at PostgreSQL's scale.
        let d = format!("3{}", "0".repeat(39)); // 3 × 10^39
        assert_eq!(
            numeric_div(&format!("1{}", "0".repeat(40)), &d).expect("divides"),
            "3.3333333333333333"
        );
        assert_eq!(
            numeric_div(&format!("-2{}", "0".repeat(39)), &d).expect("divides"),
            "-0.66666666666666666667"
        );
        let m = numeric_mod(
            &format!("1{}7", "0".repeat(40)),
            &format!("1{}", "0".repeat(40)),
        );
        assert_eq!(m.expect("in range"), Some("7".into()));
        let m = numeric_mod(&format!("-1{}7.5", "0".repeat(40)), "2").expect("in range");
        assert_eq!(m, Some("-1.5".into()));
        assert_eq!(numeric_mul("NaN", "2").expect("special"), None);
        // PostgreSQL's numeric holds 131,072 digits before the point.
        let huge = format!("1{}", "0".repeat(70_000));
        assert!(matches!(
            numeric_mul(&huge, &huge),
            Err(SqlError::NumericOverflow)
        ));
    }

    proptest::proptest! {
        /// The big-integer path agrees with the i128 one: numbers shifted past 38 digits give
        /// the shifted i128 results.
        #[test]
        fn big_path_agrees_with_the_small_one(a in any::<i64>(), b in any::<i64>(), frac in 0usize..6) {
            let shift = "0".repeat(30);
            let dec = |v: i64| numeric_canonical(&format!("{v}e-{frac}")).expect("decimal");
            let (x, y) = (dec(a), dec(b));
            let big = |s: &str| numeric_canonical(&format!("{s}e30")).expect("decimal");
            let sum = numeric_add(&big(&x), &big(&y), false).expect("in range");
            let small_sum = numeric_add(&x, &y, false).expect("in range");
            proptest::prop_assert_eq!(
                numeric_canonical(&sum),
                numeric_canonical(&format!("{small_sum}e30"))
            );
            let product = numeric_mul(&big(&x), &big(&y)).expect("in range");
            let small_product = numeric_mul(&x, &y).expect("in range");
            proptest::prop_assert_eq!(
                product.and_then(|p| numeric_canonical(&p)),
                small_product.and_then(|p| numeric_canonical(&format!("{p}e60")))
            );
            if b != 0 && frac == 0 {
                // a·10^30 mod b: the one value ≡ a·10^30 (mod b) with a's sign below |b|.
                let r = numeric_mod(&format!("{a}{shift}"), &format!("{b}")).expect("in range");
                let (a, b) = (i128::from(a), i128::from(b));
                let want = ((a % b) * (10i128.pow(30) % b)) % b;
                proptest::prop_assert_eq!(r, Some(want.to_string()));
            }
        }
    }

    #[test]
    fn numeric_modulo_and_negation_are_exact() {
        let m = |a: &str, b: &str| numeric_mod(a, b).expect("in range");
        assert_eq!(m("-3.125", "1").as_deref(), Some("-0.125"));
        assert_eq!(m("1.500", "1").as_deref(), Some("0.500"));
        assert_eq!(m("10", "3").as_deref(), Some("1"));
        assert_eq!(m("7.5", "-2.25").as_deref(), Some("0.75"));
        assert_eq!(numeric_neg("-3.125"), "3.125");
        assert_eq!(numeric_neg("2.50"), "-2.50");
        assert_eq!(numeric_neg("0.00"), "0.00");
    }
}
