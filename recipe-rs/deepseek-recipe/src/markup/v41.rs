//! The markup vocabulary of DeepSeek V4.1 (`DeepSeek-V4.1-Flash`).

use super::DsmlTags;

/// V4.1's DSML tags, each behind a space: ` calls`, ` invoke`, ` parameter`; an invoke without
/// parameters keeps a blank line.
pub const DSML_TAGS: DsmlTags = DsmlTags {
    calls: " calls",
    invoke: " invoke",
    parameter: " parameter",
    blank_line_in_empty_invoke: true,
};
