//! Python callables held by native objects, visible to Python's cycle collector.
//!
//! A handler registered on a server, or a callback given to a client, often refers back to the
//! object that holds it (a decorated closure over the `Server` or `Client`). The native object
//! keeps each such callable in a [`Slot`] it alone owns; its `__traverse__` reports the slots'
//! objects and `__clear__` empties them, so a cycle through native code is collectable like a
//! pure-Python one. Core's server or client keeps running with empty slots: a handler whose
//! callable was collected answers an internal error.

use std::sync::{Arc, Mutex};

use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::PyTraverseError;

/// One Python object, shared between a native owner (which traverses and clears it) and the
/// Rust tasks that call it.
pub struct Slot(Mutex<Option<Py<PyAny>>>);

impl Slot {
    pub fn new(obj: Py<PyAny>) -> Arc<Self> {
        Arc::new(Self(Mutex::new(Some(obj))))
    }

    /// The object (a new reference), or `None` once cleared.
    pub fn get<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyAny>> {
        let g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        g.as_ref().map(|o| o.bind(py).clone())
    }

    /// Report the object to the collector. `try_lock`: a traversal never waits (the lock is only
    /// ever held briefly, and by threads attached to the interpreter).
    pub fn visit(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(g) = self.0.try_lock() {
            visit.call(g.as_ref())?;
        }
        Ok(())
    }

    /// Drop the object (outside the lock: dropping may run Python code).
    pub fn clear(&self) {
        let taken = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        drop(taken);
    }
}

/// The slots one native object owns (each slot is owned by exactly one object, so no reference
/// is reported twice).
#[derive(Default)]
pub struct Owned(Mutex<Vec<Arc<Slot>>>);

impl Owned {
    pub fn push(&self, slot: Arc<Slot>) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(slot);
    }

    pub fn extend(&self, slots: Vec<Arc<Slot>>) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(slots);
    }

    /// Stop owning `slot` (its item was replaced or removed). The slot is not cleared: calls
    /// still running hold it, and its object is released when the last of them ends.
    pub fn release(&self, slot: &Arc<Slot>) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|s| !Arc::ptr_eq(s, slot));
    }

    pub fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(g) = self.0.try_lock() {
            for s in g.iter() {
                s.visit(visit)?;
            }
        }
        Ok(())
    }

    pub fn clear(&self) {
        let slots = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
        for s in slots {
            s.clear();
        }
    }
}
