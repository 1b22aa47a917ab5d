"""Request workloads (b): Chat Completions bodies for convert → render → encode.

A short chat and an agent conversation with 40 tools and `turns` tool-call turns (60 by default:
about 100K prompt tokens). At the default size the bodies are byte for byte those of the Rust
criterion bench (`recipe-rs/deepseek-recipe/benches/support/workloads.rs`); keep the two in step.
"""

from __future__ import annotations

import json
from typing import Any

MODEL = "DeepSeek-V4-Pro"
TOOL_COUNT = 40
TURN_COUNT = 60
RESULT_ROWS = 44
VERBS = ["search", "fetch", "update", "delete", "summarize"]
NOUNS = ["issues", "files", "users", "orders", "events", "metrics", "tickets", "docs"]
MODES = ["fast", "exact", "fuzzy"]


def compact(value: Any) -> str:
    """JSON as serde_json writes it: compact, keys sorted (the recipe writes them sorted)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def body(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
    """A compact request body (thinking enabled) with `messages` and optional `tools`."""
    request: dict[str, Any] = {
        "messages": messages,
        "model": MODEL,
        "thinking": {"type": "enabled"},
    }
    if tools is not None:
        request["tools"] = tools
    return compact(request)


def short_chat() -> str:
    """System prompt + one user turn."""
    return body(
        [
            {"content": "You are a helpful assistant.", "role": "system"},
            {"content": "What is the capital of France? Answer in one sentence.", "role": "user"},
        ]
    )


def tool_name(index: int) -> str:
    """The name of tool `index`: a verb and a noun."""
    return f"{VERBS[index % 5]}_{NOUNS[index // 5]}"


def tool(index: int) -> dict[str, Any]:
    """A function tool with nested objects, arrays and enums."""
    verb, noun = VERBS[index % 5], NOUNS[index // 5]
    return {
        "function": {
            "description": f"{verb} {noun} records of the project (tool {index}).",
            "name": tool_name(index),
            "parameters": {
                "properties": {
                    "filters": {
                        "properties": {
                            "since": {"description": "ISO date", "type": "string"},
                            "tags": {"items": {"type": "string"}, "type": "array"},
                        },
                        "required": ["tags"],
                        "type": "object",
                    },
                    "limit": {"maximum": 100 + index, "minimum": 1, "type": "integer"},
                    "mode": {"enum": MODES, "type": "string"},
                    "query": {"description": f"What to {verb} in {noun}.", "type": "string"},
                    "targets": {
                        "items": {
                            "properties": {"id": {"type": "integer"}, "label": {"type": "string"}},
                            "required": ["id"],
                            "type": "object",
                        },
                        "type": "array",
                    },
                },
                "required": ["query", "mode"],
                "type": "object",
            },
        },
        "type": "function",
    }


def tool_result(turn: int) -> str:
    """Rows of JSON-ish text, code, CJK prose or emoji-laden text, by turn."""
    return "".join(result_row(turn, row) for row in range(RESULT_ROWS))


def result_row(turn: int, row: int) -> str:
    """One row of the tool result of `turn`."""
    kind = turn % 4
    if kind == 0:
        return (
            f'{{"id": {row}, "name": "item-{turn}-{row}", "score": 0.{row}5, '
            f'"tags": ["alpha", "beta"], "ok": true}}\n'
        )
    if kind == 1:
        return (
            f"fn check_{turn}_{row}(items: &[u32]) -> u32 {{\n"
            f"    items.iter().filter(|x| **x > {row}).sum()\n}}\n"
        )
    if kind == 2:
        return f"第{turn}步第{row}项：检查配置文件，发现三个警告。東京のサーバーは正常です。\n"  # noqa: RUF001
    return f"✅ step {turn}.{row} passed 🎉, ⚠️ 2 warnings, ❌ 0 errors — naïve café 👍🏽\n"


def agent_conversation(turns: int = TURN_COUNT) -> str:
    """40 tools, `turns` tool-call turns with reasoning, tool results and user follow-ups."""
    messages: list[dict[str, Any]] = [
        {
            "content": "You are a coding agent. Use the tools to inspect and change the project.",
            "role": "system",
        },
        {"content": "Audit the project and fix what is broken.", "role": "user"},
    ]
    for turn in range(turns):
        name = tool_name(turn * 7 % TOOL_COUNT)
        mode = MODES[turn % 3]
        arguments = {
            "filters": {"tags": ["bench", f"turn-{turn}"]},
            "limit": turn + 1,
            "mode": mode,
            "query": f"step {turn}: what does {name} report?",
        }
        messages.append(
            {
                "content": "",
                "reasoning_content": (
                    f"Turn {turn}. The last result narrows it down; next I call {name} with mode "
                    f"{mode} to check the remaining candidates before touching any file."
                ),
                "role": "assistant",
                "tool_calls": [
                    {
                        "function": {"arguments": compact(arguments), "name": name},
                        "id": f"call_{turn}",
                        "type": "function",
                    }
                ],
            }
        )
        messages.append(
            {"content": tool_result(turn), "role": "tool", "tool_call_id": f"call_{turn}"}
        )
        if turn % 5 == 4:
            messages.append(
                {
                    "content": f"Good. After step {turn}, keep going but explain what changed.",
                    "role": "user",
                }
            )
    return body(messages, [tool(index) for index in range(TOOL_COUNT)])


LONG_DOCUMENT_CHARS = 500_000
"""Characters of the long-document workload's document (the size issue #19 names)."""


def long_document(chars: int = LONG_DOCUMENT_CHARS, seed: int = 2) -> str:
    """A system prompt and one user turn asking about a document of `chars` characters cut from
    the seeded tokenizer corpus (prose, code, JSON, CJK, emoji, digits, whitespace, control
    characters): one huge JSON string to unescape, check and render."""
    from tests.tokenizer_corpus import generate_documents

    text = ""
    while len(text) < chars:
        text += "".join(generate_documents(seed, chars * 2))
    document = text[:chars]
    return body(
        [
            {"content": "You are a careful reader. Answer from the document.", "role": "system"},
            {"content": f"Summarise this document.\n\n{document}", "role": "user"},
        ]
    )
