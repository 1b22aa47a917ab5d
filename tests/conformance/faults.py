"""Deviation classes for fault injection: each edits a faithful answer the way a faulty host would.

Every fault is a function over a `Wire`; it changes what it applies to and leaves other answers
alone. `Fault.cases` names the cases on which the reference server's answers carry what the fault
edits (the detection test runs each class on those). `BENIGN` holds transformations the
official API itself may produce (keep-alive comments, CRLF framing): the suite must not flag them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tests.conformance.wire import Wire

DSML_LEAK = '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">'


@dataclass(frozen=True)
class Fault:
    """One deviation class: a name, what real-world bug it mimics, and the edit."""

    name: str
    mimics: str
    apply: Callable[[Wire], None]
    cases: tuple[str, ...] = ()
    """Case-id prefixes whose answers from the reference server (tiny random model) carry what
    the fault edits: the detection test runs the fault on these cases only."""


def _ok(w: Wire) -> bool:
    return w.status == 200


def _chat_choices(w: Wire) -> Iterator[dict[str, Any]]:
    """Chat deltas (stream) or messages (body) as editable dicts."""
    if w.streamed:
        for chunk in w.payloads():
            for choice in chunk.get("choices") or []:
                yield choice["delta"]
    elif isinstance(w.body, dict):
        for choice in w.body.get("choices") or []:
            yield choice["message"]


def _chat_finishes(w: Wire) -> Iterator[dict[str, Any]]:
    if w.streamed:
        for chunk in w.payloads():
            yield from chunk.get("choices") or []
    elif isinstance(w.body, dict):
        yield from w.body.get("choices") or []


def _usages(w: Wire) -> Iterator[dict[str, Any]]:
    """Every usage object in the answer."""

    def walk(value: Any) -> Iterator[dict[str, Any]]:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "usage" and isinstance(item, dict):
                    yield item
                else:
                    yield from walk(item)
        elif isinstance(value, list):
            for item in value:
                yield from walk(item)

    yield from walk(w.payloads() if w.streamed else w.body)


def _text_fields(w: Wire, kinds: tuple[str, ...]) -> Iterator[tuple[dict[str, Any], str]]:
    """(container, key) of every text piece of the given kinds: 'reasoning', 'content'."""
    if w.protocol == "chat":
        for d in _chat_choices(w):
            if "reasoning" in kinds and isinstance(d.get("reasoning_content"), str):
                yield d, "reasoning_content"
            if "content" in kinds and isinstance(d.get("content"), str):
                yield d, "content"
    elif w.protocol == "responses":
        if w.streamed:
            for e in w.payloads():
                t = e.get("type")
                if "reasoning" in kinds and t in ("response.reasoning_text.delta",):
                    yield e, "delta"
                if "content" in kinds and t in ("response.output_text.delta",):
                    yield e, "delta"
        elif isinstance(w.body, dict):
            for item in w.body.get("output", []):
                want = {"reasoning": "reasoning", "message": "content"}.get(item.get("type"))
                if want in kinds:
                    for part in item.get("content", []):
                        yield part, "text"
    else:
        blocks = (
            [e.get("delta", {}) for e in w.payloads() if e.get("type") == "content_block_delta"]
            if w.streamed
            else (w.body or {}).get("content", [])
        )
        for b in blocks:
            if "reasoning" in kinds and b.get("type") in ("thinking", "thinking_delta"):
                yield b, "thinking"
            if "content" in kinds and b.get("type") in ("text", "text_delta"):
                yield b, "text"


# ------------------------------------------------------------------ faults on text


def drop_reasoning(w: Wire) -> None:
    for holder, key in list(_text_fields(w, ("reasoning",))):
        if w.protocol == "chat":
            del holder[key]
        else:
            holder[key] = ""


def dsml_in_content(w: Wire) -> None:
    for holder, key in _text_fields(w, ("content", "reasoning")):
        if holder[key]:
            holder[key] += DSML_LEAK
            return


def _stop_strings(w: Wire) -> list[str]:
    raw = w.request.get("stop", w.request.get("stop_sequences"))
    stops = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    return [s for s in stops if isinstance(s, str) and s]


def stop_cuts_reasoning(w: Wire) -> None:
    """The host matches stop strings inside the reasoning: it cuts the reasoning at the first
    match, sends no content and ends with a stop finish. Nothing changes when no stop string
    occurs in the reasoning (the bug needs one)."""
    stops = _stop_strings(w)
    pieces = list(_text_fields(w, ("reasoning",)))
    text = "".join(holder[key] for holder, key in pieces)
    matches = [(text.find(s), s) for s in stops if s in text]
    if not matches or not _ok(w):
        return
    cut, matched = min(matches)
    seen = 0
    for holder, key in pieces:
        piece = holder[key]
        holder[key] = piece[: max(0, min(len(piece), cut - seen))]
        seen += len(piece)
    for holder, key in list(_text_fields(w, ("content",))):
        holder[key] = None if w.protocol == "chat" else ""
    if w.protocol == "messages" and not w.streamed and isinstance(w.body, dict):
        w.body["content"] = [b for b in w.body.get("content", []) if b.get("type") != "text"]
    _finish_edit(w, _ALL_TO_STOP, {}, incomplete_to_completed=True)
    for holder in _messages_finish_holders(w):
        holder["stop_reason"], holder["stop_sequence"] = "stop_sequence", matched


def json_with_preamble(w: Wire) -> None:
    fmt = w.request.get("response_format") or (w.request.get("text") or {}).get("format") or {}
    if fmt.get("type") not in ("json_object", "json_schema"):
        return
    for holder, key in _text_fields(w, ("content",)):
        holder[key] = "Sure! Here is the JSON you asked for:\n" + holder[key]
        return


def thinking_leaks_when_disabled(w: Wire) -> None:
    if (
        w.protocol != "chat"
        or (w.request.get("thinking") or {}).get("type") != "disabled"
        or not _ok(w)
    ):
        return
    for d in _chat_choices(w):
        d["reasoning_content"] = "Let me think about this."
        return


# ------------------------------------------------------------------ finish reasons


CHAT_WRONG = {"tool_calls": "stop", "stop": "end_turn", "length": "stop", "content_filter": "stop"}
MESSAGES_WRONG = {
    "tool_use": "end_turn",
    "end_turn": "stop",
    "max_tokens": "end_turn",
    "stop_sequence": "end_turn",
}


_ALL_TO_STOP = {"tool_calls": "stop", "length": "stop", "content_filter": "stop"}


def _messages_finish_holders(w: Wire) -> list[dict[str, Any]]:
    """The objects carrying a Messages answer's stop_reason."""
    if w.protocol != "messages":
        return []
    if w.streamed:
        return [e["delta"] for e in w.payloads() if e.get("type") == "message_delta"]
    return [w.body] if isinstance(w.body, dict) else []


def _finish_edit(
    w: Wire, chat: dict[str, str], messages: dict[str, str], incomplete_to_completed: bool
) -> None:
    if w.protocol == "chat":
        for choice in _chat_finishes(w):
            if choice.get("finish_reason") in chat:
                choice["finish_reason"] = chat[choice["finish_reason"]]
    elif w.protocol == "messages":
        for h in _messages_finish_holders(w):
            if h.get("stop_reason") in messages:
                h["stop_reason"] = messages[h["stop_reason"]]
    else:
        responses = (
            [e["response"] for e in w.payloads() if "response" in e]
            if w.streamed
            else [w.body or {}]
        )
        for r in responses:
            if r.get("status") == "incomplete" and incomplete_to_completed:
                r["status"], r["incomplete_details"] = "completed", None
            elif r.get("status") == "completed" and not incomplete_to_completed:
                r["status"], r["incomplete_details"] = "incomplete", {"reason": "max_output_tokens"}
        if w.streamed:
            for e, r in zip((e for e in w.payloads() if "response" in e), responses, strict=True):
                if e["type"] in ("response.completed", "response.incomplete"):
                    e["type"] = f"response.{r['status']}"
            for event in w.events:
                if isinstance(event[1], dict) and event[0] in (
                    "response.completed",
                    "response.incomplete",
                ):
                    event[0] = event[1]["type"]


def wrong_finish_reason(w: Wire) -> None:
    _finish_edit(w, CHAT_WRONG, MESSAGES_WRONG, incomplete_to_completed=False)


def length_reported_as_stop(w: Wire) -> None:
    _finish_edit(w, {"length": "stop"}, {"max_tokens": "end_turn"}, incomplete_to_completed=True)


# ------------------------------------------------------------------ usage


def stream_usage_missing(w: Wire) -> None:
    if not w.streamed:
        return
    for e in w.payloads():
        if w.protocol == "chat":
            e.pop("usage", None)
        elif w.protocol == "responses" and isinstance(e.get("response"), dict):
            e["response"]["usage"] = None
        elif e.get("type") == "message_delta":
            e.pop("usage", None)


def cache_fields_missing(w: Wire) -> None:
    for u in _usages(w):
        for key in (
            "prompt_cache_hit_tokens",
            "prompt_cache_miss_tokens",
            "prompt_tokens_details",
            "input_tokens_details",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            u.pop(key, None)


def total_tokens_off(w: Wire) -> None:
    for u in _usages(w):
        if "total_tokens" in u:
            u["total_tokens"] += 1
        elif "output_tokens" in u and "cache_read_input_tokens" in u:
            u["cache_read_input_tokens"] += 1


def _shift_prompt(w: Wire, delta: int) -> None:
    for u in _usages(w):
        if "prompt_tokens" in u:
            u["prompt_tokens"] += delta
            u["total_tokens"] += delta
            u["prompt_cache_miss_tokens"] += delta
        elif "input_tokens" in u:
            u["input_tokens"] += delta
            if "total_tokens" in u:
                u["total_tokens"] += delta


def prompt_tokens_shifted(w: Wire) -> None:
    _shift_prompt(w, 7)


def body_usage_differs_from_stream(w: Wire) -> None:
    if not w.streamed:
        _shift_prompt(w, 3)


def cache_never_hits(w: Wire) -> None:
    for u in _usages(w):
        if "prompt_cache_hit_tokens" in u:
            u["prompt_cache_miss_tokens"] += u["prompt_cache_hit_tokens"]
            u["prompt_cache_hit_tokens"] = 0
            u["prompt_tokens_details"]["cached_tokens"] = 0
        elif "input_tokens_details" in u:
            u["input_tokens_details"]["cached_tokens"] = 0
        elif "cache_read_input_tokens" in u:
            u["input_tokens"] += u["cache_read_input_tokens"]
            u["cache_read_input_tokens"] = 0


def usage_only_final_chunk(w: Wire) -> None:
    if w.protocol != "chat" or not w.streamed:
        return
    chunks = w.payloads()
    if chunks and isinstance(chunks[-1].get("usage"), dict):
        usage = chunks[-1].pop("usage")
        extra = {k: v for k, v in chunks[-1].items() if k != "choices"} | {
            "choices": None,
            "usage": usage,
        }
        w.events.insert(
            len(w.events) - 1 if w.events[-1][1] == "[DONE]" else len(w.events), [None, extra]
        )


# ------------------------------------------------------------------ tool calls


def _argument_streams(w: Wire) -> dict[Any, list[tuple[dict[str, Any], str]]]:
    """Per call: the (holder, key) of its argument text pieces, in order."""
    calls: dict[Any, list[tuple[dict[str, Any], str]]] = {}
    if w.protocol == "chat":
        if w.streamed:
            for d in _chat_choices(w):
                for call in d.get("tool_calls") or []:
                    if isinstance(call.get("function", {}).get("arguments"), str):
                        calls.setdefault(call["index"], []).append((call["function"], "arguments"))
        else:
            for i, call in enumerate(next(_chat_choices(w), {}).get("tool_calls") or []):
                calls[i] = [(call["function"], "arguments")]
    elif w.protocol == "responses":
        if w.streamed:
            for e in w.payloads():
                if e.get("type") == "response.function_call_arguments.delta":
                    calls.setdefault(e["output_index"], []).append((e, "delta"))
        else:
            for i, item in enumerate((w.body or {}).get("output", [])):
                if item.get("type") == "function_call":
                    calls[i] = [(item, "arguments")]
    elif w.streamed:
        for e in w.payloads():
            if (
                e.get("type") == "content_block_delta"
                and e["delta"].get("type") == "input_json_delta"
            ):
                calls.setdefault(e["index"], []).append((e["delta"], "partial_json"))
    return calls


def _responses_done_arguments(w: Wire, edit: Callable[[str], str]) -> None:
    if w.protocol == "responses" and w.streamed:
        for e in w.payloads():
            if e.get("type") == "response.function_call_arguments.done":
                e["arguments"] = edit(e["arguments"])
            item = e.get("item") or {}
            if e.get("type") == "response.output_item.done" and item.get("type") == "function_call":
                item["arguments"] = edit(item["arguments"])


def arguments_wrapped(w: Wire) -> None:
    if w.protocol == "messages" and not w.streamed:
        for block in (w.body or {}).get("content", []):
            if block.get("type") == "tool_use":
                block["input"] = {"arguments": block["input"]}
        return
    for pieces in _argument_streams(w).values():
        first, last = pieces[0], pieces[-1]
        first[0][first[1]] = '{"arguments": ' + first[0][first[1]]
        last[0][last[1]] += "}"
    _responses_done_arguments(w, lambda a: '{"arguments": ' + a + "}")


def arguments_truncated(w: Wire) -> None:
    if w.protocol == "messages" and not w.streamed:
        return  # Messages bodies carry parsed input objects
    for pieces in _argument_streams(w).values():
        holder, key = pieces[-1]
        holder[key] = holder[key][:-1]
    _responses_done_arguments(w, lambda a: a[:-1])


def _call_holders(w: Wire) -> Iterator[dict[str, Any]]:
    """Objects carrying a tool-call id and name."""
    if w.protocol == "chat":
        for d in _chat_choices(w):
            for call in d.get("tool_calls") or []:
                if "id" in call:
                    yield call
    elif w.protocol == "responses":
        items = (
            [e.get("item") or {} for e in w.payloads()]
            if w.streamed
            else (w.body or {}).get("output", [])
        )
        items += (
            [i for e in w.payloads() for i in (e.get("response") or {}).get("output", [])]
            if w.streamed
            else []
        )
        yield from (i for i in items if i.get("type") == "function_call")
    else:
        blocks = (
            [e.get("content_block") or {} for e in w.payloads()]
            if w.streamed
            else (w.body or {}).get("content", [])
        )
        yield from (b for b in blocks if b.get("type") == "tool_use")


def call_ids_not_official(w: Wire) -> None:
    for holder in _call_holders(w):
        key = "call_id" if w.protocol == "responses" else "id"
        holder[key] = "call_" + uuid.uuid5(uuid.NAMESPACE_URL, str(holder.get(key))).hex


def named_tool_choice_ignored(w: Wire) -> None:
    choice = w.request.get("tool_choice")
    if not isinstance(choice, dict) or choice.get("type") not in ("function", "tool"):
        return
    for holder in _call_holders(w):
        if w.protocol == "chat":
            holder["function"]["name"] = "some_other_tool"
        else:
            holder["name"] = "some_other_tool"


# ------------------------------------------------------------------ framing


def no_done_sentinel(w: Wire) -> None:
    w.events = [e for e in w.events if e[1] != "[DONE]"]


def done_sentinel_everywhere(w: Wire) -> None:
    if w.streamed and w.protocol != "chat":
        w.events.append([None, "[DONE]"])


def role_chunk_missing(w: Wire) -> None:
    if not w.streamed:
        return
    if w.protocol == "chat":
        for d in _chat_choices(w):
            d.pop("role", None)
            return
    skip = {"responses": "response.in_progress", "messages": "message_start"}[w.protocol]
    w.events = [e for e in w.events if e[0] != skip]


def content_after_finish(w: Wire) -> None:
    if not w.streamed:
        return
    json_events = [i for i, e in enumerate(w.events) if isinstance(e[1], dict)]
    if len(json_events) >= 2:
        a, b = json_events[-2], json_events[-1]
        w.events[a], w.events[b] = w.events[b], w.events[a]


def sequence_number_gap(w: Wire) -> None:
    if w.protocol == "responses" and w.streamed:
        for e in w.payloads()[2:]:
            e["sequence_number"] += 1


def event_names_wrong(w: Wire) -> None:
    if w.streamed and w.protocol != "chat":
        for e in w.events:
            if e[0] is not None:
                e[0] = "message"


def chunk_id_drift(w: Wire) -> None:
    if w.protocol == "chat" and w.streamed:
        for n, chunk in enumerate(w.payloads()):
            chunk["id"] = f"{chunk.get('id')}-{n}"


def blocks_not_closed(w: Wire) -> None:
    if w.protocol == "messages" and w.streamed:
        w.events = [e for e in w.events if e[0] != "content_block_stop"]
    if w.protocol == "responses" and w.streamed:
        w.events = [e for e in w.events if e[0] != "response.output_item.done"]
        for n, e in enumerate(w.payloads()):
            e["sequence_number"] = n


def stream_as_json_content_type(w: Wire) -> None:
    if w.streamed:
        w.headers["content-type"] = "application/json"


def logprobs_dropped(w: Wire) -> None:
    for choice in _chat_finishes(w):
        if "logprobs" in choice:
            choice["logprobs"] = None
    for holder, _key in _text_fields(w, ("content",)):
        if w.protocol == "responses" and "logprobs" in holder:
            holder["logprobs"] = []


# ------------------------------------------------------------------ validation


def _plain_success(w: Wire) -> None:
    w.status = 200
    w.body = {
        "id": "resp-1",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
    }


def _error_message(w: Wire) -> str:
    error = (w.body or {}).get("error") if isinstance(w.body, dict) else None
    return str(error.get("message")) if isinstance(error, dict) else ""


def bad_param_status_422(w: Wire) -> None:
    if w.status == 400:
        w.status = 422


def error_body_not_openai_shape(w: Wire) -> None:
    if w.status == 400:
        w.body = {"detail": _error_message(w)}


def error_message_reworded(w: Wire) -> None:
    if w.status == 400 and isinstance(w.body, dict):
        w.body["error"]["message"] = "Invalid request: " + _error_message(w).lower()


def invalid_params_accepted(w: Wire) -> None:
    if (
        w.status == 400
        and "passed back" not in _error_message(w)
        and "Thinking mode" not in _error_message(w)
    ):
        _plain_success(w)


def passback_not_enforced(w: Wire) -> None:
    if w.status == 400 and "must be passed back" in _error_message(w):
        _plain_success(w)


def thinking_tool_choice_accepted(w: Wire) -> None:
    if w.status == 400 and "Thinking mode does not support" in _error_message(w):
        _plain_success(w)


FAULTS: tuple[Fault, ...] = (
    Fault(
        "drop_reasoning",
        "reasoning_content dropped (ai-dynamo/dynamo#10163)",
        drop_reasoning,
        cases=("passback.given.", "thinking.effort_prompt.s1-rs-00002"),
    ),
    Fault(
        "dsml_in_content",
        "DSML markup leaked into content (vllm#40800)",
        dsml_in_content,
        cases=(
            "dsml.thinking.chat.",
            "dsml.non_thinking.responses.",
            "dsml.non_thinking.messages.",
        ),
    ),
    Fault(
        "stop_cuts_reasoning",
        "stop string applied inside reasoning: reasoning cut, content null (vllm#52393)",
        stop_cuts_reasoning,
        cases=("stop.toy_thinking.",),
    ),
    Fault(
        "json_with_preamble",
        "JSON-mode output with prose around it",
        json_with_preamble,
        cases=("json_output.toy_schema.",),
    ),
    Fault(
        "thinking_leaks_when_disabled",
        "reasoning returned although thinking is disabled",
        thinking_leaks_when_disabled,
        cases=("thinking.effort_prompt.s1-cc-00149",),
    ),
    Fault(
        "wrong_finish_reason",
        "finish reason mapped wrongly (tool_calls -> stop, LiteLLM-style)",
        wrong_finish_reason,
        cases=(
            "tools.toy_named.",
            "max_tokens.non_thinking.chat.body",
            "max_tokens.messages.stream",
        ),
    ),
    Fault(
        "length_reported_as_stop",
        "token limit reported as a normal stop",
        length_reported_as_stop,
        cases=("max_tokens.non_thinking.chat.", "max_tokens.responses.", "max_tokens.messages."),
    ),
    Fault(
        "stream_usage_missing",
        "usage missing from the stream",
        stream_usage_missing,
        cases=(
            "streaming.plain.chat",
            "streaming.plain.responses",
            "streaming.plain.messages",
        ),
    ),
    Fault(
        "cache_fields_missing",
        "prompt_cache_hit/miss fields missing (vLLM/SGLang)",
        cache_fields_missing,
        cases=("usage.non_thinking.",),
    ),
    Fault(
        "total_tokens_off",
        "usage totals that do not add up",
        total_tokens_off,
        cases=("usage.non_thinking.chat.", "usage.non_thinking.responses."),
    ),
    Fault(
        "prompt_tokens_shifted",
        "prompt tokens counted with another template",
        prompt_tokens_shifted,
        cases=(
            "prompt_parity.s1-cc-00001",
            "prompt_parity.s1-rs-00005",
            "prompt_parity.s1-ms-00013",
        ),
    ),
    Fault(
        "body_usage_differs_from_stream",
        "non-stream usage differs from the stream's",
        body_usage_differs_from_stream,
        cases=("equivalence.plain.",),
    ),
    Fault(
        "cache_never_hits",
        "prefix cache never reported",
        cache_never_hits,
        cases=("cache.repeat.",),
    ),
    Fault(
        "usage_only_final_chunk",
        "usage in a separate chunk with choices null (vLLM)",
        usage_only_final_chunk,
        cases=(
            "streaming.plain.chat",
            "streaming.include_usage.chat",
        ),
    ),
    Fault(
        "arguments_wrapped",
        'arguments wrapped in {"arguments": ...} (sglang#38924)',
        arguments_wrapped,
        cases=("tools.toy_named.",),
    ),
    Fault(
        "arguments_truncated",
        "unterminated argument JSON (vllm#53227)",
        arguments_truncated,
        cases=(
            "tools.toy_named.chat.",
            "tools.toy_named.responses.",
            "tools.toy_named.messages.stream",
        ),
    ),
    Fault(
        "call_ids_not_official",
        "tool-call ids in another format",
        call_ids_not_official,
        cases=("tools.toy_named.",),
    ),
    Fault(
        "named_tool_choice_ignored",
        "named tool_choice not enforced",
        named_tool_choice_ignored,
        cases=("tools.toy_named.",),
    ),
    Fault(
        "no_done_sentinel",
        "Chat stream without data: [DONE]",
        no_done_sentinel,
        cases=(
            "streaming.plain.chat",
            "streaming.tools.chat",
        ),
    ),
    Fault(
        "done_sentinel_everywhere",
        "[DONE] appended to Responses/Messages streams",
        done_sentinel_everywhere,
        cases=(
            "streaming.plain.responses",
            "streaming.plain.messages",
        ),
    ),
    Fault(
        "role_chunk_missing",
        "stream does not open with the role / start event",
        role_chunk_missing,
        cases=(
            "streaming.plain.chat",
            "streaming.plain.responses",
            "streaming.plain.messages",
        ),
    ),
    Fault(
        "content_after_finish",
        "a chunk after the finish chunk",
        content_after_finish,
        cases=(
            "streaming.plain.chat",
            "streaming.plain.responses",
            "streaming.plain.messages",
        ),
    ),
    Fault(
        "sequence_number_gap",
        "Responses sequence_number with a gap",
        sequence_number_gap,
        cases=(
            "streaming.plain.responses",
            "streaming.tools.responses",
        ),
    ),
    Fault(
        "event_names_wrong",
        "SSE event: names not equal to the data type",
        event_names_wrong,
        cases=(
            "streaming.plain.responses",
            "streaming.plain.messages",
        ),
    ),
    Fault(
        "chunk_id_drift",
        "chunk id changes mid-stream",
        chunk_id_drift,
        cases=("streaming.plain.chat",),
    ),
    Fault(
        "blocks_not_closed",
        "content blocks / output items never closed",
        blocks_not_closed,
        cases=(
            "streaming.plain.responses",
            "streaming.plain.messages",
        ),
    ),
    Fault(
        "stream_as_json_content_type",
        "stream served as application/json",
        stream_as_json_content_type,
        cases=(
            "streaming.plain.chat",
            "streaming.plain.responses",
            "streaming.plain.messages",
        ),
    ),
    Fault(
        "logprobs_dropped",
        "requested logprobs not returned",
        logprobs_dropped,
        cases=("logprobs.",),
    ),
    Fault(
        "bad_param_status_422",
        "HTTP 422 instead of 400 for a bad parameter",
        bad_param_status_422,
        cases=(
            "validation.params.temperature.",
            "validation.params.n.",
        ),
    ),
    Fault(
        "error_body_not_openai_shape",
        'FastAPI-style {"detail": ...} error body',
        error_body_not_openai_shape,
        cases=(
            "validation.params.temperature.",
            "validation.params.n.",
        ),
    ),
    Fault(
        "error_message_reworded",
        "error message differs from the official text",
        error_message_reworded,
        cases=(
            "validation.params.temperature.",
            "validation.params.n.",
        ),
    ),
    Fault(
        "invalid_params_accepted",
        "invalid parameters (n>1, temperature 3, ...) accepted",
        invalid_params_accepted,
        cases=(
            "validation.params.temperature.",
            "validation.params.n.",
        ),
    ),
    Fault(
        "passback_not_enforced",
        "missing reasoning_content pass-back accepted",
        passback_not_enforced,
        cases=("passback.missing.",),
    ),
    Fault(
        "thinking_tool_choice_accepted",
        "thinking + required/named tool_choice accepted",
        thinking_tool_choice_accepted,
        cases=("thinking_tool_choice.rejected.",),
    ),
)
"""The deviation classes; the detection test expects the suite to flag every one."""


def _keepalive(w: Wire) -> None:
    w.keepalive = True


def _crlf(w: Wire) -> None:
    w.crlf = True


def _small_writes(w: Wire) -> None:
    w.write_size = 7


BENIGN: tuple[Fault, ...] = (
    Fault(
        "keepalive_comments",
        "`: keep-alive` comments between events (official while queued)",
        _keepalive,
    ),
    Fault("crlf_framing", "CRLF line endings (allowed by the SSE grammar)", _crlf),
    Fault(
        "small_writes", "answers split into 7-byte writes, mid-line and mid-UTF-8", _small_writes
    ),
)
"""Transformations a conforming host may apply; they must produce no finding."""
