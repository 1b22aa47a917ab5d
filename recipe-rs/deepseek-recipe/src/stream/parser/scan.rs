//! How far a text state has read the held text: the scan position kept between pieces.

use super::stops::{StopState, START};

/// How far a text state has read the held text, kept between pieces so that each piece reads
/// only the new text (markers are short, stop sequences may be long).
#[derive(Debug, Clone, Copy)]
pub(super) struct TextScan {
    /// Offset in `text` up to which no marker was complete.
    pub(super) end: usize,
    /// End of the newlines that open the text read (as far as read).
    pub(super) newlines_end: usize,
    /// Start of the newlines that end the text read (`end` when it ends otherwise).
    pub(super) trailing_newlines: usize,
    /// The stop matcher's state after the content text read.
    pub(super) stop: StopState,
    /// A bare JSON bracket waiting for what follows it.
    pub(super) bracket: Option<BracketWait>,
}

/// A bare JSON bracket that waits (see `StreamParser::bare_json_defers`): the text after it
/// read so far is a proper prefix of a stop sequence or the closing fence.
#[derive(Debug, Clone, Copy)]
pub(super) struct BracketWait {
    /// Offset of the bracket.
    pub(super) start: usize,
    /// How far the text after it was read.
    pub(super) read: usize,
    /// The stop matcher's state over that text (special tokens not set apart).
    pub(super) stop: StopState,
}

impl TextScan {
    /// Nothing read yet from `pos` on.
    pub(super) fn at(pos: usize) -> Self {
        Self {
            end: pos,
            newlines_end: pos,
            trailing_newlines: pos,
            stop: START,
            bracket: None,
        }
    }

    /// Offsets after `text` dropped its first `by` bytes.
    pub(super) fn shift(&mut self, by: usize) {
        self.end -= by;
        self.newlines_end = self.newlines_end.saturating_sub(by);
        self.trailing_newlines = self.trailing_newlines.saturating_sub(by);
        if let Some(bracket) = &mut self.bracket {
            bracket.start -= by;
            bracket.read -= by;
        }
    }

    /// Marks all of `text` read, tracking where its trailing newlines start.
    pub(super) fn read_to_end(&mut self, text: &str) {
        let fresh = &text.as_bytes()[self.end..];
        if let Some(last) = fresh.iter().rposition(|&byte| byte != b'\n') {
            self.trailing_newlines = self.end + last + 1;
        }
        self.end = text.len();
    }

    /// Extends the opening newlines over text read for the first time.
    pub(super) fn read_newlines(&mut self, text: &str) {
        if self.newlines_end == self.end {
            let run = text.as_bytes()[self.end..]
                .iter()
                .take_while(|&&byte| byte == b'\n');
            self.newlines_end += run.count();
        }
    }
}
