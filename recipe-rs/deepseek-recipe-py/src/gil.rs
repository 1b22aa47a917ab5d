//! When native work runs without the GIL.

use pyo3::prelude::*;

/// Work on inputs at least this long runs without holding the GIL; for shorter ones, releasing
/// and taking back the GIL costs more than other Python threads gain.
const DETACH_MIN_BYTES: usize = 4096;

/// `work`'s result, computed without the GIL when its input is at least [`DETACH_MIN_BYTES`]
/// bytes long, holding it otherwise.
pub(crate) fn detach_for<T: Send>(
    py: Python<'_>,
    input_bytes: usize,
    work: impl FnOnce() -> T + Send,
) -> T {
    if input_bytes >= DETACH_MIN_BYTES {
        py.detach(work)
    } else {
        work()
    }
}
