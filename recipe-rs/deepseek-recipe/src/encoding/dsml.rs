//! DSML markup: the tool-call blocks of assistant turns (and of the tools-section example).

use serde_json::Value;

use super::json::{to_prompt_json, NumberStyle};
use super::prompt::PromptBuilder;
use crate::conversation::ToolCall;
use crate::markup::DsmlTags;

/// Writes DSML tags around a given DSML token spelling.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DsmlWriter<'a> {
    /// The DSML token spelling.
    pub(crate) token: &'a str,
    /// The tag names.
    pub(crate) names: DsmlTags,
}

/// One DSML parameter: a raw string or a JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Parameter<'a> {
    /// Written verbatim with `string="true"`.
    Text(&'a str),
    /// Written as prompt JSON with `string="false"`.
    Json(&'a Value),
}

impl DsmlWriter<'_> {
    /// `<` + token + `name` + `>`.
    pub(crate) fn open(&self, builder: &mut PromptBuilder, name: &str) {
        builder.text("<");
        builder.special(self.token);
        builder.text(name);
    }

    /// `</` + token + `name` + `>`.
    pub(crate) fn close(&self, builder: &mut PromptBuilder, name: &str) {
        builder.text("</");
        builder.special(self.token);
        builder.text(name);
        builder.text(">");
    }

    /// The opening tag of the calls block (`<⟨D⟩tool_calls>`).
    pub(crate) fn open_calls(&self, builder: &mut PromptBuilder) {
        self.open(builder, self.names.calls);
        builder.text(">");
    }

    /// A whole calls block for an assistant turn's tool calls.
    pub(crate) fn write_calls(
        &self,
        builder: &mut PromptBuilder,
        calls: &[&ToolCall],
        style: NumberStyle,
    ) {
        self.open_calls(builder);
        builder.text("\n");
        for call in calls {
            self.write_invoke(builder, call, style);
        }
        self.close(builder, self.names.calls);
    }

    fn write_invoke(&self, builder: &mut PromptBuilder, call: &ToolCall, style: NumberStyle) {
        self.open(builder, self.names.invoke);
        builder.text(" name=\"");
        builder.text(&call.name);
        builder.text("\">\n");
        let arguments = parse_arguments(&call.arguments);
        let parameters = parameters(&call.arguments, arguments.as_ref());
        if parameters.is_empty() && self.names.blank_line_in_empty_invoke {
            builder.text("\n");
        }
        for (name, parameter) in parameters {
            self.write_parameter(builder, name, &parameter, style);
        }
        self.close(builder, self.names.invoke);
        builder.text("\n");
    }

    fn write_parameter(
        &self,
        builder: &mut PromptBuilder,
        name: &str,
        parameter: &Parameter<'_>,
        style: NumberStyle,
    ) {
        self.open(builder, self.names.parameter);
        builder.text(" name=\"");
        builder.text(name);
        match parameter {
            Parameter::Text(text) => {
                builder.text("\" string=\"true\">");
                builder.text(text);
            }
            Parameter::Json(value) => {
                builder.text("\" string=\"false\">");
                builder.text(&to_prompt_json(value, style));
            }
        }
        self.close(builder, self.names.parameter);
        builder.text("\n");
    }
}

/// The arguments as a JSON object, when they parse as one.
fn parse_arguments(arguments: &str) -> Option<serde_json::Map<String, Value>> {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// The parameters of one call: one per key of a JSON-object argument text, else a single raw
/// `arguments` parameter.
pub(crate) fn parameters<'a>(
    raw: &'a str,
    object: Option<&'a serde_json::Map<String, Value>>,
) -> Vec<(&'a str, Parameter<'a>)> {
    match object {
        Some(map) => map
            .iter()
            .map(|(key, value)| {
                let parameter = match value {
                    Value::String(text) => Parameter::Text(text),
                    other => Parameter::Json(other),
                };
                (key.as_str(), parameter)
            })
            .collect(),
        None => vec![("arguments", Parameter::Text(raw))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::markup::{v4, v41};

    const V4: DsmlTags = v4::DSML_TAGS;
    const V41: DsmlTags = v41::DSML_TAGS;

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: "c".to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        }
    }

    fn render(names: DsmlTags, calls: &[ToolCall]) -> (String, usize) {
        let mut builder = PromptBuilder::default();
        let calls: Vec<&ToolCall> = calls.iter().collect();
        DsmlWriter {
            token: "|D|",
            names,
        }
        .write_calls(&mut builder, &calls, NumberStyle::Shortest);
        let rendered = builder.finish();
        let specials = rendered
            .special_texts()
            .filter(|text| *text == "|D|")
            .count();
        (rendered.prompt, specials)
    }

    #[test]
    fn object_arguments_become_typed_parameters() {
        let (prompt, specials) = render(
            V4,
            &[call(
                "f",
                r#"{"s": "a\"b", "n": 1e-7, "o": {"x": [1, "é"]}}"#,
            )],
        );
        assert_eq!(
            prompt,
            "<|D|tool_calls>\n<|D|invoke name=\"f\">\n\
             <|D|parameter name=\"s\" string=\"true\">a\"b</|D|parameter>\n\
             <|D|parameter name=\"n\" string=\"false\">1e-7</|D|parameter>\n\
             <|D|parameter name=\"o\" string=\"false\">{\"x\": [1, \"é\"]}</|D|parameter>\n\
             </|D|invoke>\n</|D|tool_calls>"
        );
        assert_eq!(specials, 10);
    }

    #[test]
    fn other_arguments_are_one_raw_parameter() {
        for raw in ["[1, 2]", "\"s\"", "", "not json", "{\"v\": 1E400}"] {
            let (prompt, _) = render(V4, &[call("f", raw)]);
            let expected =
                format!("<|D|parameter name=\"arguments\" string=\"true\">{raw}</|D|parameter>\n");
            assert!(prompt.contains(&expected), "{raw}: {prompt}");
        }
    }

    #[test]
    fn empty_invokes_differ_between_versions() {
        let (v4, _) = render(V4, &[call("f", "{}")]);
        assert_eq!(
            v4,
            "<|D|tool_calls>\n<|D|invoke name=\"f\">\n</|D|invoke>\n</|D|tool_calls>"
        );
        let (v41, _) = render(V41, &[call("f", "{}")]);
        assert_eq!(
            v41,
            "<|D| calls>\n<|D| invoke name=\"f\">\n\n</|D| invoke>\n</|D| calls>"
        );
    }
}
