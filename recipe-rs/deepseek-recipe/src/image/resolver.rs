//! The resolver: obtaining every source's bytes under the request limits (see `limits`),
//! preprocessing, and a quota shared by all resolve calls of one request.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::data_url::DataUrl;
use super::downloads::{Downloads, RetryPolicy};
use super::error::{image_location, too_large_detail, ImageError, ImageErrorKind};
use super::fetch::{fetch_failure, ImageFetcher};
use super::limits::{ResolveBudget, ResolverLimits, MIB};
use super::preprocess::{pixel_cost, preprocess, PreprocessOptions, PreprocessedImage};
use crate::conversation::ImageSource;

use super::source::{ImageData, ImageInput};

/// What a request has used so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuotaUsage {
    /// Images resolved.
    pub image_count: usize,
    /// Their encoded input bytes.
    pub byte_size: u64,
    /// Their pixel cost (see [`ResolveBudget::max_pixels`]).
    pub pixels: u64,
}

/// The images and bytes one request has used, shared by its resolve calls (thread-safe).
/// A failed call leaves it unchanged.
#[derive(Debug, Default)]
pub struct ImageQuota {
    usage: Mutex<QuotaUsage>,
}

impl ImageQuota {
    /// An unused quota.
    pub fn new() -> Self {
        Self::default()
    }

    /// The usage so far.
    pub fn usage(&self) -> QuotaUsage {
        *self.usage.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The outcome of a successful resolve call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvedImages {
    /// The preprocessed images, in source order.
    pub images: Vec<PreprocessedImage>,
    /// What a prompt token count must add for them: Σ(tokens − 1).
    pub token_adjustment: u64,
}

/// Turns image sources into preprocessed images under the request limits.
#[derive(Clone)]
pub struct ImageResolver {
    fetcher: Option<Arc<dyn ImageFetcher>>,
    limits: ResolverLimits,
    retry: RetryPolicy,
    budget: ResolveBudget,
}

impl std::fmt::Debug for ImageResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageResolver")
            .field("has_fetcher", &self.fetcher.is_some())
            .field("limits", &self.limits)
            .field("retry", &self.retry)
            .field("budget", &self.budget)
            .finish()
    }
}

impl ImageResolver {
    /// A resolver fetching URL sources with `fetcher`, with the default limits and retries.
    pub fn new(fetcher: impl ImageFetcher + 'static) -> Self {
        Self {
            fetcher: Some(Arc::new(fetcher)),
            limits: ResolverLimits::default(),
            retry: RetryPolicy::default(),
            budget: ResolveBudget::default(),
        }
    }

    /// A resolver that cannot fetch: URL sources fail with `Fetch` (not retryable).
    pub fn offline() -> Self {
        Self {
            fetcher: None,
            limits: ResolverLimits::default(),
            retry: RetryPolicy::default(),
            budget: ResolveBudget::default(),
        }
    }

    /// The same resolver with other limits.
    pub fn with_limits(mut self, limits: ResolverLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The same resolver with another retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The same resolver with another budget.
    pub fn with_budget(mut self, budget: ResolveBudget) -> Self {
        self.budget = budget;
        self
    }

    /// The limits in force.
    pub fn limits(&self) -> &ResolverLimits {
        &self.limits
    }

    /// The budget in force.
    pub fn budget(&self) -> &ResolveBudget {
        &self.budget
    }

    /// The retry policy in force.
    pub fn retry(&self) -> &RetryPolicy {
        &self.retry
    }

    /// Resolves the image sources of a rendered prompt (see [`ImageResolver::resolve`]).
    pub fn resolve_sources(
        &self,
        sources: &[ImageSource],
        quota: &ImageQuota,
    ) -> Result<ResolvedImages, ImageError> {
        let inputs: Vec<ImageInput> = sources.iter().map(ImageInput::from).collect();
        self.resolve(&inputs, quota)
    }

    /// Checks the limits, obtains every source's bytes (data URL, fetch, or given), then
    /// preprocesses them; the first failing source in that order wins. URL sources are fetched
    /// concurrently from the start, under the budget's deadline; preprocessing stays within
    /// the budget's pixels. On success the quota gains the sources, their encoded input bytes
    /// and their pixel cost.
    pub fn resolve(
        &self,
        sources: &[ImageInput],
        quota: &ImageQuota,
    ) -> Result<ResolvedImages, ImageError> {
        let before = quota.usage();
        self.check_count(sources, before.image_count)?;
        let locations = locations(sources);
        let mut downloads = self.start_downloads(sources);
        let mut total = before.byte_size;
        let mut encoded = Vec::with_capacity(sources.len());
        for (index, (source, location)) in sources.iter().zip(&locations).enumerate() {
            let bytes = self.obtain(source, location, downloads.as_mut(), index)?;
            if bytes.is_empty() {
                return Err(ImageError::unsupported(
                    ImageErrorKind::EmptyImage,
                    location,
                ));
            }
            total = total.saturating_add(bytes.len() as u64);
            if total > self.limits.max_total_bytes {
                return Err(self.total_size_error(&source.path, total));
            }
            encoded.push(bytes);
        }
        drop(downloads);
        let max_dimension_px = if before.image_count + sources.len() >= self.limits.many_images {
            self.limits.many_images_max_dimension_px
        } else {
            self.limits.max_dimension_px
        };
        let mut pixels = before.pixels;
        let mut images = Vec::with_capacity(sources.len());
        for ((source, location), bytes) in sources.iter().zip(&locations).zip(&encoded) {
            let options = PreprocessOptions {
                detail: source.detail,
                max_dimension_px,
                low_detail_max_dimension_px: self.limits.low_detail_max_dimension_px,
            };
            let cost = pixel_cost(bytes, &options).map_err(|error| error.at(location))?;
            pixels = pixels.saturating_add(cost);
            if pixels > self.budget.max_pixels {
                return Err(self.pixel_budget_error(&source.path, pixels));
            }
            images.push(preprocess(bytes, &options).map_err(|error| error.at(location))?);
        }
        let used = QuotaUsage {
            image_count: sources.len(),
            byte_size: total - before.byte_size,
            pixels: pixels - before.pixels,
        };
        self.commit(quota, sources, used)?;
        let token_adjustment = images.iter().map(PreprocessedImage::token_adjustment).sum();
        Ok(ResolvedImages {
            images,
            token_adjustment,
        })
    }

    /// The count limit, walked as runs of consecutive equal paths: the first run that pushes
    /// the running total above the limit reports its path and that total.
    fn check_count(&self, sources: &[ImageInput], already: usize) -> Result<(), ImageError> {
        let mut total = already;
        for run in sources.chunk_by(|a, b| a.path == b.path) {
            total += run.len();
            if total > self.limits.max_images {
                return Err(self.count_error(&run[0].path, total));
            }
        }
        Ok(())
    }

    fn count_error(&self, path: &str, total: usize) -> ImageError {
        ImageError::new(
            ImageErrorKind::TooManyImages,
            path,
            format!(
                "Too many images: max {} images per request, got {total}",
                self.limits.max_images
            ),
        )
    }

    fn total_size_error(&self, path: &str, total: u64) -> ImageError {
        ImageError::new(
            ImageErrorKind::TotalSizeTooLarge,
            path,
            format!(
                "Total image size exceeds the limit: max {} MB per request, got {} MB",
                self.limits.max_total_bytes / MIB,
                total / MIB
            ),
        )
    }

    /// The pixel budget's error, shaped like the official per-request size error.
    fn pixel_budget_error(&self, path: &str, pixels: u64) -> ImageError {
        ImageError::new(
            ImageErrorKind::TotalSizeTooLarge,
            path,
            format!(
                "Total image size exceeds the limit: max {} pixels per request, got {pixels} pixels",
                self.budget.max_pixels
            ),
        )
    }

    fn too_large(&self, location: &str) -> ImageError {
        ImageError::new(
            ImageErrorKind::ImageTooLarge,
            location,
            too_large_detail(self.limits.max_image_bytes),
        )
    }

    /// The encoded bytes of source `index`, with the per-image size limit applied.
    fn obtain<'a>(
        &self,
        source: &'a ImageInput,
        location: &str,
        downloads: Option<&mut (Downloads, Vec<Option<usize>>)>,
        index: usize,
    ) -> Result<Cow<'a, [u8]>, ImageError> {
        let content_error = |kind| ImageError::unsupported(kind, location);
        let bytes = match &source.data {
            ImageData::Bytes(bytes) => Cow::Borrowed(bytes.as_slice()),
            ImageData::DataUrl(url) => {
                let data_url = DataUrl::parse(url).map_err(content_error)?;
                if !data_url.has_supported_media_type() {
                    return Err(content_error(ImageErrorKind::UnsupportedMediaType));
                }
                if data_url.estimated_size() > self.limits.max_image_bytes {
                    return Err(self.too_large(location));
                }
                Cow::Owned(data_url.decode().map_err(content_error)?)
            }
            ImageData::Url(url) => {
                self.check_url(url, &source.path)?;
                let job = downloads.and_then(|(downloads, jobs)| Some((downloads, jobs[index]?)));
                let Some((downloads, job)) = job else {
                    return Err(fetch_failure(ImageErrorKind::Fetch, location, url));
                };
                Cow::Owned(downloaded(downloads.wait(job), url, location)?)
            }
        };
        if bytes.len() as u64 > self.limits.max_image_bytes {
            return Err(self.too_large(location));
        }
        Ok(bytes)
    }

    /// A URL source must be `http…` and not longer than the limit.
    fn check_url(&self, url: &str, path: &str) -> Result<(), ImageError> {
        let is_http = url
            .get(..4)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http"));
        if !is_http {
            return Err(ImageError::new(
                ImageErrorKind::InvalidUrl,
                path,
                format!("invalid url: {url:?}"),
            ));
        }
        if url.len() > self.limits.max_url_bytes {
            return Err(ImageError::new(
                ImageErrorKind::UrlTooLong,
                path,
                format!(
                    "external link length {} too long, max link length {}",
                    url.len(),
                    self.limits.max_url_bytes
                ),
            ));
        }
        Ok(())
    }

    /// Starts fetching every URL source that passes [`Self::check_url`], all at once (up to
    /// the budget's concurrency); each source's job index, if it has one.
    fn start_downloads(&self, sources: &[ImageInput]) -> Option<(Downloads, Vec<Option<usize>>)> {
        let fetcher = self.fetcher.as_ref()?;
        let mut urls = Vec::new();
        let jobs = sources
            .iter()
            .map(|source| match &source.data {
                ImageData::Url(url) if self.check_url(url, &source.path).is_ok() => {
                    urls.push(url.clone());
                    Some(urls.len() - 1)
                }
                _ => None,
            })
            .collect();
        if urls.is_empty() {
            return None;
        }
        let deadline = Instant::now() + self.budget.deadline;
        let workers = self.budget.concurrent_fetches;
        let downloads = Downloads::start(Arc::clone(fetcher), urls, self.retry, workers, deadline);
        Some((downloads, jobs))
    }

    /// Adds a successful call to the quota, re-checking the limits against calls that
    /// committed concurrently.
    fn commit(
        &self,
        quota: &ImageQuota,
        sources: &[ImageInput],
        used: QuotaUsage,
    ) -> Result<(), ImageError> {
        let mut usage = quota.usage.lock().unwrap_or_else(PoisonError::into_inner);
        let path = sources.last().map_or("", |source| source.path.as_str());
        let count = usage.image_count + used.image_count;
        if count > self.limits.max_images {
            return Err(self.count_error(path, count));
        }
        let total = usage.byte_size.saturating_add(used.byte_size);
        if total > self.limits.max_total_bytes {
            return Err(self.total_size_error(path, total));
        }
        let pixels = usage.pixels.saturating_add(used.pixels);
        if pixels > self.budget.max_pixels {
            return Err(self.pixel_budget_error(path, pixels));
        }
        *usage = QuotaUsage {
            image_count: count,
            byte_size: total,
            pixels,
        };
        Ok(())
    }
}

impl Default for ImageResolver {
    /// With the `fetch` feature: the HTTP fetcher with its default (SSRF-safe) policy;
    /// without it: [`ImageResolver::offline`].
    fn default() -> Self {
        #[cfg(feature = "fetch")]
        {
            Self::new(super::fetch::HttpFetcher::default())
        }
        #[cfg(not(feature = "fetch"))]
        {
            Self::offline()
        }
    }
}

/// The bytes of a download, or its error at `location`: a fetch error keeps its kind; any
/// other (e.g. the fetcher's size limit) becomes a retryable `Fetch` error, as the reference
/// reports it; a download the deadline cut short is a retryable `Fetch` error.
fn downloaded(
    outcome: Option<Result<Vec<u8>, ImageError>>,
    url: &str,
    location: &str,
) -> Result<Vec<u8>, ImageError> {
    let failure = || fetch_failure(ImageErrorKind::Fetch, location, url).retryable(true);
    match outcome {
        Some(Ok(body)) => Ok(body),
        Some(Err(error)) => Err(match error.kind() {
            ImageErrorKind::Fetch
            | ImageErrorKind::FetchStatus
            | ImageErrorKind::DestinationRejected => error.at(location),
            _ => failure(),
        }),
        None => Err(failure()),
    }
}

/// Every source's error location: `<path>.image[k]`, k counting the earlier sources of the
/// call with the same path.
fn locations(sources: &[ImageInput]) -> Vec<String> {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    sources
        .iter()
        .map(|source| {
            let index = match seen.iter_mut().find(|(path, _)| *path == source.path) {
                Some((_, count)) => {
                    *count += 1;
                    *count - 1
                }
                None => {
                    seen.push((&source.path, 1));
                    0
                }
            };
            image_location(&source.path, index)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(path: &str, url: &str) -> ImageInput {
        ImageInput::new(ImageData::Url(url.into())).with_path(path)
    }

    #[test]
    fn locations_count_per_path() {
        let sources = [url("a", "x"), url("b", "x"), url("a", "x"), url("", "x")];
        assert_eq!(
            locations(&sources),
            ["a.image[0]", "b.image[0]", "a.image[1]", "image[0]"]
        );
    }

    #[test]
    fn url_checks_use_the_path() {
        let resolver = ImageResolver::offline();
        let quota = ImageQuota::new();
        let error = resolver
            .resolve(&[url("p", "ftp://h/x")], &quota)
            .unwrap_err();
        assert_eq!(error.kind(), ImageErrorKind::InvalidUrl);
        assert_eq!(error.to_string(), "p: invalid url: \"ftp://h/x\"");
        let long = format!("http://h/{}", "a".repeat(9000));
        let error = resolver.resolve(&[url("", &long)], &quota).unwrap_err();
        assert_eq!(error.kind(), ImageErrorKind::UrlTooLong);
        assert_eq!(quota.usage(), QuotaUsage::default());
    }

    #[test]
    fn quota_is_shared_across_threads() {
        let limits = ResolverLimits {
            max_images: 5,
            ..ResolverLimits::default()
        };
        let resolver = ImageResolver::offline().with_limits(limits);
        let quota = ImageQuota::new();
        let png = {
            let mut out = std::io::Cursor::new(Vec::new());
            image::RgbImage::new(4, 4)
                .write_to(&mut out, image::ImageFormat::Png)
                .unwrap();
            out.into_inner()
        };
        let source = ImageInput::new(ImageData::Bytes(png.clone()));
        let successes: usize = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| resolver.resolve(&[source.clone(), source.clone()], &quota))
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| usize::from(handle.join().unwrap().is_ok()))
                .sum()
        });
        assert_eq!(successes, 2);
        let usage = quota.usage();
        assert_eq!(usage.image_count, 4);
        assert_eq!(usage.byte_size, 4 * png.len() as u64);
    }

    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        image::RgbImage::new(width, height)
            .write_to(&mut out, image::ImageFormat::Png)
            .unwrap();
        out.into_inner()
    }

    #[test]
    fn the_pixel_budget_counts_source_and_output_areas_over_the_request() {
        // A 100×50 image becomes 770×392: it costs 5,000 + 301,840 pixels.
        let cost = 100 * 50 + 770 * 392;
        let budget = ResolveBudget {
            max_pixels: 2 * cost,
            ..ResolveBudget::default()
        };
        let resolver = ImageResolver::offline().with_budget(budget);
        let quota = ImageQuota::new();
        let image = |path: &str| ImageInput::new(ImageData::Bytes(png(100, 50))).with_path(path);
        resolver.resolve(&[image("a")], &quota).unwrap();
        assert_eq!(quota.usage().pixels, cost);
        let error = resolver
            .resolve(&[image("b"), image("c")], &quota)
            .unwrap_err();
        assert_eq!(
            (error.kind(), error.is_retryable()),
            (ImageErrorKind::TotalSizeTooLarge, false)
        );
        assert_eq!(
            error.to_string(),
            format!(
                "c: Total image size exceeds the limit: max {} pixels per request, got {} pixels",
                2 * cost,
                3 * cost
            )
        );
        assert_eq!(quota.usage().pixels, cost, "a failed call adds nothing");
        resolver.resolve(&[image("d")], &quota).unwrap();
        assert_eq!(quota.usage().pixels, 2 * cost);
    }

    #[test]
    fn a_bad_header_fails_before_the_pixel_budget() {
        let budget = ResolveBudget {
            max_pixels: 0,
            ..ResolveBudget::default()
        };
        let resolver = ImageResolver::offline().with_budget(budget);
        let sources = [ImageInput::new(ImageData::Bytes(b"BM......".to_vec()))];
        let error = resolver.resolve(&sources, &ImageQuota::new()).unwrap_err();
        assert_eq!(error.kind(), ImageErrorKind::UnsupportedMediaType);
    }

    #[test]
    fn count_limit_reports_the_crossing_run() {
        let resolver = ImageResolver::offline();
        let quota = ImageQuota::new();
        let mut sources = vec![url("first", "http://h/x"); 599];
        sources.extend(vec![url("rest", "http://h/x"); 2]);
        let error = resolver.resolve(&sources, &quota).unwrap_err();
        assert_eq!(
            error.to_string(),
            "rest: Too many images: max 600 images per request, got 601"
        );
    }
}
