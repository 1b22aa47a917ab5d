//! Guessing the protocol of a JSON request body without building it.
//!
//! The rule (the Python package's `infer_protocol` asks it for anything but a typed model):
//! `input` or `instructions` means Responses; an Anthropic-only key (`system`,
//! `stop_sequences`, `top_k`, `anthropic_version`) or an Anthropic-only content block type in
//! `messages` means Messages;
//! anything else, and any body that is not a JSON object, is Chat Completions. Where a key
//! repeats, its last value counts, as in a parsed object. The scan skips every other value
//! without allocating, so it costs a fraction of a full parse.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::Protocol;

/// Top-level keys only Anthropic Messages requests have.
const MESSAGES_ONLY_KEYS: [&str; 4] = ["system", "stop_sequences", "top_k", "anthropic_version"];
/// Content block types only Anthropic Messages requests have.
const MESSAGES_ONLY_BLOCKS: [&str; 6] = [
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "image",
    "document",
];

/// The protocol a request body most likely uses (see the module docs).
pub fn infer_protocol(body: &str) -> Protocol {
    if !body.trim_start().starts_with('{') {
        return Protocol::ChatCompletions;
    }
    let mut deserializer = serde_json::Deserializer::from_str(body);
    let Ok(shape) = deserializer.deserialize_map(BodyShape) else {
        return Protocol::ChatCompletions;
    };
    if deserializer.end().is_err() {
        return Protocol::ChatCompletions;
    }
    if shape.responses_keys {
        Protocol::Responses
    } else if shape.messages_keys || shape.messages_blocks {
        Protocol::Messages
    } else {
        Protocol::ChatCompletions
    }
}

/// What [`infer_protocol`] needs from a body object.
#[derive(Debug, Default)]
struct Shape {
    responses_keys: bool,
    messages_keys: bool,
    /// Whether the last `messages` value holds an Anthropic-only content block.
    messages_blocks: bool,
}

/// Reads the top-level object.
struct BodyShape;

impl<'de> Visitor<'de> for BodyShape {
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut shape = Shape::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "input" | "instructions" => shape.responses_keys = true,
                "messages" => {
                    shape.messages_blocks = map.next_value_seed(Probe::Messages)?;
                    continue;
                }
                other if MESSAGES_ONLY_KEYS.contains(&other) => shape.messages_keys = true,
                _ => {}
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(shape)
    }
}

/// What a value is tested for, by its place in the body; every probe reads (and so consumes) any
/// JSON value and answers `false` for a value of another shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// `messages`: a list with a message holding an Anthropic-only block.
    Messages,
    /// A message: an object whose last `content` is such a list of blocks.
    Message,
    /// `content`: a list with an Anthropic-only block.
    Content,
    /// A block: an object whose last `type` names an Anthropic-only block.
    Block,
    /// `type`: an Anthropic-only block type name.
    TypeName,
}

impl Probe {
    /// The probe for the items of a list at this place, if a list matters here.
    fn items(self) -> Option<Probe> {
        match self {
            Self::Messages => Some(Self::Message),
            Self::Content => Some(Self::Block),
            _ => None,
        }
    }

    /// The key and its value's probe for an object at this place, if an object matters here.
    fn field(self) -> Option<(&'static str, Probe)> {
        match self {
            Self::Message => Some(("content", Self::Content)),
            Self::Block => Some(("type", Self::TypeName)),
            _ => None,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Probe {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Probe {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        let mut found = false;
        match self.items() {
            Some(item) => {
                while let Some(matched) = seq.next_element_seed(item)? {
                    found |= matched;
                }
            }
            None => while seq.next_element::<IgnoredAny>()?.is_some() {},
        }
        Ok(found)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut found = false;
        match self.field() {
            Some((wanted, value)) => {
                while let Some(is_wanted) = map.next_key_seed(KeyIs(wanted))? {
                    if is_wanted {
                        found = map.next_value_seed(value)?;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            None => while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {},
        }
        Ok(found)
    }

    fn visit_str<E>(self, value: &str) -> Result<bool, E> {
        Ok(self == Self::TypeName && MESSAGES_ONLY_BLOCKS.contains(&value))
    }

    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }
}

/// Reads an object key: whether it is the wanted one (escapes decoded, no allocation when the
/// key has none).
#[derive(Clone, Copy)]
struct KeyIs(&'static str);

impl<'de> DeserializeSeed<'de> for KeyIs {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIs {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_blocks_decide() {
        let cases = [
            (
                r#"{"model": "m", "messages": []}"#,
                Protocol::ChatCompletions,
            ),
            (r#"{"input": "hi"}"#, Protocol::Responses),
            (r#"{"instructions": 1, "system": "s"}"#, Protocol::Responses),
            (r#"{"top_k": 3}"#, Protocol::Messages),
            (
                r#"{"messages": [{"role": "user", "content": [{"type": "text"}, {"type": "image"}]}]}"#,
                Protocol::Messages,
            ),
            (
                r#"{"messages": [{"content": [{"type": {}}, {"type": 1, "type": "thinking"}]}]}"#,
                Protocol::Messages,
            ),
            (
                r#"{"messages": [{"content": [{"type": "image"}], "content": "text"}]}"#,
                Protocol::ChatCompletions,
            ),
            (
                r#"{"messages": [{"content": [{"type": "image"}]}], "messages": []}"#,
                Protocol::ChatCompletions,
            ),
            (
                r#"{"messages": {"content": [{"type": "image"}]}}"#,
                Protocol::ChatCompletions,
            ),
            (
                r#"{"messages": [{"content": [{"type": "tool_use"}]}]}"#,
                Protocol::Messages,
            ),
            (r#"{"input": 1"#, Protocol::ChatCompletions),
            (r#"{"input": 1} x"#, Protocol::ChatCompletions),
            (r#"["input"]"#, Protocol::ChatCompletions),
            ("", Protocol::ChatCompletions),
        ];
        for (body, protocol) in cases {
            assert_eq!(infer_protocol(body), protocol, "{body}");
        }
    }
}
