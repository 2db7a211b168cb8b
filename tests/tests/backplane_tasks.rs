//! The task store contract (TASK-L01, TASK-M01…M04) run against both stores, the in-process
//! `MemoryTaskStore` and the shared `RedisTaskStore` on a real redis-server; then what only a
//! shared store must do: two instances on one Redis see each other's writes, compare-and-set
//! conflicts across them, a waiter is woken by the other instance, Redis TTLs follow the task's,
//! the cap holds across instances, and Redis going away fails calls quickly and cleanly.

use mcpcore::backplane::redis::{RedisTaskOptions, RedisTaskStore};
use mcpcore::tasks::{
    modify, now_ms, MemoryTaskStore, TaskRecord, TaskStatus, TaskStore, TaskStoreError,
};
use mcpcore_tests::redis::RedisServer;
use std::future::Future;
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

type Store = Arc<dyn TaskStore>;

/// Bound on anything that could hang: a hang fails the test instead of stalling the suite.
async fn bounded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("store call hung")
}

fn rec(id: &str, ttl: Option<u64>) -> TaskRecord {
    TaskRecord::new(id, ttl, false)
}

fn opts(max_tasks: usize) -> RedisTaskOptions {
    let mut o = RedisTaskOptions::default();
    o.max_tasks = max_tasks;
    o.op_timeout = Duration::from_secs(2);
    o.connect_timeout = Duration::from_millis(500);
    o
}

fn redis_store(r: &RedisServer, prefix: &str, o: RedisTaskOptions) -> RedisTaskStore {
    RedisTaskStore::connect_with(&r.url(0), prefix, o).expect("valid url")
}

/// One raw command on a fresh connection (RESP array in, first reply line out), to look at
/// what the store left in Redis.
fn raw(r: &RedisServer, args: &[&str]) -> String {
    let mut c = std::net::TcpStream::connect(("127.0.0.1", r.port())).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let mut msg = format!("*{}\r\n", args.len());
    for a in args {
        msg.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    c.write_all(msg.as_bytes()).expect("write");
    let mut buf = [0u8; 512];
    let n = c.read(&mut buf).expect("read");
    String::from_utf8_lossy(&buf[..n])
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// Runs one contract check against a fresh store of each kind (`max_tasks` given).
async fn both<F, Fut>(max: usize, check: F)
where
    F: Fn(Store) -> Fut,
    Fut: Future<Output = ()>,
{
    bounded(check(Arc::new(MemoryTaskStore::new(max)))).await;
    let r = RedisServer::start();
    bounded(check(Arc::new(redis_store(&r, "contract:", opts(max))))).await;
}

#[tokio::test]
async fn contract_a_full_store_refuses_with_32603_saying_so() {
    both(2, |s| async move {
        s.create(rec("a", None)).await.expect("room");
        s.create(rec("b", None)).await.expect("room");
        let e = s.create(rec("c", None)).await.unwrap_err();
        assert_eq!(e, TaskStoreError::Full { max: 2 });
        let wire = e.to_error_object();
        assert_eq!(wire.code, -32603);
        assert!(wire.message.contains("task store is full"), "{wire:?}");
        assert_eq!(s.get("c").await.unwrap_err(), TaskStoreError::NotFound);
        assert_eq!(
            s.create(rec("a", None)).await.unwrap_err(),
            TaskStoreError::Full { max: 2 }
        );
    })
    .await;
    both(5, |s| async move {
        s.create(rec("a", None)).await.expect("room");
        assert_eq!(
            s.create(rec("a", None)).await.unwrap_err(),
            TaskStoreError::Conflict,
            "a taken id"
        );
    })
    .await;
}

#[tokio::test]
async fn contract_expired_tasks_are_not_found_and_free_their_slot() {
    both(2, |s| async move {
        let mut old = rec("old", Some(1));
        old.created_at_ms = now_ms().saturating_sub(10);
        s.create(old).await.expect("created");
        s.create(rec("live", None)).await.expect("created");
        let e = s.get("old").await.unwrap_err();
        assert_eq!(e, TaskStoreError::NotFound);
        assert_eq!(e.to_error_object().code, -32602);
        s.create(rec("new", None)).await.expect("slot freed");
        assert_eq!(
            s.create(rec("more", None)).await.unwrap_err(),
            TaskStoreError::Full { max: 2 }
        );
    })
    .await;
}

#[tokio::test]
async fn contract_a_full_store_reaps_expired_tasks_before_refusing() {
    both(3, |s| async move {
        for i in 0..3 {
            let mut r = rec(&format!("x{i}"), Some(5));
            r.created_at_ms = now_ms().saturating_sub(100);
            s.create(r).await.expect("created");
        }
        for id in ["f1", "f2", "f3"] {
            s.create(rec(id, None)).await.expect("expired ones reaped");
        }
        assert!(matches!(
            s.create(rec("f4", None)).await,
            Err(TaskStoreError::Full { max: 3 })
        ));
    })
    .await;
}

#[tokio::test]
async fn contract_reap_expired_counts_and_keeps_live_ones() {
    both(10, |s| async move {
        s.create(rec("alive", Some(3_600_000)))
            .await
            .expect("created");
        let mut dead = rec("dead", Some(1));
        dead.created_at_ms = 0;
        s.create(dead).await.expect("created");
        assert_eq!(s.reap_expired().await, 1);
        assert!(s.get("alive").await.is_ok());
        assert_eq!(s.reap_expired().await, 0);
    })
    .await;
}

#[tokio::test]
async fn contract_stale_versions_conflict_and_modify_retries() {
    both(10, |s| async move {
        let created = s.create(rec("t", None)).await.expect("created");
        assert_eq!(created.version, 1);
        let mut a = s.get("t").await.expect("get");
        assert_eq!(a.version, 1);
        let b = a.clone();
        a.status = TaskStatus::Completed;
        a.result = Some(serde_json::json!({"content": [{"type": "text", "text": "hi"}]}));
        let stored = s.update(a.clone()).await.expect("first write wins");
        assert_eq!(stored.version, 2);
        assert_eq!(s.update(b).await.unwrap_err(), TaskStoreError::Conflict);
        let r = modify(&*s, "t", |r| {
            r.status_message = Some("done".into());
            true
        })
        .await
        .expect("modify");
        assert_eq!(r.version, 3);
        assert_eq!(r.status, TaskStatus::Completed);
        let got = s.get("t").await.expect("get");
        assert_eq!(got.result, a.result);
        assert_eq!(got.version, 3);
        assert_eq!(
            modify(&*s, "missing", |_| true).await.unwrap_err(),
            TaskStoreError::NotFound
        );
        let mut ghost = rec("ghost", None);
        ghost.version = 1;
        assert_eq!(s.update(ghost).await.unwrap_err(), TaskStoreError::NotFound);
    })
    .await;
}

#[tokio::test]
async fn contract_wait_for_change_wakes_on_update_and_on_expiry() {
    both(10, |s| async move {
        s.create(rec("t", None)).await.expect("created");
        let waiter = s.wait_for_change("t", 1);
        let s2 = s.clone();
        tokio::spawn(async move {
            let _ = modify(&*s2, "t", |r| {
                r.status = TaskStatus::Failed;
                true
            })
            .await;
        });
        let r = waiter.await.expect("changed");
        assert_eq!(r.status, TaskStatus::Failed);
        // Already different: at once.
        assert_eq!(s.wait_for_change("t", 1).await.expect("now").version, 2);
        let mut short = rec("short", Some(300));
        short.created_at_ms = now_ms();
        s.create(short).await.expect("created");
        assert_eq!(
            s.wait_for_change("short", 1).await.unwrap_err(),
            TaskStoreError::NotFound
        );
        assert_eq!(
            s.wait_for_change("never", 1).await.unwrap_err(),
            TaskStoreError::NotFound
        );
    })
    .await;
}

#[tokio::test]
async fn contract_list_pages_by_owner_and_era_oldest_first() {
    both(100, |s| async move {
        for i in 0..5 {
            let mut r = rec(&format!("a{i}"), None);
            r.created_at_ms = 1000 + 4 - i; // created in reverse id order
            r.owner = Some("alice".into());
            s.create(r).await.expect("created");
        }
        let mut other = rec("b0", None);
        other.owner = Some("bob".into());
        s.create(other).await.expect("created");
        let mut l0 = rec("l0", None);
        l0.legacy = true;
        s.create(l0).await.expect("created");
        let mut gone = rec("a9", Some(1));
        gone.owner = Some("alice".into());
        gone.created_at_ms = 1;
        s.create(gone).await.expect("created");
        let ids = |p: &[TaskRecord]| p.iter().map(|r| r.task_id.clone()).collect::<Vec<_>>();
        let (p1, c1) = s
            .list(Some("alice".into()), false, None, 2)
            .await
            .expect("list");
        assert_eq!(ids(&p1), ["a4", "a3"]);
        let (p2, c2) = s
            .list(Some("alice".into()), false, c1, 2)
            .await
            .expect("list");
        assert_eq!(ids(&p2), ["a2", "a1"]);
        let (p3, c3) = s
            .list(Some("alice".into()), false, c2, 2)
            .await
            .expect("list");
        assert_eq!(ids(&p3), ["a0"]);
        assert!(c3.is_none());
        let (l, lc) = s.list(None, true, None, 10).await.expect("list");
        assert_eq!(ids(&l), ["l0"]);
        assert!(lc.is_none());
        let (none, _) = s.list(None, false, None, 10).await.expect("list");
        assert!(none.is_empty(), "no owner-less modern tasks");
        let (bob, _) = s
            .list(Some("bob".into()), false, Some("garbage".into()), 10)
            .await
            .expect("an unknown cursor restarts");
        assert_eq!(ids(&bob), ["b0"]);
    })
    .await;
}

/// Two stores on one Redis and prefix are one store: writes, versions and conflicts are shared.
#[tokio::test]
async fn two_instances_share_records_and_conflict_on_stale_versions() {
    let r = RedisServer::start();
    let a = redis_store(&r, "pair:", opts(10));
    let b = redis_store(&r, "pair:", opts(10));
    let other = redis_store(&r, "elsewhere:", opts(10));
    bounded(async {
        a.create(rec("t", Some(60_000)))
            .await
            .expect("created on a");
        let seen = b.get("t").await.expect("b sees a's task");
        assert_eq!(seen.version, 1);
        assert_eq!(
            other.get("t").await.unwrap_err(),
            TaskStoreError::NotFound,
            "another prefix is another store"
        );
        let from_a = a.get("t").await.expect("get");
        let mut from_b = b.get("t").await.expect("get");
        from_b.status = TaskStatus::Completed;
        b.update(from_b).await.expect("b writes first");
        assert_eq!(
            a.update(from_a).await.unwrap_err(),
            TaskStoreError::Conflict
        );
        let again = modify(&a, "t", |r| {
            r.status_message = Some("seen by a".into());
            true
        })
        .await
        .expect("a re-reads and wins");
        assert_eq!(again.version, 3);
        assert_eq!(again.status, TaskStatus::Completed, "kept b's write");
        assert_eq!(
            b.get("t").await.expect("get").status_message.as_deref(),
            Some("seen by a")
        );
        assert_eq!(
            a.create(rec("t", None)).await.unwrap_err(),
            TaskStoreError::Conflict
        );
    })
    .await;
}

/// A waiter on one instance is woken by an update through ANOTHER instance: its own re-read
/// interval is a minute, so only the change channel can wake it within the bound.
#[tokio::test]
async fn a_waiter_is_woken_by_the_other_instance() {
    let r = RedisServer::start();
    let mut slow = opts(10);
    slow.recheck_interval = Duration::from_secs(60);
    let a = redis_store(&r, "wake:", opts(10));
    let b = redis_store(&r, "wake:", slow);
    a.create(rec("t", None)).await.expect("created");
    assert_eq!(b.get("t").await.expect("b connected").version, 1);
    let waiter = tokio::spawn(b.wait_for_change("t", 1));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiter.is_finished(), "nothing changed yet");
    modify(&a, "t", |r| {
        r.status = TaskStatus::InputRequired;
        true
    })
    .await
    .expect("a updates");
    let woken = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("woken well before the 60 s re-read")
        .expect("join")
        .expect("changed");
    assert_eq!(woken.status, TaskStatus::InputRequired);
    assert_eq!(woken.version, 2);
}

/// Redis's own TTL follows the record's, so Redis frees an expired task even if no worker
/// reaps; the record is gone through every instance.
#[tokio::test]
async fn redis_ttl_follows_the_task_ttl() {
    let r = RedisServer::start();
    let a = redis_store(&r, "ttl:", opts(10));
    let b = redis_store(&r, "ttl:", opts(10));
    a.create(rec("short", Some(400))).await.expect("created");
    a.create(rec("forever", None)).await.expect("created");
    let pttl: i64 = raw(&r, &["PTTL", "ttl:tasks:short"])[1..]
        .parse()
        .expect("integer reply");
    assert!(pttl > 0 && pttl <= 400, "PTTL {pttl}");
    assert_eq!(raw(&r, &["PTTL", "ttl:tasks:forever"]), ":-1");
    assert!(b.get("short").await.is_ok());
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(b.get("short").await.unwrap_err(), TaskStoreError::NotFound);
    assert_eq!(raw(&r, &["EXISTS", "ttl:tasks:short"]), ":0");
    assert_eq!(a.reap_expired().await, 1, "its index entry is reaped");
    assert_eq!(raw(&r, &["ZCARD", "ttl:tasks.all"]), ":1");
    assert_eq!(raw(&r, &["HLEN", "ttl:tasks.where"]), ":1");
}

/// `max_tasks` counts the tasks of every instance.
#[tokio::test]
async fn the_cap_holds_across_instances() {
    let r = RedisServer::start();
    let a = redis_store(&r, "cap:", opts(3));
    let b = redis_store(&r, "cap:", opts(3));
    a.create(rec("a1", None)).await.expect("room");
    a.create(rec("a2", None)).await.expect("room");
    b.create(rec("b1", None)).await.expect("room");
    assert_eq!(
        b.create(rec("b2", None)).await.unwrap_err(),
        TaskStoreError::Full { max: 3 }
    );
    assert_eq!(
        a.create(rec("a3", None)).await.unwrap_err(),
        TaskStoreError::Full { max: 3 }
    );
}

/// Redis down: every call fails quickly with a backend error (a generic -32603 for the peer,
/// nothing about Redis), a waiter ends instead of hanging; Redis back: the same store works.
#[tokio::test]
async fn redis_down_fails_fast_and_a_restart_recovers() {
    let mut r = RedisServer::start();
    let mut o = opts(10);
    o.recheck_interval = Duration::from_millis(300);
    let s = redis_store(&r, "down:", o);
    // A second store that re-reads only once a minute: after the restart, only its restored
    // subscription can wake it.
    let mut slow = opts(10);
    slow.recheck_interval = Duration::from_secs(60);
    let deaf = redis_store(&r, "down:", slow);
    s.create(rec("t", None)).await.expect("created");
    deaf.get("t").await.expect("connected");
    let waiter = tokio::spawn(s.wait_for_change("t", 1));
    tokio::time::sleep(Duration::from_millis(100)).await;
    r.stop();
    let e = bounded(s.get("t")).await.unwrap_err();
    assert!(matches!(e, TaskStoreError::Backend(_)), "{e:?}");
    let wire = e.to_error_object();
    assert_eq!(wire.code, -32603);
    assert!(!wire.message.to_lowercase().contains("redis"), "{wire:?}");
    assert!(matches!(
        bounded(s.create(rec("u", None))).await,
        Err(TaskStoreError::Backend(_))
    ));
    assert!(matches!(
        bounded(s.list(None, false, None, 10)).await,
        Err(TaskStoreError::Backend(_))
    ));
    assert_eq!(bounded(s.reap_expired()).await, 0);
    let w = bounded(waiter).await.expect("join");
    assert!(matches!(w, Err(TaskStoreError::Backend(_))), "{w:?}");
    r.restart();
    // The restarted Redis is empty; the store reconnects (with backoff) and works again.
    let mut ok = None;
    for _ in 0..100 {
        if let Ok(c) = s.create(rec("after", None)).await {
            ok = Some(c);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ok.expect("works again after the restart").version, 1);
    assert_eq!(s.get("t").await.unwrap_err(), TaskStoreError::NotFound);
    // The other store reconnects too and is subscribed again: an update through `s` wakes it.
    let mut back = false;
    for _ in 0..100 {
        if deaf.get("after").await.is_ok() {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(back, "the second store reconnects");
    let other = s.clone();
    let waiter = tokio::spawn(deaf.wait_for_change("after", 1));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiter.is_finished());
    modify(&other, "after", |r| {
        r.status = TaskStatus::Completed;
        true
    })
    .await
    .expect("update");
    let w = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("woken by the restored subscription, not the 60 s re-read")
        .expect("join")
        .expect("woken");
    assert_eq!(w.status, TaskStatus::Completed);
}

#[test]
fn a_bad_url_is_refused_at_once() {
    assert!(matches!(
        RedisTaskStore::connect("http://nope", "p:"),
        Err(TaskStoreError::Backend(_))
    ));
    assert!(RedisTaskStore::connect("redis://127.0.0.1:1/0", "p:").is_ok());
}
