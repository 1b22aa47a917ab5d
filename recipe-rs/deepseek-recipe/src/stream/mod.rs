//! Model output → protocol chunks: the incremental output parser, per-protocol generators,
//! SSE framing and accumulation into complete responses.
//!
//! [`StreamProcessor`] ties it together: push [`InferenceChunk`]s, get [`Chunk`]s.
//! [`SseStream`] adds accumulation and writes ready-to-send SSE bytes into one buffer.

pub mod chat;
pub mod chunk;
pub mod config;
pub mod custom_input;
pub mod decode;
pub mod events;
pub mod ids;
pub mod inference;
mod json_writer;
pub mod logprobs;
pub mod messages;
pub mod parser;
pub mod parsing_options;
pub mod processor;
pub mod responses;
pub mod sse;
pub mod token_text;

pub use chunk::{Accumulator, Chunk};
pub use config::GeneratorConfig;
pub use decode::TokenText;
pub use inference::{InferenceChunk, InferenceFinishReason, PromptUsage};
pub use parser::{Piece, PieceKind, StreamParser};
pub use parsing_options::{ParsingOptions, ThinkingInitialStage};
pub use processor::StreamProcessor;
pub use sse::SseStream;
pub use token_text::{SharedTokenText, TokenizerText};
