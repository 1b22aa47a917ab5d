//! Reasoning and content: markers, holding, per-piece deltas and JSON output mode.

use super::*;

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
    /// The trailing newlines before this marker (`</think>` ending reasoning, the DSML opener).
    TrailingNewlines(&'static str),
}

impl StreamParser {
    /// Which kinds of markers the current text state looks for: stop sequences, `</think>`, the
    /// DSML opener. In JSON output mode the text around the document (before it, after its
    /// closing fence) is not matched against stop sequences, and the document itself (fenced or
    /// bare) is matched only against stop sequences.
    fn active_markers(&self) -> (bool, bool, bool) {
        let tools = self.options.parse_tool_calls;
        if self.state == State::Reasoning {
            return (false, true, tools);
        }
        match self.json {
            JsonStage::Off => (true, true, tools),
            JsonStage::Prefix => (false, true, tools),
            JsonStage::AfterFence => (false, false, tools),
            JsonStage::Fenced | JsonStage::Bare => (true, false, false),
        }
    }

    /// The active markers of the current text state, in priority order.
    fn markers(&self) -> impl Iterator<Item = (&str, Marker)> + '_ {
        let content = self.state == State::Content;
        let (stops, think, dsml) = self.active_markers();
        let stops = self
            .options
            .stop_sequences
            .iter()
            .enumerate()
            .filter(move |(_, stop)| stops && !stop.is_empty())
            .map(|(index, stop)| (stop.as_str(), Marker::StopSequence(index)));
        let markup: &'static [(&'static str, Marker)] = match (think, dsml) {
            (true, true) => &[(THINK_END, Marker::ThinkEnd), (DSML_OPEN, Marker::DsmlOpen)],
            (true, false) => &[(THINK_END, Marker::ThinkEnd)],
            (false, true) => &[(DSML_OPEN, Marker::DsmlOpen)],
            (false, false) => &[],
        };
        let json: &'static [(&'static str, Marker)] = match self.json {
            _ if !content => &[],
            JsonStage::Prefix => &[
                (FENCE_OPEN_JSON, Marker::FenceOpen),
                (FENCE_OPEN, Marker::FenceOpen),
                ("{", Marker::BareJson),
                ("[", Marker::BareJson),
            ],
            JsonStage::Fenced | JsonStage::Bare => &[(FENCE_CLOSE, Marker::FenceClose)],
            JsonStage::Off | JsonStage::AfterFence => &[],
        };
        stops
            .chain(markup.iter().copied())
            .chain(json.iter().copied())
    }

    /// The marker that completes first in the held text after `pos + skipped`, as `(start, end,
    /// kind)` relative to `pos` (a short stop sequence inside a longer one wins; earlier markers
    /// win ties). Occurrences that [`StreamParser::marker_allowed`] rejects are passed over.
    fn first_marker(&self, pos: usize, skipped: usize) -> Option<(usize, usize, Marker)> {
        let hay = &self.text[pos..];
        let mut found: Option<(usize, usize, Marker)> = None;
        for (marker, kind) in self.markers() {
            let token = match kind {
                Marker::ThinkEnd => Some(THINK_END),
                Marker::DsmlOpen => Some(DSML),
                _ => None,
            };
            let mut from = skipped;
            while let Some(at) = find_marker(&hay[from..], marker) {
                let start = from + at;
                let end = start + marker.len();
                if found.is_some_and(|(_, best, _)| end >= best) {
                    break;
                }
                if self.marker_allowed(pos + start, pos + end, token) {
                    found = Some((start, end, kind));
                    break;
                }
                from = start + hay[start..].chars().next().map_or(1, char::len_utf8);
            }
        }
        found
    }

    /// Whether the bracket that starts a bare JSON document at `[start, from)` waits for more
    /// input: everything after it in its piece may still start the closing fence or a stop
    /// sequence (and no stop sequence is complete there), as [`StreamParser::defers`] has it for
    /// markup. (It never waits behind empty pieces held at a section start.)
    fn bare_json_defers(&self, start: usize, from: usize, at_end: bool) -> bool {
        let end = self.text.len();
        if at_end || from == end || self.part_at(start) != self.part_at(from) {
            return false;
        }
        let stops = self.options.stop_sequences.iter().map(String::as_str);
        if stops
            .clone()
            .any(|stop| !stop.is_empty() && self.text[from..].contains(stop))
        {
            return false;
        }
        let held = stops
            .chain([FENCE_CLOSE])
            .filter(|marker| !marker.is_empty())
            .filter_map(|marker| self.partial_start(from, end, marker, false))
            .min();
        held == Some(from)
    }

    /// Drops the empty pieces lying within `[start, end]` of the held text: they yield no delta.
    fn drop_empty_pieces(&mut self, start: usize, end: usize) {
        if end == start {
            return;
        }
        for index in 0..self.parts.len() {
            let part_start = self.part_start(index);
            if part_start >= start
                && self.parts[index].end <= end
                && part_start == self.parts[index].end
            {
                self.parts[index].consumed = true;
            }
        }
    }

    /// Where stop sequences may start matching held text: after the last special token.
    fn after_special_tokens(&self, pos: usize) -> usize {
        let last = self
            .parts
            .iter()
            .rposition(|part| part.kind == PieceKind::SpecialToken);
        last.map_or(pos, |index| self.parts[index].end.max(pos))
    }

    /// Reasoning and content: cut at markers, emit text per part, hold what may change.
    pub(super) fn text_state(
        &mut self,
        pos: usize,
        at_end: bool,
        out: &mut Vec<ParserEvent>,
    ) -> Step {
        let hay = &self.text[pos..];
        let reasoning = self.state == State::Reasoning;
        let found = self.stripped_newline_stop(hay).or_else(|| {
            // Stop sequences never see the leading newlines being stripped.
            let skipped = if self.strip_leading && !reasoning {
                hay.len() - hay.trim_start_matches('\n').len()
            } else {
                0
            };
            self.first_marker(pos, skipped)
        });
        if let Some((start, end, kind)) = found {
            let section_start = self.section_start;
            // Empty pieces held at the section start, with nothing (not even a newline) after.
            let held_empty_pieces = section_start
                && start == 0
                && self.parts.iter().enumerate().any(|(index, part)| {
                    self.part_start(index) == pos && part.end == pos && part.whole && !part.consumed
                });
            if !reasoning {
                self.section_start = false;
            }
            let trim = match kind {
                Marker::ThinkEnd if reasoning => Trim::TrailingNewlines(THINK_END),
                Marker::DsmlOpen => Trim::TrailingNewlines(DSML_OPEN),
                _ => Trim::None,
            };
            // Empty pieces held at a section start yield nothing when a marker comes before any
            // text (newlines it trims or strips are none), and so do empty pieces directly before
            // the JSON document.
            let before_end = match trim {
                Trim::TrailingNewlines(marker) => {
                    self.without_trailing_newlines(pos, pos + start, marker)
                }
                Trim::None => pos + start,
            };
            let before = &self.text[pos..before_end];
            let visible = if self.strip_leading {
                before.trim_start_matches('\n')
            } else {
                before
            };
            self.skip_empty_pieces = visible.is_empty()
                && (section_start || matches!(kind, Marker::BareJson | Marker::FenceOpen));
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
                    if !held_empty_pieces && self.bare_json_defers(pos + start, pos + end, at_end) {
                        return Step::Wait(pos + start);
                    }
                    self.json = JsonStage::Bare;
                    self.strip_leading = false;
                    // The bracket is its own delta; empty pieces before it were dealt with above.
                    self.skip_empty_pieces = true;
                    self.emit_text(pos + start, pos + end, Trim::None, out);
                    self.skip_empty_pieces = false;
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
        // Each marker holds from where it may still start; the markers that trim the newlines
        // before them (`</think>` ending reasoning, the DSML opener) also hold those newlines.
        let mut hold = self.text.len();
        let stops_from = self.after_special_tokens(pos);
        for (marker, kind) in self.markers() {
            let from = if matches!(kind, Marker::StopSequence(_)) {
                stops_from
            } else {
                pos
            };
            let markup = matches!(kind, Marker::ThinkEnd | Marker::DsmlOpen);
            let partial = self.partial_start(from, self.text.len(), marker, markup);
            let mut marker_hold = partial.unwrap_or(self.text.len());
            let trims = match kind {
                Marker::ThinkEnd => reasoning,
                Marker::DsmlOpen => true,
                _ => false,
            };
            if trims {
                marker_hold = self.without_trailing_newlines(pos, marker_hold, marker);
            }
            hold = hold.min(marker_hold);
        }
        if self.section_start {
            if hold == pos && !self.over_hold_limit(pos) {
                // Empty pieces at a section start wait for the first text that is certain.
                return Step::Wait(pos);
            }
            self.section_start = false;
            if self.strip_leading {
                // They go with the leading newlines stripped before that text, if any.
                let newlines = self.text[pos..hold].len()
                    - self.text[pos..hold].trim_start_matches('\n').len();
                self.drop_empty_pieces(pos, pos + newlines);
            }
        }
        let keep = self.hold_from(pos, hold);
        self.emit_text(pos, keep, Trim::None, out);
        Step::Wait(keep)
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

    /// A stop sequence that is exactly `"\n"` matches the first leading newline being stripped
    /// from content (the only stop sequence that sees those newlines).
    fn stripped_newline_stop(&self, hay: &str) -> Option<(usize, usize, Marker)> {
        let (stops, _, _) = self.active_markers();
        if !(stops && self.strip_leading && self.state == State::Content && hay.starts_with('\n')) {
            return None;
        }
        let index = self
            .options
            .stop_sequences
            .iter()
            .position(|stop| stop == "\n")?;
        Some((0, 1, Marker::StopSequence(index)))
    }

    /// Where held text `[start, end)` ends without the trailing newlines that `marker` would
    /// trim. A newline right after a proper prefix of the marker is the character that broke
    /// that possible tag: text, not a trailing newline, as far as this marker is concerned (the
    /// prefix may lie before `start`, even in text already consumed).
    fn without_trailing_newlines(&self, start: usize, end: usize, marker: &str) -> usize {
        let trimmed = self.text[start..end].trim_end_matches('\n');
        let trimmed_end = start + trimmed.len();
        if trimmed_end == end {
            return end;
        }
        let broken_tag = self.partial_start(0, trimmed_end, marker, true).is_some()
            || (trimmed_end < marker.len() && self.continues_consumed_tag(trimmed_end, marker));
        trimmed_end + usize::from(broken_tag)
    }

    /// Whether the held text up to `end` continues a possible `marker` tag that began in text
    /// already consumed.
    fn continues_consumed_tag(&self, end: usize, marker: &str) -> bool {
        let joined = [self.consumed_tail.as_str(), &self.text[..end]].concat();
        partial_tag_start(&joined, marker, self.text_chunk_at(end))
            .is_some_and(|start| start < self.consumed_tail.len())
    }

    /// Emits `[start, end)` of the held text as reasoning/content deltas, one per part.
    fn emit_text(&mut self, start: usize, end: usize, trim: Trim, out: &mut Vec<ParserEvent>) {
        let mut from = start;
        let mut to = end;
        if let Trim::TrailingNewlines(marker) = trim {
            to = self.without_trailing_newlines(start, end, marker);
        }
        if self.strip_leading {
            let stripped = self.text[from..to].trim_start_matches('\n');
            from = to - stripped.len();
            if !stripped.is_empty() {
                self.strip_leading = false;
            }
        }
        // Empty pieces among stripped leading newlines go with them, and so do those after the
        // first trimmed trailing newline.
        let stripped_to = (from > start).then_some(from);
        let trimmed_from = (to < end).then_some(to);
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
            let dropped = stripped_to.is_some_and(|stripped| part_end <= stripped)
                || trimmed_from.is_some_and(|trimmed| part_start > trimmed);
            if part_start == part_end && dropped {
                self.parts[index].consumed = true;
            }
            let empty_piece = part_start == part_end
                && self.parts[index].whole
                && !self.parts[index].consumed
                && !self.skip_empty_pieces
                && !dropped;
            if seg_start >= seg_end && !empty_piece {
                continue;
            }
            let text = if seg_start < seg_end {
                &self.text[seg_start..seg_end]
            } else {
                ""
            };
            let text = match (self.state == State::Content, self.json) {
                (true, JsonStage::Prefix | JsonStage::AfterFence) => " ".to_owned(),
                _ => text.to_owned(),
            };
            self.parts[index].consumed = true;
            // Every delta made from a piece carries all of the piece's log probabilities.
            let logprobs = self.parts[index].logprobs.clone();
            let delta = TextDelta { text, logprobs };
            if self.state == State::Reasoning {
                out.push(ParserEvent::Reasoning(delta));
            } else {
                out.push(ParserEvent::Content(delta));
            }
        }
    }
}
