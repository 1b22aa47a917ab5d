//! Integer arguments. PyO3 reads a Python int that does not fit the Rust type as an
//! `OverflowError`; these wrappers raise the exception the argument's documentation names.

use deepseek_recipe::Error;
use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;

use crate::errors::to_py_err;

/// An unsigned Rust integer type that Python ints are read into.
pub(crate) trait Unsigned: for<'a, 'py> FromPyObject<'a, 'py, Error = PyErr> + Copy {
    /// The largest value.
    const MAX: u64;
    /// The name serde gives the type in its error messages.
    const NAME: &'static str;
}

impl Unsigned for u32 {
    const MAX: u64 = u32::MAX as u64;
    const NAME: &'static str = "u32";
}

impl Unsigned for u64 {
    const MAX: u64 = u64::MAX;
    const NAME: &'static str = "u64";
}

impl Unsigned for usize {
    const MAX: u64 = usize::MAX as u64;
    const NAME: &'static str = "usize";
}

/// Reads `value` into `T`: `Ok(Err(text))` with the int's decimal text when it is an int outside
/// `T`'s range; anything that is not an int stays the usual `TypeError`.
pub(crate) fn read<T: Unsigned>(value: &Bound<'_, PyAny>) -> PyResult<Result<T, String>> {
    match value.extract::<T>() {
        Ok(number) => Ok(Ok(number)),
        Err(err) if err.is_instance_of::<PyOverflowError>(value.py()) => {
            Ok(Err(value.str()?.to_string()))
        }
        Err(err) => Err(err),
    }
}

/// A count, size or limit argument: out of range raises `ValueError` with the value and range.
pub(crate) struct Count<T>(pub T);

impl<'py, T: Unsigned> FromPyObject<'_, 'py> for Count<T> {
    type Error = PyErr;

    fn extract(value: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        read::<T>(&value)?.map(Self).map_err(|text| {
            PyValueError::new_err(format!(
                "integer out of range: {text} (expected 0 to {})",
                T::MAX
            ))
        })
    }
}

/// A number inside an inference chunk (a token id, a token count): out of range raises
/// `RequestParseError` with the words the chunk's JSON form gets.
pub(crate) struct ChunkNumber<T>(pub T);

impl<'py, T: Unsigned> FromPyObject<'_, 'py> for ChunkNumber<T> {
    type Error = PyErr;

    fn extract(value: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        read::<T>(&value)?.map(Self).map_err(|text| {
            to_py_err(Error::Parse(format!(
                "invalid inference chunk: invalid value: integer `{text}`, expected {}",
                T::NAME
            )))
        })
    }
}

/// A token id given to the tokenizer: an int outside `u32` is an unknown id (`TokenizerError`).
pub(crate) struct TokenId(pub u32);

impl<'py> FromPyObject<'_, 'py> for TokenId {
    type Error = PyErr;

    fn extract(value: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        read::<u32>(&value)?
            .map(Self)
            .map_err(|text| to_py_err(Error::unknown_token_id(text)))
    }
}
