//! The engine's guards around one request's handler (seam rule: an internal failure goes out as a
//! generic -32603 with no details; REQUIREMENTS CAN-04 for the timeout).
//!
//! - A handler that panics must not take its answer with it: the panic is caught where the request
//!   future is polled, logged locally, and the peer gets -32603 "Internal error". Without this the
//!   task dies silently and the peer waits for an answer that never comes.
//! - A handler that outlives [`crate::Limits::handler_timeout`] has its cancellation token fired
//!   (so it can see the cancellation and clean up), is left at most `shutdown_grace` more to do so
//!   in a detached task, and the peer gets -32603 "Request timed out" at once.
//! - A cancelled handler (CAN-01) that ignores its token is dropped `shutdown_grace` after the
//!   token fired, so it cannot hold a task, and what it owns, for ever.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::dispatch::Reply;
use crate::error::{codes, ErrorObject};

/// The message of a handler timeout's error (a local condition, not an internal detail).
pub const TIMED_OUT_MESSAGE: &str = "Request timed out";

/// Polls a pinned future and turns a panic inside it into an `Err` (no `unsafe`: the future is
/// reached through a pinned pointer, so it can be polled through a plain `&mut`).
struct CatchUnwind<P> {
    inner: Pin<P>,
}

impl<P> Future for CatchUnwind<P>
where
    P: std::ops::DerefMut + Unpin,
    P::Target: Future,
{
    type Output = std::thread::Result<<P::Target as Future>::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.get_mut().inner.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// How a guarded request ended.
pub(crate) struct Guarded {
    /// The answer to send (unless the peer cancelled the request).
    pub reply: Reply,
    /// The handler timeout fired: the token was cancelled by the engine, not by the peer, so the
    /// answer must still go out.
    pub timed_out: bool,
}

fn failed(e: ErrorObject) -> Reply {
    Reply {
        result: Err(e),
        pre_dispatch: false,
    }
}

/// Run `fut` (one request, handler included) under the panic guard, the handler timeout when
/// set, and — for a `cancellable` request — a bound after its cancellation: a handler that
/// ignores its token is dropped `grace` after it fired, so no task outlives its request for long
/// (the peer gets no answer for a cancelled request anyway, CAN-01).
#[cfg(test)]
pub(crate) async fn run<F>(
    fut: F,
    token: CancellationToken,
    cancellable: bool,
    timeout: Option<Duration>,
    grace: Duration,
) -> Guarded
where
    F: Future<Output = Reply> + Send + 'static,
{
    match timeout {
        None => in_place(std::pin::pin!(fut), &token, cancellable, grace).await,
        Some(limit) => with_timeout(Box::pin(fut), token, cancellable, limit, grace).await,
    }
}

/// [`run`] without a handler timeout: the request is polled where the caller pinned it. Boxing
/// it (a request future is a couple of KB) cost an allocation large enough to take glibc's slow
/// path on every request, and taking it by value would keep a second copy in this future.
pub(crate) fn in_place<'a, F>(
    fut: Pin<&'a mut F>,
    token: &'a CancellationToken,
    cancellable: bool,
    grace: Duration,
) -> impl Future<Output = Guarded> + Send + 'a
where
    F: Future<Output = Reply> + Send,
{
    guarded(CatchUnwind { inner: fut }, token, cancellable, grace)
}

/// [`run`] with a handler timeout: a timed-out handler moves into a task of its own, so it lives
/// in a box.
pub(crate) async fn with_timeout(
    fut: Pin<Box<dyn Future<Output = Reply> + Send>>,
    token: CancellationToken,
    cancellable: bool,
    limit: Duration,
    grace: Duration,
) -> Guarded {
    let mut caught = CatchUnwind { inner: fut };
    // Once the peer cancelled, the grace bound in `guarded` applies and the deadline must not
    // answer a request the peer gave up on (CAN-01).
    let deadline = async {
        tokio::time::sleep(limit).await;
        if token.is_cancelled() {
            std::future::pending::<()>().await;
        }
    };
    // Biased, handler first: a handler that is ready at once never arms the timer.
    tokio::select! {
        biased;
        g = guarded(&mut caught, &token, cancellable, grace) => g,
        () = deadline => {
            token.cancel();
            // Keep polling the handler for a bounded while so it observes the cancellation
            // and can release what it holds, instead of being dropped mid-step.
            tokio::spawn(async move {
                let _ = tokio::time::timeout(grace, caught).await;
            });
            tracing::warn!(?limit, "handler timed out");
            Guarded {
                reply: failed(ErrorObject::new(codes::INTERNAL_ERROR, TIMED_OUT_MESSAGE)),
                timed_out: true,
            }
        }
    }
}

/// The handler, or — once the peer cancelled a cancellable request — the handler bounded by
/// `grace`.
async fn guarded<C>(
    mut caught: C,
    token: &CancellationToken,
    cancellable: bool,
    grace: Duration,
) -> Guarded
where
    C: Future<Output = std::thread::Result<Reply>> + Unpin,
{
    // Biased, handler first: a handler that is ready at once (most are) never registers with
    // the token, so the guard costs a request next to nothing.
    let outcome = tokio::select! {
        biased;
        r = &mut caught => r,
        () = token.cancelled(), if cancellable => {
            match tokio::time::timeout(grace, &mut caught).await {
                Ok(r) => r,
                Err(_) => {
                    tracing::warn!("a cancelled handler ignored its token past the grace; dropped");
                    Ok(failed(ErrorObject::internal()))
                }
            }
        }
    };
    finish(outcome)
}

fn finish(outcome: std::thread::Result<Reply>) -> Guarded {
    let reply = outcome.unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        tracing::error!(panic = %what, "a request handler panicked; answered -32603");
        failed(ErrorObject::internal())
    });
    Guarded {
        reply,
        timed_out: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer() -> Reply {
        Reply {
            result: Ok(json!({}).into()),
            pre_dispatch: false,
        }
    }

    #[tokio::test]
    async fn a_panic_becomes_a_generic_internal_error() {
        let boom = async {
            if answer().result.is_ok() {
                panic!("secret detail");
            }
            answer()
        };
        let g = run(boom, CancellationToken::new(), true, None, Duration::ZERO).await;
        assert_eq!(g.reply.result, Err(ErrorObject::internal()));
        assert!(!g.timed_out);
    }

    #[tokio::test(start_paused = true)]
    async fn the_timeout_fires_the_token_and_answers() {
        let token = CancellationToken::new();
        let seen = token.clone();
        let forever = async move {
            seen.cancelled().await;
            std::future::pending::<Reply>().await
        };
        let limit = Some(Duration::from_secs(5));
        let g = run(forever, token.clone(), true, limit, Duration::from_secs(1)).await;
        assert!(g.timed_out);
        assert!(token.is_cancelled());
        let want = ErrorObject::new(codes::INTERNAL_ERROR, TIMED_OUT_MESSAGE);
        assert_eq!(g.reply.result, Err(want));
    }

    #[tokio::test(start_paused = true)]
    async fn a_cancelled_handler_ignoring_its_token_is_dropped_after_the_grace() {
        let token = CancellationToken::new();
        token.cancel();
        let g = run(
            std::future::pending::<Reply>(),
            token,
            true,
            None,
            Duration::from_secs(2),
        )
        .await;
        assert!(!g.timed_out);
        // A handler that returns within the grace keeps its own answer.
        let token = CancellationToken::new();
        token.cancel();
        let quick = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            answer()
        };
        let g = run(quick, token, true, None, Duration::from_secs(2)).await;
        assert_eq!(g.reply.result, Ok(json!({}).into()));
    }

    /// CAN-01 with a handler timeout set: a request the peer cancelled is bounded by the grace,
    /// and a deadline passing meanwhile does not turn it into a "timed out" answer.
    #[tokio::test(start_paused = true)]
    async fn a_peer_cancel_is_not_answered_by_the_deadline() {
        let token = CancellationToken::new();
        token.cancel();
        let limit = Some(Duration::from_secs(1));
        let g = run(
            std::future::pending::<Reply>(),
            token,
            true,
            limit,
            Duration::from_secs(3),
        )
        .await;
        assert!(!g.timed_out);
        assert_eq!(g.reply.result, Err(ErrorObject::internal()));
    }

    #[tokio::test]
    async fn a_non_cancellable_request_is_never_cut_short() {
        let token = CancellationToken::new();
        token.cancel();
        let g = run(async { answer() }, token, false, None, Duration::ZERO).await;
        assert_eq!(g.reply.result, Ok(json!({}).into()));
    }
}
