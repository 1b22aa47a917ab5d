//! The incremental output parser: model text pieces in, reasoning/content deltas and tool-call
//! fragments out.
//!
//! The parser keeps the unconsumed text of the current pieces ("held" text) together with the
//! piece boundaries, because delta granularity follows pieces: every piece's share of a run of
//! reasoning or content text becomes one delta. Only text that can still change meaning is held
//! (a suffix that may start a marker, trailing newlines that may be trimmed, pending leading
//! newlines), so the held text stays short and each piece is scanned a bounded number of times.
//! The one exception is a possible stop sequence, held however long it is (as the reference
//! does): the text states then read each byte once (a scan position kept between pieces and an
//! Aho–Corasick automaton over the stop sequences), and the held text is compacted only once
//! most of it was consumed, so long holds stay linear.

mod events;
mod fragment;
mod markup;
mod parts;
mod scan;
mod stops;
mod strings;
mod tags;
mod text;
mod text_markers;

use std::collections::VecDeque;
use std::sync::Arc;

pub use events::{ParserEvent, Piece, PieceKind, TextDelta};
pub use fragment::ArgumentFragment;
use scan::TextScan;
use stops::StopMatcher;
use strings::{partial_marker_start, partial_tag_start, remember_tail};
use tags::{Tags, INVOKE_START, PARAMETER_START};

use crate::converted::{ParsingOptions, ThinkingInitialStage};
use crate::protocol::output::logprobs::LogprobEntry;

/// Stage of JSON output mode within content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsonStage {
    /// JSON mode is off: content passes through.
    Off,
    /// Before the JSON document: every piece of text becomes one `" "`.
    Prefix,
    /// Inside a ```json fence: text passes through until the closing fence.
    Fenced,
    /// After the closing fence: every piece of text becomes one `" "`.
    AfterFence,
    /// Bare JSON started: everything passes through up to a closing fence (one is recognised
    /// even though none was opened).
    Bare,
}

/// Held text beyond this many bytes is released even if it could still change meaning, so
/// adversarial input (e.g. endless newline runs) cannot grow the parser's memory. A possible stop
/// sequence is the exception: it is held whatever its length, as the reference does (its memory
/// is bounded by the longest stop sequence plus the piece it starts in).
pub const MAX_HELD_BYTES: usize = 1 << 14;
/// Held pieces beyond this count are released likewise (empty pieces hold no bytes; the same
/// exception).
pub const MAX_HELD_PIECES: usize = 1024;
/// Tool names longer than this are truncated (memory bound on adversarial input).
pub const MAX_TOOL_NAME_BYTES: usize = 1 << 16;

/// Where the parser is in the output.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Reasoning,
    Content,
    ToolBlock,
    InvokeName,
    Invoke,
    ParamKey,
    ParamAttributes,
    ParamValue { string: bool },
    AfterBlock,
    Stopped,
}

/// One piece's share of the held text.
#[derive(Debug, Clone)]
struct Part {
    /// Stream offset (bytes since the first piece) where the part ends.
    end: usize,
    /// The part is a whole piece (an empty whole piece still yields an empty delta).
    whole: bool,
    /// Log probabilities not yet attached to a delta.
    logprobs: Vec<LogprobEntry>,
    /// An empty piece that was already emitted.
    consumed: bool,
    /// Where the piece's text came from.
    kind: PieceKind,
}

/// The incremental output parser.
#[derive(Debug, Clone)]
pub struct StreamParser {
    options: ParsingOptions,
    stops: StopMatcher,
    state: State,
    json: JsonStage,
    /// Leading newlines of the current reasoning/content section are still being dropped.
    strip_leading: bool,
    /// Nothing but newlines/empty pieces arrived yet in the current section: they are held.
    section_start: bool,
    /// The output text read; the bytes before `start` were consumed (dropped at compaction).
    text: String,
    /// Where the held text starts in `text`.
    start: usize,
    /// Stream offset of `text`'s first byte (part ends are stream offsets).
    base: usize,
    parts: VecDeque<Part>,
    /// How far the current text section was read; `None` after a marker.
    scan: Option<TextScan>,
    /// The last non-empty piece ended exactly at a marker: the next pieces continue that (empty)
    /// part until one brings text, so empty pieces in between yield no delta.
    continue_part: bool,
    tool_calls: usize,
    tool_name: String,
    parameters: usize,
    /// Empty pieces are not emitted (flushing a section that never started).
    skip_empty_pieces: bool,
    /// The last bytes of text already consumed: whether held text continues a possible tag
    /// that began before it (see [`StreamParser::without_trailing_newlines`]).
    consumed_tail: String,
    /// How many bytes at the end of `consumed_tail` came from text chunks or special tokens (not
    /// from ordinary token ids).
    consumed_tail_spelled_bytes: usize,
    /// The tags, spelled with the options' special tokens (shared so handlers can borrow them
    /// while mutating the parser).
    tags: Arc<Tags>,
}

impl StreamParser {
    /// A parser in the initial state the options describe.
    pub fn new(options: ParsingOptions) -> Self {
        let (state, strip_leading, section_start) = if options.starts_in_tool_calls {
            (State::ToolBlock, false, false)
        } else {
            match options.thinking_initial_stage {
                Some(ThinkingInitialStage::ReasoningStart) => (State::Reasoning, true, true),
                Some(ThinkingInitialStage::ReasoningContinuation) => {
                    (State::Reasoning, false, true)
                }
                Some(ThinkingInitialStage::ContentContinuation) => (State::Content, false, true),
                None => (State::Content, true, true),
            }
        };
        let json = if options.parse_json_output {
            JsonStage::Prefix
        } else {
            JsonStage::Off
        };
        Self {
            stops: StopMatcher::new(&options.stop_sequences),
            tags: Arc::new(Tags::new(&options.special_tokens)),
            options,
            state,
            json,
            strip_leading,
            section_start,
            text: String::new(),
            start: 0,
            base: 0,
            parts: VecDeque::new(),
            scan: None,
            continue_part: false,
            tool_calls: 0,
            tool_name: String::new(),
            parameters: 0,
            skip_empty_pieces: false,
            consumed_tail: String::new(),
            consumed_tail_spelled_bytes: 0,
        }
    }

    /// The options the parser was built with.
    pub fn options(&self) -> &ParsingOptions {
        &self.options
    }

    /// Number of tool calls started so far.
    pub fn tool_call_count(&self) -> usize {
        self.tool_calls
    }

    /// Bytes of text currently held back (waiting for more input).
    pub fn held_bytes(&self) -> usize {
        self.text.len() - self.start
    }

    /// Pieces currently held back.
    pub fn held_pieces(&self) -> usize {
        self.parts.len()
    }

    /// Whether a stop sequence ended the output.
    pub fn stopped(&self) -> bool {
        self.state == State::Stopped
    }

    /// Feeds one piece; appends what it completes to `out`.
    pub fn push(&mut self, piece: Piece, out: &mut Vec<ParserEvent>) {
        self.push_str(&piece.text, piece.logprobs, piece.kind, out);
    }

    /// Feeds one piece given by its parts (see [`Piece`]) without copying its text first;
    /// appends what it completes to `out`.
    pub fn push_str(
        &mut self,
        text: &str,
        logprobs: Vec<LogprobEntry>,
        kind: PieceKind,
        out: &mut Vec<ParserEvent>,
    ) {
        if self.state == State::Stopped {
            return;
        }
        let whole = !self.continue_part;
        self.text.push_str(text);
        self.parts.push_back(Part {
            end: self.base + self.text.len(),
            whole,
            logprobs,
            consumed: false,
            kind,
        });
        self.run(false, text.is_empty(), out);
    }

    /// Ends the input: flushes everything held.
    pub fn finish(&mut self, out: &mut Vec<ParserEvent>) {
        if self.state != State::Stopped {
            self.run(true, false, out);
        }
        self.base += self.text.len();
        self.text.clear();
        self.start = 0;
        self.parts.clear();
        self.scan = None;
    }

    /// Processes held text from its start; keeps what must wait for more input. `empty_piece`:
    /// the latest piece brought no text (it neither starts nor ends a continued part).
    fn run(&mut self, at_end: bool, empty_piece: bool, out: &mut Vec<ParserEvent>) {
        let continued = self.continue_part;
        let mut pos = self.start;
        let mut marker_end = None;
        loop {
            let step = match self.state {
                State::Reasoning | State::Content => self.text_state(pos, at_end, out),
                State::ToolBlock => self.tool_block(pos),
                State::InvokeName => self.invoke_name(pos, at_end, out),
                State::Invoke => self.invoke(pos, at_end, out),
                State::ParamKey => self.param_key(pos, at_end, out),
                State::ParamAttributes => self.param_attributes(pos, at_end, out),
                State::ParamValue { string } => self.param_value(pos, string, at_end, out),
                State::AfterBlock | State::Stopped => Step::Wait(self.text.len()),
            };
            match step {
                Step::Marker(next) => {
                    pos = next;
                    marker_end = Some(next);
                    self.scan = None;
                }
                Step::Wait(keep) => {
                    pos = keep;
                    break;
                }
            }
        }
        let at_held_end = pos == self.text.len();
        self.continue_part = at_held_end && (marker_end == Some(pos) || (continued && empty_piece));
        self.drain(pos);
    }

    /// Drops consumed text, keeping the boundaries of the parts still held. An empty piece at
    /// `pos` stays held only while a text state holds it (pending leading-newline strip).
    fn drain(&mut self, pos: usize) {
        let text_state = matches!(self.state, State::Reasoning | State::Content);
        if pos > self.start {
            let mut text_start = pos;
            for index in (0..=self.part_at(pos - 1)).rev() {
                if self.parts[index].kind == PieceKind::Tokens {
                    break;
                }
                text_start = self.part_start(index);
            }
            self.consumed_tail_spelled_bytes = if text_start <= self.start {
                self.consumed_tail_spelled_bytes + (pos - self.start)
            } else {
                pos - text_start
            };
        }
        let mut start = self.start;
        while let Some(part) = self.parts.front() {
            let end = part.end - self.base;
            let empty = end == start;
            let done = end < pos || (end == pos && (!empty || part.consumed || !text_state));
            if !done {
                break;
            }
            start = end;
            self.parts.pop_front();
        }
        if let Some(first) = self.parts.front_mut() {
            first.whole &= start >= pos;
        }
        remember_tail(
            &mut self.consumed_tail,
            &self.text[self.start..pos],
            self.tags.tail_bytes,
        );
        self.consumed_tail_spelled_bytes = self
            .consumed_tail_spelled_bytes
            .min(self.consumed_tail.len());
        self.start = pos;
        // Moving the held text costs as much as it holds: only once that is at most the text
        // consumed since the last move, so the total stays linear in the output.
        if 2 * self.start >= self.text.len() {
            self.compact();
        }
    }

    /// Moves the held text to the start of the buffer.
    fn compact(&mut self) {
        let shift = self.start;
        self.text.drain(..shift);
        self.base += shift;
        self.start = 0;
        if let Some(scan) = &mut self.scan {
            scan.shift(shift);
        }
    }

    /// Start of a suffix of the held text `[from, end)` that `marker` may still complete (see
    /// [`partial_tag_start`] for tags, `markup`, as opposed to stop sequences and fences, plain
    /// text whatever they spell).
    fn partial_start(&self, from: usize, end: usize, marker: &str, markup: bool) -> Option<usize> {
        let hay = &self.text[from..end];
        let start = if markup {
            partial_tag_start(&self.tags, hay, marker, |at| {
                self.spelled_out(from + at, end)
            })?
        } else {
            partial_marker_start(hay, marker)?
        };
        Some(from + start)
    }

    /// Whether holding everything from `pos` would exceed the memory bounds.
    fn over_hold_limit(&self, pos: usize) -> bool {
        self.text.len() - pos > MAX_HELD_BYTES || self.parts.len() > MAX_HELD_PIECES
    }
}

/// What a state handler did.
enum Step {
    /// Consumed a marker; continue at this offset (possibly in a new state).
    Marker(usize),
    /// Needs more input; keep the held text from this offset.
    Wait(usize),
}

#[cfg(test)]
mod tests {
    use super::fragment::escape_json_string;
    use super::*;

    fn content_texts(events: &[ParserEvent]) -> Vec<&str> {
        events
            .iter()
            .filter_map(|event| match event {
                ParserEvent::Content(delta) => Some(delta.text.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn held_newline_pieces_are_released_as_separate_deltas() {
        let options = ParsingOptions {
            parse_tool_calls: true,
            ..ParsingOptions::default()
        };
        let mut parser = StreamParser::new(options);
        let mut out = Vec::new();
        parser.push(Piece::text("C\n"), &mut out);
        parser.push(Piece::text("\n"), &mut out);
        assert!(out.is_empty());
        parser.push(Piece::text(" x \n"), &mut out);
        assert_eq!(content_texts(&out), ["C\n", "\n"]);
        parser.push(Piece::text("\n"), &mut out);
        parser.finish(&mut out);
        assert_eq!(content_texts(&out), ["C\n", "\n", " x \n", "\n"]);
    }

    #[test]
    fn newline_floods_keep_memory_bounded() {
        let options = ParsingOptions {
            parse_tool_calls: true,
            ..ParsingOptions::default()
        };
        let mut parser = StreamParser::new(options);
        let mut out = Vec::new();
        for _ in 0..(MAX_HELD_PIECES * 3) {
            parser.push(Piece::text("\n"), &mut out);
            parser.push(Piece::text(""), &mut out);
            assert!(parser.held_bytes() <= MAX_HELD_BYTES + 1);
            assert!(parser.held_pieces() <= MAX_HELD_PIECES + 2);
        }
    }

    #[test]
    fn unterminated_markup_keeps_memory_bounded() {
        let options = ParsingOptions {
            starts_in_tool_calls: true,
            ..ParsingOptions::default()
        };
        let mut parser = StreamParser::new(options);
        let mut out = Vec::new();
        parser.push(Piece::text("<｜DSML｜invoke name=\""), &mut out);
        let chunk = "x".repeat(1024);
        for _ in 0..(MAX_TOOL_NAME_BYTES / 1024 * 4) {
            parser.push(Piece::text(chunk.clone()), &mut out);
            assert!(parser.held_bytes() <= 1024);
        }
        parser.push(Piece::text("\">"), &mut out);
        let name_len = out.iter().find_map(|event| match event {
            ParserEvent::ToolCallStart { name, .. } => Some(name.len()),
            _ => None,
        });
        assert_eq!(name_len, Some(MAX_TOOL_NAME_BYTES));
    }

    #[test]
    fn a_tag_start_from_tokens_completes_with_spelled_out_dsml_text() {
        let tool_calls = |pieces: Vec<Piece>| {
            let mut parser = StreamParser::new(ParsingOptions {
                parse_tool_calls: true,
                ..ParsingOptions::default()
            });
            let mut out = Vec::new();
            for piece in pieces {
                parser.push(piece, &mut out);
            }
            parser.finish(&mut out);
            out.iter()
                .filter(|event| matches!(event, ParserEvent::ToolCallStart { .. }))
                .count()
        };
        let tokens = |text: &str| Piece {
            text: text.into(),
            kind: PieceKind::Tokens,
            ..Piece::default()
        };
        let rest = "｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"f\">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>";
        assert_eq!(tool_calls(vec![tokens("<"), Piece::text(rest)]), 1);
        // Spelled out by ordinary tokens, the DSML token is plain text.
        assert_eq!(tool_calls(vec![Piece::text("<"), tokens(rest)]), 0);
    }

    #[test]
    fn a_tag_start_from_tokens_cannot_complete_a_think_end_in_text() {
        let mut parser = StreamParser::new(ParsingOptions {
            parse_tool_calls: true,
            thinking_initial_stage: Some(ThinkingInitialStage::ReasoningStart),
            ..ParsingOptions::default()
        });
        let mut out = Vec::new();
        let lt = Piece {
            text: "<".into(),
            kind: PieceKind::Tokens,
            ..Piece::default()
        };
        parser.push(lt, &mut out);
        assert!(out.is_empty());
        // `<` may open a DSML tag; `</think>` is one token, so its `<` from token ids cannot go
        // on in text.
        parser.push(Piece::text("/"), &mut out);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn string_values_are_json_escaped() {
        assert_eq!(
            escape_json_string("a\"b\\c\n\u{1}é/"),
            "a\\\"b\\\\c\\n\\u0001é/"
        );
    }

    /// Events of `pieces` parsed with the thinking end spelled `</T>` and the DSML token `|D|`.
    fn overridden_events(pieces: Vec<Piece>) -> Vec<ParserEvent> {
        let overrides = crate::markup::SpecialTokenOverrides {
            thinking_end: Some("</T>".to_owned()),
            dsml: Some("|D|".to_owned()),
            ..Default::default()
        };
        let mut parser = StreamParser::new(ParsingOptions {
            parse_tool_calls: true,
            thinking_initial_stage: Some(ThinkingInitialStage::ReasoningStart),
            special_tokens: crate::markup::SpecialTokens::default().with_overrides(&overrides),
            ..ParsingOptions::default()
        });
        let mut out = Vec::new();
        for piece in pieces {
            parser.push(piece, &mut out);
        }
        parser.finish(&mut out);
        out
    }

    #[test]
    fn overridden_spellings_are_the_markers_and_the_defaults_plain_text() {
        let call = "<|D|tool_calls>\n<|D|invoke name=\"f\">\n</|D|invoke>\n</|D|tool_calls>";
        let out = overridden_events(vec![
            Piece::text("r</th"),
            Piece::text(format!("ink></T>a<｜DSML｜invoke name=\"g\">{call}")),
        ]);
        let reasoning: String = out
            .iter()
            .filter_map(|event| match event {
                ParserEvent::Reasoning(delta) => Some(delta.text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(reasoning, "r</think>");
        let starts = out
            .iter()
            .filter(|event| matches!(event, ParserEvent::ToolCallStart { name, .. } if name == "f"))
            .count();
        assert_eq!(starts, 1);
        assert!(content_texts(&out).concat().starts_with("a<｜DSML｜invoke"));
    }

    #[test]
    fn an_overridden_spelling_from_ordinary_tokens_is_plain_text() {
        let tokens = Piece {
            text: "r</T>a".into(),
            kind: PieceKind::Tokens,
            ..Piece::default()
        };
        let out = overridden_events(vec![tokens]);
        assert!(content_texts(&out).is_empty());
    }
}
