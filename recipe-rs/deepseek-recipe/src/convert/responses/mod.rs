//! OpenAI Responses → conversation, in the official validation order, plus the request echo
//! and the namespace map the response side needs.
//!
//! [`ResponsesRequest::convert`] reads top-down in the reference's validation order; the steps
//! it calls live in their own files: the declared tools (`tools`), the input items (`items`)
//! and the message list they build (`transcript`), and what the response reports (`context`).

mod context;
mod items;
mod tools;
mod transcript;

use super::draft::{json_schema_format, Draft, FormatChoice};
use super::history::{check_reasoning_pass_back, mentions_json, settle_reasoning};
use super::options::{ConversionOptions, WebSearchBehavior};
use super::sampling::{check_max_tokens, check_temperature, check_top_logprobs, check_top_p};
use super::thinking::resolve_thinking;
use super::tools::{
    check_strict_mix, declared_tools, narrow_loaded_tools, resolve_tool_choice, ToolChoiceParam,
};
use crate::converted::{ConvertedRequest, ResponseContext};
use crate::error::ApiError;
use crate::protocol::responses::{
    InputItem, ItemContent, ItemRole, ResponsesInput, ResponsesInputMessage, ResponsesRequest,
    ResponsesTextFormat, ResponsesToolChoice,
};
use items::ItemConverter;
use tools::{namespace_separator, searched_declarations, tool_declarations};

/// The pass-back error of Responses.
const REASONING_PASS_BACK_ERROR: &str =
    "The `reasoning_text` in the thinking mode must be passed back to the API.";

impl ResponsesRequest {
    /// Converts the request with `options` (the official 400 body on invalid requests).
    pub fn convert(self, options: &ConversionOptions) -> Result<ConvertedRequest, ApiError> {
        // The checks run in the reference's order (found by the differential harness).
        let model_version = options.model_version(&self.model)?;
        let response_context = self.response_context(options)?;
        let namespace_names = self.namespace_functions(options)?;
        let mut taken_names = Vec::new();
        let declarations = tool_declarations(
            self.tools.unwrap_or_default(),
            model_version,
            options.responses_web_search,
            "",
            &mut taken_names,
        )?;
        let items = match self.input {
            // Empty instructions count as none.
            None if self.instructions.as_deref().is_none_or(str::is_empty) => {
                return Err(ApiError::invalid_request(
                    "Either input or instructions must be provided",
                ));
            }
            None => Vec::new(),
            Some(ResponsesInput::Items(items)) if items.is_empty() => {
                return Err(ApiError::invalid_request(
                    "Input items array must not be empty",
                ));
            }
            Some(ResponsesInput::Items(items)) => items,
            Some(ResponsesInput::Text(text)) => vec![InputItem::Message(ResponsesInputMessage {
                role: ItemRole::User,
                content: ItemContent::Text(text),
            })],
        };
        let (thinking_mode, reasoning_effort) = resolve_thinking(
            None,
            self.reasoning.and_then(|reasoning| reasoning.effort),
            options.default_thinking_mode,
        );

        taken_names.extend(
            declarations
                .iter()
                .map(|declaration| declaration.name.clone()),
        );
        let searched = searched_declarations(
            &items,
            model_version,
            options.responses_web_search,
            &mut taken_names.clone(),
        )?;
        let converter = ItemConverter {
            version: model_version,
            image_token: options.image_token(),
            separator: namespace_separator(model_version),
            declared_names: taken_names,
            namespace_names,
        };
        let (mut messages, missing_reasoning, loaded_declarations) =
            converter.convert_items(self.instructions, items, searched)?;
        let loads_tools = !loaded_declarations.is_empty();
        check_reasoning_pass_back(
            &messages,
            &missing_reasoning,
            !declarations.is_empty() || loads_tools,
            options.reasoning_content_behavior,
            thinking_mode,
            REASONING_PASS_BACK_ERROR,
        )?;
        let choice = match self.tool_choice {
            None => None,
            Some(ResponsesToolChoice::None) => Some(ToolChoiceParam::None),
            Some(ResponsesToolChoice::Auto) => Some(ToolChoiceParam::Auto),
            Some(ResponsesToolChoice::Required) => Some(ToolChoiceParam::Required),
            Some(ResponsesToolChoice::Function(name) | ResponsesToolChoice::Custom(name)) => {
                Some(ToolChoiceParam::Named(name))
            }
            Some(ResponsesToolChoice::WebSearch) => match options.responses_web_search {
                WebSearchBehavior::Drop => None,
                WebSearchBehavior::Reject => {
                    return Err(ApiError::invalid_request("Server tools are not supported"));
                }
            },
        };
        let choice_is_none = choice == Some(ToolChoiceParam::None);
        // Tools loaded by tool searches are checked with the declared ones.
        let mut declarations = declarations;
        let loaded_count = loaded_declarations.len();
        declarations.extend(loaded_declarations);
        let declared = declared_tools(declarations, false, choice_is_none)?;
        // The loading messages show the checked tools (strict ones normalised).
        let mut checked = declared[declared.len() - loaded_count..].iter();
        for message in &mut messages {
            for tool in &mut message.tools {
                if let Some(checked) = checked.next() {
                    *tool = checked.clone();
                }
            }
        }
        let mut missing_reasoning = missing_reasoning;
        narrow_loaded_tools(choice.as_ref(), &mut messages, &mut missing_reasoning);
        let tools = resolve_tool_choice(choice, declared, thinking_mode)?;

        let format = self.text.map(|text| text.format);
        let wants_json_object = matches!(format, Some(ResponsesTextFormat::JsonObject));
        let format = match format {
            None | Some(ResponsesTextFormat::Text) => FormatChoice::Text,
            Some(ResponsesTextFormat::JsonObject) => FormatChoice::JsonObject,
            Some(ResponsesTextFormat::JsonSchema { schema, strict, .. }) => {
                json_schema_format(schema, strict == Some(true))?
            }
        };
        if wants_json_object
            && !mentions_json(messages.iter().map(|message| message.content.as_str()))
        {
            return Err(ApiError::invalid_request(
                "Response input messages must contain the word 'json' in some form to use 'text.format' of type 'json_object'.",
            ));
        }
        check_strict_mix(tools.tools.iter().map(|tool| tool.strict))?;
        if !matches!(format, FormatChoice::Text)
            && tools.tools.iter().any(|tool| tool.strict == Some(true))
        {
            return Err(ApiError::invalid_request(
                "response_format should not be used with tools",
            ));
        }
        check_temperature(self.temperature)?;
        check_top_p(self.top_p)?;
        check_top_logprobs(self.top_logprobs)?;
        let max_tokens = check_max_tokens(
            self.max_output_tokens,
            options.max_tokens_upper_bound(thinking_mode),
        )?;

        settle_reasoning(&mut messages, thinking_mode);

        Ok(Draft {
            request_model: self.model,
            model_version,
            stream: self.stream.unwrap_or(false),
            thinking_mode,
            reasoning_effort,
            tools,
            format,
            messages,
            max_tokens,
            temperature: self.temperature,
            top_p: self.top_p,
            logprobs: self.top_logprobs.is_some(),
            top_logprobs: self.top_logprobs,
            seed: None,
            stop_sequences: Vec::new(),
            response_context: ResponseContext::Responses(Box::new(response_context)),
        }
        .finish(options.special_token_spellings()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(body: &str) -> Result<ConvertedRequest, ApiError> {
        let options = ConversionOptions::default();
        ResponsesRequest::from_json(body)
            .expect("valid body")
            .convert(&options)
    }

    #[test]
    fn calls_and_outputs_are_written_in_call_id_order() {
        let converted = convert(
            r#"{"model": "DeepSeek-V4-Pro", "reasoning": {"effort": "none"}, "input": [
                {"role": "user", "content": "q"},
                {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"},
                {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "b", "output": "B"},
                {"type": "function_call_output", "call_id": "a", "output": "A"}
            ]}"#,
        )
        .unwrap();
        let messages = &converted.conversation.messages;
        let calls = messages[1].tool_calls.as_ref().unwrap();
        assert_eq!(
            calls
                .iter()
                .map(|call| call.id.as_str())
                .collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(messages[2].content, "A");
        assert_eq!(messages[3].content, "B");
    }

    #[test]
    fn a_missing_output_is_reported() {
        let err = convert(
            r#"{"model": "DeepSeek-V4-Pro", "input": [
                {"role": "user", "content": "q"},
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                {"role": "user", "content": "again"}
            ]}"#,
        )
        .unwrap_err();
        assert_eq!(err.error.message, "No tool output found for tool call c1.");
    }

    #[test]
    fn namespace_names_depend_on_the_model() {
        let body = |model: &str| {
            format!(
                r#"{{"model": "{model}", "input": "q", "tools": [{{"type": "namespace", "name": "ns", "tools": [{{"type": "function", "name": "g"}}]}}]}}"#
            )
        };
        let options = ConversionOptions::default();
        let v4 = ResponsesRequest::from_json(&body("DeepSeek-V4-Pro")).unwrap();
        let v41 = ResponsesRequest::from_json(&body("DeepSeek-V4.1-Flash")).unwrap();
        assert!(v4
            .namespace_tool_map(&options)
            .unwrap()
            .contains_key("ns__g"));
        assert!(v41
            .namespace_tool_map(&options)
            .unwrap()
            .contains_key("ns::g"));
    }
}
