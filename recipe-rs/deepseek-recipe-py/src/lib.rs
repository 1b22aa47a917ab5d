//! The `deepseek_recipe._native` extension module: argument conversion, the exception classes
//! and the error mapping only.

use pyo3::prelude::*;

mod errors;
mod gil;
mod id_list;
mod ids_in;
mod images;
mod ints;
mod long_str;
mod prompt_object;
mod requests;
mod stream;
mod tokenizer;

/// Every Rust allocation of the module: converting a large request makes and frees many small
/// values, and glibc's allocator took a third of that time (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The native module; the typed API lives in the `deepseek_recipe` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    tokenizer::register(m)?;
    requests::register(m)?;
    stream::register(m)?;
    images::register(m)?;
    Ok(())
}
