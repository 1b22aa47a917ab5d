//! Rules over the converted message list: reasoning pass-back, the `json` keyword, prefix stage.

use super::options::ReasoningContentBehavior;
use crate::conversation::{Message, Role};
use crate::converted::ThinkingInitialStage;
use crate::error::ApiError;

/// Enforces `Reject` (thinking mode only): an assistant message after the last user message
/// that lacks reasoning fails when tools are declared or it made tool calls. `missing[i]`
/// says whether message `i` lacked reasoning in the request.
pub(crate) fn check_reasoning_pass_back(
    messages: &[Message],
    missing: &[bool],
    tools_declared: bool,
    behavior: ReasoningContentBehavior,
    thinking_mode: bool,
    error_message: &str,
) -> Result<(), ApiError> {
    if behavior != ReasoningContentBehavior::Reject || !thinking_mode {
        return Ok(());
    }
    let after_last_user = messages
        .iter()
        .rposition(|message| message.role == Role::User)
        .map_or(0, |index| index + 1);
    let offending =
        messages
            .iter()
            .zip(missing)
            .skip(after_last_user)
            .any(|(message, &missing)| {
                message.role == Role::Assistant
                    && missing
                    && (tools_declared
                        || message
                            .tool_calls
                            .as_ref()
                            .is_some_and(|calls| !calls.is_empty()))
            });
    if offending {
        return Err(ApiError::invalid_request(error_message));
    }
    Ok(())
}

/// Thinking on: missing reasoning becomes `""`; thinking off: all reasoning is dropped.
pub(crate) fn settle_reasoning(messages: &mut [Message], thinking_mode: bool) {
    for message in messages
        .iter_mut()
        .filter(|message| message.role == Role::Assistant)
    {
        if thinking_mode {
            message.reasoning_content.get_or_insert_with(String::new);
        } else {
            message.reasoning_content = None;
        }
    }
}

/// Whether any message text contains `json` (ASCII case-insensitive).
pub(crate) fn mentions_json<'a>(texts: impl IntoIterator<Item = &'a str>) -> bool {
    texts.into_iter().any(|text| {
        text.as_bytes()
            .windows(4)
            .any(|window| window.eq_ignore_ascii_case(b"json"))
    })
}

/// Where the model's output starts, from the thinking mode and a trailing prefix message.
pub(crate) fn thinking_initial_stage(
    thinking_mode: bool,
    messages: &[Message],
) -> Option<ThinkingInitialStage> {
    if !thinking_mode {
        return None;
    }
    let prefix = messages
        .last()
        .filter(|message| message.role == Role::Assistant && message.prefix);
    Some(match prefix {
        Some(message) if !message.content.is_empty() => ThinkingInitialStage::ContentContinuation,
        Some(message)
            if message
                .reasoning_content
                .as_deref()
                .is_some_and(|r| !r.is_empty()) =>
        {
            ThinkingInitialStage::ReasoningContinuation
        }
        _ => ThinkingInitialStage::ReasoningStart,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keyword_is_ascii_case_insensitive() {
        assert!(mentions_json(["give me JsOn please"]));
        assert!(!mentions_json(["ＪＳＯＮ", "js on"]));
    }
}
