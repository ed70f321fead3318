//! Result rows cross the WIT boundary and reach the wire packed as DataRow message bodies
//! (`api::TextRows`): the packing must give back exactly the values put in, read as
//! PostgreSQL reads a DataRow, and a host must refuse a buffer that is not whole bodies.

use proptest::prelude::*;
use rocklake_core::api::TextRows;

type Rows = Vec<Vec<Option<Vec<u8>>>>;

/// A DataRow body read the way a PostgreSQL client reads it, independently of `TextRows`.
fn read_body(mut b: &[u8]) -> Vec<Option<Vec<u8>>> {
    let n = i16::from_be_bytes([b[0], b[1]]);
    b = &b[2..];
    let mut out = Vec::new();
    for _ in 0..n {
        let len = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        b = &b[4..];
        if len < 0 {
            out.push(None);
        } else {
            out.push(Some(b[..len as usize].to_vec()));
            b = &b[len as usize..];
        }
    }
    assert!(b.is_empty(), "bytes after the last value");
    out
}

fn rows() -> impl Strategy<Value = Rows> {
    prop::collection::vec(
        prop::collection::vec(
            prop::option::of(prop::collection::vec(any::<u8>(), 0..40)),
            0..12,
        ),
        0..30,
    )
}

proptest! {
    #[test]
    fn packed_rows_give_back_their_values(rows in rows()) {
        let packed: TextRows = rows.iter().cloned().collect();
        prop_assert_eq!(packed.len(), rows.len());
        prop_assert_eq!(packed.to_vecs(), rows.clone());
        for (body, row) in packed.bodies().zip(&rows) {
            prop_assert_eq!(&read_body(body), row);
        }
        for (values, row) in packed.iter().zip(&rows) {
            prop_assert_eq!(values.len(), row.len());
            let got: Vec<Option<&[u8]>> = values.collect();
            let want: Vec<Option<&[u8]>> = row.iter().map(|v| v.as_deref()).collect();
            prop_assert_eq!(got, want);
        }
        let (data, ends) = packed.clone().into_parts();
        prop_assert_eq!(TextRows::from_parts(data, ends), Some(packed));
    }

    #[test]
    fn a_buffer_that_is_not_whole_bodies_is_refused(rows in rows(), cut in any::<prop::sample::Index>()) {
        let packed: TextRows = rows.iter().cloned().collect();
        let (data, ends) = packed.into_parts();
        if !data.is_empty() {
            // The last row loses its last byte: its values no longer fit its body.
            let mut short = data.clone();
            short.pop();
            let mut short_ends = ends.clone();
            if let Some(e) = short_ends.last_mut() {
                *e -= 1;
            }
            prop_assert_eq!(TextRows::from_parts(short, short_ends), None);
            // One row ends a byte early and the next starts with that byte.
            let i = cut.index(ends.len());
            if ends[i] > 0 && i + 1 < ends.len() {
                let mut moved = ends.clone();
                moved[i] -= 1;
                prop_assert_eq!(TextRows::from_parts(data.clone(), moved), None);
            }
        }
        // A trailing byte after the last row's values.
        let mut long = data.clone();
        long.push(0);
        let mut long_ends = ends.clone();
        match long_ends.last_mut() {
            Some(e) => *e += 1,
            None => long_ends.push(1),
        }
        prop_assert_eq!(TextRows::from_parts(long, long_ends), None);
    }
}

#[test]
fn a_row_wider_than_a_data_row_is_refused_and_leaves_the_rows_as_they_were() {
    let mut rows: TextRows = [vec![Some(b"a".to_vec()), None]].into_iter().collect();
    let before = rows.clone();
    let wide = vec![None::<&[u8]>; i16::MAX as usize + 1];
    assert!(rows.push(wide).is_err());
    assert_eq!(rows, before);
    let widest = vec![None::<&[u8]>; i16::MAX as usize];
    assert!(rows.push(widest).is_ok());
    assert_eq!(rows.len(), 2);
}

#[test]
fn a_negative_column_count_is_refused() {
    let body = (-1i16).to_be_bytes().to_vec();
    assert_eq!(TextRows::from_parts(body, vec![2]), None);
}
