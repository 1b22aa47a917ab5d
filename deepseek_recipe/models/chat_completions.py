"""OpenAI Chat Completions wire models: the request, the response and the stream chunk."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from deepseek_recipe.models.common import (
    CompletionUsage,
    ImageDetail,
    JsonSchema,
    ReasoningEffort,
    ThinkingConfig,
    TokenLogprob,
    UInt8,
    UInt32,
    UInt64,
    WireModel,
)

__all__ = [
    "ChatCompletion",
    "ChatCompletionAssistantMessageParam",
    "ChatCompletionChunk",
    "ChatCompletionContentPart",
    "ChatCompletionContentPartFileParam",
    "ChatCompletionContentPartImageParam",
    "ChatCompletionContentPartTextParam",
    "ChatCompletionFinishReason",
    "ChatCompletionLatestReminderMessageParam",
    "ChatCompletionMessage",
    "ChatCompletionMessageContent",
    "ChatCompletionMessageParam",
    "ChatCompletionMessageToolCall",
    "ChatCompletionMessageToolCallParam",
    "ChatCompletionNamedToolChoice",
    "ChatCompletionRequest",
    "ChatCompletionStreamOptions",
    "ChatCompletionSystemMessageParam",
    "ChatCompletionToolChoice",
    "ChatCompletionToolMessageParam",
    "ChatCompletionToolParam",
    "ChatCompletionUserMessageParam",
    "Choice",
    "ChoiceDelta",
    "ChoiceDeltaToolCall",
    "ChoiceDeltaToolCallFunction",
    "ChoiceLogprobs",
    "ChunkChoice",
    "FileObject",
    "FunctionCall",
    "FunctionDefinition",
    "ImageURL",
    "JSONSchemaConfig",
    "NamedToolChoiceFunction",
    "ResponseFormat",
    "ResponseFormatJSONObject",
    "ResponseFormatJSONSchema",
    "ResponseFormatRegex",
    "ResponseFormatText",
]

ChatCompletionFinishReason = Literal[
    "stop", "length", "tool_calls", "content_filter", "insufficient_system_resource"
]
"""Why a Chat Completions choice stopped."""


# ---------------------------------------------------------------------------------- request


class ChatCompletionContentPartTextParam(WireModel):
    """A text content part."""

    type: Literal["text"]
    text: str


class ImageURL(WireModel):
    """The image reference of an `image_url` part (http(s) or data URL)."""

    url: str
    detail: ImageDetail | None = None


class ChatCompletionContentPartImageParam(WireModel):
    """An image content part."""

    type: Literal["image_url"]
    image_url: ImageURL


class FileObject(WireModel):
    """The file reference of a `file` part (DeepSeek rejects files at conversion)."""

    file_data: str | None = None
    file_id: str | None = None
    filename: str | None = None


class ChatCompletionContentPartFileParam(WireModel):
    """A file content part."""

    type: Literal["file"]
    file: FileObject


ChatCompletionContentPart = Annotated[
    ChatCompletionContentPartTextParam
    | ChatCompletionContentPartImageParam
    | ChatCompletionContentPartFileParam,
    Field(discriminator="type"),
]
"""A content part of a message, chosen by `type`."""

ChatCompletionMessageContent = str | list[ChatCompletionContentPart]
"""Message content: a string or a list of parts."""


class FunctionCall(WireModel):
    """The function name and JSON argument text of a tool call."""

    name: str
    arguments: str


class ChatCompletionMessageToolCallParam(WireModel):
    """A tool call in an assistant history message."""

    id: str
    type: Literal["function"]
    function: FunctionCall


class ChatCompletionSystemMessageParam(WireModel):
    """A system message (hoisted into the system prompt)."""

    role: Literal["system"]
    content: ChatCompletionMessageContent
    name: str | None = None


class ChatCompletionUserMessageParam(WireModel):
    """A user message."""

    role: Literal["user"]
    content: ChatCompletionMessageContent
    name: str | None = None


class ChatCompletionAssistantMessageParam(WireModel):
    """An assistant history message, or the prefix to continue when `prefix` is true."""

    role: Literal["assistant"]
    content: ChatCompletionMessageContent | None = None
    reasoning_content: str | None = None
    tool_calls: list[ChatCompletionMessageToolCallParam] | None = None
    prefix: bool | None = None
    name: str | None = None


class ChatCompletionToolMessageParam(WireModel):
    """A tool result message."""

    role: Literal["tool"]
    content: ChatCompletionMessageContent
    tool_call_id: str


class ChatCompletionLatestReminderMessageParam(WireModel):
    """DeepSeek's `latest_reminder` message (text only), rendered in place."""

    role: Literal["latest_reminder"]
    content: str


ChatCompletionMessageParam = Annotated[
    ChatCompletionSystemMessageParam
    | ChatCompletionUserMessageParam
    | ChatCompletionAssistantMessageParam
    | ChatCompletionToolMessageParam
    | ChatCompletionLatestReminderMessageParam,
    Field(discriminator="role"),
]
"""A request message, chosen by `role`."""


class FunctionDefinition(WireModel):
    """A function a tool exposes."""

    name: str
    description: str | None = None
    parameters: JsonSchema | None = None
    strict: bool | None = None


class ChatCompletionToolParam(WireModel):
    """A tool declaration (functions only)."""

    type: Literal["function"]
    function: FunctionDefinition


class NamedToolChoiceFunction(WireModel):
    """The function a named tool choice forces."""

    name: str


class ChatCompletionNamedToolChoice(WireModel):
    """A tool choice that forces one named function."""

    type: Literal["function"]
    function: NamedToolChoiceFunction


ChatCompletionToolChoice = Literal["none", "auto", "required"] | ChatCompletionNamedToolChoice
"""`none`, `auto`, `required`, or one named function."""


class ResponseFormatText(WireModel):
    """Plain text output."""

    type: Literal["text"]


class ResponseFormatJSONObject(WireModel):
    """JSON object output (JSON mode)."""

    type: Literal["json_object"]


class JSONSchemaConfig(WireModel):
    """The schema of a `json_schema` response format."""

    name: str | None = None
    description: str | None = None
    schema_: JsonSchema = Field(alias="schema")
    strict: bool | None = None


class ResponseFormatJSONSchema(WireModel):
    """Output constrained by a JSON schema."""

    type: Literal["json_schema"]
    json_schema: JSONSchemaConfig


class ResponseFormatRegex(WireModel):
    """Output constrained by a regular expression (DeepSeek extension)."""

    type: Literal["regex"]
    regex: str


ResponseFormat = Annotated[
    ResponseFormatText | ResponseFormatJSONObject | ResponseFormatJSONSchema | ResponseFormatRegex,
    Field(discriminator="type"),
]
"""A response format, chosen by `type`."""


class ChatCompletionStreamOptions(WireModel):
    """Streaming options."""

    include_usage: bool | None = None


class ChatCompletionRequest(WireModel):
    """A Chat Completions request body (`POST /chat/completions`)."""

    model: str
    messages: list[ChatCompletionMessageParam]
    frequency_penalty: float | None = None
    logprobs: bool | None = None
    max_tokens: UInt32 | None = None
    n: int | None = None
    parallel_tool_calls: bool | None = None
    presence_penalty: float | None = None
    reasoning_effort: ReasoningEffort | None = None
    response_format: ResponseFormat | None = None
    seed: UInt64 | None = None
    stop: str | list[str] | None = None
    stream: bool | None = None
    stream_options: ChatCompletionStreamOptions | None = None
    temperature: float | None = None
    thinking: ThinkingConfig | None = None
    tool_choice: ChatCompletionToolChoice | None = None
    tools: list[ChatCompletionToolParam] | None = None
    top_logprobs: UInt8 | None = None
    top_p: float | None = None
    user: str | None = None


# ---------------------------------------------------------------------------------- response


class ChatCompletionMessageToolCall(WireModel):
    """A tool call of a response message."""

    index: int | None = None
    id: str
    type: Literal["function"]
    function: FunctionCall


class ChatCompletionMessage(WireModel):
    """The assistant message of a response choice."""

    role: Literal["assistant"]
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[ChatCompletionMessageToolCall] | None = None


class ChoiceLogprobs(WireModel):
    """Log probabilities of a choice, split into content and reasoning."""

    content: list[TokenLogprob] | None = None
    reasoning_content: list[TokenLogprob] | None = None


class Choice(WireModel):
    """One choice of a response."""

    index: int
    message: ChatCompletionMessage
    logprobs: ChoiceLogprobs | None = None
    finish_reason: ChatCompletionFinishReason | None = None


class ChatCompletion(WireModel):
    """A non-streaming Chat Completions response."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[Choice]
    usage: CompletionUsage | None = None
    system_fingerprint: str | None = None


# ---------------------------------------------------------------------------------- chunk


class ChoiceDeltaToolCallFunction(WireModel):
    """A fragment of a streamed function call (name first, then argument text)."""

    name: str | None = None
    arguments: str | None = None


class ChoiceDeltaToolCall(WireModel):
    """A fragment of a streamed tool call; the header carries `id` and `type`."""

    index: int
    id: str | None = None
    type: Literal["function"] | None = None
    function: ChoiceDeltaToolCallFunction | None = None


class ChoiceDelta(WireModel):
    """The delta of a streamed choice."""

    role: Literal["assistant"] | None = None
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[ChoiceDeltaToolCall] | None = None


class ChunkChoice(WireModel):
    """One choice of a stream chunk."""

    index: int
    delta: ChoiceDelta
    logprobs: ChoiceLogprobs | None = None
    finish_reason: ChatCompletionFinishReason | None = None


class ChatCompletionChunk(WireModel):
    """One Chat Completions stream chunk (`data:` line of the SSE stream)."""

    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    system_fingerprint: str | None = None
    choices: list[ChunkChoice]
    usage: CompletionUsage | None = None
