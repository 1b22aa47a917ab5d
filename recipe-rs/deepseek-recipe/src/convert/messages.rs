//! Anthropic Messages → conversation, in the official validation order.

use super::content::{text_message, UNSUPPORTED_IMAGE_TEXT};
use super::draft::{Draft, FormatChoice};
use super::history::{check_reasoning_pass_back, settle_reasoning};
use super::images::{MAX_IMAGE_URL_BYTES, URL_TOO_LONG_ADVICE};
use super::options::{ConversionOptions, WebSearchBehavior};
use super::python_json::to_spaced_json;
use super::sampling::{check_stop, check_temperature, check_top_p, clamp_max_tokens};
use super::thinking::resolve_thinking;
use super::tools::{
    check_tool_name, declared_tools, narrow_loaded_tools, resolve_tool_choice, unknown_tool_choice,
    FunctionDecl, ToolChoiceParam,
};
use crate::conversation::{
    ImageDetail, ImageRef, ImageSource, ImageSourceKind, Message, Role, Tool, ToolCall,
};
use crate::converted::{ConvertedRequest, ModelVersion, ResponseContext};
use crate::error::ApiError;
use crate::protocol::messages::{
    ContentBlock, MessagesContent, MessagesDocumentSource, MessagesImageSource, MessagesMessage,
    MessagesRequest, MessagesTool, MessagesToolChoice, SystemBlock, SystemParam,
    ToolReferenceParam, ToolResultBlock, ToolResultContent,
};

/// The pass-back error of Messages.
const REASONING_PASS_BACK_ERROR: &str =
    "The `content[].thinking` in the thinking mode must be passed back to the API.";

/// Separator between joined text blocks.
const BLOCK_SEPARATOR: &str = "\n\n";

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

/// A converted message and whether it is an assistant turn sent without thinking.
struct Converted {
    message: Message,
    missing_reasoning: bool,
}

impl Converted {
    fn plain(message: Message) -> Self {
        Self {
            message,
            missing_reasoning: false,
        }
    }
}

/// Per-request settings for converting messages.
struct MessageConverter<'a> {
    version: ModelVersion,
    image_token: &'a str,
    web_search: WebSearchBehavior,
    /// The declared tools as `tool_addition` blocks show them.
    tool_definitions: &'a [Tool],
}

impl MessageConverter<'_> {
    fn convert(
        &self,
        index: usize,
        message: MessagesMessage,
        pending: &mut Vec<String>,
        out: &mut Vec<Converted>,
    ) -> Result<(), ApiError> {
        let (role, content) = match message {
            MessagesMessage::User(content) => (Role::User, content),
            MessagesMessage::Assistant(content) => (Role::Assistant, content),
            MessagesMessage::System(content) => (Role::System, content),
        };
        // Tool uses left unanswered by a message of another role come before its content.
        if role != Role::User && !pending.is_empty() {
            return Err(unanswered(&format!("messages.{index}: "), pending));
        }
        let blocks = match content {
            MessagesContent::Text(text) => vec![ContentBlock::Text { text }],
            // A system message may have no blocks.
            MessagesContent::Blocks(blocks) if blocks.is_empty() && role != Role::System => {
                return Err(ApiError::invalid_request(format!(
                    "messages.{index}: all messages must have non-empty content"
                )));
            }
            MessagesContent::Blocks(blocks) => blocks,
        };
        match role {
            Role::Assistant => {
                *pending = self.convert_assistant(index, blocks, out)?;
                Ok(())
            }
            Role::System => self.convert_system(index, blocks, out),
            _ => {
                let expected = std::mem::take(pending);
                self.convert_user(index, blocks, &expected, out)
            }
        }
    }

    /// A system-role message: V4.1 keeps it as a system message (its texts, documents and
    /// images joined, with the tools its `tool_addition` blocks add), V4 turns it into a user
    /// `<system-reminder>` note (images as a text note; a message without content is dropped).
    fn convert_system(
        &self,
        index: usize,
        blocks: Vec<ContentBlock>,
        out: &mut Vec<Converted>,
    ) -> Result<(), ApiError> {
        let mut builder = super::content::ContentBuilder::default();
        let mut tools = Vec::new();
        for (block_index, block) in blocks.into_iter().enumerate() {
            match block {
                ContentBlock::Text { text } => builder.push_text(&text),
                ContentBlock::Document { source } => builder.push_text(&document_note(&source)),
                ContentBlock::Image { source } => match self.version {
                    ModelVersion::DeepseekV4Pro => builder.push_text(UNSUPPORTED_IMAGE_TEXT),
                    ModelVersion::DeepseekV41Flash => {
                        let error_path = format!("messages.{index}.content[{block_index}]");
                        let source = ImageSource {
                            path: format!("messages.{index}"),
                            ..image_source(&source, &error_path)?
                        };
                        builder.push_image(source, self.image_token);
                    }
                },
                ContentBlock::ToolAddition {
                    tool: ToolReferenceParam::ToolReference { name },
                } => {
                    let Some(tool) = self.tool_definitions.iter().find(|tool| tool.name == name)
                    else {
                        return Err(ApiError::invalid_request(format!(
                            "messages.{index}.content.{block_index}: `tool_addition` references unknown tool '{name}'"
                        )));
                    };
                    tools.push(tool.clone());
                }
                other => misplaced_block(index, &other)?,
            }
        }
        let message = match self.version {
            ModelVersion::DeepseekV41Flash => {
                let mut message = builder.into_message(Role::System);
                message.tools = tools;
                message
            }
            ModelVersion::DeepseekV4Pro => {
                let text = builder.into_text();
                if text.is_empty() {
                    return Ok(());
                }
                text_message(
                    Role::User,
                    format!("<system-reminder>\n{text}\n</system-reminder>"),
                )
            }
        };
        out.push(Converted::plain(message));
        Ok(())
    }

    /// A user message: leading `tool_result` blocks answer the previous assistant message's
    /// `tool_use` ids (`expected`); the first other block (or the end) checks that every id is
    /// answered.
    fn convert_user(
        &self,
        index: usize,
        blocks: Vec<ContentBlock>,
        expected: &[String],
        out: &mut Vec<Converted>,
    ) -> Result<(), ApiError> {
        // V4.1: the tools that tool results reference are loaded by a system message after
        // the turn (every reference, in order).
        let mut loaded = Vec::new();
        let mut answered: Vec<String> = Vec::new();
        let mut answers_checked = expected.is_empty();
        let check_answers = |answered: &[String], at: &str| {
            let missing: Vec<String> = expected
                .iter()
                .filter(|id| !answered.contains(id))
                .cloned()
                .collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(unanswered(at, &missing))
            }
        };
        for (block_index, block) in blocks.into_iter().enumerate() {
            if matches!(
                block,
                ContentBlock::Text { .. }
                    | ContentBlock::Image { .. }
                    | ContentBlock::Document { .. }
            ) && !answers_checked
            {
                check_answers(&answered, &format!("messages.{index}: "))?;
                answers_checked = true;
            }
            let message = match block {
                ContentBlock::Text { text } => text_message(Role::User, text),
                ContentBlock::Image { source } => {
                    let path = format!("messages.{index}.content[{block_index}]");
                    self.image_message(
                        Role::User,
                        source,
                        path,
                        &format!("messages.{index}.content[{block_index}]"),
                    )?
                }
                ContentBlock::Document { source } => {
                    text_message(Role::User, document_note(&source))
                }
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => {
                    if answered.contains(&tool_use_id) {
                        return Err(ApiError::invalid_request(format!(
                            "messages.{index}.content.{block_index}: each tool_use must have a single result. Found multiple `tool_result` blocks with id: {tool_use_id}"
                        )));
                    }
                    answered.push(tool_use_id.clone());
                    if !expected.contains(&tool_use_id) {
                        return Err(ApiError::invalid_request(format!(
                            "unexpected `messages.{index}.content.{block_index}: tool_use_id` found in `tool_result` blocks: {tool_use_id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                        )));
                    }
                    let mut message = self.tool_result(index, block_index, content, &mut loaded)?;
                    message.tool_call_id = Some(tool_use_id);
                    message
                }
                other => {
                    misplaced_block(index, &other)?;
                    continue;
                }
            };
            out.push(Converted::plain(message));
        }
        if !answers_checked {
            // Only tool results: reported at the `tool_use` message.
            check_answers(&answered, &format!("messages.{}:", index.saturating_sub(1)))?;
        }
        if self.version == ModelVersion::DeepseekV41Flash && !loaded.is_empty() {
            let mut message = text_message(Role::System, String::new());
            message.tools = loaded;
            out.push(Converted::plain(message));
        }
        Ok(())
    }

    /// An assistant message; returns its `tool_use` ids (the next message must answer them).
    /// Only thinking and more `tool_use` blocks may follow a `tool_use` block.
    fn convert_assistant(
        &self,
        index: usize,
        blocks: Vec<ContentBlock>,
        out: &mut Vec<Converted>,
    ) -> Result<Vec<String>, ApiError> {
        let mut texts = Vec::new();
        let mut thoughts = Vec::new();
        let mut calls: Vec<ToolCall> = Vec::new();
        for (block_index, block) in blocks.into_iter().enumerate() {
            if matches!(
                block,
                ContentBlock::Text { .. }
                    | ContentBlock::Image { .. }
                    | ContentBlock::Document { .. }
            ) && !calls.is_empty()
            {
                let ids: Vec<String> = calls.iter().map(|call| call.id.clone()).collect();
                return Err(unanswered(
                    &format!("messages.{index}.{block_index}: "),
                    &ids,
                ));
            }
            match block {
                ContentBlock::Text { text } => texts.push(text),
                ContentBlock::Thinking { thinking, .. } => thoughts.push(thinking),
                ContentBlock::ToolUse { id, name, input } => {
                    if calls.iter().any(|call| call.id == id) {
                        return Err(ApiError::invalid_request(format!(
                            "messages.{index}.content.{block_index}: `tool_use` ids must be unique"
                        )));
                    }
                    let arguments = to_spaced_json(&input);
                    calls.push(ToolCall {
                        id,
                        name,
                        arguments,
                    });
                }
                ContentBlock::Image { source } => match self.version {
                    ModelVersion::DeepseekV4Pro => texts.push(UNSUPPORTED_IMAGE_TEXT.to_owned()),
                    ModelVersion::DeepseekV41Flash => {
                        let path = format!("messages.{index}.content[{block_index}]");
                        image_source(&source, &path)?;
                        return Err(ApiError::invalid_request(
                            "Image in assistant message is unsupported",
                        ));
                    }
                },
                ContentBlock::Document { source } => texts.push(document_note(&source)),
                ContentBlock::ServerToolUse { .. } | ContentBlock::WebSearchToolResult { .. } => {
                    self.server_block()?
                }
                other => misplaced_block(index, &other)?,
            }
        }
        let ids = calls.iter().map(|call| call.id.clone()).collect();
        let mut message = text_message(Role::Assistant, join_after_text(&texts));
        let missing_reasoning = thoughts.is_empty();
        message.reasoning_content = (!missing_reasoning).then(|| thoughts.join(BLOCK_SEPARATOR));
        message.tool_calls = (!calls.is_empty()).then_some(calls);
        out.push(Converted {
            message,
            missing_reasoning,
        });
        Ok(ids)
    }

    /// A `server_tool_use` / `web_search_tool_result` block in history.
    fn server_block(&self) -> Result<(), ApiError> {
        match self.web_search {
            WebSearchBehavior::Drop => Ok(()),
            WebSearchBehavior::Reject => Err(ApiError::invalid_request(
                "Unsupported content block: server tools are not supported",
            )),
        }
    }

    /// A tool result: text and tool references joined, images as placeholders.
    fn tool_result(
        &self,
        index: usize,
        block_index: usize,
        content: Option<ToolResultContent>,
        loaded: &mut Vec<Tool>,
    ) -> Result<Message, ApiError> {
        let mut builder = super::content::ContentBuilder::default();
        match content {
            None => {}
            Some(ToolResultContent::Text(text)) => builder.push_text(&text),
            Some(ToolResultContent::Blocks(blocks)) => {
                for (part_index, block) in blocks.into_iter().enumerate() {
                    match block {
                        ToolResultBlock::Text { text } => builder.push_text(&text),
                        ToolResultBlock::Document { source } => {
                            builder.push_text(&document_note(&source))
                        }
                        ToolResultBlock::ToolReference { tool_name } => {
                            let Some(tool) = self
                                .tool_definitions
                                .iter()
                                .find(|tool| tool.name == tool_name)
                            else {
                                return Err(ApiError::invalid_request(format!(
                                    "messages.{index}.content.{block_index}: tool reference '{tool_name}' not found in available tools"
                                )));
                            };
                            loaded.push(tool.clone());
                            builder.push_text(&tool_name);
                        }
                        ToolResultBlock::Image { source } => match self.version {
                            ModelVersion::DeepseekV4Pro => {
                                builder.push_text(UNSUPPORTED_IMAGE_TEXT)
                            }
                            ModelVersion::DeepseekV41Flash => {
                                let error_path = format!(
                                        "messages.{index}.content.{block_index}.tool_result.content[{part_index}]"
                                    );
                                let source = image_source(&source, &error_path)?;
                                let source = ImageSource {
                                    path: format!(
                                        "messages.{index}.content.{block_index}.tool_result"
                                    ),
                                    ..source
                                };
                                builder.push_image(source, self.image_token);
                            }
                        },
                    }
                }
            }
        }
        Ok(builder.into_message(Role::Tool))
    }

    /// One image block as its own message (V4: a text note, V4.1: a placeholder).
    fn image_message(
        &self,
        role: Role,
        source: MessagesImageSource,
        path: String,
        error_path: &str,
    ) -> Result<Message, ApiError> {
        match self.version {
            ModelVersion::DeepseekV4Pro => {
                Ok(text_message(role, UNSUPPORTED_IMAGE_TEXT.to_owned()))
            }
            ModelVersion::DeepseekV41Flash => {
                let source = ImageSource {
                    path,
                    ..image_source(&source, error_path)?
                };
                let mut message = text_message(role, self.image_token.to_owned());
                message.images = vec![ImageRef {
                    span: Some((0, self.image_token.len())),
                    source,
                }];
                Ok(message)
            }
        }
    }
}

/// Texts joined by blank lines, a separator only once some text is there (leading empty texts
/// add nothing; later ones add a separator).
fn join_after_text(texts: &[String]) -> String {
    let mut joined = String::new();
    for text in texts {
        if !joined.is_empty() {
            joined.push_str(BLOCK_SEPARATOR);
        }
        joined.push_str(text);
    }
    joined
}

/// The note shown for a document block.
fn document_note(source: &MessagesDocumentSource) -> String {
    let media_type = source.media_type.as_deref().unwrap_or("unknown");
    format!("[Unsupported document type: {media_type}]")
}

/// Checks an image block's source and returns it as a conversation source (`path` is where
/// errors point; callers may set another `path` on the result).
fn image_source(source: &MessagesImageSource, path: &str) -> Result<ImageSource, ApiError> {
    let error = |detail: String| ApiError::invalid_request(format!("{path}: {detail}"));
    let (kind, location) = match source {
        MessagesImageSource::Base64 { media_type, data } => {
            if !is_padded_base64(data) {
                return Err(error("base64 decode error".to_owned()));
            }
            let data = canonical_padding(data);
            (
                ImageSourceKind::DataUrl,
                format!("data:{};base64,{data}", media_type.mime()),
            )
        }
        MessagesImageSource::Url { url } => {
            let is_http = url
                .get(..4)
                .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http"));
            if !is_http {
                return Err(error(format!("invalid url: {url:?}")));
            }
            if url.len() > MAX_IMAGE_URL_BYTES {
                return Err(error(format!(
                    "external link length {} too long, max link length {MAX_IMAGE_URL_BYTES}. {URL_TOO_LONG_ADVICE}",
                    url.len()
                )));
            }
            (ImageSourceKind::Url, url.clone())
        }
        MessagesImageSource::File { .. } => {
            return Err(error(
                "file_id is not supported. Pass the image as a base64 data url instead.".to_owned(),
            ));
        }
    };
    Ok(ImageSource {
        kind,
        detail: ImageDetail::High,
        path: path.to_owned(),
        location,
    })
}

/// Padded base64 data with its padding rewritten to the canonical amount (unpadded data is
/// kept as it is).
fn canonical_padding(data: &str) -> String {
    if !data.ends_with('=') {
        return data.to_owned();
    }
    let body = data.trim_end_matches('=');
    let padding = (4 - body.len() % 4) % 4;
    format!("{body}{}", "=".repeat(padding))
}

/// Messages base64: padded data may carry any amount of `=` (normalised); unpadded data must
/// be a multiple of 4; only the standard alphabet, no whitespace.
fn is_padded_base64(data: &str) -> bool {
    let body = data.trim_end_matches('=');
    let alphabet_only = body
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || byte == b'+' || byte == b'/');
    if !alphabet_only {
        return false;
    }
    if body.len() == data.len() {
        body.len() % 4 == 0
    } else {
        body.len() % 4 != 1
    }
}

/// The error for `tool_use` ids left without results (`at` is the position prefix).
fn unanswered(at: &str, ids: &[String]) -> ApiError {
    let mut ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    ids.sort_unstable();
    ApiError::invalid_request(format!(
        "{at}`tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        ids.join(", ")
    ))
}

/// The error for a block in a role that may not hold it (`Ok` for blocks every role holds).
fn misplaced_block(index: usize, block: &ContentBlock) -> Result<(), ApiError> {
    let message = match block {
        ContentBlock::Thinking { .. } => {
            format!("messages.{index}.content: thinking blocks may only be in `assistant` messages")
        }
        ContentBlock::ToolAddition { .. } => {
            format!("messages.{index}: `tool_addition` blocks can only be in `system` messages")
        }
        ContentBlock::ToolUse { .. } | ContentBlock::ServerToolUse { .. } => {
            format!("messages.{index}: `tool_use` blocks can only be in `assistant` messages")
        }
        ContentBlock::WebSearchToolResult { .. } => format!(
            "messages.{index}: `web_search_tool_result` blocks can only be in `assistant` messages"
        ),
        ContentBlock::ToolResult { .. } => {
            format!("messages.{index}: `tool_result` blocks can only be in `user` messages")
        }
        ContentBlock::Text { .. } | ContentBlock::Image { .. } | ContentBlock::Document { .. } => {
            return Ok(())
        }
    };
    Err(ApiError::invalid_request(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_base64_is_normalised() {
        assert!(is_padded_base64("aGk="));
        assert!(is_padded_base64("aGk=="));
        assert!(is_padded_base64("aGVsbG8h"));
        assert!(!is_padded_base64("aGk"));
        assert!(!is_padded_base64("a-k="));
        assert_eq!(canonical_padding("aGk=="), "aGk=");
        assert_eq!(canonical_padding("aGVsbA="), "aGVsbA==");
        assert_eq!(canonical_padding("aGVsbG8h"), "aGVsbG8h");
    }

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
