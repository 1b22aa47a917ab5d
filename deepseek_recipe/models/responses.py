"""OpenAI Responses wire models: the request, the response object and every stream event."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, JsonValue, Tag

from deepseek_recipe.models.common import (
    ImageDetail,
    JsonSchema,
    ReasoningEffort,
    ResponseUsage,
    TokenLogprob,
    UInt8,
    UInt32,
    WireModel,
    tag_of,
)

__all__ = [
    "CustomTool",
    "FunctionTool",
    "IncompleteDetails",
    "NamespaceMemberTool",
    "NamespaceTool",
    "Reasoning",
    "Response",
    "ResponseCompletedEvent",
    "ResponseContentPart",
    "ResponseContentPartAddedEvent",
    "ResponseContentPartDoneEvent",
    "ResponseCreatedEvent",
    "ResponseCustomToolCall",
    "ResponseCustomToolCallInputDeltaEvent",
    "ResponseCustomToolCallInputDoneEvent",
    "ResponseCustomToolCallOutput",
    "ResponseError",
    "ResponseFailedEvent",
    "ResponseFunctionCallArgumentsDeltaEvent",
    "ResponseFunctionCallArgumentsDoneEvent",
    "ResponseFunctionCallOutput",
    "ResponseFunctionToolCall",
    "ResponseInProgressEvent",
    "ResponseIncompleteEvent",
    "ResponseInputContent",
    "ResponseInputFile",
    "ResponseInputImage",
    "ResponseInputItem",
    "ResponseInputMessage",
    "ResponseInputText",
    "ResponseItemStatus",
    "ResponseOtherItem",
    "ResponseOutputItem",
    "ResponseOutputItemAddedEvent",
    "ResponseOutputItemDoneEvent",
    "ResponseOutputMessage",
    "ResponseOutputRefusal",
    "ResponseOutputText",
    "ResponseReasoningItem",
    "ResponseReasoningText",
    "ResponseReasoningTextDeltaEvent",
    "ResponseReasoningTextDoneEvent",
    "ResponseStatus",
    "ResponseStreamEvent",
    "ResponseSummaryText",
    "ResponseTextConfig",
    "ResponseTextDeltaEvent",
    "ResponseTextDoneEvent",
    "ResponseTextFormat",
    "ResponseTextFormatJSONObject",
    "ResponseTextFormatJSONSchema",
    "ResponseTextFormatText",
    "ResponseToolOutputContent",
    "ResponsesOtherTool",
    "ResponsesRequest",
    "ResponsesTool",
    "ResponsesToolChoice",
    "ToolChoiceCustom",
    "ToolChoiceFunction",
    "ToolChoiceWebSearch",
    "WebSearchTool",
]

ResponseItemStatus = Literal["in_progress", "completed", "incomplete"]
"""Status of an input or output item."""

ResponseStatus = Literal["completed", "failed", "in_progress", "cancelled", "queued", "incomplete"]
"""Status of a response object."""


# ---------------------------------------------------------------------------------- content


class ResponseInputText(WireModel):
    """A text input part."""

    type: Literal["input_text"]
    text: str


class ResponseOutputText(WireModel):
    """An output text part (also accepted as input, for assistant history)."""

    type: Literal["output_text"]
    annotations: list[JsonValue] | None = None
    logprobs: list[TokenLogprob] | None = None
    text: str


class ResponseOutputRefusal(WireModel):
    """A refusal part of an output message."""

    type: Literal["refusal"]
    refusal: str


class ResponseInputImage(WireModel):
    """An image input part (`image_url` or `file_id`)."""

    type: Literal["input_image"]
    detail: ImageDetail | None = None
    file_id: str | None = None
    image_url: str | None = None


class ResponseInputFile(WireModel):
    """A file input part (rendered as an unsupported document)."""

    type: Literal["input_file"]
    file_data: str | None = None
    file_id: str | None = None
    file_url: str | None = None
    filename: str | None = None


ResponseInputContent = Annotated[
    ResponseInputText | ResponseOutputText | ResponseInputImage | ResponseInputFile,
    Field(discriminator="type"),
]
"""A content part of an input message, chosen by `type`."""

ResponseToolOutputContent = Annotated[
    ResponseInputText | ResponseInputImage | ResponseInputFile,
    Field(discriminator="type"),
]
"""A content part of a tool output, chosen by `type`."""


class ResponseReasoningText(WireModel):
    """Reasoning text of a reasoning item."""

    type: Literal["reasoning_text"]
    text: str


class ResponseSummaryText(WireModel):
    """Summary text of a reasoning item."""

    type: Literal["summary_text"]
    text: str


# ---------------------------------------------------------------------------------- items


class ResponseInputMessage(WireModel):
    """A message item; `type` may be omitted on input."""

    type: Literal["message"] = "message"
    role: Literal["user", "assistant", "system", "developer"]
    content: str | list[ResponseInputContent]


class ResponseOutputMessage(WireModel):
    """An assistant message item of a response."""

    type: Literal["message"]
    id: str
    status: ResponseItemStatus | None = None
    role: Literal["assistant"]
    phase: Literal["commentary", "final_answer"] | None = None
    content: list[
        Annotated[ResponseOutputText | ResponseOutputRefusal, Field(discriminator="type")]
    ]


class ResponseReasoningItem(WireModel):
    """A reasoning item: reasoning text, summary and opaque encrypted content."""

    type: Literal["reasoning"]
    id: str | None = None
    status: ResponseItemStatus | None = None
    content: list[ResponseReasoningText] | None = None
    summary: list[ResponseSummaryText] | None = None
    encrypted_content: str | None = None


class ResponseFunctionToolCall(WireModel):
    """A function call item (`namespace` is set for namespaced tools)."""

    type: Literal["function_call"]
    id: str | None = None
    status: ResponseItemStatus | None = None
    call_id: str
    name: str
    namespace: str | None = None
    arguments: str


class ResponseFunctionCallOutput(WireModel):
    """The output of a function call, matched by `call_id`."""

    type: Literal["function_call_output"]
    call_id: str
    output: str | list[ResponseToolOutputContent]


class ResponseCustomToolCall(WireModel):
    """A custom tool call item (DeepSeek supports the `apply_patch` custom tool)."""

    type: Literal["custom_tool_call"]
    id: str | None = None
    status: ResponseItemStatus | None = None
    call_id: str
    name: str
    input: str


class ResponseCustomToolCallOutput(WireModel):
    """The output of a custom tool call, matched by `call_id`."""

    type: Literal["custom_tool_call_output"]
    call_id: str
    output: str | list[ResponseToolOutputContent]


class ResponseOtherItem(WireModel):
    """Any other input item type (web_search_call, item_reference, ...); DeepSeek drops it."""

    type: str


_INPUT_ITEM_TAGS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
    }
)


def _input_item_tag(value: Any) -> str:
    """Discriminate input items: no `type` means a message, unknown types are kept as other."""
    item_type = tag_of(value, "type")
    if item_type is None:
        return "message"
    if isinstance(item_type, str) and item_type in _INPUT_ITEM_TAGS:
        return item_type
    return "other"


ResponseInputItem = Annotated[
    Annotated[ResponseInputMessage, Tag("message")]
    | Annotated[ResponseReasoningItem, Tag("reasoning")]
    | Annotated[ResponseFunctionToolCall, Tag("function_call")]
    | Annotated[ResponseFunctionCallOutput, Tag("function_call_output")]
    | Annotated[ResponseCustomToolCall, Tag("custom_tool_call")]
    | Annotated[ResponseCustomToolCallOutput, Tag("custom_tool_call_output")]
    | Annotated[ResponseOtherItem, Tag("other")],
    Discriminator(_input_item_tag),
]
"""An input item, chosen by `type` (absent: message; unknown: `ResponseOtherItem`)."""

ResponseOutputItem = Annotated[
    ResponseOutputMessage
    | ResponseReasoningItem
    | ResponseFunctionToolCall
    | ResponseCustomToolCall,
    Field(discriminator="type"),
]
"""An output item of a response, chosen by `type`."""


# ---------------------------------------------------------------------------------- tools


class FunctionTool(WireModel):
    """A function tool."""

    type: Literal["function"]
    name: str
    description: str | None = None
    parameters: JsonSchema | None = None
    strict: bool | None = None
    defer_loading: bool | None = None


class CustomTool(WireModel):
    """A custom (free-form input) tool; DeepSeek supports `apply_patch` only."""

    type: Literal["custom"]
    name: str
    description: str | None = None


class ResponsesOtherTool(WireModel):
    """Any other tool type (file_search, mcp, ...); DeepSeek drops it."""

    type: str


def _tool_tag(value: Any) -> str:
    """Discriminate tools: known types by name, web search variants together, others as other."""
    tool_type = tag_of(value, "type")
    if tool_type in ("web_search", "web_search_2025_08_26"):
        return "web_search"
    if tool_type in ("function", "custom", "namespace"):
        return str(tool_type)
    return "other"


NamespaceMemberTool = Annotated[
    Annotated[FunctionTool, Tag("function")]
    | Annotated[CustomTool, Tag("custom")]
    | Annotated[ResponsesOtherTool, Tag("other")],
    Discriminator(_tool_tag),
]
"""A tool inside a namespace, chosen by `type`."""


class NamespaceTool(WireModel):
    """A namespace grouping tools; its functions are called `<namespace>__<name>`."""

    type: Literal["namespace"]
    name: str
    description: str | None = None
    tools: list[NamespaceMemberTool]


class WebSearchTool(WireModel):
    """The built-in web search tool (dropped or rejected by DeepSeek)."""

    type: Literal["web_search", "web_search_2025_08_26"]


ResponsesTool = Annotated[
    Annotated[FunctionTool, Tag("function")]
    | Annotated[CustomTool, Tag("custom")]
    | Annotated[NamespaceTool, Tag("namespace")]
    | Annotated[WebSearchTool, Tag("web_search")]
    | Annotated[ResponsesOtherTool, Tag("other")],
    Discriminator(_tool_tag),
]
"""A tool declaration, chosen by `type` (unknown: `ResponsesOtherTool`)."""


class ToolChoiceFunction(WireModel):
    """Force a named function."""

    type: Literal["function"]
    name: str


class ToolChoiceCustom(WireModel):
    """Force a named custom tool."""

    type: Literal["custom"]
    name: str


class ToolChoiceWebSearch(WireModel):
    """Force the web search tool."""

    type: Literal["web_search", "web_search_2025_08_26"]


ResponsesToolChoice = (
    Literal["none", "auto", "required"]
    | Annotated[
        ToolChoiceFunction | ToolChoiceCustom | ToolChoiceWebSearch, Field(discriminator="type")
    ]
)
"""`none`, `auto`, `required`, or a tool choice object chosen by `type`."""


# ---------------------------------------------------------------------------------- config


class Reasoning(WireModel):
    """Reasoning configuration (`effort: none` disables thinking)."""

    effort: ReasoningEffort | None = None
    summary: str | None = None


class ResponseTextFormatText(WireModel):
    """Plain text output."""

    type: Literal["text"]


class ResponseTextFormatJSONObject(WireModel):
    """JSON object output (JSON mode)."""

    type: Literal["json_object"]


class ResponseTextFormatJSONSchema(WireModel):
    """Output constrained by a JSON schema."""

    type: Literal["json_schema"]
    name: str
    description: str | None = None
    schema_: JsonSchema = Field(alias="schema")
    strict: bool | None = None


ResponseTextFormat = Annotated[
    ResponseTextFormatText | ResponseTextFormatJSONObject | ResponseTextFormatJSONSchema,
    Field(discriminator="type"),
]
"""A text output format, chosen by `type`."""


class ResponseTextConfig(WireModel):
    """Text output configuration."""

    format: ResponseTextFormat | None = None
    verbosity: Literal["low", "medium", "high"] | None = None


class ResponsesRequest(WireModel):
    """A Responses request body (`POST /responses`)."""

    model: str
    input: str | list[ResponseInputItem] | None = None
    instructions: str | None = None
    max_output_tokens: UInt32 | None = None
    reasoning: Reasoning | None = None
    stream: bool | None = None
    temperature: float | None = None
    text: ResponseTextConfig | None = None
    tool_choice: ResponsesToolChoice | None = None
    tools: list[ResponsesTool] | None = None
    top_logprobs: UInt8 | None = None
    top_p: float | None = None
    user: str | None = None


# ---------------------------------------------------------------------------------- response


class ResponseError(WireModel):
    """The error of a failed response."""

    code: str
    message: str


class IncompleteDetails(WireModel):
    """Why a response is incomplete."""

    reason: Literal["max_output_tokens", "content_filter"] | None = None


class Response(WireModel):
    """A Responses response object (also carried by the lifecycle stream events)."""

    id: str
    object: Literal["response"]
    created_at: int
    status: ResponseStatus | None = None
    background: bool | None = None
    completed_at: int | None = None
    content_filters: JsonValue = None
    error: ResponseError | None = None
    frequency_penalty: float | None = None
    incomplete_details: IncompleteDetails | None = None
    instructions: str | list[ResponseInputItem] | None = None
    max_output_tokens: int | None = None
    max_tool_calls: int | None = None
    model: str
    moderation: JsonValue = None
    output: list[ResponseOutputItem]
    parallel_tool_calls: bool | None = None
    presence_penalty: float | None = None
    previous_response_id: str | None = None
    prompt_cache_key: str | None = None
    prompt_cache_retention: str | None = None
    reasoning: Reasoning | None = None
    safety_identifier: str | None = None
    service_tier: str | None = None
    store: bool | None = None
    temperature: float | None = None
    text: ResponseTextConfig | None = None
    tool_choice: ResponsesToolChoice | None = None
    tools: list[ResponsesTool] | None = None
    top_logprobs: int | None = None
    top_p: float | None = None
    truncation: Literal["auto", "disabled"] | None = None
    usage: ResponseUsage | None = None
    user: str | None = None
    metadata: dict[str, str] | None = None


# ---------------------------------------------------------------------------------- events


class ResponseCreatedEvent(WireModel):
    """`response.created`: the response object at the start."""

    type: Literal["response.created"]
    response: Response
    sequence_number: int


class ResponseInProgressEvent(WireModel):
    """`response.in_progress`: the response object while generating."""

    type: Literal["response.in_progress"]
    response: Response
    sequence_number: int


class ResponseCompletedEvent(WireModel):
    """`response.completed`: the final response object."""

    type: Literal["response.completed"]
    response: Response
    sequence_number: int


class ResponseIncompleteEvent(WireModel):
    """`response.incomplete`: the final response object of a cut-off response."""

    type: Literal["response.incomplete"]
    response: Response
    sequence_number: int


class ResponseFailedEvent(WireModel):
    """`response.failed`: the final response object of a failed response."""

    type: Literal["response.failed"]
    response: Response
    sequence_number: int


class ResponseOutputItemAddedEvent(WireModel):
    """`response.output_item.added`: a new output item."""

    type: Literal["response.output_item.added"]
    item: ResponseOutputItem
    output_index: int
    sequence_number: int


class ResponseOutputItemDoneEvent(WireModel):
    """`response.output_item.done`: a finished output item."""

    type: Literal["response.output_item.done"]
    item: ResponseOutputItem
    output_index: int
    sequence_number: int


ResponseContentPart = Annotated[
    ResponseOutputText | ResponseOutputRefusal | ResponseReasoningText,
    Field(discriminator="type"),
]
"""A content part carried by content part events, chosen by `type`."""


class ResponseContentPartAddedEvent(WireModel):
    """`response.content_part.added`: a new content part of an item."""

    type: Literal["response.content_part.added"]
    content_index: int
    item_id: str
    output_index: int
    part: ResponseContentPart
    sequence_number: int


class ResponseContentPartDoneEvent(WireModel):
    """`response.content_part.done`: a finished content part of an item."""

    type: Literal["response.content_part.done"]
    content_index: int
    item_id: str
    output_index: int
    part: ResponseContentPart
    sequence_number: int


class ResponseTextDeltaEvent(WireModel):
    """`response.output_text.delta`: a piece of message text with its logprobs."""

    type: Literal["response.output_text.delta"]
    content_index: int
    delta: str
    item_id: str
    logprobs: list[TokenLogprob] | None = None
    output_index: int
    sequence_number: int


class ResponseTextDoneEvent(WireModel):
    """`response.output_text.done`: the full message text with all logprobs."""

    type: Literal["response.output_text.done"]
    content_index: int
    item_id: str
    logprobs: list[TokenLogprob] | None = None
    output_index: int
    sequence_number: int
    text: str


class ResponseReasoningTextDeltaEvent(WireModel):
    """`response.reasoning_text.delta`: a piece of reasoning text."""

    type: Literal["response.reasoning_text.delta"]
    content_index: int
    delta: str
    item_id: str
    output_index: int
    sequence_number: int


class ResponseReasoningTextDoneEvent(WireModel):
    """`response.reasoning_text.done`: the full reasoning text."""

    type: Literal["response.reasoning_text.done"]
    content_index: int
    item_id: str
    output_index: int
    sequence_number: int
    text: str


class ResponseFunctionCallArgumentsDeltaEvent(WireModel):
    """`response.function_call_arguments.delta`: a fragment of function call arguments."""

    type: Literal["response.function_call_arguments.delta"]
    delta: str
    item_id: str
    output_index: int
    sequence_number: int


class ResponseFunctionCallArgumentsDoneEvent(WireModel):
    """`response.function_call_arguments.done`: the full function call arguments."""

    type: Literal["response.function_call_arguments.done"]
    arguments: str
    item_id: str
    name: str | None = None
    output_index: int
    sequence_number: int


class ResponseCustomToolCallInputDeltaEvent(WireModel):
    """`response.custom_tool_call_input.delta`: a fragment of custom tool input."""

    type: Literal["response.custom_tool_call_input.delta"]
    delta: str
    item_id: str
    output_index: int
    sequence_number: int


class ResponseCustomToolCallInputDoneEvent(WireModel):
    """`response.custom_tool_call_input.done`: the full custom tool input."""

    type: Literal["response.custom_tool_call_input.done"]
    input: str
    item_id: str
    output_index: int
    sequence_number: int


ResponseStreamEvent = Annotated[
    ResponseCreatedEvent
    | ResponseInProgressEvent
    | ResponseCompletedEvent
    | ResponseIncompleteEvent
    | ResponseFailedEvent
    | ResponseOutputItemAddedEvent
    | ResponseOutputItemDoneEvent
    | ResponseContentPartAddedEvent
    | ResponseContentPartDoneEvent
    | ResponseTextDeltaEvent
    | ResponseTextDoneEvent
    | ResponseReasoningTextDeltaEvent
    | ResponseReasoningTextDoneEvent
    | ResponseFunctionCallArgumentsDeltaEvent
    | ResponseFunctionCallArgumentsDoneEvent
    | ResponseCustomToolCallInputDeltaEvent
    | ResponseCustomToolCallInputDoneEvent,
    Field(discriminator="type"),
]
"""A Responses stream event (SSE `event:` name = `type`), chosen by `type`."""
