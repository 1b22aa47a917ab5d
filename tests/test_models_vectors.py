"""Golden-vector round trips of the pydantic wire models (`deepseek_recipe.models`).

Every successful request vector must validate into its request model and dump back to an equal JSON
value; every stream chunk/event, accumulated response and inference input of the stream vectors must
validate into the model chosen by protocol and `sse_event`/`object` and dump back byte-identically.

The vectors are read from `RECIPE_VECTORS` (default `<repo>/../shared/vectors`). A missing folder
fails the run unless `RECIPE_VECTORS_OPTIONAL=1`.

Placeholders: the stream vectors replace random timestamps by the strings `"<CREATED>"`,
`"<CREATED_AT>"` and `"<COMPLETED_AT>"` where the wire format has integers. Before validating, the
tests substitute fixed integers for them (`PLACEHOLDER_TIMESTAMPS`) in both the input and the
expected value. Tool-call id placeholders (`call_00_<R0>`) are strings already and stay as they are.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest
from pydantic import TypeAdapter, ValidationError

from deepseek_recipe.models import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    ErrorBody,
    InferenceChunk,
    Message,
    MessagesRequest,
    MessageStreamEvent,
    Response,
    ResponsesRequest,
    ResponseStreamEvent,
    WireModel,
)
from tests.vectors import VECTORS, VECTORS_OPTIONAL

REQUEST_FILES = (
    "requests/chat_completions.jsonl",
    "requests/responses.jsonl",
    "requests/messages.jsonl",
    "images/image_requests.jsonl",
)
STREAM_FILE = "streams/streams.jsonl"

REQUEST_MODELS: dict[str, type[WireModel]] = {
    "chat_completions": ChatCompletionRequest,
    "responses": ResponsesRequest,
    "messages": MessagesRequest,
}
RESPONSE_MODELS: dict[str, type[WireModel]] = {
    "chat_completions": ChatCompletion,
    "responses": Response,
    "messages": Message,
}
EVENT_ADAPTERS: dict[str, TypeAdapter[Any]] = {
    "responses": TypeAdapter(ResponseStreamEvent),
    "messages": TypeAdapter(MessageStreamEvent),
}
INFERENCE_CHUNK = TypeAdapter(InferenceChunk)

PLACEHOLDER_TIMESTAMPS = {
    "<CREATED>": 1_700_000_000,
    "<CREATED_AT>": 1_700_000_000,
    "<COMPLETED_AT>": 1_700_000_001,
}

# Parse-stage rejections the models deliberately do not reproduce: `redacted_thinking` blocks are
# part of the Anthropic SDK's request types, which the models follow (the reference rejects them).
MIN_PARSE_REJECTED_SHARE = 0.98


class RequestCase(NamedTuple):
    """One request vector: its protocol, body text, expected stage and official error bodies.

    `stage` is `ok`, `parse` or `convert`; `error_bodies` holds the conversion error body and those
    of `resolve_max_tokens` results.
    """

    id: str
    protocol: str
    body: str
    stage: str
    error_bodies: list[Any]


def _vector_lines(relative: str) -> Iterator[dict[str, Any]]:
    """Yield the records of one vector file; nothing when the folder is missing."""
    path = VECTORS / relative
    if not path.is_file():
        return
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            yield json.loads(line)


def _request_cases() -> list[RequestCase]:
    """All request vectors of every request file, with the body as the oracle was given it."""
    cases: list[RequestCase] = []
    for relative in REQUEST_FILES:
        for record in _vector_lines(relative):
            raw = record.get("request_raw")
            body = raw if record.get("request") is None else json.dumps(record["request"])
            expect = record["expect"]
            error = expect.get("error")
            stage = error["stage"] if error else "ok"
            error_bodies = [error["body"]] if stage == "convert" else []
            for _, _, result in expect.get("resolve_max_tokens", []):
                if isinstance(result, dict):
                    error_bodies.append(result["error"]["body"])
            cases.append(RequestCase(record["id"], record["protocol"], body, stage, error_bodies))
    return cases


REQUEST_CASES = _request_cases()
STREAM_CASES = list(_vector_lines(STREAM_FILE))


def with_integer_timestamps(value: Any) -> Any:
    """Replace the vectors' timestamp placeholder strings by fixed integers, recursively."""
    if isinstance(value, str):
        return PLACEHOLDER_TIMESTAMPS.get(value, value)
    if isinstance(value, list):
        return [with_integer_timestamps(item) for item in value]
    if isinstance(value, dict):
        return {key: with_integer_timestamps(item) for key, item in value.items()}
    return value


def json_equal(left: Any, right: Any) -> bool:
    """JSON value equality: numbers compare by value, but booleans are never numbers."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(json_equal, left, right))
    return type(left) is type(right) and left == right


def compact(value: Any) -> str:
    """The vectors' byte form of a JSON value (equal to the oracle's `to_json()`)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def assert_round_trip(model: WireModel, expected: Any, *, byte_exact: bool) -> None:
    """`model.to_json()` must give back the expected JSON value (and its bytes when asked)."""
    text = model.to_json()
    assert json_equal(json.loads(text), expected), f"{type(model).__name__}: {text}"
    if byte_exact:
        assert text == compact(expected)


def test_vector_folder_is_present() -> None:
    """The vectors must be there (or explicitly optional), so the suites below cannot pass empty."""
    if not VECTORS.is_dir():
        if VECTORS_OPTIONAL:
            pytest.skip(f"RECIPE_VECTORS_OPTIONAL=1 and no vectors at {VECTORS}")
        pytest.fail(f"golden vectors not found at {VECTORS} (set RECIPE_VECTORS)")
    assert REQUEST_CASES, "no request vectors found"
    assert STREAM_CASES, "no stream vectors found"


@pytest.mark.parametrize(
    "case", [c for c in REQUEST_CASES if c.stage != "parse"], ids=lambda case: case.id
)
def test_request_round_trip(case: RequestCase) -> None:
    """A request the reference parses validates and dumps back to the same JSON value.

    Convert-stage rejections are included: their shape is valid, only conversion rules reject them.
    """
    model = REQUEST_MODELS[case.protocol].model_validate_json(case.body)
    assert_round_trip(model, json.loads(case.body), byte_exact=False)


@pytest.mark.parametrize(
    "case", [c for c in REQUEST_CASES if c.error_bodies], ids=lambda case: case.id
)
def test_error_bodies_round_trip(case: RequestCase) -> None:
    """Official error bodies (conversion and max-token resolution) validate and round-trip."""
    for body in case.error_bodies:
        assert_round_trip(ErrorBody.model_validate_json(compact(body)), body, byte_exact=True)


def test_parse_rejections_mostly_match() -> None:
    """Bodies the reference rejects at parse time are (nearly all) rejected by the models too."""
    parse_cases = [c for c in REQUEST_CASES if c.stage == "parse"]
    accepted = []
    for case in parse_cases:
        try:
            REQUEST_MODELS[case.protocol].model_validate_json(case.body)
        except ValidationError:
            continue
        accepted.append(case.id)
    rejected = len(parse_cases) - len(accepted)
    print(f"parse-stage vectors rejected by the models: {rejected}/{len(parse_cases)}; {accepted=}")
    assert parse_cases
    assert rejected / len(parse_cases) >= MIN_PARSE_REJECTED_SHARE, accepted


@pytest.mark.parametrize("record", STREAM_CASES, ids=lambda record: record["id"])
def test_stream_round_trip(record: dict[str, Any]) -> None:
    """Request, every chunk/event, the accumulated response and every input round-trip exactly."""
    protocol = record["protocol"]
    request = REQUEST_MODELS[protocol].model_validate(record["request"])
    assert_round_trip(request, record["request"], byte_exact=False)

    for chunk in record["expect"]["chunks"]:
        data = with_integer_timestamps(chunk["data"])
        if protocol == "chat_completions":
            assert chunk["sse_event"] is None
            event: WireModel = ChatCompletionChunk.model_validate_json(compact(data))
        else:
            event = EVENT_ADAPTERS[protocol].validate_json(compact(data))
            assert event.type == chunk["sse_event"]
        assert_round_trip(event, data, byte_exact=True)

    response = with_integer_timestamps(record["expect"]["response"])
    accumulated = RESPONSE_MODELS[protocol].model_validate_json(compact(response))
    assert_round_trip(accumulated, response, byte_exact=True)

    for item in record["inputs"]:
        assert_round_trip(INFERENCE_CHUNK.validate_json(compact(item)), item, byte_exact=True)
