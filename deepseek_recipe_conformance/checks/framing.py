"""Checks on stream framing and event order for the three protocols (streaming.md §6-§8)."""

from __future__ import annotations

from typing import Any, cast

from deepseek_recipe_conformance.checks.base import NotApplicable, StepView, Violation, check, short
from deepseek_recipe_conformance.model import Severity
from deepseek_recipe_conformance.sse import SseStream

TERMINAL_RESPONSES = ("response.completed", "response.incomplete", "response.failed")


def _stream(step: StepView) -> SseStream:
    if not step.exchange.stream:
        raise NotApplicable("not a streaming step")
    step.require_success()
    return step.exchange.sse()


def _objects(stream: SseStream) -> list[dict[str, Any]]:
    return [p for p in stream.payloads() if isinstance(p, dict)]


@check("stream.events_parse", Severity.CRITICAL, "spec:streaming.md#6-chat-completions-chunks")
def events_parse(step: StepView) -> list[Violation]:
    """Every event is complete, UTF-8, and carries one JSON object (or the `[DONE]` sentinel)."""
    stream = _stream(step)
    violations = []
    if stream.invalid_utf8:
        violations.append(Violation("UTF-8 event stream", "invalid UTF-8 bytes"))
    if stream.tail.strip():
        violations.append(Violation("every event ends with a blank line", short(stream.tail)))
    for i, event in enumerate(stream.data_events()):
        if not isinstance(event.json(), dict):
            violations.append(
                Violation("a JSON object in every data field", f"event {i}: {short(event.data)}")
            )
            break
    if not stream.events:
        violations.append(Violation("at least one event", "no events"))
    return violations


@check(
    "stream.terminator",
    Severity.CRITICAL,
    "docs:https://api-docs.deepseek.com/guides/responses_api",
)
def terminator(step: StepView) -> list[Violation]:
    """Chat ends with `data: [DONE]`; Responses/Messages end with a terminal event, no `[DONE]`."""
    stream = _stream(step)
    if not stream.events:
        return [Violation("a terminated stream", "no events")]
    last = stream.events[-1]
    done_count = sum(e.data == "[DONE]" for e in stream.events)
    if step.protocol == "chat":
        if last.data != "[DONE]" or done_count != 1:
            return [
                Violation(
                    "exactly one data: [DONE], as the last event",
                    f"{done_count} [DONE], last {short(last.data, 80)}",
                )
            ]
        return []
    violations = []
    if done_count:
        violations.append(Violation("no data: [DONE] sentinel", f"{done_count} [DONE] event(s)"))
    objects = _objects(stream)
    final_type = objects[-1].get("type") if objects else None
    wanted = TERMINAL_RESPONSES if step.protocol == "responses" else ("message_stop",)
    if final_type not in wanted:
        violations.append(
            Violation(f"last event one of {', '.join(wanted)}", f"last event {final_type!r}")
        )
    return violations


def _chat_role_first(objects: list[dict[str, Any]], thinking: bool | None) -> list[Violation]:
    deltas = [
        (c.get("choices") or [{}])[0].get("delta", {}) if isinstance(c.get("choices"), list) else {}
        for c in objects
    ]
    if not deltas or deltas[0].get("role") != "assistant":
        return [
            Violation(
                'first chunk delta {"role": "assistant", ...}', short(deltas[0] if deltas else None)
            )
        ]
    violations = []
    if any("role" in d for d in deltas[1:]):
        violations.append(
            Violation("role only in the first chunk", "role repeated in a later chunk")
        )
    if thinking is True and "reasoning_content" not in deltas[0]:
        violations.append(
            Violation('thinking: first delta has "reasoning_content": ""', short(deltas[0]))
        )
    if thinking is False and deltas[0].get("reasoning_content") is not None:
        violations.append(
            Violation("non-thinking: no reasoning_content in the role delta", short(deltas[0]))
        )
    return violations


@check("stream.role_first", Severity.MAJOR, "spec:streaming.md#6-chat-completions-chunks")
def role_first(step: StepView, thinking: bool | None = None) -> list[Violation]:
    """The stream opens with the role (Chat), `response.created`/`in_progress`, `message_start`."""
    objects = _objects(_stream(step))
    if step.protocol == "chat":
        return _chat_role_first(objects, thinking)
    types = [o.get("type") for o in objects]
    if step.protocol == "responses":
        if types[:2] != ["response.created", "response.in_progress"]:
            return [Violation("response.created then response.in_progress first", short(types[:2]))]
        return []
    first = objects[0] if objects else {}
    raw_message = first.get("message")
    message = cast(dict[str, Any], raw_message) if isinstance(raw_message, dict) else {}
    if first.get("type") != "message_start" or message.get("role") != "assistant":
        return [Violation("message_start with role assistant first", short(first))]
    if thinking is True:
        blocks = [
            o.get("content_block", {}).get("type")
            for o in objects
            if o.get("type") == "content_block_start"
        ]
        if not blocks or blocks[0] != "thinking":
            return [
                Violation(
                    "thinking: the first content block is a thinking block", short(blocks[:1])
                )
            ]
    return []


@check("stream.finish_last", Severity.MAJOR, "spec:streaming.md#5-finish-reason-mapping")
def finish_last(step: StepView) -> list[Violation]:
    """Exactly one finish signal, and nothing but usage/terminator after it."""
    objects = _objects(_stream(step))
    if step.protocol == "chat":
        finishing = [
            i
            for i, c in enumerate(objects)
            for choice in _list(c.get("choices"))
            if isinstance(choice, dict) and choice.get("finish_reason") is not None
        ]
        if len(finishing) != 1 or finishing[0] != len(objects) - 1:
            return [
                Violation(
                    "one chunk with finish_reason, the last chunk",
                    f"finish_reason in chunks {finishing} of {len(objects)}",
                )
            ]
        return []
    types = [o.get("type") for o in objects]
    if step.protocol == "responses":
        terminal = [i for i, t in enumerate(types) if t in TERMINAL_RESPONSES]
        if len(terminal) != 1 or terminal[0] != len(types) - 1:
            return [
                Violation(
                    "one terminal response event, last",
                    f"terminal events at {terminal} of {len(types)}",
                )
            ]
        return []
    deltas = [i for i, t in enumerate(types) if t == "message_delta"]
    if (
        types.count("message_stop") != 1
        or len(deltas) != 1
        or deltas[0] != len(types) - 2
        or types[-1] != "message_stop"
    ):
        return [
            Violation(
                "one message_delta followed by one message_stop, at the end", short(types[-3:])
            )
        ]
    if objects[deltas[0]].get("delta", {}).get("stop_reason") is None:
        return [Violation("message_delta carries stop_reason", short(objects[deltas[0]]))]
    return []


@check("stream.usage_chunk", Severity.MAJOR, "spec:streaming.md#6-chat-completions-chunks")
def usage_chunk(step: StepView) -> list[Violation]:
    """Usage arrives in the final chunk/event, and never in a chunk without choices."""
    objects = _objects(_stream(step))
    if not objects:
        return [Violation("events", "none")]
    if step.protocol == "chat":
        violations = []
        if not isinstance(objects[-1].get("usage"), dict):
            violations.append(
                Violation("usage object on the final chunk", short(objects[-1].get("usage")))
            )
        empty = [
            i
            for i, c in enumerate(objects)
            if not isinstance(c.get("choices"), list) or not c["choices"]
        ]
        if empty:
            violations.append(
                Violation(
                    "choices present on every chunk (no usage-only chunk)",
                    f"chunks {empty} without choices",
                )
            )
        return violations
    if step.protocol == "responses":
        final = objects[-1].get("response")
        if not isinstance(final, dict) or not isinstance(final.get("usage"), dict):
            return [Violation("usage in the terminal response", short(final, 120))]
        return []
    start = objects[0].get("message", {}) if isinstance(objects[0].get("message"), dict) else {}
    deltas = [o for o in objects if o.get("type") == "message_delta"]
    violations = []
    if not isinstance(start.get("usage"), dict):
        violations.append(Violation("usage in message_start", short(start)))
    if (
        not deltas
        or not isinstance(deltas[-1].get("usage"), dict)
        or "output_tokens" not in deltas[-1]["usage"]
    ):
        violations.append(
            Violation(
                "usage with output_tokens in message_delta", short(deltas[-1] if deltas else None)
            )
        )
    return violations


def _chat_order(objects: list[dict[str, Any]]) -> list[Violation]:
    for key in ("id", "created", "model"):
        values = {short(c.get(key)) for c in objects}
        if len(values) > 1:
            return [Violation(f"the same {key} on every chunk", f"{len(values)} different values")]
    wrong = [c.get("object") for c in objects if c.get("object") != "chat.completion.chunk"]
    if wrong:
        return [Violation('object "chat.completion.chunk"', short(wrong[0]))]
    return []


def _responses_order(stream: SseStream, objects: list[dict[str, Any]]) -> list[Violation]:
    numbers = [o.get("sequence_number") for o in objects]
    if numbers != list(range(len(objects))):
        return [Violation("sequence_number 0, 1, 2, ... without gaps", short(numbers, 120))]
    names = [e.event for e in stream.data_events()]
    if names != [o.get("type") for o in objects]:
        return [Violation("event: name equal to the data type", "mismatch")]
    state: dict[int, str] = {}
    for o in objects:
        kind, index = str(o.get("type")), o.get("output_index")
        if not isinstance(index, int):
            continue
        if kind == "response.output_item.added":
            if index in state:
                return [Violation("each output item added once", f"item {index} added twice")]
            state[index] = "open"
        elif index not in state:
            return [
                Violation(
                    "output_item.added before the item's other events", f"{kind} for item {index}"
                )
            ]
        elif state[index] == "done":
            return [
                Violation(
                    "no events for an item after output_item.done", f"{kind} for item {index}"
                )
            ]
        elif kind == "response.output_item.done":
            state[index] = "done"
    if any(s != "done" for s in state.values()):
        return [Violation("every output item closed with output_item.done", short(state))]
    return []


def _messages_order(stream: SseStream, objects: list[dict[str, Any]]) -> list[Violation]:
    names = [e.event for e in stream.data_events()]
    if names != [o.get("type") for o in objects]:
        return [Violation("event: name equal to the data type", "mismatch")]
    state: dict[int, str] = {}
    for o in objects:
        kind, raw_index = o.get("type"), o.get("index")
        index = raw_index if isinstance(raw_index, int) else -1
        if kind == "content_block_start":
            if index != len(state):
                return [
                    Violation(
                        "content blocks numbered 0, 1, 2, ... in order", f"start of block {index}"
                    )
                ]
            if any(s == "open" for s in state.values()):
                return [
                    Violation("a block starts after the previous one stopped", f"block {index}")
                ]
            state[index] = "open"
        elif kind in ("content_block_delta", "content_block_stop"):
            if state.get(index) != "open":
                return [
                    Violation(
                        "deltas and stop only inside an open block", f"{kind} for block {index}"
                    )
                ]
            if kind == "content_block_stop":
                state[index] = "closed"
    if any(s == "open" for s in state.values()):
        return [Violation("every content block stopped", short(state))]
    return []


@check("stream.event_order", Severity.MAJOR, "spec:streaming.md#7-responses-events")
def event_order(step: StepView) -> list[Violation]:
    """Chunk identity is stable (Chat); item and block lifecycles nest (Responses, Messages)."""
    stream = _stream(step)
    objects = _objects(stream)
    if step.protocol == "chat":
        return _chat_order(objects)
    if step.protocol == "responses":
        return _responses_order(stream, objects)
    return _messages_order(stream, objects)


def _list(value: object) -> list[Any]:
    """`value` if it is a list, else an empty one."""
    return cast(list[Any], value) if isinstance(value, list) else []
