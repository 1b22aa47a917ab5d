//! The rendered prompt and the builder that assembles it.

use std::ops::Range;

use crate::conversation::{ImageRef, ImageSource};

/// A rendered prompt: its text, where the special tokens are, and the images it references.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RenderedPrompt {
    /// The prompt text.
    pub prompt: String,
    /// Byte ranges of `prompt` that are special tokens, in order and non-overlapping.
    pub special_ranges: Vec<Range<usize>>,
    /// The image sources the prompt references, in prompt order.
    pub image_sources: Vec<ImageSource>,
    /// Template constants that start a text segment (right after a special token or at the
    /// start): each one's byte offset and text, in order. Encoding takes their leading ids from
    /// the tokenizer's memo instead of merging them again.
    fixed_starts: Vec<(usize, &'static str)>,
}

impl RenderedPrompt {
    /// The special ranges as half-open Unicode code-point offsets (the vectors' convention).
    pub fn special_char_ranges(&self) -> Vec<Range<usize>> {
        let mut ranges = Vec::with_capacity(self.special_ranges.len());
        let mut chars_before = 0;
        let mut bytes_seen = 0;
        for range in &self.special_ranges {
            chars_before += self.prompt[bytes_seen..range.start].chars().count();
            let length = self.prompt[range.clone()].chars().count();
            ranges.push(chars_before..chars_before + length);
            chars_before += length;
            bytes_seen = range.end;
        }
        ranges
    }

    /// The template constant that starts at byte `start`, if one was written there at the start
    /// of a text segment.
    pub(crate) fn fixed_start_at(&self, start: usize) -> Option<&'static str> {
        self.fixed_starts
            .iter()
            .find(|(at, _)| *at == start)
            .map(|(_, text)| *text)
    }

    /// The text of every special range, in order.
    pub fn special_texts(&self) -> impl Iterator<Item = &str> {
        self.special_ranges
            .iter()
            .map(|range| &self.prompt[range.clone()])
    }
}

/// Appends text and special tokens to a prompt, recording where the special tokens are.
#[derive(Debug, Default)]
pub(crate) struct PromptBuilder {
    rendered: RenderedPrompt,
}

impl PromptBuilder {
    /// A builder whose prompt buffer holds `bytes` before it grows.
    pub(crate) fn with_capacity(bytes: usize) -> Self {
        Self {
            rendered: RenderedPrompt {
                prompt: String::with_capacity(bytes),
                ..RenderedPrompt::default()
            },
        }
    }

    /// Plain text.
    pub(crate) fn text(&mut self, text: &str) {
        self.rendered.prompt.push_str(text);
    }

    /// A template's constant text; remembered as a fixed start when it starts a text segment.
    pub(crate) fn fixed_text(&mut self, text: &'static str) {
        let start = self.rendered.prompt.len();
        let segment_start = self
            .rendered
            .special_ranges
            .last()
            .map_or(0, |special| special.end);
        if start == segment_start && !text.is_empty() {
            self.rendered.fixed_starts.push((start, text));
        }
        self.text(text);
    }

    /// A special token (skipped when its spelling is empty).
    pub(crate) fn special(&mut self, spelling: &str) {
        if spelling.is_empty() {
            return;
        }
        let start = self.rendered.prompt.len();
        self.rendered.prompt.push_str(spelling);
        self.rendered
            .special_ranges
            .push(start..self.rendered.prompt.len());
    }

    /// Message text whose image placeholders (at the images' spans) are special tokens.
    ///
    /// Every image is listed as a source; a span that is missing, out of bounds, not on a
    /// character boundary or overlapping an earlier one marks nothing.
    pub(crate) fn text_with_images(&mut self, content: &str, images: &[ImageRef]) {
        let mut written = 0;
        for image in images {
            self.rendered.image_sources.push(image.source.clone());
            let Some((start, end)) = image.span else {
                continue;
            };
            let valid = written <= start
                && start < end
                && end <= content.len()
                && content.is_char_boundary(start)
                && content.is_char_boundary(end);
            if valid {
                self.text(&content[written..start]);
                self.special(&content[start..end]);
                written = end;
            }
        }
        self.text(&content[written..]);
    }

    /// Assistant text: the given spellings are special wherever they occur, everything else is text.
    pub(crate) fn text_with_specials(&mut self, text: &str, spellings: &[&str]) {
        if !may_contain_any(text, spellings) {
            self.text(text);
            return;
        }
        let mut matches: Vec<(usize, usize)> = spellings
            .iter()
            .filter(|spelling| !spelling.is_empty())
            .flat_map(|spelling| {
                text.match_indices(*spelling)
                    .map(|(start, found)| (start, start + found.len()))
            })
            .collect();
        matches.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut written = 0;
        for (start, end) in matches {
            if start < written {
                continue;
            }
            self.text(&text[written..start]);
            self.special(&text[start..end]);
            written = end;
        }
        self.text(&text[written..]);
    }

    /// The finished prompt.
    pub(crate) fn finish(self) -> RenderedPrompt {
        self.rendered
    }
}

/// `false` when no spelling can occur in `text`: the non-empty spellings all start with one byte
/// that `text` lacks (one vectorised search instead of a substring search per spelling).
fn may_contain_any(text: &str, spellings: &[&str]) -> bool {
    let mut firsts = spellings
        .iter()
        .filter_map(|spelling| spelling.bytes().next());
    let Some(first) = firsts.next() else {
        return false;
    };
    !firsts.all(|byte| byte == first) || memchr::memchr(first, text.as_bytes()).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{ImageDetail, ImageSourceKind};

    #[test]
    fn char_ranges_count_code_points() {
        let mut builder = PromptBuilder::default();
        builder.special("<｜a｜>");
        builder.text("é");
        builder.special("<b>");
        let rendered = builder.finish();
        assert_eq!(rendered.special_ranges, vec![0..9, 11..14]);
        assert_eq!(rendered.special_char_ranges(), vec![0..5, 6..9]);
    }

    #[test]
    fn specials_inside_text_take_the_leftmost_longest_match() {
        let mut builder = PromptBuilder::default();
        builder.text_with_specials("x<a><ab>y<a>", &["<a>", "<ab>", "<a"]);
        let rendered = builder.finish();
        assert_eq!(
            rendered.special_texts().collect::<Vec<_>>(),
            ["<a>", "<ab>", "<a>"]
        );
    }

    #[test]
    fn only_a_text_without_the_shared_first_byte_skips_the_search() {
        assert!(!may_contain_any("plain text", &["<a>", "<b>", ""]));
        assert!(may_contain_any("a < b", &["<a>", "<b>"]));
        assert!(may_contain_any("plain text", &["<a>", "[b]"]));
        assert!(!may_contain_any("<a>", &["", ""]));
        assert!(!may_contain_any("<a>", &[]));
        let mut builder = PromptBuilder::default();
        builder.text_with_specials("x[b]y<a>z", &["<a>", "[b]"]);
        let rendered = builder.finish();
        assert_eq!(rendered.special_texts().collect::<Vec<_>>(), ["[b]", "<a>"]);
    }

    #[test]
    fn image_spans_become_special_and_bad_spans_are_ignored() {
        let source = ImageSource {
            kind: ImageSourceKind::Url,
            detail: ImageDetail::High,
            path: String::new(),
            location: "http://x".to_owned(),
        };
        let images = [
            ImageRef {
                span: Some((2, 5)),
                source: source.clone(),
            },
            ImageRef {
                span: Some((3, 99)),
                source: source.clone(),
            },
            ImageRef { span: None, source },
        ];
        let mut builder = PromptBuilder::default();
        builder.text_with_images("a <I> b", &images);
        let rendered = builder.finish();
        assert_eq!(rendered.prompt, "a <I> b");
        assert_eq!(rendered.special_ranges, vec![2..5]);
        assert_eq!(rendered.image_sources.len(), 3);
    }
}
