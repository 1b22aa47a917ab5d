"""The stream golden vectors through the Python API: chunks, SSE events, errors, responses."""

from __future__ import annotations

import copy

import pytest

from deepseek_recipe.vectors import check_stream, stream_processor
from tests.vectors import load_jsonl


def test_stream_vectors() -> None:
    cases = load_jsonl("streams/streams.jsonl")
    failures: list[str] = []
    for case in cases:
        mismatches = check_stream(case)
        if mismatches:
            failures.append(f"{case['id']}: {'; '.join(mismatches)[:300]}")
    print(f"streams: {len(cases) - len(failures)} passed, {len(failures)} failed")
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("protocol", ["chat_completions", "responses", "messages"])
def test_typed_chunks_and_response(protocol: str) -> None:
    case = next(
        c
        for c in load_jsonl("streams/streams.jsonl")
        if c["protocol"] == protocol and not c["expect"]["error"]
    )
    processor = stream_processor(case)
    typed = [chunk for raw in case["inputs"] for chunk in processor.push(raw)]
    if not processor.finished:
        typed += processor.finish()
    assert len(typed) == len(case["expect"]["chunks"])
    assert type(processor.response()).__name__ in {"ChatCompletion", "Response", "Message"}


def test_stream_check_compares_compact_json_bytes() -> None:
    """Key order and number spelling count, although the values compare equal in Python."""
    case = next(c for c in load_jsonl("streams/streams.jsonl") if not c["expect"]["error"])
    assert check_stream(case) == []
    reordered = copy.deepcopy(case)
    data = reordered["expect"]["chunks"][0]["data"]
    reordered["expect"]["chunks"][0]["data"] = dict(reversed(list(data.items())))
    assert reordered["expect"]["chunks"][0]["data"] == case["expect"]["chunks"][0]["data"]
    assert [m for m in check_stream(reordered) if "keys in the order" in m]
    respelled = copy.deepcopy(case)
    usage_holder = respelled["expect"]["response"]
    key = next(k for k, v in usage_holder.items() if isinstance(v, int) and not isinstance(v, bool))
    usage_holder[key] = float(usage_holder[key])
    assert respelled["expect"]["response"] == case["expect"]["response"]
    assert check_stream(respelled) == [
        f"response.{key}: got {case['expect']['response'][key]} want {usage_holder[key]}"
    ]
