//! The one place where core errors become Python exceptions.
//!
//! The exception classes are defined in Python (`deepseek_recipe/errors.py`); every one derives
//! from `RecipeError(ValueError)`.

use deepseek_recipe::Error;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// The name of the `deepseek_recipe.errors` class an error is raised as.
fn class_name(err: &Error) -> &'static str {
    match err {
        Error::Tokenizer(_) => "TokenizerError",
        _ => "RecipeError",
    }
}

/// Converts a core error into the matching `deepseek_recipe.errors` exception (a plain
/// `ValueError` if that module cannot be imported).
pub(crate) fn to_py_err(err: Error) -> PyErr {
    let message = err.to_string();
    Python::attach(|py| {
        let class = py
            .import("deepseek_recipe.errors")
            .and_then(|module| module.getattr(class_name(&err)))
            .and_then(|class| class.cast_into::<PyType>().map_err(PyErr::from));
        match class {
            Ok(class) => PyErr::from_type(class, message),
            Err(_) => PyValueError::new_err(message),
        }
    })
}
