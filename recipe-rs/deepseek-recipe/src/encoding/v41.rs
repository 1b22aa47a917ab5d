//! DeepSeek V4.1 (`DeepSeek-V4.1-Flash`): system blocks behind `<｜System｜>`, spaced DSML tags,
//! a numeric reasoning effort.

use super::dialect::{Dialect, SystemLayout};
use super::json::NumberStyle;
use crate::conversation::ReasoningEffort;
use crate::markup::v41;

/// The V4.1 prompt format.
pub(crate) const DIALECT: Dialect = Dialect {
    system_layout: SystemLayout::InPlace,
    dsml: v41::DSML_TAGS,
    sort_tool_calls_by_id: false,
    numbers: NumberStyle::Python,
    effort_text,
    json_object_section: "\n\n## Response Format:\n\nYou MUST strictly adhere to the following \
                          schema to reply:\n{\"type\": \"json_object\"}",
    skip_empty_user_texts: false,
    tool_results_open_turn_after_text: false,
    skip_repeated_latest_reminders: true,
    leading_prefix_without_thinking: true,
};

/// V4.1 shows the effort as a number from 1 to 100: 50 (low), 75 (high, xhigh), 100 (max).
fn effort_text(effort: ReasoningEffort) -> Option<&'static str> {
    Some(match effort {
        ReasoningEffort::Low => {
            "Reasoning Effort: 50 (range 1-100, the higher the value, the more thorough the reasoning)\n\n"
        }
        ReasoningEffort::High | ReasoningEffort::Xhigh => {
            "Reasoning Effort: 75 (range 1-100, the higher the value, the more thorough the reasoning)\n\n"
        }
        ReasoningEffort::Max => {
            "Reasoning Effort: 100 (range 1-100, the higher the value, the more thorough the reasoning)\n\n"
        }
    })
}
