//! `NativeSubscription`: core's `subscriptions/listen` stream ([`Subscription`]) as awaitables.

use std::sync::Arc;

use mcpcore::client::Subscription;
use pyo3::prelude::*;
use serde_json::Value;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::bridge;
use crate::convert::{self, Json};

#[pyclass(module = "mcpcore._native", frozen)]
pub struct NativeSubscription {
    sub: Arc<Mutex<Option<Subscription>>>,
    honored: Value,
    closed: CancellationToken,
}

impl NativeSubscription {
    pub fn new(sub: Subscription) -> Self {
        Self {
            honored: sub.honored().clone(),
            sub: Arc::new(Mutex::new(Some(sub))),
            closed: CancellationToken::new(),
        }
    }
}

#[pymethods]
impl NativeSubscription {
    /// The notification types the server honoured (the acknowledgement's `notifications`).
    #[getter]
    fn honored<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.honored)
    }

    /// The next notification (`{"jsonrpc", "method", "params"}`), or `None` once the stream
    /// ended or was closed (an awaitable).
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (sub, closed) = (self.sub.clone(), self.closed.clone());
        bridge::awaitable(py, async move {
            let next = async {
                let mut g = sub.lock().await;
                match g.as_mut() {
                    Some(s) => s.next().await,
                    None => None,
                }
            };
            let v = tokio::select! {
                v = next => v,
                () = closed.cancelled() => None,
            };
            Ok(v.map(Json))
        })
    }

    /// Close the stream (the server sees the listen request cancelled); idempotent.
    fn close<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.closed.cancel();
        let sub = self.sub.clone();
        bridge::awaitable(py, async move {
            let taken = sub.lock().await.take();
            if let Some(s) = taken {
                s.close().await;
            }
            Ok(())
        })
    }
}
