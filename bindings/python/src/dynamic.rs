//! Changing a serving `NativeServer` (core's `Server::add_json`, `remove`, `set_enabled`):
//! the kinds' spellings, the refusal that names the remedy, and which Python callables each
//! registered item owns (so a replaced or removed item's callable stops being owned).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcpcore::server::{BuildError, ItemKind};
use pyo3::exceptions::PyValueError;
use pyo3::PyErr;
use serde_json::Value;

use crate::gc::{Owned, Slot};

/// The kind named by the binding (`"resource_template"`, the builder's entry spelling) or by
/// core (`"resourceTemplate"`).
pub fn kind(name: &str) -> Result<ItemKind, PyErr> {
    let core = if name == "resource_template" {
        "resourceTemplate"
    } else {
        name
    };
    ItemKind::parse(core).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown item kind {name:?}: expected \"tool\", \"prompt\", \"resource\" or \
             \"resource_template\""
        ))
    })
}

/// The key of a builder entry (`gate` belongs to its tool); `None` for the completion handler.
pub fn entry_key(kind: &str, def: &Value) -> Option<(ItemKind, String)> {
    let (item, field) = match kind {
        "tool" | "gate" => (ItemKind::Tool, "name"),
        "prompt" => (ItemKind::Prompt, "name"),
        "resource" => (ItemKind::Resource, "uri"),
        "resource_template" => (ItemKind::ResourceTemplate, "uriTemplate"),
        _ => return None,
    };
    let key = def.get(field).and_then(Value::as_str)?;
    Some((item, key.to_owned()))
}

/// A change core refused; a kind the server does not advertise names the Python remedy.
pub fn refused(e: BuildError) -> PyErr {
    match e {
        BuildError::NotAdvertised(_) => PyValueError::new_err(format!(
            "{e} (in Python: Server(..., options={{\"dynamic\": True}}))"
        )),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// An item: its kind and its name, URI or URI template.
pub type Key = (ItemKind, String);

/// The callables of each registered item, by kind and key. Only [`Owned`] reports them to the
/// collector; this map says which to stop owning when the item is replaced or removed.
#[derive(Default)]
pub struct Items(Mutex<HashMap<Key, Vec<Arc<Slot>>>>);

impl Items {
    /// `slot` belongs to the item under `key` (with the slots it already has: a tool's gate).
    pub fn add(&self, key: Key, slot: Arc<Slot>) {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        g.entry(key).or_default().push(slot);
    }

    /// The item under `key` now has only `slot`: the previous slots are no longer owned.
    pub fn replace(&self, owned: &Owned, key: Key, slot: Arc<Slot>) {
        owned.push(slot.clone());
        let old = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, vec![slot]);
        for s in old.into_iter().flatten() {
            owned.release(&s);
        }
    }

    /// The item under `key` is gone: its slots are no longer owned.
    pub fn forget(&self, owned: &Owned, key: &Key) {
        let old = self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(key);
        for s in old.into_iter().flatten() {
            owned.release(&s);
        }
    }
}
