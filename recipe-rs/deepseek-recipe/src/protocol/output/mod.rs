//! What the API sends back: the chunks and events of a stream and the complete responses, per
//! protocol, with byte-exact compact JSON writers.

pub mod chat_completions;
mod json_writer;
pub mod logprobs;
pub mod messages;
pub mod responses;

use chat_completions::ChatChunk;
use messages::MessagesEvent;
use responses::ResponsesEvent;

/// One protocol chunk (Chat) or event (Responses, Messages).
#[derive(Debug, Clone, PartialEq)]
pub enum Chunk {
    /// A `chat.completion.chunk`.
    Chat(ChatChunk),
    /// An Anthropic Messages event.
    Messages(MessagesEvent),
    /// An OpenAI Responses event.
    Responses(Box<ResponsesEvent>),
}

impl Chunk {
    /// The chunk as compact JSON text, byte-exact with the official API.
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        self.write_json(&mut out);
        String::from_utf8(out).expect("the JSON writer only writes UTF-8")
    }

    /// Appends the chunk's compact JSON text (the bytes of [`Self::to_json`]) to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Self::Chat(chunk) => chunk.write_json(out),
            Self::Messages(event) => event.write_json(out),
            Self::Responses(event) => event.write_json(out),
        }
    }

    /// The SSE `event:` name (`None` for Chat, which sends bare `data:` lines).
    pub fn sse_event(&self) -> Option<&'static str> {
        match self {
            Self::Chat(_) => None,
            Self::Messages(event) => Some(event.name()),
            Self::Responses(event) => Some(event.kind),
        }
    }
}
