//! AUTH-06 on replicas: the owner of a shared legacy session is checked on every resolve, and a
//! replica is bound to the owner's principal.

use std::sync::Arc;

use super::resolve;
use crate::auth::Principal;
use crate::backplane::sessions::Created;
use crate::backplane::{SessionRecord, SessionStore, StoreUnavailable};
use crate::future::BoxFuture;
use crate::transport::http::{HttpOptions, HttpService};

/// A shared store holding one session, owned by `owner`.
struct OneSession {
    owner: String,
}

impl SessionStore for OneSession {
    fn is_shared(&self) -> bool {
        true
    }
    fn create(
        &self,
        _: Arc<str>,
        _: SessionRecord,
        _: usize,
        _: u64,
    ) -> BoxFuture<Result<Created, StoreUnavailable>> {
        Box::pin(async { Ok(Created::Yes) })
    }
    fn load(
        &self,
        _: Arc<str>,
        _: u64,
    ) -> BoxFuture<Result<Option<SessionRecord>, StoreUnavailable>> {
        let rec = SessionRecord {
            protocol_version: Some("2025-11-25".into()),
            initialized: true,
            owner: Some(self.owner.clone()),
            ..SessionRecord::default()
        };
        Box::pin(async move { Ok(Some(rec)) })
    }
    fn update(
        &self,
        _: Arc<str>,
        _: Vec<(&'static str, String)>,
        _: u64,
    ) -> BoxFuture<Result<bool, StoreUnavailable>> {
        Box::pin(async { Ok(true) })
    }
    fn delete(&self, _: Arc<str>) -> BoxFuture<Result<(), StoreUnavailable>> {
        Box::pin(async { Ok(()) })
    }
    fn existing(&self, sids: Vec<Arc<str>>) -> BoxFuture<Result<Vec<bool>, StoreUnavailable>> {
        Box::pin(async move { Ok(vec![true; sids.len()]) })
    }
}

/// A replica built for the owner carries the owner's principal; once it exists, another
/// principal presenting the session id is still refused (its request may have passed the
/// transport's gate before the replica was made), and the owner is still served.
#[tokio::test]
async fn auth06_the_owner_is_checked_on_every_resolve() {
    let alice = Principal::new("alice", vec!["mcp:tools".into()]);
    let bob = Principal::new("bob", vec!["mcp:tools".into()]);
    let mut opts = HttpOptions::default();
    opts.legacy_stores.sessions = Arc::new(OneSession {
        owner: alice.binding_key(),
    });
    let server = crate::Server::builder("t", "1").build().expect("server");
    let svc = HttpService::new(server, opts).expect("service");
    let shared = svc.shared();

    let made = resolve(shared, "s1", Some(&alice)).await.expect("store");
    let entry = made.expect("alice's replica");
    let bound = entry.session.principal().map(|p| p.binding_key());
    assert_eq!(bound, Some(alice.binding_key()), "the replica is alice's");

    let stolen = resolve(shared, "s1", Some(&bob)).await.expect("store");
    assert!(stolen.is_none(), "bob is refused although a replica exists");
    let anonymous = resolve(shared, "s1", None).await.expect("store");
    assert!(anonymous.is_none(), "so is a request without a principal");

    let again = resolve(shared, "s1", Some(&alice)).await.expect("store");
    assert!(again.is_some_and(|e| Arc::ptr_eq(&e, &entry)));
}
