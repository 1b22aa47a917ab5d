"""Checks on log probabilities (streaming.md §2)."""

from __future__ import annotations

from typing import Any

from deepseek_recipe_conformance.checks.base import (
    NotApplicable,
    NotExercised,
    StepView,
    Violation,
    check,
    short,
)
from deepseek_recipe_conformance.model import Severity


def _entry_errors(entry: Any, top: int | None) -> str | None:
    if not isinstance(entry, dict):
        return "entry is not an object"
    if not isinstance(entry.get("token"), str):
        return "token is not a string"
    lp = entry.get("logprob")
    if not isinstance(lp, (int, float)) or isinstance(lp, bool) or lp > 0:
        return f"logprob {lp!r} is not a number <= 0"
    if entry.get("bytes") is not None and not (
        isinstance(entry["bytes"], list)
        and all(isinstance(b, int) and 0 <= b < 256 for b in entry["bytes"])
    ):
        return "bytes is not a list of byte values"
    alternatives = entry.get("top_logprobs")
    if alternatives is None:
        return None
    if not isinstance(alternatives, list):
        return "top_logprobs is not a list"
    if top is not None and len(alternatives) > top:
        return f"{len(alternatives)} top_logprobs for top_logprobs={top}"
    for alt in alternatives:
        if (
            not isinstance(alt, dict)
            or not isinstance(alt.get("token"), str)
            or not isinstance(alt.get("logprob"), (int, float))
        ):
            return f"malformed alternative {short(alt, 80)}"
    return None


@check(
    "logprobs.shape",
    Severity.MAJOR,
    "docs:https://api-docs.deepseek.com/api/create-chat-completion",
)
def shape(step: StepView) -> list[Violation]:
    """Requested logprobs come with the content: {token, logprob <= 0, bytes, top_logprobs}
    entries with at most `top_logprobs` alternatives."""
    step.require_success()
    options = step.require_converted().inference_options
    if not options.get("logprobs"):
        raise NotApplicable("no log probabilities requested")
    if not step.output.content:
        raise NotExercised("no content came back")
    entries = step.output.logprobs
    if not entries:
        return [Violation("log probabilities for the generated content", short(entries))]
    top = options.get("top_logprobs")
    for i, entry in enumerate(entries):
        problem = _entry_errors(entry, top if isinstance(top, int) else None)
        if problem:
            return [Violation("well-formed logprob entries", f"entry {i}: {problem}")]
    return []
