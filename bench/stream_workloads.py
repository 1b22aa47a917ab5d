"""Stream workloads (c): a model output to feed through a stream processor, and its request.

`generated_output(1)` is the output of the Rust criterion bench
(`recipe-rs/deepseek-recipe/benches/stream.rs`, same text): reasoning, `</think>`, content and 20
DSML tool calls, about 20K tokens; `scale` multiplies every part. The adversarial outputs stress
the parser's buffering: one tool call whose argument is a huge JSON value.
"""

from __future__ import annotations

from bench.request_workloads import compact

WORDS = [
    "the",
    "model",
    "thinks",
    "about",
    "Paris",
    "weather",
    "and",
    "then",
    "calls",
    "a",
    "tool",
    "with",
    "数据",
    "über",
    "😀",
    "results",
]
CALLS = 20
DSML_OPEN = "\n\n<｜DSML｜tool_calls>\n"
DSML_CLOSE = "</｜DSML｜tool_calls>"


def words(count: int, seed: int) -> str:
    """`count` words from `WORDS`, a newline after every 13th."""
    return "".join(
        WORDS[(index * 7 + seed) % len(WORDS)] + ("\n" if index % 13 == 12 else " ")
        for index in range(count)
    )


def invoke(query: str, limit: str) -> str:
    """One DSML `search` call: a string `q` and a JSON (non-string) `limit`."""
    return (
        '<｜DSML｜invoke name="search">\n'
        f'<｜DSML｜parameter name="q" string="true">{query}</｜DSML｜parameter>\n'
        f'<｜DSML｜parameter name="limit" string="false">{limit}</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n"
    )


def generated_output(scale: float = 1) -> str:
    """Reasoning, content and `20 * scale` tool calls (at least one): about `20K * scale` tokens."""
    calls = "".join(invoke(words(250, call), "10") for call in range(max(1, round(CALLS * scale))))
    return (
        words(round(7000 * scale), 1)
        + "</think>"
        + words(round(7000 * scale), 2)
        + DSML_OPEN
        + calls
        + DSML_CLOSE
    )


def huge_argument_output(kilobytes: int) -> str:
    """A short answer, then one tool call whose `limit` is a JSON array of about `kilobytes` KB."""
    rows = []
    size = 0
    while size < kilobytes * 1000:
        row = compact({"id": len(rows), "tags": ["alpha", "β", "😀"], "note": words(6, len(rows))})
        rows.append(row)
        size += len(row.encode("utf-8")) + 1
    argument = "[" + ",".join(rows) + "]"
    return (
        words(50, 1) + "</think>" + words(50, 2) + DSML_OPEN + invoke("big", argument) + DSML_CLOSE
    )


def stream_request() -> str:
    """The streamed Chat Completions request the outputs answer: thinking on, one `search` tool."""
    parameters = {
        "properties": {"limit": {"type": "integer"}, "q": {"type": "string"}},
        "required": ["q"],
        "type": "object",
    }
    return compact(
        {
            "messages": [{"content": "Search for the weather in Paris.", "role": "user"}],
            "model": "DeepSeek-V4-Pro",
            "stream": True,
            "thinking": {"type": "enabled"},
            "tools": [
                {"function": {"name": "search", "parameters": parameters}, "type": "function"}
            ],
        }
    )


def text_pieces(output: str, chars: int) -> list[str]:
    """`output` cut into pieces of `chars` characters (the last one may be shorter)."""
    return [output[start : start + chars] for start in range(0, len(output), chars)]
