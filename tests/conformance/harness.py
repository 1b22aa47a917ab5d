"""Test harness: the replay host (optionally behind the fault proxy) and a suite run against it."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator

from deepseek_recipe_conformance.cases import load_cases
from deepseek_recipe_conformance.model import Case, RunResult
from deepseek_recipe_conformance.oracle import RecipeOracle
from deepseek_recipe_conformance.runner import RunConfig, run_suite
from tests.conformance.http_server import serve
from tests.conformance.recordings import RecordingIndex, load_recordings
from tests.conformance.replay_host import ReplayHost

API_KEY = "sk-conformance-test"
MODEL = "DeepSeek-V4-Pro"


@functools.cache
def shared_index() -> RecordingIndex:
    """Recordings are loaded once per test session."""
    return RecordingIndex(load_recordings())


def all_cases() -> list[Case]:
    """The bundled cases for the test model."""
    return load_cases(MODEL)


@contextlib.asynccontextmanager
async def replay_host(cases: list[Case]) -> AsyncIterator[tuple[str, ReplayHost]]:
    """A running replay host; yields its base URL and the handler (for inspection)."""
    host = ReplayHost(shared_index(), MODEL, {c.id: c.scenario for c in cases}, API_KEY)
    async with serve(host) as url:
        yield url, host


def config(url: str) -> RunConfig:
    """Suite settings for local tests: fast retries, short timeouts."""
    return RunConfig(
        base_url=url,
        api_key=API_KEY,
        model=MODEL,
        concurrency=4,
        timeout_s=20,
        retries=1,
        backoff_s=0.01,
    )


async def run_against(url: str, cases: list[Case]) -> RunResult:
    """Run `cases` against `url` with the recipe oracle (the command line's default)."""
    return await run_suite(cases, config(url), RecipeOracle(MODEL))
