//! Reasoning and content: markers, holding, per-piece deltas and JSON output mode.

use super::stops::{StopState, START};
use super::*;

/// Stage of JSON output mode within content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JsonStage {
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

/// How far a text state has read the held text, kept between pieces so that each push reads
/// only the new text (markers are short, stop sequences may be long).
#[derive(Debug, Clone, Copy)]
pub(super) struct TextScan {
    /// Offset in the buffer up to which no marker was complete.
    end: usize,
    /// End of the newlines that open the section's held text (as far as read).
    newlines_end: usize,
    /// Start of the newlines that end the text read (`end` when it ends otherwise).
    trailing_newlines: usize,
    /// The stop matcher's state after the content text read.
    stop: StopState,
}

impl TextScan {
    /// Nothing read yet from `pos` on.
    fn at(pos: usize) -> Self {
        Self {
            end: pos,
            newlines_end: pos,
            trailing_newlines: pos,
            stop: START,
        }
    }

    /// Offsets after the buffer dropped its first `by` bytes.
    pub(super) fn shift(&mut self, by: usize) {
        self.end -= by;
        self.newlines_end = self.newlines_end.saturating_sub(by);
        self.trailing_newlines = self.trailing_newlines.saturating_sub(by);
    }

    /// Marks all of `text` read, tracking where its trailing newlines start.
    fn read_to_end(&mut self, text: &str) {
        let fresh = &text.as_bytes()[self.end..];
        if let Some(last) = fresh.iter().rposition(|&byte| byte != b'\n') {
            self.trailing_newlines = self.end + last + 1;
        }
        self.end = text.len();
    }

    /// Extends the opening newlines over text read for the first time.
    fn read_newlines(&mut self, text: &str) {
        if self.newlines_end == self.end {
            let run = text.as_bytes()[self.end..]
                .iter()
                .take_while(|&&byte| byte == b'\n');
            self.newlines_end += run.count();
        }
    }
}

/// How a run of text-state text is trimmed before it is emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trim {
    None,
    TrailingNewlines,
}

impl StreamParser {
    /// The active markup and JSON markers of the current text state, in priority order (stop
    /// sequences come before all of them; see [`Self::stops_active`]).
    fn markers(&self) -> impl Iterator<Item = (&'static str, Marker)> {
        let content = self.state == State::Content;
        let markup: &'static [(&'static str, Marker)] = if self.options.parse_tool_calls {
            &[(THINK_END, Marker::ThinkEnd), (DSML_OPEN, Marker::DsmlOpen)]
        } else {
            &[(THINK_END, Marker::ThinkEnd)]
        };
        let json: &'static [(&'static str, Marker)] = match self.json {
            _ if !content => &[],
            JsonStage::Prefix => &[
                (FENCE_OPEN_JSON, Marker::FenceOpen),
                (FENCE_OPEN, Marker::FenceOpen),
                ("{", Marker::BareJson),
                ("[", Marker::BareJson),
            ],
            JsonStage::Fenced => &[(FENCE_CLOSE, Marker::FenceClose)],
            JsonStage::Bare if self.prefix_backticks >= 3 => &[(FENCE_CLOSE, Marker::FenceClose)],
            JsonStage::Off | JsonStage::AfterFence | JsonStage::Bare => &[],
        };
        markup.iter().chain(json).copied()
    }

    /// Stop sequences apply to content, except around a JSON document (before it starts and
    /// after its closing fence).
    fn stops_active(&self) -> bool {
        self.state == State::Content
            && matches!(
                self.json,
                JsonStage::Off | JsonStage::Fenced | JsonStage::Bare
            )
    }

    /// The marker that completes first in the held text from `pos`, as buffer offsets
    /// `(start, end, kind)`: a short stop sequence inside a longer one wins, and stop sequences,
    /// then earlier markers, win ties. Reads only what `scan` has not read yet and advances it.
    ///
    /// Newlines being stripped from the start of the content (`strip`) are each seen alone: only
    /// a stop sequence that is exactly `"\n"` matches one, and the stop matcher starts after them.
    fn first_marker(
        &self,
        pos: usize,
        strip: bool,
        scan: &mut TextScan,
    ) -> Option<(usize, usize, Marker)> {
        let stops = self.stops_active() && !self.stops.is_empty();
        if stops && strip && scan.newlines_end > pos {
            if let Some(index) = self.stops.newline_stop() {
                return Some((pos, pos + 1, Marker::StopSequence(index)));
            }
        }
        let mut found: Option<(usize, usize, Marker)> = None;
        for (marker, kind) in self.markers() {
            // A marker that was incomplete at the end of the text read so far may end later.
            let from = char_floor(
                &self.text,
                scan.end.saturating_sub(marker.len() - 1).max(pos),
            );
            if let Some(at) = find_marker(&self.text[from..], marker) {
                let (start, end) = (from + at, from + at + marker.len());
                if found.is_none_or(|(_, best, _)| end < best) {
                    found = Some((start, end, kind));
                }
            }
        }
        if stops {
            let from = scan.end.max(if strip { scan.newlines_end } else { pos });
            let until = found.map_or(self.text.len(), |(_, end, _)| end);
            let fresh = self.text.as_bytes().get(from..until).unwrap_or_default();
            if let Some((len, index)) = self.stops.feed(&mut scan.stop, fresh) {
                let end = from + len;
                return Some((
                    end - self.stops.stop_len(index),
                    end,
                    Marker::StopSequence(index),
                ));
            }
        }
        scan.read_to_end(&self.text);
        found
    }

    /// Reasoning and content: cut at markers, emit text per part, hold what may change.
    pub(super) fn text_state(
        &mut self,
        pos: usize,
        at_end: bool,
        out: &mut Vec<ParserEvent>,
    ) -> Step {
        let mut scan = self.scan.take().unwrap_or(TextScan::at(pos));
        scan.read_newlines(&self.text);
        let strip = self.strip_leading && self.state == State::Content;
        let found = self.first_marker(pos, strip, &mut scan);
        let reasoning = self.state == State::Reasoning;
        if let Some((start, end, kind)) = found {
            self.drop_stripped_empty_pieces(pos, scan.newlines_end);
            if !reasoning {
                self.section_start = false;
            }
            let trim = match kind {
                Marker::ThinkEnd if reasoning => Trim::TrailingNewlines,
                Marker::DsmlOpen => Trim::TrailingNewlines,
                _ => Trim::None,
            };
            // Empty pieces directly before the JSON document or a stop sequence (no text before
            // it) yield nothing.
            let before = &self.text[pos..start];
            let visible = if self.strip_leading {
                before.trim_start_matches('\n')
            } else {
                before
            };
            let skips_empty = matches!(
                kind,
                Marker::BareJson | Marker::FenceOpen | Marker::StopSequence(_)
            );
            self.skip_empty_pieces = skips_empty && visible.is_empty();
            self.emit_text(pos, start, trim, out);
            self.skip_empty_pieces = false;
            match kind {
                Marker::StopSequence(index) => {
                    let stop = self.options.stop_sequences[index].clone();
                    out.push(ParserEvent::StopSequence(stop));
                    self.state = State::Stopped;
                    return Step::Wait(self.text.len());
                }
                Marker::ThinkEnd => {
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
                    return Step::Marker(start + 1);
                }
                Marker::FenceOpen => {
                    self.json = JsonStage::Fenced;
                    self.strip_leading = false;
                }
                Marker::FenceClose => self.json = JsonStage::AfterFence,
                Marker::BareJson => {
                    self.json = JsonStage::Bare;
                    self.strip_leading = false;
                    self.emit_text(start, end, Trim::None, out);
                }
            }
            return Step::Marker(end);
        }
        // Nothing visible yet: leading newlines that will be stripped, or empty pieces.
        let only_newlines = if self.strip_leading {
            scan.newlines_end == self.text.len()
        } else {
            pos == self.text.len()
        };
        if at_end {
            if !(self.section_start && only_newlines) {
                self.emit_text(pos, self.text.len(), Trim::None, out);
            }
            return Step::Wait(self.text.len());
        }
        self.scan = Some(scan);
        if self.section_start && only_newlines && !self.over_hold_limit(pos) {
            return Step::Wait(pos);
        }
        let hay = &self.text[pos..];
        let mut hold = self.text.len();
        for (marker, _) in self.markers() {
            if let Some(start) = self.partial_start(hay, marker) {
                hold = hold.min(pos + start);
            }
        }
        // A possible stop sequence is held whatever its length, like the reference does.
        let stop_partial = if self.stops_active() {
            self.stops.depth(scan.stop)
        } else {
            0
        };
        let stop_hold = self.text.len() - stop_partial;
        // At the start of a section, empty pieces and leading newlines wait with a possible
        // marker or stop sequence until text before it is visible.
        let visible_until = hold.min(stop_hold);
        let visible = if self.strip_leading {
            scan.newlines_end < visible_until
        } else {
            pos < visible_until
        };
        if self.section_start && !visible && !self.over_hold_limit(pos) {
            return Step::Wait(pos);
        }
        self.drop_stripped_empty_pieces(pos, scan.newlines_end);
        // Trailing newlines wait for what follows them (a marker may trim them), also when
        // they end right before a possible marker, but not before a possible stop sequence.
        let newline_hold = reasoning
            || self.options.parse_tool_calls
            || matches!(self.json, JsonStage::Bare | JsonStage::Fenced);
        if newline_hold {
            hold = if hold == self.text.len() {
                scan.trailing_newlines.max(pos)
            } else {
                pos + self.text[pos..hold].trim_end_matches('\n').len()
            };
        }
        let mut keep = self.hold_from(pos, hold);
        if stop_partial > 0 {
            keep = keep.min(self.part_start(self.part_at(stop_hold)).max(pos));
        }
        self.emit_text(pos, keep, Trim::None, out);
        Step::Wait(keep)
    }

    /// Once the section's first visible text is known: when leading newlines (up to
    /// `newlines_end`) are stripped, the empty pieces among them yield nothing either.
    fn drop_stripped_empty_pieces(&mut self, pos: usize, newlines_end: usize) {
        if !self.strip_leading || newlines_end == pos {
            return;
        }
        let first = self.first_part_ending_from(pos);
        for index in first..self.parts.len() {
            if self.part_end(index) > newlines_end {
                break;
            }
            if self.part_start(index) == self.part_end(index) {
                self.parts[index].consumed = true;
            }
        }
    }

    /// Where held text starts when `hold` is the first byte that may still change meaning: the
    /// start of that byte's part (never before `pos`), unless too much is held already.
    pub(super) fn hold_from(&self, pos: usize, hold: usize) -> usize {
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
        let first = self.first_part_ending_from(start);
        for index in first..self.parts.len() {
            let part_start = self.part_start(index);
            let part_end = self.part_end(index);
            if part_start > end || (part_start == end && part_end > end) {
                break;
            }
            let seg_start = from.max(part_start);
            let seg_end = to.min(part_end);
            let part = &self.parts[index];
            let empty_piece =
                part_start == part_end && part.whole && !part.consumed && !self.skip_empty_pieces;
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
}

/// The largest character boundary of `text` at or before `offset`.
fn char_floor(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn content_parser(stops: &[&str]) -> StreamParser {
        StreamParser::new(ParsingOptions {
            stop_sequences: stops.iter().map(|stop| (*stop).to_owned()).collect(),
            ..ParsingOptions::default()
        })
    }

    /// The content text and the matched stop after `pieces` (and `finish` unless stopped).
    fn run(parser: &mut StreamParser, pieces: &[&str]) -> (String, Option<String>) {
        let mut out = Vec::new();
        for piece in pieces {
            parser.push(Piece::text(*piece), &mut out);
        }
        if !parser.stopped() {
            parser.finish(&mut out);
        }
        let mut content = String::new();
        let mut stop = None;
        for event in out {
            match event {
                ParserEvent::Content(delta) => content.push_str(&delta.text),
                ParserEvent::StopSequence(matched) => stop = Some(matched),
                _ => {}
            }
        }
        (content, stop)
    }

    #[test]
    fn a_long_stop_is_held_piece_by_piece_until_it_matches() {
        let stop = format!("Q{}", "ab".repeat(5000));
        let mut parser = content_parser(&[&stop]);
        let mut out = Vec::new();
        parser.push(Piece::text("hi "), &mut out);
        for (count, ch) in stop.chars().take(stop.len() - 1).enumerate() {
            parser.push(Piece::text(ch.to_string()), &mut out);
            assert_eq!(parser.held_pieces(), count + 1);
        }
        assert!(parser.held_bytes() > MAX_HELD_BYTES / 2);
        parser.push(Piece::text("b tail"), &mut out);
        assert!(parser.stopped());
        assert_eq!(out.last(), Some(&ParserEvent::StopSequence(stop)));
    }

    #[test]
    fn stops_are_off_before_a_json_document() {
        let mut parser = StreamParser::new(ParsingOptions {
            parse_json_output: true,
            stop_sequences: vec!["ab".into()],
            ..ParsingOptions::default()
        });
        assert_eq!(
            run(&mut parser, &["ab", "{\"k\":", "1}ab"]).1.as_deref(),
            Some("ab")
        );
        let mut parser = StreamParser::new(ParsingOptions {
            parse_json_output: true,
            stop_sequences: vec!["ab".into()],
            ..ParsingOptions::default()
        });
        assert_eq!(run(&mut parser, &["x ab", "y"]).1, None);
    }

    #[test]
    fn stripped_leading_newlines_are_seen_one_at_a_time() {
        assert_eq!(
            run(&mut content_parser(&["\n"]), &["\n\nX"]).1.as_deref(),
            Some("\n")
        );
        assert_eq!(
            run(&mut content_parser(&["\nX"]), &["\n", "X"]),
            ("X".into(), None)
        );
        assert_eq!(
            run(&mut content_parser(&["\n\n"]), &["\n", "\n", "a"]),
            ("a".into(), None)
        );
    }

    /// The naive rule on the whole text: the content before the stop that ends first (the
    /// earliest listed at the same end), and that stop.
    fn naive(text: &str, stops: &[String]) -> (String, Option<String>) {
        let found = (1..=text.len())
            .filter(|&end| text.is_char_boundary(end))
            .find_map(|end| {
                stops
                    .iter()
                    .find(|stop| !stop.is_empty() && text[..end].ends_with(stop.as_str()))
                    .map(|stop| (end - stop.len(), stop.clone()))
            });
        match found {
            Some((start, stop)) => (text[..start].to_owned(), Some(stop)),
            None => (text.to_owned(), None),
        }
    }

    proptest! {
        #[test]
        fn content_stops_match_like_the_naive_rule_for_any_split(
            text in "[abé][abé\n]{0,60}",
            stops in prop::collection::vec("[abé\n]{1,5}|a{2,12}", 1..5),
            cuts in prop::collection::vec(0usize..80, 0..12),
        ) {
            let mut bounds: Vec<usize> = cuts
                .iter()
                .map(|cut| cut % (text.len() + 1))
                .filter(|&cut| text.is_char_boundary(cut))
                .collect();
            bounds.extend([0, text.len()]);
            bounds.sort_unstable();
            let pieces: Vec<&str> = bounds.windows(2).map(|pair| &text[pair[0]..pair[1]]).collect();
            let stop_refs: Vec<&str> = stops.iter().map(String::as_str).collect();
            let got = run(&mut content_parser(&stop_refs), &pieces);
            prop_assert_eq!(got, naive(&text, &stops));
        }
    }
}
