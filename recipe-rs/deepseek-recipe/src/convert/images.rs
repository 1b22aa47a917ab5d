//! Syntactic checks of image sources at conversion time (V4.1; V4 Pro shows no images).

use crate::conversation::{ImageDetail, ImageSource, ImageSourceKind};
use crate::error::ApiError;
use crate::image::data_url::trim_base64_end;
use crate::protocol::chat_completions::ImageDetailParam;

/// Longest external image URL, in UTF-8 bytes.
pub(crate) const MAX_IMAGE_URL_BYTES: usize = 8192;

/// Media types a data URL may declare (after `image/jpg` → `image/jpeg`).
const SUPPORTED_MEDIA_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The advice appended to over-long URL errors.
pub(crate) const URL_TOO_LONG_ADVICE: &str =
    "Consider passing file data directly with base64 data url instead.";

/// The requested detail (`high` when absent).
pub(crate) fn image_detail(detail: Option<ImageDetailParam>) -> ImageDetail {
    match detail {
        Some(ImageDetailParam::Low) => ImageDetail::Low,
        Some(ImageDetailParam::High) | None => ImageDetail::High,
        Some(ImageDetailParam::Original) => ImageDetail::Original,
        Some(ImageDetailParam::Auto) => ImageDetail::Auto,
    }
}

/// Classifies an `image_url` string (Chat Completions, Responses) into a source.
///
/// A value starting with `http` (any case) is an external URL (at most 8192 bytes, else
/// `too_long(len)`); one starting with `data:` (any case, after leading ASCII whitespace) that
/// contains `base64,` is a data URL whose media type and base64 body are checked; anything else
/// is refused. `path` prefixes the error messages.
pub(crate) fn image_url_source(
    url: &str,
    detail: ImageDetail,
    path: &str,
    too_long: impl FnOnce(usize) -> String,
) -> Result<ImageSource, ApiError> {
    let error = |detail: &str| ApiError::invalid_request(format!("{path}: {detail}"));
    let is_http = url
        .get(..4)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http"));
    let kind = if is_http {
        if url.len() > MAX_IMAGE_URL_BYTES {
            return Err(ApiError::invalid_request(too_long(url.len())));
        }
        ImageSourceKind::Url
    } else if let Some(data) = data_url_body(url) {
        check_data_url(data).map_err(error)?;
        ImageSourceKind::DataUrl
    } else {
        return Err(error("Unsupported image_url format"));
    };
    Ok(ImageSource {
        kind,
        detail,
        path: path.to_owned(),
        location: url.to_owned(),
    })
}

/// What follows `data:` in a data URL (leading ASCII whitespace allowed before it); `None`
/// unless the URL also contains `base64,`.
fn data_url_body(url: &str) -> Option<&str> {
    data_url_rest(url).filter(|_| url.contains("base64,"))
}

/// What follows `data:` (any case, after leading ASCII whitespace), if `url` starts so.
pub(crate) fn data_url_rest(url: &str) -> Option<&str> {
    let trimmed = url.trim_ascii_start();
    let scheme = trimmed.get(..5)?;
    scheme.eq_ignore_ascii_case("data:").then(|| &trimmed[5..])
}

/// Checks the media type and (for `;base64` data) the body of a data URL (`rest`: what follows
/// `data:`).
fn check_data_url(rest: &str) -> Result<(), &'static str> {
    let unsupported = "You have uploaded an unsupported image. Please make sure your image is valid and has one of the following formats: webp, png, jpeg, and gif.";
    let media_end = rest.find([';', ',']).unwrap_or(rest.len());
    let media_type = rest[..media_end].trim().to_ascii_lowercase();
    let media_type = if media_type == "image/jpg" {
        "image/jpeg".to_owned()
    } else {
        media_type
    };
    if !SUPPORTED_MEDIA_TYPES.contains(&media_type.as_str()) {
        return Err(unsupported);
    }
    let Some(comma) = rest.find(',') else {
        return Ok(());
    };
    let header = &rest[..comma];
    if header.to_ascii_lowercase().ends_with(";base64") && !is_valid_base64(&rest[comma + 1..]) {
        return Err("Invalid base64 data");
    }
    Ok(())
}

/// Standard-alphabet base64, ASCII whitespace ignored, padding optional but never extra
/// (trailing control characters are ignored: [`trim_base64_end`]).
pub(crate) fn is_valid_base64(body: &str) -> bool {
    let compact: Vec<u8> = trim_base64_end(body)
        .bytes()
        .filter(|byte| !byte.is_ascii_whitespace())
        .collect();
    let data_len = compact
        .iter()
        .position(|&byte| byte == b'=')
        .unwrap_or(compact.len());
    let (data, padding) = compact.split_at(data_len);
    if !data
        .iter()
        .all(|&byte| byte.is_ascii_alphanumeric() || byte == b'+' || byte == b'/')
    {
        return false;
    }
    if !padding.iter().all(|&byte| byte == b'=') {
        return false;
    }
    match (data.len() % 4, padding.len()) {
        (1, _) => false,
        (_, 0) => true,
        (remainder, pad) => remainder != 0 && remainder + pad == 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_rules() {
        assert!(is_valid_base64("aGVsbG8="));
        assert!(is_valid_base64("aGVsbG8"));
        assert!(is_valid_base64("aGVs\nbG8="));
        assert!(is_valid_base64(""));
        assert!(!is_valid_base64("aGVsbG8=="));
        assert!(!is_valid_base64("aGVsbG8-"));
        assert!(!is_valid_base64("a"));
        assert!(is_valid_base64("aGVsbG8=\u{1f}\u{0}"));
        assert!(!is_valid_base64("\u{1f}aGVsbG8="));
    }

    #[test]
    fn classification() {
        let long = |len: usize| format!("too long {len}");
        let source = image_url_source("HTTP://x", ImageDetail::High, "p", long).unwrap();
        assert_eq!(source.kind, ImageSourceKind::Url);
        let err = image_url_source("ftp://x", ImageDetail::High, "p", long).unwrap_err();
        assert_eq!(err.error.message, "p: Unsupported image_url format");
        let err = image_url_source("base64,AAAA", ImageDetail::High, "p", long).unwrap_err();
        assert_eq!(err.error.message, "p: Unsupported image_url format");
        let source =
            image_url_source(" data:image/png;base64,AAAA", ImageDetail::High, "p", long).unwrap();
        assert_eq!(source.kind, ImageSourceKind::DataUrl);
        let err = image_url_source("data:image/bmp;base64,AAAA", ImageDetail::High, "p", long)
            .unwrap_err();
        assert!(err
            .error
            .message
            .starts_with("p: You have uploaded an unsupported image."));
    }
}
