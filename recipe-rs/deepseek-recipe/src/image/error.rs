//! `ImageError`: what can go wrong while fetching, decoding or resolving images.

use std::fmt;

/// The text every content error (bad data URL, unsupported format, empty or undecodable image,
/// oversized dimensions) carries; only the [`ImageErrorKind`] tells them apart.
pub const UNSUPPORTED_IMAGE: &str = "You have uploaded an unsupported image. Please make sure your image is valid and has one of the following formats: webp, png, jpeg, and gif.";

/// Why an image was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ImageErrorKind {
    /// More images than the request limit allows.
    TooManyImages,
    /// One image's encoded bytes exceed the per-image limit.
    ImageTooLarge,
    /// All images of the request together exceed the per-request byte limit.
    TotalSizeTooLarge,
    /// A data URL that cannot be parsed or decoded.
    InvalidDataUrl,
    /// A media type or magic bytes other than PNG, JPEG, GIF or WebP.
    UnsupportedMediaType,
    /// No bytes, or bytes whose pixel data cannot be decoded.
    EmptyImage,
    /// A header the decoder cannot read.
    Decode,
    /// Width or height above the allowed maximum.
    ImageDimensionsTooLarge,
    /// A URL source that is not `http(s)`.
    InvalidUrl,
    /// A URL source longer than the limit.
    UrlTooLong,
    /// Downloading failed (transport, redirects, wrapped inner errors).
    Fetch,
    /// The server answered with a non-success status.
    FetchStatus,
    /// The destination policy refused every address of the host.
    DestinationRejected,
    /// No target size within the WebP side limit could be found.
    Resize,
    /// The WebP encoder failed.
    Encode,
}

impl ImageErrorKind {
    /// The kind's name as the reference spells it (`TooManyImages`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TooManyImages => "TooManyImages",
            Self::ImageTooLarge => "ImageTooLarge",
            Self::TotalSizeTooLarge => "TotalSizeTooLarge",
            Self::InvalidDataUrl => "InvalidDataUrl",
            Self::UnsupportedMediaType => "UnsupportedMediaType",
            Self::EmptyImage => "EmptyImage",
            Self::Decode => "Decode",
            Self::ImageDimensionsTooLarge => "ImageDimensionsTooLarge",
            Self::InvalidUrl => "InvalidUrl",
            Self::UrlTooLong => "UrlTooLong",
            Self::Fetch => "Fetch",
            Self::FetchStatus => "FetchStatus",
            Self::DestinationRejected => "DestinationRejected",
            Self::Resize => "Resize",
            Self::Encode => "Encode",
        }
    }
}

impl fmt::Display for ImageErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An image failure: its kind, whether retrying may help, and the message
/// `"<location>: <detail>"` (just the detail when the location is empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageError {
    kind: ImageErrorKind,
    retryable: bool,
    location: String,
    detail: String,
}

impl ImageError {
    /// A non-retryable error with `detail` at `location`.
    pub fn new(
        kind: ImageErrorKind,
        location: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            retryable: false,
            location: location.into(),
            detail: detail.into(),
        }
    }

    /// A content error (`kind` with the shared "unsupported image" text) at `location`.
    pub fn unsupported(kind: ImageErrorKind, location: impl Into<String>) -> Self {
        Self::new(kind, location, UNSUPPORTED_IMAGE)
    }

    /// The same error, marked retryable or not.
    pub fn retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// The same error reported at another location.
    pub fn at(mut self, location: impl Into<String>) -> Self {
        self.location = location.into();
        self
    }

    /// The kind.
    pub fn kind(&self) -> ImageErrorKind {
        self.kind
    }

    /// Whether retrying the same operation may succeed.
    pub fn is_retryable(&self) -> bool {
        self.retryable
    }

    /// The location prefix (`<path>.image[k]`, a path, or empty).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The message without its location.
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.location.is_empty() {
            f.write_str(&self.detail)
        } else {
            write!(f, "{}: {}", self.location, self.detail)
        }
    }
}

impl std::error::Error for ImageError {}

/// The location of the `index`-th image of a request part: `<path>.image[index]`, or
/// `image[index]` for an empty path.
pub fn image_location(path: &str, index: usize) -> String {
    if path.is_empty() {
        format!("image[{index}]")
    } else {
        format!("{path}.image[{index}]")
    }
}

/// The size-limit detail: `image file size exceeds limit <n / 2^20> MB`.
pub fn too_large_detail(limit_bytes: u64) -> String {
    format!("image file size exceeds limit {} MB", limit_bytes >> 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_carries_the_location() {
        let error = ImageError::unsupported(ImageErrorKind::Decode, image_location("p", 2));
        assert_eq!(
            error.to_string(),
            format!("p.image[2]: {UNSUPPORTED_IMAGE}")
        );
        let error = ImageError::new(ImageErrorKind::TooManyImages, "", "Too many images");
        assert_eq!(error.to_string(), "Too many images");
        assert!(!error.is_retryable());
        assert_eq!(
            too_large_detail(1 << 20),
            "image file size exceeds limit 1 MB"
        );
        assert_eq!(too_large_detail(1000), "image file size exceeds limit 0 MB");
    }
}
