//! The crate's one error type.

use serde::{Deserialize, Serialize};

/// How the message of an [`Error::Parse`] for a body that is not JSON at all starts (the
/// reference's wording; too deep a nesting is one of them), as opposed to JSON of the wrong shape.
pub const INVALID_JSON_PREFIX: &str = "invalid JSON request: ";

/// Everything that can go wrong in the recipe, by kind.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request body is not valid JSON or does not match the protocol's shape (the parse stage).
    /// The message reproduces the reference's wording, e.g. ``invalid request body: missing field `messages` ``.
    #[error("{0}")]
    Parse(String),
    /// The request parsed but is invalid (the convert stage): the official HTTP status and error body.
    #[error("{}", .0.error.message)]
    Api(ApiError),
    /// A stream processor was misused or fed invalid input (the reference's `RuntimeError`),
    /// e.g. `stream processor has finished`.
    #[error("{0}")]
    Stream(String),
    /// The tokenizer could not be loaded (invalid or unsupported `tokenizer.json`), or was given an
    /// unknown token id or an invalid special range.
    #[error("{0}")]
    Tokenizer(String),
    /// A rendered prompt could not be encoded; the message reproduces the reference's wording,
    /// e.g. `failed to encode conversation: special token "<BOS>" is not in the added vocabulary`.
    #[error("failed to encode conversation: {0}")]
    Encode(String),
    /// An image could not be fetched, decoded or resolved (V4.1 image input); see
    /// [`crate::image::ImageError`] for its kind and retryability.
    #[error("{0}")]
    Image(crate::image::ImageError),
    /// An output constraint cannot be expressed as a constrained-decoding grammar (e.g. its
    /// schema is not valid JSON, or a required tool parameter cannot be written as markup).
    #[error("{0}")]
    Constraint(String),
}

/// The OpenAI-style error body the official API returns, with its HTTP status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// HTTP status code.
    #[serde(skip)]
    pub status_code: u16,
    /// The `error` object of the body.
    pub error: ApiErrorBody,
}

/// The `{"message", "type", "param", "code"}` object inside an error body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiErrorBody {
    /// Human-readable message, byte-exact with the official API.
    pub message: String,
    /// Error type, e.g. `invalid_request_error`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The offending parameter, when the API names one.
    pub param: Option<String>,
    /// Error code, e.g. `invalid_request_error`.
    pub code: Option<String>,
}

impl ApiError {
    /// A 400 `invalid_request_error` with `message`, the shape every conversion error has.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self {
            status_code: 400,
            error: ApiErrorBody {
                message: message.into(),
                kind: "invalid_request_error".to_owned(),
                param: None,
                code: Some("invalid_request_error".to_owned()),
            },
        }
    }

    /// The body as compact JSON text, exactly as sent on the wire.
    pub fn body_json(&self) -> String {
        serde_json::to_string(self).expect("error bodies always serialise")
    }
}

impl From<ApiError> for Error {
    fn from(value: ApiError) -> Self {
        Self::Api(value)
    }
}

impl From<crate::image::ImageError> for Error {
    fn from(value: crate::image::ImageError) -> Self {
        Self::Image(value)
    }
}

impl Error {
    /// The tokenizer error for an id no token has (`id` as written, possibly outside `u32`).
    pub fn unknown_token_id(id: impl std::fmt::Display) -> Self {
        Self::Tokenizer(format!("unknown token id {id}"))
    }
}

/// Shorthand for results with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_request_body_has_the_official_shape() {
        let err = ApiError::invalid_request("Empty input messages");
        assert_eq!(err.status_code, 400);
        assert_eq!(
            err.body_json(),
            r#"{"error":{"message":"Empty input messages","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}"#
        );
    }
}
