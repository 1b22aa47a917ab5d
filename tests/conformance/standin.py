"""A conforming host with another model: deterministic stand-in models behind the recipe.

`StandinModel` writes the raw model text for a request the way an ordinary instruction model
might (reasoning then `</think>` in thinking mode, an answer, DSML tool calls for declared tools
with arguments valid for their schemas, JSON when JSON output is asked for), in one of the
`standin_text.STYLES`. `answer` is the host: it converts the request with the recipe, feeds
the model's tokens through the recipe's stream processor (stop sequences, the token limit,
usage) and returns the answer the official API would send for that output. `Quirks` switch
off one host duty at a time for the fault classes that break a behaviour in the host rather
than on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deepseek_recipe import ConversionOptions, ConvertedRequest, RecipeError, Tokenizer, convert
from deepseek_recipe.stream import StreamProcessor
from deepseek_recipe_conformance.oracle import VECTOR_PROTOCOLS
from tests.conformance.standin_text import RequestFacts, fake_logprobs, model_text

TOKENIZER = Tokenizer.deepseek_v4()


@dataclass(frozen=True)
class StandinModel:
    """A deterministic model of one of the `standin_text.STYLES`."""

    style: str

    def text(self, converted: ConvertedRequest) -> str:
        """The raw model output for a converted request (the recipe parses it)."""
        return model_text(self.style, facts(converted))


def facts(converted: ConvertedRequest) -> RequestFacts:
    """What the model sees of a request converted by this project's recipe."""
    parsing = converted.parsing_options
    conversation = converted.conversation
    declared = [t for t in conversation.get("tools") or [] if isinstance(t, dict)]
    forced = bool(parsing.get("starts_in_tool_calls"))
    choice = conversation.get("tool_choice")
    named = choice.get("name") if isinstance(choice, dict) else None
    tools = [(str(t.get("name")), t.get("parameters")) for t in declared]
    if forced and named is not None:
        tools = [t for t in tools if t[0] == named] or tools
    return RequestFacts(
        thinking=parsing.get("thinking_initial_stage")
        in ("ReasoningStart", "ReasoningContinuation"),
        forced=forced,
        may_call=bool(parsing.get("parse_tool_calls")),
        tools=tools,
        response_format=str(conversation.get("response_format")),
        response_schema=conversation.get("response_schema"),
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
        if options.get("logprobs"):
            out += processor.push_tokens([token], [fake_logprobs(token, top)])
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
