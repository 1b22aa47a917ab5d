"""Request cases through the published deepseek-recipe 0.2.0: the reference side of the
differential harness.

Run by the peer environment's interpreter, isolated and from outside the repository, so that
`deepseek_recipe` is the published wheel and never this project's package (same import name):

    bench/.peer-venv/bin/python -I tests/differential/peer_requests.py TOKENIZER_JSON

Reads request cases as JSON lines on stdin (the golden request-vector layout without `expect`:
`id`, `protocol`, `category`, `options`, `request` or `request_raw`) and writes each case back,
one line per case and in order, with the `expect` the reference produces, following the harness
procedure of the request vectors (`shared/vectors/README.md`): parse → (Responses: `echo()` and
`namespace_tool_map()`) → `convert(options)` → render with the model's encoding (special-token
override applied) → encode with the V4 tokenizer (V4 only) → `resolve_max_tokens` samples.

A case whose handling raises something the procedure does not expect gets
`expect = {"peer_error": {"exception", "message"}}`; the process carries on with the next case.
This file imports nothing from the repository.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import sys
import traceback
import zlib
from pathlib import Path
from typing import Any

PEER_VERSION = "0.2.0"

peer: Any = importlib.import_module("deepseek_recipe")
if not Path(peer.__file__).resolve().is_relative_to(Path(sys.prefix).resolve()):
    raise SystemExit("peer_requests imported a deepseek_recipe from outside its venv")
if importlib.metadata.version("deepseek-recipe") != PEER_VERSION:
    raise SystemExit(f"peer environment does not hold deepseek-recipe {PEER_VERSION}")

REQUEST_CLASSES = {
    "chat_completions": peer.ChatCompletionRequest,
    "responses": peer.ResponsesRequest,
    "messages": peer.MessagesRequest,
}
MODEL_VERSIONS = {
    "DeepseekV4Pro": peer.ModelVersion.DeepseekV4Pro,
    "DeepseekV41Flash": peer.ModelVersion.DeepseekV41Flash,
}
STAGES = [
    (peer.ThinkingInitialStage.ReasoningStart, "ReasoningStart"),
    (peer.ThinkingInitialStage.ReasoningContinuation, "ReasoningContinuation"),
    (peer.ThinkingInitialStage.ContentContinuation, "ContentContinuation"),
]
BIG_CONTEXT = 1048576


def model_version_name(version: Any) -> str:
    for name, value in MODEL_VERSIONS.items():
        if value == version:
            return name
    raise ValueError(f"unknown model version {version!r}")


def stage_name(stage: Any) -> str:
    for value, name in STAGES:
        if value == stage:
            return name
    raise ValueError(f"unknown thinking stage {stage!r}")


def build_options(raw: dict[str, Any]) -> Any:
    """`ConversionOptions` from a record's `options` (absent keys keep the defaults)."""
    kwargs: dict[str, Any] = {}
    if "default_thinking_mode" in raw:
        kwargs["default_thinking_mode"] = raw["default_thinking_mode"]
    if "reasoning_content_behavior" in raw:
        kwargs["reasoning_content_behavior"] = {
            "fill_empty": peer.ReasoningContentBehavior.FillEmpty,
            "reject": peer.ReasoningContentBehavior.Reject,
        }[raw["reasoning_content_behavior"]]
    for key in ("responses_web_search", "messages_web_search"):
        if key in raw:
            kwargs[key] = {
                "drop": peer.WebSearchBehavior.Drop,
                "reject": peer.WebSearchBehavior.Reject,
            }[raw[key]]
    for key in ("thinking_max_tokens_upper_bound", "non_thinking_max_tokens_upper_bound"):
        if key in raw:
            kwargs[key] = raw[key]
    options = peer.ConversionOptions(**kwargs)
    if "model_versions_by_name" in raw:
        options = options.with_model_versions_by_name(
            {name: MODEL_VERSIONS[v] for name, v in raw["model_versions_by_name"].items()}
        )
    for name, version in (raw.get("model_aliases") or {}).items():
        options = options.with_model_alias(name, MODEL_VERSIONS[version])
    if "special_tokens" in raw:
        options = options.with_special_tokens(peer.SpecialTokens(**raw["special_tokens"]))
    return options


def error_body(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return body


def api_error(err: Any) -> dict[str, Any]:
    return {"status_code": err.status_code, "body": error_body(err.body)}


def tool_json(tool: Any) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "strict": tool.strict,
        "defer_loading": tool.defer_loading,
    }


def image_source_json(source: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"kind": source.kind, "detail": source.detail, "path": source.path}
    if source.kind == "data_url":
        entry["data_url"] = source.data_url
    elif source.kind == "url":
        entry["url"] = source.url
    else:
        entry["bytes"] = (source.data or b"").hex()
    return entry


def message_json(message: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "assistant":
        calls = message.tool_calls
        entry["reasoning_content"] = message.reasoning_content
        entry["tool_calls"] = (
            None
            if calls is None
            else [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]
        )
        entry["prefix"] = message.prefix
    if message.role == "tool":
        entry["tool_call_id"] = message.tool_call_id
    if message.role == "system" and message.tools is not None:
        entry["tools"] = [tool_json(t) for t in message.tools]
    sources = message.image_sources
    if sources:
        entry["image_sources"] = [image_source_json(s) for s in sources]
    return entry


def conversation_json(conversation: Any) -> dict[str, Any]:
    return {
        "thinking_mode": conversation.thinking_mode,
        "reasoning_effort": conversation.reasoning_effort,
        "tool_choice": conversation.tool_choice,
        "response_format": conversation.response_format,
        "response_schema": conversation.response_schema,
        "response_regex": conversation.response_regex,
        "tools": [tool_json(t) for t in conversation.tools],
        "messages": [message_json(m) for m in conversation.messages],
    }


def inference_json(options: Any) -> dict[str, Any]:
    constraint = options.output_constraint
    return {
        "max_tokens": options.max_tokens,
        "temperature": options.temperature,
        "top_p": options.top_p,
        "logprobs": options.logprobs,
        "top_logprobs": options.top_logprobs,
        "seed": options.seed,
        "output_constraint": (
            None if constraint is None else {"kind": constraint.kind, "schema": constraint.schema}
        ),
    }


def parsing_json(options: Any) -> dict[str, Any]:
    stage = options.thinking_initial_stage
    return {
        "parse_tool_calls": options.parse_tool_calls,
        "starts_in_tool_calls": options.starts_in_tool_calls,
        "parse_json_output": options.parse_json_output,
        "thinking_initial_stage": None if stage is None else stage_name(stage),
        "stop_sequences": list(options.stop_sequences),
    }


def synthetic_prompt_tokens(case_id: str) -> int:
    """V4.1 has no tokenizer here: a deterministic stand-in prompt length per case."""
    return 1 + zlib.crc32(case_id.encode()) % 200000


def resolve_samples(converted: Any, prompt_tokens: int) -> list[list[Any]]:
    p = prompt_tokens
    samples = [
        (p, BIG_CONTEXT),
        (p, p + 1),
        (p, p),
        (p + 7, p),
        (p, p + 5000),
        (p, p + 70000),
        (p, p + 140000),
        (0, 0),
    ]
    out: list[list[Any]] = []
    for prompt, limit in samples:
        try:
            result: Any = converted.resolve_max_tokens(prompt, limit)
        except peer.ConversionError as err:
            result = {"error": api_error(err)}
        out.append([prompt, limit, result])
    return out


class Runner:
    def __init__(self, tokenizer_json: str) -> None:
        self.tokenizer = peer.Tokenizer.from_file(tokenizer_json)
        # Attaching a tokenizer copies it (tens of milliseconds): one encoding per setting.
        self.encodings: dict[str, Any] = {}

    def encoding(self, version: str, raw_options: dict[str, Any]) -> Any:
        key = json.dumps([version, raw_options.get("special_tokens")], sort_keys=True)
        if key not in self.encodings:
            self.encodings[key] = self.new_encoding(version, raw_options)
        return self.encodings[key]

    def new_encoding(self, version: str, raw_options: dict[str, Any]) -> Any:
        encoding = (
            peer.DeepseekV4Encoding() if version == "DeepseekV4Pro" else peer.DeepseekV41Encoding()
        )
        if "special_tokens" in raw_options:
            encoding = encoding.with_special_tokens(
                peer.SpecialTokens(**raw_options["special_tokens"])
            )
        return encoding.with_tokenizer(self.tokenizer)

    def expect(self, case: dict[str, Any]) -> dict[str, Any]:
        raw_options = case.get("options") or {}
        options = build_options(raw_options)
        body = (
            case["request_raw"]
            if "request_raw" in case
            else json.dumps(case["request"], ensure_ascii=False)
        )
        cls = REQUEST_CLASSES[case["protocol"]]
        try:
            request = cls(body)
        except ValueError as err:
            return {
                "error": {
                    "stage": "parse",
                    "status_code": None,
                    "body": str(err),
                    "exception": type(err).__name__,
                }
            }
        request_model = request.model
        extras: dict[str, Any] = {}
        if case["protocol"] == "responses":
            echo = request.echo()
            extras["responses_echo"] = {
                "instructions": echo.instructions,
                "max_output_tokens": echo.max_output_tokens,
                "temperature": echo.temperature,
                "top_p": echo.top_p,
                "top_logprobs": echo.top_logprobs,
                "user": echo.user,
            }
            try:
                tool_map = request.namespace_tool_map(options)
                extras["namespace_tool_map"] = {
                    name: list(pair) for name, pair in sorted(tool_map.items())
                }
            except peer.ConversionError as err:
                extras["namespace_tool_map"] = {"error": api_error(err)}
        try:
            converted = request.convert(options)
        except peer.ConversionError as err:
            return {"error": {"stage": "convert", **api_error(err)}}
        version = model_version_name(converted.model_version)
        conversation = converted.conversation
        expect: dict[str, Any] = {
            "request_model": request_model,
            "model_version": version,
            "thinking_mode": conversation.thinking_mode,
            "stream": converted.stream,
            "inference_options": inference_json(converted.inference_options),
            "parsing_options": parsing_json(converted.parsing_options),
            "conversation": conversation_json(conversation),
        }
        encoding = self.encoding(version, raw_options)
        rendered = encoding.render_conversation(conversation)
        expect["prompt"] = rendered.prompt
        expect["special_ranges"] = [list(r) for r in rendered.special_ranges]
        expect["image_count"] = len(rendered.image_sources)
        prompt_tokens = synthetic_prompt_tokens(case["id"])
        if version == "DeepseekV4Pro":
            try:
                ids = encoding.encode(conversation)
            except RuntimeError as err:
                expect["encode_error"] = {"exception": type(err).__name__, "message": str(err)}
            else:
                expect["token_ids"] = ids
                prompt_tokens = len(ids)
        expect["resolve_max_tokens"] = resolve_samples(converted, prompt_tokens)
        expect.update(extras)
        return expect


def main() -> int:
    if len(sys.argv) != 2:
        sys.stderr.write("usage: peer_requests.py TOKENIZER_JSON < cases.jsonl > results.jsonl\n")
        return 2
    runner = Runner(sys.argv[1])
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        try:
            case["expect"] = runner.expect(case)
        except BaseException as err:  # PyO3 panics derive from BaseException
            if isinstance(err, (KeyboardInterrupt, SystemExit)):
                raise
            case["expect"] = {
                "peer_error": {
                    "exception": type(err).__name__,
                    "message": str(err),
                    "traceback": traceback.format_exc(limit=3),
                }
            }
        out.write(json.dumps(case, ensure_ascii=False, separators=(",", ":")) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
