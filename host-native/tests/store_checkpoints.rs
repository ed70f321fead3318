//! RockLake checkpoints are backed by SlateDB checkpoints of the store (named
//! `rocklake-checkpoint-<id>`), so the files of the checkpointed state stay whatever excision,
//! compaction and SlateDB's garbage collector do: created with the checkpoint's commit, dropped
//! with it, and reconciled at open after a crash between the two.

use rocklake::service::{CatalogService, ServiceConfig};
use rocklake::store::resolve_object_store;
use rocklake_core::api::{Output, SessionId};
use rocklake_core::writer::init_statements;

async fn sql(service: &CatalogService, sid: SessionId, q: &str) -> Vec<Output> {
    let r = service.query(sid, q).await;
    assert!(r.error.is_none(), "{q}: {:?}", r.error);
    r.outputs
}

/// The names of the store's SlateDB checkpoints, read with SlateDB's own admin API.
async fn store_checkpoints(url: &str) -> Vec<String> {
    let (store, root) = resolve_object_store(url, None).expect("store");
    let admin = slatedb::admin::Admin::builder(root, store).build();
    let mut names: Vec<String> = admin
        .list_checkpoints(None)
        .await
        .expect("list")
        .into_iter()
        .filter_map(|c| c.name)
        .filter(|n| n.starts_with("rocklake-checkpoint-"))
        .collect();
    names.sort();
    names
}

async fn open(url: &str) -> (std::sync::Arc<CatalogService>, SessionId) {
    let service = CatalogService::open(&ServiceConfig::new(url.to_string()))
        .await
        .expect("open");
    let sid = service.open_session("t", "lake");
    (service, sid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_pin_store_checkpoints_and_reconcile_at_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = dir.path().join("catalog").display().to_string();
    let (service, sid) = open(&url).await;
    let mut init = vec!["BEGIN".to_string()];
    init.extend(init_statements(
        "/data/",
        "t",
        "0190f6a2-0000-7000-8000-000000000000",
    ));
    init.push("COMMIT".into());
    sql(&service, sid, &init.join(";\n")).await;
    sql(
        &service,
        sid,
        "SELECT * FROM rocklake_checkpoint_create('first')",
    )
    .await;
    sql(
        &service,
        sid,
        "SELECT * FROM rocklake_checkpoint_create('second')",
    )
    .await;
    assert_eq!(
        store_checkpoints(&url).await,
        ["rocklake-checkpoint-1", "rocklake-checkpoint-2"]
    );
    sql(&service, sid, "SELECT * FROM rocklake_checkpoint_drop(1)").await;
    assert_eq!(store_checkpoints(&url).await, ["rocklake-checkpoint-2"]);
    service.close_session(sid).await;
    service.shutdown().await.expect("shutdown");
    drop(service);

    // Damage both ways, as a crash between a commit and its pin would: checkpoint 2's store
    // checkpoint gone, a stray one for checkpoint 1 back.
    let (store, root) = resolve_object_store(&url, None).expect("store");
    let admin = slatedb::admin::Admin::builder(root, store).build();
    for c in admin
        .list_checkpoints(Some("rocklake-checkpoint-2"))
        .await
        .expect("list")
    {
        admin.delete_checkpoint(c.id).await.expect("delete");
    }
    let options = slatedb::config::CheckpointOptions {
        name: Some("rocklake-checkpoint-1".into()),
        ..Default::default()
    };
    admin
        .create_detached_checkpoint(&options)
        .await
        .expect("stray checkpoint");
    assert_eq!(store_checkpoints(&url).await, ["rocklake-checkpoint-1"]);
    let (service, _) = open(&url).await;
    assert_eq!(store_checkpoints(&url).await, ["rocklake-checkpoint-2"]);
    service.shutdown().await.expect("shutdown");
}
