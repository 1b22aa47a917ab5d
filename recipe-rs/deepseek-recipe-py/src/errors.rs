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
        Error::Parse(_) => "RequestParseError",
        Error::Api(_) => "ConversionError",
        Error::Tokenizer(_) => "TokenizerError",
        Error::Encode(_) => "EncodeError",
        Error::Image(_) => "ImageError",
        Error::Constraint(_) => "ConstraintError",
        _ => "RecipeError",
    }
}

/// Converts a core error into the matching `deepseek_recipe.errors` exception (a plain
/// `ValueError` if that module cannot be imported). API errors also carry their HTTP status and
/// their JSON body text: `ConversionError(message, status_code, body_json)`; image errors their
/// kind and retryability: `ImageError(message, kind, retryable)`.
pub(crate) fn to_py_err(err: Error) -> PyErr {
    let message = err.to_string();
    Python::attach(|py| {
        let class = py
            .import("deepseek_recipe.errors")
            .and_then(|module| module.getattr(class_name(&err)))
            .and_then(|class| class.cast_into::<PyType>().map_err(PyErr::from));
        match (class, &err) {
            (Ok(class), Error::Api(api)) => {
                PyErr::from_type(class, (message, api.status_code, api.body_json()))
            }
            (Ok(class), Error::Image(image)) => PyErr::from_type(
                class,
                (message, image.kind().as_str(), image.is_retryable()),
            ),
            (Ok(class), _) => PyErr::from_type(class, message),
            (Err(_), _) => PyValueError::new_err(message),
        }
    })
}
