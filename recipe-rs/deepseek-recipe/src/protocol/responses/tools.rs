//! The declared tools of a Responses request (functions, custom tools, namespaces, web search,
//! tool search) and the tool choice.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::protocol::shared::value_as;

/// Where a tool search ran (both are rendered alike, for V4.1 only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolSearchExecution {
    /// Run by the client.
    Client,
    /// Run by the server.
    Server,
}

/// A declared tool, by `type`; types the recipe does not serve are [`ResponsesTool::Other`].
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "reference::ResponsesTool")]
pub enum ResponsesTool {
    /// A function.
    Function(ResponsesFunctionTool),
    /// A custom (free-form input) tool.
    Custom(CustomTool),
    /// A group of functions under a namespace.
    Namespace(NamespaceTool),
    /// The web search server tool.
    WebSearch(ResponsesWebSearchTool),
    /// The tool search tool (nothing to declare; listed back in tool search results).
    ToolSearch(ResponsesToolSearchTool),
    /// Any other tool type (silently dropped).
    Other,
}

/// The tool search tool's settings.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesToolSearchTool {
    /// Where searches run.
    pub execution: Option<ToolSearchExecution>,
    /// Description.
    pub description: Option<String>,
    /// JSON schema of the search arguments.
    pub parameters: Option<Value>,
}

impl From<reference::ResponsesTool> for ResponsesTool {
    fn from(tool: reference::ResponsesTool) -> Self {
        use reference::ResponsesTool as Wire;
        let web_search = |kind: &str, tool: ResponsesWebSearchTool| {
            Self::WebSearch(ResponsesWebSearchTool {
                kind: kind.to_owned(),
                ..tool
            })
        };
        match tool {
            Wire::Function(function) => Self::Function(function),
            Wire::WebSearch(tool) => web_search("web_search", tool),
            Wire::WebSearch20250826(tool) => web_search("web_search_2025_08_26", tool),
            Wire::Namespace {
                name,
                description,
                tools,
            } => Self::Namespace(NamespaceTool {
                name,
                description,
                tools,
            }),
            Wire::Custom { name } => Self::Custom(CustomTool { name }),
            Wire::ToolSearch {
                execution,
                description,
                parameters,
            } => Self::ToolSearch(ResponsesToolSearchTool {
                execution,
                description,
                parameters,
            }),
            Wire::Unsupported => Self::Other,
        }
    }
}

/// Deserialisation shapes named and ordered as the reference's (serde's messages quote the type
/// and variant names, a `type` given as an index picks a variant by position, and the sequence
/// form of a struct follows its field order).
mod reference {
    use super::{Deserialize, ToolSearchExecution, Value};
    use super::{NamespaceMember, ResponsesFunctionTool, ResponsesWebSearchTool};

    /// A declared tool, by `type`.
    #[derive(Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    pub(super) enum ResponsesTool {
        Function(ResponsesFunctionTool),
        WebSearch(ResponsesWebSearchTool),
        #[serde(rename = "web_search_2025_08_26")]
        WebSearch20250826(ResponsesWebSearchTool),
        Namespace {
            name: String,
            description: Option<String>,
            tools: Vec<NamespaceMember>,
        },
        Custom {
            name: String,
        },
        ToolSearch {
            execution: Option<ToolSearchExecution>,
            description: Option<String>,
            parameters: Option<Value>,
        },
        #[serde(other)]
        Unsupported,
    }

    /// A tool inside a namespace, by `type`.
    #[derive(Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    pub(super) enum ResponsesNamespaceTool {
        Function(ResponsesFunctionTool),
        Custom { name: String },
    }
}

/// A function tool.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesFunctionTool {
    /// Function name.
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// JSON schema of the arguments.
    pub parameters: Option<Value>,
    /// Strict mode.
    pub strict: Option<bool>,
}

/// The web search server tool's settings (only listed back in tool search results).
#[derive(Debug, Clone, Deserialize)]
pub struct ResponsesWebSearchTool {
    /// The tool's `type` (`web_search` or `web_search_2025_08_26`).
    #[serde(skip)]
    pub kind: String,
    /// Search context size.
    pub search_context_size: Option<SearchContextSize>,
    /// Approximate user location.
    pub user_location: Option<ResponsesUserLocation>,
}

/// `search_context_size` of the web search tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchContextSize {
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
}

/// `user_location` of the web search tool.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct ResponsesUserLocation {
    /// City.
    pub city: Option<String>,
    /// Country code.
    pub country: Option<String>,
    /// Region.
    pub region: Option<String>,
    /// Time zone.
    pub timezone: Option<String>,
}

/// A custom tool (only `apply_patch` is served).
#[derive(Debug, Clone)]
pub struct CustomTool {
    /// Tool name.
    pub name: String,
}

/// A namespace of tools.
#[derive(Debug, Clone)]
pub struct NamespaceTool {
    /// Namespace name.
    pub name: String,
    /// Description (V4.1 puts it before each member's description).
    pub description: Option<String>,
    /// The member tools.
    pub tools: Vec<NamespaceMember>,
}

/// A tool inside a namespace, by `type` (only functions and custom tools).
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "reference::ResponsesNamespaceTool")]
pub enum NamespaceMember {
    /// A function.
    Function(ResponsesFunctionTool),
    /// A custom tool (not allowed inside namespaces).
    Custom(CustomTool),
}

impl From<reference::ResponsesNamespaceTool> for NamespaceMember {
    fn from(tool: reference::ResponsesNamespaceTool) -> Self {
        match tool {
            reference::ResponsesNamespaceTool::Function(function) => Self::Function(function),
            reference::ResponsesNamespaceTool::Custom { name } => Self::Custom(CustomTool { name }),
        }
    }
}

/// `tool_choice`: a mode string or a typed object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResponsesToolChoice {
    /// `none`.
    None,
    /// `auto`.
    Auto,
    /// `required`.
    Required,
    /// `{"type": "function", "name": …}`.
    Function(String),
    /// `{"type": "custom", "name": …}`.
    Custom(String),
    /// `{"type": "web_search"}` (a server tool).
    WebSearch,
}

/// The object form of a tool choice.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ResponsesNamedToolChoice {
    Function {
        name: String,
    },
    WebSearch {},
    #[serde(rename = "web_search_2025_08_26")]
    WebSearchDated {},
    Custom {
        name: String,
    },
}

impl<'de> Deserialize<'de> for ResponsesToolChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let wrong = || {
            serde::de::Error::custom(
                "expected one of `none`, `auto`, `required` or a tool choice object",
            )
        };
        match Value::deserialize(deserializer)? {
            Value::String(mode) => match mode.as_str() {
                "none" => Ok(Self::None),
                "auto" => Ok(Self::Auto),
                "required" => Ok(Self::Required),
                _ => Err(wrong()),
            },
            object @ Value::Object(_) if object.get("type").is_none() => Err(wrong()),
            object @ Value::Object(_) => {
                Ok(match value_as::<ResponsesNamedToolChoice, D>(object)? {
                    ResponsesNamedToolChoice::Function { name } => Self::Function(name),
                    ResponsesNamedToolChoice::Custom { name } => Self::Custom(name),
                    ResponsesNamedToolChoice::WebSearch {}
                    | ResponsesNamedToolChoice::WebSearchDated {} => Self::WebSearch,
                })
            }
            _ => Err(wrong()),
        }
    }
}
