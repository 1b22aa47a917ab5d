//! What the grammar of a constrained output depends on, read from a converted request.

use crate::converted::{ConvertedRequest, OutputConstraint};
use crate::encoding::Encoding;
use crate::markup::{DsmlTags, SpecialTokens};
use crate::tokenizer::Tokenizer;

/// Everything the grammar of a constrained output depends on.
#[derive(Debug, Clone, Copy)]
pub struct GrammarSpec<'a> {
    /// What the output must be.
    pub constraint: &'a OutputConstraint,
    /// The spellings of the thinking end and the DSML token.
    pub special_tokens: &'a SpecialTokens,
    /// The DSML tags of the prompt format.
    pub dsml_tags: DsmlTags,
    /// The output starts with reasoning, closed by the thinking-end token.
    pub thinking: bool,
    /// The prompt already opened the tool-call block.
    pub starts_in_tool_calls: bool,
    /// The id of the thinking-end token, which the grammar names by id; `None`: the tokenizer
    /// has no such token, and the grammar asks for its spelling as text.
    pub think_end_id: Option<u32>,
}

impl<'a> GrammarSpec<'a> {
    /// The spec of a converted request rendered with `encoding` and tokenized by `tokenizer`
    /// (which gives the thinking-end id); `None` when the request has no constraint.
    pub fn for_request(
        converted: &'a ConvertedRequest,
        encoding: &'a Encoding,
        tokenizer: &Tokenizer,
    ) -> Option<Self> {
        let constraint = converted.inference_options.output_constraint.as_ref()?;
        let options = &converted.parsing_options;
        // Starting inside the tool-call block wins over reasoning, as in the output parser.
        let thinking = options
            .thinking_initial_stage
            .is_some_and(|stage| stage.starts_in_reasoning())
            && !options.starts_in_tool_calls;
        let special_tokens = encoding.special_tokens();
        Some(Self {
            constraint,
            special_tokens,
            dsml_tags: encoding.dsml_tags(),
            thinking,
            starts_in_tool_calls: options.starts_in_tool_calls,
            think_end_id: tokenizer.token_to_id(&special_tokens.thinking_end),
        })
    }
}
