"""Strict validation of the official API's JSON against the official SDKs' newest types.

The SDK clients parse leniently: unknown fields are kept as extras and a value of the wrong type
slips through, so an SDK test that only reads attributes accepts almost any body. Here every
response body and stream event is validated with pydantic's strict mode (no coercion: a string is
not a number, a required field must be present) against the SDK type of its endpoint, and every
field sent must be a field of that type. The exceptions are the known, deliberate differences of
the official API (DeepSeek's fields, fields the SDKs added that DeepSeek does not send), listed
here and in docs/server.md; `test_sdk_differences.py` checks that the golden stream vectors, which
the reference recorded, need every one of them and no other.
"""

from __future__ import annotations

import copy
import functools
import json
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import anthropic.types as anthropic_types
import openai.types as openai_types
from anthropic.types import MessageDeltaUsage, RawMessageStreamEvent
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessage,
    ChatCompletionTokenLogprob,
    chat_completion,
    chat_completion_chunk,
)
from openai.types.chat import ChatCompletionMessageFunctionToolCall as MessageToolCall
from openai.types.completion_usage import CompletionUsage
from openai.types.responses import (
    Response,
    ResponseCustomToolCall,
    ResponseStreamEvent,
    response_text_delta_event,
    response_text_done_event,
)
from openai.types.responses.response_usage import InputTokensDetails
from openai.types.shared import ErrorObject
from pydantic import BaseModel, TypeAdapter, ValidationError

Path = tuple[str | int, ...]
"""Where a value sits in a JSON document: object keys and list indices."""


@dataclass(frozen=True)
class ExtraField:
    """A field the official API sends that the SDK type does not declare."""

    owner: type[BaseModel]
    name: str
    annotation: object  # the type of what the official API sends, checked strictly
    why: str


@dataclass(frozen=True)
class OmittedField:
    """A field the SDK type requires that the official API does not send."""

    owner: type[BaseModel]
    name: str
    stand_in: object  # put in its place so that the rest of the object can be validated
    why: str


THINKING_LOGPROBS = "DeepSeek's log probabilities of the thinking tokens"
TOKEN_BYTES = "DeepSeek gives each token's UTF-8 bytes, as Chat Completions does"

EXTRA_FIELDS: tuple[ExtraField, ...] = (
    ExtraField(ChatCompletionMessage, "reasoning_content", str | None, "DeepSeek's thinking text"),
    ExtraField(
        chat_completion_chunk.ChoiceDelta,
        "reasoning_content",
        str | None,
        "DeepSeek's thinking text",
    ),
    ExtraField(
        chat_completion.ChoiceLogprobs,
        "reasoning_content",
        list[ChatCompletionTokenLogprob] | None,
        THINKING_LOGPROBS,
    ),
    ExtraField(
        chat_completion_chunk.ChoiceLogprobs,
        "reasoning_content",
        list[ChatCompletionTokenLogprob] | None,
        THINKING_LOGPROBS,
    ),
    ExtraField(
        CompletionUsage, "prompt_cache_hit_tokens", int, "DeepSeek's prompt-cache accounting"
    ),
    ExtraField(
        CompletionUsage, "prompt_cache_miss_tokens", int, "DeepSeek's prompt-cache accounting"
    ),
    ExtraField(
        MessageToolCall, "index", int, "DeepSeek numbers tool calls in complete messages too"
    ),
    ExtraField(Response, "store", bool, "DeepSeek echoes `store` (always false)"),
    ExtraField(Response, "frequency_penalty", float, "DeepSeek echoes the sampling penalties"),
    ExtraField(Response, "presence_penalty", float, "DeepSeek echoes the sampling penalties"),
    ExtraField(Response, "content_filters", None, "DeepSeek sends it, always null"),
    ExtraField(response_text_delta_event.Logprob, "bytes", list[int], TOKEN_BYTES),
    ExtraField(response_text_done_event.Logprob, "bytes", list[int], TOKEN_BYTES),
    ExtraField(response_text_delta_event.LogprobTopLogprob, "bytes", list[int], TOKEN_BYTES),
    ExtraField(response_text_done_event.LogprobTopLogprob, "bytes", list[int], TOKEN_BYTES),
    ExtraField(
        ResponseCustomToolCall, "status", str, "DeepSeek gives custom tool calls a status too"
    ),
    ExtraField(
        MessageDeltaUsage, "service_tier", str, "DeepSeek repeats the tier in the final usage"
    ),
)

OMITTED_FIELDS: tuple[OmittedField, ...] = (
    OmittedField(
        InputTokensDetails,
        "cache_write_tokens",
        0,
        "newer than DeepSeek's Responses usage, which reports cached_tokens only",
    ),
    OmittedField(
        openai_types.Model,
        "created",
        0,
        "DeepSeek's /models lists id, object and owned_by only",
    ),
)

PING_EVENT = {"type": "ping"}
"""Anthropic's keep-alive event: the SDK skips it, it is no `RawMessageStreamEvent`."""

_EXTRAS = {(f.owner, f.name): f for f in EXTRA_FIELDS}
_OMITTED = {(f.owner, f.name): f for f in OMITTED_FIELDS}


Differences = frozenset[ExtraField | OmittedField]
"""The listed differences a payload needed."""


def validate(sdk_type: type[BaseModel], payload: object) -> Differences:
    """Validates `payload` strictly as `sdk_type`; raises `AssertionError` (or pydantic's
    `ValidationError`) naming the path of every field that is unknown, missing or mistyped,
    unless it is a listed difference; returns the differences it needed."""
    adapter = _adapter(sdk_type)
    filled, stood_in = _fill_omitted(adapter, payload)
    nodes = dict(_models(adapter.validate_python(filled, strict=True), ()))
    used: set[ExtraField | OmittedField] = set()
    for path in stood_in:
        owner = nodes.get(path[:-1])
        omitted = None if owner is None else _OMITTED.get((type(owner), str(path[-1])))
        assert omitted is not None, f"{_dotted(path)}: required field missing"
        used.add(omitted)
    for path, node in nodes.items():
        for name, value in (node.model_extra or {}).items():
            extra = _EXTRAS.get((type(node), name))
            assert extra is not None, (
                f"{_dotted((*path, name))}: not a field of {type(node).__name__}: {value!r}"
            )
            _adapter(extra.annotation).validate_python(value, strict=True)
            used.add(extra)
    return frozenset(used)


def validate_error(payload: object) -> Differences:
    """An error body: exactly `{"error": ...}` with OpenAI's error object, on every endpoint (the
    official Anthropic-compatible endpoint answers errors in OpenAI's shape too, not in
    `anthropic.types.ErrorResponse`'s)."""
    assert isinstance(payload, dict) and list(payload) == ["error"], f"error body {payload!r}"
    return validate(ErrorObject, typing.cast(dict[str, object], payload)["error"])


def validate_models(payload: object) -> Differences:
    """`GET /models`: `{"object": "list", "data": [Model, ...]}`."""
    assert isinstance(payload, dict), f"models body {payload!r}"
    body = typing.cast(dict[str, object], payload)
    assert list(body) == ["object", "data"] and body["object"] == "list", f"models body {body!r}"
    data = body["data"]
    assert isinstance(data, list), f"models data {data!r}"
    return _union(validate(openai_types.Model, item) for item in typing.cast(list[object], data))


COMPLETE_TYPES: dict[str, type[BaseModel]] = {
    "chat_completions": ChatCompletion,
    "responses": Response,
    "messages": anthropic_types.Message,
}
"""The SDK type of a complete (non-stream) answer, by protocol."""


def validate_stream(protocol: str, events: list[tuple[str | None, object]]) -> Differences:
    """A protocol's stream, as (SSE event name, data) pairs: Chat Completions chunks then
    `[DONE]`; Responses and Messages events whose SSE name is their type (Messages pings
    exactly `PING_EVENT`)."""
    if protocol == "chat_completions":
        assert events and events[-1][1] == "[DONE]", "a chat stream ends with [DONE]"
        return _union(validate(ChatCompletionChunk, data) for _, data in events[:-1])
    union = ResponseStreamEvent if protocol == "responses" else RawMessageStreamEvent
    used: set[ExtraField | OmittedField] = set()
    for name, data in events:
        if protocol == "messages" and name == "ping":
            assert data == PING_EVENT, f"ping event {data!r}"
            continue
        assert isinstance(data, dict), f"an event is a JSON object: {data!r}"
        kind = typing.cast(dict[str, object], data).get("type")
        assert name == kind, f"SSE event {name!r} carries a {kind!r} event"
        used |= validate(_event_type(union, kind), data)
    return frozenset(used)


def parse_sse(body: str) -> list[tuple[str | None, object]]:
    """The complete events of an SSE body: (event name or None, data as JSON, or the text when it
    is not JSON, e.g. `[DONE]`); comments (keep-alives) are skipped."""
    events: list[tuple[str | None, object]] = []
    for block in body.replace("\r\n", "\n").split("\n\n")[:-1]:
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        if data:
            text = "\n".join(data)
            try:
                events.append((name, json.loads(text)))
            except ValueError:
                events.append((name, text))
    return events


def _event_type(union: object, kind: object) -> type[BaseModel]:
    """The member of a stream-event union whose `type` is `kind`."""
    for member in _union_members(union):
        if kind in typing.get_args(member.model_fields["type"].annotation):
            return member
    raise AssertionError(f"unknown event type {kind!r}")


def _union(parts: Iterable[Differences]) -> Differences:
    return frozenset().union(*parts)


@functools.cache
def _adapter(annotation: typing.Any) -> TypeAdapter[typing.Any]:
    """One adapter per type: building one compiles the type's whole validator."""
    return TypeAdapter(annotation)


def _union_members(union: object) -> list[type[BaseModel]]:
    if typing.get_origin(union) is typing.Annotated:
        return _union_members(typing.get_args(union)[0])
    return [m for m in typing.get_args(union) if isinstance(m, type)]


def _fill_omitted(adapter: TypeAdapter[typing.Any], payload: object) -> tuple[object, list[Path]]:
    """A copy of `payload` with a stand-in at every missing required field named like a listed
    omission (whose owner `validate` then checks), and those fields' paths."""
    try:
        adapter.validate_python(payload, strict=True)
    except ValidationError as error:
        names = {f.name: f.stand_in for f in OMITTED_FIELDS}
        filled = copy.deepcopy(payload)
        stood_in: list[Path] = []
        for issue in error.errors():
            path = typing.cast(Path, issue["loc"])
            if issue["type"] != "missing" or path[-1] not in names:
                continue
            holder = _container(filled, path[:-1])
            if isinstance(holder, dict):
                typing.cast(dict[str, object], holder)[str(path[-1])] = names[str(path[-1])]
                stood_in.append(path)
        return filled, stood_in
    return payload, []


def _container(document: object, path: Path) -> object:
    """The value at `path`, or None where the path does not lead into `document` (a union
    member's name in a pydantic error location)."""
    for step in path:
        if isinstance(document, dict) and isinstance(step, str):
            document = typing.cast(dict[str, object], document).get(step)
        elif isinstance(document, list) and isinstance(step, int):
            items = typing.cast(list[object], document)
            document = items[step] if step < len(items) else None
        else:
            return None
    return document


def _models(value: object, path: Path) -> Iterator[tuple[Path, BaseModel]]:
    """Every SDK model inside `value`, with its JSON path."""
    if isinstance(value, BaseModel):
        yield path, value
        for name, field in type(value).model_fields.items():
            yield from _models(getattr(value, name), (*path, field.alias or name))
    elif isinstance(value, list):
        for index, item in enumerate(typing.cast(list[object], value)):
            yield from _models(item, (*path, index))
    elif isinstance(value, dict):
        for key, item in typing.cast(dict[str, object], value).items():
            yield from _models(item, (*path, key))


def _dotted(path: Path) -> str:
    return "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path) or "."
