"""The `deepseek-recipe` command line: one subcommand per module in `COMMANDS`.

A command module exposes `register(subparsers)`, which adds its subparser and sets `run` as the
parser's default `handler`: `run(args: argparse.Namespace) -> int` returns the exit status. A
command whose options live in an optional package (`conformance`) also sets
`forwards_arguments=True`: its arguments are left unparsed in `args.forwarded`. Command modules
import only the core library; a command imports its optional package when it runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType

from deepseek_recipe import __version__
from deepseek_recipe.cli import (
    conformance_cmd,
    count_cmd,
    parse_cmd,
    render_cmd,
    serve_cmd,
    tokenize_cmd,
    vectors_cmd,
)
from deepseek_recipe.errors import RecipeError

__all__ = ["COMMANDS", "build_parser", "main"]

#: The command modules, in the order `--help` lists them. Add new commands here.
COMMANDS: list[ModuleType] = [
    tokenize_cmd,
    count_cmd,
    render_cmd,
    parse_cmd,
    serve_cmd,
    conformance_cmd,
    vectors_cmd,
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered command."""
    parser = argparse.ArgumentParser(
        prog="deepseek-recipe",
        description="DeepSeek V4 / V4.1 requests, prompts, tokens and streams, "
        "byte-exact with the official API.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with `argv` (default: `sys.argv[1:]`); returns the exit status."""
    parser = build_parser()
    args, forwarded = parser.parse_known_args(argv)
    if forwarded and not getattr(args, "forwards_arguments", False):
        parser.error(f"unrecognized arguments: {' '.join(forwarded)}")
    args.forwarded = forwarded
    try:
        status: int = args.handler(args)
    except (RecipeError, OSError) as error:
        sys.stderr.write(f"deepseek-recipe {args.command}: error: {error}\n")
        return 1
    return status
