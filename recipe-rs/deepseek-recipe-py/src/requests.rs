//! Bindings of request conversion, prompt rendering and prompt encoding.

use deepseek_recipe::{
    constraint_grammar, convert_json, encode, infer_protocol as infer_body_protocol,
    ConversionOptions, ConvertedRequest, Error, Protocol, RenderedPrompt, Tokenizer, UnknownName,
};
use std::sync::{Arc, OnceLock};

use deepseek_recipe::protocol::ResponsesRequest;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyString, PyType};

use crate::errors::to_py_err;
use crate::gil::detach_for;
use crate::id_list::id_list;
use crate::ints::Count;
use crate::long_str::long_str;
use crate::prompt_object::prompt_object;
use crate::tokenizer::{default_tokenizer, PyTokenizer};

/// Parses conversion options from their JSON form (`None`: the defaults, shared per process).
fn options(json: Option<&str>) -> PyResult<Arc<ConversionOptions>> {
    static DEFAULTS: OnceLock<Arc<ConversionOptions>> = OnceLock::new();
    match json {
        None => Ok(DEFAULTS.get_or_init(Default::default).clone()),
        Some(text) => Ok(Arc::new(
            ConversionOptions::from_json(text).map_err(to_py_err)?,
        )),
    }
}

/// A converted request together with the options it was converted with.
#[pyclass(name = "ConvertedRequest", module = "deepseek_recipe._native", frozen)]
pub struct PyConvertedRequest {
    pub(crate) inner: ConvertedRequest,
    pub(crate) options: Arc<ConversionOptions>,
    /// The length of the request body: the prompt's size follows it, so a small request is
    /// rendered and encoded holding the GIL.
    body_bytes: usize,
    /// The rendered prompt, made on first use (`render` and `encode` share it).
    rendered: OnceLock<RenderedPrompt>,
    /// What `render` returns, made on its first call.
    rendered_py: PyOnceLock<PythonPrompt>,
}

/// The rendered prompt as `render` returns it: the prompt as a Python `str` (made once, shared by
/// every call) and its special ranges as code-point pairs.
struct PythonPrompt {
    prompt: Py<PyString>,
    special_ranges: Vec<(usize, usize)>,
}

impl PyConvertedRequest {
    /// Wraps a request converted from a body of `body_bytes` bytes, not rendered yet.
    fn new(inner: ConvertedRequest, options: Arc<ConversionOptions>, body_bytes: usize) -> Self {
        Self {
            inner,
            options,
            body_bytes,
            rendered: OnceLock::new(),
            rendered_py: PyOnceLock::new(),
        }
    }

    /// The rendered prompt, rendering it on first use.
    pub(crate) fn rendered(&self) -> &RenderedPrompt {
        self.rendered.get_or_init(|| {
            self.options
                .encoding_for(self.inner.model_version)
                .render(&self.inner.conversation)
        })
    }
}

#[pymethods]
impl PyConvertedRequest {
    /// The converted request as JSON (conversation, inference and parsing options).
    fn to_json(&self) -> String {
        serde_json::to_string(&self.inner).expect("converted requests always serialise")
    }

    /// The conversation as JSON.
    #[getter]
    fn conversation_json(&self) -> String {
        serde_json::to_string(&self.inner.conversation).expect("conversations always serialise")
    }

    /// The sampling settings as JSON.
    #[getter]
    fn inference_options_json(&self) -> String {
        serde_json::to_string(&self.inner.inference_options).expect("options always serialise")
    }

    /// The output-parsing settings as JSON.
    #[getter]
    fn parsing_options_json(&self) -> String {
        serde_json::to_string(&self.inner.parsing_options).expect("options always serialise")
    }

    /// The model version name (`DeepseekV4Pro` or `DeepseekV41Flash`).
    #[getter]
    fn model_version(&self) -> &'static str {
        self.inner.model_version.as_str()
    }

    /// The `model` field as the client sent it.
    #[getter]
    fn request_model(&self) -> &str {
        &self.inner.request_model
    }

    /// Whether the client asked for streaming.
    #[getter]
    fn stream(&self) -> bool {
        self.inner.stream
    }

    /// Renders the prompt into a new `prompt_type` (the Python `RenderedPrompt` dataclass):
    /// prompt, special ranges as code-point pairs, image count. The prompt `str` is made once and
    /// shared by every call; each call gets a new ranges list.
    fn render<'py>(
        &self,
        py: Python<'py>,
        prompt_type: &Bound<'py, PyType>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let python = self.rendered_py.get_or_try_init(py, || {
            let (rendered, special_ranges) = detach_for(py, self.body_bytes, || {
                let rendered = self.rendered();
                let ranges = rendered
                    .special_char_ranges()
                    .into_iter()
                    .map(|range| (range.start, range.end))
                    .collect();
                (rendered, ranges)
            });
            Ok::<_, PyErr>(PythonPrompt {
                prompt: long_str(py, &rendered.prompt)?.unbind(),
                special_ranges,
            })
        })?;
        let images = self.rendered().image_sources.len();
        let ranges = PyList::new(py, &python.special_ranges)?;
        prompt_object(prompt_type, python.prompt.bind(py).clone(), ranges, images)
    }

    /// Encodes the rendered prompt (the bundled V4 tokenizer when `tokenizer` is `None`).
    #[pyo3(signature = (tokenizer=None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        tokenizer: Option<&PyTokenizer>,
    ) -> PyResult<Bound<'py, PyList>> {
        let tokenizer: &Tokenizer = match tokenizer {
            Some(tokenizer) => tokenizer.get(),
            None => {
                self.inner
                    .model_version
                    .check_bundled_tokenizer()
                    .map_err(to_py_err)?;
                default_tokenizer()
            }
        };
        let ids = detach_for(py, self.body_bytes, || encode(self.rendered(), tokenizer))
            .map_err(to_py_err)?;
        id_list(py, &ids)
    }

    /// The constrained-decoding grammar (llguidance Lark) of the request's output constraint,
    /// `None` without one; `tokenizer` (default: the bundled V4 one) names the thinking end.
    #[pyo3(signature = (tokenizer=None))]
    fn constraint_grammar(
        &self,
        py: Python<'_>,
        tokenizer: Option<&PyTokenizer>,
    ) -> PyResult<Option<String>> {
        let tokenizer: &Tokenizer = match tokenizer {
            Some(tokenizer) => tokenizer.get(),
            None => default_tokenizer(),
        };
        let encoding = self.options.encoding_for(self.inner.model_version);
        py.detach(|| constraint_grammar(&self.inner, &encoding, tokenizer))
            .map_err(to_py_err)
    }

    /// The completion budget for a prompt of `prompt_tokens` in a context of `context_limit`.
    fn resolve_max_tokens(
        &self,
        prompt_tokens: Count<u64>,
        context_limit: Count<u64>,
    ) -> PyResult<u32> {
        self.inner
            .resolve_max_tokens(prompt_tokens.0, context_limit.0)
            .map_err(|err| to_py_err(err.into()))
    }
}

/// Parses and converts a request body of `protocol` with options given as JSON.
#[pyfunction]
#[pyo3(signature = (protocol_name, body, options_json=None))]
fn convert(
    py: Python<'_>,
    protocol_name: &str,
    body: &str,
    options_json: Option<&str>,
) -> PyResult<PyConvertedRequest> {
    let protocol: Protocol = protocol_name
        .parse()
        .map_err(|err: UnknownName| to_py_err(Error::Parse(err.to_string())))?;
    let options = options(options_json)?;
    let inner =
        detach_for(py, body.len(), || convert_json(protocol, body, &options)).map_err(to_py_err)?;
    Ok(PyConvertedRequest::new(inner, options, body.len()))
}

/// The protocol a JSON request body most likely uses, as the Python API spells it.
#[pyfunction]
fn infer_protocol(py: Python<'_>, body: &str) -> &'static str {
    py.detach(|| infer_body_protocol(body)).as_str()
}

/// The Responses echo fields of a request body, as JSON.
#[pyfunction]
fn responses_echo(body: &str) -> PyResult<String> {
    let request = ResponsesRequest::from_json(body).map_err(to_py_err)?;
    Ok(serde_json::to_string(&request.echo()).expect("echo fields always serialise"))
}

/// The Responses namespace tool map (`{flat name: [namespace, local name]}`) as JSON.
#[pyfunction]
#[pyo3(signature = (body, options_json=None))]
fn responses_namespace_tool_map(body: &str, options_json: Option<&str>) -> PyResult<String> {
    let request = ResponsesRequest::from_json(body).map_err(to_py_err)?;
    let map = request
        .namespace_tool_map(&*options(options_json)?)
        .map_err(|err| to_py_err(err.into()))?;
    Ok(serde_json::to_string(&map).expect("tool maps always serialise"))
}

/// Registers the request functions and classes on the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyConvertedRequest>()?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(infer_protocol, m)?)?;
    m.add_function(wrap_pyfunction!(responses_echo, m)?)?;
    m.add_function(wrap_pyfunction!(responses_namespace_tool_map, m)?)?;
    Ok(())
}
