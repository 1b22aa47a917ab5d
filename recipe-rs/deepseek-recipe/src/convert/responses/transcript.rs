//! The message list the input items build: reasoning waiting for its assistant turn,
//! assistant messages in a row joined into one turn, and runs of calls with the outputs that
//! answer them.

use crate::conversation::{Message, Role, ToolCall};
use crate::convert::content::text_message;
use crate::error::ApiError;

/// A run of consecutive calls and the outputs answering them.
pub(super) struct CallGroup {
    /// Index of the assistant message that carries the calls.
    message_index: usize,
    /// The calls, in request order.
    calls: Vec<ToolCall>,
    /// Per call id, the tool message its output becomes.
    pub(super) outputs: Vec<(String, Message)>,
    /// The system messages of the tools loaded by the group's tool searches, in output order
    /// (they follow all the group's tool messages).
    pub(super) loaded: Vec<Message>,
}

/// The message list under construction.
#[derive(Default)]
pub(super) struct Transcript {
    pub(super) messages: Vec<Message>,
    pub(super) missing_reasoning: Vec<bool>,
    /// Reasoning waiting for the next assistant turn (`None`: no reasoning item seen).
    reasoning: Option<String>,
    /// Whether the last item was an assistant message (calls right after it join it).
    after_assistant: bool,
    /// The open call group, if any.
    group: Option<CallGroup>,
    /// Every call id so far (call ids are unique in a request).
    call_ids: Vec<String>,
    /// Every call id answered so far (one output per call).
    answered_ids: Vec<String>,
}

impl Transcript {
    /// Adds the texts of a reasoning item to the reasoning waiting for an assistant turn.
    pub(super) fn add_reasoning(&mut self, text: String) {
        self.reasoning = Some(match self.reasoning.take() {
            Some(earlier) if earlier.is_empty() => text,
            Some(earlier) if text.is_empty() => earlier,
            Some(earlier) => format!("{earlier}\n{text}"),
            None => text,
        });
    }

    /// Whether the last message is an assistant turn without text or calls (later reasoning
    /// and text join it).
    fn last_is_bare_assistant(&self) -> bool {
        self.after_assistant
            && self.messages.last().is_some_and(|last| {
                last.role == Role::Assistant && last.content.is_empty() && last.tool_calls.is_none()
            })
    }

    /// Reasoning waiting for a turn joins a bare assistant turn just before it.
    fn join_reasoning_to_last(&mut self) {
        if let Some(reasoning) = self.reasoning.take() {
            if let Some(last) = self.messages.last_mut() {
                last.reasoning_content = Some(match last.reasoning_content.take() {
                    Some(earlier) if !earlier.is_empty() => format!("{earlier}\n{reasoning}"),
                    _ => reasoning,
                });
            }
            if let Some(missing) = self.missing_reasoning.last_mut() {
                *missing = false;
            }
        }
    }

    /// Reasoning that no assistant message follows becomes an assistant turn of its own.
    pub(super) fn flush_reasoning(&mut self) -> Result<(), ApiError> {
        if self.reasoning.is_some() && self.last_is_bare_assistant() {
            self.join_reasoning_to_last();
            return Ok(());
        }
        if self.reasoning.is_some() {
            self.after_assistant = false;
            self.push_assistant(text_message(Role::Assistant, String::new()))?;
        }
        Ok(())
    }

    pub(super) fn push(&mut self, message: Message) -> Result<(), ApiError> {
        self.flush_reasoning()?;
        self.close_group()?;
        self.after_assistant = false;
        self.missing_reasoning.push(false);
        self.messages.push(message);
        Ok(())
    }

    pub(super) fn push_assistant(&mut self, mut message: Message) -> Result<(), ApiError> {
        if self.after_assistant && (self.reasoning.is_none() || self.last_is_bare_assistant()) {
            // Assistant messages in a row (no reasoning item between them, unless the first
            // is bare) are one turn. Empty texts add nothing to the joined content.
            self.join_reasoning_to_last();
            if let Some(last) = self.messages.last_mut() {
                if !last.content.is_empty() && !message.content.is_empty() {
                    last.content.push_str("\n\n");
                }
                last.content.push_str(&message.content);
                return Ok(());
            }
        }
        self.close_group()?;
        let reasoning = self.reasoning.take();
        self.missing_reasoning.push(reasoning.is_none());
        message.reasoning_content = reasoning;
        self.messages.push(message);
        self.after_assistant = true;
        Ok(())
    }

    /// Adds a call: to the open group while no output arrived, else to a new group carried by
    /// the assistant message just before it or by a new one.
    pub(super) fn push_call(&mut self, call: ToolCall) -> Result<(), ApiError> {
        if self.call_ids.contains(&call.id) {
            return Err(ApiError::invalid_request(format!(
                "Duplicate 'call_id': {}.",
                call.id
            )));
        }
        self.call_ids.push(call.id.clone());
        // A call joins the open run while some call of it still waits for its output.
        let waiting = |group: &CallGroup| {
            group
                .calls
                .iter()
                .any(|call| !group.outputs.iter().any(|(id, _)| *id == call.id))
        };
        if let Some(group) = self.group.as_mut().filter(|group| waiting(group)) {
            group.calls.push(call);
            return Ok(());
        }
        if self.reasoning.is_some() && self.last_is_bare_assistant() {
            // Reasoning after a bare assistant turn joins it, and so does the call.
            self.join_reasoning_to_last();
            self.close_group()?;
        } else if !self.after_assistant || self.reasoning.is_some() {
            self.after_assistant = false;
            self.push_assistant(text_message(Role::Assistant, String::new()))?;
        } else {
            self.close_group()?;
        }
        self.after_assistant = false;
        self.group = Some(CallGroup {
            message_index: self.messages.len() - 1,
            calls: vec![call],
            outputs: Vec::new(),
            loaded: Vec::new(),
        });
        Ok(())
    }

    /// Marks `call_id` answered: it must name a call of the open group that has no output yet.
    /// Returns the group, for the output.
    pub(super) fn answer(&mut self, call_id: &str) -> Result<&mut CallGroup, ApiError> {
        if self.answered_ids.iter().any(|id| id == call_id) {
            return Err(ApiError::invalid_request(format!(
                "Duplicate tool output for call_id: {call_id}."
            )));
        }
        let group = self
            .group
            .as_mut()
            .filter(|group| group.calls.iter().any(|call| call.id == call_id))
            .ok_or_else(|| {
                ApiError::invalid_request(format!(
                    "No tool call found for tool output with call_id {call_id}."
                ))
            })?;
        self.answered_ids.push(call_id.to_owned());
        Ok(group)
    }

    /// Ends the open group: every call needs an output; calls and outputs are written in
    /// call-id order.
    pub(super) fn close_group(&mut self) -> Result<(), ApiError> {
        let Some(mut group) = self.group.take() else {
            return Ok(());
        };
        // The reference reports an arbitrary call without output (its choice varies from run
        // to run); the first one in request order is reported here. Calls are written in id
        // order.
        if let Some(call) = group
            .calls
            .iter()
            .find(|call| !group.outputs.iter().any(|(id, _)| *id == call.id))
        {
            return Err(ApiError::invalid_request(format!(
                "No tool output found for tool call {}.",
                call.id
            )));
        }
        group.calls.sort_by(|left, right| left.id.cmp(&right.id));
        let mut results = Vec::new();
        for call in &group.calls {
            let position = group
                .outputs
                .iter()
                .position(|(id, _)| *id == call.id)
                .ok_or_else(|| {
                    ApiError::invalid_request(format!(
                        "No tool output found for tool call {}.",
                        call.id
                    ))
                })?;
            results.push(group.outputs.swap_remove(position).1);
        }
        results.append(&mut group.loaded);
        self.messages[group.message_index].tool_calls = Some(group.calls);
        for message in results {
            self.missing_reasoning.push(false);
            self.messages.push(message);
        }
        self.after_assistant = false;
        Ok(())
    }
}
