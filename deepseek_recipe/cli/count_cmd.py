"""`deepseek-recipe count`: the number of tokens of a text."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from deepseek_recipe.cli._input import add_text_arguments, load_tokenizer, read_text


def register(subparsers: Any) -> None:
    """Add the `count` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "count",
        help="print the number of tokens of a text",
        description="Count the tokens of a text with the DeepSeek V4 tokenizer (or --tokenizer).",
    )
    add_text_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print the token count of the text."""
    tokenizer = load_tokenizer(args)
    sys.stdout.write(f"{tokenizer.count(read_text(args), allow_special=bool(args.special))}\n")
    return 0
