"""Records the stop-sequence stream regressions with the published deepseek-recipe 0.2.0.

Run by the peer environment's interpreter, isolated and from outside the repository, so that
`deepseek_recipe` is the published wheel (same import name as this project's package):

    cd /tmp && /path/to/repo/bench/.peer-venv/bin/python -I \\
        /path/to/repo/tests/differential/regressions/record_stop_regressions.py TOKENIZER_JSON

(`TOKENIZER_JSON`: the V4 `tokenizer.json`, e.g. `shared/tokenizers/deepseek-v4/tokenizer.json`.)

Writes one record per case to `streams/<id>.json` next to this file, in the layout of the golden
stream vectors (`shared/vectors/README.md` § Stream vectors) and following their harness
procedure, normalisation included. The cases pin what issue #15 item 6 found by driving the
reference: stop sequences of any length match, fed one character or one hundred at a time, with
the text that may start one held as whole pieces until it matches or cannot; stops are off around
a JSON document; content's stripped leading newlines are seen one at a time. Imports nothing from
the repository.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

PEER_VERSION = "0.2.0"
HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[2]

peer: Any = importlib.import_module("deepseek_recipe")
if Path(peer.__file__).resolve().is_relative_to(REPO_ROOT):
    raise SystemExit("the recorder imported this project's deepseek_recipe, not the published one")
if importlib.metadata.version("deepseek-recipe") != PEER_VERSION:
    raise SystemExit(f"peer environment does not hold deepseek-recipe {PEER_VERSION}")

REQUESTS = {
    "chat_completions": (peer.ChatCompletionRequest, peer.ChatCompletionResponse, "chatcmpl-reg"),
    "messages": (peer.MessagesRequest, peer.MessagesResponse, "msg_reg"),
}
STAGES = {
    "ReasoningStart": peer.ThinkingInitialStage.ReasoningStart,
    "ReasoningContinuation": peer.ThinkingInitialStage.ReasoningContinuation,
    "ContentContinuation": peer.ThinkingInitialStage.ContentContinuation,
}
TOOL_CALL_ID = re.compile(r"^call_(\d{2,})_(ET_)?[A-Za-z0-9]{20}[0-9]{4}$")
CREATED = 1700000000


def request(
    protocol: str,
    stops: list[str],
    *,
    thinking: bool = False,
    tools: bool = False,
    json_object: bool = False,
) -> dict[str, Any]:
    """A streamed request of `protocol` with `stops` (Chat `stop`, Messages `stop_sequences`)."""
    body: dict[str, Any] = {
        "model": "DeepSeek-V4-Pro",
        "messages": [{"role": "user", "content": "Answer in json."}],
        "stream": True,
    }
    if protocol == "chat_completions":
        body["stop"] = stops
        body["thinking"] = {"type": "enabled" if thinking else "disabled"}
        if json_object:
            body["response_format"] = {"type": "json_object"}
        if tools:
            function = {"name": "f", "parameters": {"type": "object"}}
            body["tools"] = [{"type": "function", "function": function}]
    else:
        body["stop_sequences"] = stops
        body["max_tokens"] = 1000
        budget = {"type": "enabled", "budget_tokens": 1024}
        body["thinking"] = budget if thinking else {"type": "disabled"}
        if tools:
            body["tools"] = [{"name": "f", "input_schema": {"type": "object"}}]
    return body


def text_inputs(pieces: list[str], finish: bool = True) -> list[dict[str, Any]]:
    """A ready chunk, one text chunk (one token) per piece, then a `stop` finish."""
    ready = {"kind": "ready", "prompt_tokens": 12, "prompt_cache_hit_tokens": 0}
    inputs: list[dict[str, Any]] = [{**ready, "system_fingerprint": None}]
    inputs += [{"kind": "text", "content": piece, "token_count": 1} for piece in pieces]
    if finish:
        inputs.append({"kind": "finish", "finish_reason": "stop"})
    return inputs


def letters(count: int, seed: int) -> str:
    """`count` pseudo-random lowercase letters."""
    rng = random.Random(seed)
    return "".join(rng.choice("abcdefgh") for _ in range(count))


def cut(text: str, size: int) -> list[str]:
    """`text` in pieces of `size` characters."""
    return [text[at : at + size] for at in range(0, len(text), size)]


LONG = "Q" + letters(2099, 1)
HUGE = "Q" + letters(32999, 2)
PARTIAL = "Q" + letters(20499, 3)

CASES: list[tuple[str, str, dict[str, Any], list[dict[str, Any]]]] = [
    (
        "stop-long-2100-one-char-pieces",
        "a 2,100-character stop fed one character at a time matches",
        request("chat_completions", [LONG]),
        text_inputs(["Hello ", *LONG, " tail"]),
    ),
    (
        "stop-long-33000-100-char-pieces",
        "a 33,000-character stop fed 100 characters at a time matches",
        request("chat_completions", ["zz", HUGE]),
        text_inputs(cut("Hello " + HUGE + " tail", 100)),
    ),
    (
        "stop-long-partial-released-piece-by-piece",
        "17,000 characters of a stop's start held past the 16 KiB hold bound, released as one "
        "delta per piece at the mismatch",
        request("chat_completions", [PARTIAL], tools=True),
        text_inputs(["x\n", *cut(PARTIAL[:17000], 100), "!", "end\n"]),
    ),
    (
        "stop-json-mode-off-around-the-document",
        "JSON mode: no stop before the document or after its fence, one inside it",
        request("chat_completions", ["ab", "{"], json_object=True),
        text_inputs(["x ab ", "```json\n", '{"k": 1}', "\n```", " ab"]),
    ),
    (
        "stop-json-mode-bare-document",
        "JSON mode: the bracket that starts bare JSON is no stop; text after it is matched",
        request("chat_completions", ["{", "ab"], json_object=True),
        text_inputs(["note ", '{"v": "a', 'b"}']),
    ),
    (
        "stop-newline-alone-matches-a-stripped-newline",
        'a stop "\\n" matches the first leading newline of the content',
        request("messages", ["\n"]),
        text_inputs(["", "\n", "a"]),
    ),
    (
        "stop-stripped-newlines-invisible-to-longer-stops",
        "stripped leading newlines never start a longer stop",
        request("chat_completions", ["\na", "\n\n"]),
        text_inputs(["\n", "\n", "a", "b"]),
    ),
    (
        "stop-after-think-stripped-newlines",
        "after </think> as well: stripped newlines are seen alone",
        request("messages", ["\nb", "zz"], thinking=True),
        text_inputs(["plan</think>", "\nb", "c"]),
    ),
    (
        "stop-empty-pieces-before-stop-at-start",
        "empty pieces before a stop that opens the content yield nothing",
        request("messages", ["bé"]),
        text_inputs(["", "", "b", "", "é"]),
    ),
    (
        "stop-newline-before-a-stop-start-is-released",
        "with tools, a newline followed by a possible stop start is not held",
        request("chat_completions", ["aé"], tools=True),
        text_inputs(["a\n", "a", "x"]),
    ),
    (
        "stop-shortest-wins-ties-to-the-first",
        "the stop that ends first wins; at the same end the first listed",
        request("messages", ["xabcd", "abc", "bc", "c"]),
        text_inputs(["zxa", "b", "cd"]),
    ),
]


class Normalizer:
    """Replaces random ids and timestamps as the stream vectors do."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            match = TOOL_CALL_ID.match(value)
            if match is None:
                return value
            if value not in self.ids:
                self.ids[value] = f"call_{match[1]}_{match[2] or ''}<R{len(self.ids)}>"
            return self.ids[value]
        if isinstance(value, list):
            return [self.walk(item) for item in value]
        if isinstance(value, dict):
            return {key: self.walk(item) for key, item in value.items()}
        return value

    def chunk(self, protocol: str, data: str) -> Any:
        value = json.loads(data)
        if protocol == "chat_completions" and "created" in value:
            value["created"] = "<CREATED>"
        return self.walk(value)


def inference_chunk(chunk: dict[str, Any]) -> Any:
    """The peer's `InferenceChunk` for one input record."""
    kind = chunk["kind"]
    if kind == "ready":
        usage = peer.PromptUsage(
            prompt_tokens=chunk["prompt_tokens"],
            prompt_cache_hit_tokens=chunk["prompt_cache_hit_tokens"],
        )
        return peer.InferenceChunk.ready(
            prompt_usage=usage, system_fingerprint=chunk["system_fingerprint"]
        )
    if kind == "text":
        return peer.InferenceChunk.text(chunk["content"], chunk["token_count"])
    return peer.InferenceChunk.finish(peer.InferenceFinishReason.Stop)


def parsing_options(options: Any) -> dict[str, Any]:
    """The record form of the peer's `ParsingOptions`."""
    stage = options.thinking_initial_stage
    names = [name for name, value in STAGES.items() if stage is not None and stage == value]
    return {
        "parse_tool_calls": options.parse_tool_calls,
        "starts_in_tool_calls": options.starts_in_tool_calls,
        "parse_json_output": options.parse_json_output,
        "thinking_initial_stage": names[0] if names else None,
        "stop_sequences": list(options.stop_sequences),
    }


def record(
    case_id: str, note: str, body: dict[str, Any], inputs: list[dict[str, Any]], tokenizer: Any
) -> dict[str, Any]:
    """The stream-vector record of one case, with the reference's `expect`."""
    protocol = "chat_completions" if "stop" in body else "messages"
    request_class, response_class, response_id = REQUESTS[protocol]
    converted = request_class(body).convert(peer.ConversionOptions())
    options = converted.parsing_options
    generator = request_class.chunk_generator(converted, response_id, body["model"])
    processor = peer.StreamProcessor(generator, options, tokenizer)
    response = response_class(response_id, body["model"], CREATED, 0, 0)
    normalizer = Normalizer()
    chunks: list[dict[str, Any]] = []

    def take(at: int | str, produced: list[Any]) -> None:
        for chunk in produced:
            event = response_class.sse_event_name(chunk)
            data = normalizer.chunk(protocol, chunk.to_json())
            chunks.append({"at": at, "sse_event": event, "data": data})
            response.accumulate(chunk)

    for at, chunk in enumerate(inputs):
        take(at, processor.push(inference_chunk(chunk)))
        if processor.finished:
            inputs = inputs[: at + 1]
            break
    else:
        take("finish", processor.finish())
    generator_record: dict[str, Any] = {"id": response_id, "model": body["model"]}
    if protocol == "messages":
        generator_record |= {"signature": None, "direct_thinking_mode": None}
    effective = parsing_options(options)
    return {
        "id": case_id,
        "category": "stop_sequences",
        "protocol": protocol,
        "request": body,
        "generator": generator_record,
        "tokenizer": True,
        "parsing_options_converted": effective,
        "parsing_overrides": {},
        "parsing_options": effective,
        "response_init": {
            "id": response_id,
            "model": body["model"],
            "created": CREATED,
            "prompt_tokens": 0,
            "prompt_cache_hit_tokens": 0,
        },
        "inputs": inputs,
        "note": note,
        "expect": {
            "chunks": chunks,
            "error": None,
            "finished": processor.finished,
            "done_data": response_class.sse_done_data(),
            "response": normalizer.walk(json.loads(response.to_json())),
        },
    }


def main(tokenizer_json: str) -> None:
    tokenizer = peer.Tokenizer.from_file(tokenizer_json)
    out = HERE / "streams"
    out.mkdir(exist_ok=True)
    for case_id, note, body, inputs in CASES:
        text = json.dumps(record(case_id, note, body, inputs, tokenizer), ensure_ascii=False)
        (out / f"{case_id}.json").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:])
