"""What the deterministic stand-in models write, from plain facts about a converted request.

Free of any `deepseek_recipe` import: the hosts built on this project's library
(`standin.py`) and on the published one (`peer_host.py`, its own process) both use it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

DSML = "｜DSML｜"
STYLES = ("short", "no_tools", "wordy", "tool_happy")
"""* `short`: a few words, no tool call unless the request forces one;
* `no_tools`: a plain sentence, never a tool call unless forced;
* `wordy`: long reasoning and several sentences (reaches small limits, contains the usual stop
  strings), calls a declared tool whenever it may, prose before `json_object` output;
* `tool_happy`: calls every declared tool it may (two calls when it may), short text."""

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


@dataclass(frozen=True)
class RequestFacts:
    """What the model sees of a converted request (read from either library)."""

    thinking: bool
    """The output starts as reasoning."""
    forced: bool
    """The prompt already opened a tool-call block (required or named tool choice)."""
    may_call: bool
    """Tool calls are parsed (tools declared, tool choice not none)."""
    tools: list[tuple[str, Any]]
    """Declared tools: (name, parameter schema); for a forced choice only the allowed ones."""
    response_format: str
    response_schema: Any


def model_text(style: str, facts: RequestFacts) -> str:
    """The raw model output (the recipe parses it) of the `style` model."""
    if facts.forced:
        return invokes(facts.tools, twice=style == "tool_happy")
    reasoning = REASONING[style] + "</think>" if facts.thinking else ""
    answer = ANSWERS[style]
    if facts.response_format in ("json_object", "json_schema"):
        schema = facts.response_schema
        value = instance(schema) if schema else {"answer": "Paris", "confident": True}
        # json_object lets the recipe blank out text before the JSON; a schema is enforced
        prose = "Here is the JSON:\n" if style == "wordy" and not schema else ""
        answer = prose + json.dumps(value, ensure_ascii=False)
    if facts.may_call and facts.tools and style in ("wordy", "tool_happy"):
        block = "\n\n<" + DSML + "tool_calls>\n"
        return reasoning + answer + block + invokes(facts.tools, twice=style == "tool_happy")
    return reasoning + answer


def invokes(tools: list[tuple[str, Any]], twice: bool) -> str:
    """DSML invokes of one (or two) calls to the first tools, arguments valid for their
    schemas, and the end of the block."""
    chosen = (tools * 2)[:2] if twice else tools[:1]
    text = ""
    for name, parameters in chosen:
        text += f'<{DSML}invoke name="{name}">\n'
        value = instance(parameters or {"type": "object"})
        for key, item in value.items() if isinstance(value, dict) else []:
            raw, string = (item, "true") if isinstance(item, str) else (json.dumps(item), "false")
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


def fake_logprobs(token: int, top: int) -> tuple[float, list[tuple[int, float]]]:
    """Made-up but well-formed log probabilities of one generated token."""
    alternatives = [(token, -0.25), *((token + n, -2.0 - n) for n in range(1, top))]
    return -0.25, alternatives[:top]
