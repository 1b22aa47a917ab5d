"""The replay oracle against the golden stream vectors: every official answer the recipe records
(streamed and accumulated) is re-derived exactly from what the client sees."""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Iterator
from typing import Any

import pytest

from deepseek_recipe import ConversionOptions, convert
from deepseek_recipe_conformance import replay
from deepseek_recipe_conformance.sse import encode_sse, parse_sse
from deepseek_recipe_conformance.views import Output, output_from_body, output_from_stream
from tests.conformance.recordings import PROTOCOL_NAMES, vectors_dir

PLACEHOLDER = re.compile(r"^call_(\d{2,})_(ET_)?<R(\d+)>$")
HOST_DEVIATION = "finish=no finish chunk (finish() only)"
"""Vectors of a host that never sends a finish chunk: tool calls then end with `stop`, which
the official API never sends (the replay flags them, see the last test)."""


def _fill(value: Any, ids: dict[str, str], rng: random.Random) -> Any:
    """Concrete ids and timestamps for the vectors' placeholders."""
    if isinstance(value, dict):
        return {k: _fill(v, ids, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ids, rng) for v in value]
    if value in ("<CREATED>", "<CREATED_AT>"):
        return 1_700_000_000
    if value == "<COMPLETED_AT>":
        return 1_700_000_001
    match = PLACEHOLDER.match(value) if isinstance(value, str) else None
    if match:
        if value not in ids:
            letters = "".join(rng.choices(string.ascii_letters + string.digits, k=20))
            ids[value] = f"call_{match[1]}_{match[2] or ''}{letters}{rng.randint(1000, 9999)}"
        return ids[value]
    return value


def host_vectors() -> Iterator[dict[str, Any]]:
    """Stream vectors recorded the way a host runs the recipe (converted parsing options, the
    tokenizer attached, the request's own generator), with placeholders filled in."""
    rng = random.Random(5)
    with (vectors_dir() / "streams" / "streams.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            generator = record["generator"]
            if (
                record["parsing_overrides"]
                or record["expect"]["error"]
                or not record["tokenizer"]
                or generator.get("direct_thinking_mode") is not None
            ):
                continue
            ids: dict[str, str] = {}
            record["expect"] = _fill(record["expect"], ids, rng)
            yield record


def _replayed(record: dict[str, Any], stream: bool) -> tuple[Any, Any] | None:
    """(expected, got), normalised, for the reading that matches (else the preferred one); None
    when the answer is not re-derivable."""
    protocol = PROTOCOL_NAMES[record["protocol"]]
    generator, expect = record["generator"], record["expect"]
    aliases = {generator["model"]: "DeepseekV4Pro"}
    known = generator["model"] in ("DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash")
    options = None if known else ConversionOptions(model_aliases=aliases)
    converted = convert(record["request"], protocol=record["protocol"], options=options)
    events = [(c["sse_event"], c["data"]) for c in expect["chunks"]]
    output: Output
    if stream:
        framed = [(name, json.dumps(data, ensure_ascii=False)) for name, data in events]
        parsed = parse_sse(encode_sse(framed))
        output = output_from_stream(protocol, parsed)
        got: Any = replay.coalesce(protocol, [(e.event, e.json()) for e in parsed.data_events()])
    else:
        output = output_from_body(protocol, expect["response"])
        got = expect["response"]
    usage = output.usage
    prompt = (usage.prompt or 0, usage.cache_hit or 0) if usage else (0, 0)
    try:
        answers = replay.expected_answers(converted, output, stream, prompt)
    except replay.NotRecipeOutput:
        raise
    except replay.NotReplayable:
        return None
    exact = converted.model_version == "DeepseekV4Pro"
    got = replay.normalize(got, exact)
    pairs = [
        (replay.normalize(replay.coalesce(protocol, a.events) if stream else a.body, exact), got)
        for a in answers
    ]
    return next((pair for pair in pairs if replay.first_difference(*pair) is None), pairs[0])


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_every_official_answer_is_re_derived_exactly(stream: bool) -> None:
    differences, replayed = [], 0
    for record in host_vectors():
        if record.get("note", "").endswith(HOST_DEVIATION):
            continue
        pair = _replayed(record, stream)
        if pair is None:
            continue
        replayed += 1
        found = replay.first_difference(*pair)
        if found:
            differences.append(f"{record['id']}: {found}")
    assert differences == []
    assert replayed >= 1300


def test_tool_calls_ending_with_stop_are_flagged() -> None:
    flagged = []
    for record in host_vectors():
        if record.get("note", "").endswith(HOST_DEVIATION):
            pair = _replayed(record, stream=False)
            assert pair is not None
            flagged.append(replay.first_difference(*pair) is not None)
    assert flagged and any(flagged)
