//! OpenAI Responses: the generator of stream events and the accumulation of events into the
//! complete `response` object.

use std::sync::Arc;

use super::config::GeneratorConfig;
use super::custom_input::CustomInput;
use super::events::{Emit, OutputEvent, StreamEnd, StreamStart, StreamUsage};
use super::ids::unix_now;
use crate::converted::ResponsesContext;
use crate::protocol::output::responses::{
    ContentPart, IncompleteDetails, InputTokensDetails, OutputItem, OutputTokensDetails,
    ResponseObject, ResponsesEvent, ResponsesUsage,
};

/// The in-progress response object `id` of `model` for a request of `context`.
fn response_object(
    id: &str,
    model: &str,
    context: &ResponsesContext,
    created_at: u64,
) -> ResponseObject {
    ResponseObject {
        id: id.to_owned(),
        object: "response",
        created_at,
        status: "in_progress",
        background: false,
        completed_at: None,
        content_filters: None,
        error: None,
        frequency_penalty: 0.0,
        incomplete_details: None,
        instructions: context.echo.instructions.clone(),
        max_output_tokens: context.echo.max_output_tokens,
        max_tool_calls: None,
        model: model.to_owned(),
        moderation: None,
        output: Vec::new(),
        parallel_tool_calls: true,
        presence_penalty: 0.0,
        previous_response_id: None,
        prompt_cache_key: None,
        prompt_cache_retention: None,
        reasoning: context.reasoning.clone(),
        safety_identifier: None,
        service_tier: "default",
        store: false,
        temperature: context.echo.temperature,
        text: context.text.clone(),
        tool_choice: context.tool_choice.clone(),
        tools: context.tools.clone(),
        top_logprobs: context.echo.top_logprobs,
        top_p: context.echo.top_p,
        truncation: "disabled",
        usage: None,
        user: context.echo.user.clone(),
        metadata: serde_json::Map::new(),
    }
}

/// Builds Responses events from processor events.
#[derive(Debug, Clone)]
pub struct ResponsesGenerator {
    /// The response id.
    id: String,
    /// The request values the response reports, and how tool names map back.
    context: ResponsesContext,
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
    /// A generator for one stream of `config`, whose request is described by `context`.
    pub fn new(config: &GeneratorConfig, context: &ResponsesContext) -> Self {
        let identity = &config.identity;
        let created_at = identity.created.unwrap_or_else(unix_now);
        let response = response_object(&identity.id, &identity.model, context, created_at);
        Self {
            id: identity.id.clone(),
            context: context.clone(),
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
        let id = &self.id;
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
                let response_id = &self.id;
                let item = if self.context.custom_tools.contains(&name) {
                    self.custom_input = CustomInput::default();
                    OutputItem::CustomToolCall {
                        id: format!("ctc_{response_id}_{number}"),
                        status: "in_progress",
                        call_id: id,
                        name,
                        input: String::new(),
                    }
                } else {
                    let (namespace, name) = match self.context.namespace_tools.get(&name) {
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
    pub fn new(id: &str, model: &str, created_at: u64) -> Self {
        Self {
            response: response_object(id, model, &ResponsesContext::default(), created_at),
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
