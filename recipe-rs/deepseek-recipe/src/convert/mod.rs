//! Request conversion: a protocol request becomes a
//! [`Conversation`](crate::conversation::Conversation) plus the inference and output-parsing
//! settings, with every validation the official API performs (same 400 bodies, same order).
//!
//! Each protocol has its own module (`chat_completions`, `responses`, `messages`) that walks the
//! request in the reference's validation order; the rules the protocols share (thinking and
//! effort, sampling parameters, tools, strict schemas, images, history checks) live in their own
//! modules and are called from there.

mod chat_completions;
mod content;
mod draft;
mod history;
mod images;
mod infer;
mod messages;
mod meta_schema;
mod options;
mod python_json;
mod report;
mod responses;
mod sampling;
mod strict_schema;
mod thinking;
mod tools;

pub use infer::infer_protocol;
pub use options::{
    ConversionOptions, ReasoningContentBehavior, WebSearchBehavior, DEFAULT_IMAGE_TOKEN,
    DEFAULT_MAX_TOKENS_UPPER_BOUND,
};

use serde::{Deserialize, Serialize};

use crate::converted::ConvertedRequest;
use crate::error::Result;
use crate::names::enum_names;
use crate::protocol::{ChatCompletionRequest, MessagesRequest, ResponsesRequest};

/// The request protocols the recipe converts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// OpenAI Chat Completions.
    ChatCompletions,
    /// OpenAI Responses.
    Responses,
    /// Anthropic Messages.
    Messages,
}

enum_names!(Protocol, "protocol", [
    ChatCompletions => "chat_completions",
    Responses => "responses",
    Messages => "messages",
]);

/// Parses a request body of `protocol` and converts it (parse errors are [`crate::Error::Parse`],
/// conversion errors [`crate::Error::Api`]).
pub fn convert_json(
    protocol: Protocol,
    body: &str,
    options: &ConversionOptions,
) -> Result<ConvertedRequest> {
    let converted = match protocol {
        Protocol::ChatCompletions => ChatCompletionRequest::from_json(body)?.convert(options),
        Protocol::Responses => ResponsesRequest::from_json(body)?.convert(options),
        Protocol::Messages => MessagesRequest::from_json(body)?.convert(options),
    };
    Ok(converted?)
}
