//! The engine keeps parse results by SQL text: repeating a text must behave exactly like
//! parsing it again — the same statement sees the current data, parse errors stay errors, and
//! a multi-statement text still runs each of its statements.

mod common;

use common::run;
use rocklake_core::api::{Output, Reply};
use rocklake_core::memkv::MemKv;
use rocklake_core::Engine;

fn first_cell(r: &Reply) -> String {
    match r.outputs.last() {
        Some(Output::Rows { rows, .. }) => {
            String::from_utf8_lossy(rows.to_vecs()[0][0].as_deref().unwrap_or(b"NULL")).into_owned()
        }
        other => panic!("{other:?} {:?}", r.error),
    }
}

#[test]
fn repeated_texts_run_like_new_ones() {
    let mut kv = MemKv::new();
    let mut e = Engine::open(&kv).expect("open");
    let s = e.open_session("t", "lake");
    assert!(
        run(&mut e, &mut kv, s, "CREATE TABLE t (id BIGINT PRIMARY KEY)")
            .error
            .is_none()
    );
    let count = "SELECT count(*) FROM t";
    let insert = "INSERT INTO t SELECT max(id) + 1 FROM t; INSERT INTO t VALUES (-1 - (SELECT count(*) FROM t))";
    assert_eq!(first_cell(&run(&mut e, &mut kv, s, count)), "0");
    assert!(run(&mut e, &mut kv, s, "INSERT INTO t VALUES (0)")
        .error
        .is_none());
    for n in 1..=3 {
        let r = run(&mut e, &mut kv, s, insert);
        assert!(r.error.is_none(), "{:?}", r.error);
        assert_eq!(r.outputs.len(), 2, "both statements of the text ran");
        assert_eq!(
            first_cell(&run(&mut e, &mut kv, s, count)),
            (1 + 2 * n).to_string()
        );
    }
    for _ in 0..2 {
        let r = run(&mut e, &mut kv, s, "SELEC 1");
        assert_eq!(r.error.map(|e| e.code).as_deref(), Some("42601"));
    }
}
