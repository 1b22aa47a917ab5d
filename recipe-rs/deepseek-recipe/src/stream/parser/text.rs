//! Reasoning and content: cutting at markers (found by `text_markers`), holding, per-piece
//! deltas and JSON output mode.

use super::scan::TextScan;
use super::strings::partial_tag_start;
use super::text_markers::Marker;
use super::*;

/// How a run of text-state text is trimmed before it is emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trim<'a> {
    None,
    /// The trailing newlines before this marker (the thinking end ending reasoning, the DSML
    /// opener).
    TrailingNewlines(&'a str),
}

impl StreamParser {
    /// Whether an empty whole piece not yet emitted is held at `pos`.
    fn empty_piece_at(&self, pos: usize) -> bool {
        (self.first_part_ending_from(pos)..self.parts.len())
            .take_while(|&index| self.part_end(index) == pos)
            .any(|index| {
                let part = &self.parts[index];
                self.part_start(index) == pos && part.whole && !part.consumed
            })
    }

    /// Drops the empty pieces lying within `[start, end]` of the held text: they yield no delta.
    fn drop_empty_pieces(&mut self, start: usize, end: usize) {
        if end == start {
            return;
        }
        for index in self.first_part_ending_from(start)..self.parts.len() {
            let part_start = self.part_start(index);
            if part_start > end {
                break;
            }
            if part_start >= start && part_start == self.part_end(index) {
                self.parts[index].consumed = true;
            }
        }
    }

    /// Reasoning and content: cut at markers, emit text per part, hold what may change.
    pub(super) fn text_state(
        &mut self,
        pos: usize,
        at_end: bool,
        out: &mut Vec<ParserEvent>,
    ) -> Step {
        let reasoning = self.state == State::Reasoning;
        let tags = Arc::clone(&self.tags);
        let mut scan = self.scan.take().unwrap_or(TextScan::at(pos));
        scan.read_newlines(&self.text);
        let found = match scan.bracket {
            Some(wait) => Some((wait.start, wait.start + 1, Marker::BareJson)),
            None => self.first_marker(pos, self.strip_leading && !reasoning, &mut scan),
        };
        if let Some((start, end, kind)) = found {
            let section_start = self.section_start;
            // Empty pieces held at the section start, with nothing (not even a newline) after.
            let held_empty_pieces = section_start && start == pos && self.empty_piece_at(pos);
            if !reasoning {
                self.section_start = false;
            }
            let trim = match kind {
                Marker::ThinkEnd if reasoning => Trim::TrailingNewlines(tags.think_end.as_str()),
                Marker::DsmlOpen => Trim::TrailingNewlines(tags.dsml_open.as_str()),
                _ => Trim::None,
            };
            // Empty pieces held at a section start yield nothing when a marker comes before any
            // text (newlines it trims or strips are none), and so do empty pieces directly before
            // the JSON document.
            let before_end = match trim {
                Trim::TrailingNewlines(marker) => {
                    self.without_trailing_newlines(pos, start, marker)
                }
                Trim::None => start,
            };
            let before = &self.text[pos..before_end];
            let visible = if self.strip_leading {
                before.trim_start_matches('\n')
            } else {
                before
            };
            self.skip_empty_pieces = visible.is_empty()
                && (section_start || matches!(kind, Marker::BareJson | Marker::FenceOpen));
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
                    if !held_empty_pieces && self.bare_json_defers(start, end, at_end, &mut scan) {
                        self.scan = Some(scan);
                        return Step::Wait(start);
                    }
                    self.json = JsonStage::Bare;
                    self.strip_leading = false;
                    // The bracket is its own delta; empty pieces before it were dealt with above.
                    self.skip_empty_pieces = true;
                    self.emit_text(start, end, Trim::None, out);
                    self.skip_empty_pieces = false;
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
        // Each marker holds from where it may still start; the markers that trim the newlines
        // before them (`</think>` ending reasoning, the DSML opener) also hold those newlines.
        let end = self.text.len();
        let mut hold = end;
        for (marker, kind) in self.markers() {
            let markup = matches!(kind, Marker::ThinkEnd | Marker::DsmlOpen);
            let mut marker_hold = self.partial_start(pos, end, marker, markup).unwrap_or(end);
            let trims = match kind {
                Marker::ThinkEnd => reasoning,
                Marker::DsmlOpen => true,
                _ => false,
            };
            if trims {
                // Trailing newlines of all the held text were tracked as it was read.
                let trimmed_end = if marker_hold == end {
                    scan.trailing_newlines.max(pos)
                } else {
                    pos + self.text[pos..marker_hold].trim_end_matches('\n').len()
                };
                marker_hold = self.after_broken_tag(trimmed_end, marker_hold, marker);
            }
            hold = hold.min(marker_hold);
        }
        // A possible stop sequence is held whatever its length, like the reference does (the
        // stripped leading newlines are no part of one).
        let stop_hold = if self.stops_active() {
            (end - self.stops.depth(scan.stop)).max(pos)
        } else {
            end
        };
        if self.section_start {
            let first_hold = hold.min(stop_hold);
            if first_hold == pos && !self.over_hold_limit(pos) {
                // Empty pieces at a section start wait for the first text that is certain.
                return Step::Wait(pos);
            }
            self.section_start = false;
            if self.strip_leading {
                // They go with the leading newlines stripped before that text, if any.
                self.drop_empty_pieces(pos, scan.newlines_end.clamp(pos, first_hold));
            }
        }
        let mut keep = self.hold_from(pos, hold);
        if stop_hold < end {
            keep = keep.min(self.part_start(self.part_at(stop_hold)).max(pos));
        }
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

    /// Where held text `[start, end)` ends without the trailing newlines that `marker` would
    /// trim (see [`Self::after_broken_tag`]).
    fn without_trailing_newlines(&self, start: usize, end: usize, marker: &str) -> usize {
        let trimmed_end = start + self.text[start..end].trim_end_matches('\n').len();
        self.after_broken_tag(trimmed_end, end, marker)
    }

    /// Where the held text ending at `end`, whose trailing newlines start at `trimmed_end`, ends
    /// without the newlines that `marker` would trim. A newline right after a proper prefix of
    /// the marker is the character that broke that possible tag: text, not a trailing newline,
    /// as far as this marker is concerned (the prefix may lie before the held text, even in text
    /// already consumed).
    fn after_broken_tag(&self, trimmed_end: usize, end: usize, marker: &str) -> usize {
        if trimmed_end == end {
            return end;
        }
        let broken_tag = self
            .partial_start(self.start, trimmed_end, marker, true)
            .is_some()
            || (trimmed_end - self.start < marker.len()
                && self.continues_consumed_tag(trimmed_end, marker));
        trimmed_end + usize::from(broken_tag)
    }

    /// Whether the held text up to `end` continues a possible `marker` tag that began in text
    /// already consumed.
    fn continues_consumed_tag(&self, end: usize, marker: &str) -> bool {
        let joined = [self.consumed_tail.as_str(), &self.text[self.start..end]].concat();
        let tail = self.consumed_tail.len();
        partial_tag_start(&self.tags, &joined, marker, |at| {
            if at >= tail {
                self.spelled_out(self.start + at - tail, end)
            } else {
                tail - at <= self.consumed_tail_spelled_bytes && self.spelled_out(self.start, end)
            }
        })
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
        for index in self.first_part_ending_from(start)..self.parts.len() {
            let part_start = self.part_start(index);
            let part_end = self.part_end(index);
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

    /// Content texts per piece pushed (`Piece::text` unless given).
    fn per_piece(parser: &mut StreamParser, pieces: Vec<Piece>) -> Vec<Vec<String>> {
        pieces
            .into_iter()
            .map(|piece| {
                let mut out = Vec::new();
                parser.push(piece, &mut out);
                out.into_iter()
                    .filter_map(|event| match event {
                        ParserEvent::Content(delta) => Some(delta.text),
                        ParserEvent::StopSequence(stop) => Some(format!("STOP {stop}")),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_stop_start_is_held_from_after_the_stripped_newlines() {
        let pieces = ["\n", "a", "b"].map(Piece::text).to_vec();
        let got = per_piece(&mut content_parser(&["\nab"]), pieces);
        assert_eq!(got, [vec![], vec!["a".to_owned()], vec!["b".to_owned()]]);
    }

    #[test]
    fn a_special_token_restarts_stop_matching() {
        let special = |text: &str| Piece {
            text: text.into(),
            kind: PieceKind::SpecialToken,
            ..Piece::default()
        };
        let pieces = vec![
            Piece::text("xa"),
            special("b"),
            Piece::text("a"),
            Piece::text("b"),
        ];
        let got = per_piece(&mut content_parser(&["ab"]), pieces);
        let expected: [&[&str]; 4] = [&[], &["xa", "b"], &[], &["STOP ab"]];
        assert_eq!(
            got,
            expected.map(|texts| texts.iter().map(|t| t.to_string()).collect::<Vec<_>>())
        );
    }

    #[test]
    fn a_bare_bracket_waits_while_a_stop_start_follows_it() {
        let mut parser = StreamParser::new(ParsingOptions {
            parse_json_output: true,
            stop_sequences: vec![format!("Q{}", "x".repeat(5000))],
            ..ParsingOptions::default()
        });
        let mut pieces = vec![Piece::text("{Q")];
        pieces.extend((0..3000).map(|_| Piece::text("x")));
        pieces.push(Piece::text("y"));
        let got = per_piece(&mut parser, pieces);
        assert!(got[..3001].iter().all(Vec::is_empty));
        let released = &got[3001];
        assert_eq!(
            released.len(),
            3003,
            "the bracket, its piece's rest, each x, then y"
        );
        assert_eq!(released[..2], ["{".to_owned(), "Q".to_owned()]);
        assert_eq!(released.concat(), format!("{{Q{}y", "x".repeat(3000)));
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
