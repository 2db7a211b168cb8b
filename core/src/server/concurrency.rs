//! [`ServerOptions::max_concurrency`](super::ServerOptions::max_concurrency): one semaphore per
//! server, taken by every handler call. Requests over the bound wait for a slot (they are not
//! refused); a request cancelled while it waits gives its place up.

use serde_json::Value;
use std::sync::Arc;
use tokio::sync::Semaphore;

use super::handler::{BoxFuture, Handler, Outcome};
use super::registry::Registry;
use super::RequestContext;
use crate::error::HandlerError;

/// A handler that runs only while it holds a slot of the server's semaphore.
struct Bounded {
    inner: Arc<dyn Handler>,
    slots: Arc<Semaphore>,
}

impl Handler for Bounded {
    fn call(&self, ctx: RequestContext, params: Value) -> BoxFuture<Result<Outcome, HandlerError>> {
        let inner = self.inner.clone();
        let slots = self.slots.clone();
        Box::pin(async move {
            let _slot = tokio::select! {
                s = slots.acquire_owned() => {
                    s.map_err(|_| HandlerError::internal("the concurrency bound was closed"))?
                }
                () = ctx.cancelled() => {
                    return Err(HandlerError::internal("cancelled while waiting for a handler slot"))
                }
            };
            inner.call(ctx, params).await
        })
    }
}

/// `h` behind the semaphore `slots`.
pub(crate) fn wrap(h: &Arc<dyn Handler>, slots: &Arc<Semaphore>) -> Arc<dyn Handler> {
    Arc::new(Bounded {
        inner: h.clone(),
        slots: slots.clone(),
    })
}

/// Put every handler of `registry` behind one semaphore of `n` slots, returned so handlers
/// registered while serving go behind it too.
pub(crate) fn bound(registry: &mut Registry, n: usize) -> Arc<Semaphore> {
    let slots = Arc::new(Semaphore::new(n));
    let w = |h: &mut Arc<dyn Handler>| *h = wrap(h, &slots);
    registry.tools.entries_mut().for_each(|e| w(&mut e.handler));
    registry
        .prompts
        .entries_mut()
        .for_each(|e| w(&mut e.handler));
    registry
        .resources
        .entries_mut()
        .for_each(|e| w(&mut e.handler));
    registry
        .templates
        .entries_mut()
        .for_each(|e| w(&mut e.handler));
    registry.custom.values_mut().for_each(w);
    for h in [
        &mut registry.completion,
        &mut registry.subscribe,
        &mut registry.unsubscribe,
    ]
    .into_iter()
    .flatten()
    {
        w(h);
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::test_support::{call_tool, legacy_session};
    use crate::{handler_fn, CallToolResult, Server, Tool};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Eight concurrent calls across two tools and two sessions with `max_concurrency = 2`:
    /// never more than two handlers run at once, and every call is answered (waiting, not
    /// refused).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn max_concurrency_bounds_handlers_across_sessions() {
        let active = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let (a, p) = (active.clone(), peak.clone());
        let slow: Arc<dyn Handler> = Arc::new(handler_fn(move |_, _: Value| {
            let (a, p) = (a.clone(), p.clone());
            async move {
                let now = a.fetch_add(1, Ordering::SeqCst) + 1;
                p.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(30)).await;
                a.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, HandlerError>(CallToolResult::text("done"))
            }
        }));
        let server = Server::builder("t", "1")
            .tool(Tool::new("x"), slow.clone())
            .tool(Tool::new("y"), slow)
            .options(|o| o.max_concurrency = Some(2))
            .build()
            .expect("build");
        let sessions = [legacy_session(&server).await, legacy_session(&server).await];
        let mut calls = Vec::new();
        for i in 0..8 {
            let s = sessions[i % 2].clone();
            let tool = if i % 3 == 0 { "x" } else { "y" };
            calls.push(tokio::spawn(async move {
                call_tool(&s, i as i64 + 1, tool, serde_json::json!({})).await
            }));
        }
        for c in calls {
            let r = c.await.expect("join").expect("answered, not refused");
            assert_eq!(r["content"][0]["text"], "done");
        }
        assert_eq!(
            peak.load(Ordering::SeqCst),
            2,
            "at most two at once, and two did overlap"
        );
    }

    #[test]
    fn zero_is_refused_at_build() {
        let e = Server::builder("t", "1")
            .options(|o| o.max_concurrency = Some(0))
            .build()
            .err()
            .expect("refused");
        assert!(e.to_string().contains("max_concurrency"), "{e}");
    }
}
