"""Child process running a case with this project's `deepseek_recipe` (the one built in the repo).

`python -m bench.ours_driver CASE_FILE RESULT_FILE`, from the repository root.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import deepseek_recipe as dr
from bench.measure import (
    Case,
    digest,
    id_blocks,
    ids_digest,
    normalized_chunks,
    serve,
    status_kib,
    stream_summary,
    timed_runs,
    timed_setup_runs,
)
from deepseek_recipe.stream import StreamProcessor


def tokenize(case: Case) -> dict[str, Any]:
    """Raw encode (special-token spellings allowed, as HF `encode` does) of every document."""
    documents: list[str] = json.loads(Path(case["input"]).read_text(encoding="utf-8"))
    tokenizer = dr.Tokenizer.deepseek_v4()
    if case["variant"] == "batch":
        check = [ids_digest(ids) for ids in tokenizer.encode_batch(documents, True)]
        setup_rss = status_kib("VmRSS")
        seconds = timed_runs(lambda: tokenizer.encode_batch(documents, True), case["runs"])
    else:
        check = [ids_digest(tokenizer.encode(document, True)) for document in documents]
        setup_rss = status_kib("VmRSS")

        def encode_each() -> None:
            for document in documents:
                tokenizer.encode(document, True)

        seconds = timed_runs(encode_each, case["runs"])
    return {"seconds": seconds, "check": check, "setup_rss_kib": setup_rss}


def request(case: Case) -> dict[str, Any]:
    """One stage of the request pipeline, `repeat` requests per timed run."""
    body = Path(case["input"]).read_text(encoding="utf-8")
    stage, repeat = case["variant"], case["repeat"]

    def convert() -> dr.ConvertedRequest:
        return dr.convert(body, protocol="chat_completions")

    converted = convert()
    if stage == "convert":
        check: list[str] = []
        work = convert
    elif stage == "render":
        check = [digest(converted.render().prompt.encode())]

        def work() -> object:
            return converted.render()
    else:
        check = id_blocks(convert().encode())

        def work() -> object:
            return convert().encode()

    def run_all() -> None:
        for _ in range(repeat):
            work()

    setup_rss = status_kib("VmRSS")
    seconds = timed_runs(run_all, case["runs"])
    return {"seconds": seconds, "check": check, "setup_rss_kib": setup_rss}


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

    def feed(processor: StreamProcessor) -> bytes:
        parts = [processor.push_sse({"kind": "ready"})]
        if by_tokens:
            push_tokens = processor.push_tokens
            parts.extend(push_tokens([token]) for token in pieces)
        else:
            push_text = processor.push_text
            parts.extend(push_text(piece, 1) for piece in pieces)
        parts.append(processor.push_finish("stop"))
        parts.append(processor.finish_sse())
        return b"".join(parts)

    sse = feed(processor())
    check = [digest(line.encode()) for line in normalized_chunks(sse)]
    summary = digest(stream_summary(sse).encode())
    setup_rss = status_kib("VmRSS")
    seconds = timed_setup_runs(processor, feed, case["runs"])
    return {"seconds": seconds, "check": check, "summary": summary, "setup_rss_kib": setup_rss}


if __name__ == "__main__":
    library = f"deepseek_recipe {dr.__version__} ({Path(dr.__file__).parent})"
    raise SystemExit(serve({"tokenize": tokenize, "request": request, "stream": stream}, library))
