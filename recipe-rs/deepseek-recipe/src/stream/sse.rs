//! SSE output: the framing of protocol chunks as server-sent events, and [`SseStream`], a
//! [`StreamProcessor`] with its [`Accumulator`] writing every chunk it produces straight into
//! the caller's byte buffer as one server-sent event.
//!
//! This is the serving hot path: a piece of model output goes in, its SSE bytes come out, with
//! no JSON round trip and no allocation per chunk beyond the chunk's own text. The batch calls
//! ([`SseStream::push_text_many`], [`SseStream::push_tokens_many`]) write exactly the bytes of
//! pushing the pieces one by one.

use super::accumulator::Accumulator;
use super::events::Emit;
use super::inference::{InferenceChunk, InferenceFinishReason, TokenLogprobs};
use super::processor::StreamProcessor;
use crate::error::Result;
use crate::protocol::output::chat_completions::ChatChunkHead;
use crate::protocol::output::Chunk;

/// Appends `chunk` framed as one server-sent event: `event: NAME` (Responses and Messages
/// events; Chat chunks have none), `data: JSON`, a blank line.
pub fn write_sse_event(chunk: &Chunk, out: &mut Vec<u8>) {
    write_sse_frame(chunk, out, |out| chunk.write_json(out));
}

/// Appends `chunk`'s SSE frame, its JSON written by `write_json`.
fn write_sse_frame(chunk: &Chunk, out: &mut Vec<u8>, write_json: impl FnOnce(&mut Vec<u8>)) {
    out.reserve(256);
    if let Some(event) = chunk.sse_event() {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(event.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    write_json(out);
    out.extend_from_slice(b"\n\n");
}

/// Frames `data` as one server-sent event.
pub fn sse_frame(event: Option<&str>, data: &str) -> String {
    match event {
        Some(event) => format!("event: {event}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// The data of the terminal SSE message of the protocol `accumulator` collects (`[DONE]` for
/// Chat; Responses and Messages end with their last event).
pub fn sse_done_data(accumulator: &Accumulator) -> Option<&'static str> {
    match accumulator {
        Accumulator::Chat(_) => Some("[DONE]"),
        Accumulator::Messages(_) | Accumulator::Responses(_) => None,
    }
}

/// A stream processor that accumulates the complete response and writes SSE bytes.
#[derive(Debug)]
pub struct SseStream {
    processor: StreamProcessor,
    accumulator: Accumulator,
    /// The head its Chat chunks share, written once.
    chat_head: ChatChunkHead,
}

/// Accumulates each chunk as it is made and appends its SSE frame to the output.
struct SseWriter<'a> {
    accumulator: &'a mut Accumulator,
    chat_head: &'a mut ChatChunkHead,
    out: &'a mut Vec<u8>,
}

impl Emit<Chunk> for SseWriter<'_> {
    fn emit(&mut self, chunk: Chunk) {
        self.accumulator.accumulate(&chunk);
        let chat_head = &mut *self.chat_head;
        write_sse_frame(&chunk, self.out, |out| match &chunk {
            Chunk::Chat(chat) => chat_head.write_json(chat, out),
            other => other.write_json(out),
        });
    }
}

impl SseStream {
    /// Wraps `processor`; every chunk it produces is also added to `accumulator`.
    pub fn new(processor: StreamProcessor, accumulator: Accumulator) -> Self {
        Self {
            processor,
            accumulator,
            chat_head: ChatChunkHead::default(),
        }
    }

    /// The processor.
    pub fn processor(&self) -> &StreamProcessor {
        &self.processor
    }

    /// The response accumulated from every chunk so far.
    pub fn accumulator(&self) -> &Accumulator {
        &self.accumulator
    }

    /// Whether the stream has ended (see [`StreamProcessor::finished`]).
    pub fn finished(&self) -> bool {
        self.processor.finished()
    }

    /// The processor, and a sink that accumulates and frames into `out`.
    fn parts<'a>(&'a mut self, out: &'a mut Vec<u8>) -> (&'a mut StreamProcessor, SseWriter<'a>) {
        let writer = SseWriter {
            accumulator: &mut self.accumulator,
            chat_head: &mut self.chat_head,
            out,
        };
        (&mut self.processor, writer)
    }

    /// Feeds one inference chunk; returns the (accumulated) protocol chunks it produced.
    pub fn push_chunks(&mut self, chunk: InferenceChunk) -> Result<Vec<Chunk>> {
        let chunks = self.processor.push(chunk)?;
        chunks
            .iter()
            .for_each(|chunk| self.accumulator.accumulate(chunk));
        Ok(chunks)
    }

    /// Ends the input (see [`StreamProcessor::finish`]); returns the (accumulated) final
    /// protocol chunks.
    pub fn finish_chunks(&mut self) -> Result<Vec<Chunk>> {
        let chunks = self.processor.finish()?;
        chunks
            .iter()
            .for_each(|chunk| self.accumulator.accumulate(chunk));
        Ok(chunks)
    }

    /// Feeds one inference chunk; appends the SSE frames it produced to `out`.
    pub fn push(&mut self, chunk: InferenceChunk, out: &mut Vec<u8>) -> Result<()> {
        let (processor, mut writer) = self.parts(out);
        processor.push_into(chunk, &mut writer)
    }

    /// Feeds a text piece of `token_count` tokens; appends the SSE frames it produced to `out`.
    pub fn push_text(&mut self, text: &str, token_count: u64, out: &mut Vec<u8>) -> Result<()> {
        let (processor, mut writer) = self.parts(out);
        processor.push_text(text, token_count, &mut writer)
    }

    /// Feeds generated token ids (with optional log probabilities, one per id); appends the
    /// SSE frames they produced to `out`.
    pub fn push_tokens(
        &mut self,
        token_ids: &[u32],
        logprobs: Option<&[TokenLogprobs]>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let (processor, mut writer) = self.parts(out);
        processor.push_tokens(token_ids, logprobs, &mut writer)
    }

    /// Feeds the backend's finish reason; appends the final SSE frames to `out`.
    pub fn push_finish(&mut self, reason: InferenceFinishReason, out: &mut Vec<u8>) -> Result<()> {
        let (processor, mut writer) = self.parts(out);
        processor.push_finish(reason, &mut writer)
    }

    /// Feeds text pieces of `token_count` tokens each, in order, exactly as if each were
    /// pushed with [`Self::push_text`]; appends all their SSE frames to `out`. Once the stream
    /// ends (a stop sequence matched) the remaining pieces are not read. Returns the number of
    /// pieces fed.
    ///
    /// # Errors
    /// As [`Self::push_text`] for the first piece (e.g. the stream had already finished).
    pub fn push_text_many<'a>(
        &mut self,
        pieces: impl IntoIterator<Item = &'a str>,
        token_count: u64,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        self.push_many(pieces, out, |stream, piece, out| {
            stream.push_text(piece, token_count, out)
        })
    }

    /// Feeds token-id pieces (one `tokens` chunk each, without log probabilities), in order,
    /// exactly as if each were pushed with [`Self::push_tokens`]; appends all their SSE frames
    /// to `out`. Once the stream ends the remaining pieces are not read. Returns the number of
    /// pieces fed.
    ///
    /// # Errors
    /// As [`Self::push_tokens`] for the first piece (e.g. no tokenizer is attached).
    pub fn push_tokens_many<'a>(
        &mut self,
        pieces: impl IntoIterator<Item = &'a [u32]>,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        self.push_many(pieces, out, |stream, piece, out| {
            stream.push_tokens(piece, None, out)
        })
    }

    /// Feeds `pieces` with `push` in order until the stream ends; returns how many were fed.
    fn push_many<P>(
        &mut self,
        pieces: impl IntoIterator<Item = P>,
        out: &mut Vec<u8>,
        mut push: impl FnMut(&mut Self, P, &mut Vec<u8>) -> Result<()>,
    ) -> Result<usize> {
        let mut fed = 0;
        for piece in pieces {
            if fed > 0 && self.processor.finished() {
                break;
            }
            push(self, piece, out)?;
            fed += 1;
        }
        Ok(fed)
    }

    /// Ends the stream unless it has ended, appending its last SSE frames to `out`, then the
    /// protocol's terminal frame (`data: [DONE]` for Chat).
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<()> {
        let (processor, mut writer) = self.parts(out);
        processor.finish_into(&mut writer)?;
        if let Some(done) = sse_done_data(&self.accumulator) {
            out.extend_from_slice(sse_frame(None, done).as_bytes());
        }
        Ok(())
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
