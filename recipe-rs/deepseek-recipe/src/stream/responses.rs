//! OpenAI Responses: stream events and the accumulated `response` object.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::chunk::Emit;
use super::custom_input::CustomInput;
use super::events::{OutputEvent, StreamEnd, StreamStart, StreamUsage};
use super::json_writer::{write_key, write_str, write_u64, write_usize, write_value};
use super::logprobs::LogprobEntry;

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

/// The `reasoning` object of the response.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningSettings {
    /// Requested effort.
    pub effort: Option<String>,
    /// Requested summary mode.
    pub summary: Option<String>,
}

/// What the Responses generator needs from the request.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponsesConfig {
    /// The response id (`resp_…`).
    pub id: String,
    /// The model name.
    pub model: String,
    /// The request is in thinking mode.
    pub thinking_mode: bool,
    /// `created_at`; `None` = the clock at generator creation.
    pub created_at: Option<u64>,
    /// Echoed request values (defaults when the request is not echoed).
    pub echo: ResponsesEcho,
    /// The `reasoning` object.
    pub reasoning: ReasoningSettings,
    /// The `text` object (`{"format": …, "verbosity": …}`).
    pub text: Value,
    /// The `tool_choice` value.
    pub tool_choice: Value,
    /// The `tools` as reported (see [`report_tools`]).
    pub tools: Vec<Value>,
    /// Function name → (namespace, local name) for tools declared inside namespaces.
    pub namespace_tools: BTreeMap<String, (String, String)>,
    /// Names of custom (free-form input) tools such as `apply_patch`.
    pub custom_tools: BTreeSet<String>,
}

impl Default for ResponsesConfig {
    fn default() -> Self {
        Self {
            id: String::new(),
            model: String::new(),
            thinking_mode: false,
            created_at: None,
            echo: ResponsesEcho::default(),
            reasoning: ReasoningSettings::default(),
            text: serde_json::json!({"format": {"type": "text"}, "verbosity": null}),
            tool_choice: Value::String("auto".to_owned()),
            tools: Vec::new(),
            namespace_tools: BTreeMap::new(),
            custom_tools: BTreeSet::new(),
        }
    }
}

/// Request tools as the response object reports them: functions with `description` and `strict`
/// (null when not set), custom tools by type and name, namespaces with their description (null
/// when not set) and reported functions.
pub fn report_tools(request_tools: &[Value]) -> Vec<Value> {
    request_tools.iter().map(report_tool).collect()
}

fn report_tool(tool: &Value) -> Value {
    let field = |key: &str| tool.get(key).cloned().unwrap_or(Value::Null);
    match tool.get("type").and_then(Value::as_str) {
        Some("function") => {
            let mut reported = serde_json::Map::new();
            reported.insert("type".into(), "function".into());
            reported.insert("name".into(), field("name"));
            reported.insert("description".into(), field("description"));
            reported.insert("parameters".into(), field("parameters"));
            reported.insert("strict".into(), field("strict"));
            Value::Object(reported)
        }
        Some("custom") => serde_json::json!({"type": "custom", "name": field("name")}),
        Some("namespace") => {
            let inner = tool
                .get("tools")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            let mut reported = serde_json::Map::new();
            reported.insert("type".into(), "namespace".into());
            reported.insert("name".into(), field("name"));
            reported.insert("description".into(), field("description"));
            reported.insert("tools".into(), Value::Array(report_tools(inner)));
            Value::Object(reported)
        }
        _ => tool.clone(),
    }
}

/// A content part of a reasoning or message item.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// Reasoning text.
    ReasoningText {
        /// The text.
        text: String,
    },
    /// Message text.
    OutputText {
        /// Always empty.
        annotations: Vec<Value>,
        /// Token log probabilities.
        logprobs: Vec<LogprobEntry>,
        /// The text.
        text: String,
    },
}

/// An output item.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputItem {
    /// Reasoning.
    Reasoning {
        /// `rs_{id}_{n}`.
        id: String,
        /// `in_progress`, `completed` or `incomplete`.
        status: &'static str,
        /// The reasoning text part.
        content: Vec<ContentPart>,
        /// Always empty.
        summary: Vec<Value>,
        /// `{id}-{n}`.
        encrypted_content: String,
    },
    /// An assistant message.
    Message {
        /// `msg_{id}_{n}`.
        id: String,
        /// Item status.
        status: &'static str,
        /// Always `assistant`.
        role: &'static str,
        /// `final_answer`, or `commentary` when a tool call follows.
        phase: &'static str,
        /// The output text part.
        content: Vec<ContentPart>,
    },
    /// A function call.
    FunctionCall {
        /// `fc_{id}_{n}`.
        id: String,
        /// Item status.
        status: &'static str,
        /// The tool-call id.
        call_id: String,
        /// Function name (local name for namespace tools).
        name: String,
        /// Namespace of a namespace tool.
        #[serde(skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        /// Arguments JSON text.
        arguments: String,
    },
    /// A custom tool call (free-form input).
    CustomToolCall {
        /// `ctc_{id}_{n}`.
        id: String,
        /// Item status.
        status: &'static str,
        /// The tool-call id.
        call_id: String,
        /// Tool name.
        name: String,
        /// The raw input.
        input: String,
    },
}

impl OutputItem {
    fn set_status(&mut self, value: &'static str) {
        match self {
            Self::Reasoning { status, .. }
            | Self::Message { status, .. }
            | Self::FunctionCall { status, .. }
            | Self::CustomToolCall { status, .. } => *status = value,
        }
    }

    fn id(&self) -> &str {
        match self {
            Self::Reasoning { id, .. }
            | Self::Message { id, .. }
            | Self::FunctionCall { id, .. }
            | Self::CustomToolCall { id, .. } => id,
        }
    }
}

/// `input_tokens_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct InputTokensDetails {
    /// Cached prompt tokens.
    pub cached_tokens: u64,
}

/// `output_tokens_details`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OutputTokensDetails {
    /// Tokens of the reasoning text.
    pub reasoning_tokens: u64,
}

/// Usage of a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ResponsesUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Cached prompt tokens.
    pub input_tokens_details: InputTokensDetails,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Reasoning tokens.
    pub output_tokens_details: OutputTokensDetails,
    /// Prompt + completion tokens.
    pub total_tokens: u64,
}

/// `incomplete_details`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IncompleteDetails {
    /// `max_output_tokens` or `content_filter`.
    pub reason: &'static str,
}

/// The `response` object.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResponseObject {
    /// Response id.
    pub id: String,
    /// Always `response`.
    pub object: &'static str,
    /// Unix seconds when the stream started.
    pub created_at: u64,
    /// `in_progress`, `completed` or `incomplete`.
    pub status: &'static str,
    /// Always false.
    pub background: bool,
    /// Unix seconds when the stream ended.
    pub completed_at: Option<u64>,
    /// Always null.
    pub content_filters: Option<Value>,
    /// Always null.
    pub error: Option<Value>,
    /// Always 0.0.
    pub frequency_penalty: f32,
    /// Why the response is incomplete.
    pub incomplete_details: Option<IncompleteDetails>,
    /// Echoed instructions.
    pub instructions: Option<String>,
    /// Echoed output limit.
    pub max_output_tokens: Option<u32>,
    /// Always null.
    pub max_tool_calls: Option<u64>,
    /// Model name.
    pub model: String,
    /// Always null.
    pub moderation: Option<Value>,
    /// Output items.
    pub output: Vec<OutputItem>,
    /// Always true.
    pub parallel_tool_calls: bool,
    /// Always 0.0.
    pub presence_penalty: f32,
    /// Always null.
    pub previous_response_id: Option<String>,
    /// Always null.
    pub prompt_cache_key: Option<String>,
    /// Always null.
    pub prompt_cache_retention: Option<String>,
    /// Reasoning settings.
    pub reasoning: ReasoningSettings,
    /// Always null.
    pub safety_identifier: Option<String>,
    /// Always `default`.
    pub service_tier: &'static str,
    /// Always false.
    pub store: bool,
    /// Echoed temperature.
    pub temperature: f32,
    /// Text settings.
    pub text: Value,
    /// Tool choice.
    pub tool_choice: Value,
    /// Reported tools.
    pub tools: Vec<Value>,
    /// Echoed `top_logprobs`.
    pub top_logprobs: u8,
    /// Echoed `top_p`.
    pub top_p: f32,
    /// Always `disabled`.
    pub truncation: &'static str,
    /// Usage (at the end).
    pub usage: Option<ResponsesUsage>,
    /// Echoed user.
    pub user: Option<String>,
    /// Always `{}`.
    pub metadata: serde_json::Map<String, Value>,
}

impl ResponseObject {
    /// The in-progress object for `config`.
    pub fn new(config: &ResponsesConfig, created_at: u64) -> Self {
        Self {
            id: config.id.clone(),
            object: "response",
            created_at,
            status: "in_progress",
            background: false,
            completed_at: None,
            content_filters: None,
            error: None,
            frequency_penalty: 0.0,
            incomplete_details: None,
            instructions: config.echo.instructions.clone(),
            max_output_tokens: config.echo.max_output_tokens,
            max_tool_calls: None,
            model: config.model.clone(),
            moderation: None,
            output: Vec::new(),
            parallel_tool_calls: true,
            presence_penalty: 0.0,
            previous_response_id: None,
            prompt_cache_key: None,
            prompt_cache_retention: None,
            reasoning: config.reasoning.clone(),
            safety_identifier: None,
            service_tier: "default",
            store: false,
            temperature: config.echo.temperature,
            text: config.text.clone(),
            tool_choice: config.tool_choice.clone(),
            tools: config.tools.clone(),
            top_logprobs: config.echo.top_logprobs,
            top_p: config.echo.top_p,
            truncation: "disabled",
            usage: None,
            user: config.echo.user.clone(),
            metadata: serde_json::Map::new(),
        }
    }
}

/// One Responses stream event: its `type`, then its fields in alphabetical order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResponsesEvent {
    /// The event type (also the SSE event name).
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Complete arguments (`function_call_arguments.done`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
    /// Content part index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_index: Option<u32>,
    /// Delta text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<String>,
    /// Complete custom tool input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<OutputItem>,
    /// The item id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_id: Option<Arc<str>>,
    /// Token log probabilities (output text events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Vec<LogprobEntry>>,
    /// Output index of the item.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_index: Option<usize>,
    /// The content part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<ContentPart>,
    /// The response object (lifecycle events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<Box<ResponseObject>>,
    /// Position of the event in the stream.
    pub sequence_number: u64,
    /// Complete text (`*_text.done`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl ResponsesEvent {
    fn new(kind: &'static str, sequence_number: u64) -> Self {
        Self {
            kind,
            arguments: None,
            content_index: None,
            delta: None,
            input: None,
            item: None,
            item_id: None,
            logprobs: None,
            output_index: None,
            part: None,
            response: None,
            sequence_number,
            text: None,
        }
    }
}

impl ResponsesEvent {
    /// Appends the event's compact JSON: the flat fields written directly, nested objects
    /// (items, parts, the response, log probabilities) via serde.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"type\":");
        write_str(out, self.kind);
        if let Some(arguments) = &self.arguments {
            write_key(out, "arguments", false);
            write_str(out, arguments);
        }
        if let Some(content_index) = self.content_index {
            write_key(out, "content_index", false);
            write_u64(out, u64::from(content_index));
        }
        if let Some(delta) = &self.delta {
            write_key(out, "delta", false);
            write_str(out, delta);
        }
        if let Some(input) = &self.input {
            write_key(out, "input", false);
            write_str(out, input);
        }
        if let Some(item) = &self.item {
            write_key(out, "item", false);
            write_value(out, item);
        }
        if let Some(item_id) = &self.item_id {
            write_key(out, "item_id", false);
            write_str(out, item_id);
        }
        if let Some(logprobs) = &self.logprobs {
            write_key(out, "logprobs", false);
            if logprobs.is_empty() {
                out.extend_from_slice(b"[]");
            } else {
                write_value(out, logprobs);
            }
        }
        if let Some(output_index) = self.output_index {
            write_key(out, "output_index", false);
            write_usize(out, output_index);
        }
        if let Some(part) = &self.part {
            write_key(out, "part", false);
            write_value(out, part);
        }
        if let Some(response) = &self.response {
            write_key(out, "response", false);
            write_value(out, response);
        }
        write_key(out, "sequence_number", false);
        write_u64(out, self.sequence_number);
        if let Some(text) = &self.text {
            write_key(out, "text", false);
            write_str(out, text);
        }
        out.push(b'}');
    }
}

/// Builds Responses events from processor events.
#[derive(Debug, Clone)]
pub struct ResponsesGenerator {
    config: ResponsesConfig,
    response: ResponseObject,
    sequence: u64,
    /// The last output item is still open.
    open: bool,
    /// The id of the latest item an event named, shared by its events: `(output index, id)`.
    item_id: Option<(usize, Arc<str>)>,
    /// The input of the open custom tool call.
    custom_input: CustomInput,
}

impl ResponsesGenerator {
    /// A generator for one stream.
    pub fn new(config: ResponsesConfig) -> Self {
        let created_at = config.created_at.unwrap_or_else(super::ids::unix_now);
        let response = ResponseObject::new(&config, created_at);
        Self {
            config,
            response,
            sequence: 0,
            open: false,
            item_id: None,
            custom_input: CustomInput::default(),
        }
    }

    fn event(&mut self, kind: &'static str) -> ResponsesEvent {
        let event = ResponsesEvent::new(kind, self.sequence);
        self.sequence += 1;
        event
    }

    fn lifecycle(&mut self, kind: &'static str) -> ResponsesEvent {
        let mut event = self.event(kind);
        event.response = Some(Box::new(self.response.clone()));
        event
    }

    /// `response.created` and `response.in_progress`.
    pub fn start(&mut self, _start: &StreamStart, out: &mut impl Emit<ResponsesEvent>) {
        let created = self.lifecycle("response.created");
        out.emit(created);
        let in_progress = self.lifecycle("response.in_progress");
        out.emit(in_progress);
    }

    fn item_event(&mut self, kind: &'static str, index: usize) -> ResponsesEvent {
        let mut event = self.event(kind);
        let id = match &self.item_id {
            Some((at, id)) if *at == index => Arc::clone(id),
            _ => {
                let id: Arc<str> = Arc::from(self.response.output[index].id());
                self.item_id = Some((index, Arc::clone(&id)));
                id
            }
        };
        event.item_id = Some(id);
        event.output_index = Some(index);
        event
    }

    fn add_item(&mut self, item: OutputItem, out: &mut impl Emit<ResponsesEvent>) -> usize {
        let index = self.response.output.len();
        self.response.output.push(item.clone());
        self.open = true;
        let mut event = self.event("response.output_item.added");
        event.item = Some(item);
        event.output_index = Some(index);
        out.emit(event);
        index
    }

    fn add_part(&mut self, index: usize, part: ContentPart, out: &mut impl Emit<ResponsesEvent>) {
        if let OutputItem::Reasoning { content, .. } | OutputItem::Message { content, .. } =
            &mut self.response.output[index]
        {
            content.push(part.clone());
        }
        let mut event = self.item_event("response.content_part.added", index);
        event.content_index = Some(0);
        event.part = Some(part);
        out.emit(event);
    }

    /// The open item of the given kind, opening a new one (closing the previous) if needed.
    fn text_item(&mut self, reasoning: bool, out: &mut impl Emit<ResponsesEvent>) -> usize {
        let last = self.response.output.len().checked_sub(1);
        if let Some(index) = last.filter(|_| self.open) {
            let matches = matches!(
                (&self.response.output[index], reasoning),
                (OutputItem::Reasoning { .. }, true) | (OutputItem::Message { .. }, false)
            );
            if matches {
                return index;
            }
        }
        self.close_open(false, "completed", out);
        let number = self.response.output.len();
        let id = &self.config.id;
        if reasoning {
            let item = OutputItem::Reasoning {
                id: format!("rs_{id}_{number}"),
                status: "in_progress",
                content: Vec::new(),
                summary: Vec::new(),
                encrypted_content: format!("{id}-{number}"),
            };
            let index = self.add_item(item, out);
            self.add_part(
                index,
                ContentPart::ReasoningText {
                    text: String::new(),
                },
                out,
            );
            index
        } else {
            let item = OutputItem::Message {
                id: format!("msg_{id}_{number}"),
                status: "in_progress",
                role: "assistant",
                phase: "final_answer",
                content: Vec::new(),
            };
            let index = self.add_item(item, out);
            let part = ContentPart::OutputText {
                annotations: Vec::new(),
                logprobs: Vec::new(),
                text: String::new(),
            };
            self.add_part(index, part, out);
            index
        }
    }

    /// Events for one output event.
    pub fn event_for(&mut self, event: OutputEvent, out: &mut impl Emit<ResponsesEvent>) {
        match event {
            OutputEvent::Reasoning(delta) => {
                let index = self.text_item(true, out);
                if let OutputItem::Reasoning { content, .. } = &mut self.response.output[index] {
                    if let Some(ContentPart::ReasoningText { text }) = content.first_mut() {
                        text.push_str(&delta.text);
                    }
                }
                let mut event = self.item_event("response.reasoning_text.delta", index);
                event.content_index = Some(0);
                event.delta = Some(delta.text);
                out.emit(event);
            }
            OutputEvent::Content(delta) => {
                let index = self.text_item(false, out);
                if let OutputItem::Message { content, .. } = &mut self.response.output[index] {
                    if let Some(ContentPart::OutputText { text, logprobs, .. }) =
                        content.first_mut()
                    {
                        text.push_str(&delta.text);
                        logprobs.extend(delta.logprobs.iter().cloned());
                    }
                }
                let mut event = self.item_event("response.output_text.delta", index);
                event.content_index = Some(0);
                event.delta = Some(delta.text);
                event.logprobs = Some(delta.logprobs);
                out.emit(event);
            }
            OutputEvent::ToolCallStart { id, name, .. } => {
                self.close_open(true, "completed", out);
                let number = self.response.output.len();
                let response_id = &self.config.id;
                let item = if self.config.custom_tools.contains(&name) {
                    self.custom_input = CustomInput::default();
                    OutputItem::CustomToolCall {
                        id: format!("ctc_{response_id}_{number}"),
                        status: "in_progress",
                        call_id: id,
                        name,
                        input: String::new(),
                    }
                } else {
                    let (namespace, name) = match self.config.namespace_tools.get(&name) {
                        Some((namespace, local)) => (Some(namespace.clone()), local.clone()),
                        None => (None, name),
                    };
                    OutputItem::FunctionCall {
                        id: format!("fc_{response_id}_{number}"),
                        status: "in_progress",
                        call_id: id,
                        name,
                        namespace,
                        arguments: String::new(),
                    }
                };
                self.add_item(item, out);
            }
            OutputEvent::ToolCallArguments { fragment, .. } => {
                let Some(index) = self
                    .response
                    .output
                    .len()
                    .checked_sub(1)
                    .filter(|_| self.open)
                else {
                    return;
                };
                match &mut self.response.output[index] {
                    OutputItem::FunctionCall { arguments, .. } => {
                        let text = fragment.json_text().into_owned();
                        arguments.push_str(&text);
                        let mut event =
                            self.item_event("response.function_call_arguments.delta", index);
                        event.delta = Some(text);
                        out.emit(event);
                    }
                    OutputItem::CustomToolCall { .. } => {
                        if let Some(delta) = self.custom_input.push(&fragment) {
                            self.custom_input_delta(index, delta, out);
                        }
                    }
                    OutputItem::Reasoning { .. } | OutputItem::Message { .. } => {}
                }
            }
        }
    }

    /// Closes the open item with `status`; a message closed for a tool call is `commentary`.
    fn close_open(
        &mut self,
        for_tool_call: bool,
        status: &'static str,
        out: &mut impl Emit<ResponsesEvent>,
    ) {
        let Some(index) = self
            .response
            .output
            .len()
            .checked_sub(1)
            .filter(|_| self.open)
        else {
            return;
        };
        self.open = false;
        if matches!(
            self.response.output[index],
            OutputItem::CustomToolCall { .. }
        ) {
            if let Some(held) = self.custom_input.finish() {
                self.custom_input_delta(index, held, out);
            }
        }
        let item = &mut self.response.output[index];
        item.set_status(status);
        match item.clone() {
            OutputItem::Reasoning { content, .. } => {
                let text = match content.first() {
                    Some(ContentPart::ReasoningText { text }) => text.clone(),
                    _ => String::new(),
                };
                let mut done = self.item_event("response.reasoning_text.done", index);
                done.content_index = Some(0);
                done.text = Some(text);
                out.emit(done);
                self.part_done(index, content, out);
            }
            OutputItem::Message { content, .. } => {
                if for_tool_call {
                    if let OutputItem::Message { phase, .. } = &mut self.response.output[index] {
                        *phase = "commentary";
                    }
                }
                let (text, logprobs) = match content.first() {
                    Some(ContentPart::OutputText { text, logprobs, .. }) => {
                        (text.clone(), logprobs.clone())
                    }
                    _ => (String::new(), Vec::new()),
                };
                let mut done = self.item_event("response.output_text.done", index);
                done.content_index = Some(0);
                done.logprobs = Some(logprobs);
                done.text = Some(text);
                out.emit(done);
                self.part_done(index, content, out);
            }
            OutputItem::FunctionCall { arguments, .. } => {
                let mut done = self.item_event("response.function_call_arguments.done", index);
                done.arguments = Some(arguments);
                out.emit(done);
            }
            OutputItem::CustomToolCall { input, .. } => {
                let mut done = self.item_event("response.custom_tool_call_input.done", index);
                done.input = Some(input);
                out.emit(done);
            }
        }
        let mut event = self.event("response.output_item.done");
        event.item = Some(self.response.output[index].clone());
        event.output_index = Some(index);
        out.emit(event);
    }

    /// Appends `delta` to the custom tool call at `index` and sends it.
    fn custom_input_delta(
        &mut self,
        index: usize,
        delta: String,
        out: &mut impl Emit<ResponsesEvent>,
    ) {
        if let OutputItem::CustomToolCall { input, .. } = &mut self.response.output[index] {
            input.push_str(&delta);
        }
        let mut event = self.item_event("response.custom_tool_call_input.delta", index);
        event.delta = Some(delta);
        out.emit(event);
    }

    fn part_done(
        &mut self,
        index: usize,
        content: Vec<ContentPart>,
        out: &mut impl Emit<ResponsesEvent>,
    ) {
        let mut event = self.item_event("response.content_part.done", index);
        event.content_index = Some(0);
        event.part = content.into_iter().next();
        out.emit(event);
    }

    /// Closes the open item; `response.completed` or `response.incomplete`.
    pub fn finish(
        &mut self,
        end: &StreamEnd,
        usage: &StreamUsage,
        out: &mut impl Emit<ResponsesEvent>,
    ) {
        let incomplete = match end {
            StreamEnd::Length => Some("max_output_tokens"),
            StreamEnd::ContentFilter => Some("content_filter"),
            StreamEnd::Stop { .. } | StreamEnd::StopSequence(_) => None,
        };
        self.close_open(
            false,
            if incomplete.is_some() {
                "incomplete"
            } else {
                "completed"
            },
            out,
        );
        self.response.usage = Some(ResponsesUsage {
            input_tokens: usage.prompt.prompt_tokens,
            input_tokens_details: InputTokensDetails {
                cached_tokens: usage.prompt.prompt_cache_hit_tokens,
            },
            output_tokens: usage.completion_tokens,
            output_tokens_details: OutputTokensDetails {
                // Counted whenever the output had a thinking stage, whatever the request's mode.
                reasoning_tokens: usage.reasoning_tokens.unwrap_or(0),
            },
            total_tokens: usage.total_tokens(),
        });
        self.response.completed_at = Some(super::ids::unix_now().max(self.response.created_at));
        let kind = match incomplete {
            Some(reason) => {
                self.response.status = "incomplete";
                self.response.incomplete_details = Some(IncompleteDetails { reason });
                "response.incomplete"
            }
            None => {
                self.response.status = "completed";
                "response.completed"
            }
        };
        let event = self.lifecycle(kind);
        out.emit(event);
    }
}

/// A complete (non-streamed) response, accumulated from events.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponsesResponse {
    response: ResponseObject,
}

impl ResponsesResponse {
    /// An empty in-progress response that knows nothing of the request (every request setting
    /// at its default) until the stream's own object replaces it when the stream starts.
    pub fn new(id: impl Into<String>, model: impl Into<String>, created_at: u64) -> Self {
        let config = ResponsesConfig {
            id: id.into(),
            model: model.into(),
            ..ResponsesConfig::default()
        };
        Self {
            response: ResponseObject::new(&config, created_at),
        }
    }

    /// Adds one event.
    pub fn accumulate(&mut self, event: &ResponsesEvent) {
        if let Some(response) = &event.response {
            self.response = (**response).clone();
            return;
        }
        let output = &mut self.response.output;
        match event.kind {
            "response.output_item.added" => {
                if let Some(item) = &event.item {
                    output.push(item.clone());
                }
            }
            "response.output_item.done" => {
                if let (Some(item), Some(slot)) = (
                    &event.item,
                    event.output_index.and_then(|index| output.get_mut(index)),
                ) {
                    *slot = item.clone();
                }
            }
            "response.content_part.added" => {
                let slot = event.output_index.and_then(|index| output.get_mut(index));
                if let (
                    Some(part),
                    Some(
                        OutputItem::Reasoning { content, .. } | OutputItem::Message { content, .. },
                    ),
                ) = (&event.part, slot)
                {
                    content.push(part.clone());
                }
            }
            _ => {
                let Some(slot) = event.output_index.and_then(|index| output.get_mut(index)) else {
                    return;
                };
                let delta = event.delta.as_deref().unwrap_or_default();
                match (event.kind, slot) {
                    ("response.reasoning_text.delta", OutputItem::Reasoning { content, .. }) => {
                        if let Some(ContentPart::ReasoningText { text }) = content.first_mut() {
                            text.push_str(delta);
                        }
                    }
                    ("response.output_text.delta", OutputItem::Message { content, .. }) => {
                        if let Some(ContentPart::OutputText { text, logprobs, .. }) =
                            content.first_mut()
                        {
                            text.push_str(delta);
                            logprobs.extend(event.logprobs.iter().flatten().cloned());
                        }
                    }
                    (
                        "response.function_call_arguments.delta",
                        OutputItem::FunctionCall { arguments, .. },
                    ) => {
                        arguments.push_str(delta);
                    }
                    (
                        "response.custom_tool_call_input.delta",
                        OutputItem::CustomToolCall { input, .. },
                    ) => {
                        input.push_str(delta);
                    }
                    _ => {}
                }
            }
        }
    }

    /// The response object.
    pub fn response(&self) -> &ResponseObject {
        &self.response
    }
}
