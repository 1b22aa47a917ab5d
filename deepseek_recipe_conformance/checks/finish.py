"""Finish reasons judged against what the host returned, whatever the model chose to say.

The rules hold for any model: a finish reason is one the API defines; the token limit ends an
answer with `length` exactly when it is reached; tool calls end it with `tool_calls` /
`tool_use` (unless the limit or a filter came first) and `tool_calls` needs calls; a Messages
`stop_sequence` names a stop string of the request.
"""

from __future__ import annotations

from deepseek_recipe_conformance.checks.base import (
    NotApplicable,
    NotExercised,
    StepView,
    Violation,
    check,
    short,
)
from deepseek_recipe_conformance.model import Severity

FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter", "insufficient_system_resource")
"""Official finish reasons (Chat names; other protocols are mapped onto them)."""
LIMIT_KEYS = ("max_tokens", "max_output_tokens")
"""Request keys of the completion budget (Chat and Messages; Responses)."""
UNCOUNTED_TAIL = 3
"""Completion tokens a length finish may leave uncounted: the recipe drops the ids of a
character still incomplete when the stream ends (at most 3 bytes of a 4-byte UTF-8 one)."""


def request_stops(step: StepView) -> list[str]:
    """The non-empty stop strings of the request (Chat `stop`, Messages `stop_sequences`)."""
    body = step.request
    raw = body.get("stop", body.get("stop_sequences", []))
    stops = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    return [s for s in stops if isinstance(s, str) and s]


def completion_limit(step: StepView) -> int | None:
    """Most completion tokens the answer may have: the request's budget, lowered to the host's
    cap when one is configured (None when neither is known)."""
    converted = step.converted
    if converted is not None:
        requested = converted.inference_options.get("max_tokens")
    else:
        requested = next(
            (step.request[k] for k in LIMIT_KEYS if isinstance(step.request.get(k), int)), None
        )
    limits = [v for v in (requested, step.target.completion_cap) if isinstance(v, int)]
    return min(limits) if limits else None


@check("finish.valid", Severity.MAJOR, "spec:streaming.md#5-finish-reason-mapping")
def valid(step: StepView) -> list[Violation]:
    """The finish reason is an official one; Messages `stop_sequence` is set exactly for
    `stop_reason: stop_sequence` and names one of the request's stop strings."""
    step.require_success()
    out = step.output
    violations = []
    if out.finish not in FINISH_REASONS:
        violations.append(Violation(f"a finish reason among {FINISH_REASONS}", short(out.finish)))
    if step.protocol != "messages":
        return violations
    matched = out.stop_sequence
    if (out.stop_reason == "stop_sequence") != (matched is not None):
        violations.append(
            Violation(
                "stop_sequence set exactly when stop_reason is stop_sequence",
                f"stop_reason {short(out.stop_reason)}, stop_sequence {short(matched)}",
            )
        )
    if matched is not None and matched not in request_stops(step):
        violations.append(
            Violation("stop_sequence one of the request's stop_sequences", short(matched))
        )
    return violations


@check(
    "finish.length", Severity.MAJOR, "docs:https://api-docs.deepseek.com/api/create-chat-completion"
)
def length(step: StepView) -> list[Violation]:
    """An answer that used up its token limit ends with `length` (`incomplete`, `max_tokens`),
    and only such an answer does (less the ids of a character cut off at the limit)."""
    step.require_success()
    out = step.output
    used = out.usage.completion if out.usage else None
    if used is None:
        raise NotApplicable("no completion token count (see usage.present)")
    limit = completion_limit(step)
    if limit is None:
        if out.finish == "length":
            raise NotApplicable("a length finish without a known limit")
        raise NotExercised("no token limit in the request")
    if used >= limit and out.finish != "length":
        return [
            Violation(
                f"finish reason length: {used} completion tokens reached the limit {limit}",
                short(out.finish),
            )
        ]
    if out.finish == "length" and used < limit - UNCOUNTED_TAIL:
        return [
            Violation(
                f"finish reason length only at the limit ({limit} tokens)",
                f"length after {used} completion tokens",
            )
        ]
    if out.finish != "length":
        raise NotExercised(f"the answer ended after {used} of {limit} tokens")
    return []


@check("finish.tool_calls", Severity.MAJOR, "spec:streaming.md#5-finish-reason-mapping")
def tool_calls(step: StepView) -> list[Violation]:
    """An answer with tool calls ends with `tool_calls` / `tool_use` (a length or content
    filter finish wins), and a `tool_calls` finish has calls."""
    step.require_success()
    out = step.output
    if out.finish == "tool_calls" and not out.tool_calls:
        return [Violation("tool calls with finish reason tool_calls", "no tool call")]
    if not out.tool_calls:
        raise NotExercised("the model made no tool call")
    if out.finish not in ("tool_calls", "length", "content_filter"):
        names = [c.name for c in out.tool_calls]
        return [
            Violation(
                "finish reason tool_calls (tool_use, completed) after tool calls",
                f"{short(out.finish)} after calls to {short(names)}",
            )
        ]
    return []
