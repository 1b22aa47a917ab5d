"""Inference chunks given as JSON objects: read by the core alone, exactly as the typed models
read them (same acceptance, same output), without loading pydantic."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from deepseek_recipe import RecipeError, RequestParseError, convert
from deepseek_recipe.models.inference import InferenceChunk, ReadyChunk
from deepseek_recipe.stream import StreamProcessor

CHAT = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
INFERENCE_CHUNK: TypeAdapter[Any] = TypeAdapter(InferenceChunk)

# Values of every JSON kind a field can be given, right or wrong for it.
ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.lists(st.integers(min_value=-5, max_value=2**33), max_size=3),
)
COUNT = st.one_of(st.integers(min_value=0, max_value=2**64 - 1), ANY_VALUE)
FIELDS = {
    "ready": {
        "prompt_tokens": COUNT,
        "prompt_cache_hit_tokens": COUNT,
        "system_fingerprint": st.one_of(st.none(), st.text(max_size=6), ANY_VALUE),
    },
    "text": {"content": st.one_of(st.text(max_size=12), ANY_VALUE), "token_count": COUNT},
    "tokens": {
        "token_ids": st.one_of(
            st.lists(st.integers(min_value=0, max_value=2000), max_size=4), ANY_VALUE
        ),
        "logprobs": st.one_of(
            st.none(),
            st.lists(
                st.tuples(
                    st.floats(-20, 0), st.lists(st.tuples(st.integers(0, 2000), st.floats(-20, 0)))
                ),
                max_size=2,
            ),
            ANY_VALUE,
        ),
    },
    "finish": {
        "finish_reason": st.one_of(st.sampled_from(["stop", "length", "content_filter"]), ANY_VALUE)
    },
}


@st.composite
def chunk_objects(draw: st.DrawFn) -> dict[str, Any]:
    """A JSON object shaped like an inference chunk: any subset of its fields, values of any
    kind, sometimes an unknown field or an unknown `kind`."""
    kind = draw(st.sampled_from([*FIELDS, "other"]))
    fields = FIELDS.get(kind, {})
    chunk: dict[str, Any] = {"kind": kind}
    for name, values in fields.items():
        if draw(st.integers(0, 4)):  # present four times in five
            chunk[name] = draw(values)
    if draw(st.booleans()):
        chunk["x_extra"] = draw(ANY_VALUE)
    return chunk


def outcome(push: Any) -> tuple[str, Any]:
    """What one push gave: its records, a refused chunk, or the stream's error for a chunk it
    read (e.g. logprobs that do not match the ids)."""
    try:
        return ("records", push())
    except (ValidationError, RequestParseError):
        return ("refused", None)
    except RecipeError as error:
        return ("error", str(error))


def processor() -> StreamProcessor:
    return StreamProcessor(convert(CHAT), response_id="chatcmpl-x", seed=1, created=0)


@settings(max_examples=600, deadline=None)
@given(chunk_objects())
def test_an_object_is_read_as_its_typed_chunk(chunk: dict[str, Any]) -> None:
    as_object, as_typed = processor(), processor()
    got = outcome(lambda: as_object.push_records(chunk))

    def typed() -> Any:
        return as_typed.push_records(INFERENCE_CHUNK.validate_python(chunk))

    assert got == outcome(typed), chunk
    assert as_object.response_json() == as_typed.response_json()


def test_ready_usage_from_prompt_tokens_alone() -> None:
    # The typed model's reading: `prompt_tokens` alone is usage without cache hits.
    chunk = {"kind": "ready", "prompt_tokens": 7}
    usage = ReadyChunk.model_validate(chunk).prompt_usage
    assert usage is not None and usage.prompt_cache_hit_tokens == 0
    stream = processor()
    stream.push_records(chunk)
    stream.push_records({"kind": "finish", "finish_reason": "stop"})
    assert '"prompt_tokens":7,' in stream.response_json()
    assert '"prompt_cache_miss_tokens":7' in stream.response_json()


def deeply_nested(depth: int) -> list[Any]:
    """A list nested `depth` levels deep (deeper than Python's recursion limit allows to dump)."""
    nested: list[Any] = []
    for _ in range(depth):
        nested = [nested]
    return nested


def test_objects_that_are_not_json_are_refused() -> None:
    stream = processor()
    for chunk in [
        {"kind": "text", "content": "a", "token_count": float("nan")},
        {"kind": "tokens", "token_ids": [object()]},
        {"kind": "text", "content": "\ud800", "token_count": 1},
        {"kind": "ready", "x_deep": deeply_nested(100_000)},
        "not a chunk",
    ]:
        try:
            stream.push_records(chunk)  # pyright: ignore[reportArgumentType]
        except RequestParseError as error:
            assert str(error).startswith("invalid inference chunk: ")
        else:
            raise AssertionError(f"accepted {chunk!r}")
    assert stream.push_records({"kind": "text", "content": "ok", "token_count": 1})


def test_pushing_objects_does_not_load_the_typed_models() -> None:
    # A host feeding JSON objects and sending SSE bytes needs neither pydantic nor the models.
    script = (
        "import sys, deepseek_recipe as dr\n"
        "from deepseek_recipe.stream import StreamProcessor\n"
        f"stream = StreamProcessor(dr.convert({CHAT!r}))\n"
        "stream.push_sse({'kind': 'ready', 'prompt_tokens': 3})\n"
        "stream.push_sse({'kind': 'text', 'content': 'Hi', 'token_count': 1})\n"
        "stream.push_records({'kind': 'finish', 'finish_reason': 'stop'})\n"
        "stream.finish_sse(); stream.response_json()\n"
        "assert 'pydantic' not in sys.modules and 'deepseek_recipe.models' not in sys.modules\n"
        "assert type(stream.response()).__name__ == 'ChatCompletion'\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
