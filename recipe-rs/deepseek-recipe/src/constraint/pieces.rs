//! Pieces the grammars of every kind share: free text, inline JSON schemas, the constraint's JSON
//! and its errors.

use serde_json::{Map, Value};

use super::regex::{literal_regex, ANY_TEXT};
use crate::encoding::{to_prompt_json, NumberStyle};
use crate::error::{Error, Result};
use crate::markup::SpecialTokens;

/// `%json {…}` with the compact prompt-JSON style: no whitespace but the `", "` and `": "`
/// separators.
pub(super) fn inline_json(mut schema: Map<String, Value>) -> String {
    let style = serde_json::json!({
        "whitespace_flexible": false,
        "item_separator": ", ",
        "key_separator": ": ",
    });
    schema.insert("x-guidance".to_owned(), style);
    format!(
        "%json {}",
        to_prompt_json(&Value::Object(schema), NumberStyle::Python)
    )
}

/// Free text up to (excluding) the next `<`: never the DSML token, and with `no_think_end` never
/// the start of the thinking end. Free text is `TEXT? (LT TEXT?)*`, so every `<` is its own
/// lexeme and each text after a `<` is checked for the markup the output parser reacts to.
pub(super) fn free_text_regex(special_tokens: &SpecialTokens, no_think_end: bool) -> String {
    let dsml = literal_regex(&special_tokens.dsml);
    let mut parts = vec![format!("/[^<]+/ & ~/{ANY_TEXT}{dsml}{ANY_TEXT}/")];
    if no_think_end {
        let think_end = &special_tokens.thinking_end;
        parts.push(match think_end.strip_prefix('<') {
            Some(rest) => format!("~/{}{ANY_TEXT}/", literal_regex(rest)),
            None => format!("~/{ANY_TEXT}{}{ANY_TEXT}/", literal_regex(think_end)),
        });
    }
    parts.join(" & ")
}

/// Parses the JSON text of a constraint.
pub(super) fn load_json(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text)
        .map_err(|error| constraint_error(format!("the {what} is not valid JSON: {error}")))
}

pub(super) fn constraint_error(message: impl Into<String>) -> Error {
    Error::Constraint(message.into())
}
