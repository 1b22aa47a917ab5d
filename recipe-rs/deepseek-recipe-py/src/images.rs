//! Bindings of V4.1 image input: preprocessing, token counts, fetching and resolution.
//!
//! Images cross as tuples `(webp bytes, width, height, format, source format, token count)`;
//! sources as `(kind, payload, detail, path)` with kind `data_url`/`url` (payload `str`) or
//! `bytes` (payload `bytes`). Decoding, fetching and resolving run without the GIL.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use deepseek_recipe::conversation::{ImageDetail, ImageSourceKind};
use deepseek_recipe::image::{
    image_tokens, preprocess as preprocess_image, DestinationPolicy, HttpFetcher, ImageData,
    ImageError, ImageErrorKind, ImageFetcher, ImageInput, ImageQuota, ImageResolver, IpRange,
    PreprocessOptions, PreprocessedImage, ResolveBudget, ResolverLimits, RetryPolicy,
};
use deepseek_recipe::Error;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes};

use crate::errors::to_py_err;
use crate::ints::Count;
use crate::requests::PyConvertedRequest;

/// A preprocessed image: `(webp bytes, width, height, format, source format, token count)`.
type ImageTuple = (Py<PyBytes>, u32, u32, &'static str, &'static str, u64);

/// Resolver limits in the order of `ResolverLimits`' fields.
type LimitsTuple = (usize, u64, u64, u32, u32, usize, u32, usize);
/// A limits tuple as Python passes it (each field range-checked).
type PyLimitsTuple = (
    Count<usize>,
    Count<u64>,
    Count<u64>,
    Count<u32>,
    Count<u32>,
    Count<usize>,
    Count<u32>,
    Count<usize>,
);

fn image_error(error: ImageError) -> PyErr {
    to_py_err(Error::Image(error))
}

/// Parses a detail name (`low`, `high`, `original`, `auto`).
fn detail(name: &str) -> PyResult<ImageDetail> {
    match name {
        "low" => Ok(ImageDetail::Low),
        "high" => Ok(ImageDetail::High),
        "original" => Ok(ImageDetail::Original),
        "auto" => Ok(ImageDetail::Auto),
        other => Err(PyValueError::new_err(format!(
            "invalid detail \"{other}\"; expected \"low\", \"high\", \"original\", or \"auto\""
        ))),
    }
}

fn detail_name(detail: ImageDetail) -> &'static str {
    match detail {
        ImageDetail::Low => "low",
        ImageDetail::High => "high",
        ImageDetail::Original => "original",
        ImageDetail::Auto => "auto",
    }
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

/// Preprocesses one encoded image (errors located at `image[0]`).
#[pyfunction]
fn preprocess(
    py: Python<'_>,
    data: &[u8],
    detail_name: &str,
    max_dimension_px: Count<u32>,
    low_detail_max_dimension_px: Count<u32>,
) -> PyResult<ImageTuple> {
    let options = PreprocessOptions {
        detail: detail(detail_name)?,
        max_dimension_px: max_dimension_px.0,
        low_detail_max_dimension_px: low_detail_max_dimension_px.0,
    };
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

/// Builds the destination policy: special addresses, allowed ranges and a Python filter.
fn destination_policy(
    allow_special_addresses: bool,
    allowed_ranges: Vec<String>,
    destination_filter: Option<Py<PyAny>>,
) -> PyResult<DestinationPolicy> {
    let mut policy = DestinationPolicy::new().allow_special_addresses(allow_special_addresses);
    for range in allowed_ranges {
        let range: IpRange = range.parse().map_err(PyValueError::new_err)?;
        policy = policy.allow_range(range);
    }
    if let Some(filter) = destination_filter {
        policy = policy.with_filter(move |host: &str, address: IpAddr| {
            Python::attach(|py| match filter.call1(py, (host, address.to_string())) {
                Ok(answer) => answer.bind(py).cast::<PyBool>().is_ok_and(|b| b.is_true()),
                Err(error) => {
                    error.write_unraisable(py, Some(filter.bind(py)));
                    false
                }
            })
        });
    }
    Ok(policy)
}

/// An HTTP(S) image fetcher with a size limit, timeouts, bounded redirects and a destination
/// policy (public addresses only unless configured otherwise).
#[pyclass(name = "ImageFetcher", module = "deepseek_recipe._native", frozen)]
pub struct PyImageFetcher {
    inner: HttpFetcher,
}

#[pymethods]
impl PyImageFetcher {
    #[new]
    #[pyo3(signature = (
        max_bytes, max_redirects, connect_timeout_s, total_timeout_s,
        allow_special_addresses=false, allowed_ranges=Vec::new(), destination_filter=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        max_bytes: Count<u64>,
        max_redirects: Count<u32>,
        connect_timeout_s: f64,
        total_timeout_s: f64,
        allow_special_addresses: bool,
        allowed_ranges: Vec<String>,
        destination_filter: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        if let Some(filter) = &destination_filter {
            if !filter.bind(py).is_callable() {
                return Err(PyTypeError::new_err("destination_filter must be callable"));
            }
        }
        let duration = |seconds: f64, name: &str| {
            Duration::try_from_secs_f64(seconds)
                .map_err(|_| PyValueError::new_err(format!("invalid {name}: {seconds}")))
        };
        let policy =
            destination_policy(allow_special_addresses, allowed_ranges, destination_filter)?;
        let inner = HttpFetcher::default()
            .with_max_bytes(max_bytes.0)
            .with_max_redirects(max_redirects.0)
            .with_timeouts(
                duration(connect_timeout_s, "connect_timeout_s")?,
                duration(total_timeout_s, "total_timeout_s")?,
            )
            .with_policy(policy);
        Ok(Self { inner })
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
    /// A resolver fetching with `fetcher` (`None`: URL sources fail), with `limits`
    /// (`None`: the reference's defaults), retries, and a `budget` of
    /// `(deadline_s, concurrent_fetches, max_pixels)` (`None`: the core's defaults).
    #[new]
    #[pyo3(signature = (
        fetcher=None, limits=None, retry_attempts=Count(4), retry_initial_backoff_s=0.25,
        budget=None,
    ))]
    fn new(
        fetcher: Option<PyRef<'_, PyImageFetcher>>,
        limits: Option<PyLimitsTuple>,
        retry_attempts: Count<u32>,
        retry_initial_backoff_s: f64,
        budget: Option<(f64, Count<usize>, Count<u64>)>,
    ) -> PyResult<Self> {
        let resolver = match fetcher {
            Some(fetcher) => ImageResolver::new(fetcher.inner.clone()),
            None => ImageResolver::offline(),
        };
        let limits = limits.map_or_else(ResolverLimits::default, |limits| ResolverLimits {
            max_images: limits.0 .0,
            max_image_bytes: limits.1 .0,
            max_total_bytes: limits.2 .0,
            max_dimension_px: limits.3 .0,
            many_images_max_dimension_px: limits.4 .0,
            many_images: limits.5 .0,
            low_detail_max_dimension_px: limits.6 .0,
            max_url_bytes: limits.7 .0,
        });
        let initial_backoff = Duration::try_from_secs_f64(retry_initial_backoff_s)
            .map_err(|_| PyValueError::new_err("invalid retry_initial_backoff_s"))?;
        let retry = RetryPolicy {
            attempts: retry_attempts.0,
            initial_backoff,
        };
        let budget = match budget {
            Some((deadline_s, concurrent_fetches, max_pixels)) => ResolveBudget {
                deadline: Duration::try_from_secs_f64(deadline_s).map_err(|_| {
                    PyValueError::new_err(format!("invalid deadline_s: {deadline_s}"))
                })?,
                concurrent_fetches: concurrent_fetches.0,
                max_pixels: max_pixels.0,
            },
            None => ResolveBudget::default(),
        };
        Ok(Self {
            inner: resolver
                .with_limits(limits)
                .with_retry(retry)
                .with_budget(budget),
        })
    }

    /// The limits in force, in the order of the constructor's `limits` tuple.
    fn limits(&self) -> LimitsTuple {
        let l = self.inner.limits();
        (
            l.max_images,
            l.max_image_bytes,
            l.max_total_bytes,
            l.max_dimension_px,
            l.many_images_max_dimension_px,
            l.many_images,
            l.low_detail_max_dimension_px,
            l.max_url_bytes,
        )
    }

    /// The budget in force, in the order of the constructor's `budget` tuple.
    fn budget(&self) -> (f64, usize, u64) {
        let budget = self.inner.budget();
        (
            budget.deadline.as_secs_f64(),
            budget.concurrent_fetches,
            budget.max_pixels,
        )
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
            .map(|(kind, payload, detail_text, path)| {
                Ok(ImageInput::new(image_data(&kind, &payload)?)
                    .with_detail(detail(&detail_text)?)
                    .with_path(path))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let quota = Arc::clone(&quota.inner);
        let resolved = py
            .detach(|| self.inner.resolve(&inputs, &quota))
            .map_err(image_error)?;
        let images = resolved
            .images
            .iter()
            .map(|image| image_tuple(py, image))
            .collect();
        Ok((images, resolved.token_adjustment))
    }
}

/// The bytes or location of a source from its kind and payload.
fn image_data(kind: &str, payload: &Bound<'_, PyAny>) -> PyResult<ImageData> {
    match kind {
        "bytes" => Ok(ImageData::Bytes(
            payload.cast::<PyBytes>()?.as_bytes().to_vec(),
        )),
        "data_url" => Ok(ImageData::DataUrl(payload.extract()?)),
        "url" => Ok(ImageData::Url(payload.extract()?)),
        other => Err(PyValueError::new_err(format!(
            "unknown image source kind \"{other}\"; expected \"data_url\", \"url\" or \"bytes\""
        ))),
    }
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
            .options
            .encoding_for(converted.inner.model_version)
            .render(&converted.inner.conversation)
            .image_sources
            .into_iter()
            .map(|source| {
                let kind = match source.kind {
                    ImageSourceKind::DataUrl => "data_url",
                    ImageSourceKind::Url => "url",
                };
                (
                    kind,
                    source.location,
                    detail_name(source.detail),
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
    Ok(())
}
