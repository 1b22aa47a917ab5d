//! DSML, the tool-call markup: the tag names that follow the DSML token.

/// The tag names that follow the DSML token in tool-call markup (they differ between V4 and
/// V4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DsmlTags {
    /// The block wrapping all calls (`tool_calls` / ` calls`).
    pub calls: &'static str,
    /// One call (`invoke` / ` invoke`).
    pub invoke: &'static str,
    /// One argument (`parameter` / ` parameter`).
    pub parameter: &'static str,
    /// Whether an invoke without parameters keeps an empty line between its tags.
    pub blank_line_in_empty_invoke: bool,
}
