"""`deepseek-recipe conformance`: the conformance suite (needs the `conformance` extra).

The suite owns its options (`deepseek_recipe_conformance.cli`); this command forwards its arguments
there, so the suite and its dependencies are imported only when the command runs.
"""

from __future__ import annotations

import argparse
from typing import Any

from deepseek_recipe.cli._extras import report_missing_extra

EXTRAS = ("conformance",)
"""The extras the command needs."""


def register(subparsers: Any) -> None:
    """Add the `conformance` command; every argument after it goes to the suite's parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "conformance",
        help="check an endpoint against the official DeepSeek API behaviour",
        description="Run the conformance suite against a DeepSeek-compatible endpoint "
        "(`deepseek-recipe conformance --help` lists its options).",
        add_help=False,
    )
    parser.set_defaults(handler=run, forwards_arguments=True)


def run(args: argparse.Namespace) -> int:
    """Parse the forwarded arguments with the suite's options and run it; its exit status."""
    try:
        from deepseek_recipe_conformance import cli as suite
    except ImportError as error:
        return report_missing_extra("conformance", error, EXTRAS)
    return suite.main(args.forwarded, prog="deepseek-recipe conformance")
