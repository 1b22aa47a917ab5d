"""Checks on the visible output: reasoning, content, markup, JSON output, stop sequences, limits,
thinking signatures.

Each rule is judged on what the host returned: it fails only when the answer breaks it, and
raises `NotExercised` when the model's output does not reach the situation it judges.
"""

from __future__ import annotations

import json
from typing import Any

from deepseek_recipe_conformance.checks.base import (
    CheckContext,
    NotApplicable,
    NotExercised,
    StepView,
    Violation,
    check,
    short,
)
from deepseek_recipe_conformance.checks.finish import completion_limit, request_stops
from deepseek_recipe_conformance.checks.schema import validate
from deepseek_recipe_conformance.model import Severity
from deepseek_recipe_conformance.views import Output

DSML = "｜DSML｜"
MARKUP = (DSML, "</think>", "<｜end▁of▁sentence｜>", "<｜Assistant｜>", "<｜User｜>")
"""Model markup that must never reach a client (the parser consumes it)."""
REASONING_STAGES = ("ReasoningStart", "ReasoningContinuation")
"""Parse stages in which the model's output starts as reasoning."""


def thinking(step: StepView) -> bool:
    """Whether the recipe parses this request's output as reasoning first."""
    stage = step.require_converted().parsing_options.get("thinking_initial_stage")
    return stage in REASONING_STAGES


@check(
    "output.reasoning", Severity.MAJOR, "docs:https://api-docs.deepseek.com/guides/thinking_mode"
)
def reasoning(step: StepView) -> list[Violation]:
    """With thinking off there is no reasoning (the model's text is all content)."""
    step.require_success()
    if thinking(step):
        raise NotApplicable("thinking mode: the model decides how much it reasons")
    got = step.output.reasoning
    if got:
        return [Violation("no reasoning content (thinking disabled)", short(got, 80))]
    return []


@check("output.content", Severity.MAJOR, "issue:vllm-project/vllm#52393")
def content(step: StepView) -> list[Violation]:
    """Content is a string (never null at the end of a turn) unless the answer is tool calls."""
    step.require_success()
    if step.output.content is None and not step.output.tool_calls and step.protocol == "chat":
        return [Violation("content present (a string)", "content is null")]
    return []


@check("output.no_markup_leak", Severity.CRITICAL, "issue:vllm-project/vllm#40800")
def no_markup_leak(step: StepView) -> list[Violation]:
    """No DSML, think or role markup in reasoning, content or tool arguments. DSML is plain
    content when the request disables tool calls, and always plain reasoning: the official
    parser leaves a DSML token the model writes while it reasons in the reasoning text
    (checked against the published deepseek-recipe 0.2.0)."""
    step.require_success()
    converted = step.converted
    dsml_is_text = converted is not None and not converted.parsing_options.get("parse_tool_calls")
    violations = []
    for where, text in step.output.texts:
        for marker in MARKUP:
            if marker == DSML and (where == "reasoning" or (dsml_is_text and where == "content")):
                continue
            if marker in text:
                at = text.index(marker)
                violations.append(
                    Violation(f"no {marker!r} in {where}", short(text[max(0, at - 40) : at + 60]))
                )
                break
    return violations


def _json_format(step: StepView) -> tuple[str, Any]:
    """The requested output format and schema; skips unless JSON output was asked for."""
    conversation = step.require_converted().conversation
    kind = conversation.get("response_format")
    if kind not in ("json_object", "json_schema"):
        raise NotApplicable("no JSON output requested")
    return str(kind), conversation.get("response_schema")


@check("output.json", Severity.MAJOR, "docs:https://api-docs.deepseek.com/guides/json_mode")
def json_output(step: StepView) -> list[Violation]:
    """JSON output (json_object or a schema): the content that came back parses as a JSON
    object or array and fits the schema; text before the JSON is sent as spaces."""
    step.require_success()
    kind, schema = _json_format(step)
    out = step.output
    text = (out.content or "").strip()
    if out.finish == "length":
        raise NotExercised("the token limit cut the JSON")
    if not text:
        raise NotExercised("no content came back")
    try:
        value = json.loads(text)
    except ValueError as exc:
        return [Violation("content that parses as JSON", f"{exc}: {short(text, 120)}")]
    if not isinstance(value, dict | list):
        return [Violation("a JSON object or array", short(value))]
    errors = validate(value, schema) if kind == "json_schema" else []
    if errors:
        return [Violation("content valid for the requested schema", "; ".join(errors[:3]))]
    return []


@check("output.stop_respected", Severity.MAJOR, "issue:vllm-project/vllm#52393")
def stop_respected(step: StepView) -> list[Violation]:
    """Stop sequences end the content before the match and never apply to the reasoning: no
    stop string in the content; one in the reasoning shows that it was left alone."""
    step.require_success()
    stops = request_stops(step)
    if not stops:
        raise NotApplicable("no stop sequences requested")
    out = step.output
    violations = [
        Violation(f"content cut before {stop!r}", short(out.content, 120))
        for stop in stops
        if stop in (out.content or "")
    ]
    in_reasoning = [stop for stop in stops if stop in (out.reasoning or "")]
    if not violations and not in_reasoning and out.stop_sequence is None:
        raise NotExercised("no stop string in the reasoning and no stop reported")
    return violations


def _first_stop(text: str, stops: list[str]) -> tuple[int, str] | None:
    found = [(text.find(s), s) for s in stops if s in text]
    return min(found, key=lambda f: (f[0], -len(f[1]))) if found else None


def _stop_cut(free: Output, stopped: Output, stops: list[str]) -> list[Violation]:
    """Compare the same deterministic answer without (`free`) and with (`stopped`) stops."""
    reasoning = free.reasoning or ""
    if (stopped.reasoning or "") != reasoning:
        cut = _first_stop(reasoning, stops)
        if cut is not None and (stopped.reasoning or "") == reasoning[: cut[0]]:
            return [
                Violation(
                    "reasoning left whole (stop sequences never apply to it)",
                    f"reasoning cut before {cut[1]!r}: {short(stopped.reasoning, 80)}",
                )
            ]
        raise NotExercised("the two answers differ (the model is not deterministic)")
    cut = _first_stop(free.content or "", stops)
    if cut is None:
        raise NotExercised("no stop string in the content of the answer without stops")
    at, stop = cut
    before = (free.content or "")[:at]
    got = stopped.content or ""
    if got != before:
        if got.startswith(before + stop):  # the stop string was kept, or not applied at all
            return [
                Violation(f"content ending before {stop!r}: {short(before, 60)}", short(got, 80))
            ]
        raise NotExercised("the two answers differ (the model is not deterministic)")
    if stopped.finish != "stop" or stopped.tool_calls:
        return [
            Violation(f"finish reason stop at the stop sequence {stop!r}", short(stopped.finish))
        ]
    if stopped.stop_reason is not None and stopped.stop_sequence is None:
        return [Violation(f"stop_reason stop_sequence with stop_sequence {stop!r}", "none")]
    return []


@check("output.stop_applied", Severity.MAJOR, "spec:streaming.md#37-stop-sequences", scope="case")
def stop_applied(ctx: CheckContext, free: int = 0, stopped: int = 1) -> list[Violation]:
    """The same request without and with stop sequences (a deterministic model): the stopped
    answer is the free one cut right before the first stop string in its content, ends with
    `stop` (`stop_sequence` naming it), and keeps the whole reasoning."""
    a, b = ctx.step(free), ctx.step(stopped)
    a.require_success()
    b.require_success()
    stops = request_stops(b)
    if not stops or request_stops(a):
        raise NotApplicable("needs a step without and a step with stop sequences")
    return _stop_cut(a.output, b.output, stops)


@check(
    "output.max_tokens",
    Severity.MAJOR,
    "docs:https://api-docs.deepseek.com/api/create-chat-completion",
)
def max_tokens(step: StepView) -> list[Violation]:
    """Completion tokens stay within the requested maximum (and the host's cap)."""
    step.require_success()
    limit = completion_limit(step)
    if limit is None:
        raise NotApplicable("no token limit")
    usage = step.output.usage
    got = usage.completion if usage else None
    if got is None or got > limit:
        return [Violation(f"completion tokens <= {limit}", short(got))]
    return []


@check(
    "output.signatures",
    Severity.MAJOR,
    "docs:https://api-docs.deepseek.com/guides/anthropic_api",
)
def signatures(step: StepView) -> list[Violation]:
    """Every Messages thinking block carries a non-empty signature (a `signature_delta` before
    the block stops, when streamed)."""
    step.require_success()
    if step.protocol != "messages":
        raise NotApplicable("signatures are a Messages field")
    found = step.output.signatures
    if not found:
        raise NotExercised("no thinking block")
    missing = [i for i, s in enumerate(found) if not isinstance(s, str) or not s]
    if missing:
        return [
            Violation(
                "a non-empty signature on every thinking block",
                f"thinking block(s) {missing} without one: {short(found)}",
            )
        ]
    return []
