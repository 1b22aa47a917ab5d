//! Constrained decoding: the grammar (llguidance's Lark dialect) of what a constrained request
//! may generate, built from its output constraint, its parsing options and the markup of its
//! prompt format, so that the output parser reads the generated text back as intended:
//!
//! - `json`: one JSON value of the schema (an object for an empty schema), compact, with the
//!   `", "` and `": "` separators of the JSON the model sees in its prompts;
//! - `regex`: text matching the pattern (whole output);
//! - `tool_call` (auto): free text, optionally followed by one DSML tool-call block;
//!   `tool_call_required`: a block with at least one call (the prompt may already open it);
//! - thinking (stage `ReasoningStart` / `ReasoningContinuation`): free reasoning text first,
//!   then the thinking-end token, then the above. Reasoning text never spells the thinking end,
//!   and no free text (reasoning or content) holds the DSML token outside a tool-call block: the
//!   parser would read it as markup, and a lone marker would reach the client as leaked markup.
//!
//! A backend compiles the grammar (e.g. llguidance's `LLMatcher`) and masks the logits with it.

mod pieces;
mod regex;
mod rules;
mod spec;
mod tools;

use serde_json::{Map, Value};

pub use spec::GrammarSpec;

use crate::converted::{ConvertedRequest, OutputConstraintKind};
use crate::encoding::Encoding;
use crate::error::Result;
use crate::tokenizer::Tokenizer;
use pieces::{constraint_error, free_text_regex, inline_json, load_json};
use regex::{lark_regex, lark_string};
use rules::Rules;

impl GrammarSpec<'_> {
    /// The Lark grammar (llguidance dialect) of the constrained output.
    ///
    /// # Errors
    /// [`Error::Constraint`](crate::Error::Constraint) for a constraint no grammar can express: a schema or tool list
    /// that is not valid JSON, a tool or required parameter the markup cannot carry, an enum
    /// without a value writable as raw text.
    pub fn grammar(&self) -> Result<String> {
        let mut rules = Rules::default();
        let body = body(self, &mut rules)?;
        if self.thinking {
            rules.add("reasoning", "REASONING? (LT REASONING?)*");
            rules.terminal("REASONING", &free_text_regex(self.special_tokens, true));
            let think_end = match self.think_end_id {
                Some(id) => format!("<[{id}]>"),
                None => lark_string(&self.special_tokens.thinking_end),
            };
            rules.add("start", &format!("reasoning {think_end} {body}"));
        } else {
            rules.add("start", &body);
        }
        Ok(rules.render())
    }
}

/// The grammar of a converted request's output constraint (see [`GrammarSpec::for_request`]
/// and [`GrammarSpec::grammar`]); `None` when the request has none.
///
/// # Errors
/// As [`GrammarSpec::grammar`].
pub fn constraint_grammar(
    converted: &ConvertedRequest,
    encoding: &Encoding,
    tokenizer: &Tokenizer,
) -> Result<Option<String>> {
    GrammarSpec::for_request(converted, encoding, tokenizer)
        .map(|spec| spec.grammar())
        .transpose()
}

/// The rule of the output after any reasoning.
fn body(spec: &GrammarSpec<'_>, rules: &mut Rules) -> Result<String> {
    let schema = &spec.constraint.schema;
    match spec.constraint.kind {
        OutputConstraintKind::Json => {
            Ok(rules.add("json_output", &inline_json(output_schema(schema)?)))
        }
        OutputConstraintKind::Regex => {
            let terminal = rules.terminal("REGEX_OUTPUT", &format!("/{}/", lark_regex(schema, "")));
            Ok(rules.add("regex_output", &terminal))
        }
        OutputConstraintKind::ToolCall => tools::tool_calls(spec, false, rules),
        OutputConstraintKind::ToolCallRequired => tools::tool_calls(spec, true, rules),
    }
}

/// The schema of a `json` constraint: an object for an empty schema.
fn output_schema(text: &str) -> Result<Map<String, Value>> {
    if text.trim().is_empty() {
        return Ok(Map::from_iter([("type".to_owned(), Value::from("object"))]));
    }
    match load_json(text, "response schema")? {
        Value::Object(schema) => Ok(schema),
        _ => Err(constraint_error(
            "the response schema must be a JSON object",
        )),
    }
}
