//! Wire pieces shared by the protocols and the two-stage JSON reader.

use serde::de::{DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::error::{Error, Result, INVALID_JSON_PREFIX};

/// Reads a request body with the errors of the two-stage read (see the module docs).
///
/// A body the typed shape takes straight from the text is read once, without the intermediate
/// JSON value, when [`typed_read_is_exact`] says that this accepts exactly what the two-stage
/// read accepts and gives the same values; any other body, and any error, goes through the two
/// stages, whose error wording is the reference's.
pub(crate) fn from_json<T: DeserializeOwned>(body: &str) -> Result<T> {
    if typed_read_is_exact(body) {
        if let Ok(typed) = serde_json::from_str(body) {
            return Ok(typed);
        }
    }
    typed_from_value(json_from_text(body)?)
}

/// Nesting deeper than this always takes the two-stage read (serde_json's limit is 128).
const DIRECT_MAX_DEPTH: usize = 64;
/// A digit run longer than this always takes the two-stage read (it may not fit an `f64`).
const DIRECT_MAX_DIGITS: usize = 300;

/// Whether reading `body` straight into a typed shape can only succeed where the two-stage read
/// succeeds.
///
/// Both read the typed parts alike, but the direct read skips unknown fields with serde_json's
/// lenient skipper, which checks neither nesting depth, nor surrogate escapes, nor whether a
/// number fits an `f64`; the two-stage read parses those fields too and rejects such bodies. So a
/// body with deep nesting, anything spelled like a `\u` escape of a surrogate, any number with an
/// exponent or any very long digit run is read in two stages. (The scan does not check syntax: a
/// body that is not JSON fails the direct read and then gets its two-stage error.)
fn typed_read_is_exact(body: &str) -> bool {
    let bytes = body.as_bytes();
    if spells_surrogate_escape(bytes) {
        return false;
    }
    let mut depth = 0usize;
    let mut digits = 0usize;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        at += 1;
        if byte.is_ascii_digit() {
            digits += 1;
            if digits > DIRECT_MAX_DIGITS {
                return false;
            }
            continue;
        }
        let after_digit = digits > 0;
        digits = 0;
        match byte {
            b'"' => match string_end(bytes, at) {
                Some(end) => at = end,
                None => return false,
            },
            b'[' | b'{' => {
                depth += 1;
                if depth > DIRECT_MAX_DEPTH {
                    return false;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'e' | b'E' if after_digit => return false,
            _ => {}
        }
    }
    true
}

/// Whether `bytes` hold `\uD800`-`\uDFFF` anywhere (in either case), escaped or not.
fn spells_surrogate_escape(bytes: &[u8]) -> bool {
    [b"\\ud", b"\\uD"].iter().any(|prefix| {
        memchr::memmem::find_iter(bytes, prefix).any(|at| {
            bytes
                .get(at + prefix.len())
                .is_some_and(|next| matches!(next, b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
        })
    })
}

/// The index after the closing quote of the string whose contents start at `at` (a quote
/// preceded by an odd number of backslashes is escaped), if it is closed.
fn string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let quote = at + memchr::memchr(b'"', bytes.get(at..)?)?;
        let backslashes = bytes[..quote]
            .iter()
            .rev()
            .take_while(|&&byte| byte == b'\\')
            .count();
        if backslashes % 2 == 0 {
            return Some(quote + 1);
        }
        at = quote + 1;
    }
}

/// Reads an optional `f32` as the two-stage read does: the number is parsed as an `f64` and
/// then converted, never parsed in single precision (which serde_json does when it reads an
/// `f32` straight from text, and which can round differently). Errors name `f32`.
pub(crate) fn optional_f32<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<Option<f32>, D::Error> {
    deserializer.deserialize_option(OptionalF32)
}

/// The visitor of [`optional_f32`]: `None` for `null`, else an `f32` read through `f64`.
struct OptionalF32;

impl<'de> Visitor<'de> for OptionalF32 {
    type Value = Option<f32>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("option")
    }

    fn visit_none<E: serde::de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        deserializer.deserialize_f64(F32).map(Some)
    }
}

/// An `f32` from any JSON number, converted as serde's own `f32` does, expecting `f32`.
struct F32;

impl Visitor<'_> for F32 {
    type Value = f32;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("f32")
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> std::result::Result<f32, E> {
        Ok(value as f32)
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> std::result::Result<f32, E> {
        Ok(value as f32)
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> std::result::Result<f32, E> {
        Ok(value as f32)
    }
}

/// The first stage of [`from_json`]: the body as JSON.
pub(crate) fn json_from_text(body: &str) -> Result<Value> {
    serde_json::from_str(body).map_err(|err| Error::Parse(format!("{INVALID_JSON_PREFIX}{err}")))
}

/// The second stage of [`from_json`]: the typed shape of a JSON body.
pub(crate) fn typed_from_value<T: DeserializeOwned>(value: Value) -> Result<T> {
    T::deserialize(value).map_err(|err| Error::Parse(format!("invalid request body: {err}")))
}

/// Deserialises `value` as `T` inside a custom deserializer, keeping serde's message.
pub(crate) fn value_as<'de, T: DeserializeOwned, D: Deserializer<'de>>(
    value: Value,
) -> std::result::Result<T, D::Error> {
    T::deserialize(value).map_err(serde::de::Error::custom)
}

/// Reads a field that is either a string (`text`) or a list of `T` (`list`) inside a custom
/// deserializer; anything else fails with `message`, spelled as the reference does.
pub(crate) fn string_or_list<'de, T: DeserializeOwned, D: Deserializer<'de>, R>(
    deserializer: D,
    message: &'static str,
    text: impl FnOnce(String) -> R,
    list: impl FnOnce(Vec<T>) -> R,
) -> std::result::Result<R, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::String(value) => Ok(text(value)),
        items @ Value::Array(_) => value_as::<_, D>(items).map(list),
        _ => Err(serde::de::Error::custom(message)),
    }
}

/// A requested reasoning effort, in the vocabulary every protocol accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EffortParam {
    /// Turns thinking off (when no thinking switch says otherwise).
    None,
    /// Resolves to `low`.
    Minimal,
    /// Resolves to `low`.
    Low,
    /// Resolves to `high`.
    Medium,
    /// Resolves to `high`.
    High,
    /// Resolves to `xhigh`.
    Xhigh,
    /// Resolves to `max`.
    Ultra,
    /// Resolves to `max`.
    Max,
}

/// The explicit thinking switch (`{"type": "enabled" | "disabled" | "adaptive"}`); the type
/// name is part of the reference's parse error wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct ChatCompletionThinking {
    /// Whether thinking is requested.
    #[serde(rename = "type")]
    pub kind: ThinkingType,
    /// Accepted and ignored, as by the official API.
    pub budget_tokens: Option<u64>,
}

/// The values of `thinking.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingType {
    /// Thinking on; the model decides how much.
    Adaptive,
    /// Thinking on.
    Enabled,
    /// Thinking off.
    Disabled,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Deserialize)]
    struct Shape {
        name: String,
        #[serde(default, deserialize_with = "optional_f32")]
        temperature: Option<f32>,
    }

    fn two_stage(body: &str) -> Result<Shape> {
        typed_from_value(json_from_text(body)?)
    }

    #[test]
    fn ordinary_bodies_are_read_directly() {
        for body in [
            r#"{"name": "x", "temperature": 0.5, "extra": [true, false, null, -12.5, "\u00e9\n"]}"#,
            r#"{"name": "e\"E\\u", "n": 10, "deep": [[[[{"a": 1}]]]]}"#,
            r#"{"name": "quoted \"1e5\" and \\\"2E3", "n": 3}"#,
            "{}",
        ] {
            assert!(typed_read_is_exact(body), "{body}");
        }
        // A string ending in an escaped backslash closes at the next quote.
        assert!(!typed_read_is_exact(r#"{"name": "a\\", "x": 1e5}"#));
    }

    #[test]
    fn what_only_the_skipper_accepts_is_read_in_two_stages() {
        let deep = format!(
            r#"{{"name": "x", "extra": {}1{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let bodies = [
            deep.as_str(),
            r#"{"name": "x", "extra": "\ud800"}"#,
            r#"{"name": "x", "extra": "\uDFFF\uD800"}"#,
            r#"{"name": "x", "extra": 1e400}"#,
            r#"{"name": "x", "extra": 1E2}"#,
        ];
        for body in bodies {
            assert!(!typed_read_is_exact(body), "{body}");
            let expected = two_stage(body).map_err(|err| err.to_string());
            assert_eq!(
                from_json::<Shape>(body).map_err(|err| err.to_string()),
                expected
            );
        }
        let long_number = format!(r#"{{"name": "x", "extra": 1{}}}"#, "0".repeat(400));
        assert!(!typed_read_is_exact(&long_number));
        assert!(from_json::<Shape>(&long_number).is_err());
    }

    #[test]
    fn direct_and_two_stage_reads_agree() {
        // 0.70000007748603820800781250… + 1e-25: above an f32 midpoint that an f64 rounds onto.
        let bodies = [
            r#"{"name": "a", "temperature": 0.7000000774860382080078126}"#,
            r#"{"name": "b", "temperature": 16777217}"#,
            r#"{"name": "c", "temperature": null, "name2": 1}"#,
            r#"{"name": "d"}"#,
            r#"{"name": "dup", "name": "last"}"#,
            r#"{"name": "t", "temperature": "hot"}"#,
            r#"{"name": 1}"#,
            r#"{"name": "x",}"#,
        ];
        for body in bodies {
            let direct = from_json::<Shape>(body).map_err(|err| err.to_string());
            assert_eq!(
                direct,
                two_stage(body).map_err(|err| err.to_string()),
                "{body}"
            );
        }
        let read = from_json::<Shape>(bodies[0])
            .ok()
            .and_then(|shape| shape.temperature);
        assert_eq!(read, Some(0.7000000774860382_f64 as f32));
        // serde_json's own f32 read rounds this number the other way.
        let single = serde_json::from_str::<f32>("0.7000000774860382080078126").ok();
        assert_ne!(single, read);
        let wrong = from_json::<Shape>(bodies[5]).map_err(|err| err.to_string());
        assert!(wrong.is_err_and(|err| err.contains("expected f32")));
    }
}
