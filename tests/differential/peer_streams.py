"""Stream cases through the published deepseek-recipe 0.2.0: the reference side of the
differential harness for model output.

Run by the peer environment's interpreter, isolated and from outside the repository, so that
`deepseek_recipe` is the published wheel and never this project's package (same import name):

    bench/.peer-venv/bin/python -I tests/differential/peer_streams.py TOKENIZER_JSON

Reads stream cases as JSON lines on stdin (the golden stream-vector layout without `expect`:
`id`, `protocol`, `category`, `request`, `generator`, `tokenizer`, `parsing_overrides`,
`response_init`, `inputs`) and writes each case back, one line per case and in order, with
`parsing_options_converted`, `parsing_options` and the `expect` the reference produces, following
the harness procedure of the stream vectors (`shared/vectors/README.md` § Stream vectors):
request → (Responses: `echo()`, `namespace_tool_map()`) → `convert` → chunk generator →
`StreamProcessor` → push every input (error capture with its input index) → `finish()` →
accumulation into the protocol's response → normalisation of ids and timestamps.

Every chunk's `data` is the parsed `to_json()`. Where the compact re-serialisation of `data` does
not give back the reference's bytes (a float spelled otherwise than Python spells it), the chunk
also carries `floats`: the spelling of every float of the chunk in document order.

A case whose handling raises something the procedure does not expect gets
`expect = {"peer_error": {"exception", "message"}}`; the process carries on with the next case.
This file imports nothing from the repository.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import re
import sys
import traceback
from pathlib import Path
from typing import Any

PEER_VERSION = "0.2.0"

peer: Any = importlib.import_module("deepseek_recipe")
if not Path(peer.__file__).resolve().is_relative_to(Path(sys.prefix).resolve()):
    raise SystemExit("peer_streams imported a deepseek_recipe from outside its venv")
if importlib.metadata.version("deepseek-recipe") != PEER_VERSION:
    raise SystemExit(f"peer environment does not hold deepseek-recipe {PEER_VERSION}")

REQUESTS = {
    "chat_completions": peer.ChatCompletionRequest,
    "responses": peer.ResponsesRequest,
    "messages": peer.MessagesRequest,
}
RESPONSES = {
    "chat_completions": peer.ChatCompletionResponse,
    "responses": peer.ResponsesResponse,
    "messages": peer.MessagesResponse,
}
STAGES = {
    "ReasoningStart": peer.ThinkingInitialStage.ReasoningStart,
    "ReasoningContinuation": peer.ThinkingInitialStage.ReasoningContinuation,
    "ContentContinuation": peer.ThinkingInitialStage.ContentContinuation,
}
FINISH_REASONS = {
    "stop": peer.InferenceFinishReason.Stop,
    "length": peer.InferenceFinishReason.Length,
    "content_filter": peer.InferenceFinishReason.ContentFilter,
}
TOOL_CALL_ID = re.compile(r"^call_(\d{2,})_(ET_)?[A-Za-z0-9]{20}[0-9]{4}$")
COMPACT = {"ensure_ascii": False, "separators": (",", ":")}
# This project's names of the special-token table (`SpecialTokens` fields, in order) and the
# reference's `SpecialToken` member of each.
SPECIAL_TOKEN_MEMBERS = {
    "bos": "Bos",
    "eos": "Eos",
    "thinking_start": "ThinkingStart",
    "thinking_end": "ThinkingEnd",
    "system": "System",
    "user": "User",
    "assistant": "Assistant",
    "latest_reminder": "LatestReminder",
    "dsml": "Dsml",
    "image": "Image",
    "ref_start": "Ref",
    "ref_end": "RefEnd",
    "box_start": "Box",
    "box_end": "BoxEnd",
    "point_start": "Point",
    "point_end": "PointEnd",
    "polygon_start": "Polygon",
    "polygon_end": "PolygonEnd",
}
# This project's table names whose reference `SpecialTokens` keyword differs.
SPECIAL_TOKEN_KEYWORDS = {
    "ref_start": "ref",
    "box_start": "box",
    "point_start": "point",
    "polygon_start": "polygon",
}


class Normalizer:
    """Replaces random ids and timestamps by the placeholders of the stream vectors."""

    def __init__(self, protocol: str) -> None:
        self.ids: dict[str, str] = {}
        self.protocol = protocol

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
            responses = self.protocol == "responses"
            out: dict[str, Any] = {}
            for key, item in value.items():
                if responses and key == "created_at" and isinstance(item, int):
                    out[key] = "<CREATED_AT>"
                elif responses and key == "completed_at" and isinstance(item, int):
                    out[key] = "<COMPLETED_AT>"
                else:
                    out[key] = self.walk(item)
            return out
        return value

    def chunk(self, at: int | str, chunk: Any) -> dict[str, Any]:
        raw = chunk.to_json()
        floats: list[str] = []

        def spelled(text: str) -> float:
            floats.append(text)
            return float(text)

        data = json.loads(raw, parse_float=spelled)
        record: dict[str, Any] = {"at": at, "sse_event": None, "data": None}
        record["sse_event"] = RESPONSES[self.protocol].sse_event_name(chunk)
        reserialised = json.dumps(data, **COMPACT) == raw
        if self.protocol == "chat_completions" and "created" in data:
            data["created"] = "<CREATED>"
        record["data"] = self.walk(data)
        if not reserialised:
            record["floats"] = floats
        return record


def special_tokens(table: dict[str, str]) -> Any:
    """The reference's `SpecialTokens` of a (partial) table in this project's names."""
    return peer.SpecialTokens(
        **{SPECIAL_TOKEN_KEYWORDS.get(name, name): value for name, value in table.items()}
    )


def parsing_json(options: Any) -> dict[str, Any]:
    """The parsing options in this project's JSON layout: `special_tokens` (the full table)
    only where a spelling differs from its default."""
    stage = options.thinking_initial_stage
    names = [name for name, value in STAGES.items() if value == stage]
    table = {
        name: options.special_tokens.token(getattr(peer.SpecialToken, member))
        for name, member in SPECIAL_TOKEN_MEMBERS.items()
    }
    out: dict[str, Any] = {
        "parse_tool_calls": options.parse_tool_calls,
        "starts_in_tool_calls": options.starts_in_tool_calls,
        "parse_json_output": options.parse_json_output,
        "thinking_initial_stage": names[0] if names else None,
        "stop_sequences": list(options.stop_sequences),
    }
    defaults = {
        name: getattr(peer.SpecialToken, member).default_str()
        for name, member in SPECIAL_TOKEN_MEMBERS.items()
    }
    if table != defaults:
        out["special_tokens"] = table
    return out


def parsing_options(effective: dict[str, Any]) -> Any:
    stage = effective["thinking_initial_stage"]
    return peer.ParsingOptions(
        parse_tool_calls=effective["parse_tool_calls"],
        starts_in_tool_calls=effective["starts_in_tool_calls"],
        parse_json_output=effective["parse_json_output"],
        thinking_initial_stage=None if stage is None else STAGES[stage],
        stop_sequences=effective["stop_sequences"],
        special_tokens=special_tokens(effective.get("special_tokens", {})),
    )


def chunk_generator(case: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The generator the case describes and the parsing options conversion produced."""
    protocol = case["protocol"]
    spec = case["generator"]
    options = peer.ConversionOptions()
    overrides = case.get("options", {}).get("special_tokens")
    if overrides is not None:
        options = options.with_special_tokens(special_tokens(overrides))
    request = REQUESTS[protocol](json.dumps(case["request"], ensure_ascii=False))
    echo = request.echo() if protocol == "responses" and spec.get("echo") else None
    namespaces = (
        request.namespace_tool_map(options)
        if protocol == "responses" and spec.get("namespace_tool_map")
        else None
    )
    converted = request.convert(options)
    direct = spec.get("direct_thinking_mode")
    if protocol == "messages" and direct is not None:
        generator = peer.MessagesChunkGenerator(spec["id"], spec["model"], direct)
    else:
        generator = REQUESTS[protocol].chunk_generator(converted, spec["id"], spec["model"])
    if echo is not None:
        generator = generator.with_echo(echo)
    if namespaces is not None:
        generator = generator.with_namespace_tool_map(namespaces)
    if protocol == "messages" and spec.get("signature") is not None:
        generator = generator.with_signature(spec["signature"])
    return generator, parsing_json(converted.parsing_options)


def inference_chunk(raw: dict[str, Any]) -> Any:
    kind = raw["kind"]
    if kind == "ready":
        usage = (
            peer.PromptUsage(
                prompt_tokens=raw["prompt_tokens"],
                prompt_cache_hit_tokens=raw.get("prompt_cache_hit_tokens", 0),
            )
            if "prompt_tokens" in raw
            else None
        )
        return peer.InferenceChunk.ready(
            prompt_usage=usage, system_fingerprint=raw.get("system_fingerprint")
        )
    if kind == "text":
        return peer.InferenceChunk.text(raw["content"], raw["token_count"])
    if kind == "tokens":
        logprobs = raw.get("logprobs")
        if logprobs is not None:
            logprobs = [(lp, [(top_id, top_lp) for top_id, top_lp in top]) for lp, top in logprobs]
        return peer.InferenceChunk.tokens(raw["token_ids"], logprobs)
    return peer.InferenceChunk.finish(FINISH_REASONS[raw["finish_reason"]])


def run(case: dict[str, Any], tokenizer: Any) -> dict[str, Any]:
    """Fills in the effective parsing options and the reference's `expect`."""
    protocol = case["protocol"]
    generator, converted_options = chunk_generator(case)
    effective = {**converted_options, **case.get("parsing_overrides", {})}
    case["parsing_options_converted"] = converted_options
    case["parsing_options"] = effective
    processor = peer.StreamProcessor(
        generator, parsing_options(effective), tokenizer if case["tokenizer"] else None
    )
    response = RESPONSES[protocol](**case["response_init"])
    normalizer = Normalizer(protocol)
    chunks: list[dict[str, Any]] = []
    error: dict[str, Any] | None = None

    def record(at: int | str, produced: list[Any]) -> None:
        for chunk in produced:
            chunks.append(normalizer.chunk(at, chunk))
            response.accumulate(chunk)

    for at, raw in enumerate(case["inputs"]):
        try:
            produced = processor.push(inference_chunk(raw))
        except RuntimeError as err:
            error = {"type": type(err).__name__, "message": str(err), "at": at}
            break
        record(at, produced)
    if error is None:
        try:
            produced = processor.finish()
        except RuntimeError as err:
            error = {"type": type(err).__name__, "message": str(err), "at": "finish"}
        else:
            record("finish", produced)
    return {
        "chunks": chunks,
        "error": error,
        "finished": processor.finished,
        "done_data": RESPONSES[protocol].sse_done_data(),
        "response": normalizer.walk(json.loads(response.to_json())),
    }


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    tokenizer = peer.Tokenizer.from_file(sys.argv[1])
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        try:
            case["expect"] = run(case, tokenizer)
        except Exception as err:  # one bad case must not end the batch
            detail = traceback.format_exception_only(type(err), err)[-1].strip()
            case["expect"] = {"peer_error": {"exception": type(err).__name__, "message": detail}}
        sys.stdout.write(json.dumps(case, **COMPACT) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
