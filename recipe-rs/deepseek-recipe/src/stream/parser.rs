//! The incremental output parser: model text pieces in, reasoning/content deltas and tool-call
//! fragments out.
//!
//! The parser keeps the unconsumed text of the current pieces ("held" text) together with the
//! piece boundaries, because delta granularity follows pieces: every piece's share of a run of
//! reasoning or content text becomes one delta. Only text that can still change meaning is held
//! (a suffix that may start a marker, trailing newlines that may be trimmed, pending leading
//! newlines), so the held text stays short and each piece is scanned a bounded number of times.

use std::borrow::Cow;

use super::logprobs::LogprobEntry;
use super::parsing_options::{ParsingOptions, ThinkingInitialStage};

/// Closes the reasoning section (and is dropped wherever else it appears in content).
const THINK_END: &str = "</think>";
/// The DSML token that every tool-call tag carries.
const DSML: &str = "｜DSML｜";
/// Opens a tool-call block from reasoning or content.
const DSML_OPEN: &str = "<｜DSML｜";
/// Closes a value, an invoke or the block.
const DSML_CLOSE: &str = "</｜DSML｜";
/// What follows the DSML token (after optional whitespace) at an invoke start.
const INVOKE_START: &str = "invoke name=\"";
/// What follows the DSML token (after optional whitespace) at a parameter start.
const PARAMETER_START: &str = "parameter name=";
/// Ends the attribute skip of a string parameter.
const STRING_VALUE: &str = "true\">";
/// Ends the attribute skip of a raw (non-string) parameter.
const RAW_VALUE: &str = "false\">";
/// JSON output mode fences and the bare-JSON openers.
const FENCE_OPEN_JSON: &str = "```json\n";
const FENCE_OPEN: &str = "```\n";
const FENCE_CLOSE: &str = "\n```";
/// Held text beyond this many bytes is released even if it could still change meaning, so
/// adversarial input (e.g. endless newline runs) cannot grow the parser's memory.
pub const MAX_HELD_BYTES: usize = 1 << 16;
/// Held pieces beyond this count are released likewise (empty pieces hold no bytes).
pub const MAX_HELD_PIECES: usize = 4096;
/// Tool names longer than this are truncated (memory bound on adversarial input).
pub const MAX_TOOL_NAME_BYTES: usize = 1 << 16;

/// One piece of model output: a text chunk, or the decoded text of consecutive tokens.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Piece {
    /// The piece's text.
    pub text: String,
    /// Log probabilities of the tokens that produced it (empty for text input).
    pub logprobs: Vec<LogprobEntry>,
    /// Decoded from token ids: `</think>` and `｜DSML｜` then only ever arrive as whole special
    /// tokens, so text can only be waiting for them right before the DSML token.
    pub from_tokens: bool,
}

impl Piece {
    /// A text piece without log probabilities.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            logprobs: Vec::new(),
            from_tokens: false,
        }
    }
}

/// A reasoning or content delta.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TextDelta {
    /// The delta text.
    pub text: String,
    /// Log probabilities of the tokens whose text it carries.
    pub logprobs: Vec<LogprobEntry>,
}

/// A fragment of a tool call's argument JSON text, in the order the parser recognises it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgumentFragment {
    /// `{` before the first parameter.
    Open,
    /// `, ` before every later parameter.
    Separator,
    /// Raw parameter-name text, copied verbatim (normally `"name"` with its quotes).
    Key(String),
    /// `: ` after the name.
    Colon,
    /// The `"` around a string value.
    Quote,
    /// Value text: JSON-escaped for string values, verbatim otherwise.
    Value {
        /// The value text as the model wrote it.
        raw: String,
        /// Whether the value is a string (escaped and quoted in the arguments).
        string: bool,
    },
    /// `}` after the last parameter.
    Close,
    /// `{}` for a call without parameters.
    Empty,
}

impl ArgumentFragment {
    /// The fragment's text inside the arguments JSON.
    pub fn json_text(&self) -> Cow<'_, str> {
        match self {
            Self::Open => Cow::Borrowed("{"),
            Self::Separator => Cow::Borrowed(", "),
            Self::Key(key) => Cow::Borrowed(key),
            Self::Colon => Cow::Borrowed(": "),
            Self::Quote => Cow::Borrowed("\""),
            Self::Value { raw, string: false } => Cow::Borrowed(raw),
            Self::Value { raw, string: true } => Cow::Owned(escape_json_string(raw)),
            Self::Close => Cow::Borrowed("}"),
            Self::Empty => Cow::Borrowed("{}"),
        }
    }
}

/// What the parser recognised in the output.
#[derive(Debug, Clone, PartialEq)]
pub enum ParserEvent {
    /// Reasoning text.
    Reasoning(TextDelta),
    /// Content text.
    Content(TextDelta),
    /// A tool call starts (its name is complete).
    ToolCallStart {
        /// Index of the call within the response.
        index: usize,
        /// The tool name as written.
        name: String,
    },
    /// A fragment of a tool call's arguments.
    ToolCallArguments {
        /// Index of the call within the response.
        index: usize,
        /// The fragment.
        fragment: ArgumentFragment,
    },
    /// A stop sequence matched in content: the output ends here.
    StopSequence(String),
}

/// Escapes text as the inside of a JSON string (`"`, `\`, controls; non-ASCII kept raw).
pub fn escape_json_string(raw: &str) -> String {
    let mut escaped = String::with_capacity(raw.len() + 2);
    for ch in raw.chars() {
        match ch {
            '"' => escaped.push_str("\\\""),
            '\\' => escaped.push_str("\\\\"),
            '\n' => escaped.push_str("\\n"),
            '\r' => escaped.push_str("\\r"),
            '\t' => escaped.push_str("\\t"),
            '\u{08}' => escaped.push_str("\\b"),
            '\u{0c}' => escaped.push_str("\\f"),
            c if (c as u32) < 0x20 => escaped.push_str(&format!("\\u{:04x}", c as u32)),
            c => escaped.push(c),
        }
    }
    escaped
}

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
    /// Bare JSON started: everything passes through (up to a closing fence when the text
    /// before the JSON had a ``` run).
    Bare,
}

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
    /// Byte offset (in the held text) where the part ends.
    end: usize,
    /// The part is a whole piece (an empty whole piece still yields an empty delta).
    whole: bool,
    /// Log probabilities not yet attached to a delta.
    logprobs: Vec<LogprobEntry>,
    /// An empty piece that was already emitted.
    consumed: bool,
}

/// Markers the text states look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    StopSequence(usize),
    ThinkEnd,
    DsmlOpen,
    FenceOpen,
    FenceClose,
    BareJson,
}

/// How a run of text-state text is trimmed before it is emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trim {
    None,
    TrailingNewlines,
}

/// The incremental output parser.
#[derive(Debug, Clone)]
pub struct StreamParser {
    options: ParsingOptions,
    state: State,
    json: JsonStage,
    /// Leading newlines of the current reasoning/content section are still being dropped.
    strip_leading: bool,
    /// Nothing but newlines/empty pieces arrived yet in the current section: they are held.
    section_start: bool,
    text: String,
    parts: Vec<Part>,
    /// The last piece ended exactly at a marker: the next piece continues that (empty) part.
    continue_part: bool,
    tool_calls: usize,
    tool_name: String,
    parameters: usize,
    /// Backticks seen in JSON prefix text: the current run, or 3 once a run of three was seen.
    prefix_backticks: u8,
    /// Offset in the held text where the latest piece starts.
    piece_start: usize,
    /// Empty pieces are not emitted (flushing a section that never started).
    skip_empty_pieces: bool,
    /// A string value's opening quote waits for the value's first text.
    open_quote_pending: bool,
    /// The pending opening quote may wait (its `true">` did not span two pieces).
    open_quote_may_wait: bool,
    /// The latest piece came from token ids (see [`Piece::from_tokens`]).
    token_mode: bool,
    /// Reasoning ended with `</think>` (content newlines are then visible to stop sequences).
    after_think: bool,
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
            options,
            state,
            json,
            strip_leading,
            section_start,
            text: String::new(),
            parts: Vec::new(),
            continue_part: false,
            tool_calls: 0,
            tool_name: String::new(),
            parameters: 0,
            prefix_backticks: 0,
            piece_start: 0,
            skip_empty_pieces: false,
            open_quote_pending: false,
            open_quote_may_wait: false,
            token_mode: false,
            after_think: false,
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
        self.text.len()
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
        if self.state == State::Stopped {
            return;
        }
        let whole = !std::mem::take(&mut self.continue_part);
        self.token_mode = piece.from_tokens;
        self.piece_start = self.text.len();
        self.text.push_str(&piece.text);
        self.parts.push(Part {
            end: self.text.len(),
            whole,
            logprobs: piece.logprobs,
            consumed: false,
        });
        self.run(false, out);
    }

    /// Ends the input: flushes everything held.
    pub fn finish(&mut self, out: &mut Vec<ParserEvent>) {
        if self.state != State::Stopped {
            self.run(true, out);
        }
        self.text.clear();
        self.parts.clear();
    }

    /// Processes held text from its start; keeps what must wait for more input.
    fn run(&mut self, at_end: bool, out: &mut Vec<ParserEvent>) {
        let mut pos = 0;
        let mut marker_end = None;
        loop {
            let step = match self.state {
                State::Reasoning | State::Content => self.text_state(pos, at_end, out),
                State::ToolBlock => self.tool_block(pos, at_end),
                State::InvokeName => self.invoke_name(pos, out),
                State::Invoke => self.invoke(pos, at_end, out),
                State::ParamKey => self.param_key(pos, out),
                State::ParamAttributes => self.param_attributes(pos, at_end),
                State::ParamValue { string } => self.param_value(pos, string, at_end, out),
                State::AfterBlock | State::Stopped => Step::Wait(self.text.len()),
            };
            match step {
                Step::Marker(next) => {
                    pos = next;
                    marker_end = Some(next);
                }
                Step::Wait(keep) => {
                    pos = keep;
                    break;
                }
            }
        }
        self.continue_part = pos == self.text.len() && marker_end == Some(pos);
        self.drain(pos);
    }

    /// Drops consumed text, keeping the boundaries of the parts still held. An empty piece at
    /// `pos` stays held only while a text state holds it (pending leading-newline strip).
    fn drain(&mut self, pos: usize) {
        let text_state = matches!(self.state, State::Reasoning | State::Content);
        let mut start = 0;
        let mut consumed = 0;
        for part in &self.parts {
            let empty = part.end == start;
            let done =
                part.end < pos || (part.end == pos && (!empty || part.consumed || !text_state));
            if !done {
                break;
            }
            consumed += 1;
            start = part.end;
        }
        self.parts.drain(..consumed);
        if let Some(first) = self.parts.first_mut() {
            first.whole &= start >= pos;
        }
        for part in &mut self.parts {
            part.end -= pos;
        }
        self.piece_start = self.piece_start.saturating_sub(pos);
        self.text.drain(..pos);
    }

    /// Whether a marker at `[start, end)` was completed by the latest piece (began in held
    /// text): the reference then acts on a closing tag without waiting for its name.
    fn spans_piece_start(&self, start: usize, end: usize) -> bool {
        start < self.piece_start && end > self.piece_start
    }

    /// Start of a suffix of `hay` that `marker` may still complete. With token input the DSML
    /// token and `</think>` are whole special tokens, so only a prefix ending right before a
    /// special token counts.
    fn partial_start(&self, hay: &str, marker: &str) -> Option<usize> {
        if !self.token_mode {
            return partial_marker_start(hay, marker);
        }
        let longest = (marker.len() - 1).min(hay.len());
        (1..=longest).rev().find_map(|len| {
            let start = hay.len() - len;
            let rest = marker.get(len..)?;
            let special_next = rest.starts_with(DSML) || rest.starts_with(THINK_END);
            let is_prefix = hay.is_char_boundary(start) && marker.starts_with(&hay[start..]);
            (special_next && is_prefix).then_some(start)
        })
    }

    /// Whether holding everything from `pos` would exceed the memory bounds.
    fn over_hold_limit(&self, pos: usize) -> bool {
        self.text.len() - pos > MAX_HELD_BYTES || self.parts.len() > MAX_HELD_PIECES
    }

    /// Start offset of part `index`.
    fn part_start(&self, index: usize) -> usize {
        if index == 0 {
            0
        } else {
            self.parts[index - 1].end
        }
    }

    /// Index of the part containing byte `offset` (the last part for the end offset).
    fn part_at(&self, offset: usize) -> usize {
        self.parts
            .iter()
            .position(|part| part.end > offset)
            .unwrap_or(self.parts.len().saturating_sub(1))
    }

    /// The active markers of the current text state, in priority order.
    fn markers(&self) -> Vec<(&str, Marker)> {
        let mut markers = Vec::new();
        if self.state == State::Content {
            for (index, stop) in self.options.stop_sequences.iter().enumerate() {
                if !stop.is_empty() {
                    markers.push((stop.as_str(), Marker::StopSequence(index)));
                }
            }
        }
        markers.push((THINK_END, Marker::ThinkEnd));
        if self.options.parse_tool_calls {
            markers.push((DSML_OPEN, Marker::DsmlOpen));
        }
        if self.state == State::Content {
            match self.json {
                JsonStage::Prefix => {
                    markers.push((FENCE_OPEN_JSON, Marker::FenceOpen));
                    markers.push((FENCE_OPEN, Marker::FenceOpen));
                    markers.push(("{", Marker::BareJson));
                    markers.push(("[", Marker::BareJson));
                }
                JsonStage::Fenced => markers.push((FENCE_CLOSE, Marker::FenceClose)),
                JsonStage::Bare if self.prefix_backticks >= 3 => {
                    markers.push((FENCE_CLOSE, Marker::FenceClose));
                }
                JsonStage::Off | JsonStage::AfterFence | JsonStage::Bare => {}
            }
        }
        markers
    }

    /// Reasoning and content: cut at markers, emit text per part, hold what may change.
    fn text_state(&mut self, pos: usize, at_end: bool, out: &mut Vec<ParserEvent>) -> Step {
        let markers = self.markers();
        let hay = &self.text[pos..];
        // Leading newlines of the initial content are gone before stop sequences see the text
        // (after `</think>` they are still there).
        let skipped = if self.strip_leading && self.state == State::Content && !self.after_think {
            hay.len() - hay.trim_start_matches('\n').len()
        } else {
            0
        };
        let mut found: Option<(usize, usize, Marker)> = None;
        // The marker that completes first wins (a short stop sequence inside a longer one).
        for (marker, kind) in &markers {
            if let Some(start) = hay[skipped..].find(marker).map(|at| at + skipped) {
                let end = start + marker.len();
                if found.is_none_or(|(_, best, _)| end < best) {
                    found = Some((start, end, *kind));
                }
            }
        }
        let reasoning = self.state == State::Reasoning;
        if let Some((start, end, kind)) = found {
            if !reasoning {
                self.section_start = false;
            }
            let trim = match kind {
                Marker::ThinkEnd if reasoning => Trim::TrailingNewlines,
                Marker::DsmlOpen => Trim::TrailingNewlines,
                _ => Trim::None,
            };
            // Empty pieces directly before the JSON document (no prefix text) yield nothing.
            let before = &self.text[pos..pos + start];
            let visible = if self.strip_leading {
                before.trim_start_matches('\n')
            } else {
                before
            };
            self.skip_empty_pieces =
                matches!(kind, Marker::BareJson | Marker::FenceOpen) && visible.is_empty();
            self.emit_text(pos, pos + start, trim, out);
            self.skip_empty_pieces = false;
            match kind {
                Marker::StopSequence(index) => {
                    let stop = self.options.stop_sequences[index].clone();
                    out.push(ParserEvent::StopSequence(stop));
                    self.state = State::Stopped;
                    return Step::Wait(self.text.len());
                }
                Marker::ThinkEnd => {
                    self.after_think |= reasoning;
                    self.strip_leading = reasoning;
                    self.section_start = reasoning;
                    if reasoning {
                        self.state = State::Content;
                    }
                }
                Marker::DsmlOpen => {
                    // The block scan starts at the DSML token itself, so an opener that is
                    // already an invoke (`<｜DSML｜invoke name="…">`) starts a call.
                    self.state = State::ToolBlock;
                    return Step::Marker(pos + start + 1);
                }
                Marker::FenceOpen => {
                    self.json = JsonStage::Fenced;
                    self.strip_leading = false;
                }
                Marker::FenceClose => self.json = JsonStage::AfterFence,
                Marker::BareJson => {
                    self.json = JsonStage::Bare;
                    self.strip_leading = false;
                    self.emit_text(pos + start, pos + end, Trim::None, out);
                }
            }
            return Step::Marker(pos + end);
        }
        // Nothing visible yet: leading newlines that will be stripped, or empty pieces.
        let only_newlines = if self.strip_leading {
            hay.bytes().all(|byte| byte == b'\n')
        } else {
            hay.is_empty()
        };
        if at_end {
            if !(self.section_start && only_newlines) {
                self.emit_text(pos, self.text.len(), Trim::None, out);
            }
            return Step::Wait(self.text.len());
        }
        if self.section_start && only_newlines && !self.over_hold_limit(pos) {
            return Step::Wait(pos);
        }
        let mut hold = self.text.len();
        for (marker, _) in &markers {
            if let Some(start) = self.partial_start(hay, marker) {
                hold = hold.min(pos + start);
            }
        }
        let newline_hold = reasoning
            || self.options.parse_tool_calls
            || matches!(self.json, JsonStage::Bare | JsonStage::Fenced);
        if newline_hold {
            hold = pos + self.text[pos..hold].trim_end_matches('\n').len();
        }
        let keep = self.hold_from(pos, hold);
        self.emit_text(pos, keep, Trim::None, out);
        Step::Wait(keep)
    }

    /// Where held text starts when `hold` is the first byte that may still change meaning: the
    /// start of that byte's part (never before `pos`), unless too much is held already.
    fn hold_from(&self, pos: usize, hold: usize) -> usize {
        if hold >= self.text.len() {
            return self.text.len();
        }
        if self.over_hold_limit(pos) {
            return self.text.len();
        }
        self.part_start(self.part_at(hold)).max(pos)
    }

    /// Emits `[start, end)` of the held text as reasoning/content deltas, one per part.
    fn emit_text(&mut self, start: usize, end: usize, trim: Trim, out: &mut Vec<ParserEvent>) {
        let mut from = start;
        let mut to = end;
        if trim == Trim::TrailingNewlines {
            to = start + self.text[start..end].trim_end_matches('\n').len();
        }
        if self.strip_leading {
            let stripped = self.text[from..to].trim_start_matches('\n');
            from = to - stripped.len();
            if !stripped.is_empty() {
                self.strip_leading = false;
            }
        }
        if to > from {
            self.section_start = false;
        }
        let Some(first) = self.parts.iter().position(|part| part.end >= start) else {
            return;
        };
        for index in first..self.parts.len() {
            let part_start = self.part_start(index);
            let part_end = self.parts[index].end;
            if part_start > end || (part_start == end && part_end > end) {
                break;
            }
            let seg_start = from.max(part_start);
            let seg_end = to.min(part_end);
            let empty_piece =
                part_start == part_end && self.parts[index].whole && !self.skip_empty_pieces;
            if seg_start >= seg_end && !empty_piece {
                continue;
            }
            let text = if seg_start < seg_end {
                &self.text[seg_start..seg_end]
            } else {
                ""
            };
            let text = match (self.state == State::Content, self.json) {
                (true, JsonStage::Prefix | JsonStage::AfterFence) => {
                    for byte in text.bytes() {
                        if self.prefix_backticks < 3 {
                            self.prefix_backticks = if byte == b'`' {
                                self.prefix_backticks + 1
                            } else {
                                0
                            };
                        }
                    }
                    " ".to_owned()
                }
                _ => text.to_owned(),
            };
            self.parts[index].consumed = true;
            let logprobs = std::mem::take(&mut self.parts[index].logprobs);
            let delta = TextDelta { text, logprobs };
            if self.state == State::Reasoning {
                out.push(ParserEvent::Reasoning(delta));
            } else {
                out.push(ParserEvent::Content(delta));
            }
        }
    }

    /// Emits `[start, end)` as argument fragments built by `make`, one per part.
    fn emit_fragments(
        &mut self,
        start: usize,
        end: usize,
        out: &mut Vec<ParserEvent>,
        make: impl Fn(String) -> ArgumentFragment,
    ) {
        if start >= end {
            return;
        }
        let index = self.tool_calls - 1;
        for part in self.part_at(start)..self.parts.len() {
            let seg_start = start.max(self.part_start(part));
            let seg_end = end.min(self.parts[part].end);
            if seg_start < seg_end {
                let fragment = make(self.text[seg_start..seg_end].to_owned());
                out.push(ParserEvent::ToolCallArguments { index, fragment });
            }
            if self.parts[part].end >= end {
                break;
            }
        }
    }

    fn fragment(&self, fragment: ArgumentFragment, out: &mut Vec<ParserEvent>) {
        out.push(ParserEvent::ToolCallArguments {
            index: self.tool_calls - 1,
            fragment,
        });
    }

    /// Inside a tool-call block, between invokes.
    fn tool_block(&mut self, pos: usize, at_end: bool) -> Step {
        let hay = &self.text[pos..];
        let mut search = 0;
        while let Some(found) = hay[search..].find(DSML) {
            let at = search + found;
            if hay[..at].ends_with("</") {
                self.state = State::AfterBlock;
                return Step::Marker(self.text.len());
            }
            let after = at + DSML.len();
            match match_after_whitespace(&hay[after..], INVOKE_START) {
                Match::Full(len) => {
                    self.state = State::InvokeName;
                    self.tool_name.clear();
                    return Step::Marker(pos + after + len);
                }
                Match::Partial if !at_end => return Step::Wait(pos + back_chars(hay, at, 2)),
                Match::Partial | Match::No => search = after,
            }
        }
        Step::Wait(pos + keep_partial(hay, &[DSML_CLOSE, DSML]))
    }

    /// Reading the tool name up to its closing quote.
    fn invoke_name(&mut self, pos: usize, out: &mut Vec<ParserEvent>) -> Step {
        let hay = &self.text[pos..];
        match hay.find('"') {
            Some(quote) => {
                push_bounded(&mut self.tool_name, &hay[..quote], MAX_TOOL_NAME_BYTES);
                let name = std::mem::take(&mut self.tool_name);
                out.push(ParserEvent::ToolCallStart {
                    index: self.tool_calls,
                    name,
                });
                self.tool_calls += 1;
                self.parameters = 0;
                self.state = State::Invoke;
                Step::Marker(pos + quote + 1)
            }
            None => {
                push_bounded(&mut self.tool_name, hay, MAX_TOOL_NAME_BYTES);
                Step::Wait(self.text.len())
            }
        }
    }

    /// Inside an invoke, between parameters.
    fn invoke(&mut self, pos: usize, at_end: bool, out: &mut Vec<ParserEvent>) -> Step {
        let hay = &self.text[pos..];
        let mut search = 0;
        while let Some(found) = hay[search..].find(DSML) {
            let at = search + found;
            let after = at + DSML.len();
            if hay[..at].ends_with("</") {
                let spans = self.spans_piece_start(pos + at - 2, pos + after);
                if !at_end && !spans && closing_tag_incomplete(&hay[after..]) {
                    return Step::Wait(pos + at - 2);
                }
                let fragment = if self.parameters == 0 {
                    ArgumentFragment::Empty
                } else {
                    ArgumentFragment::Close
                };
                self.fragment(fragment, out);
                self.state = State::ToolBlock;
                return Step::Marker(pos + after);
            }
            if hay[..at].ends_with('<') {
                match match_in_tag(&hay[after..], PARAMETER_START) {
                    Match::Full(len) => {
                        let fragment = if self.parameters == 0 {
                            ArgumentFragment::Open
                        } else {
                            ArgumentFragment::Separator
                        };
                        self.parameters += 1;
                        self.fragment(fragment, out);
                        self.state = State::ParamKey;
                        return Step::Marker(pos + after + len);
                    }
                    Match::Partial if !at_end => return Step::Wait(pos + back_chars(hay, at, 2)),
                    Match::Partial | Match::No => {}
                }
            }
            search = after;
        }
        Step::Wait(pos + keep_partial(hay, &[DSML_CLOSE, DSML_OPEN]))
    }

    /// The raw parameter name, streamed up to the first space.
    fn param_key(&mut self, pos: usize, out: &mut Vec<ParserEvent>) -> Step {
        match self.text[pos..].find(' ') {
            Some(space) => {
                self.emit_fragments(pos, pos + space, out, ArgumentFragment::Key);
                self.fragment(ArgumentFragment::Colon, out);
                self.state = State::ParamAttributes;
                Step::Marker(pos + space + 1)
            }
            None => {
                self.emit_fragments(pos, self.text.len(), out, ArgumentFragment::Key);
                Step::Wait(self.text.len())
            }
        }
    }

    /// Skipping attribute text up to `true">` or `false">`.
    fn param_attributes(&mut self, pos: usize, at_end: bool) -> Step {
        let hay = &self.text[pos..];
        let string = hay
            .find(STRING_VALUE)
            .map(|at| (at, at + STRING_VALUE.len(), true));
        let raw = hay
            .find(RAW_VALUE)
            .map(|at| (at, at + RAW_VALUE.len(), false));
        let found = match (string, raw) {
            (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
            (a, b) => a.or(b),
        };
        match found {
            Some((at, end, string)) => {
                self.open_quote_pending = string;
                self.open_quote_may_wait = !self.spans_piece_start(pos + at, pos + end);
                self.state = State::ParamValue { string };
                Step::Marker(pos + end)
            }
            None if at_end => Step::Wait(self.text.len()),
            None => Step::Wait(pos + keep_partial(hay, &[STRING_VALUE, RAW_VALUE])),
        }
    }

    /// A parameter value, up to `</｜DSML｜`.
    fn param_value(
        &mut self,
        pos: usize,
        string: bool,
        at_end: bool,
        out: &mut Vec<ParserEvent>,
    ) -> Step {
        let make = move |raw| ArgumentFragment::Value { raw, string };
        let hay = &self.text[pos..];
        if let Some(at) = hay.find(DSML_CLOSE) {
            let end = at + DSML_CLOSE.len();
            let incomplete = !at_end
                && !self.spans_piece_start(pos + at, pos + end)
                && closing_tag_incomplete(&hay[end..]);
            self.flush_open_quote(out);
            self.emit_fragments(pos, pos + at, out, make);
            if incomplete {
                return Step::Wait(pos + at);
            }
            self.flush_open_quote(out);
            if string {
                self.fragment(ArgumentFragment::Quote, out);
            }
            self.state = State::Invoke;
            return Step::Marker(pos + end);
        }
        if at_end {
            self.flush_open_quote(out);
            self.emit_fragments(pos, self.text.len(), out, make);
            return Step::Wait(self.text.len());
        }
        let hold = match self.partial_start(hay, DSML_CLOSE) {
            Some(start) => pos + start,
            None => self.text.len(),
        };
        let keep = self.hold_from(pos, hold);
        if hold > pos || hold == self.text.len() || !self.open_quote_may_wait {
            self.flush_open_quote(out);
        }
        self.emit_fragments(pos, keep, out, make);
        Step::Wait(keep)
    }

    /// Emits the opening quote of a string value. It waits only while the value so far is
    /// nothing but the start of a possible closing tag, and only when the `true">` before it
    /// came within one piece.
    fn flush_open_quote(&mut self, out: &mut Vec<ParserEvent>) {
        if std::mem::take(&mut self.open_quote_pending) {
            self.fragment(ArgumentFragment::Quote, out);
        }
    }
}

/// What a state handler did.
enum Step {
    /// Consumed a marker; continue at this offset (possibly in a new state).
    Marker(usize),
    /// Needs more input; keep the held text from this offset.
    Wait(usize),
}

/// Result of matching a pattern that may be cut off by the end of the text.
enum Match {
    /// Matched; the length consumed.
    Full(usize),
    /// The text ended while it still matched.
    Partial,
    /// Does not match.
    No,
}

/// Matches `[ \n]*` then `pattern` at the start of `text`.
fn match_after_whitespace(text: &str, pattern: &str) -> Match {
    let rest = text.trim_start_matches([' ', '\n']);
    let skipped = text.len() - rest.len();
    if rest.starts_with(pattern) {
        Match::Full(skipped + pattern.len())
    } else if pattern.starts_with(rest) && skipped <= MAX_TAG_BYTES {
        Match::Partial
    } else {
        Match::No
    }
}

/// The text after `</｜DSML｜` is a tag name still being written (letters only, no end yet):
/// the reference waits for it before acting on the closing tag.
fn closing_tag_incomplete(rest: &str) -> bool {
    !rest.is_empty()
        && rest
            .bytes()
            .all(|byte| byte.is_ascii_alphabetic() || byte == b'_')
}

/// Longest tag text searched for a parameter start before giving up on the tag.
const MAX_TAG_BYTES: usize = 4096;

/// Matches `pattern` anywhere in the rest of a tag (before its `>`): the reference accepts
/// `<｜DSML｜` + any tag text + `parameter name=`, so whitespace or stray text in between is
/// skipped, while a `>` first (or a different spelling such as two spaces) is no match.
fn match_in_tag(text: &str, pattern: &str) -> Match {
    let tag_end = text.find('>');
    let searched = &text[..tag_end.unwrap_or(text.len())];
    if let Some(at) = searched.find(pattern) {
        return Match::Full(at + pattern.len());
    }
    if tag_end.is_some() || text.len() > MAX_TAG_BYTES {
        Match::No
    } else {
        Match::Partial
    }
}

/// Start of the longest non-empty suffix of `hay` that is a proper prefix of `marker`.
fn partial_marker_start(hay: &str, marker: &str) -> Option<usize> {
    let longest = (marker.len() - 1).min(hay.len());
    (1..=longest).rev().find_map(|len| {
        let start = hay.len() - len;
        (hay.is_char_boundary(start) && marker.starts_with(&hay[start..])).then_some(start)
    })
}

/// Offset from which `hay` must be kept because a suffix may start one of `markers`.
fn keep_partial(hay: &str, markers: &[&str]) -> usize {
    markers
        .iter()
        .filter_map(|marker| partial_marker_start(hay, marker))
        .min()
        .unwrap_or(hay.len())
}

/// The offset `count` characters before `at` (or 0).
fn back_chars(hay: &str, at: usize, count: usize) -> usize {
    hay[..at]
        .char_indices()
        .rev()
        .take(count)
        .last()
        .map_or(at, |(offset, _)| offset)
}

/// Appends `text` to `target` without letting it grow past `limit` bytes.
fn push_bounded(target: &mut String, text: &str, limit: usize) {
    let room = limit.saturating_sub(target.len());
    if text.len() <= room {
        target.push_str(text);
    } else {
        let mut cut = room;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        target.push_str(&text[..cut]);
    }
}

#[cfg(test)]
mod tests {
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
    fn string_values_are_json_escaped() {
        assert_eq!(
            escape_json_string("a\"b\\c\n\u{1}é/"),
            "a\\\"b\\\\c\\n\\u0001é/"
        );
    }
}
