//! Bindings of stream processing: inference chunks in, protocol chunks / SSE bytes out.

use std::sync::Mutex;

use deepseek_recipe::stream::chunk::sse_frame;
use deepseek_recipe::stream::ids::{unix_now, IdSource};
use deepseek_recipe::stream::inference::TokenLogprobs;
use deepseek_recipe::stream::responses::ResponsesEcho;
use deepseek_recipe::stream::{
    Accumulator, Chunk, GeneratorConfig, InferenceChunk, InferenceFinishReason, ParsingOptions,
    PromptUsage, StreamProcessor, TokenizerText,
};
use deepseek_recipe::Error;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::to_py_err;
use crate::requests::PyConvertedRequest;
use crate::tokenizer::PyTokenizer;

/// A produced chunk as `(sse_event, compact JSON data)`.
type ChunkRecord = (Option<&'static str>, String);

/// The processor, the accumulated response and the protocol's terminal SSE data.
struct State {
    processor: StreamProcessor,
    accumulator: Accumulator,
}

impl State {
    /// Accumulates `chunks` and returns them as records.
    fn records(&mut self, chunks: Vec<Chunk>) -> Vec<ChunkRecord> {
        chunks
            .into_iter()
            .map(|chunk| {
                self.accumulator.accumulate(&chunk);
                (chunk.sse_event(), chunk.to_json())
            })
            .collect()
    }

    /// Accumulates `chunks` and returns their SSE frames as one byte string.
    fn sse(&mut self, chunks: Vec<Chunk>) -> Vec<u8> {
        let mut out = String::new();
        for chunk in chunks {
            self.accumulator.accumulate(&chunk);
            out.push_str(&chunk.to_sse());
        }
        out.into_bytes()
    }
}

/// Turns a model's output into one protocol's chunks, SSE bytes and complete response.
#[pyclass(name = "StreamProcessor", module = "deepseek_recipe._native", frozen)]
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
}

/// Parses a finish reason as the inference chunk JSON spells it.
fn finish_reason(name: &str) -> PyResult<InferenceFinishReason> {
    match name {
        "stop" => Ok(InferenceFinishReason::Stop),
        "length" => Ok(InferenceFinishReason::Length),
        "content_filter" => Ok(InferenceFinishReason::ContentFilter),
        other => Err(to_py_err(Error::Stream(format!(
            "unknown finish reason \"{other}\"; expected \"stop\", \"length\" or \"content_filter\""
        )))),
    }
}

#[pymethods]
impl PyStreamProcessor {
    /// A processor for `converted`, answering as response `response_id` of `model`.
    ///
    /// `parsing_options_json` replaces the converted parsing options; `prompt_usage` seeds the
    /// accumulated response's usage until the ready chunk reports it; `echo`,
    /// `namespace_tool_map` and `thinking_mode` reproduce the reference harness's knobs. Without
    /// `tokenizer` the bundled V4 one decodes token input, unless `use_tokenizer` is false (then
    /// only text input works and reasoning tokens are not counted).
    #[new]
    #[pyo3(signature = (
        converted, response_id, model, tokenizer=None, seed=None, created=None, signature=None,
        parsing_options_json=None, prompt_usage=None, echo=true, namespace_tool_map=true,
        thinking_mode=None, use_tokenizer=true,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        converted: &PyConvertedRequest,
        response_id: String,
        model: String,
        tokenizer: Option<&PyTokenizer>,
        seed: Option<u64>,
        created: Option<u64>,
        signature: Option<String>,
        parsing_options_json: Option<&str>,
        prompt_usage: Option<(u64, u64)>,
        echo: bool,
        namespace_tool_map: bool,
        thinking_mode: Option<bool>,
        use_tokenizer: bool,
    ) -> PyResult<Self> {
        let mut config = GeneratorConfig::for_request(&converted.inner, response_id, model);
        if let Some(created) = created {
            config.set_created(created);
        }
        if let Some(signature) = signature {
            config.set_signature(signature);
        }
        match &mut config {
            GeneratorConfig::Responses(responses) => {
                if !echo {
                    responses.echo = ResponsesEcho::default();
                }
                if !namespace_tool_map {
                    responses.namespace_tools.clear();
                }
            }
            GeneratorConfig::Messages(messages) => {
                if let Some(thinking_mode) = thinking_mode {
                    messages.thinking_mode = thinking_mode;
                }
            }
            GeneratorConfig::Chat(_) => {}
        }
        let options = match parsing_options_json {
            Some(json) => serde_json::from_str::<ParsingOptions>(json).map_err(|err| {
                to_py_err(Error::Parse(format!("invalid parsing options: {err}")))
            })?,
            None => converted.inner.parsing_options.clone(),
        };
        let tokenizer = match tokenizer {
            Some(tokenizer) => Some(tokenizer.token_text()),
            None => use_tokenizer.then(TokenizerText::deepseek_v4),
        };
        let ids = seed.map_or_else(IdSource::random, IdSource::seeded);
        let prompt = prompt_usage.map_or_else(PromptUsage::default, |(tokens, hits)| PromptUsage {
            prompt_tokens: tokens,
            prompt_cache_hit_tokens: hits,
        });
        let accumulator =
            Accumulator::for_config(&config, created.unwrap_or_else(unix_now), prompt);
        let processor = StreamProcessor::with_id_source(config, options, tokenizer, ids);
        Ok(Self {
            state: Mutex::new(State {
                processor,
                accumulator,
            }),
        })
    }

    /// Feeds one inference chunk given as JSON; returns `[(sse_event, data_json), ...]`.
    fn push(&self, py: Python<'_>, chunk_json: &str) -> PyResult<Vec<ChunkRecord>> {
        let chunk = InferenceChunk::from_json(chunk_json).map_err(to_py_err)?;
        py.detach(|| self.with(|s| s.processor.push(chunk).map(|c| s.records(c))))
            .map_err(to_py_err)
    }

    /// Feeds one inference chunk given as JSON; returns the SSE frames it produced.
    fn push_sse<'py>(&self, py: Python<'py>, chunk_json: &str) -> PyResult<Bound<'py, PyBytes>> {
        let chunk = InferenceChunk::from_json(chunk_json).map_err(to_py_err)?;
        let bytes = py
            .detach(|| self.with(|s| s.processor.push(chunk).map(|c| s.sse(c))))
            .map_err(to_py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Feeds a text piece of `token_count` tokens; returns the SSE frames it produced.
    fn push_text_sse<'py>(
        &self,
        py: Python<'py>,
        content: String,
        token_count: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let chunk = InferenceChunk::text(content, token_count);
        let bytes = self
            .with(|s| s.processor.push(chunk).map(|c| s.sse(c)))
            .map_err(to_py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Feeds generated token ids (with optional logprobs); returns the SSE frames produced.
    #[pyo3(signature = (token_ids, logprobs=None))]
    fn push_tokens_sse<'py>(
        &self,
        py: Python<'py>,
        token_ids: Vec<u32>,
        logprobs: Option<Vec<TokenLogprobs>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let chunk = InferenceChunk::tokens(token_ids, logprobs);
        let bytes = self
            .with(|s| s.processor.push(chunk).map(|c| s.sse(c)))
            .map_err(to_py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Feeds the backend's finish reason; returns the SSE frames it produced.
    fn push_finish_sse<'py>(&self, py: Python<'py>, reason: &str) -> PyResult<Bound<'py, PyBytes>> {
        let chunk = InferenceChunk::finish(finish_reason(reason)?);
        let bytes = self
            .with(|s| s.processor.push(chunk).map(|c| s.sse(c)))
            .map_err(to_py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Ends the stream; returns the chunks this produced as `[(sse_event, data_json), ...]`.
    fn finish(&self) -> PyResult<Vec<ChunkRecord>> {
        self.with(|s| s.processor.finish().map(|c| s.records(c)))
            .map_err(to_py_err)
    }

    /// Ends the stream; returns its last SSE frames, the terminal `[DONE]` included where the
    /// protocol has one. Safe to call after the stream already finished (then only `[DONE]`).
    fn finish_sse<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.with(|s| -> deepseek_recipe::Result<Vec<u8>> {
            let mut out = if s.processor.finished() {
                Vec::new()
            } else {
                let chunks = s.processor.finish()?;
                s.sse(chunks)
            };
            if let Some(done) = s.accumulator.sse_done_data() {
                out.extend_from_slice(sse_frame(None, done).as_bytes());
            }
            Ok(out)
        });
        Ok(PyBytes::new(py, &bytes.map_err(to_py_err)?))
    }

    /// Whether the stream has ended (finish chunk, stop sequence or `finish`).
    #[getter]
    fn finished(&self) -> bool {
        self.with(|s| s.processor.finished())
    }

    /// The data of the protocol's terminal SSE message (`[DONE]` for Chat), if any.
    #[getter]
    fn done_data(&self) -> Option<&'static str> {
        self.with(|s| s.accumulator.sse_done_data())
    }

    /// The complete (non-streamed) response accumulated so far, as JSON.
    fn response_json(&self) -> String {
        self.with(|s| s.accumulator.to_json())
    }
}

/// Registers the stream classes on the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyStreamProcessor>()?;
    Ok(())
}
