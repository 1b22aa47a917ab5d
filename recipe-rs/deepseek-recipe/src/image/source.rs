//! What the resolver takes: an image's bytes or where to get them, its detail and request path.

use crate::conversation::{ImageDetail, ImageSource, ImageSourceKind};

/// Where an image's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageData {
    /// A `data:` URL carrying the bytes (base64 or percent-encoded).
    DataUrl(String),
    /// An `http(s)` URL to fetch.
    Url(String),
    /// The encoded bytes themselves.
    Bytes(Vec<u8>),
}

/// One image to resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageInput {
    /// The bytes or where to get them.
    pub data: ImageData,
    /// Requested detail.
    pub detail: ImageDetail,
    /// JSON path of the request part (error locations), possibly empty.
    pub path: String,
}

impl ImageInput {
    /// An input with `high` detail and an empty path.
    pub fn new(data: ImageData) -> Self {
        Self {
            data,
            detail: ImageDetail::High,
            path: String::new(),
        }
    }

    /// The same input with another detail.
    pub fn with_detail(mut self, detail: ImageDetail) -> Self {
        self.detail = detail;
        self
    }

    /// The same input with another request path.
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }
}

impl From<&ImageSource> for ImageInput {
    fn from(source: &ImageSource) -> Self {
        let data = match source.kind {
            ImageSourceKind::DataUrl => ImageData::DataUrl(source.location.clone()),
            ImageSourceKind::Url => ImageData::Url(source.location.clone()),
        };
        Self {
            data,
            detail: source.detail,
            path: source.path.clone(),
        }
    }
}
