//! The tools section of the system block and the tool schema lines.

use serde_json::Value;

use super::dsml::DsmlWriter;
use super::json::{write_string, write_value, NumberStyle};
use super::prompt::PromptBuilder;
use crate::conversation::Tool;
use crate::markup::SpecialTokens;

/// Writes the `## Tools` section: how to call tools, then one schema line per listed tool.
pub(crate) fn write_tools_section(
    builder: &mut PromptBuilder,
    tokens: &SpecialTokens,
    dsml: DsmlWriter<'_>,
    tools: &[&Tool],
    style: NumberStyle,
) {
    let names = dsml.names;
    builder.text(
        "\n\n## Tools\n\nYou have access to a set of tools to help answer the user's question. \
         You can invoke tools by writing a \"",
    );
    dsml.open_calls(builder);
    builder.text("\" block like the following:\n\n");
    dsml.open_calls(builder);
    builder.text("\n");
    example_invoke(builder, dsml, "$TOOL_NAME");
    dsml.open(builder, names.parameter);
    builder.text(" name=\"$PARAMETER_NAME\" string=\"true|false\">$PARAMETER_VALUE");
    dsml.close(builder, names.parameter);
    builder.text("\n...\n");
    dsml.close(builder, names.invoke);
    builder.text("\n");
    example_invoke(builder, dsml, "$TOOL_NAME2");
    builder.text("...\n");
    dsml.close(builder, names.invoke);
    builder.text("\n");
    dsml.close(builder, names.calls);
    builder.text(
        "\n\nString parameters should be specified as is and set `string=\"true\"`. \
         For all other types (numbers, booleans, arrays, objects), pass the value in JSON format \
         and set `string=\"false\"`.\n\nIf thinking_mode is enabled (triggered by ",
    );
    builder.special(&tokens.thinking_start);
    builder.text("), you MUST output your complete reasoning inside ");
    builder.special(&tokens.thinking_start);
    builder.text("...");
    builder.special(&tokens.thinking_end);
    builder.text(" BEFORE any tool calls or final response.\n\nOtherwise, output directly after ");
    builder.special(&tokens.thinking_end);
    builder.text(" with tool calls or final response.\n\n### Available Tool Schemas\n\n");
    builder.text(&tool_lines(tools.iter().copied(), style));
    builder.text(
        "\n\nYou MUST strictly follow the above defined tool name and parameter schemas to \
         invoke tool calls.\n",
    );
}

/// Writes the `### Updated Tool Schemas` section of a system message that carries tools.
pub(crate) fn write_updated_tools_section(
    builder: &mut PromptBuilder,
    tools: &[Tool],
    style: NumberStyle,
) {
    builder.text("\n\n### Updated Tool Schemas\n\n");
    builder.text(&tool_lines(tools.iter(), style));
}

fn example_invoke(builder: &mut PromptBuilder, dsml: DsmlWriter<'_>, tool_name: &str) {
    dsml.open(builder, dsml.names.invoke);
    builder.text(" name=\"");
    builder.text(tool_name);
    builder.text("\">\n");
}

/// One `{"name": …, "description": …, "parameters": …}` line per tool, joined by newlines.
fn tool_lines<'a>(tools: impl Iterator<Item = &'a Tool>, style: NumberStyle) -> String {
    let mut out = String::new();
    for (index, tool) in tools.enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str("{\"name\": ");
        write_string(&mut out, &tool.name);
        out.push_str(", \"description\": ");
        write_string(&mut out, tool.description.as_deref().unwrap_or(""));
        out.push_str(", \"parameters\": ");
        match &tool.parameters {
            Value::Null => out.push_str("{}"),
            parameters => write_value(&mut out, parameters, style),
        }
        out.push('}');
    }
    out
}
