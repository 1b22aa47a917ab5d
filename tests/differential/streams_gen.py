"""Seeded generators of stream cases for the differential harness, and hypothesis strategies.

A case is a stream vector without `expect` (layout: `shared/vectors/README.md` § Stream vectors):
a request of one of the three protocols for V4-Pro or V4.1-Flash, the generator switches, the
parsing-option overrides, the response constructor arguments and the inference chunks. The
reference side (`peer_streams.py`) fills in the converted and effective parsing options and
`expect`.

Model outputs are built from the markup grammar the parser knows (reasoning, `</think>`, DSML
tool-call blocks in the V4 and V4.1 spellings, malformed DSML, JSON documents and fences, stop
sequences, plain and unicode text, special-token spellings) and then cut into pieces at every kind
of boundary: whole, one character per piece, random cuts, cuts inside markers, pieces that end in
a prefix of a marker, empty pieces, newline-only pieces at a section start. Text pieces or token-id
pieces (the V4 tokenizer, with or without log probabilities, UTF-8 split across chunks, special and
invalid ids) carry them.

`generate(seed, count)` is deterministic: case `i` depends only on `(seed, i)`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from deepseek_recipe import Tokenizer
from deepseek_recipe.errors import TokenizerError

Case = dict[str, Any]

PEER_SCRIPT = Path(__file__).resolve().parent / "peer_streams.py"
TOKENIZER_JSON = (
    Path(__file__).resolve().parents[2]
    / "recipe-rs/deepseek-recipe/data/deepseek-v4/tokenizer.json"
)
SHRINK_KEYS = ("inputs", "request")


def peer_args() -> list[str]:
    """Arguments of the peer script after its path (the runner's kind interface)."""
    return [str(TOKENIZER_JSON)]


def check(record: dict[str, Any]) -> list[str]:
    """Mismatches between a stream record's `expect` and this library, byte-level
    (`streams_check.check`; imported lazily because that module imports this one)."""
    from tests.differential.streams_check import check as check_stream_record

    return check_stream_record(record)


PROTOCOLS = ("chat_completions", "responses", "messages")
MODELS = ("DeepSeek-V4-Pro", "DeepSeek-V4.1-Flash")
ID_PREFIXES = {"chat_completions": "chatcmpl-", "responses": "resp_", "messages": "msg_"}
CREATED = 1_700_000_000
THINK_END = "</think>"
DSML = "｜DSML｜"
EOS = "<｜end▁of▁sentence｜>"
BOS = "<｜begin▁of▁sentence｜>"
INVALID_TOKEN_IDS = (99_999_999, 129_280, 200_000)
SPECIAL_TOKEN_OVERRIDE_RATE = 0.15
THINK_END_SPELLINGS = (
    "</T>",
    "</thinking>",
    "</think",
    "<|end_think|>",
    "\uff1c/think\uff1e",  # fullwidth angle brackets
    "END",
    THINK_END,
    "<｜end▁of▁a▁rather▁long▁reasoning▁section｜>",
)
DSML_SPELLINGS = (
    "|D|",
    "DSML",
    "｜dsml｜",
    "｜DSML｜x",
    "<x>",
    DSML,
    "｜a▁much▁longer▁DSML▁spelling｜",
)

# --- tools ------------------------------------------------------------------------------------

REPORTED_TOOLS: list[dict[str, Any]] = [
    {"type": "web_search"},
    {
        "type": "web_search_2025_08_26",
        "search_context_size": "low",
        "user_location": {"type": "approximate", "city": "Paris", "timezone": "Europe/Paris"},
    },
    {"type": "tool_search", "execution": "server", "description": "Finds tools"},
    {"type": "file_search", "vector_store_ids": ["vs_1"]},
    {"type": "web_search_preview"},
    {"type": "code_interpreter", "container": {"type": "auto"}},
]
"""Responses tools other than functions: reported with their settings (web and tool search) or
left out of the response's `tools` (every other type)."""

TOOLS: dict[str, dict[str, Any]] = {
    "get_weather": {
        "description": "Get weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
    "search": {
        "description": "Search",
        "parameters": {
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "opts": {"type": "object"},
                "limit": {"type": "number"},
            },
            "required": ["q"],
        },
    },
    "run_cmd": {
        "description": "Run a command",
        "parameters": {
            "type": "object",
            "properties": {
                "cmd": {"type": "string"},
                "args": {"type": "array"},
                "env": {"type": "object"},
                "dry": {"type": "boolean"},
                "note": {"type": "null"},
            },
        },
    },
    "lookup_v2": {
        "description": "Unicode name",
        "parameters": {"type": "object", "properties": {"键": {"type": "string"}}},
    },
}
NAMESPACE_TOOL = {
    "type": "namespace",
    "name": "fs",
    "description": "Files",
    "tools": [
        {
            "type": "function",
            "name": "read",
            "description": "Read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    ],
}
CUSTOM_TOOL = {"type": "custom", "name": "apply_patch", "description": "Apply a patch"}

# --- text atoms -------------------------------------------------------------------------------

WORDS = (
    "the",
    "quick",
    "brown",
    "fox",
    "hello",
    "world",
    "yes",
    "no",
    "ok",
    "a",
    "is",
    "and",
    "of",
    "to",
    "data",
    "value",
    "Paris",
    "42",
    "-42",
    "1.5",
    "x=1",
    "JSON",
    "café",
    "naïve",
    "über",
    "é",
    "Ωmega",
    "λ",
    "数据",
    "模型",
    "テスト",
    "\U0001d518nicode",  # a letter outside the BMP (MATHEMATICAL FRAKTUR CAPITAL U)
    "😀",
    "🚀",
    "👩‍💻",
    "ü😀",
    "e\u0301",
    "שלום",
    "مرحبا",
    "ключ",
    "&amp;",
    "&quot;",
    "<tag>",
    "</p>",
    "a<b",
    "{",
    "}",
    "[",
    "]",
    "|",
    "｜",
    "*",
    "# Title",
    "* item",
    '"quoted"',
    "back\\slash",
    "tab\tsep",
    "\r\n",
    "\u2028",
    "\x00",
    "\x01",
    "\x1f",
    "\x7f",
    "\ufeff",
    "`",
    "``",
    "```",
)
MARKUP_NOISE = (
    "<think>",
    THINK_END,
    "</thi",
    "</",
    "<",
    "<｜",
    "<｜DSML",
    "｜DSML｜",
    "</｜DSML｜",
    "<|DSML|tool_calls>",
    '<|DSML|invoke name="x">',
    EOS,
    BOS,
    "<｜User｜>",
    "<｜Assistant｜>",
    "```json\n",
    "```\n",
    "\n```",
    "```JSON\n",
    "``` json\n",
    "```js\n",
    'true">',
    'false">',
)
VALUE_ATOMS = (
    "Paris",
    'a"b',
    "x\\y",
    "line\nbreak",
    "tab\there",
    "</x>",
    "<",
    "<｜DSML｜b",
    THINK_END,
    "&quot;",
    "ü😀",
    "  padded  ",
    "\n",
    "",
    "/path/ü.txt",
    "\x02",
    '{"a": 1}',
    "</｜DSML",
)
RAW_VALUES = (
    "1",
    "0",
    "-0",
    "1.50",
    "1e5",
    "-2",
    "12345",
    "true",
    "false",
    "null",
    "[]",
    "{}",
    "[1, 2]",
    '{"a": [null, true]}',
    "{a: 1}",
    "hello world",
    "",
    '{\n  "k": "v"\n}',
    '"s"',
    "3.5",
    '[[0, "s"], {"ключ": false}]',
)
# Raw (`string="false"`) values read as a JSON string by custom tools: escapes, surrogates,
# invalid and unfinished escapes.
RAW_JSON_STRINGS = (
    '"a\\nb\\u0041"',
    '"\\ud83d\\ude00 ok"',
    '"x\\"y" tail',
    '"\\ud83dz"',
    '"\\ud83d\\u0041"',
    '"a\\u0z"',
    '"\\ude00"',
    '"unterminated \\',
    '"a\\u00',
    '"\\q\\/"',
    "not a string",
)
STOP_POOL = (
    "END",
    "##",
    "\n\n",
    "\n",
    "Observation:",
    "停",
    "a<b",
    "<",
    "```",
    "</answer>",
    THINK_END,
    "}",
    '"',
    "x",
    "o",
    "😀",
    "é",
    " ",
    "STOP",
    "<｜DSML｜",
    "DSML",
)
FINGERPRINTS = (None, "fp_0000", "fp_8a3c2d", "fp_ds_v4_20260101")
PROMPT_USAGES = ((0, 0), (5, 0), (17, 17), (128, 64), (1000, 960), (4096, 4096), (70000, 0), (5, 9))
NICE_LOGPROBS = (-0.0, -0.0625, -0.125, -0.25, -0.5, -0.75, -1.0, -1.5, -2.25, -3.0, -4.5, -7.75)
ODD_LOGPROBS = (
    -1e-05,
    -0.1,
    -3.3333333333333335,
    -123456.789,
    -1e-300,
    -9999999999999998.0,
    0.0,
    -1e39,
    1.5,
)


def words(rng: random.Random, low: int = 1, high: int = 6) -> str:
    """A few words and symbols joined by spaces, tabs or newlines."""
    out = []
    for _ in range(rng.randint(low, high)):
        out.append(rng.choice(WORDS))
        out.append(rng.choice((" ", " ", " ", "  ", "\t", "\n", "\n\n", ". ", ", ")))
    return "".join(out[:-1])


def noisy_text(rng: random.Random, noise: float = 0.15) -> str:
    """Words with markup fragments, stop candidates and newline runs mixed in."""
    parts = []
    for _ in range(rng.randint(1, 5)):
        roll = rng.random()
        if roll < noise:
            parts.append(rng.choice(MARKUP_NOISE))
        elif roll < noise * 1.5:
            parts.append("\n" * rng.randint(1, 4))
        else:
            parts.append(words(rng))
    return "".join(parts)


def newlines(rng: random.Random, most: int = 3) -> str:
    """A (possibly empty) run of newlines, sometimes with other whitespace."""
    run = "\n" * rng.randint(0, most)
    if rng.random() < 0.1:
        run += rng.choice((" ", "\t", "\r\n", " \n"))
    return run


# --- DSML -------------------------------------------------------------------------------------


@dataclass
class Dsml:
    """The spelling of one tool-call block: V4 (`tool_calls`, `invoke`), V4.1 (` calls`,
    ` invoke`), or both mixed."""

    v41: bool
    mix: bool

    def tag(self, rng: random.Random, name: str) -> str:
        space = self.v41 if not self.mix else rng.random() < 0.5
        if name == "tool_calls":
            return " calls" if space else "tool_calls"
        return (" " if space else "") + name


def json_value(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value (objects and arrays up to depth 2)."""
    roll = rng.random()
    if depth < 2 and roll < 0.2:
        return {
            rng.choice(("a", "b", "ключ", "名前", "deep")) + str(i): json_value(rng, depth + 1)
            for i in range(rng.randint(0, 3))
        }
    if depth < 2 and roll < 0.35:
        return [json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return rng.choice(
        (0, 1, -7, 3.5, 1000000, True, False, None, "s", 'a"b', "x\\y", "ü😀", "line\nbreak", "")
    )


def raw_value(rng: random.Random) -> str:
    """A non-string parameter value as the model would write it (valid JSON or not)."""
    if rng.random() < 0.5:
        return rng.choice(RAW_VALUES)
    indent = rng.choice((None, None, 1, 2))
    return json.dumps(json_value(rng), ensure_ascii=rng.random() < 0.3, indent=indent)


def string_value(rng: random.Random) -> str:
    """A string parameter value: words, escapes, markup lookalikes, newlines."""
    parts = [
        rng.choice(VALUE_ATOMS) if rng.random() < 0.3 else words(rng, 0, 4)
        for _ in range(rng.randint(0, 3))
    ]
    return "".join(parts)


def parameter(rng: random.Random, dsml: Dsml, malformed: bool) -> str:
    """One `<｜DSML｜parameter …>value</｜DSML｜parameter>` element, maybe malformed."""
    name = rng.choice(
        (
            "city",
            "days",
            "q",
            "opts",
            "limit",
            "cmd",
            "args",
            "env",
            "dry",
            "note",
            "path",
            "input",
            "键",
            "",
        )
    )
    string = rng.random() < 0.55
    value = string_value(rng) if string else raw_value(rng)
    key = f'"{name}"'
    attr = f' string="{"true" if string else "false"}">'
    open_tag = "<" + DSML + dsml.tag(rng, "parameter") + " name="
    close = "</" + DSML + dsml.tag(rng, "parameter") + ">"
    if malformed:
        kind = rng.randrange(12)
        if kind == 0:
            key = rng.choice((f"'{name}'", name, f'"{name}"x', '"a b"', '"a\\"b"'))
        elif kind == 1:
            attr = rng.choice(
                (
                    ' string="yes">',
                    ' string="TRUE">',
                    " string=true>",
                    ' string="true" >',
                    ' string="false"x>',
                    ' string="true" x="1">',
                    ">",
                    ' junk true">',
                    ' s="false">',
                )
            )
        elif kind == 2:
            key = f'"{name}"\t'
            attr = 'string="true">'
        elif kind == 3:
            close = rng.choice(("", "</" + DSML + "par", "</｜DSML", "</parameter>"))
        elif kind == 4:
            open_tag = rng.choice(
                (
                    "<" + DSML + "parameter  name=",
                    "<" + DSML + "PARAMETER name=",
                    "<" + DSML + "\nparameter name=",
                    "< " + DSML + "parameter name=",
                )
            )
        elif kind == 5:
            value = rng.choice(("</｜DSML｜", '<｜DSML｜parameter name="z" string="true">', "\n"))
        elif kind == 6:
            attr = f' string="{"true" if string else "false"}"'
        elif kind == 7:
            value = value + "</" + DSML + "par b"
        elif kind == 8:
            key = '"' + name
        elif kind == 9:
            attr = ""
    return open_tag + key + attr + value + close


def invoke(rng: random.Random, dsml: Dsml, names: list[str], malformed: bool) -> str:
    """One invoke element with 0 to 3 parameters, maybe malformed."""
    name = (
        rng.choice([*names, "unknown_tool", "", "fs__read", "apply_patch", "名前"])
        if (rng.random() < 0.2 or not names)
        else rng.choice(names)
    )
    sep = rng.choice(("\n", "\n", "", " ", "\n\n"))
    params = [
        parameter(rng, dsml, malformed and rng.random() < 0.4) for _ in range(rng.randint(0, 3))
    ]
    if name == "apply_patch" and rng.random() < 0.7:
        body = rng.choice(
            (
                '*** Begin Patch\n*** Add File: a.txt\n+hello "x" ü\n*** End Patch',
                "",
                "a\\nb",
                "line\n",
                string_value(rng),
            )
        )
        kind = rng.choice(("true", "true", "true", "false"))
        if kind == "false" and rng.random() < 0.7:
            body = rng.choice(RAW_JSON_STRINGS)
        params = [
            "<"
            + DSML
            + dsml.tag(rng, "parameter")
            + f' name="input" string="{kind}">'
            + body
            + "</"
            + DSML
            + dsml.tag(rng, "parameter")
            + ">"
        ]
        if rng.random() < 0.2:
            params.append(parameter(rng, dsml, False))
    start = "<" + DSML + dsml.tag(rng, "invoke") + f' name="{name}">'
    end = "</" + DSML + dsml.tag(rng, "invoke") + ">"
    if malformed:
        kind = rng.randrange(10)
        if kind == 0:
            start = rng.choice(
                (
                    "<" + DSML + 'INVOKE name="x">',
                    "<" + DSML + 'invoke  name="x">',
                    "<" + DSML + 'invoke\tname="x">',
                    "<" + DSML + "invoke name ='x'>",
                    "<" + DSML + "invoke name='x'>",
                    "< " + DSML + 'invoke name="x">',
                    "<" + DSML + '\ninvoke name="x">',
                    "<" + DSML + 'invoke name="a" b">',
                )
            )
        elif kind == 1:
            end = ""
        elif kind == 2:
            params.insert(
                rng.randint(0, len(params)),
                rng.choice(
                    (
                        "junk",
                        "<" + DSML + "xyz>",
                        THINK_END,
                        "<" + DSML + 'invoke name="n">',
                        "\n\n",
                    )
                ),
            )
        elif kind == 3:
            start = "<" + DSML + dsml.tag(rng, "invoke") + f' name="{name}'
        elif kind == 4:
            end = "</" + DSML + rng.choice(("x>", "tool_calls>", "invok", ">"))
    return start + sep + sep.join(params) + (sep if params else "") + end


def tool_block(rng: random.Random, names: list[str], malformed: bool) -> str:
    """A whole tool-call block (opener, invokes, closer), maybe malformed or cut short."""
    dsml = Dsml(v41=rng.random() < 0.5, mix=rng.random() < 0.1)
    sep = rng.choice(("\n", "\n", "", "\n\n"))
    invokes = [
        invoke(rng, dsml, names, malformed and rng.random() < 0.5)
        for _ in range(rng.choice((0, 1, 1, 1, 2, 2, 3)))
    ]
    opener = "<" + DSML + dsml.tag(rng, "tool_calls") + ">"
    closer = "</" + DSML + dsml.tag(rng, "tool_calls") + ">"
    if malformed:
        kind = rng.randrange(8)
        if kind == 0:
            opener = rng.choice(
                (
                    "<" + DSML + "tool_call>",
                    "<" + DSML + " tool_call>",
                    "<" + DSML + "foo>",
                    "<" + DSML,
                )
            )
        elif kind == 1:
            closer = ""
        elif kind == 2:
            invokes.insert(
                0,
                rng.choice(
                    (
                        "junk text",
                        "<" + DSML + "xyz>",
                        THINK_END,
                        "<" + DSML + 'parameter name="q" string="true">v',
                    )
                ),
            )
        elif kind == 3:
            closer += rng.choice(
                (
                    "\ntrailing text",
                    "<" + DSML + "tool_calls>\n" + invokes[0] if invokes else "x",
                    THINK_END + "after",
                )
            )
    block = opener + sep + sep.join(invokes) + (sep if invokes else "") + closer
    if malformed and rng.random() < 0.25:
        block = block[: rng.randint(0, len(block))]
    return block


# --- JSON output ------------------------------------------------------------------------------


def json_document(rng: random.Random) -> str:
    """Content for JSON output mode: a fenced or bare document with text around it."""
    doc = json.dumps(
        json_value(rng) if rng.random() < 0.3 else {"k": json_value(rng)},
        ensure_ascii=False,
        indent=rng.choice((None, 1)),
    )
    before = rng.choice(
        (
            "",
            "",
            "Here:\n",
            "text ",
            "\n\n",
            "`",
            "``x",
            "```JSON\n",
            "``` json\n",
            "```js\n",
            "[1] ",
            "null ",
            '"s" ',
        )
    )
    after = rng.choice(("", "", "\n", " done", "\n\nmore {x}", "```", "\n``` tail"))
    form = rng.randrange(4)
    if form == 0:
        return before + "```json\n" + doc + "\n```" + after
    if form == 1:
        return before + "```\n" + doc + "\n```" + after
    if form == 2:
        return before + doc + after
    return before + words(rng)


# --- whole model outputs ----------------------------------------------------------------------


@dataclass
class Plan:
    """What the request asks for, as far as the model output builder cares."""

    protocol: str
    model: str
    thinking: bool
    tools: list[str] = field(default_factory=list)
    required_tool: bool = False
    json_mode: bool = False
    stops: list[str] = field(default_factory=list)
    prefix: str | None = None
    # Conversion-option overrides of special-token spellings (`SpecialTokens` field names).
    special_tokens: dict[str, str] = field(default_factory=dict)


def model_output(rng: random.Random, plan: Plan) -> str:
    """The full text a model might produce for the plan, following or breaking the grammar."""
    names = list(plan.tools) or ["get_weather"]
    malformed = rng.random() < 0.3
    parts: list[str] = []
    in_reasoning = plan.thinking and plan.prefix != "content" and not plan.required_tool
    if plan.required_tool:
        parts.append(rng.choice(("", "", "junk ", "\n", "<" + DSML + "tool_calls>\n")))
        parts.append(tool_block(rng, names, malformed)[rng.choice((0, 0, 14, 16)) :])
        if rng.random() < 0.2:
            parts.append(noisy_text(rng))
        return "".join(parts)
    if in_reasoning or rng.random() < 0.15:
        parts.append(newlines(rng))
        parts.append(noisy_text(rng, 0.1) if rng.random() < 0.9 else "")
        if rng.random() < 0.15 and plan.tools:
            parts.append(newlines(rng) + tool_block(rng, names, malformed))
            return "".join(parts)
        parts.append(newlines(rng))
        if rng.random() < 0.85:
            parts.append(THINK_END)
    parts.append(newlines(rng))
    if plan.json_mode and rng.random() < 0.8:
        parts.append(json_document(rng))
    elif rng.random() < 0.85:
        parts.append(noisy_text(rng))
    if plan.stops and rng.random() < 0.6:
        at = rng.randrange(len(parts) + 1)
        parts.insert(at, rng.choice(plan.stops))
    if plan.tools and rng.random() < 0.55:
        parts.append(newlines(rng) + tool_block(rng, names, malformed))
        if rng.random() < 0.1:
            parts.append(noisy_text(rng))
    elif rng.random() < 0.2:
        parts.append(newlines(rng))
    return "".join(parts)


# --- splitting --------------------------------------------------------------------------------

MARKERS = (
    THINK_END,
    "<" + DSML,
    "</" + DSML,
    DSML,
    "```json\n",
    "```\n",
    "\n```",
    'true">',
    'false">',
    'invoke name="',
    "parameter name=",
)


def marker_cuts(rng: random.Random, text: str, extra: list[str]) -> list[int]:
    """Cut points inside and at the edges of markers (and stop sequences) found in `text`."""
    cuts = []
    for marker in (*MARKERS, *extra):
        if not marker:
            continue
        start = text.find(marker)
        while start != -1:
            cuts.append(start + rng.randint(0, len(marker)))
            start = text.find(marker, start + 1)
    return cuts


def split_text(rng: random.Random, text: str, stops: list[str]) -> list[str]:
    """Cut `text` into pieces at one kind of boundary chosen at random."""
    how = rng.randrange(8)
    if how == 0 or not text:
        cuts: list[int] = []
    elif how == 1:
        cuts = list(range(1, len(text)))
    elif how in (2, 3):
        cuts = [rng.randint(0, len(text)) for _ in range(rng.randint(1, 12))]
    elif how in (4, 5):
        cuts = marker_cuts(rng, text, stops)
        cuts += [rng.randint(0, len(text)) for _ in range(rng.randint(0, 3))]
    elif how == 6:
        cuts = [i for i, ch in enumerate(text) if ch == "\n" or (i and text[i - 1] == "\n")]
    else:
        cuts = [rng.randint(0, len(text)) for _ in range(rng.randint(1, 4))]
        cuts += marker_cuts(rng, text, stops)
        cuts += [i for i in range(len(text)) if rng.random() < 0.1]
    pieces = []
    last = 0
    for cut in sorted(set(cuts)):
        if 0 < cut < len(text):
            pieces.append(text[last:cut])
            last = cut
    pieces.append(text[last:])
    return insert_empty_pieces(rng, pieces)


def insert_empty_pieces(rng: random.Random, pieces: list[str]) -> list[str]:
    """Sometimes adds empty pieces anywhere (the parser must emit or swallow them exactly)."""
    if rng.random() < 0.2:
        for _ in range(rng.randint(1, 3)):
            pieces.insert(rng.randint(0, len(pieces)), "")
    return pieces


@cache
def tokenizer() -> Tokenizer:
    """The V4 tokenizer (encodes model output into token-id inputs)."""
    return Tokenizer.deepseek_v4()


def special_ids() -> list[int]:
    """A few special token ids: BOS, EOS, `<think>`, `</think>`, DSML, role markers."""
    tok = tokenizer()
    return [
        tok.encode(s, allow_special=True)[0]
        for s in (BOS, EOS, "<think>", THINK_END, DSML, "<｜User｜>", "<｜Assistant｜>")
    ]


def logprob(rng: random.Random) -> float:
    return rng.choice(ODD_LOGPROBS) if rng.random() < 0.03 else rng.choice(NICE_LOGPROBS)


def token_inputs(rng: random.Random, text: str) -> list[dict[str, Any]]:
    """The output as token-id chunks: encoded, perturbed, cut, maybe with log probabilities.
    Sometimes one side of a cut spells the special tokens with ordinary tokens."""
    ids = tokenizer().encode(text, allow_special=True)
    if rng.random() < 0.05:
        cut = rng.randint(0, len(text))
        ordinary_first = rng.random() < 0.5
        ids = tokenizer().encode(text[:cut], allow_special=not ordinary_first) + tokenizer().encode(
            text[cut:], allow_special=ordinary_first
        )
    if rng.random() < 0.15:
        for _ in range(rng.randint(1, 3)):
            extra = rng.choice(
                (
                    rng.choice(INVALID_TOKEN_IDS),
                    rng.choice(special_ids()),
                    rng.randrange(129_280),
                    28927,
                    3128,
                    245,
                )
            )
            ids.insert(rng.randint(0, len(ids)), extra)
    how = rng.randrange(4)
    if how == 0:
        sizes = [1] * len(ids)
    elif how == 1:
        sizes = [len(ids)]
    else:
        sizes = []
        left = len(ids)
        while left > 0:
            size = rng.choice((0, 1, 1, 2, 3, 5, 8))
            sizes.append(min(size, left))
            left -= size
    with_logprobs = rng.random() < 0.4
    chunks = []
    at = 0
    for size in sizes:
        chunk_ids = ids[at : at + size]
        at += size
        logprobs = None
        if with_logprobs and rng.random() < 0.9:
            logprobs = [
                [
                    logprob(rng),
                    [
                        [
                            rng.choice((tid, rng.randrange(129_280), INVALID_TOKEN_IDS[0])),
                            logprob(rng),
                        ]
                        for _ in range(rng.randint(0, 2))
                    ],
                ]
                for tid in chunk_ids
            ]
        chunks.append({"kind": "tokens", "token_ids": chunk_ids, "logprobs": logprobs})
    return chunks


def text_inputs(rng: random.Random, text: str, stops: list[str]) -> list[dict[str, Any]]:
    """The output as text chunks with token counts."""
    return [
        {"kind": "text", "content": piece, "token_count": rng.choice((0, 1, 1, 1, 2, 5))}
        for piece in split_text(rng, text, stops)
    ]


def swap_kinds(rng: random.Random, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same output with some chunks given as the other kind: token chunks as their decoded
    text, text chunks as their token ids (special spellings as special tokens or as ordinary
    tokens), so tags, stops and newlines straddle text and token-id input."""
    out = []
    for chunk in chunks:
        if rng.random() >= 0.4:
            out.append(chunk)
        elif chunk["kind"] == "tokens" and chunk["token_ids"]:
            try:
                text = tokenizer().decode(chunk["token_ids"])
            except TokenizerError:  # an invalid id stays a token
                out.append(chunk)
                continue
            if "\ufffd" in text:
                out.append(chunk)
            else:
                out.append(
                    {"kind": "text", "content": text, "token_count": len(chunk["token_ids"])}
                )
        elif chunk["kind"] == "text" and chunk["content"]:
            ids = tokenizer().encode(chunk["content"], allow_special=rng.random() < 0.7)
            out.append({"kind": "tokens", "token_ids": ids, "logprobs": None})
        else:
            out.append(chunk)
    return out


def ready_input(rng: random.Random, usage: tuple[int, int]) -> dict[str, Any]:
    chunk: dict[str, Any] = {"kind": "ready"}
    if rng.random() < 0.93:
        chunk["prompt_tokens"], chunk["prompt_cache_hit_tokens"] = usage
    if rng.random() < 0.8:
        chunk["system_fingerprint"] = rng.choice(FINGERPRINTS)
    return chunk


def inputs_for(
    rng: random.Random, text: str, plan: Plan, usage: tuple[int, int], tokens: bool
) -> list[dict[str, Any]]:
    """Ready, output chunks, finish: with the odd variants (no ready, two readies, no finish)."""
    cut_markers = [*plan.stops, *plan.special_tokens.values()]
    chunks = token_inputs(rng, text) if tokens else text_inputs(rng, text, cut_markers)
    if tokens and rng.random() < 0.1:
        mixed = text_inputs(rng, noisy_text(rng), cut_markers)
        chunks[rng.randint(0, len(chunks)) : 0] = mixed
    if rng.random() < 0.05:
        chunks = swap_kinds(rng, chunks)
    out = []
    if rng.random() < 0.93:
        out.append(ready_input(rng, usage))
    out += chunks
    if rng.random() < 0.03:
        out.insert(rng.randint(min(1, len(out)), len(out)), ready_input(rng, (9, 3)))
    if rng.random() < 0.85:
        reason = rng.choice(("stop", "stop", "stop", "length", "content_filter"))
        out.append({"kind": "finish", "finish_reason": reason})
    return out


# --- requests ---------------------------------------------------------------------------------


def chat_request(rng: random.Random, plan: Plan) -> dict[str, Any]:
    body: dict[str, Any] = {"model": plan.model, "messages": [{"role": "user", "content": "Hi"}]}
    stream = rng.random()
    if stream < 0.85:
        body["stream"] = True
    elif stream < 0.93:
        body["stream"] = False
    if body.get("stream") and rng.random() < 0.2:
        body["stream_options"] = {"include_usage": rng.random() < 0.7}
    thinking = rng.random()
    if not plan.thinking:
        body["thinking"] = {"type": "disabled"}
    elif thinking < 0.5:
        body["thinking"] = {"type": "enabled"}
    if plan.tools:
        body["tools"] = [
            {"type": "function", "function": {"name": name, **TOOLS[name]}} for name in plan.tools
        ]
        if plan.required_tool:
            body["tool_choice"] = rng.choice(
                ("required", {"type": "function", "function": {"name": plan.tools[0]}})
            )
        elif rng.random() < 0.15:
            body["tool_choice"] = rng.choice(("auto", "none"))
    if plan.json_mode:
        body["response_format"] = {"type": "json_object"}
        body["messages"][0]["content"] = "Reply in json please"
    elif rng.random() < 0.05:
        response_format: dict[str, Any] = {"type": rng.choice(("text", "json_schema"))}
        if response_format["type"] == "json_schema":
            response_format["json_schema"] = {"name": "s", "schema": {"type": "object"}}
        body["response_format"] = response_format
    if plan.stops:
        body["stop"] = plan.stops[0] if len(plan.stops) == 1 and rng.random() < 0.5 else plan.stops
    if rng.random() < 0.15:
        body["logprobs"] = True
        body["top_logprobs"] = rng.randint(0, 3)
    if plan.prefix is not None:
        message: dict[str, Any] = {"role": "assistant", "content": "", "prefix": True}
        if plan.prefix == "content":
            message["content"] = rng.choice(("The answer", "\n", "x\n\n"))
        if plan.thinking:
            message["reasoning_content"] = rng.choice(("I was thinking", "done", "", "\n"))
        body["messages"].append(message)
    return body


def responses_request(rng: random.Random, plan: Plan) -> dict[str, Any]:
    body: dict[str, Any] = {"model": plan.model, "input": rng.choice(("Hi", "数据?"))}
    if rng.random() < 0.9:
        body["stream"] = True
    if not plan.thinking:
        body["reasoning"] = {"effort": "none"}
    elif rng.random() < 0.4:
        body["reasoning"] = {
            "effort": rng.choice(("low", "high", "xhigh")),
            **({"summary": "auto"} if rng.random() < 0.3 else {}),
        }
    tools: list[dict[str, Any]] = [
        {"type": "function", "name": name, **TOOLS[name]} for name in plan.tools
    ]
    for tool in tools:
        if rng.random() < 0.1:
            del tool["description"]
    if plan.tools and rng.random() < 0.25:
        namespace = dict(NAMESPACE_TOOL)
        if rng.random() < 0.2:
            del namespace["description"]
        tools.insert(0, namespace)
    if plan.tools and rng.random() < 0.2:
        tools.insert(0, CUSTOM_TOOL)
    if rng.random() < 0.1:
        # Tools the response reports in their own shape, or leaves out.
        tools.insert(rng.randrange(len(tools) + 1), rng.choice(REPORTED_TOOLS))
    if tools:
        body["tools"] = tools
        if plan.required_tool:
            body["tool_choice"] = rng.choice(
                ("required", {"type": "function", "name": plan.tools[0]})
            )
        elif rng.random() < 0.1:
            body["tool_choice"] = rng.choice(("auto", "none"))
    if plan.json_mode:
        body["text"] = {"format": {"type": "json_object"}}
        body["input"] = "Reply in json please"
    if rng.random() < 0.15:
        body.update(
            {
                "instructions": "Be brief",
                "max_output_tokens": 2000,
                "temperature": 0.5,
                "top_p": 0.875,
                "user": "user-1",
                "parallel_tool_calls": False,
                "metadata": {"k": "v"},
            }
        )
        body.setdefault("text", {})["verbosity"] = rng.choice(("low", "medium"))
    if rng.random() < 0.1:
        body["top_logprobs"] = rng.randint(0, 3)
    return body


def messages_request(rng: random.Random, plan: Plan) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": plan.model,
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "What's up?"}],
    }
    if rng.random() < 0.9:
        body["stream"] = True
    if not plan.thinking:
        body["thinking"] = {"type": "disabled"}
    elif rng.random() < 0.5:
        body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    if plan.tools:
        body["tools"] = [
            {
                "name": name,
                "description": TOOLS[name]["description"],
                "input_schema": TOOLS[name]["parameters"],
            }
            for name in plan.tools
        ]
        if plan.required_tool:
            body["tool_choice"] = {"type": "tool", "name": plan.tools[0]}
        elif rng.random() < 0.15:
            body["tool_choice"] = {"type": rng.choice(("auto", "any", "none"))}
    if plan.stops:
        body["stop_sequences"] = plan.stops
    if rng.random() < 0.1:
        body["system"] = "Be brief"
    return body


REQUEST_BUILDERS: dict[str, Callable[[random.Random, Plan], dict[str, Any]]] = {
    "chat_completions": chat_request,
    "responses": responses_request,
    "messages": messages_request,
}


def generator_spec(rng: random.Random, plan: Plan, response_id: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"id": response_id, "model": plan.model}
    if rng.random() < 0.03:
        spec["model"] = rng.choice(("deepseek-chat", "", "模型"))
    if plan.protocol == "responses":
        spec["echo"] = rng.random() < 0.85
        spec["namespace_tool_map"] = rng.random() < 0.5
    elif plan.protocol == "messages":
        spec["signature"] = rng.choice((None, None, None, "sig-abc123", "Ensig==", ""))
        spec["direct_thinking_mode"] = rng.choice((True, False)) if rng.random() < 0.1 else None
    return spec


def parsing_overrides(rng: random.Random) -> dict[str, Any]:
    """Occasional overrides of the converted parsing options."""
    if rng.random() > 0.12:
        return {}
    overrides: dict[str, Any] = {}
    for _ in range(rng.randint(1, 2)):
        key = rng.choice(
            (
                "thinking_initial_stage",
                "stop_sequences",
                "parse_json_output",
                "parse_tool_calls",
                "starts_in_tool_calls",
            )
        )
        if key == "thinking_initial_stage":
            overrides[key] = rng.choice(
                (None, "ReasoningStart", "ReasoningContinuation", "ContentContinuation")
            )
        elif key == "stop_sequences":
            overrides[key] = rng.sample(STOP_POOL, rng.randint(0, 3))
        else:
            overrides[key] = rng.random() < 0.5
    return overrides


# --- cases ------------------------------------------------------------------------------------


def plan_for(rng: random.Random, category: str) -> Plan:
    """The request plan of a category (random protocol and model)."""
    protocol = rng.choice(PROTOCOLS)
    model = rng.choice(MODELS)
    thinking = rng.random() < 0.6
    plan = Plan(protocol=protocol, model=model, thinking=thinking)
    if category in ("tool_calls", "malformed_dsml", "split_tag", "required_tool") or (
        rng.random() < 0.4
    ):
        plan.tools = rng.sample(list(TOOLS), rng.randint(1, 3))
    if category == "required_tool" and plan.tools:
        plan.thinking = False
        plan.required_tool = True
    if category == "json_output" or rng.random() < 0.05:
        plan.json_mode = protocol != "messages"
    if category == "stop_sequences" or rng.random() < 0.08:
        if protocol != "responses":
            plan.stops = rng.sample(STOP_POOL, rng.randint(1, 3))
    if category == "prefix_stage" or rng.random() < 0.03:
        if protocol == "chat_completions":
            # The API rejects a prefix continuation with tools or JSON output.
            plan.prefix = rng.choice(("reasoning", "content")) if plan.thinking else "content"
            plan.tools, plan.json_mode = [], False
    if rng.random() < SPECIAL_TOKEN_OVERRIDE_RATE:
        plan.special_tokens = special_token_overrides(rng)
    return plan


def special_token_overrides(rng: random.Random) -> dict[str, str]:
    """Overridden spellings of the thinking end and/or the DSML token (what the parser reads),
    sometimes with one the parser ignores: longer or shorter than the defaults, prefixes and
    extensions of them, the default itself."""
    overrides: dict[str, str] = {}
    for name, pool in (("thinking_end", THINK_END_SPELLINGS), ("dsml", DSML_SPELLINGS)):
        if rng.random() < 0.7:
            overrides[name] = rng.choice(pool)
    if not overrides or rng.random() < 0.2:
        overrides["eos"] = "<E>"
    return overrides


def respell(rng: random.Random, text: str, overrides: dict[str, str]) -> str:
    """`text` with most occurrences of the default thinking end and DSML token written in their
    overridden spellings (the rest stay default: plain text to the parser)."""
    for name, default in (("thinking_end", THINK_END), ("dsml", DSML)):
        spelling = overrides.get(name)
        if spelling is None:
            continue
        parts = text.split(default)
        text = parts[0] + "".join(
            (spelling if rng.random() < 0.85 else default) + part for part in parts[1:]
        )
    return text


CATEGORIES = {
    # category: weight
    "plain": 8,
    "thinking": 10,
    "tool_calls": 14,
    "malformed_dsml": 12,
    "split_tag": 12,
    "tokens": 12,
    "json_output": 8,
    "stop_sequences": 8,
    "required_tool": 4,
    "prefix_stage": 4,
    "whitespace": 5,
    "errors": 3,
}


def build_case(rng: random.Random, category: str) -> Case:
    """One case of `category`."""
    plan = plan_for(rng, category)
    request = REQUEST_BUILDERS[plan.protocol](rng, plan)
    response_id = ID_PREFIXES[plan.protocol] + f"{rng.getrandbits(48):012x}"
    usage = rng.choice(PROMPT_USAGES)
    text = model_output(rng, plan)
    if plan.special_tokens:
        text = respell(rng, text, plan.special_tokens)
    if category == "whitespace":
        text = (
            "".join(
                rng.choice(("\n", "\n\n", " ", "\t", THINK_END, "x", "\r\n", ""))
                for _ in range(rng.randint(1, 10))
            )
            + text[: rng.randint(0, 20)]
        )
    if category == "split_tag":
        tokens = False
    else:
        tokens = category == "tokens" or rng.random() < 0.1
    inputs = inputs_for(rng, text, plan, usage, tokens)
    has_tokenizer = rng.random() > 0.02
    if category == "errors":
        inputs = error_inputs(rng, inputs)
        has_tokenizer = rng.random() < 0.7
    spec = generator_spec(rng, plan, response_id)
    case: Case = {
        "id": "",
        "protocol": plan.protocol,
        "category": category,
        "request": request,
        "generator": spec,
        "tokenizer": has_tokenizer,
        "parsing_overrides": parsing_overrides(rng),
        "response_init": {
            "id": response_id,
            "model": spec["model"],
            "created": CREATED,
            "prompt_tokens": usage[0],
            "prompt_cache_hit_tokens": usage[1],
        },
        "inputs": inputs,
    }
    if plan.special_tokens:
        case["options"] = {"special_tokens": plan.special_tokens}
    return case


def error_inputs(rng: random.Random, inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Inputs that provoke a stream error: pushes after the end, logprob count mismatches."""
    out = list(inputs)
    kind = rng.randrange(4)
    if kind == 0:
        out.append({"kind": "text", "content": "late", "token_count": 1})
    elif kind == 1:
        out.append({"kind": "finish", "finish_reason": "stop"})
        out.append({"kind": "finish", "finish_reason": "length"})
    elif kind == 2:
        ids = [67, 68, 69][: rng.randint(0, 3)]
        logprobs = [[-0.5, []] for _ in range(len(ids) + rng.choice((-1, 1)) if ids else 1)]
        out.insert(
            rng.randint(min(1, len(out)), len(out)),
            {"kind": "tokens", "token_ids": ids, "logprobs": logprobs},
        )
    else:
        out.insert(
            rng.randint(min(1, len(out)), len(out)),
            {"kind": "tokens", "token_ids": [67], "logprobs": None},
        )
    return out


def case_rng(seed: int, index: int) -> random.Random:
    """The random source of case `index` of run `seed`."""
    return random.Random(f"streams-{seed}-{index}")


def generate(seed: int, count: int) -> Iterator[Case]:
    """`count` stream cases; case `i` depends only on `(seed, i)`."""
    names = list(CATEGORIES)
    weights = list(CATEGORIES.values())
    for index in range(count):
        rng = case_rng(seed, index)
        category = rng.choices(names, weights)[0]
        case = build_case(rng, category)
        case["id"] = f"d{seed}-{category}-{index:06d}"
        yield case


# --- hypothesis -------------------------------------------------------------------------------


@st.composite
def stream_cases(draw: st.DrawFn, categories: tuple[str, ...] = tuple(CATEGORIES)) -> Case:
    """A stream case of one of `categories` (shrinks towards small seeds and early categories)."""
    category = draw(st.sampled_from(categories))
    seed = draw(st.integers(min_value=0, max_value=2**32 - 1))
    case = build_case(random.Random(seed), category)
    case["id"] = f"h{seed}-{category}"
    return case


@st.composite
def splits(draw: st.DrawFn, text: str) -> list[str]:
    """`text` cut at hypothesis-chosen offsets, with empty pieces allowed anywhere."""
    cuts = draw(st.lists(st.integers(min_value=0, max_value=len(text)), max_size=12))
    pieces = []
    last = 0
    for cut in sorted(cuts):
        pieces.append(text[last:cut])
        last = cut
    pieces.append(text[last:])
    return pieces
