//! DeepSeek V4 / V4.1 request conversion, prompt encoding, tokenizer and output parsing,
//! byte-exact with DeepSeek's official API.
//!
//! The data flows one way:
//!
//! 1. [`convert_json`] parses a request body of a [`Protocol`] (wire types in [`protocol`]) and
//!    converts it into a [`ConvertedRequest`]: the [`conversation::Conversation`] to render, the
//!    [`InferenceOptions`] to sample with, the [`ParsingOptions`] to read the output with and
//!    the [`ResponseContext`] the response reports.
//! 2. An [`Encoding`] renders the conversation into a [`RenderedPrompt`]; [`encode`] turns it
//!    into token ids with a [`Tokenizer`].
//! 3. Any backend generates.
//! 4. A [`StreamProcessor`] (a [`StreamParser`] and the protocol's generator) turns
//!    [`InferenceChunk`]s into protocol [`Chunk`]s; an [`SseStream`] frames them as server-sent
//!    events and accumulates the complete response.
//!
//! Everything a user needs is re-exported here. [`protocol`] (wire types), [`conversation`]
//! (the protocol-neutral conversation) and [`image`] (V4.1 image input) are namespaces of
//! types.

pub mod conversation;
pub mod image;
pub mod protocol;

mod constraint;
mod convert;
mod converted;
mod encoding;
mod error;
mod markup;
mod names;
mod stream;
mod tokenizer;

pub use constraint::{constraint_grammar, GrammarSpec};
pub use convert::{
    convert_json, infer_protocol, ConversionOptions, Protocol, ReasoningContentBehavior,
    WebSearchBehavior, DEFAULT_IMAGE_TOKEN, DEFAULT_MAX_TOKENS_UPPER_BOUND,
};
pub use converted::{
    ConvertedRequest, InferenceOptions, ModelVersion, NamespaceToolMap, OutputConstraint,
    OutputConstraintKind, ParsingOptions, ResponseContext, ResponsesContext, ResponsesEcho,
    ThinkingInitialStage,
};
pub use encoding::{encode, Encoding, PromptFormat, RenderedPrompt};
pub use error::{ApiError, ApiErrorBody, Error, Result, INVALID_JSON_PREFIX};
pub use markup::{DsmlTags, SpecialTokenOverrides, SpecialTokens, Spelling};
pub use names::UnknownName;
pub use protocol::output::Chunk;
pub use stream::{
    sse_done_data, sse_frame, write_sse_event, Accumulator, ArgumentFragment, GeneratorConfig,
    IdSource, InferenceChunk, InferenceFinishReason, MessagesResponse, ParserEvent, Piece,
    PieceKind, PromptUsage, ResponsesResponse, SharedTokenText, SseStream, StreamIdentity,
    StreamOptions, StreamParser, StreamProcessor, TextDelta, TokenLogprobs, TokenText,
    TokenizerText, TopLogprob,
};
pub use tokenizer::{DecodedLayout, IncrementalDecoder, Tokenizer};
