//! Conversion settings: model table, thinking default, bounds and policy switches.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::converted::ModelVersion;
use crate::encoding::Encoding;
use crate::error::{Error, Result};
use crate::markup::{SpecialTokenOverrides, SpecialTokens};

/// What to do when thinking-mode history lacks the reasoning it must pass back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningContentBehavior {
    /// Treat missing reasoning as empty.
    #[default]
    FillEmpty,
    /// Reject the request with the protocol's "must be passed back" error.
    Reject,
}

/// What to do with web-search server tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WebSearchBehavior {
    /// Silently remove them.
    Drop,
    /// Reject the request.
    Reject,
}

/// The default V4 / V4.1 upper bound for `max_tokens` (384 Ki tokens).
pub const DEFAULT_MAX_TOKENS_UPPER_BOUND: u32 = 393_216;

/// The image placeholder spelling conversion writes into content by default.
pub const DEFAULT_IMAGE_TOKEN: &str = "<｜image｜>";

/// Settings for converting a protocol request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversionOptions {
    /// Thinking mode when the request chooses none.
    pub default_thinking_mode: bool,
    /// Missing reasoning pass-back policy.
    pub reasoning_content_behavior: ReasoningContentBehavior,
    /// Responses `web_search*` tools: dropped or rejected.
    pub responses_web_search: WebSearchBehavior,
    /// Messages server-tool blocks in history: dropped or rejected.
    pub messages_web_search: WebSearchBehavior,
    /// `max_tokens` bound in thinking mode.
    pub thinking_max_tokens_upper_bound: u32,
    /// `max_tokens` bound in non-thinking mode.
    pub non_thinking_max_tokens_upper_bound: u32,
    /// Exact (case-sensitive) model names and the versions they select.
    pub model_versions_by_name: BTreeMap<String, ModelVersion>,
    /// Special-token spelling overrides. Conversion itself reads only `image` (the placeholder
    /// it writes into content); the same overrides are meant for the encoding
    /// (`SpecialTokens::default().with_overrides(&options.special_tokens)`).
    pub special_tokens: SpecialTokenOverrides,
}

impl Default for ConversionOptions {
    fn default() -> Self {
        Self {
            default_thinking_mode: true,
            reasoning_content_behavior: ReasoningContentBehavior::FillEmpty,
            responses_web_search: WebSearchBehavior::Drop,
            messages_web_search: WebSearchBehavior::Reject,
            thinking_max_tokens_upper_bound: DEFAULT_MAX_TOKENS_UPPER_BOUND,
            non_thinking_max_tokens_upper_bound: DEFAULT_MAX_TOKENS_UPPER_BOUND,
            model_versions_by_name: BTreeMap::from([
                ("DeepSeek-V4-Pro".to_owned(), ModelVersion::DeepseekV4Pro),
                (
                    "DeepSeek-V4.1-Flash".to_owned(),
                    ModelVersion::DeepseekV41Flash,
                ),
            ]),
            special_tokens: SpecialTokenOverrides::default(),
        }
    }
}

/// The JSON form of [`ConversionOptions`] (every key optional, as in the request vectors).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OptionsJson {
    default_thinking_mode: Option<bool>,
    reasoning_content_behavior: Option<ReasoningContentBehavior>,
    responses_web_search: Option<WebSearchBehavior>,
    messages_web_search: Option<WebSearchBehavior>,
    thinking_max_tokens_upper_bound: Option<u32>,
    non_thinking_max_tokens_upper_bound: Option<u32>,
    model_versions_by_name: Option<BTreeMap<String, ModelVersion>>,
    model_aliases: Option<BTreeMap<String, ModelVersion>>,
    special_tokens: Option<SpecialTokenOverrides>,
}

impl ConversionOptions {
    /// Reads options from JSON: every key optional (absent = default);
    /// `model_versions_by_name` replaces the model table, then `model_aliases` adds to it.
    pub fn from_json(text: &str) -> Result<Self> {
        let json: OptionsJson = serde_json::from_str(text)
            .map_err(|err| Error::Parse(format!("invalid conversion options: {err}")))?;
        let mut options = Self::default();
        if let Some(value) = json.default_thinking_mode {
            options = options.with_default_thinking_mode(value);
        }
        if let Some(value) = json.reasoning_content_behavior {
            options = options.with_reasoning_content_behavior(value);
        }
        if let Some(value) = json.responses_web_search {
            options = options.with_responses_web_search(value);
        }
        if let Some(value) = json.messages_web_search {
            options = options.with_messages_web_search(value);
        }
        if let Some(value) = json.thinking_max_tokens_upper_bound {
            options = options.with_thinking_max_tokens_upper_bound(value);
        }
        if let Some(value) = json.non_thinking_max_tokens_upper_bound {
            options = options.with_non_thinking_max_tokens_upper_bound(value);
        }
        if let Some(table) = json.model_versions_by_name {
            options = options.with_model_versions_by_name(table);
        }
        for (name, version) in json.model_aliases.unwrap_or_default() {
            options = options.with_model_alias(name, version);
        }
        if let Some(overrides) = json.special_tokens {
            options = options.with_special_tokens(overrides);
        }
        Ok(options)
    }

    /// Sets the thinking mode used when the request does not choose.
    pub fn with_default_thinking_mode(mut self, value: bool) -> Self {
        self.default_thinking_mode = value;
        self
    }

    /// Sets the missing-reasoning policy.
    pub fn with_reasoning_content_behavior(mut self, value: ReasoningContentBehavior) -> Self {
        self.reasoning_content_behavior = value;
        self
    }

    /// Sets the Responses web-search policy.
    pub fn with_responses_web_search(mut self, value: WebSearchBehavior) -> Self {
        self.responses_web_search = value;
        self
    }

    /// Sets the Messages web-search policy.
    pub fn with_messages_web_search(mut self, value: WebSearchBehavior) -> Self {
        self.messages_web_search = value;
        self
    }

    /// Sets the thinking-mode `max_tokens` bound.
    pub fn with_thinking_max_tokens_upper_bound(mut self, value: u32) -> Self {
        self.thinking_max_tokens_upper_bound = value;
        self
    }

    /// Sets the non-thinking-mode `max_tokens` bound.
    pub fn with_non_thinking_max_tokens_upper_bound(mut self, value: u32) -> Self {
        self.non_thinking_max_tokens_upper_bound = value;
        self
    }

    /// Replaces the model table.
    pub fn with_model_versions_by_name(mut self, table: BTreeMap<String, ModelVersion>) -> Self {
        self.model_versions_by_name = table;
        self
    }

    /// Adds (or overrides) one model name.
    pub fn with_model_alias(mut self, name: impl Into<String>, version: ModelVersion) -> Self {
        self.model_versions_by_name.insert(name.into(), version);
        self
    }

    /// The encoding that renders `version`, with these options' special-token spellings (without
    /// overrides, one shared per process: building the spelling table allocates every spelling).
    pub fn encoding_for(&self, version: ModelVersion) -> Cow<'static, Encoding> {
        static V4: OnceLock<Encoding> = OnceLock::new();
        static V41: OnceLock<Encoding> = OnceLock::new();
        let (shared, encoding): (_, fn() -> Encoding) = match version {
            ModelVersion::DeepseekV4Pro => (&V4, Encoding::v4),
            ModelVersion::DeepseekV41Flash => (&V41, Encoding::v41),
        };
        if self.special_tokens == SpecialTokenOverrides::default() {
            return Cow::Borrowed(shared.get_or_init(encoding));
        }
        Cow::Owned(encoding().with_special_tokens(self.special_token_spellings()))
    }

    /// The full special-token table: the defaults with these options' overrides.
    pub fn special_token_spellings(&self) -> SpecialTokens {
        SpecialTokens::default().with_overrides(&self.special_tokens)
    }

    /// Sets the special-token spelling overrides.
    pub fn with_special_tokens(mut self, overrides: SpecialTokenOverrides) -> Self {
        self.special_tokens = overrides;
        self
    }

    /// The image placeholder spelling conversion writes into content.
    pub fn image_token(&self) -> &str {
        self.special_tokens
            .image
            .as_deref()
            .unwrap_or(DEFAULT_IMAGE_TOKEN)
    }

    /// The `max_tokens` bound for the resolved thinking mode.
    pub(crate) fn max_tokens_upper_bound(&self, thinking_mode: bool) -> u32 {
        if thinking_mode {
            self.thinking_max_tokens_upper_bound
        } else {
            self.non_thinking_max_tokens_upper_bound
        }
    }

    /// Looks a model name up; unknown names give the official 400.
    pub(crate) fn model_version(&self, model: &str) -> Result<ModelVersion, crate::ApiError> {
        self.model_versions_by_name
            .get(model)
            .copied()
            .ok_or_else(|| {
                let names: Vec<&str> = self
                    .model_versions_by_name
                    .keys()
                    .map(String::as_str)
                    .collect();
                crate::ApiError::invalid_request(format!(
                    "The supported API model names are {}, but you passed {model}.",
                    names.join(", ")
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::PromptFormat;

    #[test]
    fn encodings_are_shared_only_without_overrides() {
        let defaults = ConversionOptions::default();
        for (version, format) in [
            (ModelVersion::DeepseekV4Pro, Encoding::v4()),
            (ModelVersion::DeepseekV41Flash, Encoding::v41()),
        ] {
            let encoding = defaults.encoding_for(version);
            assert!(matches!(encoding, Cow::Borrowed(_)));
            assert_eq!(*encoding, format);
        }
        let overridden = ConversionOptions::default().with_special_tokens(SpecialTokenOverrides {
            user: Some("<|U|>".into()),
            ..SpecialTokenOverrides::default()
        });
        let encoding = overridden.encoding_for(ModelVersion::DeepseekV41Flash);
        assert!(matches!(encoding, Cow::Owned(_)));
        assert_eq!(encoding.format(), PromptFormat::V41);
        assert_eq!(encoding.special_tokens().user, "<|U|>");
        assert_eq!(encoding.special_tokens().bos, SpecialTokens::default().bos);
    }

    #[test]
    fn table_is_replaced_then_aliased() {
        let options = ConversionOptions::from_json(
            r#"{"model_versions_by_name": {"m": "DeepseekV4Pro"}, "model_aliases": {"a": "DeepseekV41Flash"}}"#,
        )
        .unwrap();
        assert_eq!(
            options.model_version("a").unwrap(),
            ModelVersion::DeepseekV41Flash
        );
        let err = options.model_version("DeepSeek-V4-Pro").unwrap_err();
        assert_eq!(
            err.error.message,
            "The supported API model names are a, m, but you passed DeepSeek-V4-Pro."
        );
    }

    #[test]
    fn empty_table_lists_nothing() {
        let options = ConversionOptions::default().with_model_versions_by_name(BTreeMap::new());
        let err = options.model_version("x").unwrap_err();
        assert_eq!(
            err.error.message,
            "The supported API model names are , but you passed x."
        );
    }

    #[test]
    fn image_token_follows_the_override() {
        let options =
            ConversionOptions::from_json(r#"{"special_tokens": {"image": "<|I|>"}}"#).unwrap();
        assert_eq!(options.image_token(), "<|I|>");
        assert_eq!(
            ConversionOptions::default().image_token(),
            DEFAULT_IMAGE_TOKEN
        );
    }
}
