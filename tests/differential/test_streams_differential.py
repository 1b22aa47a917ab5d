"""Stream cases from the generators, through the published reference (when its environment is
there) and this library: hypothesis examples must agree, and the seeded generator must be
reproducible."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.differential.streams_check import Peer, check, peer_python
from tests.differential.streams_gen import generate, splits, stream_cases

needs_peer = pytest.mark.skipif(
    not peer_python().exists(),
    reason="the published reference's environment (bench/.peer-venv, `make bench-peer`) is absent",
)

DSML_OUTPUT = (
    "plan\n\n</think>\n\nLet me check.\n\n<｜DSML｜tool_calls>\n"
    '<｜DSML｜invoke name="search">\n'
    '<｜DSML｜parameter name="q" string="true">a "b"\n</｜DSML｜parameter>\n'
    '<｜DSML｜parameter name="n" string="false">3</｜DSML｜parameter>\n'
    "</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
)


@pytest.fixture(scope="module")
def peer() -> Iterator[Peer]:
    process = Peer()
    yield process
    process.close()


@needs_peer
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=stream_cases())
def test_generated_cases_agree(peer: Peer, case: dict) -> None:
    record = peer.run_one(case)
    assert "peer_error" not in record["expect"], record["expect"]
    assert check(record) == []


@needs_peer
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=splits(DSML_OUTPUT), protocol=st.sampled_from(["chat_completions", "messages"]))
def test_any_split_of_a_tool_call_agrees(peer: Peer, pieces: list[str], protocol: str) -> None:
    response_id = "msg_split" if protocol == "messages" else "chatcmpl-split"
    case = {
        "id": "split",
        "protocol": protocol,
        "category": "split_tag",
        "request": build_tool_request(protocol),
        "generator": {"id": response_id, "model": "DeepSeek-V4-Pro"},
        "tokenizer": True,
        "parsing_overrides": {},
        "response_init": {
            "id": response_id,
            "model": "DeepSeek-V4-Pro",
            "created": 1_700_000_000,
            "prompt_tokens": 5,
            "prompt_cache_hit_tokens": 0,
        },
        "inputs": [{"kind": "text", "content": piece, "token_count": 1} for piece in pieces]
        + [{"kind": "finish", "finish_reason": "stop"}],
    }
    assert check(peer.run_one(case)) == []


def build_tool_request(protocol: str) -> dict:
    tool = {"type": "object", "properties": {"q": {"type": "string"}}}
    if protocol == "messages":
        return {
            "model": "DeepSeek-V4-Pro",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "Hi"}],
            "tools": [{"name": "search", "input_schema": tool}],
        }
    return {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": [{"type": "function", "function": {"name": "search", "parameters": tool}}],
    }


def test_generation_is_reproducible() -> None:
    first = [json.dumps(case) for case in generate(3, 30)]
    assert first == [json.dumps(case) for case in generate(3, 30)]
    assert first[:10] == [json.dumps(case) for case in generate(3, 10)]
    assert first != [json.dumps(case) for case in generate(4, 30)]
