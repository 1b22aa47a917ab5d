//! What the response side needs to know about a request, beyond how to parse the output: the
//! protocol-specific values the stream generators report or act on.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::responses::NamespaceToolMap;
use crate::stream::responses::{ReasoningSettings, ResponsesEcho};

/// Protocol-specific request data the response generators need.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "protocol", rename_all = "snake_case")]
pub enum ResponseContext {
    /// OpenAI Chat Completions.
    ChatCompletions {
        /// `stream_options.include_usage`: every chunk carries a `usage` field.
        include_usage: bool,
    },
    /// OpenAI Responses.
    Responses(Box<ResponsesContext>),
    /// Anthropic Messages (the generator needs nothing beyond the thinking mode).
    Messages,
}

/// The request values a Responses response object reports, and how tool names map back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsesContext {
    /// Echoed request values.
    pub echo: ResponsesEcho,
    /// The `reasoning` object (`effort` and `summary` as sent).
    pub reasoning: ReasoningSettings,
    /// The `text` object: `{"format": …, "verbosity": …}` (format defaults to `{"type":"text"}`).
    pub text: Value,
    /// The `tool_choice` as sent, or `"auto"`.
    pub tool_choice: Value,
    /// The declared tools as the response object reports them.
    pub tools: Vec<Value>,
    /// Flattened function name → `(namespace, local name)` for namespaced tools.
    pub namespace_tools: NamespaceToolMap,
    /// Names of the declared custom (free-form input) tools.
    pub custom_tools: BTreeSet<String>,
}

#[cfg(test)]
mod tests {
    use crate::convert::{convert_json, ConversionOptions, ConvertedRequest, Protocol};

    #[test]
    fn converted_requests_round_trip_with_their_response_context() {
        let cases = [
            (
                Protocol::ChatCompletions,
                r#"{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "q"}], "stream": true, "stream_options": {"include_usage": true}}"#,
                "chat_completions",
            ),
            (
                Protocol::Responses,
                r#"{"model": "DeepSeek-V4.1-Flash", "input": "q", "temperature": 0.7, "text": {"verbosity": "low"}, "tools": [{"type": "web_search"}]}"#,
                "responses",
            ),
            (
                Protocol::Messages,
                r#"{"model": "DeepSeek-V4-Pro", "max_tokens": 8, "messages": [{"role": "user", "content": "q"}]}"#,
                "messages",
            ),
        ];
        for (protocol, body, tag) in cases {
            let converted = convert_json(protocol, body, &ConversionOptions::default()).unwrap();
            let json = serde_json::to_value(&converted).unwrap();
            assert_eq!(json["response_context"]["protocol"], tag);
            let back: ConvertedRequest = serde_json::from_value(json).unwrap();
            assert_eq!(back, converted);
        }
    }
}
