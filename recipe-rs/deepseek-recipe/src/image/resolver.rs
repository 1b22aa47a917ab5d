//! The resolver: request limits, obtaining every source's bytes, preprocessing, and a quota
//! shared by all resolve calls of one request.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::data_url::DataUrl;
use super::error::{image_location, too_large_detail, ImageError, ImageErrorKind};
use super::fetch::{fetch_failure, ImageFetcher};
use super::preprocess::{preprocess, PreprocessOptions, PreprocessedImage};
use crate::conversation::ImageSource;

use super::source::{ImageData, ImageInput};

const MIB: u64 = 1 << 20;

/// The resolver's limits (the reference's defaults are [`ResolverLimits::default`]). As JSON
/// every key is optional: an absent one keeps its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ResolverLimits {
    /// Images per request (quota count plus this call).
    pub max_images: usize,
    /// Encoded bytes per image.
    pub max_image_bytes: u64,
    /// Encoded bytes per request (quota bytes plus this call).
    pub max_total_bytes: u64,
    /// Largest source width/height.
    pub max_dimension_px: u32,
    /// Largest source width/height once the request holds `many_images` images or more.
    pub many_images_max_dimension_px: u32,
    /// Image count from which `many_images_max_dimension_px` applies.
    pub many_images: usize,
    /// Long-side limit for `low` detail.
    pub low_detail_max_dimension_px: u32,
    /// Longest URL source, in bytes.
    pub max_url_bytes: usize,
}

impl Default for ResolverLimits {
    /// 600 images, 32 MiB per image, 64 MiB per request, 8192 px sides (4096 px from 15 images),
    /// 512 px for `low` detail, 8192-byte URLs.
    fn default() -> Self {
        Self {
            max_images: 600,
            max_image_bytes: 32 * MIB,
            max_total_bytes: 64 * MIB,
            max_dimension_px: 8192,
            many_images_max_dimension_px: 4096,
            many_images: 15,
            low_detail_max_dimension_px: 512,
            max_url_bytes: 8192,
        }
    }
}

/// How retryable fetch failures are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total (at least one is always made).
    pub attempts: u32,
    /// Pause before the first retry; it doubles before each further one.
    pub initial_backoff: Duration,
}

impl Default for RetryPolicy {
    /// 4 attempts, pauses of 250 ms, 500 ms and 1 s.
    fn default() -> Self {
        Self {
            attempts: 4,
            initial_backoff: Duration::from_millis(250),
        }
    }
}

/// What a request has used so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuotaUsage {
    /// Images resolved.
    pub image_count: usize,
    /// Their encoded input bytes.
    pub byte_size: u64,
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
}

impl std::fmt::Debug for ImageResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageResolver")
            .field("has_fetcher", &self.fetcher.is_some())
            .field("limits", &self.limits)
            .field("retry", &self.retry)
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
        }
    }

    /// A resolver that cannot fetch: URL sources fail with `Fetch` (not retryable).
    pub fn offline() -> Self {
        Self {
            fetcher: None,
            limits: ResolverLimits::default(),
            retry: RetryPolicy::default(),
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

    /// The limits in force.
    pub fn limits(&self) -> &ResolverLimits {
        &self.limits
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
    /// preprocesses them; the first failing source in that order wins. On success the quota
    /// gains the sources and their encoded input bytes.
    pub fn resolve(
        &self,
        sources: &[ImageInput],
        quota: &ImageQuota,
    ) -> Result<ResolvedImages, ImageError> {
        let before = quota.usage();
        self.check_count(sources, before.image_count)?;
        let locations = locations(sources);
        let mut total = before.byte_size;
        let mut encoded = Vec::with_capacity(sources.len());
        for (source, location) in sources.iter().zip(&locations) {
            let bytes = self.obtain(source, location)?;
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
        let max_dimension_px = if before.image_count + sources.len() >= self.limits.many_images {
            self.limits.many_images_max_dimension_px
        } else {
            self.limits.max_dimension_px
        };
        let mut images = Vec::with_capacity(sources.len());
        for ((source, location), bytes) in sources.iter().zip(&locations).zip(&encoded) {
            let options = PreprocessOptions {
                detail: source.detail,
                max_dimension_px,
                low_detail_max_dimension_px: self.limits.low_detail_max_dimension_px,
            };
            images.push(preprocess(bytes, &options).map_err(|error| error.at(location))?);
        }
        self.commit(quota, sources, total - before.byte_size)?;
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

    fn too_large(&self, location: &str) -> ImageError {
        ImageError::new(
            ImageErrorKind::ImageTooLarge,
            location,
            too_large_detail(self.limits.max_image_bytes),
        )
    }

    /// The encoded bytes of one source, with the per-image size limit applied.
    fn obtain<'a>(
        &self,
        source: &'a ImageInput,
        location: &str,
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
            ImageData::Url(url) => Cow::Owned(self.fetch(url, &source.path, location)?),
        };
        if bytes.len() as u64 > self.limits.max_image_bytes {
            return Err(self.too_large(location));
        }
        Ok(bytes)
    }

    /// Checks a URL source and fetches it, retrying retryable failures. Fetch errors keep
    /// their kind; any other failure (e.g. the fetcher's size limit) becomes a retryable
    /// `Fetch` error (without being retried).
    fn fetch(&self, url: &str, path: &str, location: &str) -> Result<Vec<u8>, ImageError> {
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
        let Some(fetcher) = &self.fetcher else {
            return Err(fetch_failure(ImageErrorKind::Fetch, location, url));
        };
        let mut backoff = self.retry.initial_backoff;
        let mut attempt = 1;
        loop {
            match fetcher.fetch(url) {
                Ok(bytes) => return Ok(bytes),
                Err(error) if error.is_retryable() && attempt < self.retry.attempts => {
                    attempt += 1;
                    thread::sleep(backoff);
                    backoff = backoff.saturating_mul(2);
                }
                Err(error) => {
                    return Err(match error.kind() {
                        ImageErrorKind::Fetch
                        | ImageErrorKind::FetchStatus
                        | ImageErrorKind::DestinationRejected => error.at(location),
                        _ => fetch_failure(ImageErrorKind::Fetch, location, url).retryable(true),
                    })
                }
            }
        }
    }

    /// Adds a successful call to the quota, re-checking the limits against calls that
    /// committed concurrently.
    fn commit(
        &self,
        quota: &ImageQuota,
        sources: &[ImageInput],
        bytes: u64,
    ) -> Result<(), ImageError> {
        let mut usage = quota.usage.lock().unwrap_or_else(PoisonError::into_inner);
        let path = sources.last().map_or("", |source| source.path.as_str());
        let count = usage.image_count + sources.len();
        if count > self.limits.max_images {
            return Err(self.count_error(path, count));
        }
        let total = usage.byte_size.saturating_add(bytes);
        if total > self.limits.max_total_bytes {
            return Err(self.total_size_error(path, total));
        }
        usage.image_count = count;
        usage.byte_size = total;
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
