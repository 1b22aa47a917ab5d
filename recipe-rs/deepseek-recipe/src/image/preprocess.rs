//! Preprocessing: sniff, check, decode, shrink for `low` detail, fit to the token budget with
//! padding, and encode as lossy WebP (quality 90).

use image::imageops::FilterType;
use image::{DynamicImage, Rgb, RgbImage};
use serde::{Deserialize, Serialize};

use super::decode::{decode_rgb, header_dimensions, DecodeFailure};
use super::detect::{sniff_format, ImageFormat};
use super::error::{ImageError, ImageErrorKind};
use super::tokens::{image_tokens, target_size, PATCH_PX};
use crate::conversation::ImageDetail;

/// Largest side a WebP image can have.
pub const WEBP_MAX_SIDE: u64 = 16383;
/// The long side used when a target exceeds [`WEBP_MAX_SIDE`] (rounded down to patches).
const WEBP_FALLBACK_SIDE: u64 = WEBP_MAX_SIDE / PATCH_PX * PATCH_PX;
/// Re-fits tried to bring a target within the WebP limit.
const MAX_WEBP_REFITS: usize = 6;
/// WebP quality of the output.
pub const WEBP_QUALITY: f32 = 90.0;
/// Gray the padding around a fitted image is filled with.
const PADDING: Rgb<u8> = Rgb([127, 127, 127]);
/// Location standalone preprocessing errors report.
const STANDALONE_LOCATION: &str = "image[0]";

/// How to preprocess one image. As JSON every key is optional: an absent one keeps its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PreprocessOptions {
    /// Requested detail; only [`ImageDetail::Low`] changes anything.
    pub detail: ImageDetail,
    /// Largest accepted source width or height (header and decoded); 0 rejects every image.
    pub max_dimension_px: u32,
    /// Long-side limit for `low` detail.
    pub low_detail_max_dimension_px: u32,
}

impl Default for PreprocessOptions {
    /// `high` detail, 8192 px sources, 512 px for `low` detail.
    fn default() -> Self {
        Self {
            detail: ImageDetail::High,
            max_dimension_px: 8192,
            low_detail_max_dimension_px: 512,
        }
    }
}

/// A preprocessed image: the WebP bytes the model receives, their size and token cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreprocessedImage {
    /// Lossy WebP bytes (`RIFF…WEBPVP8 `).
    pub data: Vec<u8>,
    /// Output width (a multiple of 14).
    pub width: u32,
    /// Output height (a multiple of 14).
    pub height: u32,
    /// Format of `data` (always WebP).
    pub format: ImageFormat,
    /// Format of the input, from its magic bytes.
    pub source_format: ImageFormat,
    /// Prompt tokens this image costs (see [`image_tokens`](super::image_tokens)).
    pub token_count: u64,
}

impl PreprocessedImage {
    /// What this image adds to a prompt token count: `token_count − 1`.
    pub fn token_adjustment(&self) -> u64 {
        self.token_count.saturating_sub(1)
    }
}

/// A content error at the standalone location.
fn content_error(kind: ImageErrorKind) -> ImageError {
    ImageError::unsupported(kind, STANDALONE_LOCATION)
}

/// The checks that need only the header: bytes present, a known format, declared size within
/// the limit. The format and declared size.
fn check_header(
    data: &[u8],
    options: &PreprocessOptions,
) -> Result<(ImageFormat, u32, u32), ImageError> {
    if data.is_empty() {
        return Err(content_error(ImageErrorKind::EmptyImage));
    }
    let format = sniff_format(data).ok_or(content_error(ImageErrorKind::UnsupportedMediaType))?;
    let max = options.max_dimension_px;
    let (width, height) =
        header_dimensions(data, format).map_err(|_| content_error(ImageErrorKind::Decode))?;
    if width > max || height > max {
        return Err(content_error(ImageErrorKind::ImageDimensionsTooLarge));
    }
    Ok((format, width, height))
}

/// What preprocessing `data` costs in pixels, from its header alone: the declared source area
/// plus the output area. Fails as [`preprocess`] would on a bad header.
pub fn pixel_cost(data: &[u8], options: &PreprocessOptions) -> Result<u64, ImageError> {
    let (_, width, height) = check_header(data, options)?;
    let (reduced_width, reduced_height) = match options.detail {
        ImageDetail::Low => low_detail_size(width, height, options.low_detail_max_dimension_px),
        ImageDetail::High | ImageDetail::Original | ImageDetail::Auto => (width, height),
    };
    let (target_width, target_height) = webp_target(reduced_width.max(1), reduced_height.max(1))?;
    let area = |w: u32, h: u32| u64::from(w) * u64::from(h);
    Ok(area(width, height) + area(target_width, target_height))
}

/// Preprocesses one encoded image. Errors are reported at `image[0]`
/// (the resolver re-locates them).
pub fn preprocess(
    data: &[u8],
    options: &PreprocessOptions,
) -> Result<PreprocessedImage, ImageError> {
    let (format, _, _) = check_header(data, options)?;
    let max = options.max_dimension_px;
    let decoded = decode_rgb(data, format, max).map_err(|failure| {
        content_error(match failure {
            DecodeFailure::Header => ImageErrorKind::Decode,
            DecodeFailure::Pixels => ImageErrorKind::EmptyImage,
        })
    })?;
    let (width, height) = decoded.dimensions();
    if width > max || height > max {
        return Err(content_error(ImageErrorKind::ImageDimensionsTooLarge));
    }
    if width == 0 || height == 0 {
        return Err(content_error(ImageErrorKind::EmptyImage));
    }
    let reduced = match options.detail {
        ImageDetail::Low => {
            let (w, h) = low_detail_size(width, height, options.low_detail_max_dimension_px);
            resize_exact(decoded, w, h)
        }
        ImageDetail::High | ImageDetail::Original | ImageDetail::Auto => decoded,
    };
    let (target_width, target_height) = webp_target(reduced.width(), reduced.height())?;
    let canvas = fit_and_pad(reduced, target_width, target_height);
    let encoded = webp::Encoder::from_rgb(canvas.as_raw(), target_width, target_height)
        .encode_simple(false, WEBP_QUALITY)
        .map_err(|error| {
            ImageError::new(
                ImageErrorKind::Encode,
                STANDALONE_LOCATION,
                format!("WebP encoding failed: {error:?}"),
            )
        })?;
    let token_count = image_tokens(target_width.into(), target_height.into())
        .map_err(|error| resize_error(error.to_string()))?;
    Ok(PreprocessedImage {
        data: encoded.to_vec(),
        width: target_width,
        height: target_height,
        format: ImageFormat::Webp,
        source_format: format,
        token_count,
    })
}

fn resize_error(detail: String) -> ImageError {
    ImageError::new(ImageErrorKind::Resize, STANDALONE_LOCATION, detail)
}

/// The `low` detail size: long side `limit` (if it is longer), sides rounded half away from
/// zero, at least 1.
pub fn low_detail_size(width: u32, height: u32, limit: u32) -> (u32, u32) {
    let long = width.max(height);
    if long <= limit {
        return (width, height);
    }
    let scale = |side: u32| {
        let scaled = (f64::from(side) * f64::from(limit) / f64::from(long)).round();
        (scaled as u32).max(1)
    };
    (scale(width), scale(height))
}

/// The output size for a `width`×`height` image: the token-budget target, brought within the
/// WebP side limit by placing the long side at 16380 and re-fitting (at most 6 times).
pub fn webp_target(width: u32, height: u32) -> Result<(u32, u32), ImageError> {
    let calc = |w: u64, h: u64| target_size(w, h).map_err(|error| resize_error(error.to_string()));
    let mut target = calc(width.into(), height.into())?;
    for _ in 0..MAX_WEBP_REFITS {
        if target.0 <= WEBP_MAX_SIDE && target.1 <= WEBP_MAX_SIDE {
            break;
        }
        let (long, short) = (target.0.max(target.1), target.0.min(target.1));
        let scaled = (short as f64 * WEBP_FALLBACK_SIDE as f64 / long as f64).round();
        let short = (scaled as u64).max(1).div_ceil(PATCH_PX) * PATCH_PX;
        target = if target.0 >= target.1 {
            calc(WEBP_FALLBACK_SIDE, short)?
        } else {
            calc(short, WEBP_FALLBACK_SIDE)?
        };
    }
    match (u32::try_from(target.0), u32::try_from(target.1)) {
        (Ok(w), Ok(h)) if u64::from(w) <= WEBP_MAX_SIDE && u64::from(h) <= WEBP_MAX_SIDE => {
            Ok((w, h))
        }
        _ => Err(resize_error(format!(
            "no V4.1 target size within {WEBP_MAX_SIDE} pixels for a {width}x{height} image"
        ))),
    }
}

/// Bicubic resize (a no-op when the size already matches).
fn resize_exact(image: RgbImage, width: u32, height: u32) -> RgbImage {
    if image.dimensions() == (width, height) {
        image
    } else {
        // Through `DynamicImage` so the resampler runs as compiled (optimised) in `image`.
        DynamicImage::ImageRgb8(image)
            .resize_exact(width, height, FilterType::CatmullRom)
            .into_rgb8()
    }
}

/// Scales `image` to fit inside `width`×`height` keeping its aspect ratio (the constrained
/// side's partner rounded half to even), then centres it on gray padding.
fn fit_and_pad(image: RgbImage, width: u32, height: u32) -> RgbImage {
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    let (ratio_w, ratio_h) = (f64::from(width) / w, f64::from(height) / h);
    let (fit_w, fit_h) = if ratio_w <= ratio_h {
        let fit_h = (h * ratio_w).round_ties_even() as u32;
        (width, fit_h.clamp(1, height))
    } else {
        let fit_w = (w * ratio_h).round_ties_even() as u32;
        (fit_w.clamp(1, width), height)
    };
    let resized = resize_exact(image, fit_w, fit_h);
    if (fit_w, fit_h) == (width, height) {
        return resized;
    }
    let left = (f64::from(width - fit_w) / 2.0).round_ties_even() as usize;
    let top = (f64::from(height - fit_h) / 2.0).round_ties_even() as usize;
    let mut canvas = RgbImage::from_pixel(width, height, PADDING);
    let (canvas_row, resized_row) = (width as usize * 3, fit_w as usize * 3);
    let rows = canvas.chunks_exact_mut(canvas_row).skip(top);
    for (target, source) in rows.zip(resized.chunks_exact(resized_row)) {
        target[left * 3..left * 3 + resized_row].copy_from_slice(source);
    }
    canvas
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn low_detail_sizes() {
        assert_eq!(low_detail_size(1920, 1080, 512), (512, 288));
        assert_eq!(low_detail_size(300, 200, 512), (300, 200));
        assert_eq!(low_detail_size(300, 200, 0), (1, 1));
    }

    #[test]
    fn webp_limit_refits() {
        assert_eq!(webp_target(1, 1000).unwrap(), (28, 16380));
        assert_eq!(webp_target(1, 2000).unwrap(), (42, 16380));
        assert_eq!(webp_target(20000, 1).unwrap(), (16380, 28));
        assert_eq!(webp_target(1920, 1080).unwrap(), (1708, 966));
    }

    #[test]
    fn padding_is_centred() {
        let image = RgbImage::from_pixel(10, 20, Rgb([0, 0, 0]));
        let canvas = fit_and_pad(image, 28, 28);
        assert_eq!(canvas.dimensions(), (28, 28));
        assert_eq!(canvas.get_pixel(0, 0), &PADDING);
        assert_eq!(canvas.get_pixel(14, 14), &Rgb([0, 0, 0]));
    }

    #[test]
    fn bad_inputs_are_errors() {
        let options = PreprocessOptions::default();
        let kind = |data: &[u8]| preprocess(data, &options).unwrap_err().kind();
        assert_eq!(kind(b""), ImageErrorKind::EmptyImage);
        assert_eq!(kind(b"BM......"), ImageErrorKind::UnsupportedMediaType);
        assert_eq!(kind(b"\x89PNG\r\n\x1a\n"), ImageErrorKind::Decode);
    }
}
