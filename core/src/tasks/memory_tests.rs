//! The in-process store: the bound, expiry, reaping, optimistic concurrency, waiting.

use super::*;

fn rec(id: &str, ttl: Option<u64>) -> TaskRecord {
    TaskRecord::new(id, ttl, false)
}

#[tokio::test]
async fn default_bound_is_ten_thousand_and_refuses_past_it() {
    let store = MemoryTaskStore::default();
    assert_eq!(MemoryTaskStore::DEFAULT_MAX_TASKS, 10_000);
    for i in 0..10_000 {
        store
            .create(rec(&format!("t{i}"), None))
            .await
            .expect("room");
    }
    let e = store.create(rec("one-too-many", None)).await.unwrap_err();
    assert_eq!(e, TaskStoreError::Full { max: 10_000 });
    let wire = e.to_error_object();
    assert_eq!(wire.code, -32603);
    assert!(
        wire.message.contains("task store is full"),
        "{}",
        wire.message
    );
    assert_eq!(store.len(), 10_000);
}

#[tokio::test]
async fn expired_tasks_are_not_found_and_free_their_slot() {
    let store = MemoryTaskStore::new(2);
    let mut old = rec("old", Some(1));
    old.created_at_ms = now_ms().saturating_sub(10);
    store.create(old).await.expect("created");
    store.create(rec("live", None)).await.expect("created");
    let e = store.get("old").await.unwrap_err();
    assert_eq!(e, TaskStoreError::NotFound);
    assert_eq!(e.to_error_object().code, -32602);
    // The lookup dropped it: the store holds one record and takes a new one.
    assert_eq!(store.len(), 1);
    store.create(rec("new", None)).await.expect("slot freed");
}

#[tokio::test]
async fn a_full_store_reaps_expired_tasks_before_refusing() {
    let store = MemoryTaskStore::new(3);
    for i in 0..3 {
        let mut r = rec(&format!("x{i}"), Some(5));
        r.created_at_ms = now_ms().saturating_sub(100);
        store.create(r).await.expect("created");
    }
    assert_eq!(store.len(), 3);
    store
        .create(rec("fresh", None))
        .await
        .expect("expired ones reaped");
    assert_eq!(store.len(), 1);
}

#[tokio::test]
async fn reap_expired_counts_and_keeps_live_ones() {
    let store = MemoryTaskStore::new(10);
    let mut dead = rec("dead", Some(1));
    dead.created_at_ms = 0;
    store.create(dead).await.expect("created");
    store
        .create(rec("alive", Some(3_600_000)))
        .await
        .expect("created");
    assert_eq!(store.reap_expired().await, 1);
    assert_eq!(store.len(), 1);
    assert!(store.get("alive").await.is_ok());
    assert_eq!(store.reap_expired().await, 0);
}

#[tokio::test]
async fn stale_versions_conflict_and_modify_retries() {
    let store = MemoryTaskStore::new(10);
    let created = store.create(rec("t", None)).await.expect("created");
    assert_eq!(created.version, 1);
    let mut a = store.get("t").await.expect("get");
    let b = a.clone();
    a.status = TaskStatus::Completed;
    let stored = store.update(a).await.expect("first write wins");
    assert_eq!(stored.version, 2);
    assert_eq!(store.update(b).await.unwrap_err(), TaskStoreError::Conflict);
    let r = modify(&store, "t", |r| {
        r.status_message = Some("done".into());
        true
    })
    .await
    .expect("modify");
    assert_eq!(r.version, 3);
    assert_eq!(r.status, TaskStatus::Completed);
    assert_eq!(
        modify(&store, "missing", |_| true).await.unwrap_err(),
        TaskStoreError::NotFound
    );
}

#[tokio::test]
async fn wait_for_change_wakes_on_update_and_on_expiry() {
    let store = MemoryTaskStore::new(10);
    store.create(rec("t", None)).await.expect("created");
    let waiter = store.wait_for_change("t", 1);
    let s2 = store.clone();
    tokio::spawn(async move {
        let _ = modify(&s2, "t", |r| {
            r.status = TaskStatus::Failed;
            true
        })
        .await;
    });
    let r = waiter.await.expect("changed");
    assert_eq!(r.status, TaskStatus::Failed);
    // A task whose TTL runs out while waited on ends the wait with NotFound.
    let mut short = rec("short", Some(30));
    short.created_at_ms = now_ms();
    store.create(short).await.expect("created");
    assert_eq!(
        store.wait_for_change("short", 1).await.unwrap_err(),
        TaskStoreError::NotFound
    );
}

#[tokio::test]
async fn list_pages_by_owner_and_era() {
    let store = MemoryTaskStore::new(100);
    for i in 0..5 {
        let mut r = rec(&format!("a{i}"), None);
        r.created_at_ms = 1000 + i;
        r.owner = Some("alice".into());
        store.create(r).await.expect("created");
    }
    let mut other = rec("b0", None);
    other.owner = Some("bob".into());
    store.create(other).await.expect("created");
    let legacy_rec = |id: &str| {
        let mut r = rec(id, None);
        r.legacy = true;
        r
    };
    store.create(legacy_rec("l0")).await.expect("created");
    let (p1, c1) = store
        .list(Some("alice".into()), false, None, 2)
        .await
        .expect("list");
    assert_eq!(
        p1.iter().map(|r| r.task_id.as_str()).collect::<Vec<_>>(),
        ["a0", "a1"]
    );
    let (p2, c2) = store
        .list(Some("alice".into()), false, c1, 10)
        .await
        .expect("list");
    assert_eq!(p2.len(), 3);
    assert!(c2.is_none());
    let (l, _) = store.list(None, true, None, 10).await.expect("list");
    assert_eq!(l.len(), 1);
    assert_eq!(l[0].task_id, "l0");
}

#[test]
fn records_round_trip_through_json() {
    let mut r = rec("t", Some(5));
    r.result = Some(serde_json::json!({"content": []}));
    r.input_requests
        .insert("k".into(), serde_json::json!({"method": "roots/list"}));
    let s = serde_json::to_string(&r).expect("serialize");
    let back: TaskRecord = serde_json::from_str(&s).expect("deserialize");
    assert_eq!(back, r);
    assert!(s.contains("\"status\":\"working\""));
}
