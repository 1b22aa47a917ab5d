"""Checks on the visible output: reasoning, content, finish reason, markup, JSON mode, stops."""

from __future__ import annotations

import json

from deepseek_recipe_conformance.checks.base import StepView, Violation, check, short
from deepseek_recipe_conformance.model import Severity

MARKUP = ("｜DSML｜", "</think>", "<｜end▁of▁sentence｜>", "<｜Assistant｜>", "<｜User｜>")
"""Model markup that must never reach a client (the parser consumes it)."""


@check(
    "output.reasoning", Severity.MAJOR, "docs:https://api-docs.deepseek.com/guides/thinking_mode"
)
def reasoning(step: StepView, present: bool = True) -> list[Violation]:
    """Thinking mode returns non-empty reasoning; non-thinking mode returns none."""
    step.require_success()
    got = step.output.reasoning
    if present and not got:
        return [Violation("non-empty reasoning content (thinking mode)", short(got))]
    if not present and got:
        return [Violation("no reasoning content (thinking disabled)", short(got, 80))]
    return []


@check("output.content", Severity.MAJOR, "issue:vllm-project/vllm#52393")
def content(step: StepView, nonempty: bool = False) -> list[Violation]:
    """Content is a string (never null at the end of a turn), non-empty when asked."""
    step.require_success()
    got = step.output.content
    if got is None and not step.output.tool_calls:
        return [Violation("content present", "content is null")]
    if nonempty and not got:
        return [Violation("non-empty content", short(got))]
    return []


@check("output.finish", Severity.MAJOR, "spec:streaming.md#5-finish-reason-mapping")
def finish(step: StepView, equals: str | list[str] = "stop") -> list[Violation]:
    """The finish reason (mapped onto Chat names) is the expected one."""
    step.require_success()
    wanted = [equals] if isinstance(equals, str) else list(equals)
    got = step.output.finish
    if got not in wanted:
        return [Violation(f"finish reason {' or '.join(wanted)}", short(got))]
    return []


@check("output.no_markup_leak", Severity.CRITICAL, "issue:vllm-project/vllm#40800")
def no_markup_leak(step: StepView) -> list[Violation]:
    """No DSML, think or role markup in reasoning, content or tool arguments."""
    step.require_success()
    violations = []
    for where, text in step.output.texts:
        for marker in MARKUP:
            if marker in text:
                at = text.index(marker)
                violations.append(
                    Violation(f"no {marker!r} in {where}", short(text[max(0, at - 40) : at + 60]))
                )
                break
    return violations


@check("output.json_content", Severity.MAJOR, "docs:https://api-docs.deepseek.com/guides/json_mode")
def json_content(step: StepView) -> list[Violation]:
    """JSON output mode: the content parses as a JSON object or array."""
    step.require_success()
    text = (step.output.content or "").strip()
    try:
        value = json.loads(text)
    except ValueError as exc:
        return [Violation("content that parses as JSON", f"{exc}: {short(text, 120)}")]
    if not isinstance(value, (dict, list)):
        return [Violation("a JSON object or array", short(value))]
    return []


def _stops(step: StepView) -> list[str]:
    body = step.request
    raw = body.get("stop", body.get("stop_sequences", []))
    return [raw] if isinstance(raw, str) else [s for s in raw if isinstance(s, str) and s]


@check("output.stop_respected", Severity.MAJOR, "issue:vllm-project/vllm#52393")
def stop_respected(step: StepView, reasoning: bool = False) -> list[Violation]:
    """Stops cut content only: no stop string in content, reasoning intact, content not null
    unless the output ran out of tokens."""
    step.require_success()
    out = step.output
    violations = []
    for stop in _stops(step):
        if stop in (out.content or ""):
            violations.append(Violation(f"content cut before {stop!r}", short(out.content, 120)))
    if reasoning and not out.reasoning:
        violations.append(
            Violation("reasoning kept (stop sequences never apply to it)", short(out.reasoning))
        )
    if out.content is None and not out.tool_calls and out.finish != "length":
        # A model may spend its whole budget reasoning (finish "length"); a stop that ends the
        # output with no content at all was applied to the reasoning.
        violations.append(Violation("content present after the reasoning", "content is null"))
    return violations


def _max_tokens(step: StepView) -> int | None:
    body = step.request
    for key in ("max_tokens", "max_output_tokens"):
        if isinstance(body.get(key), int):
            return int(body[key])
    return None


@check(
    "output.max_tokens",
    Severity.MAJOR,
    "docs:https://api-docs.deepseek.com/api/create-chat-completion",
)
def max_tokens(step: StepView) -> list[Violation]:
    """Completion tokens stay within the requested maximum."""
    step.require_success()
    limit = _max_tokens(step)
    usage = step.output.usage
    got = usage.completion if usage else None
    if limit is None:
        return []
    if got is None or got > limit:
        return [Violation(f"completion tokens <= {limit}", short(got))]
    return []
