//! The registry a [`crate::server::NativeServer`] keeps until serving starts, and the one place
//! that turns the JavaScript layer's changes (add, remove, enable, disable) into either an edit
//! of that registry or a call of core's dynamic API (`Server::add_json`, `Server::remove`,
//! `Server::set_enabled`) once the server is built. The rules of a change while serving
//! (replacing in place, in-flight calls finishing, coalesced `list_changed`) are core's.

use std::sync::Arc;

use mcpcore::server::{BuildError, ItemKind, ResultShape};
use mcpcore::{Handler, Server};
use serde_json::Value;

use crate::handler::{InvokeFn, JsHandler};
use crate::stdio::DirectFn;

/// One registration: `kind` is the builder's spelling (`"tool"`, `"gate"`, `"prompt"`,
/// `"resource"`, `"resource_template"`, `"completion"`).
pub struct Entry {
    pub kind: String,
    pub definition: Value,
    pub invoke: Arc<InvokeFn>,
    pub direct: Option<Arc<DirectFn>>,
    /// False: registered disabled (it is disabled on the built server before anyone sees it).
    pub enabled: bool,
}

impl Entry {
    /// The name, URI or URI template the entry is keyed by (none for the completion handler).
    pub fn key(&self) -> Option<&str> {
        key_of(&self.kind, &self.definition)
    }

    /// Core's handler calling this entry's JavaScript function.
    pub fn handler(&self) -> Arc<dyn Handler> {
        Arc::new(JsHandler {
            invoke: self.invoke.clone(),
            direct: self.direct.clone(),
            shape: Arc::new(ResultShape::of(&self.kind, &self.definition)),
        })
    }
}

/// The key field of a definition of `kind`.
fn key_of<'a>(kind: &str, def: &'a Value) -> Option<&'a str> {
    let field = match kind {
        "tool" | "gate" | "prompt" => "name",
        "resource" => "uri",
        "resource_template" => "uriTemplate",
        _ => return None,
    };
    def.get(field)?.as_str()
}

/// Core's item kind for the builder's spelling; `None` for gates and the completion handler,
/// which core does not change while serving.
pub fn item_kind(kind: &str) -> Option<ItemKind> {
    match kind {
        "resource_template" => Some(ItemKind::ResourceTemplate),
        "tool" | "prompt" | "resource" => ItemKind::parse(kind),
        _ => None,
    }
}

/// Put `e` in the registry kept before serving in place of the entry of the same kind and key
/// (a handle's `update`), enabled, as core replaces while serving; replacing a tool drops its
/// gate (the JavaScript layer adds the new one next, if any).
pub fn put(entries: &mut Vec<Entry>, e: Entry) {
    let Some(key) = e.key().map(str::to_owned) else {
        // The completion handler: a later one replaces it at build.
        entries.push(e);
        return;
    };
    if e.kind == "tool" {
        entries.retain(|x| !(x.kind == "gate" && x.key() == Some(key.as_str())));
    }
    match entries
        .iter_mut()
        .find(|x| x.kind == e.kind && x.key() == Some(key.as_str()))
    {
        Some(slot) => *slot = e,
        None => entries.push(e),
    }
}

/// Remove the entry of `kind` under `key` (a tool's gate with it); false when there was none.
pub fn remove(entries: &mut Vec<Entry>, kind: &str, key: &str) -> bool {
    let before = entries.len();
    entries.retain(|x| {
        let hit = x.key() == Some(key) && (x.kind == kind || (kind == "tool" && x.kind == "gate"));
        !hit
    });
    entries.len() != before
}

/// Enable or disable the entry of `kind` under `key`; false when there is none.
pub fn set_enabled(entries: &mut [Entry], kind: &str, key: &str, on: bool) -> bool {
    match entries
        .iter_mut()
        .find(|x| x.kind == kind && x.key() == Some(key))
    {
        Some(e) => {
            e.enabled = on;
            true
        }
        None => false,
    }
}

/// Disable, on the freshly built server, the entries registered disabled (no client has
/// seen its lists yet).
pub fn apply_disabled(server: &Server, entries: &[Entry]) {
    for e in entries.iter().filter(|e| !e.enabled) {
        if let (Some(kind), Some(key)) = (item_kind(&e.kind), e.key()) {
            server.set_enabled(kind, key, false);
        }
    }
}

/// Add `e` to the running `server` through core's dynamic API (replacing the item under the
/// same key in place). A refusal is the message `lib/` throws; a kind the server does not
/// advertise names the constructor option that advertises every kind.
pub fn add_live(server: &Server, e: &Entry) -> Result<(), String> {
    let Some(kind) = item_kind(&e.kind) else {
        return Err(match e.kind.as_str() {
            "gate" => "a tool with a gate cannot be added while the server serves".into(),
            "completion" => "the completion handler cannot be set while the server serves".into(),
            other => format!("unknown entry kind {other:?}"),
        });
    };
    match server.add_json(kind, e.definition.clone(), e.handler()) {
        Ok(_) => Ok(()),
        Err(BuildError::NotAdvertised(capability)) => Err(format!(
            "this server does not advertise {capability}, so none can be added while it serves: \
             create it with new Server({{name, version, dynamic: true}}) to advertise every kind"
        )),
        Err(other) => Err(other.to_string()),
    }
}
