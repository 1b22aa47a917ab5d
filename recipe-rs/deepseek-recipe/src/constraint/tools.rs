//! The grammar of DSML tool calls: one line per tag, parameters in the order of the schema's
//! `properties`, string parameters raw with `string="true"`, all others as compact JSON with
//! `string="false"` (the layout the renderer writes in history, `docs/format.md` section 5).

use serde_json::{Map, Value};

use super::pieces::{constraint_error, free_text_regex, inline_json, load_json};
use super::regex::{lark_string, search_regex, ANY_TEXT};
use super::rules::{Rules, LT};
use super::spec::GrammarSpec;
use crate::error::Result;
use crate::markup::DsmlTags;

/// The tool-call part of a grammar: a block with one or more invokes (the prompt may already
/// have opened it), after free text unless it did; optional for `tool_call`.
pub(super) fn tool_calls(
    spec: &GrammarSpec<'_>,
    required: bool,
    rules: &mut Rules,
) -> Result<String> {
    let writer = DsmlMarkup {
        token: &spec.special_tokens.dsml,
        tags: spec.dsml_tags,
    };
    let tools = match load_json(&spec.constraint.schema, "tool list")? {
        Value::Array(tools) if !tools.is_empty() => tools,
        _ => {
            return Err(constraint_error(
                "the tool list must be a non-empty JSON array",
            ))
        }
    };
    let invokes = tools
        .iter()
        .map(|tool| invoke(tool, &writer, rules))
        .collect::<Result<Vec<_>>>()?;
    rules.add("invoke", &invokes.join(" | "));
    let close_block = lark_string(&writer.closing(writer.tags.calls));
    if spec.starts_in_tool_calls {
        return Ok(rules.add("calls", &format!("invoke+ {close_block}")));
    }
    // The opening tag is `<` + the rest, so it follows free text the way free text's own `<` does.
    let open_rest = lark_string(&format!("{}{}>\n", writer.token, writer.tags.calls));
    rules.add("block", &format!("{LT} {open_rest} invoke+ {close_block}"));
    rules.add("text", "TEXT? (LT TEXT?)*");
    rules.terminal("TEXT", &free_text_regex(spec.special_tokens, false));
    Ok(if required {
        rules.add("calls", "text block")
    } else {
        rules.add("content", "text block?")
    })
}

/// The DSML token spelling and the tag names of one prompt format.
struct DsmlMarkup<'a> {
    token: &'a str,
    tags: DsmlTags,
}

impl DsmlMarkup<'_> {
    /// `<` + token + `tag`.
    fn opening(&self, tag: &str) -> String {
        format!("<{}{tag}", self.token)
    }

    /// `</` + token + `tag` + `>`.
    fn closing(&self, tag: &str) -> String {
        format!("</{}{tag}>", self.token)
    }
}

/// The rule of one tool's invoke: its name, then its parameters.
fn invoke(tool: &Value, writer: &DsmlMarkup<'_>, rules: &mut Rules) -> Result<String> {
    let function = tool.get("function").and_then(Value::as_object);
    let Some(name) = function.and_then(|function| function.get("name")?.as_str()) else {
        return Err(constraint_error("every tool needs a function with a name"));
    };
    if name.is_empty() || name.contains([' ', '"', '\\', '<', '>', '\n']) {
        return Err(constraint_error(format!(
            "tool name {name:?} cannot be written in a DSML invoke tag"
        )));
    }
    let empty = Map::new();
    let parameters = function
        .and_then(|function| function.get("parameters")?.as_object())
        .unwrap_or(&empty);
    let items = parameter_list(name, parameters)?
        .into_iter()
        .map(|(key, schema, required)| {
            parameter(key, schema, parameters, writer, rules).map(|rule| (rule, required))
        })
        .collect::<Result<Vec<_>>>()?;
    let open_tag = lark_string(&format!(
        "{} name=\"{name}\">\n",
        writer.opening(writer.tags.invoke)
    ));
    let close_tag = lark_string(&format!("{}\n", writer.closing(writer.tags.invoke)));
    let sequence = parameter_sequence(&items, writer.tags, rules);
    let parts: Vec<&str> = [open_tag.as_str(), sequence.as_str(), close_tag.as_str()]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect();
    let rule = rules.fresh("invoke");
    Ok(rules.add(rule, &parts.join(" ")))
}

/// `(name, schema, required)` per argument, in `properties` order, then the required names
/// `properties` lacks; a name the parser cannot read back is left out, or refused if required.
fn parameter_list<'a>(
    tool: &str,
    parameters: &'a Map<String, Value>,
) -> Result<Vec<(&'a str, &'a Value, bool)>> {
    static ANY: Value = Value::Null;
    let properties = parameters.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let listed = properties
        .into_iter()
        .flatten()
        .map(|(key, schema)| (key.as_str(), schema, required.contains(&key.as_str())));
    let extras = required
        .iter()
        .filter(|key| !properties.is_some_and(|properties| properties.contains_key(**key)))
        .map(|key| (*key, &ANY, true));
    let mut result = Vec::new();
    for (key, schema, is_required) in listed.chain(extras) {
        if writable_parameter_name(key) {
            result.push((key, schema, is_required));
        } else if is_required {
            return Err(constraint_error(format!(
                "tool {tool:?}: required parameter {key:?} cannot be written as a DSML parameter"
            )));
        }
    }
    Ok(result)
}

/// Whether the parser reads `name="<name>"` back as the JSON key `"<name>"`: it copies the text
/// up to the first space verbatim as the key, so the name holds no space, and `"<name>"` must
/// already be a JSON string with that value.
fn writable_parameter_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|character| !" \"\\".contains(character) && character >= ' ')
}

/// The parameters in order, optional ones optional; V4.1 writes a blank line for none.
fn parameter_sequence(items: &[(String, bool)], tags: DsmlTags, rules: &mut Rules) -> String {
    let blank_line = tags.blank_line_in_empty_invoke;
    if items.is_empty() {
        return if blank_line { "\"\\n\"" } else { "" }.to_owned();
    }
    let sequence: Vec<String> = items
        .iter()
        .map(|(rule, required)| optional(rule, !required))
        .collect();
    if items.iter().any(|(_, required)| *required) || !blank_line {
        return sequence.join(" ");
    }
    // All optional on V4.1: either the blank line, or a non-empty ordered selection.
    let mut nonempty = String::new();
    for index in (0..items.len()).rev() {
        let rest: Vec<String> = items[index + 1..]
            .iter()
            .map(|(rule, _)| optional(rule, true))
            .collect();
        let first = format!("{} {}", items[index].0, rest.join(" "));
        let mut alternatives = vec![first.trim().to_owned()];
        if !nonempty.is_empty() {
            alternatives.push(nonempty);
        }
        let name = rules.fresh("some_parameters");
        nonempty = rules.add(name, &alternatives.join(" | "));
    }
    format!("(\"\\n\" | {nonempty})")
}

/// `rule`, followed by `?` when `optional`.
fn optional(rule: &str, optional: bool) -> String {
    if optional {
        format!("{rule}?")
    } else {
        rule.to_owned()
    }
}

/// One `<⟨D⟩parameter name="key" string="…">VALUE</⟨D⟩parameter>\n` line.
fn parameter(
    key: &str,
    schema: &Value,
    parameters: &Map<String, Value>,
    writer: &DsmlMarkup<'_>,
    rules: &mut Rules,
) -> Result<String> {
    let empty = Map::new();
    let schema = schema.as_object().unwrap_or(&empty);
    let is_text = schema.get("type").and_then(Value::as_str) == Some("string");
    let prefix = format!(
        "{} name=\"{key}\" string=\"{is_text}\">",
        writer.opening(writer.tags.parameter)
    );
    // What follows the `</` that ends the value.
    let close = format!("{}{}>\n", writer.token, writer.tags.parameter);
    if is_text {
        let name = rules.fresh("TEXT_VALUE");
        let value = rules.terminal(name, &text_value(schema)?);
        let rule = rules.fresh("parameter");
        let expansion = format!("{} {value} {}", lark_string(&prefix), lark_string(&close));
        return Ok(rules.add(rule, &expansion));
    }
    let name = rules.fresh("json_value");
    let json_rule = rules.add(name, &inline_json(with_definitions(schema, parameters)));
    let rule = rules.fresh("parameter");
    let expansion = format!(
        "{} {json_rule} {}",
        lark_string(&prefix),
        lark_string(&format!("</{close}"))
    );
    Ok(rules.add(rule, &expansion))
}

/// A property schema that still resolves the `#/$defs/…` references of the tool's schema.
fn with_definitions(schema: &Map<String, Value>, root: &Map<String, Value>) -> Map<String, Value> {
    let mut result = schema.clone();
    for key in ["$defs", "definitions"] {
        if let (Some(definitions), false) = (root.get(key), result.contains_key(key)) {
            result.insert(key.to_owned(), definitions.clone());
        }
    }
    result
}

/// The terminal of a raw string value *including the `</` that ends it*: the parser ends a
/// value at the first `</⟨D⟩`, so the value holds no `</` at all and the terminal ends at its
/// first `</` (one lexeme, no lexer ambiguity).
fn text_value(schema: &Map<String, Value>) -> Result<String> {
    let choices: Option<Vec<&str>> = match (schema.get("const"), schema.get("enum")) {
        (Some(Value::String(constant)), _) => Some(vec![constant.as_str()]),
        (_, Some(Value::Array(values))) => Some(values.iter().filter_map(Value::as_str).collect()),
        _ => None,
    };
    if let Some(choices) = choices {
        let texts: Vec<String> = choices
            .into_iter()
            .filter(|text| !text.contains("</"))
            .map(|text| lark_string(&format!("{text}</")))
            .collect();
        if texts.is_empty() {
            return Err(constraint_error(
                "no string value of the enum can be written as raw text",
            ));
        }
        return Ok(format!("({})", texts.join(" | ")));
    }
    let mut parts = vec![
        format!("/{ANY_TEXT}/"),
        format!("~/{ANY_TEXT}<\\x2F{ANY_TEXT}/"),
    ];
    let integer = |key: &str| {
        schema
            .get(key)
            .and_then(Value::as_number)
            .filter(|number| number.is_i64() || number.is_u64())
    };
    let (low, high) = (integer("minLength"), integer("maxLength"));
    if low.is_some() || high.is_some() {
        let low = low.and_then(serde_json::Number::as_u64).unwrap_or(0);
        let high = high
            .and_then(serde_json::Number::as_u64)
            .map(|high| high.to_string())
            .unwrap_or_default();
        parts.push(format!("/(?s:.{{{low},{high}}})/"));
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        parts.push(search_regex(pattern));
    }
    Ok(format!("({}) \"</\"", parts.join(" & ")))
}

#[cfg(test)]
mod tests {
    use super::super::spec::GrammarSpec;
    use crate::converted::{OutputConstraint, OutputConstraintKind};
    use crate::markup::{v4, SpecialTokens};

    fn required(starts_in_tool_calls: bool) -> String {
        let constraint = OutputConstraint {
            kind: OutputConstraintKind::ToolCallRequired,
            schema: r#"[{"type": "function", "function": {"name": "now", "parameters": {}}}]"#
                .to_owned(),
        };
        let special_tokens = SpecialTokens::default();
        let spec = GrammarSpec {
            constraint: &constraint,
            special_tokens: &special_tokens,
            dsml_tags: v4::DSML_TAGS,
            thinking: false,
            starts_in_tool_calls,
            think_end_id: None,
        };
        spec.grammar().unwrap()
    }

    #[test]
    fn a_required_call_without_an_opened_block_follows_free_text() {
        let grammar = required(false);
        assert!(grammar.contains(
            "\nblock: LT \"｜DSML｜tool_calls>\\n\" invoke+ \"</｜DSML｜tool_calls>\"\n"
        ));
        assert!(
            grammar.contains("\ncalls: text block\nstart: calls\n"),
            "{grammar}"
        );
        let opened = required(true);
        assert!(opened.contains("\ncalls: invoke+ \"</｜DSML｜tool_calls>\"\nstart: calls\n"));
        assert!(!opened.contains("block"), "{opened}");
    }

    #[test]
    fn unwritable_tools_are_refused() {
        let special_tokens = SpecialTokens::default();
        for (schema, message) in [
            ("[]", "the tool list must be a non-empty JSON array"),
            (
                r#"[{"type": "function"}]"#,
                "every tool needs a function with a name",
            ),
            (
                r#"[{"function": {"name": "a b"}}]"#,
                "tool name \"a b\" cannot be written in a DSML invoke tag",
            ),
            (
                r#"[{"function": {"name": "f", "parameters": {"required": ["a b"]}}}]"#,
                "tool \"f\": required parameter \"a b\" cannot be written as a DSML parameter",
            ),
        ] {
            let constraint = OutputConstraint {
                kind: OutputConstraintKind::ToolCall,
                schema: schema.to_owned(),
            };
            let spec = GrammarSpec {
                constraint: &constraint,
                special_tokens: &special_tokens,
                dsml_tags: v4::DSML_TAGS,
                thinking: false,
                starts_in_tool_calls: false,
                think_end_id: None,
            };
            assert_eq!(spec.grammar().unwrap_err().to_string(), message);
        }
    }
}
