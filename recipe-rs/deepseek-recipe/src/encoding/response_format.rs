//! The response-format section of the system block.

use serde_json::Value;

use super::json::{write_value, NumberStyle};
use super::prompt::PromptBuilder;
use crate::conversation::ResponseFormat;

/// The introduction shared by every schema-based format section.
pub(crate) const SCHEMA_INTRO: &str =
    "\n\n## Response Format:\n\nYou MUST strictly adhere to the following schema to reply:\n";

/// Whether `format` adds a section to the system block.
pub(crate) fn has_response_format_section(format: ResponseFormat) -> bool {
    matches!(
        format,
        ResponseFormat::JsonObject | ResponseFormat::JsonSchema
    )
}

/// Writes the section for `format`: `json_object_section` for JSON objects, the schema (as the
/// request gave it) for JSON schemas, nothing for text and regular expressions.
pub(crate) fn write_response_format_section(
    builder: &mut PromptBuilder,
    format: ResponseFormat,
    schema: Option<&Value>,
    json_object_section: &str,
    style: NumberStyle,
) {
    match format {
        ResponseFormat::JsonObject => builder.text(json_object_section),
        ResponseFormat::JsonSchema => {
            let mut section = SCHEMA_INTRO.to_owned();
            write_value(&mut section, schema.unwrap_or(&Value::Null), style);
            builder.text(&section);
        }
        ResponseFormat::Text | ResponseFormat::Regex => {}
    }
}
