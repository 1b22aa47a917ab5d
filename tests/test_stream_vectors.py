"""The stream golden vectors through the Python API: chunks, SSE events, errors, responses."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from deepseek_recipe import RecipeError, convert
from deepseek_recipe.stream import StreamProcessor
from tests.vectors import load_jsonl

TOOL_CALL_ID = re.compile(r"^call_(\d{2,})_(ET_)?[A-Za-z0-9]{20}[0-9]{4}$")


class Normalizer:
    """Replaces random ids and timestamps exactly as the vector recorder did."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def walk(self, value: Any, responses: bool) -> Any:
        if isinstance(value, str):
            match = TOOL_CALL_ID.match(value)
            if match is None:
                return value
            if value not in self.ids:
                self.ids[value] = f"call_{match[1]}_{match[2] or ''}<R{len(self.ids)}>"
            return self.ids[value]
        if isinstance(value, list):
            return [self.walk(item, responses) for item in value]
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                if responses and key == "created_at" and isinstance(item, int):
                    out[key] = "<CREATED_AT>"
                elif responses and key == "completed_at" and isinstance(item, int):
                    out[key] = "<COMPLETED_AT>"
                else:
                    out[key] = self.walk(item, responses)
            return out
        return value

    def chunk(self, protocol: str, data: str) -> Any:
        value = json.loads(data)
        assert json.dumps(value, ensure_ascii=False, separators=(",", ":")) == data
        if protocol == "chat_completions" and "created" in value:
            value["created"] = "<CREATED>"
        return self.walk(value, protocol == "responses")


def _processor(case: dict[str, Any]) -> StreamProcessor:
    converted = convert(case["request"], protocol=case["protocol"])
    generator = case["generator"]
    init = case["response_init"]
    return StreamProcessor(
        converted,
        response_id=generator["id"],
        model=generator["model"],
        tokenizer=None if case["tokenizer"] else False,
        created=init["created"],
        signature=generator.get("signature"),
        parsing_options=case["parsing_options"],
        prompt_usage=(init["prompt_tokens"], init["prompt_cache_hit_tokens"]),
        thinking_mode=generator.get("direct_thinking_mode"),
    )


def run_case(case: dict[str, Any]) -> None:
    protocol = case["protocol"]
    processor = _processor(case)
    normalizer = Normalizer()
    expect = case["expect"]
    chunks: list[dict[str, Any]] = []
    error: dict[str, Any] | None = None
    for at, chunk in enumerate(case["inputs"]):
        try:
            records = processor.push_records(chunk)
        except RecipeError as err:
            error = {"message": str(err), "at": at}
            break
        chunks += [
            {"at": at, "sse_event": event, "data": normalizer.chunk(protocol, data)}
            for event, data in records
        ]
    if error is None:
        try:
            records = processor.finish_records()
        except RecipeError as err:
            error = {"message": str(err), "at": "finish"}
        else:
            chunks += [
                {"at": "finish", "sse_event": event, "data": normalizer.chunk(protocol, data)}
                for event, data in records
            ]
    assert chunks == expect["chunks"]
    want_error = expect["error"]
    if want_error is None:
        assert error is None
    else:
        assert error == {"message": want_error["message"], "at": want_error["at"]}
    assert processor.finished == expect["finished"]
    assert processor.done_data == expect["done_data"]
    response = normalizer.walk(json.loads(processor.response_json()), protocol == "responses")
    assert response == expect["response"]


def test_stream_vectors() -> None:
    cases = load_jsonl("streams/streams.jsonl")
    failures: list[str] = []
    for case in cases:
        try:
            run_case(case)
        except AssertionError as err:
            failures.append(f"{case['id']}: {str(err)[:300]}")
    print(f"streams: {len(cases) - len(failures)} passed, {len(failures)} failed")
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("protocol", ["chat_completions", "responses", "messages"])
def test_typed_chunks_and_response(protocol: str) -> None:
    case = next(
        c
        for c in load_jsonl("streams/streams.jsonl")
        if c["protocol"] == protocol and not c["expect"]["error"]
    )
    processor = _processor(case)
    typed = [chunk for raw in case["inputs"] for chunk in processor.push(raw)]
    if not processor.finished:
        typed += processor.finish()
    assert len(typed) == len(case["expect"]["chunks"])
    assert type(processor.response()).__name__ in {"ChatCompletion", "Response", "Message"}
