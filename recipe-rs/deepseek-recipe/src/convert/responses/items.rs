//! The input items of a Responses request, in order: messages and their content parts,
//! reasoning items, calls (function, custom, tool search) and their outputs.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::tools::{searched_tools_listing, NamespaceFunctions, TOOL_SEARCH_NAME};
use super::transcript::Transcript;
use crate::conversation::{Message, Role, ToolCall};
use crate::convert::content::{text_message, ContentBuilder, UNSUPPORTED_IMAGE_TEXT};
use crate::convert::images::{
    image_detail, image_url_source, MAX_IMAGE_URL_BYTES, URL_TOO_LONG_ADVICE,
};
use crate::convert::tools::{declared_tools, FunctionDecl};
use crate::converted::ModelVersion;
use crate::error::ApiError;
use crate::protocol::responses::{
    CallOutput, InputItem, ItemContent, ItemRole, ResponsesContentBlock, ResponsesInputImage,
};

/// What the input items become: the messages, whether each assistant turn lacks reasoning,
/// and the declarations of the tools that tool searches loaded.
pub(super) type ConvertedItems = (Vec<Message>, Vec<bool>, Vec<FunctionDecl>);

/// Per-request settings for converting input items.
pub(super) struct ItemConverter<'a> {
    pub(super) version: ModelVersion,
    pub(super) image_token: &'a str,
    pub(super) separator: &'static str,
    /// The names of the declared tools (namespaced calls' names avoid them).
    pub(super) declared_names: Vec<String>,
    /// The flattened names of the declared namespace functions, in declaration order.
    pub(super) namespace_names: NamespaceFunctions,
}

impl ItemConverter<'_> {
    /// Converts the items; `searched` holds what each tool search output loads, by item index.
    pub(super) fn convert_items(
        &self,
        instructions: Option<String>,
        items: Vec<InputItem>,
        mut searched: BTreeMap<usize, Vec<FunctionDecl>>,
    ) -> Result<ConvertedItems, ApiError> {
        let mut transcript = Transcript::default();
        let mut loaded_declarations = Vec::new();
        if let Some(instructions) = instructions.filter(|text| !text.is_empty()) {
            transcript.push(text_message(Role::System, instructions))?;
        }
        for (index, item) in items.into_iter().enumerate() {
            match item {
                InputItem::Message(message) => {
                    self.push_message(index, message.role, message.content, &mut transcript)?;
                }
                InputItem::WebSearchCall => transcript.close_group()?,
                InputItem::Reasoning(reasoning) => {
                    // A reasoning item ends an open run of calls.
                    transcript.close_group()?;
                    let texts: Vec<String> = reasoning
                        .content
                        .unwrap_or_default()
                        .into_iter()
                        .map(|part| part.text)
                        .collect();
                    // A reasoning item without text counts as no reasoning at all.
                    let text = texts.join("\n");
                    if !text.is_empty() {
                        transcript.add_reasoning(text);
                    }
                }
                InputItem::FunctionCall(call) => {
                    check_call_id(&call.call_id, index)?;
                    let name = match call.namespace {
                        Some(namespace) => self.namespaced_call_name(&namespace, &call.name),
                        None => call.name,
                    };
                    transcript.push_call(ToolCall {
                        id: call.call_id,
                        name,
                        arguments: call.arguments,
                    })?;
                }
                InputItem::CustomToolCall(call) => {
                    check_call_id(&call.call_id, index)?;
                    let arguments = json!({ "input": call.input }).to_string();
                    transcript.push_call(ToolCall {
                        id: call.call_id,
                        name: call.name,
                        arguments,
                    })?;
                }
                InputItem::ToolSearchCall(call) => {
                    // V4 drops tool search items; V4.1 shows the search as a call.
                    if self.version == ModelVersion::DeepseekV41Flash {
                        check_call_id(&call.call_id, index)?;
                        transcript.push_call(ToolCall {
                            id: call.call_id,
                            name: TOOL_SEARCH_NAME.to_owned(),
                            arguments: Value::Object(call.arguments).to_string(),
                        })?;
                    }
                }
                InputItem::FunctionCallOutput(output) => {
                    let message = self.call_output(index, output.output)?;
                    match output.call_id {
                        // Without a call id the output is a tool message answering no call.
                        None => transcript.push(message)?,
                        Some(call_id) => {
                            self.push_output(index, call_id, message, &mut transcript)?
                        }
                    }
                }
                InputItem::CustomToolCallOutput(output) => {
                    let content = output.output.unwrap_or(CallOutput::Text(String::new()));
                    let message = self.call_output(index, content)?;
                    self.push_output(index, output.call_id, message, &mut transcript)?;
                }
                InputItem::ToolSearchOutput(output) => {
                    // V4 drops tool search items (nothing was searched for them).
                    if let Some(declarations) = searched.remove(&index) {
                        check_call_id(&output.call_id, index)?;
                        let group = transcript.answer(&output.call_id)?;
                        let listing = searched_tools_listing(index, output.tools)?;
                        let mut result =
                            text_message(Role::Tool, Value::Array(listing).to_string());
                        result.tool_call_id = Some(output.call_id.clone());
                        group.outputs.push((output.call_id, result));
                        let mut loaded = text_message(Role::System, String::new());
                        // Checked later, with the declared tools.
                        loaded.tools = declared_tools(declarations.clone(), false, true)?;
                        loaded_declarations.extend(declarations);
                        // A search that loaded no function adds no system message.
                        if !loaded.tools.is_empty() {
                            group.loaded.push(loaded);
                        }
                    }
                }
                InputItem::Other => {}
            }
        }
        transcript.flush_reasoning()?;
        transcript.close_group()?;
        Ok((
            transcript.messages,
            transcript.missing_reasoning,
            loaded_declarations,
        ))
    }

    fn push_message(
        &self,
        index: usize,
        role: ItemRole,
        content: ItemContent,
        transcript: &mut Transcript,
    ) -> Result<(), ApiError> {
        let path = format!("input[{index}]");
        // A message ends an open run of calls before its content is read.
        transcript.close_group()?;
        if role == ItemRole::Assistant && self.version == ModelVersion::DeepseekV41Flash {
            if let ItemContent::Parts(parts) = &content {
                self.check_image_parts(index, "content", parts)?;
                if parts
                    .iter()
                    .any(|part| matches!(part, ResponsesContentBlock::InputImage(_)))
                {
                    return Err(ApiError::invalid_request(format!(
                        "{path}: Image in assistant message is unsupported"
                    )));
                }
            }
        }
        let builder = self.build_content(index, "content", content)?;
        let role = match role {
            ItemRole::User => Role::User,
            ItemRole::Assistant => Role::Assistant,
            ItemRole::System => Role::System,
            ItemRole::Developer => match self.version {
                ModelVersion::DeepseekV4Pro => Role::User,
                ModelVersion::DeepseekV41Flash => Role::System,
            },
        };
        let message = builder.into_message(role);
        match role {
            Role::Assistant => transcript.push_assistant(message),
            _ => transcript.push(message),
        }
    }

    /// A call output answering `call_id` (which must not be empty).
    fn push_output(
        &self,
        index: usize,
        call_id: String,
        mut message: Message,
        transcript: &mut Transcript,
    ) -> Result<(), ApiError> {
        check_call_id(&call_id, index)?;
        message.tool_call_id = Some(call_id.clone());
        transcript
            .answer(&call_id)?
            .outputs
            .push((call_id, message));
        Ok(())
    }

    fn call_output(&self, index: usize, output: CallOutput) -> Result<Message, ApiError> {
        let content = match output {
            CallOutput::Text(text) => ItemContent::Text(text),
            CallOutput::Parts(parts) => {
                ItemContent::Parts(parts.into_iter().map(ResponsesContentBlock::from).collect())
            }
        };
        Ok(self
            .build_content(index, "output", content)?
            .into_message(Role::Tool))
    }

    /// The name of a call to a namespace function: the declared function's flattened name, or
    /// `<namespace><separator><name>` with `_1`, `_2`, … appended while a declared tool has it.
    fn namespaced_call_name(&self, namespace: &str, name: &str) -> String {
        if let Some((flattened, _)) = self
            .namespace_names
            .iter()
            .find(|(_, (space, member))| space == namespace && member == name)
        {
            return flattened.clone();
        }
        let base = format!("{namespace}{}{name}", self.separator);
        let mut candidate = base.clone();
        let mut suffix = 0;
        while self.declared_names.contains(&candidate) {
            suffix += 1;
            candidate = format!("{base}_{suffix}");
        }
        candidate
    }

    /// V4.1: every image part needs exactly one of `image_url` (not empty) and `file_id`, and
    /// file ids are not served.
    fn check_image_parts(
        &self,
        index: usize,
        field: &str,
        parts: &[ResponsesContentBlock],
    ) -> Result<(), ApiError> {
        let path = format!("input[{index}]");
        if self.version == ModelVersion::DeepseekV41Flash {
            for (part_index, part) in parts.iter().enumerate() {
                if let ResponsesContentBlock::InputImage(ResponsesInputImage {
                    image_url,
                    file_id,
                    ..
                }) = part
                {
                    let part_path = format!("{path}.{field}[{part_index}]");
                    let has_url = image_url.as_deref().is_some_and(|url| !url.is_empty());
                    // An empty URL counts as absent, any file id (even empty) as present.
                    let has_file = file_id.is_some();
                    let problem = match (has_url, has_file) {
                        (false, false) => Some("input_image must have image_url or file_id"),
                        (true, true) => Some("input_image cannot have both image_url and file_id"),
                        (false, true) => Some(
                            "file_id is not supported. Pass the image as a base64 data url instead.",
                        ),
                        (true, false) => None,
                    };
                    if let Some(problem) = problem {
                        return Err(ApiError::invalid_request(format!("{part_path}: {problem}")));
                    }
                }
            }
        }
        Ok(())
    }

    /// The content of item `index` (`field` names its parts in error paths).
    fn build_content(
        &self,
        index: usize,
        field: &str,
        content: ItemContent,
    ) -> Result<ContentBuilder, ApiError> {
        let mut builder = ContentBuilder::default();
        let parts = match content {
            ItemContent::Text(text) => {
                builder.push_text(text);
                return Ok(builder);
            }
            ItemContent::Parts(parts) => parts,
        };
        let path = format!("input[{index}]");
        // The image parts are checked first (image_url or file_id); their URLs are read while
        // the content is built.
        self.check_image_parts(index, field, &parts)?;
        for (part_index, part) in parts.into_iter().enumerate() {
            match part {
                ResponsesContentBlock::InputText { text }
                | ResponsesContentBlock::OutputText { text } => builder.push_text(text),
                ResponsesContentBlock::InputFile {} => builder.push_text("[Unsupported Document]"),
                ResponsesContentBlock::InputImage(ResponsesInputImage {
                    image_url,
                    file_id,
                    detail,
                }) => {
                    let part_path = format!("{path}.{field}[{part_index}]");
                    // An empty URL counts as absent, any file id (even empty) as present.
                    let image_url = image_url.filter(|url| !url.is_empty());
                    match (&image_url, &file_id) {
                        _ if self.version == ModelVersion::DeepseekV4Pro => {
                            builder.push_text(UNSUPPORTED_IMAGE_TEXT)
                        }
                        (None, None) => {
                            return Err(ApiError::invalid_request(format!(
                                "{part_path}: input_image must have image_url or file_id"
                            )));
                        }
                        (Some(_), Some(_)) => {
                            return Err(ApiError::invalid_request(format!(
                                "{part_path}: input_image cannot have both image_url and file_id"
                            )));
                        }
                        (None, Some(_)) => {
                            return Err(ApiError::invalid_request(format!(
                                "{part_path}: file_id is not supported. Pass the image as a base64 data url instead."
                            )));
                        }
                        (Some(url), None) => {
                            let source = image_url_source(
                                url,
                                image_detail(detail),
                                &path,
                                |len| {
                                    format!(
                                    "{part_path}: image_url external link length {len} too long, max link length {MAX_IMAGE_URL_BYTES}. {URL_TOO_LONG_ADVICE}"
                                )
                                },
                            )?;
                            builder.push_image(source, self.image_token);
                        }
                    }
                }
            }
        }
        Ok(builder)
    }
}

/// Call ids must not be empty.
fn check_call_id(call_id: &str, index: usize) -> Result<(), ApiError> {
    if call_id.is_empty() {
        return Err(ApiError::invalid_request(format!(
            "Invalid 'input[{index}].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead."
        )));
    }
    Ok(())
}
