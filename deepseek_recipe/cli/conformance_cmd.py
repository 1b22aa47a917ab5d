"""`deepseek-recipe conformance`: the conformance suite (needs the `conformance` extra)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    """Add the `conformance` command; its options come from `deepseek_recipe_conformance.cli`."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "conformance",
        help="check an endpoint against the official DeepSeek API behaviour",
        description="Run the conformance suite against a DeepSeek-compatible endpoint.",
    )
    try:
        from deepseek_recipe_conformance.cli import add_arguments
    except ImportError as error:
        parser.set_defaults(handler=_missing(error))
        return
    add_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the suite; the exit status is the suite's."""
    from deepseek_recipe_conformance.cli import run as run_suite

    return run_suite(args)


def _missing(error: ImportError) -> Any:
    def handler(_: argparse.Namespace) -> int:
        sys.stderr.write(
            f"deepseek-recipe conformance: needs the conformance extra ({error}); "
            "install it with: pip install 'deepseek-recipe[conformance]'\n"
        )
        return 1

    return handler
