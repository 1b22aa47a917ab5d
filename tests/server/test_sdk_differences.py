"""The deliberate differences listed in `sdk_strict` are the official API's, and all of them.

The golden stream vectors hold what the reference sends (every chunk and event, and the complete
response each stream accumulates to) and the request vectors its error bodies. All of them
validate strictly against the SDK types with the listed differences, and every listed difference
is needed by at least one of them, so the list can neither miss an official field nor excuse a
field only our server sends.
"""

from __future__ import annotations

from typing import Any

import openai.types as openai_types
import pytest
from pydantic import ValidationError

from tests.server.sdk_strict import (
    COMPLETE_TYPES,
    EXTRA_FIELDS,
    OMITTED_FIELDS,
    Differences,
    ExtraField,
    OmittedField,
    validate,
    validate_error,
    validate_stream,
)
from tests.vectors import load_jsonl

PLACEHOLDER_TIMES = {"<CREATED>", "<CREATED_AT>", "<COMPLETED_AT>"}
"""The vectors' placeholders for timestamps (integers on the wire), see their README."""

NOT_IN_VECTORS = {
    (openai_types.Model, "created"): "no vector records a /models answer",
}


def wire_value(value: Any) -> Any:
    """A vector value as it was on the wire: timestamp placeholders become integers."""
    if isinstance(value, str) and value in PLACEHOLDER_TIMES:
        return 1_700_000_000
    if isinstance(value, list):
        return [wire_value(item) for item in value]
    if isinstance(value, dict):
        return {key: wire_value(item) for key, item in value.items()}
    return value


def validate_stream_record(record: dict[str, Any]) -> Differences:
    """Every chunk of a stream vector, then the response it accumulates to."""
    expect = record["expect"]
    protocol = record["protocol"]
    events = [(chunk["sse_event"], wire_value(chunk["data"])) for chunk in expect["chunks"]]
    if protocol == "chat_completions":  # `[DONE]` is recorded apart, as `done_data`
        events.append((None, "[DONE]"))
    used = validate_stream(protocol, events)
    if expect["finished"]:  # an unfinished stream never becomes a complete answer
        used |= validate(COMPLETE_TYPES[protocol], wire_value(expect["response"]))
    return used


@pytest.fixture(scope="module")
def streams() -> list[dict[str, Any]]:
    return load_jsonl("streams/streams.jsonl")


def test_golden_streams_and_errors_validate_with_exactly_the_listed_differences(
    streams: list[dict[str, Any]],
) -> None:
    used: set[ExtraField | OmittedField] = set()
    failures: list[str] = []
    for record in streams:
        try:
            used |= validate_stream_record(record)
        except (AssertionError, ValidationError) as error:
            failures.append(f"{record['id']}: {error}")
    for name in ("chat_completions", "responses", "messages"):
        for record in load_jsonl(f"requests/{name}.jsonl"):
            error = record["expect"].get("error")
            if error is not None and error["stage"] == "convert":
                used |= validate_error(error["body"])
    assert failures == [], f"{len(failures)} vectors fail: {failures[:5]}"
    listed = [(f.owner, f.name) for f in (*EXTRA_FIELDS, *OMITTED_FIELDS)]
    needed = {(f.owner, f.name) for f in used}
    unused = [key for key in listed if key not in needed and key not in NOT_IN_VECTORS]
    assert unused == [], f"listed but not what the official API sends: {unused}"


@pytest.mark.parametrize("protocol", sorted(COMPLETE_TYPES))
def test_unknown_missing_or_mistyped_fields_fail(
    protocol: str, streams: list[dict[str, Any]]
) -> None:
    record = next(r for r in streams if r["protocol"] == protocol)
    response = wire_value(record["expect"]["response"])
    sdk_type = COMPLETE_TYPES[protocol]
    validate(sdk_type, response)
    with pytest.raises(AssertionError, match="not a field of"):
        validate(sdk_type, {**response, "surprise": 1})
    with pytest.raises(ValidationError, match="Field required"):
        validate(sdk_type, {k: v for k, v in response.items() if k != "model"})
    with pytest.raises(ValidationError, match="should be a valid string"):
        validate(sdk_type, {**response, "model": 1})


def test_an_omission_counts_only_where_it_is_listed(streams: list[dict[str, Any]]) -> None:
    """`created` may be missing from a `Model`, not from a chat completion."""
    record = next(r for r in streams if r["protocol"] == "chat_completions")
    response = wire_value(record["expect"]["response"])
    without_created = {k: v for k, v in response.items() if k != "created"}
    with pytest.raises(AssertionError, match=r"\.created: required field missing"):
        validate(COMPLETE_TYPES["chat_completions"], without_created)
