//! Wire pieces shared by the protocols and the two-stage JSON reader.

use serde::de::{DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::error::{Error, Result, INVALID_JSON_PREFIX};

/// Reads a request body with the errors of the two-stage read (see the module docs).
///
/// A body the direct read takes (`direct_read`: the same values wherever it reads a body) is read
/// once, without the intermediate JSON value; any other body, and every error, goes through the
/// two stages, whose error wording is the reference's.
pub(crate) fn from_json<T: DeserializeOwned>(body: &str) -> Result<T> {
    match super::direct_read::read(body) {
        Some(typed) => Ok(typed),
        None => typed_from_value(json_from_text(body)?),
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
    fn read_and_declined_bodies_give_the_two_stage_outcome() {
        let deep = format!(
            r#"{{"name": "x", "extra": {}1{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let long_number = format!(r#"{{"name": "x", "extra": 1{}}}"#, "0".repeat(400));
        for body in [
            r#"{"name": "x", "temperature": 0.5, "extra": [true, false, null, -12.5, "\u00e9\n"]}"#,
            r#"{"name": "e\"E\\u", "n": 10, "deep": [[[[{"a": 1}]]]]}"#,
            r#"{"name": "a\\", "x": 1e5}"#,
            "{}",
            deep.as_str(),
            long_number.as_str(),
            r#"{"name": "x", "extra": "\ud800"}"#,
            r#"{"name": "x", "extra": "\uDFFF\uD800"}"#,
            r#"{"name": "x", "extra": "\ud83d\ude00"}"#,
            r#"{"name": "x", "extra": 1e400}"#,
            r#"{"name": "x", "extra": 1E2}"#,
        ] {
            assert_eq!(
                from_json::<Shape>(body).map_err(|err| err.to_string()),
                two_stage(body).map_err(|err| err.to_string()),
                "{body}"
            );
        }
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
