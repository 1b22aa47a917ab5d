"""The stream golden vectors through the Python API: chunks, SSE events, errors, responses."""

from __future__ import annotations

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
