//! The stream processor: inference chunks in, protocol chunks out.

use super::config::GeneratorConfig;
use super::decode::TokenDecoder;
use super::events::{Emit, OutputEvent, StreamEnd, StreamStart, StreamUsage};
use super::generator::Generator;
use super::ids::IdSource;
use super::inference::{InferenceChunk, InferenceFinishReason, PromptUsage, TokenLogprobs};
use super::parser::{ParserEvent, PieceKind, StreamParser};
use super::token_text::SharedTokenText;
use crate::converted::ParsingOptions;
use crate::error::{Error, Result};
use crate::protocol::output::Chunk;

/// Lifecycle of a processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Open,
    Finished,
    Closed,
}

/// Ties the output parser to a protocol generator: push inference chunks, get protocol chunks.
pub struct StreamProcessor {
    generator: Generator,
    parser: StreamParser,
    tokenizer: Option<SharedTokenText>,
    decoder: TokenDecoder,
    ids: IdSource,
    thinking_mode: bool,
    status: Status,
    started: bool,
    start: StreamStart,
    completion_tokens: u64,
    reasoning_text: String,
    parser_events: Vec<ParserEvent>,
}

impl std::fmt::Debug for StreamProcessor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamProcessor")
            .field("status", &self.status)
            .field("tokenizer", &self.tokenizer.is_some())
            .finish_non_exhaustive()
    }
}

fn stream_error(message: impl Into<String>) -> Error {
    Error::Stream(message.into())
}

impl StreamProcessor {
    /// A processor with random tool-call ids.
    pub fn new(
        config: GeneratorConfig,
        options: ParsingOptions,
        tokenizer: Option<SharedTokenText>,
    ) -> Self {
        Self::with_id_source(config, options, tokenizer, IdSource::random())
    }

    /// A processor whose tool-call ids come from `ids` (seed it for reproducible output).
    pub fn with_id_source(
        config: GeneratorConfig,
        options: ParsingOptions,
        tokenizer: Option<SharedTokenText>,
        ids: IdSource,
    ) -> Self {
        Self {
            thinking_mode: config.thinking_mode,
            generator: Generator::new(&config),
            parser: StreamParser::new(options),
            tokenizer,
            decoder: TokenDecoder::default(),
            ids,
            status: Status::Open,
            started: false,
            start: StreamStart::default(),
            completion_tokens: 0,
            reasoning_text: String::new(),
            parser_events: Vec::new(),
        }
    }

    /// Whether the stream has ended normally (finish chunk, stop sequence or [`Self::finish`]).
    pub fn finished(&self) -> bool {
        self.status == Status::Finished
    }

    /// Closes the processor without output; later calls fail.
    pub fn close(&mut self) {
        if self.status == Status::Open {
            self.status = Status::Closed;
        }
    }

    fn check_open(&self) -> Result<()> {
        match self.status {
            Status::Open => Ok(()),
            Status::Finished => Err(stream_error("stream processor has finished")),
            Status::Closed => Err(stream_error("stream processor is closed")),
        }
    }

    /// Feeds one inference chunk; returns the protocol chunks it produced.
    pub fn push(&mut self, chunk: InferenceChunk) -> Result<Vec<Chunk>> {
        let mut out = Vec::new();
        self.push_into(chunk, &mut out)?;
        Ok(out)
    }

    /// Feeds one inference chunk; appends the protocol chunks it produced to `out`.
    pub fn push_into(&mut self, chunk: InferenceChunk, out: &mut impl Emit<Chunk>) -> Result<()> {
        match chunk {
            InferenceChunk::Ready {
                prompt_usage,
                system_fingerprint,
            } => {
                self.check_open()?;
                if !self.started {
                    self.start = StreamStart {
                        prompt_usage: prompt_usage.unwrap_or_default(),
                        system_fingerprint,
                    };
                    self.ensure_started(out);
                }
                Ok(())
            }
            InferenceChunk::Text {
                content,
                token_count,
            } => self.push_text(&content, token_count, out),
            InferenceChunk::Tokens {
                token_ids,
                logprobs,
            } => self.push_tokens(&token_ids, logprobs.as_deref(), out),
            InferenceChunk::Finish { finish_reason } => self.push_finish(finish_reason, out),
        }
    }

    /// Feeds a text piece that took `token_count` tokens (a `text` chunk without its copy);
    /// appends the protocol chunks it produced to `out`.
    pub fn push_text(
        &mut self,
        text: &str,
        token_count: u64,
        out: &mut impl Emit<Chunk>,
    ) -> Result<()> {
        self.check_open()?;
        self.ensure_started(out);
        self.completion_tokens = self.completion_tokens.saturating_add(token_count);
        self.parser
            .push_str(text, Vec::new(), PieceKind::Text, &mut self.parser_events);
        self.forward(out);
        Ok(())
    }

    /// Feeds generated token ids with optional log probabilities (one per id; a `tokens`
    /// chunk without its copy); appends the protocol chunks they produced to `out`.
    pub fn push_tokens(
        &mut self,
        token_ids: &[u32],
        logprobs: Option<&[TokenLogprobs]>,
        out: &mut impl Emit<Chunk>,
    ) -> Result<()> {
        self.check_open()?;
        let Some(tokenizer) = self.tokenizer.as_deref() else {
            self.status = Status::Closed;
            return Err(stream_error("token chunk received without a tokenizer"));
        };
        if let Some(logprobs) = logprobs {
            if logprobs.len() != token_ids.len() {
                self.status = Status::Closed;
                return Err(stream_error(format!(
                    "invalid log probabilities: {} log probabilities for {} token IDs",
                    logprobs.len(),
                    token_ids.len()
                )));
            }
        }
        let parser = &mut self.parser;
        let events = &mut self.parser_events;
        let mut pieces = 0;
        let released =
            self.decoder
                .decode_each(tokenizer, token_ids, logprobs, |text, logprobs, kind| {
                    pieces += 1;
                    parser.push_str(text, logprobs, kind, events);
                    !parser.stopped()
                });
        self.completion_tokens = self.completion_tokens.saturating_add(released);
        // Token ids that release no text yet (pending UTF-8, unknown ids) do not start the stream.
        if pieces > 0 {
            self.ensure_started(out);
        }
        self.forward(out);
        Ok(())
    }

    /// Feeds the backend's finish reason; appends the final protocol chunks to `out`.
    pub fn push_finish(
        &mut self,
        finish_reason: InferenceFinishReason,
        out: &mut impl Emit<Chunk>,
    ) -> Result<()> {
        self.check_open()?;
        self.ensure_started(out);
        self.parser.finish(&mut self.parser_events);
        self.forward(out);
        if self.status == Status::Open {
            let tool_calls = self.parser.tool_call_count() > 0;
            self.end(StreamEnd::from_finish(finish_reason, tool_calls), out);
        }
        Ok(())
    }

    /// Closes the input: flushes held text and produces the final chunks (finish reason Stop,
    /// without tool-call mapping). Returns nothing once the stream has finished.
    pub fn finish(&mut self) -> Result<Vec<Chunk>> {
        let mut out = Vec::new();
        self.finish_into(&mut out)?;
        Ok(out)
    }

    /// [`Self::finish`], appending the final chunks to `out`.
    pub fn finish_into(&mut self, out: &mut impl Emit<Chunk>) -> Result<()> {
        match self.status {
            Status::Finished => return Ok(()),
            Status::Closed => return Err(stream_error("stream processor is closed")),
            Status::Open => {}
        }
        self.ensure_started(out);
        self.parser.finish(&mut self.parser_events);
        self.forward(out);
        if self.status == Status::Open {
            self.end(StreamEnd::Stop { tool_calls: false }, out);
        }
        Ok(())
    }

    fn ensure_started(&mut self, out: &mut impl Emit<Chunk>) {
        if !self.started {
            self.started = true;
            self.generator.start(&self.start, out);
        }
    }

    /// Turns parser events into generator output; ends the stream at a stop sequence.
    fn forward(&mut self, out: &mut impl Emit<Chunk>) {
        let mut stop = None;
        let mut events = std::mem::take(&mut self.parser_events);
        for event in events.drain(..) {
            let event = match event {
                ParserEvent::Reasoning(delta) => {
                    self.reasoning_text.push_str(&delta.text);
                    OutputEvent::Reasoning(delta)
                }
                ParserEvent::Content(delta) => OutputEvent::Content(delta),
                ParserEvent::ToolCallStart { index, name } => {
                    let empty_thinking = self.thinking_mode && self.reasoning_text.is_empty();
                    let id = self.ids.tool_call_id(index, empty_thinking);
                    OutputEvent::ToolCallStart { index, id, name }
                }
                ParserEvent::ToolCallArguments { index, fragment } => {
                    OutputEvent::ToolCallArguments { index, fragment }
                }
                ParserEvent::StopSequence(matched) => {
                    stop = Some(matched);
                    continue;
                }
            };
            self.generator.event(event, out);
        }
        self.parser_events = events;
        if let Some(matched) = stop {
            self.end(StreamEnd::StopSequence(matched), out);
        }
    }

    fn end(&mut self, end: StreamEnd, out: &mut impl Emit<Chunk>) {
        let usage = StreamUsage {
            prompt: self.start.prompt_usage,
            completion_tokens: self.completion_tokens,
            reasoning_tokens: self.reasoning_tokens(),
        };
        self.generator.finish(&end, &usage, out);
        self.status = Status::Finished;
    }

    /// Tokens of the reasoning text, when a tokenizer is attached and the output has a thinking
    /// stage.
    fn reasoning_tokens(&self) -> Option<u64> {
        let tokenizer = self.tokenizer.as_deref()?;
        self.parser.options().thinking_initial_stage?;
        Some(tokenizer.count_tokens(&self.reasoning_text) as u64)
    }

    /// Prompt usage as reported by the first `ready` chunk.
    pub fn prompt_usage(&self) -> PromptUsage {
        self.start.prompt_usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processors_can_move_between_threads() {
        fn assert_send<T: Send>() {}
        assert_send::<StreamProcessor>();
    }
}
