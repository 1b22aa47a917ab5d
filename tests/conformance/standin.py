"""A conforming host with another model: deterministic stand-in models behind the recipe.

`StandinModel` writes the raw model text for a request the way an ordinary instruction model
might (reasoning then `</think>` in thinking mode, an answer, DSML tool calls for declared tools
with arguments valid for their schemas, JSON when JSON output is asked for), in one of several
styles. `answer` is the host: it converts the request with the recipe, feeds the model's tokens
through the recipe's stream processor (stop sequences, the token limit, usage) and returns the
answer the official API would send for that output. `Quirks` switch off one host duty at a time
for the fault classes that break a behaviour in the host rather than on the wire.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from deepseek_recipe import ConversionOptions, ConvertedRequest, RecipeError, Tokenizer, convert
from deepseek_recipe.stream import StreamProcessor
from deepseek_recipe_conformance.oracle import VECTOR_PROTOCOLS

DSML = "｜DSML｜"
TOKENIZER = Tokenizer.deepseek_v4()


@dataclass(frozen=True)
class StandinModel:
    """A deterministic model: `style` picks the wording and the habits.

    * `short`: a few words, no tool call unless the request forces one;
    * `no_tools`: a plain sentence, never a tool call unless forced;
    * `wordy`: long reasoning and several sentences (reaches small limits, contains the usual
      stop strings), calls a declared tool whenever it may, prose before JSON;
    * `tool_happy`: calls every declared tool it may (two calls when it may), short text.
    """

    style: str

    def text(self, converted: ConvertedRequest) -> str:
        """The raw model output for a converted request (the recipe parses it)."""
        parsing = converted.parsing_options
        conversation = converted.conversation
        tools = [t for t in conversation.get("tools") or [] if isinstance(t, dict)]
        forced = bool(parsing.get("starts_in_tool_calls"))
        if forced:
            return _invokes(_chosen(tools, conversation), twice=self.style == "tool_happy")
        reasoning = ""
        if parsing.get("thinking_initial_stage") in ("ReasoningStart", "ReasoningContinuation"):
            reasoning = REASONING[self.style] + "</think>"
        answer = self._answer(conversation)
        may_call = bool(tools) and bool(parsing.get("parse_tool_calls"))
        if may_call and self.style in ("wordy", "tool_happy"):
            answer += "\n\n<" + DSML + "tool_calls>\n"
            return reasoning + answer + _invokes(tools, twice=self.style == "tool_happy")
        return reasoning + answer

    def _answer(self, conversation: dict[str, Any]) -> str:
        kind = conversation.get("response_format")
        if kind in ("json_object", "json_schema"):
            schema = conversation.get("response_schema") or {}
            value = instance(schema) if schema else {"answer": "Paris", "confident": True}
            # json_object lets the recipe blank out text before the JSON; a schema is enforced
            prose = "Here is the JSON:\n" if self.style == "wordy" and not schema else ""
            return prose + json.dumps(value, ensure_ascii=False)
        return ANSWERS[self.style]


REASONING = {
    "short": "Easy.",
    "no_tools": "The user asks something simple; answer directly.",
    "wordy": "Let me think about this carefully. The question is clear, and there are several "
    "details to consider before answering; I will explain them one by one.\n\nFirst, the "
    "facts. Second, the wording. Then the answer.",
    "tool_happy": "A tool can help here.",
}
ANSWERS = {
    "short": "Sure.",
    "no_tools": "Paris is the capital of France, and I hope this helps.",
    "wordy": "Here is a longer answer, written in several sentences. The capital of France is "
    "Paris; it lies on the Seine. Café culture, museums and history make it famous — ünïcödé "
    "✓.\nEND of the answer: done.",
    "tool_happy": "Calling the tools.",
}


def _chosen(tools: list[dict[str, Any]], conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools a forced tool choice allows (the named one, or all)."""
    choice = conversation.get("tool_choice")
    named = choice.get("name") if isinstance(choice, dict) else None
    return [t for t in tools if t.get("name") == named] or tools


def _invokes(tools: list[dict[str, Any]], twice: bool) -> str:
    chosen = (tools * 2)[:2] if twice else tools[:1]
    text = ""
    for tool in chosen:
        text += f'<{DSML}invoke name="{tool.get("name")}">\n'
        value = instance(tool.get("parameters") or {"type": "object"})
        for key, item in value.items() if isinstance(value, dict) else []:
            if isinstance(item, str):
                raw, string = item, "true"
            else:
                raw, string = json.dumps(item, ensure_ascii=False), "false"
            text += f'<{DSML}parameter name="{key}" string="{string}">{raw}</{DSML}parameter>\n'
        text += f"</{DSML}invoke>\n"
    return text + f"</{DSML}tool_calls>"


def instance(schema: Any) -> Any:
    """A small value valid for a JSON schema (the keywords strict schemas use)."""
    if not isinstance(schema, dict):
        return {}
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for keyword in ("anyOf", "oneOf"):
        if isinstance(schema.get(keyword), list) and schema[keyword]:
            return instance(schema[keyword][0])
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        names = list(properties) if schema.get("additionalProperties") is False else required
        names = names or list(properties)[:1]
        return {name: instance(properties.get(name, {})) for name in names}
    if kind == "array":
        return [instance(schema["items"])] if isinstance(schema.get("items"), dict) else []
    return {"string": "Paris", "integer": 3, "number": 1.5, "boolean": True, "null": None}.get(
        str(kind), "Paris"
    )


@dataclass(frozen=True)
class Quirks:
    """Host duties a faulty host skips (all False: a conforming host)."""

    ignore_stops: bool = False
    """Stop sequences are not passed to the recipe (the model's text is never cut)."""
    stops_everywhere: bool = False
    """The host cuts the raw model text at the first stop string itself, reasoning included."""
    ignore_max_tokens: bool = False
    """The request's token limit is not applied (only the host's own cap)."""


@dataclass(frozen=True)
class Answer:
    """What the host sends: status, headers and the body or SSE bytes."""

    status: int
    headers: dict[str, str]
    body: bytes


def convert_request(protocol: str, body: Any, model: str) -> ConvertedRequest | None:
    """The recipe's conversion (the model name served as V4), or None for an invalid request."""
    options = ConversionOptions(
        reasoning_content_behavior="reject", model_aliases={model: "DeepseekV4Pro"}
    )
    try:
        return convert(body, protocol=VECTOR_PROTOCOLS[protocol], options=options)
    except RecipeError:
        return None


def answer(
    converted: ConvertedRequest,
    model: StandinModel,
    prompt_usage: tuple[int, int],
    cap: int | None,
    quirks: Quirks = Quirks(),
) -> Answer:
    """Generate `model`'s answer token by token through the recipe, as a host does."""
    parsing = converted.parsing_options
    text = model.text(converted)
    stops = [s for s in parsing.get("stop_sequences") or [] if s]
    overrides = None
    if quirks.ignore_stops or quirks.stops_everywhere:
        overrides = {**parsing, "stop_sequences": []}
    if quirks.stops_everywhere:
        cuts = [text.find(s) for s in stops if s in text]
        text = text[: min(cuts)] if cuts else text
    requested = converted.inference_options.get("max_tokens")
    limits = [v for v in (cap, None if quirks.ignore_max_tokens else requested) if v]
    limit = min(limits) if limits else None
    processor = StreamProcessor(converted, tokenizer=TOKENIZER, parsing_options=overrides)
    prompt, hit = prompt_usage
    out = processor.push_sse(
        {"kind": "ready", "prompt_tokens": prompt, "prompt_cache_hit_tokens": hit}
    )
    ids = TOKENIZER.encode(text, allow_special=True)
    options = converted.inference_options
    top = int(options.get("top_logprobs") or 0) if options.get("logprobs") else 0
    finish = "stop"
    for used, token in enumerate(ids, start=1):
        if options.get("logprobs"):  # made-up but well-formed log probabilities
            alternatives = [(token, -0.25), *((token + n, -2.0 - n) for n in range(1, top))]
            out += processor.push_tokens([token], [(-0.25, alternatives[:top])])
        else:
            out += processor.push_tokens([token])
        if processor.finished:
            break
        if limit is not None and used >= limit:
            finish = "length"
            break
    if not processor.finished:
        out += processor.push_finish(finish)
    out += processor.finish_sse()
    if converted.stream:
        return Answer(200, {"content-type": "text/event-stream"}, out)
    return Answer(200, {"content-type": "application/json"}, processor.response_json().encode())
