"""A shared live server (tiny engine, API key, pass-back rejection as the conformance suite, every
request seeded) and SDK clients whose every answer is validated strictly after the test.

With `RECIPE_TEST_VLLM_URL` set (`make test-vllm`), the shared server fronts that vLLM instead of
the engine (`RECIPE_TEST_VLLM_BLOCK_SIZE`: its cache block size), and at the end every prompt
vLLM echoed back must have been the library's ids."""

from __future__ import annotations

import os
from collections.abc import Iterator

import anthropic
import httpx2
import openai
import pytest

from deepseek_recipe import ConversionOptions
from deepseek_recipe_engine.server import ServerSettings
from deepseek_recipe_engine.vllm_backend import VllmBackend
from tests.server.live import API_KEY, LiveServer, start_server, start_vllm_server
from tests.server.oracle import Oracle
from tests.server.recording import Recorder, check_all

SERVER_OPTIONS = ConversionOptions(reasoning_content_behavior="reject")
SERVER_SEED = 20_260_101
"""The sampling seed of requests without one (Responses and Messages have no seed field)."""


@pytest.fixture(scope="session")
def live() -> Iterator[LiveServer]:
    settings = ServerSettings(
        api_key=API_KEY, conversion_options=SERVER_OPTIONS, default_seed=SERVER_SEED
    )
    vllm_url = os.environ.get("RECIPE_TEST_VLLM_URL")
    if vllm_url is None:
        server = start_server(settings)
    else:
        block_size = int(os.environ.get("RECIPE_TEST_VLLM_BLOCK_SIZE", "32"))
        server = start_vllm_server(settings, vllm_url, block_size)
    yield server
    server.stop()
    if isinstance(server.backend, VllmBackend):
        echo = server.backend.prompt_echo
        assert echo.identical > 0 and echo.different == echo.missing == 0, echo.summary()


@pytest.fixture(scope="session")
def oracle(live: LiveServer) -> Oracle:
    return Oracle(live)


@pytest.fixture(scope="session")
def recorder() -> Recorder:
    return Recorder()


def openai_client(base_url: str, recorder: Recorder, api_key: str) -> openai.OpenAI:
    """An `openai` client whose answers the recorder keeps for strict validation."""
    http = httpx2.Client(transport=recorder.transport())
    return openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, http_client=http)


def anthropic_client(base_url: str, recorder: Recorder, api_key: str) -> anthropic.Anthropic:
    """An `anthropic` client whose answers the recorder keeps for strict validation."""
    http = httpx2.Client(transport=recorder.transport())
    return anthropic.Anthropic(base_url=base_url, api_key=api_key, max_retries=0, http_client=http)


@pytest.fixture(scope="session")
def oai(live: LiveServer, recorder: Recorder) -> Iterator[openai.OpenAI]:
    with openai_client(f"{live.base_url}/v1", recorder, API_KEY) as client:
        yield client


@pytest.fixture(scope="session")
def claude(live: LiveServer, recorder: Recorder) -> Iterator[anthropic.Anthropic]:
    with anthropic_client(f"{live.base_url}/anthropic", recorder, API_KEY) as client:
        yield client


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test that used the recording clients fails unless every answer they read (bodies and
    stream events) validates strictly against the SDK types (tests/server/sdk_strict.py)."""
    funcargs = item.funcargs if isinstance(item, pytest.Function) else {}
    recorder = funcargs.get("recorder")
    if isinstance(recorder, Recorder):
        recorder.take()  # what earlier tests left unchecked is theirs
    result = yield
    if isinstance(recorder, Recorder):
        check_all(recorder.take())
    return result
