"""Request pipeline cost through the Python API: convert → render → encode.

Two Chat Completions workloads, built exactly as the Rust bench builds them
(`recipe-rs/deepseek-recipe/benches/support/workloads.rs`, same bytes): a short chat and a
~100K-token agent conversation with 40 tools and 60 tool-call turns. Per workload and stage it
reports min and median ms per request over `--runs` runs, requests/s at the median, and the
prompt tokens. `ConvertedRequest.encode()` renders the prompt itself, so the `encode` stage is
render + encode and the end-to-end stage is `convert(...).encode()`.
Run from the repository root: `python -m bench.request_bench [--runs 30]`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import deepseek_recipe as dr

MODEL = "DeepSeek-V4-Pro"
TOOL_COUNT = 40
TURN_COUNT = 60
RESULT_ROWS = 44
VERBS = ["search", "fetch", "update", "delete", "summarize"]
NOUNS = ["issues", "files", "users", "orders", "events", "metrics", "tickets", "docs"]
MODES = ["fast", "exact", "fuzzy"]


def compact(value: Any) -> str:
    """JSON as serde_json writes it: compact, keys sorted (the recipe writes them sorted)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def body(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
    request: dict[str, Any] = {
        "messages": messages,
        "model": MODEL,
        "thinking": {"type": "enabled"},
    }
    if tools is not None:
        request["tools"] = tools
    return compact(request)


def short_chat() -> str:
    """System prompt + one user turn."""
    return body(
        [
            {"content": "You are a helpful assistant.", "role": "system"},
            {"content": "What is the capital of France? Answer in one sentence.", "role": "user"},
        ]
    )


def tool_name(index: int) -> str:
    return f"{VERBS[index % 5]}_{NOUNS[index // 5]}"


def tool(index: int) -> dict[str, Any]:
    """A function tool with nested objects, arrays and enums."""
    verb, noun = VERBS[index % 5], NOUNS[index // 5]
    return {
        "function": {
            "description": f"{verb} {noun} records of the project (tool {index}).",
            "name": tool_name(index),
            "parameters": {
                "properties": {
                    "filters": {
                        "properties": {
                            "since": {"description": "ISO date", "type": "string"},
                            "tags": {"items": {"type": "string"}, "type": "array"},
                        },
                        "required": ["tags"],
                        "type": "object",
                    },
                    "limit": {"maximum": 100 + index, "minimum": 1, "type": "integer"},
                    "mode": {"enum": MODES, "type": "string"},
                    "query": {"description": f"What to {verb} in {noun}.", "type": "string"},
                    "targets": {
                        "items": {
                            "properties": {"id": {"type": "integer"}, "label": {"type": "string"}},
                            "required": ["id"],
                            "type": "object",
                        },
                        "type": "array",
                    },
                },
                "required": ["query", "mode"],
                "type": "object",
            },
        },
        "type": "function",
    }


def tool_result(turn: int) -> str:
    """Rows of JSON-ish text, code, CJK prose or emoji-laden text, by turn."""
    return "".join(result_row(turn, row) for row in range(RESULT_ROWS))


def result_row(turn: int, row: int) -> str:
    kind = turn % 4
    if kind == 0:
        return (
            f'{{"id": {row}, "name": "item-{turn}-{row}", "score": 0.{row}5, '
            f'"tags": ["alpha", "beta"], "ok": true}}\n'
        )
    if kind == 1:
        return (
            f"fn check_{turn}_{row}(items: &[u32]) -> u32 {{\n"
            f"    items.iter().filter(|x| **x > {row}).sum()\n}}\n"
        )
    if kind == 2:
        return f"第{turn}步第{row}项：检查配置文件，发现三个警告。東京のサーバーは正常です。\n"  # noqa: RUF001
    return f"✅ step {turn}.{row} passed 🎉, ⚠️ 2 warnings, ❌ 0 errors — naïve café 👍🏽\n"


def agent_conversation() -> str:
    """40 tools, 60 tool-call turns with reasoning, tool results and user follow-ups."""
    messages: list[dict[str, Any]] = [
        {
            "content": "You are a coding agent. Use the tools to inspect and change the project.",
            "role": "system",
        },
        {"content": "Audit the project and fix what is broken.", "role": "user"},
    ]
    for turn in range(TURN_COUNT):
        name = tool_name(turn * 7 % TOOL_COUNT)
        mode = MODES[turn % 3]
        arguments = {
            "filters": {"tags": ["bench", f"turn-{turn}"]},
            "limit": turn + 1,
            "mode": mode,
            "query": f"step {turn}: what does {name} report?",
        }
        messages.append(
            {
                "content": "",
                "reasoning_content": (
                    f"Turn {turn}. The last result narrows it down; next I call {name} with mode "
                    f"{mode} to check the remaining candidates before touching any file."
                ),
                "role": "assistant",
                "tool_calls": [
                    {
                        "function": {"arguments": compact(arguments), "name": name},
                        "id": f"call_{turn}",
                        "type": "function",
                    }
                ],
            }
        )
        messages.append(
            {"content": tool_result(turn), "role": "tool", "tool_call_id": f"call_{turn}"}
        )
        if turn % 5 == 4:
            messages.append(
                {
                    "content": f"Good. After step {turn}, keep going but explain what changed.",
                    "role": "user",
                }
            )
    return body(messages, [tool(index) for index in range(TOOL_COUNT)])


def timings(step: Callable[[], object], runs: int) -> list[float]:
    """Seconds per call of `step`, `runs` times after one warm-up call."""
    step()
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - start)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30, help="timed runs per stage")
    args = parser.parse_args()
    for name, request in [("short_chat", short_chat()), ("agent_100k", agent_conversation())]:
        converted = dr.convert(request, protocol="chat_completions")
        tokens = len(converted.encode())
        digest = hashlib.sha256(request.encode()).hexdigest()[:12]
        print(f"{name}: body {len(request.encode())} bytes (sha256 {digest}), {tokens} tokens")
        stages: dict[str, Callable[[], object]] = {
            "convert": lambda request=request: dr.convert(request, protocol="chat_completions"),
            "render": converted.render,
            "encode": converted.encode,
            "convert_render_encode": lambda request=request: dr.convert(
                request, protocol="chat_completions"
            ).encode(),
        }
        for stage, step in stages.items():
            seconds = timings(step, args.runs)
            best, median = min(seconds), statistics.median(seconds)
            print(
                f"  {stage:22} min {best * 1e3:9.3f} ms  median {median * 1e3:9.3f} ms  "
                f"{1 / median:9.1f} req/s"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
