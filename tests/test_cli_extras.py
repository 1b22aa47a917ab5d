"""The import rule of the package layout: the core library and the light commands never import the
optional packages (engine, server, conformance suite) or their dependencies, and a command whose
extra is missing names the extra to install. Each scenario runs in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deepseek_recipe.cli._extras import missing_extras

OPTIONAL_MODULES = (
    "deepseek_recipe_engine",
    "deepseek_recipe_conformance",
    "torch",
    "httpx",
    "starlette",
    "uvicorn",
    "rich",
    "jinja2",
)


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter, run from `cwd` (outside the checkout, as a user would)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=120
    )


def imported_after(statement: str, cwd: Path) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = run_python(code, cwd)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    "statement",
    [
        "import deepseek_recipe",
        "from deepseek_recipe.cli import main; main(['tokenize', 'Hello'])",
        "from deepseek_recipe.cli import main; main(['count', 'Hello'])",
        "from deepseek_recipe.cli import build_parser; build_parser()",
    ],
    ids=["import", "tokenize", "count", "parser"],
)
def test_core_and_light_commands_import_no_optional_package(statement, tmp_path):
    leaked = {name.partition(".")[0] for name in imported_after(statement, tmp_path)}
    assert leaked.isdisjoint(OPTIONAL_MODULES), sorted(leaked & set(OPTIONAL_MODULES))


def test_render_and_parse_import_no_optional_package(tmp_path):
    request = tmp_path / "request.json"
    request.write_text(
        '{"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "Hi"}]}'
    )
    output = tmp_path / "output.txt"
    output.write_text("Let me think.</think>Hello!")
    statement = (
        "from deepseek_recipe.cli import main\n"
        f"assert main(['render', {str(request)!r}]) == 0\n"
        f"assert main(['parse', {str(output)!r}, '--request', {str(request)!r}]) == 0"
    )
    leaked = {name.partition(".")[0] for name in imported_after(statement, tmp_path)}
    assert leaked.isdisjoint(OPTIONAL_MODULES), sorted(leaked & set(OPTIONAL_MODULES))


def without(modules: tuple[str, ...], argv: list[str]) -> str:
    """Code that runs the CLI with `modules` made unimportable (as if never installed)."""
    blocked = "".join(f"sys.modules[{m!r}] = None\n" for m in modules)
    run = f"from deepseek_recipe.cli import main\nraise SystemExit(main({argv!r}))"
    return f"import sys\n{blocked}{run}"


@pytest.mark.parametrize(
    ("modules", "argv", "extra"),
    [
        (("torch",), ["serve"], "engine"),
        (("starlette",), ["serve"], "server"),
        (("uvicorn",), ["serve"], "server"),
        (
            ("httpx",),
            ["conformance", "--base-url", "http://127.0.0.1:9", "--model", "m"],
            "conformance",
        ),
        (("rich",), ["conformance", "--help"], "conformance"),
    ],
)
def test_a_missing_extra_is_named_with_its_install_line(modules, argv, extra, tmp_path):
    done = run_python(without(modules, argv), tmp_path)
    assert done.returncode == 1
    assert f"'{extra}' extra" in done.stderr
    assert f"pip install 'deepseek-recipe[{extra}]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_import_error_no_extra_explains_is_not_hidden(tmp_path):
    done = run_python(without(("deepseek_recipe_engine.serve",), ["serve"]), tmp_path)
    assert (
        done.returncode == 1 and "Traceback" in done.stderr and "ModuleNotFoundError" in done.stderr
    )


def test_extras_come_from_the_distribution_metadata():
    # Everything is installed in the test environment, except for a failed import it names.
    assert missing_extras(("engine", "server", "conformance")) == {}
    assert missing_extras(("engine", "server"), "torch._C") == {"engine": ["torch"]}
    assert missing_extras(("conformance",), "starlette") == {}


def test_python_dash_m_runs_the_command_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "deepseek_recipe", "count", "Hello world"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=True,
    )
    assert done.stdout == "2\n"


def test_conformance_help_comes_from_the_suite(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "deepseek_recipe", "conformance", "--help"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=True,
    )
    assert done.stdout.startswith("usage: deepseek-recipe conformance")
    assert "--base-url" in done.stdout and "--no-model-checks" in done.stdout
