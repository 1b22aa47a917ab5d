//! Accumulation of a stream's chunks into the complete (non-streamed) response.

use super::config::GeneratorConfig;
use super::inference::PromptUsage;
use super::messages::MessagesResponse;
use super::responses::ResponsesResponse;
use crate::converted::ResponseContext;
use crate::protocol::output::chat_completions::ChatResponse;
use crate::protocol::output::Chunk;

/// A complete (non-streamed) response accumulated from the chunks of one protocol.
#[derive(Debug, Clone, PartialEq)]
pub enum Accumulator {
    /// A `chat.completion`.
    Chat(ChatResponse),
    /// An Anthropic `message`.
    Messages(MessagesResponse),
    /// An OpenAI `response`.
    Responses(Box<ResponsesResponse>),
}

impl Accumulator {
    /// Adds one chunk (chunks of another protocol are ignored).
    pub fn accumulate(&mut self, chunk: &Chunk) {
        match (self, chunk) {
            (Self::Chat(response), Chunk::Chat(chunk)) => response.accumulate(chunk),
            (Self::Messages(response), Chunk::Messages(event)) => response.accumulate(event),
            (Self::Responses(response), Chunk::Responses(event)) => response.accumulate(event),
            _ => {}
        }
    }

    /// An empty response for the stream `config` generates: Chat and Responses report `created`
    /// until the stream's own objects replace it; Messages reports `prompt` usage until the
    /// `message_start` event replaces it.
    pub fn for_config(config: &GeneratorConfig, created: u64, prompt: PromptUsage) -> Self {
        let (id, model) = (config.identity.id.as_str(), config.identity.model.as_str());
        match &config.context {
            ResponseContext::ChatCompletions { .. } => {
                Self::Chat(ChatResponse::new(id, model, created))
            }
            ResponseContext::Messages => Self::Messages(MessagesResponse::new(id, model, prompt)),
            ResponseContext::Responses(_) => {
                Self::Responses(Box::new(ResponsesResponse::new(id, model, created)))
            }
        }
    }

    /// The response as compact JSON text.
    pub fn to_json(&self) -> String {
        let json = match self {
            Self::Chat(response) => serde_json::to_string(response),
            Self::Messages(response) => serde_json::to_string(&response.message()),
            Self::Responses(response) => serde_json::to_string(response.response()),
        };
        json.expect("response types always serialise")
    }
}
