//! OpenAI Responses → conversation, in the official validation order, plus the request echo
//! and the namespace map the response side needs.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::content::{text_message, ContentBuilder, UNSUPPORTED_IMAGE_TEXT};
use super::draft::{json_schema_format, Draft, FormatChoice};
use super::history::{check_reasoning_pass_back, mentions_json, settle_reasoning};
use super::images::{image_detail, image_url_source, MAX_IMAGE_URL_BYTES, URL_TOO_LONG_ADVICE};
use super::options::{ConversionOptions, WebSearchBehavior};
use super::report::report_tools;
use super::sampling::{check_max_tokens, check_temperature, check_top_logprobs, check_top_p};
use super::thinking::resolve_thinking;
use super::tools::{
    check_strict_mix, check_tool_name, declared_tools, narrow_loaded_tools, resolve_tool_choice,
    FunctionDecl, ToolChoiceParam,
};
use crate::conversation::{Message, Role, ToolCall};
use crate::converted::{
    ConvertedRequest, ModelVersion, NamespaceToolMap, ResponseContext, ResponsesContext,
    ResponsesEcho,
};
use crate::error::ApiError;
use crate::protocol::output::responses::ReasoningSettings;
use crate::protocol::responses::{
    CallOutput, InputItem, ItemContent, ItemRole, NamespaceMember, ResponsesContentBlock,
    ResponsesFunctionTool, ResponsesInput, ResponsesInputImage, ResponsesInputMessage,
    ResponsesRequest, ResponsesTextFormat, ResponsesTool, ResponsesToolChoice, ToolSearchExecution,
};

/// The pass-back error of Responses.
const REASONING_PASS_BACK_ERROR: &str =
    "The `reasoning_text` in the thinking mode must be passed back to the API.";

/// The description of the `apply_patch` custom tool as V4 Pro is shown it.
const APPLY_PATCH_DESCRIPTION_V4: &str = include_str!("apply_patch_description_v4.txt");
/// The description of the `apply_patch` custom tool as V4.1 Flash is shown it (one more blank
/// line after the first paragraph).
const APPLY_PATCH_DESCRIPTION_V41: &str = include_str!("apply_patch_description_v41.txt");

/// The only custom tool served.
const APPLY_PATCH: &str = "apply_patch";

/// The function name a client-side tool search call is rendered with.
const TOOL_SEARCH_NAME: &str = "tool_search";

/// Flattened namespace function names with their `(namespace, name)`, in declaration order.
type NamespaceFunctions = Vec<(String, (String, String))>;

/// What the input items become: the messages, whether each assistant turn lacks reasoning,
/// and the declarations of the tools that tool searches loaded.
type ConvertedItems = (Vec<Message>, Vec<bool>, Vec<FunctionDecl>);

/// The separator between namespace and function name in flattened names.
fn namespace_separator(version: ModelVersion) -> &'static str {
    match version {
        ModelVersion::DeepseekV4Pro => "__",
        ModelVersion::DeepseekV41Flash => "::",
    }
}

impl ResponsesRequest {
    /// The request values a response object repeats (read before [`Self::convert`]).
    pub fn echo(&self) -> ResponsesEcho {
        ResponsesEcho {
            instructions: self.instructions.clone(),
            max_output_tokens: self.max_output_tokens,
            temperature: self.temperature.unwrap_or(1.0),
            top_p: self.top_p.unwrap_or(1.0),
            top_logprobs: self.top_logprobs.unwrap_or(0),
            user: self.user.clone(),
        }
    }

    /// How flattened namespaced function names map back to `(namespace, name)` (the separator
    /// depends on the model version, so the model must be known).
    pub fn namespace_tool_map(
        &self,
        options: &ConversionOptions,
    ) -> Result<NamespaceToolMap, ApiError> {
        Ok(self.namespace_functions(options)?.into_iter().collect())
    }

    /// The flattened names of the declared namespace functions with their `(namespace, name)`,
    /// in declaration order.
    fn namespace_functions(
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

    /// What the response side needs: the echo, the reported `reasoning`, `text`, `tool_choice`
    /// and `tools`, the namespace map and the custom tool names.
    fn response_context(&self, options: &ConversionOptions) -> Result<ResponsesContext, ApiError> {
        let reported = &self.reported;
        let text_of = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
        let reasoning = reported.reasoning.as_ref();
        let text = reported.text.as_ref();
        let format = match text.and_then(|text| text.get("format")) {
            None | Some(Value::Null) => json!({"type": "text"}),
            Some(format) => format.clone(),
        };
        let verbosity = text
            .and_then(|text| text.get("verbosity"))
            .cloned()
            .unwrap_or(Value::Null);
        let raw_tools = match &reported.tools {
            Some(Value::Array(tools)) => tools.as_slice(),
            _ => &[],
        };
        let custom_tools = self
            .tools
            .iter()
            .flatten()
            .filter_map(|tool| match tool {
                ResponsesTool::Custom(custom) => Some(custom.name.clone()),
                _ => None,
            })
            .collect();
        Ok(ResponsesContext {
            echo: self.echo(),
            reasoning: ReasoningSettings {
                effort: text_of(reasoning.and_then(|reasoning| reasoning.get("effort"))),
                summary: text_of(reasoning.and_then(|reasoning| reasoning.get("summary"))),
            },
            text: json!({"format": format, "verbosity": verbosity}),
            tool_choice: reported
                .tool_choice
                .clone()
                .unwrap_or_else(|| Value::String("auto".to_owned())),
            tools: report_tools(raw_tools),
            namespace_tools: self.namespace_tool_map(options)?,
            custom_tools,
        })
    }

    /// Converts the request with `options` (the official 400 body on invalid requests).
    pub fn convert(self, options: &ConversionOptions) -> Result<ConvertedRequest, ApiError> {
        // The checks run in the reference's order (found by the differential harness).
        let model_version = options.model_version(&self.model)?;
        let response_context = self.response_context(options)?;
        let namespace_names = self.namespace_functions(options)?;
        let mut taken_names = Vec::new();
        let declarations = tool_declarations(
            self.tools.unwrap_or_default(),
            model_version,
            options.responses_web_search,
            "",
            &mut taken_names,
        )?;
        let items = match self.input {
            // Empty instructions count as none.
            None if self.instructions.as_deref().is_none_or(str::is_empty) => {
                return Err(ApiError::invalid_request(
                    "Either input or instructions must be provided",
                ));
            }
            None => Vec::new(),
            Some(ResponsesInput::Items(items)) if items.is_empty() => {
                return Err(ApiError::invalid_request(
                    "Input items array must not be empty",
                ));
            }
            Some(ResponsesInput::Items(items)) => items,
            Some(ResponsesInput::Text(text)) => vec![InputItem::Message(ResponsesInputMessage {
                role: ItemRole::User,
                content: ItemContent::Text(text),
            })],
        };
        let (thinking_mode, reasoning_effort) = resolve_thinking(
            None,
            self.reasoning.and_then(|reasoning| reasoning.effort),
            options.default_thinking_mode,
        );

        taken_names.extend(
            declarations
                .iter()
                .map(|declaration| declaration.name.clone()),
        );
        let searched = searched_declarations(
            &items,
            model_version,
            options.responses_web_search,
            &mut taken_names.clone(),
        )?;
        let converter = ItemConverter {
            version: model_version,
            image_token: options.image_token(),
            separator: namespace_separator(model_version),
            declared_names: taken_names,
            namespace_names,
        };
        let (mut messages, missing_reasoning, loaded_declarations) =
            converter.convert_items(self.instructions, items, searched)?;
        let loads_tools = !loaded_declarations.is_empty();
        check_reasoning_pass_back(
            &messages,
            &missing_reasoning,
            !declarations.is_empty() || loads_tools,
            options.reasoning_content_behavior,
            thinking_mode,
            REASONING_PASS_BACK_ERROR,
        )?;
        let choice = match self.tool_choice {
            None => None,
            Some(ResponsesToolChoice::None) => Some(ToolChoiceParam::None),
            Some(ResponsesToolChoice::Auto) => Some(ToolChoiceParam::Auto),
            Some(ResponsesToolChoice::Required) => Some(ToolChoiceParam::Required),
            Some(ResponsesToolChoice::Function(name) | ResponsesToolChoice::Custom(name)) => {
                Some(ToolChoiceParam::Named(name))
            }
            Some(ResponsesToolChoice::WebSearch) => match options.responses_web_search {
                WebSearchBehavior::Drop => None,
                WebSearchBehavior::Reject => {
                    return Err(ApiError::invalid_request("Server tools are not supported"));
                }
            },
        };
        let choice_is_none = choice == Some(ToolChoiceParam::None);
        // Tools loaded by tool searches are checked with the declared ones.
        let mut declarations = declarations;
        let loaded_count = loaded_declarations.len();
        declarations.extend(loaded_declarations);
        let declared = declared_tools(declarations, false, choice_is_none)?;
        // The loading messages show the checked tools (strict ones normalised).
        let mut checked = declared[declared.len() - loaded_count..].iter();
        for message in &mut messages {
            for tool in &mut message.tools {
                if let Some(checked) = checked.next() {
                    *tool = checked.clone();
                }
            }
        }
        let mut missing_reasoning = missing_reasoning;
        narrow_loaded_tools(choice.as_ref(), &mut messages, &mut missing_reasoning);
        let tools = resolve_tool_choice(choice, declared, thinking_mode)?;

        let format = self.text.map(|text| text.format);
        let wants_json_object = matches!(format, Some(ResponsesTextFormat::JsonObject));
        let format = match format {
            None | Some(ResponsesTextFormat::Text) => FormatChoice::Text,
            Some(ResponsesTextFormat::JsonObject) => FormatChoice::JsonObject,
            Some(ResponsesTextFormat::JsonSchema { schema, strict, .. }) => {
                json_schema_format(schema, strict == Some(true))?
            }
        };
        if wants_json_object
            && !mentions_json(messages.iter().map(|message| message.content.as_str()))
        {
            return Err(ApiError::invalid_request(
                "Response input messages must contain the word 'json' in some form to use 'text.format' of type 'json_object'.",
            ));
        }
        check_strict_mix(tools.tools.iter().map(|tool| tool.strict))?;
        if !matches!(format, FormatChoice::Text)
            && tools.tools.iter().any(|tool| tool.strict == Some(true))
        {
            return Err(ApiError::invalid_request(
                "response_format should not be used with tools",
            ));
        }
        check_temperature(self.temperature)?;
        check_top_p(self.top_p)?;
        check_top_logprobs(self.top_logprobs)?;
        let max_tokens = check_max_tokens(
            self.max_output_tokens,
            options.max_tokens_upper_bound(thinking_mode),
        )?;

        settle_reasoning(&mut messages, thinking_mode);

        Ok(Draft {
            request_model: self.model,
            model_version,
            stream: self.stream.unwrap_or(false),
            thinking_mode,
            reasoning_effort,
            tools,
            format,
            messages,
            max_tokens,
            temperature: self.temperature,
            top_p: self.top_p,
            logprobs: self.top_logprobs.is_some(),
            top_logprobs: self.top_logprobs,
            seed: None,
            stop_sequences: Vec::new(),
            response_context: ResponseContext::Responses(Box::new(response_context)),
        }
        .finish(options.special_token_spellings()))
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
fn searched_tools_listing(index: usize, tools: Vec<ResponsesTool>) -> Result<Vec<Value>, ApiError> {
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

/// Flattens the declared tools into function declarations: custom `apply_patch` becomes a
/// function, namespaces are flattened, web search is dropped or rejected, other types dropped.
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

/// `prefix` goes before `tools[…]` in error paths (`input[3].` for a tool search output);
/// flattened names avoid the names in `taken`, which gains every name given here.
fn tool_declarations(
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
fn searched_declarations(
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

/// Per-request settings for converting input items.
struct ItemConverter<'a> {
    version: ModelVersion,
    image_token: &'a str,
    separator: &'static str,
    /// The names of the declared tools (namespaced calls' names avoid them).
    declared_names: Vec<String>,
    /// The flattened names of the declared namespace functions, in declaration order.
    namespace_names: NamespaceFunctions,
}

/// A run of consecutive calls and the outputs answering them.
struct CallGroup {
    /// Index of the assistant message that carries the calls.
    message_index: usize,
    /// The calls, in request order.
    calls: Vec<ToolCall>,
    /// Per call id, the tool message its output becomes.
    outputs: Vec<(String, Message)>,
    /// The system messages of the tools loaded by the group's tool searches, in output order
    /// (they follow all the group's tool messages).
    loaded: Vec<Message>,
}

/// The message list under construction.
#[derive(Default)]
struct Transcript {
    messages: Vec<Message>,
    missing_reasoning: Vec<bool>,
    /// Reasoning waiting for the next assistant turn (`None`: no reasoning item seen).
    reasoning: Option<String>,
    /// Whether the last item was an assistant message (calls right after it join it).
    after_assistant: bool,
    /// The open call group, if any.
    group: Option<CallGroup>,
    /// Every call id so far (call ids are unique in a request).
    call_ids: Vec<String>,
    /// Every call id answered so far (one output per call).
    answered_ids: Vec<String>,
}

impl Transcript {
    /// Adds the texts of a reasoning item to the reasoning waiting for an assistant turn.
    fn add_reasoning(&mut self, text: String) {
        self.reasoning = Some(match self.reasoning.take() {
            Some(earlier) if earlier.is_empty() => text,
            Some(earlier) if text.is_empty() => earlier,
            Some(earlier) => format!("{earlier}\n{text}"),
            None => text,
        });
    }

    /// Whether the last message is an assistant turn without text or calls (later reasoning
    /// and text join it).
    fn last_is_bare_assistant(&self) -> bool {
        self.after_assistant
            && self.messages.last().is_some_and(|last| {
                last.role == Role::Assistant && last.content.is_empty() && last.tool_calls.is_none()
            })
    }

    /// Reasoning waiting for a turn joins a bare assistant turn just before it.
    fn join_reasoning_to_last(&mut self) {
        if let Some(reasoning) = self.reasoning.take() {
            if let Some(last) = self.messages.last_mut() {
                last.reasoning_content = Some(match last.reasoning_content.take() {
                    Some(earlier) if !earlier.is_empty() => format!("{earlier}\n{reasoning}"),
                    _ => reasoning,
                });
            }
            if let Some(missing) = self.missing_reasoning.last_mut() {
                *missing = false;
            }
        }
    }

    /// Reasoning that no assistant message follows becomes an assistant turn of its own.
    fn flush_reasoning(&mut self) -> Result<(), ApiError> {
        if self.reasoning.is_some() && self.last_is_bare_assistant() {
            self.join_reasoning_to_last();
            return Ok(());
        }
        if self.reasoning.is_some() {
            self.after_assistant = false;
            self.push_assistant(text_message(Role::Assistant, String::new()))?;
        }
        Ok(())
    }

    fn push(&mut self, message: Message) -> Result<(), ApiError> {
        self.flush_reasoning()?;
        self.close_group()?;
        self.after_assistant = false;
        self.missing_reasoning.push(false);
        self.messages.push(message);
        Ok(())
    }

    fn push_assistant(&mut self, mut message: Message) -> Result<(), ApiError> {
        if self.after_assistant && (self.reasoning.is_none() || self.last_is_bare_assistant()) {
            // Assistant messages in a row (no reasoning item between them, unless the first
            // is bare) are one turn. Empty texts add nothing to the joined content.
            self.join_reasoning_to_last();
            if let Some(last) = self.messages.last_mut() {
                if !last.content.is_empty() && !message.content.is_empty() {
                    last.content.push_str("\n\n");
                }
                last.content.push_str(&message.content);
                return Ok(());
            }
        }
        self.close_group()?;
        let reasoning = self.reasoning.take();
        self.missing_reasoning.push(reasoning.is_none());
        message.reasoning_content = reasoning;
        self.messages.push(message);
        self.after_assistant = true;
        Ok(())
    }

    /// Adds a call: to the open group while no output arrived, else to a new group carried by
    /// the assistant message just before it or by a new one.
    fn push_call(&mut self, call: ToolCall) -> Result<(), ApiError> {
        if self.call_ids.contains(&call.id) {
            return Err(ApiError::invalid_request(format!(
                "Duplicate 'call_id': {}.",
                call.id
            )));
        }
        self.call_ids.push(call.id.clone());
        // A call joins the open run while some call of it still waits for its output.
        let waiting = |group: &CallGroup| {
            group
                .calls
                .iter()
                .any(|call| !group.outputs.iter().any(|(id, _)| *id == call.id))
        };
        if let Some(group) = self.group.as_mut().filter(|group| waiting(group)) {
            group.calls.push(call);
            return Ok(());
        }
        if self.reasoning.is_some() && self.last_is_bare_assistant() {
            // Reasoning after a bare assistant turn joins it, and so does the call.
            self.join_reasoning_to_last();
            self.close_group()?;
        } else if !self.after_assistant || self.reasoning.is_some() {
            self.after_assistant = false;
            self.push_assistant(text_message(Role::Assistant, String::new()))?;
        } else {
            self.close_group()?;
        }
        self.after_assistant = false;
        self.group = Some(CallGroup {
            message_index: self.messages.len() - 1,
            calls: vec![call],
            outputs: Vec::new(),
            loaded: Vec::new(),
        });
        Ok(())
    }

    /// Marks `call_id` answered: it must name a call of the open group that has no output yet.
    /// Returns the group, for the output.
    fn answer(&mut self, call_id: &str) -> Result<&mut CallGroup, ApiError> {
        if self.answered_ids.iter().any(|id| id == call_id) {
            return Err(ApiError::invalid_request(format!(
                "Duplicate tool output for call_id: {call_id}."
            )));
        }
        let group = self
            .group
            .as_mut()
            .filter(|group| group.calls.iter().any(|call| call.id == call_id))
            .ok_or_else(|| {
                ApiError::invalid_request(format!(
                    "No tool call found for tool output with call_id {call_id}."
                ))
            })?;
        self.answered_ids.push(call_id.to_owned());
        Ok(group)
    }

    /// Ends the open group: every call needs an output; calls and outputs are written in
    /// call-id order.
    fn close_group(&mut self) -> Result<(), ApiError> {
        let Some(mut group) = self.group.take() else {
            return Ok(());
        };
        // The reference reports an arbitrary call without output (its choice varies from run
        // to run); the first one in request order is reported here. Calls are written in id
        // order.
        if let Some(call) = group
            .calls
            .iter()
            .find(|call| !group.outputs.iter().any(|(id, _)| *id == call.id))
        {
            return Err(ApiError::invalid_request(format!(
                "No tool output found for tool call {}.",
                call.id
            )));
        }
        group.calls.sort_by(|left, right| left.id.cmp(&right.id));
        let mut results = Vec::new();
        for call in &group.calls {
            let position = group
                .outputs
                .iter()
                .position(|(id, _)| *id == call.id)
                .ok_or_else(|| {
                    ApiError::invalid_request(format!(
                        "No tool output found for tool call {}.",
                        call.id
                    ))
                })?;
            results.push(group.outputs.swap_remove(position).1);
        }
        results.append(&mut group.loaded);
        self.messages[group.message_index].tool_calls = Some(group.calls);
        for message in results {
            self.missing_reasoning.push(false);
            self.messages.push(message);
        }
        self.after_assistant = false;
        Ok(())
    }
}

impl ItemConverter<'_> {
    /// Converts the items; `searched` holds what each tool search output loads, by item index.
    fn convert_items(
        &self,
        instructions: Option<String>,
        items: Vec<InputItem>,
        mut searched: BTreeMap<usize, Vec<FunctionDecl>>,
    ) -> Result<ConvertedItems, ApiError> {
        let mut transcript = Transcript::default();
        let mut loaded_declarations = Vec::new();
        if let Some(instructions) = instructions.filter(|text| !text.is_empty()) {
            transcript.push(text_message(Role::System, instructions))?;
        }
        for (index, item) in items.into_iter().enumerate() {
            match item {
                InputItem::Message(message) => {
                    self.push_message(index, message.role, message.content, &mut transcript)?;
                }
                InputItem::WebSearchCall => transcript.close_group()?,
                InputItem::Reasoning(reasoning) => {
                    // A reasoning item ends an open run of calls.
                    transcript.close_group()?;
                    let texts: Vec<String> = reasoning
                        .content
                        .unwrap_or_default()
                        .into_iter()
                        .map(|part| part.text)
                        .collect();
                    // A reasoning item without text counts as no reasoning at all.
                    let text = texts.join("\n");
                    if !text.is_empty() {
                        transcript.add_reasoning(text);
                    }
                }
                InputItem::FunctionCall(call) => {
                    check_call_id(&call.call_id, index)?;
                    let name = match call.namespace {
                        Some(namespace) => self.namespaced_call_name(&namespace, &call.name),
                        None => call.name,
                    };
                    transcript.push_call(ToolCall {
                        id: call.call_id,
                        name,
                        arguments: call.arguments,
                    })?;
                }
                InputItem::CustomToolCall(call) => {
                    check_call_id(&call.call_id, index)?;
                    let arguments = json!({ "input": call.input }).to_string();
                    transcript.push_call(ToolCall {
                        id: call.call_id,
                        name: call.name,
                        arguments,
                    })?;
                }
                InputItem::ToolSearchCall(call) => {
                    // V4 drops tool search items; V4.1 shows the search as a call.
                    if self.version == ModelVersion::DeepseekV41Flash {
                        check_call_id(&call.call_id, index)?;
                        transcript.push_call(ToolCall {
                            id: call.call_id,
                            name: TOOL_SEARCH_NAME.to_owned(),
                            arguments: Value::Object(call.arguments).to_string(),
                        })?;
                    }
                }
                InputItem::FunctionCallOutput(output) => {
                    let message = self.call_output(index, output.output)?;
                    match output.call_id {
                        // Without a call id the output is a tool message answering no call.
                        None => transcript.push(message)?,
                        Some(call_id) => {
                            self.push_output(index, call_id, message, &mut transcript)?
                        }
                    }
                }
                InputItem::CustomToolCallOutput(output) => {
                    let content = output.output.unwrap_or(CallOutput::Text(String::new()));
                    let message = self.call_output(index, content)?;
                    self.push_output(index, output.call_id, message, &mut transcript)?;
                }
                InputItem::ToolSearchOutput(output) => {
                    // V4 drops tool search items (nothing was searched for them).
                    if let Some(declarations) = searched.remove(&index) {
                        check_call_id(&output.call_id, index)?;
                        let group = transcript.answer(&output.call_id)?;
                        let listing = searched_tools_listing(index, output.tools)?;
                        let mut result =
                            text_message(Role::Tool, Value::Array(listing).to_string());
                        result.tool_call_id = Some(output.call_id.clone());
                        group.outputs.push((output.call_id, result));
                        let mut loaded = text_message(Role::System, String::new());
                        // Checked later, with the declared tools.
                        loaded.tools = declared_tools(declarations.clone(), false, true)?;
                        loaded_declarations.extend(declarations);
                        // A search that loaded no function adds no system message.
                        if !loaded.tools.is_empty() {
                            group.loaded.push(loaded);
                        }
                    }
                }
                InputItem::Other => {}
            }
        }
        transcript.flush_reasoning()?;
        transcript.close_group()?;
        Ok((
            transcript.messages,
            transcript.missing_reasoning,
            loaded_declarations,
        ))
    }

    fn push_message(
        &self,
        index: usize,
        role: ItemRole,
        content: ItemContent,
        transcript: &mut Transcript,
    ) -> Result<(), ApiError> {
        let path = format!("input[{index}]");
        // A message ends an open run of calls before its content is read.
        transcript.close_group()?;
        if role == ItemRole::Assistant && self.version == ModelVersion::DeepseekV41Flash {
            if let ItemContent::Parts(parts) = &content {
                self.check_image_parts(index, "content", parts)?;
                if parts
                    .iter()
                    .any(|part| matches!(part, ResponsesContentBlock::InputImage(_)))
                {
                    return Err(ApiError::invalid_request(format!(
                        "{path}: Image in assistant message is unsupported"
                    )));
                }
            }
        }
        let builder = self.build_content(index, "content", content)?;
        let role = match role {
            ItemRole::User => Role::User,
            ItemRole::Assistant => Role::Assistant,
            ItemRole::System => Role::System,
            ItemRole::Developer => match self.version {
                ModelVersion::DeepseekV4Pro => Role::User,
                ModelVersion::DeepseekV41Flash => Role::System,
            },
        };
        let message = builder.into_message(role);
        match role {
            Role::Assistant => transcript.push_assistant(message),
            _ => transcript.push(message),
        }
    }

    /// A call output answering `call_id` (which must not be empty).
    fn push_output(
        &self,
        index: usize,
        call_id: String,
        mut message: Message,
        transcript: &mut Transcript,
    ) -> Result<(), ApiError> {
        check_call_id(&call_id, index)?;
        message.tool_call_id = Some(call_id.clone());
        transcript
            .answer(&call_id)?
            .outputs
            .push((call_id, message));
        Ok(())
    }

    fn call_output(&self, index: usize, output: CallOutput) -> Result<Message, ApiError> {
        let content = match output {
            CallOutput::Text(text) => ItemContent::Text(text),
            CallOutput::Parts(parts) => {
                ItemContent::Parts(parts.into_iter().map(ResponsesContentBlock::from).collect())
            }
        };
        Ok(self
            .build_content(index, "output", content)?
            .into_message(Role::Tool))
    }

    /// The name of a call to a namespace function: the declared function's flattened name, or
    /// `<namespace><separator><name>` with `_1`, `_2`, … appended while a declared tool has it.
    fn namespaced_call_name(&self, namespace: &str, name: &str) -> String {
        if let Some((flattened, _)) = self
            .namespace_names
            .iter()
            .find(|(_, (space, member))| space == namespace && member == name)
        {
            return flattened.clone();
        }
        let base = format!("{namespace}{}{name}", self.separator);
        let mut candidate = base.clone();
        let mut suffix = 0;
        while self.declared_names.contains(&candidate) {
            suffix += 1;
            candidate = format!("{base}_{suffix}");
        }
        candidate
    }

    /// V4.1: every image part needs exactly one of `image_url` (not empty) and `file_id`, and
    /// file ids are not served.
    fn check_image_parts(
        &self,
        index: usize,
        field: &str,
        parts: &[ResponsesContentBlock],
    ) -> Result<(), ApiError> {
        let path = format!("input[{index}]");
        if self.version == ModelVersion::DeepseekV41Flash {
            for (part_index, part) in parts.iter().enumerate() {
                if let ResponsesContentBlock::InputImage(ResponsesInputImage {
                    image_url,
                    file_id,
                    ..
                }) = part
                {
                    let part_path = format!("{path}.{field}[{part_index}]");
                    let has_url = image_url.as_deref().is_some_and(|url| !url.is_empty());
                    // An empty URL counts as absent, any file id (even empty) as present.
                    let has_file = file_id.is_some();
                    let problem = match (has_url, has_file) {
                        (false, false) => Some("input_image must have image_url or file_id"),
                        (true, true) => Some("input_image cannot have both image_url and file_id"),
                        (false, true) => Some(
                            "file_id is not supported. Pass the image as a base64 data url instead.",
                        ),
                        (true, false) => None,
                    };
                    if let Some(problem) = problem {
                        return Err(ApiError::invalid_request(format!("{part_path}: {problem}")));
                    }
                }
            }
        }
        Ok(())
    }

    /// The content of item `index` (`field` names its parts in error paths).
    fn build_content(
        &self,
        index: usize,
        field: &str,
        content: ItemContent,
    ) -> Result<ContentBuilder, ApiError> {
        let mut builder = ContentBuilder::default();
        let parts = match content {
            ItemContent::Text(text) => {
                builder.push_text(&text);
                return Ok(builder);
            }
            ItemContent::Parts(parts) => parts,
        };
        let path = format!("input[{index}]");
        // The image parts are checked first (image_url or file_id); their URLs are read while
        // the content is built.
        self.check_image_parts(index, field, &parts)?;
        for (part_index, part) in parts.into_iter().enumerate() {
            match part {
                ResponsesContentBlock::InputText { text }
                | ResponsesContentBlock::OutputText { text } => builder.push_text(&text),
                ResponsesContentBlock::InputFile {} => builder.push_text("[Unsupported Document]"),
                ResponsesContentBlock::InputImage(ResponsesInputImage {
                    image_url,
                    file_id,
                    detail,
                }) => {
                    let part_path = format!("{path}.{field}[{part_index}]");
                    // An empty URL counts as absent, any file id (even empty) as present.
                    let image_url = image_url.filter(|url| !url.is_empty());
                    match (&image_url, &file_id) {
                        _ if self.version == ModelVersion::DeepseekV4Pro => {
                            builder.push_text(UNSUPPORTED_IMAGE_TEXT)
                        }
                        (None, None) => {
                            return Err(ApiError::invalid_request(format!(
                                "{part_path}: input_image must have image_url or file_id"
                            )));
                        }
                        (Some(_), Some(_)) => {
                            return Err(ApiError::invalid_request(format!(
                                "{part_path}: input_image cannot have both image_url and file_id"
                            )));
                        }
                        (None, Some(_)) => {
                            return Err(ApiError::invalid_request(format!(
                                "{part_path}: file_id is not supported. Pass the image as a base64 data url instead."
                            )));
                        }
                        (Some(url), None) => {
                            let source = image_url_source(
                                url,
                                image_detail(detail),
                                &path,
                                |len| {
                                    format!(
                                    "{part_path}: image_url external link length {len} too long, max link length {MAX_IMAGE_URL_BYTES}. {URL_TOO_LONG_ADVICE}"
                                )
                                },
                            )?;
                            builder.push_image(source, self.image_token);
                        }
                    }
                }
            }
        }
        Ok(builder)
    }
}

/// Call ids must not be empty.
fn check_call_id(call_id: &str, index: usize) -> Result<(), ApiError> {
    if call_id.is_empty() {
        return Err(ApiError::invalid_request(format!(
            "Invalid 'input[{index}].call_id': empty string. Expected a string with minimum length 1, but got an empty string instead."
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(body: &str) -> Result<ConvertedRequest, ApiError> {
        let options = ConversionOptions::default();
        ResponsesRequest::from_json(body)
            .expect("valid body")
            .convert(&options)
    }

    #[test]
    fn calls_and_outputs_are_written_in_call_id_order() {
        let converted = convert(
            r#"{"model": "DeepSeek-V4-Pro", "reasoning": {"effort": "none"}, "input": [
                {"role": "user", "content": "q"},
                {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"},
                {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "b", "output": "B"},
                {"type": "function_call_output", "call_id": "a", "output": "A"}
            ]}"#,
        )
        .unwrap();
        let messages = &converted.conversation.messages;
        let calls = messages[1].tool_calls.as_ref().unwrap();
        assert_eq!(
            calls
                .iter()
                .map(|call| call.id.as_str())
                .collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(messages[2].content, "A");
        assert_eq!(messages[3].content, "B");
    }

    #[test]
    fn a_missing_output_is_reported() {
        let err = convert(
            r#"{"model": "DeepSeek-V4-Pro", "input": [
                {"role": "user", "content": "q"},
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                {"role": "user", "content": "again"}
            ]}"#,
        )
        .unwrap_err();
        assert_eq!(err.error.message, "No tool output found for tool call c1.");
    }

    #[test]
    fn namespace_names_depend_on_the_model() {
        let body = |model: &str| {
            format!(
                r#"{{"model": "{model}", "input": "q", "tools": [{{"type": "namespace", "name": "ns", "tools": [{{"type": "function", "name": "g"}}]}}]}}"#
            )
        };
        let options = ConversionOptions::default();
        let v4 = ResponsesRequest::from_json(&body("DeepSeek-V4-Pro")).unwrap();
        let v41 = ResponsesRequest::from_json(&body("DeepSeek-V4.1-Flash")).unwrap();
        assert!(v4
            .namespace_tool_map(&options)
            .unwrap()
            .contains_key("ns__g"));
        assert!(v41
            .namespace_tool_map(&options)
            .unwrap()
            .contains_key("ns::g"));
    }
}
