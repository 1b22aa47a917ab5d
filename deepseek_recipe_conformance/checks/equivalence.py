"""Stream vs non-stream equivalence of the same request."""

from __future__ import annotations

import json
from typing import Any

from deepseek_recipe_conformance.checks.base import CheckContext, Violation, check, short
from deepseek_recipe_conformance.model import Severity
from deepseek_recipe_conformance.views import Output


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _structure(out: Output) -> dict[str, Any]:
    return {
        "prompt tokens": out.usage.prompt if out.usage else None,
        "finish reason": out.finish,
        "tool names": [c.name for c in out.tool_calls],
        "has reasoning": bool(out.reasoning),
        "has content": bool(out.content),
    }


def _text(out: Output) -> dict[str, Any]:
    return {
        "reasoning": out.reasoning or "",
        "content": out.content or "",
        "arguments": [_arguments(c.arguments) for c in out.tool_calls],
        "completion tokens": out.usage.completion if out.usage else None,
    }


@check(
    "equivalence.stream_vs_body",
    Severity.MAJOR,
    "issue:sgl-project/sglang#35563",
    scope="case",
)
def stream_vs_body(
    ctx: CheckContext, a: int = 0, b: int = 1, text: bool = False
) -> list[Violation]:
    """The streamed and non-streamed answers to one request agree (structure; texts when `text`)."""
    first, second = ctx.step(a), ctx.step(b)
    first.require_success()
    second.require_success()
    left, right = _structure(first.output), _structure(second.output)
    if text:
        left, right = _text(first.output), _text(second.output)
    return [
        Violation(f"same {key} in both modes", f"{short(left[key], 90)} vs {short(right[key], 90)}")
        for key in left
        if left[key] != right[key]
    ]
