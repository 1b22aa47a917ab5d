//! Model output → protocol chunks: the incremental output parser, per-protocol generators,
//! SSE framing and accumulation into complete responses.
//!
//! [`StreamProcessor`] ties it together: push [`InferenceChunk`]s, get
//! [`Chunk`](crate::Chunk)s. [`SseStream`] adds accumulation and writes ready-to-send SSE bytes
//! into one buffer.

mod accumulator;
mod chat;
mod config;
mod custom_input;
mod decode;
mod events;
mod generator;
mod ids;
mod inference;
mod messages;
mod options;
mod parser;
mod processor;
mod responses;
mod sse;
mod token_text;

pub use accumulator::Accumulator;
pub use config::{GeneratorConfig, StreamIdentity};
pub use decode::TokenText;
pub use ids::IdSource;
pub use inference::{
    InferenceChunk, InferenceFinishReason, PromptUsage, TokenLogprobs, TopLogprob,
};
pub use messages::MessagesResponse;
pub use options::StreamOptions;
pub use parser::{ArgumentFragment, ParserEvent, Piece, PieceKind, StreamParser, TextDelta};
pub use processor::StreamProcessor;
pub use responses::ResponsesResponse;
pub use sse::{sse_done_data, sse_frame, write_sse_event, SseStream};
pub use token_text::{SharedTokenText, TokenizerText};
