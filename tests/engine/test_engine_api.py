"""The async engine API: chunk order, finish reasons, cancellation, validation."""

import asyncio

import pytest

from deepseek_recipe_engine.config import EngineConfig
from deepseek_recipe_engine.engine import Engine, EngineError, GenerationResult
from deepseek_recipe_engine.request import Finish, GenerationRequest, Ready, Tokens

PROMPT = [5 + i for i in range(30)]


async def collect(stream) -> list:
    return [chunk async for chunk in stream]


def with_engine(tiny_model, body, **config):
    engine = Engine(EngineConfig(**config), tiny_model)
    try:
        return asyncio.run(body(engine))
    finally:
        engine.close()


def test_stream_is_ready_then_tokens_then_finish(tiny_model, make_core):
    request = GenerationRequest(prompt_ids=PROMPT, max_tokens=5, seed=4, logprobs=True)

    async def body(engine):
        return await collect(engine.submit(request))

    chunks = with_engine(tiny_model, body)
    assert chunks[0] == Ready(prompt_tokens=30, prompt_cache_hit_tokens=0)
    assert all(isinstance(c, Tokens) for c in chunks[1:-1])
    assert chunks[-1] == Finish("length")
    streamed = GenerationResult()
    for chunk in chunks:
        streamed.add(chunk)
    assert streamed == make_core().generate([request])[0]


def test_max_tokens_gives_exactly_that_many_and_length(make_core):
    for max_tokens in (1, 4, 9):
        result = make_core().generate([GenerationRequest(prompt_ids=PROMPT, max_tokens=max_tokens)])
        assert len(result[0].token_ids) == max_tokens
        assert result[0].finish_reason == "length"


def test_max_model_len_finishes_with_length(make_core):
    result = make_core(max_model_len=34).generate(
        [GenerationRequest(prompt_ids=PROMPT, max_tokens=50)]
    )[0]
    assert (len(result.token_ids), result.finish_reason) == (4, "length")


def test_a_sequence_never_outgrows_the_cache(make_core):
    core = make_core(num_blocks=3, block_size=16)
    result = core.generate([GenerationRequest(prompt_ids=PROMPT, max_tokens=100)])[0]
    assert (len(result.token_ids), result.finish_reason) == (48 - len(PROMPT), "length")
    assert core.blocks.num_free_blocks == 3


def test_stop_token_finishes_with_stop_and_is_reported_apart(make_core):
    free = make_core().generate([GenerationRequest(prompt_ids=PROMPT, max_tokens=8, seed=2)])[0]
    stop = free.token_ids[3]
    stopped = make_core().generate(
        [GenerationRequest(prompt_ids=PROMPT, max_tokens=8, seed=2, stop_token_ids=[stop])]
    )[0]
    first = free.token_ids.index(stop)
    assert stopped.token_ids == free.token_ids[:first]
    assert (stopped.finish_reason, stopped.stop_token_id) == ("stop", stop)
    assert free.stop_token_id is None


def test_concurrent_streams_match_the_synchronous_engine(tiny_model, make_core):
    requests = [
        GenerationRequest(prompt_ids=PROMPT[i:], max_tokens=4 + i, seed=i, temperature=0.8)
        for i in range(8)
    ]

    async def body(engine):
        return await asyncio.gather(*(collect(engine.submit(r)) for r in requests))

    expected = make_core().generate(requests)
    for chunks, want in zip(with_engine(tiny_model, body), expected, strict=True):
        got = GenerationResult()
        for chunk in chunks:
            got.add(chunk)
        assert got.token_ids == want.token_ids


def test_cancel_mid_stream_frees_blocks(tiny_model):
    async def body(engine):
        stream = engine.submit(GenerationRequest(prompt_ids=PROMPT, max_tokens=10_000))
        received = []
        async for chunk in stream:
            received.append(chunk)
            if len(received) == 3:
                stream.cancel()
        await asyncio.sleep(0.05)
        return received, engine.core.blocks.num_free_blocks, engine.core.has_work()

    received, free, busy = with_engine(tiny_model, body, num_blocks=32)
    assert received[-1] == Finish("cancelled")
    assert (free, busy) == (32, False)


def test_closing_a_stream_cancels_the_request(tiny_model):
    async def body(engine):
        stream = engine.submit(GenerationRequest(prompt_ids=PROMPT, max_tokens=10_000))
        async for chunk in stream:
            if isinstance(chunk, Tokens):
                break
        await stream.aclose()
        for _ in range(100):
            await asyncio.sleep(0.01)
            if not engine.core.has_work():
                break
        return engine.core.blocks.num_free_blocks

    assert with_engine(tiny_model, body, num_blocks=32) == 32


@pytest.mark.parametrize(
    "fields",
    [
        {"prompt_ids": []},
        {"prompt_ids": [200_000]},
        {"prompt_ids": [1] * 3000},
        {"max_tokens": 0},
        {"temperature": -1.0},
        {"top_p": 0.0},
        {"top_logprobs": 21},
    ],
)
def test_invalid_requests_are_rejected(tiny_model, fields):
    request = GenerationRequest(**{"prompt_ids": PROMPT, **fields})

    async def body(engine):
        with pytest.raises(ValueError):
            engine.submit(request)

    with_engine(tiny_model, body)


def test_a_failing_step_ends_streams_with_an_error_and_the_engine_recovers(tiny_model):
    def broken(token_ids, logits):
        raise ZeroDivisionError("processor bug")

    async def body(engine):
        bad = engine.submit(GenerationRequest(prompt_ids=PROMPT, logits_processor=broken))
        with pytest.raises(EngineError, match="processor bug"):
            await collect(bad)
        good = await collect(engine.submit(GenerationRequest(prompt_ids=PROMPT, max_tokens=2)))
        return good[-1], engine.core.blocks.num_free_blocks

    assert with_engine(tiny_model, body, num_blocks=32) == (Finish("length"), 32)


def test_closing_the_engine_ends_open_streams(tiny_model):
    async def body(engine):
        stream = engine.submit(GenerationRequest(prompt_ids=PROMPT, max_tokens=10_000))
        assert isinstance(await stream.__anext__(), Ready)
        engine.close()
        with pytest.raises(EngineError, match="engine closed"):
            await collect(stream)

    with_engine(tiny_model, body)
