//! Bindings of stream processing: inference chunks in, protocol chunks / SSE bytes out.

use std::sync::Mutex;

use deepseek_recipe::{
    sse_done_data, Chunk, Error, InferenceChunk, InferenceFinishReason, SseStream, StreamOptions,
    TokenLogprobs, UnknownName,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyList, PyTuple};

use crate::errors::to_py_err;
use crate::ids_in::{append_items, id_of};
use crate::ints::ChunkNumber;
use crate::requests::PyConvertedRequest;
use crate::tokenizer::PyTokenizer;

/// A produced chunk as `(sse_event, compact JSON data)`.
type ChunkRecord = (Option<&'static str>, String);

/// The SSE stream, and the buffers its single-piece calls use (reused between calls).
struct State {
    stream: SseStream,
    buffer: Vec<u8>,
    ids: Vec<u32>,
}

/// Appends the ids of an int sequence to `ids` (a list is read without the iterator protocol).
fn read_ids(piece: &Bound<'_, PyAny>, ids: &mut Vec<u32>) -> PyResult<()> {
    let convert = |id: &Bound<'_, PyAny>| Ok(id.extract::<ChunkNumber<u32>>()?.0);
    if let Ok(list) = piece.cast::<PyList>() {
        append_items(list.iter(), list.len(), ids, convert)
    } else {
        for id in piece.try_iter()? {
            ids.push(id_of(&id?, convert)?);
        }
        Ok(())
    }
}

/// The two items of a pair given as any two-item sequence (a tuple without the iterator).
fn pair<'py>(value: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    if let Ok(tuple) = value.cast::<PyTuple>() {
        if tuple.len() == 2 {
            return Ok((tuple.get_item(0)?, tuple.get_item(1)?));
        }
    }
    let items = value.try_iter()?.collect::<PyResult<Vec<_>>>()?;
    match <[_; 2]>::try_from(items) {
        Ok([first, second]) => Ok((first, second)),
        Err(items) => Err(PyTypeError::new_err(format!(
            "expected a pair, got {} items",
            items.len()
        ))),
    }
}

/// Reads log probabilities as Python passes them: `(logprob, [(token id, logprob), ...])` per
/// token, each pair any two-item sequence.
fn read_logprobs(logprobs: &Bound<'_, PyAny>) -> PyResult<Vec<TokenLogprobs>> {
    logprobs
        .try_iter()?
        .map(|entry| {
            let (logprob, top) = pair(&entry?)?;
            let top = top
                .try_iter()?
                .map(|candidate| {
                    let (id, logprob) = pair(&candidate?)?;
                    Ok((id.extract::<ChunkNumber<u32>>()?.0, logprob.extract()?))
                })
                .collect::<PyResult<_>>()?;
            Ok((logprob.extract()?, top))
        })
        .collect()
}

/// Records of `chunks` (already accumulated).
fn records(chunks: Vec<Chunk>) -> Vec<ChunkRecord> {
    chunks
        .into_iter()
        .map(|chunk| (chunk.sse_event(), chunk.to_json()))
        .collect()
}

/// Turns a model's output into one protocol's chunks, SSE bytes and complete response.
/// The Python `deepseek_recipe.StreamProcessor` subclasses it: its fast paths are these methods
/// themselves, with no Python frame per piece.
#[pyclass(
    name = "StreamProcessor",
    module = "deepseek_recipe._native",
    frozen,
    subclass
)]
pub struct PyStreamProcessor {
    state: Mutex<State>,
}

impl PyStreamProcessor {
    /// Runs `f` on the state (a poisoned lock still holds consistent data: every method
    /// leaves the state valid before it can fail).
    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let mut guard = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }

    /// Runs `write` on the stream with the GIL held (single pieces: releasing it costs more
    /// than the work) and returns what it wrote to the reused buffer as `bytes`.
    fn write_bytes<'py>(
        &self,
        py: Python<'py>,
        write: impl FnOnce(&mut SseStream, &mut Vec<u8>) -> deepseek_recipe::Result<()>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.with(|state| {
            state.buffer.clear();
            write(&mut state.stream, &mut state.buffer).map_err(to_py_err)?;
            Ok(PyBytes::new(py, &state.buffer))
        })
    }

    /// Runs `write` on the stream with the GIL released (batches and other heavy work) and
    /// returns what it wrote as `bytes`.
    fn write_bytes_detached<'py, R: Send>(
        &self,
        py: Python<'py>,
        write: impl FnOnce(&mut SseStream, &mut Vec<u8>) -> deepseek_recipe::Result<R> + Send,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.detach(|| {
            self.with(|state| {
                let mut out = Vec::new();
                write(&mut state.stream, &mut out).map(|_| out)
            })
        });
        Ok(PyBytes::new(py, &bytes.map_err(to_py_err)?))
    }
}

/// Token-id pieces flattened: all ids, and where each piece ends.
struct TokenPieces {
    ids: Vec<u32>,
    ends: Vec<usize>,
}

impl TokenPieces {
    /// Reads a sequence of int sequences (lists are read without the iterator protocol).
    fn extract(pieces: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut flat = Self {
            ids: Vec::new(),
            ends: Vec::new(),
        };
        if let Ok(list) = pieces.cast::<PyList>() {
            flat.ends.reserve(list.len());
            flat.ids.reserve(list.len());
            for piece in list.iter() {
                flat.add(&piece)?;
            }
        } else {
            for piece in pieces.try_iter()? {
                flat.add(&piece?)?;
            }
        }
        Ok(flat)
    }

    fn add(&mut self, piece: &Bound<'_, PyAny>) -> PyResult<()> {
        read_ids(piece, &mut self.ids)?;
        self.ends.push(self.ids.len());
        Ok(())
    }

    /// The pieces as slices of the flat ids.
    fn slices(&self) -> impl Iterator<Item = &[u32]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.ids[start..end])
    }
}

#[pymethods]
impl PyStreamProcessor {
    /// A processor for `converted`, answering as response `response_id` of `model`, set up by
    /// `options_json` (the core's `StreamOptions` as a JSON object: an absent key keeps its
    /// default, an unknown key is an error). `tokenizer` decodes token input.
    #[new]
    #[pyo3(signature = (converted, response_id, model, tokenizer=None, options_json=None))]
    fn new(
        converted: &PyConvertedRequest,
        response_id: String,
        model: String,
        tokenizer: Option<&PyTokenizer>,
        options_json: Option<&str>,
    ) -> PyResult<Self> {
        let options = options_json
            .map_or_else(|| Ok(StreamOptions::default()), StreamOptions::from_json)
            .map_err(to_py_err)?;
        let tokenizer = tokenizer.map(PyTokenizer::token_text);
        let stream =
            SseStream::for_request(&converted.inner, response_id, model, tokenizer, options);
        Ok(Self {
            state: Mutex::new(State {
                stream,
                buffer: Vec::new(),
                ids: Vec::new(),
            }),
        })
    }

    /// Feeds one inference chunk given as JSON; returns `[(sse_event, data_json), ...]`.
    fn push_json_records(&self, py: Python<'_>, chunk_json: &str) -> PyResult<Vec<ChunkRecord>> {
        let chunk = InferenceChunk::from_json(chunk_json).map_err(to_py_err)?;
        py.detach(|| self.with(|s| s.stream.push_chunks(chunk).map(records)))
            .map_err(to_py_err)
    }

    /// Feeds one inference chunk given as JSON; returns the SSE frames it produced.
    fn push_json_sse<'py>(
        &self,
        py: Python<'py>,
        chunk_json: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let chunk = InferenceChunk::from_json(chunk_json).map_err(to_py_err)?;
        self.write_bytes_detached(py, |stream, out| stream.push(chunk, out))
    }

    /// Fast path: feeds a text piece of `token_count` tokens; returns its SSE bytes.
    ///
    /// A `token_count` outside 0..2**64-1 (or a token id outside 32 bits in `push_tokens`)
    /// raises `RequestParseError` and leaves the stream as it was. Usage counters saturate.
    #[pyo3(signature = (text, token_count=ChunkNumber(1)), text_signature = "($self, text, token_count=1)")]
    fn push_text<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        token_count: ChunkNumber<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.write_bytes(py, |stream, out| stream.push_text(text, token_count.0, out))
    }

    /// Fast path: feeds generated token ids (and their logprobs: `(logprob, [(token id,
    /// logprob), ...])` per id); returns their SSE bytes.
    #[pyo3(signature = (token_ids, logprobs=None))]
    fn push_tokens<'py>(
        &self,
        py: Python<'py>,
        token_ids: &Bound<'py, PyAny>,
        logprobs: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let logprobs = logprobs.map(read_logprobs).transpose()?;
        self.with(|state| {
            state.ids.clear();
            read_ids(token_ids, &mut state.ids)?;
            state.buffer.clear();
            state
                .stream
                .push_tokens(&state.ids, logprobs.as_deref(), &mut state.buffer)
                .map_err(to_py_err)?;
            Ok(PyBytes::new(py, &state.buffer))
        })
    }

    /// Batch fast path: feeds text pieces of `token_count` tokens each; returns their SSE bytes.
    ///
    /// The bytes are exactly those of calling `push_text` once per piece, concatenated; the
    /// pieces are processed in one native call with the GIL released. Once the stream ends (a
    /// stop sequence matched) the remaining pieces are not read: check `finished`.
    #[pyo3(
        signature = (pieces, token_count=ChunkNumber(1)),
        text_signature = "($self, pieces, token_count=1)"
    )]
    fn push_text_many<'py>(
        &self,
        py: Python<'py>,
        pieces: Vec<PyBackedStr>,
        token_count: ChunkNumber<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.write_bytes_detached(py, |stream, out| {
            stream.push_text_many(pieces.iter().map(|piece| &**piece), token_count.0, out)
        })
    }

    /// Batch fast path: feeds token-id pieces (each like one `push_tokens` call without
    /// logprobs); returns their SSE bytes.
    ///
    /// The bytes are exactly those of calling `push_tokens` once per piece, concatenated; the
    /// pieces are processed in one native call with the GIL released. Once the stream ends (a
    /// stop sequence matched) the remaining pieces are not read: check `finished`.
    fn push_tokens_many<'py>(
        &self,
        py: Python<'py>,
        pieces: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let pieces = TokenPieces::extract(pieces)?;
        self.write_bytes_detached(py, |stream, out| {
            stream.push_tokens_many(pieces.slices(), out)
        })
    }

    /// Fast path: feeds the backend's finish reason; returns SSE bytes.
    fn push_finish<'py>(
        &self,
        py: Python<'py>,
        finish_reason: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let reason: InferenceFinishReason = finish_reason
            .parse()
            .map_err(|err: UnknownName| to_py_err(Error::Stream(err.to_string())))?;
        self.write_bytes(py, |stream, out| stream.push_finish(reason, out))
    }

    /// Ends the stream; returns `(sse_event, compact JSON)` per chunk produced.
    fn finish_records(&self) -> PyResult<Vec<ChunkRecord>> {
        self.with(|s| s.stream.finish_chunks().map(records))
            .map_err(to_py_err)
    }

    /// Ends the stream (if it has not ended) and returns the last SSE bytes, including the
    /// terminal `data: [DONE]` for Chat Completions (only that once the stream had ended).
    fn finish_sse<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.write_bytes(py, SseStream::finish)
    }

    /// Whether the stream has ended (finish chunk, stop sequence or `finish()`).
    #[getter]
    fn finished(&self) -> bool {
        self.with(|s| s.stream.finished())
    }

    /// The data of the protocol's terminal SSE message (`[DONE]` for Chat), if any.
    #[getter]
    fn done_data(&self) -> Option<&'static str> {
        self.with(|s| sse_done_data(s.stream.accumulator()))
    }

    /// The complete response accumulated from every chunk so far, as compact JSON.
    fn response_json(&self) -> String {
        self.with(|s| s.stream.accumulator().to_json())
    }
}

/// Registers the stream classes on the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyStreamProcessor>()?;
    Ok(())
}
