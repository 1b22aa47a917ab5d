"""Check what the built wheel and sdist hold: `python scripts/check_dist.py WHEEL SDIST`.

The wheel must carry the three packages with their data (and one native module), the sdist the
Rust sources, the bundled tokenizer and the Python packages; neither may carry checkout leftovers
(bytecode, tests, a stray native module). Prints what it checked; exits 1 on any problem.
"""

from __future__ import annotations

import sys
import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import PurePosixPath

PACKAGES = ("deepseek_recipe", "deepseek_recipe_engine", "deepseek_recipe_conformance")

WHEEL_REQUIRED = (
    "deepseek_recipe/__init__.py",
    "deepseek_recipe/__main__.py",
    "deepseek_recipe/py.typed",
    "deepseek_recipe/_native.pyi",
    "deepseek_recipe/cli/__init__.py",
    "deepseek_recipe_engine/server.py",
    "deepseek_recipe_engine/model_configs/tiny.json",
    "deepseek_recipe_conformance/cli.py",
    "deepseek_recipe_conformance/cases/validation.json",
    "deepseek_recipe_conformance/reports/report.html.j2",
)

SDIST_REQUIRED = (
    "pyproject.toml",
    "Cargo.toml",
    "Cargo.lock",
    "README.md",
    "recipe-rs/deepseek-recipe/Cargo.toml",
    "recipe-rs/deepseek-recipe/src/lib.rs",
    "recipe-rs/deepseek-recipe/data/deepseek-v4/tokenizer.json",
    "recipe-rs/deepseek-recipe/data/deepseek-v4/NOTICE.md",
    "recipe-rs/deepseek-recipe-py/Cargo.toml",
    "recipe-rs/deepseek-recipe-py/src/lib.rs",
    *(name for name in WHEEL_REQUIRED if not name.endswith(".pyi")),
    "deepseek_recipe/_native.pyi",
)


def leftovers(names: Iterable[str]) -> list[str]:
    """Names that come from a working checkout rather than the sources."""
    found = []
    for name in names:
        parts = PurePosixPath(name).parts
        if "__pycache__" in parts or name.endswith((".pyc", ".pyo")):
            found.append(name)
        elif parts and parts[0] in ("tests", "bench", "target", ".venv", "reports"):
            found.append(name)
    return found


def check_wheel(path: str) -> list[str]:
    """Problems of the wheel at `path`."""
    with zipfile.ZipFile(path) as wheel:
        names = wheel.namelist()
    problems = [f"wheel lacks {name}" for name in WHEEL_REQUIRED if name not in names]
    natives = [n for n in names if n.endswith((".so", ".pyd", ".dylib"))]
    if len(natives) != 1 or not natives[0].startswith("deepseek_recipe/_native."):
        problems.append(f"wheel must hold exactly one native module, holds {natives}")
    tops = {PurePosixPath(n).parts[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    problems += [f"wheel has an unexpected top-level entry {top}" for top in tops - set(PACKAGES)]
    problems += [f"wheel holds a checkout leftover {name}" for name in leftovers(names)]
    print(f"wheel: {len(names)} files, top-level {sorted(tops)}, native module {natives}")
    return problems


def check_sdist(path: str) -> list[str]:
    """Problems of the sdist at `path`."""
    with tarfile.open(path) as sdist:
        members = sdist.getnames()
    root = PurePosixPath(members[0]).parts[0]
    names = [str(PurePosixPath(*PurePosixPath(m).parts[1:])) for m in members if m != root]
    problems = [f"sdist lacks {name}" for name in SDIST_REQUIRED if name not in names]
    natives = [n for n in names if n.endswith((".so", ".pyd", ".dylib"))]
    problems += [f"sdist holds a built native module {name}" for name in natives]
    problems += [f"sdist holds a checkout leftover {name}" for name in leftovers(names)]
    print(f"sdist: {len(names)} files under {root}/")
    return problems


def main(argv: list[str]) -> int:
    """Check the wheel and the sdist named in `argv`; 0 when both are as they should be."""
    if len(argv) != 2:
        sys.stderr.write("usage: check_dist.py WHEEL SDIST\n")
        return 2
    problems = check_wheel(argv[0]) + check_sdist(argv[1])
    for problem in problems:
        print(f"  problem: {problem}")
    print("dist contents: " + ("OK" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
