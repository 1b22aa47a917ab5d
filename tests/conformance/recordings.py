"""Recorded official exchanges (the stream vectors) indexed for the replay host.

A stream vector holds, for one request, the exact official chunk sequence and the
non-streaming body. The replay host answers a request with a vector whose request has the
same semantic features (thinking mode, tools, tool choice, output format, stops, logprobs)
and whose recorded output shows the behaviour the case asks the model for (its `scenario`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deepseek_recipe_conformance.checks.schema import validate
from deepseek_recipe_conformance.checks.tools import declared_tools
from deepseek_recipe_conformance.views import Output, output_from_body

PROTOCOL_NAMES = {"chat_completions": "chat", "responses": "responses", "messages": "messages"}
MARKUP = ("｜DSML｜", "</think>", "<｜")


def vectors_dir() -> Path:
    """RECIPE_VECTORS or the shared default; tests fail when it is missing."""
    path = Path(
        os.environ.get("RECIPE_VECTORS", Path(__file__).resolve().parents[3] / "shared" / "vectors")
    )
    if not path.is_dir():
        raise FileNotFoundError(f"golden vectors not found at {path} (set RECIPE_VECTORS)")
    return path


def thinking_on(protocol: str, body: dict[str, Any]) -> bool:
    """Resolved thinking mode with default options (requests.md §3.1)."""
    if protocol == "responses":
        return (body.get("reasoning") or {}).get("effort") != "none"
    kind = (body.get("thinking") or {}).get("type")
    if kind is not None:
        return kind != "disabled"
    effort = (
        body.get("reasoning_effort")
        if protocol == "chat"
        else (body.get("output_config") or {}).get("effort")
    )
    return effort != "none"


def features(protocol: str, body: dict[str, Any]) -> str:
    """The request features that shape how the model's text is parsed (not the prompt text;
    stop sequences are applied by the host to whatever output it replays)."""
    fmt = (
        body.get("response_format")
        if protocol == "chat"
        else (body.get("text") or {}).get("format")
    )
    choice = body.get("tool_choice")
    tools = sorted(declared_tools(protocol, body))
    if choice == "none" or choice == {"type": "none"}:
        tools, choice = [], None
    summary = {
        "thinking": thinking_on(protocol, body),
        "tools": tools or None,
        "tool_choice": choice,
        "format": (fmt or {}).get("type") if isinstance(fmt, dict) else None,
        "logprobs": [body.get("logprobs"), body.get("top_logprobs")],
    }
    return json.dumps(summary, sort_keys=True, ensure_ascii=False)


def _clean(out: Output) -> bool:
    return not any(m in text for _, text in out.texts for m in MARKUP)


def _calls_valid(protocol: str, body: dict[str, Any], out: Output) -> bool:
    tools = declared_tools(protocol, body)
    for call in out.tool_calls:
        try:
            value = json.loads(call.arguments)
        except ValueError:
            return False
        if (
            call.name not in tools
            or not isinstance(value, dict)
            or validate(value, tools[call.name] or {})
        ):
            return False
    return True


def _parses(text: str | None) -> bool:
    try:
        return isinstance(json.loads((text or "").strip()), (dict, list))
    except ValueError:
        return False


def _max_tokens(body: dict[str, Any]) -> int:
    return int(body.get("max_tokens") or body.get("max_output_tokens") or 1 << 30)


SCENARIOS: dict[str, Callable[[Output, dict[str, Any]], bool]] = {
    "plain": lambda o, b: o.finish == "stop" and not o.tool_calls and bool(o.content),
    "reasoning": lambda o, b: (
        o.finish == "stop" and not o.tool_calls and bool(o.reasoning) and bool(o.content)
    ),
    "no_tool_call": lambda o, b: o.finish == "stop" and not o.tool_calls and bool(o.content),
    "tool_call": lambda o, b: o.finish == "tool_calls" and len(o.tool_calls) >= 1,
    "parallel_tool_calls": lambda o, b: o.finish == "tool_calls" and len(o.tool_calls) >= 2,
    "json": lambda o, b: o.finish == "stop" and _parses(o.content),
    "length": lambda o, b: (
        not o.tool_calls and (o.usage.completion or 0) > _max_tokens(b) + 4 if o.usage else False
    ),
    "stop": lambda o, b: o.finish == "stop" and bool(o.reasoning) and o.content is not None,
    "logprobs": lambda o, b: o.finish == "stop" and bool(o.logprobs) and bool(o.content),
    "any": lambda o, b: o.finish in ("stop", "tool_calls") and o.usage is not None,
}
"""What the model is asked to do in a case, as a predicate over a recorded output."""


@dataclass(frozen=True)
class Recording:
    """One usable stream vector."""

    id: str
    protocol: str
    request: dict[str, Any]
    inputs: list[dict[str, Any]]
    output: Output


def load_recordings(folder: Path | None = None) -> list[Recording]:
    """Stream vectors that finished without error and use the converted parsing options."""
    path = (folder or vectors_dir()) / "streams" / "streams.jsonl"
    found = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            expect = record["expect"]
            generator = record["generator"]
            if expect["error"] is not None or record["parsing_overrides"] or not expect["finished"]:
                continue
            if not any(chunk["kind"] == "finish" for chunk in record["inputs"]):
                continue  # a host always ends with a finish reason (tool calls then map)
            if generator.get("direct_thinking_mode") is not None or generator.get(
                "namespace_tool_map"
            ):
                continue
            protocol = PROTOCOL_NAMES[record["protocol"]]
            output = output_from_body(protocol, expect["response"])
            if not _clean(output) or output.usage is None or not output.usage.prompt:
                continue
            found.append(
                Recording(record["id"], protocol, record["request"], record["inputs"], output)
            )
    return found


class RecordingIndex:
    """Finds the recording for (protocol, request, scenario)."""

    def __init__(self, recordings: list[Recording]) -> None:
        self.by_features: dict[tuple[str, str], list[Recording]] = {}
        for rec in recordings:
            key = (rec.protocol, features(rec.protocol, rec.request))
            self.by_features.setdefault(key, []).append(rec)

    def find(self, protocol: str, body: dict[str, Any], scenario: str) -> Recording | None:
        """The first recording with the same features whose output fits the scenario."""
        wanted = SCENARIOS.get(scenario)
        for rec in self.by_features.get((protocol, features(protocol, body)), []):
            fits = wanted is not None and wanted(rec.output, body)
            if fits and _calls_valid(protocol, body, rec.output):
                return rec
        return None
