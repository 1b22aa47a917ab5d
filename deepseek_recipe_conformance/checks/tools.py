"""Checks on tool calls: presence, names, argument JSON and schema, call ids."""

from __future__ import annotations

import json
import re
from typing import Any

from deepseek_recipe_conformance.checks.base import (
    NotApplicable,
    NotExercised,
    StepView,
    Violation,
    check,
    short,
)
from deepseek_recipe_conformance.checks.schema import validate
from deepseek_recipe_conformance.model import Severity

CALL_ID = re.compile(r"^call_\d{2,}_(ET_)?[A-Za-z0-9]{20}[0-9]{4}$")
"""Official tool-call id shape (streaming.md §9)."""


def declared_tools(protocol: str, body: dict[str, Any]) -> dict[str, Any]:
    """Declared function tools of a request: name -> parameter schema (None when absent)."""
    tools: dict[str, Any] = {}
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if protocol == "chat":
            function = tool.get("function") or {}
            tools[str(function.get("name"))] = function.get("parameters")
        elif protocol == "responses":
            if tool.get("type") == "function":
                tools[str(tool.get("name"))] = tool.get("parameters")
        else:
            tools[str(tool.get("name"))] = tool.get("input_schema")
    return tools


@check("tools.called", Severity.MAJOR, "docs:https://api-docs.deepseek.com/guides/tool_calls")
def called(step: StepView, min: int = 1, name: str | None = None) -> list[Violation]:
    """At least `min` tool calls, each to `name` when given (required or named tool choice)."""
    step.require_success()
    calls = step.output.tool_calls
    violations = []
    if len(calls) < min:
        violations.append(
            Violation(
                f"at least {min} tool call(s)",
                f"{len(calls)} call(s); content {short(step.output.content, 80)}",
            )
        )
    if name is not None:
        wrong = [c.name for c in calls if c.name != name]
        if wrong:
            violations.append(Violation(f"calls to {name!r} only", short(wrong)))
    return violations


@check(
    "tools.none_called",
    Severity.MAJOR,
    "docs:https://api-docs.deepseek.com/api/create-chat-completion",
)
def none_called(step: StepView) -> list[Violation]:
    """No tool call and no `tool_calls` finish when the request allows none (no tools, tool
    choice none, JSON output)."""
    step.require_success()
    if step.require_converted().parsing_options.get("parse_tool_calls"):
        raise NotApplicable("the request allows tool calls")
    violations = []
    if step.output.tool_calls:
        violations.append(
            Violation("no tool calls", short([c.name for c in step.output.tool_calls]))
        )
    if step.output.finish == "tool_calls":
        violations.append(Violation("finish reason other than tool_calls", "tool_calls"))
    return violations


def complete_calls(step: StepView) -> list[Any]:
    """The tool calls the model finished: all of them, less the last when the output ran out of
    tokens (`max_tokens` may cut a call's arguments anywhere); `NotExercised` when none."""
    calls = list(step.output.tool_calls)
    finished = calls[:-1] if step.output.finish == "length" else calls
    if not finished:
        raise NotExercised("the model made no complete tool call")
    return finished


@check("tools.arguments_json", Severity.CRITICAL, "issue:sgl-project/sglang#38924")
def arguments_json(step: StepView) -> list[Violation]:
    """Every call's arguments are one JSON object, not wrapped in an extra key."""
    step.require_success()
    violations = []
    tools = declared_tools(step.protocol, step.request)
    for i, call in enumerate(complete_calls(step)):
        try:
            value = json.loads(call.arguments)
        except ValueError as exc:
            violations.append(
                Violation(
                    f"call {i}: arguments that parse as JSON",
                    f"{exc}: {short(call.arguments, 120)}",
                )
            )
            continue
        if not isinstance(value, dict):
            violations.append(Violation(f"call {i}: a JSON object", short(value)))
            continue
        schema = tools.get(str(call.name))
        properties = (schema or {}).get("properties", {}) if isinstance(schema, dict) else {}
        for wrapper in ("arguments", "input", "parameters"):
            if list(value) == [wrapper] and wrapper not in properties:
                violations.append(
                    Violation(f"call {i}: arguments not wrapped in {wrapper!r}", short(value, 120))
                )
    return violations


@check(
    "tools.arguments_schema", Severity.MAJOR, "docs:https://api-docs.deepseek.com/guides/tool_calls"
)
def arguments_schema(step: StepView) -> list[Violation]:
    """Every call names a declared tool and its arguments validate against that tool's schema."""
    step.require_success()
    tools = declared_tools(step.protocol, step.request)
    violations = []
    for i, call in enumerate(complete_calls(step)):
        if call.name not in tools:
            violations.append(
                Violation(f"call {i}: a declared tool ({', '.join(tools)})", short(call.name))
            )
            continue
        try:
            value = json.loads(call.arguments)
        except ValueError:
            continue
        errors = validate(value, tools[call.name] or {})
        if errors:
            violations.append(
                Violation(
                    f"call {i}: arguments valid for {call.name}'s schema", "; ".join(errors[:3])
                )
            )
    return violations


@check("tools.call_ids", Severity.MINOR, "spec:streaming.md#9-random-ids-and-timestamps")
def call_ids(step: StepView, min_calls: int = 1) -> list[Violation]:
    """Tool-call ids are unique and shaped `call_NN_<20 alnum><4 digits>`, NN the call's index
    (`min_calls`: the situation needs that many calls, e.g. parallel calls)."""
    step.require_success()
    ids = [c.id for c in step.output.tool_calls]
    if len(ids) < min_calls:
        raise NotExercised(f"{len(ids)} tool call(s), fewer than {min_calls}")
    violations = []
    bad = [i for i in ids if not isinstance(i, str) or not CALL_ID.match(i)]
    if bad:
        violations.append(Violation("ids like call_00_<20 alphanumerics><4 digits>", short(bad)))
    numbered = [i for i in ids if isinstance(i, str) and CALL_ID.match(i)]
    misnumbered = [
        i for n, i in enumerate(ids) if i in numbered and not i.startswith(f"call_{n:02d}_")
    ]
    if misnumbered:
        violations.append(Violation("call_00_, call_01_, ... in call order", short(misnumbered)))
    if len(set(ids)) != len(ids):
        violations.append(Violation("unique tool-call ids", short(ids)))
    return violations
