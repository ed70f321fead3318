use super::*;

#[test]
fn ctid_mapping_round_trips_like_heap_slots() {
    assert_eq!(tid_of(1), Value::Tid(0, 1));
    assert_eq!(tid_of(291), Value::Tid(0, 291));
    assert_eq!(tid_of(292), Value::Tid(1, 1));
    for n in [1u64, 5, 291, 292, 100_000] {
        assert_eq!(tuple_of(&tid_of(n)), Some(n));
    }
}

#[test]
fn syntax_errors_read_like_postgres() {
    let e = parse("SELEC 1").expect_err("bad");
    assert_eq!(e.sqlstate(), "42601");
    assert!(e.to_string().contains("syntax error"), "{e}");
    let deep = format!("SELECT {}1{}", "(".repeat(500), ")".repeat(500));
    assert_eq!(parse(&deep).expect_err("deep").sqlstate(), "54000");
}
