//! Where the text states' next marker is: which markers are active, the one that completes
//! first (stop sequences fed part by part), and whether a bare JSON bracket waits for more input.

use super::scan::{BracketWait, TextScan};
use super::stops::{StopState, START};
use super::strings::{char_floor, find_marker};
use super::*;

/// JSON output mode fences and the bare-JSON openers.
const FENCE_OPEN_JSON: &str = "```json\n";
const FENCE_OPEN: &str = "```\n";
const FENCE_CLOSE: &str = "\n```";

/// Markers the text states look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Marker {
    StopSequence(usize),
    ThinkEnd,
    DsmlOpen,
    FenceOpen,
    FenceClose,
    BareJson,
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

    /// The active markup and JSON markers of the current text state, in priority order (stop
    /// sequences, matched by [`StopMatcher`], come before all of them).
    pub(super) fn markers(&self) -> impl Iterator<Item = (&str, Marker)> {
        let content = self.state == State::Content;
        let (_, think, dsml) = self.active_markers();
        let markup = [
            (think, self.tags.think_end.as_str(), Marker::ThinkEnd),
            (dsml, self.tags.dsml_open.as_str(), Marker::DsmlOpen),
        ]
        .into_iter()
        // An empty spelling marks nothing.
        .filter(|&(active, marker, _)| active && !marker.is_empty())
        .map(|(_, marker, kind)| (marker, kind));
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
        markup.chain(json.iter().copied())
    }

    /// Whether the current text state matches stop sequences (and there are some).
    pub(super) fn stops_active(&self) -> bool {
        self.active_markers().0 && !self.stops.is_empty()
    }

    /// The marker that completes first in the held text from `pos`, as offsets `(start, end,
    /// kind)`: a short stop sequence inside a longer one wins; stop sequences, then earlier
    /// markers, win ties. Reads only what `scan` has not read yet and advances it. Markup
    /// occurrences that [`StreamParser::markup_allowed`] rejects are passed over, and stop
    /// sequences never match inside or across a special token.
    ///
    /// No marker sees the leading newlines being stripped from content (`strip`), except that a
    /// stop sequence that is exactly `"\n"` matches the first of them.
    pub(super) fn first_marker(
        &self,
        pos: usize,
        strip: bool,
        scan: &mut TextScan,
    ) -> Option<(usize, usize, Marker)> {
        let stops = self.stops_active();
        let skipped = if strip { scan.newlines_end } else { pos };
        if stops && skipped > pos {
            if let Some(index) = self.stops.newline_stop() {
                return Some((pos, pos + 1, Marker::StopSequence(index)));
            }
        }
        let mut found: Option<(usize, usize, Marker)> = None;
        for (marker, kind) in self.markers() {
            let token = match kind {
                Marker::ThinkEnd => Some(self.tags.think_end.as_str()),
                Marker::DsmlOpen => Some(self.tags.dsml.as_str()),
                _ => None,
            };
            // A marker that was incomplete at the end of the text read so far may end later.
            let resume = scan.end.saturating_sub(marker.len() - 1).max(skipped);
            let mut from = char_floor(&self.text, resume);
            while let Some(at) = find_marker(&self.text[from..], marker) {
                let start = from + at;
                let end = start + marker.len();
                if found.is_some_and(|(_, best, _)| end >= best) {
                    break;
                }
                if token.is_none_or(|token| self.markup_allowed(end, token)) {
                    found = Some((start, end, kind));
                    break;
                }
                from = start + self.text[start..].chars().next().map_or(1, char::len_utf8);
            }
        }
        if stops {
            let from = scan.end.max(skipped);
            let until = found.map_or(self.text.len(), |(_, end, _)| end);
            if let Some((end, index)) = self.feed_stops(&mut scan.stop, from, until) {
                let start = end - self.stops.stop_len(index);
                return Some((start, end, Marker::StopSequence(index)));
            }
        }
        scan.read_to_end(&self.text);
        found
    }

    /// Feeds `[from, until)` of the held text to the stop matcher in `state`, part by part: a
    /// special token's text belongs to no stop sequence and restarts the matcher. Returns where
    /// the first stop sequence ends, and its index.
    fn feed_stops(
        &self,
        state: &mut StopState,
        from: usize,
        until: usize,
    ) -> Option<(usize, usize)> {
        let mut at = from;
        let mut index = self.part_at(from);
        while at < until {
            let end = self.part_end(index).min(until);
            if self.parts[index].kind == PieceKind::SpecialToken {
                *state = START;
            } else if let Some((len, stop)) = self.stops.feed(state, &self.text.as_bytes()[at..end])
            {
                return Some((at + len, stop));
            }
            at = end;
            index += 1;
        }
        None
    }

    /// Whether the bracket that starts a bare JSON document at `[start, from)` waits for more
    /// input: everything after it in its piece may still start the closing fence or a stop
    /// sequence (and no stop sequence nor closing fence is complete there), as
    /// [`StreamParser::defers`] has it for markup. (It never waits behind empty pieces held at a section start.) The text after the
    /// bracket is read once, however many pieces it waits for (`scan` keeps how far).
    pub(super) fn bare_json_defers(
        &self,
        start: usize,
        from: usize,
        at_end: bool,
        scan: &mut TextScan,
    ) -> bool {
        let end = self.text.len();
        if at_end || from == end || self.part_at(start) != self.part_at(from) {
            return false;
        }
        let mut wait = scan
            .bracket
            .filter(|wait| wait.start == start)
            .unwrap_or(BracketWait {
                start,
                read: from,
                stop: START,
            });
        let fresh = &self.text.as_bytes()[wait.read..end];
        let fence_from = wait.read.saturating_sub(FENCE_CLOSE.len() - 1).max(from);
        let fence = find_marker(
            &self.text[char_floor(&self.text, fence_from)..],
            FENCE_CLOSE,
        );
        if fence.is_some() || self.stops.feed(&mut wait.stop, fresh).is_some() {
            return false;
        }
        wait.read = end;
        let after = &self.text[from..end];
        let defers = self.stops.depth(wait.stop) == after.len()
            || self.partial_start(from, end, FENCE_CLOSE, false) == Some(from);
        scan.bracket = defers.then_some(wait);
        defers
    }
}
