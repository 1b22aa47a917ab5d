"""`scripts/check_dist.py`, the wheel-smoke step that checks what the wheel and the sdist hold."""

from __future__ import annotations

import io
import tarfile
import zipfile

from scripts.check_dist import SDIST_REQUIRED, WHEEL_REQUIRED, check_sdist, check_wheel

NATIVE = "deepseek_recipe/_native.abi3.so"


def make_wheel(path, names):
    with zipfile.ZipFile(path, "w") as wheel:
        for name in names:
            wheel.writestr(name, "x")
    return str(path)


def make_sdist(path, names):
    with tarfile.open(path, "w:gz") as sdist:
        for name in names:
            info = tarfile.TarInfo(f"deepseek_recipe-0.1.0/{name}")
            info.size = 1
            sdist.addfile(info, io.BytesIO(b"x"))
    return str(path)


def test_complete_artifacts_pass(tmp_path):
    wheel = [*WHEEL_REQUIRED, NATIVE, "deepseek_recipe-0.1.0.dist-info/METADATA"]
    assert check_wheel(make_wheel(tmp_path / "w.whl", wheel)) == []
    assert check_sdist(make_sdist(tmp_path / "s.tar.gz", SDIST_REQUIRED)) == []


def test_leftovers_missing_files_and_stray_modules_are_problems(tmp_path):
    wheel = [
        *WHEEL_REQUIRED[1:],
        NATIVE,
        "deepseek_recipe/__pycache__/cli.cpython-311.pyc",
        "deepseek_recipe_engine/_native.abi3.so",
        "tests/test_x.py",
    ]
    problems = check_wheel(make_wheel(tmp_path / "w.whl", wheel))
    assert f"wheel lacks {WHEEL_REQUIRED[0]}" in problems
    assert any("exactly one native module" in p for p in problems)
    assert any("unexpected top-level entry tests" in p for p in problems)
    assert any("__pycache__" in p for p in problems)
    sdist = [*SDIST_REQUIRED[1:], NATIVE]
    problems = check_sdist(make_sdist(tmp_path / "s.tar.gz", sdist))
    assert problems == [
        f"sdist lacks {SDIST_REQUIRED[0]}",
        f"sdist holds a built native module {NATIVE}",
    ]
