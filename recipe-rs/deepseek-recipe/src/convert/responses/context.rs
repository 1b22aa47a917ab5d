//! What the response side needs from a Responses request: the echo, the reported `reasoning`,
//! `text`, `tool_choice` and `tools`, the namespace map and the custom tool names.

use serde_json::{json, Value};

use crate::convert::options::ConversionOptions;
use crate::convert::report::report_tools;
use crate::converted::{NamespaceToolMap, ResponsesContext, ResponsesEcho};
use crate::error::ApiError;
use crate::protocol::output::responses::ReasoningSettings;
use crate::protocol::responses::{ResponsesRequest, ResponsesTool};

impl ResponsesRequest {
    /// The request values a response object repeats (read before [`Self::convert`]).
    pub fn echo(&self) -> ResponsesEcho {
        ResponsesEcho {
            instructions: self.instructions.clone(),
            max_output_tokens: self.max_output_tokens,
            temperature: self.temperature.unwrap_or(1.0),
            top_p: self.top_p.unwrap_or(1.0),
            top_logprobs: self.top_logprobs.unwrap_or(0),
            user: self.user.clone(),
        }
    }

    /// How flattened namespaced function names map back to `(namespace, name)` (the separator
    /// depends on the model version, so the model must be known).
    pub fn namespace_tool_map(
        &self,
        options: &ConversionOptions,
    ) -> Result<NamespaceToolMap, ApiError> {
        Ok(self.namespace_functions(options)?.into_iter().collect())
    }

    /// What the response side needs: the echo, the reported `reasoning`, `text`, `tool_choice`
    /// and `tools`, the namespace map and the custom tool names.
    pub(super) fn response_context(
        &self,
        options: &ConversionOptions,
    ) -> Result<ResponsesContext, ApiError> {
        let reported = &self.reported;
        let text_of = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
        let reasoning = reported.reasoning.as_ref();
        let text = reported.text.as_ref();
        let format = match text.and_then(|text| text.get("format")) {
            None | Some(Value::Null) => json!({"type": "text"}),
            Some(format) => format.clone(),
        };
        let verbosity = text
            .and_then(|text| text.get("verbosity"))
            .cloned()
            .unwrap_or(Value::Null);
        let raw_tools = match &reported.tools {
            Some(Value::Array(tools)) => tools.as_slice(),
            _ => &[],
        };
        let custom_tools = self
            .tools
            .iter()
            .flatten()
            .filter_map(|tool| match tool {
                ResponsesTool::Custom(custom) => Some(custom.name.clone()),
                _ => None,
            })
            .collect();
        Ok(ResponsesContext {
            echo: self.echo(),
            reasoning: ReasoningSettings {
                effort: text_of(reasoning.and_then(|reasoning| reasoning.get("effort"))),
                summary: text_of(reasoning.and_then(|reasoning| reasoning.get("summary"))),
            },
            text: json!({"format": format, "verbosity": verbosity}),
            tool_choice: reported
                .tool_choice
                .clone()
                .unwrap_or_else(|| Value::String("auto".to_owned())),
            tools: report_tools(raw_tools),
            namespace_tools: self.namespace_tool_map(options)?,
            custom_tools,
        })
    }
}
