//! DeepSeek V4 / V4.1 request conversion, prompt encoding, tokenizer and output parsing,
//! byte-exact with DeepSeek's official API.
//!
//! The data flows one way: request JSON → [`conversation::Conversation`] → prompt text and
//! token ids → (any backend generates) → stream parser → protocol chunks → complete responses.

pub mod conversation;
pub mod converted;
pub mod encoding;
pub mod error;
pub mod image;
pub mod markup;
pub mod stream;
pub mod tokenizer;

pub use encoding::{Encoding, PromptFormat, RenderedPrompt};
pub use error::{ApiError, Error, Result};
pub use markup::SpecialTokens;
pub mod convert;
pub mod protocol;

pub use convert::{convert_json, ConversionOptions, Protocol};
pub use converted::{ConvertedRequest, ModelVersion, ParsingOptions, ThinkingInitialStage};
pub use protocol::output::Chunk;
pub use stream::{InferenceChunk, StreamParser, StreamProcessor};
pub use tokenizer::{IncrementalDecoder, Tokenizer};
