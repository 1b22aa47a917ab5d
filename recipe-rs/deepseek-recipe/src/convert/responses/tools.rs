//! The declared tools of a Responses request as function declarations: functions, the
//! `apply_patch` custom tool, flattened namespaces, web search and tool search; and what tool
//! search outputs load and list.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::convert::options::{ConversionOptions, WebSearchBehavior};
use crate::convert::tools::{check_tool_name, FunctionDecl};
use crate::converted::ModelVersion;
use crate::error::ApiError;
use crate::protocol::responses::{
    InputItem, NamespaceMember, ResponsesFunctionTool, ResponsesRequest, ResponsesTool,
    ToolSearchExecution,
};

/// The description of the `apply_patch` custom tool as V4 Pro is shown it.
const APPLY_PATCH_DESCRIPTION_V4: &str = include_str!("apply_patch_description_v4.txt");
/// The description of the `apply_patch` custom tool as V4.1 Flash is shown it (one more blank
/// line after the first paragraph).
const APPLY_PATCH_DESCRIPTION_V41: &str = include_str!("apply_patch_description_v41.txt");

/// The only custom tool served.
const APPLY_PATCH: &str = "apply_patch";

/// The function name a client-side tool search call is rendered with.
pub(super) const TOOL_SEARCH_NAME: &str = "tool_search";

/// Flattened namespace function names with their `(namespace, name)`, in declaration order.
pub(super) type NamespaceFunctions = Vec<(String, (String, String))>;

/// The separator between namespace and function name in flattened names.
pub(super) fn namespace_separator(version: ModelVersion) -> &'static str {
    match version {
        ModelVersion::DeepseekV4Pro => "__",
        ModelVersion::DeepseekV41Flash => "::",
    }
}

impl ResponsesRequest {
    /// The flattened names of the declared namespace functions with their `(namespace, name)`,
    /// in declaration order.
    pub(super) fn namespace_functions(
        &self,
        options: &ConversionOptions,
    ) -> Result<NamespaceFunctions, ApiError> {
        let separator = namespace_separator(options.model_version(&self.model)?);
        let tools = self.tools.as_deref().unwrap_or_default();
        let mut names = flattened_names(tools, separator, &mut Vec::new()).into_iter();
        let mut functions = Vec::new();
        for tool in tools {
            if let ResponsesTool::Namespace(namespace) = tool {
                for member in &namespace.tools {
                    if let NamespaceMember::Function(function) = member {
                        let name = names.next().unwrap_or_default();
                        functions.push((name, (namespace.name.clone(), function.name.clone())));
                    }
                }
            }
        }
        Ok(functions)
    }
}

/// A function tool as a declaration (a declared tool's `defer_loading` has no effect: the
/// reference lists and constrains to it like any other).
fn function_declaration(
    function: ResponsesFunctionTool,
    name: String,
    name_path: Option<String>,
    _version: ModelVersion,
) -> FunctionDecl {
    FunctionDecl {
        name,
        name_path,
        description: function.description,
        parameters: function.parameters,
        strict: function.strict,
        defer_loading: false,
    }
}

/// A function of a namespace: named `<namespace><separator><name>`; V4.1 puts the namespace
/// description (when given) on a line before the function's.
fn namespace_member_declaration(
    namespace: &str,
    namespace_description: Option<&str>,
    mut function: ResponsesFunctionTool,
    version: ModelVersion,
) -> FunctionDecl {
    let name = format!(
        "{namespace}{}{}",
        namespace_separator(version),
        function.name
    );
    if let (ModelVersion::DeepseekV41Flash, Some(prefix)) = (
        version,
        namespace_description.filter(|description| !description.is_empty()),
    ) {
        function.description = Some(format!(
            "{prefix}\n{}",
            function.description.as_deref().unwrap_or_default()
        ));
    }
    function_declaration(function, name, None, version)
}

/// What a tool search output lists (the tool message's content).
pub(super) fn searched_tools_listing(
    index: usize,
    tools: Vec<ResponsesTool>,
) -> Result<Vec<Value>, ApiError> {
    let mut listing = Vec::new();
    let function_entry = |function: &ResponsesFunctionTool| {
        json!({
            "type": "function",
            "name": function.name,
            "description": function.description,
            "parameters": function.parameters,
            "strict": function.strict,
        })
    };
    for tool in tools {
        match tool {
            ResponsesTool::Function(function) => listing.push(function_entry(&function)),
            ResponsesTool::Custom(custom) => {
                listing.push(json!({"type": "custom", "name": custom.name}));
            }
            ResponsesTool::Namespace(namespace) => {
                for member in namespace.tools {
                    if let NamespaceMember::Function(function) = member {
                        let mut entry = function_entry(&function);
                        entry["namespace"] = json!({
                            "name": namespace.name,
                            "description": namespace.description.as_deref().unwrap_or_default(),
                        });
                        listing.push(entry);
                    }
                }
            }
            ResponsesTool::ToolSearch(tool_search) => listing.push(json!({
                "type": "tool_search",
                "execution": tool_search.execution,
                "description": tool_search.description,
                "parameters": tool_search.parameters,
            })),
            ResponsesTool::WebSearch(web_search) => listing.push(json!({
                "type": web_search.kind,
                "search_context_size": web_search.search_context_size,
                "user_location": web_search.user_location,
            })),
            ResponsesTool::Other => {
                return Err(ApiError::invalid_request(format!(
                    "input[{index}]: the enum variant ResponsesTool::Unsupported cannot be serialized"
                )));
            }
        }
    }
    Ok(listing)
}

/// The `apply_patch` custom tool as a function with one string parameter.
fn apply_patch_declaration(version: ModelVersion) -> FunctionDecl {
    let description = match version {
        ModelVersion::DeepseekV4Pro => APPLY_PATCH_DESCRIPTION_V4,
        ModelVersion::DeepseekV41Flash => APPLY_PATCH_DESCRIPTION_V41,
    };
    FunctionDecl {
        name: APPLY_PATCH.to_owned(),
        description: Some(description.to_owned()),
        parameters: Some(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "input": {
                    "type": "string",
                    "description": "The entire contents of the apply_patch command (the *** Begin Patch ... *** End Patch envelope)."
                }
            },
            "required": ["input"]
        })),
        strict: None,
        defer_loading: false,
        name_path: None,
    }
}

/// The flattened names of the namespace functions, in order: `<namespace><separator><name>`,
/// with `_1`, `_2`, … appended while the name is taken by a function declared outside a
/// namespace or by an earlier flattened function.
fn flattened_names(
    tools: &[ResponsesTool],
    separator: &str,
    taken: &mut Vec<String>,
) -> Vec<String> {
    taken.extend(tools.iter().filter_map(|tool| match tool {
        ResponsesTool::Function(function) => Some(function.name.clone()),
        _ => None,
    }));
    let mut names = Vec::new();
    for tool in tools {
        if let ResponsesTool::Namespace(namespace) = tool {
            for member in &namespace.tools {
                if let NamespaceMember::Function(function) = member {
                    let base = format!("{}{separator}{}", namespace.name, function.name);
                    let mut name = base.clone();
                    let mut suffix = 0;
                    while taken.contains(&name) {
                        suffix += 1;
                        name = format!("{base}_{suffix}");
                    }
                    taken.push(name.clone());
                    names.push(name);
                }
            }
        }
    }
    names
}

/// Flattens the declared tools into function declarations: custom `apply_patch` becomes a
/// function, namespaces are flattened, web search is dropped or rejected, other types dropped.
/// `prefix` goes before `tools[…]` in error paths (`input[3].` for a tool search output);
/// flattened names avoid the names in `taken`, which gains every name given here.
pub(super) fn tool_declarations(
    tools: Vec<ResponsesTool>,
    version: ModelVersion,
    web_search: WebSearchBehavior,
    prefix: &str,
    taken: &mut Vec<String>,
) -> Result<Vec<FunctionDecl>, ApiError> {
    let mut flattened = flattened_names(&tools, namespace_separator(version), taken).into_iter();
    let mut declarations = Vec::new();
    for (index, tool) in tools.into_iter().enumerate() {
        match tool {
            ResponsesTool::Function(function) => {
                let name = function.name.clone();
                check_tool_name(&name, &format!("{prefix}tools[{index}].name"))?;
                declarations.push(function_declaration(function, name, None, version));
            }
            ResponsesTool::Custom(custom) if custom.name == APPLY_PATCH => {
                declarations.push(apply_patch_declaration(version));
            }
            ResponsesTool::Custom(custom) => {
                return Err(ApiError::invalid_request(format!(
                    "Unsupported custom tool: '{}'. Only 'apply_patch' is supported.",
                    custom.name
                )));
            }
            ResponsesTool::Namespace(namespace) => {
                check_tool_name(&namespace.name, &format!("{prefix}tools[{index}].name"))?;
                let mut local_names: Vec<String> = Vec::new();
                for (member_index, member) in namespace.tools.into_iter().enumerate() {
                    match member {
                        NamespaceMember::Function(function) => {
                            if local_names.contains(&function.name) {
                                return Err(ApiError::invalid_request(
                                    "Tool names within a namespace must be unique.",
                                ));
                            }
                            check_tool_name(
                                &function.name,
                                &format!("{prefix}tools[{index}].tools[{member_index}].name"),
                            )?;
                            local_names.push(function.name.clone());
                            let mut declaration = namespace_member_declaration(
                                &namespace.name,
                                namespace.description.as_deref(),
                                function,
                                version,
                            );
                            if let Some(name) = flattened.next() {
                                declaration.name = name;
                            }
                            declarations.push(declaration);
                        }
                        NamespaceMember::Custom(custom) => {
                            return Err(ApiError::invalid_request(format!(
                                "Currently custom tools are not allowed inside a namespace. Found custom tool '{}' in {prefix}tools[{index}].tools[{member_index}].",
                                custom.name
                            )));
                        }
                    }
                }
            }
            ResponsesTool::WebSearch(_) => {
                if web_search == WebSearchBehavior::Reject {
                    return Err(ApiError::invalid_request("Server tools are not supported"));
                }
            }
            // V4.1: a client-side tool search is a function the model calls.
            ResponsesTool::ToolSearch(tool_search)
                if version == ModelVersion::DeepseekV41Flash
                    && tool_search.execution == Some(ToolSearchExecution::Client) =>
            {
                let function = ResponsesFunctionTool {
                    name: TOOL_SEARCH_NAME.to_owned(),
                    description: tool_search.description,
                    parameters: tool_search.parameters,
                    strict: None,
                };
                declarations.push(function_declaration(
                    function,
                    TOOL_SEARCH_NAME.to_owned(),
                    None,
                    version,
                ));
            }
            ResponsesTool::ToolSearch(_) | ResponsesTool::Other => {}
        }
    }
    Ok(declarations)
}

/// V4.1: the declarations each tool search output loads, by item index. They are checked
/// before any item is converted; flattened names avoid `taken` and the names loaded before.
pub(super) fn searched_declarations(
    items: &[InputItem],
    version: ModelVersion,
    web_search: WebSearchBehavior,
    taken: &mut Vec<String>,
) -> Result<BTreeMap<usize, Vec<FunctionDecl>>, ApiError> {
    let mut searched = BTreeMap::new();
    if version != ModelVersion::DeepseekV41Flash {
        return Ok(searched);
    }
    for (index, item) in items.iter().enumerate() {
        if let InputItem::ToolSearchOutput(output) = item {
            let mut declarations = tool_declarations(
                output.tools.clone(),
                version,
                web_search,
                &format!("input[{index}]."),
                taken,
            )?;
            for declaration in &mut declarations {
                declaration.defer_loading = true;
            }
            searched.insert(index, declarations);
        }
    }
    Ok(searched)
}
