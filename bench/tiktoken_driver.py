"""Child process running a tokenizer case with tiktoken set up as DeepSeek V4 (`tiktoken_peer`).

`python -m bench.tiktoken_driver CASE_FILE RESULT_FILE`: `encode_ordinary` of every document, one
call each, on the calling thread (plain text: special-token spellings are text, as in our
`encode(text, allow_special=False)`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import tiktoken  # pyright: ignore[reportMissingImports]  # bench-only, optional (docs/dependencies.md)

from bench.measure import Case, after_check, ids_digest, serve, timed_runs
from bench.tiktoken_peer import deepseek_encoding


def tokenize(case: Case) -> dict[str, Any]:
    """Encode every document as plain text, one call each."""
    documents: list[str] = json.loads(Path(case["input"]).read_text(encoding="utf-8"))
    encoding = deepseek_encoding(Path(case["tokenizer_json"]))
    check = [ids_digest(encoding.encode_ordinary(document)) for document in documents]
    base = after_check()

    def encode_each() -> None:
        for document in documents:
            encoding.encode_ordinary(document)

    seconds = timed_runs(encode_each, case["runs"])
    return {"seconds": seconds, "check": check, **base}


if __name__ == "__main__":
    raise SystemExit(serve({"tokenize": tokenize}, f"tiktoken {tiktoken.__version__}"))
