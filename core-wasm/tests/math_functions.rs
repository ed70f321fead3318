//! Mathematical functions as PostgreSQL resolves and computes them: integer and untyped
//! arguments take the double precision forms, `mod` and `sign` keep numeric, and arguments
//! outside a function's domain get PostgreSQL's errors.

mod common;

use common::{fresh, rows_of, run, run_ok};

#[test]
fn math_functions_answer_as_postgres() {
    let (mut kv, mut e, s) = fresh();
    let cases: &[(&str, &[&str])] = &[
        (
            "SELECT sqrt(16), sqrt(2), power(2, 10), 2 ^ 10, pow(2.0::float8, 0.5), pi()",
            &[
                "4",
                "1.4142135623730951",
                "1024",
                "1024",
                "1.4142135623730951",
                "3.141592653589793",
            ],
        ),
        (
            "SELECT ln(1), exp(0), log(100), log10(1000), degrees(pi()), radians(180)",
            &["0", "1", "2", "3", "180", "3.141592653589793"],
        ),
        (
            "SELECT mod(7, 3), mod(-7, 3), mod(7.5, 2), sign(-5), sign(2.50), sign(0::numeric)",
            &["1", "-1", "1.5", "-1", "1", "0"],
        ),
        (
            "SELECT pg_typeof(sqrt(4))::text, pg_typeof(mod(7::bigint, 2))::text, \
             pg_typeof(sign(1.5))::text, pg_typeof(2 ^ 3)::text",
            &["double precision", "bigint", "numeric", "double precision"],
        ),
        ("SELECT sqrt(NULL), power(2, NULL) IS NULL", &["", "t"]),
        // sqrt(numeric): at least 16 significant digits, the argument's scale at least.
        (
            "SELECT sqrt(2::numeric), sqrt(0::numeric), sqrt(0.0225), sqrt(0.00001), \
             sqrt(123456789.123), sqrt(1e40::numeric), sqrt(2.000000000000000000000)",
            &[
                "1.414213562373095",
                "0.000000000000000",
                "0.15000000000000000",
                "0.0031622776601683793",
                "11111.11106609056",
                "100000000000000000000",
                "1.414213562373095048802",
            ],
        ),
    ];
    for (sql, want) in cases {
        let got: Vec<String> = rows_of(&run_ok(&mut e, &mut kv, s, sql))
            .remove(0)
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect();
        assert_eq!(got, *want, "{sql}");
    }
    for (sql, code, message) in [
        (
            "SELECT sqrt(-1)",
            "2201F",
            "cannot take square root of a negative number",
        ),
        (
            "SELECT sqrt(-0.5)",
            "2201F",
            "cannot take square root of a negative number",
        ),
        ("SELECT ln(0)", "2201E", "cannot take logarithm of zero"),
        (
            "SELECT log(-10)",
            "2201E",
            "cannot take logarithm of a negative number",
        ),
        (
            "SELECT power(0, -1)",
            "2201F",
            "zero raised to a negative power is undefined",
        ),
        (
            "SELECT (-8) ^ 0.5::float8",
            "2201F",
            "a negative number raised to a non-integer power yields a complex result",
        ),
        ("SELECT exp(1000)", "22003", "value out of range: overflow"),
        ("SELECT asin(2)", "22003", "input is out of range"),
        ("SELECT mod(7, 0)", "22012", "division by zero"),
        (
            "SELECT sqrt('a'::text)",
            "42883",
            "function sqrt(text) does not exist",
        ),
    ] {
        let err = run(&mut e, &mut kv, s, sql).error.expect("refused");
        assert_eq!(
            (err.code.as_str(), err.message.as_str()),
            (code, message),
            "{sql}"
        );
    }
    // The numeric forms compute in numeric (PostgreSQL's digits are compared in
    // tests/tests/bad_input.rs); results too large for their series are refused, not
    // computed in double precision.
    let r = run(&mut e, &mut kv, s, "SELECT exp(2::numeric)");
    assert!(r.error.is_none(), "{:?}", r.error);
    let err = run(&mut e, &mut kv, s, "SELECT power(2.0, 400000)")
        .error
        .expect("refused");
    assert_eq!(err.code, "0A000", "{}", err.message);
}
