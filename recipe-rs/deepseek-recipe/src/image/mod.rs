//! DeepSeek V4.1 image input: what a host needs to accept images exactly as the official API.
//!
//! The pipeline: image sources (from request conversion, see
//! [`crate::conversation::ImageSource`]) → [`ImageResolver::resolve`] (request limits,
//! data-URL decoding or fetching through an [`ImageFetcher`], a [quota](ImageQuota) shared across
//! calls) →
//! [`preprocess()`] (format sniffing, header limits, decoding, `low` detail, fitting to the token
//! budget, WebP) → [`PreprocessedImage`]s whose [token counts](image_tokens) a prompt count adds as
//! the [`token_adjustment`].
//!
//! Network access lives behind the `fetch` cargo feature (off by default): without it the
//! core stays free of an HTTP client, and URL sources need a caller-supplied [`ImageFetcher`].

pub(crate) mod data_url;
mod decode;
mod detect;
mod downloads;
mod error;
mod fetch;
mod limits;
mod policy;
mod preprocess;
mod resolver;
mod source;
mod tokens;

pub use decode::BACKGROUND;
pub use detect::{sniff_format, ImageFormat};
pub use downloads::RetryPolicy;
pub use error::{ImageError, ImageErrorKind, UNSUPPORTED_IMAGE};
pub use fetch::ImageFetcher;
#[cfg(feature = "fetch")]
pub use fetch::{HostResolver, HttpFetcher, SystemResolver};
pub use limits::{FetchPolicy, ResolveBudget, ResolverLimits};
pub use policy::{DestinationPolicy, IpRange};
pub use preprocess::{preprocess, PreprocessOptions, PreprocessedImage};
pub use resolver::{ImageQuota, ImageResolver, QuotaUsage, ResolvedImages};
pub use source::{ImageData, ImageInput};
pub use tokens::{image_tokens, token_adjustment, CalcResizeError};
