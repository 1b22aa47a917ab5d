//! The markup vocabulary of DeepSeek V4 (`DeepSeek-V4-Pro`).

use super::DsmlTags;

/// V4's DSML tags: `tool_calls`, `invoke`, `parameter`; an invoke without parameters has no
/// blank line.
pub const DSML_TAGS: DsmlTags = DsmlTags {
    calls: "tool_calls",
    invoke: "invoke",
    parameter: "parameter",
    blank_line_in_empty_invoke: false,
};
