//! What the response side needs to know about a request, beyond how to parse the output: the
//! protocol-specific values the stream generators report or act on.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::output::responses::ReasoningSettings;

/// Flattened function name → `(namespace, local name)` for namespaced tools, sorted by name.
pub type NamespaceToolMap = BTreeMap<String, (String, String)>;

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

impl Default for ResponsesContext {
    /// The context of a request that sets nothing the response reports.
    fn default() -> Self {
        Self {
            echo: ResponsesEcho::default(),
            reasoning: ReasoningSettings::default(),
            text: serde_json::json!({"format": {"type": "text"}, "verbosity": null}),
            tool_choice: Value::String("auto".to_owned()),
            tools: Vec::new(),
            namespace_tools: NamespaceToolMap::new(),
            custom_tools: BTreeSet::new(),
        }
    }
}

/// Request values a Responses response object repeats (the request "echo").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsesEcho {
    /// `instructions` as given.
    pub instructions: Option<String>,
    /// `max_output_tokens` as given.
    pub max_output_tokens: Option<u32>,
    /// Requested temperature, or 1.0.
    pub temperature: f32,
    /// Requested top_p, or 1.0.
    pub top_p: f32,
    /// Requested top_logprobs, or 0.
    pub top_logprobs: u8,
    /// `user` as given.
    pub user: Option<String>,
}

impl Default for ResponsesEcho {
    fn default() -> Self {
        Self {
            instructions: None,
            max_output_tokens: None,
            temperature: 1.0,
            top_p: 1.0,
            top_logprobs: 0,
            user: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::convert::{convert_json, ConversionOptions, Protocol};
    use crate::converted::ConvertedRequest;

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

    #[test]
    fn responses_context_reports_the_request() {
        let body = r#"{"model": "DeepSeek-V4-Pro", "input": "q", "max_output_tokens": 64,
            "reasoning": {"effort": "low", "summary": "auto"}, "tool_choice": "none",
            "tools": [{"type": "namespace", "name": "ns", "description": "d",
                       "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}]},
                      {"type": "custom", "name": "apply_patch"}]}"#;
        let converted =
            convert_json(Protocol::Responses, body, &ConversionOptions::default()).unwrap();
        let super::ResponseContext::Responses(context) = converted.response_context else {
            panic!("not a responses context");
        };
        assert_eq!(context.echo.max_output_tokens, Some(64));
        assert_eq!(context.reasoning.summary.as_deref(), Some("auto"));
        assert_eq!(context.tool_choice, "none");
        assert_eq!(context.tools.len(), 2);
        assert_eq!(
            context.namespace_tools.get("ns__f"),
            Some(&("ns".to_owned(), "f".to_owned()))
        );
        assert!(context.custom_tools.contains("apply_patch"));
        assert_eq!(context.text["format"]["type"], "text");
    }
}
