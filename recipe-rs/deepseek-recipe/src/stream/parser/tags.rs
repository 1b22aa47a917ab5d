//! The markup spellings the parser looks for, derived from the special-token table.

use crate::markup::SpecialTokens;

/// Starts a call anywhere inside a tool-call block (the tag around it is not checked).
pub(super) const INVOKE_START: &str = "invoke name=\"";
/// Starts a parameter anywhere inside an invoke (the tag around it is not checked).
pub(super) const PARAMETER_START: &str = "parameter name=";
/// The least consumed text remembered for tags that began before the held text.
const MIN_TAIL_BYTES: usize = 32;

/// The tags of the reasoning and tool-call grammar, spelled with the configured special tokens
/// (`</think>` and the DSML token by default), so the parser matches what the renderer writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tags {
    /// Closes the reasoning section (and is dropped wherever else it appears in content).
    pub think_end: String,
    /// The DSML token that every tool-call tag carries.
    pub dsml: String,
    /// Opens a tool-call block from reasoning or content (`<` + DSML).
    pub dsml_open: String,
    /// Closes a value, an invoke or the block (`</` + DSML).
    pub dsml_close: String,
    /// Ends a tool-call block (V4 and V4.1 spellings); other closing tags at block level do not.
    pub block_close: [String; 2],
    /// What the tool-call block between invokes looks for.
    pub block_markers: [String; 3],
    /// What an invoke between parameters looks for.
    pub invoke_markers: [String; 2],
    /// How many bytes of consumed text to remember: more than any tag.
    pub tail_bytes: usize,
}

impl Tags {
    /// The tags spelled with `tokens`' thinking-end and DSML spellings.
    pub fn new(tokens: &SpecialTokens) -> Self {
        let dsml = tokens.dsml.to_string();
        let dsml_close = format!("</{dsml}");
        let block_close = [
            format!("{dsml_close}tool_calls>"),
            format!("{dsml_close} calls>"),
        ];
        let longest_tag = block_close[0].len().max(tokens.thinking_end.len());
        let tail_bytes = MIN_TAIL_BYTES.max(longest_tag + 1);
        Self {
            think_end: tokens.thinking_end.to_string(),
            dsml_open: format!("<{dsml}"),
            block_markers: [
                INVOKE_START.to_owned(),
                block_close[0].clone(),
                block_close[1].clone(),
            ],
            invoke_markers: [PARAMETER_START.to_owned(), dsml_close.clone()],
            block_close,
            dsml_close,
            dsml,
            tail_bytes,
        }
    }

    /// Offset in `marker` of the special token it ends with (the DSML token or the thinking end),
    /// if it is a tag at all.
    pub fn special_token_in(&self, marker: &str) -> Option<usize> {
        [&self.dsml, &self.think_end]
            .into_iter()
            .filter(|token| !token.is_empty())
            .find_map(|token| marker.find(token.as_str()))
    }

    /// Whether `marker` carries the DSML token (is a tool-call tag).
    pub fn is_dsml_tag(&self, marker: &str) -> bool {
        !self.dsml.is_empty() && marker.contains(self.dsml.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markup::SpecialTokenOverrides;

    #[test]
    fn default_tags_are_the_v4_spellings() {
        let tags = Tags::new(&SpecialTokens::default());
        assert_eq!(tags.think_end, "</think>");
        assert_eq!(tags.dsml_open, "<｜DSML｜");
        assert_eq!(tags.dsml_close, "</｜DSML｜");
        assert_eq!(tags.block_close[1], "</｜DSML｜ calls>");
        assert_eq!(tags.special_token_in("</｜DSML｜tool_calls>"), Some(2));
        assert_eq!(tags.special_token_in("parameter name="), None);
    }

    #[test]
    fn overridden_spellings_change_every_tag() {
        let overrides = SpecialTokenOverrides {
            thinking_end: Some("</T>".to_owned()),
            dsml: Some("|D|".to_owned()),
            ..SpecialTokenOverrides::default()
        };
        let tags = Tags::new(&SpecialTokens::default().with_overrides(&overrides));
        assert_eq!(tags.think_end, "</T>");
        assert_eq!(tags.block_close[0], "</|D|tool_calls>");
        assert_eq!(tags.invoke_markers[1], "</|D|");
        assert!(tags.is_dsml_tag("<|D|"));
        assert!(!tags.is_dsml_tag("<｜DSML｜"));
    }

    #[test]
    fn long_spellings_widen_the_remembered_tail() {
        let overrides = SpecialTokenOverrides {
            dsml: Some("D".repeat(100)),
            ..SpecialTokenOverrides::default()
        };
        let tags = Tags::new(&SpecialTokens::default().with_overrides(&overrides));
        assert!(tags.tail_bytes > tags.block_close[0].len());
    }
}
