//! Round trip through the real SlateDB store on a temp dir: commit, read back through the
//! reader, reopen, read back again; plus the store's own rules (reserved keys, epochs, URLs).

use rocklake::store::{Store, StoreError, StoreOptions};
use rocklake_core::api::{CommitBatch, CommitSeq, KvRead};

fn batch(seq: u64, puts: &[(&str, &str)], deletes: &[&str]) -> CommitBatch {
    CommitBatch {
        seq: CommitSeq(seq),
        puts: puts
            .iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect(),
        deletes: deletes.iter().map(|k| k.as_bytes().to_vec()).collect(),
    }
}

fn all(r: &impl KvRead) -> Vec<(String, String)> {
    r.scan(&[], &[0xff; 8], usize::MAX)
        .expect("scan")
        .to_pairs()
        .into_iter()
        .map(|(k, v)| {
            (
                String::from_utf8(k).expect("utf8"),
                String::from_utf8(v).expect("utf8"),
            )
        })
        .collect()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_roundtrip_commit_read_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cat");
    let path = path.to_str().expect("utf8 path");

    let store = Store::open(path, StoreOptions::default())
        .await
        .expect("open");
    assert_eq!(store.epoch(), 1);
    let r = store.reader();
    assert!(r.is_empty());

    store
        .commit(&batch(
            1,
            &[("a/1", "one"), ("a/2", "two"), ("b/1", "bee")],
            &[],
        ))
        .await
        .expect("commit 1");
    store
        .commit(&batch(2, &[("a/3", "three"), ("a/2", "TWO")], &["b/1"]))
        .await
        .expect("commit 2");
    // Puts then deletes: a key both put and deleted in one batch ends up deleted.
    store
        .commit(&batch(
            3,
            &[("c/1", "gone"), ("c/2", "stays")],
            &["c/1", "never-existed"],
        ))
        .await
        .expect("commit 3");

    let expected = pairs(&[
        ("a/1", "one"),
        ("a/2", "TWO"),
        ("a/3", "three"),
        ("c/2", "stays"),
    ]);
    assert_eq!(all(&r), expected);
    assert_eq!(r.get(b"a/2").expect("get"), Some(b"TWO".to_vec()));
    assert_eq!(r.get(b"b/1").expect("get"), None);
    // Range bounds and limits.
    let two = r.scan(b"a/", b"a0", 2).expect("scan");
    assert_eq!(two.len(), 2);
    assert_eq!(two.get(1).map(|(k, _)| k), Some(&b"a/2"[..]));
    assert!(r.scan(b"z", b"a", 10).expect("inverted range").is_empty());
    assert!(r.scan(b"a", b"z", 0).expect("limit 0").is_empty());

    // Reserved and empty keys are rejected, and nothing of such a batch lands.
    let mut bad = batch(4, &[("d/1", "x")], &[]);
    bad.puts
        .push((b"\x00writer_epoch".to_vec(), 99u64.to_be_bytes().to_vec()));
    assert!(matches!(
        store.commit(&bad).await,
        Err(StoreError::Invalid { .. })
    ));
    let mut bad = batch(4, &[("d/1", "x")], &[]);
    bad.deletes.push(Vec::new());
    assert!(matches!(
        store.commit(&bad).await,
        Err(StoreError::Invalid { .. })
    ));
    assert_eq!(r.get(b"d/1").expect("get"), None);
    // The reserved epoch key is not visible to readers.
    assert_eq!(r.get(b"\x00writer_epoch").expect("get"), None);

    store.close().await.expect("close");
    store.close().await.expect("second close is a no-op");
    assert!(matches!(
        store.commit(&batch(5, &[("e", "e")], &[])).await,
        Err(StoreError::Closed)
    ));
    // The reader keeps answering after close.
    assert_eq!(all(&r), expected);

    // Reopen through a file:// URL: same content, next epoch.
    let url = format!("file://{path}");
    let store = Store::open(&url, StoreOptions::default().create_if_missing(false))
        .await
        .expect("reopen");
    assert_eq!(store.epoch(), 2);
    assert_eq!(all(&store.reader()), expected);
    store
        .commit(&batch(4, &[("d/1", "dee")], &["a/1"]))
        .await
        .expect("commit after reopen");
    store.close().await.expect("close");

    let store = Store::open(path, StoreOptions::default())
        .await
        .expect("reopen 2");
    assert_eq!(store.epoch(), 3);
    assert_eq!(
        all(&store.reader()),
        pairs(&[
            ("a/2", "TWO"),
            ("a/3", "three"),
            ("c/2", "stays"),
            ("d/1", "dee")
        ])
    );
    store.close().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_open_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing");
    let missing = missing.to_str().expect("utf8");
    let e = Store::open(missing, StoreOptions::default().create_if_missing(false)).await;
    assert!(matches!(e, Err(StoreError::NotFound { .. })), "{e:?}");
    // An existing but empty directory holds no catalog either.
    let empty = dir.path().to_str().expect("utf8");
    let e = Store::open(empty, StoreOptions::default().create_if_missing(false)).await;
    assert!(matches!(e, Err(StoreError::NotFound { .. })), "{e:?}");
    let e = Store::open("ftp://host/x", StoreOptions::default()).await;
    assert!(matches!(e, Err(StoreError::Invalid { .. })), "{e:?}");
    // A large batch (well past one WAL block) round-trips too.
    let store = Store::open(empty, StoreOptions::default())
        .await
        .expect("open");
    let big = CommitBatch {
        seq: CommitSeq(1),
        puts: (0..2000u32)
            .map(|i| (format!("k/{i:05}").into_bytes(), vec![b'v'; 1000]))
            .collect(),
        deletes: Vec::new(),
    };
    store.commit(&big).await.expect("big commit");
    store.close().await.expect("close");
    let store = Store::open(empty, StoreOptions::default())
        .await
        .expect("reopen");
    assert_eq!(store.reader().len(), 2000);
    store.close().await.expect("close");
}
