//! The exception classes of `deepseek_recipe` and the one place where core errors become them.
//!
//! Every class is defined here, in the module `deepseek_recipe.errors` (which re-exports them),
//! and derives from `RecipeError(ValueError)`. `ConversionError` and `ImageError` take their
//! extra values as constructor arguments and keep them as attributes through pickling.

use deepseek_recipe::{Error, INVALID_JSON_PREFIX};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};

create_exception!(
    deepseek_recipe.errors,
    RecipeError,
    PyValueError,
    "Base class of every error deepseek_recipe raises on bad input."
);
create_exception!(
    deepseek_recipe.errors,
    TokenizerError,
    RecipeError,
    "A tokenizer could not be loaded (invalid or unsupported `tokenizer.json`), or was given an \
     unknown token id."
);
create_exception!(
    deepseek_recipe.errors,
    RequestParseError,
    RecipeError,
    "A request body is not valid JSON or not a request of its protocol (wrong types, missing \
     fields). The official API has no documented status for this stage."
);
create_exception!(
    deepseek_recipe.errors,
    ConversionError,
    RecipeError,
    "A well-formed request the official API rejects: carries its HTTP status and error body.\n\n\
     `ConversionError(message, status_code, body)`: `body` is the error body as a dict or as \
     its JSON text; `status_code` and `body` (a dict) are attributes."
);
create_exception!(
    deepseek_recipe.errors,
    EncodeError,
    RecipeError,
    "A rendered prompt could not be encoded (a special-token spelling is not in the tokenizer)."
);
create_exception!(
    deepseek_recipe.errors,
    ConstraintError,
    RecipeError,
    "An output constraint that no constrained-decoding grammar can express (a schema that is \
     not valid JSON, a required tool parameter the markup cannot carry, ...), or a grammar the \
     backend's grammar engine cannot compile."
);
create_exception!(
    deepseek_recipe.errors,
    ImageError,
    RecipeError,
    "An image could not be fetched, decoded or resolved (V4.1 image input).\n\n\
     `ImageError(message, kind, retryable=False)`: `kind` names the reason as the reference \
     does (`TooManyImages`, `ImageTooLarge`, `UnsupportedMediaType`, `Decode`, `Fetch`, \
     `DestinationRejected`, ...) and `retryable` says whether retrying the same operation may \
     succeed. The official API's HTTP status for these errors is not known, so none is attached."
);

/// Converts a core error into its exception class: `ConversionError(message, status_code,
/// body_json)` for API errors, `ImageError(message, kind, retryable)` for image errors, the
/// stage's class for the others (`RecipeError` for stream misuse).
pub(crate) fn to_py_err(err: Error) -> PyErr {
    let message = err.to_string();
    match err {
        Error::Parse(_) => RequestParseError::new_err(message),
        Error::Api(api) => ConversionError::new_err((message, api.status_code, api.body_json())),
        Error::Tokenizer(_) => TokenizerError::new_err(message),
        Error::Encode(_) => EncodeError::new_err(message),
        Error::Image(image) => {
            ImageError::new_err((message, image.kind().as_str(), image.is_retryable()))
        }
        Error::Constraint(_) => ConstraintError::new_err(message),
        _ => RecipeError::new_err(message),
    }
}

/// Sets the exception's `args` to `(message,)`, as `ValueError(message)` would, so that
/// `str(error)` is the message.
fn init_message(error: &Bound<'_, PyAny>, message: String) -> PyResult<()> {
    error.setattr("args", PyTuple::new(error.py(), [message])?)
}

/// `ConversionError.__init__`: the message, the HTTP status and the body (a dict, or its JSON
/// text, which is parsed).
#[pyfunction]
#[pyo3(text_signature = "(self, message, status_code, body)")]
fn conversion_error_init(
    error: &Bound<'_, PyAny>,
    message: String,
    status_code: u16,
    body: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let py = error.py();
    let body = match body.cast::<PyDict>() {
        Ok(dict) => dict.clone(),
        Err(_) => py
            .import("json")?
            .call_method1("loads", (body,))?
            .cast_into::<PyDict>()?,
    };
    init_message(error, message)?;
    error.setattr("status_code", status_code)?;
    error.setattr("body", body)
}

/// `ConversionError.__reduce__`: rebuilt from the message, the status and the body.
#[pyfunction]
#[pyo3(text_signature = "(self)")]
fn conversion_error_reduce<'py>(error: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let args = (
        error.str()?,
        error.getattr("status_code")?,
        error.getattr("body")?,
    );
    (error.get_type(), args).into_pyobject(error.py())
}

/// `ImageError.__init__`: the message, the reference's kind and whether a retry may succeed.
#[pyfunction]
#[pyo3(signature = (error, message, kind, retryable=false))]
#[pyo3(text_signature = "(self, message, kind, retryable=False)")]
fn image_error_init(
    error: &Bound<'_, PyAny>,
    message: String,
    kind: String,
    retryable: bool,
) -> PyResult<()> {
    init_message(error, message)?;
    error.setattr("kind", kind)?;
    error.setattr("retryable", retryable)
}

/// `ImageError.__reduce__`: rebuilt from the message, the kind and the retryability.
#[pyfunction]
#[pyo3(text_signature = "(self)")]
fn image_error_reduce<'py>(error: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
    let args = (
        error.str()?,
        error.getattr("kind")?,
        error.getattr("retryable")?,
    );
    (error.get_type(), args).into_pyobject(error.py())
}

/// `RequestParseError.is_invalid_json`: whether the body is not JSON at all, rather than JSON
/// of the wrong shape.
#[pyfunction]
fn request_parse_error_is_invalid_json(error: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(error.str()?.to_str()?.starts_with(INVALID_JSON_PREFIX))
}

/// Installs `function` on `class` as the method `name`. Native functions do not bind to an
/// instance by themselves; `functools.partialmethod` makes them methods.
fn add_method(
    class: &Bound<'_, PyType>,
    name: &str,
    function: Bound<'_, pyo3::types::PyCFunction>,
) -> PyResult<()> {
    let py = class.py();
    let method = py
        .import("functools")?
        .getattr("partialmethod")?
        .call1((function,))?;
    class.setattr(name, method)
}

/// Adds the exception classes to the module, with their constructors, pickling and properties.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let conversion = py.get_type::<ConversionError>();
    add_method(
        &conversion,
        "__init__",
        wrap_pyfunction!(conversion_error_init, m)?,
    )?;
    add_method(
        &conversion,
        "__reduce__",
        wrap_pyfunction!(conversion_error_reduce, m)?,
    )?;
    let image = py.get_type::<ImageError>();
    add_method(&image, "__init__", wrap_pyfunction!(image_error_init, m)?)?;
    add_method(
        &image,
        "__reduce__",
        wrap_pyfunction!(image_error_reduce, m)?,
    )?;
    let is_invalid_json = wrap_pyfunction!(request_parse_error_is_invalid_json, m)?;
    let property = py.import("builtins")?.getattr("property")?.call1((
        &is_invalid_json,
        py.None(),
        py.None(),
        "Whether the body is not JSON at all, rather than JSON of the wrong shape.",
    ))?;
    py.get_type::<RequestParseError>()
        .setattr("is_invalid_json", property)?;
    m.add("INVALID_JSON_PREFIX", INVALID_JSON_PREFIX)?;
    for class in [
        py.get_type::<RecipeError>(),
        py.get_type::<TokenizerError>(),
        py.get_type::<RequestParseError>(),
        conversion,
        py.get_type::<EncodeError>(),
        py.get_type::<ConstraintError>(),
        image,
    ] {
        m.add(class.name()?, class)?;
    }
    Ok(())
}
