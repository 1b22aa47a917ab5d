"""Stream vs non-stream equivalence of the same request."""

from __future__ import annotations

import json
from typing import Any

from deepseek_recipe_conformance.checks.base import (
    CheckContext,
    NotExercised,
    Violation,
    check,
    short,
)
from deepseek_recipe_conformance.model import Severity
from deepseek_recipe_conformance.views import Output


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _text(out: Output) -> dict[str, Any]:
    return {
        "reasoning": out.reasoning or "",
        "content": out.content or "",
        "tool calls": [(c.name, _arguments(c.arguments)) for c in out.tool_calls],
    }


def _outcome(out: Output) -> dict[str, Any]:
    return {
        "finish reason": out.finish,
        "completion tokens": out.usage.completion if out.usage else None,
        "reasoning tokens": out.usage.reasoning if out.usage else None,
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
    """Streamed and non-streamed answers to one request count the same prompt tokens; when the
    model wrote the same text in both, they also agree on the finish reason and token counts
    (`text`: the texts themselves must agree)."""
    first, second = ctx.step(a), ctx.step(b)
    first.require_success()
    second.require_success()
    left, right = first.output, second.output

    def differences(x: dict[str, Any], y: dict[str, Any]) -> list[Violation]:
        return [
            Violation(f"same {key} in both modes", f"{short(x[key], 90)} vs {short(y[key], 90)}")
            for key in x
            if x[key] != y[key]
        ]

    prompts = [o.usage.prompt if o.usage else None for o in (left, right)]
    if prompts[0] != prompts[1]:
        return [Violation("same prompt tokens in both modes", f"{prompts[0]} vs {prompts[1]}")]
    if text:
        return differences(_text(left), _text(right))
    if _text(left) != _text(right):
        raise NotExercised("the model wrote different texts in the two modes")
    return differences(_outcome(left), _outcome(right))
