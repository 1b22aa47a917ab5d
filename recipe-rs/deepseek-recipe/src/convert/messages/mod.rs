//! Anthropic Messages → conversation, in the official validation order.
//!
//! [`MessagesRequest::convert`] reads top-down in the reference's validation order; each
//! message is converted block by block in `turns`, image sources are checked in
//! `image_source`.

mod image_source;
mod turns;

use super::content::text_message;
use super::draft::{Draft, FormatChoice};
use super::history::{check_reasoning_pass_back, settle_reasoning};
use super::options::{ConversionOptions, WebSearchBehavior};
use super::sampling::{check_stop, check_temperature, check_top_p, clamp_max_tokens};
use super::thinking::resolve_thinking;
use super::tools::{
    check_tool_name, declared_tools, narrow_loaded_tools, resolve_tool_choice, unknown_tool_choice,
    FunctionDecl, ToolChoiceParam,
};
use crate::conversation::{Message, Role, Tool};
use crate::converted::{ConvertedRequest, ModelVersion, ResponseContext};
use crate::error::ApiError;
use crate::protocol::messages::{
    MessagesRequest, MessagesTool, MessagesToolChoice, SystemBlock, SystemParam,
};
use turns::{unanswered, Converted, MessageConverter, BLOCK_SEPARATOR};

/// The pass-back error of Messages.
const REASONING_PASS_BACK_ERROR: &str =
    "The `content[].thinking` in the thinking mode must be passed back to the API.";

impl MessagesRequest {
    /// Converts the request with `options` (the official 400 body on invalid requests).
    pub fn convert(self, options: &ConversionOptions) -> Result<ConvertedRequest, ApiError> {
        // The checks run in the reference's order (found by the differential harness).
        let model_version = options.model_version(&self.model)?;
        // The tools in order: a server tool is refused, unless it is a web search the options
        // drop; a custom tool's name must be valid.
        let drops_web_search = options.messages_web_search == WebSearchBehavior::Drop;
        let declares_tools = self.tools.as_ref().is_some_and(|tools| !tools.is_empty());
        let mut tools = Vec::new();
        let mut dropped_names = Vec::new();
        for (index, tool) in self.tools.unwrap_or_default().into_iter().enumerate() {
            match tool {
                MessagesTool::Server(server) if drops_web_search && server.is_web_search() => {
                    dropped_names.push(server.name);
                }
                MessagesTool::Server(_) => {
                    return Err(ApiError::invalid_request(format!(
                        "tools[{index}]: server tools are not supported"
                    )));
                }
                MessagesTool::Custom(custom) => {
                    check_tool_name(&custom.name, &format!("tools[{index}].name"))?;
                    tools.push(custom);
                }
            }
        }
        let declarations: Vec<FunctionDecl> = tools
            .iter()
            .map(|tool| FunctionDecl {
                name: tool.name.clone(),
                description: tool.description.clone(),
                parameters: tool.input_schema.clone(),
                strict: None,
                defer_loading: tool.defer_loading == Some(true)
                    && model_version == ModelVersion::DeepseekV41Flash,
                name_path: None,
            })
            .collect();
        if model_version == ModelVersion::DeepseekV41Flash
            && !tools.is_empty()
            && tools.iter().all(|tool| tool.defer_loading == Some(true))
        {
            return Err(ApiError::invalid_request(
                "tools: at least one tool must have defer_loading=false. All tools cannot be deferred.",
            ));
        }
        if self.messages.is_empty() {
            return Err(ApiError::invalid_request(
                "messages: at least one message is required",
            ));
        }
        let (thinking_mode, reasoning_effort) = resolve_thinking(
            self.thinking.map(|thinking| thinking.kind),
            self.output_config.and_then(|config| config.effort),
            options.default_thinking_mode,
        );
        let tool_definitions: Vec<Tool> = tools
            .iter()
            .map(|tool| Tool {
                name: tool.name.clone(),
                description: tool.description.clone(),
                parameters: tool.input_schema.clone().unwrap_or_default(),
                strict: None,
                defer_loading: tool.defer_loading == Some(true)
                    && model_version == ModelVersion::DeepseekV41Flash,
            })
            .collect();
        let converter = MessageConverter {
            version: model_version,
            image_token: options.image_token(),
            web_search: options.messages_web_search,
            tool_definitions: &tool_definitions,
        };
        let mut messages = Vec::new();
        if let Some(system) = self.system {
            let text = match system {
                SystemParam::Text(text) => text,
                SystemParam::Blocks(blocks) => blocks
                    .into_iter()
                    .map(|SystemBlock::Text { text }| text)
                    .collect::<Vec<_>>()
                    .join(BLOCK_SEPARATOR),
            };
            messages.push(Converted::plain(text_message(Role::System, text)));
        }
        // Messages are checked and converted block by block, in order; `pending` holds the
        // `tool_use` ids of the previous assistant message, which the next user message must
        // answer with leading `tool_result` blocks.
        let count = self.messages.len();
        let mut pending: Vec<String> = Vec::new();
        for (index, message) in self.messages.into_iter().enumerate() {
            converter.convert(index, message, &mut pending, &mut messages)?;
        }
        if !pending.is_empty() {
            return Err(unanswered(&format!("messages.{}:", count - 1), &pending));
        }
        let (mut messages, missing_reasoning): (Vec<Message>, Vec<bool>) = messages
            .into_iter()
            .map(|converted| (converted.message, converted.missing_reasoning))
            .unzip();
        check_reasoning_pass_back(
            &messages,
            &missing_reasoning,
            // Dropped web search tools count as declared.
            declares_tools,
            options.reasoning_content_behavior,
            thinking_mode,
            REASONING_PASS_BACK_ERROR,
        )?;

        let choice = self.tool_choice.and_then(|choice| match choice {
            MessagesToolChoice::Auto { .. } | MessagesToolChoice::Any { .. } => {
                Some(ToolChoiceParam::Auto)
            }
            // Choosing a dropped web search tool is dropped with it.
            MessagesToolChoice::Tool { name, .. }
                if dropped_names
                    .iter()
                    .flatten()
                    .any(|dropped| *dropped == name) =>
            {
                None
            }
            MessagesToolChoice::Tool { name, .. } => Some(ToolChoiceParam::Named(name)),
            MessagesToolChoice::None {} => Some(ToolChoiceParam::None),
        });
        let choice_is_none = choice == Some(ToolChoiceParam::None);
        let declared = declared_tools(declarations, true, choice_is_none)?;
        let mut missing_reasoning = missing_reasoning;
        narrow_loaded_tools(choice.as_ref(), &mut messages, &mut missing_reasoning);
        // Tools were declared but all dropped: a named choice names none of them.
        if let (true, true, Some(ToolChoiceParam::Named(name))) =
            (declares_tools, declared.is_empty(), &choice)
        {
            return Err(unknown_tool_choice(name));
        }
        let tools = resolve_tool_choice(choice, declared, thinking_mode)?;
        let stop_sequences = self.stop_sequences.unwrap_or_default();
        check_stop(&stop_sequences, false)?;
        check_temperature(self.temperature)?;
        check_top_p(self.top_p)?;
        let max_tokens = clamp_max_tokens(
            self.max_tokens,
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
            format: FormatChoice::Text,
            messages,
            max_tokens,
            temperature: self.temperature,
            top_p: self.top_p,
            logprobs: false,
            top_logprobs: None,
            seed: None,
            stop_sequences,
            response_context: ResponseContext::Messages,
        }
        .finish(options.special_token_spellings()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn tool_results_must_follow_their_uses() {
        let request = MessagesRequest::from_json(
            r#"{"model": "DeepSeek-V4-Pro", "max_tokens": 10, "messages": [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
                {"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "tool_result", "tool_use_id": "t1"}]}
            ]}"#,
        )
        .unwrap();
        let err = request.convert(&ConversionOptions::default()).unwrap_err();
        assert!(err
            .error
            .message
            .starts_with("messages.2: `tool_use` ids were found"));
    }
}
