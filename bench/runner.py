"""The parent side of a measurement: one subprocess per implementation and case, and the peer's
virtual environment (the published deepseek-recipe 0.2.0, never a dependency of the project)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.cases import Case, Runner

REPO_ROOT = Path(__file__).resolve().parent.parent
PEER_VENV = REPO_ROOT / "bench" / ".peer-venv"
PEER_PYTHON = PEER_VENV / "bin" / "python"
PEER_REQUIREMENT = "deepseek-recipe==0.2.0"
PEER_VERSION = "0.2.0"
ERROR_CHARS = 200


@dataclass
class Outcome:
    """What one implementation's process reported for a case, or why it reported nothing."""

    case: Case
    runner: Runner
    result: dict[str, Any] | None
    error: str | None = None


def setup_peer() -> None:
    """Creates `bench/.peer-venv` and installs the published package into it (needs PyPI)."""
    if not PEER_PYTHON.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
    subprocess.run([str(PEER_PYTHON), "-m", "pip", "install", "-q", PEER_REQUIREMENT], check=True)


def peer_problem() -> str | None:
    """Why the peer cannot run (no venv, wrong version), or None when it is ready."""
    if not PEER_PYTHON.exists():
        return f"no peer environment at {PEER_VENV} (create it: python -m bench --setup-peer)"
    probe = "import importlib.metadata as m; print(m.version('deepseek-recipe'))"
    found = subprocess.run(
        [str(PEER_PYTHON), "-I", "-c", probe],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        check=False,
    )
    version = found.stdout.strip()
    if found.returncode != 0 or version != PEER_VERSION:
        return f"peer environment has deepseek-recipe {version or 'missing'}, not {PEER_VERSION}"
    return None


def command(runner: Runner) -> list[str]:
    """The driver command line of `runner`'s implementation."""
    if runner.implementation == "peer":
        # `-I`, run from the workload folder: the published package, never ours, is imported.
        return [str(PEER_PYTHON), "-I", str(REPO_ROOT / "bench" / "peer_driver.py")]
    module = f"bench.{runner.implementation}_driver"
    return [sys.executable, "-m", module]


def tiktoken_problem() -> str | None:
    """Why tiktoken cannot run (not installed here), or None when it can."""
    if importlib.util.find_spec("tiktoken") is None:
        return "tiktoken is not installed in this environment (pip install tiktoken)"
    return None


def run(case: Case, runner: Runner, directory: Path, index: int, timeout: float) -> Outcome:
    """Runs `case` with `runner` in a fresh process; the process writes its result file."""
    spec_file = directory / f"case-{index}.json"
    result_file = directory / f"result-{index}.json"
    spec_file.write_text(json.dumps(case.spec(runner, directory)), encoding="utf-8")
    environment = dict(os.environ)
    environment.update(
        TOKENIZERS_PARALLELISM="false" if runner.threads == 1 else "true",
        RAYON_NUM_THREADS=str(runner.threads),
        DEEPSEEK_RECIPE_NUM_THREADS=str(runner.threads),
    )
    cwd = directory if runner.implementation == "peer" else REPO_ROOT
    try:
        done = subprocess.run(
            [*command(runner), str(spec_file), str(result_file)],
            cwd=cwd,
            env=environment,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Outcome(case, runner, None, f"timed out after {timeout:.0f} s")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return Outcome(case, runner, None, f"exit {done.returncode}: {last[:ERROR_CHARS]}")
    return Outcome(case, runner, json.loads(result_file.read_text(encoding="utf-8")))
