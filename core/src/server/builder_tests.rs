//! Registration and option tests of [`super::ServerBuilder`].

use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::{BuildError, Handler, ServerBuilder};
use crate::{handler_fn, CallToolResult, HandlerError, Prompt, Resource, ResourceTemplate, Tool};

/// Counts its drops, so a test sees when the builder lets go of a refused handler.
struct Dropped(Arc<AtomicUsize>);
impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// One registration call of the builder, with its handler.
type Register = dyn Fn(&mut ServerBuilder, Arc<dyn Handler>) -> Result<(), BuildError>;

fn counted(drops: &Arc<AtomicUsize>) -> Arc<dyn Handler> {
    let token = Dropped(drops.clone());
    Arc::new(handler_fn(move |_, _: Value| {
        let _keep = &token;
        async { Ok::<_, HandlerError>(CallToolResult::text("ok")) }
    }))
}

/// A second registration under a taken name is refused at once, and its handler released then
/// (a binding's `free_user_data` runs exactly once, before the call returns).
#[test]
fn duplicates_are_refused_at_registration() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut b = ServerBuilder::new("t", "1");
    let twice = |b: &mut ServerBuilder, f: &Register| {
        f(b, counted(&drops)).expect("first registration");
        let before = drops.load(Ordering::SeqCst);
        let e = f(b, counted(&drops)).expect_err("second registration");
        assert!(matches!(e, BuildError::Duplicate(_)), "{e}");
        assert_eq!(drops.load(Ordering::SeqCst), before + 1, "dropped at once");
    };
    twice(&mut b, &|b, h| b.add_tool(Tool::new("t"), h));
    twice(&mut b, &|b, h| b.add_prompt(Prompt::new("p"), h));
    twice(&mut b, &|b, h| {
        b.add_resource(Resource::new("a://b", "b"), h)
    });
    twice(&mut b, &|b, h| {
        b.add_resource_template(ResourceTemplate::new("a://{x}", "x"), h)
    });
    twice(&mut b, &|b, h| b.add_method("x/y".into(), h));
    let e = b
        .add_method("tools/list".into(), counted(&drops))
        .expect_err("built-in");
    assert!(matches!(e, BuildError::Duplicate(_)), "{e}");
    b.build().expect("the refusals left the builder usable");
}

/// Empty names and control characters (NUL above all) are refused for every registration.
#[test]
fn names_with_nul_or_control_characters_are_refused() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut b = ServerBuilder::new("t", "1");
    for bad in ["", "a\0b", "line\nbreak", "del\u{7f}"] {
        let results = [
            b.add_tool(Tool::new(bad), counted(&drops)),
            b.add_prompt(Prompt::new(bad), counted(&drops)),
            b.add_resource(Resource::new(bad, "n"), counted(&drops)),
            b.add_resource_template(ResourceTemplate::new(bad, "n"), counted(&drops)),
            b.add_method(bad.into(), counted(&drops)),
        ];
        for r in results {
            let e = r.expect_err("refused");
            assert!(matches!(e, BuildError::Name { .. }), "{bad:?}: {e}");
        }
    }
    assert_eq!(drops.load(Ordering::SeqCst), 20);
    b.add_tool(Tool::new("fine.name-1_x"), counted(&drops))
        .expect("a TOOL-04 name");
}

/// The chaining API keeps a refusal and reports it from `build`.
#[test]
fn chained_refusals_surface_at_build() {
    let h = || handler_fn(|_, _: Value| async { Ok::<_, HandlerError>(json!({})) });
    let e = ServerBuilder::new("t", "1")
        .tool(Tool::new("t"), h())
        .tool(Tool::new("t"), h())
        .build()
        .err()
        .expect("duplicate");
    assert!(e.to_string().contains("duplicate"), "{e}");
    let e = ServerBuilder::new("t", "1")
        .tool(Tool::new("s").input_schema(json!({"type": "array"})), h())
        .build()
        .err()
        .expect("schema");
    assert!(matches!(e, BuildError::Schema { .. }), "{e}");
}
