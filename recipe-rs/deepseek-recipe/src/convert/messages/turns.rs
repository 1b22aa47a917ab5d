//! The messages of a Messages request, block by block: system, user and assistant content,
//! tool results answering the previous message's tool uses, and the blocks a role may not hold.

use super::image_source::image_source;
use crate::conversation::{ImageRef, ImageSource, Message, Role, Tool, ToolCall};
use crate::convert::content::{text_message, ContentBuilder, UNSUPPORTED_IMAGE_TEXT};
use crate::convert::options::WebSearchBehavior;
use crate::convert::python_json::to_spaced_json;
use crate::converted::ModelVersion;
use crate::error::ApiError;
use crate::protocol::messages::{
    ContentBlock, MessagesContent, MessagesDocumentSource, MessagesImageSource, MessagesMessage,
    ToolReferenceParam, ToolResultBlock, ToolResultContent,
};

/// Separator between joined text blocks.
pub(super) const BLOCK_SEPARATOR: &str = "\n\n";

/// A converted message and whether it is an assistant turn sent without thinking.
pub(super) struct Converted {
    pub(super) message: Message,
    pub(super) missing_reasoning: bool,
}

impl Converted {
    pub(super) fn plain(message: Message) -> Self {
        Self {
            message,
            missing_reasoning: false,
        }
    }
}

/// Per-request settings for converting messages.
pub(super) struct MessageConverter<'a> {
    pub(super) version: ModelVersion,
    pub(super) image_token: &'a str,
    pub(super) web_search: WebSearchBehavior,
    /// The declared tools as `tool_addition` blocks show them.
    pub(super) tool_definitions: &'a [Tool],
}

impl MessageConverter<'_> {
    pub(super) fn convert(
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
        let mut builder = ContentBuilder::default();
        let mut tools = Vec::new();
        for (block_index, block) in blocks.into_iter().enumerate() {
            match block {
                ContentBlock::Text { text } => builder.push_text(text),
                ContentBlock::Document { source } => builder.push_text(document_note(&source)),
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
        let mut builder = ContentBuilder::default();
        match content {
            None => {}
            Some(ToolResultContent::Text(text)) => builder.push_text(text),
            Some(ToolResultContent::Blocks(blocks)) => {
                for (part_index, block) in blocks.into_iter().enumerate() {
                    match block {
                        ToolResultBlock::Text { text } => builder.push_text(text),
                        ToolResultBlock::Document { source } => {
                            builder.push_text(document_note(&source))
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

/// The error for `tool_use` ids left without results (`at` is the position prefix).
pub(super) fn unanswered(at: &str, ids: &[String]) -> ApiError {
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
