//! The protocol generator behind a processor: one of the three, chosen by the request's
//! response context, with its protocol-typed chunks passed on as [`Chunk`]s.

use super::chat::ChatGenerator;
use super::config::GeneratorConfig;
use super::events::{Emit, OutputEvent, StreamEnd, StreamStart, StreamUsage};
use super::messages::MessagesGenerator;
use super::responses::ResponsesGenerator;
use crate::converted::ResponseContext;
use crate::protocol::output::responses::ResponsesEvent;
use crate::protocol::output::Chunk;

/// The protocol generator behind a processor.
#[derive(Debug, Clone)]
pub(super) enum Generator {
    Chat(ChatGenerator),
    Messages(MessagesGenerator),
    Responses(Box<ResponsesGenerator>),
}

impl Generator {
    /// The generator of the protocol of `config`.
    pub(super) fn new(config: &GeneratorConfig) -> Self {
        match &config.context {
            ResponseContext::ChatCompletions { include_usage } => {
                Self::Chat(ChatGenerator::new(config, *include_usage))
            }
            ResponseContext::Messages => Self::Messages(MessagesGenerator::new(config)),
            ResponseContext::Responses(context) => {
                Self::Responses(Box::new(ResponsesGenerator::new(config, context)))
            }
        }
    }

    /// The chunks that open the stream.
    pub(super) fn start(&mut self, start: &StreamStart, out: &mut impl Emit<Chunk>) {
        match self {
            Self::Chat(g) => g.start(start, &mut Wrap(out, Chunk::Chat)),
            Self::Messages(g) => g.start(start, &mut Wrap(out, Chunk::Messages)),
            Self::Responses(g) => g.start(start, &mut Wrap(out, responses_chunk)),
        }
    }

    /// The chunks of one output event.
    pub(super) fn event(&mut self, event: OutputEvent, out: &mut impl Emit<Chunk>) {
        match self {
            Self::Chat(g) => g.event(event, &mut Wrap(out, Chunk::Chat)),
            Self::Messages(g) => g.event(event, &mut Wrap(out, Chunk::Messages)),
            Self::Responses(g) => g.event_for(event, &mut Wrap(out, responses_chunk)),
        }
    }

    /// The chunks that end the stream.
    pub(super) fn finish(
        &mut self,
        end: &StreamEnd,
        usage: &StreamUsage,
        out: &mut impl Emit<Chunk>,
    ) {
        match self {
            Self::Chat(g) => g.finish(end, usage, &mut Wrap(out, Chunk::Chat)),
            Self::Messages(g) => g.finish(end, usage, &mut Wrap(out, Chunk::Messages)),
            Self::Responses(g) => g.finish(end, usage, &mut Wrap(out, responses_chunk)),
        }
    }
}

fn responses_chunk(event: ResponsesEvent) -> Chunk {
    Chunk::Responses(Box::new(event))
}

/// Passes a generator's protocol-typed chunks on as [`Chunk`]s wrapped by the function.
struct Wrap<'a, S, F>(&'a mut S, F);

impl<T, S: Emit<Chunk>, F: Fn(T) -> Chunk> Emit<T> for Wrap<'_, S, F> {
    fn emit(&mut self, chunk: T) {
        self.0.emit((self.1)(chunk));
    }
}
