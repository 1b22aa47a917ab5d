"""Child process running a tokenizer case with Hugging Face `tokenizers` (the peer of (a)).

`python -m bench.hf_driver CASE_FILE RESULT_FILE`. Variant `encode` is `Tokenizer.encode`;
`fast` is `encode_batch_fast([document])`, HF's quickest path to the ids (no offsets), on the
calling thread. Both load the project's `tokenizer.json` with its added (special) tokens.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tokenizers
from tokenizers import Tokenizer

from bench.measure import Case, after_check, ids_digest, serve, timed_runs


def tokenize(case: Case) -> dict[str, Any]:
    """Encode every document, one call each, without added BOS/EOS."""
    documents: list[str] = json.loads(Path(case["input"]).read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_file(case["tokenizer_json"])

    def encode(document: str) -> list[int]:
        return tokenizer.encode(document, add_special_tokens=False).ids

    def encode_fast(document: str) -> list[int]:
        return tokenizer.encode_batch_fast([document], add_special_tokens=False)[0].ids

    one: Callable[[str], list[int]] = encode_fast if case["variant"] == "fast" else encode
    check = [ids_digest(one(document)) for document in documents]
    base = after_check()

    def encode_each() -> None:
        for document in documents:
            one(document)

    seconds = timed_runs(encode_each, case["runs"])
    return {"seconds": seconds, "check": check, **base}


if __name__ == "__main__":
    raise SystemExit(serve({"tokenize": tokenize}, f"tokenizers {tokenizers.__version__}"))
