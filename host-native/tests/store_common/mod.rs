//! Commit batches and a reader of what they wrote, shared by the store journal tests.

use rocklake_core::api::{CommitBatch, CommitSeq, KvRead};

/// A batch writing `t/<seq>` and the shared `t/counter` key.
pub fn batch(seq: u64) -> CommitBatch {
    CommitBatch {
        seq: CommitSeq(seq),
        puts: vec![
            (
                format!("t/{seq:04}").into_bytes(),
                format!("v{seq}").into_bytes(),
            ),
            // A key every batch rewrites, as the counters are: the last write must win.
            (b"t/counter".to_vec(), seq.to_be_bytes().to_vec()),
        ],
        deletes: Vec::new(),
    }
}

/// The seqs present as `t/NNNN` keys, and the counter's value.
pub fn contents(r: &impl KvRead) -> (Vec<u64>, Option<u64>) {
    let page = r.scan(b"t/", b"t0", usize::MAX).expect("scan");
    let mut seqs = Vec::new();
    let mut counter = None;
    for (k, v) in page.to_pairs() {
        if k == b"t/counter" {
            counter = Some(u64::from_be_bytes(v.try_into().expect("8 bytes")));
        } else {
            let s = std::str::from_utf8(&k[2..]).expect("utf8");
            seqs.push(s.parse().expect("number"));
        }
    }
    (seqs, counter)
}
