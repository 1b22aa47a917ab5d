//! Token id arguments, read without a generic conversion per id where the result is the same.
//!
//! Exact `list`s and `tuple`s of at least [`BULK_MIN_ITEMS`] items are first converted whole by
//! `array.array("I", ids)`: C code that reads an int in about 4 ns, where reading one through the
//! stable ABI (five calls into Python) takes about 10. When it refuses an item (a non-int, an int
//! out of range), or the sequence is short, the items are read by index: an exact `int` inside
//! `u32` is taken as it is; any other item (a `bool`, an `int` subclass, a numpy scalar, an int
//! out of range, a non-int) goes through the caller's conversion of one id, so its value or error
//! is exactly what that conversion gives. A one-dimensional buffer of native-endian uint32 (format
//! `I`: `encode_array`'s result, a numpy `uint32` array) is copied whole, with no Python work per
//! id. Anything else becomes a list first, as `list(ids)` makes it.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyInt, PyList, PyMemoryView, PyTuple};
use pyo3::PyTypeInfo;

use crate::ints::TokenId;

/// Sequences at least this long are converted whole first; below it the call costs more than
/// the conversion saves.
const BULK_MIN_ITEMS: usize = 64;

/// Token ids given to the tokenizer (read as the module documentation says): an unknown id,
/// negative or beyond `u32` included, raises `TokenizerError` as [`TokenId`] does.
pub(crate) struct TokenIds(pub Vec<u32>);

impl<'py> FromPyObject<'_, 'py> for TokenIds {
    type Error = PyErr;

    fn extract(value: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        let mut ids = Vec::new();
        if let Some(words) = native_uints(&value, 4)? {
            ids.extend(uint32s(words.as_bytes()));
        } else {
            append_ids(&value, &mut ids, |item| Ok(item.extract::<TokenId>()?.0))?;
        }
        Ok(Self(ids))
    }
}

/// A one-dimensional buffer of native-endian unsigned integers of `N` bytes, as its bytes.
pub(crate) struct NativeUints<'py, const N: usize>(pub Bound<'py, PyBytes>);

impl<'py, const N: usize> FromPyObject<'_, 'py> for NativeUints<'py, N> {
    type Error = PyErr;

    fn extract(value: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        native_uints(&value, N)?.map(Self).ok_or_else(|| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "expected a one-dimensional buffer of native-endian unsigned {N}-byte integers"
            ))
        })
    }
}

/// Appends the ids of `value` (a list, a tuple or any iterable) to `ids`, each item that is not
/// an exact `int` inside `u32` read by `convert`.
fn append_ids<'py>(
    value: &Bound<'py, PyAny>,
    ids: &mut Vec<u32>,
    convert: impl Fn(&Bound<'py, PyAny>) -> PyResult<u32>,
) -> PyResult<()> {
    if let Ok(list) = value.cast_exact::<PyList>() {
        append_sequence(list.as_any(), list.iter(), list.len(), ids, convert)
    } else if let Ok(tuple) = value.cast_exact::<PyTuple>() {
        append_sequence(tuple.as_any(), tuple.iter(), tuple.len(), ids, convert)
    } else {
        let list = PyList::type_object(value.py()).call1((value,))?;
        let list = list.cast_into::<PyList>()?;
        append_sequence(list.as_any(), list.iter(), list.len(), ids, convert)
    }
}

/// Appends the ids of the `count` `items` of `sequence`: converted whole when it is long and
/// `array.array` takes every item, else item by item.
fn append_sequence<'py>(
    sequence: &Bound<'py, PyAny>,
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    count: usize,
    ids: &mut Vec<u32>,
    convert: impl Fn(&Bound<'py, PyAny>) -> PyResult<u32>,
) -> PyResult<()> {
    if count >= BULK_MIN_ITEMS {
        if let Some(words) = uint32_array_bytes(sequence) {
            ids.extend(uint32s(words.as_bytes()));
            return Ok(());
        }
    }
    append_items(items, count, ids, convert)
}

/// The bytes of `array.array("I", sequence)`, or `None` when it refuses an item (its error is
/// dropped: the caller reads the items one by one and raises the error they get) or its items
/// are not 4 bytes.
fn uint32_array_bytes<'py>(sequence: &Bound<'py, PyAny>) -> Option<Bound<'py, PyBytes>> {
    static ARRAY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let array_type = ARRAY.import(sequence.py(), "array", "array").ok()?;
    let array = array_type.call1(("I", sequence)).ok()?;
    if array.getattr("itemsize").ok()?.extract::<usize>().ok()? != 4 {
        return None;
    }
    array
        .call_method0("tobytes")
        .ok()?
        .cast_into::<PyBytes>()
        .ok()
}

/// Appends the ids of `count` items to `ids` (each as [`id_of`] reads it).
pub(crate) fn append_items<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    count: usize,
    ids: &mut Vec<u32>,
    convert: impl Fn(&Bound<'py, PyAny>) -> PyResult<u32>,
) -> PyResult<()> {
    ids.reserve(count);
    for item in items {
        ids.push(id_of(&item, &convert)?);
    }
    Ok(())
}

/// The id `item` is: an exact `int` inside `u32` directly, anything else through `convert`.
pub(crate) fn id_of<'py>(
    item: &Bound<'py, PyAny>,
    convert: impl Fn(&Bound<'py, PyAny>) -> PyResult<u32>,
) -> PyResult<u32> {
    let direct = if item.is_exact_instance_of::<PyInt>() {
        item.extract::<u32>().ok()
    } else {
        None
    };
    direct.map_or_else(|| convert(item), Ok)
}

/// The bytes of `value` when it is a one-dimensional buffer of native-endian unsigned integers
/// of `size` bytes; `None` for anything else (not a buffer, another format, more dimensions).
fn native_uints<'py>(
    value: &Bound<'py, PyAny>,
    size: usize,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    if value.is_exact_instance_of::<PyList>() || value.is_exact_instance_of::<PyTuple>() {
        return Ok(None);
    }
    let Ok(view) = PyMemoryView::from(value) else {
        return Ok(None);
    };
    let ndim: usize = view.getattr("ndim")?.extract()?;
    let itemsize: usize = view.getattr("itemsize")?.extract()?;
    let format: String = view.getattr("format")?.extract()?;
    if ndim != 1 || itemsize != size || !is_native_unsigned(&format) {
        return Ok(None);
    }
    Ok(Some(view.call_method0("tobytes")?.cast_into::<PyBytes>()?))
}

/// Whether a `struct` format names one native-endian unsigned integer.
fn is_native_unsigned(format: &str) -> bool {
    let native_order: &[char] = if cfg!(target_endian = "little") {
        &['@', '=', '<']
    } else {
        &['@', '=', '>', '!']
    };
    let letter = format.strip_prefix(native_order).unwrap_or(format);
    matches!(letter, "B" | "H" | "I" | "L" | "Q" | "N")
}

/// The native-endian uint32 values of `bytes` (a whole number of them).
pub(crate) fn uint32s(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|word| u32::from_ne_bytes([word[0], word[1], word[2], word[3]]))
}

/// The native-endian values of `bytes` (a whole number of them): borrowed when `bytes` is
/// aligned for `T` (the data of a Python `bytes` object is), copied otherwise.
pub(crate) fn native_words<T: bytemuck::Pod>(bytes: &[u8]) -> Cow<'_, [T]> {
    match bytemuck::try_cast_slice(bytes) {
        Ok(words) => Cow::Borrowed(words),
        Err(_) => Cow::Owned(
            bytes
                .chunks_exact(std::mem::size_of::<T>())
                .map(bytemuck::pod_read_unaligned)
                .collect(),
        ),
    }
}

/// The id lists `ids[offsets[i]:offsets[i + 1]]` as Python slices them (bounds past the end
/// clamped to it, a range that ends before it starts empty).
pub(crate) fn flat_batch<'a>(ids: &'a [u32], offsets: &[u64]) -> Vec<&'a [u32]> {
    let clamp = |offset: u64| usize::try_from(offset).map_or(ids.len(), |at| at.min(ids.len()));
    offsets
        .windows(2)
        .map(|bounds| {
            let start = clamp(bounds[0]);
            &ids[start..clamp(bounds[1]).max(start)]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_unsigned_formats() {
        for format in ["I", "@I", "=I", "Q", "B", "L", "N"] {
            assert!(is_native_unsigned(format), "{format}");
        }
        for format in ["i", "f", "q", "II", "", "xI", "@i"] {
            assert!(!is_native_unsigned(format), "{format}");
        }
        let foreign = if cfg!(target_endian = "little") {
            ">I"
        } else {
            "<I"
        };
        assert!(!is_native_unsigned(foreign));
    }

    #[test]
    fn words_read_native_endian() {
        let bytes: Vec<u8> = [7u32, u32::MAX, 0]
            .iter()
            .flat_map(|value| value.to_ne_bytes())
            .collect();
        assert_eq!(uint32s(&bytes).collect::<Vec<_>>(), [7, u32::MAX, 0]);
        let words = [3u64, u64::MAX];
        let bytes: Vec<u8> = words.iter().flat_map(|v| v.to_ne_bytes()).collect();
        // Borrowed where aligned, copied where not: the same values either way.
        let aligned: &[u8] = bytemuck::cast_slice(&words);
        assert!(matches!(native_words::<u64>(aligned), Cow::Borrowed(_)));
        for start in 0..8 {
            let mut shifted = vec![0u8; start];
            shifted.extend_from_slice(&bytes);
            assert_eq!(native_words::<u64>(&shifted[start..])[..], words);
        }
    }

    #[test]
    fn flat_batch_slices_like_python() {
        let ids = [10, 11, 12, 13];
        assert_eq!(flat_batch(&ids, &[0, 1, 4]), [&ids[..1], &ids[1..]]);
        assert_eq!(flat_batch(&ids, &[0]), Vec::<&[u32]>::new());
        assert_eq!(flat_batch(&ids, &[]), Vec::<&[u32]>::new());
        assert_eq!(
            flat_batch(&ids, &[3, 1, 9, u64::MAX]),
            [&[][..], &ids[1..], &[][..]]
        );
    }
}
