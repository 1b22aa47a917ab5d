//! What distinguishes one prompt format from another: the settings [`super::v4`] and
//! [`super::v41`] fill in and the shared renderer reads.

use super::json::NumberStyle;
use crate::conversation::ReasoningEffort;
use crate::markup::DsmlTags;

/// Where system messages go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SystemLayout {
    /// All system messages are joined into plain text right after BOS (V4: no system token).
    Hoisted,
    /// Each system message renders in place behind the system token (V4.1).
    InPlace,
}

/// The settings of one prompt format.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dialect {
    /// Where system messages go.
    pub(crate) system_layout: SystemLayout,
    /// DSML tag names.
    pub(crate) dsml: DsmlTags,
    /// Whether an assistant turn's tool calls (and so their results) are ordered by call id (V4)
    /// rather than kept in request order (V4.1).
    pub(crate) sort_tool_calls_by_id: bool,
    /// Float spelling in rendered JSON.
    pub(crate) numbers: NumberStyle,
    /// The reasoning-effort preamble shown in thinking mode (`None`: nothing).
    pub(crate) effort_text: fn(ReasoningEffort) -> Option<&'static str>,
    /// The response-format section for `json_object`.
    pub(crate) json_object_section: &'static str,
    /// Whether empty user texts add nothing to a user turn (V4) rather than a blank-line
    /// separator like any other text (V4.1).
    pub(crate) skip_empty_user_texts: bool,
    /// Tool results right after user text open a new user turn (V4) instead of continuing it
    /// after a blank line (V4.1).
    pub(crate) tool_results_open_turn_after_text: bool,
    /// Whether a latest reminder right after another one is left out (V4.1).
    pub(crate) skip_repeated_latest_reminders: bool,
    /// Whether a prefix message with nothing but empty system messages before it (and no
    /// response-format section) is continued without thinking (`</think>` and its content,
    /// reasoning left out), as V4.1 does.
    pub(crate) leading_prefix_without_thinking: bool,
}
