//! The DSML tool-call grammar: blocks, invokes, parameters and their argument fragments.

use super::*;

impl StreamParser {
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
            let seg_end = end.min(self.part_end(part));
            if seg_start < seg_end {
                let fragment = make(self.text[seg_start..seg_end].to_owned());
                out.push(ParserEvent::ToolCallArguments { index, fragment });
            }
            if self.part_end(part) >= end {
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
    pub(super) fn tool_block(&mut self, pos: usize, at_end: bool) -> Step {
        let hay = &self.text[pos..];
        let mut search = 0;
        while let Some(found) = find_marker(&hay[search..], DSML) {
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
    pub(super) fn invoke_name(&mut self, pos: usize, out: &mut Vec<ParserEvent>) -> Step {
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
    pub(super) fn invoke(&mut self, pos: usize, at_end: bool, out: &mut Vec<ParserEvent>) -> Step {
        let hay = &self.text[pos..];
        let mut search = 0;
        while let Some(found) = find_marker(&hay[search..], DSML) {
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
    pub(super) fn param_key(&mut self, pos: usize, out: &mut Vec<ParserEvent>) -> Step {
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
    pub(super) fn param_attributes(&mut self, pos: usize, at_end: bool) -> Step {
        let hay = &self.text[pos..];
        match first_value_start(hay) {
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
    pub(super) fn param_value(
        &mut self,
        pos: usize,
        string: bool,
        at_end: bool,
        out: &mut Vec<ParserEvent>,
    ) -> Step {
        let make = move |raw| ArgumentFragment::Value { raw, string };
        let hay = &self.text[pos..];
        if let Some(at) = find_marker(hay, DSML_CLOSE) {
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

/// The first `true">` or `false">` in `hay` as `(start, end, string)`, found in one pass over
/// the tag ends `">` (searching for each spelling separately reads the whole rest of the output
/// for the one that is absent, at every parameter).
fn first_value_start(hay: &str) -> Option<(usize, usize, bool)> {
    hay.match_indices(VALUE_END).find_map(|(at, _)| {
        let end = at + VALUE_END.len();
        [(STRING_VALUE, true), (RAW_VALUE, false)]
            .into_iter()
            .find(|(spelling, _)| hay[..end].ends_with(spelling))
            .map(|(spelling, string)| (end - spelling.len(), end, string))
    })
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
