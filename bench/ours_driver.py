"""Child process running a case with this project's `deepseek_recipe` (the one built in the repo).

`python -m bench.ours_driver CASE_FILE RESULT_FILE`, from the repository root.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import deepseek_recipe as dr
from bench.measure import (
    Case,
    after_check,
    digest,
    id_blocks,
    ids_digest,
    prepared_result,
    repeated_result,
    serve,
    stream_result,
    timed_runs,
)
from deepseek_recipe.stream import StreamProcessor


def tokenize(case: Case) -> dict[str, Any]:
    """Raw encode of every document: special-token spellings allowed (as HF `encode` does), or
    plain text in variant `plain` (as tiktoken's `encode_ordinary`)."""
    documents: list[str] = json.loads(Path(case["input"]).read_text(encoding="utf-8"))
    tokenizer = dr.Tokenizer.deepseek_v4()
    special = case["variant"] != "plain"
    if case["variant"] == "batch":
        check = [ids_digest(ids) for ids in tokenizer.encode_batch(documents, special)]
        base = after_check()
        seconds = timed_runs(lambda: tokenizer.encode_batch(documents, special), case["runs"])
    else:
        check = [ids_digest(tokenizer.encode(document, special)) for document in documents]
        base = after_check()

        def encode_each() -> None:
            for document in documents:
                tokenizer.encode(document, special)

        seconds = timed_runs(encode_each, case["runs"])
    return {"seconds": seconds, "check": check, **base}


def request(case: Case) -> dict[str, Any]:
    """One stage of the request pipeline (see `bench.cases.REQUEST_STAGES`), `repeat` requests
    per timed run."""
    body = Path(case["input"]).read_text(encoding="utf-8")
    stage, repeat, runs = case["variant"], case["repeat"], case["runs"]

    def convert() -> dr.ConvertedRequest:
        return dr.convert(body, protocol="chat_completions")

    def convert_render() -> dr.RenderedPrompt:
        return convert().render()

    if stage == "convert":
        convert()
        return repeated_result(convert, repeat, runs, [])
    if stage == "render":
        # A fresh converted request per render: the first `render()` of one does the work.
        check = [digest(convert_render().prompt.encode())]
        return prepared_result(convert, dr.ConvertedRequest.render, repeat, runs, check)
    if stage == "convert+render":
        check = [digest(convert_render().prompt.encode())]
        return repeated_result(convert_render, repeat, runs, check)

    def convert_encode() -> list[int]:
        return convert().encode()

    return repeated_result(convert_encode, repeat, runs, id_blocks(convert_encode()))


STREAM_BATCH = 256
"""Pieces per call in the `batch` variant of the stream cases."""


def stream(case: Case) -> dict[str, Any]:
    """The model output fed piece by piece; SSE bytes of a Chat Completions stream out."""
    workload = json.loads(Path(case["input"]).read_text(encoding="utf-8"))
    converted = dr.convert(workload["request"], protocol="chat_completions")
    tokenizer = dr.Tokenizer.deepseek_v4()
    pieces: list[Any] = workload["pieces"]
    by_tokens = workload["kind"] == "tokens"

    def processor() -> StreamProcessor:
        return StreamProcessor(
            converted, response_id="chatcmpl-bench", tokenizer=tokenizer, seed=1, created=0
        )

    def feed(processor: StreamProcessor, sink: Callable[[bytes], object]) -> None:
        sink(processor.push_sse({"kind": "ready"}))
        if case["variant"] == "batch":  # pieces as they pile up between two host writes
            for start in range(0, len(pieces), STREAM_BATCH):
                batch = pieces[start : start + STREAM_BATCH]
                if by_tokens:
                    sink(processor.push_tokens_many([[token] for token in batch]))
                else:
                    sink(processor.push_text_many(batch, 1))
        elif by_tokens:
            push_tokens = processor.push_tokens
            for token in pieces:
                sink(push_tokens([token]))
        else:
            push_text = processor.push_text
            for piece in pieces:
                sink(push_text(piece, 1))
        sink(processor.push_finish("stop"))
        sink(processor.finish_sse())

    return stream_result(processor, feed, case["runs"])


if __name__ == "__main__":
    library = f"deepseek_recipe {dr.__version__} ({Path(dr.__file__).parent})"
    raise SystemExit(serve({"tokenize": tokenize, "request": request, "stream": stream}, library))
