//! The process's `tracing` subscriber ([`super::install`]): mcpcore's spans, kept only as long
//! as the OTLP exporter needs them, and its log events, handed to the log route.
//!
//! Why not `tracing_subscriber`'s registry with a layer: the registry is general (any layer,
//! any span's extensions, reference counts taken on every enter), and under load its
//! bookkeeping cost more than the spans' own recording — some twenty slab lookups and an
//! extension map per request. Here a span is one slab slot holding its OTLP record; entering
//! and leaving it only push and pop its id on this thread's stack; its local parent's W3C ids
//! are copied when it is made (they never change after), so closing it looks nothing else up.

use sharded_slab::Slab;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_core::span::Current;

use super::install::Process;
use super::otlp_span::Open;

/// One open span.
struct Slot {
    /// Handles to the span (`clone_span` / `try_close`); it closes when the last one goes.
    refs: AtomicUsize,
    meta: &'static Metadata<'static>,
    /// Its OTLP record (taken when it closes); `None` while nothing is exported.
    open: Mutex<Option<Box<Open>>>,
    /// The W3C ids of its local parent, if that has ids.
    parent_ids: Option<([u8; 16], [u8; 8])>,
}

thread_local! {
    /// The spans this thread is in, innermost last.
    static STACK: RefCell<Vec<Id>> = const { RefCell::new(Vec::new()) };
}

pub(super) struct ProcessSubscriber {
    process: Arc<Process>,
    spans: Slab<Slot>,
}

/// Slab keys start at 0; span ids may not.
fn key(id: &Id) -> usize {
    usize::try_from(id.into_u64().saturating_sub(1)).unwrap_or(usize::MAX)
}

impl ProcessSubscriber {
    pub(super) fn new(process: Arc<Process>) -> Self {
        Self {
            process,
            spans: Slab::new(),
        }
    }

    fn lock(slot: &Slot) -> std::sync::MutexGuard<'_, Option<Box<Open>>> {
        slot.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The span a new span nests in: the one it names, or this thread's current one.
    fn parent_of(&self, attrs: &Attributes<'_>) -> Option<Id> {
        if let Some(p) = attrs.parent() {
            return Some(p.clone());
        }
        if !attrs.is_contextual() {
            return None;
        }
        STACK
            .try_with(|s| s.borrow().last().cloned())
            .ok()
            .flatten()
    }

    fn ids_of(&self, id: &Id) -> Option<([u8; 16], [u8; 8])> {
        let slot = self.spans.get(key(id))?;
        let open = Self::lock(&slot);
        open.as_ref()?.ids.filter(|i| i.1 != [0; 8])
    }
}

impl Subscriber for ProcessSubscriber {
    fn register_callsite(&self, m: &'static Metadata<'static>) -> Interest {
        if self.process.wants(m) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, m: &Metadata<'_>) -> bool {
        self.process.wants(m)
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(self.process.max_level())
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let open = self.process.otlp().and_then(|l| l.begin(attrs));
        // Only a span without a remote parent asks for its local parent's ids when it ends.
        let parent_ids = match &open {
            Some(o) if o.remote_parent.is_none() => {
                self.parent_of(attrs).and_then(|p| self.ids_of(&p))
            }
            _ => None,
        };
        let slot = Slot {
            refs: AtomicUsize::new(1),
            meta: attrs.metadata(),
            open: Mutex::new(open),
            parent_ids,
        };
        // A full slab (millions of open spans) makes the span a placeholder nothing records.
        let k = self.spans.insert(slot).unwrap_or(usize::MAX - 1);
        Id::from_u64(k as u64 + 1)
    }

    fn record(&self, id: &Id, values: &Record<'_>) {
        if let Some(slot) = self.spans.get(key(id)) {
            if let Some(open) = Self::lock(&slot).as_mut() {
                super::otlp::OtlpLayer::record(open, values);
            }
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, e: &Event<'_>) {
        if e.metadata().is_event() {
            if let Some(r) = self.process.route() {
                super::log::deliver(&r, e);
            }
        }
    }

    fn enter(&self, id: &Id) {
        let _ = STACK.try_with(|s| s.borrow_mut().push(id.clone()));
    }

    fn exit(&self, id: &Id) {
        let _ = STACK.try_with(|s| {
            let mut s = s.borrow_mut();
            if let Some(i) = s.iter().rposition(|top| top == id) {
                s.remove(i);
            }
        });
    }

    fn clone_span(&self, id: &Id) -> Id {
        if let Some(slot) = self.spans.get(key(id)) {
            slot.refs.fetch_add(1, Ordering::Relaxed);
        }
        id.clone()
    }

    fn try_close(&self, id: Id) -> bool {
        let k = key(&id);
        let (open, parent_ids) = {
            let Some(slot) = self.spans.get(k) else {
                return false;
            };
            if slot.refs.fetch_sub(1, Ordering::AcqRel) != 1 {
                return false;
            }
            let open = Self::lock(&slot).take();
            (open, slot.parent_ids)
        };
        self.spans.remove(k);
        if let (Some(open), Some(l)) = (open, self.process.otlp()) {
            l.end(open, || parent_ids);
        }
        true
    }

    fn current_span(&self) -> Current {
        let top = STACK
            .try_with(|s| s.borrow().last().cloned())
            .ok()
            .flatten();
        top.and_then(|id| {
            let meta = self.spans.get(key(&id))?.meta;
            Some(Current::new(id, meta))
        })
        .unwrap_or_else(Current::none)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::otlp::{OtlpLayer, OtlpOptions};

    /// An exporter that never sends on its own (its spans stay queued for the test).
    fn layer() -> OtlpLayer {
        let opts = OtlpOptions {
            endpoint: Some("http://127.0.0.1:9".into()),
            interval_ms: Some(3_600_000),
            max_batch: Some(10_000),
            ..OtlpOptions::default()
        };
        OtlpLayer::new(&opts).expect("layer")
    }

    fn subscriber() -> (ProcessSubscriber, Arc<crate::telemetry::ExportHandle>) {
        let layer = layer();
        let handle = layer.handle();
        (ProcessSubscriber::new(Process::exporting(layer)), handle)
    }

    fn contains(hay: &[u8], needle: &[u8]) -> bool {
        hay.windows(needle.len()).any(|w| w == needle)
    }

    /// A span ends when its last handle goes, not before; entering it makes it the current
    /// span, and a span made inside it is its child in the parent's trace (its W3C ids are
    /// the parent's trace id and, as parent span id, the parent's span id).
    #[test]
    fn spans_nest_end_with_their_last_handle_and_reach_the_queue() {
        let (sub, handle) = subscriber();
        nesting(tracing::Dispatch::new(sub), &handle);
    }

    /// The same through the public layer on `tracing_subscriber`'s registry (a Rust program
    /// with a subscriber of its own).
    #[test]
    fn the_layer_on_a_registry_records_alike() {
        use tracing_subscriber::layer::SubscriberExt;
        let layer = layer();
        let handle = layer.handle();
        nesting(
            tracing::Dispatch::new(tracing_subscriber::registry().with(layer)),
            &handle,
        );
    }

    fn nesting(dispatch: tracing::Dispatch, handle: &crate::telemetry::ExportHandle) {
        let (trace, span) = ([7u8; 16], [9u8; 8]);
        tracing::dispatcher::with_default(&dispatch, || {
            crate::telemetry::NEXT_IDS.set(Some(crate::telemetry::SpanIds {
                trace,
                span,
                parent: None,
            }));
            let outer = tracing::info_span!(target: "mcpcore::test", "outer");
            crate::telemetry::NEXT_IDS.set(None);
            let copy = outer.clone();
            {
                let _in = outer.enter();
                assert_eq!(
                    tracing::Span::current().metadata().map(|m| m.name()),
                    Some("outer")
                );
                let inner = tracing::info_span!(target: "mcpcore::test", "inner", n = 3);
                inner.record("n", 4);
                drop(inner);
            }
            assert!(tracing::Span::current().is_none(), "left: no current span");
            let q = handle.take();
            assert_eq!(q.ends.len(), 1, "the inner span ended");
            assert!(contains(&q.bytes, &trace), "inner is in the parent's trace");
            assert!(
                contains(&q.bytes, &span),
                "inner names its parent's span id"
            );
            assert!(contains(&q.bytes, b"inner"));
            drop(outer);
            assert!(
                handle.take().ends.is_empty(),
                "a clone still holds the span"
            );
            drop(copy);
            let q = handle.take();
            assert_eq!(q.ends.len(), 1, "the last handle ended it");
            assert!(contains(&q.bytes, b"outer"));
        });
    }

    /// Spans of other targets are not made at all (they cost a callsite check).
    #[test]
    fn only_mcpcore_spans_are_recorded() {
        let (sub, handle) = subscriber();
        tracing::subscriber::with_default(sub, || {
            let s = tracing::info_span!(target: "elsewhere", "theirs");
            assert!(s.is_disabled());
            drop(s);
            assert!(handle.take().ends.is_empty());
        });
    }
}
