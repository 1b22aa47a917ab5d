"""Seeded random request cases for the differential harness: every field the reference reads,
valid, borderline and invalid, for the three protocols and both models.

`generate(seed, count)` yields `count` cases per protocol (request-vector layout without
`expect`). A case is a pure function of `(seed, index)`: `case(seed, index)` rebuilds it.

Families (the first segment of `category`):

* `tools.*` - tool schemas (JSON-Schema and non-JSON-Schema type names, nested errors, bad
  description/default types, strict), names (duplicate, namespaced, colliding, invalid);
* `tool_choice.*` - none/auto/required/named with valid and invalid tools;
* `params.*` - n, stop, temperature, top_p, max_tokens, seed, logprobs, penalties, stream with
  wrong types, negatives and extremes;
* `thinking.*` - thinking objects, efforts, prefix and reasoning pass-back combinations;
* `roles.*` - consecutive, empty and misplaced messages of every role;
* `items.*` (Responses) - input item sequences in any order;
* `blocks.*` (Messages) - content blocks, server tools, unanswered tool_use;
* `format.*` - response formats (json_object / json_schema / regex / text) with and without tools;
* `images.*` - image parts (data URLs, URLs, bad URLs) for V4 and V4.1;
* `realistic.*` - function-calling benchmark style requests (BFCL / glaive / xLAM): many tools
  with nested parameters, enums, arrays of objects, optional params, multi-turn tool use;
* `multi_error.*` - several independent problems in one request (which one is reported first);
* `mutant.*` - any of the above with random structural mutations (keys dropped, values replaced
  by other types, items duplicated, objects given as the sequence of their values).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from deepseek_recipe.vectors import check_request
from tests.differential.realistic_tools import STYLES, benchmark_arguments, benchmark_tool

__all__ = ["KIND", "PEER_SCRIPT", "PROTOCOLS", "case", "check", "generate", "peer_args"]

KIND = "requests"
PEER_SCRIPT = Path(__file__).resolve().parent / "peer_requests.py"
REPO_ROOT = Path(__file__).resolve().parents[2]
TOKENIZER_JSON = (
    REPO_ROOT / "recipe-rs" / "deepseek-recipe" / "data" / "deepseek-v4" / "tokenizer.json"
)
PROTOCOLS = ("chat_completions", "responses", "messages")
ABBREVIATIONS = {"chat_completions": "cc", "responses": "rs", "messages": "ms"}
# Keys of a case the shrinker may reduce.
SHRINK_KEYS = ("request", "options")

check = check_request

Json = Any
R = random.Random


def peer_args() -> list[str]:
    """Arguments of the peer script after its path."""
    return [str(TOKENIZER_JSON)]


def generate(seed: int, count: int) -> Iterator[dict[str, Any]]:
    """`count` cases per protocol, interleaved (cc, rs, ms, cc, ...)."""
    for index in range(count * len(PROTOCOLS)):
        yield case(seed, index)


# --- vocabulary -----------------------------------------------------------------------------

MODELS = ["DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash"]
ODD_MODELS = ["deepseek-chat", "DeepSeek-V4-pro", "", " DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash\n"]
SPECIAL_SPELLINGS = [
    "<｜begin▁of▁sentence｜>",
    "<｜end▁of▁sentence｜>",
    "<｜User｜>",
    "<｜Assistant｜>",
    "<｜System｜>",
    "<｜latest_reminder｜>",
    "<think>",
    "</think>",
    "｜DSML｜",
    "<｜DSML｜tool_calls>",
    "</｜DSML｜invoke>",
    "<｜image｜>",
    "<｜ref｜>",
    "<｜/ref｜>",
    "<｜box｜>",
    "<｜/box｜>",
    "<｜point｜>",
    "<｜/point｜>",
    "<｜polygon｜>",
    "<｜/polygon｜>",
    "<tool_result>",
    "</tool_result>",
    "<system-reminder>",
]
WORDS = [
    "hello",
    "weather",
    "Paris",
    "json",
    "JSON",
    "Json",
    "\uff2a\uff33\uff2f\uff2e",  # fullwidth JSON
    "price",
    "list",
    "the",
    "of",
    "call",
    "tool",
    "中文",
    "日本語",
    "한국어",
    "😀",
    "👍🏽",
    "é",
    "ß",
    "\t",
    "\n",
    "\n\n",
    "  ",
    "\r\n",
    "\u200b",
    "\u0000",
    "\u001f",
    '"quoted"',
    "back\\slash",
    "{",
    "}",
    "[1, 2]",
    "a=b",
    "1e400",
    "-0",
    "null",
]
TOOL_NAMES = [
    "get_weather",
    "search",
    "lookup_user",
    "calc",
    "send_email",
    "f",
    "g",
    "tool_search",
    "apply_patch",
    "web_search",
    "ns__g",
    "a" * 64,
    "Get-Stock_Price2",
    "x" * 128,
]
BAD_TOOL_NAMES = ["", "get weather", "a.b", "ns::g", "x" * 129, "名前", "f!", "a/b", " f", "f\n"]
TYPE_NAMES = ["object", "string", "number", "integer", "boolean", "array", "null"]
ODD_TYPE_NAMES = ["dict", "float", "tuple", "any", "int", "str", "list", "bool", "Object", ""]
EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh", "ultra", "max"]
ODD_EFFORTS = ["bogus", "HIGH", "", "auto"]
STRING_FORMATS = ["email", "hostname", "ipv4", "ipv6", "uuid", "date-time", "uri", "date"]
DATA_URL_PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
IMAGE_URLS = [
    DATA_URL_PNG,
    "data:image/png;base64,not*base64",
    "data:image/jpeg;base64,/9j/4AAQSkZJRg==",
    "data:,hello",
    "https://example.com/cat.png",
    "http://127.0.0.1/x.png",
    "ftp://example.com/x.png",
    "cat.png",
    "",
]


class _Scale:
    """The chance multiplier of every irregularity in the current case (0 = a clean case)."""

    value = 1.0


def o(odd: float) -> float:
    """`odd` scaled for the current case."""
    return min(1.0, odd * _Scale.value)


def pick(rng: R, items: list[Any]) -> Any:
    return items[rng.randrange(len(items))]


def chance(rng: R, p: float) -> bool:
    return rng.random() < p


def text(rng: R, *, allow_empty: bool = True, long: bool = False) -> str:
    if allow_empty and chance(rng, 0.05):
        return ""
    n = rng.randint(1, 40 if long else 6)
    parts = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.08:
            parts.append(pick(rng, SPECIAL_SPELLINGS))
        elif roll < 0.75:
            parts.append(pick(rng, WORDS[:14]))
        else:
            parts.append(pick(rng, WORDS))
    sep = pick(rng, [" ", " ", " ", "", "\n"])
    return sep.join(parts)


def number(rng: R) -> Any:
    return pick(
        rng,
        [
            0,
            1,
            -1,
            2,
            0.5,
            1.5,
            -0.0,
            1e15,
            1e16,
            1e-5,
            1e-6,
            3.0,
            2**53 + 1,
            2**63,
            2**64,
            -(2**63),
            1.2345678901234567e20,
            5e-324,
            0.1,
            100,
        ],
    )


def scalar(rng: R) -> Any:
    roll = rng.random()
    if roll < 0.25:
        return text(rng)
    if roll < 0.5:
        return number(rng)
    if roll < 0.65:
        return rng.choice([True, False])
    if roll < 0.75:
        return None
    if roll < 0.85:
        return []
    return {}


def any_value(rng: R, depth: int = 0) -> Any:
    if depth > 2 or chance(rng, 0.6):
        return scalar(rng)
    if chance(rng, 0.5):
        return [any_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {
        pick(rng, ["a", "b", "type", "x", "中"]): any_value(rng, depth + 1)
        for _ in range(rng.randint(0, 3))
    }


# --- schemas --------------------------------------------------------------------------------


def schema(rng: R, depth: int = 0, *, odd: float = 0.1, strictish: bool = False) -> Json:
    """A JSON schema node; `odd` is the chance of each kind of irregularity."""
    roll = rng.random()
    node: dict[str, Any] = {}
    if chance(rng, odd * 0.5):
        # A node without type: anyOf / $ref / enum only / nothing.
        variant = rng.randrange(4)
        if variant == 0:
            node["anyOf"] = [schema(rng, depth + 1, odd=odd) for _ in range(rng.randint(0, 3))]
        elif variant == 1:
            node["$ref"] = pick(rng, ["#/$defs/A", "#/definitions/B", "#", "nope"])
        elif variant == 2:
            node["enum"] = [scalar(rng) for _ in range(rng.randint(0, 3))]
        if chance(rng, 0.5):
            node["description"] = text(rng)
        return node
    if chance(rng, odd):
        kind: Any = pick(rng, ODD_TYPE_NAMES)
    elif chance(rng, odd * 0.5):
        kind = [pick(rng, TYPE_NAMES) for _ in range(rng.randint(1, 3))]
    elif depth >= 3:
        kind = pick(rng, TYPE_NAMES[1:])
    else:
        kind = pick(rng, TYPE_NAMES if roll < 0.9 else ["object", "array"])
    node["type"] = kind
    if chance(rng, 0.4):
        node["description"] = text(rng) if not chance(rng, odd) else scalar(rng)
    if chance(rng, 0.1):
        node["title"] = text(rng)
    if kind == "object" or chance(rng, odd * 0.3):
        if not (chance(rng, odd) and depth > 0) or (depth == 0 and chance(rng, 0.8)):
            props = {}
            for _ in range(rng.randint(0, 4 if depth < 2 else 2)):
                name = pick(
                    rng, ["city", "unit", "query", "limit", "items", "a", "b", "名前", "x y", ""]
                )
                props[name] = schema(rng, depth + 1, odd=odd, strictish=strictish)
            node["properties"] = props if not chance(rng, odd * 0.3) else pick(rng, [[], "x", None])
            if isinstance(node["properties"], dict):
                names = list(node["properties"])
                if strictish and chance(rng, 0.7):
                    node["required"] = names
                elif chance(rng, 0.6):
                    node["required"] = [n for n in names if chance(rng, 0.5)]
                    if chance(rng, odd):
                        node["required"].append(pick(rng, ["missing", "city", 3]))
        if chance(rng, 0.3 if not strictish else 0.6):
            node["additionalProperties"] = pick(rng, [False, False, True, {}, {"type": "string"}])
        if depth == 0 and chance(rng, 0.1):
            node["$defs"] = {"A": schema(rng, depth + 2, odd=odd)}
        if chance(rng, 0.05):
            # The reference's strict model reads `$def` (singular) as named sub-schemas.
            node["$def"] = (
                {n: schema(rng, depth + 2, odd=odd) for n in pick(rng, [["A"], ["B", "A"], []])}
                if not chance(rng, odd)
                else scalar(rng)
            )
    if kind == "array" or chance(rng, odd * 0.3):
        if not chance(rng, odd):
            node["items"] = schema(rng, depth + 1, odd=odd, strictish=strictish)
        elif chance(rng, 0.5):
            node["items"] = pick(rng, [[{"type": "string"}], True, {}, "string"])
        if chance(rng, 0.2):
            node["minItems"] = pick(rng, [0, 1, -1, "2"])
    if kind == "string":
        if chance(rng, 0.25):
            node["enum"] = [text(rng, allow_empty=False) for _ in range(rng.randint(1, 4))]
            if chance(rng, odd):
                node["enum"].append(number(rng))
        if chance(rng, 0.1):
            node["format"] = pick(rng, STRING_FORMATS)
        if chance(rng, 0.1):
            node["pattern"] = pick(rng, ["^[a-z]+$", "([0-9]+", "\\d{3}"])
    if kind in ("number", "integer"):
        for key in ("minimum", "maximum", "exclusiveMinimum", "multipleOf"):
            if chance(rng, 0.1):
                node[key] = number(rng) if not chance(rng, odd) else scalar(rng)
        if chance(rng, 0.1):
            node["enum"] = [number(rng) for _ in range(rng.randint(1, 3))]
    if chance(rng, 0.15):
        node["default"] = scalar(rng)
    if chance(rng, odd * 0.2):
        node[pick(rng, ["x-extra", "examples", "nullable", "const"])] = scalar(rng)
    return node


def parameters(rng: R, *, odd: float, strictish: bool = False) -> Json:
    roll = rng.random()
    if roll < odd * 0.3:
        return pick(rng, [{}, {"type": "string"}, None, [], "object", {"properties": {}}, True])
    node = schema(rng, 0, odd=odd, strictish=strictish)
    if chance(rng, 1 - odd):
        node["type"] = "object"
        node.setdefault("properties", {})
    return node


def arguments_for(rng: R, params: Json) -> str:
    """Arguments JSON text for a call (sometimes not an object / not JSON)."""
    roll = rng.random()
    if roll < 0.05:
        return pick(rng, ["", "not json", "[1,2]", '"s"', "1e400", "{", "null", '{"a":1e400}'])
    args: dict[str, Any] = {}
    props = params.get("properties") if isinstance(params, dict) else None
    if isinstance(props, dict):
        for name, sub in props.items():
            if chance(rng, 0.7):
                args[name] = value_for(rng, sub)
    if chance(rng, 0.1):
        args[pick(rng, ["extra", "中文", "x"])] = any_value(rng)
    indent = pick(rng, [None, None, None, 2])
    return json.dumps(args, ensure_ascii=chance(rng, 0.2), indent=indent)


def value_for(rng: R, node: Json, depth: int = 0) -> Any:
    if not isinstance(node, dict) or depth > 3:
        return scalar(rng)
    kind = node.get("type")
    if "enum" in node and isinstance(node["enum"], list) and node["enum"]:
        return pick(rng, node["enum"])
    if kind == "string":
        return text(rng)
    if kind == "integer":
        return rng.randint(-5, 1000)
    if kind == "number":
        return number(rng)
    if kind == "boolean":
        return rng.choice([True, False])
    if kind == "array":
        return [value_for(rng, node.get("items"), depth + 1) for _ in range(rng.randint(0, 3))]
    if kind == "object":
        props = node.get("properties")
        if isinstance(props, dict):
            return {k: value_for(rng, v, depth + 1) for k, v in props.items() if chance(rng, 0.7)}
        return {}
    return scalar(rng)


# --- abstract tools and conversations -------------------------------------------------------


class Spec:
    """What a builder decided, shared by the protocol emitters."""

    def __init__(self, rng: R, protocol: str) -> None:
        self.rng = rng
        self.protocol = protocol
        self.odd = 0.1
        self.tools: list[dict[str, Any]] = []
        self.turns: list[tuple[str, dict[str, Any]]] = []
        self.request: dict[str, Any] = {}


def tool_def(rng: R, *, odd: float, name: str | None = None, strict: Any = None) -> dict[str, Any]:
    """An abstract function tool: name, description, parameters, strict."""
    if name is None:
        name = pick(rng, BAD_TOOL_NAMES) if chance(rng, odd * 0.5) else pick(rng, TOOL_NAMES)
    tool: dict[str, Any] = {"name": name}
    if chance(rng, 0.7):
        tool["description"] = text(rng) if not chance(rng, odd * 0.5) else scalar(rng)
    if chance(rng, 0.9):
        tool["parameters"] = parameters(rng, odd=odd, strictish=strict is True)
    if strict is not None:
        tool["strict"] = strict
    elif chance(rng, 0.15):
        tool["strict"] = pick(rng, [True, False, None] + (["true", 1] if chance(rng, odd) else []))
    if chance(rng, 0.05):
        tool["defer_loading"] = pick(rng, [True, False])
    return tool


def call_id(rng: R, index: int) -> str:
    if chance(rng, 0.03):
        return pick(rng, ["", "dup", "call 1"])
    return pick(rng, ["call_", "toolu_", "fc_", ""]) + str(index) + pick(rng, ["", "abc"])


def conversation(
    rng: R, tools: list[dict[str, Any]], *, odd: float, turns: int
) -> list[tuple[str, dict[str, Any]]]:
    """A list of abstract turns: system, user, assistant (content, reasoning, calls, prefix),
    tool, reminder. Well-formed most of the time; `odd` adds misplaced and missing pieces."""
    out: list[tuple[str, dict[str, Any]]] = []
    if chance(rng, 0.4):
        out.append(("system", {"text": text(rng)}))
    counter = 0
    for _ in range(turns):
        if chance(rng, 0.1):
            out.append(("reminder", {"text": text(rng)}))
        if chance(rng, odd * 0.3):
            out.append(("system", {"text": text(rng)}))
        out.append(("user", {"parts": user_parts(rng, odd=odd)}))
        if chance(rng, odd * 0.3):
            out.append(("user", {"parts": user_parts(rng, odd=odd)}))
        if chance(rng, 0.35) and tools:
            calls = []
            for _ in range(rng.randint(1, 3)):
                counter += 1
                tool = pick(rng, tools)
                name = tool.get("name") if not chance(rng, odd * 0.3) else "unknown_tool"
                calls.append(
                    {
                        "id": call_id(rng, counter),
                        "name": name,
                        "arguments": arguments_for(rng, tool.get("parameters")),
                    }
                )
            out.append(("assistant", assistant_fields(rng, odd=odd, calls=calls)))
            order = list(calls)
            if chance(rng, 0.3):
                rng.shuffle(order)
            for call in order:
                if chance(rng, odd * 0.3):
                    continue  # unanswered
                out.append(
                    (
                        "tool",
                        {
                            "id": call["id"] if not chance(rng, odd * 0.2) else "zz",
                            "text": text(rng, long=chance(rng, 0.2)),
                        },
                    )
                )
            if chance(rng, odd * 0.2):
                out.append(("tool", {"id": call["id"], "text": "again"}))
            if chance(rng, 0.5):
                out.append(("assistant", assistant_fields(rng, odd=odd)))
        elif chance(rng, 0.7):
            out.append(("assistant", assistant_fields(rng, odd=odd)))
            if chance(rng, odd * 0.3):
                out.append(("assistant", assistant_fields(rng, odd=odd)))
    if out and out[-1][0] == "assistant" and chance(rng, 0.5):
        out.pop()
    if chance(rng, 0.12) and (not tools or chance(rng, odd * 2)):
        fields = assistant_fields(rng, odd=odd)
        fields["prefix"] = True
        out.append(("assistant", fields))
    elif chance(rng, odd * 0.2):
        out.append(("tool", {"id": "orphan", "text": text(rng)}))
    return out


def user_parts(rng: R, *, odd: float) -> list[tuple[str, Any]]:
    parts: list[tuple[str, Any]] = [("text", text(rng, long=chance(rng, 0.1)))]
    if chance(rng, 0.2):
        parts.append(("text", text(rng)))
    if chance(rng, 0.06):
        url = DATA_URL_PNG if not chance(rng, odd * 2) else pick(rng, IMAGE_URLS)
        parts.insert(
            rng.randrange(len(parts) + 1),
            (
                "image",
                {
                    "url": url,
                    "detail": pick(
                        rng,
                        [None, "low", "high", "auto", "original"]
                        + (["bogus"] if chance(rng, odd) else []),
                    )
                    if chance(rng, 0.3)
                    else None,
                },
            ),
        )
    return parts


def assistant_fields(
    rng: R, *, odd: float, calls: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    fields: dict[str, Any] = {"calls": calls or []}
    roll = rng.random()
    if calls and roll < 0.5:
        fields["content"] = None if chance(rng, 0.6) else ""
    else:
        fields["content"] = text(rng) if not chance(rng, odd * 0.3) else None
    if chance(rng, 0.6):
        fields["reasoning"] = text(rng) if not chance(rng, 0.1) else ""
    return fields


# --- Chat Completions -----------------------------------------------------------------------


def cc_tool(rng: R, tool: dict[str, Any], odd: float) -> Json:
    function = {
        k: v for k, v in tool.items() if k in ("name", "description", "parameters", "strict")
    }
    out: dict[str, Any] = {"type": "function", "function": function}
    if chance(rng, odd * 0.2):
        out["type"] = pick(rng, ["custom", "web_search", "", None])
    if chance(rng, odd * 0.1):
        out = {"type": "function", **function}
    return out


def cc_content(rng: R, parts: list[tuple[str, Any]], *, role: str) -> Json:
    only_text = all(kind == "text" for kind, _ in parts)
    if only_text and len(parts) == 1 and chance(rng, 0.7):
        return parts[0][1]
    out = []
    for kind, value in parts:
        if kind == "text":
            out.append({"type": "text", "text": value})
        else:
            image: dict[str, Any] = {"url": value["url"]}
            if value.get("detail") is not None:
                image["detail"] = value["detail"]
            out.append({"type": "image_url", "image_url": image})
    if chance(rng, 0.01):
        out.append(
            pick(
                rng,
                [{"type": "file", "file": {}}, {"type": "input_audio"}, {"type": "text"}, "str"],
            )
        )
    return out


def cc_messages(rng: R, turns: list[tuple[str, dict[str, Any]]], odd: float) -> list[Json]:
    messages: list[Json] = []
    for role, fields in turns:
        if role == "system":
            messages.append(
                {
                    "role": "system",
                    "content": fields["text"]
                    if chance(rng, 0.8)
                    else [{"type": "text", "text": fields["text"]}],
                }
            )
        elif role == "reminder":
            messages.append({"role": "latest_reminder", "content": fields["text"]})
        elif role == "user":
            messages.append(
                {"role": "user", "content": cc_content(rng, fields["parts"], role="user")}
            )
        elif role == "tool":
            messages.append(
                {"role": "tool", "tool_call_id": fields["id"], "content": fields["text"]}
            )
        else:
            message: dict[str, Any] = {"role": "assistant"}
            if fields["content"] is not None or chance(rng, 0.3):
                message["content"] = fields["content"]
            if "reasoning" in fields:
                message["reasoning_content"] = fields["reasoning"]
            if fields["calls"]:
                message["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["arguments"]},
                    }
                    for c in fields["calls"]
                ]
            elif chance(rng, odd * 0.05):
                message["tool_calls"] = []
            if fields.get("prefix"):
                message["prefix"] = True
            elif chance(rng, odd * 0.05):
                message["prefix"] = pick(rng, [True, False])
            messages.append(message)
    return messages


def cc_tool_choice(rng: R, tools: list[dict[str, Any]], odd: float) -> Json:
    roll = rng.random()
    if roll < 0.5 or (not chance(rng, odd * 3) and roll >= 0.85):
        return pick(rng, ["none", "auto", "required"])
    if roll < 0.85:
        name = (
            pick(rng, tools)["name"]
            if tools and not chance(rng, odd)
            else pick(rng, ["zz", "get_weather", ""])
        )
        choice: dict[str, Any] = {"type": "function", "function": {"name": name}}
        if chance(rng, odd * 0.2):
            choice = pick(
                rng,
                [
                    {"type": "function"},
                    {"type": "function", "name": name},
                    {"function": {"name": name}},
                ],
            )
        return choice
    return pick(rng, ["any", "bogus", {"type": "auto"}, None, 1])


def cc_request(rng: R, spec: Spec) -> Json:
    odd = spec.odd
    request: dict[str, Any] = {"model": model(rng, odd)}
    request["messages"] = cc_messages(rng, spec.turns, odd)
    if spec.tools or chance(rng, 0.05):
        request["tools"] = [cc_tool(rng, t, odd) for t in spec.tools]
        if chance(rng, 0.5):
            request["tool_choice"] = cc_tool_choice(rng, spec.tools, odd)
    add_thinking(rng, request, odd, protocol="chat_completions")
    add_sampling(rng, request, odd, protocol="chat_completions")
    if chance(rng, 0.25):
        request["response_format"] = response_format(rng, odd, protocol="chat_completions")
    return request


def model(rng: R, odd: float) -> Json:
    if chance(rng, odd * 0.1):
        return pick(rng, [*ODD_MODELS, None, 5])
    return pick(rng, MODELS)


def add_thinking(rng: R, request: dict[str, Any], odd: float, *, protocol: str) -> None:
    if chance(rng, 0.45):
        kind = (
            pick(rng, ["enabled", "disabled", "adaptive"])
            if not chance(rng, odd * 0.2)
            else pick(rng, ["bogus", None, 1])
        )
        thinking: dict[str, Any] = {"type": kind}
        if chance(rng, 0.2):
            thinking["budget_tokens"] = pick(rng, [1024, 0, -1, "x", 1.5])
        if chance(rng, odd * 0.1):
            thinking = pick(rng, [{}, "enabled", True])
        request["thinking"] = thinking
    if chance(rng, 0.35):
        effort = (
            pick(rng, EFFORTS) if not chance(rng, odd * 0.2) else pick(rng, [*ODD_EFFORTS, None, 3])
        )
        if protocol == "chat_completions":
            request["reasoning_effort"] = effort
        elif protocol == "responses":
            request["reasoning"] = {"effort": effort}
            if chance(rng, 0.2):
                request["reasoning"]["summary"] = pick(rng, ["auto", "detailed", None])
        else:
            request["output_config"] = {"effort": effort}


def add_sampling(rng: R, request: dict[str, Any], odd: float, *, protocol: str) -> None:
    def val(good: list[Any], bad: list[Any]) -> Any:
        return pick(rng, bad) if chance(rng, odd) else pick(rng, good)

    if chance(rng, 0.3):
        request["temperature"] = val(
            [0, 0.3, 1, 1.5, 2, 0.7], [2.01, -0.1, "1", None, 1e400 if False else 3, True]
        )
    if chance(rng, 0.3):
        request["top_p"] = val([1, 0.5, 0.9, 0.95, 0.99, 1e-9], [0, 1.01, -1, "0.5", None])
    max_key = {
        "chat_completions": "max_tokens",
        "responses": "max_output_tokens",
        "messages": "max_tokens",
    }[protocol]
    if chance(rng, 0.35 if protocol != "messages" else 0.7):
        request[max_key] = val(
            [1, 100, 4096, 393216, 65536], [0, -1, 393217, 2**32, 2**32 - 1, 1.5, "10", None]
        )
    if protocol == "chat_completions":
        if chance(rng, 0.1):
            request["max_completion_tokens"] = val([10], [-1, "x"])
        if chance(rng, 0.1):
            request["n"] = val([1], [2, 0, -1, None, "1", 1.0])
        if chance(rng, 0.15):
            request["stop"] = val(
                ["\n", ["a", "b"], "END"],
                ["", [""], ["a", ""], ["s"] * 17, ["s"] * 16, 5, [1], None, []],
            )
        if chance(rng, 0.1):
            request["seed"] = val([0, 42, 2**63 - 1], [2**63, -1, 2**64, 1.5, "1"])
        if chance(rng, 0.15):
            request["logprobs"] = val([True, False], [None, "true", 1])
        if chance(rng, 0.15):
            request["top_logprobs"] = val([0, 5, 20], [21, -1, 256, None, 1.5])
            if not chance(rng, odd * 2):
                request["logprobs"] = True
        for key in ("frequency_penalty", "presence_penalty"):
            if chance(rng, 0.05):
                request[key] = val([0, -2, 2, 0.5], [2.5, -3, "1"])
        if chance(rng, 0.15):
            request["stream"] = val([True, False], [None, "yes", 1])
        if chance(rng, 0.08):
            request["stream_options"] = val(
                [{"include_usage": True}, {}], [None, "x", {"include_usage": "x"}]
            )
            if not chance(rng, odd * 3):
                request["stream"] = True
        if chance(rng, 0.05):
            request[
                pick(rng, ["parallel_tool_calls", "user", "metadata", "store", "logit_bias"])
            ] = scalar(rng)
    elif protocol == "responses":
        if chance(rng, 0.15):
            request["top_logprobs"] = val([0, 5, 20], [21, -1, None, 1.5])
        if chance(rng, 0.15):
            request["stream"] = val([True, False], [None, "yes"])
        if chance(rng, 0.05):
            request["stream_options"] = scalar(rng)
        if chance(rng, 0.1):
            request["user"] = val(["u1"], [5, None])
        if chance(rng, 0.05):
            request[
                pick(
                    rng,
                    [
                        "seed",
                        "n",
                        "stop",
                        "store",
                        "metadata",
                        "previous_response_id",
                        "truncation",
                    ],
                )
            ] = scalar(rng)
    else:
        if chance(rng, 0.15):
            request["stop_sequences"] = val(
                [["\n"], ["END", "STOP"], []], [[""], "x", ["s"] * 17, [1], None]
            )
        if chance(rng, 0.15):
            request["stream"] = val([True, False], [None, "yes"])
        if chance(rng, 0.05):
            request[pick(rng, ["top_k", "metadata", "service_tier", "anthropic_version"])] = scalar(
                rng
            )


def response_format(rng: R, odd: float, *, protocol: str) -> Json:
    roll = rng.random()
    strict = pick(rng, [None, True, False])
    sch = (
        parameters(rng, odd=odd, strictish=strict is True)
        if chance(rng, 0.8)
        else schema(rng, 0, odd=odd)
    )
    if roll < 0.2:
        fmt: dict[str, Any] = {"type": "text"}
    elif roll < 0.5:
        fmt = {"type": "json_object"}
    elif roll < 0.85:
        if protocol == "chat_completions":
            js: dict[str, Any] = {"name": pick(rng, ["answer", "", "a b"]), "schema": sch}
            if strict is not None:
                js["strict"] = strict
            if chance(rng, 0.2):
                js["description"] = text(rng)
            if chance(rng, odd * 0.3):
                js.pop("schema")
            fmt = {"type": "json_schema", "json_schema": js}
        else:
            fmt = {"type": "json_schema", "name": pick(rng, ["answer", ""]), "schema": sch}
            if strict is not None:
                fmt["strict"] = strict
    elif roll < 0.95:
        fmt = {"type": "regex", "regex": pick(rng, ["[0-9]+", "([0-9]+", ".*", ""])}
        if protocol != "chat_completions" and not chance(rng, odd * 3):
            fmt = {"type": "text"}
    elif chance(rng, odd * 3):
        fmt = pick(rng, [{"type": "bogus"}, {}, "json_object", None])
    else:
        fmt = {"type": "json_object"}
    return fmt


# --- Responses ------------------------------------------------------------------------------


def rs_tool(rng: R, tool: dict[str, Any], odd: float) -> Json:
    out: dict[str, Any] = {"type": "function"}
    out.update(
        {
            k: v
            for k, v in tool.items()
            if k in ("name", "description", "parameters", "strict", "defer_loading")
        }
    )
    return out


def rs_extra_tools(rng: R, tools: list[dict[str, Any]], odd: float) -> list[Json]:
    extra: list[Json] = []
    if chance(rng, 0.15):
        inner = [rs_tool(rng, tool_def(rng, odd=odd), odd) for _ in range(rng.randint(0, 3))]
        if chance(rng, odd):
            inner.append({"type": "custom", "name": "apply_patch"})
        extra.append(
            {
                "type": "namespace",
                "name": pick(
                    rng, ["ns", "db", "mcp_server"] + (["", "a b"] if chance(rng, odd) else [])
                ),
                "description": text(rng),
                "tools": inner,
            }
        )
    if chance(rng, 0.08):
        extra.append(
            {"type": "custom", "name": "apply_patch" if not chance(rng, odd * 3) else "foo"}
        )
    if chance(rng, 0.08):
        extra.append(
            {
                "type": pick(
                    rng,
                    [
                        "web_search",
                        "web_search_2025_08_26",
                        "web_search_preview",
                        "file_search",
                        "mcp",
                        "code_interpreter",
                        "tool_search",
                        "apply_patch",
                    ]
                    + (["bogus"] if chance(rng, odd) else []),
                )
            }
        )
    return extra


def rs_content(rng: R, parts: list[tuple[str, Any]], role: str) -> Json:
    if len(parts) == 1 and parts[0][0] == "text" and chance(rng, 0.6):
        return parts[0][1]
    out = []
    for kind, value in parts:
        if kind == "text":
            out.append(
                {
                    "type": "output_text"
                    if role == "assistant" and chance(rng, 0.8)
                    else "input_text",
                    "text": value,
                }
            )
        else:
            image: dict[str, Any] = {"type": "input_image", "image_url": value["url"]}
            if value.get("detail") is not None:
                image["detail"] = value["detail"]
            if chance(rng, 0.1):
                image = pick(
                    rng,
                    [
                        {"type": "input_image", "file_id": "file_1"},
                        {"type": "input_image"},
                        {"type": "input_image", "file_id": "f", "image_url": DATA_URL_PNG},
                    ],
                )
            out.append(image)
    if chance(rng, 0.03):
        out.append(
            pick(
                rng,
                [
                    {"type": "input_file", "file_id": "f"},
                    {"type": "refusal", "refusal": "no"},
                    {"type": "input_text"},
                ],
            )
        )
    return out


def rs_items(rng: R, turns: list[tuple[str, dict[str, Any]]], odd: float) -> list[Json]:
    items: list[Json] = []
    for role, fields in turns:
        if role in ("system", "reminder"):
            items.append(
                rs_message(rng, pick(rng, ["system", "developer"]), [("text", fields["text"])])
            )
        elif role == "user":
            items.append(
                rs_message(rng, "user" if not chance(rng, 0.1) else "developer", fields["parts"])
            )
        elif role == "tool":
            output: Json = fields["text"]
            if chance(rng, 0.15):
                output = [{"type": "input_text", "text": fields["text"]}]
            items.append(
                {"type": "function_call_output", "call_id": fields["id"], "output": output}
            )
        else:
            items.extend(rs_assistant_items(rng, fields))
    # Noise items anywhere.
    for _ in range(rng.randint(0, 2) if chance(rng, 0.25) else 0):
        items.insert(rng.randrange(len(items) + 1), noise_item(rng, odd))
    if chance(rng, odd * 0.3) and items:
        # Reorder a random adjacent pair.
        i = rng.randrange(len(items))
        j = min(len(items) - 1, i + 1)
        items[i], items[j] = items[j], items[i]
    return items


def rs_assistant_items(rng: R, fields: dict[str, Any]) -> list[Json]:
    """The items of one assistant turn: reasoning, message(s) and function calls, mostly in the
    usual order (reasoning, message, calls), sometimes in another order a client may send
    (reasoning after the message or between calls, the text split over several messages, the
    message after the calls)."""
    reasoning: list[Json] = []
    if "reasoning" in fields and chance(rng, 0.8):
        reasoning.append(reasoning_item(rng, fields["reasoning"]))
    messages: list[Json] = []
    if fields["content"] or (chance(rng, 0.3) and not fields["calls"]):
        content = fields["content"] or ""
        if content and chance(rng, 0.1):
            cut = rng.randrange(len(content) + 1)
            pieces = [content[:cut], content[cut:]]
        else:
            pieces = [content]
        messages = [rs_message(rng, "assistant", [("text", piece)]) for piece in pieces]
    calls = [rs_call_item(rng, call) for call in fields["calls"]]
    order = rng.randrange(10)
    if order == 0:
        return messages + reasoning + calls
    if order == 1:
        return reasoning + calls + messages
    if order == 2 and calls:
        cut = rng.randrange(len(calls) + 1)
        return messages + calls[:cut] + reasoning + calls[cut:]
    return reasoning + messages + calls


def rs_call_item(rng: R, call: dict[str, Any]) -> Json:
    """A function call item (sometimes namespaced or a custom tool call)."""
    item: dict[str, Any] = {
        "type": "function_call",
        "call_id": call["id"],
        "name": call["name"],
        "arguments": call["arguments"],
    }
    if chance(rng, 0.05):
        item["namespace"] = pick(rng, ["ns", "db"])
    if chance(rng, 0.05):
        item = {
            "type": "custom_tool_call",
            "call_id": call["id"],
            "name": call["name"],
            "input": text(rng),
        }
    return item


def rs_message(rng: R, role: str, parts: list[tuple[str, Any]]) -> Json:
    message: dict[str, Any] = {"role": role, "content": rs_content(rng, parts, role)}
    if chance(rng, 0.5):
        message = {"type": "message", **message}
    return message


def reasoning_item(rng: R, reasoning: str) -> Json:
    roll = rng.random()
    item: dict[str, Any] = {"type": "reasoning"}
    if roll < 0.7:
        item["content"] = [{"type": "reasoning_text", "text": reasoning}]
        if chance(rng, 0.2):
            item["content"].append({"type": "reasoning_text", "text": text(rng)})
    if chance(rng, 0.4):
        item["summary"] = [{"type": "summary_text", "text": text(rng)}] if chance(rng, 0.5) else []
    if chance(rng, 0.2):
        item["encrypted_content"] = "gAAAA"
    if chance(rng, 0.1):
        item["id"] = "rs_1"
    return item


def noise_item(rng: R, odd: float) -> Json:
    return pick(
        rng,
        [
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {"type": "tool_search_call", "call_id": "ts1", "arguments": {"query": "g"}},
            {
                "type": "tool_search_output",
                "call_id": "ts1",
                "tools": [{"type": "function", "name": "g", "parameters": {"type": "object"}}],
            },
            {"type": "item_reference", "id": "msg_1"},
            {"type": "bogus_item"},
            {"type": "reasoning", "summary": []},
            {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "r"}]},
            {"type": "custom_tool_call_output", "call_id": "c9", "output": "o"},
            {"type": "function_call_output", "call_id": "nope", "output": "o"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "A"}]},
            {"role": "user", "content": []},
            {"role": "assistant", "content": ""},
        ],
    )


def rs_tool_choice(rng: R, tools: list[dict[str, Any]], odd: float) -> Json:
    roll = rng.random()
    if roll < 0.5 or (not chance(rng, odd * 3) and roll >= 0.85):
        return pick(rng, ["none", "auto", "required"])
    if roll < 0.85:
        name = (
            pick(rng, tools)["name"]
            if tools and not chance(rng, odd)
            else pick(rng, ["zz", "ns__g", "apply_patch"])
        )
        return {"type": pick(rng, ["function", "function", "custom"]), "name": name}
    return pick(
        rng,
        [
            {"type": "web_search"},
            {"type": "allowed_tools", "tools": []},
            "any",
            {"type": "function"},
            None,
        ],
    )


def rs_request(rng: R, spec: Spec) -> Json:
    odd = spec.odd
    request: dict[str, Any] = {"model": model(rng, odd)}
    system_texts = [f["text"] for r, f in spec.turns if r == "system"]
    if system_texts and chance(rng, 0.5):
        request["instructions"] = system_texts[0]
        turns = [t for t in spec.turns if t[0] != "system" or t[1]["text"] != system_texts[0]]
    else:
        turns = spec.turns
        if chance(rng, 0.1):
            request["instructions"] = text(rng) if not chance(rng, odd) else scalar(rng)
    items = rs_items(rng, turns, odd)
    if (
        len(items) == 1
        and chance(rng, 0.3)
        and isinstance(items[0], dict)
        and isinstance(items[0].get("content"), str)
    ):
        request["input"] = items[0]["content"]
    elif chance(rng, odd * 0.1):
        request["input"] = pick(rng, [[], "", None, 5])
    else:
        request["input"] = items
    tools = [rs_tool(rng, t, odd) for t in spec.tools] + rs_extra_tools(rng, spec.tools, odd)
    if tools:
        rng.shuffle(tools)
        request["tools"] = tools
        if chance(rng, 0.5):
            request["tool_choice"] = rs_tool_choice(rng, spec.tools, odd)
    add_thinking(rng, request, odd, protocol="responses")
    if chance(rng, 0.05):
        request["thinking"] = {"type": "disabled"}
    add_sampling(rng, request, odd, protocol="responses")
    if chance(rng, 0.25):
        text_config: dict[str, Any] = {"format": response_format(rng, odd, protocol="responses")}
        if chance(rng, 0.2):
            text_config["verbosity"] = pick(
                rng, ["low", "medium", "high"] + (["bogus"] if chance(rng, odd) else [])
            )
        request["text"] = text_config
    return request


# --- Messages -------------------------------------------------------------------------------


def ms_tool(rng: R, tool: dict[str, Any], odd: float) -> Json:
    out: dict[str, Any] = {"name": tool["name"]}
    if "description" in tool:
        out["description"] = tool["description"]
    if "parameters" in tool and not chance(rng, odd * 0.1):
        out["input_schema"] = tool["parameters"]
    if chance(rng, 0.05):
        out["strict"] = tool.get("strict", True)
    if chance(rng, 0.03):
        out["cache_control"] = {"type": "ephemeral"}
    return out


def ms_blocks(rng: R, parts: list[tuple[str, Any]]) -> Json:
    if len(parts) == 1 and parts[0][0] == "text" and chance(rng, 0.6):
        return parts[0][1]
    out = []
    for kind, value in parts:
        if kind == "text":
            out.append({"type": "text", "text": value})
        else:
            url = value["url"]
            if url.startswith("data:") and ";base64," in url:
                media, data = url[5:].split(";base64,", 1)
                out.append(
                    {
                        "type": "image",
                        "source": {
                            "type": "base64",
                            "media_type": media
                            if not chance(rng, 0.05)
                            else pick(rng, ["image/jpg", "image/bmp", "text/plain"]),
                            "data": data,
                        },
                    }
                )
            else:
                out.append({"type": "image", "source": {"type": "url", "url": url}})
    if chance(rng, 0.03):
        out.append(
            pick(
                rng,
                [
                    {
                        "type": "document",
                        "source": {"type": "text", "media_type": "text/plain", "data": "d"},
                    },
                    {"type": "image", "source": {"type": "file", "file_id": "f"}},
                    {"type": "redacted_thinking", "data": "x"},
                    {"type": "text"},
                ],
            )
        )
    return out


def ms_messages(
    rng: R, turns: list[tuple[str, dict[str, Any]]], odd: float
) -> tuple[list[Json], Json]:
    system: list[str] = []
    messages: list[Json] = []
    pending_results: list[Json] = []

    def flush_results() -> None:
        if pending_results:
            content = list(pending_results)
            if chance(rng, 0.2):
                content.append({"type": "text", "text": text(rng)})
            messages.append({"role": "user", "content": content})
            pending_results.clear()

    for role, fields in turns:
        if role != "tool":
            flush_results()
        if role in ("system", "reminder"):
            if not messages or chance(rng, 0.7):
                system.append(fields["text"])
            else:
                messages.append({"role": "system", "content": fields["text"]})
        elif role == "user":
            messages.append({"role": "user", "content": ms_blocks(rng, fields["parts"])})
        elif role == "tool":
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": fields["id"]}
            roll = rng.random()
            if roll < 0.6:
                result["content"] = fields["text"]
            elif roll < 0.85:
                result["content"] = [{"type": "text", "text": fields["text"]}]
            elif roll < 0.9:
                result["content"] = [
                    {"type": "tool_reference", "tool_name": pick(rng, TOOL_NAMES[:5])}
                ]
            if chance(rng, 0.1):
                result["is_error"] = True
            pending_results.append(result)
        else:
            blocks: list[Json] = []
            if "reasoning" in fields and chance(rng, 0.85):
                blocks.append(
                    {"type": "thinking", "thinking": fields["reasoning"], "signature": "sig"}
                )
            if fields["content"]:
                blocks.append({"type": "text", "text": fields["content"]})
            for call in fields["calls"]:
                try:
                    arguments = json.loads(call["arguments"])
                except ValueError:
                    arguments = call["arguments"]
                blocks.append(
                    {"type": "tool_use", "id": call["id"], "name": call["name"], "input": arguments}
                )
            if chance(rng, 0.05):
                blocks.append(
                    pick(
                        rng,
                        [
                            {"type": "tool_addition", "tools": []},
                            {"type": "tool_addition", "tools": []},
                            {"type": "tool_addition", "tools": []},
                            {
                                "type": "server_tool_use",
                                "id": "srvtoolu_1",
                                "name": "web_search",
                                "input": {"query": "q"},
                            },
                            {
                                "type": "web_search_tool_result",
                                "tool_use_id": "srvtoolu_1",
                                "content": [],
                            },
                            {"type": "tool_addition", "tools": []},
                        ],
                    )
                )
            if not blocks and chance(rng, 0.7):
                messages.append({"role": "assistant", "content": fields["content"] or ""})
            else:
                messages.append({"role": "assistant", "content": blocks})
    flush_results()
    system_value: Json = None
    if system:
        joined = "\n".join(system) if chance(rng, 0.3) else None
        system_value = (
            joined if joined is not None else [{"type": "text", "text": s} for s in system]
        )
        if chance(rng, 0.5) and len(system) == 1:
            system_value = system[0]
    return messages, system_value


def ms_tool_choice(rng: R, tools: list[dict[str, Any]], odd: float) -> Json:
    roll = rng.random()
    if roll < 0.6 or (not chance(rng, odd * 3) and roll >= 0.9):
        choice: dict[str, Any] = {"type": pick(rng, ["auto", "any", "none"])}
    elif roll < 0.9:
        name = pick(rng, tools)["name"] if tools and not chance(rng, odd) else "zz"
        choice = {"type": "tool", "name": name}
    else:
        return pick(rng, ["auto", {"type": "bogus"}, {"type": "tool"}, None])
    if chance(rng, 0.2):
        choice["disable_parallel_tool_use"] = pick(rng, [True, False])
    return choice


def ms_request(rng: R, spec: Spec) -> Json:
    odd = spec.odd
    messages, system = ms_messages(rng, spec.turns, odd)
    request: dict[str, Any] = {"model": model(rng, odd), "messages": messages}
    if system is not None:
        request["system"] = system
    tools = [ms_tool(rng, t, odd) for t in spec.tools]
    if chance(rng, o(0.06)):
        tools.append(
            pick(
                rng,
                [
                    {"type": "web_search_20250305", "name": "web_search"},
                    {"type": "bash_20250124", "name": "bash"},
                    {"type": "custom", "name": "c", "input_schema": {"type": "object"}},
                    {"type": "text_editor_20250124", "name": "str_replace_editor"},
                ],
            )
        )
    if tools or chance(rng, 0.03):
        request["tools"] = tools
        if chance(rng, 0.5):
            request["tool_choice"] = ms_tool_choice(rng, spec.tools, odd)
    add_thinking(rng, request, odd, protocol="messages")
    add_sampling(rng, request, odd, protocol="messages")
    return request


# --- families -------------------------------------------------------------------------------


def base_spec(rng: R, protocol: str, *, odd: float, tools: int, turns: int) -> Spec:
    spec = Spec(rng, protocol)
    spec.odd = odd
    strict = None
    if chance(rng, 0.15):
        strict = True if chance(rng, 0.8) else pick(rng, [False, None])
    spec.tools = [
        tool_def(rng, odd=odd, strict=strict if chance(rng, 0.9) else None) for _ in range(tools)
    ]
    if not chance(rng, odd * 2):
        seen: set[str] = set()
        for index, tool in enumerate(spec.tools):
            if tool["name"] in seen:
                tool["name"] = f"{tool['name']}_{index}"
            seen.add(tool["name"])
    spec.turns = conversation(rng, spec.tools, odd=odd, turns=turns)
    return spec


def emit(rng: R, spec: Spec) -> Json:
    if spec.protocol == "chat_completions":
        request = cc_request(rng, spec)
    elif spec.protocol == "responses":
        request = rs_request(rng, spec)
    else:
        request = ms_request(rng, spec)
    forcing_choice(rng, request, spec.protocol)
    return request


def forcing_choice(rng: R, request: Json, protocol: str) -> None:
    """Thinking off (mostly) when the tool choice forces a call: thinking mode refuses those."""
    choice = request.get("tool_choice")
    forcing = choice == "required" or (
        isinstance(choice, dict) and choice.get("type") in ("function", "custom", "tool")
    )
    if not forcing or not chance(rng, 0.6):
        return
    if protocol == "responses":
        request["reasoning"] = {"effort": "none"}
    else:
        request["thinking"] = {"type": "disabled"}
        request.pop("reasoning_effort", None)
        request.pop("output_config", None)


def fam_tools(rng: R, protocol: str) -> tuple[str, Json]:
    sub = pick(rng, ["schema", "names", "strict", "odd_types"])
    odd = o({"schema": 0.25, "names": 0.1, "strict": 0.15, "odd_types": 0.4}[sub])
    spec = base_spec(rng, protocol, odd=odd, tools=rng.randint(1, 5), turns=rng.randint(1, 2))
    if sub == "names":
        for tool in spec.tools:
            if chance(rng, 0.4):
                tool["name"] = pick(
                    rng,
                    ["get_weather", "ns__g", "f"] + (BAD_TOOL_NAMES if chance(rng, o(0.5)) else []),
                )
        if spec.tools and chance(rng, o(0.5)):
            spec.tools.append(dict(spec.tools[0]))
    if sub == "strict":
        for tool in spec.tools:
            tool["strict"] = True if chance(rng, 0.85) else pick(rng, [False, None])
            tool["parameters"] = parameters(rng, odd=o(0.15), strictish=chance(rng, 0.7))
    return sub, emit(rng, spec)


def fam_tool_choice(rng: R, protocol: str) -> tuple[str, Json]:
    spec = base_spec(rng, protocol, odd=o(0.1), tools=rng.randint(0, 3), turns=rng.randint(1, 2))
    request = emit(rng, spec)
    choice = {
        "chat_completions": cc_tool_choice,
        "responses": rs_tool_choice,
        "messages": ms_tool_choice,
    }[protocol](rng, spec.tools, o(0.2))
    request["tool_choice"] = choice
    forcing_choice(rng, request, protocol)
    return "choice", request


def fam_params(rng: R, protocol: str) -> tuple[str, Json]:
    spec = base_spec(rng, protocol, odd=o(0.02), tools=rng.randint(0, 1), turns=1)
    request = emit(rng, spec)
    add_sampling(rng, request, o(0.5), protocol=protocol)
    add_sampling(rng, request, o(0.5), protocol=protocol)
    return "sampling", request


def fam_thinking(rng: R, protocol: str) -> tuple[str, Json]:
    spec = base_spec(rng, protocol, odd=o(0.05), tools=rng.randint(0, 2), turns=rng.randint(1, 3))
    if chance(rng, 0.5):
        fields = assistant_fields(rng, odd=0.05)
        fields["prefix"] = True
        if chance(rng, 0.3):
            fields["content"] = ""
        spec.turns.append(("assistant", fields))
    request = emit(rng, spec)
    add_thinking(rng, request, o(0.3), protocol=protocol)
    return pick(rng, ["prefix", "passback", "mode"]), request


def fam_roles(rng: R, protocol: str) -> tuple[str, Json]:
    spec = base_spec(rng, protocol, odd=o(0.3), tools=rng.randint(0, 2), turns=rng.randint(1, 4))
    turns = spec.turns
    for _ in range(rng.randint(1, 3)):
        if not turns:
            break
        i = rng.randrange(len(turns))
        role, fields = turns[i]
        action = rng.randrange(4)
        if action == 0:
            turns.insert(i, (role, dict(fields)))
        elif action == 1 and role in ("user", "system", "reminder"):
            turns[i] = (role, {**fields, "text": "", "parts": [("text", "")]})
        elif action == 2:
            del turns[i]
        else:
            j = rng.randrange(len(turns))
            turns[i], turns[j] = turns[j], turns[i]
    return pick(rng, ["consecutive", "empty", "order"]), emit(rng, spec)


def fam_format(rng: R, protocol: str) -> tuple[str, Json]:
    spec = base_spec(
        rng,
        protocol,
        odd=o(0.1),
        tools=rng.randint(0, 2) if chance(rng, 0.4) else 0,
        turns=rng.randint(1, 2),
    )
    request = emit(rng, spec)
    if protocol == "chat_completions":
        request["response_format"] = response_format(rng, o(0.2), protocol=protocol)
    elif protocol == "responses":
        request["text"] = {"format": response_format(rng, o(0.2), protocol=protocol)}
    else:
        request["output_config"] = {
            "format": {"type": "json_schema", "schema": parameters(rng, odd=0.1)}
        }
    return "response_format", request


def fam_images(rng: R, protocol: str) -> tuple[str, Json]:
    spec = base_spec(rng, protocol, odd=o(0.05), tools=rng.randint(0, 1), turns=rng.randint(1, 2))
    for i, (role, fields) in enumerate(spec.turns):
        if role == "user" and chance(rng, 0.8):
            parts = list(fields["parts"])
            for _ in range(rng.randint(1, 2)):
                url = pick(rng, IMAGE_URLS)
                parts.insert(
                    rng.randrange(len(parts) + 1),
                    (
                        "image",
                        {
                            "url": url,
                            "detail": pick(rng, [None, "low", "high", "auto", "original"]),
                        },
                    ),
                )
            spec.turns[i] = (role, {**fields, "parts": parts})
    return "parts", emit(rng, spec)


def fam_items(rng: R, protocol: str) -> tuple[str, Json]:
    spec = base_spec(rng, protocol, odd=o(0.15), tools=rng.randint(0, 3), turns=rng.randint(1, 4))
    request = emit(rng, spec)
    if protocol == "responses" and isinstance(request.get("input"), list):
        items = request["input"]
        for _ in range(rng.randint(0, 3)):
            items.insert(rng.randrange(len(items) + 1), noise_item(rng, o(0.2)))
        if chance(rng, 0.3):
            rng.shuffle(items)
        return "sequence", request
    if protocol == "messages":
        return "blocks", request
    return "history", request


def fam_realistic(rng: R, protocol: str) -> tuple[str, Json]:
    """Benchmark-style function calling: several rich tools, multi-turn tool use with parallel
    calls, combined with tool_choice, JSON output, a Chat prefix and the thinking settings."""
    style = pick(rng, list(STYLES))
    spec = Spec(rng, protocol)
    spec.odd = o(0.03)
    spec.tools = [benchmark_tool(rng, style, o(0.1)) for _ in range(rng.randint(1, 10))]
    seen: set[str] = set()
    for index, tool in enumerate(spec.tools):
        if tool["name"] in seen:
            tool["name"] = f"{tool['name']}_{index}"
        seen.add(tool["name"])
    spec.turns = tool_use_conversation(rng, spec.tools, turns=rng.randint(1, 4))
    request = emit(rng, spec)
    if chance(rng, 0.3):
        request["tool_choice"] = {
            "chat_completions": cc_tool_choice,
            "responses": rs_tool_choice,
            "messages": ms_tool_choice,
        }[protocol](rng, spec.tools, spec.odd)
        forcing_choice(rng, request, protocol)
    if chance(rng, 0.15):
        fmt = response_format(rng, spec.odd, protocol=protocol)
        if protocol == "chat_completions":
            request["response_format"] = fmt
        elif protocol == "responses":
            request["text"] = {"format": fmt}
        elif isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            request["output_config"] = {"format": {"type": "json_schema", "schema": fmt["schema"]}}
    return style, request


def tool_use_conversation(
    rng: R, tools: list[dict[str, Any]], *, turns: int
) -> list[tuple[str, dict[str, Any]]]:
    """Turns of a well-formed tool-use dialogue: a user asks, the assistant makes 1-4 parallel
    calls (sometimes with text and reasoning), every call gets its result, the assistant
    answers. It ends with a user turn, with tool results, or (sometimes) an assistant prefix."""
    out: list[tuple[str, dict[str, Any]]] = []
    if chance(rng, 0.5):
        out.append(("system", {"text": pick(rng, SYSTEM_PROMPTS)}))
    counter = 0
    for turn in range(turns):
        out.append(("user", {"parts": [("text", text(rng, allow_empty=False))]}))
        if turn == turns - 1 and chance(rng, 0.5):
            break
        calls = []
        for _ in range(rng.randint(1, 4) if chance(rng, 0.8) else 0):
            counter += 1
            tool = pick(rng, tools)
            calls.append(
                {
                    "id": f"call_{counter}",
                    "name": tool["name"],
                    "arguments": benchmark_arguments(rng, tool),
                }
            )
        fields = assistant_fields(rng, odd=0.0, calls=calls)
        out.append(("assistant", fields))
        order = list(calls)
        if chance(rng, 0.2):
            rng.shuffle(order)
        for call in order:
            result = pick(rng, [json.dumps({"result": text(rng)}), text(rng, long=True), ""])
            out.append(("tool", {"id": call["id"], "text": result}))
        if calls and turn == turns - 1 and chance(rng, 0.4):
            return out
        if calls:
            out.append(("assistant", assistant_fields(rng, odd=0.0)))
    if chance(rng, 0.15):
        fields = assistant_fields(rng, odd=0.0)
        fields["prefix"] = True
        out.append(("assistant", fields))
    return out


SYSTEM_PROMPTS = [
    "You are a helpful assistant with access to functions. Use them if required.",
    "You are an expert in composing functions.\nIf none of the functions can be used, point it"
    " out.",
    "Du bist ein hilfreicher Assistent. Antworte auf Deutsch.",
    "Respond in JSON.",
]


def fam_multi_error(rng: R, protocol: str) -> tuple[str, Json]:
    spec = base_spec(rng, protocol, odd=o(0.5), tools=rng.randint(0, 4), turns=rng.randint(1, 3))
    request = emit(rng, spec)
    add_sampling(rng, request, o(0.6), protocol=protocol)
    add_thinking(rng, request, o(0.4), protocol=protocol)
    return "several", request


def fam_random(rng: R, protocol: str) -> tuple[str, Json]:
    spec = base_spec(
        rng,
        protocol,
        odd=o(rng.choice([0.0, 0.05, 0.15])),
        tools=rng.randint(0, 4),
        turns=rng.randint(1, 5),
    )
    return "any", emit(rng, spec)


PNG_DATA = DATA_URL_PNG


def strict_schema(rng: R, depth: int = 0) -> Json:
    """A schema in (or near) the strict model: typed nodes with their keywords, type lists,
    anyOf of typed nodes, $ref; sometimes wrong-typed keywords or broken required lists."""
    roll = rng.random()
    if depth > 2:
        roll = 0.5 + roll / 2
    if roll < 0.08:
        return {
            "anyOf": [strict_schema(rng, depth + 1) for _ in range(rng.randint(0, 2))],
            **({"description": text(rng)} if chance(rng, 0.5) else {}),
        }
    if roll < 0.12:
        return {
            "type": [
                pick(
                    rng,
                    ["string", "number", "integer", "boolean", "null"]
                    + (["object"] if chance(rng, o(0.3)) else []),
                )
                for _ in range(rng.randint(0, 2))
            ]
        }
    if roll < 0.15:
        return {
            "$ref": pick(rng, ["#/$defs/A", "#", "nope"] + ([5] if chance(rng, o(0.3)) else []))
        }
    if roll < 0.45 and depth < 3:
        names = [
            pick(rng, ["a", "b", "city", "x y", "中"])
            for _ in range(rng.randint(0 if chance(rng, o(0.2)) else 1, 3))
        ]
        props = {name: strict_schema(rng, depth + 1) for name in names}
        node: dict[str, Any] = {"type": "object", "properties": props}
        if chance(rng, 0.7):
            required = list(props)
            if chance(rng, o(0.3)):
                required = pick(
                    rng, [required[:-1], [*required, "zz"], required + required[:1], []]
                )
            node["required"] = required
        if chance(rng, 0.6):
            node["additionalProperties"] = (
                False if not chance(rng, o(0.2)) else pick(rng, [True, {}, "x"])
            )
        if chance(rng, 0.3):
            node["description"] = text(rng)
        return node
    kind = pick(rng, ["string", "number", "integer", "boolean", "null", "array"])
    node = {"type": kind}
    if kind == "array":
        node["items"] = (
            strict_schema(rng, depth + 1)
            if not chance(rng, o(0.1))
            else pick(rng, ["string", None])
        )
    if kind in ("number", "integer"):
        for key in (
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "const",
            "default",
        ):
            if chance(rng, 0.15):
                node[key] = (
                    pick(rng, [0, 1, 5, -3, 100])
                    if not chance(rng, o(0.3))
                    else pick(rng, [1.5, -0.0, "1", True, 2**63, {}])
                )
    if kind == "string":
        if chance(rng, 0.2):
            node["enum"] = [text(rng, allow_empty=False)] if not chance(rng, o(0.2)) else [1]
        if chance(rng, 0.15):
            node["format"] = pick(
                rng,
                ["email", "hostname", "ipv4", "ipv6", "uuid"]
                + (["date", "uri"] if chance(rng, o(0.3)) else []),
            )
        if chance(rng, 0.1):
            node["pattern"] = pick(rng, ["^[a-z]+$", "(["])
    if chance(rng, 0.3):
        node["description"] = text(rng) if not chance(rng, o(0.1)) else 5
    if chance(rng, 0.1):
        node["title"] = text(rng)
    return node


def extras_chat(rng: R, request: Json, spec: Spec) -> str:
    messages = request["messages"]
    roll = rng.randrange(6)
    if roll == 0:
        part = {"type": "file"}
        for key in ("file_id", "file_data", "filename"):
            if chance(rng, 0.4):
                part[key] = pick(
                    rng,
                    [
                        "f",
                        "",
                        PNG_DATA,
                        "data:,x",
                        "data:application/pdf;base64,aGk=",
                        "DATA:IMAGE/PNG;BASE64,aGk=",
                    ],
                )
        target = next((m for m in messages if m.get("role") in ("user", "system", "tool")), None)
        if target is not None:
            content = target.get("content")
            target["content"] = (
                content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
            ) + [part]
        return "file_part"
    if roll == 1:
        for message in messages:
            if message.get("role") in ("user", "system", "assistant") and chance(rng, 0.3):
                message["name"] = pick(rng, ["alice", "", 5])
        return "names"
    if roll == 2:
        at = rng.randrange(len(messages) + 1)
        for _ in range(rng.randint(1, 3)):
            messages.insert(
                at, {"role": "latest_reminder", "content": pick(rng, ["", "r", text(rng)])}
            )
        return "reminders"
    if roll == 3:
        for message in messages:
            calls = message.get("tool_calls")
            if calls and chance(rng, 0.5):
                calls.append(dict(calls[0]))
                break
        return "duplicate_calls"
    if roll == 4:
        for index, message in enumerate(messages):
            if message.get("role") == "tool" and chance(rng, 0.5):
                messages.insert(index + 1, dict(message))
                break
        return "duplicate_answers"
    request["stream_options"] = pick(
        rng, [{}, {"include_usage": True}, {"include_usage": None}, [], "x"]
    )
    request["stream"] = pick(rng, [True, True, False])
    return "stream_options"


def extras_responses(rng: R, request: Json, spec: Spec) -> str:
    names = [t.get("name") for t in request.get("tools") or [] if isinstance(t, dict)]
    if chance(rng, 0.1):
        request.setdefault("tools", []).append(
            {
                "type": "tool_search",
                "execution": pick(rng, ["client", "server", None]),
                "description": pick(rng, [None, "d"]),
                "parameters": pick(rng, [None, {"type": "object"}, {"type": "integer"}]),
            }
        )
    items = request.get("input")
    if not isinstance(items, list):
        items = [{"role": "user", "content": items if isinstance(items, str) else "u"}]
        request["input"] = items
    roll = rng.randrange(7)
    if roll == 0:
        call_id = pick(rng, ["ts1", "ts2", "c9"])
        execution = pick(
            rng, [None, "client", "server"] + (["bogus"] if chance(rng, o(0.2)) else [])
        )
        call: dict[str, Any] = {
            "type": "tool_search_call",
            "call_id": call_id,
            "arguments": {"query": text(rng)},
        }
        output: dict[str, Any] = {"type": "tool_search_output", "call_id": call_id, "tools": []}
        if execution is not None:
            call["execution"] = execution
            output["execution"] = execution
        for _ in range(rng.randint(0, 3)):
            output["tools"].append(
                pick(
                    rng,
                    [
                        {
                            "type": "function",
                            "name": pick(rng, ["g", "h", "get_weather"]),
                            "parameters": {"type": "object"},
                        },
                        {"type": "function", "name": "k", "strict": True, "description": "d"},
                        {"type": "custom", "name": "apply_patch"},
                        {
                            "type": "namespace",
                            "name": "ns",
                            "description": pick(rng, ["", "D"]),
                            "tools": [{"type": "function", "name": "h"}],
                        },
                        {"type": "web_search"},
                        {"type": "web_search_2025_08_26", "search_context_size": "low"},
                        {
                            "type": "tool_search",
                            "execution": pick(rng, [None, "client", "server"]),
                            "description": pick(rng, [None, "d"]),
                            "parameters": pick(rng, [None, {"type": "object"}]),
                        },
                        {
                            "type": "function",
                            "name": pick(rng, [n for n in names if isinstance(n, str)] or ["f"]),
                            "parameters": {"type": "object"},
                        },
                    ]
                    + (
                        [
                            {"type": "file_search"},
                            {"type": "custom", "name": "x"},
                            {"type": rng.randrange(8), "name": "apply_patch", "tools": []},
                            {"type": "function", "name": "a b"},
                            {
                                "type": "namespace",
                                "name": "ns",
                                "description": "",
                                "tools": [{"type": rng.randrange(3), "name": "h"}],
                            },
                            {"type": "function", "name": "bad", "parameters": {"type": "integer"}},
                        ]
                        if chance(rng, o(0.3))
                        else []
                    ),
                )
            )
        at = rng.randrange(len(items) + 1)
        items[at:at] = [call, output] if chance(rng, 0.8) else [output, call]
        return "tool_search"
    if roll == 1:
        at = rng.randrange(len(items) + 1)
        items.insert(
            at,
            {
                "type": "function_call_output",
                "output": pick(rng, ["o", [{"type": "input_text", "text": "t"}]]),
            },
        )
        return "output_without_call"
    if roll == 2:
        tools = request.setdefault("tools", [])
        tools.append({"type": "function", "name": "ns__g"})
        tools.append(
            {
                "type": "namespace",
                "name": "ns",
                "description": pick(rng, ["", "D", None]),
                "tools": [
                    {"type": "function", "name": "g"},
                    {"type": "function", "name": pick(rng, ["g_1", "h"])},
                ],
            }
        )
        rng.shuffle(tools)
        return "namespace_collisions"
    if roll == 3:
        at = rng.randrange(len(items) + 1)
        items.insert(
            at,
            pick(
                rng,
                [
                    {"type": "reasoning", "content": [{"type": "reasoning_text", "text": ""}]},
                    {"type": "reasoning"},
                    {"type": "web_search_call", "id": "w"},
                    {"role": "assistant", "content": ""},
                ],
            ),
        )
        return "separators"
    if roll == 4:
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("content"), list):
                item["content"].append(
                    pick(
                        rng,
                        [
                            {"type": "input_image", "image_url": ""},
                            {"type": "input_image", "file_id": ""},
                            {"type": "input_image", "image_url": PNG_DATA, "file_id": "f"},
                            {"type": "input_image", "image_url": "data:,hello"},
                        ],
                    )
                )
                break
        return "image_parts"
    if roll == 5:
        for tool in request.get("tools", []):
            if isinstance(tool, dict) and tool.get("type") == "function" and chance(rng, 0.5):
                tool["defer_loading"] = pick(rng, [True, False, "x"])
        return "defer_loading"
    items.insert(
        rng.randrange(len(items) + 1),
        {"type": "custom_tool_call_output", "call_id": "cx", "output": None},
    )
    items.insert(
        0, {"type": "custom_tool_call", "call_id": "cx", "name": "apply_patch", "input": "i"}
    )
    return "custom_outputs"


def extras_messages(rng: R, request: Json, spec: Spec) -> str:
    messages = request["messages"]
    tools = request.get("tools") or []
    names = [t.get("name") for t in tools if isinstance(t, dict)] or ["f"]
    roll = rng.randrange(7)
    if roll >= 5 and messages:
        return misplaced_blocks(rng, messages, names)
    if roll == 0:
        block = {
            "type": "tool_addition",
            "tool": {
                "type": "tool_reference",
                "name": pick(rng, [*names, "nope"] if chance(rng, o(0.3)) else names),
            },
        }
        content = (
            [block]
            if chance(rng, 0.5)
            else [{"type": "text", "text": pick(rng, ["", "x", text(rng)])}, block]
        )
        role = "system" if not chance(rng, o(0.2)) else pick(rng, ["user", "assistant"])
        messages.insert(rng.randrange(len(messages) + 1), {"role": role, "content": content})
        for tool in tools:
            if isinstance(tool, dict) and chance(rng, 0.5):
                tool["defer_loading"] = True
        return "tool_addition"
    if roll == 1:
        request["metadata"] = pick(rng, [{"user_id": "u"}, {}, {"user_id": 5}, "x"])
        return "metadata"
    if roll == 2:
        for message in messages:
            if isinstance(message.get("content"), list):
                message["content"].insert(0, {"type": "text", "text": ""})
        return "empty_texts"
    if roll == 3:
        target = next((m for m in messages if m.get("role") == "user"), None)
        if target is not None:
            content = (
                target["content"]
                if isinstance(target["content"], list)
                else [{"type": "text", "text": target["content"]}]
            )
            content.append(
                {
                    "type": "document",
                    "source": pick(
                        rng,
                        [
                            {"type": "text", "media_type": "text/plain", "data": "d"},
                            {"media_type": "a/b"},
                            {},
                            {"type": "url", "url": "http://x"},
                        ],
                    ),
                }
            )
            target["content"] = content
        return "documents"
    for message in messages:
        if (
            message.get("role") == "user"
            and isinstance(message.get("content"), list)
            and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in message["content"]
            )
        ):
            message["content"].append(
                pick(rng, [{"type": "text", "text": "t"}, dict(message["content"][0])])
            )
            break
    return "results"


def ms_block_pool(rng: R, messages: list[Json], names: list[str]) -> Json:
    """One content block of any kind (for any role), ids mostly taken from the request."""
    ids = [
        b.get("id")
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ] or ["toolu_x"]
    bad_image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "@@"},
    }
    return pick(
        rng,
        [
            {"type": "text", "text": text(rng)},
            {"type": "text", "text": ""},
            {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}},
            bad_image,
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": "d"},
            },
            {"type": "thinking", "thinking": text(rng), "signature": "s"},
            {
                "type": "tool_use",
                "id": pick(rng, [*ids, "toolu_new"]),
                "name": pick(rng, names),
                "input": {},
            },
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            {"type": "tool_result", "tool_use_id": pick(rng, [*ids, "toolu_zz"]), "content": "r"},
            {
                "type": "tool_result",
                "tool_use_id": pick(rng, ids),
                "content": [
                    pick(
                        rng,
                        [
                            {"type": "tool_reference", "tool_name": pick(rng, [*names, "nope"])},
                            {"type": "text", "text": "t"},
                            {"type": "image", "source": bad_image["source"]},
                        ],
                    )
                ],
            },
            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": pick(rng, names)}},
        ],
    )


def misplaced_blocks(rng: R, messages: list[Json], names: list[str]) -> str:
    """Blocks where their role may not hold them, out of order, or after a tool_use."""
    for _ in range(rng.randint(1, 3)):
        message = pick(rng, messages)
        content = message.get("content")
        if not isinstance(content, list):
            content = [{"type": "text", "text": content}] if isinstance(content, str) else []
        roll = rng.randrange(3)
        if roll == 0 and len(content) > 1:
            rng.shuffle(content)
        elif roll == 1 and message.get("role") == "assistant":
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{rng.randrange(9)}",
                    "name": pick(rng, names),
                    "input": {},
                }
            )
            content.append(ms_block_pool(rng, messages, names))
        else:
            content.insert(rng.randrange(len(content) + 1), ms_block_pool(rng, messages, names))
        message["content"] = content
    return "blocks"


def fam_extras(rng: R, protocol: str) -> tuple[str, Json]:
    spec = base_spec(rng, protocol, odd=o(0.05), tools=rng.randint(0, 3), turns=rng.randint(1, 4))
    request = emit(rng, spec)
    sub = {
        "chat_completions": extras_chat,
        "responses": extras_responses,
        "messages": extras_messages,
    }[protocol](rng, request, spec)
    return sub, request


def fam_strict(rng: R, protocol: str) -> tuple[str, Json]:
    spec = base_spec(rng, protocol, odd=o(0.02), tools=0, turns=rng.randint(1, 2))
    request = emit(rng, spec)
    if chance(rng, 0.6) and protocol != "messages":
        tool_schema = strict_schema(rng)
        if protocol == "chat_completions":
            request["tools"] = [
                {
                    "type": "function",
                    "function": {"name": "f", "strict": True, "parameters": tool_schema},
                }
            ]
        else:
            request["tools"] = [
                {"type": "function", "name": "f", "strict": True, "parameters": tool_schema}
            ]
        if chance(rng, 0.2):
            request["tool_choice"] = "none"
        return "tool", request
    fmt_schema = strict_schema(rng)
    if protocol == "chat_completions":
        request["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "x", "strict": chance(rng, 0.8), "schema": fmt_schema},
        }
    elif protocol == "responses":
        request["text"] = {
            "format": {
                "type": "json_schema",
                "name": "x",
                "strict": chance(rng, 0.8),
                "schema": fmt_schema,
            }
        }
    else:
        tool_schema = strict_schema(rng)
        request["tools"] = [{"name": "f", "input_schema": tool_schema}]
    return "format", request


FAMILIES: list[tuple[str, Callable[[R, str], tuple[str, Json]], float]] = [
    ("tools", fam_tools, 3),
    ("tool_choice", fam_tool_choice, 2),
    ("params", fam_params, 2),
    ("thinking", fam_thinking, 2),
    ("roles", fam_roles, 2),
    ("format", fam_format, 1.5),
    ("images", fam_images, 1),
    ("items", fam_items, 2),
    ("realistic", fam_realistic, 3),
    ("multi_error", fam_multi_error, 1.5),
    ("random", fam_random, 3),
    ("extras", fam_extras, 3),
    ("strict", fam_strict, 2),
]
_WEIGHTS = [w for _, _, w in FAMILIES]


# --- mutations and options ------------------------------------------------------------------


def paths(value: Json, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*prefix, index))


def as_sequence(rng: R, value: dict[str, Json]) -> list[Json]:
    """An object as the list of its values (serde reads a struct from a sequence in field
    order): in document order or shuffled, sometimes one value short or one too many."""
    items = list(value.values())
    if chance(rng, 0.3):
        rng.shuffle(items)
    if items and chance(rng, 0.2):
        items.pop()
    elif chance(rng, 0.2):
        items.append(scalar(rng))
    return items


def mutate(rng: R, request: Json) -> Json:
    all_paths = [p for p in paths(request) if p]
    if not all_paths:
        return request
    path = pick(rng, all_paths)
    parent = request
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    action = rng.randrange(6)
    if action == 5 and isinstance(parent[key], dict):
        parent[key] = as_sequence(rng, parent[key])
    elif action == 0:
        del parent[key]
    elif action == 1:
        parent[key] = any_value(rng)
    elif action == 2 and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(parent[key])))
    elif action == 3:
        parent[key] = pick(rng, [None, "", 0, [], {}, True, "x"])
    else:
        value = parent[key]
        if isinstance(value, str):
            parent[key] = value + pick(rng, SPECIAL_SPELLINGS + WORDS)
        elif isinstance(value, dict):
            value[pick(rng, ["type", "role", "content", "name", "extra", "text", "id"])] = scalar(
                rng
            )
        else:
            parent[key] = scalar(rng)
    return request


def options(rng: R, protocol: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if chance(rng, 0.75):
        return out
    if chance(rng, 0.4):
        out["default_thinking_mode"] = rng.choice([True, False])
    if chance(rng, 0.4):
        out["reasoning_content_behavior"] = rng.choice(["fill_empty", "reject"])
    if chance(rng, 0.2):
        out["responses_web_search"] = rng.choice(["drop", "reject"])
    if chance(rng, 0.2):
        out["messages_web_search"] = rng.choice(["drop", "reject"])
    if chance(rng, 0.15):
        out["thinking_max_tokens_upper_bound"] = pick(rng, [1, 100, 65536, 393216, 1000000])
        out["non_thinking_max_tokens_upper_bound"] = pick(rng, [1, 100, 8192, 393216])
    if chance(rng, 0.05):
        out["model_aliases"] = {
            pick(rng, ["deepseek-chat", "DeepSeek-V4-Pro", "x"]): pick(
                rng, ["DeepseekV4Pro", "DeepseekV41Flash"]
            )
        }
    if chance(rng, 0.03):
        out["model_versions_by_name"] = pick(
            rng,
            [
                {},
                {"DeepSeek-V4-Pro": "DeepseekV41Flash"},
                {"m": "DeepseekV4Pro", "DeepSeek-V4.1-Flash": "DeepseekV41Flash"},
            ],
        )
    if chance(rng, 0.03):
        out["special_tokens"] = pick(
            rng,
            [
                {"image": "<|I|>"},
                {"user": "<|U|>", "assistant": "<|A|>"},
                {"dsml": "|D|"},
                {"thinking_start": "<T>", "thinking_end": "</T>"},
            ],
        )
    return out


def case(seed: int, index: int) -> dict[str, Any]:
    """The case number `index` of `seed`."""
    protocol = PROTOCOLS[index % len(PROTOCOLS)]
    rng = random.Random(f"requests-{seed}-{index}")
    _Scale.value = pick(rng, [0.0, 0.0, 0.0, 0.3, 1.0, 1.5])
    family_index = rng.choices(range(len(FAMILIES)), weights=_WEIGHTS)[0]
    family, builder, _ = FAMILIES[family_index]
    sub, request = builder(rng, protocol)
    category = f"{family}.{sub}"
    if chance(rng, 0.08):
        for _ in range(rng.randint(1, 3)):
            request = mutate(rng, request)
        category = f"mutant.{family}"
    record: dict[str, Any] = {
        "id": f"d{seed}-{ABBREVIATIONS[protocol]}-{index // len(PROTOCOLS):07d}",
        "protocol": protocol,
        "category": category,
        "options": options(rng, protocol),
    }
    if chance(rng, 0.005):
        record["request"] = None
        record["request_raw"] = pick(
            rng,
            [
                json.dumps(request)[:-1],
                json.dumps(request) + " x",
                json.dumps([request]),
                '{"model":"DeepSeek-V4-Pro","messages":[{"role":"user","content":"\\ud83d"}]}',
                '{"model":"DeepSeek-V4-Pro","model":"DeepSeek-V4.1-Flash","messages":[{"role":"user","content":"hi"}],"input":"x"}',
                "",
                "null",
                json.dumps(request, indent=1),
            ],
        )
    elif chance(rng, 0.15):
        # `json.dumps`'s default, as many clients send bodies: every non-ASCII character as a
        # `\u` escape, a surrogate pair for each one beyond the BMP.
        record["request"] = None
        record["request_raw"] = json.dumps(request)
    else:
        record["request"] = request
    return record
