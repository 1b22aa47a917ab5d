"""Protocol-neutral views of a response (text, tool calls, finish, usage) from a body or a stream.

Checks work on these views so that one rule ("arguments are valid JSON") covers all three
protocols and both delivery modes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from deepseek_recipe_conformance.sse import SseStream


@dataclass
class ToolCall:
    """A tool call as the client sees it; `arguments` is the JSON text of the input
    (`{"input": ...}` for a Responses custom tool call, marked `custom`); `namespace` is the
    Responses namespace of a namespaced function."""

    id: str | None
    name: str | None
    arguments: str
    custom: bool = False
    namespace: str | None = None


@dataclass
class Usage:
    """Token counts mapped onto Chat Completions names (None = the host did not report it)."""

    prompt: int | None = None
    completion: int | None = None
    total: int | None = None
    cache_hit: int | None = None
    cache_miss: int | None = None
    cached: int | None = None
    reasoning: int | None = None


@dataclass
class Output:
    """The client-visible result of one exchange.

    `reasoning_pieces` / `content_pieces` are the text deltas in arrival order (one piece per
    text part of a body), without the role chunk and the final chunk; `stop_sequence` and
    `stop_reason` (unmapped) and
    `signatures` (one per thinking block, None when absent) are Messages-only; `response_id`,
    `created` and `fingerprint` identify the answer (Chat `created`, Responses `created_at`).
    """

    reasoning: str | None = None
    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish: str | None = None
    usage: Usage | None = None
    logprobs: list[Any] | None = None
    reasoning_pieces: list[str] = field(default_factory=list)
    content_pieces: list[str] = field(default_factory=list)
    stop_sequence: str | None = None
    stop_reason: str | None = None
    signatures: list[Any] = field(default_factory=list)
    response_id: str | None = None
    created: int | None = None
    fingerprint: str | None = None

    @property
    def texts(self) -> list[tuple[str, str]]:
        """Every visible text with its location, for markup-leak scans."""
        found = [("reasoning", self.reasoning or ""), ("content", self.content or "")]
        found += [
            (f"tool_calls[{i}].arguments", c.arguments) for i, c in enumerate(self.tool_calls)
        ]
        return found


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _append(current: str | None, piece: Any) -> str | None:
    if not isinstance(piece, str):
        return current
    return (current or "") + piece


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# ---------------------------------------------------------------- usage


def chat_usage(raw: Any) -> Usage | None:
    """Usage of a Chat Completions body or chunk."""
    if not isinstance(raw, dict):
        return None
    return Usage(
        prompt=_int(raw.get("prompt_tokens")),
        completion=_int(raw.get("completion_tokens")),
        total=_int(raw.get("total_tokens")),
        cache_hit=_int(raw.get("prompt_cache_hit_tokens")),
        cache_miss=_int(raw.get("prompt_cache_miss_tokens")),
        cached=_int(_dict(raw.get("prompt_tokens_details")).get("cached_tokens")),
        reasoning=_int(_dict(raw.get("completion_tokens_details")).get("reasoning_tokens")),
    )


def responses_usage(raw: Any) -> Usage | None:
    """Usage of a Responses object; the cached count doubles as the cache-hit count."""
    if not isinstance(raw, dict):
        return None
    prompt = _int(raw.get("input_tokens"))
    cached = _int(_dict(raw.get("input_tokens_details")).get("cached_tokens"))
    miss = prompt - cached if prompt is not None and cached is not None else None
    return Usage(
        prompt=prompt,
        completion=_int(raw.get("output_tokens")),
        total=_int(raw.get("total_tokens")),
        cache_hit=cached,
        cache_miss=miss,
        cached=cached,
        reasoning=_int(_dict(raw.get("output_tokens_details")).get("reasoning_tokens")),
    )


def messages_usage(raw: Any) -> Usage | None:
    """Usage of a Messages body: `input_tokens` is the miss, `cache_read_input_tokens` the hit."""
    if not isinstance(raw, dict):
        return None
    miss = _int(raw.get("input_tokens"))
    hit = _int(raw.get("cache_read_input_tokens"))
    prompt = miss + hit if miss is not None and hit is not None else None
    completion = _int(raw.get("output_tokens"))
    total = prompt + completion if prompt is not None and completion is not None else None
    return Usage(prompt, completion, total, hit, miss, hit, None)


# ---------------------------------------------------------------- non-streaming bodies


def _chat_body(body: dict[str, Any]) -> Output:
    out = Output(
        usage=chat_usage(body.get("usage")),
        response_id=_text(body.get("id")),
        created=_int(body.get("created")),
        fingerprint=_text(body.get("system_fingerprint")),
    )
    choices = _list(body.get("choices"))
    if not choices:
        return out
    choice = _dict(choices[0])
    message = _dict(choice.get("message"))
    out.reasoning = message.get("reasoning_content")
    out.content = message.get("content")
    out.reasoning_pieces = [t for t in [_text(out.reasoning)] if t]
    out.content_pieces = [t for t in [_text(out.content)] if t]
    out.finish = choice.get("finish_reason")
    for call in _list(message.get("tool_calls")):
        function = _dict(_dict(call).get("function"))
        arguments = function.get("arguments")
        out.tool_calls.append(
            ToolCall(_dict(call).get("id"), function.get("name"), _as_text(arguments))
        )
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, dict):
        out.logprobs = _list(logprobs.get("content"))
    return out


def _as_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def responses_finish(response: dict[str, Any], has_calls: bool) -> str | None:
    """Map a Responses status onto a Chat finish reason."""
    status = response.get("status")
    if status == "completed":
        return "tool_calls" if has_calls else "stop"
    if status == "incomplete":
        reason = _dict(response.get("incomplete_details")).get("reason")
        return {"max_output_tokens": "length", "content_filter": "content_filter"}.get(
            str(reason), f"incomplete:{reason}"
        )
    return None if status is None else str(status)


def _responses_body(body: dict[str, Any]) -> Output:
    out = Output(
        usage=responses_usage(body.get("usage")),
        response_id=_text(body.get("id")),
        created=_int(body.get("created_at")),
    )
    for item in _list(body.get("output")):
        item = _dict(item)
        kind = item.get("type")
        if kind == "reasoning":
            for part in _list(item.get("content")):
                out.reasoning = _append(out.reasoning, _dict(part).get("text"))
                out.reasoning_pieces += [
                    t for t in [_text(_dict(part).get("text"))] if t is not None
                ]
        elif kind == "message":
            for part in _list(item.get("content")):
                part = _dict(part)
                out.content = _append(out.content, part.get("text"))
                out.content_pieces += [t for t in [_text(part.get("text"))] if t is not None]
                if "logprobs" in part:
                    out.logprobs = (out.logprobs or []) + _list(part.get("logprobs"))
        elif kind == "function_call":
            arguments = _as_text(item.get("arguments"))
            namespace = _text(item.get("namespace"))
            call = ToolCall(item.get("call_id"), item.get("name"), arguments, namespace=namespace)
            out.tool_calls.append(call)
        elif kind == "custom_tool_call":
            arguments = json.dumps({"input": item.get("input")}, ensure_ascii=False)
            out.tool_calls.append(
                ToolCall(item.get("call_id"), item.get("name"), arguments, custom=True)
            )
    out.finish = responses_finish(body, bool(out.tool_calls))
    return out


MESSAGES_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}
"""Messages stop reasons mapped onto Chat finish reasons."""


def _messages_body(body: dict[str, Any]) -> Output:
    out = Output(usage=messages_usage(body.get("usage")), response_id=_text(body.get("id")))
    out.stop_sequence = _text(body.get("stop_sequence"))
    for block in _list(body.get("content")):
        block = _dict(block)
        kind = block.get("type")
        if kind == "thinking":
            out.reasoning = _append(out.reasoning, block.get("thinking"))
            out.reasoning_pieces += [t for t in [_text(block.get("thinking"))] if t]
            out.signatures.append(block.get("signature"))
        elif kind == "text":
            out.content = _append(out.content, block.get("text"))
            out.content_pieces += [t for t in [_text(block.get("text"))] if t is not None]
        elif kind == "tool_use":
            arguments = json.dumps(block.get("input"), ensure_ascii=False)
            out.tool_calls.append(ToolCall(block.get("id"), block.get("name"), arguments))
    reason = body.get("stop_reason")
    out.stop_reason = _text(reason)
    out.finish = MESSAGES_FINISH.get(str(reason), None if reason is None else str(reason))
    return out


def output_from_body(protocol: str, body: Any) -> Output:
    """View of a non-streaming response body."""
    if not isinstance(body, dict):
        return Output()
    if protocol == "chat":
        return _chat_body(body)
    if protocol == "responses":
        return _responses_body(body)
    return _messages_body(body)


# ---------------------------------------------------------------- streams


def _chat_stream(payloads: list[Any]) -> Output:
    out = Output()
    calls: dict[int, ToolCall] = {}
    for chunk in payloads:
        chunk = _dict(chunk)
        if out.response_id is None:
            out.response_id = _text(chunk.get("id"))
            out.created = _int(chunk.get("created"))
            out.fingerprint = _text(chunk.get("system_fingerprint"))
        if chunk.get("usage") is not None:
            out.usage = chat_usage(chunk.get("usage"))
        for choice in _list(chunk.get("choices")):
            choice = _dict(choice)
            delta = _dict(choice.get("delta"))
            out.reasoning = _append(out.reasoning, delta.get("reasoning_content"))
            out.content = _append(out.content, delta.get("content"))
            if "role" not in delta and choice.get("finish_reason") is None:
                out.reasoning_pieces += [
                    t for t in [_text(delta.get("reasoning_content"))] if t is not None
                ]
                out.content_pieces += [t for t in [_text(delta.get("content"))] if t is not None]
            for call in _list(delta.get("tool_calls")):
                call = _dict(call)
                index = _int(call.get("index"))
                index = len(calls) if index is None else index
                function = _dict(call.get("function"))
                current = calls.setdefault(index, ToolCall(None, None, ""))
                if isinstance(call.get("id"), str):
                    current.id = call["id"]
                if isinstance(function.get("name"), str):
                    current.name = (current.name or "") + function["name"]
                if isinstance(function.get("arguments"), str):
                    current.arguments += function["arguments"]
            logprobs = choice.get("logprobs")
            if isinstance(logprobs, dict) and isinstance(logprobs.get("content"), list):
                out.logprobs = (out.logprobs or []) + logprobs["content"]
            if choice.get("finish_reason") is not None:
                out.finish = choice["finish_reason"]
    out.tool_calls = [calls[i] for i in sorted(calls)]
    return out


def _responses_stream(payloads: list[Any]) -> Output:
    out = Output()
    calls: dict[int, ToolCall] = {}
    terminal: dict[str, Any] | None = None
    for event in payloads:
        event = _dict(event)
        kind = event.get("type")
        index = _int(event.get("output_index"))
        response = _dict(event.get("response"))
        if out.response_id is None and response:
            out.response_id = _text(response.get("id"))
            out.created = _int(response.get("created_at"))
        if kind == "response.reasoning_text.delta":
            out.reasoning = _append(out.reasoning, event.get("delta"))
            out.reasoning_pieces += [t for t in [_text(event.get("delta"))] if t is not None]
        elif kind == "response.output_text.delta":
            out.content = _append(out.content, event.get("delta"))
            out.content_pieces += [t for t in [_text(event.get("delta"))] if t is not None]
            if isinstance(event.get("logprobs"), list):
                out.logprobs = (out.logprobs or []) + event["logprobs"]
        elif kind == "response.output_item.added" and index is not None:
            item = _dict(event.get("item"))
            if item.get("type") in ("function_call", "custom_tool_call"):
                namespace = _text(item.get("namespace"))
                calls[index] = ToolCall(
                    item.get("call_id"), item.get("name"), "", namespace=namespace
                )
        elif kind == "response.function_call_arguments.delta" and index in calls:
            calls[index].arguments += str(event.get("delta", ""))
        elif kind == "response.custom_tool_call_input.delta" and index in calls:
            calls[index].arguments += str(event.get("delta", ""))
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            terminal = _dict(event.get("response"))
    out.tool_calls = [calls[i] for i in sorted(calls)]
    for index in sorted(calls):
        call = calls[index]
        if _is_custom(payloads, index):
            call.arguments = json.dumps({"input": call.arguments}, ensure_ascii=False)
            call.custom = True
    if terminal is not None:
        out.usage = responses_usage(terminal.get("usage"))
        out.finish = responses_finish(terminal, bool(out.tool_calls))
    return out


def _is_custom(payloads: list[Any], index: int) -> bool:
    for event in payloads:
        event = _dict(event)
        if event.get("type") == "response.output_item.added" and event.get("output_index") == index:
            return _dict(event.get("item")).get("type") == "custom_tool_call"
    return False


def _messages_stream(payloads: list[Any]) -> Output:
    out = Output()
    blocks: dict[int, dict[str, Any]] = {}
    usage: dict[str, Any] = {}
    for event in payloads:
        event = _dict(event)
        kind = event.get("type")
        if kind == "message_start":
            message = _dict(event.get("message"))
            out.response_id = _text(message.get("id"))
            usage.update(_dict(message.get("usage")))
        elif kind == "content_block_start":
            index = _int(event.get("index"))
            if index is not None:
                blocks[index] = {**_dict(event.get("content_block")), "partial_json": ""}
        elif kind == "content_block_delta":
            block = blocks.get(_int(event.get("index")) or 0)
            delta = _dict(event.get("delta"))
            if block is None:
                continue
            if delta.get("type") == "thinking_delta":
                block["thinking"] = (block.get("thinking") or "") + str(delta.get("thinking", ""))
                out.reasoning_pieces.append(str(delta.get("thinking", "")))
            elif delta.get("type") == "text_delta":
                block["text"] = (block.get("text") or "") + str(delta.get("text", ""))
                out.content_pieces.append(str(delta.get("text", "")))
            elif delta.get("type") == "input_json_delta":
                block["partial_json"] += str(delta.get("partial_json", ""))
            elif delta.get("type") == "signature_delta":
                block["signature"] = delta.get("signature")
        elif kind == "message_delta":
            delta = _dict(event.get("delta"))
            reason = delta.get("stop_reason")
            out.stop_reason = _text(reason)
            out.finish = MESSAGES_FINISH.get(str(reason), None if reason is None else str(reason))
            out.stop_sequence = _text(delta.get("stop_sequence"))
            usage.update(_dict(event.get("usage")))
    for index in sorted(blocks):
        block = blocks[index]
        if block.get("type") == "thinking":
            out.reasoning = _append(out.reasoning, block.get("thinking") or "")
            out.signatures.append(block.get("signature"))
        elif block.get("type") == "text":
            out.content = _append(out.content, block.get("text") or "")
        elif block.get("type") == "tool_use":
            arguments = block["partial_json"] or "{}"
            out.tool_calls.append(ToolCall(block.get("id"), block.get("name"), arguments))
    out.usage = messages_usage(usage) if usage else None
    return out


def output_from_stream(protocol: str, stream: SseStream) -> Output:
    """View of a streamed response, accumulated from its events."""
    payloads = stream.payloads()
    if protocol == "chat":
        return _chat_stream(payloads)
    if protocol == "responses":
        return _responses_stream(payloads)
    return _messages_stream(payloads)
