//! Bindings of the tokenizer: `Tokenizer` and `IncrementalDecoder`.

use std::path::PathBuf;
use std::sync::OnceLock;

use deepseek_recipe::{IncrementalDecoder, SharedTokenText, Tokenizer, TokenizerText};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyList, PyString};

use crate::errors::to_py_err;
use crate::gil::detach_for;
use crate::id_list::{id_list, id_lists};
use crate::ids_in::{flat_batch, native_words, NativeUints, TokenIds};
use crate::ints::{read, Count};

/// The environment variable that caps the threads of one call (default: the available cores).
const THREADS_ENV: &str = "DEEPSEEK_RECIPE_NUM_THREADS";

/// The default number of threads one call may use: `DEEPSEEK_RECIPE_NUM_THREADS` when it is a
/// positive integer, else the available parallelism (read once per process).
pub(crate) fn default_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        std::env::var(THREADS_ENV)
            .ok()
            .and_then(|value| value.trim().parse::<usize>().ok())
            .filter(|&threads| threads > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
    })
}

/// The bundled DeepSeek V4 tokenizer with the default thread count.
pub(crate) fn default_tokenizer() -> &'static Tokenizer {
    static DEFAULT: OnceLock<Tokenizer> = OnceLock::new();
    DEFAULT.get_or_init(|| Tokenizer::deepseek_v4().with_threads(default_threads()))
}

/// The UTF-8 text of each Python string, borrowed (no copy of ASCII text).
fn borrow_texts<'a>(texts: &'a [Bound<'_, PyString>]) -> PyResult<Vec<&'a str>> {
    texts.iter().map(|text| text.to_str()).collect()
}

/// A `bytearray` of `count` values of `N` bytes each, from `values`.
fn bytearray_of<'py, const N: usize>(
    py: Python<'py>,
    count: usize,
    values: impl Iterator<Item = [u8; N]>,
) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, count * N, |bytes| {
        for (slot, value) in bytes.chunks_exact_mut(N).zip(values) {
            slot.copy_from_slice(&value);
        }
        Ok(())
    })
}

/// A `bytearray` of every id of `batch` in order, as native-endian uint32, written on the
/// tokenizer's threads (the GIL released: nothing else sees the new object yet).
fn ids_bytearray<'py>(
    py: Python<'py>,
    tokenizer: &Tokenizer,
    batch: &[Vec<u32>],
) -> PyResult<Bound<'py, PyByteArray>> {
    let count: usize = batch.iter().map(Vec::len).sum();
    PyByteArray::new_with(py, count * 4, |bytes| {
        py.detach(|| tokenizer.write_ids_ne(batch, bytes))
            .map_err(to_py_err)
    })
}

/// A byte-level BPE tokenizer (see `deepseek_recipe.Tokenizer`).
#[pyclass(name = "Tokenizer", module = "deepseek_recipe._native", frozen)]
pub struct PyTokenizer {
    inner: Tokenizer,
    /// The tokenizer as stream processors read token ids, made on first use and shared.
    token_text: OnceLock<SharedTokenText>,
}

impl PyTokenizer {
    /// Wraps a core tokenizer, allowing it the default thread count.
    fn wrap(inner: Tokenizer) -> Self {
        Self {
            inner: inner.with_threads(default_threads()),
            token_text: OnceLock::new(),
        }
    }

    /// The wrapped core tokenizer (a cheap handle), for the other bindings.
    pub(crate) fn get(&self) -> &Tokenizer {
        &self.inner
    }

    /// The shared token-text view stream processors decode through.
    pub(crate) fn token_text(&self) -> SharedTokenText {
        self.token_text
            .get_or_init(|| TokenizerText::shared(self.inner.clone()))
            .clone()
    }
}

#[pymethods]
impl PyTokenizer {
    /// The bundled DeepSeek V4 tokenizer.
    #[staticmethod]
    fn deepseek_v4(py: Python<'_>) -> Self {
        Self::wrap(py.detach(|| default_tokenizer().clone()))
    }

    /// The text of the bundled DeepSeek V4 `tokenizer.json`.
    #[staticmethod]
    fn deepseek_v4_json() -> &'static str {
        Tokenizer::deepseek_v4_json()
    }

    /// The bundled V4 tokenizer plus the V4.1 special tokens it lacks (V4.1 prompts encode).
    #[staticmethod]
    fn deepseek_v41(py: Python<'_>) -> Self {
        Self::wrap(py.detach(|| Tokenizer::deepseek_v41().with_threads(default_threads())))
    }

    /// The text of the bundled V4 `tokenizer.json` plus the V4.1 special tokens it lacks.
    #[staticmethod]
    fn deepseek_v41_json(py: Python<'_>) -> &'static str {
        py.detach(Tokenizer::deepseek_v41_json)
    }

    /// `json` (a `tokenizer.json` text) with the V4.1 special tokens it lacks added.
    #[staticmethod]
    fn json_with_v41_special_tokens(py: Python<'_>, json: &str) -> PyResult<String> {
        py.detach(|| Tokenizer::json_with_v41_special_tokens(json))
            .map_err(to_py_err)
    }

    /// Reads a `tokenizer.json` file.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let inner = py
            .detach(|| Tokenizer::from_file(&path))
            .map_err(to_py_err)?;
        Ok(Self::wrap(inner))
    }

    /// Reads a `tokenizer.json` from its text.
    #[staticmethod]
    fn from_str(py: Python<'_>, json: &str) -> PyResult<Self> {
        let inner = py
            .detach(|| Tokenizer::from_json(json))
            .map_err(to_py_err)?;
        Ok(Self::wrap(inner))
    }

    /// This tokenizer (same tables) using up to `threads` threads per call (`0` counts as `1`).
    fn with_threads(&self, threads: Count<usize>) -> Self {
        Self {
            inner: self.inner.with_threads(threads.0),
            token_text: OnceLock::new(),
        }
    }

    /// The most threads one call uses.
    #[getter]
    fn threads(&self) -> usize {
        self.inner.threads()
    }

    /// The ids of `text`; `allow_special` recognises added tokens written in it.
    #[pyo3(signature = (text, allow_special = false))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allow_special: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = detach_for(py, text.len(), || self.inner.encode(text, allow_special));
        id_list(py, &ids)
    }

    /// The number of ids of `text`.
    #[pyo3(signature = (text, allow_special = false))]
    fn count(&self, py: Python<'_>, text: &str, allow_special: bool) -> usize {
        detach_for(py, text.len(), || self.inner.count(text, allow_special))
    }

    /// The ids of `text` as a `bytearray` of native-endian uint32 (no Python int per id).
    #[pyo3(signature = (text, allow_special = false))]
    fn encode_array<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allow_special: bool,
    ) -> PyResult<Bound<'py, PyByteArray>> {
        let parts = detach_for(py, text.len(), || {
            self.inner.encode_parts(text, allow_special)
        });
        ids_bytearray(py, &self.inner, &parts)
    }

    /// The ids of each text, encoded in parallel without the GIL.
    #[pyo3(signature = (texts, allow_special = false))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allow_special: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let texts = borrow_texts(&texts)?;
        let batch = py.detach(|| self.inner.encode_batch(&texts, allow_special));
        id_lists(py, &batch)
    }

    /// The ids of each text, encoded in parallel without the GIL, as one `bytearray` of
    /// native-endian uint32 ids (all texts' ids in order) and a `bytearray` of native-endian
    /// uint64 offsets (text `i` is ids `offsets[i]..offsets[i + 1]`).
    #[pyo3(signature = (texts, allow_special = false))]
    fn encode_batch_array<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        allow_special: bool,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        let texts = borrow_texts(&texts)?;
        let batch = py.detach(|| self.inner.encode_batch(&texts, allow_special));
        let ends = batch.iter().scan(0u64, |end, ids| {
            *end += ids.len() as u64;
            Some(*end)
        });
        let offsets = std::iter::once(0).chain(ends).map(u64::to_ne_bytes);
        let offsets = bytearray_of(py, batch.len() + 1, offsets)?;
        Ok((ids_bytearray(py, &self.inner, &batch)?, offsets))
    }

    /// The number of ids of each text, counted in parallel without the GIL.
    #[pyo3(signature = (texts, allow_special = false))]
    fn count_batch(
        &self,
        py: Python<'_>,
        texts: Vec<Bound<'_, PyString>>,
        allow_special: bool,
    ) -> PyResult<Vec<usize>> {
        let texts = borrow_texts(&texts)?;
        Ok(py.detach(|| self.inner.count_batch(&texts, allow_special)))
    }

    /// The text of `ids`; raises `TokenizerError` for an unknown id.
    fn decode(&self, py: Python<'_>, ids: TokenIds) -> PyResult<String> {
        py.detach(|| self.inner.decode(&ids.0)).map_err(to_py_err)
    }

    /// The text of each id list, decoded in parallel without the GIL.
    fn decode_batch(&self, py: Python<'_>, batch: Vec<TokenIds>) -> PyResult<Vec<Py<PyString>>> {
        let lists: Vec<&[u32]> = batch.iter().map(|ids| &ids.0[..]).collect();
        decode_to_strs(py, &self.inner, &lists)
    }

    /// The text of each id list of a flat batch (`encode_batch_array`'s buffers: uint32 ids,
    /// uint64 offsets; list `i` is `ids[offsets[i]:offsets[i + 1]]`), decoded in parallel
    /// without the GIL.
    fn decode_batch_array(
        &self,
        py: Python<'_>,
        ids: NativeUints<'_, 4>,
        offsets: NativeUints<'_, 8>,
    ) -> PyResult<Vec<Py<PyString>>> {
        let (ids, offsets) = (
            native_words(ids.0.as_bytes()),
            native_words(offsets.0.as_bytes()),
        );
        decode_to_strs(py, &self.inner, &flat_batch(&ids, &offsets))
    }

    /// Each id list's tokens' bytes (the UTF-8 that `decode` reads, before replacing invalid
    /// sequences), written in parallel without the GIL into one `bytearray`, and a `bytearray`
    /// of native-endian uint64 offsets (list `i` is bytes `offsets[i]..offsets[i + 1]`).
    fn decode_batch_bytes<'py>(
        &self,
        py: Python<'py>,
        batch: Vec<TokenIds>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        let lists: Vec<&[u32]> = batch.iter().map(|ids| &ids.0[..]).collect();
        decoded_bytearrays(py, &self.inner, &lists)
    }

    /// `decode_batch_bytes` of a flat batch (`encode_batch_array`'s buffers, as
    /// `decode_batch_array` reads them).
    fn decode_batch_array_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: NativeUints<'_, 4>,
        offsets: NativeUints<'_, 8>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        let (ids, offsets) = (
            native_words(ids.0.as_bytes()),
            native_words(offsets.0.as_bytes()),
        );
        decoded_bytearrays(py, &self.inner, &flat_batch(&ids, &offsets))
    }

    /// The id of the token spelled `token`, if any.
    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// The spelling of token `id`, if any (none for an int outside `u32`).
    fn id_to_token(&self, id: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let id = read::<u32>(id)?.ok();
        Ok(id
            .and_then(|id| self.inner.id_to_token(id))
            .map(str::to_owned))
    }

    /// One more than the largest token id.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    /// A streaming decoder over this tokenizer.
    fn incremental_decoder(&self) -> PyIncrementalDecoder {
        PyIncrementalDecoder {
            inner: self.inner.incremental_decoder(),
        }
    }
}

/// The text of each id list of `batch` as a Python `str`: decoded on the tokenizer's threads
/// without the GIL, each block of texts made into `str`s (which needs the GIL, one thread at a
/// time) as soon as it is decoded, so that making the `str`s overlaps with the decoding. The first
/// list (by position) with an unknown id raises `TokenizerError`.
fn decode_to_strs(
    py: Python<'_>,
    tokenizer: &Tokenizer,
    batch: &[&[u32]],
) -> PyResult<Vec<Py<PyString>>> {
    let mut strs: Vec<Option<Py<PyString>>> = Vec::new();
    strs.resize_with(batch.len(), || None);
    let mut first_error: Option<(usize, deepseek_recipe::Error)> = None;
    py.detach(|| {
        tokenizer.decode_batch_blocks(batch, |start, texts| {
            Python::attach(|py| {
                for (index, text) in (start..).zip(texts) {
                    match text {
                        Ok(text) => strs[index] = Some(PyString::new(py, &text).unbind()),
                        Err(err) if first_error.as_ref().is_none_or(|(at, _)| index < *at) => {
                            first_error = Some((index, err));
                        }
                        Err(_) => {}
                    }
                }
            });
        });
    });
    if let Some((_, err)) = first_error {
        return Err(to_py_err(err));
    }
    Ok(strs.into_iter().flatten().collect())
}

/// Every list of `batch` decoded into one `bytearray` of bytes (sized, then written, on the
/// tokenizer's threads without the GIL: nothing else sees the new object yet) and the
/// `bytearray` of its native-endian uint64 offsets.
fn decoded_bytearrays<'py>(
    py: Python<'py>,
    tokenizer: &Tokenizer,
    batch: &[&[u32]],
) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
    let layout = py
        .detach(|| tokenizer.decoded_layout(batch))
        .map_err(to_py_err)?;
    let data = PyByteArray::new_with(py, layout.total_bytes(), |bytes| {
        py.detach(|| tokenizer.write_decoded_bytes(&layout, bytes))
            .map_err(to_py_err)
    })?;
    let offsets = layout.offsets();
    let offsets = bytearray_of(
        py,
        offsets.len(),
        offsets.iter().map(|end| end.to_ne_bytes()),
    )?;
    Ok((data, offsets))
}

/// Streaming decoder: returns only complete UTF-8 text (see `deepseek_recipe.IncrementalDecoder`).
#[pyclass(name = "IncrementalDecoder", module = "deepseek_recipe._native")]
pub struct PyIncrementalDecoder {
    inner: IncrementalDecoder,
}

#[pymethods]
impl PyIncrementalDecoder {
    /// A decoder over `tokenizer` with nothing pending.
    #[new]
    fn new(tokenizer: &PyTokenizer) -> Self {
        Self {
            inner: tokenizer.inner.incremental_decoder(),
        }
    }

    /// Adds `ids`; returns the newly complete text.
    fn push(&mut self, ids: TokenIds) -> PyResult<String> {
        self.inner.push(&ids.0).map_err(to_py_err)
    }

    /// Ends the stream: an incomplete character left over becomes U+FFFD.
    fn finish(&mut self) -> String {
        self.inner.finish()
    }

    /// Whether bytes of an incomplete character are held.
    #[getter]
    fn has_pending(&self) -> bool {
        self.inner.has_pending()
    }
}

/// Adds the tokenizer classes to the module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<PyTokenizer>()?;
    module.add_class::<PyIncrementalDecoder>()?;
    Ok(())
}
