//! Serde wire types of the three protocols (OpenAI Chat Completions, OpenAI Responses,
//! Anthropic Messages): the request bodies, and in [`output`] what the API sends back.
//!
//! Parsing is two-staged like the reference: the text is first read as a JSON value (errors
//! `invalid JSON request: … at line L column C`), then the value is deserialised into the typed
//! request (errors `invalid request body: …`, without position). Unknown fields are ignored,
//! `null` means absent and a repeated key keeps its last value. Most bodies are read straight into
//! the typed request by a strict reader of our own (`direct_read`), which gives the same values
//! and declines whatever the two stages might decide differently; a declined body, and every
//! error, takes the two stages (see `shared::from_json`).

pub mod chat_completions;
mod direct_read;
pub mod messages;
pub mod output;
pub mod responses;
mod shared;

pub use chat_completions::ChatCompletionRequest;
pub use messages::MessagesRequest;
pub use responses::ResponsesRequest;
pub use shared::{ChatCompletionThinking, EffortParam, ThinkingType};
