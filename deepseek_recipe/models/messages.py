"""Anthropic Messages wire models: the request, the message response and every stream event."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, JsonValue

from deepseek_recipe.models.common import (
    JsonSchema,
    MessageDeltaUsage,
    MessageUsage,
    ReasoningEffort,
    ThinkingConfig,
    UInt32,
    WireModel,
)

__all__ = [
    "Base64ImageSource",
    "ContentBlock",
    "ContentBlockDeltaEvent",
    "ContentBlockParam",
    "ContentBlockStartEvent",
    "ContentBlockStopEvent",
    "DocumentBlockParam",
    "DocumentSource",
    "FileImageSource",
    "ImageBlockParam",
    "ImageSource",
    "InputJSONDelta",
    "Message",
    "MessageDelta",
    "MessageDeltaEvent",
    "MessageParam",
    "MessageStartEvent",
    "MessageStopEvent",
    "MessageStreamEvent",
    "MessagesRequest",
    "OutputConfig",
    "PingEvent",
    "RawContentBlockDelta",
    "RedactedThinkingBlock",
    "RedactedThinkingBlockParam",
    "ServerToolUseBlockParam",
    "SignatureDelta",
    "StopReason",
    "TextBlock",
    "TextBlockParam",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingBlockParam",
    "ThinkingDelta",
    "ToolAdditionBlockParam",
    "ToolChoice",
    "ToolChoiceAny",
    "ToolChoiceAuto",
    "ToolChoiceNone",
    "ToolChoiceTool",
    "ToolParam",
    "ToolReferenceBlockParam",
    "ToolResultBlockParam",
    "ToolResultContentBlock",
    "ToolUseBlock",
    "ToolUseBlockParam",
    "URLImageSource",
    "WebSearchToolResultBlockParam",
]

StopReason = Literal["end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal"]
"""Why a message stopped."""


# ---------------------------------------------------------------------------------- request


class TextBlockParam(WireModel):
    """A text block."""

    type: Literal["text"]
    text: str


class Base64ImageSource(WireModel):
    """Inline base64 image data."""

    type: Literal["base64"]
    media_type: Literal["image/jpeg", "image/jpg", "image/png", "image/gif", "image/webp"]
    data: str


class URLImageSource(WireModel):
    """An image referenced by URL."""

    type: Literal["url"]
    url: str


class FileImageSource(WireModel):
    """An image referenced by uploaded file id (rejected by DeepSeek at conversion)."""

    type: Literal["file"]
    file_id: str


ImageSource = Annotated[
    Base64ImageSource | URLImageSource | FileImageSource, Field(discriminator="type")
]
"""The source of an image block, chosen by `type`."""


class ImageBlockParam(WireModel):
    """An image block."""

    type: Literal["image"]
    source: ImageSource


class DocumentSource(WireModel):
    """The source of a document block (base64, text, url, content or file)."""

    type: str
    media_type: str | None = None
    data: JsonValue = None
    url: str | None = None


class DocumentBlockParam(WireModel):
    """A document block (rendered as an unsupported document by DeepSeek)."""

    type: Literal["document"]
    source: DocumentSource


class ThinkingBlockParam(WireModel):
    """A thinking block of an assistant history message (reasoning pass-back)."""

    type: Literal["thinking"]
    thinking: str
    signature: str | None = None


class RedactedThinkingBlockParam(WireModel):
    """A redacted thinking block (rejected by the DeepSeek reference at parse time)."""

    type: Literal["redacted_thinking"]
    data: str


class ToolUseBlockParam(WireModel):
    """A tool call of an assistant history message."""

    type: Literal["tool_use"]
    id: str
    name: str
    input: JsonValue


class ServerToolUseBlockParam(WireModel):
    """A server tool call in history (DeepSeek rejects or drops it)."""

    type: Literal["server_tool_use"]
    id: str
    name: str
    input: JsonValue


class ToolReferenceBlockParam(WireModel):
    """A reference to a declared tool inside a tool result."""

    type: Literal["tool_reference"]
    tool_name: str


ToolResultContentBlock = Annotated[
    TextBlockParam | ImageBlockParam | DocumentBlockParam | ToolReferenceBlockParam,
    Field(discriminator="type"),
]
"""A block inside a tool result, chosen by `type`."""


class ToolResultBlockParam(WireModel):
    """The result of a tool call, matched by `tool_use_id`."""

    type: Literal["tool_result"]
    tool_use_id: str
    content: str | list[ToolResultContentBlock] | None = None
    is_error: bool | None = None


class WebSearchToolResultBlockParam(WireModel):
    """A web search result in history (DeepSeek rejects or drops it)."""

    type: Literal["web_search_tool_result"]
    tool_use_id: str
    content: JsonValue = None


class ToolAdditionBlockParam(WireModel):
    """A tool addition block (accepted, no effect on the prompt)."""

    type: Literal["tool_addition"]


ContentBlockParam = Annotated[
    TextBlockParam
    | ImageBlockParam
    | DocumentBlockParam
    | ThinkingBlockParam
    | RedactedThinkingBlockParam
    | ServerToolUseBlockParam
    | ToolUseBlockParam
    | ToolResultBlockParam
    | WebSearchToolResultBlockParam
    | ToolAdditionBlockParam,
    Field(discriminator="type"),
]
"""A content block of a request message, chosen by `type`."""


class MessageParam(WireModel):
    """A request message (`system` inside messages becomes a system reminder)."""

    role: Literal["user", "assistant", "system"]
    content: str | list[ContentBlockParam]


class ToolParam(WireModel):
    """A tool declaration; any `type` other than a plain tool is a server tool (rejected)."""

    type: str | None = None
    name: str
    description: str | None = None
    input_schema: JsonSchema | None = None
    defer_loading: bool | None = None
    strict: bool | None = None


class ToolChoiceAuto(WireModel):
    """Let the model decide."""

    type: Literal["auto"]
    disable_parallel_tool_use: bool | None = None


class ToolChoiceAny(WireModel):
    """Use any tool (DeepSeek treats it as auto)."""

    type: Literal["any"]
    disable_parallel_tool_use: bool | None = None


class ToolChoiceTool(WireModel):
    """Force the named tool."""

    type: Literal["tool"]
    name: str
    disable_parallel_tool_use: bool | None = None


class ToolChoiceNone(WireModel):
    """Use no tool."""

    type: Literal["none"]


ToolChoice = Annotated[
    ToolChoiceAuto | ToolChoiceAny | ToolChoiceTool | ToolChoiceNone, Field(discriminator="type")
]
"""A tool choice, chosen by `type`."""


class OutputConfig(WireModel):
    """Output configuration (`effort` selects the reasoning effort)."""

    effort: ReasoningEffort | None = None


class MessagesRequest(WireModel):
    """A Messages request body (`POST /v1/messages`)."""

    model: str
    messages: list[MessageParam]
    max_tokens: UInt32 | None = None
    output_config: OutputConfig | None = None
    stop_sequences: list[str] | None = None
    stream: bool | None = None
    system: str | list[TextBlockParam] | None = None
    temperature: float | None = None
    thinking: ThinkingConfig | None = None
    tool_choice: ToolChoice | None = None
    tools: list[ToolParam] | None = None
    top_p: float | None = None


# ---------------------------------------------------------------------------------- response


class TextBlock(WireModel):
    """A text block of a response."""

    type: Literal["text"]
    text: str


class ThinkingBlock(WireModel):
    """A thinking block of a response."""

    type: Literal["thinking"]
    thinking: str
    signature: str


class RedactedThinkingBlock(WireModel):
    """A redacted thinking block of a response."""

    type: Literal["redacted_thinking"]
    data: str


class ToolUseBlock(WireModel):
    """A tool call block of a response."""

    type: Literal["tool_use"]
    id: str
    name: str
    input: JsonValue


ContentBlock = Annotated[
    TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock, Field(discriminator="type")
]
"""A content block of a response, chosen by `type`."""


class Message(WireModel):
    """A Messages response (also carried by `message_start`)."""

    id: str
    type: Literal["message"]
    role: Literal["assistant"]
    model: str
    content: list[ContentBlock]
    stop_reason: StopReason | None = None
    stop_sequence: str | None = None
    usage: MessageUsage


# ---------------------------------------------------------------------------------- events


class MessageStartEvent(WireModel):
    """`message_start`: the message with empty content."""

    type: Literal["message_start"]
    message: Message


class ContentBlockStartEvent(WireModel):
    """`content_block_start`: a new content block at `index`."""

    type: Literal["content_block_start"]
    index: int
    content_block: ContentBlock


class TextDelta(WireModel):
    """Text appended to a text block."""

    type: Literal["text_delta"]
    text: str


class ThinkingDelta(WireModel):
    """Text appended to a thinking block."""

    type: Literal["thinking_delta"]
    thinking: str


class InputJSONDelta(WireModel):
    """A fragment of a tool call's JSON input."""

    type: Literal["input_json_delta"]
    partial_json: str


class SignatureDelta(WireModel):
    """The signature that closes a thinking block."""

    type: Literal["signature_delta"]
    signature: str


RawContentBlockDelta = Annotated[
    TextDelta | ThinkingDelta | InputJSONDelta | SignatureDelta, Field(discriminator="type")
]
"""A content block delta, chosen by `type`."""


class ContentBlockDeltaEvent(WireModel):
    """`content_block_delta`: a delta for the block at `index`."""

    type: Literal["content_block_delta"]
    index: int
    delta: RawContentBlockDelta


class ContentBlockStopEvent(WireModel):
    """`content_block_stop`: the block at `index` is finished."""

    type: Literal["content_block_stop"]
    index: int


class MessageDelta(WireModel):
    """The final stop reason of a streamed message."""

    stop_reason: StopReason | None = None
    stop_sequence: str | None = None


class MessageDeltaEvent(WireModel):
    """`message_delta`: stop reason and cumulative usage."""

    type: Literal["message_delta"]
    delta: MessageDelta
    usage: MessageDeltaUsage


class MessageStopEvent(WireModel):
    """`message_stop`: the stream is finished."""

    type: Literal["message_stop"]


class PingEvent(WireModel):
    """`ping`: keeps the connection alive."""

    type: Literal["ping"]


MessageStreamEvent = Annotated[
    MessageStartEvent
    | ContentBlockStartEvent
    | ContentBlockDeltaEvent
    | ContentBlockStopEvent
    | MessageDeltaEvent
    | MessageStopEvent
    | PingEvent,
    Field(discriminator="type"),
]
"""A Messages stream event (SSE `event:` name = `type`), chosen by `type`."""
