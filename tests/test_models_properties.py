"""Property and unit tests of the wire models: random valid bodies round-trip symmetrically."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from deepseek_recipe.models import (
    ChatCompletionChunk,
    ChatCompletionRequest,
    ChatCompletionUserMessageParam,
    InferenceChunk,
    JSONSchemaConfig,
    MessagesRequest,
    ReadyChunk,
    ResponseInputMessage,
    ResponseOtherItem,
    ResponseReasoningItem,
    ResponsesRequest,
    TokensChunk,
    WireModel,
)

INFERENCE_CHUNK = TypeAdapter(InferenceChunk)

texts = st.text(max_size=12)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_-0123456789", min_size=1, max_size=10)
finite_floats = st.floats(allow_nan=False, allow_infinity=False)
json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | finite_floats | texts
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(texts, json_values, max_size=3)
unknown_fields = st.dictionaries(names.map(lambda name: f"x_{name}"), json_values, max_size=2)
efforts = st.sampled_from(["none", "minimal", "low", "medium", "high", "xhigh", "ultra", "max"])


def wire_object(
    required: dict[str, st.SearchStrategy[Any]],
    optional: dict[str, st.SearchStrategy[Any]] | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    """A JSON object with the required keys, any subset of the optional ones, and unknown keys."""
    known = st.fixed_dictionaries(required, optional=optional or {})
    return st.builds(lambda fields, extra: {**fields, **extra}, known, unknown_fields)


def tagged(key: str, value: str, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A wire object whose discriminator `key` is fixed to `value`."""
    return wire_object({key: st.just(value), **fields})


# ---------------------------------------------------------------------------- chat completions

cc_parts = st.lists(
    tagged("type", "text", text=texts)
    | tagged(
        "type",
        "image_url",
        image_url=wire_object(
            {"url": texts}, {"detail": st.sampled_from(["low", "high", "original", "auto"])}
        ),
    ),
    max_size=3,
)
cc_content = texts | cc_parts
cc_tool_call = tagged(
    "type", "function", id=texts, function=wire_object({"name": names, "arguments": texts})
)
cc_messages = st.lists(
    tagged("role", "system", content=cc_content)
    | tagged("role", "user", content=cc_content)
    | tagged("role", "tool", content=cc_content, tool_call_id=texts)
    | tagged("role", "latest_reminder", content=texts)
    | wire_object(
        {"role": st.just("assistant")},
        {
            "content": st.none() | cc_content,
            "reasoning_content": st.none() | texts,
            "tool_calls": st.lists(cc_tool_call, min_size=1, max_size=2),
            "prefix": st.booleans(),
        },
    ),
    min_size=1,
    max_size=4,
)
cc_tools = st.lists(
    tagged(
        "type",
        "function",
        function=wire_object(
            {"name": names},
            {"description": texts, "parameters": json_objects, "strict": st.booleans()},
        ),
    ),
    max_size=2,
)
cc_response_format = (
    tagged("type", "text")
    | tagged("type", "json_object")
    | tagged(
        "type", "json_schema", json_schema=wire_object({"schema": json_objects}, {"name": names})
    )
    | tagged("type", "regex", regex=texts)
)
cc_requests = wire_object(
    {"model": texts, "messages": cc_messages},
    {
        "temperature": finite_floats,
        "top_p": finite_floats,
        "max_tokens": st.integers(0, 2**32 - 1),
        "seed": st.integers(0, 2**64 - 1),
        "stream": st.booleans(),
        "stream_options": wire_object({}, {"include_usage": st.booleans()}),
        "stop": texts | st.lists(texts, max_size=3),
        "logprobs": st.booleans(),
        "top_logprobs": st.integers(0, 255),
        "tools": cc_tools,
        "tool_choice": st.sampled_from(["none", "auto", "required"])
        | tagged("type", "function", function=wire_object({"name": names})),
        "thinking": wire_object(
            {"type": st.sampled_from(["enabled", "disabled", "adaptive"])},
            {"budget_tokens": st.integers(0, 2**64 - 1)},
        ),
        "reasoning_effort": efforts,
        "response_format": cc_response_format,
    },
)

# ---------------------------------------------------------------------------- responses

rs_parts = st.lists(
    tagged("type", "input_text", text=texts)
    | tagged("type", "output_text", text=texts)
    | wire_object({"type": st.just("input_image")}, {"image_url": texts, "file_id": texts}),
    max_size=2,
)
rs_items = st.lists(
    wire_object(
        {"role": st.sampled_from(["user", "assistant", "system", "developer"]), "content": texts},
        {"type": st.just("message")},
    )
    | tagged("type", "message", role=st.just("user"), content=rs_parts)
    | wire_object(
        {"type": st.just("reasoning")},
        {"id": texts, "content": st.lists(tagged("type", "reasoning_text", text=texts))},
    )
    | tagged("type", "function_call", call_id=texts, name=names, arguments=texts)
    | tagged("type", "function_call_output", call_id=texts, output=texts)
    | tagged("type", "custom_tool_call", call_id=texts, name=names, input=texts)
    | wire_object({"type": names.map(lambda name: f"zz_{name}")}),
    min_size=1,
    max_size=4,
)
rs_function_tool = wire_object(
    {"type": st.just("function"), "name": names},
    {"description": texts, "parameters": json_objects, "strict": st.booleans()},
)
rs_tools = st.lists(
    rs_function_tool
    | tagged("type", "custom", name=names)
    | tagged("type", "namespace", name=names, tools=st.lists(rs_function_tool, max_size=2))
    | tagged("type", "web_search")
    | wire_object({"type": names.map(lambda name: f"zz_{name}")}),
    max_size=3,
)
rs_requests = wire_object(
    {"model": texts},
    {
        "input": texts | rs_items,
        "instructions": texts,
        "max_output_tokens": st.integers(0, 2**32 - 1),
        "temperature": finite_floats,
        "top_logprobs": st.integers(0, 255),
        "tools": rs_tools,
        "tool_choice": st.sampled_from(["none", "auto", "required"])
        | tagged("type", "function", name=names),
        "reasoning": wire_object({}, {"effort": efforts, "summary": texts}),
        "text": wire_object(
            {},
            {
                "format": tagged("type", "text")
                | tagged("type", "json_schema", name=names, schema=json_objects),
                "verbosity": st.sampled_from(["low", "medium", "high"]),
            },
        ),
        "stream": st.booleans(),
    },
)

# ---------------------------------------------------------------------------- messages

ms_text = tagged("type", "text", text=texts)
ms_blocks = st.lists(
    ms_text
    | tagged(
        "type",
        "image",
        source=tagged("type", "base64", media_type=st.just("image/png"), data=texts)
        | tagged("type", "url", url=texts),
    )
    | tagged("type", "thinking", thinking=texts, signature=texts)
    | tagged("type", "tool_use", id=texts, name=names, input=json_values)
    | wire_object(
        {"type": st.just("tool_result"), "tool_use_id": texts},
        {"content": texts | st.lists(ms_text, max_size=2), "is_error": st.booleans()},
    ),
    min_size=1,
    max_size=3,
)
ms_requests = wire_object(
    {
        "model": texts,
        "messages": st.lists(
            tagged("role", "user", content=texts | ms_blocks)
            | tagged("role", "assistant", content=texts | ms_blocks),
            min_size=1,
            max_size=3,
        ),
    },
    {
        "max_tokens": st.integers(0, 2**32 - 1),
        "system": texts | st.lists(ms_text, max_size=2),
        "temperature": finite_floats,
        "stop_sequences": st.lists(texts, max_size=2),
        "thinking": tagged("type", "enabled", budget_tokens=st.integers(0, 2**64 - 1)),
        "output_config": wire_object({}, {"effort": efforts}),
        "tools": st.lists(
            wire_object({"name": names}, {"description": texts, "input_schema": json_objects}),
            max_size=2,
        ),
        "tool_choice": tagged("type", "auto")
        | tagged("type", "any")
        | tagged("type", "tool", name=names)
        | tagged("type", "none"),
    },
)

# ---------------------------------------------------------------------------- response side

logprob_entries = st.lists(
    st.tuples(finite_floats, st.lists(st.tuples(st.integers(0, 2**31), finite_floats), max_size=2))
)
inference_chunks = (
    wire_object(
        {"kind": st.just("ready")},
        {
            "prompt_tokens": st.integers(0, 2**31),
            "prompt_cache_hit_tokens": st.integers(0, 2**31),
            "system_fingerprint": st.none() | texts,
        },
    )
    | tagged("kind", "text", content=texts, token_count=st.integers(0, 2**32 - 1))
    | wire_object(
        {"kind": st.just("tokens"), "token_ids": st.lists(st.integers(0, 2**31))},
        {"logprobs": st.none() | logprob_entries.map(lambda entries: [list(e) for e in entries])},
    )
    | tagged("kind", "finish", finish_reason=st.sampled_from(["stop", "length", "content_filter"]))
)
chat_chunks = wire_object(
    {
        "id": texts,
        "object": st.just("chat.completion.chunk"),
        "created": st.integers(0, 2**40),
        "model": texts,
        "system_fingerprint": st.none() | texts,
        "choices": st.lists(
            wire_object(
                {
                    "index": st.integers(0, 3),
                    "delta": wire_object(
                        {},
                        {
                            "role": st.just("assistant"),
                            "content": st.none() | texts,
                            "reasoning_content": st.none() | texts,
                        },
                    ),
                    "logprobs": st.none(),
                    "finish_reason": st.none() | st.sampled_from(["stop", "length", "tool_calls"]),
                }
            ),
            max_size=1,
        ),
    },
    {"usage": st.none()},
)


def as_json_value(value: Any) -> Any:
    """The value as a JSON parser sees it (tuples become lists)."""
    return json.loads(json.dumps(value))


ROUND_TRIP_CASES: list[tuple[type[WireModel], st.SearchStrategy[dict[str, Any]]]] = [
    (ChatCompletionRequest, cc_requests),
    (ResponsesRequest, rs_requests),
    (MessagesRequest, ms_requests),
    (ChatCompletionChunk, chat_chunks),
]


@pytest.mark.parametrize(
    ("model", "bodies"), ROUND_TRIP_CASES, ids=[m.__name__ for m, _ in ROUND_TRIP_CASES]
)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_random_bodies_round_trip(
    model: type[WireModel], bodies: st.SearchStrategy[dict[str, Any]], data: st.DataObject
) -> None:
    """JSON and Python validation agree, `to_json()` gives the body back, re-parsing is stable."""
    body = data.draw(bodies)
    text = json.dumps(body, ensure_ascii=False)
    from_json = model.model_validate_json(text)
    from_python = model.model_validate(body)
    dumped = from_json.to_json()
    assert json.loads(dumped) == body
    assert from_python.to_json() == dumped
    assert model.model_validate_json(dumped).to_json() == dumped


@settings(max_examples=200, deadline=None)
@given(chunk=inference_chunks)
def test_random_inference_chunks_round_trip(chunk: dict[str, Any]) -> None:
    """Inference chunks round-trip through the `kind`-discriminated union."""
    parsed = INFERENCE_CHUNK.validate_json(json.dumps(chunk))
    assert parsed.kind == chunk["kind"]
    assert json.loads(parsed.to_json()) == as_json_value(chunk)
    assert INFERENCE_CHUNK.validate_python(as_json_value(chunk)).to_json() == parsed.to_json()


def test_constructed_models_dump_only_what_was_set() -> None:
    """Keyword construction dumps set fields only, under their wire names."""
    request = ChatCompletionRequest(
        model="DeepSeek-V4-Pro",
        messages=[ChatCompletionUserMessageParam(role="user", content="Hi")],
        temperature=0.5,
    )
    assert request.to_json() == (
        '{"model":"DeepSeek-V4-Pro","messages":[{"role":"user","content":"Hi"}],"temperature":0.5}'
    )
    schema = JSONSchemaConfig(name="answer", schema={"type": "object"})
    assert schema.schema_ == {"type": "object"}
    assert schema.to_json() == '{"name":"answer","schema":{"type":"object"}}'
    assert ResponseInputMessage(role="user", content="Hi").to_json() == (
        '{"role":"user","content":"Hi"}'
    )


def test_responses_items_are_chosen_by_type() -> None:
    """Typeless items are messages, known types get their model, unknown types are kept aside."""
    request = ResponsesRequest.model_validate_json(
        '{"model":"m","input":[{"role":"user","content":"Hi"},{"type":"reasoning","summary":[]},'
        '{"type":"item_reference","id":"x"}]}'
    )
    assert isinstance(request.input, list)
    kinds = [type(item) for item in request.input]
    assert kinds == [ResponseInputMessage, ResponseReasoningItem, ResponseOtherItem]


@pytest.mark.parametrize(
    "body",
    [
        '{"model":"m","messages":[],"temperature":"1"}',
        '{"model":"m","messages":[],"temperature":true}',
        '{"model":"m","messages":[],"temperature":1e400}',
        '{"model":"m","messages":[],"max_tokens":-1}',
        '{"model":"m","messages":[],"max_tokens":1.0}',
        '{"model":"m","messages":[],"stop":5}',
        '{"model":"m","messages":[{"role":"developer","content":"x"}]}',
        '{"model":"m","messages":[{"role":"user","content":null}]}',
        '{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio"}]}]}',
        '{"model":"m","messages":[],"tool_choice":"bogus"}',
    ],
)
def test_wrong_shapes_are_rejected(body: str) -> None:
    """Wrong JSON types, out-of-range integers and unknown enum values fail validation."""
    with pytest.raises(ValidationError):
        ChatCompletionRequest.model_validate_json(body)


def test_ready_chunk_prompt_usage() -> None:
    """A ready chunk exposes its prompt usage only when `prompt_tokens` is present."""
    ready = ReadyChunk.model_validate_json(
        '{"kind":"ready","prompt_tokens":7,"system_fingerprint":null}'
    )
    assert ready.prompt_usage is not None
    assert (ready.prompt_usage.prompt_tokens, ready.prompt_usage.prompt_cache_hit_tokens) == (7, 0)
    assert ReadyChunk(kind="ready").prompt_usage is None
    tokens = TokensChunk.model_validate_json(
        '{"kind":"tokens","token_ids":[1],"logprobs":[[-0.5,[[1,-0.5]]]]}'
    )
    assert tokens.logprobs == [(-0.5, [(1, -0.5)])]


def test_docs_example_runs() -> None:
    """The example in docs/python-models.md runs as written."""
    docs = Path(__file__).resolve().parent.parent / "docs" / "python-models.md"
    blocks = re.findall(r"```python\n(.*?)```", docs.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks
    for block in blocks:
        exec(compile(block, str(docs), "exec"), {})
