//! Wire pieces shared by the protocols and the two-stage JSON reader.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::error::{Error, Result};

/// Reads a request body: JSON text first, then the typed shape (see the module docs).
pub(crate) fn from_json<T: DeserializeOwned>(body: &str) -> Result<T> {
    typed_from_value(json_from_text(body)?)
}

/// The first stage of [`from_json`]: the body as JSON.
pub(crate) fn json_from_text(body: &str) -> Result<Value> {
    serde_json::from_str(body).map_err(|err| Error::Parse(format!("invalid JSON request: {err}")))
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
