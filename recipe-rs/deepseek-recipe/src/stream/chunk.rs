//! Protocol chunks, their SSE framing, and accumulation into complete responses.

use super::chat::{ChatChunk, ChatResponse};
use super::config::GeneratorConfig;
use super::inference::PromptUsage;
use super::messages::{MessagesEvent, MessagesResponse};
use super::responses::{ResponsesEvent, ResponsesResponse};

/// Where a generator or processor puts the chunks it makes, in order: a `Vec` collects them, a
/// writer (see [`super::SseStream`]) frames each as it is made.
pub trait Emit<T> {
    /// Takes the next chunk.
    fn emit(&mut self, chunk: T);
}

impl<T> Emit<T> for Vec<T> {
    fn emit(&mut self, chunk: T) {
        self.push(chunk);
    }
}

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

    /// The chunk framed as one server-sent event (`event: …\ndata: …\n\n`).
    pub fn to_sse(&self) -> String {
        let mut out = Vec::new();
        self.write_sse(&mut out);
        String::from_utf8(out).expect("the JSON writer only writes UTF-8")
    }

    /// Appends the chunk framed as one server-sent event (the bytes of [`Self::to_sse`]).
    pub fn write_sse(&self, out: &mut Vec<u8>) {
        out.reserve(256);
        if let Some(event) = self.sse_event() {
            out.extend_from_slice(b"event: ");
            out.extend_from_slice(event.as_bytes());
            out.push(b'\n');
        }
        out.extend_from_slice(b"data: ");
        self.write_json(out);
        out.extend_from_slice(b"\n\n");
    }
}

/// Frames `data` as one server-sent event.
pub fn sse_frame(event: Option<&str>, data: &str) -> String {
    match event {
        Some(event) => format!("event: {event}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

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
        match config {
            GeneratorConfig::Chat(config) => {
                Self::Chat(ChatResponse::new(&config.id, &config.model, created))
            }
            GeneratorConfig::Messages(config) => {
                Self::Messages(MessagesResponse::new(&config.id, &config.model, prompt))
            }
            GeneratorConfig::Responses(config) => Self::Responses(Box::new(
                ResponsesResponse::new(&config.id, &config.model, created),
            )),
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

    /// The data of the protocol's terminal SSE message (`[DONE]` for Chat), if it has one.
    pub fn sse_done_data(&self) -> Option<&'static str> {
        match self {
            Self::Chat(_) => Some("[DONE]"),
            Self::Messages(_) | Self::Responses(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_frames_name_their_event_and_end_with_a_blank_line() {
        assert_eq!(
            sse_frame(Some("ping"), r#"{"type":"ping"}"#),
            "event: ping\ndata: {\"type\":\"ping\"}\n\n"
        );
        assert_eq!(sse_frame(None, "[DONE]"), "data: [DONE]\n\n");
    }
}
