//! JSON ↔ Python values, in one place (pythonize): `dict`/`list`/`str`/`int`/`float`/`bool`/`None`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::Value;

/// A JSON value as a Python object.
pub fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, v).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A Python object as a JSON value (`TypeError`-like `ValueError` for what JSON cannot hold).
pub fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    pythonize::depythonize(obj)
        .map_err(|e| PyValueError::new_err(format!("not JSON-serializable: {e}")))
}

/// An optional Python object (`None` → `None`) as a JSON value.
pub fn from_py_opt(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Value>> {
    match obj {
        Some(o) if !o.is_none() => from_py(o).map(Some),
        _ => Ok(None),
    }
}

/// A JSON value that becomes a Python object when handed to Python (the result of an awaitable:
/// converted when the result is set, under the interpreter lock the bridge holds then).
pub struct Json(pub Value);

impl<'py> IntoPyObject<'py> for Json {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        to_py(py, &self.0)
    }
}
