//! Python lists of token ids, built from shared int objects.
//!
//! A list of ids needs one Python int per id, made under the GIL; making each afresh (allocate,
//! fill, later free) costs more than encoding it. The ints below [`SHARED_IDS`] are made once per
//! process and each list takes new references to them; by BPE's construction the frequent tokens
//! have the low ids (96% of the ids of the bench corpus are below 65,536).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyInt, PyList};

/// Ids below this share one int object each (about 2.5 MB for all of them).
const SHARED_IDS: u32 = 1 << 16;

/// The shared ints `0..SHARED_IDS`, made on first use.
fn shared_ints(py: Python<'_>) -> &[Py<PyInt>] {
    static INTS: PyOnceLock<Vec<Py<PyInt>>> = PyOnceLock::new();
    INTS.get_or_init(py, || {
        (0..SHARED_IDS)
            .map(|id| PyInt::new(py, id).unbind())
            .collect()
    })
}

/// `ids` as a Python list of ints.
pub(crate) fn id_list<'py>(py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
    let shared = shared_ints(py);
    PyList::new(
        py,
        ids.iter().map(|&id| match shared.get(id as usize) {
            Some(int) => int.bind(py).clone(),
            None => PyInt::new(py, id),
        }),
    )
}

/// Each of `batch` as a Python list of ints, in a list.
pub(crate) fn id_lists<'py>(py: Python<'py>, batch: &[Vec<u32>]) -> PyResult<Bound<'py, PyList>> {
    let lists = batch
        .iter()
        .map(|ids| id_list(py, ids))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, lists)
}
