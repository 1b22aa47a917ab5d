//! An image block's source: checked (base64 and its padding, `http` URLs and their length,
//! no file ids) and turned into a conversation image source.

use crate::conversation::{ImageDetail, ImageSource, ImageSourceKind};
use crate::convert::images::{MAX_IMAGE_URL_BYTES, URL_TOO_LONG_ADVICE};
use crate::error::ApiError;
use crate::protocol::messages::MessagesImageSource;

/// Checks an image block's source and returns it as a conversation source (`path` is where
/// errors point; callers may set another `path` on the result).
pub(super) fn image_source(
    source: &MessagesImageSource,
    path: &str,
) -> Result<ImageSource, ApiError> {
    let error = |detail: String| ApiError::invalid_request(format!("{path}: {detail}"));
    let (kind, location) = match source {
        MessagesImageSource::Base64 { media_type, data } => {
            if !is_padded_base64(data) {
                return Err(error("base64 decode error".to_owned()));
            }
            let data = canonical_padding(data);
            (ImageSourceKind::DataUrl, media_type.data_url(&data))
        }
        MessagesImageSource::Url { url } => {
            let is_http = url
                .get(..4)
                .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http"));
            if !is_http {
                return Err(error(format!("invalid url: {url:?}")));
            }
            if url.len() > MAX_IMAGE_URL_BYTES {
                return Err(error(format!(
                    "external link length {} too long, max link length {MAX_IMAGE_URL_BYTES}. {URL_TOO_LONG_ADVICE}",
                    url.len()
                )));
            }
            (ImageSourceKind::Url, url.clone())
        }
        MessagesImageSource::File { .. } => {
            return Err(error(
                "file_id is not supported. Pass the image as a base64 data url instead.".to_owned(),
            ));
        }
    };
    Ok(ImageSource {
        kind,
        detail: ImageDetail::High,
        path: path.to_owned(),
        location,
    })
}

/// Padded base64 data with its padding rewritten to the canonical amount (unpadded data is
/// kept as it is).
fn canonical_padding(data: &str) -> String {
    if !data.ends_with('=') {
        return data.to_owned();
    }
    let body = data.trim_end_matches('=');
    let padding = (4 - body.len() % 4) % 4;
    format!("{body}{}", "=".repeat(padding))
}

/// Messages base64: padded data may carry any amount of `=` (normalised); unpadded data must
/// be a multiple of 4; only the standard alphabet, no whitespace.
fn is_padded_base64(data: &str) -> bool {
    let body = data.trim_end_matches('=');
    let alphabet_only = body
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || byte == b'+' || byte == b'/');
    if !alphabet_only {
        return false;
    }
    if body.len() == data.len() {
        body.len() % 4 == 0
    } else {
        body.len() % 4 != 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_base64_is_normalised() {
        assert!(is_padded_base64("aGk="));
        assert!(is_padded_base64("aGk=="));
        assert!(is_padded_base64("aGVsbG8h"));
        assert!(!is_padded_base64("aGk"));
        assert!(!is_padded_base64("a-k="));
        assert_eq!(canonical_padding("aGk=="), "aGk=");
        assert_eq!(canonical_padding("aGVsbA="), "aGVsbA==");
        assert_eq!(canonical_padding("aGVsbG8h"), "aGVsbG8h");
    }
}
