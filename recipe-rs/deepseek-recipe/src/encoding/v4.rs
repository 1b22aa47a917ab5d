//! DeepSeek V4 (`DeepSeek-V4-Pro`): system text right after BOS, `tool_calls` DSML tags.

use super::dialect::{Dialect, SystemLayout};
use super::json::NumberStyle;
use crate::conversation::ReasoningEffort;
use crate::markup::v4;

/// The V4 prompt format.
pub(crate) const DIALECT: Dialect = Dialect {
    system_layout: SystemLayout::Hoisted,
    dsml: v4::DSML_TAGS,
    sort_tool_calls_by_id: true,
    numbers: NumberStyle::Shortest,
    effort_text,
    json_object_section: "\n\nYou are a helpful assistant designed to output JSON.\n\
                          ## Response Format:\n\nReply with JSON object ONLY.",
    skip_empty_user_texts: true,
    tool_results_open_turn_after_text: true,
    skip_repeated_latest_reminders: false,
    leading_prefix_without_thinking: false,
};

const ABSOLUTE_MAXIMUM: &str = "Reasoning Effort: Absolute maximum with no shortcuts permitted.\n\
You MUST be very thorough in your thinking and comprehensively decompose the problem to resolve \
the root cause, rigorously stress-testing your logic against all potential paths, edge cases, and \
adversarial scenarios.\n\
Explicitly write out your entire deliberation process, documenting every intermediate step, \
considered alternative, and rejected hypothesis to ensure absolutely no assumption is left \
unchecked.\n\n";

const BEYOND_MAXIMUM: &str = "Reasoning Effort: Beyond maximum — exhaustive, relentless, and \
uncompromising.\n\
You MUST reason with the utmost depth and rigor, leaving absolutely nothing to chance: \
exhaustively decompose the problem into its most fundamental components, trace every causal chain \
to its root, and resolve the underlying cause rather than any surface symptom.\n\
Do not stop reasoning until you have independently verified the solution from multiple angles and \
are certain that no assumption remains unchecked and no error remains undiscovered.\n\n";

/// V4 maps `high` and `xhigh` to the "Absolute maximum" text, `max` beyond it, `low` to nothing.
fn effort_text(effort: ReasoningEffort) -> Option<&'static str> {
    match effort {
        ReasoningEffort::Low => None,
        ReasoningEffort::High | ReasoningEffort::Xhigh => Some(ABSOLUTE_MAXIMUM),
        ReasoningEffort::Max => Some(BEYOND_MAXIMUM),
    }
}
