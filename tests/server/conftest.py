"""A shared live server: tiny engine, API key, pass-back rejection (as the conformance suite)."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import openai
import pytest

from deepseek_recipe import ConversionOptions
from deepseek_recipe_engine.server import ServerSettings
from tests.server.live import API_KEY, LiveServer, start_server

SERVER_OPTIONS = ConversionOptions(reasoning_content_behavior="reject")


@pytest.fixture(scope="session")
def live() -> Iterator[LiveServer]:
    server = start_server(ServerSettings(api_key=API_KEY, conversion_options=SERVER_OPTIONS))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def oai(live: LiveServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{live.base_url}/v1", api_key=API_KEY, max_retries=0)


@pytest.fixture(scope="session")
def claude(live: LiveServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=f"{live.base_url}/anthropic", api_key=API_KEY, max_retries=0
    )
