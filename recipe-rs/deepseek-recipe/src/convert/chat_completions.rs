//! Chat Completions → conversation, in the official validation order.

use super::content::{text_message, ContentBuilder, UNSUPPORTED_IMAGE_TEXT};
use super::draft::{json_schema_format, Draft, FormatChoice};
use super::history::{check_reasoning_pass_back, mentions_json, settle_reasoning};
use super::images::{
    data_url_rest, image_detail, image_url_source, is_valid_base64, MAX_IMAGE_URL_BYTES,
    URL_TOO_LONG_ADVICE,
};
use super::options::ConversionOptions;
use super::sampling::{
    check_max_tokens, check_penalty, check_stop, check_temperature, check_top_logprobs, check_top_p,
};
use super::thinking::resolve_thinking;
use super::tools::{
    check_strict_mix, check_tool_names, declared_tools, resolve_tool_choice, FunctionDecl,
    ToolChoiceParam,
};
use crate::conversation::{ImageDetail, Message, Role, ToolCall};
use crate::converted::{ConvertedRequest, ModelVersion, ResponseContext};
use crate::error::ApiError;
use crate::protocol::chat_completions::{
    ChatCompletionRequest, ChatContent, ChatContentPart, ChatMessage, ChatResponseFormat,
    ChatToolChoice, StopParam,
};

/// The pass-back error of Chat Completions.
const REASONING_PASS_BACK_ERROR: &str =
    "The `reasoning_content` in the thinking mode must be passed back to the API.";

impl ChatCompletionRequest {
    /// Converts the request with `options` (the official 400 body on invalid requests).
    pub fn convert(self, options: &ConversionOptions) -> Result<ConvertedRequest, ApiError> {
        // The checks run in the reference's order (found by the differential harness).
        let model_version = options.model_version(&self.model)?;
        let declarations: Vec<FunctionDecl> = self
            .tools
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(index, tool)| FunctionDecl {
                name: tool.function.name,
                description: tool.function.description,
                parameters: tool.function.parameters,
                strict: tool.function.strict,
                defer_loading: false,
                name_path: Some(format!("tools[{index}].function.name")),
            })
            .collect();
        check_tool_names(&declarations)?;
        if self.messages.is_empty() {
            return Err(ApiError::invalid_request("Empty input messages"));
        }
        let (mut messages, missing_reasoning) =
            convert_messages(self.messages, model_version, options.image_token())?;
        let (thinking_mode, reasoning_effort) = resolve_thinking(
            self.thinking.map(|thinking| thinking.kind),
            self.reasoning_effort,
            options.default_thinking_mode,
        );
        check_reasoning_pass_back(
            &messages,
            &missing_reasoning,
            !declarations.is_empty(),
            options.reasoning_content_behavior,
            thinking_mode,
            REASONING_PASS_BACK_ERROR,
        )?;
        if has_misplaced_prefix(&messages) {
            return Err(ApiError::invalid_request(
                "Invalid completion message: prefix set true with message which is not final message or message role is not assistant",
            ));
        }
        let choice = self.tool_choice.map(|choice| match choice {
            ChatToolChoice::None => ToolChoiceParam::None,
            ChatToolChoice::Auto => ToolChoiceParam::Auto,
            ChatToolChoice::Required => ToolChoiceParam::Required,
            ChatToolChoice::Function(name) => ToolChoiceParam::Named(name),
        });
        let choice_is_none = choice == Some(ToolChoiceParam::None);
        let wants_json_object =
            matches!(self.response_format, Some(ChatResponseFormat::JsonObject));
        if wants_json_object
            && !mentions_json(messages.iter().map(|message| message.content.as_str()))
        {
            return Err(ApiError::invalid_request(
                "Prompt must contain the word 'json' in some form to use 'response_format' of type 'json_object'.",
            ));
        }
        let declared = declared_tools(declarations, false, choice_is_none)?;
        // Declared tools or tool calls anywhere in the history rule out a prefix.
        let uses_functions = !declared.is_empty()
            || messages.iter().any(|message| {
                message
                    .tool_calls
                    .as_ref()
                    .is_some_and(|calls| !calls.is_empty())
            });
        let tools = resolve_tool_choice(choice, declared, thinking_mode)?;
        if messages.last().is_some_and(|message| message.prefix) {
            if wants_json_object {
                return Err(ApiError::invalid_request(
                    "response_format json_object should not be used with prefix",
                ));
            }
            if uses_functions {
                return Err(ApiError::invalid_request(
                    "Function call should not be used with prefix",
                ));
            }
        }
        let stop_sequences = match self.stop {
            None => Vec::new(),
            Some(StopParam::One(stop)) => {
                check_stop(std::slice::from_ref(&stop), true)?;
                vec![stop]
            }
            Some(StopParam::Many(stops)) => {
                check_stop(&stops, false)?;
                stops
            }
        };
        let stream = self.stream.unwrap_or(false);
        let include_usage = self
            .stream_options
            .is_some_and(|stream_options| stream_options.include_usage == Some(true));
        if self.stream_options.is_some() && !stream {
            return Err(ApiError::invalid_request(
                "stream_options should be set along with stream = true",
            ));
        }
        let has_response_format = self.response_format.is_some();
        let format = match self.response_format {
            None | Some(ChatResponseFormat::Text) => FormatChoice::Text,
            Some(ChatResponseFormat::JsonObject) => FormatChoice::JsonObject,
            Some(ChatResponseFormat::JsonSchema { json_schema }) => {
                json_schema_format(json_schema.schema, json_schema.strict == Some(true))?
            }
            Some(ChatResponseFormat::Regex { regex }) => FormatChoice::Regex(regex),
        };
        check_strict_mix(tools.tools.iter().map(|tool| tool.strict))?;
        if has_response_format && tools.tools.iter().any(|tool| tool.strict == Some(true)) {
            return Err(ApiError::invalid_request(
                "response_format should not be used with tools",
            ));
        }
        if self.n.is_some_and(|n| n != 1) {
            return Err(ApiError::invalid_request(
                "Invalid n value (currently only n = 1 is supported)",
            ));
        }
        check_penalty("presence_penalty", self.presence_penalty)?;
        check_penalty("frequency_penalty", self.frequency_penalty)?;
        check_temperature(self.temperature)?;
        check_top_p(self.top_p)?;
        let logprobs = self.logprobs.unwrap_or(false);
        if self.top_logprobs.is_some() && !logprobs {
            return Err(ApiError::invalid_request(
                "Invalid top_logprobs and logprobs value, logprobs must be set to true if top_logprobs is used.",
            ));
        }
        check_top_logprobs(self.top_logprobs)?;
        let max_tokens = check_max_tokens(
            self.max_tokens,
            options.max_tokens_upper_bound(thinking_mode),
        )?;
        if self.seed.is_some_and(|seed| seed >= 1 << 63) {
            return Err(ApiError::invalid_request(
                "Invalid seed value, the valid range of seed is [0, 2^63)",
            ));
        }

        settle_reasoning(&mut messages, thinking_mode);

        Ok(Draft {
            request_model: self.model,
            model_version,
            stream,
            thinking_mode,
            reasoning_effort,
            tools,
            format,
            messages,
            max_tokens,
            temperature: self.temperature,
            top_p: self.top_p,
            logprobs,
            top_logprobs: self.top_logprobs,
            seed: self.seed,
            stop_sequences,
            response_context: ResponseContext::ChatCompletions { include_usage },
        }
        .finish(options.special_token_spellings()))
    }
}

/// A file part's data URL, or why the part is refused.
fn file_part<'a>(
    file_id: Option<&str>,
    file_data: Option<&'a str>,
    has_filename: bool,
) -> Result<&'a str, &'static str> {
    match (file_id, file_data) {
        (Some(_), Some(_)) => Err("file cannot have both file_id and file_data"),
        (Some(_), None) if has_filename => Err("file cannot have filename when file_id is present"),
        (Some(_), None) => {
            Err("file_id is not supported. Pass the image as a base64 data url instead.")
        }
        (None, None) => Err("file must have a file_id or file_data"),
        (None, Some(data)) => check_file_data(data).map(|()| data),
    }
}

/// A file part's `file_data`: a base64 data URL of a supported image type.
fn check_file_data(data: &str) -> Result<(), &'static str> {
    const NOT_VALID: &str = "file_data is not a valid base64 data url";
    let Some(rest) = data_url_rest(data) else {
        return Err(NOT_VALID);
    };
    let media_end = rest.find([';', ',']).unwrap_or(rest.len());
    let media_type = rest[..media_end].trim().to_ascii_lowercase();
    if ![
        "image/webp",
        "image/png",
        "image/jpeg",
        "image/jpg",
        "image/gif",
    ]
    .contains(&media_type.as_str())
    {
        return Err("You have uploaded an unsupported file. Please make sure your file is valid and has one of the following formats: webp, png, jpeg, and gif.");
    }
    let Some(comma) = rest.find(',') else {
        return Err(NOT_VALID);
    };
    // Only base64 data is checked here; the data URL is then read like an image URL.
    let header = &rest[..comma];
    if header.to_ascii_lowercase().ends_with(";base64") && !is_valid_base64(&rest[comma + 1..]) {
        return Err(NOT_VALID);
    }
    Ok(())
}

/// Builds one message's text (and images, for V4.1) from its content.
fn build_content(
    content: ChatContent,
    index: usize,
    version: ModelVersion,
    image_token: &str,
) -> Result<ContentBuilder, ApiError> {
    let mut builder = ContentBuilder::default();
    let parts = match content {
        ChatContent::Text(text) => {
            builder.push_text(text);
            return Ok(builder);
        }
        ChatContent::Parts(parts) => parts,
    };
    let path = format!(".messages[{index}]");
    // V4.1 checks every file part first (a file is an image given as a base64 data URL), then
    // builds the content in order.
    let mut files = Vec::new();
    if version == ModelVersion::DeepseekV41Flash {
        for part in &parts {
            if let ChatContentPart::File {
                file_id,
                file_data,
                filename,
            } = part
            {
                let data = file_part(file_id.as_deref(), file_data.as_deref(), filename.is_some())
                    .map_err(|detail| ApiError::invalid_request(format!("{path}: {detail}")))?;
                files.push(data.to_owned());
            }
        }
    }
    let mut files = files.into_iter();
    for (part_index, part) in parts.into_iter().enumerate() {
        match (part, version) {
            (ChatContentPart::Text { text }, _) => builder.push_text(text),
            (
                ChatContentPart::ImageUrl { .. } | ChatContentPart::File { .. },
                ModelVersion::DeepseekV4Pro,
            ) => builder.push_text(UNSUPPORTED_IMAGE_TEXT),
            (ChatContentPart::File { .. }, ModelVersion::DeepseekV41Flash) => {
                // The file's data URL is then read like an image URL.
                let location = files.next().unwrap_or_default();
                let source = image_url_source(&location, ImageDetail::High, &path, |len| {
                    format!(
                        "{path}.image_url.url[{part_index}]: image_url.url external link length {len} too long, max link length {MAX_IMAGE_URL_BYTES}. {URL_TOO_LONG_ADVICE}"
                    )
                })?;
                builder.push_image(source, image_token);
            }
            (ChatContentPart::ImageUrl { image_url }, ModelVersion::DeepseekV41Flash) => {
                let source = image_url_source(
                    &image_url.url,
                    image_detail(image_url.detail),
                    &path,
                    |len| {
                        format!(
                        "{path}.image_url.url[{part_index}]: image_url.url external link length {len} too long, max link length {MAX_IMAGE_URL_BYTES}. {URL_TOO_LONG_ADVICE}"
                    )
                    },
                )?;
                builder.push_image(source, image_token);
            }
        }
    }
    Ok(builder)
}

/// Assistant content may hold no images: V4.1 rejects file parts first (as for every role),
/// then any image part.
fn check_assistant_parts(
    content: &ChatContent,
    index: usize,
    version: ModelVersion,
) -> Result<(), ApiError> {
    let ChatContent::Parts(parts) = content else {
        return Ok(());
    };
    if version == ModelVersion::DeepseekV41Flash {
        for part in parts {
            if let ChatContentPart::File {
                file_id,
                file_data,
                filename,
            } = part
            {
                file_part(file_id.as_deref(), file_data.as_deref(), filename.is_some()).map_err(
                    |detail| ApiError::invalid_request(format!(".messages[{index}]: {detail}")),
                )?;
            }
        }
    }
    // V4 shows images as a text note anywhere; V4.1 refuses them in assistant messages.
    if version == ModelVersion::DeepseekV41Flash
        && parts
            .iter()
            .any(|part| !matches!(part, ChatContentPart::Text { .. }))
    {
        return Err(ApiError::invalid_request(
            "Image in assistant message is not supported",
        ));
    }
    Ok(())
}

/// Converts the message list; also returns, per converted message, whether it was an
/// assistant message sent without reasoning.
fn convert_messages(
    messages: Vec<ChatMessage>,
    version: ModelVersion,
    image_token: &str,
) -> Result<(Vec<Message>, Vec<bool>), ApiError> {
    let mut converted = Vec::with_capacity(messages.len());
    let mut missing_reasoning = Vec::with_capacity(messages.len());
    // Every message is converted (and checked) first; then the tool-message order.
    let count = messages.len();
    let order_error = check_tool_message_order(&messages).err();
    for (index, message) in messages.into_iter().enumerate() {
        if let Some((_, error)) = order_error.as_ref().filter(|(at, _)| *at == index) {
            return Err(error.clone());
        }
        let mut missing = false;
        let message = match message {
            ChatMessage::System { content, .. } => {
                let builder = build_content(content, index, version, image_token)?;
                builder.into_message(Role::System)
            }
            ChatMessage::User { content, .. } => {
                build_content(content, index, version, image_token)?.into_message(Role::User)
            }
            ChatMessage::LatestReminder { content } => text_message(Role::LatestReminder, content),
            ChatMessage::Tool {
                content,
                tool_call_id,
            } => {
                let mut message =
                    build_content(content, index, version, image_token)?.into_message(Role::Tool);
                message.tool_call_id = Some(tool_call_id);
                message
            }
            ChatMessage::Assistant {
                content,
                reasoning_content,
                tool_calls,
                prefix,
                ..
            } => {
                if content.is_none() && tool_calls.is_none() {
                    return Err(ApiError::invalid_request(
                        "Invalid assistant message: content or tool_calls must be set",
                    ));
                }
                if tool_calls.as_ref().is_some_and(Vec::is_empty) {
                    return Err(ApiError::invalid_request(format!(
                        "Invalid 'messages[{index}].tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead."
                    )));
                }
                let prefix = prefix.unwrap_or(false);
                let text = match content {
                    None => String::new(),
                    Some(content) => {
                        check_assistant_parts(&content, index, version)?;
                        build_content(content, index, version, image_token)?.into_text()
                    }
                };
                missing = reasoning_content.is_none();
                let tool_calls = tool_calls.map(|calls| {
                    calls
                        .into_iter()
                        .map(|call| ToolCall {
                            id: call.id,
                            name: call.function.name,
                            arguments: call.function.arguments,
                        })
                        .collect()
                });
                let mut message = text_message(Role::Assistant, text);
                message.reasoning_content = reasoning_content;
                message.tool_calls = tool_calls;
                message.prefix = prefix;
                message
            }
        };
        let keep = !(message.role == Role::System
            && message.content.is_empty()
            && message.images.is_empty());
        if keep {
            converted.push(message);
            missing_reasoning.push(missing);
        }
    }
    if let Some((at, error)) = order_error {
        if at == count {
            return Err(error);
        }
    }
    Ok((converted, missing_reasoning))
}

/// Whether a converted message before the last one asks to be continued (`prefix: true`;
/// dropped empty system messages do not count); reported after the messages and the reasoning
/// pass-back rule are checked.
fn has_misplaced_prefix(messages: &[Message]) -> bool {
    messages.iter().rev().skip(1).any(|message| message.prefix)
}

/// Every assistant `tool_calls` block must be answered by the tool messages right after it,
/// and every tool message must answer a pending call.
fn check_tool_message_order(messages: &[ChatMessage]) -> Result<(), (usize, ApiError)> {
    let insufficient = || {
        ApiError::invalid_request(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
        )
    };
    let mut pending: Vec<&str> = Vec::new();
    let mut answered: Vec<&str> = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        match message {
            ChatMessage::Tool { tool_call_id, .. } => {
                if !pending.is_empty() && answered.contains(&tool_call_id.as_str()) {
                    return Err((
                        index,
                        ApiError::invalid_request(format!(
                            "Duplicate value for 'tool_call_id' of {tool_call_id} in message[{index}]"
                        )),
                    ));
                }
                answered.push(tool_call_id);
                match pending.iter().position(|id| id == tool_call_id) {
                    Some(position) => {
                        pending.remove(position);
                    }
                    None if pending.is_empty() => {
                        return Err((
                            index,
                            ApiError::invalid_request(
                                "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
                            ),
                        ));
                    }
                    None => {
                        return Err((
                            index,
                            ApiError::invalid_request(format!(
                                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id', The following tool_call_ids did not have response messages: {tool_call_id}"
                            )),
                        ));
                    }
                }
            }
            other => {
                if !pending.is_empty() {
                    return Err((index, insufficient()));
                }
                answered.clear();
                if let ChatMessage::Assistant {
                    tool_calls: Some(calls),
                    ..
                } = other
                {
                    pending = Vec::new();
                    for call in calls {
                        if pending.contains(&call.id.as_str()) {
                            return Err((
                                index,
                                ApiError::invalid_request(format!(
                                    "Duplicate value for 'tool_call_id' of {} in message[{index}]",
                                    call.id
                                )),
                            ));
                        }
                        pending.push(call.id.as_str());
                    }
                }
            }
        }
    }
    if pending.is_empty() {
        Ok(())
    } else {
        Err((messages.len(), insufficient()))
    }
}
