//! Tool declarations and tool choice: the checks every protocol shares.

use serde::Serialize;
use serde_json::{json, Value};

use super::meta_schema::meta_schema_error;
use super::strict_schema::{normalize_strict_schema, StrictSchemaError};
use crate::conversation::{Tool, ToolChoice};
use crate::error::ApiError;

/// Longest accepted function name, in UTF-8 bytes.
const MAX_TOOL_NAME_BYTES: usize = 128;

/// A function tool as declared in a request, before validation.
#[derive(Debug, Clone)]
pub(crate) struct FunctionDecl {
    /// Function name.
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// Argument schema as sent.
    pub parameters: Option<Value>,
    /// Strict flag as sent (`None` where the protocol ignores it).
    pub strict: Option<bool>,
    /// Loaded on demand (Responses).
    pub defer_loading: bool,
    /// Where the name is in the request, for error messages (`None`: the name was already
    /// checked, e.g. a flattened namespace name).
    pub name_path: Option<String>,
}

/// A tool choice as requested, before resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ToolChoiceParam {
    /// No tool calls.
    None,
    /// The model decides.
    Auto,
    /// At least one call.
    Required,
    /// A call of this function.
    Named(String),
}

/// Checks a function name: non-empty, at most 128 UTF-8 bytes (the reference measures bytes),
/// `^[a-zA-Z0-9_-]+$`.
pub(crate) fn check_tool_name(name: &str, path: &str) -> Result<(), ApiError> {
    let message = if name.is_empty() {
        "empty string. Expected a string with minimum length 1, but got an empty string instead."
            .to_owned()
    } else if name.len() > MAX_TOOL_NAME_BYTES {
        format!(
            "string too long. Expected a string with maximum length {MAX_TOOL_NAME_BYTES}, but got a string with length {} instead.",
            name.len()
        )
    } else if !name
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
    {
        "string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
            .to_owned()
    } else {
        return Ok(());
    };
    Err(ApiError::invalid_request(format!(
        "Invalid '{path}': {message}"
    )))
}

/// Validates the argument schema of function `name` and returns what the prompt shows
/// (`{}` when absent, the strict normalisation when `strict`). Strict schemas are only read into
/// the strict model; others are compiled as JSON Schemas and must describe an object.
fn tool_parameters(
    name: &str,
    parameters: Option<Value>,
    strict: bool,
    parameters_required: bool,
) -> Result<Value, ApiError> {
    if strict {
        // A strict function without parameters takes no arguments: the reference renders (and
        // constrains to) the strict form of an empty object.
        let parameters = parameters.unwrap_or_else(|| json!({"type": "object"}));
        return normalize_strict_schema(&parameters, true).map_err(|err| {
            ApiError::invalid_request(match err {
                StrictSchemaError::Parse(detail) => {
                    format!("Invalid tool parameters schema : {detail}")
                }
                StrictSchemaError::Semantic(message) => message,
            })
        });
    }
    let schema_error = |detail: String| {
        ApiError::invalid_request(format!("Invalid schema for function '{name}': {detail}"))
    };
    let Some(parameters) = parameters.or(parameters_required.then_some(Value::Null)) else {
        return Ok(json!({}));
    };
    if let Some(detail) = meta_schema_error(&parameters) {
        return Err(schema_error(detail));
    }
    let top_type = parameters.get("type").unwrap_or(&Value::Null);
    if top_type != "object" {
        return Err(schema_error(format!(
            "schema must be a JSON Schema of 'type: \"object\"', got 'type: {}'.",
            serde_json::to_string(top_type).unwrap_or_default()
        )));
    }
    Ok(parameters)
}

/// Checks the names of the declarations that carry a name path, in order.
pub(crate) fn check_tool_names(declarations: &[FunctionDecl]) -> Result<(), ApiError> {
    for declaration in declarations {
        if let Some(path) = &declaration.name_path {
            check_tool_name(&declaration.name, path)?;
        }
    }
    Ok(())
}

/// The declarations as conversation tools. Unless the tool choice is `none`, each declaration
/// in turn is checked for a name used before and then for its schema (strict ones normalised).
pub(crate) fn declared_tools(
    declarations: Vec<FunctionDecl>,
    parameters_required: bool,
    choice_is_none: bool,
) -> Result<Vec<Tool>, ApiError> {
    if choice_is_none {
        return Ok(declarations
            .into_iter()
            .map(|declaration| Tool {
                name: declaration.name,
                description: declaration.description,
                parameters: declaration.parameters.unwrap_or_else(|| json!({})),
                strict: declaration.strict,
                defer_loading: declaration.defer_loading,
            })
            .collect());
    }
    let mut tools: Vec<Tool> = Vec::with_capacity(declarations.len());
    for declaration in declarations {
        if tools.iter().any(|tool| tool.name == declaration.name) {
            return Err(ApiError::invalid_request("Tool names must be unique."));
        }
        let strict = declaration.strict == Some(true);
        let parameters = tool_parameters(
            &declaration.name,
            declaration.parameters,
            strict,
            parameters_required,
        )?;
        tools.push(Tool {
            name: declaration.name,
            description: declaration.description,
            parameters,
            strict: declaration.strict,
            defer_loading: declaration.defer_loading,
        });
    }
    Ok(tools)
}

/// Rejects a mix of strict and non-strict functions (`flags`: each function's `strict`).
pub(crate) fn check_strict_mix(
    flags: impl IntoIterator<Item = Option<bool>>,
) -> Result<(), ApiError> {
    let (mut strict, mut loose) = (false, false);
    for flag in flags {
        if flag == Some(true) {
            strict = true;
        } else {
            loose = true;
        }
    }
    if strict && loose {
        return Err(ApiError::invalid_request(
            "Cannot use strict tool with non-strict tool in the same request",
        ));
    }
    Ok(())
}

/// Narrows the tools made available mid-conversation to the tool choice: `none` drops them
/// all, a named choice keeps only the named tool, any other choice keeps them. A system
/// message that only carried dropped tools goes with them (and its entry in `flags`).
pub(crate) fn narrow_loaded_tools(
    choice: Option<&ToolChoiceParam>,
    messages: &mut Vec<crate::conversation::Message>,
    flags: &mut Vec<bool>,
) {
    let kept: Option<&str> = match choice {
        Some(ToolChoiceParam::None) => None,
        Some(ToolChoiceParam::Named(name)) => Some(name),
        _ => return,
    };
    let mut index = 0;
    while index < messages.len() {
        let message = &mut messages[index];
        if !message.tools.is_empty() {
            message
                .tools
                .retain(|tool| Some(tool.name.as_str()) == kept);
            let emptied = message.tools.is_empty();
            if emptied && message.content.is_empty() && message.images.is_empty() {
                messages.remove(index);
                if index < flags.len() {
                    flags.remove(index);
                }
                continue;
            }
        }
        index += 1;
    }
}

/// The tool side of a conversation once the choice is resolved.
#[derive(Debug, Clone)]
pub(crate) struct ResolvedTools {
    /// The conversation's tool choice (a named choice becomes `Required`).
    pub tool_choice: ToolChoice,
    /// The tools to render and constrain to (empty for `none`, only the named tool for a
    /// named choice).
    pub tools: Vec<Tool>,
}

impl ResolvedTools {
    /// Whether the model may call tools (tools declared and the choice is not `none`).
    pub fn active(&self) -> bool {
        !self.tools.is_empty() && self.tool_choice != ToolChoice::None
    }
}

/// Resolves the tool choice against the declared tools and the thinking mode.
pub(crate) fn resolve_tool_choice(
    choice: Option<ToolChoiceParam>,
    tools: Vec<Tool>,
    thinking_mode: bool,
) -> Result<ResolvedTools, ApiError> {
    let choice = choice.unwrap_or(ToolChoiceParam::Auto);
    if tools.is_empty() {
        let tool_choice = if choice == ToolChoiceParam::None {
            ToolChoice::None
        } else {
            ToolChoice::Auto
        };
        return Ok(ResolvedTools { tool_choice, tools });
    }
    let resolved = match choice {
        ToolChoiceParam::None => ResolvedTools {
            tool_choice: ToolChoice::None,
            tools: Vec::new(),
        },
        ToolChoiceParam::Auto => ResolvedTools {
            tool_choice: ToolChoice::Auto,
            tools,
        },
        ToolChoiceParam::Required => ResolvedTools {
            tool_choice: ToolChoice::Required,
            tools,
        },
        ToolChoiceParam::Named(name) => {
            let Some(tool) = tools.into_iter().find(|tool| tool.name == name) else {
                return Err(unknown_tool_choice(&name));
            };
            ResolvedTools {
                tool_choice: ToolChoice::Required,
                tools: vec![tool],
            }
        }
    };
    if thinking_mode && resolved.tool_choice == ToolChoice::Required {
        return Err(ApiError::invalid_request(
            "Thinking mode does not support this tool_choice",
        ));
    }
    Ok(resolved)
}

/// The error for a named tool choice that names no declared tool.
pub(crate) fn unknown_tool_choice(name: &str) -> ApiError {
    ApiError::invalid_request(format!(
        "Invalid value for 'tool_call': no function named '{name}' was specified in the 'tools' parameter."
    ))
}

/// The tool list as the tool-call constraint describes it (compact JSON array; deferred tools
/// carry `"defer_loading": true` next to their function).
pub(crate) fn tool_constraint_schema(tools: &[Tool]) -> String {
    let entries: Vec<ConstraintEntry<'_>> = tools.iter().map(ConstraintEntry::of).collect();
    serde_json::to_string(&entries).unwrap_or_default()
}

/// One tool in the constraint schema, written from the tool without copying it: `type`, then
/// `function` (name, description, parameters, strict; absent values as `null`), then
/// `defer_loading` when set.
#[derive(Serialize)]
struct ConstraintEntry<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: ConstraintFunction<'a>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    defer_loading: bool,
}

/// The `function` object of a `ConstraintEntry`.
#[derive(Serialize)]
struct ConstraintFunction<'a> {
    name: &'a str,
    description: Option<&'a str>,
    parameters: &'a Value,
    strict: Option<bool>,
}

impl<'a> ConstraintEntry<'a> {
    fn of(tool: &'a Tool) -> Self {
        Self {
            kind: "function",
            function: ConstraintFunction {
                name: &tool.name,
                description: tool.description.as_deref(),
                parameters: &tool.parameters,
                strict: tool.strict,
            },
            defer_loading: tool.defer_loading,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Tool {
        Tool {
            name: name.into(),
            description: None,
            parameters: json!({}),
            strict: None,
            defer_loading: false,
        }
    }

    #[test]
    fn named_choice_narrows_and_thinking_rejects_it() {
        let tools = vec![tool("a"), tool("b")];
        let resolved = resolve_tool_choice(
            Some(ToolChoiceParam::Named("b".into())),
            tools.clone(),
            false,
        )
        .unwrap();
        assert_eq!(resolved.tool_choice, ToolChoice::Required);
        assert_eq!(resolved.tools, vec![tool("b")]);
        let err = resolve_tool_choice(
            Some(ToolChoiceParam::Named("zz".into())),
            tools.clone(),
            true,
        )
        .unwrap_err();
        assert!(err.error.message.contains("no function named 'zz'"));
        let err = resolve_tool_choice(Some(ToolChoiceParam::Required), tools, true).unwrap_err();
        assert_eq!(
            err.error.message,
            "Thinking mode does not support this tool_choice"
        );
    }

    #[test]
    fn required_without_tools_becomes_auto() {
        let resolved =
            resolve_tool_choice(Some(ToolChoiceParam::Required), Vec::new(), true).unwrap();
        assert_eq!(resolved.tool_choice, ToolChoice::Auto);
        assert!(!resolved.active());
    }

    #[test]
    fn strict_mix_is_rejected() {
        assert!(check_strict_mix([Some(true), Some(true)]).is_ok());
        assert!(check_strict_mix([Some(true), None]).is_err());
    }

    #[test]
    fn tool_names_are_checked_in_order() {
        assert!(check_tool_name("get_weather-2", "tools[0].name").is_ok());
        let err = check_tool_name("a b", "tools[1].name").unwrap_err();
        assert!(err
            .error
            .message
            .starts_with("Invalid 'tools[1].name': string does not match"));
        let err = check_tool_name("", "tools[0].function.name").unwrap_err();
        assert!(err.error.message.contains("empty string"));
        // Length is measured in UTF-8 bytes, and checked before the pattern.
        let err = check_tool_name(&"é".repeat(65), "tools[0].name").unwrap_err();
        assert!(err
            .error
            .message
            .contains("got a string with length 130 instead"));
        let err = check_tool_name(&"é".repeat(64), "tools[0].name").unwrap_err();
        assert!(err.error.message.contains("does not match pattern"));
    }

    #[test]
    fn constraint_schema_lists_each_function_with_nulls_and_deferral() {
        let mut deferred = tool("b");
        deferred.description = Some("Büro \"x\"".into());
        deferred.parameters = json!({"type": "object", "properties": {"z": {}, "a": {}}});
        deferred.strict = Some(false);
        deferred.defer_loading = true;
        assert_eq!(
            tool_constraint_schema(&[tool("a"), deferred]),
            concat!(
                r#"[{"type":"function","function":{"name":"a","description":null,"#,
                r#""parameters":{},"strict":null}},"#,
                r#"{"type":"function","function":{"name":"b","description":"Büro \"x\"","#,
                r#""parameters":{"type":"object","properties":{"z":{},"a":{}}},"strict":false},"#,
                r#""defer_loading":true}]"#
            )
        );
    }
}
