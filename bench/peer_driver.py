"""Child process running a request or stream case with the published deepseek-recipe 0.2.0.

Run by the peer environment's interpreter as a script, from outside the repository, so that
`deepseek_recipe` is the published wheel and never this project's package (same import name):
`bench/.peer-venv/bin/python -I bench/peer_driver.py CASE_FILE RESULT_FILE`.

The published API is used as its documentation (the wheel's description and `help()`) shows:
`ChatCompletionRequest(body).convert(ConversionOptions())` gives a conversation request,
`DeepseekV4Encoding().with_tokenizer(tokenizer)` renders and encodes its conversation, and a
`StreamProcessor(generator, parsing_options, tokenizer)` takes `InferenceChunk`s and returns
protocol chunks, which the host serialises (`to_json`) into SSE messages itself.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
# Last on the path: `bench.measure` is found, while `deepseek_recipe` stays the installed wheel.
sys.path.append(str(REPO_ROOT))

from bench.measure import (  # noqa: E402
    Case,
    digest,
    id_blocks,
    prepared_result,
    repeated_result,
    serve,
    stream_result,
)

peer: Any = importlib.import_module("deepseek_recipe")
if Path(peer.__file__).resolve().is_relative_to(REPO_ROOT / "deepseek_recipe"):
    raise SystemExit("peer driver imported this project's deepseek_recipe, not the published one")


def request(case: Case) -> dict[str, Any]:
    """One stage of the request pipeline (as `bench.ours_driver.request`), `repeat` requests per
    timed run. A render reads the prompt and its special ranges, as ours returns them."""
    body = Path(case["input"]).read_text(encoding="utf-8")
    stage, repeat, runs = case["variant"], case["repeat"], case["runs"]
    encoding = peer.DeepseekV4Encoding().with_tokenizer(
        peer.Tokenizer.from_file(case["tokenizer_json"])
    )

    def conversation() -> Any:
        return peer.ChatCompletionRequest(body).convert(peer.ConversionOptions()).conversation

    def render(converted: Any) -> str:
        rendered = encoding.render_conversation(converted)
        rendered.special_ranges  # noqa: B018 -- read as ours returns it
        return rendered.prompt

    def convert_render() -> str:
        return render(conversation())

    if stage == "convert":
        conversation()
        return repeated_result(conversation, repeat, runs, [])
    if stage == "render":
        check = [digest(convert_render().encode())]
        return prepared_result(conversation, render, repeat, runs, check)
    if stage == "convert+render":
        check = [digest(convert_render().encode())]
        return repeated_result(convert_render, repeat, runs, check)

    def convert_encode() -> list[int]:
        return encoding.encode(conversation())

    return repeated_result(convert_encode, repeat, runs, id_blocks(list(convert_encode())))


def stream(case: Case) -> dict[str, Any]:
    """The model output fed piece by piece; SSE bytes of a Chat Completions stream out."""
    workload = json.loads(Path(case["input"]).read_text(encoding="utf-8"))
    tokenizer = peer.Tokenizer.from_file(case["tokenizer_json"])
    pieces: list[Any] = workload["pieces"]
    by_tokens = workload["kind"] == "tokens"
    chunk = peer.InferenceChunk
    done = peer.ChatCompletionResponse.sse_done_data()

    def processor() -> Any:
        request = peer.ChatCompletionRequest(workload["request"])
        model = request.model
        converted = request.convert(peer.ConversionOptions())
        options = converted.parsing_options
        generator = peer.ChatCompletionRequest.chunk_generator(converted, "chatcmpl-bench", model)
        return peer.StreamProcessor(generator, options, tokenizer)

    def messages(chunks: list[Any]) -> bytes:
        # Chat Completions messages carry no SSE event name.
        return b"".join(b"data: " + item.to_json().encode() + b"\n\n" for item in chunks)

    def feed(processor: Any, sink: Callable[[bytes], object]) -> None:
        push = processor.push
        sink(messages(push(chunk.ready())))
        if by_tokens:
            for token in pieces:
                sink(messages(push(chunk.tokens([token]))))
        else:
            for piece in pieces:
                sink(messages(push(chunk.text(piece, 1))))
        sink(messages(push(chunk.finish(peer.InferenceFinishReason.Stop))))
        sink(messages(processor.finish()))
        sink(b"data: " + done.encode() + b"\n\n")

    return stream_result(processor, feed, case["runs"])


if __name__ == "__main__":
    version = importlib.metadata.version("deepseek-recipe")
    library = f"deepseek_recipe {version}, published ({Path(peer.__file__).parent})"
    raise SystemExit(serve({"request": request, "stream": stream}, library))
