"""Deviation classes for fault injection: each edits a faithful answer the way a faulty host would.

Every fault is a function over a `Wire`; it changes what it applies to and leaves other answers
alone. `Fault.cases` names the cases on which the reference server's answers carry what the fault
edits (the detection test runs each class on those). `BENIGN` holds transformations the
official API itself may produce (keep-alive comments, CRLF framing): the suite must not flag them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from deepseek_recipe_conformance.oracle import RecipeOracle
from tests.conformance.standin import Quirks, StandinModel
from tests.conformance.standin_text import STYLES
from tests.conformance.wire import Wire

DSML_LEAK = '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">'
API_KEY_HEADERS = ("authorization", "x-api-key")
SERVED_MODEL = "DeepSeek-V4-Pro"
"""The model the detection test asks for (a fault may hide it from the model list)."""
ORACLE = RecipeOracle(SERVED_MODEL)


@dataclass
class Forwarded:
    """A request on its way to the upstream host (a fault may edit it); `valid` says whether
    the recipe converts it, `upstream_key` is the key the upstream accepts."""

    protocol: str | None
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    valid: bool
    upstream_key: str


@dataclass(frozen=True)
class Fault:
    """One deviation class: a name, what real-world bug it mimics, and how the host breaks it:
    an edit of the answer on the wire (`apply`), of the request before the upstream sees it
    (`request`), or a host duty skipped (`quirks`)."""

    name: str
    mimics: str
    apply: Callable[[Wire], None] = lambda _w: None
    cases: tuple[str, ...] = ()
    """Case-id prefixes whose answers carry what the fault breaks: the detection test runs the
    fault on these cases only."""
    request: Callable[[Forwarded], None] | None = None
    quirks: Quirks = field(default_factory=Quirks)
    model: StandinModel = field(default_factory=lambda: StandinModel("wordy"))
    """The stand-in model behind the faulty host (its answers give the fault material)."""


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


# ------------------------------------------------------------------ authentication (requests)


def _with_key(r: Forwarded) -> None:
    for name in API_KEY_HEADERS:
        r.headers.pop(name, None)
    r.headers["authorization"] = f"Bearer {r.upstream_key}"


def auth_not_checked(r: Forwarded) -> None:
    """The host lets every request through (it calls the upstream with its own key)."""
    _with_key(r)


def empty_key_accepted(r: Forwarded) -> None:
    """A header without a token passes (only the header's presence is checked)."""
    bare = r.headers.get("authorization", "").strip().lower() == "bearer"
    if bare or r.headers.get("x-api-key") == "":
        _with_key(r)


def x_api_key_ignored(r: Forwarded) -> None:
    """The host reads only `Authorization`."""
    r.headers.pop("x-api-key", None)


def bearer_rejected_on_messages(r: Forwarded) -> None:
    """Messages reads only `x-api-key`."""
    if r.protocol == "messages":
        r.headers.pop("authorization", None)


def validation_before_auth(r: Forwarded) -> None:
    """The host validates before it authenticates: an invalid request gets its 400 even
    without a key (the upstream sees the key, so it answers with the validation error)."""
    if not r.valid and r.protocol is not None:
        _with_key(r)


def unknown_model_accepted(r: Forwarded) -> None:
    """Any model name is served (by the one model the host has)."""
    try:
        body = json.loads(r.body)
    except ValueError:
        return
    if isinstance(body, dict) and body.get("model") not in (None, SERVED_MODEL):
        r.body = json.dumps({**body, "model": SERVED_MODEL}).encode()


def auth_status_403(w: Wire) -> None:
    if w.status == 401:
        w.status = 403


def auth_body_not_official(w: Wire) -> None:
    if w.status == 401:
        w.body = {
            "error": {
                "message": "Unauthorized",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        }


# ------------------------------------------------------------------ other routes


def models_list_wrong_shape(w: Wire) -> None:
    if w.path.endswith("/models") and isinstance(w.body, dict):
        w.body = {"models": [m.get("id") for m in w.body.get("data", [])]}


def models_list_missing_model(w: Wire) -> None:
    if w.path.endswith("/models") and isinstance(w.body, dict):
        w.body["data"] = [m for m in w.body.get("data", []) if m.get("id") != SERVED_MODEL]


def routing_errors_as_text(w: Wire) -> None:
    if w.status in (404, 405):
        w.body, w.raw_body = None, b"Not Found" if w.status == 404 else b"Method Not Allowed"
        w.headers["content-type"] = "text/plain; charset=utf-8"


def malformed_json_500(w: Wire) -> None:
    if w.status == 400 and "JSON" in _error_message(w):
        w.status, w.body = 500, {"detail": "Internal Server Error"}


def error_content_type_text(w: Wire) -> None:
    if w.status == 400:
        w.headers["content-type"] = "text/plain"


def error_code_null(w: Wire) -> None:
    if w.status == 400 and isinstance(w.body, dict) and isinstance(w.body.get("error"), dict):
        w.body["error"]["code"] = None


# ------------------------------------------------------------------ reasoning, tools, finish


def think_tag_in_content(w: Wire) -> None:
    for holder, key in _text_fields(w, ("content",)):
        if holder[key]:
            holder[key] += "</think>"
            return


def reasoning_tokens_missing(w: Wire) -> None:
    for u in _usages(w):
        u.pop("completion_tokens_details", None)
        u.pop("output_tokens_details", None)


def reasoning_tokens_are_completion(w: Wire) -> None:
    for u in _usages(w):
        for details, total in (
            ("completion_tokens_details", "completion_tokens"),
            ("output_tokens_details", "output_tokens"),
        ):
            if isinstance(u.get(details), dict):
                u[details]["reasoning_tokens"] = u[total]


def tool_calls_finish_stop(w: Wire) -> None:
    _finish_edit(w, {"tool_calls": "stop"}, {"tool_use": "end_turn"}, incomplete_to_completed=False)


def stop_reported_as_length(w: Wire) -> None:
    _finish_edit(w, {"stop": "length"}, {"end_turn": "max_tokens"}, incomplete_to_completed=False)


def tool_call_type_missing(w: Wire) -> None:
    for holder in _call_holders(w):
        if w.protocol == "chat":
            holder.pop("type", None)


def _compact(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        return arguments


def arguments_compact(w: Wire) -> None:
    """Arguments re-serialised without spaces (the host parses and dumps them again)."""
    for pieces in _argument_streams(w).values():
        whole = _compact("".join(h[k] for h, k in pieces))
        for n, (holder, key) in enumerate(pieces):
            holder[key] = whole if n == 0 else ""
    _responses_done_arguments(w, _compact)


def tool_call_indexes_zero(w: Wire) -> None:
    """Every streamed Chat tool call gets index 0 (clients then merge them into one)."""
    if w.protocol == "chat" and w.streamed:
        for d in _chat_choices(w):
            for call in d.get("tool_calls") or []:
                call["index"] = 0


def tool_input_as_string(w: Wire) -> None:
    if w.protocol == "messages" and not w.streamed and isinstance(w.body, dict):
        for block in w.body.get("content", []):
            if block.get("type") == "tool_use":
                block["input"] = json.dumps(block["input"])


def stop_sequence_not_reported(w: Wire) -> None:
    for holder in _messages_finish_holders(w):
        if holder.get("stop_reason") == "stop_sequence":
            holder["stop_reason"], holder["stop_sequence"] = "end_turn", None


def stop_included_in_content(w: Wire) -> None:
    """The matched stop string is left at the end of the content."""
    for holder in _messages_finish_holders(w):
        matched = holder.get("stop_sequence")
        fields = list(_text_fields(w, ("content",)))
        if matched and fields:
            text_holder, key = fields[-1]
            text_holder[key] += matched


def json_schema_not_enforced(w: Wire) -> None:
    fmt = w.request.get("response_format") or (w.request.get("text") or {}).get("format") or {}
    if fmt.get("type") == "json_schema":
        for holder, key in _text_fields(w, ("content",)):
            if holder[key].strip().startswith("{"):
                holder[key] = '{"capital": "yes", "note": 1}'
            elif holder[key].strip():
                holder[key] = ""


def stop_sequence_misnamed(w: Wire) -> None:
    """Messages names a stop string the request never sent."""
    for holder in _messages_finish_holders(w):
        if holder.get("stop_reason") == "stop_sequence":
            holder["stop_sequence"] = "<stop>"


def content_null(w: Wire) -> None:
    """Chat content null at the end of a plain answer."""
    if w.protocol == "chat" and isinstance(w.body, dict):
        for choice in w.body.get("choices") or []:
            if not choice["message"].get("tool_calls"):
                choice["message"]["content"] = None


def tool_called_despite_none(w: Wire) -> None:
    """tool_choice none ignored: the answer is a tool call."""
    if w.protocol == "chat" and isinstance(w.body, dict) and w.request.get("tool_choice") == "none":
        for choice in w.body.get("choices") or []:
            call = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
            choice["message"]["tool_calls"] = [
                {
                    "index": 0,
                    "id": "call_00_abcdefghijABCDEFGHIJ1234",
                    "type": "function",
                    "function": call,
                }
            ]
            choice["finish_reason"] = "tool_calls"


# ------------------------------------------------------------------ usage and logprobs


def include_usage_ignored(w: Wire) -> None:
    if w.protocol == "chat" and w.streamed:
        for chunk in w.payloads()[:-1]:
            if chunk.get("usage", 0) is None:
                del chunk["usage"]


def message_start_usage_missing(w: Wire) -> None:
    if w.protocol == "messages" and w.streamed:
        for e in w.payloads():
            if e.get("type") == "message_start":
                e["message"].pop("usage", None)


def top_logprobs_exceeded(w: Wire) -> None:
    def grow(entry: dict[str, Any]) -> None:
        alternatives = entry.get("top_logprobs")
        if isinstance(alternatives, list) and alternatives:
            entry["top_logprobs"] = alternatives * 3

    for choice in _chat_finishes(w):
        for entry in (choice.get("logprobs") or {}).get("content") or []:
            grow(entry)
    for holder, _key in _text_fields(w, ("content",)):
        for entry in holder.get("logprobs") or []:
            grow(entry)


def cache_miss_ignores_hits(w: Wire) -> None:
    """prompt_cache_miss_tokens always the whole prompt (hits counted twice)."""
    for u in _usages(w):
        if "prompt_cache_miss_tokens" in u:
            u["prompt_cache_miss_tokens"] = u["prompt_tokens"]


def messages_input_includes_hits(w: Wire) -> None:
    """Messages input_tokens as the whole prompt instead of the cache miss."""
    for u in _usages(w):
        if "cache_read_input_tokens" in u:
            u["input_tokens"] += u["cache_read_input_tokens"]


def validation_order_reversed(w: Wire) -> None:
    """The host checks temperature last: with another invalid parameter, that one is reported."""
    if w.status != 400 or "temperature" not in w.request:
        return
    rest = {k: v for k, v in w.request.items() if k != "temperature"}
    other = ORACLE.expected_error(w.protocol, rest) if w.protocol else None
    if other is not None:
        w.body = other[1]


# ------------------------------------------------------------------ framing and shapes


def event_json_truncated(w: Wire) -> None:
    """One event's JSON cut short (a write split inside an event and never completed)."""
    for event in w.events[1:]:
        if isinstance(event[1], dict):
            event[1] = json.dumps(event[1])[:-3]
            return


def ping_missing(w: Wire) -> None:
    w.events = [e for e in w.events if e[0] != "ping"]


def signature_missing(w: Wire) -> None:
    if w.protocol != "messages":
        return
    if w.streamed:
        w.events = [
            e
            for e in w.events
            if not (
                isinstance(e[1], dict)
                and (e[1].get("delta") or {}).get("type") == "signature_delta"
            )
        ]
    elif isinstance(w.body, dict):
        for block in w.body.get("content", []):
            if block.get("type") == "thinking":
                block["signature"] = ""


def chunk_object_wrong(w: Wire) -> None:
    if w.protocol == "chat" and w.streamed:
        for chunk in w.payloads():
            chunk["object"] = "chat.completion"


def final_chunk_carries_text(w: Wire) -> None:
    """The last content delta is merged into the finish chunk."""
    if w.protocol != "chat" or not w.streamed:
        return
    chunks = w.payloads()
    texts = [c for c in chunks[1:-1] if isinstance(c["choices"][0]["delta"].get("content"), str)]
    if texts and chunks:
        last = texts[-1]
        chunks[-1]["choices"][0]["delta"]["content"] = last["choices"][0]["delta"]["content"]
        w.events = [e for e in w.events if e[1] is not last]


def system_fingerprint_missing(w: Wire) -> None:
    for chunk in w.payloads() if w.streamed else [w.body] if isinstance(w.body, dict) else []:
        if w.protocol == "chat":
            chunk.pop("system_fingerprint", None)


def item_status_wrong(w: Wire) -> None:
    if w.protocol == "responses" and w.streamed:
        for e in w.payloads():
            if e.get("type") == "response.output_item.done":
                e["item"]["status"] = "in_progress"


def text_done_missing(w: Wire) -> None:
    if w.protocol == "responses" and w.streamed:
        w.events = [e for e in w.events if e[0] not in ("response.output_text.done",)]
        for n, e in enumerate(w.payloads()):
            e["sequence_number"] = n


FAULTS: tuple[Fault, ...] = (
    # authentication
    Fault(
        "auth_not_checked",
        "the API key is not checked at all",
        request=auth_not_checked,
        cases=("auth.missing.", "auth.wrong."),
    ),
    Fault(
        "empty_key_accepted",
        "a header without a key passes",
        request=empty_key_accepted,
        cases=("auth.empty.", "auth.empty_x_api_key."),
    ),
    Fault(
        "x_api_key_ignored",
        "Messages ignores the Anthropic SDK's x-api-key",
        request=x_api_key_ignored,
        cases=("auth.x_api_key.",),
    ),
    Fault(
        "bearer_rejected_on_messages",
        "Messages accepts only x-api-key",
        request=bearer_rejected_on_messages,
        cases=("auth.bearer.messages",),
    ),
    Fault(
        "validation_before_auth",
        "an invalid request without a key gets 400, not 401",
        request=validation_before_auth,
        cases=("auth.before_validation.",),
    ),
    Fault(
        "auth_status_403",
        "403 instead of 401 for a bad key",
        auth_status_403,
        cases=("auth.wrong.", "auth.missing.chat"),
    ),
    Fault(
        "auth_body_not_official",
        "a 401 body that is not the official one",
        auth_body_not_official,
        cases=("auth.wrong.", "auth.missing."),
    ),
    # routes
    Fault(
        "models_list_wrong_shape",
        "GET /v1/models in another shape",
        models_list_wrong_shape,
        cases=("models.", "auth.bearer.models"),
    ),
    Fault(
        "models_list_missing_model",
        "the model under test not listed",
        models_list_missing_model,
        cases=("models.",),
    ),
    Fault(
        "routing_errors_as_text",
        "404/405 as a plain-text page",
        routing_errors_as_text,
        cases=("http_errors.unknown_path", "http_errors.wrong_method."),
    ),
    Fault(
        "malformed_json_500",
        "a body that is not JSON crashes the handler (500)",
        malformed_json_500,
        cases=("http_errors.malformed_json.",),
    ),
    # validation
    Fault(
        "bad_param_status_422",
        "HTTP 422 instead of 400 for a bad parameter",
        bad_param_status_422,
        cases=("validation.params.temperature.", "validation.params.n."),
    ),
    Fault(
        "error_body_not_openai_shape",
        'FastAPI-style {"detail": ...} error body',
        error_body_not_openai_shape,
        cases=("validation.params.temperature.", "validation.params.n."),
    ),
    Fault(
        "error_message_reworded",
        "error message differs from the official text",
        error_message_reworded,
        cases=("validation.params.temperature.", "validation.params.n."),
    ),
    Fault(
        "error_code_null",
        "error.code null instead of invalid_request_error",
        error_code_null,
        cases=("validation.params.temperature.",),
    ),
    Fault(
        "error_content_type_text",
        "errors served as text/plain",
        error_content_type_text,
        cases=("validation.params.temperature.",),
    ),
    Fault(
        "unknown_model_accepted",
        "a model name the host does not serve is accepted",
        request=unknown_model_accepted,
        cases=("validation.unknown_model.",),
    ),
    Fault(
        "validation_order_reversed",
        "two invalid parameters: the host reports the one the official order checks later",
        validation_order_reversed,
        cases=("validation.precedence.",),
    ),
    Fault(
        "invalid_params_accepted",
        "invalid parameters (n>1, temperature 3, ...) accepted",
        invalid_params_accepted,
        cases=("validation.params.temperature.", "validation.params.n."),
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
    # reasoning and content
    Fault(
        "drop_reasoning",
        "reasoning_content dropped (ai-dynamo/dynamo#10163)",
        drop_reasoning,
        cases=("thinking.default.", "passback.given."),
    ),
    Fault(
        "thinking_leaks_when_disabled",
        "reasoning returned although thinking is disabled",
        thinking_leaks_when_disabled,
        cases=("thinking.disabled.chat.",),
    ),
    Fault(
        "dsml_in_content",
        "DSML markup leaked into content (vllm#40800)",
        dsml_in_content,
        cases=("dsml.",),
    ),
    Fault(
        "think_tag_in_content",
        "</think> left in the content",
        think_tag_in_content,
        cases=("streaming.plain.", "thinking.default."),
    ),
    # tool calls
    Fault(
        "wrong_finish_reason",
        "finish reason mapped wrongly (tool_calls -> stop, LiteLLM-style)",
        wrong_finish_reason,
        cases=("tools.auto.", "max_tokens.messages."),
    ),
    Fault(
        "tool_calls_finish_stop",
        "tool calls end with stop / end_turn",
        tool_calls_finish_stop,
        cases=("tools.auto.chat.", "tools.auto.messages."),
    ),
    Fault(
        "arguments_wrapped",
        'arguments wrapped in {"arguments": ...} (sglang#38924)',
        arguments_wrapped,
        cases=("tools.named.",),
    ),
    Fault(
        "arguments_truncated",
        "unterminated argument JSON (vllm#53227)",
        arguments_truncated,
        cases=("tools.named.chat.", "tools.named.responses.", "tools.named.messages.stream"),
    ),
    Fault(
        "arguments_compact",
        "arguments re-serialised by the host",
        arguments_compact,
        cases=("tools.auto.",),
    ),
    Fault(
        "call_ids_not_official",
        "tool-call ids in another format",
        call_ids_not_official,
        cases=("tools.named.",),
    ),
    Fault(
        "named_tool_choice_ignored",
        "named tool_choice not enforced",
        named_tool_choice_ignored,
        cases=("tools.named.",),
    ),
    Fault(
        "tool_call_type_missing",
        'Chat tool calls without "type": "function"',
        tool_call_type_missing,
        cases=("tools.auto.chat.",),
    ),
    Fault(
        "tool_call_indexes_zero",
        "parallel streamed calls all with index 0",
        tool_call_indexes_zero,
        cases=("tools.parallel.chat.stream",),
        model=StandinModel("tool_happy"),
    ),
    Fault(
        "tool_called_despite_none",
        "tool_choice none ignored",
        tool_called_despite_none,
        cases=("tools.none.chat.body",),
    ),
    Fault(
        "content_null",
        "content null at the end of a plain answer",
        content_null,
        cases=("streaming.plain.", "usage.non_thinking.chat.body"),
    ),
    Fault(
        "tool_input_as_string",
        "Messages tool_use input as a JSON string",
        tool_input_as_string,
        cases=("tools.auto.messages.body",),
    ),
    # finish reasons and limits
    Fault(
        "length_reported_as_stop",
        "token limit reported as a normal stop",
        length_reported_as_stop,
        cases=("max_tokens.",),
    ),
    Fault(
        "stop_reported_as_length",
        "a natural end reported as length",
        stop_reported_as_length,
        cases=("max_tokens.", "auth.bearer."),
        model=StandinModel("short"),
    ),
    Fault(
        "max_tokens_ignored",
        "the request's token limit is not applied",
        cases=("max_tokens.",),
        quirks=Quirks(ignore_max_tokens=True),
    ),
    # stop sequences
    Fault(
        "stop_not_applied",
        "stop sequences ignored",
        cases=("stop.",),
        quirks=Quirks(ignore_stops=True),
    ),
    Fault(
        "stop_cuts_reasoning",
        "stop string applied inside reasoning (vllm#52393)",
        cases=("stop.cut_thinking.",),
        quirks=Quirks(stops_everywhere=True),
    ),
    Fault(
        "stop_sequence_not_reported",
        "a stop match reported as end_turn",
        stop_sequence_not_reported,
        cases=("stop.cut.messages",),
    ),
    Fault(
        "stop_sequence_misnamed",
        "stop_sequence names a string the request never sent",
        stop_sequence_misnamed,
        cases=("stop.cut.messages",),
    ),
    Fault(
        "stop_included_in_content",
        "the matched stop string left in the content",
        stop_included_in_content,
        cases=("stop.cut.messages", "stop.reasoning_kept.messages"),
    ),
    # JSON output
    Fault(
        "json_with_preamble",
        "JSON-mode output with prose around it",
        json_with_preamble,
        cases=("json_output.",),
    ),
    Fault(
        "json_schema_not_enforced",
        "json_schema output that does not fit the schema",
        json_schema_not_enforced,
        cases=("json_output.schema.",),
    ),
    # usage
    Fault(
        "stream_usage_missing",
        "usage missing from the stream",
        stream_usage_missing,
        cases=("streaming.plain.",),
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
        "cache_miss_ignores_hits",
        "prompt_cache_miss_tokens = prompt_tokens even on a cache hit",
        cache_miss_ignores_hits,
        cases=("cache.repeat.chat",),
    ),
    Fault(
        "messages_input_includes_hits",
        "Messages input_tokens counts the cached prefix too",
        messages_input_includes_hits,
        cases=("cache.repeat.messages",),
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
        cases=("streaming.plain.chat", "streaming.include_usage.chat"),
    ),
    Fault(
        "reasoning_tokens_missing",
        "no reasoning token count",
        reasoning_tokens_missing,
        cases=("usage.thinking.chat.", "usage.thinking.responses."),
    ),
    Fault(
        "reasoning_tokens_are_completion",
        "reasoning tokens = completion tokens",
        reasoning_tokens_are_completion,
        cases=("usage.thinking.chat.", "usage.thinking.responses."),
    ),
    Fault(
        "include_usage_ignored",
        '"usage": null missing from chunks with include_usage',
        include_usage_ignored,
        cases=("streaming.include_usage.chat",),
    ),
    Fault(
        "message_start_usage_missing",
        "message_start without usage",
        message_start_usage_missing,
        cases=("streaming.plain.messages",),
    ),
    # logprobs
    Fault(
        "logprobs_dropped",
        "requested logprobs not returned",
        logprobs_dropped,
        cases=("logprobs.",),
    ),
    Fault(
        "top_logprobs_exceeded",
        "more alternatives than top_logprobs",
        top_logprobs_exceeded,
        cases=("logprobs.",),
    ),
    # stream framing and shapes
    Fault(
        "no_done_sentinel",
        "Chat stream without data: [DONE]",
        no_done_sentinel,
        cases=("streaming.plain.chat", "streaming.tools.chat"),
    ),
    Fault(
        "done_sentinel_everywhere",
        "[DONE] appended to Responses/Messages streams",
        done_sentinel_everywhere,
        cases=("streaming.plain.responses", "streaming.plain.messages"),
    ),
    Fault(
        "role_chunk_missing",
        "stream does not open with the role / start event",
        role_chunk_missing,
        cases=("streaming.plain.",),
    ),
    Fault(
        "content_after_finish",
        "a chunk after the finish chunk",
        content_after_finish,
        cases=("streaming.plain.",),
    ),
    Fault(
        "sequence_number_gap",
        "Responses sequence_number with a gap",
        sequence_number_gap,
        cases=("streaming.plain.responses", "streaming.tools.responses"),
    ),
    Fault(
        "event_names_wrong",
        "SSE event: names not equal to the data type",
        event_names_wrong,
        cases=("streaming.plain.responses", "streaming.plain.messages"),
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
        cases=("streaming.plain.responses", "streaming.plain.messages"),
    ),
    Fault(
        "stream_as_json_content_type",
        "stream served as application/json",
        stream_as_json_content_type,
        cases=("streaming.plain.",),
    ),
    Fault(
        "event_json_truncated",
        "an event whose JSON is cut short",
        event_json_truncated,
        cases=("streaming.plain.",),
    ),
    Fault(
        "ping_missing",
        "Messages stream without ping",
        ping_missing,
        cases=("streaming.plain.messages",),
    ),
    Fault(
        "signature_missing",
        "thinking blocks without a signature",
        signature_missing,
        cases=("streaming.thinking.messages", "thinking.default.messages."),
    ),
    Fault(
        "chunk_object_wrong",
        'Chat chunks with object "chat.completion"',
        chunk_object_wrong,
        cases=("streaming.plain.chat",),
    ),
    Fault(
        "final_chunk_carries_text",
        "the last text merged into the finish chunk",
        final_chunk_carries_text,
        cases=("streaming.plain.chat",),
    ),
    Fault(
        "system_fingerprint_missing",
        "no system_fingerprint key",
        system_fingerprint_missing,
        cases=("streaming.plain.chat", "usage.non_thinking.chat."),
    ),
    Fault(
        "item_status_wrong",
        "Responses items done while in_progress",
        item_status_wrong,
        cases=("streaming.plain.responses",),
    ),
    Fault(
        "text_done_missing",
        "Responses output_text.done never sent",
        text_done_missing,
        cases=("streaming.plain.responses",),
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
"""Transport variations a conforming host may apply; they must produce no finding."""

OTHER_MODELS: tuple[StandinModel, ...] = tuple(StandinModel(style) for style in STYLES)
"""Conforming hosts whose model is not DeepSeek's (shorter answers, no tool calls, other
wording, tool calls everywhere): the suite must raise nothing against them."""
