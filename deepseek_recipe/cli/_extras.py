"""Commands that need an optional part of the distribution: which extras to install when an
import fails. The extras and their requirements are read from the installed distribution's
metadata, so `pyproject.toml` stays the only place that lists them."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from importlib import metadata

__all__ = ["DISTRIBUTION", "EXIT_MISSING_EXTRA", "missing_extras", "report_missing_extra"]

DISTRIBUTION = "deepseek-recipe"
"""The distribution whose extras the commands name."""

EXIT_MISSING_EXTRA = 1
"""Exit status of a command whose extra is not installed."""

_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed(name: str) -> bool:
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def _extra_requirements(extras: Sequence[str]) -> dict[str, list[str]]:
    """The distribution names each of `extras` requires, from the installed metadata (empty when
    the distribution's metadata cannot be found)."""
    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return {}
    names: dict[str, list[str]] = {extra: [] for extra in extras}
    for requirement in requirements:
        name, extra = _REQUIREMENT_NAME.match(requirement), _EXTRA_MARKER.search(requirement)
        if name is not None and extra is not None and extra.group(1) in names:
            names[extra.group(1)].append(name.group(1))
    return names


def missing_extras(extras: Sequence[str], failed_module: str = "") -> dict[str, list[str]]:
    """Those of `extras` that are not fully installed, each with its missing distributions.

    An extra also counts as missing when it requires the distribution named like the top-level
    package of `failed_module` (an import that failed although the metadata says it is there).
    """
    failed = _normalized(failed_module.partition(".")[0])
    missing: dict[str, list[str]] = {}
    for extra, names in _extra_requirements(extras).items():
        absent = [n for n in names if not _installed(n) or _normalized(n) == failed]
        if absent:
            missing[extra] = absent
    return missing


def report_missing_extra(command: str, error: ImportError, extras: Sequence[str]) -> int:
    """Tell the user which of `extras` `command` needs installed, and return
    `EXIT_MISSING_EXTRA`. An import failure that none of `extras` explains is a bug, not a
    missing extra: `error` is raised again."""
    missing = missing_extras(extras, error.name or "")
    if not missing:
        raise error
    listed = ", ".join(f"'{extra}'" for extra in missing)
    absent = ", ".join(name for names in missing.values() for name in names)
    noun = "extra" if len(missing) == 1 else "extras"
    sys.stderr.write(
        f"deepseek-recipe {command}: needs the {listed} {noun} (not installed: {absent}); "
        f"install with: pip install '{DISTRIBUTION}[{','.join(missing)}]'\n"
    )
    return EXIT_MISSING_EXTRA
