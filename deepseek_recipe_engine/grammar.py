"""The grammar (llguidance Lark) of what a constrained request may generate.

Built from the recipe's output constraint (`kind` + `schema`), its parsing options and the model
version, so that the recipe's output parser reads the generated text back as intended:

- `json`: one JSON value of the schema (an object for an empty schema), compact, with the `", "`
  and `": "` separators of the JSON the model sees in its prompts;
- `regex`: text matching the pattern (whole output);
- `tool_call` (auto): free text, optionally followed by one DSML tool-call block;
  `tool_call_required`: a block with at least one call (the prompt may already open it);
- thinking (stage `ReasoningStart` / `ReasoningContinuation`): free reasoning text first, then the
  `</think>` token, then the above. Reasoning text can never spell `</think>`, and no free text
  (reasoning or content) holds `｜DSML｜` outside a tool-call block: the parser would read
  `<｜DSML｜` as markup, and a lone marker would reach the client as leaked markup.

Tool calls are written exactly as the renderer writes history (docs/format.md section 5): one line
per tag, parameters in the order of the schema's `properties`, string parameters raw with
`string="true"`, all others as compact JSON with `string="false"`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import llguidance

__all__ = ["ConstraintError", "DsmlTags", "GrammarSpec", "constraint_grammar", "dsml_tags"]

THINK_END_TEXT = "</think>"
DSML = "｜DSML｜"
_JSON_STYLE = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}
_ANY_TEXT = "(?s:.*)"


class ConstraintError(ValueError):
    """An output constraint that cannot be turned into a grammar (or compiled by llguidance)."""


@dataclass(frozen=True)
class DsmlTags:
    """The DSML tag names of one model version (docs/format.md section 5.1)."""

    calls: str
    invoke: str
    parameter: str
    blank_line_in_empty_invoke: bool


_V4_TAGS = DsmlTags("tool_calls", "invoke", "parameter", blank_line_in_empty_invoke=False)
_V41_TAGS = DsmlTags(" calls", " invoke", " parameter", blank_line_in_empty_invoke=True)


def dsml_tags(model_version: str) -> DsmlTags:
    """The tag spelling of a model version (`DeepseekV4Pro` or `DeepseekV41Flash`)."""
    if model_version == "DeepseekV41Flash":
        return _V41_TAGS
    if model_version == "DeepseekV4Pro":
        return _V4_TAGS
    raise ConstraintError(f"unknown model version {model_version!r}")


@dataclass(frozen=True)
class GrammarSpec:
    """Everything the grammar depends on, read from a converted request."""

    kind: str  # json | regex | tool_call | tool_call_required
    schema: str
    model_version: str
    thinking: bool  # the output starts with reasoning, closed by `</think>`
    starts_in_tool_calls: bool  # the prompt already opened the tool-call block
    think_end_id: int  # id of the `</think>` special token


def constraint_grammar(spec: GrammarSpec) -> str:
    """The Lark grammar (llguidance dialect) for a constrained output."""
    rules = _Rules()
    body = _body(spec, rules)
    if spec.thinking:
        rules.add("reasoning", "REASONING? (LT REASONING?)*")
        rules.terminal("REASONING", _free_text_regex(no_think_end=True))
        rules.add("start", f"reasoning <[{spec.think_end_id}]> {body}")
    else:
        rules.add("start", body)
    return rules.render()


class _Rules:
    """Rules and terminals of one grammar, rendered in insertion order."""

    def __init__(self) -> None:
        self._lines: list[str] = ["%llguidance {}"]
        self._names: set[str] = set()
        self._counter = 0

    def fresh(self, stem: str) -> str:
        self._counter += 1
        return f"{stem}_{self._counter}"

    def add(self, name: str, expansion: str) -> str:
        self._lines.append(f"{name}: {expansion}")
        self._names.add(name)
        return name

    def terminal(self, name: str, definition: str) -> str:
        if name not in self._names:
            self.add(name, definition)
        return name

    def render(self) -> str:
        self.terminal("LT", '"<"')
        return "\n".join(self._lines) + "\n"


def _body(spec: GrammarSpec, rules: _Rules) -> str:
    if spec.kind == "json":
        return rules.add("json_output", _inline_json(_output_schema(spec.schema)))
    if spec.kind == "regex":
        return rules.add("regex_output", rules.terminal("REGEX_OUTPUT", _regex(spec.schema)))
    if spec.kind in ("tool_call", "tool_call_required"):
        return _tool_calls(spec, rules)
    raise ConstraintError(f"unknown output constraint kind {spec.kind!r}")


def _output_schema(schema_text: str) -> dict[str, Any]:
    if not schema_text.strip():
        return {"type": "object"}
    schema = _load_json(schema_text, "response schema")
    if not isinstance(schema, dict):
        raise ConstraintError("the response schema must be a JSON object")
    return schema


def _inline_json(schema: Mapping[str, Any]) -> str:
    """`%json {...}` with the compact prompt-JSON style."""
    styled = {**schema, "x-guidance": _JSON_STYLE}
    return "%json " + json.dumps(styled, ensure_ascii=False)


def _regex(pattern: str) -> str:
    try:
        return "/" + llguidance.regex_to_lark(pattern) + "/"
    except Exception as error:  # llguidance raises ValueError (and others) for bad patterns
        raise ConstraintError(f"invalid regex {pattern!r}: {error}") from error


def _free_text_regex(*, no_think_end: bool) -> str:
    """Text up to (excluding) the next `<`; never `｜DSML｜`, nor the start of `</think>`.

    Free text is `TEXT? (LT TEXT?)*`, so every `<` is its own lexeme and each TEXT that follows
    a `<` is checked for the markup the output parser would react to.
    """
    parts = [f"/[^<]+/ & ~/{_ANY_TEXT}{_lark_regex_literal(DSML)}{_ANY_TEXT}/"]
    if no_think_end:
        parts.append(f"~/{_lark_regex_literal(THINK_END_TEXT[1:])}{_ANY_TEXT}/")
    return " & ".join(parts)


def _lark_regex_literal(text: str) -> str:
    """`text` as a regex matching it literally, safe inside `/.../`."""
    out = []
    for char in text:
        if char.isalnum() or char in " _-" or ord(char) > 127:
            out.append(char)
        else:
            out.append(f"\\x{ord(char):02X}")
    return "".join(out)


def _lark_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ConstraintError(f"the {what} is not valid JSON: {error}") from error


# --- DSML tool calls -------------------------------------------------------------------------


def _tool_calls(spec: GrammarSpec, rules: _Rules) -> str:
    tags = dsml_tags(spec.model_version)
    tools = _load_json(spec.schema, "tool list")
    if not isinstance(tools, list) or not tools:
        raise ConstraintError("the tool list must be a non-empty JSON array")
    invokes = [_invoke(tool, tags, rules) for tool in tools]
    rules.add("invoke", " | ".join(invokes))
    close_block = _lark_string(f"</{DSML}{tags.calls}>")
    if spec.starts_in_tool_calls:  # the prompt ends with the opening tag and its newline
        return rules.add("calls", f"invoke+ {close_block}")
    # The opening tag is `<` + the rest, so it follows free text the way free text's own `<` does.
    open_rest = _lark_string(f"{DSML}{tags.calls}>" + "\n")
    rules.add("block", f"LT {open_rest} invoke+ {close_block}")
    rules.add("text", "TEXT? (LT TEXT?)*")
    rules.terminal("TEXT", _free_text_regex(no_think_end=False))
    if spec.kind == "tool_call_required":
        return rules.add("calls", "text block")
    return rules.add("content", "text block?")


def _invoke(tool: Any, tags: DsmlTags, rules: _Rules) -> str:
    function = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise ConstraintError("every tool needs a function with a name")
    name = function["name"]
    if not name or any(c in name for c in ' "\\<>\n'):
        raise ConstraintError(f"tool name {name!r} cannot be written in a DSML invoke tag")
    parameters = function.get("parameters")
    parameters = parameters if isinstance(parameters, dict) else {}
    items = [
        (_parameter(key, schema, parameters, tags, rules), required)
        for key, schema, required in _parameter_list(name, parameters)
    ]
    open_tag = _lark_string(f'<{DSML}{tags.invoke} name="{name}">\n')
    close_tag = _lark_string(f"</{DSML}{tags.invoke}>\n")
    parts = [open_tag, _parameter_sequence(items, tags, rules), close_tag]
    return rules.add(rules.fresh("invoke"), " ".join(part for part in parts if part))


def _parameter_list(tool: str, parameters: Mapping[str, Any]) -> list[tuple[str, Any, bool]]:
    """(name, schema, required) per argument, in `properties` order, then required extras."""
    properties = parameters.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = parameters.get("required")
    required_names = (
        [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    )
    listed = [(key, schema, key in required_names) for key, schema in properties.items()]
    extras = [(key, {}, True) for key in required_names if key not in properties]
    result = []
    for key, schema, is_required in listed + extras:
        if _writable_parameter_name(key):
            result.append((key, schema, is_required))
        elif is_required:
            raise ConstraintError(
                f"tool {tool!r}: required parameter {key!r} cannot be written as a DSML parameter"
            )
    return result


def _writable_parameter_name(name: str) -> bool:
    """Whether the parser reads `name="<name>"` back as the JSON key `"<name>"`.

    The parser copies the text up to the first space verbatim as the key, so the name must not
    contain a space, and `"<name>"` must already be a JSON string with that value.
    """
    return bool(name) and all(c not in ' "\\' and ord(c) >= 0x20 for c in name)


def _parameter_sequence(items: list[tuple[str, bool]], tags: DsmlTags, rules: _Rules) -> str:
    """Parameters in order (optional ones may be left out); V4.1 writes a blank line for none."""
    if not items:
        return '"\\n"' if tags.blank_line_in_empty_invoke else ""
    sequence = " ".join(rule if required else f"{rule}?" for rule, required in items)
    if any(required for _, required in items) or not tags.blank_line_in_empty_invoke:
        return sequence
    # All optional on V4.1: either the blank line, or a non-empty ordered selection.
    names = [rule for rule, _ in items]
    nonempty = ""
    for index in range(len(names) - 1, -1, -1):
        rest = " ".join(f"{rule}?" for rule in names[index + 1 :])
        alternatives = [f"{names[index]} {rest}".strip()] + ([nonempty] if nonempty else [])
        nonempty = rules.add(rules.fresh("some_parameters"), " | ".join(alternatives))
    return f'("\\n" | {nonempty})'


def _parameter(
    key: str, schema: Any, parameters: Mapping[str, Any], tags: DsmlTags, rules: _Rules
) -> str:
    """One `<｜DSML｜parameter name="key" string="...">VALUE</｜DSML｜parameter>\\n` line."""
    schema = schema if isinstance(schema, dict) else {}
    is_text = schema.get("type") == "string"
    prefix = f'<{DSML}{tags.parameter} name="{key}" string="{"true" if is_text else "false"}">'
    close = f"{DSML}{tags.parameter}>\n"  # after the `</` that ends the value
    if is_text:
        value = rules.terminal(rules.fresh("TEXT_VALUE"), _text_value(schema))
        return rules.add(
            rules.fresh("parameter"), f"{_lark_string(prefix)} {value} {_lark_string(close)}"
        )
    json_rule = rules.add(
        rules.fresh("json_value"), _inline_json(_with_definitions(schema, parameters))
    )
    return rules.add(
        rules.fresh("parameter"),
        f"{_lark_string(prefix)} {json_rule} {_lark_string('</' + close)}",
    )


def _with_definitions(schema: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """A property schema that still resolves `#/$defs/...` references of the tool's schema."""
    result = dict(schema)
    for key in ("$defs", "definitions"):
        if key in root and key not in result:
            result[key] = root[key]
    return result


def _text_value(schema: Mapping[str, Any]) -> str:
    """Terminal for a raw string value *including the `</` that ends it*.

    The parser ends a value at the first `</｜DSML｜`; the value may not contain `</` at all, so
    the terminal ends exactly at its first `</` (a single lexeme, no lexer ambiguity).
    """
    enum = schema.get("enum")
    const = schema.get("const")
    choices = [const] if isinstance(const, str) else enum if isinstance(enum, list) else None
    if choices is not None:
        texts = [c for c in choices if isinstance(c, str) and "</" not in c]
        if not texts:
            raise ConstraintError("no string value of the enum can be written as raw text")
        return "(" + " | ".join(_lark_string(t + "</") for t in texts) + ")"
    parts = [f"/{_ANY_TEXT}/", f"~/{_ANY_TEXT}<\\x2F{_ANY_TEXT}/"]
    low, high = schema.get("minLength"), schema.get("maxLength")
    if isinstance(low, int) or isinstance(high, int):
        low_n = low if isinstance(low, int) and low > 0 else 0
        high_n = str(high) if isinstance(high, int) and high >= 0 else ""
        parts.append(f"/(?s:.{{{low_n},{high_n}}})/")
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        parts.append(_search_regex(pattern))
    return "(" + " & ".join(parts) + ') "</"'


def _search_regex(pattern: str) -> str:
    """A JSON-Schema `pattern` (a search, not a full match) as a whole-text regex."""
    body = pattern
    start = body.startswith("^")
    end = body.endswith("$") and not body.endswith("\\$")
    body = body[1 if start else 0 : len(body) - 1 if end else len(body)]
    try:
        core = llguidance.regex_to_lark(body, "dw")
    except Exception as error:
        raise ConstraintError(f"invalid pattern {pattern!r}: {error}") from error
    return f"/{'' if start else _ANY_TEXT}(?:{core}){'' if end else _ANY_TEXT}/"
