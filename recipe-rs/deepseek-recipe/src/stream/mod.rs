//! Model output → protocol chunks: the incremental output parser, per-protocol generators,
//! SSE framing and accumulation into complete responses.
//!
//! [`StreamProcessor`] ties it together: push [`InferenceChunk`]s, get [`Chunk`]s.
//! [`SseStream`] adds accumulation and writes ready-to-send SSE bytes into one buffer.

mod accumulator;
pub mod chat;
pub mod config;
pub mod custom_input;
pub mod decode;
pub mod events;
mod generator;
pub mod ids;
pub mod inference;
pub mod messages;
pub mod parser;
pub mod processor;
pub mod responses;
pub mod sse;
pub mod token_text;

pub use accumulator::Accumulator;
pub use config::{GeneratorConfig, StreamIdentity};
pub use decode::TokenText;
pub use inference::{InferenceChunk, InferenceFinishReason, PromptUsage};
pub use parser::{Piece, PieceKind, StreamParser};
pub use processor::StreamProcessor;
pub use sse::SseStream;
pub use token_text::{SharedTokenText, TokenizerText};
