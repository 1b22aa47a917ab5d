"""What a conforming host must have sent for the output it produced, re-derived with the recipe.

A host built on the recipe turns its model's text into protocol chunks with the recipe's stream
processor. The client sees that text again (reasoning, content, tool-call arguments), so the
suite can rebuild a model output that yields it, feed it through the same processor with the
host's ids, timestamps and prompt usage, and compare the host's answer with the result: every
key, value and event the host sends is then judged against the recipe, whatever the model said.
Where what the client sees fits more than one model output (a raw argument value that is not
JSON, a call that may or may not have been cut by the token limit), each is tried.

What the host may choose is kept out of the comparison (`normalize`): random tool-call id
characters, `completed_at`, completion-token counts (checked by the usage checks), log
probabilities (checked by `logprobs.shape`), and the granularity of text deltas (consecutive
deltas of one kind are joined).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from deepseek_recipe import ConvertedRequest
from deepseek_recipe.requests import ParsingOptions
from deepseek_recipe.stream import StreamProcessor
from deepseek_recipe_conformance.views import Output, ToolCall

DSML = "｜DSML｜"
CALL_ID = re.compile(r"^call_(\d{2,})_(ET_)?[A-Za-z0-9]{20}[0-9]{4}$")
COUNT_KEYS = frozenset({"completion_tokens", "output_tokens", "total_tokens"})
"""Usage values that depend on how many tokens the model generated, not on its text."""
FINISH_CHUNKS = {"stop": "stop", "tool_calls": "stop", "length": "length"}
FINISH_CHUNKS["content_filter"] = "content_filter"


class NotReplayable(Exception):
    """The answer cannot be re-derived (no finish reason, a custom tool call, ...)."""


class NotRecipeOutput(NotReplayable):
    """The answer holds what the recipe never sends (arguments outside its form, text next to a
    forced tool call, tool calls the request disables)."""


@dataclass(frozen=True)
class Expected:
    """The recipe's answer for the host's output: SSE records for streams, else the body."""

    events: list[tuple[str | None, Any]]
    body: Any


# ------------------------------------------------------------------ arguments → DSML


@dataclass(frozen=True)
class _Reading:
    """One way the recipe can have written a call's argument text: raw (key, value) pairs and,
    when the call was cut, the DSML of the parameter it was cut in (None: the call is closed)."""

    pairs: tuple[tuple[str, str], ...]
    cut: str | None


def _key_at(text: str, at: int) -> tuple[str, int] | None:
    """The key of argument text that starts at `at` (it runs to the next space and ends in `:`)
    and where its value starts; None when the text ends inside it."""
    space = text.find(" ", at)
    if space < 0:
        return None
    if text[space - 1] != ":" or space - 1 <= at:
        raise NotRecipeOutput(f"a key followed by ': ' in {text[:80]!r}")
    return text[at : space - 1], space + 1


def _readings(text: str) -> list[_Reading]:
    """Every reading of argument text, preferred first.

    Values are written verbatim (`string="false"`), so the text after the first key can always
    be one raw value: closed by the final `}`, or cut by the token limit. The values read one by
    one as JSON come first when they fit."""
    if text == "":
        return [_Reading((), "")]  # cut before the first parameter
    if not text.startswith("{"):
        raise NotRecipeOutput(f"arguments that start with '{{': {text[:60]!r}")
    if text == "{}":  # Messages shows a call cut before its first parameter as `{}` too
        return [_Reading((), None), _Reading((), "")]
    first = _key_at(text, 1)
    if first is None:  # cut inside the first key
        return [_Reading((), f"<{DSML}parameter name={text[1:]}")]
    key, at = first
    structured = _json_reading(text)
    raw = [_Reading(((key, text[at:-1]),), None)] if text.endswith("}") else []
    raw.append(_Reading((), f'<{DSML}parameter name={key} string="false">{text[at:]}'))
    return ([structured] if structured else []) + [r for r in raw if r != structured]


def _json_reading(text: str) -> _Reading | None:
    """The reading with every value a JSON value followed by `, ` or the final `}` (or cut
    inside or right after the last one); None when a value is not."""
    pairs: list[tuple[str, str]] = []
    at = 1
    decoder = json.JSONDecoder()
    while True:
        try:
            found = _key_at(text, at)
        except NotRecipeOutput:
            return None
        if found is None:  # cut inside a key
            return _Reading(tuple(pairs), f"<{DSML}parameter name={text[at:]}")
        key, at = found
        value_end = _value_end(text, at, decoder)
        if value_end is None:
            return None
        if value_end == len(text):  # cut right after the value
            return _Reading(tuple(pairs), f'<{DSML}parameter name={key} string="false">{text[at:]}')
        pairs.append((key, text[at:value_end]))
        at = value_end
        if text[at:] == "}":
            return _Reading(tuple(pairs), None)
        if not text.startswith(", ", at):
            return None
        at += 2


def _value_end(text: str, start: int, decoder: json.JSONDecoder) -> int | None:
    """End of the JSON value (with surrounding whitespace) starting at `start`; None when the
    text there is not one."""
    at = start
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    try:
        _, at = decoder.raw_decode(text, at)
    except ValueError:
        return None
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _call_name(call: ToolCall) -> str:
    """The function name the model wrote for `call` (namespaces flattened)."""
    name = call.name or ""
    if call.namespace is not None:
        name = f"{call.namespace}__{name}"  # the function name the namespace flattens to
    if call.custom:
        raise NotReplayable("a custom tool call (its input is raw text)")
    if '"' in name:
        raise NotReplayable(f"a tool name without quotes: {name!r}")
    return name


def _invoke(name: str, reading: _Reading) -> str:
    """DSML text of one call whose arguments the recipe writes as `reading` says (values raw,
    `string="false"`)."""
    text = f'<{DSML}invoke name="{name}">\n'
    for key, value in reading.pairs:
        text += f'<{DSML}parameter name={key} string="false">{value}</{DSML}parameter>\n'
    if reading.cut is not None:
        return text + reading.cut
    return text + f"</{DSML}invoke>\n"


def _tool_blocks(calls: list[ToolCall], opener: bool) -> list[list[str]]:
    """The tool-call block's pieces, one list per reading of the last call (every call before
    it is closed)."""
    pieces = [f"<{DSML}tool_calls>\n"] if opener else []
    if not calls:
        return [[*pieces, f"</{DSML}tool_calls>"]]
    for index, call in enumerate(calls[:-1]):
        closed = [r for r in _readings(call.arguments) if r.cut is None]
        if not closed:
            raise NotRecipeOutput(f"tool call {index} is not closed but another follows it")
        pieces.append(_invoke(_call_name(call), closed[0]))
    name = _call_name(calls[-1])
    blocks = []
    for reading in _readings(calls[-1].arguments):
        block = [*pieces, _invoke(name, reading)]
        blocks.append(block if reading.cut is not None else [*block, f"</{DSML}tool_calls>"])
    return blocks


# ------------------------------------------------------------------ the model output


def _finish_chunk(output: Output) -> str:
    if output.finish is None:
        raise NotReplayable("no finish reason")
    if output.finish.startswith("incomplete:") or output.finish not in FINISH_CHUNKS:
        raise NotReplayable(f"a finish reason the recipe produces, not {output.finish!r}")
    return FINISH_CHUNKS[output.finish]


def model_pieces(converted: ConvertedRequest, output: Output, stream: bool) -> list[list[str]]:
    """Model text pieces that the recipe turns into `output` (`stream`: its pieces are the
    host's deltas, else one per text part of the body): one list per way the recipe can have
    read them (the last tool call's arguments, see `_readings`; a tool-call block right after
    the reasoning opened with or without `</think>`; markup inside a stop sequence the content
    holds), preferred first."""
    parsing = converted.parsing_options
    stage = parsing.get("thinking_initial_stage")
    in_reasoning = stage in ("ReasoningStart", "ReasoningContinuation")
    if parsing.get("starts_in_tool_calls"):
        if output.reasoning_pieces or any(output.content_pieces):
            raise NotRecipeOutput("text outside the forced tool-call block")
        return _tool_blocks(output.tool_calls, opener=False)
    reasoning = list(output.reasoning_pieces) if in_reasoning else []
    content = _content_pieces(converted.protocol, output, stream, parsing)
    contents = [content]
    if not parsing.get("parse_json_output"):
        broken = _stops_broken(content, parsing)
        contents += [broken] if broken is not None else []
    return [
        reading
        for pieces in contents
        for reading in _around_content(reasoning, pieces, output, parsing, in_reasoning)
    ]


def _around_content(
    reasoning: list[str],
    content: list[str],
    output: Output,
    parsing: ParsingOptions,
    in_reasoning: bool,
) -> list[list[str]]:
    """The readings of an output with this reasoning and content (`model_pieces`)."""
    pieces = list(reasoning)
    if (content or output.stop_sequence is not None) and in_reasoning:
        pieces.append("</think>")
    if ("".join(content) + (output.stop_sequence or "")).startswith("\n"):
        pieces.append(_delimiter(parsing))  # the host's text kept its leading newlines
    pieces += content
    if output.stop_sequence is not None:
        pieces.append(output.stop_sequence)
    if not output.tool_calls:
        return [pieces]
    if not parsing.get("parse_tool_calls"):
        raise NotRecipeOutput("tool calls although the request disables them")
    if content[-1:] and content[-1].endswith("\n"):
        pieces.append(_delimiter(parsing))  # newlines the host kept before the block
    heads = [pieces]
    if in_reasoning and not content and output.stop_sequence is None:
        heads.append([*pieces, "</think>"])  # the block opened in the reasoning, or after it
    blocks = _tool_blocks(output.tool_calls, opener=True)
    return [head + block for head in heads for block in blocks]


def _stops_broken(content: list[str], parsing: ParsingOptions) -> list[str] | None:
    """The content with `</think>` after the first character of each stop sequence it holds
    (stops match the model's text, where such markup kept them from firing); None when it holds
    none."""
    stops = [stop for stop in parsing.get("stop_sequences") or [] if len(stop) > 1]
    text = "".join(content)
    if not any(stop in text for stop in stops):
        return None
    delimiter, out, at = _delimiter(parsing), "", 0
    while hits := [(text.find(stop, at), stop) for stop in stops if stop in text[at:]]:
        where = min(hits)[0]
        out, at = out + text[at : where + 1] + delimiter, where + 1
    return [out + text[at:]]


def _content_pieces(
    protocol: str, output: Output, stream: bool, parsing: ParsingOptions
) -> list[str]:
    """The content as pieces: the host's deltas, or for a body its text, with JSON mode's
    one-space pieces (each stands for a piece of text before the JSON) split apart again."""
    content = list(output.content_pieces)
    if not content and output.content is not None and protocol == "messages":
        return [""]  # a text block without deltas
    if not parsing.get("parse_json_output"):
        return content
    if not stream and content:
        rest = content[0].lstrip(" ")
        content = [" "] * (len(content[0]) - len(rest)) + ([rest] if rest else [])
    out: list[str] = []
    for i, piece in enumerate(content):
        if piece != " ":  # the JSON starts: bare from a bracket, else it came from a fence
            if not piece.startswith(("{", "[")):
                out.append("```json\n")
            return out + content[i:]
        out.append(piece)
    return out


def _delimiter(parsing: ParsingOptions) -> str:
    """`</think>` inside content: removed by the parser, it separates the text around it
    without touching newlines (a stop sequence inside it would fire, so none may be)."""
    if any(stop in "</think>" for stop in parsing.get("stop_sequences") or []):
        raise NotReplayable("a stop sequence inside '</think>'")
    return "</think>"


def expected_answers(
    converted: ConvertedRequest,
    output: Output,
    stream: bool,
    prompt_usage: tuple[int, int],
) -> list[Expected]:
    """The recipe's answers to `output`, one per model output that may have produced it
    (`model_pieces`), preferred first: the same ids, timestamps, fingerprint and prompt usage.

    Raises `NotReplayable` when the output is not something the recipe can produce at all.
    """
    finish = _finish_chunk(output)
    signature = next((s for s in output.signatures if isinstance(s, str) and s), None)
    prompt, hit = prompt_usage
    ready = {
        "kind": "ready",
        "prompt_tokens": prompt,
        "prompt_cache_hit_tokens": hit,
        "system_fingerprint": output.fingerprint,
    }
    return [
        recipe_answer(
            StreamProcessor(
                converted,
                response_id=output.response_id,
                created=output.created,
                signature=signature,
            ),
            ready,
            pieces,
            finish,
        )
        for pieces in model_pieces(converted, output, stream)
    ]


def recipe_answer(
    processor: StreamProcessor,
    ready: dict[str, Any],
    pieces: list[str],
    finish: str,
    token_count: int = 0,
) -> Expected:
    """What `processor` sends for a model output: the `ready` record, the text `pieces` (each
    counted as `token_count` tokens) until it finishes, then `finish` if it has not."""
    events = processor.push_records(ready)
    for piece in pieces:
        if processor.finished:
            break
        events += processor.push_records(
            {"kind": "text", "content": piece, "token_count": token_count}
        )
    if not processor.finished:
        events += processor.push_records({"kind": "finish", "finish_reason": finish})
    events += processor.finish_records()
    return Expected(
        events=[(name, json.loads(data)) for name, data in events],
        body=json.loads(processor.response_json()),
    )


# ------------------------------------------------------------------ comparison


def normalize(value: Any, exact_reasoning_tokens: bool = True) -> Any:
    """A copy without what the host legitimately chooses (see the module docs)."""
    if isinstance(value, list | tuple):
        return [normalize(v, exact_reasoning_tokens) for v in value]
    if isinstance(value, str):
        match = CALL_ID.match(value)
        return f"call_{match.group(1)}_{match.group(2) or ''}<random>" if match else value
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in COUNT_KEYS and isinstance(item, int):
            out[key] = "<count>"
        elif key == "completed_at" and isinstance(item, int):
            out[key] = "<time>"
        elif key == "logprobs":
            out[key] = [] if isinstance(item, list) else None
        elif key == "reasoning_tokens" and not exact_reasoning_tokens and isinstance(item, int):
            out[key] = "<count>"
        else:
            out[key] = normalize(item, exact_reasoning_tokens)
    return out


TEXT_DELTAS = {
    "response.reasoning_text.delta",
    "response.output_text.delta",
    "response.function_call_arguments.delta",
    "response.custom_tool_call_input.delta",
}


def _joinable(protocol: str, previous: Any, current: Any) -> str | None:
    """The text key under which `current` continues `previous` (None: not a continuation)."""
    if not isinstance(previous, dict) or not isinstance(current, dict):
        return None
    if protocol == "chat":
        return _chat_joinable(previous, current)
    if protocol == "responses":
        same = all(previous.get(k) == current.get(k) for k in ("type", "item_id", "output_index"))
        return "delta" if same and current.get("type") in TEXT_DELTAS else None
    if (
        previous.get("type") != "content_block_delta"
        or current.get("type") != "content_block_delta"
    ):
        return None
    before, after = previous.get("delta") or {}, current.get("delta") or {}
    if previous.get("index") != current.get("index") or before.get("type") != after.get("type"):
        return None
    return {
        "thinking_delta": "thinking",
        "text_delta": "text",
        "input_json_delta": "partial_json",
    }.get(str(after.get("type")))


def _chat_text_key(chunk: dict[str, Any]) -> str | None:
    choices = chunk.get("choices")
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], dict):
        return None
    choice = choices[0]
    delta = choice.get("delta")
    if choice.get("finish_reason") is not None or not isinstance(delta, dict) or "role" in delta:
        return None
    calls = delta.get("tool_calls")
    if isinstance(calls, list):
        if len(calls) == 1 and set(calls[0]) == {"index", "function"}:
            function = calls[0]["function"]
            if isinstance(function, dict) and set(function) == {"arguments"}:
                return f"arguments:{calls[0]['index']}"
        return None
    texts = [k for k in ("content", "reasoning_content") if isinstance(delta.get(k), str)]
    return texts[0] if len(texts) == 1 else None


def _chat_joinable(previous: dict[str, Any], current: dict[str, Any]) -> str | None:
    key = _chat_text_key(current)
    if key is None or key != _chat_text_key(previous):
        return None
    rest = [{k: v for k, v in c.items() if k != "choices"} for c in (previous, current)]
    return key if rest[0] == rest[1] else None


def _append_text(protocol: str, key: str, target: Any, source: Any) -> None:
    if protocol == "chat":
        if key.startswith("arguments:"):
            function = target["choices"][0]["delta"]["tool_calls"][0]["function"]
            function["arguments"] += source["choices"][0]["delta"]["tool_calls"][0]["function"][
                "arguments"
            ]
        else:
            target["choices"][0]["delta"][key] += source["choices"][0]["delta"][key]
    elif protocol == "responses":
        target["delta"] = str(target.get("delta", "")) + str(source.get("delta", ""))
    else:
        target["delta"][key] = str(target["delta"].get(key, "")) + str(source["delta"].get(key, ""))


def coalesce(protocol: str, events: list[tuple[str | None, Any]]) -> list[tuple[str | None, Any]]:
    """Join consecutive text deltas of one kind (and renumber Responses `sequence_number`)."""
    out: list[tuple[str | None, Any]] = []
    for name, data in events:
        data = json.loads(json.dumps(data))
        key = _joinable(protocol, out[-1][1], data) if out and out[-1][0] == name else None
        if key is not None:
            _append_text(protocol, key, out[-1][1], data)
        else:
            out.append((name, data))
    if protocol == "responses":
        for number, (_, data) in enumerate(out):
            if isinstance(data, dict) and "sequence_number" in data:
                data["sequence_number"] = number
    return out


def first_difference(expected: Any, got: Any, path: str = "$") -> tuple[str, Any, Any] | None:
    """The first place where two JSON values differ: (path, expected, got)."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in expected:
            if key not in got:
                return f"{path}.{key}", expected[key], "(absent)"
            found = first_difference(expected[key], got[key], f"{path}.{key}")
            if found:
                return found
        extra = [k for k in got if k not in expected]
        return (f"{path}.{extra[0]}", "(absent)", got[extra[0]]) if extra else None
    if isinstance(expected, list) and isinstance(got, list):
        for i, (a, b) in enumerate(zip(expected, got, strict=False)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        if len(expected) != len(got):
            return f"{path} length", len(expected), len(got)
        return None
    same = expected == got and type(expected) is type(got)
    return None if same else (path, expected, got)
