//! Bindings of V4.1 image input: preprocessing, token counts, fetching and resolution.
//!
//! Images cross as tuples `(webp bytes, width, height, format, source format, token count)`;
//! sources as `(kind, payload, detail, path)` with kind `data_url`/`url` (payload `str`) or
//! `bytes` (payload `bytes`). Decoding, fetching and resolving run without the GIL.

use std::net::IpAddr;
use std::sync::Arc;

use deepseek_recipe::conversation::ImageDetail;
use deepseek_recipe::image::{
    image_tokens, preprocess as preprocess_image, DestinationPolicy, FetchPolicy, HttpFetcher,
    ImageData, ImageError, ImageErrorKind, ImageFetcher, ImageInput, ImageQuota, ImageResolver,
    PreprocessOptions, PreprocessedImage, ResolveBudget, ResolvedImages, ResolverLimits,
    RetryPolicy,
};
use deepseek_recipe::protocol::messages::ImageMediaType;
use deepseek_recipe::{Error, UnknownName};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyString};

use crate::errors::to_py_err;
use crate::ints::Count;
use crate::requests::PyConvertedRequest;

/// A preprocessed image: `(webp bytes, width, height, format, source format, token count)`.
type ImageTuple = (Py<PyBytes>, u32, u32, &'static str, &'static str, u64);

/// Reads an options struct from its JSON form (`None`: the core's defaults; an absent key
/// keeps its default).
fn from_json<T: Default + serde::de::DeserializeOwned>(
    what: &str,
    json: Option<&str>,
) -> PyResult<T> {
    json.map_or_else(
        || Ok(T::default()),
        |text| {
            serde_json::from_str(text)
                .map_err(|err| PyValueError::new_err(format!("invalid {what}: {err}")))
        },
    )
}

fn image_error(error: ImageError) -> PyErr {
    to_py_err(Error::Image(error))
}

fn image_tuple(py: Python<'_>, image: &PreprocessedImage) -> ImageTuple {
    (
        PyBytes::new(py, &image.data).unbind(),
        image.width,
        image.height,
        image.format.as_str(),
        image.source_format.as_str(),
        image.token_count,
    )
}

/// Resolved images as Python sees them: `(images, token adjustment)`.
fn resolved_tuple(py: Python<'_>, resolved: &ResolvedImages) -> (Vec<ImageTuple>, u64) {
    let images = resolved
        .images
        .iter()
        .map(|image| image_tuple(py, image))
        .collect();
    (images, resolved.token_adjustment)
}

/// Preprocesses one encoded image with options given as JSON (errors located at `image[0]`).
#[pyfunction]
#[pyo3(signature = (data, options_json=None))]
fn preprocess(py: Python<'_>, data: &[u8], options_json: Option<&str>) -> PyResult<ImageTuple> {
    let options: PreprocessOptions = from_json("preprocess options", options_json)?;
    let image = py
        .detach(|| preprocess_image(data, &options))
        .map_err(image_error)?;
    Ok(image_tuple(py, &image))
}

/// Prompt tokens one image of `width`×`height` costs (after fitting to the budget).
#[pyfunction]
fn image_token_count(width: Count<u64>, height: Count<u64>) -> PyResult<u64> {
    image_tokens(width.0, height.0).map_err(|error| {
        image_error(ImageError::new(
            ImageErrorKind::Resize,
            "",
            error.to_string(),
        ))
    })
}

/// Adds a Python `destination_filter(host, address) -> bool` to `policy`; anything but `True`,
/// or an exception (reported as unraisable), rejects the address.
fn with_python_filter(policy: DestinationPolicy, filter: Py<PyAny>) -> DestinationPolicy {
    policy.with_filter(move |host: &str, address: IpAddr| {
        Python::attach(|py| match filter.call1(py, (host, address.to_string())) {
            Ok(answer) => answer.bind(py).cast::<PyBool>().is_ok_and(|b| b.is_true()),
            Err(error) => {
                error.write_unraisable(py, Some(filter.bind(py)));
                false
            }
        })
    })
}

/// An HTTP(S) image fetcher with a size limit, timeouts, bounded redirects and a destination
/// policy (public addresses only unless configured otherwise).
#[pyclass(name = "ImageFetcher", module = "deepseek_recipe._native", frozen)]
pub struct PyImageFetcher {
    inner: HttpFetcher,
}

#[pymethods]
impl PyImageFetcher {
    /// A fetcher following a policy given as JSON (`None` or an absent key: the core's
    /// defaults), with an optional Python destination filter.
    #[new]
    #[pyo3(signature = (policy_json=None, destination_filter=None))]
    fn new(
        py: Python<'_>,
        policy_json: Option<&str>,
        destination_filter: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let mut policy: FetchPolicy = from_json("fetch policy", policy_json)?;
        if let Some(filter) = destination_filter {
            if !filter.bind(py).is_callable() {
                return Err(PyTypeError::new_err("destination_filter must be callable"));
            }
            policy.destinations = with_python_filter(policy.destinations, filter);
        }
        Ok(Self {
            inner: HttpFetcher::new(policy),
        })
    }

    /// The policy in force, as JSON (without the destination filter).
    fn policy_json(&self) -> String {
        serde_json::to_string(self.inner.policy()).expect("fetch policies always serialise")
    }

    /// The body of `url` (one attempt, no retries; errors located at `image[0]`).
    fn fetch(&self, py: Python<'_>, url: &str) -> PyResult<Py<PyBytes>> {
        let body = py.detach(|| self.inner.fetch(url)).map_err(image_error)?;
        Ok(PyBytes::new(py, &body).unbind())
    }
}

/// The images and bytes one request has used, shared by its resolve calls.
#[pyclass(name = "ImageQuota", module = "deepseek_recipe._native", frozen)]
pub struct PyImageQuota {
    inner: Arc<ImageQuota>,
}

#[pymethods]
impl PyImageQuota {
    #[new]
    fn new() -> Self {
        Self {
            inner: Arc::new(ImageQuota::new()),
        }
    }

    /// `(image count, encoded bytes, pixel cost)` used so far.
    fn usage(&self) -> (usize, u64, u64) {
        let usage = self.inner.usage();
        (usage.image_count, usage.byte_size, usage.pixels)
    }
}

/// Turns image sources into preprocessed images under the request limits.
#[pyclass(name = "ImageResolver", module = "deepseek_recipe._native", frozen)]
pub struct PyImageResolver {
    inner: ImageResolver,
}

#[pymethods]
impl PyImageResolver {
    /// A resolver fetching with `fetcher` (`None`: URL sources fail), with limits, retries and
    /// a budget given as JSON (`None` or an absent key: the core's defaults).
    #[new]
    #[pyo3(signature = (fetcher=None, limits_json=None, retry_json=None, budget_json=None))]
    fn new(
        fetcher: Option<PyRef<'_, PyImageFetcher>>,
        limits_json: Option<&str>,
        retry_json: Option<&str>,
        budget_json: Option<&str>,
    ) -> PyResult<Self> {
        let resolver = match fetcher {
            Some(fetcher) => ImageResolver::new(fetcher.inner.clone()),
            None => ImageResolver::offline(),
        };
        let limits: ResolverLimits = from_json("resolver limits", limits_json)?;
        let retry: RetryPolicy = from_json("retry policy", retry_json)?;
        let budget: ResolveBudget = from_json("resolve budget", budget_json)?;
        Ok(Self {
            inner: resolver
                .with_limits(limits)
                .with_retry(retry)
                .with_budget(budget),
        })
    }

    /// The limits in force, as JSON.
    fn limits_json(&self) -> String {
        serde_json::to_string(self.inner.limits()).expect("limits always serialise")
    }

    /// The budget in force, as JSON.
    fn budget_json(&self) -> String {
        serde_json::to_string(self.inner.budget()).expect("budgets always serialise")
    }

    /// The retry policy in force, as JSON.
    fn retry_json(&self) -> String {
        serde_json::to_string(self.inner.retry()).expect("retry policies always serialise")
    }

    /// Resolves `(kind, payload, detail, path)` sources with `quota`:
    /// `(images, token adjustment)`.
    fn resolve(
        &self,
        py: Python<'_>,
        sources: Vec<(String, Bound<'_, PyAny>, String, String)>,
        quota: &PyImageQuota,
    ) -> PyResult<(Vec<ImageTuple>, u64)> {
        let inputs = sources
            .into_iter()
            .map(|(kind, payload, detail, path)| {
                let data = Payload::of(&kind, &payload)?.data()?;
                Ok(ImageInput::new(data)
                    .with_detail(image_detail(&detail)?)
                    .with_path(path))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let quota = Arc::clone(&quota.inner);
        let resolved = py
            .detach(|| self.inner.resolve(&inputs, &quota))
            .map_err(image_error)?;
        Ok(resolved_tuple(py, &resolved))
    }

    /// Resolves the image sources of a converted request's rendered prompt (the cached render
    /// `encode` shares) with `quota`: `(images, token adjustment)`.
    fn resolve_request(
        &self,
        py: Python<'_>,
        converted: PyRef<'_, PyConvertedRequest>,
        quota: &PyImageQuota,
    ) -> PyResult<(Vec<ImageTuple>, u64)> {
        let converted = &*converted;
        let quota = Arc::clone(&quota.inner);
        let resolved = py
            .detach(|| {
                let sources = &converted.rendered().image_sources;
                self.inner.resolve_sources(sources, &quota)
            })
            .map_err(image_error)?;
        Ok(resolved_tuple(py, &resolved))
    }
}

/// A source's payload, borrowed from Python, by the source's kind.
enum Payload<'a, 'py> {
    /// `bytes`: the encoded image.
    Bytes(&'a Bound<'py, PyBytes>),
    /// `data_url`: a `data:` URL.
    DataUrl(&'a Bound<'py, PyString>),
    /// `url`: an http(s) URL.
    Url(&'a Bound<'py, PyString>),
}

impl<'a, 'py> Payload<'a, 'py> {
    /// The payload of a source of `kind`: `ValueError` for an unknown kind, `TypeError` for a
    /// payload of the wrong type (`bytes` for `bytes`, `str` for the URLs).
    fn of(kind: &str, payload: &'a Bound<'py, PyAny>) -> PyResult<Self> {
        match kind {
            "bytes" => Ok(Self::Bytes(payload.cast()?)),
            "data_url" => Ok(Self::DataUrl(payload.cast()?)),
            "url" => Ok(Self::Url(payload.cast()?)),
            other => Err(PyValueError::new_err(format!(
                "unknown image source kind \"{other}\"; expected \"data_url\", \"url\" or \"bytes\""
            ))),
        }
    }

    /// The bytes or location the resolver reads.
    fn data(&self) -> PyResult<ImageData> {
        Ok(match self {
            Self::Bytes(bytes) => ImageData::Bytes(bytes.as_bytes().to_vec()),
            Self::DataUrl(url) => ImageData::DataUrl(url.to_str()?.to_owned()),
            Self::Url(url) => ImageData::Url(url.to_str()?.to_owned()),
        })
    }
}

/// The core's image detail named `name` (`ValueError` naming the known ones otherwise).
fn image_detail(name: &str) -> PyResult<ImageDetail> {
    name.parse()
        .map_err(|err: UnknownName| PyValueError::new_err(err.to_string()))
}

/// Checks an image detail name as the resolver reads it.
#[pyfunction]
fn check_image_detail(detail: &str) -> PyResult<()> {
    image_detail(detail).map(drop)
}

/// Checks a `(kind, payload, detail)` source as the resolver reads it, without copying the
/// payload.
#[pyfunction]
fn check_image_source(kind: &str, payload: &Bound<'_, PyAny>, detail: &str) -> PyResult<()> {
    Payload::of(kind, payload)?;
    image_detail(detail).map(drop)
}

/// The data URL the official converter makes of an Anthropic base64 source (`ValueError` for
/// a media type the official API does not accept).
#[pyfunction]
fn base64_image_data_url(data: &str, media_type: &str) -> PyResult<String> {
    let media_type: ImageMediaType = media_type
        .parse()
        .map_err(|err: UnknownName| PyValueError::new_err(err.to_string()))?;
    Ok(media_type.data_url(data))
}

/// The image sources of a converted request's rendered prompt, in prompt order:
/// `(kind, location, detail, path)` (none for V4, whose images render as text).
#[pyfunction]
fn request_image_sources(
    py: Python<'_>,
    converted: PyRef<'_, PyConvertedRequest>,
) -> Vec<(&'static str, String, &'static str, String)> {
    let converted = &*converted;
    py.detach(|| {
        converted
            .rendered()
            .image_sources
            .iter()
            .cloned()
            .map(|source| {
                (
                    source.kind.as_str(),
                    source.location,
                    source.detail.as_str(),
                    source.path,
                )
            })
            .collect()
    })
}

/// Registers the image functions and classes on the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyImageFetcher>()?;
    m.add_class::<PyImageQuota>()?;
    m.add_class::<PyImageResolver>()?;
    m.add_function(wrap_pyfunction!(preprocess, m)?)?;
    m.add_function(wrap_pyfunction!(image_token_count, m)?)?;
    m.add_function(wrap_pyfunction!(request_image_sources, m)?)?;
    m.add_function(wrap_pyfunction!(check_image_detail, m)?)?;
    m.add_function(wrap_pyfunction!(check_image_source, m)?)?;
    m.add_function(wrap_pyfunction!(base64_image_data_url, m)?)?;
    Ok(())
}
