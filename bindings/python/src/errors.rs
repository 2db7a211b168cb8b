//! Core errors as the Python exceptions of `mcpcore.errors` (defined in Python).

use mcpcore::client::ClientError;
use mcpcore::server::PeerError;
use mcpcore::{ErrorKind, ErrorObject};
use pyo3::prelude::*;

use crate::convert;

fn build(
    py: Python<'_>,
    class: &str,
    args: impl for<'a> FnOnce(Python<'a>) -> PyResult<Bound<'a, pyo3::types::PyTuple>>,
) -> PyErr {
    let made = py
        .import("mcpcore.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1(args(py)?));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// `McpError(code, message, data)`.
pub fn rpc(e: &ErrorObject) -> PyErr {
    Python::attach(|py| {
        build(py, "McpError", |py| {
            let data = match &e.data {
                Some(d) => convert::to_py(py, d)?,
                None => py.None().into_bound(py),
            };
            pyo3::types::PyTuple::new(
                py,
                [
                    e.code.into_pyobject(py)?.into_any(),
                    e.message.clone().into_pyobject(py)?.into_any(),
                    data,
                ],
            )
        })
    })
}

/// A non-RPC failure: `McpcoreError(kind, message)` (a `TimeoutError` subclass for timeouts).
pub fn kinded(kind: ErrorKind, message: String) -> PyErr {
    let class = match kind {
        ErrorKind::Timeout => "McpTimeoutError",
        ErrorKind::Cancelled => "McpCancelledError",
        _ => "McpcoreError",
    };
    Python::attach(|py| {
        build(py, class, |py| {
            pyo3::types::PyTuple::new(py, [kind.as_str().to_owned(), message])
        })
    })
}

/// A client call's failure.
pub fn client(e: ClientError) -> PyErr {
    match &e {
        ClientError::Rpc(obj) => rpc(obj),
        _ => kinded(e.kind(), e.to_string()),
    }
}

/// A server→client request's failure. `InputRequired` (2026-07-28) becomes the
/// `mcpcore.errors.InputRequired` signal, which must reach the handler wrapper unhandled.
pub fn peer(e: PeerError) -> PyErr {
    match &e {
        PeerError::Rpc(obj) => rpc(obj),
        PeerError::InputRequired(key) => {
            let key = key.clone();
            Python::attach(|py| {
                build(py, "InputRequired", |py| {
                    pyo3::types::PyTuple::new(py, [key])
                })
            })
        }
        _ => kinded(e.kind(), e.to_string()),
    }
}
