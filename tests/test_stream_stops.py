"""Stop sequences of any length, as the published reference matches them (issue #15 item 6).

The reference (0.2.0) holds text that may still start a stop sequence however long the stop is,
piece by piece, and matches it once complete; these tests drive the Python API, and the
regression records in `tests/differential/regressions/streams` (recorded from the reference by
`record_stop_regressions.py` there) replay byte for byte in
`tests/differential/test_stream_regressions.py`.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from deepseek_recipe import convert
from deepseek_recipe.models.chat_completions import ChatCompletion
from deepseek_recipe.stream import StreamProcessor


def _processor(stops: list[str]) -> StreamProcessor:
    request = {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "hi"}],
        "thinking": {"type": "disabled"},
        "stop": stops,
        "stream": True,
    }
    return StreamProcessor(convert(request), created=1)


def _contents(processor: StreamProcessor, pieces: list[str]) -> list[tuple[int, str]]:
    """`(piece index, content)` of every content delta the pieces produced."""
    out: list[tuple[int, str]] = []
    for index, piece in enumerate(pieces):
        for chunk in processor.push({"kind": "text", "content": piece, "token_count": 1}):
            data: dict[str, Any] = chunk.model_dump()
            content = data["choices"][0]["delta"].get("content") if data["choices"] else None
            if content:
                out.append((index, content))
        if processor.finished:
            break
    return out


def _letters(count: int, seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice("abcdefgh") for _ in range(count))


@pytest.mark.parametrize(("length", "size"), [(5000, 1), (40_000, 100)])
def test_a_long_stop_matches_whatever_the_piece_size(length: int, size: int) -> None:
    stop = "Q" + _letters(length - 1, length)
    text = "Hello " + stop + " never sent"
    pieces = [text[at : at + size] for at in range(0, len(text), size)]
    processor = _processor(["zz", stop])
    contents = _contents(processor, pieces)
    assert processor.finished
    assert "".join(content for _, content in contents) == "Hello "
    response = processor.response()
    assert isinstance(response, ChatCompletion)
    assert response.choices[0].finish_reason == "stop"


def test_a_held_stop_start_is_released_piece_by_piece_at_the_mismatch() -> None:
    stop = "Q" + _letters(2999, 7)
    pieces = ["x", *stop[:2500], "!", "y"]
    processor = _processor([stop])
    contents = _contents(processor, pieces)
    assert not processor.finished
    released = [index for index, _ in contents if index == len(pieces) - 2]
    assert len(released) == 2501, "each held piece is its own delta, then the mismatching one"
    assert "".join(content for _, content in contents) == "x" + stop[:2500] + "!y"


def test_stops_are_off_around_a_json_document() -> None:
    request = {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "Answer in json."}],
        "thinking": {"type": "disabled"},
        "response_format": {"type": "json_object"},
        "stop": ["ab"],
    }
    processor = StreamProcessor(convert(request))
    processor.push_text("ab ```json\n", 1)
    assert not processor.finished, "no stop before the document"
    processor.push_text('{"k": "ab"}', 1)
    assert processor.finished, "a stop inside the document"
