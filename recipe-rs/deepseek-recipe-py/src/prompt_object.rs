//! Instances of the Python `RenderedPrompt` dataclass made from native code.
//!
//! The dataclass is frozen, so its `__init__` sets each field through `object.__setattr__`, a
//! Python call per field that cost as much as the rest of a short chat's render. Here the
//! instance comes from `object.__new__` and its fields are written into its instance dictionary,
//! where `object.__setattr__` would put them, without a Python call per field.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyType};

/// A new `prompt_type` instance (the `RenderedPrompt` dataclass) holding `prompt`,
/// `special_ranges` and `image_count`, made without running its `__init__`.
pub(crate) fn prompt_object<'py>(
    prompt_type: &Bound<'py, PyType>,
    prompt: Bound<'py, PyString>,
    special_ranges: Bound<'py, PyList>,
    image_count: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let py = prompt_type.py();
    static OBJECT_NEW: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let object_new = OBJECT_NEW.get_or_try_init(py, || {
        PyResult::Ok(
            py.get_type::<PyAny>()
                .getattr(intern!(py, "__new__"))?
                .unbind(),
        )
    })?;
    let object = object_new.bind(py).call1((prompt_type,))?;
    let fields = object
        .getattr(intern!(py, "__dict__"))?
        .cast_into::<PyDict>()?;
    fields.set_item(intern!(py, "prompt"), prompt)?;
    fields.set_item(intern!(py, "special_ranges"), special_ranges)?;
    fields.set_item(intern!(py, "image_count"), image_count)?;
    Ok(object)
}
