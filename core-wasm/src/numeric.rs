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
