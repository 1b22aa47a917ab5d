//! The held text's piece boundaries: where each piece's share of it starts and ends, and
//! whether bytes came from ordinary token ids (markup is read only where they did not).

use super::*;

impl StreamParser {
    /// Start offset (in `text`) of part `index`.
    pub(super) fn part_start(&self, index: usize) -> usize {
        if index == 0 {
            self.start
        } else {
            self.part_end(index - 1)
        }
    }

    /// End offset (in `text`) of part `index`.
    pub(super) fn part_end(&self, index: usize) -> usize {
        self.parts[index].end - self.base
    }

    /// Index of the first part that ends at or after `offset`.
    pub(super) fn first_part_ending_from(&self, offset: usize) -> usize {
        self.parts
            .partition_point(|part| part.end - self.base < offset)
    }

    /// Indices of the parts that share a byte with `[start, end)`.
    pub(super) fn parts_overlapping(
        &self,
        start: usize,
        end: usize,
    ) -> impl Iterator<Item = usize> + '_ {
        let first = self
            .parts
            .partition_point(|part| part.end - self.base <= start);
        (first..self.parts.len()).take_while(move |&index| self.part_start(index) < end)
    }

    /// Whether the held text ending at `end` may be read as a markup marker, which ends with a
    /// special token (`token`: the thinking end, the DSML token): text chunks and special-token
    /// ids spell it out, ordinary token ids never do (with the default spellings that leaves a
    /// text chunk or the special token itself; an overridden spelling may also be a special
    /// token's text completed by a text chunk, as the reference reads it). Only the token's own
    /// text is judged: the `<` or `</` before it may come from either kind of input (found by the
    /// differential harness, streams that mix text and token-id chunks).
    pub(super) fn markup_allowed(&self, end: usize, token: &str) -> bool {
        self.spelled_out(end - token.len(), end)
    }

    /// Whether no byte of the held text `[start, end)` came from ordinary token ids.
    pub(super) fn spelled_out(&self, start: usize, end: usize) -> bool {
        self.parts_overlapping(start, end)
            .all(|index| self.parts[index].kind != PieceKind::Tokens)
    }

    /// Index of the part containing byte `offset` (the last part for the end offset).
    pub(super) fn part_at(&self, offset: usize) -> usize {
        self.parts
            .partition_point(|part| part.end - self.base <= offset)
            .min(self.parts.len().saturating_sub(1))
    }
}
