//! Building message text from parts: text and image placeholders joined by a blank line.

use std::borrow::Cow;

use crate::conversation::{ImageRef, ImageSource, Message, Role};

/// The text V4 Pro shows instead of an image.
pub(crate) const UNSUPPORTED_IMAGE_TEXT: &str = "[Unsupported Image]";

/// Separator between the parts of one message.
const PART_SEPARATOR: &str = "\n\n";

/// Accumulates the parts of one message into its text and image references.
#[derive(Debug, Default)]
pub(crate) struct ContentBuilder {
    content: String,
    images: Vec<ImageRef>,
    parts: usize,
}

impl ContentBuilder {
    fn separate(&mut self) {
        if self.parts > 0 {
            self.content.push_str(PART_SEPARATOR);
        }
        self.parts += 1;
    }

    /// Appends a text part (the first one given as a `String` becomes the content, uncopied).
    pub fn push_text<'a>(&mut self, text: impl Into<Cow<'a, str>>) {
        self.separate();
        match text.into() {
            Cow::Owned(text) if self.content.is_empty() => self.content = text,
            text => self.content.push_str(&text),
        }
    }

    /// Appends an image: its placeholder spelling at this position, recorded as a span.
    pub fn push_image(&mut self, source: ImageSource, placeholder: &str) {
        self.separate();
        let start = self.content.len();
        self.content.push_str(placeholder);
        self.images.push(ImageRef {
            span: Some((start, self.content.len())),
            source,
        });
    }

    /// A message of `role` with the accumulated content.
    pub fn into_message(self, role: Role) -> Message {
        let mut message = text_message(role, self.content);
        message.images = self.images;
        message
    }

    /// The accumulated text (for roles that carry no images).
    pub fn into_text(self) -> String {
        self.content
    }
}

/// A message of `role` with plain `content` and every role-specific field empty.
pub(crate) fn text_message(role: Role, content: String) -> Message {
    Message {
        role,
        content,
        reasoning_content: None,
        tool_calls: None,
        prefix: false,
        tool_call_id: None,
        images: Vec::new(),
        tools: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{ImageDetail, ImageSourceKind};

    #[test]
    fn parts_are_joined_and_image_spans_recorded() {
        let mut builder = ContentBuilder::default();
        builder.push_text("A");
        builder.push_image(
            ImageSource {
                kind: ImageSourceKind::Url,
                detail: ImageDetail::High,
                path: ".messages[0]".into(),
                location: "https://x/y.png".into(),
            },
            "<｜image｜>",
        );
        builder.push_text("B");
        let message = builder.into_message(Role::User);
        assert_eq!(message.content, "A\n\n<｜image｜>\n\nB");
        let (start, end) = message.images[0].span.unwrap();
        assert_eq!(&message.content[start..end], "<｜image｜>");
    }
}
