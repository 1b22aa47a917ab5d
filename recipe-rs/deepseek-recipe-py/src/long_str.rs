//! Python `str`s of long texts, built without CPython's slow path for wide characters.
//!
//! CPython decodes UTF-8 into a one-byte `str` and widens it (a new buffer and a copy of what is
//! written so far) at the first character that does not fit: for a megabyte of text with one
//! character beyond U+FFFF this means buffers of up to four times the text's size, allocated
//! fresh (page faults) on every call. Decoding the text in pieces small enough to stay in cache
//! and joining them lets `str.join` allocate the result once, at its final width
//! (docs/performance.md, "Second round").

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

/// UTF-8 bytes per piece: a piece's widest buffer (four bytes a character) fits in L2 cache.
const PIECE_BYTES: usize = 16 * 1024;

/// `text` as a Python `str`: in one call when it is short or ASCII (one width, no widening),
/// otherwise decoded piece by piece and joined.
pub(crate) fn long_str<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyString>> {
    if text.len() <= PIECE_BYTES || text.is_ascii() {
        return Ok(PyString::new(py, text));
    }
    let pieces = PyList::empty(py);
    for piece in pieces_of(text) {
        pieces.append(PyString::new(py, piece))?;
    }
    PyString::new(py, "")
        .call_method1(intern!(py, "join"), (pieces,))?
        .cast_into::<PyString>()
        .map_err(Into::into)
}

/// `text` cut into consecutive pieces of at most `PIECE_BYTES` bytes, each ending on a character
/// boundary.
fn pieces_of(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len().min(PIECE_BYTES);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_text_on_character_boundaries() {
        let text = "a😀é".repeat(PIECE_BYTES / 3);
        let pieces: Vec<&str> = pieces_of(&text).collect();
        assert!(pieces.len() > 1);
        assert!(pieces.iter().all(|piece| piece.len() <= PIECE_BYTES));
        assert_eq!(pieces.concat(), text);
        assert_eq!(pieces_of("").count(), 0);
    }
}
