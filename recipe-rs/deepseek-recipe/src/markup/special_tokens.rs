//! The spelling table of the special tokens an encoding emits.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// One spelling of [`SpecialTokens`]: borrowed for the built-in spellings (so the default table
/// allocates nothing), owned for an override.
pub type Spelling = Cow<'static, str>;

/// How each special token is spelled in the prompt.
///
/// The defaults are the DeepSeek V4 / V4.1 spellings. A partial override (for example from a
/// request's `special_tokens` option) replaces only the spellings it names; see
/// [`SpecialTokens::with_overrides`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SpecialTokens {
    /// Start of the prompt.
    pub bos: Spelling,
    /// End of a finished assistant turn.
    pub eos: Spelling,
    /// Opens the reasoning block.
    pub thinking_start: Spelling,
    /// Closes the reasoning block.
    pub thinking_end: Spelling,
    /// Introduces a system block (V4.1 only).
    pub system: Spelling,
    /// Introduces a user turn.
    pub user: Spelling,
    /// Introduces an assistant turn.
    pub assistant: Spelling,
    /// Introduces a latest-reminder block.
    pub latest_reminder: Spelling,
    /// The DSML marker used inside tool-call markup (no angle brackets).
    pub dsml: Spelling,
    /// The image placeholder.
    pub image: Spelling,
    /// Grounding: opens a referring expression.
    pub ref_start: Spelling,
    /// Grounding: closes a referring expression.
    pub ref_end: Spelling,
    /// Grounding: opens a bounding box.
    pub box_start: Spelling,
    /// Grounding: closes a bounding box.
    pub box_end: Spelling,
    /// Grounding: opens a point.
    pub point_start: Spelling,
    /// Grounding: closes a point.
    pub point_end: Spelling,
    /// Grounding: opens a polygon.
    pub polygon_start: Spelling,
    /// Grounding: closes a polygon.
    pub polygon_end: Spelling,
}

/// A partial replacement of [`SpecialTokens`]: every field that is `Some` overrides that spelling.
///
/// Deserialises from the request-level `special_tokens` option (`{"user": "<|U|>", ...}`);
/// keys that name no spelling of this table are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecialTokenOverrides {
    /// Replaces [`SpecialTokens::bos`].
    pub bos: Option<String>,
    /// Replaces [`SpecialTokens::eos`].
    pub eos: Option<String>,
    /// Replaces [`SpecialTokens::thinking_start`].
    pub thinking_start: Option<String>,
    /// Replaces [`SpecialTokens::thinking_end`].
    pub thinking_end: Option<String>,
    /// Replaces [`SpecialTokens::system`].
    pub system: Option<String>,
    /// Replaces [`SpecialTokens::user`].
    pub user: Option<String>,
    /// Replaces [`SpecialTokens::assistant`].
    pub assistant: Option<String>,
    /// Replaces [`SpecialTokens::latest_reminder`].
    pub latest_reminder: Option<String>,
    /// Replaces [`SpecialTokens::dsml`].
    pub dsml: Option<String>,
    /// Replaces [`SpecialTokens::image`].
    pub image: Option<String>,
    /// Replaces [`SpecialTokens::ref_start`].
    pub ref_start: Option<String>,
    /// Replaces [`SpecialTokens::ref_end`].
    pub ref_end: Option<String>,
    /// Replaces [`SpecialTokens::box_start`].
    pub box_start: Option<String>,
    /// Replaces [`SpecialTokens::box_end`].
    pub box_end: Option<String>,
    /// Replaces [`SpecialTokens::point_start`].
    pub point_start: Option<String>,
    /// Replaces [`SpecialTokens::point_end`].
    pub point_end: Option<String>,
    /// Replaces [`SpecialTokens::polygon_start`].
    pub polygon_start: Option<String>,
    /// Replaces [`SpecialTokens::polygon_end`].
    pub polygon_end: Option<String>,
}

impl Default for SpecialTokens {
    fn default() -> Self {
        Self {
            bos: Cow::Borrowed("<｜begin▁of▁sentence｜>"),
            eos: Cow::Borrowed("<｜end▁of▁sentence｜>"),
            thinking_start: Cow::Borrowed("<think>"),
            thinking_end: Cow::Borrowed("</think>"),
            system: Cow::Borrowed("<｜System｜>"),
            user: Cow::Borrowed("<｜User｜>"),
            assistant: Cow::Borrowed("<｜Assistant｜>"),
            latest_reminder: Cow::Borrowed("<｜latest_reminder｜>"),
            dsml: Cow::Borrowed("｜DSML｜"),
            image: Cow::Borrowed("<｜image｜>"),
            ref_start: Cow::Borrowed("<｜ref｜>"),
            ref_end: Cow::Borrowed("<｜/ref｜>"),
            box_start: Cow::Borrowed("<｜box｜>"),
            box_end: Cow::Borrowed("<｜/box｜>"),
            point_start: Cow::Borrowed("<｜point｜>"),
            point_end: Cow::Borrowed("<｜/point｜>"),
            polygon_start: Cow::Borrowed("<｜polygon｜>"),
            polygon_end: Cow::Borrowed("<｜/polygon｜>"),
        }
    }
}

impl SpecialTokens {
    /// These spellings with the ones named in `overrides` replaced.
    pub fn with_overrides(mut self, overrides: &SpecialTokenOverrides) -> Self {
        let pairs: [(&mut Spelling, &Option<String>); 18] = [
            (&mut self.bos, &overrides.bos),
            (&mut self.eos, &overrides.eos),
            (&mut self.thinking_start, &overrides.thinking_start),
            (&mut self.thinking_end, &overrides.thinking_end),
            (&mut self.system, &overrides.system),
            (&mut self.user, &overrides.user),
            (&mut self.assistant, &overrides.assistant),
            (&mut self.latest_reminder, &overrides.latest_reminder),
            (&mut self.dsml, &overrides.dsml),
            (&mut self.image, &overrides.image),
            (&mut self.ref_start, &overrides.ref_start),
            (&mut self.ref_end, &overrides.ref_end),
            (&mut self.box_start, &overrides.box_start),
            (&mut self.box_end, &overrides.box_end),
            (&mut self.point_start, &overrides.point_start),
            (&mut self.point_end, &overrides.point_end),
            (&mut self.polygon_start, &overrides.polygon_start),
            (&mut self.polygon_end, &overrides.polygon_end),
        ];
        for (spelling, replacement) in pairs {
            if let Some(replacement) = replacement {
                *spelling = Cow::Owned(replacement.clone());
            }
        }
        self
    }

    /// Whether every spelling is the default one.
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// Every spelling of the table, in field order.
    pub fn spellings(&self) -> [&str; 18] {
        [
            &self.bos,
            &self.eos,
            &self.thinking_start,
            &self.thinking_end,
            &self.system,
            &self.user,
            &self.assistant,
            &self.latest_reminder,
            &self.dsml,
            &self.image,
            &self.ref_start,
            &self.ref_end,
            &self.box_start,
            &self.box_end,
            &self.point_start,
            &self.point_end,
            &self.polygon_start,
            &self.polygon_end,
        ]
    }

    /// The eight grounding spellings, which stay special inside assistant content and reasoning.
    pub fn grounding(&self) -> [&str; 8] {
        [
            &self.ref_start,
            &self.ref_end,
            &self.box_start,
            &self.box_end,
            &self.point_start,
            &self.point_end,
            &self.polygon_start,
            &self.polygon_end,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_only_named_spellings() {
        let overrides: SpecialTokenOverrides =
            serde_json::from_str(r#"{"user": "<|U|>", "dsml": "|D|"}"#).expect("valid overrides");
        let tokens = SpecialTokens::default().with_overrides(&overrides);
        assert_eq!(tokens.user, "<|U|>");
        assert_eq!(tokens.dsml, "|D|");
        assert_eq!(tokens.assistant, "<｜Assistant｜>");
    }

    #[test]
    fn unknown_override_keys_are_ignored() {
        let overrides: SpecialTokenOverrides =
            serde_json::from_str(r#"{"usr": "x"}"#).expect("unknown keys are accepted");
        assert_eq!(overrides, SpecialTokenOverrides::default());
    }
}
