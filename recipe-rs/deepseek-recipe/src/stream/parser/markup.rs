//! The DSML tool-call grammar: blocks, invokes, parameters and their argument fragments.

use super::strings::{char_floor, find_marker, keep_partial, push_bounded};
use super::*;

/// What the attributes of a parameter are skipped up to.
const ATTRIBUTE_MARKERS: [&str; 2] = [STRING_VALUE, RAW_VALUE];
/// Ends the attribute skip of a string parameter.
const STRING_VALUE: &str = "true\">";
/// Ends the attribute skip of a raw (non-string) parameter.
const RAW_VALUE: &str = "false\">";
/// What both attribute-skip ends end with.
const VALUE_END: &str = "\">";

impl StreamParser {
    /// Emits `[start, end)` as argument fragments built by `make`, one per part. An empty piece
    /// in that range is an empty fragment, unless it continues a marker that ended its piece.
    fn emit_fragments(
        &mut self,
        start: usize,
        end: usize,
        out: &mut Vec<ParserEvent>,
        make: impl Fn(String) -> ArgumentFragment,
    ) {
        let index = self.tool_calls - 1;
        for part in self.first_part_ending_from(start)..self.parts.len() {
            let part_start = self.part_start(part);
            if part_start > end {
                break;
            }
            let seg_start = start.max(part_start);
            let seg_end = end.min(self.part_end(part));
            let empty_piece = part_start == self.part_end(part)
                && part_start >= start
                && self.parts[part].whole
                && !self.parts[part].consumed;
            if seg_start < seg_end || empty_piece {
                self.parts[part].consumed = true;
                let fragment = make(self.text[seg_start..seg_end.max(seg_start)].to_owned());
                out.push(ParserEvent::ToolCallArguments { index, fragment });
            }
        }
    }

    fn fragment(&self, fragment: ArgumentFragment, out: &mut Vec<ParserEvent>) {
        out.push(ParserEvent::ToolCallArguments {
            index: self.tool_calls - 1,
            fragment,
        });
    }

    /// Inside a tool-call block, between invokes: `invoke name="` anywhere starts a call, one of
    /// the block's closing tags ends the block. (A closing tag matters only before the first
    /// invoke, so only that much is searched for one: the rest of the output is not read again
    /// at every call.)
    pub(super) fn tool_block(&mut self, pos: usize) -> Step {
        let tags = Arc::clone(&self.tags);
        let hay = &self.text[pos..];
        let invoke = find_marker(hay, INVOKE_START);
        let close = tags
            .block_close
            .iter()
            .filter_map(|closer| self.find_tag(pos, before_marker(hay, invoke, closer), closer))
            .min();
        if let Some(at) = invoke.filter(|&at| close.is_none_or(|close| at < close)) {
            self.state = State::InvokeName;
            self.tool_name.clear();
            return Step::Marker(pos + at + INVOKE_START.len());
        }
        if close.is_some() {
            self.state = State::AfterBlock;
            return Step::Marker(self.text.len());
        }
        Step::Wait(pos + keep_partial(hay, &tags.block_markers))
    }

    /// Reading the tool name up to its closing quote.
    pub(super) fn invoke_name(
        &mut self,
        pos: usize,
        at_end: bool,
        out: &mut Vec<ParserEvent>,
    ) -> Step {
        let hay = &self.text[pos..];
        let Some(quote) = hay.find('"') else {
            push_bounded(&mut self.tool_name, hay, MAX_TOOL_NAME_BYTES);
            return Step::Wait(self.text.len());
        };
        push_bounded(&mut self.tool_name, &hay[..quote], MAX_TOOL_NAME_BYTES);
        let at = pos + quote;
        let tags = Arc::clone(&self.tags);
        if self.defers(at, at + 1, &tags.invoke_markers, at_end) {
            return Step::Wait(at);
        }
        let name = std::mem::take(&mut self.tool_name);
        out.push(ParserEvent::ToolCallStart {
            index: self.tool_calls,
            name,
        });
        self.tool_calls += 1;
        self.parameters = 0;
        self.state = State::Invoke;
        Step::Marker(at + 1)
    }

    /// Inside an invoke, between parameters: `parameter name=` anywhere starts a parameter,
    /// `</` + the DSML token (whatever tag follows) ends the invoke.
    pub(super) fn invoke(&mut self, pos: usize, at_end: bool, out: &mut Vec<ParserEvent>) -> Step {
        let tags = Arc::clone(&self.tags);
        let hay = &self.text[pos..];
        let close = self.find_tag(pos, hay, &tags.dsml_close);
        let parameter = find_marker(before_marker(hay, close, PARAMETER_START), PARAMETER_START);
        if let Some(at) = parameter.filter(|&at| close.is_none_or(|close| at < close)) {
            let fragment = if self.parameters == 0 {
                ArgumentFragment::Open
            } else {
                ArgumentFragment::Separator
            };
            self.parameters += 1;
            self.fragment(fragment, out);
            self.state = State::ParamKey;
            return Step::Marker(pos + at + PARAMETER_START.len());
        }
        let Some(at) = close.map(|at| pos + at) else {
            return Step::Wait(pos + keep_partial(hay, &tags.invoke_markers));
        };
        let after = at + tags.dsml_close.len();
        if self.defers(at, after, &tags.block_markers, at_end) {
            return Step::Wait(at);
        }
        let fragment = if self.parameters == 0 {
            ArgumentFragment::Empty
        } else {
            ArgumentFragment::Close
        };
        self.fragment(fragment, out);
        self.state = State::ToolBlock;
        Step::Marker(after)
    }

    /// The raw parameter name, streamed up to the first space.
    pub(super) fn param_key(
        &mut self,
        pos: usize,
        at_end: bool,
        out: &mut Vec<ParserEvent>,
    ) -> Step {
        let Some(space) = self.text[pos..].find(' ').map(|space| pos + space) else {
            self.emit_fragments(pos, self.text.len(), out, ArgumentFragment::Key);
            return Step::Wait(self.text.len());
        };
        self.emit_fragments(pos, space, out, ArgumentFragment::Key);
        if self.defers(space, space + 1, &ATTRIBUTE_MARKERS, at_end) {
            return Step::Wait(space);
        }
        self.fragment(ArgumentFragment::Colon, out);
        self.state = State::ParamAttributes;
        Step::Marker(space + 1)
    }

    /// Skipping attribute text up to `true">` (a string value) or `false">` (a raw value).
    pub(super) fn param_attributes(
        &mut self,
        pos: usize,
        at_end: bool,
        out: &mut Vec<ParserEvent>,
    ) -> Step {
        let hay = &self.text[pos..];
        let Some((at, marker, string)) = first_value_start(hay) else {
            return Step::Wait(if at_end {
                self.text.len()
            } else {
                pos + keep_partial(hay, &ATTRIBUTE_MARKERS)
            });
        };
        let (at, end) = (pos + at, pos + at + marker.len());
        let tags = Arc::clone(&self.tags);
        if string {
            if self.defers(at, end, std::slice::from_ref(&tags.dsml_close), at_end) {
                return Step::Wait(at);
            }
            self.fragment(ArgumentFragment::Quote, out);
        }
        self.state = State::ParamValue { string };
        Step::Marker(end)
    }

    /// A parameter value, up to `</` + the DSML token.
    pub(super) fn param_value(
        &mut self,
        pos: usize,
        string: bool,
        at_end: bool,
        out: &mut Vec<ParserEvent>,
    ) -> Step {
        let make = move |raw| ArgumentFragment::Value { raw, string };
        let tags = Arc::clone(&self.tags);
        let hay = &self.text[pos..];
        if let Some(at) = self.find_tag(pos, hay, &tags.dsml_close).map(|at| pos + at) {
            let end = at + tags.dsml_close.len();
            self.emit_fragments(pos, at, out, make);
            if string {
                if self.defers(at, end, &tags.invoke_markers, at_end) {
                    return Step::Wait(at);
                }
                self.fragment(ArgumentFragment::Quote, out);
            }
            self.state = State::Invoke;
            return Step::Marker(end);
        }
        if at_end {
            self.emit_fragments(pos, self.text.len(), out, make);
            return Step::Wait(self.text.len());
        }
        let hold = self
            .partial_start(pos, self.text.len(), &tags.dsml_close, true)
            .unwrap_or(self.text.len());
        let keep = self.hold_from(pos, hold);
        self.emit_fragments(pos, keep, out, make);
        Step::Wait(keep)
    }

    /// Offset in `hay` (the held text from `pos`) of the first `tag` whose DSML token may be
    /// markup ([`StreamParser::markup_allowed`]): spelled by ordinary tokens, a closing tag inside
    /// a block is text too (found by the differential harness).
    fn find_tag(&self, pos: usize, hay: &str, tag: &str) -> Option<usize> {
        let dsml = self.tags.dsml.as_str();
        let mut from = 0;
        while let Some(at) = find_marker(&hay[from..], tag) {
            let start = from + at;
            // Found rarely: the tag's own search for its DSML token waits for it.
            let token_end = match tag.find(dsml) {
                Some(at) if !dsml.is_empty() => at + dsml.len(),
                _ => 0,
            };
            if token_end == 0 || self.markup_allowed(pos + start + token_end, dsml) {
                return Some(start);
            }
            from = start + hay[start..].chars().next().map_or(1, char::len_utf8);
        }
        None
    }

    /// Whether the event of a markup marker at `[start, from)` waits for more input: the text
    /// after the marker is not empty, all of it may still start one of the next state's `markers`,
    /// and it begins in the piece the marker began in. The reference then holds the marker back
    /// with its event (tool-call header, `: `, a quote, `}`) until a later piece decides.
    pub(super) fn defers(
        &self,
        start: usize,
        from: usize,
        markers: &[impl AsRef<str>],
        at_end: bool,
    ) -> bool {
        let end = self.text.len();
        !at_end
            && from < end
            && markers.iter().map(AsRef::as_ref).any(|marker| {
                self.partial_start(from, end, marker, self.tags.is_dsml_tag(marker)) == Some(from)
            })
            && self.part_at(start) == self.part_at(from)
    }
}

/// The part of `hay` where an occurrence of `marker` would start before the marker found `at`
/// (all of it when none was found).
fn before_marker<'a>(hay: &'a str, at: Option<usize>, marker: &str) -> &'a str {
    match at {
        Some(at) => &hay[..char_floor(hay, (at + marker.len() - 1).min(hay.len()))],
        None => hay,
    }
}

/// The first `true">` or `false">` in `hay` as `(start, spelling, string)`, found in one pass over
/// the tag ends `">` (searching for each spelling separately reads the whole rest of the output
/// for the one that is absent, at every parameter).
fn first_value_start(hay: &str) -> Option<(usize, &'static str, bool)> {
    hay.match_indices(VALUE_END).find_map(|(at, _)| {
        let end = at + VALUE_END.len();
        [(STRING_VALUE, true), (RAW_VALUE, false)]
            .into_iter()
            .find(|(spelling, _)| hay[..end].ends_with(spelling))
            .map(|(spelling, string)| (end - spelling.len(), spelling, string))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tool calls (name, arguments JSON text) that `text` in one piece gives.
    fn calls(text: &str) -> Vec<(String, String)> {
        calls_of(vec![Piece::text(text)])
    }

    /// The tool calls (name, arguments JSON text) that `pieces` give.
    fn calls_of(pieces: Vec<Piece>) -> Vec<(String, String)> {
        let mut parser = StreamParser::new(ParsingOptions {
            starts_in_tool_calls: true,
            ..ParsingOptions::default()
        });
        let mut out = Vec::new();
        for piece in pieces {
            parser.push(piece, &mut out);
        }
        parser.finish(&mut out);
        let mut calls: Vec<(String, String)> = Vec::new();
        for event in out {
            match event {
                ParserEvent::ToolCallStart { name, .. } => calls.push((name, String::new())),
                ParserEvent::ToolCallArguments { fragment, .. } => {
                    let call = calls.last_mut().expect("arguments follow a start");
                    call.1.push_str(&fragment.json_text());
                }
                _ => {}
            }
        }
        calls
    }

    #[test]
    fn a_closing_tag_ends_the_block_only_before_the_next_invoke() {
        let invoke = "<｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"k\" string=\"true\">v</｜DSML｜parameter></｜DSML｜invoke>";
        let closed = format!("</｜DSML｜tool_calls>{invoke}");
        assert_eq!(calls(&closed), []);
        let two = format!("{invoke}\n{invoke}</｜DSML｜tool_calls>{invoke}");
        let expected = ("f".to_owned(), "{\"k\": \"v\"}".to_owned());
        assert_eq!(calls(&two), [expected.clone(), expected]);
    }

    #[test]
    fn a_closing_tag_spelled_by_ordinary_tokens_is_value_text() {
        let piece = |text: &str, kind| Piece {
            text: text.into(),
            kind,
            ..Piece::default()
        };
        let pieces = vec![
            piece(
                "<｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"k\" string=\"true\">v",
                PieceKind::Text,
            ),
            piece("</｜DSML｜parameter>", PieceKind::Tokens),
            piece("w</｜DSML｜parameter></｜DSML｜invoke>", PieceKind::Text),
        ];
        let expected = (
            "f".to_owned(),
            "{\"k\": \"v</｜DSML｜parameter>w\"}".to_owned(),
        );
        assert_eq!(calls_of(pieces), [expected]);
    }

    #[test]
    fn many_calls_in_one_piece_each_get_their_parameters() {
        let invoke = |index: usize| {
            let tag = if index % 2 == 0 { "true" } else { "false" };
            format!("<｜DSML｜invoke name=\"é{index}\"><｜DSML｜parameter name=\"k\" string=\"{tag}\">{index}</｜DSML｜parameter></｜DSML｜invoke>\n")
        };
        let text: String = (0..3000).map(invoke).collect();
        let parsed = calls(&text);
        assert_eq!(parsed.len(), 3000);
        for (index, (name, arguments)) in parsed.iter().enumerate() {
            let value = if index % 2 == 0 {
                format!("\"{index}\"")
            } else {
                index.to_string()
            };
            assert_eq!(
                (name.as_str(), arguments.as_str()),
                (
                    format!("é{index}").as_str(),
                    format!("{{\"k\": {value}}}").as_str()
                )
            );
        }
    }

    #[test]
    fn the_search_before_a_marker_ends_on_a_character_boundary() {
        assert_eq!(before_marker("ab\"éé", Some(3), "wxyz"), "ab\"é");
        assert_eq!(before_marker("ab\"éé", Some(0), "wx"), "a");
        assert_eq!(before_marker("abc", None, "wxyz"), "abc");
        assert_eq!(before_marker("abc", Some(2), "wxyz"), "abc");
    }

    #[test]
    fn the_first_value_start_is_the_earlier_spelling() {
        assert_eq!(
            first_value_start("x=\"false\"> y=\"true\">"),
            Some((3, RAW_VALUE, false))
        );
        assert_eq!(
            first_value_start("\">\"> string=\"true\">"),
            Some((13, STRING_VALUE, true))
        );
        assert_eq!(first_value_start("no end \"> here"), None);
    }
}
