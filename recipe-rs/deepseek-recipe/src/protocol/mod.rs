//! Serde wire types of the three protocols (OpenAI Chat Completions, OpenAI Responses,
//! Anthropic Messages): the request bodies, and in [`output`] what the API sends back.
//!
//! Parsing is two-staged like the reference: the text is first read as a JSON value (errors
//! `invalid JSON request: … at line L column C`), then the value is deserialised into the typed
//! request (errors `invalid request body: …`, without position). Unknown fields are ignored,
//! `null` means absent and a repeated key keeps its last value. Chat Completions and Messages
//! bodies that a pre-scan shows to be read alike either way are read straight into the typed
//! request, without the intermediate value; any other body, and every error, takes the two stages
//! (see `shared::from_json`).

pub mod chat_completions;
pub mod messages;
pub mod output;
pub mod responses;
mod shared;

pub use chat_completions::ChatCompletionRequest;
pub use messages::MessagesRequest;
pub use responses::ResponsesRequest;
pub use shared::{ChatCompletionThinking, EffortParam, ThinkingType};
