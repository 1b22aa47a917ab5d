//! DeepSeek V4.1 image input: what a host needs to accept images exactly as the official API.
//!
//! The pipeline: image sources (from request conversion, see
//! [`crate::conversation::ImageSource`]) → [`ImageResolver::resolve`] (request limits,
//! data-URL decoding or [fetching](fetch), a [quota](ImageQuota) shared across calls) →
//! [`preprocess()`] (format sniffing, header limits, decoding, `low` detail, fitting to the token
//! budget, WebP) → [`PreprocessedImage`]s whose [token counts](tokens) a prompt count adds as
//! the [`token_adjustment`].
//!
//! Network access lives behind the `fetch` cargo feature (on by default): without it the
//! core stays free of an HTTP client, and URL sources need a caller-supplied [`ImageFetcher`].

pub(crate) mod data_url;
mod decode;
pub mod detect;
mod downloads;
pub mod error;
pub mod fetch;
pub mod policy;
pub mod preprocess;
pub mod resolver;
pub mod source;
pub mod tokens;

pub use decode::BACKGROUND;
pub use detect::{sniff_format, ImageFormat};
pub use error::{ImageError, ImageErrorKind, UNSUPPORTED_IMAGE};
pub use fetch::ImageFetcher;
#[cfg(feature = "fetch")]
pub use fetch::{HostResolver, HttpFetcher, SystemResolver};
pub use policy::{DestinationPolicy, IpRange};
pub use preprocess::{preprocess, PreprocessOptions, PreprocessedImage};
pub use resolver::{
    ImageQuota, ImageResolver, QuotaUsage, ResolveBudget, ResolvedImages, ResolverLimits,
    RetryPolicy,
};
pub use source::{ImageData, ImageInput};
pub use tokens::{image_tokens, token_adjustment, CalcResizeError};
