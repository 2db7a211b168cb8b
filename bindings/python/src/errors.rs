//! Core errors as the Python exceptions of `mcpcore.errors` (defined in Python). Called with the
//! interpreter lock held (by the bridge when it sets a result).

use mcpcore::client::ClientError;
use mcpcore::server::PeerError;
use mcpcore::{ErrorKind, ErrorObject};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::convert;

fn build(py: Python<'_>, class: &str, args: PyResult<Bound<'_, PyTuple>>) -> PyErr {
    let made = args.and_then(|args| py.import("mcpcore.errors")?.getattr(class)?.call1(args));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// `McpError(code, message, data)`.
pub fn rpc(py: Python<'_>, e: &ErrorObject) -> PyErr {
    let args = (|| {
        let data = match &e.data {
            Some(d) => convert::to_py(py, d)?,
            None => py.None().into_bound(py),
        };
        PyTuple::new(
            py,
            [
                e.code.into_pyobject(py)?.into_any(),
                e.message.as_str().into_pyobject(py)?.into_any(),
                data,
            ],
        )
    })();
    build(py, "McpError", args)
}

/// A non-RPC failure: `McpcoreError(kind, message)` (`McpTimeoutError`, a `TimeoutError`, for
/// timeouts; `McpCancelledError` for cancellations; `McpConnectionError`, a `ConnectionError`,
/// when the connection failed or is gone).
pub fn kinded(py: Python<'_>, kind: ErrorKind, message: String) -> PyErr {
    let class = match kind {
        ErrorKind::Timeout => "McpTimeoutError",
        ErrorKind::Cancelled => "McpCancelledError",
        ErrorKind::Transport | ErrorKind::Closed => "McpConnectionError",
        _ => "McpcoreError",
    };
    build(
        py,
        class,
        PyTuple::new(py, [kind.as_str().to_owned(), message]),
    )
}

/// A client call's failure.
pub fn client(py: Python<'_>, e: ClientError) -> PyErr {
    match &e {
        ClientError::Rpc(obj) => rpc(py, obj),
        _ => kinded(py, e.kind(), e.to_string()),
    }
}

/// A server→client request's failure. `InputRequired` (2026-07-28) becomes the
/// `mcpcore.errors.InputRequired` signal, which must reach the handler wrapper unhandled.
pub fn peer(py: Python<'_>, e: PeerError) -> PyErr {
    match &e {
        PeerError::Rpc(obj) => rpc(py, obj),
        PeerError::InputRequired(key) => {
            build(py, "InputRequired", PyTuple::new(py, [key.as_str()]))
        }
        _ => kinded(py, e.kind(), e.to_string()),
    }
}
