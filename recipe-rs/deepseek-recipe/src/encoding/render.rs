//! The layout shared by V4 and V4.1: BOS, the system block, then the turns, then the opening of
//! the assistant turn to generate.

use super::dialect::{Dialect, SystemLayout};
use super::dsml::DsmlWriter;
use super::prompt::{PromptBuilder, RenderedPrompt};
use super::response_format::{has_response_format_section, write_response_format_section};
use super::tools::{write_tools_section, write_updated_tools_section};
use crate::conversation::{
    Conversation, Message, ReasoningEffort, Role, Tool, ToolCall, ToolChoice,
};
use crate::markup::SpecialTokens;

/// Renders `conversation` in `dialect` with the given special-token spellings.
pub(crate) fn render(
    dialect: &Dialect,
    tokens: &SpecialTokens,
    conversation: &Conversation,
) -> RenderedPrompt {
    let mut renderer = Renderer {
        dialect,
        tokens,
        conversation,
        builder: PromptBuilder::with_capacity(estimated_prompt_bytes(conversation)),
        user_turn_open: false,
        user_text_run: None,
    };
    renderer.write_prompt();
    renderer.builder.finish()
}

/// Markup bytes allowed per message, call and tool beyond their texts.
const MARKUP_BYTES_PER_ITEM: usize = 64;
/// Bytes allowed for a tool's schema line beyond its name and description.
const SCHEMA_BYTES_PER_TOOL: usize = 512;
/// Bytes allowed for the fixed sections (effort text, tools preamble, response format).
const FIXED_SECTION_BYTES: usize = 4096;

/// The prompt's size, estimated from the texts the conversation holds, so that the prompt is
/// written into one buffer (a buffer grown by doubling copies a long prompt several times). Tool
/// arguments count twice (their DSML markup); schemas are not measured, so a conversation with
/// large ones may still grow the buffer once or twice.
fn estimated_prompt_bytes(conversation: &Conversation) -> usize {
    let calls = |message: &Message| -> usize {
        message
            .tool_calls
            .iter()
            .flatten()
            .map(|call| call.name.len() + 2 * call.arguments.len() + MARKUP_BYTES_PER_ITEM)
            .sum()
    };
    let messages: usize = conversation
        .messages
        .iter()
        .map(|message| {
            message.content.len()
                + message.reasoning_content.as_ref().map_or(0, String::len)
                + calls(message)
                + MARKUP_BYTES_PER_ITEM
        })
        .sum();
    let tools: usize = conversation
        .tools
        .iter()
        .chain(
            conversation
                .messages
                .iter()
                .flat_map(|message| &message.tools),
        )
        .map(|tool| {
            tool.name.len()
                + tool.description.as_ref().map_or(0, String::len)
                + SCHEMA_BYTES_PER_TOOL
        })
        .sum();
    FIXED_SECTION_BYTES + messages + tools
}

struct Renderer<'a> {
    dialect: &'a Dialect,
    tokens: &'a SpecialTokens,
    conversation: &'a Conversation,
    builder: PromptBuilder,
    /// Whether the last block written is a user turn that further user text joins.
    user_turn_open: bool,
    /// In an open user turn, the run of user texts being written: `Some(has_text)`; `None`
    /// after tool results (or outside a turn).
    user_text_run: Option<bool>,
}

impl<'a> Renderer<'a> {
    fn write_prompt(&mut self) {
        self.builder.special(&self.tokens.bos);
        let first_turn = self.write_system_block();
        let messages = &self.conversation.messages;
        let mut index = first_turn;
        while index < messages.len() {
            index = self.write_message(index);
        }
        let continues_prefix = messages.last().is_some_and(is_prefix);
        if !continues_prefix {
            self.write_generation_start();
        }
    }

    /// Writes the system block and returns the index of the first message still to render.
    fn write_system_block(&mut self) -> usize {
        let messages = &self.conversation.messages;
        match self.dialect.system_layout {
            SystemLayout::Hoisted => {
                let systems: Vec<&Message> = messages
                    .iter()
                    .filter(|message| message.role == Role::System)
                    .collect();
                self.write_system_preamble(&systems);
                0
            }
            SystemLayout::InPlace => {
                let first_is_system = messages
                    .first()
                    .is_some_and(|message| message.role == Role::System);
                let systems: Vec<&Message> =
                    messages.iter().take(usize::from(first_is_system)).collect();
                if first_is_system || self.has_preamble() {
                    self.builder.special(&self.tokens.system);
                    self.write_system_preamble(&systems);
                }
                usize::from(first_is_system)
            }
        }
    }

    /// Whether anything besides system messages goes into the system block.
    fn has_preamble(&self) -> bool {
        // Without messages the effort text alone opens no system block (V4.1).
        (self.effort_text().is_some() && !self.conversation.messages.is_empty())
            || self.tools_active()
            || has_response_format_section(self.conversation.response_format)
    }

    /// Effort text, system messages (joined by a blank line), tools section, response format.
    fn write_system_preamble(&mut self, systems: &[&Message]) {
        if let Some(effort) = self.effort_text() {
            self.builder.fixed_text(effort);
        }
        // System texts are joined by blank lines; empty ones add nothing.
        let mut wrote_text = false;
        for system in systems {
            if !system.content.is_empty() || !system.images.is_empty() {
                if wrote_text {
                    self.builder.text("\n\n");
                }
                wrote_text = true;
            }
            self.builder
                .text_with_images(&system.content, &system.images);
        }
        // Active tools open the tools section even when every one is loaded on demand.
        let tools = self.listed_tools();
        if self.tools_active() {
            let dsml = self.dsml();
            write_tools_section(
                &mut self.builder,
                self.tokens,
                dsml,
                &tools,
                self.dialect.numbers,
            );
        }
        let conversation = self.conversation;
        write_response_format_section(
            &mut self.builder,
            conversation.response_format,
            conversation.response_schema.as_ref(),
            self.dialect.json_object_section,
            self.dialect.numbers,
        );
        // Tools that the system block's messages load come after the tools section.
        for system in systems {
            if !system.tools.is_empty() {
                write_updated_tools_section(&mut self.builder, &system.tools, self.dialect.numbers);
            }
        }
    }

    fn write_system_content(&mut self, system: &Message) {
        self.builder
            .text_with_images(&system.content, &system.images);
        if !system.tools.is_empty() {
            write_updated_tools_section(&mut self.builder, &system.tools, self.dialect.numbers);
        }
    }

    /// Writes the message at `index` (a run of tool results at once); returns the next index.
    fn write_message(&mut self, index: usize) -> usize {
        let messages = &self.conversation.messages;
        let message = &messages[index];
        match message.role {
            Role::System => {
                if self.dialect.system_layout == SystemLayout::InPlace {
                    self.builder.special(&self.tokens.system);
                    self.write_system_content(message);
                    self.user_turn_open = false;
                }
            }
            Role::User => self.write_user_text(message),
            Role::Tool => return self.write_tool_results(index),
            Role::LatestReminder => {
                let repeated = index > 0 && messages[index - 1].role == Role::LatestReminder;
                if repeated && self.dialect.skip_repeated_latest_reminders {
                    return index + 1;
                }
                self.builder.special(&self.tokens.latest_reminder);
                self.builder
                    .text_with_images(&message.content, &message.images);
                self.user_turn_open = false;
            }
            Role::Assistant => {
                if index + 1 == messages.len() && is_prefix(message) {
                    let thinking = self.conversation.thinking_mode
                        && !(self.dialect.leading_prefix_without_thinking
                            && messages[..index].iter().all(is_empty_system)
                            && !has_response_format_section(self.conversation.response_format));
                    self.write_prefix(message, thinking);
                } else {
                    self.write_assistant_turn(message);
                }
                self.user_turn_open = false;
            }
        }
        index + 1
    }

    /// Starts a user turn, or continues the open one after a blank line (tool results).
    fn open_user_turn(&mut self) {
        if self.user_turn_open
            && self.user_text_run.is_some()
            && self.dialect.tool_results_open_turn_after_text
        {
            self.builder.special(&self.tokens.user);
        } else if self.user_turn_open {
            self.builder.text("\n\n");
        } else {
            self.builder.special(&self.tokens.user);
            self.user_turn_open = true;
        }
        self.user_text_run = None;
    }

    /// Writes a user message's text into the user turn. Consecutive user texts are joined by
    /// blank lines — V4 skips empty ones — and the texts after tool results follow them after a
    /// blank line (even when empty).
    fn write_user_text(&mut self, message: &Message) {
        let empty = message.content.is_empty() && message.images.is_empty();
        let has_text = match self.user_text_run {
            _ if !self.user_turn_open => {
                self.builder.special(&self.tokens.user);
                self.user_turn_open = true;
                false
            }
            None => {
                self.builder.text("\n\n");
                false
            }
            Some(has_text) => has_text,
        };
        let counts = !empty || !self.dialect.skip_empty_user_texts;
        if has_text && counts {
            self.builder.text("\n\n");
        }
        self.builder
            .text_with_images(&message.content, &message.images);
        self.user_text_run = Some(has_text || counts);
    }

    /// Writes the run of tool results starting at `start` in the order of the calls they answer.
    fn write_tool_results(&mut self, start: usize) -> usize {
        let messages = &self.conversation.messages;
        let end = messages[start..]
            .iter()
            .position(|message| message.role != Role::Tool)
            .map_or(messages.len(), |offset| start + offset);
        let calls = messages[..start]
            .iter()
            .rev()
            .find(|message| message.role == Role::Assistant)
            .map(|message| self.ordered_calls(message))
            .unwrap_or_default();
        let mut results: Vec<&Message> = messages[start..end].iter().collect();
        results.sort_by_key(|result| {
            calls
                .iter()
                .position(|call| Some(&call.id) == result.tool_call_id.as_ref())
                .unwrap_or(usize::MAX)
        });
        for result in results {
            self.open_user_turn();
            self.builder.text("<tool_result>");
            self.builder
                .text_with_images(&result.content, &result.images);
            self.builder.text("</tool_result>");
        }
        end
    }

    /// A finished assistant turn from the history.
    fn write_assistant_turn(&mut self, message: &Message) {
        let tokens = self.tokens;
        let grounding = tokens.grounding();
        self.builder.special(&tokens.assistant);
        if self.conversation.thinking_mode && self.tools_active() {
            self.builder.special(&tokens.thinking_start);
            let reasoning = message.reasoning_content.as_deref().unwrap_or("");
            self.builder.text_with_specials(reasoning, &grounding);
        }
        self.builder.special(&tokens.thinking_end);
        self.builder
            .text_with_specials(&message.content, &grounding);
        let calls = self.ordered_calls(message);
        if !calls.is_empty() {
            self.builder.text("\n\n");
            let dsml = self.dsml();
            dsml.write_calls(&mut self.builder, &calls, self.dialect.numbers);
        }
        self.builder.special(&tokens.eos);
    }

    /// The last assistant message, continued by the model (with its reasoning when `thinking`).
    fn write_prefix(&mut self, message: &Message, thinking: bool) {
        let tokens = self.tokens;
        let grounding = tokens.grounding();
        self.builder.special(&tokens.assistant);
        if thinking {
            self.builder.special(&tokens.thinking_start);
            let reasoning = message.reasoning_content.as_deref().unwrap_or("");
            self.builder.text_with_specials(reasoning, &grounding);
            if message.content.is_empty() {
                return;
            }
        }
        self.builder.special(&tokens.thinking_end);
        self.builder
            .text_with_specials(&message.content, &grounding);
    }

    /// Opens the assistant turn the model generates.
    fn write_generation_start(&mut self) {
        let tokens = self.tokens;
        self.builder.special(&tokens.assistant);
        if self.conversation.thinking_mode {
            self.builder.special(&tokens.thinking_start);
            return;
        }
        self.builder.special(&tokens.thinking_end);
        let must_call = self.conversation.tool_choice == ToolChoice::Required;
        if must_call && self.tools_active() {
            self.builder.text("\n\n");
            let dsml = self.dsml();
            dsml.open_calls(&mut self.builder);
            self.builder.text("\n");
        }
    }

    /// An assistant message's tool calls in the order the dialect renders them.
    fn ordered_calls<'m>(&self, message: &'m Message) -> Vec<&'m ToolCall> {
        let mut calls: Vec<&ToolCall> = message.tool_calls.iter().flatten().collect();
        if self.dialect.sort_tool_calls_by_id {
            calls.sort_by(|a, b| a.id.cmp(&b.id));
        }
        calls
    }

    fn effort_text(&self) -> Option<&'static str> {
        if !self.conversation.thinking_mode {
            return None;
        }
        let effort = self
            .conversation
            .reasoning_effort
            .unwrap_or(ReasoningEffort::High);
        (self.dialect.effort_text)(effort)
    }

    /// Declared tools are active unless the tool choice is `none`.
    fn tools_active(&self) -> bool {
        !self.conversation.tools.is_empty() && self.conversation.tool_choice != ToolChoice::None
    }

    /// The tools shown in the tools section: active ones not loaded on demand.
    fn listed_tools(&self) -> Vec<&'a Tool> {
        if !self.tools_active() {
            return Vec::new();
        }
        let conversation: &'a Conversation = self.conversation;
        conversation
            .tools
            .iter()
            .filter(|tool| !tool.defer_loading)
            .collect()
    }

    fn dsml(&self) -> DsmlWriter<'a> {
        let tokens: &'a SpecialTokens = self.tokens;
        DsmlWriter {
            token: &tokens.dsml,
            names: self.dialect.dsml,
        }
    }
}

/// A system message that renders nothing: no text, images or loaded tools.
fn is_empty_system(message: &Message) -> bool {
    message.role == Role::System
        && message.content.is_empty()
        && message.images.is_empty()
        && message.tools.is_empty()
}

fn is_prefix(message: &Message) -> bool {
    message.role == Role::Assistant && message.prefix
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{
        ImageDetail, ImageRef, ImageSource, ImageSourceKind, ResponseFormat,
    };
    use crate::encoding::{v4, v41};

    fn message(role: Role, content: &str) -> Message {
        Message {
            role,
            content: content.to_owned(),
            reasoning_content: None,
            tool_calls: None,
            prefix: false,
            tool_call_id: None,
            images: Vec::new(),
            tools: Vec::new(),
        }
    }

    fn conversation(messages: Vec<Message>) -> Conversation {
        Conversation {
            thinking_mode: true,
            reasoning_effort: None,
            tool_choice: ToolChoice::Required,
            response_format: ResponseFormat::JsonSchema,
            response_schema: None,
            response_regex: None,
            tools: vec![Tool {
                name: "f".to_owned(),
                description: None,
                parameters: serde_json::Value::Null,
                strict: None,
                defer_loading: false,
            }],
            messages,
        }
    }

    /// Special ranges are in order, inside the prompt and on character boundaries.
    fn assert_well_formed(rendered: &RenderedPrompt) {
        let mut end = 0;
        for range in &rendered.special_ranges {
            assert!(end <= range.start && range.start < range.end);
            assert!(rendered.prompt.get(range.clone()).is_some());
            end = range.end;
        }
        assert!(end <= rendered.prompt.len());
    }

    #[test]
    fn the_prompt_is_written_into_one_buffer() {
        let long = "line of a long document, 中文 and 😀\n".repeat(20_000);
        let mut assistant = message(Role::Assistant, "done");
        assistant.reasoning_content = Some("thinking ".repeat(500));
        assistant.tool_calls = Some(vec![ToolCall {
            id: "c1".to_owned(),
            name: "f".to_owned(),
            arguments: format!(r#"{{"text": "{}", "n": [1, 2.5]}}"#, "x".repeat(5_000)),
        }]);
        let mut result = message(Role::Tool, &long);
        result.tool_call_id = Some("c1".to_owned());
        let conversation = conversation(vec![
            message(Role::System, "sys"),
            message(Role::User, &long),
            assistant,
            result,
        ]);
        for dialect in [&v4::DIALECT, &v41::DIALECT] {
            let rendered = render(dialect, &SpecialTokens::default(), &conversation);
            let estimate = estimated_prompt_bytes(&conversation);
            assert!(rendered.prompt.len() <= estimate, "{estimate}");
            assert_eq!(rendered.prompt.capacity(), estimate);
        }
    }

    #[test]
    fn odd_conversations_render_without_panicking() {
        let image = ImageRef {
            span: Some((1, 4)),
            source: ImageSource {
                kind: ImageSourceKind::DataUrl,
                detail: ImageDetail::Auto,
                path: String::new(),
                location: String::new(),
            },
        };
        let mut split_char = message(Role::User, "é<I>");
        split_char.images = vec![image.clone(), image];
        let mut orphan_result = message(Role::Tool, "r");
        orphan_result.tool_call_id = Some("missing".to_owned());
        let mut early_prefix = message(Role::Assistant, "");
        early_prefix.prefix = true;
        early_prefix.tool_calls = Some(Vec::new());
        let cases = [
            Vec::new(),
            vec![orphan_result],
            vec![split_char, early_prefix.clone(), message(Role::System, "")],
            vec![message(Role::LatestReminder, "<｜box｜>"), early_prefix],
        ];
        for messages in cases {
            for dialect in [&v4::DIALECT, &v41::DIALECT] {
                let rendered = render(
                    dialect,
                    &SpecialTokens::default(),
                    &conversation(messages.clone()),
                );
                assert_well_formed(&rendered);
            }
        }
    }

    #[test]
    fn v41_prefix_after_only_empty_systems_continues_without_thinking() {
        let mut prefix = message(Role::Assistant, "pre");
        prefix.prefix = true;
        prefix.reasoning_content = Some("why".to_owned());
        let tail_with = |messages: Vec<Message>, dialect: &Dialect, format: ResponseFormat| {
            let mut conversation = conversation(messages);
            conversation.tools.clear();
            conversation.response_format = format;
            let prompt = render(dialect, &SpecialTokens::default(), &conversation).prompt;
            prompt[prompt.rfind("<｜Assistant｜>").unwrap()..].to_owned()
        };
        let tail = |messages, dialect| tail_with(messages, dialect, ResponseFormat::Text);
        let empty_system = message(Role::System, "");
        let leading = vec![empty_system.clone(), empty_system, prefix.clone()];
        assert_eq!(
            tail(leading.clone(), &v41::DIALECT),
            "<｜Assistant｜></think>pre"
        );
        // A response-format section counts as system content.
        assert_eq!(
            tail_with(leading.clone(), &v41::DIALECT, ResponseFormat::JsonSchema),
            "<｜Assistant｜><think>why</think>pre"
        );
        assert_eq!(
            tail(leading, &v4::DIALECT),
            "<｜Assistant｜><think>why</think>pre"
        );
        for before in [Role::System, Role::User, Role::LatestReminder] {
            let after_content = vec![message(before, "x"), prefix.clone()];
            assert_eq!(
                tail(after_content, &v41::DIALECT),
                "<｜Assistant｜><think>why</think>pre"
            );
        }
    }

    #[test]
    fn empty_spellings_emit_nothing() {
        let tokens = SpecialTokens {
            bos: "".into(),
            ..SpecialTokens::default()
        };
        let rendered = render(
            &v4::DIALECT,
            &tokens,
            &conversation(vec![message(Role::User, "x")]),
        );
        assert!(rendered.prompt.starts_with("Reasoning Effort"));
        assert_well_formed(&rendered);
    }
}
