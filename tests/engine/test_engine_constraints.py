"""Constrained decoding: whatever the (random, tiny) model prefers, outputs obey the constraint.

Each test converts real API requests with the recipe, builds engine requests with
`generation_request`, generates with the seeded tiny model over many seeds in one batch, decodes
with the bundled tokenizer and checks the text the way a client would: JSON parsed and validated
with `jsonschema`, regexes with `re.fullmatch`, tool calls read back by a small reader written
from the DSML rules of the streaming spec (section 3.4) and their arguments validated.

Some tests add a fixed "ending" bias to the model's logits before the constraint masks them
(tokens with closing punctuation, `</think>`, end-of-sentence): a random model otherwise writes
free text or digits until `max_tokens`. The bias changes which valid output comes out, never
whether it is valid: the constraint masks whatever logits it gets.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import jsonschema
import pytest
import torch

import deepseek_recipe as dr
from deepseek_recipe_engine.config import tokenizer_json
from deepseek_recipe_engine.constraints import (
    EOS_TOKEN,
    ConstraintError,
    GrammarLogitsProcessor,
    compile_grammar,
    grammar_spec,
)
from deepseek_recipe_engine.grammar import DSML, GrammarSpec
from deepseek_recipe_engine.recipe_request import generation_request
from tests.vectors import load_jsonl

SEEDS = range(6)
CONTEXT = 2048


@cache
def tokenizer() -> dr.Tokenizer:
    """The engine's vocabulary (V4 plus the V4.1 special tokens): logits have its size."""
    return dr.Tokenizer.from_str(tokenizer_json())


@cache
def ending_bias() -> torch.Tensor:
    tok = tokenizer()
    bias = torch.zeros(tok.vocab_size)
    for token_id in range(tok.vocab_size):
        text = tok.decode([token_id])
        if any(c in text for c in '"}]') or "</" in text:
            bias[token_id] = 5.0
    bias[tok.token_to_id(EOS_TOKEN)] = 8.0
    bias[tok.token_to_id("</think>")] = 12.0
    return bias


def biased(processor: Any, bias: torch.Tensor) -> Any:
    return lambda ids, logits: processor(ids, logits + bias)


def block_opening(processor: Any, bias: torch.Tensor) -> Any:
    """`bias`; in free text a pull to `<`, and right after it to the DSML token (if allowed)."""
    lt, dsml = tokenizer().encode("<")[0], tokenizer().token_to_id(DSML)
    in_prompt: list[int] = []

    def steer(ids: list[int], logits: torch.Tensor) -> torch.Tensor:
        if not in_prompt:
            in_prompt.append(ids.count(dsml))
        logits = logits + bias
        if ids.count(dsml) == in_prompt[0]:  # no block opened yet
            logits[lt] += 10.0
            if ids[-1] == lt:
                logits[dsml] += 20.0
        return processor(ids, logits)

    return steer


def prompt_ids(converted: dr.ConvertedRequest) -> list[int]:
    if converted.model_version == "DeepseekV4Pro":
        return converted.encode()
    # No V4.1 tokenizer ships with the package: the random model only needs some prompt ids.
    return tokenizer().encode(converted.render().prompt, allow_special=True)


def generate(make_core, converted, *, max_tokens: int, bias: Any = None, steer: Any = biased):
    """(text, finish reason, processor) per seed."""
    ids = prompt_ids(converted)
    requests = []
    for seed in SEEDS:
        request = generation_request(converted, ids, context_limit=CONTEXT)
        request.seed, request.max_tokens = seed, max_tokens
        processor = request.logits_processor
        assert isinstance(processor, GrammarLogitsProcessor)
        if bias is not None:
            request.logits_processor = steer(processor, bias)
        requests.append((request, processor))
    results = make_core().generate([r for r, _ in requests])
    outputs = []
    for (_, processor), result in zip(requests, results, strict=True):
        assert processor.error is None
        assert processor.mask_calls == len(result.token_ids) + (result.finish_reason == "stop")
        outputs.append((tokenizer().decode(result.token_ids), result.finish_reason, processor))
    return outputs


def chat(model: str = "DeepSeek-V4-Pro", thinking: bool = False, **fields: Any) -> dict[str, Any]:
    return {
        "model": model,
        "messages": [{"role": "user", "content": "Answer in json please."}],
        "thinking": {"type": "enabled" if thinking else "disabled"},
        **fields,
    }


def json_schema_format(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}


# --- JSON ---------------------------------------------------------------------------------------

BOUNDED_SCHEMAS = [
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 10},
            "age": {"type": "integer", "minimum": 0, "maximum": 130},
            "unit": {"enum": ["celsius", "fahrenheit"]},
        },
        "required": ["name", "age", "unit"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "point": {
                "type": "object",
                "properties": {
                    "x": {"type": "integer", "minimum": -50, "maximum": 50},
                    "y": {"type": "integer", "minimum": -50, "maximum": 50},
                },
                "required": ["x", "y"],
                "additionalProperties": False,
            },
            "tags": {
                "type": "array",
                "items": {"type": "string", "enum": ["red", "green", "blue"]},
                "minItems": 1,
                "maxItems": 3,
            },
            "ok": {"type": "boolean"},
        },
        "required": ["point", "tags", "ok"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "maxItems": 2,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "integer", "minimum": 1, "maximum": 9},
                        "label": {"type": "string", "minLength": 1, "maxLength": 6},
                    },
                    "required": ["id", "label"],
                    "additionalProperties": False,
                },
            },
            "note": {"anyOf": [{"type": "null"}, {"type": "string", "maxLength": 5}]},
        },
        "required": ["items", "note"],
        "additionalProperties": False,
    },
]


@pytest.mark.parametrize("schema", BOUNDED_SCHEMAS, ids=["flat", "nested", "array-of-objects"])
def test_json_schema_outputs_parse_and_validate(make_core, schema):
    converted = dr.convert(chat(response_format=json_schema_format(schema)))
    for text, finish, _ in generate(make_core, converted, max_tokens=120):
        assert finish == "stop", text
        jsonschema.validate(json.loads(text), schema)


def test_unbounded_json_with_an_ending_bias_validates(make_core):
    schema = {
        "type": "object",
        "properties": {"s": {"type": "string"}, "n": {"type": "number"}},  # `}` ends the number
        "required": ["s", "n"],
    }
    for response_format in (json_schema_format(schema), {"type": "json_object"}):
        converted = dr.convert(chat(response_format=response_format))
        for text, finish, _ in generate(make_core, converted, max_tokens=300, bias=ending_bias()):
            assert finish == "stop", text
            value = json.loads(text)
            assert isinstance(value, dict)
            if response_format["type"] == "json_schema":
                jsonschema.validate(value, schema)


def test_thinking_reasons_freely_then_answers_in_json(make_core):
    schema = BOUNDED_SCHEMAS[0]
    converted = dr.convert(chat(thinking=True, response_format=json_schema_format(schema)))
    assert converted.parsing_options["thinking_initial_stage"] == "ReasoningStart"
    for text, finish, _ in generate(make_core, converted, max_tokens=150, bias=ending_bias()):
        assert finish == "stop", text
        reasoning, content = text.split("</think>", 1)
        assert "</think>" not in reasoning
        jsonschema.validate(json.loads(content), schema)


def test_a_valid_prefix_is_continued(make_core):
    request = chat(response_format=json_schema_format({"type": "object"}))
    request["messages"].append({"role": "assistant", "content": '{"a": ', "prefix": True})
    converted = dr.convert(request)
    for text, finish, _ in generate(make_core, converted, max_tokens=150, bias=ending_bias()):
        assert finish == "stop"
        assert isinstance(json.loads('{"a": ' + text), dict)


# --- regex --------------------------------------------------------------------------------------

PATTERNS = [r"[0-9]{3}-[a-z]{2,4}", r"(yes|no|maybe)", r"[A-Z][a-z]{1,6}( [A-Z][a-z]{1,6}){0,2}\."]


@pytest.mark.parametrize("thinking", [False, True])
def test_regex_outputs_fullmatch(make_core, thinking):
    for pattern in PATTERNS:
        converted = dr.convert(
            chat(thinking=thinking, response_format={"type": "regex", "regex": pattern})
        )
        bias = ending_bias() if thinking else None
        for text, finish, _ in generate(make_core, converted, max_tokens=60, bias=bias):
            assert finish == "stop", text
            content = text.split("</think>", 1)[1] if thinking else text
            assert re.fullmatch(pattern, content), (pattern, text)


def test_an_invalid_regex_is_a_constraint_error():
    converted = dr.convert(chat(response_format={"type": "regex", "regex": "([0-9]+"}))
    with pytest.raises(ConstraintError):
        generation_request(converted, [1, 2, 3], context_limit=CONTEXT)


# --- tool calls ---------------------------------------------------------------------------------

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "maxLength": 12},
                    "days": {"type": "integer", "minimum": 1, "maximum": 14},
                    "unit": {"type": "string", "enum": ["c", "f"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "plan",
            "parameters": {
                "type": "object",
                "properties": {
                    "steps": {
                        "type": "array",
                        "items": {"type": "string", "maxLength": 8},
                        "maxItems": 3,
                    },
                    "options": {
                        "type": "object",
                        "properties": {"fast": {"type": "boolean"}},
                        "required": ["fast"],
                        "additionalProperties": False,
                    },
                    "note": {"type": "string"},
                },
                "required": ["steps", "options"],
            },
        },
    },
    {"type": "function", "function": {"name": "now"}},
]
SCHEMAS = {t["function"]["name"]: t["function"].get("parameters", {}) for t in TOOLS}
MODELS = ["DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash"]


def read_tool_calls(text: str, starts_in_block: bool) -> tuple[str, list[tuple[str, str]]]:
    """(content before the block, [(name, arguments JSON text)]): DSML as the parser reads it.

    Written from the streaming spec (3.4, 3.5): an invoke start is `｜DSML｜`, optional
    whitespace, `invoke name="`; a parameter key is the raw text after `parameter name=` up to
    the first space; the value starts after `true">` / `false">` and ends at `</｜DSML｜`;
    string values are JSON-escaped, others inserted verbatim; `</｜DSML｜` at block level ends it.
    """
    content, _, block = ("", "", text) if starts_in_block else text.partition(f"<{DSML}")
    calls: list[tuple[str, str]] = []
    invoke = re.compile(re.escape(DSML) + r"[ \n]*invoke name=\"([^\"]*)\"")
    at = 0
    while True:
        start = invoke.search(block, at)
        close = block.find(f"</{DSML}", at)
        if start is None or (close != -1 and close < start.start()):
            break
        name, at = start.group(1), start.end()
        parts = []
        while True:
            parameter = re.compile(re.escape(DSML) + r"[ \n]*parameter name=").search(block, at)
            end = block.find(f"</{DSML}", at)
            if parameter is None or (end != -1 and end < parameter.start()):
                at = block.index(">", end) + 1
                break
            key_end = block.index(" ", parameter.end())
            key = block[parameter.end() : key_end]
            marker = re.compile(r'(true|false)">').search(block, key_end)
            assert marker is not None
            value_end = block.index(f"</{DSML}", marker.end())
            value = block[marker.end() : value_end]
            is_text = marker.group(1) == "true"
            parts.append(f"{key}: {json.dumps(value, ensure_ascii=False) if is_text else value}")
            at = block.index(">", value_end) + 1
        calls.append((name, "{" + ", ".join(parts) + "}"))
    return content, calls


def check_calls(calls: list[tuple[str, str]]) -> None:
    for name, arguments in calls:
        assert name in SCHEMAS, name
        jsonschema.validate(json.loads(arguments), SCHEMAS[name])


@pytest.mark.parametrize("model", MODELS)
def test_required_tool_choice_always_calls_valid_tools(make_core, model):
    converted = dr.convert(chat(model, tools=TOOLS, tool_choice="required"))
    assert converted.parsing_options["starts_in_tool_calls"]
    closing = "</｜DSML｜tool_calls>" if model == MODELS[0] else "</｜DSML｜ calls>"
    for text, finish, _ in generate(make_core, converted, max_tokens=200, bias=ending_bias()):
        assert finish == "stop", text
        assert text.endswith(closing)
        _, calls = read_tool_calls(text, starts_in_block=True)
        assert len(calls) >= 1
        check_calls(calls)


@pytest.mark.parametrize(("model", "thinking"), [(MODELS[0], False), (MODELS[1], True)])
def test_auto_tool_choice_gives_text_or_valid_calls(make_core, model, thinking):
    converted = dr.convert(chat(model, thinking=thinking, tools=TOOLS))
    assert converted.inference_options["output_constraint"]["kind"] == "tool_call"
    block = f"<{DSML}tool_calls>\n" if model == MODELS[0] else f"<{DSML} calls>\n"
    with_calls = 0
    outputs = generate(
        make_core, converted, max_tokens=160, bias=ending_bias(), steer=block_opening
    )
    for text, finish, _ in outputs:
        if thinking:
            reasoning, sep, text = text.partition("</think>")
            assert sep and f"<{DSML}" not in reasoning, reasoning
        content, calls = read_tool_calls(text, starts_in_block=False)
        if f"<{DSML}" in text:
            assert finish == "stop", text
            assert text.startswith(content + block)
            assert len(calls) >= 1
            check_calls(calls)
            with_calls += 1
        else:
            assert calls == []
    assert with_calls > 0


# --- grammar level ------------------------------------------------------------------------------


def matcher_for(request: dict[str, Any]):
    converted = dr.convert(request)
    spec = grammar_spec(
        converted.inference_options, converted.parsing_options, converted.model_version
    )
    assert spec is not None
    return compile_grammar(spec)


def accepts(matcher, text: str) -> bool:
    ids = tokenizer().encode(text, allow_special=True)
    return matcher.try_consume_tokens(ids) == len(ids) and matcher.is_accepting()


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ('<｜DSML｜invoke name="now">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>', True),
        ('<｜DSML｜invoke name="nope">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>', False),
        ("</｜DSML｜tool_calls>", False),  # required: at least one call
        (
            '<｜DSML｜invoke name="get_weather">\n'
            '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
            '<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n'
            "</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
            True,
        ),
        (  # required parameter missing
            '<｜DSML｜invoke name="get_weather">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>',
            False,
        ),
        (  # out of range
            '<｜DSML｜invoke name="get_weather">\n'
            '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
            '<｜DSML｜parameter name="days" string="false">30</｜DSML｜parameter>\n'
            "</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
            False,
        ),
        (  # a string parameter written as JSON
            '<｜DSML｜invoke name="get_weather">\n'
            '<｜DSML｜parameter name="city" string="false">"Paris"</｜DSML｜parameter>\n'
            "</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
            False,
        ),
    ],
)
def test_required_grammar_accepts_exactly_the_rendered_layout(text, ok):
    matcher = matcher_for(chat(tools=TOOLS, tool_choice="required"))
    assert accepts(matcher, text) is ok


def test_v41_spelling_and_blank_line_of_empty_invokes():
    matcher = matcher_for(chat("DeepSeek-V4.1-Flash", tools=TOOLS, tool_choice="required"))
    assert accepts(
        matcher.deep_copy(), '<｜DSML｜ invoke name="now">\n\n</｜DSML｜ invoke>\n</｜DSML｜ calls>'
    )
    assert not accepts(
        matcher.deep_copy(), '<｜DSML｜ invoke name="now">\n</｜DSML｜ invoke>\n</｜DSML｜ calls>'
    )
    assert not accepts(
        matcher, '<｜DSML｜invoke name="now">\n\n</｜DSML｜invoke>\n</｜DSML｜ calls>'
    )


def test_required_without_an_opened_block_needs_text_then_a_block():
    tools = json.dumps([{"type": "function", "function": {"name": "now", "parameters": {}}}])
    spec = GrammarSpec("tool_call_required", tools, "DeepseekV4Pro", False, False, 128822)
    matcher = compile_grammar(spec)
    assert not accepts(matcher.deep_copy(), "just text")
    block = (
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="now">\n</｜DSML｜invoke>\n'
        "</｜DSML｜tool_calls>"
    )
    assert accepts(matcher.deep_copy(), "text first\n\n" + block)
    assert accepts(matcher, block)


def test_markup_cannot_hide_in_reasoning_or_free_text():
    thinking = matcher_for(chat(thinking=True, tools=TOOLS))
    for spelled in ("a </think> b", "a <｜DSML｜tool_calls>"):  # as plain text, not the tokens
        ids = tokenizer().encode(spelled, allow_special=False)
        assert thinking.deep_copy().try_consume_tokens(ids) < len(ids)
    auto = matcher_for(chat(tools=TOOLS))
    ids = tokenizer().encode("text <｜DSML｜foo>", allow_special=True)
    assert auto.deep_copy().try_consume_tokens(ids) < len(ids)
    for lone in ("text｜DSML｜more", "a <b ｜DSML｜ c"):  # the marker token outside a block
        for special in (True, False):
            ids = tokenizer().encode(lone, allow_special=special)
            assert auto.deep_copy().try_consume_tokens(ids) < len(ids), (lone, special)
            assert thinking.deep_copy().try_consume_tokens(ids) < len(ids), (lone, special)
    assert accepts(auto, "text with | pipes and DSML words")


def regex_processor(pattern: str, prompt: list[int]) -> GrammarLogitsProcessor:
    converted = dr.convert(chat(response_format={"type": "regex", "regex": pattern}))
    request = generation_request(converted, prompt, context_limit=CONTEXT)
    assert isinstance(request.logits_processor, GrammarLogitsProcessor)
    return request.logits_processor


def allowed_ids(processor: GrammarLogitsProcessor, ids: list[int]) -> set[int]:
    masked = processor(ids, torch.zeros(tokenizer().vocab_size))
    return set(torch.isfinite(masked).nonzero().flatten().tolist())


def test_processor_allows_end_of_sentence_only_where_the_grammar_accepts():
    prompt, eos = [5, 6, 7], tokenizer().token_to_id(EOS_TOKEN)
    processor = regex_processor("(ab|abc)", prompt)
    a, b, c = (tokenizer().encode(x)[0] for x in "abc")
    at_start = allowed_ids(processor, prompt)
    assert a in at_start and eos not in at_start
    assert allowed_ids(processor, [*prompt, a]) >= {b}
    after_ab = allowed_ids(processor, [*prompt, a, b])
    assert eos in after_ab and c in after_ab and processor.accepting
    assert allowed_ids(processor, [*prompt, a, b, c]) == {eos}  # complete: only the end is left
    assert allowed_ids(processor, [*prompt, a]) >= {b}  # a shorter sequence rolls the grammar back
    assert not processor.accepting
    assert processor.mask_calls == 5 and processor.mask_seconds > 0
    assert processor.error is None


def test_a_rejected_token_ends_the_output_instead_of_raising():
    prompt, eos = [5, 6, 7], tokenizer().token_to_id(EOS_TOKEN)
    processor = regex_processor("[0-9]+", prompt)
    letter = tokenizer().encode("x")[0]
    assert allowed_ids(processor, [*prompt, letter]) == {eos}
    assert processor.error


def test_every_vector_constraint_compiles_or_is_unsatisfiable():
    """424 constraints of the request vectors compile; the 7 others cannot be honoured."""
    compiled, rejected = 0, []
    for name in ("chat_completions", "responses", "messages"):
        for vector in load_jsonl(f"requests/{name}.jsonl"):
            expect = vector.get("expect") or {}
            options = expect.get("inference_options")
            if not options or not options.get("output_constraint"):
                continue
            spec = grammar_spec(options, expect["parsing_options"], expect["model_version"])
            assert spec is not None
            try:
                compile_grammar(spec)
                compiled += 1
            except ConstraintError as error:
                rejected.append((vector["id"], str(error)))
    reasons = ("Unsatisfiable schema", "does not exist", "regex parse error")
    for vector_id, message in rejected:
        assert any(reason in message for reason in reasons), (vector_id, message)
    assert (compiled, len(rejected)) == (424, 7)
